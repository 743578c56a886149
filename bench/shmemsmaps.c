// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * shmemsmaps.c - `vmalock bench shmem-smaps`: seed 004's experiment as
 * written. "A process creates a 2GB mapping and dirties single pages with a
 * stride of 2MB", and smaps is read whole 100 times, in four cases:
 *
 *   private  a private writable mapping of a partly swapped shmem file
 *   shared   a shared mapping of almost all of a partly swapped shmem file
 *   noswap   the same, of a shmem file nothing of which is in swap
 *   anon     a private anonymous mapping
 *
 * The seed's figures (4.4-era kernel, 100 reads, after the patch): 3.831,
 * 1.351, 0.935 and 0.949 s. Before it every empty entry of every shmem
 * mapping was looked up in the page cache; after it only the private
 * writable mapping of a partly swapped object is, the shared one walks the
 * page cache once (or, covering the whole object, reads its counter), and
 * one with nothing in swap does nothing at all.
 *
 * The files: two tmpfs files of --size + --stride bytes (so that a --size
 * mapping is "almost all" of one), written whole (every page cached, as by
 * a program that filled them). "Partly swapped": before the cases, the page
 * after each dirtied one (offset k * stride + 4K, every other k) is written
 * through a shared mapping and pushed out with MADV_PAGEOUT - pages the
 * cases never touch, so they stay in swap. Anonymous memory gets
 * MADV_NOHUGEPAGE, so each dirtied page is one PTE in its own table, as in
 * the shmem cases. On the live kernel a helper process keeps every other
 * page of both files locked in memory (MAP_LOCKED), so that the host's own
 * reclaim (DAMON's pageout scheme, kswapd) swaps out nothing more: the
 * cases' pages are then mapped twice (Shared_Dirty), which costs smaps
 * nothing that matters here.
 *
 * Rows: the model with each setting of shmem_swap_usage (fast: 4.5 and
 * later; per-page: before) and the live kernel, which needs root for its
 * swap file (target_env_set_swap: on for the run, off and deleted however
 * it ends). Each case is one process (a vmalock-child, built with op-script
 * ops) or one modelled mm, built once; a sample times --reads whole reads
 * of its smaps, 4 KiB a read()
 * as cat does. Reported: seconds per --reads reads, each case over anon in
 * the same row, the Swap smaps shows (a check that the setup worked), and
 * on the model which shmem_swap_usage path each read took (vml_mm_stats).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "host/host.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/json.h"

#define PG 4096UL
#define BASE 0x100000000000UL	/* 2 MiB aligned */
#define NCASES 4
#define SWAP_BYTES (64UL << 20)
#define PMD_SZ (2UL << 20)

enum ss_case { CASE_PRIVATE, CASE_SHARED, CASE_NOSWAP, CASE_ANON };

struct ss_opts {
	unsigned long size;		/* --size of the mapping (bytes) */
	unsigned long stride;		/* --stride between dirtied pages */
	unsigned long reads;		/* --reads of smaps a sample */
};

static const char *const case_names[NCASES] = { "private", "shared", "noswap", "anon" };
static const char *const case_text[NCASES] = {
	"private writable mapping of a partly swapped shmem file",
	"shared mapping of almost all of a partly swapped shmem file",
	"the same, nothing in swap",
	"private anonymous mapping",
};
/* The seed's seconds per 100 reads (fs/proc/task_mmu.c, v4.4 era, after the patch). */
static const double seed_s[NCASES] = { 3.831, 1.351, 0.935, 0.949 };

/* The series: the model under each shmem_swap_usage, and the live kernel. */
enum ss_side { SIDE_FAST, SIDE_PER_PAGE, SIDE_LIVE, NSIDES };

static enum target_kind side_target(int side)
{
	return side == SIDE_LIVE ? TARGET_LIVE : TARGET_MODEL;
}

static enum vml_shmem_swap_usage side_usage(int side)
{
	return side == SIDE_PER_PAGE ? VML_SHMEM_SWAP_PER_PAGE : VML_SHMEM_SWAP_FAST;
}

/* "fast", "per-page"; "kernel" for the live kernel's, which is its own */
static const char *side_name(int side)
{
	return words_policy_label(&shmem_swap_usage_vocab, side_target(side), side_usage(side));
}

struct ss_sample {
	double seconds;			/* per o->reads reads */
	double lookups_per_read;	/* model: shmem_swap_lookups per read */
};

struct ss_row {
	enum ss_side side;
	enum ss_case kase;
	struct ss_sample *s;
	unsigned int nr;
	long swap_kb;			/* the Swap smaps shows (first read), all records */
	char path[48];			/* model: the shmem_swap_usage path(s) a read took */
	/* one per case: */
	struct vml_mm *mm;		/* model */
	struct target *live;		/* live */
};

/* ---- the model ---- */

struct ss_model {
	struct vml_sys *sys;
	struct vml_file *swapped, *clean;
};

static int model_touch_stride(struct vml_mm *mm, const struct ss_opts *o, unsigned long off)
{
	int err = 0;

	for (unsigned long a = off; a < o->size && !err; a += o->stride)
		err = vml_touch(mm, BASE + a, PG, VML_TOUCH_WRITE);
	return err;
}

/* Push the page after every other dirtied one of @file to swap (through a shared mapping). */
static int model_swap_part(struct ss_model *m, const struct ss_opts *o)
{
	struct vml_mm *mm;
	int err = vml_mm_create(m->sys, &mm);

	if (err)
		return err;
	err = vml_mmap(mm, BASE, o->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		       m->swapped, 0, NULL);
	for (unsigned long a = PG; a < o->size && !err; a += 2 * o->stride) {
		err = vml_touch(mm, BASE + a, PG, VML_TOUCH_WRITE);
		if (!err)
			err = vml_madvise(mm, BASE + a, PG, MADV_PAGEOUT);
	}
	vml_mm_destroy(mm);
	return err;
}

static int model_case(struct ss_model *m, const struct ss_opts *o, enum ss_case c,
		      struct vml_mm **out)
{
	static const int flags[NCASES] = { MAP_PRIVATE, MAP_SHARED, MAP_SHARED,
					   MAP_PRIVATE | MAP_ANONYMOUS };
	struct vml_file *file = c == CASE_NOSWAP ? m->clean : c == CASE_ANON ? NULL : m->swapped;
	struct vml_mm *mm;
	int err = vml_mm_create(m->sys, &mm);

	if (err)
		return err;
	err = vml_mmap(mm, BASE, o->size, PROT_READ | PROT_WRITE, flags[c] | MAP_FIXED, file, 0,
		       NULL);
	if (!err && c == CASE_ANON)
		err = vml_madvise(mm, BASE, o->size, MADV_NOHUGEPAGE);
	if (!err)
		err = model_touch_stride(mm, o, 0);
	if (err) {
		vml_mm_destroy(mm);
		return err;
	}
	*out = mm;
	return 0;
}

static int model_create(struct ss_model *m, const struct ss_opts *o,
			enum vml_shmem_swap_usage usage)
{
	struct vml_sys_config cfg;
	int err = host_current_config(0, &cfg);

	memset(m, 0, sizeof(*m));
	if (err)
		return err;
	cfg.shmem_swap_usage = usage;
	cfg.swap_pages = SWAP_BYTES / PG;
	err = vml_sys_create(&cfg, &m->sys);
	if (!err)
		err = vml_file_create(m->sys, "/dev/shm/vmalock-bench/swapped", o->size + o->stride,
				      VML_FILE_SHMEM, &m->swapped);
	if (!err)
		err = vml_file_create(m->sys, "/dev/shm/vmalock-bench/clean", o->size + o->stride,
				      VML_FILE_SHMEM, &m->clean);
	if (!err)
		err = model_swap_part(m, o);
	return err;
}

static void model_destroy(struct ss_model *m)
{
	vml_file_put(m->swapped);
	vml_file_put(m->clean);
	vml_sys_destroy(m->sys);
}

/* ---- the live kernel ---- */

/*
 * Live cases are vmalock-child processes (target.h): a fresh small address
 * space each, built by op-script ops, files and swap from one environment
 * (removed, and swap turned off, however the run ends).
 */
struct ss_live {
	struct target_env *env;
	struct target *pin;	/* keeps the files' other pages locked in memory */
};

static int live_op(struct target *t, struct op op)
{
	struct op_result res;
	int err = target_apply(t, &op, &res);

	return err ? err : res.ret;
}

static int live_file(struct target *t, const struct ss_opts *o, const char *name)
{
	return live_op(t, (struct op){ .kind = OP_FILE, .file = name, .size = o->size + o->stride,
				       .shmem = true });
}

static int live_map(struct target *t, const struct ss_opts *o, int flags, const char *file)
{
	return live_op(t, (struct op){ .kind = OP_MMAP, .addr = BASE, .len = o->size,
				       .prot = PROT_READ | PROT_WRITE, .flags = flags,
				       .placement = OP_PLACE_FIXED, .file = file });
}

static int live_touch(struct target *t, unsigned long addr)
{
	return live_op(t, (struct op){ .kind = OP_TOUCH, .addr = addr, .len = PG,
				       .access = OP_ACCESS_WRITE });
}

static long swap_kb_of(struct view_reader *vr);

/*
 * MADV_PAGEOUT is best effort: reclaim skips a page it cannot isolate or
 * write at that moment (another task holding it, a swap slot not yet
 * allocated), and says nothing. Push until this process's smaps shows
 * every page out, a few times, so the "partly swapped" cases are.
 */
#define PAGEOUT_TRIES 20

static int live_swap_part(struct ss_live *l, const struct ss_opts *o)
{
	unsigned long want_kb = 0;	/* every touched page in swap */
	struct view_reader vr;
	struct target *t;
	long kb = 0;
	int err = target_create(TARGET_LIVE, l->env, &t);

	if (err)
		return err;
	err = live_file(t, o, "swapped");
	if (!err)
		err = live_map(t, o, MAP_SHARED, "swapped");
	for (unsigned long a = PG; a < o->size && !err; a += 2 * o->stride, want_kb += PG >> 10)
		err = live_touch(t, BASE + a);
	for (int i = 0; i < PAGEOUT_TRIES && !err; i++) {
		/* The live target waits for the writeback to swap to end. */
		err = live_op(t, (struct op){ .kind = OP_MADVISE, .addr = BASE, .len = o->size,
					      .advice = MADV_PAGEOUT });
		if (!err)
			err = view_reader_open_live(&vr, target_pid(t), VML_VIEW_SMAPS);
		if (err)
			break;
		kb = swap_kb_of(&vr);
		view_reader_close(&vr);
		if (kb < 0)
			err = -EIO;
		else if ((unsigned long)kb >= want_kb)
			break;
		else
			bench_sleep_ns(20 * NSEC_PER_MSEC);
	}
	if (!err && (unsigned long)kb < want_kb) {
		fprintf(stderr, "vmalock: bench shmem-smaps: live: MADV_PAGEOUT put %ld of %lu kB "
				"in swap after %d tries\n", kb, want_kb, PAGEOUT_TRIES);
		err = -EAGAIN;
	}
	target_destroy(t);
	return err;
}

static int live_case(struct ss_live *l, const struct ss_opts *o, struct ss_row *r)
{
	static const int flags[NCASES] = { MAP_PRIVATE, MAP_SHARED, MAP_SHARED,
					   MAP_PRIVATE | MAP_ANONYMOUS };
	const char *file = r->kase == CASE_NOSWAP ? "clean" : r->kase == CASE_ANON ? NULL :
			   "swapped";
	int err = target_create(TARGET_LIVE, l->env, &r->live);

	if (err)
		return err;
	if (file)
		err = live_file(r->live, o, file);
	if (!err)
		err = live_map(r->live, o, flags[r->kase], file);
	if (!err && r->kase == CASE_ANON)
		err = live_op(r->live, (struct op){ .kind = OP_MADVISE, .addr = BASE, .len = o->size,
						    .advice = MADV_NOHUGEPAGE });
	for (unsigned long a = 0; a < o->size && !err; a += o->stride)
		err = live_touch(r->live, BASE + a);
	return err;
}

/* Map [@off, @end) of @file locked and populated at @base + @off in the pin process. */
static int live_pin_range(struct ss_live *l, unsigned long base, const char *file,
			  unsigned long off, unsigned long end)
{
	return live_op(l->pin, (struct op){ .kind = OP_MMAP, .addr = base + off, .len = end - off,
					    .prot = PROT_READ,
					    .flags = MAP_SHARED | MAP_LOCKED | MAP_POPULATE,
					    .placement = OP_PLACE_FIXED, .file = file,
					    .offset = off });
}

/*
 * Lock every page of both files in memory but those to be pushed out: a
 * host's own reclaim - DAMON's pageout scheme, kswapd - must not put more
 * of them in swap than the setup does (with swap on, DAMON pages out cold
 * tmpfs pages within a minute), or "noswap" would not be. The pages to be
 * pushed out are never mapped locked: when the whole file was locked and
 * they were unmapped from it afterwards, MADV_PAGEOUT put none of them in
 * swap in 5 of 12 runs, 20 tries each - most likely they were still
 * unevictable (munlock of an unmapped page is batched per CPU, and the
 * batch of the CPU that unmapped them had not drained).
 */
static int live_pin(struct ss_live *l, const struct ss_opts *o)
{
	const unsigned long other = BASE + 2 * (o->size + o->stride + PMD_SZ);
	const unsigned long end = o->size + o->stride;
	unsigned long from = 0;
	int err = target_create(TARGET_LIVE, l->env, &l->pin);

	if (!err)
		err = live_file(l->pin, o, "swapped");
	if (!err)
		err = live_file(l->pin, o, "clean");
	for (unsigned long a = PG; a < o->size && !err; a += 2 * o->stride) {
		if (a > from)
			err = live_pin_range(l, BASE, "swapped", from, a);
		from = a + PG;
	}
	if (!err && from < end)
		err = live_pin_range(l, BASE, "swapped", from, end);
	if (!err)
		err = live_pin_range(l, other, "clean", 0, end);
	return err;
}

static int live_create(struct ss_live *l, const struct ss_opts *o, bool quiet)
{
	char err[256];
	int ret;

	memset(l, 0, sizeof(*l));
	ret = target_env_create(&l->env);
	if (ret)
		return ret;
	ret = target_env_set_swap(l->env, SWAP_BYTES, true, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "vmalock: bench shmem-smaps: live: swap: %s\n", err);
		return ret;
	}
	bench_progress(quiet, "shmem-smaps: live: writing two %lu MiB tmpfs files",
		       (o->size + o->stride) >> 20);
	ret = target_env_make_file(l->env, "swapped", true, o->size + o->stride);
	if (!ret)
		ret = target_env_make_file(l->env, "clean", true, o->size + o->stride);
	if (!ret)
		ret = live_pin(l, o);
	if (!ret)
		ret = live_swap_part(l, o);
	return ret;
}

