// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * debug.c - the VMA and file test hooks' state (see debug.h).
 */
#include "mm/debug.h"

_Atomic(vml_proc_walk_fn) vml_proc_walk_hook;
_Atomic(vml_lock_time_fn) vml_i_mmap_time_hook;

__attribute__((noinline, cold))
void vml_i_mmap_time_report(const struct vml_file *file, uint64_t wait_ns, uint64_t hold_ns)
{
	vml_lock_time_fn hook = atomic_load_explicit(&vml_i_mmap_time_hook, memory_order_relaxed);

	if (hook)
		hook(file, wait_ns, hold_ns);
}
