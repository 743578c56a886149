/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vma_lock.h - the per-VMA lock (mm/mmap_lock.c, docs/kernel.md §1):
 * readers take it under RCU without mmap_lock (faults, /proc readers); a
 * writer holding mmap_lock(W) write-locks every VMA it changes, and
 * releases them all at once with mmap_write_unlock() (mmap_lock.h).
 * The states of vm_refcnt and vm_lock_seq are tabled in mm_types.h.
 */
#ifndef VML_MM_VMA_LOCK_H
#define VML_MM_VMA_LOCK_H

#include "mm/vma.h"

void vma_lock_init(struct vma *vma);
/* Context: mmap_lock(W). Waits for the VMA's readers to leave. */
void vma_start_write(struct vma *vma);
bool vma_is_write_locked(struct vma *vma);
void vma_assert_write_locked(struct vma *vma);
void vma_assert_locked(struct vma *vma);
void vma_mark_attached(struct vma *vma);
void vma_mark_detached(struct vma *vma);
bool vma_is_attached(struct vma *vma);

/*
 * vma_start_read - read-lock @vma found under RCU in @mm's tree
 * Context: RCU read lock held on entry. On success RCU is still held; on
 *          any failure RCU has been released (the 6.18 contract).
 * Return: 0: @vma is read-locked; -EAGAIN: it is detached, look it up
 *         again; -EBUSY: write-locked, reused or too many readers - fall
 *         back to mmap_lock.
 */
int vma_start_read(struct mm *mm, struct vma *vma);
/* Context: caller holds mmap_lock (read or write): no writer can exist. */
bool vma_start_read_locked(struct vma *vma);
void vma_end_read(struct vma *vma);

/*
 * lock_vma_under_rcu - find the VMA covering @addr and read-lock it
 * Context: no mmap_lock needed; takes and drops RCU itself.
 * Return: the locked VMA, or NULL: the caller falls back to mmap_read_lock().
 */
struct vma *lock_vma_under_rcu(struct mm *mm, unsigned long addr);

/* How lock_next_vma() checks a gap before the VMA it found (vma_lock.c, gap_accepted). */
enum gap_check {
	GAP_CHECK_6_18,		/* mainline: look again only if a writer was active meanwhile */
	GAP_CHECK_RECHECK,	/* look again from a fresh root every time (fixes case 1) */
	GAP_CHECK_STRICT,	/* prove it with no writer inside, else fall back (cases 1, 2) */
};

/*
 * lock_next_vma - read-lock the first VMA ending after @from_addr
 * @vmi: the caller's iterator, at @from_addr (or just past a VMA ending
 *       there) in the current RCU section; lock_next_vma() moves it past
 *       the VMA it returns, and sets it again whenever it had to leave RCU.
 * @check: how a gap before the VMA found is checked (enum gap_check): 6.18's
 *       way, which can return a VMA after a gap that never existed
 *       (docs/findings/maps-fake-gaps.md), or one of the fixes.
 * Context: RCU held on entry and on return (every path); may take mmap_lock
 *          briefly as a fallback (killable with @cancel).
 * Return: 0 with the read-locked VMA in *@out, or NULL there at the end;
 *         -EINTR (cancelled); -EAGAIN (its reference count would overflow:
 *         the caller falls back to mmap_lock). *@out is set only on success.
 */
int lock_next_vma(struct mm *mm, struct vma_iterator *vmi, unsigned long from_addr,
		  enum gap_check check, const struct vml_cancel *cancel, struct vma **out);

#endif /* VML_MM_VMA_LOCK_H */
