// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock watch PID - who stalls process PID on its mmap_lock, and by how
 * much, from the live kernel's tracepoints (src/trace/).
 *
 * How: a tracefs session of our own records mmap_lock_start_locking,
 * _acquire_returned and _released for PID's mm only (a kernel-side filter
 * on the mm pointer), and sched_wakeup/sched_switch of PID's threads. The
 * mm pointer comes from making the kernel take PID's mmap_lock once for
 * reading ourselves (a read of /proc/PID/cmdline: one page, microseconds).
 * Events of PID's threads are its waits and holds; events of any other
 * task on that mm are outside holders (monitoring agents reading
 * /proc/PID/smaps, khugepaged, debuggers). Nothing touches PID itself: no
 * ptrace, no signals.
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#include "cli.h"
#include "layout.h"
#include "pvm.h"
#include "util/json.h"
#include "scriptrun.h"
#include "trace/analysis.h"
#include "trace/session.h"
#include "twin/twin.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/compiler.h"

#define POLL_NS (100 * NSEC_PER_MSEC)
#define RESCAN_NS NSEC_PER_SEC
#define MAX_TIDS 4096
/* Rows of each list while refreshing on a terminal (the final report has all). */
#define TTY_ROWS 8

struct watch_opts {
	const char *pid;
	double duration, interval;
	const char *json;
	bool predict;			/* --predict */
	const char *layout;		/* --layout: PID's twin, until `vmalock twin` */
	double predict_s;		/* --predict-duration */
};

#define W(f) offsetof(struct watch_opts, f)
static const struct cli_opt watch_opt_table[] = {
	{ "--duration", "S", cli_set_seconds, W(duration), 0.001, 86400 * 365, NULL,
	  "stop after S seconds [at Ctrl-C, or when PID exits]" },
	{ "--interval", "S", cli_set_seconds, W(interval), 0.05, 86400, NULL,
	  "refresh the report every S seconds on a terminal [1]" },
	{ "--json", "FILE", cli_set_json_path, W(json), 0, 0, NULL,
	  "also write the result as one JSON document to FILE\n"
	  "(\"-\": to stdout, instead of the text report)" },
	{ "--predict", NULL, cli_set_flag, W(predict), 0, 0, NULL,
	  "after the watch, also run PID's twin (vmalock twin PID, taken\n"
	  "before the watch; or --layout) on the model\n"
	  "with proc-vs-map's mapper and one nice-15 smaps reader, under\n"
	  "6.18's policy (mmap) and the per-VMA one (vma), and print the\n"
	  "mapper's calls beside PID's measured waits (--json: under\n"
	  "\"prediction\")" },
	{ "--layout", "FILE.ops", cli_set_string, W(layout), 0, 0, NULL,
	  "with --predict: the op script that rebuilds PID's address\n"
	  "space instead of the twin taken now (checked before the watch\n"
	  "starts)" },
	{ "--predict-duration", "S", cli_set_seconds, W(predict_s), 0.05, 3600, NULL,
	  "with --predict: the model's mapper runs S seconds a policy [2]" },
	CLI_OPT_END,
};
#undef W

static const struct cli_opt *const watch_tables[] = { watch_opt_table, NULL };

static int pid_arg(void *opts, const char *arg)
{
	struct watch_opts *o = opts;

	if (o->pid)
		return cli_usage_error("watch", "unexpected argument '%s'", arg);
	o->pid = arg;
	return 0;
}

static void help(FILE *f)
{
	fprintf(f,
"usage: vmalock watch PID [options]\n"
"\n"
"Who stalls process PID on its mmap_lock, and by how much. For each thread of\n"
"PID: how often it waited for mmap_lock (in mmap, munmap, mprotect, brk, page\n"
"faults that fall back to mmap_lock, ...), the total and longest wait and a\n"
"histogram; and for those waits, which tasks held the lock meanwhile - pid,\n"
"comm, read or write, whether they belong to PID or come from outside (a\n"
"monitoring agent reading /proc/PID/smaps, khugepaged, a debugger) - and for\n"
"how long their holds overlapped the waits. Also how long each waiting thread\n"
"took from its wake-up to running, and every outside task's read holds and\n"
"the gaps between them.\n"
"\n"
"\n");
	cli_print_opts(f, watch_tables);
	fprintf(f,
"\n"
"Needs root (to mount tracefs, privately, and create a tracing instance of its\n"
"own; both vanish when watch ends) and a kernel with the mmap_lock tracepoints\n"
"(Linux 5.10 or later). It does not stop, ptrace or signal PID; it takes PID's\n"
"mmap_lock for reading once at the start, for a few microseconds, to learn\n"
"which mm is PID's. On a terminal the report refreshes in place; otherwise it\n"
"is printed once at the end.\n"
"\n"
"Exit status: 0 success (also when PID exits during the watch: what was\n"
"gathered is printed); 1 tracing failed; 2 bad usage, no such process, or\n"
"tracing unavailable (one line says what is missing).\n");
}

