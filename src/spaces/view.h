/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * view.h - post-processing of /proc view text so that two address spaces
 * (the model and a live child) can be compared: cut a view to an address
 * range, normalise what legitimately differs (device and inode numbers,
 * temporary directory names), and print a unified diff.
 *
 * All functions return a new NUL-terminated string (free with vml_free), or
 * NULL when out of memory. Input text is the view as read; lines end in '\n'.
 */
#ifndef VML_SPACES_VIEW_H
#define VML_SPACES_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "vmalock/proc.h"

/* The width maps pads its prefix to before the name, on 64-bit (docs/kernel.md §3). */
#define MAPS_NAME_PAD 72

/* The fields of a maps line (also an smaps record's header line). */
struct maps_line {
	unsigned long start, end;
	char perms[5];
	unsigned long offset;
	unsigned int dev_major, dev_minor;
	unsigned long inode;
	size_t prefix_len;		/* up to and including the space after the inode */
	size_t name_off, name_len;	/* the name, if any (name_len 0: none) */
};

/* Parse one line (without its '\n'). Return: true if it is a maps line. */
bool maps_line_parse(const char *line, size_t len, struct maps_line *out);

/*
 * Append a maps line for the given fields to nothing: formats into @buf the
 * way the kernel does (hex >= 8 digits, pad to column 72, one space, name).
 * Return: the length (snprintf-style), without a newline.
 */
int maps_line_format(char *buf, size_t len, unsigned long start, unsigned long end,
		     const char *perms, unsigned long offset, unsigned int major,
		     unsigned int minor, unsigned long inode, const char *name);

/*
 * view_cut - keep the lines (maps, query) or records (smaps: a header line and
 * its fields; numa_maps: one line each) of VMAs that overlap [@lo, @hi).
 * smaps_rollup covers the whole address space and is returned unchanged.
 */
char *view_cut(enum vml_view view, const char *text, unsigned long lo, unsigned long hi);

/*
 * view_normalise - set device to 00:00 and inode to 0 on file-backed header
 * lines, re-padding so the name still starts where the kernel would put it,
 * and replace each @subst[2i] by @subst[2i+1] (temporary directory names).
 */
char *view_normalise(const char *text, const char *const *subst, size_t nr_pairs);

/*
 * view_diff - a unified diff (3 lines of context, ---/+++/@@ headers) of
 * @a and @b, or an empty string when they are the same. The line match is a
 * longest common subsequence; inputs too large for the quadratic table
 * (after trimming the common head and tail) get one hunk replacing the
 * middle.
 */
char *view_diff(const char *a, const char *b, const char *label_a, const char *label_b);

/* Is [@addr, @addr+@len) free of every VMA listed in the maps text? */
bool maps_range_unmapped(const char *maps, unsigned long addr, unsigned long len);

#endif /* VML_SPACES_VIEW_H */
