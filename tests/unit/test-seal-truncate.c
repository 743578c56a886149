// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the ops of issue 26 on the model's public API: mseal,
 * ftruncate and hole punching through i_mmap, clear_refs, MADV_POPULATE_*,
 * MADV_REMOVE and MADV_COLLAPSE. The outcomes are 6.18's, checked against
 * the live kernel by the tests/scripts corpus (selftest-mseal,
 * selftest-truncate-punch, selftest-clear-refs, selftest-madv-populate,
 * selftest-khugepaged-collapse*); here they run under the sanitizers and
 * lockdep too.
 */
#include <stdio.h>

#include "mm_helpers.h"
#include "tap.h"
#include "util/linux_compat.h"
#include "vmalock/khugepaged.h"

static struct vml_sys *sys;

/* The first "NAME: N kB" of smaps after the line starting with @vma_start, in kB; -1 if none. */
static long smaps_field(struct vml_mm *mm, const char *vma_start, const char *name)
{
	char *s = read_view(mm, VML_VIEW_SMAPS, VML_LOCK_MMAP, 4096), *p, *q;
	long v = -1;

	p = s ? strstr(s, vma_start) : NULL;
	q = p ? strstr(p, name) : NULL;
	if (q)
		v = strtol(q + strlen(name), NULL, 10);
	free(s);
	return v;
}

static void test_mseal(void)
{
	struct vml_mm *mm = mm_of_sys(sys);
	char *maps;

	is_int(map_anon(mm, BASE, 16 * PG, PROT_READ | PROT_WRITE), 0, "map 16 pages");
	is_int(vml_mseal(mm, BASE + 4 * PG, 2 * PG, 0), 0, "seal 2 pages in the middle");
	is_int(vml_mseal(mm, BASE + 4 * PG, 2 * PG, 0), 0, "seal them again");
	is_int(vml_mseal(mm, BASE + 4 * PG, PG, 0), 0, "and a part of them (the loop ends)");
	is_int(vml_mseal(mm, BASE, 32 * PG, 0), -ENOMEM, "a hole: ENOMEM");
	is_int(vml_mseal(mm, BASE + 1, PG, 0), -EINVAL, "unaligned: EINVAL");
	is_int(vml_mseal(mm, BASE, PG, 1), -EINVAL, "flags: EINVAL");
	is_int(vml_munmap(mm, BASE + 4 * PG, PG), -EPERM, "munmap of it: EPERM");
	is_int(vml_mprotect(mm, BASE + 4 * PG, 2 * PG, PROT_READ | PROT_WRITE), -EPERM,
	       "mprotect to its own prot: EPERM");
	is_int(vml_mremap(mm, BASE + 4 * PG, 2 * PG, 2 * PG, 0, 0, NULL), -EPERM, "mremap: EPERM");
	is_int(vml_mmap(mm, BASE + 4 * PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			NULL, 0, NULL), -EPERM, "mmap over it: EPERM");
	is_int(vml_madvise(mm, BASE + 4 * PG, 2 * PG, MADV_DONTNEED), 0,
	       "dontneed on a writable sealed VMA: allowed");
	is_int(vml_munmap(mm, BASE + 2 * PG, 4 * PG), -EPERM, "munmap into it: EPERM");
	maps = maps_of(mm);
	is_int(count_lines(maps), 4, "... leaving the first VMA split where it began");
	free(maps);
	is_int(map_anon(mm, BASE + 64 * PG, 4 * PG, PROT_READ), 0, "a read-only VMA");
	is_int(vml_mseal(mm, BASE + 64 * PG, 4 * PG, 0), 0, "sealed");
	is_int(vml_madvise(mm, BASE + 64 * PG, PG, MADV_DONTNEED), -EPERM, "dontneed: EPERM");
	is_int(vml_madvise(mm, BASE + 64 * PG, PG, MADV_FREE), -EPERM, "free: EPERM");
	is_int(vml_madvise(mm, BASE + 64 * PG, PG, MADV_WIPEONFORK), -EPERM, "wipeonfork: EPERM");
	is_int(vml_madvise(mm, BASE + 64 * PG, PG, MADV_COLD), 0, "cold: allowed");
	{
		char *s = read_view(mm, VML_VIEW_SMAPS, VML_LOCK_MMAP, 4096);
		char *v = s ? strstr(s, "100000040000-") : NULL;

		v = v ? strstr(v, "VmFlags:") : NULL;
		ok(v && !strncmp(v, "VmFlags: rd mr mw me sl \n", 25), "VmFlags shows sl");
		free(s);
	}
	vml_mm_destroy(mm);
}

