// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-trace-analysis - src/trace/analysis.c on hand-made event streams:
 * waits, holds, who held the lock during each wait and for how long,
 * downgrades, reader gaps, wake-up latency, lost and contradictory events.
 * No tracefs, no root.
 */
#include <errno.h>
#include <string.h>

#include "tap.h"
#include "trace/analysis.h"

#define MM 0xffff888100001000ULL
#define MM2 0xffff888100002000ULL

static struct trace_analysis a;

static void ev(uint8_t kind, uint64_t ts, int32_t pid, bool write, bool success)
{
	struct trace_event e = {
		.ts = ts, .mm = MM, .pid = pid, .tgid = pid >= 1000 ? 1000 : pid, .kind = kind,
		.flags = (write ? TRACE_WRITE : 0) | (success ? TRACE_SUCCESS : 0),
	};
	int ret;

	snprintf(e.comm, sizeof(e.comm), "task-%d", pid);
	ret = trace_analysis_feed(&a, &e);
	if (ret)
		printf("# feed(kind %u, ts %llu, pid %d) = %d\n", kind, (unsigned long long)ts,
		       pid, ret);
}

#define START(ts, pid, w) ev(TRACE_LOCK_START, ts, pid, w, false)
#define ACQ(ts, pid, w) ev(TRACE_LOCK_ACQUIRED, ts, pid, w, true)
#define ACQ_FAIL(ts, pid, w) ev(TRACE_LOCK_ACQUIRED, ts, pid, w, false)
#define REL(ts, pid, w) ev(TRACE_LOCK_RELEASED, ts, pid, w, false)
#define R false
#define W true

static void sched(uint8_t kind, uint64_t ts, int32_t pid)
{
	struct trace_event e = { .ts = ts, .pid = pid, .kind = kind };

	trace_analysis_feed(&a, &e);
}

/* @prev leaves the CPU for @next. */
static void switch_out(uint64_t ts, int32_t prev, int32_t next)
{
	struct trace_event e = { .ts = ts, .pid = next, .other_pid = prev,
				 .kind = TRACE_SCHED_SWITCH };

	trace_analysis_feed(&a, &e);
}

static const struct trace_task *task(int32_t pid)
{
	const struct trace_mm *mm = trace_analysis_find_mm(&a, MM);

	for (size_t i = 0; mm && i < mm->nr_tasks; i++)
		if (mm->tasks[i].pid == pid)
			return &mm->tasks[i];
	return NULL;
}

static const struct trace_blame *blame(const struct trace_task *t, int32_t pid, bool write)
{
	for (size_t i = 0; t && i < t->nr_blame; i++)
		if (t->blame[i].pid == pid && t->blame[i].write == write)
			return &t->blame[i];
	return NULL;
}

static void fresh(uint64_t mm_filter)
{
	trace_analysis_fini(&a);
	trace_analysis_init(&a, mm_filter);
}

static void test_one_wait(void)
{
	const struct trace_task *w, *r;
	const struct trace_blame *b;

	fresh(0);
	ACQ(0, 200, R);			/* a trylock: no start_locking */
	START(10, 100, W);
	REL(50, 200, R);
	ACQ(60, 100, W);
	REL(70, 100, W);
	w = task(100);
	r = task(200);
	ok(w && r, "one wait: both tasks seen");
	if (!w || !r)
		return;
	is_int(w->wait[TRACE_WRITE_MODE].count, 1, "one wait: one write wait");
	is_int(w->wait[TRACE_WRITE_MODE].total_ns, 50, "one wait: start_locking to acquire");
	is_int(w->wait[TRACE_READ].count, 0, "one wait: no read wait");
	is_int(w->acquire[TRACE_WRITE_MODE].count, 1, "one wait: one write acquisition");
	is_int(r->acquire[TRACE_READ].count, 0, "one wait: a trylock is no acquisition");
	is_int(w->nr_blame, 1, "one wait: one holder");
	b = blame(w, 200, R);
	ok(b, "one wait: the reader is the holder");
	if (b) {
		is_int(b->waits, 1, "one wait: it overlapped one wait");
		is_int(b->total_ns, 40, "one wait: from the wait's start to its release");
		is_int(b->max_ns, 40, "one wait: longest overlap");
		is_str(b->comm, "task-200", "one wait: holder's comm");
		is_int(b->tgid, 200, "one wait: holder's tgid");
	}
	is_int(r->hold[TRACE_READ].count, 1, "one wait: the reader held once");
	is_int(r->hold[TRACE_READ].total_ns, 50, "one wait: for 50 ns");
	is_int(w->hold[TRACE_WRITE_MODE].total_ns, 10, "one wait: the writer held for 10 ns");
	is_int(r->nr_blame, 0, "one wait: the reader never waited, blames nobody");
	is_int(a.inconsistent, 0, "one wait: consistent");
}

