// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Anonymous multi-size THP on the model (docs/kernel-folios.md §14): which folio
 * size a fault allocates (the largest allowed whose aligned block lies in
 * the VMA and is all empty), THPeligible, copy-on-write after fork, the
 * large folio's mm slots (maybe mapped shared, and exclusive again once the
 * child is gone), zero-filled pages going to the zero page when a folio
 * is split, partial unmap, and a locked VMA; and shmem THP below the PMD
 * size in shared anonymous memory (docs/kernel-folios.md §15): the size a fault
 * takes, within_size, and force. Expected values are
 * worked out in the comments; the corpus scripts tests/scripts/mthp-*.ops
 * and shmem-mthp-*.ops
 * check the same rules against the live kernel.
 */
#include <stdio.h>

#include "mm_helpers.h"
#include "tap.h"

#define K64 (64UL << 10)

/* A model with these anonymous sizes (order -> mode) and global mode @thp. */
static struct vml_sys *new_sys(enum vml_thp_mode thp, bool zero_page, const int *modes)
{
	struct vml_sys_config cfg = { .thp = thp, .use_zero_page = zero_page };
	struct vml_sys *sys;

	for (unsigned int o = 0; modes && o < VML_THP_ORDERS; o++)
		cfg.thp_anon[o] = (enum vml_mthp_mode)modes[o];
	if (vml_sys_create(&cfg, &sys))
		abort();
	return sys;
}

/* The value (kB) of @field in the first smaps record of @mm, or -1. */
static long smaps_kb(struct vml_mm *mm, const char *field)
{
	char *t = read_view(mm, VML_VIEW_SMAPS, VML_LOCK_VMA, 4096);
	char key[40];
	const char *p;
	long v = -1;

	snprintf(key, sizeof(key), "\n%s:", field);
	p = t ? strstr(t, key) : NULL;
	if (p)
		v = strtol(p + strlen(key), NULL, 10);
	free(t);
	return v;
}

static void is_numa(struct vml_mm *mm, const char *want, const char *what)
{
	char *t = read_view(mm, VML_VIEW_NUMA_MAPS, VML_LOCK_VMA, 4096);

	is_str(t, want, "%s", what);
	free(t);
}

/* orders 2, 3, 4 = 16, 32, 64 KiB */
static const int only64[VML_THP_ORDERS] = { [4] = VML_MTHP_ALWAYS };
static const int all_small[VML_THP_ORDERS] = { [2] = VML_MTHP_ALWAYS, [3] = VML_MTHP_ALWAYS,
					       [4] = VML_MTHP_ALWAYS };

static void test_config(void)
{
	struct vml_sys_config cfg = { 0 };
	struct vml_sys *sys;

	cfg.thp_anon[1] = VML_MTHP_ALWAYS;
	is_int(vml_sys_create(&cfg, &sys), -EINVAL, "order 1 has no anonymous THP: EINVAL");
	cfg.thp_anon[1] = VML_MTHP_NEVER;
	cfg.thp_anon[4] = (enum vml_mthp_mode)(VML_MTHP_INHERIT + 1);
	is_int(vml_sys_create(&cfg, &sys), -EINVAL, "a mode out of range: EINVAL");
}

