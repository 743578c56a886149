/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cli.h - what the subcommands of the vmalock command share. */
#ifndef VML_CLI_CLI_H
#define VML_CLI_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "race/run.h"
#include "spaces/words.h"
#include "util/options.h"

#define VML_VERSION "0.1.0"

/* Exit statuses (docs/op-scripts.md): */
#define EXIT_CHECK_FAILED 1
/* EXIT_USAGE 2: util/options.h */
/* The host cannot run what was asked (a script's `require`, `swap` without root). */
#define EXIT_SKIPPED 77

struct cli_command {
	const char *name;
	int (*main)(int argc, char **argv);	/* argv[0] is the command name */
	const char *help;
};

/* The subcommands (one file each). */
int cmd_bench(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_race(int argc, char **argv);
int cmd_fuzz(int argc, char **argv);
int cmd_host(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_twin(int argc, char **argv);

/* The options every command takes (common.c). */
extern const struct cli_opt cli_common_opts[];
int cli_set_profile(const char *cmd, const struct cli_opt *o, const char *val, void *dst);

/*
 * The option parsers of race and fuzz, apart from running anything (for the
 * argument-parser fuzzer, tests/fuzz/). Return: 0 (->help set for --help),
 * or EXIT_USAGE after printing one line.
 */
struct race_cli {
	struct race_opts o;
	double duration;	/* the whole run, seconds */
	bool views_all;		/* --view all: skip views the target lacks */
	bool seed_given;
	bool help;
	/* the simulated machine */
	const char *sim_costs;	/* --sim-costs FILE */
	bool sim_seed_given;
	int explore_mode;	/* enum sim_explore */
};
int race_parse_args(int argc, char **argv, struct race_cli *cli);
struct fuzz_cli {
	uint64_t seed;
	unsigned int ops;	/* per sequence, after the file prologue */
	unsigned long runs;	/* sequences */
	unsigned long first_run;	/* the first sequence's number (--first-run) */
	const char *only;	/* --only: the sequences to run besides the first, or NULL */
	const char *save;	/* where minimal failing scripts go */
	const char *known;	/* a file of known difference signatures, or NULL */
	bool smaps;		/* --compare maps,smaps */
	unsigned int max_failures;
	unsigned long swap_bytes;	/* --swap: 0 none */
	bool mthp;		/* --mthp: THP knobs drawn per pair of targets */
	bool rollup_check;	/* --rollup-check: model only, incremental vs walked rollup */
	bool seed_given;
	bool help;
};
int fuzz_parse_args(int argc, char **argv, struct fuzz_cli *cli);
/* fuzz --rollup-check (fuzz_rollup.c). Return: the exit status. */
int fuzz_rollup_check(const struct fuzz_cli *cli, volatile sig_atomic_t *stop);

#endif /* VML_CLI_CLI_H */
