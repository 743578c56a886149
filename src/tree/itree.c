// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * itree.c - the interval tree of itree.h.
 *
 * Shape. A binary search tree ordered by start, ties to the right (so
 * equal starts stay in insertion order), kept balanced as an AVL tree:
 * every node stores its height (a leaf is 1), and the heights of a node's
 * two subtrees differ by at most one. That bounds the height by about
 * 1.44 log2(n): 64 VMAs of 64 processes mapping one library make a tree
 * of depth 9 at most.
 *
 * Augmentation. Every node also stores subtree_last, the largest `last`
 * in its subtree: its own, its children's subtree_last. A query for
 * [start, last] never enters a subtree whose subtree_last < start (nothing
 * there reaches the range), and never goes right of a node whose start >
 * last (everything there starts later still). So the first match is found
 * in O(log n), and each next one in O(log n) as well.
 *
 * Keeping both up to date. A node's height and subtree_last depend only on
 * its own interval and its children's values, so after any change of
 * shape it is enough to recompute them bottom-up along the path from the
 * lowest changed node to the root - which is exactly the path an AVL tree
 * walks to restore its balance. fix_upwards() does both in one climb:
 * recompute the node, rotate it if its subtrees' heights differ by two,
 * go to the parent. A rotation changes two nodes' children; it recomputes
 * them (lower one first) before the climb goes on. The climb always runs
 * to the root (O(log n)), which keeps it simple: no early stop to get
 * wrong.
 *
 * Removing a node with two children moves its in-order successor (the
 * leftmost node of its right subtree, which has no left child) into its
 * place - the nodes are the caller's objects, so they are relinked, never
 * copied - and climbs from where the successor was taken.
 */
#include <errno.h>

#include "tree/itree.h"
#include "util/compiler.h"

static inline int height(const struct itree_node *n)
{
	return n ? n->height : 0;
}

/* Recompute @n's height and subtree_last from its children. */
static void update(struct itree_node *n)
{
	int hl = height(n->left), hr = height(n->right);
	unsigned long sl = n->last;

	if (n->left && n->left->subtree_last > sl)
		sl = n->left->subtree_last;
	if (n->right && n->right->subtree_last > sl)
		sl = n->right->subtree_last;
	n->height = 1 + (hl > hr ? hl : hr);
	n->subtree_last = sl;
}

/* Make @new take @old's place under @parent (or as the root). */
static void replace_child(struct itree *t, struct itree_node *parent, struct itree_node *old,
			  struct itree_node *new)
{
	if (!parent)
		t->root = new;
	else if (parent->left == old)
		parent->left = new;
	else
		parent->right = new;
	if (new)
		new->parent = parent;
}

/*
 *     x                y
 *    / \              / \
 *   a   y     ->     x   c
 *      / \          / \
 *     b   c        a   b
 */
static struct itree_node *rotate_left(struct itree *t, struct itree_node *x)
{
	struct itree_node *y = x->right;

	x->right = y->left;
	if (y->left)
		y->left->parent = x;
	replace_child(t, x->parent, x, y);
	y->left = x;
	x->parent = y;
	update(x);
	update(y);
	return y;
}

static struct itree_node *rotate_right(struct itree *t, struct itree_node *x)
{
	struct itree_node *y = x->left;

	x->left = y->right;
	if (y->right)
		y->right->parent = x;
	replace_child(t, x->parent, x, y);
	y->right = x;
	x->parent = y;
	update(x);
	update(y);
	return y;
}

/* Recompute and rebalance from @n up to the root. */
static void fix_upwards(struct itree *t, struct itree_node *n)
{
	/* Ends: every step moves to the parent of the subtree's (new) root. */
	while (n) {
		int balance;

		update(n);
		balance = height(n->left) - height(n->right);
		if (balance > 1) {
			/* Left-heavy; a right-leaning left child is straightened first. */
			if (height(n->left->left) < height(n->left->right))
				rotate_left(t, n->left);
			n = rotate_right(t, n);
		} else if (balance < -1) {
			if (height(n->right->right) < height(n->right->left))
				rotate_right(t, n->right);
			n = rotate_left(t, n);
		}
		n = n->parent;
	}
}

void itree_insert(struct itree *t, struct itree_node *n, unsigned long start, unsigned long last)
{
	struct itree_node *parent = NULL, **link = &t->root;

	vml_assert(start <= last && !itree_node_linked(n));
	/* Ends: each step goes one level down. */
	while (*link) {
		parent = *link;
		link = start < parent->start ? &parent->left : &parent->right;
	}
	n->start = start;
	n->last = last;
	n->left = n->right = NULL;
	n->parent = parent;
	*link = n;
	t->count++;
	fix_upwards(t, n);
}

