// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * smaps.c - /proc/PID/smaps and /proc/PID/smaps_rollup (fs/proc/task_mmu.c
 * show_smap, show_smaps_rollup, smap_gather_stats; 6.18 with
 * CONFIG_PAGE_MAPCOUNT=y, no pkeys, no hugetlb).
 *
 * Accounting (docs/kernel.md §3). Every present entry maps a page of a folio;
 * the zero pages are not normal pages and count nowhere. Size-only counters
 * come first (Anonymous, LazyFree, Rss, Referenced), then the sharing
 * split: a folio with a single reference is mapped exactly once (private,
 * full PSS); otherwise each page's precise mapcount decides (PSS divided by
 * it, private iff below 2). PSS is kept in 1/4096 bytes (PSS_SHIFT) and
 * split by folio type into Pss_Anon / Pss_Shmem (swap-backed) / Pss_File.
 * Dirty is the entry's dirty bit or the folio's. A swap entry adds a page to
 * Swap and its share (by the slot's user count) to SwapPss.
 *
 * shmem swap (docs/kernel.md 7, seed 004): a shmem VMA gathered whole adds
 * its object's swap usage at once unless it is a private writable mapping
 * with swapped pages - there copy-on-write anonymous pages may shadow
 * swapped object pages, so only the object's swap behind empty entries is
 * counted, range by range over holes without a page table and page by page
 * over empty PTEs. A gather that starts inside the VMA (smaps_rollup
 * resuming) always walks. With shmem_swap_usage=per-page (before 2016)
 * every shmem VMA is walked and every empty page, holes included, looked
 * up one by one. The VMAs walked that way and their lookups are counted
 * (vml_mm_stats shmem_swap_per_page, shmem_swap_lookups).
 *
 * Locking: the walk runs with the VMA read-locked and RCU dropped (policy
 * VMA) or under mmap_lock(R) (policy MMAP, or a fallback); see
 * proc_walk_begin() in maps.c. smaps_rollup's policies and its contended
 * mmap_lock drop are described above show_smaps_rollup().
 */
#include <errno.h>

#include "platform/platform.h"
#include "mm/file.h"
#include "mm/folio.h"
#include "mm/huge_memory.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pkeys.h"
#include "mm/pgtable.h"
#include "mm/rollup.h"
#include "mm/shmem.h"
#include "mm/swap.h"
#include "util/debug.h"
#include "mm/vma.h"
#include "mm/vma_lock.h"
#include "proc/internal.h"
#include "util/compiler.h"

#define PSS_SHIFT ROLLUP_PSS_SHIFT

struct mem_size_stats {
	unsigned long resident;
	unsigned long shared_clean;
	unsigned long shared_dirty;
	unsigned long private_clean;
	unsigned long private_dirty;
	unsigned long referenced;
	unsigned long anonymous;
	unsigned long lazyfree;
	unsigned long anonymous_thp;
	unsigned long shmem_thp;
	unsigned long file_thp;
	unsigned long swap;
	unsigned long shared_hugetlb;
	unsigned long private_hugetlb;
	unsigned long ksm;
	uint64_t pss;
	uint64_t pss_anon;
	uint64_t pss_file;
	uint64_t pss_shmem;
	uint64_t pss_dirty;
	uint64_t pss_locked;
	uint64_t swap_pss;
};

/* How a walk counts the shmem object's swap behind the VMA's empty entries. */
enum shmem_holes {
	SHMEM_HOLES_NONE,	/* not at all: counted before the walk, or not shmem */
	SHMEM_HOLES_RANGED,	/* a hole without a page table in one go, an empty PTE alone */
	SHMEM_HOLES_PER_PAGE,	/* every page alone (shmem_swap_usage=per-page) */
};

struct smaps_walk {
	struct mem_size_stats *mss;
	struct vma *vma;
	enum shmem_holes shmem_holes;
	unsigned long lookups;	/* one-page lookups made */
	unsigned long entries;	/* anonymous entries met: the calibration's per-page charge */
	bool empty_table;	/* a PTE table met with nothing in the walked range */
};

static void smaps_page_accumulate(struct mem_size_stats *mss, struct folio *folio,
				  unsigned long size, uint64_t pss, bool dirty, bool locked,
				  bool private)
{
	mss->pss += pss;
	if (folio_test(folio, PG_anon))
		mss->pss_anon += pss;
	else if (folio_test(folio, PG_swapbacked))
		mss->pss_shmem += pss;
	else
		mss->pss_file += pss;
	if (locked)
		mss->pss_locked += pss;
	if (dirty || folio_test(folio, PG_dirty)) {
		mss->pss_dirty += pss;
		if (private)
			mss->private_dirty += size;
		else
			mss->shared_dirty += size;
	} else {
		if (private)
			mss->private_clean += size;
		else
			mss->shared_clean += size;
	}
}

/* @page: the mapped page, or a large folio's first page when @compound (PMD-mapped). */
static void smaps_account(struct mem_size_stats *mss, struct page *page, bool compound,
			  bool young, bool dirty, bool locked)
{
	struct folio *folio = page_folio(page);
	unsigned long nr = compound ? folio_nr_pages(folio) : 1;
	unsigned long size = nr * PAGE_SIZE;

	if (folio_test(folio, PG_anon)) {
		mss->anonymous += size;
		if (!folio_test(folio, PG_swapbacked) && !dirty && !folio_test(folio, PG_dirty))
			mss->lazyfree += size;
	}
	mss->resident += size;
	if (young || folio_test(folio, PG_referenced))
		mss->referenced += size;

	/* One reference: mapped exactly once. (Every entry here is present.) */
	if (folio_ref_count(folio) == 1) {
		smaps_page_accumulate(mss, folio, size, (uint64_t)size << PSS_SHIFT, dirty, locked,
				      true);
		return;
	}
	/* A snapshot of the mapcounts; they may change meanwhile, as in the kernel. */
	for (unsigned long i = 0; i < nr; i++, page++) {
		int mapcount = folio_precise_page_mapcount(folio, page);
		uint64_t pss = (uint64_t)PAGE_SIZE << PSS_SHIFT;

		if (mapcount >= 2)
			pss /= (uint64_t)mapcount;
		smaps_page_accumulate(mss, folio, PAGE_SIZE, pss, dirty, locked, mapcount < 2);
	}
}

static unsigned long linear_page_index(struct vma *vma, unsigned long addr)
{
	return vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT);
}

