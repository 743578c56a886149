// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pgtable.c - page tables: allocation, walking, zapping, freeing,
 * protection changes and moving (mm/memory.c, mm/pagewalk.c,
 * mm/pgtable-generic.c, mm/mprotect.c change_pte_range, mm/mremap.c
 * move_page_tables). The types are in pgtable_types.h.
 *
 * Design
 * ======
 *
 * Walkers. Nothing in vmalock locks a page table to walk down it: every
 * walk reads the upper-level entries (PGD, PUD, PMD) with plain atomic
 * loads, and locks only at the bottom - a PTE table's ptl, or
 * page_table_lock for a huge PMD leaf. Four kinds of walker:
 *   - a holder of mmap_lock (R or W): a writer's zap, protection change or
 *     move, fork, populate, khugepaged, a /proc view under policy MMAP;
 *   - a holder of a VMA read lock, for addresses in that VMA: a fault under
 *     the VMA lock, a /proc view under policy VMA (RCU dropped for the walk),
 *     MADV_DONTNEED's zap inside one VMA;
 *   - the "hardware" access path (pte_access_fast), which holds neither, as
 *     an MMU does: RCU for the whole walk;
 *   - the reverse map (split_file_folio -> pte_offset_map_lock), which holds
 *     i_mmap_rwsem and can reach a VMA of another mm, also neither: RCU until
 *     pte_unmap_unlock(), and a recheck of the PMD entry under the ptl.
 *
 * Who changes what:
 *   - Upper-level entries change only under mm->page_table_lock.
 *     0 -> table: populate_entry() (faults, populate, fork: whoever needs a
 *     table; the loser of a race frees its copy) and reserve_install()
 *     (mremap, from tables set aside before its commit). Table -> 0:
 *     free_pgtables() and khugepaged's collapse, under mmap_lock(W) (munmap's
 *     free_pgtables: (R) after its downgrade, below). A whole
 *     PTE table or huge leaf moves from one PMD entry to another
 *     (move_page_tables, move_huge_pmd) under mmap_lock(W) with both VMAs
 *     write-locked. A PMD entry also turns into a huge leaf and back
 *     (huge_pmd_install, zap_huge_pmd, split_huge_pmd_locked: huge_memory.c).
 *   - A PTE changes under its table's ptl, with one exception: the
 *     "hardware" sets young and dirty with a compare-and-swap on an entry
 *     it found present and allowing the access. So whoever replaces a
 *     present entry does it with an exchange or a CAS (zap, unmap, move,
 *     change_protection, clear_pte_bits, fork's write-protect) or stores a
 *     value that already has those bits (do_wp_page); plain stores go to
 *     empty or non-present entries and to tables nobody can reach yet (so
 *     does a guard marker, PT_GUARD: installed in an empty entry, cleared
 *     by MADV_GUARD_REMOVE, moved by mremap and copied by fork like a swap
 *     entry, dropped by an unmap's zap but kept by MADV_DONTNEED's).
 *     split_anon_folio() (reclaim.c), which re-points a present PTE, and
 *     copy_huge_pmd() (fork), which write-protects a huge leaf, use a CAS
 *     too.
 *
 * Why a lock-free walk never meets a freed table. Tables are freed only by
 * free_pgtables(): under mmap_lock(W), after the commit and the zap, only
 * where no VMA meets the table's span but the writer's own new ones, which
 * stay write-locked until mmap_write_unlock(); munmap(2) frees them after
 * downgrading to mmap_lock(R), where no VMA meets the span at all and none
 * can be mapped there until it unlocks. The entry above is cleared under
 * page_table_lock and the table freed through vml_call_rcu(). So a holder
 * of mmap_lock walking its VMAs' ranges never meets it (no walk of this
 * model leaves its VMAs' ranges), a holder of a VMA read lock walks only
 * tables under its own VMA (which no writer may unmap while it is locked),
 * and an RCU walker finishes before the grace period ends. Collapse clears
 * a PMD entry but keeps the table (it becomes the huge leaf's deposit), and
 * a move only changes which entry points to a table. A walker that locks a
 * PTE table found without mmap_lock or a VMA lock (pte_offset_map_lock)
 * rechecks under the ptl that the PMD entry still points to it: a table
 * moved or freed meanwhile maps nothing of its address any more.
 *
 * Ordering, in pairs:
 *  P1  publication: every store that changes what an upper-level entry
 *      points to - a table, a huge leaf, or nothing - is a release
 *      (populate_entry, reserve_install, move_page_tables, the huge_memory.c
 *      leaf changes, the clears), and every lock-free read of one is an
 *      acquire (the walks here, handle_mm_fault, collapse, fork): a walker
 *      that sees a table pointer sees that table's entries as they were when
 *      it was published (zeroed, or filled by a split); one that sees a huge
 *      leaf sees its folio set up. A 0 publishes nothing; it is a release
 *      only so that every value a walker can read is. Changing only a huge
 *      leaf's permission or access bits (change_protection, the hardware
 *      path, MADV_COLD and MADV_FREE) publishes nothing either: those are
 *      relaxed CASes, as on PTEs.
 *  P2  PTEs carry no ordering of their own: whoever uses what a PTE points
 *      to holds the ptl (its unlock, a release, pairs with the next lock's
 *      acquire), and the lock-free readers of a PTE - the hardware path,
 *      handle_mm_fault's first look - use only the entry's bits, and
 *      recheck under the ptl before anything else. PTEs are read and
 *      changed with relaxed atomics.
 *  P3  freeing: the grace period between clearing an entry and freeing the
 *      table orders every RCU walker that may still hold the old pointer
 *      before the free (vml_call_rcu; rcu.c tells ThreadSanitizer).
 *
 * Cost: a walk is four dependent loads to the PMD entry; a walk over a
 * sparse range skips a whole empty PGD or PUD entry at once (pmd_lookup).
 */
#include <errno.h>
#include <string.h>

#include "mm/folio.h"
#include "mm/huge_memory.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm/swap.h"
#include "platform/platform.h"
#include "util/alloc.h"
#include "util/compiler.h"

int pgtable_alloc_pgd(struct mm *mm)
{
	mm->pgd = vml_zalloc(sizeof(struct pt_table));
	return mm->pgd ? 0 : -ENOMEM;
}

/* Zeroed tables of each kind (the allocators populate_entry() takes). */
static void *pud_table_alloc(void)
{
	return vml_zalloc(sizeof(struct pt_table));
}

static void *pmd_table_alloc(void)
{
	return vml_zalloc(sizeof(struct pmd_table));
}

struct pte_table *pte_table_alloc(void)
{
	struct pte_table *pt = vml_zalloc(sizeof(*pt));

	if (pt) {
		spin_lock_init(&pt->ptl, LOCK_CLASS_PTL);
		INIT_LIST_HEAD(&pt->rollup_node);
	}
	return pt;
}

/* Free a PMD table with its PTE tables and deposits. Context: nobody else uses the mm. */
static void free_pmd_table(struct pmd_table *pmd)
{
	for (int i = 0; i < PTRS_PER_TABLE; i++) {
		uint64_t v = load_relaxed(&pmd->e[i]);

		vml_free(pmd->deposit[i]);
		if (v && !pmd_is_huge(v))
			vml_free(pmd_pte_table(v));
	}
	vml_free(pmd);
}

static void free_pud_table(struct pt_table *pud)
{
	for (int i = 0; i < PTRS_PER_TABLE; i++) {
		uint64_t v = load_relaxed(&pud->e[i]);

		if (v)
			free_pmd_table(pud_pmd_table(v));
	}
	vml_free(pud);
}

void pgtable_free_all(struct mm *mm)
{
	if (!mm->pgd)
		return;
	for (int i = 0; i < PTRS_PER_TABLE; i++) {
		uint64_t v = load_relaxed(&mm->pgd->e[i]);

		if (v)
			free_pud_table(pgd_pud_table(v));
	}
	vml_free(mm->pgd);
	mm->pgd = NULL;
}

/*
 * Follow (or create) one upper-level entry. Racing creators are resolved
 * under page_table_lock; the loser frees its table.
 */
static uint64_t populate_entry(struct mm *mm, _Atomic uint64_t *e, void *(*table_alloc)(void),
			       bool alloc, int *err)
{
	/* acquire: pairs with the release that published the entry (P1) */
	uint64_t v = load_acquire(e);
	void *fresh;

	if (v || !alloc)
		return v;
	fresh = table_alloc();
	if (!fresh) {
		*err = -ENOMEM;
		return 0;
	}
	spin_lock(&mm->page_table_lock);
	v = load_relaxed(e);
	if (!v) {
		v = (uint64_t)(uintptr_t)fresh | PT_TABLE;
		/* release: pairs with the walkers' acquire loads of the entry: they see a zeroed table (P1) */
		store_release(e, v);
		fresh = NULL;
	}
	spin_unlock(&mm->page_table_lock);
	vml_free(fresh);
	return v;
}

_Atomic uint64_t *pmd_offset(struct mm *mm, unsigned long addr, bool alloc, int *err)
{
	_Atomic uint64_t *e = &mm->pgd->e[pgd_index(addr)];
	uint64_t v;

	v = populate_entry(mm, e, pud_table_alloc, alloc, err);
	if (!v)
		return NULL;
	e = &pgd_pud_table(v)->e[pud_index(addr)];
	v = populate_entry(mm, e, pmd_table_alloc, alloc, err);
	if (!v)
		return NULL;
	return &pud_pmd_table(v)->e[pmd_index(addr)];
}

struct pte_table *pte_table_get(struct mm *mm, _Atomic uint64_t *pmd, unsigned long addr,
			       bool alloc, int *err)
{
	/* acquire: pairs with the release that published the entry (P1) */
	uint64_t v = load_acquire(pmd);
	struct pte_table *fresh;

	if (pmd_is_huge(v))
		return NULL;
	if (!v && alloc) {
		fresh = pte_table_alloc();
		if (!fresh) {
			*err = -ENOMEM;
			return NULL;
		}
		/* Counted for the incremental rollup from the start: it is empty. */
		if (mm_rollup_incremental(mm)) {
			fresh->rollup_addr = addr & PMD_MASK;
			store_relaxed(&fresh->rollup_mm, mm);
		}
		spin_lock(&mm->page_table_lock);
		v = load_relaxed(pmd);
		if (!v) {
			v = (uint64_t)(uintptr_t)fresh | PT_TABLE;
			/* release: pairs with the walkers' acquire loads of the entry: they see a zeroed table (P1) */
			store_release(pmd, v);
			fresh = NULL;
		}
		spin_unlock(&mm->page_table_lock);
		vml_free(fresh);
	}
	/* A huge leaf may have been installed meanwhile. */
	if (!v || pmd_is_huge(v))
		return NULL;
	return pmd_pte_table(v);
}

struct pte_table *pte_offset_map_lock(struct mm *mm, unsigned long addr)
{
	_Atomic uint64_t *pmd;
	struct pte_table *pt;
	uint64_t v;
	int err = 0;

	vml_rcu_read_lock();
	pmd = pmd_offset(mm, addr, false, &err);
	/* acquire: pairs with the release that published the entry (P1) */
	v = pmd ? load_acquire(pmd) : 0;
	if (!v || pmd_is_huge(v)) {
		vml_rcu_read_unlock();
		return NULL;
	}
	pt = pmd_pte_table(v);
	pte_lock(pt);
	/* Freed or moved away meanwhile: nothing of @addr is in it any more. */
	if (load_relaxed(pmd) != v) {
		pte_unlock(pt);
		vml_rcu_read_unlock();
		return NULL;
	}
	return pt;
}

void pte_unmap_unlock(struct pte_table *pt)
{
	pte_unlock(pt);
	vml_rcu_read_unlock();
}

/*
 * The PMD entry for @addr without allocating, or NULL with *skip_to set to
 * the end of the empty upper-level range around @addr (so walks over sparse
 * address spaces skip whole gigabytes at once).
 */
static _Atomic uint64_t *pmd_lookup(struct mm *mm, unsigned long addr, unsigned long *skip_to)
{
	/* acquire: pairs with the release that published the entry (P1) */
	uint64_t v = load_acquire(&mm->pgd->e[pgd_index(addr)]);

	if (!v) {
		*skip_to = (addr & ~((1UL << PGDIR_SHIFT) - 1)) + (1UL << PGDIR_SHIFT);
		return NULL;
	}
	v = load_acquire(&pgd_pud_table(v)->e[pud_index(addr)]);	/* the same pairs with (P1) */
	if (!v) {
		*skip_to = (addr & ~((1UL << PUD_SHIFT) - 1)) + (1UL << PUD_SHIFT);
		return NULL;
	}
	return &pud_pmd_table(v)->e[pmd_index(addr)];
}

int walk_page_range(struct mm *mm, unsigned long start, unsigned long end,
		    const struct pt_walk_ops *ops, void *priv)
{
	unsigned long addr = start, next;
	int ret = 0;

	while (addr < end && !ret) {
		unsigned long skip_to = 0;
		_Atomic uint64_t *pmd = pmd_lookup(mm, addr, &skip_to);
		uint64_t v;

		next = pmd ? (addr & PMD_MASK) + PMD_SIZE : skip_to;
		if (next > end || next < addr)
			next = end;
		/* acquire: pairs with the release that published the entry (P1) */
		v = pmd ? load_acquire(pmd) : 0;
		if (!v) {
			if (ops->pte_hole)
				ret = ops->pte_hole(mm, addr, next, priv);
		} else if (pmd_is_huge(v)) {
			if (ops->pmd_huge) {
				spin_lock(&mm->page_table_lock);
				/* Recheck under the lock: it may have been split. */
				if (pmd_is_huge(load_relaxed(pmd))) {
					ret = ops->pmd_huge(mm, pmd, addr, next, priv);
					/* what the callback changed in the leaf, if it stays */
					rollup_pmd_update(mm, pmd, addr);
					spin_unlock(&mm->page_table_lock);
				} else {
					spin_unlock(&mm->page_table_lock);
					continue;
				}
			}
		} else if (ops->pte_range) {
			struct pte_table *pt = pmd_pte_table(v);

			pte_lock(pt);
			ret = ops->pte_range(mm, pt, addr, next, priv);
			pte_unlock(pt);
		}
		addr = next;
	}
	return ret;
}

/* What a zap does besides clearing entries (zap_details). */
struct zap_details {
	bool drop_guard;		/* an unmap: guard markers go too */
	bool munlock;			/* an unmap of VM_LOCKED VMAs (zap_unmapped_range) */
	bool skip_cows;			/* unmap_mapping_range without even_cows: the
					 * page cache's pages only, not private copies */
	struct mmu_gather *tlb;		/* free the pages through it; NULL: at once */
};

void tlb_gather_mmu(struct mmu_gather *tlb, struct mm *mm)
{
	tlb->sys = mm->sys;
	tlb->folios = tlb->bundle;
	tlb->nr = 0;
}

/* An unmapped page's last step: out of the swap cache if unused, and its reference dropped. */
static void free_page_and_swap_cache(struct vml_sys *sys, struct folio *folio)
{
	free_swap_cache(sys, folio);
	folio_put(folio);
}

/* Free what the gather holds (tlb_flush_mmu's free_pages_and_swap_cache). */
static void tlb_flush_mmu(struct mmu_gather *tlb)
{
	for (unsigned int i = 0; i < tlb->nr; i++)
		free_page_and_swap_cache(tlb->sys, tlb->folios[i]);
	tlb->nr = 0;
}

void tlb_finish_mmu(struct mmu_gather *tlb)
{
	tlb_flush_mmu(tlb);
	if (tlb->folios != tlb->bundle)
		vml_free(tlb->folios);
	tlb->folios = NULL;
}

/*
 * Room for the gather to grow beyond its bundle, as the kernel's
 * tlb_next_batch() allocates batches while it may. Return: whether it grew.
 */
static bool tlb_grow(struct mmu_gather *tlb)
{
	struct folio **f;

	if (tlb->folios != tlb->bundle)
		return false;	/* grown once to the kernel's most */
	f = vml_malloc(MMU_GATHER_MAX_PAGES * sizeof(*f));
	if (!f)
		return false;	/* the kernel without a page: it frees the bundle */
	memcpy(f, tlb->bundle, sizeof(tlb->bundle));
	tlb->folios = f;
	return true;
}

/* How many pages the gather holds at most now. */
static unsigned int tlb_room(const struct mmu_gather *tlb)
{
	return tlb->folios == tlb->bundle ? MMU_GATHER_BUNDLE : MMU_GATHER_MAX_PAGES;
}

/* Drop a reference of an unmapped page: now, or with the gather's others. */
static void tlb_remove_folio(struct mm *mm, struct mmu_gather *tlb, struct folio *folio)
{
	if (!tlb) {
		free_page_and_swap_cache(mm->sys, folio);
		return;
	}
	tlb->folios[tlb->nr++] = folio;
	/* A full gather is freed on the spot, under whatever lock the zap holds. */
	if (tlb->nr == tlb_room(tlb) && !tlb_grow(tlb))
		tlb_flush_mmu(tlb);
}

/* Clear one present or swap PTE, or (drop_guard) a guard marker; the caller holds the ptl. */
static void zap_pte(struct mm *mm, _Atomic uint64_t *ptep, const struct zap_details *d)
{
	struct folio *folio;
	struct page *page;
	uint64_t pte;

	if (!d->drop_guard && pte_is_guard(load_relaxed(ptep)))
		return;		/* only an unmap removes a marker (zap_nonpresent_ptes) */
	if (d->skip_cows) {
		/* should_zap_folio / should_zap_cows: a private copy and its swap stay */
		pte = load_relaxed(ptep);
		if (pte_is_swap(pte))
			return;
		if (pte_present(pte) && folio_is_anon(page_folio(pte_page(pte))))
			return;
	}
	/* An exchange, not a store: a hardware CAS may set young/dirty meanwhile (P2). */
	pte = xchg_relaxed(ptep, 0);

	if (pte_present(pte)) {
		page = pte_page(pte);
		folio = page_folio(page);
		if (folio_is_zero(folio))
			return;
		/*
		 * A file folio keeps the dirt of its mapping; an anonymous one
		 * does not (zap_present_folio_ptes): the pages of a large one
		 * still mapped elsewhere stay as clean as their own entries.
		 */
		if ((pte & PT_DIRTY) && !folio_is_anon(folio))
			folio_set(folio, PG_dirty);
		/* munlock_vma_folio: a large folio whole, even for a page of it */
		if (d->munlock)
			munlock_folio(mm->sys, folio);
		folio_remove_rmap_pte(folio, page, mm);
		mm_dec_counter(mm, folio_mm_counter(folio));
		tlb_remove_folio(mm, d->tlb, folio);
	} else if (pte_is_swap(pte)) {
		swap_free_entry(mm->sys, pte >> PT_SWAP_SHIFT);
		mm_dec_counter(mm, MM_SWAPENTS);
	}
}

/*
 * The PTEs from @a (before @end, inside @pt) mapping consecutive pages of
 * @folio starting with @page (madvise_folio_pte_batch).
 */
unsigned long folio_pte_batch(struct pte_table *pt, unsigned long a, unsigned long end,
				     struct folio *folio, struct page *page)
{
	unsigned long nr = 0;

	while (a + nr * PAGE_SIZE < end && page->index + nr < folio_nr_pages(folio)) {
		uint64_t pte = load_relaxed(&pt->e[pte_index(a + nr * PAGE_SIZE)]);

		if (!pte_present(pte) || pte_page(pte) != page + nr)
			break;
		nr++;
	}
	return nr;
}

/*
 * The file folio mapped at @a and how many entries from @a on map its next
 * pages (zap_present_ptes' folio_pte_batch, up to @end), with whether any
 * of them is young. Return: the folio, or NULL (not present, anonymous, the
 * zero page). Context: the table's ptl held.
 */
static struct folio *file_pte_batch(struct pte_table *pt, unsigned long a, unsigned long end,
				    unsigned long *nr, bool *young)
{
	uint64_t pte = load_relaxed(&pt->e[pte_index(a)]);
	struct folio *folio;
	struct page *page;

	if (!pte_present(pte))
		return NULL;
	page = pte_page(pte);
	folio = page_folio(page);
	if (folio_is_anon(folio) || folio_is_zero(folio))
		return NULL;
	*young = pte & PT_YOUNG;
	for (*nr = 1; a + *nr * PAGE_SIZE < end; ++*nr) {
		pte = load_relaxed(&pt->e[pte_index(a + *nr * PAGE_SIZE)]);
		if (!pte_present(pte) || pte_page(pte) != page + *nr)
			break;
		*young |= pte & PT_YOUNG;
	}
	return folio;
}

static int zap_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
			 unsigned long end, void *priv)
{
	const struct zap_details *d = priv;
	unsigned long nr, zapped = 0;

	/* Only [start, end) changes here (and pages other tables map: they are volatile). */
	rollup_pte_hint(pt, NULL, start, (end - start) >> PAGE_SHIFT);
	/* Ends: each step zaps at least one entry. */
	for (unsigned long a = start; a < end; a += nr * PAGE_SIZE) {
		bool young = false;
		struct folio *folio = file_pte_batch(pt, a, end, &nr, &young);

		/*
		 * A young batch of one file folio marks it accessed once
		 * (zap_present_folio_ptes): a large folio zapped in two parts
		 * is marked twice, which activates it.
		 */
		if (folio && young)
			folio_mark_accessed(mm->sys, folio);
		if (!folio)
			nr = 1;
		for (unsigned long i = 0; i < nr; i++) {
			_Atomic uint64_t *e = &pt->e[pte_index(a + i * PAGE_SIZE)];

			zapped += load_relaxed(e) != 0;
			zap_pte(mm, e, d);
		}
	}
	/* the kernel's time for the table's entries; it may reschedule after each table */
	plat_charge_ns(mm->sys->cfg.costs.zap_ns * zapped, PLAT_KERNEL);
	return 0;
}

