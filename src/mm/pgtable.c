// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pgtable.c - page-table allocation, walking, zapping and moving.
 */
#include <errno.h>

#include "mm/folio.h"
#include "mm/huge_memory.h"
#include "mm/mm.h"
#include "mm/pgtable.h"
#include "mm/swap.h"
#include "util/alloc.h"
#include "util/compiler.h"

int pgtable_alloc_pgd(struct mm *mm)
{
	mm->pgd = vml_zalloc(sizeof(struct pt_table));
	return mm->pgd ? 0 : -ENOMEM;
}

static void free_level(struct pt_table *t, int level)
{
	for (int i = 0; i < PTRS_PER_TABLE; i++) {
		uint64_t v = load_relaxed(&t->e[i]);

		if (level == 1)	/* PMD level: deposited tables, then PTE tables */
			vml_free(((struct pmd_table *)t)->deposit[i]);
		if (!v || pmd_is_huge(v))
			continue;
		if (level == 1)
			vml_free(pmd_pte_table(v));
		else
			free_level((struct pt_table *)(uintptr_t)(v & ~PT_FLAGS_MASK), level - 1);
	}
	vml_free(t);
}

void pgtable_free_all(struct mm *mm)
{
	if (mm->pgd)
		free_level(mm->pgd, 3);
	mm->pgd = NULL;
}

/*
 * Follow (or create) one upper-level entry. Racing creators are resolved
 * under page_table_lock; the loser frees its table. The release store pairs
 * with the acquire loads of lock-free walkers: they see a zeroed table.
 */
static uint64_t populate_entry(struct mm *mm, _Atomic uint64_t *e, size_t table_size, bool alloc,
			       int *err)
{
	uint64_t v = load_acquire(e);
	void *fresh;

	if (v || !alloc)
		return v;
	fresh = vml_zalloc(table_size);
	if (!fresh) {
		*err = -ENOMEM;
		return 0;
	}
	spin_lock(&mm->page_table_lock);
	v = load_relaxed(e);
	if (!v) {
		v = (uint64_t)(uintptr_t)fresh | PT_TABLE;
		store_release(e, v);
		fresh = NULL;
	}
	spin_unlock(&mm->page_table_lock);
	vml_free(fresh);
	return v;
}

_Atomic uint64_t *pmd_offset(struct mm *mm, unsigned long addr, bool alloc, int *err)
{
	_Atomic uint64_t *e = &mm->pgd->e[pgd_index(addr)];
	struct pt_table *t;
	uint64_t v;

	v = populate_entry(mm, e, sizeof(struct pt_table), alloc, err);
	if (!v)
		return NULL;
	t = (struct pt_table *)(uintptr_t)(v & ~PT_FLAGS_MASK);
	e = &t->e[pud_index(addr)];
	v = populate_entry(mm, e, sizeof(struct pmd_table), alloc, err);
	if (!v)
		return NULL;
	t = (struct pt_table *)(uintptr_t)(v & ~PT_FLAGS_MASK);
	return &t->e[pmd_index(addr)];
}

struct pte_table *pte_table_get(struct mm *mm, _Atomic uint64_t *pmd, bool alloc, int *err)
{
	uint64_t v = load_acquire(pmd);

	if (pmd_is_huge(v))
		return NULL;
	v = populate_entry(mm, pmd, sizeof(struct pte_table), alloc, err);
	/* A huge leaf may have been installed meanwhile. */
	if (!v || pmd_is_huge(v))
		return NULL;
	return pmd_pte_table(v);
}

/*
 * The PMD entry for @addr without allocating, or NULL with *skip_to set to
 * the end of the empty upper-level range around @addr (so walks over sparse
 * address spaces skip whole gigabytes at once).
 */
static _Atomic uint64_t *pmd_lookup(struct mm *mm, unsigned long addr, unsigned long *skip_to)
{
	uint64_t v = load_acquire(&mm->pgd->e[pgd_index(addr)]);
	struct pt_table *t;

	if (!v) {
		*skip_to = (addr & ~((1UL << PGDIR_SHIFT) - 1)) + (1UL << PGDIR_SHIFT);
		return NULL;
	}
	t = (struct pt_table *)(uintptr_t)(v & ~PT_FLAGS_MASK);
	v = load_acquire(&t->e[pud_index(addr)]);
	if (!v) {
		*skip_to = (addr & ~((1UL << PUD_SHIFT) - 1)) + (1UL << PUD_SHIFT);
		return NULL;
	}
	t = (struct pt_table *)(uintptr_t)(v & ~PT_FLAGS_MASK);
	return &t->e[pmd_index(addr)];
}

