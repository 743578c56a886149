// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wakeret.c - what the model's writer pays to get back to the lock once
 * woken, and the kernel's does not: the return of a woken futex_wait to
 * user space.
 *
 * The kernel's writer tries mmap_lock again as schedule() returns; the
 * model's is a thread asleep in futex_wait, which after its switch-in
 * still leaves the futex code, exits the system call and returns to user
 * space before it can try. When a reader's release wakes a writer on an
 * idle CPU, who gets the lock is decided within a microsecond or two
 * (docs/findings/2026-12-02-the-close-race.md), so the model's readers are
 * charged this, measured now on this host: a thread on the mapper's CPU
 * sleeps in futex_wait, one on the readers' CPU wakes it after it has
 * idled ~30 us (the close race's case), and the time from its switch-in -
 * perf's context-switch record, written once the scheduler has switched to
 * it, where the kernel's writer would resume - to its first clock read
 * back in user space is taken, median of the wake-ups.
 * perf_event_open() on one's own threads needs no privilege beyond what
 * kernel.perf_event_paranoid allows (<= 2, the default, does).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "sync/atomic.h"
#include "sync/futex.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/debug.h"

#define WR_WAKEUPS 1000
#define WR_IDLE_NS 30000ULL	/* the sleeper's idle time before each wake-up */
#define WR_RING_PAGES 64	/* 256 KiB: ~5x the two 24-byte records a wake-up writes,
				 * and below perf_event_mlock_kb's default for users */
#define WR_MAX_NS 100000ULL	/* a switch-in further back is not this wake-up's */

/*
 * Shared by the sleeper and the waker (this thread). Each flag is written
 * with release by one side and read with acquire by the other: word (waker
 * -> sleeper: the wake-up's bump), asleep, tid (sleeper -> waker), go, stop
 * (waker -> sleeper). back[] is the sleeper's until pthread_join().
 */
struct wake_probe {
	_Atomic uint32_t word;		/* bumped by the waker */
	_Atomic uint32_t asleep;	/* the sleeper is about to wait for the next bump */
	_Atomic int32_t tid;		/* the sleeper's, once it runs */
	_Atomic uint32_t go;		/* the perf event is open: start */
	_Atomic uint32_t stop;		/* give up (the event could not be opened) */
	int cpu;
	uint64_t back[WR_WAKEUPS];	/* CLOCK_MONOTONIC on return from each wait */
};

static void *sleeper_main(void *arg)
{
	struct wake_probe *p = arg;

	bench_pin_thread(p->cpu);
	/* pairs with bench_wake_return_ns()'s load_acquire(&p->tid) */
	store_release(&p->tid, (int32_t)syscall(SYS_gettid));
	/* pairs with the waker's store_release(&p->go) once the perf event is open */
	while (!load_acquire(&p->go))
		if (load_acquire(&p->stop))	/* pairs with the waker's store_release(&p->stop) */
			return NULL;
	for (int i = 0; i < WR_WAKEUPS; i++) {
		/* pairs with the waker's fetch_add_release(&p->word) of the last round */
		uint32_t seq = load_acquire(&p->word);

		/* pairs with the waker's load_acquire(&p->asleep) */
		store_release(&p->asleep, 1);
		/* pairs with the waker's fetch_add_release(&p->word): the wake-up's bump */
		while (load_acquire(&p->word) == seq)
			futex_wait(&p->word, seq, 0);
		p->back[i] = vml_now_ns();
	}
	return NULL;
}

static int perf_open_switches(pid_t tid)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.context_switch = 1;	/* PERF_RECORD_SWITCH at each switch in and out */
	a.sample_id_all = 1;	/* ...with the sample_type fields below */
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The switch-in times in the ring, in order; Return: how many (<= @max). */
static size_t ring_switch_ins(const char *ring, size_t page, uint64_t *out, size_t max)
{
	const struct perf_event_mmap_page *mp = (const void *)ring;
	const char *data = ring + page;
	size_t size = (size_t)WR_RING_PAGES * page, n = 0;
	/* pairs with the kernel's smp_store_release() of data_head (perf_output_put_handle) */
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);

	for (uint64_t tail = 0; tail < head && n < max;) {
		struct perf_event_header h;
		/* header, then sample_id: u32 pid, u32 tid, u64 time */
		char rec[sizeof(h) + 16];

		for (size_t k = 0; k < sizeof(rec); k++)
			rec[k] = data[(tail + k) % size];
		memcpy(&h, rec, sizeof(h));
		if (!h.size)
			break;
		if (h.type == PERF_RECORD_SWITCH && !(h.misc & PERF_RECORD_MISC_SWITCH_OUT) &&
		    h.size >= sizeof(rec))
			memcpy(&out[n++], rec + sizeof(h) + 8, sizeof(uint64_t));
		tail += h.size;
	}
	return n;
}

