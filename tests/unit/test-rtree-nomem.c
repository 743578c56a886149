// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Allocation failures in the range tree: for each multi-store transaction
 * below, make the N-th allocation fail for N = 1, 2, ... until the
 * transaction needs fewer than N; every -ENOMEM must be sticky, and abort
 * must leave the tree exactly as before (same root, same ranges, valid).
 * The transaction that finally succeeds must give the same tree as the one
 * built without fault injection. Leaks are ASan's to find.
 *
 * Needs a build with -Dfault_injection=true; skips otherwise.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <time.h>	/* before tap.h, which uses clock_gettime without it */

#include "sync/rcu.h"
#include "tap.h"
#include "tree/rtree.h"
#include "util/alloc.h"
#include "util/compiler.h"

#define BASE 3000UL	/* ranges [k * 0x2000, k * 0x2000 + 0x1000) for k < BASE */

static void *fake_entry(unsigned long id)
{
	return (void *)(uintptr_t)(0x10000 + id * 8);
}

static void build_base(struct rtree *t)
{
	struct rtree_txn tx;

	rtree_init(t);
	rtree_txn_begin(&tx, t);
	/* Out of order, so the leaves are not all the same fill. */
	for (unsigned long i = 0; i < BASE; i++) {
		unsigned long k = (i * 1237) % BASE;

		VML_BUG_ON(rtree_txn_store(&tx, k * 0x2000, k * 0x2000 + 0x1000, fake_entry(k)));
	}
	rtree_txn_commit(&tx);
}

/* The same ranges and entries, in the same order? */
static bool same_tree(struct rtree *a, struct rtree *b)
{
	struct rtree_cursor ca, cb;
	struct rtree_range ra, rb;
	void *ea, *eb;

	if (rtree_count(a) != rtree_count(b))
		return false;
	rtree_cursor_set(&ca, a, 0);
	rtree_cursor_set(&cb, b, 0);
	do {
		ea = rtree_cursor_next(&ca, &ra);
		eb = rtree_cursor_next(&cb, &rb);
		if (ea != eb || (ea && (ra.start != rb.start || ra.end != rb.end)))
			return false;
	} while (ea);
	return true;
}

/* A scenario: a fixed sequence of stores; returns the first error. */
typedef int (*scenario_fn)(struct rtree_txn *tx);

static int store_all(struct rtree_txn *tx, const unsigned long (*s)[3], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int err = rtree_txn_store(tx, s[i][0], s[i][1], s[i][2] ? fake_entry(s[i][2]) : NULL);

		if (err)
			return err;
	}
	return 0;
}

/* A VMA split (trim one range, insert another), then a merge of two neighbours. */
static int sc_split_merge(struct rtree_txn *tx)
{
	static const unsigned long s[][3] = {
		{ 100 * 0x2000 + 0x800, 100 * 0x2000 + 0x1000, 90001 },
		{ 200 * 0x2000, 201 * 0x2000 + 0x1000, 90002 },
		{ 2999 * 0x2000 + 0x400, 2999 * 0x2000 + 0x600, 0 },
	};

	return store_all(tx, s, sizeof(s) / sizeof(s[0]));
}

/* munmap across 700 ranges: deletions, merges, redistributions, a shorter tree. */
static int sc_unmap_span(struct rtree_txn *tx)
{
	int err = rtree_txn_store(tx, 1000 * 0x2000 + 0x800, 1700 * 0x2000 + 0x800, NULL);

	return err ? err : rtree_txn_store(tx, 0, 5 * 0x2000, NULL);
}

/* A burst of mmaps into the gaps: leaf and internal splits. */
static int sc_map_burst(struct rtree_txn *tx)
{
	for (unsigned long k = 500; k < 900; k++) {
		int err = rtree_txn_store(tx, k * 0x2000 + 0x1000, k * 0x2000 + 0x1800,
					  fake_entry(100000 + k));

		if (err)
			return err;
	}
	return 0;
}

