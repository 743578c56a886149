// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * readcost.c - `vmalock bench read-cost`: what reading a whole /proc view
 * costs per VMA, against the number of VMAs, under each lock policy and on
 * the live kernel. The seeds' open question ("With many small VMAs, is that
 * overhead noticeable?") asks exactly this of the per-VMA-lock readers: the
 * vma policy takes and drops a VMA lock (and, for smaps, RCU) per VMA where
 * the mmap policy takes mmap_lock once per read() call.
 *
 * A layout of N VMAs: one region of N pages at 0x100000000000, every other
 * page mprotect()ed read-only so that no two neighbours merge. On the model
 * the mm's max_map_count is raised to fit N (1,000,000 works); the live
 * child stops at vm.max_map_count (65,530 by default, counting the
 * process's own ~20 mappings), and sizes beyond it are skipped.
 *
 * One sample: whole views read back to back, 4096 bytes per read(), until
 * at least 20 ms have passed; the sample is the elapsed time over the VMAs
 * read. Nothing else runs: this is the uncontended cost. The series (model
 * mmap, model vma, live) take their samples in turn.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host/host.h"
#include "internal.h"
#include "util/json.h"
#include "util/alloc.h"
#include "util/clock.h"

#define LAYOUT_BASE SCRIPT_RANGE_LO
#define PAGE_BYTES 4096UL
#define SAMPLE_MIN_NS (20 * NSEC_PER_MSEC)

enum { RC_MODEL_MMAP, RC_MODEL_VMA, RC_LIVE, RC_SERIES };

struct rc_opts {
	enum vml_view view;		/* --view */
	struct cli_ulist sizes;		/* --sizes: the layouts, in VMAs */
	bool populate;			/* --populate the layouts */
};

static const char *const series_name[RC_SERIES] = { "model:mmap", "model:vma", "live:kernel" };

struct rc_cell {
	bool wanted, done;
	const char *skipped;		/* why not measured */
	unsigned long vmas;		/* VMAs in the view read */
	double ns_per_vma;		/* median over samples */
	double *per_sample;
};

struct rc_row {
	unsigned long size;
	struct rc_cell c[RC_SERIES];
};

/* One layout call: on the model, or through the live target. */
struct layout_ctx {
	struct vml_mm *mm;
	struct target *t;
};

static int layout_call(struct layout_ctx *l, enum op_kind kind, unsigned long addr,
		       unsigned long len, int prot, int flags)
{
	struct op op = { .kind = kind, .addr = addr, .len = len, .prot = prot, .flags = flags,
			 .placement = OP_PLACE_NOREPLACE };
	struct op_result res;
	int ret;

	if (l->mm) {
		if (kind == OP_MMAP)
			return vml_mmap(l->mm, addr, len, prot, flags | MAP_FIXED_NOREPLACE, NULL,
					0, NULL);
		return vml_mprotect(l->mm, addr, len, prot);
	}
	ret = target_apply(l->t, &op, &res);
	return ret ? ret : res.ret;
}

/* N one-page VMAs, alternately rw- and r--; populated (written) if asked. */
static int build_layout(struct layout_ctx *l, unsigned long n, bool populate)
{
	int ret = layout_call(l, OP_MMAP, LAYOUT_BASE, n * PAGE_BYTES, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0));

	for (unsigned long i = 1; i < n && !ret; i += 2)
		ret = layout_call(l, OP_MPROTECT, LAYOUT_BASE + i * PAGE_BYTES, PAGE_BYTES,
				  PROT_READ, 0);
	return ret;
}

/* One sample: whole views read back to back for SAMPLE_MIN_NS; ns per VMA. */
static int sample(struct view_reader *vr, unsigned long vmas, double *out)
{
	return view_reader_ns_per_record(vr, vmas, SAMPLE_MIN_NS, out);
}

static long max_map_count(void)
{
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
	long v = 65530;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 65530;
		fclose(f);
	}
	return v;
}

/* One size: the model's and the live layouts side by side, and their readers. */
struct rc_env {
	struct vml_sys *sys;
	struct vml_mm *mm;
	struct target *t;
	struct view_reader vr[RC_SERIES];
	bool open[RC_SERIES];
};

