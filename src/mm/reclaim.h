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

/*
 * split_file_folio - split a clean large page-cache folio into single pages,
 * unmapped first from every mapping through i_mmap; left whole if someone
 * else holds a reference. Context: a reference held, no page-table lock.
 */
void split_file_folio(struct folio *folio);
/*
 * split_file_folio_at - the same, but non-uniform around page @at of the
 * folio (try_folio_split, 6.15+, which truncation uses): page @at alone,
 * the rest in the largest naturally aligned pieces; @at < 0: single pages.
 */
void split_file_folio_at(struct folio *folio, long at);
void madvise_free_range(struct mm *mm, unsigned long start, unsigned long end);
void madvise_cold_range(struct mm *mm, unsigned long start, unsigned long end);
void madvise_pageout_range(struct mm *mm, unsigned long start, unsigned long end);

#endif /* VML_MM_RECLAIM_H */
