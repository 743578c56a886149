// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gup.c - faulting a range in as get_user_pages would (mm/gup.c
 * populate_vma_page_range, __mm_populate): MAP_POPULATE, mlock(),
 * mprotect() of a locked VMA, mremap() growing a locked one.
 *
 * Every page of the range is accessed (write access for a private writable
 * mapping, as FOLL_WRITE would): as it is mapped if the entry already allows
 * it (GUP sets no young or dirty bit on a PTE), else by handle_mm_fault
 * under mmap_lock(R). A page found mapped is then marked accessed, and for
 * a write its folio dirty (FOLL_TOUCH).
 */
#include <errno.h>

#include "mm/pkeys.h"
#include "mm/folio.h"
#include "mm/internal.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm/vma.h"
#include "util/compiler.h"

/*
 * May GUP use the entry mapping @addr as it is (follow_page_pte,
 * follow_huge_pmd)? A present entry that allows the access: a PTE is left
 * as it is - GUP sets neither its young nor its dirty bit - while a huge
 * PMD is made young, and dirty for a write (touch_pmd). Otherwise the
 * caller faults. Context: mmap_lock(R).
 */
static bool gup_entry_ok(struct mm *mm, unsigned long addr, bool write)
{
	_Atomic uint64_t *pmd;
	struct pte_table *pt;
	uint64_t v;
	int err = 0;

	pmd = pmd_offset(mm, addr, false, &err);
	/* acquire: pairs with the release that published the entry (pgtable.c's P1) */
	v = pmd ? load_acquire(pmd) : 0;
	if (pmd_is_huge(v))
		return pte_access_fast(mm, addr, write);
	pt = pmd ? pte_table_get(mm, pmd, addr, false, &err) : NULL;
	if (!pt)
		return false;
	v = load_relaxed(&pt->e[pte_index(addr)]);	/* only its bits are used (P2) */
	return pte_present(v) && !(v & (PT_PROTNONE | PT_PKEY)) && (!write || (v & PT_WRITE));
}

/*
 * GUP's FOLL_TOUCH on a page it found mapped by a PTE: a write marks the
 * folio dirty unless the entry or the folio is already (the whole folio,
 * however large: every page of it then counts as dirty), and the folio is
 * marked accessed.
 */
static void follow_page_touch(struct mm *mm, unsigned long addr, bool write)
{
	_Atomic uint64_t *pmd;
	struct pte_table *pt;
	struct folio *folio;
	uint64_t pte;
	int err = 0;

	pmd = pmd_offset(mm, addr, false, &err);
	pt = pmd ? pte_table_get(mm, pmd, addr, false, &err) : NULL;
	if (!pt)
		return;		/* none, or a huge PMD (touch_pmd: already young) */
	pte_lock(pt);
	pte = load_relaxed(&pt->e[pte_index(addr)]);
	folio = pte_present(pte) ? page_folio(pte_page(pte)) : NULL;
	if (folio && !folio_is_zero(folio)) {
		if (write && !(pte & PT_DIRTY))
			folio_set(folio, PG_dirty);
		folio_mark_accessed(mm->sys, folio);
	}
	pte_unlock(pt);
}

int populate_vma_page_range(struct vma *vma, unsigned long start, unsigned long end)
{
	struct mm *mm = vma->vm_mm;
	bool write = (vma->vm_flags & (VM_WRITE | VM_SHARED)) == VM_WRITE;
	int err = 0;

	mmap_assert_locked(mm);
	if (vma->vm_flags & VM_LOCKONFAULT)
		return 0;
	/*
	 * GUP refuses a PROT_NONE mapping, and one whose protection key denies
	 * access (check_vma_flags, arch_vma_access_permitted): mlock then fails
	 * with ENOMEM, as on live.
	 */
	if (!(vma->vm_flags & VM_ACCESS_FLAGS) || vma_pkey(vma))
		return -EFAULT;
	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		vm_fault_t ret;

		if (!gup_entry_ok(mm, a, write)) {
			ret = handle_mm_fault(vma, a, write ? FAULT_FLAG_WRITE : 0);
			/* GUP reports SIGBUS and SIGSEGV alike, as -EFAULT. */
			if (ret & VM_FAULT_OOM)
				err = -ENOMEM;
			else if (ret & (VM_FAULT_SIGBUS | VM_FAULT_SIGSEGV))
				err = -EFAULT;
			if (err)
				break;
		}
		follow_page_touch(mm, a, write);
	}
	/*
	 * What GUP queued takes effect, and with it anything else waiting in
	 * the batches (a page MADV_FREE'd earlier shows LazyFree), also when
	 * the populate stopped at a fault: the live kernel shows both.
	 */
	lru_add_drain(mm->sys);
	return err;
}

/*
 * GUP's check_vma_flags for MADV_POPULATE_(READ|WRITE) (no FOLL_FORCE): may
 * the access be made at all? A mapping that cannot be read (or, for a
 * write, written), or whose protection key denies it, is refused.
 */
static bool populate_vma_ok(const struct vma *vma, bool write)
{
	if (vma->vm_flags & (VM_IO | VM_PFNMAP))
		return false;
	if (!(vma->vm_flags & (write ? VM_WRITE : VM_READ)))
		return false;
	return !vma_pkey(vma);
}

int faultin_page_range(struct mm *mm, unsigned long start, unsigned long end, bool write)
{
	struct vma *vma = NULL;
	int err = 0;

	mmap_assert_locked(mm);
	/* Ends: each step moves a page on, or stops at an error. */
	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		if (!vma || a >= vma->vm_end) {
			/* FOLL_MADV_POPULATE: its own lookup and errors */
			vma = find_vma(mm, a);
			if (!vma || vma->vm_start > a) {
				err = -ENOMEM;
				break;
			}
			if (!populate_vma_ok(vma, write)) {
				err = -EINVAL;
				break;
			}
		}
		if (!gup_entry_ok(mm, a, write)) {
			vm_fault_t ret = handle_mm_fault(vma, a, write ? FAULT_FLAG_WRITE : 0);

			if (ret & VM_FAULT_OOM)
				err = -ENOMEM;
			else if (ret & (VM_FAULT_SIGBUS | VM_FAULT_SIGSEGV))
				err = -EFAULT;
			if (err)
				break;
		}
		follow_page_touch(mm, a, write);
	}
	/* faultin_page_range's own drain, also after an error */
	lru_add_drain(mm->sys);
	return err;
}

int __mm_populate(struct mm *mm, unsigned long start, unsigned long len, bool ignore_errors)
{
	unsigned long end = start + len, nstart;
	struct vma *vma;
	int ret = 0;

	mmap_read_lock(mm);
	/* Ends: each step moves nstart past a VMA. */
	for (nstart = start; nstart < end; nstart = vma->vm_end) {
		vma = find_vma(mm, nstart);
		if (!vma || vma->vm_start >= end)
			break;
		if (vma->vm_flags & (VM_IO | VM_PFNMAP))
			continue;
		ret = populate_vma_page_range(vma, VML_MAX(nstart, vma->vm_start),
					      VML_MIN(end, vma->vm_end));
		if (ret && !ignore_errors)
			break;
		ret = 0;	/* ignored: go on with the next VMA */
	}
	mmap_read_unlock(mm);
	return ret;
}
