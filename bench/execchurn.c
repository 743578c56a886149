// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * execchurn.c - `vmalock bench exec-churn`: seed 001's experiment. The file
 * mapping lock, i_mmap_rwsem, is taken for writing by every mmap of a file
 * and by every exit that unmaps one; when many processes exec the same
 * binary and libraries (UnixBench Execl: +12% at 160 parallel copies on a
 * 224-thread machine with the patch) they contend on those files' locks.
 * The patch moved the new VMA's store in the mm's tree and the map_count
 * update out of the write section; the model has both orders
 * (i_mmap_order=pre|post).
 *
 * Model: N worker threads, each building one exec-like address space after
 * another and tearing it down, as load_elf_binary + ld.so + exit_mmap do:
 * a PIE binary, the dynamic loader and libc (this machine's dash, ld.so and
 * libc: their PT_LOAD segments, RELRO and bss), mapped the way the kernel
 * maps the first two (a mapping per segment) and ld.so maps libc (the whole
 * span first, then each segment over it), a stack, a heap, a few
 * anonymous mappings; a few pages of each are touched; then exit. The
 * three files are shared by every worker, so their i_mmap_rwsems are the
 * contended locks. Every write section is timed (vml_i_mmap_time_hook):
 * how long its holder waited and held it.
 *
 * Reported per row (order x threads): executions per second, hold p50/p99
 * and mean, wait p50/p99 and wait per execution, write sections per
 * execution, and the ceiling: the executions per second at which the
 * hottest file's lock would be busy all the time,
 *     1 / (sections per execution on that file x mean hold there).
 * Two CPUs cannot show contention at 160 processes; the ceiling is what
 * plans past this machine.
 *
 * Live: N parallel loops, each spawning vmalock-exec-stub, a static program
 * that execs itself --exec-chain times (Execl's shape), and waiting for it:
 * executions per second on this kernel, the reference for what one
 * execution costs.
 *
 * Simulated (--cpus N): the same workers as tasks of a machine of N
 * virtual CPUs (docs/simulation.md), worker i on CPU i while there are no
 * more workers than CPUs. Their time is the table's: the model's system
 * calls, faults and zaps; each i_mmap insert and remove inside its write
 * section; each mmap()'s tree store where the order puts it (inside the
 * section under pre); and per execution exec_ns, the rest of what one
 * costs the kernel, fitted so that one simulated worker executes as fast
 * as one live loop spawning `dash -c :` (the same three files). The
 * simulator has no cache-line contention: a lock's line costs the same
 * on 224 CPUs as on one, so the simulated rows show the queueing on the
 * locks alone.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "platform/platform.h"
#include "platform/sim.h"
#include "simcost.h"
#include "host/host.h"
#include "mm/debug.h"
#include "system/helper.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/json.h"

#define PG 4096UL
#define NFILES 3
#define EXEC_CHAIN 10		/* live: executions per spawned stub */

struct ec_opts {
	struct cli_ulist threads;	/* --threads: model workers and live exec loops, a row each */
	double duration_s;		/* --duration of a sample */
};

extern char **environ;

/* One PT_LOAD segment, page-aligned: [start, end) of the image, file offset, protection. */
struct seg {
	unsigned long start, end, off;
	int prot;
};

/*
 * An ELF image as this machine's readelf -l shows it (Debian 12, x86-64):
 * four segments, the RELRO part of the data segment, and the bss beyond
 * the file-backed part.
 */
struct image {
	const char *path;
	unsigned long size;		/* the file's size */
	struct seg seg[4];
	unsigned long relro_end;	/* [seg[3].start, relro_end) becomes read-only */
	unsigned long bss_end;		/* anonymous [seg[3].end, bss_end); 0: none */
	unsigned int text_touches;	/* pages of text read per execution */
};

#define R PROT_READ
#define RX (PROT_READ | PROT_EXEC)
#define RW (PROT_READ | PROT_WRITE)

static const struct image images[NFILES] = {
	{ "/usr/bin/dash", 125640,
	  { { 0x0, 0x4000, 0x0, R }, { 0x4000, 0x17000, 0x4000, RX },
	    { 0x17000, 0x1d000, 0x17000, R }, { 0x1d000, 0x20000, 0x1c000, RW } },
	  0x1e000, 0x22000, 4 },
	{ "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 215000,
	  { { 0x0, 0x1000, 0x0, R }, { 0x1000, 0x27000, 0x1000, RX },
	    { 0x27000, 0x31000, 0x27000, R }, { 0x31000, 0x35000, 0x31000, RW } },
	  0x33000, 0, 8 },
	{ "/usr/lib/x86_64-linux-gnu/libc.so.6", 1926232,
	  { { 0x0, 0x26000, 0x0, R }, { 0x26000, 0x17c000, 0x26000, RX },
	    { 0x17c000, 0x1cf000, 0x17c000, R }, { 0x1cf000, 0x1d5000, 0x1cf000, RW } },
	  0x1d3000, 0x1e2000, 16 },
};

#define BIN_BASE 0x555555554000UL		/* ELF_ET_DYN_BASE */
#define STACK_TOP 0x7ffffffff000UL
#define STACK_SIZE (132UL << 10)

/* ---- the model ---- */

struct ec_sample {
	double execs_per_s;
	double hold_p50_ns, hold_p99_ns, hold_mean_ns;
	double wait_p50_ns, wait_p99_ns, wait_per_exec_ns;
	double sections_per_exec;
	double ceiling;			/* executions/s that saturate the hottest file's lock */
	int hot_file;			/* which one */
	double hot_hold_ns;		/* its sections' mean hold (up to their p99) */
	double hot_sections_per_exec;	/* its sections per execution */
	uint64_t execs;
};

struct ec_row {
	enum target_kind target;
	bool sim;			/* a model row on the simulated machine */
	enum vml_i_mmap_order order;	/* model rows (a live row's is the kernel's) */
	unsigned int threads;
	struct ec_sample *s;
	unsigned int nr;
};

struct ec_model {
	struct vml_sys *sys;
	struct vml_file *files[NFILES];
	uint64_t exec_ns;		/* simulated: charged per execution besides the model's */
	unsigned int cpus;		/* simulated: the machine's CPUs; 0: host threads */
};

