// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * collapse.c - anonymous collapse (docs/kernel.md §6).
 *
 * Scan under mmap_lock(R) and the PTE table's lock: count empty/zero,
 * swapped and shared entries against the max_ptes_* limits and require a
 * recently referenced page. Then, like the kernel: drop the read lock,
 * allocate the huge page, take the read lock to revalidate and bring
 * swapped pages back, drop it, take mmap_lock(W), revalidate again,
 * write-lock the VMA, detach the PTE table from the PMD, empty it (the
 * pages' metadata is "copied": there are no contents), install the huge
 * page with the emptied table deposited for a later split, and unlock.
 * Lock order: mmap_lock(W) -> VMA write lock -> page_table_lock -> ptl.
 */
#include "platform/platform.h"
#include "khugepaged/collapse.h"
#include "mm/folio.h"
#include "mm/swap.h"
#include "mm/huge_memory.h"
#include "mm/internal.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm/rmap.h"
#include "mm/vma.h"
#include "mm/vma_lock.h"
#include "util/clock.h"
#include "util/compiler.h"

bool collapse_vma_eligible(struct vma *vma)
{
	unsigned long hstart = (vma->vm_start + PMD_SIZE - 1) & PMD_MASK;
	unsigned long hend = vma->vm_end & PMD_MASK;

	/* khugepaged needs an anon_vma (unlike smaps and the fault path). */
	return thp_vma_allowable_order(vma, vma->vm_flags, TVA_KHUGEPAGED, HPAGE_PMD_ORDER) &&
	       vma_anon_vma(vma) && hstart < hend;
}

static void read_unlock(struct mm *mm, struct collapse_control *cc)
{
	uint64_t now = plat_now_ns(), cpu = plat_thread_cpu_ns();

	mmap_read_unlock(mm);
	if (cc->note_unlock)
		cc->note_unlock(cc->arg, now - cc->lock_taken_ns, cpu - cc->lock_taken_cpu);
}

static void read_lock(struct mm *mm, struct collapse_control *cc)
{
	mmap_read_lock(mm);
	cc->lock_taken_ns = plat_now_ns();
	cc->lock_taken_cpu = plat_thread_cpu_ns();
}

struct scan_counts {
	unsigned int none_or_zero, swapped, shared, referenced, present;
};

/* Count the PMD range's entries. Context: the table's ptl held. */
static enum scan_result count_ptes(struct pte_table *pt, struct collapse_control *cc,
				   struct scan_counts *c)
{
	spin_assert_held(&pt->ptl);
	*c = (struct scan_counts){ 0 };
	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++) {
		uint64_t pte = load_relaxed(&pt->e[i]);
		struct folio *folio;

		if (pte_is_guard(pte))
			return SCAN_PTE_NON_PRESENT;	/* the kernel never collapses over one */
		if (pte_is_swap(pte)) {
			if (++c->swapped > cc->max_ptes_swap)
				return SCAN_EXCEED_SWAP;
			continue;
		}
		if (!pte_present(pte) || folio_is_zero(page_folio(pte_page(pte)))) {
			if (++c->none_or_zero > cc->max_ptes_none)
				return SCAN_EXCEED_NONE;
			continue;
		}
		folio = page_folio(pte_page(pte));
		if (!folio_is_anon(folio))
			return SCAN_PAGE_NOT_ANON;
		/* A page counts as shared if any part of its folio may be (6.18). */
		if (folio_maybe_mapped_shared(folio) && ++c->shared > cc->max_ptes_shared)
			return SCAN_EXCEED_SHARED;
		if ((pte & PT_YOUNG) || folio_test(folio, PG_referenced))
			c->referenced++;
		c->present++;
	}
	if (!c->referenced || (c->swapped && c->referenced < HPAGE_PMD_NR / 2))
		return SCAN_NO_REFERENCED;
	return SCAN_SUCCEED;
}

static struct pte_table *pmd_table(struct mm *mm, unsigned long addr, enum scan_result *res)
{
	_Atomic uint64_t *pmd;
	uint64_t v;
	int err = 0;

	pmd = pmd_offset(mm, addr, false, &err);
	/* acquire: pairs with the release that published the entry (pgtable.c's P1) */
	v = pmd ? load_acquire(pmd) : 0;
	if (!v) {
		*res = SCAN_PMD_NULL;
		return NULL;
	}
	if (pmd_is_huge(v)) {
		*res = SCAN_PMD_MAPPED;
		return NULL;
	}
	return pmd_pte_table(v);
}

/* Context: mmap_lock held. Is [addr, addr + PMD_SIZE) still collapsible in the same VMA? */
static struct vma *revalidate(struct mm *mm, unsigned long addr)
{
	struct vma *vma = vma_lookup(mm, addr);

