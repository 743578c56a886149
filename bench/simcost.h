/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * simcost.h - the simulated machine's table of charges (docs/simulation.md):
 * what each step costs the live kernel, measured on this host or read from
 * a saved table (--sim-costs FILE), printed with every simulated run and
 * written to its JSON, so that a run can be repeated byte for byte.
 */
#ifndef VML_BENCH_SIMCOST_H
#define VML_BENCH_SIMCOST_H

#include <stdio.h>

#include "platform/sim.h"
#include "vmalock/mm.h"

struct json_t;
struct bench_calibration;

struct bench_sim_costs {
	struct sim_costs sched;		/* the scheduler's own */
	struct vml_kernel_costs kernel;	/* system calls and faults, charged by the model */
	/* what a /proc reader's steps cost the kernel, whole (not the model's difference) */
	uint64_t record_ns;		/* per record (VMA) shown */
	uint64_t page_ns;		/* per anonymous page walked */
	uint64_t call_ns;		/* per read() call, outside the lock */
	/*
	 * The legs' fit (sched.way_back_ns): the share of the traced races
	 * the mapper won, and the shift of the reader's leg that gives it.
	 */
	double race_won;
	int64_t way_back_shift_ns;
	/* race_won by the mapper's sleep (< 100 us, longer), with sched.switch_in_short_ns */
	double race_won_slept[2];
	/*
	 * bench exec-churn's alone (the others charge none of them): the
	 * file mapping lock's work (vml_kernel_costs' i_mmap_insert_ns,
	 * i_mmap_remove_ns, vma_store_ns), and an execution's work outside
	 * the i_mmap locks and the model's other charges (fork, exec, ELF
	 * parsing, the program, exit), fitted so that one simulated worker
	 * executes as fast as one live loop; 0: not known
	 */
	uint64_t i_mmap_insert_ns, i_mmap_remove_ns, vma_store_ns;
	uint64_t exec_ns;
	char source[160];		/* "measured on this host" or the file */
};

/*
 * bench_sim_costs_measure - measure the scheduler's and the system calls'
 * costs on this host (about a second); the readers' from @cal (the
 * scenario's calibration against the live kernel), which must be done.
 * Return: 0 or -errno.
 */
int bench_sim_costs_measure(const struct bench_calibration *cal, struct bench_sim_costs *out);
/*
 * Load the table from @path: a JSON document with a "sim_costs" object at
 * its top (any simulated run's --json output, or a file of its own).
 * Return: 0 or -errno; @err says what is wrong.
 */
int bench_sim_costs_load(const char *path, struct bench_sim_costs *out, char *err, size_t errlen);
/*
 * The address space the simulated mm held besides its region ("sim_layout":
 * the live mapper's own mappings when the table was measured), from @path;
 * *@out NULL when the file has none. Return: 0 or -errno (@err says why).
 */
struct bench_mirror;
int bench_sim_layout_load(const char *path, struct bench_mirror **out, char *err, size_t errlen);
/*
 * bench_sim_costs_get - the table from @file, or measured now (with @cal,
 * as bench_sim_costs_measure) when @file is NULL; on failure one line on
 * stderr, beginning "@who: ", says why. Return: 0 or -errno.
 */
int bench_sim_costs_get(const char *who, const char *file, const struct bench_calibration *cal,
			struct bench_sim_costs *out);
struct json_t *bench_sim_costs_json(const struct bench_sim_costs *c);
void bench_sim_costs_print(FILE *f, const struct bench_sim_costs *c);
/* The simulator's configuration for @cpus CPUs and @seed. */
struct sim_config bench_sim_config(const struct bench_sim_costs *c, unsigned int cpus,
				   uint64_t seed);

#endif /* VML_BENCH_SIMCOST_H */