struct ec_worker {
	struct ec_model *m;
	int cpu;			/* pinned here; -1: anywhere */
	struct bench_crew *crew;
	uint64_t execs;
	int err;
	struct lat_hist *hold, *wait;
	struct lat_hist *file_hold[NFILES];
};

static __thread struct ec_worker *this_worker;

/* vml_i_mmap_time_hook: account one write section to the calling worker. */
static void time_section(const struct vml_file *file, uint64_t wait_ns, uint64_t hold_ns)
{
	struct ec_worker *w = this_worker;

	if (!w)
		return;
	lat_hist_record(w->hold, hold_ns);
	lat_hist_record(w->wait, wait_ns);
	for (int f = 0; f < NFILES; f++)
		if (w->m->files[f] == file)
			lat_hist_record(w->file_hold[f], hold_ns);
}

static int map_seg(struct vml_mm *mm, unsigned long base, const struct seg *s,
		   struct vml_file *file, int extra_flags)
{
	return vml_mmap(mm, base + s->start, s->end - s->start, s->prot,
			MAP_PRIVATE | MAP_FIXED | extra_flags, file, s->off, NULL);
}

/* The kernel's elf_map per segment (load_elf_binary, load_elf_interp), then RELRO and bss. */
static int map_by_kernel(struct vml_mm *mm, unsigned long base, const struct image *im,
			 struct vml_file *file)
{
	int err = 0;

	for (int i = 0; i < 4 && !err; i++)
		err = map_seg(mm, base, &im->seg[i], file, 0);
	if (!err && im->bss_end)
		err = vml_mmap(mm, base + im->seg[3].end, im->bss_end - im->seg[3].end, RW,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL);
	return err;
}

/* ld.so's _dl_map_segments: the whole span with the first segment, the others over it. */
static int map_by_ldso(struct vml_mm *mm, const struct image *im, struct vml_file *file,
		       unsigned long *base)
{
	unsigned long span = im->bss_end ? im->bss_end : im->seg[3].end;
	int err = vml_mmap(mm, 0, span, im->seg[0].prot, MAP_PRIVATE, file, 0, base);

	for (int i = 1; i < 4 && !err; i++)
		err = map_seg(mm, *base, &im->seg[i], file, 0);
	if (!err && im->bss_end)
		err = vml_mmap(mm, *base + im->seg[3].end, im->bss_end - im->seg[3].end, RW,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL);
	return err;
}

/* Read text pages spread over the segment; write the data page; read RELRO. */
static int touch_image(struct vml_mm *mm, unsigned long base, const struct image *im)
{
	const struct seg *text = &im->seg[1];
	unsigned long pages = (text->end - text->start) / PG;
	int err = 0;

	for (unsigned int i = 0; i < im->text_touches && !err; i++)
		err = vml_touch(mm, base + text->start + (i * pages / im->text_touches) * PG, PG,
				VML_TOUCH_READ);
	if (!err)
		err = vml_touch(mm, base + im->seg[2].start, PG, VML_TOUCH_READ);
	if (!err)
		err = vml_touch(mm, base + im->seg[3].start, PG, VML_TOUCH_READ);
	if (!err)
		err = vml_touch(mm, base + im->relro_end, PG, VML_TOUCH_WRITE);
	return err;
}

/* One execution: build the address space as execve + ld.so do, use it, exit. */
static int exec_once(struct ec_model *m)
{
	unsigned long ld_base, libc_base, heap = BIN_BASE + 0x1000000UL, a;
	struct vml_mm *mm;
	int err = vml_mm_create(m->sys, &mm);

	if (err)
		return err;
	/* load_elf_binary: the binary, the interpreter, the stack. */
	err = map_by_kernel(mm, BIN_BASE, &images[0], m->files[0]);
	if (!err)
		err = vml_mmap(mm, 0, images[1].seg[3].end, R, MAP_PRIVATE, m->files[1], 0, &ld_base);
	if (!err)
		err = map_by_kernel(mm, ld_base, &images[1], m->files[1]);
	if (!err)
		err = vml_mmap(mm, STACK_TOP - STACK_SIZE, STACK_SIZE, RW,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_GROWSDOWN, NULL, 0,
			       NULL);
	/* ld.so: libc, a TLS block; RELRO of all three; then the heap. */
	if (!err)
		err = map_by_ldso(mm, &images[2], m->files[2], &libc_base);
	if (!err)
		err = vml_mmap(mm, 0, 8 * PG, RW, MAP_PRIVATE | MAP_ANONYMOUS, NULL, 0, &a);
	if (!err)
		err = vml_mprotect(mm, BIN_BASE + images[0].seg[3].start,
				   images[0].relro_end - images[0].seg[3].start, R);
	if (!err)
		err = vml_mprotect(mm, ld_base + images[1].seg[3].start,
				   images[1].relro_end - images[1].seg[3].start, R);
	if (!err)
		err = vml_mprotect(mm, libc_base + images[2].seg[3].start,
				   images[2].relro_end - images[2].seg[3].start, R);
	if (!err)
		err = vml_mmap(mm, heap, 33 * PG, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL,
			       0, NULL);
	/* The program runs: a few pages of everything. */
	if (!err)
		err = touch_image(mm, BIN_BASE, &images[0]);
	if (!err)
		err = touch_image(mm, ld_base, &images[1]);
	if (!err)
		err = touch_image(mm, libc_base, &images[2]);
	if (!err)
		err = vml_touch(mm, STACK_TOP - 2 * PG, 2 * PG, VML_TOUCH_WRITE);
	if (!err)
		err = vml_touch(mm, heap, 2 * PG, VML_TOUCH_WRITE);
	if (!err)
		err = vml_touch(mm, a, PG, VML_TOUCH_WRITE);
	vml_mm_destroy(mm);
	return err;
}

static void worker_free(struct ec_worker *w)
{
	vml_free(w->hold);
	vml_free(w->wait);
	for (int f = 0; f < NFILES; f++)
		vml_free(w->file_hold[f]);
}

