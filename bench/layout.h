/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layout.h - `--layout FILE.ops` (layout.c): an op script that rebuilds some
 * process's address space (a twin), laid out in the mapper's address space
 * on every target before the measurement, with the mapper's region placed
 * in a free gap beside it.
 */
#ifndef VML_BENCH_LAYOUT_H
#define VML_BENCH_LAYOUT_H

#include <stdint.h>

#include "internal.h"

struct json_t;
struct vml_sys;
struct vml_mm;

/*
 * A layout, checked: parsed, applied once to a model mm of its own (every op
 * ended as its expect= says), its VMAs counted there and the mapper's region
 * placed. Read-only afterwards, shared by every sample and thread.
 */
struct bench_layout {
	const char *path;		/* as given (the option's argument) */
	struct script *script;
	unsigned long vmas;		/* VMAs it leaves in a fresh mm */
	unsigned long pages;		/* resident pages it leaves (smaps_rollup's Rss) */
	unsigned long lo, hi;		/* its lowest start and highest end */
	unsigned long region;		/* the mapper's region: free, 2 MiB aligned, beside it */
	unsigned long region_len;	/* ...of this many bytes */
	struct target_env *env;		/* the directories the model's files are named in,
					 * for every model sample (a live child makes its
					 * own, and writes its files afresh) */
};

/* The gap kept free on either side of the region, so that nothing merges with it. */
#define BENCH_LAYOUT_GUARD (2UL << 20)

/*
 * bench_layout_load - parse @path, apply it to a model mm to check it and
 * measure it, and place a region of @region_len bytes beside it.
 * With @live (a live child will replay it) every VMA must lie in the
 * scripts' range (script.h), away from the child's own mappings.
 * Prints one line on failure: `FILE:LINE: OP: reason` for a bad line or an
 * op that ended otherwise than expected, or why no gap is free.
 * Return: 0 and *@out; EXIT_USAGE (2) for a bad layout, EXIT_FAILURE
 *         when the model itself failed.
 */
int bench_layout_load(const char *cmd, const char *path, unsigned long region_len, bool live,
		      struct bench_layout **out);
void bench_layout_free(struct bench_layout *l);

/*
 * bench_layout_apply - carry out the layout's ops on @t (a fresh live child,
 * or a model target over the sample's mm: target_model_adopt), then count
 * the VMAs within [lo, hi) there into *@vmas: what the readers will find.
 * Return: 0, or -errno (printed, naming the line) when an op ended otherwise
 *         than on the model at load time or the target failed.
 */
int bench_layout_apply(const struct bench_layout *l, struct target *t, unsigned long *vmas);
/* The same on @mm of @sys (a model sample's). */
int bench_layout_apply_mm(const struct bench_layout *l, struct vml_sys *sys, struct vml_mm *mm,
			  unsigned long *vmas);

/* meta's "layout": path, vmas, pages, lo, hi, region, region_len; JSON null for NULL. */
struct json_t *bench_layout_json(const struct bench_layout *l);
/* One "# layout ..." line for the tables; nothing for NULL. */
void bench_layout_print(FILE *f, const struct bench_layout *l);

#endif /* VML_BENCH_LAYOUT_H */
