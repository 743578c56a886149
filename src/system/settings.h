/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * settings.h - changing a system-wide kernel setting for a run, and putting
 * it back: the THP mode for the THP-mode suite, khugepaged's knobs and
 * vm.max_map_count for the khugepaged benchmark at the seed's scale. Each
 * change takes the system-state lock exclusively (syslock.h) and registers
 * the old value with the keeper (keeper.h) before writing the new one, so
 * the old value comes back however vmalock ends.
 */
#ifndef VML_SYSTEM_SETTINGS_H
#define VML_SYSTEM_SETTINGS_H

#include <stddef.h>

/*
 * The settings by name, for `vmalock host --set NAME=VALUE` (the THP ones
 * also for a script's `knobs`):
 *   thp, thp_defrag, thp_shmem        transparent_hugepage/{enabled,defrag,shmem_enabled}
 *   hugepages-NkB, hugepages-NkB.shmem  transparent_hugepage/hugepages-NkB/{enabled,shmem_enabled}
 *   khugepaged.KNOB                   transparent_hugepage/khugepaged/KNOB
 *   max_map_count                     /proc/sys/vm/max_map_count
 * Return: the file, or NULL for an unknown name.
 */
const char *setting_path(const char *name);

/*
 * setting_push - write @value to @path until setting_pop_all() (or exit).
 * Return: 0; -EPERM (not root), -ENOENT (no such setting on this kernel),
 *         -EINVAL (the kernel refused the value), -errno; @err says which.
 */
int setting_push(const char *path, const char *value, char *err, size_t errlen);

/* How many settings are pushed now: a mark for setting_pop_to(). */
int setting_depth(void);
/* Restore the settings pushed since @depth, newest first. */
void setting_pop_to(int depth);
/* Restore every pushed setting, newest first. */
void setting_pop_all(void);

#endif /* VML_SYSTEM_SETTINGS_H */
