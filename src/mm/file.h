/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * file.h - files: a path, a size, an inode number, a page cache, and the
 * reverse map of VMAs that map it (i_mmap) under its own lock,
 * i_mmap_rwsem (docs/kernel.md section 8).
 *
 * i_mmap is an interval tree (tree/itree.h) of every VMA mapping the file,
 * in any mm, keyed by the range of file pages it maps, [vm_pgoff,
 * vm_pgoff + pages - 1]: the kernel's vma_interval_tree. Whoever needs the
 * mappings of some pages of the file - unmapping a folio before it is
 * split, reverse mapping in reclaim - asks it for exactly the VMAs that
 * map one of them (vma_interval_tree_foreach) under i_mmap_rwsem(R).
 * VMAs go in and out under i_mmap_rwsem(W), in the commit of the
 * transaction that creates or retires them (vma_txn.c).
 *
 * The page cache is a sparse map (xmap) from page index to folio, protected
 * by i_pages_lock (a spinlock: lookups are short); a large folio fills all
 * its slots. shmem files keep their
 * pages here too, and count pages moved to swap in `swapped`.
 */
#ifndef VML_MM_FILE_H
#define VML_MM_FILE_H

#include "platform/platform.h"
#include "mm/mm_types.h"
#include "mm/xmap.h"
#include "sync/lockdep.h"
#include "util/clock.h"
#include "mm/debug.h"

#define VML_FILE_DEV_MAJOR 0xfe		/* a regular file's device, as on the live root fs */
#define VML_FILE_DEV_MINOR 0x00
#define VML_SHMEM_DEV_MAJOR 0x00	/* tmpfs */
#define VML_SHMEM_DEV_MINOR 0x1a
#define VML_SHM_MNT_DEV_MINOR 0x01	/* shared anonymous memory */

struct vml_file {
	char *path;			/* [I] what maps shows */
	unsigned long size;		/* [i_pages_lock] bytes */
	uint64_t inode;			/* [I] */
	unsigned int dev_major, dev_minor; /* [I] */
	bool shmem;			/* [I] tmpfs / shared anonymous */
	bool deleted;			/* [I] shows " (deleted)" (shared anonymous /dev/zero) */
	bool shm_mnt;			/* [I] on the kernel's internal tmpfs mount (shared
					 * anonymous, memfd), whose huge= is shmem_enabled's;
					 * other tmpfs files stand for a huge=never mount */
	struct vml_sys *sys;		/* [I] */
	_Atomic long refcount;		/* [atomic] creator + each VMA mapping it */

	struct rwsem i_mmap_rwsem;	/* protects i_mmap */
	struct itree i_mmap;		/* [i_mmap_rwsem] VMAs mapping this file, by page range;
					 * i_mmap.count of them */
	uint64_t i_mmap_wait_ns;	/* [i_mmap_rwsem(W)] the holder's wait for it, and */
	uint64_t i_mmap_since_ns;	/* [i_mmap_rwsem(W)] when it got it; 0: not timed
					 * (vml_i_mmap_time_hook is off) */

	spinlock_t i_pages_lock;	/* protects the page cache below */
	struct xmap pages;		/* [i_pages_lock] index -> struct folio * (sparse) */
	struct xmap swap_slots;		/* [i_pages_lock] shmem: index -> swap slot;
					 * regular: FILE_SHADOW where a page was reclaimed */
	unsigned long nr_cached;	/* [i_pages_lock] */
	_Atomic unsigned long swapped;	/* [atomic] shmem pages in swap */
};

/*
 * A regular file's page reclaimed from the cache leaves a shadow entry
 * (mm/workingset.c): when it is read in again soon after - always, on the
 * model's roomy machine - the new folio starts active (workingset_refault).
 */
#define FILE_SHADOW (~0UL)

/* i_mmap_rwsem (include/linux/fs.h i_mmap_lock_read/write). */
static inline void i_mmap_lock_read(struct vml_file *file)
{
	lockdep_acquire(LOCK_CLASS_I_MMAP, &file->i_mmap_rwsem, LOCKDEP_READ);
	down_read(&file->i_mmap_rwsem);
}

static inline void i_mmap_unlock_read(struct vml_file *file)
{
	lockdep_release(LOCK_CLASS_I_MMAP, &file->i_mmap_rwsem);
	up_read(&file->i_mmap_rwsem);
}

/*
 * The write side can be timed for a benchmark (`vmalock bench exec-churn`):
 * while vml_i_mmap_time_hook is set, each write section records how long
 * its holder waited and held, and reports both to the hook after
 * releasing. Off, it costs a load and a branch at each end.
 */
static inline void i_mmap_lock_write(struct vml_file *file)
{
	uint64_t t0 = vml_i_mmap_timed() ? plat_now_ns() : 0;

	lockdep_acquire(LOCK_CLASS_I_MMAP, &file->i_mmap_rwsem, 0);
	down_write(&file->i_mmap_rwsem);
	file->i_mmap_since_ns = 0;
	if (unlikely(t0)) {
		file->i_mmap_since_ns = plat_now_ns();
		file->i_mmap_wait_ns = file->i_mmap_since_ns - t0;
	}
}

static inline void i_mmap_unlock_write(struct vml_file *file)
{
	uint64_t since = file->i_mmap_since_ns, wait = file->i_mmap_wait_ns, held = 0;

	if (unlikely(since))
		held = plat_now_ns() - since;
	lockdep_release(LOCK_CLASS_I_MMAP, &file->i_mmap_rwsem);
	up_write(&file->i_mmap_rwsem);
	if (unlikely(since))
		vml_i_mmap_time_report(file, wait, held);
}

