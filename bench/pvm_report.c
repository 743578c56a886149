// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pvm_report.c - proc-vs-map's output: the table (after
 * run-proc-vs-map.sh's: per-sample maxima reduced to median/min/max, plus
 * median p50/p99), the JSON rows, the gnuplot figure, and the verdict
 * `vmalock run` ends with.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/host.h"
#include "pvm.h"
#include "util/json.h"
#include "util/alloc.h"

static void row_label(const struct pvm_row *row, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/r%u", pvm_target_label(row), pvm_lock_label(row),
		 row->readers);
}

/* The table's columns; the steal policy's is shown with --steal. */
#define COL_STEAL 2
static const struct bench_col columns[] = {
	BENCH_TEXT("target", -6), BENCH_TEXT("lock", -10), BENCH_TEXT("steal", -17),
	BENCH_NUM("readers", 7, FIXED, 0),
	BENCH_NUM("max_med", 10, US, 1), BENCH_NUM("max_min", 10, US, 1),
	BENCH_NUM("max_max", 10, US, 1), BENCH_NUM("p50", 10, US, 1),
	BENCH_NUM("p99", 10, US, 1), BENCH_NUM("avg", 10, US, 1),
	BENCH_NUM("ops", 8, FIXED, 0), BENCH_NUM("vmas", 7, FIXED, 0),
	BENCH_NUM("views", 7, FIXED, 0),
	BENCH_COLS_END,
};

static double ratio(double a, double b)
{
	return b > 0 ? a / b : NAN;
}

/*
 * What the reader-side fixes cost the mapper: each model vma-strict and
 * vma-recheck row over the vma row with as many readers, measured in this
 * run (above 1: the mapper is slower beside the fixed readers).
 */
static void print_fix_ratios(FILE *f, const struct pvm_result *res, enum vml_lock_policy fix)
{
	bool header = false;

	for (unsigned int i = 0; i < res->o->readers.nr; i++) {
		unsigned int n = (unsigned int)res->o->readers.v[i];
		const struct pvm_row *s = pvm_find(res, TARGET_MODEL, fix, n);
		const struct pvm_row *v = pvm_find(res, TARGET_MODEL, VML_LOCK_VMA, n);

		if (!s || !v)
			continue;
		if (!header)
			fprintf(f, "# the reader-side fix's cost to the mapper, model %s / vma "
				   "(same run):\n", vocab_name(&lock_policy_vocab, fix));
		header = true;
		fprintf(f, "#   readers %u: p50 %.2f, p99 %.2f, avg %.2f, max_med %.2f; ops %.2f, "
			   "views %.2f; readers' mmap_lock fallbacks a second %.0f (vma %.0f)\n", n,
			ratio(s->p50_us, v->p50_us), ratio(s->p99_us, v->p99_us),
			ratio(s->avg_us, v->avg_us), ratio(s->max_us, v->max_us),
			ratio(s->ops, v->ops), ratio(s->passes, v->passes),
			s->fallbacks / res->o->mapper.duration_s,
			v->fallbacks / res->o->mapper.duration_s);
	}
}

static void pvm_print_fix_ratios(FILE *f, const struct pvm_result *res)
{
	print_fix_ratios(f, res, VML_LOCK_VMA_STRICT);
	print_fix_ratios(f, res, VML_LOCK_VMA_RECHECK);
}

/* min, median and max of a per-sample figure over the @target rows' samples that have it. */
static bool sample_range(const struct pvm_result *res, enum target_kind target, bool sim,
			 bool live_figure, double out[3])
{
	size_t n = 0, cap = 0;
	double *v;

	for (unsigned int k = 0; k < res->nr_rows; k++)
		cap += res->rows[k].nr;
	v = vml_zalloc((cap + 1) * sizeof(*v));
	if (!v)
		return false;
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct pvm_row *row = &res->rows[k];

		if (row->target != target || row->sim != sim)
			continue;
		for (unsigned int i = 0; i < row->nr; i++) {
			double x = live_figure ? row->s[i].live_page_ns : row->s[i].charged_page_ns;

			if (x > 0)
				v[n++] = x;
		}
	}
	out[0] = stat_min(v, n);
	out[1] = stat_median(v, n);
	out[2] = stat_max(v, n);
	vml_free(v);
	return n > 0;
}