/* Every third range of a region erased: underflows next to published siblings. */
static int sc_scattered_erase(struct rtree_txn *tx)
{
	for (unsigned long k = 1500; k < 2400; k += 3) {
		int err = rtree_txn_store(tx, k * 0x2000, k * 0x2000 + 0x1000, NULL);

		if (err)
			return err;
	}
	return 0;
}

/* Everything at once, with overwrites spanning the earlier changes. */
static int sc_mixed(struct rtree_txn *tx)
{
	int err;

	if ((err = sc_map_burst(tx)) || (err = sc_scattered_erase(tx)) ||
	    (err = sc_split_merge(tx)) || (err = sc_unmap_span(tx)))
		return err;
	return rtree_txn_store(tx, 600 * 0x2000 + 0x100, 2600 * 0x2000, fake_entry(99));
}

/* Erase everything: the tree empties. */
static int sc_erase_all(struct rtree_txn *tx)
{
	return rtree_txn_store(tx, 0, ULONG_MAX, NULL);
}

/*
 * Sweep the failing allocation over @fn applied to a tree built by @base.
 * Return the number of allocations the transaction needed.
 */
static void sweep(const char *name, void (*base)(struct rtree *), scenario_fn fn)
{
	struct rtree t, want;
	struct rtree_txn tx;
	struct rtree_node *root;
	unsigned long n, failures = 0, bad_abort = 0, not_sticky = 0;
	size_t count;
	int err;

	/* The expected result, without fault injection. */
	vml_fail_alloc_at(0);
	base(&want);
	rtree_txn_begin(&tx, &want);
	VML_BUG_ON(fn(&tx));
	rtree_txn_commit(&tx);

	base(&t);
	for (n = 1;; n++) {
		root = load_relaxed(&t.root);
		count = rtree_count(&t);
		vml_fail_alloc_at(n);
		rtree_txn_begin(&tx, &t);
		err = fn(&tx);
		if (!err)
			break;
		vml_fail_alloc_at(0);
		failures++;
		if (err != -ENOMEM)
			bad_abort++;
		if (rtree_txn_store(&tx, 1, 2, fake_entry(1)) != -ENOMEM ||
		    rtree_txn_store(&tx, 1, 2, NULL) != -ENOMEM)
			not_sticky++;
		rtree_txn_abort(&tx);
		if (load_relaxed(&t.root) != root || rtree_count(&t) != count || rtree_validate(&t))
			bad_abort++;
	}
	ok(vml_alloc_count() < n, "%s: succeeds once the failure is past its %lu allocations", name,
	   vml_alloc_count());
	vml_fail_alloc_at(0);
	rtree_txn_commit(&tx);
	ok(failures == n - 1 && failures > 0, "%s: each of the %lu allocations failed in turn", name,
	   failures);
	is_int(not_sticky, 0, "%s: -ENOMEM is sticky until abort", name);
	is_int(bad_abort, 0, "%s: every abort left the tree exactly as before", name);
	ok(rtree_validate(&t) == 0 && same_tree(&t, &want),
	   "%s: the committed result equals the one built without failures", name);
	rtree_destroy(&t);
	rtree_destroy(&want);
}

static void base_empty(struct rtree *t)
{
	rtree_init(t);
}

static int sc_fill_empty(struct rtree_txn *tx)
{
	/* From nothing to a three-level tree. */
	for (unsigned long k = 0; k < 2000; k++) {
		unsigned long a = ((k * 7919) % 2000) * 0x2000;
		int err = rtree_txn_store(tx, a, a + 0x1000, fake_entry(k));

		if (err)
			return err;
	}
	return 0;
}

int main(void)
{
	if (!vml_fault_injection_enabled())
		tap_skip_all("fault injection is not compiled in (meson -Dfault_injection=true)");

	sweep("split + merge", build_base, sc_split_merge);
	sweep("unmap span", build_base, sc_unmap_span);
	sweep("map burst", build_base, sc_map_burst);
	sweep("scattered erase", build_base, sc_scattered_erase);
	sweep("mixed", build_base, sc_mixed);
	sweep("erase all", build_base, sc_erase_all);
	sweep("fill empty", base_empty, sc_fill_empty);

	vml_rcu_barrier();	/* replaced nodes freed before the leak check */
	return tap_done();
}
