// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ops.c - `vmalock bench ops`: what one operation costs on the model
 * against the same system call on the live kernel, measured in one run.
 *
 *   mmap+munmap        map one rw private anonymous page (MAP_FIXED_NOREPLACE
 *                      in an empty range) and unmap it
 *   mprotect           make the middle page of a 3-page rw VMA read-only
 *   split+merge        (a split into three) and back (a merge into one)
 *   write fault        write one byte to a fresh page of an unpopulated rw
 *                      region: one anonymous fault allocating a page
 *   maps read/VMA      read the whole maps of an address space with N small
 *                      VMAs (4096-byte read()s), divided by its VMAs
 *
 * Live: the first three run in vmalock-child, each iteration timed there
 * with CLOCK_MONOTONIC (CHILD_TIMED_LOOP), so the request's round trip is
 * not counted; maps is read by this process from /proc/<child>/maps, as any
 * reader would. Model: the same calls on a vml_mm in this process.
 * One sample = --iterations iterations (their median); the figure is the
 * median over --samples samples; the two sides take their samples in turn.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "host/host.h"
#include "internal.h"
#include "util/json.h"
#include "util/alloc.h"
#include "util/clock.h"

#define PAGE_BYTES 4096UL
#define ADDR_MMAP (SCRIPT_RANGE_LO)			/* the page mapped and unmapped */
#define ADDR_MPROTECT (SCRIPT_RANGE_LO + 0x10000000UL)	/* the 3-page VMA */
#define ADDR_FAULT (SCRIPT_RANGE_LO + 0x100000000UL)	/* the region faulted in */
#define ADDR_LAYOUT (SCRIPT_RANGE_LO + 0x1000000000UL)	/* the maps layout */
#define MAPS_SAMPLE_MIN_NS (10 * NSEC_PER_MSEC)

enum ops_row {
	OPS_MMAP_MUNMAP,
	OPS_MPROTECT,
	OPS_WRITE_FAULT,
	OPS_MAPS_MMAP,		/* model: mmap lock policy */
	OPS_MAPS_VMA,		/* model: vma lock policy */
	OPS_NR,
};

struct ops_opts {
	unsigned long iterations;	/* --iterations per sample */
	unsigned long vmas;		/* --vmas in the maps-read layout */
};

static const struct {
	const char *name;	/* JSON; the maps rows add their policy: _mmap */
	const char *label;	/* table; the maps rows add it: (mmap) */
	enum vml_lock_policy lock;	/* the maps rows' */
} ops_rows[OPS_NR] = {
	{ "mmap_munmap", "mmap+munmap (1 page)", 0 },
	{ "mprotect_split_merge", "mprotect split+merge", 0 },
	{ "write_fault", "write fault (1 page)", 0 },
	{ "maps_read_per_vma", "maps read per VMA", VML_LOCK_MMAP },
	{ "maps_read_per_vma", "maps read per VMA", VML_LOCK_VMA },
};

/* Row @k's JSON name, or (@label) its table label. */
static const char *op_name(int k, bool label, char *buf, size_t len)
{
	const char *base = label ? ops_rows[k].label : ops_rows[k].name;

	if (k < OPS_MAPS_MMAP)
		return base;
	snprintf(buf, len, label ? "%s (%s)" : "%s_%s", base,
		 vocab_name(&lock_policy_vocab, ops_rows[k].lock));
	return buf;
}

struct ops_side {
	double *per_sample;	/* ns per op */
	double median;
	bool done;
};

struct ops_result {
	struct ops_side model[OPS_NR], live[OPS_NR];
	unsigned long model_vmas, live_vmas;
};

/* The calls of one iteration, on the model. */
static int model_iter(struct vml_mm *mm, enum ops_row op, unsigned long i)
{
	int ret;

	switch (op) {
	case OPS_MMAP_MUNMAP:
		ret = vml_mmap(mm, ADDR_MMAP, PAGE_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, NULL, 0, NULL);
		return ret ? ret : vml_munmap(mm, ADDR_MMAP, PAGE_BYTES);
	case OPS_MPROTECT:
		ret = vml_mprotect(mm, ADDR_MPROTECT + PAGE_BYTES, PAGE_BYTES, PROT_READ);
		return ret ? ret : vml_mprotect(mm, ADDR_MPROTECT + PAGE_BYTES, PAGE_BYTES,
						PROT_READ | PROT_WRITE);
	case OPS_WRITE_FAULT:
		return vml_touch(mm, ADDR_FAULT + i * PAGE_BYTES, PAGE_BYTES, VML_TOUCH_WRITE);
	default:
		return -EINVAL;
	}
}

