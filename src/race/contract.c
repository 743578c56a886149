// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * contract.c - the states a modifier went through, and the checker that
 * judges what racing readers reported (contract.h).
 *
 * The checker follows the reader: after a record it knows which VMA forms
 * the record can be (a maps line names one; a numa_maps line only its start)
 * and in which states; the next record must be, in some state, the first
 * VMA that ends after one of those forms. For per-read views the state must
 * stay the same within a read. This is a small dynamic programme over
 * (form, set of states); the sets are bit masks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "race/contract.h"
#include "util/alloc.h"
#include "util/compiler.h"

#define RACE_PAGE 4096UL
#define MAX_VMFLAGS 4		/* VmFlags variants one VMA form may show */
#define MAX_CANDS 16		/* forms one record can be */
#define NO_VMA ((size_t)-1)

/* One VMA form: a VMA as it is in one or more states. */
struct cvma {
	unsigned long start, end;
	char *line;			/* its maps line, without '\n' */
	size_t len;
	char *numa_id;			/* numa_maps identity, NULL if unknown */
	size_t numa_len;
	char *vmflags[MAX_VMFLAGS];	/* smaps VmFlags lines seen for it */
	size_t nr_vmflags;
	bool tracked;			/* inside the tracked range: residency is known */
	unsigned long rss_min, rss_max;	/* resident pages over the states it is in */
	uint32_t states;		/* bit per state it is in */
	uint32_t steady;		/* bit per op of the cycle it is there throughout */
	size_t added;			/* its index before the forms were sorted */
};

struct cstate {
	size_t *vma;			/* forms by address */
	size_t nr;
	unsigned char *resident;	/* a byte per tracked page */
	char *rollup_header;		/* smaps_rollup's header line, NULL if none */
	unsigned long rollup_rss;	/* kB */
};

struct race_contract {
	unsigned long lo, hi;
	size_t npages;
	struct cvma *v;			/* sorted by (start, end, line) once finished */
	size_t nr_v, cap_v;
	struct cstate s[RACE_MAX_STATES];
	size_t nr_s;
	bool have_smaps, have_numa, have_rollup, finished;
	bool have_cycle;		/* race_contract_set_cycle: the temporal check is on */
	unsigned long max_len;		/* the longest form */
	unsigned long rollup_min, rollup_max;	/* kB */
};

static const char *const rule_names[RACE__RULES] = {
	[RACE_OK] = "ok",
	[RACE_MALFORMED] = "malformed",
	[RACE_UNKNOWN] = "unknown-form",
	[RACE_BACKWARDS] = "backwards",
	[RACE_OVERLAP] = "overlap",
	[RACE_MISSING] = "missing",
	[RACE_FAKE_GAP] = "fake-gap",
	[RACE_TORN_READ] = "torn-read",
	[RACE_FIELDS] = "fields",
	[RACE_TOTALS] = "totals",
	[RACE_DOUBLE_COUNT] = "double-count",
	[RACE_SKIPPED] = "skipped",
};

static const char *const note_names[RACE__NOTES] = {
	[RACE_NOTE_DUP_IN_READ] = "dup-in-read",
	[RACE_NOTE_DUP_ACROSS_READS] = "dup-across-reads",
	[RACE_NOTE_CHANGED] = "changed",
};

const char *race_rule_name(enum race_rule rule)
{
	return (unsigned int)rule < RACE__RULES ? rule_names[rule] : "?";
}

const char *race_note_name(enum race_note note)
{
	return (unsigned int)note < RACE__NOTES ? note_names[note] : "?";
}

int race_contract_create(unsigned long track_lo, unsigned long track_hi,
			 struct race_contract **out)
{
	struct race_contract *c = vml_zalloc(sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->lo = track_lo;
	c->hi = track_hi > track_lo ? track_hi : track_lo;
	c->npages = (c->hi - c->lo) / RACE_PAGE;
	*out = c;
	return 0;
}

void race_contract_destroy(struct race_contract *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_v; i++) {
		vml_free(c->v[i].line);
		vml_free(c->v[i].numa_id);
		for (size_t k = 0; k < c->v[i].nr_vmflags; k++)
			vml_free(c->v[i].vmflags[k]);
	}
	vml_free(c->v);
	for (size_t j = 0; j < c->nr_s; j++) {
		vml_free(c->s[j].vma);
		vml_free(c->s[j].resident);
		vml_free(c->s[j].rollup_header);
	}
	vml_free(c);
}

