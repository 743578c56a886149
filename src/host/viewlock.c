// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * viewlock.c - which lock the kernel reads smaps, numa_maps and
 * smaps_rollup under, found by experiment (host.h, host_probe_view_locks).
 *
 * 6.18 reads the page-walking views under mmap_lock(R) for each read()
 * (smaps_rollup: the whole walk, dropped when a writer waits); the 2026
 * series (seeds 000 and 002) reads them under RCU and one VMA's read lock at
 * a time. No file says which, and the release does not either (a
 * distribution may carry the series), so we look:
 *
 * This process maps one big VMA (128 MiB of written pages, no THP, so that
 * a walk visits 32768 PTEs: about a millisecond) and reads its own view
 * with page-sized read() calls on one CPU, while a writer thread on the
 * other CPU maps and unmaps one page of another area as fast as it can,
 * timing each call. The read() that walked the big VMA is the slowest one:
 * the window. Under mmap_lock the writer cannot finish a call in it - it
 * waits for the reader, so one call spans most of the window and none
 * starts and ends inside it; under per-VMA locks the writer goes on, and
 * dozens of calls start and end inside it.
 *
 * What could fool that, and what is done about it:
 *   - a reader preempted before it takes its lock makes a long window in
 *     which the writer runs freely: a trial whose reader had an
 *     involuntary context switch during the window is thrown away;
 *   - a writer preempted across the window looks blocked: a trial whose
 *     writer had an involuntary switch in a call that overlaps the window
 *     is thrown away, and a call counts as
 *     waiting only if it slept (a voluntary switch: a vCPU the hypervisor
 *     stole shows no switch at all, and looked blocked in a control run);
 *   - a burst of writer calls while the reader stalled before taking its
 *     lock looks like progress: "not blocked" also needs the writer never
 *     to have gone a quarter of the window without finishing a call;
 *   - a window too short to tell (a machine where the walk is fast): it
 *     must be at least 20 writer calls long, else the trial is thrown away;
 *   - anything else (khugepaged taking our mmap_lock): a verdict needs
 *     three trials that agree and four times as many as disagree, of at
 *     most HOST_LOCK_TRIALS per view; else the view stays UNKNOWN, with the
 *     counts as the evidence.
 * Only the middle 80% of the window counts for "inside", so that the
 * reader's entry and exit around its lock cannot be mistaken for it.
 *
 * The control (VMALOCK_VIEW_LOCK_CONTROL set in the environment): the big
 * VMA lives in a forked child and the reader reads the child's view, so the
 * writer, in this process, can never wait for it - whatever the kernel, the
 * verdict must be "not blocked" (tests/cli/view-locks.sh: the method's
 * other outcome, on a kernel that only gives the first).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/host.h"
#include "util/alloc.h"

#define BIG_BYTES (128UL << 20)
#define HOST_LOCK_TRIALS 16
#define AGREE 3				/* trials that must agree */
#define MAX_CALLS (1u << 16)		/* writer calls recorded per trial */
#define MIN_WINDOW_CALLS 20		/* a window at least this many median calls long */
#define INSIDE_VMA 10			/* calls inside the window: per-VMA locks */
#define READ_CHUNK 4096

static const char *const view_files[HOST_LOCK_VIEWS] = {
	[HOST_LOCK_SMAPS] = "smaps",
	[HOST_LOCK_NUMA_MAPS] = "numa_maps",
	[HOST_LOCK_SMAPS_ROLLUP] = "smaps_rollup",
};

const char *host_view_lock_view_name(unsigned int i)
{
	return i < HOST_LOCK_VIEWS ? view_files[i] : "?";
}

const char *host_view_lock_name(enum host_view_lock l)
{
	return l == HOST_VIEW_LOCK_MMAP ? "mmap" : l == HOST_VIEW_LOCK_VMA ? "vma" : "unknown";
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static long thread_nivcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_nivcsw;
}

/* This thread's voluntary and involuntary context switches so far. */
static void thread_csw(long *nv, long *niv)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru)) {
		*nv = *niv = 0;
		return;
	}
	*nv = ru.ru_nvcsw;
	*niv = ru.ru_nivcsw;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* One trial's writer: what the reader thread and it share. */
struct trial {
	int cpu;
	atomic_bool stop;		/* [atomic] set by the reader when its read is done */
	atomic_uint done;		/* [atomic] calls finished: the reader waits for a few */
	uint64_t (*call)[4];		/* start, end, voluntary and involuntary switches of
				 * each call (the writer's until joined) */
	unsigned int nr;		/* the writer's until joined */
	int err;
};

