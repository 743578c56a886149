// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * madvise.c - madvise(2) and prctl(PR_SET_VMA_ANON_NAME) (mm/madvise.c).
 *
 * Both walk the VMAs of a range the kernel's way: a hole is remembered as
 * -ENOMEM and skipped, the rest of the range is still advised.
 *
 * Guard regions (6.13+): MADV_GUARD_INSTALL zaps the range (keeping the
 * markers already there) and puts a guard marker in every entry, which a
 * fault turns into SIGSEGV; MADV_GUARD_REMOVE clears them. Neither splits a
 * VMA: install marks the whole VMA VM_MAYBE_GUARD (6.18.y, smaps `gu`, a
 * sticky flag: merges keep it, and fork copies the page tables of such a
 * VMA) and gives an anonymous one its anon_vma. Locked VMAs (install only)
 * and special ones are refused with EINVAL, which ends the walk.
 *
 * Sealed VMAs (mseal.c) refuse, with EPERM, the advices that discard data
 * (is_discard) when the VMA is anonymous and not writable: the caller
 * could not have changed the data any other way (can_madvise_modify).
 *
 * MADV_POPULATE_READ/WRITE do not walk the VMAs: they fault the range in
 * as GUP does (gup.c faultin_page_range) under mmap_lock(R). MADV_REMOVE
 * punches a hole in the file of a shared writable mapping, at the range's
 * file offsets; the kernel drops mmap_lock for it (vfs_fallocate), the
 * model punches after the walk, with mmap_lock dropped (truncate.c).
 *
 * Locks (6.18's get_lock_mode): MADV_DONTNEED takes the VMA's read lock
 * when the range lies inside one VMA, else mmap_lock(R); every other advice
 * stages its changes in a transaction under mmap_lock(W) (the kernel's
 * FREE, COLD, PAGEOUT, WILLNEED and guard advices take it for read).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "mm/file.h"
#include "mm/folio.h"
#include "mm/internal.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm/pkeys.h"
#include "mm/reclaim.h"
#include "mm/rmap.h"
#include "mm/vma.h"
#include "mm/vma_lock.h"
#include "util/alloc.h"
#include "util/compiler.h"
#include "util/linux_compat.h"

#define ANON_VMA_NAME_MAX_LEN 80

/* What one advice does to one VMA's part [start, end). */
struct madvise_behavior {
	int advice;
	struct anon_vma_name *name;	/* PR_SET_VMA_ANON_NAME */
	bool set_name;
	struct mm *mm;
	struct vma_txn *t;		/* NULL: no VMA changes, under mmap_lock(R) */
	/* ranges to act on after the VMAs are settled */
	unsigned long (*ranges)[2];
	size_t nr_ranges;
	bool drain;			/* WILLNEED on anonymous or shmem memory: lru_add_drain() */
	/* MADV_REMOVE: the file ranges to punch, once mmap_lock is dropped */
	struct remove_range {
		struct vml_file *file;	/* a reference held */
		unsigned long offset, len;
	} *removes;
	size_t nr_removes;
	int err;
};

static bool advice_changes_vmas(int advice)
{
	switch (advice) {
	case MADV_NORMAL:
	case MADV_RANDOM:
	case MADV_SEQUENTIAL:
	case MADV_DONTFORK:
	case MADV_DOFORK:
	case MADV_DONTDUMP:
	case MADV_DODUMP:
	case MADV_WIPEONFORK:
	case MADV_KEEPONFORK:
	case MADV_HUGEPAGE:
	case MADV_NOHUGEPAGE:
		return true;
	default:
		return false;
	}
}

static bool advice_valid(int advice)
{
	switch (advice) {
	case MADV_DONTNEED:
	case MADV_DONTNEED_LOCKED:
	case MADV_FREE:
	case MADV_WILLNEED:
	case MADV_COLD:
	case MADV_PAGEOUT:
	case MADV_GUARD_INSTALL:
	case MADV_GUARD_REMOVE:
	case MADV_POPULATE_READ:
	case MADV_POPULATE_WRITE:
	case MADV_REMOVE:
		return true;
	default:
		return advice_changes_vmas(advice);
	}
}

/* The advices that throw data away (madvise.c is_discard, 6.18). */
static bool is_discard(int advice)
{
	switch (advice) {
	case MADV_FREE:
	case MADV_DONTNEED:
	case MADV_DONTNEED_LOCKED:
	case MADV_REMOVE:
	case MADV_DONTFORK:
	case MADV_WIPEONFORK:
	case MADV_GUARD_INSTALL:
		return true;
	default:
		return false;
	}
}

/*
 * can_madvise_modify - may @advice act on @vma? Only a sealed anonymous
 * VMA that its owner cannot write is protected, and only from discards:
 * file mappings, private or shared, are let through, as the kernel does
 * for sealed text.
 */
static bool can_madvise_modify(const struct vma *vma, int advice)
{
	if (!(vma->vm_flags & VM_SEALED) || !is_discard(advice))
		return true;
	if (!vma_is_anonymous(vma))
		return true;
	return (vma->vm_flags & VM_WRITE) && !vma_pkey(vma);
}

/* The new flags for a flag-changing advice, or an errno (negative) if refused. */
static long advice_new_flags(struct vma *vma, int advice)
{
	unsigned long f = vma->vm_flags;

	switch (advice) {
	case MADV_NORMAL:
		return (long)(f & ~(VM_RAND_READ | VM_SEQ_READ));
	case MADV_RANDOM:
		return (long)((f & ~VM_SEQ_READ) | VM_RAND_READ);
	case MADV_SEQUENTIAL:
		return (long)((f & ~VM_RAND_READ) | VM_SEQ_READ);
	case MADV_DONTFORK:
		return (long)(f | VM_DONTCOPY);
	case MADV_DOFORK:
		if (f & VM_IO)
			return -EINVAL;
		return (long)(f & ~VM_DONTCOPY);
	case MADV_DONTDUMP:
		return (long)(f | VM_DONTDUMP);
	case MADV_DODUMP:
		if (f & (VM_SPECIAL | VM_DROPPABLE))
			return -EINVAL;
		return (long)(f & ~VM_DONTDUMP);
	case MADV_WIPEONFORK:
		if (vma->vm_file || (f & VM_SHARED))
			return -EINVAL;
		return (long)(f | VM_WIPEONFORK);
	case MADV_KEEPONFORK:
		if (f & VM_DROPPABLE)
			return -EINVAL;
		return (long)(f & ~VM_WIPEONFORK);
	case MADV_HUGEPAGE:
		return (long)((f & ~VM_NOHUGEPAGE) | VM_HUGEPAGE);
	case MADV_NOHUGEPAGE:
		return (long)((f & ~VM_HUGEPAGE) | VM_NOHUGEPAGE);
	}
	return (long)f;
}

/* madvise_dontneed_free_valid_vma for DONTNEED and DONTNEED_LOCKED, under either lock. */
static bool dontneed_valid_vma(const struct vma *vma, int advice)
{
	return !(vma->vm_flags & (VM_PFNMAP | (advice == MADV_DONTNEED ? VM_LOCKED : 0)));
}

static int record_range(struct madvise_behavior *b, unsigned long start, unsigned long end)
{
	unsigned long (*n)[2] = vml_realloc(b->ranges, (b->nr_ranges + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	n[b->nr_ranges][0] = start;
	n[b->nr_ranges][1] = end;
	b->nr_ranges++;
	b->ranges = n;
	return 0;
}

/*
 * MADV_GUARD_INSTALL on one VMA's part: refuse locked and special VMAs, mark
 * the whole VMA VM_MAYBE_GUARD (staged: VMAs are copy-on-write here; the
 * kernel sets the bit in place, without splitting), give an anonymous one
 * its anon_vma (madvise_guard_install), and record the range for the
 * markers, which go in after the commit.
 */
static int guard_install_vma(struct madvise_behavior *b, struct vma *vma, struct vma **prev,
			     unsigned long start, unsigned long end, bool *fatal)
{
	struct vma *staged;

	VML_BUG_ON(!b->t);
	if (vma->vm_flags & (VM_SPECIAL | VM_HUGETLB | VM_LOCKED))
		return -EINVAL;
	*fatal = true;
	if (vma_is_anonymous(vma) && anon_vma_prepare(vma))
		return -ENOMEM;
	if (!(vma->vm_flags & VM_MAYBE_GUARD)) {
		staged = vt_modify(b->t, vma);
		if (!staged)
			return -ENOMEM;
		staged->vm_flags |= VM_MAYBE_GUARD;
		if (vma_anon_vma(vma))
			vt_set_anon_vma(staged, vma_anon_vma(vma));
		vma = staged;
	}
	*prev = vma;
	return record_range(b, start, end);
}

/*
 * MADV_REMOVE on one VMA's part (madvise_remove): not a locked VMA, only a
 * file's (shmem or regular), only a shared one that may be written; the
 * hole is punched once the walk is over (do_madvise).
 */
static int remove_vma(struct madvise_behavior *b, struct vma *vma, struct vma **prev,
		      unsigned long start, unsigned long end, bool *fatal)
{
	struct remove_range *n;

	if (vma->vm_flags & VM_LOCKED)
		return -EINVAL;
	if (!vma->vm_file)
		return -EINVAL;
	if ((vma->vm_flags & (VM_SHARED | VM_MAYWRITE)) != (VM_SHARED | VM_MAYWRITE))
		return -EACCES;
	n = vml_realloc(b->removes, (b->nr_removes + 1) * sizeof(*n));
	if (!n) {
		*fatal = true;
		return -ENOMEM;
	}
	b->removes = n;
	vml_file_get(vma->vm_file);
	n[b->nr_removes++] = (struct remove_range){
		.file = vma->vm_file,
		.offset = (start - vma->vm_start) + (vma->vm_pgoff << PAGE_SHIFT),
		.len = end - start,
	};
	*prev = vma;
	return 0;
}

/*
 * Punch what MADV_REMOVE recorded (all before the walk's error, if any),
 * and drop the files. vfs_fallocate's error ends the walk: the ranges after
 * it are not punched, and it is what madvise returns.
 * Context: no mmap_lock.
 */
static int madvise_remove_finish(struct madvise_behavior *b, int err)
{
	int perr = 0;

	for (size_t i = 0; i < b->nr_removes; i++) {
		if (!perr)
			perr = vml_file_punch(b->removes[i].file, (long long)b->removes[i].offset,
					      (long long)b->removes[i].len);
		vml_file_put(b->removes[i].file);
	}
	vml_free(b->removes);
	return perr ? perr : err;
}

/*
 * One VMA's part. Return 0 and the VMA now covering it in *prev, or an
 * errno: -ENOMEM from staging aborts the whole call; other errors end the
 * walk like the kernel's.
 */
static int madvise_vma(struct madvise_behavior *b, struct vma *vma, struct vma **prev,
		       unsigned long start, unsigned long end, bool *fatal)
{
	struct vma_merge vmg;
	struct vma *res;
	long nf;
	int err;

	*fatal = false;
	if (b->set_name) {
		VML_BUG_ON(!b->t);
		if (vma->vm_file && !(vma->vm_file->shmem && vma->vm_file->deleted))
			return -EBADF;
		if (anon_vma_name_eq(vma->anon_name, b->name)) {
			*prev = vma;
			return 0;
		}
		vmg_init_modify(&vmg, b->t, *prev, vma, start, end);
		vmg.anon_name = b->name;
		res = vma_modify(&vmg);
		if (!res) {
			*fatal = true;
			return vmg.err;
		}
		if (res->anon_name != b->name) {
			anon_vma_name_put(res->anon_name);
			if (b->name)
				anon_vma_name_get(b->name);
			res->anon_name = b->name;
		}
		*prev = res;
		return 0;
	}

	if (!can_madvise_modify(vma, b->advice))
		return -EPERM;
	switch (b->advice) {
	case MADV_REMOVE:
		return remove_vma(b, vma, prev, start, end, fatal);
	case MADV_DONTNEED:
	case MADV_DONTNEED_LOCKED:
		if (!dontneed_valid_vma(vma, b->advice))
			return -EINVAL;
		*prev = vma;
		*fatal = true;
		return record_range(b, start, end);
	case MADV_FREE:
		/* madvise_dontneed_free_valid_vma, then the anonymous-only check */
		if (vma->vm_flags & (VM_PFNMAP | VM_LOCKED))
			return -EINVAL;
		if (!vma_is_anonymous(vma))
			return -EINVAL;
		*prev = vma;
		*fatal = true;
		return record_range(b, start, end);
	case MADV_COLD:
	case MADV_PAGEOUT:
		if (vma->vm_flags & (VM_LOCKED | VM_PFNMAP | VM_HUGETLB))
			return -EINVAL;
		*prev = vma;
		*fatal = true;
		return record_range(b, start, end);
	case MADV_GUARD_INSTALL:
		return guard_install_vma(b, vma, prev, start, end, fatal);
	case MADV_GUARD_REMOVE:
		/* is_valid_guard_vma(allow_locked): removing markers destroys nothing */
		if (vma->vm_flags & (VM_SPECIAL | VM_HUGETLB))
			return -EINVAL;
		*prev = vma;
		*fatal = true;
		return record_range(b, start, end);
	case MADV_WILLNEED:
		/*
		 * Swap-in readahead for anonymous memory and for a shmem object
		 * (shared or privately mapped) ends with lru_add_drain(); a
		 * regular file only gets page-cache readahead, which does not.
		 */
		if (!vma->vm_file || vma->vm_file->shmem)
			b->drain = true;
		*prev = vma;
		return 0;
	}

	VML_BUG_ON(!b->t);	/* what follows stages VMA changes */
	nf = advice_new_flags(vma, b->advice);
	if (nf < 0)
		return (int)nf;
	if ((unsigned long)nf == vma->vm_flags) {
		*prev = vma;
		return 0;
	}
	res = vma_modify_flags(b->t, *prev, vma, start, end, (unsigned long)nf, &err);
	if (!res) {
		*fatal = true;
		return err;
	}
	*prev = res;
	return 0;
}

/* The walk's lookups: through the transaction, or the tree itself under mmap_lock(R). */
static struct vma *walk_next(struct madvise_behavior *b, unsigned long addr)
{
	return b->t ? vt_next(b->t, addr) : find_vma(b->mm, addr);
}

static struct vma *walk_prev(struct madvise_behavior *b, unsigned long addr)
{
	return b->t ? vt_prev(b->t, addr) : find_vma_prev(b->mm, addr);
}

/*
 * madvise_walk_vmas: Context: mmap_lock(W), inside the transaction b->t; or,
 * for an advice that changes no VMA (b->t NULL), mmap_lock(R).
 */
static int madvise_walk_vmas(struct madvise_behavior *b, unsigned long start, unsigned long end,
			     bool *fatal)
{
	struct vma *vma, *prev;
	int unmapped_error = 0, error;
	unsigned long tmp;

	vma = walk_next(b, start);
	prev = vma ? walk_prev(b, vma->vm_start) : NULL;
	if (vma && start > vma->vm_start)
		prev = vma;
	for (;;) {
		if (!vma) {
			unmapped_error = -ENOMEM;	/* the rest of the range is a hole */
			break;
		}
		if (start < vma->vm_start) {
			unmapped_error = -ENOMEM;
			start = vma->vm_start;
			if (start >= end)
				break;
		}
		tmp = VML_MIN(vma->vm_end, end);
		error = madvise_vma(b, vma, &prev, start, tmp, fatal);
		if (error)
			return error;
		start = tmp;
		if (prev && start < prev->vm_end)
			start = prev->vm_end;
		if (start >= end)
			break;
		vma = walk_next(b, prev ? prev->vm_end : start);
	}
	/* A hole is not fatal: what was advised stands (*fatal is the last VMA's, stale). */
	*fatal = false;
	return unmapped_error;
}

/*
 * 6.18's MADVISE_VMA_READ_LOCK (madvise_lock, try_vma_read_lock): a
 * MADV_DONTNEED inside one VMA holds that VMA's read lock alone, not
 * mmap_lock, so other VMAs' writers and every reader go on meanwhile; a
 * writer of this VMA (a munmap inside it) waits in vma_start_write() for
 * the zap - but not for the freeing of its last mmu_gather's pages, which
 * do_madvise's madvise_finish_tlb() does after the VMA lock is dropped.
 * A range that leaves the VMA, or a VMA that cannot be locked, goes the
 * mmap_lock way, for read: a zap changes no VMA.
 * Return: true if done, with *@err the result; false: take mmap_lock.
 */
static bool madvise_dontneed_vma_locked(struct mm *mm, unsigned long start, unsigned long end,
					int advice, int *err)
{
	struct vma *vma = lock_vma_under_rcu(mm, start);
	struct mmu_gather tlb;

	if (!vma)
		return false;
	if (end > vma->vm_end) {
		vma_end_read(vma);
		return false;
	}
	if (!can_madvise_modify(vma, advice)) {
		vma_end_read(vma);
		*err = -EPERM;
		return true;
	}
	if (!dontneed_valid_vma(vma, advice)) {
		vma_end_read(vma);
		*err = -EINVAL;
		return true;
	}
	tlb_gather_mmu(&tlb, mm);
	zap_page_range_single_batched(mm, &tlb, start, end);	/* guard markers stay */
	vma_end_read(vma);
	/* As do_madvise's madvise_finish_tlb(): after the walk dropped the VMA lock. */
	tlb_finish_mmu(&tlb);
	*err = 0;
	return true;
}

static int do_madvise(struct mm *mm, unsigned long start, unsigned long len_in, int advice,
		      struct anon_vma_name *name, bool set_name)
{
	struct madvise_behavior b = { .advice = advice, .name = name, .set_name = set_name,
				      .mm = mm };
	/* 6.18's get_lock_mode(): MADVISE_VMA_READ_LOCK, falling back to (R) */
	bool dontneed = (advice == MADV_DONTNEED || advice == MADV_DONTNEED_LOCKED) && !set_name;
	unsigned long len, end;
	struct vma_txn t;
	bool fatal = false;
	int err, ret;

	if (!set_name && !advice_valid(advice))
		return -EINVAL;
	if (offset_in_page(start))
		return -EINVAL;
	len = PAGE_ALIGN(len_in);
	if (len_in && !len)
		return -EINVAL;
	end = start + len;
	if (end < start)
		return -EINVAL;
	if (end == start)
		return 0;
	if (dontneed && !mm->sys->cfg.no_per_vma_lock &&
	    madvise_dontneed_vma_locked(mm, start, end, advice, &err))
		return err;
	if (!set_name && (advice == MADV_POPULATE_READ || advice == MADV_POPULATE_WRITE)) {
		/* madvise_populate: GUP over the range, no VMA walk (MADVISE_MMAP_READ_LOCK) */
		mmap_read_lock(mm);
		err = faultin_page_range(mm, start, end, advice == MADV_POPULATE_WRITE);
		mmap_read_unlock(mm);
		return err;
	}

	if (dontneed) {
		/* Over several VMAs or a hole: the zaps change no VMA (MADVISE_MMAP_READ_LOCK). */
		mmap_read_lock(mm);
	} else {
		mmap_write_lock(mm);
		vma_txn_begin(&t, mm);
		b.t = &t;
	}
	err = madvise_walk_vmas(&b, start, end, &fatal);
	if (fatal && err) {
		/* Staging (or recording a range) ran out of memory: nothing is applied. */
		if (b.t) {
			vma_txn_abort(&t);
			mmap_write_unlock(mm);
		} else {
			mmap_read_unlock(mm);
		}
		vml_free(b.ranges);
		/* nothing applied: the files are only put */
		for (size_t i = 0; i < b.nr_removes; i++)
			vml_file_put(b.removes[i].file);
		vml_free(b.removes);
		return err;
	}
	if (b.t)
		vma_txn_commit(&t);
	for (size_t i = 0; i < b.nr_ranges; i++) {
		unsigned long s = b.ranges[i][0], e = b.ranges[i][1];

		switch (advice) {
		case MADV_DONTNEED:
		case MADV_DONTNEED_LOCKED:
			zap_page_range_single(mm, s, e);	/* guard markers stay */
			break;
		case MADV_GUARD_INSTALL:
			/* Make room (existing markers stay), then a marker in every entry. */
			zap_page_range_single(mm, s, e);
			ret = guard_install_range(mm, s, e);
			if (ret && !err)
				err = ret;
			break;
		case MADV_GUARD_REMOVE:
			guard_remove_range(mm, s, e);
			break;
		case MADV_FREE:
			madvise_free_range(mm, s, e);
			break;
		case MADV_COLD:
			madvise_cold_range(mm, s, e);
			break;
		case MADV_PAGEOUT:
			madvise_pageout_range(mm, s, e);
			break;
		}
	}
	if (b.drain)
		lru_add_drain(mm->sys);
	if (b.t)
		mmap_write_unlock(mm);
	else
		mmap_read_unlock(mm);
	vml_free(b.ranges);
	return madvise_remove_finish(&b, err);
}

int vml_madvise(struct vml_mm *umm, unsigned long addr, unsigned long len, int advice)
{
	if (!umm)
		return -EINVAL;
	syscall_charge(to_mm(umm));
	return do_madvise(to_mm(umm), addr, len, advice, NULL, false);
}

static bool valid_anon_name_char(char c)
{
	/* Printable, and none of the characters that would confuse parsers of maps. */
	return c >= 0x20 && c < 0x7f && !strchr("\\`$[]", c);
}

int vml_set_anon_name(struct vml_mm *umm, unsigned long addr, unsigned long len, const char *name)
{
	struct mm *mm = to_mm(umm);
	struct anon_vma_name *n = NULL;
	int err;

	if (!mm)
		return -EINVAL;
	if (!mm->sys->cfg.anon_vma_name)
		return -EINVAL;	/* CONFIG_ANON_VMA_NAME=n, as on the live machine */
	if (name) {
		size_t l = strnlen(name, ANON_VMA_NAME_MAX_LEN);

		if (l >= ANON_VMA_NAME_MAX_LEN)
			return -EINVAL;
		for (size_t i = 0; i < l; i++)
			if (!valid_anon_name_char(name[i]))
				return -EINVAL;
		n = anon_vma_name_alloc(name);
		if (!n)
			return -ENOMEM;
	}
	err = do_madvise(mm, addr, len, 0, n, true);
	anon_vma_name_put(n);
	return err;
}
