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

/* Why THP orders are asked for (the kernel's enum tva_type). */
enum tva_type {
	TVA_SMAPS,		/* THPeligible in smaps */
	TVA_PAGEFAULT,		/* a fault: the faulting range is checked by the caller */
	TVA_KHUGEPAGED,		/* a collapse */
	TVA_FORCED_COLLAPSE,	/* MADV_COLLAPSE: the sysfs settings do not count */
};

/* The orders anonymous THP comes in on x86-64: 16 KiB (order 2) to 2 MiB. */
#define THP_ORDERS_ALL_ANON (((1UL << (HPAGE_PMD_ORDER + 1)) - 1) & ~3UL)
/* The page cache's large folios (THP_ORDERS_ALL_FILE_DEFAULT): orders 1..9. */
#define THP_ORDERS_ALL_FILE (((1UL << (HPAGE_PMD_ORDER + 1)) - 1) & ~1UL)
#define THP_ORDERS_ALL (THP_ORDERS_ALL_ANON | THP_ORDERS_ALL_FILE)

/*
 * thp_vma_allowable_orders - which of @orders may @vma's anonymous memory
 * come in (thp_vma_allowable_orders, __thp_vma_allowable_orders)? Each
 * size's own setting (always; madvise with VM_HUGEPAGE; inherit: the global
 * mode, "always", or "madvise" with VM_HUGEPAGE), none with VM_NOHUGEPAGE.
 * Except for a fault, only the orders of which the VMA holds a whole
 * naturally aligned block (the last one before its end) remain.
 * Return: the allowed orders as a bit mask (bit n: order n), 0 if none.
 */
unsigned long thp_vma_allowable_orders(struct vma *vma, unsigned long vm_flags,
				       enum tva_type type, unsigned long orders);

static inline bool thp_vma_allowable_order(struct vma *vma, unsigned long vm_flags,
					   enum tva_type type, unsigned int order)
{
	return thp_vma_allowable_orders(vma, vm_flags, type, 1UL << order) != 0;
}

/* Does the naturally aligned block of 2^@order pages around @addr lie inside @vma? */
bool thp_vma_suitable_order(struct vma *vma, unsigned long addr, unsigned int order);
/* The orders of @orders whose aligned block around @addr lies inside @vma. */
unsigned long thp_vma_suitable_orders(struct vma *vma, unsigned long addr, unsigned long orders);

/* Does the aligned PMD range around @addr lie inside @vma? */
static inline bool thp_vma_suitable(struct vma *vma, unsigned long addr)
{
	return thp_vma_suitable_order(vma, addr, HPAGE_PMD_ORDER);
}

/* The highest order in @orders (which is not 0), and the next lower one after @order. */
static inline unsigned int highest_order(unsigned long orders)
{
	return 63 - (unsigned int)__builtin_clzl(orders);
}

static inline unsigned int next_order(unsigned long *orders, unsigned int prev)
{
	*orders &= ~(1UL << prev);
	return *orders ? highest_order(*orders) : 0;
}

/* Fault paths. Return VM_FAULT_FALLBACK (internal.h) to continue with PTEs. */
unsigned int do_huge_pmd_anonymous_page(struct vma *vma, _Atomic uint64_t *pmd,
					unsigned long addr, unsigned int flags);
unsigned int do_huge_pmd_wp_page(struct vma *vma, _Atomic uint64_t *pmd, unsigned long addr,
				 unsigned int flags);
/* fork: share a huge PMD mapping with the child, both write-protected. */
int copy_huge_pmd(struct mm *dst, struct mm *src, _Atomic uint64_t *dst_pmd,
		  _Atomic uint64_t *src_pmd, struct vma *vma, unsigned long addr);
/*
 * Map @folio (anonymous, order 9, or the huge zero page) at @pmd with @pt as
 * its deposited table. Context: page_table_lock held; the entry is empty.
 */
void huge_pmd_install(struct mm *mm, _Atomic uint64_t *pmd, struct folio *folio,
		      struct pte_table *pt, uint64_t bits, unsigned long addr);
/* mremap: move a whole huge PMD mapping (with its deposited table). */
void move_huge_pmd(struct mm *mm, _Atomic uint64_t *old_pmd, _Atomic uint64_t *new_pmd,
		   unsigned long new_addr);

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
