/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rcu.h - the RCU facade. RCU itself is liburcu (urcu-memb flavour); this
 * file is the only way the rest of vmalock uses it, for two reasons:
 *
 *  1. ThreadSanitizer does not know that a grace period orders every earlier
 *     reader before the reclaim (liburcu 0.13 is not annotated). Under TSan
 *     (VML_TSAN) the facade does __tsan_release(&token) before every
 *     read-unlock and __tsan_acquire(&token) at the start of every callback
 *     and after every synchronize_rcu (rcu.c's header says why).
 *  2. Threads register themselves with liburcu on their first read lock and
 *     unregister when they exit, so callers never forget to.
 *
 * RCU-protected pointers are C11 atomics published with vml_rcu_assign_pointer()
 * (release) and read with vml_rcu_dereference() (acquire), not liburcu's macros.
 */
#ifndef VML_SYNC_RCU_H
#define VML_SYNC_RCU_H

#include <stdbool.h>

#include "sync/atomic.h"

struct vml_rcu_head;
typedef void (*vml_rcu_cb)(struct vml_rcu_head *head);

/*
 * struct vml_rcu_head - embed in an object that is freed after a grace period.
 * @urcu is layout-compatible with liburcu's struct rcu_head (checked in
 * rcu.c) and owned by liburcu while queued; @cb is the caller's callback,
 * which the facade calls from its own trampoline (to tell TSan about the
 * grace period). Fields are private to rcu.c.
 */
struct vml_rcu_head {
	struct {
		void *next;
		void (*func)(void *);
	} urcu;
	vml_rcu_cb cb;
};

/*
 * Context: any thread; nests. Registers the thread with liburcu on first use.
 *
 * Out of line on purpose. Inlining the pair (liburcu's inline memb fast
 * path plus our nesting count) saves about 3 ns of the 5.5 ns a
 * lock/unlock pair costs here (2 vCPUs, 6.18), i.e. a few ns per fault;
 * but it needs liburcu's static headers in every file that takes RCU, and
 * with them its rcu_dereference/rcu_assign_pointer, FUTEX_*, assert and
 * flavour macros - exactly what this facade keeps out of vmalock. The
 * ThreadSanitizer release in read_unlock would be as safe inline.
 */
void vml_rcu_read_lock(void);
void vml_rcu_read_unlock(void);
/* For assertions: does the calling thread hold the RCU read lock? */
bool vml_rcu_read_held(void);

/*
 * vml_call_rcu - run @cb(@head) after a grace period, on liburcu's call_rcu
 * thread (which may itself call vml_call_rcu and vml_rcu_read_lock).
 * Context: any thread, inside or outside a read-side section; registers the
 * caller with liburcu if needed. Ordering: everything the caller did before
 * happens before @cb runs, and so does every read-side section that was
 * running when vml_call_rcu was called.
 */
void vml_call_rcu(struct vml_rcu_head *head, vml_rcu_cb cb);
/*
 * Context: not inside a read-side section; any thread (registered or not).
 * vml_synchronize_rcu returns after every read-side section that started
 * before it has ended (and orders them before the caller's next accesses).
 * vml_rcu_barrier waits for every callback queued before it to have run;
 * callbacks queued by those callbacks are not covered (loop if you chain).
 * Neither may be called from an RCU callback.
 */
void vml_synchronize_rcu(void);

/*
 * vml_rcu_thread_callbacks - the callbacks the calling thread queues from now
 * on (vml_call_rcu) run on a liburcu worker of their own, pinned to @cpu and
 * at nice @nice (made once per pair and kept for the process's life), instead
 * of liburcu's default worker, which runs anywhere at nice 0. The kernel runs
 * RCU callbacks on the CPU that queued them, in softirq: a benchmark's writer
 * pins its callbacks to its own CPU at nice 19 so that freeing what it
 * unmapped neither preempts low-priority readers on other CPUs nor delays
 * the writer's own wake-ups (docs/findings/2026-12-01-vma-policy-tail.md).
 * Return: 0, -EINVAL, -EAGAIN or -ENOMEM.
 */
int vml_rcu_thread_callbacks(int cpu, int nice);
void vml_rcu_barrier(void);

/*
 * Publish / read an RCU-protected pointer @p, an lvalue declared
 * `_Atomic(T *)`. Not liburcu's rcu_assign_pointer/rcu_dereference (whose
 * names those would shadow): these are plain C11 release/acquire accesses
 * that ThreadSanitizer understands. vml_rcu_assign_pointer's release pairs
 * with the vml_rcu_dereference (acquire) of every reader that sees the new
 * value: the reader also sees everything stored before the publication.
 */
#define vml_rcu_assign_pointer(p, v) store_release(&(p), (v))
#define vml_rcu_dereference(p)       load_acquire(&(p))

#endif /* VML_SYNC_RCU_H */
