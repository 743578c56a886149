/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * alloc.h - the one allocator every layer uses, so that tests can make the
 * N-th allocation fail (built with -Dfault_injection=true) and check that the
 * failing operation returns -ENOMEM and leaves everything as it was.
 */
#ifndef VML_UTIL_ALLOC_H
#define VML_UTIL_ALLOC_H

#include <stddef.h>

void *vml_malloc(size_t size);
void *vml_zalloc(size_t size);
void *vml_realloc(void *p, size_t size);
char *vml_strdup(const char *s);
void vml_free(void *p);

/*
 * vml_grow_array - room for @need (>= 1) elements of @elem bytes in @arr,
 * which has room for *@cap: the capacity doubles, from @first, until it is
 * enough.
 * Return: the array, perhaps moved, and *@cap updated; or NULL when out of
 *         memory, with @arr and *@cap as they were.
 */
static inline void *vml_grow_array(void *arr, size_t *cap, size_t need, size_t elem,
				   size_t first)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return arr;
	ncap = *cap ? *cap * 2 : first;
	while (ncap < need)
		ncap *= 2;
	n = vml_realloc(arr, ncap * elem);
	if (n)
		*cap = ncap;
	return n;
}

/*
 * Fault injection (only with -Dfault_injection=true; otherwise no-ops):
 * after vml_fail_alloc_at(n), the n-th following allocation (1-based) fails,
 * and all after it succeed. n = 0 disarms. vml_alloc_count() counts
 * allocations since the last arming, so a test can sweep n over an operation.
 */
void vml_fail_alloc_at(unsigned long n);
unsigned long vml_alloc_count(void);
int vml_fault_injection_enabled(void);

#endif /* VML_UTIL_ALLOC_H */
