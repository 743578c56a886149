// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * truncate.c - ftruncate(2) and fallocate(2) FALLOC_FL_PUNCH_HOLE of a file
 * (mm/truncate.c truncate_pagecache, truncate_pagecache_range; shmem's
 * shmem_fallocate and ext4's punch, which go the same way), and so
 * MADV_REMOVE (madvise.c).
 *
 * Two steps, as in the kernel. First unmap_mapping_range: every VMA of
 * every mm that maps one of the file pages going (the file's i_mmap, asked
 * by page range) has them zapped. A truncation zaps the private copies too
 * (even_cows: a MAP_PRIVATE page written beyond the new end of file goes
 * with it); a hole keeps them (the copy is the process's own data now).
 * Guard markers stay. Then the page cache loses the folios wholly inside
 * the range (and a shmem file the swap entries there, a regular one its
 * reclaim shadows); a page only partly inside stays, zeroed in part - the
 * model keeps no data. A large folio partly inside is split into single
 * pages first, when it can be, and its pages inside the range go
 * (truncate_inode_partial_folio; 6.18's try_folio_split leaves some of the
 * pieces larger, which the model does not).
 *
 * Locks: the kernel zaps under i_mmap_rwsem(R) alone, with only each page
 * table's lock, in mms whose mmap_lock it does not hold. The model's zap
 * walks a VMA's page tables under its mm's mmap_lock, which ranks above
 * i_mmap_rwsem: so it collects the (mm, range) pairs under i_mmap_rwsem(R),
 * drops it, and zaps each under that mm's mmap_lock(R). A VMA that changed
 * meanwhile is looked up again and zapped only where it still maps the
 * file at the same offsets.
 */
#include <errno.h>

#include "mm/file.h"
#include "mm/folio.h"
#include "mm/internal.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm/reclaim.h"
#include "mm/swap.h"
#include "mm/vma.h"
#include "sync/spinlock.h"
#include "util/alloc.h"
#include "util/compiler.h"

/* ext4's s_maxbytes for extent files with 4 KiB blocks: (2^32 - 1) blocks. */
#define EXT4_MAX_BYTES (((1ULL << 32) - 1) << PAGE_SHIFT)
/* MAX_LFS_FILESIZE: tmpfs's limit */
#define TMPFS_MAX_BYTES ((unsigned long long)(~0ULL >> 1))

struct zap_target {
	struct mm *mm;			/* a user reference held (mmget_not_zero) */
	unsigned long start, end;	/* the addresses of the file pages going */
	unsigned long pgoff;		/* the VMA's file offset (pages) at vm_start */
	unsigned long vm_start;
};

void i_mmap_for_each_locked(struct vml_file *file, unsigned long first, unsigned long last,
			    void (*fn)(struct mm *mm, struct vma *vma, unsigned long start,
				       unsigned long end, void *arg),
			    void *arg)
{
	struct zap_target *v = NULL, *n;
	size_t nr = 0, cap = 0;
	struct vma *vma;

	i_mmap_lock_read(file);
	vma_interval_tree_foreach(vma, file, first, last) {
		unsigned long f = VML_MAX(first, vma->vm_pgoff);
		unsigned long l = VML_MIN(last, vma_last_pgoff(vma));

		n = vml_grow_array(v, &cap, nr + 1, sizeof(*v), 8);
		if (!n)
			break;	/* no memory: the rest stays mapped, as after a race */
		v = n;
		if (!mmget_not_zero(vma->vm_mm))
			continue;	/* exiting: its teardown unmaps everything */
		v[nr++] = (struct zap_target){
			.mm = vma->vm_mm,
			.start = vma->vm_start + ((f - vma->vm_pgoff) << PAGE_SHIFT),
			.end = vma->vm_start + ((l - vma->vm_pgoff + 1) << PAGE_SHIFT),
			.pgoff = vma->vm_pgoff,
			.vm_start = vma->vm_start,
		};
	}
	i_mmap_unlock_read(file);

	for (size_t i = 0; i < nr; i++) {
		struct mm *mm = v[i].mm;

		mmap_read_lock(mm);
		vma = vma_lookup(mm, v[i].start);
		/* still the same mapping of the file, over the whole range */
		if (vma && vma->vm_file == file && vma->vm_start == v[i].vm_start &&
		    vma->vm_pgoff == v[i].pgoff && v[i].end <= vma->vm_end)
			fn(mm, vma, v[i].start, v[i].end, arg);
		mmap_read_unlock(mm);
		mmput(mm);
	}
	vml_free(v);
}

static void zap_one(struct mm *mm, struct vma *vma, unsigned long start, unsigned long end,
		    void *even_cows)
{
	zap_mapping_range(mm, start, end, *(bool *)even_cows);
}

void unmap_mapping_pages(struct vml_file *file, unsigned long first, unsigned long last,
			 bool even_cows)
{
	i_mmap_for_each_locked(file, first, last, zap_one, &even_cows);
}

/* Take @folio out of the page cache; Context: i_pages_lock held, the cache's reference dropped by the caller. */
static void filemap_remove_folio(struct vml_file *file, struct folio *folio)
{
	for (unsigned long i = 0; i < folio_nr_pages(folio); i++)
		xmap_store(&file->pages, folio->index + i, 0);
	file->nr_cached -= folio_nr_pages(folio);
}

/*
 * Split the large folio at page @index, if it reaches outside the whole
 * pages [@start, @end], non-uniformly around @index (truncate_inode_partial_folio's
 * try_folio_split). Context: no lock held.
 */
static void split_partial_folio(struct vml_file *file, unsigned long index, unsigned long start,
				unsigned long end)
{
	struct folio *folio;

	spin_lock(&file->i_pages_lock);
	folio = file_folio_at(file, index);
	if (!folio || !folio->order ||
	    (folio->index >= start && folio->index + folio_nr_pages(folio) - 1 <= end)) {
		spin_unlock(&file->i_pages_lock);
		return;
	}
	folio_get(folio);
	spin_unlock(&file->i_pages_lock);
	split_file_folio_at(folio, (long)(index - folio->index));
	folio_put(folio);
}

/*
 * A regular file's page that the range covers only in part: ext4 zeroes
 * the part (ext4_zero_partial_blocks, ext4_block_truncate_page) through the
 * page cache - reading the page in if it is not cached (FGP_CREAT), marking
 * it accessed and dirty. tmpfs zeroes it in place: its pages are dirty anyway.
 */
static void zero_partial_page(struct vml_file *file, unsigned long index)
{
	struct folio *folio;

	if (file->shmem || file_index_beyond_eof(file, index) ||
	    filemap_get_or_create(file, index, 0, &folio))
		return;
	folio_mark_accessed(file->sys, folio);
	folio_set(folio, PG_dirty);
	folio_put(folio);
}

/*
 * truncate_inode_pages_range - drop the page cache of bytes [@lstart, @lend]
 * (@lend ~0: to the end): the folios wholly inside go, with the swap
 * entries or shadows there; a large folio at either end that reaches out
 * of the range is split around the range's first (last) page first, so
 * that its pages inside can go; a page the range covers in part stays
 * (zero_partial_page). Context: no lock held.
 */
static void truncate_inode_pages_range(struct vml_file *file, unsigned long lstart,
				       unsigned long lend)
{
	unsigned long start = (lstart + PAGE_SIZE - 1) >> PAGE_SHIFT;	/* first whole page */
	unsigned long end = lend == ~0UL ? ~0UL : ((lend + 1) >> PAGE_SHIFT) - 1;
	bool whole = lend == ~0UL || start <= end;		/* any whole page at all */
	unsigned long i;
	uintptr_t v;

	if ((lend + 1) >> PAGE_SHIFT == 0 && lend != ~0UL)
		whole = false;
	/* the folios at both ends first, as the kernel's partial-folio steps split them */
	split_partial_folio(file, lstart >> PAGE_SHIFT, start, end);
	if (lend != ~0UL)
		split_partial_folio(file, lend >> PAGE_SHIFT, start, end);
	/* Ends: each step moves i past one folio, or stops at the end of the range. */
	for (i = start; whole;) {
		struct folio *folio;
		unsigned long first, nr;

		spin_lock(&file->i_pages_lock);
		if (i > end || !xmap_next(&file->pages, &i, end + 1 < end ? ~0UL : end + 1, &v)) {
			spin_unlock(&file->i_pages_lock);
			break;
		}
		folio = (struct folio *)v;
		first = folio->index;
		nr = folio_nr_pages(folio);
		if (first >= start && first + nr - 1 <= end) {
			filemap_remove_folio(file, folio);
			spin_unlock(&file->i_pages_lock);
			folio_put(folio);	/* the cache's reference */
		} else {
			spin_unlock(&file->i_pages_lock);	/* a split that failed: it stays */
		}
		i = first + nr;
		if (!i)
			break;
	}
	/* Swap entries (shmem) and reclaim shadows (a regular file) of the whole pages. */
	for (i = start; whole;) {
		unsigned long slot;

		spin_lock(&file->i_pages_lock);
		if (i > end || !xmap_next(&file->swap_slots, &i, end + 1 < end ? ~0UL : end + 1, &v)) {
			spin_unlock(&file->i_pages_lock);
			break;
		}
		slot = (unsigned long)v;
		xmap_store(&file->swap_slots, i, 0);
		spin_unlock(&file->i_pages_lock);
		if (file->shmem && slot != FILE_SHADOW) {
			fetch_sub_relaxed(&file->swapped, 1);
			swap_free_entry(file->sys, slot);
		}
		if (++i == 0)
			break;
	}
	if (lstart & ~PAGE_MASK)
		zero_partial_page(file, lstart >> PAGE_SHIFT);
	if (lend != ~0UL && ((lend + 1) & ~PAGE_MASK) && lend >> PAGE_SHIFT != lstart >> PAGE_SHIFT)
		zero_partial_page(file, lend >> PAGE_SHIFT);
}

static unsigned long long file_max_bytes(const struct vml_file *file)
{
	return file->shmem ? TMPFS_MAX_BYTES : EXT4_MAX_BYTES;
}

int vml_file_truncate(struct vml_file *file, long long size)
{
	unsigned long holebegin, old;

	if (!file || size < 0)
		return -EINVAL;
	if ((unsigned long long)size > file_max_bytes(file))
		return -EFBIG;
	spin_lock(&file->i_pages_lock);
	old = file->size;
	file->size = (unsigned long)size;	/* truncate_setsize: i_size first */
	spin_unlock(&file->i_pages_lock);
	if ((unsigned long)size >= old)
		return 0;		/* growing adds a hole: nothing cached there */
	/* truncate_pagecache: unmap (private copies too), drop the cache, unmap again */
	holebegin = PAGE_ALIGN((unsigned long)size) >> PAGE_SHIFT;
	unmap_mapping_pages(file, holebegin, ~0UL, true);
	truncate_inode_pages_range(file, (unsigned long)size, ~0UL);
	unmap_mapping_pages(file, holebegin, ~0UL, true);
	return 0;
}

int vml_file_punch(struct vml_file *file, long long offset, long long len)
{
	unsigned long long end;
	unsigned long first, last, size;

	if (!file || offset < 0 || len <= 0)
		return -EINVAL;		/* vfs_fallocate */
	end = (unsigned long long)offset + (unsigned long long)len;
	if (end > file_max_bytes(file) || end > (unsigned long long)~0ULL >> 1)
		return -EFBIG;
	if (!file->shmem) {
		/* ext4_punch_hole: nothing beyond i_size */
		spin_lock(&file->i_pages_lock);
		size = file->size;
		spin_unlock(&file->i_pages_lock);
		if ((unsigned long long)offset >= size)
			return 0;
		/* a hole past EOF ends after the page that holds EOF */
		if (end > size)
			end = size + PAGE_SIZE - (size & ~PAGE_MASK);
	}
	/* truncate_pagecache_range: whole pages are unmapped; a partial one stays */
	first = PAGE_ALIGN((unsigned long)offset) >> PAGE_SHIFT;
	last = (unsigned long)(end >> PAGE_SHIFT);	/* one past the last whole page */
	if (last > first)
		unmap_mapping_pages(file, first, last - 1, false);
	truncate_inode_pages_range(file, (unsigned long)offset, (unsigned long)end - 1);
	return 0;
}
