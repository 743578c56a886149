// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * file.c - files and their page cache.
 *
 * A file lives while its creator or any VMA holds a reference. Its page
 * cache holds one reference on each cached folio; the folios go with the
 * file. (The model has no reclaim of clean file pages except through
 * MADV_PAGEOUT.)
 */
#include <errno.h>
#include <string.h>

#include "mm/file.h"
#include "mm/folio.h"
#include "sync/spinlock.h"
#include "util/alloc.h"
#include "util/compiler.h"

int vml_file_create_internal(struct vml_sys *sys, const char *path, unsigned long size,
			     bool shmem, bool deleted, struct vml_file **out)
{
	struct vml_file *file;

	file = vml_zalloc(sizeof(*file));
	if (!file)
		return -ENOMEM;
	file->path = vml_strdup(path);
	if (!file->path) {
		vml_free(file);
		return -ENOMEM;
	}
	file->size = size;
	file->shmem = shmem;
	file->deleted = deleted;
	file->sys = sys;
	file->inode = fetch_add_relaxed(&sys->next_inode, 1);
	file->dev_major = shmem ? VML_SHMEM_DEV_MAJOR : VML_FILE_DEV_MAJOR;
	file->dev_minor = shmem ? VML_SHMEM_DEV_MINOR : VML_FILE_DEV_MINOR;
	if (deleted)
		file->dev_minor = VML_SHM_MNT_DEV_MINOR;	/* the kernel's internal shm mount */
	store_relaxed(&file->refcount, 1);
	rwsem_init(&file->i_mmap_rwsem, NULL);
	INIT_LIST_HEAD(&file->i_mmap);
	fetch_add_relaxed(&sys->nr_files, 1);
	*out = file;
	return 0;
}

int vml_file_create(struct vml_sys *sys, const char *path, unsigned long size,
		    unsigned int flags, struct vml_file **out)
{
	if (!sys || !path || path[0] != '/' || !out || (flags & ~VML_FILE_SHMEM))
		return -EINVAL;
	if (strlen(path) >= 4096)
		return -ENAMETOOLONG;
	return vml_file_create_internal(sys, path, size, flags & VML_FILE_SHMEM, false, out);
}

void vml_file_get(struct vml_file *file)
{
	fetch_add_relaxed(&file->refcount, 1);
}

void vml_file_put(struct vml_file *file)
{
	if (!file || fetch_sub_acq_rel(&file->refcount, 1) != 1)
		return;
	vml_assert(list_empty(&file->i_mmap));
	for (unsigned long i = 0; i < file->nr_slots; i++)
		if (file->pages[i])
			folio_put(file->pages[i]);
	vml_free(file->pages);
	rwsem_destroy(&file->i_mmap_rwsem);
	fetch_sub_relaxed(&file->sys->nr_files, 1);
	vml_free(file->path);
	vml_free(file);
}

bool file_index_beyond_eof(struct vml_file *file, unsigned long index)
{
	unsigned long size;

	spin_lock(&file->i_pages_lock);
	size = file->size;
	spin_unlock(&file->i_pages_lock);
	return index >= (size + PAGE_SIZE - 1) / PAGE_SIZE;
}

struct folio *filemap_get_folio(struct vml_file *file, unsigned long index)
{
	struct folio *folio = NULL;

	spin_lock(&file->i_pages_lock);
	if (index < file->nr_slots && file->pages[index]) {
		folio = file->pages[index];
		folio_get(folio);
	}
	spin_unlock(&file->i_pages_lock);
	return folio;
}

/* Context: i_pages_lock held. Make room for slot @index. */
static int grow_slots(struct vml_file *file, unsigned long index)
{
	unsigned long n = file->nr_slots ? file->nr_slots : 16;
	struct folio **p;

	while (n <= index)
		n *= 2;
	p = vml_realloc(file->pages, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(p + file->nr_slots, 0, (n - file->nr_slots) * sizeof(*p));
	file->pages = p;
	file->nr_slots = n;
	return 0;
}

int filemap_get_or_create(struct vml_file *file, unsigned long index, int nid, struct folio **out)
{
	struct folio *folio, *fresh;

	folio = filemap_get_folio(file, index);
	if (folio) {
		*out = folio;
		return 0;
	}
	fresh = folio_alloc(file->sys, 0, nid);
	if (!fresh)
		return -ENOMEM;
	fresh->mapping = file;
	fresh->index = index;
	if (file->shmem)
		folio_set(fresh, PG_swapbacked);

	spin_lock(&file->i_pages_lock);
	if (index >= file->nr_slots && grow_slots(file, index)) {
		spin_unlock(&file->i_pages_lock);
		folio_put(fresh);
		return -ENOMEM;
	}
	folio = file->pages[index];
	if (!folio) {
		folio = fresh;	/* the page cache keeps the allocation reference */
		file->pages[index] = folio;
		file->nr_cached++;
		fresh = NULL;
	}
	folio_get(folio);
	spin_unlock(&file->i_pages_lock);
	if (fresh)
		folio_put(fresh);
	*out = folio;
	return 0;
}
