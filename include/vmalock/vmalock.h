/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vmalock/vmalock.h - the whole public API. */
#ifndef VMALOCK_VMALOCK_H
#define VMALOCK_VMALOCK_H

#include "vmalock/mm.h"
#include "vmalock/proc.h"
#include "vmalock/khugepaged.h"

#endif /* VMALOCK_VMALOCK_H */
