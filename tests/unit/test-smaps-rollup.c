// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Property: smaps_rollup is the sum of smaps, for random layouts and page
 * states, under both lock policies. Sizes add up exactly; the PSS-derived
 * fields are summed before rounding in the rollup and rounded per VMA in
 * smaps, so the rollup may exceed the sum by less than one kB per VMA; the
 * rollup's Pss_Anon + Pss_File + Pss_Shmem is its Pss up to rounding; its
 * header spans the first VMA's start to the last one's end.
 * The seed is printed (VML_SEED replays a run).
 */
#include <stdio.h>

#include "mm_helpers.h"
#include "tap.h"
#include "util/compiler.h"
#include "util/linux_compat.h"
#include "util/rand.h"

static const char *const exact[] = {
	"Rss", "Shared_Clean", "Shared_Dirty", "Private_Clean", "Private_Dirty", "Referenced",
	"Anonymous", "KSM", "LazyFree", "AnonHugePages", "ShmemPmdMapped", "FilePmdMapped",
	"Shared_Hugetlb", "Private_Hugetlb", "Swap",
};
static const char *const rounded[] = { "Pss", "Pss_Dirty", "SwapPss", "Locked" };

#define NF (ARRAY_LEN(exact) + ARRAY_LEN(rounded))

static int field_index(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_LEN(exact); i++)
		if (strlen(exact[i]) == len && !strncmp(name, exact[i], len))
			return (int)i;
	for (size_t i = 0; i < ARRAY_LEN(rounded); i++)
		if (strlen(rounded[i]) == len && !strncmp(name, rounded[i], len))
			return (int)(ARRAY_LEN(exact) + i);
	return -1;
}

struct sums {
	long v[NF];
	long records;
	unsigned long first, last;	/* address span of the records */
	long pss_parts;			/* rollup: Pss_Anon + Pss_File + Pss_Shmem */
};

/* Parse smaps (many records) or smaps_rollup (one) into field sums. */
static void parse(const char *text, struct sums *s)
{
	const char *line = text;

	memset(s, 0, sizeof(*s));
	while (*line) {
		const char *nl = strchr(line, '\n'), *colon;
		unsigned long a, b;
		int i;

		if (!nl)
			break;
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			if (!s->records++)
				s->first = a;
			s->last = b;
		} else if ((colon = memchr(line, ':', (size_t)(nl - line)))) {
			long v = strtol(colon + 1, NULL, 10);

			i = field_index(line, (size_t)(colon - line));
			if (i >= 0)
				s->v[i] += v;
			if (!strncmp(line, "Pss_Anon:", 9) || !strncmp(line, "Pss_File:", 9) ||
			    !strncmp(line, "Pss_Shmem:", 10))
				s->pss_parts += v;
		}
		line = nl + 1;
	}
}

static struct vml_mm *kids[64];
static int nr_kids;
static unsigned long mapped[16][2];	/* recent mappings, to aim the other ops at */

/* One random operation on the window [BASE, BASE + 32 MiB). */
static void random_op(struct vml_mm *mm, struct vml_file **files, struct vml_rand *rs)
{
	const unsigned long window = 32UL << 20;
	unsigned long addr = BASE + (vml_rand_below(rs, window / PG) * PG);
	unsigned long len = (1 + vml_rand_below(rs, 64)) * PG;
	unsigned long *m = mapped[vml_rand_below(rs, ARRAY_LEN(mapped))];
	int prot = (int[]){ PROT_READ, PROT_READ | PROT_WRITE, PROT_NONE }[vml_rand_below(rs, 3)];
	unsigned int r = (unsigned int)vml_rand_below(rs, 100);
	struct vml_file *f = files[vml_rand_below(rs, 3)];

	if (vml_rand_below(rs, 8) == 0) {
		addr &= ~((2UL << 20) - 1);	/* THP-sized, aligned */
		len = (2UL << 20) + vml_rand_below(rs, 4) * (1UL << 20);
	}
	/* Most ops but mmap aim inside a recent mapping. */
	if (r >= 33 && m[1] && vml_rand_below(rs, 8)) {
		addr = m[0] + vml_rand_below(rs, m[1] / PG) * PG;
		len = VML_MIN(len, m[0] + m[1] - addr);
	}
	if (r < 33) {
		m[0] = addr;
		m[1] = len;
	}
	if (r < 20) {
		may_fail(vml_mmap(mm, addr, len, prot ? prot : PROT_READ,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL));
		if (len >= (2UL << 20))
			may_fail(vml_madvise(mm, addr, len, MADV_HUGEPAGE));
	} else if (r < 30) {
		may_fail(vml_mmap(mm, addr, len, PROT_READ | PROT_WRITE,
				  (vml_rand_below(rs, 2) ? MAP_SHARED : MAP_PRIVATE) | MAP_FIXED, f,
				  vml_rand_below(rs, 8) * PG, NULL));
	} else if (r < 33) {
		may_fail(vml_mmap(mm, addr, len, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL));
	} else if (r < 60) {
		may_fail(vml_touch(mm, addr, len,
				   vml_rand_below(rs, 2) ? VML_TOUCH_WRITE : VML_TOUCH_READ));
	} else if (r < 66) {
		may_fail(vml_mprotect(mm, addr, len, prot));
	} else if (r < 70) {
		may_fail(vml_munmap(mm, addr, len));
	} else if (r < 88) {
		static const int adv[] = { MADV_DONTNEED, MADV_FREE, MADV_COLD, MADV_PAGEOUT,
					   MADV_HUGEPAGE, MADV_WILLNEED };

		may_fail(vml_madvise(mm, addr, len, adv[vml_rand_below(rs, ARRAY_LEN(adv))]));
	} else if (r < 93) {
		if (vml_rand_below(rs, 2))
			may_fail(vml_mlock(mm, addr, len));
		else
			may_fail(vml_munlock(mm, addr, len));
	} else if (r < 96) {
		may_fail(vml_mremap(mm, addr, len, len + PG * vml_rand_below(rs, 4), MREMAP_MAYMOVE,
				    0, NULL));
	} else if (nr_kids < (int)ARRAY_LEN(kids)) {
		if (!vml_fork(mm, &kids[nr_kids]))
			nr_kids++;
	}
}

