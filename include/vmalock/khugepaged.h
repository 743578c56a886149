/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vmalock/khugepaged.h - a khugepaged-style scanner: it walks registered
 * address spaces under a budget and collapses runs of 512 small anonymous
 * pages into PMD-mapped huge pages, bounding how long it holds mmap_lock.
 *
 * Two policies (docs/kernel.md §6, seed 003):
 *   VML_KHUGEPAGED_MAINLINE  6.18: mmap_read_trylock per mm (skip the mm on
 *       failure and forget where the scan was), one global cursor address,
 *       every ineligible VMA charged one unit of budget without ever checking
 *       it, the read lock held across the whole walk;
 *   VML_KHUGEPAGED_FIXED     the 2026 series: a resume address per mm,
 *       skip straight to the next candidate after an ineligible VMA, and
 *       after 1024 skipped VMAs drop mmap_lock and re-take it without
 *       stealing it from a queued writer (mmap_read_lock_nosteal).
 * or, with `fixes`, any subset of the series' three fixes (each alone):
 *   VML_KHUGEPAGED_FIX_RESUME  patch 2: the scan position is the mm's own and
 *       survives a failed trylock and the end of a wakeup's budget;
 *   VML_KHUGEPAGED_FIX_SKIP    patch 2: an ineligible VMA moves the position
 *       past itself (to the next candidate);
 *   VML_KHUGEPAGED_FIX_DROP    patch 5: after max_skip_batch ineligible VMAs
 *       drop mmap_lock, yield, and take it again. Alone (without SKIP) the
 *       walk goes on from the last skipped VMA's end.
 * The re-take after a drop is mmap_read_lock_nosteal when the mm's system
 * runs VML_STEAL_NOSTEAL_RETAKE (the series as posted: patches 3-5), and the
 * plain mmap_read_lock otherwise - under VML_STEAL_NOT_BEHIND_WRITER that is
 * Peter Zijlstra's alternative to patch 3; under VML_STEAL_KERNEL the
 * re-take steals the lock back from the writer it was dropped for.
 *
 * One thread controls a scanner (create, start, stop, destroy); scanning
 * runs either in the scanner's own thread (vml_khugepaged_start) or in the
 * caller's (vml_khugepaged_scan), never both at once. Address-space calls
 * go on meanwhile in any threads.
 */
#ifndef VMALOCK_KHUGEPAGED_H
#define VMALOCK_KHUGEPAGED_H

#include <stdbool.h>
#include <stdint.h>

#include "vmalock/mm.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vml_khugepaged;

enum vml_khugepaged_policy {
	VML_KHUGEPAGED_MAINLINE = 0,
	VML_KHUGEPAGED_FIXED,
};

#define VML_KHUGEPAGED_FIX_RESUME 0x1
#define VML_KHUGEPAGED_FIX_SKIP   0x2
#define VML_KHUGEPAGED_FIX_DROP   0x4
#define VML_KHUGEPAGED_FIX_ALL    0x7

/* Zero fields take the kernel's defaults (shown). */
struct vml_khugepaged_config {
	enum vml_khugepaged_policy policy;
	unsigned int pages_to_scan;	/* 4096 (8 * HPAGE_PMD_NR) per wakeup */
	unsigned int scan_sleep_ms;	/* 10000 between wakeups of the thread */
	unsigned int max_ptes_none;	/* 511 */
	unsigned int max_ptes_swap;	/* 64 */
	unsigned int max_ptes_shared;	/* 256 */
	unsigned int max_skip_batch;	/* 1024 (FIX_DROP only) */
	unsigned int fixes;		/* 0: as the policy says (MAINLINE none, FIXED all);
					 * else these VML_KHUGEPAGED_FIX_* bits, whatever
					 * the policy */
};

