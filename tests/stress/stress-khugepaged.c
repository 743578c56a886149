// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stress: the khugepaged thread collapses PMD ranges while writers fault,
 * zap, split and merge them and readers read maps. Checked after the
 * threads join: the resident-page counter equals what the page tables map
 * (counted by walking them), collapses happened, and the maps text is
 * consistent. Seed printed (VML_SEED replays the writers' choices).
 */
#include <pthread.h>
#include <stdatomic.h>

#include "mapped_pages.h"
#include "mm_helpers.h"
#include "run_threads.h"
#include "tap.h"
#include "util/rand.h"
#include "vmalock/khugepaged.h"

#define M2 (2UL << 20)
#define RANGES 4
#define REGION (BASE + 64 * M2)

static struct vml_mm *mm;
static uint64_t seed;
static atomic_bool stop;
static atomic_ulong ops, reads;

static void *writer(void *arg)
{
	struct vml_rand r = vml_rand_init(seed, (uintptr_t)arg);

	while (!atomic_load(&stop)) {
		unsigned long a = REGION + vml_rand_below(&r, RANGES * 512) * PG;
		unsigned long len = (1 + vml_rand_below(&r, 64)) * PG;

		if (a + len > REGION + RANGES * M2)
			len = REGION + RANGES * M2 - a;
		switch (vml_rand_below(&r, 5)) {
		case 0:
			may_fail(vml_madvise(mm, a, len, MADV_DONTNEED));
			break;
		case 1:
			may_fail(vml_mprotect(mm, a, len, PROT_READ));
			may_fail(vml_mprotect(mm, a, len, PROT_READ | PROT_WRITE));
			break;
		default:
			may_fail(vml_touch(mm, a, len, VML_TOUCH_WRITE));
			break;
		}
		atomic_fetch_add(&ops, 1);
	}
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		char *m = read_view(mm, VML_VIEW_MAPS, VML_LOCK_VMA, 4096);

		free(m);
		atomic_fetch_add(&reads, 1);
	}
	return NULL;
}

int main(void)
{
	struct vml_khugepaged_config cfg = { .policy = VML_KHUGEPAGED_FIXED, .scan_sleep_ms = 1 };
	double secs = tap_stress_seconds(3);
	struct vml_khugepaged_stats ks;
	struct vml_khugepaged *k;
	struct vml_mm_stats ms;
	struct vml_sys *sys;
	long mapped;
	char *m;

	seed = tap_seed();
	if (vml_sys_create(NULL, &sys) || vml_mm_create(sys, &mm))
		return 1;
	map_anon(mm, REGION, RANGES * M2, PROT_READ | PROT_WRITE);
	/* small pages first */
	must_succeed(vml_touch(mm, REGION, RANGES * M2, VML_TOUCH_WRITE));
	must_succeed(vml_madvise(mm, REGION, RANGES * M2, MADV_HUGEPAGE));
	must_succeed(vml_khugepaged_create(sys, &cfg, &k));
	must_succeed(vml_khugepaged_add(k, mm));
	must_succeed(vml_khugepaged_start(k));

	run_threads((const struct thread_group[]){ { writer, 2 }, { reader, 1 } }, 2, secs, &stop);
	vml_khugepaged_stop(k);

	vml_khugepaged_stats(k, &ks);
	tap_diag("%lu ops, %lu reads, %llu collapses, %llu wakeups, longest hold %.3f ms",
		 atomic_load(&ops), atomic_load(&reads), (unsigned long long)ks.pages_collapsed,
		 (unsigned long long)ks.wakeups, (double)ks.max_hold_ns / 1e6);
	ok(ks.wakeups > 0, "the scanner ran");

	/* Quiescent: collapse once more, then count what the page tables map. */
	must_succeed(vml_touch(mm, REGION, RANGES * M2, VML_TOUCH_WRITE));
	must_succeed(vml_mprotect(mm, REGION, RANGES * M2, PROT_READ | PROT_WRITE));
	vml_khugepaged_scan(k);
	vml_khugepaged_stats(k, &ks);
	ok(ks.pages_collapsed > 0, "ranges were collapsed (%llu)",
	   (unsigned long long)ks.pages_collapsed);
	mapped = mapped_pages(mm);
	vml_mm_stats(mm, &ms);
	is_int(ms.rss_pages, mapped, "the RSS counter matches the page tables");
	is_int(mapped, RANGES * 512, "the whole region is mapped after a full write");
	m = read_view(mm, VML_VIEW_MAPS, VML_LOCK_VMA, 4096);
	is_int(count_lines(m), 1, "the region is one VMA again");
	free(m);

	vml_khugepaged_destroy(k);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
	return tap_done();
}
