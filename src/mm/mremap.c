// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mremap.c - mremap(2) (mm/mremap.c): shrink, grow in place, move
 * (MREMAP_MAYMOVE / MREMAP_FIXED), and MREMAP_DONTUNMAP.
 *
 * The kernel's order (do_mremap): look the source up and validate it
 * (check_prep_vma, before anything changes); for MREMAP_FIXED unmap the
 * destination and look the source up again (-EFAULT if that unmap took it);
 * trim the source of a shrinking move; then move. A shrink in place is an
 * unmap of the tail that, like munmap(2)'s, downgrades mmap_lock to read
 * for the zap and the page-table freeing.
 *
 * A move is staged as one transaction: unmap the destination (FIXED), trim
 * the source (shrinking moves), copy the VMA to the destination (merging it
 * there if the neighbours allow), unmap the source (or, for DONTUNMAP,
 * keep it without its lock flags; it stays charged, VM_ACCOUNT). The page
 * tables the move needs are allocated before the commit, so after the
 * commit nothing can fail: the entries are moved and the old ones zapped.
 * The kernel commits the destination unmap and the trim on their own, so a
 * move that fails after them (-EFAULT, or -ENOMEM at max_map_count or on
 * overcommit) leaves them done; mremap_to() then does them for good too.
 *
 * A pure move (6.17+: MREMAP_FIXED, with or without DONTUNMAP, and equal
 * lengths) may span several VMAs and the gaps between them (remap_move):
 * the range must start in a VMA; each VMA's part of it is moved on its own,
 * in address order, to the same place relative to the destination, as if
 * by one single-VMA mremap_to() each. So the destination is unmapped only
 * where a VMA lands - what is mapped there in the gaps stays - and a move
 * that fails half-way leaves the VMAs before it moved.
 */
#include <errno.h>
#include <sys/mman.h>

#include "mm/internal.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm/rmap.h"
#include "mm/vma.h"
#include "util/compiler.h"
#include "util/debug.h"
#include "util/linux_compat.h"

struct remap {
	unsigned long addr, old_len, new_len, flags, new_addr;
	unsigned long delta;
	struct vma *vma;
	bool populate;		/* a locked mapping grew: fault in the new part */
	bool downgraded;	/* a shrink's unmap left mmap_lock(R) held, not (W) */
};

static bool implies_new_addr(struct remap *r)
{
	return r->flags & (MREMAP_FIXED | MREMAP_DONTUNMAP);
}

static int check_mremap_params(struct mm *mm, struct remap *r)
{
	if (r->flags & ~(unsigned long)(MREMAP_FIXED | MREMAP_MAYMOVE | MREMAP_DONTUNMAP))
		return -EINVAL;
	if (offset_in_page(r->addr))
		return -EINVAL;
	if (!PAGE_ALIGN(r->new_len))
		return -EINVAL;
	if (!implies_new_addr(r))
		return 0;
	if (offset_in_page(r->new_addr))
		return -EINVAL;
	if (!(r->flags & MREMAP_MAYMOVE))
		return -EINVAL;
	if ((r->flags & MREMAP_DONTUNMAP) && r->old_len != r->new_len)
		return -EINVAL;
	/* Is the new range silly, or on top of the old one? (before any lookup) */
	if (PAGE_ALIGN(r->new_len) > TASK_SIZE || r->new_addr > TASK_SIZE - PAGE_ALIGN(r->new_len))
		return -EINVAL;
	if (r->addr < r->new_addr + PAGE_ALIGN(r->new_len) &&
	    r->new_addr < r->addr + PAGE_ALIGN(r->old_len))
		return -EINVAL;
	/* move_vma() needs to stay 4 maps below the limit; both ends may split in 3. */
	if (load_relaxed(&mm->map_count) + 2 >= mm->sys->cfg.max_map_count - 3)
		return -ENOMEM;
	return 0;
}

/* Can r->vma be moved or grown as asked? (remap_is_valid; before any change) */
static int remap_is_valid(struct remap *r)
{
	struct vma *vma = r->vma;
	/* A shrinking move may cross VMA boundaries in the part it unmaps. */
	unsigned long old_len = r->new_len < r->old_len ? r->new_len : r->old_len;
	unsigned long pgoff;

	if (!r->old_len && !(vma->vm_flags & (VM_SHARED | VM_MAYSHARE)))
		return -EINVAL;
	if ((r->flags & MREMAP_DONTUNMAP) && (vma->vm_flags & (VM_DONTEXPAND | VM_PFNMAP)))
		return -EINVAL;
	if (old_len > vma->vm_end - r->addr)
		return -EFAULT;
	if (r->new_len == old_len)
		return 0;
	pgoff = vma->vm_pgoff + ((r->addr - vma->vm_start) >> PAGE_SHIFT);
	if (pgoff + (r->new_len >> PAGE_SHIFT) < pgoff)
		return -EINVAL;
	if (vma->vm_flags & (VM_DONTEXPAND | VM_PFNMAP))
		return -EFAULT;
	return 0;
}

