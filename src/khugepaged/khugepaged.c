// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * khugepaged.c - the scanner (mm/khugepaged.c khugepaged_do_scan and
 * collapse_scan_mm_slot), with the kernel's 6.18 behaviour and the 2026
 * fixes of seed 003 as two policies.
 *
 * The list of mms and the cursor (which mm is being scanned, and under
 * MAINLINE the one global address) are protected by k->lock, a spinlock
 * taken only to pick or advance the cursor, never while scanning. Each slot
 * pins its mm (mmgrab); an mm whose users are gone is dropped from the list
 * when the cursor reaches it.
 *
 * Budget ("progress"): one unit per mm visited, one per VMA skipped, and
 * HPAGE_PMD_NR per PMD range scanned; a wakeup stops once pages_to_scan is
 * reached - but MAINLINE only checks after a PMD range was scanned, so an mm
 * with tens of thousands of ineligible VMAs is walked whole under one read
 * lock hold. That is the stall seed 003 bounds with max_skip_batch.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "platform/platform.h"
#include "khugepaged/collapse.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/vma.h"
#include "sync/futex.h"
#include "sync/spinlock.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/compiler.h"
#include "vmalock/khugepaged.h"

/*
 * [k->lock], [lock]  the scanner's spinlock k->lock
 * [scanner]          the thread running a scan of k's list; scans of one
 *                    list never overlap (the scanner thread, or a caller of
 *                    vml_khugepaged_scan() while that thread is stopped)
 * [owner]            the caller of vml_khugepaged_start/stop/destroy
 */
struct mm_slot {
	struct list_head node;		/* [k->lock] on k->mm_head */
	struct mm *mm;			/* [I] pinned with mmgrab */
	unsigned long address;		/* [scanner] FIX_RESUME: where this mm's scan resumes */
};

struct vml_khugepaged {
	struct vml_sys *sys;				/* [I] */
	struct vml_khugepaged_config cfg;		/* [I] */
	spinlock_t lock;				/* khugepaged_mm_lock */
	struct list_head mm_head;			/* [lock] */
	struct mm_slot *cursor;				/* [lock] the mm being scanned */
	unsigned long address;				/* [lock] to reset, [scanner] to advance:
							 * MAINLINE's global cursor address */

	struct plat_thread thread;
	bool running;					/* [owner] */
	_Atomic uint32_t stop;				/* futex word: 1 asks the thread to end */

	struct {
		_Atomic uint64_t pages_collapsed, full_scans, wakeups, trylock_failures;
		_Atomic uint64_t lock_drops, vmas_skipped, max_hold_ns, total_hold_ns, holds;
		_Atomic uint64_t max_hold_cpu_ns, retake_ns_total, retake_ns_max;
	} st;
};

int vml_khugepaged_create(struct vml_sys *sys, const struct vml_khugepaged_config *cfg,
			  struct vml_khugepaged **out)
{
	struct vml_khugepaged *k;

