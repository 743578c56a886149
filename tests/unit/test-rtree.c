// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the range tree: store / trim / erase semantics against a
 * reference model (a sorted array) over many random transactions with a
 * fixed seed, every lookup and both cursor directions checked after every
 * transaction, abort, atomic multi-store transactions, invalid arguments,
 * and 1,000,000 entries (time and memory reported, not asserted).
 *
 * $VML_RTREE_BULK overrides the bulk size (default 1000000; the one-transaction-
 * per-store part uses a fifth of it under ASan).
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <time.h>	/* before tap.h, which uses clock_gettime without it */
#include <stdint.h>

#include "sync/rcu.h"
#include "tap.h"
#include "tree/rtree.h"
#include "util/clock.h"
#include "util/rand.h"

/* ---------------------------------------------------------------------- */
/* The reference model: a sorted array of disjoint ranges */

struct model {
	struct rtree_range *r;
	size_t n, cap;
};

static void model_push(struct model *m, unsigned long start, unsigned long end, void *entry)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->r = realloc(m->r, m->cap * sizeof(*m->r));
		if (!m->r)
			abort();
	}
	m->r[m->n++] = (struct rtree_range){ start, end, entry };
}

static void model_copy(struct model *dst, const struct model *src)
{
	dst->n = 0;
	for (size_t i = 0; i < src->n; i++)
		model_push(dst, src->r[i].start, src->r[i].end, src->r[i].entry);
}

static void model_free(struct model *m)
{
	free(m->r);
	memset(m, 0, sizeof(*m));
}

/* The maple tree's store, written the obvious way: O(n). */
static void model_store(struct model *m, unsigned long start, unsigned long end, void *entry)
{
	struct model out = { 0 };
	bool placed = false;

	for (size_t i = 0; i < m->n; i++) {
		struct rtree_range r = m->r[i];

		if (r.end <= start) {
			model_push(&out, r.start, r.end, r.entry);
			continue;
		}
		if (r.start < start)
			model_push(&out, r.start, start, r.entry);
		if (!placed) {
			if (entry)
				model_push(&out, start, end, entry);
			placed = true;
		}
		if (r.start >= end)
			model_push(&out, r.start, r.end, r.entry);
		else if (r.end > end)
			model_push(&out, end, r.end, r.entry);
	}
	if (!placed && entry)
		model_push(&out, start, end, entry);
	free(m->r);
	*m = out;
}

