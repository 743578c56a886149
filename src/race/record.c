// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * record.c - split /proc view reads into records and check what each record
 * says about itself (record.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "race/record.h"
#include "spaces/view.h"
#include "util/compiler.h"

static const char *const field_names[RF__COUNT] = {
	[RF_SIZE] = "Size",
	[RF_KERNELPAGESIZE] = "KernelPageSize",
	[RF_MMUPAGESIZE] = "MMUPageSize",
	[RF_RSS] = "Rss",
	[RF_PSS] = "Pss",
	[RF_PSS_DIRTY] = "Pss_Dirty",
	[RF_PSS_ANON] = "Pss_Anon",
	[RF_PSS_FILE] = "Pss_File",
	[RF_PSS_SHMEM] = "Pss_Shmem",
	[RF_SHARED_CLEAN] = "Shared_Clean",
	[RF_SHARED_DIRTY] = "Shared_Dirty",
	[RF_PRIVATE_CLEAN] = "Private_Clean",
	[RF_PRIVATE_DIRTY] = "Private_Dirty",
	[RF_REFERENCED] = "Referenced",
	[RF_ANONYMOUS] = "Anonymous",
	[RF_KSM] = "KSM",
	[RF_LAZYFREE] = "LazyFree",
	[RF_ANONHUGEPAGES] = "AnonHugePages",
	[RF_SHMEMPMDMAPPED] = "ShmemPmdMapped",
	[RF_FILEPMDMAPPED] = "FilePmdMapped",
	[RF_SHARED_HUGETLB] = "Shared_Hugetlb",
	[RF_PRIVATE_HUGETLB] = "Private_Hugetlb",
	[RF_SWAP] = "Swap",
	[RF_SWAPPSS] = "SwapPss",
	[RF_LOCKED] = "Locked",
	[RF_THPELIGIBLE] = "THPeligible",
	[RF_PROTECTIONKEY] = "ProtectionKey",
};

/* The order smaps prints its fields in (ProtectionKey is optional), then VmFlags. */
static const enum race_field smaps_order[] = {
	RF_SIZE, RF_KERNELPAGESIZE, RF_MMUPAGESIZE, RF_RSS, RF_PSS, RF_PSS_DIRTY,
	RF_SHARED_CLEAN, RF_SHARED_DIRTY, RF_PRIVATE_CLEAN, RF_PRIVATE_DIRTY, RF_REFERENCED,
	RF_ANONYMOUS, RF_KSM, RF_LAZYFREE, RF_ANONHUGEPAGES, RF_SHMEMPMDMAPPED,
	RF_FILEPMDMAPPED, RF_SHARED_HUGETLB, RF_PRIVATE_HUGETLB, RF_SWAP, RF_SWAPPSS,
	RF_LOCKED, RF_THPELIGIBLE, RF_PROTECTIONKEY,
};

static const enum race_field rollup_order[] = {
	RF_RSS, RF_PSS, RF_PSS_DIRTY, RF_PSS_ANON, RF_PSS_FILE, RF_PSS_SHMEM,
	RF_SHARED_CLEAN, RF_SHARED_DIRTY, RF_PRIVATE_CLEAN, RF_PRIVATE_DIRTY, RF_REFERENCED,
	RF_ANONYMOUS, RF_KSM, RF_LAZYFREE, RF_ANONHUGEPAGES, RF_SHMEMPMDMAPPED,
	RF_FILEPMDMAPPED, RF_SHARED_HUGETLB, RF_PRIVATE_HUGETLB, RF_SWAP, RF_SWAPPSS,
	RF_LOCKED,
};

const char *race_field_name(enum race_field f)
{
	return (unsigned int)f < RF__COUNT ? field_names[f] : "?";
}

/* The next line at @pos: start and length without '\n'; false at the end. */
static bool next_line(const char *text, size_t len, size_t *pos, const char **line,
		      size_t *llen, bool *nl)
{
	const char *s = text + *pos, *e;

	if (*pos >= len)
		return false;
	e = memchr(s, '\n', len - *pos);
	*line = s;
	*llen = e ? (size_t)(e - s) : len - *pos;
	*nl = e != NULL;
	*pos += *llen + (e ? 1 : 0);
	return true;
}

static bool parse_ulong(const char **p, const char *end, int base, unsigned long *out)
{
	unsigned long v = 0;
	const char *s = *p;

	for (; s < end; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else
			break;
		if (v > (~0UL - d) / base)
			return false;
		v = v * base + d;
	}
	if (s == *p)
		return false;
	*p = s;
	*out = v;
	return true;
}

/* "Label:   1234 kB": the field and its value; false if not a field line. */
static bool field_line(const char *line, size_t len, enum race_field *f, unsigned long *v)
{
	const char *colon = memchr(line, ':', len), *p, *end = line + len;
	size_t n;

	if (!colon)
		return false;
	n = colon - line;
	for (int i = 0; i < RF__COUNT; i++) {
		if (strlen(field_names[i]) != n || memcmp(line, field_names[i], n))
			continue;
		p = colon + 1;
		while (p < end && *p == ' ')
			p++;
		if (!parse_ulong(&p, end, 10, v))
			return false;
		if (p != end && (end - p != 3 || memcmp(p, " kB", 3)))
			return false;
		*f = i;
		return true;
	}
	return false;
}

static void set_bad(struct race_rec *r, const char *why)
{
	if (!r->bad)
		r->bad = why;
}

/* Fields of one smaps or rollup record, from @pos; the record ends at VmFlags (smaps). */
static void parse_fields(struct race_rec *r, const char *text, size_t len, size_t *pos,
			 bool rollup)
{
	const enum race_field *order = rollup ? rollup_order : smaps_order;
	size_t nr = rollup ? ARRAY_SIZE(rollup_order) : ARRAY_SIZE(smaps_order), k = 0;
	const char *line;
	size_t llen, before;
	bool nl;

	for (;;) {
		enum race_field f;
		unsigned long v;

		before = *pos;
		if (!next_line(text, len, pos, &line, &llen, &nl)) {
			if (!rollup)
				set_bad(r, "the read ends inside an smaps record (no VmFlags)");
			break;
		}
		if (!nl) {
			set_bad(r, "the read ends inside a line");
			break;
		}
		if (!rollup && llen >= 8 && !memcmp(line, "VmFlags:", 8)) {
			r->vmflags = line;
			r->vmflags_len = llen;
			break;
		}
		if (!field_line(line, llen, &f, &v)) {
			if (!rollup && maps_line_parse(line, llen, &(struct maps_line){ 0 })) {
				/* the next record's header: this one had no VmFlags */
				*pos = before;
				set_bad(r, "an smaps record without its VmFlags line");
				break;
			}
			set_bad(r, "a line that is not a field");
			break;
		}
		if (r->has & (1u << f)) {
			set_bad(r, "a field printed twice");
			break;
		}
		while (k < nr && order[k] != f)
			k++;	/* skipped fields are caught by race_fields_bad */
		if (k == nr) {
			set_bad(r, "fields out of order");
			break;
		}
		r->field[f] = v;
		r->has |= 1u << f;
	}
	r->rec_len = *pos - (size_t)(r->text - text);
}

/* Is [tok, tok+n) "KEY=" of a numa_maps count (N<node>= included)? */
static bool numa_count_key(const char *tok, size_t n)
{
	static const char *const keys[] = {
		"anon", "dirty", "mapped", "mapmax", "swapcache", "active", "writeback",
		"kernelpagesize_kB",
	};

	if (n >= 2 && tok[0] == 'N' && tok[1] >= '0' && tok[1] <= '9')
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (strlen(keys[i]) == n && !memcmp(tok, keys[i], n))
			return true;
	return false;
}

/* numa_maps: "<start> <policy> [file=..] ... anon=N dirty=N N0=N kernelpagesize_kB=4" */
static void parse_numa(struct race_rec *r, const char *line, size_t len)
{
	const char *p = line, *end = line + len, *id_end = NULL;

	if (!parse_ulong(&p, end, 16, &r->start) || p == end || *p != ' ') {
		set_bad(r, "not a numa_maps line");
		return;
	}
	r->id = ++p;
	while (p < end) {
		const char *tok = p, *eq, *vp;
		unsigned long v;

		while (p < end && *p != ' ')
			p++;
		eq = memchr(tok, '=', p - tok);
		if (eq && numa_count_key(tok, eq - tok)) {
			if (!id_end)
				id_end = tok > r->id ? tok - 1 : tok;
			vp = eq + 1;
			if (!parse_ulong(&vp, p, 10, &v) || vp != p) {
				set_bad(r, "a numa_maps count that is not a number");
				return;
			}
			if (tok[0] == 'N')
				r->pages += v;
		} else if (id_end) {
			set_bad(r, "a numa_maps word after the counts");
			return;
		}
		if (p < end)
			p++;
	}
	r->id_len = (id_end ? id_end : end) - r->id;
}

int race_parse_read(enum vml_view view, const char *text, size_t len, unsigned int read,
		    struct race_rec *recs, size_t max)
{
	size_t pos = 0, nr = 0, start;
	const char *line;
	size_t llen;
	bool nl;

	for (;;) {
		struct race_rec *r;
		struct maps_line ml;

		start = pos;
		if (!next_line(text, len, &pos, &line, &llen, &nl))
			break;
		if (nr == max)
			return -ENOSPC;
		r = &recs[nr++];
		memset(r, 0, sizeof(*r));
		r->text = line;
		r->len = llen;
		r->rec_len = pos - start;
		r->read = read;
		if (!nl) {
			set_bad(r, "the read ends inside a line");
			break;
		}
		if (view == VML_VIEW_NUMA_MAPS) {
			parse_numa(r, line, llen);
		} else if (maps_line_parse(line, llen, &ml)) {
			r->start = ml.start;
			r->end = ml.end;
			if (view == VML_VIEW_SMAPS || view == VML_VIEW_SMAPS_ROLLUP)
				parse_fields(r, text, len, &pos, view == VML_VIEW_SMAPS_ROLLUP);
		} else {
			set_bad(r, "not a maps line");
		}
		if (r->bad)
			break;
	}
	return (int)nr;
}

/* Is the rest after "VmFlags:" a list of two-letter mnemonics, each followed by a space? */
static bool vmflags_ok(const char *s, size_t len)
{
	if (len < 9 || s[8] != ' ')
		return false;
	for (size_t i = 9; i < len; i += 3)
		if (i + 3 > len || s[i + 2] != ' ' || s[i] < 'a' || s[i] > 'z' ||
		    s[i + 1] < 'a' || s[i + 1] > 'z')
			return false;
	return true;
}

const char *race_fields_bad(const struct race_rec *r, bool rollup, char *buf, size_t len)
{
	const enum race_field *order = rollup ? rollup_order : smaps_order;
	size_t nr = rollup ? ARRAY_SIZE(rollup_order) : ARRAY_SIZE(smaps_order);
	const unsigned long *f = r->field;
	unsigned long sum;

	for (size_t k = 0; k < nr; k++) {
		if (order[k] == RF_PROTECTIONKEY || (r->has & (1u << order[k])))
			continue;
		snprintf(buf, len, "the field list is incomplete: no %s", field_names[order[k]]);
		return buf;
	}
	if (!rollup) {
		if (!r->vmflags || !vmflags_ok(r->vmflags, r->vmflags_len)) {
			snprintf(buf, len, "a malformed VmFlags line");
			return buf;
		}
		if (f[RF_SIZE] * 1024 != r->end - r->start) {
			snprintf(buf, len, "Size %lu kB but the header says %lu kB", f[RF_SIZE],
				 (r->end - r->start) / 1024);
			return buf;
		}
		if (f[RF_RSS] > f[RF_SIZE]) {
			snprintf(buf, len, "Rss %lu kB > Size %lu kB", f[RF_RSS], f[RF_SIZE]);
			return buf;
		}
		if (f[RF_KERNELPAGESIZE] == 0 || f[RF_MMUPAGESIZE] == 0) {
			snprintf(buf, len, "a zero page size");
			return buf;
		}
	}
	if (f[RF_PSS] > f[RF_RSS]) {
		snprintf(buf, len, "Pss %lu kB > Rss %lu kB", f[RF_PSS], f[RF_RSS]);
		return buf;
	}
	if (f[RF_PSS_DIRTY] > f[RF_PSS]) {
		snprintf(buf, len, "Pss_Dirty %lu kB > Pss %lu kB", f[RF_PSS_DIRTY], f[RF_PSS]);
		return buf;
	}
	sum = f[RF_SHARED_CLEAN] + f[RF_SHARED_DIRTY] + f[RF_PRIVATE_CLEAN] + f[RF_PRIVATE_DIRTY];
	if (sum != f[RF_RSS]) {
		snprintf(buf, len, "Shared_Clean + Shared_Dirty + Private_Clean + Private_Dirty = "
			 "%lu kB, Rss %lu kB", sum, f[RF_RSS]);
		return buf;
	}
	if (f[RF_ANONYMOUS] > f[RF_RSS]) {
		snprintf(buf, len, "Anonymous %lu kB > Rss %lu kB", f[RF_ANONYMOUS], f[RF_RSS]);
		return buf;
	}
	if (rollup) {
		/* each is rounded down on its own: the parts lose at most 1 kB each */
		sum = f[RF_PSS_ANON] + f[RF_PSS_FILE] + f[RF_PSS_SHMEM];
		if (sum > f[RF_PSS] || sum + 2 < f[RF_PSS]) {
			snprintf(buf, len, "Pss_Anon + Pss_File + Pss_Shmem = %lu kB, Pss %lu kB",
				 sum, f[RF_PSS]);
			return buf;
		}
	}
	return NULL;
}

void race_rec_from_query(struct race_rec *r, const struct vml_procmap_query *q,
			 const char *name, char *buf, size_t buflen, unsigned int read)
{
	char perms[5];
	int n;

	perms[0] = q->vma_flags & VML_PROCMAP_QUERY_VMA_READABLE ? 'r' : '-';
	perms[1] = q->vma_flags & VML_PROCMAP_QUERY_VMA_WRITABLE ? 'w' : '-';
	perms[2] = q->vma_flags & VML_PROCMAP_QUERY_VMA_EXECUTABLE ? 'x' : '-';
	perms[3] = q->vma_flags & VML_PROCMAP_QUERY_VMA_SHARED ? 's' : 'p';
	perms[4] = '\0';
	n = maps_line_format(buf, buflen, q->vma_start, q->vma_end, perms, q->vma_offset,
			     q->dev_major, q->dev_minor, q->inode,
			     q->vma_name_size ? name : NULL);
	memset(r, 0, sizeof(*r));
	r->start = q->vma_start;
	r->end = q->vma_end;
	r->text = buf;
	r->len = n < 0 ? 0 : VML_MIN((size_t)n, buflen - 1);
	r->rec_len = r->len;
	r->read = read;
}
