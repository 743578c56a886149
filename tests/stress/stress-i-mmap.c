// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stress: files' i_mmap interval trees under churn. Writers, each with its
 * own address space, map two files (a regular one with large folios and a
 * shmem object) at random offsets, unmap, protect, remap, fault, fork
 * (keeping the child a while) and advise MADV_COLD/PAGEOUT - which splits
 * large page-cache folios and so unmaps them from every mapping through
 * i_mmap, in the other writers' address spaces too. Meanwhile rmap walkers
 * take i_mmap_rwsem for reading and walk random page ranges of both files.
 * Every walk is checked:
 *   - each VMA found belongs to the file and maps a page in the range;
 *   - they come in page-offset order, never more than the tree holds;
 *   - now and then the whole tree validates (order, balance, augmentation).
 * After the threads join, each file's tree holds exactly the VMAs of every
 * live address space that map it, and after every exit none.
 *
 * The i_mmap order comes from $VML_I_MMAP_ORDER (pre or post; meson runs
 * both). The seed is printed; VML_SEED replays the random choices.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "mm/file.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/vma.h"
#include "mm_helpers.h"
#include "run_threads.h"
#include "tap.h"
#include "util/rand.h"

#define NWRITERS 3
#define NWALKERS 2
#define WINDOW (8UL << 20)
#define LIB_PAGES 256
#define OBJ_PAGES 128

static struct vml_sys *sys;
static struct vml_mm *mms[NWRITERS], *children[NWRITERS];
static pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;	/* children[] */
static struct vml_file *files[2];
static const unsigned long file_pages[2] = { LIB_PAGES, OBJ_PAGES };
static uint64_t seed;
static atomic_bool stop;
static atomic_ulong walks, found, ops, violations;

static void report(const char *what, unsigned long first, unsigned long last)
{
	if (atomic_fetch_add(&violations, 1) < 5)
		printf("# violation: %s (pages %lu-%lu)\n", what, first, last);
}

static void *walker(void *arg)
{
	struct vml_rand r = vml_rand_init(seed, 100 + (uintptr_t)arg);

	while (!atomic_load(&stop)) {
		int f = (int)vml_rand_below(&r, 2);
		struct vml_file *file = files[f];
		unsigned long first = vml_rand_below(&r, file_pages[f] + 8);
		unsigned long last = first + vml_rand_below(&r, 32);
		unsigned long n = 0, prev_pgoff = 0;
		struct vma *vma;

		i_mmap_lock_read(file);
		vma_interval_tree_foreach(vma, file, first, last) {
			if (vma->vm_file != file)
				report("a VMA of another file", first, last);
			else if (vma->vm_pgoff > last || vma_last_pgoff(vma) < first)
				report("a VMA not mapping the range", first, last);
			else if (n && vma->vm_pgoff < prev_pgoff)
				report("out of page-offset order", first, last);
			prev_pgoff = vma->vm_pgoff;
			if (++n > file->i_mmap.count) {
				report("more VMAs than the tree holds", first, last);
				break;
			}
		}
		if (vml_rand_below(&r, 64) == 0 && itree_validate(&file->i_mmap))
			report("the tree does not validate", 0, ~0UL);
		i_mmap_unlock_read(file);
		atomic_fetch_add(&walks, 1);
		atomic_fetch_add(&found, n);
	}
	return NULL;
}

