// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock fuzz - random op sequences on the model and the live kernel side
 * by side; differences shrunk to minimal scripts (src/race/differential.h).
 */
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "race/differential.h"
#include "scriptrun.h"
#include "host/host.h"
#include "system/swap.h"
#include "util/alloc.h"
#include "util/clock.h"

#define DEFAULT_SAVE "vmalock-fuzz-failures"
#define MAX_OPS 10000
#define PAIR_RUNS 200		/* sequences before both targets are made afresh */
#define PAIR_FORKS 200		/* ... or forks: the live child keeps 256 at most */

static int set_seed(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	struct fuzz_cli *cli = dst;
	int ret = cli_set_u64(cmd, o, val, &cli->seed);

	cli->seed_given |= !ret;
	return ret;
}

static int set_compare(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	bool *smaps = dst;

	if (!strcmp(val, "maps"))
		*smaps = false;
	else if (!strcmp(val, "maps,smaps") || !strcmp(val, "smaps,maps"))
		*smaps = true;
	else
		return cli_usage_error(cmd, "%s: '%s' (maps or maps,smaps)", o->name, val);
	return 0;
}

/*
 * Is sequence @run in @list ("A-B,C,...", numbers and ranges)? NULL: every
 * sequence is.
 */
static bool run_listed(const char *list, unsigned long run)
{
	/* Ends: each step consumes a number or range and its comma. */
	while (list && *list) {
		char *end;
		unsigned long a = strtoul(list, &end, 10), b = a;

		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		if (run >= a && run <= b)
			return true;
		list = *end ? end + 1 : end;
	}
	return !list;
}

static int set_only(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	const char *p = val;

	/* Ends: each step consumes a digit, a dash or a comma. */
	for (; *p; p++)
		if ((*p < '0' || *p > '9') && *p != '-' && *p != ',')
			break;
	if (!*val || *p)
		return cli_usage_error(cmd, "%s: '%s' (sequence numbers and ranges: 2035,2064-2070)",
				       o->name, val);
	*(const char **)dst = val;
	return 0;
}

#define F(f) offsetof(struct fuzz_cli, f)
static const struct cli_opt fuzz_opt_table[] = {
	{ "--seed", "N", set_seed, 0, 0, 0, NULL,
	  "the run's seed [from the clock; printed]" },
	{ "--ops", "M", cli_set_uint, F(ops), 1, MAX_OPS, NULL,
	  "ops a sequence, after its two `file` ops [20]" },
	{ "--runs", "K", cli_set_ulong, F(runs), 1, 100000000, NULL,
	  "sequences [100]" },
	{ "--first-run", "N", cli_set_ulong, F(first_run), 0, 100000000, NULL,
	  "number the sequences from N [0]: with the seed, replays a run's\n"
	  "sequences from where its pair of targets was made (a saved script\n"
	  "that does not differ on fresh targets names the command)" },
	{ "--only", "LIST", set_only, F(only), 0, 0, NULL,
	  "with --first-run: run only these sequences (2035,2064-2070) besides\n"
	  "the first, which makes the pair: which earlier ones a difference\n"
	  "needs is found by leaving others out" },
	{ "--compare", "VIEWS", set_compare, F(smaps), 0, 0, NULL,
	  "maps,smaps [default], or maps alone" },
	{ "--save", "DIR", cli_set_string, F(save), 0, 0, NULL,
	  "where minimal scripts go [" DEFAULT_SAVE "/]" },
	{ "--known", "FILE", cli_set_string, F(known), 0, 0, NULL,
	  "differences whose signature (as the summary prints it) is a\n"
	  "line of FILE are known model bugs: counted, not shrunk, and not\n"
	  "a failure" },
	{ "--max-failures", "N", cli_set_uint, F(max_failures), 1, 1000, NULL,
	  "shrink and save at most N distinct differences, then stop\n"
	  "[20]; a difference is distinct by what differed, the op, and the\n"
	  "two results; repeats are counted, not saved again" },
	{ "--swap", "SIZE", cli_set_size, F(swap_bytes), 1 << 20, 64UL << 30, NULL,
	  "turn on a swap file of SIZE for the run (root), so that\n"
	  "MADV_PAGEOUT swaps on both targets; saved scripts get\n"
	  "`swap SIZE` [no swap of ours]" },
	{ "--mthp", NULL, cli_set_flag, F(mthp), 0, 0, NULL,
	  "draw the THP knobs too (root): a knob set from the seed each\n"
	  "time the targets are made afresh, written on this machine for\n"
	  "them and given to the model; ops shaped for 64 KiB and 2 MiB\n"
	  "folios (below); saved scripts get `knobs ...` [the host's\n"
	  "settings as they are]" },
	{ "--rollup-check", NULL, cli_set_flag, F(rollup_check), 0, 0, NULL,
	  "the model alone, kept with incremental smaps_rollup sums:\n"
	  "after every op each process's rollup read from the sums must\n"
	  "be byte-identical to the walked one; --swap gives the model\n"
	  "swap (no swap file, no root), --mthp draws the model's knobs\n"
	  "(the machine's stay); differences are saved, not shrunk" },
	CLI_OPT_END,
};
#undef F

