// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Allocation failures in the mm and proc layers: for each operation below,
 * make the N-th allocation fail for N = 1, 2, ... until the operation needs
 * fewer than N. Every failing call must return -ENOMEM and leave the
 * address space exactly as before (its maps text, map_count and resident
 * pages); a call that absorbs the failure must give the same result as
 * without fault injection. Leaks are ASan's to find (the build-fi build).
 *
 * One address space serves every scenario, each in its own 64 MiB slot
 * (a torn-down mm costs a page-table walk of the whole address space).
 * After a -ENOMEM the same call is retried with the next N on the same
 * state; after a call that succeeded the scenario is built again in a
 * fresh slot.
 *
 * Needs a build with -Dfault_injection=true; skips otherwise.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <time.h>	/* before tap.h, which uses clock_gettime without it */

#include "mm_helpers.h"
#include "tap.h"
#include "spaces/view.h"
#include "util/alloc.h"
#include "util/linux_compat.h"

#define SLOT (64UL << 20)
#define MAX_N 100000		/* more allocations than any op here makes */

static struct vml_sys *sys;
static struct vml_mm *mm;
static struct vml_file *file, *shm;
static unsigned int next_slot;
static const char *order_note = "";	/* the file mapping scenarios run again with pre */

struct ctx {
	unsigned long base;
	struct vml_mm *child;		/* fork */
};

/*
 * The maps lines inside the slot, addresses relative to its base, without
 * device and inode (a new shared anonymous mapping gets a new inode).
 * Caller frees.
 */
static char *slot_maps(unsigned long base)
{
	char *all = read_view(mm, VML_VIEW_MAPS, VML_LOCK_MMAP, 4096), *s, *out;
	size_t off = 0, cap;

	if (!all)
		return NULL;
	cap = strlen(all) + 1;
	out = malloc(cap);
	out[0] = '\0';
	for (s = all; *s;) {
		char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		struct maps_line ml;

		if (maps_line_parse(s, len, &ml) && ml.start >= base && ml.end <= base + SLOT)
			off += snprintf(out + off, cap - off, "+%lx-+%lx %s %08lx %.*s\n",
					ml.start - base, ml.end - base, ml.perms, ml.offset,
					(int)ml.name_len, s + ml.name_off);
		s = nl ? nl + 1 : s + len;
	}
	free(all);
	return out;
}

struct snap {
	char *maps;
	uint64_t map_count, rss;
};

static void snap_take(struct snap *sn, unsigned long base)
{
	struct vml_mm_stats st;

	sn->maps = slot_maps(base);
	vml_mm_stats(mm, &st);
	sn->map_count = st.map_count;
	sn->rss = st.rss_pages;
}

static void snap_free(struct snap *sn)
{
	free(sn->maps);
	sn->maps = NULL;
}

static bool snap_same(const struct snap *a, const struct snap *b, bool layout_only)
{
	return a->maps && b->maps && !strcmp(a->maps, b->maps) && a->map_count == b->map_count &&
	       (layout_only || a->rss == b->rss);
}

/* ---- scenarios: a setup (never under injection) and the operation ---- */

#define A(off) (c->base + (off) * PG)
#define RW (PROT_READ | PROT_WRITE)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED)

static void must(int ret, const char *what)
{
	if (ret) {
		printf("# setup failed: %s: %d\n", what, ret);
		abort();
	}
}

/* Three neighbours: [0,4) rw touched, [4,8) r--, [8,12) rw touched. */
static void setup_three(struct ctx *c)
{
	must(map_anon(mm, A(0), 4 * PG, RW), "map");
	must(map_anon(mm, A(4), 4 * PG, PROT_READ), "map");
	must(map_anon(mm, A(8), 4 * PG, RW), "map");
	must(vml_touch(mm, A(0), 4 * PG, VML_TOUCH_WRITE), "touch");
	must(vml_touch(mm, A(8), 4 * PG, VML_TOUCH_WRITE), "touch");
}

