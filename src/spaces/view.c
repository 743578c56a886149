// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * view.c - cut, normalise and diff /proc view text (see view.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "spaces/view.h"
#include "util/alloc.h"
#include "util/compiler.h"
#include "util/strbuf.h"

static bool hexnum(const char **p, const char *end, unsigned long *out)
{
	const char *s = *p;
	unsigned long v = 0;

	if (s >= end)
		return false;
	for (; s < end; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else
			break;
		if (v >> 60)
			return false;
		v = v << 4 | d;
	}
	if (s == *p)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool decnum(const char **p, const char *end, unsigned long *out)
{
	const char *s = *p;
	unsigned long v = 0;

	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > (~0UL - 9) / 10)
			return false;
		v = v * 10 + (*s - '0');
	}
	if (s == *p)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool expect_char(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

bool maps_line_parse(const char *line, size_t len, struct maps_line *out)
{
	const char *p = line, *end = line + len;
	unsigned long maj, min;

	if (!hexnum(&p, end, &out->start) || !expect_char(&p, end, '-') ||
	    !hexnum(&p, end, &out->end) || !expect_char(&p, end, ' '))
		return false;
	if (end - p < 5 || p[4] != ' ')
		return false;
	memcpy(out->perms, p, 4);
	out->perms[4] = '\0';
	p += 5;
	if (!hexnum(&p, end, &out->offset) || !expect_char(&p, end, ' ') ||
	    !hexnum(&p, end, &maj) || !expect_char(&p, end, ':') ||
	    !hexnum(&p, end, &min) || !expect_char(&p, end, ' ') ||
	    !decnum(&p, end, &out->inode) || !expect_char(&p, end, ' '))
		return false;
	out->dev_major = maj;
	out->dev_minor = min;
	out->prefix_len = p - line;
	while (p < end && *p == ' ')
		p++;
	out->name_off = p - line;
	out->name_len = end - p;
	return true;
}

int maps_line_format(char *buf, size_t len, unsigned long start, unsigned long end,
		     const char *perms, unsigned long offset, unsigned int major,
		     unsigned int minor, unsigned long inode, const char *name)
{
	int n = snprintf(buf, len, "%08lx-%08lx %.4s %08lx %02x:%02x %lu ", start, end, perms,
			 offset, major, minor, inode);
	int pad;

	if (n < 0 || !name || !*name)
		return n;
	pad = n < MAPS_NAME_PAD ? MAPS_NAME_PAD - n : 0;
	return n + snprintf((size_t)n < len ? buf + n : NULL, (size_t)n < len ? len - n : 0,
			    "%*s %s", pad, "", name);
}

/* The next line of @text from *@pos: its start and length without '\n'. */
static bool next_line(const char *text, size_t *pos, const char **line, size_t *len)
{
	const char *s = text + *pos, *nl;

	if (!*s)
		return false;
	nl = strchr(s, '\n');
	*line = s;
	*len = nl ? (size_t)(nl - s) : strlen(s);
	*pos += *len + (nl ? 1 : 0);
	return true;
}

static bool overlaps(unsigned long s, unsigned long e, unsigned long lo, unsigned long hi)
{
	return s < hi && e > lo;
}

char *view_cut(enum vml_view view, const char *text, unsigned long lo, unsigned long hi)
{
	struct strbuf b = { 0 };
	const char *line;
	size_t pos = 0, len;
	bool keep = false;

	if (view == VML_VIEW_SMAPS_ROLLUP)
		return vml_strdup(text);
	while (next_line(text, &pos, &line, &len)) {
		struct maps_line ml;

		if (view == VML_VIEW_NUMA_MAPS) {
			const char *p = line;
			unsigned long start;

			/* One line a VMA; only the start address is printed. */
			keep = hexnum(&p, line + len, &start) && start >= lo && start < hi;
		} else if (maps_line_parse(line, len, &ml)) {
			keep = overlaps(ml.start, ml.end, lo, hi);
		}
		/* smaps field lines follow the verdict of their header line */
		if (keep) {
			strbuf_add(&b, line, len);
			strbuf_add(&b, "\n", 1);
		}
	}
	return strbuf_finish(&b);
}

static void normalise_line(struct strbuf *b, const char *line, size_t len)
{
	struct maps_line ml;
	char buf[128];
	int n = -1;

	if (!maps_line_parse(line, len, &ml) || (ml.dev_major == 0 && ml.dev_minor == 0 &&
						 ml.inode == 0)) {
		strbuf_add(b, line, len);
		return;
	}
	/* Keep start-end, perms and offset as printed; only dev and inode change. */
	for (size_t i = 0, spaces = 0; i < len; i++) {
		if (line[i] == ' ' && ++spaces == 3) {
			n = snprintf(buf, sizeof(buf), "%.*s00:00 0 ", (int)i + 1, line);
			break;
		}
	}
	VML_BUG_ON(n < 0 || (size_t)n >= sizeof(buf));
	strbuf_add(b, buf, n);
	if (ml.name_len) {
		if (n < MAPS_NAME_PAD)
			strbuf_printf(b, "%*s", MAPS_NAME_PAD - n, "");
		strbuf_add(b, " ", 1);
		strbuf_add(b, line + ml.name_off, ml.name_len);
	}
}

static void add_substituted(struct strbuf *b, const char *s, size_t len,
			    const char *const *subst, size_t nr_pairs)
{
	while (len) {
		size_t i, best = len, which = 0;

		for (i = 0; i < nr_pairs; i++) {
			const char *from = subst[2 * i];
			size_t fl = strlen(from);

			if (!fl)
				continue;
			for (size_t k = 0; k + fl <= len && k < best; k++) {
				if (!memcmp(s + k, from, fl)) {
					best = k;
					which = i;
					break;
				}
			}
		}
		strbuf_add(b, s, best);
		if (best == len)
			return;
		strbuf_add(b, subst[2 * which + 1], strlen(subst[2 * which + 1]));
		s += best + strlen(subst[2 * which]);
		len -= best + strlen(subst[2 * which]);
	}
}

char *view_normalise(const char *text, const char *const *subst, size_t nr_pairs)
{
	struct strbuf b = { 0 }, l;
	const char *line;
	size_t pos = 0, len;

	while (next_line(text, &pos, &line, &len)) {
		memset(&l, 0, sizeof(l));
		normalise_line(&l, line, len);
		if (l.oom) {
			vml_free(l.s);
			vml_free(b.s);
			return NULL;
		}
		add_substituted(&b, l.s ? l.s : "", l.len, subst, nr_pairs);
		strbuf_add(&b, "\n", 1);
		vml_free(l.s);
	}
	return strbuf_finish(&b);
}

bool maps_range_unmapped(const char *maps, unsigned long addr, unsigned long len)
{
	const char *line;
	size_t pos = 0, n;
	unsigned long end = addr + len;

	if (end < addr)
		end = ~0UL;
	while (next_line(maps, &pos, &line, &n)) {
		struct maps_line ml;

		if (maps_line_parse(line, n, &ml) && overlaps(ml.start, ml.end, addr, end))
			return false;
	}
	return true;
}

/* ---- unified diff ---- */

struct lines {
	const char **s;
	size_t *len;
	size_t n;
};

static int split_lines(const char *text, struct lines *l)
{
	size_t pos = 0, cap = 0, len;
	const char *line;

	memset(l, 0, sizeof(*l));
	while (next_line(text, &pos, &line, &len)) {
		if (l->n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			const char **ns = vml_realloc(l->s, ncap * sizeof(*ns));
			size_t *nl;

			if (!ns)
				return -ENOMEM;
			l->s = ns;
			nl = vml_realloc(l->len, ncap * sizeof(*nl));
			if (!nl)
				return -ENOMEM;
			l->len = nl;
			cap = ncap;
		}
		l->s[l->n] = line;
		l->len[l->n] = len;
		l->n++;
	}
	return 0;
}

static bool same(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && !memcmp(a->s[i], b->s[j], a->len[i]);
}

/* One step of the edit script: ' ' both, '-' only in a, '+' only in b. */
struct edit {
	char op;
	size_t ia, ib;	/* line indexes (of a for ' '/'-', of b for '+'; both for ' ') */
};

#define DIFF_MAX_CELLS (8u << 20)	/* 32 MiB of table */
#define DIFF_CONTEXT 3

static int edit_script(const struct lines *a, const struct lines *b, struct edit **out,
		       size_t *nr)
{
	size_t head = 0, tail = 0, n, m, k = 0;
	struct edit *e;
	uint32_t *t = NULL;

	while (head < a->n && head < b->n && same(a, head, b, head))
		head++;
	while (tail < a->n - head && tail < b->n - head &&
	       same(a, a->n - 1 - tail, b, b->n - 1 - tail))
		tail++;
	n = a->n - head - tail;
	m = b->n - head - tail;
	e = vml_malloc((a->n + b->n + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < head; i++)
		e[k++] = (struct edit){ ' ', i, i };
	if (n && m && (n + 1) * (m + 1) <= DIFF_MAX_CELLS)
		t = vml_zalloc((n + 1) * (m + 1) * sizeof(*t));
	if (t) {
		/* t[i][j]: LCS length of a[head+i..] and b[head+j..] */
		size_t w = m + 1, i = 0, j = 0;

		for (size_t ii = n; ii-- > 0;)
			for (size_t jj = m; jj-- > 0;)
				t[ii * w + jj] = same(a, head + ii, b, head + jj) ?
					t[(ii + 1) * w + jj + 1] + 1 :
					VML_MAX(t[(ii + 1) * w + jj], t[ii * w + jj + 1]);
		while (i < n || j < m) {
			if (i < n && j < m && same(a, head + i, b, head + j)) {
				e[k++] = (struct edit){ ' ', head + i, head + j };
				i++, j++;
			} else if (i < n && (j == m || t[(i + 1) * w + j] >= t[i * w + j + 1])) {
				/* deletions first, as GNU diff prints them */
				e[k++] = (struct edit){ '-', head + i, head + j };
				i++;
			} else {
				e[k++] = (struct edit){ '+', head + i, head + j };
				j++;
			}
		}
		vml_free(t);
	} else {
		/* Too big for the table (or one side empty): replace the middle. */
		for (size_t i = 0; i < n; i++)
			e[k++] = (struct edit){ '-', head + i, head };
		for (size_t j = 0; j < m; j++)
			e[k++] = (struct edit){ '+', head + n, head + j };
	}
	for (size_t i = 0; i < tail; i++)
		e[k++] = (struct edit){ ' ', head + n + i, head + m + i };
	*out = e;
	*nr = k;
	return 0;
}

/* GNU diff's range: "l,s", or "l" when s is 1; an empty range names the line before. */
static void hunk_range(struct strbuf *b, size_t first, size_t count)
{
	if (count == 1)
		strbuf_printf(b, "%zu", first + 1);
	else
		strbuf_printf(b, "%zu,%zu", count ? first + 1 : first, count);
}

char *view_diff(const char *a_text, const char *b_text, const char *label_a, const char *label_b)
{
	struct lines a = { 0 }, b = { 0 };
	struct strbuf out = { 0 };
	struct edit *e = NULL;
	size_t nr = 0, i = 0;
	char *ret = NULL;

	if (split_lines(a_text, &a) || split_lines(b_text, &b) || edit_script(&a, &b, &e, &nr))
		goto out;
	while (i < nr) {
		size_t start, end, last_change, k, ca = 0, cb = 0, fa, fb;

		while (i < nr && e[i].op == ' ')
			i++;
		if (i == nr)
			break;
		/* a hunk: from CONTEXT lines before this change to CONTEXT after the last
		 * change that is within 2*CONTEXT unchanged lines of the previous one */
		start = i > DIFF_CONTEXT ? i - DIFF_CONTEXT : 0;
		last_change = i;
		for (k = i; k < nr; k++) {
			if (e[k].op != ' ')
				last_change = k;
			else if (k - last_change > 2 * DIFF_CONTEXT)
				break;
		}
		end = VML_MIN(nr, last_change + 1 + DIFF_CONTEXT);
		if (!out.len)
			strbuf_printf(&out, "--- %s\n+++ %s\n", label_a, label_b);
		for (k = start; k < end; k++) {
			ca += e[k].op != '+';
			cb += e[k].op != '-';
		}
		fa = e[start].ia;
		fb = e[start].ib;
		strbuf_add(&out, "@@ -", 4);
		hunk_range(&out, fa, ca);
		strbuf_add(&out, " +", 2);
		hunk_range(&out, fb, cb);
		strbuf_add(&out, " @@\n", 4);
		for (k = start; k < end; k++) {
			const struct lines *src = e[k].op == '+' ? &b : &a;
			size_t idx = e[k].op == '+' ? e[k].ib : e[k].ia;

			strbuf_add(&out, &e[k].op, 1);
			strbuf_add(&out, src->s[idx], src->len[idx]);
			strbuf_add(&out, "\n", 1);
		}
		i = end;
	}
	ret = strbuf_finish(&out);
	out.s = NULL;
out:
	vml_free(out.s);
	vml_free(e);
	vml_free(a.s);
	vml_free(a.len);
	vml_free(b.s);
	vml_free(b.len);
	return ret;
}
