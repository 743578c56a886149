// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Property: with incremental smaps_rollup sums (VML_ROLLUP_INCREMENTAL),
 * every process's rollup read from the sums is byte-identical to the
 * walked one (VML_READER_ROLLUP_WALK) after every operation of random
 * sequences: anonymous, file and shmem mappings, THP (MADV_HUGEPAGE over
 * 2 MiB ranges, THP always), write and read touches in parent and
 * children (COW), fork, munmap, mremap, MADV_DONTNEED/FREE/COLD/PAGEOUT
 * (swap out; touches swap in), mlock/munlock, clear_refs. The sums are
 * read first for every process, then the walk: a walk's unlocks recount
 * the tables it passes and would hide a stale share.
 *
 * Each check can fail: the last test breaks the sums on purpose
 * (VML_BROKEN_ROLLUP_SHARED: shares that other processes change are never
 * recounted) and requires a difference. A walk-mode system, where the
 * flag changes nothing, must show the same text both ways too.
 * The seed is printed (VML_SEED replays a run).
 */
#include <stdio.h>

#include "mm/mm.h"
#include "mm/rollup.h"
#include "mm_helpers.h"
#include "tap.h"
#include "util/compiler.h"
#include "util/debug.h"
#include "util/linux_compat.h"
#include "util/rand.h"

#define MAX_KIDS 8

static struct vml_mm *procs[1 + MAX_KIDS];
static int nr_procs;
static unsigned long mapped[16][2];

static char *rollup(struct vml_mm *mm, bool walk)
{
	struct vml_reader *r;
	size_t len = 0;
	char *out = calloc(1, 8192);
	ssize_t n;

	if (!out || vml_reader_open(mm, VML_VIEW_SMAPS_ROLLUP, VML_LOCK_VMA, &r))
		abort();
	if (walk && vml_reader_set_flags(r, VML_READER_ROLLUP_WALK))
		abort();
	while ((n = vml_reader_read(r, out + len, 8191 - len)) > 0)
		len += (size_t)n;
	vml_reader_close(r);
	return out;
}

/* Every process: the sums first, then the walks. Return: which differs first, or -1. */
static int compare_all(char **inc_out, char **walk_out)
{
	char *inc[1 + MAX_KIDS];
	int bad = -1;

	for (int i = 0; i < nr_procs; i++)
		inc[i] = rollup(procs[i], false);
	for (int i = 0; i < nr_procs; i++) {
		char *walk = rollup(procs[i], true);

		if (bad < 0 && strcmp(inc[i], walk)) {
			bad = i;
			*inc_out = inc[i];
			*walk_out = walk;
			inc[i] = NULL;
			continue;
		}
		free(walk);
	}
	for (int i = 0; i < nr_procs; i++)
		free(inc[i]);
	return bad;
}

static void random_op(struct vml_file **files, struct vml_rand *rs)
{
	const unsigned long window = 16UL << 20;
	struct vml_mm *mm = procs[vml_rand_below(rs, (uint64_t)nr_procs)];
	unsigned long addr = BASE + (vml_rand_below(rs, window / PG) * PG);
	unsigned long len = (1 + vml_rand_below(rs, 64)) * PG;
	unsigned long *m = mapped[vml_rand_below(rs, ARRAY_LEN(mapped))];
	int prot = (int[]){ PROT_READ, PROT_READ | PROT_WRITE, PROT_NONE }[vml_rand_below(rs, 3)];
	unsigned int r = (unsigned int)vml_rand_below(rs, 100);
	struct vml_file *f = files[vml_rand_below(rs, 3)];

	if (vml_rand_below(rs, 6) == 0) {
		addr &= ~((2UL << 20) - 1);	/* THP-sized, aligned */
		len = (2UL << 20) + vml_rand_below(rs, 4) * (1UL << 20);
	}
	if (r >= 30 && m[1] && vml_rand_below(rs, 8)) {
		addr = m[0] + vml_rand_below(rs, m[1] / PG) * PG;
		len = VML_MIN(len, m[0] + m[1] - addr);
	}
	if (r < 30) {
		m[0] = addr;
		m[1] = len;
	}
	if (r < 18) {
		may_fail(vml_mmap(mm, addr, len, prot ? prot : PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL));
		if (len >= (2UL << 20))
			may_fail(vml_madvise(mm, addr, len, MADV_HUGEPAGE));
	} else if (r < 27) {
		may_fail(vml_mmap(mm, addr, len, PROT_READ | PROT_WRITE,
				  (vml_rand_below(rs, 2) ? MAP_SHARED : MAP_PRIVATE) | MAP_FIXED, f,
				  vml_rand_below(rs, 8) * PG, NULL));
	} else if (r < 30) {
		may_fail(vml_mmap(mm, addr, len, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL));
	} else if (r < 58) {
		may_fail(vml_touch(mm, addr, len,
				   vml_rand_below(rs, 2) ? VML_TOUCH_WRITE : VML_TOUCH_READ));
	} else if (r < 62) {
		may_fail(vml_mprotect(mm, addr, len, prot));
	} else if (r < 66) {
		may_fail(vml_munmap(mm, addr, len));
	} else if (r < 82) {
		static const int adv[] = { MADV_DONTNEED, MADV_FREE, MADV_COLD, MADV_PAGEOUT,
					   MADV_PAGEOUT, MADV_HUGEPAGE, MADV_WILLNEED };

		may_fail(vml_madvise(mm, addr, len, adv[vml_rand_below(rs, ARRAY_LEN(adv))]));
	} else if (r < 88) {
		if (vml_rand_below(rs, 2))
			may_fail(vml_mlock(mm, addr, len));
		else
			may_fail(vml_munlock(mm, addr, len));
	} else if (r < 92) {
		may_fail(vml_mremap(mm, addr, len, len + PG * vml_rand_below(rs, 4), MREMAP_MAYMOVE,
				    0, NULL));
	} else if (r < 95) {
		may_fail(vml_clear_refs(mm, 1));
	} else if (nr_procs < 1 + MAX_KIDS) {
		if (!vml_fork(mm, &procs[nr_procs]))
			nr_procs++;
	}
}