static int model_setup(const struct bench_run *r, struct rc_env *e, struct rc_row *row)
{
	const struct rc_opts *o = r->opts;
	struct vml_sys_config cfg;
	struct layout_ctx l = { 0 };
	struct vml_mm_stats st;
	int ret = host_current_config(0, &cfg);

	if (ret)
		return ret;
	cfg.max_map_count = row->size + 16 > 65530 ? row->size + 16 : 65530;
	ret = vml_sys_create(&cfg, &e->sys);
	if (!ret)
		ret = vml_mm_create(e->sys, &e->mm);
	if (ret)
		return ret;
	bench_progress(r->c->quiet, "read-cost: model: laying out %lu VMAs ...", row->size);
	l.mm = e->mm;
	ret = build_layout(&l, row->size, o->populate);
	if (!ret)
		ret = vml_mm_stats(e->mm, &st);
	/* the model's readers under each policy */
	for (int s = RC_MODEL_MMAP; s <= RC_MODEL_VMA && !ret; s++) {
		if (!row->c[s].wanted)
			continue;
		row->c[s].vmas = st.map_count;
		ret = view_reader_open_model(&e->vr[s], e->mm, o->view,
					     s == RC_MODEL_MMAP ? VML_LOCK_MMAP : VML_LOCK_VMA);
		e->open[s] = !ret;
	}
	return ret;
}

static int live_setup(const struct bench_run *r, struct rc_env *e, struct rc_row *row)
{
	const struct rc_opts *o = r->opts;
	struct rc_cell *c = &row->c[RC_LIVE];
	struct layout_ctx l = { 0 };
	long limit = max_map_count(), base, n;
	int ret;

	if ((long)row->size > limit) {
		c->wanted = false;
		c->skipped = "over vm.max_map_count";
		return 0;
	}
	ret = target_create(TARGET_LIVE, NULL, &e->t);
	if (ret)
		return ret;
	base = bench_live_vma_count(target_pid(e->t));
	if (base < 0)
		return (int)base;
	/* the process's own mappings count too; keep two splits of headroom */
	n = (long)row->size;
	if (n > limit - base - 2)
		n = limit - base - 2;
	bench_progress(r->c->quiet, "read-cost: live: laying out %ld VMAs ...", n);
	l.t = e->t;
	ret = build_layout(&l, (unsigned long)n, o->populate);
	if (ret)
		return ret;
	n = bench_live_vma_count(target_pid(e->t));
	if (n < 0)
		return (int)n;
	c->vmas = (unsigned long)n;
	ret = view_reader_open_live(&e->vr[RC_LIVE], target_pid(e->t), o->view);
	e->open[RC_LIVE] = !ret;
	return ret;
}

static void env_teardown(struct rc_env *e)
{
	for (int s = 0; s < RC_SERIES; s++)
		if (e->open[s])
			view_reader_close(&e->vr[s]);
	vml_mm_destroy(e->mm);
	vml_sys_destroy(e->sys);
	target_destroy(e->t);
}

/*
 * One size: lay out both address spaces, then take the series' samples in
 * turn (model mmap, model vma, live, then again), so that a change in the
 * machine's load hits every series alike.
 */
static int run_size(const struct bench_run *r, struct rc_row *row)
{
	const struct bench_common *c = r->c;
	struct rc_env e = { 0 };
	const char *side = "model";
	int ret = 0;

	if (row->c[RC_MODEL_MMAP].wanted || row->c[RC_MODEL_VMA].wanted)
		ret = model_setup(r, &e, row);
	if (!ret && row->c[RC_LIVE].wanted) {
		side = "live";
		ret = live_setup(r, &e, row);
	}
	for (int s = 0; s < RC_SERIES && !ret; s++) {
		if (!e.open[s])
			continue;
		row->c[s].per_sample = vml_zalloc(c->samples * sizeof(double));
		if (!row->c[s].per_sample)
			ret = -ENOMEM;
	}
	for (unsigned int i = 0; i < c->samples && !ret; i++) {
		bench_progress(c->quiet, "read-cost: %lu VMAs, sample %u/%u", row->size, i + 1,
			       c->samples);
		for (int s = 0; s < RC_SERIES && !ret; s++) {
			if (!e.open[s])
				continue;
			side = s == RC_LIVE ? "live" : "model";
			ret = sample(&e.vr[s], row->c[s].vmas, &row->c[s].per_sample[i]);
		}
	}
	for (int s = 0; s < RC_SERIES && !ret; s++) {
		if (!e.open[s])
			continue;
		row->c[s].ns_per_vma = stat_median(row->c[s].per_sample, c->samples);
		row->c[s].done = true;
	}
	env_teardown(&e);
	if (ret)
		fprintf(stderr, "vmalock bench: read-cost: %s, %lu VMAs: %s\n", side, row->size,
			strerror(-ret));
	return ret;
}

static double ratio(const struct rc_cell *a, const struct rc_cell *b)
{
	return a->done && b->done && b->ns_per_vma > 0 ? a->ns_per_vma / b->ns_per_vma : NAN;
}

