/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rmap.h - anon_vma, the identity of a set of anonymous pages (mm/rmap.c).
 *
 * The model keeps of the kernel's reverse map only what decides merges and
 * sharing: a VMA's anonymous pages (folio->mapping) and the VMA itself point
 * at one anon_vma, reference-counted; a neighbour's anon_vma is reused when
 * the two VMAs could merge but for their protections. A file's reverse map
 * is its i_mmap interval tree (file.h).
 *
 * vma->anon_vma is set once, by the first fault or stack growth that needs
 * it, under mm->page_table_lock with a release store; vma_anon_vma() (vma.h)
 * reads it with acquire.
 */
#ifndef VML_MM_RMAP_H
#define VML_MM_RMAP_H

#include "mm/internal.h"

/* A new anon_vma with one reference, or NULL. */
struct anon_vma *anon_vma_alloc(void);
void anon_vma_get(struct anon_vma *av);
/* Drop a reference; the last frees it. NULL is allowed. */
void anon_vma_put(struct anon_vma *av);

/*
 * anon_vma_prepare - give @vma an anon_vma (a mergeable neighbour's or a
 * new one). Context: mmap_lock held (read or write). Return: 0 or -ENOMEM.
 */
int anon_vma_prepare(struct vma *vma);
/*
 * vmf_anon_prepare - make sure a faulting @vma has an anon_vma. Under the
 * VMA lock (FAULT_FLAG_VMA_LOCK) it needs mmap_lock(R) for the neighbours,
 * and only tries for it: VM_FAULT_RETRY when that fails.
 * Return: 0, VM_FAULT_RETRY or VM_FAULT_OOM.
 */
vm_fault_t vmf_anon_prepare(struct vma *vma, unsigned int flags);

#endif /* VML_MM_RMAP_H */
