/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mapped_pages.h - what an address space's page tables map, counted by
 * walking them: the truth an RSS counter is checked against after a
 * stress test's threads have joined.
 */
#ifndef VML_TESTS_MAPPED_PAGES_H
#define VML_TESTS_MAPPED_PAGES_H

#include "mm/folio.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"

static int mapped_count_ptes(struct mm *m, struct pte_table *pt, unsigned long s,
			     unsigned long e, void *priv)
{
	long *n = priv;

	(void)m;
	for (unsigned long a = s; a < e; a += PAGE_SIZE) {
		uint64_t pte = load_relaxed(&pt->e[pte_index(a)]);

		if (pte_present(pte) && !folio_is_zero(page_folio(pte_page(pte))))
			++*n;
	}
	return 0;
}

static int mapped_count_pmd(struct mm *m, _Atomic uint64_t *pmd, unsigned long s,
			    unsigned long e, void *priv)
{
	long *n = priv;

	(void)m;
	(void)s;
	(void)e;
	if (!folio_is_zero(page_folio(pte_page(load_relaxed(pmd)))))
		*n += HPAGE_PMD_NR;
	return 0;
}

/* Pages mapped in @mm other than the zero pages, under mmap_lock(R). */
static inline long mapped_pages(struct vml_mm *mm)
{
	static const struct pt_walk_ops walk = { .pte_range = mapped_count_ptes,
						 .pmd_huge = mapped_count_pmd };
	long n = 0;

	mmap_read_lock(to_mm(mm));
	walk_page_range(to_mm(mm), 0, TASK_SIZE, &walk, &n);
	mmap_read_unlock(to_mm(mm));
	return n;
}

#endif /* VML_TESTS_MAPPED_PAGES_H */
