// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-sim.c - the simulated machine (platform/sim.h): virtual time, the
 * scheduler's shares and placement, futexes, RCU, the mmap_lock on it, and
 * that the same seed gives the same run.
 */
#include <errno.h>
#include <string.h>

#include "platform/platform.h"
#include "platform/sim.h"
#include "sync/atomic.h"
#include "sync/futex.h"
#include "sync/rcu.h"
#include "sync/rwsem.h"
#include "tap.h"
#include "util/alloc.h"
#include "util/clock.h"

#define US NSEC_PER_USEC
#define MS NSEC_PER_MSEC

static struct sim_config config(unsigned int cpus, uint64_t seed)
{
	struct sim_config c = {
		.cpus = cpus,
		.seed = seed,
		.costs = {
			.ctxsw_ns = 2 * US,
			.wake_busy_ns = 5 * US,
			.idle_wake_ns = { 6 * US, 6 * US, 7 * US, 10 * US, 20 * US, 25 * US,
					  34 * US, 50 * US },
			.relax_ns = 50,
			.timer_slack_ns = 50 * US,
			.tick_ns = 4 * MS,
			.preempt = SIM_PREEMPT_NONE,
		},
	};
	return c;
}

/* ---- charges on separate CPUs overlap; on one CPU they add up ---- */

struct burner {
	uint64_t ns, chunk;
	enum plat_charge_kind kind;
	uint64_t end, cpu_ns;
};

static void *burn_main(void *arg)
{
	struct burner *b = arg;

	for (uint64_t done = 0; done < b->ns; done += b->chunk)
		plat_charge_ns(b->chunk, b->kind);
	b->end = plat_now_ns();
	b->cpu_ns = plat_thread_cpu_ns();
	return NULL;
}

struct pair {
	int cpu[2];
	int nice[2];
	struct burner b[2];
};

static void *pair_main(void *arg)
{
	struct pair *p = arg;
	struct plat_thread t[2];

	for (int i = 0; i < 2; i++) {
		struct plat_thread_opts o = { .cpu = p->cpu[i], .nice = p->nice[i], .name = "burn" };

		if (plat_thread_create(&t[i], &o, burn_main, &p->b[i]))
			return (void *)1;
	}
	for (int i = 0; i < 2; i++)
		plat_thread_join(&t[i]);
	return NULL;
}

static void test_overlap(void)
{
	struct sim_config c = config(2, 1);
	struct pair p = { .cpu = { 0, 1 },
			  .b = { { .ns = 10 * MS, .chunk = MS, .kind = PLAT_KERNEL }, { .ns = 10 * MS, .chunk = MS, .kind = PLAT_KERNEL } } };
	struct sim_stats st;

	is_int(sim_run(&c, pair_main, &p, &st), 0, "two CPUs: the machine runs");
	/* each ends 10 ms after it arrived: a wake-up (<= 50 us) plus its work */
	ok(p.b[0].end >= 10 * MS && p.b[0].end < 10 * MS + 200 * US &&
	   p.b[1].end >= 10 * MS && p.b[1].end < 10 * MS + 200 * US,
	   "two CPUs: 10 ms of work each ends after ~10 ms (%llu, %llu ns)",
	   (unsigned long long)p.b[0].end, (unsigned long long)p.b[1].end);
	is_int((int)(p.b[0].cpu_ns / US), 10000, "a task's CPU time is what it was charged");

	p = (struct pair){ .cpu = { 0, 0 },
			   .b = { { .ns = 10 * MS, .chunk = MS, .kind = PLAT_USER }, { .ns = 10 * MS, .chunk = MS, .kind = PLAT_USER } } };
	is_int(sim_run(&c, pair_main, &p, &st), 0, "one CPU: the machine runs");
	ok(VML_MAX(p.b[0].end, p.b[1].end) >= 20 * MS &&
	   VML_MAX(p.b[0].end, p.b[1].end) < 21 * MS,
	   "one CPU: the two tasks' 20 ms end after 20 ms and some switches (%llu ns)",
	   (unsigned long long)VML_MAX(p.b[0].end, p.b[1].end));
	ok(st.switches >= 2, "one CPU: the tasks took turns (%llu switches)",
	   (unsigned long long)st.switches);
}

/* ---- nice 15 against nice 0 on one CPU: the weights decide the shares ---- */

struct share {
	atomic_bool stop;
	uint64_t cpu_ns[2];
};

static struct share share_state;

