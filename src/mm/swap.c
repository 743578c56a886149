// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * swap.c - swap slot allocation and counting.
 */
#include <errno.h>

#include "mm/swap.h"
#include "sync/spinlock.h"
#include "util/alloc.h"
#include "util/compiler.h"

int swap_init(struct vml_sys *sys)
{
	if (!sys->cfg.swap_pages)
		return 0;
	sys->swap_map = vml_zalloc((sys->cfg.swap_pages + 1) * sizeof(*sys->swap_map));
	sys->swap_next = 1;
	return sys->swap_map ? 0 : -ENOMEM;
}

void swap_fini(struct vml_sys *sys)
{
	vml_free(sys->swap_map);
	sys->swap_map = NULL;
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
			if (load_relaxed(&sys->swap_map[off]) == 0)
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
	VML_BUG_ON(!off || off > sys->cfg.swap_pages);
	spin_lock(&sys->swap_lock);
	VML_BUG_ON(load_relaxed(&sys->swap_map[off]) <= 0);
	if (fetch_sub_relaxed(&sys->swap_map[off], 1) == 1)
		sys->swap_used--;
	spin_unlock(&sys->swap_lock);
}

int swap_count(struct vml_sys *sys, unsigned long off)
{
	if (!off || off > sys->cfg.swap_pages)
		return 0;
	return load_relaxed(&sys->swap_map[off]);
}
