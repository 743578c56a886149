// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The live kernel's fake and transient gaps in maps
 * (docs/findings/maps-fake-gaps.md), made to happen on the model on
 * purpose - a reader or a writer parked at the exact point - not hoped for:
 *
 *  - case 1, a stale iterator after a merge (mmap(MAP_FIXED), mprotect, an
 *    mremap into a hole that merges): the maps reader is parked right after
 *    it dropped the first piece A1 of a split A (vml_proc_next_hook), a
 *    writer merges A back to completion, the reader goes on.
 *    kernel_transients off: the reader's iterator keeps its snapshot, finds
 *    the piece after A1 detached and looks up again: it shows the merged A
 *    (old form, then new). On: its iterator re-walks as the maple tree's
 *    and lands in the merged A, so it shows B right after A1 - a gap that
 *    existed in no state. VML_LOCK_VMA_STRICT: the gap is looked up again
 *    from a fresh root, the merged A is found, the reader falls back to
 *    mmap_lock and shows it. VML_LOCK_VMA_RECHECK (every gap looked up
 *    again from a fresh root, accepted if that agrees) does the same.
 *  - case 2, mremap(MREMAP_FIXED) over the whole VMA A: the writer is parked
 *    right after it published the destination unmapped
 *    (vml_transient_hook). On: a reader run meanwhile shows B after P, A
 *    missing - also under vma-recheck, whose fresh lookup sees the same
 *    hole; strict: the reader sees a writer inside, falls back to mmap_lock
 *    and waits for the move. Off: there is no such state (the hook
 *    is never called).
 *
 * Waits (tests/park.h) have a generous deadline only to turn a hang into
 * a failure.
 */
#include <stdio.h>

#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm_helpers.h"
#include "park.h"
#include "tap.h"
#include "util/debug.h"

/* The layout: P, A, B, N (3 pages each, alternating rw-/r--), a spare S. */
#define P_ADDR BASE
#define A_ADDR (BASE + 3 * PG)
#define B_ADDR (BASE + 6 * PG)
#define N_ADDR (BASE + 9 * PG)
#define S_ADDR (BASE + 32 * PG)

enum mode { M_OFF, M_ON, M_STRICT, M_RECHECK };
static const char *const mode_name[] = {
	"transients off", "transients on", "on, vma-strict", "on, vma-recheck",
};

static enum vml_lock_policy mode_lock(enum mode m)
{
	return m == M_STRICT ? VML_LOCK_VMA_STRICT : m == M_RECHECK ? VML_LOCK_VMA_RECHECK :
	       VML_LOCK_VMA;
}

/* Who parks where (under gate.lock): the reader is 1, the writer 2. */
static struct {
	unsigned long park_from;	/* reader: park when looking up from here (0: never) */
	bool park_writer;		/* writer: park in the transient hook */
	int transients_seen;		/* transient hook calls */
} plan;

/* The reader, RCU held, between dropping a VMA's lock and looking up from @from. */
static void next_hook(unsigned long from)
{
	pthread_mutex_lock(&gate.lock);
	if (plan.park_from && from == plan.park_from) {
		plan.park_from = 0;	/* once */
		park(1);
	}
	pthread_mutex_unlock(&gate.lock);
}

/* The writer, mmap_lock(W) held, after publishing [start, end) empty. */
static void transient_hook(unsigned long start, unsigned long end)
{
	(void)start;
	(void)end;
	pthread_mutex_lock(&gate.lock);
	plan.transients_seen++;
	if (plan.park_writer) {
		plan.park_writer = false;
		park(2);
	}
	pthread_mutex_unlock(&gate.lock);
}

static void wait_parked(int who)
{
	park_wait(who, who == 1 ? "the reader to park" : "the writer to park");
}

/* ---- threads ---- */

struct reader {
	struct vml_mm *mm;
	enum vml_lock_policy lock;
	char *out;
	pthread_t thread;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	/* One read() of a page: one seq_file pass, one RCU section, as in the kernel. */
	r->out = read_view(r->mm, VML_VIEW_MAPS, r->lock, 4096);
	return NULL;
}

static void start_reader(struct reader *r)
{
	pthread_create(&r->thread, NULL, reader_main, r);
}

struct remapper {
	struct vml_mm *mm;
	int err;
	_Atomic bool done;
	pthread_t thread;
};

/* The whole spare S (r-x) over all of A, as the reproducer's remap-whole. */
static void *remapper_main(void *arg)
{
	struct remapper *w = arg;

	w->err = vml_mremap(w->mm, S_ADDR, 3 * PG, 3 * PG,
			    MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, A_ADDR, NULL);
	atomic_store(&w->done, true);
	return NULL;
}