static void *spin_until_stop(void *arg)
{
	int i = (int)(intptr_t)arg;

	while (!load_relaxed(&share_state.stop))
		plat_charge_ns(100 * US, PLAT_USER);
	share_state.cpu_ns[i] = plat_thread_cpu_ns();
	return NULL;
}

static void *share_main(void *arg)
{
	struct plat_thread t[2];

	(void)arg;
	for (int i = 0; i < 2; i++) {
		struct plat_thread_opts o = { .cpu = 1, .nice = i ? 15 : 0, .name = "spin" };

		plat_thread_create(&t[i], &o, spin_until_stop, (void *)(intptr_t)i);
	}
	plat_sleep_ns(2000 * MS);
	store_relaxed(&share_state.stop, true);
	for (int i = 0; i < 2; i++)
		plat_thread_join(&t[i]);
	return NULL;
}

static void test_nice_share(void)
{
	struct sim_config c = config(2, 1);
	double f;

	memset(&share_state, 0, sizeof(share_state));
	is_int(sim_run(&c, share_main, NULL, NULL), 0, "nice: the machine runs");
	f = (double)share_state.cpu_ns[1] / (double)(share_state.cpu_ns[0] + share_state.cpu_ns[1]);
	/* 36 / (1024 + 36) = 3.4%: EEVDF gives it whole slices, so about that over 2 s */
	ok(f > 0.015 && f < 0.08, "nice 15 beside nice 0 gets %.1f%% of the CPU (weights: 3.4%%)",
	   f * 100);
}

/* ---- futex ping-pong across CPUs: every hand-off pays a wake-up ---- */

struct pingpong {
	_Atomic uint32_t word;
	unsigned int rounds;
	uint64_t end;
};

static void *pong_main(void *arg)
{
	struct pingpong *p = arg;

	for (unsigned int i = 0; i < p->rounds; i++) {
		while (load_acquire(&p->word) != 2 * i + 1)	/* pairs with ping's store_release */
			futex_wait(&p->word, 2 * i, 0);
		store_release(&p->word, 2 * i + 2);	/* pairs with ping's load_acquire */
		futex_wake(&p->word, 1);
	}
	return NULL;
}

static void *ping_main(void *arg)
{
	struct pingpong *p = arg;
	struct plat_thread t;

	plat_thread_create(&t, &(struct plat_thread_opts){ .cpu = 1, .name = "pong" }, pong_main, p);
	plat_pin_self(0);
	for (unsigned int i = 0; i < p->rounds; i++) {
		store_release(&p->word, 2 * i + 1);	/* pairs with pong's load_acquire */
		futex_wake(&p->word, 1);
		while (load_acquire(&p->word) != 2 * i + 2)	/* pairs with pong's store_release */
			futex_wait(&p->word, 2 * i + 1, 0);
	}
	p->end = plat_now_ns();
	plat_thread_join(&t);
	return NULL;
}

static void test_pingpong(void)
{
	struct sim_config c = config(2, 7);
	struct pingpong p = { .rounds = 1000 }, q = { .rounds = 1000 };
	struct sim_stats a, b;

	is_int(sim_run(&c, ping_main, &p, &a), 0, "ping-pong: the machine runs");
	/* each of 2000 hand-offs wakes a CPU idle for a few us: 6 us each */
	ok(p.end >= 2000 * 6 * US && p.end < 2000 * 8 * US,
	   "ping-pong: 2000 wake-ups of a just-idle CPU take 6-8 us each (%.2f us)",
	   (double)p.end / 2000 / US);
	is_int(sim_run(&c, ping_main, &q, &b), 0, "ping-pong again");
	ok(p.end == q.end && a.events == b.events && a.switches == b.switches &&
	   a.virtual_ns == b.virtual_ns, "the same seed gives the same run (%llu events)",
	   (unsigned long long)a.events);
	tap_diag("ping-pong: %llu events, %llu hand-offs in %.1f ms of host time",
		 (unsigned long long)a.events, (unsigned long long)a.handoffs, a.wall_ns / 1e6);
}

/*
 * The waker's IPI: each wake of the other, idle CPU costs the waker 3 us
 * (its CPU time) and delays the woken task by as much, so a round trip
 * grows by 2 x 3 us and each side is charged 3 us a round (the first wake
 * may find the other side not yet asleep).
 */
struct ipi_probe {
	struct pingpong p;
	uint64_t ping_cpu_ns;
};

