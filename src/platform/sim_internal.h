/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_internal.h - the simulated machine's state, shared by sim.c (the
 * world: tasks, the baton, events, futexes, timers), sim_sched.c (the CPUs
 * and the scheduler) and sim_rcu.c (RCU in virtual time).
 *
 * Locking: none. Everything here is touched only by the thread that holds
 * the baton (a task, or the host before the first task runs and after the
 * last one ends); the baton's hand-off is a release/acquire pair on the
 * receiver's word, so each holder sees what the previous one wrote.
 */
#ifndef VML_PLATFORM_SIM_INTERNAL_H
#define VML_PLATFORM_SIM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "platform/platform.h"
#include "platform/sim.h"
#include "platform/sim_calls.h"
#include "util/list.h"
#include "util/rand.h"

enum sim_state {
	TASK_CODE,		/* on its CPU, running code: holds or is about to get the baton */
	TASK_CHARGING,		/* on its CPU, spending charge_left of CPU time */
	TASK_RUNNABLE,		/* on a run queue */
	TASK_BLOCKED,		/* on a futex word (timer armed if it has a timeout) */
	TASK_SLEEPING,		/* until its timer */
	TASK_WAKING,		/* woken; arrives on cpu when its timer fires */
	TASK_DEAD,
};

struct sim_world;

struct sim_task {
	unsigned int id;
	char name[24];
	struct sim_world *w;
	pthread_t thread;
	_Atomic uint32_t baton;		/* [atomic] 1: run; the hand-off's word */
	enum sim_state state;
	int cpu;			/* the CPU it is on, is arriving on, or last ran on */
	int pinned;			/* -1, or the only CPU it may run on */
	int nice;
	uint64_t weight;		/* sched_prio_to_weight[nice + 20] */
	/* EEVDF, in weighted ns (vruntime advances by ns x 1024 / weight) */
	uint64_t vruntime, deadline, vprot;
	uint64_t charge_left;		/* CPU time still to spend before it runs code */
	enum plat_charge_kind charge_kind;
	uint64_t exec_start;		/* when its CPU time was last accounted */
	uint64_t cpu_ns;		/* CPU time it has been charged */
	struct list_head rq_node;	/* on its CPU's run queue while RUNNABLE */
	/* futex */
	_Atomic uint32_t *futex_word;	/* while BLOCKED on a word */
	struct list_head futex_node;	/* on the word's bucket, FIFO */
	bool futex_woken, timed_out;
	uint64_t timer_gen;		/* bumped to cancel an armed timer */
	/* thread */
	void *(*fn)(void *);
	void *arg, *result;
	_Atomic uint32_t exited;	/* 1 when fn has returned: joiners wait on it */
	/* RCU (sim_rcu.c) */
	unsigned int rcu_nesting;
	bool rcu_blocks_gp;		/* in a read-side section the current grace period waits for */
	uint64_t rcu_wait_gp;		/* BLOCKED in synchronize_rcu until this grace period ends */
	bool daemon;			/* the world ends without it (sim_rcu.c's worker) */
	/* exploration */
	uint64_t prio;			/* PCT priority: higher runs first */
	/* sim_spin_wait: the word whose atomic RMW by another task ends its spin; NULL: none */
	const void *spin_addr;
};

enum sim_ev_kind {
	EV_CPU,		/* a CPU's current task: charge done, or a tick to act on */
	EV_TIMER,	/* a task's timer: sleep end, futex timeout, wake-up arrival */
};

struct sim_ev {
	uint64_t time, seq;	/* ordered by time, then by when armed */
	uint64_t gen;		/* stale unless it matches the CPU's or task's */
	uint32_t kind, idx;
};

struct sim_cpu {
	unsigned int id;
	struct sim_task *curr;		/* NULL: idle */
	struct list_head rq;		/* RUNNABLE tasks, not curr */
	unsigned int nr_rq;
	uint64_t idle_since;		/* when it last went idle */
	uint64_t vbase;			/* the run queue's vruntime when it went idle */
	uint64_t ev_gen;		/* bumped to cancel its armed event */
	bool need_resched;
	bool resched_at_tick;		/* lazy preemption: act at the next tick */
	unsigned int claimed;		/* woken tasks on their way here */
	uint64_t busy_ns;
};

#define SIM_FUTEX_BUCKETS 1024

