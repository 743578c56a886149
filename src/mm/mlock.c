// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mlock.c - mlock(2) and munlock(2) (mm/mlock.c apply_vma_lock_flags).
 *
 * Like the kernel: an unaligned start is rounded down (and the length up),
 * a hole fails with -ENOMEM after the VMAs before it were changed, and
 * mlock() then faults the range in, turning populate errors into mlock's
 * (-EFAULT becomes -ENOMEM, -ENOMEM becomes -EAGAIN).
 */
#include <errno.h>

#include "mm/internal.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/vma.h"
#include "util/compiler.h"

static struct vma *mlock_fixup(struct vma_txn *t, struct vma *vma, struct vma *prev,
			       unsigned long start, unsigned long end, unsigned long newflags,
			       long *locked_delta, int *err)
{
	unsigned long oldflags = vma->vm_flags;
	struct vma_merge vmg;
	struct vma *res;

	/* Special mappings are never locked, and not counted. */
	if (newflags == oldflags || (oldflags & VM_SPECIAL))
		return vma;
	vmg_init_modify(&vmg, t, prev, vma, start, end);
	vmg.vm_flags = newflags;
	res = vma_modify(&vmg);
	if (!res) {
		*err = vmg.err;
		return NULL;
	}
	res->vm_flags = newflags;
	if ((newflags & VM_LOCKED) && !(oldflags & VM_LOCKED))
		*locked_delta += (long)((end - start) >> PAGE_SHIFT);
	else if (!(newflags & VM_LOCKED) && (oldflags & VM_LOCKED))
		*locked_delta -= (long)((end - start) >> PAGE_SHIFT);
	return res;
}

/* Context: mmap_lock(W). */
static int apply_vma_lock_flags(struct mm *mm, unsigned long start, unsigned long len,
				unsigned long flags)
{
	unsigned long end = start + len, nstart, tmp;
	struct vma *vma, *prev;
	struct vma_txn t;
	long delta = 0;
	int error = 0;

	if (end < start)
		return -EINVAL;
	if (end == start)
		return 0;
	vma_txn_begin(&t, mm);
	vma = vt_find(&t, start);
	if (!vma) {
		vma_txn_abort(&t);
		return -ENOMEM;
	}
	prev = (start > vma->vm_start) ? vma : vt_prev(&t, start);
	nstart = start;
	tmp = vma->vm_start;
	while (vma && vma->vm_start < end) {
		unsigned long newflags;

		if (vma->vm_start != tmp) {
			error = -ENOMEM;
			break;
		}
		newflags = (vma->vm_flags & ~VM_LOCKED_MASK) | flags;
		tmp = VML_MIN(vma->vm_end, end);
		vma = mlock_fixup(&t, vma, prev, nstart, tmp, newflags, &delta, &error);
		if (!vma) {
			vma_txn_abort(&t);
			return error;
		}
		prev = vma;
		tmp = vma->vm_end;
		nstart = tmp;
		vma = vt_next(&t, tmp);
	}
	if (!error && tmp < end)
		error = -ENOMEM;
	vma_txn_commit(&t);
	mm->locked_vm = (unsigned long)((long)mm->locked_vm + delta);
	return error;
}

/* mlock's populate: like mm_populate, but errors count (ignore_errors = 0). */
static int mlock_populate(struct mm *mm, unsigned long start, unsigned long len)
{
	unsigned long end = start + len, nstart;
	struct vma *vma;
	int ret = 0;

	mmap_read_lock(mm);
	for (nstart = start; nstart < end; nstart = vma->vm_end) {
		vma = find_vma(mm, nstart);
		if (!vma || vma->vm_start >= end)
			break;
		if (vma->vm_flags & (VM_IO | VM_PFNMAP))
			continue;
		ret = populate_vma_page_range(vma, VML_MAX(nstart, vma->vm_start),
					      VML_MIN(end, vma->vm_end));
		if (ret)
			break;
	}
	mmap_read_unlock(mm);
	if (ret == -EFAULT)
		return -ENOMEM;
	if (ret == -ENOMEM)
		return -EAGAIN;
	return ret;
}

static int do_mlock(struct mm *mm, unsigned long start, unsigned long len, unsigned long flags)
{
	int err;

	len = PAGE_ALIGN(len + offset_in_page(start));
	start &= PAGE_MASK;
	mmap_write_lock(mm);
	err = apply_vma_lock_flags(mm, start, len, flags);
	mmap_write_unlock(mm);
	if (err || !flags)
		return err;
	return mlock_populate(mm, start, len);
}

int vml_mlock(struct vml_mm *umm, unsigned long addr, unsigned long len)
{
	if (!umm)
		return -EINVAL;
	return do_mlock(to_mm(umm), addr, len, VM_LOCKED);
}

int vml_munlock(struct vml_mm *umm, unsigned long addr, unsigned long len)
{
	if (!umm)
		return -EINVAL;
	return do_mlock(to_mm(umm), addr, len, 0);
}
