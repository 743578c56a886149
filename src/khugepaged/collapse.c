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
#include <errno.h>

#include "khugepaged/collapse.h"
#include "platform/platform.h"
#include "mm/rollup.h"
#include "mm/file.h"
#include "sync/spinlock.h"
#include "vmalock/khugepaged.h"
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
#include "util/alloc.h"
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
			if (++c->swapped > cc->max_ptes_swap && !cc->madv)
				return SCAN_EXCEED_SWAP;
			continue;
		}
		if (!pte_present(pte) || folio_is_zero(page_folio(pte_page(pte)))) {
			if (++c->none_or_zero > cc->max_ptes_none && !cc->madv)
				return SCAN_EXCEED_NONE;
			continue;
		}
		folio = page_folio(pte_page(pte));
		if (!folio_is_anon(folio))
			return SCAN_PAGE_NOT_ANON;
		/* A page counts as shared if any part of its folio may be (6.18). */
		if (!cc->madv && folio_maybe_mapped_shared(folio) &&
		    ++c->shared > cc->max_ptes_shared)
			return SCAN_EXCEED_SHARED;
		if ((pte & PT_YOUNG) || folio_test(folio, PG_referenced))
			c->referenced++;
		c->present++;
	}
	if (!cc->madv && (!c->referenced || (c->swapped && c->referenced < HPAGE_PMD_NR / 2)))
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

/*
 * Context: mmap_lock held. Is [addr, addr + PMD_SIZE) still collapsible in
 * the same VMA (hugepage_vma_revalidate, expecting anonymous memory)?
 */
static struct vma *revalidate(struct mm *mm, unsigned long addr, struct collapse_control *cc)
{
	struct vma *vma = vma_lookup(mm, addr);

	if (!vma || !thp_vma_suitable(vma, addr))
		return NULL;
	if (cc->madv)
		return thp_vma_allowable_order(vma, vma->vm_flags, TVA_FORCED_COLLAPSE,
					       HPAGE_PMD_ORDER) &&
		       vma_is_anonymous(vma) && vma_anon_vma(vma) ? vma : NULL;
	return collapse_vma_eligible(vma) ? vma : NULL;
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
		vma = revalidate(mm, addr, cc);
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
	vma = revalidate(mm, addr, cc);
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
	huge_pmd_install(mm, pmd, folio, pt, bits, addr);	/* the emptied table is deposited */
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

/* ---- MADV_COLLAPSE ---- */

/*
 * collapse_file for shmem: the page cache's pages [@index, @index + 512)
 * become one PMD-sized folio (a new one; holes and swapped pages become
 * its pages too - the model keeps no data), after every old page was
 * unmapped from every mapping (try_to_unmap). A PMD-sized folio there
 * already is taken as it is (SCAN_PTE_MAPPED_HUGEPAGE). The range must lie
 * within the file. Return: SCAN_SUCCEED with the folio (a reference) in
 * *@out. Context: no lock held.
 */
static enum scan_result collapse_file(struct vml_file *file, unsigned long index,
				      struct folio **out)
{
	struct folio *folio, *old[HPAGE_PMD_NR];
	unsigned long nr_old = 0;

	if (index + HPAGE_PMD_NR > file_nr_pages(file))
		return SCAN_FAIL;
	spin_lock(&file->i_pages_lock);
	folio = file_folio_at(file, index);
	if (folio && folio->order == HPAGE_PMD_ORDER && folio->index == index) {
		folio_get(folio);
		spin_unlock(&file->i_pages_lock);
		*out = folio;
		return SCAN_SUCCEED;
	}
	spin_unlock(&file->i_pages_lock);
	folio = folio_alloc(file->sys, HPAGE_PMD_ORDER, 0);
	if (!folio)
		return SCAN_ALLOC_FAIL;
	folio->mapping = file;
	folio->index = index;
	/* collapse_file marks a shmem folio dirty: it is the only copy */
	folio_set(folio, PG_swapbacked | PG_dirty);
	unmap_mapping_pages(file, index, index + HPAGE_PMD_NR - 1, false);

