/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * syslock.h - one lock, across processes, for the live kernel: one vmalock
 * at a time creates live targets, turns on swap or changes a kernel setting.
 * Another run's system calls would perturb ours - they drain the kernel's
 * per-CPU LRU batches (lru_add_drain_all), add swap we did not ask for,
 * switch the THP mode - and a live comparison made meanwhile compares
 * nothing. flock(2), exclusive, on one file; the kernel drops it when the
 * process dies, so a killed run never leaves it held.
 *
 * A process that holds it for a command it runs (`vmalock host --set ... --
 * COMMAND`, the THP-mode suite) sets VMALOCK_SYSLOCK=held in the command's
 * environment: vmalock processes under it then take nothing (they would
 * wait for their own parent).
 */
#ifndef VML_SYSTEM_SYSLOCK_H
#define VML_SYSTEM_SYSLOCK_H

/* Where the lock is: /run/lock/vmalock.lock, or /tmp/vmalock.lock. */
const char *syslock_path(void);

/*
 * syslock_take - take the lock (once per process; later calls return at
 * once). Waits, saying once on stderr which process holds it, in a line
 * that begins "vmalock: note: " (a notice, not an error).
 * Return: 0 or -errno.
 */
int syslock_take(void);

/*
 * syslock_fd - the lock's file descriptor if this process took it, else -1.
 * The keeper holds a copy (keeper.c), so that the lock outlives a killed
 * vmalock until the keeper has put back what it changed: another run must
 * not read a killed run's values as the ones to restore.
 */
int syslock_fd(void);

/* For a command run under a hold: its environment says so. */
#define SYSLOCK_ENV "VMALOCK_SYSLOCK"

#endif /* VML_SYSTEM_SYSLOCK_H */
