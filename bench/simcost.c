// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * simcost.c - the simulated machine's charges, measured on this host's live
 * kernel (simcost.h). Each figure is a median over repeated trials:
 *
 *   syscall_ns     getppid(): a system call's entry and exit
 *   fault_ns       a write fault on untouched private anonymous memory, per page
 *                  (a second pass: pages the guest reuses)
 *   mmap_ns        mmap(MAP_FIXED|MAP_POPULATE) of one page over one, less a
 *                  system call and a fault: its work under mmap_lock
 *   munmap_ns      munmap() of one page, less a system call and a page's zap
 *   zap_ns         MADV_DONTNEED of the populated 16 MiB region, per page
 *   ctxsw_ns       half a futex ping-pong between two threads on one CPU
 *   wake_ipi_ns    what futex_wake() costs the waker when it wakes a thread
 *                  asleep on the other, idle CPU, less an empty futex_wake()
 *   idle_wake_ns[] the wake-up of a CPU idle for a bucket's time: from the
 *                  waker's return from futex_wake() to the woken thread's
 *                  first instruction after futex_wait()
 *   wake_busy_ns   the first bucket's (a CPU idle a few us)
 *   relax_ns       one PAUSE
 *   line_xfer_ns   an atomic RMW's wait for a line the other CPU wrote last:
 *                  two threads on two CPUs take turns incrementing one word
 *                  (each spins until the count is its turn, then
 *                  atomic_fetch_add), per increment, less the same
 *                  increments with each thread on a line of its own; the
 *                  median of 101 trials of 500 each, those in which
 *                  neither thread left its CPU
 *   timer_slack_ns /proc/self/timerslack_ns
 *   tick_ns, preempt  CONFIG_HZ and the preemption model (the host profile)
 *   base_slice_ns  0: the kernel's default for the simulated CPU count
 *   record/page/call_ns  the readers' whole costs (the scenario's calibration)
 *   scan_vma_ns    not measured here: bench khugepaged takes it from its live
 *                  row (the longest hold over the VMAs it covered) or a table
 *   i_mmap_insert_ns, i_mmap_remove_ns  a one-page MAP_PRIVATE mapping of a
 *                  file that I_MMAP_OTHERS other mappings share, mmap()ed and
 *                  munmap()ed, less the same of an anonymous page: what the
 *                  file's i_mmap adds (its lock and interval-tree update)
 *   vma_store_ns   an anonymous one-page mmap() that widens its neighbour
 *                  (vma_expand: the store of the mapping in the mm's tree,
 *                  with the merge checks around it), less a system call: an
 *                  upper bound of the store the seed moved
 *                  (these three: the least of I_MMAP_TRIALS blocks of 256
 *                  calls each, as differences of a few hundred ns drown in
 *                  a shared machine's noise)
 *   exec_ns        not measured here: bench exec-churn fits it to its live
 *                  loop's executions per second (or takes a table's)
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/host.h"
#include "internal.h"
#include "simcost.h"
#include "sync/atomic.h"
#include "sync/futex.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/rand.h"

#define TRIALS 21

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static uint64_t measure_syscall(void)
{
	uint64_t v[TRIALS];

	for (unsigned int t = 0; t < TRIALS; t++) {
		uint64_t t0 = vml_now_ns();

		for (int i = 0; i < 1000; i++)
			syscall(SYS_getppid);
		v[t] = (vml_now_ns() - t0) / 1000;
	}
	return median(v, TRIALS);
}

static uint64_t measure_relax(void)
{
	uint64_t v[TRIALS];

	for (unsigned int t = 0; t < TRIALS; t++) {
		uint64_t t0 = vml_now_ns();

		for (int i = 0; i < 10000; i++)
			cpu_relax();
		v[t] = (vml_now_ns() - t0) / 10000;
	}
	return VML_MAX(median(v, TRIALS), (uint64_t)1);
}

#define REGION_PAGES 4096UL	/* 16 MiB */

