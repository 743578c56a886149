/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rollup.h - smaps_rollup's sums kept up to date as page tables change
 * (vml_sys_config.rollup = VML_ROLLUP_INCREMENTAL; no kernel has it).
 * rollup.c's essay has the design; docs/locking.md "Incremental rollup"
 * the locking.
 */
#ifndef VML_MM_ROLLUP_H
#define VML_MM_ROLLUP_H

#include <stdint.h>

#include "mm/mm_types.h"
#include "mm/pgtable_types.h"
#include "sync/atomic.h"
#include "util/compiler.h"

/* Is @mm keeping incremental sums? (Set at creation; [I].) */
static inline bool mm_rollup_incremental(const struct mm *mm)
{
	return mm->sys->cfg.rollup == VML_ROLLUP_INCREMENTAL;
}

/*
 * rollup_pte_table_install - @pt now maps [addr & PMD_MASK, +PMD_SIZE) of
 * @mm: from now on its unlocks count it (or stop counting it: @mm NULL).
 * Context: the caller installs or moves the table (page_table_lock, or
 * mmap_lock(W) for a move); nothing maps through it that it did not count.
 */
void rollup_pte_table_install(struct pte_table *pt, struct mm *mm, unsigned long addr);
/*
 * rollup_pte_table_update - count @pt again: its entries' share replaces
 * what it added last time. Called by pte_unlock() on the tables of an mm
 * with incremental sums. Context: @pt's ptl held.
 */
void rollup_pte_table_update(struct pte_table *pt);
/*
 * rollup_pte_hint - the hot paths' shortcut: in this hold of @pt's ptl only
 * the @nr entries from @addr (in @vma, which the caller keeps) change, and
 * nothing else any other entry of @pt depends on - so the unlock counts
 * those entries again instead of all 512 (their share now, minus the share
 * this call counted before the change). @nr 0: the hold changes nothing
 * the rollup sees. A hold without a hint counts all 512; the hold of a
 * volatile table counts nothing (a read counts it).
 * Context: @pt's ptl held, before the hold changes anything.
 */
void __rollup_pte_hint(struct pte_table *pt, struct vma *vma, unsigned long addr,
		       unsigned long nr);

/* Inline, so that without sums it costs the hot paths one predictable branch. */
static inline void rollup_pte_hint(struct pte_table *pt, struct vma *vma, unsigned long addr,
				   unsigned long nr)
{
	if (unlikely(load_relaxed(&pt->rollup_mm) != NULL))
		__rollup_pte_hint(pt, vma, addr, nr);
}
/* The table leaves @mm (freed, or deposited): take its share out. Context: no ptl held. */
void rollup_pte_table_remove(struct pte_table *pt);
/*
 * rollup_leaf_holder - for a file or shmem huge leaf, which deposits no
 * table: the table that will hold its share, allocated before the caller
 * takes page_table_lock. NULL with 0 when @mm keeps no sums.
 * Return: the table (the caller passes it to huge_pmd_install as the
 * deposit, or vml_free()s it), or NULL with *@err = -ENOMEM.
 */
struct pte_table *rollup_leaf_holder(struct mm *mm, int *err);
/*
 * rollup_pmd_update - count the huge PMD at @pmd (covering @addr) again,
 * whatever it holds now (a leaf, a table, nothing). Context: page_table_lock.
 */
void rollup_pmd_update(struct mm *mm, _Atomic uint64_t *pmd, unsigned long addr);
/*
 * rollup_range_update - count every table and huge PMD meeting [start, end)
 * again: after a change of VMA flags the entries do not show (VM_LOCKED).
 * Context: mmap_lock held.
 */
void rollup_range_update(struct mm *mm, unsigned long start, unsigned long end);
/*
 * rollup_read - the sums of @mm, after counting again the tables whose
 * share depends on other address spaces (pages others map, swap slots
 * others use, file and shmem pages, folios in an LRU batch).
 * Context: no mmap_lock, no VMA lock; takes RCU, each such table's ptl in
 * turn and the mm's rollup_lock. The caller holds a reference on @mm.
 * Return: 0, or -ENOMEM (the list of volatile tables could not be copied).
 */
int rollup_read(struct mm *mm, struct rollup_sums *out);
void rollup_mm_init(struct mm *mm);

#endif /* VML_MM_ROLLUP_H */
