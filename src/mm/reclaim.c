// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * reclaim.c - MADV_FREE, MADV_COLD and MADV_PAGEOUT on a range
 * (mm/madvise.c madvise_free_pte_range, madvise_cold_or_pageout_pte_range,
 * and the parts of mm/vmscan.c shrink_folio_list they reach).
 *
 * Only folios this mapping maps alone, wholly, are aged or reclaimed (the
 * kernel leaves possibly-shared folios alone). COLD ages them: the PTEs'
 * young bits and the folio's referenced bit are cleared and the folio is
 * deactivated. PAGEOUT reclaims them (their PTEs keep the young bit, the
 * folios lose referenced): a clean lazily freed (MADV_FREE) anonymous page
 * is dropped, swap or not; another anonymous page goes to swap, or -
 * without swap - back to the active list; a file or shmem folio is unmapped
 * whether dirty or not, then a clean one (a shmem page never written holds
 * zeroes) leaves the page cache, and a dirty shmem page goes to swap, or
 * back to the active list if there is none. FREE cleans the
 * PTEs and makes the folios lazily freed (not swap-backed), possibly shared
 * ones too unless the folio itself is dirty.
 *
 * Deactivation and MADV_FREE go through the LRU batches (folio_lru_op): for
 * a small folio they show only after the next lru_add_drain(), which COLD,
 * PAGEOUT and FREE each do first, once per VMA (so a FREE over two VMAs
 * shows the first one's pages lazily freed, not the last one's); populate,
 * mlock, WILLNEED on anonymous or shmem memory, and the end of a shared
 * anonymous object with pages drain too.
 *
 * Large folios: one the range covers only in part is split first (split_folio),
 * unless it may be mapped by another process. An anonymous one is split in
 * place: its pages stay mapped, each now its own folio. A regular file's
 * page-cache folio is split only when clean (its buffers can be released),
 * a shmem one dirty or not, and the split unmaps it everywhere
 * (split_file_folio). A whole PMD-mapped THP keeps its
 * mapping for COLD and FREE; PAGEOUT without swap splits it, and every page
 * goes back active - a whole PTE-mapped anonymous one (mTHP) too; with swap
 * either is split and swapped out page by page, as the kernel falls back to
 * when its swap device has no room for the folio whole. A lazily freed or
 * droppable one is not split - a PMD-mapped one loses only its PMD - but
 * dropped whole (cold_or_pageout_pmd, pageout_ptes). Divergence, documented: the model swaps out no large
 * folio whole (a swap device on an SSD would take it whole).
 */
#include "mm/file.h"
#include "mm/folio.h"
#include "mm/huge_memory.h"
#include "mm/mm.h"
#include "mm/pgtable.h"
#include "mm/reclaim.h"
#include "mm/rmap.h"
#include "mm/rollup.h"
#include "mm/shmem.h"
#include "mm/swap.h"
#include "mm/vma.h"
#include "sync/spinlock.h"

/*
 * One step of a walk over the range: what the PTE walk hands back to do
 * outside the page-table lock, and where to go on.
 */
struct reclaim_walk {
	struct folio *split;		/* a large folio to split (a reference) */
	unsigned long split_pmd;	/* PMD-mapped: the mapping to split first, or 0 */
	unsigned long split_nr;		/* PTE-mapped: its PTEs at resume */
	struct folio *unmapped;		/* file/shmem, just unmapped (a mapping's reference) */
	unsigned long resume;		/* where the walk goes on */
	bool pageout;			/* COLD or PAGEOUT: which of the two */
	bool droppable;			/* a VM_DROPPABLE VMA: dirty pages are dropped too */
};

/*
 * A large folio only partly in the range: leave the walk to split it,
 * unless it may be mapped elsewhere or is a dirty page-cache folio of a
 * regular file (shmem splits dirty). An
 * anonymous folio stays mapped, so the walk goes on from @a; a file folio's
 * mappings are gone after its split, so past them. Return true to leave.
 */
static bool want_split(struct reclaim_walk *w, struct folio *folio, unsigned long a,
		       unsigned long nr)
{
	/* A dirty shmem folio has no buffers to release: it splits too. */
	if (folio_maybe_mapped_shared(folio) ||
	    (!folio_test(folio, PG_swapbacked) && folio_test(folio, PG_dirty)))
		return false;
	folio_get(folio);
	w->split = folio;
	w->split_nr = nr;
	w->resume = folio_is_anon(folio) ? a : a + nr * PAGE_SIZE;
	return true;
}

