// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vma_lock.c - the per-VMA lock (mm/mmap_lock.c, docs/kernel.md §1).
 *
 * A VMA's read lock is a reference in vm_refcnt, taken with a bounded
 * increment that fails while a writer has set VMA_LOCK_OFFSET (it pushes the
 * count over VMA_REF_LIMIT) and fails with "look again" once the VMA is
 * detached (count 0). A VMA's write lock is the mm's current odd lock
 * sequence stored in vm_lock_seq; vma_start_write() sets the offset only
 * long enough to wait for the readers already inside to leave, stamps the
 * sequence, and clears the offset again. From then on it is the sequence
 * that turns readers away, until mmap_write_unlock() moves the mm's
 * sequence on and so releases every write-locked VMA at once.
 *
 * Ordering, in pairs:
 *  - reader: bounded increment (acquire) then re-read of mm_lock_seq
 *    (acquire); writer: stamp vm_lock_seq, then remove the offset with a
 *    release RMW. A reader whose increment follows the writer's removal sees
 *    the stamp and backs out.
 *  - writer end: seqcount_write_end (release) in vma_end_write_all pairs
 *    with the reader's acquire re-read: a reader that sees the new sequence
 *    sees everything the writer did before it.
 *  - reader exit: decrement with release pairs with the waiting writer's
 *    acquire load of vm_refcnt, so the reader's accesses happen before the
 *    writer's changes.
 *
 * A writer waits on mm->vma_writer_wait, one futex word per mm (only the
 * mmap_lock write holder ever waits): the last reader it waits for bumps
 * the word and wakes it. Readers touch only the mm after dropping their
 * reference, never the VMA, which may be gone by then.
 */
#include <errno.h>
#include <limits.h>

#include "mm/mmap_lock.h"
#include "mm/vma.h"
#include "mm/vma_lock.h"
#include "platform/platform.h"
#include "sync/futex.h"
#include "sync/trace_emit.h"
#include "util/compiler.h"
#include "util/debug.h"

void vma_lock_init(struct vma *vma)
{
	store_relaxed(&vma->vm_refcnt, 0);	/* detached until vma_mark_attached() */
	store_relaxed(&vma->vm_lock_seq, UINT_MAX);
}

static uint32_t mm_lock_seq_now(struct mm *mm)
{
	/* acquire: pairs with the release in seqcount_write_end() */
	return seqcount_raw_read(&mm->mm_lock_seq);
}

/* True if the count says "a writer is waiting and at most one reader is left". */
static bool vma_writer_only(uint32_t refcnt)
{
	return (refcnt & VMA_LOCK_OFFSET) && refcnt <= VMA_LOCK_OFFSET + 1;
}

static void vma_refcount_put(struct vma *vma)
{
	struct mm *mm = vma->vm_mm;	/* read before the VMA may go away */
	uint32_t newcnt;

	/* release: pairs with the acquire load in vma_wait_refcnt() */
	newcnt = fetch_sub_release(&vma->vm_refcnt, 1) - 1;
	if (newcnt && vma_writer_only(newcnt)) {
		/* release: pairs with the load_acquire of the word in vma_wait_refcnt() */
		fetch_add_release(&mm->vma_writer_wait, 1);
		vml_trace_wakeup(load_relaxed(&mm->vma_writer_tid));
		futex_wake(&mm->vma_writer_wait, INT_MAX);
	}
}

/* Context: mmap_lock(W). Sleep until vm_refcnt == @target. */
static void vma_wait_refcnt(struct vma *vma, uint32_t target)
{
	struct mm *mm = vma->vm_mm;
	bool traced = vml_trace_enabled();

	if (traced) {
		store_relaxed(&mm->vma_writer_tid, vml_gettid());
		vml_trace_vma_lock(TRACE_LOCK_START, mm, TRACE_WRITE);
	}

	/* Ends: readers hold the lock for a bounded time and new ones cannot enter. */
	for (;;) {
		/* acquire: pairs with the fetch_add_release of the word in vma_refcount_put() */
		uint32_t word = load_acquire(&mm->vma_writer_wait);

		/* acquire: pairs with the readers' release decrement in vma_refcount_put() */
		if (load_acquire(&vma->vm_refcnt) == target)
			break;
		futex_wait(&mm->vma_writer_wait, word, 0);
		if (traced)
			vml_trace_running();
	}
	if (traced) {
		/* The write lock excludes readers only by failing them: a zero-length hold. */
		vml_trace_vma_lock(TRACE_LOCK_ACQUIRED, mm, TRACE_WRITE | TRACE_SUCCESS);
		vml_trace_vma_lock(TRACE_LOCK_RELEASED, mm, TRACE_WRITE);
		store_relaxed(&mm->vma_writer_tid, 0);
	}
}

