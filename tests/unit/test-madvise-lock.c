// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which lock MADV_DONTNEED takes (6.18's madvise_lock): inside one VMA,
 * that VMA's read lock alone - it runs while another thread holds
 * mmap_lock for write; a range over two VMAs, or a VMA that is
 * write-locked, takes mmap_lock for read (it waits for a writer, not for a
 * reader). A zap larger than one mmu_gather frees the full one on the way.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm/vma.h"
#include "mm/vma_lock.h"
#include "mm_helpers.h"
#include "tap.h"

#define DEADLINE_S 60	/* only a broken build waits this long */

struct advice {
	struct vml_mm *mm;
	unsigned long addr, len;
	int ret;
	atomic_bool done;
	pthread_t thread;
};

static void *advise_main(void *arg)
{
	struct advice *a = arg;

	a->ret = vml_madvise(a->mm, a->addr, a->len, MADV_DONTNEED);
	atomic_store(&a->done, true);
	return NULL;
}

static void start_advice(struct advice *a, struct vml_mm *mm, unsigned long addr,
			 unsigned long len)
{
	*a = (struct advice){ .mm = mm, .addr = addr, .len = len };
	if (pthread_create(&a->thread, NULL, advise_main, a))
		abort();
}

/* Yield until @cond holds, or give up after DEADLINE_S; Return: whether it held. */
#define wait_for(cond)                                                          \
	({                                                                      \
		struct timespec t0_, t_;                                        \
		bool held_;                                                     \
		clock_gettime(CLOCK_MONOTONIC, &t0_);                           \
		while (!(held_ = (cond))) {                                     \
			sched_yield();                                          \
			clock_gettime(CLOCK_MONOTONIC, &t_);                    \
			if (t_.tv_sec - t0_.tv_sec > DEADLINE_S)                \
				break;                                          \
		}                                                               \
		held_;                                                          \
	})

static uint64_t rss(struct vml_mm *mm)
{
	struct vml_mm_stats st;

	vml_mm_stats(mm, &st);
	return st.rss_pages;
}

/*
 * Layout: A [BASE, +8 pages) rw-, B right after it, 8 pages r-- (apart by
 * protection); all of A written (8 pages of RSS).
 */
static struct vml_mm *setup(struct vml_sys *sys)
{
	struct vml_mm *mm = NULL;

	if (vml_mm_create(sys, &mm) || map_anon(mm, BASE, 8 * PG, PROT_READ | PROT_WRITE) ||
	    map_anon(mm, BASE + 8 * PG, 8 * PG, PROT_READ) ||
	    vml_touch(mm, BASE, 8 * PG, VML_TOUCH_WRITE))
		abort();
	return mm;
}

static void test_inside_one_vma(struct vml_sys *sys)
{
	struct vml_mm *mm = setup(sys);
	struct vml_mm_stats a, b;
	struct advice adv;

	vml_mm_stats(mm, &a);
	mmap_write_lock(to_mm(mm));
	start_advice(&adv, mm, BASE + PG, 2 * PG);
	ok(wait_for(atomic_load(&adv.done)), "inside one VMA: done while mmap_lock is write-held");
	mmap_write_unlock(to_mm(mm));
	pthread_join(adv.thread, NULL);
	is_int(adv.ret, 0, "...and succeeded");
	is_int(rss(mm), 6, "...and zapped its two pages");
	vml_mm_stats(mm, &b);
	is_int(b.mmap_write_locks - a.mmap_write_locks, 1, "only the test took mmap_lock(W)");
	ok(b.vma_lock_success > a.vma_lock_success, "...the advice took A's VMA lock");
	vml_mm_destroy(mm);
}

