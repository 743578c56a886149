/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mm_helpers.h - small helpers the mm and proc tests share. */
#ifndef VML_TESTS_MM_HELPERS_H
#define VML_TESTS_MM_HELPERS_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vmalock/vmalock.h"

#define PG 4096UL
#define BASE 0x100000000000UL
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A whole view, read with reads of @chunk bytes. Caller frees. */
__attribute__((unused))
static char *read_view(struct vml_mm *mm, enum vml_view view, enum vml_lock_policy lock,
		       size_t chunk)
{
	struct vml_reader *r;
	size_t cap = 1 << 16, len = 0;
	char *out = malloc(cap);
	ssize_t n;

	if (vml_reader_open(mm, view, lock, &r)) {
		free(out);
		return NULL;
	}
	for (;;) {
		if (len + chunk + 1 > cap) {
			while (len + chunk + 1 > cap)
				cap *= 2;
			out = realloc(out, cap);
		}
		n = vml_reader_read(r, out + len, chunk);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	out[len] = 0;
	vml_reader_close(r);
	return out;
}

__attribute__((unused))
static char *maps_of(struct vml_mm *mm)
{
	return read_view(mm, VML_VIEW_MAPS, VML_LOCK_VMA, 4096);
}

/* mmap anonymous private at a fixed address; returns the errno-style result. */
/* A new address space of @sys; a test cannot go on without one. */
__attribute__((unused))
static struct vml_mm *mm_of_sys(struct vml_sys *sys)
{
	struct vml_mm *mm;

	if (vml_mm_create(sys, &mm))
		abort();
	return mm;
}

__attribute__((unused))
static int map_anon(struct vml_mm *mm, unsigned long addr, unsigned long len, int prot)
{
	return vml_mmap(mm, addr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL);
}

__attribute__((unused))
static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

#endif /* VML_TESTS_MM_HELPERS_H */
