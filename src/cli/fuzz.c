// SPDX-License-Identifier: GPL-2.0-or-later
#include "cli.h"

int cmd_fuzz(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return EXIT_USAGE;
}
