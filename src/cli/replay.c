// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock replay - apply an op script, print or compare views.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "platform/sim.h"
#include "util/clock.h"
#include "scriptrun.h"
#include "spaces/view.h"
#include "util/alloc.h"

#define MAX_COMPARE 8
#define DEFAULT_ATTEMPTS 4

struct replay_opts {
	const char *file;
	unsigned int targets;		/* VOCAB_BIT(enum target_kind)s; 0: not given */
	enum vml_view view;
	const char *compare;
	unsigned int locks;		/* VOCAB_BIT(enum vml_lock_policy)s */
	const char *range;
	unsigned int attempts;		/* fresh targets tried while views differ */
	bool raw, quiet;
	unsigned int cpus;		/* --cpus: the model on a simulated machine */
	uint64_t sim_seed;
};

static int set_script(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	if (*(const char **)dst)
		return cli_usage_error(cmd, "%s: a second script '%s'", o->name, val);
	return cli_set_string(cmd, o, val, dst);
}

#define R(f) offsetof(struct replay_opts, f)
static const struct cli_opt replay_opts_table[] = {
	{ "--script", "FILE", set_script, R(file), 0, 0, NULL,
	  "the op script (or give it as the argument; - reads stdin)" },
	{ "--target", "model|live|both", cli_set_words, R(targets), 0, 0, &target_kind_vocab,
	  "where to run it [model; both with --compare]" },
	{ "--view", "VIEW", cli_set_view, R(view), 0, 0, NULL,
	  "maps [default], smaps, smaps_rollup, numa_maps, or query\n"
	  "(PROCMAP_QUERY, printed as maps lines)" },
	{ "--compare", "VIEW,...", cli_set_string, R(compare), 0, 0, NULL,
	  "run on both targets and diff these views; any difference is\n"
	  "printed as a unified diff (implies --target both)" },
	{ "--lock", "mmap|vma|both", cli_set_words, R(locks), VML_LOCK_MMAP, VML_LOCK_VMA,
	  &lock_policy_vocab,
	  "the model's /proc reader locking [vma]; both: each in turn;\n"
	  "the live kernel uses its own" },
	{ "--range", "0xLO-0xHI", cli_set_string, R(range), 0, 0, NULL,
	  "the address range shown [the script range]; smaps_rollup is\n"
	  "whole-process and never cut (the live one includes the child's\n"
	  "binary and libc)" },
	{ "--attempts", "N", cli_set_uint, R(attempts), 1, 100, NULL,
	  "--compare: run on fresh targets up to N times while only the\n"
	  "views differ [4] (see below); 1 shows the first difference" },
	{ "--raw", NULL, cli_set_flag, R(raw), 0, 0, NULL,
	  "do not normalise device, inode and directory names" },
	{ "--cpus", "N", cli_set_uint, R(cpus), 1, SIM_MAX_CPUS, NULL,
	  "run it as a task of a simulated machine of N CPUs (docs/\n"
	  "simulation.md): the model's views must be the same as without" },
	{ "--sim-seed", "S", cli_set_u64, R(sim_seed), 0, 0, NULL,
	  "with --cpus: the simulated machine's seed [1]" },
	{ "--quiet", NULL, cli_set_flag, R(quiet), 0, 0, NULL,
	  "print only failures and differences" },
	CLI_OPT_END,
};
#undef R

static const struct cli_opt *const replay_tables[] = { replay_opts_table, cli_common_opts, NULL };

