/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * monitor.h - `vmalock bench monitor`: real monitoring tools (pmap, smem,
 * top, ps, htop, atop, pidstat, prometheus-process-exporter, or any
 * --tool CMD) polling the live mapper of proc-vs-map, and the model's
 * prediction of what the same reads would cost the mapper under each lock
 * policy.
 *
 * The pieces (one file each):
 *   monitor_tools.c   the tools: the built-in list, running one (a command per
 *                     poll; a program left running on a pseudo-terminal; an
 *                     exporter scraped over HTTP), timeouts
 *   monitor_strace.c  what a tool reads of /proc, observed under strace
 *   monitor.c         the samples (live and model), the replay of observed
 *                     reads on the model, the entry point
 *   monitor_report.c  the tables, the JSON document, the plot
 */
#ifndef VML_BENCH_MONITOR_H
#define VML_BENCH_MONITOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"

#define MON_MAX_TOOLS 32	/* built-ins and --tool commands together */
#define MON_MAX_CMDS 16		/* --tool commands */
#define MON_MAX_FILES 48	/* distinct /proc/PID/ files a tool reads */
#define MON_CMD_MAX 512
#define MON_VIEW_HOLD 99	/* replay: one mmap_lock(R) hold per read() (cmdline, environ...) */
#define MON_VIEW_CLEAR_REFS 98	/* replay: clear_refs 1 per open, mmap_lock(W) for the whole walk */
#define MON_VIEWS 4		/* enum vml_view: maps, smaps, smaps_rollup, numa_maps */
/*
 * A model row's lock policy besides enum vml_lock_policy (a value outside
 * it): each view under the lock this kernel takes for it (maps under
 * per-VMA locks on 6.17+, smaps, smaps_rollup and numa_maps under
 * mmap_lock): "today".
 */
#define MON_LOCK_TODAY 100

struct mon_opts {
	struct mon_cmds {		/* --tool CMD (repeatable), in the order given */
		const char *cmd[MON_MAX_CMDS];
		unsigned int nr;
	} tools;
	const char *tool_names;		/* --tools NAME,...|all|none; NULL: all built-ins
					 * unless --tool was given */
	double interval_s;		/* --interval between two polls */
	double tool_timeout_s;		/* --tool-timeout: a poll is killed after it */
	unsigned int tool_nice;		/* --tool-nice of the tools */
	struct bench_mapper_opts mapper;	/* --mb, --duration, --seed, --rcu-callbacks */
	struct bench_charge_opts charge;	/* --record-ns, --page-ns, --call-ns */
	const char *layout_path;	/* --layout FILE.ops */
	struct bench_layout *layout;	/* ...loaded by the check (layout.h); NULL: none */
};

enum mon_kind {
	MON_ONESHOT,	/* a command run once per poll (pmap, ps, top -b -n 1, ...) */
	MON_PTY,	/* left running on a pseudo-terminal, refreshing itself (htop) */
	MON_EXPORTER,	/* a server left running, scraped over HTTP once per poll */
};

struct mon_tool {
	char name[24];			/* the row's label */
	char cmd[MON_CMD_MAX];		/* template: {pid} {ppid} {interval} {interval_ds}
					 * {port} {config} */
	enum mon_kind kind;
	char exe[64];			/* looked for in PATH */
	const char *package;		/* its Debian package; NULL for --tool */
	const char *learns;		/* built-ins: what a user learns from it */
	bool builtin;
	char skip[200];			/* why it does not run; "" when it does */
};

/* One /proc file as a tool read it, per poll (observed). */
struct mon_file {
	char name[40];			/* below /proc/PID/: "smaps"; "task/stat" for task/TID/stat */
	double opens, reads, bytes;	/* per poll */
	double data_reads;		/* reads that returned data, per poll */
	double fails;			/* failed opens per poll */
	unsigned int size;		/* the read() size asked for most often */
	double pids;			/* other processes' files: how many processes */
	/* while parsing: */
	uint64_t sizes[8], size_count[8];
	pid_t last_pid;
};