/* One 8-page rw VMA, touched. */
static void setup_one(struct ctx *c)
{
	must(map_anon(mm, A(0), 8 * PG, RW), "map");
	must(vml_touch(mm, A(0), 8 * PG, VML_TOUCH_WRITE), "touch");
}

/* [0,8) rw with [2,4) r-- in it, all touched: mprotect back merges three. */
static void setup_split(struct ctx *c)
{
	setup_one(c);
	must(vml_mprotect(mm, A(2), 2 * PG, PROT_READ), "mprotect");
}

/* A private file mapping and a shared anonymous one, touched. */
static void setup_files(struct ctx *c)
{
	must(vml_mmap(mm, A(0), 8 * PG, RW, MAP_PRIVATE | MAP_FIXED, file, 0, NULL), "mmap file");
	must(vml_mmap(mm, A(8), 4 * PG, RW, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL),
	     "mmap shared");
	must(vml_touch(mm, A(0), 12 * PG, VML_TOUCH_WRITE), "touch");
}

static void setup_none(struct ctx *c)
{
	(void)c;
}

static int op_mmap_over_middle(struct ctx *c)
{
	return vml_mmap(mm, A(1), 2 * PG, PROT_READ, ANON, NULL, 0, NULL);
}

static int op_mmap_spanning(struct ctx *c)
{
	return vml_mmap(mm, A(2), 8 * PG, PROT_READ | PROT_EXEC, ANON, NULL, 0, NULL);
}

static int op_mmap_file_over(struct ctx *c)
{
	return vml_mmap(mm, A(2), 4 * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, file, 4 * PG, NULL);
}

static int op_mmap_shared_anon(struct ctx *c)
{
	return vml_mmap(mm, A(0), 4 * PG, RW, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, NULL, 0,
			NULL);
}

static int op_mmap_shmem_populate(struct ctx *c)
{
	return vml_mmap(mm, A(0), 4 * PG, RW, MAP_SHARED | MAP_FIXED | MAP_POPULATE, shm, 0,
			NULL);
}

static int op_munmap_middle(struct ctx *c)
{
	return vml_munmap(mm, A(3), 2 * PG);
}

static int op_munmap_spanning(struct ctx *c)
{
	return vml_munmap(mm, A(2), 8 * PG);
}

static int op_mprotect_split(struct ctx *c)
{
	return vml_mprotect(mm, A(3), 2 * PG, PROT_READ);
}

static int op_mprotect_merge(struct ctx *c)
{
	return vml_mprotect(mm, A(2), 2 * PG, RW);
}

static int op_mprotect_spanning(struct ctx *c)
{
	return vml_mprotect(mm, A(2), 8 * PG, PROT_READ);
}

static int op_mremap_shrink(struct ctx *c)
{
	return vml_mremap(mm, A(0), 8 * PG, 3 * PG, 0, 0, NULL);
}

static int op_mremap_grow(struct ctx *c)
{
	return vml_mremap(mm, A(0), 8 * PG, 12 * PG, 0, 0, NULL);
}

static int op_mremap_move(struct ctx *c)
{
	return vml_mremap(mm, A(2), 4 * PG, 4 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, A(64), NULL);
}

static int op_mremap_move_grow(struct ctx *c)
{
	return vml_mremap(mm, A(0), 8 * PG, 16 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, A(512), NULL);
}

static int op_mremap_dontunmap(struct ctx *c)
{
	return vml_mremap(mm, A(2), 2 * PG, 2 * PG,
			  MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, A(64), NULL);
}

/* [0,12) of setup_three: three VMAs to the empty A(64), piece by piece (6.17+). */
static int op_mremap_move_three(struct ctx *c)
{
	return vml_mremap(mm, A(0), 12 * PG, 12 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, A(64), NULL);
}

static int op_mremap_move_three_dontunmap(struct ctx *c)
{
	return vml_mremap(mm, A(2), 8 * PG, 8 * PG,
			  MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, A(64), NULL);
}

static int op_guard_install(struct ctx *c)
{
	return vml_madvise(mm, A(2), 4 * PG, MADV_GUARD_INSTALL);
}

