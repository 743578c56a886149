// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stress: the model on the simulated machine (platform/sim.h). A mapper maps
 * and unmaps pages of a populated region and touches them while readers read
 * smaps under each lock policy and maps under per-VMA locks, on 3 virtual
 * CPUs, for 0.2 s of virtual time per run. Checked:
 *   - every smaps read is whole records whose ends strictly increase, and
 *     every call of the mapper succeeds;
 *   - the mapper, the readers and the RCU worker all made progress;
 *   - the same seed gives the same run: operation counts, bytes read and
 *     virtual time are equal in two runs, for each of several seeds;
 *   - under ThreadSanitizer (the tsan build runs the stress suite), the
 *     baton's hand-offs order every task's accesses.
 */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "mm_helpers.h"
#include "platform/platform.h"
#include "platform/sim.h"
#include "sync/atomic.h"
#include "tap.h"
#include "util/rand.h"
#include "vmalock/proc.h"

#define REGION (8UL << 20)

struct world {
	uint64_t seed;
	struct vml_mm *mm;
	unsigned long region;
	atomic_bool stop;
	/* results: written by their own task, read after the machine stops */
	uint64_t ops, fails, reads[3], bytes[3], bad[3], end_ns;
};

struct reader_arg {
	struct world *w;
	int idx;
	enum vml_view view;
	enum vml_lock_policy lock;
};

static void *reader_main(void *arg)
{
	struct reader_arg *a = arg;
	struct vml_reader *r;
	static _Thread_local char buf[4096];

	if (vml_reader_open(a->w->mm, a->view, a->lock, &r))
		return NULL;
	vml_reader_set_record_cost(r, 1500);
	vml_reader_set_call_cost(r, 1200);
	vml_reader_set_page_cost(r, 30);
	while (!load_relaxed(&a->w->stop)) {
		unsigned long prev_end = 0;
		ssize_t n;

		vml_reader_rewind(r);
		while ((n = vml_reader_read(r, buf, sizeof(buf))) > 0) {
			a->w->bytes[a->idx] += (uint64_t)n;
			/*
			 * each header line's end beyond the last one's; its
			 * start may be before it: a VMA that merged across
			 * where the last read() stopped is shown again, whole
			 * (6.18 resumes at the VMA holding the last end)
			 */
			for (char *p = buf; p < buf + n;) {
				char *nl = memchr(p, '\n', (size_t)(buf + n - p));
				unsigned long s, e;

				if (sscanf(p, "%lx-%lx ", &s, &e) == 2) {
					if (e <= s || e <= prev_end)
						a->w->bad[a->idx]++;
					prev_end = e;
				}
				if (!nl)
					break;
				p = nl + 1;
			}
		}
		if (n < 0)
			a->w->bad[a->idx]++;
		a->w->reads[a->idx]++;
	}
	vml_reader_close(r);
	return NULL;
}

static void *mapper_main(void *arg)
{
	struct world *w = arg;
	struct vml_rand rnd = vml_rand_init(w->seed, 1);
	/* 100 ms of virtual time: some 60 calls; 200 took 78 s under TSan */
	uint64_t end = plat_now_ns() + 100 * NSEC_PER_MSEC;

	plat_pin_self(0);
	while (plat_now_ns() < end) {
		uint64_t x = vml_rand_next(&rnd);
		unsigned long a = w->region + (x % (REGION / PG)) * PG;
		int ret;

		if (x & (1ULL << 40))
			ret = vml_mmap(w->mm, a, PG, PROT_READ | PROT_WRITE,
				       MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, NULL, 0,
				       NULL);
		else if (x & (1ULL << 41))
			ret = vml_munmap(w->mm, a, PG);
		else {	/* a hole just unmapped faults with EFAULT: not a failure */
			ret = vml_touch(w->mm, a, PG, VML_TOUCH_WRITE);
			if (ret == -EFAULT)
				ret = 0;
		}
		w->ops++;
		w->fails += ret != 0;
		plat_sleep_ns(10 * NSEC_PER_USEC);
	}
	w->end_ns = plat_now_ns();
	return NULL;
}

