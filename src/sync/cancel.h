/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cancel.h - what "killable" means in userspace: an acquire that can be
 * abandoned, either because someone fired a cancellation token (the analogue
 * of a fatal signal) or because a deadline passed. A cancelled acquire
 * returns -EINTR and leaves the lock exactly as if it had never been tried.
 */
#ifndef VML_SYNC_CANCEL_H
#define VML_SYNC_CANCEL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct vml_cancel {
	_Atomic uint32_t fired;		/* [atomic] set once by vml_cancel_fire() */
	uint64_t deadline_ns;		/* CLOCK_MONOTONIC; 0 = none; set before sharing */
};

static inline void vml_cancel_init(struct vml_cancel *c, uint64_t deadline_ns)
{
	atomic_store_explicit(&c->fired, 0, memory_order_relaxed);
	c->deadline_ns = deadline_ns;
}

/* Cancel every acquire waiting on @c; waiters notice within a millisecond. */
void vml_cancel_fire(struct vml_cancel *c);

/* True if @c (may be NULL) was fired or its deadline has passed. */
bool vml_cancel_pending(const struct vml_cancel *c);

#endif /* VML_SYNC_CANCEL_H */
