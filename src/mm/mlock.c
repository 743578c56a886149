// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mlock.c - mlock(2), mlock2(2), munlock(2), mlockall(2) and munlockall(2)
 * (mm/mlock.c apply_vma_lock_flags, apply_mlockall_flags).
 *
 * Like the kernel: an unaligned start is rounded down (and the length up),
 * a hole fails with -ENOMEM after the VMAs before it were changed (and
 * nothing is faulted in), and a successful mlock() then faults the range in,
 * turning populate errors into mlock's (-EFAULT becomes -ENOMEM, -ENOMEM
 * becomes -EAGAIN). MLOCK_ONFAULT (VM_LOCKONFAULT) locks what is mapped
 * and what faults in later, and populates nothing.
 *
 * mlockall() changes every VMA whole (so merges, never splits), ignoring
 * what a VMA refuses; MCL_FUTURE puts VM_LOCKED (MCL_ONFAULT: and
 * VM_LOCKONFAULT) into mm->def_flags, which every later mapping gets;
 * MCL_CURRENT then populates the whole address space, errors ignored - also
 * with MCL_ONFAULT, when only VMAs that did not take the lock (droppable
 * ones) are faulted in. munlockall() is mlockall() of nothing.
 */
#include <errno.h>

#include "mm/folio.h"
#include "mm/internal.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm/vma.h"
#include "util/compiler.h"
#include "util/linux_compat.h"

/*
 * A large folio mapped by PTEs is locked only if it lies wholly in the
 * range; munlock unlocks one mapped there at all, even in part - a folio
 * mlocked whole and then cut by a VMA split is no longer locked anywhere
 * (allow_mlock_munlock); @a maps @page.
 */
static bool folio_in_range(struct folio *folio, struct page *page, unsigned long a,
			   unsigned long start, unsigned long end)
{
	unsigned long first = a - ((unsigned long)page->index << PAGE_SHIFT);

	return !folio->order ||
	       (first >= start && first + (folio_nr_pages(folio) << PAGE_SHIFT) <= end);
}

static int mlock_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
			   unsigned long end, void *priv)
{
	const unsigned long *range = priv;	/* [start, end, lock] */

	/* Ends: each step goes at least a page on. */
	for (unsigned long a = start, step; a < end; a += step * PAGE_SIZE) {
		uint64_t pte = load_relaxed(&pt->e[pte_index(a)]);
		struct folio *folio;

		step = 1;
		if (!pte_present(pte))
			continue;
		folio = page_folio(pte_page(pte));
		if (folio_is_zero(folio))
			continue;
		/* A large folio's run of entries counts once (folio_mlock_step). */
		if (folio->order)
			step = folio_pte_batch(pt, a, end, folio, pte_page(pte));
		if (range[2] && !folio_in_range(folio, pte_page(pte), a, range[0], range[1]))
			continue;
		if (range[2])
			mlock_folio(mm->sys, folio);
		else
			munlock_folio(mm->sys, folio);
	}
	return 0;
}

static int mlock_pmd(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start, unsigned long end,
		     void *priv)
{
	const unsigned long *range = priv;
	struct folio *folio = page_folio(pte_page(load_relaxed(pmd)));

	(void)start;
	(void)end;
	if (folio_is_zero(folio))
		return 0;
	if (range[2])
		mlock_folio(mm->sys, folio);
	else
		munlock_folio(mm->sys, folio);
	return 0;
}

/*
 * mlock_vma_pages_range - (un)lock the folios already mapped in [start, end)
 * of a VMA whose VM_LOCKED just changed; pages faulted in later are locked
 * as they are mapped. The LRU batches are drained first, as the kernel does:
 * a folio queued by MADV_FREE (or COLD) is moved before mlock makes it
 * unevictable, so it shows LazyFree and not Referenced even when the mlock
 * then fails on a hole. Context: mmap_lock(W).
 */
static void mlock_vma_pages_range(struct mm *mm, unsigned long start, unsigned long end,
				  bool lock)
{
	static const struct pt_walk_ops ops = { .pte_range = mlock_pte_range,
						.pmd_huge = mlock_pmd };
	unsigned long range[3] = { start, end, lock };

	lru_add_drain(mm->sys);
	walk_page_range(mm, start, end, &ops, range);
	lru_add_drain(mm->sys);
}

/* The ranges whose VM_LOCKED changed: their present pages are (un)locked after the commit. */
struct lock_ranges {
	unsigned long r[8][3];
	size_t nr;
	bool overflow;		/* more than fit: redo the whole call's range */
};

static struct vma *mlock_fixup(struct vma_txn *t, struct vma *vma, struct vma *prev,
			       unsigned long start, unsigned long end, unsigned long newflags,
			       long *locked_delta, struct lock_ranges *lr, int *err)
{
	unsigned long oldflags = vma->vm_flags;
	struct vma *res;

	/* Special and droppable mappings are never locked, and not counted. */
	if (newflags == oldflags || (oldflags & (VM_SPECIAL | VM_DROPPABLE)))
		return vma;
	res = vma_modify_flags(t, prev, vma, start, end, newflags, err);
	if (!res)
		return NULL;
	if ((newflags & VM_LOCKED) && !(oldflags & VM_LOCKED))
		*locked_delta += (long)((end - start) >> PAGE_SHIFT);
	else if (!(newflags & VM_LOCKED) && (oldflags & VM_LOCKED))
		*locked_delta -= (long)((end - start) >> PAGE_SHIFT);
	if ((newflags ^ oldflags) & VM_LOCKED) {
		if (lr->nr < ARRAY_SIZE(lr->r)) {
			lr->r[lr->nr][0] = start;
			lr->r[lr->nr][1] = end;
			lr->r[lr->nr][2] = !!(newflags & VM_LOCKED);
			lr->nr++;
		} else {
			lr->overflow = true;
		}
	}
	return res;
}

