// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fault.c - handle_mm_fault: anonymous and file faults, copy-on-write,
 * swap-in, fault-around (mm/memory.c). The arch handler that calls it is
 * user_fault.c; populate (GUP) is gup.c.
 *
 * A fault under the VMA lock may need mmap_lock after all: the first write
 * fault on a VMA without an anon_vma looks at the neighbouring VMAs, so it
 * needs mmap_lock for read; under the VMA lock it only tries for it
 * (mmap_read_trylock) and otherwise returns VM_FAULT_RETRY, and the handler
 * redoes the fault under mmap_lock (vmf_anon_prepare, rmap.c).
 */
#include "mm/rollup.h"
#include "mm/file.h"
#include "mm/folio.h"
#include "mm/huge_memory.h"
#include "mm/internal.h"
#include "mm/mm.h"
#include "mm/pkeys.h"
#include "mm/pgtable.h"
#include "mm/rmap.h"
#include "mm/swap.h"
#include "mm/vma.h"
#include "platform/platform.h"
#include "util/alloc.h"
#include "util/compiler.h"

/*
 * A new anonymous folio of 2^@order pages for the naturally aligned block
 * around @addr in @vma. Mapped into a locked VMA, it is mlocked
 * (folio_add_lru_vma).
 */
static struct folio *folio_alloc_anon(struct vma *vma, unsigned long addr, unsigned int order)
{
	struct folio *folio = folio_alloc(vma->vm_mm->sys, order, fault_nid(vma->vm_mm));
	struct anon_vma *av = vma_anon_vma(vma);

	if (!folio)
		return NULL;
	addr &= ~((PAGE_SIZE << order) - 1);
	/* A droppable VMA's pages are never swap-backed (folio_add_new_anon_rmap). */
	folio_set(folio, PG_anon | ((vma->vm_flags & VM_DROPPABLE) ? 0 : PG_swapbacked));
	anon_vma_get(av);
	folio->mapping = av;
	folio->index = vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT);
	return folio;
}

/* A small anonymous page for @addr (copy-on-write, swap-in, private file COW). */
static struct folio *alloc_anon_folio(struct vma *vma, unsigned long addr)
{
	return folio_alloc_anon(vma, addr, 0);
}

/* Are the @nr entries of @pt from @addr on all none? Context: racy, or under the ptl. */
static bool pte_range_none(struct pte_table *pt, unsigned long addr, unsigned long nr)
{
	for (unsigned long i = 0; i < nr; i++)
		if (load_relaxed(&pt->e[pte_index(addr) + i]))
			return false;
	return true;
}

/*
 * The order of the folio an anonymous fault at @addr allocates (6.18
 * alloc_anon_folio): of the sizes below the PMD size that @vma allows
 * (thp_vma_allowable_orders) and whose naturally aligned block around @addr
 * lies inside it, the largest whose block is all pte_none - a mapped page,
 * a swap entry, a guard marker or the zero page in it rules the size out,
 * and the next smaller one is tried; else a small page (order 0).
 * Context: reads @pt without its lock, as the kernel does: the caller
 * rechecks the block under the ptl.
 */
static unsigned int anon_fault_order(struct vma *vma, struct pte_table *pt, unsigned long addr)
{
	unsigned long orders = thp_vma_allowable_orders(vma, vma->vm_flags, TVA_PAGEFAULT,
							(1UL << HPAGE_PMD_ORDER) - 1);
	unsigned int order;

	orders = thp_vma_suitable_orders(vma, addr, orders);
	/* Ends: each step takes one order out of @orders. */
	for (order = orders ? highest_order(orders) : 0; orders; order = next_order(&orders, order)) {
		unsigned long nr = 1UL << order;

		if (pte_range_none(pt, addr & ~((nr << PAGE_SHIFT) - 1), nr))
			return order;
	}
	return 0;
}

/*
 * A small folio mapped into a VM_LOCKED VMA is mlocked (mlock_vma_folio):
 * through the mlock batch, so it is unevictable only when that moves.
 */
static void mlock_vma_folio(struct vma *vma, struct folio *folio)
{
	if ((vma->vm_flags & (VM_LOCKED | VM_SPECIAL)) == VM_LOCKED && !folio->order &&
	    !folio_is_zero(folio))
		mlock_folio(vma->vm_mm->sys, folio);
}

/*
 * A new anonymous folio joins the LRU (folio_add_lru_vma): in a VM_LOCKED
 * VMA through the mlock batch (mlock_new_folio), off the LRU until the
 * batch moves - at once for a large folio, with every small one queued
 * before it; elsewhere at once (the model has no LRU add batch).
 */
