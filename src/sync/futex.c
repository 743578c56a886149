// SPDX-License-Identifier: GPL-2.0-or-later
/* futex.c - the futex contract of futex.h, on the platform (the host's futex(2) or the simulator's). */
#include "platform/platform.h"
#include "sync/futex.h"

int futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
	return plat_futex_wait(word, expected, timeout_ns);
}

int futex_wake(_Atomic uint32_t *word, int n)
{
	return plat_futex_wake(word, n);
}