/* ---- state ---- */

struct watch {
	pid_t pid;
	char comm[TRACE_COMM_LEN];
	uint64_t mm;
	uint64_t t_start, t_end;
	bool exited;
	struct trace_analysis an;
	int feed_err;
	pid_t tids[MAX_TIDS];		/* every thread of PID seen so far */
	size_t nr_tids;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* The last is ignored, not caught: a closed stdout must not kill us with the instance alive. */
static const int caught[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

static void catch_signals(struct sigaction *old)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(caught); i++) {
		sa.sa_handler = caught[i] == SIGPIPE ? SIG_IGN : on_signal;
		sigaction(caught[i], &sa, &old[i]);
	}
}

static void restore_signals(const struct sigaction *old)
{
	for (size_t i = 0; i < ARRAY_SIZE(caught); i++)
		sigaction(caught[i], &old[i], NULL);
}


static bool is_own(const struct watch *w, int32_t pid, int32_t tgid)
{
	if (tgid)
		return tgid == w->pid;
	if (pid == w->pid)
		return true;
	for (size_t i = 0; i < w->nr_tids; i++)
		if (w->tids[i] == pid)
			return true;
	return false;
}

/* Add PID's current threads to w->tids. Return: true if a new one appeared. */
static bool scan_threads(struct watch *w)
{
	char path[64];
	struct dirent *d;
	bool added = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)w->pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);
		size_t i;

		if (tid <= 0)
			continue;
		for (i = 0; i < w->nr_tids && w->tids[i] != tid; i++)
			;
		if (i == w->nr_tids && w->nr_tids < MAX_TIDS) {
			w->tids[w->nr_tids++] = tid;
			added = true;
		}
	}
	closedir(dir);
	return added;
}

/* Is PID gone (no /proc entry, or a zombie whose mm is gone)? */
static bool process_gone(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

/* The thread group of task @pid, or @pid when unknown. */
static pid_t read_tgid(pid_t pid)
{
	char path[64], line[128];
	pid_t tgid = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Tgid:", 5)) {
			tgid = (pid_t)atoi(line + 5);
			break;
		}
	fclose(f);
	return tgid > 0 ? tgid : pid;
}

static void read_comm(pid_t pid, char *comm)
{
	char path[64], buf[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	comm[0] = '\0';
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		buf[TRACE_COMM_LEN - 1] = '\0';
		memcpy(comm, buf, strlen(buf) + 1);
	}
	fclose(f);
}

static int feed(const struct trace_event *ev, void *arg)
{
	struct watch *w = arg;
	int ret = trace_analysis_feed(&w->an, ev);

	if (ret && !w->feed_err)
		w->feed_err = ret;
	return 0;
}

/* ---- the report ---- */

static void fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < NSEC_PER_USEC)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < NSEC_PER_MSEC)
		snprintf(buf, len, "%.1f us", (double)ns / NSEC_PER_USEC);
	else if (ns < NSEC_PER_SEC)
		snprintf(buf, len, "%.2f ms", (double)ns / NSEC_PER_MSEC);
	else
		snprintf(buf, len, "%.3f s", (double)ns / NSEC_PER_SEC);
}

/* A histogram bound (a power of two of ns), three significant digits. */
static void fmt_bound(char *buf, size_t len, uint64_t ns)
{
	if (ns < NSEC_PER_USEC)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < NSEC_PER_MSEC)
		snprintf(buf, len, "%.3gus", (double)ns / NSEC_PER_USEC);
	else if (ns < NSEC_PER_SEC)
		snprintf(buf, len, "%.3gms", (double)ns / NSEC_PER_MSEC);
	else
		snprintf(buf, len, "%.3gs", (double)ns / NSEC_PER_SEC);
}

static void print_hist(FILE *f, const struct trace_stat *st)
{
	int lo = -1, hi = -1;
	uint64_t peak = 0;

	for (int b = 0; b < TRACE_HIST_BUCKETS; b++) {
		if (!st->hist[b])
			continue;
		if (lo < 0)
			lo = b;
		hi = b;
		peak = VML_MAX(peak, st->hist[b]);
	}
	for (int b = lo; lo >= 0 && b <= hi; b++) {
		char a[16], z[16];
		int bar = (int)((st->hist[b] * 40 + peak - 1) / peak);

		fmt_bound(a, sizeof(a), trace_hist_lo((unsigned int)b));
		fmt_bound(z, sizeof(z), trace_hist_lo((unsigned int)b + 1));
		fprintf(f, "    %7s - %-7s %8llu %.*s\n", a, z, (unsigned long long)st->hist[b],
			bar, "########################################");
	}
}