/*
 * One sequence of @ops random operations on a fresh system in @mode,
 * comparing after each. Return: the number of comparisons that differed.
 */
static int sequence(struct vml_rand *rs, enum vml_rollup_mode mode, int ops, int round)
{
	struct vml_sys_config cfg = {
		.swap_pages = vml_rand_below(rs, 4) ? 512 : 0,
		.thp = vml_rand_below(rs, 2) ? VML_THP_ALWAYS : VML_THP_MADVISE,
		.shmem_huge = vml_rand_below(rs, 2) ? VML_SHMEM_HUGE_ALWAYS : VML_SHMEM_HUGE_NEVER,
		.rollup = mode,
	};
	struct vml_file *files[3];
	struct vml_sys *sys;
	int differ = 0;

	if (vml_sys_create(&cfg, &sys) || vml_mm_create(sys, &procs[0]))
		abort();
	nr_procs = 1;
	must_succeed(vml_file_create(sys, "/tmp/f1", 64 * PG, 0, &files[0]));
	must_succeed(vml_file_create(sys, "/tmp/f2", 13 * PG + 100, 0, &files[1]));
	must_succeed(vml_file_create(sys, "/dev/shm/s", 32 * PG, VML_FILE_SHMEM, &files[2]));
	memset(mapped, 0, sizeof(mapped));
	for (int i = 0; i < ops; i++) {
		char *inc = NULL, *walk = NULL;
		int bad;

		random_op(files, rs);
		bad = compare_all(&inc, &walk);
		if (bad >= 0) {
			if (!differ++)
				tap_diag("round %d op %d: process %d: incremental\n%swalked\n%s", round,
					 i, bad, inc, walk);
			free(inc);
			free(walk);
		}
	}
	while (nr_procs)
		vml_mm_destroy(procs[--nr_procs]);
	for (int i = 0; i < 3; i++)
		vml_file_put(files[i]);
	vml_sys_destroy(sys);
	return differ;
}

/*
 * Directed: the hot paths' shortcut (rollup_pte_hint) on entries that were
 * not empty - a COW in a child, the parent's reuse of a page the child
 * copied away from, its reuse after the child exits, a write after
 * mprotect, a swap-in, zaps of locked and unlocked ranges, swap slots a
 * child shares and swaps in, a shmem object partly in swap behind shared
 * and private mappings - in tables that a read has just recounted (so none
 * is refreshed at the next read). Return: the steps that differed.
 */
