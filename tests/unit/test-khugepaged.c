// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * khugepaged: collapse of a PMD range of small pages, the limits that stop
 * it, and the two policies' differences (resume address after a contended
 * trylock, skip batches that drop mmap_lock).
 */
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm_helpers.h"
#include "tap.h"
#include <unistd.h>
#include "vmalock/khugepaged.h"

#define M2 (2UL << 20)

static struct vml_sys *sys;

static bool pmd_huge_at(struct vml_mm *umm, unsigned long addr)
{
	int err = 0;
	_Atomic uint64_t *pmd = pmd_offset(to_mm(umm), addr, false, &err);

	return pmd && pmd_is_huge(load_relaxed(pmd));
}

/* An mm with @skip ineligible single-page VMAs, then a 2 MiB range of small pages. */
static struct vml_mm *layout(unsigned long skip, unsigned long touched)
{
	struct vml_mm *mm;

	if (vml_mm_create(sys, &mm))
		abort();
	for (unsigned long i = 0; i < skip; i++)
		map_anon(mm, BASE + 2 * i * PG, PG, PROT_READ | ((i & 1) ? PROT_WRITE : 0));
	/* Touch first (THP mode madvise: small pages), then advise: collapsible. */
	map_anon(mm, BASE + 64 * M2, M2, PROT_READ | PROT_WRITE);
	must_succeed(vml_touch(mm, BASE + 64 * M2, touched * PG, VML_TOUCH_WRITE));
	must_succeed(vml_madvise(mm, BASE + 64 * M2, M2, MADV_HUGEPAGE));
	return mm;
}

/* One wakeup of a scanner made with @cfg over @mm alone; then both go. Return: its stats. */
static struct vml_khugepaged_stats scan_once(struct vml_mm *mm,
					     const struct vml_khugepaged_config *cfg)
{
	struct vml_khugepaged_stats st;
	struct vml_khugepaged *k;

	must_succeed(vml_khugepaged_create(sys, cfg, &k));
	must_succeed(vml_khugepaged_add(k, mm));
	vml_khugepaged_scan(k);
	vml_khugepaged_stats(k, &st);
	vml_khugepaged_destroy(k);
	vml_mm_destroy(mm);
	return st;
}

static void test_collapse(void)
{
	struct vml_khugepaged_config cfg = { .policy = VML_KHUGEPAGED_FIXED };
	struct vml_khugepaged_stats st;
	struct vml_khugepaged *k;
	struct vml_mm_stats ms;
	struct vml_mm *mm = layout(0, 512);

	is_int(vml_khugepaged_create(sys, &cfg, &k), 0, "scanner");
	is_int(vml_khugepaged_add(k, mm), 0, "register the mm");
	is_int(vml_khugepaged_add(k, mm), -EEXIST, "twice is EEXIST");
	ok(!pmd_huge_at(mm, BASE + 64 * M2), "small pages before");
	is_int(vml_khugepaged_scan(k), 0, "one wakeup");
	vml_khugepaged_stats(k, &st);
	is_int(st.pages_collapsed, 1, "one collapse");
	ok(pmd_huge_at(mm, BASE + 64 * M2), "a huge PMD after");
	vml_mm_stats(mm, &ms);
	is_int(ms.rss_pages, 512, "RSS unchanged by the collapse");
	is_int(vml_touch(mm, BASE + 64 * M2, M2, VML_TOUCH_WRITE), 0, "still writable");
	vml_khugepaged_destroy(k);
	vml_mm_destroy(mm);

	/* Too few pages: 513 - 1 = 512 empty entries > max_ptes_none (511) needs 0 pages. */
	st = scan_once(layout(0, 0), &cfg);
	is_int(st.pages_collapsed, 0, "an empty range is not collapsed");

	cfg.max_ptes_none = 64;
	st = scan_once(layout(0, 400), &cfg);
	is_int(st.pages_collapsed, 0, "112 empty entries exceed max_ptes_none=64");
}

