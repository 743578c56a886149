/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * folio.h - folios (groups of 2^order pages), their reference and map
 * counts, and the shared zero page.
 *
 * Counting follows CONFIG_PAGE_MAPCOUNT (the live kernel's setting): each
 * page knows how many PTEs map it, a large folio also counts whole-folio
 * PMD mappings (entire_mapcount), and total_mapcount sums every mapping.
 * A folio holds one reference per mapping plus one for the page cache (file
 * folios) plus transient ones; it is freed when the last goes.
 */
#ifndef VML_MM_FOLIO_H
#define VML_MM_FOLIO_H

#include "mm/mm_types.h"

struct folio *folio_alloc(struct vml_sys *sys, unsigned int order, int nid);
/* The node a new page goes to: the faulting CPU's ("default" policy = local). */
int fault_nid(struct mm *mm);
void folio_get(struct folio *folio);
void folio_put(struct folio *folio);

static inline struct folio *page_folio(const struct page *page)
{
	return page->folio;
}

static inline bool folio_is_zero(const struct folio *folio)
{
	return folio_test(folio, PG_zero);
}

static inline bool folio_is_anon(const struct folio *folio)
{
	return folio_test(folio, PG_anon);
}

/* May @page hold data (PAGE_DATA), or is it still zero-filled? */
static inline bool page_has_data(struct page *page)
{
	return load_relaxed(&page->flags) & PAGE_DATA;
}

static inline void page_set_data(struct page *page, bool data)
{
	if (data)
		fetch_or_relaxed(&page->flags, PAGE_DATA);
	else
		fetch_and_relaxed(&page->flags, (uint16_t)~PAGE_DATA);
}

/* PageAnonExclusive (mm_types.h). Context: the ptl of an entry mapping @page. */
static inline bool page_anon_exclusive(struct page *page)
{
	return load_relaxed(&page->flags) & PAGE_ANON_EXCLUSIVE;
}

static inline void page_set_anon_exclusive(struct page *page, bool exclusive)
{
	if (exclusive)
		fetch_or_relaxed(&page->flags, PAGE_ANON_EXCLUSIVE);
	else
		fetch_and_relaxed(&page->flags, (uint16_t)~PAGE_ANON_EXCLUSIVE);
}

/* Mappings of one page: its PTE mappings plus PMD mappings of its folio. */
static inline int folio_precise_page_mapcount(struct folio *folio, struct page *page)
{
	return load_relaxed(&page->mapcount) + load_relaxed(&folio->entire_mapcount);
}

static inline int folio_mapcount(struct folio *folio)
{
	return load_relaxed(&folio->total_mapcount);
}

static inline int folio_ref_count(struct folio *folio)
{
	return load_relaxed(&folio->refcount);
}

/*
 * rmap: map/unmap a page by PTE, or a whole large folio by PMD, in @mm.
 * Caller holds the PTL (the PMD: page_table_lock).
 */
void folio_add_rmap_pte(struct folio *folio, struct page *page, struct mm *mm);
void folio_remove_rmap_pte(struct folio *folio, struct page *page, struct mm *mm);
void folio_add_rmap_pmd(struct folio *folio, struct mm *mm);
void folio_remove_rmap_pmd(struct folio *folio, struct mm *mm);

/*
 * folio_maybe_mapped_shared - might another process map this folio? A small
 * folio: mapped more than once. A large one mapped once: no. Otherwise, as
 * its mm slots say (folio.c): set when a second mm mapped it, cleared when
 * one mm's mappings all went and another mm holds all the rest (mappings
 * within one mm do not count). A hint: it may say "shared" of a folio a
 * third mm mapped and left.
 */
static inline bool folio_maybe_mapped_shared(struct folio *folio)
{
	if (!folio->order)
		return folio_mapcount(folio) > 1;
	if (folio_mapcount(folio) <= 1)
		return false;
	return load_relaxed(&folio->maybe_shared);
}

/* The page of a page-cache folio that holds file page @index. */
static inline struct page *folio_file_page(struct folio *folio, unsigned long index)
{
	return &folio->pages[index - folio->index];
}

/*
 * LRU moves that go through a batch (mm/swap.c folio_batch_add_and_move,
 * mm/mlock.c mlock_fbatch): queued for a small folio, done at once for a
 * large one (it moves the whole batch, also the small folios queued before
 * it). A folio already in a batch is off the LRU: further moves are dropped
 * until the batch is moved. Each applies its own conditions when it runs
 * (lru_activate, lru_deactivate, lru_lazyfree, mlock_folio_batch).
 *
 * The three mlock moves share one batch, in order, as the kernel's
 * mlock_fbatch does (one batch, each entry tagged with its kind): every
 * call queues, whatever the folio's state, and the folio stays on the LRU -
 * except a new one (LRU_MLOCK_NEW), which joins the LRU only when the batch
 * is moved. Until then a small folio mlocked is neither unevictable nor
 * active: numa_maps counts it inactive (`active=`).
 */
enum lru_op {
	LRU_ACTIVATE,	/* folio_activate: onto the active list */
	LRU_DEACTIVATE,	/* folio_deactivate (MADV_COLD): inactive, not referenced */
	LRU_LAZYFREE,	/* folio_mark_lazyfree (MADV_FREE): clean anonymous, not swap-backed */
	LRU_MLOCK,	/* mlock_folio: a folio on the LRU becomes unevictable, not active */
	LRU_MLOCK_NEW,	/* mlock_new_folio: a new folio joins the LRU unevictable */
	LRU_MUNLOCK,	/* munlock_folio: unevictable folio back, inactive */
};
#define NR_LRU_BATCHES	4	/* the mlock moves share the last batch */
void folio_lru_op(struct vml_sys *sys, struct folio *folio, enum lru_op op);
/*
 * lru_add_drain: move every batch, the mlock batch last (lru_add_drain_cpu,
 * then mlock_drain_local) - madvise cold/pageout/free per VMA, willneed,
 * populate, mlock, the end of a shared anonymous object with pages.
 */
void lru_add_drain(struct vml_sys *sys);

/*
 * mlock (mm/mlock.c): a small folio mapped into a VM_LOCKED VMA (and every
 * new anonymous folio there) is taken off the evictable lists - it becomes
 * unevictable and loses PG_active - when the mlock batch is moved; munlock
 * puts it back, inactive, likewise. The kernel also keeps an approximate
 * count of the locked VMAs mapping it; the model does not (a folio locked
 * twice is released by one munlock).
 */
static inline void mlock_folio(struct vml_sys *sys, struct folio *folio)
{
	folio_lru_op(sys, folio, LRU_MLOCK);
}

static inline void mlock_new_folio(struct vml_sys *sys, struct folio *folio)
{
	folio_lru_op(sys, folio, LRU_MLOCK_NEW);
}

static inline void munlock_folio(struct vml_sys *sys, struct folio *folio)
{
	folio_lru_op(sys, folio, LRU_MUNLOCK);
}

/*
 * folio_mark_accessed - a use the kernel sees without a young bit (GUP's
 * FOLL_TOUCH): the first marks the folio referenced, the next activates it
 * (through a batch) and clears referenced; unevictable folios stay put.
 */
static inline void folio_mark_accessed(struct vml_sys *sys, struct folio *folio)
{
	if (!folio_test(folio, PG_referenced)) {
		folio_set(folio, PG_referenced);
	} else if (!folio_test(folio, PG_unevictable | PG_active)) {
		if (!folio_test(folio, PG_lru_batch))
			folio_lru_op(sys, folio, LRU_ACTIVATE);
		folio_clear(folio, PG_referenced);
	}
}

/* Which mm counter a mapped folio belongs to. */
enum mm_counter folio_mm_counter(struct folio *folio);

/* The zero page of @sys (never freed, never counted as resident). */
struct folio *sys_zero_folio(struct vml_sys *sys);
int zero_folio_init(struct vml_sys *sys);
void zero_folio_fini(struct vml_sys *sys);

#endif /* VML_MM_FOLIO_H */
