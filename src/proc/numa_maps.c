// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * numa_maps.c - /proc/PID/numa_maps (fs/proc/task_mmu.c show_numa_map,
 * gather_stats; docs/kernel.md §3).
 *
 * One line a VMA: its start, its memory policy (the model has only the
 * default policy), the file it maps (path escaped for newline, tab, '=' and
 * space), then - only if some page is mapped - page counts: anon, dirty,
 * mapped (when it says more than anon and dirty do), the largest per-page
 * mapcount (when above 1), swapcache, active (active or unevictable; shown
 * when not all pages are), writeback, pages per node, and the page size.
 * Counts are pages: a PMD-mapped huge page counts 512, and its first page's
 * mapcount stands for all. The zero pages are not normal pages and are
 * skipped.
 *
 * Locking as smaps (proc_walk_begin/end in maps.c).
 */
#include <string.h>

#include "mm/file.h"
#include "mm/folio.h"
#include "mm/pgtable.h"
#include "mm/vma.h"
#include "proc/internal.h"
#include "util/compiler.h"

#define NUMA_MAX_NODES 64	/* vml_sys_create() refuses more */

struct numa_maps {
	unsigned long pages;
	unsigned long anon;
	unsigned long active;
	unsigned long writeback;
	unsigned long mapcount_max;
	unsigned long dirty;
	unsigned long swapcache;
	unsigned long node[NUMA_MAX_NODES];
	unsigned long entries;	/* anonymous entries met: the calibration's per-page charge */
};

static void gather_stats(struct page *page, struct numa_maps *md, bool pte_dirty,
			 unsigned long nr_pages)
{
	struct folio *folio = page_folio(page);
	int count = folio_precise_page_mapcount(folio, page);

	md->pages += nr_pages;
	if (pte_dirty || folio_test(folio, PG_dirty))
		md->dirty += nr_pages;
	if (folio_test(folio, PG_swapcache))
		md->swapcache += nr_pages;
	if (folio_test(folio, PG_active | PG_unevictable))
		md->active += nr_pages;
	if (folio_test(folio, PG_anon))
		md->anon += nr_pages;
	if (count > 0 && (unsigned long)count > md->mapcount_max)
		md->mapcount_max = (unsigned long)count;
	if (folio->nid >= 0 && folio->nid < NUMA_MAX_NODES)
		md->node[folio->nid] += nr_pages;
}

/* Context: the table's ptl held. */
static int gather_pte_stats(struct mm *mm, struct pte_table *pt, unsigned long start,
			    unsigned long end, void *priv)
{
	(void)mm;
	spin_assert_held(&pt->ptl);
	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		uint64_t pte = load_relaxed(&pt->e[pte_index(a)]);
		struct numa_maps *md = priv;
		struct folio *folio;

		if (!pte_present(pte))
			continue;
		folio = page_folio(pte_page(pte));
		if (folio_test(folio, PG_anon))
			md->entries++;
		if (folio_is_zero(folio))
			continue;
		gather_stats(pte_page(pte), md, pte & PT_DIRTY, 1);
	}
	return 0;
}

/* Context: page_table_lock held; *pmd is a huge leaf. */
static int gather_pmd_stats(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start,
			    unsigned long end, void *priv)
{
	uint64_t v = load_relaxed(pmd);
	struct folio *folio = page_folio(pte_page(v));

	(void)mm;
	(void)start;
	(void)end;
	if (folio_test(folio, PG_anon))
		((struct numa_maps *)priv)->entries++;
	if (!folio_is_zero(folio))
		gather_stats(pte_page(v), priv, v & PT_DIRTY, HPAGE_PMD_NR);
	return 0;
}

static int show_numa_map(struct seq_file *m, void *v)
{
	static const struct pt_walk_ops ops = {
		.pte_range = gather_pte_stats,
		.pmd_huge = gather_pmd_stats,
	};
	struct proc_maps_private *priv = m->private;
	struct numa_maps *md = priv->numa;
	struct vma *vma = v;
	unsigned int nodes = priv->mm->sys->cfg.numa_nodes;

	memset(md, 0, sizeof(*md));
	/* No VMA or task memory policy in the model: mpol_to_str of the default. */
	seq_printf(m, "%08lx %s", vma->vm_start, "default");
	if (vma->vm_file) {
		seq_puts(m, " file=");
		seq_escape(m, vma->vm_file->path, "\n\t= ");
		if (vma->vm_file->deleted)
			seq_escape(m, " (deleted)", "\n\t= ");
	}
	proc_walk_begin(priv, vma);
	walk_page_range(priv->mm, vma->vm_start, vma->vm_end, &ops, md);
	proc_walk_charge(priv, md->entries);
	proc_walk_end(priv, vma);
	if (!md->pages)
		goto out;
	if (md->anon)
		seq_printf(m, " anon=%lu", md->anon);
	if (md->dirty)
		seq_printf(m, " dirty=%lu", md->dirty);
	if (md->pages != md->anon && md->pages != md->dirty)
		seq_printf(m, " mapped=%lu", md->pages);
	if (md->mapcount_max > 1)
		seq_printf(m, " mapmax=%lu", md->mapcount_max);
	if (md->swapcache)
		seq_printf(m, " swapcache=%lu", md->swapcache);
	if (md->active < md->pages)
		seq_printf(m, " active=%lu", md->active);
	if (md->writeback)
		seq_printf(m, " writeback=%lu", md->writeback);
	for (unsigned int nid = 0; nid < nodes && nid < NUMA_MAX_NODES; nid++)
		if (md->node[nid])
			seq_printf(m, " N%u=%lu", nid, md->node[nid]);
	seq_printf(m, " kernelpagesize_kB=%lu", PAGE_SIZE >> 10);
out:
	seq_putc(m, '\n');
	return 0;
}

const struct seq_operations proc_pid_numa_maps_op = {
	.start = proc_maps_seq_start,
	.next = proc_maps_seq_next,
	.stop = proc_maps_seq_stop,
	.show = show_numa_map,
};

size_t proc_numa_maps_size(void)
{
	return sizeof(struct numa_maps);
}