/* One empty page: is the object's page behind it in swap? (smaps_pte_hole_lookup) */
static void smaps_pte_hole_lookup(struct smaps_walk *w, unsigned long addr)
{
	if (w->shmem_holes == SHMEM_HOLES_NONE)
		return;
	w->lookups++;
	if (shmem_swap_lookup(w->vma->vm_file, linear_page_index(w->vma, addr)))
		w->mss->swap += PAGE_SIZE;
}

/* [start, end) has no page table. */
static int smaps_pte_hole(struct mm *mm, unsigned long start, unsigned long end, void *priv)
{
	struct smaps_walk *w = priv;

	(void)mm;
	if (w->shmem_holes == SHMEM_HOLES_RANGED)
		w->mss->swap += shmem_partial_swap_usage(w->vma->vm_file,
							 linear_page_index(w->vma, start),
							 linear_page_index(w->vma, end));
	else if (w->shmem_holes == SHMEM_HOLES_PER_PAGE)
		for (unsigned long a = start; a < end; a += PAGE_SIZE)
			smaps_pte_hole_lookup(w, a);
	return 0;
}

static void smaps_swap_entry(struct mm *mm, struct mem_size_stats *mss, uint64_t pte)
{
	int users = swap_count(mm->sys, pte >> PT_SWAP_SHIFT);
	uint64_t pss = (uint64_t)PAGE_SIZE << PSS_SHIFT;

	mss->swap += PAGE_SIZE;
	if (users >= 2)
		pss /= (uint64_t)users;
	mss->swap_pss += pss;
}

/* Is every entry of @pt in [start, end) empty? Context: the table's ptl held. */
static bool pte_range_none(struct pte_table *pt, unsigned long start, unsigned long end)
{
	for (unsigned long a = start; a < end; a += PAGE_SIZE)
		if (load_relaxed(&pt->e[pte_index(a)]))
			return false;
	return true;
}

