/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * debug.h - switches that deliberately break a reader, so the race tests can
 * prove they catch what they claim to catch (`vmalock race --broken ...`).
 * Never set outside those tests.
 */
#ifndef VML_UTIL_DEBUG_H
#define VML_UTIL_DEBUG_H

#include <stdatomic.h>

/* lock_next_vma: when a VMA cannot be read-locked, skip it instead of falling back. */
#define VML_BROKEN_SKIP_FALLBACK 0x1
/* page-walking views: do not reset the VMA iterator after re-taking RCU. */
#define VML_BROKEN_SKIP_RESET 0x2

extern _Atomic unsigned int vml_debug_broken;

static inline unsigned int vml_broken(unsigned int what)
{
	return atomic_load_explicit(&vml_debug_broken, memory_order_relaxed) & what;
}

#endif /* VML_UTIL_DEBUG_H */