/* The source exists, and a move or a growth is valid, before anything changes. */
static int check_prep_vma(struct remap *r)
{
	if (!r->vma)
		return -EFAULT;
	if (r->vma->vm_flags & VM_SEALED)
		return -EPERM;		/* mseal: no mremap of it at all, not even a no-op */
	if (implies_new_addr(r) || r->new_len > r->old_len)
		return remap_is_valid(r);
	return 0;
}

static bool vma_expandable(struct mm *mm, struct vma *vma, unsigned long delta)
{
	unsigned long end = vma->vm_end + delta;

	if (end < vma->vm_end)
		return false;
	if (find_vma_intersection(mm, vma->vm_end, end))
		return false;
	return get_unmapped_area(mm, NULL, vma->vm_start, end - vma->vm_start, 0, MAP_FIXED,
				 vma->vm_flags) >= 0;
}

/* Grow r->vma by delta at its end, merging with the next VMA if it now touches. */
static long expand_vma_in_place(struct mm *mm, struct remap *r)
{
	struct vma *vma = r->vma;
	unsigned long vm_flags = vma->vm_flags;	/* @vma is retired by the commit */
	struct vma_merge vmg;
	struct vma_txn t;
	struct vma *res;

	/* vrm_calc_charge: an accounted mapping commits what it grows by. */
	if ((vm_flags & VM_ACCOUNT) && vm_enough_memory(mm->sys, r->delta >> PAGE_SHIFT))
		return -ENOMEM;
	vma_txn_begin(&t, mm);
	vmg = (struct vma_merge){
		.t = &t,
		.start = vma->vm_end,
		.end = vma->vm_end + r->delta,
		.pgoff = vma->vm_pgoff + vma_pages(vma),
		.vm_flags = vma->vm_flags,
		.file = vma->vm_file,
		.anon_vma = vma_anon_vma(vma),
		.anon_name = vma->anon_name,
		.prev = vma,
		.next = vt_next(&t, vma->vm_end),
	};
	res = vma_merge_new_range(&vmg);
	if (!res) {
		vma_txn_abort(&t);
		return -ENOMEM;
	}
	vma_txn_commit(&t);
	if (vm_flags & VM_LOCKED) {
		mm->locked_vm += r->delta >> PAGE_SHIFT;
		r->populate = true;
		r->new_addr = r->addr;
	}
	return (long)r->addr;
}

/*
 * stage_move_dest - the VMA r->vma's range moves into, in @t: the one it
 * merges with at r->new_addr, or a copy of r->vma there.
 * Return: 0 and *@out; -errno.
 */
static int stage_move_dest(struct vma_txn *t, const struct remap *r, unsigned long pgoff,
			   struct vma **out)
{
	struct vma *vma = r->vma, *new_vma;
	struct vma_merge vmg = {
		.t = t,
		.start = r->new_addr,
		.end = r->new_addr + r->new_len,
		.pgoff = pgoff,
		.vm_flags = vma->vm_flags,
		.file = vma->vm_file,
		.anon_vma = vma_anon_vma(vma),
		.anon_name = vma->anon_name,
		.prev = vt_prev(t, r->new_addr),
		.next = vt_next(t, r->new_addr),
		.copied_from = vma,
	};
	int err;

	new_vma = vma_merge_new_range(&vmg);
	if (vmg.err)
		return vmg.err;
	if (!new_vma) {
		new_vma = vma_dup(vma);
		if (!new_vma)
			return -ENOMEM;
		new_vma->vm_start = r->new_addr;
		new_vma->vm_end = r->new_addr + r->new_len;
		new_vma->vm_pgoff = pgoff;
		err = vt_insert(t, new_vma);
		if (err) {
			vma_free_unpublished(new_vma);
			return err;
		}
	}
	*out = new_vma;
	return 0;
}

/*
 * stage_move_source - what becomes of the source range in @t once its pages
 * have moved to @new_vma: unmapped (its page tables to free in *@old), or
 * with DONTUNMAP kept, unlocked and empty. The source VMA was
 * [@vma_start, @vma_end) before the move.
 * Return: 0 or -errno.
 */
