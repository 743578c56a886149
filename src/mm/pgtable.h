/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pgtable.h - four-level page tables with split PTE locks.
 *
 * Tables are allocated on demand (upper levels populated under
 * mm->page_table_lock). An unmap frees the tables no VMA needs any more
 * (free_pgtables): under mmap_lock(W) - or (R), after munmap(2)'s
 * downgrade - only where no VMA but the writer's own write-locked ones
 * meets the table's span, and through RCU after clearing the entry above.
 * So a walker holding mmap_lock or a VMA lock may follow the entries of its
 * VMA's range without a lock; one holding neither
 * (the "hardware" access path, a reverse-map walk) does so under RCU and
 * rechecks the entry it came by once it has the ptl (pte_offset_map_lock).
 * A PTE entry is read and written under its table's ptl; the one
 * exception is the "hardware" access path (pte_access_fast), which sets
 * dirty/young bits with a compare-and-swap on an entry it saw present.
 * A huge (PMD) leaf is changed under mm->page_table_lock.
 */
#ifndef VML_MM_PGTABLE_H
#define VML_MM_PGTABLE_H

#include "mm/mm_types.h"
#include "mm/pgtable_types.h"
#include "mm/rollup.h"
#include "sync/spinlock.h"
#include "util/compiler.h"

int pgtable_alloc_pgd(struct mm *mm);
/* A zeroed PTE table with its lock initialised, or NULL (huge PMD deposits; pgtable.c). */
struct pte_table *pte_table_alloc(void);
/* Free @pt after an RCU grace period (a lock-free walker may still read it). */
void pte_table_free_rcu(struct pte_table *pt);
/* Context: no other user of the mm; every entry already zapped. */
void pgtable_free_all(struct mm *mm);

/*
 * The PMD entry covering @addr, allocating upper tables if @alloc.
 * Return: the entry, or NULL (absent, or -ENOMEM in *err when allocating).
 */
_Atomic uint64_t *pmd_offset(struct mm *mm, unsigned long addr, bool alloc, int *err);
/* The PTE table under a non-huge PMD entry, allocating it if @alloc. */
struct pte_table *pte_table_get(struct mm *mm, _Atomic uint64_t *pmd, unsigned long addr,
			       bool alloc, int *err);

static inline void pte_lock(struct pte_table *pt)
{
	spin_lock(&pt->ptl);
}

/*
 * With incremental rollup sums, every unlock counts the table again: what
 * its holder changed reaches mm->rollup before another holder can change
 * the entries (one predictable branch when the sums are off).
 */
static inline void pte_unlock(struct pte_table *pt)
{
	if (unlikely(load_relaxed(&pt->rollup_mm) != NULL))
		rollup_pte_table_update(pt);
	spin_unlock(&pt->ptl);
}

/*
 * The locked PTE table mapping @addr, or NULL (none, or a huge leaf). For a
 * walker that holds neither mmap_lock nor a lock on a VMA covering @addr
 * (rmap): it holds RCU until pte_unmap_unlock(), so the table cannot be
 * freed under it, and returns NULL if the table was freed or moved away.
 */
struct pte_table *pte_offset_map_lock(struct mm *mm, unsigned long addr);
void pte_unmap_unlock(struct pte_table *pt);

/*
 * A walk over [start, end): callbacks see every PTE table (with its ptl
 * held, the sub-range it covers), every huge PMD leaf (page_table_lock
 * held) and every hole without a table. Return non-zero to stop.
 * Context: mmap_lock or a VMA read lock covering the range.
 */
struct pt_walk_ops {
	int (*pte_range)(struct mm *mm, struct pte_table *pt, unsigned long start,
			 unsigned long end, void *priv);
	int (*pmd_huge)(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start,
			unsigned long end, void *priv);
	int (*pte_hole)(struct mm *mm, unsigned long start, unsigned long end, void *priv);
};
int walk_page_range(struct mm *mm, unsigned long start, unsigned long end,
		    const struct pt_walk_ops *ops, void *priv);

