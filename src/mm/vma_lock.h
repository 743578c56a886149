/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vma_lock.h - the per-VMA lock (mm/mmap_lock.c, REFERENCE.md section 1):
 * readers take it under RCU without mmap_lock (faults, /proc readers); a
 * writer holding mmap_lock(W) write-locks every VMA it changes, and
 * releases them all at once with mmap_write_unlock() (mmap_lock.h).
 * The states of vm_refcnt and vm_lock_seq are tabled in mm_types.h.
 */
#ifndef VML_MM_VMA_LOCK_H
#define VML_MM_VMA_LOCK_H

#include "mm/mm_types.h"

/* ERR_PTR-style returns for the lock lookups. */
#define VMA_ERR_AGAIN ((struct vma *)(intptr_t)-11)	/* -EAGAIN: detached, look again */
#define VMA_ERR_INTR  ((struct vma *)(intptr_t)-4)	/* -EINTR */
#define VMA_ERR_NOENT ((struct vma *)(intptr_t)-2)	/* -ENOENT */
static inline bool vma_is_err(const struct vma *v)
{
	return (uintptr_t)v >= (uintptr_t)-4095;
}

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
 * Return: @vma read-locked; NULL (write-locked, reused, or too many readers:
 *         fall back to mmap_lock); or VMA_ERR_AGAIN (detached: look it up again).
 */
struct vma *vma_start_read(struct mm *mm, struct vma *vma);
/* Context: caller holds mmap_lock (read or write): no writer can exist. */
bool vma_start_read_locked(struct vma *vma);
void vma_end_read(struct vma *vma);

/*
 * lock_vma_under_rcu - find the VMA covering @addr and read-lock it
 * Context: no mmap_lock needed; takes and drops RCU itself.
 * Return: the locked VMA, or NULL: the caller falls back to mmap_read_lock().
 */
struct vma *lock_vma_under_rcu(struct mm *mm, unsigned long addr);

/*
 * lock_next_vma - read-lock the first VMA ending after @from_addr
 * Context: RCU held on entry and on return (every path); may take mmap_lock
 *          briefly as a fallback. @cur is the caller's cursor, reset as needed.
 * Return: the locked VMA, NULL at the end, VMA_ERR_INTR, or VMA_ERR_AGAIN.
 */
struct vma *lock_next_vma(struct mm *mm, struct rtree_cursor *cur, unsigned long from_addr,
			  const struct vml_cancel *cancel);

#endif /* VML_MM_VMA_LOCK_H */
