/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis.h - who waited for mmap_lock, for how long, and who held it
 * meanwhile, from a time-ordered stream of trace events
 * (sync/trace_event.h). Knows nothing about tracefs: the live kernel's
 * session (session.h) and the model feed it the same records.
 *
 * Per mm, per task that touched its lock:
 *   - acquisitions: every start_locking -> acquire_returned, by mode (the
 *     kernel traces the blocking path of every mmap_read_lock() and
 *     mmap_write_lock(), contended or not: most take a fraction of a
 *     microsecond);
 *   - waits: the acquisitions that were contended - a conflicting hold
 *     overlapped it (any hold for a writer; a write hold for a reader, as
 *     readers share), or the task was woken up during it (it slept and was
 *     let in) - by mode, with a log2 histogram (a failed killable acquire
 *     counts too); ->spun: a writer's waits in which it was never woken
 *     (spinning on the owner; meaningful only when its sched_wakeups are
 *     fed); ->steals: read acquisitions that went past a queued writer
 *     without waiting (the rwsem's reader lock stealing; a writer still
 *     spinning before it queued counts as queued: the tracepoints cannot
 *     tell); ->stolen_waits: a writer's waits that such a steal went past;
 *     ->handoffs: those that lasted at least ->handoff_ns of the analysis
 *     (the shortest wait after which the rwsem lets a writer force
 *     hand-off, 1 tick at HZ=250): inferred hand-offs, since no tracepoint
 *     shows the HANDOFF bit - only the steals stop and the writer gets in;
 *   - for each wait, every other task that held the lock meanwhile in a
 *     conflicting mode and for how long its holds overlapped the wait (a
 *     reader that releases and re-takes the lock during one wait is one
 *     holder, its overlaps summed), aggregated per (holder, mode) into the
 *     waiter's blame list;
 *   - holds: acquire_returned(success) -> released, by mode; a downgrade
 *     (acquire_returned(read) while holding for write) ends the write hold
 *     and starts a read hold. A reader that waited holds the lock from
 *     before its acquire_returned: the rwsem grants the lock to queued
 *     readers when it wakes them (rwsem_mark_wake() adds their count), at
 *     the release or downgrade that lets them in, and the tracepoint fires
 *     only once the reader runs - which for a low-priority reader on a busy
 *     CPU can be many milliseconds later, with the lock held all along and
 *     writers queued behind it. So a contended read wait's hold starts at
 *     the last release or downgrade on the mm before its acquire_returned
 *     (not before the wait began), and ->granted counts the time from there
 *     to the acquire_returned: held, but not yet running. Writers take the
 *     lock themselves when they run (rwsem_try_write_lock()), so their
 *     holds start at acquire_returned;
 *   - gaps: a read hold's release -> the task's next attempt on that lock;
 *   - wake-ups during its waits (sched_wakeup of the task) and the latency
 *     from each to the task running (sched_switch to it); ->release_wake:
 *     from the last release of the lock it waits for to its first wake-up
 *     after it (the waker's wake-up path: an IPI to the waiter's CPU, and
 *     that CPU leaving idle).
 *
 * Events that need state the stream never showed (a release whose acquire
 * happened before tracing began) are ignored; a state the stream
 * contradicts (start_locking while already waiting) is counted in
 * ->inconsistent and the open wait or hold is dropped. TRACE_LOST drops
 * every open wait and hold.
 *
 * Context: single-threaded; the caller serialises feed and reads.
 */
#ifndef VML_TRACE_ANALYSIS_H
#define VML_TRACE_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sync/trace_event.h"

/* Bucket b counts durations in [2^b, 2^(b+1)) ns; bucket 0 also counts 0. */
#define TRACE_HIST_BUCKETS 48

/* A writer that slept less than this when the lock came free: a close race. */
#define TRACE_SHORT_SLEEP_NS 100000ULL

struct trace_stat {
	uint64_t count;
	uint64_t total_ns;
	uint64_t max_ns;
	uint64_t hist[TRACE_HIST_BUCKETS];
};

