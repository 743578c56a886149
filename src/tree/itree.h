/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * itree.h - an interval tree: a set of closed intervals [start, last] of
 * unsigned longs, which may overlap and repeat, that finds every interval
 * meeting a query range in O(log n + k). It is a file's i_mmap (the VMAs
 * that map the file, by page offset: the kernel's vma_interval_tree, an
 * augmented rbtree); it knows nothing about VMAs.
 *
 * Intrusive: a struct itree_node lives inside the object it indexes, and
 * the tree never allocates, so inserting and removing cannot fail.
 *
 * Order: in-order by start; intervals with equal starts in the order they
 * were inserted (each goes to the right of its equals). Queries return
 * their matches in that order.
 *
 * Not safe for concurrent use: the caller serialises writers against
 * everyone, and readers against writers (a file's i_mmap_rwsem). Nothing
 * is RCU-safe here.
 *
 * Shape (itree.c has the details): an AVL tree - every node's two subtrees
 * differ in height by at most one - with parent links, where each node
 * also keeps the largest `last` of its subtree. The augmentation is what
 * lets a query skip every subtree that ends before the range starts.
 */
#ifndef VML_TREE_ITREE_H
#define VML_TREE_ITREE_H

#include <stdbool.h>
#include <stddef.h>

struct itree_node {
	struct itree_node *left, *right, *parent;	/* [tree] */
	unsigned long start, last;	/* [tree] the interval, set by itree_insert */
	unsigned long subtree_last;	/* [tree] max(last) over this node's subtree */
	int height;			/* [tree] 1 for a leaf; 0: not in a tree */
};

/* [tree]: changed by itree_insert/itree_remove only, under the caller's writer lock. */
struct itree {
	struct itree_node *root;	/* [tree] */
	unsigned long count;		/* [tree] intervals in the tree */
};

static inline void itree_init(struct itree *t)
{
	t->root = NULL;
	t->count = 0;
}

static inline bool itree_empty(const struct itree *t)
{
	return t->root == NULL;
}

/* Is @n in a tree? (Nodes start zeroed, and itree_remove zeroes the height.) */
static inline bool itree_node_linked(const struct itree_node *n)
{
	return n->height != 0;
}

/*
 * itree_insert - add @n as the interval [@start, @last].
 * Context: caller's writer lock. @n not in any tree; @start <= @last.
 */
void itree_insert(struct itree *t, struct itree_node *n, unsigned long start, unsigned long last);

/* itree_remove - take @n out of @t. Context: caller's writer lock; @n in @t. */
void itree_remove(struct itree *t, struct itree_node *n);

/*
 * Queries: the intervals meeting [@start, @last] (start <= @last and
 * last >= @start), in tree order. itree_iter_first returns the first,
 * itree_iter_next the one after @n (which itself meets the range), NULL at
 * the end. Context: caller's reader or writer lock, for the whole walk.
 */
struct itree_node *itree_iter_first(const struct itree *t, unsigned long start,
				    unsigned long last);
struct itree_node *itree_iter_next(const struct itree_node *n, unsigned long start,
				   unsigned long last);

/*
 * itree_validate - check every invariant: parent links, order, heights and
 * balance, the augmentation, the count. Return: 0, or -EINVAL (a bug).
 */
int itree_validate(const struct itree *t);

#endif /* VML_TREE_ITREE_H */