/* qsort order: larger first. */
static int desc_u64(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int cmp_blame(const void *x, const void *y)
{
	const struct trace_blame *a = x, *b = y;

	return desc_u64(a->total_ns, b->total_ns);
}

static uint64_t task_wait_total(const struct trace_task *t)
{
	return t->wait[0].total_ns + t->wait[1].total_ns;
}

static uint64_t task_hold_total(const struct trace_task *t)
{
	return t->hold[0].total_ns + t->hold[1].total_ns;
}

/* Tasks (pointers) by their total wait, or hold, longest first. */
static int cmp_task_wait(const void *x, const void *y)
{
	return desc_u64(task_wait_total(*(const struct trace_task *const *)x),
			task_wait_total(*(const struct trace_task *const *)y));
}

static int cmp_task_hold(const void *x, const void *y)
{
	return desc_u64(task_hold_total(*(const struct trace_task *const *)x),
			task_hold_total(*(const struct trace_task *const *)y));
}

/* The tasks of PID's mm, own threads or outsiders, sorted. vml_malloc'ed; *@nr. */
static const struct trace_task **tasks_of(const struct watch *w, bool own, size_t *nr)
{
	const struct trace_mm *mm = trace_analysis_find_mm(&w->an, w->mm);
	const struct trace_task **v;

	*nr = 0;
	if (!mm || !mm->nr_tasks)
		return NULL;
	v = vml_malloc(mm->nr_tasks * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < mm->nr_tasks; i++)
		if (is_own(w, mm->tasks[i].pid, mm->tasks[i].tgid) == own)
			v[(*nr)++] = &mm->tasks[i];
	qsort(v, *nr, sizeof(*v), own ? cmp_task_wait : cmp_task_hold);
	return v;
}

static void print_thread(FILE *f, const struct watch *w, const struct trace_task *t, size_t rows)
{
	struct trace_stat all;
	struct trace_blame *bl;
	char a[32], b[32], c[32];

	trace_task_waits(t, &all);
	fmt_ns(a, sizeof(a), all.total_ns);
	fmt_ns(b, sizeof(b), all.max_ns);
	fmt_ns(c, sizeof(c), trace_stat_quantile(&all, 0.5));
	fprintf(f, "thread %d (%s): waited for mmap_lock %llu times (%llu write, %llu read) "
		"in %llu acquisitions: total %s, longest %s, median <= %s\n", (int)t->pid, t->comm,
		(unsigned long long)all.count, (unsigned long long)t->wait[TRACE_WRITE_MODE].count,
		(unsigned long long)t->wait[TRACE_READ].count,
		(unsigned long long)(t->acquire[0].count + t->acquire[1].count), a, b, c);
	print_hist(f, &all);
	if (t->nr_blame) {
		bl = vml_malloc(t->nr_blame * sizeof(*bl));
		if (bl) {
			memcpy(bl, t->blame, t->nr_blame * sizeof(*bl));
			qsort(bl, t->nr_blame, sizeof(*bl), cmp_blame);
			fprintf(f, "  held meanwhile by          mode    waits     overlap     "
				"longest\n");
			for (size_t i = 0; i < t->nr_blame; i++) {
				char who[40];

				if (i == rows) {
					fprintf(f, "    (%zu more)\n", t->nr_blame - rows);
					break;
				}
				snprintf(who, sizeof(who), "%d (%s)", (int)bl[i].pid,
					 bl[i].comm[0] ? bl[i].comm : "?");
				fmt_ns(a, sizeof(a), bl[i].total_ns);
				fmt_ns(b, sizeof(b), bl[i].max_ns);
				fprintf(f, "    %-24s %-5s %8llu  %10s  %10s  %s\n", who,
					bl[i].write ? "write" : "read",
					(unsigned long long)bl[i].waits, a, b,
					is_own(w, bl[i].pid, bl[i].tgid) ? "own thread" : "OUTSIDE");
			}
			vml_free(bl);
		}
	} else {
		fprintf(f, "  no other task held the lock during these waits\n");
	}
	if (t->wakeups) {
		fmt_ns(a, sizeof(a), trace_stat_quantile(&t->wake, 0.5));
		fmt_ns(b, sizeof(b), t->wake.max_ns);
		fprintf(f, "  woken %llu times while waiting; wake-up to running: median <= %s, "
			"longest %s\n", (unsigned long long)t->wakeups, a, b);
	}
	if (t->spun.count) {
		fmt_ns(a, sizeof(a), t->spun.total_ns);
		fprintf(f, "  %llu waits without sleeping (spinning on the owner), total %s\n",
			(unsigned long long)t->spun.count, a);
	}
}

/* The report; @rows limits each list (SIZE_MAX: all). */
static void print_report(FILE *f, const struct watch *w, uint64_t now, size_t rows)
{
	const struct trace_task **own, **out;
	size_t nr_own, nr_out, idle = 0, shown = 0;
	uint64_t idle_acq = 0;
	char a[32], b[32], c[32];

	fprintf(f, "vmalock watch: PID %d (%s), mm 0x%llx, %.1f s, %llu events, %llu lost%s\n\n",
		(int)w->pid, w->comm, (unsigned long long)w->mm,
		(double)(now - w->t_start) / NSEC_PER_SEC, (unsigned long long)w->an.events,
		(unsigned long long)w->an.lost, w->exited ? " - the process exited" : "");
	own = tasks_of(w, true, &nr_own);
	out = tasks_of(w, false, &nr_out);
	for (size_t i = 0; i < nr_own; i++) {
		if (!own[i]->wait[0].count && !own[i]->wait[1].count) {
			idle++;
			idle_acq += own[i]->acquire[0].count + own[i]->acquire[1].count;
			continue;
		}
		if (shown++ == rows) {
			fprintf(f, "(more threads waited)\n\n");
			continue;
		}
		if (shown > rows)
			continue;
		print_thread(f, w, own[i], rows);
		fprintf(f, "\n");
	}
	if (!nr_own)
		fprintf(f, "no thread of PID %d took mmap_lock yet\n\n", (int)w->pid);
	else if (idle)
		fprintf(f, "%zu thread%s took mmap_lock %llu times without waiting\n\n", idle,
			idle == 1 ? "" : "s", (unsigned long long)idle_acq);
	if (nr_out) {
		fprintf(f, "outside tasks that took PID %d's mmap_lock (held: from the grant; "
			"not running: granted, waiting for a CPU;\nsteals: read acquisitions "
			"past a queued writer):\n"
			"    %-24s %7s %6s %10s %10s %10s %11s %10s %7s\n", (int)w->pid, "task",
			"holds", "writes", "held", "median<=", "longest", "not running", "gap med<=",
			"steals");
		for (size_t i = 0; i < nr_out; i++) {
			const struct trace_task *t = out[i];
			struct trace_stat h = t->hold[TRACE_READ];
			char who[40];

			if (i == rows) {
				fprintf(f, "    (%zu more)\n", nr_out - rows);
				break;
			}
			trace_stat_merge(&h, &t->hold[TRACE_WRITE_MODE]);
			snprintf(who, sizeof(who), "%d (%s)", (int)t->pid, t->comm[0] ? t->comm : "?");
			fmt_ns(a, sizeof(a), h.total_ns);
			fmt_ns(b, sizeof(b), trace_stat_quantile(&h, 0.5));
			fmt_ns(c, sizeof(c), h.max_ns);
			fprintf(f, "    %-24s %7llu %6llu %10s %10s %10s ", who,
				(unsigned long long)h.count,
				(unsigned long long)t->hold[TRACE_WRITE_MODE].count, a, b, c);
			fmt_ns(a, sizeof(a), t->granted.total_ns);
			fprintf(f, "%11s ", a);
			if (t->gap.count)
				fmt_ns(a, sizeof(a), trace_stat_quantile(&t->gap, 0.5));
			else
				snprintf(a, sizeof(a), "-");
			fprintf(f, "%10s %7llu\n", a, (unsigned long long)t->steals);
		}
	} else {
		fprintf(f, "no outside task took PID %d's mmap_lock\n", (int)w->pid);
	}
	if (w->an.lost)
		fprintf(f, "\n%llu events were lost (the trace buffer overflowed): waits and holds "
			"open at those moments are not counted\n", (unsigned long long)w->an.lost);
	vml_free(own);
	vml_free(out);
}

/* ---- JSON (util/json.h) ---- */

static json_t *json_stat(const struct trace_stat *st, bool hist)
{
	json_t *o = json_pack("{sIsIsIsI}", "count", (json_int_t)st->count,
			      "total_ns", (json_int_t)st->total_ns,
			      "max_ns", (json_int_t)st->max_ns,
			      "median_le_ns", (json_int_t)trace_stat_quantile(st, 0.5));

	if (o && hist) {
		json_t *h = json_array();

		for (unsigned int b = 0; b < TRACE_HIST_BUCKETS; b++)
			if (st->hist[b])
				json_array_append_new(h, json_pack("{sIsIsI}",
					"ge_ns", (json_int_t)trace_hist_lo(b),
					"lt_ns", (json_int_t)trace_hist_lo(b + 1),
					"count", (json_int_t)st->hist[b]));
		json_object_set_new(o, "hist", h);
	}
	return o;
}

/* @prediction: --predict's object, added under "prediction" (a reference is taken); or NULL. */
static int write_json(const struct watch *w, const char *path, uint64_t now, json_t *prediction)
{
	const struct trace_task **own, **out;
	size_t nr_own, nr_out;
	json_t *root, *threads = json_array(), *outside = json_array();
	char mm[32];
	int ret;

	snprintf(mm, sizeof(mm), "0x%llx", (unsigned long long)w->mm);
	own = tasks_of(w, true, &nr_own);
	out = tasks_of(w, false, &nr_out);
	for (size_t i = 0; i < nr_own; i++) {
		const struct trace_task *t = own[i];
		struct trace_stat all, acq = t->acquire[TRACE_READ];
		json_t *holders = json_array();

		trace_task_waits(t, &all);
		trace_stat_merge(&acq, &t->acquire[TRACE_WRITE_MODE]);
		for (size_t j = 0; j < t->nr_blame; j++) {
			const struct trace_blame *b = &t->blame[j];

			json_array_append_new(holders, json_pack("{sisssisssbsIsIsI}",
				"pid", (int)b->pid, "comm", b->comm, "tgid", (int)b->tgid,
				"mode", b->write ? "write" : "read",
				"outside", !is_own(w, b->pid, b->tgid),
				"waits", (json_int_t)b->waits, "overlap_ns", (json_int_t)b->total_ns,
				"max_overlap_ns", (json_int_t)b->max_ns));
		}
		json_array_append_new(threads, json_pack("{sisssososososososososIsIso}",
			"tid", (int)t->pid, "comm", t->comm,
			"acquisitions", json_stat(&acq, false),
			"waits", json_stat(&all, true),
			"read_waits", json_stat(&t->wait[TRACE_READ], false),
			"write_waits", json_stat(&t->wait[TRACE_WRITE_MODE], false),
			"read_holds", json_stat(&t->hold[TRACE_READ], false),
			"write_holds", json_stat(&t->hold[TRACE_WRITE_MODE], false),
			"wake_latency", json_stat(&t->wake, false),
			"spun", json_stat(&t->spun, false),
			"wakeups", (json_int_t)t->wakeups, "failed", (json_int_t)t->failed,
			"holders", holders));
	}
	for (size_t i = 0; i < nr_out; i++) {
		const struct trace_task *t = out[i];
		struct trace_stat waits;

		trace_task_waits(t, &waits);
		json_array_append_new(outside, json_pack("{sisssisosososososIsI}",
			"pid", (int)t->pid, "comm", t->comm, "tgid", (int)t->tgid,
			"read_holds", json_stat(&t->hold[TRACE_READ], true),
			"granted_not_running", json_stat(&t->granted, false),
			"write_holds", json_stat(&t->hold[TRACE_WRITE_MODE], false),
			"gaps", json_stat(&t->gap, false),
			"waits", json_stat(&waits, false),
			"failed", (json_int_t)t->failed, "steals", (json_int_t)t->steals));
	}
	root = json_pack("{sisssssfsbsIsIsIsoso}",
		"pid", (int)w->pid, "comm", w->comm, "mm", mm,
		"duration_s", (double)(now - w->t_start) / NSEC_PER_SEC,
		"exited", w->exited, "events", (json_int_t)w->an.events,
		"lost", (json_int_t)w->an.lost, "inconsistent", (json_int_t)w->an.inconsistent,
		"threads", threads, "outside", outside);
	vml_free(own);
	vml_free(out);
	if (!root)
		return -ENOMEM;
	if (prediction)
		json_object_set(root, "prediction", prediction);
	ret = json_write_file(root, path);
	json_decref(root);
	return ret;
}

/* ---- the command ---- */

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = vml_ns_to_timespec(ns);

	nanosleep(&ts, NULL);	/* a signal ends it early: fine */
}