static void test_steal_during_wait(void)
{
	const struct trace_task *w, *r;
	const struct trace_blame *b;

	/* The reader releases and re-takes the lock twice during one wait. */
	fresh(0);
	START(0, 200, R);
	ACQ(1, 200, R);
	START(10, 100, W);
	REL(20, 200, R);
	START(25, 200, R);
	ACQ(26, 200, R);
	REL(40, 200, R);
	START(43, 200, R);
	ACQ(44, 200, R);
	ACQ(45, 100, W);		/* impossible with a reader in, but tests crediting */
	w = task(100);
	r = task(200);
	if (!ok(w && r, "steal: both tasks seen"))
		return;
	is_int(w->wait[TRACE_WRITE_MODE].total_ns, 35, "steal: one wait of 35");
	b = blame(w, 200, R);
	ok(b, "steal: the reader is blamed");
	if (b) {
		is_int(b->waits, 1, "steal: for one wait");
		is_int(b->total_ns, (20 - 10) + (40 - 26) + (45 - 44), "steal: three holds summed");
		is_int(b->max_ns, 25, "steal: the longest overlap is that wait's sum");
	}
	is_int(r->hold[TRACE_READ].count, 2, "steal: two finished read holds");
	is_int(r->gap.count, 2, "steal: two release-to-next-attempt gaps");
	is_int(r->gap.total_ns, 5 + 3, "steal: gaps of 5 and 3");
	is_int(r->gap.max_ns, 5, "steal: longest gap");
	is_int(r->acquire[TRACE_READ].count, 3, "steal: three read acquisitions");
	is_int(r->wait[TRACE_READ].count, 0, "steal: none contended, so no waits");
}

static void test_downgrade(void)
{
	const struct trace_task *r, *m;
	const struct trace_blame *b;

	/* munmap: write lock, downgrade, release as read. */
	fresh(0);
	START(0, 300, W);
	ACQ(0, 300, W);
	START(5, 200, R);
	ACQ(20, 300, R);		/* mmap_write_downgrade() */
	ACQ(21, 200, R);
	REL(30, 300, R);
	REL(40, 200, R);
	r = task(200);
	m = task(300);
	if (!ok(r && m, "downgrade: both tasks seen"))
		return;
	is_int(r->wait[TRACE_READ].total_ns, 16, "downgrade: the reader waited 16");
	b = blame(r, 300, W);
	ok(b && b->total_ns == 15, "downgrade: 15 of it behind the write hold");
	ok(blame(r, 300, R) == NULL,
	   "downgrade: a reader that did not sleep shares the downgraded read hold");
	is_int(m->hold[TRACE_WRITE_MODE].count, 1, "downgrade: one write hold");
	is_int(m->hold[TRACE_WRITE_MODE].total_ns, 20, "downgrade: until the downgrade");
	is_int(m->hold[TRACE_READ].count, 1, "downgrade: one read hold");
	is_int(m->hold[TRACE_READ].total_ns, 10, "downgrade: from the downgrade to release");
	is_int(m->gap.count, 0, "downgrade: a downgrade is no gap");
	is_int(a.inconsistent, 0, "downgrade: consistent");
}

