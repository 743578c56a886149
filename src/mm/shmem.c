// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * shmem.c - tmpfs pages in swap and their accounting.
 *
 * A shmem page is swapped from the page cache: its slot there becomes a
 * swap entry (file->swap_slots) and file->swapped counts them. The fast
 * paths of shmem_swap_usage are the kernel's (seed 004): nothing swapped,
 * or the VMA maps the whole object, needs no walk; otherwise the slots of
 * the VMA's range are counted (the xarray walk of
 * shmem_partial_swap_usage). Each call counts the path it took in the
 * VMA's mm (vml_mm_stats: shmem_swap_none/object/walk), so tests can
 * prove which one ran. shmem_swap_lookup is the one-page lookup smaps
 * makes for each empty entry where no fast path applies.
 */
#include "mm/file.h"
#include "mm/folio.h"
#include "mm/huge_memory.h"
#include "mm/shmem.h"
#include "mm/vma.h"
#include "mm/swap.h"
#include "sync/spinlock.h"
#include "util/compiler.h"

/*
 * The kernel's page cache is one xarray holding pages and swap entries
 * alike; this walk (xas_for_each) visits every entry of the range and
 * counts the swap ones, so it costs a step per cached page as well as per
 * swapped one - the cost seed 004 compares with a lookup per empty PTE.
 * The model keeps the two kinds in two maps: it counts the swap map's
 * entries and passes over the page map's the same way.
 */
unsigned long shmem_partial_swap_usage(struct vml_file *file, unsigned long start,
				       unsigned long end)
{
	unsigned long swapped, cached;

	spin_lock(&file->i_pages_lock);
	swapped = xmap_count(&file->swap_slots, start, end);
	cached = xmap_count(&file->pages, start, end);
	spin_unlock(&file->i_pages_lock);
	/* A page is cached or in swap, never both. */
	VML_BUG_ON(swapped + cached > end - start);
	return swapped << PAGE_SHIFT;
}

bool shmem_swap_lookup(struct vml_file *file, unsigned long index)
{
	bool swapped;

	spin_lock(&file->i_pages_lock);
	/* What the page cache holds there (one xarray lookup): a page, or else a swap entry? */
	swapped = !file_folio_at(file, index) && file_swap_at(file, index);
	spin_unlock(&file->i_pages_lock);
	return swapped;
}

unsigned long shmem_swap_usage(struct vma *vma)
{
	struct vml_file *file = vma->vm_file;
	struct mm_stats *st = &vma->vm_mm->stats;
	unsigned long swapped = load_relaxed(&file->swapped), size;

	if (!swapped) {
		fetch_add_relaxed(&st->shmem_swap_none, 1);
		return 0;
	}
	spin_lock(&file->i_pages_lock);
	size = file->size;
	spin_unlock(&file->i_pages_lock);
	/* The VMA maps the whole object: its counter is the answer. */
	if (!vma->vm_pgoff && vma->vm_end - vma->vm_start >= size) {
		fetch_add_relaxed(&st->shmem_swap_object, 1);
		return swapped << PAGE_SHIFT;
	}
	fetch_add_relaxed(&st->shmem_swap_walk, 1);
	return shmem_partial_swap_usage(file, vma->vm_pgoff, vma->vm_pgoff + vma_pages(vma));
}

bool shmem_writeout(struct vml_file *file, struct folio *folio)
{
	unsigned long slot;
	bool moved = false;

	/* Divergence: the kernel splits a large folio to swap it out; the model keeps it. */
	if (folio->order)
		return false;
	slot = swap_alloc(file->sys);
	if (!slot)
		return false;
	spin_lock(&file->i_pages_lock);
	if (folio_ref_count(folio) == 1 && folio_mapcount(folio) == 0 &&
	    file_folio_at(file, folio->index) == folio &&
	    !xmap_reserve(&file->swap_slots, folio->index, 1)) {
		xmap_store(&file->pages, folio->index, 0);
		xmap_store(&file->swap_slots, folio->index, slot);
		file->nr_cached--;
		fetch_add_relaxed(&file->swapped, 1);
		moved = true;
	}
	spin_unlock(&file->i_pages_lock);
	if (moved)
		folio_put(folio);
	else
		swap_free_entry(file->sys, slot);
	return moved;
}

/*
 * A shared anonymous object is referenced by its VMAs alone, so the unmap
 * that removes its last mapping (in any mm) drops its last reference: fput
 * evicts the inode at the syscall's return, and truncating the page cache
 * releases its folios through a folio batch, whose first release drains this
 * CPU's LRU batches (__folio_batch_release). A cache with no folio releases
 * nothing and drains nothing. A named tmpfs file outlives its mappings.
 */
bool shmem_zero_unmap_drains(struct vml_file *file)
{
	bool last, cached;

	if (!file->shmem || !file->deleted)
		return false;
	i_mmap_lock_read(file);
	last = itree_empty(&file->i_mmap);
	i_mmap_unlock_read(file);
	if (!last)
		return false;
	spin_lock(&file->i_pages_lock);
	cached = file->nr_cached != 0;
	spin_unlock(&file->i_pages_lock);
	return cached;
}