static void *worker_main(void *arg)
{
	struct ec_worker *w = arg;

	this_worker = w;
	if (w->cpu >= 0)
		w->err = plat_pin_self(w->cpu);
	bench_crew_in(w->crew);
	while (!w->err && !bench_crew_stopped(w->crew)) {
		/* fork, exec, ELF parsing, the program, exit: outside every i_mmap lock */
		if (w->m->exec_ns)
			plat_charge_ns(w->m->exec_ns, PLAT_KERNEL);
		w->err = exec_once(w->m);
		if (w->err)
			break;
		w->execs++;
	}
	this_worker = NULL;
	return NULL;
}

/* @costs: the simulated machine's table, or NULL (host threads, nothing charged). */
static int model_create(enum vml_i_mmap_order order, const struct bench_sim_costs *costs,
			unsigned int cpus, struct ec_model *m)
{
	struct vml_sys_config cfg;
	int err = host_current_config(0, &cfg);

	memset(m, 0, sizeof(*m));
	if (err)
		return err;
	cfg.i_mmap_order = order;
	if (costs) {
		cfg.costs = costs->kernel;
		cfg.costs.i_mmap_insert_ns = costs->i_mmap_insert_ns;
		cfg.costs.i_mmap_remove_ns = costs->i_mmap_remove_ns;
		cfg.costs.vma_store_ns = costs->vma_store_ns;
		m->exec_ns = costs->exec_ns;
		m->cpus = cpus;
	}
	err = vml_sys_create(&cfg, &m->sys);
	for (int f = 0; f < NFILES && !err; f++)
		err = vml_file_create(m->sys, images[f].path, images[f].size, 0, &m->files[f]);
	return err;
}

static void model_destroy(struct ec_model *m)
{
	for (int f = 0; f < NFILES; f++)
		vml_file_put(m->files[f]);
	vml_sys_destroy(m->sys);
}

/* Run @threads workers for @o->duration_s; fill @s. Return: 0 or -errno. */
static int model_sample(const struct ec_opts *o, struct ec_model *m, unsigned int threads,
			struct ec_sample *s)
{
	struct ec_worker *w = vml_zalloc(threads * sizeof(*w));
	struct lat_hist *hold = lat_hist_new(), *wait = lat_hist_new(), *file_hold[NFILES];
	struct bench_crew crew;
	uint64_t wait_sum = 0;
	unsigned int n = 0;
	bool ok = w && hold && wait;
	int err;

	for (int f = 0; f < NFILES; f++)
		ok &= (file_hold[f] = lat_hist_new()) != NULL;
	for (unsigned int i = 0; ok && i < threads; i++) {
		w[i] = (struct ec_worker){ .m = m, .crew = &crew, .hold = lat_hist_new(),
					   .wait = lat_hist_new(),
					   .cpu = threads <= m->cpus ? (int)i : -1 };
		ok &= w[i].hold && w[i].wait;
		for (int f = 0; f < NFILES; f++)
			ok &= (w[i].file_hold[f] = lat_hist_new()) != NULL;
	}
	err = ok ? bench_crew_run(&crew, w, sizeof(*w), threads, worker_main, o->duration_s, &n) :
	      -ENOMEM;
	*s = (struct ec_sample){ .hot_file = -1 };
	for (unsigned int i = 0; i < n; i++) {
		if (w[i].err && !err)
			err = w[i].err;
		s->execs += w[i].execs;
		lat_hist_merge(hold, w[i].hold);
		lat_hist_merge(wait, w[i].wait);
		wait_sum += w[i].wait->sum_ns;
		for (int f = 0; f < NFILES; f++)
			lat_hist_merge(file_hold[f], w[i].file_hold[f]);
	}
	for (unsigned int i = 0; w && i < threads; i++)
		worker_free(&w[i]);
	if (err)
		goto out;
	s->execs_per_s = (double)s->execs / ((double)crew.elapsed_ns / 1e9);
	s->hold_p50_ns = lat_hist_quantile_ns(hold, 0.5);
	s->hold_p99_ns = lat_hist_quantile_ns(hold, 0.99);
	s->hold_mean_ns = hold->count ? (double)hold->sum_ns / (double)hold->count : NAN;
	s->wait_p50_ns = lat_hist_quantile_ns(wait, 0.5);
	s->wait_p99_ns = lat_hist_quantile_ns(wait, 0.99);
	s->wait_per_exec_ns = s->execs ? (double)wait_sum / (double)s->execs : NAN;
	s->sections_per_exec = s->execs ? (double)hold->count / (double)s->execs : NAN;
	/*
	 * The hottest file: the most lock time per execution, its sections'
	 * mean hold (up to their p99: the rest are holders preempted inside,
	 * which a kernel without preemption does not do) times their number.
	 */
	s->ceiling = INFINITY;
	for (int f = 0; f < NFILES; f++) {
		double busy_per_exec;

		if (!s->execs || !file_hold[f]->count)
			continue;
		busy_per_exec = lat_hist_mean_upto_ns(file_hold[f], 0.99) *
				(double)file_hold[f]->count / (double)s->execs;
		if (1e9 / busy_per_exec < s->ceiling) {
			s->ceiling = 1e9 / busy_per_exec;
			s->hot_file = f;
			s->hot_hold_ns = busy_per_exec * (double)s->execs /
					 (double)file_hold[f]->count;
			s->hot_sections_per_exec = (double)file_hold[f]->count / (double)s->execs;
		}
	}
out:
	vml_free(w);
	vml_free(hold);
	vml_free(wait);
	for (int f = 0; f < NFILES; f++)
		vml_free(file_hold[f]);
	return err;
}

/* A model sample on the simulated machine: the model built, run and torn down in its first task. */
struct ec_sim {
	const struct ec_opts *o;
	enum vml_i_mmap_order order;
	const struct bench_sim_costs *costs;
	unsigned int cpus, threads;
	struct ec_sample *s;
	int err;
};

static void *ec_sim_main(void *arg)
{
	struct ec_sim *es = arg;
	struct ec_model m;

	es->err = model_create(es->order, es->costs, es->cpus, &m);
	if (!es->err)
		es->err = model_sample(es->o, &m, es->threads, es->s);
	model_destroy(&m);
	return NULL;
}