/*
 * A fine histogram of short intervals: TRACE_FINE_NS buckets up to
 * TRACE_FINE_BUCKETS x that (longer ones in the last), for the legs of the
 * release race, which differ by a microsecond where trace_stat's buckets
 * are powers of two.
 */
#define TRACE_FINE_NS 250
#define TRACE_FINE_BUCKETS 256
struct trace_fine {
	uint64_t count;
	uint32_t n[TRACE_FINE_BUCKETS];
};
void trace_fine_add(struct trace_fine *f, uint64_t ns);
void trace_fine_merge(struct trace_fine *dst, const struct trace_fine *src);
/* The @q quantile, interpolated within its bucket; 0 when empty. */
uint64_t trace_fine_quantile(const struct trace_fine *f, double q);

/* One holder in a waiter's blame list. */
struct trace_blame {
	int32_t pid, tgid;
	char comm[TRACE_COMM_LEN];
	bool write;		/* held for write (else read) */
	uint64_t waits;		/* waits of the waiter it overlapped */
	uint64_t total_ns;	/* summed overlap with those waits */
	uint64_t max_ns;	/* the longest overlap with one wait */
};

enum { TRACE_READ = 0, TRACE_WRITE_MODE = 1 };

/* One task on one mm. Results are the fields above `private`. */
struct trace_task {
	int32_t pid, tgid;	/* tgid 0: never known */
	char comm[TRACE_COMM_LEN];
	struct trace_stat acquire[2];	/* [TRACE_READ], [TRACE_WRITE_MODE]: all */
	struct trace_stat wait[2];	/* the contended ones */
	struct trace_stat spun;		/* contended waits it was never woken in */
	struct trace_stat hold[2];
	struct trace_stat granted;	/* read lock granted -> the reader ran */
	struct trace_stat gap;		/* read release -> next attempt */
	struct trace_stat wake;		/* wake-up -> running, during waits */
	struct trace_stat release_wake;	/* the lock's release -> the wake-up, during waits */
	/*
	 * A writer's races, counted at each other task's read attempt
	 * (start_locking) during its wait: the attempt came before the writer
	 * was woken after the last release (race_unwoken), while it was woken
	 * but not yet running (race_slow), or after it ran (race_ran: it got
	 * the CPU first and still found the lock taken).
	 */
	uint64_t race_unwoken, race_slow, race_ran;
	/*
	 * A writer's races by how long it had slept: each release that left
	 * the lock free while it slept in its wait opens one, closed by the
	 * next acquisition (won: its own). [0]: it had slept less than
	 * TRACE_SHORT_SLEEP_NS, [1]: longer. An idle vCPU wakes the more
	 * slowly the longer it idled, so [0] is where the race is close and
	 * its outcome decides the regime
	 * (docs/findings/2026-12-02-the-close-race.md). Counted only with
	 * the writer's switch-outs (sched_switch naming it as prev).
	 */
	uint64_t sleep_races[2], sleep_races_won[2];
	struct trace_stat run_acquire;	/* a woken waiter's last switch-in -> its acquire_returned */
	/*
	 * The release race's legs, fine: a reader's release after which a
	 * sleeping writer was woken -> the reader's next attempt (gap_woke); a
	 * writer woken after a release: that release -> its switch-in
	 * (release_run), and its switch-in -> acquire_returned (run_acquire_fine).
	 * release_run again, split by how long the writer had slept at that
	 * release (release_run_slept[0]: less than TRACE_SHORT_SLEEP_NS or not
	 * off its CPU yet, [1]: longer): an idle vCPU wakes the more slowly the
	 * longer it idled, and a writer that lost a race sleeps only a hold.
	 */
	struct trace_fine gap_woke, release_run, run_acquire_fine;
	struct trace_fine release_run_slept[2];
	uint64_t wakeups;		/* sched_wakeups while waiting */
	uint64_t failed;		/* acquire_returned without success */
	uint64_t steals;		/* read acquisitions past a queued writer */
	uint64_t stolen_waits;		/* write waits a reader's steal went past */
	uint64_t handoffs;		/* ...that lasted >= handoff_ns: inferred hand-offs */
	struct trace_blame *blame;	/* who held the lock while it waited */
	size_t nr_blame;

