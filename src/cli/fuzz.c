// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock fuzz - random op sequences on the model and the live kernel side
 * by side; differences shrunk to minimal scripts (src/race/fuzz.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "race/fuzz.h"
#include "scriptrun.h"
#include "util/alloc.h"
#include "util/clock.h"

#define DEFAULT_SAVE "vmalock-fuzz-failures"
#define MAX_OPS 10000
#define PAIR_RUNS 200		/* sequences before both targets are made afresh */
#define PAIR_FORKS 200		/* ... or forks: the live child keeps 256 at most */

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
"script range after every op. A difference is shrunk (ops dropped, then numbers\n"
"simplified) to a minimal script, confirmed on fresh targets and saved; replay\n"
"it with `vmalock replay FILE --target both --compare maps,smaps`. The process\n"
"and its live child stay on one CPU (the kernel's LRU batches are per CPU).\n"
"\n"
"  --seed N            the run's seed (default: from the clock; printed)\n"
"  --ops M             ops a sequence, after its two `file` ops (default 20)\n"
"  --runs K            sequences (default 100)\n"
"  --compare VIEWS     maps,smaps (default), or maps alone\n"
"  --save DIR          where minimal scripts go (default %s/)\n"
"  --known FILE        differences whose signature (as the summary prints it) is\n"
"                      a line of FILE are known model bugs: counted, not\n"
"                      shrunk, and not a failure\n"
"  --max-failures N    shrink and save at most N distinct differences, then\n"
"                      stop (default 20); a difference is distinct by what\n"
"                      differed, the op, and the two results; repeats are\n"
"                      counted, not saved again\n"
"\n"
"Never generated (the two targets differ there by design):\n"
"  name                the live kernel has no CONFIG_ANON_VMA_NAME\n"
"  mremap to=ADDR with an unchanged length from inside a VMA past its end:\n"
"                      6.17+ moves every VMA of the range, the model (as 6.16)\n"
"                      wants one VMA (src/mm/mremap.c)\n"
"  a second fork in one sequence (the live child keeps at most 256 children)\n"
"\n"
"Exit status: 0 no difference; 1 a difference (or a target failed); 2 bad usage.\n",
		(unsigned long)(FUZZ_WINDOW_PAGES * 4), SCRIPT_RANGE_LO, DEFAULT_SAVE);
}

static int parse_num(const char *opt, const char *s, unsigned long min, unsigned long max,
		     unsigned long *out)
{
	return cli_parse_ulong("fuzz", opt, s, min, max, out);
}

int fuzz_parse_args(int argc, char **argv, struct fuzz_cli *cli)
{
	struct cli_args a = { .cmd = "fuzz", .argc = argc, .argv = argv, .i = 1 };
	const char *val;
	unsigned long v;
	bool bad = false;

	memset(cli, 0, sizeof(*cli));
	cli->ops = 20;
	cli->runs = 100;
	cli->save = DEFAULT_SAVE;
	cli->max_failures = 20;
	cli->smaps = true;
	while (a.i < argc && !bad) {
		const char *arg = argv[a.i];

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			cli->help = true;
			return 0;
		} else if (cli_opt(&a, "--seed", &val, &bad)) {
			if (bad || parse_num("--seed", val, 0, ~0UL, &v))
				return EXIT_USAGE;
			cli->seed = v;
			cli->seed_given = true;
		} else if (cli_opt(&a, "--ops", &val, &bad)) {
			if (bad || parse_num("--ops", val, 1, MAX_OPS, &v))
				return EXIT_USAGE;
			cli->ops = v;
		} else if (cli_opt(&a, "--runs", &val, &bad)) {
			if (bad || parse_num("--runs", val, 1, 100000000, &v))
				return EXIT_USAGE;
			cli->runs = v;
		} else if (cli_opt(&a, "--max-failures", &val, &bad)) {
			if (bad || parse_num("--max-failures", val, 1, 1000, &v))
				return EXIT_USAGE;
			cli->max_failures = v;
		} else if (cli_opt(&a, "--known", &val, &bad)) {
			if (bad)
				break;
			cli->known = val;
		} else if (cli_opt(&a, "--save", &val, &bad)) {
			if (bad)
				break;
			if (!*val)
				return cli_usage_error("fuzz", "--save: empty directory name");
			cli->save = val;
		} else if (cli_opt(&a, "--compare", &val, &bad)) {
			if (bad)
				break;
			if (!strcmp(val, "maps"))
				cli->smaps = false;
			else if (!strcmp(val, "maps,smaps") || !strcmp(val, "smaps,maps"))
				cli->smaps = true;
			else
				return cli_usage_error("fuzz", "--compare: '%s' (maps or "
						       "maps,smaps)", val);
		} else if (arg[0] == '-') {
			return cli_usage_error("fuzz", "unknown option '%s'", arg);
		} else {
			return cli_usage_error("fuzz", "unexpected argument '%s'", arg);
		}
	}
	return bad ? EXIT_USAGE : 0;
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

