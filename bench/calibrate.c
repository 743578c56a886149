// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * calibrate.c - how much longer the live kernel takes per /proc record than
 * the model, measured now, on the same layout.
 *
 * Why: the model runs the kernel's algorithms at userspace speed. For smaps
 * that is several times faster per record than the kernel (which formats
 * two dozen fields, walks page tables with locks and touches every folio),
 * so a model reader holds mmap_lock for a shorter time per read(). Whether
 * a writer slips in between two read()s of a looping reader - or queues and
 * meets reader lock stealing until hand-off, the kernel's pathology -
 * depends on that hold time against the writer's ~10 us spin on readers.
 * Charging model readers the difference (vml_reader_set_record_cost) makes
 * their lock holds as long as the kernel's, so the lock policies are
 * compared under the kernel's critical-section lengths. The charge is
 * measured in the same run, never assumed.
 *
 * Two layouts, alternately rw- and r-- VMAs so none merge: 2048 VMAs of 4
 * populated pages and 256 of 64 (the mapper's region has both: many small
 * VMAs and a few large ones). Each side's cost per VMA is fitted as a + b *
 * pages: a per record, b per anonymous page walked, and the model is charged both
 * differences (vml_reader_set_record_cost, vml_reader_set_page_cost).
 * Uncontended whole-view reads, median of 5 samples of at least 30 ms each.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host/host.h"
#include "internal.h"
#include "util/clock.h"
#include "sync/futex.h"
#include "util/compiler.h"

#define CAL_BASE SCRIPT_RANGE_LO
#define CAL_VMAS 2048UL
#define CAL_PAGES 4UL
#define CAL_BIG_VMAS 256UL	/* the second layout: the cost that grows with a VMA's size */
#define CAL_BIG_PAGES 64UL
#define CAL_SAMPLES 5
#define CAL_SAMPLE_NS (30 * NSEC_PER_MSEC)

static int cal_apply(struct target *t, struct vml_mm *mm, enum op_kind kind, unsigned long addr,
		     unsigned long len, int prot)
{
	struct op op = { .kind = kind, .addr = addr, .len = len, .prot = prot,
			 .flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
			 .placement = OP_PLACE_NOREPLACE };
	struct op_result res;
	int ret;

	if (mm) {
		if (kind == OP_MMAP)
			return vml_mmap(mm, addr, len, prot, op.flags | MAP_FIXED_NOREPLACE, NULL, 0,
					NULL);
		return vml_mprotect(mm, addr, len, prot);
	}
	ret = target_apply(t, &op, &res);
	return ret ? ret : res.ret;
}

static int cal_layout(struct target *t, struct vml_mm *mm, unsigned long vmas,
		      unsigned long pages)
{
	unsigned long vma_bytes = pages * 4096;
	int ret = cal_apply(t, mm, OP_MMAP, CAL_BASE, vmas * vma_bytes, PROT_READ | PROT_WRITE);

	for (unsigned long i = 1; i < vmas && !ret; i += 2)
		ret = cal_apply(t, mm, OP_MPROTECT, CAL_BASE + i * vma_bytes, vma_bytes, PROT_READ);
	return ret;
}

/* Median ns per record of whole-view passes. */
static int cal_measure(struct view_reader *vr, unsigned long records, double *out)
{
	double v[CAL_SAMPLES];

	for (int s = 0; s < CAL_SAMPLES; s++) {
		int ret = view_reader_ns_per_record(vr, records, CAL_SAMPLE_NS, &v[s]);

		if (ret)
			return ret;
	}
	*out = stat_median(v, CAL_SAMPLES);
	return 0;
}

