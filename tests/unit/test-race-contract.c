// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The race checker on hand-made states and reads: every rule of the
 * contract (src/race/contract.h) accepts what it must and rejects what it
 * must, with the rule named. The states are the split cycle of the kernel
 * selftest: W, X, Y back to back; X split into X1 X2 X3 by a page of
 * another protection in its middle. The temporal check (race_check_lookups)
 * on the unmap cycle: X unmapped, mapped again.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>	/* before tap.h, which uses clock_gettime */

#include "race/contract.h"
#include "race/record.h"
#include "tap.h"

#define P 0x1000UL
#define LO 0x100000000000UL

struct vma_spec {
	unsigned long start, end;
	const char *perms;
};

static char *maps_text(const struct vma_spec *v, size_t n, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		off += snprintf(buf + off, len - off, "%08lx-%08lx %s 00000000 00:00 0 \n",
				v[i].start, v[i].end, v[i].perms);
	return buf;
}

/* W [LO, LO+3P) rw, X [LO+3P, LO+6P) r--, Y [LO+6P, LO+9P) rw */
static const struct vma_spec base[] = {
	{ LO, LO + 3 * P, "rw-p" },
	{ LO + 3 * P, LO + 6 * P, "r--p" },
	{ LO + 6 * P, LO + 9 * P, "rw-p" },
};
static const struct vma_spec split[] = {
	{ LO, LO + 3 * P, "rw-p" },
	{ LO + 3 * P, LO + 4 * P, "r--p" },
	{ LO + 4 * P, LO + 5 * P, "r-xp" },
	{ LO + 5 * P, LO + 6 * P, "r--p" },
	{ LO + 6 * P, LO + 9 * P, "rw-p" },
};

enum { W, X, Y, X1, X2, X3, WX };

static const struct vma_spec all[] = {
	[W] = { LO, LO + 3 * P, "rw-p" },
	[X] = { LO + 3 * P, LO + 6 * P, "r--p" },
	[Y] = { LO + 6 * P, LO + 9 * P, "rw-p" },
	[X1] = { LO + 3 * P, LO + 4 * P, "r--p" },
	[X2] = { LO + 4 * P, LO + 5 * P, "r-xp" },
	[X3] = { LO + 5 * P, LO + 6 * P, "r--p" },
	[WX] = { LO, LO + 6 * P, "rw-p" },	/* a form no state has */
};

static struct race_contract *make(const char *rollup0, const char *rollup1,
				  const unsigned char *res0, const unsigned char *res1)
{
	static const unsigned char none[9];
	struct race_contract *c;
	char buf[1024], why[400];
	int ret;

	if (race_contract_create(LO, LO + 9 * P, &c))
		return NULL;
	ret = race_contract_add_state(c, maps_text(base, 3, buf, sizeof(buf)), NULL, NULL,
				      rollup0, res0 ? res0 : none, why, sizeof(why));
	if (!ret)
		ret = race_contract_add_state(c, maps_text(split, 5, buf, sizeof(buf)), NULL,
					      NULL, rollup1, res1 ? res1 : none, why, sizeof(why));
	if (!ret)
		ret = race_contract_finish(c, why, sizeof(why));
	if (ret) {
		tap_diag("contract: %d %s", ret, why);
		race_contract_destroy(c);
		return NULL;
	}
	return c;
}

/*
 * Check a stream given as form indices; a negative index -k starts read k
 * (reads are numbered from 0; the stream starts in read 0).
 */
static struct race_verdict check(struct race_contract *c, bool per_read, bool eof,
				 const int *forms, size_t n)
{
	static char text[4096];
	struct race_rec recs[32];
	struct race_verdict v;
	size_t nr = 0, off = 0;
	unsigned int read = 0;

	for (size_t i = 0; i < n; i++) {
		const struct vma_spec *s;
		size_t len;
		int k;

		if (forms[i] < 0) {
			read = -forms[i];
			continue;
		}
		s = &all[forms[i]];
		len = snprintf(text + off, sizeof(text) - off, "%08lx-%08lx %s 00000000 00:00 0 \n",
			       s->start, s->end, s->perms);
		k = race_parse_read(VML_VIEW_MAPS, text + off, len, read, recs + nr, 32 - nr);
		nr += k > 0 ? k : 0;
		off += len;
	}
	race_check_records(c, VML_VIEW_MAPS, per_read, 0, recs, nr, eof, &v);
	return v;
}

