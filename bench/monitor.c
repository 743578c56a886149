// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * monitor.c - `vmalock bench monitor`: how much do real monitoring tools
 * stall a process's own mmap()/munmap(), and what would the seeds'
 * per-VMA locking save with each of them?
 *
 * The mapper is proc-vs-map's (bench/procvsmap.c, docs/bench-methods.md): the
 * live vmalock-child maps and unmaps random pages of a populated region on
 * the first CPU, 10 us apart, timing every call itself. Instead of our own
 * reader threads, a real tool polls it every --interval from the second
 * CPU at --tool-nice (monitor_tools.c says how each kind is run). One row
 * per tool, plus the no-tool baseline, sampled in turn (sample i of every
 * row before sample i + 1 of any) so that the machine's load falls on all
 * rows alike.
 *
 * Before the samples, each tool is observed once under strace against a
 * mapper that has run (monitor_strace.c): which /proc files of the mapper
 * it reads, how many read() calls of which size, per poll. That pattern is
 * then replayed on the model, against the model's mapper, at the same
 * interval, under each lock policy: `mmap` (every view read under
 * mmap_lock, as 6.18 reads smaps, smaps_rollup and numa_maps), `vma` (the
 * seeds' per-VMA locks for every view) and, for a tool that reads maps and
 * a view still under mmap_lock, `today` (each view under this kernel's
 * lock for it, MON_LOCK_TODAY). Files whose production takes
 * mmap_lock whatever the policy (cmdline, environ: access_remote_vm) are
 * replayed as one mmap_lock hold per read() lasting what a read of the
 * mapper's cmdline takes on the live kernel. Files that take no lock of
 * the mapper's address space (stat, status, statm, io...) are not replayed:
 * a tool that reads only those has no model rows, and its prediction is
 * "no change". As in proc-vs-map, model readers are charged the live
 * kernel's extra cost per record of each view, measured now
 * (bench/calibrate.c).
 *
 * The prediction for a tool: the model row of today's policy for what it
 * reads (mon_today_lock) against the `vma` row, as a ratio, applied to the
 * live figure: "with the seeds' kernel, this tool would leave the mapper's
 * p99 at R times today's". The replay reads back to back: the tool's own
 * work between two reads (parsing, other processes' files) is not
 * replayed, which gives the mapper fewer chances to slip in than the real
 * tool does (bench/README.md, "monitor").
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"
#include "monitor.h"
#include "sync/atomic.h"
#include "host/host.h"
#include "util/alloc.h"
#include "util/clock.h"

/* A row's lock and a step's view hold monitor's own values beside the enums': */
static_assert(MON_LOCK_TODAY > VML_LOCK_VMA_RECHECK, "MON_LOCK_TODAY is no lock policy");
static_assert(MON_VIEWS == VML_VIEW_NUMA_MAPS + 1 && MON_VIEW_HOLD >= MON_VIEWS &&
	      MON_VIEW_HOLD != (int)TARGET_VIEW_QUERY, "MON_VIEW_HOLD is no view");

#define SETTLE_NS (100 * NSEC_PER_MSEC)		/* the tool up before the mapper starts */
#define HOLD_READS 201				/* reads of cmdline timed for the hold */
#define MON_READ_MAX 65536			/* the replay's largest read() */

static const char *errstr(int err)
{
	return strerror(err < 0 ? -err : err);
}

bool mon_policy_matters(const struct mon_result *res, int tool)
{
	for (unsigned int i = 0; i < res->nr_steps[tool]; i++)
		if (res->steps[tool][i].view < MON_VIEWS)
			return true;
	return false;
}

/* Does the live kernel read view @v per VMA (maps: by release; the rest: the host profile)? */
static bool view_per_vma(const struct mon_result *res, int v)
{
	if (v == VML_VIEW_MAPS)
		return res->maps_per_vma;
	return v >= 0 && v < MON_VIEWS && bench_kernel_view_per_vma((enum vml_view)v, NULL);
}

int mon_today_lock(const struct mon_result *res, int tool)
{
	bool per_vma = false, locked = false;

	for (unsigned int i = 0; i < res->nr_steps[tool]; i++) {
		int v = res->steps[tool][i].view;

		if (view_per_vma(res, v))
			per_vma = true;
		else
			locked = true;
	}
	if (!per_vma)
		return VML_LOCK_MMAP;
	return locked ? MON_LOCK_TODAY : VML_LOCK_VMA;
}

const char *mon_lock_name(int lock)
{
	return lock == MON_LOCK_TODAY ? "today" : vocab_name(&lock_policy_vocab, lock);
}

const char *mon_row_lock(const struct mon_row *row)
{
	return row->target == TARGET_LIVE ? "kernel" : mon_lock_name(row->lock);
}

/* ---- the observation: a mapper that has run, each tool under strace ---- */

/* The median time of one read of /proc/@pid/cmdline, in ns (0 if it cannot be read). */
static double cmdline_read_ns(pid_t pid)
{
	double v[HOLD_READS];
	char path[64], buf[4096];
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	for (int i = 0; i < HOLD_READS; i++) {
		uint64_t t0 = vml_now_ns();

		if (pread(fd, buf, sizeof(buf), 0) < 0) {
			close(fd);
			return 0;
		}
		v[i] = (double)(vml_now_ns() - t0);
	}
	close(fd);
	return stat_median(v, HOLD_READS);
}

/* The replay of tool @t: the mapper's files that take one of its locks. */
static void make_steps(struct mon_result *res, unsigned int t)
{
	const struct mon_obs *ob = &res->obs[t];

	res->nr_steps[t] = 0;
	for (unsigned int i = 0; i < ob->nr_mapper; i++) {
		const struct mon_file *f = &ob->mapper[i];
		struct mon_step *s;
		int view;

		mon_file_lock(f->name, res->maps_per_vma, &view);
		if (view < 0 || f->opens <= 0)
			continue;
		s = &res->steps[t][res->nr_steps[t]++];
		s->view = view;
		s->file = f->name;
		s->opens = f->opens;
		s->size = f->size ? f->size : 4096;
		if (s->size > MON_READ_MAX)	/* a seq_file read() returns a page or so anyway */
			s->size = MON_READ_MAX;
		/* a hold per read() that returned data (a read at the end takes no lock) */
		s->reads = f->data_reads / f->opens;
	}
}

static int observe(struct mon_result *res)
{
	const struct mon_opts *o = res->o;
	const struct bench_common *c = res->c;
	struct child_lat_rep *rep = vml_malloc(sizeof(*rep));
	struct target *t = NULL;
	unsigned int todo = 0;
	unsigned long vmas_seen;
	long vmas;
	int ret;

	for (unsigned int i = 0; i < res->nr_tools; i++)
		todo += !res->tools[i].skip[0];
	if (!rep)
		return -ENOMEM;
	ret = bench_live_mapper_start(o->mapper.mb, o->mapper.seed, res->mapper_cpu, o->layout,
				      &vmas_seen, rep, &t);
	if (ret)
		goto out;
	bench_progress(c->quiet, "monitor: a mapper run to observe the tools against ...");
	ret = target_live_mapper_run(t, (uint64_t)(o->mapper.duration_s * NSEC_PER_SEC),
				     BENCH_MAPPER_SLEEP_NS, rep);
	if (ret) {
		fprintf(stderr, "vmalock bench: live: mapper: %s\n", errstr(ret));
		goto out;
	}
	vmas = bench_live_vma_count(target_pid(t));
	res->obs_vmas = vmas > 0 ? (unsigned long)vmas : 0;
	res->hold_ns = cmdline_read_ns(target_pid(t));
	for (unsigned int i = 0, k = 0; i < res->nr_tools; i++) {
		if (res->tools[i].skip[0])
			continue;
		if (!res->strace) {
			snprintf(res->obs[i].why, sizeof(res->obs[i].why),
				 "strace not installed (Debian package strace): reads not observed");
			continue;
		}
		bench_progress(c->quiet, "monitor: observing %s under strace [%u/%u] ...",
			       res->tools[i].name, ++k, todo);
		mon_observe(res, i, target_pid(t));
		if (res->obs[i].done)
			make_steps(res, i);
	}
out:
	target_destroy(t);
	vml_free(rep);
	return ret;
}

/* ---- one live sample ---- */

struct mon_run {
	struct mon_result *res;
	const struct mon_row *row;
	uint64_t seed;
	struct mon_sample *s;
	/* model */
	struct vml_mm *mm;
	unsigned long region;
	atomic_bool stop;
	uint64_t t0;
	unsigned int polls;
	uint64_t poll_ns;
	int error;
};

static int live_sample(struct mon_run *r)
{
	struct mon_result *res = r->res;
	const struct mon_opts *o = res->o;
	struct child_lat_rep *rep = vml_malloc(sizeof(*rep));
	struct mon_driver d = {
		.res = res,
		.interval_ns = (uint64_t)(o->interval_s * NSEC_PER_SEC),
		.timeout_ns = (uint64_t)(o->tool_timeout_s * NSEC_PER_SEC),
	};
	struct target *t = NULL;
	unsigned long vmas_seen;
	pid_t pid;
	long n;
	int ret;

	if (!rep)
		return -ENOMEM;
	ret = bench_live_mapper_start(o->mapper.mb, r->seed, res->mapper_cpu, o->layout,
				      &vmas_seen, rep, &t);
	if (ret)
		goto out;
	pid = target_pid(t);
	if (r->row->tool >= 0) {
		d.tool = &res->tools[r->row->tool];
		d.mapper = pid;
		/* a tool that fails is reported in its row, not an error of the run */
		mon_driver_start(&d, SETTLE_NS);
	}
	bench_sleep_ns(SETTLE_NS);
	ret = target_live_mapper_run(t, (uint64_t)(o->mapper.duration_s * NSEC_PER_SEC),
				     BENCH_MAPPER_SLEEP_NS, rep);
	if (r->row->tool >= 0)
		mon_driver_stop(&d);
	if (ret) {
		fprintf(stderr, "vmalock bench: live: mapper: %s\n", errstr(ret));
		goto out;
	}
	*r->s->hist = rep->hist;
	r->s->fails = rep->nfails;
	n = bench_live_vma_count(pid);
	r->s->vmas = n > 0 ? (uint64_t)n : 0;
	r->s->layout_vmas = o->layout ? vmas_seen : 0;
	r->s->polls = d.polls;
	r->s->timeouts = d.timeouts;
	r->s->errors = d.errors;
	r->s->poll_ms = d.polls ? (double)d.poll_ns / d.polls / 1e6 : NAN;
	snprintf(r->s->note, sizeof(r->s->note), "%s", d.note);
out:
	target_destroy(t);
	vml_free(rep);
	return ret;
}

/* ---- one model sample: the mapper, and the tool's reads replayed ---- */

/* Read the whole view once with @size-byte read() calls, as the tool did. */
static int replay_view(struct mon_run *r, const struct mon_step *s, char *buf)
{
	enum vml_lock_policy lock = (enum vml_lock_policy)r->row->lock;
	struct vml_reader *rd;
	ssize_t n = 0;
	int ret;

	if (r->row->lock == MON_LOCK_TODAY)
		lock = view_per_vma(r->res, s->view) ? VML_LOCK_VMA : VML_LOCK_MMAP;
	ret = vml_reader_open(r->mm, (enum vml_view)s->view, lock, &rd);
	if (ret)
		return ret;
	if (r->res->record_ns[s->view] > 0)
		ret = vml_reader_set_record_cost(rd, (uint64_t)r->res->record_ns[s->view]);
	if (!ret && r->res->page_ns[s->view] > 0)
		ret = vml_reader_set_page_cost(rd, (uint64_t)r->res->page_ns[s->view]);
	if (!ret && r->res->call_ns[s->view] > 0)
		ret = vml_reader_set_call_cost(rd, (uint64_t)r->res->call_ns[s->view]);
	while (!ret && (n = vml_reader_read(rd, buf, s->size)) > 0)
		;
	if (!ret && n < 0)
		ret = (int)n;
	vml_reader_close(rd);
	return ret;
}

/*
 * A file produced under mmap_lock whatever the policy (cmdline...): one
 * read hold per read() that returned data, as long as the live read.
 */
static int replay_hold(struct mon_run *r, const struct mon_step *s, double *carry)
{
	unsigned int n;
	int ret = 0;

	*carry += s->reads;
	n = (unsigned int)*carry;
	*carry -= n;
	for (unsigned int i = 0; i < n && !ret; i++)
		ret = vml_access_remote_vm(r->mm, (uint64_t)r->res->hold_ns);
	return ret;
}

static void *replayer_main(void *arg)
{
	struct mon_run *r = arg;
	const struct mon_result *res = r->res;
	unsigned int tool = (unsigned int)r->row->tool, nr = res->nr_steps[tool];
	uint64_t interval = (uint64_t)(res->o->interval_s * NSEC_PER_SEC);
	double carry[MON_MAX_FILES] = { 0 }, hold_carry[MON_MAX_FILES] = { 0 };
	char *buf = vml_malloc(MON_READ_MAX);

	bench_pin_thread(res->reader_cpu);
	bench_nice_thread((int)res->o->tool_nice);
	if (!buf) {
		r->error = -ENOMEM;
		return NULL;
	}
	/*
	 * stop: each acquire pairs with model_sample()'s store_release once its
	 * mapper is done; nothing rides on the flag (pthread_join orders what
	 * this thread wrote).
	 */
	for (uint64_t k = 0; !load_acquire(&r->stop); k++) {
		uint64_t next = r->t0 + k * interval, t0;

		if (next < vml_now_ns() && k)
			next = vml_now_ns();
		/* pairs with model_sample()'s store_release(&r->stop) */
		while (!load_acquire(&r->stop) && vml_now_ns() < next) {
			uint64_t left = next - vml_now_ns();

			bench_sleep_ns(left > 20 * NSEC_PER_MSEC ? 20 * NSEC_PER_MSEC : left);
		}
		if (load_acquire(&r->stop))	/* pairs with model_sample()'s store_release */
			break;
		t0 = vml_now_ns();
		for (unsigned int i = 0; i < nr && !r->error; i++) {
			const struct mon_step *s = &res->steps[tool][i];
			unsigned int opens;

			carry[i] += s->opens;
			opens = (unsigned int)carry[i];
			carry[i] -= opens;
			for (unsigned int j = 0; j < opens && !r->error; j++) {
				if (s->view == MON_VIEW_HOLD)
					r->error = replay_hold(r, s, &hold_carry[i]);
				else if (s->view == MON_VIEW_CLEAR_REFS)
					r->error = vml_clear_refs(r->mm, 1);
				else
					r->error = replay_view(r, s, buf);
			}
		}
		r->poll_ns += vml_now_ns() - t0;
		r->polls++;
	}
	vml_free(buf);
	return NULL;
}

static int model_sample(struct mon_run *r)
{
	const struct mon_opts *o = r->res->o;
	struct vml_sys_config cfg;
	struct vml_mm_stats st;
	struct vml_sys *sys;
	pthread_t mapper, replayer;
	struct bench_mapper m;
	bool replaying = false;
	unsigned long vmas_seen = 0;
	int ret = host_current_config(0, &cfg);

	if (ret)
		return ret;
	ret = vml_sys_create(&cfg, &sys);
	if (ret)
		return ret;
	ret = vml_mm_create(sys, &r->mm);
	if (ret)
		goto out_sys;
	/* the layout first, as in the live child; it prints its own failure */
	ret = o->layout ? bench_layout_apply_mm(o->layout, sys, r->mm, &vmas_seen) : 0;
	if (ret)
		goto out_mm;
	ret = vml_mmap(r->mm, o->layout ? o->layout->region : 0, o->mapper.mb << 20,
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE |
		       (o->layout ? MAP_FIXED_NOREPLACE : 0), NULL, 0, &r->region);
	if (ret) {
		fprintf(stderr, "vmalock bench: model: mapping the %lu MiB region: %s\n", o->mapper.mb,
			errstr(ret));
		goto out_mm;
	}
	atomic_init(&r->stop, false);
	r->t0 = vml_now_ns() + SETTLE_NS;
	if (r->row->tool >= 0) {
		ret = -pthread_create(&replayer, NULL, replayer_main, r);
		if (ret)
			goto out_mm;
		replaying = true;
	}
	m = (struct bench_mapper){
		.mm = r->mm, .region = r->region, .mb = o->mapper.mb, .seed = r->seed,
		.duration_s = o->mapper.duration_s, .cpu = r->res->mapper_cpu,
		.rcu_anywhere = o->mapper.rcu == 1, .hist = r->s->hist,
	};
	bench_sleep_ns(SETTLE_NS);
	ret = -pthread_create(&mapper, NULL, bench_model_mapper_main, &m);
	if (!ret)
		pthread_join(mapper, NULL);
	r->s->fails = m.fails;
	/* pairs with replayer_main()'s load_acquire(&r->stop) */
	store_release(&r->stop, true);
	if (replaying)
		pthread_join(replayer, NULL);
	if (!ret && r->error) {
		ret = r->error;
		fprintf(stderr, "vmalock bench: model: replaying %s: %s\n",
			r->res->tools[r->row->tool].name, errstr(ret));
	}
	if (!ret && !vml_mm_stats(r->mm, &st))
		r->s->vmas = st.map_count;
	r->s->layout_vmas = vmas_seen;
	r->s->polls = r->polls;
	r->s->poll_ms = r->polls ? (double)r->poll_ns / r->polls / 1e6 : NAN;
out_mm:
	vml_mm_destroy(r->mm);
	r->mm = NULL;
out_sys:
	vml_sys_destroy(sys);
	return ret;
}

/* ---- rows, samples, summaries ---- */

static const char *row_tool(const struct mon_result *res, const struct mon_row *row)
{
	return row->tool < 0 ? "(no tool)" : res->tools[row->tool].name;
}

static int run_sample(struct mon_result *res, struct mon_row *row, unsigned int i,
		      unsigned int done, unsigned int total)
{
	const struct mon_opts *o = res->o;
	const struct bench_common *c = res->c;
	struct mon_sample *s = &row->s[i];
	struct mon_run r = {
		.res = res,
		.row = row,
		.seed = o->mapper.seed + i * 0x9e3779b97f4a7c15ULL,
		.s = s,
	};
	int ret;

	s->hist = lat_hist_new();
	if (!s->hist)
		return -ENOMEM;
	bench_progress(c->quiet || !bench_progress_tty(),
		       "monitor [%u/%u] %s %s %s sample %u/%u ...", done, total, row_tool(res, row),
		       target_kind_name(row->target), row->tool < 0 && row->target == TARGET_MODEL ?
		       "-" : mon_row_lock(row), i + 1, c->samples);
	ret = row->target == TARGET_LIVE ? live_sample(&r) : model_sample(&r);
	if (ret)
		return ret;
	s->p50_us = lat_hist_quantile_ns(s->hist, 0.50) / 1e3;
	s->p99_us = lat_hist_quantile_ns(s->hist, 0.99) / 1e3;
	s->max_us = (double)s->hist->max_ns / 1e3;
	s->avg_us = s->hist->count ? (double)s->hist->sum_ns / (double)s->hist->count / 1e3 : 0;
	s->ops = s->hist->count;
	row->nr++;
	bench_progress(c->quiet, "monitor [%u/%u] %s %s %s sample %u/%u: p50 %.1f us, p99 %.1f us, "
		       "max %.1f us, %u polls", done, total, row_tool(res, row),
		       target_kind_name(row->target), row->tool < 0 && row->target == TARGET_MODEL ?
		       "-" : mon_row_lock(row), i + 1, c->samples, s->p50_us, s->p99_us,
		       s->max_us, s->polls);
	return 0;
}

static void row_summarise(struct mon_row *row)
{
	unsigned int n = row->nr;

	row->p50_us = STAT_OF(MEDIAN, row->s, n, p50_us);
	row->p99_us = STAT_OF(MEDIAN, row->s, n, p99_us);
	row->avg_us = STAT_OF(MEDIAN, row->s, n, avg_us);
	row->max_us = STAT_OF(MEDIAN, row->s, n, max_us);
	row->max_worst_us = STAT_OF(MAX, row->s, n, max_us);
	row->ops = STAT_OF(MEDIAN, row->s, n, ops);
	row->vmas = STAT_OF(MEDIAN, row->s, n, vmas);
	row->polls = STAT_OF(MEDIAN, row->s, n, polls);
	/* the median poll of the samples that had one (NaN: none) */
	row->poll_ms = STAT_OF(MEDIAN, row->s, n, poll_ms);
	for (unsigned int i = 0; i < n; i++) {
		row->timeouts += row->s[i].timeouts;
		row->errors += row->s[i].errors;
		if (!row->note && row->s[i].note[0])
			row->note = row->s[i].note;
	}
}

static struct mon_row *add_row(struct mon_result *res, int tool, enum target_kind target, int lock)
{
	struct mon_row *row = &res->rows[res->nr_rows];

	row->s = vml_zalloc(res->c->samples * sizeof(*row->s));
	if (!row->s)
		return NULL;
	row->tool = tool;
	row->target = target;
	row->lock = lock;
	res->nr_rows++;
	return row;
}

const struct mon_row *mon_find(const struct mon_result *res, int tool, enum target_kind target,
			       int lock)
{
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct mon_row *row = &res->rows[k];

		if (row->tool == tool && row->target == target && row->nr &&
		    (target == TARGET_LIVE || tool < 0 || row->lock == lock))
			return row;
	}
	return NULL;
}

static int make_rows(struct mon_result *res, unsigned int locks)
{
	const struct bench_common *c = res->c;
	unsigned int max = 2 + res->nr_tools * 4;

	res->rows = vml_zalloc(max * sizeof(*res->rows));
	if (!res->rows)
		return -ENOMEM;
	if (!add_row(res, -1, TARGET_LIVE, 0))
		return -ENOMEM;
	for (unsigned int t = 0; t < res->nr_tools; t++)
		if (!res->tools[t].skip[0] && !add_row(res, (int)t, TARGET_LIVE, 0))
			return -ENOMEM;
	if (!c->model)
		return 0;
	if (!add_row(res, -1, TARGET_MODEL, VML_LOCK_MMAP))
		return -ENOMEM;
	for (unsigned int t = 0; t < res->nr_tools; t++) {
		if (res->tools[t].skip[0] || !res->nr_steps[t])
			continue;
		/* only cmdline-like holds: mmap_lock under any policy, one row says it */
		if (!mon_policy_matters(res, (int)t)) {
			if (!add_row(res, (int)t, TARGET_MODEL, VML_LOCK_MMAP))
				return -ENOMEM;
			continue;
		}
		if ((locks & VOCAB_BIT(VML_LOCK_MMAP)) &&
		    !add_row(res, (int)t, TARGET_MODEL, VML_LOCK_MMAP))
			return -ENOMEM;
		if ((locks & VOCAB_BIT(VML_LOCK_VMA)) &&
		    !add_row(res, (int)t, TARGET_MODEL, VML_LOCK_VMA))
			return -ENOMEM;
		if (mon_today_lock(res, (int)t) == MON_LOCK_TODAY &&
		    !add_row(res, (int)t, TARGET_MODEL, MON_LOCK_TODAY))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The model readers' charges for each view some tool reads (bench/calibrate.c),
 * as proc-vs-map's: per record, per page walked and per read() call, each
 * measured now unless its option gives it.
 */
static int calibrate(struct mon_result *res)
{
	const struct mon_opts *o = res->o;
	const struct bench_common *c = res->c;
	bool need[MON_VIEWS] = { false };

	for (unsigned int t = 0; t < res->nr_tools; t++)
		for (unsigned int i = 0; i < res->nr_steps[t]; i++)
			if (res->steps[t][i].view < MON_VIEWS)
				need[res->steps[t][i].view] = true;
	for (int v = 0; v < MON_VIEWS; v++) {
		int ret;

		if (!need[v])
			continue;
		if (o->charge.record_ns < 0 || o->charge.call_ns < 0) {
			/* smaps_rollup too: the model spends its record charge per VMA gathered */
			bench_progress(c->quiet, "monitor: calibrating the %s costs against the live "
				       "kernel ...", target_view_name((enum vml_view)v));
			ret = bench_calibrate_record((enum vml_view)v, &res->cal[v]);
			if (ret) {
				fprintf(stderr, "vmalock bench: calibration against the live kernel "
						"failed: %s (use --record-ns N, --page-ns N and "
						"--call-ns N to set it)\n", errstr(ret));
				return ret;
			}
		}
		bench_charges(&o->charge, (enum vml_view)v, res->cal[v].done ? &res->cal[v] : NULL,
			      &res->record_ns[v], &res->page_ns[v], &res->call_ns[v]);
	}
	return 0;
}

static void result_free(struct mon_result *res)
{
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		for (unsigned int i = 0; i < res->c->samples && res->rows[k].s; i++)
			vml_free(res->rows[k].s[i].hist);
		vml_free(res->rows[k].s);
	}
	vml_free(res->rows);
}

static int mon_run(struct bench_run *br)
{
	const struct bench_common *c = br->c;
	struct mon_result *res = vml_zalloc(sizeof(*res));
	unsigned int total, done = 0, runnable = 0;
	int ret;

	br->res = res;
	if (!res) {
		fprintf(stderr, "vmalock bench: out of memory\n");
		return -ENOMEM;
	}
	res->c = c;
	res->o = br->opts;
	res->self = getpid();
	res->maps_per_vma = bench_kernel_maps_per_vma();
	res->strace = mon_have_exe("strace");
	bench_pick_cpus(&res->mapper_cpu, &res->reader_cpu);
	ret = mon_tools_init(res->o, res);
	if (ret)
		return ret;
	for (unsigned int t = 0; t < res->nr_tools; t++) {
		if (res->tools[t].skip[0])
			fprintf(stderr, "vmalock bench: monitor: %s skipped: %s\n", res->tools[t].name,
				res->tools[t].skip);
		else
			runnable++;
	}
	if (!target_live_available()) {
		fprintf(stderr, "vmalock bench: monitor: vmalock-child not found: the tools need "
				"the live mapper\n");
		return -ENOENT;
	}
	if (runnable) {
		ret = observe(res);
		if (!ret && c->model)
			ret = calibrate(res);
		if (ret) {
			bench_progress_done(c->quiet);
			return ret;
		}
	}
	ret = make_rows(res, bench_locks(br));
	if (ret)
		return ret;
	/* round-robin: sample i of every row before sample i + 1 of any */
	total = res->nr_rows * c->samples;
	for (unsigned int i = 0; i < c->samples && !ret; i++)
		for (unsigned int k = 0; k < res->nr_rows && !ret; k++)
			ret = run_sample(res, &res->rows[k], i, ++done, total);
	bench_progress_done(c->quiet);
	if (ret) {
		if (ret == -ENOMEM)
			fprintf(stderr, "vmalock bench: out of memory\n");
		return ret;
	}
	for (unsigned int k = 0; k < res->nr_rows; k++)
		row_summarise(&res->rows[k]);
	return 0;
}

static void mon_free(struct bench_run *br)
{
	const struct mon_opts *o = br->opts;
	struct mon_result *res = br->res;

	bench_layout_free(o->layout);	/* loaded by mon_check() */
	if (!res)
		return;
	result_free(res);
	vml_free(res);
}

static void mon_defaults(void *opts)
{
	struct mon_opts *o = opts;

	*o = (struct mon_opts){
		.interval_s = 1,
		.tool_timeout_s = 10,
		.charge = { .record_ns = -1, .page_ns = -1, .call_ns = -1 },
	};
	bench_mapper_defaults(&o->mapper);
}

static int mon_check(const char *cmd, const struct bench_common *c, void *opts)
{
	struct mon_opts *o = opts;
	int ret;

	(void)c;
	ret = bench_check_mb(cmd, o->mapper.mb);
	if (ret || !o->layout_path)
		return ret;
	/* last: the check that does work, and whose result mon_free() frees */
	return bench_layout_load(cmd, o->layout_path, o->mapper.mb << 20, true,
				 &o->layout);
}

#define M(f) offsetof(struct mon_opts, f)
static const struct cli_opt mon_opts_table[] = {
	{ "--tool", "'CMD {pid}'", mon_set_tool, M(tools), 0, 0, NULL,
	  "a monitoring command run once per poll by /bin/sh\n"
	  "(repeatable, one row each); {pid} is the mapper's pid, {ppid}\n"
	  "ours (the mapper's command line ends with it); a command\n"
	  "without {pid} is fine (some tools scan every process).\n"
	  "Given --tool, the built-ins run only as --tools names them" },
	{ "--tools", "all|none|NAME,...", mon_set_tool_names, M(tool_names), 0, 0, NULL,
	  "the built-in tools [all; none with --tool]: pmap, smem, top,\n"
	  "ps, htop, atop, atop-R, pidstat, clear_refs, process-exporter" },
	{ "--interval", "SECONDS", cli_set_seconds, M(interval_s), 0.05, 86400, NULL,
	  "one poll every SECONDS, from the mapper's start [1]" },
	{ "--tool-timeout", "SECONDS", cli_set_seconds, M(tool_timeout_s), 0.1, 3600, NULL,
	  "a poll still running after SECONDS is killed and counted in\n"
	  "its row [10]" },
	{ "--tool-nice", "N", cli_set_uint, M(tool_nice), 0, 19, NULL,
	  "the tools' nice value, on the readers' CPU [0]" },
	BENCH_MAPPER_OPTS(struct mon_opts, mapper),
	BENCH_CHARGE_OPTS(struct mon_opts, charge),
	{ "--layout", "FILE.ops", cli_set_string, M(layout_path), 0, 0, NULL,
	  "an op script (a twin of some process) laid out in the\n"
	  "mapper's address space on the live child and the model before\n"
	  "each sample; the mapper's region goes in a free gap beside it\n"
	  "(as proc-vs-map's --layout)" },
	CLI_OPT_END,
};
#undef M

const struct bench_scenario bench_monitor = {
	.name = "monitor",
	.question = "How much do real monitoring tools stall the mapper, and what would the "
		    "seeds' per-VMA locks save with each?",
	.rows = "a tool (or none) on a target: the mapper's latency with it polling, and the "
		"model's prediction under each lock policy",
	.about = "Real tools (pmap, smem, top, ps, htop, atop, pidstat,\n"
		 "prometheus-process-exporter, or --tool CMD) poll proc-vs-map's live\n"
		 "mapper; what each reads of /proc is observed under strace and replayed\n"
		 "on the model. It needs no root for its own mapper; it needs strace and\n"
		 "the tools' Debian packages: procps (pmap, top, ps), smem, htop, atop,\n"
		 "sysstat (pidstat), prometheus-process-exporter; a missing tool is\n"
		 "skipped with a one-line reason (scripts/install-deps.sh installs them).",
	.opts = mon_opts_table,
	.opts_size = sizeof(struct mon_opts),
	.defaults = mon_defaults,
	.locks = VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA),
	.default_locks = VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA),
	.needs_live = "its tools are real programs",
	.check = mon_check,
	.run = mon_run,
	.print = mon_print,
	.json = mon_json,
	.plot = mon_plot,
	.free = mon_free,
};