/* Median cost of an end-of-file read() on each side, interleaved. */
static int cal_eof(struct view_reader *mvr, struct view_reader *lvr, struct bench_calibration *cal)
{
	double m[CAL_SAMPLES], l[CAL_SAMPLES];
	int ret = 0;

	for (int s = 0; s < CAL_SAMPLES && !ret; s++) {
		ret = view_reader_eof_ns(mvr, CAL_SAMPLE_NS / 3, &m[s]);
		if (!ret)
			ret = view_reader_eof_ns(lvr, CAL_SAMPLE_NS / 3, &l[s]);
	}
	if (ret)
		return ret;
	cal->model_call_ns = stat_median(m, CAL_SAMPLES);
	cal->live_call_ns = stat_median(l, CAL_SAMPLES);
	/*
	 * The model writer's way back to the lock once woken, which the
	 * kernel's writer does not go: measured where perf allows
	 * (wakeret.c); else a futex_wait that returns at once (the word is
	 * not what it expects) - into the kernel and out of it and the futex
	 * lookup, without a sleep's switch - stands in for it.
	 */
	for (int s = 0; s < CAL_SAMPLES; s++) {
		static _Atomic uint32_t word = 1;
		uint64_t t0 = vml_now_ns();

		for (int i = 0; i < 4096; i++)
			futex_wait(&word, 0, 0);
		m[s] = (double)(vml_now_ns() - t0) / 4096;
	}
	cal->futex_ns = stat_median(m, CAL_SAMPLES);
	cal->wake_return_err = bench_wake_return_ns(&cal->wake_return_ns);
	if (cal->wake_return_err)
		cal->wake_return_ns = 0;
	return 0;
}

/* One layout on both sides: a model mm and a live child, a reader of each. */
struct cal_side {
	struct vml_mm *mm;
	struct target *t;
	struct view_reader mvr, lvr;
	bool mopen, lopen;
	double base;		/* a pass over the child's own mappings, before the layout */
	unsigned long vmas;
};

static int cal_side_open(struct cal_side *c, struct vml_sys *sys, enum vml_view view,
			 unsigned long vmas, unsigned long pages)
{
	int ret;

	c->vmas = vmas;
	ret = vml_mm_create(sys, &c->mm);
	if (!ret)
		ret = cal_layout(NULL, c->mm, vmas, pages);
	if (!ret)
		ret = target_create(TARGET_LIVE, NULL, &c->t);
	/* The child's own mappings (binary, libc, stack...): read before the layout, taken off. */
	if (!ret) {
		ret = view_reader_open_live(&c->lvr, target_pid(c->t), view);
		if (!ret) {
			ret = cal_measure(&c->lvr, 1, &c->base);
			view_reader_close(&c->lvr);
		}
	}
	if (!ret)
		ret = cal_layout(c->t, NULL, vmas, pages);
	if (!ret)
		ret = view_reader_open_model(&c->mvr, c->mm, view, VML_LOCK_MMAP);
	c->mopen = !ret;
	if (!ret)
		ret = view_reader_open_live(&c->lvr, target_pid(c->t), view);
	c->lopen = !ret && c->mopen;
	return ret;
}

static void cal_side_close(struct cal_side *c)
{
	if (c->lopen)
		view_reader_close(&c->lvr);
	if (c->mopen)
		view_reader_close(&c->mvr);
	target_destroy(c->t);
	vml_mm_destroy(c->mm);
}

/* One round: ns per VMA of each side on this layout. */
static int cal_round(struct cal_side *c, double *model, double *live)
{
	double m, l;
	int ret = view_reader_ns_per_record(&c->mvr, 1, CAL_SAMPLE_NS, &m);

	if (!ret)
		ret = view_reader_ns_per_record(&c->lvr, 1, CAL_SAMPLE_NS, &l);
	if (ret)
		return ret;
	*model = m / (double)c->vmas;
	*live = l > c->base ? (l - c->base) / (double)c->vmas : 0;
	return 0;
}

