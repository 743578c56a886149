// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mmap.c - mmap(2) and munmap(2): argument checks in the kernel's order
 * (so the same bad call gets the same errno), placement, and the map and
 * unmap paths on top of staged VMA transactions.
 */
#include <errno.h>
#include <sys/mman.h>

#include "mm/file.h"
#include "mm/internal.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pkeys.h"
#include "mm/pgtable.h"
#include "mm/rmap.h"
#include "mm/vma.h"
#include "platform/platform.h"
#include "util/compiler.h"
#include "util/linux_compat.h"

/* The flags a MAP_SHARED_VALIDATE file mapping may carry (MAP_SYNC would need DAX). */
#define LEGACY_MAP_MASK (MAP_SHARED | MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS | MAP_DENYWRITE | \
			 MAP_EXECUTABLE | MAP_UNINITIALIZED | MAP_GROWSDOWN | MAP_LOCKED |      \
			 MAP_NORESERVE | MAP_POPULATE | MAP_NONBLOCK | MAP_STACK | MAP_HUGETLB)

#define STACK_GUARD_GAP (256UL << PAGE_SHIFT)

static unsigned long calc_vm_prot_bits(int prot)
{
	return ((prot & PROT_READ) ? VM_READ : 0) | ((prot & PROT_WRITE) ? VM_WRITE : 0) |
	       ((prot & PROT_EXEC) ? VM_EXEC : 0);
}

static unsigned long calc_vm_flag_bits(int flags)
{
	return ((flags & MAP_GROWSDOWN) ? VM_GROWSDOWN : 0) |
	       ((flags & MAP_LOCKED) ? VM_LOCKED : 0) |
	       ((flags & MAP_STACK) ? VM_NOHUGEPAGE : 0);	/* 6.7+: MAP_STACK implies no THP */
}

bool accountable_mapping(struct vml_file *file, unsigned long vm_flags)
{
	(void)file;	/* hugetlbfs files would be excluded; the model has none */
	return (vm_flags & (VM_NORESERVE | VM_SHARED | VM_WRITE)) == VM_WRITE;
}

static unsigned long vm_start_gap(struct vma *vma)
{
	unsigned long start = vma->vm_start;

	if (vma->vm_flags & VM_GROWSDOWN) {
		start = start > STACK_GUARD_GAP ? start - STACK_GUARD_GAP : 0;
	}
	return start;
}

/*
 * Highest free range of @len bytes, aligned to @align, between low and
 * high (arch_get_unmapped_area_topdown). Context: mmap_lock held.
 */
static long unmapped_area_topdown(struct mm *mm, unsigned long len, unsigned long low,
				  unsigned long high, unsigned long align)
{
	struct vma_iterator vmi;
	unsigned long gap_end = high;
	struct vma *vma;

	/* A VMA straddling @high limits the first gap. */
	vma = vma_lookup(mm, high - 1);
	if (vma)
		gap_end = vm_start_gap(vma);
	vma_iter_init(&vmi, mm, gap_end);
	for (;;) {
		unsigned long gap_start, cand;

		vma = vma_prev(&vmi);
		gap_start = vma ? vma->vm_end : low;
		if (gap_start < low)
			gap_start = low;
		if (gap_end >= gap_start + len && gap_end >= len) {
			cand = (gap_end - len) & ~(align - 1);
			if (cand >= gap_start)
				return (long)cand;
		}
		if (!vma)
			return -ENOMEM;
		gap_end = vm_start_gap(vma);
		if (gap_end <= low)
			return -ENOMEM;
	}
}

/* Is the hint @addr (0: none) free for @len bytes? Context: mmap_lock held. */
static bool hint_fits(struct mm *mm, unsigned long addr, unsigned long len)
{
	struct vma *vma, *prev;

	if (!addr)
		return false;
	addr = PAGE_ALIGN(addr);
	vma = find_vma(mm, addr);
	prev = find_vma_prev(mm, vma ? vma->vm_start : TASK_SIZE);
	return TASK_SIZE - len >= addr && addr >= MMAP_MIN_ADDR &&
	       (!vma || addr + len <= vm_start_gap(vma)) && (!prev || addr >= prev->vm_end);
}