static void live_destroy(struct ss_live *l)
{
	target_destroy(l->pin);
	if (l->env)
		target_env_put(l->env);	/* removes the files, turns the swap off */
}

/* ---- measuring ---- */

/* The sum of every record's Swap: in one whole read of @vr. */
static long swap_kb_of(struct view_reader *vr)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	long kb = 0;

	if (!f)
		return -1;
	/* view_reader_pass keeps nothing: read it again by hand, whole. */
	for (;;) {
		ssize_t n = vr->r ? vml_reader_read(vr->r, vr->buf, BENCH_READ_CHUNK) :
				    read(vr->fd, vr->buf, BENCH_READ_CHUNK);

		if (n <= 0)
			break;
		fwrite(vr->buf, 1, (size_t)n, f);
	}
	fclose(f);
	if (vr->r)
		vml_reader_rewind(vr->r);
	else
		lseek(vr->fd, 0, SEEK_SET);
	for (const char *p = text; p && (p = strstr(p, "\nSwap:")); p++)
		kb += strtol(p + 6, NULL, 10);
	free(text);
	return kb;
}

static void path_name(const struct vml_mm_stats *a, const struct vml_mm_stats *b, char *buf,
		      size_t len)
{
	const char *base = b->shmem_swap_object > a->shmem_swap_object ? "object" :
			   b->shmem_swap_walk > a->shmem_swap_walk ? "walk" :
			   b->shmem_swap_none > a->shmem_swap_none ? "none" : "";
	bool per_page = b->shmem_swap_per_page > a->shmem_swap_per_page;

	snprintf(buf, len, "%s%s%s", base, *base && per_page ? "+" : "",
		 per_page ? "per-page" : *base ? "" : "-");
}