static const struct cli_opt *const fuzz_tables[] = { fuzz_opt_table, NULL };

static void help(FILE *f)
{
	fprintf(f,
"usage: vmalock fuzz [options]\n"
"\n"
"Generate random op sequences (every op of the script format, addresses and\n"
"sizes biased towards the VMAs that exist and their boundaries, mostly inside\n"
"a %lu KiB window at 0x%lx so that ops collide), apply each op to the model and\n"
"to a live child, and compare: the op's result (the same errno), the address\n"
"an mmap or mremap chose inside the script range, and maps and smaps of the\n"
"script range after every op (of the selected process: `select child 1` after\n"
"the sequence's fork). mlockall acts on the whole live child: it is drawn with\n"
"MCL_CURRENT only while the script range maps little, and under MCL_FUTURE\n"
"mappings stay small. A difference is shrunk (ops dropped, then numbers\n"
"simplified) to a minimal script, confirmed on fresh targets and saved; replay\n"
"it with `vmalock replay FILE --target both --compare maps,smaps`. The process\n"
"and its live child stay on one CPU (the kernel's LRU batches are per CPU). The\n"
"model is configured from this host's profile (vmalock host).\n"
"\n",
		(unsigned long)(FUZZ_WINDOW_PAGES * 4), SCRIPT_RANGE_LO);
	cli_print_opts(f, fuzz_tables);
	fprintf(f,
"\n"
"Never generated (the two targets differ there by design):\n"
"  name                where the host has no anonymous VMA names (CONFIG_ANON_VMA_NAME:\n"
"                      vmalock host shows it); generated where it has them\n"
"  file ... memfd      the sequences' files are the two of the prologue\n"
"  a second fork in one sequence (the live child keeps at most 256 children)\n"
"\n"
"A difference only in Referenced: and LazyFree: lines that the shrunk and the\n"
"whole sequence do not reproduce on fresh targets is counted as transient, not\n"
"as a failure: the live kernel's own work changes those lines between two ops\n"
"(khugepaged drains the LRU batches at each wake-up, DAMON marks sampled pages\n"
"young; vmalock replay --help).\n"
"\n"
"With --mthp, every pair of targets (made afresh every %d sequences, and\n"
"after a difference) runs with a knob set drawn from the seed and the\n"
"sequence number, printed as a `knobs` line when drawn: thp (always, madvise,\n"
"never), thp_shmem (always, within_size, advise, never, deny, force), and for\n"
"64, 16, 128 and 2048 kB, where the host has them, hugepages-NkB (always,\n"
"inherit, madvise, never) and hugepages-NkB.shmem (always, inherit,\n"
"within_size, advise, never; not inherit for a smaller size under force,\n"
"which the kernel refuses). Other sizes and knobs keep the host's values.\n"
"The knobs are written under the system-state lock and put back when the\n"
"targets go, also if vmalock is killed (the keeper).\n"
"The ops then also collide in a 4 MiB window at a 2 MiB boundary (half the\n"
"sequences), with addresses rounded to 64 KiB and 2 MiB, lengths of whole\n"
"blocks, madvise hugepage/nohugepage more often, touches of a whole block,\n"
"and a 4 MiB tmpfs file.\n"
"\n"
"Exit status: 0 no difference; 1 a difference (or a target failed); 2 bad usage.\n",
		PAIR_RUNS);
}