/* The simulated rows' page charge, when their rounds' live samples set it. */
static void pvm_print_sim_paired(FILE *f, const struct pvm_result *res)
{
	double ch[3];

	if (!res->paired_page_ns || !sample_range(res, TARGET_MODEL, true, false, ch))
		return;
	fprintf(f, "#   page walked, paired by round (the table's figure is the calibration's): "
		   "each simulated sample charged what its round's live sample with as many "
		   "readers timed on its own mapper - its readers' read()s of %d pages or more "
		   "(thread CPU time less the records'), else the probe before them - %.1f ns "
		   "(median; %.1f-%.1f over samples)\n", WALK_MIN_PAGES, ch[1], ch[0], ch[2]);
}

/* What the model was fed from this host, and where each figure came from. */
static void pvm_print_host(FILE *f, const struct pvm_result *res)
{
	const struct pvm_opts *o = res->o;
	const struct bench_charge_opts *given = &o->charge;
	const struct host_profile *hp;

	if (res->cal.done && given->record_ns < 0 && given->page_ns < 0)
		fprintf(f, "# model readers charged %.0f ns per record and %.1f ns per anonymous page walked: "
			   "measured now, the live kernel takes %.0f + %.1f ns and the model %.0f + "
			   "%.1f ns per %s record + page\n", res->record_ns, res->page_ns,
			res->cal.live_ns, res->cal.live_page_ns, res->cal.model_ns,
			res->cal.model_page_ns, bench_view_name(res->view));
	else
		fprintf(f, "# model readers charged %.0f ns per record (%s) and %.1f ns per "
			   "anonymous page walked (%s)\n", res->record_ns,
			given->record_ns < 0 ? "measured now" : "--record-ns", res->page_ns,
			given->page_ns >= 0 ? "--page-ns" :
			given->record_ns >= 0 ? "none with --record-ns" : "measured now");
	if (res->paired_page_ns) {
		double lv[3], ch[3] = { 0, 0, 0 };

		sample_range(res, TARGET_MODEL, false, false, ch);	/* all 0: nothing charged */
		if (!sample_range(res, TARGET_LIVE, false, true, lv))
			fprintf(f, "# ... the page charge paired by round: no live sample's walk stood out "
				   "from its records' cost (a small region), so the model samples were "
				   "charged the calibration's %.1f ns\n", res->page_ns);
		else
			fprintf(f, "# ... the page charge paired by round: each live sample first timed its "
				   "own mapper's region, uncontended: %.1f ns an anonymous page "
				   "(median; %.1f-%.1f over samples), and the model samples of its round "
				   "with as many readers were charged that less the model's own: %.1f "
				   "(%.1f-%.1f)\n", lv[1], lv[0], lv[2], ch[1], ch[0], ch[2]);
	}
	if (res->cal.done && given->call_ns < 0 && res->cal.wake_return_ns > 0)
		fprintf(f, "# ... and %.0f ns per read() call, outside the lock: measured now, an "
			   "end-of-file read() takes the live kernel %.0f ns and the model %.0f ns, "
			   "plus the model writer's way back to the lock once woken: a woken "
			   "futex_wait's return to user space from its switch-in (%.0f ns, perf "
			   "context-switch records)\n", res->call_ns, res->cal.live_call_ns,
			res->cal.model_call_ns, res->cal.wake_return_ns);
	else if (res->cal.done && given->call_ns < 0)
		fprintf(f, "# ... and %.0f ns per read() call, outside the lock: measured now, an "
			   "end-of-file read() takes the live kernel %.0f ns and the model %.0f ns, "
			   "plus a futex_wait round trip (%.0f ns) for the model writer's way back to "
			   "the lock once woken - less than that way, which was not measured: %s\n",
			res->call_ns, res->cal.live_call_ns, res->cal.model_call_ns, res->cal.futex_ns,
			res->cal.wake_return_err == -ENOTSUP ? "one CPU, no idle CPU to wake" :
			res->cal.wake_return_err == -EACCES || res->cal.wake_return_err == -EPERM ?
			"perf_event_open refused (kernel.perf_event_paranoid <= 2 allows it)" :
			strerror(-res->cal.wake_return_err));
	else
		fprintf(f, "# ... and %.0f ns per read() call, outside the lock (--call-ns)\n",
			res->call_ns);
	if (res->mirror)
		fprintf(f, "# model mm: the region and copies of the live mapper's %u own mappings "
			   "(binary, libraries, heap, stack; %lu pages resident), as its smaps "
			   "shows them\n", bench_mirror_count(res->mirror),
			bench_mirror_pages(res->mirror));
	else
		fprintf(f, "# model mm: the region alone (%s)\n", o->region_only ? "--region-only" :
			"no live kernel to copy the mapper's own mappings from");
	bench_layout_print(f, o->layout);
	if (!host_profile_current(&hp) && hp->hz)
		fprintf(f, "# mmap_lock hand-off after RWSEM_WAIT_TIMEOUT = %llu jiffies at HZ=%u "
			   "(%s), counted from the tick a waiter queued in: %.0f-%.0f ms\n",
			(unsigned long long)((hp->hz + 249) / 250), hp->hz, hp->hz_source,
			(double)hp->handoff_ns / 1e6, (double)hp->handoff_ns / 1e6 + 1000.0 / hp->hz);
}

