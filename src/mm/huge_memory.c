// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * huge_memory.c - PMD-mapped huge pages: the fault paths, fork's sharing,
 * moving, zapping and splitting (mm/huge_memory.c).
 *
 * A huge leaf is an upper-level entry like a table pointer and follows
 * pgtable.c's rules: it changes only under mm->page_table_lock, every store
 * of it is a release that pairs with the acquire loads of lock-free walkers
 * (pgtable.c's P1: a walker that sees the leaf sees its folio set up, one
 * that sees the deposited table after a split sees its 512 entries), and
 * the "hardware" path may set young/dirty on a present leaf with a CAS
 * meanwhile.
 */
#include <errno.h>

#include "mm/folio.h"
#include "mm/huge_memory.h"
#include "mm/internal.h"
#include "mm/rmap.h"
#include "mm/shmem.h"
#include "mm/file.h"
#include "mm/vma.h"
#include "mm/mm.h"
#include "mm/pgtable.h"
#include "mm/mmap_lock.h"
#include "util/alloc.h"
#include "util/compiler.h"

bool thp_vma_suitable_order(struct vma *vma, unsigned long addr, unsigned int order)
{
	unsigned long size = PAGE_SIZE << order;
	unsigned long haddr = addr & ~(size - 1);

	/* A file's huge page must also sit at an aligned offset in the file. */
	if (!vma_is_anonymous(vma) &&
	    (((vma->vm_start >> PAGE_SHIFT) - vma->vm_pgoff) & ((1UL << order) - 1)))
		return false;
	return haddr >= vma->vm_start && haddr + size <= vma->vm_end;
}

unsigned long thp_vma_suitable_orders(struct vma *vma, unsigned long addr, unsigned long orders)
{
	unsigned long left = orders;

	/* Ends: each step takes one order out of @left. */
	while (left) {
		unsigned int order = highest_order(left);

		left &= ~(1UL << order);
		if (!thp_vma_suitable_order(vma, addr, order))
			orders &= ~(1UL << order);
	}
	return orders;
}

/*
 * The orders of which @vma holds a whole aligned block: the last one before
 * its end (outside a fault; a fault checks its own range). If an order
 * fits, every smaller one does.
 */
static unsigned long orders_in_vma(struct vma *vma, unsigned long orders)
{
	unsigned long left = orders;

	/* Ends: each step takes one order out of @left. */
	while (left) {
		unsigned int order = highest_order(left);

		left &= ~(1UL << order);
		if (!thp_vma_suitable_order(vma, vma->vm_end - (PAGE_SIZE << order), order))
			orders &= ~(1UL << order);
	}
	return orders;
}

/*
 * A shmem VMA's orders (shmem_allowable_huge_orders at the VMA's offset,
 * after the orders the VMA can hold). khugepaged does not collapse file
 * memory in the model.
 */
static unsigned long shmem_vma_orders(struct vma *vma, unsigned long vm_flags,
				      enum tva_type type, unsigned long orders)
{
	struct vml_file *file = vma->vm_file;

	orders &= THP_ORDERS_ALL_FILE;
	if (!orders || !file || !file->shmem || (vm_flags & (VM_SPECIAL | VM_HUGETLB)))
		return 0;
	if (type != TVA_PAGEFAULT)
		orders = orders_in_vma(vma, orders);
	if (type == TVA_FORCED_COLLAPSE)
		return orders & shmem_forced_huge_orders(file, vma);
	return orders ? orders & shmem_allowable_huge_orders(file, vma, vma->vm_pgoff, 0,
							     file_nr_pages(file) << PAGE_SHIFT) : 0;
}

unsigned long thp_vma_allowable_orders(struct vma *vma, unsigned long vm_flags,
				       enum tva_type type, unsigned long orders)
{
	struct vml_sys *sys = vma->vm_mm->sys;
	enum vml_thp_mode global = sys->cfg.thp;
	unsigned long mask = sys->thp_anon_always;