static void folio_add_lru_vma(struct vma *vma, struct folio *folio)
{
	if ((vma->vm_flags & (VM_LOCKED | VM_SPECIAL)) == VM_LOCKED)
		mlock_new_folio(vma->vm_mm->sys, folio);
}

/* Install @page of new anonymous @folio if the PTE is still @expect. Return true if done. */
static bool set_pte_if(struct vma *vma, struct pte_table *pt, unsigned long addr,
		       uint64_t expect, struct folio *folio, struct page *page, uint64_t bits)
{
	struct mm *mm = vma->vm_mm;
	_Atomic uint64_t *ptep = &pt->e[pte_index(addr)];
	bool done = false;

	pte_lock(pt);
	rollup_pte_hint(pt, vma, addr, 1);
	if (load_relaxed(ptep) == expect) {
		folio_add_lru_vma(vma, folio);
		folio_add_rmap_pte(folio, page, mm);
		mm_inc_counter(mm, folio_mm_counter(folio));
		store_relaxed(ptep, mk_pte(page, bits));
		done = true;
	}
	pte_unlock(pt);
	return done;
}

/*
 * Map the @nr pages of new anonymous @folio from @addr, with @bits, if all
 * their entries are still none (set_ptes after pte_range_none). Each mapping
 * holds a folio reference: the allocation's, plus @nr - 1.
 * Return: true if done. Context: takes @pt's ptl.
 */
static bool set_new_anon_ptes(struct vma *vma, struct pte_table *pt, unsigned long addr,
			      struct folio *folio, unsigned long nr, uint64_t bits)
{
	struct mm *mm = vma->vm_mm;

	pte_lock(pt);
	rollup_pte_hint(pt, vma, addr, nr);
	if (!pte_range_none(pt, addr, nr)) {
		pte_unlock(pt);
		return false;
	}
	fetch_add_relaxed(&folio->refcount, (int)nr - 1);
	mm_add_counter(mm, MM_ANONPAGES, (long)nr);
	folio_add_lru_vma(vma, folio);
	for (unsigned long i = 0; i < nr; i++) {
		page_set_anon_exclusive(&folio->pages[i], true);
		folio_add_rmap_pte(folio, &folio->pages[i], mm);
		store_relaxed(&pt->e[pte_index(addr) + i], mk_pte(&folio->pages[i], bits));
	}
	pte_unlock(pt);
	return true;
}

/*
 * A fault on an empty entry of private anonymous memory (do_anonymous_page):
 * a read maps the zero page if the host has one; otherwise a new folio, of
 * the order anon_fault_order() picks, is mapped whole - every entry young,
 * and writable and dirty with VM_WRITE, whatever the access and wherever in
 * the block it hit.
 */
static vm_fault_t do_anonymous_page(struct vma *vma, struct pte_table *pt, unsigned long addr,
				    unsigned int flags)
{
	struct mm *mm = vma->vm_mm;
	struct folio *folio;
	unsigned long nr;
	vm_fault_t ret;

	if (!(flags & FAULT_FLAG_WRITE) && mm->sys->cfg.use_zero_page) {
		/* A read of untouched private memory maps the shared zero page. */
		struct folio *zero = sys_zero_folio(mm->sys);

		pte_lock(pt);
		rollup_pte_hint(pt, vma, addr, 1);
		if (!load_relaxed(&pt->e[pte_index(addr)]))
			store_relaxed(&pt->e[pte_index(addr)], mk_pte(&zero->pages[0], PT_YOUNG));
		pte_unlock(pt);
		return 0;
	}
	ret = vmf_anon_prepare(vma, flags);
	if (ret)
		return ret;
	folio = folio_alloc_anon(vma, addr, anon_fault_order(vma, pt, addr));
	if (!folio)
		return VM_FAULT_OOM;
	nr = folio_nr_pages(folio);
	/* Without the zero page a read allocates too; writable (and dirty) only with VM_WRITE. */
	if (!set_new_anon_ptes(vma, pt, addr & ~((nr << PAGE_SHIFT) - 1), folio, nr,
			       PT_YOUNG | ((vma->vm_flags & VM_WRITE) ? PT_WRITE | PT_DIRTY : 0)))
		folio_put(folio);	/* another thread faulted some of it in: the access retries */
	return 0;
}

static unsigned long linear_page_index(struct vma *vma, unsigned long addr)
{
	return vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT);
}

