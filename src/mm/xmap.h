/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xmap.h - a sparse map from page index to a word, for page caches (the
 * kernel's xarray, minus RCU: users hold the file's i_pages_lock).
 *
 * A radix tree of 64-slot nodes: memory follows the indexes used, not the
 * largest one, so a 16 TiB shmem object with one page costs a few nodes.
 * Storing a non-zero word needs the path to exist: xmap_reserve() makes it
 * (the only call that allocates), so a store after a successful reserve
 * cannot fail. Storing 0 erases and never allocates. Nodes are freed only
 * by xmap_destroy().
 */
#ifndef VML_MM_XMAP_H
#define VML_MM_XMAP_H

#include <stdbool.h>
#include <stdint.h>

struct xmap_node;

struct xmap {
	struct xmap_node *root;
	unsigned int height;	/* levels; covers indexes < 64^height */
};

/* Make room for [first, first + nr). Return: 0 or -ENOMEM (what was made stays). */
int xmap_reserve(struct xmap *m, unsigned long first, unsigned long nr);
uintptr_t xmap_load(const struct xmap *m, unsigned long index);
/* @v non-zero needs a reserved slot; 0 erases. */
void xmap_store(struct xmap *m, unsigned long index, uintptr_t v);
/*
 * The first non-zero entry at an index in [*index, end): true with *index
 * and *v set, or false. Empty subtrees are skipped.
 */
bool xmap_next(const struct xmap *m, unsigned long *index, unsigned long end, uintptr_t *v);
/* The number of non-zero entries at indexes in [start, end), visiting each (empty subtrees skipped). */
unsigned long xmap_count(const struct xmap *m, unsigned long start, unsigned long end);
void xmap_destroy(struct xmap *m);

#endif /* VML_MM_XMAP_H */