static int sample(const struct ss_opts *o, struct ss_row *r, unsigned int smp)
{
	struct view_reader vr;
	struct vml_mm_stats a, b;
	uint64_t t0, t1;
	int err = r->side == SIDE_LIVE ? view_reader_open_live(&vr, target_pid(r->live),
							       VML_VIEW_SMAPS) :
		  view_reader_open_model(&vr, r->mm, VML_VIEW_SMAPS, VML_LOCK_MMAP);

	if (err)
		return err;
	if (!smp)
		r->swap_kb = swap_kb_of(&vr);
	if (r->mm)
		vml_mm_stats(r->mm, &a);
	t0 = vml_now_ns();
	for (unsigned long i = 0; i < o->reads && !err; i++) {
		long n = view_reader_pass(&vr, NULL);

		if (n < 0)
			err = (int)n;
	}
	t1 = vml_now_ns();
	view_reader_close(&vr);
	r->s[smp].seconds = (double)(t1 - t0) / 1e9;
	r->s[smp].lookups_per_read = NAN;
	if (r->mm) {
		vml_mm_stats(r->mm, &b);
		r->s[smp].lookups_per_read = (double)(b.shmem_swap_lookups - a.shmem_swap_lookups) /
					     (double)o->reads;
		if (!smp)
			path_name(&a, &b, r->path, sizeof(r->path));
	}
	return err;
}