/*
 * A huge PMD the range covers only in part [start, end): unless the folio
 * may be mapped elsewhere (then it is left alone), leave the walk to split
 * the mapping and the folio, and walk the range again as PTEs. Return true
 * if the callback should go no further with this PMD.
 */
static bool pmd_partial(struct reclaim_walk *w, struct folio *folio, unsigned long start,
			unsigned long end)
{
	if (end - start == PMD_SIZE)
		return false;
	if (!folio_maybe_mapped_shared(folio)) {
		folio_get(folio);
		w->split = folio;
		w->split_pmd = start & PMD_MASK;
		w->resume = start;
	}
	return true;
}

/*
 * The PTEs at @a to handle together for a present @pte: 1, or a large
 * folio's run. *partial: the run is not the whole folio - the caller leaves
 * the walk if want_split() took it (w->split), else skips the run.
 */
static unsigned long batch_or_split(struct reclaim_walk *w, struct pte_table *pt, unsigned long a,
				    unsigned long end, uint64_t pte, bool *partial)
{
	struct folio *folio = page_folio(pte_page(pte));
	unsigned long nr;

	*partial = false;
	if (!folio->order)
		return 1;
	nr = folio_pte_batch(pt, a, end, folio, pte_page(pte));
	if (nr < folio_nr_pages(folio)) {
		*partial = true;
		want_split(w, folio, a, nr);
	}
	return nr;
}

static void clear_pte_bits(_Atomic uint64_t *ptep, uint64_t bits)
{
	uint64_t pte = load_relaxed(ptep);

	while ((pte & bits) && !cas_relaxed(ptep, &pte, pte & ~bits))
		;
}

/* ---- MADV_FREE ---- */

static int free_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
			  unsigned long end, void *priv)
{
	struct reclaim_walk *w = priv;
	unsigned long nr;
	bool split;

	for (unsigned long a = start; a < end; a += nr * PAGE_SIZE) {
		_Atomic uint64_t *ptep = &pt->e[pte_index(a)];
		uint64_t pte = load_relaxed(ptep);
		struct folio *folio;

		nr = 1;
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
		if (folio_is_zero(folio) || !folio_is_anon(folio))
			continue;
		nr = batch_or_split(w, pt, a, end, pte, &split);
		if (split) {
			if (w->split)
				return 1;
			continue;
		}
		if (folio_test(folio, PG_dirty | PG_swapcache)) {
			if (folio_mapcount(folio) != (int)folio_nr_pages(folio))
				continue;
			folio_clear(folio, PG_dirty);
		}
		/* Clean and old: reclaim may drop it instead of writing it out. */
		for (unsigned long i = 0; i < nr; i++)
			clear_pte_bits(&pt->e[pte_index(a + i * PAGE_SIZE)], PT_DIRTY | PT_YOUNG);
		folio_lru_op(mm->sys, folio, LRU_LAZYFREE);
	}
	return 0;
}

/* A whole PMD-mapped THP stays mapped: clean, old and lazily freed (madvise_free_huge_pmd). */
static int free_pmd(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start, unsigned long end,
		    void *priv)
{
	struct folio *folio = page_folio(pte_page(load_relaxed(pmd)));

	if (folio_is_zero(folio) || folio_maybe_mapped_shared(folio))
		return 0;
	if (pmd_partial(priv, folio, start, end))
		return 1;
	folio_clear(folio, PG_dirty);
	clear_pte_bits(pmd, PT_DIRTY | PT_YOUNG);
	folio_lru_op(mm->sys, folio, LRU_LAZYFREE);
	return 0;
}

/* ---- MADV_COLD and MADV_PAGEOUT ---- */

/* COLD: age a folio's mapping (the PTE's or the huge PMD's young bit) and the folio. */
static void age_pte(struct mm *mm, _Atomic uint64_t *ptep, struct folio *folio)
{
	clear_pte_bits(ptep, PT_YOUNG);
	folio_clear(folio, PG_referenced);
	folio_lru_op(mm->sys, folio, LRU_DEACTIVATE);
}

/* Clear a present PTE (the caller holds the ptl); its reference is the caller's to drop. */
static void unmap_pte(struct mm *mm, _Atomic uint64_t *ptep, struct folio *folio)
{
	/* An exchange: a hardware CAS may set young/dirty meanwhile (pgtable.c's P2). */
	uint64_t pte = xchg_relaxed(ptep, 0);

	if (pte & PT_DIRTY)
		folio_set(folio, PG_dirty);
	folio_remove_rmap_pte(folio, pte_page(pte), mm);
	mm_dec_counter(mm, folio_mm_counter(folio));
}

