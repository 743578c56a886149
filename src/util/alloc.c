// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/compiler.h"

#if VML_FAULT_INJECTION
static atomic_ulong alloc_count;
static atomic_ulong fail_at;

/* Returns 1 when this allocation is the one chosen to fail. */
static int should_fail(void)
{
	unsigned long n = atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed) + 1;
	unsigned long target = atomic_load_explicit(&fail_at, memory_order_relaxed);

	return target != 0 && n == target;
}

void vml_fail_alloc_at(unsigned long n)
{
	atomic_store(&alloc_count, 0);
	atomic_store(&fail_at, n);
}

unsigned long vml_alloc_count(void)
{
	return atomic_load(&alloc_count);
}

int vml_fault_injection_enabled(void)
{
	return 1;
}
#else
static inline int should_fail(void)
{
	return 0;
}

void vml_fail_alloc_at(unsigned long n)
{
	(void)n;
}

unsigned long vml_alloc_count(void)
{
	return 0;
}

int vml_fault_injection_enabled(void)
{
	return 0;
}
#endif

void *vml_malloc(size_t size)
{
	if (should_fail())
		return NULL;
	return malloc(size);
}

void *vml_zalloc(size_t size)
{
	if (should_fail())
		return NULL;
	return calloc(1, size);
}

void *vml_realloc(void *p, size_t size)
{
	if (should_fail())
		return NULL;
	return realloc(p, size);
}

char *vml_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = vml_malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}

void vml_free(void *p)
{
	free(p);
}
