// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * monitor_report.c - `vmalock bench monitor`'s output: three tables (the
 * live rows against the no-tool baseline; the model's prediction beside
 * them; what each tool read of /proc), one JSON document (src/util/json.h)
 * and a gnuplot figure.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout.h"
#include "monitor.h"
#include "util/json.h"

static const char *kind_name(enum mon_kind k)
{
	return k == MON_ONESHOT ? "command" : k == MON_PTY ? "terminal" : "exporter";
}

static double ratio(double a, double b)
{
	return b > 0 && isfinite(a) && isfinite(b) ? a / b : NAN;
}

/* The live rows: each tool against the no-tool row. */
static const struct bench_col live_columns[] = {
	{ .head = "tool", .width = -16, .prec = 16 }, BENCH_NUM("polls", 5, FIXED, 0),
	BENCH_NUM("poll_ms", 8, ADAPT, 0), BENCH_NUM("p50", 8, ADAPT, 0),
	BENCH_NUM("p99", 8, ADAPT, 0), BENCH_NUM("avg", 8, ADAPT, 0),
	BENCH_NUM("max", 8, ADAPT, 0), BENCH_NUM("max_max", 8, ADAPT, 0),
	BENCH_NUM("xp50", 6, ADAPT, 0), BENCH_NUM("xp99", 6, ADAPT, 0),
	BENCH_NUM("xavg", 6, ADAPT, 0), BENCH_NUM("xmax", 6, ADAPT, 0),
	{ .head = "note", .gap = 2 },	/* written after the row's cells, when it has one */
	BENCH_COLS_END,
};

/* The model's prediction: three groups after the tool and today's policy. */
static const struct bench_col model_columns[] = {
	{ .head = "tool", .width = -16, .prec = 16 }, BENCH_TEXT("today", 5),
	BENCH_NUM("xp99", 6, ADAPT, 0), BENCH_NUM("xavg", 6, ADAPT, 0),
	BENCH_NUM("xmax", 6, ADAPT, 0),
	{ .head = "xp99", .width = 6, .num = BENCH_NUM_ADAPT, .gap = 2 },
	BENCH_NUM("xavg", 6, ADAPT, 0), BENCH_NUM("xmax", 6, ADAPT, 0),
	{ .head = "p50", .width = 6, .num = BENCH_NUM_ADAPT, .gap = 2 },
	BENCH_NUM("p99", 6, ADAPT, 0), BENCH_NUM("avg", 6, ADAPT, 0),
	BENCH_NUM("max", 6, ADAPT, 0),
	{ .head = "p99", .width = 8, .num = BENCH_NUM_ADAPT, .gap = 2 },
	BENCH_NUM("avg", 8, ADAPT, 0), BENCH_NUM("max", 8, ADAPT, 0),
	BENCH_COLS_END,
};

/* What each tool read of /proc, a file a row. */
static const struct bench_col file_columns[] = {
	{ .head = "tool", .width = -16, .prec = 16 }, { .head = "file", .width = -18, .prec = 18 },
	BENCH_NUM("opens", 6, COUNT, 0), BENCH_NUM("reads", 8, COUNT, 0),
	BENCH_NUM("bytes", 10, FIXED, 0), BENCH_NUM("size", 6, FIXED, 0),
	{ .head = "lock (this kernel)", .gap = 2 },
	BENCH_COLS_END,
};

/*
 * The prediction of tool @t: today's and the vma model rows, or false.
 * A tool whose replay is only cmdline-like holds has one model row for
 * both: the ratio is 1 by construction.
 */
static bool predict(const struct mon_result *res, int t, const struct mon_row **today,
		    const struct mon_row **vma)
{
	*today = mon_find(res, t, TARGET_MODEL, mon_today_lock(res, t));
	*vma = mon_policy_matters(res, t) ? mon_find(res, t, TARGET_MODEL, VML_LOCK_VMA) : *today;
	return *today && *vma;
}

/* The model row of @t under @lock (the single row when the policy does not matter). */
static const struct mon_row *model_row(const struct mon_result *res, int t, int lock)
{
	return mon_find(res, t, TARGET_MODEL, mon_policy_matters(res, t) ? lock : VML_LOCK_MMAP);
}