/*
 * PAGEOUT of the @nr PTEs at @a that map @folio, which this mapping maps
 * alone and wholly; @pte is the first. Context: the table's ptl held.
 * Return: true if the walk must stop for the folio to be finished outside
 * the ptl (w->unmapped, a file or shmem folio; w->split, an anonymous
 * large folio reclaim splits).
 */
static bool pageout_ptes(struct mm *mm, struct reclaim_walk *w, struct pte_table *pt,
			 unsigned long a, unsigned long nr, uint64_t pte, struct folio *folio)
{
	_Atomic uint64_t *ptep = &pt->e[pte_index(a)];
	unsigned long slot;

	spin_assert_held(&pt->ptl);
	folio_clear(folio, PG_referenced);
	/*
	 * An mlocked folio is put back (folio_putback_lru): one a locked VMA
	 * left behind when it lost VM_LOCKED without munlock (the source of a
	 * MREMAP_DONTUNMAP move of part of it) stays unevictable and mapped.
	 */
	if (folio_test(folio, PG_unevictable))
		return false;
	if (folio_is_anon(folio)) {
		if (folio->order && !folio_test(folio, PG_swapbacked)) {
			/*
			 * A lazily freed (or droppable) large folio is not split:
			 * try_to_unmap clears its entries as one batch (6.14+), the
			 * folio dirty if any was, and drops it whole if it is clean -
			 * droppable memory even dirty - and no one else holds it.
			 * Else the entries are put back as the batch's one value,
			 * every one young and dirty if any was; the folio is
			 * swap-backed again if written, and goes back active, whole.
			 */
			uint64_t acc = 0;

			for (unsigned long i = 0; i < nr; i++)
				acc |= load_relaxed(&pt->e[pte_index(a) + i]) & (PT_DIRTY | PT_YOUNG);
			if (acc & PT_DIRTY)
				folio_set(folio, PG_dirty);
			if ((!folio_test(folio, PG_dirty) || w->droppable) &&
			    folio_ref_count(folio) == folio_mapcount(folio)) {
				for (unsigned long i = 0; i < nr; i++)
					unmap_pte(mm, &pt->e[pte_index(a) + i], folio);
				for (unsigned long i = 0; i < nr; i++)
					folio_put(folio);	/* the last frees it */
				return false;
			}
			for (unsigned long i = 0; i < nr; i++) {
				_Atomic uint64_t *p = &pt->e[pte_index(a) + i];
				uint64_t v = load_relaxed(p);

				/* A CAS: the "hardware" may set bits meanwhile (pgtable.c's P2). */
				while ((v & acc) != acc && !cas_relaxed(p, &v, v | acc))
					;
			}
			if (!w->droppable)
				folio_set(folio, PG_swapbacked);
			folio_set(folio, PG_active);
			return false;
		}
		if (folio->order) {
			/*
			 * Reclaim cannot give it swap space whole (folio_alloc_swap):
			 * without swap at all, or - as on the hosts measured so far,
			 * whose swap files sit on rotational disks (mTHP stats
			 * swpout_fallback, never swpout) - without a free cluster of
			 * its order. It splits the folio and goes on page by page:
			 * without swap every page goes back active
			 * (activate_locked_split), with swap each is swapped out.
			 * The walk goes over the now small pages again.
			 */
			if (!mm->sys->cfg.swap_pages)
				folio_set(folio, PG_active);
			folio_get(folio);
			w->split = folio;
			w->split_nr = nr;
			w->resume = a;
			return true;
		}
		if (!folio_test(folio, PG_swapbacked)) {
			if (((!(pte & PT_DIRTY) && !folio_test(folio, PG_dirty)) || w->droppable) &&
			    folio_ref_count(folio) == 1) {
				/* Clean lazily freed memory is dropped, swap or not; droppable, even dirty. */
				unmap_pte(mm, ptep, folio);
				folio_put(folio);
				return false;
			}
			/* Written again since MADV_FREE: it must be kept after all. */
			if (!w->droppable)
				folio_set(folio, PG_swapbacked);
		}
		/*
		 * Reclaim that cannot swap it out puts it back active (activate_locked).
		 * A page still in the swap cache goes back to its own slot.
		 */
		if (!mm->sys->cfg.swap_pages ||
		    folio_ref_count(folio) != 1 + folio_test(folio, PG_swapcache)) {
			folio_set(folio, PG_active);
			return false;
		}
		slot = folio_test(folio, PG_swapcache) ? swap_cache_take_slot(mm->sys, folio) :
							 swap_alloc(mm->sys);
		if (!slot) {
			folio_set(folio, PG_active);
			return false;
		}
		/* An exchange, as in unmap_pte() (P2). */
		xchg_relaxed(ptep, (slot << PT_SWAP_SHIFT) | PT_SWAP);
		folio_remove_rmap_pte(folio, pte_page(pte), mm);
		mm_dec_counter(mm, MM_ANONPAGES);
		mm_inc_counter(mm, MM_SWAPENTS);
		folio_put(folio);
		return false;
	}
	/* File or shmem: unmapped; the cache decides after the ptl is dropped. */
	for (unsigned long i = 0; i < nr; i++)
		unmap_pte(mm, &pt->e[pte_index(a + i * PAGE_SIZE)], folio);
	/* All the mappings' references but one go here; that one, to the caller. */
	for (unsigned long i = 1; i < nr; i++)
		folio_put(folio);
	w->unmapped = folio;
	w->resume = a + nr * PAGE_SIZE;
	return true;
}

