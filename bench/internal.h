/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * internal.h - what the scenarios share: options several of them take,
 * the calibration, statistics over samples and latency histograms, CPU
 * placement and priorities, the CPU hogs, the progress line, whole-view
 * readers on either target, and the output (JSON, plots, tables).
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

#include "platform/platform.h"
#include "scenario.h"
#include "spaces/child_proto.h"
#include "spaces/target.h"
#include "vmalock/proc.h"

#define BENCH_READ_CHUNK 4096	/* one read(): what cat and Paul's scanpid.sh use */
#define BENCH_MAX_LIST CLI_MAX_LIST	/* --readers, --sizes, --threads */

/* ---- options several scenarios take ---- */

/* --mb: MiB, up to 1M (unsigned long). */
int bench_set_mb(const char *cmd, const struct cli_opt *o, const char *val, void *dst);
/* --mb is a power of two (proc-vs-map's mapper picks a page by masking). Return: 0 or EXIT_USAGE. */
int bench_check_mb(const char *cmd, unsigned long mb);
/* N|auto (long): auto is -1. */
int bench_set_ns_auto(const char *cmd, const struct cli_opt *o, const char *val, void *dst);

/* proc-vs-map's mapper, which monitor shares (mapper.c). */
struct bench_mapper_opts {
	unsigned long mb;		/* --mb: the region, a power of two */
	double duration_s;		/* --duration: its run per sample */
	uint64_t seed;			/* --seed */
	int rcu;			/* --rcu-callbacks: 0 writer, 1 anywhere (liburcu's
					 * default worker; else the model writer's callbacks
					 * run on its CPU at nice 19, as the kernel's run in
					 * softirq) */
};
extern const struct vml_vocab bench_rcu_vocab;
#define BENCH_MAPPER_OPTS(type, field) \
	{ "--mb", "N", bench_set_mb, offsetof(type, field.mb), 0, 0, NULL, \
	  "the mapper's region in MiB, a power of two [128]" }, \
	{ "--duration", "SECONDS", cli_set_seconds, offsetof(type, field.duration_s), 0.001, \
	  86400, NULL, "the mapper's run per sample [3]" }, \
	{ "--seed", "N", cli_set_u64, offsetof(type, field.seed), 0, 0, NULL, \
	  "the mapper's random stream [1]" }, \
	{ "--rcu-callbacks", "writer|anywhere", cli_set_word, offsetof(type, field.rcu), 0, 0, \
	  &bench_rcu_vocab, \
	  "where the model frees what a writer unmapped (RCU callbacks):\n" \
	  "on the writer's CPU at nice 19, as the kernel's softirq\n" \
	  "[writer]; anywhere: liburcu's default worker, nice 0" }
void bench_mapper_defaults(struct bench_mapper_opts *m);

/* ---- the model readers' charges (calibrate.c) ---- */

/* --record-ns, --page-ns, --call-ns: ns, or -1 (auto: measured now). */
struct bench_charge_opts {
	long record_ns;			/* per record, inside the lock */
	long page_ns;			/* per anonymous page walked, inside it */
	long call_ns;			/* per read() call, outside any lock */
};
#define BENCH_CHARGE_OPTS(type, field) \
	{ "--record-ns", "N|auto", bench_set_ns_auto, offsetof(type, field.record_ns), 0, 0, \
	  NULL, \
	  "extra CPU time model readers spend per record, inside their\n" \
	  "lock; auto measures the live kernel's and the model's\n" \
	  "per-record and per-page cost of the view now and charges the\n" \
	  "difference [auto]; proc-vs-map with live rows: a round's model\n" \
	  "samples are charged the page walk its live sample timed on its\n" \
	  "own mapper first (the kernel's cost moves from process to\n" \
	  "process); 0: the model's own speed" }, \
	{ "--page-ns", "N|auto", bench_set_ns_auto, offsetof(type, field.page_ns), 0, 0, NULL, \
	  "extra CPU time model readers spend per anonymous page a walk\n" \
	  "meets, inside their lock; auto: as --record-ns says; N: that,\n" \
	  "in every sample [auto; 0 with --record-ns N]" }, \
	{ "--call-ns", "N|auto", bench_set_ns_auto, offsetof(type, field.call_ns), 0, 0, NULL, \
	  "extra CPU time model readers spend per read() call, outside\n" \
	  "any lock (the system call the model's reader does not make);\n" \
	  "auto measures an end-of-file read() of the view on both sides\n" \
	  "now and charges the difference, plus the model writer's way\n" \
	  "back to the lock once woken (a woken futex_wait's return to\n" \
	  "user space, through perf; else a futex round trip) [auto]" }

