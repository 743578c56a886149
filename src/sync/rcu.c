// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rcu.c - the RCU facade over liburcu's urcu-memb flavour (see rcu.h).
 *
 * liburcu's headers are included here only: their generic macros
 * (rcu_read_lock, rcu_dereference, ...) never reach the rest of vmalock.
 * _LGPL_SOURCE inlines the memb read-side fast path (a few loads and stores
 * to this thread's reader record) into this file.
 *
 * Registration. liburcu needs every reader, and every caller of call_rcu,
 * registered; a thread must unregister before it exits or the next grace
 * period reads freed TLS. A thread-local state does it for callers:
 *   NEW   never registered (or unregistered at exit);
 *   OURS  registered by us on first need; a pthread key destructor
 *         unregisters it when the thread exits;
 *   URCU  one of liburcu's call_rcu threads, which registers itself; we
 *         learn it from our callback trampoline and never touch its
 *         registration.
 * synchronize_rcu and rcu_barrier need no registration.
 *
 * ThreadSanitizer (VML_TSAN). liburcu is not instrumented, so TSan cannot
 * see that a grace period orders earlier readers before the reclaim. We
 * tell it with two sync tokens (checked with Debian's liburcu 0.13):
 *   gp_token: release before every read-unlock and in vml_call_rcu (the
 *             caller's own accesses precede the callback); acquire at the
 *             start of every callback and after every synchronize_rcu.
 *   cb_token: release at the end of every callback; acquire after
 *             rcu_barrier (which returns only after those callbacks ran).
 * The tokens are never read or written, only their addresses are used.
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <urcu/urcu-memb.h>

#include "platform/sim_calls.h"
#include "sync/rcu.h"
#include "util/compiler.h"

#ifdef VML_TSAN
#include <sanitizer/tsan_interface.h>
static char gp_token, cb_token;
#define tsan_release(tok) __tsan_release(&(tok))
#define tsan_acquire(tok) __tsan_acquire(&(tok))
#else
#define tsan_release(tok) ((void)0)
#define tsan_acquire(tok) ((void)0)
#endif

_Static_assert(sizeof(((struct vml_rcu_head *)0)->urcu) == sizeof(struct rcu_head),
	       "vml_rcu_head.urcu must match liburcu's struct rcu_head");
_Static_assert(alignof(struct vml_rcu_head) >= alignof(struct rcu_head),
	       "vml_rcu_head alignment");
_Static_assert(offsetof(struct vml_rcu_head, urcu.next) == offsetof(struct rcu_head, next) &&
	       offsetof(struct vml_rcu_head, urcu.func) == offsetof(struct rcu_head, func),
	       "vml_rcu_head.urcu field offsets");

enum rcu_thread_state {
	RCU_THREAD_NEW = 0,
	RCU_THREAD_OURS,
	RCU_THREAD_URCU,
};

static _Thread_local enum rcu_thread_state rcu_state;	/* this thread's registration */
static _Thread_local unsigned int rcu_nesting;		/* read-side nesting depth */
static pthread_key_t rcu_exit_key;
static pthread_once_t rcu_key_once = PTHREAD_ONCE_INIT;

/* Thread exit: unregister if we registered. Runs before TLS is torn down. */
static void rcu_thread_exit(void *arg)
{
	(void)arg;
	if (rcu_state != RCU_THREAD_OURS)
		return;
	VML_BUG_ON(rcu_nesting != 0);	/* thread exited inside a read-side section */
	urcu_memb_unregister_thread();
	rcu_state = RCU_THREAD_NEW;
}

static void rcu_key_create(void)
{
	VML_BUG_ON(pthread_key_create(&rcu_exit_key, rcu_thread_exit) != 0);
}

static inline void rcu_register_self(void)
{
	if (likely(rcu_state != RCU_THREAD_NEW))
		return;
	pthread_once(&rcu_key_once, rcu_key_create);
	urcu_memb_register_thread();
	/* Non-NULL, so the destructor runs at thread exit. */
	VML_BUG_ON(pthread_setspecific(rcu_exit_key, (void *)1) != 0);
	rcu_state = RCU_THREAD_OURS;
}

_Static_assert(offsetof(struct vml_rcu_head, urcu.next) == offsetof(struct sim_rcu_node, next) &&
	       offsetof(struct vml_rcu_head, urcu.func) == offsetof(struct sim_rcu_node, fn),
	       "vml_rcu_head.urcu must hold a simulator's sim_rcu_node");

/*
 * A simulated task (platform.h) takes the simulator's RCU: liburcu's grace
 * periods would wait on the host for readers that cannot run without the
 * baton (platform/sim_rcu.c).
 */
void vml_rcu_read_lock(void)
{
	if (plat_simulated()) {
		sim_rcu_read_lock();
		return;
	}
	rcu_register_self();
	urcu_memb_read_lock();
	rcu_nesting++;
}

void vml_rcu_read_unlock(void)
{
	if (plat_simulated()) {
		sim_rcu_read_unlock();
		return;
	}
	vml_assert(rcu_nesting > 0);
	rcu_nesting--;
	/*
	 * Everything this reader did precedes a later grace period's end:
	 * pairs with the tsan_acquire in rcu_trampoline() and vml_synchronize_rcu().
	 */
	tsan_release(gp_token);
	urcu_memb_read_unlock();
}

bool vml_rcu_read_held(void)
{
	if (plat_simulated())
		return sim_rcu_read_held();
	return rcu_nesting > 0;
}

/* Runs on a liburcu call_rcu thread after a grace period. */
static void rcu_trampoline(struct rcu_head *rh)
{
	struct vml_rcu_head *head = container_of((void *)rh, struct vml_rcu_head, urcu);

	/* Pairs with the releases in read-unlock and vml_call_rcu. */
	tsan_acquire(gp_token);
	if (rcu_state == RCU_THREAD_NEW)
		rcu_state = RCU_THREAD_URCU;	/* liburcu registered this thread */
	head->cb(head);
	/* Pairs with the acquire after rcu_barrier. */
	tsan_release(cb_token);
}

static void sim_trampoline(struct sim_rcu_node *node)
{
	struct vml_rcu_head *head = container_of((void *)node, struct vml_rcu_head, urcu);

	head->cb(head);
}

void vml_call_rcu(struct vml_rcu_head *head, vml_rcu_cb cb)
{
	vml_assert(cb);
	if (plat_simulated()) {
		head->cb = cb;
		sim_rcu_call((struct sim_rcu_node *)(void *)&head->urcu, sim_trampoline);
		return;
	}
	rcu_register_self();
	head->cb = cb;
	/* The caller's accesses (and head->cb) precede the callback: pairs with rcu_trampoline's acquire. */
	tsan_release(gp_token);
	urcu_memb_call_rcu((struct rcu_head *)(void *)&head->urcu, rcu_trampoline);
}

/* Callback workers made by vml_rcu_thread_callbacks(): one per (cpu, nice), kept. */
static struct {
	int cpu, nice;
	struct call_rcu_data *crdp;
} rcu_workers[8];
static unsigned int nr_rcu_workers;
static pthread_mutex_t rcu_workers_lock = PTHREAD_MUTEX_INITIALIZER;

struct worker_req {
	int cpu, nice;
	struct call_rcu_data *crdp;
};

/* liburcu's worker thread inherits the nice value of the thread that creates it. */
static void *make_worker(void *arg)
{
	struct worker_req *w = arg;

	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), w->nice);
	w->crdp = urcu_memb_create_call_rcu_data(0, w->cpu);
	return NULL;
}

int vml_rcu_thread_callbacks(int cpu, int nice)
{
	struct call_rcu_data *crdp = NULL;
	struct worker_req w = { cpu, nice, NULL };
	pthread_t th;
	unsigned int i;

	if (cpu < 0 || nice < -20 || nice > 19)
		return -EINVAL;
	if (plat_simulated())
		return 0;	/* the simulator's worker runs them (platform/sim_rcu.c) */
	pthread_mutex_lock(&rcu_workers_lock);
	for (i = 0; i < nr_rcu_workers; i++)
		if (rcu_workers[i].cpu == cpu && rcu_workers[i].nice == nice)
			crdp = rcu_workers[i].crdp;
	if (!crdp) {
		if (nr_rcu_workers == ARRAY_SIZE(rcu_workers) ||
		    pthread_create(&th, NULL, make_worker, &w)) {
			pthread_mutex_unlock(&rcu_workers_lock);
			return -EAGAIN;
		}
		pthread_join(th, NULL);
		crdp = w.crdp;
		if (crdp)
			rcu_workers[nr_rcu_workers++] = (typeof(rcu_workers[0])){ cpu, nice, crdp };
	}
	pthread_mutex_unlock(&rcu_workers_lock);
	if (!crdp)
		return -ENOMEM;
	urcu_memb_set_thread_call_rcu_data(crdp);
	return 0;
}

void vml_synchronize_rcu(void)
{
	if (plat_simulated()) {
		sim_rcu_synchronize();
		return;
	}
	vml_assert(rcu_nesting == 0);
	urcu_memb_synchronize_rcu();
	/* Pairs with every reader's release before read-unlock. */
	tsan_acquire(gp_token);
}

void vml_rcu_barrier(void)
{
	if (plat_simulated()) {
		sim_rcu_barrier();
		return;
	}
	vml_assert(rcu_nesting == 0);
	vml_assert(rcu_state != RCU_THREAD_URCU);	/* would wait for itself */
	urcu_memb_barrier();
	/* Pairs with the tsan_release at the end of every callback (rcu_trampoline). */
	tsan_acquire(cb_token);
}
