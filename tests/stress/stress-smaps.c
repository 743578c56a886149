// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stress: writers map, unmap, protect, advise (dontneed, free, cold,
 * pageout, hugepage), lock, remap, fork and fault an address space with
 * anonymous, file, shmem and huge pages (and swap), while readers read
 * smaps, numa_maps and smaps_rollup under both lock policies with random
 * read() sizes. The page walks run against concurrent faults, zaps, splits
 * and reclaim, under the VMA lock alone (policy vma) or mmap_lock. Every
 * read is checked:
 *   - smaps records are whole (the 25 lines, in order) and self-consistent
 *     (Shared_* + Private_* = Rss, Pss <= Rss, Anonymous <= Rss, ...),
 *     their ends strictly increase;
 *   - numa_maps lines and the rollup are well formed.
 * After the threads join, smaps_rollup must equal the sum of smaps. The
 * seed is printed; VML_SEED replays the random choices (not the timing).
 * $VML_I_MMAP_ORDER=pre runs it with seed 001's old i_mmap order.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "mm_helpers.h"
#include "run_threads.h"
#include "tap.h"
#include "util/compiler.h"
#include "util/linux_compat.h"
#include "util/rand.h"

#define NWRITERS 2
#define NREADERS 2
#define WINDOW (32UL << 20)

static struct vml_sys *sys;
static struct vml_mm *mm;
static struct vml_file *files[3];
static uint64_t seed;
static atomic_bool stop;
static atomic_ulong reads, ops, violations;

static const char *const smaps_fields[] = {
	"Size", "KernelPageSize", "MMUPageSize", "Rss", "Pss", "Pss_Dirty", "Shared_Clean",
	"Shared_Dirty", "Private_Clean", "Private_Dirty", "Referenced", "Anonymous", "KSM",
	"LazyFree", "AnonHugePages", "ShmemPmdMapped", "FilePmdMapped", "Shared_Hugetlb",
	"Private_Hugetlb", "Swap", "SwapPss", "Locked", "THPeligible",
};

static void report(const char *what, const char *text, size_t len)
{
	if (atomic_fetch_add(&violations, 1) < 3) {
		printf("# violation: %s\n# --- read ---\n", what);
		fwrite(text, 1, len > 3000 ? 3000 : len, stdout);
		printf("\n# ---\n");
	}
}

/* One smaps record at *p; advances *p past it. Return false if malformed. */
static bool check_record(const char **p, const char *end, unsigned long *prev_end)
{
	unsigned long start, vend, v[ARRAY_LEN(smaps_fields)];
	const char *q = *p;

	if (sscanf(q, "%lx-%lx ", &start, &vend) != 2 || start >= vend || vend <= *prev_end)
		return false;
	*prev_end = vend;
	q = memchr(q, '\n', (size_t)(end - q));
	for (size_t i = 0; q && i < ARRAY_LEN(smaps_fields); i++) {
		size_t n = strlen(smaps_fields[i]);

		q++;
		if (end - q < (long)n + 1 || strncmp(q, smaps_fields[i], n) || q[n] != ':')
			return false;
		v[i] = strtoul(q + n + 1, NULL, 10);
		q = memchr(q, '\n', (size_t)(end - q));
	}
	if (!q || end - q < 10 || strncmp(q + 1, "VmFlags: ", 9))
		return false;
	q = memchr(q + 1, '\n', (size_t)(end - q - 1));
	if (!q)
		return false;
	*p = q + 1;
	/* Size, Rss, Pss, Shared/Private, Anonymous, LazyFree, AnonHugePages, Locked. */
	return v[3] <= v[0] && v[4] <= v[3] && v[6] + v[7] + v[8] + v[9] == v[3] &&
	       v[11] <= v[3] && v[13] <= v[11] && v[14] <= v[11] && v[21] <= v[4] && v[1] == 4;
}