size_t race_contract_nr_states(const struct race_contract *c)
{
	return c->nr_s;
}

static char *dup_n(const char *s, size_t n)
{
	char *d = vml_malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static unsigned long resident_in(const struct race_contract *c, const unsigned char *res,
				 unsigned long start, unsigned long end)
{
	unsigned long n = 0;

	for (unsigned long a = start; a < end; a += RACE_PAGE)
		if (a >= c->lo && a < c->hi)
			n += res[(a - c->lo) / RACE_PAGE] != 0;
	return n;
}

/* The records of a whole view; *@out vml_malloc'ed. Return: count or -errno. */
static int parse_all(enum vml_view view, const char *text, struct race_rec **out)
{
	size_t len = strlen(text), max = 1;
	struct race_rec *recs;
	int n;

	for (size_t i = 0; i < len; i++)
		max += text[i] == '\n';
	recs = vml_malloc(max * sizeof(*recs));
	if (!recs)
		return -ENOMEM;
	n = race_parse_read(view, text, len, 0, recs, max);
	if (n < 0) {
		vml_free(recs);
		return n;
	}
	*out = recs;
	return n;
}

/* The form with this maps line, added if new. Return: its index, or NO_VMA (ENOMEM). */
static size_t find_or_add(struct race_contract *c, const struct race_rec *r)
{
	struct cvma *v;

	for (size_t i = 0; i < c->nr_v; i++)
		if (c->v[i].start == r->start && c->v[i].len == r->len &&
		    !memcmp(c->v[i].line, r->text, r->len))
			return i;
	v = vml_grow_array(c->v, &c->cap_v, c->nr_v + 1, sizeof(*v), 64);
	if (!v)
		return NO_VMA;
	c->v = v;
	v = &c->v[c->nr_v];
	memset(v, 0, sizeof(*v));
	v->start = r->start;
	v->end = r->end;
	v->len = r->len;
	v->line = dup_n(r->text, r->len);
	if (!v->line)
		return NO_VMA;
	v->tracked = r->start >= c->lo && r->end <= c->hi;
	v->rss_min = ~0UL;
	return c->nr_v++;
}

/* The form of state @st that starts at @start (a state has one). */
static size_t in_state_at(const struct race_contract *c, const struct cstate *st,
			  unsigned long start)
{
	for (size_t k = 0; k < st->nr; k++)
		if (c->v[st->vma[k]].start == start)
			return st->vma[k];
	return NO_VMA;
}

static int add_smaps(struct race_contract *c, struct cstate *st, const char *smaps,
		     const unsigned char *resident, char *why, size_t whylen)
{
	struct race_rec *recs;
	char buf[200];
	int n = parse_all(VML_VIEW_SMAPS, smaps, &recs), ret = 0;

	if (n < 0)
		return n;
	for (int i = 0; i < n && !ret; i++) {
		const struct race_rec *r = &recs[i];
		const char *bad = r->bad ? r->bad : race_fields_bad(r, false, buf, sizeof(buf));
		size_t k = bad ? NO_VMA : in_state_at(c, st, r->start);
		struct cvma *v = k == NO_VMA ? NULL : &c->v[k];
		unsigned long pages;
		bool seen = false;

		if (!v || v->len != r->len || memcmp(v->line, r->text, r->len)) {
			snprintf(why, whylen, "smaps record %.*s: %s", (int)r->len, r->text,
				 bad ? bad : "not in maps");
			ret = -EINVAL;
			break;
		}
		pages = resident_in(c, resident, v->start, v->end);
		if (v->tracked && r->field[RF_RSS] != pages * (RACE_PAGE / 1024)) {
			snprintf(why, whylen, "smaps %.*s: Rss %lu kB, the residency model says "
				 "%lu kB", (int)r->len, r->text, r->field[RF_RSS],
				 pages * (RACE_PAGE / 1024));
			ret = -EINVAL;
			break;
		}
		for (size_t f = 0; f < v->nr_vmflags; f++)
			seen |= strlen(v->vmflags[f]) == r->vmflags_len &&
				!memcmp(v->vmflags[f], r->vmflags, r->vmflags_len);
		if (seen)
			continue;
		if (v->nr_vmflags == MAX_VMFLAGS) {
			snprintf(why, whylen, "smaps %.*s: more than %d VmFlags variants",
				 (int)r->len, r->text, MAX_VMFLAGS);
			ret = -EINVAL;
			break;
		}
		v->vmflags[v->nr_vmflags] = dup_n(r->vmflags, r->vmflags_len);
		if (!v->vmflags[v->nr_vmflags])
			ret = -ENOMEM;
		else
			v->nr_vmflags++;
	}
	vml_free(recs);
	return ret;
}

static int add_numa(struct race_contract *c, struct cstate *st, const char *numa,
		    const unsigned char *resident, char *why, size_t whylen)
{
	struct race_rec *recs;
	int n = parse_all(VML_VIEW_NUMA_MAPS, numa, &recs), ret = 0;

	if (n < 0)
		return n;
	for (int i = 0; i < n && !ret; i++) {
		const struct race_rec *r = &recs[i];
		size_t k = r->bad ? NO_VMA : in_state_at(c, st, r->start);
		struct cvma *v = k == NO_VMA ? NULL : &c->v[k];

		if (!v) {
			snprintf(why, whylen, "numa_maps line %.*s: %s", (int)r->len, r->text,
				 r->bad ? r->bad : "not in maps");
			ret = -EINVAL;
		} else if (v->tracked && r->pages != resident_in(c, resident, v->start, v->end)) {
			snprintf(why, whylen, "numa_maps %.*s: %lu pages, the residency model says "
				 "%lu", (int)r->len, r->text, r->pages,
				 resident_in(c, resident, v->start, v->end));
			ret = -EINVAL;
		} else if (!v->numa_id) {
			v->numa_id = dup_n(r->id, r->id_len);
			v->numa_len = r->id_len;
			if (!v->numa_id)
				ret = -ENOMEM;
		} else if (v->numa_len != r->id_len || memcmp(v->numa_id, r->id, r->id_len)) {
			snprintf(why, whylen, "numa_maps %.*s: its policy or name changed between "
				 "states", (int)r->len, r->text);
			ret = -EINVAL;
		}
	}
	vml_free(recs);
	return ret;
}

static int add_rollup(struct race_contract *c, struct cstate *st, const char *rollup,
		      char *why, size_t whylen)
{
	struct race_rec *recs;
	char buf[200];
	const char *bad;
	int n = parse_all(VML_VIEW_SMAPS_ROLLUP, rollup, &recs), ret = 0;

	if (n < 0)
		return n;
	bad = n != 1 ? "not one record" : recs[0].bad ? recs[0].bad :
	      race_fields_bad(&recs[0], true, buf, sizeof(buf));
	if (bad) {
		snprintf(why, whylen, "smaps_rollup: %s", bad);
		ret = -EINVAL;
	} else {
		st->rollup_header = dup_n(recs[0].text, recs[0].len);
		st->rollup_rss = recs[0].field[RF_RSS];
		if (!st->rollup_header)
			ret = -ENOMEM;
	}
	vml_free(recs);
	return ret;
}

int race_contract_add_state(struct race_contract *c, const char *maps, const char *smaps,
			    const char *numa, const char *rollup, const unsigned char *resident,
			    char *why, size_t whylen)
{
	struct cstate *st;
	struct race_rec *recs;
	int n, ret = 0;

	if (c->finished)
		return -EINVAL;
	if (c->nr_s == RACE_MAX_STATES)
		return -E2BIG;
	if (c->nr_s && (c->have_smaps != !!smaps || c->have_numa != !!numa ||
			c->have_rollup != !!rollup)) {
		snprintf(why, whylen, "states captured with different views");
		return -EINVAL;
	}
	c->have_smaps = smaps;
	c->have_numa = numa;
	c->have_rollup = rollup;
	st = &c->s[c->nr_s];
	memset(st, 0, sizeof(*st));
	n = parse_all(VML_VIEW_MAPS, maps, &recs);
	if (n < 0)
		return n;
	st->vma = vml_malloc((n + 1) * sizeof(*st->vma));
	st->resident = vml_malloc(c->npages + 1);
	if (!st->vma || !st->resident) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(st->resident, resident, c->npages);
	for (int i = 0; i < n; i++) {
		size_t k;

		if (recs[i].bad || (i && recs[i].start < recs[i - 1].end)) {
			snprintf(why, whylen, "maps line %.*s: %s", (int)recs[i].len, recs[i].text,
				 recs[i].bad ? recs[i].bad : "overlaps the line before");
			ret = -EINVAL;
			goto out;
		}
		k = find_or_add(c, &recs[i]);
		if (k == NO_VMA) {
			ret = -ENOMEM;
			goto out;
		}
		c->v[k].states |= 1u << c->nr_s;
		st->vma[st->nr++] = k;
	}
	if (smaps)
		ret = add_smaps(c, st, smaps, resident, why, whylen);
	if (!ret && numa)
		ret = add_numa(c, st, numa, resident, why, whylen);
	if (!ret && rollup)
		ret = add_rollup(c, st, rollup, why, whylen);
out:
	vml_free(recs);
	if (ret) {
		vml_free(st->vma);
		vml_free(st->resident);
		vml_free(st->rollup_header);
		for (size_t i = 0; i < c->nr_v; i++)
			c->v[i].states &= ~(1u << c->nr_s);
		return ret;
	}
	c->nr_s++;
	return 0;
}

static int cmp_cvma(const void *a, const void *b)
{
	const struct cvma *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return strcmp(x->line, y->line);
}

int race_contract_finish(struct race_contract *c, char *why, size_t whylen)
{
	size_t *inv;
	unsigned long outside = 0, total, lo = 0, hi = 0;

	if (!c->nr_s) {
		snprintf(why, whylen, "no state");
		return -EINVAL;
	}
	/* Sort the forms, remembering where each went, and renumber the states. */
	inv = vml_malloc((c->nr_v + 1) * sizeof(*inv));
	if (!inv)
		return -ENOMEM;
	for (size_t i = 0; i < c->nr_v; i++)
		c->v[i].added = i;
	qsort(c->v, c->nr_v, sizeof(*c->v), cmp_cvma);
	for (size_t i = 0; i < c->nr_v; i++)
		inv[c->v[i].added] = i;
	for (size_t j = 0; j < c->nr_s; j++) {
		struct cstate *st = &c->s[j];

		for (size_t k = 0; k < st->nr; k++) {
			struct cvma *v;
			unsigned long r;

			st->vma[k] = inv[st->vma[k]];
			v = &c->v[st->vma[k]];
			r = resident_in(c, st->resident, v->start, v->end);
			v->rss_min = VML_MIN(v->rss_min, r);
			v->rss_max = VML_MAX(v->rss_max, r);
		}
	}
	vml_free(inv);
	for (size_t i = 0; i < c->nr_v; i++)
		c->max_len = VML_MAX(c->max_len, c->v[i].end - c->v[i].start);

	/* smaps_rollup: what is outside the tracked range must not change. */
	if (c->have_rollup) {
		for (size_t j = 0; j < c->nr_s; j++) {
			total = resident_in(c, c->s[j].resident, c->lo, c->hi) * (RACE_PAGE / 1024);
			if (j == 0) {
				outside = c->s[0].rollup_rss - total;
			} else if (c->s[j].rollup_rss - total != outside) {
				snprintf(why, whylen, "smaps_rollup: Rss %lu kB in state %zu, "
					 "%lu kB in state 0, but the residency model says "
					 "they differ by %ld kB", c->s[j].rollup_rss, j,
					 c->s[0].rollup_rss,
					 (long)total - (long)(c->s[0].rollup_rss - outside));
				return -EINVAL;
			}
		}
		for (size_t p = 0; p < c->npages; p++) {
			bool any = false, all = true;

			for (size_t j = 0; j < c->nr_s; j++) {
				any |= c->s[j].resident[p] != 0;
				all &= c->s[j].resident[p] != 0;
			}
			lo += all;
			hi += any;
		}
		c->rollup_min = outside + lo * (RACE_PAGE / 1024);
		c->rollup_max = outside + hi * (RACE_PAGE / 1024);
	}
	c->finished = true;
	return 0;
}

/* ---- the checker ---- */

/* Does @view show this form? numa_maps has no line for the gate VMA (no mm). */
static bool shown(const struct race_contract *c, enum vml_view view, size_t k)
{
	return view != VML_VIEW_NUMA_MAPS || !c->have_numa || c->v[k].numa_id;
}

/* State @j's first form that ends after @pos, or NO_VMA. */
static size_t first_after(const struct race_contract *c, enum vml_view view, size_t j,
			  unsigned long pos)
{
	const struct cstate *st = &c->s[j];
	size_t lo = 0, hi = st->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->v[st->vma[mid]].end > pos)
			hi = mid;
		else
			lo = mid + 1;
	}
	while (lo < st->nr && !shown(c, view, st->vma[lo]))
		lo++;
	return lo < st->nr ? st->vma[lo] : NO_VMA;
}

