// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * khugepaged.c - `vmalock bench khugepaged`: seed 003's experiment on the
 * model. An address space holds --skip-vmas small VMAs khugepaged cannot
 * use, then --ranges 2 MiB ranges of small pages it can collapse, while a
 * mapper maps and unmaps single pages elsewhere in it (Paul's mapper: a
 * random page, map or unmap, 10 us apart), contending for mmap_lock.
 * khugepaged runs in its own low-priority thread with each policy:
 *
 *   mainline  6.18: trylock per mm, forget the position on contention, walk
 *             every ineligible VMA under one read-lock hold;
 *   fixed     the 2026 series: per-mm resume address, skip to the next
 *             candidate, drop and re-take mmap_lock (nosteal) every 1024
 *             skipped VMAs.
 *
 * Per sample: the time until every range is collapsed (or the --duration
 * limit), khugepaged's longest mmap_lock hold, and the mapper's latency.
 * The seed reports 10.8 s -> 3.6 s to collapse and 95 ms -> 170 us hold
 * (with ~1M ineligible VMAs). Model only: the live kernel's khugepaged is
 * one global thread whose pace is a system setting.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "target/host.h"
#include "internal.h"
#include "util/json.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/rand.h"
#include "vmalock/khugepaged.h"

#define KH_M2 (2UL << 20)
#define KH_PG 4096UL
#define KH_BASE 0x100000000000UL
#define KH_CHURN (KH_BASE + (1UL << 40))	/* the mapper's area, far from the rest */
#define KH_CHURN_PAGES 4096UL			/* 16 MiB */

struct kh_sample {
	double collapse_ms;	/* NAN: not all ranges collapsed within --duration */
	double max_hold_ms, mean_hold_us;
	double p50_us, p99_us, max_us;
	uint64_t trylock_failures, lock_drops, wakeups, collapsed;
};

struct kh_row {
	enum vml_khugepaged_policy policy;
	struct kh_sample *s;
	unsigned int nr;
};

struct mapper {
	struct vml_mm *mm;
	struct lat_hist *hist;
	uint64_t seed;
	int cpu;
	atomic_bool stop;
};

static void *mapper_thread(void *arg)
{
	struct mapper *m = arg;
	struct vml_rand r = vml_rand_init(m->seed, 7);

	bench_pin_thread(m->cpu);
	while (!atomic_load(&m->stop)) {
		unsigned long a = KH_CHURN + vml_rand_below(&r, KH_CHURN_PAGES) * KH_PG;
		uint64_t t0 = vml_now_ns();

		if (vml_rand_below(&r, 2))
			vml_mmap(m->mm, a, KH_PG, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, NULL, 0, NULL);
		else
			vml_munmap(m->mm, a, KH_PG);
		lat_hist_record(m->hist, vml_now_ns() - t0);
		bench_sleep_ns(10 * NSEC_PER_USEC);
	}
	return NULL;
}

/* The layout: ineligible VMAs, then the collapsible ranges, then the mapper's area. */
static int build(struct vml_sys *sys, unsigned long skip, unsigned int ranges, struct vml_mm **out)
{
	unsigned long rbase = KH_BASE + ((2 * skip * KH_PG + KH_M2 - 1) & ~(KH_M2 - 1)) + KH_M2;
	struct vml_mm *mm;
	int err;

	err = vml_mm_create(sys, &mm);
	if (err)
		return err;
	for (unsigned long i = 0; i < skip && !err; i++)
		err = vml_mmap(mm, KH_BASE + 2 * i * KH_PG, KH_PG,
			       PROT_READ | ((i & 1) ? PROT_WRITE : 0),
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL);
	/* Small pages first (THP is "madvise"), then advise: collapsible, not yet huge. */
	if (!err)
		err = vml_mmap(mm, rbase, ranges * KH_M2, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, NULL, 0, NULL);
	if (!err)
		err = vml_madvise(mm, rbase, ranges * KH_M2, MADV_HUGEPAGE);
	if (!err)
		err = vml_mmap(mm, KH_CHURN, KH_CHURN_PAGES * KH_PG, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, NULL, 0, NULL);
	if (err) {
		vml_mm_destroy(mm);
		return err;
	}
	*out = mm;
	return 0;
}

static int run_sample(const struct bench_opts *o, enum vml_khugepaged_policy policy,
		      struct kh_sample *s, int mapper_cpu, int scan_cpu)
{
	struct vml_sys_config scfg;
	struct vml_khugepaged_config kcfg = { .policy = policy, .scan_sleep_ms = o->kh_scan_sleep_ms };
	struct mapper m = { .seed = o->seed, .cpu = mapper_cpu };
	struct vml_khugepaged_stats ks;
	struct vml_khugepaged *k = NULL;
	struct vml_sys *sys;
	pthread_t mt;
	uint64_t t0, limit = (uint64_t)(o->duration_s * 1e9);
	int err;

