/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_calls.h - the simulator's side of each platform call (platform.c
 * dispatches here for a simulated task; sim.c implements them).
 * Context: the calling thread is a simulated task holding the baton.
 */
#ifndef VML_PLATFORM_SIM_CALLS_H
#define VML_PLATFORM_SIM_CALLS_H

#include "platform/platform.h"

void sim_charge(uint64_t ns, enum plat_charge_kind kind);
void sim_relax(void);
void sim_yield(void);
void sim_sleep(uint64_t ns);
void sim_sync_point(void);
int sim_futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns);
int sim_futex_wake(_Atomic uint32_t *word, int n);
int sim_thread_create(struct plat_thread *t, const struct plat_thread_opts *o,
		      void *(*fn)(void *), void *arg);
void *sim_thread_join(struct plat_thread *t);
int sim_pin_self(int cpu);
int sim_nice_self(int nice);

/*
 * RCU in virtual time (sim_rcu.c), for sync/rcu.c. A node is queued by the
 * caller's memory (the first two words of its struct vml_rcu_head).
 */
struct sim_rcu_node {
	struct sim_rcu_node *next;
	void (*fn)(struct sim_rcu_node *node);
};
void sim_rcu_read_lock(void);
void sim_rcu_read_unlock(void);
bool sim_rcu_read_held(void);
void sim_rcu_call(struct sim_rcu_node *node, void (*fn)(struct sim_rcu_node *node));
void sim_rcu_synchronize(void);
void sim_rcu_barrier(void);

#endif /* VML_PLATFORM_SIM_CALLS_H */