static void test_granted_reader(void)
{
	const struct trace_task *r, *m;
	const struct trace_blame *b;

	/*
	 * The reader queues behind the mapper's write hold; the downgrade
	 * grants it the lock, but it runs only much later (nice 15, busy
	 * CPU). The mapper's next write waits for a reader that holds the
	 * lock without running.
	 */
	fresh(0);
	START(0, 300, W);
	ACQ(0, 300, W);
	START(5, 200, R);
	ACQ(20, 300, R);		/* downgrade: the reader is let in */
	REL(30, 300, R);
	START(40, 300, W);
	ACQ(1000, 200, R);		/* the reader runs at last */
	REL(1010, 200, R);
	ACQ(1020, 300, W);
	r = task(200);
	m = task(300);
	if (!ok(r && m, "granted: both tasks seen"))
		return;
	is_int(m->wait[TRACE_WRITE_MODE].count, 1, "granted: the mapper's second write waited");
	is_int(m->wait[TRACE_WRITE_MODE].total_ns, 980, "granted: 980 ns");
	b = blame(m, 200, R);
	ok(b, "granted: the reader is blamed");
	is_int(b ? b->total_ns : 0, 1010 - 40, "granted: for all its wait until the release");
	is_int(r->hold[TRACE_READ].total_ns, 1010 - 30, "granted: the hold began at the last release");
	is_int(r->granted.count, 1, "granted: one read grant");
	is_int(r->granted.total_ns, 1000 - 30, "granted: held 970 ns before it ran");
	is_int(m->granted.count, 0, "granted: a writer's hold starts at its acquire");
	is_int(r->nr_blame, 1, "granted: the reader waited behind the write hold only");
}

static void test_readers_share_and_steal(void)
{
	const struct trace_task *w, *r1, *r2;

	fresh(0);
	ACQ(0, 200, R);
	START(10, 100, W);		/* a writer queues behind the reader */
	START(20, 201, R);
	ACQ(21, 201, R);		/* a second reader goes past it */
	REL(30, 200, R);
	REL(40, 201, R);
	ACQ(45, 100, W);
	REL(47, 100, W);
	w = task(100);
	r1 = task(201);
	if (!ok(w && r1, "steal: tasks seen"))
		return;
	is_int(r1->steals, 1, "steal: the second reader stole past the queued writer");
	is_int(r1->acquire[TRACE_READ].count, 1, "steal: one acquisition");
	is_int(r1->wait[TRACE_READ].count, 0, "steal: sharing with a reader is no wait");
	is_int(r1->nr_blame, 0, "steal: and blames nobody");
	ok(blame(w, 200, R) && blame(w, 200, R)->total_ns == 20, "steal: the writer blames the first");
	ok(blame(w, 201, R) && blame(w, 201, R)->total_ns == 19, "steal: and the thief");
	is_int(task(200)->steals, 0, "steal: a reader that was in first stole nothing");

	/* A reader that queues behind a queued writer sleeps: then readers count. */
	ACQ(50, 203, R);
	START(55, 100, W);
	START(60, 202, R);
	REL(65, 203, R);
	ACQ(66, 100, W);
	REL(68, 100, W);
	sched(TRACE_SCHED_WAKEUP, 68, 202);
	sched(TRACE_SCHED_SWITCH, 71, 202);
	ACQ(72, 202, R);
	r2 = task(202);
	if (!ok(r2, "queued reader: seen"))
		return;
	is_int(r2->wait[TRACE_READ].count, 1, "queued reader: one wait");
	is_int(r2->steals, 0, "queued reader: no steal");
	ok(blame(r2, 203, R) && blame(r2, 203, R)->total_ns == 5,
	   "queued reader: blames the reader ahead of the writer");
	ok(blame(r2, 100, W) && blame(r2, 100, W)->total_ns == 2, "queued reader: and the writer");
	is_int(r2->granted.total_ns, 72 - 68, "queued reader: granted at the writer's release");
	w = task(100);			/* the task array may have moved */
	is_int(w->spun.count, 2, "spun: no wake-up was fed for the writer's two waits");
	is_int(r2->spun.count, 0, "spun: readers never spin");
}