	if (!vma || !collapse_vma_eligible(vma) || !thp_vma_suitable(vma, addr))
		return NULL;
	return vma;
}

static enum scan_result collapse_huge_page(struct mm *mm, unsigned long addr, unsigned int swapped,
					   struct collapse_control *cc)
{
	struct scan_counts counts;
	enum scan_result res = SCAN_SUCCEED;
	_Atomic uint64_t *pmd;
	struct pte_table *pt;
	struct folio *folio;
	struct vma *vma;
	uint64_t bits;
	int err = 0;

	read_unlock(mm, cc);
	folio = folio_alloc(mm->sys, HPAGE_PMD_ORDER, fault_nid(mm));
	if (!folio)
		return SCAN_ALLOC_FAIL;

	/* Bring swapped entries back under the read lock (__collapse_huge_page_swapin). */
	if (swapped) {
		read_lock(mm, cc);
		vma = revalidate(mm, addr);
		for (unsigned long a = addr; vma && a < addr + PMD_SIZE; a += PAGE_SIZE) {
			pt = pmd_table(mm, a, &res);
			if (pt && pte_is_swap(load_relaxed(&pt->e[pte_index(a)])))
				handle_mm_fault(vma, a, 0);
		}
		read_unlock(mm, cc);
		if (!vma) {
			folio_put(folio);
			return SCAN_VMA_CHECK;
		}
	}

	mmap_write_lock(mm);
	vma = revalidate(mm, addr);
	if (!vma) {
		res = SCAN_VMA_CHECK;
		goto out;
	}
	vma_start_write(vma);	/* no faults, no per-VMA readers from here on */
	pt = pmd_table(mm, addr, &res);
	if (!pt)
		goto out;
	pte_lock(pt);
	res = count_ptes(pt, cc, &counts);
	pte_unlock(pt);
	if (res != SCAN_SUCCEED)
		goto out;

	/* Detach the table: lock-free accessors now fault and find the huge PMD. */
	pmd = pmd_offset(mm, addr, false, &err);
	spin_lock(&mm->page_table_lock);
	/* release: pairs with the walkers' acquire loads (P1; a 0 publishes nothing) */
	store_release(pmd, 0);
	spin_unlock(&mm->page_table_lock);

	bits = PT_DIRTY | PT_YOUNG | ((vma->vm_flags & VM_WRITE) ? PT_WRITE : 0);
	pte_lock(pt);
	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++) {
		/* An exchange: a hardware walk that began before the detach may CAS young/dirty (P2). */
		uint64_t pte = xchg_relaxed(&pt->e[i], 0);
		struct folio *old;

		if (!pte_present(pte))
			continue;
		old = page_folio(pte_page(pte));
		if (folio_is_zero(old))
			continue;
		/* The copy (__collapse_huge_page_copy): what each page held; none and zero stay zero. */
		page_set_data(&folio->pages[i], page_has_data(pte_page(pte)));
		folio_remove_rmap_pte(old, pte_page(pte), mm);
		mm_dec_counter(mm, MM_ANONPAGES);
		free_swap_cache(mm->sys, old);
		folio_put(old);
	}
	pte_unlock(pt);

	folio_set(folio, PG_anon | PG_swapbacked);
	for (unsigned int i = 0; i < HPAGE_PMD_NR; i++)
		page_set_anon_exclusive(&folio->pages[i], true);	/* RMAP_EXCLUSIVE */
	anon_vma_get(vma_anon_vma(vma));
	folio->mapping = vma_anon_vma(vma);
	folio->index = vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT);
	spin_lock(&mm->page_table_lock);
	huge_pmd_install(mm, pmd, folio, pt, bits);	/* the emptied table is deposited */
	spin_unlock(&mm->page_table_lock);
	folio = NULL;
out:
	mmap_write_unlock(mm);
	if (folio)
		folio_put(folio);
	return res;
}

enum scan_result collapse_scan_pmd(struct mm *mm, struct vma *vma, unsigned long addr,
				   struct collapse_control *cc, bool *lock_dropped)
{
	struct scan_counts counts;
	enum scan_result res = SCAN_FAIL;
	struct pte_table *pt;

	mmap_assert_locked(mm);
	*lock_dropped = false;
	pt = pmd_table(mm, addr, &res);
	if (!pt)
		return res;
	pte_lock(pt);
	res = count_ptes(pt, cc, &counts);
	pte_unlock(pt);
	if (res != SCAN_SUCCEED)
		return res;
	(void)vma;
	*lock_dropped = true;
	return collapse_huge_page(mm, addr, counts.swapped, cc);
}