static void *writer(void *arg)
{
	uintptr_t me = (uintptr_t)arg;
	struct vml_rand r = vml_rand_init(seed, 200 + me);
	struct vml_mm *mm = mms[me];

	while (!atomic_load(&stop)) {
		unsigned long addr = BASE + vml_rand_below(&r, WINDOW / PG) * PG;
		unsigned long len = (1 + vml_rand_below(&r, 48)) * PG;
		unsigned int op = (unsigned int)vml_rand_below(&r, 100);
		int f = (int)vml_rand_below(&r, 2);
		struct vml_mm *child, *old;

		if (op < 30) {
			static const int prots[] = { PROT_READ, PROT_READ | PROT_EXEC,
						     PROT_READ | PROT_WRITE };

			may_fail(vml_mmap(mm, addr, len, prots[vml_rand_below(&r, 3)],
					  (vml_rand_below(&r, 2) ? MAP_SHARED : MAP_PRIVATE) | MAP_FIXED,
					  files[f], vml_rand_below(&r, file_pages[f]) * PG, NULL));
		} else if (op < 45) {
			may_fail(vml_touch(mm, addr, len, (int)vml_rand_below(&r, 2)));
		} else if (op < 55) {
			may_fail(vml_munmap(mm, addr, len));
		} else if (op < 67) {
			may_fail(vml_mprotect(mm, addr, len, vml_rand_below(&r, 2) ? PROT_READ :
						  PROT_READ | PROT_EXEC));
		} else if (op < 75) {
			may_fail(vml_mremap(mm, addr, len, len + (vml_rand_below(&r, 3) - 1) * PG,
					    MREMAP_MAYMOVE, 0, NULL));
		} else if (op < 95) {
			may_fail(vml_madvise(mm, addr, len,
					     vml_rand_below(&r, 2) ? MADV_COLD : MADV_PAGEOUT));
		} else if (!vml_fork(mm, &child)) {
			may_fail(vml_touch(child, addr, len, VML_TOUCH_READ));
			pthread_mutex_lock(&child_lock);
			old = children[me];
			children[me] = child;
			pthread_mutex_unlock(&child_lock);
			vml_mm_destroy(old);
		}
		atomic_fetch_add(&ops, 1);
	}
	return NULL;
}

/* Quiescent: the tree holds exactly the file VMAs of every live mm. */
static void check_trees(void)
{
	bool good = true;

	for (int f = 0; f < 2; f++) {
		unsigned long want = 0;

		for (int i = 0; i < 2 * NWRITERS; i++) {
			struct vml_mm *m = i < NWRITERS ? mms[i] : children[i - NWRITERS];
			struct vma_iterator vmi;
			struct vma *vma;

			if (!m)
				continue;
			mmap_read_lock(to_mm(m));
			vma_iter_init(&vmi, to_mm(m), 0);
			for_each_vma(vmi, vma) {
				struct vma *hit;
				bool in_tree = false;

				if (vma->vm_file != files[f])
					continue;
				want++;
				i_mmap_lock_read(files[f]);
				vma_interval_tree_foreach(hit, files[f], vma->vm_pgoff,
							  vma_last_pgoff(vma))
					in_tree |= hit == vma;
				i_mmap_unlock_read(files[f]);
				good &= in_tree;
			}
			mmap_read_unlock(to_mm(m));
		}
		good &= want == files[f]->i_mmap.count && !itree_validate(&files[f]->i_mmap);
		tap_diag("file %d: %lu VMAs map it", f, want);
	}
	ok(good, "after the run: each tree holds exactly the VMAs mapping its file, and validates");
}

int main(void)
{
	const char *env = getenv("VML_I_MMAP_ORDER");
	struct vml_sys_config cfg = {
		.swap_pages = 1024,
		.i_mmap_order = env && !strcmp(env, "pre") ? VML_I_MMAP_PRE : VML_I_MMAP_POST,
	};
	double secs = tap_stress_seconds(3);

	seed = tap_seed();
	tap_diag("i_mmap order %s", cfg.i_mmap_order == VML_I_MMAP_PRE ? "pre" : "post");
	if (vml_sys_create(&cfg, &sys) ||
	    vml_file_create(sys, "/tmp/lib.so", LIB_PAGES * PG, 0, &files[0]) ||
	    vml_file_create(sys, "/dev/shm/obj", OBJ_PAGES * PG, VML_FILE_SHMEM, &files[1]))
		abort();
	for (int i = 0; i < NWRITERS; i++)
		if (vml_mm_create(sys, &mms[i]))
			abort();
	run_threads((const struct thread_group[]){ { walker, NWALKERS }, { writer, NWRITERS } }, 2,
		    secs, &stop);
	tap_diag("%lu walks found %lu VMAs; %lu ops", atomic_load(&walks), atomic_load(&found),
		 atomic_load(&ops));
	ok(atomic_load(&walks) > 0 && atomic_load(&ops) > 0 && atomic_load(&found) > 0,
	   "walkers and writers ran, and walks found mappings");
	is_int(atomic_load(&violations), 0, "every walk found only VMAs mapping its range, in order");
	check_trees();
	for (int i = 0; i < NWRITERS; i++) {
		vml_mm_destroy(children[i]);
		vml_mm_destroy(mms[i]);
	}
	ok(itree_empty(&files[0]->i_mmap) && itree_empty(&files[1]->i_mmap),
	   "after every exit both trees are empty");
	vml_file_put(files[0]);
	vml_file_put(files[1]);
	vml_sys_destroy(sys);
	return tap_done();
}
