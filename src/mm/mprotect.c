// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mprotect.c - mprotect(2) (mm/mprotect.c do_mprotect_pkey/mprotect_fixup).
 *
 * Like the kernel, a range that runs into a hole changes the VMAs before the
 * hole and then fails with -ENOMEM; so does a VMA that refuses the new
 * protection (-EACCES). An allocation failure, on the other hand, changes
 * nothing at all.
 */
#include <errno.h>
#include <sys/mman.h>

#include "mm/file.h"
#include "mm/internal.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pkeys.h"
#include "mm/pgtable.h"
#include "mm/vma.h"
#include "util/alloc.h"
#include "util/compiler.h"
#include "util/linux_compat.h"

/* A VMA part whose flags mprotect_fixup changed: its PTEs follow after the commit. */
struct prot_change {
	unsigned long start, end, oldflags, vm_flags;
	bool writable_prot;	/* shared, writable, no write notification (shmem) */
};

/*
 * Change one VMA's part [start, end) to @newflags. Return the staged VMA
 * now covering the range (for the next iteration's prev), or NULL with *err.
 */
static struct vma *mprotect_fixup(struct vma_txn *t, struct vma *vma, struct vma *prev,
				  unsigned long start, unsigned long end, unsigned long newflags,
				  int *err)
{
	unsigned long oldflags = vma->vm_flags;

	if (newflags == oldflags)
		return vma;
	if (newflags & VM_WRITE) {
		/* Charged by the caller (vm_enough_memory) before we got here. */
		if (!(oldflags & (VM_ACCOUNT | VM_WRITE | VM_HUGETLB | VM_SHARED | VM_NORESERVE)))
			newflags |= VM_ACCOUNT;
	} else if ((oldflags & VM_ACCOUNT) && vma_is_anonymous(vma) && !vma_anon_vma(vma)) {
		/* Never written: the commitment can be given back. */
		newflags &= ~VM_ACCOUNT;
	}
	return vma_modify_flags(t, prev, vma, start, end, newflags, err);
}

