/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cli.h - what the subcommands of the vmalock command share. */
#ifndef VML_CLI_CLI_H
#define VML_CLI_CLI_H

#include <stdio.h>

#define VML_VERSION "0.1.0"

/* Exit statuses (DESIGN.md): */
#define EXIT_CHECK_FAILED 1
#define EXIT_USAGE 2

struct cli_command {
	const char *name;
	int (*main)(int argc, char **argv);	/* argv[0] is the command name */
	const char *help;
};

/* The subcommands (one file each). */
int cmd_replay(int argc, char **argv);
int cmd_show(int argc, char **argv);

#endif /* VML_CLI_CLI_H */
