// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the mm layer: the kernel's errnos, split and merge rules,
 * faults, and the maps text they produce. The expected outcomes were taken
 * from the kernel's rules (mm/vma.c, mm/mprotect.c, mm/mremap.c) and checked
 * against the live kernel by the tests/scripts corpus.
 */
#include <stdio.h>

#include "mm_helpers.h"
#include "tap.h"

static struct vml_sys *sys;

static struct vml_mm *new_mm(void)
{
	struct vml_mm *mm = NULL;

	if (vml_mm_create(sys, &mm))
		abort();
	return mm;
}

static char *anon_line(char *buf, unsigned long start, unsigned long end, const char *perms)
{
	sprintf(buf, "%08lx-%08lx %s 00000000 00:00 0 \n", start, end, perms);
	return buf;
}

static void test_mmap_errors(void)
{
	struct vml_mm *mm = new_mm();
	struct vml_file *f;
	unsigned long a;

	is_int(vml_mmap(mm, BASE, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, NULL, 0, &a), -EINVAL,
	       "mmap: zero length is EINVAL");
	is_int(vml_mmap(mm, BASE + 1, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL,
			0, &a), -EINVAL, "mmap: unaligned MAP_FIXED address is EINVAL");
	is_int(vml_mmap(mm, BASE, PG, PROT_READ, MAP_ANONYMOUS, NULL, 0, &a), -EINVAL,
	       "mmap: no MAP_SHARED/MAP_PRIVATE is EINVAL");
	is_int(vml_mmap(mm, BASE, PG, PROT_READ, MAP_PRIVATE, NULL, 0, &a), -EBADF,
	       "mmap: no file and no MAP_ANONYMOUS is EBADF");
	is_int(vml_file_create(sys, "/tmp/f", 8 * PG, 0, &f), 0, "file created");
	is_int(vml_mmap(mm, BASE, PG, PROT_READ, MAP_PRIVATE, f, 100, &a), -EINVAL,
	       "mmap: unaligned offset is EINVAL");
	is_int(vml_mmap(mm, BASE, -PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, NULL, 0, &a),
	       -ENOMEM, "mmap: length that rounds to zero is ENOMEM");
	is_int(map_anon(mm, BASE, 2 * PG, PROT_READ), 0, "mmap fixed");
	is_int(vml_mmap(mm, BASE + PG, PG, PROT_READ,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, NULL, 0, &a), -EEXIST,
	       "mmap: MAP_FIXED_NOREPLACE over a mapping is EEXIST");
	is_int(vml_mmap(mm, BASE + PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, NULL, 0, &a), 0,
	       "mmap: a hint over a mapping is moved elsewhere");
	ok(a != BASE + PG && a > BASE, "the hint was not honoured: 0x%lx", a);
	is_int(vml_mmap(mm, BASE + 4 * PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, NULL, 0, &a),
	       0, "mmap: a free hint");
	is_hex(a, BASE + 4 * PG, "a free hint is honoured");
	is_int(vml_mmap(mm, 0, 4 * 1024 * 1024, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, NULL, 0,
			&a), 0, "mmap: top-down placement");
	ok(a < 0x7f0000000000UL && (a & (2 * 1024 * 1024 - 1)) == 0,
	   "a 4 MiB anonymous mapping is placed below mmap_base, THP-aligned: 0x%lx", a);
	vml_file_put(f);
	vml_mm_destroy(mm);
}

static void test_munmap(void)
{
	struct vml_mm *mm = new_mm();
	char *maps, exp[256], l[128];

	is_int(vml_munmap(mm, BASE, PG), 0, "munmap of nothing is 0");
	is_int(vml_munmap(mm, BASE + 1, PG), -EINVAL, "munmap unaligned is EINVAL");
	is_int(vml_munmap(mm, BASE, 0), -EINVAL, "munmap of zero length is EINVAL");
	is_int(map_anon(mm, BASE, 4 * PG, PROT_READ | PROT_WRITE), 0, "map 4 pages");
	is_int(vml_munmap(mm, BASE + PG, PG), 0, "punch a hole");
	maps = maps_of(mm);
	exp[0] = 0;
	strcat(exp, anon_line(l, BASE, BASE + PG, "rw-p"));
	strcat(exp, anon_line(l, BASE + 2 * PG, BASE + 4 * PG, "rw-p"));
	is_str(maps, exp, "a hole splits the VMA");
	free(maps);
	is_int(vml_munmap(mm, BASE, 8 * PG), 0, "munmap across VMAs and holes");
	maps = maps_of(mm);
	is_str(maps, "", "everything is gone");
	free(maps);
	vml_mm_destroy(mm);
}