/* ---- the address space ---- */

static struct vml_mm *layout(struct vml_sys **sys, enum mode mode)
{
	struct vml_sys_config cfg = { .kernel_transients = mode != M_OFF };
	struct vml_mm *mm;

	if (vml_sys_create(&cfg, sys) || vml_mm_create(*sys, &mm))
		abort();
	if (map_anon(mm, P_ADDR, 3 * PG, PROT_READ | PROT_WRITE) ||
	    map_anon(mm, A_ADDR, 3 * PG, PROT_READ) ||
	    map_anon(mm, B_ADDR, 3 * PG, PROT_READ | PROT_WRITE) ||
	    map_anon(mm, N_ADDR, 3 * PG, PROT_READ) ||
	    map_anon(mm, S_ADDR, 3 * PG, PROT_READ | PROT_EXEC))
		abort();
	return mm;
}

static void teardown(struct vml_mm *mm, struct vml_sys *sys)
{
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

/* The maps line of [start, end) with @perms, as a prefix to look for. */
static const char *line(unsigned long start, unsigned long end, const char *perms)
{
	static char buf[4][64];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%lx-%lx %s", start, end, perms);
	return buf[i];
}

/* The maps line that follows the one starting with @prefix, or "" (none, or no such line). */
static const char *line_after(const char *maps, const char *prefix, char *buf, size_t len)
{
	const char *p = maps ? strstr(maps, prefix) : NULL;
	const char *nl, *end;

	buf[0] = '\0';
	if (!p || !(nl = strchr(p, '\n')))
		return buf;
	end = strchr(nl + 1, '\n');
	if (!end)
		return buf;
	snprintf(buf, len, "%.*s", (int)(end - nl - 1), nl + 1);
	return buf;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* ---- case 1: the merge that puts A back together ---- */

enum kind1 { K_MAPFIXED, K_MPROTECT, K_REMAP };
static const char *const kind1_name[] = { "mmap(MAP_FIXED)", "mprotect", "mremap into the hole" };

static void split_a(struct vml_mm *mm, enum kind1 k)
{
	int err = 0;

	switch (k) {
	case K_MAPFIXED:
		err = map_anon(mm, A_ADDR + PG, PG, PROT_READ | PROT_EXEC);
		break;
	case K_MPROTECT:
		err = vml_mprotect(mm, A_ADDR + PG, PG, PROT_READ | PROT_EXEC);
		break;
	case K_REMAP:
		/* A with a one-page hole; an untouched r-- page to move in, out of the way */
		err = vml_munmap(mm, A_ADDR + PG, PG) ||
		      map_anon(mm, S_ADDR + 8 * PG, PG, PROT_READ);
		break;
	}
	if (err)
		abort();
}

static int merge_a(struct vml_mm *mm, enum kind1 k)
{
	switch (k) {
	case K_MAPFIXED:
		return map_anon(mm, A_ADDR + PG, PG, PROT_READ);
	case K_MPROTECT:
		return vml_mprotect(mm, A_ADDR + PG, PG, PROT_READ);
	case K_REMAP:
		return vml_mremap(mm, S_ADDR + 8 * PG, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED,
				  A_ADDR + PG, NULL);
	}
	return -EINVAL;
}

static void test_merge(enum kind1 k, enum mode mode)
{
	const char *a1 = line(A_ADDR, A_ADDR + PG, "r--p"), *merged = line(A_ADDR, B_ADDR, "r--p");
	const char *b = line(B_ADDR, B_ADDR + 3 * PG, "rw-p");
	struct vml_mm_stats st0, st1;
	struct vml_sys *sys;
	struct vml_mm *mm = layout(&sys, mode);
	struct reader r = { .mm = mm, .lock = mode_lock(mode) };
	char next[128];
	char *now;
	int err;

	split_a(mm, k);
	vml_mm_stats(mm, &st0);
	pthread_mutex_lock(&gate.lock);
	plan.park_from = A_ADDR + PG;	/* the end of A1: just dropped */
	pthread_mutex_unlock(&gate.lock);
	start_reader(&r);
	wait_parked(1);

	err = merge_a(mm, k);
	now = maps_of(mm);
	ok(!err && now && strstr(now, merged), "%s, %s: the merge completes while the reader is "
	   "parked after A1; A is whole again", kind1_name[k], mode_name[mode]);
	free(now);
	release();
	pthread_join(r.thread, NULL);
	vml_mm_stats(mm, &st1);

	ok(r.out && strstr(r.out, a1), "...the reader showed A1 before it was parked");
	line_after(r.out, a1, next, sizeof(next));
	switch (mode) {
	case M_OFF:
		/* its snapshot's next piece is detached: it looks up again and finds the merged A */
		if (!ok(starts(next, merged), "...then the merged A (a VMA twice, old then new): "
			"the snapshot iterator shows no fake gap"))
			tap_diag("%s", r.out ? r.out : "(null)");
		break;
	case M_ON:
		if (!ok(starts(next, b), "...then B: a fake gap %lx-%lx, as the 6.18 kernel shows",
			A_ADDR + PG, B_ADDR))
			tap_diag("%s", r.out ? r.out : "(null)");
		is_int(st1.proc_mmap_fallbacks - st0.proc_mmap_fallbacks, 0,
		       "...accepted without a fallback (no writer was inside at the lookup)");
		break;
	case M_STRICT:
	case M_RECHECK:
		if (!ok(starts(next, merged), "...then the merged A: the gap is not proven, the "
			"reader falls back and shows no fake gap"))
			tap_diag("%s", r.out ? r.out : "(null)");
		is_int(st1.proc_mmap_fallbacks - st0.proc_mmap_fallbacks, 1,
		       "...through one fallback to mmap_lock");
		break;
	}
	free(r.out);
	teardown(mm, sys);
}

/* ---- case 2: mremap(MREMAP_FIXED) over the whole VMA A ---- */

static void test_remap_whole(enum mode mode)
{
	const char *p = line(P_ADDR, A_ADDR, "rw-p"), *moved = line(A_ADDR, B_ADDR, "r-xp");
	const char *b = line(B_ADDR, B_ADDR + 3 * PG, "rw-p");
	struct vml_sys *sys;
	struct vml_mm *mm = layout(&sys, mode);
	struct remapper w = { .mm = mm };
	struct reader r = { .mm = mm, .lock = mode_lock(mode) };
	char next[128];
	int seen;

	pthread_mutex_lock(&gate.lock);
	plan.transients_seen = 0;
	plan.park_writer = mode != M_OFF;
	pthread_mutex_unlock(&gate.lock);
	pthread_create(&w.thread, NULL, remapper_main, &w);
	if (mode == M_OFF) {
		pthread_join(w.thread, NULL);
		pthread_mutex_lock(&gate.lock);
		seen = plan.transients_seen;
		pthread_mutex_unlock(&gate.lock);
		ok(!w.err && seen == 0, "remap-whole, %s: the move publishes no intermediate state",
		   mode_name[mode]);
		teardown(mm, sys);
		return;
	}
	wait_parked(2);
	start_reader(&r);
	if (mode == M_ON || mode == M_RECHECK) {
		/* vma-recheck's fresh lookup sees the same hole: only the writer can fix case 2 */
		pthread_join(r.thread, NULL);
		ok(!atomic_load(&w.done), "remap-whole, %s: a reader runs to the end while the "
		   "writer is parked with A unmapped", mode_name[mode]);
		line_after(r.out, p, next, sizeof(next));
		if (!ok(starts(next, b), "...and shows B right after P: A, mapped before and after "
			"the call, is missing (the kernel's transient gap)"))
			tap_diag("%s", r.out ? r.out : "(null)");
		release();
		pthread_join(w.thread, NULL);
	} else {
		wait_until(mmap_lock_is_contended(to_mm(mm)), "the reader to fall back to mmap_lock");
		ok(!atomic_load(&w.done), "remap-whole, %s: the reader does not accept the gap "
		   "while the writer is inside; it waits for mmap_lock", mode_name[mode]);
		release();
		pthread_join(w.thread, NULL);
		pthread_join(r.thread, NULL);
		line_after(r.out, p, next, sizeof(next));
		if (!ok(starts(next, moved), "...and shows the moved A after P"))
			tap_diag("%s", r.out ? r.out : "(null)");
	}
	ok(!w.err, "...the mremap succeeded");
	free(r.out);
	teardown(mm, sys);
}

int main(void)
{
	atomic_store(&vml_proc_next_hook, next_hook);
	atomic_store(&vml_transient_hook, transient_hook);
	for (enum kind1 k = K_MAPFIXED; k <= K_REMAP; k++)
		for (enum mode m = M_OFF; m <= M_RECHECK; m++)
			test_merge(k, m);
	for (enum mode m = M_OFF; m <= M_RECHECK; m++)
		test_remap_whole(m);
	atomic_store(&vml_proc_next_hook, NULL);
	atomic_store(&vml_transient_hook, NULL);
	return tap_done();
}