	/* Files: only shmem, by its own rules; no file THP otherwise (as live). */
	if (!vma_is_anonymous(vma))
		return type == TVA_KHUGEPAGED ? 0 : shmem_vma_orders(vma, vm_flags, type, orders);
	/* MADV_COLLAPSE: every anonymous size, whatever the knobs say */
	if (type == TVA_FORCED_COLLAPSE)
		mask = THP_ORDERS_ALL_ANON;
	if (vm_flags & VM_HUGEPAGE)
		mask |= sys->thp_anon_madvise;
	if (global == VML_THP_ALWAYS || ((vm_flags & VM_HUGEPAGE) && global != VML_THP_NEVER))
		mask |= sys->thp_anon_inherit;
	orders &= mask & THP_ORDERS_ALL_ANON;
	if (!orders || (vm_flags & (VM_NOHUGEPAGE | VM_SPECIAL | VM_HUGETLB)))
		return 0;
	/* MADV_COLLAPSE needs the anon_vma a first fault makes (smaps and faults do not) */
	if (type == TVA_FORCED_COLLAPSE && !vma_anon_vma(vma))
		return 0;
	return type == TVA_PAGEFAULT ? orders : orders_in_vma(vma, orders);
}

/*
 * Map @folio (order 9: anonymous, or shmem with no @pt to deposit) or the
 * huge zero page at the PMD; deposit @pt.
 */
void huge_pmd_install(struct mm *mm, _Atomic uint64_t *pmd, struct folio *folio,
		      struct pte_table *pt, uint64_t bits, unsigned long addr)
{
	spin_assert_held(&mm->page_table_lock);
	*pmd_deposit_slot(pmd) = pt;
	if (!folio_is_zero(folio)) {
		folio_add_rmap_pmd(folio, mm);
		mm_add_counter(mm, folio_mm_counter(folio), (long)HPAGE_PMD_NR);
	}
	/* release: pairs with the walkers' acquire loads: they see the folio's state (P1) */
	store_release(pmd, mk_pte(&folio->pages[0], bits | PT_HUGE));
	rollup_pmd_update(mm, pmd, addr);
}

unsigned int do_huge_pmd_anonymous_page(struct vma *vma, _Atomic uint64_t *pmd,
					unsigned long addr, unsigned int flags)
{
	struct mm *mm = vma->vm_mm;
	struct folio *folio;
	struct pte_table *pt;
	unsigned int ret;

	if (!thp_vma_suitable(vma, addr))
		return VM_FAULT_FALLBACK;
	/* Even a read prepares the anon_vma here (vmf_anon_prepare in the THP path). */
	ret = vmf_anon_prepare(vma, flags);
	if (ret)
		return ret;
	pt = pte_table_alloc();
	if (!pt)
		return VM_FAULT_OOM;
	if (!(flags & FAULT_FLAG_WRITE) && mm->sys->cfg.use_huge_zero_page) {
		folio = mm->sys->huge_zero_folio;
	} else {
		folio = folio_alloc(mm->sys, HPAGE_PMD_ORDER, fault_nid(mm));
		if (!folio) {
			vml_free(pt);
			return VM_FAULT_FALLBACK;	/* no huge page: small pages will do */
		}
		folio_set(folio, PG_anon | ((vma->vm_flags & VM_DROPPABLE) ? 0 : PG_swapbacked));
		/* In a locked VMA: unevictable at once (mlock_new_folio of a large folio). */
		if ((vma->vm_flags & (VM_LOCKED | VM_SPECIAL)) == VM_LOCKED)
			mlock_new_folio(mm->sys, folio);
		anon_vma_get(vma_anon_vma(vma));
		folio->mapping = vma_anon_vma(vma);
		folio->index = vma->vm_pgoff + (((addr & PMD_MASK) - vma->vm_start) >> PAGE_SHIFT);
		for (unsigned int i = 0; i < HPAGE_PMD_NR; i++)
			page_set_anon_exclusive(&folio->pages[i], true);
	}
	spin_lock(&mm->page_table_lock);
	if (load_relaxed(pmd)) {
		spin_unlock(&mm->page_table_lock);
		vml_free(pt);
		folio_put(folio);
		return 0;	/* raced with another fault: the access retries */
	}
	/* A new huge page is mapped dirty, and writable with VM_WRITE, whatever the access. */
	huge_pmd_install(mm, pmd, folio, pt,
			 PT_YOUNG | (folio_is_zero(folio) ? 0 :
				     PT_DIRTY | ((vma->vm_flags & VM_WRITE) ? PT_WRITE : 0)), addr);
	spin_unlock(&mm->page_table_lock);
	return 0;
}