/* A fresh unpopulated rw region for the write faults of one sample. */
static int model_fault_region(struct vml_mm *mm, const struct ops_opts *o, bool map)
{
	if (!map)
		return vml_munmap(mm, ADDR_FAULT, o->iterations * PAGE_BYTES);
	return vml_mmap(mm, ADDR_FAULT, o->iterations * PAGE_BYTES, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, NULL, 0, NULL);
}

static int live_fault_region(struct target *t, const struct ops_opts *o, bool map)
{
	struct op op = { .kind = map ? OP_MMAP : OP_MUNMAP, .addr = ADDR_FAULT,
			 .len = o->iterations * PAGE_BYTES, .prot = PROT_READ | PROT_WRITE,
			 .flags = MAP_PRIVATE | MAP_ANONYMOUS, .placement = OP_PLACE_NOREPLACE };
	struct op_result res;
	int ret = target_apply(t, &op, &res);

	return ret ? ret : res.ret;
}

static int side_alloc(struct ops_side *s, unsigned int samples)
{
	s->per_sample = vml_zalloc(samples * sizeof(double));
	return s->per_sample ? 0 : -ENOMEM;
}

static void side_done(struct ops_side *s, unsigned int samples)
{
	s->median = stat_median(s->per_sample, samples);
	s->done = true;
}

/* A layout of @n one-page VMAs, alternately rw- and r--: on @mm, or on the live @t. */
static int layout(struct vml_mm *mm, struct target *t, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		int prot = i % 2 ? PROT_READ : PROT_READ | PROT_WRITE;
		unsigned long a = ADDR_LAYOUT + i * PAGE_BYTES;
		struct op op = { .kind = OP_MMAP, .addr = a, .len = PAGE_BYTES, .prot = prot,
				 .flags = MAP_PRIVATE | MAP_ANONYMOUS,
				 .placement = OP_PLACE_NOREPLACE };
		struct op_result res;
		int ret;

		if (mm)
			ret = vml_mmap(mm, a, PAGE_BYTES, prot,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, NULL, 0,
				       NULL);
		else if (!(ret = target_apply(t, &op, &res)))
			ret = res.ret;
		if (ret)
			return ret;
	}
	return 0;
}

/* Whole views read until MAPS_SAMPLE_MIN_NS passed: ns per VMA. */
static int maps_sample(struct view_reader *vr, unsigned long vmas, double *out)
{
	return view_reader_ns_per_record(vr, vmas, MAPS_SAMPLE_MIN_NS, out);
}

/* Both sides' state: one model address space and one live child, side by side. */
struct ops_env {
	const struct ops_opts *o;
	const struct bench_common *c;
	unsigned int locks;		/* the model's maps readers' policies */
	struct vml_sys *sys;		/* model */
	struct vml_mm *mm;
	struct lat_hist *h;
	struct view_reader mvr[2];	/* model maps readers: [0] mmap, [1] vma */
	bool mvr_open[2];
	struct target *t;		/* live */
	struct child_lat_rep *rep;
	struct view_reader lvr;
	bool lvr_open;
};

static int model_setup(struct ops_env *e)
{
	struct vml_sys_config cfg;	/* this host's (or --profile's) */
	int ret = host_current_config(0, &cfg);

	if (ret)
		return ret;
	e->h = lat_hist_new();
	if (!e->h)
		return -ENOMEM;
	ret = vml_sys_create(&cfg, &e->sys);
	if (ret)
		return ret;
	ret = vml_mm_create(e->sys, &e->mm);
	if (ret)
		return ret;
	return vml_mmap(e->mm, ADDR_MPROTECT, 3 * PAGE_BYTES, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, NULL, 0, NULL);
}