/*
 * Unmap every page in [start, end) and drop the guard markers there: the
 * unmap of a range (unmap_vmas, ZAP_FLAG_DROP_MARKER).
 * Context: the VMAs are write-locked or gone.
 */
void zap_page_range(struct mm *mm, unsigned long start, unsigned long end);
/*
 * zap_page_range for the unmap of VMAs some of which were VM_LOCKED
 * (@locked): a large folio losing a mapping there is munlocked whole, also
 * the part that stays mapped and locked (the kernel's __folio_remove_rmap
 * calls munlock_vma_folio for any unmap in a locked VMA; a large folio's
 * mlock count is 1 as it is locked only wholly inside one VMA). The model
 * does it for the whole range, locked VMAs or not: the unmapped VMAs are
 * gone from the tree by now, and a large folio still mlocked in an
 * unlocked VMA (MREMAP_DONTUNMAP's source) is the only case that differs.
 */
void zap_unmapped_range(struct mm *mm, unsigned long start, unsigned long end, bool locked);
/*
 * The same, keeping the guard markers (zap_page_range_single with no
 * details): MADV_DONTNEED, and MADV_GUARD_INSTALL making room for markers.
 * Context: mmap_lock held, or (MADV_DONTNEED inside one VMA) that VMA's
 * read lock alone; the range lies in VMAs that stay. Faults may map pages
 * in the range meanwhile (what they map after the walk passed stays).
 */
void zap_page_range_single(struct mm *mm, unsigned long start, unsigned long end);
/*
 * The same for a file's truncation or hole (unmap_mapping_range): with
 * @even_cows also the private copies of the file's pages (and their swap
 * entries) - truncation - else only the page cache's own pages, the zero
 * page and what is not anonymous. Guard markers stay.
 * Context: mmap_lock(R) of @mm; the range lies in one VMA mapping the file.
 */
void zap_mapping_range(struct mm *mm, unsigned long start, unsigned long end, bool even_cows);
/*
 * retract_empty_pte_table - free the PTE table at @addr's PMD if every entry
 * of it is empty (khugepaged's retract_page_tables, collapse_pte_mapped_thp):
 * a later fault there finds no table and may map a huge folio by the PMD.
 * Return: true if the PMD is empty now. Context: mmap_lock(R) or (W).
 */
bool retract_empty_pte_table(struct mm *mm, unsigned long addr);

/*
 * mmu_gather (asm-generic/tlb.h): the pages a zap unmapped, their last
 * references dropped later. The kernel gathers up to MAX_GATHER_BATCH_COUNT
 * pages of pointers (19 x 510 on 4 KiB pages) besides its on-stack bundle of
 * 8, frees them on the spot when full, and the rest at tlb_finish_mmu(),
 * which 6.18's madvise(MADV_DONTNEED) calls after it dropped the VMA's read
 * lock: a writer waiting for that VMA waits for the unmapping and the full
 * gathers' frees, not the last one's
 * (docs/findings/2026-12-02-vma-wait-gather.md). Here the
 * bundle grows to the whole gather at once; a huge PMD's folio is freed at
 * once (the kernel gathers it too).
 */
#define MMU_GATHER_BUNDLE 8
#define MMU_GATHER_MAX_PAGES (MMU_GATHER_BUNDLE + 19 * 510)
/* The zapping thread's own (on its stack): no lock. */
struct mmu_gather {
	struct vml_sys *sys;
	struct folio **folios;		/* bundle (room for 8), or once grown MMU_GATHER_MAX_PAGES */
	unsigned int nr;
	struct folio *bundle[MMU_GATHER_BUNDLE];	/* the first 8 */
};
/* Start an empty gather for @mm's zaps (it grows as it fills; cannot fail). */
void tlb_gather_mmu(struct mmu_gather *tlb, struct mm *mm);
/* Drop what @tlb still holds, and the gather. Context: no lock needed. */
void tlb_finish_mmu(struct mmu_gather *tlb);
/* zap_page_range_single, the pages' references dropped through @tlb. */
void zap_page_range_single_batched(struct mm *mm, struct mmu_gather *tlb, unsigned long start,
				   unsigned long end);
