// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sys.c - the modelled kernel: settings every mm shares, the zero page,
 * swap. Defaults are the live machine's (docs/host-profile.md).
 */
#include <errno.h>
#include <unistd.h>

#include "mm/folio.h"
#include "mm/internal.h"
#include "mm/mm_types.h"
#include "mm/swap.h"
#include "sync/rcu.h"
#include "util/alloc.h"
#include "util/compiler.h"

#define DEFAULT_MAX_MAP_COUNT 65530UL
#define DEFAULT_FAULT_AROUND_BYTES 65536UL
/* ext4 on 6.18 (large folios since 6.16): a 64 KiB write() makes one 64 KiB folio */
#define DEFAULT_FILE_FOLIO_MAX_BYTES 65536UL

/*
 * The per-size anonymous THP modes as the kernel keeps them: one mask of
 * orders per mode. Return: 0, or -EINVAL for a mode out of range or one set
 * for an order anonymous THP does not have (0, 1).
 */
static int thp_anon_masks(struct vml_sys *sys)
{
	for (unsigned int order = 0; order < VML_THP_ORDERS; order++) {
		enum vml_mthp_mode mode = sys->cfg.thp_anon[order];
		unsigned long bit = 1UL << order;

		if (mode == VML_MTHP_DEFAULT)
			mode = order == HPAGE_PMD_ORDER ? VML_MTHP_INHERIT : VML_MTHP_NEVER;
		if (mode > VML_MTHP_INHERIT || (order < 2 && mode != VML_MTHP_NEVER))
			return -EINVAL;
		if (mode == VML_MTHP_ALWAYS)
			sys->thp_anon_always |= bit;
		else if (mode == VML_MTHP_MADVISE)
			sys->thp_anon_madvise |= bit;
		else if (mode == VML_MTHP_INHERIT)
			sys->thp_anon_inherit |= bit;
	}
	return 0;
}

/*
 * The per-size shmem THP modes as the kernel keeps them (huge_shmem_orders_
 * always, _within_size, _madvise, _inherit). Return: 0, or -EINVAL for a
 * mode out of range or one set for order 0.
 */
static int shmem_mthp_masks(struct vml_sys *sys)
{
	for (unsigned int order = 0; order < VML_THP_ORDERS; order++) {
		enum vml_shmem_mthp_mode mode = sys->cfg.shmem_mthp[order];
		unsigned long bit = 1UL << order;

		if (mode == VML_SHMEM_MTHP_DEFAULT)
			mode = order == HPAGE_PMD_ORDER ? VML_SHMEM_MTHP_INHERIT : VML_SHMEM_MTHP_NEVER;
		if (mode > VML_SHMEM_MTHP_INHERIT || (!order && mode != VML_SHMEM_MTHP_NEVER))
			return -EINVAL;
		if (mode == VML_SHMEM_MTHP_ALWAYS)
			sys->shmem_orders_always |= bit;
		else if (mode == VML_SHMEM_MTHP_WITHIN_SIZE)
			sys->shmem_orders_within_size |= bit;
		else if (mode == VML_SHMEM_MTHP_ADVISE)
			sys->shmem_orders_madvise |= bit;
		else if (mode == VML_SHMEM_MTHP_INHERIT)
			sys->shmem_orders_inherit |= bit;
	}
	return 0;
}

int vml_sys_create(const struct vml_sys_config *cfg, struct vml_sys **out)
{
	struct vml_sys *sys;

	if (!out)
		return -EINVAL;
	if (cfg && (cfg->thp > VML_THP_NEVER || cfg->mmap_lock_steal > VML_STEAL_NOSTEAL_RETAKE ||
		    cfg->overcommit > VML_OVERCOMMIT_NEVER || cfg->i_mmap_order > VML_I_MMAP_PRE ||
		    cfg->shmem_swap_usage > VML_SHMEM_SWAP_PER_PAGE || cfg->rollup > VML_ROLLUP_INCREMENTAL ||
		    cfg->shmem_huge > VML_SHMEM_HUGE_FORCE ||
		    (cfg->fault_around_bytes & (cfg->fault_around_bytes - 1)) ||
		    cfg->fault_around_bytes > (1UL << 21) || cfg->numa_nodes > 64 ||
		    (cfg->file_folio_max_bytes & (cfg->file_folio_max_bytes - 1)) ||
		    (cfg->file_folio_max_bytes && cfg->file_folio_max_bytes < PAGE_SIZE) ||
		    cfg->file_folio_max_bytes > (1UL << 21)))
		return -EINVAL;
	sys = vml_zalloc(sizeof(*sys));
	if (!sys)
		return -ENOMEM;
	if (cfg)
		sys->cfg = *cfg;
	if (thp_anon_masks(sys) || shmem_mthp_masks(sys)) {
		vml_free(sys);
		return -EINVAL;
	}
	if (!sys->cfg.max_map_count)
		sys->cfg.max_map_count = DEFAULT_MAX_MAP_COUNT;
	if (!sys->cfg.numa_nodes)
		sys->cfg.numa_nodes = 1;
	if (!sys->cfg.fault_around_bytes)
		sys->cfg.fault_around_bytes = DEFAULT_FAULT_AROUND_BYTES;
	if (!sys->cfg.file_folio_max_bytes)
		sys->cfg.file_folio_max_bytes = DEFAULT_FILE_FOLIO_MAX_BYTES;
	if (!sys->cfg.ram_pages) {
		long n = sysconf(_SC_PHYS_PAGES);

		sys->cfg.ram_pages = n > 0 ? (unsigned long)n : 1UL << 20;
	}
	if (!sys->cfg.stack_rlimit)
		sys->cfg.stack_rlimit = 8UL << 20;
	store_relaxed(&sys->next_inode, 1000);
	spin_lock_init(&sys->swap_lock, LOCK_CLASS_SWAP);
	spin_lock_init(&sys->lru_lock, LOCK_CLASS_LRU);
	if (zero_folio_init(sys) || swap_init(sys)) {
		zero_folio_fini(sys);
		vml_free(sys);
		return -ENOMEM;
	}
	*out = sys;
	return 0;
}

int vm_enough_memory(struct vml_sys *sys, unsigned long pages)
{
	switch (sys->cfg.overcommit) {
	case VML_OVERCOMMIT_ALWAYS:
		return 0;
	case VML_OVERCOMMIT_NEVER:
		/*
		 * The kernel compares the whole system's committed memory with
		 * CommitLimit (swap + RAM * overcommit_ratio%); the model knows
		 * only this request, so it checks that alone against the default
		 * ratio (50%): an approximation the host profile reports.
		 */
		return pages > sys->cfg.ram_pages / 2 + sys->cfg.swap_pages ? -ENOMEM : 0;
	case VML_OVERCOMMIT_GUESS:
	default:
		/* Only a single absurd request fails. */
		return pages > sys->cfg.ram_pages + sys->cfg.swap_pages ? -ENOMEM : 0;
	}
}

void vml_sys_destroy(struct vml_sys *sys)
{
	if (!sys)
		return;
	/* VMAs freed after a grace period still hold file references. */
	vml_rcu_barrier();
	vml_assert(load_relaxed(&sys->nr_mms) == 0);
	lru_add_drain(sys);	/* the batches' folio references */
	swap_fini(sys);
	zero_folio_fini(sys);
	vml_free(sys);
}
