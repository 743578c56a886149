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
#include "mm/huge_memory.h"
#include "mm/shmem.h"
#include "mm/swap.h"
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
	file->shm_mnt = deleted;	/* shared anonymous memory; memfd: vml_file_create */
	file->sys = sys;
	file->inode = fetch_add_relaxed(&sys->next_inode, 1);
	file->dev_major = shmem ? VML_SHMEM_DEV_MAJOR : VML_FILE_DEV_MAJOR;
	file->dev_minor = shmem ? VML_SHMEM_DEV_MINOR : VML_FILE_DEV_MINOR;
	if (deleted)
		file->dev_minor = VML_SHM_MNT_DEV_MINOR;	/* the kernel's internal shm mount */
	store_relaxed(&file->refcount, 1);
	rwsem_init(&file->i_mmap_rwsem, NULL);
	spin_lock_init(&file->i_pages_lock, LOCK_CLASS_I_PAGES);
	itree_init(&file->i_mmap);
	fetch_add_relaxed(&sys->nr_files, 1);
	*out = file;
	return 0;
}

/* Does the page cache hold nothing - no folio, no swap entry - in [index, index + nr)? */
static bool file_range_empty(struct vml_file *file, unsigned long index, unsigned long nr)
{
	for (unsigned long i = index; i < index + nr; i++)
		if (file_folio_at(file, i) || file_swap_at(file, i))
			return false;
	return true;
}

/*
 * The largest of @orders whose naturally aligned block around @index the
 * page cache holds nothing of - no folio, no swap entry - or 0
 * (shmem_suitable_orders: a conflict tries the next smaller order).
 */
static unsigned int shmem_pick_order(struct vml_file *file, unsigned long index,
				     unsigned long orders)
{
	unsigned int order = orders ? highest_order(orders) : 0;

	spin_lock(&file->i_pages_lock);
	/* Ends: each step takes one order out of @orders. */
	for (; orders; order = next_order(&orders, order))
		if (file_range_empty(file, index & ~((1UL << order) - 1), 1UL << order))
			break;
	spin_unlock(&file->i_pages_lock);
	return orders ? order : 0;
}

/*
 * Put a new folio of @order at @index (aligned) into the page cache.
 * Return: 0, -ENOMEM, or -EEXIST if a slot of its range is taken (a race).
 */
static int filemap_add_folio(struct vml_file *file, unsigned long index, unsigned int order,
			     struct folio **out)
{
	unsigned long nr = 1UL << order;
	struct folio *folio = folio_alloc(file->sys, order, 0);

	if (!folio)
		return -ENOMEM;
	folio->mapping = file;
	folio->index = index;
	if (file->shmem)
		folio_set(folio, PG_swapbacked);
	spin_lock(&file->i_pages_lock);
	if (xmap_reserve(&file->pages, index, nr)) {
		spin_unlock(&file->i_pages_lock);
		folio_put(folio);
		return -ENOMEM;
	}
	if (nr > 1 && !file_range_empty(file, index, nr)) {
		spin_unlock(&file->i_pages_lock);
		folio_put(folio);
		return -EEXIST;
	}
	for (unsigned long i = 0; i < nr; i++) {
		VML_BUG_ON(file_folio_at(file, index + i));
		/* one cache reference for all its slots */
		xmap_store(&file->pages, index + i, (uintptr_t)folio);
	}
	file->nr_cached += nr;
	spin_unlock(&file->i_pages_lock);
	*out = folio;
	return 0;
}

/*
 * The largest order write() gives a folio for @len bytes at page @index
 * (fgf_set_order), on a filesystem whose folios are at most @max_bytes
 * (vml_sys_config.file_folio_max_bytes: PAGE_SIZE where the mapping has no
 * large folios).
 */
static unsigned int write_folio_order(unsigned long index, unsigned long len,
				      unsigned long max_bytes)
{
	unsigned int order = 0;

	while (order < 9 && (2UL << order) * PAGE_SIZE <= VML_MIN(len, max_bytes))
		order++;
	/* An unaligned index gets a smaller folio. */
	while (order && (index & ((1UL << order) - 1)))
		order--;
	return order;
}

