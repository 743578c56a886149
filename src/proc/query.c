// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * query.c - PROCMAP_QUERY (fs/proc/task_mmu.c do_procmap_query, 6.18): one
 * VMA by address, with the ioctl's matching rules, checks and errors.
 *
 * Under the VMA policy the VMA is found under RCU and read-locked
 * (lock_next_vma), falling back to mmap_lock for the rest of the call if its
 * reference count overflows; under the mmap policy mmap_lock(R) is held.
 * Every field is read under the lock, which is dropped before the results
 * are copied out. Successive queries are not consistent with each other.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mm/file.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/vma.h"
#include "mm/vma_lock.h"
#include "proc/internal.h"
#include "util/alloc.h"

#define QUERY_VALID_FLAGS (VML_PROCMAP_QUERY_VMA_READABLE | VML_PROCMAP_QUERY_VMA_WRITABLE |   \
			   VML_PROCMAP_QUERY_VMA_EXECUTABLE | VML_PROCMAP_QUERY_VMA_SHARED |     \
			   VML_PROCMAP_QUERY_COVERING_OR_NEXT_VMA |                              \
			   VML_PROCMAP_QUERY_FILE_BACKED_VMA)
#define QUERY_MIN_SIZE (offsetof(struct vml_procmap_query, query_addr) + sizeof(uint64_t))
#define PATH_MAX_LEN 4096

struct query_lock {
	struct mm *mm;
	enum vml_lock_policy lock;
	bool mmap_locked;
	struct vma *locked_vma;
};

static int query_vma_setup(struct query_lock *ql)
{
	ql->locked_vma = NULL;
	ql->mmap_locked = false;
	if (ql->lock == VML_LOCK_MMAP) {
		if (mmap_read_lock_killable(ql->mm, NULL))
			return -EINTR;
		ql->mmap_locked = true;
	}
	return 0;
}

static void query_vma_teardown(struct query_lock *ql)
{
	if (ql->mmap_locked)
		mmap_read_unlock(ql->mm);
	else if (ql->locked_vma)
		vma_end_read(ql->locked_vma);
	ql->locked_vma = NULL;
}

/* The first VMA ending after @addr, read-locked under policy VMA. Return: 0 (*@out may be NULL), -EINTR. */
static int query_vma_find_by_addr(struct query_lock *ql, unsigned long addr, struct vma **out)
{
	struct vma_iterator vmi;
	struct vma *vma;
	int err;

	if (ql->mmap_locked) {
		*out = find_vma(ql->mm, addr);
		return 0;
	}
	if (ql->locked_vma) {
		vma_end_read(ql->locked_vma);
		ql->locked_vma = NULL;
	}
	vml_rcu_read_lock();
	vma_iter_init(&vmi, ql->mm, addr);
	err = lock_next_vma(ql->mm, &vmi, addr, proc_gap_check(ql->lock), NULL, &vma);
	vml_rcu_read_unlock();
	if (err == -EAGAIN) {
		/* Reference overflow: mmap_lock for the rest of this call. */
		mmap_read_lock(ql->mm);
		ql->mmap_locked = true;
		*out = find_vma(ql->mm, addr);
		return 0;
	}
	if (err)
		return err;
	ql->locked_vma = vma;
	*out = vma;
	return 0;
}

/* The VMA the query asks for. Return: 0 with it in *@out; -ENOENT (none), -EINTR. */
static int query_matching_vma(struct query_lock *ql, unsigned long addr, uint64_t flags,
			      struct vma **out)
{
	struct vma *vma;
	int err;

	/* Ends: each skip moves addr past a VMA. */
	for (;;) {
		err = query_vma_find_by_addr(ql, addr, &vma);
		if (err)
			return err;
		if (!vma)
			return -ENOENT;
		if ((flags & VML_PROCMAP_QUERY_FILE_BACKED_VMA) && !vma->vm_file)
			goto skip;
		if ((flags & VML_PROCMAP_QUERY_VMA_READABLE) && !(vma->vm_flags & VM_READ))
			goto skip;
		if ((flags & VML_PROCMAP_QUERY_VMA_WRITABLE) && !(vma->vm_flags & VM_WRITE))
			goto skip;
		if ((flags & VML_PROCMAP_QUERY_VMA_EXECUTABLE) && !(vma->vm_flags & VM_EXEC))
			goto skip;
		if ((flags & VML_PROCMAP_QUERY_VMA_SHARED) && !(vma->vm_flags & VM_MAYSHARE))
			goto skip;
		if ((flags & VML_PROCMAP_QUERY_COVERING_OR_NEXT_VMA) || addr >= vma->vm_start) {
			*out = vma;
			return 0;
		}
skip:
		if (!(flags & VML_PROCMAP_QUERY_COVERING_OR_NEXT_VMA))
			return -ENOENT;
		addr = vma->vm_end;
	}
}

