/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * keeper.h - undo on exit, however vmalock exits. Before a change that must
 * not outlive this process (a temporary directory, a swap file turned on, a
 * sysfs setting), register how to undo it; after undoing it, say so. If the
 * process dies first - SIGKILL, a crash, an interrupt - the keeper process
 * (keeper_main.c) undoes what is still registered. See keeper_main.c.
 */
#ifndef VML_SYSTEM_KEEPER_H
#define VML_SYSTEM_KEEPER_H

enum keeper_undo {
	KEEPER_DIR,	/* remove the directory and the files in it */
	KEEPER_FILE,	/* unlink the file */
	KEEPER_SWAP,	/* swapoff the file, then unlink it */
	KEEPER_WRITE,	/* write @value to the file (restore a setting) */
};

/*
 * keeper_add - register an undo. Starts the keeper on first use (it is
 * vmalock-child, found by helper_child_exe()).
 * Context: call from one thread at a time (the CLI's main thread).
 * Return: a handle > 0 for keeper_done(), or -errno (-ENOENT: no
 *         vmalock-child; the caller decides whether to go on unprotected).
 */
long keeper_add(enum keeper_undo what, const char *path, const char *value);
/* The caller undid it; forget it. 0 and negative handles are ignored. */
void keeper_done(long handle);

#endif /* VML_SYSTEM_KEEPER_H */
