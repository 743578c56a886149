// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock race - tearing tests: readers of a /proc view racing a modifier
 * at the view's read() boundary (src/race/run.h).
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "host/host.h"
#include "simcost.h"
#include "race/run.h"
#include "scriptrun.h"
#include "util/debug.h"

#define NOISE_UNSET UINT_MAX	/* --noise not given */
#define NOISE_DEFAULT_US 50	/* with --kernel-transients */

static int parse_list(const char *opt, const char *s, char *buf, size_t len, char **items,
		      int max)
{
	char *p = buf;
	int n = 0;

	if (strlen(s) >= len)
		return cli_usage_error("race", "%s: too long", opt);
	strcpy(buf, s);
	for (;;) {
		size_t k = strcspn(p, ",");

		if (!k)
			return cli_usage_error("race", "%s: empty item in '%s'", opt, s);
		if (n == max)
			return cli_usage_error("race", "%s: too many items", opt);
		items[n++] = p;
		if (!p[k])
			break;
		p[k] = '\0';
		p += k + 1;
	}
	return -n;
}

static int parse_views(const char *s, struct race_cli *cli)
{
	struct race_opts *o = &cli->o;

	static const enum vml_view all[] = {
		VML_VIEW_MAPS, VML_VIEW_SMAPS, VML_VIEW_SMAPS_ROLLUP, VML_VIEW_NUMA_MAPS,
		TARGET_VIEW_QUERY,
	};
	char buf[128], *items[8];
	int n = parse_list("--view", s, buf, sizeof(buf), items, 8);

	if (n >= 0)
		return n;
	o->nr_views = 0;
	cli->views_all = false;
	for (int i = 0; i < -n; i++) {
		enum vml_view v;

		if (!strcmp(items[i], "all")) {
			memcpy(o->views, all, sizeof(all));
			o->nr_views = RACE_MAX_VIEWS;
			cli->views_all = true;
			return 0;
		}
		if (target_view_parse(items[i], &v))
			return cli_usage_error("race", "--view: unknown view '%s' (maps, smaps, "
					       "smaps_rollup, numa_maps, query, all)", items[i]);
		for (unsigned int k = 0; k < o->nr_views; k++)
			if (o->views[k] == v)
				return cli_usage_error("race", "--view: '%s' twice", items[i]);
		o->views[o->nr_views++] = v;
	}
	return 0;
}

static int parse_mods(const char *s, struct race_opts *o)
{
	char buf[128], *items[8];
	int n = parse_list("--mod", s, buf, sizeof(buf), items, 8);

	if (n >= 0)
		return n;
	o->nr_mods = 0;
	for (int i = 0; i < -n; i++) {
		enum race_mod m;

		if (!strcmp(items[i], "all")) {
			for (int k = 0; k < RACE__MODS; k++)
				o->mods[k] = k;
			o->nr_mods = RACE__MODS;
			return 0;
		}
		if (race_mod_parse(items[i], &m))
			return cli_usage_error("race", "--mod: unknown modification '%s' (split, "
					       "mprotect, resize, remap, remap-whole, unmap, "
					       "dontneed, all)",
					       items[i]);
		for (unsigned int k = 0; k < o->nr_mods; k++)
			if (o->mods[k] == m)
				return cli_usage_error("race", "--mod: '%s' twice", items[i]);
		o->mods[o->nr_mods++] = m;
	}
	return 0;
}

/* Setters that see the whole struct race_cli (offset 0). */
static int set_views(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	return parse_views(val, dst) ? EXIT_USAGE : 0;
}

static int set_mods(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	return parse_mods(val, &((struct race_cli *)dst)->o) ? EXIT_USAGE : 0;
}

static int set_target(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	int t, ret = cli_set_word(cmd, o, val, &t);

	if (!ret)
		((struct race_cli *)dst)->o.target = (enum target_kind)t;
	return ret;
}