/* The address of file page @index in @vma (which may lie outside the VMA). */
static unsigned long file_page_address(struct vma *vma, unsigned long index)
{
	return vma->vm_start + ((index - vma->vm_pgoff) << PAGE_SHIFT);
}

static bool folio_within_vma(struct folio *folio, struct vma *vma)
{
	return folio->index >= vma->vm_pgoff &&
	       folio->index + folio_nr_pages(folio) <= vma->vm_pgoff + vma_pages(vma);
}

/*
 * Map pages @first .. @first + @nr - 1 of @folio from @addr on, each where
 * its PTE is still none (set_pte_range), with @pte_flags; each mapped page
 * takes a folio reference, and a large folio mapped whole into a locked VMA
 * is mlocked. With @all, map nothing unless every one of those PTEs is none.
 * The range lies in @pt. Context: caller holds no ptl.
 * Return: the number of pages mapped.
 */
static unsigned long map_folio_pages(struct vma *vma, struct pte_table *pt, unsigned long addr,
				     struct folio *folio, unsigned long first, unsigned long nr,
				     bool all, uint64_t pte_flags)
{
	struct mm *mm = vma->vm_mm;
	unsigned long done = 0;

	pte_lock(pt);
	rollup_pte_hint(pt, vma, addr, nr);
	for (unsigned long i = 0; all && i < nr; i++) {
		if (load_relaxed(&pt->e[pte_index(addr + (i << PAGE_SHIFT))])) {
			pte_unlock(pt);
			return 0;
		}
	}
	for (unsigned long i = 0; i < nr; i++) {
		_Atomic uint64_t *ptep = &pt->e[pte_index(addr + (i << PAGE_SHIFT))];
		struct page *page = &folio->pages[first + i];

		if (load_relaxed(ptep))
			continue;
		folio_get(folio);
		mlock_vma_folio(vma, folio);
		folio_add_rmap_pte(folio, page, mm);
		mm_inc_counter(mm, folio_mm_counter(folio));
		store_relaxed(ptep, mk_pte(page, pte_flags));
		done++;
	}
	/*
	 * A large folio mapped whole at once into a locked VMA is mlocked
	 * (6.18 __folio_add_file_rmap: "only mlock it if the folio is fully
	 * mapped to the VMA"); one mapped piece by piece is left to reclaim.
	 */
	if (folio->order && done == folio_nr_pages(folio) &&
	    (vma->vm_flags & (VM_LOCKED | VM_SPECIAL)) == VM_LOCKED)
		mlock_folio(mm->sys, folio);
	pte_unlock(pt);
	return done;
}

/*
 * May fault-around map @folio whole, past its window? Only if the folio
 * lies within i_size, so that the SIGBUS beyond EOF stays (tmpfs has always
 * mapped across i_size). The live kernel's test is off by one: a regular
 * file's folio qualifies only if the file goes on at least a page past it,
 * so the last folio of a file never does.
 */
static bool fault_around_folio_whole(struct vml_file *file, struct folio *folio,
				     unsigned long nr_file_pages)
{
	return file->shmem || nr_file_pages - 1 >= folio->index + folio_nr_pages(folio);
}

/*
 * Map the page-cache pages around a read fault (do_fault_around and
 * filemap_map_pages): the fault_around_bytes window aligned around @addr,
 * clipped to the VMA, the page table and EOF. A folio that lies within the
 * VMA and one page table is mapped whole, also outside the window, when
 * fault_around_folio_whole() allows it. The kernel installs a new page
 * table only on that test for the first cached folio in the window, so on
 * a fault that found no page table (@pt_was_none) and a first folio that
 * fails it, nothing is mapped here. Context: caller holds no ptl.
 */
/* The PTE bits of a page a read fault maps: vm_page_prot's write bit too, if any. */
static uint64_t read_fault_pte_flags(struct vma *vma)
{
	return vma_writable_without_notify(vma) ? PT_YOUNG | PT_WRITE : PT_YOUNG;
}

/*
 * The fault-around window of a read fault at @addr, as file page indexes
 * [*@index, *@end), and the first cached folio in it (a reference), or NULL
 * if none; *@index is then that folio's page.
 */
