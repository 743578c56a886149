// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which path smaps takes to count a shmem mapping's pages in swap (seed 004,
 * docs/kernel.md 7), counted (vml_mm_stats shmem_swap_*) and asserted for
 * each of the seed's cases, under both settings of the switch:
 *
 *   fast (4.5 and later)          per-page (before)
 *   S  shared, whole object,      object counter           a lookup per empty page
 *      partly swapped
 *   H  shared, almost all of it,  page-cache walk          a lookup per empty page
 *      partly swapped
 *   G  shared, almost all of an   nothing to count         a lookup per empty page
 *      object never swapped
 *   P  private writable, whole,   object counter, then a   a lookup per empty page
 *      partly swapped, one copy   lookup per empty PTE
 *   R  private read-only, part,   page-cache walk          a lookup per empty page
 *      partly swapped
 *   A  private anonymous          none of these            none of these
 *
 * Each mapping sits in its own 2 MiB so that those without a page table
 * show the hole path (per-page: one lookup per page there too). Deleting a
 * fast path, or the per-page path, changes a count and fails here; the
 * Swap figures must not depend on the path.
 */
#include "mm_helpers.h"
#include "tap.h"

#define PAGES 64
#define M2 (2UL << 20)
#define RW (PROT_READ | PROT_WRITE)

/* The value (kB) of @field in the smaps record at @start; -1 if absent. */
static long field_kb(const char *text, unsigned long start, const char *field)
{
	char head[40], key[40];
	const char *rec, *p, *end;

	snprintf(head, sizeof(head), "%08lx-", start);
	rec = strstr(text, head);
	if (!rec)
		return -1;
	end = strstr(rec, "VmFlags");
	snprintf(key, sizeof(key), "\n%s:", field);
	p = strstr(rec, key);
	if (!p || (end && p > end))
		return -1;
	return strtol(p + strlen(key), NULL, 10);
}

struct paths {
	uint64_t none, object, walk, per_page, lookups;
};

static struct paths read_smaps(struct vml_mm *mm, char **text)
{
	struct vml_mm_stats a, b;

	vml_mm_stats(mm, &a);
	*text = read_view(mm, VML_VIEW_SMAPS, VML_LOCK_VMA, 4096);
	vml_mm_stats(mm, &b);
	return (struct paths){
		.none = b.shmem_swap_none - a.shmem_swap_none,
		.object = b.shmem_swap_object - a.shmem_swap_object,
		.walk = b.shmem_swap_walk - a.shmem_swap_walk,
		.per_page = b.shmem_swap_per_page - a.shmem_swap_per_page,
		.lookups = b.shmem_swap_lookups - a.shmem_swap_lookups,
	};
}

static void paths_is(struct paths got, struct paths want, const char *what)
{
	bool same = !memcmp(&got, &want, sizeof(got));

	ok(same, "%s: none %llu, object %llu, walk %llu, per-page VMAs %llu, lookups %llu", what,
	   (unsigned long long)want.none, (unsigned long long)want.object,
	   (unsigned long long)want.walk, (unsigned long long)want.per_page,
	   (unsigned long long)want.lookups);
	if (!same)
		printf("#   got none %llu, object %llu, walk %llu, per-page %llu, lookups %llu\n",
		       (unsigned long long)got.none, (unsigned long long)got.object,
		       (unsigned long long)got.walk, (unsigned long long)got.per_page,
		       (unsigned long long)got.lookups);
}

static const unsigned long S = BASE, H = BASE + M2, G = BASE + 2 * M2, P = BASE + 3 * M2,
			   R = BASE + 4 * M2, A = BASE + 5 * M2;

/* Build the six mappings; object F has pages 0-7 in swap, G's object none. */
static struct vml_mm *build(struct vml_sys *sys, struct vml_file **f, struct vml_file **g)
{
	struct vml_mm *mm;
	int err;

