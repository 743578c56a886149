// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the command-line parsers - `vmalock race` and `vmalock
 * fuzz` option parsing (race_parse_args, fuzz_parse_args, which share
 * cli_opt and the view/lock parsers with replay and show), and the number,
 * address, protection and errno parsers the op scripts use.
 *
 * The input is split into arguments at '\n' and '\0'; its first byte picks
 * the parser. Any argument list must be accepted or refused with exit
 * status 2, without a crash, a leak or undefined behaviour.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "script/script.h"

#define MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, *argv[MAX_ARGS + 2];
	int argc = 1, which, ret;
	size_t start = 1;

	if (size < 1)
		return 0;
	which = data[0] % 3;
	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = which == 0 ? "race" : which == 1 ? "fuzz" : "parse";
	for (size_t i = 1; i <= size && argc <= MAX_ARGS; i++) {
		if (i == size || buf[i] == '\n' || buf[i] == '\0') {
			buf[i] = '\0';
			argv[argc++] = buf + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;
	if (which == 0) {
		struct race_cli rc;

		ret = race_parse_args(argc, argv, &rc);
		if (ret != 0 && ret != EXIT_USAGE)
			abort();
		if (!ret && !rc.help && (!rc.o.nr_views || !rc.o.nr_mods || !rc.o.nr_locks ||
					 !(rc.duration > 0)))
			abort();
	} else if (which == 1) {
		struct fuzz_cli fc;

		ret = fuzz_parse_args(argc, argv, &fc);
		if (ret != 0 && ret != EXIT_USAGE)
			abort();
		if (!ret && !fc.help && (!fc.ops || !fc.runs || !fc.save || !*fc.save))
			abort();
	} else {
		for (int i = 1; i < argc; i++) {
			unsigned long v;
			int p, e;

			if (!parse_size(argv[i], &v) && strlen(argv[i]) == 0)
				abort();
			parse_addr(argv[i], &v);
			if (!parse_prot(argv[i], &p) && (p & ~7))
				abort();
			errno_parse(argv[i], &e);
		}
	}
	free(buf);
	return 0;
}
