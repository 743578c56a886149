// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim.c - the simulated machine's world: tasks and the baton, the event
 * queue, timers, futexes, and the platform calls of a simulated task
 * (sim.h, docs/simulation.md).
 *
 * The baton. Every task is a pthread parked on its own futex word; exactly
 * one thread runs at a time. A task runs code until it makes a platform
 * call that cannot complete at this instant (a charge, a sleep, a futex
 * wait on an unchanged word, its end); it then runs the scheduler itself
 * (sim_schedule): events are taken in virtual-time order until some task
 * must run code, and the baton goes to that task - or stays, when it is the
 * caller, which costs nothing. So a charge with nothing else due before it
 * ends is a few function calls, and only real switches cost a futex
 * hand-off.
 *
 * Determinism. Time is virtual, tasks are numbered in creation order, events
 * at one instant are taken in the order they were armed, futex waiters
 * queue FIFO, and every random choice comes from the world's seeded
 * generator. Nothing reads the host's clock or depends on which host thread
 * the kernel runs first.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "platform/sim_calls.h"
#include "platform/sim_internal.h"
#include <stdatomic.h>
#include "util/alloc.h"
#include "util/clock.h"

_Thread_local struct sim_task *plat_sim_self;

const unsigned int sim_idle_bucket_us[SIM_IDLE_BUCKETS] = { 25, 50, 100, 200, 400, 1000, 3000, 0 };

static pthread_mutex_t sim_run_lock = PTHREAD_MUTEX_INITIALIZER;	/* one world at a time */

/* ---- the baton: real futexes, never the simulated ones ---- */

static void raw_futex_wait(_Atomic uint32_t *word, uint32_t expected)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void raw_futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

#define load_acquire(p)     atomic_load_explicit((p), memory_order_acquire)
#define load_relaxed(p)     atomic_load_explicit((p), memory_order_relaxed)
#define store_release(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define store_relaxed(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)

static void baton_give(_Atomic uint32_t *word)
{
	/* release: pairs with baton_take()'s load_acquire: the receiver sees the world as we left it */
	store_release(word, 1);
	raw_futex_wake(word);
}

static void baton_take(_Atomic uint32_t *word)
{
	/* acquire: pairs with baton_give()'s store_release */
	while (!load_acquire(word))
		raw_futex_wait(word, 0);
	store_relaxed(word, 0);
}

/* ---- the event queue: a binary heap on (time, seq) ---- */

static bool ev_before(const struct sim_ev *a, const struct sim_ev *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void heap_push(struct sim_world *w, struct sim_ev ev)
{
	size_t i;

	if (w->nheap == w->heap_cap) {
		size_t cap = w->heap_cap ? w->heap_cap * 2 : 256;
		struct sim_ev *h = vml_realloc(w->heap, cap * sizeof(*h));

		if (!h) {
			fprintf(stderr, "vmalock: simulator: out of memory for events\n");
			abort();
		}
		w->heap = h;
		w->heap_cap = cap;
	}
	ev.seq = w->seq++;
	for (i = w->nheap++; i > 0; i = (i - 1) / 2) {
		struct sim_ev *parent = &w->heap[(i - 1) / 2];

		if (!ev_before(&ev, parent))
			break;
		w->heap[i] = *parent;
	}
	w->heap[i] = ev;
}

static bool heap_pop(struct sim_world *w, struct sim_ev *out)
{
	struct sim_ev last;
	size_t i = 0;

	if (!w->nheap)
		return false;
	*out = w->heap[0];
	last = w->heap[--w->nheap];
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l >= w->nheap)
			break;
		m = l + 1 < w->nheap && ev_before(&w->heap[l + 1], &w->heap[l]) ? l + 1 : l;
		if (!ev_before(&w->heap[m], &last))
			break;
		w->heap[i] = w->heap[m];
		i = m;
	}
	if (w->nheap)
		w->heap[i] = last;
	return true;
}

void sim_arm_timer(struct sim_world *w, struct sim_task *t, uint64_t when)
{
	heap_push(w, (struct sim_ev){ .time = when, .gen = ++t->timer_gen, .kind = EV_TIMER,
				      .idx = t->id });
}

void sim_arm_cpu(struct sim_world *w, struct sim_cpu *c, uint64_t when)
{
	heap_push(w, (struct sim_ev){ .time = when, .gen = ++c->ev_gen, .kind = EV_CPU,
				      .idx = c->id });
}