static void print_table(FILE *f, const struct pvm_result *res)
{
	const struct pvm_opts *o = res->o;
	const struct bench_common *c = res->c;
	struct bench_table t;

	fprintf(f, "# proc-vs-map: view %s; mapper: %lu MiB region, %g s x %u samples, "
		"10 us between calls\n", bench_view_name(res->view), o->mapper.mb,
		o->mapper.duration_s, c->samples);
	if (res->reader_cpu >= 0)
		fprintf(f, "# mapper on CPU %d; readers at nice 15 and %u hog(s) on CPU %d",
			res->mapper_cpu, o->busy, res->reader_cpu);
	else
		fprintf(f, "# one CPU: mapper, readers (nice 15) and %u hog(s) share it", o->busy);
	if (o->busy)
		fprintf(f, " (busyduration %g ms)", o->busyduration_ms);
	fprintf(f, "; kernel %s; seed %llu\n", bench_kernel(),
		(unsigned long long)o->mapper.seed);
	if (o->kernel_transients && c->model)
		fprintf(f, "# model: kernel transients on (the VMA iterator re-walks as the maple "
			   "tree's does)\n");
	if (c->model)
		pvm_print_host(f, res);
	if (c->sim) {
		fprintf(f, "# sim: the model on a simulated machine of %u CPUs in virtual time "
			   "(docs/simulation.md), seed %llu; mapper on CPU 0, ", c->cpus,
			(unsigned long long)c->sim_seed);
		if (o->busy_cpus)
			fprintf(f, "readers (nice 15) spread over CPUs %u-%u with %u hog(s) on each\n",
				c->cpus - o->busy_cpus, c->cpus - 1, o->busy);
		else
			fprintf(f, "readers (nice 15) and %u hog(s) on CPU %u\n", o->busy,
				c->cpus > 1 ? 1 : 0);
		bench_sim_costs_print(f, &res->simcosts);
		pvm_print_sim_paired(f, res);
	}
	fprintf(f, "# latency of the mapper's mmap()/munmap() calls in microseconds:\n"
		"# max = each sample's slowest call, reduced over samples to median/min/max;\n"
		"# p50, p99, avg, ops, vmas, views = medians over samples (avg: a sample's mean,\n"
		"# mapper.c's opavg, whose median the seeds report; views: whole views read)\n");
	if (c->steals)
		fprintf(f, "# steal: how model readers may take mmap_lock past a queued writer "
			   "(--steal; live: the kernel's own)\n");
	bench_table_start(&t, f, columns, c->steals ? 0 : 1u << COL_STEAL);
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct pvm_row *row = &res->rows[k];

		if (!row->nr)
			continue;
		bench_text(&t, pvm_target_label(row));
		bench_text(&t, pvm_lock_label(row));
		bench_text(&t, pvm_steal_label(row));
		bench_num(&t, row->readers);
		bench_num(&t, row->max_us);
		bench_num(&t, row->max_min_us);
		bench_num(&t, row->max_worst_us);
		bench_num(&t, row->p50_us);
		bench_num(&t, row->p99_us);
		bench_num(&t, row->avg_us);
		bench_num(&t, row->ops);
		bench_num(&t, row->vmas);
		bench_num(&t, row->passes);
		bench_row_end(&t);
	}
	pvm_print_fix_ratios(f, res);
}

