// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmawait.c - `vmalock bench vma-wait`: how long a writer waits for a
 * VMA's reader, on the model and on the live kernel, side by side.
 *
 * A zapper thread MADV_DONTNEEDs a populated region that is one VMA; 6.18
 * (madvise_lock's MADVISE_VMA_READ_LOCK) and the model do that under the
 * VMA's read lock alone. Once the zap has run a quarter of its length (the
 * median of three pilot zaps on the same target), the mapper, on the other
 * CPU, munmaps one page: inside the zapped VMA, which write-locks it and so
 * waits in vma_start_write() for the rest of the zap, or in a VMA of its
 * own, which does not wait. It is the mechanism behind the `vma` policy's
 * one-reader tail in proc-vs-map
 * (docs/findings/2026-12-01-vma-policy-tail.md):
 * there a smaps reader walks the region's one VMA under its lock, and the
 * mapper's first call inside it waits for the whole walk. The live
 * kernel's smaps takes mmap_lock, so it cannot show that wait; its
 * per-VMA MADV_DONTNEED can.
 *
 * The live side runs in this process (its own mappings, plain system
 * calls); the model side on a model mm configured from this host's profile.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "internal.h"
#include "simcost.h"
#include "sync/atomic.h"
#include "host/host.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/json.h"
#include "vmalock/mm.h"

#define VW_PAGE 4096UL
#define VW_PILOTS 3		/* zaps timed alone first: the lead is a quarter of their median */
#define VW_MAX_MB 4096		/* --mb: the region is populated on both targets */
#define VW_MAX_ZAPPERS 16

struct vw_opts {
	unsigned long mb;	/* --mb: the zapped VMA */
	unsigned int zappers;	/* --zappers: readers zapping a slice of it each */
};

enum vw_case { VW_SAME, VW_OTHER, VW_CASES };
static const char *const case_names[VW_CASES] = { "same", "other" };
static const char *const case_labels[VW_CASES] = { "inside the zapped VMA",
						   "in another VMA" };

/* One target's address space: the region (one VMA) and a one-page VMA apart. */
struct vw_space {
	bool live;
	const struct vml_kernel_costs *costs;	/* simulated: the model's charges */
	struct vml_sys *sys;		/* model */
	struct vml_mm *mm;		/* model */
	unsigned long region, len;	/* the zapped VMA */
	unsigned long other;		/* a read-only page: no merge with the region */
};

/* What one sample measured, ns from the zap's start (the first zapper's). */
struct vw_sample {
	uint64_t zap_ns;		/* the madvise() calls, first start to last end */
	uint64_t lead_ns;		/* when the munmap() started */
	uint64_t wait_ns;		/* the munmap() call */
	/*
	 * The zappers that had begun when the munmap did (the VMA's readers
	 * then; a later one finds the VMA write-locked and waits behind it):
	 * how many, and when the last and the first of them ended.
	 */
	unsigned int zappers_in;
	uint64_t last_end_ns, first_end_ns;
	int err;			/* the munmap's or the madvise's, if either failed */
	bool preempted;			/* the zapper lost its CPU during the zap: not counted */
};

/* Where a row ran: the model on host threads, the live kernel, the model simulated. */
enum vw_side { VW_MODEL, VW_LIVE, VW_SIM, VW_SIDES };
static const char *const side_names[VW_SIDES] = { "model", "live", "sim" };

struct vw_row {
	bool live;
	enum vw_side side;
	enum vw_case kase;
	struct vw_sample *s;
	unsigned int nr;
};