static int op_guard_remove(struct ctx *c)
{
	return vml_madvise(mm, A(0), 8 * PG, MADV_GUARD_REMOVE);
}

static int op_mlock_onfault(struct ctx *c)
{
	return vml_mlock2(mm, A(2), 4 * PG, MLOCK_ONFAULT);
}

static int op_mlockall(struct ctx *c)
{
	return vml_mlockall(mm, MCL_CURRENT);
}

static int op_munlockall(struct ctx *c)
{
	return vml_munlockall(mm);
}

static int op_madvise_hugepage(struct ctx *c)
{
	return vml_madvise(mm, A(2), 4 * PG, MADV_HUGEPAGE);
}

static int op_madvise_dontneed(struct ctx *c)
{
	return vml_madvise(mm, A(2), 4 * PG, MADV_DONTNEED);
}

static int op_mlock(struct ctx *c)
{
	return vml_mlock(mm, A(2), 4 * PG);
}

static int op_munlock(struct ctx *c)
{
	return vml_munlock(mm, A(2), 4 * PG);
}

static int op_touch(struct ctx *c)
{
	return vml_touch(mm, A(0), 4 * PG, VML_TOUCH_WRITE);
}

static void setup_untouched(struct ctx *c)
{
	must(map_anon(mm, A(0), 4 * PG, RW), "map");
}

static void setup_locked(struct ctx *c)
{
	setup_one(c);
	must(vml_mlock(mm, A(0), 8 * PG), "mlock");
}

/* setup_one with guard markers in [2,4) and [6,7). */
static void setup_guarded(struct ctx *c)
{
	setup_one(c);
	must(vml_madvise(mm, A(2), 2 * PG, MADV_GUARD_INSTALL), "guard");
	must(vml_madvise(mm, A(6), PG, MADV_GUARD_INSTALL), "guard");
}

static int op_fork(struct ctx *c)
{
	return vml_fork(mm, &c->child);
}

static int op_read_view(struct ctx *c, enum vml_lock_policy lock)
{
	struct vml_reader *r;
	char buf[512];
	ssize_t n;
	int ret = vml_reader_open(mm, VML_VIEW_MAPS, lock, &r);

	(void)c;
	if (ret)
		return ret;
	do
		n = vml_reader_read(r, buf, sizeof(buf));
	while (n > 0);
	vml_reader_close(r);
	return n < 0 ? (int)n : 0;
}

static int op_read_vma(struct ctx *c)
{
	return op_read_view(c, VML_LOCK_VMA);
}

static int op_read_mmap(struct ctx *c)
{
	return op_read_view(c, VML_LOCK_MMAP);
}

static int op_query(struct ctx *c)
{
	char name[256];
	struct vml_procmap_query q = {
		.size = sizeof(q), .query_addr = A(0),
		.query_flags = VML_PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
		.vma_name_size = sizeof(name), .vma_name_addr = (uintptr_t)name,
	};
	int ret = vml_procmap_query(mm, VML_LOCK_VMA, &q);

	if (!ret && q.vma_start != A(0))
		return -EIO;
	return ret;
}

struct scenario {
	const char *name;
	void (*setup)(struct ctx *c);
	int (*op)(struct ctx *c);
	/*
	 * What a failure may leave behind by design: the layout only (touch:
	 * pages before the failing one stay faulted in), or the whole success
	 * layout with -EAGAIN (mlock: the VMAs are locked, then populating
	 * fails, as in the kernel).
	 */
	bool layout_only;
	int partial_errno;
	/*
	 * A move of several VMAs moves them one by one: a failure leaves those
	 * before the failing one moved (remap_move), so only what a move keeps
	 * is checked - the resident pages - and the next try starts afresh.
	 */
	bool pieces;
};

#define SC(n, s, o, ...) { .name = n, .setup = s, .op = o, __VA_ARGS__ }

