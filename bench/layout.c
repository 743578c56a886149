// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * layout.c - `--layout FILE.ops`: the mapper works beside another
 * process's address space.
 *
 * Paul's mapper maps and unmaps pages of one region in an otherwise nearly
 * empty process; a real program's smaps is thousands of VMAs and gigabytes
 * of resident memory, and what a reader's pass costs - so how long it holds
 * mmap_lock - is that program's. A layout is an op script that rebuilds such
 * an address space (a twin, or any script of tests/scripts); it is applied
 * to every sample's address space before its readers start, on the model
 * (the row's mm, whatever its lock policy or simulated machine) and in the
 * live child alike, and the readers read all of it.
 *
 * The script is checked once, at load time, on a model mm of its own: every
 * op must end as its expect= says (0 without one), else the run is refused
 * with the line, before anything is measured - a layout is never half
 * applied in a measurement. That run also counts the VMAs and resident
 * pages the layout leaves, and places the mapper's region: 2 MiB aligned,
 * with BENCH_LAYOUT_GUARD free on either side (so that it merges with
 * nothing of the layout), in the scripts' range (script.h: free in a fresh
 * live child, away from its own binary and libraries, where a layout that
 * runs live must lie too), just above the
 * layout if there is room, else in the lowest gap that has it. The live
 * child then maps it there with MAP_FIXED_NOREPLACE, the model likewise.
 *
 * One process: `fork` and `select` are refused (the readers read the
 * mapper's own views), and so are the directives that change the machine
 * (`swap`, `knobs`) or skip a script (`require`).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "layout.h"
#include "spaces/view.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/options.h"

#define LAYOUT_ALIGN (2UL << 20)

static unsigned long align_up(unsigned long x, unsigned long a)
{
	return (x + a - 1) & ~(a - 1);
}

/* The VMAs of a maps text, in address order: ranges[2 * i], ranges[2 * i + 1]. */
static int parse_ranges(const char *maps, unsigned long **out, size_t *nr)
{
	unsigned long *r = NULL;
	size_t n = 0, cap = 0;

	for (const char *p = maps; *p;) {
		size_t len = strcspn(p, "\n");
		struct maps_line ml;

		if (maps_line_parse(p, len, &ml)) {
			unsigned long *g = vml_grow_array(r, &cap, 2 * (n + 1), sizeof(*r), 64);

			if (!g) {
				vml_free(r);
				return -ENOMEM;
			}
			r = g;
			r[2 * n] = ml.start;
			r[2 * n + 1] = ml.end;
			n++;
		}
		p += len + (p[len] == '\n');
	}
	*out = r;
	*nr = n;
	return 0;
}

/* Is [@a - guard, @a + @len + guard) clear of every range and inside the scripts' range? */
static bool region_fits(const unsigned long *r, size_t nr, unsigned long a, unsigned long len)
{
	unsigned long lo = a - BENCH_LAYOUT_GUARD, hi = a + len + BENCH_LAYOUT_GUARD;

	if (a < SCRIPT_RANGE_LO + BENCH_LAYOUT_GUARD || hi > SCRIPT_RANGE_HI)
		return false;
	for (size_t i = 0; i < nr; i++)
		if (r[2 * i] < hi && r[2 * i + 1] > lo)
			return false;
	return true;
}

/*
 * The region's place: just above the layout's highest VMA below the end of
 * the scripts' range, else the lowest gap that has room. Return: 0 or -ENOSPC.
 */
static int place_region(struct bench_layout *l, const unsigned long *r, size_t nr)
{
	unsigned long top = SCRIPT_RANGE_LO, a;

	for (size_t i = 0; i < nr; i++)
		if (r[2 * i + 1] <= SCRIPT_RANGE_HI && r[2 * i + 1] > top)
			top = r[2 * i + 1];
	a = align_up(top + BENCH_LAYOUT_GUARD, LAYOUT_ALIGN);
	if (region_fits(r, nr, a, l->region_len)) {
		l->region = a;
		return 0;
	}
	/* each gap's lowest aligned start: below the range's start, then above each VMA */
	for (size_t i = 0; i <= nr; i++) {
		unsigned long from = i ? r[2 * (i - 1) + 1] : SCRIPT_RANGE_LO;

		a = align_up(VML_MAX(from, SCRIPT_RANGE_LO) + BENCH_LAYOUT_GUARD, LAYOUT_ALIGN);
		if (region_fits(r, nr, a, l->region_len)) {
			l->region = a;
			return 0;
		}
	}
	return -ENOSPC;
}

/* "Rss: N kB" of an smaps_rollup text, in pages. */
static unsigned long rollup_pages(const char *rollup)
{
	const char *p = strstr(rollup, "\nRss:");
	unsigned long kb = 0;

	if (p)
		sscanf(p + 1, "Rss: %lu kB", &kb);
	return kb / 4;
}

/* What makes @s no layout: one line, or NULL. */
static const char *not_a_layout(const struct script *s, unsigned int *line)
{
	*line = 0;
	if (s->swap_bytes || s->nr_knobs || s->requires)
		return "a layout takes no swap, knobs or require directive (it changes nothing "
		       "of the machine and runs everywhere)";
	for (size_t i = 0; i < s->nr_ops; i++) {
		if (s->ops[i].kind == OP_FORK || s->ops[i].kind == OP_SELECT) {
			*line = s->ops[i].line;
			return "a layout is one process (the mapper's): no fork or select";
		}
	}
	if (!s->nr_ops)
		return "no ops: nothing to lay out";
	return NULL;
}

/*
 * Every op of @l on @t, each ending as at load time (its expect=, else 0).
 * Return: 0; -EINVAL after printing the op that ended otherwise; -errno of
 *         the target (printed).
 */
static int apply_ops(const struct bench_layout *l, struct target *t, const char *who)
{
	const struct script *s = l->script;

	for (size_t i = 0; i < s->nr_ops; i++) {
		const struct op *op = &s->ops[i];
		int want = op->has_expect ? op->expect : 0;
		struct op_result res;
		char got[32], exp[32];
		int ret = target_apply(t, op, &res);

		if (ret) {
			fprintf(stderr, "%s:%u: %s: %s: the target failed: %s\n", s->path, op->line,
				op_kind_name(op->kind), who, strerror(-ret));
			return ret;
		}
		if (res.ret != want) {
			fprintf(stderr, "%s:%u: %s: %s: ended with %s, not %s\n", s->path, op->line,
				op_kind_name(op->kind), who, errno_name(res.ret, got, sizeof(got)),
				errno_name(want, exp, sizeof(exp)));
			return -EINVAL;
		}
	}
	return 0;
}

/* The VMAs of @t's maps within [lo, hi). */
static int count_vmas(const struct bench_layout *l, struct target *t, unsigned long *vmas)
{
	unsigned long *r;
	size_t n, nr;
	char *maps;
	int ret = target_read_view(t, VML_VIEW_MAPS, VML_LOCK_MMAP, &maps, &n);

	if (ret)
		return ret;
	ret = parse_ranges(maps, &r, &nr);
	vml_free(maps);
	if (ret)
		return ret;
	*vmas = 0;
	for (size_t i = 0; i < nr; i++)
		*vmas += r[2 * i] >= l->lo && r[2 * i + 1] <= l->hi;
	vml_free(r);
	return 0;
}

/* The dry run: apply, count, (@live) keep clear of the child's own, place. Return: 0, EXIT_USAGE or EXIT_FAILURE (printed). */
static int measure(const char *cmd, struct bench_layout *l, bool live)
{
	unsigned long *r = NULL;
	char *maps = NULL, *rollup = NULL;
	struct target *t;
	size_t n, nr = 0;
	int ret = target_env_create(&l->env);

	if (!ret)
		ret = target_create(TARGET_MODEL, l->env, &t);
	if (ret) {
		fprintf(stderr, "vmalock %s: --layout %s: a model to check it on: %s\n", cmd, l->path,
			strerror(-ret));
		return EXIT_FAILURE;
	}
	ret = apply_ops(l, t, "on the model");
	if (ret) {
		target_destroy(t);
		return ret == -EINVAL ? EXIT_USAGE : EXIT_FAILURE;
	}
	ret = target_read_view(t, VML_VIEW_MAPS, VML_LOCK_MMAP, &maps, &n);
	if (!ret)
		ret = target_read_view(t, VML_VIEW_SMAPS_ROLLUP, VML_LOCK_MMAP, &rollup, &n);
	if (!ret)
		ret = parse_ranges(maps, &r, &nr);
	target_destroy(t);
	if (ret) {
		fprintf(stderr, "vmalock %s: --layout %s: reading the model's views: %s\n", cmd,
			l->path, strerror(-ret));
		ret = EXIT_FAILURE;
		goto out;
	}
	if (!nr) {
		fprintf(stderr, "vmalock %s: --layout %s: leaves no mapping\n", cmd, l->path);
		ret = EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; live && i < nr; i++) {
		if (r[2 * i] >= SCRIPT_RANGE_LO && r[2 * i + 1] <= SCRIPT_RANGE_HI)
			continue;
		fprintf(stderr, "vmalock %s: --layout %s: a mapping at 0x%lx-0x%lx lies outside "
			"0x%lx-0x%lx, where the live child's own binary, libraries and stack may "
			"be (relocate the layout there, or --target model)\n", cmd, l->path, r[2 * i],
			r[2 * i + 1], SCRIPT_RANGE_LO, SCRIPT_RANGE_HI);
		ret = EXIT_USAGE;
		goto out;
	}
	l->vmas = nr;
	l->pages = rollup_pages(rollup);
	l->lo = r[0];
	l->hi = r[2 * (nr - 1) + 1];
	if (place_region(l, r, nr)) {
		fprintf(stderr, "vmalock %s: --layout %s: no free gap of %lu MiB (and %lu MiB either "
			"side) for the mapper in 0x%lx-0x%lx beside the layout\n", cmd, l->path,
			l->region_len >> 20, BENCH_LAYOUT_GUARD >> 20, SCRIPT_RANGE_LO,
			SCRIPT_RANGE_HI);
		ret = EXIT_USAGE;
	}
out:
	vml_free(r);
	vml_free(maps);
	vml_free(rollup);
	return ret;
}

int bench_layout_load(const char *cmd, const char *path, unsigned long region_len, bool live,
		      struct bench_layout **out)
{
	struct bench_layout *l = vml_zalloc(sizeof(*l));
	const char *why;
	unsigned int line;
	char err[512];
	int ret;

	if (!l) {
		fprintf(stderr, "vmalock %s: out of memory\n", cmd);
		return EXIT_FAILURE;
	}
	l->path = path;
	l->region_len = region_len;
	ret = script_parse_file(path, &l->script, err, sizeof(err));
	if (ret) {
		/* the parser's line names the file: "FILE:LINE: OP: reason" or "FILE: why" */
		fprintf(stderr, "vmalock %s: --layout %s\n", cmd, err);
		vml_free(l);
		return EXIT_USAGE;
	}
	why = not_a_layout(l->script, &line);
	if (why) {
		if (line)
			fprintf(stderr, "%s:%u: %s\n", path, line, why);
		else
			fprintf(stderr, "vmalock %s: --layout %s: %s\n", cmd, path, why);
		ret = EXIT_USAGE;
	} else {
		ret = measure(cmd, l, live);
	}
	if (ret) {
		bench_layout_free(l);
		return ret;
	}
	*out = l;
	return 0;
}

void bench_layout_free(struct bench_layout *l)
{
	if (!l)
		return;
	script_free(l->script);
	target_env_put(l->env);
	vml_free(l);
}

int bench_layout_apply(const struct bench_layout *l, struct target *t, unsigned long *vmas)
{
	char who[32];
	int ret;

	snprintf(who, sizeof(who), "on the %s target", target_kind_name(target_kind(t)));
	ret = apply_ops(l, t, who);
	if (!ret)
		ret = count_vmas(l, t, vmas);
	return ret;
}

int bench_layout_apply_mm(const struct bench_layout *l, struct vml_sys *sys, struct vml_mm *mm,
			  unsigned long *vmas)
{
	struct target *t;
	int ret = target_model_adopt(sys, mm, l->env, &t);

	if (ret)
		return ret;
	ret = bench_layout_apply(l, t, vmas);
	target_destroy(t);	/* the mm keeps what was mapped, and the files mapped */
	return ret;
}

json_t *bench_layout_json(const struct bench_layout *l)
{
	json_t *o;

	if (!l)
		return json_null();
	o = json_object();
	json_set_str(o, "path", l->path);
	json_set_u64(o, "vmas", l->vmas);
	json_set_u64(o, "pages", l->pages);
	json_set_u64(o, "lo", l->lo);
	json_set_u64(o, "hi", l->hi);
	json_set_u64(o, "region", l->region);
	json_set_u64(o, "region_len", l->region_len);
	return o;
}

void bench_layout_print(FILE *f, const struct bench_layout *l)
{
	if (!l)
		return;
	fprintf(f, "# layout %s: %lu VMAs in 0x%lx-0x%lx, %lu pages resident (%.1f MiB), laid "
		   "out on every target before the readers start; the mapper's region at 0x%lx\n",
		l->path, l->vmas, l->lo, l->hi, l->pages, (double)l->pages / 256.0, l->region);
}