static int zap_pmd_huge(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start,
			unsigned long end, void *priv)
{
	const struct zap_details *d = priv;
	struct pte_table *pt;

	if (d->skip_cows && folio_is_anon(page_folio(pte_page(load_relaxed(pmd)))))
		return 0;	/* a private huge copy stays, whole */
	if (!(start & ~PMD_MASK) && end - start == PMD_SIZE) {
		/* an unmapped range: no fault can map anything here meanwhile */
		struct folio *folio = page_folio(pte_page(load_relaxed(pmd)));

		if (d->munlock && !folio_is_zero(folio))
			munlock_folio(mm->sys, folio);	/* munlock_vma_folio */
		zap_huge_pmd(mm, pmd);
		return 0;
	}
	/*
	 * Covered only partly: the edges were split before the walk, but a
	 * MADV_DONTNEED holds only the VMA's read lock, and a fault under the
	 * same lock may have mapped a huge page here since. Split it now and
	 * zap the part in range, as zap_pmd_range does.
	 */
	split_huge_pmd_locked(mm, pmd);
	if (!load_relaxed(pmd))
		return 0;	/* a file's huge page: its whole mapping went */
	/* under page_table_lock: the entry is a table, stable */
	pt = pmd_pte_table(load_relaxed(pmd));
	pte_lock(pt);
	zap_pte_range(mm, pt, start, end, priv);
	pte_unlock(pt);
	return 0;
}

