// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rollup.c - `vmalock bench rollup`: what the incremental smaps_rollup
 * (VML_ROLLUP_INCREMENTAL, mm/rollup.c) costs the writers and saves the
 * reader, on the model (the live kernel has no incremental rollup).
 *
 * Write side: one operation timed on two address spaces alike but for the
 * rollup mode (walk: the kernel's; incremental: the sums kept):
 *   fault       a write fault allocating a page in an unpopulated region
 *   cow fault   a write to a page the parent shares with a forked child
 *   munmap      unmap one populated page (the first of a populated VMA)
 *   fork        fork of a process with --fork-pages populated pages
 *   pageout     MADV_PAGEOUT of one populated anonymous page (to swap)
 * One sample = --iterations timed calls (fork: a tenth of them); a row is
 * the median over --samples samples of each sample's median, and the p99
 * over every call; the two modes take their samples in turn. The overhead
 * is (incremental median / walk median - 1) in percent.
 *
 * Read side: one whole smaps_rollup read (open, read, close) of an address
 * space of 1000 one-page VMAs, of 65530 (the default max_map_count), of
 * one anonymous VMA of --mb MiB, each VMA's pages populated, and of one
 * shared mapping of a --mb MiB file, read in: file pages are volatile (any
 * process may map them), so there the incremental read counts every table
 * again - the case the design does not make O(1). Median over samples of
 * the median of --reads reads.
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
#define ADDR_REGION (SCRIPT_RANGE_LO)
#define ADDR_FORK (SCRIPT_RANGE_LO + 0x100000000UL)
#define ADDR_LAYOUT (SCRIPT_RANGE_LO + 0x1000000000UL)

enum ru_write {
	RU_FAULT,
	RU_COW,
	RU_MUNMAP,
	RU_FORK,
	RU_PAGEOUT,
	RU_NR_WRITE,
};

enum ru_read {
	RU_READ_1K,
	RU_READ_MAX,
	RU_READ_LARGE,
	RU_READ_FILE,
	RU_NR_READ,
};

static const char *const write_names[RU_NR_WRITE] = {
	"fault", "cow_fault", "munmap", "fork", "pageout",
};
static const char *const read_names[RU_NR_READ] = {
	"read_1000_vmas", "read_65530_vmas", "read_large", "read_large_file",
};

struct ru_opts {
	unsigned long iterations;
	unsigned long reads;
	unsigned long fork_pages;
	unsigned long mb;
	unsigned long max_vmas;
};

/* One row, one mode: each sample's median, and every call's latency. */
struct ru_side {
	double *per_sample;
	struct lat_hist *all;
	double median, p99;
};

struct ru_result {
	struct ru_side w[RU_NR_WRITE][2];	/* [op][mode: 0 walk, 1 incremental] */
	struct ru_side r[RU_NR_READ][2];
	unsigned long vmas[RU_NR_READ];
};

/* A system in @mode with this host's settings and room in swap. */
static int make_mm(enum vml_rollup_mode mode, unsigned long swap_pages, struct vml_sys **sys,
		   struct vml_mm **mm)
{
	struct vml_sys_config cfg;
	int ret = host_current_config(0, &cfg);

	if (ret)
		return ret;
	cfg.rollup = mode;
	cfg.swap_pages = swap_pages;
	cfg.thp = VML_THP_NEVER;	/* one page per fault, whatever the host says */
	ret = vml_sys_create(&cfg, sys);
	if (!ret)
		ret = vml_mm_create(*sys, mm);
	return ret;
}

static int populated(struct vml_mm *mm, unsigned long addr, unsigned long pages)
{
	int ret = vml_mmap(mm, addr, pages * PAGE_BYTES, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, NULL, 0, NULL);

	return ret ? ret : vml_touch(mm, addr, pages * PAGE_BYTES, VML_TOUCH_WRITE);
}

/* One sample of write op @op on @mm: *@med the median call, every call into @all. */
static int write_sample(struct vml_mm *mm, enum ru_write op, const struct ru_opts *o,
			struct lat_hist *h, struct lat_hist *all, double *med)
{
	unsigned long n = op == RU_FORK ? VML_MAX(o->iterations / 10, 1UL) : o->iterations;
	struct vml_mm *child = NULL;
	int ret = 0;

	if (op == RU_FAULT)
		ret = vml_mmap(mm, ADDR_REGION, n * PAGE_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, NULL, 0, NULL);
	else if (op != RU_FORK)
		ret = populated(mm, ADDR_REGION, n);
	if (!ret && op == RU_COW)
		ret = vml_fork(mm, &child);
	lat_hist_init(h);
	for (unsigned long i = 0; i < n && !ret; i++) {
		unsigned long a = ADDR_REGION + i * PAGE_BYTES;
		struct vml_mm *c = NULL;
		uint64_t t0 = vml_now_ns(), dt;

		switch (op) {
		case RU_FAULT:
		case RU_COW:
			ret = vml_touch(mm, a, PAGE_BYTES, VML_TOUCH_WRITE);
			break;
		case RU_MUNMAP:
			ret = vml_munmap(mm, a, PAGE_BYTES);
			break;
		case RU_FORK:
			ret = vml_fork(mm, &c);
			break;
		case RU_PAGEOUT:
			ret = vml_madvise(mm, a, PAGE_BYTES, MADV_PAGEOUT);
			break;
		default:
			ret = -EINVAL;
		}
		dt = vml_now_ns() - t0;
		lat_hist_record(h, dt);
		lat_hist_record(all, dt);
		vml_mm_destroy(c);
	}
	vml_mm_destroy(child);
	if (!ret && op != RU_FORK)
		ret = vml_munmap(mm, ADDR_REGION, n * PAGE_BYTES);
	*med = lat_hist_quantile_ns(h, 0.5);
	return ret;
}

/* The read rows' layouts: @n one-page VMAs (alternately rw- and r--, so none merge), populated. */
static int read_layout(struct vml_sys *sys, struct vml_mm *mm, enum ru_read k,
		       const struct ru_opts *o, unsigned long *vmas)
{
	unsigned long n = k == RU_READ_1K ? 1000 : o->max_vmas;
	struct vml_mm_stats st;
	int ret = 0;

	if (k == RU_READ_FILE) {
		struct vml_file *f;

		ret = vml_file_create(sys, "/tmp/rollup-bench", o->mb << 20, 0, &f);
		if (ret)
			return ret;
		ret = vml_mmap(mm, ADDR_LAYOUT, o->mb << 20, PROT_READ, MAP_SHARED |
			       MAP_FIXED_NOREPLACE, f, 0, NULL);
		vml_file_put(f);	/* the mapping holds its own reference */
		if (!ret)
			ret = vml_touch(mm, ADDR_LAYOUT, o->mb << 20, VML_TOUCH_READ);
	} else if (k == RU_READ_LARGE) {
		/* noreserve: one mapping beyond RAM passes the overcommit heuristic (200 GiB) */
		ret = vml_mmap(mm, ADDR_LAYOUT, o->mb << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
			       NULL, 0, NULL);
		if (!ret)
			ret = vml_touch(mm, ADDR_LAYOUT, o->mb << 20, VML_TOUCH_WRITE);
	} else {
		for (unsigned long i = 0; i < n && !ret; i++) {
			unsigned long a = ADDR_LAYOUT + 2 * i * PAGE_BYTES;

			ret = populated(mm, a, 1);
		}
	}
	if (!ret)
		ret = vml_mm_stats(mm, &st);
	if (!ret)
		*vmas = st.map_count;
	return ret;
}

static int read_once(struct vml_mm *mm, char *buf, size_t len)
{
	struct vml_reader *r;
	ssize_t n;
	int ret = vml_reader_open(mm, VML_VIEW_SMAPS_ROLLUP, VML_LOCK_VMA, &r);

	if (ret)
		return ret;
	/* Ends: the rollup is one record; each read() returns part of it, then 0. */
	while ((n = vml_reader_read(r, buf, len)) > 0)
		;
	vml_reader_close(r);
	return n < 0 ? (int)n : 0;
}

static int read_sample(struct vml_mm *mm, const struct ru_opts *o, struct lat_hist *h,
		       struct lat_hist *all, double *med)
{
	char buf[4096];
	int ret = 0;

	lat_hist_init(h);
	for (unsigned long i = 0; i < o->reads && !ret; i++) {
		uint64_t t0 = vml_now_ns(), dt;

		ret = read_once(mm, buf, sizeof(buf));
		dt = vml_now_ns() - t0;
		lat_hist_record(h, dt);
		lat_hist_record(all, dt);
	}
	*med = lat_hist_quantile_ns(h, 0.5);
	return ret;
}

static int side_alloc(struct ru_side *s, unsigned int samples)
{
	s->per_sample = vml_zalloc(samples * sizeof(double));
	s->all = lat_hist_new();
	return s->per_sample && s->all ? 0 : -ENOMEM;
}

static void side_done(struct ru_side *s, unsigned int samples)
{
	s->median = stat_median(s->per_sample, samples);
	s->p99 = lat_hist_quantile_ns(s->all, 0.99);
}

static int ru_run(struct bench_run *br)
{
	const struct ru_opts *o = br->opts;
	const struct bench_common *c = br->c;
	struct ru_result *r = vml_zalloc(sizeof(*r));
	struct lat_hist *h = lat_hist_new();
	struct vml_sys *sys[2] = { NULL, NULL };
	struct vml_mm *mm[2] = { NULL, NULL };
	int ret = r && h ? 0 : -ENOMEM;

	br->res = r;
	/* Write side: one pair of systems, the ops in turn, the modes in turn. */
	for (int m = 0; m < 2 && !ret; m++)
		ret = make_mm(m ? VML_ROLLUP_INCREMENTAL : VML_ROLLUP_WALK,
			      2 * o->iterations + 1024, &sys[m], &mm[m]);
	for (int m = 0; m < 2 && !ret; m++)
		ret = populated(mm[m], ADDR_FORK, o->fork_pages);
	for (int op = 0; op < RU_NR_WRITE && !ret; op++) {
		for (int m = 0; m < 2 && !ret; m++)
			ret = side_alloc(&r->w[op][m], c->samples);
		for (unsigned int s = 0; s < c->samples && !ret; s++) {
			bench_progress(c->quiet, "rollup: %s, sample %u/%u", write_names[op], s + 1,
				       c->samples);
			for (int m = 0; m < 2 && !ret; m++)
				ret = write_sample(mm[m], op, o, h, r->w[op][m].all,
						   &r->w[op][m].per_sample[s]);
		}
		for (int m = 0; m < 2 && !ret; m++)
			side_done(&r->w[op][m], c->samples);
	}
	for (int m = 0; m < 2; m++) {
		vml_mm_destroy(mm[m]);
		vml_sys_destroy(sys[m]);
		mm[m] = NULL;
		sys[m] = NULL;
	}
	/* Read side: a fresh pair per layout. */
	for (int k = 0; k < RU_NR_READ && !ret; k++) {
		for (int m = 0; m < 2 && !ret; m++) {
			bench_progress(c->quiet, "rollup: laying out %s (%s)", read_names[k],
				       m ? "incremental" : "walk");
			ret = make_mm(m ? VML_ROLLUP_INCREMENTAL : VML_ROLLUP_WALK, 0, &sys[m],
				      &mm[m]);
			if (!ret)
				ret = read_layout(sys[m], mm[m], k, o, &r->vmas[k]);
			if (!ret)
				ret = side_alloc(&r->r[k][m], c->samples);
		}
		for (unsigned int s = 0; s < c->samples && !ret; s++) {
			bench_progress(c->quiet, "rollup: %s, sample %u/%u", read_names[k], s + 1,
				       c->samples);
			for (int m = 0; m < 2 && !ret; m++)
				ret = read_sample(mm[m], o, h, r->r[k][m].all,
						  &r->r[k][m].per_sample[s]);
		}
		for (int m = 0; m < 2; m++) {
			if (!ret)
				side_done(&r->r[k][m], c->samples);
			vml_mm_destroy(mm[m]);
			vml_sys_destroy(sys[m]);
			mm[m] = NULL;
			sys[m] = NULL;
		}
	}
	vml_free(h);
	bench_progress_done(c->quiet);
	if (ret)
		fprintf(stderr, "vmalock bench: rollup: %s\n", strerror(-ret));
	return ret;
}

static double pct(const struct ru_side *s)
{
	return s[0].median > 0 ? (s[1].median / s[0].median - 1) * 100 : NAN;
}

static const struct bench_col columns[] = {
	BENCH_TEXT("row", -16), BENCH_NUM("vmas", 6, COUNT, 0),
	BENCH_NUM("walk_ns", 11, NS, 0), BENCH_NUM("walk_p99", 11, NS, 0),
	BENCH_NUM("inc_ns", 11, NS, 0), BENCH_NUM("inc_p99", 11, NS, 0),
	BENCH_NUM("inc/walk-1 %", 12, FIXED, 1),
	BENCH_COLS_END,
};

static void ru_print(FILE *f, const struct bench_run *br)
{
	const struct ru_opts *o = br->opts;
	const struct ru_result *r = br->res;
	struct bench_table t;

	fprintf(f, "# rollup (model only): ns per call, median of %u samples (each the median of "
		"%lu calls; fork: %lu) and p99 of every call; walk: the kernel's rollup, inc: "
		"incremental sums\n", br->c->samples, o->iterations,
		VML_MAX(o->iterations / 10, 1UL));
	fprintf(f, "# reads: one whole smaps_rollup (open, read, close), %lu per sample; "
		"large: one VMA of %lu MiB populated (file: a shared file mapping, read in)\n",
		o->reads, o->mb);
	bench_table_start(&t, f, columns, 0);
	for (int k = 0; k < RU_NR_WRITE; k++) {
		bench_text(&t, write_names[k]);
		bench_num(&t, NAN);
		bench_num(&t, r->w[k][0].median);
		bench_num(&t, r->w[k][0].p99);
		bench_num(&t, r->w[k][1].median);
		bench_num(&t, r->w[k][1].p99);
		bench_num(&t, pct(r->w[k]));
		bench_row_end(&t);
	}
	for (int k = 0; k < RU_NR_READ; k++) {
		bench_text(&t, read_names[k]);
		bench_num(&t, (double)r->vmas[k]);
		bench_num(&t, r->r[k][0].median);
		bench_num(&t, r->r[k][0].p99);
		bench_num(&t, r->r[k][1].median);
		bench_num(&t, r->r[k][1].p99);
		bench_num(&t, pct(r->r[k]));
		bench_row_end(&t);
	}
}

static void json_side(json_t *row, const char *key, const struct ru_side *s,
		      unsigned int samples)
{
	char name[64];
	json_t *per = json_array();

	snprintf(name, sizeof(name), "%s_ns", key);
	json_set_double(row, name, s->median);
	snprintf(name, sizeof(name), "%s_p99_ns", key);
	json_set_double(row, name, s->p99);
	for (unsigned int i = 0; s->per_sample && i < samples; i++)
		json_push_new(per, json_real(s->per_sample[i]));
	snprintf(name, sizeof(name), "%s_per_sample", key);
	json_set_new(row, name, per);
}

static void ru_json(json_t *doc, const struct bench_run *br)
{
	const struct ru_opts *o = br->opts;
	const struct ru_result *r = br->res;
	json_t *meta = bench_doc_meta(doc);

	json_set_u64(meta, "iterations", o->iterations);
	json_set_u64(meta, "reads", o->reads);
	json_set_u64(meta, "fork_pages", o->fork_pages);
	json_set_u64(meta, "mb", o->mb);
	for (int k = 0; k < RU_NR_WRITE + RU_NR_READ; k++) {
		const struct ru_side *s = k < RU_NR_WRITE ? r->w[k] : r->r[k - RU_NR_WRITE];
		json_t *row = bench_doc_row(doc, NULL);

		json_set_str(row, "row", k < RU_NR_WRITE ? write_names[k] :
					 read_names[k - RU_NR_WRITE]);
		if (k >= RU_NR_WRITE)
			json_set_u64(row, "vmas", r->vmas[k - RU_NR_WRITE]);
		json_side(row, "walk", &s[0], br->c->samples);
		json_side(row, "incremental", &s[1], br->c->samples);
		json_set_double(row, "incremental_over_walk_pct", pct(s));
	}
}

static void ru_free(struct bench_run *br)
{
	struct ru_result *r = br->res;

	for (int k = 0; r && k < RU_NR_WRITE; k++)
		for (int m = 0; m < 2; m++) {
			vml_free(r->w[k][m].per_sample);
			vml_free(r->w[k][m].all);
		}
	for (int k = 0; r && k < RU_NR_READ; k++)
		for (int m = 0; m < 2; m++) {
			vml_free(r->r[k][m].per_sample);
			vml_free(r->r[k][m].all);
		}
	vml_free(r);
}

static void ru_defaults(void *opts)
{
	struct ru_opts *o = opts;

	*o = (struct ru_opts){ .iterations = 2000, .reads = 20, .fork_pages = 256, .mb = 1024,
			       .max_vmas = 65530 };
}

static int ru_check(const char *cmd, const struct bench_common *c, void *opts)
{
	(void)opts;
	if (c->live) {
		fprintf(stderr, "vmalock %s: rollup: the live kernel has no incremental rollup: "
			"--target model\n", cmd);
		return EXIT_USAGE;
	}
	return 0;
}

static const struct cli_opt ru_opts_table[] = {
	{ "--iterations", "N", cli_set_ulong, offsetof(struct ru_opts, iterations), 10, 1000000,
	  NULL, "timed calls per write sample (fork: a tenth) [2000]" },
	{ "--reads", "N", cli_set_ulong, offsetof(struct ru_opts, reads), 1, 100000, NULL,
	  "whole rollup reads per read sample [20]" },
	{ "--fork-pages", "N", cli_set_ulong, offsetof(struct ru_opts, fork_pages), 0, 1000000,
	  NULL, "populated pages of the process the fork row forks [256]" },
	{ "--mb", "N", cli_set_ulong, offsetof(struct ru_opts, mb), 1, 262144, NULL,
	  "the large read row's populated VMA, MiB [1024]" },
	{ "--max-vmas", "N", cli_set_ulong, offsetof(struct ru_opts, max_vmas), 1, 65530, NULL,
	  "VMAs of the many-VMA read row [65530]" },
	CLI_OPT_END,
};

const struct bench_scenario bench_rollup = {
	.name = "rollup",
	.question = "What does the incremental smaps_rollup cost a fault, COW fault, munmap, "
		    "fork and pageout, and what does it save a read, against the walk?",
	.rows = "a write op or a read layout: ns under the walking rollup and under the "
		"incremental sums (model only), and the incremental's overhead in %",
	.opts = ru_opts_table,
	.opts_size = sizeof(struct ru_opts),
	.defaults = ru_defaults,
	.check = ru_check,
	.run = ru_run,
	.print = ru_print,
	.json = ru_json,
	.free = ru_free,
};