static void test_mprotect_split_merge(void)
{
	struct vml_mm *mm = new_mm();
	char *maps, exp[512], l[128];

	is_int(map_anon(mm, BASE, 3 * PG, PROT_READ | PROT_WRITE), 0, "map 3 pages rw");
	is_int(vml_mprotect(mm, BASE + PG, PG, PROT_READ), 0, "mprotect the middle r--");
	maps = maps_of(mm);
	exp[0] = 0;
	strcat(exp, anon_line(l, BASE, BASE + PG, "rw-p"));
	strcat(exp, anon_line(l, BASE + PG, BASE + 2 * PG, "r--p"));
	strcat(exp, anon_line(l, BASE + 2 * PG, BASE + 3 * PG, "rw-p"));
	is_str(maps, exp, "a middle mprotect makes three VMAs");
	free(maps);
	is_int(vml_mprotect(mm, BASE + PG, PG, PROT_READ | PROT_WRITE), 0, "mprotect back rw-");
	maps = maps_of(mm);
	is_str(maps, anon_line(l, BASE, BASE + 3 * PG, "rw-p"), "they merge back into one");
	free(maps);

	/* Touched: the pieces share one anon_vma and still merge back. */
	is_int(vml_touch(mm, BASE, 3 * PG, VML_TOUCH_WRITE), 0, "touch all three pages");
	is_int(vml_mprotect(mm, BASE + PG, PG, PROT_READ), 0, "split a touched VMA");
	is_int(vml_mprotect(mm, BASE + PG, PG, PROT_READ | PROT_WRITE), 0, "and back");
	maps = maps_of(mm);
	is_str(maps, anon_line(l, BASE, BASE + 3 * PG, "rw-p"), "split pieces of a touched VMA merge");
	free(maps);

	is_int(vml_mprotect(mm, BASE + 1, PG, PROT_READ), -EINVAL, "mprotect unaligned is EINVAL");
	is_int(vml_mprotect(mm, BASE, 0, PROT_READ), 0, "mprotect of zero length is 0");
	is_int(vml_mprotect(mm, BASE, PG, 0x100), -EINVAL, "mprotect with an unknown bit is EINVAL");
	is_int(vml_mprotect(mm, BASE + 8 * PG, PG, PROT_READ), -ENOMEM, "mprotect of a hole is ENOMEM");
	/* A range running into a hole: the kernel changes what comes before it. */
	is_int(vml_mprotect(mm, BASE, 5 * PG, PROT_READ), -ENOMEM, "mprotect into a hole is ENOMEM");
	maps = maps_of(mm);
	is_str(maps, anon_line(l, BASE, BASE + 3 * PG, "r--p"),
	       "...after changing the VMA before the hole, as the kernel does");
	free(maps);
	vml_mm_destroy(mm);
}