static int live_setup(struct ops_env *e)
{
	struct op op = { .kind = OP_MMAP, .addr = ADDR_MPROTECT, .len = 3 * PAGE_BYTES,
			 .prot = PROT_READ | PROT_WRITE, .flags = MAP_PRIVATE | MAP_ANONYMOUS,
			 .placement = OP_PLACE_NOREPLACE };
	struct op_result res;
	int ret;

	e->rep = vml_malloc(sizeof(*e->rep));
	if (!e->rep)
		return -ENOMEM;
	ret = target_create(TARGET_LIVE, NULL, &e->t);
	if (!ret)
		ret = target_apply(e->t, &op, &res);
	return ret ? ret : res.ret;
}

/* One sample of @op on the model: the median of --iterations timed iterations. */
static int model_op_sample(struct ops_env *e, enum ops_row op, double *out)
{
	int ret = 0;

	if (op == OPS_WRITE_FAULT)
		ret = model_fault_region(e->mm, e->o, true);
	lat_hist_init(e->h);
	for (unsigned long i = 0; i < e->o->iterations && !ret; i++) {
		uint64_t t0 = vml_now_ns();

		ret = model_iter(e->mm, op, i);
		lat_hist_record(e->h, vml_now_ns() - t0);
	}
	if (!ret && op == OPS_WRITE_FAULT)
		ret = model_fault_region(e->mm, e->o, false);
	*out = lat_hist_quantile_ns(e->h, 0.5);
	return ret;
}

/* The same on the live kernel, timed inside the child. */
static int live_op_sample(struct ops_env *e, enum ops_row op, double *out)
{
	static const enum child_loop_op loop_op[] = {
		[OPS_MMAP_MUNMAP] = CHILD_LOOP_MMAP_MUNMAP,
		[OPS_MPROTECT] = CHILD_LOOP_MPROTECT_SPLIT_MERGE,
		[OPS_WRITE_FAULT] = CHILD_LOOP_WRITE_FAULT,
	};
	static const unsigned long loop_addr[] = {
		[OPS_MMAP_MUNMAP] = ADDR_MMAP,
		[OPS_MPROTECT] = ADDR_MPROTECT,
		[OPS_WRITE_FAULT] = ADDR_FAULT,
	};
	int ret = 0;

	if (op == OPS_WRITE_FAULT)
		ret = live_fault_region(e->t, e->o, true);
	if (!ret)
		ret = target_live_timed_loop(e->t, loop_op[op], loop_addr[op], e->o->iterations,
					     e->rep);
	if (!ret && op == OPS_WRITE_FAULT)
		ret = live_fault_region(e->t, e->o, false);
	*out = lat_hist_quantile_ns(&e->rep->hist, 0.5);
	return ret;
}

static int model_maps_setup(struct ops_env *e, struct ops_result *r)
{
	struct vml_mm_stats st;
	int ret = layout(e->mm, NULL, e->o->vmas);

	if (!ret)
		ret = vml_mm_stats(e->mm, &st);
	if (ret)
		return ret;
	r->model_vmas = st.map_count;
	for (int p = 0; p < 2; p++) {
		if (!(e->locks & VOCAB_BIT(ops_rows[OPS_MAPS_MMAP + p].lock)))
			continue;
		ret = view_reader_open_model(&e->mvr[p], e->mm, VML_VIEW_MAPS,
					     ops_rows[OPS_MAPS_MMAP + p].lock);
		if (ret)
			return ret;
		e->mvr_open[p] = true;
	}
	return 0;
}

static int live_maps_setup(struct ops_env *e, struct ops_result *r)
{
	long n;
	int ret = layout(NULL, e->t, e->o->vmas);

	if (ret)
		return ret;
	n = bench_live_vma_count(target_pid(e->t));
	if (n < 0)
		return (int)n;
	r->live_vmas = (unsigned long)n;
	ret = view_reader_open_live(&e->lvr, target_pid(e->t), VML_VIEW_MAPS);
	e->lvr_open = !ret;
	return ret;
}

static void env_teardown(struct ops_env *e)
{
	for (int p = 0; p < 2; p++)
		if (e->mvr_open[p])
			view_reader_close(&e->mvr[p]);
	if (e->lvr_open)
		view_reader_close(&e->lvr);
	vml_mm_destroy(e->mm);
	vml_sys_destroy(e->sys);
	vml_free(e->h);
	target_destroy(e->t);
	vml_free(e->rep);
}