	spin_lock(&file->i_pages_lock);
	if (xmap_reserve(&file->pages, index, HPAGE_PMD_NR)) {
		spin_unlock(&file->i_pages_lock);
		folio_put(folio);
		return SCAN_ALLOC_FAIL;
	}
	for (unsigned long i = index; i < index + HPAGE_PMD_NR; i++) {
		struct folio *f = file_folio_at(file, i);
		unsigned long slot = file_swap_at(file, i);

		if (f && (!nr_old || old[nr_old - 1] != f)) {
			old[nr_old++] = f;
			file->nr_cached -= folio_nr_pages(f);
		}
		if (slot) {
			/* shmem_swapin: the page is read back into the new folio */
			xmap_store(&file->swap_slots, i, 0);
			fetch_sub_relaxed(&file->swapped, 1);
			swap_free_entry(file->sys, slot);
		}
		xmap_store(&file->pages, i, (uintptr_t)folio);	/* the cache's reference */
	}
	file->nr_cached += HPAGE_PMD_NR;
	spin_unlock(&file->i_pages_lock);
	for (unsigned long i = 0; i < nr_old; i++)
		folio_put(old[i]);	/* the cache's reference on each old folio */
	folio_get(folio);
	*out = folio;
	return SCAN_SUCCEED;
}

/* retract_page_tables: a mapping with no private copies loses its emptied table. */
static void retract_one(struct mm *mm, struct vma *vma, unsigned long start, unsigned long end,
			void *arg)
{
	if (vma_anon_vma(vma) || (start & ~PMD_MASK) || end - start != PMD_SIZE)
		return;
	retract_empty_pte_table(mm, start);
}

/*
 * collapse_pte_mapped_thp(install_pmd): map @folio by the PMD at @addr in
 * the caller's VMA, once the table there maps nothing else (its entries are
 * empty or map @folio's own pages, which are zapped first).
 * Context: mmap_lock(R).
 */
static enum scan_result collapse_pte_mapped_thp(struct mm *mm, unsigned long addr,
						struct folio *folio)
{
	struct vma *vma = vma_lookup(mm, addr);
	_Atomic uint64_t *pmd;
	struct pte_table *pt, *holder;
	uint64_t v, bits;
	bool foreign = false;
	int err = 0;

	if (!vma || vma->vm_file != folio->mapping || !thp_vma_suitable(vma, addr) ||
	    (vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT)) != folio->index ||
	    !thp_vma_allowable_order(vma, vma->vm_flags, TVA_FORCED_COLLAPSE, HPAGE_PMD_ORDER))
		return SCAN_VMA_CHECK;
	pmd = pmd_offset(mm, addr, true, &err);
	if (!pmd)
		return SCAN_ALLOC_FAIL;
	/* acquire: pairs with the release that published the entry (pgtable.c's P1) */
	v = load_acquire(pmd);
	if (pmd_is_huge(v))
		return page_folio(pte_page(v)) == folio ? SCAN_PMD_MAPPED : SCAN_FAIL;
	if (v) {
		pt = pmd_pte_table(v);
		pte_lock(pt);
		for (unsigned int i = 0; i < PTRS_PER_TABLE && !foreign; i++) {
			uint64_t pte = load_relaxed(&pt->e[i]);

			foreign = pte && (!pte_present(pte) || pte_page(pte) != &folio->pages[i]);
		}
		pte_unlock(pt);
		if (foreign)
			return SCAN_FAIL;	/* a private copy, a guard marker: keep the table */
		zap_mapping_range(mm, addr, addr + PMD_SIZE, false);
		if (!retract_empty_pte_table(mm, addr))
			return SCAN_FAIL;
	}
	/* set_huge_pmd: young and dirty, writable where the mapping is shared and writable */
	bits = PT_YOUNG | PT_DIRTY |
	       ((vma->vm_flags & (VM_WRITE | VM_SHARED)) == (VM_WRITE | VM_SHARED) ? PT_WRITE : 0);
	holder = rollup_leaf_holder(mm, &err);	/* incremental rollup: the leaf's share */
	if (err)
		return SCAN_FAIL;
	spin_lock(&mm->page_table_lock);
	if (load_relaxed(pmd)) {
		spin_unlock(&mm->page_table_lock);
		vml_free(holder);
		return SCAN_FAIL;	/* a fault mapped something meanwhile */
	}
	folio_get(folio);	/* the mapping's */
	huge_pmd_install(mm, pmd, folio, holder, bits, addr);
	spin_unlock(&mm->page_table_lock);
	return SCAN_SUCCEED;
}

/*
 * MADV_COLLAPSE of one PMD range of a shmem VMA (hpage_collapse_scan_file,
 * collapse_file, then collapse_pte_mapped_thp). Context: mmap_lock(R) held
 * on entry, none on return (the kernel drops it for the file collapse).
 */
static enum scan_result collapse_shmem_pmd(struct mm *mm, struct vma *vma, unsigned long addr)
{
	struct vml_file *file = vma->vm_file;
	unsigned long index = (vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT));
	struct folio *folio = NULL;
	enum scan_result r;

	vml_file_get(file);
	mmap_read_unlock(mm);
	r = file->shmem ? collapse_file(file, index, &folio) : SCAN_FAIL;
	if (r == SCAN_SUCCEED) {
		i_mmap_for_each_locked(file, index, index + HPAGE_PMD_NR - 1, retract_one, NULL);
		mmap_read_lock(mm);
		r = collapse_pte_mapped_thp(mm, addr, folio);
		mmap_read_unlock(mm);
		folio_put(folio);
	}
	vml_file_put(file);
	return r;
}

