/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace_event.h - one traced lock or scheduler event, the same record whether
 * it came from the live kernel's tracepoints (trace/session.h) or from the
 * model's locks (sync/trace_emit.h), so that trace/analysis.h sees no
 * difference. Here, below both, because the model's locks emit it.
 *
 * The kernel's events and what a record keeps of them:
 *
 *   mmap_lock:mmap_lock_start_locking     TRACE_LOCK_START    pid, mm, write
 *   mmap_lock:mmap_lock_acquire_returned  TRACE_LOCK_ACQUIRED pid, mm, write, success
 *   mmap_lock:mmap_lock_released          TRACE_LOCK_RELEASED pid, mm, write
 *   sched:sched_wakeup                    TRACE_SCHED_WAKEUP  pid = the woken task
 *   sched:sched_switch                    TRACE_SCHED_SWITCH  pid = next, other_pid = prev
 *   lock:contention_begin                 TRACE_CONTENTION_BEGIN  pid, mm = lock address
 *   lock:contention_end                   TRACE_CONTENTION_END    pid, mm = lock address
 *
 * The kernel emits start_locking before a blocking acquire only: a trylock
 * (mmap_read_trylock, the fault path's first attempt) shows as a lone
 * acquire_returned, and mmap_write_downgrade() as acquire_returned(read)
 * from a task that holds the lock for write (munmap does that).
 */
#ifndef VML_SYNC_TRACE_EVENT_H
#define VML_SYNC_TRACE_EVENT_H

#include <stdint.h>

enum trace_kind {
	TRACE_LOCK_START = 1,
	TRACE_LOCK_ACQUIRED,
	TRACE_LOCK_RELEASED,
	TRACE_SCHED_WAKEUP,
	TRACE_SCHED_SWITCH,
	TRACE_CONTENTION_BEGIN,
	TRACE_CONTENTION_END,
	/* Not an event: the source lost events here (ring buffer overrun);
	 * @mm holds how many, 0 if unknown. Open waits and holds are dropped. */
	TRACE_LOST,
};

#define TRACE_WRITE	0x1	/* the lock event is for write (else read) */
#define TRACE_SUCCESS	0x2	/* acquire_returned: the lock was taken */

#define TRACE_COMM_LEN 16	/* TASK_COMM_LEN */

struct trace_event {
	uint64_t ts;		/* ns, CLOCK_MONOTONIC (the instance's "mono" clock) */
	uint64_t mm;		/* the mm_struct (lock events), the lock (contention) */
	int32_t pid;		/* the task the event is about (see the table above) */
	int32_t tgid;		/* its thread group, 0 if unknown */
	int32_t other_pid;	/* sched_switch: prev; sched_wakeup: the waker */
	uint16_t cpu;
	uint8_t kind;		/* enum trace_kind */
	uint8_t flags;		/* TRACE_WRITE, TRACE_SUCCESS */
	char comm[TRACE_COMM_LEN];	/* of @pid, NUL-terminated; "" if unknown */
};

#endif /* VML_SYNC_TRACE_EVENT_H */