static void test_two_waiters_and_self(void)
{
	const struct trace_task *w1, *w2, *h;

	fresh(0);
	START(0, 400, W);
	ACQ(0, 400, W);
	START(10, 100, W);
	START(20, 1001, R);		/* a thread of process 1000 */
	REL(50, 400, W);
	ACQ(55, 1001, R);
	REL(60, 1001, R);
	ACQ(62, 100, W);
	w1 = task(100);
	w2 = task(1001);
	h = task(400);
	if (!ok(w1 && w2 && h, "two waiters: all seen"))
		return;
	ok(blame(w1, 400, W) && blame(w1, 400, W)->total_ns == 40,
	   "two waiters: the first blames the writer for 40");
	ok(blame(w1, 1001, R) && blame(w1, 1001, R)->total_ns == 10,
	   "two waiters: and the reader let in first, from the release at 50, for 10");
	ok(blame(w2, 400, W) && blame(w2, 400, W)->total_ns == 30,
	   "two waiters: the second blames the writer for 30");
	is_int(w2->nr_blame, 1, "two waiters: a waiter is not a holder");
	is_int(blame(w1, 1001, R) ? blame(w1, 1001, R)->tgid : -1, 1000,
	       "two waiters: the holder's tgid is kept");
	is_int(h->nr_blame, 0, "two waiters: nobody blames itself");
}

static void test_wakeups(void)
{
	const struct trace_task *w;

	fresh(0);
	ACQ(0, 200, R);
	START(10, 100, W);
	sched(TRACE_SCHED_WAKEUP, 30, 100);	/* futile: the reader stole it back */
	sched(TRACE_SCHED_SWITCH, 31, 100);
	sched(TRACE_SCHED_WAKEUP, 48, 100);
	sched(TRACE_SCHED_WAKEUP, 49, 100);	/* a second wake-up before it runs */
	REL(50, 200, R);
	sched(TRACE_SCHED_SWITCH, 55, 555);	/* another task runs */
	sched(TRACE_SCHED_SWITCH, 58, 100);
	ACQ(60, 100, W);
	sched(TRACE_SCHED_WAKEUP, 70, 100);	/* not waiting: not counted */
	sched(TRACE_SCHED_SWITCH, 71, 100);
	w = task(100);
	if (!ok(w, "wakeups: waiter seen"))
		return;
	is_int(w->wakeups, 3, "wakeups: three wake-ups while waiting");
	is_int(w->wake.count, 2, "wakeups: two of them ran");
	is_int(w->wake.total_ns, 1 + 10, "wakeups: latency from the first wake-up to running");
	is_int(w->wake.max_ns, 10, "wakeups: longest");

	/* Woken while waiting, with no holder seen (it took the lock before the
	 * stream began): it slept, so the wait was contended. */
	fresh(0);
	START(10, 100, W);
	sched(TRACE_SCHED_WAKEUP, 30, 100);
	sched(TRACE_SCHED_SWITCH, 32, 100);
	ACQ(33, 100, W);
	START(40, 100, W);
	ACQ(41, 100, W);
	w = task(100);
	is_int(w->acquire[TRACE_WRITE_MODE].count, 2, "slept: two acquisitions");
	is_int(w->wait[TRACE_WRITE_MODE].count, 1, "slept: one contended wait");
	is_int(w->wait[TRACE_WRITE_MODE].total_ns, 23, "slept: the one it slept in");
	is_int(w->nr_blame, 0, "slept: nobody to blame");
}