	if (!sys || !out || (cfg && (cfg->policy > VML_KHUGEPAGED_FIXED ||
				     (cfg->fixes & ~VML_KHUGEPAGED_FIX_ALL))))
		return -EINVAL;
	if (cfg && (cfg->max_ptes_none >= HPAGE_PMD_NR || cfg->max_ptes_swap >= HPAGE_PMD_NR ||
		    cfg->max_ptes_shared >= HPAGE_PMD_NR))
		return -EINVAL;
	k = vml_zalloc(sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->sys = sys;
	if (cfg)
		k->cfg = *cfg;
	if (!k->cfg.pages_to_scan)
		k->cfg.pages_to_scan = 8 * HPAGE_PMD_NR;
	if (!k->cfg.scan_sleep_ms)
		k->cfg.scan_sleep_ms = 10000;
	if (!cfg || !cfg->max_ptes_none)
		k->cfg.max_ptes_none = HPAGE_PMD_NR - 1;
	if (!cfg || !cfg->max_ptes_swap)
		k->cfg.max_ptes_swap = HPAGE_PMD_NR / 8;
	if (!cfg || !cfg->max_ptes_shared)
		k->cfg.max_ptes_shared = HPAGE_PMD_NR / 2;
	if (!k->cfg.max_skip_batch)
		k->cfg.max_skip_batch = 1024;
	if (!k->cfg.fixes && k->cfg.policy == VML_KHUGEPAGED_FIXED)
		k->cfg.fixes = VML_KHUGEPAGED_FIX_ALL;
	INIT_LIST_HEAD(&k->mm_head);
	spin_lock_init(&k->lock, LOCK_CLASS_KHUGEPAGED);
	*out = k;
	return 0;
}

int vml_khugepaged_add(struct vml_khugepaged *k, struct vml_mm *umm)
{
	struct mm_slot *slot, *s;
	struct mm *mm = to_mm(umm);

	if (!k || !mm)
		return -EINVAL;
	slot = vml_zalloc(sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	slot->mm = mm;
	spin_lock(&k->lock);
	list_for_each_entry(s, &k->mm_head, node) {
		if (s->mm == mm) {
			spin_unlock(&k->lock);
			vml_free(slot);
			return -EEXIST;
		}
	}
	mmgrab(mm);
	list_add_tail(&slot->node, &k->mm_head);	/* "just behind the cursor" */
	spin_unlock(&k->lock);
	return 0;
}

static void note_unlock(void *arg, uint64_t held, uint64_t held_cpu)
{
	struct vml_khugepaged *k = arg;

	fetch_add_relaxed(&k->st.total_hold_ns, held);
	fetch_add_relaxed(&k->st.holds, 1);
	stat_record_max(&k->st.max_hold_ns, held);
	stat_record_max(&k->st.max_hold_cpu_ns, held_cpu);
}

/* The scanner's read lock is (re)taken now: note when, in both clocks. */
static void note_lock(struct collapse_control *cc)
{
	cc->lock_taken_ns = plat_now_ns();
	cc->lock_taken_cpu = plat_thread_cpu_ns();
}

/*
 * The kernel's cost of the VMAs looked at since the last charge (costs.
 * scan_vma_ns each; 0 on host threads), charged in batches of
 * SCAN_CHARGE_BATCH and before the lock goes: a simulated machine would
 * spend an event a VMA, and at 1M VMAs that is the whole run.
 */
#define SCAN_CHARGE_BATCH 64

struct scan_charge {
	uint64_t vma_ns;
	unsigned int pending;
};

static void scan_charge_flush(struct scan_charge *sc)
{
	if (sc->pending && sc->vma_ns)
		plat_charge_ns(sc->vma_ns * sc->pending, PLAT_KERNEL);
	sc->pending = 0;
}

static void scan_charge_vma(struct scan_charge *sc)
{
	if (++sc->pending >= SCAN_CHARGE_BATCH)
		scan_charge_flush(sc);
}

/* ...and released now. */
static void note_release(struct vml_khugepaged *k, const struct collapse_control *cc)
{
	note_unlock(k, plat_now_ns() - cc->lock_taken_ns, plat_thread_cpu_ns() - cc->lock_taken_cpu);
}

/*
 * drop_read_lock - let a queued writer in, after a batch of ineligible VMAs
 * (FIX_DROP, seed 003 patch 5), and take the lock again.
 * Context: mmap_lock(R) of @mm held on entry and on return, not in between:
 * the caller's VMA iterator must look up again.
 */
static void drop_read_lock(struct vml_khugepaged *k, struct mm *mm, struct collapse_control *cc,
			   struct scan_charge *sc)
{
	uint64_t t0;

	scan_charge_flush(sc);
	note_release(k, cc);
	mmap_read_unlock(mm);
	/*
	 * The patch's cond_resched() here switches only if the scheduler
	 * already wants to (need_resched); a user-space thread is preempted
	 * whenever it does, so it has no equivalent to call - sched_yield()
	 * would give the CPU away every time on a busy host.
	 */
	t0 = plat_now_ns();
	if (mmap_retake_nosteal(mm))
		mmap_read_lock_nosteal(mm);
	else
		mmap_read_lock(mm);
	note_lock(cc);
	t0 = cc->lock_taken_ns - t0;
	fetch_add_relaxed(&k->st.retake_ns_total, t0);
	stat_record_max(&k->st.retake_ns_max, t0);
	stat_inc(&k->st.lock_drops);
}

/*
 * advance_cursor - after a scan of @slot's mm: move on to the next mm when
 * the mm exited (@exiting: the slot is freed) or no VMA is left to look at
 * (@walked: the walk finished, or the trylock failed). MAINLINE thereby
 * forgets where a contended mm's scan was; FIX_RESUME keeps it in the slot.
 * Context: k->lock not held; taken and released.
 */
static void advance_cursor(struct vml_khugepaged *k, struct mm_slot *slot, bool exiting,
			   bool walked)
{
	spin_lock(&k->lock);
	if (exiting || walked) {
		k->cursor = slot->node.next != &k->mm_head ?
			    list_entry(slot->node.next, struct mm_slot, node) : NULL;
		k->address = 0;
		if (!k->cursor)
			stat_inc(&k->st.full_scans);
		if (exiting) {
			list_del_init(&slot->node);
			spin_unlock(&k->lock);
			mmdrop(slot->mm);
			vml_free(slot);
			return;
		}
	}
	spin_unlock(&k->lock);
}

/*
 * collapse_scan_mm_slot - scan the cursor's mm for up to @budget units.
 * Context: k->lock held on entry, released on return.
 * Return: the progress made.
 */
static unsigned int scan_mm_slot(struct vml_khugepaged *k, unsigned int budget)
{
	struct collapse_control cc = {
		.max_ptes_none = k->cfg.max_ptes_none,
		.max_ptes_swap = k->cfg.max_ptes_swap,
		.max_ptes_shared = k->cfg.max_ptes_shared,
		.note_unlock = note_unlock,
		.arg = k,
	};
	bool resume = k->cfg.fixes & VML_KHUGEPAGED_FIX_RESUME;
	bool skip = k->cfg.fixes & VML_KHUGEPAGED_FIX_SKIP;
	bool drop = k->cfg.fixes & VML_KHUGEPAGED_FIX_DROP;
	struct scan_charge sc = { .vma_ns = k->sys->cfg.costs.scan_vma_ns };
	unsigned int progress = 0, skipped = 0;
	struct vma_iterator vmi;
	struct mm_slot *slot;
	struct vma *vma = NULL;
	unsigned long *addr;
	bool exiting = false;
	struct mm *mm;

	spin_assert_held(&k->lock);
	if (!k->cursor) {
		k->cursor = list_first_entry(&k->mm_head, struct mm_slot, node);
		k->address = 0;
	}
	slot = k->cursor;
	spin_unlock(&k->lock);
	mm = slot->mm;
	/* MAINLINE resumes from the one global address, FIX_RESUME from the mm's own. */
	addr = resume ? &slot->address : &k->address;

	if (!mmget_not_zero(mm)) {
		exiting = true;
		goto advance;
	}
	if (!mmap_read_trylock(mm)) {
		stat_inc(&k->st.trylock_failures);
		mmput(mm);
		/* MAINLINE: the mm is left, and where its scan was is forgotten. */
		goto advance;
	}
	note_lock(&cc);
	progress++;

	vma_iter_init(&vmi, mm, *addr);
	for_each_vma(vmi, vma) {
		unsigned long hstart, hend;

		scan_charge_vma(&sc);
		if (!collapse_vma_eligible(vma)) {
			stat_inc(&k->st.vmas_skipped);
			progress++;
			/* Skip to the next candidate (seed 003 patch 2)... */
			if (skip)
				*addr = (vma->vm_end + PMD_SIZE - 1) & PMD_MASK;
			/* ...and after a batch of them let a queued writer in (patch 5). */
			if (drop && ++skipped >= k->cfg.max_skip_batch) {
				/* read before the lock goes: @vma may go with it */
				unsigned long from = skip ? *addr : vma->vm_end;

				drop_read_lock(k, mm, &cc, &sc);
				vma_iter_set(&vmi, from);	/* the next candidate, in the new hold */
				skipped = 0;
			}
			continue;
		}
		hstart = (vma->vm_start + PMD_SIZE - 1) & PMD_MASK;
		hend = vma->vm_end & PMD_MASK;
		if (*addr > hend) {
			progress++;
			continue;
		}
		if (*addr < hstart)
			*addr = hstart;
		scan_charge_flush(&sc);
		while (*addr < hend) {
			bool dropped = false;

			if (collapse_scan_pmd(mm, vma, *addr, &cc, &dropped) == SCAN_SUCCEED)
				stat_inc(&k->st.pages_collapsed);
			*addr += PMD_SIZE;
			progress += HPAGE_PMD_NR;
			if (dropped)
				goto out_unlocked;	/* the lock went; the cursor stays */
			if (progress >= budget)
				goto out_locked;
		}
	}
	/* Every VMA has been examined. */
	if (resume)
		*addr = 0;
out_locked:
	scan_charge_flush(&sc);
	note_release(k, &cc);
	mmap_read_unlock(mm);
out_unlocked:
	mmput(mm);

advance:
	advance_cursor(k, slot, exiting, !vma);
	return progress;
}

int vml_khugepaged_scan(struct vml_khugepaged *k)
{
	unsigned int progress = 0, pages;
	int passes = 0;

	if (!k)
		return -EINVAL;
	pages = k->cfg.pages_to_scan;
	stat_inc(&k->st.wakeups);
	/* Ends: each round adds progress, or ends the wakeup after two passes over the list. */
	while (progress < pages) {
		spin_lock(&k->lock);
		if (!k->cursor)
			passes++;
		if (!list_empty(&k->mm_head) && passes < 2) {
			progress += scan_mm_slot(k, pages - progress);	/* unlocks */
		} else {
			spin_unlock(&k->lock);
			break;
		}
	}
	return 0;
}

static void *khugepaged_thread(void *arg)
{
	struct vml_khugepaged *k = arg;

	/* acquire: pairs with the store_release in vml_khugepaged_stop() */
	while (!load_acquire(&k->stop)) {
		vml_khugepaged_scan(k);
		futex_wait(&k->stop, 0, (uint64_t)k->cfg.scan_sleep_ms * NSEC_PER_MSEC);
	}
	return NULL;
}

int vml_khugepaged_start(struct vml_khugepaged *k)
{
	if (!k || k->running)
		return -EINVAL;
	/* release: pairs with the thread's load_acquire (pthread_create orders it as well) */
	store_release(&k->stop, 0);
	/* nice 19, as the kernel's */
	if (plat_thread_create(&k->thread, &(struct plat_thread_opts){ .cpu = -1, .nice = 19,
				.name = "khugepaged" }, khugepaged_thread, k))
		return -EAGAIN;
	k->running = true;
	return 0;
}

void vml_khugepaged_stop(struct vml_khugepaged *k)
{
	if (!k || !k->running)
		return;
	/* release: pairs with the load_acquire in khugepaged_thread() */
	store_release(&k->stop, 1);
	futex_wake(&k->stop, 1);
	plat_thread_join(&k->thread);
	k->running = false;
}

void vml_khugepaged_destroy(struct vml_khugepaged *k)
{
	struct mm_slot *slot, *n;

	if (!k)
		return;
	vml_khugepaged_stop(k);
	list_for_each_entry_safe(slot, n, &k->mm_head, node) {
		list_del_init(&slot->node);
		mmdrop(slot->mm);
		vml_free(slot);
	}
	vml_free(k);
}

int vml_khugepaged_stats(struct vml_khugepaged *k, struct vml_khugepaged_stats *out)
{
	if (!k || !out)
		return -EINVAL;
	*out = (struct vml_khugepaged_stats){
		.pages_collapsed = load_relaxed(&k->st.pages_collapsed),
		.full_scans = load_relaxed(&k->st.full_scans),
		.wakeups = load_relaxed(&k->st.wakeups),
		.trylock_failures = load_relaxed(&k->st.trylock_failures),
		.lock_drops = load_relaxed(&k->st.lock_drops),
		.vmas_skipped = load_relaxed(&k->st.vmas_skipped),
		.max_hold_ns = load_relaxed(&k->st.max_hold_ns),
		.total_hold_ns = load_relaxed(&k->st.total_hold_ns),
		.holds = load_relaxed(&k->st.holds),
		.max_hold_cpu_ns = load_relaxed(&k->st.max_hold_cpu_ns),
		.retake_ns_total = load_relaxed(&k->st.retake_ns_total),
		.retake_ns_max = load_relaxed(&k->st.retake_ns_max),
	};
	return 0;
}
