// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock bench - run one benchmark scenario (bench/): parse the options,
 * check them, and hand over. Results on stdout, progress on stderr.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "scriptrun.h"

static void help(FILE *f)
{
	fprintf(f,
"usage: vmalock bench SCENARIO [options]\n"
"\n"
"Scenarios (bench/README.md explains the method and how to read the output):\n"
"  proc-vs-map  Paul McKenney's experiment: a mapper maps and unmaps random\n"
"               pages of a populated region, timing every call, while\n"
"               low-priority readers read a /proc view of its address space\n"
"  read-cost    the cost of reading a whole view per VMA, against the number\n"
"               of VMAs (1k, 10k, 65,530 small VMAs; 1M on the model)\n"
"  ops          per-operation cost, model vs the same system calls in a live\n"
"               process: mmap+munmap, mprotect split+merge, write fault, maps\n"
"  khugepaged   seed 003 on the model: time to collapse THP ranges behind many\n"
"               ineligible VMAs while a mapper contends for mmap_lock, and\n"
"               the scanner's longest mmap_lock hold, mainline vs fixed policy\n"
"\n"
"Options (defaults in brackets):\n"
"  --target model|live|both   where to run [both]\n"
"  --lock mmap|vma|both       the model readers' lock policy [both]; the live\n"
"                             kernel has its own (rows say \"kernel\")\n"
"  --view maps|smaps|smaps_rollup|numa_maps|query\n"
"                             the view the readers read [maps]; query is\n"
"                             PROCMAP_QUERY over every VMA\n"
"  --readers N[,N...]         proc-vs-map: reader threads, one row each [1]\n"
"  --duration SECONDS         proc-vs-map: mapper run per sample [3]\n"
"  --samples N                samples per row, medians over them [5]\n"
"  --mb N                     proc-vs-map: region size, a power of two [128]\n"
"  --busy N                   proc-vs-map: CPU hogs on the readers' CPU [0]\n"
"  --busyduration MS          hogs spin MS then sleep 1 ms; 0 spins on [0]\n"
"  --seed N                   the mapper's random stream [1]\n"
"  --sizes N[,N...]           read-cost: layouts in VMAs (k/M suffixes)\n"
"                             [1k,10k,65530,1M]; live is capped at\n"
"                             vm.max_map_count and skips larger sizes\n"
"  --populate                 read-cost: fault in every page of the layouts\n"
"  --iterations N             ops: timed iterations per sample [1000]\n"
"  --vmas N                   ops: VMAs in the layout whose maps is read [1000]\n"
"  --record-ns N|auto         proc-vs-map: extra CPU time model readers spend per\n"
"                             record, inside their lock; auto measures the live\n"
"                             kernel's and the model's per-record cost of the view\n"
"                             now and charges the difference [auto]; 0: the\n"
"                             model's own speed (bench/README.md: calibration)\n"
"  --skip-vmas N              khugepaged: ineligible VMAs before the ranges [100k]\n"
"  --ranges N                 khugepaged: collapsible 2 MiB ranges [8]\n"
"  --scan-sleep MS            khugepaged: sleep between wakeups [10]\n"
"  --policy P                 khugepaged: mainline, fixed or both [both];\n"
"                             --duration is the time limit per sample\n"
"  --json FILE                write the results as JSON\n"
"  --plot FILE.png|FILE.svg   plot them with gnuplot (proc-vs-map, read-cost)\n"
"  --quiet                    no progress line on stderr\n"
"\n"
"Exit status: 0 success; 1 a target failed; 2 bad usage.\n");
}

static int bad_value(const char *cmd, const char *opt, const char *val, const char *what)
{
	return cli_usage_error(cmd, "%s: bad value '%s' (%s)", opt, val, what);
}

/* An unsigned integer with an optional k/K (1000) or M (1000000) suffix. */
static int parse_count(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end == 'k' || *end == 'K') {
		v *= 1000;
		end++;
	} else if (*end == 'M') {
		v *= 1000000;
		end++;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_list(const char *s, unsigned long *out, unsigned int *nr, unsigned long min,
		      unsigned long max)
{
	char buf[256], *tok, *save;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	*nr = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long v;

		if (*nr == BENCH_MAX_LIST || parse_count(tok, &v) || v < min || v > max)
			return -EINVAL;
		out[(*nr)++] = v;
	}
	return *nr ? 0 : -EINVAL;
}

