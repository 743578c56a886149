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
 *                      tables drop RCU around the walk, keeping the VMA
 *                      read-locked; a failed VMA lock falls back to
 *                      mmap_lock for one VMA (lock_next_vma), an overflow
 *                      to mmap_lock for the rest of the call;
 *   lock policy MMAP - mmap_lock(R) for the whole call.
 *
 * The iterator. priv->iter is mm's VMA iterator (mm/vma.h). Its position is
 * always the end of the VMA last returned (or where the read() started):
 * proc_maps_start() sets it, lock_next_vma() and vma_next() move it, and
 * whoever here drops RCU or mmap_lock while keeping it invalidates it
 * (proc_walk_begin, the fallback to mmap_lock, proc_maps_relock), so the
 * next step walks the tree of the section it runs in.
 */
#ifndef VML_PROC_INTERNAL_H
#define VML_PROC_INTERNAL_H

#include "platform/platform.h"
#include "mm/debug.h"
#include "mm/vma.h"
#include "mm/vma_lock.h"
#include "proc/seq.h"
#include "util/compiler.h"
#include "util/debug.h"
#include "vmalock/proc.h"

/* The gap check of lock_next_vma() a per-VMA-lock policy asks for. */
static inline enum gap_check proc_gap_check(enum vml_lock_policy lock)
{
	return lock == VML_LOCK_VMA_STRICT ? GAP_CHECK_STRICT :
	       lock == VML_LOCK_VMA_RECHECK ? GAP_CHECK_RECHECK : GAP_CHECK_6_18;
}

#define SENTINEL_VMA_END  (-1)
#define SENTINEL_VMA_GATE (-2)

struct proc_maps_private {
	struct mm *mm;			/* pinned with mmgrab while the reader is open */
	enum vml_lock_policy lock;
	struct vma_iterator iter;	/* valid only inside one read(); see above */
	int64_t last_pos;		/* position before the last VMA was selected */
	bool mm_held;			/* mmget taken by start(), dropped by stop() */
	bool mmap_locked;		/* this read() holds mmap_lock(R) */
	struct vma *locked_vma;		/* the VMA this read() holds a read lock on */
	unsigned long walk_resume;	/* VML_BROKEN_SKIP_RESET: where the iterator
					 * goes after a page walk (0: unbroken) */
	const struct vml_cancel *cancel;
	unsigned int flags;		/* VML_READER_* */
	struct numa_maps *numa;		/* numa_maps: the per-VMA scratch counters */
	uint64_t page_ns;		/* extra CPU time per page a walk covers: a
					 * calibration (vml_reader_set_page_cost) */
};

/*
 * Spend the calibration's per-page charge for a walk that met @entries
 * anonymous entries (present anonymous PTEs and swap PTEs; a huge PMD
 * counts one). That is what the calibration measures (populated private
 * anonymous memory), and where the kernel spends its per-page time: an
 * empty PTE costs it a load, an empty table nothing, and a page-cache page
 * of a library 13-27 ns against 100-260 for an anonymous one (smaps on
 * Linux 6.18 here), about what the model's own walk costs.
 */
static inline void proc_walk_charge(const struct proc_maps_private *priv, unsigned long entries)
{
	if (unlikely(priv->page_ns) && entries)
		plat_charge_ns(priv->page_ns * entries, PLAT_KERNEL);
}

/*
 * One pass over the VMAs in address order (task_mmu.c m_start/m_next/m_stop),
 * shared by every VMA-walking view and by smaps_rollup.
 *
 * proc_maps_start - take what one read() holds - mmget, then mmap_lock(R)
 * (policy MMAP) or RCU (policy VMA) - and return the first VMA from *@ppos
 * (an address, or a sentinel). A positive *@ppos restarts from last_pos,
 * before the record a previous read() could not fit (docs/kernel.md §2).
 * Return: 0 with the VMA, or NULL, in *@vma; -ESRCH (the address space is
 * gone) or -EINTR (cancelled while waiting), with nothing held.
 *
 * proc_maps_next - the next VMA, read-locked under policy VMA: 0 with it in
 * *@vma (*@ppos = its end, last_pos = the old *@ppos), or NULL at the end
 * (*@ppos = SENTINEL_VMA_GATE, then SENTINEL_VMA_END); -EINTR or -EAGAIN.
 *
 * proc_maps_stop - release everything start() took. Safe to call when
 * start() failed or after a failed proc_maps_relock().
 *
 * proc_maps_relock - drop what the read() holds and take it again
 * (@nosteal: re-take mmap_lock without stealing it from a queued writer);
 * the next proc_maps_next() goes on from *@ppos. On failure (-EINTR)
 * nothing is held any more.
 */
int proc_maps_start(struct proc_maps_private *priv, int64_t *ppos, struct vma **vma);
int proc_maps_next(struct proc_maps_private *priv, int64_t *ppos, struct vma **vma);
void proc_maps_stop(struct proc_maps_private *priv);
int proc_maps_relock(struct proc_maps_private *priv, bool nosteal);

/* The seq_file operations on top of them; a view adds its show(). */
int proc_maps_seq_start(struct seq_file *m, int64_t *ppos, void **v);
int proc_maps_seq_next(struct seq_file *m, void *v, int64_t *ppos, void **next);
void proc_maps_seq_stop(struct seq_file *m, void *v);

/*
 * proc_walk_begin/end - bracket a page-table walk of @vma. Under policy VMA
 * (unless the read fell back to mmap_lock) RCU is dropped for the walk while
 * @vma stays read-locked, then re-taken; the iterator, still at @vma's end,
 * is invalidated meanwhile.
 * Context: @vma is priv->locked_vma, or mmap_lock(R) is held. proc_walk_end
 * calls the test hook vml_proc_walk_hook first (mm/debug.h).
 */
void proc_walk_begin(struct proc_maps_private *priv, struct vma *vma);
void proc_walk_end(struct proc_maps_private *priv, struct vma *vma);

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
