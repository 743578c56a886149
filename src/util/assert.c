// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdio.h>
#include <stdlib.h>

#include "util/compiler.h"

void vml_assert_fail(const char *expr, const char *file, int line, const char *func)
{
	fprintf(stderr, "vmalock: assertion failed: %s (%s:%d, %s)\n", expr, file, line, func);
	abort();
}