/*
 * Both sides take their samples in turn (model, live, model, live, ...),
 * so that a change in the machine's load hits both alike.
 * Return: 0, or -errno with *@side naming the side that failed.
 */
static int run(struct ops_env *e, struct ops_result *r, const char **side)
{
	const struct ops_opts *o = e->o;
	const struct bench_common *c = e->c;
	int ret = 0;

	for (int op = OPS_MMAP_MUNMAP; op <= OPS_WRITE_FAULT; op++) {
		if ((c->model && (ret = side_alloc(&r->model[op], c->samples))) ||
		    (c->live && (ret = side_alloc(&r->live[op], c->samples))))
			return ret;
		for (unsigned int s = 0; s < c->samples; s++) {
			bench_progress(c->quiet, "ops: %s, sample %u/%u", ops_rows[op].label, s + 1,
				       c->samples);
			*side = "model";
			if (c->model && (ret = model_op_sample(e, op, &r->model[op].per_sample[s])))
				return ret;
			*side = "live";
			if (c->live && (ret = live_op_sample(e, op, &r->live[op].per_sample[s])))
				return ret;
		}
		if (c->model)
			side_done(&r->model[op], c->samples);
		if (c->live)
			side_done(&r->live[op], c->samples);
	}

	bench_progress(c->quiet, "ops: laying out %lu VMAs", o->vmas);
	*side = "model";
	if (c->model && (ret = model_maps_setup(e, r)))
		return ret;
	*side = "live";
	if (c->live && (ret = live_maps_setup(e, r)))
		return ret;
	for (int k = OPS_MAPS_MMAP; k <= OPS_MAPS_VMA; k++) {
		if ((e->mvr_open[k - OPS_MAPS_MMAP] &&
		     (ret = side_alloc(&r->model[k], c->samples))))
			return ret;
	}
	if (c->live && (ret = side_alloc(&r->live[OPS_MAPS_VMA], c->samples)))
		return ret;
	for (unsigned int s = 0; s < c->samples; s++) {
		bench_progress(c->quiet, "ops: maps read, sample %u/%u", s + 1, c->samples);
		*side = "model";
		for (int p = 0; p < 2; p++)
			if (e->mvr_open[p] && (ret = maps_sample(&e->mvr[p], r->model_vmas,
						&r->model[OPS_MAPS_MMAP + p].per_sample[s])))
				return ret;
		*side = "live";
		if (c->live && (ret = maps_sample(&e->lvr, r->live_vmas,
						  &r->live[OPS_MAPS_VMA].per_sample[s])))
			return ret;
	}
	for (int p = 0; p < 2; p++)
		if (e->mvr_open[p])
			side_done(&r->model[OPS_MAPS_MMAP + p], c->samples);
	if (c->live) {
		/* one live figure, the kernel's policy: both model rows compare with it */
		side_done(&r->live[OPS_MAPS_VMA], c->samples);
		r->live[OPS_MAPS_MMAP] = r->live[OPS_MAPS_VMA];
		r->live[OPS_MAPS_MMAP].per_sample = NULL;
	}
	return 0;
}

static double side_ratio(const struct ops_side *a, const struct ops_side *b)
{
	return a->done && b->done && b->median > 0 ? a->median / b->median : NAN;
}

static const struct bench_col columns[] = {
	BENCH_TEXT("op", -26), BENCH_NUM("model_ns", 12, FIXED, 1),
	BENCH_NUM("live_ns", 12, FIXED, 1), BENCH_NUM("model/live", 11, FIXED, 2),
	BENCH_COLS_END,
};

static void ops_print(FILE *f, const struct bench_run *br)
{
	const struct ops_opts *o = br->opts;
	const struct ops_result *r = br->res;
	struct bench_table t;
	char buf[64];

	fprintf(f, "# ops: ns per operation, median of %u samples (each the median of %lu "
		"iterations)\n", br->c->samples, o->iterations);
	fprintf(f, "# live: timed inside vmalock-child (kernel %s); maps: whole reads of %lu "
		"(model) / %lu (live) VMAs,\n# per VMA; the live kernel reads maps under "
		"per-VMA locks (6.17+)\n", bench_kernel(), r->model_vmas, r->live_vmas);
	bench_table_start(&t, f, columns, 0);
	for (int k = 0; k < OPS_NR; k++) {
		const struct ops_side *m = &r->model[k], *l = &r->live[k];

		if (!m->done && !l->done)
			continue;
		bench_text(&t, op_name(k, true, buf, sizeof(buf)));
		bench_num(&t, m->done ? m->median : NAN);
		bench_num(&t, l->done ? l->median : NAN);
		bench_num(&t, side_ratio(m, l));
		bench_row_end(&t);
	}
}