/*
 * thp_file_area - where a regular (not tmpfs) file's mapping goes: the
 * kernel's disk filesystems place it with thp_get_unmapped_area()
 * (mm/huge_memory.c __thp_get_unmapped_area). When the mapping covers a
 * whole PMD-sized block of the file, a range one PMD longer is looked for,
 * at the hint too - so a hint free for @len but not for @len + 2 MiB is
 * not taken - and the address is moved up in it to agree with the file
 * offset modulo 2 MiB (topdown: a whole PMD up when it already agrees).
 * Context: mmap_lock held.
 * Return: the address, or 0: the plain rule applies (no such block, or no
 *         room for the longer range).
 */
static long thp_file_area(struct mm *mm, unsigned long addr, unsigned long len,
			  unsigned long pgoff)
{
	unsigned long off = pgoff << PAGE_SHIFT, off_end = off + len;
	unsigned long off_align = (off + PMD_SIZE - 1) & ~(PMD_SIZE - 1);
	unsigned long len_pad = len + PMD_SIZE, off_sub;
	long ret;

	if (off_end <= off_align || off_end - off_align < PMD_SIZE)
		return 0;
	if (len_pad < len || off + len_pad < off || len_pad > TASK_SIZE - MMAP_MIN_ADDR)
		return 0;
	if (hint_fits(mm, addr, len_pad))
		return (long)PAGE_ALIGN(addr);	/* ret == addr: taken as it is */
	ret = unmapped_area_topdown(mm, len_pad, PAGE_SIZE, mm->mmap_base, PAGE_SIZE);
	if (ret < 0)
		ret = unmapped_area_topdown(mm, len_pad, PAGE_SIZE, TASK_SIZE, PAGE_SIZE);
	if (ret < 0)
		return 0;
	off_sub = (off - (unsigned long)ret) & (PMD_SIZE - 1);
	return off_sub ? ret + (long)off_sub : ret + (long)PMD_SIZE;
}

long get_unmapped_area(struct mm *mm, struct vml_file *file, unsigned long addr, unsigned long len,
		       unsigned long pgoff, int flags, unsigned long vm_flags)
{
	unsigned long align = PAGE_SIZE;
	long found;

	(void)vm_flags;
	mmap_assert_locked(mm);
	if (len > TASK_SIZE - MMAP_MIN_ADDR)
		return -ENOMEM;
	if (flags & MAP_FIXED) {
		if (addr > TASK_SIZE - len)
			return -ENOMEM;
		if (offset_in_page(addr))
			return -EINVAL;
		return (long)addr;
	}
	if (file && !file->shmem) {
		found = thp_file_area(mm, addr, len, pgoff);
		if (found)
			return found;
	}
	if (hint_fits(mm, addr, len))
		return (long)PAGE_ALIGN(addr);
	/* Larger anonymous mappings are THP-aligned (mm: align larger anonymous mappings). */
	if (!file && !(flags & MAP_SHARED) && !(len & (PMD_SIZE - 1)) && !addr)
		align = PMD_SIZE;
	found = unmapped_area_topdown(mm, len, PAGE_SIZE, mm->mmap_base, align);
	if (found < 0 && align != PAGE_SIZE)
		found = unmapped_area_topdown(mm, len, PAGE_SIZE, mm->mmap_base, PAGE_SIZE);
	if (found < 0)	/* bottom-up fallback, as the arch code does */
		found = unmapped_area_topdown(mm, len, PAGE_SIZE, TASK_SIZE, PAGE_SIZE);
	return found;
}

