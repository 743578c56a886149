// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock bench - run one benchmark scenario (bench/): parse the options,
 * check them, and hand over. Results on stdout, progress on stderr.
 */
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "opts.h"
#include "scriptrun.h"

static const char *const target_words[] = { "model", "live", "both", NULL };
static const char *const lock_words[] = { "mmap", "vma", "both", NULL };
/* khugepaged --policy: the fixes of seed 003, alone and together */
static const char *const policy_words[] = { "mainline", "resume", "skip", "drop", "fixed", "both",
					    "all", NULL };
/* --steal, in the order of bench_steal_order[] */
static const char *const rcu_words[] = { "writer", "anywhere", NULL };
static const char *const steal_words[] = { "mainline", "nosteal", "not-behind-writer", "never",
					   "all", NULL };

/* --record-ns auto | N */
static int set_record_ns(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	unsigned long v;

	if (!strcmp(val, "auto")) {
		*(long *)dst = -1;
		return 0;
	}
	if (cli_parse_count(val, 0, 1000000000, &v))
		return cli_usage_error(cmd, "%s: bad value '%s' (auto, or 0 to 1e9 ns)", o->name,
				       val);
	*(long *)dst = (long)v;
	return 0;
}

/* --mb: a power of two */
static int set_mb(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	unsigned long v;

	if (cli_parse_count(val, 1, 1UL << 20, &v) || (v & (v - 1)))
		return cli_usage_error(cmd, "%s: bad value '%s' (MiB, a power of two up to 1M)",
				       o->name, val);
	*(unsigned long *)dst = v;
	return 0;
}