/* ---- tasks that must run code now ---- */

void sim_make_ready(struct sim_world *w, struct sim_task *t)
{
	t->state = TASK_CODE;
	if (w->nready == w->ready_cap) {
		size_t cap = w->ready_cap ? w->ready_cap * 2 : 64;
		struct sim_task **r = vml_malloc(cap * sizeof(*r));

		if (!r) {
			fprintf(stderr, "vmalock: simulator: out of memory\n");
			abort();
		}
		for (size_t i = 0; i < w->nready; i++)
			r[i] = w->ready[(w->ready_head + i) % w->ready_cap];
		vml_free(w->ready);
		w->ready = r;
		w->ready_cap = cap;
		w->ready_head = 0;
	}
	w->ready[(w->ready_head + w->nready++) % w->ready_cap] = t;
}

static struct sim_task *ready_pop(struct sim_world *w)
{
	struct sim_task *t;

	if (!w->nready)
		return NULL;
	t = w->ready[w->ready_head];
	w->ready_head = (w->ready_head + 1) % w->ready_cap;
	w->nready--;
	return t;
}

/*
 * A task woken by the task on @waker_cpu: it arrives on a CPU a wake-up
 * later, and @ipi_ns later still when that CPU is another, idle one (the
 * waker's IPI, which the caller charges). Return: whether it took an IPI.
 */
bool sim_wake_delayed(struct sim_world *w, struct sim_task *t, uint64_t ipi_ns, int waker_cpu)
{
	int cpu = sched_select_cpu(w, t);
	bool ipi = ipi_ns && cpu != waker_cpu && sched_cpu_idle(w, cpu);
	uint64_t lat = sched_wake_latency(w, cpu) + (ipi ? ipi_ns : 0);

	t->state = TASK_WAKING;
	t->cpu = cpu;
	w->cpus[cpu].claimed++;
	w->stats.wakeups++;
	sim_arm_timer(w, t, w->now + lat);
	return ipi;
}

/* A blocked or sleeping task (or a new one) is woken by a timer or the world. */
void sim_wake(struct sim_world *w, struct sim_task *t)
{
	sim_wake_delayed(w, t, 0, -1);
}

static void futex_unqueue(struct sim_task *t)
{
	list_del_init(&t->futex_node);
	t->futex_word = NULL;
}

static void timer_event(struct sim_world *w, struct sim_task *t)
{
	switch (t->state) {
	case TASK_WAKING:
		sched_arrive(w, t);
		break;
	case TASK_SLEEPING:
		sim_wake(w, t);
		break;
	case TASK_BLOCKED:	/* a futex wait's timeout */
		if (t->futex_word) {
			futex_unqueue(t);
			t->timed_out = true;
			sim_wake(w, t);
		}
		break;
	default:
		break;
	}
}

static void report_stall(struct sim_world *w)
{
	static const char *const names[] = { "code", "charging", "runnable", "blocked",
					     "sleeping", "waking", "dead" };

	fprintf(stderr, "vmalock: simulator: every task waits and nothing is due "
			"(a deadlock in the simulated program) at %llu ns:\n",
		(unsigned long long)w->now);
	for (unsigned int i = 0; i < w->ntasks; i++) {
		struct sim_task *t = w->tasks[i];

		if (t->state != TASK_DEAD)
			fprintf(stderr, "  task %u %s: %s%s\n", t->id, t->name, names[t->state],
				t->futex_word ? " on a futex" :
				t->rcu_wait_gp ? " in synchronize_rcu" : "");
	}
	abort();
}

/* Take events until a task must run code. Return: it, or NULL when every task has ended. */
static struct sim_task *sim_next(struct sim_world *w)
{
	struct sim_ev ev;
	struct sim_task *t;

	for (;;) {
		if (!w->live)
			return NULL;	/* only daemons are left: the world has ended */
		t = ready_pop(w);
		if (t)
			return t;
		if (!heap_pop(w, &ev))
			report_stall(w);
		if (ev.kind == EV_CPU) {
			struct sim_cpu *c = &w->cpus[ev.idx];

			if (ev.gen != c->ev_gen)
				continue;
			w->now = ev.time;
			w->stats.events++;
			sched_cpu_event(w, c);
		} else {
			t = w->tasks[ev.idx];
			if (ev.gen != t->timer_gen)
				continue;
			w->now = ev.time;
			w->stats.events++;
			timer_event(w, t);
		}
	}
}