static int sim_sample(const struct ec_opts *o, enum vml_i_mmap_order order,
		      const struct bench_sim_costs *costs, unsigned int cpus, unsigned int threads,
		      uint64_t seed, struct ec_sample *s)
{
	struct ec_sim es = { .o = o, .order = order, .costs = costs, .cpus = cpus,
			     .threads = threads, .s = s };
	struct sim_config cfg = bench_sim_config(costs, cpus, seed);
	int err = sim_run(&cfg, ec_sim_main, &es, NULL);

	return err ? err : es.err;
}

/* ---- the live kernel ---- */

struct live_loop {
	const char *path;		/* spawned and waited for, again and again */
	char *const *argv;
	struct bench_crew *crew;
	uint64_t chains;
	int err;
};

static void *live_loop_main(void *arg)
{
	struct live_loop *l = arg;

	bench_crew_in(l->crew);
	while (!bench_crew_stopped(l->crew)) {
		int status;
		pid_t pid;

		l->err = -posix_spawn(&pid, l->path, NULL, NULL, l->argv, environ);
		if (l->err)
			break;
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR)
				break;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			l->err = -ECHILD;
			break;
		}
		l->chains++;
	}
	return NULL;
}

/* @loops loops spawning @path (@chain executions each) for @seconds. */
static int live_loops(const char *path, char *const *argv, unsigned int chain,
		      unsigned int loops, double seconds, struct ec_sample *s)
{
	struct live_loop *l = vml_zalloc(loops * sizeof(*l));
	struct bench_crew crew;
	unsigned int n = 0;
	int err;

	if (!l)
		return -ENOMEM;
	for (unsigned int i = 0; i < loops; i++)
		l[i] = (struct live_loop){ .path = path, .argv = argv, .crew = &crew };
	err = bench_crew_run(&crew, l, sizeof(*l), loops, live_loop_main, seconds, &n);
	*s = (struct ec_sample){ .hot_file = -1, .ceiling = NAN, .hot_hold_ns = NAN,
				 .hot_sections_per_exec = NAN, .hold_p50_ns = NAN,
				 .hold_p99_ns = NAN, .hold_mean_ns = NAN, .wait_p50_ns = NAN,
				 .wait_p99_ns = NAN, .wait_per_exec_ns = NAN,
				 .sections_per_exec = NAN };
	for (unsigned int i = 0; i < n; i++) {
		if (l[i].err && !err)
			err = l[i].err;
		s->execs += l[i].chains * chain;
	}
	/* Chains still running at the stop finish after the stop flag: count to the join. */
	s->execs_per_s = (double)s->execs / ((double)crew.elapsed_ns / 1e9);
	vml_free(l);
	return err;
}

static int live_sample(const struct ec_opts *o, const char *stub, unsigned int loops,
		       struct ec_sample *s)
{
	char count[16];
	char *argv[] = { (char *)"vmalock-exec-stub", count, NULL };

	snprintf(count, sizeof(count), "%d", EXEC_CHAIN - 1);
	return live_loops(stub, argv, EXEC_CHAIN, loops, o->duration_s, s);
}

#define FIT_SAMPLES 5		/* live: samples of 0.4 s of one dash loop */
#define FIT_SIM_S 0.05		/* simulated: the worker's run, virtual seconds */

/*
 * exec_ns, fitted: one live loop spawning `dash -c :` (dash, ld.so and
 * libc: the model's files) for FIT_SAMPLES x 0.4 s, the time per execution
 * of the fastest sample (the least disturbed: the machine may be shared),
 * less what one simulated worker is charged per execution without it.
 * *@live_ns: the former. Return: 0 or -errno.
 */
static int fit_exec_ns(const struct ec_opts *o, struct bench_sim_costs *costs, double *live_ns)
{
	char *argv[] = { (char *)"dash", (char *)"-c", (char *)":", NULL };
	struct ec_opts fo = *o;
	struct ec_sample s;
	double v[FIT_SAMPLES], sim_ns;
	int err = 0;

	for (int i = 0; i < FIT_SAMPLES && !err; i++) {
		err = live_loops(images[0].path, argv, 1, 1, 0.4, &s);
		v[i] = 1e9 / s.execs_per_s;
	}
	if (err)
		return err;
	*live_ns = v[0];
	for (int i = 1; i < FIT_SAMPLES; i++)
		*live_ns = VML_MIN(*live_ns, v[i]);
	costs->exec_ns = 0;
	fo.duration_s = FIT_SIM_S;
	err = sim_sample(&fo, VML_I_MMAP_POST, costs, 1, 1, 1, &s);
	if (err)
		return err;
	sim_ns = 1e9 / s.execs_per_s;
	costs->exec_ns = *live_ns > sim_ns ? (uint64_t)(*live_ns - sim_ns) : 0;
	return 0;
}

/* ---- reduction and output ---- */

#define MED(r, field) STAT_OF(MEDIAN, (r)->s, (r)->nr, field)

/* The series a row belongs to: the model under each order, and the live kernel. */
struct ec_series {
	enum target_kind target;
	enum vml_i_mmap_order order;
	bool sim;
};
static const struct ec_series series[] = {
	{ TARGET_MODEL, VML_I_MMAP_POST, false }, { TARGET_MODEL, VML_I_MMAP_PRE, false },
	{ TARGET_LIVE, 0, false }, { TARGET_MODEL, VML_I_MMAP_POST, true },
	{ TARGET_MODEL, VML_I_MMAP_PRE, true },
};

static bool in_series(const struct ec_row *r, const struct ec_series *se)
{
	return r->target == se->target && r->sim == se->sim &&
	       (se->target == TARGET_LIVE || r->order == se->order) && r->nr;
}

static const char *order_name(enum target_kind target, enum vml_i_mmap_order order)
{
	return words_policy_label(&i_mmap_order_vocab, target, order);
}

/* The N = @threads row of @order (simulated or not), or NULL. */
static const struct ec_row *find_row(const struct ec_row *rows, unsigned int nr,
				     enum target_kind target, enum vml_i_mmap_order order,
				     unsigned int threads, bool sim)
{
	const struct ec_series se = { .target = target, .order = order, .sim = sim };

	for (unsigned int i = 0; i < nr; i++)
		if (in_series(&rows[i], &se) && rows[i].threads == threads)
			return &rows[i];
	return NULL;
}