static struct folio *fault_around_first(struct vma *vma, unsigned long addr,
					unsigned long *index, unsigned long *end)
{
	struct vml_file *file = vma->vm_file;
	unsigned long nr = vma->vm_mm->sys->cfg.fault_around_bytes >> PAGE_SHIFT;
	unsigned long pte_off = pte_index(addr);
	unsigned long vma_off = linear_page_index(vma, addr) - vma->vm_pgoff;
	unsigned long from, to;
	struct folio *folio = NULL;

	if (nr <= 1)
		return NULL;
	from = pte_off & ~(nr - 1);
	if (from < pte_off - VML_MIN(pte_off, vma_off))
		from = pte_off - VML_MIN(pte_off, vma_off);
	to = VML_MIN(VML_MIN(from + nr, (unsigned long)PTRS_PER_TABLE),
		     pte_off + vma_pages(vma) - vma_off);
	*index = linear_page_index(vma, addr) - (pte_off - from);
	*end = VML_MIN(*index + (to - from), file_nr_pages(file));

	/* Ends: index grows by at least a page each step. */
	for (; *index < *end; (*index)++) {
		folio = filemap_get_folio(file, *index);
		if (folio)
			break;
	}
	return folio;
}

/*
 * Would a read fault at @addr that finds no page table have one installed
 * by fault-around? Only if the window's first cached folio passes
 * fault_around_folio_whole().
 */
static bool fault_around_installs_table(struct vma *vma, unsigned long addr)
{
	unsigned long index, end;
	struct folio *folio = fault_around_first(vma, addr, &index, &end);
	bool installs;

	if (!folio)
		return false;
	installs = fault_around_folio_whole(vma->vm_file, folio, file_nr_pages(vma->vm_file));
	folio_put(folio);
	return installs;
}

static void do_fault_around(struct vma *vma, struct pte_table *pt, unsigned long addr,
			    bool pt_was_none)
{
	struct vml_file *file = vma->vm_file;
	unsigned long nr_file_pages = file_nr_pages(file);
	unsigned long index, end;
	struct folio *folio = fault_around_first(vma, addr, &index, &end);

	if (!folio)
		return;
	if (pt_was_none && !fault_around_folio_whole(file, folio, nr_file_pages)) {
		folio_put(folio);
		return;
	}
	/* Ends: each step moves index past a folio or a hole. */
	while (index < end) {
		unsigned long fend;

		if (!folio)
			folio = filemap_get_folio(file, index);
		if (!folio) {
			index++;
			continue;
		}
		fend = folio->index + folio_nr_pages(folio);
		if (fault_around_folio_whole(file, folio, nr_file_pages) &&
		    folio_within_vma(folio, vma) &&
		    (file_page_address(vma, folio->index) & PMD_MASK) ==
		    ((file_page_address(vma, fend) - 1) & PMD_MASK))
			map_folio_pages(vma, pt, file_page_address(vma, folio->index), folio, 0,
					folio_nr_pages(folio), false, read_fault_pte_flags(vma));
		else
			map_folio_pages(vma, pt, file_page_address(vma, index), folio,
					index - folio->index, VML_MIN(fend, end) - index, false,
					read_fault_pte_flags(vma));
		folio_put(folio);
		folio = NULL;
		index = fend;
	}
}

/*
 * finish_fault - map page @index of page-cache @folio at @addr with
 * @pte_flags: with its whole folio when the folio lies within EOF, the VMA
 * and the page table and none of its PTEs is set, else alone.
 */
static void finish_fault(struct vma *vma, struct pte_table *pt, unsigned long addr,
			 struct folio *folio, unsigned long index, uint64_t pte_flags)
{
	struct vml_file *file = vma->vm_file;
	unsigned long pte_off = pte_index(addr);
	unsigned long idx = index - folio->index, nr = folio_nr_pages(folio);

	if (nr == 1 || (!file->shmem && file_nr_pages(file) < folio->index + nr) ||
	    !folio_within_vma(folio, vma) || pte_off < idx || pte_off - idx + nr > PTRS_PER_TABLE ||
	    !map_folio_pages(vma, pt, addr - (idx << PAGE_SHIFT), folio, 0, nr, true, pte_flags))
		map_folio_pages(vma, pt, addr, folio, idx, 1, false, pte_flags);
}

/*
 * The page-cache folio a fault at @addr finds or brings in: shmem's fault
 * may allocate a large folio (shmem_get_folio), also for a private
 * mapping's copy-on-write; a regular file's miss reads around it first.
 * Divergence: in a VMA advised MADV_HUGEPAGE the kernel reads ahead in
 * PMD-sized folios; the model reads the page alone there.
 */
static int fault_get_folio(struct vma *vma, unsigned long addr, unsigned long index,
			   struct folio **out)
{
	struct vml_file *file = vma->vm_file;
	int nid = fault_nid(vma->vm_mm);

