/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vma_txn.h - staged changes to an mm's VMAs, published all at once.
 *
 * Every system call that changes the layout runs as one transaction: it
 * looks VMAs up through the transaction, stages new VMAs (copies of the
 * ones it changes: VMAs are copy-on-write), and either commits - one
 * release store publishes the new tree, the replaced VMAs are detached and
 * freed after a grace period - or aborts, leaving the mm exactly as it was.
 * Only staging allocates, so -ENOMEM never half-applies a change.
 *
 * Context for everything here: mmap_lock held for write.
 */
#ifndef VML_MM_VMA_TXN_H
#define VML_MM_VMA_TXN_H

#include "mm/mm_types.h"

struct vma_txn {
	struct mm *mm;
	struct rtree_txn tx;
	struct vma **retired;		/* attached VMAs this transaction replaces or removes */
	size_t nr_retired, cap_retired;
	struct vma **created;		/* staged VMAs (vma->staged) */
	size_t nr_created, cap_created;
	unsigned long map_count;	/* working number of VMAs */
	unsigned long *edges;		/* new VMA boundaries: huge PMDs straddling them split at commit */
	size_t nr_edges, cap_edges;
	struct vml_file *i_mmap_held;	/* i_mmap_order=pre: this file's i_mmap_rwsem(W), taken
					 * before a new VMA's tree store, released by the
					 * commit after publishing (or by the abort) */
	unsigned long split_on_abort;	/* an unmap met a sealed VMA after splitting the
					 * first one here: the abort keeps that split, as
					 * vms_gather_munmap_vmas leaves it (0: none) */
};

void vma_txn_begin(struct vma_txn *t, struct mm *mm);
/* Publish. Cannot fail. */
void vma_txn_commit(struct vma_txn *t);
void vma_txn_abort(struct vma_txn *t);

/* Lookups that see the transaction's staged state. */
struct vma *vt_find(struct vma_txn *t, unsigned long addr);	/* covering addr */
struct vma *vt_next(struct vma_txn *t, unsigned long addr);	/* first with end > addr */
struct vma *vt_prev(struct vma_txn *t, unsigned long addr);	/* last with start < addr */

/* Stage a new VMA (vma_alloc()ed, fields set, detached). -ENOMEM: caller aborts. */
int vt_insert(struct vma_txn *t, struct vma *vma);
/* Remove a VMA from the tree (retire it, or free it if staged). */
int vt_remove(struct vma_txn *t, struct vma *vma);
/*
 * A changeable version of @vma: itself if staged, else a staged copy that
 * replaces it (the original is write-locked first, then retired).
 * Return: the staged VMA, or NULL on -ENOMEM.
 */
struct vma *vt_modify(struct vma_txn *t, struct vma *vma);
/* Move a staged VMA to [start, end) with @pgoff; the new range must be free but for itself. */
int vt_set_range(struct vma_txn *t, struct vma *vma, unsigned long start, unsigned long end,
		 unsigned long pgoff);

/*
 * Split @vma at @addr into two staged pieces.
 * @check_limit: fail with -ENOMEM if map_count >= max_map_count (split_vma)
 * rather than bypassing the limit (__split_vma).
 * Return: 0 and the pieces in *lo, *hi (either may be NULL), or -ENOMEM.
 */
int vt_split(struct vma_txn *t, struct vma *vma, unsigned long addr, bool check_limit,
	     struct vma **lo, struct vma **hi);

/*
 * vt_i_mmap_lock_early - i_mmap_order=pre (seed 001's "before"): take the
 * i_mmap_rwsem of @vma's file for write now, before the caller stages the
 * new @vma with vt_insert, so that the tree store, the map_count update and
 * the insertion into i_mmap all happen in one write section, as mmap_region
 * did before Linux 6.5. The commit releases it once the tree is published.
 * @vma and every VMA already staged are write-locked first (lock order:
 * VMA locks before i_mmap_rwsem). Not taken - the post order applies - when
 * a VMA of another file is staged already (a MAP_FIXED that splits another
 * file's mapping): the commit would have to lock that file's i_mmap inside
 * this one.
 * Context: mmap_lock(W); @vma new, not staged, with a file.
 * Return: true if taken.
 */
bool vt_i_mmap_lock_early(struct vma_txn *t, struct vma *vma);

/* Set a staged VMA's anon_vma (taking a reference), when it has none yet. */
void vt_set_anon_vma(struct vma *staged, struct anon_vma *av);

/*
 * The kernel's merge rules (mm/vma.c). A merge state describes a range
 * [start, end) with the properties it would have.
 */
struct vma_merge {
	struct vma_txn *t;
	unsigned long start, end, pgoff;
	unsigned long vm_flags;
	struct vml_file *file;
	struct anon_vma *anon_vma;	/* of the middle (existing) or copied-from VMA */
	struct anon_vma_name *anon_name;
	struct vma *prev, *middle, *next;
	struct vma *copied_from;	/* mremap's source */
	bool just_expand;
	int err;			/* -ENOMEM if a staging step failed */
};

/* Try to merge a new range with its neighbours. Return the merged staged VMA or NULL. */
struct vma *vma_merge_new_range(struct vma_merge *vmg);
/*
 * vma_modify - prepare [start, end) of vmg->middle for a change of
 * properties: merge it with a neighbour if the new properties allow, else
 * split it out. Return: the staged VMA covering exactly the range (merged
 * VMAs may cover more), or NULL with vmg->err set.
 */
struct vma *vma_modify(struct vma_merge *vmg);

/* Initialise a merge state from an existing VMA for a change of [start, end). */
void vmg_init_modify(struct vma_merge *vmg, struct vma_txn *t, struct vma *prev, struct vma *vma,
		     unsigned long start, unsigned long end);

/*
 * vma_modify_flags - [start, end) of @vma gets @newflags (vma_modify);
 * a neighbour it merges with keeps its sticky flags (VM_STICKY).
 * Return: the staged VMA now covering the range, or NULL with *@err set.
 */
struct vma *vma_modify_flags(struct vma_txn *t, struct vma *prev, struct vma *vma,
			     unsigned long start, unsigned long end, unsigned long newflags,
			     int *err);

/* Debug: the tree and every VMA agree (bounds, order, map_count). */
void vma_txn_validate(struct vma_txn *t);

#endif /* VML_MM_VMA_TXN_H */
