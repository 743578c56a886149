// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cancel.c - cancellation tokens for killable acquires. Firing is one
 * release store; waiters poll it between futex sleeps of at most 1 ms, so
 * nobody has to know where they sleep.
 */
#include "platform/platform.h"
#include "sync/atomic.h"
#include "sync/cancel.h"
#include "util/clock.h"

void vml_cancel_fire(struct vml_cancel *c)
{
	/* Pairs with the acquire in vml_cancel_pending. */
	store_release(&c->fired, 1);
}

bool vml_cancel_pending(const struct vml_cancel *c)
{
	if (!c)
		return false;
	/* acquire: pairs with the store_release in vml_cancel_fire() */
	if (load_acquire((_Atomic uint32_t *)&c->fired))
		return true;
	return c->deadline_ns && plat_now_ns() >= c->deadline_ns;
}