static void test_filter_failed_lost(void)
{
	struct trace_event other = { .ts = 5, .mm = MM2, .pid = 100, .kind = TRACE_LOCK_START };
	struct trace_event lost = { .ts = 100, .kind = TRACE_LOST, .mm = 7 };
	const struct trace_task *w;

	fresh(MM);
	ok(!trace_analysis_feed(&a, &other), "filter: another mm's event is accepted");
	ok(!trace_analysis_find_mm(&a, MM2), "filter: and ignored");
	REL(1, 200, R);			/* acquired before the stream began */
	ok(task(200) == NULL, "filter: a lone release creates nothing");
	START(10, 100, R);
	ACQ_FAIL(15, 100, R);		/* a killable acquire interrupted */
	w = task(100);
	if (!ok(w, "failed: waiter seen"))
		return;
	is_int(w->failed, 1, "failed: counted");
	is_int(w->acquire[TRACE_READ].count, 1, "failed: still an acquisition");
	is_int(w->wait[TRACE_READ].count, 0, "failed: uncontended, no wait");
	is_int(w->hold[TRACE_READ].count, 0, "failed: no hold");

	ACQ(20, 200, W);
	START(30, 100, R);
	ok(!trace_analysis_feed(&a, &lost), "lost: accepted");
	is_int(a.lost, 7, "lost: counted");
	REL(110, 200, W);
	ACQ(120, 100, R);
	w = task(100);
	is_int(w->acquire[TRACE_READ].count, 1, "lost: the open wait was dropped");
	is_int(task(200)->hold[TRACE_WRITE_MODE].count, 0, "lost: the open hold was dropped");
	is_int(w->hold[TRACE_READ].count, 0, "lost: an acquire after it starts a hold");
	REL(130, 100, R);
	is_int(w->hold[TRACE_READ].count, 1, "lost: which ends normally");

	START(140, 100, R);
	START(150, 100, R);		/* the acquire_returned in between was lost */
	is_int(a.inconsistent, 1, "contradiction: counted");
	ACQ(157, 100, R);
	is_int(w->acquire[TRACE_READ].count, 2, "contradiction: the older wait dropped");
	is_int(w->acquire[TRACE_READ].max_ns, 7, "contradiction: the newer one accounted");

	struct trace_event bad = { .ts = 200, .kind = 99 };
	is_int(trace_analysis_feed(&a, &bad), -EINVAL, "an unknown kind is refused");
}

static void test_many_tasks(void)
{
	bool all = true;

	fresh(0);
	for (int pid = 1; pid <= 3000; pid++) {
		START((uint64_t)pid * 10, pid, R);
		ACQ((uint64_t)pid * 10 + pid % 7, pid, R);
		REL((uint64_t)pid * 10 + 9, pid, R);
	}
	for (int pid = 1; pid <= 3000; pid++) {
		const struct trace_task *t = task(pid);

		all &= t && t->acquire[TRACE_READ].total_ns == (uint64_t)(pid % 7) &&
		       t->hold[TRACE_READ].count == 1;
	}
	ok(all, "3000 tasks: each found with its own wait");
	is_int(trace_analysis_find_mm(&a, MM)->nr_tasks, 3000, "3000 tasks: no duplicates");
}