static void *ipi_ping_main(void *arg)
{
	struct ipi_probe *ip = arg;

	ping_main(&ip->p);
	ip->ping_cpu_ns = plat_thread_cpu_ns();
	return NULL;
}

static void test_wake_ipi(void)
{
	struct sim_config c = config(2, 7);
	struct ipi_probe ip = { .p = { .rounds = 1000 } };

	c.costs.wake_ipi_ns = 3 * US;
	is_int(sim_run(&c, ipi_ping_main, &ip, NULL), 0, "ping-pong with an IPI charge runs");
	ok(ip.p.end >= 2000 * 9 * US && ip.p.end < 2000 * 11 * US,
	   "each wake of an idle CPU takes the IPI and the wake-up: 9-11 us (%.2f us)",
	   (double)ip.p.end / 2000 / US);
	ok(ip.ping_cpu_ns >= 990 * 3 * US && ip.ping_cpu_ns < 1000 * 4 * US,
	   "the waker is charged the IPI: 3-4 us a round (%.2f us)",
	   (double)ip.ping_cpu_ns / 1000 / US);
}

/* ---- RCU: callbacks run after the readers that were inside ---- */

struct rcu_obj {
	struct vml_rcu_head rcu;
	atomic_bool *freed;
};

static void obj_free(struct vml_rcu_head *h)
{
	struct rcu_obj *o = container_of(h, struct rcu_obj, rcu);

	store_relaxed(o->freed, true);
	vml_free(o);
}

struct rcu_test {
	atomic_bool freed, reader_in, seen_freed_inside;
	bool freed_after_sync;
};

static void *rcu_reader(void *arg)
{
	struct rcu_test *r = arg;

	vml_rcu_read_lock();
	store_relaxed(&r->reader_in, true);
	plat_charge_ns(5 * MS, PLAT_KERNEL);	/* a long read-side section */
	if (load_relaxed(&r->freed))
		store_relaxed(&r->seen_freed_inside, true);
	vml_rcu_read_unlock();
	return NULL;
}

static void *rcu_main(void *arg)
{
	struct rcu_test *r = arg;
	struct rcu_obj *o = vml_zalloc(sizeof(*o));
	struct plat_thread t;

	o->freed = &r->freed;
	plat_thread_create(&t, &(struct plat_thread_opts){ .cpu = 1, .name = "reader" },
			   rcu_reader, r);
	while (!load_relaxed(&r->reader_in))
		plat_sleep_ns(10 * US);
	vml_call_rcu(&o->rcu, obj_free);
	vml_synchronize_rcu();
	vml_rcu_barrier();
	r->freed_after_sync = load_relaxed(&r->freed);
	plat_thread_join(&t);
	return NULL;
}

static void test_rcu(void)
{
	struct sim_config c = config(2, 3);
	struct rcu_test r = { 0 };

	is_int(sim_run(&c, rcu_main, &r, NULL), 0, "rcu: the machine runs");
	ok(!load_relaxed(&r.seen_freed_inside), "rcu: no callback runs inside a reader that was there");
	ok(r.freed_after_sync, "rcu: synchronize_rcu and rcu_barrier return after the callback");
}

/* ---- the mmap_lock on the machine: a writer and readers, invariants held ---- */

struct lock_test {
	struct rwsem sem;
	atomic_int readers_in, writers_in;
	atomic_bool violated, stop;
	uint64_t writes, reads;
};

static void *lock_reader(void *arg)
{
	struct lock_test *l = arg;

	while (!load_relaxed(&l->stop)) {
		down_read(&l->sem);
		fetch_add_relaxed(&l->readers_in, 1);
		if (load_relaxed(&l->writers_in))
			store_relaxed(&l->violated, true);
		plat_charge_ns(300 * US, PLAT_KERNEL);
		fetch_sub_relaxed(&l->readers_in, 1);
		up_read(&l->sem);
		l->reads++;
		plat_charge_ns(20 * US, PLAT_KERNEL);
	}
	return NULL;
}

static void *lock_main(void *arg)
{
	struct lock_test *l = arg;
	struct plat_thread t[3];
	uint64_t end;

	for (int i = 0; i < 3; i++)
		plat_thread_create(&t[i], &(struct plat_thread_opts){ .cpu = 1 + i % 2, .nice = 15,
				   .name = "reader" }, lock_reader, l);
	plat_pin_self(0);
	end = plat_now_ns() + 200 * MS;
	while (plat_now_ns() < end) {
		down_write(&l->sem);
		fetch_add_relaxed(&l->writers_in, 1);
		if (load_relaxed(&l->readers_in) || load_relaxed(&l->writers_in) != 1)
			store_relaxed(&l->violated, true);
		plat_charge_ns(5 * US, PLAT_KERNEL);
		fetch_sub_relaxed(&l->writers_in, 1);
		up_write(&l->sem);
		l->writes++;
		plat_sleep_ns(10 * US);
	}
	store_relaxed(&l->stop, true);
	for (int i = 0; i < 3; i++)
		plat_thread_join(&t[i]);
	return NULL;
}