int walk_page_range(struct mm *mm, unsigned long start, unsigned long end,
		    const struct pt_walk_ops *ops, void *priv)
{
	unsigned long addr = start, next;
	int ret = 0;

	while (addr < end && !ret) {
		unsigned long skip_to = 0;
		_Atomic uint64_t *pmd = pmd_lookup(mm, addr, &skip_to);
		uint64_t v;

		next = pmd ? (addr & PMD_MASK) + PMD_SIZE : skip_to;
		if (next > end || next < addr)
			next = end;
		v = pmd ? load_acquire(pmd) : 0;
		if (!v) {
			if (ops->pte_hole)
				ret = ops->pte_hole(mm, addr, next, priv);
		} else if (pmd_is_huge(v)) {
			if (ops->pmd_huge) {
				spin_lock(&mm->page_table_lock);
				/* Recheck under the lock: it may have been split. */
				if (pmd_is_huge(load_relaxed(pmd))) {
					ret = ops->pmd_huge(mm, pmd, addr, next, priv);
					spin_unlock(&mm->page_table_lock);
				} else {
					spin_unlock(&mm->page_table_lock);
					continue;
				}
			}
		} else if (ops->pte_range) {
			struct pte_table *pt = pmd_pte_table(v);

			pte_lock(pt);
			ret = ops->pte_range(mm, pt, addr, next, priv);
			pte_unlock(pt);
		}
		addr = next;
	}
	return ret;
}

/* Clear one present or swap PTE; the caller holds the ptl. */
static void zap_pte(struct mm *mm, _Atomic uint64_t *ptep)
{
	uint64_t pte = atomic_exchange_explicit(ptep, 0, memory_order_acq_rel);
	struct folio *folio;
	struct page *page;

	if (pte_present(pte)) {
		page = pte_page(pte);
		folio = page_folio(page);
		if (folio_is_zero(folio))
			return;
		if (pte & PT_DIRTY)
			folio_set(folio, PG_dirty);
		folio_remove_rmap_pte(folio, page);
		mm_dec_counter(mm, folio_mm_counter(folio));
		folio_put(folio);
	} else if (pte_is_swap(pte)) {
		swap_free_entry(mm->sys, pte >> PT_SWAP_SHIFT);
		mm_dec_counter(mm, MM_SWAPENTS);
	}
}

static int zap_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
			 unsigned long end, void *priv)
{
	(void)priv;
	for (unsigned long a = start; a < end; a += PAGE_SIZE)
		zap_pte(mm, &pt->e[pte_index(a)]);
	return 0;
}

static int zap_pmd_huge(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start,
			unsigned long end, void *priv)
{
	(void)priv;
	/* Callers split a huge PMD that the range covers only partly (split_huge_pmd). */
	VML_BUG_ON(start & ~PMD_MASK || end - start != PMD_SIZE);
	zap_huge_pmd(mm, pmd);
	return 0;
}

void zap_page_range(struct mm *mm, unsigned long start, unsigned long end)
{
	static const struct pt_walk_ops ops = {
		.pte_range = zap_pte_range,
		.pmd_huge = zap_pmd_huge,
	};

	split_huge_pmd_range_edges(mm, start, end);
	walk_page_range(mm, start, end, &ops, NULL);
}

/* The new bits of a present entry under @vm_flags. */
static uint64_t protect_bits(uint64_t pte, unsigned long vm_flags)
{
	if (!(vm_flags & VM_WRITE))
		pte &= ~PT_WRITE;
	if (vm_flags & VM_ACCESS_FLAGS)
		pte &= ~PT_PROTNONE;
	else
		pte |= PT_PROTNONE;
	return pte;
}

static int protect_pte_range(struct mm *mm, struct pte_table *pt, unsigned long start,
			     unsigned long end, void *priv)
{
	unsigned long vm_flags = *(unsigned long *)priv;

	(void)mm;
	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		_Atomic uint64_t *ptep = &pt->e[pte_index(a)];
		uint64_t pte = load_relaxed(ptep);

		/* CAS: the access path may be setting dirty/young concurrently. */
		while (pte_present(pte) && protect_bits(pte, vm_flags) != pte &&
		       !cas_relaxed(ptep, &pte, protect_bits(pte, vm_flags)))
			;
	}
	return 0;
}

static int protect_pmd_huge(struct mm *mm, _Atomic uint64_t *pmd, unsigned long start,
			    unsigned long end, void *priv)
{
	unsigned long vm_flags = *(unsigned long *)priv;
	uint64_t v = load_relaxed(pmd);

	(void)mm;
	(void)start;
	(void)end;
	while (protect_bits(v, vm_flags) != v && !cas_relaxed(pmd, &v, protect_bits(v, vm_flags)))
		;
	return 0;
}

