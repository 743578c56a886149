/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench.h - the benchmark scenarios behind `vmalock bench` and `vmalock run`.
 *
 * A benchmark is not a test: it reports what it measured and never fails
 * because the machine is slow. Every figure is a median (or p99, or max)
 * over samples taken in the same run, and comparisons are ratios of two
 * sides measured in that run: the model against the live kernel, the old
 * lock policy (mmap) against the new (vma). bench/README.md says how to
 * run and read each scenario; docs/bench-methods.md has the method.
 *
 * Scenarios print progress on stderr and their results on stdout; on a
 * failure they print one line naming what failed and return non-zero (a
 * negative errno, or 1); they never exit. The CLI maps that to its exit
 * status.
 */
#ifndef VML_BENCH_BENCH_H
#define VML_BENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "spaces/child_proto.h"
#include "spaces/target.h"
#include "spaces/words.h"
#include "vmalock/proc.h"

#define BENCH_MAX_LIST 16
#define BENCH_MAX_TOOLS 16

/* monitor: the --tool commands, in the order given */
struct bench_tool_list {
	const char *cmd[BENCH_MAX_TOOLS];
	unsigned int nr;
};

/*
 * khugepaged --policy: which of seed 003's fixes a scanner row has
 * (bench_kh_policy_vocab; VML_KHUGEPAGED_FIX_* in khugepaged.c).
 */
enum bench_kh_policy {
	BENCH_KH_MAINLINE,	/* none: 6.18 */
	BENCH_KH_RESUME,	/* the per-mm resume address alone */
	BENCH_KH_SKIP,		/* skip to the next candidate alone */
	BENCH_KH_DROP,		/* drop and re-take after 1024 skipped VMAs alone */
	BENCH_KH_FIXED,		/* all three: the series */
};
extern const struct vml_vocab bench_kh_policy_vocab;

struct bench_opts {
	bool model, live;		/* --target */
	unsigned int locks;		/* --lock: VOCAB_BIT(enum vml_lock_policy)s (model rows) */
	bool kernel_transients;		/* --kernel-transients (proc-vs-map model rows) */
	enum vml_view view;		/* --view; TARGET_VIEW_QUERY for PROCMAP_QUERY */
	unsigned int readers[BENCH_MAX_LIST];	/* --readers N[,N...] */
	unsigned int nr_readers;
	double duration_s;		/* --duration: mapper run per sample */
	unsigned int samples;		/* --samples */
	uint64_t seed;			/* --seed */
	unsigned long mb;		/* --mb: the mapper's region */
	unsigned int busy;		/* --busy: CPU hogs on the readers' CPU */
	double busyduration_ms;		/* --busyduration: spin, sleep 1 ms; 0: spin on */
	unsigned long sizes[BENCH_MAX_LIST];	/* read-cost: --sizes */
	unsigned int nr_sizes;
	bool populate;			/* read-cost: --populate the layouts */
	unsigned long iterations;	/* ops: --iterations per sample */
	unsigned long vmas;		/* ops: --vmas in the maps-read layout */
	unsigned long kh_skip_vmas;	/* khugepaged: --skip-vmas ineligible VMAs */
	unsigned int kh_ranges;		/* khugepaged: --ranges collapsible 2 MiB ranges */
	unsigned int kh_scan_sleep_ms;	/* khugepaged: --scan-sleep between wakeups */
	unsigned int kh_policies;	/* khugepaged: --policy, VOCAB_BIT(enum bench_kh_policy)s */
	unsigned int kh_uncollapsible;	/* khugepaged: --uncollapsible eligible ranges
					 * khugepaged cannot collapse (sub-PMD DONTNEED) */
	unsigned int steal;		/* --steal, VOCAB_BIT(enum vml_steal_policy)s; 0: the
					 * scenario's default (proc-vs-map: mainline;
					 * khugepaged: nosteal) */
	bool trace;			/* --trace: lock dynamics from traces, both targets */
	const char *trace_events;	/* --trace-events FILE: the raw merged events */
	bool region_only;		/* --region-only: the model mm without the live
					 * mapper's own mappings (mirror.c) */
	bool rcu_anywhere;		/* --rcu-callbacks anywhere: liburcu's default worker
					 * (else the model writer's callbacks run on its CPU
					 * at nice 19, as the kernel's run in softirq) */
	unsigned int threads[BENCH_MAX_LIST];	/* exec-churn: --threads N[,N...] */
	unsigned int nr_threads;
	unsigned long size;		/* shmem-smaps: --size of the mapping (bytes) */
	unsigned long stride;		/* shmem-smaps: --stride between dirtied pages */
	unsigned long reads;		/* shmem-smaps: --reads of smaps a sample */
	const char *json;		/* --json FILE */
	const char *plot;		/* --plot FILE.png|FILE.svg */
	bool quiet;			/* --quiet: no progress line */
	long record_ns;			/* --record-ns: model readers' extra ns per record;
					 * -1 (auto): calibrated against the live kernel */
	long call_ns;			/* --call-ns: model readers' extra ns per read() call,
					 * outside locks; -1 (auto): measured against the
					 * live kernel */
	long page_ns;			/* --page-ns: ... per anonymous page walked; -1
					 * (auto): the calibration's, or paired (procvsmap.c) */
	const char *note;		/* printed under the table header, if set */
	struct bench_tool_list tools;	/* monitor: --tool CMD (repeatable) */
	const char *tool_names;		/* monitor: --tools NAME,...|all|none; NULL: all
					 * built-ins unless --tool was given */
	double interval_s;		/* monitor: --interval between two polls */
	double tool_timeout_s;		/* monitor: --tool-timeout: a poll is killed after it */
	unsigned int tool_nice;		/* monitor: --tool-nice of the tools */
};

