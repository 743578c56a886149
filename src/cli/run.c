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

#include "bench.h"
#include "cli.h"
#include "scriptrun.h"
#include "util/json.h"

#define RUN_JSON "vmalock-run.json"
#define RUN_PLOT "vmalock-run.png"
#define RUN_DURATION_S 3	/* Paul's check runs: 3 s; 9 rows x 3 samples is ~1.5 min */
#define RUN_SAMPLES 3

static const struct cli_opt *const run_tables[] = { bench_opt_table, cli_common_opts, NULL };

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
"The options of `vmalock bench` override the defaults, e.g. --duration 1\n"
"--samples 2, --busy 1, --json FILE, --plot FILE.svg:\n"
"\n", (double)RUN_DURATION_S, RUN_SAMPLES);
	cli_print_opts(f, run_tables);
	fprintf(f,
"\n"
"Exit status: 0 success; 1 a target failed; 2 bad usage.\n");
}

/* Does @kernel (uname -r) read maps under per-VMA locks (6.17 and later)? */
static bool kernel_maps_vma_locked(const char *kernel)
{
	unsigned int major = 0, minor = 0;

	if (sscanf(kernel, "%u.%u", &major, &minor) != 2)
		return true;
	return major > 6 || (major == 6 && minor >= 17);
}

static void put_ratio(char *buf, size_t len, double num, double den)
{
	double r = den > 0 ? num / den : 0;

	if (!(den > 0) || !(num >= 0))
		snprintf(buf, len, "-");
	else if (r < 9.95)
		snprintf(buf, len, "%.2fx", r);
	else
		snprintf(buf, len, "%.0fx", r);
}

/* One ratio "name R" with a '*' when it is outside [1/2, 2]. */
static int put_fid(char *buf, size_t len, const char *name, double model, double live)
{
	char r[16];
	double q = live > 0 ? model / live : 0;

	put_ratio(r, sizeof(r), model, live);
	return snprintf(buf, len, "%s %s%s", name, r, live > 0 && (q > 2 || q < 0.5) ? "*" : "");
}

/*
 * " [LO-HI]": the lowest and highest per-round ratio of one statistic (the
 * model's sample i over the live one of the same round), or "" with fewer
 * than two rounds. A run's medians move from run to run (bench/README.md,
 * "vmalock run");
 * the spread over its rounds says how far one run can be trusted.
 */
static void put_round_range(char *buf, size_t len, const struct pvm_row *m,
			    const struct pvm_row *l, size_t off)
{
	unsigned int n = m->nr < l->nr ? m->nr : l->nr, used = 0;
	double lo = 0, hi = 0;
	char a[16], b[16];

	for (unsigned int i = 0; i < n; i++) {
		double mv = *(const double *)((const char *)&m->s[i] + off);
		double lv = *(const double *)((const char *)&l->s[i] + off);

		if (!(lv > 0) || !(mv >= 0))
			continue;
		if (!used || mv / lv < lo)
			lo = mv / lv;
		if (!used || mv / lv > hi)
			hi = mv / lv;
		used++;
	}
	buf[0] = '\0';
	if (used < 2)
		return;
	put_ratio(a, sizeof(a), lo, 1);
	put_ratio(b, sizeof(b), hi, 1);
	snprintf(buf, len, " [%s-%s]", a, b);
}

/*
 * Third line: per statistic and reader count, how far the model's policy
 * that the kernel uses here is from the kernel, in this run (model/kernel;
 * '*': more than 2x either way).
 */
static void verdict_fidelity(FILE *f, const struct pvm_result *res, enum vml_lock_policy lock)
{
	bool any = false;

	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct pvm_row *l = &res->rows[k], *m;
		char a[32], b[32], c[32], d[32], ra[40], rb[40];

		if (l->target != TARGET_LIVE || !l->nr || !l->readers)
			continue;
		m = pvm_find(res, TARGET_MODEL, lock, l->readers);
		if (!m)
			continue;
		if (!any)
			fprintf(f, "verdict (the model's %s policy against the kernel, model/kernel, "
				"'*' beyond 2x, [lowest-highest round]):",
				vocab_name(&lock_policy_vocab, lock));
		put_fid(a, sizeof(a), "avg", m->avg_us, l->avg_us);
		put_fid(b, sizeof(b), "p99", m->p99_us, l->p99_us);
		put_fid(c, sizeof(c), "p50", m->p50_us, l->p50_us);
		put_fid(d, sizeof(d), "max", m->max_us, l->max_us);
		put_round_range(ra, sizeof(ra), m, l, offsetof(struct pvm_sample, avg_us));
		put_round_range(rb, sizeof(rb), m, l, offsetof(struct pvm_sample, p99_us));
		fprintf(f, "%s %u reader%s: %s%s, %s%s, %s, %s", any ? ";" : "", l->readers,
			l->readers == 1 ? "" : "s", a, ra, b, rb, c, d);
		any = true;
	}
	if (any)
		fprintf(f, ".\n");
	else
		fprintf(f, "verdict (the model against the kernel, per statistic): not measured "
			"(needs --target both and readers).\n");
}