static void print_header(FILE *f, const struct mon_result *res)
{
	const struct mon_opts *o = res->o;
	const struct bench_common *c = res->c;

	fprintf(f, "# monitor: real tools poll the live mapper every %g s", o->interval_s);
	if (res->reader_cpu >= 0)
		fprintf(f, " from CPU %d at nice %u; mapper on CPU %d,", res->reader_cpu, o->tool_nice,
			res->mapper_cpu);
	else
		fprintf(f, " at nice %u; one CPU,", o->tool_nice);
	fprintf(f, " %lu MiB region, %g s x %u samples, 10 us between calls; kernel %s; seed %llu\n",
		o->mapper.mb, o->mapper.duration_s, c->samples, bench_kernel(), (unsigned long long)o->mapper.seed);
	bench_layout_print(f, o->layout);
	if (res->obs_vmas)
		fprintf(f, "# tools observed under strace against the mapper after a %g s run "
			   "(%lu VMAs); a read of its cmdline takes %.1f us on this kernel\n",
			o->mapper.duration_s, res->obs_vmas, res->hold_ns / 1e3);
	if (c->model) {
		bool any = false;

		for (int v = 0; v < MON_VIEWS; v++) {
			if (!res->record_ns[v] && !res->page_ns[v] && !res->call_ns[v] &&
			    !res->cal[v].done)
				continue;
			fprintf(f, "%s %s %.0f / %.1f / %.0f", any ? ";" :
				"# model readers charged ns per record / page walked / read() call:",
				target_view_name((enum vml_view)v), res->record_ns[v],
				res->page_ns[v], res->call_ns[v]);
			if (res->cal[v].done)
				fprintf(f, " (measured now: live %.0f + %.1f a page, model %.0f + "
					"%.1f)", res->cal[v].live_ns, res->cal[v].live_page_ns,
					res->cal[v].model_ns, res->cal[v].model_page_ns);
			any = true;
		}
		if (any)
			fprintf(f, "\n");
	}
	for (unsigned int t = 0; t < res->nr_tools; t++)
		if (res->tools[t].skip[0])
			fprintf(f, "# skipped: %s: %s\n", res->tools[t].name, res->tools[t].skip);
}

static void print_live(FILE *f, const struct mon_result *res)
{
	const struct mon_row *base = mon_find(res, -1, TARGET_LIVE, 0);
	struct bench_table t;

	fprintf(f, "#\n# the mapper's mmap()/munmap() latency (us) with each tool polling it, live "
		   "kernel; medians over samples,\n# max_max the worst sample; xp50..xmax: over the "
		   "no-tool row; poll_ms: one poll (htop: its CPU time per interval)\n");
	bench_table_start(&t, f, live_columns, 0);
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct mon_row *row = &res->rows[k];

		if (row->target != TARGET_LIVE || !row->nr)
			continue;
		bench_text(&t, row->tool < 0 ? "(no tool)" : res->tools[row->tool].name);
		if (row->tool < 0) {
			bench_text(&t, "-");
			bench_text(&t, "-");
		} else {
			bench_num(&t, row->polls);
			bench_num(&t, row->poll_ms);
		}
		bench_num(&t, row->p50_us);
		bench_num(&t, row->p99_us);
		bench_num(&t, row->avg_us);
		bench_num(&t, row->max_us);
		bench_num(&t, row->max_worst_us);
		bench_num(&t, base ? ratio(row->p50_us, base->p50_us) : NAN);
		bench_num(&t, base ? ratio(row->p99_us, base->p99_us) : NAN);
		bench_num(&t, base ? ratio(row->avg_us, base->avg_us) : NAN);
		bench_num(&t, base ? ratio(row->max_us, base->max_us) : NAN);
		if (row->timeouts)
			fprintf(f, "  %u poll(s) killed after %g s;", row->timeouts,
				res->o->tool_timeout_s);
		if (row->note)
			fprintf(f, "  %s", row->note);
		bench_row_end(&t);
	}
}