	err = vml_mm_create(sys, &mm);
	err |= vml_file_create(sys, "/dev/shm/f", PAGES * PG, VML_FILE_SHMEM, f);
	err |= vml_file_create(sys, "/dev/shm/g", PAGES * PG, VML_FILE_SHMEM, g);
	/* S: touch pages 0-15, push 0-7 out: 8 in swap, 8 mapped, 48 empty PTEs. */
	err |= vml_mmap(mm, S, PAGES * PG, RW, MAP_SHARED | MAP_FIXED, *f, 0, NULL);
	err |= vml_touch(mm, S, 16 * PG, VML_TOUCH_WRITE);
	err |= vml_madvise(mm, S, 8 * PG, MADV_PAGEOUT);
	/* H, G: the first 63 of 64 pages, never touched (no page table). */
	err |= vml_mmap(mm, H, (PAGES - 1) * PG, RW, MAP_SHARED | MAP_FIXED, *f, 0, NULL);
	err |= vml_mmap(mm, G, (PAGES - 1) * PG, RW, MAP_SHARED | MAP_FIXED, *g, 0, NULL);
	/* P: private writable, whole, one page (10, in the cache) copied: 63 empty PTEs. */
	err |= vml_mmap(mm, P, PAGES * PG, RW, MAP_PRIVATE | MAP_FIXED, *f, 0, NULL);
	err |= vml_touch(mm, P + 10 * PG, PG, VML_TOUCH_WRITE);
	/* R: private read-only, pages 4-35 (4 of them in swap), never touched. */
	err |= vml_mmap(mm, R, 32 * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, *f, 4 * PG, NULL);
	/* A: anonymous, one page written. */
	err |= vml_mmap(mm, A, PAGES * PG, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0,
			NULL);
	err |= vml_touch(mm, A, PG, VML_TOUCH_WRITE);
	if (err)
		abort();
	return mm;
}

/* Swap of each mapping, in kB, by either path. */
static void swap_is(const char *text, const char *mode)
{
	ok(field_kb(text, S, "Swap") == 32 && field_kb(text, H, "Swap") == 32 &&
	   field_kb(text, G, "Swap") == 0 && field_kb(text, P, "Swap") == 32 &&
	   field_kb(text, R, "Swap") == 16 && field_kb(text, A, "Swap") == 0,
	   "%s: Swap S 32, H 32, G 0, P 32, R 16, A 0 kB", mode);
}

static void run(enum vml_shmem_swap_usage usage)
{
	const char *mode = usage == VML_SHMEM_SWAP_PER_PAGE ? "per-page" : "fast";
	struct vml_sys_config cfg = { .swap_pages = 256, .shmem_swap_usage = usage };
	struct vml_file *f, *g;
	struct vml_sys *sys;
	struct vml_mm *mm;
	struct paths got;
	char *text;

	if (vml_sys_create(&cfg, &sys))
		abort();
	mm = build(sys, &f, &g);
	got = read_smaps(mm, &text);
	swap_is(text, mode);
	if (usage == VML_SHMEM_SWAP_FAST) {
		paths_is(got, (struct paths){ .none = 1, .object = 2, .walk = 2, .per_page = 1,
					      .lookups = 63 },
			 "fast: G none; S, P object; H, R walk; P alone looked up per empty PTE");
	} else {
		/* S 56 empty PTEs, H and G 63 pages without a table, P 63 empty PTEs, R 32. */
		paths_is(got, (struct paths){ .per_page = 5, .lookups = 56 + 63 + 63 + 63 + 32 },
			 "per-page: every shmem mapping looked up page by page, holes too");
	}
	free(text);

	/* Each case alone, through a fresh mm (what the benchmark's four cases read). */
	must_succeed(vml_munmap(mm, S, PAGES * PG));
	must_succeed(vml_munmap(mm, G, PAGES * PG));
	must_succeed(vml_munmap(mm, P, PAGES * PG));
	must_succeed(vml_munmap(mm, R, PAGES * PG));
	got = read_smaps(mm, &text);
	free(text);
	if (usage == VML_SHMEM_SWAP_FAST)
		paths_is(got, (struct paths){ .walk = 1 }, "fast: H alone: one walk, no lookup");
	else
		paths_is(got, (struct paths){ .per_page = 1, .lookups = 63 },
			 "per-page: H alone: 63 lookups");

	vml_file_put(f);
	vml_file_put(g);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
}

int main(void)
{
	run(VML_SHMEM_SWAP_FAST);
	run(VML_SHMEM_SWAP_PER_PAGE);
	return tap_done();
}
