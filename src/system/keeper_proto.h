/* SPDX-License-Identifier: GPL-2.0-or-later */
/* keeper_proto.h - what keeper.c and the keeper (keeper_main.c) share. */
#ifndef VML_SYSTEM_KEEPER_PROTO_H
#define VML_SYSTEM_KEEPER_PROTO_H

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* One record, at most: written with one write(), so atomically. */
#define KEEPER_MAX_RECORD PIPE_BUF

/*
 * keeper_remove_dir - remove @dir and the files in it (no subdirectories):
 * the undo of a KEEPER_DIR item, and how target.c removes the same
 * directories when nothing went wrong.
 */
static inline void keeper_remove_dir(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) <
			    sizeof(path))
				unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* The keeper's entry point in vmalock-child (`vmalock-child --keeper`). */
int keeper_main(void);

#endif /* VML_SYSTEM_KEEPER_PROTO_H */
