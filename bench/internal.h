/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * internal.h - what the scenarios share: statistics over latency
 * histograms, CPU placement and priorities, the CPU hogs, the progress
 * line, whole-view readers on either target, and output helpers.
 */
#ifndef VML_BENCH_INTERNAL_H
#define VML_BENCH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "bench.h"

#define BENCH_READ_CHUNK 4096	/* one read(): what cat and Paul's scanpid.sh use */

/* ---- the live mapper's own mappings, for the model's mm (mirror.c) ---- */

struct bench_mirror;
struct vml_sys;
struct vml_mm;
/* Read @pid's mappings (below the user address space's end) and their resident pages. */
int bench_mirror_read(pid_t pid, struct bench_mirror **out);
void bench_mirror_free(struct bench_mirror *mi);
unsigned int bench_mirror_count(const struct bench_mirror *mi);	/* 0 for NULL */
unsigned long bench_mirror_pages(const struct bench_mirror *mi);	/* resident */
/*
 * Map the same into @mm (MAP_FIXED at the same addresses, files of the same
 * names in @sys) and fault in as many pages of each. NULL @mi: nothing.
 */
int bench_mirror_apply(const struct bench_mirror *mi, struct vml_sys *sys, struct vml_mm *mm);

/* ---- the model's mapper (mapper.c) ---- */

#define BENCH_MAPPER_SLEEP_NS (10 * NSEC_PER_USEC)	/* mapper.c's nanosleep between calls */

/*
 * Paul's mapper.c on a model mm, call for call the live child's
 * mapper_run(): for @duration_s, a random page of the region mapped over
 * (MAP_FIXED | MAP_POPULATE) or unmapped, each call timed, 10 us apart.
 */
struct bench_mapper {
	struct vml_mm *mm;
	unsigned long region;		/* the region's start */
	unsigned long mb;		/* its size in MiB, a power of two */
	uint64_t seed;			/* the sample's: every row makes the same calls */
	double duration_s;
	int cpu;			/* pinned there; < 0: not pinned */
	bool rcu_anywhere;		/* its RCU callbacks on liburcu's worker (--rcu-callbacks) */
	struct lat_hist *hist;		/* every call's latency is added */
	uint64_t fails;			/* out: calls that failed */
	pid_t tid;			/* out: its thread id */
};
/* pthread start routine; @arg is a struct bench_mapper, read after the join. */
void *bench_model_mapper_main(void *arg);

/* ---- statistics (stats.c) ---- */

struct lat_hist *lat_hist_new(void);	/* initialised; vml_free() it */
void lat_hist_merge(struct lat_hist *dst, const struct lat_hist *src);
/*
 * The @q quantile (0 < @q <= 1) by nearest rank: the middle of the bucket
 * holding the ceil(@q * count)-th value, clamped to [min, max]; max is exact.
 * Return: nanoseconds, 0 for an empty histogram.
 */
double lat_hist_quantile_ns(const struct lat_hist *h, double q);
/*
 * The mean of the values up to the @q quantile (the smallest ceil(@q * count)
 * of them), from the buckets' middles: a mean that a few outliers - a
 * thread preempted while it held a lock - do not move. NAN when empty.
 */
double lat_hist_mean_upto_ns(const struct lat_hist *h, double q);
/* Median of @n values (mean of the two middle ones for even @n); 0 for none. */
double stat_median(const double *v, size_t n);
double stat_min(const double *v, size_t n);
double stat_max(const double *v, size_t n);

/* ---- CPUs and priorities (sched.c) ---- */

/* The first two CPUs we may run on: the mapper's and the readers'; -1 when absent. */
void bench_pick_cpus(int *mapper_cpu, int *reader_cpu);
/*
 * bench_wake_return_ns - a woken futex_wait's way back to user space, from
 * its switch-in, median ns, on the mapper's CPU (wakeret.c).
 * Return: 0, or -errno: perf_event_open() refused (kernel.perf_event_paranoid),
 * -ENOTSUP (one CPU), -ENODATA (too few wake-ups seen), -ENOMEM.
 */