	if (file->shmem)
		return shmem_get_folio(file, vma, addr, index, nid, out);
	if (!(vma->vm_flags & VM_HUGEPAGE))
		filemap_read_around(file, index, nid);
	return filemap_get_or_create(file, index, nid, out);
}

/*
 * Read fault on a file mapping. Fault-around comes first (->map_pages, then
 * ->fault as the fallback), so a read beyond EOF fails with SIGBUS only after
 * the cached pages around it, up to EOF, have been mapped. The faulting page
 * brings its whole folio when that lies within EOF, the VMA and the page
 * table and none of its PTEs is set (finish_fault); otherwise it comes alone.
 */
static vm_fault_t do_read_fault(struct vma *vma, struct pte_table *pt, unsigned long addr,
				bool pt_was_none)
{
	struct vml_file *file = vma->vm_file;
	unsigned long index = linear_page_index(vma, addr);
	struct folio *folio;

	do_fault_around(vma, pt, addr, pt_was_none);
	if (load_relaxed(&pt->e[pte_index(addr)]))
		return 0;	/* fault-around mapped it */
	if (file_index_beyond_eof(file, index))
		return VM_FAULT_SIGBUS;
	/*
	 * A miss reads the pages around in, and the fault, whose lock went
	 * for the I/O, is retried: fault-around first again, now mapping them.
	 */
	if (!(vma->vm_flags & VM_HUGEPAGE) &&
	    filemap_read_around(file, index, fault_nid(vma->vm_mm))) {
		do_fault_around(vma, pt, addr, pt_was_none);
		if (load_relaxed(&pt->e[pte_index(addr)]))
			return 0;
	}
	if (fault_get_folio(vma, addr, index, &folio))
		return VM_FAULT_OOM;
	finish_fault(vma, pt, addr, folio, index, read_fault_pte_flags(vma));
	folio_put(folio);
	return 0;
}

/*
 * Write fault on a private file mapping: copy the page-cache page
 * (do_cow_fault). The anon_vma is prepared before the file is asked for the
 * page, so a write beyond EOF fails with SIGBUS but leaves the VMA with an
 * anon_vma, as on the kernel; that anon_vma then limits later merges.
 */
static vm_fault_t do_cow_fault(struct vma *vma, struct pte_table *pt, unsigned long addr,
			       unsigned int flags, uint64_t expect)
{
	unsigned long index = linear_page_index(vma, addr);
	struct folio *cache, *folio;
	vm_fault_t ret;

	ret = vmf_anon_prepare(vma, flags);
	if (ret)
		return ret;
	if (file_index_beyond_eof(vma->vm_file, index))
		return VM_FAULT_SIGBUS;
	if (fault_get_folio(vma, addr, index, &cache))
		return VM_FAULT_OOM;
	folio_put(cache);	/* read, copied, and left in the page cache */
	folio = alloc_anon_folio(vma, addr);
	if (!folio)
		return VM_FAULT_OOM;
	page_set_data(&folio->pages[0], true);	/* the file's data (never zero here) */
	page_set_anon_exclusive(&folio->pages[0], true);
	if (!set_pte_if(vma, pt, addr, expect, folio, &folio->pages[0],
			PT_WRITE | PT_DIRTY | PT_YOUNG))
		folio_put(folio);
	return 0;
}

/* Write fault on a shared file mapping: the page-cache page itself, dirty. */
static vm_fault_t do_shared_fault(struct vma *vma, struct pte_table *pt, unsigned long addr)
{
	unsigned long index = linear_page_index(vma, addr);
	struct folio *folio;

	if (file_index_beyond_eof(vma->vm_file, index))
		return VM_FAULT_SIGBUS;
	if (fault_get_folio(vma, addr, index, &folio))
		return VM_FAULT_OOM;
	folio_set(folio, PG_dirty);	/* the whole folio, however large */
	/* A large folio is mapped whole, every page writable and dirty (set_pte_range). */
	finish_fault(vma, pt, addr, folio, index, PT_WRITE | PT_DIRTY | PT_YOUNG);
	folio_put(folio);
	return 0;
}

/*
 * May a write to a write-protected PTE of anonymous @folio take the page
 * over instead of copying it (wp_can_reuse_anon_folio)? A small folio: if
 * only this mapping holds it - or the swap cache as well, which then lets
 * it go (folio_free_swap). A large one (6.18): only if more than one of its
 * pages is mapped (a folio mapped once is given back, its last page copied),
 * it is not maybe mapped by another mm, and every reference is a mapping.
 * Asked only for a page not known to be exclusive (PageAnonExclusive: one
 * that fork shared), which a reuse makes exclusive.
 * Context: the PTE's ptl held.
 */