void vma_start_write(struct vma *vma)
{
	struct mm *mm = vma->vm_mm;
	uint32_t seq, old;

	mmap_assert_write_locked(mm);
	seq = load_relaxed(&mm->mm_lock_seq.sequence);
	if (load_relaxed(&vma->vm_lock_seq) == seq)
		return;		/* already write-locked in this section */
	/*
	 * All the VMA write locks of this mmap_lock(W) hold count as one lock
	 * (lockdep.h); another mm's (fork's child) nest as their mmap_locks do.
	 */
	lockdep_acquire(LOCK_CLASS_VMA, &mm->mm_lock_seq, LOCKDEP_REENTER | LOCKDEP_NESTED);

	/* Exclude readers unless detached (nothing to wait for then). */
	old = load_relaxed(&vma->vm_refcnt);
	do {
		if (old == 0)
			break;
	/* acq_rel: pairs with the readers' release decrements and their cas_acquire increments */
	} while (!cas_acq_rel(&vma->vm_refcnt, &old, old + VMA_LOCK_OFFSET));
	if (old)
		vma_wait_refcnt(vma, VMA_LOCK_OFFSET + 1);

	store_relaxed(&vma->vm_lock_seq, seq);
	/*
	 * release: pairs with the cas_acquire in vma_start_read(): a reader that
	 * increments after this sees the stamp above and backs out.
	 */
	if (old)
		fetch_sub_release(&vma->vm_refcnt, VMA_LOCK_OFFSET);
}

bool vma_is_write_locked(struct vma *vma)
{
	return load_relaxed(&vma->vm_lock_seq) == load_relaxed(&vma->vm_mm->mm_lock_seq.sequence);
}

void vma_assert_write_locked(struct vma *vma)
{
	vml_assert(vma_is_write_locked(vma));
}

void vma_assert_locked(struct vma *vma)
{
	/* Read-locked (a reference beyond the attach one) or write-locked, or mmap_lock held. */
	vml_assert(load_relaxed(&vma->vm_refcnt) > 1 || vma_is_write_locked(vma) ||
		   rwsem_is_locked(&vma->vm_mm->mmap_lock));
}

void vma_mark_attached(struct vma *vma)
{
	vma_assert_write_locked(vma);
	vml_assert(load_relaxed(&vma->vm_refcnt) == 0);
	/* release: pairs with the cas_acquire in vma_start_read(): the reader sees the VMA's fields */
	store_release(&vma->vm_refcnt, 1);
}

bool vma_is_attached(struct vma *vma)
{
	return load_relaxed(&vma->vm_refcnt) != 0;
}

void vma_mark_detached(struct vma *vma)
{
	vma_assert_write_locked(vma);
	/* May wait for transient readers, like vma_start_write (same lockdep record). */
	lockdep_acquire(LOCK_CLASS_VMA, &vma->vm_mm->mm_lock_seq, LOCKDEP_REENTER | LOCKDEP_NESTED);
	/* release: pairs with the acquire increments of readers, as every change of vm_refcnt */
	if (fetch_sub_release(&vma->vm_refcnt, 1) == 1)
		return;
	/*
	 * Transient readers incremented the count and will see the write lock
	 * and back out; wait for them so nobody holds a reference to a VMA
	 * that is about to be freed.
	 */
	/* acq_rel: pairs with the transient readers' release decrements and cas_acquire increments */
	fetch_add_acq_rel(&vma->vm_refcnt, VMA_LOCK_OFFSET);
	vma_wait_refcnt(vma, VMA_LOCK_OFFSET);
	/* release: pairs with the acquire increments of readers, as above */
	fetch_sub_release(&vma->vm_refcnt, VMA_LOCK_OFFSET);
}