int bench_wake_return_ns(double *out);
int bench_pin_thread(int cpu);		/* this thread; cpu < 0: no-op */
int bench_pin_pid(pid_t pid, int cpu);	/* a single-threaded process (the live child) */
int bench_nice_thread(int nice);	/* setpriority on this thread's tid */

/* Paul's busywait: normal-priority threads spinning on one CPU. */
struct bench_hogs {
	pthread_t *threads;
	unsigned int nr;
	int cpu;
	uint64_t spin_ns;		/* 0: spin continuously */
	atomic_bool stop;
};
int bench_hogs_start(struct bench_hogs *h, unsigned int n, int cpu, double busyduration_ms);
void bench_hogs_stop(struct bench_hogs *h);

/* Sleep without being cut short by signals. */
void bench_sleep_ns(uint64_t ns);

/* ---- the progress line (stderr) ---- */

/* Rewritten in place with \r on a terminal, one line each otherwise; nothing if quiet. */
__attribute__((format(printf, 2, 3)))
void bench_progress(bool quiet, const char *fmt, ...);
void bench_progress_done(bool quiet);
/* Is the progress line rewritten in place (stderr is a terminal)? */
bool bench_progress_tty(void);

/* ---- whole-view readers (viewread.c) ---- */

struct view_reader {
	enum vml_view view;		/* or TARGET_VIEW_QUERY */
	struct vml_mm *mm;		/* model */
	enum vml_lock_policy lock;	/* model */
	struct vml_reader *r;		/* model, text views */
	int fd;				/* live: /proc/PID/<view>, or maps for query */
	char *buf;			/* BENCH_READ_CHUNK bytes; the query's name buffer */
};

int view_reader_open_model(struct view_reader *vr, struct vml_mm *mm, enum vml_view view,
			   enum vml_lock_policy lock);
int view_reader_open_live(struct view_reader *vr, pid_t pid, enum vml_view view);
/*
 * view_reader_pass - read the whole view once, as `cat` does, then rewind.
 * @stop: if non-NULL and set, give up between two read() calls.
 * Return: lines read (VMAs for query), or -errno.
 */
long view_reader_pass(struct view_reader *vr, const atomic_bool *stop);
/*
 * Whole views read back to back until @min_ns passed; *@out = ns per record
 * (@records lines a pass). Return: 0 or -errno.
 */
int view_reader_ns_per_record(struct view_reader *vr, unsigned long records, uint64_t min_ns,
			      double *out);
/*
 * The cost of one read() at end of file (a whole call that takes no lock:
 * the system call and seq_read's own work on the live side), *@out in ns,
 * averaged over calls for at least @min_ns. Return: 0 or -errno.
 */
int view_reader_eof_ns(struct view_reader *vr, uint64_t min_ns, double *out);
void view_reader_close(struct view_reader *vr);

/* Lines in /proc/@pid/maps (the live address space's VMA count), or -errno. */
long bench_live_vma_count(pid_t pid);

/* ---- output (report.c) ---- */

/* Run gnuplot on @script (the text of a gnuplot script). Return: 0 or -1 (printed why). */
int bench_gnuplot(const char *script);
/* The gnuplot `set terminal` line for @path's extension, or NULL if unsupported. */
const char *bench_plot_terminal(const char *path);
/*
 * Write @doc (a jansson document) to @path and drop the reference; a
 * failure is printed ("--json PATH: why"). Return: 0 or -errno.
 */
struct json_t;
int bench_json_write(struct json_t *doc, const char *path);
/* A temporary file name for plot data: /tmp/vmalock-plot.XXXXXX (created). */
int bench_tmpfile(char *path, size_t len, FILE **f);

#endif /* VML_BENCH_INTERNAL_H */
