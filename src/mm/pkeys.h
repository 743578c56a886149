/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pkeys.h - x86 memory protection keys, as far as they show in /proc: the
 * execute-only key (arch/x86/mm/pkeys.c). On a CPU with protection keys a
 * mapping whose protection is exactly PROT_EXEC gets a key of its own, the
 * mm's execute-only key (allocated on first use: key 1, as no pkey_alloc()
 * came before), so smaps prints "ProtectionKey: 1" and the VMA no longer
 * merges with its key-0 neighbours. mprotect() away from PROT_EXEC moves it
 * back to key 0. The model has no pkey_alloc()/pkey_mprotect().
 */
#ifndef VML_MM_PKEYS_H
#define VML_MM_PKEYS_H

#include <sys/mman.h>

#include "mm/mm_types.h"
#include "mm/mmap_lock.h"

static inline int vma_pkey(const struct vma *vma)
{
	return (int)((vma->vm_flags & VM_PKEY_MASK) >> VM_PKEY_SHIFT);
}

static inline unsigned long pkey_vm_flags(int pkey)
{
	return (unsigned long)pkey << VM_PKEY_SHIFT;
}

/*
 * execute_only_pkey - the mm's execute-only key, allocated on first use.
 * Context: mmap_lock(W).
 * Return: the key, or 0 where the host has no protection keys.
 */
static inline int execute_only_pkey(struct mm *mm)
{
	mmap_assert_write_locked(mm);
	if (!mm->sys->cfg.pkeys)
		return 0;
	if (mm->execute_only_pkey < 0)
		mm->execute_only_pkey = 1;	/* key 0 is the default; nothing else allocated */
	return mm->execute_only_pkey;
}

/*
 * arch_override_mprotect_pkey - the key @vma has after mprotect(@prot)
 * (pkey -1: a plain mprotect). Context: mmap_lock(W).
 */
static inline int arch_override_mprotect_pkey(struct vma *vma, int prot)
{
	struct mm *mm = vma->vm_mm;

	if (!mm->sys->cfg.pkeys)
		return 0;
	if (prot == PROT_EXEC)
		return execute_only_pkey(mm);
	/* It was execute-only and will not be: back to the default key. */
	if ((vma->vm_flags & VM_ACCESS_FLAGS) == VM_EXEC &&
	    vma_pkey(vma) == mm->execute_only_pkey)
		return 0;
	return vma_pkey(vma);
}

#endif /* VML_MM_PKEYS_H */