static void test_rwsem(void)
{
	struct sim_config c = config(3, 11);
	struct lock_test *l = vml_zalloc(sizeof(*l)), *m = vml_zalloc(sizeof(*m));
	struct sim_stats a, b;

	rwsem_init(&l->sem, NULL);
	rwsem_init(&m->sem, NULL);
	is_int(sim_run(&c, lock_main, l, &a), 0, "rwsem: the machine runs");
	ok(!load_relaxed(&l->violated), "rwsem: never a reader beside a writer, or two writers");
	ok(l->writes > 100 && l->reads > 100, "rwsem: both sides progressed (%llu writes, %llu reads)",
	   (unsigned long long)l->writes, (unsigned long long)l->reads);
	is_int(sim_run(&c, lock_main, m, &b), 0, "rwsem again");
	ok(l->writes == m->writes && l->reads == m->reads && a.events == b.events,
	   "rwsem: the same seed gives the same run");
	tap_diag("rwsem: %llu events, %llu hand-offs, %.1f ms host for %.1f ms virtual",
		 (unsigned long long)a.events, (unsigned long long)a.handoffs, a.wall_ns / 1e6,
		 a.virtual_ns / 1e6);
	rwsem_destroy(&l->sem);
	rwsem_destroy(&m->sem);
	vml_free(l);
	vml_free(m);
}

/*
 * A writer that finds the lock held by a writer on a CPU spins as long as
 * that one runs (the kernel's rwsem_spin_on_owner): 300 us here, far past
 * the host's 10 us bound, and takes the lock at the release without
 * sleeping - in events a check per microsecond, not one per pause. When
 * the owner leaves its CPU (a sleep while holding), the spinner queues.
 */
struct spin_test {
	struct rwsem sem;
	atomic_bool held;
	uint64_t released_at, acquired_at;
	bool owner_sleeps;
};

static void *spin_owner(void *arg)
{
	struct spin_test *s = arg;

	down_write(&s->sem);
	store_relaxed(&s->held, true);
	if (s->owner_sleeps)
		plat_sleep_ns(300 * US);
	else
		plat_charge_ns(300 * US, PLAT_KERNEL);
	s->released_at = plat_now_ns();
	up_write(&s->sem);
	return NULL;
}

static void *spin_main(void *arg)
{
	struct spin_test *s = arg;
	struct plat_thread t;

	plat_pin_self(0);
	plat_thread_create(&t, &(struct plat_thread_opts){ .cpu = 1, .name = "owner" }, spin_owner, s);
	while (!load_relaxed(&s->held))
		plat_sleep_ns(1 * US);
	down_write(&s->sem);
	s->acquired_at = plat_now_ns();
	up_write(&s->sem);
	plat_thread_join(&t);
	return NULL;
}

static void test_writer_spin(void)
{
	struct sim_config c = config(2, 5);
	struct spin_test *s = vml_zalloc(sizeof(*s)), *q = vml_zalloc(sizeof(*q));
	struct rwsem_stats st;
	struct sim_stats a, b;

	rwsem_init(&s->sem, NULL);
	rwsem_init(&q->sem, NULL);
	is_int(sim_run(&c, spin_main, s, &a), 0, "writer spin: the machine runs");
	ok(s->acquired_at >= s->released_at && s->acquired_at - s->released_at < 2 * US,
	   "a writer spinning on a running owner takes the lock at its release: %.2f us after",
	   (double)(s->acquired_at - s->released_at) / US);
	ok((rwsem_stats_read(&s->sem, &st), !st.write_wait && st.write_spin),
	   "...by its spin, without queueing");
	ok(a.events < 2000, "...in %llu events (300 us of pauses would be %llu)",
	   (unsigned long long)a.events, (unsigned long long)(300 * US / 43));
	q->owner_sleeps = true;
	is_int(sim_run(&c, spin_main, q, &b), 0, "writer spin: an owner that sleeps");
	rwsem_stats_read(&q->sem, &st);
	ok(st.write_wait > 0 && q->acquired_at >= q->released_at,
	   "a writer whose owner left its CPU queues and sleeps");
	rwsem_destroy(&s->sem);
	rwsem_destroy(&q->sem);
	vml_free(s);
	vml_free(q);
}

