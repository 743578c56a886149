// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * folio.c - folio allocation, reference and map counting.
 */
#include "mm/file.h"
#include "mm/folio.h"
#include "mm/vma.h"
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
	/* acq_rel: the last put sees every earlier user's accesses before freeing */
	if (fetch_sub_acq_rel(&folio->refcount, 1) == 1) {
		vml_assert(load_relaxed(&folio->total_mapcount) == 0);
		if (folio_is_anon(folio))
			anon_vma_put(folio->mapping);
		vml_free(folio);
	}
}

void folio_add_rmap_pte(struct folio *folio, struct page *page)
{
	if (folio_is_zero(folio))
		return;
	fetch_add_relaxed(&page->mapcount, 1);
	fetch_add_relaxed(&folio->total_mapcount, 1);
}

void folio_remove_rmap_pte(struct folio *folio, struct page *page)
{
	if (folio_is_zero(folio))
		return;
	VML_BUG_ON(fetch_sub_relaxed(&page->mapcount, 1) <= 0);
	fetch_sub_relaxed(&folio->total_mapcount, 1);
}

void folio_add_rmap_pmd(struct folio *folio)
{
	if (folio_is_zero(folio))
		return;
	fetch_add_relaxed(&folio->entire_mapcount, 1);
	fetch_add_relaxed(&folio->total_mapcount, (int)folio_nr_pages(folio));
}

void folio_remove_rmap_pmd(struct folio *folio)
{
	if (folio_is_zero(folio))
		return;
	VML_BUG_ON(fetch_sub_relaxed(&folio->entire_mapcount, 1) <= 0);
	fetch_sub_relaxed(&folio->total_mapcount, (int)folio_nr_pages(folio));
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
