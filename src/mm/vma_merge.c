// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vma_merge.c - when two VMAs become one, and when one becomes two: the
 * kernel's merge and split rules (mm/vma.c), applied to staged VMAs.
 *
 * Two neighbouring ranges merge when their flags agree (ignoring
 * VM_IGNORE_MERGE), they map the same file (or none) at contiguous page
 * offsets, their anonymous names agree, and their anon_vmas are compatible:
 * equal, or at most one of them set and that side not a fork child (whose
 * anon_vma chain is not singular). For anonymous memory the "page offset" is
 * the address the memory was first mapped at, so memory moved by mremap()
 * after it was touched no longer lines up with its new neighbours.
 *
 * Sticky flags (VM_STICKY: VM_MAYBE_GUARD) do not have to agree; the VMA a
 * merge leaves has those of every piece that went into it (vma_expand and
 * vma_merge_existing_range).
 */
#include <errno.h>

#include "mm/vma.h"
#include "mm/vma_txn.h"
#include "util/compiler.h"

static bool vma_is_fork_child(struct vma *vma)
{
	return vma && vma_anon_vma(vma) && vma->fork_child;
}

static bool is_mergeable_vma(struct vma_merge *vmg, bool merge_next)
{
	struct vma *vma = merge_next ? vmg->next : vmg->prev;

	if ((vma->vm_flags ^ vmg->vm_flags) & ~VM_IGNORE_MERGE)
		return false;
	if (vma->vm_file != vmg->file)
		return false;
	return anon_vma_name_eq(vma->anon_name, vmg->anon_name);
}

static bool is_mergeable_anon_vma(struct vma_merge *vmg, bool merge_next)
{
	struct vma *tgt = merge_next ? vmg->next : vmg->prev;
	struct anon_vma *tgt_anon = vma_anon_vma(tgt);
	struct anon_vma *src_anon = vmg->anon_vma;

	/* The target will take the source's anon_vma. */
	if (!tgt_anon && src_anon)
		return !vma_is_fork_child(vmg->middle) && !vma_is_fork_child(vmg->copied_from);
	/* The range will use the target's anon_vma. */
	if (tgt_anon && !src_anon)
		return !vma_is_fork_child(tgt);
	return src_anon == tgt_anon;
}

/* Can [start, end) merge in front of vmg->next? */
static bool can_vma_merge_before(struct vma_merge *vmg)
{
	unsigned long pglen = (vmg->end - vmg->start) >> PAGE_SHIFT;

	return is_mergeable_vma(vmg, true) && is_mergeable_anon_vma(vmg, true) &&
	       vmg->next->vm_pgoff == vmg->pgoff + pglen;
}

/* Can [start, end) merge after vmg->prev? */
static bool can_vma_merge_after(struct vma_merge *vmg)
{
	return is_mergeable_vma(vmg, false) && is_mergeable_anon_vma(vmg, false) &&
	       vmg->prev->vm_pgoff + vma_pages(vmg->prev) == vmg->pgoff;
}

static bool can_vma_merge_left(struct vma_merge *vmg)
{
	return vmg->prev && vmg->prev->vm_end == vmg->start && can_vma_merge_after(vmg);
}

static bool can_vma_merge_right(struct vma_merge *vmg, bool can_merge_left)
{
	struct vma *next = vmg->next;
	struct anon_vma *pa, *na;

	if (!next || vmg->end != next->vm_start || !can_vma_merge_before(vmg))
		return false;
	if (!can_merge_left)
		return true;
	/* Each side is compatible with the range; prev and next must also agree. */
	pa = vma_anon_vma(vmg->prev);
	na = vma_anon_vma(next);
	return !pa || !na || pa == na;
}

static struct vma *merge_fail(struct vma_merge *vmg)
{
	vmg->err = -ENOMEM;
	return NULL;
}

/* Give @target (staged) the anon_vma of @src if it has none (dup_anon_vma). */
static void dup_anon_vma(struct vma *target, struct vma *src)
{
	if (src)
		vt_set_anon_vma(target, vma_anon_vma(src));
}

struct vma *vma_merge_new_range(struct vma_merge *vmg)
{
	struct vma_txn *t = vmg->t;
	struct vma *prev = vmg->prev, *next = vmg->next, *target = NULL, *staged;
	unsigned long start = vmg->start, end = vmg->end, pgoff = vmg->pgoff, sticky;
	bool left, right, remove_next;

	vml_assert(!vmg->middle);
	if ((vmg->vm_flags & VM_SPECIAL) || (!prev && !next))
		return NULL;

	left = can_vma_merge_left(vmg);
	right = !vmg->just_expand && can_vma_merge_right(vmg, left);
	if (right) {
		end = next->vm_end;
		target = next;
	}
	if (left) {
		start = prev->vm_start;
		pgoff = prev->vm_pgoff;
		target = prev;
	}
	if (!target)
		return NULL;

	remove_next = next && target != next && end == next->vm_end;
	sticky = (vmg->vm_flags | target->vm_flags | (remove_next ? next->vm_flags : 0)) &
		 VM_STICKY;
	staged = vt_modify(t, target);	/* start, end, pgoff were computed above */
	if (!staged)
		return merge_fail(vmg);
	staged->vm_flags |= sticky;
	/*
	 * The copied-from VMA first: it may be @next itself (an mremap whose
	 * destination lies right before its source, both pieces of a VMA its
	 * destination unmap split), which the removal below frees if staged.
	 */
	dup_anon_vma(staged, vmg->copied_from);
	if (remove_next) {
		dup_anon_vma(staged, next);
		if (vt_remove(t, next))
			return merge_fail(vmg);
	}
	if (vt_set_range(t, staged, start, end, pgoff))
		return merge_fail(vmg);
	return staged;
}