static void test_hist(void)
{
	struct trace_stat st = { 0 };

	is_int(trace_hist_bucket(0), 0, "hist: 0 in bucket 0");
	is_int(trace_hist_bucket(1), 0, "hist: 1 in bucket 0");
	is_int(trace_hist_bucket(2), 1, "hist: 2 in bucket 1");
	is_int(trace_hist_bucket(1023), 9, "hist: 1023 in bucket 9");
	is_int(trace_hist_bucket(1024), 10, "hist: 1024 in bucket 10");
	is_int(trace_hist_bucket(UINT64_MAX), TRACE_HIST_BUCKETS - 1, "hist: huge in the last");
	is_int(trace_hist_lo(10), 1024, "hist: bucket 10 starts at 1024");
	for (int i = 0; i < 90; i++)
		trace_stat_add(&st, 1000);
	for (int i = 0; i < 10; i++)
		trace_stat_add(&st, 1000000);
	is_int(st.count, 100, "stat: count");
	is_int(st.total_ns, 90 * 1000 + 10 * 1000000, "stat: total");
	is_int(trace_stat_quantile(&st, 0.5), 1023, "stat: median within its bucket");
	is_int(trace_stat_quantile(&st, 0.95), 1000000, "stat: p95 clamped to the max");
	is_int(trace_stat_quantile(&(struct trace_stat){ 0 }, 0.5), 0, "stat: empty");
}


/*
 * The race a reader's release starts, and inferred hand-offs: a writer waits
 * while a reader releases and comes back three times - before the writer's
 * wake-up, while it is woken but not running, after it ran - then the
 * writer gets the lock after a long wait a steal went past.
 */
static void test_races_and_handoff(void)
{
	const struct trace_task *w, *r;

	fresh(0);
	a.handoff_ns = 1000;
	START(0, 200, R);
	ACQ(1, 200, R);
	START(10, 100, W);
	REL(20, 200, R);
	START(22, 200, R);			/* before any wake-up: unwoken */
	ACQ(23, 200, R);			/* a steal past the queued writer */
	REL(30, 200, R);
	sched(TRACE_SCHED_WAKEUP, 34, 100);	/* 4 after the release */
	START(36, 200, R);			/* woken, not running: slow */
	ACQ(37, 200, R);
	sched(TRACE_SCHED_SWITCH, 40, 100);
	REL(50, 200, R);
	sched(TRACE_SCHED_WAKEUP, 52, 100);
	sched(TRACE_SCHED_SWITCH, 53, 100);
	START(60, 200, R);			/* after it ran: ran */
	ACQ(61, 200, R);
	REL(1100, 200, R);
	sched(TRACE_SCHED_WAKEUP, 1101, 100);
	sched(TRACE_SCHED_SWITCH, 1103, 100);
	ACQ(1106, 100, W);			/* waited 1096 >= 1000 with steals: hand-off */
	REL(1110, 100, W);
	START(1200, 100, W);			/* a short wait with a steal: no hand-off */
	ACQ(1201, 100, W);
	w = task(100);
	r = task(200);
	if (!ok(w && r, "races: both tasks seen"))
		return;
	is_int(r->steals, 3, "races: three read acquisitions past the queued writer");
	is_int(w->race_unwoken, 1, "races: one attempt before the writer was woken");
	is_int(w->race_slow, 1, "races: one while it was woken, not running");
	is_int(w->race_ran, 1, "races: one after it ran");
	is_int(w->stolen_waits, 1, "handoff: one write wait a steal went past");
	is_int(w->handoffs, 1, "handoff: it lasted the hand-off time");
	is_int(w->release_wake.count, 3, "release->wake: three wake-ups after releases");
	is_int(w->release_wake.total_ns, 4 + 2 + 1, "release->wake: 4, 2 and 1");
	is_int(w->run_acquire.count, 1, "run->acquire: once");
	is_int(w->run_acquire.total_ns, 3, "run->acquire: switch-in 1103 -> acquired 1106");
	a.handoff_ns = 0;
}