static void test_policies(void)
{
	struct vml_khugepaged_config cfg = { .policy = VML_KHUGEPAGED_MAINLINE };
	struct vml_khugepaged_stats st;
	struct vml_khugepaged *k;
	struct vml_mm *mm;
	struct mm *m;

	/* MAINLINE: 5000 ineligible VMAs are walked in one hold, no drops. */
	st = scan_once(layout(5000, 512), &cfg);
	is_int(st.vmas_skipped, 5000, "MAINLINE: every ineligible VMA charged");
	is_int(st.lock_drops, 0, "MAINLINE: no drops");
	is_int(st.pages_collapsed, 1, "MAINLINE: then the range collapses");
	tap_diag("MAINLINE longest mmap_lock hold: %.3f ms", (double)st.max_hold_ns / 1e6);

	cfg.policy = VML_KHUGEPAGED_FIXED;
	st = scan_once(layout(5000, 512), &cfg);
	is_int(st.lock_drops, 5000 / 1024, "FIXED: mmap_lock dropped every 1024 skipped VMAs");
	is_int(st.pages_collapsed, 1, "FIXED: the range collapses");
	tap_diag("FIXED longest mmap_lock hold: %.3f ms", (double)st.max_hold_ns / 1e6);

	/* The drop fix alone: the walk goes on from the last skipped VMA's end. */
	cfg = (struct vml_khugepaged_config){ .fixes = VML_KHUGEPAGED_FIX_DROP };
	st = scan_once(layout(5000, 512), &cfg);
	is_int(st.lock_drops, 5000 / 1024, "FIX_DROP alone: dropped every 1024 skipped VMAs");
	is_int(st.vmas_skipped, 5000, "FIX_DROP alone: each ineligible VMA walked once");
	is_int(st.pages_collapsed, 1, "FIX_DROP alone: the range collapses");
	/* Two clocks read a few hundred ns apart at each end: allow 0.1 ms of skew. */
	ok(st.max_hold_cpu_ns <= st.max_hold_ns + 100000,
	   "the CPU time of a hold is within its length");
	is_int(vml_khugepaged_create(sys, &(struct vml_khugepaged_config){ .fixes = 8 }, &k),
	       -EINVAL, "an unknown fix is refused");

	/*
	 * A contended trylock: MAINLINE forgets where the mm's scan was, FIXED
	 * keeps it. Budget: one mm visit + one PMD range per wakeup.
	 *   wakeup 1 (free):      collapse range 1; the next address is range 2
	 *   wakeup 2 (contended): trylock fails; the cursor moves on
	 *   wakeup 3 (free):      MAINLINE restarts at 0 and spends the budget on
	 *                         range 1 (already huge); FIXED resumes at range 2.
	 */
	for (int v = 0; v < 4; v++) {
		/* MAINLINE, FIXED, and each of resume and skip alone */
		static const char *const names[] = { "MAINLINE", "FIXED", "FIX_RESUME alone",
						     "FIX_SKIP alone" };
		static const unsigned int fixes[] = { 0, 0, VML_KHUGEPAGED_FIX_RESUME,
						      VML_KHUGEPAGED_FIX_SKIP };
		const char *name = names[v];
		bool fixed = v == 1 || v == 2;	/* resuming is what wakeup 3 needs */

		cfg = (struct vml_khugepaged_config){
			.policy = v == 1 ? VML_KHUGEPAGED_FIXED : VML_KHUGEPAGED_MAINLINE,
			.fixes = fixes[v],
			.pages_to_scan = 513,
		};
		mm = layout(0, 512);
		map_anon(mm, BASE + 65 * M2, M2, PROT_READ | PROT_WRITE);
		must_succeed(vml_touch(mm, BASE + 65 * M2, M2, VML_TOUCH_WRITE));
		must_succeed(vml_madvise(mm, BASE + 65 * M2, M2, MADV_HUGEPAGE));
		must_succeed(vml_khugepaged_create(sys, &cfg, &k));
		must_succeed(vml_khugepaged_add(k, mm));
		vml_khugepaged_scan(k);
		vml_khugepaged_stats(k, &st);
		is_int(st.pages_collapsed, 1, "%s: wakeup 1 collapses the first range", name);
		m = to_mm(mm);
		mmap_write_lock(m);
		vml_khugepaged_scan(k);
		mmap_write_unlock(m);
		vml_khugepaged_stats(k, &st);
		/* The kernel goes through the list up to twice per wakeup: two failures. */
		is_int(st.trylock_failures, 2, "%s: wakeup 2 finds mmap_lock contended", name);
		vml_khugepaged_scan(k);
		vml_khugepaged_stats(k, &st);
		is_int(st.pages_collapsed, fixed ? 2 : 1,
		       "%s: wakeup 3 %s", name,
		       fixed ? "resumes at the second range" : "starts over and runs out of budget");
		vml_khugepaged_destroy(k);
		vml_mm_destroy(mm);
	}
}

static void test_thread_and_exit(void)
{
	struct vml_khugepaged_config cfg = { .policy = VML_KHUGEPAGED_FIXED, .scan_sleep_ms = 1 };
	struct vml_khugepaged_stats st;
	struct vml_khugepaged *k;
	struct vml_mm *mm = layout(10, 512);

	must_succeed(vml_khugepaged_create(sys, &cfg, &k));
	must_succeed(vml_khugepaged_add(k, mm));
	is_int(vml_khugepaged_start(k), 0, "thread started");
	/* Up to 30 s: a loaded machine may run the scanner thread late. */
	for (int i = 0; i < 30000; i++) {
		vml_khugepaged_stats(k, &st);
		if (st.pages_collapsed)
			break;
		usleep(1000);
	}
	is_int(st.pages_collapsed, 1, "the thread collapsed the range");
	vml_mm_destroy(mm);	/* exits while registered: the scanner drops it */
	usleep(20000);
	vml_khugepaged_stop(k);
	vml_khugepaged_destroy(k);
	ok(1, "an exited mm leaves the scanner cleanly");
}

int main(void)
{
	if (vml_sys_create(NULL, &sys))
		return 1;
	test_collapse();
	test_policies();
	test_thread_and_exit();
	vml_sys_destroy(sys);
	return tap_done();
}
