/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * swap.h - the model's swap device: sys->cfg.swap_pages slots, each with a
 * count of the page-table entries (and shmem page-cache slots) that refer
 * to it. No data is kept, only the accounting that smaps shows.
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

#endif /* VML_MM_SWAP_H */
