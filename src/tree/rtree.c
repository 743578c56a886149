// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtree.c - the RCU-safe copy-on-write range tree.
 *
 * Shape. A B+tree of fixed fan-out RTREE_SLOTS (32). Every node has the same
 * layout: n slots of (start, end, pointer), sorted. In a leaf a slot is one
 * range and its entry. In an internal node a slot describes one child
 * subtree: the lowest start and the highest end in it, and the child. The
 * "highest end" pivot lets a descent find the first range with end > addr
 * (find, find_next, cursors) and the "lowest start" pivot the last range
 * with start < addr (find_prev), each touching one node per level. All
 * leaves are at the same depth; every node but the root holds at least
 * RTREE_MIN (8) slots and an internal root at least 2, so a tree of depth d
 * holds at least 2 * 8^(d-1) ranges and RTREE_MAX_DEPTH (12) levels are
 * more than memory can fill. A quarter as the minimum (not the textbook
 * half) keeps an erase from ping-ponging with an insert, and lets a split at
 * either end of a node keep 25 slots on the full side, so ascending or
 * descending bulk inserts (the way mmap fills an address space) leave
 * leaves 78% full instead of 50%.
 *
 * Copy-on-write. A published node is never written again (with one
 * exception, below). A transaction has a generation number, tx->gen, taken
 * from the tree's counter at begin; every node it allocates is stamped with
 * it. Before writing a node on its way down, the transaction "owns" it: a
 * node stamped with another generation is copied, the copy takes its place
 * in the (already owned) parent, and the original is put on the
 * transaction's list of replaced nodes. A node stamped with tx->gen is this
 * transaction's own, unseen by any reader, and is edited in place. So the
 * first store in a region copies one root-to-leaf path, O(log n) nodes, and
 * later stores in the same region copy nothing.
 *
 * Publishing. Commit makes the working root the tree's root with one
 * release store (vml_rcu_assign_pointer), which pairs with the acquire load
 * (vml_rcu_dereference) of the root in every lookup: a reader sees either the
 * whole old tree or the whole new one, and everything the transaction wrote
 * into its nodes is visible to it. Child pointers are C11 atomics read with
 * acquire too; the writer fills them with relaxed stores because its nodes
 * are private until the root's release store. Commit then hands every
 * replaced node to vml_call_rcu(), which frees it after every reader that
 * might still hold the old root has left its read-side section. Abort frees
 * the transaction's own nodes and forgets the replaced list: the committed
 * tree was never touched, so it is exactly as it was. The exception to
 * immutability: a replaced node's txn_next link (writer-only, never read by
 * readers) chains it on the replaced list.
 *
 * Stores. A store is a short sequence of primitive operations on one range
 * each (insert a slot, delete a slot, rewrite a slot in place), each a
 * single recursive pass from the root that owns the path, edits the leaf,
 * then on the way back up refreshes the parents' pivots, splits a node that
 * overflowed and merges or rebalances a child that underflowed. Merging
 * moves slots into whichever of the two nodes is already owned, so it never
 * allocates; only splits, redistributions and the first copy of a node do.
 * An allocation failure makes the transaction's error sticky: the working
 * tree may then be half-edited, but only in nodes the transaction owns, and
 * abort throws all of them away.
 *
 * Re-walking cursors (rtree_set_rewalk, off by default). The kernel's maple
 * tree marks a node it replaces dead, and an iterator that finds its node
 * dead walks down again from the root to its last index. To model that, a
 * tree with rewalk on has its commits mark every node they took out of the
 * tree `replaced` (after publishing the new root), and a cursor checks its
 * leaf's mark before it reads a slot; a marked leaf sends it down from the
 * root again (cursor_rewalk). Nodes stay immutable: the mark is the only
 * field written after publication besides txn_next, and it is written once.
 *
 * Cost: lookups O(log n); a store that touches k existing ranges is
 * O((k + 1) log n); commit is O(nodes copied).
 */
#include <errno.h>
#include <string.h>

#include "sync/rcu.h"
#include "tree/rtree.h"
#include "util/alloc.h"
#include "util/compiler.h"

#define RTREE_SLOTS 32
#define RTREE_MIN   8

_Static_assert(RTREE_SLOTS <= 255, "cursor slots are unsigned char");
_Static_assert(2 * RTREE_MIN <= RTREE_SLOTS, "a merge of two minimal nodes must fit");