/* The policies given, in the vocabulary's order. */
static int set_locks(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	struct race_opts *ro = &((struct race_cli *)dst)->o;
	unsigned int set;
	int ret = cli_set_words(cmd, o, val, &set);

	if (ret)
		return ret;
	ro->nr_locks = 0;
	for (const struct vml_word *w = vocab_next(&lock_policy_vocab, set, NULL); w;
	     w = vocab_next(&lock_policy_vocab, set, w))
		ro->locks[ro->nr_locks++] = (enum vml_lock_policy)w->value;
	return 0;
}

static int set_seed(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	struct race_cli *cli = dst;
	int ret = cli_set_u64(cmd, o, val, &cli->o.seed);

	cli->seed_given |= !ret;
	return ret;
}

static int set_broken(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	int v, ret = cli_set_word(cmd, o, val, &v);

	if (!ret)
		((struct race_cli *)dst)->o.broken = (unsigned int)v;
	return ret;
}

static int set_ulong(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	unsigned long v;
	int ret = cli_set_ulong(cmd, o, val, &v);

	if (!ret)
		*(unsigned int *)dst = (unsigned int)v;
	return ret;
}

static const struct vml_word broken_words[] = {
	{ "skip-fallback", VML_BROKEN_SKIP_FALLBACK, NULL, 0 },
	{ "skip-reset", VML_BROKEN_SKIP_RESET, NULL, 0 },
	{ "handoff", VML_BROKEN_HANDOFF, NULL, 0 },
	{ "walk-again", VML_BROKEN_WALK_AGAIN, NULL, 0 },
	{ "rollup-resume", VML_BROKEN_ROLLUP_RESUME, NULL, 0 },
	{ "seq-resume", VML_BROKEN_SEQ_RESUME, NULL, 0 },
	{ NULL, 0, NULL, 0 },
};

static const struct vml_word explore_words[] = {
	{ "random", SIM_EXPLORE_RANDOM, "at a sync point, 1 in 4 chances to be held\n0-10 us", 0 },
	{ "pct", SIM_EXPLORE_PCT, "PCT: random task priorities, a task held while\n"
	  "a higher one has work; d-1 random priority drops", 0 },
	{ NULL, 0, NULL, 0 },
};
static const struct vml_vocab explore_vocab = { "mode", explore_words };

static int set_sim_seed(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	struct race_cli *cli = dst;
	int ret = cli_set_u64(cmd, o, val, &cli->o.sim_seed);

	cli->sim_seed_given |= !ret;
	return ret;
}
static const struct vml_vocab broken_vocab = { "value", broken_words };

