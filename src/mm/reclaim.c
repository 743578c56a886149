// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * reclaim.c - MADV_FREE, MADV_COLD and MADV_PAGEOUT on a range.
 *
 * Only pages this mapping maps exclusively are touched (the kernel leaves
 * possibly-shared folios alone). COLD ages pages: the PTE's young bit and
 * the folio's referenced/active state are cleared. PAGEOUT reclaims them
 * (their PTEs keep the young bit, the folios lose referenced): a clean
 * lazily freed (MADV_FREE) anonymous page is dropped, swap or not; another
 * anonymous page goes to swap, or - without swap - back to the active list;
 * a file or shmem page is unmapped whether dirty or not, then a clean
 * regular-file page leaves the page cache and a shmem page goes to swap if
 * there is swap.
 */
#include "mm/file.h"
#include "mm/folio.h"
#include "mm/huge_memory.h"
#include "mm/mm.h"
#include "mm/pgtable.h"
#include "mm/reclaim.h"
#include "mm/shmem.h"
#include "mm/swap.h"
#include "sync/spinlock.h"

static bool exclusive(struct folio *folio)
{
	return !folio_is_zero(folio) && folio_mapcount(folio) == 1;
}

static int free_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
			  unsigned long end, void *priv)
{
	(void)priv;
	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		_Atomic uint64_t *ptep = &pt->e[pte_index(a)];
		uint64_t pte = load_relaxed(ptep);
		struct folio *folio;

		if (pte_is_swap(pte)) {
			/* Lazily freed memory need not come back from swap. */
			store_relaxed(ptep, 0);
			swap_free_entry(mm->sys, pte >> PT_SWAP_SHIFT);
			mm_dec_counter(mm, MM_SWAPENTS);
			continue;
		}
		if (!pte_present(pte))
			continue;
		folio = page_folio(pte_page(pte));
		if (!folio_is_anon(folio) || !exclusive(folio))
			continue;
		/* Clean and not swap-backed: reclaim may drop it instead of writing it out. */
		while (!cas_relaxed(ptep, &pte, pte & ~(PT_DIRTY | PT_YOUNG)))
			;
		folio_clear(folio, PG_dirty | PG_swapbacked | PG_referenced | PG_active);
	}
	return 0;
}

void madvise_free_range(struct mm *mm, unsigned long start, unsigned long end)
{
	static const struct pt_walk_ops ops = { .pte_range = free_pte_range };

	split_huge_pmd_range_edges(mm, start, end);
	split_huge_pmd_range(mm, start, end);
	walk_page_range(mm, start, end, &ops, NULL);
}

static void age_pte(_Atomic uint64_t *ptep, struct folio *folio)
{
	uint64_t pte = load_relaxed(ptep);

	while ((pte & PT_YOUNG) && !cas_relaxed(ptep, &pte, pte & ~PT_YOUNG))
		;
	folio_clear(folio, PG_referenced | PG_active);
}

static int cold_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
			  unsigned long end, void *priv)
{
	(void)mm;
	(void)priv;
	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		_Atomic uint64_t *ptep = &pt->e[pte_index(a)];
		uint64_t pte = load_relaxed(ptep);
		struct folio *folio;

		if (!pte_present(pte))
			continue;
		folio = page_folio(pte_page(pte));
		if (exclusive(folio))
			age_pte(ptep, folio);
	}
	return 0;
}

static int cold_pmd(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start, unsigned long end,
		    void *priv)
{
	struct folio *folio = page_folio(pte_page(load_relaxed(pmd)));

	(void)mm;
	(void)start;
	(void)end;
	(void)priv;
	if (folio_mapcount(folio) == (int)folio_nr_pages(folio))
		age_pte(pmd, folio);
	return 0;
}

void madvise_cold_range(struct mm *mm, unsigned long start, unsigned long end)
{
	static const struct pt_walk_ops ops = { .pte_range = cold_pte_range, .pmd_huge = cold_pmd };

	split_huge_pmd_range_edges(mm, start, end);
	walk_page_range(mm, start, end, &ops, NULL);
}