static void zap_range(struct mm *mm, unsigned long start, unsigned long end,
		      const struct zap_details *d)
{
	static const struct pt_walk_ops ops = {
		.pte_range = zap_pte_range,
		.pmd_huge = zap_pmd_huge,
	};

	split_huge_pmd_range_edges(mm, start, end);
	walk_page_range(mm, start, end, &ops, (void *)d);
}

void zap_page_range(struct mm *mm, unsigned long start, unsigned long end)
{
	zap_range(mm, start, end, &(struct zap_details){ .drop_guard = true });
}

void zap_unmapped_range(struct mm *mm, unsigned long start, unsigned long end, bool locked)
{
	zap_range(mm, start, end, &(struct zap_details){ .drop_guard = true,
							 .munlock = locked });
}

void zap_page_range_single(struct mm *mm, unsigned long start, unsigned long end)
{
	zap_range(mm, start, end, &(struct zap_details){ .drop_guard = false });
}

void zap_mapping_range(struct mm *mm, unsigned long start, unsigned long end, bool even_cows)
{
	zap_range(mm, start, end, &(struct zap_details){ .skip_cows = !even_cows });
}

void zap_page_range_single_batched(struct mm *mm, struct mmu_gather *tlb, unsigned long start,
				   unsigned long end)
{
	zap_range(mm, start, end, &(struct zap_details){ .drop_guard = false, .tlb = tlb });
}