static void print_model(FILE *f, const struct mon_result *res)
{
	const struct mon_row *base = mon_find(res, -1, TARGET_MODEL, VML_LOCK_MMAP);
	struct bench_table tb;

	if (!res->c->model)
		return;
	fprintf(f, "#\n# the model's prediction: each tool's observed reads of the mapper replayed "
		   "on the model every %g s;\n# xp99, xavg, xmax: over the model's no-tool row (compare "
		   "with the live ones); today: the policy this kernel\n# uses for what the tool reads; "
		   "vma/today: the seeds' per-VMA locks against it; predicted: the live figure times "
		   "vma/today\n",
		res->o->interval_s);
	fprintf(f, "%-16s %5s %-20s  %-20s  %-27s  %s\n", "", "", "model mmap", "model vma",
		"vma/today", "predicted live (us)");
	bench_table_start(&tb, f, model_columns, 0);
	for (unsigned int t = 0; t < res->nr_tools; t++) {
		const struct mon_row *live = mon_find(res, (int)t, TARGET_LIVE, 0);
		const struct mon_row *mm = model_row(res, (int)t, VML_LOCK_MMAP);
		const struct mon_row *vm = model_row(res, (int)t, VML_LOCK_VMA);
		const struct mon_row *today, *vma;

		if (res->tools[t].skip[0])
			continue;
		bench_text(&tb, res->tools[t].name);
		if (!res->obs[t].done) {
			fprintf(f, " not predicted: %s", res->obs[t].why);
			bench_row_end(&tb);
			continue;
		}
		if (!res->nr_steps[t]) {
			fprintf(f, " reads nothing that takes the mapper's locks: no change (1.00)");
			bench_row_end(&tb);
			continue;
		}
		bench_text(&tb, mon_policy_matters(res, (int)t) ?
			   mon_lock_name(mon_today_lock(res, (int)t)) : "any");
		bench_num(&tb, mm && base ? ratio(mm->p99_us, base->p99_us) : NAN);
		bench_num(&tb, mm && base ? ratio(mm->avg_us, base->avg_us) : NAN);
		bench_num(&tb, mm && base ? ratio(mm->max_us, base->max_us) : NAN);
		bench_num(&tb, vm && base ? ratio(vm->p99_us, base->p99_us) : NAN);
		bench_num(&tb, vm && base ? ratio(vm->avg_us, base->avg_us) : NAN);
		bench_num(&tb, vm && base ? ratio(vm->max_us, base->max_us) : NAN);
		if (predict(res, (int)t, &today, &vma)) {
			bench_num(&tb, ratio(vma->p50_us, today->p50_us));
			bench_num(&tb, ratio(vma->p99_us, today->p99_us));
			bench_num(&tb, ratio(vma->avg_us, today->avg_us));
			bench_num(&tb, ratio(vma->max_us, today->max_us));
			bench_num(&tb, live ? live->p99_us * ratio(vma->p99_us, today->p99_us) : NAN);
			bench_num(&tb, live ? live->avg_us * ratio(vma->avg_us, today->avg_us) : NAN);
			bench_num(&tb, live ? live->max_us * ratio(vma->max_us, today->max_us) : NAN);
		}
		if (!mon_policy_matters(res, (int)t))
			fprintf(f, "  (only cmdline-like reads: mmap_lock under either policy)");
		bench_row_end(&tb);
	}
}

static void print_file(struct bench_table *t, const char *tool, const struct mon_file *m,
		       bool maps_per_vma, bool other)
{
	char name[48];
	int view;

	snprintf(name, sizeof(name), "%s%s", other ? "*/" : "", m->name);
	bench_text(t, tool);
	bench_text(t, name);
	bench_num(t, m->opens);
	bench_num(t, m->reads);
	bench_num(t, m->bytes);
	bench_num(t, m->size);
	bench_text(t, mon_file_lock(m->name, maps_per_vma, &view));
	if (other)
		fprintf(t->f, " (%.0f processes)", m->pids);
	if (m->fails > 0)
		fprintf(t->f, " (%.2g failed open(s))", m->fails);
	bench_row_end(t);
}

