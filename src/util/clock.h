/* SPDX-License-Identifier: GPL-2.0-or-later */
/* clock.h - monotonic time in nanoseconds, for timeouts and measurements. */
#ifndef VML_UTIL_CLOCK_H
#define VML_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC  1000000000ULL

static inline uint64_t vml_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* CPU time the calling thread has used, in ns (a system call on most hosts). */
static inline uint64_t vml_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static inline struct timespec vml_ns_to_timespec(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / NSEC_PER_SEC),
			       .tv_nsec = (long)(ns % NSEC_PER_SEC) };
	return ts;
}

#endif /* VML_UTIL_CLOCK_H */
