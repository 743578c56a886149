// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xmap.c - a 64-ary radix tree from index to word (see xmap.h).
 * Level 0 holds the entries; a node at level L > 0 holds children, each
 * covering 64^L indexes. The tree grows at the top when an index beyond
 * its reach is reserved: the old root becomes slot 0 of a new one.
 */
#include <errno.h>

#include "mm/xmap.h"
#include "util/alloc.h"
#include "util/compiler.h"

#define XMAP_SHIFT 6
#define XMAP_SLOTS (1U << XMAP_SHIFT)
#define XMAP_MASK (XMAP_SLOTS - 1)
#define XMAP_MAX_HEIGHT 11	/* 66 bits: every unsigned long */

struct xmap_node {
	uintptr_t slot[XMAP_SLOTS];	/* entries (level 0) or struct xmap_node * */
};

/* The indexes a tree of @height covers: [0, 64^height). */
static bool xmap_covers(unsigned int height, unsigned long index)
{
	return height >= XMAP_MAX_HEIGHT || (index >> (height * XMAP_SHIFT)) == 0;
}

static unsigned int slot_at(unsigned long index, unsigned int level)
{
	unsigned int shift = level * XMAP_SHIFT;

	return shift >= 64 ? 0 : (unsigned int)((index >> shift) & XMAP_MASK);
}

int xmap_reserve(struct xmap *m, unsigned long first, unsigned long nr)
{
	unsigned long last = first + nr - 1;
	struct xmap_node *n;

	if (!nr)
		return 0;
	while (!m->root || !xmap_covers(m->height, last)) {
		n = vml_zalloc(sizeof(*n));
		if (!n)
			return -ENOMEM;
		n->slot[0] = (uintptr_t)m->root;
		m->root = n;
		m->height = m->root && n->slot[0] ? m->height + 1 : 1;
	}
	/* Ends: each pass makes the path to one leaf node and moves to the next one. */
	for (unsigned long i = first; i <= last;) {
		struct xmap_node *node = m->root;
		unsigned long leaf_end;

		for (unsigned int level = m->height - 1; level > 0; level--) {
			uintptr_t *s = &node->slot[slot_at(i, level)];

			if (!*s) {
				n = vml_zalloc(sizeof(*n));
				if (!n)
					return -ENOMEM;
				*s = (uintptr_t)n;
			}
			node = (struct xmap_node *)*s;
		}
		leaf_end = (i | XMAP_MASK);
		if (leaf_end >= last)
			break;
		i = leaf_end + 1;
	}
	return 0;
}

/* The leaf node holding @index, or NULL. */
static struct xmap_node *xmap_leaf(const struct xmap *m, unsigned long index)
{
	struct xmap_node *node = m->root;

	if (!node || !xmap_covers(m->height, index))
		return NULL;
	for (unsigned int level = m->height - 1; level > 0 && node; level--)
		node = (struct xmap_node *)node->slot[slot_at(index, level)];
	return node;
}

uintptr_t xmap_load(const struct xmap *m, unsigned long index)
{
	struct xmap_node *leaf = xmap_leaf(m, index);

	return leaf ? leaf->slot[index & XMAP_MASK] : 0;
}

void xmap_store(struct xmap *m, unsigned long index, uintptr_t v)
{
	struct xmap_node *leaf = xmap_leaf(m, index);

	if (!leaf) {
		VML_BUG_ON(v);	/* a non-zero store needs xmap_reserve() first */
		return;
	}
	leaf->slot[index & XMAP_MASK] = v;
}

/* Search @node (at @level, covering indexes from @base) for the first entry >= *index. */
static bool next_in(const struct xmap_node *node, unsigned int level, unsigned long base,
		    unsigned long *index, unsigned long end, uintptr_t *v)
{
	unsigned int shift = level * XMAP_SHIFT;
	unsigned int first = 0;

	if (*index > base)
		first = slot_at(*index, level);
	for (unsigned int s = first; s < XMAP_SLOTS; s++) {
		unsigned long start = base + ((unsigned long)s << shift);

		if (start >= end || (s && start == 0))
			return false;	/* past the end (or wrapped) */
		if (!node->slot[s])
			continue;
		if (!level) {
			*index = start;
			*v = node->slot[s];
			return true;
		}
		if (next_in((const struct xmap_node *)node->slot[s], level - 1, start, index, end, v))
			return true;
	}
	return false;
}

bool xmap_next(const struct xmap *m, unsigned long *index, unsigned long end, uintptr_t *v)
{
	if (!m->root || *index >= end || !xmap_covers(m->height, *index))
		return false;
	return next_in(m->root, m->height - 1, 0, index, end, v);
}

/* Count @node's entries (at @level, covering indexes from @base) in [start, end). */
static unsigned long count_in(const struct xmap_node *node, unsigned int level,
			      unsigned long base, unsigned long start, unsigned long end)
{
	unsigned int shift = level * XMAP_SHIFT, first = 0, last = XMAP_SLOTS - 1;
	unsigned long node_last = shift + XMAP_SHIFT >= 64 ? ~0UL :
				  base + (1UL << (shift + XMAP_SHIFT)) - 1;
	unsigned long n = 0;

	if (start > base)
		first = slot_at(start, level);
	if (end - 1 < node_last)
		last = slot_at(end - 1, level);
	if (!level) {
		for (unsigned int s = first; s <= last; s++)
			n += node->slot[s] != 0;
		return n;
	}
	for (unsigned int s = first; s <= last; s++)
		if (node->slot[s])
			n += count_in((const struct xmap_node *)node->slot[s], level - 1,
				      base + ((unsigned long)s << shift), start, end);
	return n;
}

unsigned long xmap_count(const struct xmap *m, unsigned long start, unsigned long end)
{
	if (!m->root || start >= end || !xmap_covers(m->height, start))
		return 0;
	return count_in(m->root, m->height - 1, 0, start, end);
}

static void free_node(struct xmap_node *node, unsigned int level)
{
	if (level)
		for (unsigned int s = 0; s < XMAP_SLOTS; s++)
			if (node->slot[s])
				free_node((struct xmap_node *)node->slot[s], level - 1);
	vml_free(node);
}

void xmap_destroy(struct xmap *m)
{
	if (m->root)
		free_node(m->root, m->height - 1);
	m->root = NULL;
	m->height = 0;
}