int vma_start_read(struct mm *mm, struct vma *vma)
{
	uint32_t old;

	vml_assert(vml_rcu_read_held());
	plat_atomic_rmw(&vma->vm_refcnt);	/* an RMW of its line; the simulator may switch here */
	/* Cheap pre-check; false "locked" answers are fine, the recheck below decides. */
	if (load_relaxed(&vma->vm_lock_seq) == load_relaxed(&mm->mm_lock_seq.sequence)) {
		vml_rcu_read_unlock();
		return -EBUSY;
	}

	old = load_relaxed(&vma->vm_refcnt);
	do {
		if (old == 0) {
			vml_rcu_read_unlock();
			return -EAGAIN;
		}
		if (old >= VMA_REF_LIMIT) {	/* a writer is excluding readers, or overflow */
			vml_rcu_read_unlock();
			return -EBUSY;
		}
	/* acquire: pairs with the releases in vma_mark_attached() and vma_start_write() */
	} while (!cas_acquire(&vma->vm_refcnt, &old, old + 1));

	/* VMAs are never reused for another mm here, but the check is cheap. */
	if (unlikely(vma->vm_mm != mm))
		goto fail;
	/* acquire re-read: pairs with the release in vma_end_write_all() */
	if (load_relaxed(&vma->vm_lock_seq) == mm_lock_seq_now(mm))
		goto fail;
	/* Never waits (it fails instead): a trylock for lockdep. */
	lockdep_acquire(LOCK_CLASS_VMA, vma, LOCKDEP_READ | LOCKDEP_TRY);
	vml_trace_vma_lock(TRACE_LOCK_ACQUIRED, mm, TRACE_SUCCESS);
	return 0;

fail:
	vma_refcount_put(vma);
	vml_rcu_read_unlock();
	return -EBUSY;
}

bool vma_start_read_locked(struct vma *vma)
{
	uint32_t old;

	mmap_assert_locked(vma->vm_mm);
	old = load_relaxed(&vma->vm_refcnt);
	do {
		if (old == 0 || old >= VMA_REF_LIMIT)
			return false;
	/* acquire: pairs with the releases in vma_mark_attached() and vma_start_write() */
	} while (!cas_acquire(&vma->vm_refcnt, &old, old + 1));
	lockdep_acquire(LOCK_CLASS_VMA, vma, LOCKDEP_READ | LOCKDEP_TRY);
	vml_trace_vma_lock(TRACE_LOCK_ACQUIRED, vma->vm_mm, TRACE_SUCCESS);
	return true;
}

void vma_end_read(struct vma *vma)
{
	plat_atomic_rmw(&vma->vm_refcnt);	/* an RMW of its line; the simulator may switch here */
	lockdep_release(LOCK_CLASS_VMA, vma);
	vml_trace_vma_lock(TRACE_LOCK_RELEASED, vma->vm_mm, 0);
	vma_refcount_put(vma);
}

struct vma *lock_vma_under_rcu(struct mm *mm, unsigned long addr)
{
	struct vma *vma;
	int err;

	/* Ends: each retry means a writer detached the VMA we found; it moved on. */
	for (;;) {
		vml_rcu_read_lock();
		vma = rtree_find(&mm->mm_mt, addr, NULL);
		if (!vma) {
			vml_rcu_read_unlock();
			stat_inc(&mm->stats.vma_lock_abort);
			return NULL;
		}
		err = vma_start_read(mm, vma);
		if (err == -EAGAIN) {
			stat_inc(&mm->stats.vma_lock_miss);
			continue;
		}
		if (err) {
			stat_inc(&mm->stats.vma_lock_abort);
			return NULL;
		}
		vml_rcu_read_unlock();
		if (addr < vma->vm_start || addr >= vma->vm_end) {
			vma_end_read(vma);
			stat_inc(&mm->stats.vma_lock_abort);
			return NULL;
		}
		stat_inc(&mm->stats.vma_lock_success);
		return vma;
	}
}

/*
 * Fallback for lock_next_vma: hold mmap_lock only long enough to lock one VMA.
 * Return: 0 with the VMA (or NULL: none) in *@out, -EINTR, or -EAGAIN (overflow).
 */
static int lock_next_vma_under_mmap_lock(struct mm *mm, unsigned long from_addr,
					 const struct vml_cancel *cancel, struct vma **out)
{
	struct vma *vma;
	int err = 0;

	/* The 2026 series re-takes it without stealing (seed 003 patch 4). */
	if (mmap_retake_nosteal(mm) ? mmap_read_lock_killable_nosteal(mm, cancel) :
				      mmap_read_lock_killable(mm, cancel))
		return -EINTR;
	stat_inc(&mm->stats.proc_mmap_fallbacks);
	vma = rtree_find_next(&mm->mm_mt, from_addr, NULL);	/* find_vma */
	if (vma && !vma_start_read_locked(vma))
		err = -EAGAIN;	/* reference overflow */
	mmap_read_unlock(mm);
	if (!err)
		*out = vma;
	return err;
}