static void test_anon_vma_merge_rules(void)
{
	struct vml_mm *mm = new_mm();
	char *maps, exp[512], l[128];

	/* Two separately touched VMAs get their own anon_vma... */
	is_int(map_anon(mm, BASE, PG, PROT_READ | PROT_WRITE), 0, "A rw");
	is_int(map_anon(mm, BASE + PG, PG, PROT_READ), 0, "B r-- next to A");
	is_int(map_anon(mm, BASE + 2 * PG, PG, PROT_READ | PROT_WRITE | PROT_EXEC), 0, "C rwx");
	is_int(vml_touch(mm, BASE, PG, VML_TOUCH_WRITE), 0, "touch A");
	is_int(vml_touch(mm, BASE + 2 * PG, PG, VML_TOUCH_WRITE), 0, "touch C");
	is_int(vml_mprotect(mm, BASE + 2 * PG, PG, PROT_READ | PROT_WRITE), 0, "C becomes rw");
	/* ...so B (untouched) can join A or C but not both. */
	is_int(vml_mprotect(mm, BASE + PG, PG, PROT_READ | PROT_WRITE), 0, "B becomes rw");
	maps = maps_of(mm);
	exp[0] = 0;
	strcat(exp, anon_line(l, BASE, BASE + 2 * PG, "rw-p"));
	strcat(exp, anon_line(l, BASE + 2 * PG, BASE + 3 * PG, "rw-p"));
	is_str(maps, exp, "VMAs with different anon_vmas do not merge");
	free(maps);
	vml_mm_destroy(mm);

	/* An untouched VMA made read-only gives back VM_ACCOUNT and merges with a read-only one. */
	mm = new_mm();
	is_int(map_anon(mm, BASE, PG, PROT_READ | PROT_WRITE), 0, "A rw (accounted)");
	is_int(map_anon(mm, BASE + PG, PG, PROT_READ), 0, "B r-- (not accounted)");
	is_int(vml_mprotect(mm, BASE, PG, PROT_READ), 0, "A becomes r--");
	maps = maps_of(mm);
	is_str(maps, anon_line(l, BASE, BASE + 2 * PG, "r--p"), "untouched A drops VM_ACCOUNT, merges");
	free(maps);
	vml_mm_destroy(mm);

	mm = new_mm();
	is_int(map_anon(mm, BASE, PG, PROT_READ | PROT_WRITE), 0, "A rw (accounted)");
	is_int(map_anon(mm, BASE + PG, PG, PROT_READ), 0, "B r--");
	is_int(vml_touch(mm, BASE, PG, VML_TOUCH_WRITE), 0, "touch A");
	is_int(vml_mprotect(mm, BASE, PG, PROT_READ), 0, "A becomes r--");
	maps = maps_of(mm);
	is_int(count_lines(maps), 2, "touched A keeps VM_ACCOUNT and does not merge");
	free(maps);
	vml_mm_destroy(mm);
}

static void test_mremap(void)
{
	struct vml_mm *mm = new_mm();
	char *maps, l[128];
	unsigned long a;

	is_int(map_anon(mm, BASE, 4 * PG, PROT_READ | PROT_WRITE), 0, "map 4 pages");
	is_int(vml_mremap(mm, BASE, 4 * PG, 2 * PG, 0, 0, &a), 0, "shrink");
	is_hex(a, BASE, "shrink stays in place");
	is_int(vml_mremap(mm, BASE, 2 * PG, 6 * PG, 0, 0, &a), 0, "grow in place");
	maps = maps_of(mm);
	is_str(maps, anon_line(l, BASE, BASE + 6 * PG, "rw-p"), "grown in place");
	free(maps);
	is_int(map_anon(mm, BASE + 6 * PG, PG, PROT_READ), 0, "block growth");
	is_int(vml_mremap(mm, BASE, 6 * PG, 8 * PG, 0, 0, &a), -ENOMEM, "blocked growth is ENOMEM");
	is_int(vml_mremap(mm, BASE, 6 * PG, 8 * PG, MREMAP_MAYMOVE, 0, &a), 0, "MAYMOVE moves");
	ok(a != BASE, "moved to 0x%lx", a);
	is_int(vml_mremap(mm, a, 8 * PG, 8 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, BASE + 16 * PG, &a),
	       0, "FIXED move");
	is_hex(a, BASE + 16 * PG, "moved where asked");
	is_int(vml_mremap(mm, BASE + 1, PG, PG, 0, 0, &a), -EINVAL, "unaligned is EINVAL");
	is_int(vml_mremap(mm, BASE + 16 * PG, PG, 0, 0, 0, &a), -EINVAL, "new length 0 is EINVAL");
	is_int(vml_mremap(mm, BASE + 40 * PG, PG, 2 * PG, 0, 0, &a), -EFAULT, "no VMA is EFAULT");
	is_int(vml_mremap(mm, BASE + 16 * PG, PG, PG, MREMAP_FIXED, BASE, &a), -EINVAL,
	       "FIXED without MAYMOVE is EINVAL");
	is_int(vml_mremap(mm, BASE + 16 * PG, 16 * PG, 32 * PG, 0, 0, &a), -EFAULT,
	       "an old range crossing the VMA end is EFAULT");
	is_int(vml_mremap(mm, BASE + 16 * PG, 2 * PG, 2 * PG,
			  MREMAP_MAYMOVE | MREMAP_FIXED, BASE + 17 * PG, &a), -EINVAL,
	       "overlapping move is EINVAL");
	vml_mm_destroy(mm);
}

