// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A file's i_mmap, the interval tree of the VMAs that map it (src/mm/file.h),
 * under both i_mmap orders (seed 001: the new VMA's tree store inside or
 * outside the write section): after every step of a script that maps one
 * regular and one shmem file into several address spaces at many offsets,
 * splits and merges the mappings (mprotect, munmap, mremap, MAP_FIXED over
 * them), forks and exits, a walk of the tree for every page range of the
 * file - single pages, the file's ends, random ranges, the whole file -
 * must return exactly the VMAs of all the address spaces that map a page in
 * the range: no more, none missing, none twice, in page-offset order. The
 * tree itself must validate, and each mm's map_count must match its VMAs.
 *
 * Then the write sections: an mmap of a file takes i_mmap_rwsem(W) once in
 * both orders, an exit removes up to 8 consecutive VMAs of one file per
 * section (unlink_file_vma_batch), and map_count is updated inside the
 * section that inserts a new mapping under the pre order, after it under
 * the post order.
 */
#include <stdint.h>

#include "mm/file.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/vma.h"
#include "mm_helpers.h"
#include "tap.h"
#include "util/rand.h"

#define FILE_PAGES 64
#define MAX_MMS 6

static struct vml_sys *sys;
static struct vml_mm *mms[MAX_MMS];
static unsigned int nr_mms;
static struct vml_file *files[2];

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;

	return x < y ? -1 : x > y;
}

/* Every VMA of every mm mapping one of @file's pages [first, last], the slow way. */
static size_t brute_force(struct vml_file *file, unsigned long first, unsigned long last,
			  struct vma **out, size_t cap)
{
	size_t n = 0;

	for (unsigned int i = 0; i < nr_mms; i++) {
		struct mm *mm = to_mm(mms[i]);
		struct vma_iterator vmi;
		struct vma *vma;

		mmap_read_lock(mm);
		vma_iter_init(&vmi, mm, 0);
		for_each_vma(vmi, vma)
			if (vma->vm_file == file && vma->vm_pgoff <= last &&
			    vma_last_pgoff(vma) >= first && n < cap)
				out[n++] = vma;
		mmap_read_unlock(mm);
	}
	return n;
}

/* The tree's answer against the slow one for [first, last]. */
static bool range_exact(struct vml_file *file, unsigned long first, unsigned long last)
{
	struct vma *want[256], *got[256], *vma, *prev = NULL;
	size_t nw = brute_force(file, first, last, want, 256), ng = 0;
	bool good = true;

	i_mmap_lock_read(file);
	vma_interval_tree_foreach(vma, file, first, last) {
		if (ng < 256)
			got[ng++] = vma;
		if (prev && prev->vm_pgoff > vma->vm_pgoff)
			good = false;	/* not in page-offset order */
		prev = vma;
	}
	i_mmap_unlock_read(file);
	if (!good || ng != nw)
		return false;
	qsort(want, nw, sizeof(*want), cmp_ptr);
	qsort(got, ng, sizeof(*got), cmp_ptr);
	return !memcmp(want, got, nw * sizeof(*want));
}

/* Every check on both files; a failure is reported once per step, with its range. */
static bool all_exact(struct vml_rand *r, const char *step)
{
	for (int f = 0; f < 2; f++) {
		struct vml_file *file = files[f];
		unsigned long total = 0;
		struct vma *all[256];
		int bad;

		i_mmap_lock_read(file);
		bad = itree_validate(&file->i_mmap);
		i_mmap_unlock_read(file);
		total = brute_force(file, 0, ~0UL, all, 256);
		if (bad || total != file->i_mmap.count) {
			tap_diag("%s: file %d: tree invalid or holds %lu VMAs, %lu map it", step, f,
			     file->i_mmap.count, total);
			return false;
		}
		for (unsigned long p = 0; p <= FILE_PAGES + 1; p++)
			if (!range_exact(file, p, p)) {
				tap_diag("%s: file %d: page %lu", step, f, p);
				return false;
			}
		for (int i = 0; i < 40; i++) {
			unsigned long a = vml_rand_below(r, FILE_PAGES + 4);
			unsigned long b = a + vml_rand_below(r, 24);

			if (!range_exact(file, a, b)) {
				tap_diag("%s: file %d: pages %lu-%lu", step, f, a, b);
				return false;
			}
		}
		if (!range_exact(file, 0, ~0UL) || !range_exact(file, FILE_PAGES - 1, ~0UL)) {
			tap_diag("%s: file %d: the whole file or its end", step, f);
			return false;
		}
	}
	for (unsigned int i = 0; i < nr_mms; i++) {
		struct vml_mm_stats st;
		char *maps = maps_of(mms[i]);

		vml_mm_stats(mms[i], &st);
		if ((uint64_t)count_lines(maps) != st.map_count) {
			tap_diag("%s: mm %u: map_count %llu, %d VMAs", step, i,
			     (unsigned long long)st.map_count, count_lines(maps));
			free(maps);
			return false;
		}
		free(maps);
	}
	return true;
}