/* madvise_cold_or_pageout_pte_range: one walk, w->pageout says which. */
static int cold_or_pageout_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
				     unsigned long end, void *priv)
{
	struct reclaim_walk *w = priv;
	unsigned long nr;
	bool split;

	/*
	 * Incremental rollup: only [start, end) changes (folios mapped here
	 * alone, wholly; a partly covered one is split outside this hold).
	 */
	rollup_pte_hint(pt, NULL, start, (end - start) >> PAGE_SHIFT);

	for (unsigned long a = start; a < end; a += nr * PAGE_SIZE) {
		uint64_t pte = load_relaxed(&pt->e[pte_index(a)]);
		struct folio *folio;

		nr = 1;
		if (!pte_present(pte))
			continue;
		folio = page_folio(pte_page(pte));
		if (folio_is_zero(folio))
			continue;
		nr = batch_or_split(w, pt, a, end, pte, &split);
		if (split) {
			if (w->split)
				return 1;
			continue;
		}
		/* Only a folio this mapping maps alone, wholly. */
		if (folio_mapcount(folio) != (int)folio_nr_pages(folio))
			continue;
		if (w->pageout) {
			if (pageout_ptes(mm, w, pt, a, nr, pte, folio))
				return 1;
			continue;
		}
		for (unsigned long i = 0; i < nr; i++)
			age_pte(mm, &pt->e[pte_index(a + i * PAGE_SIZE)], folio);
	}
	return 0;
}

/*
 * A whole PMD-mapped THP: COLD ages it in place. PAGEOUT, as 6.18's
 * shrink_folio_list and try_to_unmap treat it:
 * - lazily freed (not swap-backed; droppable memory always is): the PMD is
 *   split (TTU_SPLIT_HUGE_PMD: thp_split_pmd counts one, thp_split_page
 *   none) and the folio, now PTE-mapped and whole, is unmapped as one
 *   batch (pageout_ptes): dropped if clean or droppable, else swap-backed
 *   again and kept whole, active. The range keeps its page table, so a
 *   later fault there maps small pages;
 * - swap-backed, with swap: split, mapping and folio, and its pages
 *   swapped out one by one (folio_alloc_swap has no room for it whole on
 *   the swap files measured so far: see the header); without swap: split,
 *   every page active.
 * Context: mm->page_table_lock (the walk's, for the huge PMD).
 */
static int cold_or_pageout_pmd(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start,
			       unsigned long end, void *priv)
{
	struct reclaim_walk *w = priv;
	struct folio *folio = page_folio(pte_page(load_relaxed(pmd)));

	if (folio_is_zero(folio) || folio_maybe_mapped_shared(folio))
		return 0;
	if (pmd_partial(w, folio, start, end))
		return 1;
	if (folio_mapcount(folio) != (int)folio_nr_pages(folio))
		return 0;
	if (!w->pageout) {
		age_pte(mm, pmd, folio);
		return 0;
	}
	folio_clear(folio, PG_referenced);
	if (folio_test(folio, PG_unevictable))
		return 0;	/* put back: folio_putback_lru */
	if (!folio_is_anon(folio)) {
		/* A shmem huge page: unmapped (try_to_unmap), then the cache decides. */
		folio_get(folio);
		zap_huge_pmd(mm, pmd);
		w->unmapped = folio;
		w->resume = end;
		return 1;
	}
	if (!folio_test(folio, PG_swapbacked)) {
		split_huge_pmd_locked(mm, pmd);
		w->resume = start;	/* again, as PTEs: pageout_ptes takes the folio whole */
		return 1;
	}
	if (!mm->sys->cfg.swap_pages)
		folio_set(folio, PG_active);
	folio_get(folio);
	w->split = folio;
	w->split_pmd = start & PMD_MASK;
	/* With swap the walk goes over the now small pages again to swap them out. */
	w->resume = mm->sys->cfg.swap_pages ? start : end;
	return 1;
}