static bool check(struct vml_mm *mm, enum vml_lock_policy lock, int round)
{
	char *sm = read_view(mm, VML_VIEW_SMAPS, lock, 4096);
	char *ru = read_view(mm, VML_VIEW_SMAPS_ROLLUP, lock, 4096);
	struct sums a, b;
	bool good = true;

	parse(sm, &a);
	parse(ru, &b);
	if (lock == VML_LOCK_VMA)
		tap_diag("round %d: %ld VMAs, Rss %ld kB, Pss %ld kB, Swap %ld kB, AnonHugePages %ld kB",
			 round, a.records, b.v[0], b.v[ARRAY_LEN(exact)], b.v[14], b.v[9]);
	for (size_t i = 0; i < ARRAY_LEN(exact); i++) {
		if (a.v[i] != b.v[i]) {
			tap_diag("round %d policy %d: %s: smaps sum %ld, rollup %ld", round, lock,
				 exact[i], a.v[i], b.v[i]);
			good = false;
		}
	}
	for (size_t i = ARRAY_LEN(exact); i < NF; i++) {
		if (b.v[i] < a.v[i] || b.v[i] >= a.v[i] + (a.records ? a.records : 1)) {
			tap_diag("round %d policy %d: %s: smaps sum %ld, rollup %ld, %ld VMAs", round,
				 lock, rounded[i - ARRAY_LEN(exact)], a.v[i], b.v[i], a.records);
			good = false;
		}
	}
	if (b.pss_parts > b.v[ARRAY_LEN(exact)] || b.pss_parts + 2 < b.v[ARRAY_LEN(exact)]) {
		tap_diag("round %d: Pss_Anon+File+Shmem %ld vs Pss %ld", round, b.pss_parts,
			 b.v[ARRAY_LEN(exact)]);
		good = false;
	}
	if (b.records != 1 || b.first != a.first || b.last != a.last) {
		tap_diag("round %d: rollup header %lx-%lx, smaps spans %lx-%lx", round, b.first,
			 b.last, a.first, a.last);
		good = false;
	}
	free(sm);
	free(ru);
	return good;
}

int main(void)
{
	struct vml_rand rs = vml_rand_init(tap_seed(), 0);
	int rounds = 24;

	for (int round = 0; round < rounds; round++) {
		struct vml_sys_config cfg = { .swap_pages = vml_rand_below(&rs, 2) ? 256 : 0 };
		struct vml_file *files[3];
		struct vml_sys *sys;
		struct vml_mm *mm;
		bool good = true;

		if (vml_sys_create(&cfg, &sys) || vml_mm_create(sys, &mm))
			abort();
		must_succeed(vml_file_create(sys, "/tmp/f1", 64 * PG, 0, &files[0]));
		must_succeed(vml_file_create(sys, "/tmp/f2", 13 * PG + 100, 0, &files[1]));
		must_succeed(vml_file_create(sys, "/dev/shm/s", 32 * PG, VML_FILE_SHMEM, &files[2]));
		nr_kids = 0;
		memset(mapped, 0, sizeof(mapped));
		for (int i = 0; i < 60; i++)
			random_op(mm, files, &rs);
		good &= check(mm, VML_LOCK_MMAP, round);
		good &= check(mm, VML_LOCK_VMA, round);
		if (nr_kids)
			good &= check(kids[0], VML_LOCK_VMA, round);
		ok(good, "round %d: smaps_rollup = sum of smaps (both policies)", round);
		while (nr_kids)
			vml_mm_destroy(kids[--nr_kids]);
		for (int i = 0; i < 3; i++)
			vml_file_put(files[i]);
		vml_mm_destroy(mm);
		vml_sys_destroy(sys);
	}
	return tap_done();
}
