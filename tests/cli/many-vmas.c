// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * many-vmas - a process with as many VMAs as vm.max_map_count lets it have,
 * for tests/cli/twin.sh: one region whose pages alternate rw- and r--
 * (mprotect of every other page splits it), until mprotect fails with
 * ENOMEM at the limit. Every 16th writable page is written, so that the
 * twin has pages to touch. Prints "ready N" (N: its VMAs, from its own
 * maps) and sleeps until killed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096UL

static unsigned long count_vmas(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long n = 0;
	int c;

	if (!f)
		return 0;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

int main(void)
{
	unsigned long limit = 65530, pages;
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
	char *p;

	if (f) {
		if (fscanf(f, "%lu", &limit) != 1)
			limit = 65530;
		fclose(f);
	}
	pages = limit + 16;
	p = mmap(NULL, pages * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "many-vmas: mmap: %s\n", strerror(errno));
		return 1;
	}
	for (unsigned long i = 0; i < pages; i += 32)
		p[i * PG] = 1;
	for (unsigned long i = 1; i < pages; i += 2)
		if (mprotect(p + i * PG, PG, PROT_READ))
			break;	/* ENOMEM: the limit */
	printf("ready %lu\n", count_vmas());
	fflush(stdout);
	for (;;)
		pause();
}