static const struct bench_col columns[] = {
	BENCH_TEXT("target", -6), BENCH_TEXT("order", -6), BENCH_NUM("threads", 7, FIXED, 0),
	BENCH_NUM("execs/s", 10, FIXED, 0), BENCH_NUM("hold_p50", 9, NS, 0),
	BENCH_NUM("hold_p99", 9, NS, 0), BENCH_NUM("hold_avg", 9, NS, 0),
	BENCH_NUM("wait_p50", 9, NS, 0), BENCH_NUM("wait_p99", 9, NS, 0),
	BENCH_NUM("wait/exec", 10, NS, 0), BENCH_NUM("sect/exec", 9, RAW, 1),
	{ .head = "hot", .width = -6, .prec = 6, .gap = 2 }, BENCH_NUM("sect", 5, RAW, 1),
	BENCH_NUM("hold", 6, RAW, 0), BENCH_NUM("ceiling", 10, G, 4),
	BENCH_COLS_END,
};

/* What a run measured: a row per order (or live) and thread count. */
struct ec_result {
	struct ec_row *rows;
	unsigned int nr;
	double clock_ns;		/* one CLOCK_MONOTONIC read (real-thread model rows) */
	struct ec_model models[2];	/* [enum vml_i_mmap_order] */
	bool have[2];
	struct bench_sim_costs simcosts;	/* simulated rows' table */
	double fit_live_ns;		/* exec_ns fitted now: one live dash execution; else NAN */
};

static void print_table(FILE *f, const struct bench_run *br)
{
	const struct ec_opts *o = br->opts;
	const struct ec_result *res = br->res;
	const struct ec_row *rows = res->rows;
	unsigned int nr = res->nr;
	const struct bench_common *c = br->c;
	struct bench_table t;

	fprintf(f, "# exec-churn: %g s x %u samples a row; medians over samples\n", o->duration_s,
		c->samples);
	fprintf(f, "# model: one execution = %s + %s + %s mapped as execve and ld.so map them,\n"
		   "#   stack, heap, TLS; text, data and stack pages touched; exit. The files are\n"
		   "#   shared by every worker. hold/wait: i_mmap_rwsem write sections, ns",
		images[0].path, images[1].path, images[2].path);
	if (c->model)
		fprintf(f, " (model:\n#   a clock read costs ~%.0f ns and is in each hold once)",
			res->clock_ns);
	fprintf(f, "; sect/exec: write\n"
		   "#   sections per execution, all files; hot: the file whose lock is busiest per\n"
		   "#   execution, its sections per execution and their mean hold (up to their\n"
		   "#   p99: above it holders were preempted, which a PREEMPT_NONE kernel does not\n"
		   "#   do); ceiling: executions/s at which that lock is busy all the time,\n"
		   "#   1 / (sect x hold)\n");
	if (c->live)
		fprintf(f, "# live: parallel loops spawning vmalock-exec-stub, a static program that "
			   "execs\n#   itself %d times (UnixBench Execl's shape); kernel %s\n",
			EXEC_CHAIN, bench_kernel());
	if (c->sim) {
		fprintf(f, "# sim: the model on a simulated machine of %u CPUs (docs/simulation.md), "
			   "seed %llu;\n#   worker i on CPU i while threads <= CPUs; an execution "
			   "is charged the\n#   model's calls, the i_mmap sections' work and exec_ns "
			   "besides", c->cpus, (unsigned long long)c->sim_seed);
		if (!isnan(res->fit_live_ns))
			fprintf(f, " (fitted now: a live\n#   `dash -c :` took %.0f ns)",
				res->fit_live_ns);
		fprintf(f, "; no cache-line\n#   contention: a lock costs as much on %u CPUs as "
			   "on one\n", c->cpus);
		bench_sim_costs_print(f, &res->simcosts);
	}
	bench_table_start(&t, f, columns, 0);
	for (unsigned int i = 0; i < nr; i++) {
		const struct ec_row *r = &rows[i];
		int hot = r->nr ? r->s[0].hot_file : -1;

		if (!r->nr)
			continue;
		bench_text(&t, r->sim ? "sim" : target_kind_name(r->target));
		bench_text(&t, order_name(r->target, r->order));
		bench_num(&t, r->threads);
		bench_num(&t, MED(r, execs_per_s));
		bench_num(&t, MED(r, hold_p50_ns));
		bench_num(&t, MED(r, hold_p99_ns));
		bench_num(&t, MED(r, hold_mean_ns));
		bench_num(&t, MED(r, wait_p50_ns));
		bench_num(&t, MED(r, wait_p99_ns));
		bench_num(&t, MED(r, wait_per_exec_ns));
		if (r->target == TARGET_LIVE) {
			/* the kernel's sections are not seen */
			for (int k = 0; k < 5; k++)
				bench_text(&t, "-");
		} else {
			bench_num(&t, MED(r, sections_per_exec));
			bench_text(&t, hot >= 0 ? strrchr(images[hot].path, '/') + 1 : "-");
			bench_num(&t, MED(r, hot_sections_per_exec));
			bench_num(&t, MED(r, hot_hold_ns));
			bench_num(&t, MED(r, ceiling));
		}
		bench_row_end(&t);
	}
}

/*
 * Simulated: per thread count, post over pre in executions a second, and
 * how busy each order keeps its hottest lock (executions/s over the
 * ceiling): at 100% that lock, not the CPUs, sets the rate.
 */