/* Drop a clean regular-file folio from the page cache if only the cache holds it. */
static void drop_from_page_cache(struct folio *folio)
{
	struct vml_file *file = folio->mapping;
	bool dropped = false;

	spin_lock(&file->i_pages_lock);
	if (folio_ref_count(folio) == 1 && !folio_test(folio, PG_dirty) &&
	    folio->index < file->nr_slots && file->pages[folio->index] == folio) {
		file->pages[folio->index] = NULL;
		file->nr_cached--;
		dropped = true;
	}
	spin_unlock(&file->i_pages_lock);
	if (dropped)
		folio_put(folio);
}

static int pageout_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
			     unsigned long end, void *priv)
{
	struct folio **unmapped = priv;

	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		_Atomic uint64_t *ptep = &pt->e[pte_index(a)];
		uint64_t pte = load_relaxed(ptep);
		struct folio *folio;
		unsigned long slot;

		if (!pte_present(pte))
			continue;
		folio = page_folio(pte_page(pte));
		if (!exclusive(folio))
			continue;
		if (folio_is_anon(folio)) {
			folio_clear(folio, PG_referenced);
			if (!folio_test(folio, PG_swapbacked)) {
				if (!(pte & PT_DIRTY) && !folio_test(folio, PG_dirty) &&
				    folio_ref_count(folio) == 1) {
					/* Clean lazily freed memory is dropped, swap or not. */
					atomic_exchange_explicit(ptep, 0, memory_order_acq_rel);
					folio_remove_rmap_pte(folio, pte_page(pte));
					mm_dec_counter(mm, MM_ANONPAGES);
					folio_put(folio);
					continue;
				}
				/* Written again since MADV_FREE: it must be kept after all. */
				folio_set(folio, PG_swapbacked);
			}
			/* Reclaim that cannot swap it out puts it back active (activate_locked). */
			if (!mm->sys->cfg.swap_pages || folio_ref_count(folio) != 1 ||
			    !(slot = swap_alloc(mm->sys))) {
				folio_set(folio, PG_active);
				continue;
			}
			age_pte(ptep, folio);
			atomic_exchange_explicit(ptep, (slot << PT_SWAP_SHIFT) | PT_SWAP,
						 memory_order_acq_rel);
			folio_remove_rmap_pte(folio, pte_page(pte));
			mm_dec_counter(mm, MM_ANONPAGES);
			mm_inc_counter(mm, MM_SWAPENTS);
			folio_put(folio);
			continue;
		}
		/* File or shmem: unmapped; the cache decides after the ptl is dropped. */
		age_pte(ptep, folio);
		atomic_exchange_explicit(ptep, 0, memory_order_acq_rel);
		if (pte & PT_DIRTY)
			folio_set(folio, PG_dirty);
		folio_remove_rmap_pte(folio, pte_page(pte));
		mm_dec_counter(mm, folio_mm_counter(folio));
		*unmapped = folio;	/* its mapping reference is handed to the caller */
	}
	return 0;
}

void madvise_pageout_range(struct mm *mm, unsigned long start, unsigned long end)
{
	static const struct pt_walk_ops ops = { .pte_range = pageout_pte_range };

	split_huge_pmd_range_edges(mm, start, end);
	split_huge_pmd_range(mm, start, end);
	/* One page at a time, so an unmapped file page is dealt with outside the ptl. */
	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		struct folio *folio = NULL;
		struct vml_file *file;

		walk_page_range(mm, a, a + PAGE_SIZE, &ops, &folio);
		if (!folio)
			continue;
		file = folio->mapping;
		folio_put(folio);	/* the mapping's reference; the cache holds one */
		if (file->shmem)
			shmem_writeout(file, folio);
		else
			drop_from_page_cache(folio);
	}
}