void pvm_print(FILE *f, const struct bench_run *r)
{
	print_table(f, r->res);
	pvm_print_dynamics(f, r->res);
}

void pvm_json(json_t *doc, const struct bench_run *br)
{
	const struct pvm_result *res = br->res;
	const struct pvm_opts *o = res->o;
	json_t *meta = bench_doc_meta(doc);

	json_set_str(meta, "view", bench_view_name(res->view));
	json_set_double(meta, "duration_s", o->mapper.duration_s);
	json_set_u64(meta, "mb", o->mapper.mb);
	json_set_u64(meta, "busy", o->busy);
	json_set_double(meta, "busyduration_ms", o->busyduration_ms);
	json_set_u64(meta, "seed", o->mapper.seed);
	json_set_i64(meta, "mapper_cpu", res->mapper_cpu);
	json_set_i64(meta, "reader_cpu", res->reader_cpu);
	json_set_bool(meta, "kernel_transients", o->kernel_transients);
	if (res->c->live) {
		/* which of the model's policies the live rows are like (the host profile's) */
		const char *how;

		json_set_str(meta, "kernel_view_lock",
			     bench_kernel_view_per_vma(res->view, &how) ? "vma" : "mmap");
		json_set_str(meta, "kernel_view_lock_from", how);
	}
	json_set_u64(meta, "model_own_mappings", bench_mirror_count(res->mirror));
	json_set_new(meta, "layout", bench_layout_json(o->layout));
	if (res->c->sim) {
		json_t *sim = json_object();

		json_set_u64(sim, "cpus", res->c->cpus);
		json_set_u64(sim, "seed", res->c->sim_seed);
		json_set_u64(sim, "busy_cpus", o->busy_cpus);
		json_set_u64(sim, "events", res->simstats.events);
		json_set_u64(sim, "switches", res->simstats.switches);
		json_set_new(meta, "sim", sim);
		json_set_new(doc, "sim_costs", bench_sim_costs_json(&res->simcosts));
		if (res->mirror)
			json_set_new(doc, "sim_layout", bench_mirror_json(res->mirror));
	}
	if (res->c->model) {
		/* what model readers were charged; with what it was measured from, if it was */
		json_t *cal = json_object();

		json_set_double(cal, "record_ns", res->record_ns);
		json_set_double(cal, "page_ns", res->page_ns);
		json_set_bool(cal, "page_ns_paired", res->paired_page_ns);
		json_set_double(cal, "call_ns", res->call_ns);
		json_set_bool(cal, "measured", res->cal.done);
		bench_doc_set_calibration(doc, cal);
	}
	if (res->cal.done) {
		json_t *cal = json_object_get(doc, "calibration");

		json_set_double(cal, "live_ns_per_record", res->cal.live_ns);
		json_set_double(cal, "model_ns_per_record", res->cal.model_ns);
		json_set_double(cal, "live_ns_per_page", res->cal.live_page_ns);
		json_set_double(cal, "model_ns_per_page", res->cal.model_page_ns);
		json_set_double(cal, "live_ns_per_eof_read", res->cal.live_call_ns);
		json_set_double(cal, "model_ns_per_eof_read", res->cal.model_call_ns);
		json_set_double(cal, "ns_per_futex_round_trip", res->cal.futex_ns);
		if (res->cal.wake_return_ns > 0)
			json_set_double(cal, "ns_woken_futex_return", res->cal.wake_return_ns);
	}
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct pvm_row *row = &res->rows[k];
		json_t *r, *per;

		if (!row->nr)
			continue;
		r = bench_doc_row(doc, target_kind_name(row->target));
		json_set_str(r, "lock", pvm_lock_label(row));
		json_set_str(r, "steal", pvm_steal_label(row));
		json_set_bool(r, "sim", row->sim);
		if (row->sim)
			json_set_u64(r, "cpus", row->cpus);
		json_set_u64(r, "readers", row->readers);
		json_set_double(r, "p50_us", row->p50_us);
		json_set_double(r, "p99_us", row->p99_us);
		json_set_double(r, "avg_us", row->avg_us);
		json_set_double(r, "max_us", row->max_us);
		json_set_double(r, "max_us_min", row->max_min_us);
		json_set_double(r, "max_us_worst", row->max_worst_us);
		json_set_double(r, "ops", row->ops);
		json_set_double(r, "vmas", row->vmas);
		if (o->layout)
			json_set_double(r, "layout_vmas", row->layout_vmas);
		json_set_double(r, "views_read", row->passes);
		if (row->target == TARGET_MODEL)
			json_set_double(r, "mmap_lock_fallbacks", row->fallbacks);
		per = bench_doc_samples(r, "per_sample");
		for (unsigned int i = 0; i < row->nr; i++) {
			const struct pvm_sample *s = &row->s[i];
			json_t *js = json_object();

			json_set_double(js, "p50_us", s->p50_us);
			json_set_double(js, "p99_us", s->p99_us);
			json_set_double(js, "avg_us", s->avg_us);
			json_set_double(js, "max_us", s->max_us);
			json_set_u64(js, "ops", s->ops);
			json_set_u64(js, "vmas", s->vmas);
			json_set_u64(js, "views_read", s->passes);
			json_set_u64(js, "failed_calls", s->fails);
			if (s->live_page_ns > 0)
				json_set_double(js, "live_ns_per_page", s->live_page_ns);
			if (s->live_run_page_ns > 0)
				json_set_double(js, "live_run_ns_per_page", s->live_run_page_ns);
			if (row->target == TARGET_MODEL && res->paired_page_ns)
				json_set_double(js, "charged_ns_per_page", s->charged_page_ns);
			if (row->target == TARGET_MODEL)
				json_set_u64(js, "mmap_lock_fallbacks", s->fallbacks);
			json_push_new(per, js);
		}
	}
}

