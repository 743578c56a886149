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
#include "scriptrun.h"

static const struct vml_word rcu_words[] = {
	{ "writer", 0, NULL, 0 },
	{ "anywhere", 1, NULL, 0 },
	{ NULL, 0, NULL, 0 },
};
static const struct vml_vocab rcu_vocab = { "value", rcu_words };

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

/* --mb: MiB, up to 1M (a power of two where the mapper picks pages: bench_cli_check_mb) */
static int set_mb(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	unsigned long v;

	if (cli_parse_count(val, 1, 1UL << 20, &v))
		return cli_usage_error(cmd, "%s: bad value '%s' (MiB, up to 1M)", o->name, val);
	*(unsigned long *)dst = v;
	return 0;
}

int bench_cli_check_mb(const char *cmd, const struct bench_cli *c)
{
	unsigned long v = c->o.mb;

	/* The mapper masks a random number to pick a page of the region. */
	if (v & (v - 1))
		return cli_usage_error(cmd, "--mb: bad value '%lu' (MiB, a power of two up to 1M)",
				       v);
	return 0;
}

/* --tool CMD: repeatable, collected in order */
static int set_tool(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	struct bench_tool_list *l = dst;

	if (!*val || strspn(val, " \t") == strlen(val))
		return cli_usage_error(cmd, "%s: empty command", o->name);
	if (strlen(val) >= 500)
		return cli_usage_error(cmd, "%s: command longer than 500 characters", o->name);
	if (l->nr == BENCH_MAX_TOOLS)
		return cli_usage_error(cmd, "%s: more than %d tools", o->name, BENCH_MAX_TOOLS);
	l->cmd[l->nr++] = val;
	return 0;
}

/* --tools all|none|NAME[,NAME...]: the built-in tools to run */
static int set_tool_names(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	if (strcmp(val, "all") && strcmp(val, "none")) {
		for (const char *s = val;;) {
			size_t n = strcspn(s, ",");
			char name[32];

			if (!n || n >= sizeof(name))
				return cli_usage_error(cmd, "%s: bad value '%s' (all, none, or some of %s)",
						       o->name, val, bench_monitor_tool_names());
			memcpy(name, s, n);
			name[n] = '\0';
			if (!bench_monitor_is_tool(name))
				return cli_usage_error(cmd, "%s: unknown tool '%s' (%s)", o->name, name,
						       bench_monitor_tool_names());
			if (!s[n])
				break;
			s += n + 1;
		}
	}
	*(const char **)dst = val;
	return 0;
}