/*
 * vma_merge_existing_range - the range [start, end) of vmg->middle is about
 * to get vmg's properties; merge it into prev and/or next if they match.
 */
static struct vma *vma_merge_existing_range(struct vma_merge *vmg)
{
	struct vma_txn *t = vmg->t;
	struct vma *middle = vmg->middle, *prev = vmg->prev, *next = NULL;
	struct vma *mid, *tgt;
	unsigned long start = vmg->start, end = vmg->end;
	unsigned long mid_start = middle->vm_start, mid_end = middle->vm_end;
	unsigned long mid_pgoff = middle->vm_pgoff;
	unsigned long new_start, new_end, new_pgoff, sticky;
	bool left_side = start == mid_start;
	bool right_side = end == mid_end;
	bool merge_left, merge_right, remove_middle;

	if ((vmg->vm_flags & VM_SPECIAL) || (!left_side && !right_side))
		return NULL;

	merge_left = left_side && can_vma_merge_left(vmg);
	merge_right = false;
	if (right_side) {
		next = vmg->next = vt_next(t, mid_end);
		merge_right = can_vma_merge_right(vmg, merge_left);
	}
	if (!merge_left && !merge_right)
		return NULL;
	remove_middle = left_side && right_side;

	/*
	 * Work out the target's new range before staging anything: staging
	 * may free a staged middle or next.
	 */
	if (merge_left) {
		new_start = prev->vm_start;
		new_pgoff = prev->vm_pgoff;
		new_end = merge_right ? next->vm_end : end;
	} else {
		new_start = start;
		new_end = next->vm_end;
		new_pgoff = next->vm_pgoff - ((next->vm_start - start) >> PAGE_SHIFT);
	}

	sticky = (vmg->vm_flags | (merge_left ? prev->vm_flags : 0) |
		  (merge_right ? next->vm_flags : 0)) & VM_STICKY;
	tgt = vt_modify(t, merge_left ? prev : next);
	if (!tgt)
		return merge_fail(vmg);
	tgt->vm_flags |= sticky;

	if (merge_left && merge_right) {
		/* prev extends over middle and next, which both go. */
		dup_anon_vma(tgt, vma_anon_vma(next) ? next : middle);
		if (vt_remove(t, middle) || vt_remove(t, next))
			return merge_fail(vmg);
	} else {
		/*
		 * prev extends to end, and middle shrinks from the front; or
		 * next extends back to start, and middle shrinks from the back.
		 * Or middle goes.
		 */
		unsigned long keep_start = merge_left ? end : mid_start;
		unsigned long keep_end = merge_left ? mid_end : start;

		dup_anon_vma(tgt, middle);
		if (remove_middle) {
			if (vt_remove(t, middle))
				return merge_fail(vmg);
		} else {
			mid = vt_modify(t, middle);
			if (!mid || vt_set_range(t, mid, keep_start, keep_end,
						 mid_pgoff + ((keep_start - mid_start) >> PAGE_SHIFT)))
				return merge_fail(vmg);
		}
	}
	if (vt_set_range(t, tgt, new_start, new_end, new_pgoff))
		return merge_fail(vmg);
	return tgt;
}

struct vma *vma_modify(struct vma_merge *vmg)
{
	struct vma_txn *t = vmg->t;
	struct vma *vma, *merged;
	int err;

	merged = vma_merge_existing_range(vmg);
	if (merged || vmg->err)
		return merged;

	vma = vmg->middle;
	if (vma->vm_start < vmg->start) {
		err = vt_split(t, vma, vmg->start, true, NULL, &vma);
		if (err) {
			vmg->err = err;
			return NULL;
		}
	}
	if (vma->vm_end > vmg->end) {
		err = vt_split(t, vma, vmg->end, true, &vma, NULL);
		if (err) {
			vmg->err = err;
			return NULL;
		}
	}
	vma = vt_modify(t, vma);
	if (!vma)
		vmg->err = -ENOMEM;
	return vma;
}

void vmg_init_modify(struct vma_merge *vmg, struct vma_txn *t, struct vma *prev, struct vma *vma,
		     unsigned long start, unsigned long end)
{
	*vmg = (struct vma_merge){
		.t = t,
		.start = start,
		.end = end,
		.pgoff = vma->vm_pgoff + ((start - vma->vm_start) >> PAGE_SHIFT),
		.vm_flags = vma->vm_flags,
		.file = vma->vm_file,
		.anon_vma = vma_anon_vma(vma),
		.anon_name = vma->anon_name,
		.prev = prev,
		.middle = vma,
	};
}

struct vma *vma_modify_flags(struct vma_txn *t, struct vma *prev, struct vma *vma,
			     unsigned long start, unsigned long end, unsigned long newflags,
			     int *err)
{
	struct vma_merge vmg;
	struct vma *res;

	vmg_init_modify(&vmg, t, prev, vma, start, end);
	vmg.vm_flags = newflags;
	res = vma_modify(&vmg);
	if (!res) {
		*err = vmg.err;
		return NULL;
	}
	res->vm_flags = newflags | (res->vm_flags & VM_STICKY);	/* merged: sticky flags stay */
	return res;
}