static int space_map_live(struct vw_space *sp)
{
	void *r = mmap(NULL, sp->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *o = mmap(NULL, VW_PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r == MAP_FAILED || o == MAP_FAILED) {
		int err = -errno;

		if (r != MAP_FAILED)
			munmap(r, sp->len);
		if (o != MAP_FAILED)
			munmap(o, VW_PAGE);
		return err;
	}
	sp->region = (unsigned long)r;
	sp->other = (unsigned long)o;
	/* Small pages on any THP setting: the zap's cost is per page on both sides. */
	madvise(r, sp->len, MADV_NOHUGEPAGE);
	for (unsigned long a = 0; a < sp->len; a += VW_PAGE)
		((volatile char *)r)[a] = 1;
	return 0;
}

/* Map the region and the page apart, populated. Return: 0 or -errno (the mm is then torn down). */
static int space_map(struct vw_space *sp)
{
	int ret;

	if (sp->live)
		return space_map_live(sp);
	ret = vml_mmap(sp->mm, 0, sp->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       NULL, 0, &sp->region);
	if (!ret)
		ret = vml_mmap(sp->mm, 0, VW_PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, NULL, 0,
			       &sp->other);
	if (!ret)
		ret = vml_madvise(sp->mm, sp->region, sp->len, MADV_NOHUGEPAGE);
	if (!ret)
		ret = vml_touch(sp->mm, sp->region, sp->len, VML_TOUCH_WRITE);
	return ret;
}

/*
 * Unmap what space_map() mapped (the page the mapper unmapped is a hole
 * already). Return: 0 or the first -errno.
 */
static int space_unmap(struct vw_space *sp)
{
	int ret, ret2;

	if (sp->live) {
		ret = munmap((void *)sp->region, sp->len) ? -errno : 0;
		ret2 = munmap((void *)sp->other, VW_PAGE) ? -errno : 0;
	} else {
		ret = vml_munmap(sp->mm, sp->region, sp->len);
		ret2 = vml_munmap(sp->mm, sp->other, VW_PAGE);
	}
	return ret ? ret : ret2;
}

static int space_zap(struct vw_space *sp, unsigned long addr, unsigned long len)
{
	if (sp->live)
		return madvise((void *)addr, len, MADV_DONTNEED) ? -errno : 0;
	return vml_madvise(sp->mm, addr, len, MADV_DONTNEED);
}

static int space_unmap_page(struct vw_space *sp, unsigned long addr)
{
	if (sp->live)
		return munmap((void *)addr, VW_PAGE) ? -errno : 0;
	return vml_munmap(sp->mm, addr, VW_PAGE);
}

/*
 * The zapper and the mapper (this thread). Written with release and read
 * with acquire: go (mapper -> zapper), t0 (zapper -> mapper: the zap began).
 */
struct vw_zapper {
	struct vw_space *sp;
	unsigned long addr, len;	/* its slice of the region */
	int cpu;
	_Atomic uint32_t *go;		/* the sample's, shared */
	_Atomic uint64_t t0;
	uint64_t t1;			/* the zapper's until pthread_join() */
	int err;			/* the same */
	bool preempted;			/* the same */
};

static void *zapper_main(void *arg)
{
	struct vw_zapper *z = arg;
	struct rusage before, after;

	bench_pin_thread(z->cpu);
	while (!load_acquire(z->go))	/* pairs with run_sample()'s store_release(&go) */
		plat_cpu_relax();
	getrusage(RUSAGE_THREAD, &before);
	/* pairs with run_sample()'s load_acquire(&z[k].t0): the zap begins now */
	store_release(&z->t0, plat_now_ns());
	z->err = space_zap(z->sp, z->addr, z->len);
	z->t1 = plat_now_ns();
	/*
	 * Another task took the zapper's CPU (other load on the machine): the
	 * zap's rest then holds that task's time, before or after the VMA's
	 * read lock is dropped, and the ratio measures the scheduler.
	 */
	getrusage(RUSAGE_THREAD, &after);
	/* simulated: nothing else runs on the machine */
	z->preempted = !plat_simulated() && after.ru_nivcsw != before.ru_nivcsw;
	return NULL;
}

/* Where zapper @k runs: the CPUs after the mapper's in turn (@zcpus of them from @cpus[1]). */
static int zapper_cpu(const int cpus[2], unsigned int zcpus, unsigned int k)
{
	return zcpus > 1 ? cpus[1] + (int)(k % zcpus) : cpus[1];
}

/*
 * One sample: map and populate, zap from the zappers' CPUs (@nz zappers,
 * a slice of the one VMA each, growing, on @zcpus CPUs from @cpus[1]), and (unless
 * @kase < 0: the pilot) munmap one page @lead_ns into the first zap.
 */
static int run_sample(struct vw_space *sp, int kase, uint64_t lead_ns, int cpus[2],
		      unsigned int nz, unsigned int zcpus, struct vw_sample *out)
{
	struct vw_zapper z[VW_MAX_ZAPPERS];
	struct plat_thread th[VW_MAX_ZAPPERS];
	_Atomic uint32_t go;
	/* zapper k zaps k + 1 shares of nz (nz + 1) / 2: on CPUs of their own they end apart */
	unsigned long page, share = (sp->len / (nz * (nz + 1) / 2)) & ~(VW_PAGE - 1), off = 0;
	uint64_t t0 = 0, m0 = 0, m1 = 0, end = 0;
	unsigned int started = 0;
	int ret = space_map(sp);

	if (ret)
		return ret;
	atomic_init(&go, 0);
	/*
	 * The middle of the first zapper's slice (of the region, with one): its
	 * walk reaches it after the munmap began, and no later zapper's slice
	 * holds the hole (MADV_DONTNEED over a hole fails with ENOMEM).
	 */
	page = kase == VW_OTHER ? sp->other : sp->region + (share / 2 & ~(VW_PAGE - 1));
	for (unsigned int k = 0; k < nz; k++) {
		z[k] = (struct vw_zapper){ .sp = sp, .addr = sp->region + off,
					   .len = k + 1 < nz ? (k + 1) * share : sp->len - off,
					   .cpu = zapper_cpu(cpus, zcpus, k), .go = &go };
		off += z[k].len;
		atomic_init(&z[k].t0, 0);
		if (plat_thread_create(&th[k], &(struct plat_thread_opts){ .cpu = -1,
									     .name = "zapper" },
				       zapper_main, &z[k])) {
			ret = -EAGAIN;
			break;
		}
		started++;
	}
	store_release(&go, 1);	/* pairs with zapper_main()'s load_acquire(z->go) */
	while (!ret && !t0) {	/* the first zap's start */
		for (unsigned int k = 0; k < nz; k++) {
			/* pairs with zapper_main()'s store_release(&z->t0) */
			uint64_t t = load_acquire(&z[k].t0);

			if (t && (!t0 || t < t0))
				t0 = t;
		}
		if (!t0)
			plat_cpu_relax();
	}
	if (!ret && kase >= 0) {
		while (plat_now_ns() < t0 + lead_ns)
			plat_cpu_relax();
		m0 = plat_now_ns();
		ret = space_unmap_page(sp, page);
		m1 = plat_now_ns();
	}
	for (unsigned int k = 0; k < started; k++)
		plat_thread_join(&th[k]);
	*out = (struct vw_sample){ .lead_ns = m0 ? m0 - t0 : 0, .wait_ns = m1 - m0, .err = ret };
	for (unsigned int k = 0; k < started; k++) {
		uint64_t zt0 = load_relaxed(&z[k].t0);

		end = VML_MAX(end, z[k].t1);
		out->err = out->err ? out->err : z[k].err;
		/* zappers sharing a CPU switch among themselves: only a CPU of its own tells */
		out->preempted |= nz <= zcpus && z[k].preempted;
		if (m0 && zt0 && zt0 <= m0 && z[k].t1 > m0) {	/* a reader when the munmap came */
			out->zappers_in++;
			out->last_end_ns = VML_MAX(out->last_end_ns, z[k].t1 - t0);
			out->first_end_ns = out->first_end_ns ?
					    VML_MIN(out->first_end_ns, z[k].t1 - t0) : z[k].t1 - t0;
		}
	}
	out->zap_ns = end - t0;
	ret = space_unmap(sp);
	return out->err ? out->err : ret;
}

enum vw_field { VW_ZAP, VW_LEAD, VW_WAIT, VW_SHARE, VW_SHARE_FIRST };
enum vw_stat { VW_MIN, VW_MEDIAN, VW_MAX };

/* A statistic over the row's good samples (neither failed nor preempted); NAN if none. */
static double row_stat(const struct vw_row *r, enum vw_field f, enum vw_stat st)
{
	double *v = vml_zalloc((r->nr + 1) * sizeof(*v)), x;
	size_t n = 0;

	if (!v)
		return NAN;
	for (unsigned int i = 0; i < r->nr; i++) {
		const struct vw_sample *s = &r->s[i];

		if (s->err || s->preempted)
			continue;
		if (f == VW_ZAP)
			v[n++] = (double)s->zap_ns;
		else if (f == VW_LEAD)
			v[n++] = (double)s->lead_ns;
		else if (f == VW_WAIT)
			v[n++] = (double)s->wait_ns;
		else if (f == VW_SHARE && s->last_end_ns > s->lead_ns)
			/* the munmap's wait over what its readers had left when it began */
			v[n++] = (double)s->wait_ns / (double)(s->last_end_ns - s->lead_ns);
		else if (f == VW_SHARE_FIRST && s->first_end_ns > s->lead_ns)
			/* ...and over what the first of them to end had left */
			v[n++] = (double)s->wait_ns / (double)(s->first_end_ns - s->lead_ns);
	}
	x = !n ? NAN : st == VW_MIN ? stat_min(v, n) : st == VW_MAX ? stat_max(v, n) :
		stat_median(v, n);
	vml_free(v);
	return x;
}

static int space_create(struct vw_space *sp, bool live, unsigned long mb,
			const struct vml_kernel_costs *costs)
{
	struct vml_sys_config cfg;	/* this host's (or --profile's) */
	int ret;

	*sp = (struct vw_space){ .live = live, .len = mb << 20 };
	if (live)
		return 0;
	ret = host_current_config(0, &cfg);
	if (costs)
		cfg.costs = *costs;
	if (!ret)
		ret = vml_sys_create(&cfg, &sp->sys);
	if (!ret)
		ret = vml_mm_create(sp->sys, &sp->mm);
	return ret;
}

static void space_destroy(struct vw_space *sp)
{
	vml_mm_destroy(sp->mm);
	vml_sys_destroy(sp->sys);
}

/* Pilot zaps, then the samples, each case in turn. */
static int run_side(const struct bench_run *r, enum vw_side vs, int cpus[2], struct vw_row *rows,
		    uint64_t *lead_ns, const struct vml_kernel_costs *costs)
{
	const struct vw_opts *o = r->opts;
	const struct bench_common *cm = r->c;
	bool live = vs == VW_LIVE;
	const char *side = side_names[vs];
	unsigned int zcpus = vs == VW_SIM && cm->cpus > 2 ? cm->cpus - 1 : 1;
	struct vw_space sp;
	double pilot_ns[VW_PILOTS];
	int ret = space_create(&sp, live, o->mb, costs);

	for (int c = 0; c < VW_CASES; c++) {
		rows[c] = (struct vw_row){ .live = live, .side = vs, .kase = c };
		rows[c].s = vml_zalloc(cm->samples * sizeof(*rows[c].s));
		if (!rows[c].s)
			ret = ret ? ret : -ENOMEM;
	}
	bench_progress(cm->quiet, "vma-wait: %s: %d pilot zaps", side, VW_PILOTS);
	for (int i = 0; !ret && i < VW_PILOTS; i++) {
		struct vw_sample pilot = { 0 };

		ret = run_sample(&sp, -1, 0, cpus, o->zappers, zcpus, &pilot);
		if (!ret)
			ret = pilot.err;
		pilot_ns[i] = (double)pilot.zap_ns;
	}
	/* The median: the first zap of a fresh mm can take twice the others. */
	*lead_ns = ret ? 0 : (uint64_t)(stat_median(pilot_ns, VW_PILOTS) / 4);
	for (unsigned int i = 0; !ret && i < cm->samples; i++) {
		bench_progress(cm->quiet, "vma-wait: %s: sample %u/%u", side, i + 1, cm->samples);
		for (int c = 0; !ret && c < VW_CASES; c++) {
			ret = run_sample(&sp, c, *lead_ns, cpus, o->zappers, zcpus,
					 &rows[c].s[i]);
			rows[c].nr += !ret;
		}
	}
	if (ret)
		fprintf(stderr, "vmalock bench: vma-wait: %s: %s\n", side, strerror(-ret));
	space_destroy(&sp);
	return ret;
}

static unsigned int row_errors(const struct vw_row *r)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < r->nr; i++)
		n += r->s[i].err != 0;
	return n;
}