static int stage_move_source(struct vma_txn *t, const struct remap *r, unsigned long vma_start,
			     unsigned long vma_end, const struct vma *new_vma,
			     struct unmap_range *old)
{
	struct vma *src;
	int err;

	if (r->flags & MREMAP_DONTUNMAP) {
		/*
		 * The source stays, unlocked (VM_ACCOUNT is kept since the 2025
		 * stable fix "correctly account old mapping after
		 * MREMAP_DONTUNMAP remap", which the live kernel has); its pages
		 * move away.
		 */
		src = vt_find(t, r->addr);
		src = src ? vt_modify(t, src) : NULL;
		if (!src)
			return -ENOMEM;
		src->vm_flags &= ~VM_LOCKED_MASK;
		if (r->addr == vma_start && r->addr + r->old_len == vma_end && new_vma != src) {
			anon_vma_put(load_relaxed(&src->anon_vma));
			store_relaxed(&src->anon_vma, NULL);
		}
	} else if (r->old_len) {
		err = vms_gather_munmap(t, r->addr, r->addr + r->old_len, NULL, NULL, NULL,
					 NULL);
		if (err)
			return err;
		vt_unmap_range(t, r->addr, r->addr + r->old_len, old);
	}
	return 0;
}

/*
 * move_vma - copy [addr, addr+old_len) of r->vma to r->new_addr with
 * new_len, then unmap the source (or keep it, for DONTUNMAP). @t already
 * holds the staged destination unmap and source shrink, whose pages and
 * page tables go in @zap (two separate ranges, empty when start >= end),
 * in that order and before the move, as in the kernel. Ends @t.
 */
static long move_vma(struct mm *mm, struct vma_txn *t, struct remap *r,
		     const struct unmap_range zap[2])
{
	struct vma *vma = r->vma, *new_vma = NULL;
	struct unmap_range old = { 0 };
	struct pgt_reserve res;
	unsigned long pgoff = vma->vm_pgoff + ((r->addr - vma->vm_start) >> PAGE_SHIFT);
	unsigned long vma_start = vma->vm_start, vma_end = vma->vm_end;
	unsigned long vm_flags = vma->vm_flags;	/* @vma may be retired by the commit */
	int err;

	if (t->map_count >= mm->sys->cfg.max_map_count - 3) {
		err = -ENOMEM;
		goto abort;
	}
	/*
	 * vrm_calc_charge: DONTUNMAP keeps the old pages, so it commits the new
	 * length; any other move commits the difference of the lengths, also
	 * when it shrinks (the kernel's delta is |new - old|, so a huge shrink
	 * fails to charge: ENOMEM, after the destination unmap and the trim).
	 */
	if ((vm_flags & VM_ACCOUNT) &&
	    vm_enough_memory(mm->sys, ((r->flags & MREMAP_DONTUNMAP) ? r->new_len : r->delta) >>
				      PAGE_SHIFT)) {
		err = -ENOMEM;
		goto abort;
	}
	/* Untouched anonymous memory takes the offset of where it goes, to merge there. */
	if (vma_is_anonymous(vma) && !vma_anon_vma(vma))
		pgoff = r->new_addr >> PAGE_SHIFT;
	err = stage_move_dest(t, r, pgoff, &new_vma);
	if (!err)
		err = stage_move_source(t, r, vma_start, vma_end, new_vma, &old);
	if (err)
		goto abort;
	/* An OLDLEN of 0 duplicates a shared mapping: the source stays as it is. */
	err = pgtable_prepare_move(mm, r->addr, r->new_addr, r->old_len, &res);
	if (err)
		goto abort;

	vma_txn_commit(t);
	for (int i = 0; i < 2; i++) {
		if (zap[i].end > zap[i].start) {
			zap_unmapped_range(mm, zap[i].start, zap[i].end, zap[i].locked);
			free_pgtables(mm, &zap[i]);
		}
	}
	move_page_tables(mm, r->addr, r->new_addr, r->old_len, &res);
	free_pgtables(mm, &old);	/* the source's, now empty (unmap_source_vma) */
	if (vm_flags & VM_LOCKED) {
		if (r->flags & MREMAP_DONTUNMAP)
			mm->locked_vm -= (vma_end - vma_start) >> PAGE_SHIFT;
		if (r->new_len > r->old_len) {
			mm->locked_vm += (r->new_len - r->old_len) >> PAGE_SHIFT;
			r->populate = true;
		}
	}
	return (long)r->new_addr;

abort:
	vma_txn_abort(t);
	return err;
}

