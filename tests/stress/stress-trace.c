// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stress test for the model's trace (src/sync/trace_emit.c) as proc-vs-map uses
 * it: the controller starts, stops, collects and resets run after run while
 * the emitting threads never stop taking the mmap_lock (its readers keep
 * reading after a sample's trace ends). Buffers are small and pooled, with a
 * small cap, so they are recycled, grow and hit the cap all the time.
 *
 * What must hold: after vml_trace_stop() returns no thread writes a buffer,
 * so collect reads whole events and reset frees nothing in use. Checked:
 * every collected event is one of ours and in time order, and each thread's
 * events are a contiguous run of START, ACQUIRED, RELEASED, START, ... (a
 * torn or stale event breaks it); ASan sees a write into a freed buffer and
 * ThreadSanitizer a write racing with collect.
 */
#include <pthread.h>
#include <time.h>

#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "sync/atomic.h"
#include "tap.h"
#include "sync/trace_emit.h"
#include "util/clock.h"

enum { NR_EMITTERS = 3, POOL_EVENTS = 64, CAP_EVENTS = 256 };

static struct {
	struct mm *mm;
	_Atomic int stop;
	_Atomic int32_t tids[NR_EMITTERS];
	_Atomic uint64_t locks;
} g;

static void *emitter_fn(void *arg)
{
	unsigned int i = (unsigned int)(uintptr_t)arg;

	store_release(&g.tids[i], vml_gettid());
	while (!load_acquire(&g.stop)) {
		mmap_read_lock(g.mm);
		mmap_read_unlock(g.mm);
		fetch_add_relaxed(&g.locks, 1);
	}
	return NULL;
}

struct check {
	uint64_t n, bad_pid, bad_kind, out_of_order, bad_sequence;
	uint64_t last_ts;
	uint8_t last_kind[NR_EMITTERS];	/* 0: none yet this run */
};

static int check_event(const struct trace_event *ev, void *arg)
{
	struct check *c = arg;
	int who = -1;
	uint8_t want;

	c->n++;
	if (ev->ts < c->last_ts)
		c->out_of_order++;
	c->last_ts = ev->ts;
	for (int i = 0; i < NR_EMITTERS; i++)
		if (ev->pid == load_acquire(&g.tids[i]))
			who = i;
	if (who < 0 || ev->mm != (uint64_t)(uintptr_t)g.mm) {
		c->bad_pid++;
		return 0;
	}
	if (ev->kind != TRACE_LOCK_START && ev->kind != TRACE_LOCK_ACQUIRED &&
	    ev->kind != TRACE_LOCK_RELEASED) {
		c->bad_kind++;
		return 0;
	}
	/* An uncontended read lock: START, ACQUIRED, RELEASED, again and again. */
	want = c->last_kind[who] == TRACE_LOCK_START ? TRACE_LOCK_ACQUIRED :
	       c->last_kind[who] == TRACE_LOCK_ACQUIRED ? TRACE_LOCK_RELEASED :
	       TRACE_LOCK_START;
	if (c->last_kind[who] && ev->kind != want)
		c->bad_sequence++;
	c->last_kind[who] = ev->kind;
	return 0;
}

int main(void)
{
	const struct timespec pause = { 0, 200 * 1000 };
	double seconds = tap_stress_seconds(3);
	pthread_t th[NR_EMITTERS];
	struct check total = { 0 };
	struct vml_sys *sys;
	struct vml_mm *umm;
	uint64_t end, runs = 0, lost_total = 0, empty = 0;
	bool start_ok = true, collect_ok = true;

	if (vml_sys_create(NULL, &sys) || vml_mm_create(sys, &umm)) {
		printf("Bail out! no mm\n");
		return 1;
	}
	g.mm = to_mm(umm);
	vml_trace_set_pool(NR_EMITTERS, POOL_EVENTS);
	for (unsigned int i = 0; i < NR_EMITTERS; i++)
		pthread_create(&th[i], NULL, emitter_fn, (void *)(uintptr_t)i);
	for (unsigned int i = 0; i < NR_EMITTERS; i++)
		while (!load_acquire(&g.tids[i]))
			nanosleep(&pause, NULL);

	end = vml_now_ns() + (uint64_t)(seconds * 1e9);
	while (vml_now_ns() < end) {
		struct check c = { 0 };
		uint64_t lost = 0;

		start_ok &= vml_trace_start(CAP_EVENTS) == 0;
		nanosleep(&pause, NULL);
		vml_trace_stop();
		/* The emitters go on; from here no buffer may change. */
		collect_ok &= vml_trace_collect(check_event, &c, &lost) == 0;
		vml_trace_reset();
		total.n += c.n;
		total.bad_pid += c.bad_pid;
		total.bad_kind += c.bad_kind;
		total.out_of_order += c.out_of_order;
		total.bad_sequence += c.bad_sequence;
		lost_total += lost;
		empty += !c.n;
		runs++;
	}
	store_release(&g.stop, 1);
	for (unsigned int i = 0; i < NR_EMITTERS; i++)
		pthread_join(th[i], NULL);

	tap_diag("%llu runs, %llu events collected (%llu runs empty), %llu lost past the cap, "
		 "%llu lock/unlock pairs", (unsigned long long)runs, (unsigned long long)total.n,
		 (unsigned long long)empty, (unsigned long long)lost_total,
		 (unsigned long long)load_relaxed(&g.locks));
	ok(start_ok, "every start after a reset succeeded");
	ok(collect_ok, "every collect succeeded");
	ok(runs > 10 && total.n > 0, "runs recorded events");
	is_int((long long)total.bad_pid, 0, "every event is one of the emitters' on our mm");
	is_int((long long)total.bad_kind, 0, "every event is a lock event");
	is_int((long long)total.out_of_order, 0, "events come out in time order");
	is_int((long long)total.bad_sequence, 0,
	       "each thread's events run START, ACQUIRED, RELEASED without a tear");
	ok(lost_total > 0, "the cap was reached (and counted) in some runs");

	vml_trace_set_pool(0, 0);
	vml_mm_destroy(umm);
	vml_sys_destroy(sys);
	return tap_done();
}