#define C(f) offsetof(struct race_cli, f)
static const struct cli_opt race_opt_table[] = {
	{ "--target", "model|live", set_target, 0, 0, 0, &target_kind_vocab,
	  "model threads on one address space [model], or a live child\n"
	  "process on the running kernel" },
	{ "--view", "LIST|all", set_views, 0, 0, 0, NULL,
	  "maps, smaps, smaps_rollup, numa_maps, query (comma list)\n"
	  "[all]; `all` skips, with a note, views the target does not offer" },
	{ "--lock", "LIST|both", set_locks, 0, 0, 0, &lock_policy_vocab,
	  "the model's reader locking, a comma list [both]; the live\n"
	  "kernel has its own - maps and query per VMA (6.17+), the\n"
	  "others as `vmalock host` finds (6.18: under mmap_lock for each\n"
	  "read()); its rows say kernel:mmap or kernel:vma:" },
	{ "--mod", "LIST|all", set_mods, 0, 0, 0, NULL,
	  "split, mprotect, resize, remap, remap-whole, unmap, dontneed\n"
	  "[all]; dontneed is the kernel selftest pagewalk_race_test:\n"
	  "one VMA of two PMDs, the second written and MADV_DONTNEEDed\n"
	  "in a loop, smaps, smaps_rollup and numa_maps never counting a\n"
	  "page twice (other views have no phase of it)" },
	{ "--kernel-transients", NULL, cli_set_flag, C(o.kernel_transients), 0, 0, NULL,
	  "the model goes through the intermediate states 6.18 shows\n"
	  "per-VMA-lock readers: mremap(MREMAP_FIXED) publishes the\n"
	  "destination unmapped before the move, and the reader's VMA\n"
	  "iterator walks down again from the last VMA's end when a writer\n"
	  "replaced its tree node (the maple tree's), skipping what a merge\n"
	  "added to that VMA; implies --noise 50 unless given" },
	{ "--noise", "USEC", set_ulong, C(o.noise_us), 0, 1000000, NULL,
	  "model readers under per-VMA locks sleep 0..USEC us (uniform)\n"
	  "between dropping a VMA of A or B (or the one before A) and\n"
	  "looking up the next, as an interrupt holds the kernel's reader\n"
	  "up there [0; 50 with --kernel-transients]" },
	{ "--duration", "SECONDS", cli_set_seconds, C(duration), 0.001, 86400 * 7, NULL,
	  "the whole run, shared by all phases [4]" },
	{ "--seed", "N", set_seed, 0, 0, 0, NULL,
	  "seeds the modifier's and readers' timing jitter [from the\n"
	  "clock; printed]" },
	{ "--readers", "N", set_ulong, C(o.readers), 1, 64, NULL,
	  "reader threads per phase [1]" },
	{ "--regions", "N", set_ulong, C(o.regions), 8, 20000, NULL,
	  "3-page regions in the layout [129: a page of maps text, as the\n"
	  "kernel selftest]" },
	{ "--broken", "WHAT", set_broken, 0, 0, 0, &broken_vocab,
	  "debug: break the model on purpose to prove the test catches it:\n"
	  "skip-fallback (lock_next_vma skips a VMA it cannot lock),\n"
	  "skip-reset (a page-walking reader keeps its VMA iterator after\n"
	  "re-taking RCU), handoff (the mmap_lock's hand-off gives a\n"
	  "waiting writer the lock while readers hold it), walk-again\n"
	  "(smaps walks a VMA twice when it meets an emptied page table:\n"
	  "the bug pagewalk_race_test looks for), rollup-resume\n"
	  "(smaps_rollup counts a VMA that grew across where its walk\n"
	  "stopped whole), seq-resume (a read() goes on after the record\n"
	  "the last one dropped for lack of room)" },
	{ "--cpus", "N", set_ulong, C(o.cpus), 1, SIM_MAX_CPUS, NULL,
	  "run the model's threads on a simulated machine of N CPUs in\n"
	  "virtual time (docs/simulation.md); every phase on a fresh\n"
	  "machine and model per schedule" },
	{ "--explore", "K", set_ulong, C(o.schedules), 1, 1000000, NULL,
	  "with --cpus: up to K schedules per phase, seeds S, S+1, ...,\n"
	  "until one shows a violation; it is printed with its seed [1]" },
	{ "--explore-mode", "MODE", cli_set_word, C(explore_mode), 0, 0, &explore_vocab,
	  "how the schedules differ [pct]:" },
	{ "--pct-depth", "D", set_ulong, C(o.pct_depth), 1, 64, NULL,
	  "PCT's bug depth d [3]" },
	{ "--sim-seed", "S", set_sim_seed, 0, 0, 0, NULL,
	  "the first schedule's seed; a printed violation's seed replays\n"
	  "it exactly (with the same options) [1]" },
	{ "--sim-costs", "FILE", cli_set_string, C(sim_costs), 0, 0, NULL,
	  "the simulated machine's charges from FILE (a simulated bench\n"
	  "run's --json) [measured now on the live kernel]" },
	CLI_OPT_END,
};
#undef C

static const struct cli_opt *const race_tables[] = { race_opt_table, cli_common_opts, NULL };