#define MB (1UL << 20)
#define RW (PROT_READ | PROT_WRITE)

static int map_file(struct vml_mm *mm, unsigned long addr, unsigned long pages, int prot,
		    int flags, int f, unsigned long pgoff)
{
	return vml_mmap(mm, addr, pages * PG, prot, flags | MAP_FIXED, files[f], pgoff * PG, NULL);
}

static void script(enum vml_i_mmap_order order)
{
	const char *name = order == VML_I_MMAP_PRE ? "pre" : "post";
	struct vml_sys_config cfg = { .swap_pages = 256, .i_mmap_order = order };
	struct vml_rand r = vml_rand_init(7, order);
	struct vml_mm *child, *mm;
	bool good = true;
	int err = 0;

	if (vml_sys_create(&cfg, &sys) ||
	    vml_file_create(sys, "/tmp/lib.so", FILE_PAGES * PG, 0, &files[0]) ||
	    vml_file_create(sys, "/dev/shm/obj", FILE_PAGES * PG, VML_FILE_SHMEM, &files[1]))
		abort();
	nr_mms = 0;
	for (int i = 0; i < 3; i++)
		if (vml_mm_create(sys, &mms[nr_mms++]))
			abort();
	mm = mms[0];

	/* A library's segments in each mm, the same pages three times over. */
	for (unsigned int i = 0; i < 3; i++) {
		unsigned long base = BASE + i * 16 * MB;

		err |= map_file(mms[i], base, 8, PROT_READ, MAP_PRIVATE, 0, 0);
		err |= map_file(mms[i], base + 8 * PG, 32, PROT_READ | PROT_EXEC, MAP_PRIVATE, 0, 8);
		err |= map_file(mms[i], base + 40 * PG, 16, PROT_READ, MAP_PRIVATE, 0, 40);
		err |= map_file(mms[i], base + 56 * PG, 8, RW, MAP_PRIVATE, 0, 56);
		err |= map_file(mms[i], base + 2 * MB, FILE_PAGES, RW, MAP_SHARED, 1, 0);
	}
	good &= !err && all_exact(&r, "segments");
	/* Overlapping windows of both files at odd offsets, and past the end. */
	err |= map_file(mm, BASE + 4 * MB, 20, PROT_READ, MAP_SHARED, 0, 30);
	err |= map_file(mm, BASE + 5 * MB, 3, PROT_READ, MAP_SHARED, 0, FILE_PAGES - 1);
	err |= map_file(mm, BASE + 6 * MB, 10, RW, MAP_SHARED, 1, 5);
	err |= map_file(mm, BASE + 7 * MB, 1, RW, MAP_SHARED, 1, 5);
	good &= !err && all_exact(&r, "windows");
	/* Splits: mprotect in the middle, munmap a hole, MAP_FIXED over part of a mapping. */
	err |= vml_mprotect(mm, BASE + 12 * PG, 4 * PG, PROT_READ);
	err |= vml_munmap(mm, BASE + 2 * MB + 10 * PG, 3 * PG);
	err |= map_file(mm, BASE + 4 * MB + 5 * PG, 4, PROT_READ, MAP_SHARED, 1, 50);
	good &= !err && all_exact(&r, "splits");
	/* Merge back (same protection, continuous offsets) and move a mapping. */
	err |= vml_mprotect(mm, BASE + 12 * PG, 4 * PG, PROT_READ | PROT_EXEC);
	err |= vml_mremap(mm, BASE + 6 * MB, 10 * PG, 10 * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
			  BASE + 9 * MB, NULL);
	err |= vml_mremap(mm, BASE + 7 * MB, PG, 6 * PG, 0, 0, NULL);	/* grow in place */
	good &= !err && all_exact(&r, "merge, mremap");
	/* Fork: the child's copies join each file's tree; then both change. */
	err |= vml_touch(mm, BASE + 56 * PG, 2 * PG, VML_TOUCH_WRITE);
	err |= vml_fork(mm, &child);
	if (!err) {
		mms[nr_mms++] = child;
		err |= vml_munmap(mm, BASE + 4 * MB, 2 * PG);
		err |= vml_mprotect(child, BASE + 2 * MB, 8 * PG, PROT_READ);
		err |= map_file(child, BASE + 10 * MB, 64, PROT_READ, MAP_SHARED, 0, 0);
	}
	good &= !err && all_exact(&r, "fork");
	/* Exit: one mm goes; a shared anonymous object comes and goes too. */
	vml_mm_destroy(mms[1]);
	mms[1] = mms[--nr_mms];
	err |= vml_mmap(mm, BASE + 12 * MB, 8 * PG, RW, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED,
			NULL, 0, NULL);
	err |= vml_munmap(mm, BASE + 12 * MB, 8 * PG);
	good &= !err && all_exact(&r, "exit");
	ok(good, "%s: every page range of both files finds exactly the VMAs mapping it", name);

	while (nr_mms)
		vml_mm_destroy(mms[--nr_mms]);
	ok(files[0]->i_mmap.count == 0 && files[1]->i_mmap.count == 0 &&
	   itree_empty(&files[0]->i_mmap), "%s: after every exit both trees are empty", name);
	vml_file_put(files[0]);
	vml_file_put(files[1]);
	vml_sys_destroy(sys);
}