static bool wp_can_reuse_anon_folio(struct mm *mm, struct folio *folio)
{
	if (folio->order)
		return folio_mapcount(folio) > 1 && !folio_maybe_mapped_shared(folio) &&
		       folio_mapcount(folio) == folio_ref_count(folio);
	return folio_mapcount(folio) == 1 &&
	       (folio_ref_count(folio) == 1 ||
		(folio_test(folio, PG_swapcache) && folio_ref_count(folio) == 2 &&
		 folio_free_swap(mm->sys, folio)));
}

/*
 * do_wp_page - a write to a present, write-protected PTE: make a shared
 * mapping's page writable, reuse an anonymous page this mapping has to
 * itself (PageAnonExclusive) or may take over (wp_can_reuse_anon_folio;
 * only the faulting PTE becomes writable, a large folio's others fault on
 * their own), or copy the one page into a new small folio (COW; also the
 * zero page), whatever the size of its folio.
 */
static vm_fault_t do_wp_page(struct vma *vma, struct pte_table *pt, unsigned long addr,
			     unsigned int flags, uint64_t pte)
{
	struct mm *mm = vma->vm_mm;
	_Atomic uint64_t *ptep = &pt->e[pte_index(addr)];
	struct folio *old, *folio;
	struct page *page;
	vm_fault_t ret;

	/* The entry was read without the ptl: the page is only ours to look at under it. */
	pte_lock(pt);
	rollup_pte_hint(pt, vma, addr, 1);
	if (load_relaxed(ptep) != pte) {
		pte_unlock(pt);
		return 0;	/* changed under us: let the access retry */
	}
	page = pte_page(pte);
	old = page_folio(page);
	if (!folio_is_zero(old) &&
	    ((vma->vm_flags & VM_SHARED) ||
	     (folio_is_anon(old) &&
	      (page_anon_exclusive(page) || wp_can_reuse_anon_folio(mm, old))))) {
		store_relaxed(ptep, pte | PT_WRITE | PT_DIRTY | PT_YOUNG);
		if (vma->vm_flags & VM_SHARED)
			folio_set(old, PG_dirty);
		else
			page_set_anon_exclusive(page, true);
		pte_unlock(pt);
		return 0;
	}
	/* Copy-on-write: keep the old page alive while the lock is dropped. */
	folio_get(old);
	pte_unlock(pt);

	ret = vmf_anon_prepare(vma, flags);
	folio = ret ? NULL : alloc_anon_folio(vma, addr);
	if (!folio) {
		folio_put(old);
		return ret ? ret : VM_FAULT_OOM;
	}
	pte_lock(pt);
	rollup_pte_hint(pt, vma, addr, 1);
	if (load_relaxed(ptep) != pte) {
		pte_unlock(pt);
		folio_put(folio);
		folio_put(old);
		return 0;
	}
	/* The copy holds what the page held; a copy of the zero page, zeroes. */
	page_set_data(&folio->pages[0], !folio_is_zero(old) && page_has_data(page));
	page_set_anon_exclusive(&folio->pages[0], true);
	folio_add_lru_vma(vma, folio);
	folio_add_rmap_pte(folio, &folio->pages[0], mm);
	mm_inc_counter(mm, MM_ANONPAGES);
	store_relaxed(ptep, mk_pte(&folio->pages[0], PT_WRITE | PT_DIRTY | PT_YOUNG));
	if (!folio_is_zero(old)) {
		folio_remove_rmap_pte(old, page, mm);
		/* munlock_vma_folio: a page copied away from a locked VMA is munlocked */
		if (vma->vm_flags & VM_LOCKED)
			munlock_folio(mm->sys, old);
		mm_dec_counter(mm, folio_mm_counter(old));
		free_swap_cache(mm->sys, old);
		folio_put(old);	/* the mapping's reference */
	}
	pte_unlock(pt);
	folio_put(old);		/* ours */
	return 0;
}

