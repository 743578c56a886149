/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vma.h - VMA objects and the per-VMA lock (REFERENCE.md section 1).
 */
#ifndef VML_MM_VMA_H
#define VML_MM_VMA_H

#include "mm/mm_types.h"

/* ERR_PTR-style returns for the lock lookups. */
#define VMA_ERR_AGAIN ((struct vma *)(intptr_t)-11)	/* -EAGAIN: detached, look again */
#define VMA_ERR_INTR  ((struct vma *)(intptr_t)-4)	/* -EINTR */
#define VMA_ERR_NOENT ((struct vma *)(intptr_t)-2)	/* -ENOENT */
static inline bool vma_is_err(const struct vma *v)
{
	return (uintptr_t)v >= (uintptr_t)-4095;
}

/* Allocation and lifetime (vma.c). */
struct vma *vma_alloc(struct mm *mm);
/* A detached copy of @src (same fields, new references); lock state fresh. */
struct vma *vma_dup(const struct vma *src);
/* Free a VMA that was never attached (no grace period needed). */
void vma_free_unpublished(struct vma *vma);
/* Free a detached VMA after an RCU grace period. */
void vma_free_rcu(struct vma *vma);

struct anon_vma *anon_vma_alloc(void);
void anon_vma_get(struct anon_vma *av);
void anon_vma_put(struct anon_vma *av);
struct anon_vma_name *anon_vma_name_alloc(const char *name);
void anon_vma_name_get(struct anon_vma_name *n);
void anon_vma_name_put(struct anon_vma_name *n);
bool anon_vma_name_eq(const struct anon_vma_name *a, const struct anon_vma_name *b);

static inline struct anon_vma *vma_anon_vma(const struct vma *vma)
{
	/* acquire: pairs with the store_release in anon_vma_prepare() */
	return atomic_load_explicit(&((struct vma *)vma)->anon_vma, memory_order_acquire);
}

/* The per-VMA lock (vma_lock.c). */
void vma_lock_init(struct vma *vma);
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

/* Writer-side lookups (mmap_lock held). */
struct vma *vma_lookup(struct mm *mm, unsigned long addr);	/* covering addr */
struct vma *find_vma(struct mm *mm, unsigned long addr);	/* first with end > addr */
struct vma *find_vma_prev(struct mm *mm, unsigned long addr);	/* last with start < addr */
struct vma *find_vma_intersection(struct mm *mm, unsigned long start, unsigned long end);

#endif /* VML_MM_VMA_H */
