/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lockdep.h - lock classes, and lock-order checking in debug builds
 * (-Dlockdep=true; on in the ASan and TSan builds of scripts/run-tests.sh).
 *
 * Every lock of vmalock belongs to a class. docs/locking.md's order tree
 * says which classes a thread may hold when it waits for a lock of another
 * class: only the class's ancestors in the tree (lockdep.c has the tree).
 * With lockdep on, each thread records the locks it holds, and an
 * acquisition that could wait while a lock that is not an ancestor is held
 * - two locks of one class unless annotated as nested, the same lock twice,
 * a sleeping lock inside an RCU read-side section - is reported: the held
 * locks, the acquisition and a backtrace go to stderr and the process
 * aborts (a test may install a report hook instead). So an inversion is
 * caught the first time both orders run, whether or not the threads ever
 * actually deadlock. Linux's lockdep does more (it learns the order from
 * what it sees, across threads); this checks a fixed, documented order.
 *
 * Which acquisitions are checked: every one that can wait. A trylock
 * (LOCKDEP_TRY) cannot close a cycle: it is recorded as held, not checked.
 * Taking a VMA's read lock never waits (it fails instead), so it is a
 * trylock; write-locking a VMA waits for its readers, and so do a detach
 * and mmap_lock and i_mmap_rwsem acquisitions.
 *
 * The VMA write locks a writer takes under mmap_lock(W) are held until
 * mmap_write_unlock() or mmap_write_downgrade() releases them all at once;
 * lockdep records them as one lock per mm (the mm's lock sequence), taken
 * by the first vma_start_write() of the hold (LOCKDEP_REENTER: the rest
 * are checked, not recorded again) and released by vma_end_write_all().
 */
#ifndef VML_SYNC_LOCKDEP_H
#define VML_SYNC_LOCKDEP_H

#include <stdbool.h>

#ifndef VML_LOCKDEP
#define VML_LOCKDEP 0
#endif

enum lock_class {
	LOCK_CLASS_NONE = 0,	/* not initialised: a bug under lockdep */
	LOCK_CLASS_MMAP,	/* mm->mmap_lock (rwsem) */
	LOCK_CLASS_VMA,		/* a VMA's read lock; the VMA write locks of one mmap_lock(W) hold */
	LOCK_CLASS_I_MMAP,	/* file->i_mmap_rwsem */
	LOCK_CLASS_PAGE_TABLE,	/* mm->page_table_lock */
	LOCK_CLASS_PTL,		/* pte_table->ptl */
	LOCK_CLASS_I_PAGES,	/* file->i_pages_lock */
	LOCK_CLASS_SWAP,	/* sys->swap_lock */
	LOCK_CLASS_LRU,		/* sys->lru_lock */
	LOCK_CLASS_KHUGEPAGED,	/* k->lock, the scanner's list */
	LOCK_CLASS_MAPCOUNT,	/* folio->mapcount_lock, a large folio's mm slots */
	LOCK_CLASS_ROLLUP,	/* mm->rollup_lock, the incremental rollup's volatile tables */
	LOCK_CLASS_NR,
};

/* lockdep_acquire() flags */
#define LOCKDEP_TRY	0x1	/* a trylock that succeeded: recorded, not checked */
#define LOCKDEP_READ	0x2	/* shared (rwsem or VMA read lock); for reports */
#define LOCKDEP_NESTED	0x4	/* a second lock of a class already held, in an order the
				 * caller guarantees (fork: the parent's mmap_lock, then
				 * the child's) */
#define LOCKDEP_REENTER	0x8	/* the thread may hold this lock already: check the
				 * acquisition, record it once (VMA write locks) */

#if VML_LOCKDEP

/*
 * lockdep_acquire - the calling thread is about to wait for (or, with
 * LOCKDEP_TRY, has just taken) @lock of @class: check it against the
 * locks it holds, then record it.
 * Context: call before waiting, so that a real deadlock is reported
 * rather than hung; an acquire that then fails (killable, cancelled)
 * calls lockdep_release().
 */
void lockdep_acquire(enum lock_class class, const void *lock, unsigned int flags);
/* The calling thread no longer holds @lock; reported if it did not hold it. */
void lockdep_release(enum lock_class class, const void *lock);
/* lockdep_release() if the calling thread holds @lock; nothing otherwise. */
void lockdep_release_if_held(enum lock_class class, const void *lock);
/* Does the calling thread hold @lock? (assertions: spin_assert_held) */
bool lockdep_is_held(const void *lock);
/* How many locks the calling thread holds. */
unsigned int lockdep_depth(void);

/*
 * A report hook, for tests that cause an inversion on purpose: called with
 * the report's text instead of aborting (the acquisition is then recorded
 * as usual). NULL restores the default (print and abort). Returns the old.
 */
typedef void (*lockdep_report_fn)(const char *report);
lockdep_report_fn lockdep_set_report(lockdep_report_fn fn);

#else

#define lockdep_acquire(class, lock, flags) ((void)0)
#define lockdep_release(class, lock) ((void)0)
#define lockdep_release_if_held(class, lock) ((void)0)

#endif /* VML_LOCKDEP */

#endif /* VML_SYNC_LOCKDEP_H */