int fuzz_parse_args(int argc, char **argv, struct fuzz_cli *cli)
{
	memset(cli, 0, sizeof(*cli));
	cli->ops = 20;
	cli->runs = 100;
	cli->save = DEFAULT_SAVE;
	cli->max_failures = 20;
	cli->smaps = true;
	return cli_parse("fuzz", fuzz_tables, argc, argv, cli, NULL, &cli->help);
}

static volatile sig_atomic_t fuzz_stop;

static void on_signal(int sig)
{
	(void)sig;
	fuzz_stop = 1;
}

/*
 * Differences by signature (what differed, after which op kind, the two
 * results): the first of each is shrunk and saved, the others only counted,
 * so a long run is not spent shrinking the same model bug again and again.
 */
struct sig {
	char key[96];
	unsigned long count;
	unsigned long transient;	/* of count: the kernel's own work, not reproduced (see help) */
	char path[256];
};

struct saved {
	struct sig *sig;
	size_t nr;
	char **known;		/* --known signatures */
	unsigned long *known_count;
	size_t nr_known;
	unsigned long known_hits;
};

/* Read --known: one signature a line; blank lines and '#' comments skipped. */
static int load_known(struct saved *s, const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "vmalock fuzz: --known %s: %s\n", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");
		char **k;

		line[n] = '\0';
		while (n && line[n - 1] == ' ')
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		unsigned long *cnt = vml_realloc(s->known_count,
						 (s->nr_known + 1) * sizeof(*cnt));

		if (cnt) {
			s->known_count = cnt;
			cnt[s->nr_known] = 0;
		}
		k = vml_realloc(s->known, (s->nr_known + 1) * sizeof(*k));
		if (!cnt || !k || !(k[s->nr_known] = vml_strdup(line))) {
			s->known = k ? k : s->known;
			fclose(f);
			return -ENOMEM;
		}
		s->known = k;
		s->nr_known++;
	}
	fclose(f);
	return 0;
}

/* Is @key listed in --known? Counts it. */
static bool is_known(struct saved *s, const char *key)
{
	for (size_t i = 0; i < s->nr_known; i++) {
		if (!strcmp(s->known[i], key)) {
			s->known_count[i]++;
			return true;
		}
	}
	return false;
}

static void signature(const struct op *op, const struct fuzz_diff *d, char *key, size_t len)
{
	char a[24], b[24];

	if (d->kind == FUZZ_RESULT)
		snprintf(key, len, "%s %s: model %s, live %s", fuzz_diff_name(d->kind),
			 op_kind_name(op->kind), errno_name(d->ret[0], a, sizeof(a)),
			 errno_name(d->ret[1], b, sizeof(b)));
	else
		snprintf(key, len, "%s after %s", fuzz_diff_name(d->kind), op_kind_name(op->kind));
}

/* The signature's entry, added if new (*@is_new). NULL when out of memory. */
static struct sig *find_sig(struct saved *s, const char *key, bool *is_new)
{
	struct sig *n;