int shmem_zero_setup(struct mm *mm, unsigned long len, struct vml_file **out)
{
	return vml_file_create_internal(mm->sys, "/dev/zero", len, true, true, out);
}

int vms_gather_munmap(struct vma_txn *t, unsigned long start, unsigned long end,
		      struct vma **prevp, struct vma **nextp, unsigned long *nr_locked,
		      unsigned long *nr_accounted)
{
	struct vma *vma = vt_next(t, start), *next;
	unsigned long locked = 0, accounted = 0;
	int err;

	if (vma && vma->vm_start < end) {
		bool split = false;

		if (start > vma->vm_start) {
			/* Keep map_count within its limit after munmap(). */
			if (end < vma->vm_end && t->map_count >= t->mm->sys->cfg.max_map_count)
				return -ENOMEM;
			/* mseal: no split of a VMA that cannot be unmapped anyway */
			if (vma->vm_flags & VM_SEALED)
				return -EPERM;
			err = vt_split(t, vma, start, false, NULL, &vma);
			if (err)
				return err;
			split = true;
		}
		while (vma && vma->vm_start < end) {
			if (vma->vm_flags & VM_SEALED) {
				/* The kernel's first split is done by now, and stays. */
				if (split)
					t->split_on_abort = start;
				return -EPERM;
			}
			if (vma->vm_end > end) {
				err = vt_split(t, vma, end, false, &vma, NULL);
				if (err)
					return err;
			}
			next = vt_next(t, vma->vm_end);
			if (vma->vm_flags & VM_LOCKED)
				locked += vma_pages(vma);
			if (vma->vm_flags & VM_ACCOUNT)
				accounted += vma_pages(vma);
			err = vt_remove(t, vma);
			if (err)
				return err;
			vma = next;
		}
	}
	if (prevp)
		*prevp = vt_prev(t, start);
	if (nextp)
		*nextp = vt_next(t, start);
	if (nr_locked)
		*nr_locked = locked;
	if (nr_accounted)
		*nr_accounted = accounted;
	return 0;
}

int expand_stack(struct mm *mm, unsigned long addr)
{
	struct vma *vma, *prev, *grown;
	unsigned long grow;
	struct vma_txn t;
	int err;

	mmap_assert_write_locked(mm);
	addr &= PAGE_MASK;
	vma = find_vma(mm, addr);
	if (!vma || !(vma->vm_flags & VM_GROWSDOWN) || addr >= vma->vm_start)
		return -EFAULT;
	if (addr < MMAP_MIN_ADDR)
		return -EPERM;
	prev = find_vma_prev(mm, vma->vm_start);
	/* Keep the guard gap above a neighbour that is not itself a stack (expand_downwards). */
	if (prev && !(prev->vm_flags & VM_GROWSDOWN) && (prev->vm_flags & VM_ACCESS_FLAGS) &&
	    (addr < prev->vm_end || addr - prev->vm_end < STACK_GUARD_GAP))
		return -ENOMEM;
	/* The staged copy is the kernel's maple-tree preallocation: failing it changes nothing. */
	vma_txn_begin(&t, mm);
	grown = vt_modify(&t, vma);
	if (!grown) {
		err = -ENOMEM;
		goto abort;
	}
	/*
	 * expand_downwards gives the stack an anon_vma before it checks the
	 * limits, and keeps it when they refuse the growth: from then on the
	 * VMA counts as touched (mremap keeps its page offset, merges need a
	 * compatible anon_vma) even if the access failed.
	 */
	if (anon_vma_prepare(vma)) {
		err = -ENOMEM;
		goto abort;
	}
	vt_set_anon_vma(grown, vma_anon_vma(vma));
	grow = (vma->vm_start - addr) >> PAGE_SHIFT;
	err = -ENOMEM;
	/* The page offset may not go below 0; then acct_stack_growth's limits. */
	if (grow > vma->vm_pgoff || vma->vm_end - addr > mm->sys->cfg.stack_rlimit ||
	    vm_enough_memory(mm->sys, grow))
		goto abort;
	err = vt_set_range(&t, grown, addr, vma->vm_end, vma->vm_pgoff - grow);
	if (err)
		goto abort;
	vma_txn_commit(&t);
	if (grown->vm_flags & VM_LOCKED)
		mm->locked_vm += grow;
	return 0;
abort:
	vma_txn_abort(&t);
	return err;
}

