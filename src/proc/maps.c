// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * maps.c - /proc/PID/maps and the VMA iteration every VMA-walking view
 * shares (fs/proc/task_mmu.c m_start/m_next/m_stop, 6.17+).
 *
 * The position is an address: after a VMA is selected it becomes the VMA's
 * end, and last_pos remembers where the selection started, so that a
 * record seq_read() dropped for lack of room is looked up again next time.
 */
#include <errno.h>

#include "mm/file.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/vma.h"
#include "mm/vma_lock.h"
#include "proc/internal.h"
#include "util/compiler.h"
#include "util/debug.h"

/*
 * Take what one read() holds: mmap_lock(R) (policy MMAP; @nosteal: without
 * stealing it from a queued writer) or RCU (policy VMA).
 * Return: 0 or -EINTR (the reader's cancel token fired while waiting).
 */
static int lock_vma_range(struct proc_maps_private *priv, bool nosteal)
{
	int err;

	if (priv->lock == VML_LOCK_MMAP) {
		if (nosteal)
			err = mmap_read_lock_killable_nosteal(priv->mm, priv->cancel);
		else
			err = mmap_read_lock_killable(priv->mm, priv->cancel);
		if (err)
			return -EINTR;
		priv->mmap_locked = true;
	} else {
		vml_rcu_read_lock();
		priv->locked_vma = NULL;
		priv->mmap_locked = false;
	}
	return 0;
}

static void unlock_vma(struct proc_maps_private *priv)
{
	if (priv->locked_vma) {
		vma_end_read(priv->locked_vma);
		priv->locked_vma = NULL;
	}
}

static void unlock_vma_range(struct proc_maps_private *priv)
{
	if (priv->mmap_locked) {
		mmap_read_unlock(priv->mm);
		priv->mmap_locked = false;
	} else {
		unlock_vma(priv);
		vml_rcu_read_unlock();
	}
}

static int get_next_vma(struct proc_maps_private *priv, int64_t last_pos, struct vma **vma)
{
	int err;

	if (priv->mmap_locked) {
		*vma = vma_next(&priv->iter);
		return 0;
	}
	unlock_vma(priv);
	vml_proc_next_hook_call((unsigned long)last_pos);
	err = lock_next_vma(priv->mm, &priv->iter, (unsigned long)last_pos,
			    proc_gap_check(priv->lock), priv->cancel, vma);
	if (!err)
		priv->locked_vma = *vma;
	return err;
}

/*
 * A VMA's reference count overflowed: hold mmap_lock for the rest of this
 * read(). lock_next_vma() left the iterator at the position it failed from.
 */
static bool fallback_to_mmap_lock(struct proc_maps_private *priv)
{
	if (priv->mmap_locked)
		return false;
	vml_rcu_read_unlock();
	vma_iter_invalidate(&priv->iter);
	mmap_read_lock(priv->mm);
	stat_inc(&priv->mm->stats.proc_mmap_fallbacks);
	priv->mmap_locked = true;
	return true;
}

/*
 * proc_get_vma - the next VMA from *@ppos, read-locked under policy VMA.
 * Context: inside lock_vma_range(). Return: 0 with the VMA in *@out
 * (*@ppos = its end, last_pos = the old *@ppos) or NULL at the end
 * (*@ppos = SENTINEL_VMA_GATE); -EINTR or -EAGAIN.
 */
static int proc_get_vma(struct proc_maps_private *priv, int64_t *ppos, struct vma **out)
{
	struct vma *vma;
	int err;

	/* Ends: the fallback happens at most once (then mmap_locked is set). */
	for (;;) {
		err = get_next_vma(priv, *ppos, &vma);
		if (!err)
			break;
		if (err == -EAGAIN && fallback_to_mmap_lock(priv))
			continue;
		return err;
	}
	priv->last_pos = *ppos;
	if (vma) {
		*ppos = (int64_t)vma->vm_end;
	} else {
		*ppos = SENTINEL_VMA_GATE;	/* the model has no gate VMA */
	}
	*out = vma;
	return 0;
}

int proc_maps_start(struct proc_maps_private *priv, int64_t *ppos, struct vma **vma)
{
	int64_t last_addr = *ppos;

	if (last_addr == SENTINEL_VMA_END) {
		*vma = NULL;
		return 0;
	}
	if (!mmget_not_zero(priv->mm))
		return -ESRCH;
	priv->mm_held = true;
	if (lock_vma_range(priv, false)) {
		mmput(priv->mm);
		priv->mm_held = false;
		return -EINTR;
	}
	/*
	 * Restart from before the VMA a previous read() could not fit (not with
	 * VML_BROKEN_SEQ_RESUME, which loses it: the tearing tests' proof).
	 */
	if (last_addr > 0 && !vml_broken(VML_BROKEN_SEQ_RESUME))
		*ppos = last_addr = priv->last_pos;
	vma_iter_init(&priv->iter, priv->mm, last_addr < 0 ? TASK_SIZE : (unsigned long)last_addr);
	if (last_addr == SENTINEL_VMA_GATE) {
		*vma = NULL;
		return 0;
	}
	return proc_get_vma(priv, ppos, vma);
}

int proc_maps_next(struct proc_maps_private *priv, int64_t *ppos, struct vma **vma)
{
	if (*ppos == SENTINEL_VMA_GATE) {
		*ppos = SENTINEL_VMA_END;
		*vma = NULL;
		return 0;
	}
	return proc_get_vma(priv, ppos, vma);
}

void proc_maps_stop(struct proc_maps_private *priv)
{
	if (!priv->mm_held)
		return;
	unlock_vma_range(priv);
	mmput(priv->mm);
	priv->mm_held = false;
}