/* Over two VMAs: the mmap_lock way, for read - done while the test holds it for read. */
static void test_over_vmas_reads(struct vml_sys *sys)
{
	struct vml_mm *mm = setup(sys);
	struct advice adv;

	mmap_read_lock(to_mm(mm));
	start_advice(&adv, mm, BASE + 6 * PG, 4 * PG);
	ok(wait_for(atomic_load(&adv.done)), "over two VMAs: done while mmap_lock is read-held");
	mmap_read_unlock(to_mm(mm));
	pthread_join(adv.thread, NULL);
	is_int(adv.ret, 0, "...and succeeded");
	is_int(rss(mm), 6, "...and zapped A's last two pages");
	vml_mm_destroy(mm);
}

/* @addr, @len: a range the VMA lock cannot serve; @write_lock_a: write-lock A too. */
static void test_falls_back(struct vml_sys *sys, unsigned long addr, unsigned long len,
			    bool write_lock_a, uint64_t rss_after, const char *what)
{
	struct vml_mm *mm = setup(sys);
	struct advice adv;

	mmap_write_lock(to_mm(mm));
	if (write_lock_a)
		vma_start_write(vma_lookup(to_mm(mm), BASE));
	start_advice(&adv, mm, addr, len);
	ok(wait_for(mmap_lock_is_contended(to_mm(mm))), "%s: waits for mmap_lock", what);
	ok(!atomic_load(&adv.done), "%s: ...and is not done while the test holds it", what);
	mmap_write_unlock(to_mm(mm));
	pthread_join(adv.thread, NULL);
	is_int(adv.ret, 0, "%s: done once mmap_lock is free", what);
	is_int(rss(mm), rss_after, "%s: ...and zapped what it covers", what);
	vml_mm_destroy(mm);
}

static void test_errors(struct vml_sys *sys)
{
	struct vml_mm *mm = setup(sys);

	is_int(vml_mlock(mm, BASE + 2 * PG, PG), 0, "mlock one page of A (a VMA of its own)");
	is_int(vml_madvise(mm, BASE + 2 * PG, PG, MADV_DONTNEED), -EINVAL,
	       "DONTNEED inside a locked VMA: EINVAL");
	is_int(vml_madvise(mm, BASE + 2 * PG, PG, MADV_DONTNEED_LOCKED), 0,
	       "DONTNEED_LOCKED there: done");
	is_int(vml_madvise(mm, BASE + 32 * PG, PG, MADV_DONTNEED), -ENOMEM,
	       "DONTNEED of a hole: ENOMEM (the mmap_lock way)");
	is_int(rss(mm), 7, "one page zapped in all");
	vml_mm_destroy(mm);
}

/* More pages than one gather holds (MMU_GATHER_MAX_PAGES): it is freed on the way, then the rest. */
static void test_large_zap(struct vml_sys *sys)
{
	unsigned long len = (MMU_GATHER_MAX_PAGES + MMU_GATHER_MAX_PAGES / 2) * PG;
	struct vml_mm *mm = NULL;

	if (vml_mm_create(sys, &mm))
		abort();
	is_int(map_anon(mm, BASE, len, PROT_READ | PROT_WRITE), 0, "map 1.5 gathers' worth");
	is_int(vml_touch(mm, BASE, len, VML_TOUCH_WRITE), 0, "write every page");
	is_int(rss(mm), len / PG, "all resident");
	is_int(vml_madvise(mm, BASE, len, MADV_DONTNEED), 0, "DONTNEED the whole VMA");
	is_int(rss(mm), 0, "none resident");
	is_int(vml_touch(mm, BASE, len, VML_TOUCH_WRITE), 0, "write every page again");
	is_int(rss(mm), len / PG, "all resident again");
	vml_mm_destroy(mm);
}

int main(void)
{
	struct vml_sys *sys;

	if (vml_sys_create(NULL, &sys))
		return 1;
	test_inside_one_vma(sys);
	test_falls_back(sys, BASE + 6 * PG, 4 * PG, false, 6, "over two VMAs");
	test_over_vmas_reads(sys);
	test_falls_back(sys, BASE + PG, 2 * PG, true, 6, "inside a write-locked VMA");
	test_errors(sys);
	test_large_zap(sys);
	vml_sys_destroy(sys);
	return tap_done();
}