/*
 * sim_schedule - @self, the baton holder, cannot run code now (its state
 * says why): run the world until some task can, and give it the baton.
 * Returns when @self may run code again (at once if it is the next), or
 * at once, without the baton, if @self has ended.
 */
void sim_schedule(struct sim_task *self)
{
	struct sim_world *w = self->w;
	struct sim_task *next = sim_next(w);
	bool dead;

	if (next == self)
		return;
	w->stats.handoffs++;
	/* read before the hand-off: from then on the world is the next holder's */
	dead = self->state == TASK_DEAD;
	if (next)
		baton_give(&next->baton);
	else
		baton_give(&w->host_baton);
	if (dead)
		return;
	baton_take(&self->baton);
	if (w->ending) {
		/* a daemon the host ends with the world (sim_run) */
		plat_sim_self = NULL;
		pthread_exit(NULL);
	}
}

uint64_t sim_now_ns(void)
{
	return plat_sim_self->w->now;
}

bool sim_task_on_cpu(const struct sim_task *t)
{
	return t->state == TASK_CODE || t->state == TASK_CHARGING;
}

uint64_t sim_task_cpu_ns(void)
{
	return plat_sim_self->cpu_ns;
}

int sim_task_cpu(void)
{
	return plat_sim_self->cpu;
}

/* ---- the platform calls of a simulated task ---- */

void sim_charge(uint64_t ns, enum plat_charge_kind kind)
{
	struct sim_task *t = plat_sim_self;
	struct sim_world *w = t->w;
	struct sim_cpu *c = &w->cpus[t->cpu];

	if (kind == PLAT_CALL) {
		/* the measured way back includes the IPI its release paid: charged apart */
		if (sim_leg_measured(w->cfg.costs.way_back_ns)) {
			ns = sim_leg_at(w->cfg.costs.way_back_ns,
					(uint32_t)vml_rand_below(&w->leg_rng, 1000000));
			ns = ns > w->cfg.costs.wake_ipi_ns ? ns - w->cfg.costs.wake_ipi_ns : 1;
		}
		kind = PLAT_KERNEL;
	}
	if (!ns)
		return;
	t->charge_left = ns;
	t->charge_kind = kind;
	t->state = TASK_CHARGING;
	t->exec_start = w->now;
	sched_arm(w, c);
	sim_schedule(t);
}

void sim_relax(void)
{
	struct sim_task *t = plat_sim_self;

	sim_charge(t->w->cfg.costs.relax_ns ? t->w->cfg.costs.relax_ns : 1, PLAT_KERNEL);
}

void sim_yield(void)
{
	struct sim_task *t = plat_sim_self;
	struct sim_world *w = t->w;

	/* the system call's own time first: a loop of yields must let time pass */
	sim_charge(w->cfg.costs.ctxsw_ns ? w->cfg.costs.ctxsw_ns : 1, PLAT_KERNEL);
	sched_yield_curr(w, &w->cpus[t->cpu]);
	if (t->state != TASK_CODE)
		sim_schedule(t);
}

void sim_sleep(uint64_t ns)
{
	struct sim_task *t = plat_sim_self;
	struct sim_world *w = t->w;

	t->state = TASK_SLEEPING;
	sched_leave(w, &w->cpus[t->cpu]);
	sim_arm_timer(w, t, w->now + ns + w->cfg.costs.timer_slack_ns);
	sim_schedule(t);
}

static struct list_head *futex_bucket(struct sim_world *w, _Atomic uint32_t *word)
{
	uintptr_t a = (uintptr_t)word;

	return &w->futex[((a >> 2) ^ (a >> 12)) % SIM_FUTEX_BUCKETS];
}

int sim_futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
	struct sim_task *t = plat_sim_self;
	struct sim_world *w = t->w;

	if (load_relaxed(word) != expected)
		return -EAGAIN;
	t->futex_word = word;
	t->futex_woken = t->timed_out = false;
	list_add_tail(&t->futex_node, futex_bucket(w, word));
	t->state = TASK_BLOCKED;
	sched_leave(w, &w->cpus[t->cpu]);
	if (timeout_ns)
		sim_arm_timer(w, t, w->now + timeout_ns);
	else
		t->timer_gen++;
	sim_schedule(t);
	return t->timed_out ? -ETIMEDOUT : 0;
}

