// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sched.c - where the benchmark's threads run and at what priority, Paul
 * McKenney's CPU hogs (busywait.c), and the progress line.
 *
 * The method (docs/kernel.md §10): the mapper runs on one CPU at normal
 * priority; the readers run on another at nice 15, like a monitoring agent;
 * the hogs are normal-priority CPU burners on the readers' CPU. A reader
 * that is preempted by a hog while it holds mmap_lock keeps the mapper
 * waiting for as long as the hog runs: a priority inversion.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "platform/platform.h"
#include "sync/atomic.h"
#include "util/alloc.h"
#include "util/clock.h"

void bench_pick_cpus(int *mapper_cpu, int *reader_cpu)
{
	cpu_set_t set;
	int found = 0;

	*mapper_cpu = *reader_cpu = -1;
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (found++ == 0)
			*mapper_cpu = cpu;
		else
			*reader_cpu = cpu;
	}
	/* One CPU: everything shares it; pinning would change nothing. */
	if (*reader_cpu < 0)
		*mapper_cpu = -1;
}

int bench_pin_thread(int cpu)
{
	return plat_pin_self(cpu);
}

int bench_pin_pid(pid_t pid, int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set) ? -errno : 0;
}

int bench_nice_thread(int nice)
{
	return plat_nice_self(nice);
}

void bench_sleep_ns(uint64_t ns)
{
	plat_sleep_ns(ns);
}

void bench_crew_in(struct bench_crew *c)
{
	atomic_fetch_add(&c->started, 1);
}

bool bench_crew_stopped(struct bench_crew *c)
{
	return atomic_load_explicit(&c->stop, memory_order_relaxed);
}

int bench_crew_run(struct bench_crew *c, void *args, size_t size, unsigned int n,
		   void *(*main)(void *), double seconds, unsigned int *started)
{
	/* plat_: host threads, or tasks of the simulated machine when called from one */
	struct plat_thread *th = vml_zalloc((n + 1) * sizeof(*th));
	unsigned int k = 0;
	uint64_t t0;
	int err = th ? 0 : -ENOMEM;

	atomic_init(&c->stop, false);
	atomic_init(&c->started, 0);
	for (; !err && k < n; k++) {
		err = plat_thread_create(&th[k], &(struct plat_thread_opts){ .cpu = -1 }, main,
					 (char *)args + k * size);
		if (err)
			break;
	}
	/* Ends: every thread created counts itself in, or stops at once on stop. */
	while (!err && atomic_load(&c->started) < k)
		bench_sleep_ns(100 * NSEC_PER_USEC);
	t0 = plat_now_ns();
	if (!err)
		bench_sleep_ns((uint64_t)(seconds * 1e9));
	atomic_store(&c->stop, true);
	for (unsigned int i = 0; i < k; i++)
		plat_thread_join(&th[i]);
	c->elapsed_ns = plat_now_ns() - t0;
	*started = k;
	vml_free(th);
	return err;
}

/* busywait.c: spin for spin_ns then sleep 1 ms, or spin until told to stop. */
static void *hog_main(void *arg)
{
	struct bench_hogs *h = arg;

	bench_pin_thread(h->cpu);
	/* pairs with bench_hogs_stop()'s store_release(&h->stop): nothing rides on it */
	while (!load_acquire(&h->stop)) {
		uint64_t spin = h->spin_ns ? h->spin_ns : NSEC_PER_MSEC, end;

		if (plat_simulated()) {
			plat_charge_ns(spin, PLAT_USER);	/* user-mode work: preemptible anywhere */
		} else {
			for (end = vml_now_ns() + spin; vml_now_ns() < end;)
				cpu_relax();
		}
		if (h->spin_ns)
			bench_sleep_ns(NSEC_PER_MSEC);
	}
	return NULL;
}

int bench_hogs_start(struct bench_hogs *h, unsigned int n, int cpu, double busyduration_ms)
{
	int ret;

	memset(h, 0, sizeof(*h));
	atomic_init(&h->stop, false);
	h->cpu = cpu;
	h->spin_ns = (uint64_t)(busyduration_ms * NSEC_PER_MSEC);
	if (!n)
		return 0;
	h->threads = vml_zalloc(n * sizeof(*h->threads));
	if (!h->threads)
		return -ENOMEM;
	for (; h->nr < n; h->nr++) {
		ret = plat_thread_create(&h->threads[h->nr],
					 &(struct plat_thread_opts){ .cpu = -1, .name = "hog" },
					 hog_main, h);
		if (ret) {
			bench_hogs_stop(h);
			return ret;
		}
	}
	return 0;
}

void bench_hogs_stop(struct bench_hogs *h)
{
	store_release(&h->stop, true);	/* pairs with hog_main()'s load_acquire(&h->stop) */
	for (unsigned int i = 0; i < h->nr; i++)
		plat_thread_join(&h->threads[i]);
	vml_free(h->threads);
	h->threads = NULL;
	h->nr = 0;
}

static int progress_tty = -1;
static int progress_len;

bool bench_progress_tty(void)
{
	if (progress_tty < 0)
		progress_tty = isatty(STDERR_FILENO);
	return progress_tty;
}

void bench_progress(bool quiet, const char *fmt, ...)
{
	char line[160];
	va_list ap;
	int n;

	if (quiet)
		return;
	bench_progress_tty();
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n >= (int)sizeof(line))
		n = sizeof(line) - 1;
	if (progress_tty) {
		/* pad over a longer previous line */
		fprintf(stderr, "\r%s%*s", line, progress_len > n ? progress_len - n : 0, "");
		progress_len = n;
	} else {
		fprintf(stderr, "%s\n", line);
	}
	fflush(stderr);
}

void bench_progress_done(bool quiet)
{
	if (quiet || progress_tty != 1 || !progress_len)
		return;
	fprintf(stderr, "\r%*s\r", progress_len, "");
	fflush(stderr);
	progress_len = 0;
}