struct sim_world {
	struct sim_config cfg;
	uint64_t now;
	uint64_t base_slice_ns;
	struct sim_cpu *cpus;
	unsigned int ncpus;
	struct sim_task **tasks;
	unsigned int ntasks, tasks_cap, live;
	unsigned int unpinned_queued;	/* queued tasks idle balancing may move */
	struct sim_ev *heap;
	size_t nheap, heap_cap;
	uint64_t seq;
	/* tasks in TASK_CODE waiting for the baton at this instant, FIFO */
	struct sim_task **ready;
	size_t nready, ready_head, ready_cap;
	struct list_head futex[SIM_FUTEX_BUCKETS];
	_Atomic uint32_t host_baton;	/* [atomic] 1: the world has ended */
	bool ending;			/* the host is letting the daemons go */
	struct vml_rand rng;		/* ties, placement, exploration */
	struct vml_rand leg_rng;	/* the measured legs' draws: a stream of their own,
					 * so exploring changes none of them */
	struct sim_stats stats;
	uint64_t wall_start;
	/* PCT */
	uint64_t *pct_change;		/* sync-point numbers where the running task drops */
	unsigned int pct_nchange;
	uint64_t pct_low;		/* next priority below all others */
	struct sim_lines *lines;	/* cache lines' owners (sim_cacheline.c); NULL until needed */
	unsigned int nr_spinning;	/* tasks in sim_spin_wait */
	/* RCU (sim_rcu.c) */
	struct sim_rcu {
		_Atomic uint32_t gp_seq;	/* completed grace periods (waiters sleep on it) */
		uint32_t gp_wanted;		/* run grace periods until gp_seq reaches it */
		bool gp_running;
		unsigned int blockers;		/* read-side sections the running one waits for */
		struct sim_rcu_list { struct sim_rcu_node *head, **tail; } next, waiting, done;
		_Atomic uint32_t kick;		/* the worker's word: 1 when done is not empty */
		_Atomic uint32_t done_seq;	/* callbacks run (barrier waiters sleep on it) */
		uint32_t queued_seq;		/* callbacks queued */
		struct sim_task *worker;	/* runs the done callbacks; NULL until needed */
	} rcu;
};

/* sim.c */
/*
 * sim_futex_wake, and whether the caller pays the IPI of each task it wakes
 * onto another, idle CPU: not when the wake stands for the kernel's own
 * machinery (RCU's grace-period kthread and callbacks), which the task that
 * happened to end a grace period here does not run. The woken tasks' wake-up
 * latency is the same either way.
 */
int sim_futex_wake_ipi(_Atomic uint32_t *word, int n, bool charge_ipi);
int sim_spawn(struct sim_world *w, const struct plat_thread_opts *o, void *(*fn)(void *),
	      void *arg, struct sim_task **out);
void sim_arm_timer(struct sim_world *w, struct sim_task *t, uint64_t when);
void sim_arm_cpu(struct sim_world *w, struct sim_cpu *c, uint64_t when);
void sim_make_ready(struct sim_world *w, struct sim_task *t);
void sim_wake(struct sim_world *w, struct sim_task *t);
bool sim_wake_delayed(struct sim_world *w, struct sim_task *t, uint64_t ipi_ns, int waker_cpu);
void sim_schedule(struct sim_task *self);
/* A sync point (sim_sync_point) whose atomic also waited @line_ns for its cache line. */
void sim_sync_point_line(struct sim_task *t, uint64_t line_ns);
/* sim_cacheline.c */
/*
 * The wait of an atomic read-modify-write by CPU @cpu on the line of @addr,
 * now: 0 when @cpu wrote it last, else until the line is free plus a
 * transfer; the line is then @cpu's and busy until then.
 */
uint64_t sim_line_rmw(struct sim_world *w, int cpu, const void *addr);
void sim_lines_free(struct sim_world *w);
/* sim_sched.c */
uint64_t sim_nice_weight(int nice);
void sched_update_curr(struct sim_world *w, struct sim_cpu *c);
void sched_arm(struct sim_world *w, struct sim_cpu *c);
void sched_cpu_event(struct sim_world *w, struct sim_cpu *c);
void sched_arrive(struct sim_world *w, struct sim_task *t);
void sched_leave(struct sim_world *w, struct sim_cpu *c);
void sched_yield_curr(struct sim_world *w, struct sim_cpu *c);
int sched_select_cpu(struct sim_world *w, struct sim_task *t);
uint64_t sched_wake_latency(struct sim_world *w, int cpu);
/* Whether @cpu runs nothing and nothing is on its way to it. */
bool sched_cpu_idle(const struct sim_world *w, int cpu);
/* sim_rcu.c */
void sim_rcu_world_end(struct sim_world *w);
void sim_rcu_init(struct sim_world *w);

#endif /* VML_PLATFORM_SIM_INTERNAL_H */