static int watch_loop(struct watch *w, struct trace_session *s, double duration,
		      double interval, bool tty)
{
	uint64_t end = duration > 0 ? w->t_start + (uint64_t)(duration * NSEC_PER_SEC) : 0;
	uint64_t every = (uint64_t)(interval * NSEC_PER_SEC);
	uint64_t next_show = w->t_start + every, next_scan = w->t_start + RESCAN_NS;
	int ret;

	for (;;) {
		uint64_t now = vml_now_ns(), nap = POLL_NS;

		if (end && now >= end)
			break;
		if (end)
			nap = VML_MIN(nap, end - now);
		sleep_ns(VML_MIN(nap, every));
		if (stop_signal)
			break;
		ret = trace_session_poll(s, false, feed, w);
		if (ret < 0)
			return ret;
		now = vml_now_ns();
		if (now >= next_scan) {
			next_scan = now + RESCAN_NS;
			if (scan_threads(w))
				trace_session_set_pids(s, w->tids, w->nr_tids);
		}
		if (process_gone(w->pid)) {
			w->exited = true;
			break;
		}
		if (tty && now >= next_show) {
			next_show = now + every;
			printf("\033[H\033[2J");
			print_report(stdout, w, now, TTY_ROWS);
			fflush(stdout);
		}
	}
	return trace_session_poll(s, true, feed, w);
}

