// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stress: MADV_DONTNEED under a VMA read lock (6.18's madvise_lock), or
 * over VMAs under mmap_lock(R), while other threads fault huge and small
 * pages into the same VMAs, and an
 * unmapper frees whole PMD ranges' page tables and maps them back, so that
 * a fault may map a huge page between the zap's split of its edges and its
 * walk (the partly covered huge PMD the zap splits itself). Checked after
 * the threads join: the resident-page counter equals what the page tables
 * map, counted by walking them. Seed printed (VML_SEED replays the
 * threads' choices).
 *
 * With VML_MTHP=1 the small faults are 16 and 64 KiB mTHPs, and a forker
 * forks the address space over and over, writes into the child and lets
 * it go, so large folios are shared, copied on write and unshared (their
 * mm slots, folio->mapcount_lock) under the zaps and faults.
 *
 * With VML_SHMEM=1 the region is shared anonymous memory with shmem THP
 * "always": faults map the objects' 2 MiB folios by PMD (or small pages
 * where a partial zap left a table), racing in the page cache and at the
 * PMD, and a partial zap drops a whole file PMD.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapped_pages.h"
#include "mm_helpers.h"
#include "run_threads.h"
#include "tap.h"
#include "util/rand.h"

#define M2 (2UL << 20)
#define RANGES 4
#define REGION (BASE + 64 * M2)

static struct vml_mm *mm;
static uint64_t seed;
static atomic_bool stop;
static atomic_ulong zaps, faults, remaps, forks;
static bool shmem;

/* The region's memory: private anonymous, or shared (VML_SHMEM=1). */
static int map_region(unsigned long addr, unsigned long len)
{
	return vml_mmap(mm, addr, len, PROT_READ | PROT_WRITE,
			(shmem ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS | MAP_FIXED, NULL, 0,
			NULL);
}

/* A range inside one PMD range, rarely aligned to anything: a partial zap. */
static void pick(struct vml_rand *r, unsigned long *a, unsigned long *len)
{
	unsigned long pmd = REGION + vml_rand_below(r, RANGES) * M2;
	unsigned long first = vml_rand_below(r, 512), n = 1 + vml_rand_below(r, 512 - first);

	*a = pmd + first * PG;
	*len = n * PG;
}

static void *zapper(void *arg)
{
	struct vml_rand r = vml_rand_init(seed, (uintptr_t)arg);

	while (!atomic_load(&stop)) {
		unsigned long a, len;

		pick(&r, &a, &len);
		/* One in four runs on into the next PMD range: over VMAs, under mmap_lock(R). */
		if (!vml_rand_below(&r, 4) && a + len + M2 <= REGION + RANGES * M2)
			len += M2;
		may_fail(vml_madvise(mm, a, len, MADV_DONTNEED));
		atomic_fetch_add(&zaps, 1);
	}
	return NULL;
}

static void *faulter(void *arg)
{
	struct vml_rand r = vml_rand_init(seed, 100 + (uintptr_t)arg);

	while (!atomic_load(&stop)) {
		unsigned long a, len;

		pick(&r, &a, &len);
		/* One page: an empty PMD then takes a huge page (THP always). */
		may_fail(vml_touch(mm, a, PG, VML_TOUCH_WRITE));
		atomic_fetch_add(&faults, 1);
	}
	return NULL;
}

static void *forker(void *arg)
{
	struct vml_rand r = vml_rand_init(seed, 300 + (uintptr_t)arg);

	while (!atomic_load(&stop)) {
		struct vml_mm *child;
		unsigned long a, len;

		if (may_fail(vml_fork(mm, &child)))
			continue;
		/* Copy-on-write in the child; the parent's faulters copy on their side. */
		pick(&r, &a, &len);
		may_fail(vml_touch(child, a, len, VML_TOUCH_WRITE));
		usleep(200);
		vml_mm_destroy(child);
		atomic_fetch_add(&forks, 1);
	}
	return NULL;
}

static void *unmapper(void *arg)
{
	struct vml_rand r = vml_rand_init(seed, 200 + (uintptr_t)arg);

	while (!atomic_load(&stop)) {
		unsigned long pmd = REGION + vml_rand_below(&r, RANGES) * M2;

		/* Frees the range's page tables: its PMD entry is empty until the next fault. */
		may_fail(vml_munmap(mm, pmd, M2));
		map_region(pmd, M2);
		atomic_fetch_add(&remaps, 1);
		usleep(100);
	}
	return NULL;
}

int main(void)
{
	double secs = tap_stress_seconds(3);
	struct vml_mm_stats ms;
	struct vml_sys *sys;
	struct vml_sys_config cfg = { .thp = VML_THP_ALWAYS };
	const char *env = getenv("VML_MTHP");
	bool mthp = env && !strcmp(env, "1");
	long mapped;

	env = getenv("VML_SHMEM");
	shmem = env && !strcmp(env, "1");
	if (shmem)
		cfg.shmem_huge = VML_SHMEM_HUGE_ALWAYS;
	seed = tap_seed();
	if (mthp)
		cfg.thp_anon[2] = cfg.thp_anon[4] = VML_MTHP_ALWAYS;	/* 16 and 64 KiB */
	if (vml_sys_create(&cfg, &sys) || vml_mm_create(sys, &mm))
		return 1;
	map_region(REGION, RANGES * M2);

	run_threads((const struct thread_group[]){ { zapper, 2 }, { faulter, 2 }, { unmapper, 1 },
						    { forker, mthp ? 1 : 0 } },
		    4, secs, &stop);

	vml_mm_stats(mm, &ms);
	tap_diag("%lu zaps, %lu faults, %lu remaps, %lu forks; %llu VMA locks taken",
		 atomic_load(&zaps), atomic_load(&faults), atomic_load(&remaps), atomic_load(&forks),
		 (unsigned long long)ms.vma_lock_success);
	ok(atomic_load(&zaps) > 0 && atomic_load(&faults) > 0 && atomic_load(&remaps) > 0,
	   "every thread made progress");
	is_int(ms.rss_pages, mapped_pages(mm), "the RSS counter matches the page tables");

	/* Quiescent: zap everything the VMA lock way, one PMD range at a time. */
	for (unsigned long a = REGION; a < REGION + RANGES * M2; a += M2)
		is_int(vml_madvise(mm, a + PG, M2 - 2 * PG, MADV_DONTNEED), 0,
		       "zap all but the ends of 0x%lx", a);
	vml_mm_stats(mm, &ms);
	mapped = mapped_pages(mm);
	is_int(ms.rss_pages, mapped, "...and again after");
	ok(mapped <= 2 * RANGES, "at most the ends stay mapped (%ld pages)", mapped);

	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
	return tap_done();
}