#define B(f) offsetof(struct bench_cli, f)
const struct cli_opt bench_opt_table[] = {
	{ "--target", "model|live|both", cli_set_targets, B(targets), 0, 0, target_words,
	  "where to run [both]" },
	{ "--lock", "mmap|vma|both", cli_set_locks, B(locks), 0, 0, lock_words,
	  "the model readers' lock policy [both]; the live kernel has its\n"
	  "own (rows say \"kernel\")" },
	{ "--view", "VIEW", cli_set_view, B(o.view), 0, 0, NULL,
	  "maps, smaps, smaps_rollup, numa_maps or query: the view the\n"
	  "readers read [maps; run: smaps]; query is PROCMAP_QUERY over\n"
	  "every VMA" },
	{ "--readers", "N[,N...]", cli_set_ulist, B(readers), 0, 256, NULL,
	  "proc-vs-map: reader threads, one row each [1; run: 0,1,4]" },
	{ "--duration", "SECONDS", cli_set_seconds, B(o.duration_s), 0.001, 86400, NULL,
	  "proc-vs-map: mapper run per sample; khugepaged: time limit per\n"
	  "sample [3]" },
	{ "--samples", "N", cli_set_uint, B(o.samples), 1, 100000, NULL,
	  "samples per row; medians over them [5; run: 3]" },
	{ "--mb", "N", set_mb, B(o.mb), 0, 0, NULL,
	  "proc-vs-map: the mapper's region in MiB, a power of two [128]" },
	{ "--busy", "N", cli_set_uint, B(o.busy), 0, 1024, NULL,
	  "proc-vs-map: CPU hogs on the readers' CPU [0]" },
	{ "--busyduration", "MS", cli_set_seconds, B(o.busyduration_ms), 0, 1e6, NULL,
	  "hogs spin MS then sleep 1 ms; 0 spins on [0]" },
	{ "--seed", "N", cli_set_u64, B(o.seed), 0, 0, NULL,
	  "the mapper's random stream [1]" },
	{ "--sizes", "N[,N...]", cli_set_ulist, B(sizes), 1, 100000000, NULL,
	  "read-cost: layouts in VMAs (k/M suffixes) [1k,10k,65530,1M];\n"
	  "live is capped at vm.max_map_count and skips larger sizes" },
	{ "--populate", NULL, cli_set_flag, B(o.populate), 0, 0, NULL,
	  "read-cost: fault in every page of the layouts" },
	{ "--iterations", "N", cli_set_ulong, B(o.iterations), 1, 10000000, NULL,
	  "ops: timed iterations per sample [1000]" },
	{ "--vmas", "N", cli_set_ulong, B(o.vmas), 1, 60000, NULL,
	  "ops: VMAs in the layout whose maps is read [1000]" },
	{ "--record-ns", "N|auto", set_record_ns, B(o.record_ns), 0, 0, NULL,
	  "proc-vs-map: extra CPU time model readers spend per record,\n"
	  "inside their lock; auto measures the live kernel's and the\n"
	  "model's per-record cost of the view now and charges the\n"
	  "difference [auto]; 0: the model's own speed" },
	{ "--call-ns", "N|auto", set_record_ns, B(o.call_ns), 0, 0, NULL,
	  "proc-vs-map: extra CPU time model readers spend per read()\n"
	  "call, outside any lock (the system call the model's reader does\n"
	  "not make); auto measures an end-of-file read() of the view on\n"
	  "both sides now and charges the difference [auto]" },
	{ "--skip-vmas", "N", cli_set_ulong, B(o.kh_skip_vmas), 0, 4000000, NULL,
	  "khugepaged: ineligible VMAs before the ranges [100k]" },
	{ "--ranges", "N", cli_set_uint, B(o.kh_ranges), 1, 4096, NULL,
	  "khugepaged: collapsible 2 MiB ranges [8]" },
	{ "--scan-sleep", "MS", cli_set_uint, B(o.kh_scan_sleep_ms), 1, 60000, NULL,
	  "khugepaged: sleep between wakeups [10]" },
	{ "--policy", "LIST", cli_set_wordset, B(policies), 0, 0, policy_words,
	  "khugepaged: scanner rows, a comma list of mainline (6.18),\n"
	  "resume (the per-mm resume address alone), skip (skip to the\n"
	  "next candidate alone), drop (drop and re-take the lock after\n"
	  "1024 skipped VMAs alone), fixed (all three: the series); both =\n"
	  "mainline,fixed; all = every one [both]" },
	{ "--uncollapsible", "N", cli_set_uint, B(o.kh_uncollapsible), 0, 4096, NULL,
	  "khugepaged: eligible 2 MiB ranges it cannot collapse (every PTE\n"
	  "cleared by a sub-PMD MADV_DONTNEED: more pte_none than\n"
	  "max_ptes_none), before the collapsible ones [0]" },
	{ "--steal", "LIST", cli_set_wordset, B(steals), 0, 0, steal_words,
	  "mmap_lock reader stealing, model rows for each (comma list):\n"
	  "mainline (6.18), nosteal (the 2026 series: readers that drop\n"
	  "the lock for a writer re-take it without stealing),\n"
	  "not-behind-writer (never steal when a writer is first in the\n"
	  "queue), never; all = the four [proc-vs-map, run: mainline;\n"
	  "khugepaged: nosteal]" },
	{ "--rcu-callbacks", "writer|anywhere", cli_set_choice, B(rcu), 0, 0, rcu_words,
	  "where the model frees what a writer unmapped (RCU callbacks):\n"
	  "on the writer's CPU at nice 19, as the kernel's softirq\n"
	  "[writer]; anywhere: liburcu's default worker, nice 0" },
	{ "--trace", NULL, cli_set_flag, B(o.trace), 0, 0, NULL,
	  "proc-vs-map, run: trace the lock on both targets (the kernel's\n"
	  "mmap_lock and sched tracepoints, root; the model's own events)\n"
	  "and print the lock dynamics side by side" },
	{ "--json", "FILE", cli_set_json_path, B(o.json), 0, 0, NULL,
	  "write the results as JSON (checked before the run)" },
	{ "--plot", "FILE.png|FILE.svg", cli_set_plot_path, B(o.plot), 0, 0, NULL,
	  "plot them with gnuplot (proc-vs-map, read-cost)" },
	{ "--quiet", NULL, cli_set_flag, B(o.quiet), 0, 0, NULL,
	  "no progress line on stderr" },
	CLI_OPT_END,
};
#undef B

static const struct cli_opt *const bench_tables[] = { bench_opt_table, cli_common_opts, NULL };

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
"  khugepaged   seed 003: time to collapse THP ranges behind many ineligible\n"
"               VMAs while a mapper contends for mmap_lock, and the scanner's\n"
"               longest mmap_lock hold: 6.18, each fix alone and the series\n"
"               on the model, and the live kernel beside them (root)\n"
"\n"
"Options [defaults]:\n");
	cli_print_opts(f, bench_tables);
	fprintf(f,
"\n"
"The model is configured from this host's profile (vmalock host), or --profile.\n"
"Exit status: 0 success; 1 a target failed; 2 bad usage.\n");
}