int bench_wake_return_ns(double *out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n_in, n = 0;
	struct wake_probe *p = vml_zalloc(sizeof(*p));
	uint64_t *ins = NULL;
	double *d = NULL;
	int mapper_cpu, reader_cpu, fd = -1, ret = 0;
	void *ring = MAP_FAILED;
	pthread_t th;

	if (!p)
		return -ENOMEM;
	bench_pick_cpus(&mapper_cpu, &reader_cpu);
	if (mapper_cpu < 0) {
		vml_free(p);
		return -ENOTSUP;	/* one CPU: no idle CPU to wake, no such race */
	}
	p->cpu = mapper_cpu;
	if (pthread_create(&th, NULL, sleeper_main, p)) {
		vml_free(p);
		return -EAGAIN;
	}
	while (!load_acquire(&p->tid))	/* pairs with sleeper_main()'s store_release(&p->tid) */
		;
	/* pairs with sleeper_main()'s store_release(&p->tid), as above */
	fd = perf_open_switches(load_acquire(&p->tid));
	if (fd < 0)
		ret = -errno;
	if (!ret) {
		ring = mmap(NULL, (WR_RING_PAGES + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED,
			    fd, 0);
		if (ring == MAP_FAILED)
			ret = -errno;
	}
	if (ret) {
		store_release(&p->stop, 1);	/* pairs with sleeper_main()'s load_acquire(&p->stop) */
		pthread_join(th, NULL);
		goto out;
	}
	/* The waker: this thread, on the readers' CPU for the probe. */
	{
		cpu_set_t saved;
		bool restore = !pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved);

		bench_pin_thread(reader_cpu);
		store_release(&p->go, 1);	/* pairs with sleeper_main()'s load_acquire(&p->go) */
		for (int i = 0; i < WR_WAKEUPS; i++) {
			/* pairs with sleeper_main()'s store_release(&p->asleep) */
			while (!load_acquire(&p->asleep))
				;
			store_relaxed(&p->asleep, 0);
			vml_spin_ns(WR_IDLE_NS);	/* meanwhile the sleeper's CPU idles */
			/*
			 * Pairs with sleeper_main()'s load_acquire(&p->word); orders the
			 * relaxed clear of asleep before it, so the sleeper's next set
			 * comes after it.
			 */
			fetch_add_release(&p->word, 1);
			futex_wake(&p->word, 1);
		}
		pthread_join(th, NULL);
		if (restore)
			pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	}
	ins = vml_zalloc(2 * WR_WAKEUPS * sizeof(*ins));
	d = vml_zalloc(WR_WAKEUPS * sizeof(*d));
	if (!ins || !d) {
		ret = -ENOMEM;
		goto out;
	}
	n_in = ring_switch_ins(ring, page, ins, 2 * WR_WAKEUPS);
	/* Each return pairs with the last switch-in before it. */
	for (size_t i = 0, j = 0; i < WR_WAKEUPS; i++) {
		while (j < n_in && ins[j] <= p->back[i])
			j++;
		if (j && p->back[i] - ins[j - 1] < WR_MAX_NS)
			d[n++] = (double)(p->back[i] - ins[j - 1]);
	}
	if (n < WR_WAKEUPS / 2) {
		ret = -ENODATA;		/* too few wake-ups seen (records lost?) */
		goto out;
	}
	*out = stat_median(d, n);
	if (isnan(*out))
		ret = -ENOMEM;
out:
	if (ring != MAP_FAILED)
		munmap(ring, (WR_RING_PAGES + 1) * page);
	if (fd >= 0)
		close(fd);
	vml_free(ins);
	vml_free(d);
	vml_free(p);
	return ret;
}