/*
 * struct rtree_node - one node. Allocated by a transaction (stamped with its
 * generation); immutable once a commit published it; dies either by abort
 * (freed at once), or by commit after a later transaction replaced it
 * (vml_call_rcu), or at rtree_destroy.
 *
 * [imm]    written before publication, read-only after it
 * [writer] read and written only by the writer
 * [rcu]    written once by the writer after publication, read by readers
 */
struct rtree_node {
	unsigned char level;		/* [imm] 0 for a leaf */
	unsigned char n;		/* [imm] slots used */
	bool dead;			/* [writer] unlinked from this txn's working tree */
	_Atomic bool replaced;		/* [rcu] rewalk trees only: a commit took it out of
					 * the tree; set once (release), read by cursors (acquire) */
	unsigned long gen;		/* [imm] the transaction that allocated it */
	struct rtree_node *txn_next;	/* [writer] new-nodes or replaced-nodes list */
	struct vml_rcu_head rcu;	/* deferred free after replacement */
	unsigned long start[RTREE_SLOTS];	/* [imm] leaf: range start; internal: lowest start */
	unsigned long end[RTREE_SLOTS];		/* [imm] leaf: range end; internal: highest end */
	union {
		void *entry[RTREE_SLOTS];			/* [imm] leaf */
		_Atomic(struct rtree_node *) child[RTREE_SLOTS];	/* [imm] internal */
	};
};

/* ---------------------------------------------------------------------- */
/* Searching one node */

