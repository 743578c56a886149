// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * scenario.c - the list of scenarios, the options they share, and a run of
 * one: the checks of the shared options against what the scenario takes,
 * then the load line, run, print, JSON and plot, in that order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "platform/sim.h"
#include "util/json.h"

/*
 * Every scenario: one line here (its descriptor is bench_NAME, in a file of
 * its own listed in bench/meson.build), in the order --help lists them.
 */
#define SCENARIOS(X)	\
	X(proc_vs_map)	\
	X(read_cost)	\
	X(ops)		\
	X(rollup)	\
	X(khugepaged)	\
	X(monitor)	\
	X(exec_churn)	\
	X(shmem_smaps)	\
	X(vma_wait)	\
	X(faults)

#define DECLARE(name) extern const struct bench_scenario bench_##name;
#define LIST(name) &bench_##name,
SCENARIOS(DECLARE)
const struct bench_scenario *const bench_scenarios[] = { SCENARIOS(LIST) NULL };

const struct bench_scenario *bench_scenario_find(const char *name)
{
	for (int i = 0; bench_scenarios[i]; i++)
		if (!strcmp(bench_scenarios[i]->name, name))
			return bench_scenarios[i];
	return NULL;
}

/* ---- the shared options ---- */

#define C(f) offsetof(struct bench_common, f)
const struct cli_opt bench_common_opts[] = {
	{ "--target", "model|live|both", cli_set_words, C(targets), 0, 0, &target_kind_vocab,
	  "where to run [both]" },
	{ "--samples", "N", cli_set_uint, C(samples), 1, 100000, NULL,
	  "samples per row; medians over them [5; run: 3]" },
	{ "--lock", "LIST|both", cli_set_words, C(locks), 0, 0, &lock_policy_vocab,
	  "the model readers' lock policies, a row for each (comma list;\n"
	  "the scenarios that have model readers) [both]; the live kernel\n"
	  "has its own (rows say \"kernel\"):" },
	{ "--steal", "LIST", cli_set_words, C(steals), 0, 0, &steal_policy_vocab,
	  "how model readers may take mmap_lock past a queued writer, a\n"
	  "row for each (comma list) [proc-vs-map, run: mainline;\n"
	  "khugepaged: nosteal]:" },
	{ "--trace", NULL, cli_set_flag, C(trace), 0, 0, NULL,
	  "proc-vs-map, run: trace the lock on both targets (the kernel's\n"
	  "mmap_lock and sched tracepoints, root; the model's own events)\n"
	  "and print the lock dynamics side by side" },
	{ "--trace-events", "FILE", cli_set_json_path, C(trace_events), 0, 0, NULL,
	  "with --trace: also write every traced event, model and live,\n"
	  "one line each, in time order per sample (the evidence behind\n"
	  "the table; large: ~150k lines a second of run)" },
	{ "--json", "FILE", cli_set_json_path, C(json), 0, 0, NULL,
	  "write the results as JSON (checked before the run;\n"
	  "docs/bench-json.md)" },
	{ "--plot", "FILE.png|FILE.svg", cli_set_plot_path, C(plot), 0, 0, NULL,
	  "plot them with gnuplot (the scenarios that have a plot)" },
	{ "--quiet", NULL, cli_set_flag, C(quiet), 0, 0, NULL,
	  "no progress line on stderr" },
	{ "--cpus", "N[,N...]", cli_set_ulist, C(cpus_list), 1, SIM_MAX_CPUS, NULL,
	  "proc-vs-map, run, vma-wait, khugepaged, exec-churn, faults: also\n"
	  "run the model on a simulated machine of N CPUs in virtual time\n"
	  "(docs/simulation.md): rows marked \"sim\" beside the others;\n"
	  "faults: a list, a machine of each size" },
	{ "--sim-seed", "S", cli_set_u64, C(sim_seed), 0, 0, NULL,
	  "the simulated machine's seed; the same seed and charges give\n"
	  "the same simulated rows, byte for byte [1]" },
	{ "--sim-only", NULL, cli_set_flag, C(sim_only), 0, 0, NULL,
	  "with --cpus: only the simulated rows (no live kernel needed\n"
	  "with --sim-costs)" },
	{ "--sim-costs", "FILE", cli_set_string, C(sim_costs), 0, 0, NULL,
	  "with --cpus: the charges from FILE's \"sim_costs\" (any\n"
	  "simulated run's --json) instead of measuring them now" },
	CLI_OPT_END,
};
#undef C

void bench_common_defaults(struct bench_common *c)
{
	*c = (struct bench_common){
		.targets = VOCAB_BIT(TARGET_MODEL) | VOCAB_BIT(TARGET_LIVE),
		.samples = 5,
		.sim_seed = 1,
	};
}