static bool vmflags_seen(const struct cvma *v, const struct race_rec *r)
{
	for (size_t f = 0; f < v->nr_vmflags; f++)
		if (strlen(v->vmflags[f]) == r->vmflags_len &&
		    !memcmp(v->vmflags[f], r->vmflags, r->vmflags_len))
			return true;
	return false;
}

/*
 * The forms record @r can be. Sets *@near to a form that matches all but the
 * values (for the message) when the values rule every form out.
 */
static size_t candidates(const struct race_contract *c, enum vml_view view,
			 const struct race_rec *r, size_t *cand, const char **near_why,
			 size_t *near)
{
	size_t lo = 0, hi = c->nr_v, n = 0;

	*near = NO_VMA;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->v[mid].start < r->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < c->nr_v && c->v[i].start == r->start && n < MAX_CANDS; i++) {
		const struct cvma *v = &c->v[i];

		if (view == VML_VIEW_NUMA_MAPS) {
			if (!v->numa_id || v->numa_len != r->id_len ||
			    memcmp(v->numa_id, r->id, r->id_len))
				continue;
			if (v->tracked && (r->pages < v->rss_min || r->pages > v->rss_max)) {
				*near = i;
				*near_why = "its page count";
				continue;
			}
		} else {
			if (v->len != r->len || memcmp(v->line, r->text, r->len))
				continue;
			if (view == VML_VIEW_SMAPS && c->have_smaps && !vmflags_seen(v, r)) {
				*near = i;
				*near_why = "its VmFlags";
				continue;
			}
			if (view == VML_VIEW_SMAPS && v->tracked &&
			    (r->field[RF_RSS] < v->rss_min * (RACE_PAGE / 1024) ||
			     r->field[RF_RSS] > v->rss_max * (RACE_PAGE / 1024))) {
				*near = i;
				*near_why = "its Rss";
				continue;
			}
		}
		cand[n++] = i;
	}
	return n;
}