unsigned int do_huge_pmd_wp_page(struct vma *vma, _Atomic uint64_t *pmd, unsigned long addr,
				 unsigned int flags)
{
	struct mm *mm = vma->vm_mm;
	struct folio *folio;
	uint64_t v;

	(void)flags;
	spin_lock(&mm->page_table_lock);
	v = load_relaxed(pmd);
	if (!pmd_is_huge(v)) {
		spin_unlock(&mm->page_table_lock);
		return VM_FAULT_FALLBACK;
	}
	folio = page_folio(pte_page(v));
	if (!folio_is_anon(folio) && !folio_is_zero(folio)) {
		/* A shared file's huge page: the mapping goes, a PTE fault maps it (wp_huge_pmd). */
		split_huge_pmd_locked(mm, pmd);
		spin_unlock(&mm->page_table_lock);
		return VM_FAULT_FALLBACK;
	}
	/* Reuse an exclusive huge page; a zero or shared one is split and copied per page. */
	if (!folio_is_zero(folio) &&
	    (page_anon_exclusive(&folio->pages[0]) ||
	     (load_relaxed(&folio->entire_mapcount) == 1 &&
	      folio_mapcount(folio) == (int)HPAGE_PMD_NR && folio_ref_count(folio) == 1))) {
		for (unsigned int i = 0; i < HPAGE_PMD_NR; i++)
			page_set_anon_exclusive(&folio->pages[i], true);
		/* release: pairs with the walkers' acquire loads (P1); the bits the hardware sets are in */
		store_release(pmd, v | PT_WRITE | PT_DIRTY | PT_YOUNG);
		rollup_pmd_update(mm, pmd, addr);
		spin_unlock(&mm->page_table_lock);
		return 0;
	}
	spin_unlock(&mm->page_table_lock);
	split_huge_pmd_address(mm, addr);
	return VM_FAULT_FALLBACK;
}

int copy_huge_pmd(struct mm *dst, struct mm *src, _Atomic uint64_t *dst_pmd,
		  _Atomic uint64_t *src_pmd, struct vma *vma, unsigned long addr)
{
	struct pte_table *pt = pte_table_alloc();
	struct folio *folio;
	uint64_t v;

	if (!pt)
		return -ENOMEM;
	spin_lock(&src->page_table_lock);
	v = load_relaxed(src_pmd);
	folio = page_folio(pte_page(v));
	if ((vma->vm_flags & (VM_SHARED | VM_MAYWRITE)) == VM_MAYWRITE && (v & PT_WRITE)) {
		/*
		 * release: pairs with the walkers' acquire loads (P1). A CAS, so a
		 * dirty or young bit the "hardware" sets meanwhile is kept (and
		 * passed to the child below).
		 */
		while (!cas_release(src_pmd, &v, v & ~PT_WRITE))
			;
		v &= ~PT_WRITE;
	}
	folio_get(folio);
	/* Shared with the child now (folio_try_dup_anon_rmap_pmd). */
	for (unsigned int i = 0; !folio_is_zero(folio) && i < HPAGE_PMD_NR; i++)
		page_set_anon_exclusive(&folio->pages[i], false);
	spin_unlock(&src->page_table_lock);
	spin_lock(&dst->page_table_lock);
	huge_pmd_install(dst, dst_pmd, folio, pt, (v & (PT_DIRTY | PT_WRITE)), addr);
	spin_unlock(&dst->page_table_lock);
	/* The parent's share halved with the child's mapping (incremental rollup). */
	spin_lock(&src->page_table_lock);
	rollup_pmd_update(src, src_pmd, addr);
	spin_unlock(&src->page_table_lock);
	return 0;
}

