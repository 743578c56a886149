/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * session.h - the live kernel's mmap_lock and scheduler tracepoints, read
 * through tracefs with libtracefs/libtraceevent into trace_event records.
 *
 * A session is a tracefs instance of its own, "vmalock-PID", so that
 * concurrent sessions and other tracers (trace-cmd, perf) do not clash: its
 * events, filters, buffer size and clock ("mono": timestamps compare with
 * clock_gettime(CLOCK_MONOTONIC)) are private to it. Closing the session
 * destroys the instance; a process that dies without closing leaves one
 * behind, and the next session removes the instances of dead PIDs.
 *
 * The machine is left as found: when tracefs is not mounted, the session
 * mounts it in a private mount namespace (unshare(CLONE_NEWNS), `/` made a
 * slave), so the mount vanishes with the process. That changes the calling
 * process's mount namespace, and unshare() needs a single-threaded caller:
 * open the first session before starting threads.
 *
 * Errors are negative errnos; trace_unavailable_hint() turns the ones that
 * mean "tracing is not available here" into one line saying what is
 * missing and how to get it. The library never prints.
 */
#ifndef VML_TRACE_SESSION_H
#define VML_TRACE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sync/trace_event.h"

/* Which tracepoints a session records. */
#define TRACE_EV_MMAP_LOCK	0x1	/* mmap_lock: start_locking, acquire_returned, released */
#define TRACE_EV_SCHED		0x2	/* sched: sched_wakeup, sched_switch */
#define TRACE_EV_CONTENTION	0x4	/* lock: contention_begin, contention_end */

struct trace_session_opts {
	unsigned int events;	/* TRACE_EV_*; 0 means TRACE_EV_MMAP_LOCK */
	uint64_t mm;		/* lock events of this mm only; 0: of every mm */
	size_t buffer_kb;	/* ring buffer per CPU; 0: 4096 */
	uint64_t settle_ns;	/* see trace_session_poll(); 0: 20 ms */
};

struct trace_session;

/*
 * trace_session_open - mount tracefs if needed (see above), remove stale
 * vmalock-PID instances, create this process's instance and start
 * recording the chosen events.
 * Context: the first call in a process must come before it starts threads.
 * Return: 0 and *@out, or
 *   -EPERM    not root (mounting tracefs and tracing need CAP_SYS_ADMIN)
 *   -ENODEV   the kernel has no tracefs
 *   -ENOENT   a chosen tracepoint does not exist in this kernel
 *   -ENOTSUP  no "mono" trace clock
 *   -EBUSY    an instance of this PID exists and is not ours
 *   -EINVAL   the process has threads and tracefs needed mounting, or bad @o
 *   -ENOMEM, or the errno of a failing tracefs operation.
 */
int trace_session_open(const struct trace_session_opts *o, struct trace_session **out);

/* Stop recording and destroy the instance. NULL is fine. Async-signal-unsafe. */
void trace_session_close(struct trace_session *s);

/* Record lock events of @mm only (0: every mm), from now on. Return: 0 or -errno. */
int trace_session_set_mm(struct trace_session *s, uint64_t mm);

/*
 * Record scheduler events of these tasks only: sched_wakeup of one of
 * them, sched_switch to or from one of them (next_pid, prev_pid: who took
 * the CPU from it). @nr 0: of every task.
 * Over 64 tasks the kernel-side filter is dropped (all are recorded).
 * Return: 0 or -errno.
 */
int trace_session_set_pids(struct trace_session *s, const pid_t *pids, size_t nr);

/* Drop everything recorded and not yet delivered. Return: 0 or -errno. */
int trace_session_discard(struct trace_session *s);

/*
 * trace_session_poll - read what the kernel recorded since the last poll
 * (never blocks) and call @cb for each event in timestamp order, stopping
 * when @cb returns non-zero (that value is returned).
 *
 * Events are held back until they are settle_ns old, so that an event a
 * slower CPU commits late is not overtaken by a newer one already
 * delivered; @flush delivers everything read. Lost events (a full ring
 * buffer) are delivered as a TRACE_LOST record in their place. Lock events
 * carry the task's comm and tgid, looked up (once per pid) in /proc or,
 * for a task that is gone, in the kernel's saved comms.
 * Return: 0, @cb's non-zero value, or -errno.
 */
int trace_session_poll(struct trace_session *s, bool flush,
		       int (*cb)(const struct trace_event *ev, void *arg), void *arg);

/* Events the kernel reported lost so far. */
uint64_t trace_session_lost(const struct trace_session *s);

/*
 * trace_session_find_mm - the mm_struct pointer of process @pid, as the lock
 * events show it: makes the kernel take @pid's mmap_lock once for reading,
 * from this thread (a read of /proc/PID/cmdline - one page, a few
 * microseconds of read hold - or, when that takes no lock, of
 * /proc/PID/smaps_rollup). Leaves the session recording lock events of
 * every mm (call trace_session_set_mm() next) with nothing pending.
 * Return: 0 and *@mm, -ESRCH (no such process, or it has no address
 *         space: a kernel thread, a zombie), or -errno.
 */
int trace_session_find_mm(struct trace_session *s, pid_t pid, uint64_t *mm);

/*
 * One line saying what is missing for tracing and how to get it, for an
 * error of trace_session_open(); NULL when @err is not about availability.
 */
const char *trace_unavailable_hint(int err);

#endif /* VML_TRACE_SESSION_H */