static void help(FILE *f)
{
	fprintf(f,
"usage: vmalock replay FILE [options]\n"
"\n"
"Apply the op script FILE (format: docs/op-scripts.md) to a fresh address space\n"
"and print a view of the script range, with device and inode numbers and the\n"
"temporary file directories normalised. The model is configured from this\n"
"host's profile (vmalock host), or --profile.\n"
"\n");
	cli_print_opts(f, replay_tables);
	fprintf(f,
"\n"
"An op without expect= must succeed; one with expect=ERRNO must fail with it.\n"
"\n"
"The live kernel does work of its own in a process between two ops: khugepaged\n"
"drains every CPU's LRU batches at each wake-up (pages still in a batch then\n"
"show as LazyFree, or active, a step early) and collapses huge pages; DAMON\n"
"marks the pages it samples young (Referenced:). The model does none of it, so\n"
"with --compare, a run whose ops all agree but whose views differ is run again\n"
"on fresh targets, up to --attempts times; each differing attempt is printed\n"
"on stderr, and a difference that stays on every attempt is the model's.\n"
"\n"
"Exit status: 0 all as expected; 1 an op ended otherwise, the targets differ,\n"
"or a target failed; 2 bad usage or a bad script line; 77 the script needs\n"
"what this host lacks (require, or swap without root).\n");
}

static int positional(void *opts, const char *arg)
{
	struct replay_opts *r = opts;

	if (r->file)
		return cli_usage_error("replay", "unexpected argument '%s'", arg);
	r->file = arg;
	return 0;
}

static int parse_range(const char *s, unsigned long *lo, unsigned long *hi)
{
	char buf[64];
	char *dash;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (!dash)
		return -1;
	*dash = '\0';
	if (parse_addr(buf, lo) || parse_addr(dash + 1, hi) || *lo >= *hi)
		return -1;
	return 0;
}