void move_huge_pmd(struct mm *mm, _Atomic uint64_t *old_pmd, _Atomic uint64_t *new_pmd,
		   unsigned long new_addr)
{
	spin_lock(&mm->page_table_lock);
	VML_BUG_ON(load_relaxed(new_pmd) != 0);
	*pmd_deposit_slot(new_pmd) = *pmd_deposit_slot(old_pmd);
	*pmd_deposit_slot(old_pmd) = NULL;
	store_release(new_pmd, load_relaxed(old_pmd));	/* pairs with the walkers' acquires (P1) */
	store_release(old_pmd, 0);	/* pairs with the same (P1; a 0 publishes nothing) */
	rollup_pmd_update(mm, new_pmd, new_addr);
	spin_unlock(&mm->page_table_lock);
}

void zap_huge_pmd(struct mm *mm, _Atomic uint64_t *pmd)
{
	uint64_t v = load_relaxed(pmd);
	struct folio *folio = page_folio(pte_page(v));
	struct pte_table **slot = pmd_deposit_slot(pmd);

	spin_assert_held(&mm->page_table_lock);
	/* release: pairs with the walkers' acquire loads (P1; a 0 publishes nothing) */
	store_release(pmd, 0);
	if (*slot && load_relaxed(&(*slot)->rollup_mm)) {
		/* The leaf's share goes; a reader may hold the record under RCU. */
		rollup_pte_table_remove(*slot);
		pte_table_free_rcu(*slot);
	} else {
		vml_free(*slot);
	}
	*slot = NULL;
	if (folio_is_zero(folio))
		return;
	if ((v & PT_DIRTY) && !folio_is_anon(folio))
		folio_set(folio, PG_dirty);
	folio_remove_rmap_pmd(folio, mm);
	mm_add_counter(mm, folio_mm_counter(folio), -(long)folio_nr_pages(folio));
	folio_put(folio);
}

void split_huge_pmd_locked(struct mm *mm, _Atomic uint64_t *pmd)
{
	uint64_t v = load_relaxed(pmd);
	struct pte_table **slot = pmd_deposit_slot(pmd);
	struct pte_table *pt = *slot;
	struct folio *folio;
	uint64_t bits;

	spin_assert_held(&mm->page_table_lock);
	if (!pmd_is_huge(v))
		return;
	folio = page_folio(pte_page(v));
	/*
	 * A file's huge page is not remapped by PTEs: the mapping just goes
	 * (__split_huge_pmd_locked for !vma_is_anonymous) and its pages fault
	 * back in as they are touched.
	 */
	if (!folio_is_anon(folio) && !folio_is_zero(folio)) {
		zap_huge_pmd(mm, pmd);
		return;
	}
	VML_BUG_ON(!pt);
	*slot = NULL;
	bits = v & (PT_WRITE | PT_DIRTY | PT_YOUNG | PT_PROTNONE | PT_PKEY);
	if (folio_is_zero(folio)) {
		/* The huge zero page becomes 512 small zero-page entries. */
		struct folio *zero = sys_zero_folio(mm->sys);

		for (unsigned int i = 0; i < HPAGE_PMD_NR; i++)
			store_relaxed(&pt->e[i], mk_pte(&zero->pages[0], bits & ~PT_WRITE));
	} else {
		for (unsigned int i = 0; i < HPAGE_PMD_NR; i++) {
			store_relaxed(&pt->e[i], mk_pte(&folio->pages[i], bits));
			fetch_add_relaxed(&folio->pages[i].mapcount, 1);
		}
		/* Each PTE mapping holds a reference; the PMD mapping held one. */
		fetch_add_relaxed(&folio->refcount, (int)HPAGE_PMD_NR - 1);
		fetch_sub_relaxed(&folio->entire_mapcount, 1);
	}
	/* release: pairs with the walkers' acquire loads: they see the table's entries (P1) */
	store_release(pmd, (uint64_t)(uintptr_t)pt | PT_TABLE);
	/* Incremental rollup: the deposit held the leaf's share; now it counts as a table. */
	if (load_relaxed(&pt->rollup_mm)) {
		pte_lock(pt);
		pt->rollup_leaf = false;
		pte_unlock(pt);
	}
}

void split_huge_pmd_address(struct mm *mm, unsigned long addr)
{
	int err = 0;
	_Atomic uint64_t *pmd = pmd_offset(mm, addr, false, &err);

	if (!pmd || !pmd_is_huge(load_acquire(pmd)))	/* pairs with the P1 releases */
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
