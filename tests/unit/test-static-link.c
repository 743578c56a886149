// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-static-link - a program that links the installed static libvmalock.a
 * and defines functions named as the library's internals (the kernel's
 * names: down_read, folio_get, seq_read, mmap_read_lock). It links - the
 * archive's internals are local to it (src/libvmalock-static.sh) - and both
 * the library and these functions work. Only the public headers are used.
 */
#include <stdio.h>
#include <sys/mman.h>

#include "vmalock/vmalock.h"

/* A user's own functions with the internals' names (and not their types). */
int down_read(int x);
int folio_get(int x);
int seq_read(int x);
int mmap_read_lock(int x);

int down_read(int x) { return x + 1; }
int folio_get(int x) { return x + 2; }
int seq_read(int x) { return x + 3; }
int mmap_read_lock(int x) { return x + 4; }

int main(void)
{
	struct vml_sys *sys;
	struct vml_mm *mm;
	struct vml_reader *r;
	unsigned long addr;
	char buf[4096];
	long n;

	if (vml_sys_create(NULL, &sys) || vml_mm_create(sys, &mm))
		return 1;
	if (vml_mmap(mm, 0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, NULL, 0,
		     &addr) || vml_touch(mm, addr, 8192, VML_TOUCH_WRITE))
		return 2;
	if (vml_reader_open(mm, VML_VIEW_MAPS, VML_LOCK_VMA, &r))
		return 3;
	n = vml_reader_read(r, buf, sizeof(buf) - 1);
	vml_reader_close(r);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
	if (n <= 0)
		return 4;
	if (down_read(0) + folio_get(0) + seq_read(0) + mmap_read_lock(0) != 10)
		return 5;
	printf("maps of the static library's model: %.*s", (int)n, buf);
	return 0;
}