int bench_calibrate_record(enum vml_view view, struct bench_calibration *cal)
{
	double mr[CAL_SAMPLES], lr[CAL_SAMPLES], mp[CAL_SAMPLES], lp[CAL_SAMPLES];
	struct cal_side small = { 0 }, big = { 0 };
	struct vml_sys_config cfg;
	struct vml_sys *sys = NULL;
	int ret;

	*cal = (struct bench_calibration){ 0 };
	ret = host_current_config(0, &cfg);
	if (!ret)
		ret = vml_sys_create(&cfg, &sys);
	if (!ret)
		ret = cal_side_open(&small, sys, view, CAL_VMAS, CAL_PAGES);
	if (!ret)
		ret = cal_side_open(&big, sys, view, CAL_BIG_VMAS, CAL_BIG_PAGES);
	/*
	 * Rounds of all four, each fitted on its own (t = a + b * pages per VMA:
	 * a per record, b per page walked), so load changes between rounds hit
	 * a round's four figures alike; the medians of the rounds' fits.
	 */
	for (int s = 0; s < CAL_SAMPLES && !ret; s++) {
		double m4, l4, m64, l64;

		ret = cal_round(&small, &m4, &l4);
		if (!ret)
			ret = cal_round(&big, &m64, &l64);
		if (ret)
			break;
		mp[s] = (m64 - m4) / (double)(CAL_BIG_PAGES - CAL_PAGES);
		lp[s] = (l64 - l4) / (double)(CAL_BIG_PAGES - CAL_PAGES);
		mr[s] = m4 - CAL_PAGES * mp[s];
		lr[s] = l4 - CAL_PAGES * lp[s];
	}
	if (!ret)
		ret = cal_eof(&small.mvr, &small.lvr, cal);
	cal_side_close(&big);
	cal_side_close(&small);
	vml_sys_destroy(sys);
	if (ret)
		return ret;
	cal->model_page_ns = VML_MAX(stat_median(mp, CAL_SAMPLES), 0.0);
	cal->live_page_ns = VML_MAX(stat_median(lp, CAL_SAMPLES), 0.0);
	cal->model_ns = stat_median(mr, CAL_SAMPLES);
	cal->live_ns = stat_median(lr, CAL_SAMPLES);
	cal->record_ns = cal->live_ns > cal->model_ns ? cal->live_ns - cal->model_ns : 0;
	cal->page_ns = cal->live_page_ns > cal->model_page_ns ?
		       cal->live_page_ns - cal->model_page_ns : 0;
	/*
	 * The race a reader's release starts (docs/kernel.md §5.3): the reader
	 * comes back for the lock after the rest of its read() and the next
	 * one's start - the end-of-file read() cost on the live side, nearly
	 * nothing on the model's - while the woken writer gets the lock. The
	 * model's writer, once switched in, also returns from futex_wait to
	 * user space before it tries, which the kernel's does not (wakeret.c);
	 * where that cannot be measured, a futex_wait round trip that does not
	 * sleep stands in for it (it misses what only a woken return does, so
	 * it is less). The reader is charged both, so the race's margin is the
	 * kernel's (docs/findings/2026-12-01-what-decides-the-regime.md,
	 * docs/findings/2026-12-02-the-close-race.md).
	 */
	cal->call_ns = cal->live_call_ns - cal->model_call_ns +
		       (cal->wake_return_ns > 0 ? cal->wake_return_ns : cal->futex_ns);
	if (cal->call_ns < 0)
		cal->call_ns = 0;
	cal->done = true;
	return 0;
}

void bench_charges(const struct bench_charge_opts *o, enum vml_view view,
		   const struct bench_calibration *cal, double *record_ns, double *page_ns,
		   double *call_ns)
{
	*record_ns = o->record_ns >= 0 ? (double)o->record_ns : cal ? cal->record_ns : 0;
	*page_ns = o->page_ns >= 0 ? (double)o->page_ns :
		   o->record_ns < 0 && cal && bench_view_walks_pages(view) ? cal->page_ns : 0;
	*call_ns = o->call_ns >= 0 ? (double)o->call_ns : cal ? cal->call_ns : 0;
}