/* ---- output ---- */

#define MED(r, f) STAT_OF(MEDIAN, (r)->s, (r)->nr, f)

static const struct ss_row *find(const struct ss_row *rows, unsigned int nr, enum ss_side side,
				 enum ss_case c)
{
	for (unsigned int i = 0; i < nr; i++)
		if (rows[i].side == side && rows[i].kase == c && rows[i].nr)
			return &rows[i];
	return NULL;
}

static double ratio_to_anon(const struct ss_row *rows, unsigned int nr, const struct ss_row *r)
{
	const struct ss_row *anon = find(rows, nr, r->side, CASE_ANON);

	return anon ? MED(r, seconds) / MED(anon, seconds) : NAN;
}

/* What a run measured: a row per side (model fast, per-page; live) and case. */
struct ss_result {
	struct ss_row rows[NSIDES * NCASES];
	unsigned int nr;
	struct ss_model models[2];
	bool have_model[2];
	struct ss_live live;
	bool have_live;
};

static const struct bench_col columns[] = {
	BENCH_TEXT("target", -6), BENCH_TEXT("smaps", -9), BENCH_TEXT("case", -8),
	BENCH_NUM("seconds", 10, RAW, 4), BENCH_NUM("/anon", 8, RAW, 3),
	BENCH_NUM("+anon", 9, RAW, 4), BENCH_NUM("swap_kB", 8, RAW, 0),
	BENCH_NUM("lookups", 10, RAW, 0), { .head = "path", .gap = 2 },
	BENCH_COLS_END,
};

