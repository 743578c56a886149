/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * internal.h - what the mm layer's files share with each other.
 */
#ifndef VML_MM_INTERNAL_H
#define VML_MM_INTERNAL_H

#include "mm/mm_types.h"
#include "mm/pgtable.h"
#include "mm/vma_txn.h"
#include "platform/platform.h"

/* Fault flags and results (include/linux/mm_types.h). */
#define FAULT_FLAG_WRITE	0x01U
#define FAULT_FLAG_VMA_LOCK	0x02U

#define VM_FAULT_OOM		0x01U
#define VM_FAULT_SIGBUS		0x02U
#define VM_FAULT_SIGSEGV	0x04U
#define VM_FAULT_RETRY		0x08U
#define VM_FAULT_FALLBACK	0x10U	/* no huge page here: use PTEs */
typedef unsigned int vm_fault_t;

/* fault.c */
/* Context: @vma read-locked (FAULT_FLAG_VMA_LOCK) or mmap_lock held. */
vm_fault_t handle_mm_fault(struct vma *vma, unsigned long addr, unsigned int flags);

/* user_fault.c: a user access that missed. Return 0, -EFAULT, -EIO or -ENOMEM. */
int do_user_fault(struct mm *mm, unsigned long addr, bool write);

/* gup.c */
/*
 * Fault in [start, end) of @vma as GUP would. Context: mmap_lock(R).
 * Return: 0, -EFAULT (SIGBUS, SIGSEGV, PROT_NONE) or -ENOMEM.
 */
int populate_vma_page_range(struct vma *vma, unsigned long start, unsigned long end);
/*
 * faultin_page_range - MADV_POPULATE_READ/WRITE's GUP of [start, end), page
 * by page, stopping at the first error: -ENOMEM at a hole, -EINVAL at a VMA
 * that does not allow the access (PROT_NONE, a read of a write-only one, a
 * write of a read-only one), -EFAULT where the fault raises SIGBUS or
 * SIGSEGV (beyond EOF, a guard marker). Pages before it stay populated.
 * Context: mmap_lock(R).
 */
int faultin_page_range(struct mm *mm, unsigned long start, unsigned long end, bool write);
/*
 * Populate the VMAs of [start, start+len) (takes mmap_lock(R) itself); stop
 * at the first error unless @ignore_errors. Return: 0 or that error.
 */
int __mm_populate(struct mm *mm, unsigned long start, unsigned long len, bool ignore_errors);
/* mmap(MAP_POPULATE), mremap: errors are ignored. */
static inline void mm_populate(struct mm *mm, unsigned long start, unsigned long len)
{
	__mm_populate(mm, start, len, true);
}

/* mmap.c */
/*
 * Stage the removal of every VMA in [start, end), splitting straddlers.
 * Return: 0 with the neighbours in *prev, *next; or -ENOMEM.
 */
int vms_gather_munmap(struct vma_txn *t, unsigned long start, unsigned long end,
		      struct vma **prev, struct vma **next, unsigned long *nr_locked,
		      unsigned long *nr_accounted);
/*
 * The free space around [start, end) in @t's staged state, for
 * free_pgtables() after the commit and the zap.
 */
void vt_unmap_range(struct vma_txn *t, unsigned long start, unsigned long end,
		    struct unmap_range *u);
/* munmap(2) body. Context: mmap_lock(W). */
int do_munmap(struct mm *mm, unsigned long start, unsigned long len);
/*
 * The same for munmap(2) itself and mremap's shrink: once the VMAs are out
 * of the tree, downgrade to mmap_lock(R) for the zap and the page-table
 * freeing (the kernel's do_vmi_munmap told to unlock). *@downgraded: it did
 * (not on an error or an empty range); the caller drops whichever it holds.
 * Context: mmap_lock(W).
 */
int do_munmap_downgrade(struct mm *mm, unsigned long start, unsigned long len, bool *downgraded);
/* Pick an address for a new mapping (MAP_FIXED: check it). Return address or -errno. */
long get_unmapped_area(struct mm *mm, struct vml_file *file, unsigned long addr, unsigned long len,
		       unsigned long pgoff, int flags, unsigned long vm_flags);
/* Make a shared anonymous mapping's backing object ("/dev/zero (deleted)"). */
int shmem_zero_setup(struct mm *mm, unsigned long len, struct vml_file **out);
bool accountable_mapping(struct vml_file *file, unsigned long vm_flags);

/* sys.c: may @pages more be committed (__vm_enough_memory, heuristic mode)? 0 or -ENOMEM. */
int vm_enough_memory(struct vml_sys *sys, unsigned long pages);
/*
 * mmap.c: grow a MAP_GROWSDOWN VMA down to @addr (expand_stack). A growth the
 * limits refuse still leaves the VMA its new anon_vma, as in the kernel.
 * Context: mmap_lock(W).
 */
int expand_stack(struct mm *mm, unsigned long addr);

/*
 * A system call's entry and exit, outside any lock: what the simulated
 * machine charges every vml_ call that stands for one (0 on real threads).
 */
static inline void syscall_charge(struct mm *mm)
{
	plat_charge_ns(mm->sys->cfg.costs.syscall_ns, PLAT_KERNEL);
}

#endif /* VML_MM_INTERNAL_H */