#define CHECK(c, per_read, eof, want, desc, ...)                                        \
	({                                                                             \
		const int f_[] = { __VA_ARGS__ };                                      \
		struct race_verdict v_ = check(c, per_read, eof, f_, ARRAY_N(f_));     \
		if (!is_int(v_.rule, want, "%s: %s", desc, race_rule_name(want)))       \
			tap_diag("why: %s", v_.why);                                   \
		v_;                                                                    \
	})
#define ARRAY_N(a) (sizeof(a) / sizeof((a)[0]))

static void test_records(void)
{
	struct race_contract *c = make(NULL, NULL, NULL, NULL);
	struct race_verdict v;

	if (!ok(c != NULL, "contract built"))
		return;
	CHECK(c, false, true, RACE_OK, "the base state, to the end", W, X, Y);
	CHECK(c, false, true, RACE_OK, "the split state", W, X1, X2, X3, Y);
	v = CHECK(c, false, false, RACE_OK, "split pieces, then the merged VMA", W, X1, X2, X, Y);
	ok(v.note[RACE_NOTE_DUP_IN_READ] && v.note[RACE_NOTE_CHANGED],
	   "... noted as shown twice within a read");
	v = CHECK(c, false, false, RACE_OK, "the same across two reads", W, X1, -1, X, Y);
	ok(v.note[RACE_NOTE_DUP_ACROSS_READS], "... noted as shown twice across reads");
	CHECK(c, false, false, RACE_FAKE_GAP, "a piece missing: a gap that never was", W, X1,
	      X3, Y);
	CHECK(c, false, false, RACE_FAKE_GAP, "the whole of X missing", W, Y);
	CHECK(c, false, false, RACE_MISSING, "W, there in every state, missing", X, Y);
	CHECK(c, false, true, RACE_MISSING, "the view ends before Y", W, X);
	CHECK(c, false, false, RACE_BACKWARDS, "a piece after the merged VMA", W, X, X1);
	CHECK(c, false, false, RACE_UNKNOWN, "a form no state has (half-updated)", WX, Y);
	CHECK(c, true, false, RACE_TORN_READ, "per-read: split pieces and the merged VMA in one "
	      "read", W, X1, X2, X, Y);
	CHECK(c, true, false, RACE_OK, "per-read: the same across two reads", W, X1, X2, -1, X,
	      Y);
	CHECK(c, true, false, RACE_OK, "per-read: each read one state", W, X, -1, Y);
	race_contract_destroy(c);
}

/* The rule @text, all of @view in one read (@eof: to its end), breaks under @c; or RACE_OK. */
static enum race_rule one_read(struct race_contract *c, enum vml_view view, const char *text,
			       bool eof)
{
	struct race_rec recs[8];
	struct race_verdict v;
	int n = race_parse_read(view, text, strlen(text), 0, recs, 8);

	race_check_records(c, view, false, 0, recs, n, eof, &v);
	return v.rule;
}