static unsigned int row_preempted(const struct vw_row *r)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < r->nr; i++)
		n += !r->s[i].err && r->s[i].preempted;
	return n;
}

/* What a run measured: a row per target and case. */
struct vw_result {
	struct vw_row rows[VW_SIDES * VW_CASES];
	unsigned int nr;
	uint64_t lead_ns[VW_SIDES];
	int cpus[2];			/* the mapper's, the zapper's */
	struct bench_sim_costs simcosts;	/* simulated rows' charges */
};

/* The simulated side: run_side() as the first task of a machine of --cpus CPUs. */
struct vw_sim {
	const struct bench_run *r;
	struct vw_result *res;
	int ret;
};

static void *sim_side_main(void *arg)
{
	struct vw_sim *s = arg;
	int cpus[2] = { 0, s->r->c->cpus > 1 ? 1 : 0 };

	bench_pin_thread(cpus[0]);	/* the mapper: this task */
	s->ret = run_side(s->r, VW_SIM, cpus, &s->res->rows[s->res->nr],
			  &s->res->lead_ns[VW_SIM], &s->res->simcosts.kernel);
	return NULL;
}

static int run_sim(const struct bench_run *r, struct vw_result *res)
{
	const struct bench_common *c = r->c;
	struct vw_sim s = { r, res, 0 };
	struct sim_config cfg;
	int ret;

	if (!c->sim_costs)
		bench_progress(c->quiet, "vma-wait: measuring the simulated machine's charges ...");
	ret = bench_sim_costs_get("vmalock bench", c->sim_costs, NULL, &res->simcosts);
	if (ret)
		return ret;
	cfg = bench_sim_config(&res->simcosts, c->cpus, c->sim_seed);
	ret = sim_run(&cfg, sim_side_main, &s, NULL);
	return ret ? ret : s.ret;
}

