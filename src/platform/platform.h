/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * platform.h - what the model's threads ask of the machine they run on: the
 * time, CPU time spent on the kernel's behalf, sleeping on a futex word and
 * waking sleepers, threads with a CPU and a nice value, and a pause. The
 * model's own layers (sync, tree, mm, proc, khugepaged) and the benchmarks'
 * model threads ask through here and nowhere else.
 *
 * Two machines answer, chosen per thread:
 *   - the host: real threads, CLOCK_MONOTONIC, the futex system call; a
 *     charge is a busy spin of that many nanoseconds;
 *   - the simulated machine (sim.h): a thread that sim_run() started is a
 *     task on one of N virtual CPUs in virtual time. Only one task runs at a
 *     time (it holds the baton); each call below is a point where the
 *     simulator's scheduler may hand the baton to another task, and a charge
 *     advances the task's CPU through virtual time instead of spinning.
 * A thread is simulated exactly when plat_sim_self is set, so the same
 * binary runs both, side by side (a live row, a real-thread model row and a
 * simulated row of one `vmalock run`).
 */
#ifndef VML_PLATFORM_PLATFORM_H
#define VML_PLATFORM_PLATFORM_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/clock.h"
#include "util/compiler.h"

struct sim_task;
/* The simulated task this thread is, or NULL on the host (sim.c sets it). */
extern _Thread_local struct sim_task *plat_sim_self;

static inline bool plat_simulated(void)
{
	return unlikely(plat_sim_self != NULL);
}

uint64_t sim_now_ns(void);

/* The time: virtual for a simulated task, CLOCK_MONOTONIC otherwise. */
static inline uint64_t plat_now_ns(void)
{
	return plat_simulated() ? sim_now_ns() : vml_now_ns();
}

uint64_t sim_task_cpu_ns(void);
int sim_task_cpu(void);

/* The CPU the calling thread runs on: the simulated one for a simulated task. */
static inline int plat_cpu_current(void)
{
	return plat_simulated() ? sim_task_cpu() : sched_getcpu();
}

/* CPU time the calling thread has used: charged time for a simulated task. */
static inline uint64_t plat_thread_cpu_ns(void)
{
	return plat_simulated() ? sim_task_cpu_ns() : vml_thread_cpu_ns();
}

/*
 * Kinds of CPU time a charge stands for. Kernel work is preempted only at
 * its end (a cond_resched() point) unless the preemption model is full;
 * user-mode work (a CPU hog's loop) can be preempted anywhere.
 */
enum plat_charge_kind {
	PLAT_KERNEL,
	PLAT_USER,
	/*
	 * Kernel work: a reader's way out of one read() and into the next.
	 * The simulated machine draws it from the measured leg when its
	 * table has one (sim_costs.way_back_ns) instead of the fixed @ns.
	 */
	PLAT_CALL,
};

/*
 * plat_charge_ns - the calling thread spends @ns of CPU time doing what the
 * kernel would do at this point (walking pages, showing a record, a system
 * call's entry and exit). Host: spins for @ns (vml_spin_ns: the model's own
 * code is cheaper than the kernel's, so the calibration charges the
 * difference). Simulated: the task's CPU is busy for @ns of virtual time,
 * during which other tasks run; the full kernel cost is charged.
 */
void plat_charge_ns(uint64_t ns, enum plat_charge_kind kind);

/* A spin-wait's pause (cpu_relax); simulated: a pause's worth of CPU time. */
void plat_cpu_relax(void);
/* sched_yield(). */
void plat_yield(void);
/* Sleep @ns (nanosleep; simulated: with the host's timer slack). */
void plat_sleep_ns(uint64_t ns);
/*
 * plat_sync_point - a synchronisation point of the model (a lock is taken or
 * released): nothing on the host; in a simulation a place where an
 * exploring schedule may switch tasks (sim.h, --explore).
 */
void sim_sync_point(void);
static inline void plat_sync_point(void)
{
	if (plat_simulated())
		sim_sync_point();
}

/*
 * plat_atomic_rmw - the model's synchronisation is about to do an atomic
 * read-modify-write of the word at @addr (a lock's count): nothing on the
 * host, where the hardware does it; in a simulation a sync point that also
 * costs the word's cache line its transfer from the CPU that wrote it last,
 * after any transfer already under way (sim_cacheline.c).
 */
void sim_atomic_rmw(const void *addr);
static inline void plat_atomic_rmw(const void *addr)
{
	if (plat_simulated())
		sim_atomic_rmw(addr);
}

/*
 * plat_spin_wait - one step of a spin on the word at @addr: on the host a
 * pause (the caller loops); in a simulation the task spins as one charge
 * of up to @max_ns that ends early when another task does an atomic
 * read-modify-write of @addr (plat_atomic_rmw), so a spin that lasts as
 * long as the owner runs costs an event a check, not one a pause.
 */
void sim_spin_wait(const void *addr, uint64_t max_ns);
static inline void plat_spin_wait(const void *addr, uint64_t max_ns)
{
	if (plat_simulated())
		sim_spin_wait(addr, max_ns);
	else
		plat_cpu_relax();
}

/* futex(2) on a private 32-bit word; the contract of sync/futex.h. */
int plat_futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns);
int plat_futex_wake(_Atomic uint32_t *word, int n);

/* Where a new thread runs and at what priority. */
struct plat_thread_opts {
	int cpu;		/* pinned to this CPU; -1: anywhere */
	int nice;		/* -20..19 */
	const char *name;	/* for the simulator's reports; may be NULL */
	bool daemon;		/* simulated: the machine stops without waiting for it */
};

/* A thread made by plat_thread_create: a pthread, or a simulated task too. */
struct plat_thread {
	pthread_t thread;
	struct sim_task *task;	/* NULL: a host thread */
};

/*
 * plat_thread_create - start @fn(@arg) pinned and niced as @o says: a host
 * thread when called from the host, a simulated task when called from one.
 * Return: 0 or -errno.
 */
int plat_thread_create(struct plat_thread *t, const struct plat_thread_opts *o,
		       void *(*fn)(void *), void *arg);
/* Wait for @t to end; returns its result. */
void *plat_thread_join(struct plat_thread *t);
/* Pin the calling thread to @cpu (-1: no-op). Return: 0 or -errno. */
int plat_pin_self(int cpu);
/* Set the calling thread's nice value. Return: 0 or -errno. */
int plat_nice_self(int nice);
/*
 * Is simulated task @t on a CPU now (running or charging)? The host cannot
 * tell: NULL (a host thread) counts as on a CPU.
 */
bool sim_task_on_cpu(const struct sim_task *t);
static inline bool plat_task_on_cpu(const struct sim_task *t)
{
	return !t || sim_task_on_cpu(t);
}

#endif /* VML_PLATFORM_PLATFORM_H */