/* 6.17+: a fixed, unresized move of a range over several VMAs and gaps. */
static void test_mremap_multi_vma(void)
{
	struct vml_mm *mm = new_mm();
	char *maps, l[128];
	unsigned long a;

	/* [0,2) rw- | gap | [3,4) r-- | gap | [6,8) rw-, each touched apart */
	is_int(map_anon(mm, BASE, 2 * PG, PROT_READ | PROT_WRITE), 0, "map A");
	is_int(map_anon(mm, BASE + 3 * PG, PG, PROT_READ), 0, "map B");
	is_int(map_anon(mm, BASE + 6 * PG, 2 * PG, PROT_READ | PROT_WRITE), 0, "map C");
	is_int(vml_touch(mm, BASE, 2 * PG, VML_TOUCH_WRITE), 0, "touch A");
	is_int(vml_touch(mm, BASE + 6 * PG, 2 * PG, VML_TOUCH_WRITE), 0, "touch C");
	/* the target's mapping survives in the gaps */
	is_int(map_anon(mm, BASE + 32 * PG, 8 * PG, PROT_READ | PROT_EXEC), 0, "map target");
	is_int(vml_mremap(mm, BASE, 8 * PG, 8 * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
			  BASE + 32 * PG, &a), 0, "move three VMAs at once");
	is_hex(a, BASE + 32 * PG, "the first lands at the target");
	maps = maps_of(mm);
	ok(strstr(maps, anon_line(l, BASE + 32 * PG, BASE + 34 * PG, "rw-p")) &&
	   strstr(maps, anon_line(l, BASE + 34 * PG, BASE + 35 * PG, "r-xp")) &&
	   strstr(maps, anon_line(l, BASE + 35 * PG, BASE + 36 * PG, "r--p")) &&
	   strstr(maps, anon_line(l, BASE + 36 * PG, BASE + 38 * PG, "r-xp")) &&
	   strstr(maps, anon_line(l, BASE + 38 * PG, BASE + 40 * PG, "rw-p")) &&
	   !strstr(maps, "00000000-"), "the gaps keep their place and the target's mapping");
	free(maps);
	is_int(vml_mremap(mm, BASE + 33 * PG, 4 * PG, 4 * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
			  BASE + 64 * PG, &a), 0, "a range starting inside a VMA");
	is_int(vml_mremap(mm, BASE + 100 * PG, 4 * PG, 4 * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
			  BASE + 64 * PG, &a), -EFAULT, "no VMA in the range is EFAULT");
	is_int(vml_mremap(mm, BASE + 31 * PG, 4 * PG, 4 * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
			  BASE + 128 * PG, &a), -EFAULT, "a range starting in a gap is EFAULT");
	vml_mm_destroy(mm);

	/*
	 * The destination right before the source, both pieces of one untouched
	 * VMA the destination unmap splits: the copy merges with the piece
	 * before it and with its own source, which goes (mm/vma.c copy_vma).
	 */
	mm = new_mm();
	is_int(map_anon(mm, BASE, 11 * PG, PROT_READ | PROT_WRITE), 0, "map one VMA");
	is_int(vml_mremap(mm, BASE + 8 * PG, 3 * PG, 3 * PG,
			  MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, BASE + PG, &a), 0,
	       "DONTUNMAP onto the range right before the source");
	maps = maps_of(mm);
	is_str(maps, anon_line(l, BASE, BASE + 11 * PG, "rw-p"), "one VMA again");
	free(maps);
	is_int(vml_mremap(mm, BASE + 8 * PG, 3 * PG, 3 * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
			  BASE + PG, &a), 0, "the same without DONTUNMAP");
	maps = maps_of(mm);
	is_str(maps, anon_line(l, BASE, BASE + 8 * PG, "rw-p"), "the source range goes");
	free(maps);
	vml_mm_destroy(mm);
}