struct vml_khugepaged_stats {
	uint64_t pages_collapsed;	/* huge pages made */
	uint64_t full_scans;		/* passes over the whole mm list */
	uint64_t wakeups;		/* khugepaged_do_scan calls */
	uint64_t trylock_failures;	/* mms skipped because mmap_lock was contended */
	uint64_t lock_drops;		/* FIX_DROP: drops after max_skip_batch skipped VMAs */
	uint64_t vmas_skipped;		/* ineligible VMAs walked */
	uint64_t max_hold_ns;		/* longest single mmap_lock(R) hold */
	uint64_t total_hold_ns;		/* all of them, over ... */
	uint64_t holds;			/* ... this many */
	uint64_t max_hold_cpu_ns;	/* the most CPU time one hold used: its length had
					 * the thread not been preempted meanwhile (the
					 * kernel's khugepaged is not preempted while it
					 * skips VMAs, on a PREEMPT_NONE kernel) */
	uint64_t retake_ns_total;	/* FIX_DROP: time spent re-taking the lock after
					 * drops (queued behind writers, then woken) */
	uint64_t retake_ns_max;
};

/* Context: any thread; allocates, takes no lock, never sleeps. */
VML_MUST_CHECK
int vml_khugepaged_create(struct vml_sys *sys, const struct vml_khugepaged_config *cfg,
			  struct vml_khugepaged **out);
/*
 * Stops the thread if running and forgets every mm. NULL is a no-op.
 * Context: the controlling thread; may sleep (as vml_khugepaged_stop).
 */
void vml_khugepaged_destroy(struct vml_khugepaged *k);

/*
 * Put @mm on the scan list (at the tail); the scanner pins it until it exits.
 * Context: any thread, several at once, also while the scanner runs; a
 * spin lock, no mmap_lock, never sleeps.
 */
VML_MUST_CHECK
int vml_khugepaged_add(struct vml_khugepaged *k, struct vml_mm *mm);

/*
 * One wakeup's worth of scanning (khugepaged_do_scan) in the calling thread.
 * Context: not while the scanner's thread runs, nor from two threads at
 * once. Takes each mm's mmap_lock(R) (MAINLINE: trylock, skipping the mm)
 * while it walks, mmap_lock(W) to collapse a range. May sleep.
 */
int vml_khugepaged_scan(struct vml_khugepaged *k);

/*
 * Run the scanner in its own thread (low priority), sleeping scan_sleep_ms
 * between passes; stop it and wait for it to end (a no-op if not running).
 * Context: the controlling thread. Start never sleeps; stop waits for the
 * thread to finish the pass it is in (sleeps).
 */
VML_MUST_CHECK
int vml_khugepaged_start(struct vml_khugepaged *k);
void vml_khugepaged_stop(struct vml_khugepaged *k);

/*
 * Context: any thread, at any time, several at once; no lock, never sleeps.
 * Each counter is read on its own (relaxed).
 */
int vml_khugepaged_stats(struct vml_khugepaged *k, struct vml_khugepaged_stats *out);

/*
 * madvise(addr, len, MADV_COLLAPSE) (6.1+): collapse every 2 MiB range of
 * [addr, addr+len) now, whatever the THP knobs say (not with
 * MADV_NOHUGEPAGE), as khugepaged would but without its max_ptes_* limits
 * and without needing a referenced page: anonymous memory that has a page
 * table there, and shmem (its page cache becomes one huge folio, mapped by
 * the PMD). vml_madvise() refuses MADV_COLLAPSE (-EINVAL): the collapse
 * lives in this layer.
 * Return: 0 if every such range is PMD-mapped now; -EINVAL (a VMA that
 * cannot have huge pages, a range with no page table, ...), -ENOMEM (a
 * hole in the range, or no memory), -EAGAIN, as the kernel returns.
 * Context: mmap_lock(R), dropped and retaken around each collapse (which
 * takes mmap_lock(W)). May sleep.
 */
VML_MUST_CHECK
int vml_madvise_collapse(struct vml_mm *mm, unsigned long addr, unsigned long len);

#ifdef __cplusplus
}
#endif

#endif /* VMALOCK_KHUGEPAGED_H */