static int directed(void)
{
	struct vml_sys_config cfg = { .swap_pages = 512, .rollup = VML_ROLLUP_INCREMENTAL };
	struct vml_file *shm = NULL;
	struct vml_sys *sys;
	int differ = 0, step = 0;

	if (vml_sys_create(&cfg, &sys) || vml_mm_create(sys, &procs[0]))
		abort();
	nr_procs = 1;
#define STEP(call)                                                                    \
	do {                                                                          \
		char *inc_ = NULL, *walk_ = NULL;                                     \
		int bad_;                                                             \
		may_fail(call);                                                       \
		step++;                                                               \
		bad_ = compare_all(&inc_, &walk_);                                    \
		if (bad_ >= 0 && !differ++)                                           \
			tap_diag("directed step %d (%s): process %d: incremental\n%s"  \
				 "walked\n%s", step, #call, bad_, inc_, walk_);        \
		free(inc_);                                                           \
		free(walk_);                                                          \
	} while (0)
	STEP(vml_mmap(procs[0], BASE, 64 * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL));
	STEP(vml_touch(procs[0], BASE, 64 * PG, VML_TOUCH_WRITE));
	STEP(vml_fork(procs[0], &procs[nr_procs++]));
	STEP(vml_touch(procs[1], BASE, 16 * PG, VML_TOUCH_WRITE));
	STEP(vml_touch(procs[0], BASE, 32 * PG, VML_TOUCH_WRITE));
	vml_mm_destroy(procs[--nr_procs]);
	STEP(vml_touch(procs[0], BASE + 32 * PG, 32 * PG, VML_TOUCH_READ));
	STEP(vml_touch(procs[0], BASE + 32 * PG, 32 * PG, VML_TOUCH_WRITE));
	STEP(vml_mprotect(procs[0], BASE, 64 * PG, PROT_READ));
	STEP(vml_mprotect(procs[0], BASE, 64 * PG, PROT_READ | PROT_WRITE));
	STEP(vml_touch(procs[0], BASE, 64 * PG, VML_TOUCH_WRITE));
	STEP(vml_madvise(procs[0], BASE, 16 * PG, MADV_PAGEOUT));
	STEP(vml_touch(procs[0], BASE, 8 * PG, VML_TOUCH_READ));
	STEP(vml_touch(procs[0], BASE, 16 * PG, VML_TOUCH_WRITE));
	STEP(vml_clear_refs(procs[0], 1));
	STEP(vml_touch(procs[0], BASE, 64 * PG, VML_TOUCH_READ));
	STEP(vml_mlock(procs[0], BASE, 32 * PG));
	STEP(vml_touch(procs[0], BASE, 64 * PG, VML_TOUCH_WRITE));
	STEP(vml_munmap(procs[0], BASE + 8 * PG, 8 * PG));
	STEP(vml_mmap(procs[0], BASE + 16 * PG, 8 * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL));
	STEP(vml_touch(procs[0], BASE + 16 * PG, 8 * PG, VML_TOUCH_WRITE));
	STEP(vml_munlock(procs[0], BASE, 64 * PG));
	STEP(vml_madvise(procs[0], BASE, 64 * PG, MADV_DONTNEED));
	STEP(vml_munmap(procs[0], BASE, 64 * PG));
	/* Swap slots two processes share: SwapPss halves, then a swap-in moves it. */
	STEP(vml_mmap(procs[0], BASE, 16 * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL));
	STEP(vml_touch(procs[0], BASE, 16 * PG, VML_TOUCH_WRITE));
	STEP(vml_madvise(procs[0], BASE, 16 * PG, MADV_PAGEOUT));
	STEP(vml_fork(procs[0], &procs[nr_procs++]));
	STEP(vml_touch(procs[1], BASE, 8 * PG, VML_TOUCH_READ));
	STEP(vml_touch(procs[1], BASE, 4 * PG, VML_TOUCH_WRITE));
	STEP(vml_touch(procs[0], BASE + 4 * PG, 8 * PG, VML_TOUCH_WRITE));
	vml_mm_destroy(procs[--nr_procs]);
	STEP(vml_touch(procs[0], BASE, 16 * PG, VML_TOUCH_READ));
	/*
	 * A shmem object partly in swap behind a private writable mapping of
	 * it: the read counts the swap behind that VMA's empty entries under
	 * its VMA lock (rollup_shmem_swap), a shared mapping's from the object.
	 */
	STEP(vml_file_create(sys, "/dev/shm/r", 32 * PG, VML_FILE_SHMEM, &shm));
	STEP(vml_mmap(procs[0], BASE + 64 * PG, 32 * PG, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_FIXED, shm, 0, NULL));
	STEP(vml_mmap(procs[0], BASE + 128 * PG, 32 * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_FIXED, shm, 0, NULL));
	STEP(vml_touch(procs[0], BASE + 64 * PG, 32 * PG, VML_TOUCH_WRITE));
	STEP(vml_touch(procs[0], BASE + 128 * PG, 4 * PG, VML_TOUCH_WRITE));
	STEP(vml_touch(procs[0], BASE + 132 * PG, 4 * PG, VML_TOUCH_READ));
	STEP(vml_madvise(procs[0], BASE + 64 * PG, 16 * PG, MADV_PAGEOUT));
	STEP(vml_madvise(procs[0], BASE + 128 * PG, 8 * PG, MADV_PAGEOUT));
	STEP(vml_touch(procs[0], BASE + 64 * PG, 4 * PG, VML_TOUCH_READ));
	STEP(vml_munmap(procs[0], BASE + 64 * PG, 32 * PG));
	vml_file_put(shm);
#undef STEP
	while (nr_procs)
		vml_mm_destroy(procs[--nr_procs]);
	vml_sys_destroy(sys);
	return differ;
}

/*
 * Between reads the raw sums never go below zero. A page another process
 * shares is counted Shared_Clean; that process unmaps it (the page is now
 * private, our table unchanged); our zap of it must not subtract a
 * Private_Clean share the last count never added. Read mm->rollup itself:
 * a rollup read counts the table again first and would hide it.
 */
static int zap_after_others_unmapped(void)
{
	struct vml_sys_config cfg = { .rollup = VML_ROLLUP_INCREMENTAL };
	struct vml_mm *parent, *other;
	struct vml_file *f;
	struct vml_sys *sys;
	char *text;
	int negative = 0;

	if (vml_sys_create(&cfg, &sys) || vml_mm_create(sys, &parent) ||
	    vml_mm_create(sys, &other) || vml_file_create(sys, "/tmp/z", 16 * PG, 0, &f))
		abort();
	must_succeed(vml_mmap(parent, BASE, 16 * PG, PROT_READ, MAP_SHARED | MAP_FIXED, f, 0,
			      NULL));
	must_succeed(vml_mmap(other, BASE, 16 * PG, PROT_READ, MAP_SHARED | MAP_FIXED, f, 0,
			      NULL));
	must_succeed(vml_touch(parent, BASE, 16 * PG, VML_TOUCH_READ));
	must_succeed(vml_touch(other, BASE, 16 * PG, VML_TOUCH_READ));
	free(text = rollup(parent, false));	/* counts the shared pages: Shared_Clean */
	must_succeed(vml_munmap(other, BASE, 16 * PG));
	must_succeed(vml_madvise(parent, BASE, 8 * PG, MADV_DONTNEED));
	for (int fld = 0; fld < NR_ROLLUP; fld++) {
		int64_t v = load_relaxed(&to_mm(parent)->rollup[fld]);

		if (v < 0 && !negative++)
			tap_diag("field %d is %lld after the zap", fld, (long long)v);
	}
	vml_file_put(f);
	vml_mm_destroy(other);
	vml_mm_destroy(parent);
	vml_sys_destroy(sys);
	return negative;
}

int main(void)
{
	struct vml_rand rs = vml_rand_init(tap_seed(), 0);
	int rounds = 20, broken = 0;

	for (int round = 0; round < rounds; round++) {
		int d = sequence(&rs, VML_ROLLUP_INCREMENTAL, 120, round);

		ok(d == 0, "round %d: incremental rollup = walked rollup after each of 120 ops "
		   "(%d differed)", round, d);
	}
	ok(directed() == 0, "directed: COW, reuse, swap-in, mprotect, mlock, shared swap slots: "
	   "incremental = walked");
	/*
	 * A seed CI's random rounds met: a swap entry of ours whose slot's
	 * folio another process had swapped in, then out again to the same
	 * slot - a second user our table, counted stable, did not show.
	 */
	{
		struct vml_rand rr = vml_rand_init(1796432326114455ULL, 0);
		int d = 0;

		for (int round = 0; round < 20; round++)
			d += sequence(&rr, VML_ROLLUP_INCREMENTAL, 120, 200 + round);
		ok(d == 0, "seed 1796432326114455's rounds: a slot in the swap cache makes its "
		   "table volatile (%d differed)", d);
	}
	ok(zap_after_others_unmapped() == 0,
	   "a zap of pages another process stopped sharing: no raw sum below zero");
	ok(sequence(&rs, VML_ROLLUP_WALK, 120, -1) == 0,
	   "walk mode: both reads walk, the same text");
	/* The check can fail: without recounting shared shares the sums go stale. */
	atomic_store(&vml_debug_broken, VML_BROKEN_ROLLUP_SHARED);
	for (int round = 0; round < 10 && !broken; round++)
		broken += sequence(&rs, VML_ROLLUP_INCREMENTAL, 120, 100 + round);
	atomic_store(&vml_debug_broken, 0);
	ok(broken > 0, "VML_BROKEN_ROLLUP_SHARED: the comparison finds stale shares (%d)", broken);
	return tap_done();
}