/* Context: the table's ptl held (walk_page_range). */
static int smaps_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
			   unsigned long end, void *priv)
{
	struct smaps_walk *w = priv;
	bool locked = w->vma->vm_flags & VM_LOCKED;

	spin_assert_held(&pt->ptl);
	if (vml_broken(VML_BROKEN_WALK_AGAIN))	/* only then: it costs a scan */
		w->empty_table |= pte_range_none(pt, start, end);
	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		uint64_t pte = load_relaxed(&pt->e[pte_index(a)]);
		struct page *page;

		if (pte_present(pte)) {
			struct folio *folio;

			page = pte_page(pte);
			folio = page_folio(page);
			if (folio_test(folio, PG_anon))
				w->entries++;
			if (folio_is_zero(folio))
				continue;	/* not a normal page (vm_normal_page) */
			smaps_account(w->mss, page, false, pte & PT_YOUNG, pte & PT_DIRTY, locked);
		} else if (pte_is_swap(pte)) {
			w->entries++;
			smaps_swap_entry(mm, w->mss, pte);
		} else {
			smaps_pte_hole_lookup(w, a);
		}
	}
	return 0;
}

/* Context: page_table_lock held; *pmd is a huge leaf. */
static int smaps_pmd_huge(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start,
			  unsigned long end, void *priv)
{
	struct smaps_walk *w = priv;
	uint64_t v = load_relaxed(pmd);
	struct page *page = pte_page(v);
	struct folio *folio = page_folio(page);

	(void)start;
	(void)end;
	spin_assert_held(&mm->page_table_lock);
	if (folio_test(folio, PG_anon))
		w->entries++;
	if (folio_is_zero(folio))
		return 0;	/* the huge zero page is not a normal page */
	if (folio_test(folio, PG_anon))
		w->mss->anonymous_thp += PMD_SIZE;
	else if (folio_test(folio, PG_swapbacked))
		w->mss->shmem_thp += PMD_SIZE;
	else
		w->mss->file_thp += PMD_SIZE;
	/* The whole folio, whatever part of it [start, end) covers. */
	smaps_account(w->mss, &folio->pages[0], true, v & PT_YOUNG, v & PT_DIRTY,
		      w->vma->vm_flags & VM_LOCKED);
	return 0;
}

/*
 * smap_gather_stats - add @vma's pages from @start (0: all of it) to @mss
 * Context: @vma read-locked under RCU (policy VMA) or mmap_lock(R); RCU is
 * dropped before anything that may sleep (shmem_swap_usage, the walk).
 */
static void smap_gather_stats(struct proc_maps_private *priv, struct vma *vma,
			      struct mem_size_stats *mss, unsigned long start)
{
	static const struct pt_walk_ops ops = {
		.pte_range = smaps_pte_range,
		.pmd_huge = smaps_pmd_huge,
		.pte_hole = smaps_pte_hole,
	};
	struct smaps_walk w = { .mss = mss, .vma = vma };

	if (start >= vma->vm_end)
		return;
	proc_walk_begin(priv, vma);
	if (vma->vm_file && vma->vm_file->shmem &&
	    vma->vm_mm->sys->cfg.shmem_swap_usage == VML_SHMEM_SWAP_PER_PAGE) {
		w.shmem_holes = SHMEM_HOLES_PER_PAGE;
	} else if (vma->vm_file && vma->vm_file->shmem) {
		/*
		 * Shared or read-only mappings see only the object's pages, so
		 * its swap counter (or a range count) is the answer; a private
		 * writable one may have COW copies in front of swapped pages.
		 */
		unsigned long swapped = shmem_swap_usage(vma);

		if (!start && (!swapped || (vma->vm_flags & VM_SHARED) ||
			       !(vma->vm_flags & VM_WRITE)))
			mss->swap += swapped;
		else
			w.shmem_holes = SHMEM_HOLES_RANGED;
	}
	walk_page_range(vma->vm_mm, start ? start : vma->vm_start, vma->vm_end, &ops, &w);
	/*
	 * Deliberately broken (VML_BROKEN_WALK_AGAIN): the kernel's
	 * pagewalk_race_test bug - a table emptied under the walk (there:
	 * reclaimed, its PMD cleared) leaves a stale "walk again" that makes
	 * the upper level walk the whole range a second time. The model never
	 * reclaims a PTE table, so an empty one stands in for it.
	 */
	if (vml_broken(VML_BROKEN_WALK_AGAIN) && w.empty_table)
		walk_page_range(vma->vm_mm, start ? start : vma->vm_start, vma->vm_end, &ops, &w);
	if (w.shmem_holes != SHMEM_HOLES_NONE) {
		fetch_add_relaxed(&vma->vm_mm->stats.shmem_swap_per_page, 1);
		fetch_add_relaxed(&vma->vm_mm->stats.shmem_swap_lookups, w.lookups);
	}
	proc_walk_charge(priv, w.entries);
	proc_walk_end(priv, vma);
}

