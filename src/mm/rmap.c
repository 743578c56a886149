// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rmap.c - anon_vma objects and giving a VMA one (mm/rmap.c
 * anon_vma_prepare, mm/memory.c vmf_anon_prepare); see rmap.h.
 */
#include <errno.h>

#include "mm/mmap_lock.h"
#include "mm/rmap.h"
#include "mm/vma.h"
#include "sync/spinlock.h"
#include "util/alloc.h"
#include "util/compiler.h"

struct anon_vma *anon_vma_alloc(void)
{
	struct anon_vma *av = vml_zalloc(sizeof(*av));

	if (av)
		store_relaxed(&av->refcount, 1);
	return av;
}

void anon_vma_get(struct anon_vma *av)
{
	fetch_add_relaxed(&av->refcount, 1);
}

void anon_vma_put(struct anon_vma *av)
{
	/* acq_rel: pairs with the other puts' decrements: the last sees their accesses */
	if (av && fetch_sub_acq_rel(&av->refcount, 1) == 1)
		vml_free(av);
}

/* Can @b reuse @old's anon_vma (reusable_anon_vma)? a and b are in address order. */
static struct anon_vma *reusable_anon_vma(struct vma *old, struct vma *a, struct vma *b)
{
	struct anon_vma *av;

	if (a->vm_end != b->vm_start || a->vm_file != b->vm_file ||
	    ((a->vm_flags ^ b->vm_flags) & ~(VM_ACCESS_FLAGS | VM_IGNORE_MERGE)) ||
	    b->vm_pgoff != a->vm_pgoff + ((b->vm_start - a->vm_start) >> PAGE_SHIFT))
		return NULL;
	av = vma_anon_vma(old);
	return (av && !old->fork_child) ? av : NULL;
}

/*
 * find_mergeable_anon_vma - share a neighbour's anon_vma when the two could
 * merge but for their protections, so that a later mprotect() can merge them.
 * Context: mmap_lock held.
 */
static struct anon_vma *find_mergeable_anon_vma(struct vma *vma)
{
	struct mm *mm = vma->vm_mm;
	struct vma *next = rtree_find(&mm->mm_mt, vma->vm_end, NULL);
	struct vma *prev = rtree_find_prev(&mm->mm_mt, vma->vm_start, NULL);
	struct anon_vma *av = NULL;

	if (next)
		av = reusable_anon_vma(next, vma, next);
	if (!av && prev)
		av = reusable_anon_vma(prev, prev, vma);
	return av;
}

int anon_vma_prepare(struct vma *vma)
{
	struct mm *mm = vma->vm_mm;
	struct anon_vma *av;

	mmap_assert_locked(mm);
	if (vma_anon_vma(vma))
		return 0;
	av = find_mergeable_anon_vma(vma);
	if (av) {
		anon_vma_get(av);
	} else {
		av = anon_vma_alloc();
		if (!av)
			return -ENOMEM;
	}
	spin_lock(&mm->page_table_lock);
	if (!load_relaxed(&vma->anon_vma)) {
		/* release: pairs with the acquire in vma_anon_vma() */
		store_release(&vma->anon_vma, av);
		av = NULL;
	}
	spin_unlock(&mm->page_table_lock);
	if (av)
		anon_vma_put(av);	/* lost a race; drop our reference */
	return 0;
}

vm_fault_t vmf_anon_prepare(struct vma *vma, unsigned int flags)
{
	struct mm *mm = vma->vm_mm;
	int err;

	if (vma_anon_vma(vma))
		return 0;
	if (flags & FAULT_FLAG_VMA_LOCK) {
		if (!mmap_read_trylock(mm))
			return VM_FAULT_RETRY;
	}
	err = anon_vma_prepare(vma);
	if (flags & FAULT_FLAG_VMA_LOCK)
		mmap_read_unlock(mm);
	return err ? VM_FAULT_OOM : 0;
}
