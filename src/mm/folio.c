// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * folio.c - folio allocation, reference and map counting.
 */
#include <sched.h>

#include "mm/file.h"
#include "mm/folio.h"
#include "mm/rmap.h"
#include "sync/spinlock.h"
#include "util/alloc.h"
#include "util/compiler.h"

struct folio *folio_alloc(struct vml_sys *sys, unsigned int order, int nid)
{
	unsigned long nr = 1UL << order;
	struct folio *folio;

	(void)sys;
	folio = vml_zalloc(sizeof(*folio) + nr * sizeof(struct page));
	if (!folio)
		return NULL;
	store_relaxed(&folio->refcount, 1);
	folio->order = order;
	folio->nid = nid;
	for (unsigned long i = 0; i < nr; i++) {
		folio->pages[i].index = (uint32_t)i;
		folio->pages[i].folio = folio;
	}
	return folio;
}

int fault_nid(struct mm *mm)
{
	unsigned int nodes = mm->sys->cfg.numa_nodes;
	int cpu;

	if (nodes <= 1)
		return 0;
	/* CPUs are spread over the nodes round-robin; a pinned thread allocates locally. */
	cpu = sched_getcpu();
	return cpu < 0 ? 0 : cpu % (int)nodes;
}

void folio_get(struct folio *folio)
{
	if (folio_is_zero(folio))
		return;
	fetch_add_relaxed(&folio->refcount, 1);
}

void folio_put(struct folio *folio)
{
	if (folio_is_zero(folio))
		return;
	/* acq_rel: pairs with the other puts' decrements: the last sees their accesses */
	if (fetch_sub_acq_rel(&folio->refcount, 1) == 1) {
		vml_assert(load_relaxed(&folio->total_mapcount) == 0);
		if (folio_is_anon(folio))
			anon_vma_put(folio->mapping);
		vml_free(folio);
	}
}

/* Which mms map a large folio; @was: its total mapcount before this mapping. */
static void folio_note_mm(struct folio *folio, struct mm *mm, int was)
{
	if (!folio->order)
		return;
	if (!was) {
		store_relaxed(&folio->rmap_mm, mm);
		store_relaxed(&folio->rmap_shared, false);
	} else if (load_relaxed(&folio->rmap_mm) != mm) {
		store_relaxed(&folio->rmap_shared, true);
	}
}

static void folio_unmapped(struct folio *folio, int left)
{
	if (folio->order && !left) {
		store_relaxed(&folio->rmap_mm, NULL);
		store_relaxed(&folio->rmap_shared, false);
	}
}

void folio_add_rmap_pte(struct folio *folio, struct page *page, struct mm *mm)
{
	if (folio_is_zero(folio))
		return;
	fetch_add_relaxed(&page->mapcount, 1);
	folio_note_mm(folio, mm, fetch_add_relaxed(&folio->total_mapcount, 1));
}

void folio_remove_rmap_pte(struct folio *folio, struct page *page)
{
	if (folio_is_zero(folio))
		return;
	VML_BUG_ON(fetch_sub_relaxed(&page->mapcount, 1) <= 0);
	folio_unmapped(folio, fetch_sub_relaxed(&folio->total_mapcount, 1) - 1);
}

void folio_add_rmap_pmd(struct folio *folio, struct mm *mm)
{
	if (folio_is_zero(folio))
		return;
	fetch_add_relaxed(&folio->entire_mapcount, 1);
	folio_note_mm(folio, mm, fetch_add_relaxed(&folio->total_mapcount,
						   (int)folio_nr_pages(folio)));
}

void folio_remove_rmap_pmd(struct folio *folio)
{
	if (folio_is_zero(folio))
		return;
	VML_BUG_ON(fetch_sub_relaxed(&folio->entire_mapcount, 1) <= 0);
	folio_unmapped(folio, fetch_sub_relaxed(&folio->total_mapcount,
						(int)folio_nr_pages(folio)) -
			      (int)folio_nr_pages(folio));
}

enum mm_counter folio_mm_counter(struct folio *folio)
{
	if (folio_is_anon(folio))
		return MM_ANONPAGES;
	if (folio_test(folio, PG_swapbacked))
		return MM_SHMEMPAGES;
	return MM_FILEPAGES;
}