static void print_obs(FILE *f, const struct mon_result *res)
{
	struct bench_table tb;

	fprintf(f, "#\n# what each tool read of /proc in one poll, observed under strace: the "
		   "mapper's files (task/: of its threads),\n# */: the same file of other processes "
		   "(those that take a lock), then all other processes' files together;\n# size: the "
		   "read() size asked for most; lock: what the kernel takes of that process's address "
		   "space\n");
	bench_table_start(&tb, f, file_columns, 0);
	for (unsigned int t = 0; t < res->nr_tools; t++) {
		const struct mon_obs *ob = &res->obs[t];

		if (res->tools[t].skip[0])
			continue;
		if (!ob->done) {
			fprintf(f, "%-16.16s not observed: %s\n", res->tools[t].name, ob->why);
			continue;
		}
		if (!ob->nr_mapper)
			fprintf(f, "%-16.16s %-18s (none of the mapper's files)\n", res->tools[t].name,
				"-");
		for (unsigned int i = 0; i < ob->nr_mapper; i++) {
			int view;

			mon_file_lock(ob->mapper[i].name, res->maps_per_vma, &view);
			/* not directories; a file only written (clear_refs) has no reads */
			if (ob->mapper[i].reads > 0 || ob->mapper[i].fails > 0 ||
			    (view == MON_VIEW_CLEAR_REFS && ob->mapper[i].opens > 0))
				print_file(&tb, res->tools[t].name, &ob->mapper[i],
					   res->maps_per_vma, false);
		}
		if (ob->nr_other) {
			double opens = 0, reads = 0, bytes = 0;

			for (unsigned int i = 0; i < ob->nr_other; i++) {
				int view;

				opens += ob->other[i].opens;
				reads += ob->other[i].reads;
				bytes += ob->other[i].bytes;
				mon_file_lock(ob->other[i].name, res->maps_per_vma, &view);
				if (view >= 0)
					print_file(&tb, res->tools[t].name, &ob->other[i],
						   res->maps_per_vma, true);
			}
			fprintf(f, "%-16.16s %-18s %6.0f %8.0f %10.0f %6s  all files of the %.0f other "
				"processes it read\n", res->tools[t].name, "*/ (all)", opens, reads,
				bytes, "", ob->other_pids);
		}
		if (ob->sys_reads)
			fprintf(f, "%-16.16s %-18s %6s %8.0f %10.0f %6s  none\n", res->tools[t].name,
				"/proc/ (system)", "", ob->sys_reads, ob->sys_bytes, "");
		if (ob->why[0])
			fprintf(f, "%-16.16s # %s\n", res->tools[t].name, ob->why);
	}
}

void mon_print(FILE *f, const struct bench_run *r)
{
	const struct mon_result *res = r->res;

	print_header(f, res);
	print_live(f, res);
	print_model(f, res);
	print_obs(f, res);
}

/* ---- JSON ---- */

static json_t *json_file(const struct mon_file *m, bool maps_per_vma, bool other)
{
	json_t *j = json_object();
	int view;

	json_set_str(j, "file", m->name);
	json_set_double(j, "opens", m->opens);
	json_set_double(j, "reads", m->reads);
	json_set_double(j, "bytes", m->bytes);
	json_set_u64(j, "read_size", m->size);
	json_set_double(j, "failed_opens", m->fails);
	json_set_str(j, "lock", mon_file_lock(m->name, maps_per_vma, &view));
	if (other)
		json_set_double(j, "processes", m->pids);
	return j;
}

