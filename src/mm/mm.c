// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mm.c - address-space lifetime: creation, user and struct references,
 * exit, and counters.
 */
#include <assert.h>
#include <errno.h>

#include "mm/rollup.h"
#include "mm/file.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm/vma.h"
#include "mm/vma_txn.h"
#include "util/alloc.h"
#include "util/compiler.h"

/*
 * The public steal policies are the rwsem's, value for value, but for
 * NOSTEAL_RETAKE (mainline's rwsem; the drop-and-retake callers choose the
 * acquire): the cast below relies on it.
 */
static_assert((int)VML_STEAL_KERNEL == (int)RWSEM_STEAL_KERNEL &&
	      (int)VML_STEAL_NOT_BEHIND_WRITER == (int)RWSEM_STEAL_NOT_BEHIND_WRITER &&
	      (int)VML_STEAL_NEVER == (int)RWSEM_STEAL_NEVER,
	      "enum vml_steal_policy and enum rwsem_steal must agree");

int mm_alloc(struct vml_sys *sys, struct mm **out)
{
	struct rwsem_config rc = {
		/* NOSTEAL_RETAKE is mainline's rwsem; its callers choose the acquire. */
		.steal = sys->cfg.mmap_lock_steal == VML_STEAL_NOSTEAL_RETAKE ? RWSEM_STEAL_KERNEL :
			 (enum rwsem_steal)sys->cfg.mmap_lock_steal,
		.handoff_ns = sys->cfg.mmap_lock_handoff_ns,
		.tick_ns = sys->cfg.mmap_lock_tick_ns,
	};
	struct mm *mm = vml_zalloc(sizeof(*mm));

	if (!mm)
		return -ENOMEM;
	if (pgtable_alloc_pgd(mm)) {
		vml_free(mm);
		return -ENOMEM;
	}
	rwsem_init(&mm->mmap_lock, &rc);
	seqcount_init(&mm->mm_lock_seq);
	rtree_init(&mm->mm_mt);
	/* The maple tree's iterator: a dead node sends it down again (kernel.md §1). */
	rtree_set_rewalk(&mm->mm_mt, sys->cfg.kernel_transients);
	mm->sys = sys;
	mm->mmap_base = DEFAULT_MMAP_BASE;
	mm->execute_only_pkey = -1;
	store_relaxed(&mm->mm_users, 1);
	store_relaxed(&mm->mm_count, 1);
	spin_lock_init(&mm->page_table_lock, LOCK_CLASS_PAGE_TABLE);
	rollup_mm_init(mm);
	fetch_add_relaxed(&sys->nr_mms, 1);
	*out = mm;
	return 0;
}

bool mmget_not_zero(struct mm *mm)
{
	int users = load_relaxed(&mm->mm_users);

	do {
		if (users == 0)
			return false;
	/* acquire: pairs with the release half of mmput()'s decrement: we see what leaving users did */
	} while (!cas_acquire(&mm->mm_users, &users, users + 1));
	return true;
}

void mmgrab(struct mm *mm)
{
	fetch_add_relaxed(&mm->mm_count, 1);
}

void mmdrop(struct mm *mm)
{
	/* acq_rel: pairs with the other mmdrops' decrements: the last sees their accesses */
	if (fetch_sub_acq_rel(&mm->mm_count, 1) != 1)
		return;
	rtree_destroy(&mm->mm_mt);
	pgtable_free_all(mm);
	rwsem_destroy(&mm->mmap_lock);
	fetch_sub_relaxed(&mm->sys->nr_mms, 1);
	vml_free(mm);
}

void mmput(struct mm *mm)
{
	/* acq_rel: pairs with the other mmputs' decrements and mmget_not_zero's acquire */
	if (fetch_sub_acq_rel(&mm->mm_users, 1) != 1)
		return;
	exit_mmap(mm);
	mmdrop(mm);
}

void exit_mmap(struct mm *mm)
{
	struct vma_iterator vmi;
	struct vma_txn t;
	struct vma *vma;
	int err = 0;

	mmap_write_lock(mm);
	mm->exiting = true;
	/* unmap_vmas: a locked VMA's folios are munlocked as they go (munlock_vma_folio) */
	vma_iter_init(&vmi, mm, 0);
	for_each_vma(vmi, vma)
		if (vma->vm_flags & VM_LOCKED)
			zap_unmapped_range(mm, vma->vm_start, vma->vm_end, true);
	vma_txn_begin(&t, mm);
	/* Removing never allocates more than a path copy; retry until memory is there. */
	while ((vma = vt_next(&t, 0)) != NULL) {
		err = vt_remove(&t, vma);
		if (err)
			break;
	}
	VML_BUG_ON(err);
	vma_txn_commit(&t);
	zap_page_range(mm, 0, TASK_SIZE);
	mm->locked_vm = 0;
	mmap_write_unlock(mm);
}

int vml_mm_create(struct vml_sys *sys, struct vml_mm **out)
{
	struct mm *mm;
	int err;

	if (!sys || !out)
		return -EINVAL;
	err = mm_alloc(sys, &mm);
	if (err)
		return err;
	*out = from_mm(mm);
	return 0;
}

void vml_mm_destroy(struct vml_mm *umm)
{
	if (umm)
		mmput(to_mm(umm));
}

int vml_mm_stats(struct vml_mm *umm, struct vml_mm_stats *out)
{
	struct mm *mm = to_mm(umm);
	struct rwsem_stats rs;

	if (!mm || !out)
		return -EINVAL;
	rwsem_stats_read(&mm->mmap_lock, &rs);
	*out = (struct vml_mm_stats){
		.map_count = load_relaxed(&mm->map_count),
		.rss_pages = (uint64_t)(mm_counter(mm, MM_ANONPAGES) + mm_counter(mm, MM_FILEPAGES) +
					mm_counter(mm, MM_SHMEMPAGES)),
		.vma_lock_success = load_relaxed(&mm->stats.vma_lock_success),
		.vma_lock_abort = load_relaxed(&mm->stats.vma_lock_abort),
		.vma_lock_retry = load_relaxed(&mm->stats.vma_lock_retry),
		.vma_lock_miss = load_relaxed(&mm->stats.vma_lock_miss),
		.faults = load_relaxed(&mm->stats.faults),
		.faults_vma_locked = load_relaxed(&mm->stats.faults_vma_locked),
		.mmap_read_locks = load_relaxed(&mm->stats.mmap_read_locks),
		.mmap_write_locks = load_relaxed(&mm->stats.mmap_write_locks),
		.mmap_read_steals = rs.read_steal,
		.mmap_handoffs = rs.handoff,
		.proc_mmap_fallbacks = load_relaxed(&mm->stats.proc_mmap_fallbacks),
		.proc_contended_drops = load_relaxed(&mm->stats.proc_contended_drops),
		.shmem_swap_none = load_relaxed(&mm->stats.shmem_swap_none),
		.shmem_swap_object = load_relaxed(&mm->stats.shmem_swap_object),
		.shmem_swap_walk = load_relaxed(&mm->stats.shmem_swap_walk),
		.shmem_swap_per_page = load_relaxed(&mm->stats.shmem_swap_per_page),
		.shmem_swap_lookups = load_relaxed(&mm->stats.shmem_swap_lookups),
	};
	return 0;
}
