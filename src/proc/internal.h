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
	unsigned long walk_resume;	/* where the cursor goes after a page walk */
	const struct vml_cancel *cancel;
	unsigned int flags;		/* VML_READER_* */
	struct numa_maps *numa;		/* numa_maps: the per-VMA scratch counters */
};

/* The shared seq_operations pieces of the VMA-walking views. */
void *proc_maps_start(struct seq_file *m, int64_t *ppos);
void *proc_maps_next(struct seq_file *m, void *v, int64_t *ppos);
void proc_maps_stop(struct seq_file *m, void *v);

/*
 * lock_vma_range - take what one read() holds: mmap_lock(R) (policy MMAP;
 * @nosteal: without stealing it from a queued writer) or RCU (policy VMA).
 * Return: 0 or -EINTR (the reader's cancel token fired while waiting).
 */
int lock_vma_range(struct proc_maps_private *priv, bool nosteal);
void unlock_vma_range(struct proc_maps_private *priv);
/*
 * proc_get_vma - the next VMA from *@ppos, read-locked under policy VMA.
 * Context: inside lock_vma_range(). Return: the VMA (*@ppos = its end,
 * last_pos = the old *@ppos), NULL at the end (*@ppos = SENTINEL_VMA_GATE),
 * or SEQ_ERR(-EINTR / -EAGAIN).
 */
void *proc_get_vma(struct seq_file *m, int64_t *ppos);

/*
 * proc_walk_begin/end - bracket a page-table walk of @vma. Under policy VMA
 * (unless the read fell back to mmap_lock) RCU is dropped for the walk while
 * @vma stays read-locked, then re-taken and the cursor set to @vma's end.
 * Context: @vma is priv->locked_vma, or mmap_lock(R) is held.
 */
void proc_walk_begin(struct proc_maps_private *priv, struct vma *vma);
void proc_walk_end(struct proc_maps_private *priv, struct vma *vma);

/*
 * vml_proc_walk_hook - a test hook: when set, called after each VMA's page
 * walk, still inside it (under policy VMA: RCU dropped, only @vma
 * read-locked; under policy MMAP or after a fallback: mmap_lock(R) held).
 * tests/unit/test-smaps-lock.c parks a reader here to show what a writer
 * can do meanwhile. NULL (the default) costs one load per VMA.
 */
typedef void (*vml_proc_walk_fn)(struct vma *vma);
extern _Atomic(vml_proc_walk_fn) vml_proc_walk_hook;

/* The maps line prefix and name of one VMA (show_map_vma). */
void show_map_vma(struct seq_file *m, struct vma *vma);
/* The address-range/perms/offset/dev/inode prefix with the 72-column width set. */
void show_vma_header_prefix(struct seq_file *m, unsigned long start, unsigned long end,
			    unsigned long flags, unsigned long long pgoff, unsigned int maj,
			    unsigned int min, unsigned long ino);

extern const struct seq_operations proc_pid_maps_op;
extern const struct seq_operations proc_pid_smaps_op;
extern const struct seq_operations proc_pid_smaps_rollup_op;
extern const struct seq_operations proc_pid_numa_maps_op;
/* The size of numa_maps' per-reader scratch (priv->numa). */
size_t proc_numa_maps_size(void);

#endif /* VML_PROC_INTERNAL_H */