/* Two lines: the model's policies against each other, then the live kernel. */
static void verdict(FILE *f, const struct pvm_result *res)
{
	const struct pvm_row *m0 = pvm_find(res, TARGET_MODEL, VML_LOCK_MMAP, 0);
	const struct pvm_row *m1 = pvm_find(res, TARGET_MODEL, VML_LOCK_MMAP, 1);
	const struct pvm_row *v0 = pvm_find(res, TARGET_MODEL, VML_LOCK_VMA, 0);
	const struct pvm_row *v1 = pvm_find(res, TARGET_MODEL, VML_LOCK_VMA, 1);
	const struct pvm_row *m4 = pvm_find(res, TARGET_MODEL, VML_LOCK_MMAP, 4);
	const struct pvm_row *v4 = pvm_find(res, TARGET_MODEL, VML_LOCK_VMA, 4);
	const struct pvm_row *l0 = pvm_find(res, TARGET_LIVE, 0, 0);
	const struct pvm_row *l1 = pvm_find(res, TARGET_LIVE, 0, 1);
	const char *view = bench_view_name(res->view), *kernel = bench_kernel();
	bool live_vma = (res->view == VML_VIEW_MAPS || res->view == TARGET_VIEW_QUERY) &&
			kernel_maps_vma_locked(kernel);
	enum vml_lock_policy like_lock = live_vma ? VML_LOCK_VMA : VML_LOCK_MMAP;
	const struct pvm_row *like = live_vma ? v1 : m1;
	char a[16], b[16], c[16], d[16], e[16], g[16], h[16], i[16];

	if (m0 && m1 && v0 && v1) {
		put_ratio(a, sizeof(a), v1->p50_us, v0->p50_us);
		put_ratio(b, sizeof(b), m1->p50_us, m0->p50_us);
		put_ratio(c, sizeof(c), m1->p50_us, v1->p50_us);
		put_ratio(d, sizeof(d), m1->max_us, v1->max_us);
		put_ratio(e, sizeof(e), m1->avg_us, v1->avg_us);
		fprintf(f, "verdict (model, %s, 1 reader): the mapper's p50 is %s its no-reader "
			"p50 under the vma policy and %s under mmap; mmap/vma: p50 %s, avg %s, "
			"max %s", view, a, b, c, e, d);
		if (m4 && v4) {
			put_ratio(e, sizeof(e), m4->p50_us, v4->p50_us);
			put_ratio(g, sizeof(g), m4->max_us, v4->max_us);
			fprintf(f, " (4 readers: p50 %s, max %s)", e, g);
		}
		fprintf(f, ".\n");
	} else {
		fprintf(f, "verdict (model): not measured (needs --target model or both, "
			"--lock both, --readers 0,1).\n");
	}
	if (l0 && l1) {
		put_ratio(a, sizeof(a), l1->p50_us, l0->p50_us);
		put_ratio(b, sizeof(b), l1->max_us, l0->max_us);
		fprintf(f, "verdict (live kernel %s, %s under %s, 1 reader): the mapper's p50 is "
			"%s and its max %s the no-reader run's", kernel, view,
			live_vma ? "per-VMA locks" : "mmap_lock", a, b);
		if (like) {
			put_ratio(h, sizeof(h), like->p50_us, l1->p50_us);
			put_ratio(i, sizeof(i), like->max_us, l1->max_us);
			fprintf(f, "; the model's %s policy, which the kernel uses here, over the "
				"kernel: p50 %s, max %s", vocab_name(&lock_policy_vocab, like_lock), h,
				i);
		}
		fprintf(f, ".\n");
	} else {
		fprintf(f, "verdict (live kernel): not measured (needs --target live or both, "
			"--readers 0,1).\n");
	}
	verdict_fidelity(f, res, like_lock);
}

int cmd_run(int argc, char **argv)
{
	struct bench_cli c;
	struct bench_opts *o = &c.o;
	struct pvm_result res;
	bool help_wanted;
	int ret;

	bench_cli_default(&c);
	o->duration_s = RUN_DURATION_S;
	o->samples = RUN_SAMPLES;
	c.readers = (struct cli_ulist){ .v = { 0, 1, 4 }, .nr = 3 };
	o->json = RUN_JSON;
	o->plot = RUN_PLOT;
	o->view = VML_VIEW_SMAPS;
	ret = cli_parse("run", run_tables, argc, argv, &c, NULL, &help_wanted);
	if (ret)
		return ret;
	if (help_wanted) {
		help(stdout);
		return 0;
	}
	bench_cli_finish(&c);
	ret = bench_cli_check_mb("run", &c);
	if (ret)
		return ret;
	if (!o->model && !o->live)
		return cli_usage_error("run", "--target: nothing to run");
	if (o->trace_events && !o->trace)
		return cli_usage_error("run", "--trace-events: needs --trace");
	/* The defaults' paths are checked as given ones are. */
	for (int i = 0; i < 2; i++) {
		const char *path = i ? o->plot : o->json;

		ret = path ? json_check_writable(path) : 0;
		if (ret)
			return cli_usage_error("run", "cannot write '%s': %s", path,
					       strerror(-ret));
	}

	bench_print_load(stdout);
	ret = bench_proc_vs_map(o, &res);
	if (!ret) {
		pvm_print_table(stdout, &res);
		pvm_print_dynamics(stdout, &res);
		fflush(stdout);
		if (o->json && pvm_write_json(o->json, &res))
			ret = EXIT_CHECK_FAILED;
		if (o->plot && pvm_plot(o->plot, &res))
			ret = EXIT_CHECK_FAILED;
		if (!ret)
			printf("# wrote %s and %s\n", o->json ? o->json : "no JSON",
			       o->plot ? o->plot : "no plot");
		verdict(stdout, &res);
	}
	pvm_result_free(&res);
	return ret;
}
