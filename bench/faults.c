// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * faults.c - `vmalock bench faults`: page faults a second, N threads of one
 * mm each faulting a VMA of its own, under mmap_lock and under per-VMA
 * locks, on simulated machines of 1 to 64 CPUs and on the live kernel.
 *
 * Each thread, pinned to a CPU of its own, writes every page of its
 * --pages region (first touch: one anonymous fault each), MADV_DONTNEEDs
 * it, and again, for the run's time; the figure is all threads' faults
 * over that time (the zaps' time included). Rows:
 *   sim mmap  the model on the simulated machine, faults under mmap_lock(R)
 *             (no_per_vma_lock: a kernel without CONFIG_PER_VMA_LOCK)
 *   sim vma   the same, faults under the VMA's read lock (6.4 and later)
 *   kernel    the live kernel (6.18: per-VMA locks), N threads of this
 *             process, at the CPU counts this machine has
 * What makes the policies differ on the simulated machine is the cache
 * line: every fault under mmap_lock does two atomics on the mm's rwsem
 * count, and those serialise across CPUs (sim_cacheline.c); per-VMA locks
 * touch each thread's own VMA's vm_refcnt. With --shared the threads fault
 * slices of one VMA (mmtests' pft-threads, the published figures' layout),
 * so both policies share one line.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "host/host.h"
#include "internal.h"
#include "simcost.h"
#include "sync/atomic.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/json.h"
#include "vmalock/mm.h"

#define FL_PAGE 4096UL
#define FL_SLOT (4UL << 20)		/* a thread's slot: its region, then a gap */
#define FL_BASE 0x100000000000UL	/* the model's first slot */
#define FL_MAX_ROWS (2 * CLI_MAX_LIST + 64)

struct fl_opts {
	unsigned long pages;	/* --pages a thread faults between zaps */
	double duration_s;	/* --duration: a live sample */
	double sim_duration_s;	/* --sim-duration: a simulated row, virtual */
	bool shared;		/* --shared: one VMA, a slice each */
};

enum fl_lock { FL_MMAP, FL_VMA, FL_KERNEL };
static const char *const lock_names[] = { "mmap", "vma", "kernel" };

struct fl_row {
	bool sim;
	enum fl_lock lock;
	unsigned int cpus;		/* threads, one a CPU */
	double *per_sample;		/* faults a second */
	unsigned int nr;
	double fps;			/* median */
	uint64_t faults;		/* simulated: all threads' in the run's time */
	uint64_t all_faults;		/* ...and in their first round (the lines' counts cover it) */
	uint64_t line_xfers, line_wait_ns;	/* simulated: the cache lines' */
	uint64_t events, wall_ns;	/* simulated: the simulator's own */
	int err;
};

struct fl_result {
	struct fl_row rows[FL_MAX_ROWS];
	unsigned int nr;
	struct bench_sim_costs simcosts;
	bool have_costs;
	char load[128];			/* /proc/loadavg before the live rows */
};

/* ---- one run: N threads faulting, on either side ---- */

struct fl_space {
	bool live;
	struct vml_sys *sys;
	struct vml_mm *mm;
	unsigned long base, len;	/* the first slot, a thread's region */
	void *resv;			/* live: the reservation */
	size_t resv_len;
};

struct fl_crew {
	struct fl_space *sp;
	unsigned int n;
	uint64_t duration_ns;
	_Atomic uint32_t ready;		/* [atomic] threads at the start line */
	_Atomic uint32_t go;		/* [atomic] futex word: 1 once the last is there */
	uint64_t deadline;		/* written before go's release; read after its acquire */
};

struct fl_worker {
	struct fl_crew *crew;
	unsigned int idx;
	uint64_t faults;		/* in the run's time */
	uint64_t warm;			/* in the first round */
	int err;
};

static unsigned long slot_addr(const struct fl_space *sp, unsigned int i)
{
	return sp->base + i * FL_SLOT;
}

static int space_touch(struct fl_space *sp, unsigned long a)
{
	if (sp->live) {
		*(volatile char *)a = 1;
		return 0;
	}
	return vml_touch(sp->mm, a, FL_PAGE, VML_TOUCH_WRITE);
}

static int space_zap(struct fl_space *sp, unsigned long a)
{
	if (sp->live)
		return madvise((void *)a, sp->len, MADV_DONTNEED) ? -errno : 0;
	return vml_madvise(sp->mm, a, sp->len, MADV_DONTNEED);
}

/* Map @n regions, a VMA each (or, @shared, one VMA over all slots), small pages. */
static int space_map(struct fl_space *sp, unsigned int n, bool shared)
{
	unsigned long whole = n * FL_SLOT;

	if (sp->live) {
		char *r = mmap(NULL, whole + (2UL << 20), PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (r == MAP_FAILED)
			return -errno;
		sp->resv = r;
		sp->resv_len = whole + (2UL << 20);
		/* 2 MiB-aligned slots: a page table each */
		sp->base = ((unsigned long)r + (2UL << 20) - 1) & ~((2UL << 20) - 1);
		for (unsigned int i = 0; i < (shared ? 1 : n); i++) {
			void *a = (void *)slot_addr(sp, i);
			size_t len = shared ? whole : sp->len;

			/* the PROT_NONE gaps keep each thread's region a VMA of its own */
			if (mmap(a, len, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE |
				 MAP_ANONYMOUS, -1, 0) == MAP_FAILED ||
			    madvise(a, len, MADV_NOHUGEPAGE))
				return -errno;
		}
		return 0;
	}
	sp->base = FL_BASE;
	for (unsigned int i = 0; i < (shared ? 1 : n); i++) {
		unsigned long a = slot_addr(sp, i), got, len = shared ? whole : sp->len;
		int ret = vml_mmap(sp->mm, a, len, PROT_READ | PROT_WRITE,
				   MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, NULL, 0, &got);

		if (!ret)
			ret = vml_madvise(sp->mm, a, len, MADV_NOHUGEPAGE);
		if (ret)
			return ret;
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct fl_worker *wk = arg;
	struct fl_crew *c = wk->crew;
	struct fl_space *sp = c->sp;
	unsigned long a0 = slot_addr(sp, wk->idx);
	uint64_t deadline;

	/* a first round: page tables made, the zapped pages' frees behind us */
	for (unsigned long p = 0; !wk->err && p < sp->len; p += FL_PAGE, wk->warm++)
		wk->err = space_touch(sp, a0 + p);
	if (!wk->err)
		wk->err = space_zap(sp, a0);
	if (atomic_fetch_add(&c->ready, 1) + 1 == c->n) {
		c->deadline = plat_now_ns() + c->duration_ns;
		store_release(&c->go, 1);	/* pairs with the load_acquire below */
		plat_futex_wake(&c->go, INT32_MAX);
	}
	/* pairs with the store_release above: the deadline is set */
	while (!load_acquire(&c->go))
		plat_futex_wait(&c->go, 0, 0);
	deadline = c->deadline;
	/* Ends: the clock passes the deadline (virtual time passes with each fault). */
	while (!wk->err) {
		for (unsigned long p = 0; p < sp->len; p += FL_PAGE) {
			if (plat_now_ns() >= deadline)
				return NULL;
			wk->err = space_touch(sp, a0 + p);
			if (wk->err)
				return NULL;
			wk->faults++;
		}
		wk->err = space_zap(sp, a0);
	}
	return NULL;
}

/* @n workers on CPUs 0..n-1 for @duration_ns; *@fps their faults a second. */
static int crew_run(struct fl_space *sp, unsigned int n, uint64_t duration_ns, double *fps,
		    uint64_t *faults, uint64_t *all_faults)
{
	struct fl_crew c = { .sp = sp, .n = n, .duration_ns = duration_ns };
	struct fl_worker *wk = vml_zalloc(n * sizeof(*wk));
	struct plat_thread *th = vml_zalloc(n * sizeof(*th));
	unsigned int started = 0;
	uint64_t total = 0, warm = 0;
	int ret = 0;

	if (!wk || !th)
		ret = -ENOMEM;
	for (; !ret && started < n; started++) {
		struct plat_thread_opts o = { .cpu = (int)started, .name = "faulter" };

		wk[started] = (struct fl_worker){ .crew = &c, .idx = started };
		ret = plat_thread_create(&th[started], &o, worker_main, &wk[started]);
		if (ret)
			break;
	}
	if (ret && started < n) {
		/* let the started ones go: they count the missing in */
		atomic_fetch_add(&c.ready, n - started - 1);
		if (atomic_fetch_add(&c.ready, 1) + 1 == n) {
			c.deadline = plat_now_ns();
			store_release(&c.go, 1);	/* pairs with worker_main()'s load_acquire */
			plat_futex_wake(&c.go, INT32_MAX);
		}
	}
	for (unsigned int i = 0; i < started; i++) {
		plat_thread_join(&th[i]);
		total += wk[i].faults;
		warm += wk[i].warm;
		if (!ret)
			ret = wk[i].err;
	}
	*fps = (double)total / ((double)duration_ns / 1e9);
	*faults = total;
	*all_faults = total + warm;
	vml_free(wk);
	vml_free(th);
	return ret;
}

static int space_create(struct fl_space *sp, bool live, enum fl_lock lock, unsigned long pages,
			const struct vml_kernel_costs *costs)
{
	struct vml_sys_config cfg;	/* this host's (or --profile's) */
	int ret;

	*sp = (struct fl_space){ .live = live, .len = pages * FL_PAGE };
	if (live)
		return 0;
	ret = host_current_config(0, &cfg);
	if (ret)
		return ret;
	cfg.costs = *costs;
	cfg.no_per_vma_lock = lock == FL_MMAP;
	ret = vml_sys_create(&cfg, &sp->sys);
	if (!ret)
		ret = vml_mm_create(sp->sys, &sp->mm);
	return ret;
}

static void space_destroy(struct fl_space *sp)
{
	if (sp->resv)
		munmap(sp->resv, sp->resv_len);
	vml_mm_destroy(sp->mm);
	vml_sys_destroy(sp->sys);
}

/* ---- the simulated rows ---- */

struct fl_sim {
	const struct fl_opts *o;
	const struct bench_sim_costs *costs;
	struct fl_row *row;
	int ret;
};

static void *sim_main(void *arg)
{
	struct fl_sim *s = arg;
	struct fl_space sp;
	int ret = space_create(&sp, false, s->row->lock, s->o->pages, &s->costs->kernel);
	double fps = 0;

	if (!ret)
		ret = space_map(&sp, s->row->cpus, s->o->shared);
	if (!ret)
		ret = crew_run(&sp, s->row->cpus, (uint64_t)(s->o->sim_duration_s * 1e9), &fps,
			       &s->row->faults, &s->row->all_faults);
	space_destroy(&sp);
	s->row->per_sample[0] = fps;
	s->ret = ret;
	return NULL;
}

static int run_sim_row(const struct bench_run *r, struct fl_result *res, struct fl_row *row)
{
	struct fl_sim s = { .o = r->opts, .costs = &res->simcosts, .row = row };
	struct sim_config cfg = bench_sim_config(&res->simcosts, row->cpus, r->c->sim_seed);
	struct sim_stats st;
	int ret;

	row->per_sample = vml_zalloc(sizeof(double));
	if (!row->per_sample)
		return -ENOMEM;
	ret = sim_run(&cfg, sim_main, &s, &st);
	if (!ret)
		ret = s.ret;
	row->nr = !ret;
	row->fps = row->per_sample[0];
	row->line_xfers = st.line_xfers;
	row->line_wait_ns = st.line_wait_ns;
	row->events = st.events;
	row->wall_ns = st.wall_ns;
	return ret;
}

/* ---- the live rows ---- */

static int run_live_row(const struct bench_run *r, struct fl_row *row)
{
	const struct fl_opts *o = r->opts;
	int ret = 0;

	row->per_sample = vml_zalloc(r->c->samples * sizeof(double));
	if (!row->per_sample)
		return -ENOMEM;
	for (unsigned int i = 0; !ret && i < r->c->samples; i++) {
		struct fl_space sp;
		uint64_t faults, all;

		bench_progress(r->c->quiet, "faults: kernel, %u thread%s: sample %u/%u", row->cpus,
			       row->cpus == 1 ? "" : "s", i + 1, r->c->samples);
		ret = space_create(&sp, true, FL_KERNEL, o->pages, NULL);
		if (!ret)
			ret = space_map(&sp, row->cpus, o->shared);
		if (!ret)
			ret = crew_run(&sp, row->cpus, (uint64_t)(o->duration_s * 1e9),
				       &row->per_sample[i], &faults, &all);
		space_destroy(&sp);
		row->nr += !ret;
	}
	row->fps = stat_median(row->per_sample, row->nr);
	return ret;
}

/* The CPUs this process may run on, as many as the live rows can pin threads to. */
static unsigned int live_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	/* plat_pin_self pins thread i to CPU i: the first CPUs must be ours */
	for (unsigned int i = 0; i < CPU_SETSIZE; i++)
		if (!CPU_ISSET(i, &set))
			return i ? i : 1;
	return CPU_SETSIZE;
}

static int fl_run(struct bench_run *r)
{
	const struct bench_common *c = r->c;
	struct fl_result *res = vml_zalloc(sizeof(*res));
	unsigned int locks = bench_locks(r), nlive = live_cpus();
	int ret = 0;

	if (!res) {
		fprintf(stderr, "vmalock bench: faults: out of memory\n");
		return -ENOMEM;
	}
	r->res = res;
	bench_loadavg(res->load, sizeof(res->load));
	if (c->live) {
		/* the live rows: 1 thread and up, at the CPU counts this machine has */
		for (unsigned int n = 1; !ret && n <= nlive && n <= 64; n++) {
			struct fl_row *row = &res->rows[res->nr++];

			*row = (struct fl_row){ .lock = FL_KERNEL, .cpus = n };
			ret = run_live_row(r, row);
		}
	}
	if (!ret && c->sim) {
		if (!c->sim_costs)
			bench_progress(c->quiet, "faults: measuring the simulated machine's charges ...");
		ret = bench_sim_costs_get("vmalock bench faults", c->sim_costs, NULL, &res->simcosts);
		res->have_costs = !ret;
	}
	for (unsigned int k = 0; !ret && c->sim && k < c->cpus_list.nr; k++) {
		for (int l = FL_MMAP; !ret && l <= FL_VMA; l++) {
			struct fl_row *row;

			if (!(locks & VOCAB_BIT(l == FL_MMAP ? VML_LOCK_MMAP : VML_LOCK_VMA)))
				continue;
			row = &res->rows[res->nr++];
			*row = (struct fl_row){ .sim = true, .lock = l,
						.cpus = (unsigned int)c->cpus_list.v[k] };
			bench_progress(c->quiet, "faults: sim %s, %u CPUs", lock_names[l], row->cpus);
			ret = run_sim_row(r, res, row);
		}
	}
	bench_progress_done(c->quiet);
	if (ret)
		fprintf(stderr, "vmalock bench: faults: %s\n", strerror(ret < 0 ? -ret : ret));
	return ret;
}

/* The simulated mmap row of @row's CPU count, or NULL. */
static const struct fl_row *mmap_row(const struct fl_result *res, const struct fl_row *row)
{
	for (unsigned int i = 0; i < res->nr; i++)
		if (res->rows[i].sim && res->rows[i].lock == FL_MMAP &&
		    res->rows[i].cpus == row->cpus)
			return &res->rows[i];
	return NULL;
}

static double vma_over_mmap(const struct fl_result *res, const struct fl_row *row)
{
	const struct fl_row *m = row->sim && row->lock == FL_VMA ? mmap_row(res, row) : NULL;

	return m && m->fps > 0 ? row->fps / m->fps : NAN;
}

static const struct bench_col columns[] = {
	BENCH_TEXT("target", -7), BENCH_TEXT("lock", -7), BENCH_NUM("cpus", 5, FIXED, 0),
	BENCH_NUM("faults/s", 12, FIXED, 0), BENCH_NUM("per cpu", 10, FIXED, 0),
	BENCH_NUM("vma/mmap", 9, FIXED, 2), BENCH_NUM("xfer/flt", 9, FIXED, 2),
	BENCH_NUM("wait/flt ns", 12, FIXED, 0),
	BENCH_COLS_END,
};

static void fl_print(FILE *f, const struct bench_run *r)
{
	const struct fl_opts *o = r->opts;
	const struct fl_result *res = r->res;
	struct bench_table t;

	fprintf(f, "# faults: N threads of one mm, each on a CPU of its own, write every page of\n"
		"# %s (%lu pages), MADV_DONTNEED it, again; faults a second of run, zaps\n"
		"# included\n", o->shared ? "a slice of one shared VMA" : "a VMA of its own",
		o->pages);
	if (r->c->live)
		fprintf(f, "# live: kernel %s, %u samples of %.2f s, median; load %s\n",
			bench_kernel(), r->c->samples, o->duration_s, res->load);
	if (r->c->sim) {
		fprintf(f, "# sim: the model on simulated machines (docs/simulation.md), seed %llu, "
			   "%.1f ms of virtual time a row;\n# mmap: faults under mmap_lock(R), as "
			   "before 6.4; vma: under the VMA's read lock\n",
			(unsigned long long)r->c->sim_seed, o->sim_duration_s * 1e3);
		if (res->have_costs)
			bench_sim_costs_print(f, &res->simcosts);
	}
	bench_table_start(&t, f, columns, 0);
	for (unsigned int i = 0; i < res->nr; i++) {
		const struct fl_row *row = &res->rows[i];

		if (!row->nr)
			continue;
		bench_text(&t, row->sim ? "sim" : "live");
		bench_text(&t, lock_names[row->lock]);
		bench_num(&t, row->cpus);
		bench_num(&t, row->fps);
		bench_num(&t, row->fps / row->cpus);
		bench_num(&t, vma_over_mmap(res, row));
		bench_num(&t, row->sim && row->all_faults ?
			      (double)row->line_xfers / row->all_faults : NAN);
		bench_num(&t, row->sim && row->all_faults ?
			      (double)row->line_wait_ns / row->all_faults : NAN);
		bench_row_end(&t);
	}
	fprintf(f, "# vma/mmap: the vma row's faults/s over the mmap row's at its CPU count;\n"
		"# xfer/flt: cache-line transfers a fault (sim; the first round's faults\n"
		"# and the zaps' transfers counted too); wait/flt: their wait for a line\n"
		"# busy with others' transfers, ns a fault, transfers aside\n");
}

static void fl_json(json_t *doc, const struct bench_run *r)
{
	const struct fl_opts *o = r->opts;
	const struct fl_result *res = r->res;
	json_t *meta = bench_doc_meta(doc);

	json_set_u64(meta, "pages", o->pages);
	json_set_bool(meta, "shared_vma", o->shared);
	json_set_double(meta, "duration_s", o->duration_s);
	json_set_double(meta, "sim_duration_s", o->sim_duration_s);
	if (res->have_costs)
		json_set_new(doc, "sim_costs", bench_sim_costs_json(&res->simcosts));
	for (unsigned int i = 0; i < res->nr; i++) {
		const struct fl_row *fr = &res->rows[i];
		json_t *row, *per;

		if (!fr->nr)
			continue;
		row = bench_doc_row(doc, target_kind_name(fr->sim ? TARGET_MODEL : TARGET_LIVE));
		json_set_bool(row, "sim", fr->sim);
		json_set_u64(row, "cpus", fr->cpus);
		json_set_str(row, "lock", lock_names[fr->lock]);
		json_set_double(row, "faults_per_s", fr->fps);
		json_set_double(row, "faults_per_s_per_cpu", fr->fps / fr->cpus);
		if (fr->sim) {
			json_set_u64(row, "faults", fr->faults);
			json_set_u64(row, "faults_with_first_round", fr->all_faults);
			json_set_u64(row, "line_xfers", fr->line_xfers);
			json_set_u64(row, "line_wait_ns", fr->line_wait_ns);
			if (fr->lock == FL_VMA)
				json_set_double(row, "vma_over_mmap", vma_over_mmap(res, fr));
		}
		per = bench_doc_samples(row, "per_sample");
		for (unsigned int k = 0; k < fr->nr; k++)
			json_push_new(per, json_real(fr->per_sample[k]));
	}
}

static void fl_free(struct bench_run *r)
{
	struct fl_result *res = r->res;

	for (unsigned int i = 0; res && i < res->nr; i++)
		vml_free(res->rows[i].per_sample);
	vml_free(res);
}

static void fl_defaults(void *opts)
{
	struct fl_opts *o = opts;

	*o = (struct fl_opts){ .pages = 256, .duration_s = 1, .sim_duration_s = 0.002 };
}

static int fl_check(const char *cmd, const struct bench_common *c, void *opts)
{
	const struct fl_opts *o = opts;

	/* without --cpus, the default targets give the live rows alone */
	if (c->model && !c->live && !c->sim)
		return cli_usage_error(cmd, "--target: faults has model rows on the simulated "
				       "machine only (--cpus N[,N...]); live for the kernel's");
	for (unsigned int k = 0; k < c->cpus_list.nr; k++)
		if (c->cpus_list.v[k] > 64)
			return cli_usage_error(cmd, "--cpus: faults runs up to 64 CPUs");
	if (o->pages * FL_PAGE > FL_SLOT / 2)
		return cli_usage_error(cmd, "--pages: at most %lu", FL_SLOT / 2 / FL_PAGE);
	return 0;
}

static const struct cli_opt fl_opts_table[] = {
	{ "--pages", "N", cli_set_ulong, offsetof(struct fl_opts, pages), 1, 512, NULL,
	  "pages a thread faults between two MADV_DONTNEEDs [256]" },
	{ "--duration", "SECONDS", cli_set_seconds, offsetof(struct fl_opts, duration_s), 0.01,
	  600, NULL, "a live sample's time [1]" },
	{ "--sim-duration", "SECONDS", cli_set_seconds, offsetof(struct fl_opts, sim_duration_s),
	  0.0001, 10, NULL, "a simulated row's virtual time [0.002]" },
	{ "--shared", NULL, cli_set_flag, offsetof(struct fl_opts, shared), 0, 0, NULL,
	  "one VMA, a slice of it each (mmtests' pft-threads) instead of\n"
	  "a VMA each" },
	CLI_OPT_END,
};

const struct bench_scenario bench_faults = {
	.name = "faults",
	.question = "How do page faults a second scale with CPUs, N threads each faulting its "
		    "own VMA of one mm, under mmap_lock and under per-VMA locks?",
	.rows = "a target, a fault lock (mmap, vma; the kernel's) and a CPU count: faults a "
		"second",
	.about = "N threads pinned one a CPU write every page of their region, MADV_DONTNEED\n"
		 "it and again. Simulated machines (--cpus 1,2,4,...) under each fault lock,\n"
		 "with cache-line contention; live rows at the CPU counts this machine has.",
	.opts = fl_opts_table,
	.opts_size = sizeof(struct fl_opts),
	.defaults = fl_defaults,
	.locks = VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA),
	.default_locks = VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA),
	.sim = true,
	.sim_cpus_list = true,
	.check = fl_check,
	.run = fl_run,
	.print = fl_print,
	.json = fl_json,
	.free = fl_free,
};
