// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vma.c - VMA objects, anonymous VMA names, and the writer-side lookups.
 *
 * A VMA is allocated detached, filled in, attached by the transaction that
 * publishes it (vma_txn.c), and freed an RCU grace period after it was
 * detached, so a reader that found it under RCU can still look at it and
 * fail to lock it. A VMA never attached is freed at once.
 */
#include <string.h>

#include "mm/file.h"
#include "mm/mmap_lock.h"
#include "mm/rmap.h"
#include "mm/vma.h"
#include "mm/vma_lock.h"
#include "util/alloc.h"

struct vma *vma_alloc(struct mm *mm)
{
	struct vma *vma = vml_zalloc(sizeof(*vma));

	if (!vma)
		return NULL;
	vma->vm_mm = mm;
	vma_lock_init(vma);
	return vma;
}

struct vma *vma_dup(const struct vma *src)
{
	struct vma *vma = vma_alloc(src->vm_mm);
	struct anon_vma *av;

	if (!vma)
		return NULL;
	vma->vm_start = src->vm_start;
	vma->vm_end = src->vm_end;
	vma->vm_pgoff = src->vm_pgoff;
	vma->vm_flags = src->vm_flags;
	vma->fork_child = src->fork_child;
	vma->vm_file = src->vm_file;
	if (vma->vm_file)
		vml_file_get(vma->vm_file);
	vma->anon_name = src->anon_name;
	if (vma->anon_name)
		anon_vma_name_get(vma->anon_name);
	av = vma_anon_vma(src);
	if (av)
		anon_vma_get(av);
	store_relaxed(&vma->anon_vma, av);
	return vma;
}

/* Drop the references a VMA holds; the struct itself is freed by the caller. */
static void vma_put_refs(struct vma *vma)
{
	struct anon_vma *av = load_relaxed(&vma->anon_vma);

	if (vma->vm_file)
		vml_file_put(vma->vm_file);
	if (vma->anon_name)
		anon_vma_name_put(vma->anon_name);
	if (av)
		anon_vma_put(av);
}

void vma_free_unpublished(struct vma *vma)
{
	if (!vma)
		return;
	vml_assert(!vma_is_attached(vma));
	vma_put_refs(vma);
	vml_free(vma);
}

static void vma_free_cb(struct vml_rcu_head *head)
{
	struct vma *vma = container_of(head, struct vma, rcu);

	vma_put_refs(vma);
	vml_free(vma);
}

void vma_free_rcu(struct vma *vma)
{
	vml_assert(!vma_is_attached(vma));
	vml_call_rcu(&vma->rcu, vma_free_cb);
}

struct anon_vma_name *anon_vma_name_alloc(const char *name)
{
	size_t len = strlen(name) + 1;
	struct anon_vma_name *n = vml_malloc(sizeof(*n) + len);

	if (!n)
		return NULL;
	store_relaxed(&n->refcount, 1);
	memcpy(n->name, name, len);
	return n;
}

void anon_vma_name_get(struct anon_vma_name *n)
{
	fetch_add_relaxed(&n->refcount, 1);
}

void anon_vma_name_put(struct anon_vma_name *n)
{
	/* acq_rel: pairs with the other puts' decrements: the last sees their accesses */
	if (n && fetch_sub_acq_rel(&n->refcount, 1) == 1)
		vml_free(n);
}

bool anon_vma_name_eq(const struct anon_vma_name *a, const struct anon_vma_name *b)
{
	if (a == b)
		return true;
	return a && b && strcmp(a->name, b->name) == 0;
}

struct vma *vma_lookup(struct mm *mm, unsigned long addr)
{
	mmap_assert_locked(mm);
	return rtree_find(&mm->mm_mt, addr, NULL);
}

struct vma *find_vma(struct mm *mm, unsigned long addr)
{
	mmap_assert_locked(mm);
	return rtree_find_next(&mm->mm_mt, addr, NULL);
}

struct vma *find_vma_prev(struct mm *mm, unsigned long addr)
{
	mmap_assert_locked(mm);
	return rtree_find_prev(&mm->mm_mt, addr, NULL);
}

struct vma *find_vma_intersection(struct mm *mm, unsigned long start, unsigned long end)
{
	struct vma *vma = find_vma(mm, start);

	return (vma && vma->vm_start < end) ? vma : NULL;
}
