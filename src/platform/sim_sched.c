// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_sched.c - the simulated machine's CPUs and scheduler: the kernel's
 * fair class in outline (EEVDF, 6.6+; docs/simulation.md says what is left
 * out).
 *
 *   - Each CPU has a current task and a run queue. A task's vruntime grows
 *     by its CPU time x 1024 / weight (sched_prio_to_weight); it is eligible
 *     when its vruntime is at most the queue's weighted average, and the
 *     eligible task with the earliest deadline (vruntime + base slice x
 *     1024 / weight at its last request) runs.
 *   - A woken task is placed at the average (no lag kept) and preempts the
 *     current one if it would be picked and the current one has used its
 *     slice since it was picked (RUN_TO_PARITY). A current task whose
 *     deadline passes is told to reschedule at the next tick (HZ).
 *   - Rescheduling takes effect at once for user-mode work (a CPU hog), and
 *     for kernel work under preempt=full; under none and voluntary, kernel
 *     work is preempted at the end of its charge - the model charges per
 *     record and per page-table batch, where the kernel calls cond_resched();
 *     under lazy, at the next tick.
 *   - A wake-up goes to the task's pinned CPU, else its previous CPU if idle,
 *     else the next idle CPU, else the previous one; it arrives after the
 *     target's wake-up latency: a CPU idle for t wakes after the host's
 *     measured curve at t, a busy one after wake_busy_ns. A CPU going idle
 *     pulls a queued task that is not pinned from another CPU.
 */
#include <stdio.h>
#include <stdlib.h>

#include "platform/sim_internal.h"

/* kernel/sched/core.c's sched_prio_to_weight, nice -20..19 */
static const uint64_t prio_to_weight[40] = {
	88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
	110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
};

#define NICE_0_WEIGHT 1024

uint64_t sim_nice_weight(int nice)
{
	return prio_to_weight[nice + 20];
}

static inline int64_t vdiff(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b);
}

static uint64_t vslice(const struct sim_world *w, const struct sim_task *t)
{
	return w->base_slice_ns * NICE_0_WEIGHT / t->weight;
}

static bool on_cpu(const struct sim_task *t)
{
	return t && (t->state == TASK_CODE || t->state == TASK_CHARGING);
}

/* The weighted average vruntime of the CPU's tasks (current and queued). */
static uint64_t avg_vruntime(const struct sim_cpu *c)
{
	__int128 sum = 0;
	uint64_t wsum = 0, ref = 0;
	const struct sim_task *t;
	bool have = false;

	if (on_cpu(c->curr)) {
		ref = c->curr->vruntime;
		wsum = c->curr->weight;
		have = true;
	}
	list_for_each_entry(t, &c->rq, rq_node) {
		if (!have) {
			ref = t->vruntime;
			have = true;
		}
		sum += (__int128)vdiff(t->vruntime, ref) * (__int128)t->weight;
		wsum += t->weight;
	}
	if (!have)
		return c->vbase;
	return ref + (uint64_t)(int64_t)(sum / (__int128)wsum);
}

static bool eligible(const struct sim_cpu *c, const struct sim_task *t, uint64_t avg)
{
	(void)c;
	return vdiff(t->vruntime, avg) <= 0;
}

/* EEVDF's pick among the queue and, if @with_curr, the current task. */
static struct sim_task *pick_eevdf(struct sim_cpu *c, bool with_curr)
{
	uint64_t avg = avg_vruntime(c);
	struct sim_task *best = NULL, *first = NULL, *t;

	if (with_curr && on_cpu(c->curr)) {
		first = c->curr;
		if (eligible(c, c->curr, avg))
			best = c->curr;
	}
	list_for_each_entry(t, &c->rq, rq_node) {
		if (!first || vdiff(t->vruntime, first->vruntime) < 0)
			first = t;
		if (eligible(c, t, avg) && (!best || vdiff(t->deadline, best->deadline) < 0))
			best = t;
	}
	return best ? best : first;
}

static void place(struct sim_world *w, struct sim_cpu *c, struct sim_task *t)
{
	t->vruntime = avg_vruntime(c);
	t->deadline = t->vruntime + vslice(w, t);
}