static int parse_compare(const char *s, enum vml_view *views, int *nr)
{
	const char *p = s;

	*nr = 0;
	for (;;) {
		size_t n = strcspn(p, ",");
		char v[32];

		if (!n || n >= sizeof(v))
			return cli_usage_error("replay", "--compare: bad list '%s'", s);
		if (*nr == MAX_COMPARE)
			return cli_usage_error("replay", "--compare: too many views");
		memcpy(v, p, n);
		v[n] = '\0';
		if (target_view_parse(v, &views[*nr]))
			return cli_usage_error("replay", "--compare: unknown view '%s' (maps, "
					       "smaps, smaps_rollup, numa_maps, query)", v);
		(*nr)++;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

static int line_count(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/*
 * Compare every view; the output (diffs, or "same" lines) goes to @out.
 * Return: 0, EXIT_CHECK_FAILED; *@views_only tells whether the views could
 * be compared (false: a view could not be read).
 */
static int compare(struct cli_run *run, const enum vml_view *views, int nr_views,
		   enum vml_lock_policy lock, bool lock_label, unsigned long lo, unsigned long hi,
		   bool raw, bool quiet, FILE *out, bool *views_only)
{
	int status = 0;

	for (int v = 0; v < nr_views; v++) {
		const char *name = target_view_name(views[v]);
		char *text[2], *diff, la[64], lb[64];

		text[0] = cli_run_view(run, 0, views[v], lock, true, lo, hi, !raw);
		text[1] = text[0] ? cli_run_view(run, 1, views[v], lock, true, lo, hi, !raw) : NULL;
		if (!text[1]) {
			vml_free(text[0]);
			*views_only = false;
			return EXIT_CHECK_FAILED;
		}
		snprintf(la, sizeof(la), "model%s/%s",
			 !lock_label ? "" : lock == VML_LOCK_MMAP ? "(mmap)" : "(vma)", name);
		snprintf(lb, sizeof(lb), "live/%s", name);
		diff = view_diff(text[0], text[1], la, lb);
		if (!diff) {
			fprintf(stderr, "vmalock replay: out of memory\n");
			status = EXIT_CHECK_FAILED;
			*views_only = false;
		} else if (*diff) {
			fputs(diff, out);
			status = EXIT_CHECK_FAILED;
		} else if (!quiet) {
			fprintf(out, "%s: same on model%s and live (%d lines)\n", name,
				!lock_label ? "" : lock == VML_LOCK_MMAP ? " (mmap)" : " (vma)",
				line_count(text[0]));
		}
		vml_free(diff);
		vml_free(text[0]);
		vml_free(text[1]);
	}
	return status;
}

/* What a replay does, from its options. */
struct replay_plan {
	enum vml_view views[MAX_COMPARE];	/* --compare */
	int nr_views;
	enum target_kind kinds[2];
	int nr_kinds;
	enum vml_lock_policy locks[2];		/* the model's, each in turn */
	int nr_locks;
	unsigned long lo, hi;			/* the range shown */
};

/* Check @o's options against each other and make the plan. Return: 0 or an exit status. */
static int replay_plan(struct replay_opts *o, struct replay_plan *pl)
{
	const unsigned int both = VOCAB_BIT(TARGET_MODEL) | VOCAB_BIT(TARGET_LIVE);

	pl->lo = SCRIPT_RANGE_LO;
	pl->hi = SCRIPT_RANGE_HI;
	if (!o->file)
		return cli_usage_error("replay", "missing FILE");
	if (o->range && parse_range(o->range, &pl->lo, &pl->hi))
		return cli_usage_error("replay", "--range: bad range '%s' (want 0xLO-0xHI, LO < HI)",
				       o->range);
	if (o->compare && parse_compare(o->compare, pl->views, &pl->nr_views))
		return EXIT_USAGE;
	if (!o->targets)
		o->targets = o->compare ? both : VOCAB_BIT(TARGET_MODEL);
	if (o->compare && o->targets != both)
		return cli_usage_error("replay", "--compare needs --target both, not '%s'",
				       vocab_name(&target_kind_vocab, __builtin_ctz(o->targets)));
	for (const struct vml_word *w = vocab_next(&target_kind_vocab, o->targets, NULL); w;
	     w = vocab_next(&target_kind_vocab, o->targets, w))
		pl->kinds[pl->nr_kinds++] = (enum target_kind)w->value;
	for (const struct vml_word *w = vocab_next(&lock_policy_vocab, o->locks, NULL); w;
	     w = vocab_next(&lock_policy_vocab, o->locks, w))
		pl->locks[pl->nr_locks++] = (enum vml_lock_policy)w->value;
	if (!o->attempts)
		o->attempts = DEFAULT_ATTEMPTS;
	return 0;
}

/*
 * --compare: run the script on both targets and diff the views.
 * khugepaged's LRU drains and collapses and DAMON's young marks change a
 * live process between ops (see help); the model is deterministic. So a
 * run whose ops agree but whose views differ is tried again on fresh
 * targets, and only a difference on every attempt fails.
 * Return: the exit status; @run is left for the caller to finish.
 */
static int replay_compare(const struct replay_opts *o, const struct replay_plan *pl,
			  struct cli_run *run)
{
	int status;

	for (unsigned int attempt = 1;; attempt++) {
		bool views_only = true;
		char *buf = NULL;
		size_t buflen = 0;
		FILE *out;

		status = cli_run_start(run, "replay", o->file, pl->kinds, pl->nr_kinds);
		if (!status)
			status = cli_run_ops(run);
		if (status)
			return status;
		out = open_memstream(&buf, &buflen);
		if (!out)
			return EXIT_CHECK_FAILED;
		for (int l = 0; l < pl->nr_locks; l++)
			status |= compare(run, pl->views, pl->nr_views, pl->locks[l], pl->nr_locks > 1,
					  pl->lo, pl->hi, o->raw, o->quiet, out, &views_only);
		fclose(out);
		if (status && views_only && !run->op_mismatch && attempt < o->attempts) {
			fprintf(stderr, "vmalock replay: attempt %u of %u: the views differ (below); "
				"the live kernel's own work can cause that: again on fresh "
				"targets\n", attempt, o->attempts);
			fputs(buf, stderr);
			free(buf);
			cli_run_finish(run);
			continue;
		}
		if (!status && attempt > 1)
			fprintf(stderr, "vmalock replay: attempt %u of %u: the views agree\n",
				attempt, o->attempts);
		fputs(buf, stdout);
		free(buf);
		if (!status && run->op_mismatch)
			status = EXIT_CHECK_FAILED;
		return status;
	}
}

/* Print the view of every target (the model's under each lock policy). Return: the exit status. */
static int replay_show(const struct replay_opts *o, const struct replay_plan *pl,
		       struct cli_run *run)
{
	for (int i = 0; i < run->nr && !o->quiet; i++) {
		for (int l = 0; l < pl->nr_locks; l++) {
			bool model = target_kind(run->t[i]) == TARGET_MODEL;
			char *text;

			if (!model && l)
				break;	/* the live kernel has one policy */
			text = cli_run_view(run, i, o->view, pl->locks[l], true, pl->lo, pl->hi,
					    !o->raw);
			if (!text)
				return EXIT_CHECK_FAILED;
			if (run->nr > 1 || (model && pl->nr_locks > 1))
				printf("== %s%s: %s\n", target_kind_name(pl->kinds[i]),
				       model && pl->nr_locks > 1 ?
				       (pl->locks[l] == VML_LOCK_MMAP ? " (mmap)" : " (vma)") : "",
				       target_view_name(o->view));
			fputs(text, stdout);
			vml_free(text);
		}
	}
	return run->op_mismatch ? EXIT_CHECK_FAILED : 0;
}

/* The replay itself: on the host, or as the first task of a simulated machine. */
struct replay_job {
	struct replay_opts *o;
	struct replay_plan *pl;
	int status;
};

static void *replay_job(void *arg)
{
	struct replay_job *j = arg;
	struct replay_opts *o = j->o;
	struct cli_run run;
	int status;

	if (o->compare) {
		status = replay_compare(o, j->pl, &run);
	} else {
		status = cli_run_start(&run, "replay", o->file, j->pl->kinds, j->pl->nr_kinds);
		if (!status)
			status = cli_run_ops(&run);
		if (!status)
			status = replay_show(o, j->pl, &run);
	}
	cli_run_finish(&run);
	fflush(stdout);
	j->status = status;
	return NULL;
}

int cmd_replay(int argc, char **argv)
{
	struct replay_opts o = { .view = VML_VIEW_MAPS, .locks = VOCAB_BIT(VML_LOCK_VMA),
				 .sim_seed = 1 };
	struct replay_plan pl = { 0 };
	struct replay_job job = { &o, &pl, 0 };
	struct cli_run run;
	bool help_wanted;
	int status;

	status = cli_parse("replay", replay_tables, argc, argv, &o, positional, &help_wanted);
	if (status)
		return status;
	if (help_wanted) {
		help(stdout);
		return 0;
	}
	status = replay_plan(&o, &pl);
	if (status)
		return status;
	if (o.cpus) {
		/* Behaviour only: no charges, so the machine's time is the sync points' */
		struct sim_config cfg = { .cpus = o.cpus, .seed = o.sim_seed,
					  .costs = { .relax_ns = 1, .tick_ns = 4 * NSEC_PER_MSEC,
						     .preempt = SIM_PREEMPT_NONE } };
		int ret = sim_run(&cfg, replay_job, &job, NULL);

		if (ret) {
			fprintf(stderr, "vmalock replay: --cpus %u: %s\n", o.cpus, strerror(-ret));
			return EXIT_CHECK_FAILED;
		}
		return job.status;
	}
	if (o.compare) {
		status = replay_compare(&o, &pl, &run);
	} else {
		status = cli_run_start(&run, "replay", o.file, pl.kinds, pl.nr_kinds);
		if (!status)
			status = cli_run_ops(&run);
		if (!status)
			status = replay_show(&o, &pl, &run);
	}
	cli_run_finish(&run);
	fflush(stdout);
	return status;
}