static const struct scenario scenarios[] = {
	SC("mmap over the middle of a VMA", setup_three, op_mmap_over_middle),
	SC("mmap fixed over three VMAs", setup_three, op_mmap_spanning),
	SC("mmap a file over anonymous VMAs", setup_three, op_mmap_file_over),
	SC("mmap shared anonymous", setup_none, op_mmap_shared_anon),
	/* MAP_POPULATE ignores populate errors: fewer pages, the same layout */
	SC("mmap shmem, populated", setup_none, op_mmap_shmem_populate, .layout_only = true),
	SC("munmap splitting a VMA", setup_one, op_munmap_middle),
	SC("munmap across three VMAs", setup_three, op_munmap_spanning),
	SC("mprotect splitting a VMA", setup_one, op_mprotect_split),
	SC("mprotect merging three VMAs", setup_split, op_mprotect_merge),
	SC("mprotect across three VMAs", setup_three, op_mprotect_spanning),
	SC("mprotect of file and shared VMAs", setup_files, op_mprotect_spanning),
	SC("mremap shrink", setup_one, op_mremap_shrink),
	SC("mremap grow in place", setup_one, op_mremap_grow),
	SC("mremap move", setup_one, op_mremap_move),
	SC("mremap move and grow", setup_one, op_mremap_move_grow),
	SC("mremap move a file VMA", setup_files, op_mremap_move),
	SC("mremap dontunmap", setup_one, op_mremap_dontunmap),
	SC("mremap move of three VMAs", setup_three, op_mremap_move_three, .pieces = true),
	SC("mremap dontunmap of three VMAs", setup_three, op_mremap_move_three_dontunmap,
	   .pieces = true),
	/* the pages zapped to make room for markers stay zapped, as in the kernel */
	SC("madvise guard_install", setup_one, op_guard_install, .layout_only = true),
	SC("madvise guard_remove", setup_guarded, op_guard_remove),
	SC("madvise hugepage (split)", setup_one, op_madvise_hugepage),
	SC("madvise dontneed", setup_one, op_madvise_dontneed, .layout_only = true),
	SC("mlock the middle", setup_one, op_mlock, .partial_errno = -EAGAIN),
	SC("munlock the middle", setup_locked, op_munlock),
	SC("mlock2 onfault", setup_one, op_mlock_onfault),
	/* mlockall's populate ignores errors: fewer pages, the same layout */
	SC("mlockall current", setup_three, op_mlockall, .layout_only = true),
	SC("munlockall", setup_locked, op_munlockall),
	SC("touch (faults)", setup_untouched, op_touch, .layout_only = true),
	SC("fork", setup_files, op_fork),
	SC("read maps (vma lock)", setup_three, op_read_vma),
	SC("read maps (mmap lock)", setup_three, op_read_mmap),
	SC("PROCMAP_QUERY", setup_three, op_query),
};

static void build(const struct scenario *sc, struct ctx *c)
{
	c->base = BASE + (unsigned long)next_slot++ * SLOT;
	c->child = NULL;
	vml_fail_alloc_at(0);
	sc->setup(c);
}

static void teardown(struct ctx *c)
{
	vml_fail_alloc_at(0);
	if (c->child)
		vml_mm_destroy(c->child);
	c->child = NULL;
	must(vml_munmap(mm, c->base, SLOT), "munmap the slot");
}

