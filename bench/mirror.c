// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mirror.c - the live mapper's own mappings, copied into a model mm.
 *
 * The live mapper is a process: besides the region it maps and unmaps it
 * has its binary, libc, ld.so, a heap, a stack and the vDSO, some two dozen
 * VMAs, and a reader of its smaps reads those too - a few short read()s a
 * pass between the long one of the region. Each short read() ends with an
 * up_read() that wakes a waiting mapper while the reader holds nothing
 * long: chances to get in that a model mm holding the region alone never
 * gives its mapper (docs/findings/2026-12-01-what-decides-the-regime.md,
 * "What the events say"). So the
 * model's mm gets the same mappings: the same addresses, lengths,
 * protections, file names and offsets, and as many resident pages.
 *
 * What is not copied: [vsyscall] (above the user address space) and the
 * special names ([heap], [stack], [vdso], [vvar]...), which the model maps
 * as anonymous memory of the same size (their records are a little
 * shorter).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "simcost.h"
#include "spaces/target.h"
#include "util/json.h"
#include "spaces/view.h"
#include "util/alloc.h"
#include "vmalock/mm.h"

#define MIRROR_MAX 256			/* more than any child of ours has */
#define MIRROR_PATH_MAX 256
#define MIRROR_TASK_SIZE (1UL << 47)	/* x86-64, 4-level page tables */

struct mirror_vma {
	unsigned long start, end, offset;
	int prot;
	bool shared;
	unsigned long rss_pages;
	char path[MIRROR_PATH_MAX];	/* "" for anonymous and special mappings */
};

struct bench_mirror {
	struct mirror_vma v[MIRROR_MAX];
	unsigned int nr;
};

/* One smaps header line ("start-end perms offset dev inode [path]", no newline). */
static int parse_header(const char *line, size_t len, struct mirror_vma *m)
{
	struct maps_line ml;

	if (!maps_line_parse(line, len, &ml) || ml.end <= ml.start)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->start = ml.start;
	m->end = ml.end;
	m->offset = ml.offset;
	m->prot = (ml.perms[0] == 'r' ? PROT_READ : 0) | (ml.perms[1] == 'w' ? PROT_WRITE : 0) |
		  (ml.perms[2] == 'x' ? PROT_EXEC : 0);
	m->shared = ml.perms[3] == 's';
	if (ml.name_len && line[ml.name_off] == '/')
		snprintf(m->path, sizeof(m->path), "%.*s", (int)ml.name_len, line + ml.name_off);
	return 0;
}

int bench_mirror_read(pid_t pid, struct bench_mirror **out)
{
	char name[64], line[512];
	struct bench_mirror *mi;
	struct mirror_vma cur;
	bool have = false;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/smaps", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return -errno;
	mi = vml_zalloc(sizeof(*mi));
	if (!mi) {
		fclose(f);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t len = strcspn(line, "\n");
		unsigned long kb;

		if (!parse_header(line, len, &cur)) {
			have = cur.end <= MIRROR_TASK_SIZE && mi->nr < MIRROR_MAX;
			if (have)
				mi->v[mi->nr++] = cur;
		} else if (have && sscanf(line, "Rss: %lu kB", &kb) == 1) {
			mi->v[mi->nr - 1].rss_pages = kb / 4;
		}
	}
	fclose(f);
	*out = mi;
	return 0;
}

void bench_mirror_free(struct bench_mirror *mi)
{
	vml_free(mi);
}

unsigned int bench_mirror_count(const struct bench_mirror *mi)
{
	return mi ? mi->nr : 0;
}

unsigned long bench_mirror_pages(const struct bench_mirror *mi)
{
	unsigned long pages = 0;

	for (unsigned int i = 0; mi && i < mi->nr; i++)
		pages += mi->v[i].rss_pages;
	return pages;
}

/* The file @path as one vml_file (a library's VMAs share it), sized for every mapping of it. */
static int mirror_file(const struct bench_mirror *mi, struct vml_sys *sys, const char *path,
		       struct vml_file **files, unsigned int idx)
{
	unsigned long size = 0;

	for (unsigned int j = 0; j < idx; j++)
		if (files[j] && !strcmp(mi->v[j].path, path)) {
			files[idx] = files[j];
			return 0;
		}
	for (unsigned int j = 0; j < mi->nr; j++)
		if (!strcmp(mi->v[j].path, path) &&
		    mi->v[j].offset + (mi->v[j].end - mi->v[j].start) > size)
			size = mi->v[j].offset + (mi->v[j].end - mi->v[j].start);
	return vml_file_create(sys, path, size, 0, &files[idx]);
}

