// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock - the command. Thin: parses arguments and calls the layers.
 * Exit status: 0 success, 1 a failed check, 2 bad usage.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "system/keeper.h"

static const struct cli_command commands[] = {
	{ "run", cmd_run, "the headline experiment, with defaults" },
	{ "bench", cmd_bench, "SCENARIO [options]: run a benchmark scenario" },
	{ "race", cmd_race, "[options]: tearing tests" },
	{ "replay", cmd_replay, "FILE [options]: apply an op script, print or compare views" },
	{ "show", cmd_show, "VIEW [options]: print a view of a scripted address space" },
	{ "fuzz", cmd_fuzz, "[options]: random op sequences, model against the live kernel" },
	{ "host", cmd_host, "[options]: what this machine's kernel does (the host profile)" },
	{ "twin", cmd_twin, "PID [options]: an op script that rebuilds a running process's address space" },
	{ "watch", cmd_watch, "PID [options]: who stalls a live process on its mmap_lock (root)" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: vmalock COMMAND [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s%s\n", commands[i].name, commands[i].help,
			commands[i].main ? "" : " (not implemented yet)");
	fprintf(f, "\n`vmalock COMMAND --help` describes a command's options.\n");
}

int main(int argc, char **argv)
{
	/* Before any thread or child: a nest pipe of the run we are nested in. */
	keeper_adopt_hold();
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("vmalock %s\n", VML_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		if (!commands[i].main) {
			fprintf(stderr, "vmalock: %s: not implemented yet\n", argv[1]);
			return 2;
		}
		return commands[i].main(argc - 1, argv + 1);
	}
	fprintf(stderr, "vmalock: unknown command '%s' (try --help)\n", argv[1]);
	return 2;
}
