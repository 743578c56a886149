/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scenario.h - the benchmark scenarios behind `vmalock bench` and `vmalock
 * run`: what a scenario is, and what every scenario shares.
 *
 * A benchmark is not a test: it reports what it measured and never fails
 * because the machine is slow. Every figure is a median (or p99, or max)
 * over samples taken in the same run, and comparisons are ratios of two
 * sides measured in that run: the model against the live kernel, the old
 * lock policy (mmap) against the new (vma). bench/README.md says how to
 * run and read each scenario; docs/bench-methods.md has the method.
 *
 * A scenario is one descriptor (struct bench_scenario) in a file of its
 * own, listed once in bench_scenarios[] (scenario.c). The descriptor names
 * it, asks its question, says what one row of its table is, brings its own
 * options (a table into an options struct of its own), says which of the
 * options every scenario shares it takes (struct bench_common), and
 * measures (run) and reports (print, json, plot). The plumbing has one home
 * each:
 *
 *   scenario.c   the shared options and their checks; a run: the load line,
 *                run, print, JSON and plot, in that order
 *   stats.c      medians over samples, quantiles of latency histograms
 *   doc.c        the JSON document, one schema for every scenario:
 *                {"meta": {...}, "calibration": {...} | null, "rows": [...]}
 *   plot.c       gnuplot: the terminal, the output file, running it
 *   report.c     results tables, ratios, verdict lines
 *
 * Scenarios print progress on stderr and their results on stdout; on a
 * failure they print one line naming what failed and return non-zero (a
 * negative errno, or 1); they never exit. The command maps that to its exit
 * status. bench/README.md, "Adding a scenario", walks through the smallest.
 */
#ifndef VML_BENCH_SCENARIO_H
#define VML_BENCH_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "spaces/words.h"
#include "util/options.h"

/*
 * The options every scenario shares (bench_common_opts), as given: a set
 * that is 0 was not given, and the scenario's default applies
 * (bench_locks(), bench_steals()).
 */
struct bench_common {
	unsigned int targets;		/* --target: VOCAB_BIT(enum target_kind)s */
	bool model, live;		/* ...the same, once checked */
	unsigned int locks;		/* --lock: VOCAB_BIT(enum vml_lock_policy)s, or 0 */
	unsigned int steals;		/* --steal: VOCAB_BIT(enum vml_steal_policy)s, or 0 */
	unsigned int samples;		/* --samples */
	bool trace;			/* --trace */
	const char *trace_events;	/* --trace-events FILE */
	const char *json;		/* --json FILE */
	const char *plot;		/* --plot FILE.png|FILE.svg */
	bool quiet;			/* --quiet: no progress line */
	/* the simulated machine (docs/simulation.md) */
	struct cli_ulist cpus_list;	/* --cpus N[,N...] as given */
	unsigned int cpus;		/* ...its first: simulated rows on N CPUs; 0: none */
	uint64_t sim_seed;		/* --sim-seed */
	bool sim_only;			/* --sim-only: no real-thread model or live rows */
	const char *sim_costs;		/* --sim-costs FILE; NULL: measure them */
	bool sim;			/* ...the same, once checked: simulated rows wanted */
};

struct bench_run;
struct bench_plot;
struct json_t;

struct bench_scenario {
	const char *name;		/* the command line's SCENARIO: "vma-wait" */
	const char *question;		/* what it answers: one line */
	const char *rows;		/* what one row of its table is: one line */
	const char *about;		/* --help: how it answers, a few lines; or NULL */

	/* Its own options: a table into an options struct of opts_size bytes. */
	const struct cli_opt *opts;
	size_t opts_size;
	void (*defaults)(void *opts);	/* fills the struct before parsing */

	/* The shared options it takes besides --target, --samples, --json, --quiet: */
	unsigned int locks;		/* --lock: the policies its model rows take; 0: none */
	unsigned int default_locks;
	unsigned int steals;		/* --steal: the steal policies its rows take; 0: none */
	unsigned int default_steals;
	bool trace;			/* --trace and --trace-events */
	bool sim;			/* --cpus and the other simulation options */
	bool sim_cpus_list;		/* --cpus takes a list: a machine of each size */
	const char *needs_live;		/* why it cannot run on the model alone, or NULL */

	/* Checks across its options, after parsing: 0, or a usage error's status. NULL: none. */
	int (*check)(const char *cmd, const struct bench_common *c, void *opts);
	/* Measure: set r->res (what free() releases, also on failure). 0 or non-zero (printed). */
	int (*run)(struct bench_run *r);
	/* The table (and its verdict lines), on stdout. */
	void (*print)(FILE *f, const struct bench_run *r);
	/* Its meta fields, calibration and rows into the document (doc.c). */
	void (*json)(struct json_t *doc, const struct bench_run *r);
	/* The data file and the script after its output line (plot.c); NULL: no --plot. */
	int (*plot)(struct bench_plot *p, const struct bench_run *r);
	/* What `vmalock run` prints last, after the files are written; NULL: nothing. */
	void (*verdict)(FILE *f, const struct bench_run *r);
	void (*free)(struct bench_run *r);
};

/* One run of a scenario. */
struct bench_run {
	const struct bench_scenario *sc;
	const struct bench_common *c;
	const void *opts;		/* the scenario's options struct */
	void *res;			/* what run() measured: its rows and what they need */
};

/* Every scenario, in the order --help lists them; NULL-terminated. */
extern const struct bench_scenario *const bench_scenarios[];
const struct bench_scenario *bench_scenario_find(const char *name);

/* The shared options: their table (into struct bench_common) and defaults. */
extern const struct cli_opt bench_common_opts[];
void bench_common_defaults(struct bench_common *c);

/*
 * bench_check - after parsing: the shared options @sc does not take (one
 * line naming the scenarios that do), then @sc's own checks.
 * Return: 0, or EXIT_USAGE (printed).
 */
int bench_check(const char *cmd, const struct bench_scenario *sc, struct bench_common *c,
		void *opts);

/*
 * bench_other_option - the option @opt (@len characters), which the
 * scenario given does not take: one line naming the scenarios that do.
 * Return: EXIT_USAGE, or 0 if none does (the parser calls it unknown).
 */
int bench_other_option(const char *cmd, const char *opt, size_t len);

/* The lock and steal policies @r's rows take: as given, else the scenario's default. */
unsigned int bench_locks(const struct bench_run *r);
unsigned int bench_steals(const struct bench_run *r);

/*
 * A run in its steps: bench_measure prints the load line and runs;
 * bench_report prints the table and writes --json and --plot;
 * bench_release frees. Each returns 0 or 1 (a failure, printed).
 * bench_run_scenario does all three.
 */
int bench_measure(struct bench_run *r);
int bench_report(struct bench_run *r);
void bench_release(struct bench_run *r);
int bench_run_scenario(const struct bench_scenario *sc, const struct bench_common *c,
		       const void *opts);

/*
 * --help: the scenarios and their questions; one scenario's question, what
 * it does, its rows and its options; its options alone.
 */
void bench_print_scenarios(FILE *f);
void bench_print_scenario_help(FILE *f, const struct bench_scenario *sc);
void bench_print_scenario_opts(FILE *f, const struct bench_scenario *sc);

#endif /* VML_BENCH_SCENARIO_H */