int guard_install_range(struct mm *mm, unsigned long start, unsigned long end)
{
	int err = 0;

	mmap_assert_locked(mm);
	/* Ends: every step installs one entry or fails. */
	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		_Atomic uint64_t *pmd = pmd_offset(mm, a, true, &err);
		struct pte_table *pt = pmd ? pte_table_get(mm, pmd, a, true, &err) : NULL;
		_Atomic uint64_t *ptep;

		if (!pt)
			return err ? err : -EAGAIN;	/* a huge leaf appeared: zapped first */
		ptep = &pt->e[pte_index(a)];
		pte_lock(pt);
		/* The range was zapped, keeping markers: an entry is empty or a marker. */
		VML_BUG_ON(load_relaxed(ptep) && !pte_is_guard(load_relaxed(ptep)));
		store_relaxed(ptep, PT_GUARD);
		pte_unlock(pt);
	}
	return 0;
}

static int guard_remove_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
				  unsigned long end, void *priv)
{
	(void)mm;
	(void)priv;
	for (unsigned long a = start; a < end; a += PAGE_SIZE)
		if (pte_is_guard(load_relaxed(&pt->e[pte_index(a)])))
			store_relaxed(&pt->e[pte_index(a)], 0);
	return 0;
}

void guard_remove_range(struct mm *mm, unsigned long start, unsigned long end)
{
	/* A huge leaf holds no markers: skipped (guard_remove_pmd_entry). */
	static const struct pt_walk_ops ops = { .pte_range = guard_remove_pte_range };

	mmap_assert_locked(mm);
	walk_page_range(mm, start, end, &ops, NULL);
}

