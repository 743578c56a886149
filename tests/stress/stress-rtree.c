// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stress test of the range tree under RCU: reader threads, inside
 * vml_rcu_read_lock(), walk the whole tree with a cursor (both ways), do
 * random finds, and walk from random places, while a writer runs random
 * multi-store transactions (split, merge, insert, erase, munmap-like hole
 * punches and mprotect-like overwrites that trim their neighbours) and
 * hands removed objects to vml_call_rcu, whose callback poisons them before
 * freeing them.
 *
 * Every object records the range it was stored at, and the writer never
 * commits a tree in which an object's range was trimmed (it re-stores the
 * remnants with new objects in the same transaction). A "header" entry at
 * [0, 1) holds the number of ranges, the sum of their lengths and a hash of
 * (start, end, id) over all of them, rewritten by every transaction. So a
 * reader proves on each snapshot that it is
 *   - sorted and non-overlapping, every range non-empty,
 *   - made of live objects (magic not poisoned: nothing freed too early),
 *   - consistent with the objects (range == object's range),
 *   - atomic: count, length sum and hash equal the header of the same
 *     snapshot (a torn transaction would mix two generations).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>	/* before tap.h, which uses clock_gettime without it */

#include "sync/atomic.h"
#include "sync/rcu.h"
#include "tap.h"
#include "tree/rtree.h"
#include "util/clock.h"
#include "util/compiler.h"
#include "util/rand.h"

#define NR_READERS 2
#define PAGE       0x1000UL
#define BASE       (16 * PAGE)		/* ranges live in [BASE, LIMIT) */
#define LIMIT      (BASE + (1UL << 26))
#define TARGET     3000			/* the writer steers the range count around this */
#define MAX_TOUCH  64			/* ranges one punch may cover */

#define OBJ_LIVE 0x6c697665c0ffee01UL
#define OBJ_DEAD 0xdeadbeefdeadbeefUL

struct obj {
	unsigned long magic;		/* OBJ_LIVE; OBJ_DEAD just before free */
	unsigned long start, end;	/* immutable: where it was stored */
	uint64_t id;
	/* header only: the totals of the snapshot it heads */
	unsigned long count, sum;
	uint64_t hash;
	struct vml_rcu_head rcu;
};

static struct rtree tree;
static _Atomic bool stop;

static uint64_t mix(unsigned long start, unsigned long end, uint64_t id)
{
	uint64_t z = start * 0x9e3779b97f4a7c15ULL ^ end * 0xc2b2ae3d27d4eb4fULL ^ id;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ---------------------------------------------------------------------- */
/* Failure reporting from any thread: count, and keep the first message. */

static _Atomic unsigned long failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static char first_failure[256];

__attribute__((format(printf, 1, 2)))
static void fail(const char *fmt, ...)
{
	va_list ap;

	if (fetch_add_relaxed(&failures, 1) == 0) {
		pthread_mutex_lock(&fail_lock);
		va_start(ap, fmt);
		vsnprintf(first_failure, sizeof(first_failure), fmt, ap);
		va_end(ap);
		pthread_mutex_unlock(&fail_lock);
	}
}

/* ---------------------------------------------------------------------- */
/* Readers */

struct reader {
	pthread_t thread;
	int index;
	uint64_t seed;
	unsigned long walks, finds, ranges;
};

static bool check_obj(const struct rtree_range *r, const char *what)
{
	const struct obj *o = r->entry;

	if (o->magic != OBJ_LIVE) {
		fail("%s: object %p at [%#lx, %#lx) is not live (magic %#lx)", what, (void *)o,
		     r->start, r->end, o->magic);
		return false;
	}
	if (o->start != r->start || o->end != r->end) {
		fail("%s: range [%#lx, %#lx) holds object of [%#lx, %#lx)", what, r->start, r->end,
		     o->start, o->end);
		return false;
	}
	return true;
}

/* One snapshot, walked forwards or backwards, against its own header. */
static void walk_snapshot(struct reader *rd, bool forward)
{
	struct rtree_cursor c;
	struct rtree_range r, hdr_r = { 0 };
	const struct obj *hdr = NULL;
	unsigned long count = 0, sum = 0, bound = forward ? 0 : ULONG_MAX;
	uint64_t hash = 0;
	bool first = true;

	rtree_cursor_set(&c, &tree, forward ? 0 : ULONG_MAX);
	while (forward ? rtree_cursor_next(&c, &r) : rtree_cursor_prev(&c, &r)) {
		if (r.start >= r.end || (forward ? r.start < bound : (!first && r.end > bound))) {
			fail("walk %s: [%#lx, %#lx) out of order after %#lx",
			     forward ? "forward" : "backward", r.start, r.end, bound);
			return;
		}
		bound = forward ? r.end : r.start;
		first = false;
		if (!check_obj(&r, "walk"))
			return;
		if (r.start == 0) {
			hdr = r.entry;
			hdr_r = r;
			continue;
		}
		count++;
		sum += r.end - r.start;
		hash += mix(r.start, r.end, ((const struct obj *)r.entry)->id);
	}
	rd->walks++;
	rd->ranges += count;
	if (!hdr || hdr_r.end != 1) {
		fail("walk: no header in the snapshot");
		return;
	}
	if (hdr->count != count || hdr->sum != sum || hdr->hash != hash)
		fail("walk %s: torn snapshot: header says %lu ranges / %#lx bytes / hash %#llx, "
		     "walk saw %lu / %#lx / %#llx", forward ? "forward" : "backward", hdr->count,
		     hdr->sum, (unsigned long long)hdr->hash, count, sum, (unsigned long long)hash);
}

static void random_finds(struct reader *rd, struct vml_rand *rnd)
{
	struct rtree_range r;

	for (int k = 0; k < 32; k++) {
		unsigned long addr = BASE + vml_rand_below(rnd, LIMIT - BASE);

		if (rtree_find(&tree, addr, &r) && (r.start > addr || r.end <= addr ||
						    !check_obj(&r, "find")))
			fail("find(%#lx) returned [%#lx, %#lx)", addr, r.start, r.end);
		if (rtree_find_next(&tree, addr, &r) && (r.end <= addr || !check_obj(&r, "next")))
			fail("find_next(%#lx) returned [%#lx, %#lx)", addr, r.start, r.end);
		if (!rtree_find_prev(&tree, addr, &r) || r.start >= addr || !check_obj(&r, "prev"))
			fail("find_prev(%#lx): the header at least must be found", addr);
		rd->finds += 3;
	}
}

/* From a random address, a random mix of next and prev steps. */
static void random_steps(struct vml_rand *rnd)
{
	struct rtree_cursor c;
	struct rtree_range r;
	unsigned long addr = BASE + vml_rand_below(rnd, LIMIT - BASE);

	rtree_cursor_set(&c, &tree, addr);
	for (int k = 0; k < 32; k++) {
		if (vml_rand_below(rnd, 2)) {
			if (!rtree_cursor_next(&c, &r))
				continue;
			if (r.end <= addr || !check_obj(&r, "step next"))
				fail("cursor next from %#lx: [%#lx, %#lx)", addr, r.start, r.end);
			addr = r.end;
		} else {
			if (!rtree_cursor_prev(&c, &r))
				continue;
			if (r.start >= addr || !check_obj(&r, "step prev"))
				fail("cursor prev from %#lx: [%#lx, %#lx)", addr, r.start, r.end);
			addr = r.start;
		}
	}
}

static void *reader_fn(void *arg)
{
	struct reader *rd = arg;
	struct vml_rand rnd = vml_rand_init(rd->seed, 100 + (uint64_t)rd->index);

	while (!load_acquire(&stop)) {
		unsigned int kind = (unsigned int)vml_rand_below(&rnd, 4);

		vml_rcu_read_lock();
		if (kind == 0)
			walk_snapshot(rd, true);
		else if (kind == 1)
			walk_snapshot(rd, false);
		else if (kind == 2)
			random_finds(rd, &rnd);
		else
			random_steps(&rnd);
		vml_rcu_read_unlock();
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* The writer */

struct writer {
	struct rtree_txn tx;
	struct vml_rand rnd;
	uint64_t next_id;
	struct obj *header;
	/* committed totals, and the transaction's working ones */
	unsigned long count, sum, tcount, tsum;
	uint64_t hash, thash;
	struct obj *created[4 * MAX_TOUCH + 16];
	struct obj *retired[4 * MAX_TOUCH + 16];
	unsigned int ncreated, nretired;
	unsigned long txns, aborts, stores;
};

static void obj_free_rcu(struct vml_rcu_head *head)
{
	struct obj *o = container_of(head, struct obj, rcu);

	o->magic = OBJ_DEAD;	/* a reader that still sees it fails loudly */
	free(o);
}

static struct obj *obj_new(struct writer *w, unsigned long start, unsigned long end)
{
	struct obj *o = calloc(1, sizeof(*o));

	if (!o)
		abort();
	o->magic = OBJ_LIVE;
	o->start = start;
	o->end = end;
	o->id = ++w->next_id;
	VML_BUG_ON(w->ncreated >= ARRAY_SIZE(w->created));
	w->created[w->ncreated++] = o;
	if (start) {
		w->tcount++;
		w->tsum += end - start;
		w->thash += mix(start, end, o->id);
	}
	return o;
}

/* @o's range is wholly overwritten in this transaction. */
static void obj_retire(struct writer *w, struct obj *o)
{
	VML_BUG_ON(w->nretired >= ARRAY_SIZE(w->retired));
	w->retired[w->nretired++] = o;
	if (o->start) {
		w->tcount--;
		w->tsum -= o->end - o->start;
		w->thash -= mix(o->start, o->end, o->id);
	}
}

static void store(struct writer *w, unsigned long start, unsigned long end, struct obj *o)
{
	VML_BUG_ON(rtree_txn_store(&w->tx, start, end, o));
	w->stores++;
}

static unsigned long rand_page(struct writer *w, unsigned long lo, unsigned long hi)
{
	return lo + vml_rand_below(&w->rnd, (hi - lo) / PAGE) * PAGE;
}

/* A range of the working tree near a random address (not the header), or false. */
static bool pick(struct writer *w, struct rtree_range *r)
{
	return rtree_txn_find_next(&w->tx, rand_page(w, BASE, LIMIT), r) ||
	       rtree_txn_find_next(&w->tx, BASE, r);
}

/* __split_vma: one range becomes two. */
static void op_split(struct writer *w)
{
	struct rtree_range r;
	unsigned long mid;

	if (!pick(w, &r) || r.end - r.start < 2 * PAGE)
		return;
	mid = rand_page(w, r.start + PAGE, r.end);
	store(w, r.start, mid, obj_new(w, r.start, mid));	/* trims r */
	store(w, mid, r.end, obj_new(w, mid, r.end));		/* overwrites the rest */
	obj_retire(w, r.entry);
}

/* vma_merge: a range and the next one (and the gap between) become one. */
static void op_merge(struct writer *w)
{
	struct rtree_range a, b;

	if (!pick(w, &a) || !rtree_txn_find_next(&w->tx, a.end, &b))
		return;
	store(w, a.start, b.end, obj_new(w, a.start, b.end));
	obj_retire(w, a.entry);
	obj_retire(w, b.entry);
}

/* mmap into a gap. */
static void op_insert(struct writer *w)
{
	unsigned long addr = rand_page(w, BASE, LIMIT), lo, hi, s, e;
	struct rtree_range r;

	if (rtree_txn_find(&w->tx, addr, NULL))
		return;
	lo = rtree_txn_find_prev(&w->tx, addr, &r) && r.end > BASE ? r.end : BASE;
	hi = rtree_txn_find_next(&w->tx, addr, &r) ? r.start : LIMIT;
	s = vml_rand_below(&w->rnd, 8) * PAGE;	/* (VML_MIN evaluates twice) */
	e = vml_rand_below(&w->rnd, 8) * PAGE;
	s = addr - VML_MIN(addr - lo, s);
	e = addr + PAGE + VML_MIN(hi - addr - PAGE, e);
	store(w, s, e, obj_new(w, s, e));
}

/* munmap of one whole range. */
static void op_erase(struct writer *w)
{
	struct rtree_range r;

	if (!pick(w, &r))
		return;
	store(w, r.start, r.end, NULL);
	obj_retire(w, r.entry);
}

/*
 * munmap (with = false) or mprotect (with = true) of [a, b): the store trims
 * the ranges straddling a and b; their remnants then get new objects.
 */
static void op_punch(struct writer *w, bool with)
{
	unsigned long a = rand_page(w, BASE, LIMIT - PAGE);
	unsigned long b = a + PAGE * (1 + vml_rand_below(&w->rnd, 64));
	struct rtree_range touched[MAX_TOUCH], r;
	unsigned int n = 0;

	if (b > LIMIT)
		b = LIMIT;
	for (unsigned long x = a; n < MAX_TOUCH && rtree_txn_find_next(&w->tx, x, &r) &&
	     r.start < b; x = r.end)
		touched[n++] = r;
	if (n == MAX_TOUCH && touched[n - 1].end < b)
		b = touched[n - 1].end;	/* cover no more than we collected */
	store(w, a, b, with ? obj_new(w, a, b) : NULL);
	for (unsigned int i = 0; i < n; i++) {
		r = touched[i];
		if (r.start < a)
			store(w, r.start, a, obj_new(w, r.start, a));
		if (r.end > b)
			store(w, b, r.end, obj_new(w, b, r.end));
		obj_retire(w, r.entry);
	}
}

static void writer_txn(struct writer *w)
{
	unsigned int ops = 1 + (unsigned int)vml_rand_below(&w->rnd, 3);
	bool grow = w->count < TARGET;
	struct obj *hdr;

	w->ncreated = w->nretired = 0;
	w->tcount = w->count;
	w->tsum = w->sum;
	w->thash = w->hash;
	rtree_txn_begin(&w->tx, &tree);
	for (unsigned int i = 0; i < ops; i++) {
		unsigned int k = (unsigned int)vml_rand_below(&w->rnd, 100);

		if (k < (grow ? 45u : 15u))
			op_split(w);
		else if (k < (grow ? 50u : 40u))
			op_merge(w);
		else if (k < (grow ? 90u : 55u))
			op_insert(w);
		else if (k < (grow ? 92u : 75u))
			op_erase(w);
		else
			op_punch(w, k & 1);
	}
	/* The header of the new snapshot. */
	hdr = obj_new(w, 0, 1);
	hdr->count = w->tcount;
	hdr->sum = w->tsum;
	hdr->hash = w->thash;
	store(w, 0, 1, hdr);
	obj_retire(w, w->header);
	VML_BUG_ON(w->tx.count != w->tcount + 1);	/* + the header */
	if (vml_rand_below(&w->rnd, 100) < 5) {
		/* Never published: free at once. */
		rtree_txn_abort(&w->tx);
		for (unsigned int i = 0; i < w->ncreated; i++)
			free(w->created[i]);
		w->aborts++;
		return;
	}
	rtree_txn_commit(&w->tx);
	w->header = hdr;
	w->count = w->tcount;
	w->sum = w->tsum;
	w->hash = w->thash;
	/* After the commit: readers of the old snapshot finish before the free. */
	for (unsigned int i = 0; i < w->nretired; i++)
		vml_call_rcu(&w->retired[i]->rcu, obj_free_rcu);
	w->txns++;
}

/* The writer's first transaction: the header and a few ranges. */
static void writer_init(struct writer *w)
{
	w->ncreated = w->nretired = 0;
	rtree_txn_begin(&w->tx, &tree);
	for (unsigned long i = 0; i < 64; i++) {
		unsigned long s = BASE + i * 64 * PAGE, e = s + 8 * PAGE;

		store(w, s, e, obj_new(w, s, e));
	}
	w->header = obj_new(w, 0, 1);
	w->header->count = w->count = w->tcount;
	w->header->sum = w->sum = w->tsum;
	w->header->hash = w->hash = w->thash;
	store(w, 0, 1, w->header);
	rtree_txn_commit(&w->tx);
}

int main(void)
{
	uint64_t seed = tap_seed();
	double seconds = tap_stress_seconds(3);
	struct reader readers[NR_READERS];
	struct writer w = { 0 };
	struct rtree_cursor c;
	struct rtree_range r;
	unsigned long walks = 0, finds = 0, ranges = 0, count = 0, sum = 0;
	uint64_t hash = 0, t_end;
	int i;

	rtree_init(&tree);
	w.rnd = vml_rand_init(seed, 1);
	writer_init(&w);

	for (i = 0; i < NR_READERS; i++) {
		readers[i] = (struct reader){ .index = i, .seed = seed };
		VML_BUG_ON(pthread_create(&readers[i].thread, NULL, reader_fn, &readers[i]));
	}
	t_end = vml_now_ns() + (uint64_t)(seconds * 1e9);
	while (vml_now_ns() < t_end && !load_relaxed(&failures))
		for (int k = 0; k < 64; k++)
			writer_txn(&w);
	store_release(&stop, true);
	for (i = 0; i < NR_READERS; i++) {
		pthread_join(readers[i].thread, NULL);
		walks += readers[i].walks;
		finds += readers[i].finds;
		ranges += readers[i].ranges;
	}

	tap_diag("writer: %lu transactions committed, %lu aborted, %lu stores; %zu ranges at the end",
		 w.txns, w.aborts, w.stores, rtree_count(&tree));
	tap_diag("readers: %lu snapshot walks (%.0f ranges each), %lu finds", walks,
		 walks ? (double)ranges / (double)walks : 0.0, finds);
	if (load_relaxed(&failures))
		tap_diag("first failure: %s", first_failure);
	is_int(load_relaxed(&failures), 0, "readers saw only sorted, live, atomic snapshots");
	ok(w.txns > 0 && walks > 0 && finds > 0, "both sides made progress");
	is_int(rtree_validate(&tree), 0, "the final tree validates");

	/* The final tree against the writer's totals, then free every object in it. */
	rtree_cursor_set(&c, &tree, 0);
	while (rtree_cursor_next(&c, &r)) {
		struct obj *o = r.entry;

		if (o->start != r.start || o->end != r.end || o->magic != OBJ_LIVE)
			fail("final walk: [%#lx, %#lx) has object [%#lx, %#lx)", r.start, r.end,
			     o->start, o->end);
		if (r.start) {
			count++;
			sum += r.end - r.start;
			hash += mix(r.start, r.end, o->id);
		}
	}
	ok(count == w.count && sum == w.sum && hash == w.hash && count + 1 == rtree_count(&tree),
	   "the final tree holds what the writer committed (%lu ranges)", count);
	rtree_cursor_set(&c, &tree, 0);
	while (rtree_cursor_next(&c, &r))
		free(r.entry);
	rtree_destroy(&tree);
	vml_rcu_barrier();	/* every retired object and node freed before the leak check */
	return tap_done();
}