static inline void i_mmap_assert_write_locked(struct vml_file *file)
{
	vml_assert(rwsem_is_locked(&file->i_mmap_rwsem));
}

/* The last file page @vma maps. */
static inline unsigned long vma_last_pgoff(const struct vma *vma)
{
	return vma->vm_pgoff + vma_pages(vma) - 1;
}

/* Context for the four below: i_mmap_rwsem held (W to change, R or W to walk). */
static inline void vma_interval_tree_insert(struct vma *vma, struct vml_file *file)
{
	i_mmap_assert_write_locked(file);
	itree_insert(&file->i_mmap, &vma->shared, vma->vm_pgoff, vma_last_pgoff(vma));
}

static inline void vma_interval_tree_remove(struct vma *vma, struct vml_file *file)
{
	i_mmap_assert_write_locked(file);
	itree_remove(&file->i_mmap, &vma->shared);
}

/* The first VMA mapping one of the file's pages [@first, @last], or NULL. */
static inline struct vma *vma_interval_tree_iter_first(struct vml_file *file, unsigned long first,
							unsigned long last)
{
	struct itree_node *n = itree_iter_first(&file->i_mmap, first, last);

	return n ? container_of(n, struct vma, shared) : NULL;
}

/* The next such VMA after @vma (which maps one of them), or NULL. */
static inline struct vma *vma_interval_tree_iter_next(struct vma *vma, unsigned long first,
						       unsigned long last)
{
	struct itree_node *n = itree_iter_next(&vma->shared, first, last);

	return n ? container_of(n, struct vma, shared) : NULL;
}

/* Every VMA, of any mm, that maps one of @file's pages [@first, @last]: rmap's walk. */
#define vma_interval_tree_foreach(vma, file, first, last)                      \
	for ((vma) = vma_interval_tree_iter_first((file), (first), (last)); (vma); \
	     (vma) = vma_interval_tree_iter_next((vma), (first), (last)))

int vml_file_create_internal(struct vml_sys *sys, const char *path, unsigned long size,
			     bool shmem, bool deleted, struct vml_file **out);
void vml_file_get(struct vml_file *file);
/* vml_file_put() is public (vmalock/mm.h). */

/* The page cache. Context for the two helpers: i_pages_lock held. */
static inline struct folio *file_folio_at(struct vml_file *file, unsigned long index)
{
	return (struct folio *)xmap_load(&file->pages, index);
}

static inline unsigned long file_swap_at(struct vml_file *file, unsigned long index)
{
	return (unsigned long)xmap_load(&file->swap_slots, index);
}


struct folio *filemap_get_folio(struct vml_file *file, unsigned long index);	/* with a reference */
/*
 * filemap_read_around - a fault at page @index of regular @file misses the
 * page cache: read in the pages around it that are not cached, small
 * folios, file_ra_pages of them centred on @index and clipped to EOF (mmap
 * read-around, do_sync_mmap_readahead). Return: true if it read (then the
 * kernel's fault, which dropped its lock for the I/O, is retried).
 */
bool filemap_read_around(struct vml_file *file, unsigned long index, int nid);
/* Find or create the page-cache folio at @index (a new one is clean, uptodate). */
int filemap_get_or_create(struct vml_file *file, unsigned long index, int nid, struct folio **out);
/*
 * shmem_get_folio - the folio of page @index of shmem @file for a fault at
 * @addr in @vma, a reference taken: the cached one, or a new one - of the
 * largest order shmem THP allows here whose naturally aligned block lies in
 * the VMA and is free in the page cache (shmem_alloc_and_add_folio), else a
 * small one.
 */
int shmem_get_folio(struct vml_file *file, struct vma *vma, unsigned long addr,
		    unsigned long index, int nid, struct folio **out);
/*
 * i_mmap_for_each_locked - call @fn for every VMA, of any mm, that maps one
 * of @file's pages [@first, @last], with the addresses of those pages
 * [@start, @end) and that mm's mmap_lock(R) held. Context: no lock held;
 * the VMAs are gathered under i_mmap_rwsem(R), which is dropped before
 * each mmap_lock is taken (truncate.c says why); a VMA that changed
 * meanwhile is skipped.
 */
void i_mmap_for_each_locked(struct vml_file *file, unsigned long first, unsigned long last,
			    void (*fn)(struct mm *mm, struct vma *vma, unsigned long start,
				       unsigned long end, void *arg),
			    void *arg);
/*
 * unmap_mapping_pages - zap @file's pages [@first, @last] from every
 * mapping (unmap_mapping_range); @even_cows: the private copies too.
 */
void unmap_mapping_pages(struct vml_file *file, unsigned long first, unsigned long last,
			 bool even_cows);

/* The number of pages up to end of file (i_size rounded up). */
unsigned long file_nr_pages(struct vml_file *file);
/* Does the page at @index lie beyond end of file? */
bool file_index_beyond_eof(struct vml_file *file, unsigned long index);

/*
 * A shared writable mapping that needs no write notification (the negation
 * of vma_wants_writenotify for shmem: no writeback to account, no
 * page_mkwrite): its protection itself is writable, so every PTE it maps
 * is writable and a write dirties the PTE, not the folio.
 */
static inline bool vma_writable_without_notify(const struct vma *vma)
{
	return (vma->vm_flags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE) &&
	       vma->vm_file && vma->vm_file->shmem;
}

#endif /* VML_MM_FILE_H */