/* A size, then each series' VMAs read and ns per VMA, then their ratios. */
static const struct bench_col columns[] = {
	BENCH_NUM("size", 8, FIXED, 0),
	BENCH_NUM("vmas", 8, FIXED, 0), BENCH_NUM("mmap", 10, FIXED, 1),
	BENCH_NUM("vmas", 8, FIXED, 0), BENCH_NUM("vma", 10, FIXED, 1),
	BENCH_NUM("vmas", 8, FIXED, 0), BENCH_NUM("live", 10, FIXED, 1),
	BENCH_NUM("vma/mmap", 9, FIXED, 2), BENCH_NUM("mmap/live", 9, FIXED, 2),
	BENCH_NUM("vma/live", 9, FIXED, 2),
	BENCH_COLS_END,
};

/* What a run measured: a row per size. */
struct rc_result {
	struct rc_row *rows;
	unsigned int nr;
};

static void rc_print(FILE *f, const struct bench_run *r)
{
	const struct rc_opts *o = r->opts;
	const struct rc_result *res = r->res;
	struct bench_table t;

	fprintf(f, "# read-cost: view %s, read whole with 4096-byte read()s; time per VMA in ns, "
		"median of %u samples\n", bench_view_name(o->view), r->c->samples);
	fprintf(f, "# layouts of one-page VMAs, alternately rw- and r--%s; live: kernel %s, "
		"vm.max_map_count %ld\n", o->populate ? ", populated" : " (not populated)",
		bench_kernel(), max_map_count());
	fprintf(f, "# vma/mmap: the per-VMA-lock reader's cost over the mmap_lock reader's;\n"
		"# X/live: the model's cost over the live kernel's (per VMA)\n");
	bench_table_start(&t, f, columns, 0);
	for (unsigned int k = 0; k < res->nr; k++) {
		const struct rc_row *row = &res->rows[k];

		bench_num(&t, (double)row->size);
		for (int s = 0; s < RC_SERIES; s++) {
			bench_num(&t, row->c[s].done ? (double)row->c[s].vmas : NAN);
			bench_num(&t, row->c[s].done ? row->c[s].ns_per_vma : NAN);
		}
		bench_num(&t, ratio(&row->c[RC_MODEL_VMA], &row->c[RC_MODEL_MMAP]));
		bench_num(&t, ratio(&row->c[RC_MODEL_MMAP], &row->c[RC_LIVE]));
		bench_num(&t, ratio(&row->c[RC_MODEL_VMA], &row->c[RC_LIVE]));
		if (row->c[RC_LIVE].skipped && r->c->live)
			fprintf(f, "  (live: %s)", row->c[RC_LIVE].skipped);
		bench_row_end(&t);
	}
}

static void rc_json(json_t *doc, const struct bench_run *r)
{
	static const enum target_kind target[RC_SERIES] = { TARGET_MODEL, TARGET_MODEL,
							    TARGET_LIVE };
	static const enum vml_lock_policy lock[RC_SERIES] = { VML_LOCK_MMAP, VML_LOCK_VMA };
	const struct rc_opts *o = r->opts;
	const struct rc_result *res = r->res;
	json_t *meta = bench_doc_meta(doc);

	json_set_str(meta, "view", bench_view_name(o->view));
	json_set_bool(meta, "populate", o->populate);
	json_set_i64(meta, "max_map_count", max_map_count());
	for (unsigned int k = 0; k < res->nr; k++) {
		for (int s = 0; s < RC_SERIES; s++) {
			const struct rc_cell *c = &res->rows[k].c[s];
			json_t *row, *per;

			if (!c->done && !c->skipped)
				continue;
			row = bench_doc_row(doc, target_kind_name(target[s]));
			json_set_u64(row, "size", res->rows[k].size);
			json_set_str(row, "lock", words_policy_label(&lock_policy_vocab, target[s],
								     lock[s]));
			if (!c->done) {
				json_set_str(row, "skipped", c->skipped);
				continue;
			}
			json_set_u64(row, "vmas", c->vmas);
			json_set_double(row, "ns_per_vma", c->ns_per_vma);
			/* model rows: over the live kernel's cost, and vma over mmap */
			if (s != RC_LIVE)
				json_set_double(row, "over_live", ratio(c, &res->rows[k].c[RC_LIVE]));
			if (s == RC_MODEL_VMA)
				json_set_double(row, "over_mmap",
						ratio(c, &res->rows[k].c[RC_MODEL_MMAP]));
			per = bench_doc_samples(row, "per_sample");
			for (unsigned int i = 0; i < r->c->samples; i++)
				json_push_new(per, isfinite(c->per_sample[i]) ?
						   json_real(c->per_sample[i]) : json_null());
		}
	}
}