/* The first slot whose end > addr, or n. */
static unsigned int search_end(const struct rtree_node *node, unsigned long addr)
{
	unsigned int lo = 0, hi = node->n;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (node->end[mid] > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The number of slots whose start < addr (the last such slot is one before). */
static unsigned int search_start(const struct rtree_node *node, unsigned long addr)
{
	unsigned int lo = 0, hi = node->n;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (node->start[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Pairs with the commit's release store of the root (everything in a node was written before it). */
static inline struct rtree_node *node_child(const struct rtree_node *node, unsigned int i)
{
	/* acquire: pairs with the commit's vml_rcu_assign_pointer of the root */
	return vml_rcu_dereference(node->child[i]);
}

static inline unsigned long node_min(const struct rtree_node *node)
{
	return node->start[0];
}

static inline unsigned long node_max(const struct rtree_node *node)
{
	return node->end[node->n - 1];
}

static inline void fill_range(struct rtree_range *r, const struct rtree_node *leaf, unsigned int i)
{
	if (r) {
		r->start = leaf->start[i];
		r->end = leaf->end[i];
		r->entry = leaf->entry[i];
	}
}

/* ---------------------------------------------------------------------- */
/* Lookups on one snapshot (a committed root, or a transaction's working root) */

/* The first range with end > addr. */
static void *lookup_next(const struct rtree_node *node, unsigned long addr, struct rtree_range *r)
{
	unsigned int i;

	if (!node)
		return NULL;
	for (;;) {
		i = search_end(node, addr);
		if (i == node->n)
			return NULL;
		if (node->level == 0)
			break;
		node = node_child(node, i);
	}
	fill_range(r, node, i);
	return node->entry[i];
}

/* The last range with start < addr. */
static void *lookup_prev(const struct rtree_node *node, unsigned long addr, struct rtree_range *r)
{
	unsigned int i;

	if (!node)
		return NULL;
	for (;;) {
		i = search_start(node, addr);
		if (i == 0)
			return NULL;
		if (node->level == 0)
			break;
		node = node_child(node, i - 1);
	}
	fill_range(r, node, i - 1);
	return node->entry[i - 1];
}

static void *lookup(const struct rtree_node *root, unsigned long addr, struct rtree_range *r)
{
	struct rtree_range tmp;
	void *entry = lookup_next(root, addr, &tmp);

	if (!entry || tmp.start > addr)
		return NULL;
	if (r)
		*r = tmp;
	return entry;
}

void *rtree_find(struct rtree *t, unsigned long addr, struct rtree_range *r)
{
	/* acquire: pairs with vml_rcu_assign_pointer(t->root) in rtree_txn_commit() */
	return lookup(vml_rcu_dereference(t->root), addr, r);
}

void *rtree_find_next(struct rtree *t, unsigned long addr, struct rtree_range *r)
{
	/* acquire: pairs with vml_rcu_assign_pointer(t->root) in rtree_txn_commit() */
	return lookup_next(vml_rcu_dereference(t->root), addr, r);
}

void *rtree_find_prev(struct rtree *t, unsigned long addr, struct rtree_range *r)
{
	/* acquire: pairs with vml_rcu_assign_pointer(t->root) in rtree_txn_commit() */
	return lookup_prev(vml_rcu_dereference(t->root), addr, r);
}

static inline void txn_assert_open(struct rtree_txn *tx)
{
	vml_assert(tx->tree && tx->tree->txn == tx);
}

void *rtree_txn_find(struct rtree_txn *tx, unsigned long addr, struct rtree_range *r)
{
	txn_assert_open(tx);
	return lookup(tx->root, addr, r);
}

void *rtree_txn_find_next(struct rtree_txn *tx, unsigned long addr, struct rtree_range *r)
{
	txn_assert_open(tx);
	return lookup_next(tx->root, addr, r);
}

void *rtree_txn_find_prev(struct rtree_txn *tx, unsigned long addr, struct rtree_range *r)
{
	txn_assert_open(tx);
	return lookup_prev(tx->root, addr, r);
}

/* ---------------------------------------------------------------------- */
/* Cursor */

void rtree_cursor_set(struct rtree_cursor *c, struct rtree *t, unsigned long addr)
{
	c->tree = t;
	c->depth = -1;
	c->addr = addr;
}

/*
 * Position the cursor just before the first range with end > c->addr: the
 * leaf slot is that range's index, or the leaf's n at the end of the tree.
 * An internal node with no child ending above addr can only be met at the
 * right edge of the tree, so clamping to its last child walks that edge.
 */
static void cursor_seek(struct rtree_cursor *c)
{
	/* acquire: pairs with vml_rcu_assign_pointer(t->root) in rtree_txn_commit() */
	const struct rtree_node *node = vml_rcu_dereference(c->tree->root);
	int d = 0;

	if (!node) {
		c->depth = 0;
		return;
	}
	for (;;) {
		unsigned int i = search_end(node, c->addr);

		c->path[d] = node;
		if (node->level == 0) {
			c->slot[d] = (unsigned char)i;
			break;
		}
		if (i == node->n)
			i--;
		c->slot[d] = (unsigned char)i;
		node = node_child(node, i);
		d++;
	}
	c->depth = d + 1;
}

/* Rewalk trees: has a commit taken @leaf out of the tree since the cursor reached it? */
static bool cursor_leaf_replaced(const struct rtree_cursor *c, const struct rtree_node *leaf)
{
	/* acquire: pairs with the store_release of the mark in rtree_txn_commit() */
	return c->tree->rewalk && unlikely(load_acquire((_Atomic bool *)&leaf->replaced));
}

/*
 * The maple tree's mas_rewalk(mas, save_point) in mas_next_slot(): the
 * cursor's leaf is dead, so walk down from the (new) root to the range
 * containing the last address returned - c->addr - 1, the end of the range
 * returned last - and continue after that range: the next call returns the
 * first range starting after it. When a merge made that range reach beyond
 * c->addr, the part beyond is never returned.
 */
static void cursor_rewalk(struct rtree_cursor *c)
{
	unsigned long save = c->addr - 1;
	const struct rtree_node *leaf;
	unsigned int s;

	if (!c->addr) {		/* nothing returned yet: just walk down again */
		cursor_seek(c);
		return;
	}
	c->addr = save;
	cursor_seek(c);
	c->addr = save + 1;
	if (c->depth == 0)
		return;
	leaf = c->path[c->depth - 1];
	s = c->slot[c->depth - 1];
	if (s < leaf->n && leaf->start[s] <= save) {
		/* the range containing save_point: step past it */
		c->slot[c->depth - 1] = (unsigned char)(s + 1);
		c->addr = leaf->end[s];
	}
}

void *rtree_cursor_next(struct rtree_cursor *c, struct rtree_range *r)
{
	const struct rtree_node *leaf;
	int ld, d;
	unsigned int s;

	if (c->depth < 0)
		cursor_seek(c);
	/* Ends: each retry follows a commit that replaced the leaf (rewalk trees only). */
retry:
	if (c->depth == 0)
		return NULL;
	ld = c->depth - 1;
	leaf = c->path[ld];
	if (cursor_leaf_replaced(c, leaf)) {
		cursor_rewalk(c);
		goto retry;
	}
	s = c->slot[ld];
	if (s == leaf->n) {
		/* Up to the lowest ancestor with a next child, then down its left edge. */
		for (d = ld - 1; d >= 0 && c->slot[d] + 1u >= c->path[d]->n; d--)
			;
		if (d < 0)
			return NULL;
		c->slot[d]++;
		for (; d < ld; d++) {
			c->path[d + 1] = node_child(c->path[d], c->slot[d]);
			c->slot[d + 1] = 0;
		}
		leaf = c->path[ld];
		s = 0;
		if (cursor_leaf_replaced(c, leaf)) {
			cursor_rewalk(c);
			goto retry;
		}
	}
	fill_range(r, leaf, s);
	c->slot[ld] = (unsigned char)(s + 1);
	c->addr = leaf->end[s];
	return leaf->entry[s];
}

void *rtree_cursor_prev(struct rtree_cursor *c, struct rtree_range *r)
{
	const struct rtree_node *leaf;
	int ld, d;
	unsigned int s;

	if (c->depth < 0) {
		cursor_seek(c);
		if (c->depth == 0)
			return NULL;
		/* Before the first range with end > addr; step over it if it starts below addr. */
		leaf = c->path[c->depth - 1];
		s = c->slot[c->depth - 1];
		if (s < leaf->n && leaf->start[s] < c->addr)
			c->slot[c->depth - 1] = (unsigned char)(s + 1);
	}
	if (c->depth == 0)
		return NULL;
	ld = c->depth - 1;
	leaf = c->path[ld];
	s = c->slot[ld];
	if (s == 0) {
		/* Up to the lowest ancestor with a previous child, then down its right edge. */
		for (d = ld - 1; d >= 0 && c->slot[d] == 0; d--)
			;
		if (d < 0)
			return NULL;
		c->slot[d]--;
		for (; d < ld; d++) {
			const struct rtree_node *child = node_child(c->path[d], c->slot[d]);

			c->path[d + 1] = child;
			c->slot[d + 1] = (unsigned char)(child->level ? child->n - 1 : child->n);
		}
		leaf = c->path[ld];
		s = leaf->n;
	}
	s--;
	fill_range(r, leaf, s);
	c->slot[ld] = (unsigned char)s;
	c->addr = leaf->start[s];
	return leaf->entry[s];
}

/* ---------------------------------------------------------------------- */
/* Node lifetime inside a transaction */

static struct rtree_node *node_alloc(struct rtree_txn *tx, unsigned int level)
{
	struct rtree_node *node = vml_malloc(sizeof(*node));

	if (!node)
		return NULL;
	node->level = (unsigned char)level;
	node->n = 0;
	node->dead = false;
	store_relaxed(&node->replaced, false);	/* private until the commit publishes it */
	node->gen = tx->gen;
	node->txn_next = tx->new_nodes;
	tx->new_nodes = node;
	return node;
}

/*
 * The grace period after a commit has passed: free the commit's replaced
 * nodes, chained through txn_next from the one whose rcu head was queued
 * (one callback per commit, not per node: the callback thread's frees
 * contend with the writer's mallocs on the allocator's lock).
 */
static void node_free_rcu(struct vml_rcu_head *head)
{
	struct rtree_node *node = container_of(head, struct rtree_node, rcu), *next;

	for (; node; node = next) {
		next = node->txn_next;
		vml_free(node);
	}
}

/* @node leaves the working tree: free it at commit (own) or after a grace period (published). */
static void node_retire(struct rtree_txn *tx, struct rtree_node *node)
{
	if (node->gen == tx->gen) {
		node->dead = true;
		return;
	}
	node->txn_next = tx->old_nodes;
	tx->old_nodes = node;
}

/* Copy slots [spos, spos + k) of @src to [dpos, dpos + k) of @dst; they may overlap. */
static void slots_move(struct rtree_node *dst, unsigned int dpos, const struct rtree_node *src,
		       unsigned int spos, unsigned int k)
{
	if (!k)
		return;
	memmove(&dst->start[dpos], &src->start[spos], k * sizeof(dst->start[0]));
	memmove(&dst->end[dpos], &src->end[spos], k * sizeof(dst->end[0]));
	/* The union's plain view: @dst is private to the writer until commit. */
	memmove(&dst->entry[dpos], &src->entry[spos], k * sizeof(dst->entry[0]));
}

static void slot_set(struct rtree_node *node, unsigned int i, unsigned long start,
		     unsigned long end, void *ptr)
{
	node->start[i] = start;
	node->end[i] = end;
	if (node->level)
		store_relaxed(&node->child[i], ptr);	/* published by the root's release store */
	else
		node->entry[i] = ptr;
}

/* Refresh slot @i of @parent from its (own) child @child. */
static void slot_set_child(struct rtree_node *parent, unsigned int i, struct rtree_node *child)
{
	slot_set(parent, i, node_min(child), node_max(child), child);
}

/* Return @node, or a copy of it that this transaction may edit; NULL on -ENOMEM. */
static struct rtree_node *node_own(struct rtree_txn *tx, struct rtree_node *node)
{
	struct rtree_node *copy;

	if (node->gen == tx->gen)
		return node;
	copy = node_alloc(tx, node->level);
	if (!copy)
		return NULL;
	copy->n = node->n;
	slots_move(copy, 0, node, 0, node->n);
	node_retire(tx, node);
	return copy;
}

/* Own child @i of the owned @parent and link the copy in. */
static struct rtree_node *child_own(struct rtree_txn *tx, struct rtree_node *parent, unsigned int i)
{
	struct rtree_node *child = node_own(tx, load_relaxed(&parent->child[i]));

	if (child)
		store_relaxed(&parent->child[i], child);
	return child;
}

/* ---------------------------------------------------------------------- */
/* Structural edits of owned nodes */

/*
 * Insert a slot at @pos of the owned @node. A full node splits: the slots
 * are shared between @node and a new right sibling returned in *split, half
 * and half, or 25/8 when the insertion is at the node's right end (8/25 at
 * its left end) so that ascending or descending inserts fill nodes well.
 * Return: 0, or -ENOMEM with @node unchanged.
 */
static int node_insert(struct rtree_txn *tx, struct rtree_node *node, unsigned int pos,
		       unsigned long start, unsigned long end, void *ptr, struct rtree_node **split)
{
	const unsigned int total = RTREE_SLOTS + 1;
	unsigned int n = node->n, left;
	struct rtree_node *right;

	*split = NULL;
	if (n < RTREE_SLOTS) {
		slots_move(node, pos + 1, node, pos, n - pos);
		slot_set(node, pos, start, end, ptr);
		node->n++;
		return 0;
	}
	right = node_alloc(tx, node->level);
	if (!right)
		return -ENOMEM;
	if (pos == n)
		left = total - RTREE_MIN;
	else if (pos == 0)
		left = RTREE_MIN;
	else
		left = total / 2;
	if (pos < left) {
		/* The new slot stays left: old slots [left - 1, n) go right. */
		slots_move(right, 0, node, left - 1, n - (left - 1));
		slots_move(node, pos + 1, node, pos, left - 1 - pos);
		slot_set(node, pos, start, end, ptr);
	} else {
		/* Right gets old [left, pos), the new slot, old [pos, n). */
		slots_move(right, 0, node, left, pos - left);
		slot_set(right, pos - left, start, end, ptr);
		slots_move(right, pos - left + 1, node, pos, n - pos);
	}
	node->n = (unsigned char)left;
	right->n = (unsigned char)(total - left);
	*split = right;
	return 0;
}

static void node_remove(struct rtree_node *node, unsigned int pos)
{
	slots_move(node, pos, node, pos + 1, node->n - pos - 1);
	node->n--;
}

/*
 * Child @i of the owned @parent (itself owned) fell below RTREE_MIN slots:
 * merge it with a neighbour if both fit in one node, else even the two out.
 * Return: 0 or -ENOMEM.
 */
static int node_rebalance(struct rtree_txn *tx, struct rtree_node *parent, unsigned int i)
{
	unsigned int j = i > 0 ? i - 1 : i;	/* the pair is children j, j + 1 */
	struct rtree_node *l, *r, *dst, *victim;
	unsigned int total, want;

	VML_BUG_ON(parent->n < 2);
	l = load_relaxed(&parent->child[j]);
	r = load_relaxed(&parent->child[j + 1]);
	if (l->n + r->n <= RTREE_SLOTS) {
		/* Into whichever is already ours, so a merge never allocates. */
		if (l->gen == tx->gen) {
			slots_move(l, l->n, r, 0, r->n);
			l->n += r->n;
			dst = l;
			victim = r;
		} else {
			vml_assert(r->gen == tx->gen);
			slots_move(r, l->n, r, 0, r->n);
			slots_move(r, 0, l, 0, l->n);
			r->n += l->n;
			dst = r;
			victim = l;
		}
		node_retire(tx, victim);
		slot_set_child(parent, j, dst);
		node_remove(parent, j + 1);
		return 0;
	}
	l = child_own(tx, parent, j);
	if (!l)
		return -ENOMEM;
	r = child_own(tx, parent, j + 1);
	if (!r)
		return -ENOMEM;
	total = l->n + r->n;
	want = total / 2;
	if (l->n > want) {
		unsigned int k = l->n - want;

		slots_move(r, k, r, 0, r->n);
		slots_move(r, 0, l, want, k);
	} else {
		unsigned int k = want - l->n;

		slots_move(l, l->n, r, 0, k);
		slots_move(r, 0, r, k, r->n - k);
	}
	l->n = (unsigned char)want;
	r->n = (unsigned char)(total - want);
	slot_set_child(parent, j, l);
	slot_set_child(parent, j + 1, r);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Primitive operations: one root-to-leaf pass each */

enum rtree_op_kind { OP_INSERT, OP_DELETE, OP_SET };

/*
 * OP_INSERT: insert [start, end) -> entry, which overlaps nothing (key = start).
 * OP_DELETE: delete the range starting at key.
 * OP_SET:    rewrite the range starting at key as [start, end) -> entry; the
 *            new bounds must not overlap its neighbours.
 */
struct rtree_op {
	enum rtree_op_kind kind;
	unsigned long key;
	unsigned long start, end;
	void *entry;
};

/* Apply @op below the owned @node; a split of @node is returned in *split. */
static int op_apply(struct rtree_txn *tx, struct rtree_node *node, const struct rtree_op *op,
		    struct rtree_node **split)
{
	unsigned int i = search_end(node, op->key);
	struct rtree_node *child, *csplit;
	int err;

	*split = NULL;
	if (node->level == 0) {
		if (op->kind == OP_INSERT)
			return node_insert(tx, node, i, op->start, op->end, op->entry, split);
		VML_BUG_ON(i >= node->n || node->start[i] != op->key);
		if (op->kind == OP_DELETE)
			node_remove(node, i);
		else
			slot_set(node, i, op->start, op->end, op->entry);
		return 0;
	}
	if (i == node->n)
		i--;	/* an insert past the last range: the right edge */
	child = child_own(tx, node, i);
	if (!child)
		return -ENOMEM;
	err = op_apply(tx, child, op, &csplit);
	if (err)
		return err;
	vml_assert(child->n > 0);	/* non-root nodes hold >= RTREE_MIN - 1 after one delete */
	slot_set_child(node, i, child);
	if (csplit)
		return node_insert(tx, node, i + 1, node_min(csplit), node_max(csplit), csplit, split);
	if (child->n < RTREE_MIN)
		return node_rebalance(tx, node, i);
	return 0;
}

static int txn_apply(struct rtree_txn *tx, const struct rtree_op *op)
{
	struct rtree_node *root, *split;

	if (!tx->root) {
		VML_BUG_ON(op->kind != OP_INSERT);
		root = node_alloc(tx, 0);
		if (!root)
			goto nomem;
		slot_set(root, 0, op->start, op->end, op->entry);
		root->n = 1;
		tx->root = root;
		tx->count++;
		return 0;
	}
	root = node_own(tx, tx->root);
	if (!root)
		goto nomem;
	tx->root = root;
	if (op_apply(tx, root, op, &split))
		goto nomem;
	if (split) {
		struct rtree_node *top;

		VML_BUG_ON(root->level + 2 > RTREE_MAX_DEPTH);
		top = node_alloc(tx, root->level + 1u);
		if (!top)
			goto nomem;
		slot_set_child(top, 0, root);
		slot_set_child(top, 1, split);
		top->n = 2;
		tx->root = top;
	} else if (root->level > 0 && root->n == 1) {
		/* Its two children merged: the tree gets one level shorter. */
		tx->root = load_relaxed(&root->child[0]);
		node_retire(tx, root);
	} else if (root->n == 0) {
		tx->root = NULL;
		node_retire(tx, root);
	}
	if (op->kind == OP_INSERT)
		tx->count++;
	else if (op->kind == OP_DELETE)
		tx->count--;
	return 0;
nomem:
	tx->err = -ENOMEM;
	return -ENOMEM;
}

static int txn_insert(struct rtree_txn *tx, unsigned long start, unsigned long end, void *entry)
{
	struct rtree_op op = { OP_INSERT, start, start, end, entry };

	return txn_apply(tx, &op);
}

static int txn_delete(struct rtree_txn *tx, unsigned long key)
{
	struct rtree_op op = { OP_DELETE, key, 0, 0, NULL };

	return txn_apply(tx, &op);
}

static int txn_set(struct rtree_txn *tx, unsigned long key, unsigned long start,
		   unsigned long end, void *entry)
{
	struct rtree_op op = { OP_SET, key, start, end, entry };

	return txn_apply(tx, &op);
}

/* ---------------------------------------------------------------------- */
/* Transactions */

void rtree_init(struct rtree *t)
{
	store_relaxed(&t->root, NULL);
	t->count = 0;
	t->gen = 0;
	t->txn = NULL;
	t->rewalk = false;
}

void rtree_set_rewalk(struct rtree *t, bool on)
{
	t->rewalk = on;
}

static void node_free_tree(struct rtree_node *node)
{
	if (node->level) {
		for (unsigned int i = 0; i < node->n; i++)
			node_free_tree(load_relaxed(&node->child[i]));
	}
	vml_free(node);
}

void rtree_destroy(struct rtree *t)
{
	struct rtree_node *root = load_relaxed(&t->root);

	VML_BUG_ON(t->txn);
	if (root)
		node_free_tree(root);
	store_relaxed(&t->root, NULL);
	t->count = 0;
}

size_t rtree_count(const struct rtree *t)
{
	return t->count;
}

void rtree_txn_begin(struct rtree_txn *tx, struct rtree *t)
{
	VML_BUG_ON(t->txn);	/* one transaction per tree at a time */
	t->txn = tx;
	tx->tree = t;
	tx->root = load_relaxed(&t->root);	/* only the writer stores it */
	tx->count = t->count;
	tx->gen = ++t->gen;
	tx->err = 0;
	tx->new_nodes = NULL;
	tx->old_nodes = NULL;
}

/*
 * Store [start, end) -> entry in four steps, each keeping the working tree
 * free of overlaps (the descents rely on it): trim the range straddling
 * start, trim the one straddling end, delete the ranges inside except the
 * first, then rewrite that one in place (or insert if there was none).
 */
int rtree_txn_store(struct rtree_txn *tx, unsigned long start, unsigned long end, void *entry)
{
	struct rtree_range e, first;
	int err;

	txn_assert_open(tx);
	if (tx->err)
		return tx->err;
	if (start >= end)
		return -EINVAL;

	if (!lookup_next(tx->root, start, &e) || e.start >= end)
		return entry ? txn_insert(tx, start, end, entry) : 0;	/* overlaps nothing */

	if (e.start < start) {
		if (e.end > end) {
			/* One range covers [start, end) with room on both sides: split it. */
			err = txn_set(tx, e.start, e.start, start, e.entry);
			if (!err && entry)
				err = txn_insert(tx, start, end, entry);
			if (!err)
				err = txn_insert(tx, end, e.end, e.entry);
			return err;
		}
		err = txn_set(tx, e.start, e.start, start, e.entry);
		if (err)
			return err;
	}
	/* The first range ending at or above end; if it starts inside, cut its head off. */
	if (lookup_next(tx->root, end - 1, &e) && e.start < end && e.end > end) {
		err = txn_set(tx, e.start, end, e.end, e.entry);
		if (err)
			return err;
	}
	/* What is left overlapping [start, end) lies wholly inside it. */
	if (!lookup_next(tx->root, start, &first) || first.start >= end)
		return entry ? txn_insert(tx, start, end, entry) : 0;
	while (lookup_next(tx->root, first.end, &e) && e.start < end) {
		err = txn_delete(tx, e.start);
		if (err)
			return err;
	}
	if (entry)
		return txn_set(tx, first.start, start, end, entry);
	return txn_delete(tx, first.start);
}

void rtree_txn_commit(struct rtree_txn *tx)
{
	struct rtree *t = tx->tree;
	struct rtree_node *node, *next;

	txn_assert_open(tx);
	VML_BUG_ON(tx->err);	/* a failed transaction can only be aborted */
	/* Nodes this transaction made and dropped again were never published. */
	for (node = tx->new_nodes; node; node = next) {
		next = node->txn_next;
		if (node->dead)
			vml_free(node);
	}
	if (tx->root != load_relaxed(&t->root)) {
		/* Pairs with vml_rcu_dereference(t->root) in lookups and cursor_seek. */
		vml_rcu_assign_pointer(t->root, tx->root);
	}
	t->count = tx->count;
	/*
	 * Rewalk trees: mark what this commit took out of the tree, after the
	 * root above, so that a cursor that sees a mark finds the new root.
	 */
	if (t->rewalk)
		for (node = tx->old_nodes; node; node = node->txn_next)
			/* release: pairs with the load_acquire in cursor_leaf_replaced() */
			store_release(&node->replaced, true);
	/*
	 * Readers may still be walking the replaced nodes: free them after a
	 * grace period. Nothing reaches them any more, so their txn_next chain
	 * is stable until the callback walks it.
	 */
	if (tx->old_nodes)
		vml_call_rcu(&tx->old_nodes->rcu, node_free_rcu);
	t->txn = NULL;
	tx->new_nodes = NULL;
	tx->old_nodes = NULL;
	if (VML_VALIDATE)
		VML_BUG_ON(rtree_validate(t));
}

void rtree_txn_abort(struct rtree_txn *tx)
{
	struct rtree_node *node, *next;

	txn_assert_open(tx);
	/* The committed tree was never written: dropping our nodes restores it. */
	for (node = tx->new_nodes; node; node = next) {
		next = node->txn_next;
		vml_free(node);
	}
	tx->tree->txn = NULL;
	tx->root = NULL;
	tx->new_nodes = NULL;
	tx->old_nodes = NULL;
}

/* ---------------------------------------------------------------------- */
/* Validation and statistics */

struct validate_state {
	unsigned long gen_max;
	bool have_prev;
	unsigned long prev_end;
	size_t count;
};

static int validate_node(const struct rtree_node *node, unsigned int level, bool is_root,
			 struct validate_state *st)
{
	unsigned int i;

	if (!node || node->level != level || node->dead || node->gen > st->gen_max)
		return -EUCLEAN;
	if (node->n == 0 || node->n > RTREE_SLOTS)
		return -EUCLEAN;
	if (!is_root && node->n < RTREE_MIN)
		return -EUCLEAN;
	if (is_root && level > 0 && node->n < 2)
		return -EUCLEAN;
	for (i = 0; i < node->n; i++) {
		if (node->start[i] >= node->end[i])
			return -EUCLEAN;
		if (level == 0) {
			if (!node->entry[i])
				return -EUCLEAN;
			if (st->have_prev && node->start[i] < st->prev_end)
				return -EUCLEAN;
			st->have_prev = true;
			st->prev_end = node->end[i];
			st->count++;
		} else {
			const struct rtree_node *child = node_child(node, i);

			if (validate_node(child, level - 1, false, st))
				return -EUCLEAN;
			if (node->start[i] != node_min(child) || node->end[i] != node_max(child))
				return -EUCLEAN;
		}
	}
	return 0;
}

static int validate_root(const struct rtree_node *root, size_t count, unsigned long gen_max)
{
	struct validate_state st = { .gen_max = gen_max };

	if (!root)
		return count == 0 ? 0 : -EUCLEAN;
	if (root->level >= RTREE_MAX_DEPTH)
		return -EUCLEAN;
	if (validate_node(root, root->level, true, &st))
		return -EUCLEAN;
	return st.count == count ? 0 : -EUCLEAN;
}

int rtree_validate(struct rtree *t)
{
	/* acquire: pairs with vml_rcu_assign_pointer(t->root) in rtree_txn_commit() */
	return validate_root(vml_rcu_dereference(t->root), t->count, t->gen);
}

int rtree_txn_validate(struct rtree_txn *tx)
{
	txn_assert_open(tx);
	if (tx->err)
		return -EUCLEAN;
	return validate_root(tx->root, tx->count, tx->gen);
}

static void stats_node(const struct rtree_node *node, struct rtree_stats *s)
{
	s->nodes++;
	if (node->level == 0) {
		s->leaves++;
		return;
	}
	for (unsigned int i = 0; i < node->n; i++)
		stats_node(node_child(node, i), s);
}

void rtree_stats(struct rtree *t, struct rtree_stats *s)
{
	/* acquire: pairs with vml_rcu_assign_pointer(t->root) in rtree_txn_commit() */
	const struct rtree_node *root = vml_rcu_dereference(t->root);

	memset(s, 0, sizeof(*s));
	s->slots = RTREE_SLOTS;
	if (!root)
		return;
	s->depth = root->level + 1;
	stats_node(root, s);
	s->bytes = s->nodes * sizeof(struct rtree_node);
}