/* "a, b and c": the names of the scenarios @has says yes to; returns how many. */
static unsigned int names_of(bool (*has)(const struct bench_scenario *sc, const void *arg),
			     const void *arg, char *buf, size_t len)
{
	unsigned int n = 0, k = 0;
	size_t used = 0;

	for (int i = 0; bench_scenarios[i]; i++)
		n += has(bench_scenarios[i], arg);
	buf[0] = '\0';
	for (int i = 0; bench_scenarios[i] && used < len; i++) {
		if (!has(bench_scenarios[i], arg))
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 k == 0 ? "" : k + 1 == n ? " and " : ", ",
					 bench_scenarios[i]->name);
		k++;
	}
	return n;
}

static bool has_lock(const struct bench_scenario *sc, const void *bit)
{
	return sc->locks & *(const unsigned int *)bit;
}

static bool has_steal(const struct bench_scenario *sc, const void *bit)
{
	return sc->steals & *(const unsigned int *)bit;
}

static bool has_trace(const struct bench_scenario *sc, const void *unused)
{
	(void)unused;
	return sc->trace;
}

static bool has_sim(const struct bench_scenario *sc, const void *unused)
{
	(void)unused;
	return sc->sim;
}

/* An option's name: @len characters of @name ("--mb" of "--mb=4"). */
struct opt_name {
	const char *name;
	size_t len;
};

static bool has_option(const struct bench_scenario *sc, const void *arg)
{
	const struct opt_name *o = arg;

	return cli_find((const struct cli_opt *const[]){ sc->opts, NULL }, o->name, o->len);
}

int bench_other_option(const char *cmd, const char *opt, size_t len)
{
	struct opt_name o = { opt, len };
	char names[256];
	unsigned int n = names_of(has_option, &o, names, sizeof(names));

	if (!n)
		return 0;
	return cli_usage_error(cmd, "%.*s: only %s %s it", (int)len, opt, names,
			       n == 1 ? "has" : "have");
}

/* A policy of --lock or --steal that @sc's rows do not take: one line naming those that do. */
static int policy_not_taken(const char *cmd, const char *opt, const struct vml_vocab *v,
			    unsigned int given, unsigned int taken,
			    bool (*has)(const struct bench_scenario *sc, const void *bit))
{
	unsigned int extra = given & ~taken, n, bit;
	int value;
	char names[256];

	if (!extra)
		return 0;
	value = __builtin_ctz(extra);
	bit = VOCAB_BIT(value);
	n = names_of(has, &bit, names, sizeof(names));
	return cli_usage_error(cmd, "%s %s: only %s %s it", opt, vocab_name(v, value), names,
			       n == 1 ? "has" : "have");
}

int bench_check(const char *cmd, const struct bench_scenario *sc, struct bench_common *c,
		void *opts)
{
	char names[256];
	unsigned int n;
	int ret;

	c->model = c->targets & VOCAB_BIT(TARGET_MODEL);
	c->live = c->targets & VOCAB_BIT(TARGET_LIVE);
	if (c->plot && !sc->plot)
		return cli_usage_error(cmd, "--plot: %s has no plot (use --json)", sc->name);
	if (sc->needs_live && !c->live)
		return cli_usage_error(cmd, "--target: %s needs the live kernel (%s): live or "
				       "both", sc->name, sc->needs_live);
	ret = policy_not_taken(cmd, "--lock", &lock_policy_vocab, c->locks, sc->locks, has_lock);
	if (!ret)
		ret = policy_not_taken(cmd, "--steal", &steal_policy_vocab, c->steals, sc->steals,
				       has_steal);
	if (ret)
		return ret;
	n = names_of(has_trace, NULL, names, sizeof(names));
	if (c->trace_events && !(c->trace && sc->trace)) {
		if (sc->trace)
			return cli_usage_error(cmd, "--trace-events: needs --trace");
		return cli_usage_error(cmd, "--trace-events: needs --trace and %s", names);
	}
	if (c->trace && !sc->trace)
		return cli_usage_error(cmd, "--trace: only %s %s it", names,
				       n == 1 ? "has" : "have");
	n = names_of(has_sim, NULL, names, sizeof(names));
	c->cpus = c->cpus_list.nr ? (unsigned int)c->cpus_list.v[0] : 0;
	if (c->cpus_list.nr > 1 && !sc->sim_cpus_list)
		return cli_usage_error(cmd, "--cpus: one N (only faults takes a list)");
	if (c->cpus && !sc->sim)
		return cli_usage_error(cmd, "--cpus: only %s %s a simulated machine yet", names,
				       n == 1 ? "has" : "have");
	if ((c->sim_only || c->sim_costs) && !c->cpus)
		return cli_usage_error(cmd, "%s: needs --cpus N",
				       c->sim_only ? "--sim-only" : "--sim-costs");
	c->sim = c->cpus > 0;
	if (c->sim_only)
		c->model = c->live = false;
	return sc->check ? sc->check(cmd, c, opts) : 0;
}

unsigned int bench_locks(const struct bench_run *r)
{
	return r->c->locks ? r->c->locks : r->sc->default_locks;
}