static void check_smaps(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	unsigned long prev_end = 0;

	while (p < end)
		if (!check_record(&p, end, &prev_end)) {
			report("smaps record", text, len);
			return;
		}
}

static void check_numa(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		unsigned long start;
		char pol[16];

		if (!nl || sscanf(p, "%lx %15s", &start, pol) != 2 || strcmp(pol, "default") ||
		    (start & (PG - 1))) {
			report("numa_maps line", text, len);
			return;
		}
		p = nl + 1;
	}
}

static void check_rollup(const char *text, size_t len)
{
	if (len < 100 || !strstr(text, " [rollup]\nRss:") || !strstr(text, "\nLocked:") ||
	    text[len - 1] != '\n')
		report("smaps_rollup", text, len);
}

static void *reader(void *arg)
{
	struct vml_rand r = vml_rand_init(seed, 100 + (uintptr_t)arg);
	size_t cap = 1 << 20;
	char *buf = malloc(cap);

	while (!atomic_load(&stop)) {
		static const enum vml_view views[] = { VML_VIEW_SMAPS, VML_VIEW_NUMA_MAPS,
						       VML_VIEW_SMAPS_ROLLUP };
		enum vml_view view = views[vml_rand_below(&r, 3)];
		enum vml_lock_policy lock = vml_rand_below(&r, 2) ? VML_LOCK_VMA : VML_LOCK_MMAP;
		size_t chunk = 1 + vml_rand_below(&r, 8192), len = 0;
		struct vml_reader *rd;
		ssize_t n;

		if (vml_reader_open(mm, view, lock, &rd))
			continue;
		if (vml_rand_below(&r, 4) == 0)
			vml_reader_set_flags(rd, VML_READER_NOSTEAL);
		while (len + chunk < cap && (n = vml_reader_read(rd, buf + len, chunk)) > 0)
			len += (size_t)n;
		vml_reader_close(rd);
		/* A record split across read() calls may repeat; check single reads only. */
		if (chunk >= 4096 || view == VML_VIEW_SMAPS_ROLLUP) {
			if (view == VML_VIEW_SMAPS)
				check_smaps(buf, len);
			else if (view == VML_VIEW_NUMA_MAPS)
				check_numa(buf, len);
			else
				check_rollup(buf, len);
		}
		atomic_fetch_add(&reads, 1);
	}
	free(buf);
	return NULL;
}

static void *writer(void *arg)
{
	struct vml_rand r = vml_rand_init(seed, 200 + (uintptr_t)arg);
	unsigned long base = BASE + (uintptr_t)arg * WINDOW;

	while (!atomic_load(&stop)) {
		unsigned long addr = base + vml_rand_below(&r, WINDOW / PG) * PG;
		unsigned long len = (1 + vml_rand_below(&r, 32)) * PG;
		unsigned int op = (unsigned int)vml_rand_below(&r, 100);
		struct vml_file *f = files[vml_rand_below(&r, 3)];
		struct vml_mm *child;

		if (vml_rand_below(&r, 8) == 0) {
			addr &= ~((2UL << 20) - 1);
			len = 2UL << 20;
		}
		if (op < 15) {
			map_anon(mm, addr, len, PROT_READ | PROT_WRITE);
			if (len >= (2UL << 20))
				may_fail(vml_madvise(mm, addr, len, MADV_HUGEPAGE));
		} else if (op < 22) {
			may_fail(vml_mmap(mm, addr, len, PROT_READ | PROT_WRITE,
					  (vml_rand_below(&r, 2) ? MAP_SHARED : MAP_PRIVATE) | MAP_FIXED,
					  f, vml_rand_below(&r, 16) * PG, NULL));
		} else if (op < 55) {
			may_fail(vml_touch(mm, addr, len, vml_rand_below(&r, 2)));
		} else if (op < 62) {
			may_fail(vml_mprotect(mm, addr, len, vml_rand_below(&r, 2) ? PROT_READ :
						  PROT_READ | PROT_WRITE));
		} else if (op < 68) {
			may_fail(vml_munmap(mm, addr, len));
		} else if (op < 88) {
			static const int adv[] = { MADV_DONTNEED, MADV_FREE, MADV_COLD, MADV_PAGEOUT,
						   MADV_WILLNEED };

			may_fail(vml_madvise(mm, addr, len,
					     adv[vml_rand_below(&r, ARRAY_LEN(adv))]));
		} else if (op < 93) {
			if (vml_rand_below(&r, 2))
				may_fail(vml_mlock(mm, addr, len));
			else
				may_fail(vml_munlock(mm, addr, len));
		} else if (op < 98) {
			may_fail(vml_mremap(mm, addr, len, len + PG, MREMAP_MAYMOVE, 0, NULL));
		} else if (!vml_fork(mm, &child)) {
			may_fail(vml_touch(child, addr, len, VML_TOUCH_WRITE));
			vml_mm_destroy(child);
		}
		atomic_fetch_add(&ops, 1);
	}
	return NULL;
}

