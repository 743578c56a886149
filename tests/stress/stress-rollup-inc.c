// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stress: the incremental smaps_rollup (VML_ROLLUP_INCREMENTAL) under
 * threads. Writers map, unmap, protect, advise (dontneed, free, cold,
 * pageout to swap, hugepage), lock, remap, fork (a child that writes its
 * copies, keeps them a while, then exits) and fault anonymous, file, shmem
 * and huge pages, each in its own window of one mm, while readers read
 * smaps_rollup from the sums (no mmap_lock: they refresh the volatile
 * tables under their ptls) and walked (mmap_lock or VMA locks). Every
 * read is checked: the record is whole (header and 22 lines) and no field
 * exceeds what the windows can map (a field the sums drove below zero
 * would print as a huge number). After the threads join, the sums must be
 * byte-identical to the walk, for the parent and a last child. The seed is
 * printed; VML_SEED replays the random choices (not the timing).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "mm_helpers.h"
#include "run_threads.h"
#include "tap.h"
#include "util/compiler.h"
#include "util/linux_compat.h"
#include "util/rand.h"

#define NWRITERS 2
#define NREADERS 2
#define WINDOW (32UL << 20)

static struct vml_sys *sys;
static struct vml_mm *mm;
static struct vml_file *files[3];
static uint64_t seed;
static atomic_bool stop;
static atomic_ulong reads, ops, violations;

static char *rollup(struct vml_mm *m, bool walk, enum vml_lock_policy lock)
{
	struct vml_reader *r;
	size_t len = 0;
	char *out = calloc(1, 8192);
	ssize_t n;

	if (!out || vml_reader_open(m, VML_VIEW_SMAPS_ROLLUP, lock, &r))
		abort();
	if (walk && vml_reader_set_flags(r, VML_READER_ROLLUP_WALK))
		abort();
	while ((n = vml_reader_read(r, out + len, 8191 - len)) > 0)
		len += (size_t)n;
	vml_reader_close(r);
	return out;
}

/* A whole record, every kB value at most what NWRITERS windows (and copies) can hold. */
static bool well_formed(const char *text)
{
	const unsigned long max_kb = 4 * NWRITERS * (WINDOW >> 10);
	int lines = 0;

	if (!strstr(text, "[rollup]\n"))
		return false;
	for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
		const char *colon = strchr(p + 1, ':');

		if (!colon || strtoul(colon + 1, NULL, 10) > max_kb)
			return false;
		lines++;
	}
	return lines == 22;
}

static void *reader(void *arg)
{
	struct vml_rand r = vml_rand_init(seed, 100 + (uintptr_t)arg);

	while (!atomic_load(&stop)) {
		bool walk = vml_rand_below(&r, 4) == 0;
		char *t = rollup(mm, walk, vml_rand_below(&r, 2) ? VML_LOCK_VMA : VML_LOCK_MMAP);

		if (!well_formed(t) && atomic_fetch_add(&violations, 1) < 3)
			printf("# violation (%s):\n%s", walk ? "walked" : "incremental", t);
		free(t);
		atomic_fetch_add(&reads, 1);
	}
	return NULL;
}