/* The index of the first range with end > addr (m->n if none). */
static size_t model_next_idx(const struct model *m, unsigned long addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->r[mid].end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static const struct rtree_range *model_find_next(const struct model *m, unsigned long addr)
{
	size_t i = model_next_idx(m, addr);

	return i < m->n ? &m->r[i] : NULL;
}

static const struct rtree_range *model_find(const struct model *m, unsigned long addr)
{
	const struct rtree_range *r = model_find_next(m, addr);

	return r && r->start <= addr ? r : NULL;
}

static const struct rtree_range *model_find_prev(const struct model *m, unsigned long addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {	/* the number of ranges with start < addr */
		size_t mid = (lo + hi) / 2;

		if (m->r[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &m->r[lo - 1] : NULL;
}

/* ---------------------------------------------------------------------- */
/* Comparing a tree (or a transaction) with the model */

static unsigned long mismatches;

__attribute__((format(printf, 1, 2)))
static void mismatch(const char *fmt, ...)
{
	va_list ap;

	if (mismatches++ >= 10)
		return;
	printf("# mismatch: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void check_result(const char *what, unsigned long addr, void *got,
			 const struct rtree_range *gr, const struct rtree_range *want)
{
	if (!want) {
		if (got)
			mismatch("%s(%#lx): got [%#lx, %#lx), want none", what, addr, gr->start,
				 gr->end);
		return;
	}
	if (!got || got != want->entry || gr->start != want->start || gr->end != want->end ||
	    gr->entry != got)
		mismatch("%s(%#lx): got %p [%#lx, %#lx), want %p [%#lx, %#lx)", what, addr, got,
			 got ? gr->start : 0, got ? gr->end : 0, want->entry, want->start,
			 want->end);
}

/* The three lookups at addr on the tree (tx == NULL) or through tx. */
static void check_lookups_at(struct rtree *t, struct rtree_txn *tx, const struct model *m,
			     unsigned long addr)
{
	struct rtree_range r;
	void *e;

	e = tx ? rtree_txn_find(tx, addr, &r) : rtree_find(t, addr, &r);
	check_result("find", addr, e, &r, model_find(m, addr));
	e = tx ? rtree_txn_find_next(tx, addr, &r) : rtree_find_next(t, addr, &r);
	check_result("find_next", addr, e, &r, model_find_next(m, addr));
	e = tx ? rtree_txn_find_prev(tx, addr, &r) : rtree_find_prev(t, addr, &r);
	check_result("find_prev", addr, e, &r, model_find_prev(m, addr));
}

/* Lookups at and around the bounds of every range (of 256 random ones in big trees). */
static void check_boundaries(struct rtree *t, struct rtree_txn *tx, const struct model *m,
			     struct vml_rand *rnd)
{
	size_t samples = m->n <= 256 ? m->n : 256;

	check_lookups_at(t, tx, m, 0);
	check_lookups_at(t, tx, m, ULONG_MAX);
	for (size_t k = 0; k < samples; k++) {
		size_t i = m->n <= 256 ? k : vml_rand_below(rnd, m->n);

		check_lookups_at(t, tx, m, m->r[i].start);
		check_lookups_at(t, tx, m, m->r[i].start - 1);
		check_lookups_at(t, tx, m, m->r[i].end - 1);
		check_lookups_at(t, tx, m, m->r[i].end);
	}
}

/* Walk the whole tree with the cursor both ways and compare with the model. */
static void check_walks(struct rtree *t, const struct model *m)
{
	struct rtree_cursor c;
	struct rtree_range r;
	size_t i = 0;
	void *e;

	rtree_cursor_set(&c, t, 0);
	while ((e = rtree_cursor_next(&c, &r))) {
		check_result("cursor_next", c.addr, e, &r, i < m->n ? &m->r[i] : NULL);
		i++;
	}
	if (i != m->n)
		mismatch("forward walk: %zu ranges, want %zu", i, m->n);
	rtree_cursor_set(&c, t, ULONG_MAX);
	i = m->n;
	while ((e = rtree_cursor_prev(&c, &r))) {
		check_result("cursor_prev", c.addr, e, &r, i > 0 ? &m->r[i - 1] : NULL);
		if (i == 0)
			break;
		i--;
	}
	if (i != 0)
		mismatch("backward walk stopped with %zu ranges left", i);
	if (rtree_count(t) != m->n)
		mismatch("rtree_count %zu, want %zu", rtree_count(t), m->n);
}

/* A random mix of next and prev from a random address, against the model's definition. */
static void check_cursor_mix(struct rtree *t, const struct model *m, struct vml_rand *rnd,
			     unsigned long space)
{
	struct rtree_cursor c;
	struct rtree_range r;
	unsigned long addr = vml_rand_below(rnd, space);

	rtree_cursor_set(&c, t, addr);
	for (int k = 0; k < 24; k++) {
		const struct rtree_range *want;
		void *e;

		if (vml_rand_below(rnd, 2)) {
			want = model_find_next(m, addr);
			e = rtree_cursor_next(&c, &r);
			check_result("mix next", addr, e, &r, want);
			if (want)
				addr = want->end;
		} else {
			want = model_find_prev(m, addr);
			e = rtree_cursor_prev(&c, &r);
			check_result("mix prev", addr, e, &r, want);
			if (want)
				addr = want->start;
		}
	}
}

/* The transaction's view walked with txn_find_next. */
static void check_txn_view(struct rtree_txn *tx, const struct model *m)
{
	struct rtree_range r;
	unsigned long addr = 0;
	size_t i = 0;

	while (rtree_txn_find_next(tx, addr, &r)) {
		check_result("txn walk", addr, r.entry, &r, i < m->n ? &m->r[i] : NULL);
		i++;
		addr = r.end;
	}
	if (i != m->n)
		mismatch("txn walk: %zu ranges, want %zu", i, m->n);
	if (rtree_txn_validate(tx))
		mismatch("rtree_txn_validate failed");
}

/* ---------------------------------------------------------------------- */
/* Random transactions */

static void *fake_entry(unsigned long id)
{
	return (void *)(uintptr_t)(0x10000 + id * 8);
}

struct phase {
	const char *name;
	int txns;
	int max_stores;
	unsigned long space;		/* addresses in [1, space) */
	unsigned long max_len;		/* store length in [1, max_len] */
	unsigned long big_len;		/* occasional big stores, up to this */
	unsigned int erase_pct, big_pct, abort_pct;
	bool every_addr;		/* check lookups at every address (small spaces) */
};

static void run_phase(struct rtree *t, struct model *m, const struct phase *p, uint64_t seed,
		      bool drain)
{
	struct vml_rand rnd = vml_rand_init(seed, 1);
	struct model work = { 0 };
	unsigned long id = 0, before = mismatches, max_count = 0, aborts = 0;
	int validate_fail = 0;
	struct rtree_stats st;
	int max_depth = 0;

	for (int n = 0; n < p->txns; n++) {
		struct rtree_txn tx;
		struct rtree_node *root_before = load_relaxed(&t->root);
		int stores = 1 + (int)vml_rand_below(&rnd, (uint64_t)p->max_stores);
		bool do_abort = vml_rand_below(&rnd, 100) < p->abort_pct;

		model_copy(&work, m);
		rtree_txn_begin(&tx, t);
		for (int s = 0; s < stores; s++) {
			unsigned long len = 1 + vml_rand_below(&rnd, p->max_len);
			unsigned long start, end;
			void *entry;

			if (vml_rand_below(&rnd, 100) < p->big_pct)
				len = 1 + vml_rand_below(&rnd, p->big_len);
			start = 1 + vml_rand_below(&rnd, p->space - 1);
			if (drain && n > p->txns / 2) {
				/* Aligned blocks that cover everything stored, in random order. */
				len = p->big_len;
				start = vml_rand_below(&rnd, p->space + len) & ~(len - 1);
			}
			end = start + len;
			entry = vml_rand_below(&rnd, 100) < p->erase_pct ||
				(drain && n > p->txns / 2) ? NULL : fake_entry(++id);
			if (rtree_txn_store(&tx, start, end, entry))
				mismatch("store [%#lx, %#lx) failed", start, end);
			model_store(&work, start, end, entry);
			if (rtree_txn_validate(&tx))
				mismatch("rtree_txn_validate failed");
			check_lookups_at(t, &tx, &work, start - 1);
			check_lookups_at(t, &tx, &work, start);
			check_lookups_at(t, &tx, &work, end - 1);
			check_lookups_at(t, &tx, &work, end);
		}
		check_txn_view(&tx, &work);
		if (tx.count != work.n)
			mismatch("txn count %zu, want %zu", tx.count, work.n);
		/* Lookups through the transaction see it; the committed tree does not. */
		if (p->every_addr) {
			for (unsigned long a = 0; a <= p->space + p->max_len; a++)
				check_lookups_at(t, &tx, &work, a);
		} else {
			check_boundaries(t, &tx, &work, &rnd);
		}
		check_walks(t, m);
		if (do_abort) {
			rtree_txn_abort(&tx);
			aborts++;
			if (load_relaxed(&t->root) != root_before)
				mismatch("abort changed the root");
		} else {
			rtree_txn_commit(&tx);
			model_copy(m, &work);
		}
		if (rtree_validate(t))
			validate_fail++;
		check_walks(t, m);
		check_cursor_mix(t, m, &rnd, p->space + p->max_len);
		if (p->every_addr) {
			for (unsigned long a = 0; a <= p->space + p->max_len; a++)
				check_lookups_at(t, NULL, m, a);
		} else {
			check_boundaries(t, NULL, m, &rnd);
			for (int k = 0; k < 64; k++)
				check_lookups_at(t, NULL, m, vml_rand_below(&rnd, p->space + p->big_len));
		}
		if (m->n > max_count)
			max_count = m->n;
		rtree_stats(t, &st);
		if (st.depth > max_depth)
			max_depth = st.depth;
	}
	model_free(&work);
	if (drain)
		ok(m->n == 0 && rtree_count(t) == 0 && !load_relaxed(&t->root),
		   "%s: drained to an empty tree", p->name);
	is_int(validate_fail, 0, "%s: rtree_validate after every transaction", p->name);
	ok(mismatches == before, "%s: %d transactions (%lu aborted) match the model "
	   "(up to %lu ranges, depth %d)", p->name, p->txns, aborts, max_count, max_depth);
}

/* ---------------------------------------------------------------------- */
/* Directed tests */

static void test_empty_and_invalid(void)
{
	struct rtree t;
	struct rtree_txn tx;
	struct rtree_cursor c;
	struct rtree_range r = { 1, 2, (void *)3 };

	rtree_init(&t);
	ok(!rtree_find(&t, 0, &r) && !rtree_find_next(&t, 0, &r) && !rtree_find_prev(&t, ~0UL, &r),
	   "lookups in an empty tree find nothing");
	ok(r.start == 1 && r.end == 2 && r.entry == (void *)3, "a failed lookup leaves *r alone");
	rtree_cursor_set(&c, &t, 0);
	ok(!rtree_cursor_next(&c, NULL) && !rtree_cursor_prev(&c, NULL), "cursor on an empty tree");
	is_int(rtree_validate(&t), 0, "empty tree validates");

	rtree_txn_begin(&tx, &t);
	is_int(rtree_txn_store(&tx, 5, 5, (void *)8), -EINVAL, "store of an empty range: -EINVAL");
	is_int(rtree_txn_store(&tx, 6, 5, (void *)8), -EINVAL, "store with start > end: -EINVAL");
	is_int(rtree_txn_store(&tx, 6, 5, NULL), -EINVAL, "erase with start > end: -EINVAL");
	is_int(rtree_txn_store(&tx, 10, 20, NULL), 0, "erasing nothing succeeds");
	is_int(rtree_txn_store(&tx, 10, 20, (void *)8), 0, "a store after -EINVAL still works");
	rtree_txn_commit(&tx);
	is_int(rtree_count(&t), 1, "one range");
	rtree_txn_begin(&tx, &t);
	is_int(rtree_txn_store(&tx, ULONG_MAX - 16, ULONG_MAX, (void *)16), 0,
	       "a range ending at ULONG_MAX");
	rtree_txn_commit(&tx);
	ok(rtree_find(&t, ULONG_MAX - 1, &r) == (void *)16 && r.end == ULONG_MAX,
	   "found at ULONG_MAX - 1");
	ok(!rtree_find(&t, ULONG_MAX, NULL), "ULONG_MAX itself is not covered");
	ok(rtree_find_prev(&t, ULONG_MAX, &r) == (void *)16, "find_prev(ULONG_MAX)");
	rtree_txn_begin(&tx, &t);
	is_int(rtree_txn_store(&tx, 0, ULONG_MAX, NULL), 0, "erase everything");
	rtree_txn_commit(&tx);
	ok(rtree_count(&t) == 0 && !rtree_find_next(&t, 0, NULL) && !load_relaxed(&t.root),
	   "the tree is empty again");
	rtree_destroy(&t);
}

static void test_semantics(void)
{
	struct rtree t;
	struct rtree_txn tx;
	struct rtree_cursor c;
	struct rtree_range r;
	void *A = (void *)0xa0, *B = (void *)0xb0, *C = (void *)0xc0;

	rtree_init(&t);
	rtree_txn_begin(&tx, &t);
	rtree_txn_store(&tx, 10, 20, A);
	rtree_txn_store(&tx, 30, 40, B);
	rtree_txn_commit(&tx);

	ok(rtree_find(&t, 10, &r) == A && r.start == 10 && r.end == 20, "find at start");
	ok(rtree_find(&t, 19, NULL) == A && !rtree_find(&t, 20, NULL), "end is exclusive");
	ok(rtree_find_next(&t, 19, &r) == A, "find_next(19): the range ending at 20");
	ok(rtree_find_next(&t, 20, &r) == B && r.start == 30, "find_next(20): the next range");
	ok(!rtree_find_next(&t, 40, NULL), "find_next past the last range");
	ok(!rtree_find_prev(&t, 10, NULL), "find_prev(10): nothing starts below 10");
	ok(rtree_find_prev(&t, 11, NULL) == A, "find_prev(11)");
	ok(rtree_find_prev(&t, 30, NULL) == A, "find_prev(30): start < 30 is A");
	ok(rtree_find_prev(&t, 31, NULL) == B, "find_prev(31)");

	rtree_cursor_set(&c, &t, 25);
	ok(rtree_cursor_next(&c, &r) == B && c.addr == 40, "cursor from 25: next is B, then at 40");
	ok(rtree_cursor_prev(&c, &r) == B && c.addr == 30, "prev from 40 is B again (a position)");
	ok(rtree_cursor_prev(&c, &r) == A && c.addr == 10, "then A");
	ok(!rtree_cursor_prev(&c, &r), "then nothing");
	ok(rtree_cursor_next(&c, &r) == A, "and forward again: A");

	/* A VMA split: trim one range and insert another, published together. */
	rtree_txn_begin(&tx, &t);
	is_int(rtree_txn_store(&tx, 15, 20, C), 0, "split store");
	ok(rtree_txn_find(&tx, 12, &r) == A && r.end == 15, "the transaction sees A trimmed");
	ok(rtree_txn_find(&tx, 15, &r) == C, "and C inserted");
	ok(rtree_find(&t, 15, &r) == A && r.start == 10 && r.end == 20,
	   "the committed tree still has A whole");
	rtree_txn_commit(&tx);
	ok(rtree_find(&t, 15, &r) == C && rtree_find(&t, 14, &r) == A && r.end == 15,
	   "after commit: A [10, 15), C [15, 20)");
	ok(rtree_find_next(&t, 15, &r) == C && rtree_count(&t) == 3, "adjacent ranges, count 3");

	/* Hole punch: one range becomes two with the same pointer. */
	rtree_txn_begin(&tx, &t);
	rtree_txn_store(&tx, 33, 35, NULL);
	rtree_txn_commit(&tx);
	ok(rtree_find(&t, 32, &r) == B && r.start == 30 && r.end == 33 &&
	   rtree_find(&t, 35, &r) == B && r.start == 35 && r.end == 40 && !rtree_find(&t, 34, NULL),
	   "hole punch leaves B [30, 33) and B [35, 40)");

	/* Same pointer on adjacent ranges is not coalesced. */
	rtree_txn_begin(&tx, &t);
	rtree_txn_store(&tx, 33, 35, B);
	rtree_txn_commit(&tx);
	is_int(rtree_count(&t), 5, "refilling the hole does not coalesce");

	/* One store over several ranges, trimming both ends. */
	rtree_txn_begin(&tx, &t);
	rtree_txn_store(&tx, 12, 34, C);
	rtree_txn_commit(&tx);
	ok(rtree_find(&t, 11, &r) == A && r.end == 12 && rtree_find(&t, 12, &r) == C &&
	   r.end == 34 && rtree_find(&t, 34, &r) == B && r.start == 34 && r.end == 35,
	   "overwrite across ranges trims both neighbours");
	is_int(rtree_count(&t), 4, "A, C, B, B");
	is_int(rtree_validate(&t), 0, "validates");

	/* Abort after several stores: nothing changes. */
	{
		struct rtree_node *root = load_relaxed(&t.root);

		rtree_txn_begin(&tx, &t);
		rtree_txn_store(&tx, 0, 100, NULL);
		rtree_txn_store(&tx, 50, 60, A);
		ok(rtree_txn_find_next(&tx, 0, &r) == A && r.start == 50, "txn sees its own view");
		rtree_txn_abort(&tx);
		ok(load_relaxed(&t.root) == root && rtree_count(&t) == 4 &&
		   rtree_find(&t, 12, NULL) == C, "abort leaves the tree as it was");
	}
	rtree_destroy(&t);
}

/* ---------------------------------------------------------------------- */
/* 1,000,000 entries */

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static double secs(uint64_t t0)
{
	return (double)(vml_now_ns() - t0) / 1e9;
}

static void bulk_check(struct rtree *t, unsigned long n, unsigned long *perm, const char *what)
{
	uint64_t t0 = vml_now_ns();
	unsigned long bad = 0;
	struct rtree_range r;
	struct rtree_cursor c;

	for (unsigned long i = 0; i < n; i++) {
		unsigned long k = perm ? perm[i] : i;

		if (rtree_find(t, k * 0x2000 + 0x800, &r) != fake_entry(k) || r.start != k * 0x2000)
			bad++;
	}
	tap_diag("%s: %lu finds in %.3f s (%.0f ns each)", what, n, secs(t0),
		 secs(t0) * 1e9 / (double)n);
	is_int(bad, 0, "%s: every range found", what);
	t0 = vml_now_ns();
	bad = 0;
	for (unsigned long i = 0; i < n; i++) {
		unsigned long k = perm ? perm[i] : i;

		if (rtree_find(t, k * 0x2000 + 0x1800, NULL) ||
		    rtree_find_next(t, k * 0x2000 + 0x1800, &r) != (k + 1 < n ? fake_entry(k + 1) : NULL) ||
		    rtree_find_prev(t, k * 0x2000 + 0x1800, &r) != fake_entry(k))
			bad++;
	}
	tap_diag("%s: %lu gap lookups (find + next + prev) in %.3f s", what, n, secs(t0));
	is_int(bad, 0, "%s: gaps are gaps, next and prev right", what);
	t0 = vml_now_ns();
	bad = 0;
	rtree_cursor_set(&c, t, 0);
	for (unsigned long i = 0; rtree_cursor_next(&c, &r); i++)
		if (r.entry != fake_entry(i) || i >= n)
			bad++;
	tap_diag("%s: cursor walk of %lu in %.3f s", what, n, secs(t0));
	is_int(bad, 0, "%s: cursor walk in order", what);
	is_int(rtree_validate(t), 0, "%s: validates", what);
}

static void bulk_report(struct rtree *t, unsigned long n, size_t heap0, const char *what)
{
	struct rtree_stats st;
	size_t heap = heap_in_use();

	char heap_str[32] = "n/a (sanitizer)";

	rtree_stats(t, &st);
	if (heap > heap0)
		snprintf(heap_str, sizeof(heap_str), "%.1f", (double)(heap - heap0) / (double)n);
	tap_diag("%s: depth %d, %zu nodes (%zu leaves, %.1f ranges/leaf of %zu), %.1f B/range "
		 "in nodes, %s B/range malloc'd", what, st.depth, st.nodes, st.leaves,
		 (double)n / (double)st.leaves, st.slots, (double)st.bytes / (double)n, heap_str);
}

/* n ranges in one transaction, then per_txn ranges one transaction each. */
static void test_bulk(unsigned long n, unsigned long per_txn, uint64_t seed)
{
	struct rtree t;
	struct rtree_txn tx;
	struct vml_rand rnd = vml_rand_init(seed, 7);
	unsigned long *perm = malloc(n * sizeof(*perm));
	unsigned long fail = 0;
	size_t heap0;
	uint64_t t0;

	if (!perm)
		abort();
	/* One transaction, ascending. */
	vml_rcu_barrier();
	heap0 = heap_in_use();
	rtree_init(&t);
	t0 = vml_now_ns();
	rtree_txn_begin(&tx, &t);
	for (unsigned long i = 0; i < n; i++)
		fail += rtree_txn_store(&tx, i * 0x2000, i * 0x2000 + 0x1000, fake_entry(i)) != 0;
	rtree_txn_commit(&tx);
	tap_diag("one txn: %lu ascending stores + commit in %.3f s", n, secs(t0));
	ok(fail == 0 && rtree_count(&t) == n, "one txn: %lu ranges stored", n);
	bulk_report(&t, n, heap0, "one txn");
	bulk_check(&t, n, NULL, "one txn");

	/* Erase them all with one store: n deletions with rebalancing. */
	t0 = vml_now_ns();
	rtree_txn_begin(&tx, &t);
	is_int(rtree_txn_store(&tx, 0, ULONG_MAX, NULL), 0, "erase all in one store");
	rtree_txn_commit(&tx);
	tap_diag("erase of %lu ranges in one store in %.3f s", n, secs(t0));
	ok(rtree_count(&t) == 0 && !rtree_find_next(&t, 0, NULL), "the tree is empty");
	rtree_destroy(&t);

	/* One transaction per store, random order. */
	n = per_txn;
	for (unsigned long i = 0; i < n; i++)
		perm[i] = i;
	for (unsigned long i = n - 1; i > 0; i--) {
		unsigned long j = vml_rand_below(&rnd, i + 1), tmp = perm[i];

		perm[i] = perm[j];
		perm[j] = tmp;
	}
	vml_rcu_barrier();
	heap0 = heap_in_use();
	rtree_init(&t);
	fail = 0;
	t0 = vml_now_ns();
	for (unsigned long i = 0; i < n; i++) {
		unsigned long k = perm[i];

		rtree_txn_begin(&tx, &t);
		fail += rtree_txn_store(&tx, k * 0x2000, k * 0x2000 + 0x1000, fake_entry(k)) != 0;
		rtree_txn_commit(&tx);
	}
	tap_diag("txn per store: %lu random-order transactions in %.3f s (%.0f ns each)", n,
		 secs(t0), secs(t0) * 1e9 / (double)n);
	t0 = vml_now_ns();
	vml_rcu_barrier();
	tap_diag("txn per store: rcu_barrier (replaced nodes freed) in %.3f s", secs(t0));
	ok(fail == 0 && rtree_count(&t) == n, "txn per store: %lu ranges stored", n);
	bulk_report(&t, n, heap0, "txn per store");
	bulk_check(&t, n, perm, "txn per store");

	/* A tenth erased one per transaction in another random order, then the rest at once. */
	fail = 0;
	t0 = vml_now_ns();
	for (unsigned long i = 0; i < n / 10; i++) {
		unsigned long k = perm[(i * 7919) % n];

		rtree_txn_begin(&tx, &t);
		fail += rtree_txn_store(&tx, k * 0x2000, k * 0x2000 + 0x1000, NULL) != 0;
		rtree_txn_commit(&tx);
	}
	tap_diag("txn per erase: %lu transactions in %.3f s", n / 10, secs(t0));
	ok(fail == 0 && rtree_count(&t) == n - n / 10 && rtree_validate(&t) == 0,
	   "txn per erase: %lu left, valid", n - n / 10);
	rtree_txn_begin(&tx, &t);
	rtree_txn_store(&tx, 0, ULONG_MAX, NULL);
	rtree_txn_commit(&tx);
	ok(rtree_count(&t) == 0 && !load_relaxed(&t.root), "then the tree is empty");
	rtree_destroy(&t);
	free(perm);
}

/*
 * rtree_set_rewalk: a cursor whose leaf a commit replaced walks down again to
 * the range containing its last address and goes on after it (the maple
 * tree's mas_rewalk), so a range that grew past that address is skipped; a
 * plain cursor keeps its snapshot. The cursor's RCU section keeps the
 * replaced nodes alive, as a reader's does.
 */
static void test_rewalk(bool rewalk)
{
	void *A1 = (void *)0xa1, *Am = (void *)0xa2, *A3 = (void *)0xa3, *M = (void *)0xa4;
	void *N = (void *)0xb0, *X = (void *)0xc0;
	const char *how = rewalk ? "rewalk" : "snapshot";
	struct rtree_cursor c;
	struct rtree_range r;
	struct rtree_txn tx;
	struct rtree t;
	void *e;

	rtree_init(&t);
	rtree_set_rewalk(&t, rewalk);
	rtree_txn_begin(&tx, &t);
	rtree_txn_store(&tx, 10, 15, A1);
	rtree_txn_store(&tx, 15, 17, Am);
	rtree_txn_store(&tx, 17, 20, A3);
	rtree_txn_store(&tx, 30, 40, N);
	rtree_txn_commit(&tx);

	/* A change elsewhere in the leaf: the re-walk finds A1 ending where it did. */
	vml_rcu_read_lock();
	rtree_cursor_set(&c, &t, 0);
	ok(rtree_cursor_next(&c, NULL) == A1 && c.addr == 15, "%s: cursor at A1's end", how);
	rtree_txn_begin(&tx, &t);
	rtree_txn_store(&tx, 50, 60, X);
	rtree_txn_commit(&tx);
	ok(rtree_cursor_next(&c, &r) == Am && r.start == 15, "%s: a store elsewhere: Am next", how);
	vml_rcu_read_unlock();

	/* A merge of A1, Am, A3 into one range [10, 20). */
	vml_rcu_read_lock();
	rtree_cursor_set(&c, &t, 0);
	rtree_cursor_next(&c, NULL);
	rtree_txn_begin(&tx, &t);
	rtree_txn_store(&tx, 10, 20, M);
	rtree_txn_commit(&tx);
	e = rtree_cursor_next(&c, &r);
	if (rewalk)
		ok(e == N && r.start == 30 && c.addr == 40,
		   "rewalk: after a merge the cursor lands in the merged range and skips to N "
		   "([15, 20) never returned)");
	else
		ok(e == Am && r.start == 15, "snapshot: after a merge the cursor goes on in its "
		   "snapshot (Am)");
	vml_rcu_read_unlock();

	/* The range the cursor returned last is gone: the re-walk continues from its end. */
	vml_rcu_read_lock();
	rtree_cursor_set(&c, &t, 0);
	ok(rtree_cursor_next(&c, NULL) == M && c.addr == 20, "%s: cursor at M's end", how);
	rtree_txn_begin(&tx, &t);
	rtree_txn_store(&tx, 10, 20, NULL);
	rtree_txn_store(&tx, 20, 25, A1);
	rtree_txn_commit(&tx);
	e = rtree_cursor_next(&c, &r);
	ok(e == (rewalk ? A1 : N), "%s: M erased, [20, 25) stored: next is %s", how,
	   rewalk ? "the new range (from 20 on)" : "N (snapshot)");
	vml_rcu_read_unlock();

	vml_rcu_barrier();
	rtree_destroy(&t);
}

int main(void)
{
	const char *bulk = getenv("VML_RTREE_BULK");
	unsigned long n = bulk && *bulk ? strtoul(bulk, NULL, 0) : 1000000;
#ifdef __SANITIZE_ADDRESS__
	/* A million allocator round trips through call_rcu take a minute under ASan. */
	const unsigned long per_txn_div = 5;
#else
	const unsigned long per_txn_div = 1;
#endif
	const uint64_t seed = 20240611;
	struct model m = { 0 };
	struct rtree t;
	static const struct phase small = {
		.name = "small space", .txns = 3000, .max_stores = 4, .space = 512,
		.max_len = 24, .big_len = 200, .erase_pct = 25, .big_pct = 10, .abort_pct = 15,
		.every_addr = true,
	};
	static const struct phase large = {
		.name = "large space", .txns = 1500, .max_stores = 12, .space = 1UL << 22,
		.max_len = 256, .big_len = 1UL << 16, .erase_pct = 10, .big_pct = 3,
		.abort_pct = 10,
	};
	static const struct phase drain = {
		.name = "grow then drain", .txns = 1200, .max_stores = 16, .space = 1UL << 24,
		.max_len = 64, .big_len = 1UL << 18, .erase_pct = 0, .big_pct = 0,
		.abort_pct = 10,
	};

	tap_diag("seed %llu", (unsigned long long)seed);
	test_empty_and_invalid();
	test_semantics();
	test_rewalk(false);
	test_rewalk(true);

	rtree_init(&t);
	run_phase(&t, &m, &small, seed, false);
	run_phase(&t, &m, &large, seed + 1, false);
	rtree_destroy(&t);
	model_free(&m);

	rtree_init(&t);
	run_phase(&t, &m, &drain, seed + 2, true);
	rtree_destroy(&t);
	model_free(&m);

	if (n)
		test_bulk(n, n / per_txn_div, seed);

	vml_rcu_barrier();	/* let replaced nodes be freed before the leak check */
	return tap_done();
}