static void test_faults(void)
{
	struct vml_mm *mm = new_mm();
	struct vml_mm_stats st;
	struct vml_file *f;

	is_int(map_anon(mm, BASE, 8 * PG, PROT_READ | PROT_WRITE), 0, "map 8 pages");
	is_int(vml_touch(mm, BASE, 8 * PG, VML_TOUCH_READ), 0, "read them");
	vml_mm_stats(mm, &st);
	is_int(st.rss_pages, 0, "reads of untouched memory map the zero page: no RSS");
	is_int(vml_touch(mm, BASE, 4 * PG, VML_TOUCH_WRITE), 0, "write half");
	vml_mm_stats(mm, &st);
	is_int(st.rss_pages, 4, "writes allocate pages");
	ok(st.faults_vma_locked > 0, "faults ran under the per-VMA lock");
	is_int(vml_madvise(mm, BASE, 2 * PG, MADV_DONTNEED), 0, "MADV_DONTNEED");
	vml_mm_stats(mm, &st);
	is_int(st.rss_pages, 2, "DONTNEED zaps");
	is_int(vml_touch(mm, BASE + 8 * PG, PG, VML_TOUCH_READ), -EFAULT, "unmapped access faults");
	is_int(vml_mprotect(mm, BASE, PG, PROT_NONE), 0, "PROT_NONE");
	is_int(vml_touch(mm, BASE, PG, VML_TOUCH_READ), -EFAULT, "PROT_NONE access faults");
	is_int(vml_touch(mm, BASE + PG, PG, VML_TOUCH_READ), 0, "the neighbour is fine");
	is_int(vml_mprotect(mm, BASE + 2 * PG, PG, PROT_READ), 0, "read-only");
	is_int(vml_touch(mm, BASE + 2 * PG, PG, VML_TOUCH_WRITE), -EFAULT, "write to r-- faults");

	is_int(vml_file_create(sys, "/tmp/data", 2 * PG + 10, 0, &f), 0, "a 2-page-and-a-bit file");
	is_int(vml_mmap(mm, BASE + 16 * PG, 8 * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, f, 0, NULL), 0,
	       "map it with room beyond EOF");
	is_int(vml_touch(mm, BASE + 16 * PG, 3 * PG, VML_TOUCH_READ), 0, "read the file's pages");
	is_int(vml_touch(mm, BASE + 19 * PG, PG, VML_TOUCH_READ), -EIO, "beyond EOF is SIGBUS");
	vml_file_put(f);
	is_int(vml_mmap(mm, BASE + 32 * PG, 4 * PG, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, NULL, 0, NULL), 0,
	       "MAP_POPULATE");
	vml_mm_stats(mm, &st);
	is_int(st.rss_pages, 2 + 3 + 4, "populate faulted the pages in (file pages by fault-around)");
	vml_mm_destroy(mm);
}

