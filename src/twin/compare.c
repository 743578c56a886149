// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * compare.c - a twin against its original, VMA by VMA.
 *
 * The twin's smaps (as a replay printed it) is parsed with the original's
 * parser; each of the original's VMAs is looked up at its twin address.
 * "maps the same" is what the twin promises of maps: the same range (moved),
 * permissions, offset, and the same kind of name - a file for a file (paths,
 * devices and inodes are not compared), no name for "[heap]" and "[stack]"
 * (an op script cannot make either), an anonymous VMA's own name. Every smaps
 * field is then counted: on how many VMAs it is the same, and by how much it
 * is off elsewhere. Rss, Anonymous, Swap, AnonHugePages and Locked must be
 * the same (twin_field_exact); Pss and the Shared_* fields depend on the
 * other processes that map the original's pages, Referenced on time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twin/twin.h"
#include "util/alloc.h"

bool twin_field_exact(enum twin_field f)
{
	return f == TF_SIZE || f == TF_RSS || f == TF_ANONYMOUS || f == TF_SWAP ||
	       f == TF_ANON_HUGE || f == TF_LOCKED;
}

/* The twin's VMA that starts at @addr, by binary search; NULL if none. */
static const struct twin_vma *find(const struct twin_snapshot *t, unsigned long addr)
{
	size_t lo = 0, hi = t->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->vmas[mid].start == addr)
			return &t->vmas[mid];
		if (t->vmas[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Is @tw's name what the twin of @o should have? */
static bool same_name_kind(const struct twin_vma *o, const struct twin_vma *tw)
{
	switch (o->kind) {
	case TK_HEAP:
	case TK_STACK:
		return !tw->name;
	case TK_FILE:
	case TK_SHMEM:
		return tw->name && tw->name[0] == '/';
	default:
		return same_str(o->name, tw->name);
	}
}

int twin_compare(const struct twin_snapshot *s, const char *twin_smaps, struct twin_cmp *c)
{
	struct twin_snapshot *t = vml_zalloc(sizeof(*t));
	size_t len = strlen(twin_smaps), matched = 0;
	char err[160];
	FILE *f;
	int ret;

	memset(c, 0, sizeof(*c));
	if (!t)
		return -ENOMEM;
	f = len ? fmemopen((void *)twin_smaps, len, "r") : NULL;
	if (len && !f) {
		vml_free(t);
		return -errno;
	}
	ret = f ? twin_smaps_parse(f, t, err, sizeof(err)) : 0;
	if (f)
		fclose(f);
	if (ret) {
		twin_snapshot_free(t);
		return ret;
	}
	for (size_t i = 0; i < s->nr; i++) {
		const struct twin_vma *o = &s->vmas[i], *tw;
		unsigned long ts = twin_addr(o, o->start), te = twin_addr(o, o->end);

		if (o->kind == TK_SKIP)
			continue;
		c->vmas++;
		tw = find(t, ts);
		if (!tw || tw->end != te) {
			c->missing++;
			if (!c->first_diff[0])
				snprintf(c->first_diff, sizeof(c->first_diff),
					 "0x%lx-0x%lx (%lx-%lx %s %s): %s", ts, te, o->start, o->end,
					 o->perms, o->name ? o->name : "",
					 tw ? "the twin's VMA there ends elsewhere" : "no such VMA in the twin");
			continue;
		}
		matched++;
		if (!strcmp(o->perms, tw->perms) && o->offset == tw->offset && same_name_kind(o, tw))
			c->maps_same++;
		else if (!c->first_diff[0])
			snprintf(c->first_diff, sizeof(c->first_diff),
				 "0x%lx-0x%lx: %s %08lx %s in the original, %s %08lx %s in the twin",
				 ts, te, o->perms, o->offset, o->name ? o->name : "", tw->perms,
				 tw->offset, tw->name ? tw->name : "");
		for (int fi = 0; fi < TF__COUNT; fi++) {
			struct twin_field_cmp *fc = &c->f[fi];
			unsigned long a = o->kb[fi], b = tw->kb[fi], d = a > b ? a - b : b - a;

			/*
			 * smaps' Locked is the Pss of the locked pages (pss_locked in
			 * fs/proc/task_mmu.c): where the original's are shared it is
			 * below Rss. A VMA wholly locked on both sides (Locked = Pss)
			 * agrees, whatever the sharing.
			 */
			bool same = !d;

			if (fi == TF_LOCKED && d && a == o->kb[TF_PSS] && b == tw->kb[TF_PSS] &&
			    (o->vmflags & tw->vmflags & TV_LOCKED)) {
				same = true;
				c->locked_as_pss++;
			}
			fc->same += same;
			if (!same && twin_field_exact(fi) && !c->first_field_diff[0])
				snprintf(c->first_field_diff, sizeof(c->first_field_diff),
					 "0x%lx-0x%lx (%lx %s %s): %s %lu kB in the original, "
					 "%lu kB in the twin (Rss %lu, Pss %lu / %lu)", ts, te,
					 o->start, o->perms, o->name ? o->name : "",
					 twin_field_name(fi), a, b, o->kb[TF_RSS], o->kb[TF_PSS],
					 tw->kb[TF_PSS]);
			fc->orig_kb += a;
			fc->twin_kb += b;
			fc->abs_diff_kb += d;
			if (d > fc->max_diff_kb)
				fc->max_diff_kb = d;
		}
	}
	c->extra = t->nr > matched ? t->nr - matched : 0;
	twin_snapshot_free(t);
	return 0;
}