void vt_unmap_range(struct vma_txn *t, unsigned long start, unsigned long end,
		    struct unmap_range *u)
{
	struct vma *prev = vt_prev(t, start), *next = vt_next(t, start);

	*u = (struct unmap_range){ .start = start, .end = end,
				   .floor = prev ? prev->vm_end : 0,
				   .ceiling = next ? next->vm_start : 0 };
}

/*
 * @downgrade: munmap(2) itself, and mremap's shrink in place - once the
 * VMAs are out of the tree, trade mmap_lock(W) for mmap_lock(R) before the
 * zap and the page-table freeing, as the kernel's vms_complete_munmap_vmas()
 * does when its caller lets it unlock; *@downgraded says whether it did
 * (not on an error or an empty range), and so which lock the caller
 * releases.
 */
static int __do_munmap(struct mm *mm, unsigned long start, unsigned long len, bool downgrade,
		       bool *downgraded)
{
	struct unmap_range u;
	struct vma_txn t;
	unsigned long end, locked;
	struct vma *vma;
	int err;

	mmap_assert_write_locked(mm);
	if (offset_in_page(start) || start > TASK_SIZE || len > TASK_SIZE - start)
		return -EINVAL;
	end = start + PAGE_ALIGN(len);
	if (end == start)
		return -EINVAL;
	vma = find_vma(mm, start);
	if (!vma || vma->vm_start >= end)
		return 0;

	vma_txn_begin(&t, mm);
	err = vms_gather_munmap(&t, start, end, NULL, NULL, &locked, NULL);
	if (err) {
		vma_txn_abort(&t);
		return err;
	}
	vt_unmap_range(&t, start, end, &u);
	vma_txn_commit(&t);
	mm->locked_vm -= locked;
	if (downgrade) {
		/*
		 * No VMA meets [u.floor, u.ceiling) any more, and none can
		 * until the read lock goes: what follows touches only that.
		 */
		mmap_write_downgrade(mm);
		*downgraded = true;
	}
	zap_unmapped_range(mm, start, end, locked);
	free_pgtables(mm, &u);
	return 0;
}

int do_munmap(struct mm *mm, unsigned long start, unsigned long len)
{
	return __do_munmap(mm, start, len, false, NULL);
}

int do_munmap_downgrade(struct mm *mm, unsigned long start, unsigned long len, bool *downgraded)
{
	return __do_munmap(mm, start, len, true, downgraded);
}

/*
 * split_at_range_ends - split the VMAs straddling @start and @end.
 *
 * The kernel's mmap_region() splits them (vms_gather_munmap_vmas) before
 * it charges a private mapping; when that charge fails it re-attaches the
 * pieces but does not merge them again, and maps shows the split. We stage
 * the whole mmap as one transaction, so after such a failure we make the
 * same splits here. An allocation failure on the way leaves them undone.
 * Context: mmap_lock(W).
 */
static void split_at_range_ends(struct mm *mm, unsigned long start, unsigned long end)
{
	struct vma_txn t;
	struct vma *vma;

	vma_txn_begin(&t, mm);
	vma = vt_find(&t, start);
	if (vma && vma->vm_start < start && vt_split(&t, vma, start, false, NULL, NULL))
		goto abort;
	vma = vt_find(&t, end);
	if (vma && vma->vm_start < end && vt_split(&t, vma, end, false, NULL, NULL))
		goto abort;
	vma_txn_commit(&t);
	return;
abort:
	vma_txn_abort(&t);
}

