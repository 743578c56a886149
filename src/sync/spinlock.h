/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spinlock.h - a test-and-test-and-set spinlock on one 32-bit word, for the
 * short critical sections the kernel guards with spinlocks (page-table
 * locks). Userspace threads can be preempted while holding it, so waiters
 * yield the CPU after a short spin instead of burning their time slice.
 */
#ifndef VML_SYNC_SPINLOCK_H
#define VML_SYNC_SPINLOCK_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "sync/atomic.h"

static inline bool spin_trylock(_Atomic uint32_t *lock)
{
	uint32_t expected = 0;

	/* acquire: pairs with the release in spin_unlock() */
	return atomic_compare_exchange_strong_explicit(lock, &expected, 1, memory_order_acquire,
						       memory_order_relaxed);
}

static inline void spin_lock(_Atomic uint32_t *lock)
{
	unsigned int spins = 0;

	/* Ends: the holder's critical section is bounded and it never sleeps holding it. */
	while (!spin_trylock(lock)) {
		while (load_relaxed(lock)) {
			if (++spins < 128)
				cpu_relax();
			else
				sched_yield();
		}
	}
}

static inline void spin_unlock(_Atomic uint32_t *lock)
{
	store_release(lock, 0);
}

static inline bool spin_is_locked(_Atomic uint32_t *lock)
{
	return load_relaxed(lock) != 0;
}

#endif /* VML_SYNC_SPINLOCK_H */
