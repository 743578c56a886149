/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rwsem.h - a reader-writer semaphore on futexes with the Linux kernel's
 * policies (kernel/locking/rwsem.c), used as the mm's mmap_lock.
 *
 * Why not pthread_rwlock: the whole point of this project is to reproduce and
 * then cure the kernel's behaviour, which depends on details a pthread lock
 * does not have: reader optimistic lock stealing past a queued writer,
 * writer hand-off after a bounded wait (RWSEM_WAIT_TIMEOUT, 4 ms at HZ=250),
 * rwsem_is_contended() ("anyone queued"), trylock failing whenever anyone is
 * queued, killable acquires, and the 2026 "nosteal" reader acquire.
 * See ../../docs/locking.md and docs/kernel.md §5.
 *
 * Policies (struct rwsem_config):
 *   steal = RWSEM_STEAL_KERNEL   a reader in the slow path takes the lock at
 *                                once unless a writer holds it or HANDOFF is
 *                                set, even with a writer queued (mainline);
 *   steal = RWSEM_STEAL_NOT_BEHIND_WRITER
 *                                a reader never steals when the first waiter
 *                                is a writer (Peter Zijlstra's proposal);
 *   steal = RWSEM_STEAL_NEVER    readers never steal past any waiter.
 *   handoff_ns                   how long a queued waiter waits before it sets
 *                                HANDOFF (default 4 ms);
 *   tick_ns                      if set, that wait is counted in whole ticks
 *                                (jiffies) as the kernel does: 1-2 ticks at HZ=250.
 * down_read_nosteal() never steals past a queued waiter, whatever the policy.
 */
#ifndef VML_SYNC_RWSEM_H
#define VML_SYNC_RWSEM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sync/cancel.h"
#include "util/list.h"

enum rwsem_steal {
	RWSEM_STEAL_KERNEL = 0,
	RWSEM_STEAL_NOT_BEHIND_WRITER,
	RWSEM_STEAL_NEVER,
};

struct rwsem_config {
	enum rwsem_steal steal;
	uint64_t handoff_ns;		/* 0 selects the default, 4 ms */
	uint64_t tick_ns;		/* 0: hand-off exactly handoff_ns after queueing;
					 * else the kernel's jiffies: handoff_ns rounded up
					 * to ticks of tick_ns, counted from the tick the
					 * waiter queued in (T to T + 1 ticks) */
};

#define RWSEM_DEFAULT_HANDOFF_NS (4ULL * 1000 * 1000)

/*
 * The count word (struct rwsem.count). Exposed for white-box tests and
 * assertions only; see rwsem.c's essay and docs/locking.md for the states.
 *
 *   bit 0     RWSEM_WRITER_LOCKED      a writer holds the lock          [atomic]
 *   bit 1     RWSEM_FLAG_WAITERS       the wait list is non-empty       [wait_lock]
 *   bit 2     RWSEM_FLAG_HANDOFF       the first waiter must get it next [wait_lock]
 *   bit 3     RWSEM_FLAG_FIRST_WRITER  the first waiter is a writer     [wait_lock]
 *   bits 8-63 readers, RWSEM_READER_BIAS each: holders plus the transient
 *             biases of readers on their way into the slow path   [atomic]
 */
#define RWSEM_WRITER_LOCKED	(1ULL << 0)
#define RWSEM_FLAG_WAITERS	(1ULL << 1)
#define RWSEM_FLAG_HANDOFF	(1ULL << 2)
#define RWSEM_FLAG_FIRST_WRITER	(1ULL << 3)
#define RWSEM_READER_SHIFT	8
#define RWSEM_READER_BIAS	(1ULL << RWSEM_READER_SHIFT)
#define RWSEM_READER_MASK	(~(RWSEM_READER_BIAS - 1))
#define RWSEM_LOCK_MASK		(RWSEM_WRITER_LOCKED | RWSEM_READER_MASK)
#define RWSEM_READ_FAILED_MASK	(RWSEM_WRITER_LOCKED | RWSEM_FLAG_WAITERS | RWSEM_FLAG_HANDOFF)

/* struct rwsem_stats as relaxed atomics (see below for the meanings). */
struct rwsem_counters {
	_Atomic uint64_t read_fast, read_slow, read_steal, read_wait;
	_Atomic uint64_t write_fast, write_slow, write_wait;
	_Atomic uint64_t handoff, trylock_fail, killed, wait_ns_total;
	_Atomic uint64_t write_spin, wake_writer, write_retry_fail, wake_reader, wait_ns_max;
};

/*
 * struct rwsem - embedded in its owner (struct mm as mmap_lock); lives as
 * long as the owner and must be idle (unlocked, nobody queued) when
 * rwsem_destroy() runs. Fields are private to rwsem.c by convention.
 *
 * [atomic]     read and changed locklessly with atomics
 * [wait_lock]  changed only with wait_lock held; may be read locklessly
 * [cfg]        stored by rwsem_init/rwsem_set_config while idle; relaxed loads
 */
struct rwsem {
	_Atomic uint64_t count;		/* [atomic] see the table above */
	_Atomic uintptr_t owner;	/* [atomic] the writer's thread token, or
					 * RWSEM_OWNER_READER: a hint, stale after readers
					 * leave (as in the kernel) */
	_Atomic(struct sim_task *) owner_task;	/* [atomic] the writer as the simulated machine
					 * knows it (NULL on the host): a spinning writer
					 * stops once it is off its CPU, as the kernel's
					 * rwsem_spin_on_owner does */
	_Atomic uint32_t nr_waiters;	/* [wait_lock] wait_list length, for is_contended */
	_Atomic uint32_t nonspinnable;	/* [atomic] a writer's spin on readers timed out:
					 * writers queue at once until a writer owns the
					 * lock (the kernel's RWSEM_NONSPINNABLE bit) */
	_Atomic uint32_t steal;		/* [cfg] enum rwsem_steal */
	_Atomic uint64_t handoff_ns;	/* [cfg] */
	_Atomic uint64_t tick_ns;	/* [cfg] 0: hand-off counted in ns, else in ticks */
	pthread_mutex_t wait_lock;	/* protects wait_list, the flag bits, waiters */
	struct list_head wait_list;	/* [wait_lock] FIFO of struct rwsem_waiter (on stacks) */
	struct rwsem_counters stats;	/* [atomic] relaxed, never used to synchronise */
};

/* Lock-event counters; monotonic, relaxed, for reports. */
struct rwsem_stats {
	uint64_t read_fast;		/* read acquired on the fast path (incl. trylock) */
	uint64_t read_slow;		/* read acquired after entering the slow path */
	uint64_t read_steal;		/* slow-path reader took the lock past a queued waiter */
	uint64_t read_wait;		/* reader queued in the wait list */
	uint64_t write_fast;		/* fast path (incl. trylock) */
	uint64_t write_slow;
	uint64_t write_wait;		/* writer queued in the wait list */
	uint64_t handoff;		/* a waiter set HANDOFF */
	uint64_t trylock_fail;
	uint64_t killed;		/* a killable acquire returned -EINTR */
	uint64_t wait_ns_total;		/* summed time waiters spent queued */
	/* Beyond the first contract, for benchmarks: */
	uint64_t write_spin;		/* slow-path writer took it while spinning, unqueued */
	uint64_t wake_writer;		/* a queued writer was woken to (re)try */
	uint64_t write_retry_fail;	/* ...and failed again: a futile wakeup */
	uint64_t wake_reader;		/* queued readers granted the lock by a waker */
	uint64_t wait_ns_max;		/* longest single stay in the queue */
};

void rwsem_init(struct rwsem *sem, const struct rwsem_config *cfg);
void rwsem_destroy(struct rwsem *sem);
void rwsem_set_config(struct rwsem *sem, const struct rwsem_config *cfg); /* only while unlocked and idle */

void down_read(struct rwsem *sem);
int down_read_killable(struct rwsem *sem, const struct vml_cancel *cancel);	/* 0 or -EINTR */
void down_read_nosteal(struct rwsem *sem);
int down_read_killable_nosteal(struct rwsem *sem, const struct vml_cancel *cancel);
bool down_read_trylock(struct rwsem *sem);	/* fails if a writer holds it or anyone is queued */
void up_read(struct rwsem *sem);

void down_write(struct rwsem *sem);
int down_write_killable(struct rwsem *sem, const struct vml_cancel *cancel);	/* 0 or -EINTR */
bool down_write_trylock(struct rwsem *sem);
void up_write(struct rwsem *sem);
void downgrade_write(struct rwsem *sem);

/* Lockless heuristic: true if anyone is queued (the kernel's list_empty check). */
bool rwsem_is_contended(const struct rwsem *sem);
/* For assertions: held by anyone / held for write by the calling thread. */
bool rwsem_is_locked(const struct rwsem *sem);
bool rwsem_is_write_locked_by_me(const struct rwsem *sem);

void rwsem_stats_read(const struct rwsem *sem, struct rwsem_stats *out);

/*
 * rwsem_read_may_steal - the optimistic-steal rule of a slow-path reader
 * @count: the count the reader saw after adding its bias
 * Pure function, exposed so unit tests can check each policy on each state.
 * The lock applies the anti-starvation rule (reader-owned, other readers,
 * waiters: queue) before this one.
 */
bool rwsem_read_may_steal(uint64_t count, enum rwsem_steal policy, bool nosteal);

/*
 * rwsem_waiter_timeout - the last instant at which a waiter that queued at
 * @now may not set HANDOFF yet: @now + handoff_ns, or with tick_ns set the
 * kernel's jiffies rule (T to T + 1 ticks after queueing). Exposed for the
 * unit tests.
 */
uint64_t rwsem_waiter_timeout(const struct rwsem *sem, uint64_t now);

#endif /* VML_SYNC_RWSEM_H */