#define B(f) offsetof(struct bench_cli, f)
const struct cli_opt bench_opt_table[] = {
	{ "--target", "model|live|both", cli_set_words, B(targets), 0, 0, &target_kind_vocab,
	  "where to run [both]" },
	{ "--lock", "LIST|both", cli_set_words, B(o.locks), 0, 0, &lock_policy_vocab,
	  "the model readers' lock policies, a comma list (vma-strict and\n"
	  "vma-recheck: proc-vs-map only; vmalock race --help) [both]; the\n"
	  "live kernel has its own (rows say \"kernel\"):" },
	{ "--kernel-transients", NULL, cli_set_flag, B(o.kernel_transients), 0, 0, NULL,
	  "proc-vs-map: the model goes through 6.18's intermediate states\n"
	  "(vmalock race --help; its mapper's mmap/munmap meet only the\n"
	  "re-walking VMA iterator)" },
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
	  "proc-vs-map: the mapper's region in MiB, a power of two; vma-wait:\n"
	  "the zapped VMA, any size up to 4096 [128]" },
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
	  "proc-vs-map, monitor: extra CPU time model readers spend per\n"
	  "record, inside their lock; auto measures the live kernel's and\n"
	  "the model's per-record and per-page cost of the view now and\n"
	  "charges the difference [auto]; proc-vs-map with live rows: a\n"
	  "round's model samples are charged the page walk its live sample\n"
	  "timed on its own mapper first (the kernel's cost moves from\n"
	  "process to process); 0: the model's own speed" },
	{ "--page-ns", "N|auto", set_record_ns, B(o.page_ns), 0, 0, NULL,
	  "proc-vs-map, monitor: extra CPU time model readers spend per\n"
	  "anonymous page a walk meets, inside their lock; auto: as\n"
	  "--record-ns says; N: that, in every sample [auto; 0 with\n"
	  "--record-ns N]" },
	{ "--call-ns", "N|auto", set_record_ns, B(o.call_ns), 0, 0, NULL,
	  "proc-vs-map, monitor: extra CPU time model readers spend per\n"
	  "read() call, outside any lock (the system call the model's\n"
	  "reader does not make); auto measures an end-of-file read() of\n"
	  "the view on both sides now and charges the difference, plus the\n"
	  "model writer's way back to the lock once woken (a woken\n"
	  "futex_wait's return to user space, through perf; else a futex\n"
	  "round trip) [auto]" },
	{ "--skip-vmas", "N", cli_set_ulong, B(o.kh_skip_vmas), 0, 4000000, NULL,
	  "khugepaged: ineligible VMAs before the ranges [100k]" },
	{ "--ranges", "N", cli_set_uint, B(o.kh_ranges), 1, 4096, NULL,
	  "khugepaged: collapsible 2 MiB ranges [8]" },
	{ "--scan-sleep", "MS", cli_set_uint, B(o.kh_scan_sleep_ms), 1, 60000, NULL,
	  "khugepaged: sleep between wakeups [10]" },
	{ "--policy", "LIST", cli_set_words, B(o.kh_policies), 0, 0, &bench_kh_policy_vocab,
	  "khugepaged: scanner rows, a comma list of seed 003's fixes\n"
	  "[both]:" },
	{ "--uncollapsible", "N", cli_set_uint, B(o.kh_uncollapsible), 0, 4096, NULL,
	  "khugepaged: eligible 2 MiB ranges it cannot collapse (every PTE\n"
	  "cleared by a sub-PMD MADV_DONTNEED: more pte_none than\n"
	  "max_ptes_none), before the collapsible ones [0]" },
	{ "--steal", "LIST", cli_set_words, B(o.steal), 0, 0, &steal_policy_vocab,
	  "how model readers may take mmap_lock past a queued writer, a\n"
	  "row for each (comma list) [proc-vs-map, run: mainline;\n"
	  "khugepaged: nosteal]:" },
	{ "--rcu-callbacks", "writer|anywhere", cli_set_word, B(rcu), 0, 0, &rcu_vocab,
	  "where the model frees what a writer unmapped (RCU callbacks):\n"
	  "on the writer's CPU at nice 19, as the kernel's softirq\n"
	  "[writer]; anywhere: liburcu's default worker, nice 0" },
	{ "--trace", NULL, cli_set_flag, B(o.trace), 0, 0, NULL,
	  "proc-vs-map, run: trace the lock on both targets (the kernel's\n"
	  "mmap_lock and sched tracepoints, root; the model's own events)\n"
	  "and print the lock dynamics side by side" },
	{ "--region-only", NULL, cli_set_flag, B(o.region_only), 0, 0, NULL,
	  "proc-vs-map, run: the model's mm holds the mapper's region\n"
	  "alone; by default it also holds copies of the live mapper's\n"
	  "own mappings (binary, libraries, heap, stack), as the live\n"
	  "mapper's smaps does, when the live kernel is available" },
	{ "--trace-events", "FILE", cli_set_json_path, B(o.trace_events), 0, 0, NULL,
	  "with --trace: also write every traced event, model and live,\n"
	  "one line each, in time order per sample (the evidence behind\n"
	  "the table; large: ~150k lines a second of run)" },
	{ "--threads", "N[,N...]", cli_set_ulist, B(threads), 1, 1024, NULL,
	  "exec-churn: model workers and live exec loops, one row each\n"
	  "[1,2,4,8,16,32,64]" },
	{ "--size", "SIZE", cli_set_size, B(o.size), 4 << 20, 1UL << 40, NULL,
	  "shmem-smaps: the mapping each case reads [2G]" },
	{ "--stride", "SIZE", cli_set_size, B(o.stride), 8192, 1UL << 30, NULL,
	  "shmem-smaps: one page dirtied every SIZE [2M]" },
	{ "--reads", "N", cli_set_ulong, B(o.reads), 1, 1000000, NULL,
	  "shmem-smaps: whole reads of smaps timed per sample [100]" },
	{ "--tool", "'CMD {pid}'", set_tool, B(o.tools), 0, 0, NULL,
	  "monitor: a monitoring command run once per poll by /bin/sh\n"
	  "(repeatable, one row each); {pid} is the mapper's pid, {ppid}\n"
	  "ours (the mapper's command line ends with it); a command\n"
	  "without {pid} is fine (some tools scan every process).\n"
	  "Given --tool, the built-ins run only as --tools names them" },
	{ "--tools", "all|none|NAME,...", set_tool_names, B(o.tool_names), 0, 0, NULL,
	  "monitor: the built-in tools [all; none with --tool]: pmap,\n"
	  "smem, top, ps, htop, atop, atop-R, pidstat, process-exporter" },
	{ "--interval", "SECONDS", cli_set_seconds, B(o.interval_s), 0.05, 86400, NULL,
	  "monitor: one poll every SECONDS, from the mapper's start [1]" },
	{ "--tool-timeout", "SECONDS", cli_set_seconds, B(o.tool_timeout_s), 0.1, 3600, NULL,
	  "monitor: a poll still running after SECONDS is killed and\n"
	  "counted in its row [10]" },
	{ "--tool-nice", "N", cli_set_uint, B(o.tool_nice), 0, 19, NULL,
	  "monitor: the tools' nice value, on the readers' CPU [0]" },
	{ "--json", "FILE", cli_set_json_path, B(o.json), 0, 0, NULL,
	  "write the results as JSON (checked before the run)" },
	{ "--plot", "FILE.png|FILE.svg", cli_set_plot_path, B(o.plot), 0, 0, NULL,
	  "plot them with gnuplot (proc-vs-map, read-cost, monitor)" },
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
"  monitor      real monitoring tools (pmap, smem, top, ps, htop, atop, pidstat,\n"
"               prometheus-process-exporter, or --tool CMD) polling the live\n"
"               mapper: its latency with each against none, what each read of\n"
"               /proc (observed under strace), and the model's prediction of\n"
"               what the seeds' per-VMA locks would save with that tool\n"
"  exec-churn   seed 001: threads building and tearing down exec-like address\n"
"               spaces of the same files; executions/s, i_mmap_rwsem hold and\n"
"               wait, and the ceiling one file's lock sets, for both i_mmap\n"
"               orders; beside it parallel exec loops on the live kernel\n"
"  shmem-smaps  seed 004: 100 whole reads of smaps of a 2 GB mapping dirtied\n"
"               every 2 MB: shmem private/shared/not swapped vs anonymous, on\n"
"               the model (fast and per-page) and the live kernel (root: swap)\n"
"  vma-wait     a writer waiting for a VMA's reader: MADV_DONTNEED zaps a\n"
"               populated region under its VMA's read lock (6.18, and the\n"
"               model) while the mapper munmaps a page inside it, or in\n"
"               another VMA; the munmap's wait against the rest of the zap\n"
"\n"
"Options [defaults]:\n");
	cli_print_opts(f, bench_tables);
	fprintf(f,
"\n"
"The model is configured from this host's profile (vmalock host), or --profile.\n"
"monitor needs no root for its own mapper; it needs strace (observing the\n"
"tools' reads) and the tools' Debian packages: procps (pmap, top, ps), smem,\n"
"htop, atop, sysstat (pidstat), prometheus-process-exporter; a missing tool\n"
"is skipped with a one-line reason (scripts/install-deps.sh installs them).\n"
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
	o->interval_s = 1;
	o->tool_timeout_s = 10;
	o->call_ns = -1;
	o->page_ns = -1;
	c->targets = VOCAB_BIT(TARGET_MODEL) | VOCAB_BIT(TARGET_LIVE);
	o->locks = VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA);
	c->readers = (struct cli_ulist){ .v = { 1 }, .nr = 1 };
	c->sizes = (struct cli_ulist){ .v = { 1000, 10000, 65530, 1000000 }, .nr = 4 };
	c->threads = (struct cli_ulist){ .v = { 1, 2, 4, 8, 16, 32, 64 }, .nr = 7 };
	o->size = 2UL << 30;
	o->stride = 2UL << 20;
	o->reads = 100;
	o->kh_policies = 0;	/* both */
	o->steal = 0;		/* the scenario's default */
}