static void print_table(FILE *f, const struct bench_run *br)
{
	const struct ss_opts *o = br->opts;
	const struct ss_result *res = br->res;
	const struct ss_row *rows = res->rows;
	unsigned int nr = res->nr;
	struct bench_table t;

	fprintf(f, "# shmem-smaps (seed 004): a %lu MiB mapping, one page dirtied every %lu KiB; "
		   "smaps read whole %lu times (4 KiB read()s); medians of %u samples\n",
		o->size >> 20, o->stride >> 10, o->reads, br->c->samples);
	fprintf(f, "# shmem files of %lu MiB, written whole; 'partly swapped': %lu pages pushed "
		   "out; model: fast = shmem_swap_usage since 4.5, per-page = before; live: kernel "
		   "%s\n", (o->size + o->stride) >> 20, (o->size / o->stride + 1) / 2, bench_kernel());
	for (int c = 0; c < NCASES; c++)
		fprintf(f, "#   %-8s %s\n", case_names[c], case_text[c]);
	fprintf(f, "# seconds: for all the reads; /anon: over the anonymous case of the same row\n"
		   "# group; +anon: seconds more than it (what the shmem swap accounting adds);\n"
		   "# lookups: page-cache lookups a read made; path: shmem_swap_usage's (model)\n");
	bench_table_start(&t, f, columns, 0);
	for (unsigned int i = 0; i < nr; i++) {
		const struct ss_row *r = &rows[i];
		const struct ss_row *anon = find(rows, nr, r->side, CASE_ANON);

		if (!r->nr)
			continue;
		bench_text(&t, target_kind_name(side_target(r->side)));
		bench_text(&t, side_name(r->side));
		bench_text(&t, case_names[r->kase]);
		bench_num(&t, MED(r, seconds));
		bench_num(&t, ratio_to_anon(rows, nr, r));
		bench_num(&t, anon ? MED(r, seconds) - MED(anon, seconds) : NAN);
		bench_num(&t, (double)r->swap_kb);
		/* lookups and path: the model's (vml_mm_stats) */
		if (r->side == SIDE_LIVE)
			bench_text(&t, "-");
		else
			bench_num(&t, MED(r, lookups_per_read));
		bench_text(&t, r->side == SIDE_LIVE ? "-" : r->path);
		bench_row_end(&t);
	}
	fprintf(f, "seed (100 reads, after the patch):");
	for (int c = 0; c < NCASES; c++)
		fprintf(f, " %s %.3f s (%.2fx, %+.3f)", case_names[c], seed_s[c],
			seed_s[c] / seed_s[CASE_ANON], seed_s[c] - seed_s[CASE_ANON]);
	fprintf(f, "\n");
}