#define SEQ_PUT_DEC(str, val) seq_put_decimal_ull_width(m, str, (val) >> 10, 8)

/* The lines smaps and smaps_rollup share (__show_smap). */
static void __show_smap(struct seq_file *m, const struct mem_size_stats *mss, bool rollup)
{
	SEQ_PUT_DEC("Rss:            ", mss->resident);
	SEQ_PUT_DEC(" kB\nPss:            ", mss->pss >> PSS_SHIFT);
	SEQ_PUT_DEC(" kB\nPss_Dirty:      ", mss->pss_dirty >> PSS_SHIFT);
	if (rollup) {
		/* Per VMA two of these would be zero and the third equal to Pss. */
		SEQ_PUT_DEC(" kB\nPss_Anon:       ", mss->pss_anon >> PSS_SHIFT);
		SEQ_PUT_DEC(" kB\nPss_File:       ", mss->pss_file >> PSS_SHIFT);
		SEQ_PUT_DEC(" kB\nPss_Shmem:      ", mss->pss_shmem >> PSS_SHIFT);
	}
	SEQ_PUT_DEC(" kB\nShared_Clean:   ", mss->shared_clean);
	SEQ_PUT_DEC(" kB\nShared_Dirty:   ", mss->shared_dirty);
	SEQ_PUT_DEC(" kB\nPrivate_Clean:  ", mss->private_clean);
	SEQ_PUT_DEC(" kB\nPrivate_Dirty:  ", mss->private_dirty);
	SEQ_PUT_DEC(" kB\nReferenced:     ", mss->referenced);
	SEQ_PUT_DEC(" kB\nAnonymous:      ", mss->anonymous);
	SEQ_PUT_DEC(" kB\nKSM:            ", mss->ksm);
	SEQ_PUT_DEC(" kB\nLazyFree:       ", mss->lazyfree);
	SEQ_PUT_DEC(" kB\nAnonHugePages:  ", mss->anonymous_thp);
	SEQ_PUT_DEC(" kB\nShmemPmdMapped: ", mss->shmem_thp);
	SEQ_PUT_DEC(" kB\nFilePmdMapped:  ", mss->file_thp);
	SEQ_PUT_DEC(" kB\nShared_Hugetlb: ", mss->shared_hugetlb);
	/* One column wider label, one narrower number: the columns still line up. */
	seq_put_decimal_ull_width(m, " kB\nPrivate_Hugetlb: ", mss->private_hugetlb >> 10, 7);
	SEQ_PUT_DEC(" kB\nSwap:           ", mss->swap);
	SEQ_PUT_DEC(" kB\nSwapPss:        ", mss->swap_pss >> PSS_SHIFT);
	SEQ_PUT_DEC(" kB\nLocked:         ", mss->pss_locked >> PSS_SHIFT);
	seq_puts(m, " kB\n");
}

/* VmFlags mnemonics by bit (show_smap_vma_flags); bits the model never sets print "??". */
static const char vm_flag_mnemonics[32][3] = {
	"rd", "wr", "ex", "sh", "mr", "mw", "me", "ms",
	"gd", "um", "pf", "gu", "uw", "lo", "io", "sr",
	"rr", "dc", "de", "lf", "ac", "nr", "ht", "sf",
	"ar", "wf", "dd", "sd", "mm", "hg", "nh", "mg",
};

static void show_smap_vma_flags(struct seq_file *m, struct vma *vma)
{
	seq_puts(m, "VmFlags: ");
	for (unsigned int i = 0; i < 64; i++) {
		if (!(vma->vm_flags & (1UL << i)))
			continue;
		if (i >= VM_PKEY_SHIFT && i < VM_PKEY_SHIFT + 4)
			continue;	/* protection keys come out as ProtectionKey: */
		seq_puts(m, i < 32 ? vm_flag_mnemonics[i] : (1UL << i) == VM_DROPPABLE ? "dp" :
			    (1UL << i) == VM_SEALED ? "sl" : "??");
		seq_putc(m, ' ');
	}
	seq_putc(m, '\n');
}