/* Does the table spanning [base, base + size) lie in the free space [floor, ceiling)? */
static bool span_is_free(unsigned long base, unsigned long size, const struct unmap_range *u)
{
	return base >= u->floor && (!u->ceiling || base + size <= u->ceiling);
}

static bool entries_empty(const _Atomic uint64_t *e)
{
	for (int i = 0; i < PTRS_PER_TABLE; i++)
		if (load_relaxed(&e[i]))
			return false;
	return true;
}

static void pte_table_free_cb(struct vml_rcu_head *head)
{
	vml_free(container_of(head, struct pte_table, rcu));
}

void pte_table_free_rcu(struct pte_table *pt)
{
	vml_call_rcu(&pt->rcu, pte_table_free_cb);
}

static void pmd_table_free_cb(struct vml_rcu_head *head)
{
	vml_free(container_of(head, struct pmd_table, rcu));
}

static void pud_table_free_cb(struct vml_rcu_head *head)
{
	vml_free(container_of(head, struct pt_table, rcu));
}

/* Clear the upper-level entry @e; the table it pointed to is the caller's to free. */
static void clear_table_entry(struct mm *mm, _Atomic uint64_t *e)
{
	spin_lock(&mm->page_table_lock);
	/* release: pairs with the walkers' acquire loads of the entry (P1; a 0 publishes nothing) */
	store_release(e, 0);
	spin_unlock(&mm->page_table_lock);
}

bool retract_empty_pte_table(struct mm *mm, unsigned long addr)
{
	_Atomic uint64_t *pmd;
	struct pte_table *pt;
	uint64_t v;
	int err = 0;

	mmap_assert_locked(mm);
	pmd = pmd_offset(mm, addr, false, &err);
	if (!pmd)
		return true;
	spin_lock(&mm->page_table_lock);
	v = load_relaxed(pmd);
	if (!v || pmd_is_huge(v)) {
		spin_unlock(&mm->page_table_lock);
		return !v;
	}
	pt = pmd_pte_table(v);
	pte_lock(pt);
	if (!entries_empty(pt->e)) {
		pte_unlock(pt);
		spin_unlock(&mm->page_table_lock);
		return false;
	}
	/* release: pairs with the walkers' acquire loads of the entry (P1; a 0 publishes nothing) */
	store_release(pmd, 0);
	pte_unlock(pt);
	spin_unlock(&mm->page_table_lock);
	rollup_pte_table_remove(pt);
	vml_call_rcu(&pt->rcu, pte_table_free_cb);
	return true;
}

/*
 * Free the PTE tables under @pmd whose span meets [start, end) and lies in
 * u's free space (free_pmd_range). Return: whether @pmd is empty now.
 */
static bool free_pmd_range(struct mm *mm, struct pmd_table *pmd, unsigned long start,
			   unsigned long end, const struct unmap_range *u)
{
	for (unsigned long a = start & PMD_MASK; a < end; a += PMD_SIZE) {
		_Atomic uint64_t *e = &pmd->e[pmd_index(a)];
		uint64_t v = load_relaxed(e);
		struct pte_table *pt;

		if (!v || !span_is_free(a, PMD_SIZE, u))
			continue;
		/* No VMA in the span: the zap has emptied it. */
		VML_BUG_ON(pmd_is_huge(v));
		pt = pmd_pte_table(v);
		vml_assert(entries_empty(pt->e));
		clear_table_entry(mm, e);
		rollup_pte_table_remove(pt);
		vml_call_rcu(&pt->rcu, pte_table_free_cb);
	}
	return entries_empty(pmd->e);
}

/* The same one level up (free_pud_range): PMD tables under @pud. */
static bool free_pud_range(struct mm *mm, struct pt_table *pud, unsigned long start,
			   unsigned long end, const struct unmap_range *u)
{
	const unsigned long size = 1UL << PUD_SHIFT;

	for (unsigned long a = start & ~(size - 1); a < end; a += size) {
		_Atomic uint64_t *e = &pud->e[pud_index(a)];
		uint64_t v = load_relaxed(e);
		struct pmd_table *pmd = pud_pmd_table(v);

		if (v && free_pmd_range(mm, pmd, VML_MAX(a, start), VML_MIN(a + size, end), u) &&
		    span_is_free(a, size, u)) {
			clear_table_entry(mm, e);
			vml_call_rcu(&pmd->rcu, pmd_table_free_cb);
		}
	}
	return entries_empty(pud->e);
}