/* ---- the write sections ---- */

static unsigned long sections;
static struct vml_mm *watched;
static uint64_t map_count_at_end[8];

/* Called after each timed write section; map_count read after it ended. */
static void count_section(const struct vml_file *file, uint64_t wait_ns, uint64_t hold_ns)
{
	(void)file;
	(void)wait_ns;
	(void)hold_ns;
	if (sections < 8)
		map_count_at_end[sections] = load_relaxed(&to_mm(watched)->map_count);
	sections++;
}

static void write_sections(enum vml_i_mmap_order order)
{
	const char *name = order == VML_I_MMAP_PRE ? "pre" : "post";
	struct vml_sys_config cfg = { .i_mmap_order = order };
	struct vml_file *f;
	struct vml_mm *mm;
	int err = 0;

	if (vml_sys_create(&cfg, &sys) || vml_file_create(sys, "/tmp/lib.so", 64 * PG, 0, &f) ||
	    vml_mm_create(sys, &mm))
		abort();
	watched = mm;
	sections = 0;
	atomic_store(&vml_i_mmap_time_hook, count_section);
	err |= vml_mmap(mm, BASE, 8 * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, f, 0, NULL);
	err |= vml_mmap(mm, BASE + 8 * PG, 8 * PG, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, f,
			8 * PG, NULL);
	is_int(sections, 2, "%s: one i_mmap write section per new file mapping", name);
	/*
	 * Read just after each section ended: pre counted the new VMA inside
	 * it; post (the model publishes the tree and map_count right after
	 * the i_mmap insertion) not yet.
	 */
	if (order == VML_I_MMAP_PRE)
		ok(!err && map_count_at_end[0] == 1 && map_count_at_end[1] == 2,
		   "pre: map_count counts the new mapping inside the section");
	else
		ok(!err && map_count_at_end[0] == 0 && map_count_at_end[1] == 1,
		   "post: map_count counts the new mapping after the section");
	for (int i = 2; i < 11; i++)
		err |= vml_mmap(mm, BASE + (unsigned long)i * 8 * PG, 8 * PG,
				(i & 1) ? PROT_READ | PROT_EXEC : PROT_READ, MAP_PRIVATE | MAP_FIXED, f,
				(unsigned long)(i % 8) * 8 * PG, NULL);
	{
		struct vml_mm_stats st;

		vml_mm_stats(mm, &st);
		is_int(st.map_count, 11, "%s: 11 mappings of one file, none merged", name);
	}
	sections = 0;
	vml_mm_destroy(mm);
	is_int(sections, 2, "%s: exit removes 11 VMAs of one file in 2 sections (8 + 3)", name);
	atomic_store(&vml_i_mmap_time_hook, NULL);
	vml_file_put(f);
	vml_sys_destroy(sys);
}

int main(void)
{
	script(VML_I_MMAP_POST);
	script(VML_I_MMAP_PRE);
	write_sections(VML_I_MMAP_POST);
	write_sections(VML_I_MMAP_PRE);
	return tap_done();
}