static void print_sim_verdict(FILE *f, const struct bench_run *r)
{
	const struct ec_opts *o = r->opts;
	const struct ec_result *res = r->res;

	for (unsigned int t = 0; r->c->sim && t < o->threads.nr; t++) {
		unsigned int n = (unsigned int)o->threads.v[t];
		const struct ec_row *pre = find_row(res->rows, res->nr, TARGET_MODEL,
						    VML_I_MMAP_PRE, n, true);
		const struct ec_row *post = find_row(res->rows, res->nr, TARGET_MODEL,
						     VML_I_MMAP_POST, n, true);
		double xp, xq;

		if (!pre || !post)
			continue;
		xp = MED(pre, execs_per_s), xq = MED(post, execs_per_s);
		fprintf(f, "verdict (simulated, %u CPUs, %u thread%s): post/pre %+.1f%% executions/s "
			   "(pre %.0f, post %.0f); the hottest lock busy %.0f%% (pre), %.0f%% (post)\n",
			r->c->cpus, n, n == 1 ? "" : "s", 100 * (xq / xp - 1), xp, xq,
			100 * xp / MED(pre, ceiling), 100 * xq / MED(post, ceiling));
	}
}

/* The two-order comparison and what it says for the seed's 160 parallel copies. */
static void print_verdict(FILE *f, const struct bench_run *r)
{
	const struct ec_opts *o = r->opts;
	const struct ec_result *res = r->res;
	const struct ec_row *rows = res->rows;
	unsigned int nr = res->nr, n1 = (unsigned int)o->threads.v[0];
	const struct ec_row *pre = find_row(rows, nr, TARGET_MODEL, VML_I_MMAP_PRE, n1, false);
	const struct ec_row *post = find_row(rows, nr, TARGET_MODEL, VML_I_MMAP_POST, n1, false);
	const struct ec_row *live = find_row(rows, nr, TARGET_LIVE, 0, n1, false);

	if (pre && post) {
		double cp = MED(pre, ceiling), cq = MED(post, ceiling);

		fprintf(f, "verdict (model, %u thread%s): the busiest file's write sections hold "
			   "i_mmap_rwsem %.0f ns (mean up to p99) with the tree store inside (pre), "
			   "%.0f ns after the patch (post); its lock saturates at %.4g executions/s "
			   "(pre) and %.4g (post): post/pre %.2fx\n", n1, n1 == 1 ? "" : "s",
			MED(pre, hot_hold_ns), MED(post, hot_hold_ns), cp, cq, cq / cp);
		if (live) {
			double demand = 160 * MED(live, execs_per_s) / n1;

			fprintf(f, "verdict (the seed's 160 copies): at this kernel's cost per "
				   "execution (%.0f execs/s a loop) 160 loops would ask %.4g execs/s of "
				   "one binary's lock: %.0f%% of the pre ceiling, %.0f%% of post\n",
				MED(live, execs_per_s) / n1, demand, 100 * demand / cp,
				100 * demand / cq);
		}
	}
	if (post && live)
		fprintf(f, "model/live (%u): the model executes %.3gx as fast as the kernel "
			   "(a model execution keeps no page contents and maps 3 files, the "
			   "stub 1)\n", n1, MED(post, execs_per_s) / MED(live, execs_per_s));
	print_sim_verdict(f, r);
}

static json_t *sample_json(const struct ec_sample *s)
{
	json_t *j = json_object();

	json_set_double(j, "execs_per_s", s->execs_per_s);
	json_set_u64(j, "execs", s->execs);
	json_set_double(j, "hold_p50_ns", s->hold_p50_ns);
	json_set_double(j, "hold_p99_ns", s->hold_p99_ns);
	json_set_double(j, "hold_mean_ns", s->hold_mean_ns);
	json_set_double(j, "wait_p50_ns", s->wait_p50_ns);
	json_set_double(j, "wait_p99_ns", s->wait_p99_ns);
	json_set_double(j, "wait_per_exec_ns", s->wait_per_exec_ns);
	json_set_double(j, "sections_per_exec", s->sections_per_exec);
	json_set_double(j, "ceiling_execs_per_s", s->ceiling);
	json_set_double(j, "hot_sections_per_exec", s->hot_sections_per_exec);
	json_set_double(j, "hot_hold_ns", s->hot_hold_ns);
	if (s->hot_file >= 0)
		json_set_str(j, "hot_file", images[s->hot_file].path);
	return j;
}

static void ec_print(FILE *f, const struct bench_run *r)
{
	print_table(f, r);
	print_verdict(f, r);
}

static void ec_json(json_t *doc, const struct bench_run *br)
{
	const struct ec_opts *o = br->opts;
	const struct ec_result *res = br->res;
	json_t *meta = bench_doc_meta(doc);

	json_set_double(meta, "duration_s", o->duration_s);
	json_set_u64(meta, "exec_chain", EXEC_CHAIN);
	if (br->c->model)
		json_set_double(meta, "clock_read_ns", res->clock_ns);
	if (br->c->sim) {
		json_t *sim = json_object();

		json_set_u64(sim, "cpus", br->c->cpus);
		json_set_u64(sim, "seed", br->c->sim_seed);
		if (!isnan(res->fit_live_ns))
			json_set_double(sim, "exec_fit_live_ns", res->fit_live_ns);
		json_set_new(meta, "sim", sim);
		json_set_new(doc, "sim_costs", bench_sim_costs_json(&res->simcosts));
	}
	for (unsigned int i = 0; i < res->nr; i++) {
		const struct ec_row *r = &res->rows[i];
		json_t *row, *per;

		if (!r->nr)
			continue;
		row = bench_doc_row(doc, target_kind_name(r->target));
		json_set_str(row, "order", order_name(r->target, r->order));
		json_set_bool(row, "sim", r->sim);
		if (r->sim)
			json_set_u64(row, "cpus", br->c->cpus);
		json_set_u64(row, "threads", r->threads);
		json_set_double(row, "execs_per_s", MED(r, execs_per_s));
		json_set_double(row, "hold_p50_ns", MED(r, hold_p50_ns));
		json_set_double(row, "hold_p99_ns", MED(r, hold_p99_ns));
		json_set_double(row, "hold_mean_ns", MED(r, hold_mean_ns));
		json_set_double(row, "wait_p50_ns", MED(r, wait_p50_ns));
		json_set_double(row, "wait_p99_ns", MED(r, wait_p99_ns));
		json_set_double(row, "wait_per_exec_ns", MED(r, wait_per_exec_ns));
		json_set_double(row, "sections_per_exec", MED(r, sections_per_exec));
		json_set_double(row, "ceiling_execs_per_s", MED(r, ceiling));
		json_set_double(row, "hot_sections_per_exec", MED(r, hot_sections_per_exec));
		json_set_double(row, "hot_hold_ns", MED(r, hot_hold_ns));
		per = bench_doc_samples(row, "per_sample");
		for (unsigned int k = 0; k < r->nr; k++)
			json_push_new(per, sample_json(&r->s[k]));
	}
}