/*
 * mmap_new_vma - a VMA of its own for [@addr, @end), where no neighbour
 * took the range; not in the tree yet. A shared anonymous mapping gets its
 * shmem object here, and is charged for it.
 * Return: 0 and *@out; -ENOMEM with *@charge_failed set when that charge
 *         failed; or -errno.
 */
static int mmap_new_vma(struct mm *mm, struct vml_file *file, unsigned long addr,
			unsigned long end, unsigned long vm_flags, unsigned long pgoff,
			bool *charge_failed, struct vma **out)
{
	struct vml_file *shm = NULL;
	struct vma *vma = vma_alloc(mm);
	int err;

	if (!vma)
		return -ENOMEM;
	vma->vm_start = addr;
	vma->vm_end = end;
	vma->vm_pgoff = pgoff;
	vma->vm_flags = vm_flags;
	if (file) {
		vml_file_get(file);
		vma->vm_file = file;
	} else if (vm_flags & VM_SHARED) {
		/* shmem_acct_size: the object's pages are committed unless NORESERVE */
		if (!(vm_flags & VM_NORESERVE) &&
		    vm_enough_memory(mm->sys, (end - addr) / PAGE_SIZE)) {
			vma_free_unpublished(vma);
			*charge_failed = true;
			return -ENOMEM;
		}
		err = shmem_zero_setup(mm, end - addr, &shm);
		if (err) {
			vma_free_unpublished(vma);
			return err;
		}
		vma->vm_file = shm;	/* the VMA owns the creation reference */
		vma->vm_pgoff = 0;
	}
	*out = vma;
	return 0;
}

static long mmap_region(struct mm *mm, struct vml_file *file, unsigned long addr,
			unsigned long len, unsigned long vm_flags, unsigned long pgoff)
{
	unsigned long end = addr + len, locked, accounted;
	struct vma *prev, *next, *vma = NULL;
	struct vma_merge vmg;
	struct unmap_range u;
	struct vma_txn t;
	bool had_mappings;
	int err;

	vma_txn_begin(&t, mm);
	had_mappings = find_vma_intersection(mm, addr, end) != NULL;
	err = vms_gather_munmap(&t, addr, end, &prev, &next, &locked, &accounted);
	if (err)
		goto abort;
	/* The kernel frees the old page tables before the new VMA goes in. */
	vt_unmap_range(&t, addr, end, &u);
	if (accountable_mapping(file, vm_flags)) {
		/* Private writable memory is committed; what is replaced was already. */
		if (len / PAGE_SIZE > accounted &&
		    vm_enough_memory(mm->sys, len / PAGE_SIZE - accounted)) {
			err = -ENOMEM;
			goto abort_charge;
		}
		vm_flags |= VM_ACCOUNT;
	}

	if (prev || next) {
		vmg = (struct vma_merge){ .t = &t, .start = addr, .end = end, .pgoff = pgoff,
					  .vm_flags = vm_flags, .file = file, .prev = prev,
					  .next = next };
		vma = vma_merge_new_range(&vmg);
		if (vmg.err) {
			err = vmg.err;
			goto abort;
		}
	}
	if (!vma) {
		bool charge_failed = false;

		err = mmap_new_vma(mm, file, addr, end, vm_flags, pgoff, &charge_failed, &vma);
		if (err && charge_failed)
			goto abort_gap;
		if (err)
			goto abort;
		/* Before Linux 6.5 the tree store was inside i_mmap_rwsem(W) (seed 001). */
		if (vma->vm_file && mm->sys->cfg.i_mmap_order == VML_I_MMAP_PRE)
			vt_i_mmap_lock_early(&t, vma);
		err = vt_insert(&t, vma);
		if (err) {
			/* Abort first: it ends a pre-order write section on the file @vma may own. */
			vma_txn_abort(&t);
			vma_free_unpublished(vma);
			return err;
		}
	}
	/*
	 * vma_iter_store and map_count++: under i_mmap_order pre inside the
	 * new VMA's i_mmap_rwsem(W), taken above (0: not charged apart).
	 */
	if (mm->sys->cfg.costs.vma_store_ns)
		plat_charge_ns(mm->sys->cfg.costs.vma_store_ns, PLAT_KERNEL);
	/*
	 * Special and droppable mappings are never locked, also not when
	 * mlockall(MCL_FUTURE) asks for it (__mmap_region): the flags go after
	 * the merge was tried with them (the populate do_mmap decided stays).
	 */
	if ((vm_flags & VM_LOCKED) && (vm_flags & (VM_SPECIAL | VM_DROPPABLE))) {
		vma->vm_flags &= ~VM_LOCKED_MASK;
		vm_flags &= ~VM_LOCKED_MASK;
	}
	vma_txn_commit(&t);
	mm->locked_vm -= locked;
	if (vm_flags & VM_LOCKED)
		mm->locked_vm += len >> PAGE_SHIFT;
	if (had_mappings) {
		zap_unmapped_range(mm, addr, end, locked);
		free_pgtables(mm, &u);
	}
	return (long)addr;

abort:
	vma_txn_abort(&t);
	return err;

abort_charge:
	vma_txn_abort(&t);
	split_at_range_ends(mm, addr, end);
	return err;

abort_gap:
	/*
	 * By now the kernel has cleared the old mappings' page tables and
	 * closed them (vms_clean_up_area), so on failure it cannot put them
	 * back and leaves [addr, end) unmapped ("the old failure method of
	 * leaving a gap"). Only a failed charge gets here: on an allocation
	 * failure we keep the old mappings, which the kernel cannot.
	 */
	vma_txn_abort(&t);
	if (had_mappings)
		do_munmap(mm, addr, len);
	return err;
}

