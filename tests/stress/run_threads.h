/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run_threads.h - how a stress test runs its threads: every group's
 * threads started, left to run for the test's seconds, told to stop, and
 * joined, before the test checks its invariants. A thread gets its index in
 * its group as its argument, from which it derives its random stream (one
 * printed seed replays them all).
 */
#ifndef VML_TESTS_RUN_THREADS_H
#define VML_TESTS_RUN_THREADS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/clock.h"

struct thread_group {
	void *(*fn)(void *arg);		/* arg: (void *)(uintptr_t)index */
	unsigned int nr;
};

/*
 * run_threads - start the threads of @groups, let them run for @secs, set
 * *@stop, and join them all.
 */
__attribute__((unused))
static void run_threads(const struct thread_group *groups, size_t nr_groups, double secs,
			atomic_bool *stop)
{
	uint64_t t0 = vml_now_ns();
	pthread_t *th;
	size_t nr = 0, n = 0;

	for (size_t g = 0; g < nr_groups; g++)
		nr += groups[g].nr;
	th = calloc(nr, sizeof(*th));
	if (!th)
		abort();
	for (size_t g = 0; g < nr_groups; g++)
		for (uintptr_t i = 0; i < groups[g].nr; i++)
			pthread_create(&th[n++], NULL, groups[g].fn, (void *)i);
	while (vml_now_ns() - t0 < (uint64_t)(secs * 1e9))
		usleep(10000);
	atomic_store(stop, true);
	for (size_t i = 0; i < nr; i++)
		pthread_join(th[i], NULL);
	free(th);
}

#endif /* VML_TESTS_RUN_THREADS_H */