static void *writer_main(void *arg)
{
	struct trial *t = arg;
	long ps = sysconf(_SC_PAGESIZE);

	pin(t->cpu);
	/* Ends: the reader sets stop after its read, or the record is full. */
	while (!atomic_load_explicit(&t->stop, memory_order_relaxed) && t->nr < MAX_CALLS) {
		long nv0, niv0, nv1, niv1;
		uint64_t t0, t1;
		void *p;

		thread_csw(&nv0, &niv0);
		t0 = now_ns();
		/* PROT_READ: never merges with the big rw- VMA, whatever lands next to it */
		p = mmap(NULL, ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			t->err = -errno;
			break;
		}
		munmap(p, ps);
		t1 = now_ns();
		thread_csw(&nv1, &niv1);
		t->call[t->nr][0] = t0;
		t->call[t->nr][1] = t1;
		t->call[t->nr][2] = (uint64_t)(nv1 - nv0);
		t->call[t->nr][3] = (uint64_t)(niv1 - niv0);
		t->nr++;
		atomic_fetch_add_explicit(&t->done, 1, memory_order_relaxed);
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * One trial on @path. Return: HOST_VIEW_LOCK_MMAP or _VMA, or UNKNOWN
 * (thrown away, @why says why); -errno if it could not run.
 */
static int trial(const char *path, int reader_cpu, int writer_cpu, char *buf,
		 uint64_t (*call)[4], uint64_t *scratch, char *why, size_t whylen)
{
	struct trial t = { .cpu = writer_cpu, .call = call };
	uint64_t s = 0, e = 0, lo, hi, median, last_end, gap = 0, writer_sw = 0;
	unsigned int inside = 0, before;
	bool spanned = false;
	long sw_window = 0;
	pthread_t tid;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = HOST_VIEW_LOCK_UNKNOWN;

	if (fd < 0)
		return -errno;
	pin(reader_cpu);
	if (pthread_create(&tid, NULL, writer_main, &t)) {
		close(fd);
		return -EAGAIN;
	}
	/* Ends: the writer runs until stopped, or fails (then it stops counting). */
	while (atomic_load_explicit(&t.done, memory_order_relaxed) < 50 && !t.err)
		sched_yield();
	/* Ends: the view is finite; keep the slowest read() as the window. */
	do {
		long sw0 = thread_nivcsw();
		uint64_t t0 = now_ns(), t1;

		n = read(fd, buf, READ_CHUNK);
		t1 = now_ns();
		if (t1 - t0 > e - s) {
			s = t0;
			e = t1;
			sw_window = thread_nivcsw() - sw0;
		}
	} while (n > 0);
	atomic_store_explicit(&t.stop, true, memory_order_relaxed);
	pthread_join(tid, NULL);
	close(fd);
	if (n < 0 || t.err)
		return n < 0 ? -errno : t.err;
	for (unsigned int i = 0; i < t.nr; i++)
		scratch[i] = call[i][1] - call[i][0];
	qsort(scratch, t.nr, sizeof(*scratch), cmp_u64);
	median = t.nr ? scratch[t.nr / 2] : 0;
	lo = s + (e - s) / 10;
	hi = e - (e - s) / 10;
	before = 0;
	last_end = s;
	for (unsigned int i = 0; i < t.nr; i++) {
		/* preempted while the window was open: the trial tells nothing */
		if (call[i][1] > s && call[i][0] < e)
			writer_sw += call[i][3];
		if (call[i][0] >= lo && call[i][1] <= hi)
			inside++;
		/*
		 * In progress over most of the window, and it slept (a voluntary
		 * switch): it waited for the reader. A writer that merely lost its
		 * (virtual) CPU without a switch - a hypervisor's steal - did not.
		 */
		if (call[i][0] < s + (e - s) / 2 && call[i][1] > s + (e - s) * 9 / 10 && call[i][2])
			spanned = true;
		before += call[i][1] < s;
		/* the longest the writer went without finishing a call, inside the window */
		if (call[i][1] > s && call[i][1] <= e) {
			if (call[i][1] - last_end > gap)
				gap = call[i][1] - last_end;
			last_end = call[i][1];
		}
	}
	if (e - last_end > gap)
		gap = e - last_end;
	if (sw_window || writer_sw) {
		snprintf(why, whylen, "preempted (reader %ld, writer %llu)", sw_window,
			 (unsigned long long)writer_sw);
	} else if (!median || (e - s) < MIN_WINDOW_CALLS * median || !before) {
		snprintf(why, whylen, "window %.2f ms too short (writer call %.1f us)",
			 (double)(e - s) / 1e6, (double)median / 1e3);
	} else if (inside >= INSIDE_VMA && gap < (e - s) / 4) {
		/* steady progress all through the window, not a burst while the reader stalled */
		ret = HOST_VIEW_LOCK_VMA;
	} else if (!inside && spanned) {
		ret = HOST_VIEW_LOCK_MMAP;
	} else {
		snprintf(why, whylen, "%u writer calls inside a %.2f ms read, a gap of %.2f ms, "
			 "none waiting it out asleep", inside, (double)(e - s) / 1e6,
			 (double)gap / 1e6);
	}
	if (ret != HOST_VIEW_LOCK_UNKNOWN)
		snprintf(why, whylen, "%u writer calls inside a %.2f ms read (a call %.1f us)",
			 inside, (double)(e - s) / 1e6, (double)median / 1e3);
	return ret;
}

/* A verdict: AGREE trials of one kind and at least 4 times as many as of the other. */
static enum host_view_lock decided(const unsigned int *votes)
{
	unsigned int m = votes[HOST_VIEW_LOCK_MMAP], v = votes[HOST_VIEW_LOCK_VMA];

	if (m >= AGREE && m >= 4 * v)
		return HOST_VIEW_LOCK_MMAP;
	if (v >= AGREE && v >= 4 * m)
		return HOST_VIEW_LOCK_VMA;
	return HOST_VIEW_LOCK_UNKNOWN;
}

int host_probe_view_locks(struct host_profile *p)
{
	uint64_t (*call)[4] = NULL, *scratch = NULL;
	cpu_set_t saved;
	char *big = MAP_FAILED, *buf = NULL, why[96];
	int cpus[2], nr = 0, ret = 0;
	pid_t control = 0;

	for (unsigned int v = 0; v < HOST_LOCK_VIEWS; v++)
		p->view_lock[v] = HOST_VIEW_LOCK_UNKNOWN;
	if (sched_getaffinity(0, sizeof(saved), &saved))
		return -errno;
	for (int c = 0; c < CPU_SETSIZE && nr < 2; c++)
		if (CPU_ISSET(c, &saved))
			cpus[nr++] = c;
	if (nr < 2) {
		for (unsigned int v = 0; v < HOST_LOCK_VIEWS; v++)
			snprintf(p->view_lock_probe[v], sizeof(p->view_lock_probe[v]),
				 "not probed: needs 2 CPUs");
		return 0;
	}
	big = mmap(NULL, BIG_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	call = vml_malloc(MAX_CALLS * sizeof(*call));
	scratch = vml_malloc(MAX_CALLS * sizeof(*scratch));
	buf = vml_malloc(READ_CHUNK);
	if (big == MAP_FAILED || !call || !scratch || !buf) {
		ret = big == MAP_FAILED ? -errno : -ENOMEM;
		goto out;
	}
	/* one PTE per page, each a real page: the walk's cost does not depend on the zero page */
	madvise(big, BIG_BYTES, MADV_NOHUGEPAGE);
	memset(big, 1, BIG_BYTES);
	if (getenv("VMALOCK_VIEW_LOCK_CONTROL")) {
		control = fork();
		if (!control)
			for (;;)
				pause();	/* until killed below; its pages are ours, shared */
		if (control < 0) {
			ret = -errno;
			goto out;
		}
	}
	for (unsigned int v = 0; v < HOST_LOCK_VIEWS && !ret; v++) {
		unsigned int votes[3] = { 0 }, thrown = 0;
		char path[64], decisive[96] = "", other[96] = "";

		if (control)
			snprintf(path, sizeof(path), "/proc/%ld/%s", (long)control, view_files[v]);
		else
			snprintf(path, sizeof(path), "/proc/self/%s", view_files[v]);
		for (int i = 0; i < HOST_LOCK_TRIALS; i++) {
			int r = trial(path, cpus[1], cpus[0], buf, call, scratch, why, sizeof(why));

			if (r < 0) {
				ret = r;
				break;
			}
			votes[r]++;
			thrown += r == HOST_VIEW_LOCK_UNKNOWN;
			/* the evidence shown: the last trial that counted, else the last reason */
			snprintf(r == HOST_VIEW_LOCK_UNKNOWN ? other : decisive, sizeof(other), "%s",
				 why);
			if (decided(votes) != HOST_VIEW_LOCK_UNKNOWN)
				break;
		}
		p->view_lock[v] = decided(votes);
		snprintf(p->view_lock_probe[v], sizeof(p->view_lock_probe[v]),
			 "%s%u blocked, %u not, %u thrown away; %s",
			 control ? "control: " : "", votes[HOST_VIEW_LOCK_MMAP],
			 votes[HOST_VIEW_LOCK_VMA], thrown, decisive[0] ? decisive : other);
	}
out:
	if (control > 0) {
		kill(control, SIGKILL);
		waitpid(control, NULL, 0);
	}
	sched_setaffinity(0, sizeof(saved), &saved);
	if (big != MAP_FAILED)
		munmap(big, BIG_BYTES);
	vml_free(call);
	vml_free(scratch);
	vml_free(buf);
	return ret;
}