	*is_new = false;
	for (size_t i = 0; i < s->nr; i++)
		if (!strcmp(s->sig[i].key, key))
			return &s->sig[i];
	n = vml_realloc(s->sig, (s->nr + 1) * sizeof(*n));
	if (!n)
		return NULL;
	s->sig = n;
	memset(&n[s->nr], 0, sizeof(*n));
	snprintf(n[s->nr].key, sizeof(n[s->nr].key), "%s", key);
	*is_new = true;
	return &n[s->nr++];
}

/*
 * Does @what (a view diff) change nothing but lines the live kernel's own
 * work changes between ops: Referenced: (DAMON, a drained LRU batch) and
 * LazyFree: (khugepaged's lru_add_drain_all)?
 */
static bool async_lines_only(const char *what)
{
	const char *l = strstr(what, "\n@@");

	if (!l)
		return false;
	for (; l && *l; l = strchr(l + 1, '\n')) {
		const char *t = l + 1;

		if ((*t == '-' || *t == '+') && strncmp(t, "---", 3) && strncmp(t, "+++", 3) &&
		    strncmp(t + 1, "Referenced:", 11) && strncmp(t + 1, "LazyFree:", 9))
			return false;
	}
	return true;
}

/*
 * Shrink, confirm on fresh targets, save to @path.
 * Return: 0; 1 a transient difference (Referenced/LazyFree only, reproduced
 * neither shrunk nor whole: not saved); or -errno.
 */
static int handle_difference(struct fuzz_cli *cli, struct fuzz_pair *pair, struct op *ops,
			     size_t nr, const struct fuzz_diff *first, unsigned long run,
			     unsigned long pair_first, const struct script_knob *knobs,
			     size_t knobs_nr, char *path, size_t pathlen)
{
	struct fuzz_diff d = *first;
	int *expect = vml_malloc((nr + 1) * sizeof(*expect));
	struct op *whole = vml_malloc((nr + 1) * sizeof(*whole));
	char header[2800], *text = NULL, swap_line[48] = "", knobs_line[512] = "";
	char history[400] = "";
	size_t before = nr;
	bool not_reproduced = false;
	FILE *f;
	int ret;

	if (!expect || !whole) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(whole, ops, nr * sizeof(*whole));	/* the shrinker edits @ops in place */
	if (cli->swap_bytes)
		snprintf(swap_line, sizeof(swap_line), "swap %luK\n", cli->swap_bytes >> 10);
	if (knobs_nr) {
		/* the pair's knobs, which fuzz_set_knobs() gave the fresh pairs too */
		fuzz_knobs_line(knobs, knobs_nr, knobs_line, sizeof(knobs_line) - 1);
		strcat(knobs_line, "\n");
	}
	fprintf(stderr, "vmalock fuzz: run %lu: %s\n", run, first->what);
	ret = fuzz_shrink(pair, ops, &nr, cli->smaps, &d);
	if (ret)
		goto out;
	/* the minimal script on fresh targets, as `vmalock replay` will run it */
	ret = fuzz_replay(NULL, true, ops, nr, cli->smaps, &d, expect);
	if (ret == 1 && (d.kind != first->kind || d.op_kind != first->op_kind))
		fprintf(stderr, "vmalock fuzz: run %lu: on fresh targets the shrunk script shows "
			"another difference (%s after %s)\n", run, fuzz_diff_name(d.kind),
			op_kind_name(d.op_kind));
	if (ret < 0)
		goto out;
	if (ret == 0) {
		fprintf(stderr, "vmalock fuzz: run %lu: the shrunk script does not differ on "
			"fresh targets; saving the whole sequence\n", run);
		memcpy(ops, whole, before * sizeof(*ops));
		nr = before;
		/* again on fresh targets, for the expect= results of every op */
		ret = fuzz_replay(NULL, true, ops, nr, cli->smaps, &d, expect);
		if (ret < 0)
			goto out;
		not_reproduced = ret == 0;
		ret = 0;
	}
	if (not_reproduced && first->kind == FUZZ_SMAPS && async_lines_only(first->what)) {
		fprintf(stderr, "vmalock fuzz: run %lu: only Referenced/LazyFree differed, not "
			"reproduced: transient (the live kernel's own work)\n", run);
		ret = 1;
		goto out;
	}
	nr = d.kind ? d.op + 1 : nr;
	if (not_reproduced) {
		d.kind = first->kind;	/* what the run saw, for the header and the summary */
		snprintf(history, sizeof(history),
			 "# Not reproduced on fresh targets, shrunk or whole: the difference\n"
			 "# depends on what earlier sequences left on the same targets. They\n"
			 "# run again, from where the pair was made, with:\n"
			 "#   vmalock fuzz --seed %llu%s --first-run %lu --runs %lu\n",
			 (unsigned long long)cli->seed, cli->mthp ? " --mthp" : "", pair_first,
			 run - pair_first + 1);
	}
	snprintf(header, sizeof(header),
		 "# vmalock fuzz --seed %llu: run %lu, shrunk from %zu to %zu ops.\n"
		 "# Difference (%s) at the last op; expect= is what the live kernel returned.\n"
		 "%s"
		 "# Replay: vmalock replay THIS --target both --compare maps%s\n%s%s",
		 (unsigned long long)cli->seed, run, before, nr,
		 fuzz_diff_name(d.kind),
		 history,
		 cli->smaps ? ",smaps" : "", swap_line, knobs_line);
	text = fuzz_script_text(ops, expect, nr, header);
	if (!text) {
		ret = -ENOMEM;
		goto out;
	}
	if (mkdir(cli->save, 0777) && errno != EEXIST) {
		ret = -errno;
		fprintf(stderr, "vmalock fuzz: %s: %s\n", cli->save, strerror(errno));
		goto out;
	}
	snprintf(path, pathlen, "%s/fuzz-%llu-%lu.ops", cli->save,
		 (unsigned long long)cli->seed, run);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		ret = -errno;
		fprintf(stderr, "vmalock fuzz: %s: %s\n", path, strerror(errno));
		goto out;
	}
	printf("difference %s, minimal script (%zu ops) saved to %s:\n%s%s\n",
	       fuzz_diff_name(d.kind), nr, path, text, d.what);
	fflush(stdout);
