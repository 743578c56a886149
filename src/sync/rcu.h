/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rcu.h - the RCU facade. RCU itself is liburcu (urcu-memb flavour); this
 * file is the only way the rest of vmalock uses it, for two reasons:
 *
 *  1. ThreadSanitizer does not know that a grace period orders every earlier
 *     reader before the reclaim (liburcu 0.13 is not annotated). Under TSan
 *     (VML_TSAN) the facade does __tsan_release(&token) before every
 *     read-unlock and __tsan_acquire(&token) at the start of every callback
 *     and after every synchronize_rcu (DESIGN.md, "RCU under TSan").
 *  2. Threads register themselves with liburcu on their first read lock and
 *     unregister when they exit, so callers never forget to.
 *
 * RCU-protected pointers are C11 atomics published with rcu_assign_pointer()
 * (release) and read with rcu_dereference() (acquire), not liburcu's macros.
 */
#ifndef VML_SYNC_RCU_H
#define VML_SYNC_RCU_H

#include <stdbool.h>

#include "sync/atomic.h"

/*
 * struct vml_rcu_head - embed in an object that is freed after a grace period.
 * TODO(sync): layout-compatible wrapper of liburcu's struct rcu_head.
 */
struct vml_rcu_head;
typedef void (*vml_rcu_cb)(struct vml_rcu_head *head);

/* Context: any thread; nests. Registers the thread with liburcu on first use. */
void vml_rcu_read_lock(void);
void vml_rcu_read_unlock(void);
/* For assertions: does the calling thread hold the RCU read lock? */
bool vml_rcu_read_held(void);

/* Context: not inside an RCU read-side section (for synchronize/barrier). */
void vml_call_rcu(struct vml_rcu_head *head, vml_rcu_cb cb);
void vml_synchronize_rcu(void);
void vml_rcu_barrier(void);	/* wait for every queued callback to have run */

/* Publish / read an RCU-protected pointer declared `_Atomic(T *)`. */
#define rcu_assign_pointer(p, v) store_release(&(p), (v))
#define rcu_dereference(p)       load_acquire(&(p))

#endif /* VML_SYNC_RCU_H */
