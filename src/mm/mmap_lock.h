/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mmap_lock.h - the address-space lock (include/linux/mmap_lock.h).
 *
 * mmap_lock is an rwsem plus the mm's lock sequence: taking it for write
 * makes mm_lock_seq odd, and releasing (or downgrading) it moves the
 * sequence on, which releases every VMA write lock taken in between at once
 * (vma_end_write_all, docs/kernel.md §1).
 */
#ifndef VML_MM_MMAP_LOCK_H
#define VML_MM_MMAP_LOCK_H

#include "mm/mm_types.h"
#include "sync/lockdep.h"
#include "sync/trace_emit.h"
#include "util/compiler.h"

/*
 * The kernel's mmap_lock tracepoints (sync/trace_emit.h), at the same places:
 * start_locking before a blocking acquire, acquire_returned after every
 * acquire (trylocks: only that one), released before the release.
 */
static inline void mmap_trace_start(struct mm *mm, bool write)
{
	vml_trace_lock(TRACE_LOCK_START, mm, write ? TRACE_WRITE : 0);
}

static inline void mmap_trace_acquired(struct mm *mm, bool write, bool success)
{
	vml_trace_lock(TRACE_LOCK_ACQUIRED, mm,
		       (write ? TRACE_WRITE : 0) | (success ? TRACE_SUCCESS : 0));
}

static inline void mmap_trace_released(struct mm *mm, bool write)
{
	vml_trace_lock(TRACE_LOCK_RELEASED, mm, write ? TRACE_WRITE : 0);
}

static inline void mmap_assert_locked(struct mm *mm)
{
	vml_assert(rwsem_is_locked(&mm->mmap_lock));
}

static inline void mmap_assert_write_locked(struct mm *mm)
{
	vml_assert(rwsem_is_write_locked_by_me(&mm->mmap_lock));
}

/*
 * Every acquisition goes through lockdep (a no-op unless -Dlockdep=true):
 * checked before it may wait, recorded while held (sync/lockdep.h).
 *
 * mmap_read_lock_common - the blocking reader acquires below, in one body:
 * @cancel NULL waits for good; @nosteal never steals the lock past a queued
 * writer (2026 proposal).
 * Return: 0 or -EINTR (cancelled).
 */
static inline int mmap_read_lock_common(struct mm *mm, const struct vml_cancel *cancel,
					bool nosteal)
{
	int err;

	lockdep_acquire(LOCK_CLASS_MMAP, &mm->mmap_lock, LOCKDEP_READ);
	mmap_trace_start(mm, false);
	if (nosteal)
		err = down_read_killable_nosteal(&mm->mmap_lock, cancel);
	else
		err = down_read_killable(&mm->mmap_lock, cancel);
	mmap_trace_acquired(mm, false, !err);
	if (err) {
		lockdep_release(LOCK_CLASS_MMAP, &mm->mmap_lock);
		return err;
	}
	stat_inc(&mm->stats.mmap_read_locks);
	return 0;
}

static inline void mmap_read_lock(struct mm *mm)
{
	mmap_read_lock_common(mm, NULL, false);
}

/* Return: 0 or -EINTR (cancelled). */
static inline int mmap_read_lock_killable(struct mm *mm, const struct vml_cancel *cancel)
{
	return mmap_read_lock_common(mm, cancel, false);
}

/* A reader acquire that never steals the lock past a queued writer (2026 proposal). */
static inline void mmap_read_lock_nosteal(struct mm *mm)
{
	mmap_read_lock_common(mm, NULL, true);
}

static inline int mmap_read_lock_killable_nosteal(struct mm *mm, const struct vml_cancel *cancel)
{
	return mmap_read_lock_common(mm, cancel, true);
}

/* Fails if a writer holds the lock or anyone is queued (down_read_trylock). */
static inline bool mmap_read_trylock(struct mm *mm)
{
	bool ok = down_read_trylock(&mm->mmap_lock);

	mmap_trace_acquired(mm, false, ok);
	if (ok) {
		lockdep_acquire(LOCK_CLASS_MMAP, &mm->mmap_lock, LOCKDEP_READ | LOCKDEP_TRY);
		stat_inc(&mm->stats.mmap_read_locks);
	}
	return ok;
}