static json_t *json_tool(const struct mon_result *res, unsigned int t)
{
	const struct mon_tool *tool = &res->tools[t];
	const struct mon_obs *ob = &res->obs[t];
	json_t *j = json_object();

	json_set_str(j, "name", tool->name);
	json_set_str(j, "command", tool->cmd);
	json_set_str(j, "kind", kind_name(tool->kind));
	json_set_bool(j, "builtin", tool->builtin);
	if (tool->package)
		json_set_str(j, "package", tool->package);
	if (tool->skip[0]) {
		json_set_str(j, "skipped", tool->skip);
		return j;
	}
	if (!ob->done) {
		json_set_new(j, "observed", json_null());
		json_set_str(j, "not_observed", ob->why);
	} else {
		json_t *o = json_object(), *mf = json_array(), *of = json_array(), *steps = json_array();

		json_set_double(o, "polls", ob->polls);
		json_set_double(o, "wall_ms_under_strace", ob->wall_ms);
		for (unsigned int i = 0; i < ob->nr_mapper; i++)
			json_push_new(mf, json_file(&ob->mapper[i], res->maps_per_vma, false));
		for (unsigned int i = 0; i < ob->nr_other; i++)
			json_push_new(of, json_file(&ob->other[i], res->maps_per_vma, true));
		json_set_new(o, "mapper_files", mf);
		json_set_new(o, "other_files", of);
		json_set_double(o, "other_processes", ob->other_pids);
		json_set_double(o, "proc_reads", ob->sys_reads);
		json_set_double(o, "proc_bytes", ob->sys_bytes);
		if (ob->why[0])
			json_set_str(o, "remark", ob->why);
		json_set_new(j, "observed", o);
		for (unsigned int i = 0; i < res->nr_steps[t]; i++) {
			const struct mon_step *s = &res->steps[t][i];
			json_t *st = json_object();

			json_set_str(st, "file", s->file);
			json_set_str(st, "view", s->view == MON_VIEW_HOLD ? "mmap_lock_hold" :
				     s->view == MON_VIEW_CLEAR_REFS ? "clear_refs" :
				     target_view_name((enum vml_view)s->view));
			json_set_double(st, "opens", s->opens);
			json_set_u64(st, "read_size", s->size);
			if (s->view == MON_VIEW_HOLD)
				json_set_double(st, "holds_per_open", s->reads);
			json_push_new(steps, st);
		}
		json_set_new(j, "replay", steps);
	}
	return j;
}

static json_t *json_prediction(const struct mon_result *res, int t);

static void json_row(json_t *doc, const struct mon_result *res, const struct mon_row *row)
{
	json_t *j = bench_doc_row(doc, target_kind_name(row->target)), *ps;

	if (row->tool < 0)
		json_set_new(j, "tool", json_null());
	else
		json_set_str(j, "tool", res->tools[row->tool].name);
	if (row->target == TARGET_MODEL && row->tool < 0)
		json_set_new(j, "lock", json_null());
	else
		json_set_str(j, "lock", mon_row_lock(row));
	json_set_double(j, "p50_us", row->p50_us);
	json_set_double(j, "p99_us", row->p99_us);
	json_set_double(j, "avg_us", row->avg_us);
	json_set_double(j, "max_us", row->max_us);
	json_set_double(j, "max_us_worst", row->max_worst_us);
	json_set_double(j, "ops", row->ops);
	json_set_double(j, "vmas", row->vmas);
	json_set_double(j, "polls", row->polls);
	json_set_double(j, "poll_ms", row->poll_ms);
	json_set_u64(j, "timeouts", row->timeouts);
	json_set_u64(j, "errors", row->errors);
	if (row->note)
		json_set_str(j, "note", row->note);
	if (row->target == TARGET_LIVE && row->tool >= 0) {
		json_t *p = json_prediction(res, row->tool);

		if (p)
			json_set_new(j, "prediction", p);
	}
	ps = bench_doc_samples(j, "per_sample");
	for (unsigned int i = 0; i < row->nr; i++) {
		const struct mon_sample *s = &row->s[i];
		json_t *o = json_object();

		json_set_double(o, "p50_us", s->p50_us);
		json_set_double(o, "p99_us", s->p99_us);
		json_set_double(o, "avg_us", s->avg_us);
		json_set_double(o, "max_us", s->max_us);
		json_set_u64(o, "ops", s->ops);
		json_set_u64(o, "vmas", s->vmas);
		if (res->o->layout)
			json_set_u64(o, "layout_vmas", s->layout_vmas);
		json_set_u64(o, "failed_calls", s->fails);
		json_set_u64(o, "polls", s->polls);
		json_set_double(o, "poll_ms", s->poll_ms);
		json_set_u64(o, "timeouts", s->timeouts);
		json_set_u64(o, "errors", s->errors);
		json_push_new(ps, o);
	}
}

static json_t *json_ratios(double p50, double p99, double avg, double max)
{
	json_t *j = json_object();

	json_set_double(j, "p50", p50);
	json_set_double(j, "p99", p99);
	json_set_double(j, "avg", avg);
	json_set_double(j, "max", max);
	return j;
}