static int show_smap(struct seq_file *m, void *v)
{
	struct vma *vma = v;
	struct mem_size_stats mss = { 0 };

	smap_gather_stats(m->private, vma, &mss, 0);
	show_map_vma(m, vma);
	SEQ_PUT_DEC("Size:           ", vma->vm_end - vma->vm_start);
	SEQ_PUT_DEC(" kB\nKernelPageSize: ", PAGE_SIZE);
	SEQ_PUT_DEC(" kB\nMMUPageSize:    ", PAGE_SIZE);
	seq_puts(m, " kB\n");
	__show_smap(m, &mss, false);
	/* Any order at all: an mTHP size counts as much as the PMD size. */
	seq_printf(m, "THPeligible:    %8u\n",
		   thp_vma_allowable_orders(vma, vma->vm_flags, TVA_SMAPS, THP_ORDERS_ALL) ? 1 : 0);
	if (vma->vm_mm->sys->cfg.pkeys)
		seq_printf(m, "ProtectionKey:  %8u\n", vma_pkey(vma));
	show_smap_vma_flags(m, vma);
	return 0;
}

const struct seq_operations proc_pid_smaps_op = {
	.start = proc_maps_seq_start,
	.next = proc_maps_seq_next,
	.stop = proc_maps_seq_stop,
	.show = show_smap,
};

/* Is the reader holding mmap_lock with a waiter queued behind it? */
static bool is_mmap_lock_contended(struct proc_maps_private *priv)
{
	if (!priv->mmap_locked || (priv->flags & VML_READER_NODROP))
		return false;
	return mmap_lock_is_contended(priv->mm);
}

/* Add @vma's part from *@last_vma_end on (all of it if it starts there or later). */
static void rollup_gather(struct seq_file *m, struct proc_maps_private *priv, struct vma *vma,
			  struct mem_size_stats *mss, unsigned long *last_vma_end)
{
	bool straddles = vma->vm_start < *last_vma_end;

	/* Deliberately broken (VML_BROKEN_ROLLUP_RESUME): count the part already counted again. */
	if (vml_broken(VML_BROKEN_ROLLUP_RESUME))
		straddles = false;
	smap_gather_stats(priv, vma, mss, straddles ? *last_vma_end : 0);
	*last_vma_end = vma->vm_end;
	/*
	 * The calibration's charge is per VMA (what the live kernel spends on
	 * each): here, under the lock, not once for the one record.
	 */
	if (unlikely(m->record_ns))
		plat_charge_ns(m->record_ns, PLAT_KERNEL);
}

/* Incremental rollup: the swap behind @vma's empty entries, page by page. */
static int rollup_hole_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
				 unsigned long end, void *priv)
{
	struct smaps_walk *w = priv;

	(void)mm;
	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		uint64_t pte = load_relaxed(&pt->e[pte_index(a)]);

		if (!pte_present(pte) && !pte_is_swap(pte))
			smaps_pte_hole_lookup(w, a);
	}
	return 0;
}

/*
 * rollup_shmem_swap - what smap_gather_stats() adds for a shmem VMA's
 * object in swap, which no page table shows (so mm->rollup lacks it).
 * Context: RCU held (@vma found under it); returns with RCU held. Takes
 * @vma's read lock - never mmap_lock - only for a private writable
 * mapping of a partly swapped object, whose empty entries it walks: that
 * VMA itself, locked while RCU still keeps it. If a writer has it, the VMA
 * at its start is looked up again when the writer is done and decided
 * anew: one unmapped or replaced meanwhile is counted as the tree has it
 * then (the walk once used the first VMA's pointer with the second's
 * range: a use after free, and waited for ever on a VMA unmapped).
 */