static const struct bench_col columns[] = {
	BENCH_TEXT("target", -7), BENCH_TEXT("munmap", -22), BENCH_NUM("zap ms", 9, RAW, 2),
	BENCH_NUM("lead ms", 9, RAW, 2), BENCH_NUM("munmap us", 11, RAW, 1),
	BENCH_NUM("min", 11, RAW, 1), BENCH_NUM("max", 11, RAW, 1),
	BENCH_TEXT("waited/left", 17), BENCH_NUM("w/first", 8, RAW, 2),
	BENCH_COLS_END,
};

static void vw_print(FILE *f, const struct bench_run *r)
{
	const struct vw_opts *o = r->opts;
	const struct vw_result *res = r->res;
	struct bench_table t;

	fprintf(f, "# vma-wait: MADV_DONTNEED of one %lu MiB VMA (%lu small pages), from CPU %d;\n"
		"# a quarter into it (lead: of 3 pilot zaps' median) the mapper on CPU %d munmaps one\n"
		"# page; %u samples; kernel %s\n",
		o->mb, (o->mb << 20) / VW_PAGE, res->cpus[1], res->cpus[0], r->c->samples,
		bench_kernel());
	if (o->zappers > 1)
		fprintf(f, "# %u zappers, a slice of the VMA each, all on CPU %d (simulated: on the CPUs\n"
			"# after the mapper's in turn); w/first: the wait over what the first of them\n"
			"# to end had left (> 1: the munmap waited for more than one reader)\n",
			o->zappers, res->cpus[1]);
	if (r->c->sim) {
		fprintf(f, "# sim: the model on a simulated machine of %u CPUs (docs/simulation.md), "
			   "seed %llu\n", r->c->cpus, (unsigned long long)r->c->sim_seed);
		bench_sim_costs_print(f, &res->simcosts);
	}
	fprintf(f, "# waited/left: the munmap's time over what the zaps under way when it began\n"
		"# had left (1: it waited for all of it; 0: not at all)\n");
	bench_table_start(&t, f, columns, 0);
	for (unsigned int i = 0; i < res->nr; i++) {
		const struct vw_row *row = &res->rows[i];
		unsigned int bad = row_errors(row), preempted = row_preempted(row);

		if (!row->nr)
			continue;
		bench_text(&t, row->live ? "kernel" : side_names[row->side]);
		bench_text(&t, case_labels[row->kase]);
		bench_num(&t, row_stat(row, VW_ZAP, VW_MEDIAN) / 1e6);
		bench_num(&t, (double)res->lead_ns[row->side] / 1e6);
		bench_num(&t, row_stat(row, VW_WAIT, VW_MEDIAN) / 1e3);
		bench_num(&t, row_stat(row, VW_WAIT, VW_MIN) / 1e3);
		bench_num(&t, row_stat(row, VW_WAIT, VW_MAX) / 1e3);
		bench_textf(&t, "%5.2f (%.2f-%.2f)", row_stat(row, VW_SHARE, VW_MEDIAN),
			    row_stat(row, VW_SHARE, VW_MIN), row_stat(row, VW_SHARE, VW_MAX));
		bench_num(&t, row_stat(row, VW_SHARE_FIRST, VW_MEDIAN));
		if (bad)
			fprintf(f, "  (%u samples failed)", bad);
		if (preempted)
			fprintf(f, "  (%u preempted, not counted)", preempted);
		bench_row_end(&t);
	}
	fprintf(f, "# zap ms, munmap us: medians over the samples (min, max beside); a sample\n"
		"# whose zapper lost its CPU to another task is not counted (nan: all were)\n");
}