static void test_mlock_and_madvise(void)
{
	struct vml_mm *mm = new_mm();
	struct vml_mm_stats st;
	char *maps;

	is_int(map_anon(mm, BASE, 4 * PG, PROT_READ | PROT_WRITE), 0, "map 4 pages");
	/* start rounds down, length rounds up after adding the offset: two pages */
	is_int(vml_mlock(mm, BASE + PG + 100, PG), 0, "mlock an unaligned range");
	vml_mm_stats(mm, &st);
	is_int(st.rss_pages, 2, "mlock populates both pages it covers");
	is_int(st.map_count, 3, "and splits");
	is_int(vml_madvise(mm, BASE + PG, PG, MADV_DONTNEED), -EINVAL, "DONTNEED on locked is EINVAL");
	is_int(vml_munlock(mm, BASE, 4 * PG), 0, "munlock");
	vml_mm_stats(mm, &st);
	is_int(st.map_count, 1, "munlock merges back");
	is_int(vml_mlock(mm, BASE, 8 * PG), -ENOMEM, "mlock into a hole is ENOMEM");
	is_int(vml_munlock(mm, BASE, 4 * PG), 0, "munlock");
	is_int(vml_madvise(mm, BASE + PG, PG, MADV_HUGEPAGE), 0, "MADV_HUGEPAGE");
	vml_mm_stats(mm, &st);
	is_int(st.map_count, 3, "MADV_HUGEPAGE splits out a VMA");
	is_int(vml_madvise(mm, BASE + PG, PG, 999), -EINVAL, "unknown advice is EINVAL");
	is_int(vml_madvise(mm, BASE + 1, PG, MADV_DONTNEED), -EINVAL, "unaligned advice is EINVAL");
	is_int(vml_madvise(mm, BASE, 8 * PG, MADV_WILLNEED), -ENOMEM, "advice over a hole is ENOMEM");
	is_int(vml_set_anon_name(mm, BASE, PG, "x"), -EINVAL,
	       "anon names are off by default, as on the live machine");
	maps = maps_of(mm);
	is_int(count_lines(maps), 3, "three VMAs");
	free(maps);
	vml_mm_destroy(mm);
}

static void test_anon_names(void)
{
	struct vml_sys_config cfg = { .anon_vma_name = true };
	struct vml_sys *s2;
	struct vml_mm *mm;
	char *maps;

	is_int(vml_sys_create(&cfg, &s2), 0, "a sys with anon names");
	is_int(vml_mm_create(s2, &mm), 0, "mm");
	is_int(map_anon(mm, BASE, 2 * PG, PROT_READ | PROT_WRITE), 0, "map");
	is_int(vml_set_anon_name(mm, BASE, PG, "heap one"), 0, "name the first page");
	is_int(vml_set_anon_name(mm, BASE, PG, "bad$"), -EINVAL, "a name with $ is EINVAL");
	maps = maps_of(mm);
	is_str(maps,
	       "100000000000-100000001000 rw-p 00000000 00:00 0                          [anon:heap one]\n"
	       "100000001000-100000002000 rw-p 00000000 00:00 0 \n",
	       "the name is padded to column 73 and the VMA split");
	free(maps);
	is_int(vml_set_anon_name(mm, BASE, PG, NULL), 0, "clear it");
	maps = maps_of(mm);
	is_int(count_lines(maps), 1, "and they merge again");
	free(maps);
	vml_mm_destroy(mm);
	vml_sys_destroy(s2);
}

static void test_files_and_shared(void)
{
	struct vml_mm *mm = new_mm();
	struct vml_file *f;
	char *maps;

	is_int(vml_file_create(sys, "/tmp/vmalock/lib.so", 16 * PG, 0, &f), 0, "file");
	is_int(vml_mmap(mm, BASE, 2 * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, f, 0, NULL), 0, "map 0-2");
	is_int(vml_mmap(mm, BASE + 2 * PG, 2 * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, f, 2 * PG, NULL),
	       0, "map 2-4 right after it");
	is_int(vml_mmap(mm, BASE + 4 * PG, 2 * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, f, 8 * PG, NULL),
	       0, "map 8-10 after that");
	maps = maps_of(mm);
	is_int(count_lines(maps), 2, "contiguous offsets merge, a jump does not");
	ok(strstr(maps, "100000004000-100000006000 r--p 00008000 fe:00 ") != NULL,
	   "offset and device are printed");
	ok(strstr(maps, "/tmp/vmalock/lib.so\n") - maps == 73, "the path starts at column 73");
	free(maps);
	vml_file_put(f);
	is_int(vml_mmap(mm, BASE + 8 * PG, 2 * PG, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL), 0, "shared anonymous");
	maps = maps_of(mm);
	ok(strstr(maps, "100000008000-10000000a000 rw-s 00000000 00:01 ") != NULL, "rw-s");
	ok(strstr(maps, "/dev/zero (deleted)\n") != NULL, "named /dev/zero (deleted)");
	free(maps);
	vml_mm_destroy(mm);
}

