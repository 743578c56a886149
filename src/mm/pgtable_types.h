/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pgtable_types.h - the page-table types: entry encoding, the three kinds
 * of table, and how an entry leads to the table below it. The operations
 * are in pgtable.h; who may read and write what is pgtable.c's essay.
 *
 * Four levels, x86-64 style: PGD -> PUD -> PMD -> PTE, 512 entries each.
 * Every entry is one atomic 64-bit word:
 *   PGD, PUD, PMD: 0 = none, or a table pointer | PT_TABLE, or (PMD only)
 *                  a huge leaf: page pointer | PT_PRESENT | PT_HUGE | bits;
 *   PTE:           0 = none; present: page pointer | PT_PRESENT | access
 *                  bits; swap: (swap offset << PT_SWAP_SHIFT) | PT_SWAP;
 *                  a guard marker (MADV_GUARD_INSTALL): PT_GUARD alone.
 * struct page and every table are 16-byte aligned (malloc's alignment), so
 * the low four bits of a pointer are free, and user pointers are below
 * 2^47 so the top byte holds PT_HUGE, PT_PROTNONE and PT_PKEY.
 *
 * Tables: PGD and PUD tables are struct pt_table; a PMD table is struct
 * pmd_table, which also keeps, for each huge leaf, the PTE table deposited
 * for its split; a PTE table is struct pte_table, with its split lock. Each
 * kind is reached only through the typed decoder of the entry above it
 * (pgd_pud_table, pud_pmd_table, pmd_pte_table) and is never cast to
 * another. Tables below the PGD die an RCU grace period after the entry
 * above them was cleared (free_pgtables), through their rcu head.
 */
#ifndef VML_MM_PGTABLE_TYPES_H
#define VML_MM_PGTABLE_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "mm/mm_types.h"
#include "sync/rcu.h"

#define PT_PRESENT	0x1ULL
#define PT_WRITE	0x2ULL
#define PT_DIRTY	0x4ULL
#define PT_YOUNG	0x8ULL
#define PT_FLAGS_MASK	0xfULL
#define PT_TABLE	0x1ULL		/* upper levels only */
#define PT_HUGE		(1ULL << 56)	/* a PMD leaf; pointers are < 2^47 */
#define PT_PROTNONE	(1ULL << 57)	/* present but inaccessible (PROT_NONE VMA) */
#define PT_PKEY		(1ULL << 58)	/* present, but its protection key denies data
					 * access (the execute-only key: mm/pkeys.h) */
#define PT_HIGH_MASK	(0xffULL << 56)
#define PT_SWAP		0x10ULL		/* non-present PTE holding a swap entry */
#define PT_SWAP_SHIFT	8
#define PT_GUARD	0x20ULL		/* non-present: a guard marker, SIGSEGV on access
					 * (the kernel's PTE_MARKER_GUARD) */

#define pte_index(a) (((a) >> PAGE_SHIFT) & (PTRS_PER_TABLE - 1))
#define pmd_index(a) (((a) >> PMD_SHIFT) & (PTRS_PER_TABLE - 1))
#define pud_index(a) (((a) >> PUD_SHIFT) & (PTRS_PER_TABLE - 1))
#define pgd_index(a) (((a) >> PGDIR_SHIFT) & (PTRS_PER_TABLE - 1))

/* A PGD or PUD table. */
struct pt_table {
	_Atomic uint64_t e[PTRS_PER_TABLE];	/* [PT] populated and cleared under page_table_lock */
	struct vml_rcu_head rcu;
};

/* A PMD table: entries, then the deposited PTE table of each huge leaf. */
struct pmd_table {
	_Atomic uint64_t e[PTRS_PER_TABLE];		/* [PT] */
	struct pte_table *deposit[PTRS_PER_TABLE];	/* [PT] */
	struct vml_rcu_head rcu;
};

/* A PTE table carries its own lock: the split page-table lock. */
struct pte_table {
	_Atomic uint64_t e[PTRS_PER_TABLE];	/* [PTL] written under ptl; read under ptl or racily (CAS) */
	spinlock_t ptl;				/* the split page-table lock */
	struct vml_rcu_head rcu;
	/*
	 * Incremental smaps_rollup (rollup.c): the mm this table counts for
	 * (NULL: none, the default), the PMD-aligned address it maps, and its
	 * share of mm->rollup as last counted. rollup_mm is read without the
	 * ptl by pte_unlock()'s test, so it is atomic.
	 */
	_Atomic(struct mm *) rollup_mm;		/* [PTL] written; read racily as the hint */
	unsigned long rollup_addr;		/* [PTL] */
	/*
	 * A huge leaf's deposited table (or, for a file leaf, a table set
	 * there for it) holds the leaf's share instead: rollup_leaf, and the
	 * PMD entry it was last counted at.
	 */
	bool rollup_leaf;			/* [PTL] */
	_Atomic uint64_t *rollup_pmd;		/* [PTL] */
	bool rollup_volatile;			/* [PTL] and mm->rollup_lock: on the list */
	struct list_head rollup_node;		/* [mm->rollup_lock] on mm->rollup_volatile */
	struct rollup_sums rollup;		/* [PTL] its share in mm->rollup; 0 if volatile */
	/* rollup_pte_hint(): this hold's entries and their share before it */
	bool rollup_hinted;			/* [PTL] */
	unsigned int rollup_hint_first;		/* [PTL] */
	unsigned int rollup_hint_nr;		/* [PTL] */
	struct vma *rollup_hint_vma;		/* [PTL] the holder's VMA, valid during the hold */
	struct rollup_sums rollup_hint;		/* [PTL] */
};

/*
 * pmd_deposit_slot() finds a PMD entry's deposit slot from the entry's
 * address alone: deposit[i] lies exactly sizeof(e) after e[i].
 */
_Static_assert(offsetof(struct pmd_table, e) == 0 &&
	       offsetof(struct pmd_table, deposit) == sizeof(((struct pmd_table *)0)->e),
	       "pmd_table: deposit[] must follow e[] directly");
_Static_assert(sizeof(((struct pmd_table *)0)->deposit[0]) == sizeof(((struct pmd_table *)0)->e[0]),
	       "pmd_table: a deposit slot is as wide as an entry");

static inline struct pt_table *pgd_pud_table(uint64_t pgd)
{
	return (struct pt_table *)(uintptr_t)(pgd & ~PT_FLAGS_MASK);
}

static inline struct pmd_table *pud_pmd_table(uint64_t pud)
{
	return (struct pmd_table *)(uintptr_t)(pud & ~PT_FLAGS_MASK);
}

static inline struct pte_table *pmd_pte_table(uint64_t pmd)
{
	return (struct pte_table *)(uintptr_t)(pmd & ~PT_FLAGS_MASK);
}

static inline struct pte_table **pmd_deposit_slot(_Atomic uint64_t *pmd)
{
	return (struct pte_table **)((char *)pmd + sizeof(((struct pmd_table *)0)->e));
}

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

/* A guard marker: not none, not present, not swap; only unmapping removes it. */
static inline bool pte_is_guard(uint64_t pte)
{
	return pte == PT_GUARD;
}

static inline bool pmd_is_huge(uint64_t pmd)
{
	return (pmd & PT_HUGE) != 0;
}

#endif /* VML_MM_PGTABLE_TYPES_H */