/*
 * Waking a task onto another CPU that is idle costs the waker the IPI that
 * brings that CPU out of halt (on a VM, an exit to the host: several us,
 * bench/simcost.c); the woken task's own latency runs from there. Charged
 * after the whole wake, as the kernel's wake_up_q() sends them in a row.
 */
int sim_futex_wake(_Atomic uint32_t *word, int n)
{
	return sim_futex_wake_ipi(word, n, true);
}

int sim_futex_wake_ipi(_Atomic uint32_t *word, int n, bool charge_ipi)
{
	struct sim_task *self = plat_sim_self;
	struct sim_world *w = self->w;
	struct list_head *b = futex_bucket(w, word);
	struct sim_task *t, *tmp;
	int woken = 0, ipis = 0;

	list_for_each_entry_safe(t, tmp, b, futex_node) {
		if (woken >= n)
			break;
		if (t->futex_word != word)
			continue;
		futex_unqueue(t);
		t->futex_woken = true;
		if (sim_wake_delayed(w, t, w->cfg.costs.wake_ipi_ns, self->cpu))
			ipis++;
		woken++;
	}
	if (charge_ipi && ipis && self->state == TASK_CODE)
		sim_charge((uint64_t)ipis * w->cfg.costs.wake_ipi_ns, PLAT_KERNEL);
	return woken;
}

static void *task_thread(void *arg)
{
	struct sim_task *t = arg;
	struct sim_world *w = t->w;

	plat_sim_self = t;
	baton_take(&t->baton);
	t->result = t->fn(t->arg);
	/* release: pairs with plat_thread_join()'s load_acquire: the result is set */
	store_release(&t->exited, 1);
	sim_futex_wake(&t->exited, INT32_MAX);
	VML_BUG_ON(t->rcu_nesting);	/* ended inside an RCU read-side section */
	t->state = TASK_DEAD;
	if (!t->daemon)
		w->live--;
	sched_leave(w, &w->cpus[t->cpu]);
	sim_schedule(t);
	plat_sim_self = NULL;
	return NULL;
}

static int nice_clamp(int nice)
{
	return nice < -20 ? -20 : nice > 19 ? 19 : nice;
}