/*
 * A created file has data: every page up to its size is in the page cache,
 * as after write() + fsync() - clean for a regular file, dirty for tmpfs
 * (shmem pages are never written back, and start referenced). Fault-around
 * and smaps depend on it.
 *
 * The folios are those the live machine's filesystem makes for a file
 * written in 64 KiB write()s (src/spaces/target.c): on a filesystem with
 * large folios (ext4 since 6.16, xfs) each write_begin asks for a folio as
 * large as what is left of the write (a power of two, at most the write,
 * naturally aligned), so a 64 KiB chunk is one order-4 folio and a tail of
 * 24 KiB is 16 + 8 KiB; the host profile measures the largest size
 * (file_folio_max_bytes: 4 KiB where the filesystem has no large folios).
 * tmpfs (huge=never) uses single pages, the internal mount (memfd) what its
 * huge= policy allows (shmem_pick_order). The folio size is visible: a
 * write through a shared mapping dirties the whole folio, and MADV_COLD/
 * PAGEOUT of part of one splits it (reclaim.c).
 */
#define FILE_WRITE_CHUNK (64UL << 10)

/*
 * How much of a write() one step of the kernel's copy loop takes
 * (generic_perform_write: at most the mapping's largest folio). A tmpfs
 * mapping supports large folios only if its mount's huge= allowed them when
 * the inode was made: the internal mount's follows shmem_enabled except
 * deny and force, the model's other tmpfs files stand for huge=never - so
 * even a huge folio "force" gives them is written page by page, and the
 * second page finds it cached and activates it.
 */
static unsigned long file_write_step(struct vml_file *file)
{
	enum vml_shmem_huge mode = file->sys->cfg.shmem_huge;

	if (!file->shmem ||
	    (file->shm_mnt && (mode == VML_SHMEM_HUGE_ALWAYS || mode == VML_SHMEM_HUGE_WITHIN_SIZE ||
			       mode == VML_SHMEM_HUGE_ADVISE)))
		return FILE_WRITE_CHUNK;
	return PAGE_SIZE;
}

static int file_fill_cache(struct vml_file *file)
{
	unsigned long size = file->size, pos = 0, step = file_write_step(file);
	struct folio *folio;
	bool found;
	int err;

	/* Ends: pos grows by at least a page each step until it passes size. */
	while (pos < size) {
		unsigned long left = VML_MIN(size - pos, step - (pos & (step - 1)));
		unsigned long index = pos >> PAGE_SHIFT;
		unsigned int order = file->shmem ? 0 :
				     write_folio_order(index, left, file->sys->cfg.file_folio_max_bytes);

		folio = file->shmem ? file_folio_at(file, index) : NULL;
		found = folio;
		if (!folio && file->shmem) {
			/* i_size is what was written so far */
			order = shmem_pick_order(file, index, shmem_allowable_huge_orders(
							file, NULL, index, pos + left, pos));
			index &= ~((1UL << order) - 1);
		}
		if (!folio) {
			err = filemap_add_folio(file, index, order, &folio);
			if (err)
				return err;
		}
		/*
		 * tmpfs marks what write() allocates referenced (SGP_WRITE), and
		 * what it finds cached accessed: a huge page written in several
		 * chunks is activated by the second. ext4 does neither.
		 */
		if (found)
			folio_mark_accessed(file->sys, folio);
		else if (file->shmem)
			folio_set(folio, PG_referenced);
		if (file->shmem)
			folio_set(folio, PG_dirty);
		/* up to the end of the folio, or of the chunk if that comes first */
		pos = VML_MIN(pos + left, (folio->index + folio_nr_pages(folio)) << PAGE_SHIFT);
	}
	return 0;
}

int vml_file_create(struct vml_sys *sys, const char *path, unsigned long size,
		    unsigned int flags, struct vml_file **out)
{
	struct vml_file *file;
	int err;

	if (!sys || !path || path[0] != '/' || !out ||
	    (flags & ~(VML_FILE_SHMEM | VML_FILE_MEMFD)) ||
	    ((flags & VML_FILE_MEMFD) && !(flags & VML_FILE_SHMEM)))
		return -EINVAL;
	if (strlen(path) >= 4096)
		return -ENAMETOOLONG;
	err = vml_file_create_internal(sys, path, size, flags & VML_FILE_SHMEM, false, &file);
	if (err)
		return err;
	file->shm_mnt = flags & VML_FILE_MEMFD;
	err = file_fill_cache(file);
	if (err) {
		vml_file_put(file);
		return err;
	}
	*out = file;
	return 0;
}

void vml_file_get(struct vml_file *file)
{
	fetch_add_relaxed(&file->refcount, 1);
}