static void rollup_shmem_swap(struct mm *mm, struct vma *vma, struct mem_size_stats *mss)
{
	static const struct pt_walk_ops ops = {
		.pte_range = rollup_hole_pte_range,
		.pmd_huge = NULL,
		.pte_hole = smaps_pte_hole,
	};
	struct smaps_walk w = { .mss = mss };
	unsigned long swapped, start = vma->vm_start;

	/* Ends: a VMA is write-locked only while its writer holds mmap_lock(W). */
	for (;;) {
		if (mm->sys->cfg.shmem_swap_usage == VML_SHMEM_SWAP_PER_PAGE) {
			w.shmem_holes = SHMEM_HOLES_PER_PAGE;
		} else {
			swapped = shmem_swap_usage(vma);
			if (!swapped || (vma->vm_flags & VM_SHARED) ||
			    !(vma->vm_flags & VM_WRITE)) {
				mss->swap += swapped;
				return;
			}
			w.shmem_holes = SHMEM_HOLES_RANGED;
		}
		if (!vma_start_read(mm, vma))
			break;
		/* RCU is out (vma_start_read's failure): look again once the writer is done */
		plat_yield();
		vml_rcu_read_lock();
		vma = rtree_find(&mm->mm_mt, start, NULL);
		if (!vma || vma->vm_start != start || !vma->vm_file || !vma->vm_file->shmem)
			return;
	}
	vml_rcu_read_unlock();
	w.vma = vma;
	if (vma->vm_start == start)
		walk_page_range(mm, vma->vm_start, vma->vm_end, &ops, &w);
	vma_end_read(vma);
	vml_rcu_read_lock();
}

/*
 * show_smaps_rollup_incremental - the record from the sums the mm keeps
 * (VML_ROLLUP_INCREMENTAL, mm/rollup.c): no page walk, no mmap_lock.
 * The header's range comes from the VMA tree under RCU; shmem VMAs (if
 * any) add their objects' swap.
 */
static int show_smaps_rollup_incremental(struct seq_file *m, struct proc_maps_private *priv)
{
	struct mm *mm = priv->mm;
	struct mem_size_stats mss = { 0 };
	unsigned long vma_start = 0, vma_end = 0;
	struct rollup_sums s;
	struct vma *vma;

	int ret;

	if (!mmget_not_zero(mm))
		return -ESRCH;
	ret = rollup_read(mm, &s);
	if (ret) {
		mmput(mm);
		return ret;
	}
	mss.resident = s.v[RU_RSS];
	mss.pss = s.v[RU_PSS];
	mss.pss_dirty = s.v[RU_PSS_DIRTY];
	mss.pss_anon = s.v[RU_PSS_ANON];
	mss.pss_file = s.v[RU_PSS_FILE];
	mss.pss_shmem = s.v[RU_PSS_SHMEM];
	mss.shared_clean = s.v[RU_SHARED_CLEAN];
	mss.shared_dirty = s.v[RU_SHARED_DIRTY];
	mss.private_clean = s.v[RU_PRIVATE_CLEAN];
	mss.private_dirty = s.v[RU_PRIVATE_DIRTY];
	mss.referenced = s.v[RU_REFERENCED];
	mss.anonymous = s.v[RU_ANONYMOUS];
	mss.lazyfree = s.v[RU_LAZYFREE];
	mss.anonymous_thp = s.v[RU_ANON_THP];
	mss.shmem_thp = s.v[RU_SHMEM_THP];
	mss.file_thp = s.v[RU_FILE_THP];
	mss.swap = s.v[RU_SWAP];
	mss.swap_pss = s.v[RU_SWAP_PSS];
	mss.pss_locked = s.v[RU_PSS_LOCKED];
	vml_rcu_read_lock();
	vma = rtree_find_next(&mm->mm_mt, 0, NULL);
	if (vma) {
		vma_start = vma->vm_start;
		vma = rtree_find_prev(&mm->mm_mt, TASK_SIZE + 1, NULL);
		vma_end = vma ? vma->vm_end : 0;
	}
	if (load_relaxed(&mm->rollup_shmem_vmas)) {
		unsigned long a = 0;

		/* Ends: each step moves past a VMA's end. */
		while ((vma = rtree_find_next(&mm->mm_mt, a, NULL))) {
			a = vma->vm_end;	/* rollup_shmem_swap may leave RCU */
			if (vma->vm_file && vma->vm_file->shmem)
				rollup_shmem_swap(mm, vma, &mss);
		}
	}
	vml_rcu_read_unlock();
	mmput(mm);
	show_vma_header_prefix(m, vma_start, vma_end, 0, 0, 0, 0, 0);
	seq_pad(m, ' ');
	seq_puts(m, "[rollup]\n");
	__show_smap(m, &mss, true);
	return 0;
}