static void test_map_count_limit(void)
{
	struct vml_sys_config cfg = { .max_map_count = 10 };
	struct vml_sys *s2;
	struct vml_mm *mm;
	struct vml_mm_stats st;
	int i;

	is_int(vml_sys_create(&cfg, &s2), 0, "a sys with max_map_count 10");
	is_int(vml_mm_create(s2, &mm), 0, "mm");
	for (i = 0; i < 11; i++)
		if (map_anon(mm, BASE + 2 * i * PG, PG, PROT_READ))
			break;
	is_int(i, 11, "the kernel lets map_count reach max_map_count + 1 (a > check)");
	is_int(map_anon(mm, BASE + 40 * PG, PG, PROT_READ), -ENOMEM, "then mmap is ENOMEM");
	is_int(vml_munmap(mm, BASE, PG), 0, "unmap one");
	is_int(map_anon(mm, BASE + 60 * PG, 3 * PG, PROT_READ), 0, "map a 3-page VMA (11 again)");
	is_int(vml_mprotect(mm, BASE + 61 * PG, PG, PROT_NONE), -ENOMEM, "a split is refused");
	is_int(vml_munmap(mm, BASE + 61 * PG, PG), -ENOMEM, "a munmap that splits is refused");
	is_int(vml_munmap(mm, BASE + 62 * PG, PG), 0, "a munmap of the tail needs no new VMA");
	vml_mm_stats(mm, &st);
	is_int(st.map_count, 11, "nothing half-applied");
	vml_mm_destroy(mm);
	vml_sys_destroy(s2);
}

static void test_reader_chunks(void)
{
	struct vml_mm *mm = new_mm();
	char *whole, *pieces, *locked;
	static const size_t chunks[] = { 1, 7, 64, 100, 4095, 4096, 10000 };

	for (int i = 0; i < 300; i++)
		map_anon(mm, BASE + 2 * i * PG, PG, PROT_READ | ((i % 3) ? PROT_WRITE : 0));
	whole = read_view(mm, VML_VIEW_MAPS, VML_LOCK_VMA, 1 << 20);
	is_int(count_lines(whole), 300, "300 lines");
	for (size_t c = 0; c < ARRAY_LEN(chunks); c++) {
		pieces = read_view(mm, VML_VIEW_MAPS, VML_LOCK_VMA, chunks[c]);
		locked = read_view(mm, VML_VIEW_MAPS, VML_LOCK_MMAP, chunks[c]);
		is_str(pieces, whole, "reads of %zu bytes give the same text (vma policy)", chunks[c]);
		is_str(locked, whole, "reads of %zu bytes give the same text (mmap policy)", chunks[c]);
		free(pieces);
		free(locked);
	}
	free(whole);
	vml_mm_destroy(mm);
}

