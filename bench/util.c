// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * util.c - names, and what the kernel and the machine are: the view names,
 * the kernel release, the load average.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "host/host.h"
#include "internal.h"

const char *bench_view_name(enum vml_view view)
{
	return view == TARGET_VIEW_QUERY ? "query" : target_view_name(view);
}

bool bench_view_walks_pages(enum vml_view view)
{
	return view == VML_VIEW_SMAPS || view == VML_VIEW_SMAPS_ROLLUP || view == VML_VIEW_NUMA_MAPS;
}

const char *bench_kernel(void)
{
	static struct utsname u;

	if (!u.release[0] && uname(&u))
		strcpy(u.release, "unknown");
	return u.release;
}

bool bench_kernel_maps_per_vma(void)
{
	return bench_kernel_view_per_vma(VML_VIEW_MAPS, NULL);
}

bool bench_kernel_view_per_vma(enum vml_view view, const char **how)
{
	return host_view_per_vma((int)view, how);
}

void bench_loadavg(char *buf, size_t len)
{
	FILE *l = fopen("/proc/loadavg", "r");

	buf[0] = '\0';
	if (l) {
		if (!fgets(buf, (int)len, l))
			buf[0] = '\0';
		fclose(l);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

void bench_print_load(FILE *f)
{
	char buf[128];

	bench_loadavg(buf, sizeof(buf));
	/* A busy machine moves tails and the kernel's LRU behaviour: say how busy it was. */
	fprintf(f, "# load average at start (1, 5, 15 min, runnable/total, last pid): %s\n",
		*buf ? buf : "unknown");
}
