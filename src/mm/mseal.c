// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mseal.c - mseal(2) (mm/mseal.c, 6.10+; the 6.15 rework that 6.18 has).
 *
 * Sealing sets VM_SEALED (smaps `sl`) on every VMA of a range that must be
 * mapped without a hole, splitting at the ends and merging with sealed
 * neighbours like any flag change. The flag is never cleared: the sealed
 * VMA then refuses, with EPERM, what would change or drop it - munmap, an
 * mmap over it, mremap of it, mprotect of it, and the madvise advices that
 * discard the data of an anonymous VMA the caller could not write anyway
 * (can_madvise_modify, madvise.c). Those checks live where the kernel has
 * them: vms_gather_munmap (mmap.c), do_mprotect's loop (mprotect.c),
 * check_prep_vma (mremap.c), madvise_vma (madvise.c). A fork copies the
 * flag.
 *
 * Locks: mmap_lock(W) for the whole call; the changes are staged in a
 * transaction and committed together (the kernel changes VMA by VMA, but
 * only an allocation failure could stop it half-way).
 */
#include <errno.h>

#include "mm/internal.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/vma.h"
#include "mm/vma_txn.h"
#include "util/compiler.h"

/* Does [start, end) have a hole (range_contains_unmapped)? Context: mmap_lock held. */
static bool range_contains_unmapped(struct mm *mm, unsigned long start, unsigned long end)
{
	unsigned long prev_end = start;
	struct vma *vma;

	/* Ends: each step moves past one VMA. */
	for (vma = find_vma(mm, start); vma && vma->vm_start < end; vma = find_vma(mm, vma->vm_end)) {
		if (vma->vm_start > prev_end)
			return true;
		prev_end = vma->vm_end;
	}
	return prev_end < end;
}

/* Seal every VMA of [start, end), which has no hole. Context: mmap_lock(W). */
static int mseal_apply(struct mm *mm, unsigned long start, unsigned long end)
{
	unsigned long cur = start;
	struct vma *vma, *prev;
	struct vma_txn t;
	int err = 0;

	vma_txn_begin(&t, mm);
	vma = vt_next(&t, start);
	prev = start > vma->vm_start ? vma : vt_prev(&t, vma->vm_start);
	/* Ends: cur moves to the end of each VMA (or to @end) every step. */
	while (vma && cur < end) {
		unsigned long cur_end = VML_MIN(vma->vm_end, end);

		if (!(vma->vm_flags & VM_SEALED)) {
			vma = vma_modify_flags(&t, prev, vma, cur, cur_end,
					       vma->vm_flags | VM_SEALED, &err);
			if (!vma) {
				vma_txn_abort(&t);
				return err;
			}
		}
		prev = vma;
		cur = cur_end;
		vma = vt_next(&t, cur);
	}
	vma_txn_commit(&t);
	return 0;
}

int vml_mseal(struct vml_mm *umm, unsigned long start, unsigned long len_in, unsigned long flags)
{
	struct mm *mm = to_mm(umm);
	unsigned long len, end;
	int ret;

	if (!mm || flags)
		return -EINVAL;
	if (offset_in_page(start))
		return -EINVAL;
	len = PAGE_ALIGN(len_in);
	if (len_in && !len)
		return -EINVAL;		/* a small negative length rounded up to 0 */
	end = start + len;
	if (end < start)
		return -EINVAL;
	if (end == start)
		return 0;
	mmap_write_lock(mm);
	ret = range_contains_unmapped(mm, start, end) ? -ENOMEM : mseal_apply(mm, start, end);
	mmap_write_unlock(mm);
	return ret;
}
