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

/* Writer-side lookups (vma.c). Context: mmap_lock held. */
struct vma *vma_lookup(struct mm *mm, unsigned long addr);	/* covering addr */
struct vma *find_vma(struct mm *mm, unsigned long addr);	/* first with end > addr */
struct vma *find_vma_prev(struct mm *mm, unsigned long addr);	/* last with start < addr */
struct vma *find_vma_intersection(struct mm *mm, unsigned long start, unsigned long end);

#endif /* VML_MM_VMA_H */
