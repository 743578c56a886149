/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtree.h - an RCU-safe ordered map from disjoint half-open ranges
 * [start, end) to non-NULL pointers: the index of an address space's VMAs,
 * in the spirit of the kernel's maple tree. It knows nothing about VMAs.
 *
 * Readers (vml_rcu_read_lock held, or the writer's lock held) see one
 * consistent snapshot per root load: sorted, non-overlapping ranges. Nodes
 * are copy-on-write: a writer never changes a node a reader may see.
 *
 * Writers are serialised by the caller (for an mm: mmap_lock held for
 * write) and group their changes in a transaction: rtree_txn_store() builds
 * new nodes privately, rtree_txn_commit() publishes the new root with one
 * release store (readers see all of the transaction or none of it) and hands
 * the replaced nodes to vml_call_rcu(); rtree_txn_abort() throws the new
 * nodes away and leaves the tree exactly as it was. Only rtree_txn_store()
 * allocates, so an -ENOMEM never half-applies anything.
 *
 * Store semantics are the maple tree's: storing [start, end) -> entry
 * overwrites whatever was there; entries that partially overlap the range
 * are trimmed (an entry covering the whole range on both sides becomes two
 * ranges mapping to the same pointer). entry == NULL erases the range.
 * Adjacent ranges are never coalesced, even if they hold the same pointer.
 *
 * Cost: find / next / prev O(log n); a store copies O(log n) nodes the first
 * time a transaction touches them and edits its own copies in place after.
 * Must hold 1,000,000 entries.
 */
#ifndef VML_TREE_RTREE_H
#define VML_TREE_RTREE_H

#include <stdbool.h>
#include <stddef.h>

struct rtree_node;		/* private to rtree.c */

struct rtree_txn;

/*
 * [rcu]    written by the writer (release), read by readers (acquire)
 * [writer] read and written only with the caller's writer lock held
 */
struct rtree {
	_Atomic(struct rtree_node *) root;	/* [rcu] published by commit (release) */
	size_t count;				/* [writer] number of ranges */
	unsigned long gen;			/* [writer] transaction generation */
	struct rtree_txn *txn;			/* [writer] the open transaction, or NULL */
	bool rewalk;				/* set before any reader: see rtree_set_rewalk() */
};

/* One range as found in the tree. */
struct rtree_range {
	unsigned long start, end;	/* [start, end) */
	void *entry;
};

void rtree_init(struct rtree *t);
/*
 * rtree_set_rewalk - make @t's cursors behave like the maple tree's iterator
 * (lib/maple_tree.c mas_next_slot): a cursor whose leaf a commit has
 * replaced since it read it does not go on in its old snapshot but walks
 * down again from the root to the range containing the last address it
 * returned (its end - 1) and continues after that range. If a newer range
 * covers that address and reaches beyond it (the previous range grew by a
 * merge), the rest of it is skipped: the kernel's stale-iterator fake gap
 * (docs/findings/maps-fake-gaps.md case 1). Off by default (a cursor keeps
 * its snapshot); vml_sys_config.kernel_transients turns it on.
 * Context: before any reader or writer uses @t.
 */
void rtree_set_rewalk(struct rtree *t, bool on);
/* Context: no readers, no writer. Frees every node now; entries are the caller's. */
void rtree_destroy(struct rtree *t);
/* Context: writer lock. */
size_t rtree_count(const struct rtree *t);

/*
 * Lookups. Context: vml_rcu_read_lock() or the writer lock held. The entry
 * pointer is only as stable as the caller's protection of it (an RCU reader
 * must lock or re-validate what it finds). Return the entry (and its range
 * in *r if r != NULL) or NULL.
 */
void *rtree_find(struct rtree *t, unsigned long addr, struct rtree_range *r);	/* covering addr */
void *rtree_find_next(struct rtree *t, unsigned long addr, struct rtree_range *r); /* first with end > addr */
void *rtree_find_prev(struct rtree *t, unsigned long addr, struct rtree_range *r); /* last with start < addr */

/*
 * Cursor: walks one snapshot in address order. Valid only inside the RCU
 * read-side section (or writer lock hold) in which it was set; after
 * dropping RCU the caller must rtree_cursor_set() it again (the kernel's
 * vma_iter_set after re-taking RCU). In a tree with rtree_set_rewalk() on,
 * rtree_cursor_next() leaves a replaced leaf as the maple tree does (above);
 * rtree_cursor_prev() always stays in its snapshot.
 */
#define RTREE_MAX_DEPTH 12
struct rtree_cursor {
	struct rtree *tree;
	const struct rtree_node *path[RTREE_MAX_DEPTH];
	unsigned char slot[RTREE_MAX_DEPTH];
	int depth;			/* -1: not positioned */
	unsigned long addr;		/* next() returns the first entry with end > addr */
};

void rtree_cursor_set(struct rtree_cursor *c, struct rtree *t, unsigned long addr);
/* The first entry with end > the cursor address, then advance past it. */
void *rtree_cursor_next(struct rtree_cursor *c, struct rtree_range *r);
/* The last entry with start < the cursor address, then move before it. */
void *rtree_cursor_prev(struct rtree_cursor *c, struct rtree_range *r);

/*
 * Transactions. Context: writer lock held from begin to commit/abort; at
 * most one transaction per tree at a time. Lookups through the transaction
 * see its uncommitted changes.
 */
struct rtree_txn {
	struct rtree *tree;
	struct rtree_node *root;	/* working root: the committed one until the first store */
	size_t count;			/* working count */
	unsigned long gen;		/* private: nodes stamped with it are this txn's own */
	int err;			/* private: sticky -ENOMEM; only abort is allowed after it */
	struct rtree_node *new_nodes;	/* private: nodes allocated by this transaction */
	struct rtree_node *old_nodes;	/* private: committed nodes this transaction replaced */
};

void rtree_txn_begin(struct rtree_txn *tx, struct rtree *t);
/* Return: 0, -EINVAL (start >= end), or -ENOMEM (then the caller must abort). */
int rtree_txn_store(struct rtree_txn *tx, unsigned long start, unsigned long end, void *entry);
void rtree_txn_commit(struct rtree_txn *tx);
void rtree_txn_abort(struct rtree_txn *tx);

void *rtree_txn_find(struct rtree_txn *tx, unsigned long addr, struct rtree_range *r);
void *rtree_txn_find_next(struct rtree_txn *tx, unsigned long addr, struct rtree_range *r);
void *rtree_txn_find_prev(struct rtree_txn *tx, unsigned long addr, struct rtree_range *r);

/* Debug: check ordering, balance and counts of the committed tree; returns 0 or -EUCLEAN. */
int rtree_validate(struct rtree *t);
/* Debug: the same for a transaction's working tree (valid between successful stores). */
int rtree_txn_validate(struct rtree_txn *tx);

/* Shape and memory of the committed tree. Context: writer lock (walks every node). */
struct rtree_stats {
	size_t nodes;		/* leaves + internal nodes */
	size_t leaves;
	size_t bytes;		/* sizeof(node) * nodes; the allocator's overhead is not counted */
	int depth;		/* levels, 0 for an empty tree */
	size_t slots;		/* slots per node */
};
void rtree_stats(struct rtree *t, struct rtree_stats *s);

#endif /* VML_TREE_RTREE_H */