static void help(FILE *f)
{
	fprintf(f,
"usage: vmalock race [options]\n"
"\n"
"A modifier splits and merges, shrinks and grows, remaps into, and unmaps and\n"
"maps again the two VMAs on either side of a read() boundary of a view, while\n"
"readers read the view across that boundary. Every read is checked against\n"
"the contract: each VMA in its old or its new form, shown twice only as an old\n"
"form followed by a new one, never missing, never overlapping otherwise, no gap\n"
"that existed at no time; per-read snapshots where the reader holds mmap_lock\n"
"for the whole read(); smaps records consistent in themselves; smaps_rollup\n"
"totals that some walk over the states gives.\n"
"\n");
	cli_print_opts(f, race_tables);
	fprintf(f,
"\n"
"Output: per (view, lock, modification) the reads checked, reads per second,\n"
"modification cycles, violations, and the allowed observations seen (a VMA\n"
"shown twice within a read or across two reads, a read that saw a modified\n"
"state); then the first violation with the reads that showed it.\n"
"\n"
"--mod dontneed (pagewalk_race_test) reads one VMA's smaps or numa_maps\n"
"record, or smaps_rollup, and checks its Rss (pages) against the most any\n"
"state showed (smaps_rollup: + 256 kB); `changed` counts reads that saw the\n"
"second PMD empty.\n"
"\n"
"With --cpus every record of maps, smaps, numa_maps and query is also checked\n"
"against the layout at the moment it was looked up, which the simulated machine\n"
"knows: a VMA that was there, unchanged, all the while may not be skipped\n"
"(`skipped`). States alone cannot tell such a skip from a correct read of an\n"
"earlier layout: exploration finds --broken skip-reset this way, and\n"
"skip-fallback and handoff by the contract (docs/simulation.md, \"Exploring\n"
"schedules\").\n"
"\n"
"With --kernel-transients the model shows the live kernel's fake and transient\n"
"gaps in maps and query under --lock vma, and none under vma-strict; without\n"
"it, none under any policy (docs/findings/maps-fake-gaps.md).\n"
"\n"
"Exit status: 0 no violation; 1 a violation, or a phase that could not run;\n"
"2 bad usage. On the live kernel a violation is a finding about the kernel\n"
"(docs/findings/maps-fake-gaps.md).\n");
}

int race_parse_args(int argc, char **argv, struct race_cli *cli)
{
	struct race_opts *o = &cli->o;
	int ret;

	memset(cli, 0, sizeof(*cli));
	o->target = TARGET_MODEL;
	cli->duration = 4;
	o->readers = 1;
	o->regions = RACE_DEFAULT_REGIONS;
	o->noise_us = NOISE_UNSET;
	parse_views("all", cli);
	parse_mods("all", o);
	o->locks[0] = VML_LOCK_MMAP;
	o->locks[1] = VML_LOCK_VMA;
	o->nr_locks = 2;
	o->sim_seed = 1;
	o->pct_depth = 3;
	cli->explore_mode = SIM_EXPLORE_PCT;
	ret = cli_parse("race", race_tables, argc, argv, cli, NULL, &cli->help);
	if (ret || cli->help)
		return ret;
	if ((o->schedules || cli->sim_seed_given || cli->sim_costs) && !o->cpus)
		return cli_usage_error("race", "--%s: needs --cpus N (a simulated machine)",
				       o->schedules ? "explore" : cli->sim_seed_given ? "sim-seed" :
				       "sim-costs");
	if (o->cpus && o->target == TARGET_LIVE)
		return cli_usage_error("race", "--cpus simulates the model: it needs --target "
				       "model");
	o->explore = o->schedules ? (enum sim_explore)cli->explore_mode : SIM_EXPLORE_OFF;
	if (o->broken && o->target == TARGET_LIVE)
		return cli_usage_error("race", "--broken breaks the model's reader: it needs "
				       "--target model");
	if (o->target == TARGET_LIVE && (o->kernel_transients || o->noise_us != NOISE_UNSET))
		return cli_usage_error("race", "--%s changes the model: it needs --target model",
				       o->kernel_transients ? "kernel-transients" : "noise");
	if (o->noise_us == NOISE_UNSET)
		o->noise_us = o->kernel_transients ? NOISE_DEFAULT_US : 0;
	return 0;
}