int bench_mirror_apply(const struct bench_mirror *mi, struct vml_sys *sys, struct vml_mm *mm)
{
	struct vml_file **files;
	int ret = 0;

	if (!mi || !mi->nr)
		return 0;
	files = vml_zalloc(mi->nr * sizeof(*files));
	if (!files)
		return -ENOMEM;
	for (unsigned int i = 0; i < mi->nr && !ret; i++) {
		const struct mirror_vma *m = &mi->v[i];
		unsigned long len = m->end - m->start, touch = m->rss_pages * 4096UL;
		int flags = MAP_FIXED | (m->shared ? MAP_SHARED : MAP_PRIVATE);

		if (m->path[0]) {
			ret = mirror_file(mi, sys, m->path, files, i);
			if (!ret)
				ret = vml_mmap(mm, m->start, len, m->prot, flags, files[i], m->offset,
					       NULL);
		} else {
			ret = vml_mmap(mm, m->start, len, m->prot, flags | MAP_ANONYMOUS, NULL, 0,
				       NULL);
		}
		if (!ret && touch && m->prot)
			ret = vml_touch(mm, m->start, touch < len ? touch : len,
					(m->prot & PROT_WRITE) ? VML_TOUCH_WRITE : VML_TOUCH_READ);
	}
	/* The mappings hold their own references; drop ours, once per file. */
	for (unsigned int i = 0; i < mi->nr; i++) {
		bool first = files[i];

		for (unsigned int j = 0; j < i && first; j++)
			if (files[j] == files[i])
				first = false;
		if (first)
			vml_file_put(files[i]);
	}
	vml_free(files);
	return ret;
}

/* ---- saved with a simulated run, so that a rerun maps the same (simcost.h) ---- */

json_t *bench_mirror_json(const struct bench_mirror *mi)
{
	json_t *arr = json_array();

	for (unsigned int i = 0; mi && i < mi->nr; i++) {
		const struct mirror_vma *m = &mi->v[i];
		json_t *o = json_object();

		json_set_u64(o, "start", m->start);
		json_set_u64(o, "end", m->end);
		json_set_u64(o, "offset", m->offset);
		json_set_i64(o, "prot", m->prot);
		json_set_bool(o, "shared", m->shared);
		json_set_u64(o, "rss_pages", m->rss_pages);
		json_set_str(o, "path", m->path);
		json_push_new(arr, o);
	}
	return arr;
}

int bench_mirror_from_json(const json_t *arr, struct bench_mirror **out, char *err, size_t errlen)
{
	struct bench_mirror *mi;
	size_t n = json_array_size(arr);

	if (!json_is_array(arr) || n > MIRROR_MAX) {
		snprintf(err, errlen, "sim_layout: not an array of at most %d mappings", MIRROR_MAX);
		return -EINVAL;
	}
	mi = vml_zalloc(sizeof(*mi));
	if (!mi)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const json_t *o = json_array_get(arr, i);
		struct mirror_vma *m = &mi->v[i];
		const char *path;
		int64_t prot;

		if (json_get_u64(o, "start", (uint64_t *)&m->start) ||
		    json_get_u64(o, "end", (uint64_t *)&m->end) ||
		    json_get_u64(o, "offset", (uint64_t *)&m->offset) ||
		    json_get_i64(o, "prot", &prot) || json_get_bool(o, "shared", &m->shared) ||
		    json_get_u64(o, "rss_pages", (uint64_t *)&m->rss_pages) ||
		    json_get_str(o, "path", &path) || m->end <= m->start ||
		    m->end > MIRROR_TASK_SIZE || (m->start | m->end) & 4095 ||
		    strlen(path) >= MIRROR_PATH_MAX ||
		    m->rss_pages > (m->end - m->start) / 4096) {
			snprintf(err, errlen, "sim_layout[%zu]: not a mapping (start, end, offset, "
				 "prot, shared, rss_pages, path)", i);
			vml_free(mi);
			return -EINVAL;
		}
		m->prot = (int)prot;
		snprintf(m->path, sizeof(m->path), "%s", path);
	}
	mi->nr = (unsigned int)n;
	*out = mi;
	return 0;
}

/* simcost.h */
int bench_sim_layout_load(const char *path, struct bench_mirror **out, char *err, size_t errlen)
{
	json_t *doc, *arr;
	int ret = json_read_file(path, &doc, err, errlen);

	*out = NULL;
	if (ret)
		return ret;
	arr = json_object_get(doc, "sim_layout");
	ret = arr ? bench_mirror_from_json(arr, out, err, errlen) : 0;
	json_decref(doc);
	return ret;
}