static inline void mmap_read_unlock(struct mm *mm)
{
	lockdep_release(LOCK_CLASS_MMAP, &mm->mmap_lock);
	mmap_trace_released(mm, false);
	up_read(&mm->mmap_lock);
}

static inline void mmap_write_lock(struct mm *mm)
{
	lockdep_acquire(LOCK_CLASS_MMAP, &mm->mmap_lock, 0);
	mmap_trace_start(mm, true);
	down_write(&mm->mmap_lock);
	mmap_trace_acquired(mm, true, true);
	seqcount_write_begin(&mm->mm_lock_seq);
	stat_inc(&mm->stats.mmap_write_locks);
}

/*
 * mmap_write_lock_nested - write-lock a second mm while holding another's
 * mmap_lock(W): fork locks the parent, then the new child, which nobody
 * else can reach yet (the kernel's SINGLE_DEPTH_NESTING).
 */
static inline void mmap_write_lock_nested(struct mm *mm)
{
	lockdep_acquire(LOCK_CLASS_MMAP, &mm->mmap_lock, LOCKDEP_NESTED);
	mmap_trace_start(mm, true);
	down_write(&mm->mmap_lock);
	mmap_trace_acquired(mm, true, true);
	seqcount_write_begin(&mm->mm_lock_seq);
	stat_inc(&mm->stats.mmap_write_locks);
}

static inline int mmap_write_lock_killable(struct mm *mm, const struct vml_cancel *cancel)
{
	int err;

	lockdep_acquire(LOCK_CLASS_MMAP, &mm->mmap_lock, 0);
	mmap_trace_start(mm, true);
	err = down_write_killable(&mm->mmap_lock, cancel);
	mmap_trace_acquired(mm, true, !err);
	if (err) {
		lockdep_release(LOCK_CLASS_MMAP, &mm->mmap_lock);
		return err;
	}
	seqcount_write_begin(&mm->mm_lock_seq);
	stat_inc(&mm->stats.mmap_write_locks);
	return 0;
}

/*
 * vma_end_write_all - release every VMA write lock of this write section.
 * The release increment pairs with the acquire re-read of mm_lock_seq in
 * vma_start_read(): a reader that sees the new value also sees every store
 * the writer made before it.
 */
static inline void vma_end_write_all(struct mm *mm)
{
	mmap_assert_write_locked(mm);
	lockdep_release_if_held(LOCK_CLASS_VMA, &mm->mm_lock_seq);
	seqcount_write_end(&mm->mm_lock_seq);
}

static inline void mmap_write_unlock(struct mm *mm)
{
	vma_end_write_all(mm);
	lockdep_release(LOCK_CLASS_MMAP, &mm->mmap_lock);
	mmap_trace_released(mm, true);
	up_write(&mm->mmap_lock);
}

/* Still held, for read now: lockdep's record of it stays. */
static inline void mmap_write_downgrade(struct mm *mm)
{
	mmap_trace_acquired(mm, false, true);	/* as the kernel traces a downgrade */
	vma_end_write_all(mm);
	downgrade_write(&mm->mmap_lock);
}

/*
 * Does a reader that dropped mmap_lock for a queued writer re-take it without
 * stealing it back (the 2026 series: smaps_rollup's resume, lock_next_vma's
 * fallback, khugepaged's batches)? Only under VML_STEAL_NOSTEAL_RETAKE.
 */
static inline bool mmap_retake_nosteal(struct mm *mm)
{
	return mm->sys->cfg.mmap_lock_steal == VML_STEAL_NOSTEAL_RETAKE;
}

/* Lockless heuristic: is anyone queued on mmap_lock? */
static inline bool mmap_lock_is_contended(struct mm *mm)
{
	return rwsem_is_contended(&mm->mmap_lock);
}

/* Speculation on the mm: fails while mmap_lock is write-held. */
static inline bool mmap_lock_speculate_try_begin(struct mm *mm, uint32_t *seq)
{
	return seqcount_try_begin(&mm->mm_lock_seq, seq);
}

static inline bool mmap_lock_speculate_retry(struct mm *mm, uint32_t seq)
{
	return seqcount_retry(&mm->mm_lock_seq, seq);
}

#endif /* VML_MM_MMAP_LOCK_H */
