// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_rcu.c - RCU for simulated tasks (sync/rcu.c calls here for them):
 * liburcu's grace periods wait for its readers on the host, and a reader
 * that does not hold the baton can never get there, so a simulated machine
 * keeps its own.
 *
 * A grace period starts when a callback or a synchronize_rcu() needs one.
 * It notes every task inside a read-side section at that moment and ends
 * when the last of them leaves its section (at once if there is none).
 * Callbacks queued before it started then go to a worker task (a daemon at
 * nice 19, on any CPU, as the kernel's RCU callbacks run in softirq or
 * rcuc), never run inside the reader's unlock, which may hold locks a
 * callback takes. Grace periods and callbacks cost no virtual time; what
 * the kernel spends on them is not charged (docs/simulation.md).
 */
#include <stdatomic.h>
#include <stdint.h>

#include "platform/sim_calls.h"
#include "platform/sim_internal.h"
#include "util/compiler.h"

static void list_add_cb(struct sim_rcu_list *l, struct sim_rcu_node *h)
{
	h->next = NULL;
	if (!l->head)
		l->tail = &l->head;
	*l->tail = h;
	l->tail = &h->next;
}

static void list_splice_cb(struct sim_rcu_list *dst, struct sim_rcu_list *src)
{
	if (!src->head)
		return;
	if (!dst->head)
		dst->tail = &dst->head;
	*dst->tail = src->head;
	dst->tail = src->tail;
	src->head = NULL;
	src->tail = &src->head;
}

void sim_rcu_init(struct sim_world *w)
{
	w->rcu.next.tail = &w->rcu.next.head;
	w->rcu.waiting.tail = &w->rcu.waiting.head;
	w->rcu.done.tail = &w->rcu.done.head;
}

static void *rcu_worker(void *arg)
{
	struct sim_world *w = arg;

	for (;;) {
		struct sim_rcu_node *h;
		uint32_t n = 0;

		while (!w->rcu.done.head) {
			atomic_store_explicit(&w->rcu.kick, 0, memory_order_relaxed);
			sim_futex_wait(&w->rcu.kick, 0, 0);
		}
		h = w->rcu.done.head;
		w->rcu.done.head = NULL;
		w->rcu.done.tail = &w->rcu.done.head;
		while (h) {
			struct sim_rcu_node *next = h->next;

			h->fn(h);
			h = next;
			n++;
		}
		atomic_fetch_add_explicit(&w->rcu.done_seq, n, memory_order_relaxed);
		sim_futex_wake_ipi(&w->rcu.done_seq, INT32_MAX, false);
	}
	return NULL;
}

static void gp_start(struct sim_world *w);

/* The running grace period is over. Context: a task holds the baton. */
static void gp_end(struct sim_world *w)
{
	w->rcu.gp_running = false;
	list_splice_cb(&w->rcu.done, &w->rcu.waiting);
	atomic_fetch_add_explicit(&w->rcu.gp_seq, 1, memory_order_relaxed);
	/* the kernel's grace-period kthread wakes them, not the task that ended it */
	sim_futex_wake_ipi(&w->rcu.gp_seq, INT32_MAX, false);
	if (w->rcu.done.head) {
		atomic_store_explicit(&w->rcu.kick, 1, memory_order_relaxed);
		sim_futex_wake_ipi(&w->rcu.kick, 1, false);
	}
	if (w->rcu.next.head ||
	    (int32_t)(w->rcu.gp_wanted - atomic_load_explicit(&w->rcu.gp_seq,
							      memory_order_relaxed)) > 0)
		gp_start(w);
}

static void gp_start(struct sim_world *w)
{
	if (w->rcu.gp_running)
		return;
	w->rcu.gp_running = true;
	list_splice_cb(&w->rcu.waiting, &w->rcu.next);
	w->rcu.blockers = 0;
	for (unsigned int i = 0; i < w->ntasks; i++) {
		struct sim_task *t = w->tasks[i];

		if (t->rcu_nesting && t->state != TASK_DEAD) {
			t->rcu_blocks_gp = true;
			w->rcu.blockers++;
		}
	}
	if (!w->rcu.blockers)
		gp_end(w);
}

void sim_rcu_read_lock(void)
{
	sim_sync_point();
	plat_sim_self->rcu_nesting++;
}

void sim_rcu_read_unlock(void)
{
	struct sim_task *t = plat_sim_self;

	VML_BUG_ON(!t->rcu_nesting);
	sim_sync_point();
	if (--t->rcu_nesting || !t->rcu_blocks_gp)
		return;
	t->rcu_blocks_gp = false;
	if (!--t->w->rcu.blockers)
		gp_end(t->w);
}

bool sim_rcu_read_held(void)
{
	return plat_sim_self->rcu_nesting > 0;
}

void sim_rcu_call(struct sim_rcu_node *head, void (*fn)(struct sim_rcu_node *))
{
	struct sim_world *w = plat_sim_self->w;

	if (!w->rcu.worker) {
		struct plat_thread_opts o = { .cpu = -1, .nice = 19, .name = "rcu", .daemon = true };

		VML_BUG_ON(sim_spawn(w, &o, rcu_worker, w, &w->rcu.worker));
	}
	head->fn = fn;
	list_add_cb(&w->rcu.next, head);
	w->rcu.queued_seq++;
	gp_start(w);
}

void sim_rcu_synchronize(void)
{
	struct sim_world *w = plat_sim_self->w;
	uint32_t seq = atomic_load_explicit(&w->rcu.gp_seq, memory_order_relaxed);
	/* a grace period that starts after now: the next, or the one after the running one */
	uint32_t want = seq + (w->rcu.gp_running ? 2 : 1);

	VML_BUG_ON(plat_sim_self->rcu_nesting);
	if ((int32_t)(want - w->rcu.gp_wanted) > 0)
		w->rcu.gp_wanted = want;
	gp_start(w);
	plat_sim_self->rcu_wait_gp = want;
	while ((int32_t)(want - (seq = atomic_load_explicit(&w->rcu.gp_seq,
							   memory_order_relaxed))) > 0)
		sim_futex_wait(&w->rcu.gp_seq, seq, 0);
	plat_sim_self->rcu_wait_gp = 0;
}

void sim_rcu_barrier(void)
{
	struct sim_world *w = plat_sim_self->w;
	uint32_t want = w->rcu.queued_seq, seq;

	while ((int32_t)(want - (seq = atomic_load_explicit(&w->rcu.done_seq,
							   memory_order_relaxed))) > 0)
		sim_futex_wait(&w->rcu.done_seq, seq, 0);
}

/* Context: the host, after every task has ended: the callbacks still queued run now. */
void sim_rcu_world_end(struct sim_world *w)
{
	struct sim_rcu_list all = { NULL, &all.head };
	struct sim_rcu_node *h;

	list_splice_cb(&all, &w->rcu.done);
	list_splice_cb(&all, &w->rcu.waiting);
	list_splice_cb(&all, &w->rcu.next);
	for (h = all.head; h;) {
		struct sim_rcu_node *next = h->next;

		h->fn(h);
		h = next;
	}
}
