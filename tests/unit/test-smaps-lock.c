// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * How the page-walking /proc readers lock, shown with a reader parked in
 * the middle of one VMA's page walk (vml_proc_walk_hook) - not with
 * timings. Waits (tests/park.h) have a generous deadline only to turn a
 * hang into a failure; what a test asserts is an order of events.
 *
 *  - policy VMA: while the reader walks VMA X (X read-locked, no RCU, no
 *    mmap_lock), writers map and unmap *other* VMAs to completion; a writer
 *    that changes X waits for X's walk, and only for it: it is done while the
 *    reader walks the next VMA;
 *  - policy MMAP: the parked reader holds mmap_lock, so a writer anywhere
 *    queues (mmap_lock contended) and cannot finish until the reader moves;
 *  - VML_BROKEN_SKIP_RESET: a VMA mapped into the gap after X during X's
 *    walk is shown by a correct reader and missed by the broken one;
 *  - smaps_rollup under policy MMAP drops mmap_lock for a queued writer:
 *    with VML_READER_NOSTEAL the writer gets in before the reader's next VMA,
 *    and after the re-take two VMAs are gathered before the next check;
 *  - lock-event counters: which path each read took (VMA locks, mmap_lock,
 *    a fallback when a VMA is write-locked).
 */
#include <stdio.h>

#include "mm/debug.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/vma.h"
#include "mm/vma_lock.h"
#include "mm_helpers.h"
#include "park.h"
#include "proc/internal.h"
#include "tap.h"
#include "util/debug.h"

/* Where the reader parks (under gate.lock); its token is the VMA's start. */
static struct {
	unsigned long at[4];		/* VMA starts to park at (0: none) */
	struct vma *vma;		/* the VMA parked in */
} plan;

static void walk_hook(struct vma *vma)
{
	bool at = false;

	pthread_mutex_lock(&gate.lock);
	for (int i = 0; i < 4; i++)
		at |= plan.at[i] && plan.at[i] == vma->vm_start;
	if (at) {
		plan.vma = vma;
		park(vma->vm_start);
		plan.vma = NULL;
	}
	pthread_mutex_unlock(&gate.lock);
}

/* Park the reader in the walks of the VMAs starting at @a, @b and @c (0: none). */
static void park_at(unsigned long a, unsigned long b, unsigned long c)
{
	pthread_mutex_lock(&gate.lock);
	memset(plan.at, 0, sizeof(plan.at));
	plan.at[0] = a;
	plan.at[1] = b;
	plan.at[2] = c;
	pthread_mutex_unlock(&gate.lock);
}

/* Wait until the reader is parked in the walk of the VMA starting at @start. */
static struct vma *wait_parked(unsigned long start)
{
	struct vma *vma;

	park_wait(start, "the reader to park");
	pthread_mutex_lock(&gate.lock);
	vma = plan.vma;
	pthread_mutex_unlock(&gate.lock);
	return vma;
}

/* ---- threads ---- */

struct reader {
	struct vml_mm *mm;
	enum vml_view view;
	enum vml_lock_policy lock;
	unsigned int flags;
	char *out;
	pthread_t thread;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct vml_reader *rd;
	size_t cap = 1 << 16, len = 0;
	ssize_t n;