/*
 * The data file: one block (gnuplot index) per row with the distribution
 * of all its samples' calls as "x fraction-of-calls-at-least-x", then the
 * per-sample maxima ("row max"), then the medians ("row p50 p99").
 */
static int write_plot_data(FILE *d, const struct pvm_result *res)
{
	struct lat_hist *all = lat_hist_new();

	if (!all)
		return -ENOMEM;
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct pvm_row *row = &res->rows[k];
		uint64_t above;

		lat_hist_init(all);
		for (unsigned int i = 0; i < row->nr; i++)
			lat_hist_merge(all, row->s[i].hist);
		above = all->count;
		fprintf(d, "# row %u\n", k);
		for (unsigned int b = 0; b < LAT_HIST_BUCKETS && above; b++) {
			uint64_t width, low;

			if (!all->bucket[b])
				continue;
			low = lat_hist_bucket_low(b, &width);
			if (low < all->min_ns)
				low = all->min_ns;
			fprintf(d, "%.4f %.9g\n", (double)low / 1e3,
				(double)above / (double)all->count);
			above -= all->bucket[b];
		}
		if (all->count)
			fprintf(d, "%.4f %.9g\n", (double)all->max_ns / 1e3,
				1.0 / (double)all->count);
		else
			fprintf(d, "1 1\n");
		fprintf(d, "\n\n");
	}
	vml_free(all);
	for (unsigned int k = 0; k < res->nr_rows; k++)
		for (unsigned int i = 0; i < res->rows[k].nr; i++)
			fprintf(d, "%u %.4f\n", k, res->rows[k].s[i].max_us);
	fprintf(d, "\n\n");
	for (unsigned int k = 0; k < res->nr_rows; k++)
		fprintf(d, "%u %.4f %.4f\n", k, res->rows[k].p50_us, res->rows[k].p99_us);
	return 0;
}