void vml_file_put(struct vml_file *file)
{
	/* acq_rel: pairs with the other puts' decrements: the last sees their accesses */
	if (!file || fetch_sub_acq_rel(&file->refcount, 1) != 1)
		return;
	vml_assert(itree_empty(&file->i_mmap));
	for (unsigned long i = 0; file->shmem; i++) {
		uintptr_t slot;

		if (!xmap_next(&file->swap_slots, &i, ~0UL, &slot))
			break;
		swap_free_entry(file->sys, slot);
	}
	/* A large folio fills several slots and holds one cache reference. */
	for (unsigned long i = 0;;) {
		uintptr_t v;
		struct folio *folio;

		if (!xmap_next(&file->pages, &i, ~0UL, &v))
			break;
		folio = (struct folio *)v;
		i = folio->index + folio_nr_pages(folio);
		folio_put(folio);
		if (!i)
			break;
	}
	xmap_destroy(&file->pages);
	xmap_destroy(&file->swap_slots);
	rwsem_destroy(&file->i_mmap_rwsem);
	fetch_sub_relaxed(&file->sys->nr_files, 1);
	vml_free(file->path);
	vml_free(file);
}

unsigned long file_nr_pages(struct vml_file *file)
{
	unsigned long size;

	spin_lock(&file->i_pages_lock);
	size = file->size;
	spin_unlock(&file->i_pages_lock);
	return (size + PAGE_SIZE - 1) / PAGE_SIZE;
}

bool file_index_beyond_eof(struct vml_file *file, unsigned long index)
{
	return index >= file_nr_pages(file);
}

int shmem_get_folio(struct vml_file *file, struct vma *vma, unsigned long addr,
		    unsigned long index, int nid, struct folio **out)
{
	unsigned long orders;
	unsigned int order;
	struct folio *folio;

	folio = filemap_get_folio(file, index);
	if (folio) {
		*out = folio;
		return 0;
	}
	orders = file->shmem ? shmem_allowable_huge_orders(file, vma, index, 0,
							   file_nr_pages(file) << PAGE_SHIFT) : 0;
	order = shmem_pick_order(file, index, thp_vma_suitable_orders(vma, addr, orders));
	/* A racing fault may fill the range meanwhile: filemap_add_folio then fails (-EEXIST). */
	if (!order || filemap_add_folio(file, index & ~((1UL << order) - 1), order, &folio))
		return filemap_get_or_create(file, index, nid, out);
	folio_get(folio);	/* the caller's; the cache keeps the allocation's */
	*out = folio;
	return 0;
}

bool filemap_read_around(struct vml_file *file, unsigned long index, int nid)
{
	unsigned long ra = file->sys->cfg.file_ra_pages, start, end;
	struct folio *folio;
	bool read = false;

	if (file->shmem || !ra)
		return false;
	folio = filemap_get_folio(file, index);
	if (folio) {
		folio_put(folio);
		return false;
	}
	start = index > ra / 2 ? index - ra / 2 : 0;
	end = VML_MIN(start + ra, file_nr_pages(file));
	/* Ends: i grows by one each step up to @end. */
	for (unsigned long i = start; i < end; i++) {
		if (filemap_get_or_create(file, i, nid, &folio))
			break;	/* no memory: read-ahead stops where it is */
		folio_put(folio);
		read = true;
	}
	return read;
}

struct folio *filemap_get_folio(struct vml_file *file, unsigned long index)
{
	struct folio *folio = NULL;

	spin_lock(&file->i_pages_lock);
	folio = file_folio_at(file, index);
	if (folio)
		folio_get(folio);
	spin_unlock(&file->i_pages_lock);
	return folio;
}

int filemap_get_or_create(struct vml_file *file, unsigned long index, int nid, struct folio **out)
{
	struct folio *folio, *fresh;
	unsigned long swap_slot = 0;

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
	if (xmap_reserve(&file->pages, index, 1)) {
		spin_unlock(&file->i_pages_lock);
		folio_put(fresh);
		return -ENOMEM;
	}
	folio = file_folio_at(file, index);
	if (!folio) {
		folio = fresh;	/* the page cache keeps the allocation reference */
		xmap_store(&file->pages, index, (uintptr_t)folio);
		file->nr_cached++;
		fresh = NULL;
		if (file_swap_at(file, index) == FILE_SHADOW) {
			/* A refault of a page reclaimed recently: straight onto the active list. */
			xmap_store(&file->swap_slots, index, 0);
			folio_set(folio, PG_active);
		} else if (file_swap_at(file, index)) {
			/* Back from swap: the data is in this new page now. */
			swap_slot = file_swap_at(file, index);
			xmap_store(&file->swap_slots, index, 0);
			fetch_sub_relaxed(&file->swapped, 1);
			folio_set(folio, PG_dirty);
		}
	}
	folio_get(folio);
	spin_unlock(&file->i_pages_lock);
	if (fresh)
		folio_put(fresh);
	if (swap_slot)
		swap_free_entry(file->sys, swap_slot);
	*out = folio;
	return 0;
}