/* fault_ns, and the mapper's calls on a populated region as the mapper makes them. */
static int measure_mm(uint64_t sys_ns, struct vml_kernel_costs *k)
{
	uint64_t f[TRIALS], m[TRIALS], u[TRIALS], z[TRIALS];
	struct vml_rand rnd = vml_rand_init(1, 0);
	const long pg = sysconf(_SC_PAGESIZE);

	for (unsigned int t = 0; t < TRIALS; t++) {
		char *p = NULL;
		uint64_t t0, ms = 0, us = 0;
		unsigned int nm = 0, nu = 0;

		/*
		 * Twice: the first touches of memory this VM has never used cost
		 * the hypervisor's faults too; the second pass meets pages the
		 * guest has freed and reuses, as a long-running mapper does.
		 */
		for (int pass = 0; pass < 2; pass++) {
			if (p)
				munmap(p, REGION_PAGES * pg);
			p = mmap(NULL, REGION_PAGES * pg, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				return -errno;
			t0 = vml_now_ns();
			for (unsigned long i = 0; i < REGION_PAGES; i++)
				p[i * pg] = 1;
			f[t] = (vml_now_ns() - t0) / REGION_PAGES;
		}
		t0 = vml_now_ns();
		madvise(p, REGION_PAGES * pg, MADV_DONTNEED);
		z[t] = (vml_now_ns() - t0) / REGION_PAGES;
		for (unsigned long i = 0; i < REGION_PAGES; i++)
			p[i * pg] = 1;
		for (int i = 0; i < 400; i++) {
			uint64_t x = vml_rand_next(&rnd);
			char *a = p + (x % REGION_PAGES) * pg;

			t0 = vml_now_ns();
			if (x & (1ULL << 40)) {
				if (mmap(a, pg, PROT_READ | PROT_WRITE,
					 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1,
					 0) == MAP_FAILED)
					break;
				ms += vml_now_ns() - t0, nm++;
			} else {
				munmap(a, pg);
				us += vml_now_ns() - t0, nu++;
			}
		}
		munmap(p, REGION_PAGES * pg);
		m[t] = nm ? ms / nm : 0;
		u[t] = nu ? us / nu : 0;
	}
	k->syscall_ns = sys_ns;
	k->fault_ns = median(f, TRIALS);
	k->mmap_ns = median(m, TRIALS);
	k->mmap_ns = k->mmap_ns > sys_ns + k->fault_ns ? k->mmap_ns - sys_ns - k->fault_ns : 0;
	k->zap_ns = median(z, TRIALS);
	k->munmap_ns = median(u, TRIALS);
	/* its one page's zap is charged apart (zap_ns) */
	k->munmap_ns = k->munmap_ns > sys_ns + k->zap_ns ? k->munmap_ns - sys_ns - k->zap_ns : 0;
	return 0;
}

/* ---- the file mapping lock's work (bench exec-churn) ---- */

#define I_MMAP_OPS 256		/* mappings made and removed per trial */
#define I_MMAP_OTHERS 640	/* mappings of the file besides: 160 processes x 4 */
#define I_MMAP_TRIALS 41

static uint64_t least(const uint64_t *v, unsigned int n)
{
	uint64_t m = v[0];

	for (unsigned int i = 1; i < n; i++)
		m = VML_MIN(m, v[i]);
	return m;
}

static uint64_t ns_per(uint64_t t0, unsigned int n)
{
	return (vml_now_ns() - t0) / n;
}

/*
 * mmap() then munmap() I_MMAP_OPS one-page mappings of @fd (-1: anonymous)
 * at every other page from @base, so that none merges with another; the
 * mean time of each call into *@map and *@unmap. Return: 0 or -errno.
 */
static int map_unmap(char *base, long pg, int fd, uint64_t *map, uint64_t *unmap)
{
	int flags = MAP_PRIVATE | MAP_FIXED_NOREPLACE | (fd < 0 ? MAP_ANONYMOUS : 0);
	uint64_t t0 = vml_now_ns();

	for (unsigned int i = 0; i < I_MMAP_OPS; i++)
		if (mmap(base + 2 * i * pg, pg, PROT_READ, flags, fd, fd < 0 ? 0 : (off_t)i * pg) ==
		    MAP_FAILED)
			return -errno;
	*map = ns_per(t0, I_MMAP_OPS);
	t0 = vml_now_ns();
	for (unsigned int i = 0; i < I_MMAP_OPS; i++)
		munmap(base + 2 * i * pg, pg);
	*unmap = ns_per(t0, I_MMAP_OPS);
	return 0;
}

/*
 * i_mmap_insert_ns, i_mmap_remove_ns and vma_store_ns (the table in the
 * file's opening comment). The file is a temporary one of I_MMAP_OPS
 * pages, mapped I_MMAP_OTHERS times more elsewhere, so that its i_mmap
 * tree is as deep as a shared library's under the seed's 160 copies.
 */
static int measure_i_mmap(uint64_t sys_ns, struct bench_sim_costs *k)
{
	uint64_t fm[I_MMAP_TRIALS], fu[I_MMAP_TRIALS], am[I_MMAP_TRIALS], au[I_MMAP_TRIALS],
		ex[I_MMAP_TRIALS];
	const long pg = sysconf(_SC_PAGESIZE);
	char path[] = "/tmp/vmalock-simcost-XXXXXX", *area = MAP_FAILED, *others = MAP_FAILED;
	size_t span = 2 * I_MMAP_OPS * (size_t)pg, ospan = 2 * I_MMAP_OTHERS * (size_t)pg;
	int fd = mkstemp(path), ret = 0;

	if (fd < 0)
		return -errno;
	unlink(path);
	if (ftruncate(fd, (off_t)I_MMAP_OPS * pg))
		ret = -errno;
	/* free ranges of our own: reserved, then let go (nothing else maps in this thread) */
	if (!ret && ((area = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) ==
			     MAP_FAILED ||
		     (others = mmap(NULL, ospan, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) ==
			     MAP_FAILED))
		ret = -errno;
	if (!ret)
		munmap(area, span);
	for (unsigned int i = 0; !ret && i < I_MMAP_OTHERS; i++)
		if (mmap(others + 2 * i * pg, pg, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd,
			 (off_t)(i % I_MMAP_OPS) * pg) == MAP_FAILED)
			ret = -errno;
	for (unsigned int t = 0; !ret && t < I_MMAP_TRIALS; t++) {
		ret = map_unmap(area, pg, fd, &fm[t], &fu[t]);
		if (!ret)
			ret = map_unmap(area, pg, -1, &am[t], &au[t]);
		/* one page, then pages that each widen it: vma_expand's store */
		if (!ret && mmap(area, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
				 -1, 0) == MAP_FAILED)
			ret = -errno;
		if (!ret) {
			uint64_t t0 = vml_now_ns();
			unsigned int i;

			for (i = 1; i < I_MMAP_OPS; i++)
				if (mmap(area + i * pg, pg, PROT_READ,
					 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
					 0) == MAP_FAILED)
					break;
			ex[t] = ns_per(t0, i);
			munmap(area, span);
		}
	}
	if (others != MAP_FAILED)
		munmap(others, ospan);
	close(fd);
	if (ret)
		return ret;
	/* differences of a few hundred ns: the least disturbed trial of each, not the median */
	fm[0] = least(fm, I_MMAP_TRIALS), am[0] = least(am, I_MMAP_TRIALS);
	fu[0] = least(fu, I_MMAP_TRIALS), au[0] = least(au, I_MMAP_TRIALS);
	k->i_mmap_insert_ns = fm[0] > am[0] ? fm[0] - am[0] : 0;
	k->i_mmap_remove_ns = fu[0] > au[0] ? fu[0] - au[0] : 0;
	ex[0] = least(ex, I_MMAP_TRIALS);
	k->vma_store_ns = ex[0] > sys_ns ? ex[0] - sys_ns : 0;
	return 0;
}

/* ---- futex ping-pong on one CPU, and wake-ups of an idle CPU ---- */

struct probe {
	_Atomic uint32_t word;
	_Atomic uint32_t asleep;
	_Atomic uint64_t woke_at;
	int cpu;
	unsigned int rounds;
	bool pong;
	uint64_t delay_ns;		/* pong: spin this long before answering */
};

static void *probe_main(void *arg)
{
	struct probe *p = arg;

	bench_pin_thread(p->cpu);
	for (uint32_t i = 0; i < p->rounds; i++) {
		if (p->pong) {
			/* pairs with the other side's store_release */
			while (load_acquire(&p->word) != 2 * i + 1)
				futex_wait(&p->word, 2 * i, 0);
			for (uint64_t end = vml_now_ns() + p->delay_ns; vml_now_ns() < end;)
				cpu_relax();
			store_release(&p->word, 2 * i + 2);	/* pairs with its load_acquire */
			futex_wake(&p->word, 1);
		} else {
			store_release(&p->asleep, i + 1);	/* pairs with the waker's load_acquire */
			while (load_acquire(&p->word) == i)	/* pairs with the waker's store_release */
				futex_wait(&p->word, i, 0);
			store_release(&p->woke_at, vml_now_ns());	/* pairs with the waker's load */
		}
	}
	return NULL;
}

static int measure_ctxsw(int cpu, uint64_t *out)
{
	struct probe p = { .cpu = cpu, .rounds = 2000, .pong = true };
	pthread_t th;
	cpu_set_t was;
	uint64_t t0;

	if (pthread_getaffinity_np(pthread_self(), sizeof(was), &was))
		return -errno;
	if (pthread_create(&th, NULL, probe_main, &p))
		return -EAGAIN;
	bench_pin_thread(cpu);
	t0 = vml_now_ns();
	for (uint32_t i = 0; i < p.rounds; i++) {
		store_release(&p.word, 2 * i + 1);	/* pairs with probe_main's load_acquire */
		futex_wake(&p.word, 1);
		while (load_acquire(&p.word) != 2 * i + 2)	/* pairs with its store_release */
			futex_wait(&p.word, 2 * i + 1, 0);
	}
	*out = (vml_now_ns() - t0) / (2 * p.rounds);
	pthread_join(th, NULL);
	pthread_setaffinity_np(pthread_self(), sizeof(was), &was);
	return 0;
}

/* The middle of each idle bucket (the last: 5 ms), in us. */
static const unsigned int idle_probe_us[SIM_IDLE_BUCKETS] = { 12, 37, 75, 150, 300, 700, 2000, 5000 };

/* An empty futex_wake(): a system call that finds no waiter. */
static uint64_t empty_wake_ns(void)
{
	_Atomic uint32_t word = 0;
	uint64_t v[TRIALS];

	for (unsigned int i = 0; i < TRIALS; i++) {
		uint64_t t0 = vml_now_ns();

		futex_wake(&word, 1);
		v[i] = vml_now_ns() - t0;
	}
	return median(v, TRIALS);
}

/*
 * Wake a thread asleep on @there from @here TRIALS times, each after @there
 * idled @idle_ns: *@call is the median time futex_wake() took (the IPI that
 * brings a halted vCPU back is sent from inside it), *@after the median time
 * from its return to the woken thread's first instruction.
 */
static int remote_wake(int here, int there, uint64_t idle_ns, uint64_t *call, uint64_t *after)
{
	struct probe p = { .cpu = there, .rounds = TRIALS };
	uint64_t c[TRIALS], a[TRIALS];
	pthread_t th;

	if (pthread_create(&th, NULL, probe_main, &p))
		return -EAGAIN;
	bench_pin_thread(here);
	for (uint32_t i = 0; i < p.rounds; i++) {
		uint64_t t0, t1, woke;

		while (load_acquire(&p.asleep) != i + 1)	/* pairs with its store_release */
			cpu_relax();
		/* it stored asleep just before futex_wait(): let its CPU idle */
		for (uint64_t end = vml_now_ns() + idle_ns; vml_now_ns() < end;)
			cpu_relax();
		t0 = vml_now_ns();
		store_release(&p.word, i + 1);	/* pairs with probe_main's load_acquire */
		futex_wake(&p.word, 1);
		t1 = vml_now_ns();
		while (!(woke = load_acquire(&p.woke_at)))	/* pairs with its store_release */
			cpu_relax();
		store_relaxed(&p.woke_at, 0);	/* its next store comes after our next wake */
		c[i] = t1 - t0;
		a[i] = woke > t1 ? woke - t1 : 0;
	}
	pthread_join(th, NULL);
	*call = median(c, TRIALS);
	*after = median(a, TRIALS);
	return 0;
}

/*
 * The waker's IPI and the wake-up curve. Measured on this machine (2-vCPU
 * VM, 2026-12-04, loaded): futex_wake() took 4.7-5.4 us against 0.28 for
 * an empty one at every idle time up to 700 us; the woken thread ran
 * 6.3 us after its return after 2-12 us of idle, 10 after 37-75, 17 after
 * 2 ms: a vCPU that halts is woken by its host.
 */
static int measure_idle_wake(int waker_cpu, int sleeper_cpu, uint64_t *ipi, uint64_t *out)
{
	uint64_t empty = empty_wake_ns(), call = 0, ipis[SIM_IDLE_BUCKETS] = { 0 };
	cpu_set_t was;
	int ret = 0;

	if (pthread_getaffinity_np(pthread_self(), sizeof(was), &was))
		return -errno;
	for (unsigned int b = 0; !ret && b < SIM_IDLE_BUCKETS; b++) {
		ret = remote_wake(waker_cpu, sleeper_cpu, idle_probe_us[b] * NSEC_PER_USEC,
				  &call, &out[b]);
		ipis[b] = call > empty ? call - empty : 0;
	}
	/* the IPI's cost does not depend on how long the target idled: the median bucket */
	*ipi = median(ipis, SIM_IDLE_BUCKETS);
	pthread_setaffinity_np(pthread_self(), sizeof(was), &was);
	return ret;
}

/* ---- a cache line's transfer between two CPUs ---- */

#define LINE_OPS 500
#define LINE_TRIALS 101

struct line_probe {
	_Alignas(64) _Atomic uint64_t turn;	/* [atomic] the shared line: whose increment is next */
	_Alignas(64) _Atomic uint64_t own[2][8];	/* [atomic] a line each */
	_Atomic uint32_t ready;			/* [atomic] threads at the start line */
	int cpu;
	bool shared;
	long switches;				/* the second thread's, during its loop (after join) */
};

/* Context switches the calling thread has made: a trial with one was disturbed. */
static long thread_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* The second thread's half: CPU @cpu, odd turns (shared) or its own line. */
static void *line_main(void *arg)
{
	struct line_probe *p = arg;
	long sw;

	bench_pin_thread(p->cpu);
	atomic_fetch_add(&p->ready, 1);
	while (atomic_load(&p->ready) < 2)
		;
	sw = thread_switches();
	for (uint64_t i = 0; i < LINE_OPS; i++) {
		if (p->shared) {
			/* a plain spin: a PAUSE in it would add its own latency to each turn */
			while (atomic_load_explicit(&p->turn, memory_order_relaxed) != 2 * i + 1)
				;
			atomic_fetch_add(&p->turn, 1);
		} else {
			atomic_fetch_add(&p->own[1][0], 1);
		}
	}
	p->switches = thread_switches() - sw;
	return NULL;
}

/*
 * ns per increment, with this thread on @here and the other on @there;
 * *@clean: neither thread left its CPU meanwhile.
 */
static int line_trial(int here, int there, bool shared, uint64_t *out, bool *clean)
{
	struct line_probe probe = { .cpu = there, .shared = shared }, *p = &probe;
	pthread_t th;
	uint64_t t0;
	long sw;

	if (pthread_create(&th, NULL, line_main, p))
		return -EAGAIN;
	bench_pin_thread(here);
	atomic_fetch_add(&p->ready, 1);
	while (atomic_load(&p->ready) < 2)
		;
	sw = thread_switches();
	t0 = vml_now_ns();
	for (uint64_t i = 0; i < LINE_OPS; i++) {
		if (shared) {
			while (atomic_load_explicit(&p->turn, memory_order_relaxed) != 2 * i)
				;
			atomic_fetch_add(&p->turn, 1);
		} else {
			atomic_fetch_add(&p->own[0][0], 1);
		}
	}
	if (shared)	/* the other's last increment */
		while (atomic_load(&p->turn) != 2 * LINE_OPS)
			;
	/* shared: 2 x LINE_OPS increments in turn; own: LINE_OPS each, side by side */
	*out = (vml_now_ns() - t0) / (shared ? 2 * LINE_OPS : LINE_OPS);
	sw = thread_switches() - sw;
	pthread_join(th, NULL);
	*clean = !sw && !p->switches;
	return 0;
}

/*
 * line_xfer_ns: the increments in turn on one line, less the same on a
 * line each; of LINE_TRIALS short trials each, the median of those in
 * which neither thread left its CPU (any other task on either CPU stalls
 * the turns: on this VM, at a load average of 2.5, medians of all trials
 * read 33 to 852 ns from one run to the next), or the fastest when fewer
 * than 5 were. The turn-taking is the worst case of a contended lock
 * word: every increment finds the line on the other CPU. One CPU: 0
 * (nothing to measure; lines are not modelled).
 */
static uint64_t line_figure(uint64_t *v, const bool *clean, unsigned int n)
{
	uint64_t c[LINE_TRIALS];
	unsigned int nc = 0;

	for (unsigned int i = 0; i < n; i++)
		if (clean[i])
			c[nc++] = v[i];
	if (nc >= 5)
		return median(c, nc);
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[0];
}

static int measure_line_xfer(int here, int there, uint64_t *out)
{
	uint64_t sh[LINE_TRIALS], own[LINE_TRIALS], a, b;
	bool sh_clean[LINE_TRIALS], own_clean[LINE_TRIALS];
	cpu_set_t was;
	int ret = 0;

	*out = 0;
	if (here == there)
		return 0;
	if (pthread_getaffinity_np(pthread_self(), sizeof(was), &was))
		return -errno;
	for (unsigned int t = 0; !ret && t < LINE_TRIALS; t++) {
		ret = line_trial(here, there, true, &sh[t], &sh_clean[t]);
		if (!ret)
			ret = line_trial(here, there, false, &own[t], &own_clean[t]);
	}
	pthread_setaffinity_np(pthread_self(), sizeof(was), &was);
	if (ret)
		return ret;
	a = line_figure(sh, sh_clean, LINE_TRIALS);
	b = line_figure(own, own_clean, LINE_TRIALS);
	*out = a > b ? a - b : 0;
	return 0;
}

static uint64_t timer_slack(void)
{
	FILE *f = fopen("/proc/self/timerslack_ns", "r");
	unsigned long long v = 50000;

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 50000;
		fclose(f);
	}
	return v;
}

int bench_sim_costs_measure(const struct bench_calibration *cal, struct bench_sim_costs *out)
{
	const struct host_profile *hp;
	int mapper_cpu, reader_cpu, ret;

	memset(out, 0, sizeof(*out));
	ret = host_profile_current(&hp);
	if (ret)
		return ret;
	bench_pick_cpus(&mapper_cpu, &reader_cpu);
	if (mapper_cpu < 0)
		mapper_cpu = reader_cpu = 0;
	out->sched.tick_ns = NSEC_PER_SEC / (hp->hz ? hp->hz : 250);
	if (sim_preempt_parse(hp->preempt, &out->sched.preempt))
		out->sched.preempt = SIM_PREEMPT_VOLUNTARY;
	out->sched.timer_slack_ns = timer_slack();
	out->sched.relax_ns = measure_relax();
	out->kernel.syscall_ns = measure_syscall();
	ret = measure_mm(out->kernel.syscall_ns, &out->kernel);
	if (!ret)
		ret = measure_i_mmap(out->kernel.syscall_ns, out);
	if (!ret)
		ret = measure_ctxsw(reader_cpu, &out->sched.ctxsw_ns);
	if (!ret)
		ret = measure_idle_wake(reader_cpu, mapper_cpu, &out->sched.wake_ipi_ns,
					 out->sched.idle_wake_ns);
	if (!ret)
		ret = measure_line_xfer(reader_cpu, mapper_cpu, &out->sched.line_xfer_ns);
	if (ret)
		return ret;
	out->sched.wake_busy_ns = out->sched.idle_wake_ns[0];
	if (cal && cal->done) {
		out->record_ns = (uint64_t)cal->live_ns;
		out->page_ns = (uint64_t)cal->live_page_ns;
		out->call_ns = (uint64_t)cal->live_call_ns;
	}
	snprintf(out->source, sizeof(out->source), "measured on this host's live kernel");
	return 0;
}

/* ---- the table as JSON, and back ---- */

#define FIELDS(X)                                                            \
	X(sched.ctxsw_ns) X(sched.wake_busy_ns) X(sched.wake_ipi_ns) X(sched.relax_ns) \
	X(sched.timer_slack_ns) X(sched.tick_ns) X(sched.base_slice_ns)          \
	X(kernel.syscall_ns) X(kernel.mmap_ns) X(kernel.munmap_ns)               \
	X(kernel.fault_ns) X(kernel.zap_ns) X(record_ns) X(page_ns) X(call_ns)

/*
 * Added later: a table without them charges nothing there (as before them);
 * without line_xfer_ns, cache lines are not modelled (sim_cacheline.c).
 */
#define OPTIONAL(X) \
	X(i_mmap_insert_ns) X(i_mmap_remove_ns) X(vma_store_ns) X(exec_ns) X(sched.line_xfer_ns)

static const char *field_key(const char *f)
{
	const char *dot = strchr(f, '.');

	return dot ? dot + 1 : f;
}

static json_t *leg_json(const uint64_t q[SIM_LEG_DECILES])
{
	json_t *a = json_array();

	for (unsigned int i = 0; i < SIM_LEG_DECILES; i++)
		json_push_new(a, json_integer((json_int_t)q[i]));
	return a;
}

/* Optional "@key": SIM_LEG_DECILES non-decreasing numbers. Return: 0 or -EINVAL (@err). */
static int leg_load(json_t *o, const char *key, uint64_t q[SIM_LEG_DECILES], char *err,
		    size_t errlen)
{
	json_t *a = json_object_get(o, key);

	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) != SIM_LEG_DECILES) {
		snprintf(err, errlen, "sim_costs.%s: not an array of %u numbers (deciles p10..p90)",
			 key, SIM_LEG_DECILES);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < SIM_LEG_DECILES; i++) {
		json_t *v = json_array_get(a, i);

		if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
		    (i && (uint64_t)json_integer_value(v) < q[i - 1])) {
			snprintf(err, errlen, "sim_costs.%s[%u]: not a number > 0 and >= the one "
					      "before", key, i);
			return -EINVAL;
		}
		q[i] = (uint64_t)json_integer_value(v);
	}
	return 0;
}