/* Drop a clean regular-file folio from the page cache if only the cache holds it. */
static void drop_from_page_cache(struct folio *folio)
{
	struct vml_file *file = folio->mapping;
	unsigned long nr = folio_nr_pages(folio);
	bool dropped = false;

	spin_lock(&file->i_pages_lock);
	if (folio_ref_count(folio) == 1 && !folio_test(folio, PG_dirty) &&
	    file_folio_at(file, folio->index) == folio) {
		/*
		 * A regular file leaves a workingset shadow (which needs a slot;
		 * without memory for one the page just goes); shmem keeps swap
		 * entries there and leaves none.
		 */
		bool shadow = !file->shmem && !xmap_reserve(&file->swap_slots, folio->index, nr);

		for (unsigned long i = 0; i < nr; i++) {
			xmap_store(&file->pages, folio->index + i, 0);
			if (shadow)	/* workingset shadow */
				xmap_store(&file->swap_slots, folio->index + i, FILE_SHADOW);
		}
		file->nr_cached -= nr;
		dropped = true;
	}
	spin_unlock(&file->i_pages_lock);
	if (dropped)
		folio_put(folio);
}

/*
 * An unmapped file or shmem folio: a dirty shmem folio is written to swap
 * (if there is swap); a clean one, file or shmem, leaves the page cache
 * (shrink_folio_list: only a dirty folio is written out; a clean one goes
 * through __remove_mapping, and a shmem page never written holds zeroes).
 */
static void pageout_unmapped(struct folio *folio)
{
	struct vml_file *file = folio->mapping;

	folio_put(folio);	/* the mapping's reference; the cache holds one */
	if (!file->shmem || !folio_test(folio, PG_dirty))
		drop_from_page_cache(folio);
	else if (!shmem_writeout(file, folio))
		folio_set(folio, PG_active);	/* no swap to go to: activate_locked */
}

/* ---- splitting large folios ---- */

/* The PTE table mapping @folio's page @i in @vma, locked; NULL if none maps it there. */
static struct pte_table *folio_page_pte_lock(struct vma *vma, struct folio *folio,
					     unsigned long i, uint64_t *pte)
{
	unsigned long index = folio->index + i, addr;
	_Atomic uint64_t *pmd;
	struct pte_table *pt;
	int err = 0;

	if (index < vma->vm_pgoff || index - vma->vm_pgoff >= vma_pages(vma))
		return NULL;
	addr = vma->vm_start + ((index - vma->vm_pgoff) << PAGE_SHIFT);
	pmd = pmd_offset(vma->vm_mm, addr, false, &err);
	pt = pmd ? pte_table_get(vma->vm_mm, pmd, addr, false, &err) : NULL;
	if (!pt)
		return NULL;
	pte_lock(pt);
	*pte = load_relaxed(&pt->e[pte_index(addr)]);
	if (!pte_present(*pte) || pte_page(*pte) != &folio->pages[i]) {
		pte_unlock(pt);
		return NULL;
	}
	return pt;
}

/*
 * Page @i of @folio, mapped at @addr in @pt and holding nothing but zeroes,
 * is mapped to the zero page instead (try_to_map_unused_to_zeropage): the
 * entry keeps its young bit and protection, loses write and dirty, and
 * the page's mapping goes. Return: true if done (the caller drops the
 * mapping's folio reference). Context: no ptl; takes @pt's.
 */
static bool split_page_to_zero(struct mm *mm, struct pte_table *pt, unsigned long addr,
			       struct folio *folio, unsigned long i)
{
	struct folio *zero = sys_zero_folio(mm->sys);
	uint64_t pte;