out:
	vml_free(whole);
	vml_free(expect);
	vml_free(text);
	return ret;
}

/* One `vmalock fuzz`: its options, targets, signatures and counts. */
struct fuzz_run {
	struct fuzz_cli cli;
	bool names;			/* draw `name` ops (the host has anonymous VMA names) */
	struct op *ops;			/* the sequence: its prologue, then cli.ops ops */
	struct fuzz_pair *pair;		/* the targets: afresh every PAIR_RUNS sequences */
	unsigned long runs_on_pair;
	unsigned long pair_first;	/* the run the pair was made for */
	struct saved saved;
	unsigned long run, applied, differences, transient;
	/* --mthp: the sizes this host has, and the knobs of the current pair */
	unsigned int host_kb[HOST_MAX_MTHP];
	size_t nr_host_kb;
	struct script_knob knobs[FUZZ_MAX_KNOBS];
	size_t nr_knobs;
	unsigned long knob_sets;	/* pairs made with a drawn set */
};

/*
 * --mthp: root (it writes the THP knobs), and the mTHP sizes this host has.
 * Return: 0, or the exit status to leave with.
 */
static int fuzz_prepare_mthp(struct fuzz_run *fr)
{
	const struct host_profile *hp;
	int ret;

	if (!fr->cli.mthp)
		return 0;
	if (geteuid() != 0) {
		fprintf(stderr, "vmalock fuzz: --mthp: writing the THP knobs needs root\n");
		return EXIT_USAGE;
	}
	ret = host_profile_current(&hp);
	if (ret) {
		fprintf(stderr, "vmalock fuzz: probing this host: %s\n", host_probe_failure(ret));
		return EXIT_CHECK_FAILED;
	}
	for (unsigned int i = 0; i < hp->nr_mthp && fr->nr_host_kb < HOST_MAX_MTHP; i++)
		fr->host_kb[fr->nr_host_kb++] = hp->mthp[i].kb;
	return 0;
}