void free_pgtables(struct mm *mm, const struct unmap_range *u)
{
	unsigned long size = 1UL << PGDIR_SHIFT;

	/* (R): after an unmap's downgrade (munmap, mremap shrink; mmap.c). */
	mmap_assert_locked(mm);
	if (u->start >= u->end)
		return;
	for (unsigned long a = u->start & ~(size - 1); a < u->end; a += size) {
		_Atomic uint64_t *e = &mm->pgd->e[pgd_index(a)];
		uint64_t v = load_relaxed(e);
		struct pt_table *pud = pgd_pud_table(v);

		if (v && free_pud_range(mm, pud, VML_MAX(a, u->start), VML_MIN(a + size, u->end), u) &&
		    span_is_free(a, size, u)) {
			clear_table_entry(mm, e);
			vml_call_rcu(&pud->rcu, pud_table_free_cb);
		}
	}
}

struct protect_args {
	unsigned long vm_flags;
	bool writable_prot;
	bool anon_writable;	/* private and writable: exclusive anonymous pages get write back */
};

/* The new bits of a present entry under @a. */
static uint64_t protect_bits(uint64_t pte, const struct protect_args *a)
{
	if (!(a->vm_flags & VM_WRITE))
		pte &= ~PT_WRITE;
	if (a->vm_flags & VM_ACCESS_FLAGS)
		pte &= ~PT_PROTNONE;
	else
		pte |= PT_PROTNONE;
	if (a->writable_prot && (a->vm_flags & VM_WRITE))
		pte |= PT_WRITE;
	/* The VMA's key goes into its entries (vm_get_page_prot's pkey bits). */
	if (a->vm_flags & VM_PKEY_MASK)
		pte |= PT_PKEY;
	else
		pte &= ~PT_PKEY;
	return pte;
}

/*
 * The new value of a present entry (PTE or huge PMD): protect_bits(), and -
 * in a private writable mapping (MM_CP_TRY_CHANGE_WRITABLE) - write
 * permission back for a page its process has to itself
 * (can_change_pte_writable: anonymous, PageAnonExclusive), without making
 * it dirty: a write then needs no fault. Context: the entry's lock held.
 */
static uint64_t protect_entry(uint64_t pte, const struct protect_args *a)
{
	uint64_t bits = protect_bits(pte, a);
	struct folio *folio;

	if (!a->anon_writable || (bits & (PT_WRITE | PT_PROTNONE | PT_PKEY)))
		return bits;
	folio = page_folio(pte_page(pte));
	if (folio_is_anon(folio) && !folio_is_zero(folio) && page_anon_exclusive(pte_page(pte)))
		bits |= PT_WRITE;
	return bits;
}

/*
 * The PTEs from @a (before @end) that mprotect changes together with @pte
 * (mprotect_folio_pte_batch): consecutive pages of one large folio, with
 * the same bits but for young and dirty (FPB_RESPECT_WRITE: the same write
 * bit too); 1 for a small folio.
 */
static unsigned long protect_batch(struct pte_table *pt, unsigned long a, unsigned long end,
				   uint64_t pte)
{
	struct page *page = pte_page(pte);
	struct folio *folio = page_folio(page);
	const uint64_t ignore = PT_YOUNG | PT_DIRTY;
	unsigned long nr = 1;

	if (!folio->order || folio_is_zero(folio))
		return 1;
	while (a + nr * PAGE_SIZE < end && page->index + nr < folio_nr_pages(folio)) {
		uint64_t next = load_relaxed(&pt->e[pte_index(a + nr * PAGE_SIZE)]);

		if (!pte_present(next) || pte_page(next) != page + nr ||
		    ((next ^ pte) & (PT_FLAGS_MASK | PT_HIGH_MASK) & ~ignore))
			break;
		nr++;
	}
	return nr;
}

/*
 * Change @nr entries from @ptep. A batch is taken down and put back as one
 * (modify_prot_start_ptes): young and dirty of any of its entries end up
 * in every one - a write to one page of a large folio makes all its pages
 * dirty once mprotect has passed (6.18).
 */
static void protect_ptes(_Atomic uint64_t *ptep, unsigned long nr, const struct protect_args *args)
{
	uint64_t gathered = 0;

	for (unsigned long i = 0; nr > 1 && i < nr; i++)
		gathered |= load_relaxed(&ptep[i]) & (PT_YOUNG | PT_DIRTY);
	for (unsigned long i = 0; i < nr; i++) {
		uint64_t pte = load_relaxed(&ptep[i]);

		/* CAS: the access path may be setting dirty/young concurrently. */
		while (protect_entry(pte | gathered, args) != pte &&
		       !cas_relaxed(&ptep[i], &pte, protect_entry(pte | gathered, args)))
			;
	}
}

static int protect_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
			     unsigned long end, void *priv)
{
	const struct protect_args *args = priv;

	(void)mm;
	/* Ends: each step goes at least a page on. */
	for (unsigned long a = start, nr; a < end; a += nr * PAGE_SIZE) {
		uint64_t pte = load_relaxed(&pt->e[pte_index(a)]);

		nr = 1;
		if (!pte_present(pte))
			continue;
		nr = protect_batch(pt, a, end, pte);
		protect_ptes(&pt->e[pte_index(a)], nr, args);
	}
	return 0;
}

static int protect_pmd_huge(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start,
			    unsigned long end, void *priv)
{
	const struct protect_args *args = priv;
	uint64_t v = load_relaxed(pmd);

	(void)mm;
	(void)start;
	(void)end;
	while (protect_entry(v, args) != v && !cas_relaxed(pmd, &v, protect_entry(v, args)))
		;
	return 0;
}

void change_protection(struct mm *mm, unsigned long start, unsigned long end,
		       unsigned long vm_flags, bool writable_prot)
{
	static const struct pt_walk_ops ops = {
		.pte_range = protect_pte_range,
		.pmd_huge = protect_pmd_huge,
	};
	struct protect_args args = {
		.vm_flags = vm_flags,
		.writable_prot = writable_prot,
		.anon_writable = (vm_flags & (VM_SHARED | VM_WRITE)) == VM_WRITE,
	};

	split_huge_pmd_range_edges(mm, start, end);
	walk_page_range(mm, start, end, &ops, &args);
}