/* Shrink, confirm on fresh targets, save to @path. Return: 0 or -errno. */
static int handle_difference(struct fuzz_cli *cli, struct fuzz_pair *pair, struct op *ops,
			     size_t nr, const struct fuzz_diff *first, unsigned long run,
			     char *path, size_t pathlen)
{
	struct fuzz_diff d = *first;
	int *expect = vml_malloc((nr + 1) * sizeof(*expect));
	struct op *whole = vml_malloc((nr + 1) * sizeof(*whole));
	char header[1536], *text = NULL;
	size_t before = nr;
	bool not_reproduced = false;
	FILE *f;
	int ret;

	if (!expect || !whole) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(whole, ops, nr * sizeof(*whole));	/* the shrinker edits @ops in place */
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
	nr = d.kind ? d.op + 1 : nr;
	if (not_reproduced)
		d.kind = first->kind;	/* what the run saw, for the header and the summary */
	snprintf(header, sizeof(header),
		 "# vmalock fuzz --seed %llu: run %lu, shrunk from %zu to %zu ops.\n"
		 "# Difference (%s) at the last op; expect= is what the live kernel returned.\n"
		 "%s"
		 "# Replay: vmalock replay THIS --target both --compare maps%s\n",
		 (unsigned long long)cli->seed, run, before, nr,
		 fuzz_diff_name(d.kind),
		 not_reproduced ? "# Not reproduced on fresh targets, shrunk or whole: the difference\n"
				  "# depends on what earlier sequences left on the same targets.\n" : "",
		 cli->smaps ? ",smaps" : "");
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

int cmd_fuzz(int argc, char **argv)
{
	struct fuzz_cli cli;
	struct fuzz_pair *pair = NULL;
	struct saved saved = { 0 };
	struct sigaction sa, old[2];
	struct op *ops = NULL;
	unsigned long run, applied = 0, differences = 0, runs_on_pair = 0;
	uint64_t t0 = vml_now_ns(), last = t0;
	int status = fuzz_parse_args(argc, argv, &cli), ret = 0;

	if (status)
		return status;
	if (cli.help) {
		help(stdout);
		return 0;
	}
	if (!target_model_available) {
		fprintf(stderr, "vmalock fuzz: the model is not linked into this build\n");
		return EXIT_USAGE;
	}
	cli_pin_to_this_cpu();
	if (cli.smaps) {
		enum vml_view v = VML_VIEW_SMAPS;
		bool avail = false;

		if (race_views_available(TARGET_MODEL, &v, 1, &avail) || !avail) {
			fprintf(stderr, "vmalock fuzz: --compare smaps: the model has no "
				"smaps view yet\n");
			return EXIT_USAGE;
		}
	}
	if (!cli.seed_given) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		cli.seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
	}
	if (cli.known && load_known(&saved, cli.known))
		return EXIT_USAGE;
	ops = vml_malloc((cli.ops + 2) * sizeof(*ops));
	if (!ops)
		return EXIT_CHECK_FAILED;
	printf("vmalock fuzz: seed %llu, %lu runs of %u ops, comparing %s\n",
	       (unsigned long long)cli.seed, cli.runs, cli.ops, cli.smaps ? "maps,smaps" : "maps");
	fflush(stdout);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old[0]);
	sigaction(SIGTERM, &sa, &old[1]);

	for (run = 0; run < cli.runs && !fuzz_stop; run++) {
		struct fuzz_gen gen;
		struct fuzz_diff d = { 0 };
		size_t nr = fuzz_gen_prologue(ops, 2), total = nr + cli.ops;

		if (pair && (runs_on_pair >= PAIR_RUNS || fuzz_pair_forks(pair) >= PAIR_FORKS)) {
			fuzz_pair_destroy(pair);
			pair = NULL;
		}
		if (!pair) {
			ret = fuzz_pair_create(&pair);
			runs_on_pair = 0;
		} else {
			ret = fuzz_pair_reset(pair);
		}
		if (ret || (ret = fuzz_gen_init(&gen, cli.seed, run)))
			break;
		runs_on_pair++;
		for (size_t k = 0; k < total && !ret; k++) {
			if (k >= nr) {
				char *maps = fuzz_pair_model_maps(pair);

				ret = maps ? fuzz_gen_next(&gen, maps, &ops[nr++]) : -ENOMEM;
				vml_free(maps);
				if (ret)
					break;
			}
			ret = fuzz_pair_step(pair, &ops[k], k, cli.smaps, &d, NULL);
			applied++;
			if (!ret && d.kind)
				break;
		}
		fuzz_gen_free(&gen);
		if (ret)
			break;
		if (d.kind) {
			char key[96];
			bool is_new;
			struct sig *sg;

			signature(&ops[d.op], &d, key, sizeof(key));
			if (is_known(&saved, key)) {
				saved.known_hits++;
				continue;
			}
			differences++;
			sg = find_sig(&saved, key, &is_new);
			if (!sg) {
				ret = -ENOMEM;
				break;
			}
			sg->count++;
			if (!is_new)
				continue;
			if (saved.nr > cli.max_failures)
				break;
			ret = handle_difference(&cli, pair, ops, d.op + 1, &d, run, sg->path,
						sizeof(sg->path));
			/* the shrinking left the reused targets in some state: start afresh */
			fuzz_pair_destroy(pair);
			pair = NULL;
			if (ret < 0)
				break;
		}
		if (vml_now_ns() - last > 5 * NSEC_PER_SEC) {
			last = vml_now_ns();
			fprintf(stderr, "vmalock fuzz: %lu runs, %lu ops, %lu differences\n",
				run + 1, applied, differences);
		}
	}
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
	fuzz_pair_destroy(pair);
	vml_free(ops);
	printf("fuzz: %lu runs, %lu ops in %.1f s, %lu differences", run, applied,
	       (double)(vml_now_ns() - t0) / NSEC_PER_SEC, differences);
	if (cli.known)
		printf(" (and %lu known ones, listed in %s)", saved.known_hits, cli.known);
	printf(saved.nr ? ", %zu distinct:\n" : "\n", saved.nr);
	for (size_t i = 0; i < saved.nr; i++)
		printf("  %6lu  %-44s %s\n", saved.sig[i].count, saved.sig[i].key,
		       saved.sig[i].path[0] ? saved.sig[i].path : "(not shrunk: --max-failures)");
	for (size_t i = 0; i < saved.nr_known; i++)
		if (saved.known_count[i])
			printf("  %6lu  %-44s (known)\n", saved.known_count[i], saved.known[i]);
	vml_free(saved.sig);
	for (size_t i = 0; i < saved.nr_known; i++)
		vml_free(saved.known[i]);
	vml_free(saved.known);
	vml_free(saved.known_count);
	if (ret) {
		fprintf(stderr, "vmalock fuzz: %s\n", ret == -ECHILD ?
			"the live child died" : strerror(-ret));
		return EXIT_CHECK_FAILED;
	}
	if (fuzz_stop) {
		fprintf(stderr, "vmalock fuzz: interrupted\n");
		return EXIT_CHECK_FAILED;
	}
	return differences ? EXIT_CHECK_FAILED : 0;
}
