/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spinlock.h - spinlock_t, a test-and-test-and-set lock on one 32-bit word,
 * for the short critical sections the kernel guards with spinlocks
 * (page-table locks, the page cache, swap, the LRU batches, the scanner's
 * list). Userspace threads can be preempted while holding one, so waiters
 * yield the CPU after a short spin instead of burning their time slice.
 *
 * Every spinlock has a lock class (lockdep.h), given by spin_lock_init()
 * and checked against the lock order when the build has -Dlockdep=true; a
 * zero-filled spinlock_t is unlocked, but must still be initialised.
 * spin_assert_held() checks that the calling thread holds the lock under
 * lockdep, and only that someone holds it otherwise.
 */
#ifndef VML_SYNC_SPINLOCK_H
#define VML_SYNC_SPINLOCK_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "platform/platform.h"
#include "sync/atomic.h"
#include "sync/lockdep.h"
#include "util/compiler.h"

typedef struct spinlock {
	_Atomic uint32_t locked;	/* [atomic] 0 free, 1 held */
#if VML_LOCKDEP
	enum lock_class class;		/* [I] set by spin_lock_init() */
#endif
} spinlock_t;

static inline void spin_lock_init(spinlock_t *lock, enum lock_class class)
{
	store_relaxed(&lock->locked, 0);
#if VML_LOCKDEP
	lock->class = class;
#else
	(void)class;
#endif
}

static inline bool __spin_trylock(spinlock_t *lock)
{
	uint32_t expected = 0;

	/* acquire: pairs with the release in spin_unlock() */
	return atomic_compare_exchange_strong_explicit(&lock->locked, &expected, 1,
						       memory_order_acquire, memory_order_relaxed);
}

static inline bool spin_trylock(spinlock_t *lock)
{
	if (!__spin_trylock(lock))
		return false;
	lockdep_acquire(lock->class, lock, LOCKDEP_TRY);
	return true;
}

static inline void spin_lock(spinlock_t *lock)
{
	unsigned int spins = 0;

	lockdep_acquire(lock->class, lock, 0);
	/* Ends: the holder's critical section is bounded and it never sleeps holding it. */
	while (!__spin_trylock(lock)) {
		while (load_relaxed(&lock->locked)) {
			if (++spins < 128)
				plat_cpu_relax();
			else
				plat_yield();
		}
	}
}

static inline void spin_unlock(spinlock_t *lock)
{
	lockdep_release(lock->class, lock);
	/* release: pairs with the acquire in spin_trylock(): the next holder sees our stores */
	store_release(&lock->locked, 0);
}

static inline bool spin_is_locked(spinlock_t *lock)
{
	return load_relaxed(&lock->locked) != 0;
}

/* Context: the caller claims to hold @lock. */
static inline void spin_assert_held(spinlock_t *lock)
{
#if VML_LOCKDEP
	VML_BUG_ON(!lockdep_is_held(lock));
#else
	vml_assert(spin_is_locked(lock));
#endif
}

#endif /* VML_SYNC_SPINLOCK_H */
