// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * user_fault.c - the arch fault handler (arch/x86/mm/fault.c
 * do_user_addr_fault) and vml_touch(), the model's user access.
 *
 * A user access that the "hardware" (pte_access_fast) cannot complete
 * faults: the VMA covering the address is read-locked under RCU
 * (lock_vma_under_rcu) and handle_mm_fault runs under that lock alone; if
 * the VMA cannot be locked, or the fault needs mmap_lock after all
 * (VM_FAULT_RETRY), it is redone under mmap_lock(R), growing a
 * MAP_GROWSDOWN stack below which it landed (expand_stack, under
 * mmap_lock(W)).
 */
#include <errno.h>

#include "mm/pkeys.h"
#include "mm/internal.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm/vma.h"
#include "mm/vma_lock.h"
#include "util/compiler.h"

/* The arch's access check. */
static bool access_error(struct vma *vma, bool write)
{
	/*
	 * Protection keys deny data access before anything else (x86's
	 * access_error, arch_vma_access_permitted). The model's only non-zero
	 * key is the execute-only one, which its thread can neither read nor
	 * write (the PKRU that execute_only_pkey() set up).
	 */
	if (vma_pkey(vma))
		return true;
	if (write)
		return !(vma->vm_flags & VM_WRITE);
	return !(vma->vm_flags & VM_ACCESS_FLAGS);
}

static int fault_result_errno(vm_fault_t ret)
{
	if (ret & VM_FAULT_OOM)
		return -ENOMEM;
	if (ret & VM_FAULT_SIGBUS)
		return -EIO;
	if (ret & VM_FAULT_SIGSEGV)
		return -EFAULT;
	return 0;
}

int do_user_fault(struct mm *mm, unsigned long addr, bool write)
{
	unsigned int flags = write ? FAULT_FLAG_WRITE : 0;
	struct vma *vma;
	vm_fault_t ret;

	/* a kernel without CONFIG_PER_VMA_LOCK goes to mmap_lock at once */
	vma = mm->sys->cfg.no_per_vma_lock ? NULL : lock_vma_under_rcu(mm, addr);
	if (vma) {
		if (access_error(vma, write)) {
			vma_end_read(vma);
			return -EFAULT;
		}
		ret = handle_mm_fault(vma, addr, flags | FAULT_FLAG_VMA_LOCK);
		vma_end_read(vma);
		if (!(ret & VM_FAULT_RETRY)) {
			stat_inc(&mm->stats.faults_vma_locked);
			return fault_result_errno(ret);
		}
		stat_inc(&mm->stats.vma_lock_retry);
	}

	mmap_read_lock(mm);
	vma = vma_lookup(mm, addr);
	if (!vma) {
		/* Below a stack VMA: grow it down (lock_mm_and_find_vma -> expand_stack). */
		vma = find_vma(mm, addr);
		if (vma && (vma->vm_flags & VM_GROWSDOWN)) {
			mmap_read_unlock(mm);
			mmap_write_lock(mm);
			expand_stack(mm, addr);
			mmap_write_downgrade(mm);
		}
		vma = vma_lookup(mm, addr);
	}
	if (!vma || access_error(vma, write)) {
		mmap_read_unlock(mm);
		return -EFAULT;
	}
	ret = handle_mm_fault(vma, addr, flags);
	mmap_read_unlock(mm);
	return fault_result_errno(ret);
}

int vml_touch(struct vml_mm *umm, unsigned long addr, unsigned long len, int access)
{
	struct mm *mm = to_mm(umm);
	bool write = access == VML_TOUCH_WRITE;
	unsigned long a, end;

	if (!mm || (access != VML_TOUCH_READ && access != VML_TOUCH_WRITE))
		return -EINVAL;
	if (!len)
		return 0;
	end = addr + len;
	if (end < addr || end > TASK_SIZE)
		return -EFAULT;
	/* Ends: each page is accessed once; a fault either maps it or fails. */
	for (a = addr & PAGE_MASK; a < end; a += PAGE_SIZE) {
		int tries = 0;

		while (!(write ? pte_store_fast(mm, a) : pte_access_fast(mm, a, false))) {
			int err = do_user_fault(mm, a, write);

			if (err)
				return err;
			/* A racing unmap can undo the fault; try a bounded number of times. */
			if (++tries > 16)
				break;
		}
	}
	return 0;
}
