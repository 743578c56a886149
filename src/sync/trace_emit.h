/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace_emit.h - the model's own trace: its mmap_lock, per-VMA locks and rwsem
 * wake-ups emit the same struct trace_event records (trace_event.h) the live
 * kernel's tracepoints give, timestamped with CLOCK_MONOTONIC, into a
 * per-run buffer, so that trace/analysis.h computes the same statistics
 * from both sides.
 *
 * Where the model emits what (the kernel's tracepoints in brackets):
 *
 *   mmap_lock wrappers (mm/mmap_lock.h), @mm = the struct mm:
 *     TRACE_LOCK_START     before a blocking acquire only  [mmap_lock_start_locking]
 *     TRACE_LOCK_ACQUIRED  after any acquire, trylocks too  [mmap_lock_acquire_returned]
 *     TRACE_LOCK_RELEASED                                   [mmap_lock_released]
 *     a downgrade is ACQUIRED(read) from the write holder, as in the kernel.
 *   per-VMA locks (mm/vma_lock.c), @mm = the struct mm | TRACE_VMA_TAG, so
 *     that they form a lock namespace of their own in the analysis (all of an
 *     mm's VMA locks together; the kernel has no such tracepoints):
 *     a reader's successful vma_start_read is ACQUIRED(read), vma_end_read
 *     RELEASED(read); a writer that has to wait in vma_start_write (or to
 *     detach a VMA) is START(write) .. ACQUIRED(write) and, at once, RELEASED.
 *   rwsem and VMA-writer wake-ups (sync/rwsem.c, mm/vma_lock.c):
 *     TRACE_SCHED_WAKEUP   pid = the woken thread, other_pid = the waker,
 *                          emitted by the waker just before its futex wake
 *                                                            [sched_wakeup]
 *     TRACE_SCHED_SWITCH   pid = the woken thread, emitted by it as soon as
 *                          it runs again after the futex wait returned
 *                                                            [sched_switch to it]
 *
 * Cost when off: one relaxed load and a predicted-not-taken branch at each
 * site (vml_trace_enabled()). When on: an RCU read-side section (~5 ns), a
 * clock read and a store into the calling thread's own buffer; no lock is
 * shared between threads except when a thread gets its first buffer of a
 * run.
 *
 * Context: vml_trace_start/stop/collect/reset are called by one controlling
 * thread, outside any RCU read-side section; collect and reset only after
 * vml_trace_stop(), which waits until no thread is still writing its buffer
 * (each writes inside an RCU read-side section that saw recording on), so
 * the run's threads may go on taking locks meanwhile.
 */
#ifndef VML_SYNC_TRACE_EMIT_H
#define VML_SYNC_TRACE_EMIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sync/trace_event.h"
#include "util/compiler.h"

/* Low bit of a model VMA-lock event's mm: kernel and model mm pointers are aligned. */
#define TRACE_VMA_TAG 0x1ULL

extern _Atomic bool vml_trace_on;

static inline bool vml_trace_enabled(void)
{
	/* Relaxed: a thread that misses the switch by a few events is harmless. */
	return unlikely(atomic_load_explicit(&vml_trace_on, memory_order_relaxed));
}

/* The calling thread's id (gettid), cached. */
int32_t vml_gettid(void);

/* Record one event of the calling thread (only call when enabled). */
void __vml_trace_emit(uint8_t kind, uint64_t mm, uint8_t flags, int32_t pid, int32_t other);

static inline void vml_trace_lock(uint8_t kind, const void *mm, uint8_t flags)
{
	if (vml_trace_enabled())
		__vml_trace_emit(kind, (uint64_t)(uintptr_t)mm, flags, 0, 0);
}

static inline void vml_trace_vma_lock(uint8_t kind, const void *mm, uint8_t flags)
{
	if (vml_trace_enabled())
		__vml_trace_emit(kind, (uint64_t)(uintptr_t)mm | TRACE_VMA_TAG, flags, 0, 0);
}

/* A waker is about to wake thread @tid (0: unknown, nothing recorded). */
static inline void vml_trace_wakeup(int32_t tid)
{
	if (vml_trace_enabled() && tid)
		__vml_trace_emit(TRACE_SCHED_WAKEUP, 0, 0, tid, 0);
}

/* The calling thread runs again after a wake-up. */
static inline void vml_trace_running(void)
{
	if (vml_trace_enabled())
		__vml_trace_emit(TRACE_SCHED_SWITCH, 0, 0, 0, 0);
}

/*
 * vml_trace_start - drop whatever was recorded and start recording.
 * @max_events: per-thread cap (0: 4M); a thread past it counts lost events.
 * Return: 0 (recording) or -EBUSY (already on).
 */
int vml_trace_start(size_t max_events);
/*
 * vml_trace_set_pool - keep @bufs arrays of @events events faulted in for the
 * buffers of the next runs, filled by vml_trace_start and returned to the
 * pool when a run's buffers are dropped (0, 0: none, the default). For runs
 * whose emitting threads must not take page faults while they record.
 */
void vml_trace_set_pool(unsigned int bufs, size_t events);
/*
 * Stop recording and wait (an RCU grace period) until every event being
 * written has been; what was recorded stays until reset or the next start.
 */
void vml_trace_stop(void);

/*
 * vml_trace_collect - every recorded event, in timestamp order, to @cb
 * (stops at its first non-zero return, which is returned); *@lost, if not
 * NULL, gets the events dropped for lack of memory or past the cap.
 * Return: 0, @cb's value, or -ENOMEM (nothing delivered).
 */
int vml_trace_collect(int (*cb)(const struct trace_event *ev, void *arg), void *arg,
		      uint64_t *lost);
/* Free every buffer (recording must be off). */
void vml_trace_reset(void);

#endif /* VML_SYNC_TRACE_EMIT_H */