/* One reachable (form, states) pair after a record. */
struct reach {
	size_t vma;		/* NO_VMA: the start position, before any record */
	uint32_t states;
};

static uint32_t all_states(const struct race_contract *c)
{
	return c->nr_s >= 32 ? ~0u : (1u << c->nr_s) - 1;
}

/*
 * The states in which form @k follows a reachable pair: it is the first form
 * ending after the pair's end. With @same_state only the pair's own states.
 */
static uint32_t follows(const struct race_contract *c, enum vml_view view,
			const struct reach *p, unsigned long pos0, size_t k, bool same_state)
{
	unsigned long pos = p->vma == NO_VMA ? pos0 : c->v[p->vma].end;
	uint32_t mask = c->v[k].states & (same_state ? p->states : all_states(c)), out = 0;

	for (size_t j = 0; mask; j++, mask >>= 1)
		if ((mask & 1) && first_after(c, view, j, pos) == k)
			out |= 1u << j;
	return out;
}

static int fmt_range(char *buf, size_t len, const struct cvma *v)
{
	return snprintf(buf, len, "%lx-%lx", v->start, v->end);
}

/* Why form @k cannot follow a record that ended at @pos (every state considered). */
static enum race_rule classify(const struct race_contract *c, enum vml_view view,
			       unsigned long pos, size_t k, char *why, size_t len)
{
	const struct cvma *v = &c->v[k];
	char r[64];

	fmt_range(r, sizeof(r), v);
	if (v->end <= pos) {
		snprintf(why, len, "%s ends at or before 0x%lx, where the previous record ended",
			 r, pos);
		return RACE_BACKWARDS;
	}
	if (v->start < pos) {
		snprintf(why, len, "%s starts before 0x%lx, where the previous record ended, and "
			 "is in no state the VMA that follows it (not a new form of what was "
			 "shown)", r, pos);
		return RACE_OVERLAP;
	}
	for (size_t i = 0; i < c->nr_v; i++) {
		const struct cvma *w = &c->v[i];

		if (w->start < v->start && w->end > pos && w->states == all_states(c) &&
		    shown(c, view, i)) {
			char wr[64];

			fmt_range(wr, sizeof(wr), w);
			snprintf(why, len, "%s follows a record that ended at 0x%lx, but %s "
				 "existed in every state and was not shown", r, pos, wr);
			return RACE_MISSING;
		}
	}
	snprintf(why, len, "%s follows a record that ended at 0x%lx: the gap 0x%lx-0x%lx "
		 "existed in no state in which %s was there", r, pos, pos, v->start, r);
	return RACE_FAKE_GAP;
}

