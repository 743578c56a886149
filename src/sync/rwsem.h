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
 * See ../../docs/locking.md and REFERENCE.md section 5.
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
 *                                HANDOFF (default 4 ms).
 * down_read_nosteal() never steals past a queued waiter, whatever the policy.
 */
#ifndef VML_SYNC_RWSEM_H
#define VML_SYNC_RWSEM_H

#include <stdbool.h>
#include <stdint.h>

#include "sync/cancel.h"

enum rwsem_steal {
	RWSEM_STEAL_KERNEL = 0,
	RWSEM_STEAL_NOT_BEHIND_WRITER,
	RWSEM_STEAL_NEVER,
};

struct rwsem_config {
	enum rwsem_steal steal;
	uint64_t handoff_ns;		/* 0 selects the default, 4 ms */
};

#define RWSEM_DEFAULT_HANDOFF_NS (4ULL * 1000 * 1000)

/*
 * struct rwsem - embedded in its owner (struct mm as mmap_lock). The layout
 * is private to rwsem.c; every field names what protects it.
 * TODO(sync): define the fields (count word, owner, wait_lock, wait_list,
 * config, counters).
 */
struct rwsem;

/* Lock-event counters; monotonic, relaxed, for reports. */
struct rwsem_stats {
	uint64_t read_fast;		/* read acquired on the fast path */
	uint64_t read_slow;		/* read acquired after entering the slow path */
	uint64_t read_steal;		/* slow-path reader took the lock past a queued waiter */
	uint64_t read_wait;		/* reader slept in the wait queue */
	uint64_t write_fast;
	uint64_t write_slow;
	uint64_t write_wait;		/* writer slept in the wait queue */
	uint64_t handoff;		/* a waiter set HANDOFF */
	uint64_t trylock_fail;
	uint64_t killed;		/* a killable acquire returned -EINTR */
	uint64_t wait_ns_total;		/* summed time waiters spent queued */
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

#endif /* VML_SYNC_RWSEM_H */