int zero_folio_init(struct vml_sys *sys)
{
	sys->zero_folio = folio_alloc(sys, 0, 0);
	sys->huge_zero_folio = folio_alloc(sys, HPAGE_PMD_ORDER, 0);
	if (!sys->zero_folio || !sys->huge_zero_folio)
		return -1;
	folio_set(sys->zero_folio, PG_zero);
	folio_set(sys->huge_zero_folio, PG_zero);
	return 0;
}

void zero_folio_fini(struct vml_sys *sys)
{
	vml_free(sys->zero_folio);
	vml_free(sys->huge_zero_folio);
	sys->zero_folio = NULL;
	sys->huge_zero_folio = NULL;
}

struct folio *sys_zero_folio(struct vml_sys *sys)
{
	return sys->zero_folio;
}

/* What a batch move does to one folio (lru_activate, lru_deactivate, lru_lazyfree). */
static void lru_apply(struct folio *folio, enum lru_op op)
{
	folio_clear(folio, PG_lru_batch);
	switch (op) {
	case LRU_ACTIVATE:
		if (!folio_test(folio, PG_active | PG_unevictable))
			folio_set(folio, PG_active);
		break;
	case LRU_DEACTIVATE:
		if (folio_test(folio, PG_active) && !folio_test(folio, PG_unevictable))
			folio_clear(folio, PG_active | PG_referenced);
		break;
	case LRU_LAZYFREE:
		if (folio_test(folio, PG_anon) && folio_test(folio, PG_swapbacked) &&
		    !folio_test(folio, PG_swapcache | PG_unevictable))
			folio_clear(folio, PG_active | PG_referenced | PG_swapbacked);
		break;
	}
}

/* Context: sys->lru_lock held. The batch's references go to @put (at most 31). */
static unsigned int lru_move_batch(struct vml_sys *sys, enum lru_op op, struct folio **put)
{
	unsigned int n = sys->lru_nr[op];

	spin_assert_held(&sys->lru_lock);
	for (unsigned int i = 0; i < n; i++) {
		lru_apply(sys->lru_batch[op][i], op);
		put[i] = sys->lru_batch[op][i];
	}
	sys->lru_nr[op] = 0;
	return n;
}

void folio_lru_op(struct vml_sys *sys, struct folio *folio, enum lru_op op)
{
	struct folio *put[ARRAY_SIZE(sys->lru_batch[0])];
	unsigned int n = 0;

	if (folio_is_zero(folio))
		return;
	/* The queue-time tests (folio_activate, folio_deactivate, folio_mark_lazyfree). */
	if ((op == LRU_ACTIVATE && folio_test(folio, PG_active | PG_unevictable)) ||
	    (op == LRU_DEACTIVATE && (!folio_test(folio, PG_active) ||
				      folio_test(folio, PG_unevictable))) ||
	    (op == LRU_LAZYFREE && (!folio_test(folio, PG_anon) ||
				    !folio_test(folio, PG_swapbacked) ||
				    folio_test(folio, PG_swapcache | PG_unevictable))))
		return;
	spin_lock(&sys->lru_lock);
	if (folio_test(folio, PG_lru_batch)) {
		spin_unlock(&sys->lru_lock);
		return;		/* off the LRU already: the move is dropped */
	}
	folio_get(folio);
	folio_set(folio, PG_lru_batch);
	sys->lru_batch[op][sys->lru_nr[op]++] = folio;
	if (sys->lru_nr[op] == ARRAY_SIZE(sys->lru_batch[op]) || folio->order)
		n = lru_move_batch(sys, op, put);
	spin_unlock(&sys->lru_lock);
	while (n)
		folio_put(put[--n]);
}

void lru_add_drain(struct vml_sys *sys)
{
	for (int op = LRU_ACTIVATE; op <= LRU_LAZYFREE; op++) {
		struct folio *put[ARRAY_SIZE(sys->lru_batch[0])];
		unsigned int n;

		spin_lock(&sys->lru_lock);
		n = lru_move_batch(sys, op, put);
		spin_unlock(&sys->lru_lock);
		while (n)
			folio_put(put[--n]);
	}
}