int pvm_plot(struct bench_plot *p, const struct bench_run *r)
{
	const struct pvm_result *res = r->res;
	const struct pvm_opts *o = res->o;
	FILE *s = p->script;
	char label[64];
	int ret = write_plot_data(p->data, res);

	if (ret)
		return ret;
	fprintf(s, "set multiplot layout 1,2 title 'proc-vs-map: /proc/PID/%s readers vs. "
		"mmap()/munmap(), %lu MiB, %g s x %u samples, kernel %s'\n",
		bench_view_name(res->view), o->mapper.mb, o->mapper.duration_s, res->c->samples,
		bench_kernel());
	fprintf(s, "set grid\nset logscale xy\nset format x '%%g'\nset format y '%%g'\n"
		"set key top right font ',9'\n"
		"set xlabel 'latency of one mmap()/munmap() call (us)'\n"
		"set ylabel 'fraction of calls at least this slow'\n"
		"set title 'latency distribution (all samples)'\n");
	fprintf(s, "plot \\\n");
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct pvm_row *row = &res->rows[k];
		/* colour: the policy (model mmap, vma, vma-strict, vma-recheck, live); dashes: readers */
		static const char *const colour[] = {
			"#d62728", "#1f77b4", "#9467bd", "#ff7f0e", "#2ca02c",
		};
		unsigned int group = row->target == TARGET_LIVE ? 4 : (unsigned int)row->lock;
		unsigned int dash = 1;

		for (unsigned int i = 0; i < o->readers.nr; i++)
			if (o->readers.v[i] == row->readers)
				dash = i % 5 + 1;
		row_label(row, label, sizeof(label));
		fprintf(s, "  ");
		bench_plot_data(p);
		fprintf(s, " index %u using 1:2 with steps lw 2 lc rgb '%s' dt %u title '%s'%s\n",
			k, colour[group], dash, label, k + 1 < res->nr_rows ? ", \\" : "");
	}
	fprintf(s, "unset logscale x\nset xrange [-0.5:%u.5]\nset xtics rotate by -30 (",
		res->nr_rows ? res->nr_rows - 1 : 0);
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		row_label(&res->rows[k], label, sizeof(label));
		fprintf(s, "%s'%s' %u", k ? ", " : "", label, k);
	}
	fprintf(s, ")\nset xlabel ''\nset ylabel 'latency (us)'\n"
		"set title 'per row: each sample''s max, median p99 and p50'\n"
		"set key top left font ',9'\nplot ");
	bench_plot_data(p);
	fprintf(s, " index %u using 1:2 with points pt 7 ps 1.2 title 'per-sample max', ",
		res->nr_rows);
	bench_plot_data(p);
	fprintf(s, " index %u using 1:3 with points pt 5 ps 1.2 title 'p99 (median)', ",
		res->nr_rows + 1);
	bench_plot_data(p);
	fprintf(s, " index %u using 1:2 with points pt 9 ps 1.4 title 'p50 (median)'\n"
		"unset multiplot\n", res->nr_rows + 1);
	return 0;
}

/* ---- the verdict (vmalock run) ---- */

/* One ratio "name R" with a '*' when it is outside [1/2, 2]. */
static int put_fid(char *buf, size_t len, const char *name, double model, double live)
{
	char r[16];
	double q = live > 0 ? model / live : 0;

	bench_ratio(r, sizeof(r), model, live);
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
	bench_ratio(a, sizeof(a), lo, 1);
	bench_ratio(b, sizeof(b), hi, 1);
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

/*
 * `vmalock run`'s verdict, in ratios measured in this run: the model's
 * policies against each other, the live kernel against itself without
 * readers, and, per statistic, how far the model's policy the kernel uses
 * is from the kernel.
 */
static const char *within2(double sim, double live)
{
	double q = live > 0 ? sim / live : 0;

	return live > 0 && (q > 2 || q < 0.5) ? "*" : "";
}

/*
 * The simulated rows: the policies against each other, and - the validation
 * at the host's own size - the policy the kernel uses against the kernel,
 * per reader count: avg, p99 and max, '*' beyond 2x.
 */
static void verdict_sim(FILE *f, const struct pvm_result *res, enum vml_lock_policy like)
{
	const struct pvm_row *m1 = pvm_find_sim(res, VML_LOCK_MMAP, 1);
	const struct pvm_row *v1 = pvm_find_sim(res, VML_LOCK_VMA, 1);
	char a[16], b[16], c[16];
	bool any = false;

	if (m1 && v1) {
		bench_ratio(a, sizeof(a), m1->p50_us, v1->p50_us);
		bench_ratio(b, sizeof(b), m1->avg_us, v1->avg_us);
		bench_ratio(c, sizeof(c), m1->max_us, v1->max_us);
		fprintf(f, "verdict (simulated, %u CPUs, %s, 1 reader): mmap/vma: p50 %s, avg %s, "
			"max %s.\n", res->c->cpus, bench_view_name(res->view), a, b, c);
	}
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct pvm_row *l = &res->rows[k], *s;

		if (l->target != TARGET_LIVE || !l->nr)
			continue;
		s = pvm_find_sim(res, like, l->readers);
		if (!s)
			continue;
		if (!any)
			fprintf(f, "verdict (simulated %s policy over the kernel, %u CPUs against "
				"this host's):", vocab_name(&lock_policy_vocab, like), res->c->cpus);
		bench_ratio(a, sizeof(a), s->avg_us, l->avg_us);
		bench_ratio(b, sizeof(b), s->p99_us, l->p99_us);
		bench_ratio(c, sizeof(c), s->max_us, l->max_us);
		fprintf(f, "%s %u reader%s: avg %s%s, p99 %s%s, max %s%s", any ? ";" : "", l->readers,
			l->readers == 1 ? "" : "s", a, within2(s->avg_us, l->avg_us),
			b, within2(s->p99_us, l->p99_us), c, within2(s->max_us, l->max_us));
		any = true;
	}
	if (any)
		fprintf(f, ".\n");
}

