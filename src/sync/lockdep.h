/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lockdep.h - lock classes, and (with -Dlockdep=true) lock-order checking.
 *
 * Every lock of vmalock belongs to one class; docs/locking.md's order tree
 * says which classes may be held when one of another is taken.
 */
#ifndef VML_SYNC_LOCKDEP_H
#define VML_SYNC_LOCKDEP_H

#include <stdbool.h>

#ifndef VML_LOCKDEP
#define VML_LOCKDEP 0
#endif

enum lock_class {
	LOCK_CLASS_NONE = 0,	/* not initialised */
	LOCK_CLASS_MMAP,	/* mm->mmap_lock (rwsem) */
	LOCK_CLASS_VMA,		/* a VMA's read lock; the VMA write locks of one mmap_lock(W) hold */
	LOCK_CLASS_I_MMAP,	/* file->i_mmap_rwsem */
	LOCK_CLASS_PAGE_TABLE,	/* mm->page_table_lock */
	LOCK_CLASS_PTL,		/* pte_table->ptl */
	LOCK_CLASS_I_PAGES,	/* file->i_pages_lock */
	LOCK_CLASS_SWAP,	/* sys->swap_lock */
	LOCK_CLASS_LRU,		/* sys->lru_lock */
	LOCK_CLASS_KHUGEPAGED,	/* k->lock, the scanner's list */
	LOCK_CLASS_NR,
};

/* lockdep_acquire() flags */
#define LOCKDEP_TRY	0x1	/* a trylock: never waits, so it is recorded but not checked */

#define lockdep_acquire(class, lock, flags) ((void)0)
#define lockdep_release(class, lock) ((void)0)

#endif /* VML_SYNC_LOCKDEP_H */
