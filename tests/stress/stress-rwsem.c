// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stress test for the mmap_lock rwsem: readers of every kind (plain,
 * nosteal, killable with a token another thread fires at random, killable
 * with deadlines, trylock) and writers (some downgrading, some killable)
 * hammer one lock, under each steal policy in turn.
 *
 * Checked continuously inside the critical sections: a writer is alone
 * (no reader, no other writer), readers never overlap a writer, and the
 * plain (non-atomic) data the lock protects is never seen half-updated;
 * under ThreadSanitizer those plain accesses also check that the lock
 * orders its holders. Checked after join: the lock is idle with nobody
 * queued, the lock's counters agree with what the threads counted.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "sync/atomic.h"
#include "sync/rwsem.h"
#include "tap.h"
#include "util/clock.h"
#include "util/rand.h"

enum { NR_READERS = 5, NR_WRITERS = 3 };

enum reader_kind { R_PLAIN, R_NOSTEAL, R_KILL_TOKEN, R_KILL_DEADLINE, R_TRYLOCK };

struct shared {
	struct rwsem sem;
	_Atomic int readers_in;		/* seq_cst: a Dekker check against writers_in */
	_Atomic int writers_in;
	uint64_t data_a, data_b;	/* [sem] plain on purpose: equal outside writers */
	_Atomic int stop;
	_Atomic uint64_t failures;
	uint64_t seed;
};

struct thread {
	pthread_t tid;
	struct shared *sh;
	unsigned int id;
	int kind;
	struct vml_cancel cancel;	/* fired at random by the killer thread */
	/* counted by the thread, compared with the lock's stats after join */
	uint64_t reads, writes, downgrades, killed, trylock_fail;
};

static void fail(struct shared *sh, const char *what)
{
	if (fetch_add_relaxed(&sh->failures, 1) < 10)
		tap_diag("invariant broken: %s", what);
}

static void spin(struct vml_rand *r, unsigned int max)
{
	for (uint64_t i = vml_rand_below(r, max); i; i--)
		cpu_relax();
}

static void read_section(struct shared *sh, struct vml_rand *r)
{
	atomic_fetch_add(&sh->readers_in, 1);
	if (atomic_load(&sh->writers_in))
		fail(sh, "reader overlaps a writer");
	if (sh->data_a != sh->data_b)
		fail(sh, "reader saw a half-done write");
	spin(r, 200);
	if (sh->data_a != sh->data_b)
		fail(sh, "data changed under a reader");
	atomic_fetch_sub(&sh->readers_in, 1);
}

static void write_section(struct shared *sh, struct vml_rand *r)
{
	if (atomic_exchange(&sh->writers_in, 1) != 0)
		fail(sh, "two writers inside");
	if (atomic_load(&sh->readers_in))
		fail(sh, "writer overlaps a reader");
	sh->data_a++;
	spin(r, 200);
	sh->data_b++;
	atomic_store(&sh->writers_in, 0);
}

/* After an acquire: count a cancelled wait or a failed trylock. Return: is the lock held? */
static bool got_lock(struct thread *t, struct vml_rand *r, int ret)
{
	if (ret == -EINTR) {
		t->killed++;
		return false;
	}
	if (ret == -EBUSY) {
		t->trylock_fail++;
		spin(r, 500);
		return false;
	}
	return true;
}

static void *reader_fn(void *arg)
{
	struct thread *t = arg;
	struct shared *sh = t->sh;
	struct vml_rand r = vml_rand_init(sh->seed, t->id);
	int ret;

	while (!load_acquire(&sh->stop)) {
		switch (t->kind) {
		case R_PLAIN:
			down_read(&sh->sem);
			ret = 0;
			break;
		case R_NOSTEAL:
			down_read_nosteal(&sh->sem);
			ret = 0;
			break;
		case R_KILL_TOKEN:
			vml_cancel_init(&t->cancel, 0);
			ret = vml_rand_below(&r, 2) ?
			      down_read_killable(&sh->sem, &t->cancel) :
			      down_read_killable_nosteal(&sh->sem, &t->cancel);
			break;
		case R_KILL_DEADLINE:
			vml_cancel_init(&t->cancel, vml_now_ns() + vml_rand_below(&r, 300) * 1000);
			ret = down_read_killable(&sh->sem, &t->cancel);
			break;
		default:
			ret = down_read_trylock(&sh->sem) ? 0 : -EBUSY;
			break;
		}
		if (!got_lock(t, &r, ret))
			continue;
		t->reads++;
		read_section(sh, &r);
		/* The scanner pattern: drop and re-take when someone waits. */
		if (rwsem_is_contended(&sh->sem) && vml_rand_below(&r, 2)) {
			up_read(&sh->sem);
			down_read(&sh->sem);
			t->reads++;
			read_section(sh, &r);
		}
		up_read(&sh->sem);
		spin(&r, 1000);
	}
	return NULL;
}