void bench_cli_finish(struct bench_cli *c)
{
	struct bench_opts *o = &c->o;

	o->model = c->targets & VOCAB_BIT(TARGET_MODEL);
	o->live = c->targets & VOCAB_BIT(TARGET_LIVE);
	for (unsigned int i = 0; i < c->readers.nr; i++)
		o->readers[i] = (unsigned int)c->readers.v[i];
	o->nr_readers = c->readers.nr;
	for (unsigned int i = 0; i < c->sizes.nr; i++)
		o->sizes[i] = c->sizes.v[i];
	o->nr_sizes = c->sizes.nr;
	for (unsigned int i = 0; i < c->threads.nr; i++)
		o->threads[i] = (unsigned int)c->threads.v[i];
	o->nr_threads = c->threads.nr;
	o->rcu_anywhere = c->rcu == 1;
}

static int scenario_arg(void *opts, const char *arg)
{
	struct bench_cli *c = opts;

	if (c->scenario)
		return cli_usage_error("bench", "unexpected argument '%s'", arg);
	c->scenario = arg;
	return 0;
}

/*
 * The scenarios; those with run() print and write their own results and
 * return 0 or non-zero (a negative errno, or 1), which becomes exit status 1.
 */
static const struct bench_scenario {
	const char *name;
	int (*run)(const struct bench_opts *o);
	bool plot;			/* takes --plot */
	const char *needs_live;		/* why it needs --target live or both, or NULL */
} scenarios[] = {
	{ "proc-vs-map", NULL, true, NULL },
	{ "read-cost", bench_read_cost, true, NULL },
	{ "ops", bench_ops, false, NULL },
	{ "khugepaged", bench_khugepaged, false, NULL },
	{ "monitor", bench_monitor, true, "its tools are real programs" },
	{ "exec-churn", bench_exec_churn, true, NULL },
	{ "shmem-smaps", bench_shmem_smaps, true, NULL },
	{ "vma-wait", bench_vma_wait, false, NULL },
	{ NULL, NULL, false, NULL },
};
#define SCENARIO_NAMES \
	"proc-vs-map, read-cost, ops, khugepaged, monitor, exec-churn, shmem-smaps, vma-wait"

