/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * modify.h - the race test's address space and what the modifier does to it
 * (docs/kernel.md §9, generalised).
 *
 * The layout: @nr_regions 3-page private anonymous regions back to back from
 * @base, alternating rw- (written, so resident) and r-- (never touched), so
 * that no two neighbours merge and the text of any view is long enough to
 * put a read() boundary inside the regions; plus a spare r-x region (never
 * touched) one region past the last, the source of the pages `remap` moves.
 * Regions a and a + 1 (A and B) are the last VMA of the first read and the
 * first of the second.
 *
 * A modification is a cycle of ops that changes A, then B, and returns both
 * to the base layout:
 *
 *   split        map a page with a different protection over the middle
 *                of A, then of B; map the original protection back (they
 *                merge again)
 *   mprotect     the same with mprotect()
 *   resize       shrink A to one page in place (mremap), then B; grow both
 *                back
 *   remap        move the spare's middle page into the middle of A, then of
 *                B (MREMAP_FIXED|MAYMOVE|DONTUNMAP: a 3-way split); mprotect
 *                the moved pages to the original protection (they merge
 *                again) - the kernel selftest's remap test
 *   remap-whole  the same with the whole spare over all of A, then of B: the
 *                destination is one whole VMA, which 6.18 unmaps before the
 *                move (docs/findings/maps-fake-gaps.md case 2); mprotect
 *                restores the protection (the neighbours keep it apart)
 *   unmap        munmap A, then B; map them again (and write A or B if rw-)
 *   dontneed     not a tearing cycle but the kernel selftest
 *                pagewalk_race_test's race, on a layout of its own (the
 *                pagewalk layout below): write a page of the second PMD of
 *                one two-PMD VMA, then MADV_DONTNEED that whole PMD. Only
 *                the page-walking views are checked against it
 *                (race_mod_applies), for a page counted twice.
 *
 * Every op is an op-script op (script/script.h), so the same cycle runs on
 * the model and on a live child through target_apply().
 *
 * Residency: which pages of the layout are resident after each op is
 * simulated here (struct race_pages), so the checker knows what Rss each
 * VMA form can show; the race run checks the simulation against the real
 * smaps of every state before it trusts it.
 */
#ifndef VML_RACE_MODIFY_H
#define VML_RACE_MODIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "script/script.h"

#define RACE_PAGE_SIZE 4096UL
#define RACE_REGION_PAGES 3
#define RACE_REGION_SIZE (RACE_REGION_PAGES * RACE_PAGE_SIZE)
/* The kernel selftest's count: at least a page of maps text (>= 32 bytes a line). */
#define RACE_DEFAULT_REGIONS (RACE_PAGE_SIZE / 32 + 1)
#define RACE_MAX_CYCLE 8	/* ops in one modification cycle, at most */

enum race_mod {
	RACE_MOD_SPLIT,
	RACE_MOD_MPROTECT,
	RACE_MOD_RESIZE,
	RACE_MOD_REMAP,
	RACE_MOD_REMAP_WHOLE,
	RACE_MOD_UNMAP,
	RACE_MOD_DONTNEED,
	RACE__MODS
};

/*
 * The pagewalk layout (pagewalk_race_test.c): one private anonymous rw- VMA
 * of two PMDs at the layout's base (2 MiB aligned, inside one PUD),
 * MADV_NOHUGEPAGE (a huge PMD is never walked PTE by PTE), the first PMD
 * written whole. The dontneed cycle works on the second PMD only.
 */
#define RACE_PMD_SIZE (2UL << 20)
#define RACE_PAGEWALK_SIZE (2 * RACE_PMD_SIZE)

struct race_layout {
	unsigned long base;		/* region 0 */
	unsigned int nr_regions;
	unsigned int a;			/* the boundary: regions a (A) and a + 1 (B) */
};

const char *race_mod_name(enum race_mod m);
/* Does modification @m have anything to check in @view (a vml_view or TARGET_VIEW_QUERY)? */
bool race_mod_applies(enum race_mod m, int view);
/* "split" -> RACE_MOD_SPLIT. Return: 0 or -EINVAL. */
int race_mod_parse(const char *name, enum race_mod *out);

unsigned long race_region_addr(const struct race_layout *l, unsigned int i);
int race_region_prot(unsigned int i);		/* PROT_READ|PROT_WRITE or PROT_READ */
unsigned long race_spare_addr(const struct race_layout *l);
/* [*lo, *hi): every page an op of the layout or a cycle touches. */
void race_layout_range(const struct race_layout *l, unsigned long *lo, unsigned long *hi);

/*
 * race_setup_ops - the ops that build the layout into an empty range (for
 * RACE_MOD_DONTNEED, @m: the pagewalk layout at l->base).
 * Return: the number of ops written to @ops, or -ENOSPC beyond @max.
 */
int race_setup_ops(const struct race_layout *l, enum race_mod m, struct op *ops, size_t max);

/* race_cycle_ops - one cycle of @m (at most RACE_MAX_CYCLE ops). Return: the count. */
int race_cycle_ops(const struct race_layout *l, enum race_mod m, struct op *ops, size_t max);

struct race_reach;
/*
 * race_op_reach - where op @op (one of a cycle's) may replace VMAs: its
 * range, and an mremap's destination. A page fault (touch) replaces none:
 * it fills page tables and leaves every VMA as it was.
 */
void race_op_reach(const struct op *op, struct race_reach *out);

/* Simulated residency of the layout's pages. */
struct race_pages {
	unsigned long lo, hi;
	unsigned char *page;		/* per page: RP_* bits and the PROT_* bits << 2 */
};

/* Return: 0 or -ENOMEM. All pages start unmapped. */
int race_pages_init(struct race_pages *p, const struct race_layout *l);
void race_pages_free(struct race_pages *p);
/*
 * race_pages_apply - the effect of one successful op (only the kinds the
 * layout and the cycles use: mmap fixed anonymous private, munmap,
 * mprotect, mremap in place or FIXED|MAYMOVE|DONTUNMAP, touch).
 */
void race_pages_apply(struct race_pages *p, const struct op *op);
/* One byte per page of [lo, hi): nonzero where resident. */
void race_pages_resident(const struct race_pages *p, unsigned char *out);
size_t race_pages_count(const struct race_pages *p);

#endif /* VML_RACE_MODIFY_H */