static void print_verdict(FILE *f, const struct ss_row *rows, unsigned int nr)
{
	for (int side = 0; side < NSIDES; side++) {
		const struct ss_row *c[NCASES];
		bool all = true;

		for (int k = 0; k < NCASES; k++)
			all &= (c[k] = find(rows, nr, (enum ss_side)side, (enum ss_case)k)) != NULL;
		if (!all)
			continue;
		fprintf(f, "verdict (%s %s): private %.2fx, shared %.2fx, noswap %.2fx the anonymous "
			   "case (seed: %.2fx, %.2fx, %.2fx); what the shmem cases add to it, over "
			   "what private adds: shared %.2f, noswap %.2f (seed: %.2f, %.2f)\n",
			target_kind_name(side_target(side)), side_name(side),
			ratio_to_anon(rows, nr, c[0]), ratio_to_anon(rows, nr, c[1]),
			ratio_to_anon(rows, nr, c[2]), seed_s[0] / seed_s[3], seed_s[1] / seed_s[3],
			seed_s[2] / seed_s[3],
			(MED(c[1], seconds) - MED(c[3], seconds)) / (MED(c[0], seconds) - MED(c[3], seconds)),
			(MED(c[2], seconds) - MED(c[3], seconds)) / (MED(c[0], seconds) - MED(c[3], seconds)),
			(seed_s[1] - seed_s[3]) / (seed_s[0] - seed_s[3]),
			(seed_s[2] - seed_s[3]) / (seed_s[0] - seed_s[3]));
	}
}

static void ss_print(FILE *f, const struct bench_run *br)
{
	const struct ss_result *res = br->res;

	print_table(f, br);
	print_verdict(f, res->rows, res->nr);
}

static void ss_json(json_t *doc, const struct bench_run *br)
{
	const struct ss_opts *o = br->opts;
	const struct ss_result *res = br->res;
	const struct ss_row *rows = res->rows;
	unsigned int nr = res->nr;
	json_t *meta = bench_doc_meta(doc), *seed = json_object();

	json_set_u64(meta, "size", o->size);
	json_set_u64(meta, "stride", o->stride);
	json_set_u64(meta, "reads", o->reads);
	for (int c = 0; c < NCASES; c++)
		json_set_double(seed, case_names[c], seed_s[c]);
	json_set_new(meta, "seed_seconds", seed);
	for (unsigned int i = 0; i < nr; i++) {
		const struct ss_row *r = &rows[i];
		json_t *row, *per;

		if (!r->nr)
			continue;
		row = bench_doc_row(doc, target_kind_name(side_target(r->side)));
		json_set_str(row, "smaps", side_name(r->side));
		json_set_str(row, "case", case_names[r->kase]);
		json_set_double(row, "seconds", MED(r, seconds));
		json_set_double(row, "ratio_to_anon", ratio_to_anon(rows, nr, r));
		if (find(rows, nr, r->side, CASE_ANON))
			json_set_double(row, "seconds_over_anon",
					MED(r, seconds) - MED(find(rows, nr, r->side, CASE_ANON), seconds));
		json_set_i64(row, "swap_kb", r->swap_kb);
		if (r->side != SIDE_LIVE) {
			json_set_double(row, "lookups_per_read", MED(r, lookups_per_read));
			json_set_str(row, "path", r->path);
		}
		per = bench_doc_samples(row, "per_sample_seconds");
		for (unsigned int k = 0; k < r->nr; k++)
			json_push_new(per, json_real(r->s[k].seconds));
	}
}

