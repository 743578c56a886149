// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock bench - run one benchmark scenario (bench/scenario.h): find it,
 * parse the options it takes (its own, the shared ones, the model's), check
 * them, and hand over. It knows no scenario by name: bench_scenarios[] lists
 * them. Results on stdout, progress on stderr.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "scenario.h"

#define MAX_TABLES 16	/* every scenario's, the shared ones and the model's */

static const struct cli_opt *const common_tables[] = { cli_common_opts, NULL };

/* Every option table: the shared ones, then each scenario's. NULL-terminated. */
static void all_tables(const struct cli_opt **t)
{
	int n = 0;

	t[n++] = bench_common_opts;
	t[n++] = cli_common_opts;
	for (int i = 0; bench_scenarios[i] && n < MAX_TABLES - 1; i++)
		t[n++] = bench_scenarios[i]->opts;
	t[n] = NULL;
}

/* "--name" of an option argument ("--name=value" too), and whether a value follows. */
static const struct cli_opt *option_of(const struct cli_opt *const *tables, const char *arg,
				       size_t *len, bool *value_follows)
{
	const char *eq = strchr(arg, '=');
	const struct cli_opt *o;

	*len = eq ? (size_t)(eq - arg) : strlen(arg);
	o = cli_find(tables, arg, *len);
	*value_follows = o && o->arg && !eq;
	return o;
}

/*
 * The scenario named on the command line: the first argument that is
 * neither an option nor an option's value (options may come first). *@help:
 * --help or -h anywhere before a `--`.
 */
static const char *scenario_name(int argc, char **argv, bool *help)
{
	const struct cli_opt *all[MAX_TABLES];
	const char *name = NULL;

	all_tables(all);
	*help = false;
	for (int i = 1; i < argc; i++) {
		size_t len;
		bool value;

		if (!strcmp(argv[i], "--")) {
			if (!name && i + 1 < argc)
				name = argv[i + 1];
			break;
		}
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			*help = true;
		else if (argv[i][0] != '-' || !argv[i][1])
			name = name ? name : argv[i];
		else if (option_of(all, argv[i], &len, &value) && value)
			i++;
	}
	return name;
}

/*
 * An option another scenario takes, given to @sc: one line naming those that
 * take it. Return: 0, or EXIT_USAGE.
 */
static int foreign_options(const struct bench_scenario *sc, int argc, char **argv)
{
	const struct cli_opt *own[] = { bench_common_opts, cli_common_opts, sc->opts, NULL };

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		size_t len;
		bool value;
		int ret;

		if (argv[i][0] != '-' || !argv[i][1])
			continue;
		if (option_of(own, argv[i], &len, &value)) {
			i += value;
			continue;
		}
		ret = bench_other_option("bench", argv[i], len);
		if (ret)
			return ret;
	}
	return 0;
}

static int scenario_arg(void *arg, const char *val)
{
	const char **seen = arg;

	if (*seen)
		return cli_usage_error("bench", "unexpected argument '%s'", val);
	*seen = val;
	return 0;
}

static void help(FILE *f, const struct bench_scenario *sc)
{
	if (sc) {
		fprintf(f, "usage: vmalock bench %s [options]\n\n", sc->name);
		bench_print_scenario_help(f, sc);
		cli_print_opts(f, common_tables);
		fprintf(f, "\nExit status: 0 success; 1 a target failed; 2 bad usage.\n");
		return;
	}
	fprintf(f,
"usage: vmalock bench SCENARIO [options]\n"
"       vmalock bench SCENARIO --help   (that scenario's options alone)\n"
"\n"
"Scenarios (bench/README.md explains the method and how to read the output):\n");
	bench_print_scenarios(f);
	fprintf(f, "\nOptions [defaults]:\n");
	cli_print_opts(f, (const struct cli_opt *const[]){ bench_common_opts, NULL });
	for (int i = 0; bench_scenarios[i]; i++) {
		fprintf(f, "\n%s:\n", bench_scenarios[i]->name);
		if (bench_scenarios[i]->about)
			fprintf(f, "%s\n", bench_scenarios[i]->about);
		cli_print_opts(f, (const struct cli_opt *const[]){ bench_scenarios[i]->opts, NULL });
	}
	fprintf(f, "\nthe model's, for every scenario:\n");
	cli_print_opts(f, common_tables);
	fprintf(f,
"\n"
"The model is configured from this host's profile (vmalock host), or --profile.\n"
"Exit status: 0 success; 1 a target failed; 2 bad usage.\n");
}

/* "a, b or c": every scenario's name. */
static void scenario_names(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; bench_scenarios[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
					 bench_scenarios[i]->name);
}

int cmd_bench(int argc, char **argv)
{
	const struct bench_scenario *sc;
	struct bench_common c;
	const char *name, *seen = NULL;
	char names[256];
	bool help_wanted;
	void *opts;
	int ret;

	name = scenario_name(argc, argv, &help_wanted);
	sc = name ? bench_scenario_find(name) : NULL;
	if (help_wanted) {
		help(stdout, sc);
		return 0;
	}
	scenario_names(names, sizeof(names));
	if (!name)
		return cli_usage_error("bench", "missing SCENARIO (%s)", names);
	if (!sc)
		return cli_usage_error("bench", "SCENARIO: unknown scenario '%s' (%s)", name, names);
	ret = foreign_options(sc, argc, argv);
	if (ret)
		return ret;
	opts = calloc(1, sc->opts_size ? sc->opts_size : 1);
	if (!opts) {
		fprintf(stderr, "vmalock bench: out of memory\n");
		return EXIT_CHECK_FAILED;
	}
	bench_common_defaults(&c);
	if (sc->defaults)
		sc->defaults(opts);
	ret = cli_parse_into("bench", (const struct cli_table[]){
				     { bench_common_opts, &c }, { sc->opts, opts },
				     { cli_common_opts, &c }, { NULL, NULL } },
			     argc, argv, &seen, scenario_arg, &help_wanted);
	if (!ret && help_wanted)	/* after a `--`: seen by the parser alone */
		help(stdout, sc);
	else if (!ret)
		ret = bench_check("bench", sc, &c, opts);
	if (!ret)
		ret = bench_run_scenario(sc, &c, opts);
	free(opts);
	return ret;
}
