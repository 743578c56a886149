/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim.h - the simulated machine: N virtual CPUs in virtual time, on which
 * the model's own code runs unchanged (docs/simulation.md).
 *
 * Functional model and timing model. The model's code decides who holds
 * what; time passes only through charges (platform.h: plat_charge_ns), the
 * scheduler's own costs (a context switch, a wake-up, an idle CPU's exit
 * from idle) and sleeps. How fast our C code runs never enters a result, so
 * the same command with the same seed gives the same figures on any machine
 * and under any load.
 *
 * Tasks are real threads, but only the one holding the baton runs; the
 * scheduler hands it over at platform calls (real threads keep TLS,
 * liburcu's and the sanitizers' bookkeeping working). The scheduler is the
 * kernel's in outline: per-CPU run queues picked by EEVDF with the kernel's
 * nice weights, wake-up placement and idle balancing, HZ ticks, the
 * preemption model, and wake-up latency that grows with how long the target
 * CPU idled.
 */
#ifndef VML_PLATFORM_SIM_H
#define VML_PLATFORM_SIM_H

#include <stdbool.h>
#include <stdint.h>

#define SIM_MAX_CPUS 1024
/* Idle-time buckets of the wake-up latency curve: upper bounds, in us (last: open). */
#define SIM_IDLE_BUCKETS 8
extern const unsigned int sim_idle_bucket_us[SIM_IDLE_BUCKETS];

enum sim_preempt {
	SIM_PREEMPT_NONE,	/* kernel work is preempted at its cond_resched() points only */
	SIM_PREEMPT_VOLUNTARY,	/* the same, for what we model */
	SIM_PREEMPT_FULL,	/* anywhere */
	SIM_PREEMPT_LAZY,	/* anywhere, but a fair task's wake-up waits for the tick */
};

/*
 * A leg measured with its spread: its deciles p10, p20, ..., p90 in ns
 * (all 0: not measured). A draw interpolates between them and extends the
 * two end segments to p0 and p100, so the race a leg decides is run with
 * the kernel's jitter instead of one fixed value.
 */
#define SIM_LEG_DECILES 9
/* An idle this short draws the short way in (the trace analysis's TRACE_SHORT_SLEEP_NS). */
#define SIM_SHORT_IDLE_NS 100000ULL

/*
 * struct sim_costs - what the scheduler's own steps cost, in virtual ns.
 * Each is measured on the live kernel (bench/simcost.c) or read from a
 * saved table; docs/simulation.md says what each stands for.
 */
struct sim_costs {
	uint64_t ctxsw_ns;		/* switching tasks on a busy CPU */
	uint64_t wake_busy_ns;		/* a wake-up's delay to a CPU that is running */
	uint64_t wake_ipi_ns;		/* the waker's own cost of waking a task onto another, idle CPU */
	uint64_t idle_wake_ns[SIM_IDLE_BUCKETS];	/* ...to a CPU idle for a bucket's time */
	uint64_t relax_ns;		/* one cpu_relax() (PAUSE) */
	uint64_t timer_slack_ns;	/* a sleep's timer slack (/proc/self/timerslack_ns) */
	uint64_t tick_ns;		/* 1/HZ */
	uint64_t base_slice_ns;		/* EEVDF request; 0: the kernel's default for the CPU count */
	enum sim_preempt preempt;
	/*
	 * From a traced live run of the scenario (bench/simcost.c): a
	 * reader's way back between two read()s - its release to its next
	 * attempt, releases no writer waited for - drawn for each PLAT_CALL
	 * charge instead of that charge; and a woken writer's way in - the
	 * release that woke it to its switch-in - drawn for each wake-up of
	 * an idle CPU instead of the idle curve (less the waker's IPI, which
	 * is charged apart).
	 */
	uint64_t way_back_ns[SIM_LEG_DECILES];
	uint64_t switch_in_ns[SIM_LEG_DECILES];
	/*
	 * The way in when the CPU had idled less than SIM_SHORT_IDLE_NS (a
	 * writer that lost the race sleeps only the next hold, and a vCPU that
	 * idled briefly comes back sooner); switch_in_ns is then the longer
	 * idles' alone. Unmeasured (zeros): switch_in_ns for every idle.
	 */
	uint64_t switch_in_short_ns[SIM_LEG_DECILES];
	/*
	 * An atomic read-modify-write's wait for a cache line another CPU
	 * wrote last (sim_cacheline.c); 0: lines are not modelled, every
	 * atomic costs relax_ns (the tables before this charge).
	 */
	uint64_t line_xfer_ns;
};

enum sim_explore {
	SIM_EXPLORE_OFF,	/* the scheduler model alone */
	SIM_EXPLORE_RANDOM,	/* at each sync point, switch with probability 1/2... */
	SIM_EXPLORE_PCT,	/* PCT: random priorities, d-1 change points */
};

struct sim_config {
	unsigned int cpus;
	uint64_t seed;			/* ties and exploration; same seed, same run */
	struct sim_costs costs;
	enum sim_explore explore;
	unsigned int pct_depth;		/* PCT's d (>= 1) */
	uint64_t pct_steps;		/* PCT: the expected number of sync points in a run */
};

struct sim_stats {
	uint64_t events;		/* scheduler events processed */
	uint64_t switches;		/* context switches */
	uint64_t wakeups;
	uint64_t handoffs;		/* baton hand-offs between threads */
	uint64_t sync_points;		/* plat_sync_point calls */
	uint64_t preemptions;		/* exploration-forced switches */
	uint64_t tasks;			/* tasks created */
	uint64_t virtual_ns;		/* virtual time at the end */
	uint64_t wall_ns;		/* host time the run took */
	uint64_t busy_ns;		/* CPU time charged over all CPUs */
	uint64_t line_xfers;		/* cache-line transfers charged (sim_cacheline.c) */
	uint64_t line_wait_ns;		/* their total wait for a busy line, transfers aside */
};

/*
 * sim_run - run @main(@arg) as the first task of a fresh simulated machine
 * and return when every task it started has ended. The calling thread is
 * the host: it waits. One machine at a time per process.
 * Return: 0, -EINVAL for a bad config, or -errno (threads).
 */
int sim_run(const struct sim_config *cfg, void *(*main)(void *), void *arg,
	    struct sim_stats *stats);

/* The base slice the kernel uses on @cpus CPUs: 0.75 ms x (1 + ilog2(min(cpus, 8))). */
uint64_t sim_default_base_slice(unsigned int cpus);

/* Does @q hold a measured leg? */
static inline bool sim_leg_measured(const uint64_t q[SIM_LEG_DECILES])
{
	return q[SIM_LEG_DECILES / 2] != 0;
}

/* A value of leg @q at the quantile @u_ppm (0..999999), as described above. */
uint64_t sim_leg_at(const uint64_t q[SIM_LEG_DECILES], uint32_t u_ppm);

/* The wake-up delay to a CPU that has been idle for @idle_ns. */
uint64_t sim_idle_wake_ns(const struct sim_costs *c, uint64_t idle_ns);

/* Names for reports. */
const char *sim_preempt_name(enum sim_preempt p);
int sim_preempt_parse(const char *s, enum sim_preempt *out);

#endif /* VML_PLATFORM_SIM_H */
