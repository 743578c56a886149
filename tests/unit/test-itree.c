// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the interval tree (src/tree/itree.c): random inserts and
 * removes - many intervals sharing a start, many repeated exactly, as
 * when 64 processes map the same library - against a reference list,
 * every invariant validated after every change, and random queries whose
 * answers must be exactly the reference's intervals meeting the range, in
 * the reference's order (start, then insertion). Then the edges: an empty
 * tree, one-page ranges, queries at 0 and ~0, ascending and descending
 * insertion (the rotations' worst cases) and removing every node from the
 * root down.
 */
#include <stdint.h>

#include "tap.h"
#include "tree/itree.h"
#include "util/rand.h"

#define NODES 2000

struct item {
	struct itree_node node;
	unsigned long start, last;
	uint64_t seq;		/* insertion order; 0: not in the tree */
};

static struct item items[NODES];
static uint64_t next_seq;

/* Does the reference order put @a before @b? */
static bool before(const struct item *a, const struct item *b)
{
	return a->start < b->start || (a->start == b->start && a->seq < b->seq);
}

/* The tree's answer for [start, last] against the reference's. Return true if equal. */
static bool query_matches(const struct itree *t, unsigned long start, unsigned long last)
{
	const struct item *prev = NULL;
	unsigned long want = 0, got = 0;

	for (unsigned int i = 0; i < NODES; i++)
		want += items[i].seq && items[i].start <= last && items[i].last >= start;
	for (struct itree_node *n = itree_iter_first(t, start, last); n;
	     n = itree_iter_next(n, start, last)) {
		const struct item *it = (const struct item *)n;

		if (!it->seq || it->start > last || it->last < start)
			return false;		/* not in the tree, or not meeting the range */
		if (prev && !before(prev, it))
			return false;		/* out of order, or repeated */
		prev = it;
		got++;
	}
	return got == want;
}

static void random_ops(uint64_t seed)
{
	struct vml_rand r = vml_rand_init(seed, 1);
	struct itree t;
	unsigned long in = 0, bad_validate = 0, bad_query = 0, queries = 0;

	itree_init(&t);
	memset(items, 0, sizeof(items));
	for (unsigned int step = 0; step < 40000; step++) {
		struct item *it = &items[vml_rand_below(&r, NODES)];

		if (it->seq) {
			itree_remove(&t, &it->node);
			it->seq = 0;
			in--;
		} else {
			/* Few distinct starts (a library's segments), short and long ranges. */
			it->start = vml_rand_below(&r, 64) * 16;
			it->last = it->start + (vml_rand_below(&r, 4) ? vml_rand_below(&r, 16) :
						vml_rand_below(&r, 2000));
			it->seq = ++next_seq;
			itree_insert(&t, &it->node, it->start, it->last);
			in++;
		}
		if (itree_validate(&t) || t.count != in)
			bad_validate++;
		for (int q = 0; q < 3; q++) {
			unsigned long s = vml_rand_below(&r, 1200), l = s + vml_rand_below(&r, 40);

			queries++;
			bad_query += !query_matches(&t, s, l);
		}
	}
	is_int(bad_validate, 0, "40000 random inserts/removes keep every invariant");
	is_int(bad_query, 0, "%lu random queries return exactly the intervals meeting the range, in order",
	       queries);
	ok(query_matches(&t, 0, ~0UL), "a query of everything returns every interval in order");
	/* Empty it from the root down: the two-children removal every time it can. */
	while (t.root) {
		struct item *it = (struct item *)t.root;

		itree_remove(&t, t.root);
		it->seq = 0;
		if (itree_validate(&t))
			bad_validate++;
	}
	ok(!bad_validate && t.count == 0 && itree_empty(&t), "removing the root until empty");
}

static void edges(void)
{
	struct itree t;
	bool good = true;

	itree_init(&t);
	ok(!itree_iter_first(&t, 0, ~0UL) && !itree_validate(&t), "an empty tree has nothing");

	memset(items, 0, sizeof(items));
	items[0] = (struct item){ .start = 0, .last = 0, .seq = 1 };
	items[1] = (struct item){ .start = ~0UL, .last = ~0UL, .seq = 2 };
	items[2] = (struct item){ .start = 5, .last = 9, .seq = 3 };
	for (int i = 0; i < 3; i++)
		itree_insert(&t, &items[i].node, items[i].start, items[i].last);
	ok(query_matches(&t, 0, 0) && query_matches(&t, ~0UL, ~0UL) && query_matches(&t, 9, 9) &&
	   query_matches(&t, 10, 100) && query_matches(&t, 4, 5),
	   "one-page queries at 0, ~0 and at an interval's ends");
	ok(itree_iter_first(&t, 10, 100) == NULL, "a query in a gap finds nothing");
	for (int i = 0; i < 3; i++)
		itree_remove(&t, &items[i].node);
	ok(itree_empty(&t) && !itree_node_linked(&items[0].node), "removed nodes are unlinked");

	/* Sorted insertion, both ways: every insert rotates. */
	memset(items, 0, sizeof(items));
	for (unsigned int i = 0; i < NODES; i++) {
		unsigned int k = i < NODES / 2 ? i : NODES + NODES / 2 - 1 - i;

		items[i] = (struct item){ .start = k, .last = k + 3, .seq = i + 1 };
		itree_insert(&t, &items[i].node, k, k + 3);
	}
	good = !itree_validate(&t) && t.root->height <= 16;
	for (unsigned long s = 0; s < NODES + 4 && good; s += 7)
		good = query_matches(&t, s, s + 2);
	ok(good, "ascending then descending inserts stay balanced (height %d) and answer right",
	   t.root->height);
	for (unsigned int i = 0; i < NODES; i += 2)
		itree_remove(&t, &items[i].node), items[i].seq = 0;
	good = !itree_validate(&t);
	for (unsigned long s = 0; s < NODES + 4 && good; s += 5)
		good = query_matches(&t, s, s);
	ok(good, "removing every other one keeps it valid and right");
}

int main(void)
{
	uint64_t seed = getenv("VML_SEED") ? strtoull(getenv("VML_SEED"), NULL, 0) : 11;

	tap_diag("seed %llu (VML_SEED replays)", (unsigned long long)seed);
	random_ops(seed);
	edges();
	return tap_done();
}