static void vw_json(json_t *doc, const struct bench_run *r)
{
	const struct vw_opts *o = r->opts;
	const struct vw_result *res = r->res;

	json_set_u64(bench_doc_meta(doc), "mb", o->mb);
	json_set_u64(bench_doc_meta(doc), "zappers", o->zappers);
	for (unsigned int i = 0; i < res->nr; i++) {
		const struct vw_row *vr = &res->rows[i];
		json_t *row, *per;

		if (!vr->nr)
			continue;
		row = bench_doc_row(doc, target_kind_name(vr->live ? TARGET_LIVE : TARGET_MODEL));
		json_set_bool(row, "sim", vr->side == VW_SIM);
		if (vr->side == VW_SIM)
			json_set_u64(row, "cpus", r->c->cpus);
		json_set_str(row, "munmap", case_names[vr->kase]);
		json_set_u64(row, "lead_ns", res->lead_ns[vr->side]);
		json_set_double(row, "zap_ns", row_stat(vr, VW_ZAP, VW_MEDIAN));
		json_set_double(row, "munmap_ns", row_stat(vr, VW_WAIT, VW_MEDIAN));
		json_set_double(row, "munmap_max_ns", row_stat(vr, VW_WAIT, VW_MAX));
		json_set_double(row, "waited_over_left", row_stat(vr, VW_SHARE, VW_MEDIAN));
		json_set_double(row, "waited_over_first_left",
				row_stat(vr, VW_SHARE_FIRST, VW_MEDIAN));
		json_set_u64(row, "preempted", row_preempted(vr));
		per = bench_doc_samples(row, "per_sample");
		for (unsigned int k = 0; k < vr->nr; k++) {
			json_t *s = json_object();

			json_set_u64(s, "zap_ns", vr->s[k].zap_ns);
			json_set_u64(s, "lead_ns", vr->s[k].lead_ns);
			json_set_u64(s, "munmap_ns", vr->s[k].wait_ns);
			json_set_u64(s, "zappers_in", vr->s[k].zappers_in);
			json_set_u64(s, "last_end_ns", vr->s[k].last_end_ns);
			json_set_u64(s, "first_end_ns", vr->s[k].first_end_ns);
			json_set_i64(s, "err", vr->s[k].err);
			json_set_bool(s, "preempted", vr->s[k].preempted);
			json_push_new(per, s);
		}
	}
}