	err = host_current_config(0, &scfg);
	if (err)
		return err;
	scfg.max_map_count = o->kh_skip_vmas + 65536;
	/* The experiment's ranges are MADV_HUGEPAGE: THP must not be off. */
	if (scfg.thp == VML_THP_NEVER)
		scfg.thp = VML_THP_MADVISE;
	err = vml_sys_create(&scfg, &sys);
	if (err)
		return err;
	err = build(sys, o->kh_skip_vmas, o->kh_ranges, &m.mm);
	if (err) {
		vml_sys_destroy(sys);
		return err;
	}
	m.hist = lat_hist_new();
	err = m.hist ? vml_khugepaged_create(sys, &kcfg, &k) : -ENOMEM;
	if (!err)
		err = vml_khugepaged_add(k, m.mm);
	if (err)
		goto out;

	atomic_store(&m.stop, false);
	pthread_create(&mt, NULL, mapper_thread, &m);
	bench_pin_thread(scan_cpu);
	vml_khugepaged_start(k);
	t0 = vml_now_ns();
	s->collapse_ms = NAN;
	for (;;) {
		uint64_t now = vml_now_ns();

		vml_khugepaged_stats(k, &ks);
		if (ks.pages_collapsed >= o->kh_ranges) {
			s->collapse_ms = (double)(now - t0) / 1e6;
			break;
		}
		if (now - t0 >= limit)
			break;
		bench_sleep_ns(NSEC_PER_MSEC);
	}
	vml_khugepaged_stop(k);
	atomic_store(&m.stop, true);
	pthread_join(mt, NULL);
	bench_pin_thread(-1);

	vml_khugepaged_stats(k, &ks);
	s->max_hold_ms = (double)ks.max_hold_ns / 1e6;
	s->mean_hold_us = 0;
	s->trylock_failures = ks.trylock_failures;
	s->lock_drops = ks.lock_drops;
	s->wakeups = ks.wakeups;
	s->collapsed = ks.pages_collapsed;
	s->p50_us = lat_hist_quantile_ns(m.hist, 0.5) / 1e3;
	s->p99_us = lat_hist_quantile_ns(m.hist, 0.99) / 1e3;
	s->max_us = (double)m.hist->max_ns / 1e3;
out:
	vml_khugepaged_destroy(k);
	vml_free(m.hist);
	vml_mm_destroy(m.mm);
	vml_sys_destroy(sys);
	return err;
}

static const char *policy_name(enum vml_khugepaged_policy p)
{
	return p == VML_KHUGEPAGED_FIXED ? "fixed" : "mainline";
}

/* Median over samples of one field; collapse times that never finished sort last. */
static double med(const struct kh_row *r, size_t off)
{
	double v[256];
	unsigned int n = r->nr < 256 ? r->nr : 256;

	for (unsigned int i = 0; i < n; i++) {
		double x = *(const double *)((const char *)&r->s[i] + off);

		v[i] = isnan(x) ? INFINITY : x;
	}
	return stat_median(v, n);
}

static double med_u64(const struct kh_row *r, size_t off)
{
	double v[256];
	unsigned int n = r->nr < 256 ? r->nr : 256;

	for (unsigned int i = 0; i < n; i++)
		v[i] = (double)*(const uint64_t *)((const char *)&r->s[i] + off);
	return stat_median(v, n);
}

#define MED(r, f) med((r), offsetof(struct kh_sample, f))
#define MEDU(r, f) med_u64((r), offsetof(struct kh_sample, f))

static void print_table(FILE *f, const struct bench_opts *o, const struct kh_row *rows,
			unsigned int nr)
{
	fprintf(f, "khugepaged: %lu ineligible VMAs, %u collapsible 2 MiB ranges, a mapper "
		   "contending; model; medians of %u samples\n",
		o->kh_skip_vmas, o->kh_ranges, o->samples);
	fprintf(f, "%-9s %13s %12s %9s %9s %11s %9s %9s %9s\n", "policy", "collapse(ms)",
		"maxhold(ms)", "trylock", "drops", "mapper p50", "p99(us)", "max(us)", "collapsed");
	for (unsigned int i = 0; i < nr; i++) {
		const struct kh_row *r = &rows[i];
		double c = MED(r, collapse_ms);
		char cbuf[32];

		if (isinf(c))
			snprintf(cbuf, sizeof(cbuf), ">%.0f", o->duration_s * 1e3);
		else
			snprintf(cbuf, sizeof(cbuf), "%.1f", c);
		fprintf(f, "%-9s %13s %12.3f %9.0f %9.0f %11.1f %9.1f %9.0f %9.0f\n",
			policy_name(r->policy), cbuf, MED(r, max_hold_ms), MEDU(r, trylock_failures),
			MEDU(r, lock_drops), MED(r, p50_us), MED(r, p99_us), MED(r, max_us),
			MEDU(r, collapsed));
	}
	if (nr == 2) {
		double ca = MED(&rows[0], collapse_ms), cb = MED(&rows[1], collapse_ms);

		fprintf(f, "fixed/mainline: longest mmap_lock hold %.3gx, mapper max latency %.3gx, ",
			MED(&rows[1], max_hold_ms) / MED(&rows[0], max_hold_ms),
			MED(&rows[1], max_us) / MED(&rows[0], max_us));
		if (isinf(ca) || isinf(cb))
			fprintf(f, "time to collapse n/a (%s did not finish)\n",
				isinf(ca) ? "mainline" : "fixed");
		else
			fprintf(f, "time to collapse %.3gx\n", cb / ca);
	}
}