void sched_update_curr(struct sim_world *w, struct sim_cpu *c)
{
	struct sim_task *t = c->curr;
	uint64_t delta;

	if (!t)
		return;
	delta = w->now - t->exec_start;
	t->exec_start = w->now;
	if (t->state != TASK_CHARGING || !delta)
		return;
	if (delta > t->charge_left)
		delta = t->charge_left;
	t->charge_left -= delta;
	t->cpu_ns += delta;
	t->vruntime += delta * NICE_0_WEIGHT / t->weight;
	c->busy_ns += delta;
	if (vdiff(t->vruntime, t->deadline) >= 0) {
		t->deadline = t->vruntime + vslice(w, t);
		if (c->nr_rq)
			c->need_resched = true;
	}
}

static uint64_t next_tick(const struct sim_world *w, uint64_t t)
{
	uint64_t tick = w->cfg.costs.tick_ns;

	return (t / tick + 1) * tick;
}

static bool preemptible_now(const struct sim_world *w, const struct sim_task *t)
{
	return t->state == TASK_CHARGING &&
	       (t->charge_kind == PLAT_USER || w->cfg.costs.preempt == SIM_PREEMPT_FULL);
}

static bool preemptible_at_tick(const struct sim_world *w, const struct sim_task *t)
{
	return preemptible_now(w, t) || w->cfg.costs.preempt == SIM_PREEMPT_LAZY;
}

/* Arm the CPU's next event: its task's charge ends, or a tick it must act on. */
void sched_arm(struct sim_world *w, struct sim_cpu *c)
{
	struct sim_task *t = c->curr;
	uint64_t when;

	if (!t || t->state != TASK_CHARGING) {
		c->ev_gen++;
		return;
	}
	when = w->now + t->charge_left;
	if (c->nr_rq) {
		uint64_t tick;

		if (c->need_resched || c->resched_at_tick) {
			tick = preemptible_at_tick(w, t) ? next_tick(w, w->now) : UINT64_MAX;
		} else {
			int64_t dv = vdiff(t->deadline, t->vruntime);
			uint64_t real = dv > 0 ? ((uint64_t)dv * t->weight + NICE_0_WEIGHT - 1) /
						 NICE_0_WEIGHT : 0;

			/* the tick that sees the deadline passed */
			tick = next_tick(w, w->now + real - (real ? 1 : 0));
		}
		if (tick < when)
			when = tick;
	}
	sim_arm_cpu(w, c, when);
}

static void enqueue(struct sim_world *w, struct sim_cpu *c, struct sim_task *t)
{
	t->state = TASK_RUNNABLE;
	list_add_tail(&t->rq_node, &c->rq);
	c->nr_rq++;
	if (t->pinned < 0)
		w->unpinned_queued++;
}

static void dequeue(struct sim_world *w, struct sim_cpu *c, struct sim_task *t)
{
	list_del_init(&t->rq_node);
	c->nr_rq--;
	if (t->pinned < 0)
		w->unpinned_queued--;
}

/* @n, queued on @c, becomes its current task; @busy: a switch from another task. */
static void switch_to(struct sim_world *w, struct sim_cpu *c, struct sim_task *n, bool busy)
{
	dequeue(w, c, n);
	c->curr = n;
	c->need_resched = c->resched_at_tick = false;
	n->cpu = (int)c->id;
	n->exec_start = w->now;
	n->vprot = n->deadline;		/* RUN_TO_PARITY: protected until its slice is used */
	w->stats.switches++;
	if (busy) {
		if (!n->charge_left)
			n->charge_kind = PLAT_KERNEL;
		n->charge_left += w->cfg.costs.ctxsw_ns;
	}
	if (n->charge_left) {
		n->state = TASK_CHARGING;
		sched_arm(w, c);
	} else {
		c->ev_gen++;
		sim_make_ready(w, n);
	}
}


/* The current task may give way: pick again among it and the queue. */
static void resched(struct sim_world *w, struct sim_cpu *c)
{
	struct sim_task *t = c->curr, *best = pick_eevdf(c, true);

	c->need_resched = c->resched_at_tick = false;
	if (best == t) {
		if (t->charge_left)
			sched_arm(w, c);
		else {
			c->ev_gen++;
			sim_make_ready(w, t);
		}
		return;
	}
	enqueue(w, c, t);
	switch_to(w, c, best, true);
}

void sched_cpu_event(struct sim_world *w, struct sim_cpu *c)
{
	struct sim_task *t = c->curr;

	if (!t || t->state != TASK_CHARGING)
		return;
	sched_update_curr(w, c);
	if (!t->charge_left) {
		if (c->need_resched || c->resched_at_tick)
			resched(w, c);
		else {
			c->ev_gen++;
			sim_make_ready(w, t);
		}
		return;
	}
	/* a tick in the middle of a charge */
	if ((c->need_resched || c->resched_at_tick) && preemptible_at_tick(w, t))
		resched(w, c);
	else
		sched_arm(w, c);
}