static void test_thp(void)
{
	struct vml_mm *mm = new_mm();
	struct vml_mm_stats st;
	const unsigned long M2 = 2UL << 20;
	struct vml_mm *child;

	is_int(map_anon(mm, BASE, 3 * M2, PROT_READ | PROT_WRITE), 0, "map 6 MiB");
	is_int(vml_touch(mm, BASE, PG, VML_TOUCH_WRITE), 0, "write without MADV_HUGEPAGE");
	vml_mm_stats(mm, &st);
	is_int(st.rss_pages, 1, "THP mode madvise: a small page");
	is_int(vml_madvise(mm, BASE + M2, 2 * M2, MADV_HUGEPAGE), 0, "MADV_HUGEPAGE on 4 MiB");
	is_int(vml_touch(mm, BASE + M2 + 5 * PG, PG, VML_TOUCH_WRITE), 0, "write in it");
	vml_mm_stats(mm, &st);
	is_int(st.rss_pages, 1 + 512, "a write fault maps a whole huge page");
	is_int(vml_touch(mm, BASE + 2 * M2, PG, VML_TOUCH_READ), 0, "read the next 2 MiB");
	vml_mm_stats(mm, &st);
	is_int(st.rss_pages, 1 + 512, "a read maps the huge zero page: no RSS");
	is_int(vml_touch(mm, BASE + 2 * M2, PG, VML_TOUCH_WRITE), 0, "then write it");
	vml_mm_stats(mm, &st);
	is_int(st.rss_pages, 1 + 512 + 1, "a write to the huge zero page copies one small page");
	is_int(vml_fork(mm, &child), 0, "fork shares the huge page");
	is_int(vml_mprotect(mm, BASE + M2, PG, PROT_READ), 0, "mprotect one page of it");
	vml_mm_stats(mm, &st);
	is_int(st.rss_pages, 1 + 512 + 1, "splitting the mapping keeps the pages");
	is_int(vml_touch(mm, BASE + M2 + PG, PG, VML_TOUCH_WRITE), 0, "COW one page");
	vml_mm_stats(mm, &st);
	is_int(st.rss_pages, 1 + 512 + 1, "COW replaces a page");
	is_int(vml_munmap(mm, BASE + M2 + 100 * PG, PG), 0, "punch a hole in it");
	vml_mm_stats(mm, &st);
	is_int(st.rss_pages, 1 + 511 + 1, "one page gone");
	vml_mm_destroy(child);
	vml_mm_destroy(mm);
}

/*
 * An mm that exits with a locked VMA munlocks its pages (exit_mmap's
 * unmap_vmas): a shmem page another process mapped locked is evictable -
 * inactive in numa_maps - once that process is gone.
 */
static void test_exit_munlocks(void)
{
	struct vml_mm *locker = new_mm(), *mm = new_mm();
	struct vml_file *f;
	char *t;

	is_int(vml_file_create(sys, "/dev/shm/s0", 4 * PG, VML_FILE_SHMEM, &f), 0, "shmem file");
	is_int(vml_mmap(locker, BASE, 4 * PG, PROT_READ, MAP_SHARED | MAP_FIXED | MAP_LOCKED, f, 0,
			NULL), 0, "mapped locked (populated, mlocked)");
	is_int(vml_mmap(mm, BASE, 4 * PG, PROT_READ, MAP_SHARED | MAP_FIXED, f, 0, NULL), 0,
	       "mapped by another mm");
	must_succeed(vml_touch(mm, BASE, 4 * PG, VML_TOUCH_READ));
	t = read_view(mm, VML_VIEW_NUMA_MAPS, VML_LOCK_VMA, 4096);
	ok(t && !strstr(t, "active="), "while the locker lives the pages are unevictable");
	free(t);
	vml_mm_destroy(locker);
	/* mlock drains this CPU's batches first: the exit's munlocks show */
	is_int(map_anon(mm, BASE + 0x100000, PG, PROT_READ | PROT_WRITE), 0, "an anonymous page");
	is_int(vml_mlock(mm, BASE + 0x100000, PG), 0, "mlocked");
	t = read_view(mm, VML_VIEW_NUMA_MAPS, VML_LOCK_VMA, 4096);
	ok(t && strstr(t, "active=0"), "after the locker's exit they are inactive");
	if (t && !strstr(t, "active=0"))
		tap_diag("%s", t);
	free(t);
	vml_mm_destroy(mm);
	vml_file_put(f);
}

int main(void)
{
	/* These tests follow mainline, which maps the zero page on reads. */
	if (vml_sys_create(&(struct vml_sys_config){ .use_zero_page = true,
						     .use_huge_zero_page = true }, &sys))
		return 1;
	test_mmap_errors();
	test_munmap();
	test_mprotect_split_merge();
	test_anon_vma_merge_rules();
	test_mremap();
	test_mremap_multi_vma();
	test_faults();
	test_mlock_and_madvise();
	test_exit_munlocks();
	test_anon_names();
	test_files_and_shared();
	test_map_count_limit();
	test_reader_chunks();
	test_thp();
	vml_sys_destroy(sys);
	return tap_done();
}