/* The live kernel's and the model's cost per record of a view, measured now. */
struct bench_calibration {
	bool done;
	double live_ns, model_ns;	/* per record (VMA), uncontended, page walk aside */
	double record_ns;		/* what model readers are charged: live - model, >= 0 */
	double live_page_ns, model_page_ns;	/* per page a walk covers */
	double page_ns;			/* charged per page walked: live - model, >= 0 */
	/* per read() call, outside the lock: an EOF read() of the view (a whole
	 * system call and seq_read, no lock taken) on each side */
	double live_call_ns, model_call_ns;
	double futex_ns;		/* a futex_wait round trip that does not sleep */
	/* a woken futex_wait: its switch-in -> back in user space; 0: not
	 * measured (wake_return_err says why), futex_ns is charged instead */
	double wake_return_ns;
	int wake_return_err;
	double call_ns;			/* charged per call: live - model + the writer's way back, >= 0 */
};

/* Measure it. Return: 0 or -errno. */
int bench_calibrate_record(enum vml_view view, struct bench_calibration *cal);
/*
 * The model readers' charges for reading @view, ns: each from its option
 * where given, else from @cal (NULL: not measured, then 0); no page charge
 * when --record-ns N is given alone, nor for a view whose records walk no
 * pages (the model would not spend it).
 */
void bench_charges(const struct bench_charge_opts *o, enum vml_view view,
		   const struct bench_calibration *cal, double *record_ns, double *page_ns,
		   double *call_ns);

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
/* As JSON ("sim_layout" of a simulated run's document), and back (@err says what is wrong). */
struct json_t *bench_mirror_json(const struct bench_mirror *mi);
int bench_mirror_from_json(const struct json_t *arr, struct bench_mirror **out, char *err,
			   size_t errlen);

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
/*
 * bench_live_mapper_start - the same mapper on the live kernel: a
 * vmalock-child pinned to @cpu with its populated @mb MiB region, ready for
 * target_live_mapper_run(). With a @layout (layout.h), the layout is applied
 * first (*@layout_vmas: its VMAs found there) and the region goes where the
 * layout placed it. Return: 0 and *@out, or -errno (printed).
 */
struct bench_layout;
int bench_live_mapper_start(unsigned long mb, uint64_t seed, int cpu,
			    const struct bench_layout *layout, unsigned long *layout_vmas,
			    struct child_lat_rep *rep, struct target **out);

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

/*
 * One member of every sample a row took, reduced: STAT_OF(MEDIAN, row->s,
 * row->nr, p50_us). The member is a double, a uint64_t or an unsigned int;
 * a sample without it - NaN, or UINT64_MAX for "not known" - is left out,
 * or with STAT_NAN_SLOWEST (a double that is NaN: a sample that never
 * finished) counts as +infinity. NaN when no sample has it.
 */
enum stat_reduce { STAT_MEDIAN, STAT_MIN, STAT_MAX, STAT_MEDIAN_NAN_SLOWEST };
enum stat_member { STAT_DOUBLE, STAT_U64, STAT_UINT };
double stat_of(enum stat_reduce how, const void *samples, size_t n, size_t size, size_t off,
	       enum stat_member type);