void itree_remove(struct itree *t, struct itree_node *n)
{
	struct itree_node *fix;

	vml_assert(itree_node_linked(n) && t->count);
	if (n->left && n->right) {
		struct itree_node *s = n->right;

		while (s->left)
			s = s->left;
		if (s == n->right) {
			fix = s;	/* s keeps its right subtree and gets n's left */
		} else {
			fix = s->parent;
			/* Unhook s (no left child) from its parent, then give it n's right. */
			fix->left = s->right;
			if (s->right)
				s->right->parent = fix;
			s->right = n->right;
			s->right->parent = s;
		}
		s->left = n->left;
		s->left->parent = s;
		replace_child(t, n->parent, n, s);
	} else {
		fix = n->parent;
		replace_child(t, n->parent, n, n->left ? n->left : n->right);
	}
	n->left = n->right = n->parent = NULL;
	n->height = 0;
	t->count--;
	fix_upwards(t, fix);
}

/*
 * The first node of @n's subtree, in order, meeting [start, last].
 * Context: @n->subtree_last >= start (else there is none).
 */
static struct itree_node *subtree_first(struct itree_node *n, unsigned long start,
					unsigned long last)
{
	/* Ends: each step goes one level down. */
	for (;;) {
		/* Something on the left reaches start: any match there comes first. */
		if (n->left && n->left->subtree_last >= start) {
			n = n->left;
			continue;
		}
		/*
		 * Nothing on the left can match. (If the left subtree reached
		 * start but everything in it began after last, we never get
		 * here from it: we return NULL below, correctly, since n and
		 * its right subtree begin later still.)
		 */
		if (n->start > last)
			return NULL;
		if (n->last >= start)
			return n;
		if (!n->right || n->right->subtree_last < start)
			return NULL;
		n = n->right;
	}
}

struct itree_node *itree_iter_first(const struct itree *t, unsigned long start,
				    unsigned long last)
{
	if (!t->root || t->root->subtree_last < start)
		return NULL;
	return subtree_first(t->root, start, last);
}

struct itree_node *itree_iter_next(const struct itree_node *n, unsigned long start,
				   unsigned long last)
{
	/* Ends: each round goes down once (and returns) or climbs at least one level. */
	for (;;) {
		const struct itree_node *from;

		/* The nodes after n in its own subtree: its right subtree. */
		if (n->right && n->right->subtree_last >= start)
			return subtree_first(n->right, start, last);
		/* Then the first ancestor we reach from its left side, and its right. */
		do {
			from = n;
			n = n->parent;
			if (!n)
				return NULL;
		} while (n->right == from);
		if (n->start > last)
			return NULL;	/* it and everything after it start too late */
		if (n->last >= start)
			return (struct itree_node *)n;
	}
}

/* Check @n's subtree; *@count counts its nodes. Return its height, or -1. */
static int validate(const struct itree_node *n, const struct itree_node *parent,
		    unsigned long *count)
{
	unsigned long sl;
	int hl, hr;

	if (!n)
		return 0;
	if (n->parent != parent || n->start > n->last)
		return -1;
	if (n->left && n->left->start > n->start)
		return -1;
	if (n->right && n->right->start < n->start)
		return -1;
	hl = validate(n->left, n, count);
	hr = validate(n->right, n, count);
	if (hl < 0 || hr < 0 || hl - hr > 1 || hr - hl > 1 || n->height != 1 + VML_MAX(hl, hr))
		return -1;
	sl = n->last;
	if (n->left)
		sl = VML_MAX(sl, n->left->subtree_last);
	if (n->right)
		sl = VML_MAX(sl, n->right->subtree_last);
	if (n->subtree_last != sl)
		return -1;
	(*count)++;
	return n->height;
}

int itree_validate(const struct itree *t)
{
	unsigned long count = 0;
	const struct itree_node *prev = NULL;

	if (validate(t->root, NULL, &count) < 0 || count != t->count)
		return -EINVAL;
	/* The order over the whole tree, not just parent against child. */
	for (const struct itree_node *n = itree_iter_first(t, 0, ~0UL); n;
	     n = itree_iter_next(n, 0, ~0UL)) {
		if (prev && prev->start > n->start)
			return -EINVAL;
		prev = n;
		count--;
	}
	return count ? -EINVAL : 0;
}
