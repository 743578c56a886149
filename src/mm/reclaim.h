/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reclaim.h - what MADV_FREE, MADV_COLD and MADV_PAGEOUT do to the pages of
 * a range (mm/madvise.c + the parts of mm/vmscan.c they reach).
 * Context: mmap_lock held; the range is one VMA's part and that VMA allows
 * the advice (the kernel's per-VMA steps, each draining the LRU batches first).
 */
#ifndef VML_MM_RECLAIM_H
#define VML_MM_RECLAIM_H

#include "mm/mm_types.h"

void madvise_free_range(struct mm *mm, unsigned long start, unsigned long end);
void madvise_cold_range(struct mm *mm, unsigned long start, unsigned long end);
void madvise_pageout_range(struct mm *mm, unsigned long start, unsigned long end);

#endif /* VML_MM_RECLAIM_H */