/* What a tool read of /proc in one poll, observed under strace (monitor_strace.c). */
struct mon_obs {
	bool done;
	char why[200];			/* not done: why; done: a remark (exit status) */
	double polls;			/* polls the observation saw */
	double wall_ms;			/* the observation's wall time (under strace: slow) */
	struct mon_file mapper[MON_MAX_FILES];	/* the mapper's /proc/PID/ files */
	unsigned int nr_mapper;
	struct mon_file other[MON_MAX_FILES];	/* other processes' files, by name */
	unsigned int nr_other;
	double other_pids;		/* processes other than the mapper it read, per poll */
	double sys_reads, sys_bytes;	/* /proc files of no process (meminfo, stat...), per poll */
};

/* A step of a tool's replay on the model: one file of the mapper, per poll. */
struct mon_step {
	int view;			/* enum vml_view, or MON_VIEW_HOLD */
	const char *file;
	double opens;			/* per poll (fractions accumulate across polls) */
	double reads;			/* MON_VIEW_HOLD: read() calls (lock holds) per open */
	unsigned int size;		/* read() size */
};

struct mon_sample {
	double p50_us, p99_us, avg_us, max_us;
	uint64_t ops, vmas, fails;	/* the mapper's calls, VMAs at the end, failed calls */
	uint64_t layout_vmas;		/* --layout: its VMAs found in the sample's mm */
	unsigned int polls, timeouts, errors;
	double poll_ms;			/* mean poll: the tool's run (htop: CPU time per
					 * interval; exporter: a scrape; model: the replay) */
	struct lat_hist *hist;		/* every mapper call */
	char note[160];			/* the first thing that went wrong */
};

struct mon_row {
	int tool;			/* index in mon_result.tools; -1: no tool */
	enum target_kind target;
	int lock;			/* model: enum vml_lock_policy or MON_LOCK_TODAY */
	struct mon_sample *s;		/* [samples], nr filled */
	unsigned int nr;
	/* over the samples: medians, and sums of timeouts and errors */
	double p50_us, p99_us, avg_us, max_us, max_worst_us, ops, vmas, polls, poll_ms;
	unsigned int timeouts, errors;
	const char *note;		/* the first sample's note that is set, or NULL */
};

struct mon_result {
	const struct bench_common *c;
	const struct mon_opts *o;
	struct mon_tool tools[MON_MAX_TOOLS];
	unsigned int nr_tools;
	struct mon_obs obs[MON_MAX_TOOLS];
	struct mon_step steps[MON_MAX_TOOLS][MON_MAX_FILES];
	unsigned int nr_steps[MON_MAX_TOOLS];
	struct mon_row *rows;
	unsigned int nr_rows;
	int mapper_cpu, reader_cpu;
	pid_t self;			/* our pid: the mapper's command line ends with it */
	bool maps_per_vma;		/* the live kernel reads maps under per-VMA locks (6.17+) */
	bool strace;			/* observations possible */
	unsigned long obs_vmas;		/* the mapper's VMAs when the tools were observed */
	double hold_ns;			/* one read of the mapper's cmdline on the live kernel */
	/* the model readers' charges, per view (bench/calibrate.c): per record, per
	 * page a walk covers (inside the lock), per read() call (outside it) */
	double record_ns[MON_VIEWS], page_ns[MON_VIEWS], call_ns[MON_VIEWS];
	struct bench_calibration cal[MON_VIEWS];
};

/* ---- the tools (monitor_tools.c) ---- */

/* The tool list from --tools/--tool, each checked for its program. Return: 0 or exit status. */
int mon_tools_init(const struct mon_opts *o, struct mon_result *res);
/* --tool CMD (struct mon_cmds), --tools all|none|NAME,... (const char *) */
int mon_set_tool(const char *cmd, const struct cli_opt *o, const char *val, void *dst);
int mon_set_tool_names(const char *cmd, const struct cli_opt *o, const char *val, void *dst);
/* Is @exe in PATH (or an executable path)? */
bool mon_have_exe(const char *exe);