/*
 * The prediction for tool @t (the seeds' per-VMA locks against today's
 * policy, applied to the live figures), or NULL: not observed.
 */
static json_t *json_prediction(const struct mon_result *res, int t)
{
	const struct mon_row *live = mon_find(res, t, TARGET_LIVE, 0);
	const struct mon_row *today, *vma;
	json_t *j;

	if (res->tools[t].skip[0] || !res->obs[t].done)
		return NULL;
	j = json_object();
	if (!res->nr_steps[t]) {
		json_set_new(j, "today_lock", json_null());
		json_set_new(j, "vma_over_today", json_ratios(1, 1, 1, 1));
		json_set_str(j, "why", "reads nothing that takes the mapper's locks");
		return j;
	}
	json_set_str(j, "today_lock", mon_lock_name(mon_today_lock(res, t)));
	json_set_bool(j, "policy_matters", mon_policy_matters(res, t));
	if (predict(res, t, &today, &vma)) {
		double r50 = ratio(vma->p50_us, today->p50_us);
		double r99 = ratio(vma->p99_us, today->p99_us);
		double ravg = ratio(vma->avg_us, today->avg_us);
		double rmax = ratio(vma->max_us, today->max_us);

		json_set_new(j, "vma_over_today", json_ratios(r50, r99, ravg, rmax));
		if (live)
			json_set_new(j, "predicted_live_us",
				     json_ratios(live->p50_us * r50, live->p99_us * r99,
						 live->avg_us * ravg, live->max_us * rmax));
	}
	return j;
}

void mon_json(json_t *doc, const struct bench_run *r)
{
	const struct mon_result *res = r->res;
	const struct mon_opts *o = res->o;
	json_t *meta = bench_doc_meta(doc), *tools = json_array();
	json_t *cal, *rec, *page, *call;

	json_set_double(meta, "duration_s", o->mapper.duration_s);
	json_set_double(meta, "interval_s", o->interval_s);
	json_set_new(meta, "layout", bench_layout_json(o->layout));
	json_set_double(meta, "tool_timeout_s", o->tool_timeout_s);
	json_set_u64(meta, "tool_nice", o->tool_nice);
	json_set_u64(meta, "mb", o->mapper.mb);
	json_set_u64(meta, "seed", o->mapper.seed);
	json_set_i64(meta, "mapper_cpu", res->mapper_cpu);
	json_set_i64(meta, "reader_cpu", res->reader_cpu);
	json_set_bool(meta, "maps_per_vma_lock", res->maps_per_vma);
	json_set_u64(meta, "observed_vmas", res->obs_vmas);
	json_set_double(meta, "cmdline_read_ns", res->hold_ns);
	for (unsigned int t = 0; t < res->nr_tools; t++)
		json_push_new(tools, json_tool(res, t));
	json_set_new(meta, "tools", tools);
	if (r->c->model) {
		/* the model readers' charges, per view a tool reads */
		cal = json_object();
		rec = json_object();
		page = json_object();
		call = json_object();
		for (int v = 0; v < MON_VIEWS; v++) {
			if (!res->record_ns[v] && !res->page_ns[v] && !res->call_ns[v] &&
			    !res->cal[v].done)
				continue;
			json_set_double(rec, target_view_name((enum vml_view)v), res->record_ns[v]);
			json_set_double(page, target_view_name((enum vml_view)v), res->page_ns[v]);
			json_set_double(call, target_view_name((enum vml_view)v), res->call_ns[v]);
		}
		json_set_new(cal, "record_ns", rec);
		json_set_new(cal, "page_ns", page);
		json_set_new(cal, "call_ns", call);
		bench_doc_set_calibration(doc, cal);
	}
	for (unsigned int k = 0; k < res->nr_rows; k++)
		if (res->rows[k].nr)
			json_row(doc, res, &res->rows[k]);
}

/* ---- the plot ---- */

/*
 * Two panels, one point per tool and series (live; model mmap; model vma;
 * predicted live under vma), as a multiple of the no-tool row: p99 on the
 * left, the median per-sample max on the right; log y, 1 = no effect.
 */