static void json_side(json_t *row, const char *key, const struct ops_side *s,
		      unsigned int samples)
{
	char name[64];
	json_t *per;

	snprintf(name, sizeof(name), "%s_ns", key);
	json_set_double(row, name, s->done ? s->median : NAN);
	if (!s->done || !s->per_sample)
		return;
	per = json_array();
	for (unsigned int i = 0; i < samples; i++)
		json_push_new(per, isfinite(s->per_sample[i]) ? json_real(s->per_sample[i]) :
								 json_null());
	snprintf(name, sizeof(name), "%s_per_sample", key);
	json_set_new(row, name, per);
}

static void ops_json(json_t *doc, const struct bench_run *br)
{
	const struct ops_opts *o = br->opts;
	const struct ops_result *r = br->res;
	json_t *meta = bench_doc_meta(doc);
	char buf[64];

	json_set_u64(meta, "iterations", o->iterations);
	json_set_u64(meta, "model_vmas", r->model_vmas);
	json_set_u64(meta, "live_vmas", r->live_vmas);
	for (int k = 0; k < OPS_NR; k++) {
		json_t *row;

		if (!r->model[k].done && !r->live[k].done)
			continue;
		row = bench_doc_row(doc, NULL);	/* an op's row is both targets' */
		json_set_str(row, "op", op_name(k, false, buf, sizeof(buf)));
		json_side(row, "model", &r->model[k], br->c->samples);
		json_side(row, "live", &r->live[k], br->c->samples);
		json_set_double(row, "model_over_live", side_ratio(&r->model[k], &r->live[k]));
	}
}

static int ops_run(struct bench_run *br)
{
	struct ops_result *r = vml_zalloc(sizeof(*r));
	struct ops_env e = { .o = br->opts, .c = br->c, .locks = bench_locks(br) };
	const char *side = "model";
	int ret;

	br->res = r;
	if (!r) {
		fprintf(stderr, "vmalock bench: ops: out of memory\n");
		return -ENOMEM;
	}
	ret = br->c->model ? model_setup(&e) : 0;
	if (!ret && br->c->live) {
		side = "live";
		ret = live_setup(&e);
	}
	if (!ret)
		ret = run(&e, r, &side);
	env_teardown(&e);
	bench_progress_done(br->c->quiet);
	if (ret)
		fprintf(stderr, "vmalock bench: ops: %s: %s\n", side, strerror(-ret));
	return ret;
}

static void ops_free(struct bench_run *br)
{
	struct ops_result *r = br->res;

	for (int k = 0; r && k < OPS_NR; k++) {
		vml_free(r->model[k].per_sample);
		vml_free(r->live[k].per_sample);
	}
	vml_free(r);
}

static void ops_defaults(void *opts)
{
	struct ops_opts *o = opts;

	*o = (struct ops_opts){ .iterations = 1000, .vmas = 1000 };
}

static const struct cli_opt ops_opts_table[] = {
	{ "--iterations", "N", cli_set_ulong, offsetof(struct ops_opts, iterations), 1, 10000000,
	  NULL, "timed iterations per sample [1000]" },
	{ "--vmas", "N", cli_set_ulong, offsetof(struct ops_opts, vmas), 1, 60000, NULL,
	  "VMAs in the layout whose maps is read [1000]" },
	CLI_OPT_END,
};

const struct bench_scenario bench_ops = {
	.name = "ops",
	.question = "What does one mmap+munmap, mprotect split+merge, write fault, maps line "
		    "cost on the model, against the live kernel?",
	.rows = "an operation: ns on the model and in a live process (the same system calls), "
		"and their ratio",
	.opts = ops_opts_table,
	.opts_size = sizeof(struct ops_opts),
	.defaults = ops_defaults,
	.locks = VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA),
	.default_locks = VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA),
	.run = ops_run,
	.print = ops_print,
	.json = ops_json,
	.free = ops_free,
};