/*
 * Everything before the first sequence: the CPU, the host's profile, swap,
 * the seed, --known, and the header line.
 * Return: 0, or the exit status to leave with.
 */
static int fuzz_prepare(struct fuzz_run *fr, struct target_swap **swap)
{
	struct fuzz_cli *cli = &fr->cli;
	const struct host_profile *hp;
	int ret;

	cli_pin_to_this_cpu();
	ret = fuzz_prepare_mthp(fr);
	if (ret)
		return ret;
	fr->names = !host_profile_current(&hp) && hp->anon_vma_name;
	if (cli->swap_bytes) {
		char err[256];

		ret = target_swap_on(cli->swap_bytes, swap, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "vmalock fuzz: --swap: %s\n", err);
			return ret == -EPERM ? EXIT_USAGE : EXIT_CHECK_FAILED;
		}
		fuzz_set_swap(cli->swap_bytes);
	}
	if (cli->smaps) {
		enum vml_view v = VML_VIEW_SMAPS;
		bool avail = false;

		if (race_views_available(TARGET_MODEL, &v, 1, &avail) || !avail) {
			fprintf(stderr, "vmalock fuzz: --compare smaps: the model has no "
				"smaps view yet\n");
			return EXIT_USAGE;
		}
	}
	if (!cli->seed_given) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		cli->seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
	}
	if (cli->known && load_known(&fr->saved, cli->known))
		return EXIT_USAGE;
	fr->ops = vml_malloc((cli->ops + 2) * sizeof(*fr->ops));
	if (!fr->ops)
		return EXIT_CHECK_FAILED;
	printf("vmalock fuzz: seed %llu, %lu runs of %u ops, comparing %s%s\n",
	       (unsigned long long)cli->seed, cli->runs, cli->ops,
	       cli->smaps ? "maps,smaps" : "maps",
	       cli->mthp ? ", THP knobs drawn for each pair of targets (--mthp)" : "");
	fflush(stdout);
	return 0;
}

/*
 * --mthp: the knobs of the pair about to be made, from the seed and the
 * sequence number alone (so that a run repeats), printed as the `knobs`
 * line a script would carry.
 * Return: 0 or -errno.
 */
static int fuzz_draw_knobs(struct fuzz_run *fr)
{
	char line[512];

	if (!fr->cli.mthp)
		return 0;
	fr->nr_knobs = fuzz_gen_knobs(fr->cli.seed, fr->run, fr->host_kb, fr->nr_host_kb,
				      fr->knobs);
	fr->knob_sets++;
	fuzz_knobs_line(fr->knobs, fr->nr_knobs, line, sizeof(line));
	printf("vmalock fuzz: run %lu: %s\n", fr->run, line);
	fflush(stdout);
	return fuzz_set_knobs(fr->knobs, fr->nr_knobs);
}

/*
 * Sequence @fr->run: its prologue and ops, drawn one by one against the
 * model's layout and applied to both targets until the first difference.
 * Return: 0 (@d->kind says whether they differed) or -errno.
 */