	pte_lock(pt);
	pte = load_relaxed(&pt->e[pte_index(addr)]);
	if (!pte_present(pte) || pte_page(pte) != &folio->pages[i]) {
		pte_unlock(pt);
		return false;
	}
	folio_remove_rmap_pte(folio, &folio->pages[i], mm);
	mm_dec_counter(mm, MM_ANONPAGES);
	/* A CAS: a young bit the "hardware" sets meanwhile (pgtable.c) is kept. */
	while (!cas_relaxed(&pt->e[pte_index(addr)], &pte,
			    mk_pte(&zero->pages[0], pte & (PT_YOUNG | PT_PROTNONE | PT_PKEY))))
		;
	pte_unlock(pt);
	return true;
}

/*
 * The pages of @folio mapped in @vma get folios of their own, or (@zero_ok,
 * zero-filled) the zero page. Return: the mappings that went (the caller
 * drops their folio references). Context: as split_anon_folio().
 */
static unsigned long split_anon_folio_vma(struct vma *vma, struct folio *folio, bool zero_ok)
{
	struct mm *mm = vma->vm_mm;
	unsigned long nr = folio_nr_pages(folio), dropped = 0;
	int err = 0;

	for (unsigned long i = 0; i < nr; i++) {
		unsigned long index = folio->index + i, addr;
		_Atomic uint64_t *pmd;
		struct pte_table *pt;
		struct folio *small;
		uint64_t pte;

		if (index < vma->vm_pgoff || index - vma->vm_pgoff >= vma_pages(vma))
			continue;
		addr = vma->vm_start + ((index - vma->vm_pgoff) << PAGE_SHIFT);
		pmd = pmd_offset(mm, addr, false, &err);
		pt = pmd ? pte_table_get(mm, pmd, addr, false, &err) : NULL;
		if (!pt)
			continue;
		if (zero_ok && !page_has_data(&folio->pages[i])) {
			if (split_page_to_zero(mm, pt, addr, folio, i))
				dropped++;
			continue;
		}
		small = folio_alloc(mm->sys, 0, folio->nid);
		if (!small)
			break;		/* the rest stays large: harmless */
		pte_lock(pt);
		pte = load_relaxed(&pt->e[pte_index(addr)]);
		if (!pte_present(pte) || pte_page(pte) != &folio->pages[i]) {
			pte_unlock(pt);
			folio_put(small);
			continue;
		}
		store_relaxed(&small->flags, load_relaxed(&folio->flags) & ~PG_lru_batch);
		page_set_data(&small->pages[0], page_has_data(&folio->pages[i]));
		page_set_anon_exclusive(&small->pages[0], page_anon_exclusive(&folio->pages[i]));
		/* Mapped again into a locked VMA, a small folio is mlocked (mlock_vma_folio). */
		if ((vma->vm_flags & (VM_LOCKED | VM_SPECIAL)) == VM_LOCKED)
			mlock_folio(mm->sys, small);
		anon_vma_get(folio->mapping);
		small->mapping = folio->mapping;
		small->index = index;
		folio_add_rmap_pte(small, &small->pages[0], mm);	/* its first reference */
		folio_remove_rmap_pte(folio, &folio->pages[i], mm);
		/*
		 * The same entry bits (write, dirty, young, protnone), the new
		 * page; a CAS, so a young or dirty bit the "hardware" sets
		 * meanwhile (pgtable.c) is carried over, not lost.
		 */
		while (!cas_relaxed(&pt->e[pte_index(addr)], &pte,
				    mk_pte(&small->pages[0],
					   pte & ((PT_FLAGS_MASK | PT_HIGH_MASK) & ~PT_PRESENT))))
			;
		pte_unlock(pt);
		dropped++;
	}
	return dropped;
}

/*
 * split_anon_folio - split a PTE-mapped anonymous large folio in place:
 * each PTE mapping one of its pages, in any VMA of @mm (mprotect or mremap
 * may have spread them over several, all with its anon_vma), is pointed at
 * a new single-page folio with the same state (split_folio + remap_page).
 * The split first unmaps the folio (try_to_migrate), which marks it dirty
 * if any of its entries is: then every new folio is dirty (numa_maps
 * dirty=, no LazyFree), whatever its own entry says. A page that holds
 * only zeroes - never written - is not given a folio but mapped to the
 * zero page (6.12+; also on hosts booted without the zero page for
 * faults), unless its VMA is locked or the folio mlocked: it leaves Rss.
 * Context: mmap_lock(W); the folio is mapped by @mm only; no ptl.
 */
/*
 * May @vma map anonymous @folio? Its own anon_vma's, or - a fork child's
 * VMA, whose anon_vma the kernel chains to its parent's - an ancestor's
 * (the PTE walk then finds out).
 */