/* Each case's time over the anonymous one, grouped by case, a bar per side and the seed. */
static int ss_plot(struct bench_plot *p, const struct bench_run *br)
{
	const struct ss_opts *o = br->opts;
	const struct ss_result *res = br->res;
	const struct ss_row *rows = res->rows;
	unsigned int nr = res->nr;
	FILE *d = p->data, *s = p->script;

	for (int c = 0; c < NCASES; c++) {
		fprintf(d, "%s %.4f", case_names[c], seed_s[c] / seed_s[CASE_ANON]);
		for (int side = 0; side < NSIDES; side++) {
			const struct ss_row *r = find(rows, nr, (enum ss_side)side, (enum ss_case)c);

			fprintf(d, " %.4f", r ? ratio_to_anon(rows, nr, r) : NAN);
		}
		fprintf(d, "\n");
	}
	fprintf(s, "set title 'shmem-smaps (seed 004): %lu MiB mapping, a page every %lu KiB, "
		   "%lu reads of smaps; kernel %s'\n", o->size >> 20, o->stride >> 10, o->reads,
		bench_kernel());
	fprintf(s, "set style data histograms\nset style histogram clustered gap 1\n"
		   "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset grid ytics\n"
		   "set key top right\nset datafile missing 'nan'\n"
		   "set ylabel 'time over the anonymous case (same target)'\nset yrange [0:*]\n"
		   "plot ");
	bench_plot_data(p);
	fprintf(s, " using 2:xtic(1) lc rgb '#7f7f7f' title 'seed (2015 kernel, after)', "
		   "'' using 3 lc rgb '#1f77b4' title 'model, fast', "
		   "'' using 4 lc rgb '#d62728' title 'model, per-page (before)', "
		   "'' using 5 lc rgb '#2ca02c' title 'live kernel'\n");
	return 0;
}

/* ---- the run ---- */

/* The model's cases, each of its shmem_swap_usage settings. Return: 0 or -errno (printed). */
static int model_rows(const struct bench_run *br, struct ss_result *res)
{
	const struct ss_opts *o = br->opts;
	struct host_model_switches sw = host_model_switches();
	int err = 0;

	for (int side = SIDE_FAST; side <= SIDE_PER_PAGE && !err; side++) {
		enum vml_shmem_swap_usage usage = side_usage(side);

		if (sw.shmem_swap_usage_set && sw.shmem_swap_usage != usage)
			continue;
		bench_progress(br->c->quiet, "shmem-smaps: model (%s): building", side_name(side));
		err = model_create(&res->models[side], o, usage);
		res->have_model[side] = res->models[side].sys != NULL;
		for (int c = 0; c < NCASES && !err; c++) {
			struct ss_row *r = &res->rows[res->nr++];

			*r = (struct ss_row){ .side = (enum ss_side)side, .kase = (enum ss_case)c };
			err = model_case(&res->models[side], o, (enum ss_case)c, &r->mm);
		}
	}
	if (err) {
		bench_progress_done(br->c->quiet);
		fprintf(stderr, "vmalock: bench shmem-smaps: model: %s\n", strerror(-err));
	}
	return err;
}

/* The live kernel's cases. Return: 0 or -errno (printed). */
static int live_rows(const struct bench_run *br, struct ss_result *res)
{
	int err = live_create(&res->live, br->opts, br->c->quiet);

	res->have_live = true;
	for (int c = 0; c < NCASES && !err; c++) {
		struct ss_row *r = &res->rows[res->nr++];

		*r = (struct ss_row){ .side = SIDE_LIVE, .kase = (enum ss_case)c };
		err = live_case(&res->live, br->opts, r);
	}
	if (err) {
		bench_progress_done(br->c->quiet);
		fprintf(stderr, "vmalock: bench shmem-smaps: live: %s%s\n", strerror(-err),
			err == -EPERM ? " (the live side needs root, for swap)" : "");
	}
	return err;
}