/* Left: executions/s against threads; right: hold p50/p99 against threads. */
static int ec_plot(struct bench_plot *p, const struct bench_run *r)
{
	static const char *const colour[] = { "#1f77b4", "#d62728", "#2ca02c", "#1f77b4",
					      "#d62728" };
	const struct ec_opts *o = r->opts;
	const struct ec_result *res = r->res;
	const struct ec_row *rows = res->rows;
	unsigned int nr = res->nr;
	FILE *d = p->data, *s = p->script;

	/*
	 * Block k (0 post, 1 pre, 2 live, 3 sim post, 4 sim pre): threads
	 * execs/s hold_p50 hold_p99 ceiling.
	 */
	for (int k = 0; k < 5; k++) {
		const struct ec_series *se = &series[k];

		fprintf(d, "# %s%s\n", se->sim ? "sim " : "", order_name(se->target, se->order));
		for (unsigned int i = 0; i < nr; i++)
			if (in_series(&rows[i], se))
				fprintf(d, "%u %.6g %.6g %.6g %.6g\n", rows[i].threads,
					MED(&rows[i], execs_per_s), MED(&rows[i], hold_p50_ns),
					MED(&rows[i], hold_p99_ns), MED(&rows[i], ceiling));
		fprintf(d, "1 NaN NaN NaN NaN\n\n\n");
	}
	fprintf(s, "set multiplot layout 1,2 title 'exec-churn (seed 001): i_mmap_rwsem under "
		   "exec churn, %g s x %u samples, kernel %s'\n", o->duration_s, r->c->samples,
		bench_kernel());
	fprintf(s, "set grid\nset logscale x 2\nset key top left font ',9'\n"
		   "set xlabel 'threads (model) / parallel exec loops (live)'\n"
		   "set ylabel 'executions per second'\nset logscale y\n"
		   "set title 'throughput, and each order''s ceiling for one file'\nplot ");
	for (int k = 0; k < 5; k++) {
		bench_plot_data(p);
		fprintf(s, " index %d using 1:2 with linespoints lw 2 pt %d lc rgb '%s' "
			   "title '%s %s', ", k, series[k].sim ? 5 : 7, colour[k],
			series[k].sim ? "sim" : target_kind_name(series[k].target),
			order_name(series[k].target, series[k].order));
	}
	for (int k = 0; k < 2; k++) {
		bench_plot_data(p);
		fprintf(s, " index %d using 1:5 with lines dt 2 lw 2 lc rgb '%s' "
			   "title 'ceiling %s'%s", k, colour[k], order_name(series[k].target, series[k].order),
			k ? "\n" : ", ");
	}
	fprintf(s, "set ylabel 'ns'\nset title 'i_mmap_rwsem write hold: p50 (solid), p99 "
		   "(dashed)'\nplot ");
	for (int k = 0; k < 2; k++) {
		bench_plot_data(p);
		fprintf(s, " index %d using 1:3 with linespoints lw 2 pt 7 lc rgb '%s' "
			   "title '%s p50', ", k, colour[k], order_name(series[k].target, series[k].order));
		bench_plot_data(p);
		fprintf(s, " index %d using 1:4 with linespoints dt 2 lw 2 pt 5 lc rgb '%s' "
			   "title '%s p99'%s", k, colour[k], order_name(series[k].target, series[k].order), k ? "\n" : ", ");
	}
	fprintf(s, "unset multiplot\n");
	return 0;
}

/* What one CLOCK_MONOTONIC read costs here (the median of many pairs). */
static double clock_read_ns(void)
{
	double v[201];

	for (int i = 0; i < 201; i++) {
		uint64_t a = vml_now_ns(), b = vml_now_ns();

		v[i] = (double)(b - a);
	}
	return stat_median(v, 201);
}

/*
 * The simulated rows' table: from --sim-costs, or measured now with exec_ns
 * fitted to a live loop. Return: 0 or -errno (one line on stderr says why).
 */
static int sim_setup(struct bench_run *br)
{
	const struct bench_common *c = br->c;
	struct ec_result *res = br->res;
	int err;

	if (!c->sim_costs)
		bench_progress(c->quiet, "exec-churn: measuring the simulated machine's charges "
					 "on the live kernel");
	err = bench_sim_costs_get("vmalock bench exec-churn", c->sim_costs, NULL, &res->simcosts);
	bench_progress_done(c->quiet);
	if (err)
		return err;
	if (c->sim_costs && !res->simcosts.exec_ns) {
		fprintf(stderr, "vmalock bench exec-churn: --sim-costs %s: no sim_costs.exec_ns (what "
				"an execution costs besides the model's charges): use an earlier "
				"bench exec-churn --cpus run's --json, or measure the table now "
				"without --sim-costs\n", c->sim_costs);
		return -EINVAL;
	}
	if (c->sim_costs)
		return 0;
	bench_progress(c->quiet, "exec-churn: fitting exec_ns: one live `dash -c :` loop");
	err = fit_exec_ns(br->opts, &res->simcosts, &res->fit_live_ns);
	bench_progress_done(c->quiet);
	if (err)
		fprintf(stderr, "vmalock bench exec-churn: fitting exec_ns to a live `dash -c :` "
				"loop: %s (give --sim-costs FILE)\n", strerror(-err));
	return err;
}