int mon_plot(struct bench_plot *p, const struct bench_run *r)
{
	const struct mon_result *res = r->res;
	const struct mon_row *lb = mon_find(res, -1, TARGET_LIVE, 0);
	const struct mon_row *mb = mon_find(res, -1, TARGET_MODEL, VML_LOCK_MMAP);
	unsigned int n = 0;
	FILE *d = p->data, *s = p->script;

	/* index tool live_p99 mmap_p99 vma_p99 pred_p99 live_max mmap_max vma_max pred_max; NaN: none */
	for (unsigned int t = 0; t < res->nr_tools; t++) {
		const struct mon_row *live = mon_find(res, (int)t, TARGET_LIVE, 0);
		const struct mon_row *mm = model_row(res, (int)t, VML_LOCK_MMAP);
		const struct mon_row *vm = model_row(res, (int)t, VML_LOCK_VMA);
		const struct mon_row *today, *vma;
		double p99[4] = { NAN, NAN, NAN, NAN }, mx[4] = { NAN, NAN, NAN, NAN };

		if (!live)
			continue;
		if (lb) {
			p99[0] = ratio(live->p99_us, lb->p99_us);
			mx[0] = ratio(live->max_us, lb->max_us);
		}
		if (mb && mm) {
			p99[1] = ratio(mm->p99_us, mb->p99_us);
			mx[1] = ratio(mm->max_us, mb->max_us);
		}
		if (mb && vm) {
			p99[2] = ratio(vm->p99_us, mb->p99_us);
			mx[2] = ratio(vm->max_us, mb->max_us);
		}
		if (res->obs[t].done && !res->nr_steps[t]) {
			p99[3] = p99[0];
			mx[3] = mx[0];
		} else if (predict(res, (int)t, &today, &vma)) {
			p99[3] = p99[0] * ratio(vma->p99_us, today->p99_us);
			mx[3] = mx[0] * ratio(vma->max_us, today->max_us);
		}
		fprintf(d, "%u \"", n++);
		for (const char *c = res->tools[t].name; *c; c++)
			fputc(*c == '"' || *c == '\\' ? '\'' : *c, d);
		fputc('"', d);
		for (int i = 0; i < 4; i++)
			fprintf(d, " %.6g", isfinite(p99[i]) ? p99[i] : NAN);
		for (int i = 0; i < 4; i++)
			fprintf(d, " %.6g", isfinite(mx[i]) ? mx[i] : NAN);
		fprintf(d, "\n");
	}
	if (!n)
		fprintf(d, "0 \"(none)\" 1 1 1 1 1 1 1 1\n");
	fprintf(s, "set datafile missing 'nan'\n");
	fprintf(s, "set multiplot layout 1,2 title 'bench monitor: the mapper''s mmap()/munmap() "
		   "latency with each tool, as a multiple of no tool (%lu MiB, %g s x %u samples, "
		   "poll every %g s, kernel %s)'\n", res->o->mapper.mb, res->o->mapper.duration_s,
		res->c->samples, res->o->interval_s, bench_kernel());
	fprintf(s, "set grid\nset logscale y\nset format y '%%g'\nset xrange [-0.5:%u.5]\n"
		   "set xtics rotate by -30\nset key outside bottom center horizontal font ',9'\n"
		   "set ylabel 'x no tool'\n",
		n ? n - 1 : 0);
	for (int panel = 0; panel < 2; panel++) {
		int c = panel ? 7 : 3;

		fprintf(s, "set title '%s'\n", panel ? "max (median of per-sample maxima)" : "p99");
		fprintf(s, "plot ");
		bench_plot_data(p);
		fprintf(s, " using 1:%d:xtic(2) with points pt 7 ps 1.6 lc rgb '#2ca02c' "
			   "title 'live kernel', '' using 1:%d with points pt 5 ps 1.2 lc rgb '#d62728' "
			   "title 'model, mmap', '' using 1:%d with points pt 9 ps 1.4 lc rgb '#1f77b4' "
			   "title 'model, vma', '' using 1:%d with points pt 6 ps 1.8 lc rgb '#000000' "
			   "title 'predicted live, vma', 1 with lines lc rgb '#888888' notitle\n",
			c, c + 1, c + 2, c + 3);
	}
	fprintf(s, "unset multiplot\n");
	return 0;
}
