/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shmem.h - what tmpfs objects add to a file: pages that go to swap from
 * the page cache (not from page tables), and the swap accounting smaps
 * shows for them (mm/shmem.c shmem_swap_usage, docs/kernel.md §7).
 */
#ifndef VML_MM_SHMEM_H
#define VML_MM_SHMEM_H

#include "mm/mm_types.h"

/*
 * Bytes of @vma's shmem object in swap; racy by design. Counts the path it
 * took in @vma's mm (struct mm_stats). Context: @vma locked.
 */
unsigned long shmem_swap_usage(struct vma *vma);
/* Is the object's page @index in swap? (One lookup: smaps per empty entry.) */
bool shmem_swap_lookup(struct vml_file *file, unsigned long index);
/* Bytes in swap among the object's pages [start, end) (page indexes). */
unsigned long shmem_partial_swap_usage(struct vml_file *file, unsigned long start,
				       unsigned long end);
/* Move a cached shmem page to swap if only the cache holds it. Return true if moved. */
bool shmem_writeout(struct vml_file *file, struct folio *folio);
/*
 * Has a VMA's unmapping ended @file, a shared anonymous object whose page
 * cache holds a folio? Then the LRU batches are to be drained (see shmem.c).
 * Context: the VMA is off file->i_mmap already.
 */
bool shmem_zero_unmap_drains(struct vml_file *file);
/*
 * shmem_allowable_huge_orders - the folio orders page @index of shmem @file
 * may get (6.18 shmem_allowable_huge_orders), a mask of orders 1..9:
 * tmpfs files and write() follow the mount's huge= policy (the PMD order
 * alone); in a VMA the internal mount's objects follow the per-size
 * shmem modes. @vma: the faulting VMA, or NULL for write(); @write_end:
 * where the write ends (bytes; 0 for a fault); @i_size: the file's size
 * before it. Whether the VMA holds a folio of each order is the caller's to
 * check (thp_vma_suitable_orders).
 */
unsigned long shmem_allowable_huge_orders(struct vml_file *file, struct vma *vma,
					  unsigned long index, unsigned long write_end,
					  unsigned long i_size);
/*
 * shmem_forced_huge_orders - the same for MADV_COLLAPSE of @vma
 * (shmem_huge_force): a tmpfs file gets the PMD size whatever its mount
 * says; the internal mount's objects the sizes that inherit, are always,
 * advised, or lie within the file - only those that inherit under "force";
 * nothing under "deny" or MADV_NOHUGEPAGE.
 */
unsigned long shmem_forced_huge_orders(struct vml_file *file, struct vma *vma);

#endif /* VML_MM_SHMEM_H */