static int fuzz_sequence(struct fuzz_run *fr, struct fuzz_diff *d)
{
	struct op *ops = fr->ops;
	struct fuzz_gen gen;
	size_t nr = fuzz_gen_prologue(ops, 2, fr->cli.mthp), total = nr + fr->cli.ops;
	int ret;

	if (fr->pair &&
	    (fr->runs_on_pair >= PAIR_RUNS || fuzz_pair_forks(fr->pair) >= PAIR_FORKS)) {
		fuzz_pair_destroy(fr->pair);
		fr->pair = NULL;
	}
	if (!fr->pair) {
		ret = fuzz_draw_knobs(fr);
		if (!ret)
			ret = fuzz_pair_create(&fr->pair);
		fr->runs_on_pair = 0;
		fr->pair_first = fr->run;
	} else {
		ret = fuzz_pair_reset(fr->pair);
	}
	if (ret || (ret = fuzz_gen_init(&gen, fr->cli.seed, fr->run)))
		return ret;
	gen.names = fr->names;
	if (fr->cli.mthp)
		fuzz_gen_thp(&gen);
	fr->runs_on_pair++;
	for (size_t k = 0; k < total && !ret; k++) {
		if (k >= nr) {
			char *maps = fuzz_pair_model_maps(fr->pair);

			ret = maps ? fuzz_gen_next(&gen, maps, &ops[nr++]) : -ENOMEM;
			vml_free(maps);
			if (ret)
				break;
		}
		ret = fuzz_pair_step(fr->pair, &ops[k], k, fr->cli.smaps, d, NULL);
		fr->applied++;
		if (!ret && d->kind)
			break;
	}
	fuzz_gen_free(&gen);
	return ret;
}

/* What fuzz_difference() tells the loop over sequences. */
enum { FUZZ_GO_ON, FUZZ_NEXT_RUN, FUZZ_STOP };

/*
 * A sequence differed (@d): known, a repeat, transient, or new - then
 * shrunk and saved, on targets made afresh afterwards.
 * Return: FUZZ_GO_ON; FUZZ_NEXT_RUN (nothing more to do for it); FUZZ_STOP
 *         (--max-failures reached); or -errno.
 */
static int fuzz_difference(struct fuzz_run *fr, const struct fuzz_diff *d)
{
	struct saved *saved = &fr->saved;
	char key[96];
	bool is_new;
	struct sig *sg;
	int ret;

	signature(&fr->ops[d->op], d, key, sizeof(key));
	if (is_known(saved, key)) {
		saved->known_hits++;
		return FUZZ_NEXT_RUN;
	}
	fr->differences++;
	sg = find_sig(saved, key, &is_new);
	if (!sg)
		return -ENOMEM;
	sg->count++;
	if (!is_new && sg->transient && !sg->path[0]) {
		/* A signature seen transient: this one must reproduce to count. */
		struct fuzz_diff d2;

		ret = fuzz_replay(NULL, true, fr->ops, d->op + 1, fr->cli.smaps, &d2, NULL);
		if (ret < 0)
			return ret;
		if (ret == 0 && async_lines_only(d->what)) {
			sg->transient++;
			fr->differences--;
			fr->transient++;
		}
		return FUZZ_NEXT_RUN;
	}
	if (!is_new)
		return FUZZ_NEXT_RUN;
	if (saved->nr > fr->cli.max_failures)
		return FUZZ_STOP;
	ret = handle_difference(&fr->cli, fr->pair, fr->ops, d->op + 1, d, fr->run,
				fr->pair_first, fr->knobs, fr->nr_knobs, sg->path, sizeof(sg->path));
	/* the shrinking left the reused targets in some state: start afresh */
	fuzz_pair_destroy(fr->pair);
	fr->pair = NULL;
	if (ret == 1) {
		sg->transient++;
		fr->differences--;
		fr->transient++;
		ret = 0;
	}
	return ret < 0 ? ret : FUZZ_GO_ON;
}