static void test_truncate_punch(void)
{
	struct vml_mm *mm = mm_of_sys(sys);
	struct vml_file *f, *s;

	is_int(vml_file_create(sys, "/tmp/vmalock.t/f", 64 * PG, 0, &f), 0, "a file");
	is_int(vml_file_create(sys, "/dev/shm/vmalock.t/s", 16 * PG, VML_FILE_SHMEM, &s), 0,
	       "a tmpfs file");
	is_int(vml_mmap(mm, BASE, 64 * PG, PROT_READ, MAP_SHARED | MAP_FIXED, f, 0, NULL), 0,
	       "shared mapping");
	is_int(vml_mmap(mm, BASE + 128 * PG, 64 * PG, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_FIXED, f, 0, NULL), 0, "private mapping");
	is_int(vml_touch(mm, BASE, 64 * PG, VML_TOUCH_READ), 0, "read it all");
	is_int(vml_touch(mm, BASE + 128 * PG, 64 * PG, VML_TOUCH_WRITE), 0, "copy it all");
	is_int(vml_file_truncate(f, 32 * PG), 0, "truncate to half");
	is_int(vml_touch(mm, BASE + 40 * PG, PG, VML_TOUCH_READ), -EIO, "beyond EOF: SIGBUS");
	is_int(vml_touch(mm, BASE + 168 * PG, PG, VML_TOUCH_READ), -EIO,
	       "beyond EOF in the private mapping: its copy went too");
	is_int((int)smaps_field(mm, "100000000000-", "Rss:"), 128, "the shared mapping keeps 32 pages");
	is_int((int)smaps_field(mm, "100000080000-", "Anonymous:"), 128, "the private one 32 copies");
	is_int(vml_file_punch(f, 8 * PG, 8 * PG), 0, "punch 8 pages");
	/*
	 * 8 pages go, and the 64 KiB folio they were half of is split (try_folio_split),
	 * which unmaps its other half too: a file folio is not mapped again after a split
	 */
	is_int((int)smaps_field(mm, "100000000000-", "Rss:"), 64,
	       "16 pages gone from the shared mapping");
	is_int((int)smaps_field(mm, "100000080000-", "Anonymous:"), 128, "the copies stay");
	is_int(vml_file_punch(f, 0, 0), -EINVAL, "zero length: EINVAL");
	is_int(vml_file_punch(f, -1, PG), -EINVAL, "negative offset: EINVAL");
	is_int(vml_file_truncate(f, -1), -EINVAL, "negative size: EINVAL");
	is_int(vml_mmap(mm, BASE + 256 * PG, 16 * PG, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_FIXED, s, 0, NULL), 0, "shared tmpfs mapping");
	is_int(vml_touch(mm, BASE + 256 * PG, 16 * PG, VML_TOUCH_WRITE), 0, "written");
	is_int(vml_madvise(mm, BASE + 256 * PG, 4 * PG, MADV_REMOVE), 0, "MADV_REMOVE");
	is_int((int)smaps_field(mm, "100000100000-", "Rss:"), 48, "4 pages punched");
	is_int(vml_madvise(mm, BASE + 128 * PG, PG, MADV_REMOVE), -EACCES,
	       "MADV_REMOVE of a private mapping: EACCES");
	vml_file_put(f);
	vml_file_put(s);
	vml_mm_destroy(mm);
}

static void test_clear_refs_populate(void)
{
	struct vml_mm *mm = mm_of_sys(sys);

	is_int(map_anon(mm, BASE, 8 * PG, PROT_READ | PROT_WRITE), 0, "map 8 pages");
	is_int(vml_madvise(mm, BASE, 8 * PG, MADV_POPULATE_WRITE), 0, "populate them");
	is_int((int)smaps_field(mm, "100000000000-", "Rss:"), 32, "all 8 in");
	is_int((int)smaps_field(mm, "100000000000-", "Referenced:"), 32, "all referenced");
	is_int(vml_clear_refs(mm, 1), 0, "clear_refs 1");
	is_int((int)smaps_field(mm, "100000000000-", "Referenced:"), 0, "none referenced");
	is_int(vml_touch(mm, BASE, 2 * PG, VML_TOUCH_READ), 0, "read 2");
	is_int((int)smaps_field(mm, "100000000000-", "Referenced:"), 8, "2 referenced");
	is_int(vml_clear_refs(mm, 3), 0, "clear_refs 3: files only");
	is_int((int)smaps_field(mm, "100000000000-", "Referenced:"), 8, "the anonymous VMA kept them");
	is_int(vml_clear_refs(mm, 4), 0, "clear_refs 4");
	is_int(vml_clear_refs(mm, 5), 0, "clear_refs 5");
	is_int(vml_clear_refs(mm, 0), -EINVAL, "clear_refs 0: EINVAL");
	is_int(vml_clear_refs(mm, 6), -EINVAL, "clear_refs 6: EINVAL");
	is_int(map_anon(mm, BASE + 16 * PG, 4 * PG, PROT_READ), 0, "a read-only VMA");
	is_int(vml_madvise(mm, BASE + 16 * PG, 4 * PG, MADV_POPULATE_WRITE), -EINVAL,
	       "populate_write of it: EINVAL");
	is_int(vml_madvise(mm, BASE + 8 * PG, 4 * PG, MADV_POPULATE_READ), -ENOMEM,
	       "populate of a hole: ENOMEM");
	vml_mm_destroy(mm);
}

static void test_collapse(void)
{
	struct vml_mm *mm = mm_of_sys(sys);
	unsigned long huge = 2UL << 20;

	is_int(map_anon(mm, BASE, 2 * huge, PROT_READ | PROT_WRITE), 0, "map 4 MiB");
	is_int(vml_touch(mm, BASE, PG, VML_TOUCH_WRITE), 0, "one page in the first 2 MiB");
	is_int(vml_madvise_collapse(mm, BASE, 2 * huge), -EINVAL,
	       "collapse: the second range has no table (EINVAL)");
	is_int((int)smaps_field(mm, "100000000000-", "AnonHugePages:"), 2048,
	       "... but the first was collapsed");
	is_int(vml_madvise_collapse(mm, BASE, huge), 0, "again: PMD-mapped already (0)");
	is_int(vml_madvise_collapse(mm, BASE + PG, 2 * PG), -EINVAL, "inside one block: EINVAL");
	is_int(vml_madvise_collapse(mm, BASE + 4 * huge, huge), -ENOMEM, "a hole: ENOMEM");
	is_int(vml_madvise(mm, BASE, huge, MADV_COLLAPSE), -EINVAL, "vml_madvise refuses it");
	vml_mm_destroy(mm);
}

int main(void)
{
	if (vml_sys_create(&(struct vml_sys_config){ 0 }, &sys))
		return 1;
	test_mseal();
	test_truncate_punch();
	test_clear_refs_populate();
	test_collapse();
	vml_sys_destroy(sys);
	return tap_done();
}