/*
 * show_smaps_rollup - the sum of every VMA's smaps in one record.
 *
 * Policy MMAP (mainline since 5.10): mmap_lock(R), VMA by VMA. After each
 * VMA, if someone waits for mmap_lock, drop it and take it again, then go on
 * from where the last VMA ended: the next VMA if it starts there or later
 * (the last one is gone or unchanged), nothing if there is none, or - if a
 * VMA now straddles the old end (the last one grew or merged) - only its
 * part from that end; that VMA and the one after it are gathered before
 * the next check, as the kernel's loop does. The re-take normally steals
 * the lock back from the writer it was dropped for (docs/kernel.md §5.3);
 * with VML_READER_NOSTEAL it queues behind it (the 2026
 * down_read_nosteal), so the writer gets in.
 *
 * Policy VMA (2026): VMA by VMA under RCU and the VMA's read lock, RCU
 * dropped for each page walk. A VMA that cannot be locked is found under
 * mmap_lock (lock_next_vma); if the read fell back to holding mmap_lock
 * (reference overflow), the contended drop above applies, and the re-take
 * returns to RCU.
 *
 * Header: [first VMA's start, last VMA's end), or 0-0 for an empty mm.
 */
static int show_smaps_rollup(struct seq_file *m, void *v)
{
	struct proc_maps_private *priv = m->private;
	struct mem_size_stats mss = { 0 };
	unsigned long vma_start = 0, last_vma_end = 0;
	int64_t pos = 0;
	struct vma *vma;
	int ret;

	(void)v;
	if (mm_rollup_incremental(priv->mm) && !(priv->flags & VML_READER_ROLLUP_WALK))
		return show_smaps_rollup_incremental(m, priv);
	ret = proc_maps_start(priv, &pos, &vma);
	if (ret)
		goto out;
	if (vma)
		vma_start = vma->vm_start;
	/* Ends: each step moves pos past a VMA's end, and addresses are bounded. */
	while (vma) {
		rollup_gather(m, priv, vma, &mss, &last_vma_end);

		/* Let a queued writer in; pos (last_vma_end) is where the walk resumes. */
		if (is_mmap_lock_contended(priv)) {
			stat_inc(&priv->mm->stats.proc_contended_drops);
			ret = proc_maps_relock(priv, (priv->flags & VML_READER_NOSTEAL) ||
						     mmap_retake_nosteal(priv->mm));
			if (ret)
				goto out;
			/*
			 * The VMA found after the re-take is gathered at once, and the
			 * loop's own step gathers the one after it before the next check,
			 * as 6.18 does (its cases 1, 2 and 4 gather, then continue to the
			 * loop's vma_next): while a writer waits, a hold covers two VMAs.
			 */
			ret = proc_maps_next(priv, &pos, &vma);
			if (ret)
				goto out;
			if (!vma)
				break;
			rollup_gather(m, priv, vma, &mss, &last_vma_end);
		}
		ret = proc_maps_next(priv, &pos, &vma);
		if (ret)
			goto out;
	}
	show_vma_header_prefix(m, vma_start, last_vma_end, 0, 0, 0, 0, 0);
	seq_pad(m, ' ');
	seq_puts(m, "[rollup]\n");
	__show_smap(m, &mss, true);
out:
	proc_maps_stop(priv);
	return ret;
}

#undef SEQ_PUT_DEC

/* single_open: one record at position 0. */
static int single_start(struct seq_file *m, int64_t *pos, void **v)
{
	(void)m;
	*v = *pos == 0 ? (void *)1 : NULL;
	return 0;
}

static int single_next(struct seq_file *m, void *v, int64_t *pos, void **next)
{
	(void)m;
	(void)v;
	++*pos;
	*next = NULL;
	return 0;
}

static void single_stop(struct seq_file *m, void *v)
{
	(void)m;
	(void)v;
}

const struct seq_operations proc_pid_smaps_rollup_op = {
	.start = single_start,
	.next = single_next,
	.stop = single_stop,
	.show = show_smaps_rollup,
};