unsigned int bench_steals(const struct bench_run *r)
{
	return r->c->steals ? r->c->steals : r->sc->default_steals;
}

/* ---- options several scenarios take ---- */

int bench_set_mb(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	unsigned long v;

	if (cli_parse_count(val, 1, 1UL << 20, &v))
		return cli_usage_error(cmd, "%s: bad value '%s' (MiB, up to 1M)", o->name, val);
	*(unsigned long *)dst = v;
	return 0;
}

int bench_check_mb(const char *cmd, unsigned long mb)
{
	/* The mapper masks a random number to pick a page of the region. */
	if (mb & (mb - 1))
		return cli_usage_error(cmd, "--mb: bad value '%lu' (MiB, a power of two up to 1M)",
				       mb);
	return 0;
}

int bench_set_ns_auto(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
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

static const struct vml_word rcu_words[] = {
	{ "writer", 0, NULL, 0 },
	{ "anywhere", 1, NULL, 0 },
	{ NULL, 0, NULL, 0 },
};
const struct vml_vocab bench_rcu_vocab = { "value", rcu_words };

void bench_mapper_defaults(struct bench_mapper_opts *m)
{
	*m = (struct bench_mapper_opts){ .mb = 128, .duration_s = 3, .seed = 1 };
}

/* ---- a run ---- */

int bench_measure(struct bench_run *r)
{
	/* Simulated rows alone do not depend on the host's load: stdout stays the same, run to run. */
	if (!r->c->sim_only)
		bench_print_load(stdout);
	return r->sc->run(r) ? EXIT_FAILURE : 0;
}

/* Write the document: meta, calibration and rows. Return: 0 or -1 (printed). */
static int write_json(const struct bench_run *r)
{
	json_t *doc = bench_doc_new(r);
	int ret;

	if (!doc) {
		fprintf(stderr, "vmalock: --json %s: out of memory\n", r->c->json);
		return -1;
	}
	r->sc->json(doc, r);
	ret = json_write_file(doc, r->c->json);
	json_decref(doc);
	if (ret)
		fprintf(stderr, "vmalock: --json %s: %s\n", r->c->json, strerror(-ret));
	return ret ? -1 : 0;
}

int bench_report(struct bench_run *r)
{
	int ret = 0;

	r->sc->print(stdout, r);
	fflush(stdout);
	if (r->c->json && write_json(r))
		ret = EXIT_FAILURE;
	if (r->c->plot && bench_plot_run(r))
		ret = EXIT_FAILURE;
	return ret;
}

void bench_release(struct bench_run *r)
{
	if (r->sc->free)
		r->sc->free(r);
}

int bench_run_scenario(const struct bench_scenario *sc, const struct bench_common *c,
		       const void *opts)
{
	struct bench_run r = { .sc = sc, .c = c, .opts = opts };
	int ret = bench_measure(&r);

	if (!ret)
		ret = bench_report(&r);
	bench_release(&r);
	return ret;
}

/* ---- --help ---- */

/* @text after a @indent-wide name column, wrapped at 79 columns. */
static void print_wrapped(FILE *f, const char *name, int indent, const char *text)
{
	int col = indent ? fprintf(f, "  %-*s", indent - 2, name) : 0;

	while (*text) {
		size_t word = strcspn(text, " ");

		if (col > indent && col + 1 + (int)word > 79) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		col += fprintf(f, "%.*s", (int)word, text);
		text += word;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

void bench_print_scenarios(FILE *f)
{
	for (int i = 0; bench_scenarios[i]; i++)
		print_wrapped(f, bench_scenarios[i]->name, 15, bench_scenarios[i]->question);
}

void bench_print_scenario_help(FILE *f, const struct bench_scenario *sc)
{
	char rows[512];

	print_wrapped(f, "", 0, sc->question);
	if (sc->about)
		fprintf(f, "\n%s\n", sc->about);
	snprintf(rows, sizeof(rows), "A row: %s.", sc->rows);
	fputc('\n', f);
	print_wrapped(f, "", 0, rows);
	fprintf(f, "\nOptions [defaults]:\n");
	bench_print_scenario_opts(f, sc);
}

void bench_print_scenario_opts(FILE *f, const struct bench_scenario *sc)
{
	struct cli_opt shared[16];
	unsigned int n = 0;

	cli_print_opts(f, (const struct cli_opt *const[]){ sc->opts, NULL });
	/* the shared options it takes */
	for (const struct cli_opt *o = bench_common_opts; o->name && n < 15; o++) {
		if ((!strcmp(o->name, "--lock") && !sc->locks) ||
		    (!strcmp(o->name, "--steal") && !sc->steals) ||
		    (!strncmp(o->name, "--trace", 7) && !sc->trace) ||
		    (!strcmp(o->name, "--plot") && !sc->plot))
			continue;
		shared[n++] = *o;
	}
	shared[n] = (struct cli_opt)CLI_OPT_END;
	cli_print_opts(f, (const struct cli_opt *const[]){ shared, NULL });
}