static int vw_run(struct bench_run *r)
{
	struct vw_result *res = vml_zalloc(sizeof(*res));
	int ret = 0;
	cpu_set_t saved;
	bool restore = !pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved);

	if (!res) {
		fprintf(stderr, "vmalock bench: vma-wait: out of memory\n");
		return -ENOMEM;
	}
	r->res = res;
	bench_pick_cpus(&res->cpus[0], &res->cpus[1]);
	if (res->cpus[0] < 0)
		fprintf(stderr, "vmalock bench: vma-wait: one CPU: the zapper and the mapper "
			"share it\n");
	bench_pin_thread(res->cpus[0]);	/* the mapper: this thread */
	if (r->c->model) {
		ret = run_side(r, VW_MODEL, res->cpus, &res->rows[res->nr],
			       &res->lead_ns[VW_MODEL], NULL);
		res->nr += VW_CASES;
	}
	if (!ret && r->c->live) {
		ret = run_side(r, VW_LIVE, res->cpus, &res->rows[res->nr], &res->lead_ns[VW_LIVE],
			       NULL);
		res->nr += VW_CASES;
	}
	if (!ret && r->c->sim) {
		ret = run_sim(r, res);
		res->nr += VW_CASES;
	}
	bench_progress_done(r->c->quiet);
	if (restore)
		pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	return ret;
}