/* A record no form matches: which rule, and why. */
static void why_unmatched(const struct race_contract *c, enum vml_view view,
			  const struct race_rec *r, size_t near, const char *near_why,
			  struct race_verdict *out)
{
	size_t n = sizeof(out->why);

	out->rule = near != NO_VMA ? RACE_FIELDS : RACE_UNKNOWN;
	if (near != NO_VMA && view == VML_VIEW_SMAPS && !strcmp(near_why, "its Rss"))
		snprintf(out->why, n, "%.*s: Rss %lu kB, but the VMA had %lu-%lu kB resident "
			 "in the states", (int)r->len, r->text, r->field[RF_RSS],
			 c->v[near].rss_min * (RACE_PAGE / 1024),
			 c->v[near].rss_max * (RACE_PAGE / 1024));
	else if (near != NO_VMA)
		snprintf(out->why, n, "%.*s: %s matches the VMA in no state", (int)r->len,
			 r->text, near_why);
	else
		snprintf(out->why, n, "%.*s is no VMA of any state (half-updated?)",
			 (int)r->len, r->text);
}

/* Could the stream end after one of the reachable pairs: no VMA after it in some state? */
static bool ended(const struct race_contract *c, enum vml_view view, const struct reach *prev,
		  size_t nprev, unsigned long pos0, bool per_read)
{
	for (size_t p = 0; p < nprev; p++) {
		unsigned long pos = prev[p].vma == NO_VMA ? pos0 : c->v[prev[p].vma].end;
		uint32_t mask = per_read ? prev[p].states : all_states(c);

		for (size_t j = 0; mask; j++, mask >>= 1)
			if ((mask & 1) && first_after(c, view, j, pos) == NO_VMA)
				return true;
	}
	return false;
}

