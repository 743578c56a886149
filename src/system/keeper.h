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

/*
 * Nested runs: `vmalock host --set ... -- COMMAND` names its keeper's nest
 * pipe in COMMAND's environment ($VMALOCK_KEEPER_HOLD, a /proc/PID/fd path).
 * A vmalock in COMMAND opens it at start and holds it, and so does its
 * keeper, until that keeper has undone what it had to. The outer run, and
 * its keeper if it was killed, wait for the pipe's end of file before they
 * put anything back: the values of before the outer run are written last,
 * whichever run is killed and when.
 */
#define KEEPER_HOLD_ENV "VMALOCK_KEEPER_HOLD"

/*
 * At start, before any thread or child: hold $VMALOCK_KEEPER_HOLD's pipe.
 * If it is gone (the outer run was killed), unset SYSLOCK_ENV too: the lock
 * is then not held for us.
 */
void keeper_adopt_hold(void);
/*
 * keeper_pass_hold - in the child between fork() and exec() of COMMAND:
 * name our nest pipe in its environment.
 * Return: 0, or -1 (no keeper of the parent's: nothing to wait for).
 */
int keeper_pass_hold(void);
/* Wait until the vmalocks nested in ours and their keepers are gone. */
void keeper_wait_nested(void);

#endif /* VML_SYSTEM_KEEPER_H */