static void *world_main(void *arg)
{
	struct world *w = arg;
	struct vml_sys_config cfg = { 0 };
	struct vml_sys *sys;
	struct plat_thread th[4];
	struct reader_arg ra[3] = {
		{ w, 0, VML_VIEW_SMAPS, VML_LOCK_MMAP },
		{ w, 1, VML_VIEW_SMAPS, VML_LOCK_VMA },
		{ w, 2, VML_VIEW_MAPS, VML_LOCK_VMA },
	};

	cfg.costs = (struct vml_kernel_costs){ .syscall_ns = 1000, .mmap_ns = 5000,
					       .munmap_ns = 8000, .fault_ns = 1500 };
	if (vml_sys_create(&cfg, &sys) || vml_mm_create(sys, &w->mm))
		return NULL;
	if (vml_mmap(w->mm, 0, REGION, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, NULL, 0, &w->region))
		return NULL;
	for (int i = 0; i < 3; i++)
		plat_thread_create(&th[i], &(struct plat_thread_opts){ .cpu = 1 + i % 2, .nice = 15,
				   .name = "reader" }, reader_main, &ra[i]);
	plat_thread_create(&th[3], &(struct plat_thread_opts){ .cpu = -1, .name = "mapper" },
			   mapper_main, w);
	plat_thread_join(&th[3]);
	store_relaxed(&w->stop, true);
	for (int i = 0; i < 3; i++)
		plat_thread_join(&th[i]);
	vml_mm_destroy(w->mm);
	vml_sys_destroy(sys);
	return NULL;
}

static struct sim_config config(uint64_t seed)
{
	return (struct sim_config){
		.cpus = 3,
		.seed = seed,
		.costs = {
			.ctxsw_ns = 3000, .wake_busy_ns = 6000,
			.idle_wake_ns = { 6000, 6000, 6500, 10000, 21000, 26000, 35000, 50000 },
			.relax_ns = 20, .timer_slack_ns = 50000, .tick_ns = 4000000,
			.preempt = SIM_PREEMPT_NONE,
		},
	};
}

int main(void)
{
	uint64_t seed = tap_seed();
	int runs = tap_stress_seconds(3) >= 10 ? 4 : 2;

	for (int k = 0; k < runs; k++) {
		struct world *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
		struct sim_config cfg = config(seed + (uint64_t)k);
		struct sim_stats sa, sb;

		a->seed = b->seed = seed + (uint64_t)k;
		is_int(sim_run(&cfg, world_main, a, &sa), 0, "seed %llu: the machine runs",
		       (unsigned long long)a->seed);
		ok(a->ops > 20 && !a->fails, "the mapper's %llu calls all succeeded",
		   (unsigned long long)a->ops);
		ok(a->reads[0] > 10 && a->reads[1] > 10 && a->reads[2] > 10,
		   "every reader read (%llu, %llu, %llu passes)", (unsigned long long)a->reads[0],
		   (unsigned long long)a->reads[1], (unsigned long long)a->reads[2]);
		ok(!a->bad[0] && !a->bad[1] && !a->bad[2], "every record in order and whole");
		is_int(sim_run(&cfg, world_main, b, &sb), 0, "the same seed again");
		ok(a->ops == b->ops && !memcmp(a->reads, b->reads, sizeof(a->reads)) &&
		   !memcmp(a->bytes, b->bytes, sizeof(a->bytes)) && a->end_ns == b->end_ns &&
		   sa.events == sb.events && sa.switches == sb.switches,
		   "...gives the same run (%llu events, %llu switches)",
		   (unsigned long long)sa.events, (unsigned long long)sa.switches);
		free(a);
		free(b);
	}
	return tap_done();
}