static int record_change(struct prot_change **changes, size_t *nr, unsigned long start,
			 unsigned long end, unsigned long oldflags, const struct vma *vma)
{
	struct prot_change *n = vml_realloc(*changes, (*nr + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	n[(*nr)++] = (struct prot_change){
		start, end, oldflags, vma->vm_flags, vma_writable_without_notify(vma),
	};
	*changes = n;
	return 0;
}

/*
 * A private locked mapping that becomes writable is broken COW at once; one
 * that was writable already (or is shared) is left alone.
 */
static bool prot_change_populates(const struct prot_change *c)
{
	return (c->oldflags & (VM_LOCKED | VM_WRITE | VM_SHARED)) == VM_LOCKED &&
	       (c->vm_flags & VM_WRITE);
}

/*
 * Page-table entries follow the VMAs that were changed (and committed).
 * Context: mmap_lock(W).
 */
static void apply_prot_changes(struct mm *mm, const struct prot_change *changes, size_t nr)
{
	struct vma *vma;

	for (size_t i = 0; i < nr; i++) {
		const struct prot_change *c = &changes[i];

		change_protection(mm, c->start, c->end, c->vm_flags, c->writable_prot);
		if (!prot_change_populates(c))
			continue;
		for (vma = find_vma(mm, c->start); vma && vma->vm_start < c->end;
		     vma = find_vma(mm, vma->vm_end))
			populate_vma_page_range(vma, VML_MAX(vma->vm_start, c->start),
						VML_MIN(vma->vm_end, c->end));
	}
}

/*
 * mprotect_first_vma - the VMA the change starts in: the one at *@start,
 * or with PROT_GROWSDOWN the first below @end, whose start *@start becomes.
 * Return: 0 and *@out; -ENOMEM (nothing mapped there) or -EINVAL.
 */
static int mprotect_first_vma(struct vma_txn *t, unsigned long *start, unsigned long end,
			      int grows, struct vma **out)
{
	struct vma *vma = vt_next(t, *start);

	if (!vma)
		return -ENOMEM;
	if (grows & PROT_GROWSDOWN) {
		if (vma->vm_start >= end)
			return -ENOMEM;
		*start = vma->vm_start;
		if (!(vma->vm_flags & VM_GROWSDOWN))
			return -EINVAL;
	} else {
		if (vma->vm_start > *start)
			return -ENOMEM;
		if (grows & PROT_GROWSUP)
			return -EINVAL;	/* no VM_GROWSUP on x86 */
	}
	*out = vma;
	return 0;
}

/*
 * mprotect_vma_flags - the flags @vma gets for @prot (@reqflags: its VM_*
 * access bits), changed over [@from, @to).
 * Return: 0 and *@out; -EACCES (its VM_MAY* bits forbid it) or -ENOMEM
 *         (making private memory writable commits it, and that is refused).
 */
static int mprotect_vma_flags(struct mm *mm, struct vma *vma, unsigned long reqflags,
			      unsigned long prot, unsigned long from, unsigned long to,
			      unsigned long *out)
{
	unsigned long newflags = reqflags | (vma->vm_flags & ~(VM_ACCESS_FLAGS | VM_PKEY_MASK)) |
				 pkey_vm_flags(arch_override_mprotect_pkey(vma, (int)prot));

	/* newflags >> 4 shifts VM_MAY* into the place of VM_* */
	if ((newflags & ~(newflags >> 4)) & VM_ACCESS_FLAGS)
		return -EACCES;
	/* A refusal stops the whole mprotect here, as in the kernel. */
	if (newflags != vma->vm_flags && (newflags & VM_WRITE) &&
	    !(vma->vm_flags & (VM_ACCOUNT | VM_WRITE | VM_HUGETLB | VM_SHARED | VM_NORESERVE)) &&
	    vm_enough_memory(mm->sys, (to - from) >> PAGE_SHIFT))
		return -ENOMEM;
	*out = newflags;
	return 0;
}

static int do_mprotect(struct mm *mm, unsigned long start, size_t len, unsigned long prot)
{
	const int grows = prot & (PROT_GROWSDOWN | PROT_GROWSUP);
	unsigned long end, nstart, tmp, reqflags;
	struct prot_change *changes = NULL;
	size_t nr_changes = 0;
	struct vma *vma, *prev;
	struct vma_txn t;
	int error;

	prot &= ~(unsigned long)(PROT_GROWSDOWN | PROT_GROWSUP);
	if (grows == (PROT_GROWSDOWN | PROT_GROWSUP))
		return -EINVAL;
	if (offset_in_page(start))
		return -EINVAL;
	if (!len)
		return 0;
	len = PAGE_ALIGN(len);
	end = start + len;
	if (end <= start)
		return -ENOMEM;
	if (prot & ~(unsigned long)(PROT_READ | PROT_WRITE | PROT_EXEC | PROT_SEM))
		return -EINVAL;
	reqflags = ((prot & PROT_READ) ? VM_READ : 0) | ((prot & PROT_WRITE) ? VM_WRITE : 0) |
		   ((prot & PROT_EXEC) ? VM_EXEC : 0);

	mmap_write_lock(mm);
	vma_txn_begin(&t, mm);
	error = mprotect_first_vma(&t, &start, end, grows, &vma);
	if (error)
		goto out;
	prev = (start > vma->vm_start) ? vma : vt_prev(&t, start);

	error = 0;
	nstart = start;
	tmp = vma->vm_start;
	while (vma && vma->vm_start < end) {
		unsigned long newflags, oldflags;

		if (vma->vm_start != tmp) {
			error = -ENOMEM;
			break;
		}
		tmp = VML_MIN(vma->vm_end, end);
		error = mprotect_vma_flags(mm, vma, reqflags, prot, nstart, tmp, &newflags);
		if (error)
			break;
		/* mprotect_fixup's first check, before an unchanged prot returns: mseal */
		if (vma->vm_flags & VM_SEALED) {
			error = -EPERM;
			break;
		}
		oldflags = vma->vm_flags;
		vma = mprotect_fixup(&t, vma, prev, nstart, tmp, newflags, &error);
		if (!vma)
			goto fail;	/* allocation or map_count: nothing more is applied */
		/* Unchanged flags: the kernel returns before touching the page tables. */
		if (vma->vm_flags != oldflags) {
			error = record_change(&changes, &nr_changes, nstart, tmp, oldflags, vma);
			if (error)
				goto fail;
		}
		prev = vma;
		tmp = vma->vm_end;
		nstart = tmp;
		/*
		 * The kernel faults such a VMA in inside mprotect_fixup, before it
		 * decides the next VMA's merge, which the new anon_vma can then
		 * forbid. So: commit what is staged, fault it in, go on in a new
		 * transaction (a later failure leaves this part done, as there).
		 */
		if (nr_changes && prot_change_populates(&changes[nr_changes - 1])) {
			vma_txn_commit(&t);
			apply_prot_changes(mm, changes, nr_changes);
			nr_changes = 0;
			vma_txn_begin(&t, mm);
			prev = vt_find(&t, tmp - 1);
		}
		vma = vt_next(&t, tmp);
	}
	if (!error && tmp < end)
		error = -ENOMEM;
	vma_txn_commit(&t);
	apply_prot_changes(mm, changes, nr_changes);
	mmap_write_unlock(mm);
	vml_free(changes);
	return error;

fail:
	vma_txn_abort(&t);
	mmap_write_unlock(mm);
	vml_free(changes);
	return error;
out:
	vma_txn_abort(&t);
	mmap_write_unlock(mm);
	return error;
}

int vml_mprotect(struct vml_mm *umm, unsigned long addr, unsigned long len, int prot)
{
	if (!umm)
		return -EINVAL;
	syscall_charge(to_mm(umm));
	return do_mprotect(to_mm(umm), addr, len, (unsigned long)(unsigned int)prot);
}
