/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * internal.h - the state of one open /proc view (fs/proc/internal.h
 * proc_maps_private + proc_maps_locking_ctx).
 *
 * A reader pins the mm's struct (mmgrab) from open to close, and its
 * address space (mmget) only inside one read(). Nothing is locked between
 * read() calls. Within one read():
 *   lock policy VMA  - RCU for the whole call plus exactly one VMA read
 *                      lock at a time (locked_vma); views that walk page
 *                      tables drop RCU around the walk and reset the cursor
 *                      after re-taking it; a failed VMA lock falls back to
 *                      mmap_lock for one VMA (lock_next_vma), an overflow
 *                      to mmap_lock for the rest of the call;
 *   lock policy MMAP - mmap_lock(R) for the whole call.
 */
#ifndef VML_PROC_INTERNAL_H
#define VML_PROC_INTERNAL_H

#include "mm/mm_types.h"
#include "proc/seq.h"
#include "vmalock/proc.h"

#define SENTINEL_VMA_END  (-1)
#define SENTINEL_VMA_GATE (-2)

struct proc_maps_private {
	struct mm *mm;			/* pinned with mmgrab while the reader is open */
	enum vml_lock_policy lock;
	struct rtree_cursor iter;	/* valid only inside one read() */
	int64_t last_pos;		/* position before the last VMA was selected */
	bool mm_held;			/* mmget taken by start(), dropped by stop() */
	bool mmap_locked;		/* this read() holds mmap_lock(R) */
	struct vma *locked_vma;		/* the VMA this read() holds a read lock on */
	const struct vml_cancel *cancel;
};

/* The shared seq_operations pieces of the VMA-walking views. */
void *proc_maps_start(struct seq_file *m, int64_t *ppos);
void *proc_maps_next(struct seq_file *m, void *v, int64_t *ppos);
void proc_maps_stop(struct seq_file *m, void *v);

/* The maps line prefix and name of one VMA (show_map_vma). */
void show_map_vma(struct seq_file *m, struct vma *vma);
/* The address-range/perms/offset/dev/inode prefix with the 72-column width set. */
void show_vma_header_prefix(struct seq_file *m, unsigned long start, unsigned long end,
			    unsigned long flags, unsigned long long pgoff, unsigned int maj,
			    unsigned int min, unsigned long ino);

extern const struct seq_operations proc_pid_maps_op;

#endif /* VML_PROC_INTERNAL_H */
