// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stress test for the RCU facade: readers walk a sorted RCU-protected list
 * while writers replace, unlink and insert nodes and reclaim the old ones
 * after a grace period, either with vml_call_rcu (whose first-stage
 * callback takes a read lock itself and chains a second vml_call_rcu from
 * liburcu's callback thread) or with vml_synchronize_rcu. Short-lived
 * reader threads come and go, so registration and the unregistration at
 * thread exit are exercised too.
 *
 * Use-after-free is detected without ASan: reclaim poisons a node's magic
 * before freeing it, and readers check the magic, the key order and a
 * key/version checksum on every node they visit. Under ThreadSanitizer
 * the plain accesses to node fields check the facade's grace-period
 * annotations (tests/tsan.supp holds only the two liburcu lines).
 */
#include <pthread.h>
#include <time.h>

#include "sync/atomic.h"
#include "sync/rcu.h"
#include "tap.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/compiler.h"
#include "util/rand.h"

enum { NR_KEYS = 64, NR_READERS = 3, NR_WRITERS = 2 };

#define NODE_LIVE 0x4c4956454e4f4445ULL		/* "LIVENODE" */
#define NODE_DEAD 0xdeaddeaddeaddeadULL
#define CHECK_MUL 1000003ULL

struct node {
	uint64_t pad[2];		/* the allocator may reuse the first words when freed */
	uint64_t magic;			/* NODE_LIVE until reclaimed */
	uint64_t key;			/* immutable after publication */
	uint64_t version;
	uint64_t check;			/* key * CHECK_MUL + version */
	_Atomic(struct node *) next;	/* [rcu] written under list_lock */
	struct vml_rcu_head rcu;
};

static struct {
	_Atomic(struct node *) head;	/* [rcu] sorted by key */
	pthread_mutex_t list_lock;	/* serialises writers */
	_Atomic int stop;
	_Atomic uint64_t failures;
	_Atomic uint64_t allocated, freed, reads, visits, chained, cb_reads;
	uint64_t seed;
} g = { .list_lock = PTHREAD_MUTEX_INITIALIZER };

static void fail(const char *what)
{
	if (fetch_add_relaxed(&g.failures, 1) < 10)
		tap_diag("invariant broken: %s", what);
}

static struct node *node_new(uint64_t key, uint64_t version)
{
	struct node *n = vml_zalloc(sizeof(*n));

	VML_BUG_ON(!n);
	n->magic = NODE_LIVE;
	n->key = key;
	n->version = version;
	n->check = key * CHECK_MUL + version;
	fetch_add_relaxed(&g.allocated, 1);
	return n;
}

static void node_free(struct node *n)
{
	if (n->magic != NODE_LIVE)
		fail("node reclaimed twice");
	n->magic = NODE_DEAD;
	n->check = ~0ULL;
	vml_free(n);
	fetch_add_relaxed(&g.freed, 1);
}

/*
 * Walk the whole list once, checking every node.
 * Context: RCU read lock held.
 */
static unsigned int walk(void)
{
	struct node *n;
	uint64_t prev = 0;
	unsigned int seen = 0;

	if (!vml_rcu_read_held())
		fail("walk outside a read-side section");
	for (n = vml_rcu_dereference(g.head); n; n = vml_rcu_dereference(n->next)) {
		if (n->magic != NODE_LIVE) {
			fail("reader reached a reclaimed node");
			break;
		}
		if (seen && n->key <= prev)
			fail("keys out of order");
		if (n->check != n->key * CHECK_MUL + n->version)
			fail("node checksum");
		if (n->key >= NR_KEYS)
			fail("bad key");
		prev = n->key;
		if (++seen > NR_KEYS) {
			fail("list longer than the key space (a cycle?)");
			break;
		}
	}
	return seen;
}

static void read_once(struct vml_rand *r)
{
	unsigned int seen;

	vml_rcu_read_lock();
	if (vml_rand_below(r, 4) == 0) {
		vml_rcu_read_lock();		/* nesting */
		seen = walk();
		vml_rcu_read_unlock();
		if (!vml_rcu_read_held())
			fail("nesting lost the outer section");
	}
	seen = walk();
	vml_rcu_read_unlock();
	fetch_add_relaxed(&g.reads, 1);
	fetch_add_relaxed(&g.visits, seen);
}

static void *reader_fn(void *arg)
{
	struct vml_rand r = vml_rand_init(g.seed, (uintptr_t)arg);

	while (!load_acquire(&g.stop))
		read_once(&r);
	if (vml_rcu_read_held())
		fail("read lock leaked");
	return NULL;
}

/* A thread that lives for a few read-side sections, then exits (unregisters). */
static void *short_reader_fn(void *arg)
{
	struct vml_rand r = vml_rand_init(g.seed, (uintptr_t)arg);

	for (int i = 0; i < 20; i++)
		read_once(&r);
	return NULL;
}

/* Second stage: runs a grace period after the first, frees the node. */
static void reclaim_stage2(struct vml_rcu_head *h)
{
	node_free(container_of(h, struct node, rcu));
}

/*
 * First stage, on liburcu's callback thread: the node is unreachable. Check
 * the facade works from here (read lock, call_rcu), then chain the free.
 */
static void reclaim_stage1(struct vml_rcu_head *h)
{
	struct node *n = container_of(h, struct node, rcu);

	if (n->magic != NODE_LIVE)
		fail("callback got a reclaimed node");
	if (n->key % 4 == 0) {
		vml_rcu_read_lock();
		walk();
		vml_rcu_read_unlock();
		fetch_add_relaxed(&g.cb_reads, 1);
	}
	if (n->key % 2 == 0) {
		fetch_add_relaxed(&g.chained, 1);
		vml_call_rcu(&n->rcu, reclaim_stage2);
	} else {
		node_free(n);
	}
}

/*
 * One update; the old node (if any) is returned for reclaim.
 * Context: list_lock held.
 */
static struct node *update(struct vml_rand *r)
{
	uint64_t key = vml_rand_below(r, NR_KEYS);
	_Atomic(struct node *) *link = &g.head;
	struct node *cur, *n;

	while ((cur = load_relaxed(link)) && cur->key < key)
		link = &cur->next;
	if (cur && cur->key == key) {
		if (vml_rand_below(r, 2)) {
			/* Replace with a new version: copy, then publish. */
			n = node_new(key, cur->version + 1);
			store_relaxed(&n->next, load_relaxed(&cur->next));
			vml_rcu_assign_pointer(*link, n);
		} else {
			/* Unlink; readers on @cur still see its next. */
			vml_rcu_assign_pointer(*link, load_relaxed(&cur->next));
		}
		return cur;
	}
	n = node_new(key, 0);
	store_relaxed(&n->next, cur);
	vml_rcu_assign_pointer(*link, n);
	return NULL;
}

static void *writer_fn(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	struct vml_rand r = vml_rand_init(g.seed, 100 + id);
	struct node *old;

	while (!load_acquire(&g.stop)) {
		pthread_mutex_lock(&g.list_lock);
		old = update(&r);
		pthread_mutex_unlock(&g.list_lock);
		if (!old)
			continue;
		/* Writer 0 mostly defers, writer 1 mostly waits. */
		if (vml_rand_below(&r, 8) < (id == 0 ? 7u : 1u)) {
			vml_call_rcu(&old->rcu, reclaim_stage1);
		} else {
			vml_synchronize_rcu();
			node_free(old);
		}
		if (vml_rand_below(&r, 16) == 0) {
			struct timespec ts = { 0, 20 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

int main(void)
{
	pthread_t readers[NR_READERS], writers[NR_WRITERS], shorty;
	const struct timespec pause = { 0, 5 * 1000 * 1000 };
	double seconds = tap_stress_seconds(3);
	uint64_t end, spawned = 0;
	struct node *n, *next;
	int i, rounds;

	g.seed = tap_seed();
	for (i = NR_KEYS - 2; i >= 0; i -= 2) {
		n = node_new((uint64_t)i, 0);
		store_relaxed(&n->next, load_relaxed(&g.head));
		vml_rcu_assign_pointer(g.head, n);
	}
	for (i = 0; i < NR_READERS; i++)
		pthread_create(&readers[i], NULL, reader_fn, (void *)(uintptr_t)i);
	for (i = 0; i < NR_WRITERS; i++)
		pthread_create(&writers[i], NULL, writer_fn, (void *)(uintptr_t)i);

	end = vml_now_ns() + (uint64_t)(seconds * 1e9);
	while (vml_now_ns() < end) {
		pthread_create(&shorty, NULL, short_reader_fn, (void *)(uintptr_t)(1000 + spawned));
		pthread_join(shorty, NULL);
		spawned++;
		nanosleep(&pause, NULL);
	}
	store_release(&g.stop, 1);
	for (i = 0; i < NR_READERS; i++)
		pthread_join(readers[i], NULL);
	for (i = 0; i < NR_WRITERS; i++)
		pthread_join(writers[i], NULL);

	/* Tear down: unlink everything, defer the frees, wait for the chains. */
	pthread_mutex_lock(&g.list_lock);
	n = load_relaxed(&g.head);
	vml_rcu_assign_pointer(g.head, NULL);
	pthread_mutex_unlock(&g.list_lock);
	for (; n; n = next) {
		next = load_relaxed(&n->next);
		vml_call_rcu(&n->rcu, reclaim_stage1);
	}
	for (rounds = 0; rounds < 10 && load_relaxed(&g.freed) != load_relaxed(&g.allocated);
	     rounds++)
		vml_rcu_barrier();

	tap_diag("%" PRIu64 " walks (%" PRIu64 " nodes), %" PRIu64 " nodes allocated, %" PRIu64
		 " chained callbacks, %" PRIu64 " walks from callbacks, %" PRIu64
		 " short-lived readers, %d barrier rounds",
		 load_relaxed(&g.reads), load_relaxed(&g.visits), load_relaxed(&g.allocated),
		 load_relaxed(&g.chained), load_relaxed(&g.cb_reads), spawned, rounds);
	is_int(load_relaxed(&g.failures), 0, "readers never saw a reclaimed or torn node");
	is_int(load_relaxed(&g.freed), load_relaxed(&g.allocated),
	       "every node was reclaimed exactly once after rcu_barrier");
	ok(load_relaxed(&g.reads) > 0 && load_relaxed(&g.allocated) > NR_KEYS,
	   "readers and writers made progress");
	ok(load_relaxed(&g.chained) > 0, "callbacks queued callbacks");
	ok(!vml_rcu_read_held(), "main holds no read lock");
	return tap_done();
}
