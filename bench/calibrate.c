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
 * pages: a per record, b per page walked, and the model is charged both
 * differences (vml_reader_set_record_cost, vml_reader_set_page_cost).
 * Uncontended whole-view reads, median of 5 samples of at least 30 ms each.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "target/host.h"
#include "internal.h"
#include "util/clock.h"

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
	for (int s = 0; s < CAL_SAMPLES; s++) {
		uint64_t t0 = vml_now_ns();

		for (int i = 0; i < 4096; i++)
			syscall(SYS_getppid);
		m[s] = (double)(vml_now_ns() - t0) / 4096;
	}
	cal->syscall_ns = stat_median(m, CAL_SAMPLES);
	return 0;
}

/*
 * One layout (@vmas VMAs of @pages pages) on both sides: the median ns per
 * VMA of whole-view reads into *@model and *@live; with @cal, also the
 * end-of-file read() costs.
 */
static int cal_one(enum vml_view view, unsigned long vmas, unsigned long pages, double *model,
		   double *live, struct bench_calibration *cal)
{
	struct view_reader mvr, lvr;
	struct vml_sys_config cfg;
	struct vml_sys *sys = NULL;
	struct vml_mm *mm = NULL;
	struct target *t = NULL;
	double base = 0;
	int ret;

	ret = host_current_config(0, &cfg);
	if (!ret)
		ret = vml_sys_create(&cfg, &sys);
	if (!ret)
		ret = vml_mm_create(sys, &mm);
	if (!ret)
		ret = cal_layout(NULL, mm, vmas, pages);
	if (!ret)
		ret = target_create(TARGET_LIVE, NULL, &t);
	/* The child's own mappings (binary, libc, stack...): read before the layout, taken off. */
	if (!ret) {
		ret = view_reader_open_live(&lvr, target_pid(t), view);
		if (!ret) {
			ret = cal_measure(&lvr, 1, &base);
			view_reader_close(&lvr);
		}
	}
	if (!ret)
		ret = cal_layout(t, NULL, vmas, pages);
	if (!ret)
		ret = view_reader_open_model(&mvr, mm, view, VML_LOCK_MMAP);
	if (!ret) {
		ret = view_reader_open_live(&lvr, target_pid(t), view);
		if (!ret) {
			/* whole passes, interleaved, so load changes hit both sides alike */
			ret = cal_measure(&mvr, 1, model);
			if (!ret)
				ret = cal_measure(&lvr, 1, live);
			if (!ret)
				ret = cal_measure(&mvr, 1, model);
			if (!ret && cal)
				ret = cal_eof(&mvr, &lvr, cal);
			view_reader_close(&lvr);
		}
		view_reader_close(&mvr);
	}
	target_destroy(t);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
	if (ret)
		return ret;
	/* per VMA of the layout */
	*model /= (double)vmas;
	*live = *live > base ? (*live - base) / (double)vmas : 0;
	return 0;
}

int bench_calibrate_record(enum vml_view view, struct bench_calibration *cal)
{
	double m4, l4, m64, l64, mp, lp;
	int ret;

	*cal = (struct bench_calibration){ 0 };
	ret = cal_one(view, CAL_VMAS, CAL_PAGES, &m4, &l4, cal);
	if (!ret)
		ret = cal_one(view, CAL_BIG_VMAS, CAL_BIG_PAGES, &m64, &l64, NULL);
	if (ret)
		return ret;
	/* t = a + b * pages on each side: a per record, b per page walked */
	mp = (m64 - m4) / (double)(CAL_BIG_PAGES - CAL_PAGES);
	lp = (l64 - l4) / (double)(CAL_BIG_PAGES - CAL_PAGES);
	cal->model_page_ns = mp > 0 ? mp : 0;
	cal->live_page_ns = lp > 0 ? lp : 0;
	cal->model_ns = m4 - CAL_PAGES * cal->model_page_ns;
	cal->live_ns = l4 - CAL_PAGES * cal->live_page_ns;
	cal->record_ns = cal->live_ns > cal->model_ns ? cal->live_ns - cal->model_ns : 0;
	cal->page_ns = cal->live_page_ns > cal->model_page_ns ?
		       cal->live_page_ns - cal->model_page_ns : 0;
	/*
	 * The race a reader's release starts (REFERENCE.md 5.3): the reader
	 * comes back for the lock after the rest of its read() and the next
	 * one's start - the end-of-file read() cost on the live side, nearly
	 * nothing on the model's - while the woken writer gets the lock. The
	 * model's writer also returns from futex_wait to user space before it
	 * tries, which the kernel's does not: one more system call's worth on
	 * its side. The reader is charged both, so the race's margin is the
	 * kernel's (bench/README.md, "What decides the regime").
	 */
	cal->call_ns = cal->live_call_ns - cal->model_call_ns + cal->syscall_ns;
	if (cal->call_ns < 0)
		cal->call_ns = 0;
	cal->done = true;
	return 0;
}
