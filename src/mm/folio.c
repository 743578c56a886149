// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * folio.c - folio allocation, reference and map counting.
 */
#include <assert.h>
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
	spin_lock_init(&folio->mapcount_lock, LOCK_CLASS_MAPCOUNT);
	folio->mm_id_mapcount[0] = folio->mm_id_mapcount[1] = -1;
	for (unsigned long i = 0; i < nr; i++) {
		folio->pages[i].index = (uint16_t)i;
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

/*
 * A large folio's mapcount and mm slots, as 6.18's
 * folio_add_return_large_mapcount keeps them: @mm's mappings go to its
 * slot, or to a free one (the folio becomes "maybe shared" if it had other
 * mappings); with both slots taken by other mms they are counted only in
 * the total (the folio is shared already).
 */
static void large_mapcount_add(struct folio *folio, int diff, struct mm *mm)
{
	int was;

	spin_lock(&folio->mapcount_lock);
	was = fetch_add_relaxed(&folio->total_mapcount, diff);
	if (folio->mm_id[0] == mm) {
		folio->mm_id_mapcount[0] += diff;
	} else if (folio->mm_id[1] == mm) {
		folio->mm_id_mapcount[1] += diff;
	} else if (!folio->mm_id[0]) {
		folio->mm_id[0] = mm;
		folio->mm_id_mapcount[0] = diff - 1;
		if (was)
			store_relaxed(&folio->maybe_shared, true);
	} else if (!folio->mm_id[1]) {
		folio->mm_id[1] = mm;
		folio->mm_id_mapcount[1] = diff - 1;
		store_relaxed(&folio->maybe_shared, true);	/* slot 0 has mappings too */
	}
	spin_unlock(&folio->mapcount_lock);
}

/*
 * The reverse (folio_sub_return_large_mapcount): a slot whose count goes
 * negative is freed (mappings counted before the mm had a slot make it
 * drop early), and then, if the other slot holds every mapping left - or
 * none is left - the folio is exclusive again. Return: the mappings left.
 */
static int large_mapcount_sub(struct folio *folio, int diff, struct mm *mm)
{
	int left;

	spin_lock(&folio->mapcount_lock);
	left = fetch_sub_relaxed(&folio->total_mapcount, diff) - diff;
	VML_BUG_ON(left < 0);
	for (int i = 0; i < 2; i++) {
		if (folio->mm_id[i] != mm)
			continue;
		folio->mm_id_mapcount[i] -= diff;
		if (folio->mm_id_mapcount[i] >= 0)
			goto out;
		folio->mm_id_mapcount[i] = -1;
		folio->mm_id[i] = NULL;
		break;
	}
	if (folio->mm_id_mapcount[0] == left - 1 || folio->mm_id_mapcount[1] == left - 1)
		store_relaxed(&folio->maybe_shared, false);
out:
	spin_unlock(&folio->mapcount_lock);
	return left;
}

void folio_add_rmap_pte(struct folio *folio, struct page *page, struct mm *mm)
{
	if (folio_is_zero(folio))
		return;
	fetch_add_relaxed(&page->mapcount, 1);
	if (folio->order)
		large_mapcount_add(folio, 1, mm);
	else
		fetch_add_relaxed(&folio->total_mapcount, 1);
}

void folio_remove_rmap_pte(struct folio *folio, struct page *page, struct mm *mm)
{
	if (folio_is_zero(folio))
		return;
	VML_BUG_ON(fetch_sub_relaxed(&page->mapcount, 1) <= 0);
	if (folio->order)
		large_mapcount_sub(folio, 1, mm);
	else
		VML_BUG_ON(fetch_sub_relaxed(&folio->total_mapcount, 1) <= 0);
}

/* A PMD mapping counts a mapping of every page in total_mapcount (not 1, as 6.18 counts it). */
void folio_add_rmap_pmd(struct folio *folio, struct mm *mm)
{
	if (folio_is_zero(folio))
		return;
	fetch_add_relaxed(&folio->entire_mapcount, 1);
	large_mapcount_add(folio, (int)folio_nr_pages(folio), mm);
}

void folio_remove_rmap_pmd(struct folio *folio, struct mm *mm)
{
	if (folio_is_zero(folio))
		return;
	VML_BUG_ON(fetch_sub_relaxed(&folio->entire_mapcount, 1) <= 0);
	large_mapcount_sub(folio, (int)folio_nr_pages(folio), mm);
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

static_assert(sizeof(((struct vml_sys *)0)->lru_batch) /
	      sizeof(((struct vml_sys *)0)->lru_batch[0]) == NR_LRU_BATCHES,
	      "one batch per lru_op up to LRU_MLOCK");

/* The batch a move waits in: the mlock kinds share one (mlock_fbatch). */
static unsigned int lru_batch_index(enum lru_op op)
{
	return op < LRU_MLOCK ? (unsigned int)op : LRU_MLOCK;
}

/*
 * What the mlock batch does to one folio (mlock_folio_batch). Only a new
 * folio is off the LRU while it waits; the other two find a folio that
 * another batch holds off the LRU and leave it as it is (folio_test_clear_lru
 * fails): its mlock then shows only when reclaim finds it.
 */
static void mlock_apply(struct folio *folio, enum lru_op op)
{
	if (op == LRU_MLOCK_NEW) {	/* __mlock_new_folio */
		folio_clear(folio, PG_lru_batch);
		folio_set(folio, PG_unevictable);
		folio->mlock_count = 1;
		return;
	}
	if (folio_test(folio, PG_lru_batch))
		return;
	if (op == LRU_MLOCK) {		/* __mlock_folio */
		if (folio_test(folio, PG_unevictable)) {
			folio->mlock_count++;
		} else {
			folio_clear(folio, PG_active);
			folio_set(folio, PG_unevictable);
			folio->mlock_count = 1;
		}
	} else {			/* __munlock_folio */
		/* another locked mapping still holds it: it stays put */
		if (folio_test(folio, PG_unevictable) && folio->mlock_count &&
		    --folio->mlock_count)
			return;
		folio_clear(folio, PG_unevictable);
	}
}

/* What a batch move does to one folio (lru_activate, lru_deactivate, lru_lazyfree). */
static void lru_apply(struct folio *folio, enum lru_op op)
{
	if (op >= LRU_MLOCK) {
		mlock_apply(folio, op);
		return;
	}
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
	default:
		break;
	}
}

/*
 * Move batch @b, in the order its folios joined it. Context: sys->lru_lock
 * held. The batch's references go to @put (at most 31).
 */
static unsigned int lru_move_batch(struct vml_sys *sys, unsigned int b, struct folio **put)
{
	unsigned int n = sys->lru_nr[b];

	spin_assert_held(&sys->lru_lock);
	for (unsigned int i = 0; i < n; i++) {
		lru_apply(sys->lru_batch[b][i], (enum lru_op)sys->lru_ops[b][i]);
		put[i] = sys->lru_batch[b][i];
	}
	sys->lru_nr[b] = 0;
	return n;
}

/*
 * The queue-time tests (folio_activate, folio_deactivate, folio_mark_lazyfree):
 * is the move pointless already? The mlock moves always queue.
 */
static bool lru_op_skip(struct folio *folio, enum lru_op op)
{
	switch (op) {
	case LRU_ACTIVATE:
		return folio_test(folio, PG_active | PG_unevictable);
	case LRU_DEACTIVATE:
		return !folio_test(folio, PG_active) || folio_test(folio, PG_unevictable);
	case LRU_LAZYFREE:
		return !folio_test(folio, PG_anon) || !folio_test(folio, PG_swapbacked) ||
		       folio_test(folio, PG_swapcache | PG_unevictable);
	default:
		return false;
	}
}

void folio_lru_op(struct vml_sys *sys, struct folio *folio, enum lru_op op)
{
	struct folio *put[ARRAY_SIZE(sys->lru_batch[0])];
	unsigned int b = lru_batch_index(op), n = 0;

	if (folio_is_zero(folio) || lru_op_skip(folio, op))
		return;
	spin_lock(&sys->lru_lock);
	if (op < LRU_MLOCK && folio_test(folio, PG_lru_batch)) {
		spin_unlock(&sys->lru_lock);
		return;		/* off the LRU already: the move is dropped */
	}
	folio_get(folio);
	/* A folio batched for the LRU moves is off it; one mlocked stays on it. */
	if (op < LRU_MLOCK || op == LRU_MLOCK_NEW)
		folio_set(folio, PG_lru_batch);
	sys->lru_ops[b][sys->lru_nr[b]] = (unsigned char)op;
	sys->lru_batch[b][sys->lru_nr[b]++] = folio;
	if (sys->lru_nr[b] == ARRAY_SIZE(sys->lru_batch[b]) || folio->order)
		n = lru_move_batch(sys, b, put);
	spin_unlock(&sys->lru_lock);
	while (n)
		folio_put(put[--n]);
}

/* In batch order: the mlock batch, last, finds the others' folios back on the LRU. */
void lru_add_drain(struct vml_sys *sys)
{
	for (unsigned int b = 0; b < NR_LRU_BATCHES; b++) {
		struct folio *put[ARRAY_SIZE(sys->lru_batch[0])];
		unsigned int n;

		spin_lock(&sys->lru_lock);
		n = lru_move_batch(sys, b, put);
		spin_unlock(&sys->lru_lock);
		while (n)
			folio_put(put[--n]);
	}
}
