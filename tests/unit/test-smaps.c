// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * smaps, smaps_rollup and numa_maps on the model, for what the live machine
 * cannot show (swap, SwapPss, shmem object swap, several NUMA nodes) and for
 * the exact text (every field, widths, VmFlags, the rollup header, numa_maps
 * escaping). Expected values are worked out by hand in the comments; the
 * formats are the 6.18 kernel's (tests/scripts/expected/ for live records).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include "mm_helpers.h"
#include "tap.h"
#include "util/linux_compat.h"

static struct vml_sys *new_sys(unsigned long swap_pages, unsigned int nodes)
{
	struct vml_sys_config cfg = { .swap_pages = swap_pages, .numa_nodes = nodes };
	struct vml_sys *sys;

	if (vml_sys_create(&cfg, &sys))
		abort();
	return sys;
}

/* The value (kB) of @field in the smaps record starting at @start, or -1. */
static long field_kb(const char *text, unsigned long start, const char *field)
{
	char head[40], key[40];
	const char *rec, *p;

	snprintf(head, sizeof(head), "%08lx-", start);
	for (rec = text; rec; rec = strchr(rec, '\n'), rec = rec ? rec + 1 : NULL)
		if (!strncmp(rec, head, strlen(head)))
			break;
	if (!rec)
		return -1;
	snprintf(key, sizeof(key), "\n%s:", field);
	p = strstr(rec, key);
	/* The field must belong to this record: before the next header's VmFlags end. */
	if (!p || (strstr(rec, "VmFlags") && p > strstr(rec, "VmFlags")))
		return -1;
	return strtol(p + strlen(key), NULL, 10);
}