static int ec_run(struct bench_run *br)
{
	const struct ec_opts *o = br->opts;
	const struct bench_common *c = br->c;
	struct host_model_switches sw = host_model_switches();
	struct ec_result *res = vml_zalloc(sizeof(*res));
	char stub[4096];
	int err;

	br->res = res;
	if (res)
		res->rows = vml_zalloc((5 * o->threads.nr) * sizeof(*res->rows));
	if (!res || !res->rows) {
		fprintf(stderr, "vmalock: bench exec-churn: out of memory\n");
		return -ENOMEM;
	}
	res->fit_live_ns = NAN;
	if (c->model)
		res->clock_ns = clock_read_ns();
	if (c->sim) {
		err = sim_setup(br);
		if (err)
			return err;
	}
	for (int order = VML_I_MMAP_POST; c->model && order <= VML_I_MMAP_PRE; order++) {
		if (sw.i_mmap_order_set && sw.i_mmap_order != (enum vml_i_mmap_order)order)
			continue;
		err = model_create(order, NULL, 0, &res->models[order]);
		if (err) {
			fprintf(stderr, "vmalock: bench exec-churn: model: %s\n", strerror(-err));
			return err;
		}
		res->have[order] = true;
		for (unsigned int t = 0; t < o->threads.nr; t++)
			res->rows[res->nr++] = (struct ec_row){ .target = TARGET_MODEL, .order = order,
								.threads = (unsigned int)o->threads.v[t] };
	}
	if (c->live) {
		if (helper_exe("vmalock-exec-stub", stub, sizeof(stub))) {
			fprintf(stderr, "vmalock: bench exec-churn: vmalock-exec-stub not found "
					"(beside vmalock or in libexec/vmalock)\n");
			return -ENOENT;
		}
		for (unsigned int t = 0; t < o->threads.nr; t++)
			res->rows[res->nr++] = (struct ec_row){ .target = TARGET_LIVE,
								.threads = (unsigned int)o->threads.v[t] };
	}
	for (int order = VML_I_MMAP_POST; c->sim && order <= VML_I_MMAP_PRE; order++) {
		if (sw.i_mmap_order_set && sw.i_mmap_order != (enum vml_i_mmap_order)order)
			continue;
		for (unsigned int t = 0; t < o->threads.nr; t++)
			res->rows[res->nr++] = (struct ec_row){ .target = TARGET_MODEL, .sim = true,
								.order = order,
								.threads = (unsigned int)o->threads.v[t] };
	}
	for (unsigned int i = 0; i < res->nr; i++) {
		res->rows[i].s = vml_zalloc(c->samples * sizeof(*res->rows[i].s));
		if (!res->rows[i].s) {
			fprintf(stderr, "vmalock: bench exec-churn: out of memory\n");
			return -ENOMEM;
		}
	}
	/* Samples in turn over every row, so that drift in the machine's load hits all alike. */
	atomic_store(&vml_i_mmap_time_hook, time_section);
	err = 0;
	for (unsigned int smp = 0; smp < c->samples && !err; smp++) {
		for (unsigned int i = 0; i < res->nr && !err; i++) {
			struct ec_row *r = &res->rows[i];

			const char *kind = r->sim ? "sim" : target_kind_name(r->target);

			bench_progress(c->quiet, "exec-churn: %s %s, %u thread(s), sample %u/%u",
				       kind, order_name(r->target, r->order), r->threads, smp + 1,
				       c->samples);
			if (r->sim)
				err = sim_sample(o, r->order, &res->simcosts, c->cpus, r->threads,
						 c->sim_seed * 0xd1b54a32d192ed03ULL + smp, &r->s[smp]);
			else if (r->target == TARGET_LIVE)
				err = live_sample(o, stub, r->threads, &r->s[smp]);
			else
				err = model_sample(o, &res->models[r->order], r->threads, &r->s[smp]);
			if (err) {
				bench_progress_done(c->quiet);
				fprintf(stderr, "vmalock: bench exec-churn: %s, %u threads: %s\n", kind,
					r->threads, strerror(-err));
				break;
			}
			r->nr = smp + 1;
		}
	}
	atomic_store(&vml_i_mmap_time_hook, NULL);
	bench_progress_done(c->quiet);
	return err;
}

static void ec_free(struct bench_run *br)
{
	struct ec_result *res = br->res;

	if (!res)
		return;
	for (unsigned int i = 0; i < res->nr; i++)
		vml_free(res->rows[i].s);
	vml_free(res->rows);
	for (int k = 0; k < 2; k++)
		if (res->have[k])
			model_destroy(&res->models[k]);
	vml_free(res);
}

static void ec_defaults(void *opts)
{
	struct ec_opts *o = opts;

	*o = (struct ec_opts){
		.threads = { .v = { 1, 2, 4, 8, 16, 32, 64 }, .nr = 7 },
		.duration_s = 3,
	};
}

static const struct cli_opt ec_opts_table[] = {
	{ "--threads", "N[,N...]", cli_set_ulist, offsetof(struct ec_opts, threads), 1, 1024, NULL,
	  "model workers (real threads or simulated tasks) and live\n"
	  "exec loops, one row each [1,2,4,8,16,32,64]" },
	{ "--duration", "SECONDS", cli_set_seconds, offsetof(struct ec_opts, duration_s), 0.001,
	  86400, NULL, "each sample's run [3]" },
	CLI_OPT_END,
};

const struct bench_scenario bench_exec_churn = {
	.name = "exec-churn",
	.question = "Seed 001: how long is a file's i_mmap_rwsem held per exec, with the new "
		    "mapping's tree store inside the lock and outside it, and what exec rate "
		    "saturates it?",
	.rows = "a target, i_mmap order and thread count: executions a second, the write "
		"sections' hold and wait, and the ceiling one file's lock sets",
	.about = "Threads build and tear down exec-like address spaces of the same files,\n"
		 "for both i_mmap orders (--i-mmap-order picks one); beside them parallel\n"
		 "exec loops on the live kernel. --cpus N: the same threads as tasks of a\n"
		 "simulated machine (worker i on CPU i while they are no more than N),\n"
		 "charged what the live kernel spends: the i_mmap sections' work, the\n"
		 "tree store, and the rest of an execution fitted to a live `dash -c :`\n"
		 "loop (or a table's: --sim-costs FILE with exec_ns).",
	.opts = ec_opts_table,
	.opts_size = sizeof(struct ec_opts),
	.defaults = ec_defaults,
	.run = ec_run,
	.print = ec_print,
	.json = ec_json,
	.plot = ec_plot,
	.free = ec_free,
	.sim = true,
};
