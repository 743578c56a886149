/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mm.h - address-space lifetime and counters.
 *
 * mm_users counts users of the address space (the owner, open readers,
 * the scanner while it scans): when it drops to zero the address space is
 * torn down (exit_mmap). mm_count counts references to the struct; it is
 * freed when that drops to zero. The owner's mm_users holds one mm_count.
 */
#ifndef VML_MM_MM_H
#define VML_MM_MM_H

#include "mm/mm_types.h"

/* The public handle is the mm itself. */
static inline struct mm *to_mm(struct vml_mm *m)
{
	return (struct mm *)m;
}

static inline struct vml_mm *from_mm(struct mm *mm)
{
	return (struct vml_mm *)mm;
}

static inline void mm_inc_counter(struct mm *mm, enum mm_counter c)
{
	fetch_add_relaxed(&mm->rss[c], 1);
}

static inline void mm_dec_counter(struct mm *mm, enum mm_counter c)
{
	fetch_sub_relaxed(&mm->rss[c], 1);
}

static inline void mm_add_counter(struct mm *mm, enum mm_counter c, long n)
{
	fetch_add_relaxed(&mm->rss[c], n);
}

static inline long mm_counter(struct mm *mm, enum mm_counter c)
{
	return load_relaxed(&mm->rss[c]);
}

/* Take a user reference unless the address space is already gone. */
bool mmget_not_zero(struct mm *mm);
void mmput(struct mm *mm);
void mmgrab(struct mm *mm);
void mmdrop(struct mm *mm);

/* Teardown of every mapping; called when mm_users reaches zero. */
void exit_mmap(struct mm *mm);

/* Allocate an empty mm of @sys (mm_users = mm_count = 1). */
int mm_alloc(struct vml_sys *sys, struct mm **out);

#endif /* VML_MM_MM_H */
