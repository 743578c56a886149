// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rwsem.c - the mmap_lock: a reader-writer semaphore on futexes with the
 * Linux kernel's policy (kernel/locking/rwsem.c, docs/kernel.md §5).
 *
 * Design
 * ======
 *
 * State. One 64-bit count word carries the lock (WRITER_LOCKED, reader
 * biases) and three flags (WAITERS, HANDOFF, FIRST_WRITER); see the table in
 * rwsem.h and docs/locking.md. A FIFO wait list of stack-allocated waiters,
 * protected by wait_lock, holds everyone who must sleep; each waiter sleeps
 * on its own 32-bit futex word, so a wakeup is always aimed at one thread.
 *
 * Who may change what:
 *   - reader biases: any reader, locklessly (fast path add, slow path undo,
 *     up_read), and a waker under wait_lock when it grants queued readers;
 *   - WRITER_LOCKED: set by a cmpxchg that saw no lock bits (fast path,
 *     spinning writer, or a queued writer under wait_lock), cleared only by
 *     the holder (up_write, downgrade_write);
 *   - WAITERS, HANDOFF, FIRST_WRITER: only under wait_lock, so under wait_lock
 *     they are stable and a plain read of them is exact. WAITERS mirrors
 *     "wait list non-empty", FIRST_WRITER mirrors "the first waiter is a
 *     writer" (our addition, so RWSEM_STEAL_NOT_BEHIND_WRITER can decide
 *     locklessly from the one count value it already has, instead of taking
 *     wait_lock on the steal path); HANDOFF is set by a waiter that has been
 *     queued longer than handoff_ns and cleared when a writer takes the lock,
 *     when readers are granted it, or when the list empties.
 *   - a waiter's futex word: a reader's is 1 while queued and set to 0 (the
 *     kernel's "waiter.task = NULL") by the waker that grants it the lock,
 *     under wait_lock, after the count already includes its bias; a writer's
 *     is a wake sequence bumped under wait_lock by mark_wake; the writer
 *     samples it under wait_lock after a failed attempt, so no wake is lost.
 *
 * Wakeups follow the kernel: whoever leaves the count at "no lock, WAITERS"
 * (up_read, up_write, a slow-path reader giving its bias back, a cancelled
 * first waiter) calls mark_wake. A writer at the head is only woken: it
 * must still win rwsem_try_write_lock, and a reader that comes along first
 * may steal the lock (the pathology of docs/kernel.md §5.3). Readers at the
 * head are granted the lock: all queued readers, up to 256, writers skipped.
 *
 * Futex words on stacks: a waker stores to a waiter's word under wait_lock
 * and calls futex_wake() on its address after dropping wait_lock; by then
 * the waiter may have returned and its stack slot may hold something else.
 * FUTEX_WAKE only reads the address inside the kernel, so the worst case is
 * a spurious wakeup of an unrelated futex sleeper on the same address, and
 * every futex user in vmalock re-checks its condition (futex.h). This is
 * the same contract glibc's own locks rely on.
 *
 * wait_lock is a pthread mutex (PTHREAD_MUTEX_ADAPTIVE_NP: spins briefly,
 * then sleeps), not a spinlock: the machine is small and shared, a holder
 * can be preempted, and a pure spinlock would then burn the other CPU.
 * ThreadSanitizer also understands it natively.
 *
 * Why every retry loop ends:
 *   - down_read_trylock: the cmpxchg fails only if the count changed, i.e.
 *     another thread made progress; it stops as soon as a fail bit is set.
 *   - rwsem_try_write_lock/unqueued: same argument; no sleeping inside.
 *   - writer spin: bounded by HANDOFF, by the owner leaving its CPU and,
 *     on the host, by RWSEM_SPIN_NS.
 *   - writer queue loop: each pass either takes the lock, sets HANDOFF, or
 *     sleeps until mark_wake bumps its word; mark_wake is called whenever
 *     the lock becomes free with waiters queued (see above). Starvation by
 *     stealers is bounded: after handoff_ns its next attempt sets HANDOFF,
 *     which stops reader steals, the writer fast path and spinning writers,
 *     so the lock drains to it. A cancelled waiter leaves within 1 ms.
 *   - reader wait loop: ends when a waker clears its word (granted) or its
 *     cancellation is noticed (futex slices of at most 1 ms).
 *
 * Writer spinning (rwsem_optimistic_spin): a writer that finds the lock
 * held spins before it queues - on a writer while that writer is on a CPU,
 * as the kernel's (on the host, where that cannot be seen, for
 * RWSEM_SPIN_NS; on the simulated machine as one charge a check, ended
 * early by the count's next RMW: plat_spin_wait), on readers for the
 * kernel's rspin threshold (10 us + 0.5 us per reader, at most 25 us). A
 * spin on readers that times out sets `nonspinnable`, as the kernel's
 * RWSEM_NONSPINNABLE owner bit: from then on writers queue at once, readers
 * stealing the lock keep the bit; a writer taking the lock clears it, and so
 * does the last reader leaving with waiters queued, or a waker that finds
 * the lock free (the kernel's clear_nonspinnable() in __up_read and
 * rwsem_cond_wake_waiter), so the next writer to come spins again. Without it a writer would keep catching the moment between two reads
 * of a looping reader and never meet the steal pathology the kernel shows.
 *
 * Ordering. The count word is the lock: every RMW that takes it is an
 * acquire (the fast paths, the trylocks, the writer's cmpxchg, a waker
 * granting readers) and every RMW that releases it is a release (up_read,
 * up_write, downgrade_write), so a locker sees what the last holder did.
 * The flag updates made under wait_lock are acq_rel RMWs of the same word:
 * they pass an unlock's release on to the next locker rather than hide it.
 * A reader's grant is handed over through its futex word: the waker's
 * store_release pairs with the waiter's load_acquire. Everything else a
 * waiter and a waker share is under wait_lock.
 *
 * Not modelled: the osq queue of spinners, RT-task hand-off and READFAIL
 * (2^55 readers).
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>

#include "platform/platform.h"
#include "sync/atomic.h"
#include "sync/futex.h"
#include "sync/rwsem.h"
#include "sync/trace_emit.h"
#include "util/clock.h"
#include "util/compiler.h"
#include "util/debug.h"

#define RWSEM_OWNER_READER		((uintptr_t)1)
#define RWSEM_MAX_READERS_WAKEUP	256
#define RWSEM_SPIN_NS			(10 * NSEC_PER_USEC)
/* simulated: a spin on a writer checks its owner's CPU at least this often */
#define RWSEM_SPIN_CHECK_NS		NSEC_PER_USEC
#define RWSEM_CANCEL_SLICE_NS		NSEC_PER_MSEC

/*
 * wait_lock. On the host a pthread mutex; a simulated task never blocks in
 * the host's kernel while it holds the baton, so it spins through the
 * platform instead (wait_lock's sections make no platform call, so a
 * simulated holder is never switched out inside one and this never spins
 * today; it is the safe form if one ever does).
 */
static inline void wait_lock_lock(struct rwsem *sem)
{
	if (!plat_simulated()) {
		pthread_mutex_lock(&sem->wait_lock);
		return;
	}
	while (pthread_mutex_trylock(&sem->wait_lock))
		plat_yield();
}

enum rwsem_waiter_type {
	RWSEM_WAITING_FOR_WRITE,
	RWSEM_WAITING_FOR_READ,
};

/*
 * struct rwsem_waiter - one queued thread, on its own stack. It stays valid
 * while it is on wait_list (its thread cannot leave without wait_lock) and,
 * for a reader, until its futex word is cleared.
 */
struct rwsem_waiter {
	struct list_head list;		/* [wait_lock] */
	_Atomic uint32_t futex;		/* reader: 1 queued, 0 granted; writer: wake seq */
	enum rwsem_waiter_type type;	/* set before queueing */
	bool handoff_set;		/* [wait_lock] this waiter owns HANDOFF */
	uint64_t timeout;		/* set before queueing: may set HANDOFF after this */
	int32_t tid;			/* set before queueing: for the trace (sync/trace_emit.h) */
};

enum rwsem_wake_type {
	RWSEM_WAKE_ANY,		/* wake whatever is at the head */
	RWSEM_WAKE_READERS,	/* wake readers only (the lock is reader-owned) */
	RWSEM_WAKE_READ_OWNED,	/* the waker already holds a read lock */
};

/* Futex words to wake once wait_lock is dropped: one writer or <= 256 readers. */
struct wake_q {
	unsigned int n;
	_Atomic uint32_t *word[RWSEM_MAX_READERS_WAKEUP];
	int32_t tid[RWSEM_MAX_READERS_WAKEUP];	/* the waiters', for the trace */
};

/* A per-thread token for owner: the address of a thread-local, 8-aligned. */
static _Thread_local uint64_t rwsem_thread_anchor;

static inline uintptr_t rwsem_me(void)
{
	return (uintptr_t)&rwsem_thread_anchor;
}

#define rwsem_stat_inc(sem, field) stat_inc(&(sem)->stats.field)

static void wake_q_flush(struct wake_q *wq)
{
	for (unsigned int i = 0; i < wq->n; i++) {
		vml_trace_wakeup(wq->tid[i]);
		futex_wake(wq->word[i], 1);
	}
	wq->n = 0;
}

/* Queue @w's futex word on @wq. */
static inline void wake_q_add(struct wake_q *wq, struct rwsem_waiter *w)
{
	wq->tid[wq->n] = w->tid;
	wq->word[wq->n++] = &w->futex;
}

/*
 * rwsem_waiter_timeout - when a waiter queued at @now may set HANDOFF: after
 * handoff_ns; or, with tick_ns set, as the kernel counts RWSEM_WAIT_TIMEOUT
 * in jiffies - timeout = jiffies + RWSEM_WAIT_TIMEOUT at queue time, and
 * HANDOFF only once time_after(jiffies, timeout) - so between T and T + 1
 * ticks after queueing (T = handoff_ns / tick_ns), by where in its tick the
 * waiter queued. Jiffies are counted on CLOCK_MONOTONIC from 0: their phase
 * against the kernel's own tick does not matter, only that it is uniform.
 * Return: the last instant at which the waiter may not set HANDOFF yet.
 */
uint64_t rwsem_waiter_timeout(const struct rwsem *sem, uint64_t now)
{
	uint64_t tick = load_relaxed((_Atomic uint64_t *)&sem->tick_ns);
	uint64_t handoff = load_relaxed((_Atomic uint64_t *)&sem->handoff_ns), t;

	if (!tick)
		return now + handoff;
	t = (handoff + tick - 1) / tick;	/* RWSEM_WAIT_TIMEOUT in jiffies, >= 1 */
	if (!t)
		t = 1;
	/* jiffies > now_jiffies + t from the start of tick now_jiffies + t + 1 */
	return (now / tick + t + 1) * tick - 1;
}

static void rwsem_account_wait(struct rwsem *sem, uint64_t start)
{
	uint64_t d = plat_now_ns() - start;

	fetch_add_relaxed(&sem->stats.wait_ns_total, d);
	stat_record_max(&sem->stats.wait_ns_max, d);
}

/* How long one futex sleep may last: forever without a token, else <= 1 ms. */
static uint64_t rwsem_wait_slice(const struct vml_cancel *cancel)
{
	uint64_t now, slice = RWSEM_CANCEL_SLICE_NS;

	if (!cancel)
		return 0;
	if (cancel->deadline_ns) {
		now = plat_now_ns();
		if (cancel->deadline_ns <= now)
			return 1;
		slice = VML_MIN(slice, cancel->deadline_ns - now);
	}
	return slice;
}

static inline void rwsem_set_reader_owned(struct rwsem *sem)
{
	/* A hint: skip the store (and the cache-line write) if already so. */
	if (load_relaxed(&sem->owner) != RWSEM_OWNER_READER)
		store_relaxed(&sem->owner, RWSEM_OWNER_READER);
}

static inline struct rwsem_waiter *rwsem_first_waiter(struct rwsem *sem)
{
	return list_first_entry(&sem->wait_list, struct rwsem_waiter, list);
}

/* Context: wait_lock held. The FIRST_WRITER bit the list calls for now. */
static uint64_t rwsem_first_writer_bit(struct rwsem *sem)
{
	if (list_empty(&sem->wait_list))
		return 0;
	return rwsem_first_waiter(sem)->type == RWSEM_WAITING_FOR_WRITE ?
	       RWSEM_FLAG_FIRST_WRITER : 0;
}

/* Context: wait_lock held. The delta that makes the count's bit match the list. */
static uint64_t rwsem_first_writer_delta(struct rwsem *sem, uint64_t count)
{
	uint64_t want = rwsem_first_writer_bit(sem), cur = count & RWSEM_FLAG_FIRST_WRITER;

	return want - cur;	/* +bit, -bit (mod 2^64) or 0 */
}

/*
 * rwsem_del_waiter - take @w off the list, clearing the flags if it empties
 * Context: wait_lock held.
 * Return: true if waiters remain.
 */
static bool rwsem_del_waiter(struct rwsem *sem, struct rwsem_waiter *w)
{
	uint64_t delta;

	list_del_init(&w->list);
	fetch_sub_relaxed(&sem->nr_waiters, 1);
	if (list_empty(&sem->wait_list)) {
		/* acq_rel: pairs with the lock and unlock RMWs of count ("Ordering") */
		fetch_and_acq_rel(&sem->count, ~(RWSEM_FLAG_WAITERS | RWSEM_FLAG_HANDOFF |
						 RWSEM_FLAG_FIRST_WRITER));
		return false;
	}
	delta = rwsem_first_writer_delta(sem, load_relaxed(&sem->count));
	if (delta)
		fetch_add_acq_rel(&sem->count, delta);	/* pairs with the lock/unlock RMWs, as above */
	return true;
}

/*
 * rwsem_mark_wake - hand the lock to, or wake, the waiter(s) at the head
 * Context: wait_lock held, wait_list non-empty; @wq empty. The caller runs
 * wake_q_flush() after dropping wait_lock.
 */
static void rwsem_mark_wake(struct rwsem *sem, enum rwsem_wake_type type, struct wake_q *wq)
{
	struct rwsem_waiter *w, *tmp, *first = rwsem_first_waiter(sem);
	uint64_t old, adjustment = 0;
	unsigned int woken = 0;

	vml_assert(wq->n == 0);
	if (first->type == RWSEM_WAITING_FOR_WRITE) {
		/*
		 * Only wake it: until it runs, other writers (spinning) and
		 * stealing readers may take the lock first.
		 */
		if (type == RWSEM_WAKE_ANY) {
			/* Relaxed: only "try again"; the writer re-takes wait_lock before it acts. */
			fetch_add_relaxed(&first->futex, 1);
			wake_q_add(wq, first);
			rwsem_stat_inc(sem, wake_writer);
		}
		return;
	}

	if (type != RWSEM_WAKE_READ_OWNED) {
		adjustment = RWSEM_READER_BIAS;
		/*
		 * Grant the first reader before counting the others, so we can
		 * back off at once if a writer got the lock meanwhile. acq_rel:
		 * pairs with the release in up_write/up_read, and the grant
		 * below passes it on to the woken readers.
		 */
		old = fetch_add_acq_rel(&sem->count, adjustment);
		if (old & RWSEM_WRITER_LOCKED) {
			/* A reader queued too long forces the issue, as a writer would. */
			if (plat_now_ns() > first->timeout) {
				if (!(old & RWSEM_FLAG_HANDOFF)) {
					adjustment -= RWSEM_FLAG_HANDOFF;
					rwsem_stat_inc(sem, handoff);
				}
				first->handoff_set = true;
			}
			fetch_add_acq_rel(&sem->count, -adjustment);	/* pairs with the lock/unlock RMWs */
			return;
		}
		rwsem_set_reader_owned(sem);
	}

	/*
	 * Phase-fair: every queued reader (up to 256) gets the lock now, even
	 * those behind a writer. Two passes, as in the kernel: first account
	 * all the biases, then release the readers, so no woken reader can
	 * drop its bias before it was added.
	 */
	list_for_each_entry_safe(w, tmp, &sem->wait_list, list) {
		if (w->type == RWSEM_WAITING_FOR_WRITE)
			continue;
		list_del_init(&w->list);
		wake_q_add(wq, w);
		if (++woken >= RWSEM_MAX_READERS_WAKEUP)
			break;
	}
	fetch_sub_relaxed(&sem->nr_waiters, woken);
	fetch_add_relaxed(&sem->stats.wake_reader, woken);

	adjustment = woken * RWSEM_READER_BIAS - adjustment;
	old = load_relaxed(&sem->count);
	if (list_empty(&sem->wait_list)) {
		adjustment -= RWSEM_FLAG_WAITERS;
		if (old & RWSEM_FLAG_HANDOFF)
			adjustment -= RWSEM_FLAG_HANDOFF;
	} else if (woken && (old & RWSEM_FLAG_HANDOFF)) {
		/* Readers got it: no need to force writers out any more. */
		adjustment -= RWSEM_FLAG_HANDOFF;
	}
	adjustment += rwsem_first_writer_delta(sem, old);
	if (adjustment)
		fetch_add_acq_rel(&sem->count, adjustment);	/* pairs with the lock/unlock RMWs */

	/* Pairs with the load_acquire in the reader's wait loop. */
	for (unsigned int i = 0; i < wq->n; i++)
		store_release(wq->word[i], 0);
}

/* Context: wait_lock held. Wake the head if the lock is (reader-)free. */
static void rwsem_cond_wake_waiter(struct rwsem *sem, uint64_t count, struct wake_q *wq)
{
	if (count & RWSEM_WRITER_LOCKED)
		return;
	/* Nobody holds it: writers may spin again (the kernel's clear_nonspinnable). */
	if (!(count & RWSEM_READER_MASK) && load_relaxed(&sem->nonspinnable))
		store_relaxed(&sem->nonspinnable, 0);
	rwsem_mark_wake(sem, (count & RWSEM_READER_MASK) ? RWSEM_WAKE_READERS : RWSEM_WAKE_ANY,
			wq);
}

/*
 * rwsem_del_wake_waiter - a cancelled waiter leaves the queue
 * Context: wait_lock held on entry, dropped on return.
 * If it was first, the new head may now be able to run: wake it.
 */
static void rwsem_del_wake_waiter(struct rwsem *sem, struct rwsem_waiter *w, struct wake_q *wq)
{
	bool first = rwsem_first_waiter(sem) == w;

	if (rwsem_del_waiter(sem, w) && first)
		rwsem_mark_wake(sem, RWSEM_WAKE_ANY, wq);
	pthread_mutex_unlock(&sem->wait_lock);
	wake_q_flush(wq);
}

static void rwsem_wake(struct rwsem *sem)
{
	struct wake_q wq;

	wq.n = 0;
	wait_lock_lock(sem);
	if (!list_empty(&sem->wait_list))
		rwsem_mark_wake(sem, RWSEM_WAKE_ANY, &wq);
	pthread_mutex_unlock(&sem->wait_lock);
	wake_q_flush(&wq);
}

bool rwsem_read_may_steal(uint64_t count, enum rwsem_steal policy, bool nosteal)
{
	if (count & (RWSEM_WRITER_LOCKED | RWSEM_FLAG_HANDOFF))
		return false;
	if (!(count & RWSEM_FLAG_WAITERS))
		return true;		/* nobody to pass */
	if (nosteal || policy == RWSEM_STEAL_NEVER)
		return false;
	if (policy == RWSEM_STEAL_NOT_BEHIND_WRITER && (count & RWSEM_FLAG_FIRST_WRITER))
		return false;
	return true;			/* mainline: even past a queued writer */
}

/*
 * rwsem_down_read_slowpath - the reader's fast path failed
 * @count: the count after our bias was added (the bias is still in it)
 * Return: 0 with the lock held for read, or -EINTR (bias given back, dequeued).
 */
static int rwsem_down_read_slowpath(struct rwsem *sem, uint64_t count,
				    const struct vml_cancel *cancel, bool nosteal)
{
	uint64_t adjustment = -RWSEM_READER_BIAS, rcnt = count >> RWSEM_READER_SHIFT;
	struct rwsem_waiter waiter;
	struct wake_q wq;
	uint64_t start;

	wq.n = 0;
	/*
	 * Anti-starvation: with the lock most likely reader-owned and other
	 * readers in, stealing would let a reader stream starve the waiters.
	 */
	if ((load_relaxed(&sem->owner) & RWSEM_OWNER_READER) && rcnt > 1 &&
	    !(count & RWSEM_WRITER_LOCKED))
		goto queue;

	if (rwsem_read_may_steal(count, (enum rwsem_steal)load_relaxed(&sem->steal), nosteal)) {
		/* Our bias is in the count and no writer holds it: it is ours. */
		rwsem_set_reader_owned(sem);
		rwsem_stat_inc(sem, read_slow);
		if (count & RWSEM_FLAG_WAITERS)
			rwsem_stat_inc(sem, read_steal);
		/* The first reader in lets queued readers at the head in too. */
		if (rcnt == 1 && (count & RWSEM_FLAG_WAITERS)) {
			wait_lock_lock(sem);
			if (!list_empty(&sem->wait_list))
				rwsem_mark_wake(sem, RWSEM_WAKE_READ_OWNED, &wq);
			pthread_mutex_unlock(&sem->wait_lock);
			wake_q_flush(&wq);
		}
		return 0;
	}

queue:
	waiter.type = RWSEM_WAITING_FOR_READ;
	waiter.handoff_set = false;
	waiter.tid = vml_trace_enabled() ? vml_gettid() : 0;
	store_relaxed(&waiter.futex, 1);
	start = plat_now_ns();
	waiter.timeout = rwsem_waiter_timeout(sem, start);

	wait_lock_lock(sem);
	if (list_empty(&sem->wait_list)) {
		/*
		 * Nobody queued and no writer: our bias already holds the lock.
		 * Acquire pairs with the writer's release in up_write.
		 */
		if (!(load_acquire(&sem->count) & RWSEM_WRITER_LOCKED)) {
			pthread_mutex_unlock(&sem->wait_lock);
			rwsem_set_reader_owned(sem);
			rwsem_stat_inc(sem, read_slow);
			return 0;
		}
		adjustment += RWSEM_FLAG_WAITERS;
	}
	list_add_tail(&waiter.list, &sem->wait_list);
	fetch_add_relaxed(&sem->nr_waiters, 1);

	/*
	 * Now waiting, no longer locking: give the bias back, maybe wake the
	 * head. acq_rel: pairs with the lock/unlock RMWs of count ("Ordering").
	 */
	count = fetch_add_acq_rel(&sem->count, adjustment) + adjustment;
	rwsem_cond_wake_waiter(sem, count, &wq);
	pthread_mutex_unlock(&sem->wait_lock);
	wake_q_flush(&wq);
	rwsem_stat_inc(sem, read_wait);

	for (;;) {
		/* Pairs with the store_release in rwsem_mark_wake. */
		if (!load_acquire(&waiter.futex))
			break;
		if (cancel && vml_cancel_pending(cancel)) {
			wait_lock_lock(sem);
			if (load_relaxed(&waiter.futex)) {
				rwsem_del_wake_waiter(sem, &waiter, &wq);
				rwsem_account_wait(sem, start);
				rwsem_stat_inc(sem, killed);
				return -EINTR;
			}
			/* Granted meanwhile (ordered by wait_lock): keep it. */
			pthread_mutex_unlock(&sem->wait_lock);
			break;
		}
		futex_wait(&waiter.futex, 1, rwsem_wait_slice(cancel));
	}
	vml_trace_running();
	rwsem_account_wait(sem, start);
	rwsem_stat_inc(sem, read_slow);
	return 0;
}

static int __down_read(struct rwsem *sem, const struct vml_cancel *cancel, bool nosteal)
{
	plat_atomic_rmw(&sem->count);	/* an RMW of the count's line; the simulator may switch here */
	/* Acquire pairs with the release in up_write/downgrade_write. */
	uint64_t count = fetch_add_acquire(&sem->count, RWSEM_READER_BIAS) + RWSEM_READER_BIAS;

	if (likely(!(count & RWSEM_READ_FAILED_MASK))) {
		rwsem_set_reader_owned(sem);
		rwsem_stat_inc(sem, read_fast);
		return 0;
	}
	return rwsem_down_read_slowpath(sem, count, cancel, nosteal);
}

void down_read(struct rwsem *sem)
{
	__down_read(sem, NULL, false);
}

int down_read_killable(struct rwsem *sem, const struct vml_cancel *cancel)
{
	return __down_read(sem, cancel, false);
}

void down_read_nosteal(struct rwsem *sem)
{
	__down_read(sem, NULL, true);
}

int down_read_killable_nosteal(struct rwsem *sem, const struct vml_cancel *cancel)
{
	return __down_read(sem, cancel, true);
}

bool down_read_trylock(struct rwsem *sem)
{
	uint64_t c;

	plat_atomic_rmw(&sem->count);	/* an RMW of the count's line; the simulator may switch here */
	c = load_relaxed(&sem->count);

	while (!(c & RWSEM_READ_FAILED_MASK)) {
		/* acquire: pairs with the release in up_write/downgrade_write */
		if (cas_acquire(&sem->count, &c, c + RWSEM_READER_BIAS)) {
			rwsem_set_reader_owned(sem);
			rwsem_stat_inc(sem, read_fast);
			return true;
		}
	}
	rwsem_stat_inc(sem, trylock_fail);
	return false;
}

void up_read(struct rwsem *sem)
{
	plat_atomic_rmw(&sem->count);	/* an RMW of the count's line; the simulator may switch here */
	/* Release pairs with the next writer's acquire. */
	uint64_t c = fetch_sub_release(&sem->count, RWSEM_READER_BIAS);

	/* (VML_BROKEN_HANDOFF lets a writer in beside readers: what race must then catch) */
	vml_assert((c & RWSEM_READER_MASK) &&
		   (!(c & RWSEM_WRITER_LOCKED) || vml_broken(VML_BROKEN_HANDOFF)));
	c -= RWSEM_READER_BIAS;
	if (unlikely((c & (RWSEM_LOCK_MASK | RWSEM_FLAG_WAITERS)) == RWSEM_FLAG_WAITERS)) {
		/* As the kernel's __up_read: writers may spin again (clear_nonspinnable). */
		if (load_relaxed(&sem->nonspinnable))
			store_relaxed(&sem->nonspinnable, 0);
		rwsem_wake(sem);
	}
}

/* A writer owns the lock now: record it, and writers may spin again. */
static inline void rwsem_set_writer_owner(struct rwsem *sem)
{
	store_relaxed(&sem->owner, rwsem_me());
	store_relaxed(&sem->owner_task, plat_sim_self);
	if (load_relaxed(&sem->nonspinnable))
		store_relaxed(&sem->nonspinnable, 0);
}

/* Take a free lock without queueing (fast path of a spinning writer). */
static bool rwsem_try_write_lock_unqueued(struct rwsem *sem)
{
	uint64_t c = load_relaxed(&sem->count);

	while (!(c & (RWSEM_LOCK_MASK | RWSEM_FLAG_HANDOFF))) {
		/* acquire: pairs with the releases in up_read/up_write */
		if (cas_acquire(&sem->count, &c, c | RWSEM_WRITER_LOCKED))
			return true;
	}
	return false;
}

/*
 * Spin briefly before queueing; gives up at once if HANDOFF is pending or a
 * spin on readers timed out since a writer last owned the lock.
 */
static bool rwsem_optimistic_spin(struct rwsem *sem)
{
	uint64_t start = plat_now_ns(), c, readers, rspin;

	if (load_relaxed(&sem->nonspinnable))
		return false;
	for (unsigned int i = 1;; i++) {
		if (rwsem_try_write_lock_unqueued(sem))
			return true;
		c = load_relaxed(&sem->count);
		if (c & RWSEM_FLAG_HANDOFF)
			return false;
		if (!(i & 31) || (plat_simulated() && (c & RWSEM_WRITER_LOCKED))) {
			uint64_t spun = plat_now_ns() - start;

			if ((c & RWSEM_READER_MASK) && !(c & RWSEM_WRITER_LOCKED)) {
				/* rwsem_rspin_threshold: (10 + readers / 2) us, at most 25 us */
				readers = c >> RWSEM_READER_SHIFT;
				rspin = (10 + readers / 2) * NSEC_PER_USEC;
				if (rspin > 25 * NSEC_PER_USEC)
					rspin = 25 * NSEC_PER_USEC;
				if (spun >= rspin) {
					store_relaxed(&sem->nonspinnable, 1);
					return false;
				}
			} else if ((!plat_simulated() && spun >= RWSEM_SPIN_NS) ||
				   !plat_task_on_cpu(load_relaxed(&sem->owner_task))) {
				/* the kernel spins while the owner runs; the host cannot see that */
				return false;
			}
		}
		if (plat_simulated() && (c & RWSEM_WRITER_LOCKED))
			plat_spin_wait(&sem->count, RWSEM_SPIN_CHECK_NS);
		else
			plat_cpu_relax();
	}
}

/*
 * rwsem_try_write_lock - a queued writer's attempt
 * Context: wait_lock held; @w on the list.
 * Return: true with the lock held and @w off the list; false if the lock is
 *         held (HANDOFF possibly set now) or HANDOFF belongs to another.
 */
static bool rwsem_try_write_lock(struct rwsem *sem, struct rwsem_waiter *w)
{
	struct rwsem_waiter *first = rwsem_first_waiter(sem);
	uint64_t count = load_relaxed(&sem->count), new, fw_after = 0;
	struct list_head *next_head;

	/* FIRST_WRITER once @w is gone: the new head's type. */
	next_head = first == w ? w->list.next : &first->list;
	if (next_head != &sem->wait_list &&
	    list_entry(next_head, struct rwsem_waiter, list)->type == RWSEM_WAITING_FOR_WRITE)
		fw_after = RWSEM_FLAG_FIRST_WRITER;

	do {
		bool has_handoff = count & RWSEM_FLAG_HANDOFF;

		/* Honour HANDOFF only if the first waiter set it. */
		if (has_handoff && first->handoff_set && w != first)
			return false;
		new = count;
		if ((count & RWSEM_LOCK_MASK) &&
		    !(has_handoff && first == w && !(count & RWSEM_WRITER_LOCKED) &&
		      vml_broken(VML_BROKEN_HANDOFF))) {
			if (has_handoff || plat_now_ns() <= w->timeout)
				return false;
			new |= RWSEM_FLAG_HANDOFF;
		} else {
			new |= RWSEM_WRITER_LOCKED;
			new &= ~(RWSEM_FLAG_HANDOFF | RWSEM_FLAG_FIRST_WRITER);
			new |= fw_after;
			if (sem->wait_list.next == sem->wait_list.prev)	/* singular */
				new &= ~RWSEM_FLAG_WAITERS;
		}
		/* Acquire pairs with the releases in up_read/up_write. */
	} while (!cas_acq_rel(&sem->count, &count, new));

	if (new & RWSEM_FLAG_HANDOFF) {
		first->handoff_set = true;
		rwsem_stat_inc(sem, handoff);
		return false;
	}
	list_del_init(&w->list);
	fetch_sub_relaxed(&sem->nr_waiters, 1);
	rwsem_set_writer_owner(sem);
	return true;
}

static int rwsem_down_write_slowpath(struct rwsem *sem, const struct vml_cancel *cancel)
{
	struct rwsem_waiter waiter;
	struct wake_q wq;
	uint64_t start;
	uint32_t seq;

	if (rwsem_optimistic_spin(sem)) {
		rwsem_set_writer_owner(sem);
		rwsem_stat_inc(sem, write_slow);
		rwsem_stat_inc(sem, write_spin);
		return 0;
	}

	wq.n = 0;
	waiter.type = RWSEM_WAITING_FOR_WRITE;
	waiter.handoff_set = false;
	waiter.tid = vml_trace_enabled() ? vml_gettid() : 0;
	store_relaxed(&waiter.futex, 0);
	start = plat_now_ns();
	waiter.timeout = rwsem_waiter_timeout(sem, start);

	wait_lock_lock(sem);
	list_add_tail(&waiter.list, &sem->wait_list);
	fetch_add_relaxed(&sem->nr_waiters, 1);
	if (rwsem_first_waiter(sem) != &waiter) {
		/* Behind others: if the lock is free, their head should run. */
		rwsem_cond_wake_waiter(sem, load_relaxed(&sem->count), &wq);
		if (wq.n) {
			pthread_mutex_unlock(&sem->wait_lock);
			wake_q_flush(&wq);
			wait_lock_lock(sem);
		}
	} else {
		/* acq_rel: pairs with the lock and unlock RMWs of count ("Ordering") */
		fetch_or_acq_rel(&sem->count, RWSEM_FLAG_WAITERS | RWSEM_FLAG_FIRST_WRITER);
	}
	rwsem_stat_inc(sem, write_wait);

	for (;;) {
		if (rwsem_try_write_lock(sem, &waiter))
			break;
		/* Sampled under wait_lock: a later mark_wake changes it. */
		seq = load_relaxed(&waiter.futex);
		pthread_mutex_unlock(&sem->wait_lock);
		while (load_relaxed(&waiter.futex) == seq) {
			if (cancel && vml_cancel_pending(cancel))
				goto out_nolock;
			futex_wait(&waiter.futex, seq, rwsem_wait_slice(cancel));
		}
		vml_trace_running();
		wait_lock_lock(sem);
		if (rwsem_try_write_lock(sem, &waiter))
			break;
		rwsem_stat_inc(sem, write_retry_fail);
	}
	pthread_mutex_unlock(&sem->wait_lock);
	rwsem_account_wait(sem, start);
	rwsem_stat_inc(sem, write_slow);
	return 0;

out_nolock:
	wait_lock_lock(sem);
	rwsem_del_wake_waiter(sem, &waiter, &wq);
	rwsem_account_wait(sem, start);
	rwsem_stat_inc(sem, killed);
	return -EINTR;
}

static int __down_write(struct rwsem *sem, const struct vml_cancel *cancel)
{
	uint64_t c = 0;

	plat_atomic_rmw(&sem->count);	/* an RMW of the count's line; the simulator may switch here */

	/* acquire: pairs with the releases in up_read/up_write */
	if (likely(cas_acquire(&sem->count, &c, RWSEM_WRITER_LOCKED))) {
		rwsem_set_writer_owner(sem);
		rwsem_stat_inc(sem, write_fast);
		return 0;
	}
	return rwsem_down_write_slowpath(sem, cancel);
}

void down_write(struct rwsem *sem)
{
	__down_write(sem, NULL);
}

int down_write_killable(struct rwsem *sem, const struct vml_cancel *cancel)
{
	return __down_write(sem, cancel);
}

bool down_write_trylock(struct rwsem *sem)
{
	uint64_t c = 0;

	plat_atomic_rmw(&sem->count);	/* an RMW of the count's line; the simulator may switch here */

	/* Strong CAS: a weak one could fail spuriously on a free lock. Pairs with up_read/up_write. */
	if (atomic_compare_exchange_strong_explicit(&sem->count, &c, RWSEM_WRITER_LOCKED,
						    memory_order_acquire, memory_order_relaxed)) {
		rwsem_set_writer_owner(sem);
		rwsem_stat_inc(sem, write_fast);
		return true;
	}
	rwsem_stat_inc(sem, trylock_fail);
	return false;
}

void up_write(struct rwsem *sem)
{
	uint64_t c;

	plat_atomic_rmw(&sem->count);	/* an RMW of the count's line; the simulator may switch here */

	vml_assert(rwsem_is_write_locked_by_me(sem));
	/* Cleared before the release, so the next writer's store wins. */
	store_relaxed(&sem->owner, 0);
	store_relaxed(&sem->owner_task, NULL);
	/* Release pairs with the next acquirer's acquire (fast paths, cmpxchg, mark_wake). */
	c = fetch_sub_release(&sem->count, RWSEM_WRITER_LOCKED);
	if (unlikely(c & RWSEM_FLAG_WAITERS))
		rwsem_wake(sem);
}

void downgrade_write(struct rwsem *sem)
{
	struct wake_q wq;
	uint64_t c;

	plat_atomic_rmw(&sem->count);	/* an RMW of the count's line; the simulator may switch here */

	vml_assert(rwsem_is_write_locked_by_me(sem));
	/* release: pairs with the acquire of the readers who share it now (fast path, grant) */
	c = fetch_add_release(&sem->count, RWSEM_READER_BIAS - RWSEM_WRITER_LOCKED);
	rwsem_set_reader_owned(sem);
	if (c & RWSEM_FLAG_WAITERS) {
		wq.n = 0;
		wait_lock_lock(sem);
		if (!list_empty(&sem->wait_list))
			rwsem_mark_wake(sem, RWSEM_WAKE_READ_OWNED, &wq);
		pthread_mutex_unlock(&sem->wait_lock);
		wake_q_flush(&wq);
	}
}

bool rwsem_is_contended(const struct rwsem *sem)
{
	return load_relaxed((_Atomic uint32_t *)&sem->nr_waiters) != 0;
}

bool rwsem_is_locked(const struct rwsem *sem)
{
	/* Transient biases of readers on their way to the slow path count too. */
	return load_relaxed((_Atomic uint64_t *)&sem->count) & RWSEM_LOCK_MASK;
}

bool rwsem_is_write_locked_by_me(const struct rwsem *sem)
{
	struct rwsem *s = (struct rwsem *)sem;

	/* owner is only ever set to our token by ourselves: relaxed is exact. */
	return (load_relaxed(&s->count) & RWSEM_WRITER_LOCKED) &&
	       load_relaxed(&s->owner) == rwsem_me();
}

void rwsem_stats_read(const struct rwsem *sem, struct rwsem_stats *out)
{
	struct rwsem_counters *c = (struct rwsem_counters *)&sem->stats;

	out->read_fast = load_relaxed(&c->read_fast);
	out->read_slow = load_relaxed(&c->read_slow);
	out->read_steal = load_relaxed(&c->read_steal);
	out->read_wait = load_relaxed(&c->read_wait);
	out->write_fast = load_relaxed(&c->write_fast);
	out->write_slow = load_relaxed(&c->write_slow);
	out->write_wait = load_relaxed(&c->write_wait);
	out->handoff = load_relaxed(&c->handoff);
	out->trylock_fail = load_relaxed(&c->trylock_fail);
	out->killed = load_relaxed(&c->killed);
	out->wait_ns_total = load_relaxed(&c->wait_ns_total);
	out->write_spin = load_relaxed(&c->write_spin);
	out->wake_writer = load_relaxed(&c->wake_writer);
	out->write_retry_fail = load_relaxed(&c->write_retry_fail);
	out->wake_reader = load_relaxed(&c->wake_reader);
	out->wait_ns_max = load_relaxed(&c->wait_ns_max);
}

void rwsem_set_config(struct rwsem *sem, const struct rwsem_config *cfg)
{
	vml_assert(load_relaxed(&sem->count) == 0);
	store_relaxed(&sem->steal, cfg ? (uint32_t)cfg->steal : RWSEM_STEAL_KERNEL);
	store_relaxed(&sem->handoff_ns, cfg && cfg->handoff_ns ? cfg->handoff_ns :
				       RWSEM_DEFAULT_HANDOFF_NS);
	store_relaxed(&sem->tick_ns, cfg ? cfg->tick_ns : 0);
}

void rwsem_init(struct rwsem *sem, const struct rwsem_config *cfg)
{
	pthread_mutexattr_t attr;
	struct rwsem_counters *c = &sem->stats;

	store_relaxed(&sem->count, 0);
	store_relaxed(&sem->owner, 0);
	store_relaxed(&sem->owner_task, NULL);
	store_relaxed(&sem->nr_waiters, 0);
	store_relaxed(&sem->nonspinnable, 0);
	INIT_LIST_HEAD(&sem->wait_list);
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&sem->wait_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	store_relaxed(&c->read_fast, 0);
	store_relaxed(&c->read_slow, 0);
	store_relaxed(&c->read_steal, 0);
	store_relaxed(&c->read_wait, 0);
	store_relaxed(&c->write_fast, 0);
	store_relaxed(&c->write_slow, 0);
	store_relaxed(&c->write_wait, 0);
	store_relaxed(&c->handoff, 0);
	store_relaxed(&c->trylock_fail, 0);
	store_relaxed(&c->killed, 0);
	store_relaxed(&c->wait_ns_total, 0);
	store_relaxed(&c->write_spin, 0);
	store_relaxed(&c->wake_writer, 0);
	store_relaxed(&c->write_retry_fail, 0);
	store_relaxed(&c->wake_reader, 0);
	store_relaxed(&c->wait_ns_max, 0);
	rwsem_set_config(sem, cfg);
}

void rwsem_destroy(struct rwsem *sem)
{
	if (!sem)
		return;
	VML_BUG_ON(load_relaxed(&sem->count) != 0);
	VML_BUG_ON(!list_empty(&sem->wait_list));
	pthread_mutex_destroy(&sem->wait_lock);
}
