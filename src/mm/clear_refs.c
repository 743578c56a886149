// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * clear_refs.c - writing /proc/PID/clear_refs (fs/proc/task_mmu.c
 * clear_refs_write), what cadvisor-style working-set estimation does: clear
 * every mapped page's young bit and its folio's referenced flag, so that
 * smaps' Referenced counts only what is touched afterwards.
 *
 *   1  every VMA          2  anonymous VMAs only (no vm_file)
 *   3  file VMAs only     4  soft-dirty   5  reset the peak RSS (VmHWM)
 *
 * Any other value is EINVAL. 4 clears VM_SOFTDIRTY and write-protects the
 * PTEs where the kernel has CONFIG_MEM_SOFT_DIRTY; the hosts the model
 * follows do not (docs/op-scripts.md), so it only takes the lock there. 5
 * changes only /proc/PID/status, which the model does not show.
 *
 * Locks: mmap_lock(W) for every value - 6.18 takes it for write whatever the
 * value (older kernels read-locked all but 4 and 5), so a clear_refs
 * writer stalls the address space's faults that fall back to mmap_lock and
 * every mmap_lock reader (smaps, numa_maps) for the whole walk; each page
 * table is walked under its lock. VM_PFNMAP VMAs are skipped.
 */
#include <errno.h>

#include "mm/folio.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm/vma.h"
#include "util/compiler.h"

enum clear_refs_type {
	CLEAR_REFS_ALL = 1,
	CLEAR_REFS_ANON,
	CLEAR_REFS_MAPPED,
	CLEAR_REFS_SOFT_DIRTY,
	CLEAR_REFS_MM_HIWATER_RSS,
	CLEAR_REFS_LAST,
};

/* ptep_test_and_clear_young: a CAS, as the hardware may set bits meanwhile. */
static void clear_young(_Atomic uint64_t *e)
{
	uint64_t v = load_relaxed(e);

	while ((v & PT_YOUNG) && !cas_relaxed(e, &v, v & ~PT_YOUNG))
		;
}

/* Context: the table's ptl held (the walk's). */
static int clear_refs_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
				unsigned long end, void *priv)
{
	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		_Atomic uint64_t *e = &pt->e[pte_index(a)];
		uint64_t pte = load_relaxed(e);
		struct folio *folio;

		if (!pte_present(pte))
			continue;
		folio = page_folio(pte_page(pte));
		if (folio_is_zero(folio))
			continue;	/* vm_normal_folio: no folio to clear */
		clear_young(e);
		folio_clear(folio, PG_referenced);
	}
	return 0;
}

/* Context: page_table_lock held (the walk's). */
static int clear_refs_pmd(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start,
			  unsigned long end, void *priv)
{
	struct folio *folio = page_folio(pte_page(load_relaxed(pmd)));

	clear_young(pmd);
	if (!folio_is_zero(folio))
		folio_clear(folio, PG_referenced);
	return 0;
}

int vml_clear_refs(struct vml_mm *umm, int value)
{
	static const struct pt_walk_ops ops = {
		.pte_range = clear_refs_pte_range,
		.pmd_huge = clear_refs_pmd,
	};
	struct mm *mm = to_mm(umm);
	struct vma *vma;

	if (!mm || value < CLEAR_REFS_ALL || value >= CLEAR_REFS_LAST)
		return -EINVAL;
	mmap_write_lock(mm);
	if (value == CLEAR_REFS_MM_HIWATER_RSS || value == CLEAR_REFS_SOFT_DIRTY) {
		/* no peak RSS shown; no soft-dirty tracking built (see above) */
		mmap_write_unlock(mm);
		return 0;
	}
	/* Ends: each step moves past one VMA. */
	for (vma = find_vma(mm, 0); vma; vma = find_vma(mm, vma->vm_end)) {
		if (vma->vm_flags & VM_PFNMAP)
			continue;
		if (value == CLEAR_REFS_ANON && vma->vm_file)
			continue;
		if (value == CLEAR_REFS_MAPPED && !vma->vm_file)
			continue;
		walk_page_range(mm, vma->vm_start, vma->vm_end, &ops, NULL);
	}
	mmap_write_unlock(mm);
	return 0;
}
