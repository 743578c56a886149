// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-sim-cacheline.c - cache-line contention on the simulated machine
 * (platform/sim_cacheline.c): atomics of several CPUs on one line
 * serialise, a transfer at a time; on lines of their own they cost a
 * pause; a table without the charge models nothing; the same seed gives
 * the same run; and the mmap_lock's count is such a line.
 */
#include <stdatomic.h>
#include <string.h>

#include "platform/platform.h"
#include "platform/sim.h"
#include "sync/rwsem.h"
#include "tap.h"
#include "util/alloc.h"
#include "util/clock.h"

#define US NSEC_PER_USEC
#define MS NSEC_PER_MSEC
#define CPUS 4
#define OPS 200
#define XFER 100
#define RELAX 10
#define START (50 * US)

static struct sim_config config(uint64_t xfer_ns)
{
	return (struct sim_config){
		.cpus = CPUS,
		.seed = 7,
		.costs = {
			.ctxsw_ns = 2 * US,
			.wake_busy_ns = 5 * US,
			.idle_wake_ns = { 6 * US, 6 * US, 7 * US, 10 * US, 20 * US, 25 * US,
					  34 * US, 50 * US },
			.relax_ns = RELAX,
			.timer_slack_ns = 50 * US,
			.tick_ns = 4 * MS,
			.preempt = SIM_PREEMPT_NONE,
			.line_xfer_ns = xfer_ns,
		},
	};
}

struct line_word {
	_Alignas(64) _Atomic uint64_t v;
};

struct hammer {
	struct line_word words[CPUS];	/* a line each */
	bool shared;			/* all on words[0] */
	bool rwsem;			/* down_read/up_read of sem instead */
	struct rwsem sem;
	uint64_t start[CPUS], end[CPUS];
};

struct hammer_arg {
	struct hammer *h;
	int i;
};

static void *hammer_task(void *arg)
{
	struct hammer_arg *a = arg;
	struct hammer *h = a->h;
	_Atomic uint64_t *w = &h->words[h->shared ? 0 : a->i].v;

	/* start together: tasks arrive on their CPUs at different times */
	while (plat_now_ns() < START)
		plat_cpu_relax();
	h->start[a->i] = plat_now_ns();
	for (int k = 0; k < OPS; k++) {
		if (h->rwsem) {
			down_read(&h->sem);
			up_read(&h->sem);
			continue;
		}
		plat_atomic_rmw((const void *)w);
		atomic_fetch_add(w, 1);
	}
	h->end[a->i] = plat_now_ns();
	return NULL;
}

static void *hammer_main(void *arg)
{
	struct hammer *h = arg;
	struct plat_thread t[CPUS];
	struct hammer_arg a[CPUS];

	for (int i = 0; i < CPUS; i++) {
		struct plat_thread_opts o = { .cpu = i, .name = "hammer" };

		a[i] = (struct hammer_arg){ h, i };
		if (plat_thread_create(&t[i], &o, hammer_task, &a[i]))
			return (void *)1;
	}
	for (int i = 0; i < CPUS; i++)
		plat_thread_join(&t[i]);
	return NULL;
}

/* From the first task's start to the last one's end. */
static uint64_t span(const struct hammer *h)
{
	uint64_t s = UINT64_MAX, e = 0;

	for (int i = 0; i < CPUS; i++) {
		s = h->start[i] < s ? h->start[i] : s;
		e = h->end[i] > e ? h->end[i] : e;
	}
	return e - s;
}

static void run(struct hammer *h, uint64_t xfer, struct sim_stats *st)
{
	struct sim_config c = config(xfer);

	if (h->rwsem)
		rwsem_init(&h->sem, NULL);
	is_int(sim_run(&c, hammer_main, h, st), 0, "the machine runs (%s, transfer %llu ns)",
	       h->rwsem ? "rwsem" : h->shared ? "one line" : "a line each",
	       (unsigned long long)xfer);
	if (h->rwsem)
		rwsem_destroy(&h->sem);
}

static void test_serialise(void)
{
	struct hammer *h = vml_zalloc(sizeof(*h)), *g = vml_zalloc(sizeof(*g));
	struct sim_stats st, st2;
	uint64_t n = (uint64_t)CPUS * OPS;

	h->shared = true;
	run(h, XFER, &st);
	is_int((long long)atomic_load(&h->words[0].v), (long long)n, "one line: every RMW done");
	/*
	 * Every RMW but the first finds the line on another CPU while the
	 * others queue for it; near the end, the last task alone may hit its
	 * own line a few times.
	 */
	ok(st.line_xfers >= n - CPUS && st.line_xfers <= n - 1,
	   "one line: an RMW moves it each time (%llu transfers of %llu RMWs)",
	   (unsigned long long)st.line_xfers, (unsigned long long)n);
	/* serialised: the transfers do not overlap */
	ok(span(h) >= st.line_xfers * XFER, "one line: %llu ns >= %llu transfers x %d ns",
	   (unsigned long long)span(h), (unsigned long long)st.line_xfers, XFER);
	/* each RMW's pause overlaps the next CPU's transfer: one is left at the end */
	ok(span(h) <= st.line_xfers * XFER + 2 * RELAX,
	   "...back to back: %llu ns", (unsigned long long)span(h));
	ok(st.line_wait_ns > 0, "one line: CPUs waited for transfers under way (%llu ns)",
	   (unsigned long long)st.line_wait_ns);

	g->shared = true;
	run(g, XFER, &st2);
	ok(st2.line_xfers == st.line_xfers && st2.line_wait_ns == st.line_wait_ns &&
	   st2.events == st.events && st2.virtual_ns == st.virtual_ns && span(g) == span(h),
	   "one line: the same seed gives the same run");

	memset(h, 0, sizeof(*h));
	run(h, XFER, &st);
	ok(st.line_xfers == 0 && span(h) <= OPS * RELAX + RELAX,
	   "a line each: no transfer, a pause an RMW (%llu ns for %d RMWs a CPU)",
	   (unsigned long long)span(h), OPS);

	memset(h, 0, sizeof(*h));
	h->shared = true;
	run(h, 0, &st);
	ok(st.line_xfers == 0 && span(h) <= OPS * RELAX + RELAX,
	   "no line_xfer_ns (an old table): lines not modelled, %llu ns", (unsigned long long)span(h));
	vml_free(h);
	vml_free(g);
}

/* down_read/up_read: two RMWs of the count's line each, from every CPU. */
static void test_rwsem_line(void)
{
	struct hammer *h = vml_zalloc(sizeof(*h));
	struct sim_stats st;
	uint64_t n = 2ULL * CPUS * OPS;

	h->rwsem = true;
	run(h, XFER, &st);
	ok(st.line_xfers >= n - 2 * CPUS && st.line_xfers <= n,
	   "rwsem: readers on %d CPUs move the count's line at each lock and unlock "
	   "(%llu transfers, %llu operations)", CPUS, (unsigned long long)st.line_xfers,
	   (unsigned long long)n);
	ok(span(h) >= st.line_xfers * XFER, "rwsem: the readers serialise on it (%llu ns)",
	   (unsigned long long)span(h));
	vml_free(h);
}

int main(void)
{
	test_serialise();
	test_rwsem_line();
	return tap_done();
}