/* madvise_collapse_errno: what the caller may do about the last failure. */
static int madvise_collapse_errno(enum scan_result r)
{
	switch (r) {
	case SCAN_ALLOC_FAIL:
		return -ENOMEM;
	case SCAN_EXCEED_NONE:
		return -EBUSY;
	default:
		return -EINVAL;	/* intrinsic to the range: trying again will not help */
	}
}

int madvise_collapse(struct vma *vma, unsigned long start, unsigned long end, bool *lock_dropped)
{
	struct mm *mm = vma->vm_mm;
	struct collapse_control cc = { .madv = true };
	enum scan_result last_fail = SCAN_FAIL;
	unsigned long hstart, hend, thps = 0;
	bool locked = true;

	mmap_assert_locked(mm);
	if (!thp_vma_allowable_order(vma, vma->vm_flags, TVA_FORCED_COLLAPSE, HPAGE_PMD_ORDER))
		return -EINVAL;
	lru_add_drain(mm->sys);	/* lru_add_drain_all: no page waits in a batch */
	hstart = (start + PMD_SIZE - 1) & PMD_MASK;
	hend = end & PMD_MASK;
	/* Ends: addr moves a PMD range each step up to hend, which only shrinks. */
	for (unsigned long addr = hstart; addr < hend; addr += PMD_SIZE) {
		enum scan_result r;
		bool dropped = false;

		if (!locked) {
			mmap_read_lock(mm);
			locked = true;
			/* hugepage_vma_revalidate(expect_anon = false) */
			vma = vma_lookup(mm, addr);
			if (!vma || !thp_vma_suitable(vma, addr) ||
			    !thp_vma_allowable_order(vma, vma->vm_flags, TVA_FORCED_COLLAPSE,
						     HPAGE_PMD_ORDER)) {
				last_fail = SCAN_VMA_CHECK;
				break;
			}
			hend = VML_MIN(hend, vma->vm_end & PMD_MASK);
		}
		if (vma_is_anonymous(vma)) {
			r = collapse_scan_pmd(mm, vma, addr, &cc, &dropped);
		} else {
			r = collapse_shmem_pmd(mm, vma, addr);
			dropped = true;
		}
		if (dropped) {
			locked = false;
			*lock_dropped = true;
		}
		if (r == SCAN_SUCCEED || r == SCAN_PMD_MAPPED) {
			thps++;
			continue;
		}
		last_fail = r;
		/* a range that holds nothing to collapse: the others are still tried */
		if (r != SCAN_PMD_NULL && r != SCAN_PTE_NON_PRESENT)
			break;
	}
	if (!locked)
		mmap_read_lock(mm);
	/* unsigned, as the kernel's: a range inside one PMD block fails unless empty */
	return thps == ((hend - hstart) >> PMD_SHIFT) ? 0 : madvise_collapse_errno(last_fail);
}

int vml_madvise_collapse(struct vml_mm *umm, unsigned long start, unsigned long len_in)
{
	struct mm *mm = to_mm(umm);
	unsigned long len, end, tmp;
	int unmapped = 0, err = 0;
	struct vma *vma;

	if (!mm || offset_in_page(start))
		return -EINVAL;
	len = PAGE_ALIGN(len_in);
	if (len_in && !len)
		return -EINVAL;
	end = start + len;
	if (end < start)
		return -EINVAL;
	if (end == start)
		return 0;
	/* madvise_walk_vmas under MADVISE_MMAP_READ_LOCK: a hole is -ENOMEM, skipped */
	mmap_read_lock(mm);
	vma = find_vma(mm, start);
	/* Ends: start moves past one VMA each step, up to end. */
	for (;;) {
		bool dropped = false;

		if (!vma) {
			unmapped = -ENOMEM;
			break;
		}
		if (start < vma->vm_start) {
			unmapped = -ENOMEM;
			start = vma->vm_start;
			if (start >= end)
				break;
		}
		tmp = VML_MIN(vma->vm_end, end);
		err = madvise_collapse(vma, start, tmp, &dropped);
		if (err)
			break;
		start = tmp;
		if (start >= end)
			break;
		vma = find_vma(mm, start);	/* the lock may have been dropped */
	}
	mmap_read_unlock(mm);
	return err ? err : unmapped;
}