int proc_maps_relock(struct proc_maps_private *priv, bool nosteal)
{
	unlock_vma_range(priv);
	vma_iter_invalidate(&priv->iter);
	if (lock_vma_range(priv, nosteal)) {
		mmput(priv->mm);
		priv->mm_held = false;
		return -EINTR;
	}
	return 0;
}

int proc_maps_seq_start(struct seq_file *m, int64_t *ppos, void **v)
{
	struct vma *vma;
	int err = proc_maps_start(m->private, ppos, &vma);

	if (err == -ESRCH) {
		*v = NULL;	/* the address space is gone: end of file */
		return 0;
	}
	if (!err)
		*v = vma;
	return err;
}

int proc_maps_seq_next(struct seq_file *m, void *v, int64_t *ppos, void **next)
{
	struct vma *vma;
	int err;

	(void)v;
	err = proc_maps_next(m->private, ppos, &vma);
	if (!err)
		*next = vma;
	return err;
}

void proc_maps_seq_stop(struct seq_file *m, void *v)
{
	(void)v;
	proc_maps_stop(m->private);
}

/*
 * The per-VMA-lock readers that walk page tables (smaps, numa_maps,
 * smaps_rollup) cannot do so under RCU: the walk takes page-table locks and
 * may sleep. The VMA read lock is independent of RCU and keeps the VMA and
 * its page tables stable, so RCU is left for the walk and re-taken after
 * it; the iterator's path belongs to the RCU section it was taken in, so it
 * is invalidated, and the next step walks down to the walked VMA's end
 * again in the new section (docs/kernel.md §2).
 *
 * With vml_broken(VML_BROKEN_SKIP_RESET) the reader deliberately continues
 * from the snapshot it walked away from instead: before leaving RCU it notes
 * where that snapshot's next VMA starts, and afterwards resumes there. That
 * is what a stale iterator does (it still points into the old tree) minus
 * the use-after-free: a VMA mapped into the gap after the walked one while
 * it was being walked is missed, even though it exists when the reader
 * moves on (lock_next_vma's gap check only covers changes made during its
 * own call). tests/unit/test-smaps-lock.c shows the difference.
 */
void proc_walk_begin(struct proc_maps_private *priv, struct vma *vma)
{
	priv->walk_resume = 0;
	if (priv->mmap_locked)
		return;
	vml_assert(priv->locked_vma == vma);
	if (vml_broken(VML_BROKEN_SKIP_RESET)) {
		struct vma_iterator peek = priv->iter;
		struct vma *next = vma_next(&peek);

		priv->walk_resume = next ? next->vm_start : TASK_SIZE;
	}
	vml_rcu_read_unlock();
	vma_iter_invalidate(&priv->iter);
}

void proc_walk_end(struct proc_maps_private *priv, struct vma *vma)
{
	vml_proc_walk_hook_call(vma);
	if (priv->mmap_locked)
		return;
	vml_rcu_read_lock();
	if (priv->walk_resume)
		vma_iter_set(&priv->iter, priv->walk_resume);	/* broken: the old snapshot's next */
}

void show_vma_header_prefix(struct seq_file *m, unsigned long start, unsigned long end,
			    unsigned long flags, unsigned long long pgoff, unsigned int maj,
			    unsigned int min, unsigned long ino)
{
	/* 25 + sizeof(void *) * 6 - 1: the name column of a 64-bit maps line */
	seq_setwidth(m, 25 + sizeof(void *) * 6 - 1);
	seq_put_hex_ll(m, NULL, start, 8);
	seq_put_hex_ll(m, "-", end, 8);
	seq_putc(m, ' ');
	seq_putc(m, (flags & VM_READ) ? 'r' : '-');
	seq_putc(m, (flags & VM_WRITE) ? 'w' : '-');
	seq_putc(m, (flags & VM_EXEC) ? 'x' : '-');
	seq_putc(m, (flags & VM_MAYSHARE) ? 's' : 'p');
	seq_put_hex_ll(m, " ", pgoff, 8);
	seq_put_hex_ll(m, " ", maj, 2);
	seq_put_hex_ll(m, ":", min, 2);
	seq_put_decimal_ull(m, " ", ino);
	seq_putc(m, ' ');
}

void show_map_vma(struct seq_file *m, struct vma *vma)
{
	struct vml_file *file = vma->vm_file;
	unsigned long long pgoff = 0;
	unsigned int maj = 0, min = 0;
	unsigned long ino = 0;

	if (file) {
		maj = file->dev_major;
		min = file->dev_minor;
		ino = (unsigned long)file->inode;
		pgoff = (unsigned long long)vma->vm_pgoff << PAGE_SHIFT;
	}
	show_vma_header_prefix(m, vma->vm_start, vma->vm_end, vma->vm_flags, pgoff, maj, min, ino);

	/* get_vma_name: a file path, else an anonymous name; no heap/stack in the model. */
	if (file && vma->anon_name) {
		seq_pad(m, ' ');
		seq_printf(m, "[anon_shmem:%s]", vma->anon_name->name);
	} else if (file) {
		seq_pad(m, ' ');
		seq_escape(m, file->path, "\n");
		if (file->deleted)
			seq_puts(m, " (deleted)");
	} else if (vma->anon_name) {
		seq_pad(m, ' ');
		seq_printf(m, "[anon:%s]", vma->anon_name->name);
	}
	seq_putc(m, '\n');
}

static int show_map(struct seq_file *m, void *v)
{
	show_map_vma(m, v);
	return 0;
}

const struct seq_operations proc_pid_maps_op = {
	.start = proc_maps_seq_start,
	.next = proc_maps_seq_next,
	.stop = proc_maps_seq_stop,
	.show = show_map,
};