/*
 * A tool running against one mapper for one sample: polled every interval
 * by a thread of ours on the readers' CPU at the tools' nice value.
 */
struct mon_driver {
	const struct mon_result *res;
	const struct mon_tool *tool;
	pid_t mapper;
	const char *strace_dir;		/* observing: run the tool under strace -ff -o DIR/t */
	uint64_t interval_ns, timeout_ns;
	unsigned int max_polls;		/* stop polling after this many (0: no limit) */
	char tmpdir[64];		/* exporter config, htop's rc file */
	char config[96];
	int port;
	pid_t pid;			/* a resident tool (MON_PTY, MON_EXPORTER): its process group */
	int pty;			/* MON_PTY: the master */
	pthread_t thread;
	bool started;
	atomic_bool stop;
	atomic_bool ready;		/* the tool is up; polls begin settle_ns later */
	atomic_bool done;		/* the thread has finished (max_polls reached, or failed) */
	int start_ret;			/* 0, or -EIO: the tool did not start (written before ready) */
	uint64_t settle_ns;
	uint64_t t0;			/* the first poll */
	/* results (read after mon_driver_stop) */
	unsigned int polls, timeouts, errors;
	uint64_t poll_ns;		/* all polls together */
	char note[160];
	int exit_status;		/* the last poll's, or -1 */
};

/*
 * mon_driver_start - start @tool against @mapper (resident tools are
 * started now) and its polling thread; returns once the tool is ready.
 * The first poll is @settle_ns later.
 * Return: 0 or -errno (d->note says why).
 */
int mon_driver_start(struct mon_driver *d, uint64_t settle_ns);
/* Stop polling, end a resident tool, join the thread. */
void mon_driver_stop(struct mon_driver *d);

/* ---- observation (monitor_strace.c) ---- */

/*
 * mon_observe - run tool @t once (a resident tool for a few polls) under
 * strace against @mapper, and fill res->obs[t] with what it read of /proc.
 * Return: 0 (res->obs[t].done says whether it worked, .why otherwise).
 */
int mon_observe(struct mon_result *res, unsigned int t, pid_t mapper);
/*
 * What the kernel takes of the mapper's locks to produce @file ("smaps",
 * "task/cmdline", ...): a phrase for the table, and the model view that
 * replays it (enum vml_view, MON_VIEW_HOLD, or -1: no lock of the mm).
 */
const char *mon_file_lock(const char *file, bool maps_per_vma, int *view);

/* ---- output (monitor_report.c): the descriptor's print, json and plot ---- */

void mon_print(FILE *f, const struct bench_run *r);
void mon_json(struct json_t *doc, const struct bench_run *r);
int mon_plot(struct bench_plot *p, const struct bench_run *r);
/* The row of (@tool, @target, @lock), or NULL. */
const struct mon_row *mon_find(const struct mon_result *res, int tool, enum target_kind target,
			       int lock);
/*
 * The model policy that stands for today's kernel for what @tool reads:
 * VML_LOCK_MMAP when it reads no maps (or the kernel is older than 6.17),
 * VML_LOCK_VMA when it reads only maps, MON_LOCK_TODAY when both.
 */
int mon_today_lock(const struct mon_result *res, int tool);
/* Does the lock policy change anything @tool's replay does (a view, not only cmdline holds)? */
bool mon_policy_matters(const struct mon_result *res, int tool);
/* A model row's lock policy: "mmap", "vma", "today" */
const char *mon_lock_name(int lock);
/* A row's lock as tables and JSON write it: mon_lock_name, or "kernel" (live) */
const char *mon_row_lock(const struct mon_row *row);

#endif /* VML_BENCH_MONITOR_H */