static int parse_seconds(const char *s, double *out, double min, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

void bench_opts_default(struct bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->model = target_model_available;
	o->live = true;
	o->lock_mmap = o->lock_vma = true;
	o->view = VML_VIEW_MAPS;
	o->readers[0] = 1;
	o->nr_readers = 1;
	o->duration_s = 3;
	o->samples = 5;
	o->seed = 1;
	o->mb = 128;
	o->sizes[0] = 1000;
	o->sizes[1] = 10000;
	o->sizes[2] = 65530;
	o->sizes[3] = 1000000;
	o->nr_sizes = 4;
	o->iterations = 1000;
	o->vmas = 1000;
	o->kh_skip_vmas = 100000;
	o->kh_ranges = 8;
	o->kh_scan_sleep_ms = 10;
	o->kh_mainline = o->kh_fixed = true;
	o->record_ns = -1;
}

/*
 * Parse one option shared by `bench` and `run` at a->argv[a->i].
 * Return: 1 consumed, 0 not an option we know, -1 bad (message printed).
 */
int bench_parse_opt(struct cli_args *a, struct bench_opts *o, bool *bad)
{
	const char *cmd = a->cmd, *v;
	unsigned long n, list[BENCH_MAX_LIST];
	unsigned int nr;

	if (cli_opt(a, "--target", &v, bad)) {
		if (*bad)
			return -1;
		if (!strcmp(v, "model") || !strcmp(v, "live") || !strcmp(v, "both")) {
			o->model = strcmp(v, "live") != 0;
			o->live = strcmp(v, "model") != 0;
		} else {
			cli_usage_error(cmd, "--target: unknown target '%s' (model, live or both)",
					v);
			return -1;
		}
		if (o->model && !target_model_available) {
			cli_usage_error(cmd, "--target: the model is not linked into this build");
			return -1;
		}
	} else if (cli_opt(a, "--lock", &v, bad)) {
		enum vml_lock_policy lock;

		if (*bad)
			return -1;
		if (!strcmp(v, "both")) {
			o->lock_mmap = o->lock_vma = true;
		} else {
			if (cli_parse_lock(cmd, v, &lock))
				return -1;
			o->lock_mmap = lock == VML_LOCK_MMAP;
			o->lock_vma = lock == VML_LOCK_VMA;
		}
	} else if (cli_opt(a, "--view", &v, bad)) {
		if (*bad || cli_parse_view(cmd, "--view", v, &o->view))
			return -1;
	} else if (cli_opt(a, "--readers", &v, bad)) {
		if (*bad)
			return -1;
		if (parse_list(v, list, &nr, 0, 256)) {
			bad_value(cmd, "--readers", v, "N[,N...], each 0 to 256");
			return -1;
		}
		for (unsigned int i = 0; i < nr; i++)
			o->readers[i] = (unsigned int)list[i];
		o->nr_readers = nr;
	} else if (cli_opt(a, "--duration", &v, bad)) {
		if (*bad)
			return -1;
		if (parse_seconds(v, &o->duration_s, 0.001, 86400)) {
			bad_value(cmd, "--duration", v, "seconds, at least 0.001");
			return -1;
		}
	} else if (cli_opt(a, "--samples", &v, bad)) {
		if (*bad)
			return -1;
		if (parse_count(v, &n) || n < 1 || n > 100000) {
			bad_value(cmd, "--samples", v, "1 or more");
			return -1;
		}
		o->samples = (unsigned int)n;
	} else if (cli_opt(a, "--seed", &v, bad)) {
		char *end;

		if (*bad)
			return -1;
		errno = 0;
		o->seed = strtoull(v, &end, 0);
		if (errno || end == v || *end) {
			bad_value(cmd, "--seed", v, "an integer");
			return -1;
		}
	} else if (cli_opt(a, "--mb", &v, bad)) {
		if (*bad)
			return -1;
		if (parse_count(v, &n) || n < 1 || n > (1UL << 20) || (n & (n - 1))) {
			bad_value(cmd, "--mb", v, "MiB, a power of two");
			return -1;
		}
		o->mb = n;
	} else if (cli_opt(a, "--busy", &v, bad)) {
		if (*bad)
			return -1;
		if (parse_count(v, &n) || n > 1024) {
			bad_value(cmd, "--busy", v, "0 to 1024 hogs");
			return -1;
		}
		o->busy = (unsigned int)n;
	} else if (cli_opt(a, "--busyduration", &v, bad)) {
		if (*bad)
			return -1;
		if (parse_seconds(v, &o->busyduration_ms, 0, 1e6)) {
			bad_value(cmd, "--busyduration", v, "milliseconds, 0 or more");
			return -1;
		}
	} else if (cli_opt(a, "--sizes", &v, bad)) {
		if (*bad)
			return -1;
		if (parse_list(v, o->sizes, &o->nr_sizes, 1, 100000000)) {
			bad_value(cmd, "--sizes", v, "N[,N...] VMAs, 1 to 100M each");
			return -1;
		}
	} else if (cli_opt(a, "--populate", NULL, bad)) {
		if (*bad)
			return -1;
		o->populate = true;
	} else if (cli_opt(a, "--iterations", &v, bad)) {
		if (*bad)
			return -1;
		if (parse_count(v, &n) || n < 1 || n > 10000000) {
			bad_value(cmd, "--iterations", v, "1 to 10M");
			return -1;
		}
		o->iterations = n;
	} else if (cli_opt(a, "--vmas", &v, bad)) {
		if (*bad)
			return -1;
		if (parse_count(v, &n) || n < 1 || n > 60000) {
			bad_value(cmd, "--vmas", v, "1 to 60000");
			return -1;
		}
		o->vmas = n;
	} else if (cli_opt(a, "--skip-vmas", &v, bad)) {
		if (*bad || parse_count(v, &n) || n > 4000000) {
			bad_value(cmd, "--skip-vmas", v, "0 to 4M VMAs");
			return -1;
		}
		o->kh_skip_vmas = n;
	} else if (cli_opt(a, "--ranges", &v, bad)) {
		if (*bad || parse_count(v, &n) || n < 1 || n > 4096) {
			bad_value(cmd, "--ranges", v, "1 to 4096");
			return -1;
		}
		o->kh_ranges = (unsigned int)n;
	} else if (cli_opt(a, "--scan-sleep", &v, bad)) {
		if (*bad || parse_count(v, &n) || n < 1 || n > 60000) {
			bad_value(cmd, "--scan-sleep", v, "1 to 60000 ms");
			return -1;
		}
		o->kh_scan_sleep_ms = (unsigned int)n;
	} else if (cli_opt(a, "--policy", &v, bad)) {
		if (*bad)
			return -1;
		if (!strcmp(v, "mainline") || !strcmp(v, "fixed") || !strcmp(v, "both")) {
			o->kh_mainline = strcmp(v, "fixed") != 0;
			o->kh_fixed = strcmp(v, "mainline") != 0;
		} else {
			cli_usage_error(cmd, "--policy: unknown policy '%s' (mainline, fixed or both)",
					v);
			return -1;
		}
	} else if (cli_opt(a, "--record-ns", &v, bad)) {
		if (*bad)
			return -1;
		if (!strcmp(v, "auto")) {
			o->record_ns = -1;
		} else if (parse_count(v, &n) || n > 1000000000) {
			bad_value(cmd, "--record-ns", v, "auto, or 0 to 1e9 ns");
			return -1;
		} else {
			o->record_ns = (long)n;
		}
	} else if (cli_opt(a, "--json", &v, bad)) {
		if (*bad)
			return -1;
		if (!*v) {
			bad_value(cmd, "--json", v, "a file name");
			return -1;
		}
		o->json = v;
	} else if (cli_opt(a, "--plot", &v, bad)) {
		const char *dot = strrchr(v, '.');

		if (*bad)
			return -1;
		if (!dot || (strcmp(dot, ".png") && strcmp(dot, ".svg"))) {
			bad_value(cmd, "--plot", v, "FILE.png or FILE.svg");
			return -1;
		}
		o->plot = v;
	} else if (cli_opt(a, "--quiet", NULL, bad)) {
		if (*bad)
			return -1;
		o->quiet = true;
	} else {
		return 0;
	}
	return 1;
}

int cmd_bench(int argc, char **argv)
{
	struct cli_args a = { .cmd = "bench", .argc = argc, .argv = argv, .i = 1 };
	const char *scenario = NULL;
	struct bench_opts o;
	struct pvm_result res;
	bool bad = false;
	int ret;

	bench_opts_default(&o);
	while (a.i < argc) {
		const char *arg = argv[a.i];

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			help(stdout);
			return 0;
		}
		ret = bench_parse_opt(&a, &o, &bad);
		if (ret < 0)
			return EXIT_USAGE;
		if (ret > 0)
			continue;
		if (arg[0] == '-' && arg[1])
			return cli_usage_error("bench", "unknown option '%s'", arg);
		if (scenario)
			return cli_usage_error("bench", "unexpected argument '%s'", arg);
		scenario = arg;
		a.i++;
	}
	if (!scenario)
		return cli_usage_error("bench", "missing SCENARIO (proc-vs-map, read-cost, ops, khugepaged)");
	if (strcmp(scenario, "proc-vs-map") && strcmp(scenario, "read-cost") &&
	    strcmp(scenario, "ops") && strcmp(scenario, "khugepaged"))
		return cli_usage_error("bench", "SCENARIO: unknown scenario '%s' (proc-vs-map, "
				       "read-cost, ops, khugepaged)", scenario);
	if (!strcmp(scenario, "khugepaged")) {
		if (o.plot)
			return cli_usage_error("bench", "--plot: khugepaged has no plot (use --json)");
		return bench_khugepaged(&o);
	}
	if (!o.model && !o.live)
		return cli_usage_error("bench", "--target: nothing to run");
	if (o.model && strcmp(scenario, "ops") && !bench_model_has_view(o.view))
		return cli_usage_error("bench", "--view: the model has no %s view in this build "
				       "(try --view maps, or --target live)",
				       bench_view_name(o.view));
	if (!strcmp(scenario, "ops")) {
		if (o.plot)
			return cli_usage_error("bench", "--plot: ops has no plot (use --json)");
		return bench_ops(&o);
	}
	if (!strcmp(scenario, "read-cost"))
		return bench_read_cost(&o);

	ret = bench_proc_vs_map(&o, &res);
	if (!ret) {
		pvm_print_table(stdout, &res);
		fflush(stdout);
		if (o.json && pvm_write_json(o.json, &res))
			ret = EXIT_CHECK_FAILED;
		if (o.plot && pvm_plot(o.plot, &res))
			ret = EXIT_CHECK_FAILED;
	}
	pvm_result_free(&res);
	return ret;
}
