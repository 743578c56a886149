// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sim_cacheline.c - cache-line contention on the simulated machine: what an
 * atomic read-modify-write costs when the line holding its word was written
 * last by another CPU (docs/simulation.md, "Cache lines").
 *
 * The model. A line (64 bytes, keyed by the word's address) has an owner,
 * the CPU that wrote it last, and a time until which it is busy moving to
 * that owner. An atomic RMW by CPU c at time t on a line that c owns costs
 * nothing more than the atomic itself (relax_ns, charged by the sync
 * point). On a line another CPU owns it waits until the line is free - the
 * transfers already under way, one after the other - then one transfer,
 * line_xfer_ns; the line is then c's and busy until then. So RMWs on one
 * line serialise: N CPUs that each need the line once per operation get at
 * most one operation per transfer between them, whatever N is, which is
 * what decides how far the faults' down_read()/up_read() of one mm's
 * mmap_lock scale. A line nobody has written yet is taken without a
 * transfer (its first fetch from memory is not charged).
 *
 * What it leaves out: reads (a spinning load shares the line, and costs
 * relax_ns like any pause), the distance of a transfer (one cost, whether
 * the line moves between two hyperthreads or two sockets: the measured
 * one, bench/simcost.c), and every line the model does not announce: only
 * the RMWs of the rwsem's lock and unlock entries and of the VMA read lock
 * go through plat_atomic_rmw(); spinlocks, page-table locks, the page
 * allocator's and counters' lines cost nothing more.
 *
 * Determinism. Requests are taken in the order tasks run code, which is
 * the virtual-time order (sim.c); the table is looked up by address and
 * never iterated, so which lines two words share is all that host
 * addresses decide, and that is the same from run to run for the same
 * allocations.
 *
 * Locking: none, as the rest of the world: only the baton holder touches it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "platform/sim_calls.h"
#include "platform/sim_internal.h"
#include "util/alloc.h"

#define LINE_SHIFT 6		/* 64-byte lines */

struct sim_line {
	uintptr_t key;		/* line number + 1; 0: an empty slot */
	int owner;		/* the CPU that wrote it last */
	uint64_t free_at;	/* busy moving to owner until then */
};

struct sim_lines {
	struct sim_line *slot;
	size_t cap, used;	/* cap a power of two; used <= cap / 2 */
};

static size_t line_hash(uintptr_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 17) & (cap - 1);
}

static struct sim_line *line_slot(struct sim_line *slot, size_t cap, uintptr_t key)
{
	/* Ends: the table is at most half full, so an empty slot comes. */
	for (size_t i = line_hash(key, cap);; i = (i + 1) & (cap - 1))
		if (slot[i].key == key || !slot[i].key)
			return &slot[i];
}

static void lines_oom(void)
{
	fprintf(stderr, "vmalock: simulator: out of memory for cache lines\n");
	abort();
}

static void lines_grow(struct sim_lines *l)
{
	size_t cap = l->cap ? l->cap * 2 : 1024;
	struct sim_line *slot = vml_zalloc(cap * sizeof(*slot));

	if (!slot)
		lines_oom();
	for (size_t i = 0; i < l->cap; i++)
		if (l->slot[i].key)
			*line_slot(slot, cap, l->slot[i].key) = l->slot[i];
	vml_free(l->slot);
	l->slot = slot;
	l->cap = cap;
}

static struct sim_line *line_get(struct sim_world *w, const void *addr)
{
	uintptr_t key = ((uintptr_t)addr >> LINE_SHIFT) + 1;
	struct sim_lines *l = w->lines;
	struct sim_line *s;

	if (!l) {
		l = w->lines = vml_zalloc(sizeof(*l));
		if (!l)
			lines_oom();
	}
	if ((l->used + 1) * 2 > l->cap)
		lines_grow(l);
	s = line_slot(l->slot, l->cap, key);
	if (!s->key) {
		*s = (struct sim_line){ .key = key, .owner = -1 };
		l->used++;
	}
	return s;
}

uint64_t sim_line_rmw(struct sim_world *w, int cpu, const void *addr)
{
	uint64_t xfer = w->cfg.costs.line_xfer_ns, start;
	struct sim_line *s;

	if (!xfer)
		return 0;
	s = line_get(w, addr);
	if (s->owner < 0 || s->owner == cpu) {
		/* its own: only a transfer to this CPU still under way (a preempted task's) */
		s->owner = cpu;
		return s->free_at > w->now ? s->free_at - w->now : 0;
	}
	start = s->free_at > w->now ? s->free_at : w->now;
	w->stats.line_xfers++;
	w->stats.line_wait_ns += start - w->now;
	s->owner = cpu;
	s->free_at = start + xfer;
	return s->free_at - w->now;
}

/*
 * End the spins of the tasks waiting on @addr: each runs its check next.
 * Called by the task about to do the RMW, once it holds the baton again:
 * the RMW is done in its code before any spinner runs.
 */
static void spin_wake(struct sim_world *w, const struct sim_task *self, const void *addr)
{
	for (unsigned int i = 0; i < w->ntasks; i++) {
		struct sim_task *u = w->tasks[i];
		struct sim_cpu *c;

		if (u == self || u->spin_addr != addr)
			continue;
		if (u->state == TASK_RUNNABLE) {
			u->charge_left = 0;	/* preempted mid-spin: it checks when it runs */
			continue;
		}
		if (u->state != TASK_CHARGING)
			continue;
		c = &w->cpus[u->cpu];
		sched_update_curr(w, c);
		u->charge_left = 0;
		sched_arm(w, c);
	}
}

void sim_atomic_rmw(const void *addr)
{
	struct sim_task *t = plat_sim_self;

	sim_sync_point_line(t, sim_line_rmw(t->w, t->cpu, addr));
	if (t->w->nr_spinning)
		spin_wake(t->w, t, addr);
}

void sim_spin_wait(const void *addr, uint64_t max_ns)
{
	struct sim_task *t = plat_sim_self;

	t->spin_addr = addr;
	t->w->nr_spinning++;
	sim_charge(max_ns ? max_ns : 1, PLAT_KERNEL);
	t->w->nr_spinning--;
	t->spin_addr = NULL;
}

void sim_lines_free(struct sim_world *w)
{
	if (!w->lines)
		return;
	vml_free(w->lines->slot);
	vml_free(w->lines);
	w->lines = NULL;
}