static int rc_plot(struct bench_plot *p, const struct bench_run *r)
{
	const struct rc_opts *o = r->opts;
	const struct rc_result *res = r->res;

	for (int k = 0; k < RC_SERIES; k++) {
		fprintf(p->data, "# %s\n", series_name[k]);
		for (unsigned int i = 0; i < res->nr; i++)
			if (res->rows[i].c[k].done)
				fprintf(p->data, "%lu %.3f\n", res->rows[i].c[k].vmas,
					res->rows[i].c[k].ns_per_vma);
		fprintf(p->data, "\n\n");
	}
	fprintf(p->script, "set title 'read-cost: reading /proc/PID/%s whole, per VMA (median of "
		"%u samples), kernel %s'\nset grid\nset logscale x\nset format x '%%g'\n"
		"set xlabel 'VMAs in the address space'\nset ylabel 'ns per VMA'\n"
		"set yrange [0:*]\nset key top left\nplot ", bench_view_name(o->view),
		r->c->samples, bench_kernel());
	for (int k = 0; k < RC_SERIES; k++) {
		fprintf(p->script, "%s", k ? ", " : "");
		bench_plot_data(p);
		fprintf(p->script, " index %d using 1:2 with linespoints lw 2 pt 7 title '%s'", k,
			series_name[k]);
	}
	fprintf(p->script, "\n");
	return 0;
}

static int rc_run(struct bench_run *r)
{
	const struct rc_opts *o = r->opts;
	unsigned int locks = bench_locks(r);
	struct rc_result *res = vml_zalloc(sizeof(*res));
	int ret = 0;

	if (res)
		res->rows = vml_zalloc(o->sizes.nr * sizeof(*res->rows));
	r->res = res;
	if (!res || !res->rows) {
		fprintf(stderr, "vmalock bench: read-cost: out of memory\n");
		return -ENOMEM;
	}
	for (unsigned int k = 0; k < o->sizes.nr && !ret; k++) {
		struct rc_row *row = &res->rows[res->nr++];

		row->size = o->sizes.v[k];
		row->c[RC_MODEL_MMAP].wanted = r->c->model && (locks & VOCAB_BIT(VML_LOCK_MMAP));
		row->c[RC_MODEL_VMA].wanted = r->c->model && (locks & VOCAB_BIT(VML_LOCK_VMA));
		row->c[RC_LIVE].wanted = r->c->live;
		ret = run_size(r, row);
	}
	bench_progress_done(r->c->quiet);
	return ret;
}

static void rc_free(struct bench_run *r)
{
	struct rc_result *res = r->res;

	if (!res)
		return;
	for (unsigned int k = 0; k < res->nr; k++)
		for (int s = 0; s < RC_SERIES; s++)
			vml_free(res->rows[k].c[s].per_sample);
	vml_free(res->rows);
	vml_free(res);
}

static void rc_defaults(void *opts)
{
	struct rc_opts *o = opts;

	*o = (struct rc_opts){
		.view = VML_VIEW_MAPS,
		.sizes = { .v = { 1000, 10000, 65530, 1000000 }, .nr = 4 },
	};
}

#define R(f) offsetof(struct rc_opts, f)
static const struct cli_opt rc_opts_table[] = {
	{ "--view", "VIEW", cli_set_view, R(view), 0, 0, NULL,
	  "maps, smaps, smaps_rollup, numa_maps or query: the view read\n"
	  "[maps]" },
	{ "--sizes", "N[,N...]", cli_set_ulist, R(sizes), 1, 100000000, NULL,
	  "layouts in VMAs (k/M suffixes) [1k,10k,65530,1M]; live is\n"
	  "capped at vm.max_map_count and skips larger sizes" },
	{ "--populate", NULL, cli_set_flag, R(populate), 0, 0, NULL,
	  "fault in every page of the layouts" },
	CLI_OPT_END,
};
#undef R

const struct bench_scenario bench_read_cost = {
	.name = "read-cost",
	.question = "What does reading a whole view cost per VMA, as the number of VMAs grows, "
		    "under each policy?",
	.rows = "a layout size: ns per VMA of a whole read, model under each policy and the "
		"live kernel, and their ratios",
	.about = "1k, 10k, 65,530 small VMAs (and 1M on the model), read back to back with\n"
		 "nothing else running: the uncontended cost.",
	.opts = rc_opts_table,
	.opts_size = sizeof(struct rc_opts),
	.defaults = rc_defaults,
	.locks = VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA),
	.default_locks = VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA),
	.run = rc_run,
	.print = rc_print,
	.json = rc_json,
	.plot = rc_plot,
	.free = rc_free,
};
