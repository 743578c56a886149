/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * helper.h - where vmalock's helper programs are: vmalock-child (the live
 * target's process, and the keeper: keeper.h) and vmalock-exec-stub (`bench
 * exec-churn`). Not commands: meson builds them next to `vmalock` and
 * installs them in LIBEXECDIR/vmalock/.
 */
#ifndef VML_SYSTEM_HELPER_H
#define VML_SYSTEM_HELPER_H

#include <stddef.h>

#define HELPER_CHILD "vmalock-child"

/*
 * helper_exe - where the helper program @name is: beside our own executable
 * (the build tree), or where `meson install` puts it, LIBEXECDIR/vmalock/
 * with LIBEXECDIR relative to our BINDIR (so an installed tree can be moved).
 * Return: 0 (@out holds the path) or -ENOENT.
 */
int helper_exe(const char *name, char *out, size_t len);
/* Where vmalock-child is: $VML_CHILD_EXE, else helper_exe(). Return: 0 or -ENOENT. */
int helper_child_exe(char *out, size_t len);

#endif /* VML_SYSTEM_HELPER_H */