/*
 * The process to watch, from --pid (a thread's PID stands for its process).
 * Return: 0 and *@out (vml_free), or an exit status.
 */
static int watch_new(const struct watch_opts *o, struct watch **out)
{
	struct watch *w;
	unsigned long pid;

	if (!o->pid)
		return cli_usage_error("watch", "missing PID");
	if (cli_parse_count(o->pid, 1, 0x3fffffff, &pid))
		return cli_usage_error("watch", "PID: bad value '%s' (a number, 1 to %d)", o->pid, 0x3fffffff);
	if (process_gone((pid_t)pid)) {
		fprintf(stderr, "vmalock watch: no process %lu\n", pid);
		return EXIT_USAGE;
	}
	w = vml_zalloc(sizeof(*w));
	if (!w) {
		fprintf(stderr, "vmalock watch: out of memory\n");
		return EXIT_CHECK_FAILED;
	}
	w->pid = read_tgid((pid_t)pid);
	if (w->pid != (pid_t)pid)
		fprintf(stderr, "vmalock watch: %lu is a thread of process %d: watching %d\n", pid,
			(int)w->pid, (int)w->pid);
	read_comm(w->pid, w->comm);
	*out = w;
	return 0;
}

/*
 * Open the trace session, aimed at @w's mm and threads, emptied of what
 * came before. Return: 0, or an exit status (*@s may be open: the caller
 * closes it).
 */
