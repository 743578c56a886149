/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * opts.h - one grammar for every vmalock command: options are described in
 * tables (name, value, where it goes, how it is checked, help text), parsed
 * by one loop and printed by one --help writer, so that the same option
 * means and accepts the same thing everywhere and --help lists exactly
 * what is parsed.
 *
 *   --name VALUE or --name=VALUE; flags take no value; `--` ends options.
 *   Numbers: decimal or 0x hex, a k (1000) or M (1000000) suffix on counts;
 *   sizes take K, M, G (1024^n); never negative, always within the range
 *   the table states. Lists: comma-separated, no empty item.
 *
 * A bad argument ends the parse with one line on stderr naming it
 * (`vmalock CMD: --opt: ...`) and EXIT_USAGE.
 */
#ifndef VML_CLI_OPTS_H
#define VML_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_MAX_LIST 16

/* A comma list of numbers (--readers 0,1,4). */
struct cli_ulist {
	unsigned long v[CLI_MAX_LIST];
	unsigned int nr;
};

/* Targets and lock policies as bit sets (model|live|both, mmap|vma|vma-strict|vma-recheck|both). */
#define CLI_MODEL 0x1
#define CLI_LIVE 0x2
#define CLI_LOCK_MMAP 0x1
#define CLI_LOCK_VMA 0x2
#define CLI_LOCK_VMA_STRICT 0x4
#define CLI_LOCK_VMA_RECHECK 0x8

struct cli_opt;
typedef int (*cli_setter)(const char *cmd, const struct cli_opt *o, const char *val, void *dst);

struct cli_opt {
	const char *name;		/* "--readers"; NULL ends a table */
	const char *arg;		/* "N[,N...]" for the help; NULL: a flag */
	cli_setter set;
	size_t off;			/* where the value goes in the command's options */
	double min, max;		/* numbers: the accepted range */
	const char *const *words;	/* choices, NULL-terminated */
	const char *help;		/* lines separated by '\n' */
};

#define CLI_OPT_END { NULL, NULL, NULL, 0, 0, 0, NULL, NULL }

/*
 * cli_parse - parse @argv[1..] against @tables (NULL-terminated), values
 * into @opts; every other argument goes to @positional (which returns 0,
 * or EXIT_USAGE after printing). --help and -h set *@help and stop.
 * Return: 0 or EXIT_USAGE (one line printed).
 */
int cli_parse(const char *cmd, const struct cli_opt *const *tables, int argc, char **argv,
	      void *opts, int (*positional)(void *opts, const char *arg), bool *help);

/* The options of @tables, one line each (continuation lines indented). */
void cli_print_opts(FILE *f, const struct cli_opt *const *tables);

/* One-line usage error naming the argument; returns EXIT_USAGE. */
__attribute__((format(printf, 2, 3)))
int cli_usage_error(const char *cmd, const char *fmt, ...);

/* Setters: each stores into (char *)opts + o->off the type it names. */
int cli_set_flag(const char *cmd, const struct cli_opt *o, const char *val, void *dst);	/* bool */
int cli_set_string(const char *cmd, const struct cli_opt *o, const char *val, void *dst); /* const char * */
int cli_set_uint(const char *cmd, const struct cli_opt *o, const char *val, void *dst);	/* unsigned int */
int cli_set_ulong(const char *cmd, const struct cli_opt *o, const char *val, void *dst);	/* unsigned long */
int cli_set_u64(const char *cmd, const struct cli_opt *o, const char *val, void *dst);	/* uint64_t */
int cli_set_seconds(const char *cmd, const struct cli_opt *o, const char *val, void *dst); /* double */
int cli_set_size(const char *cmd, const struct cli_opt *o, const char *val, void *dst);	/* unsigned long bytes */
int cli_set_ulist(const char *cmd, const struct cli_opt *o, const char *val, void *dst);	/* struct cli_ulist */
int cli_set_choice(const char *cmd, const struct cli_opt *o, const char *val, void *dst); /* int: index in words */
int cli_set_targets(const char *cmd, const struct cli_opt *o, const char *val, void *dst); /* unsigned int CLI_MODEL|CLI_LIVE */
int cli_set_locks(const char *cmd, const struct cli_opt *o, const char *val, void *dst);	/* unsigned int CLI_LOCK_*; a list if words has vma-strict */
int cli_set_view(const char *cmd, const struct cli_opt *o, const char *val, void *dst);	/* enum vml_view */
int cli_set_wordset(const char *cmd, const struct cli_opt *o, const char *val, void *dst); /* unsigned int: bit per word index */
int cli_set_json_path(const char *cmd, const struct cli_opt *o, const char *val, void *dst); /* const char *, writable */
int cli_set_plot_path(const char *cmd, const struct cli_opt *o, const char *val, void *dst); /* .png/.svg, writable */
int cli_set_profile(const char *cmd, const struct cli_opt *o, const char *val, void *dst);	/* loads it now */

/* Parse a count (k/M suffixes) in [@min, @max]. Return: 0 or -EINVAL. */
int cli_parse_count(const char *s, unsigned long min, unsigned long max, unsigned long *out);

/* The options every command takes. */
extern const struct cli_opt cli_common_opts[];

#endif /* VML_CLI_OPTS_H */