static void *writer_fn(void *arg)
{
	struct thread *t = arg;
	struct shared *sh = t->sh;
	struct vml_rand r = vml_rand_init(sh->seed, 100 + t->id);
	int ret = 0;

	while (!load_acquire(&sh->stop)) {
		switch (vml_rand_below(&r, 4)) {
		case 0:
			vml_cancel_init(&t->cancel, vml_now_ns() + vml_rand_below(&r, 500) * 1000);
			ret = down_write_killable(&sh->sem, &t->cancel);
			break;
		case 1:
			ret = down_write_trylock(&sh->sem) ? 0 : -EBUSY;
			break;
		default:
			down_write(&sh->sem);
			ret = 0;
			break;
		}
		if (!got_lock(t, &r, ret))
			continue;
		t->writes++;
		if (!rwsem_is_write_locked_by_me(&sh->sem))
			fail(sh, "writer does not own the lock");
		write_section(sh, &r);
		if (t->kind && vml_rand_below(&r, 2)) {
			downgrade_write(&sh->sem);
			t->downgrades++;
			read_section(sh, &r);
			up_read(&sh->sem);
		} else {
			up_write(&sh->sem);
		}
		spin(&r, 3000);
	}
	return NULL;
}

/* Fires the killable readers' tokens at random moments. */
static void *killer_fn(void *arg)
{
	struct thread *t = arg;
	struct thread *victims = t - NR_READERS;	/* the readers precede us */
	struct shared *sh = t->sh;
	struct vml_rand r = vml_rand_init(sh->seed, 1000);
	struct timespec ts;

	while (!load_acquire(&sh->stop)) {
		ts = (struct timespec){ 0, (long)(50 + vml_rand_below(&r, 200)) * 1000 };
		nanosleep(&ts, NULL);
		for (int i = 0; i < NR_READERS; i++)
			if (victims[i].kind == R_KILL_TOKEN && vml_rand_below(&r, 2))
				vml_cancel_fire(&victims[i].cancel);
	}
	return NULL;
}

int main(void)
{
	static const char *const policy_name[] = { "kernel", "not-behind-writer", "never" };
	static const uint64_t handoffs[] = { 100 * NSEC_PER_USEC, NSEC_PER_MSEC, 4 * NSEC_PER_MSEC };
	static struct shared sh;
	struct thread th[NR_READERS + 1 + NR_WRITERS];
	double seconds = tap_stress_seconds(3);
	uint64_t reads = 0, writes = 0, downgrades = 0, killed = 0, trylock_fail = 0;
	struct rwsem_stats st;
	struct vml_rand r;
	int p, i;

	sh.seed = tap_seed();
	r = vml_rand_init(sh.seed, 4242);
	rwsem_init(&sh.sem, NULL);

	for (p = RWSEM_STEAL_KERNEL; p <= RWSEM_STEAL_NEVER; p++) {
		struct rwsem_config cfg = {
			.steal = p,
			.handoff_ns = handoffs[vml_rand_below(&r, ARRAY_SIZE(handoffs))],
		};
		struct timespec ts = vml_ns_to_timespec((uint64_t)(seconds / 3 * 1e9));

		rwsem_set_config(&sh.sem, &cfg);
		store_relaxed(&sh.stop, 0);
		memset(th, 0, sizeof(th));
		for (i = 0; i < (int)ARRAY_SIZE(th); i++) {
			th[i].sh = &sh;
			th[i].id = (unsigned int)(p * 100 + i);
			vml_cancel_init(&th[i].cancel, 0);
		}
		for (i = 0; i < NR_READERS; i++) {
			th[i].kind = i % 5;
			pthread_create(&th[i].tid, NULL, reader_fn, &th[i]);
		}
		pthread_create(&th[NR_READERS].tid, NULL, killer_fn, &th[NR_READERS]);
		for (i = NR_READERS + 1; i < (int)ARRAY_SIZE(th); i++) {
			th[i].kind = i % 2;	/* odd ones downgrade */
			pthread_create(&th[i].tid, NULL, writer_fn, &th[i]);
		}
		nanosleep(&ts, NULL);
		store_release(&sh.stop, 1);
		for (i = 0; i < (int)ARRAY_SIZE(th); i++) {
			pthread_join(th[i].tid, NULL);
			reads += th[i].reads;
			writes += th[i].writes;
			downgrades += th[i].downgrades;
			killed += th[i].killed;
			trylock_fail += th[i].trylock_fail;
		}
		rwsem_stats_read(&sh.sem, &st);
		tap_diag("%s (hand-off %.1f ms): %" PRIu64 " reads, %" PRIu64 " writes, %" PRIu64
			 " steals, %" PRIu64 " hand-offs, %" PRIu64 " killed so far",
			 policy_name[p], cfg.handoff_ns / 1e6, reads, writes, st.read_steal,
			 st.handoff, st.killed);
		is_hex(load_acquire(&sh.sem.count), 0, "%s: lock idle after join", policy_name[p]);
		ok(!rwsem_is_contended(&sh.sem) && list_empty(&sh.sem.wait_list),
		   "%s: nobody left queued", policy_name[p]);
	}

	rwsem_stats_read(&sh.sem, &st);
	is_int(load_relaxed(&sh.failures), 0, "no invariant broken inside critical sections");
	is_int(sh.data_a, writes, "every write happened exactly once (data_a)");
	is_int(sh.data_b, writes, "every write happened exactly once (data_b)");
	is_int(st.read_fast + st.read_slow, reads, "stats: read acquisitions match the threads'");
	is_int(st.write_fast + st.write_slow, writes, "stats: write acquisitions match");
	is_int(st.killed, killed, "stats: killed acquires match (%" PRIu64 ")", killed);
	is_int(st.trylock_fail, trylock_fail, "stats: failed trylocks match");
	ok(st.read_steal <= st.read_slow && st.write_spin <= st.write_slow, "stats: subsets");
	ok(killed > 0, "some killable acquires were cancelled");
	ok(downgrades > 0, "some writers downgraded");
	rwsem_destroy(&sh.sem);
	return tap_done();
}