/*
 * kernel_transients: unmap the destination and publish that on its own
 * first, as mremap_to()'s do_munmap() does before move_vma(), so that a
 * per-VMA-lock reader can see the destination empty inside the call
 * (docs/findings/maps-fake-gaps.md case 2). The move then finds it empty.
 * As in the kernel, a move that fails afterwards leaves it unmapped.
 */
static long unmap_dest_first(struct mm *mm, struct remap *r)
{
	int err = do_munmap(mm, r->new_addr, r->new_len);

	if (err)
		return err;
	vml_transient_hook_call(r->new_addr, r->new_addr + r->new_len);
	/* That unmap may have split the source's VMA: look again. */
	r->vma = vma_lookup(mm, r->addr);
	return r->vma ? 0 : -EFAULT;
}

static long mremap_to(struct mm *mm, struct remap *r)
{
	/* The destination's old pages and the shrunk tail: apart, the source lies between. */
	struct unmap_range zap[2] = { { 0 }, { 0 } };
	unsigned long old_len = r->old_len, locked = 0;
	bool dest_unmapped = false, shrunk = false;
	struct vma_txn t;
	long res;

	if ((r->flags & MREMAP_FIXED) && mm->sys->cfg.kernel_transients) {
		res = unmap_dest_first(mm, r);
		if (res)
			return res;
	}
	vma_txn_begin(&t, mm);
	if (r->flags & MREMAP_FIXED) {
		res = vms_gather_munmap(&t, r->new_addr, r->new_addr + r->new_len, NULL, NULL,
					&locked, NULL);
		if (res)
			goto abort;
		dest_unmapped = true;
		vt_unmap_range(&t, r->new_addr, r->new_addr + r->new_len, &zap[0]);
		zap[0].locked = locked;
		/* That unmap may have split or taken the source: look again. */
		r->vma = vt_find(&t, r->addr);
		if (!r->vma) {
			res = -EFAULT;
			goto abort;
		}
	}
	if (r->new_len < r->old_len) {
		res = vms_gather_munmap(&t, r->addr + r->new_len, r->addr + r->old_len, NULL, NULL,
					&locked, NULL);
		if (res)
			goto abort;
		shrunk = true;
		vt_unmap_range(&t, r->addr + r->new_len, r->addr + r->old_len, &zap[1]);
		zap[1].locked = locked;
		r->old_len = r->new_len;
		r->vma = vt_find(&t, r->addr);
		if (!r->vma) {
			res = -EFAULT;
			goto abort;
		}
	}
	if (!(r->flags & MREMAP_FIXED)) {
		/* DONTUNMAP without FIXED: new_addr is only a hint. */
		res = get_unmapped_area(mm, r->vma->vm_file, r->new_addr, r->new_len,
					r->vma->vm_pgoff, (r->vma->vm_flags & VM_MAYSHARE) ? MAP_SHARED : 0,
					r->vma->vm_flags);
		if (res < 0)
			goto abort;
		r->new_addr = (unsigned long)res;
	}
	res = move_vma(mm, &t, r, zap);
	if (res >= 0)
		return res;
	goto undone;	/* move_vma ended the transaction */

abort:
	vma_txn_abort(&t);
undone:
	/*
	 * What the kernel has committed by the time it fails. Staged with the
	 * move, so that a lockless reader does not see the destination empty
	 * on the way to a successful move; done for good now. (Should these
	 * unmaps fail to allocate, the address space stays as it was.)
	 */
	if (dest_unmapped)
		do_munmap(mm, r->new_addr, r->new_len);
	if (shrunk)
		do_munmap(mm, r->addr + r->new_len, old_len - r->new_len);
	return res;
}

/*
 * Is this a pure move (vrm_move_only): a fixed destination and no resize?
 * Only such a move may span several VMAs (6.17+).
 */
static bool move_only(const struct remap *r)
{
	return (r->flags & MREMAP_FIXED) && r->old_len == r->new_len;
}

/*
 * remap_move - move every VMA of [r->addr, r->addr + r->old_len) to the
 * same offset from r->new_addr, one VMA at a time (mm/mremap.c remap_move).
 * The gaps keep their size, so VMA n lands at the end of VMA n-1's
 * destination plus the gap between them. Each piece is checked and moved
 * as a single-VMA mremap_to(); an error ends the walk with the pieces
 * before it moved. Context: mmap_lock(W).
 * Return: the first piece's new address, or -errno (-EFAULT: the range
 * starts in a gap, or has no VMA at all).
 */
