// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One million VMAs: the address space can be built, its maps read under
 * both lock policies, and torn down. Times and memory per VMA are printed
 * (diagnostics, not assertions: a slow machine must not fail this test).
 * $VML_MILLION overrides the count.
 */
#include <malloc.h>
#include <stdio.h>
#include <time.h>

#include "mm_helpers.h"
#include "sync/rcu.h"
#include "tap.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char l[256];
	long v = 0;

	while (f && fgets(l, sizeof(l), f))
		if (!strncmp(l, "VmRSS:", 6))
			sscanf(l + 6, "%ld", &v);
	if (f)
		fclose(f);
	return v;
}

/* Read the whole view; check order and count; return lines. */
static long read_check(struct vml_mm *mm, enum vml_lock_policy lock, double *secs, int *sorted)
{
	struct vml_reader *r;
	char buf[4096 + 1], line[128];
	unsigned long prev_end = 0, s, e;
	size_t ll = 0;
	long lines = 0;
	ssize_t n;
	double t0 = now();

	*sorted = 1;
	if (vml_reader_open(mm, VML_VIEW_MAPS, lock, &r))
		return -1;
	while ((n = vml_reader_read(r, buf, 4096)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (ll < sizeof(line) - 1)
				line[ll++] = buf[i];
			if (buf[i] != '\n')
				continue;
			line[ll] = 0;
			ll = 0;
			lines++;
			if (sscanf(line, "%lx-%lx", &s, &e) != 2 || s < prev_end || s >= e)
				*sorted = 0;
			prev_end = e;
		}
	}
	vml_reader_close(r);
	*secs = now() - t0;
	return lines;
}

int main(void)
{
	const char *env = getenv("VML_MILLION");
	long n = env ? atol(env) : 1000000, lines;
	struct vml_sys_config cfg = { .max_map_count = (unsigned long)n + 16 };
	struct vml_mm_stats st;
	struct vml_sys *sys;
	struct vml_mm *mm;
	double t0, build, rd;
	long r0, r1, i;
	size_t h0, h1;
	int sorted;

	if (vml_sys_create(&cfg, &sys) || vml_mm_create(sys, &mm))
		return 1;
	r0 = rss_kb();
	h0 = mallinfo2().uordblks;
	t0 = now();
	for (i = 0; i < n; i++)
		if (map_anon(mm, BASE + 2 * (unsigned long)i * PG, PG,
			     (i & 1) ? PROT_READ : PROT_READ | PROT_WRITE))
			break;
	build = now() - t0;
	vml_rcu_barrier();	/* count live memory, not nodes still waiting for a grace period */
	r1 = rss_kb();
	h1 = mallinfo2().uordblks;
	is_int(i, n, "%ld single-page VMAs mapped", n);
	vml_mm_stats(mm, &st);
	is_int(st.map_count, n, "map_count");
	tap_diag("build: %.2f s, %.2f us per VMA", build, build / (double)n * 1e6);
	tap_diag("memory: %.0f bytes per VMA in use (malloc), %.0f bytes per VMA of RSS growth",
		 (double)(h1 - h0) / (double)n, (double)(r1 - r0) * 1024.0 / (double)n);

	lines = read_check(mm, VML_LOCK_VMA, &rd, &sorted);
	is_int(lines, n, "maps (vma policy) has a line per VMA");
	ok(sorted, "in order, non-overlapping");
	tap_diag("maps read, vma policy: %.3f s, %.0f ns per VMA", rd, rd / (double)n * 1e9);
	lines = read_check(mm, VML_LOCK_MMAP, &rd, &sorted);
	is_int(lines, n, "maps (mmap policy) has a line per VMA");
	ok(sorted, "in order, non-overlapping");
	tap_diag("maps read, mmap policy: %.3f s, %.0f ns per VMA", rd, rd / (double)n * 1e9);

	t0 = now();
	vml_mm_destroy(mm);
	tap_diag("teardown: %.2f s", now() - t0);
	vml_sys_destroy(sys);
	return tap_done();
}