static void test_malformed_and_fields(void)
{
	struct race_contract *c = make(NULL, NULL, NULL, NULL);
	static const char smaps_fmt[] =
		"%08lx-%08lx rw-p 00000000 00:00 0 \n"
		"Size:                 %lu kB\n"
		"KernelPageSize:        4 kB\nMMUPageSize:           4 kB\n"
		"Rss:                  %lu kB\nPss:                  %lu kB\n"
		"Pss_Dirty:            0 kB\nShared_Clean:         0 kB\n"
		"Shared_Dirty:         0 kB\nPrivate_Clean:        0 kB\n"
		"Private_Dirty:        %lu kB\nReferenced:           0 kB\n"
		"Anonymous:            0 kB\nKSM:                  0 kB\n"
		"LazyFree:             0 kB\nAnonHugePages:        0 kB\n"
		"ShmemPmdMapped:       0 kB\nFilePmdMapped:        0 kB\n"
		"Shared_Hugetlb:       0 kB\nPrivate_Hugetlb:      0 kB\n"
		"Swap:                 0 kB\nSwapPss:              0 kB\n"
		"%s"
		"THPeligible:          0\nVmFlags: rd wr mr mw me ac \n";
	char text[2048];

	if (!ok(c != NULL, "contract built"))
		return;
	strcpy(text, "100000000000-100000003000 rw-p 00000000 00:00 0 \n100000003000-10000");
	is_int(one_read(c, VML_VIEW_MAPS, text, false), RACE_MALFORMED,
	       "a read that ends inside a line: malformed");

	snprintf(text, sizeof(text), smaps_fmt, LO, LO + 3 * P, 12UL, 0UL, 0UL, 0UL,
		 "Locked:               0 kB\n");
	is_int(one_read(c, VML_VIEW_SMAPS, text, false), RACE_OK, "a consistent smaps record");
	snprintf(text, sizeof(text), smaps_fmt, LO, LO + 3 * P, 8UL, 0UL, 0UL, 0UL,
		 "Locked:               0 kB\n");
	is_int(one_read(c, VML_VIEW_SMAPS, text, false), RACE_FIELDS,
	       "smaps: Size unlike end - start");
	snprintf(text, sizeof(text), smaps_fmt, LO, LO + 3 * P, 12UL, 4UL, 8UL, 4UL,
		 "Locked:               0 kB\n");
	is_int(one_read(c, VML_VIEW_SMAPS, text, false), RACE_FIELDS, "smaps: Pss > Rss");
	snprintf(text, sizeof(text), smaps_fmt, LO, LO + 3 * P, 12UL, 4UL, 4UL, 4UL, "");
	is_int(one_read(c, VML_VIEW_SMAPS, text, false), RACE_FIELDS,
	       "smaps: the field list incomplete (no Locked)");
	snprintf(text, sizeof(text), smaps_fmt, LO, LO + 3 * P, 12UL, 4UL, 4UL, 4UL,
		 "Locked:               0 kB\n");
	*strstr(text, "VmFlags") = '\0';
	is_int(one_read(c, VML_VIEW_SMAPS, text, false), RACE_MALFORMED,
	       "smaps: a record cut short");
	race_contract_destroy(c);
}

static void test_numa(void)
{
	struct race_contract *c;
	char maps[1024], why[400], text[256];
	static const unsigned char none[9];

	race_contract_create(LO, LO + 9 * P, &c);
	snprintf(text, sizeof(text), "%lx default\n%lx default\n%lx default\n", LO, LO + 3 * P,
		 LO + 6 * P);
	race_contract_add_state(c, maps_text(base, 3, maps, sizeof(maps)), NULL, text, NULL,
				none, why, sizeof(why));
	snprintf(text, sizeof(text), "%lx default\n%lx default\n%lx default\n%lx default\n"
		 "%lx default\n", LO, LO + 3 * P, LO + 4 * P, LO + 5 * P, LO + 6 * P);
	ok(!race_contract_add_state(c, maps_text(split, 5, maps, sizeof(maps)), NULL, text, NULL,
				    none, why, sizeof(why)) &&
	   !race_contract_finish(c, why, sizeof(why)), "numa contract built");
	/* X or X1 at LO+3P: either reading makes the stream legal */
	snprintf(text, sizeof(text), "%lx default\n%lx default\n%lx default\n", LO, LO + 3 * P,
		 LO + 6 * P);
	is_int(one_read(c, VML_VIEW_NUMA_MAPS, text, true), RACE_OK,
	       "numa_maps: an ambiguous start resolved by what follows");
	snprintf(text, sizeof(text), "%lx default\n%lx default\n%lx default\n%lx default\n", LO,
		 LO + 4 * P, LO + 3 * P, LO + 6 * P);
	is_int(one_read(c, VML_VIEW_NUMA_MAPS, text, true), RACE_FAKE_GAP,
	       "numa_maps: X2 right after W is a gap that never was");
	snprintf(text, sizeof(text), "%lx default anon=2 N0=2 kernelpagesize_kB=4\n", LO);
	is_int(one_read(c, VML_VIEW_NUMA_MAPS, text, false), RACE_FIELDS,
	       "numa_maps: pages the VMA never had");
	race_contract_destroy(c);
}