static int watch_open(struct watch *w, struct trace_session **s)
{
	struct trace_session_opts so = { .events = TRACE_EV_MMAP_LOCK | TRACE_EV_SCHED };
	int ret = trace_session_open(&so, s);

	if (ret) {
		const char *hint = trace_unavailable_hint(ret);

		if (hint)
			fprintf(stderr, "vmalock watch: %s\n", hint);
		else
			fprintf(stderr, "vmalock watch: cannot trace: %s\n", strerror(-ret));
		return hint ? EXIT_USAGE : EXIT_CHECK_FAILED;
	}
	ret = trace_session_find_mm(*s, w->pid, &w->mm);
	if (ret == -ESRCH) {
		fprintf(stderr, "vmalock watch: process %d has no address space "
			"(a kernel thread, or it exited)\n", (int)w->pid);
		return EXIT_USAGE;
	}
	if (!ret)
		ret = trace_session_set_mm(*s, w->mm);
	scan_threads(w);
	if (!ret)
		ret = trace_session_set_pids(*s, w->tids, w->nr_tids);
	if (!ret)
		ret = trace_session_discard(*s);
	if (ret) {
		fprintf(stderr, "vmalock watch: cannot trace: %s\n", strerror(-ret));
		return EXIT_CHECK_FAILED;
	}
	return 0;
}

/*
 * After the watch (@ret: watch_loop's): what went wrong, then the report
 * and --json. Return: the exit status.
 */
static int watch_report(struct watch *w, const char *json, bool tty, int ret,
			json_t *prediction)
{
	uint64_t now = vml_now_ns();
	int status = 0;

	if (ret < 0) {
		fprintf(stderr, "vmalock watch: reading the trace: %s\n", strerror(-ret));
		status = EXIT_CHECK_FAILED;
	}
	if (w->feed_err)
		fprintf(stderr, "vmalock watch: some events were not accounted: %s\n",
			strerror(-w->feed_err));
	if (w->exited)
		fprintf(stderr, "vmalock watch: process %d exited after %.1f s; "
			"what was gathered until then follows\n", (int)w->pid,
			(double)(now - w->t_start) / NSEC_PER_SEC);
	if (!json || strcmp(json, "-")) {
		if (tty)
			printf("\033[H\033[2J");
		print_report(stdout, w, now, SIZE_MAX);
		fflush(stdout);
	}
	if (json && write_json(w, json, now, prediction)) {
		fprintf(stderr, "vmalock watch: cannot write %s\n", json);
		status = EXIT_CHECK_FAILED;
	}
	return status;
}

/* ---- --predict: PID's twin on the model (bench/procvsmap.c, bench/layout.c) ---- */

struct predict {
	struct bench_common c;
	struct pvm_opts o;
	struct bench_run r;
	json_t *json;			/* the model's rows, for --json; NULL until run */
	char twin[64];			/* without --layout: PID's twin, taken now ("" none) */
	char twin_label[48];		/* ...and what the report calls it */
};

/*
 * PID's twin (`vmalock twin PID`), written to a temporary file for the
 * layout loader, which reads it whole: the file goes as soon as it is read.
 * Return: 0 or the exit status (one line said why).
 */
