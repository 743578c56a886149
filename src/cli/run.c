// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock run - the headline experiment (`make run`): proc-vs-map on smaps
 * with 0, 1 and 4 readers, on the model under the mmap and the vma lock
 * policies and on the live kernel; prints the table, writes
 * vmalock-run.json and vmalock-run.png, and ends with a three-line verdict
 * in ratios measured in this run: the model's policies against each other,
 * the live kernel against itself without readers, and, per statistic, how
 * far the model's policy the kernel uses is from the kernel.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pvm.h"
#include "util/json.h"

#define RUN_JSON "vmalock-run.json"
#define RUN_PLOT "vmalock-run.png"
#define RUN_DURATION_S 3	/* Paul's check runs: 3 s; 9 rows x 3 samples is ~1.5 min */
#define RUN_SAMPLES 3

static const struct cli_opt *const common_tables[] = { cli_common_opts, NULL };

static void help(FILE *f)
{
	fprintf(f,
"usage: vmalock run [options]\n"
"\n"
"The headline experiment: Paul McKenney's proc-vs-map (a mapper's mmap()/munmap()\n"
"latency while low-priority readers read /proc/PID/smaps of its address space)\n"
"with 0, 1 and 4 readers, on the model under the mmap and the vma lock policies\n"
"and on the live kernel; %g s x %u samples a row. Prints the table and a verdict,\n"
"writes " RUN_JSON " and " RUN_PLOT " (the paths are checked first).\n"
"The verdict's last line puts the model against the kernel per statistic\n"
"(model/kernel, '*' beyond 2x), avg and p99 with their lowest and highest ratio\n"
"over the rounds (each round runs one sample of every row): how far one run can\n"
"be trusted.\n"
"\n"
"The options of `vmalock bench proc-vs-map` override the defaults, e.g.\n"
"--duration 1 --samples 2, --busy 1, --json FILE, --plot FILE.svg:\n"
"\n", (double)RUN_DURATION_S, RUN_SAMPLES);
	bench_print_scenario_opts(f, &bench_proc_vs_map);
	cli_print_opts(f, common_tables);
	fprintf(f,
"\n"
"Exit status: 0 success; 1 a target failed; 2 bad usage.\n");
}

int cmd_run(int argc, char **argv)
{
	const struct bench_scenario *sc = &bench_proc_vs_map;
	struct bench_common c;
	struct pvm_opts o;
	const struct cli_table tables[] = {
		{ bench_common_opts, &c }, { sc->opts, &o }, { cli_common_opts, &c }, { NULL, NULL },
	};
	struct bench_run r = { .sc = sc, .c = &c, .opts = &o };
	bool help_wanted;
	int ret;

	bench_common_defaults(&c);
	sc->defaults(&o);
	o.mapper.duration_s = RUN_DURATION_S;
	c.samples = RUN_SAMPLES;
	o.readers = (struct cli_ulist){ .v = { 0, 1, 4 }, .nr = 3 };
	c.json = RUN_JSON;
	c.plot = RUN_PLOT;
	o.view = VML_VIEW_SMAPS;
	ret = cli_parse_into("run", tables, argc, argv, NULL, NULL, &help_wanted);
	if (ret)
		return ret;
	if (help_wanted) {
		help(stdout);
		return 0;
	}
	ret = bench_check("run", sc, &c, &o);
	if (ret)
		return ret;
	/* The defaults' paths are checked as given ones are. */
	for (int i = 0; i < 2; i++) {
		const char *path = i ? c.plot : c.json;

		ret = path ? json_check_writable(path) : 0;
		if (ret) {
			bench_release(&r);	/* what the check loaded (--layout) */
			return cli_usage_error("run", "cannot write '%s': %s", path,
					       strerror(-ret));
		}
	}

	ret = bench_measure(&r);
	if (!ret) {
		ret = bench_report(&r);
		if (!ret)
			printf("# wrote %s and %s\n", c.json ? c.json : "no JSON",
			       c.plot ? c.plot : "no plot");
		sc->verdict(stdout, &r);
	}
	bench_release(&r);
	return ret;
}
