/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vma.h - VMA objects, finding an mm's VMAs, and walking them in address
 * order with a VMA iterator (the kernel's vma_iterator). The per-VMA lock
 * is in vma_lock.h, anon_vma in rmap.h.
 *
 * A VMA is allocated detached, filled in, attached by the transaction that
 * publishes it (vma_txn.c), and freed an RCU grace period after it was
 * detached; a VMA never attached is freed at once (vma.c).
 */
#ifndef VML_MM_VMA_H
#define VML_MM_VMA_H

#include "mm/mm_types.h"

/* Allocation and lifetime (vma.c). */
struct vma *vma_alloc(struct mm *mm);
/* A detached copy of @src (same fields, new references); lock state fresh. */
struct vma *vma_dup(const struct vma *src);
/* Free a VMA that was never attached (no grace period needed). */
void vma_free_unpublished(struct vma *vma);
/* Free a detached VMA after an RCU grace period. */
void vma_free_rcu(struct vma *vma);

struct anon_vma_name *anon_vma_name_alloc(const char *name);
void anon_vma_name_get(struct anon_vma_name *n);
void anon_vma_name_put(struct anon_vma_name *n);
bool anon_vma_name_eq(const struct anon_vma_name *a, const struct anon_vma_name *b);

static inline struct anon_vma *vma_anon_vma(const struct vma *vma)
{
	/* acquire: pairs with the store_release in anon_vma_prepare() (rmap.c) */
	return atomic_load_explicit(&((struct vma *)vma)->anon_vma, memory_order_acquire);
}

/*
 * struct vma_iterator - a position among an mm's VMAs, in address order
 * (the kernel's vma_iterator over the maple tree).
 *
 * The position is an address: vma_next() returns the first VMA that ends
 * after it and moves the position to that VMA's end. Underneath, the
 * iterator caches its path through one snapshot of the tree; that path is
 * valid only inside the RCU read-side section (or mmap_lock hold) in which
 * vma_next() took it. So whoever drops RCU or mmap_lock while keeping the
 * iterator calls vma_iter_invalidate(), and the next vma_next() walks down
 * from the root again at the same address; vma_iter_set() moves the
 * position (same rule). Only vma_next() and vma_prev() walk the tree.
 *
 * Context for vma_next()/vma_prev(): RCU or mmap_lock held. What they
 * return is only as stable as that: under RCU alone a VMA must be locked
 * (vma_start_read) before its fields are trusted.
 */
struct vma_iterator {
	struct rtree_cursor cur;
};

static inline void vma_iter_init(struct vma_iterator *vmi, struct mm *mm, unsigned long addr)
{
	rtree_cursor_set(&vmi->cur, &mm->mm_mt, addr);
}

/* Move the position to @addr. */
static inline void vma_iter_set(struct vma_iterator *vmi, unsigned long addr)
{
	rtree_cursor_set(&vmi->cur, vmi->cur.tree, addr);
}

/* Keep the position, forget the path: RCU or mmap_lock is being dropped (mas_pause). */
static inline void vma_iter_invalidate(struct vma_iterator *vmi)
{
	rtree_cursor_set(&vmi->cur, vmi->cur.tree, vmi->cur.addr);
}

/* The first VMA ending after the position, which moves to its end; NULL: none. */
static inline struct vma *vma_next(struct vma_iterator *vmi)
{
	return rtree_cursor_next(&vmi->cur, NULL);
}

/* The last VMA starting before the position, which moves before it; NULL: none. */
static inline struct vma *vma_prev(struct vma_iterator *vmi)
{
	return rtree_cursor_prev(&vmi->cur, NULL);
}

#define for_each_vma(vmi, vma) while (((vma) = vma_next(&(vmi))) != NULL)

/* Writer-side lookups (vma.c). Context: mmap_lock held. */
struct vma *vma_lookup(struct mm *mm, unsigned long addr);	/* covering addr */
struct vma *find_vma(struct mm *mm, unsigned long addr);	/* first with end > addr */
struct vma *find_vma_prev(struct mm *mm, unsigned long addr);	/* last with start < addr */
struct vma *find_vma_intersection(struct mm *mm, unsigned long start, unsigned long end);

#endif /* VML_MM_VMA_H */
