/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pvm_trace.h - `proc-vs-map --trace`: the same lock events from both
 * sides - the live kernel's mmap_lock and sched tracepoints (trace/session.h,
 * root) and the model's own trace (sync/trace_emit.h) - reduced by one analysis
 * (trace/analysis.h) to the numbers that say why two rows differ:
 *
 *   rd_hold    a reader's mmap_lock hold (one per read(); smaps_rollup's
 *              contended drops split a read() into several)
 *   rd_gap     a reader's release -> its next attempt: the time a writer
 *              has to get in between two read()s
 *   wr_wait    the mapper's contended write acquisitions (start_locking ->
 *              acquire_returned while someone held the lock or it slept)
 *   steals     read acquisitions that went past the queued mapper
 *   stolen     write waits a steal went past; handoffs: those that lasted
 *              at least the hand-off time (inferred; the model also counts
 *              its rwsem's real hand-offs)
 *   wake       the mapper's wake-up -> running during its waits; rel_wake: a
 *              reader's release -> the mapper's wake-up (the IPI, and the
 *              mapper's CPU leaving idle). With a tracefs session these are
 *              the kernel's sched events on both targets (the model's
 *              threads are tasks too); else the model's own (its waker's
 *              futex wake -> the waiter back from futex_wait).
 *
 * Per row these are summed over its samples (histograms merged).
 */
#ifndef VML_BENCH_PVM_TRACE_H
#define VML_BENCH_PVM_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pvm.h"
#include "trace/analysis.h"

#define PVM_OFF_BY_MAX 32

struct pvm_dyn {
	unsigned int samples;		/* traced samples */
	double seconds;			/* traced time, summed */
	uint64_t events, lost;
	struct trace_stat rd_hold, rd_gap, rd_granted;
	struct trace_stat wr_acquire, wr_wait, wr_wake, wr_rel_wake, wr_run_acq;
	uint64_t wr_wakeups, steals, stolen_waits, handoffs;
	uint64_t race_unwoken, race_slow, race_ran;	/* see trace_task */
	uint64_t sleep_races[2], sleep_races_won[2];	/* see trace_task */
	uint64_t handoffs_rwsem;	/* model: what the rwsem itself counted */
	bool have_rwsem;
	struct trace_stat vma_wait;	/* model: the mapper's waits for VMA readers */
	/* the release race's legs, fine (trace_task.gap_woke, release_run, run_acquire_fine) */
	struct trace_fine leg_gap_woke, leg_release_run, leg_run_acquire;
	struct trace_fine leg_release_run_slept[2];	/* trace_task.release_run_slept */
	uint64_t write_calls;		/* the mapper's calls in the traced samples */
	/*
	 * Readers switched out while holding mmap_lock (rd_off_mm) or, model,
	 * a VMA lock (rd_off_vma), until they ran again; and who took their CPU
	 * meanwhile (needs the kernel's sched events: root).
	 */
	struct trace_stat rd_off_mm, rd_off_vma;
	struct pvm_off_by {
		int32_t pid;
		char comm[TRACE_COMM_LEN + 5];	/* "self:" for a thread of ours */
		uint64_t count, total_ns, max_ns;
	} off_by[PVM_OFF_BY_MAX];
	unsigned int nr_off_by;
};

struct pvm_tracer;

/*
 * Open the tracer for a run (before any thread is started: it may mount
 * tracefs in a private namespace). Live tracing needs root; without it,
 * one line says what is missing and live rows go untraced.
 * Return: 0 and *@out (always, unless -ENOMEM).
 */
int pvm_tracer_open(const struct bench_common *c, double duration_s, struct pvm_tracer **out);
void pvm_tracer_close(struct pvm_tracer *tr);
bool pvm_tracer_live(const struct pvm_tracer *tr);

/* Model sample: start recording (after the readers settled), stop after the mapper. */
void pvm_trace_model_start(struct pvm_tracer *tr, bool sim);
/* The row the next sample belongs to, for --trace-events' headers. */
void pvm_trace_label(struct pvm_tracer *tr, const char *target, const char *lock,
		     const char *steal);
/*
 * Stop, and account the sample into @dyn: @mm is the model's struct mm,
 * @mapper its mapper thread, @readers the reader threads.
 */
int pvm_trace_model_end(struct pvm_tracer *tr, struct pvm_dyn *dyn, const void *mm,
			pid_t mapper, const pid_t *readers, unsigned int nr, double seconds,
			uint64_t handoffs_rwsem);

/* Live sample: find the child's mm, filter on it and our tasks, drop what came before. */
int pvm_trace_live_start(struct pvm_tracer *tr, pid_t child, const pid_t *readers,
			 unsigned int nr);
int pvm_trace_live_end(struct pvm_tracer *tr, struct pvm_dyn *dyn, pid_t child,
		       const pid_t *readers, unsigned int nr, double seconds);

#endif /* VML_BENCH_PVM_TRACE_H */
