// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vma_txn.c - staged, all-or-nothing changes to an mm's VMAs.
 *
 * Why copy-on-write VMAs: the kernel edits a VMA in place while it holds the
 * VMA's write lock, and undoes nothing when a later step fails. Here a
 * changed mapping is a fresh struct vma staged in a tree transaction; the
 * VMAs it replaces are write-locked (which waits for their readers) and
 * stay untouched, so an abort only has to free what was staged. Readers see
 * the old layout or the new one, never a mix: the tree is published with
 * one release store.
 *
 * Commit order (all under mmap_lock(W)):
 *   1. stamp every staged VMA write-locked and mark it attached;
 *   2. add staged file VMAs to their file's i_mmap (under i_mmap_rwsem,
 *      outside of the tree store: docs/kernel.md 8);
 *   3. publish the tree (rtree_txn_commit) and set map_count;
 *   4. remove retired file VMAs from i_mmap, batched up to 8 per lock hold
 *      for one file (unlink_file_vma_batch);
 *   5. detach retired VMAs (waits for transient readers) and free them
 *      after a grace period; if that ended a shared anonymous object with
 *      pages, drain the LRU batches as its eviction does (shmem.c).
 * Between 2 and 4 a page is reachable through both the old and the new VMA
 * in i_mmap, never through neither.
 *
 * i_mmap_order=pre (before seed 001's patch): mmap_region takes the new
 * VMA's file's i_mmap_rwsem(W) before it stages the VMA's tree store
 * (vt_i_mmap_lock_early), steps 1-3 run inside that write section (step 2
 * without taking it again) and it ends after step 3.
 */
#include <errno.h>
#include <limits.h>

#include "mm/rollup.h"
#include "mm/file.h"
#include "mm/folio.h"
#include "mm/huge_memory.h"
#include "mm/mmap_lock.h"
#include "mm/rmap.h"
#include "mm/shmem.h"
#include "mm/vma.h"
#include "mm/vma_lock.h"
#include "mm/vma_txn.h"
#include "platform/platform.h"
#include "util/alloc.h"

static int vec_push(struct vma ***vec, size_t *nr, size_t *cap, struct vma *vma)
{
	struct vma **n = vml_grow_array(*vec, cap, *nr + 1, sizeof(**vec), 8);

	if (!n)
		return -ENOMEM;
	*vec = n;
	(*vec)[(*nr)++] = vma;
	return 0;
}

static void vec_drop(struct vma **vec, size_t *nr, struct vma *vma)
{
	for (size_t i = 0; i < *nr; i++) {
		if (vec[i] == vma) {
			vec[i] = vec[--*nr];
			return;
		}
	}
	VML_BUG_ON(1);
}

/* Remember a new boundary; a huge PMD across it is split at commit (vma_adjust_trans_huge). */
static int vt_edge(struct vma_txn *t, unsigned long addr)
{
	unsigned long *n;

	if (!(addr & ~PMD_MASK))
		return 0;
	n = vml_grow_array(t->edges, &t->cap_edges, t->nr_edges + 1, sizeof(*n), 8);
	if (!n)
		return -ENOMEM;
	t->edges = n;
	t->edges[t->nr_edges++] = addr;
	return 0;
}

void vma_txn_begin(struct vma_txn *t, struct mm *mm)
{
	mmap_assert_write_locked(mm);
	*t = (struct vma_txn){ .mm = mm, .map_count = load_relaxed(&mm->map_count) };
	rtree_txn_begin(&t->tx, &mm->mm_mt);
}

struct vma *vt_find(struct vma_txn *t, unsigned long addr)
{
	return rtree_txn_find(&t->tx, addr, NULL);
}

struct vma *vt_next(struct vma_txn *t, unsigned long addr)
{
	return rtree_txn_find_next(&t->tx, addr, NULL);
}

struct vma *vt_prev(struct vma_txn *t, unsigned long addr)
{
	return rtree_txn_find_prev(&t->tx, addr, NULL);
}

int vt_insert(struct vma_txn *t, struct vma *vma)
{
	int err;

	vml_assert(!vma->staged && !vma_is_attached(vma));
	err = vec_push(&t->created, &t->nr_created, &t->cap_created, vma);
	if (err)
		return err;
	err = rtree_txn_store(&t->tx, vma->vm_start, vma->vm_end, vma);
	if (err) {
		t->nr_created--;
		return err;
	}
	vma->staged = true;
	t->map_count++;
	return 0;
}

/* Record an attached VMA as replaced; write-lock it first (waits for its readers). */
static int vt_retire(struct vma_txn *t, struct vma *vma)
{
	vml_assert(vma_is_attached(vma));
	vma_start_write(vma);
	return vec_push(&t->retired, &t->nr_retired, &t->cap_retired, vma);
}

int vt_remove(struct vma_txn *t, struct vma *vma)
{
	int err = rtree_txn_store(&t->tx, vma->vm_start, vma->vm_end, NULL);

	if (err)
		return err;
	if (vma->staged) {
		vec_drop(t->created, &t->nr_created, vma);
		vma->staged = false;
		vma_free_unpublished(vma);
	} else {
		err = vt_retire(t, vma);
		if (err)
			return err;
	}
	t->map_count--;
	return 0;
}

struct vma *vt_modify(struct vma_txn *t, struct vma *vma)
{
	struct vma *copy;

	if (vma->staged)
		return vma;
	/* Write-lock before copying: a fault may still be setting anon_vma. */
	if (vt_retire(t, vma))
		return NULL;
	copy = vma_dup(vma);
	if (!copy)
		return NULL;
	if (vec_push(&t->created, &t->nr_created, &t->cap_created, copy)) {
		vma_free_unpublished(copy);
		return NULL;
	}
	if (rtree_txn_store(&t->tx, copy->vm_start, copy->vm_end, copy)) {
		t->nr_created--;
		vma_free_unpublished(copy);
		return NULL;
	}
	copy->staged = true;
	return copy;
}

int vt_set_range(struct vma_txn *t, struct vma *vma, unsigned long start, unsigned long end,
		 unsigned long pgoff)
{
	int err;

	vml_assert(vma->staged && start < end);
	err = rtree_txn_store(&t->tx, vma->vm_start, vma->vm_end, NULL);
	if (err)
		return err;
	if (vt_edge(t, start) || vt_edge(t, end))
		return -ENOMEM;
	vma->vm_start = start;
	vma->vm_end = end;
	vma->vm_pgoff = pgoff;
	return rtree_txn_store(&t->tx, start, end, vma);
}

int vt_split(struct vma_txn *t, struct vma *vma, unsigned long addr, bool check_limit,
	     struct vma **lo, struct vma **hi)
{
	struct vma *base, *tail;
	int err;

	vml_assert(vma->vm_start < addr && addr < vma->vm_end);
	if (check_limit && t->map_count >= t->mm->sys->cfg.max_map_count)
		return -ENOMEM;
	if (vt_edge(t, addr))
		return -ENOMEM;
	base = vt_modify(t, vma);
	if (!base)
		return -ENOMEM;
	tail = vma_dup(base);
	if (!tail)
		return -ENOMEM;
	tail->vm_start = addr;
	tail->vm_pgoff = base->vm_pgoff + ((addr - base->vm_start) >> PAGE_SHIFT);
	err = vec_push(&t->created, &t->nr_created, &t->cap_created, tail);
	if (err) {
		vma_free_unpublished(tail);
		return err;
	}
	/* One store: trims base's entry to [start, addr). */
	err = rtree_txn_store(&t->tx, addr, tail->vm_end, tail);
	if (err) {
		t->nr_created--;
		vma_free_unpublished(tail);
		return err;
	}
	tail->staged = true;
	base->vm_end = addr;
	t->map_count++;
	if (lo)
		*lo = base;
	if (hi)
		*hi = tail;
	return 0;
}

void vt_set_anon_vma(struct vma *staged, struct anon_vma *av)
{
	vml_assert(staged->staged);
	if (!av || load_relaxed(&staged->anon_vma))
		return;
	anon_vma_get(av);
	store_relaxed(&staged->anon_vma, av);
}

/* i_mmap updates for one file are batched, as unlink_file_vma_batch does. */
#define I_MMAP_BATCH 8

/* @held: a file whose i_mmap_rwsem(W) the caller holds already (pre order), or NULL. */
static void i_mmap_apply(struct vma **vmas, size_t nr, bool insert, struct vml_file *held)
{
	size_t i = 0;

	while (i < nr) {
		struct vml_file *file = vmas[i]->vm_file;
		size_t n = 0;

		if (!file) {
			i++;
			continue;
		}
		if (file != held)
			i_mmap_lock_write(file);
		while (i < nr && n < I_MMAP_BATCH && vmas[i]->vm_file == file) {
			const struct vml_kernel_costs *c = &vmas[i]->vm_mm->sys->cfg.costs;
			uint64_t ns = insert ? c->i_mmap_insert_ns : c->i_mmap_remove_ns;

			if (insert)
				vma_interval_tree_insert(vmas[i], file);
			else
				vma_interval_tree_remove(vmas[i], file);
			/* the kernel's time inside the write section (0: none charged) */
			if (ns)
				plat_charge_ns(ns, PLAT_KERNEL);
			i++;
			n++;
		}
		if (file != held)
			i_mmap_unlock_write(file);
	}
}

bool vt_i_mmap_lock_early(struct vma_txn *t, struct vma *vma)
{
	struct vml_file *file = vma->vm_file;

	vml_assert(file && !vma->staged && !t->i_mmap_held);
	for (size_t i = 0; i < t->nr_created; i++)
		if (t->created[i]->vm_file && t->created[i]->vm_file != file)
			return false;
	vma_start_write(vma);
	for (size_t i = 0; i < t->nr_created; i++)
		vma_start_write(t->created[i]);
	i_mmap_lock_write(file);
	t->i_mmap_held = file;
	return true;
}

void vma_txn_commit(struct vma_txn *t)
{
	struct mm *mm = t->mm;
	bool drain = false, locked = false;
	unsigned long locked_lo = ULONG_MAX, locked_hi = 0;	/* retired VM_LOCKED VMAs' span */

	mmap_assert_write_locked(mm);
	for (size_t i = 0; i < t->nr_created; i++) {
		struct vma *vma = t->created[i];

		vma_start_write(vma);
		vma_mark_attached(vma);
		vma->staged = false;
	}
	i_mmap_apply(t->created, t->nr_created, true, t->i_mmap_held);
	rtree_txn_commit(&t->tx);
	store_relaxed(&mm->map_count, t->map_count);
	if (t->i_mmap_held) {
		i_mmap_unlock_write(t->i_mmap_held);
		t->i_mmap_held = NULL;
	}
	i_mmap_apply(t->retired, t->nr_retired, false, NULL);
	for (size_t i = 0; i < t->nr_retired; i++) {
		struct vml_file *file = t->retired[i]->vm_file;

		if (file && shmem_zero_unmap_drains(file))
			drain = true;
		if (t->retired[i]->vm_flags & VM_LOCKED) {
			locked = true;
			locked_lo = VML_MIN(locked_lo, t->retired[i]->vm_start);
			locked_hi = VML_MAX(locked_hi, t->retired[i]->vm_end);
		}
		if (file && file->shmem && mm_rollup_incremental(mm))
			fetch_sub_relaxed(&mm->rollup_shmem_vmas, 1);
		vma_mark_detached(t->retired[i]);
		vma_free_rcu(t->retired[i]);
	}
	if (drain)
		lru_add_drain(mm->sys);
	/* Every VMA around an edge is write-locked still: no fault can race the split. */
	for (size_t i = 0; i < t->nr_edges; i++)
		split_huge_pmd_address(mm, t->edges[i]);
	/*
	 * Incremental rollup: Locked follows VM_LOCKED, which no entry shows;
	 * where it may have changed, count the new VMAs' tables again.
	 */
	if (unlikely(mm_rollup_incremental(mm))) {
		for (size_t i = 0; i < t->nr_created; i++) {
			struct vml_file *file = t->created[i]->vm_file;

			locked |= t->created[i]->vm_flags & VM_LOCKED;
			if (file && file->shmem)
				fetch_add_relaxed(&mm->rollup_shmem_vmas, 1);
		}
		for (size_t i = 0; locked && i < t->nr_created; i++)
			rollup_range_update(mm, t->created[i]->vm_start, t->created[i]->vm_end);
		/* where a locked VMA went and no new one came, its entries count unlocked now */
		rollup_range_update(mm, locked_lo, locked_hi);
	}
	if (VML_VALIDATE)
		vma_txn_validate(t);
	vml_free(t->created);
	vml_free(t->retired);
	vml_free(t->edges);
	t->created = t->retired = NULL;
	t->edges = NULL;
	t->nr_created = t->nr_retired = t->nr_edges = 0;
}

/*
 * What an unmap refused by a seal (vms_gather_munmap) leaves: the kernel
 * split the first VMA at @addr before it met the sealed one, and the
 * split stands. Context: mmap_lock(W), no transaction open.
 */
static void vma_split_stays(struct mm *mm, unsigned long addr)
{
	struct vma_txn t;
	struct vma *vma;

	vma_txn_begin(&t, mm);
	vma = vt_find(&t, addr);
	if (vma && vma->vm_start < addr && !vt_split(&t, vma, addr, false, NULL, NULL))
		vma_txn_commit(&t);
	else
		vma_txn_abort(&t);	/* out of memory: the model stays as it was */
}

void vma_txn_abort(struct vma_txn *t)
{
	unsigned long split = t->split_on_abort;

	t->split_on_abort = 0;
	if (t->i_mmap_held) {
		i_mmap_unlock_write(t->i_mmap_held);
		t->i_mmap_held = NULL;
	}
	rtree_txn_abort(&t->tx);
	for (size_t i = 0; i < t->nr_created; i++) {
		t->created[i]->staged = false;
		vma_free_unpublished(t->created[i]);
	}
	/* Retired VMAs stay attached; their write locks end with mmap_write_unlock(). */
	vml_free(t->created);
	vml_free(t->retired);
	vml_free(t->edges);
	t->edges = NULL;
	t->nr_edges = 0;
	t->created = t->retired = NULL;
	t->nr_created = t->nr_retired = 0;
	if (split)
		vma_split_stays(t->mm, split);
}

void vma_txn_validate(struct vma_txn *t)
{
	struct mm *mm = t->mm;
	struct rtree_cursor cur;
	struct rtree_range r;
	struct vma *vma;
	unsigned long n = 0, last_end = 0;

	VML_BUG_ON(rtree_validate(&mm->mm_mt) != 0);
	rtree_cursor_set(&cur, &mm->mm_mt, 0);
	while ((vma = rtree_cursor_next(&cur, &r))) {
		VML_BUG_ON(r.start != vma->vm_start || r.end != vma->vm_end);
		VML_BUG_ON(vma->vm_start < last_end);
		VML_BUG_ON(!vma_is_attached(vma));
		last_end = vma->vm_end;
		n++;
	}
	VML_BUG_ON(n != load_relaxed(&mm->map_count));
}