static int ss_run(struct bench_run *br)
{
	const struct ss_opts *o = br->opts;
	const struct bench_common *c = br->c;
	struct ss_result *res = vml_zalloc(sizeof(*res));
	int err = 0;

	br->res = res;
	if (!res) {
		fprintf(stderr, "vmalock: bench shmem-smaps: out of memory\n");
		return -ENOMEM;
	}
	if (o->stride < 2 * PG || o->stride % PG || o->size % o->stride) {
		fprintf(stderr, "vmalock: bench shmem-smaps: --size must be a multiple of --stride, "
				"a multiple of the page size of at least 8K\n");
		return -EINVAL;
	}
	if (c->model)
		err = model_rows(br, res);
	if (!err && c->live)
		err = live_rows(br, res);
	for (unsigned int i = 0; i < res->nr && !err; i++) {
		res->rows[i].s = vml_zalloc(c->samples * sizeof(*res->rows[i].s));
		if (!res->rows[i].s)
			err = -ENOMEM;
	}
	/* Samples in turn over every row. */
	for (unsigned int smp = 0; smp < c->samples && !err; smp++) {
		for (unsigned int i = 0; i < res->nr && !err; i++) {
			struct ss_row *r = &res->rows[i];

			bench_progress(c->quiet, "shmem-smaps: %s %s, %s, sample %u/%u",
				       target_kind_name(side_target(r->side)), side_name(r->side),
				       case_names[r->kase], smp + 1, c->samples);
			err = sample(o, r, smp);
			if (err) {
				bench_progress_done(c->quiet);
				fprintf(stderr, "vmalock: bench shmem-smaps: %s: %s\n",
					case_names[r->kase], strerror(-err));
			}
			r->nr = smp + 1;
		}
	}
	bench_progress_done(c->quiet);
	return err;
}

static void ss_free(struct bench_run *br)
{
	struct ss_result *res = br->res;

	if (!res)
		return;
	for (unsigned int i = 0; i < res->nr; i++) {
		if (res->rows[i].mm)
			vml_mm_destroy(res->rows[i].mm);
		target_destroy(res->rows[i].live);
		vml_free(res->rows[i].s);
	}
	for (int side = 0; side < 2; side++)
		if (res->have_model[side])
			model_destroy(&res->models[side]);
	if (res->have_live)
		live_destroy(&res->live);
	vml_free(res);
}

static void ss_defaults(void *opts)
{
	struct ss_opts *o = opts;

	*o = (struct ss_opts){ .size = 2UL << 30, .stride = 2UL << 20, .reads = 100 };
}

#define S(f) offsetof(struct ss_opts, f)
static const struct cli_opt ss_opts_table[] = {
	{ "--size", "SIZE", cli_set_size, S(size), 4 << 20, 1UL << 40, NULL,
	  "the mapping each case reads [2G]" },
	{ "--stride", "SIZE", cli_set_size, S(stride), 8192, 1UL << 30, NULL,
	  "one page dirtied every SIZE [2M]" },
	{ "--reads", "N", cli_set_ulong, S(reads), 1, 1000000, NULL,
	  "whole reads of smaps timed per sample [100]" },
	CLI_OPT_END,
};
#undef S

const struct bench_scenario bench_shmem_smaps = {
	.name = "shmem-smaps",
	.question = "Seed 004: what does reading smaps cost for shmem mappings with and without "
		    "the 2016 fast paths?",
	.rows = "a target, shmem_swap_usage setting and case: the reads' seconds, over the "
		"anonymous case, the Swap shown, the lookups and the path taken",
	.about = "100 whole reads of smaps of a 2 GB mapping dirtied every 2 MB: shmem\n"
		 "private/shared/not swapped against anonymous, on the model (fast and\n"
		 "per-page: --shmem-swap-usage picks one) and the live kernel (root: swap).",
	.opts = ss_opts_table,
	.opts_size = sizeof(struct ss_opts),
	.defaults = ss_defaults,
	.run = ss_run,
	.print = ss_print,
	.json = ss_json,
	.plot = ss_plot,
	.free = ss_free,
};