static void test_sleep_races(void)
{
	const uint64_t us = 1000;
	const struct trace_task *w;

	/* Writer 100 waits for reader 200; 300 is another reader. */
	fresh(0);
	START(0, 200, R);
	ACQ(1, 200, R);
	START(10, 100, W);
	switch_out(12, 100, 0);			/* asleep from 12 */
	REL(50 * us, 200, R);			/* free after < 100 us asleep */
	sched(TRACE_SCHED_WAKEUP, 57 * us, 100);
	START(58 * us, 200, R);
	ACQ(58 * us + 1, 200, R);		/* the reader took it: lost */
	sched(TRACE_SCHED_SWITCH, 59 * us, 100);
	switch_out(60 * us, 100, 0);		/* asleep again from 60 us */
	START(100 * us, 300, R);		/* a second reader shares the lock */
	ACQ(100 * us + 1, 300, R);
	REL(120 * us, 200, R);			/* not free: 300 holds it */
	REL(300 * us, 300, R);			/* free after 240 us asleep */
	sched(TRACE_SCHED_WAKEUP, 306 * us, 100);
	sched(TRACE_SCHED_SWITCH, 308 * us, 100);
	ACQ(309 * us, 100, W);			/* won */
	REL(310 * us, 100, W);			/* no waiter: no race */
	START(400 * us, 200, R);
	ACQ(400 * us + 1, 200, R);
	START(410 * us, 100, W);		/* never switched out: spins, no race */
	REL(420 * us, 200, R);
	ACQ(420 * us + 1, 100, W);
	w = task(100);
	if (!ok(w, "sleep races: writer seen"))
		return;
	is_int(w->sleep_races[0], 1, "sleep races: one after a short sleep");
	is_int(w->sleep_races_won[0], 0, "sleep races: the reader won it");
	is_int(w->sleep_races[1], 1, "sleep races: one after a long sleep");
	is_int(w->sleep_races_won[1], 1, "sleep races: the writer won it");
	is_int(task(200)->sleep_races[0] + task(300)->sleep_races[1], 0,
	       "sleep races: readers have none");
	/* The legs, fine: only releases that woke the sleeping writer count. */
	is_int(task(200)->gap_woke.count, 1, "legs: one reader release woke the writer");
	is_int(trace_fine_quantile(&task(200)->gap_woke, 0.5) / us, 8,
	       "legs: that release -> the reader's next attempt, 8 us");
	is_int(w->release_run.count, 2, "legs: two wake-ups after a release");
	ok(trace_fine_quantile(&w->release_run, 0.25) / 250 == 8 * us / 250 &&
	   trace_fine_quantile(&w->release_run, 0.75) / 250 == 9 * us / 250,
	   "legs: release -> switch-in 8 and 9 us (at 250 ns resolution)");
	is_int(w->run_acquire_fine.count, 1, "legs: switch-in -> acquire, the one wait it won asleep");
	/* ...and by the writer's sleep at that release: 38 us (short), 240 us (long) */
	ok(w->release_run_slept[0].count == 1 &&
	   trace_fine_quantile(&w->release_run_slept[0], 0.5) / 250 == 9 * us / 250,
	   "legs: after the short sleep, release -> switch-in 9 us");
	ok(w->release_run_slept[1].count == 1 &&
	   trace_fine_quantile(&w->release_run_slept[1], 0.5) / 250 == 8 * us / 250,
	   "legs: after the long sleep, release -> switch-in 8 us");

	/* Lost events drop an open race. */
	fresh(0);
	START(0, 200, R);
	ACQ(1, 200, R);
	START(10, 100, W);
	switch_out(12, 100, 0);
	REL(50, 200, R);
	ev(TRACE_LOST, 60, 0, false, false);
	ACQ(70, 200, R);
	w = task(100);
	is_int(w ? w->sleep_races[0] + w->sleep_races[1] : 99, 0,
	       "sleep races: none across lost events");
}

int main(void)
{
	test_one_wait();
	test_steal_during_wait();
	test_downgrade();
	test_granted_reader();
	test_readers_share_and_steal();
	test_two_waiters_and_self();
	test_wakeups();
	test_races_and_handoff();
	test_sleep_races();
	test_filter_failed_lost();
	test_many_tasks();
	test_hist();
	trace_analysis_fini(&a);
	return tap_done();
}