/*
 * May lock_next_vma() return @vma, read-locked, after the gap
 * [@from_addr, @vma->vm_start)? (docs/findings/maps-fake-gaps.md) @seq was
 * read, @mm_unlocked: even, before @vma was found with the caller's
 * iterator, which may have been positioned in a tree a writer has replaced
 * since (case 1).
 *
 * GAP_CHECK_6_18: only if a writer held or took mmap_lock during this call,
 * look up again and refuse if that finds another VMA - a VMA shrunk from
 * the front while another was installed in front of it. Misses case 1 (the
 * writer left before this call) and case 2 (the tree itself is inside the
 * call).
 * GAP_CHECK_RECHECK: always look up again from a fresh root and refuse if
 * that finds another VMA. Fixes case 1; case 2 would need the writer not to
 * publish its hole.
 * GAP_CHECK_STRICT: the proof of the findings' reader-side fix: no writer
 * was inside at @seq, the fresh lookup finds @vma, and no writer entered
 * before it ended. The lookup then saw the tree as a write section left it,
 * nothing between @from_addr and @vma: a state between two system calls,
 * in which @vma is the VMA we locked. A gap seen while a writer holds
 * mmap_lock is never accepted, even if the lookup agrees (case 2).
 * Context: RCU held, @vma read-locked. Return: true to accept the gap.
 */
static bool gap_accepted(struct mm *mm, struct vma *vma, unsigned long from_addr,
			 enum gap_check check, bool mm_unlocked, uint32_t seq)
{
	switch (check) {
	case GAP_CHECK_6_18:
		if (mm_unlocked && !mmap_lock_speculate_retry(mm, seq))
			return true;
		return rtree_find_next(&mm->mm_mt, from_addr, NULL) == vma;
	case GAP_CHECK_RECHECK:
		return rtree_find_next(&mm->mm_mt, from_addr, NULL) == vma;
	case GAP_CHECK_STRICT:
		return mm_unlocked && rtree_find_next(&mm->mm_mt, from_addr, NULL) == vma &&
		       !mmap_lock_speculate_retry(mm, seq);
	}
	return false;
}

int lock_next_vma(struct mm *mm, struct vma_iterator *vmi, unsigned long from_addr,
		  enum gap_check check, const struct vml_cancel *cancel, struct vma **out)
{
	struct vma *vma;
	uint32_t seq;
	bool mm_unlocked;
	int err;

	vml_assert(vml_rcu_read_held());
	/* Ends: every retry follows a detach by a writer that has moved on. */
	for (;;) {
		mm_unlocked = mmap_lock_speculate_try_begin(mm, &seq);
		vma = vma_next(vmi);
		if (!vma) {
			*out = NULL;
			return 0;
		}

		err = vma_start_read(mm, vma);
		if (err == -EAGAIN) {
			stat_inc(&mm->stats.vma_lock_miss);
			vml_rcu_read_lock();
			vma_iter_set(vmi, from_addr);
			continue;
		}
		if (err) {
			if (vml_broken(VML_BROKEN_SKIP_FALLBACK)) {
				/* Deliberately wrong: report as if the VMA were not there. */
				vml_rcu_read_lock();
				vma_iter_invalidate(vmi);	/* still after it: at its end */
				continue;
			}
			goto fallback;		/* RCU already dropped */
		}

		/* The VMA shrank behind us: it no longer follows from_addr. */
		if (from_addr >= vma->vm_end) {
			vml_rcu_read_unlock();
			vma_end_read(vma);
			goto fallback;
		}
		/* A gap before the VMA: accept it, or fall back to mmap_lock. */
		if (from_addr < vma->vm_start &&
		    !gap_accepted(mm, vma, from_addr, check, mm_unlocked, seq)) {
			vml_rcu_read_unlock();
			vma_end_read(vma);
			goto fallback;
		}
		stat_inc(&mm->stats.vma_lock_success);
		*out = vma;
		return 0;
	}

fallback:
	stat_inc(&mm->stats.vma_lock_abort);
	vma = NULL;
	err = lock_next_vma_under_mmap_lock(mm, from_addr, cancel, &vma);
	vml_rcu_read_lock();
	/* A fresh RCU section: the iterator goes on after what was locked, or from @from_addr. */
	vma_iter_set(vmi, vma ? vma->vm_end : from_addr);
	if (err)
		return err;
	*out = vma;
	return 0;
}