/* ---- proc-vs-map ---- */

struct pvm_sample {
	double p50_us, p99_us, max_us;
	double avg_us;			/* mean: mapper.c's opavg */
	uint64_t ops;			/* mmap() + munmap() calls */
	uint64_t vmas;			/* VMAs in the address space at the end */
	uint64_t passes;		/* whole views the readers read, all together */
	uint64_t fallbacks;		/* model: the readers' fallbacks to mmap_lock */
	uint64_t fails;			/* mapper calls that failed (counted, still timed) */
	/*
	 * The page walk's cost per anonymous page, ns: live samples, what their
	 * own mapper's region cost the kernel, read uncontended before the
	 * readers started; model samples, the charge their readers paid (the
	 * live sample of the same round and readers, less the model's own).
	 * 0: not measured / not charged.
	 */
	double live_page_ns, charged_page_ns;
	struct lat_hist *hist;		/* every call's latency */
};

struct pvm_dyn;

struct pvm_row {
	enum target_kind target;
	enum vml_lock_policy lock;	/* model rows */
	enum vml_steal_policy steal;	/* model rows (a live row's are the kernel's) */
	struct pvm_dyn *dyn;		/* --trace: what the traces said, else NULL */
	unsigned int readers;
	struct pvm_sample *s;		/* [samples], nr filled */
	unsigned int nr;
	/* over the samples: */
	double p50_us, p99_us;		/* medians */
	double avg_us;			/* median of per-sample means: the seeds' "median" */
	double max_us, max_min_us, max_worst_us;	/* median, min and max of per-sample max */
	double ops, vmas, passes;	/* medians */
	double fallbacks;		/* model: median of per-sample fallbacks */
};

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

/* Measure it (bench/calibrate.c). Return: 0 or -errno. */
int bench_calibrate_record(enum vml_view view, struct bench_calibration *cal);
/*
 * The model readers' charges for reading @view, ns: each from its option
 * (--record-ns, --page-ns, --call-ns) where given, else from @cal (NULL: not
 * measured, then 0); no page charge when --record-ns N is given alone, nor
 * for a view whose records walk no pages (the model would not spend it).
 */