static void vw_free(struct bench_run *r)
{
	struct vw_result *res = r->res;

	for (unsigned int i = 0; res && i < res->nr; i++)
		vml_free(res->rows[i].s);
	vml_free(res);
}

static void vw_defaults(void *opts)
{
	struct vw_opts *o = opts;

	o->mb = 128;
	o->zappers = 1;
}

static int vw_check(const char *cmd, const struct bench_common *c, void *opts)
{
	const struct vw_opts *o = opts;

	(void)c;
	if (o->mb > VW_MAX_MB)
		return cli_usage_error(cmd, "--mb: vma-wait populates the region on both targets: "
				       "at most %d MiB", VW_MAX_MB);
	return 0;
}

static const struct cli_opt vw_opts_table[] = {
	{ "--mb", "N", bench_set_mb, offsetof(struct vw_opts, mb), 0, 0, NULL,
	  "the zapped VMA in MiB, any size up to 4096 [128]" },
	{ "--zappers", "N", cli_set_uint, offsetof(struct vw_opts, zappers), 1, VW_MAX_ZAPPERS,
	  NULL, "readers zapping the VMA at once, a slice each, 1-16; the munmap inside\n"
	  "waits for every one that holds it when it comes [1]" },
	CLI_OPT_END,
};

const struct bench_scenario bench_vma_wait = {
	.name = "vma-wait",
	.question = "Does a writer of a VMA wait for that VMA's per-VMA-lock reader's whole "
		    "walk, on the model as on the kernel?",
	.rows = "a target and where the munmap is (inside the zapped VMA, or in another): "
		"its wait against the rest of the zap",
	.about = "MADV_DONTNEED zaps a populated region under its VMA's read lock (6.18, and\n"
		 "the model) while the mapper munmaps a page inside it, or in another VMA.",
	.opts = vw_opts_table,
	.opts_size = sizeof(struct vw_opts),
	.defaults = vw_defaults,
	.sim = true,
	.check = vw_check,
	.run = vw_run,
	.print = vw_print,
	.json = vw_json,
	.free = vw_free,
};