static int predict_take_twin(const char *pid_arg, struct predict *p)
{
	struct twin_snapshot *s = NULL;
	char err[512];
	unsigned long pid;
	FILE *f;
	int fd, ret;

	if (!pid_arg || cli_parse_count(pid_arg, 1, 0x3fffffff, &pid))
		return 0;	/* watch_new() says what is wrong with it */
	ret = twin_snapshot_read((pid_t)pid, &s, err, sizeof(err));
	if (!ret)
		ret = twin_layout(s, SCRIPT_RANGE_LO, SCRIPT_RANGE_HI, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "vmalock watch: --predict: PID %lu's twin: %s\n", pid, err);
		twin_snapshot_free(s);
		/* as `vmalock twin`: a process that went or memory is 1, a bad PID or no right 2 */
		return ret == -ENOMEM || ret == TWIN_EXITED || ret == -E2BIG ? EXIT_FAILURE :
		       EXIT_USAGE;
	}
	snprintf(p->twin, sizeof(p->twin), "/tmp/vmalock-twin.XXXXXX");
	fd = mkstemp(p->twin);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	ret = f ? twin_script_write(s, f) : -errno;
	if (f && fclose(f) && !ret)
		ret = -errno;
	else if (!f && fd >= 0)
		close(fd);
	twin_snapshot_free(s);
	if (ret) {
		fprintf(stderr, "vmalock watch: --predict: writing PID %lu's twin to %s: %s\n", pid,
			p->twin, strerror(-ret));
		if (fd >= 0)
			unlink(p->twin);
		p->twin[0] = 0;
		return EXIT_FAILURE;
	}
	p->o.layout_path = p->twin;
	return 0;
}

/*
 * The prediction's run, set up and its layout checked, before the watch: a
 * bad layout is exit 2 before anything is traced. Return: 0 or the exit status.
 */
static int predict_prepare(const struct watch_opts *wo, struct predict *p)
{
	const struct bench_scenario *sc = &bench_proc_vs_map;
	int status;

	if (!wo->predict)
		return wo->layout ? cli_usage_error("watch", "--layout: needs --predict") : 0;
	bench_common_defaults(&p->c);
	p->c.targets = VOCAB_BIT(TARGET_MODEL);
	p->c.locks = VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA);
	p->c.samples = 1;
	p->c.quiet = true;
	sc->defaults(&p->o);
	p->o.view = VML_VIEW_SMAPS;
	p->o.readers = (struct cli_ulist){ .v = { 1 }, .nr = 1 };
	p->o.mapper.duration_s = wo->predict_s > 0 ? wo->predict_s : 2;
	p->o.layout_path = wo->layout;
	if (!wo->layout) {
		status = predict_take_twin(wo->pid, p);
		if (status)
			return status;
	}
	/* the twin is the whole process: no copies of a vmalock-child's own mappings beside it */
	p->o.region_only = true;
	p->r = (struct bench_run){ .sc = sc, .c = &p->c, .opts = &p->o };
	status = bench_check("watch", sc, &p->c, &p->o);
	if (p->twin[0]) {
		unlink(p->twin);	/* read whole (or refused): the run needs it no more */
		snprintf(p->twin_label, sizeof(p->twin_label), "PID %s's twin", wo->pid);
		if (!status && p->o.layout)
			p->o.layout->path = p->twin_label;
	}
	return status;
}

static void predict_release(struct predict *p)
{
	json_decref(p->json);
	if (p->r.sc)
		bench_release(&p->r);
}

static void predict_line(const char *what, uint64_t count, double avg_ns, double p99_ns,
			 double max_ns)
{
	char a[32], b[32], c[32];

	fmt_ns(a, sizeof(a), (uint64_t)avg_ns);
	fmt_ns(b, sizeof(b), (uint64_t)p99_ns);
	fmt_ns(c, sizeof(c), (uint64_t)max_ns);
	printf("    %-40s %8llu %10s %10s %10s\n", what, (unsigned long long)count, a, b, c);
}

/* The model's row of @lock (one reader), or NULL. */
static const struct pvm_row *predict_row(const struct predict *p, enum vml_lock_policy lock)
{
	return p->r.res ? pvm_find(p->r.res, TARGET_MODEL, lock, 1) : NULL;
}

/*
 * After the watch, before its report: the model's mapper on the twin under
 * each policy, and the JSON of it (--json's "prediction").
 * Return: 0 or EXIT_CHECK_FAILED (printed).
 */
static int predict_run(const struct watch *w, struct predict *p)
{
	const struct bench_layout *l;
	json_t *rows;

	fprintf(stderr, "vmalock watch: --predict: PID %d's twin %s on the model, %g s a "
		"policy ...\n", (int)w->pid,
		p->twin[0] ? "(taken before the watch)" : p->o.layout_path,
		p->o.mapper.duration_s);
	if (p->r.sc->run(&p->r) || !p->r.res) {
		fprintf(stderr, "vmalock watch: --predict: the model's run failed\n");
		return EXIT_CHECK_FAILED;
	}
	l = p->o.layout;
	rows = json_array();
	for (int i = 0; i < 2; i++) {
		enum vml_lock_policy lock = i ? VML_LOCK_VMA : VML_LOCK_MMAP;
		const struct pvm_row *row = predict_row(p, lock);

		if (row)
			json_array_append_new(rows, json_pack("{sssfsfsfsf}",
				"lock", vocab_name(&lock_policy_vocab, lock), "ops", row->ops,
				"avg_us", row->avg_us, "p99_us", row->p99_us, "max_us", row->max_us));
	}
	p->json = json_pack("{sssIsIsIsssfso}", "layout", l->path, "vmas", (json_int_t)l->vmas,
			    "pages", (json_int_t)l->pages, "region", (json_int_t)l->region,
			    "view", "smaps", "duration_s", p->o.mapper.duration_s, "rows", rows);
	if (!p->json) {
		fprintf(stderr, "vmalock watch: --predict: out of memory\n");
		return EXIT_CHECK_FAILED;
	}
	return 0;
}