static void test_rollup(void)
{
	static const char fmt[] =
		"%08lx-%08lx ---p 00000000 00:00 0                          [rollup]\n"
		"Rss:                 %3lu kB\nPss:                 %3lu kB\n"
		"Pss_Dirty:           %3lu kB\nPss_Anon:            %3lu kB\n"
		"Pss_File:              0 kB\nPss_Shmem:             0 kB\n"
		"Shared_Clean:          0 kB\nShared_Dirty:          0 kB\n"
		"Private_Clean:         0 kB\nPrivate_Dirty:       %3lu kB\n"
		"Referenced:          %3lu kB\nAnonymous:           %3lu kB\n"
		"KSM:                   0 kB\nLazyFree:              0 kB\n"
		"AnonHugePages:         0 kB\nShmemPmdMapped:        0 kB\n"
		"FilePmdMapped:         0 kB\nShared_Hugetlb:        0 kB\n"
		"Private_Hugetlb:       0 kB\nSwap:                  0 kB\n"
		"SwapPss:               0 kB\nLocked:                0 kB\n";
	/* W resident in both states; X's middle page only in the base state */
	static const unsigned char res0[9] = { 1, 1, 1, 0, 1, 0, 0, 0, 0 };
	static const unsigned char res1[9] = { 1, 1, 1, 0, 0, 0, 0, 0, 0 };
	char r0[2048], r1[2048], text[2048];
	struct race_contract *c;
	struct race_rec recs[4];
	struct race_verdict v;
	unsigned long kb;
	int n;

#define ROLLUP(buf, k) snprintf(buf, sizeof(buf), fmt, LO, LO + 9 * P, k, k, k, k, k, k, k)
	ROLLUP(r0, 16UL);
	ROLLUP(r1, 12UL);
	c = make(r0, r1, res0, res1);
	if (!ok(c != NULL, "rollup contract built"))
		return;
	for (kb = 8; kb <= 20; kb += 4) {
		ROLLUP(text, kb);
		n = race_parse_read(VML_VIEW_SMAPS_ROLLUP, text, strlen(text), 0, recs, 4);
		race_check_rollup(c, recs, n, &v);
		is_int(v.rule, kb == 12 || kb == 16 ? RACE_OK : RACE_TOTALS,
		       "rollup Rss %lu kB (a walk gives 12-16)", kb);
	}
	snprintf(text, sizeof(text), fmt, LO, LO + 9 * P, 12UL, 16UL, 12UL, 12UL, 12UL, 12UL,
		 12UL);
	n = race_parse_read(VML_VIEW_SMAPS_ROLLUP, text, strlen(text), 0, recs, 4);
	race_check_rollup(c, recs, n, &v);
	is_int(v.rule, RACE_FIELDS, "rollup Pss > Rss");
	race_contract_destroy(c);
	/* a residency model that disagrees with the rollup is refused */
	ROLLUP(r1, 16UL);
	ok(make(r0, r1, res0, res1) == NULL, "a rollup the residency model cannot explain");
}

/*
 * One lookup stream W, then @next, with @next looked up in clock window
 * [@lo, @hi]; @end: the end of the file follows, looked up in [@lo, @hi].
 */