	r->out = calloc(1, cap);
	if (vml_reader_open(r->mm, r->view, r->lock, &rd))
		return NULL;
	vml_reader_set_flags(rd, r->flags);
	while ((n = vml_reader_read(rd, r->out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	vml_reader_close(rd);
	return NULL;
}

static void start_reader(struct reader *r)
{
	pthread_create(&r->thread, NULL, reader_main, r);
}

enum wop { W_MMAP, W_MUNMAP, W_MPROTECT };

struct writer {
	struct vml_mm *mm;
	enum wop op;
	unsigned long addr, len;
	int prot;
	int err;
	_Atomic bool done;
	pthread_t thread;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	switch (w->op) {
	case W_MMAP:
		w->err = map_anon(w->mm, w->addr, w->len, PROT_READ | PROT_WRITE);
		break;
	case W_MUNMAP:
		w->err = vml_munmap(w->mm, w->addr, w->len);
		break;
	case W_MPROTECT:
		w->err = vml_mprotect(w->mm, w->addr, w->len, w->prot);
		break;
	}
	atomic_store(&w->done, true);
	return NULL;
}

static void start_writer(struct writer *w)
{
	atomic_store(&w->done, false);
	pthread_create(&w->thread, NULL, writer_main, w);
}

/* Start @w mapping 4 pages at @addr and wait until it queues on mmap_lock. */
static void start_queued_mmap(struct writer *w, struct vml_mm *mm, unsigned long addr,
			      const char *what)
{
	*w = (struct writer){ .mm = mm, .op = W_MMAP, .addr = addr, .len = 4 * PG };
	start_writer(w);
	wait_until(mmap_lock_is_contended(to_mm(mm)), what);
}

/*
 * Layout: A [BASE, +16K) touched, X [+1M, +16K) touched, Y [+2M, +16K)
 * touched, Z [+3M, +16K). Distinct protections keep them apart.
 */
static struct vml_mm *layout(struct vml_sys *sys)
{
	struct vml_mm *mm;
	const unsigned long M = 1UL << 20;

	if (vml_mm_create(sys, &mm))
		abort();
	if (map_anon(mm, BASE, 4 * PG, PROT_READ | PROT_WRITE) ||
	    map_anon(mm, BASE + M, 4 * PG, PROT_READ | PROT_WRITE) ||
	    map_anon(mm, BASE + 2 * M, 4 * PG, PROT_READ | PROT_WRITE) ||
	    map_anon(mm, BASE + 3 * M, 4 * PG, PROT_READ | PROT_WRITE) ||
	    vml_touch(mm, BASE, 4 * PG, VML_TOUCH_WRITE) ||
	    vml_touch(mm, BASE + M, 4 * PG, VML_TOUCH_WRITE) ||
	    vml_touch(mm, BASE + 2 * M, 4 * PG, VML_TOUCH_WRITE))
		abort();
	return mm;
}

static void test_vma_bound(enum vml_view view)
{
	const unsigned long M = 1UL << 20, X = BASE + M, Y = BASE + 2 * M;
	struct vml_sys *sys;
	struct vml_mm *mm;
	struct reader r;
	struct writer other1, other2, same;
	struct vma *x;

	must_succeed(vml_sys_create(NULL, &sys));
	mm = layout(sys);
	r = (struct reader){ .mm = mm, .view = view, .lock = VML_LOCK_VMA };
	park_at(X, Y, 0);
	start_reader(&r);
	x = wait_parked(X);

	/* Other VMAs change to completion while X's walk is in progress. */
	other1 = (struct writer){ .mm = mm, .op = W_MMAP, .addr = BASE + 16 * M, .len = 4 * PG };
	other2 = (struct writer){ .mm = mm, .op = W_MUNMAP, .addr = BASE + 3 * M, .len = 4 * PG };
	start_writer(&other1);
	start_writer(&other2);
	pthread_join(other1.thread, NULL);
	pthread_join(other2.thread, NULL);
	ok(!other1.err && !other2.err,
	   "view %d, policy vma: an mmap and a munmap of other VMAs complete during X's walk", view);
	pthread_mutex_lock(&gate.lock);
	is_int(gate.parked, X, "...while the reader is still inside X's walk");
	pthread_mutex_unlock(&gate.lock);

	/* A writer that changes X itself waits for X's walk. */
	same = (struct writer){ .mm = mm, .op = W_MPROTECT, .addr = X, .len = 4 * PG,
				.prot = PROT_READ };
	start_writer(&same);
	wait_until(atomic_load(&x->vm_refcnt) & VMA_LOCK_OFFSET, "the writer to wait on X");
	ok(!atomic_load(&same.done), "mprotect of X waits: it holds mmap_lock, excludes X's readers");
	release();
	/* ...and only for that walk: it finishes while the reader walks Y. */
	wait_parked(Y);
	wait_until(atomic_load(&same.done), "mprotect of X to finish during Y's walk");
	ok(!same.err, "mprotect of X finished while the reader is inside Y's walk");
	release();
	park_at(0, 0, 0);
	pthread_join(r.thread, NULL);
	pthread_join(same.thread, NULL);
	if (view == VML_VIEW_SMAPS)
		if (!ok(r.out && strstr(r.out, "100000100000-100000104000 rw-p "),
			"the reader showed X as it was when it walked it"))
			tap_diag("%s", r.out ? r.out : "(null)");
	free(r.out);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

static void test_mmap_policy_blocks(void)
{
	const unsigned long M = 1UL << 20, X = BASE + M;
	struct vml_sys *sys;
	struct vml_mm *mm;
	struct reader r;
	struct writer other;

	must_succeed(vml_sys_create(NULL, &sys));
	mm = layout(sys);
	r = (struct reader){ .mm = mm, .view = VML_VIEW_SMAPS, .lock = VML_LOCK_MMAP };
	park_at(X, 0, 0);
	start_reader(&r);
	wait_parked(X);
	start_queued_mmap(&other, mm, BASE + 16 * M, "the writer to queue on mmap_lock");
	ok(!atomic_load(&other.done),
	   "policy mmap: an mmap elsewhere is queued on mmap_lock behind the parked reader");
	release();
	park_at(0, 0, 0);
	pthread_join(other.thread, NULL);
	pthread_join(r.thread, NULL);
	ok(!other.err, "...and completes once the reader's read() is over");
	free(r.out);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/* A VMA mapped into the gap after X while X is walked: shown, unless the reset is skipped. */
static void test_skip_reset(bool broken)
{
	const unsigned long M = 1UL << 20, X = BASE + M, G = BASE + M + 64 * PG;
	struct vml_sys *sys;
	struct vml_mm *mm;
	struct reader r;
	struct writer gap;

	must_succeed(vml_sys_create(NULL, &sys));
	mm = layout(sys);
	r = (struct reader){ .mm = mm, .view = VML_VIEW_SMAPS, .lock = VML_LOCK_VMA };
	atomic_store(&vml_debug_broken, broken ? VML_BROKEN_SKIP_RESET : 0);
	park_at(X, 0, 0);
	start_reader(&r);
	wait_parked(X);
	gap = (struct writer){ .mm = mm, .op = W_MMAP, .addr = G, .len = 4 * PG };
	start_writer(&gap);
	pthread_join(gap.thread, NULL);
	release();
	park_at(0, 0, 0);
	pthread_join(r.thread, NULL);
	atomic_store(&vml_debug_broken, 0);
	if (broken)
		ok(!strstr(r.out, "100000140000-100000144000"),
		   "SKIP_RESET: the VMA mapped into the gap during X's walk is missed");
	else
		ok(strstr(r.out, "100000140000-100000144000") != NULL,
		   "reset to X's end: the VMA mapped into the gap during X's walk is shown");
	ok(strstr(r.out, "100000200000-100000204000") != NULL, "Y is shown either way");
	free(r.out);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/*
 * smaps_rollup, policy MMAP: parked in X's walk (holding mmap_lock), a
 * writer queues; after X the reader sees the lock contended and drops it.
 * With NOSTEAL it queues behind the writer, which gets in before the
 * reader's next VMA (Y) is walked. Without it the reader normally steals
 * the lock back (docs/kernel.md §5.3) - a race, so only reported.
 */
static void test_rollup_drop(bool nosteal)
{
	const unsigned long M = 1UL << 20, X = BASE + M, Y = BASE + 2 * M;
	struct vml_sys_config cfg = { .mmap_lock_handoff_ns = 60ULL * 1000000000 };
	struct vml_mm_stats st0, st1;
	struct vml_sys *sys;
	struct vml_mm *mm;
	struct reader r;
	struct writer w;
	bool in_before_y;

	must_succeed(vml_sys_create(&cfg, &sys));
	mm = layout(sys);
	vml_mm_stats(mm, &st0);
	r = (struct reader){ .mm = mm, .view = VML_VIEW_SMAPS_ROLLUP, .lock = VML_LOCK_MMAP,
			     .flags = nosteal ? VML_READER_NOSTEAL : 0 };
	park_at(X, Y, 0);
	start_reader(&r);
	wait_parked(X);
	start_queued_mmap(&w, mm, BASE + 16 * M, "the writer to queue");
	release();
	wait_parked(Y);
	if (nosteal) {
		wait_until(atomic_load(&w.done), "the writer to get in before Y's walk");
		in_before_y = true;
	} else {
		in_before_y = atomic_load(&w.done);
	}
	release();
	park_at(0, 0, 0);
	pthread_join(r.thread, NULL);
	pthread_join(w.thread, NULL);
	vml_mm_stats(mm, &st1);
	ok(st1.proc_contended_drops > st0.proc_contended_drops,
	   "rollup dropped mmap_lock for the queued writer (%llu drops)",
	   (unsigned long long)(st1.proc_contended_drops - st0.proc_contended_drops));
	if (nosteal)
		ok(in_before_y, "NOSTEAL: the writer got in between X and Y");
	else
		tap_diag("mainline re-take: writer %s before Y (steals: %llu)",
			 in_before_y ? "got in" : "did not get in",
			 (unsigned long long)(st1.mmap_read_steals - st0.mmap_read_steals));
	ok(r.out && strstr(r.out, "[rollup]\n") && strstr(r.out, "Rss:                  48 kB"),
	   "the rollup is whole: 3 touched VMAs, 48 kB");
	free(r.out);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/*
 * smaps_rollup, policy MMAP, NOSTEAL: after a drop and re-take the reader
 * gathers the VMA it finds (Y) and the one after it (Z) before it looks for
 * a waiter again, as the kernel's loop does - a hold is two VMAs. So a
 * writer that queues during Y's walk is still waiting in Z's (the reader
 * holds mmap_lock throughout) and gets in after Z. NOSTEAL makes the order
 * certain: at each drop the reader queues behind the writer.
 */
static void test_rollup_two_per_hold(void)
{
	const unsigned long M = 1UL << 20, X = BASE + M, Y = BASE + 2 * M, Z = BASE + 3 * M;
	struct vml_sys_config cfg = { .mmap_lock_handoff_ns = 60ULL * 1000000000 };
	struct vml_mm_stats st0, st1;
	struct vml_sys *sys;
	struct vml_mm *mm;
	struct reader r;
	struct writer w1, w2;

	must_succeed(vml_sys_create(&cfg, &sys));
	mm = layout(sys);
	vml_mm_stats(mm, &st0);
	r = (struct reader){ .mm = mm, .view = VML_VIEW_SMAPS_ROLLUP, .lock = VML_LOCK_MMAP,
			     .flags = VML_READER_NOSTEAL };
	park_at(X, Y, Z);
	start_reader(&r);
	wait_parked(X);
	start_queued_mmap(&w1, mm, BASE + 16 * M, "the first writer to queue");
	release();
	wait_parked(Y);
	/* It sets done after its unlock, so it may still be on its way out. */
	wait_until(atomic_load(&w1.done), "the writer queued in X's walk to finish in Y's");
	ok(1, "the writer queued in X's walk got in before Y's");
	start_queued_mmap(&w2, mm, BASE + 17 * M, "the second writer to queue");
	release();
	wait_parked(Z);
	ok(!atomic_load(&w2.done),
	   "the writer queued in Y's walk still waits in Z's: Y and Z in one hold");
	release();
	park_at(0, 0, 0);
	pthread_join(r.thread, NULL);
	pthread_join(w1.thread, NULL);
	pthread_join(w2.thread, NULL);
	vml_mm_stats(mm, &st1);
	is_int((long long)(st1.proc_contended_drops - st0.proc_contended_drops), 2,
	       "two drops: after X, and after Z (none after Y)");
	ok(!w1.err && !w2.err, "both writers mapped");
	ok(r.out && strstr(r.out, "Rss:                  48 kB"),
	   "the rollup is whole: 3 touched VMAs, 48 kB");
	free(r.out);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/* Counters: which path a read took. */
static void test_counters(void)
{
	const unsigned long M = 1UL << 20, X = BASE + M, Y = BASE + 2 * M;
	struct vml_mm_stats a, b;
	struct vml_sys *sys;
	struct vml_mm *mm;
	struct reader r;
	char *t;

	must_succeed(vml_sys_create(NULL, &sys));
	mm = layout(sys);
	vml_mm_stats(mm, &a);
	t = read_view(mm, VML_VIEW_SMAPS, VML_LOCK_VMA, 1 << 16);
	free(t);
	vml_mm_stats(mm, &b);
	is_int(b.vma_lock_success - a.vma_lock_success, 4, "policy vma: 4 VMAs, 4 VMA read locks");
	is_int(b.mmap_read_locks - a.mmap_read_locks, 0, "...and no mmap_lock");
	a = b;
	t = read_view(mm, VML_VIEW_NUMA_MAPS, VML_LOCK_MMAP, 1 << 16);
	free(t);
	vml_mm_stats(mm, &b);
	/* Two read() calls: the records, then EOF (m_start locks for the gate position too). */
	is_int(b.mmap_read_locks - a.mmap_read_locks, 2, "policy mmap: one mmap_lock per read()");
	is_int(b.vma_lock_success - a.vma_lock_success, 0, "...and no VMA locks");

	/* Y write-locked when the reader reaches it: found under mmap_lock instead. */
	a = b;
	r = (struct reader){ .mm = mm, .view = VML_VIEW_SMAPS, .lock = VML_LOCK_VMA };
	park_at(X, 0, 0);
	start_reader(&r);
	wait_parked(X);
	mmap_write_lock(to_mm(mm));
	vma_start_write(vma_lookup(to_mm(mm), Y));
	release();
	wait_until(mmap_lock_is_contended(to_mm(mm)), "the reader to fall back to mmap_lock");
	mmap_write_unlock(to_mm(mm));
	park_at(0, 0, 0);
	pthread_join(r.thread, NULL);
	vml_mm_stats(mm, &b);
	ok(b.vma_lock_abort > a.vma_lock_abort, "a write-locked VMA aborts the VMA lock");
	is_int(b.proc_mmap_fallbacks - a.proc_mmap_fallbacks, 1, "...and falls back to mmap_lock once");
	ok(strstr(r.out, "100000200000-100000204000 rw-p") != NULL, "Y is still shown");
	free(r.out);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

int main(void)
{
	atomic_store(&vml_proc_walk_hook, walk_hook);
	test_vma_bound(VML_VIEW_SMAPS);
	test_vma_bound(VML_VIEW_NUMA_MAPS);
	test_vma_bound(VML_VIEW_SMAPS_ROLLUP);
	test_mmap_policy_blocks();
	test_skip_reset(false);
	test_skip_reset(true);
	test_rollup_drop(true);
	test_rollup_drop(false);
	test_rollup_two_per_hold();
	test_counters();
	atomic_store(&vml_proc_walk_hook, NULL);
	return tap_done();
}