static void test_fault_order(void)
{
	struct vml_sys *sys = new_sys(VML_THP_MADVISE, true, only64);
	struct vml_mm *mm = mm_of_sys(sys);

	must_succeed(map_anon(mm, BASE, 1UL << 20, PROT_READ | PROT_WRITE));
	is_int(smaps_kb(mm, "THPeligible"), 1, "64K always: a 1M VMA is eligible");
	must_succeed(vml_touch(mm, BASE + 0x5000, 1, VML_TOUCH_WRITE));
	/* The aligned 64K block around the write, all of it young, dirty, private. */
	is_int(smaps_kb(mm, "Rss"), 64, "one write maps 64 kB");
	is_int(smaps_kb(mm, "Referenced"), 64, "every entry young");
	is_int(smaps_kb(mm, "Private_Dirty"), 64, "every entry dirty");
	is_int(smaps_kb(mm, "AnonHugePages"), 0, "a PTE-mapped mTHP is no AnonHugePages");
	/* A read with the zero page maps the zero page alone. */
	must_succeed(vml_touch(mm, BASE + 0x20000, 1, VML_TOUCH_READ));
	is_int(smaps_kb(mm, "Rss"), 64, "a read maps the zero page: no Rss");
	/* ... and the next write in that block cannot have 64K: only 64K is on, so 4K. */
	must_succeed(vml_touch(mm, BASE + 0x24000, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 68, "a write next to the zero page: a small page");
	is_numa(mm, "100000000000 default anon=17 dirty=17 active=0 N0=17 kernelpagesize_kB=4\n",
		"numa_maps counts pages");
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

static void test_fallback(void)
{
	struct vml_sys *sys = new_sys(VML_THP_MADVISE, true, all_small);
	struct vml_mm *mm = mm_of_sys(sys);

	/* [BASE+32K, BASE+96K): 64K long, but no aligned 64K block fits in it. */
	must_succeed(map_anon(mm, BASE + 0x8000, K64, PROT_READ | PROT_WRITE));
	is_int(smaps_kb(mm, "THPeligible"), 1, "eligible: 32K and 16K blocks fit");
	must_succeed(vml_touch(mm, BASE + 0x8000, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 32, "at the VMA's start: the 32K block");
	must_succeed(vml_munmap(mm, BASE + 0x8000, K64));
	/* Next to a mapped entry: a zero-page read rules out the blocks holding it. */
	must_succeed(map_anon(mm, BASE, K64, PROT_READ | PROT_WRITE));
	must_succeed(vml_touch(mm, BASE + 0x4000, 1, VML_TOUCH_READ));
	must_succeed(vml_touch(mm, BASE, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 16, "64K and 32K blocks hold the zero page: 16K");
	must_succeed(vml_touch(mm, BASE + 0x8000, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 48, "the other half's 32K block is empty: 32K");
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

static void test_modes(void)
{
	static const int madv64[VML_THP_ORDERS] = { [4] = VML_MTHP_MADVISE };
	static const int inherit64[VML_THP_ORDERS] = { [4] = VML_MTHP_INHERIT };
	struct vml_sys *sys = new_sys(VML_THP_NEVER, true, madv64);
	struct vml_mm *mm = mm_of_sys(sys);

	must_succeed(map_anon(mm, BASE, 2 * K64, PROT_READ | PROT_WRITE));
	is_int(smaps_kb(mm, "THPeligible"), 0, "madvise mode, not advised: not eligible");
	must_succeed(vml_touch(mm, BASE, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 4, "not advised: a small page");
	must_succeed(vml_madvise(mm, BASE, 2 * K64, MADV_HUGEPAGE));
	is_int(smaps_kb(mm, "THPeligible"), 1, "advised: eligible (global never does not matter)");
	must_succeed(vml_touch(mm, BASE + K64, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 68, "advised: 64K");
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);

	sys = new_sys(VML_THP_MADVISE, true, inherit64);
	mm = mm_of_sys(sys);
	must_succeed(map_anon(mm, BASE, K64, PROT_READ | PROT_WRITE));
	is_int(smaps_kb(mm, "THPeligible"), 0, "inherit from madvise, not advised: no");
	must_succeed(vml_madvise(mm, BASE, K64, MADV_HUGEPAGE));
	must_succeed(vml_touch(mm, BASE, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 64, "inherit from madvise, advised: 64K");
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

static void test_cow(void)
{
	struct vml_sys *sys = new_sys(VML_THP_MADVISE, true, only64);
	struct vml_mm *mm = mm_of_sys(sys), *child;

	must_succeed(map_anon(mm, BASE, K64, PROT_READ | PROT_WRITE));
	must_succeed(vml_touch(mm, BASE, K64, VML_TOUCH_WRITE));	/* data in every page */
	must_succeed(vml_fork(mm, &child));
	is_int(smaps_kb(mm, "Pss"), 32, "shared with the child: Pss 32 kB");
	/* The parent's write copies one page: 4 private + 60 shared (Pss 30). */
	must_succeed(vml_touch(mm, BASE, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 64, "COW keeps Rss");
	is_int(smaps_kb(mm, "Private_Dirty"), 4, "one page copied, not the folio");
	is_int(smaps_kb(mm, "Pss"), 34, "Pss 4 + 60/2");
	/* Shared: a PAGEOUT of part of it leaves it whole (nothing goes active). */
	must_succeed(vml_madvise(mm, BASE + 0x8000, 0x8000, MADV_PAGEOUT));
	is_numa(mm, "100000000000 default anon=16 dirty=16 mapmax=2 active=0 N0=16 "
		    "kernelpagesize_kB=4\n", "a maybe shared folio is not split");
	vml_mm_destroy(child);
	/* The child gone, the parent holds every mapping: exclusive again, split. */
	must_succeed(vml_madvise(mm, BASE + 0x8000, 0x8000, MADV_PAGEOUT));
	is_numa(mm, "100000000000 default anon=16 dirty=16 active=8 N0=16 kernelpagesize_kB=4\n",
		"exclusive again: split, the paged-out half active");
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/* A split maps the pages that hold only zeroes - never written - to the zero page. */
static void test_split_zero(void)
{
	struct vml_sys *sys = new_sys(VML_THP_MADVISE, false, only64);
	struct vml_mm *mm = mm_of_sys(sys);

	must_succeed(map_anon(mm, BASE, K64, PROT_READ | PROT_WRITE));
	must_succeed(vml_touch(mm, BASE + 0x3000, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 64, "one store: a 64K folio, 15 pages of zeroes");
	/* COLD of half splits the folio: 15 zero pages go to the zero page (no zero page host too). */
	must_succeed(vml_madvise(mm, BASE, 0x8000, MADV_COLD));
	is_int(smaps_kb(mm, "Rss"), 4, "after the split only the written page is resident");
	is_numa(mm, "100000000000 default anon=1 dirty=1 active=0 N0=1 kernelpagesize_kB=4\n",
		"numa_maps: one page");
	/* A write to a zero-page entry copies the zero page: a new small page. */
	must_succeed(vml_touch(mm, BASE + 0x8000, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 8, "a write there: a small copy");
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

static void test_partial(void)
{
	struct vml_sys *sys = new_sys(VML_THP_MADVISE, true, only64);
	struct vml_mm *mm = mm_of_sys(sys);

	must_succeed(map_anon(mm, BASE, K64, PROT_READ | PROT_WRITE));
	must_succeed(vml_touch(mm, BASE, 1, VML_TOUCH_WRITE));
	must_succeed(vml_munmap(mm, BASE + 0x4000, 0x4000));
	is_int(smaps_kb(mm, "Rss"), 16, "the first piece keeps its 4 pages");
	must_succeed(vml_mprotect(mm, BASE + 0xc000, 0x4000, PROT_READ));
	must_succeed(vml_mprotect(mm, BASE + 0xc000, 0x4000, PROT_READ | PROT_WRITE));
	/* Write-protected entries of an exclusive folio mapped 12 times: reused. */
	must_succeed(vml_touch(mm, BASE + 0xc000, 0x4000, VML_TOUCH_WRITE));
	is_numa(mm, "100000000000 default anon=4 dirty=4 active=0 N0=4 kernelpagesize_kB=4\n"
		    "100000008000 default anon=8 dirty=8 active=0 N0=8 kernelpagesize_kB=4\n",
		"partly unmapped: 12 pages left, all counted");
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

static void test_locked(void)
{
	struct vml_sys *sys = new_sys(VML_THP_MADVISE, true, only64);
	struct vml_mm *mm = mm_of_sys(sys);

	must_succeed(vml_mmap(mm, BASE, K64, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_LOCKED, NULL, 0, NULL));
	is_numa(mm, "100000000000 default anon=16 dirty=16 N0=16 kernelpagesize_kB=4\n",
		"a new mTHP in a locked VMA is unevictable at once");
	is_int(smaps_kb(mm, "Locked"), 64, "Locked 64 kB");
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/* A model with shmem_enabled @huge and these shmem sizes (order -> mode). */
static struct vml_sys *new_shmem_sys(enum vml_shmem_huge huge, const int *modes)
{
	struct vml_sys_config cfg = { .thp = VML_THP_MADVISE, .shmem_huge = huge };
	struct vml_sys *sys;

	for (unsigned int o = 0; o < VML_THP_ORDERS; o++)
		cfg.shmem_mthp[o] = (enum vml_shmem_mthp_mode)modes[o];
	if (vml_sys_create(&cfg, &sys))
		abort();
	return sys;
}

static int map_shared_anon(struct vml_mm *mm, unsigned long addr, unsigned long len)
{
	return vml_mmap(mm, addr, len, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL);
}

static void test_shmem_config(void)
{
	struct vml_sys_config cfg = { 0 };
	struct vml_sys *sys;

	cfg.shmem_mthp[0] = VML_SHMEM_MTHP_ALWAYS;
	is_int(vml_sys_create(&cfg, &sys), -EINVAL, "order 0 has no shmem THP: EINVAL");
	cfg.shmem_mthp[0] = VML_SHMEM_MTHP_NEVER;
	cfg.shmem_mthp[1] = (enum vml_shmem_mthp_mode)(VML_SHMEM_MTHP_INHERIT + 1);
	is_int(vml_sys_create(&cfg, &sys), -EINVAL, "a shmem mode out of range: EINVAL");
	cfg.shmem_mthp[1] = VML_SHMEM_MTHP_ALWAYS;	/* 8 KiB: shmem has order 1 */
	is_int(vml_sys_create(&cfg, &sys), 0, "8 KiB shmem THP: accepted");
	vml_sys_destroy(sys);
}

/* Shared anonymous memory with 64, 16 and 8 KiB shmem THP always (corpus shmem-mthp-fault). */
static void test_shmem_fault_order(void)
{
	static const int modes[VML_THP_ORDERS] = {
		[1] = VML_SHMEM_MTHP_ALWAYS, [2] = VML_SHMEM_MTHP_ALWAYS, [4] = VML_SHMEM_MTHP_ALWAYS,
	};
	struct vml_sys *sys = new_shmem_sys(VML_SHMEM_HUGE_NEVER, modes);
	struct vml_mm *mm = mm_of_sys(sys);

	must_succeed(map_shared_anon(mm, BASE, 4 * K64));
	is_int(smaps_kb(mm, "THPeligible"), 1, "64K shmem always: eligible");
	must_succeed(vml_touch(mm, BASE + 0x5000, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 64, "a write maps its whole 64 kB folio");
	must_succeed(vml_madvise(mm, BASE + 0x4000, 0x2000, MADV_DONTNEED));
	must_succeed(vml_touch(mm, BASE + 0x4000, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 60, "a zapped page faults back alone: the folio is cached");
	vml_mm_destroy(mm);
	/* 24 KiB: no 64K block fits; the 16K block, then the 8K one after it. */
	mm = mm_of_sys(sys);
	must_succeed(map_shared_anon(mm, BASE, 0x6000));
	must_succeed(vml_touch(mm, BASE, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 16, "24K VMA: a 16 kB folio at its start");
	must_succeed(vml_touch(mm, BASE + 0x4000, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 24, "and an 8 kB one after it");
	vml_mm_destroy(mm);
	/* 4 KiB: nothing fits, so not eligible. */
	mm = mm_of_sys(sys);
	must_succeed(map_shared_anon(mm, BASE, PG));
	is_int(smaps_kb(mm, "THPeligible"), 0, "a 4K VMA holds no shmem THP");
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/* within_size, and force allowing only the sizes that inherit it. */
static void test_shmem_modes(void)
{
	static const int within[VML_THP_ORDERS] = { [4] = VML_SHMEM_MTHP_WITHIN_SIZE };
	static const int always32[VML_THP_ORDERS] = { [3] = VML_SHMEM_MTHP_ALWAYS };
	struct vml_sys *sys = new_shmem_sys(VML_SHMEM_HUGE_NEVER, within);
	struct vml_mm *mm = mm_of_sys(sys);

	/* 100 KiB: the first 64K block ends within the object, the second does not. */
	must_succeed(map_shared_anon(mm, BASE, 100UL << 10));
	must_succeed(vml_touch(mm, BASE, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 64, "within_size: a 64 kB folio within the size");
	must_succeed(vml_touch(mm, BASE + K64, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 68, "beyond the size: a page");
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);

	sys = new_shmem_sys(VML_SHMEM_HUGE_FORCE, always32);
	mm = mm_of_sys(sys);
	must_succeed(map_shared_anon(mm, BASE, 4 * K64));
	must_succeed(vml_touch(mm, BASE, 1, VML_TOUCH_WRITE));
	is_int(smaps_kb(mm, "Rss"), 4, "force: 32K always does not count, a page");
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

int main(void)
{
	test_config();
	test_fault_order();
	test_fallback();
	test_modes();
	test_cow();
	test_split_zero();
	test_partial();
	test_locked();
	test_shmem_config();
	test_shmem_fault_order();
	test_shmem_modes();
	return tap_done();
}