static void *writer(void *arg)
{
	struct vml_rand r = vml_rand_init(seed, 200 + (uintptr_t)arg);
	unsigned long base = BASE + (uintptr_t)arg * WINDOW;
	struct vml_mm *child = NULL;

	while (!atomic_load(&stop)) {
		unsigned long addr = base + vml_rand_below(&r, WINDOW / PG) * PG;
		unsigned long len = (1 + vml_rand_below(&r, 32)) * PG;
		unsigned int op = (unsigned int)vml_rand_below(&r, 100);
		struct vml_file *f = files[vml_rand_below(&r, 3)];

		if (vml_rand_below(&r, 8) == 0) {
			addr &= ~((2UL << 20) - 1);
			len = 2UL << 20;
		}
		if (op < 15) {
			map_anon(mm, addr, len, PROT_READ | PROT_WRITE);
			if (len >= (2UL << 20))
				may_fail(vml_madvise(mm, addr, len, MADV_HUGEPAGE));
		} else if (op < 22) {
			may_fail(vml_mmap(mm, addr, len, PROT_READ | PROT_WRITE,
					  (vml_rand_below(&r, 2) ? MAP_SHARED : MAP_PRIVATE) | MAP_FIXED,
					  f, vml_rand_below(&r, 16) * PG, NULL));
		} else if (op < 55) {
			may_fail(vml_touch(mm, addr, len, vml_rand_below(&r, 2)));
		} else if (op < 62) {
			may_fail(vml_mprotect(mm, addr, len, vml_rand_below(&r, 2) ? PROT_READ :
						  PROT_READ | PROT_WRITE));
		} else if (op < 68) {
			may_fail(vml_munmap(mm, addr, len));
		} else if (op < 86) {
			static const int adv[] = { MADV_DONTNEED, MADV_FREE, MADV_COLD, MADV_PAGEOUT,
						   MADV_WILLNEED };

			may_fail(vml_madvise(mm, addr, len,
					     adv[vml_rand_below(&r, ARRAY_LEN(adv))]));
		} else if (op < 91) {
			if (vml_rand_below(&r, 2))
				may_fail(vml_mlock(mm, addr, len));
			else
				may_fail(vml_munlock(mm, addr, len));
		} else if (op < 95) {
			may_fail(vml_mremap(mm, addr, len, len + PG, MREMAP_MAYMOVE, 0, NULL));
		} else if (op < 97) {
			may_fail(vml_clear_refs(mm, 1));
		} else if (child) {
			/* The child leaves: its pages' other mapper (the parent) is shared no more. */
			vml_mm_destroy(child);
			child = NULL;
		} else if (!vml_fork(mm, &child)) {
			may_fail(vml_touch(child, addr, len, VML_TOUCH_WRITE));
		}
		atomic_fetch_add(&ops, 1);
	}
	if (child)
		vml_mm_destroy(child);
	return NULL;
}

/* Quiescent: the sums equal the walk, in the parent and in a fresh child. */
static void check_quiescent(void)
{
	struct vml_mm *child;
	char *inc, *walk;
	bool same;

	inc = rollup(mm, false, VML_LOCK_VMA);
	walk = rollup(mm, true, VML_LOCK_MMAP);
	same = !strcmp(inc, walk);
	if (!same)
		tap_diag("parent: incremental\n%swalked\n%s", inc, walk);
	ok(same, "after the run: the parent's incremental rollup = the walked one");
	free(inc);
	free(walk);
	must_succeed(vml_fork(mm, &child));
	may_fail(vml_touch(child, BASE, WINDOW, VML_TOUCH_WRITE));
	inc = rollup(mm, false, VML_LOCK_VMA);
	free(walk = rollup(child, false, VML_LOCK_VMA));
	walk = rollup(mm, true, VML_LOCK_VMA);
	same = !strcmp(inc, walk);
	if (!same)
		tap_diag("parent after a child's writes: incremental\n%swalked\n%s", inc, walk);
	ok(same, "a child writes its copies: the parent's incremental rollup = the walked one");
	free(inc);
	free(walk);
	inc = rollup(child, false, VML_LOCK_VMA);
	walk = rollup(child, true, VML_LOCK_VMA);
	ok(!strcmp(inc, walk), "the child's incremental rollup = the walked one");
	free(inc);
	free(walk);
	vml_mm_destroy(child);
}

int main(void)
{
	struct vml_sys_config cfg = { .swap_pages = 512, .rollup = VML_ROLLUP_INCREMENTAL };
	double secs = tap_stress_seconds(3);

	seed = tap_seed();
	if (vml_sys_create(&cfg, &sys) || vml_mm_create(sys, &mm) ||
	    vml_file_create(sys, "/tmp/f", 80 * PG + 100, 0, &files[0]) ||
	    vml_file_create(sys, "/tmp/g", 16 * PG, 0, &files[1]) ||
	    vml_file_create(sys, "/dev/shm/s", 48 * PG, VML_FILE_SHMEM, &files[2]))
		abort();
	run_threads((const struct thread_group[]){ { reader, NREADERS }, { writer, NWRITERS } }, 2,
		    secs, &stop);
	tap_diag("%lu reads, %lu ops in %.1f s", atomic_load(&reads), atomic_load(&ops), secs);
	ok(atomic_load(&violations) == 0, "every rollup read was whole and in bounds (%lu not)",
	   atomic_load(&violations));
	ok(atomic_load(&reads) > 0 && atomic_load(&ops) > 0, "readers and writers ran");
	check_quiescent();
	for (int i = 0; i < 3; i++)
		vml_file_put(files[i]);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
	return tap_done();
}