/* The sequences, until --runs, a signal, --max-failures or an error. Return: 0 or -errno. */
static int fuzz_runs(struct fuzz_run *fr, uint64_t t0)
{
	uint64_t last = t0;
	int ret = 0;

	for (fr->run = fr->cli.first_run; fr->run - fr->cli.first_run < fr->cli.runs && !fuzz_stop;
	     fr->run++) {
		struct fuzz_diff d = { 0 };

		if (fr->run != fr->cli.first_run && !run_listed(fr->cli.only, fr->run))
			continue;
		ret = fuzz_sequence(fr, &d);
		if (ret)
			break;
		if (d.kind) {
			ret = fuzz_difference(fr, &d);
			if (ret < 0)
				break;
			if (ret == FUZZ_STOP) {
				ret = 0;
				break;
			}
			if (ret == FUZZ_NEXT_RUN) {
				ret = 0;
				continue;
			}
		}
		if (vml_now_ns() - last > 5 * NSEC_PER_SEC) {
			last = vml_now_ns();
			fprintf(stderr, "vmalock fuzz: %lu runs, %lu ops, %lu differences\n",
				fr->run - fr->cli.first_run + 1, fr->applied, fr->differences);
		}
	}
	return ret;
}

static void fuzz_summary(const struct fuzz_run *fr, uint64_t ns)
{
	const struct saved *saved = &fr->saved;

	printf("fuzz: %lu runs, %lu ops in %.1f s, %lu differences", fr->run - fr->cli.first_run,
	       fr->applied,
	       (double)ns / NSEC_PER_SEC, fr->differences);
	if (fr->cli.mthp)
		printf(" (%lu THP knob sets drawn)", fr->knob_sets);
	if (fr->transient)
		printf(" (and %lu transient ones: Referenced/LazyFree only, not reproduced)",
		       fr->transient);
	if (fr->cli.known)
		printf(" (and %lu known ones, listed in %s)", saved->known_hits, fr->cli.known);
	printf(saved->nr ? ", %zu distinct:\n" : "\n", saved->nr);
	for (size_t i = 0; i < saved->nr; i++)
		printf("  %6lu  %-44s %s\n", saved->sig[i].count, saved->sig[i].key,
		       saved->sig[i].path[0] ? saved->sig[i].path :
		       saved->sig[i].transient ? "(transient)" :
		       "(not shrunk: --max-failures)");
	for (size_t i = 0; i < saved->nr_known; i++)
		if (saved->known_count[i])
			printf("  %6lu  %-44s (known)\n", saved->known_count[i], saved->known[i]);
}

static void saved_free(struct saved *saved)
{
	vml_free(saved->sig);
	for (size_t i = 0; i < saved->nr_known; i++)
		vml_free(saved->known[i]);
	vml_free(saved->known);
	vml_free(saved->known_count);
}

int cmd_fuzz(int argc, char **argv)
{
	struct fuzz_run fr = { 0 };
	struct target_swap *swap = NULL;
	struct sigaction sa, old[2];
	uint64_t t0 = vml_now_ns();
	int status = fuzz_parse_args(argc, argv, &fr.cli), ret;

	if (status)
		return status;
	if (fr.cli.help) {
		help(stdout);
		return 0;
	}
	if (fr.cli.rollup_check) {
		if (!fr.cli.seed_given) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			fr.cli.seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
		}
		return fuzz_rollup_check(&fr.cli, &fuzz_stop);
	}
	status = fuzz_prepare(&fr, &swap);
	if (status)
		return status;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old[0]);
	sigaction(SIGTERM, &sa, &old[1]);
	ret = fuzz_runs(&fr, t0);
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
	fuzz_pair_destroy(fr.pair);
	vml_free(fr.ops);
	target_swap_off(swap);
	fuzz_summary(&fr, vml_now_ns() - t0);
	saved_free(&fr.saved);
	if (ret) {
		fprintf(stderr, "vmalock fuzz: %s\n", ret == -ECHILD ? "the live child died" :
			*fuzz_pair_error() ? fuzz_pair_error() : strerror(-ret));
		return EXIT_CHECK_FAILED;
	}
	if (fuzz_stop) {
		fprintf(stderr, "vmalock fuzz: interrupted\n");
		return EXIT_CHECK_FAILED;
	}
	return fr.differences ? EXIT_CHECK_FAILED : 0;
}