#define STAT_OF(how, s, n, member)							\
	stat_of(STAT_##how, (s), (n), sizeof(*(s)), offsetof(__typeof__(*(s)), member),	\
		_Generic((s)->member, double: STAT_DOUBLE, uint64_t: STAT_U64,		\
			 unsigned int: STAT_UINT))

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
	struct plat_thread *threads;
	unsigned int nr;
	int cpu;
	uint64_t spin_ns;		/* 0: spin continuously */
	atomic_bool stop;
};
int bench_hogs_start(struct bench_hogs *h, unsigned int n, int cpu, double busyduration_ms);
void bench_hogs_stop(struct bench_hogs *h);

/* Sleep without being cut short by signals. */
void bench_sleep_ns(uint64_t ns);

/*
 * A crew: threads that work for a sample's time. Each thread counts itself
 * in (bench_crew_in) and works until bench_crew_stopped(); the sample's
 * time starts once all have counted in.
 */
struct bench_crew {
	atomic_bool stop;		/* set when the time is up */
	atomic_uint started;		/* threads that have counted in */
	uint64_t elapsed_ns;		/* out: from all counted in to all joined */
};
void bench_crew_in(struct bench_crew *c);
bool bench_crew_stopped(struct bench_crew *c);
/*
 * bench_crew_run - start @n threads, thread i running @main on @args + i *
 * @size, let them work @seconds once all have counted in, then stop and
 * join them. *@started: how many ran (read only their elements).
 * Return: 0, or -EAGAIN or -ENOMEM: not all could start (those that did
 * were stopped at once and joined).
 */
int bench_crew_run(struct bench_crew *c, void *args, size_t size, unsigned int n,
		   void *(*main)(void *), double seconds, unsigned int *started);

/* ---- the progress line (stderr) ---- */

/* Rewritten in place with \r on a terminal, one line each otherwise; nothing if quiet. */
__attribute__((format(printf, 2, 3)))
void bench_progress(bool quiet, const char *fmt, ...);
void bench_progress_done(bool quiet);
/* Is the progress line rewritten in place (stderr is a terminal)? */
bool bench_progress_tty(void);

/* ---- whole-view readers (viewread.c) ---- */

/*
 * What a live reader's own big read()s cost the kernel a page, in the
 * sample itself: each read() whose records show at least WALK_MIN_PAGES
 * resident pages ("Rss:", smaps and smaps_rollup) gives its thread CPU
 * time - which leaves out waits for the lock and time off the CPU - less
 * the records' cost, over those pages. One reader's, no lock.
 */
#define WALK_MIN_PAGES 1024
#define WALK_MAX_SAMPLES 4096
struct walk_sampler {
	double record_ns;		/* the kernel's cost a record, taken off */
	unsigned int n;
	double ns_per_page[WALK_MAX_SAMPLES];
};

