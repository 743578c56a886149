// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * helper.c - finding vmalock's helper programs (helper.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "system/helper.h"
#include "system/install-paths.h"

static bool executable(const char *path)
{
	return path && *path && access(path, X_OK) == 0;
}

int helper_child_exe(char *out, size_t len)
{
	const char *env = getenv("VML_CHILD_EXE");

	if (executable(env) && strlen(env) < len) {
		strcpy(out, env);
		return 0;
	}
	return helper_exe(HELPER_CHILD, out, len);
}

int helper_exe(const char *name, char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -ENOENT;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if ((size_t)snprintf(out, len, "%s/%s", self, name) < len && executable(out))
		return 0;
	if ((size_t)snprintf(out, len, "%s/%s/vmalock/%s", self, VML_BIN_TO_LIBEXEC,
			     name) < len && executable(out))
		return 0;
	return -ENOENT;
}