static bool vma_may_map_anon_folio(struct vma *vma, struct folio *folio)
{
	struct anon_vma *av = vma_anon_vma(vma);

	return av && (av == folio->mapping || vma->fork_child);
}

static void split_anon_folio(struct mm *mm, struct folio *folio)
{
	unsigned long nr = folio_nr_pages(folio), dropped = 0;
	struct vma_iterator vmi;
	struct vma *vma;

	vma_iter_init(&vmi, mm, 0);
	for_each_vma(vmi, vma) {
		if (!vma_may_map_anon_folio(vma, folio))
			continue;
		for (unsigned long i = 0; i < nr && !folio_test(folio, PG_dirty); i++) {
			uint64_t pte;
			struct pte_table *pt = folio_page_pte_lock(vma, folio, i, &pte);

			if (!pt)
				continue;
			if (pte & PT_DIRTY)
				folio_set(folio, PG_dirty);
			pte_unlock(pt);
		}
	}
	vma_iter_init(&vmi, mm, 0);
	for_each_vma(vmi, vma) {
		/* try_to_map_unused_to_zeropage: never in a locked VMA, nor for an mlocked folio */
		bool zero_ok = !(vma->vm_flags & VM_LOCKED) && !folio_test(folio, PG_unevictable);

		if (vma_may_map_anon_folio(vma, folio))
			dropped += split_anon_folio_vma(vma, folio, zero_ok);
	}
	while (dropped--)
		folio_put(folio);	/* the old mappings' references */
}

/*
 * Unmap @folio's pages from @vma (any mm). Context: i_mmap_rwsem held, no
 * ptl. @vma's mm may be unmapping around it, freeing tables, meanwhile.
 */
static void unmap_folio_vma(struct vma *vma, struct folio *folio)
{
	struct mm *mm = vma->vm_mm;

	for (unsigned long i = 0; i < folio_nr_pages(folio); i++) {
		unsigned long index = folio->index + i, addr;
		struct pte_table *pt;
		uint64_t pte;

		if (index < vma->vm_pgoff || index - vma->vm_pgoff >= vma_pages(vma))
			continue;
		addr = vma->vm_start + ((index - vma->vm_pgoff) << PAGE_SHIFT);
		pt = pte_offset_map_lock(mm, addr);
		if (!pt)
			continue;
		pte = load_relaxed(&pt->e[pte_index(addr)]);
		if (pte_present(pte) && pte_page(pte) == &folio->pages[i]) {
			unmap_pte(mm, &pt->e[pte_index(addr)], folio);
			folio_put(folio);	/* the mapping's reference; the caller holds one */
		}
		pte_unmap_unlock(pt);
	}
}

/*
 * split_file_folio - split a clean large page-cache folio into single pages
 * (split_folio). It is unmapped from every VMA of every mm first, through
 * the file's reverse map, and - a file folio - not mapped again: its pages
 * fault back in one by one. Fails (leaves it whole) if someone else holds a
 * reference, e.g. a fault that is mapping it right now.
 * Context: the caller holds a reference on @folio and no page-table lock.
 */
void split_file_folio(struct folio *folio)
{
	split_file_folio_at(folio, -1);
}

/*
 * The pieces of a split of an order-@order folio: uniform (@at < 0) into
 * single pages, or non-uniform at page @at (try_folio_split: halve, keep
 * the half without @at whole, go on with the other down to @at alone).
 * Return: how many, each as first page and order in @first/@ord.
 */
static unsigned long split_pieces(unsigned int order, long at, unsigned long *first,
				  unsigned int *ord)
{
	unsigned long n = 0, start = 0;

	if (at < 0) {
		for (unsigned long i = 0; i < (1UL << order); i++) {
			first[n] = i;
			ord[n++] = 0;
		}
		return n;
	}
	/* Ends: the order drops by one each step. */
	for (unsigned int o = order; o > 0; o--) {
		unsigned long half = 1UL << (o - 1);

		if ((unsigned long)at < start + half) {
			first[n] = start + half;
		} else {
			first[n] = start;
			start += half;
		}
		ord[n++] = o - 1;
	}
	first[n] = start;
	ord[n++] = 0;
	return n;
}

