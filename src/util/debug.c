// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * debug.c - the test and calibration hooks' state (see debug.h; the VMA and
 * file hooks are mm/debug.c's).
 */
#include "util/clock.h"
#include "util/debug.h"

_Atomic unsigned int vml_debug_broken;
_Atomic(vml_proc_next_fn) vml_proc_next_hook;
_Atomic(vml_transient_fn) vml_transient_hook;

__attribute__((noinline, cold))
void vml_spin_ns(uint64_t ns)
{
	uint64_t until = vml_now_ns() + ns;

	/* Ends: the clock moves on. */
	while (vml_now_ns() < until)
		;
}
