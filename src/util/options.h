/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.h - one grammar for every vmalock command and benchmark scenario:
 * options are described in tables (name, value, where it goes, how it is
 * checked, help text), parsed by one loop and printed by one --help writer,
 * so that the same option means and accepts the same thing everywhere and
 * --help lists exactly what is parsed. A choice among words is a
 * vocabulary (util/vocab.h): the same table names the values in the
 * tables and JSON the command writes.
 *
 *   --name VALUE or --name=VALUE; flags take no value; `--` ends options.
 *   Numbers: decimal or 0x hex, a k (1000) or M (1000000) suffix on counts;
 *   sizes take K, M, G (1024^n); never negative, always within the range
 *   the table states. Lists: comma-separated, no empty item.
 *
 * A bad argument ends the parse with one line on stderr naming it
 * (`vmalock CMD: --opt: ...`) and EXIT_USAGE.
 */
#ifndef VML_UTIL_OPTIONS_H
#define VML_UTIL_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/vocab.h"

#define CLI_MAX_LIST 16
#define EXIT_USAGE 2		/* bad usage: the exit status of every command */

/* A comma list of numbers (--readers 0,1,4). */
struct cli_ulist {
	unsigned long v[CLI_MAX_LIST];
	unsigned int nr;
};

struct cli_opt;
typedef int (*cli_setter)(const char *cmd, const struct cli_opt *o, const char *val, void *dst);

struct cli_opt {
	const char *name;		/* "--readers"; NULL ends a table */
	const char *arg;		/* "N[,N...]" for the help; NULL: a flag */
	cli_setter set;
	size_t off;			/* where the value goes in the command's options */
	double min, max;		/* numbers: the accepted range; a vocabulary: the
					 * accepted values (0, 0: all of them) */
	const struct vml_vocab *vocab;	/* choices: words and their values */
	const char *help;		/* lines separated by '\n'; --help then lists the
					 * vocabulary's words that have a help text */
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

/*
 * cli_parse_into - the same, each table's values into its own struct:
 * @tables[i].opts at @tables[i].base (a NULL .opts ends the list); @arg is
 * passed to @positional.
 */
struct cli_table {
	const struct cli_opt *opts;
	void *base;
};
int cli_parse_into(const char *cmd, const struct cli_table *tables, int argc, char **argv,
		   void *arg, int (*positional)(void *arg, const char *val), bool *help);

/* The entry of @tables named @name (@len characters), or NULL. */
const struct cli_opt *cli_find(const struct cli_opt *const *tables, const char *name,
			       size_t len);

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
int cli_set_word(const char *cmd, const struct cli_opt *o, const char *val, void *dst);	/* int: a word's value */
int cli_set_words(const char *cmd, const struct cli_opt *o, const char *val, void *dst);	/* unsigned int: a comma list of words and aliases, VOCAB_BIT()s */
int cli_set_json_path(const char *cmd, const struct cli_opt *o, const char *val, void *dst); /* const char *, writable */
int cli_set_plot_path(const char *cmd, const struct cli_opt *o, const char *val, void *dst); /* .png/.svg, writable */

/* Parse a count (k/M suffixes) in [@min, @max]. Return: 0 or -EINVAL. */
int cli_parse_count(const char *s, unsigned long min, unsigned long max, unsigned long *out);

#endif /* VML_UTIL_OPTIONS_H */