	/* private: the open wait and hold */
	uint8_t st_wait, st_hold;	/* 0 none, else 1 + TRACE_READ/WRITE_MODE */
	bool have_release, woken, wait_woken;
	bool release_woke;		/* a sleeping writer was woken after its last read release */
	uint64_t woken_release_ts;	/* the release before its wake-up; 0: none */
	bool woken_long;		/* it had slept >= TRACE_SHORT_SLEEP_NS at that release */
	uint64_t wait_start, hold_start, release_ts, woken_ts;
	uint64_t wait_steals;		/* steals past this open write wait */
	uint64_t ran_ts;		/* last switch to it during the open wait */
	uint64_t asleep_ts;		/* its switch-out in the open wait; 0: running */
	uint8_t race_open;		/* 0, or 1 + the sleep_races bucket of the open race */
	struct trace_blame *cur;	/* the open wait's holders */
	size_t nr_cur, cap_cur, cap_blame;
};

struct trace_mm {
	uint64_t mm;
	struct trace_task *tasks;
	size_t nr_tasks;

	/* private */
	size_t cap_tasks;
	uint64_t last_free_ts;		/* the last hold that ended (release, downgrade) */
	uint32_t *holders, *waiters;	/* task indices holding / waiting now */
	size_t nr_holders, nr_waiters, cap_holders, cap_waiters;
};

struct trace_analysis {
	uint64_t mm_filter;		/* 0: every mm */
	uint64_t handoff_ns;		/* 0: infer no hand-offs (set after init) */
	struct trace_mm *mms;
	size_t nr_mms;
	uint64_t events;		/* fed, lock and sched */
	uint64_t lost;			/* events the source reported lost */
	uint64_t inconsistent;		/* states the stream contradicted */
	uint64_t first_ts, last_ts;

	/* private */
	size_t cap_mms;
	struct trace_slot *slots;	/* (mm, pid) -> task, open addressing */
	size_t nr_slots, used_slots;
	struct trace_ref *waiting;	/* tasks waiting now, on any mm */
	size_t nr_waiting, cap_waiting;
};

/*
 * trace_analysis_init - an empty analysis of the lock of @mm_filter (0: of
 * every mm). Cannot fail; trace_analysis_fini() releases what feeding
 * allocates.
 */
void trace_analysis_init(struct trace_analysis *a, uint64_t mm_filter);
void trace_analysis_fini(struct trace_analysis *a);

/*
 * trace_analysis_feed - account one event. Events must come in timestamp
 * order; a slightly late one is accepted and its durations clamped at 0.
 * Return: 0, or -ENOMEM (the event may be partly accounted; the state
 *         stays consistent) or -EINVAL (unknown kind, or no pid).
 */
int trace_analysis_feed(struct trace_analysis *a, const struct trace_event *ev);

/* The mm's results, or NULL when no event of it was fed. */
const struct trace_mm *trace_analysis_find_mm(const struct trace_analysis *a, uint64_t mm);

/* Both modes' waits of @t summed (count, total, max, histogram). */
void trace_task_waits(const struct trace_task *t, struct trace_stat *out);

/* Add one duration to @st. */
void trace_stat_add(struct trace_stat *st, uint64_t ns);
/* Add @src into @dst. */
void trace_stat_merge(struct trace_stat *dst, const struct trace_stat *src);
/*
 * The @q-quantile (0..1) from the histogram: the upper bound of the bucket
 * holding it, at most ->max_ns; 0 for an empty stat. Within a factor of 2.
 */
uint64_t trace_stat_quantile(const struct trace_stat *st, double q);
/* Bucket index of @ns, and a bucket's lower bound. */
unsigned int trace_hist_bucket(uint64_t ns);
static inline uint64_t trace_hist_lo(unsigned int b)
{
	return b ? 1ULL << b : 0;
}

#endif /* VML_TRACE_ANALYSIS_H */
