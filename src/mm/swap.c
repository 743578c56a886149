// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * swap.c - swap slot allocation and counting.
 */
#include <errno.h>

#include "mm/folio.h"
#include "mm/swap.h"
#include "sync/spinlock.h"
#include "util/alloc.h"
#include "util/compiler.h"

int swap_init(struct vml_sys *sys)
{
	if (!sys->cfg.swap_pages)
		return 0;
	sys->swap_map = vml_zalloc((sys->cfg.swap_pages + 1) * sizeof(*sys->swap_map));
	sys->swap_cache = vml_zalloc((sys->cfg.swap_pages + 1) * sizeof(*sys->swap_cache));
	sys->swap_next = 1;
	if (!sys->swap_map || !sys->swap_cache) {
		swap_fini(sys);
		return -ENOMEM;
	}
	return 0;
}

void swap_fini(struct vml_sys *sys)
{
	/* Every mm is gone: no entry refers to a slot, so no folio is cached. */
	for (unsigned long off = 1; sys->swap_cache && off <= sys->cfg.swap_pages; off++)
		VML_BUG_ON(sys->swap_cache[off]);
	vml_free(sys->swap_map);
	vml_free(sys->swap_cache);
	sys->swap_map = NULL;
	sys->swap_cache = NULL;
}

/* Context: swap_lock held. A slot is free with no entry and no cached folio. */
static bool slot_free(struct vml_sys *sys, unsigned long off)
{
	return load_relaxed(&sys->swap_map[off]) == 0 && !sys->swap_cache[off];
}

unsigned long swap_alloc(struct vml_sys *sys)
{
	unsigned long n = sys->cfg.swap_pages, off = 0;

	if (!n)
		return 0;
	spin_lock(&sys->swap_lock);
	if (sys->swap_used < n) {
		/* Ends: a free slot exists (swap_used < n). */
		for (off = sys->swap_next;; off = off % n + 1) {
			if (slot_free(sys, off))
				break;
		}
		store_relaxed(&sys->swap_map[off], 1);
		sys->swap_used++;
		sys->swap_next = off % n + 1;
	}
	spin_unlock(&sys->swap_lock);
	return off;
}

void swap_dup(struct vml_sys *sys, unsigned long off)
{
	VML_BUG_ON(!off || off > sys->cfg.swap_pages);
	fetch_add_relaxed(&sys->swap_map[off], 1);
}

void swap_free_entry(struct vml_sys *sys, unsigned long off)
{
	struct folio *drop = NULL;

	VML_BUG_ON(!off || off > sys->cfg.swap_pages);
	spin_lock(&sys->swap_lock);
	VML_BUG_ON(load_relaxed(&sys->swap_map[off]) <= 0);
	if (fetch_sub_relaxed(&sys->swap_map[off], 1) == 1) {
		/*
		 * The last entry: a cached folio nobody maps goes with it
		 * (free_swap_and_cache); one still mapped stays cached until
		 * its mappings go (folio_free_swap then).
		 */
		drop = sys->swap_cache[off];
		if (drop && folio_mapcount(drop))
			drop = NULL;
		if (drop) {
			sys->swap_cache[off] = NULL;
			folio_clear(drop, PG_swapcache);
		}
		if (slot_free(sys, off))
			sys->swap_used--;
	}
	spin_unlock(&sys->swap_lock);
	if (drop)
		folio_put(drop);
}

struct folio *swap_cache_get(struct vml_sys *sys, unsigned long off)
{
	struct folio *folio;

	VML_BUG_ON(!off || off > sys->cfg.swap_pages);
	spin_lock(&sys->swap_lock);
	folio = sys->swap_cache[off];
	if (folio)
		folio_get(folio);
	spin_unlock(&sys->swap_lock);
	return folio;
}

struct folio *swap_cache_install(struct vml_sys *sys, struct folio *folio, unsigned long off)
{
	struct folio *cached;

	VML_BUG_ON(!off || off > sys->cfg.swap_pages || folio->order);
	spin_lock(&sys->swap_lock);
	VML_BUG_ON(load_relaxed(&sys->swap_map[off]) <= 0);
	cached = sys->swap_cache[off];
	if (!cached) {
		sys->swap_cache[off] = folio;
		folio->swap = off;
		folio_set(folio, PG_swapcache);
		cached = folio;
	}
	folio_get(cached);	/* the cache's, or the caller's on the other folio */
	spin_unlock(&sys->swap_lock);
	return cached;
}

bool folio_free_swap(struct vml_sys *sys, struct folio *folio)
{
	unsigned long off;
	bool dropped = false;

	if (!folio_test(folio, PG_swapcache))
		return false;
	spin_lock(&sys->swap_lock);
	off = folio->swap;
	if (folio_test(folio, PG_swapcache) && load_relaxed(&sys->swap_map[off]) == 0) {
		sys->swap_cache[off] = NULL;
		folio_clear(folio, PG_swapcache);
		sys->swap_used--;	/* no entry and no cache: free */
		dropped = true;
	}
	spin_unlock(&sys->swap_lock);
	if (dropped) {
		/* Its only copy is in memory now: dirty, to be written again (folio_free_swap). */
		folio_set(folio, PG_dirty);
		folio_put(folio);
	}
	return dropped;
}

void free_swap_cache(struct vml_sys *sys, struct folio *folio)
{
	if (folio_test(folio, PG_swapcache) && !folio_mapcount(folio))
		folio_free_swap(sys, folio);
}

unsigned long swap_cache_take_slot(struct vml_sys *sys, struct folio *folio)
{
	unsigned long off;

	spin_lock(&sys->swap_lock);
	VML_BUG_ON(!folio_test(folio, PG_swapcache));
	off = folio->swap;
	fetch_add_relaxed(&sys->swap_map[off], 1);
	sys->swap_cache[off] = NULL;
	folio_clear(folio, PG_swapcache);
	spin_unlock(&sys->swap_lock);
	folio_put(folio);
	return off;
}

bool swap_cache_has(struct vml_sys *sys, unsigned long off)
{
	bool has;

	if (!off || off > sys->cfg.swap_pages)
		return false;
	spin_lock(&sys->swap_lock);
	has = sys->swap_cache[off] != NULL;
	spin_unlock(&sys->swap_lock);
	return has;
}

int swap_count(struct vml_sys *sys, unsigned long off)
{
	if (!off || off > sys->cfg.swap_pages)
		return 0;
	return load_relaxed(&sys->swap_map[off]);
}