/* A fault on a swap entry: bring the page back (do_swap_page). */
static vm_fault_t do_swap_page(struct vma *vma, struct pte_table *pt, unsigned long addr,
			       unsigned int flags, uint64_t pte)
{
	struct mm *mm = vma->vm_mm;
	unsigned long off = pte >> PT_SWAP_SHIFT;
	bool fresh = false, exclusive, write = flags & FAULT_FLAG_WRITE;
	struct folio *folio;
	vm_fault_t ret;

	ret = vmf_anon_prepare(vma, flags);
	if (ret)
		return ret;
	/* The swap cache first: a page another entry for the slot brought in. */
	folio = swap_cache_get(mm->sys, off);
	if (!folio) {
		folio = alloc_anon_folio(vma, addr);
		if (!folio)
			return VM_FAULT_OOM;
		/* Read from swap: the model does not know what it held, so data. */
		page_set_data(&folio->pages[0], true);
		fresh = true;
	}
	pte_lock(pt);
	if (load_relaxed(&pt->e[pte_index(addr)]) != pte) {
		pte_unlock(pt);
		folio_put(folio);
		return 0;
	}
	if (fresh) {
		/* Under the ptl the entry still holds the slot, so it cannot be reused. */
		struct folio *cached = swap_cache_install(mm->sys, folio, off);

		if (cached != folio) {	/* another fault on the slot was first */
			folio_put(folio);
			folio = cached;
			fresh = false;
		}
	}
	/* Ours alone: no other entry for the slot and no other mapping of the page. */
	exclusive = swap_count(mm->sys, off) == 1 && !folio_mapcount(folio);
	page_set_anon_exclusive(&folio->pages[0], exclusive);
	mlock_vma_folio(vma, folio);
	folio_add_rmap_pte(folio, &folio->pages[0], mm);
	mm_inc_counter(mm, MM_ANONPAGES);
	mm_dec_counter(mm, MM_SWAPENTS);
	/* A write to a page others map copies it: map it read-only, do_wp_page follows. */
	store_relaxed(&pt->e[pte_index(addr)],
		      mk_pte(&folio->pages[0], PT_YOUNG |
			     (write && exclusive ? PT_WRITE | PT_DIRTY : 0)));
	pte_unlock(pt);
	swap_free_entry(mm->sys, off);
	/*
	 * should_try_to_free_swap(): a locked VMA frees the slot at once; a write
	 * does when this fault holds the only other reference - never for a page
	 * just read in, which the LRU add batch still holds (live: swapcache=1).
	 */
	if ((vma->vm_flags & VM_LOCKED) || folio_test(folio, PG_unevictable) ||
	    (write && exclusive && !fresh && folio_ref_count(folio) == 2))
		folio_free_swap(mm->sys, folio);
	/* The allocation's or the lookup's reference is now the mapping's. */
	if (write && !exclusive)
		return handle_mm_fault(vma, addr, flags);
	return 0;
}

/*
 * A file fault beyond EOF where no page table exists and none would be
 * installed on the way: the kernel allocates a PTE table only to map
 * something (fault-around, or finish_fault after ->fault), so it fails with
 * SIGBUS and leaves the table absent, which decides what a later
 * fault-around maps. A private write fault still prepares the anon_vma
 * first (do_cow_fault).
 */
/*
 * A fault in a shared shmem mapping where no page table is: a PMD-sized
 * folio of the object - cached, or allocated now where shmem THP allows it
 * (shmem_get_folio) - is mapped by the PMD (finish_fault's do_set_pmd, and
 * filemap_map_pmd for a read's fault-around): in a shared mapping writable
 * with VM_WRITE (shmem needs no write notification), dirty only for a
 * write; in a private one read-only, for a read - a write copies a page
 * (do_cow_fault), and a write to the read-only PMD zaps it first
 * (do_huge_pmd_wp_page). Anything else falls back to the page-table path,
 * which finds a small or mis-placed folio in the cache again.
 */
static vm_fault_t do_shmem_huge_pmd(struct vma *vma, _Atomic uint64_t *pmd, unsigned long addr,
				    bool write)
{
	struct vml_file *file = vma->vm_file;
	unsigned long index = linear_page_index(vma, addr);
	struct mm *mm = vma->vm_mm;
	struct pte_table *holder;
	struct folio *folio;
	int err;

	if (!file || !file->shmem || (write && !(vma->vm_flags & VM_SHARED)) ||
	    !thp_vma_suitable_order(vma, addr, HPAGE_PMD_ORDER) ||
	    file_index_beyond_eof(file, index))
		return VM_FAULT_FALLBACK;
	if (shmem_get_folio(file, vma, addr, index, fault_nid(mm), &folio))
		return VM_FAULT_OOM;
	if (folio->order != HPAGE_PMD_ORDER) {
		folio_put(folio);
		return VM_FAULT_FALLBACK;
	}
	holder = rollup_leaf_holder(mm, &err);	/* incremental rollup: the leaf's share */
	if (err) {
		folio_put(folio);
		return VM_FAULT_OOM;
	}
	spin_lock(&mm->page_table_lock);
	if (load_relaxed(pmd)) {
		spin_unlock(&mm->page_table_lock);
		vml_free(holder);
		folio_put(folio);
		return 0;	/* raced with another fault: the access retries */
	}
	if (write)
		folio_set(folio, PG_dirty);
	/* The lookup's reference becomes the mapping's. */
	huge_pmd_install(mm, pmd, folio, holder,
			 PT_YOUNG | (write ? PT_DIRTY : 0) |
			 ((vma->vm_flags & (VM_WRITE | VM_SHARED)) == (VM_WRITE | VM_SHARED) ?
			  PT_WRITE : 0), addr);
	spin_unlock(&mm->page_table_lock);
	/* A large folio goes through the mlock batch at once (mlock_vma_folio). */
	if ((vma->vm_flags & (VM_LOCKED | VM_SPECIAL)) == VM_LOCKED)
		mlock_folio(mm->sys, folio);
	return 0;
}

