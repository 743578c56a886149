/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collapse.h - turning 512 small anonymous pages into one PMD-mapped huge
 * page (mm/khugepaged.c hpage_collapse_scan_pmd + collapse_huge_page).
 */
#ifndef VML_KHUGEPAGED_COLLAPSE_H
#define VML_KHUGEPAGED_COLLAPSE_H

#include <stdbool.h>

#include "mm/mm_types.h"

enum scan_result {
	SCAN_SUCCEED,
	SCAN_FAIL,
	SCAN_PMD_NULL,		/* nothing mapped there yet */
	SCAN_PMD_MAPPED,	/* already a huge page */
	SCAN_EXCEED_NONE,
	SCAN_EXCEED_SWAP,
	SCAN_PTE_NON_PRESENT,	/* a guard marker: collapse would drop it */
	SCAN_EXCEED_SHARED,
	SCAN_NO_REFERENCED,
	SCAN_PAGE_NOT_ANON,
	SCAN_VMA_CHECK,		/* the VMA changed while the lock was dropped */
	SCAN_ALLOC_FAIL,
};

struct collapse_control {
	unsigned int max_ptes_none, max_ptes_swap, max_ptes_shared;
	/*
	 * MADV_COLLAPSE (cc->is_khugepaged false): no max_ptes_* limit, no
	 * referenced page needed, and the VMA is judged as TVA_FORCED_COLLAPSE
	 */
	bool madv;
	/* mmap_lock(R) hold accounting: set when the read lock is (re)taken */
	uint64_t lock_taken_ns, lock_taken_cpu;	/* wall clock, the thread's CPU time */
	void (*note_unlock)(void *arg, uint64_t held_ns, uint64_t held_cpu_ns);
	void *arg;
};

/* Can khugepaged work on @vma (TVA_KHUGEPAGED): allowed, anon_vma present, holds a PMD range? */
bool collapse_vma_eligible(struct vma *vma);

/*
 * madvise_collapse - MADV_COLLAPSE over [@start, @end) of @vma (one VMA's
 * part of the madvise range): collapse every PMD range inside it, or find
 * it PMD-mapped already. Context: mmap_lock(R) held on entry and on
 * return; it may be dropped in between (*@lock_dropped set: @vma may be gone).
 * Return: 0 if every PMD range is PMD-mapped now, else the errno of the
 * last failure (madvise_collapse_errno: -EINVAL mostly, -ENOMEM, -EAGAIN).
 */
int madvise_collapse(struct vma *vma, unsigned long start, unsigned long end, bool *lock_dropped);

/*
 * Scan the PMD range at @addr of @vma and collapse it if it qualifies.
 * Context: mmap_lock(R) held on entry. A collapse drops it (takes
 * mmap_lock(W) on the way) and returns with *lock_dropped set and no lock.
 */
enum scan_result collapse_scan_pmd(struct mm *mm, struct vma *vma, unsigned long addr,
				   struct collapse_control *cc, bool *lock_dropped);

#endif /* VML_KHUGEPAGED_COLLAPSE_H */
