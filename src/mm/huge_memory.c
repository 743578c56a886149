// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * huge_memory.c - zapping and splitting PMD-mapped huge pages.
 */
#include "mm/folio.h"
#include "mm/huge_memory.h"
#include "mm/mm.h"
#include "mm/pgtable.h"
#include "util/alloc.h"
#include "util/compiler.h"

void zap_huge_pmd(struct mm *mm, _Atomic uint64_t *pmd)
{
	uint64_t v = load_relaxed(pmd);
	struct folio *folio = page_folio(pte_page(v));
	struct pte_table **slot = pmd_deposit_slot(pmd);

	vml_assert(spin_is_locked(&mm->page_table_lock));
	store_release(pmd, 0);
	if (v & PT_DIRTY)
		folio_set(folio, PG_dirty);
	folio_remove_rmap_pmd(folio);
	mm_add_counter(mm, folio_mm_counter(folio), -(long)folio_nr_pages(folio));
	folio_put(folio);
	vml_free(*slot);
	*slot = NULL;
}

/* Replace a huge leaf by its deposited PTE table, mapping the same pages. */
static void split_huge_pmd_locked(struct mm *mm, _Atomic uint64_t *pmd)
{
	uint64_t v = load_relaxed(pmd);
	struct pte_table **slot = pmd_deposit_slot(pmd);
	struct pte_table *pt = *slot;
	struct folio *folio;
	uint64_t bits;

	vml_assert(spin_is_locked(&mm->page_table_lock));
	if (!pmd_is_huge(v))
		return;
	VML_BUG_ON(!pt);
	*slot = NULL;
	folio = page_folio(pte_page(v));
	bits = v & (PT_WRITE | PT_DIRTY | PT_YOUNG);
	for (unsigned int i = 0; i < HPAGE_PMD_NR; i++) {
		store_relaxed(&pt->e[i], mk_pte(&folio->pages[i], bits));
		fetch_add_relaxed(&folio->pages[i].mapcount, 1);
	}
	/* Each PTE mapping holds a reference; the PMD mapping held one. */
	fetch_add_relaxed(&folio->refcount, (int)HPAGE_PMD_NR - 1);
	fetch_sub_relaxed(&folio->entire_mapcount, 1);
	/* release: walkers that load the table see its entries */
	store_release(pmd, (uint64_t)(uintptr_t)pt | PT_TABLE);
}

void split_huge_pmd_address(struct mm *mm, unsigned long addr)
{
	int err = 0;
	_Atomic uint64_t *pmd = pmd_offset(mm, addr, false, &err);

	if (!pmd || !pmd_is_huge(load_acquire(pmd)))
		return;
	spin_lock(&mm->page_table_lock);
	split_huge_pmd_locked(mm, pmd);
	spin_unlock(&mm->page_table_lock);
}

void split_huge_pmd_range_edges(struct mm *mm, unsigned long start, unsigned long end)
{
	if (start & ~PMD_MASK)
		split_huge_pmd_address(mm, start);
	if (end & ~PMD_MASK)
		split_huge_pmd_address(mm, end);
}

void split_huge_pmd_range(struct mm *mm, unsigned long start, unsigned long end)
{
	for (unsigned long a = start & PMD_MASK; a < end; a += PMD_SIZE)
		split_huge_pmd_address(mm, a);
}