/*
 * Guard markers: install one in every empty entry of [start, end)
 * (allocating page tables; entries that are not empty must have been
 * zapped first), or clear every marker there. Return: 0 or -ENOMEM
 * (markers up to the failing table are in place, as in the kernel).
 * Context: mmap_lock held.
 */
int guard_install_range(struct mm *mm, unsigned long start, unsigned long end);
void guard_remove_range(struct mm *mm, unsigned long start, unsigned long end);
/*
 * struct unmap_range - a range whose VMAs are gone and the free space around
 * it when they went: @floor is the end of the VMA below (0 if none),
 * @ceiling the start of the VMA above (0 if none: the top).
 */
struct unmap_range {
	unsigned long start, end;
	unsigned long floor, ceiling;
	bool locked;		/* a VMA unmapped here was VM_LOCKED (zap_unmapped_range) */
};

/*
 * free_pgtables - after the zap, free the page tables of @u's range that no
 * VMA needs: at every level, a table whose span meets [start, end) and lies
 * within [floor, ceiling) (the kernel's free_pgd_range). An upper-level
 * table goes only once its entries are all gone. Memory is freed after an
 * RCU grace period.
 * Context: mmap_lock(W); any VMA now in [floor, ceiling) is write-locked by
 * this writer (a MAP_FIXED or mremap destination). Or mmap_lock(R) after
 * munmap(2)'s downgrade, when no VMA meets [floor, ceiling) at all.
 */
void free_pgtables(struct mm *mm, const struct unmap_range *u);

/*
 * Make the entries of [start, end) agree with new VMA flags: no write bit
 * without VM_WRITE, inaccessible (PT_PROTNONE) without any access flag,
 * denied data access (PT_PKEY) under a non-zero protection key.
 * @writable_prot: the mapping is shared and writable and needs no write
 * notification (shmem), so its protection itself allows writes and every
 * present entry becomes writable (change_pte_range's pte_modify). In a
 * private writable mapping an anonymous page its process has to itself
 * (PageAnonExclusive) gets write permission back, clean
 * (MM_CP_TRY_CHANGE_WRITABLE); others are made writable only by a write
 * fault.
 */
void change_protection(struct mm *mm, unsigned long start, unsigned long end,
		       unsigned long vm_flags, bool writable_prot);
/* Lock-free "hardware" access: set young (and dirty) on a PTE that already allows it. */
bool pte_access_fast(struct mm *mm, unsigned long addr, bool write);
/* The same for a user's store: a write access that also puts data in the page (PAGE_DATA). */
bool pte_store_fast(struct mm *mm, unsigned long addr);
/* Tables set aside before a commit, so that moving the page tables after it cannot fail. */
struct pgt_reserve {
	struct pte_table *pte;
	struct pmd_table *pmd;
	struct pt_table *pud;
};

/*
 * Set aside every table a move of [old, old+len) to [new, new+len) may
 * need. Return 0 or -ENOMEM (nothing set aside). Context: mmap_lock(W).
 */
int pgtable_prepare_move(struct mm *mm, unsigned long old_addr, unsigned long new_addr,
			 unsigned long len, struct pgt_reserve *res);
void pgt_reserve_release(struct pgt_reserve *res);
/*
 * Move the entries (move_page_tables): a whole huge PMD or PTE table when
 * a step covers an aligned PMD on both sides and the destination has no
 * entry there, else entry by entry. The destination gets tables (from @res,
 * which is released) only where the source has a PMD entry.
 */
void move_page_tables(struct mm *mm, unsigned long old_addr, unsigned long new_addr,
		      unsigned long len, struct pgt_reserve *res);

/*
 * folio_pte_batch - the entries from @a (before @end, inside @pt) that map
 * consecutive pages of @folio starting with @page, at least 1 (madvise's and
 * mlock's folio_pte_batch). Context: the table is stable (ptl or mmap_lock).
 */
unsigned long folio_pte_batch(struct pte_table *pt, unsigned long a, unsigned long end,
			      struct folio *folio, struct page *page);

#endif /* VML_MM_PGTABLE_H */