void race_check_records(const struct race_contract *c, enum vml_view view, bool per_read,
			unsigned long pos0, const struct race_rec *recs, size_t nr, bool eof,
			struct race_verdict *out)
{
	struct reach prev[MAX_CANDS], cur[MAX_CANDS];
	size_t nprev = 1, ncur, cand[MAX_CANDS];
	unsigned int prev_read = recs && nr ? recs[0].read : 0;
	char buf[200];

	memset(out, 0, sizeof(*out));
	prev[0] = (struct reach){ .vma = NO_VMA, .states = all_states(c) };
	for (size_t i = 0; i < nr; i++) {
		const struct race_rec *r = &recs[i];
		const char *near_why = NULL, *bad;
		size_t nc, near;
		bool same_read = i > 0 && r->read == prev_read;
		unsigned long pos = prev[0].vma == NO_VMA ? pos0 : c->v[prev[0].vma].end;

		out->rec = i;
		if (r->bad) {
			out->rule = RACE_MALFORMED;
			snprintf(out->why, sizeof(out->why), "record %zu: %s", i, r->bad);
			return;
		}
		if (view == VML_VIEW_SMAPS &&
		    (bad = race_fields_bad(r, false, buf, sizeof(buf)))) {
			out->rule = RACE_FIELDS;
			snprintf(out->why, sizeof(out->why), "%.*s: %s", (int)r->len, r->text, bad);
			return;
		}
		nc = candidates(c, view, r, cand, &near_why, &near);
		if (!nc) {
			why_unmatched(c, view, r, near, near_why, out);
			return;
		}
		ncur = 0;
		for (size_t k = 0; k < nc; k++) {
			uint32_t m = 0;

			for (size_t p = 0; p < nprev; p++)
				m |= follows(c, view, &prev[p], pos0, cand[k],
					     per_read && same_read);
			if (m)
				cur[ncur++] = (struct reach){ .vma = cand[k], .states = m };
		}
		if (!ncur) {
			bool any = false;

			for (size_t k = 0; k < nc && per_read && same_read && !any; k++)
				for (size_t p = 0; p < nprev && !any; p++)
					any = follows(c, view, &prev[p], pos0, cand[k],
						      false) != 0;
			if (any) {
				out->rule = RACE_TORN_READ;
				snprintf(out->why, sizeof(out->why), "%.*s follows the record "
					 "before it only in another state than the rest of this "
					 "read", (int)r->len, r->text);
			} else {
				out->rule = classify(c, view, pos, cand[0], out->why,
						     sizeof(out->why));
			}
			return;
		}
		/* Allowed, but worth counting: a VMA shown again in a new form. */
		if (c->v[cur[0].vma].start < pos && prev[0].vma != NO_VMA)
			out->note[same_read ? RACE_NOTE_DUP_IN_READ : RACE_NOTE_DUP_ACROSS_READS] =
				true;
		for (size_t k = 0; k < ncur; k++)
			if (cur[k].states & 1)
				break;
			else if (k == ncur - 1)
				out->note[RACE_NOTE_CHANGED] = true;
		memcpy(prev, cur, ncur * sizeof(*cur));
		nprev = ncur;
		prev_read = r->read;
	}
	if (eof && !ended(c, view, prev, nprev, pos0, per_read)) {
		unsigned long pos = prev[0].vma == NO_VMA ? pos0 : c->v[prev[0].vma].end;
		size_t next = first_after(c, view, 0, pos);

		out->rec = nr;
		out->rule = RACE_MISSING;
		snprintf(out->why, sizeof(out->why), "the view ended after 0x%lx, but in no state "
			 "was that the last VMA (the base state has %s next)", pos,
			 next == NO_VMA ? "nothing" : c->v[next].line);
		return;
	}
	out->rule = RACE_OK;
}

