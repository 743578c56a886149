/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compiler.h - small helpers every layer uses: branch hints, container_of,
 * and the debug-assertion levels chosen by -Ddebug_checks.
 *
 *   VML_DEBUG_CHECKS 0: no assertions
 *   VML_DEBUG_CHECKS 1: cheap assertions and lock assertions (default)
 *   VML_DEBUG_CHECKS 2: also full validators after every change (slow)
 */
#ifndef VML_UTIL_COMPILER_H
#define VML_UTIL_COMPILER_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef VML_DEBUG_CHECKS
#define VML_DEBUG_CHECKS 1
#endif

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#define VML_MIN(a, b) ((a) < (b) ? (a) : (b))
#define VML_MAX(a, b) ((a) > (b) ? (a) : (b))

__attribute__((noreturn, cold))
void vml_assert_fail(const char *expr, const char *file, int line, const char *func);

/* Always-on check of an internal invariant: a broken one is a bug, not an error. */
#define VML_BUG_ON(cond)                                                      \
	do {                                                                  \
		if (unlikely(cond))                                           \
			vml_assert_fail(#cond, __FILE__, __LINE__, __func__); \
	} while (0)

#if VML_DEBUG_CHECKS >= 1
#define vml_assert(cond) VML_BUG_ON(!(cond))
#else
#define vml_assert(cond) ((void)0)
#endif

#if VML_DEBUG_CHECKS >= 2
#define VML_VALIDATE 1
#else
#define VML_VALIDATE 0
#endif

#endif /* VML_UTIL_COMPILER_H */
