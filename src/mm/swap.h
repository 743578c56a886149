/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * swap.h - the model's swap device: sys->cfg.swap_pages slots, each with a
 * count of the page-table entries (and shmem page-cache slots) that refer
 * to it. No data is kept, only the accounting that smaps shows.
 *
 * The swap cache: an anonymous page swapped in stays in the swap cache,
 * still owning its slot, until the kernel frees it from there: at once on
 * a fault in a locked VMA; on a write fault to a folio only this fault uses
 * (never a fresh one, which the LRU add batch still holds); on a later
 * write that reuses the page; when the last mapping goes and no swap entry
 * refers to the slot any more; when reclaim swaps it out again (to the
 * same slot). numa_maps counts such pages as swapcache=; a fork's child
 * that faults on a shared swap entry finds the parent's page there.
 */
#ifndef VML_MM_SWAP_H
#define VML_MM_SWAP_H

#include "mm/mm_types.h"

int swap_init(struct vml_sys *sys);
void swap_fini(struct vml_sys *sys);
/* Allocate a slot with count 1. Return: the slot offset (>= 1) or 0 if swap is full/absent. */
unsigned long swap_alloc(struct vml_sys *sys);
void swap_dup(struct vml_sys *sys, unsigned long off);
void swap_free_entry(struct vml_sys *sys, unsigned long off);
int swap_count(struct vml_sys *sys, unsigned long off);

/* Does a folio cache @off now? (Takes swap_lock: inside a ptl is allowed.) */
bool swap_cache_has(struct vml_sys *sys, unsigned long off);
/* The folio caching @off, with a reference for the caller; NULL if none. */
struct folio *swap_cache_get(struct vml_sys *sys, unsigned long off);
/*
 * swap_cache_install - @folio caches @off from now on (PG_swapcache set, a
 * reference taken for the cache), unless another folio already does: then
 * that one is returned, with a reference for the caller.
 * Context: an entry still refers to @off (the caller holds its ptl).
 */
struct folio *swap_cache_install(struct vml_sys *sys, struct folio *folio, unsigned long off);
/*
 * folio_free_swap - drop @folio from the swap cache if no swap entry refers
 * to its slot any more (folio_free_swap), putting the cache's reference.
 * Return: true if it was dropped (the caller must hold another reference).
 */
bool folio_free_swap(struct vml_sys *sys, struct folio *folio);
/*
 * free_swap_cache - a page just unmapped leaves the swap cache if nothing
 * maps it any more and no entry wants its slot (the kernel's
 * free_swap_cache). Context: the caller holds a reference on @folio.
 */
void free_swap_cache(struct vml_sys *sys, struct folio *folio);
/*
 * swap_cache_take_slot - reclaim swaps @folio out to the slot it caches: a
 * new swap entry for it (count + 1), and the folio leaves the cache (its
 * reference put). Return: the slot.
 */
unsigned long swap_cache_take_slot(struct vml_sys *sys, struct folio *folio);

#endif /* VML_MM_SWAP_H */