void pvm_verdict(FILE *f, const struct bench_run *r)
{
	const struct pvm_result *res = r->res;
	const struct pvm_row *m0 = pvm_find(res, TARGET_MODEL, VML_LOCK_MMAP, 0);
	const struct pvm_row *m1 = pvm_find(res, TARGET_MODEL, VML_LOCK_MMAP, 1);
	const struct pvm_row *v0 = pvm_find(res, TARGET_MODEL, VML_LOCK_VMA, 0);
	const struct pvm_row *v1 = pvm_find(res, TARGET_MODEL, VML_LOCK_VMA, 1);
	const struct pvm_row *m4 = pvm_find(res, TARGET_MODEL, VML_LOCK_MMAP, 4);
	const struct pvm_row *v4 = pvm_find(res, TARGET_MODEL, VML_LOCK_VMA, 4);
	const struct pvm_row *l0 = pvm_find(res, TARGET_LIVE, 0, 0);
	const struct pvm_row *l1 = pvm_find(res, TARGET_LIVE, 0, 1);
	const char *view = bench_view_name(res->view), *kernel = bench_kernel();
	const char *how;
	/* which policy the kernel runs for this view: the host profile's (probed) answer */
	bool live_vma = bench_kernel_view_per_vma(res->view, &how);
	enum vml_lock_policy like_lock = live_vma ? VML_LOCK_VMA : VML_LOCK_MMAP;
	const struct pvm_row *like = live_vma ? v1 : m1;
	char a[16], b[16], c[16], d[16], e[16], g[16], h[16], i[16];

	if (res->c->sim)
		verdict_sim(f, res, like_lock);
	if (!res->c->model && !res->c->live)
		return;
	if (m0 && m1 && v0 && v1) {
		bench_ratio(a, sizeof(a), v1->p50_us, v0->p50_us);
		bench_ratio(b, sizeof(b), m1->p50_us, m0->p50_us);
		bench_ratio(c, sizeof(c), m1->p50_us, v1->p50_us);
		bench_ratio(d, sizeof(d), m1->max_us, v1->max_us);
		bench_ratio(e, sizeof(e), m1->avg_us, v1->avg_us);
		fprintf(f, "verdict (model, %s, 1 reader): the mapper's p50 is %s its no-reader "
			"p50 under the vma policy and %s under mmap; mmap/vma: p50 %s, avg %s, "
			"max %s", view, a, b, c, e, d);
		if (m4 && v4) {
			bench_ratio(e, sizeof(e), m4->p50_us, v4->p50_us);
			bench_ratio(g, sizeof(g), m4->max_us, v4->max_us);
			fprintf(f, " (4 readers: p50 %s, max %s)", e, g);
		}
		fprintf(f, ".\n");
	} else {
		fprintf(f, "verdict (model): not measured (needs --target model or both, "
			"--lock both, --readers 0,1).\n");
	}
	if (l0 && l1) {
		bench_ratio(a, sizeof(a), l1->p50_us, l0->p50_us);
		bench_ratio(b, sizeof(b), l1->max_us, l0->max_us);
		fprintf(f, "verdict (live kernel %s, %s under %s (%s), 1 reader): the mapper's p50 "
			"is %s and its max %s the no-reader run's", kernel, view,
			live_vma ? "per-VMA locks" : "mmap_lock", how, a, b);
		if (like) {
			bench_ratio(h, sizeof(h), like->p50_us, l1->p50_us);
			bench_ratio(i, sizeof(i), like->max_us, l1->max_us);
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