/*
 * Its text, after the watch's report: the model's mapper beside PID's own
 * waits as traced (a wait is part of a call: the measured column is a floor
 * for PID's calls, the model's are whole calls).
 */
static void predict_print(const struct watch *w, const struct predict *p)
{
	const struct trace_task **own;
	struct trace_stat all = { 0 };
	size_t nr;

	own = tasks_of(w, true, &nr);
	for (size_t i = 0; i < nr; i++)
		for (int k = 0; k < 2; k++)
			trace_stat_merge(&all, &own[i]->wait[k]);
	vml_free(own);
	printf("\nprediction (--predict): the model on PID %d's twin:\n", (int)w->pid);
	bench_layout_print(stdout, p->o.layout);
	printf("proc-vs-map's mapper (a populated %lu MiB region beside the twin, random one-page "
	       "mmap/munmap 10 us apart) and one nice-15 smaps reader, %g s a policy:\n",
	       p->o.mapper.mb, p->o.mapper.duration_s);
	printf("    %-40s %8s %10s %10s %10s\n", "", "count", "avg", "p99", "max");
	if (all.count)
		predict_line("measured: PID's mmap_lock waits", all.count,
			     (double)all.total_ns / (double)all.count,
			     (double)trace_stat_quantile(&all, 0.99), (double)all.max_ns);
	else
		printf("    %-40s %8s\n", "measured: PID's mmap_lock waits", "none");
	for (int i = 0; i < 2; i++) {
		const struct pvm_row *row = predict_row(p, i ? VML_LOCK_VMA : VML_LOCK_MMAP);

		if (row)
			predict_line(i ? "model, per-VMA (vma): mapper's calls" :
				     "model, 6.18 (mmap): mapper's calls", (uint64_t)row->ops,
				     row->avg_us * 1e3, row->p99_us * 1e3, row->max_us * 1e3);
	}
	fflush(stdout);
}

int cmd_watch(int argc, char **argv)
{
	struct watch_opts o = { .interval = 1 };
	struct predict p = { 0 };
	int pstatus = 0;
	struct trace_session *s = NULL;
	struct sigaction old[ARRAY_SIZE(caught)];
	struct watch *w = NULL;
	bool help_wanted, tty;
	int ret, status;

	ret = cli_parse("watch", watch_tables, argc, argv, &o, pid_arg, &help_wanted);
	if (ret)
		return ret;
	if (help_wanted) {
		help(stdout);
		return 0;
	}
	status = predict_prepare(&o, &p);
	if (status) {
		predict_release(&p);
		return status;
	}
	status = watch_new(&o, &w);
	if (status) {
		predict_release(&p);
		return status;
	}
	tty = isatty(STDOUT_FILENO) && !(o.json && !strcmp(o.json, "-"));

	catch_signals(old);
	status = watch_open(w, &s);
	if (status)
		goto out;
	trace_analysis_init(&w->an, w->mm);
	w->t_start = vml_now_ns();
	fprintf(stderr, "vmalock watch: watching PID %d (%s), mm 0x%llx; %s\n", (int)w->pid,
		w->comm, (unsigned long long)w->mm,
		o.duration > 0 ? "until --duration ends" : "Ctrl-C to stop");

	ret = watch_loop(w, s, o.duration, o.interval, tty);
	trace_session_close(s);		/* the instance goes before anything else can fail */
	s = NULL;
	/* after Ctrl-C too, the usual end of a watch without --duration; before the report, for --json */
	if (ret >= 0 && o.predict && stop_signal != SIGTERM && stop_signal != SIGHUP)
		pstatus = predict_run(w, &p);
	status = watch_report(w, o.json, tty, ret, p.json);
	if (p.json && (!o.json || strcmp(o.json, "-")))
		predict_print(w, &p);
	if (!status)
		status = pstatus;
	trace_analysis_fini(&w->an);
out:
	trace_session_close(s);
	restore_signals(old);
	predict_release(&p);
	vml_free(w);
	if (stop_signal == SIGTERM || stop_signal == SIGHUP)
		raise(stop_signal);	/* die of it, now that the instance is gone */
	return status;
}
