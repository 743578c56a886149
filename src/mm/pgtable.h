/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pgtable.h - four-level page tables with split PTE locks.
 *
 * Tables are allocated on demand (upper levels populated under
 * mm->page_table_lock) and freed only when the mm is torn down, so a walker
 * holding mmap_lock or a VMA lock may follow upper-level entries without a
 * lock. A PTE entry is read and written under its table's ptl; the one
 * exception is the "hardware" access path (pte_access_fast), which sets
 * dirty/young bits with a compare-and-swap on an entry it saw present.
 * A huge (PMD) leaf is changed under mm->page_table_lock.
 */
#ifndef VML_MM_PGTABLE_H
#define VML_MM_PGTABLE_H

#include "mm/mm_types.h"
#include "sync/spinlock.h"

#define pte_index(a) (((a) >> PAGE_SHIFT) & (PTRS_PER_TABLE - 1))
#define pmd_index(a) (((a) >> PMD_SHIFT) & (PTRS_PER_TABLE - 1))
#define pud_index(a) (((a) >> PUD_SHIFT) & (PTRS_PER_TABLE - 1))
#define pgd_index(a) (((a) >> PGDIR_SHIFT) & (PTRS_PER_TABLE - 1))

static inline struct page *pte_page(uint64_t pte)
{
	return (struct page *)(uintptr_t)(pte & ~(PT_FLAGS_MASK | PT_HIGH_MASK));
}

static inline uint64_t mk_pte(struct page *page, uint64_t bits)
{
	return (uint64_t)(uintptr_t)page | PT_PRESENT | bits;
}

static inline bool pte_present(uint64_t pte)
{
	return pte & PT_PRESENT;
}

static inline bool pte_is_swap(uint64_t pte)
{
	return !(pte & PT_PRESENT) && (pte & PT_SWAP);
}

static inline bool pmd_is_huge(uint64_t pmd)
{
	return (pmd & PT_HUGE) != 0;
}

static inline struct pte_table *pmd_pte_table(uint64_t pmd)
{
	return (struct pte_table *)(uintptr_t)(pmd & ~PT_FLAGS_MASK);
}

int pgtable_alloc_pgd(struct mm *mm);
/* Context: no other user of the mm; every entry already zapped. */
void pgtable_free_all(struct mm *mm);

/*
 * The PMD entry covering @addr, allocating upper tables if @alloc.
 * Return: the entry, or NULL (absent, or -ENOMEM in *err when allocating).
 */
_Atomic uint64_t *pmd_offset(struct mm *mm, unsigned long addr, bool alloc, int *err);
/* The PTE table under a non-huge PMD entry, allocating it if @alloc. */
struct pte_table *pte_table_get(struct mm *mm, _Atomic uint64_t *pmd, bool alloc, int *err);

static inline void pte_lock(struct pte_table *pt)
{
	spin_lock(&pt->ptl);
}

static inline void pte_unlock(struct pte_table *pt)
{
	spin_unlock(&pt->ptl);
}

/*
 * A walk over [start, end): callbacks see every PTE table (with its ptl
 * held, the sub-range it covers), every huge PMD leaf (page_table_lock
 * held) and every hole without a table. Return non-zero to stop.
 * Context: mmap_lock or a VMA read lock covering the range.
 */
struct pt_walk_ops {
	int (*pte_range)(struct mm *mm, struct pte_table *pt, unsigned long start,
			 unsigned long end, void *priv);
	int (*pmd_huge)(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start,
			unsigned long end, void *priv);
	int (*pte_hole)(struct mm *mm, unsigned long start, unsigned long end, void *priv);
};
int walk_page_range(struct mm *mm, unsigned long start, unsigned long end,
		    const struct pt_walk_ops *ops, void *priv);

/* Unmap every page in [start, end) (zap_page_range). Context: the VMAs are write-locked or gone. */
void zap_page_range(struct mm *mm, unsigned long start, unsigned long end);
/*
 * Make the entries of [start, end) agree with new VMA flags: no write bit
 * without VM_WRITE, inaccessible (PT_PROTNONE) without any access flag.
 */
void change_protection(struct mm *mm, unsigned long start, unsigned long end,
		       unsigned long vm_flags);
/* Lock-free "hardware" access: set young (and dirty) on a PTE that already allows it. */
bool pte_access_fast(struct mm *mm, unsigned long addr, bool write);
/*
 * Allocate every table a move of [old, old+len) to [new, new+len) needs, so
 * the move itself cannot fail. Return 0 or -ENOMEM (tables stay allocated).
 */
int pgtable_prepare_move(struct mm *mm, unsigned long old_addr, unsigned long new_addr,
			 unsigned long len);
/* Move the entries (whole huge PMDs when aligned); tables prepared beforehand. */
void move_page_tables(struct mm *mm, unsigned long old_addr, unsigned long new_addr,
		      unsigned long len);

#endif /* VML_MM_PGTABLE_H */
