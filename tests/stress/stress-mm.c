// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stress: writers split, merge, map, unmap, remap and fault an address
 * space while readers read its maps under both lock policies with random
 * read() sizes. Every read is checked:
 *   - every line is well formed and its range is sane;
 *   - line ends strictly increase (positions never go backwards);
 *   - every "stable" VMA (never changed during the run) appears exactly
 *     once, with its exact text: nothing mapped for the whole walk is missed;
 *   - other lines lie in the churned region and carry a permission the
 *     writers can produce.
 * After the threads join, the two policies must agree and the VMA count must
 * match. The seed is printed; VML_SEED replays a run's random choices.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "mm_helpers.h"
#include "run_threads.h"
#include "tap.h"
#include "util/compiler.h"
#include "util/rand.h"

#define SLOT_PAGES 4
#define GROUP 8			/* every GROUP-th slot is stable */
#define NSLOTS 256
#define NSTABLE (NSLOTS / GROUP + 1)	/* one more closes the last zone */
#define NWRITERS 2
#define NREADERS 2

static struct vml_sys *sys;
static struct vml_mm *mm;
static uint64_t seed;
static atomic_bool stop;
static atomic_ulong reads, ops, violations;
static char stable_line[NSTABLE][128];

static unsigned long slot_addr(int s)
{
	return BASE + (unsigned long)s * SLOT_PAGES * PG;
}

static void report(const char *what, const char *text, size_t len)
{
	if (atomic_fetch_add(&violations, 1) < 3) {
		printf("# violation: %s\n# --- read ---\n", what);
		fwrite(text, 1, len > 4000 ? 4000 : len, stdout);
		printf("\n# ---\n");
	}
}

static void check_maps(const char *text, size_t len)
{
	int seen[NSTABLE] = { 0 };
	unsigned long prev_end = 0;
	const char *p = text, *nl;

	for (; p < text + len; p = nl + 1) {
		unsigned long start, end, off, ino;
		unsigned int maj, min;
		char perms[5], lbuf[256];
		size_t ll;

		nl = memchr(p, '\n', (size_t)(text + len - p));
		if (!nl) {
			report("unterminated line", text, len);
			return;
		}
		ll = (size_t)(nl - p + 1);
		if (ll >= sizeof(lbuf)) {
			report("long line", text, len);
			return;
		}
		memcpy(lbuf, p, ll);
		lbuf[ll] = 0;
		if (sscanf(lbuf, "%lx-%lx %4s %lx %x:%x %lu ", &start, &end, perms, &off, &maj, &min,
			   &ino) != 7 || start >= end || (start | end) & (PG - 1)) {
			report("malformed line", text, len);
			return;
		}
		if (end <= prev_end) {
			report("line ends went backwards", text, len);
			return;
		}
		prev_end = end;
		if (start >= BASE && start <= slot_addr(NSLOTS) &&
		    ((start - BASE) / (SLOT_PAGES * PG)) % GROUP == 0 &&
		    (start - BASE) % (SLOT_PAGES * PG) == 0 && !strcmp(perms, "r-xp")) {
			int g = (int)((start - BASE) / (SLOT_PAGES * PG) / GROUP);

			if (strcmp(lbuf, stable_line[g])) {
				report("a stable VMA changed", text, len);
				return;
			}
			seen[g]++;
		} else if (start < BASE || end > slot_addr(NSLOTS) || strchr(perms, 'x')) {
			report("a line outside what writers make", text, len);
			return;
		}
	}
	for (int g = 0; g < NSTABLE; g++) {
		if (seen[g] != 1) {
			report("a stable VMA missing or repeated", text, len);
			return;
		}
	}
}

static void *reader(void *arg)
{
	struct vml_rand r = vml_rand_init(seed, 100 + (uintptr_t)arg);
	size_t cap = 1 << 20;
	char *buf = malloc(cap);

	while (!atomic_load(&stop)) {
		enum vml_lock_policy lock = vml_rand_below(&r, 2) ? VML_LOCK_VMA : VML_LOCK_MMAP;
		size_t chunk = 64 + vml_rand_below(&r, 8192), len = 0;
		struct vml_reader *rd;
		ssize_t n;

		if (vml_reader_open(mm, VML_VIEW_MAPS, lock, &rd))
			abort();
		while (len + chunk < cap && (n = vml_reader_read(rd, buf + len, chunk)) > 0)
			len += (size_t)n;
		vml_reader_close(rd);
		check_maps(buf, len);
		atomic_fetch_add(&reads, 1);
	}
	free(buf);
	return NULL;
}