bool pte_access_fast(struct mm *mm, unsigned long addr, bool write)
{
	uint64_t want = PT_YOUNG | (write ? PT_DIRTY : 0);
	_Atomic uint64_t *ptep;
	bool ok = false;
	uint64_t v;
	int err = 0;

	_Atomic uint64_t *pmd;
	struct pte_table *pt = NULL;
	bool changed = false;

	/* Like the MMU's walk: no lock; RCU keeps the tables it passes through alive. */
	vml_rcu_read_lock();
	pmd = ptep = pmd_offset(mm, addr, false, &err);
	/* acquire: pairs with the release that published the entry (P1) */
	v = ptep ? load_acquire(ptep) : 0;
	if (v && !pmd_is_huge(v)) {
		pt = pmd_pte_table(v);
		ptep = &pt->e[pte_index(addr)];
		v = load_relaxed(ptep);	/* only its bits are used (P2) */
	}
	/* Like a TLB fill: only an entry that already permits the access. */
	while (pte_present(v) && !(v & (PT_PROTNONE | PT_PKEY)) && (!write || (v & PT_WRITE))) {
		if ((v & want) == want)
			ok = true;
		else if (cas_relaxed(ptep, &v, v | want))
			ok = changed = true;
		if (ok)
			break;
	}
	/*
	 * Incremental rollup: the new young/dirty bits change Referenced and
	 * the dirty split, so count the table (or leaf) again under its lock.
	 * The MMU sets these bits without telling a kernel: the proposal
	 * cannot do this (docs/findings/2026-12-04-incremental-rollup.md).
	 */
	if (unlikely(changed) && mm_rollup_incremental(mm)) {
		if (pt) {
			pte_lock(pt);
			pte_unlock(pt);
		} else {
			spin_lock(&mm->page_table_lock);
			rollup_pmd_update(mm, pmd, addr);
			spin_unlock(&mm->page_table_lock);
		}
	}
	vml_rcu_read_unlock();
	return ok;
}

/*
 * Mark the page a user store at @addr went to as holding data (PAGE_DATA),
 * under the lock of the entry mapping it - so the page cannot be freed
 * meanwhile - if that entry is still present and writable.
 */
static void store_mark_data(struct mm *mm, unsigned long addr)
{
	struct pte_table *pt = pte_offset_map_lock(mm, addr);
	_Atomic uint64_t *pmd;
	uint64_t v;
	int err = 0;

	if (pt) {
		rollup_pte_hint(pt, NULL, addr, 0);	/* PAGE_DATA: nothing smaps shows */
		v = load_relaxed(&pt->e[pte_index(addr)]);
		if (pte_present(v) && (v & PT_WRITE))
			page_set_data(pte_page(v), true);
		pte_unmap_unlock(pt);
		return;
	}
	vml_rcu_read_lock();
	pmd = pmd_offset(mm, addr, false, &err);
	/* acquire: pairs with the release that published the entry (P1) */
	if (pmd && pmd_is_huge(load_acquire(pmd))) {
		spin_lock(&mm->page_table_lock);
		v = load_relaxed(pmd);
		if (pmd_is_huge(v) && (v & PT_WRITE))
			page_set_data(pte_page(v) + pte_index(addr), true);
		spin_unlock(&mm->page_table_lock);
	}
	vml_rcu_read_unlock();
}

bool pte_store_fast(struct mm *mm, unsigned long addr)
{
	if (!pte_access_fast(mm, addr, true))
		return false;
	store_mark_data(mm, addr);
	return true;
}

/*
 * The length of the step of a move at @old_addr to @new_addr with @left to
 * go: up to the next PMD boundary of either side (get_extent).
 */
static unsigned long move_extent(unsigned long old_addr, unsigned long new_addr,
				 unsigned long left)
{
	unsigned long extent = PMD_SIZE - (old_addr & ~PMD_MASK);

	extent = VML_MIN(extent, PMD_SIZE - (new_addr & ~PMD_MASK));
	return VML_MIN(extent, left);
}

/*
 * The reserve lists: zeroed tables of one kind each, linked through their
 * e[0] (typed macros: a table is only ever on the list of its kind).
 */
#define reserve_push(list, t)                                                  \
	do {                                                                   \
		store_relaxed(&(t)->e[0], (uint64_t)(uintptr_t)(list));        \
		(list) = (t);                                                  \
	} while (0)

/* The first table on @list, taken off it and zeroed again. */
#define reserve_pop(list)                                                      \
	({                                                                     \
		__typeof__(list) t_ = (list);                                  \
		/* pgtable_prepare_move() counted every table the move takes */ \
		VML_BUG_ON(!t_);                                               \
		(list) = (__typeof__(list))(uintptr_t)load_relaxed(&t_->e[0]); \
		store_relaxed(&t_->e[0], 0);                                   \
		t_;                                                            \
	})

void pgt_reserve_release(struct pgt_reserve *res)
{
	while (res->pte)
		vml_free(reserve_pop(res->pte));
	while (res->pmd)
		vml_free(reserve_pop(res->pmd));
	while (res->pud)
		vml_free(reserve_pop(res->pud));
}

static bool reserve_pte(struct pgt_reserve *res)
{
	struct pte_table *t = pte_table_alloc();

	if (t)
		reserve_push(res->pte, t);
	return t != NULL;
}

static bool reserve_pmd(struct pgt_reserve *res)
{
	struct pmd_table *t = pmd_table_alloc();

	if (t)
		reserve_push(res->pmd, t);
	return t != NULL;
}

static bool reserve_pud(struct pgt_reserve *res)
{
	struct pt_table *t = pud_table_alloc();

	if (t)
		reserve_push(res->pud, t);
	return t != NULL;
}