/*
 * The orders of @orders whose naturally aligned folio around @index lies
 * within the file's size, or within the write (shmem_get_orders_within_size):
 * the largest that does and every smaller one.
 */
static unsigned long orders_within_size(unsigned long orders, unsigned long index,
					unsigned long write_end, unsigned long i_size)
{
	unsigned long size = write_end > i_size ? write_end : i_size;
	unsigned long pages = (size + PAGE_SIZE - 1) >> PAGE_SHIFT;

	/* Ends: each step takes one order out of @orders. */
	for (unsigned int order = orders ? highest_order(orders) : 0; orders;
	     order = next_order(&orders, order)) {
		unsigned long nr = 1UL << order;

		if (pages >= ((index + nr) & ~(nr - 1)))
			return orders;
	}
	return 0;
}

/*
 * The mount's huge= policy (shmem_huge_global_enabled), as orders: the
 * internal mount's is shmem_enabled; the model's other tmpfs files stand
 * for a mount with huge=never, which only "force" overrides, and that with
 * the PMD size alone. A fault has no write to size a folio by, so it asks
 * for the PMD size alone; write() for every size, the largest tried first
 * (6.18: "always try PMD-sized order first").
 */
static unsigned long shmem_huge_global(struct vml_file *file, struct vma *vma,
				       unsigned long index, unsigned long write_end,
				       unsigned long i_size, unsigned long vm_flags)
{
	enum vml_shmem_huge mode = file->sys->cfg.shmem_huge;
	unsigned long orders = vma ? 1UL << HPAGE_PMD_ORDER : THP_ORDERS_ALL_FILE, within;

	if (mode == VML_SHMEM_HUGE_DENY)
		return 0;
	if (mode == VML_SHMEM_HUGE_FORCE)
		return 1UL << HPAGE_PMD_ORDER;
	if (!file->shm_mnt)
		return 0;
	switch (mode) {
	case VML_SHMEM_HUGE_ALWAYS:
		return orders;
	case VML_SHMEM_HUGE_WITHIN_SIZE:
		/* "Also respect madvise() hints" (transhuge.rst): advise where nothing fits */
		within = orders_within_size(orders, index, write_end, i_size);
		return within ? within : (vm_flags & VM_HUGEPAGE ? orders : 0);
	case VML_SHMEM_HUGE_ADVISE:
		return vm_flags & VM_HUGEPAGE ? orders : 0;
	default:
		return 0;
	}
}

unsigned long shmem_forced_huge_orders(struct vml_file *file, struct vma *vma)
{
	const struct vml_sys *sys = file->sys;
	unsigned long mask;

	if (!file->shmem || (vma->vm_flags & VM_NOHUGEPAGE) ||
	    sys->cfg.shmem_huge == VML_SHMEM_HUGE_DENY)
		return 0;
	/* shmem_huge_global_enabled(shmem_huge_force): the PMD size, whatever the mount */
	if (!file->shm_mnt)
		return 1UL << HPAGE_PMD_ORDER;
	if (sys->cfg.shmem_huge == VML_SHMEM_HUGE_FORCE)
		return sys->shmem_orders_inherit;
	mask = sys->shmem_orders_always | sys->shmem_orders_inherit |
	       orders_within_size(sys->shmem_orders_within_size, vma->vm_pgoff, 0,
				  file_nr_pages(file) << PAGE_SHIFT);
	if (vma->vm_flags & VM_HUGEPAGE)
		mask |= sys->shmem_orders_madvise;
	return mask & THP_ORDERS_ALL_FILE;
}

unsigned long shmem_allowable_huge_orders(struct vml_file *file, struct vma *vma,
					  unsigned long index, unsigned long write_end,
					  unsigned long i_size)
{
	const struct vml_sys *sys = file->sys;
	unsigned long vm_flags = vma ? vma->vm_flags : 0, global, mask;

	if (!file->shmem || (vm_flags & VM_NOHUGEPAGE))
		return 0;
	global = shmem_huge_global(file, vma, index, write_end, i_size, vm_flags);
	/*
	 * tmpfs files, and write(), follow the mount; in a VMA, the internal
	 * mount's objects - shared anonymous memory, and (as measured on 6.18)
	 * memfd too - follow the per-size modes.
	 */
	if (!vma || !file->shm_mnt)
		return global;
	if (sys->cfg.shmem_huge == VML_SHMEM_HUGE_DENY)
		return 0;
	/* Under "force" only the sizes that inherit it; a size's own mode cannot beat a mount. */
	if (sys->cfg.shmem_huge == VML_SHMEM_HUGE_FORCE)
		return sys->shmem_orders_inherit;
	mask = sys->shmem_orders_always |
	       orders_within_size(sys->shmem_orders_within_size, index, 0, i_size);
	if (vm_flags & VM_HUGEPAGE)
		mask |= sys->shmem_orders_madvise;
	if (global)
		mask |= sys->shmem_orders_inherit;
	return mask & THP_ORDERS_ALL_FILE;
}
