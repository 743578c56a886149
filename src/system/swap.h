/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * swap.h - live swap for a script's run (`swap SIZE`): a swap file of ours
 * on a disk-backed filesystem, made with mkswap and turned on with swapon
 * for the run, then turned off and deleted. The keeper (keeper.h) turns it
 * off and deletes it if vmalock dies first; a file of ours left by a run
 * that even the keeper could not clean up (a reboot, a killed keeper) is
 * found by its name (HOST_SWAP_PREFIX, then the owner's pid) and removed at
 * the next start. While it is on, the system-state lock is held exclusively
 * (syslock.h): no other live run sees swap it did not ask for.
 */
#ifndef VML_SYSTEM_SWAP_H
#define VML_SYSTEM_SWAP_H

#include <stddef.h>
#include <stdint.h>

struct target_swap;

/*
 * target_swap_on - a swap file of @bytes, on.
 * Where: $VMALOCK_SWAP_DIR, else the first of /var/tmp, /tmp, / that is on a
 * filesystem swap files work on (not tmpfs, not btrfs).
 * Return: 0; -EPERM without the privilege (root, CAP_SYS_ADMIN); -ENOSPC,
 *         -ENOENT (no mkswap), -errno; @err says what failed.
 */
int target_swap_on(uint64_t bytes, struct target_swap **out, char *err, size_t errlen);
/* Off and deleted. NULL is a no-op. */
void target_swap_off(struct target_swap *s);

/* Remove swap files of ours whose owner is dead (on or off). Return: how many. */
int target_swap_reap_stale(void);

#endif /* VML_SYSTEM_SWAP_H */
