// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-trace-emit - the model's own trace (src/sync/trace_emit.c): the mmap_lock
 * wrappers emit the kernel's tracepoint sequence (start_locking only before
 * a blocking acquire, acquire_returned after every acquire, trylocks
 * included, released before the release, a downgrade as a read acquire of
 * the write holder), per-VMA lock events carry the VMA tag, nothing is
 * recorded while tracing is off, and threads' events come out merged by
 * time. No tracefs, no root.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "tap.h"
#include "sync/trace_emit.h"

#define MAX_EV 64

struct rec {
	struct trace_event ev[MAX_EV];
	int n;
};

static int collect(const struct trace_event *ev, void *arg)
{
	struct rec *r = arg;

	if (r->n < MAX_EV)
		r->ev[r->n] = *ev;
	r->n++;
	return 0;
}

static bool is(const struct trace_event *e, uint8_t kind, uint8_t flags, const void *mm)
{
	return e->kind == kind && e->flags == flags && e->mm == (uint64_t)(uintptr_t)mm &&
	       e->pid == vml_gettid();
}

static void *other_thread(void *arg)
{
	struct mm *mm = arg;

	mmap_read_lock(mm);
	mmap_read_unlock(mm);
	return NULL;
}

int main(void)
{
	struct vml_sys *sys;
	struct vml_mm *umm;
	struct mm *mm;
	struct rec r = { .n = 0 };
	uint64_t lost = 1;
	pthread_t th;
	int i = 0;

	if (vml_sys_create(NULL, &sys) || vml_mm_create(sys, &umm)) {
		printf("Bail out! no mm\n");
		return 1;
	}
	mm = to_mm(umm);

	mmap_read_lock(mm);	/* off: nothing recorded */
	mmap_read_unlock(mm);
	ok(!vml_trace_enabled(), "off by default");
	is_int(vml_trace_start(0), 0, "start");
	is_int(vml_trace_start(0), -EBUSY, "a second start is refused");
	mmap_read_lock(mm);
	mmap_read_unlock(mm);
	ok(mmap_read_trylock(mm), "trylock");
	mmap_read_unlock(mm);
	mmap_write_lock(mm);
	mmap_write_downgrade(mm);
	mmap_read_unlock(mm);
	pthread_create(&th, NULL, other_thread, mm);
	pthread_join(th, NULL);
	vml_trace_stop();
	mmap_read_lock(mm);	/* stopped: nothing recorded */
	mmap_read_unlock(mm);
	is_int(vml_trace_collect(collect, &r, &lost), 0, "collect");
	is_int(lost, 0, "nothing lost");
	is_int(r.n, 12, "12 events: 3 + 2 + 2 + 1 + 1 on this thread, 3 on the other");
	ok(is(&r.ev[i++], TRACE_LOCK_START, 0, mm), "read lock: start_locking");
	ok(is(&r.ev[i++], TRACE_LOCK_ACQUIRED, TRACE_SUCCESS, mm), "read lock: acquire_returned");
	ok(is(&r.ev[i++], TRACE_LOCK_RELEASED, 0, mm), "read unlock: released");
	ok(is(&r.ev[i++], TRACE_LOCK_ACQUIRED, TRACE_SUCCESS, mm), "trylock: acquire_returned only");
	ok(is(&r.ev[i++], TRACE_LOCK_RELEASED, 0, mm), "trylock: released");
	ok(is(&r.ev[i++], TRACE_LOCK_START, TRACE_WRITE, mm), "write lock: start_locking");
	ok(is(&r.ev[i++], TRACE_LOCK_ACQUIRED, TRACE_WRITE | TRACE_SUCCESS, mm),
	   "write lock: acquire_returned");
	ok(is(&r.ev[i++], TRACE_LOCK_ACQUIRED, TRACE_SUCCESS, mm), "downgrade: a read acquire");
	ok(is(&r.ev[i++], TRACE_LOCK_RELEASED, 0, mm), "after the downgrade: read released");
	for (int k = 1; k < r.n && k < MAX_EV; k++)
		if (r.ev[k].ts < r.ev[k - 1].ts)
			ok(0, "events out of order at %d", k);
	ok(r.n >= 12 && r.ev[9].pid != vml_gettid() && r.ev[9].kind == TRACE_LOCK_START,
	   "the other thread's events, after ours");
	vml_trace_reset();
	r.n = 0;
	is_int(vml_trace_collect(collect, &r, NULL), 0, "collect after reset");
	is_int(r.n, 0, "reset dropped everything");

	/*
	 * A pool of faulted-in arrays (vml_trace_set_pool): buffers start from
	 * it, grow past it when full, and every event of two runs in a row -
	 * the second on recycled arrays - comes out, in order.
	 */
	vml_trace_set_pool(2, 8);
	for (int run = 0; run < 2; run++) {
		int n = run ? 5 : 20;	/* the first run outgrows its 8-event array */

		is_int(vml_trace_start(0), 0, "pool run %d: start", run);
		for (int k = 0; k < n; k++) {
			mmap_read_lock(mm);
			mmap_read_unlock(mm);
		}
		pthread_create(&th, NULL, other_thread, mm);
		pthread_join(th, NULL);
		vml_trace_stop();
		r.n = 0;
		lost = 1;
		is_int(vml_trace_collect(collect, &r, &lost), 0, "pool run %d: collect", run);
		is_int(lost, 0, "pool run %d: nothing lost", run);
		is_int(r.n, 3 * n + 3, "pool run %d: %d events", run, 3 * n + 3);
		for (int k = 1; k < r.n && k < MAX_EV; k++)
			if (r.ev[k].ts < r.ev[k - 1].ts)
				ok(0, "pool run %d: events out of order at %d", run, k);
	}
	vml_trace_reset();
	vml_trace_set_pool(0, 0);	/* frees the arrays (ASan: no leak) */
	vml_mm_destroy(umm);
	vml_sys_destroy(sys);
	return tap_done();
}