struct view_reader {
	enum vml_view view;		/* or TARGET_VIEW_QUERY */
	struct walk_sampler *walk;	/* live: time big read()s; NULL: none */
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

/* ---- names (util.c) ---- */

const char *bench_view_name(enum vml_view view);	/* "query" for TARGET_VIEW_QUERY */
/* smaps, smaps_rollup, numa_maps: views whose records walk the page tables. */
bool bench_view_walks_pages(enum vml_view view);
/* /proc/loadavg's line ("" if unreadable); one comment line with it, before a run's results. */
void bench_loadavg(char *buf, size_t len);
void bench_print_load(FILE *f);
/* The kernel release, for headers: "6.18.44-..." */
const char *bench_kernel(void);
/* Do this kernel's maps and PROCMAP_QUERY take per-VMA locks (6.17 and later)? */
bool bench_kernel_maps_per_vma(void);
/*
 * Does the live kernel read @view (or TARGET_VIEW_QUERY) under per-VMA locks?
 * As the host profile says (host_view_per_vma: the page-walking views by
 * experiment, or from --profile FILE); @how, if not NULL, says where from.
 */
bool bench_kernel_view_per_vma(enum vml_view view, const char **how);

/* ---- the JSON document (doc.c) ---- */

/*
 * A run's document: {"meta": {...}, "calibration": null, "rows": []}, meta
 * holding what every scenario's has (scenario, question, kernel, samples,
 * targets, load). A scenario's json() adds its own meta fields, sets the
 * calibration it charged the model, and appends its rows.
 */
struct json_t *bench_doc_new(const struct bench_run *r);	/* NULL: no memory */
struct json_t *bench_doc_meta(struct json_t *doc);		/* borrowed */
struct json_t *bench_doc_rows(struct json_t *doc);		/* borrowed */
void bench_doc_set_calibration(struct json_t *doc, struct json_t *cal);	/* takes @cal */
/* A new row, appended, with its "target" (NULL: none); borrowed, for the caller to fill. */
struct json_t *bench_doc_row(struct json_t *doc, const char *target);
/* A new array under @key of @row (its samples); borrowed. */
struct json_t *bench_doc_samples(struct json_t *row, const char *key);

/* ---- results tables and verdicts (report.c) ---- */

/* How a column writes a number; "-" for NaN and infinities unless said. */
enum bench_num {
	BENCH_NUM_FIXED,	/* prec decimals */
	BENCH_NUM_RAW,		/* prec decimals; nan, inf as printf writes them */
	BENCH_NUM_G,		/* prec significant digits (%g); nan, inf as printf's */
	BENCH_NUM_US,		/* microseconds: prec decimals below 100000, none above */
	BENCH_NUM_NS,		/* nanoseconds: whole below 10000, 3 digits above; inf as printf's */
	BENCH_NUM_ADAPT,	/* 3, 2, 1, 0 decimals as it grows past 0.1, 10, 100000 */
	BENCH_NUM_COUNT,	/* whole when it is, else 2 decimals below 100, else adapt */
	BENCH_NUM_LOG,		/* 2 decimals below 10, whole below 100000, then 1e+05 */
};

/*
 * A column of a results table: a heading over cells, one space after the
 * column before (or gap spaces). Text is right-aligned, left-aligned when
 * width is negative, cut at prec characters if prec is set.
 */
struct bench_col {
	const char *head;		/* NULL ends the columns */
	int width;
	enum bench_num num;
	int prec;
	int gap;			/* spaces before it; 0: one */
};

#define BENCH_TEXT(head_, width_) { .head = (head_), .width = (width_) }
#define BENCH_NUM(head_, width_, how, prec_) \
	{ .head = (head_), .width = (width_), .num = BENCH_NUM_##how, .prec = (prec_) }
#define BENCH_COLS_END { .head = NULL }

/* A table being printed: bench_text, bench_num, ... fill a row's cells in order. */
struct bench_table {
	FILE *f;
	const struct bench_col *cols;
	unsigned int hide;		/* columns not shown (bits): their cells are dropped */
	unsigned int next;		/* the next cell's column */
};
/* The heading line. */
void bench_table_start(struct bench_table *t, FILE *f, const struct bench_col *cols,
		       unsigned int hide);
void bench_text(struct bench_table *t, const char *s);
__attribute__((format(printf, 2, 3)))
void bench_textf(struct bench_table *t, const char *fmt, ...);	/* unpadded */
void bench_num(struct bench_table *t, double v);
/* End the row (a newline). */
void bench_row_end(struct bench_table *t);

/* A verdict's ratio: "1.23x", "12x" from 9.95, "-" when @den is not above 0 or @num below 0. */
const char *bench_ratio(char *buf, size_t len, double num, double den);

/* ---- gnuplot (plot.c) ---- */

/*
 * A plot being made: the scenario writes its data to @data (bench_plot_data()
 * names that file in the script) and the rest of its script to @script,
 * which already sets the terminal for the file's extension and the output.
 */
struct bench_plot {
	const char *path;		/* --plot FILE */
	FILE *data;
	FILE *script;
	char data_path[64];
	char *text;			/* the script's text, for gnuplot */
	size_t len;
};
/* --plot: begin the plot, let the scenario draw it, run gnuplot. Return: 0 or -1 (printed). */
int bench_plot_run(const struct bench_run *r);
/* The data file's name in the script, quoted. */
void bench_plot_data(const struct bench_plot *p);
/* A gnuplot single-quoted string: a quote is written twice. */
void bench_plot_quoted(FILE *f, const char *s);

#endif /* VML_BENCH_INTERNAL_H */