static void test_bad_config(void)
{
	struct sim_config c = config(0, 1);

	is_int(sim_run(&c, share_main, NULL, NULL), -EINVAL, "no CPUs: EINVAL");
	c = config(SIM_MAX_CPUS + 1, 1);
	is_int(sim_run(&c, share_main, NULL, NULL), -EINVAL, "too many CPUs: EINVAL");
}

/* A measured leg's draws: its deciles where they are, the ends extended, never below 1 ns. */
static void test_leg_draws(void)
{
	static const uint64_t q[SIM_LEG_DECILES] = { 1000, 2000, 3000, 4000, 5000,
						     6000, 7000, 8000, 10000 };
	static const uint64_t steep[SIM_LEG_DECILES] = { 100, 5000, 5100, 5200, 5300,
							 5400, 5500, 5600, 5700 };
	static const uint64_t none[SIM_LEG_DECILES];
	uint64_t prev = 0;
	bool monotone = true;

	ok(sim_leg_at(q, 100000) == 1000 && sim_leg_at(q, 500000) == 5000 &&
	   sim_leg_at(q, 900000) == 10000 && sim_leg_at(q, 550000) == 5500,
	   "a leg's draw at a decile is that decile, between two in proportion");
	ok(sim_leg_at(q, 0) == 1 && sim_leg_at(q, 50000) == 500 && sim_leg_at(q, 999999) == 11999,
	   "below p10 and above p90 the end segments go on (p0 %llu, p100 %llu)",
	   (unsigned long long)sim_leg_at(q, 0), (unsigned long long)sim_leg_at(q, 999999));
	ok(sim_leg_at(steep, 0) == 1, "an extended end never goes below 1 ns");
	for (uint32_t u = 0; u < 1000000; u += 997) {
		uint64_t v = sim_leg_at(q, u);

		monotone &= v >= prev;
		prev = v;
	}
	ok(monotone, "the draws grow with the quantile");
	ok(sim_leg_measured(q) && !sim_leg_measured(none), "an all-zero leg is not measured");
}

/*
 * The way in by how long the CPU idled: with the measured legs, a CPU that
 * idled less than SIM_SHORT_IDLE_NS draws switch_in_short_ns, a longer
 * idle switch_in_ns. Each side of the ping-pong idles one hand-off.
 */
static void test_leg_by_idle(void)
{
	struct sim_config c = config(2, 7);
	struct pingpong p = { .rounds = 500 }, q = { .rounds = 500 };

	for (unsigned int i = 0; i < SIM_LEG_DECILES; i++)
		c.costs.switch_in_ns[i] = 50 * US;
	is_int(sim_run(&c, ping_main, &p, NULL), 0, "legs by idle: the machine runs");
	ok(p.end >= 1000 * 50 * US && p.end < 1000 * 53 * US,
	   "without a short leg every idle CPU's wake-up draws the one: 50-53 us (%.2f us)",
	   (double)p.end / 1000 / US);
	for (unsigned int i = 0; i < SIM_LEG_DECILES; i++)
		c.costs.switch_in_short_ns[i] = 5 * US;
	is_int(sim_run(&c, ping_main, &q, NULL), 0, "legs by idle: again with a short leg");
	ok(q.end >= 1000 * 5 * US && q.end < 1000 * 8 * US,
	   "a CPU idle < 100 us draws the short leg: 5-8 us a hand-off (%.2f us)",
	   (double)q.end / 1000 / US);
	for (unsigned int i = 0; i < SIM_LEG_DECILES; i++)
		c.costs.switch_in_short_ns[i] = 150 * US;
	p.end = 0;
	is_int(sim_run(&c, ping_main, &p, NULL), 0, "legs by idle: a short leg longer than 100 us");
	ok(p.end >= 1000 * 50 * US && p.end < 1000 * 153 * US,
	   "a wake-up after 100 us of idle draws the long leg again (%.2f us)",
	   (double)p.end / 1000 / US);
}

int main(void)
{
	test_bad_config();
	test_overlap();
	test_nice_share();
	test_pingpong();
	test_wake_ipi();
	test_leg_draws();
	test_leg_by_idle();
	test_rcu();
	test_rwsem();
	test_writer_spin();
	return tap_done();
}
