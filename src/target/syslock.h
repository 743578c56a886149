/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * syslock.h - one lock, across processes, between vmalock runs on the live
 * kernel and the runs that change system-wide state (a swap file turned on,
 * the THP mode switched, vm.max_map_count raised): a live comparison made
 * while another process changes the kernel's settings under it compares
 * nothing. flock(2) on one file: shared for a process with live targets,
 * exclusive for a process that changes settings. The kernel drops it when
 * the process dies, so a killed run never leaves it held.
 *
 * A process that holds it exclusively for a command it runs (a test suite
 * that switches THP modes, `vmalock host --set`) sets VMALOCK_SYSLOCK=held
 * in the command's environment: vmalock processes under it then take
 * nothing (they would wait for their own parent).
 */
#ifndef VML_TARGET_SYSLOCK_H
#define VML_TARGET_SYSLOCK_H

/* Where the lock is: /run/lock/vmalock.lock, or /tmp/vmalock.lock. */
const char *syslock_path(void);

/*
 * syslock_shared / syslock_exclusive - take the lock (once per process;
 * exclusive upgrades a shared hold). Waits, saying once on stderr for whom.
 * Return: 0 or -errno.
 */
int syslock_shared(void);
int syslock_exclusive(void);

/* For a command run under an exclusive hold: its environment says so. */
#define SYSLOCK_ENV "VMALOCK_SYSLOCK"

#endif /* VML_TARGET_SYSLOCK_H */