void bench_charges(const struct bench_opts *o, enum vml_view view,
		   const struct bench_calibration *cal, double *record_ns, double *page_ns,
		   double *call_ns);

struct pvm_result {
	const struct bench_opts *o;
	struct bench_calibration cal;	/* model readers' charge (cal.done: measured) */
	double record_ns;		/* the charge applied (measured or --record-ns) */
	double call_ns;			/* per read() call (measured or --call-ns) */
	double page_ns;			/* per page walked (measured with record_ns) */
	bool paired_page_ns;		/* model samples take page_ns from their round's live one */
	enum vml_view view;
	struct pvm_row *rows;
	unsigned int nr_rows;
	int mapper_cpu, reader_cpu;	/* -1: not pinned */
	struct pvm_tracer *tracer;	/* --trace */
	struct bench_host_lat *hostlat;	/* the host's timings fed to the model, or NULL */
	struct bench_mirror *mirror;	/* the live mapper's own mappings, for the model's
					 * mm; NULL: the model's mm holds the region alone
					 * (--region-only, or no live kernel) */
};

/* Run every row; fills *@res (free with pvm_result_free). Return: 0 or an exit status. */
int bench_proc_vs_map(const struct bench_opts *o, struct pvm_result *res);
void pvm_result_free(struct pvm_result *res);
void pvm_print_table(FILE *f, const struct pvm_result *res);
int pvm_write_json(const char *path, const struct pvm_result *res);
int pvm_plot(const char *path, const struct pvm_result *res);
/* A row's lock and steal policy as tables and JSON write them ("kernel": a live row's). */
const char *pvm_lock_label(const struct pvm_row *row);
const char *pvm_steal_label(const struct pvm_row *row);
/* --trace: the traced lock-dynamics table, after the main one (bench/pvm_trace.c). */
void pvm_print_dynamics(FILE *f, struct pvm_result *res);
/* The row for (@target, @lock, @readers), or NULL; a live row has no @lock of its own. */
const struct pvm_row *pvm_find(const struct pvm_result *res, enum target_kind target,
			       enum vml_lock_policy lock, unsigned int readers);

/* ---- read-cost and ops: run, print the table, write JSON / plot as asked ---- */
int bench_read_cost(const struct bench_opts *o);
int bench_ops(const struct bench_opts *o);
int bench_khugepaged(const struct bench_opts *o);
/* monitor: real monitoring tools against the live mapper, and the model's prediction. */
int bench_monitor(const struct bench_opts *o);
/* The built-in tools' names, comma-separated (for --help and --tools checks). */
const char *bench_monitor_tool_names(void);
/* Is @name a built-in tool? */
bool bench_monitor_is_tool(const char *name);
/* Seed 001: the file mapping lock under exec churn, pre vs post order (execchurn.c). */
int bench_exec_churn(const struct bench_opts *o);
/* Seed 004: the cost of reading smaps of shmem mappings, fast paths vs per-page (shmemsmaps.c). */
int bench_shmem_smaps(const struct bench_opts *o);
/* A writer's wait for a VMA's reader: munmap during MADV_DONTNEED (vmawait.c). */
#define BENCH_VMA_WAIT_MAX_MB 4096	/* --mb: the region is populated on both targets */
int bench_vma_wait(const struct bench_opts *o);

/* ---- shared helpers (bench/util.c) ---- */

const char *bench_view_name(enum vml_view view);
/* smaps, smaps_rollup, numa_maps: views whose records walk the page tables. */
bool bench_view_walks_pages(enum vml_view view);
/* One comment line with /proc/loadavg, before a run's results. */
void bench_print_load(FILE *f);
/* The kernel release, for headers: "6.18.44-..." */
const char *bench_kernel(void);

#endif /* VML_BENCH_BENCH_H */