void bench_cli_default(struct bench_cli *c)
{
	struct bench_opts *o = &c->o;

	memset(c, 0, sizeof(*c));
	o->view = VML_VIEW_MAPS;
	o->duration_s = 3;
	o->samples = 5;
	o->seed = 1;
	o->mb = 128;
	o->iterations = 1000;
	o->vmas = 1000;
	o->kh_skip_vmas = 100000;
	o->kh_ranges = 8;
	o->kh_scan_sleep_ms = 10;
	o->record_ns = -1;
	o->call_ns = -1;
	c->targets = CLI_MODEL | CLI_LIVE;
	c->locks = CLI_LOCK_MMAP | CLI_LOCK_VMA;
	c->readers = (struct cli_ulist){ .v = { 1 }, .nr = 1 };
	c->sizes = (struct cli_ulist){ .v = { 1000, 10000, 65530, 1000000 }, .nr = 4 };
	c->policies = 1u << 5;	/* both */
	c->steals = 0;		/* the scenario's default */
}

void bench_cli_finish(struct bench_cli *c)
{
	struct bench_opts *o = &c->o;

	o->model = c->targets & CLI_MODEL;
	o->live = c->targets & CLI_LIVE;
	o->lock_mmap = c->locks & CLI_LOCK_MMAP;
	o->lock_vma = c->locks & CLI_LOCK_VMA;
	for (unsigned int i = 0; i < c->readers.nr; i++)
		o->readers[i] = (unsigned int)c->readers.v[i];
	o->nr_readers = c->readers.nr;
	for (unsigned int i = 0; i < c->sizes.nr; i++)
		o->sizes[i] = c->sizes.v[i];
	o->nr_sizes = c->sizes.nr;
	o->kh_policies = 0;
	for (int i = 0; i < 5; i++)
		if (c->policies & (1u << i))
			o->kh_policies |= 1u << i;	/* BENCH_KH_MAINLINE.. BENCH_KH_FIXED */
	if (c->policies & (1u << 5))
		o->kh_policies |= BENCH_KH_MAINLINE | BENCH_KH_FIXED;
	if (c->policies & (1u << 6))
		o->kh_policies |= BENCH_KH_MAINLINE | BENCH_KH_RESUME | BENCH_KH_SKIP |
				  BENCH_KH_DROP | BENCH_KH_FIXED;
	o->rcu_anywhere = c->rcu == 1;
	o->steal = 0;
	for (int i = 0; i < BENCH_STEAL_POLICIES; i++)
		if (c->steals & (1u << i) || c->steals & (1u << BENCH_STEAL_POLICIES))
			o->steal |= BENCH_STEAL_BIT(bench_steal_order[i]);
}

static int scenario_arg(void *opts, const char *arg)
{
	struct bench_cli *c = opts;

	if (c->scenario)
		return cli_usage_error("bench", "unexpected argument '%s'", arg);
	c->scenario = arg;
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_cli c;
	const char *scenario;
	struct pvm_result res;
	bool help_wanted;
	int ret;

	bench_cli_default(&c);
	ret = cli_parse("bench", bench_tables, argc, argv, &c, scenario_arg, &help_wanted);
	if (ret)
		return ret;
	if (help_wanted) {
		help(stdout);
		return 0;
	}
	bench_cli_finish(&c);
	scenario = c.scenario;
	if (!scenario)
		return cli_usage_error("bench", "missing SCENARIO (proc-vs-map, read-cost, ops, khugepaged)");
	if (strcmp(scenario, "proc-vs-map") && strcmp(scenario, "read-cost") &&
	    strcmp(scenario, "ops") && strcmp(scenario, "khugepaged"))
		return cli_usage_error("bench", "SCENARIO: unknown scenario '%s' (proc-vs-map, "
				       "read-cost, ops, khugepaged)", scenario);
	bench_print_load(stdout);
	if (!strcmp(scenario, "khugepaged")) {
		if (c.o.plot)
			return cli_usage_error("bench", "--plot: khugepaged has no plot (use --json)");
		return bench_khugepaged(&c.o) ? EXIT_CHECK_FAILED : 0;
	}
	if (!c.o.model && !c.o.live)
		return cli_usage_error("bench", "--target: nothing to run");
	if (!strcmp(scenario, "ops")) {
		if (c.o.plot)
			return cli_usage_error("bench", "--plot: ops has no plot (use --json)");
		return bench_ops(&c.o);
	}
	if (!strcmp(scenario, "read-cost"))
		return bench_read_cost(&c.o);

	ret = bench_proc_vs_map(&c.o, &res);
	if (!ret) {
		pvm_print_table(stdout, &res);
		pvm_print_dynamics(stdout, &res);
		fflush(stdout);
		if (c.o.json && pvm_write_json(c.o.json, &res))
			ret = EXIT_CHECK_FAILED;
		if (c.o.plot && pvm_plot(c.o.plot, &res))
			ret = EXIT_CHECK_FAILED;
	}
	pvm_result_free(&res);
	return ret;
}
