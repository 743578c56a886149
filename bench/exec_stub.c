// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock-exec-stub [N] - exec itself N more times, then exit 0: UnixBench
 * Execl's shape (a process replaced by a fresh image again and again), the
 * live side of `vmalock bench exec-churn`. Built static where the toolchain
 * can (meson.build), so each exec maps one file, this one, and no dynamic
 * loader or library; libc only, no stdio.
 */
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[24], *p = buf + sizeof(buf);
	unsigned long n = 0;

	if (argc > 1)
		for (const char *s = argv[1]; *s >= '0' && *s <= '9' && n < 1000000000; s++)
			n = n * 10 + (unsigned long)(*s - '0');
	if (!n)
		return 0;
	n--;
	*--p = '\0';
	do {
		*--p = (char)('0' + n % 10);
		n /= 10;
	} while (n);
	char *args[] = { argv[0], p, NULL };

	execv("/proc/self/exe", args);
	return 127;
}
