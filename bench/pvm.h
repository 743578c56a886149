/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pvm.h - proc-vs-map (procvsmap.c), the scenario `vmalock run` runs: its
 * options, its rows, and the pieces split over its files:
 *
 *   procvsmap.c   the samples (model and live) and the rows; the descriptor
 *   pvm_report.c  the table, the JSON, the plot, and `vmalock run`'s verdict
 *   pvm_trace.c   --trace: the lock dynamics from traces (pvm_trace.h)
 *   mirror.c      the live mapper's own mappings, copied into the model's mm
 */
#ifndef VML_BENCH_PVM_H
#define VML_BENCH_PVM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "internal.h"
#include "layout.h"
#include "simcost.h"

struct pvm_opts {
	enum vml_view view;		/* --view; TARGET_VIEW_QUERY for PROCMAP_QUERY */
	struct cli_ulist readers;	/* --readers N[,N...] */
	struct bench_mapper_opts mapper;	/* --mb, --duration, --seed, --rcu-callbacks */
	unsigned int busy;		/* --busy: CPU hogs on the readers' CPU */
	double busyduration_ms;		/* --busyduration: spin, sleep 1 ms; 0: spin on */
	struct bench_charge_opts charge;	/* --record-ns, --page-ns, --call-ns */
	bool kernel_transients;		/* --kernel-transients (model rows) */
	bool region_only;		/* --region-only: the model mm without the live
					 * mapper's own mappings (mirror.c) */
	unsigned int busy_cpus;		/* --busy-cpus K: simulated rows spread the readers
					 * over the last K CPUs, each with --busy hogs */
	const char *layout_path;	/* --layout FILE.ops */
	struct bench_layout *layout;	/* ...loaded by the check (layout.h), freed with
					 * the run; NULL: none */
};

extern const struct bench_scenario bench_proc_vs_map;

struct pvm_sample {
	double p50_us, p99_us, max_us;
	double avg_us;			/* mean: mapper.c's opavg */
	uint64_t ops;			/* mmap() + munmap() calls */
	uint64_t vmas;			/* VMAs in the address space at the end */
	uint64_t passes;		/* whole views the readers read, all together */
	uint64_t fallbacks;		/* model: the readers' fallbacks to mmap_lock */
	uint64_t fails;			/* mapper calls that failed (counted, still timed) */
	uint64_t layout_vmas;		/* --layout: its VMAs found in the sample's mm */
	/*
	 * The page walk's cost per anonymous page, ns: live samples, what their
	 * own mapper's region cost the kernel, read uncontended before the
	 * readers started; model samples, the charge their readers paid (the
	 * live sample of the same round and readers, less the model's own).
	 * 0: not measured / not charged.
	 */
	double live_page_ns, charged_page_ns;
	double live_run_page_ns;	/* live: its readers' big read()s a page (walk_sampler); 0: none */
	struct lat_hist *hist;		/* every call's latency */
};

struct pvm_dyn;

struct pvm_row {
	enum target_kind target;
	enum vml_lock_policy lock;	/* model rows */
	enum vml_steal_policy steal;	/* model rows (a live row's are the kernel's) */
	bool sim;			/* a model row on the simulated machine */
	unsigned int cpus;		/* ...of this many CPUs */
	struct pvm_dyn *dyn;		/* --trace: what the traces said, else NULL */
	unsigned int readers;
	struct pvm_sample *s;		/* [samples], nr filled */
	unsigned int nr;
	/* over the samples: */
	double p50_us, p99_us;		/* medians */
	double avg_us;			/* median of per-sample means: the seeds' "median" */
	double max_us, max_min_us, max_worst_us;	/* median, min and max of per-sample max */
	double ops, vmas, passes;	/* medians */
	double fallbacks;		/* model: median of per-sample fallbacks */
	double layout_vmas;		/* --layout: median of per-sample layout_vmas */
};

struct pvm_result {
	const struct bench_common *c;
	const struct pvm_opts *o;
	unsigned int steals;		/* the model rows' steal policies */
	struct bench_calibration cal;	/* model readers' charge (cal.done: measured) */
	double record_ns;		/* the charge applied (measured or --record-ns) */
	double call_ns;			/* per read() call (measured or --call-ns) */
	double page_ns;			/* per page walked (measured with record_ns) */
	bool paired_page_ns;		/* model samples take page_ns from their round's live one */
	enum vml_view view;
	struct pvm_row *rows;
	unsigned int nr_rows;
	int mapper_cpu, reader_cpu;	/* -1: not pinned */
	struct pvm_tracer *tracer;	/* --trace */
	struct pvm_tracer *leg_tracer;	/* the simulated rows' legs (root; measure_legs) */
	struct bench_sim_costs simcosts;	/* simulated rows' charges */
	struct sim_stats simstats;	/* summed over the simulated samples */
	struct bench_mirror *mirror;	/* the live mapper's own mappings, for the model's
					 * mm; NULL: the model's mm holds the region alone
					 * (--region-only, or no live kernel) */
};

/* The row for (@target, @lock, @readers), or NULL; a live row has no @lock of its own. */
const struct pvm_row *pvm_find(const struct pvm_result *res, enum target_kind target,
			       enum vml_lock_policy lock, unsigned int readers);
/* The same among the simulated rows. */
const struct pvm_row *pvm_find_sim(const struct pvm_result *res, enum vml_lock_policy lock,
				   unsigned int readers);
/* A row's target as tables write it: "model", "live", "sim". */
const char *pvm_target_label(const struct pvm_row *row);
/* A row's lock and steal policy as tables and JSON write them ("kernel": a live row's). */
const char *pvm_lock_label(const struct pvm_row *row);
const char *pvm_steal_label(const struct pvm_row *row);

/* pvm_report.c: the descriptor's print, json, plot and verdict. */
void pvm_print(FILE *f, const struct bench_run *r);
void pvm_json(struct json_t *doc, const struct bench_run *r);
int pvm_plot(struct bench_plot *p, const struct bench_run *r);
void pvm_verdict(FILE *f, const struct bench_run *r);
/* --trace: the traced lock-dynamics table, after the main one (pvm_trace.c). */
void pvm_print_dynamics(FILE *f, struct pvm_result *res);

#endif /* VML_BENCH_PVM_H */
