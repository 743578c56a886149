/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * debug.h - the library's test and calibration hooks, but for the two that
 * take a VMA or a file, which mm/debug.h holds (vml_proc_walk_hook,
 * vml_i_mmap_time_hook): util knows no mm type. Each costs one load and a
 * predicted-not-taken branch where it is consulted when it is off (the
 * default), and does nothing else; none is ever set outside tests,
 * `vmalock race --broken ...` and the benchmarks' calibration.
 *
 *   vml_debug_broken    switches that deliberately break a /proc reader, so
 *                       the race tests can prove they catch what they claim
 *                       to catch (src/race, tests/unit/test-smaps-lock.c).
 *                       Consulted where lock_next_vma() cannot lock a VMA
 *                       and where a page-walking view leaves and re-enters
 *                       RCU (src/mm/vma_lock.c, src/proc/maps.c).
 *   vml_proc_next_hook  called by a per-VMA-lock /proc reader between
 *                       dropping one VMA's read lock and looking the next
 *                       one up (get_next_vma, src/proc/maps.c), RCU held,
 *                       with the address it looks up from: where an
 *                       interrupt holds the kernel's reader up in
 *                       docs/findings/maps-fake-gaps.md case 1. `vmalock
 *                       race --noise` holds the model's reader up there;
 *                       tests/unit/test-maps-transients.c parks it there.
 *                       The hook must not wait for a grace period.
 *   vml_transient_hook  called by a writer right after it published one of
 *                       the intermediate states vml_sys_config's
 *                       kernel_transients adds (mremap(MREMAP_FIXED)'s
 *                       destination hole, src/mm/mremap.c), mmap_lock(W)
 *                       still held, with the range it left empty.
 *                       tests/unit/test-maps-transients.c parks the writer
 *                       there to read maps in that state.
 *   per-record cost     not global: a reader's seq_file spends record_ns
 *                       of CPU time after each record it shows
 *                       (vml_reader_set_record_cost, the benchmarks'
 *                       calibration against the live kernel), through
 *                       vml_spin_ns() below (src/proc/seq.c).
 */
#ifndef VML_UTIL_DEBUG_H
#define VML_UTIL_DEBUG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/compiler.h"

/* lock_next_vma: when a VMA cannot be read-locked, skip it instead of falling back. */
#define VML_BROKEN_SKIP_FALLBACK 0x1
/* page-walking views: do not reset the VMA iterator after re-taking RCU. */
#define VML_BROKEN_SKIP_RESET 0x2
/*
 * the mmap_lock's hand-off: the first waiter, a writer whose HANDOFF is set,
 * takes the lock while readers still hold it (for the simulator's exploration).
 */
#define VML_BROKEN_HANDOFF 0x4
/*
 * smaps, smaps_rollup: a walk that met a PTE table with nothing mapped in its
 * range walks the VMA's range once more from the start (what a stale
 * ACTION_AGAIN escaping walk_pmd_range does: pagewalk_race_test).
 */
#define VML_BROKEN_WALK_AGAIN 0x8
/* smaps_rollup: after a contended drop, gather the VMA that straddles the old end whole. */
#define VML_BROKEN_ROLLUP_RESUME 0x10
/* seq_file views: the next read() goes on after the record the last one dropped. */
#define VML_BROKEN_SEQ_RESUME 0x20
/*
 * incremental smaps_rollup: no table is volatile - a share that depends on
 * other processes (a page another maps, a swap slot another uses) is not
 * counted again at a read, so it stays as its own table's last unlock left it.
 */
#define VML_BROKEN_ROLLUP_SHARED 0x40

extern _Atomic unsigned int vml_debug_broken;

/* Is the breakage @what switched on? Relaxed: a test sets it before the reads it breaks. */
static inline unsigned int vml_broken(unsigned int what)
{
	return unlikely(atomic_load_explicit(&vml_debug_broken, memory_order_relaxed) & what);
}

typedef void (*vml_proc_next_fn)(unsigned long from);
extern _Atomic(vml_proc_next_fn) vml_proc_next_hook;

/* Call the next-VMA hook, if one is set. */
static inline void vml_proc_next_hook_call(unsigned long from)
{
	/* acquire: pairs with the test's (seq_cst) store of the hook: it sees what the test set up */
	vml_proc_next_fn hook = atomic_load_explicit(&vml_proc_next_hook, memory_order_acquire);

	if (unlikely(hook))
		hook(from);
}

typedef void (*vml_transient_fn)(unsigned long start, unsigned long end);
extern _Atomic(vml_transient_fn) vml_transient_hook;

/* Call the transient-state hook, if one is set. */
static inline void vml_transient_hook_call(unsigned long start, unsigned long end)
{
	/* acquire: pairs with the test's (seq_cst) store of the hook: it sees what the test set up */
	vml_transient_fn hook = atomic_load_explicit(&vml_transient_hook, memory_order_acquire);

	if (unlikely(hook))
		hook(start, end);
}

/* Spend @ns nanoseconds of CPU time (a busy wait; out of line and cold). */
void vml_spin_ns(uint64_t ns);

#endif /* VML_UTIL_DEBUG_H */