/* Quiescent: the rollup equals the sum of smaps (sizes exactly). */
static void check_sum(void)
{
	static const char *const exact[] = { "Rss", "Shared_Clean", "Shared_Dirty", "Private_Clean",
					     "Private_Dirty", "Anonymous", "LazyFree",
					     "AnonHugePages", "Swap" };
	char *sm = read_view(mm, VML_VIEW_SMAPS, VML_LOCK_VMA, 4096);
	char *ru = read_view(mm, VML_VIEW_SMAPS_ROLLUP, VML_LOCK_MMAP, 4096);
	bool good = true;

	for (size_t i = 0; i < ARRAY_LEN(exact); i++) {
		char key[32];
		long sum = 0, roll = -1;
		const char *p;

		snprintf(key, sizeof(key), "\n%s:", exact[i]);
		for (p = strstr(sm, key); p; p = strstr(p + 1, key))
			sum += strtol(p + strlen(key), NULL, 10);
		p = strstr(ru, key);
		if (p)
			roll = strtol(p + strlen(key), NULL, 10);
		if (roll != sum) {
			tap_diag("%s: rollup %ld, sum of smaps %ld", exact[i], roll, sum);
			good = false;
		}
	}
	ok(good, "after the run: smaps_rollup = sum of smaps");
	free(sm);
	free(ru);
}

int main(void)
{
	const char *order = getenv("VML_I_MMAP_ORDER");
	struct vml_sys_config cfg = {
		.swap_pages = 512,
		.i_mmap_order = order && !strcmp(order, "pre") ? VML_I_MMAP_PRE : VML_I_MMAP_POST,
	};
	double secs = tap_stress_seconds(3);

	seed = tap_seed();
	tap_diag("i_mmap order %s ($VML_I_MMAP_ORDER)", order ? order : "post");
	if (vml_sys_create(&cfg, &sys) || vml_mm_create(sys, &mm) ||
	    vml_file_create(sys, "/tmp/f", 80 * PG + 100, 0, &files[0]) ||
	    vml_file_create(sys, "/tmp/g", 16 * PG, 0, &files[1]) ||
	    vml_file_create(sys, "/dev/shm/s", 48 * PG, VML_FILE_SHMEM, &files[2]))
		abort();
	run_threads((const struct thread_group[]){ { reader, NREADERS }, { writer, NWRITERS } }, 2,
		    secs, &stop);
	tap_diag("%lu reads, %lu ops", atomic_load(&reads), atomic_load(&ops));
	ok(atomic_load(&reads) > 0 && atomic_load(&ops) > 0, "readers and writers ran");
	is_int(atomic_load(&violations), 0, "every read was well formed and self-consistent");
	check_sum();
	for (int i = 0; i < 3; i++)
		vml_file_put(files[i]);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
	return tap_done();
}
