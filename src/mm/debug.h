/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * debug.h - the test and calibration hooks that take a VMA or a file; the
 * others are util/debug.h's, whose rules these follow: one load and a
 * predicted-not-taken branch where consulted when off (the default),
 * never set outside tests and the benchmarks.
 *
 *   vml_proc_walk_hook  called after each VMA's page walk by smaps,
 *                       numa_maps and smaps_rollup, still inside the walk
 *                       (policy VMA: RCU dropped, only that VMA
 *                       read-locked; policy MMAP or after a fallback:
 *                       mmap_lock(R) held). tests/unit/test-smaps-lock.c
 *                       parks a reader there to show what a writer can do
 *                       meanwhile.
 *   vml_i_mmap_time_hook  called after each i_mmap_rwsem write section
 *                       with how long its holder waited for the lock and
 *                       held it (src/mm/file.h), outside the lock: `vmalock
 *                       bench exec-churn` measures the hold time seed 001
 *                       is about. Set before the threads it times start.
 */
#ifndef VML_MM_DEBUG_H
#define VML_MM_DEBUG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/compiler.h"

struct vma;
typedef void (*vml_proc_walk_fn)(struct vma *vma);
extern _Atomic(vml_proc_walk_fn) vml_proc_walk_hook;

/* Call the walk hook for @vma, if one is set. */
static inline void vml_proc_walk_hook_call(struct vma *vma)
{
	/* acquire: pairs with the test's (seq_cst) store of the hook: it sees what the test set up */
	vml_proc_walk_fn hook = atomic_load_explicit(&vml_proc_walk_hook, memory_order_acquire);

	if (unlikely(hook))
		hook(vma);
}

struct vml_file;
typedef void (*vml_lock_time_fn)(const struct vml_file *file, uint64_t wait_ns, uint64_t hold_ns);
extern _Atomic(vml_lock_time_fn) vml_i_mmap_time_hook;

/* Is i_mmap_rwsem's write side being timed? Relaxed: set before the timed threads start. */
static inline bool vml_i_mmap_timed(void)
{
	return unlikely(atomic_load_explicit(&vml_i_mmap_time_hook, memory_order_relaxed) != NULL);
}

/* Report one timed write section of @file's i_mmap_rwsem (out of line and cold). */
void vml_i_mmap_time_report(const struct vml_file *file, uint64_t wait_ns, uint64_t hold_ns);

#endif /* VML_MM_DEBUG_H */