/* A random page range inside one churned zone (the slots between two stable ones). */
static void pick_range(struct vml_rand *r, unsigned long *a, unsigned long *len)
{
	int group = (int)vml_rand_below(r, NSLOTS / GROUP);
	unsigned long zstart = slot_addr(group * GROUP + 1), zpages = (GROUP - 1) * SLOT_PAGES;
	unsigned long first = vml_rand_below(r, zpages);
	unsigned long n = 1 + vml_rand_below(r, VML_MIN(zpages - first, 6));

	*a = zstart + first * PG;
	*len = n * PG;
}

static void *writer(void *arg)
{
	struct vml_rand r = vml_rand_init(seed, 200 + (uintptr_t)arg);
	static const int prots[] = { PROT_READ, PROT_READ | PROT_WRITE, PROT_NONE };

	while (!atomic_load(&stop)) {
		unsigned long a, len, a2, len2;
		int prot = prots[vml_rand_below(&r, 3)];

		pick_range(&r, &a, &len);
		switch (vml_rand_below(&r, 7)) {
		case 0:
			map_anon(mm, a, len, prot);
			break;
		case 1:
			may_fail(vml_munmap(mm, a, len));
			break;
		case 2:
		case 3:
			may_fail(vml_mprotect(mm, a, len, prot));
			break;
		case 4:
			pick_range(&r, &a2, &len2);
			/* Shrink or grow in place (never MAYMOVE: moves would leave the region). */
			may_fail(vml_mremap(mm, a, len, len2, 0, 0, NULL));
			break;
		case 5:
			may_fail(vml_madvise(mm, a, len, MADV_DONTNEED));
			break;
		case 6:
			may_fail(vml_touch(mm, a, len,
					   vml_rand_below(&r, 2) ? VML_TOUCH_WRITE : VML_TOUCH_READ));
			break;
		}
		atomic_fetch_add(&ops, 1);
	}
	return NULL;
}

int main(void)
{
	double secs = tap_stress_seconds(3);
	struct vml_mm_stats st;
	char *a, *b;

	seed = tap_seed();
	if (vml_sys_create(NULL, &sys) || vml_mm_create(sys, &mm))
		return 1;
	for (int g = 0; g < NSTABLE; g++) {
		unsigned long s = slot_addr(g * GROUP);

		if (map_anon(mm, s, SLOT_PAGES * PG, PROT_READ | PROT_EXEC))
			return 1;
		snprintf(stable_line[g], sizeof(stable_line[g]), "%08lx-%08lx r-xp 00000000 00:00 0 \n",
			 s, s + SLOT_PAGES * PG);
	}
	run_threads((const struct thread_group[]){ { reader, NREADERS }, { writer, NWRITERS } }, 2,
		    secs, &stop);

	vml_mm_stats(mm, &st);
	tap_diag("%lu reads, %lu ops; vma locks: %" PRIu64 " ok, %" PRIu64 " abort, %" PRIu64
		 " miss; %" PRIu64 " mmap_lock fallbacks; %" PRIu64 " faults (%" PRIu64 " VMA-locked)",
		 atomic_load(&reads), atomic_load(&ops), st.vma_lock_success, st.vma_lock_abort,
		 st.vma_lock_miss, st.proc_mmap_fallbacks, st.faults, st.faults_vma_locked);
	ok(atomic_load(&reads) > 0 && atomic_load(&ops) > 0, "readers and writers made progress");
	is_int(atomic_load(&violations), 0, "every read was one the kernel's contract allows");

	a = read_view(mm, VML_VIEW_MAPS, VML_LOCK_VMA, 4096);
	b = read_view(mm, VML_VIEW_MAPS, VML_LOCK_MMAP, 333);
	is_str(a, b, "quiescent: both policies read the same text");
	check_maps(a, strlen(a));
	is_int(atomic_load(&violations), 0, "the final layout is consistent");
	vml_mm_stats(mm, &st);
	is_int(st.map_count, count_lines(a), "map_count matches the lines of maps");
	free(a);
	free(b);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
	return tap_done();
}
