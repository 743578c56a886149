/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * park.h - the parking kit, for tests that make a race happen on purpose
 * instead of hoping for it (test-smaps-lock.c, test-maps-transients.c).
 *
 * A hook in the code under test parks the thread that reaches it at the
 * exact point (park(), under gate.lock); the test waits until that thread is
 * parked (park_wait()), shows what other threads can and cannot do
 * meanwhile, and lets it go on (release()). wait_until() spins, yielding,
 * until another thread has made a condition true.
 *
 * One gate a test program, one thread parked at a time, named by a token
 * the test chooses (never 0): the VMA start parked at, or 1 for the reader
 * and 2 for the writer. What decides who parks where is the test's own,
 * kept under gate.lock beside it.
 *
 * Every wait has a generous deadline (PARK_DEADLINE_S) only to turn a hang
 * into a failure: what a test asserts is an order of events, never a time.
 */
#ifndef VML_TESTS_PARK_H
#define VML_TESTS_PARK_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "tap.h"

#define PARK_DEADLINE_S 20

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned long parked;		/* the token of the thread parked now, or 0 */
	bool go;			/* release(): the parked thread goes on */
} gate = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

__attribute__((unused))
static bool past_deadline(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - t0->tv_sec > PARK_DEADLINE_S;
}

/* A wait ran past its deadline: fail, and end the test program. */
__attribute__((unused, noreturn))
static void hang(const char *what)
{
	ok(0, "timed out waiting for %s", what);
	tap_done();
	exit(1);
}

/*
 * park - wait here as @who until the test calls release().
 * Context: gate.lock held (pthread_cond_wait drops it while parked).
 */
__attribute__((unused))
static void park(unsigned long who)
{
	gate.parked = who;
	gate.go = false;
	pthread_cond_broadcast(&gate.cond);
	while (!gate.go)
		pthread_cond_wait(&gate.cond, &gate.lock);
	gate.parked = 0;
}

/* Wait until @who is parked; @what names it if that never happens. */
__attribute__((unused))
static void park_wait(unsigned long who, const char *what)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_mutex_lock(&gate.lock);
	while (gate.parked != who) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&gate.cond, &gate.lock, &ts);
		if (past_deadline(&t0)) {
			pthread_mutex_unlock(&gate.lock);
			hang(what);
		}
	}
	pthread_mutex_unlock(&gate.lock);
}

/* Let the parked thread go on. */
__attribute__((unused))
static void release(void)
{
	pthread_mutex_lock(&gate.lock);
	gate.go = true;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
}

/* Spin (yielding) until @cond holds; @what names it if it never does. */
#define wait_until(cond, what)                                                         \
	do {                                                                           \
		struct timespec t0_;                                                   \
		clock_gettime(CLOCK_MONOTONIC, &t0_);                                  \
		while (!(cond)) {                                                      \
			sched_yield();                                                 \
			if (past_deadline(&t0_))                                       \
				hang(what);                                            \
		}                                                                      \
	} while (0)

#endif /* VML_TESTS_PARK_H */