static struct race_verdict lookups(struct race_contract *c, int next, uint64_t lo, uint64_t hi,
				   bool end)
{
	char text[256];
	struct race_rec recs[2];
	struct race_window win[2] = { { 0, 0 }, { lo, hi } }, w = { lo, hi };
	struct race_verdict v;
	size_t off = 0;
	int nr = 0, forms[2] = { W, next };

	for (int i = 0; i < (next < 0 ? 1 : 2); i++) {
		const struct vma_spec *s = &all[forms[i]];
		size_t len = snprintf(text + off, sizeof(text) - off,
				      "%08lx-%08lx %s 00000000 00:00 0 \n", s->start, s->end,
				      s->perms);
		int k = race_parse_read(VML_VIEW_MAPS, text + off, len, 0, recs + nr, 2 - nr);

		nr += k > 0 ? k : 0;
		off += len;
	}
	if (end)
		win[0] = w;
	race_check_lookups(c, VML_VIEW_MAPS, 0, recs, win, nr, end ? &w : NULL, &v);
	return v;
}

static void test_lookups(void)
{
	static const unsigned char none[9];
	static const struct vma_spec gone[] = {
		{ LO, LO + 3 * P, "rw-p" },
		{ LO + 6 * P, LO + 9 * P, "rw-p" },
	};
	/* op 0 unmaps X, op 1 maps it again */
	const struct race_reach reach[2] = {
		{ .lo = { LO + 3 * P }, .hi = { LO + 6 * P } },
		{ .lo = { LO + 3 * P }, .hi = { LO + 6 * P } },
	};
	struct race_contract *c;
	struct race_verdict v;
	char buf[1024], why[400];
	int ret;

	if (race_contract_create(LO, LO + 9 * P, &c))
		return;
	ret = race_contract_add_state(c, maps_text(base, 3, buf, sizeof(buf)), NULL, NULL, NULL,
				      none, why, sizeof(why));
	if (!ret)
		ret = race_contract_add_state(c, maps_text(gone, 2, buf, sizeof(buf)), NULL, NULL,
					      NULL, none, why, sizeof(why));
	if (!ret)
		ret = race_contract_finish(c, why, sizeof(why));
	if (!ok(!ret, "the unmap cycle's contract (%s)", ret ? why : "ok"))
		goto out;
	v = lookups(c, Y, 4, 4, false);
	is_int(v.rule, RACE_OK, "no cycle given: nothing checked");
	is_int(race_contract_set_cycle(c, reach, 1), -EINVAL, "one op for two states: refused");
	is_int(race_contract_set_cycle(c, reach, 2), 0, "the cycle");
	v = lookups(c, Y, 2, 2, false);
	is_int(v.rule, RACE_OK, "W, Y looked up after op 1 (X unmapped)");
	v = lookups(c, Y, 1, 3, false);
	is_int(v.rule, RACE_OK, "W, Y looked up while ops 1-2 ran (X unmapped meanwhile)");
	v = lookups(c, Y, 4, 5, false);
	is_int(v.rule, RACE_OK, "W, Y looked up from after op 2 into op 3 (X being unmapped)");
	v = lookups(c, Y, 4, 4, false);
	if (!is_int(v.rule, RACE_SKIPPED, "W, Y looked up after op 2 (X mapped): X skipped"))
		tap_diag("why: %s", v.why);
	is_int((int)v.rec, 1, "... at Y");
	ok(strstr(v.why, "100000003000-100000006000 was there") != NULL, "... X named (%s)",
	   v.why);
	v = lookups(c, X, 0, 100, false);
	is_int(v.rule, RACE_OK, "W, X: nothing between them");
	v = lookups(c, -1, 0, 0, true);
	is_int(v.rule, RACE_SKIPPED, "W, then the end of the file: X and Y skipped");
	is_int((int)v.rec, 1, "... at the end");
	v = lookups(c, Y, 0, 8, false);
	is_int(v.rule, RACE_OK, "a window over whole cycles: X was not there throughout");
out:
	race_contract_destroy(c);
}

int main(void)
{
	test_records();
	test_malformed_and_fields();
	test_numa();
	test_rollup();
	test_lookups();
	return tap_done();
}