int pgtable_prepare_move(struct mm *mm, unsigned long old_addr, unsigned long new_addr,
			 unsigned long len, struct pgt_reserve *res)
{
	unsigned long last_pud = 0, last_pmd = 0, extent;
	bool first = true;
	int err = 0;

	*res = (struct pgt_reserve){ 0 };
	/*
	 * One table for each level the destination of a step may miss, for
	 * every step whose source has a PMD entry: the kernel allocates there
	 * (alloc_new_pmd, pte_alloc) and nowhere else. The destination's old
	 * tables may be freed before the move (free_pgtables), so count them
	 * all whether they exist now or not.
	 */
	for (unsigned long off = 0; off < len; off += extent) {
		unsigned long n = new_addr + off;
		_Atomic uint64_t *pmd = pmd_offset(mm, old_addr + off, false, &err);

		extent = move_extent(old_addr + off, n, len - off);
		/* acquire: pairs with the release that published the entry (P1) */
		if (!pmd || !load_acquire(pmd))
			continue;
		if ((first || n >> PGDIR_SHIFT != last_pud) && !reserve_pud(res))
			goto nomem;
		if ((first || n >> PUD_SHIFT != last_pmd) && !reserve_pmd(res))
			goto nomem;
		if (!reserve_pte(res))
			goto nomem;
		last_pud = n >> PGDIR_SHIFT;
		last_pmd = n >> PUD_SHIFT;
		first = false;
	}
	return 0;
nomem:
	pgt_reserve_release(res);
	return -ENOMEM;
}

/* Install the reserved table @t at the empty upper-level entry @e. Return the entry. */
static uint64_t reserve_install(struct mm *mm, _Atomic uint64_t *e, void *t)
{
	uint64_t v = (uint64_t)(uintptr_t)t | PT_TABLE;

	spin_lock(&mm->page_table_lock);
	store_release(e, v);	/* pairs with the walkers' acquire loads of the entry (P1) */
	spin_unlock(&mm->page_table_lock);
	return v;
}

/* The PMD entry for @addr, its upper tables taken from @res where missing. */
static _Atomic uint64_t *pmd_offset_reserved(struct mm *mm, unsigned long addr,
					     struct pgt_reserve *res)
{
	_Atomic uint64_t *e = &mm->pgd->e[pgd_index(addr)];
	/* acquire: pairs with the release that published the entry (P1) */
	uint64_t v = load_acquire(e);

	if (!v)
		v = reserve_install(mm, e, reserve_pop(res->pud));
	e = &pgd_pud_table(v)->e[pud_index(addr)];
	v = load_acquire(e);	/* the same pairs with (P1) */
	if (!v)
		v = reserve_install(mm, e, reserve_pop(res->pmd));
	return &pud_pmd_table(v)->e[pmd_index(addr)];
}

/* The PTE table under the PMD entry @pmd, taken from @res if there is none. */
static struct pte_table *pte_table_reserved(struct mm *mm, _Atomic uint64_t *pmd,
					    struct pgt_reserve *res)
{
	/* acquire: pairs with the release that published the entry (P1) */
	uint64_t v = load_acquire(pmd);

	if (!v)
		v = reserve_install(mm, pmd, reserve_pop(res->pte));
	return pmd_pte_table(v);
}

/* Move the entries of [old_addr, old_addr + len) in @opt to @npt (move_ptes). */
static void move_ptes(struct pte_table *opt, struct pte_table *npt, unsigned long old_addr,
		      unsigned long new_addr, unsigned long len)
{
	for (unsigned long off = 0; off < len; off += PAGE_SIZE) {
		uint64_t pte;

		pte_lock(opt);
		/* An exchange: a hardware CAS may set young/dirty meanwhile (P2). */
		pte = xchg_relaxed(&opt->e[pte_index(old_addr + off)], 0);
		pte_unlock(opt);
		if (!pte)
			continue;
		pte_lock(npt);
		VML_BUG_ON(load_relaxed(&npt->e[pte_index(new_addr + off)]) != 0);
		store_relaxed(&npt->e[pte_index(new_addr + off)], pte);
		pte_unlock(npt);
	}
}

void move_page_tables(struct mm *mm, unsigned long old_addr, unsigned long new_addr,
		      unsigned long len, struct pgt_reserve *res)
{
	unsigned long extent;
	int err = 0;

	/* An OLDLEN of 0 duplicates a shared mapping: nothing moves, no huge page splits. */
	if (!len)
		return;
	split_huge_pmd_range_edges(mm, old_addr, old_addr + len);
	/* Step by step as far as the next PMD boundary; both VMAs are write-locked. */
	for (unsigned long off = 0; off < len; off += extent) {
		unsigned long o = old_addr + off, n = new_addr + off;
		_Atomic uint64_t *opmd = pmd_offset(mm, o, false, &err), *npmd;
		/* acquire: pairs with the release that published the entry (P1) */
		uint64_t v = opmd ? load_acquire(opmd) : 0;
		struct pte_table *npt;

		extent = move_extent(o, n, len - off);
		if (!v)
			continue;	/* nothing here: the destination gets no table */
		npmd = pmd_offset_reserved(mm, n, res);
		if (extent == PMD_SIZE && !load_acquire(npmd)) {	/* pairs with P1's releases */
			if (pmd_is_huge(v)) {
				move_huge_pmd(mm, opmd, npmd, n);
				continue;
			}
			/*
			 * A whole PTE table moves as it is (move_normal_pmd). A walker
			 * that locked it under the old entry (pte_offset_map_lock) sees
			 * the entries wherever they now are: it only unmaps.
			 */
			spin_lock(&mm->page_table_lock);
			store_release(npmd, v);	/* pairs with the walkers' acquire loads (P1) */
			store_release(opmd, 0);	/* pairs with the same (P1; a 0 publishes nothing) */
			spin_unlock(&mm->page_table_lock);
			if (unlikely(load_relaxed(&pmd_pte_table(v)->rollup_mm)))
				rollup_pte_table_install(pmd_pte_table(v), mm, n);
			continue;
		}
		if (pmd_is_huge(v)) {
			split_huge_pmd_address(mm, o);	/* misaligned: per page */
			/* A file's huge page is gone with its mapping: nothing to move. */
			if (!load_acquire(opmd))	/* pairs with P1 */
				continue;
		}
		npt = pte_table_reserved(mm, npmd, res);
		if (mm_rollup_incremental(mm) && !load_relaxed(&npt->rollup_mm))
			rollup_pte_table_install(npt, mm, n);
		move_ptes(pmd_pte_table(load_acquire(opmd)), npt, o, n, extent);	/* pairs with P1 */
	}
	pgt_reserve_release(res);
}