static json_t *json_sample(const struct kh_sample *s)
{
	json_t *o = json_object();

	json_set_double(o, "collapse_ms", s->collapse_ms);
	json_set_double(o, "max_hold_ms", s->max_hold_ms);
	json_set_double(o, "p50_us", s->p50_us);
	json_set_double(o, "p99_us", s->p99_us);
	json_set_double(o, "max_us", s->max_us);
	json_set_u64(o, "trylock_failures", s->trylock_failures);
	json_set_u64(o, "lock_drops", s->lock_drops);
	json_set_u64(o, "wakeups", s->wakeups);
	json_set_u64(o, "collapsed", s->collapsed);
	return o;
}

/* Return: 0 or -errno (printed). */
static int write_json(const char *path, const struct bench_opts *o, const struct kh_row *rows,
		      unsigned int nr)
{
	json_t *doc = json_object(), *jrows = json_array();
	int ret;

	json_set_str(doc, "scenario", "khugepaged");
	json_set_u64(doc, "skip_vmas", o->kh_skip_vmas);
	json_set_u64(doc, "ranges", o->kh_ranges);
	json_set_double(doc, "duration_s", o->duration_s);
	json_set_u64(doc, "samples", o->samples);
	for (unsigned int i = 0; i < nr; i++) {
		const struct kh_row *r = &rows[i];
		json_t *row = json_object(), *per = json_array();

		json_set_str(row, "target", "model");
		json_set_str(row, "policy", policy_name(r->policy));
		/* A policy that never finished collapsing has no time: null. */
		json_set_double(row, "collapse_ms", MED(r, collapse_ms));
		json_set_double(row, "max_hold_ms", MED(r, max_hold_ms));
		json_set_double(row, "p50_us", MED(r, p50_us));
		json_set_double(row, "p99_us", MED(r, p99_us));
		json_set_double(row, "max_us", MED(r, max_us));
		for (unsigned int j = 0; j < r->nr; j++)
			json_push_new(per, json_sample(&r->s[j]));
		json_set_new(row, "per_sample", per);
		json_push_new(jrows, row);
	}
	json_set_new(doc, "rows", jrows);
	ret = json_write_file(doc, path);
	json_decref(doc);
	if (ret)
		fprintf(stderr, "vmalock: --json %s: %s\n", path, strerror(-ret));
	return ret;
}

int bench_khugepaged(const struct bench_opts *o)
{
	struct kh_row rows[2];
	unsigned int nr = 0;
	int mapper_cpu, scan_cpu, ret = 0;

	if (!o->model) {
		fprintf(stderr, "vmalock: bench khugepaged: the model only (the live kernel's "
				"khugepaged is a system-wide thread)\n");
		return -EINVAL;
	}
	bench_pick_cpus(&mapper_cpu, &scan_cpu);
	if (o->kh_mainline)
		rows[nr++] = (struct kh_row){ .policy = VML_KHUGEPAGED_MAINLINE };
	if (o->kh_fixed)
		rows[nr++] = (struct kh_row){ .policy = VML_KHUGEPAGED_FIXED };
	for (unsigned int i = 0; i < nr; i++) {
		rows[i].s = calloc(o->samples, sizeof(*rows[i].s));
		if (!rows[i].s) {
			while (i--)
				free(rows[i].s);
			return -ENOMEM;
		}
	}
	/* Round-robin over the rows, so load drift hits both policies alike. */
	for (unsigned int smp = 0; smp < o->samples && !ret; smp++) {
		for (unsigned int i = 0; i < nr && !ret; i++) {
			int err;

			bench_progress(o->quiet, "khugepaged: %s, sample %u/%u", policy_name(rows[i].policy),
				       smp + 1, o->samples);
			err = run_sample(o, rows[i].policy, &rows[i].s[smp], mapper_cpu, scan_cpu);
			if (err) {
				bench_progress_done(o->quiet);
				fprintf(stderr, "vmalock: bench khugepaged: %s\n", strerror(-err));
				ret = err;
			}
			rows[i].nr = smp + 1;
		}
	}
	bench_progress_done(o->quiet);
	if (!ret) {
		print_table(stdout, o, rows, nr);
		if (o->json)
			ret = write_json(o->json, o, rows, nr);
	}
	for (unsigned int i = 0; i < nr; i++)
		free(rows[i].s);
	return ret;
}