/* ---- output ---- */

struct report {
	const struct race_cli *cli;
	const char *target;
	uint64_t reads, violations, by_rule[RACE__RULES];
	unsigned int phases, skipped, failed;
	bool printed_first;
	char first_phase[64];
};

static const char *lock_label(const struct race_phase *ph)
{
	/* the kernel's, as the host profile says (vmalock host: *_lock) */
	if (ph->kernel_lock)
		return ph->kernel_per_vma ? "kernel:vma" : "kernel:mmap";
	return words_policy_label(&lock_policy_vocab, ph->kernel_lock ? TARGET_LIVE : TARGET_MODEL,
				  ph->lock);
}

/* A simulated phase's violation: where it was found, and the command that replays it. */
static void print_replay(const struct race_cli *cli, const struct race_phase *ph)
{
	const struct race_opts *o = &cli->o;

	printf("  found in schedule %u of %u, after %llu reads checked (every schedule's, "
	       "every reader's; %llu in that schedule); replay: vmalock race --cpus %u --view %s "
	       "--lock %s --mod %s --duration %g --seed %llu --readers %u --regions %u",
	       ph->schedules, o->schedules ? o->schedules : 1,
	       (unsigned long long)ph->reads_to_first,
	       (unsigned long long)ph->sched_reads_to_first,
	       o->cpus, target_view_name(ph->view),
	       lock_label(ph), race_mod_name(ph->mod), o->seconds,
	       (unsigned long long)o->seed, o->readers, o->regions);
	if (o->explore)
		printf(" --explore 1 --explore-mode %s --pct-depth %u",
		       vocab_name(&explore_vocab, o->explore), o->pct_depth);
	if (o->broken)
		printf(" --broken %s", vocab_name(&broken_vocab, (int)o->broken));
	if (o->kernel_transients)
		printf(" --kernel-transients");
	if (o->noise_us)
		printf(" --noise %u", o->noise_us);
	if (cli->sim_costs)
		printf(" --sim-costs %s", cli->sim_costs);
	printf(" --sim-seed %llu\n", (unsigned long long)ph->first_seed);
}

static void on_phase(const struct race_phase *ph, void *arg)
{
	struct report *rep = arg;
	char name[64];

	snprintf(name, sizeof(name), "%s/%s/%s", target_view_name(ph->view), lock_label(ph),
		 race_mod_name(ph->mod));
	if (!rep->phases++)
		printf("%-13s %-11s %-11s %6s %9s %9s %8s %10s %11s %10s %9s\n", "view", "lock",
		       "mod", "states", "reads", "reads/s", "cycles", "violations",
		       "dup-in-read", "dup-across", "changed");
	if (ph->skipped) {
		rep->skipped++;
		printf("%-13s %-11s %-11s skipped: %s\n", target_view_name(ph->view),
		       lock_label(ph), race_mod_name(ph->mod), ph->skipped);
		fflush(stdout);
		return;
	}
	if (ph->error && !ph->reads) {
		rep->failed++;
		printf("%-13s %-11s %-11s failed: %s\n", target_view_name(ph->view),
		       lock_label(ph), race_mod_name(ph->mod), ph->error_why);
		fflush(stdout);
		return;
	}
	printf("%-13s %-11s %-11s %6u %9llu %9.0f %8llu %10llu %11llu %10llu %9llu%s\n",
	       target_view_name(ph->view), lock_label(ph), race_mod_name(ph->mod),
	       ph->nr_states, (unsigned long long)ph->reads,
	       ph->seconds > 0 ? ph->reads / ph->seconds : 0.0,
	       (unsigned long long)ph->cycles, (unsigned long long)ph->violations,
	       (unsigned long long)ph->notes[RACE_NOTE_DUP_IN_READ],
	       (unsigned long long)ph->notes[RACE_NOTE_DUP_ACROSS_READS],
	       (unsigned long long)ph->notes[RACE_NOTE_CHANGED],
	       ph->per_read ? "  (per-read)" : "");
	if (ph->error) {
		rep->failed++;
		printf("  stopped early: %s\n", ph->error_why);
	}
	for (int k = 1; k < RACE__RULES; k++)
		if (ph->by_rule[k])
			printf("  %s: %llu\n", race_rule_name(k),
			       (unsigned long long)ph->by_rule[k]);
	rep->reads += ph->reads;
	rep->violations += ph->violations;
	for (int k = 0; k < RACE__RULES; k++)
		rep->by_rule[k] += ph->by_rule[k];
	if (ph->first_text && rep->cli->o.cpus)
		print_replay(rep->cli, ph);
	else if (ph->first_text)
		printf("  first violation after %llu reads\n",
		       (unsigned long long)ph->reads_to_first);
	if (ph->first_text && !rep->printed_first) {
		rep->printed_first = true;
		printf("\nfirst violation (%s, target %s): %s: %s\n", name, rep->target,
		       race_rule_name(ph->first.rule), ph->first.why);
		printf("%s-- end\n\n", ph->first_text);
	}
	fflush(stdout);
}