void race_check_rollup(const struct race_contract *c, const struct race_rec *recs, size_t nr,
		       struct race_verdict *out)
{
	const struct race_rec *r = recs;
	char buf[200];
	const char *bad;
	bool header = false;

	memset(out, 0, sizeof(*out));
	if (nr != 1 || r->bad) {
		out->rule = RACE_MALFORMED;
		snprintf(out->why, sizeof(out->why), "smaps_rollup: %s",
			 nr != 1 ? "not one record" : r->bad);
		return;
	}
	bad = race_fields_bad(r, true, buf, sizeof(buf));
	if (bad) {
		out->rule = RACE_FIELDS;
		snprintf(out->why, sizeof(out->why), "smaps_rollup: %s", bad);
		return;
	}
	for (size_t j = 0; j < c->nr_s && !header; j++)
		header = c->s[j].rollup_header && strlen(c->s[j].rollup_header) == r->len &&
			 !memcmp(c->s[j].rollup_header, r->text, r->len);
	if (!header) {
		out->rule = RACE_UNKNOWN;
		snprintf(out->why, sizeof(out->why), "smaps_rollup header %.*s is no state's",
			 (int)r->len, r->text);
		return;
	}
	if (r->field[RF_RSS] < c->rollup_min || r->field[RF_RSS] > c->rollup_max) {
		out->rule = RACE_TOTALS;
		snprintf(out->why, sizeof(out->why), "smaps_rollup Rss %lu kB: a walk over the "
			 "states gives %lu-%lu kB (%s)", r->field[RF_RSS], c->rollup_min,
			 c->rollup_max, r->field[RF_RSS] > c->rollup_max ?
			 "counted twice" : "a region missing");
		return;
	}
	if (r->field[RF_RSS] != c->s[0].rollup_rss)
		out->note[RACE_NOTE_CHANGED] = true;
	out->rule = RACE_OK;
}

/* ---- the temporal check ---- */

static bool overlaps(unsigned long s1, unsigned long e1, unsigned long s2, unsigned long e2)
{
	return s1 < e2 && s2 < e1;
}

int race_contract_set_cycle(struct race_contract *c, const struct race_reach *reach,
			    size_t nr_ops)
{
	if (!c->finished || nr_ops != c->nr_s)
		return -EINVAL;
	for (size_t i = 0; i < c->nr_v; i++) {
		struct cvma *v = &c->v[i];

		v->steady = 0;
		for (size_t k = 0; k < nr_ops; k++) {
			uint32_t both = (1u << k) | (1u << ((k + 1) % nr_ops));
			bool hit = false;

			for (int r = 0; r < 2; r++)
				hit |= overlaps(v->start, v->end, reach[k].lo[r], reach[k].hi[r]);
			if ((v->states & both) == both && !hit)
				v->steady |= 1u << k;
		}
	}
	c->have_cycle = true;
	return 0;
}

