/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * huge_memory.h - PMD-mapped transparent huge pages (anonymous).
 *
 * Every huge PMD mapping carries a deposited PTE table, allocated when the
 * mapping is made (pgtable_trans_huge_deposit), so that splitting it into
 * 512 PTEs later never needs memory and can never fail.
 */
#ifndef VML_MM_HUGE_MEMORY_H
#define VML_MM_HUGE_MEMORY_H

#include "mm/pgtable_types.h"

/*
 * thp_vma_allowable - may @vma have PMD-sized THPs (__thp_vma_allowable_orders)?
 * @smaps: the smaps question (THPeligible): the VMA must also contain an
 * aligned PMD range; the fault path checks the faulting range instead.
 */
bool thp_vma_allowable(struct vma *vma, unsigned long vm_flags, bool smaps);
/* Does the aligned PMD range around @addr lie inside @vma? */
bool thp_vma_suitable(struct vma *vma, unsigned long addr);

/* Fault paths. Return VM_FAULT_FALLBACK (internal.h) to continue with PTEs. */
unsigned int do_huge_pmd_anonymous_page(struct vma *vma, _Atomic uint64_t *pmd,
					unsigned long addr, unsigned int flags);
unsigned int do_huge_pmd_wp_page(struct vma *vma, _Atomic uint64_t *pmd, unsigned long addr,
				 unsigned int flags);
/* fork: share a huge PMD mapping with the child, both write-protected. */
int copy_huge_pmd(struct mm *dst, struct mm *src, _Atomic uint64_t *dst_pmd,
		  _Atomic uint64_t *src_pmd, struct vma *vma);
/*
 * Map @folio (anonymous, order 9, or the huge zero page) at @pmd with @pt as
 * its deposited table. Context: page_table_lock held; the entry is empty.
 */
void huge_pmd_install(struct mm *mm, _Atomic uint64_t *pmd, struct folio *folio,
		      struct pte_table *pt, uint64_t bits);
/* mremap: move a whole huge PMD mapping (with its deposited table). */
void move_huge_pmd(struct mm *mm, _Atomic uint64_t *old_pmd, _Atomic uint64_t *new_pmd);

/* Context: page_table_lock held; the entry is a huge leaf. */
void zap_huge_pmd(struct mm *mm, _Atomic uint64_t *pmd);
/*
 * Replace a huge leaf by its deposited PTE table, mapping the same pages
 * (nothing if the entry is no longer huge). Context: page_table_lock held.
 */
void split_huge_pmd_locked(struct mm *mm, _Atomic uint64_t *pmd);
/* Split the huge PMD mapping covering @addr, if any, into PTEs. */
void split_huge_pmd_address(struct mm *mm, unsigned long addr);
/* Split huge PMDs that [start, end) covers only partly. */
void split_huge_pmd_range_edges(struct mm *mm, unsigned long start, unsigned long end);
/* Split every huge PMD in [start, end). */
void split_huge_pmd_range(struct mm *mm, unsigned long start, unsigned long end);

#endif /* VML_MM_HUGE_MEMORY_H */