json_t *bench_sim_costs_json(const struct bench_sim_costs *c)
{
	json_t *o = json_object(), *curve = json_array();

#define SET(f) json_set_u64(o, field_key(#f), c->f);
	FIELDS(SET)
#undef SET
	for (unsigned int i = 0; i < SIM_IDLE_BUCKETS; i++)
		json_push_new(curve, json_integer((json_int_t)c->sched.idle_wake_ns[i]));
	json_set_new(o, "idle_wake_ns", curve);
	json_set_u64(o, "scan_vma_ns", c->kernel.scan_vma_ns);
	if (sim_leg_measured(c->sched.way_back_ns))
		json_set_new(o, "way_back_ns", leg_json(c->sched.way_back_ns));
	if (sim_leg_measured(c->sched.switch_in_ns))
		json_set_new(o, "switch_in_ns", leg_json(c->sched.switch_in_ns));
	if (sim_leg_measured(c->sched.switch_in_short_ns)) {
		json_set_new(o, "switch_in_short_ns", leg_json(c->sched.switch_in_short_ns));
		json_set_double(o, "race_won_short", c->race_won_slept[0]);
		json_set_double(o, "race_won_long", c->race_won_slept[1]);
	}
	if (sim_leg_measured(c->sched.way_back_ns)) {
		json_set_double(o, "race_won", c->race_won);
		json_set_i64(o, "way_back_shift_ns", c->way_back_shift_ns);
	}
#define SET(f) json_set_u64(o, field_key(#f), c->f);
	OPTIONAL(SET)
#undef SET
	json_set_str(o, "preempt", sim_preempt_name(c->sched.preempt));
	json_set_str(o, "source", c->source);
	return o;
}