static void idle_balance(struct sim_world *w, struct sim_cpu *c)
{
	if (!w->unpinned_queued)
		return;
	for (unsigned int i = 1; i < w->ncpus; i++) {
		struct sim_cpu *d = &w->cpus[(c->id + i) % w->ncpus];
		struct sim_task *t;

		list_for_each_entry(t, &d->rq, rq_node) {
			if (t->pinned >= 0)
				continue;
			dequeue(w, d, t);
			sched_update_curr(w, d);
			sched_arm(w, d);
			place(w, c, t);
			enqueue(w, c, t);
			switch_to(w, c, t, true);
			return;
		}
	}
}

void sched_leave(struct sim_world *w, struct sim_cpu *c)
{
	struct sim_task *t = c->curr, *n;

	sched_update_curr(w, c);
	c->curr = NULL;
	c->need_resched = c->resched_at_tick = false;
	c->ev_gen++;
	if (c->nr_rq) {
		n = pick_eevdf(c, false);
		switch_to(w, c, n, true);
		return;
	}
	c->idle_since = w->now;
	if (t)
		c->vbase = t->vruntime;
	idle_balance(w, c);
}

void sched_yield_curr(struct sim_world *w, struct sim_cpu *c)
{
	struct sim_task *t = c->curr, *best;

	sched_update_curr(w, c);
	t->deadline += vslice(w, t);	/* yield_task_fair: a new request */
	best = pick_eevdf(c, true);
	if (best == t)
		return;
	enqueue(w, c, t);
	switch_to(w, c, best, true);
}

int sched_select_cpu(struct sim_world *w, struct sim_task *t)
{
	unsigned int prev = (unsigned int)t->cpu;

	if (t->pinned >= 0)
		return t->pinned;
	for (unsigned int i = 0; i < w->ncpus; i++) {
		const struct sim_cpu *c = &w->cpus[(prev + i) % w->ncpus];

		if (!c->curr && !c->nr_rq && !c->claimed)
			return (int)c->id;
	}
	return (int)prev;
}

bool sched_cpu_idle(const struct sim_world *w, int cpu)
{
	const struct sim_cpu *c = &w->cpus[cpu];

	return !c->curr && !c->nr_rq && !c->claimed;
}

uint64_t sched_wake_latency(struct sim_world *w, int cpu)
{
	const struct sim_cpu *c = &w->cpus[cpu];
	uint64_t lat;

	if (sched_cpu_idle(w, cpu) && sim_leg_measured(w->cfg.costs.switch_in_ns)) {
		/* the measured release -> switch-in; the waker's IPI is charged apart */
		bool brief = w->now - c->idle_since < SIM_SHORT_IDLE_NS &&
			     sim_leg_measured(w->cfg.costs.switch_in_short_ns);

		lat = sim_leg_at(brief ? w->cfg.costs.switch_in_short_ns : w->cfg.costs.switch_in_ns,
				 (uint32_t)vml_rand_below(&w->leg_rng, 1000000));
		lat = lat > w->cfg.costs.wake_ipi_ns ? lat - w->cfg.costs.wake_ipi_ns : 1;
	} else if (sched_cpu_idle(w, cpu))
		lat = sim_idle_wake_ns(&w->cfg.costs, w->now - c->idle_since);
	else
		lat = w->cfg.costs.wake_busy_ns;
	return lat ? lat : 1;
}

void sched_arrive(struct sim_world *w, struct sim_task *t)
{
	struct sim_cpu *c = &w->cpus[t->cpu];
	struct sim_task *curr = c->curr;

	c->claimed--;
	if (!curr) {
		place(w, c, t);
		enqueue(w, c, t);
		switch_to(w, c, t, false);
		return;
	}
	sched_update_curr(w, c);
	place(w, c, t);
	enqueue(w, c, t);
	if (curr->state == TASK_CHARGING && !c->need_resched &&
	    vdiff(curr->vruntime, curr->vprot) >= 0 && pick_eevdf(c, true) == t) {
		c->need_resched = true;
		if (preemptible_now(w, curr)) {
			resched(w, c);
			return;
		}
		if (w->cfg.costs.preempt == SIM_PREEMPT_LAZY)
			c->resched_at_tick = true;
	}
	sched_arm(w, c);
}