/* --cpus: the simulated machine's charges, from --sim-costs or measured now. */
static int race_sim_costs(struct race_cli *cli)
{
	struct bench_sim_costs c;

	if (bench_sim_costs_get("vmalock race", cli->sim_costs, NULL, &c))
		return EXIT_CHECK_FAILED;
	cli->o.sim_sched = c.sched;
	cli->o.sim_kernel = c.kernel;
	cli->o.sim_record_ns = c.record_ns;
	cli->o.sim_page_ns = c.page_ns;
	/* a read() costs at least a system call, so that readers let time pass */
	cli->o.sim_call_ns = c.call_ns ? c.call_ns : c.kernel.syscall_ns;
	return 0;
}

static volatile sig_atomic_t race_stop;

static void on_signal(int sig)
{
	(void)sig;
	race_stop = 1;
}

int cmd_race(int argc, char **argv)
{
	struct race_cli cli;
	struct report rep = { 0 };
	struct sigaction sa, old[2];
	unsigned int phases;
	bool avail[RACE_MAX_VIEWS];
	int status = race_parse_args(argc, argv, &cli), ret;

	if (status)
		return status;
	if (cli.help) {
		help(stdout);
		return 0;
	}
	if (!cli.seed_given) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		cli.o.seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
	}
	/* Views the target does not offer: a note with `all`, else an error. */
	ret = race_views_available(cli.o.target, cli.o.views, cli.o.nr_views, avail);
	if (ret) {
		fprintf(stderr, "vmalock race: cannot create the %s target: %s\n",
			target_kind_name(cli.o.target), strerror(-ret));
		return EXIT_CHECK_FAILED;
	}
	for (unsigned int v = 0; v < cli.o.nr_views; v++) {
		if (avail[v])
			continue;
		if (!cli.views_all) {
			fprintf(stderr, "vmalock race: --view %s: the %s target has no such view "
				"yet\n", target_view_name(cli.o.views[v]),
				target_kind_name(cli.o.target));
			return EXIT_USAGE;
		}
		printf("note: %s skipped: the %s target has no such view yet\n",
		       target_view_name(cli.o.views[v]), target_kind_name(cli.o.target));
		memmove(&cli.o.views[v], &cli.o.views[v + 1],
			(cli.o.nr_views - v - 1) * sizeof(cli.o.views[0]));
		memmove(&avail[v], &avail[v + 1], (cli.o.nr_views - v - 1) * sizeof(avail[0]));
		cli.o.nr_views--;
		v--;
	}
	if (!cli.o.nr_views) {
		fprintf(stderr, "vmalock race: the %s target offers none of the views\n",
			target_kind_name(cli.o.target));
		return EXIT_USAGE;
	}
	phases = 0;
	for (unsigned int v = 0; v < cli.o.nr_views; v++)
		for (unsigned int m = 0; m < cli.o.nr_mods; m++)
			phases += race_mod_applies(cli.o.mods[m], cli.o.views[v]);
	if (!phases) {
		fprintf(stderr, "vmalock race: --mod dontneed checks smaps, smaps_rollup and "
			"numa_maps only\n");
		return EXIT_USAGE;
	}
	phases *= cli.o.target == TARGET_LIVE ? 1 : cli.o.nr_locks;
	cli.o.seconds = cli.duration / phases;
	if (cli.o.cpus) {
		ret = race_sim_costs(&cli);
		if (ret)
			return ret;
		/* virtual seconds per schedule */
		cli.o.seconds /= cli.o.schedules ? cli.o.schedules : 1;
	}
	rep.cli = &cli;
	cli.o.stop = &race_stop;
	rep.target = target_kind_name(cli.o.target);
	printf("vmalock race: target %s, seed %llu, %u phases of %.2f s, %u reader%s, "
	       "%u regions%s%s%s", rep.target, (unsigned long long)cli.o.seed, phases,
	       cli.o.seconds, cli.o.readers, cli.o.readers == 1 ? "" : "s", cli.o.regions,
	       cli.o.broken ? ", reader deliberately broken: " : "",
	       cli.o.broken ? vocab_name(&broken_vocab, (int)cli.o.broken) : "",
	       cli.o.kernel_transients ? ", kernel transients" : "");
	if (cli.o.noise_us)
		printf(", noise %u us", cli.o.noise_us);
	if (cli.o.cpus)
		printf(", simulated on %u CPUs, %u schedule%s of %.3f s per phase (%s), sim seed "
		       "%llu", cli.o.cpus, cli.o.schedules ? cli.o.schedules : 1,
		       cli.o.schedules > 1 ? "s" : "", cli.o.seconds,
		       cli.o.explore ? vocab_name(&explore_vocab, cli.o.explore) : "no exploration",
		       (unsigned long long)cli.o.sim_seed);
	if (cli.o.cpus)
		printf(", lookups timed (all views but smaps_rollup)");
	printf("\n");
	if (cli.o.target == TARGET_LIVE) {
		/* which of the model's policies each live row is like, and why we think so */
		for (unsigned int v = 0; v < cli.o.nr_views; v++) {
			const char *how;
			bool vma = host_view_per_vma((int)cli.o.views[v], &how);

			printf("%s %s %s (%s)", v ? "," : "kernel locks:",
			       target_view_name(cli.o.views[v]), vma ? "vma" : "mmap", how);
		}
		printf("\n");
	}
	fflush(stdout);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old[0]);
	sigaction(SIGTERM, &sa, &old[1]);
	ret = race_run(&cli.o, on_phase, &rep);
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);

	printf("total: %llu reads, %llu violations", (unsigned long long)rep.reads,
	       (unsigned long long)rep.violations);
	for (int k = 1; k < RACE__RULES; k++)
		if (rep.by_rule[k])
			printf(", %s %llu", race_rule_name(k), (unsigned long long)rep.by_rule[k]);
	if (rep.skipped)
		printf("; %u phase%s skipped", rep.skipped, rep.skipped == 1 ? "" : "s");
	if (rep.failed)
		printf("; %u phase%s failed", rep.failed, rep.failed == 1 ? "" : "s");
	printf("\n");
	if (ret == -EINTR || race_stop) {
		fprintf(stderr, "vmalock race: interrupted\n");
		return EXIT_CHECK_FAILED;
	}
	return rep.violations || rep.failed ? EXIT_CHECK_FAILED : 0;
}