/* Make a task; it arrives on a CPU a wake-up from now. Context: baton holder (or host before the start). */
int sim_spawn(struct sim_world *w, const struct plat_thread_opts *o, void *(*fn)(void *),
		     void *arg, struct sim_task **out)
{
	struct sim_task *t;
	pthread_attr_t attr;
	int ret;

	if (o->cpu >= (int)w->ncpus)
		return -EINVAL;
	if (w->ntasks == w->tasks_cap) {
		unsigned int cap = w->tasks_cap ? w->tasks_cap * 2 : 16;
		struct sim_task **v = vml_realloc(w->tasks, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->tasks = v;
		w->tasks_cap = cap;
	}
	t = vml_zalloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->id = w->ntasks;
	snprintf(t->name, sizeof(t->name), "%s", o->name ? o->name : "task");
	t->w = w;
	t->pinned = o->cpu;
	t->cpu = o->cpu >= 0 ? o->cpu : 0;
	t->nice = nice_clamp(o->nice);
	t->weight = sim_nice_weight(t->nice);
	t->fn = fn;
	t->arg = arg;
	t->prio = vml_rand_next(&w->rng) | 1ULL << 63;	/* PCT: above every dropped one */
	INIT_LIST_HEAD(&t->rq_node);
	INIT_LIST_HEAD(&t->futex_node);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	ret = pthread_create(&t->thread, &attr, task_thread, t);
	pthread_attr_destroy(&attr);
	if (ret) {
		vml_free(t);
		return -ret;
	}
	w->tasks[w->ntasks++] = t;
	t->daemon = o->daemon;
	if (!t->daemon)
		w->live++;
	w->stats.tasks++;
	t->timer_gen = 0;
	sim_wake(w, t);
	*out = t;
	return 0;
}

int sim_thread_create(struct plat_thread *pt, const struct plat_thread_opts *o,
		      void *(*fn)(void *), void *arg)
{
	struct sim_task *self = plat_sim_self;
	int ret = sim_spawn(self->w, o, fn, arg, &pt->task);

	if (!ret)
		pt->thread = pt->task->thread;
	return ret;
}

void *sim_thread_join(struct plat_thread *pt)
{
	struct sim_task *t = pt->task;

	/* acquire: pairs with task_thread()'s store_release(&t->exited) */
	while (!load_acquire(&t->exited))
		sim_futex_wait(&t->exited, 0, 0);
	return t->result;
}

int sim_pin_self(int cpu)
{
	struct sim_task *t = plat_sim_self;
	struct sim_world *w = t->w;

	if (cpu < 0)
		return 0;
	if (cpu >= (int)w->ncpus)
		return -EINVAL;
	t->pinned = cpu;
	if (t->cpu == cpu)
		return 0;
	/* migrate: leave this CPU, arrive on the other */
	t->state = TASK_SLEEPING;
	sched_leave(w, &w->cpus[t->cpu]);
	sim_wake(w, t);
	sim_schedule(t);
	return 0;
}

int sim_nice_self(int nice)
{
	struct sim_task *t = plat_sim_self;
	struct sim_world *w = t->w;

	sched_update_curr(w, &w->cpus[t->cpu]);
	t->nice = nice_clamp(nice);
	t->weight = sim_nice_weight(t->nice);
	return 0;
}

/*
 * Exploration (sim.h): at a synchronisation point the running task may be
 * held back, as if an interrupt took its CPU for a while, so that other
 * tasks' code runs first. Random: with probability 1/4, for 0..10 us.
 * PCT: tasks hold random priorities; a task is held back while another of
 * higher priority has work in flight, until that one's next event; at d-1
 * random points the running task drops below all others.
 */
void sim_sync_point_line(struct sim_task *t, uint64_t line_ns)
{
	struct sim_world *w = t->w;
	uint64_t step = w->stats.sync_points++, hold = 0;

	/*
	 * A lock operation is an atomic read-modify-write: a pause's worth of
	 * time, and its line's wait (sim_cacheline.c). It also makes every
	 * loop that takes a lock let time pass.
	 */
	sim_charge((w->cfg.costs.relax_ns ? w->cfg.costs.relax_ns : 1) + line_ns, PLAT_KERNEL);
	if (w->cfg.explore == SIM_EXPLORE_OFF)
		return;
	if (w->cfg.explore == SIM_EXPLORE_RANDOM) {
		if (vml_rand_below(&w->rng, 4) == 0)
			hold = 1 + vml_rand_below(&w->rng, 10 * NSEC_PER_USEC);
	} else {
		for (unsigned int i = 0; i < w->pct_nchange; i++)
			if (w->pct_change[i] == step)
				t->prio = w->pct_low--;
		for (unsigned int i = 0; i < w->ntasks; i++) {
			struct sim_task *u = w->tasks[i];

			if (u != t && u->prio > t->prio &&
			    (u->state == TASK_CHARGING || u->state == TASK_RUNNABLE ||
			     u->state == TASK_WAKING || u->state == TASK_CODE)) {
				hold = 1 + vml_rand_below(&w->rng, 5 * NSEC_PER_USEC);
				break;
			}
		}
	}
	if (hold) {
		w->stats.preemptions++;
		sim_charge(hold, PLAT_USER);
	}
}

void sim_sync_point(void)
{
	sim_sync_point_line(plat_sim_self, 0);
}

/* ---- the host's side ---- */

int sim_run(const struct sim_config *cfg, void *(*main)(void *), void *arg,
	    struct sim_stats *stats)
{
	struct plat_thread_opts o = { .cpu = -1, .nice = 0, .name = "main" };
	struct sim_world *w;
	struct sim_task *t, *first;
	int ret;

	if (!cfg->cpus || cfg->cpus > SIM_MAX_CPUS || !cfg->costs.tick_ns ||
	    (cfg->explore == SIM_EXPLORE_PCT && !cfg->pct_depth))
		return -EINVAL;
	if (plat_sim_self)
		return -EINVAL;	/* no machine inside a machine */
	w = vml_zalloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cfg = *cfg;
	w->ncpus = cfg->cpus;
	w->base_slice_ns = cfg->costs.base_slice_ns ? cfg->costs.base_slice_ns :
			   sim_default_base_slice(cfg->cpus);
	w->cpus = vml_zalloc(w->ncpus * sizeof(*w->cpus));
	if (!w->cpus) {
		vml_free(w);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < w->ncpus; i++) {
		w->cpus[i].id = i;
		INIT_LIST_HEAD(&w->cpus[i].rq);
		w->cpus[i].vbase = 1ULL << 40;
	}
	for (unsigned int i = 0; i < SIM_FUTEX_BUCKETS; i++)
		INIT_LIST_HEAD(&w->futex[i]);
	w->rng = vml_rand_init(cfg->seed, 0x51d);
	w->leg_rng = vml_rand_init(cfg->seed, 0x1e9);
	w->pct_low = (1ULL << 62);
	if (cfg->explore == SIM_EXPLORE_PCT && cfg->pct_depth > 1) {
		w->pct_nchange = cfg->pct_depth - 1;
		w->pct_change = vml_zalloc(w->pct_nchange * sizeof(*w->pct_change));
		if (!w->pct_change) {
			vml_free(w->cpus);
			vml_free(w);
			return -ENOMEM;
		}
		for (unsigned int i = 0; i < w->pct_nchange; i++)
			w->pct_change[i] = vml_rand_below(&w->rng, cfg->pct_steps ? cfg->pct_steps : 1000);
	}
	sim_rcu_init(w);
	w->wall_start = vml_now_ns();
	pthread_mutex_lock(&sim_run_lock);
	ret = sim_spawn(w, &o, main, arg, &first);
	if (!ret) {
		t = sim_next(w);
		baton_give(&t->baton);
		baton_take(&w->host_baton);
		/* daemons still wait for the baton: let each leave */
		w->ending = true;
		for (unsigned int i = 0; i < w->ntasks; i++) {
			if (w->tasks[i]->state != TASK_DEAD)
				baton_give(&w->tasks[i]->baton);
			pthread_join(w->tasks[i]->thread, NULL);
		}
		sim_rcu_world_end(w);
	}
	sim_lines_free(w);
	pthread_mutex_unlock(&sim_run_lock);
	w->stats.virtual_ns = w->now;
	w->stats.wall_ns = vml_now_ns() - w->wall_start;
	for (unsigned int i = 0; i < w->ncpus; i++)
		w->stats.busy_ns += w->cpus[i].busy_ns;
	if (stats)
		*stats = w->stats;
	for (unsigned int i = 0; i < w->ntasks; i++)
		vml_free(w->tasks[i]);
	vml_free(w->tasks);
	vml_free(w->heap);
	vml_free(w->ready);
	vml_free(w->pct_change);
	vml_free(w->cpus);
	vml_free(w);
	return ret;
}

uint64_t sim_default_base_slice(unsigned int cpus)
{
	unsigned int n = cpus < 8 ? cpus : 8, log = 0;

	while (n >>= 1)
		log++;
	return 750 * NSEC_PER_USEC * (1 + log);
}

uint64_t sim_leg_at(const uint64_t q[SIM_LEG_DECILES], uint32_t u_ppm)
{
	/* deciles at 10%..90%; segment i runs from decile i-1 to i (0: p0, 10: p100) */
	int64_t lo, hi;
	uint32_t seg = u_ppm / 100000, off = u_ppm % 100000;

	if (seg == 0) {
		hi = (int64_t)q[0];
		lo = hi - ((int64_t)q[1] - hi);
	} else if (seg >= SIM_LEG_DECILES) {
		lo = (int64_t)q[SIM_LEG_DECILES - 1];
		hi = lo + (lo - (int64_t)q[SIM_LEG_DECILES - 2]);
	} else {
		lo = (int64_t)q[seg - 1];
		hi = (int64_t)q[seg];
	}
	lo += (hi - lo) * (int64_t)off / 100000;
	return lo > 0 ? (uint64_t)lo : 1;
}

uint64_t sim_idle_wake_ns(const struct sim_costs *c, uint64_t idle_ns)
{
	for (unsigned int i = 0; i + 1 < SIM_IDLE_BUCKETS; i++)
		if (idle_ns < sim_idle_bucket_us[i] * NSEC_PER_USEC)
			return c->idle_wake_ns[i];
	return c->idle_wake_ns[SIM_IDLE_BUCKETS - 1];
}

static const char *const preempt_names[] = { "none", "voluntary", "full", "lazy" };

const char *sim_preempt_name(enum sim_preempt p)
{
	return (unsigned int)p < 4 ? preempt_names[p] : "?";
}

int sim_preempt_parse(const char *s, enum sim_preempt *out)
{
	for (unsigned int i = 0; i < 4; i++)
		if (!strcmp(s, preempt_names[i])) {
			*out = (enum sim_preempt)i;
			return 0;
		}
	return -EINVAL;
}
