// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rollup.c - an incremental smaps_rollup (vml_sys_config.rollup =
 * VML_ROLLUP_INCREMENTAL, issue 25 item 5; no kernel has it).
 *
 * What is kept. Each *stable* PTE table (and each huge PMD leaf) knows its
 * share of the rollup's sums as last counted - the same per-entry terms as
 * the walk (proc/smaps.c smaps_account: Rss, Pss in bytes << 12 divided by
 * the page's precise mapcount, the clean/dirty and shared/private split,
 * Referenced, Anonymous, LazyFree, Swap, SwapPss by the slot's users,
 * Locked by the VMA's VM_LOCKED) - and mm->rollup is the sum of those
 * shares. A read adds the volatile tables (below), counted on the spot.
 * No page walk of stable tables, no mmap_lock, no VMA lock.
 *
 * What updates it. Everything the model changes in a PTE table it changes
 * under the table's ptl, so pte_unlock() counts a stable table again and
 * adds the difference to mm->rollup: one relaxed atomic add per field that
 * changed. By default that is all 512 entries; the hot paths (faults, COW,
 * a zap's range, MADV_COLD/PAGEOUT's range) name the entries their hold
 * changes (rollup_pte_hint) and the unlock counts only those: their share
 * after the change minus their share before it. A huge PMD leaf is counted
 * again where it changes, under page_table_lock (rollup_pmd_update), its
 * share kept in its deposited table. The "hardware" path's young/dirty
 * CAS takes the ptl after it to count again. A VMA transaction that
 * creates or retires a VM_LOCKED VMA counts the range again after its
 * commit (Locked follows a flag no entry shows); fork counts the child's
 * tables after its commit.
 *
 * Volatile tables. A table's share may also depend on what other address
 * spaces do: a page's mapcount (another process maps or unmaps it), a swap
 * slot's users, a file or shmem folio's flags and sharing, a folio's flags
 * changed when its LRU batch is moved. The model has no reverse map of
 * anonymous pages to find the tables of other processes, so a table whose
 * count met such an entry - a page mapped more than once, a file or shmem
 * page, a folio in an LRU batch or in the swap cache, a swap slot with more
 * than one user or a folio in the swap cache - becomes volatile: its share leaves the sums, it joins
 * mm->rollup_volatile, and its holds count nothing (a hint there would
 * subtract what an entry is worth now, not what was added: a page another
 * process stopped sharing was added Shared and would be taken out Private,
 * driving Private_Clean below zero). A read counts each volatile table
 * under its ptl; one found with nothing volatile left becomes stable again,
 * its share back in the sums. A table moves between the two only under
 * rollup_lock, where a read also snapshots the sums and the list, so a read
 * counts every table once. A read therefore costs O(1) for private
 * anonymous memory and O(volatile tables) beyond; no read takes mmap_lock.
 * The kernel proposal (docs/findings/2026-12-04-incremental-rollup.md)
 * weighs this against updating every mapper through rmap.
 *
 * What a concurrent reader sees: each field is the snapshot's sum of every
 * stable table's share as of one of its recounts (one relaxed atomic per
 * field; a table's recounts are ordered by its ptl) plus the volatile
 * tables counted after it: never torn, never negative (no share is ever
 * taken out that was not put in; tests/unit/test-rollup-inc.c checks the
 * raw sums after a zap of pages another process stopped sharing), but
 * fields and tables need not be of one moment. A read while no writer runs
 * is byte-identical to the walk - the property the tests check
 * (tests/unit/test-rollup-inc.c, tests/stress/stress-rollup-inc.c,
 * tests/cli/rollup-inc.sh, vmalock fuzz --rollup-check).
 *
 * Not counted here: the swap of shmem objects behind a shmem mapping's
 * empty entries (the walk asks the object, smaps.c): the reader adds it
 * VMA by VMA under RCU (rollup_shmem_swap in proc/smaps.c).
 */
#include <errno.h>
#include <string.h>

#include "mm/folio.h"
#include "mm/pgtable.h"
#include "mm/rollup.h"
#include "mm/swap.h"
#include "sync/rcu.h"
#include "util/alloc.h"
#include "util/compiler.h"
#include "util/debug.h"

void rollup_mm_init(struct mm *mm)
{
	spin_lock_init(&mm->rollup_lock, LOCK_CLASS_ROLLUP);
	INIT_LIST_HEAD(&mm->rollup_volatile);
}

/* smaps_page_accumulate: one page's (or a whole folio's) terms. */
static void ru_accumulate(struct rollup_sums *s, struct folio *folio, unsigned long size,
			  uint64_t pss, bool dirty, bool locked, bool private)
{
	s->v[RU_PSS] += pss;
	if (folio_test(folio, PG_anon))
		s->v[RU_PSS_ANON] += pss;
	else if (folio_test(folio, PG_swapbacked))
		s->v[RU_PSS_SHMEM] += pss;
	else
		s->v[RU_PSS_FILE] += pss;
	if (locked)
		s->v[RU_PSS_LOCKED] += pss;
	if (dirty || folio_test(folio, PG_dirty)) {
		s->v[RU_PSS_DIRTY] += pss;
		s->v[private ? RU_PRIVATE_DIRTY : RU_SHARED_DIRTY] += size;
	} else {
		s->v[private ? RU_PRIVATE_CLEAN : RU_SHARED_CLEAN] += size;
	}
}

/*
 * smaps_account: @page mapped by one PTE, or (@compound) the whole folio
 * by a PMD. Return: does this share depend on others (volatile)?
 */
static bool ru_account(struct rollup_sums *s, struct page *page, bool compound, bool young,
		       bool dirty, bool locked)
{
	struct folio *folio = page_folio(page);
	unsigned long nr = compound ? folio_nr_pages(folio) : 1;
	unsigned long size = nr * PAGE_SIZE;
	/*
	 * Volatile: a file or shmem folio (any process may map it), one in an
	 * LRU batch (its flags change when the batch moves), one in the swap
	 * cache (another process's swap-in may map it).
	 */
	bool vol = !folio_test(folio, PG_anon) ||
		   folio_test(folio, PG_lru_batch | PG_swapcache);

	if (folio_test(folio, PG_anon)) {
		s->v[RU_ANONYMOUS] += size;
		if (!folio_test(folio, PG_swapbacked) && !dirty && !folio_test(folio, PG_dirty))
			s->v[RU_LAZYFREE] += size;
	}
	s->v[RU_RSS] += size;
	if (young || folio_test(folio, PG_referenced))
		s->v[RU_REFERENCED] += size;
	if (folio_ref_count(folio) == 1) {
		ru_accumulate(s, folio, size, (uint64_t)size << ROLLUP_PSS_SHIFT, dirty, locked,
			      true);
		return vol;
	}
	for (unsigned long i = 0; i < nr; i++, page++) {
		int mapcount = folio_precise_page_mapcount(folio, page);
		uint64_t pss = (uint64_t)PAGE_SIZE << ROLLUP_PSS_SHIFT;

		if (mapcount >= 2) {
			pss /= (uint64_t)mapcount;
			vol = true;
		}
		ru_accumulate(s, folio, PAGE_SIZE, pss, dirty, locked, mapcount < 2);
	}
	return vol;
}

static bool ru_leaf(struct mm *mm, struct pte_table *pt, struct rollup_sums *s);

/* Add the difference between @now and *@was to @mm's sums; *@was = @now. */
static void ru_apply(struct mm *mm, struct rollup_sums *was, const struct rollup_sums *now)
{
	for (int f = 0; f < NR_ROLLUP; f++) {
		int64_t d = now->v[f] - was->v[f];

		if (d)
			fetch_add_relaxed(&mm->rollup[f], d);
	}
	*was = *now;
}

/*
 * @pt's share leaves the sums and @pt joins the volatile list, whose tables
 * a read counts itself. Under rollup_lock, so that a read's snapshot of
 * sums and list has every table in exactly one of them.
 * Context: @pt's ptl held.
 */
static void ru_make_volatile(struct mm *mm, struct pte_table *pt)
{
	spin_lock(&mm->rollup_lock);
	for (int f = 0; f < NR_ROLLUP; f++)
		if (pt->rollup.v[f])
			fetch_add_relaxed(&mm->rollup[f], -pt->rollup.v[f]);
	memset(&pt->rollup, 0, sizeof(pt->rollup));
	list_add_tail(&pt->rollup_node, &mm->rollup_volatile);
	pt->rollup_volatile = true;
	spin_unlock(&mm->rollup_lock);
}

/* @pt, volatile, is worth @now and nothing in it depends on others now. Context: ptl. */
static void ru_make_stable(struct mm *mm, struct pte_table *pt, const struct rollup_sums *now)
{
	spin_lock(&mm->rollup_lock);
	for (int f = 0; f < NR_ROLLUP; f++)
		if (now->v[f])
			fetch_add_relaxed(&mm->rollup[f], now->v[f]);
	pt->rollup = *now;
	list_del_init(&pt->rollup_node);
	pt->rollup_volatile = false;
	spin_unlock(&mm->rollup_lock);
}

/* One non-empty entry's share (in a VMA with @vm_flags). Return: volatile? */
static bool ru_entry(struct mm *mm, uint64_t pte, unsigned long vm_flags, struct rollup_sums *s)
{
	if (pte_present(pte)) {
		struct page *page = pte_page(pte);

		if (folio_is_zero(page_folio(page)))
			return false;	/* not a normal page (vm_normal_page) */
		return ru_account(s, page, false, pte & PT_YOUNG, pte & PT_DIRTY,
				  vm_flags & VM_LOCKED);
	}
	if (pte_is_swap(pte)) {
		unsigned long off = pte >> PT_SWAP_SHIFT;
		int users = swap_count(mm->sys, off);
		uint64_t pss = (uint64_t)PAGE_SIZE << ROLLUP_PSS_SHIFT;

		s->v[RU_SWAP] += PAGE_SIZE;
		if (users >= 2) {
			pss /= (uint64_t)users;
			s->v[RU_SWAP_PSS] += pss;
			return true;
		}
		s->v[RU_SWAP_PSS] += pss;
		/*
		 * A slot whose folio is in the swap cache: another process that
		 * maps that folio may swap it out again to the same slot, a
		 * second user our entry does not show (test-rollup-inc's seed
		 * 1796432326114455: SwapPss counted whole, walked half).
		 */
		return swap_cache_has(mm->sys, off);
	}
	return false;
}

/*
 * The share of @pt's entries [@first, @first + @nr) (indexes), each with
 * the flags of the VMA covering it - @vma if it does, else looked up. An
 * entry no VMA covers (its VMA just went: an unmap between its commit and
 * its zap) counts as in an unlocked VMA, so that a zap's share before
 * (rollup_pte_hint) is what the last count left whenever that ran; the
 * commit that retires a VM_LOCKED VMA counts its range again for the same
 * reason. At rest no entry lies outside every VMA. Context: ptl, RCU.
 */
static bool ru_entries(struct mm *mm, struct pte_table *pt, struct vma *vma, unsigned int first,
		       unsigned int nr, struct rollup_sums *s)
{
	bool vol = false;

	for (unsigned int i = first; i < first + nr; i++) {
		uint64_t pte = load_relaxed(&pt->e[i]);
		unsigned long a = pt->rollup_addr + ((unsigned long)i << PAGE_SHIFT);

		if (!pte || pte_is_guard(pte))
			continue;
		if (vma && a >= vma->vm_end)
			vma = NULL;
		if (!vma)
			vma = rtree_find_next(&mm->mm_mt, a, NULL);
		vol |= ru_entry(mm, pte, vma && a >= vma->vm_start ? vma->vm_flags : 0, s);
	}
	return vol;
}

void __rollup_pte_hint(struct pte_table *pt, struct vma *vma, unsigned long addr,
		       unsigned long nr)
{
	struct mm *mm = load_relaxed(&pt->rollup_mm);

	spin_assert_held(&pt->ptl);
	VML_BUG_ON(pt->rollup_leaf || nr > PTRS_PER_TABLE - pte_index(addr));
	if (pt->rollup_volatile)
		return;	/* its holds count nothing: a read counts it */
	pt->rollup_hinted = true;
	memset(&pt->rollup_hint, 0, sizeof(pt->rollup_hint));
	pt->rollup_hint_first = (unsigned int)pte_index(addr);
	pt->rollup_hint_nr = (unsigned int)nr;
	pt->rollup_hint_vma = vma;
	vml_rcu_read_lock();
	ru_entries(mm, pt, vma, pt->rollup_hint_first, pt->rollup_hint_nr, &pt->rollup_hint);
	vml_rcu_read_unlock();
}

void rollup_pte_table_update(struct pte_table *pt)
{
	struct mm *mm = load_relaxed(&pt->rollup_mm);
	struct rollup_sums s = { { 0 } };
	bool vol = false;

	spin_assert_held(&pt->ptl);
	if (pt->rollup_volatile)
		return;	/* not in the sums: a read counts it */
	vml_rcu_read_lock();
	if (pt->rollup_hinted) {
		/*
		 * A hinted hold changed only those entries: their share after
		 * minus before is the table's difference (the table is stable:
		 * every entry is worth what its last count added).
		 */
		vol = ru_entries(mm, pt, pt->rollup_hint_vma, pt->rollup_hint_first,
				 pt->rollup_hint_nr, &s);
		vml_rcu_read_unlock();
		pt->rollup_hinted = false;
		for (int f = 0; f < NR_ROLLUP; f++) {
			int64_t d = s.v[f] - pt->rollup_hint.v[f];

			if (d) {
				pt->rollup.v[f] += d;
				fetch_add_relaxed(&mm->rollup[f], d);
			}
		}
	} else {
		if (pt->rollup_leaf)
			vol = ru_leaf(mm, pt, &s);
		else
			vol = ru_entries(mm, pt, NULL, 0, PTRS_PER_TABLE, &s);
		vml_rcu_read_unlock();
		ru_apply(mm, &pt->rollup, &s);
	}
	if (vol && !vml_broken(VML_BROKEN_ROLLUP_SHARED))
		ru_make_volatile(mm, pt);
}

void rollup_pte_table_install(struct pte_table *pt, struct mm *mm, unsigned long addr)
{
	struct mm *old = load_relaxed(&pt->rollup_mm);

	if (mm && !mm_rollup_incremental(mm))
		mm = NULL;
	if (!old && !mm)
		return;
	spin_lock(&pt->ptl);
	if (old && old != mm) {
		static const struct rollup_sums zero;

		if (pt->rollup_volatile) {
			spin_lock(&old->rollup_lock);
			list_del_init(&pt->rollup_node);
			pt->rollup_volatile = false;
			spin_unlock(&old->rollup_lock);
		}
		ru_apply(old, &pt->rollup, &zero);	/* a volatile table's is zero */
	}
	pt->rollup_addr = addr & PMD_MASK;
	pt->rollup_leaf = false;
	store_relaxed(&pt->rollup_mm, mm);
	pte_unlock(pt);		/* counts it (if @mm) where it is now */
}

void rollup_pte_table_remove(struct pte_table *pt)
{
	rollup_pte_table_install(pt, NULL, 0);
}

struct pte_table *rollup_leaf_holder(struct mm *mm, int *err)
{
	struct pte_table *pt;

	*err = 0;
	if (!mm_rollup_incremental(mm))
		return NULL;
	pt = pte_table_alloc();
	if (!pt)
		*err = -ENOMEM;
	return pt;
}

void rollup_pmd_update(struct mm *mm, _Atomic uint64_t *pmd, unsigned long addr)
{
	struct pte_table **slot = pmd_deposit_slot(pmd);
	struct pte_table *rec;

	if (!mm_rollup_incremental(mm))
		return;
	spin_assert_held(&mm->page_table_lock);
	if (!pmd_is_huge(load_relaxed(pmd)))
		return;	/* split or zapped: the table (or nothing) counts now */
	rec = *slot;
	/* Every leaf of an mm with sums has a deposit: a file leaf its holder. */
	VML_BUG_ON(!rec);
	pte_lock(rec);
	rec->rollup_leaf = true;
	rec->rollup_pmd = pmd;
	if (addr)
		rec->rollup_addr = addr & PMD_MASK;
	store_relaxed(&rec->rollup_mm, mm);
	pte_unlock(rec);	/* counts the leaf */
}

/* The share of the huge leaf @pt holds. Context: @pt's ptl and page_table_lock held. */
static bool ru_leaf(struct mm *mm, struct pte_table *pt, struct rollup_sums *s)
{
	uint64_t v = load_relaxed(pt->rollup_pmd);
	struct folio *folio;
	struct vma *vma;

	if (!pmd_is_huge(v))
		return false;
	folio = page_folio(pte_page(v));
	vma = rtree_find(&mm->mm_mt, pt->rollup_addr, NULL);
	if (!vma || folio_is_zero(folio))
		return false;
	if (folio_test(folio, PG_anon))
		s->v[RU_ANON_THP] += PMD_SIZE;
	else if (folio_test(folio, PG_swapbacked))
		s->v[RU_SHMEM_THP] += PMD_SIZE;
	else
		s->v[RU_FILE_THP] += PMD_SIZE;
	return ru_account(s, &folio->pages[0], true, v & PT_YOUNG, v & PT_DIRTY,
			  vma->vm_flags & VM_LOCKED);
}

/* Context: the ptl of @pt held by walk_page_range. */
static int ru_range_pte(struct mm *mm, struct pte_table *pt, unsigned long start,
			unsigned long end, void *priv)
{
	(void)mm;
	(void)start;
	(void)end;
	(void)priv;
	spin_assert_held(&pt->ptl);
	return 0;	/* the walk's pte_unlock() counts the table */
}

/* Context: page_table_lock held by walk_page_range. */
static int ru_range_pmd(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start,
			unsigned long end, void *priv)
{
	(void)end;
	(void)priv;
	rollup_pmd_update(mm, pmd, start);
	return 0;
}

void rollup_range_update(struct mm *mm, unsigned long start, unsigned long end)
{
	static const struct pt_walk_ops ops = {
		.pte_range = ru_range_pte,
		.pmd_huge = ru_range_pmd,
	};

	if (!mm_rollup_incremental(mm) || start >= end)
		return;
	walk_page_range(mm, start & PMD_MASK, end, &ops, NULL);
}

/*
 * Count volatile @pt for a read: its share now, added to @acc; if nothing
 * in it depends on others any more it becomes stable, its share in the
 * sums - which the read's snapshot predates, so it is counted once.
 * Context: RCU, page_table_lock and @pt's ptl held.
 */
static void ru_count_volatile(struct mm *mm, struct pte_table *pt, struct rollup_sums *acc)
{
	struct rollup_sums s = { { 0 } };
	bool vol;

	if (load_relaxed(&pt->rollup_mm) != mm)
		return;	/* left the mm since the snapshot: its entries went with it */
	vol = pt->rollup_leaf ? ru_leaf(mm, pt, &s)
			      : ru_entries(mm, pt, NULL, 0, PTRS_PER_TABLE, &s);
	for (int f = 0; f < NR_ROLLUP; f++)
		acc->v[f] += s.v[f];
	if (!vol && pt->rollup_volatile)
		ru_make_stable(mm, pt, &s);
}

int rollup_read(struct mm *mm, struct rollup_sums *out)
{
	struct pte_table **tables = NULL;
	struct rollup_sums acc = { { 0 } };
	size_t nr = 0, cap = 0;

	vml_rcu_read_lock();
	/*
	 * One snapshot, under rollup_lock, of the stable tables' sums and the
	 * volatile list: a table moves between them only under that lock, so
	 * each is in exactly one. Ends: each retry had room for fewer tables
	 * than the list held; the room grows.
	 */
	for (;;) {
		struct pte_table *pt;
		size_t want = 0;

		spin_lock(&mm->rollup_lock);
		list_for_each_entry(pt, &mm->rollup_volatile, rollup_node) {
			if (want < cap)
				tables[want] = pt;
			want++;
		}
		if (want <= cap) {
			for (int f = 0; f < NR_ROLLUP; f++)
				out->v[f] = load_relaxed(&mm->rollup[f]);
			spin_unlock(&mm->rollup_lock);
			nr = want;
			break;
		}
		spin_unlock(&mm->rollup_lock);
		vml_free(tables);
		cap = want + want / 2;
		tables = vml_malloc(cap * sizeof(*tables));
		if (!tables) {
			vml_rcu_read_unlock();
			return -ENOMEM;
		}
	}
	/*
	 * RCU keeps each table's memory (tables are freed a grace period after
	 * they leave the mm). A table the snapshot listed is counted here even
	 * if it became stable since: the snapshot's sums do not hold it.
	 */
	for (size_t i = 0; i < nr; i++) {
		/* page_table_lock too: a leaf's folio stays while its PMD does */
		spin_lock(&mm->page_table_lock);
		spin_lock(&tables[i]->ptl);
		ru_count_volatile(mm, tables[i], &acc);
		spin_unlock(&tables[i]->ptl);
		spin_unlock(&mm->page_table_lock);
	}
	vml_rcu_read_unlock();
	vml_free(tables);
	for (int f = 0; f < NR_ROLLUP; f++)
		out->v[f] += acc.v[f];
	return 0;
}