/* The VMA's name as get_vma_name + d_path produce it, unescaped. Return its length or 0. */
static size_t query_vma_name(struct vma *vma, char *buf, size_t size)
{
	struct vml_file *file = vma->vm_file;
	int n;

	if (file && vma->anon_name)
		n = snprintf(buf, size, "[anon_shmem:%s]", vma->anon_name->name);
	else if (file)
		n = snprintf(buf, size, "%s%s", file->path, file->deleted ? " (deleted)" : "");
	else if (vma->anon_name)
		n = snprintf(buf, size, "[anon:%s]", vma->anon_name->name);
	else
		return 0;
	return (size_t)n;
}

int vml_procmap_query(struct vml_mm *umm, enum vml_lock_policy lock, struct vml_procmap_query *uq)
{
	struct query_lock ql = { .mm = to_mm(umm), .lock = lock };
	struct vml_procmap_query q;
	uint64_t usize;
	char *name = NULL;
	uint32_t name_sz = 0;
	struct vma *vma;
	int err = 0;

	if (!umm || !uq || (unsigned int)lock > VML_LOCK_VMA_RECHECK)
		return -EINVAL;
	usize = uq->size;
	if (usize > PATH_MAX_LEN)
		return -E2BIG;
	if (usize < QUERY_MIN_SIZE)
		return -EINVAL;
	/* copy_struct_from_user: a longer struct must have a zero tail. */
	memset(&q, 0, sizeof(q));
	memcpy(&q, uq, usize < sizeof(q) ? usize : sizeof(q));
	for (uint64_t i = sizeof(q); i < usize; i++)
		if (((const char *)uq)[i])
			return -E2BIG;
	if (q.query_flags & ~(uint64_t)QUERY_VALID_FLAGS)
		return -EINVAL;
	if (!!q.vma_name_size != !!q.vma_name_addr || !!q.build_id_size != !!q.build_id_addr)
		return -EINVAL;
	if (!mmget_not_zero(ql.mm))
		return -ESRCH;
	err = query_vma_setup(&ql);
	if (err) {
		mmput(ql.mm);
		return err;
	}
	err = query_matching_vma(&ql, q.query_addr, q.query_flags, &vma);
	if (err)
		goto out;
	q.vma_start = vma->vm_start;
	q.vma_end = vma->vm_end;
	q.vma_flags = ((vma->vm_flags & VM_READ) ? VML_PROCMAP_QUERY_VMA_READABLE : 0) |
		      ((vma->vm_flags & VM_WRITE) ? VML_PROCMAP_QUERY_VMA_WRITABLE : 0) |
		      ((vma->vm_flags & VM_EXEC) ? VML_PROCMAP_QUERY_VMA_EXECUTABLE : 0) |
		      ((vma->vm_flags & VM_MAYSHARE) ? VML_PROCMAP_QUERY_VMA_SHARED : 0);
	q.vma_page_size = PAGE_SIZE;
	if (vma->vm_file) {
		q.vma_offset = (uint64_t)vma->vm_pgoff << PAGE_SHIFT;
		q.inode = vma->vm_file->inode;
		q.dev_major = vma->vm_file->dev_major;
		q.dev_minor = vma->vm_file->dev_minor;
	} else {
		q.vma_offset = q.inode = 0;
		q.dev_major = q.dev_minor = 0;
	}
	if (q.build_id_size)
		q.build_id_size = 0;	/* the model's files carry no ELF build ID */
	if (q.vma_name_size) {
		size_t bufsz = q.vma_name_size < PATH_MAX_LEN ? q.vma_name_size : PATH_MAX_LEN;
		size_t len;

		name = vml_malloc(PATH_MAX_LEN + 128);
		if (!name) {
			err = -ENOMEM;
			goto out;
		}
		len = query_vma_name(vma, name, PATH_MAX_LEN + 128);
		if (len) {
			name_sz = (uint32_t)(len + 1);
			if (name_sz > bufsz) {
				err = -ENAMETOOLONG;
				goto out;
			}
		}
		q.vma_name_size = name_sz;
	}
out:
	query_vma_teardown(&ql);
	mmput(ql.mm);
	if (!err) {
		if (q.vma_name_size)
			memcpy((void *)(uintptr_t)q.vma_name_addr, name, q.vma_name_size);
		memcpy(uq, &q, usize < sizeof(q) ? usize : sizeof(q));
	}
	vml_free(name);
	return err;
}
