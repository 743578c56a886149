/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run.h - `vmalock race`: a modifier cycling the VMAs at a read() boundary
 * (modify.h) while reader threads read the view across that boundary and
 * judge every read against the contract (contract.h).
 *
 * One phase per (view, lock policy, modification), all on one target: the
 * layout range cleared and built again, the boundary found in the view's first read, the states of
 * one cycle captured while nothing moves, then the modifier and the readers
 * run for the phase's time. The model's modifier and readers are threads on
 * one vml_mm; on the live kernel the modifier drives the live child through
 * target_apply() and the readers read /proc/PID/<view> (or issue
 * PROCMAP_QUERY on /proc/PID/maps) themselves.
 *
 * Reads: two consecutive page-sized read() calls from the start of the view
 * (maps, smaps, numa_maps); a walk of PROCMAP_QUERY calls from the VMA
 * before A (query); the whole file (smaps_rollup).
 *
 * The library never prints: results come back per phase through a callback.
 */
#ifndef VML_RACE_RUN_H
#define VML_RACE_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "platform/sim.h"
#include "race/contract.h"
#include "race/modify.h"
#include "spaces/target.h"

#define RACE_MAX_VIEWS 5
/* PCT's priority drops fall among the first this many sync points of a schedule */
#define RACE_PCT_STEPS 20000

struct race_opts {
	enum target_kind target;
	enum vml_view views[RACE_MAX_VIEWS];	/* TARGET_VIEW_QUERY for query */
	unsigned int nr_views;
	enum vml_lock_policy locks[4];		/* the model's; live uses the kernel's */
	unsigned int nr_locks;
	bool kernel_transients;			/* model: vml_sys_config.kernel_transients */
	unsigned int noise_us;			/* model, per-VMA policies: hold a reader up
						 * for 0..noise_us us after it drops a VMA of A
						 * or B (0: never) */
	enum race_mod mods[RACE__MODS];
	unsigned int nr_mods;
	double seconds;				/* per phase */
	uint64_t seed;
	unsigned int readers;			/* reader threads per phase */
	unsigned int regions;			/* 0: RACE_DEFAULT_REGIONS */
	unsigned int broken;			/* VML_BROKEN_* while readers run (model) */
	volatile sig_atomic_t *stop;		/* set asynchronously: end early; may be NULL */
	/*
	 * The simulated machine (docs/simulation.md): with cpus > 0 each phase
	 * runs, setup and threads, as a task of a fresh machine, once per
	 * schedule, on a fresh model, until a schedule shows a violation.
	 */
	unsigned int cpus;
	unsigned int schedules;			/* --explore K: per phase; 0: one */
	enum sim_explore explore;		/* how schedules differ */
	unsigned int pct_depth;			/* PCT's d */
	uint64_t sim_seed;			/* schedule k runs seed sim_seed + k */
	struct sim_costs sim_sched;		/* the scheduler's charges */
	struct vml_kernel_costs sim_kernel;	/* the model's system calls and faults */
	uint64_t sim_record_ns, sim_page_ns, sim_call_ns;	/* the readers' */
};

struct race_phase {
	enum vml_view view;
	bool kernel_lock;		/* live: the kernel's own locking */
	bool kernel_per_vma;		/* live: ... which is per-VMA locks for this view
					 * (host_view_per_vma: the host profile) */
	enum vml_lock_policy lock;	/* the model's policy */
	enum race_mod mod;
	bool per_read;			/* checked as one snapshot per read() */
	const char *skipped;		/* not run, and why (the view is not there) */
	int error;			/* the phase could not run: -errno, see error_why */
	char error_why[512];
	unsigned int boundary;		/* region A */
	unsigned int nr_states;
	uint64_t reads;			/* reads (pairs, walks, rollups) checked */
	uint64_t violations;		/* reads that broke the contract */
	uint64_t by_rule[RACE__RULES];
	uint64_t notes[RACE__NOTES];	/* reads with each allowed observation */
	uint64_t cycles;		/* modification cycles completed */
	uint64_t reads_to_first;	/* reads checked, all readers, up to the first violation */
	uint64_t sched_reads_to_first;	/* simulated: ... in the schedule that showed it */
	unsigned int schedules;		/* simulated: schedules run */
	uint64_t first_seed;		/* simulated: the seed of the schedule that showed it */
	double seconds;
	struct race_verdict first;	/* the first violation */
	char *first_text;		/* its reads, annotated; NULL if none */
};

typedef void (*race_phase_fn)(const struct race_phase *ph, void *arg);

/*
 * race_run - run every phase of @o, reporting each through @fn.
 * Return: 0, or -errno if the run could not go on (a phase's own failure is
 *         in its ->error and the run goes on).
 */
int race_run(const struct race_opts *o, race_phase_fn fn, void *arg);

/*
 * race_views_available - which of @views a @kind target offers (the model's
 * smaps family is not there yet); one answer per view in @avail.
 * Return: 0, or -errno if no target could be created.
 */
int race_views_available(enum target_kind kind, const enum vml_view *views, unsigned int nr,
			 bool *avail);

#endif /* VML_RACE_RUN_H */