int bench_sim_costs_load(const char *path, struct bench_sim_costs *out, char *err, size_t errlen)
{
	json_t *doc, *o, *curve;
	const char *pre;
	int ret = json_read_file(path, &doc, err, errlen);

	if (ret)
		return ret;
	memset(out, 0, sizeof(*out));
	o = json_object_get(doc, "sim_costs");
	curve = o ? json_object_get(o, "idle_wake_ns") : NULL;
	ret = -EINVAL;
	if (!o) {
		snprintf(err, errlen, "no \"sim_costs\" object at the top");
		goto out;
	}
#define GET(f)                                                                       \
	if (json_get_u64(o, field_key(#f), &out->f)) {                               \
		snprintf(err, errlen, "sim_costs.%s: missing or not a number", field_key(#f)); \
		goto out;                                                            \
	}
	FIELDS(GET)
#undef GET
	if (!json_is_array(curve) || json_array_size(curve) != SIM_IDLE_BUCKETS) {
		snprintf(err, errlen, "sim_costs.idle_wake_ns: not an array of %u numbers",
			 SIM_IDLE_BUCKETS);
		goto out;
	}
	for (unsigned int i = 0; i < SIM_IDLE_BUCKETS; i++) {
		json_t *v = json_array_get(curve, i);

		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			snprintf(err, errlen, "sim_costs.idle_wake_ns[%u]: not a number", i);
			goto out;
		}
		out->sched.idle_wake_ns[i] = (uint64_t)json_integer_value(v);
	}
	/* Optional: bench khugepaged's simulated rows need it (from its live row otherwise). */
	if (json_object_get(o, "scan_vma_ns") && json_get_u64(o, "scan_vma_ns",
							     &out->kernel.scan_vma_ns)) {
		snprintf(err, errlen, "sim_costs.scan_vma_ns: not a number");
		goto out;
	}
	if (leg_load(o, "way_back_ns", out->sched.way_back_ns, err, errlen) ||
	    leg_load(o, "switch_in_ns", out->sched.switch_in_ns, err, errlen) ||
	    leg_load(o, "switch_in_short_ns", out->sched.switch_in_short_ns, err, errlen))
		goto out;
	if (sim_leg_measured(out->sched.switch_in_short_ns) &&
	    !sim_leg_measured(out->sched.switch_in_ns)) {
		snprintf(err, errlen, "sim_costs.switch_in_short_ns without switch_in_ns (the longer "
				      "idles' way in)");
		goto out;
	}
	if (json_is_number(json_object_get(o, "race_won_short")))
		out->race_won_slept[0] = json_number_value(json_object_get(o, "race_won_short"));
	if (json_is_number(json_object_get(o, "race_won_long")))
		out->race_won_slept[1] = json_number_value(json_object_get(o, "race_won_long"));
	/* what the legs were fitted to: shown again, not used */
	if (json_is_number(json_object_get(o, "race_won")))
		out->race_won = json_number_value(json_object_get(o, "race_won"));
	if (json_is_integer(json_object_get(o, "way_back_shift_ns")))
		out->way_back_shift_ns = json_integer_value(json_object_get(o, "way_back_shift_ns"));
#define GET(f)                                                                       \
	if (json_object_get(o, field_key(#f)) && json_get_u64(o, field_key(#f), &out->f)) { \
		snprintf(err, errlen, "sim_costs.%s: not a number", field_key(#f));  \
		goto out;                                                            \
	}
	OPTIONAL(GET)
#undef GET
	if (json_get_str(o, "preempt", &pre) || sim_preempt_parse(pre, &out->sched.preempt)) {
		snprintf(err, errlen, "sim_costs.preempt: none, voluntary, full or lazy");
		goto out;
	}
	if (!out->sched.tick_ns) {
		snprintf(err, errlen, "sim_costs.tick_ns: must be > 0");
		goto out;
	}
	snprintf(out->source, sizeof(out->source), "%s", path);
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

int bench_sim_costs_get(const char *who, const char *file, const struct bench_calibration *cal,
			struct bench_sim_costs *out)
{
	char err[256];
	int ret;

	if (file) {
		ret = bench_sim_costs_load(file, out, err, sizeof(err));
		if (ret)
			fprintf(stderr, "%s: --sim-costs %s: %s\n", who, file,
				ret == -EINVAL ? err : strerror(-ret));
		return ret;
	}
	ret = bench_sim_costs_measure(cal, out);
	if (ret)
		fprintf(stderr, "%s: measuring the simulated machine's charges on the live "
				"kernel: %s (give --sim-costs FILE)\n", who, strerror(-ret));
	return ret;
}

static void leg_print(FILE *f, const char *what, const uint64_t q[SIM_LEG_DECILES])
{
	if (!sim_leg_measured(q))
		return;
	fprintf(f, "#   %s, p10..p90:", what);
	for (unsigned int i = 0; i < SIM_LEG_DECILES; i++)
		fprintf(f, " %llu", (unsigned long long)q[i]);
	fprintf(f, "\n");
}

void bench_sim_costs_print(FILE *f, const struct bench_sim_costs *c)
{
	fprintf(f, "# simulated machine's charges (ns; %s):\n", c->source);
	fprintf(f, "#   kernel: syscall %llu, mmap %llu, munmap %llu, fault %llu, zap %llu a "
		   "page, khugepaged %llu a VMA scanned; readers: record %llu, page %llu, "
		   "read() %llu\n",
		(unsigned long long)c->kernel.syscall_ns, (unsigned long long)c->kernel.mmap_ns,
		(unsigned long long)c->kernel.munmap_ns, (unsigned long long)c->kernel.fault_ns,
		(unsigned long long)c->kernel.zap_ns, (unsigned long long)c->kernel.scan_vma_ns,
		(unsigned long long)c->record_ns, (unsigned long long)c->page_ns,
		(unsigned long long)c->call_ns);
	if (c->i_mmap_insert_ns || c->i_mmap_remove_ns || c->vma_store_ns || c->exec_ns)
		fprintf(f, "#   exec-churn: i_mmap insert %llu, remove %llu, mm tree store %llu; an "
			   "execution's other work %llu\n",
			(unsigned long long)c->i_mmap_insert_ns,
			(unsigned long long)c->i_mmap_remove_ns,
			(unsigned long long)c->vma_store_ns, (unsigned long long)c->exec_ns);
	fprintf(f, "#   sched: context switch %llu, wake-up to a busy CPU %llu, waker's IPI %llu, "
		   "pause %llu, "
		   "timer slack %llu, tick %llu, preempt %s, base slice %s\n",
		(unsigned long long)c->sched.ctxsw_ns, (unsigned long long)c->sched.wake_busy_ns,
		(unsigned long long)c->sched.wake_ipi_ns, (unsigned long long)c->sched.relax_ns, (unsigned long long)c->sched.timer_slack_ns,
		(unsigned long long)c->sched.tick_ns, sim_preempt_name(c->sched.preempt),
		c->sched.base_slice_ns ? "set" : "the kernel's for the CPU count");
	if (c->sched.line_xfer_ns)
		fprintf(f, "#   cache line: an atomic's transfer from another CPU %llu\n",
			(unsigned long long)c->sched.line_xfer_ns);
	fprintf(f, "#   wake-up of a CPU idle for <25us..>3ms:");
	for (unsigned int i = 0; i < SIM_IDLE_BUCKETS; i++)
		fprintf(f, " %llu", (unsigned long long)c->sched.idle_wake_ns[i]);
	fprintf(f, "\n");
	leg_print(f, "a reader's way back between read()s (drawn for read()'s charge)",
		  c->sched.way_back_ns);
	if (sim_leg_measured(c->sched.way_back_ns) && c->race_won > 0)
		fprintf(f, "#     (shifted %+lld ns so that the mapper wins %.0f%% of the races, as "
			   "the traced kernel's)\n", (long long)c->way_back_shift_ns,
			100 * c->race_won);
	if (!sim_leg_measured(c->sched.switch_in_short_ns)) {
		leg_print(f, "release -> woken writer's switch-in (drawn for an idle CPU's wake-up)",
			  c->sched.switch_in_ns);
		return;
	}
	leg_print(f, "release -> woken writer's switch-in, after a sleep of 100 us or more "
		     "(drawn for the wake-up of a CPU idle as long)", c->sched.switch_in_ns);
	leg_print(f, "... after a shorter sleep (drawn for a CPU idle < 100 us)",
		  c->sched.switch_in_short_ns);
	fprintf(f, "#     (the traced kernel's mapper won %.0f%% of the races after a short sleep, "
		   "%.0f%% after a long one)\n", 100 * c->race_won_slept[0],
		100 * c->race_won_slept[1]);
}

struct sim_config bench_sim_config(const struct bench_sim_costs *c, unsigned int cpus,
				   uint64_t seed)
{
	return (struct sim_config){ .cpus = cpus, .seed = seed, .costs = c->sched };
}