static long rollup_kb(struct vml_mm *mm, enum vml_lock_policy lock, const char *field)
{
	char *t = read_view(mm, VML_VIEW_SMAPS_ROLLUP, lock, 4096);
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

static long smaps_kb(struct vml_mm *mm, unsigned long start, const char *field)
{
	char *t = read_view(mm, VML_VIEW_SMAPS, VML_LOCK_VMA, 4096);
	long v = field_kb(t, start, field);

	free(t);
	return v;
}

static const char anon_record[] =
	"100000000000-100000004000 rw-p 00000000 00:00 0 \n"
	"Size:                 16 kB\n"
	"KernelPageSize:        4 kB\n"
	"MMUPageSize:           4 kB\n"
	"Rss:                   8 kB\n"
	"Pss:                   8 kB\n"
	"Pss_Dirty:             8 kB\n"
	"Shared_Clean:          0 kB\n"
	"Shared_Dirty:          0 kB\n"
	"Private_Clean:         0 kB\n"
	"Private_Dirty:         8 kB\n"
	"Referenced:            8 kB\n"
	"Anonymous:             8 kB\n"
	"KSM:                   0 kB\n"
	"LazyFree:              0 kB\n"
	"AnonHugePages:         0 kB\n"
	"ShmemPmdMapped:        0 kB\n"
	"FilePmdMapped:         0 kB\n"
	"Shared_Hugetlb:        0 kB\n"
	"Private_Hugetlb:       0 kB\n"
	"Swap:                  0 kB\n"
	"SwapPss:               0 kB\n"
	"Locked:                0 kB\n"
	"THPeligible:           0\n"
	"VmFlags: rd wr mr mw me ac \n";

static const char anon_rollup[] =
	"100000000000-100000004000 ---p 00000000 00:00 0                          [rollup]\n"
	"Rss:                   8 kB\n"
	"Pss:                   8 kB\n"
	"Pss_Dirty:             8 kB\n"
	"Pss_Anon:              8 kB\n"
	"Pss_File:              0 kB\n"
	"Pss_Shmem:             0 kB\n"
	"Shared_Clean:          0 kB\n"
	"Shared_Dirty:          0 kB\n"
	"Private_Clean:         0 kB\n"
	"Private_Dirty:         8 kB\n"
	"Referenced:            8 kB\n"
	"Anonymous:             8 kB\n"
	"KSM:                   0 kB\n"
	"LazyFree:              0 kB\n"
	"AnonHugePages:         0 kB\n"
	"ShmemPmdMapped:        0 kB\n"
	"FilePmdMapped:         0 kB\n"
	"Shared_Hugetlb:        0 kB\n"
	"Private_Hugetlb:       0 kB\n"
	"Swap:                  0 kB\n"
	"SwapPss:               0 kB\n"
	"Locked:                0 kB\n";

static void test_formats(void)
{
	struct vml_sys *sys = new_sys(0, 0);
	struct vml_mm *mm = mm_of_sys(sys);
	char *t;

	/* Empty: no records; the rollup of nothing spans 0-0. */
	t = read_view(mm, VML_VIEW_SMAPS, VML_LOCK_VMA, 4096);
	is_str(t, "", "smaps of an empty mm is empty");
	free(t);
	t = read_view(mm, VML_VIEW_SMAPS_ROLLUP, VML_LOCK_MMAP, 4096);
	{
		static const char head[] = "00000000-00000000 ---p 00000000 00:00 0"
					   "                                  [rollup]\n"
					   "Rss:                   0 kB\n";

		ok(t && !strncmp(t, head, strlen(head)), "rollup of an empty mm: 0-0 header, zeros");
		if (t && strncmp(t, head, strlen(head)))
			tap_diag("got: %.120s", t);
	}
	free(t);

	/* 16K written 8K: Rss 8, private, dirty, referenced (young PTEs). */
	is_int(map_anon(mm, BASE, 4 * PG, PROT_READ | PROT_WRITE), 0, "map 16K");
	is_int(vml_touch(mm, BASE, 2 * PG, VML_TOUCH_WRITE), 0, "write 8K");
	for (int lock = VML_LOCK_MMAP; lock <= VML_LOCK_VMA; lock++) {
		t = read_view(mm, VML_VIEW_SMAPS, lock, 4096);
		is_str(t, anon_record, "the whole smaps record, every field and width (policy %d)",
		       lock);
		free(t);
		t = read_view(mm, VML_VIEW_SMAPS_ROLLUP, lock, 4096);
		is_str(t, anon_rollup, "the whole smaps_rollup (policy %d)", lock);
		free(t);
		/* Small reads: the same bytes, the record re-produced across read() calls. */
		t = read_view(mm, VML_VIEW_SMAPS, lock, 7);
		is_str(t, anon_record, "smaps read 7 bytes at a time (policy %d)", lock);
		free(t);
	}
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

static void test_vmflags(void)
{
	struct vml_sys *sys = new_sys(0, 0);
	struct vml_mm *mm = mm_of_sys(sys);
	char *t;

	/* In bit order, each followed by a space: dc (17) ac (20) wf (25) dd (26). */
	is_int(map_anon(mm, BASE, 4 * PG, PROT_READ | PROT_WRITE), 0, "map");
	is_int(vml_madvise(mm, BASE, 4 * PG, MADV_DONTFORK), 0, "DONTFORK");
	is_int(vml_madvise(mm, BASE, 4 * PG, MADV_WIPEONFORK), 0, "WIPEONFORK");
	is_int(vml_madvise(mm, BASE, 4 * PG, MADV_DONTDUMP), 0, "DONTDUMP");
	/* sr (15); lo (13) and hg (29) around ac. */
	is_int(map_anon(mm, BASE + 64 * PG, 4 * PG, PROT_READ | PROT_WRITE), 0, "map");
	is_int(vml_madvise(mm, BASE + 64 * PG, 4 * PG, MADV_SEQUENTIAL), 0, "SEQUENTIAL");
	is_int(vml_mlock(mm, BASE + 64 * PG, 4 * PG), 0, "mlock");
	is_int(vml_madvise(mm, BASE + 64 * PG, 4 * PG, MADV_HUGEPAGE), 0, "HUGEPAGE");
	/* A shared anonymous mapping: sh (3) ms (7), no ac. */
	is_int(vml_mmap(mm, BASE + 128 * PG, 4 * PG, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL), 0, "shared anon");
	t = read_view(mm, VML_VIEW_SMAPS, VML_LOCK_VMA, 4096);
	ok(strstr(t, "VmFlags: rd wr mr mw me dc ac wf dd \n") != NULL, "dc ac wf dd in bit order");
	ok(strstr(t, "VmFlags: rd wr mr mw me lo sr ac hg \n") != NULL, "lo sr ac hg in bit order");
	ok(strstr(t, "VmFlags: rd wr sh mr mw me ms \n") != NULL, "shared: sh ... ms");
	is_int(field_kb(t, BASE + 64 * PG, "Locked"), 16, "mlock populated 16K: Locked 16 kB");
	is_int(field_kb(t, BASE + 64 * PG, "THPeligible"), 0,
	       "hugepage on 16K: no aligned 2M range, THPeligible 0");
	free(t);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/*
 * Swap entries (swap_pages > 0): pageout of 4 exclusive written pages puts
 * them in swap: Rss 0, Swap 16, SwapPss 16. fork shares the entries (each
 * slot's user count 2): SwapPss 4 * 4096/2 = 8 kB. A read in the parent
 * swaps one page in (its slot keeps one user, the child): parent Swap 12,
 * SwapPss 3 * 2 kB = 6; child Swap 16, SwapPss 4 + 3 * 2 = 10.
 */
static void test_swap(void)
{
	struct vml_sys *sys = new_sys(64, 0);
	struct vml_mm *mm = mm_of_sys(sys), *child;

	is_int(map_anon(mm, BASE, 4 * PG, PROT_READ | PROT_WRITE), 0, "map 16K");
	is_int(vml_touch(mm, BASE, 4 * PG, VML_TOUCH_WRITE), 0, "write it");
	is_int(vml_madvise(mm, BASE, 4 * PG, MADV_PAGEOUT), 0, "pageout");
	is_int(smaps_kb(mm, BASE, "Rss"), 0, "swapped out: Rss 0");
	is_int(smaps_kb(mm, BASE, "Swap"), 16, "Swap 16 kB");
	is_int(smaps_kb(mm, BASE, "SwapPss"), 16, "SwapPss 16 kB (one user each)");
	is_int(vml_fork(mm, &child), 0, "fork");
	is_int(smaps_kb(mm, BASE, "Swap"), 16, "after fork: Swap 16 kB");
	is_int(smaps_kb(mm, BASE, "SwapPss"), 8, "SwapPss halved: 8 kB");
	is_int(vml_touch(mm, BASE, PG, VML_TOUCH_READ), 0, "swap one page in");
	is_int(smaps_kb(mm, BASE, "Rss"), 4, "parent Rss 4 kB");
	is_int(smaps_kb(mm, BASE, "Swap"), 12, "parent Swap 12 kB");
	is_int(smaps_kb(mm, BASE, "SwapPss"), 6, "parent SwapPss 3 x 2 kB");
	is_int(smaps_kb(child, BASE, "Swap"), 16, "child Swap 16 kB");
	is_int(smaps_kb(child, BASE, "SwapPss"), 10, "child SwapPss 4 + 3 x 2 kB");
	is_int(rollup_kb(child, VML_LOCK_MMAP, "SwapPss"), 10, "child rollup SwapPss 10 kB");
	vml_mm_destroy(child);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/*
 * shmem object swap (docs/kernel.md §7), a 16K tmpfs file:
 *  A: shared, the whole object (fast path: the object's counter);
 *  B: shared, object pages [1, 3) (a range count over the object's slots);
 *  C: private writable, the whole object, with an anonymous copy of page 0
 *     in front of a swapped object page 0 (the hole walk: only empty PTEs
 *     count, so 3 pages, where the counter would say 4).
 * SwapPss never includes object swap.
 */
static void test_shmem_swap(void)
{
	struct vml_sys *sys = new_sys(64, 0);
	struct vml_mm *mm = mm_of_sys(sys);
	const unsigned long A = BASE, B = BASE + 256 * PG, C = BASE + 512 * PG;
	struct vml_file *f;

	is_int(vml_file_create(sys, "/dev/shm/obj", 4 * PG, VML_FILE_SHMEM, &f), 0, "shmem file");
	is_int(vml_mmap(mm, A, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f, 0, NULL),
	       0, "A: shared, whole object");
	is_int(vml_touch(mm, A, 4 * PG, VML_TOUCH_WRITE), 0, "A: write it");
	is_int(vml_madvise(mm, A, 4 * PG, MADV_PAGEOUT), 0, "A: pageout (object to swap)");
	is_int(smaps_kb(mm, A, "Rss"), 0, "A: Rss 0");
	is_int(smaps_kb(mm, A, "Swap"), 16, "A: Swap 16 kB (the object's counter)");
	is_int(vml_mmap(mm, B, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f, PG, NULL),
	       0, "B: shared, pages 1-2");
	is_int(smaps_kb(mm, B, "Swap"), 8, "B: Swap 8 kB (its range of the object)");
	is_int(vml_mmap(mm, C, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, f, 0, NULL),
	       0, "C: private writable, whole object");
	is_int(vml_touch(mm, C, PG, VML_TOUCH_WRITE), 0,
	       "C: write page 0 (brought back from swap, then copied)");
	is_int(smaps_kb(mm, A, "Swap"), 12, "A: the object has 3 pages in swap now");
	is_int(vml_touch(mm, A, PG, VML_TOUCH_READ), 0, "A: map object page 0 again");
	is_int(vml_madvise(mm, A, PG, MADV_PAGEOUT), 0, "A: and page it out again");
	is_int(smaps_kb(mm, A, "Swap"), 16, "A: Swap 16 kB");
	is_int(smaps_kb(mm, C, "Rss"), 4, "C: Rss 4 kB (the copy)");
	is_int(smaps_kb(mm, C, "Anonymous"), 4, "C: Anonymous 4 kB");
	is_int(smaps_kb(mm, C, "Swap"), 12, "C: Swap 12 kB: the copy hides swapped page 0");
	is_int(smaps_kb(mm, A, "SwapPss"), 0, "A: object swap is not in SwapPss");
	is_int(smaps_kb(mm, C, "SwapPss"), 0, "C: SwapPss 0");
	is_int(rollup_kb(mm, VML_LOCK_VMA, "Swap"), 16 + 8 + 12, "rollup Swap 36 kB");
	is_int(rollup_kb(mm, VML_LOCK_VMA, "Pss_Anon"), 4, "rollup Pss_Anon 4 kB");
	vml_file_put(f);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/* Pss_Shmem and Pss_File split a rollup's Pss by folio type; a file page mapped twice. */
static void test_pss_split(void)
{
	struct vml_sys *sys = new_sys(0, 0);
	struct vml_mm *mm = mm_of_sys(sys);
	struct vml_file *shm, *reg;

	is_int(vml_file_create(sys, "/dev/shm/s", 2 * PG, VML_FILE_SHMEM, &shm), 0, "shmem file");
	is_int(vml_file_create(sys, "/tmp/r", 4 * PG, 0, &reg), 0, "regular file");
	is_int(vml_mmap(mm, BASE, 2 * PG, PROT_READ, MAP_SHARED | MAP_FIXED, shm, 0, NULL), 0,
	       "shmem mapping");
	is_int(vml_touch(mm, BASE, 2 * PG, VML_TOUCH_READ), 0, "read it (8K)");
	is_int(vml_mmap(mm, BASE + 256 * PG, 4 * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, reg, 0,
			NULL), 0, "file mapping");
	is_int(vml_mmap(mm, BASE + 512 * PG, 4 * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, reg, 0,
			NULL), 0, "the same file again");
	is_int(vml_touch(mm, BASE + 256 * PG, PG, VML_TOUCH_READ), 0, "fault-around: 16K");
	is_int(vml_touch(mm, BASE + 512 * PG, PG, VML_TOUCH_READ), 0, "and in the other");
	/* Each file page mapped twice: Pss 2 kB a page, 8 kB per mapping, 16 kB in all. */
	is_int(smaps_kb(mm, BASE + 256 * PG, "Pss"), 8, "file mapping: Pss 8 of Rss 16");
	is_int(smaps_kb(mm, BASE + 256 * PG, "Shared_Clean"), 16, "Shared_Clean 16 kB");
	is_int(rollup_kb(mm, VML_LOCK_MMAP, "Pss_File"), 16, "rollup Pss_File 16 kB");
	is_int(rollup_kb(mm, VML_LOCK_MMAP, "Pss_Shmem"), 8, "rollup Pss_Shmem 8 kB");
	is_int(rollup_kb(mm, VML_LOCK_MMAP, "Pss_Anon"), 0, "rollup Pss_Anon 0");
	is_int(rollup_kb(mm, VML_LOCK_MMAP, "Pss_Dirty"), 8, "tmpfs pages are dirty: 8 kB");
	vml_file_put(shm);
	vml_file_put(reg);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/*
 * The page cache's folio sizes follow file_folio_max_bytes (the host
 * profile's file_folio_max_kb): a write fault through a shared mapping maps
 * and dirties the page's whole folio (tests/scripts/shared-write-whole-folio.ops).
 * An 88 KiB file is written as a 64 KiB chunk and a 24 KiB one: under the
 * default (ext4 with large folios) folios of 64 + 16 + 8 KiB; with small
 * pages only, 22 pages; with larger folios than the chunk, still 64 + 16 + 8.
 */
static void test_file_folio_sizes(void)
{
	static const struct {
		unsigned long max;
		long first, tail;	/* kB dirtied by a write to page 3, to page 21 */
	} cases[] = {
		{ 0, 64, 8 }, { PG, 4, 4 }, { 4 * PG, 16, 8 }, { 1UL << 20, 64, 8 },
	};
	static const unsigned long bad[] = { 3000, 3 * PG, 4UL << 20 };

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct vml_sys_config cfg = { .file_folio_max_bytes = cases[i].max };
		unsigned long max = cases[i].max;
		struct vml_sys *sys;
		struct vml_file *f;
		struct vml_mm *mm;

		if (vml_sys_create(&cfg, &sys))
			abort();
		mm = mm_of_sys(sys);
		is_int(vml_file_create(sys, "/tmp/f", 22 * PG, 0, &f), 0, "max %lu: an 88K file", max);
		is_int(vml_mmap(mm, BASE, 22 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f,
				0, NULL), 0, "shared mapping of it");
		is_int(vml_touch(mm, BASE + 3 * PG, PG, VML_TOUCH_WRITE), 0, "write to page 3");
		is_int(smaps_kb(mm, BASE, "Private_Dirty"), cases[i].first,
		       "max %lu: page 3's folio is dirty, %ld kB", max, cases[i].first);
		is_int(vml_touch(mm, BASE + 21 * PG, PG, VML_TOUCH_WRITE), 0, "write to page 21");
		is_int(smaps_kb(mm, BASE, "Private_Dirty"), cases[i].first + cases[i].tail,
		       "max %lu: and page 21's, %ld kB more", max, cases[i].tail);
		vml_file_put(f);
		vml_mm_destroy(mm);
		vml_sys_destroy(sys);
	}
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		struct vml_sys_config cfg = { .file_folio_max_bytes = bad[i] };
		struct vml_sys *sys = NULL;

		is_int(vml_sys_create(&cfg, &sys), -EINVAL,
		       "file_folio_max_bytes %lu refused (no power of two of pages to 2 MiB)", bad[i]);
	}
}

struct pinned_touch {
	struct vml_mm *mm;
	unsigned long addr, len;
	int cpu, err;
};

static void *touch_on_cpu(void *arg)
{
	struct pinned_touch *p = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	p->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (!p->err)
		p->err = vml_touch(p->mm, p->addr, p->len, VML_TOUCH_WRITE);
	return NULL;
}

/*
 * NUMA: a fault allocates on the faulting CPU's node (cpu % nodes, policy
 * default). Two pages written from CPU 0 and two from CPU 1 with 2 nodes:
 * N0=2 N1=2. With 3 nodes, CPU 1 is node 1 still; a file's cached pages
 * were read in on node 0.
 */
static void test_numa(void)
{
	struct vml_sys *sys = new_sys(0, 2);
	struct vml_mm *mm = mm_of_sys(sys);
	struct pinned_touch a = { mm, BASE, 2 * PG, 0, 0 }, b = { mm, BASE + 2 * PG, 2 * PG, 1, 0 };
	cpu_set_t set;
	pthread_t t;
	char *s;

	if (sched_getaffinity(0, sizeof(set), &set) || !CPU_ISSET(0, &set) ||
	    !CPU_ISSET(1, &set)) {
		ok(1, "# SKIP numa: needs CPUs 0 and 1");
		vml_mm_destroy(mm);
		vml_sys_destroy(sys);
		return;
	}
	is_int(map_anon(mm, BASE, 4 * PG, PROT_READ | PROT_WRITE), 0, "map 16K");
	pthread_create(&t, NULL, touch_on_cpu, &a);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, touch_on_cpu, &b);
	pthread_join(t, NULL);
	is_int(a.err | b.err, 0, "written from CPU 0 and CPU 1");
	s = read_view(mm, VML_VIEW_NUMA_MAPS, VML_LOCK_VMA, 4096);
	is_str(s, "100000000000 default anon=4 dirty=4 active=0 N0=2 N1=2 kernelpagesize_kB=4\n",
	       "numa_maps: two pages on each node");
	free(s);
	s = read_view(mm, VML_VIEW_NUMA_MAPS, VML_LOCK_MMAP, 1);
	is_str(s, "100000000000 default anon=4 dirty=4 active=0 N0=2 N1=2 kernelpagesize_kB=4\n",
	       "the same read a byte at a time under mmap_lock");
	free(s);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/* numa_maps: file= escaping, mapped/mapmax, and a VMA without pages. */
static void test_numa_fields(void)
{
	struct vml_sys *sys = new_sys(0, 0);
	struct vml_mm *mm = mm_of_sys(sys);
	struct vml_file *f;
	char *s;

	is_int(vml_file_create(sys, "/tmp/a b\tc=d", 4 * PG, 0, &f), 0, "a file with odd characters");
	is_int(vml_mmap(mm, BASE, 4 * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, f, 0, NULL), 0, "map");
	is_int(vml_mmap(mm, BASE + 16 * PG, 2 * PG, PROT_READ, MAP_SHARED | MAP_FIXED, f, 0, NULL),
	       0, "map its first two pages again");
	is_int(vml_touch(mm, BASE, PG, VML_TOUCH_READ), 0, "fault-around maps all 4");
	is_int(vml_touch(mm, BASE + 16 * PG, PG, VML_TOUCH_READ), 0, "and 2 here");
	is_int(map_anon(mm, BASE + 32 * PG, PG, PROT_READ | PROT_WRITE), 0, "an untouched mapping");
	s = read_view(mm, VML_VIEW_NUMA_MAPS, VML_LOCK_VMA, 4096);
	is_str(s,
	       "100000000000 default file=/tmp/a\\040b\\011c\\075d mapped=4 mapmax=2 active=0 N0=4 "
	       "kernelpagesize_kB=4\n"
	       "100000010000 default file=/tmp/a\\040b\\011c\\075d mapped=2 mapmax=2 active=0 N0=2 "
	       "kernelpagesize_kB=4\n"
	       "100000020000 default\n",
	       "numa_maps lines");
	free(s);
	s = maps_of(mm);
	ok(strstr(s, " /tmp/a b\tc=d\n") != NULL, "maps escapes only newlines");
	free(s);
	vml_file_put(f);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/* A THP in smaps: AnonHugePages, THPeligible, and Pss halved after fork. */
static void test_thp(void)
{
	struct vml_sys *sys = new_sys(0, 0);
	struct vml_mm *mm = mm_of_sys(sys), *child;
	const unsigned long M2 = 2UL << 20;
	char *s;

	is_int(map_anon(mm, BASE, 2 * M2, PROT_READ | PROT_WRITE), 0, "map 4M");
	is_int(vml_madvise(mm, BASE, 2 * M2, MADV_HUGEPAGE), 0, "hugepage");
	is_int(vml_touch(mm, BASE, PG, VML_TOUCH_WRITE), 0, "one write");
	is_int(smaps_kb(mm, BASE, "AnonHugePages"), 2048, "AnonHugePages 2048 kB");
	is_int(smaps_kb(mm, BASE, "THPeligible"), 1, "THPeligible 1");
	is_int(vml_fork(mm, &child), 0, "fork");
	is_int(smaps_kb(mm, BASE, "Pss"), 1024, "shared huge page: Pss 1024 kB");
	is_int(smaps_kb(mm, BASE, "Shared_Dirty"), 2048, "Shared_Dirty 2048 kB");
	is_int(smaps_kb(child, BASE, "AnonHugePages"), 2048, "the child maps it by PMD too");
	s = read_view(mm, VML_VIEW_NUMA_MAPS, VML_LOCK_VMA, 4096);
	is_str(s, "100000000000 default anon=512 dirty=512 mapmax=2 active=0 N0=512 "
		  "kernelpagesize_kB=4\n", "numa_maps counts the huge page as 512");
	free(s);
	vml_mm_destroy(child);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

int main(void)
{
	test_formats();
	test_vmflags();
	test_swap();
	test_shmem_swap();
	test_pss_split();
	test_file_folio_sizes();
	test_numa();
	test_numa_fields();
	test_thp();
	return tap_done();
}