void split_file_folio_at(struct folio *folio, long at)
{
	struct vml_file *file = folio->mapping;
	unsigned long nr = folio_nr_pages(folio);
	struct folio *small[1U << HPAGE_PMD_ORDER];
	unsigned long first[1U << HPAGE_PMD_ORDER], nr_pieces;
	unsigned int ord[1U << HPAGE_PMD_ORDER];
	struct vma *vma;

	/* The mappings of its pages, in every mm (try_to_unmap's rmap_walk_file). */
	i_mmap_lock_read(file);
	vma_interval_tree_foreach(vma, file, folio->index, folio->index + nr - 1)
		unmap_folio_vma(vma, folio);
	i_mmap_unlock_read(file);

	nr_pieces = split_pieces(folio->order, at, first, ord);
	for (unsigned long i = 0; i < nr_pieces; i++) {
		small[i] = folio_alloc(file->sys, ord[i], folio->nid);
		if (!small[i]) {
			while (i--)
				folio_put(small[i]);
			return;
		}
	}
	spin_lock(&file->i_pages_lock);
	/* Only the cache and the caller may hold it (the kernel's expected refcount). */
	if (folio_ref_count(folio) != 2 || folio_mapcount(folio) ||
	    file_folio_at(file, folio->index) != folio) {
		spin_unlock(&file->i_pages_lock);
		for (unsigned long i = 0; i < nr_pieces; i++)
			folio_put(small[i]);
		return;
	}
	for (unsigned long i = 0; i < nr_pieces; i++) {
		small[i]->mapping = file;
		small[i]->index = folio->index + first[i];
		store_relaxed(&small[i]->flags, load_relaxed(&folio->flags) & ~PG_lru_batch);
		/* its allocation reference; the slots exist: the large folio filled them */
		for (unsigned long k = 0; k < (1UL << ord[i]); k++)
			xmap_store(&file->pages, small[i]->index + k, (uintptr_t)small[i]);
	}
	spin_unlock(&file->i_pages_lock);
	folio_put(folio);	/* the cache's reference */
}

/* ---- the walk ---- */

/*
 * Walk [start, end) step by step, doing outside the page-table lock what a
 * step hands back. Context: mmap_lock(W) (madvise), the range's VMAs allow it.
 */
static void reclaim_walk_range(struct mm *mm, unsigned long start, unsigned long end,
			       const struct pt_walk_ops *ops, bool pageout)
{
	/* The range lies in one VMA (madvise advises VMA by VMA). */
	struct vma *range_vma = vma_lookup(mm, start);
	bool droppable = range_vma && (range_vma->vm_flags & VM_DROPPABLE);

	/* Ends: each step resumes past what it handled, or splits a folio and retries once. */
	while (start < end) {
		struct reclaim_walk w = { .resume = end, .pageout = pageout, .droppable = droppable };
		struct folio *folio;

		walk_page_range(mm, start, end, ops, &w);
		folio = w.split;
		if (folio && folio_is_anon(folio)) {
			int mapped = folio_mapcount(folio);

			if (w.split_pmd)
				split_huge_pmd_address(mm, w.split_pmd);
			split_anon_folio(mm, folio);
			/* Nothing split off (no memory): go past it rather than back to it. */
			if (!w.split_pmd && folio_mapcount(folio) == mapped)
				w.resume += w.split_nr * PAGE_SIZE;
		} else if (folio) {
			/* A shmem huge page's PMD mapping goes first (split_folio's unmap). */
			if (w.split_pmd)
				split_huge_pmd_address(mm, w.split_pmd);
			split_file_folio(folio);
		}
		if (folio)
			folio_put(folio);
		if (w.unmapped)
			pageout_unmapped(w.unmapped);
		start = w.resume;
	}
}

void madvise_free_range(struct mm *mm, unsigned long start, unsigned long end)
{
	static const struct pt_walk_ops ops = { .pte_range = free_pte_range,
						.pmd_huge = free_pmd };

	/* madvise_free_single_vma drains before its walk: what an earlier VMA queued shows. */
	lru_add_drain(mm->sys);
	reclaim_walk_range(mm, start, end, &ops, false);
}

static const struct pt_walk_ops cold_or_pageout_ops = {
	.pte_range = cold_or_pageout_pte_range,
	.pmd_huge = cold_or_pageout_pmd,
};

void madvise_cold_range(struct mm *mm, unsigned long start, unsigned long end)
{
	lru_add_drain(mm->sys);
	reclaim_walk_range(mm, start, end, &cold_or_pageout_ops, false);
}

void madvise_pageout_range(struct mm *mm, unsigned long start, unsigned long end)
{
	lru_add_drain(mm->sys);
	reclaim_walk_range(mm, start, end, &cold_or_pageout_ops, true);
}