int cmd_bench(int argc, char **argv)
{
	const struct bench_scenario *sc;
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
		return cli_usage_error("bench", "missing SCENARIO (%s)", SCENARIO_NAMES);
	for (sc = scenarios; sc->name && strcmp(sc->name, scenario); sc++)
		;
	if (!sc->name)
		return cli_usage_error("bench", "SCENARIO: unknown scenario '%s' (%s)", scenario,
				       SCENARIO_NAMES);
	if (c.o.plot && !sc->plot)
		return cli_usage_error("bench", "--plot: %s has no plot (use --json)", scenario);
	if (sc->needs_live && !c.o.live)
		return cli_usage_error("bench", "--target: %s needs the live kernel (%s): live or "
				       "both", scenario, sc->needs_live);
	if (strcmp(scenario, "proc-vs-map") &&
	    ((c.o.locks & ~(VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA))) ||
	     c.o.kernel_transients))
		return cli_usage_error("bench", "--%s%s: only proc-vs-map has it",
				       c.o.kernel_transients ? "kernel-transients" : "lock ",
				       c.o.kernel_transients ? "" :
				       vocab_name(&lock_policy_vocab, __builtin_ctz(c.o.locks &
						  ~(VOCAB_BIT(VML_LOCK_MMAP) |
						    VOCAB_BIT(VML_LOCK_VMA)))));
	if (!strcmp(scenario, "vma-wait") && c.o.mb > BENCH_VMA_WAIT_MAX_MB)
		return cli_usage_error("bench", "--mb: vma-wait populates the region on both "
				       "targets: at most %d MiB", BENCH_VMA_WAIT_MAX_MB);
	if (strcmp(scenario, "vma-wait") && (ret = bench_cli_check_mb("bench", &c)))
		return ret;
	if (c.o.trace_events && (!c.o.trace || strcmp(scenario, "proc-vs-map")))
		return cli_usage_error("bench", "--trace-events: needs --trace and proc-vs-map");
	bench_print_load(stdout);
	if (sc->run)
		return sc->run(&c.o) ? EXIT_CHECK_FAILED : 0;

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