/*
 * do_mmap - the body of mmap(2) with the kernel's checks, in its order.
 * Context: mmap_lock(W). *populate is set to the length to fault in after
 * unlocking (MAP_POPULATE, or VM_LOCKED).
 */
static long do_mmap(struct mm *mm, struct vml_file *file, unsigned long addr, unsigned long len,
		    int prot, int flags, unsigned long pgoff, unsigned long *populate)
{
	unsigned long vm_flags;
	long ret;

	*populate = 0;
	if (!len)
		return -EINVAL;
	if (flags & MAP_FIXED_NOREPLACE)
		flags |= MAP_FIXED;
	if (!(flags & MAP_FIXED)) {
		/* round_hint_to_min */
		addr &= PAGE_MASK;
		if (addr && addr < MMAP_MIN_ADDR)
			addr = PAGE_ALIGN(MMAP_MIN_ADDR);
	}
	len = PAGE_ALIGN(len);
	if (!len)
		return -ENOMEM;
	if (pgoff + (len >> PAGE_SHIFT) < pgoff)
		return -EOVERFLOW;
	if (load_relaxed(&mm->map_count) > mm->sys->cfg.max_map_count)
		return -ENOMEM;

	ret = get_unmapped_area(mm, file, addr, len, pgoff, flags, 0);
	if (ret < 0)
		return ret;
	addr = (unsigned long)ret;

	if ((flags & MAP_FIXED_NOREPLACE) && find_vma_intersection(mm, addr, addr + len))
		return -EEXIST;
	vm_flags = calc_vm_prot_bits(prot) | calc_vm_flag_bits(flags) | mm->def_flags |
		   VM_MAYREAD | VM_MAYWRITE | VM_MAYEXEC;
	if (prot == PROT_EXEC)
		vm_flags |= pkey_vm_flags(execute_only_pkey(mm));

	if (file) {
		switch (flags & MAP_TYPE) {
		case MAP_SHARED:
			flags &= LEGACY_MAP_MASK;
			/* fallthrough */
		case MAP_SHARED_VALIDATE:
			/* MAP_SYNC would need DAX; MAP_FIXED_NOREPLACE is not a legacy flag. */
			if (flags & ~LEGACY_MAP_MASK)
				return -EOPNOTSUPP;
			vm_flags |= VM_SHARED | VM_MAYSHARE;
			if (vm_flags & VM_GROWSDOWN)
				return -EINVAL;	/* stacks are anonymous */
			break;
		case MAP_PRIVATE:
			if (vm_flags & VM_GROWSDOWN)
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	} else {
		switch (flags & MAP_TYPE) {
		case MAP_SHARED:	/* MAP_SHARED_VALIDATE is for files only */
			if (vm_flags & VM_GROWSDOWN)
				return -EINVAL;
			pgoff = 0;
			vm_flags |= VM_SHARED | VM_MAYSHARE;
			break;
		case MAP_DROPPABLE:
			/*
			 * Neither locked, nor a stack (nor hugetlb); not reserved,
			 * not inherited by fork, not dumped: pages that may vanish.
			 */
			if ((flags & MAP_LOCKED) || (vm_flags & VM_GROWSDOWN))
				return -EINVAL;
			vm_flags |= VM_DROPPABLE | VM_NORESERVE | VM_WIPEONFORK | VM_DONTDUMP;
			/* fallthrough */
		case MAP_PRIVATE:
			pgoff = addr >> PAGE_SHIFT;
			break;
		default:
			return -EINVAL;
		}
	}
	if (flags & MAP_NORESERVE)
		vm_flags |= VM_NORESERVE;	/* overcommit heuristic mode: honoured */

	ret = mmap_region(mm, file, addr, len, vm_flags, pgoff);
	/*
	 * Locked: populate (which skips what is locked on fault). A droppable
	 * mapping that mlockall(MCL_FUTURE) asked to lock is not locked, but
	 * populated all the same.
	 */
	if (ret >= 0 && ((vm_flags & VM_LOCKED) ||
			 (flags & (MAP_POPULATE | MAP_NONBLOCK)) == MAP_POPULATE))
		*populate = len;
	return ret;
}

int vml_mmap(struct vml_mm *umm, unsigned long addr, unsigned long len, int prot, int flags,
	     struct vml_file *file, unsigned long offset, unsigned long *addr_out)
{
	struct mm *mm = to_mm(umm);
	unsigned long populate;
	long ret;

	if (!mm)
		return -EINVAL;
	/* ksys_mmap_pgoff / sys_mmap checks that come before do_mmap. */
	if (offset_in_page(offset))
		return -EINVAL;
	if (flags & MAP_ANONYMOUS)
		file = NULL;
	else if (!file)
		return -EBADF;
	plat_charge_ns(mm->sys->cfg.costs.syscall_ns, PLAT_KERNEL);
	mmap_write_lock(mm);
	ret = do_mmap(mm, file, addr, len, prot, flags, offset >> PAGE_SHIFT, &populate);
	plat_charge_ns(mm->sys->cfg.costs.mmap_ns, PLAT_KERNEL);
	mmap_write_unlock(mm);
	if (ret < 0)
		return (int)ret;
	if (populate)
		mm_populate(mm, (unsigned long)ret, populate);
	if (addr_out)
		*addr_out = (unsigned long)ret;
	return 0;
}

int vml_munmap(struct vml_mm *umm, unsigned long addr, unsigned long len)
{
	struct mm *mm = to_mm(umm);
	bool downgraded = false;
	int err;

	if (!mm)
		return -EINVAL;
	plat_charge_ns(mm->sys->cfg.costs.syscall_ns, PLAT_KERNEL);
	mmap_write_lock(mm);
	err = do_munmap_downgrade(mm, addr, len, &downgraded);
	plat_charge_ns(mm->sys->cfg.costs.munmap_ns, PLAT_KERNEL);
	if (downgraded)
		mmap_read_unlock(mm);
	else
		mmap_write_unlock(mm);
	return err;
}
