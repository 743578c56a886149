/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * atomic.h - C11 atomics with the memory order in the helper's name, so every
 * access says what it orders. Prefer acquire/release pairs to fences
 * (ThreadSanitizer does not model atomic_thread_fence).
 */
#ifndef VML_SYNC_ATOMIC_H
#define VML_SYNC_ATOMIC_H

#include <stdatomic.h>
#include <stdint.h>

#define load_relaxed(p)       atomic_load_explicit((p), memory_order_relaxed)
#define load_acquire(p)       atomic_load_explicit((p), memory_order_acquire)
#define store_relaxed(p, v)   atomic_store_explicit((p), (v), memory_order_relaxed)
#define store_release(p, v)   atomic_store_explicit((p), (v), memory_order_release)

#define fetch_add_relaxed(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define fetch_add_acquire(p, v) atomic_fetch_add_explicit((p), (v), memory_order_acquire)
#define fetch_add_release(p, v) atomic_fetch_add_explicit((p), (v), memory_order_release)
#define fetch_add_acq_rel(p, v) atomic_fetch_add_explicit((p), (v), memory_order_acq_rel)
#define fetch_sub_relaxed(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_relaxed)
#define fetch_sub_release(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_release)
#define fetch_sub_acq_rel(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_acq_rel)
#define fetch_or_relaxed(p, v)  atomic_fetch_or_explicit((p), (v), memory_order_relaxed)
#define fetch_and_relaxed(p, v) atomic_fetch_and_explicit((p), (v), memory_order_relaxed)
#define fetch_or_acq_rel(p, v)  atomic_fetch_or_explicit((p), (v), memory_order_acq_rel)
#define fetch_and_acq_rel(p, v) atomic_fetch_and_explicit((p), (v), memory_order_acq_rel)
#define xchg_relaxed(p, v)      atomic_exchange_explicit((p), (v), memory_order_relaxed)
#define xchg_acq_rel(p, v)      atomic_exchange_explicit((p), (v), memory_order_acq_rel)

/* Compare-and-swap; on failure *expected holds the current value. */
#define cas_acquire(p, expected, desired)                                        \
	atomic_compare_exchange_weak_explicit((p), (expected), (desired),         \
					      memory_order_acquire, memory_order_relaxed)
#define cas_release(p, expected, desired)                                        \
	atomic_compare_exchange_weak_explicit((p), (expected), (desired),         \
					      memory_order_release, memory_order_relaxed)
#define cas_acq_rel(p, expected, desired)                                        \
	atomic_compare_exchange_weak_explicit((p), (expected), (desired),         \
					      memory_order_acq_rel, memory_order_acquire)
#define cas_relaxed(p, expected, desired)                                        \
	atomic_compare_exchange_weak_explicit((p), (expected), (desired),         \
					      memory_order_relaxed, memory_order_relaxed)

/* Statistics counters: relaxed, never used for synchronisation. */
#define stat_inc(p) ((void)atomic_fetch_add_explicit((p), 1, memory_order_relaxed))

/* A statistic that keeps the largest value seen: raise *@p to @v. */
static inline void stat_record_max(_Atomic uint64_t *p, uint64_t v)
{
	uint64_t max = load_relaxed(p);

	/* Ends: a failed CAS reloads max, which only grows, or stores @v. */
	while (v > max && !cas_relaxed(p, &max, v))
		;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif /* VML_SYNC_ATOMIC_H */