static vm_fault_t file_fault_sigbus_no_table(struct vma *vma, unsigned int flags)
{
	vm_fault_t ret = 0;

	if ((flags & FAULT_FLAG_WRITE) && !(vma->vm_flags & VM_SHARED))
		ret = vmf_anon_prepare(vma, flags);
	return ret ? ret : VM_FAULT_SIGBUS;
}

vm_fault_t handle_mm_fault(struct vma *vma, unsigned long addr, unsigned int flags)
{
	struct mm *mm = vma->vm_mm;
	bool write = flags & FAULT_FLAG_WRITE;
	_Atomic uint64_t *pmd;
	struct pte_table *pt;
	bool pt_was_none;
	uint64_t pte;
	int err = 0;

	stat_inc(&mm->stats.faults);
	plat_charge_ns(mm->sys->cfg.costs.fault_ns, PLAT_KERNEL);
	pmd = pmd_offset(mm, addr, true, &err);
	if (!pmd)
		return VM_FAULT_OOM;
	/* acquire (here and in the two loads below): pairs with pgtable.c's P1 releases */
	if (!load_acquire(pmd)) {
		vm_fault_t ret = VM_FAULT_FALLBACK;

		if (!vma_is_anonymous(vma))
			ret = do_shmem_huge_pmd(vma, pmd, addr, write);
		else if (thp_vma_allowable_order(vma, vma->vm_flags, TVA_PAGEFAULT, HPAGE_PMD_ORDER))
			ret = do_huge_pmd_anonymous_page(vma, pmd, addr, flags);
		if (!(ret & VM_FAULT_FALLBACK))
			return ret;
	}
	if (pmd_is_huge(load_acquire(pmd))) {	/* pairs with P1, as above */
		if (!write) {
			pte_access_fast(mm, addr, false);
			return 0;
		}
		if (pte_access_fast(mm, addr, true))
			return 0;
		if (!(do_huge_pmd_wp_page(vma, pmd, addr, flags) & VM_FAULT_FALLBACK))
			return 0;
	}
	/* No page table yet: fault-around may leave it so (do_fault_around). */
	pt_was_none = !load_acquire(pmd);	/* pairs with P1, as above */
	if (pt_was_none && !vma_is_anonymous(vma) &&
	    file_index_beyond_eof(vma->vm_file, linear_page_index(vma, addr)) &&
	    (write || !fault_around_installs_table(vma, addr)))
		return file_fault_sigbus_no_table(vma, flags);
	pt = pte_table_get(mm, pmd, addr, true, &err);
	if (!pt)
		return err ? VM_FAULT_OOM : 0;	/* a huge leaf appeared: the access retries */

	/* A first look, relaxed: every path below rechecks the entry under the ptl (P2). */
	pte = load_relaxed(&pt->e[pte_index(addr)]);
	if (!pte) {
		if (vma_is_anonymous(vma))
			return do_anonymous_page(vma, pt, addr, flags);
		if (!write)
			return do_read_fault(vma, pt, addr, pt_was_none);
		if (!(vma->vm_flags & VM_SHARED))
			return do_cow_fault(vma, pt, addr, flags, 0);
		return do_shared_fault(vma, pt, addr);
	}
	if (pte_is_guard(pte))
		return VM_FAULT_SIGSEGV;	/* handle_pte_marker: a guard region */
	if (pte_is_swap(pte))
		return do_swap_page(vma, pt, addr, flags, pte);
	if (write && !(pte & PT_WRITE))
		return do_wp_page(vma, pt, addr, flags, pte);
	/* Spurious: the entry allows the access now; just mark it. */
	pte_access_fast(mm, addr, write);
	return 0;
}