static long remap_move(struct mm *mm, const struct remap *r)
{
	unsigned long start = r->addr, end = r->addr + r->old_len;
	unsigned long target = r->new_addr, pos = start, last_end = 0;
	bool seen = false;
	long res = -EFAULT;
	struct vma *vma;

	/*
	 * The kernel's VMA iterator: the next VMA is the one containing or
	 * after the end of the one just moved, while that end is inside the
	 * range (a copy merged with its own source may contain it again).
	 * Ends: pos grows to the end of each VMA moved.
	 */
	while (pos < end && (vma = find_vma(mm, pos)) && vma->vm_start < end) {
		unsigned long a = VML_MAX(vma->vm_start, start);
		unsigned long len = VML_MIN(end, vma->vm_end) - a;
		struct remap sub = *r;
		long ret;

		if (!seen && start < vma->vm_start)
			return -EFAULT;		/* no gap at the start of the range */
		sub.vma = vma;
		sub.addr = a;
		sub.old_len = sub.new_len = len;
		sub.delta = 0;
		sub.new_addr = target + (seen ? vma->vm_start - last_end : 0);
		last_end = vma->vm_end;
		ret = check_prep_vma(&sub);
		if (!ret)
			ret = mremap_to(mm, &sub);
		if (ret < 0)
			return ret;
		if (!seen)
			res = ret;
		seen = true;
		target = (unsigned long)ret + len;
		pos = last_end;
	}
	return res;
}

static long mremap_at(struct mm *mm, struct remap *r)
{
	struct vma_txn t;
	long res;
	int err;

	if (r->new_len == r->old_len)
		return (long)r->addr;
	if (r->new_len < r->old_len) {
		/* As the kernel's shrink: an unmap that may downgrade (do_vmi_munmap, unlock). */
		err = do_munmap_downgrade(mm, r->addr + r->new_len, r->delta, &r->downgraded);
		return err ? err : (long)r->addr;
	}

	if (r->vma->vm_end - r->addr == r->old_len && vma_expandable(mm, r->vma, r->delta))
		return expand_vma_in_place(mm, r);
	if (!(r->flags & MREMAP_MAYMOVE))
		return -ENOMEM;
	res = get_unmapped_area(mm, r->vma->vm_file, r->new_addr, r->new_len,
				r->vma->vm_pgoff + ((r->addr - r->vma->vm_start) >> PAGE_SHIFT),
				(r->vma->vm_flags & VM_MAYSHARE) ? MAP_SHARED : 0, r->vma->vm_flags);
	if (res < 0)
		return res;
	r->new_addr = (unsigned long)res;
	vma_txn_begin(&t, mm);
	return move_vma(mm, &t, r, (const struct unmap_range[2]){ { 0 }, { 0 } });
}

int vml_mremap(struct vml_mm *umm, unsigned long old_addr, unsigned long old_len,
	       unsigned long new_len, int flags, unsigned long new_addr, unsigned long *addr_out)
{
	struct mm *mm = to_mm(umm);
	struct remap r = {
		.addr = old_addr,
		.old_len = old_len,
		.new_len = new_len,
		.flags = (unsigned long)(unsigned int)flags,
		.new_addr = new_addr,
	};
	long res;

	if (!mm)
		return -EINVAL;
	syscall_charge(mm);
	res = check_mremap_params(mm, &r);
	if (res)
		return (int)res;
	r.old_len = PAGE_ALIGN(r.old_len);
	r.new_len = PAGE_ALIGN(r.new_len);
	r.delta = r.new_len > r.old_len ? r.new_len - r.old_len : r.old_len - r.new_len;

	mmap_write_lock(mm);
	if (move_only(&r)) {
		res = remap_move(mm, &r);
	} else {
		r.vma = vma_lookup(mm, r.addr);
		res = check_prep_vma(&r);
		if (!res)
			res = implies_new_addr(&r) ? mremap_to(mm, &r) : mremap_at(mm, &r);
	}
	if (r.downgraded)
		mmap_read_unlock(mm);
	else
		mmap_write_unlock(mm);
	if (res < 0)
		return (int)res;
	if (r.populate && r.new_len > r.old_len)
		mm_populate(mm, r.new_addr + r.old_len, r.delta);
	if (addr_out)
		*addr_out = (unsigned long)res;
	return 0;
}