/* Context: mmap_lock(W). */
static int apply_vma_lock_flags(struct mm *mm, unsigned long start, unsigned long len,
				unsigned long flags)
{
	unsigned long end = start + len, nstart, tmp;
	struct vma *vma, *prev;
	struct lock_ranges lr = { .nr = 0 };
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
		vma = mlock_fixup(&t, vma, prev, nstart, tmp, newflags, &delta, &lr, &error);
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
	if (lr.overflow) {
		/* Every VMA of the range now has the new state: (un)lock it all. */
		mlock_vma_pages_range(mm, start, VML_MIN(end, nstart), flags & VM_LOCKED);
	} else {
		for (size_t i = 0; i < lr.nr; i++)
			mlock_vma_pages_range(mm, lr.r[i][0], lr.r[i][1], lr.r[i][2]);
	}
	return error;
}

/* mlock's populate: errors count (ignore_errors = 0) and become mlock's (__mlock_posix_error_return). */
static int mlock_populate(struct mm *mm, unsigned long start, unsigned long len)
{
	int ret = __mm_populate(mm, start, len, false);

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

int vml_mlock2(struct vml_mm *umm, unsigned long addr, unsigned long len, unsigned int flags)
{
	if (!umm || (flags & ~MLOCK_ONFAULT))
		return -EINVAL;
	return do_mlock(to_mm(umm), addr, len,
			VM_LOCKED | ((flags & MLOCK_ONFAULT) ? VM_LOCKONFAULT : 0));
}

/*
 * apply_mlockall_flags - set mm->def_flags and give every VMA the lock
 * flags @flags asks for (none: unlock). Return: 0, or -ENOMEM if staging ran
 * out of memory (nothing changed then). Context: mmap_lock(W).
 */
static int apply_mlockall_flags(struct mm *mm, int flags)
{
	unsigned long to_add = 0, end = 0;
	struct lock_ranges lr = { .nr = 0 };
	struct vma *vma, *prev = NULL;
	struct vma_txn t;
	long delta = 0;
	int err = 0;

	if (flags & MCL_FUTURE) {
		mm->def_flags = (mm->def_flags & ~VM_LOCKED_MASK) | VM_LOCKED |
				((flags & MCL_ONFAULT) ? VM_LOCKONFAULT : 0);
		if (!(flags & MCL_CURRENT))
			return 0;
	} else {
		mm->def_flags &= ~VM_LOCKED_MASK;
	}
	if (flags & MCL_CURRENT)
		to_add = VM_LOCKED | ((flags & MCL_ONFAULT) ? VM_LOCKONFAULT : 0);
	if (mm->rest_locked != !!to_add) {
		mm->rest_locked = to_add;
		lru_add_drain(mm->sys);	/* their mlock_vma_pages_range */
	}
	vma_txn_begin(&t, mm);
	/* Ends: each step moves past a VMA (merges only make it end later). */
	for (vma = vt_next(&t, 0); vma; vma = vt_next(&t, end)) {
		unsigned long start = vma->vm_start;

		end = vma->vm_end;
		vma = mlock_fixup(&t, vma, prev, start, end,
				  (vma->vm_flags & ~VM_LOCKED_MASK) | to_add, &delta, &lr, &err);
		if (!vma) {
			vma_txn_abort(&t);
			return err;
		}
		prev = vma;
		end = vma->vm_end;
	}
	vma_txn_commit(&t);
	mm->locked_vm = (unsigned long)((long)mm->locked_vm + delta);
	if (lr.overflow) {
		mlock_vma_pages_range(mm, 0, TASK_SIZE, to_add & VM_LOCKED);
	} else {
		for (size_t i = 0; i < lr.nr; i++)
			mlock_vma_pages_range(mm, lr.r[i][0], lr.r[i][1], lr.r[i][2]);
	}
	return 0;
}

int vml_mlockall(struct vml_mm *umm, int flags)
{
	struct mm *mm = to_mm(umm);
	int err;

	if (!mm || !flags || (flags & ~(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)) ||
	    flags == MCL_ONFAULT)
		return -EINVAL;
	mmap_write_lock(mm);
	err = apply_mlockall_flags(mm, flags);
	mmap_write_unlock(mm);
	if (!err && (flags & MCL_CURRENT))
		mm_populate(mm, 0, TASK_SIZE);
	return err;
}

int vml_munlockall(struct vml_mm *umm)
{
	struct mm *mm = to_mm(umm);
	int err;

	if (!mm)
		return -EINVAL;
	mmap_write_lock(mm);
	err = apply_mlockall_flags(mm, 0);
	mmap_write_unlock(mm);
	return err;
}

int vml_munlock(struct vml_mm *umm, unsigned long addr, unsigned long len)
{
	if (!umm)
		return -EINVAL;
	return do_mlock(to_mm(umm), addr, len, 0);
}