static void run_scenario(const struct scenario *sc)
{
	struct ctx ref, c;
	struct snap ref_after, before, after;
	unsigned long allocs, n, failures = 0, absorbed = 0;
	int ref_ret, ret;
	bool good = true;

	/* The call without fault injection: its result and how many allocations it makes. */
	build(sc, &ref);
	vml_fail_alloc_at(ULONG_MAX);
	ref_ret = sc->op(&ref);
	allocs = vml_alloc_count();
	vml_fail_alloc_at(0);
	snap_take(&ref_after, ref.base);
	teardown(&ref);

	build(sc, &c);
	for (n = 1; n <= allocs + 1 && n < MAX_N; n++) {
		snap_take(&before, c.base);
		vml_fail_alloc_at(n);
		ret = sc->op(&c);
		vml_fail_alloc_at(0);
		snap_take(&after, c.base);
		if (ret == -ENOMEM) {
			failures++;
			if (sc->pieces ? before.rss != after.rss
				       : !snap_same(&before, &after, sc->layout_only)) {
				good = false;
				printf("# %s: allocation %lu failed, -ENOMEM, but the address "
				       "space changed (map_count %llu -> %llu, rss %llu -> %llu)\n"
				       "# before:\n%s# after:\n%s", sc->name, n,
				       (unsigned long long)before.map_count,
				       (unsigned long long)after.map_count,
				       (unsigned long long)before.rss,
				       (unsigned long long)after.rss, before.maps, after.maps);
				teardown(&c);
				build(sc, &c);
			} else if (sc->pieces) {
				/* some VMAs may have moved: the same call would now start in a gap */
				teardown(&c);
				build(sc, &c);
			}
		} else if (ret == ref_ret || (sc->partial_errno && ret == sc->partial_errno)) {
			/* succeeded (or failed as by design) like the reference */
			if (ret == ref_ret && n <= allocs)
				absorbed++;
			if (!snap_same(&ref_after, &after, sc->layout_only || ret != ref_ret)) {
				good = false;
				printf("# %s: allocation %lu failed, the call returned %d, but the "
				       "result differs from the call without fault injection\n"
				       "# want:\n%s# got:\n%s", sc->name, n, ret, ref_after.maps,
				       after.maps);
			}
			if (n <= allocs) {
				teardown(&c);
				build(sc, &c);
			}
		} else {
			good = false;
			printf("# %s: allocation %lu failed: returned %d (want -ENOMEM; %d without "
			       "fault injection)\n", sc->name, n, ret, ref_ret);
			teardown(&c);
			build(sc, &c);
		}
		snap_free(&before);
		snap_free(&after);
	}
	teardown(&c);
	snap_free(&ref_after);
	ok(good, "%s%s: %lu allocations, %lu failed with -ENOMEM and changed nothing%s, %lu "
	   "absorbed", sc->name, order_note, allocs, failures,
	   sc->pieces ? " but whole moves" : "", absorbed);
}

int main(void)
{
	struct vml_sys_config cfg = { 0 };

	if (!vml_fault_injection_enabled())
		tap_skip_all("fault injection is not compiled in (-Dfault_injection=true)");
	if (vml_sys_create(&cfg, &sys) || vml_mm_create(sys, &mm) ||
	    vml_file_create(sys, "/tmp/nomem-file", 16 * PG, 0, &file) ||
	    vml_file_create(sys, "/dev/shm/nomem-shm", 16 * PG, VML_FILE_SHMEM, &shm)) {
		printf("Bail out! cannot create the address space\n");
		return 1;
	}
	for (size_t i = 0; i < ARRAY_LEN(scenarios); i++)
		run_scenario(&scenarios[i]);
	vml_fail_alloc_at(0);
	vml_mm_destroy(mm);
	vml_file_put(file);
	vml_file_put(shm);
	vml_sys_destroy(sys);

	/*
	 * i_mmap_order=pre takes the file's i_mmap_rwsem before staging the new
	 * mapping: a failure there must release it (and leave nothing changed).
	 */
	cfg.i_mmap_order = VML_I_MMAP_PRE;
	order_note = " (i_mmap_order=pre)";
	next_slot = 0;
	if (vml_sys_create(&cfg, &sys) || vml_mm_create(sys, &mm) ||
	    vml_file_create(sys, "/tmp/nomem-file", 16 * PG, 0, &file) ||
	    vml_file_create(sys, "/dev/shm/nomem-shm", 16 * PG, VML_FILE_SHMEM, &shm)) {
		printf("Bail out! cannot create the address space\n");
		return 1;
	}
	for (size_t i = 0; i < ARRAY_LEN(scenarios); i++)
		if (strstr(scenarios[i].name, "file") || strstr(scenarios[i].name, "shared anon") ||
		    strstr(scenarios[i].name, "shmem"))
			run_scenario(&scenarios[i]);
	vml_fail_alloc_at(0);
	vml_mm_destroy(mm);
	vml_file_put(file);
	vml_file_put(shm);
	vml_sys_destroy(sys);
	return tap_done();
}