bool race_contract_knows(const struct race_contract *c, unsigned long start, unsigned long end)
{
	size_t lo = 0, hi = c->nr_v;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->v[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < c->nr_v && c->v[lo].start == start; lo++)
		if (c->v[lo].end == end)
			return true;
	return false;
}

/* What a VMA must have been in to be there throughout @w: states and ops, as masks. */
static void window_masks(const struct race_contract *c, const struct race_window *w,
			 uint32_t *states, uint32_t *ops)
{
	uint64_t n = c->nr_s;

	*states = 0;
	*ops = 0;
	/* a window that saw every op, or a clock gone wrong: every state and op */
	if (w->hi < w->lo || w->hi - w->lo >= 2 * n) {
		*states = *ops = all_states(c);
		return;
	}
	for (uint64_t t = w->lo; t <= w->hi; t++) {
		if (t % 2)
			*ops |= 1u << ((t / 2) % n);	/* op t / 2 under way */
		else
			*states |= 1u << ((t / 2) % n);
	}
}

/*
 * A form that was there, unchanged, throughout @w, ends after @pos and
 * starts before @before: it should have been found from @pos. Return: its
 * index, or NO_VMA.
 */
static size_t skipped_form(const struct race_contract *c, enum vml_view view,
			   const struct race_window *w, unsigned long pos, unsigned long before)
{
	uint32_t states, ops;
	size_t lo = 0, hi = c->nr_v;

	window_masks(c, w, &states, &ops);
	/* the first form starting at or after @before; every candidate is below it */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->v[mid].start < before)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ends: the forms are sorted by start; none this far below can reach @pos. */
	while (lo-- > 0 && c->v[lo].start + c->max_len > pos) {
		const struct cvma *v = &c->v[lo];

		if (v->end > pos && (v->states & states) == states && (v->steady & ops) == ops &&
		    shown(c, view, lo))
			return lo;
	}
	return NO_VMA;
}

/* Where the modifier was at clock @t, in words. */
static int fmt_clock(char *buf, size_t len, uint64_t t)
{
	if (t % 2)
		return snprintf(buf, len, "inside its op %llu", (unsigned long long)(t / 2 + 1));
	return snprintf(buf, len, "after its op %llu", (unsigned long long)(t / 2));
}

static void why_skipped(const struct race_contract *c, const struct race_window *w,
			unsigned long pos, size_t k, const char *next, size_t next_len,
			struct race_verdict *out)
{
	char r[64], lo[40], hi[48];

	fmt_range(r, sizeof(r), &c->v[k]);
	fmt_clock(lo, sizeof(lo), w->lo);
	hi[0] = '\0';
	if (w->hi != w->lo) {
		memcpy(hi, " to ", 5);
		fmt_clock(hi + 4, sizeof(hi) - 4, w->hi);
	}
	out->rule = RACE_SKIPPED;
	snprintf(out->why, sizeof(out->why), "%s was there, unchanged, all the while the reader "
		 "looked up what follows 0x%lx (the modifier %s%s%s), but %.*s came next", r, pos,
		 w->hi != w->lo ? "from " : "", lo, hi, (int)next_len, next);
}

void race_check_lookups(const struct race_contract *c, enum vml_view view, unsigned long pos0,
			const struct race_rec *recs, const struct race_window *win, size_t nr,
			const struct race_window *end, struct race_verdict *out)
{
	unsigned long pos = pos0;
	size_t k;

	memset(out, 0, sizeof(*out));
	out->rule = RACE_OK;
	if (!c->have_cycle)
		return;
	for (size_t i = 0; i < nr; i++) {
		k = skipped_form(c, view, &win[i], pos, recs[i].start);
		if (k != NO_VMA) {
			out->rec = i;
			why_skipped(c, &win[i], pos, k, recs[i].text, recs[i].len, out);
			return;
		}
		pos = recs[i].end;
	}
	if (end && (k = skipped_form(c, view, end, pos, ~0UL)) != NO_VMA) {
		out->rec = nr;
		why_skipped(c, end, pos, k, "the end of the file", strlen("the end of the file"),
			    out);
	}
}