void change_protection(struct mm *mm, unsigned long start, unsigned long end,
		       unsigned long vm_flags)
{
	static const struct pt_walk_ops ops = {
		.pte_range = protect_pte_range,
		.pmd_huge = protect_pmd_huge,
	};

	split_huge_pmd_range_edges(mm, start, end);
	walk_page_range(mm, start, end, &ops, &vm_flags);
}

bool pte_access_fast(struct mm *mm, unsigned long addr, bool write)
{
	uint64_t want = PT_YOUNG | (write ? PT_DIRTY : 0);
	_Atomic uint64_t *ptep;
	uint64_t v;
	int err = 0;

	ptep = pmd_offset(mm, addr, false, &err);
	if (!ptep)
		return false;
	v = load_acquire(ptep);
	if (!v)
		return false;
	if (!pmd_is_huge(v)) {
		ptep = &pmd_pte_table(v)->e[pte_index(addr)];
		v = load_acquire(ptep);
	}
	/* Like a TLB fill: only an entry that already permits the access. */
	for (;;) {
		if (!pte_present(v) || (v & PT_PROTNONE) || (write && !(v & PT_WRITE)))
			return false;
		if ((v & want) == want)
			return true;
		if (cas_relaxed(ptep, &v, v | want))
			return true;
	}
}

/* Can the PMD at @old_addr move whole to @new_addr (move_huge_pmd)? */
static bool huge_pmd_movable(struct mm *mm, unsigned long old_addr, unsigned long new_addr,
			     unsigned long left)
{
	_Atomic uint64_t *pmd;
	int err = 0;

	if ((old_addr | new_addr) & ~PMD_MASK || left < PMD_SIZE)
		return false;
	pmd = pmd_offset(mm, old_addr, false, &err);
	return pmd && pmd_is_huge(load_acquire(pmd));
}

int pgtable_prepare_move(struct mm *mm, unsigned long old_addr, unsigned long new_addr,
			 unsigned long len)
{
	unsigned long off = 0;
	int err = 0;

	while (off < len) {
		unsigned long step = ((new_addr + off) & PMD_MASK) + PMD_SIZE - (new_addr + off);
		_Atomic uint64_t *pmd = pmd_offset(mm, new_addr + off, true, &err);

		if (!pmd)
			return err ? err : -ENOMEM;
		if (!huge_pmd_movable(mm, old_addr + off, new_addr + off, len - off) &&
		    !pmd_is_huge(load_acquire(pmd)) && !pte_table_get(mm, pmd, true, &err) && err)
			return err;
		off += step;
	}
	return 0;
}

void move_page_tables(struct mm *mm, unsigned long old_addr, unsigned long new_addr,
		      unsigned long len)
{
	unsigned long off = 0;
	int err = 0;

	split_huge_pmd_range_edges(mm, old_addr, old_addr + len);
	/* Entry by entry (a whole huge PMD at once); both VMAs are write-locked. */
	while (off < len) {
		_Atomic uint64_t *opmd = pmd_offset(mm, old_addr + off, false, &err);
		struct pte_table *opt, *npt;
		uint64_t pte;

		if (huge_pmd_movable(mm, old_addr + off, new_addr + off, len - off)) {
			move_huge_pmd(mm, opmd, pmd_offset(mm, new_addr + off, false, &err));
			off += PMD_SIZE;
			continue;
		}
		if (opmd && pmd_is_huge(load_acquire(opmd)))
			split_huge_pmd_address(mm, old_addr + off);	/* misaligned: per page */
		opt = opmd ? pte_table_get(mm, opmd, false, &err) : NULL;
		if (!opt) {
			off += PAGE_SIZE;
			continue;
		}
		pte_lock(opt);
		pte = atomic_exchange_explicit(&opt->e[pte_index(old_addr + off)], 0,
					       memory_order_acq_rel);
		pte_unlock(opt);
		if (pte) {
			npt = pte_table_get(mm, pmd_offset(mm, new_addr + off, false, &err), false,
					    &err);
			VML_BUG_ON(!npt);	/* pgtable_prepare_move() made it */
			pte_lock(npt);
			VML_BUG_ON(load_relaxed(&npt->e[pte_index(new_addr + off)]) != 0);
			store_relaxed(&npt->e[pte_index(new_addr + off)], pte);
			pte_unlock(npt);
		}
		off += PAGE_SIZE;
	}
}
