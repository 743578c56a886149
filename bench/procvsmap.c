// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * procvsmap.c - `vmalock bench proc-vs-map`: Paul McKenney's
 * proc-mmap_sem-test (docs/kernel.md §10) on the model and on the live kernel.
 *
 * One sample: a mapper maps a populated private anonymous region, then for
 * the duration picks a random page and, with probability 1/2, maps one
 * page over it (MAP_FIXED | MAP_POPULATE) or unmaps it, timing every call
 * and sleeping 10 us between calls. Meanwhile N readers read a /proc view
 * of the mapper's address space in a loop, 4096 bytes per read(), at
 * nice 15 on the other CPU, and optional hogs burn that CPU at normal
 * priority. What is measured is the mapper's call latency: how long a
 * writer of the address space waits behind the readers.
 *
 * On the model the mapper and the readers are threads on one vml_mm and
 * the readers use the row's lock policy. On the live kernel the mapper is
 * the vmalock-child process in mapper mode (it times its own system calls;
 * no IPC is in the figures) and the readers are our threads reading
 * /proc/<child>/<view>. Each sample starts from a fresh address space; the
 * sample's seed is the same for every row, so every row replays the same
 * sequence of calls. Rows take their samples in turn (round-robin).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <time.h>

#include "host/host.h"
#include "pvm.h"
#include "pvm_trace.h"
#include "sync/atomic.h"
#include "sync/trace_emit.h"
#include "util/alloc.h"
#include "util/clock.h"

/* readers and hogs running before the mapper starts */
#define SETTLE_NS (100 * NSEC_PER_MSEC)
#define PAGE_SIZE_BYTES 4096UL

/* One sample of one row: the threads' shared state. */
struct pvm_run {
	const struct pvm_opts *o;
	enum vml_view view;
	enum target_kind kind;
	enum vml_lock_policy lock;	/* model */
	enum vml_steal_policy steal;	/* model */
	int mapper_cpu, reader_cpu;
	unsigned int busy_cpus;		/* simulated: readers and hogs on the last busy_cpus CPUs */
	bool sim;			/* a sample on the simulated machine */
	unsigned int cpus;		/* ...of this many CPUs */
	const struct bench_sim_costs *simcosts;	/* ...charged these */
	atomic_uint next_reader;	/* readers number themselves */
	uint64_t sim_seed;		/* ...the simulated machine's, for this sample */
	uint64_t seed;
	struct vml_mm *mm;		/* model */
	uint64_t record_ns;		/* model readers' calibration charge */
	uint64_t call_ns;		/* ...per read() call, outside the lock */
	uint64_t page_ns;		/* ...per page a walk covers, inside it */
	bool probe_walk;		/* live: time the region's walk before the readers start */
	double live_record_ns;		/* live: the calibration's kernel cost per VMA */
	double live_page_ns;		/* live: the probe's result (live_probe_page_ns) */
	struct walk_sampler *walk;	/* live, probe_walk: each reader's big read()s, [readers] */
	double live_run_page_ns;	/* live: their median a page; 0: none */
	unsigned long region;		/* model */
	unsigned long layout_vmas;	/* --layout: its VMAs found in the sample's mm */
	pid_t pid;			/* live */
	struct lat_hist *hist;		/* the mapper's calls */
	uint64_t fails;			/* model mapper: failed calls */
	atomic_bool stop;		/* readers: stop now */
	atomic_uint ready;		/* readers that have opened their view */
	atomic_ulong passes;		/* whole views read */
	atomic_int error;		/* a reader's first error */
	const struct bench_mirror *mirror;	/* model: the live mapper's own mappings */
	/* --trace */
	struct pvm_tracer *tr;		/* NULL: not traced */
	struct pvm_dyn *dyn;		/* the row's */
	pid_t *tids;			/* the readers' thread ids, [ntids] */
	atomic_uint ntids;
};

/* Reader @idx's CPU: the readers' CPU, or one of the busy CPUs in turn (simulated rows). */
static int reader_cpu_of(const struct pvm_run *r, unsigned int idx)
{
	if (r->sim && r->busy_cpus)
		return (int)(r->cpus - r->busy_cpus + idx % r->busy_cpus);
	return r->reader_cpu;
}

static void *reader_main(void *arg)
{
	struct pvm_run *r = arg;
	unsigned int idx = fetch_add_relaxed(&r->next_reader, 1);
	struct view_reader vr;
	int ret;

	bench_pin_thread(reader_cpu_of(r, idx));
	bench_nice_thread(15);
	if (r->tids)
		r->tids[fetch_add_relaxed(&r->ntids, 1)] = vml_gettid();
	if (r->kind == TARGET_MODEL) {
		ret = view_reader_open_model(&vr, r->mm, r->view, r->lock);
		if (!ret && vr.r && r->record_ns)
			ret = vml_reader_set_record_cost(vr.r, r->record_ns);
		if (!ret && vr.r && r->call_ns)
			ret = vml_reader_set_call_cost(vr.r, r->call_ns);
		if (!ret && vr.r && r->page_ns)
			ret = vml_reader_set_page_cost(vr.r, r->page_ns);
	} else {
		ret = view_reader_open_live(&vr, r->pid, r->view);
		if (!ret && r->walk)
			vr.walk = &r->walk[idx];
	}
	if (ret) {
		int zero = 0;

		atomic_compare_exchange_strong(&r->error, &zero, ret);
		/* pairs with start_readers()'s load_acquire(&r->ready): the error is set */
		fetch_add_release(&r->ready, 1);
		return NULL;
	}
	fetch_add_release(&r->ready, 1);	/* pairs with start_readers()'s load_acquire */
	/* pairs with stop_readers()'s store_release(&r->stop): nothing rides on it */
	while (!load_acquire(&r->stop)) {
		long n = view_reader_pass(&vr, &r->stop);

		if (n < 0) {
			int zero = 0;

			atomic_compare_exchange_strong(&r->error, &zero, (int)n);
			break;
		}
		fetch_add_relaxed(&r->passes, 1);
	}
	view_reader_close(&vr);
	return NULL;
}

static int start_readers(struct pvm_run *r, unsigned int n, struct plat_thread *th,
			 unsigned int *started)
{
	int ret;

	for (*started = 0; *started < n; (*started)++) {
		ret = plat_thread_create(&th[*started], &(struct plat_thread_opts){ .cpu = -1,
					 .name = "reader" }, reader_main, r);
		if (ret)
			return ret;
	}
	/*
	 * Every reader has its view open (or failed) before the mapper starts:
	 * pairs with reader_main()'s fetch_add_release(&r->ready).
	 */
	while (load_acquire(&r->ready) < n)
		bench_sleep_ns(100 * NSEC_PER_USEC);
	return atomic_load(&r->error);
}

static void stop_readers(struct pvm_run *r, struct plat_thread *th, unsigned int n)
{
	store_release(&r->stop, true);	/* pairs with reader_main()'s load_acquire(&r->stop) */
	for (unsigned int i = 0; i < n; i++)
		plat_thread_join(&th[i]);
}

/* Hogs: on the readers' CPU, or --busy of them on each busy CPU (simulated rows). */
#define MAX_HOG_CPUS 64

static int hogs_start(struct pvm_run *r, struct bench_hogs *hogs, unsigned int *nr)
{
	unsigned int n = r->sim && r->busy_cpus ? VML_MIN(r->busy_cpus, MAX_HOG_CPUS) : 1;
	int ret = 0;

	for (*nr = 0; *nr < n && !ret; (*nr)++) {
		int cpu = r->sim && r->busy_cpus ? (int)(r->cpus - r->busy_cpus + *nr) : r->reader_cpu;

		ret = bench_hogs_start(&hogs[*nr], r->o->busy, cpu, r->o->busyduration_ms);
	}
	if (ret)
		(*nr)--;
	return ret;
}

static void hogs_stop(struct bench_hogs *hogs, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		bench_hogs_stop(&hogs[i]);
}

static const char *errstr(int err)
{
	return strerror(err < 0 ? -err : err);
}

/* One sample on the model. Return: 0 or -errno (printed). */
static int model_sample(struct pvm_run *r, unsigned int nreaders, uint64_t *vmas,
			uint64_t *fallbacks)
{
	struct vml_sys_config cfg;	/* this host's (or --profile's) */
	struct vml_mm_stats st;
	struct bench_hogs hogs[MAX_HOG_CPUS];
	struct bench_mapper m;
	struct vml_sys *sys;
	struct plat_thread *th, mapper;
	unsigned int started = 0, nhogs = 0;
	int ret = host_current_config(0, &cfg);

	if (ret)
		return ret;
	cfg.kernel_transients = r->o->kernel_transients;
	cfg.mmap_lock_steal = r->steal;
	if (r->sim)
		cfg.costs = r->simcosts->kernel;
	th = vml_zalloc((nreaders + 1) * sizeof(*th));
	if (!th)
		return -ENOMEM;
	ret = vml_sys_create(&cfg, &sys);
	if (ret)
		goto out_free;
	ret = vml_mm_create(sys, &r->mm);
	if (ret)
		goto out_sys;
	/* Before the region, which goes top-down below them as the live child's does. */
	ret = bench_mirror_apply(r->mirror, sys, r->mm);
	if (ret) {
		fprintf(stderr, "vmalock bench: model: copying the live mapper's own mappings: %s\n",
			errstr(ret));
		goto out_mm;
	}
	/* After them, as in the live child; it prints its own failure. */
	ret = r->o->layout ? bench_layout_apply_mm(r->o->layout, sys, r->mm, &r->layout_vmas) : 0;
	if (ret)
		goto out_mm;
	ret = vml_mmap(r->mm, r->o->layout ? r->o->layout->region : 0, r->o->mapper.mb << 20,
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE |
		       (r->o->layout ? MAP_FIXED_NOREPLACE : 0), NULL, 0, &r->region);
	if (ret) {
		fprintf(stderr, "vmalock bench: model: mapping the %lu MiB region: %s\n",
			r->o->mapper.mb, errstr(ret));
		goto out_mm;
	}
	ret = start_readers(r, nreaders, th, &started);
	if (ret) {
		fprintf(stderr, "vmalock bench: model: opening %s: %s\n", bench_view_name(r->view),
			errstr(ret));
		goto out_readers;
	}
	ret = hogs_start(r, hogs, &nhogs);
	if (ret)
		goto out_hogs;
	m = (struct bench_mapper){
		.mm = r->mm, .region = r->region, .mb = r->o->mapper.mb, .seed = r->seed,
		.duration_s = r->o->mapper.duration_s, .cpu = r->mapper_cpu,
		.rcu_anywhere = r->o->mapper.rcu == 1, .hist = r->hist,
	};
	bench_sleep_ns(SETTLE_NS);
	pvm_trace_model_start(r->tr, r->sim);
	ret = plat_thread_create(&mapper, &(struct plat_thread_opts){ .cpu = -1, .name = "mapper" },
				 bench_model_mapper_main, &m);
	if (!ret)
		plat_thread_join(&mapper);
	r->fails = m.fails;
	if (r->tr && !ret && !vml_mm_stats(r->mm, &st))
		ret = pvm_trace_model_end(r->tr, r->dyn, (const void *)r->mm, m.tid, r->tids,
					  load_relaxed(&r->ntids), r->o->mapper.duration_s,
					  st.mmap_handoffs);
out_hogs:
	hogs_stop(hogs, nhogs);
out_readers:
	stop_readers(r, th, started);
	if (!ret && atomic_load(&r->error)) {
		ret = atomic_load(&r->error);
		fprintf(stderr, "vmalock bench: model: reading %s: %s\n", bench_view_name(r->view),
			errstr(ret));
	}
	if (!ret && !vml_mm_stats(r->mm, &st)) {
		*vmas = st.map_count;
		*fallbacks = st.proc_mmap_fallbacks;
	}
out_mm:
	vml_mm_destroy(r->mm);
	r->mm = NULL;
out_sys:
	vml_sys_destroy(sys);
out_free:
	vml_free(th);
	return ret;
}

/* One sample on the simulated machine: model_sample() as its first task. */
struct sim_sample {
	struct pvm_run *r;
	unsigned int nreaders;
	uint64_t vmas, fallbacks;
	int ret;
};

static void *sim_sample_main(void *arg)
{
	struct sim_sample *s = arg;

	s->ret = model_sample(s->r, s->nreaders, &s->vmas, &s->fallbacks);
	return NULL;
}

static int sim_sample(struct pvm_run *r, unsigned int nreaders, uint64_t *vmas,
		      uint64_t *fallbacks, struct sim_stats *total)
{
	struct sim_sample s = { .r = r, .nreaders = nreaders };
	/* one seed per sample, from the run's and the sample's own */
	struct sim_config cfg = bench_sim_config(r->simcosts, r->cpus, r->sim_seed);
	struct sim_stats st;
	int ret;

	r->mapper_cpu = 0;
	r->reader_cpu = r->cpus > 1 ? 1 : 0;
	ret = sim_run(&cfg, sim_sample_main, &s, &st);
	if (ret) {
		fprintf(stderr, "vmalock bench: simulated machine of %u CPUs: %s\n", r->cpus,
			errstr(ret));
		return ret;
	}
	total->events += st.events;
	total->switches += st.switches;
	total->handoffs += st.handoffs;
	total->virtual_ns += st.virtual_ns;
	total->wall_ns += st.wall_ns;
	*vmas = s.vmas;
	*fallbacks = s.fallbacks;
	return s.ret;
}

/*
 * What walking this live mapper's region costs the kernel per anonymous
 * page. On our VMs the same walk of a fresh 128 MiB region takes one process
 * 0.4 ms and the next 7 ms (docs/findings/2026-12-01-page-walk-cost.md),
 * so the calibration's layouts, in a process of their own, need not cost
 * what the samples' mappers do. Uncontended whole passes before the
 * readers start; the fastest, less its records' cost, over the region's
 * pages.
 */
#define PROBE_PASSES 3

static int live_probe_page_ns(struct pvm_run *r, double *out)
{
	uint64_t best = UINT64_MAX;
	struct view_reader vr;
	cpu_set_t was;
	long nvmas;
	int ret = view_reader_open_live(&vr, r->pid, r->view);

	if (ret)
		return ret;
	/* on the readers' CPU, as they will read */
	if (pthread_getaffinity_np(pthread_self(), sizeof(was), &was))
		CPU_ZERO(&was);
	bench_pin_thread(r->reader_cpu);
	for (int i = 0; i < PROBE_PASSES && !ret; i++) {
		uint64_t t0 = vml_now_ns();
		long n = view_reader_pass(&vr, NULL);
		uint64_t el = vml_now_ns() - t0;

		if (n < 0)
			ret = (int)n;
		else if (el < best)
			best = el;
	}
	if (CPU_COUNT(&was))
		pthread_setaffinity_np(pthread_self(), sizeof(was), &was);
	view_reader_close(&vr);
	if (ret)
		return ret;
	nvmas = bench_live_vma_count(r->pid);
	/* the layout's resident pages are walked too (anonymous or not: one rate for all) */
	*out = ((double)best - (double)VML_MAX(nvmas, 0L) * r->live_record_ns) /
	       (double)(r->o->mapper.mb * (1024 * 1024 / PAGE_SIZE_BYTES) +
			(r->o->layout ? r->o->layout->pages : 0));
	if (*out < 0)
		*out = 0;
	return 0;
}

/* The median cost a page over the readers' big read()s (walk_sampler); 0: none. */
static double walk_median(const struct walk_sampler *ws, unsigned int nreaders)
{
	unsigned int n = 0, k = 0;
	double *v, med;

	for (unsigned int i = 0; i < nreaders; i++)
		n += ws[i].n;
	v = n ? vml_malloc(n * sizeof(*v)) : NULL;
	if (!v)
		return 0;
	for (unsigned int i = 0; i < nreaders; i++)
		for (unsigned int j = 0; j < ws[i].n; j++)
			v[k++] = ws[i].ns_per_page[j];
	med = stat_median(v, n);
	vml_free(v);
	return med;
}

/* One sample on the live kernel. Return: 0 or -errno (printed). */
static int live_sample(struct pvm_run *r, unsigned int nreaders, uint64_t *vmas)
{
	struct child_lat_rep *rep = vml_malloc(sizeof(*rep));
	unsigned int started = 0;
	struct bench_hogs hogs;
	struct target *t = NULL;
	struct plat_thread *th = vml_zalloc((nreaders + 1) * sizeof(*th));
	long n;
	int ret = -ENOMEM;

	if (!rep || !th)
		goto out;
	ret = bench_live_mapper_start(r->o->mapper.mb, r->seed, r->mapper_cpu, r->o->layout,
				      &r->layout_vmas, rep, &t);
	if (ret)
		goto out;
	r->pid = target_pid(t);
	if (r->probe_walk) {
		ret = live_probe_page_ns(r, &r->live_page_ns);
		if (ret) {
			fprintf(stderr, "vmalock bench: live: timing a pass of /proc/%ld/%s: %s\n",
				(long)r->pid, bench_view_name(r->view), errstr(ret));
			goto out;
		}
	}
	ret = start_readers(r, nreaders, th, &started);
	if (ret) {
		fprintf(stderr, "vmalock bench: live: opening /proc/%ld/%s: %s\n", (long)r->pid,
			bench_view_name(r->view), errstr(ret));
		goto out_readers;
	}
	ret = bench_hogs_start(&hogs, r->o->busy, r->reader_cpu, r->o->busyduration_ms);
	if (ret)
		goto out_readers;
	bench_sleep_ns(SETTLE_NS);
	ret = pvm_trace_live_start(r->tr, r->pid, r->tids, load_relaxed(&r->ntids));
	if (!ret)
		ret = target_live_mapper_run(t, (uint64_t)(r->o->mapper.duration_s * NSEC_PER_SEC),
					     BENCH_MAPPER_SLEEP_NS, rep);
	if (!ret)
		ret = pvm_trace_live_end(r->tr, r->dyn, r->pid, r->tids, load_relaxed(&r->ntids),
					 r->o->mapper.duration_s);
	bench_hogs_stop(&hogs);
	if (ret)
		fprintf(stderr, "vmalock bench: live: mapper: %s\n", errstr(ret));
out_readers:
	stop_readers(r, th, started);
	if (!ret && atomic_load(&r->error)) {
		ret = atomic_load(&r->error);
		fprintf(stderr, "vmalock bench: live: reading /proc/%ld/%s: %s\n", (long)r->pid,
			bench_view_name(r->view), errstr(ret));
	}
	if (!ret && r->walk)
		r->live_run_page_ns = walk_median(r->walk, nreaders);
	if (!ret) {
		*r->hist = rep->hist;
		r->fails = rep->nfails;
		n = bench_live_vma_count(r->pid);
		*vmas = n > 0 ? (uint64_t)n : 0;
	}
out:
	target_destroy(t);
	vml_free(th);
	vml_free(rep);
	return ret;
}

static void row_summarise(struct pvm_row *row)
{
	unsigned int n = row->nr;

	row->p50_us = STAT_OF(MEDIAN, row->s, n, p50_us);
	row->p99_us = STAT_OF(MEDIAN, row->s, n, p99_us);
	row->avg_us = STAT_OF(MEDIAN, row->s, n, avg_us);
	row->max_us = STAT_OF(MEDIAN, row->s, n, max_us);
	row->max_min_us = STAT_OF(MIN, row->s, n, max_us);
	row->max_worst_us = STAT_OF(MAX, row->s, n, max_us);
	row->ops = STAT_OF(MEDIAN, row->s, n, ops);
	row->vmas = STAT_OF(MEDIAN, row->s, n, vmas);
	row->passes = STAT_OF(MEDIAN, row->s, n, passes);
	row->fallbacks = STAT_OF(MEDIAN, row->s, n, fallbacks);
	row->layout_vmas = STAT_OF(MEDIAN, row->s, n, layout_vmas);
}

/* Round @i's live sample with @readers readers, if it timed its mapper's walk. */
static const struct pvm_sample *paired_live_sample(const struct pvm_result *res,
						   unsigned int readers, unsigned int i)
{
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct pvm_row *row = &res->rows[k];

		if (row->target == TARGET_LIVE && row->readers == readers && row->nr > i &&
		    row->s[i].live_page_ns > 0)
			return &row->s[i];
	}
	return NULL;
}

/* Sample @i of @row. Return: 0 or -errno (printed). */
static int run_sample(struct pvm_result *res, struct pvm_row *row, unsigned int i,
		      unsigned int done, unsigned int total)
{
	const struct pvm_opts *o = res->o;
	const struct bench_common *c = res->c;
	struct pvm_sample *s = &row->s[i];
	struct pvm_run r = {
		.o = o,
		.view = res->view,
		.kind = row->target,
		.lock = row->lock,
		.steal = row->steal,
		.tr = res->tracer,
		.mirror = res->mirror,
		.dyn = row->dyn,
		.mapper_cpu = res->mapper_cpu,
		.reader_cpu = res->reader_cpu,
		.seed = o->mapper.seed + i * 0x9e3779b97f4a7c15ULL,
		.record_ns = (uint64_t)res->record_ns,
		.call_ns = (uint64_t)res->call_ns,
		.page_ns = (uint64_t)res->page_ns,
		.sim = row->sim,
		.cpus = row->cpus,
		.busy_cpus = o->busy_cpus,
		.simcosts = &res->simcosts,
	};
	uint64_t vmas = 0, fallbacks = 0;
	int ret;

	if (row->sim) {
		/* the kernel's whole costs: nothing of the model's own speed counts */
		r.record_ns = res->simcosts.record_ns;
		r.call_ns = res->simcosts.call_ns;
		r.page_ns = bench_view_walks_pages(res->view) ? res->simcosts.page_ns : 0;
		r.sim_seed = c->sim_seed * 0xd1b54a32d192ed03ULL + i;
		/*
		 * The walk's cost is the process's, not the host's
		 * (docs/findings/2026-12-01-page-walk-cost.md): as the model's
		 * rows, a round's simulated samples are charged what its live
		 * sample's mapper timed - whole, as every simulated charge.
		 */
		if (res->paired_page_ns) {
			const struct pvm_sample *ls = paired_live_sample(res, row->readers, i);

			/*
			 * Its readers' own big read()s when they had any: the walk
			 * with the mapper at work costs more than the probe's
			 * uncontended passes before it (the note of 2026-12-04).
			 */
			if (ls)
				r.page_ns = (uint64_t)(ls->live_run_page_ns > 0 ?
						       ls->live_run_page_ns : ls->live_page_ns);
		}
	} else if (res->paired_page_ns && row->target == TARGET_LIVE) {
		r.probe_walk = true;
		r.live_record_ns = res->cal.live_ns;
		/* only the simulated rows take it; the model's keep the probe's */
		if (res->c->sim) {
			r.walk = vml_zalloc(row->readers * sizeof(*r.walk));
			if (!r.walk)
				return -ENOMEM;
			for (unsigned int k = 0; k < row->readers; k++)
				r.walk[k].record_ns = res->cal.live_ns;
		}
	} else if (res->paired_page_ns) {
		const struct pvm_sample *ls = paired_live_sample(res, row->readers, i);

		if (ls)
			r.page_ns = (uint64_t)VML_MAX(ls->live_page_ns - res->cal.model_page_ns, 0.0);
	}
	atomic_init(&r.stop, false);
	atomic_init(&r.ready, 0);
	atomic_init(&r.passes, 0);
	atomic_init(&r.error, 0);
	atomic_init(&r.ntids, 0);
	atomic_init(&r.next_reader, 0);
	if (r.tr) {
		r.tids = vml_zalloc((row->readers + 1) * sizeof(*r.tids));
		if (!r.tids)
			return -ENOMEM;
	}
	s->hist = r.hist = lat_hist_new();
	if (!r.hist) {
		vml_free(r.tids);
		vml_free(r.walk);
		return -ENOMEM;
	}
	/* a line saying what runs now, where it is rewritten by the result */
	bench_progress(c->quiet || !bench_progress_tty(),
		       "proc-vs-map [%u/%u] %s %s %s readers=%u sample %u/%u ...", done, total,
		       pvm_target_label(row), pvm_lock_label(row), pvm_steal_label(row),
		       row->readers, i + 1, c->samples);
	pvm_trace_label(r.tr, row->sim ? "sim" : target_kind_name(row->target), pvm_lock_label(row),
			pvm_steal_label(row));
	if (row->sim)
		ret = sim_sample(&r, row->readers, &vmas, &fallbacks, &res->simstats);
	else if (row->target == TARGET_MODEL)
		ret = model_sample(&r, row->readers, &vmas, &fallbacks);
	else
		ret = live_sample(&r, row->readers, &vmas);
	vml_free(r.tids);
	vml_free(r.walk);
	if (ret)
		return ret;
	s->p50_us = lat_hist_quantile_ns(r.hist, 0.50) / 1e3;
	s->p99_us = lat_hist_quantile_ns(r.hist, 0.99) / 1e3;
	s->max_us = (double)r.hist->max_ns / 1e3;
	s->avg_us = r.hist->count ? (double)r.hist->sum_ns / (double)r.hist->count / 1e3 : 0;
	s->ops = r.hist->count;
	s->vmas = vmas;
	s->passes = atomic_load(&r.passes);
	s->fallbacks = fallbacks;
	s->fails = r.fails;
	s->layout_vmas = r.layout_vmas;
	s->live_page_ns = r.live_page_ns;
	s->live_run_page_ns = r.live_run_page_ns;
	s->charged_page_ns = row->target == TARGET_MODEL ? (double)r.page_ns : 0;
	row->nr++;
	bench_progress(c->quiet, "proc-vs-map [%u/%u] %s %s %s readers=%u sample %u/%u: "
		       "p50 %.1f us, max %.1f us, %lu ops", done, total,
		       pvm_target_label(row), pvm_lock_label(row), pvm_steal_label(row),
		       row->readers, i + 1, c->samples, s->p50_us,
		       s->max_us, (unsigned long)s->ops);
	return 0;
}

/* Model rows: per lock policy, steal policy and reader count, in the vocabularies' order. */
static void add_model_rows(struct pvm_result *res, unsigned int locks, unsigned int *k,
			   unsigned int sim_cpus)
{
	const struct cli_ulist *readers = &res->o->readers;

	for (const struct vml_word *l = vocab_next(&lock_policy_vocab, locks, NULL); l;
	     l = vocab_next(&lock_policy_vocab, locks, l)) {
		for (const struct vml_word *s = vocab_next(&steal_policy_vocab, res->steals, NULL);
		     s; s = vocab_next(&steal_policy_vocab, res->steals, s)) {
			for (unsigned int i = 0; i < readers->nr; i++) {
				struct pvm_row *row = &res->rows[(*k)++];

				row->target = TARGET_MODEL;
				row->sim = sim_cpus > 0;
				row->cpus = sim_cpus;
				row->lock = (enum vml_lock_policy)l->value;
				row->steal = (enum vml_steal_policy)s->value;
				row->readers = (unsigned int)readers->v[i];
			}
		}
	}
}

/*
 * The release race's legs for the simulated rows (docs/simulation.md), from
 * LEGS_SAMPLES traced live samples of one reader: the deciles of a reader's release
 * after which the sleeping mapper was woken -> the reader's next attempt,
 * and of that release -> the mapper's switch-in, plus its switch-in -> acquire
 * median (the model's mapper acquires as soon as it runs). Needs root
 * (tracefs); without it the rows keep the fixed charges, and say so.
 * Return: 0 or -errno (the sample's).
 */
#define LEGS_MIN_RACES 100
#define LEGS_MIN_SPLIT 30	/* wake-ups after each kind of sleep, to draw them apart */
#define LEGS_SAMPLES 3
#define LEGS_GRID 256		/* quantiles of each leg in race_won()'s double sum */
#define LEGS_MAX_SHIFT_NS 50000

/* P(the mapper acquires before the reader's next attempt): leg @back shifted @shift, @in. */
static double race_won(const uint64_t back[SIM_LEG_DECILES], int64_t shift,
		       const uint64_t in[SIM_LEG_DECILES])
{
	uint64_t b[LEGS_GRID], a[LEGS_GRID];
	unsigned int won = 0, j = 0;

	for (unsigned int i = 0; i < LEGS_GRID; i++) {
		uint32_t u = (uint32_t)((2 * i + 1) * 1000000ULL / (2 * LEGS_GRID));

		b[i] = (uint64_t)VML_MAX((int64_t)sim_leg_at(back, u) + shift, (int64_t)1);
		a[i] = sim_leg_at(in, u);
	}
	/* both ascending: count the pairs with the mapper's acquire first */
	for (unsigned int i = 0; i < LEGS_GRID; i++) {
		while (j < LEGS_GRID && a[j] < b[i])
			j++;
		won += j;
	}
	return (double)won / (LEGS_GRID * LEGS_GRID);
}

/* race_won() over the races of both sleeps: @in[k] drawn for a share @w[k] of them. */
static double race_won_mix(const uint64_t back[SIM_LEG_DECILES], int64_t shift,
			   const uint64_t in[2][SIM_LEG_DECILES], const double w[2])
{
	return w[0] * race_won(back, shift, in[0]) + w[1] * race_won(back, shift, in[1]);
}

/*
 * The shift of the reader's leg that makes the mapper win @p of the races,
 * as the traced kernel's did: the tracepoints mark the reader's attempt
 * before down_read() decides, and not every microsecond of either way is
 * seen, so the two legs' offset is taken from the races' outcome and
 * their spreads from the legs themselves. Bisection; clamped to +-50 us.
 */
static int64_t race_shift(const uint64_t back[SIM_LEG_DECILES],
			  const uint64_t in[2][SIM_LEG_DECILES], const double w[2], double p)
{
	int64_t lo = -LEGS_MAX_SHIFT_NS, hi = LEGS_MAX_SHIFT_NS;

	while (hi - lo > 10) {
		int64_t mid = lo + (hi - lo) / 2;

		if (race_won_mix(back, mid, in, w) < p)
			lo = mid;
		else
			hi = mid;
	}
	return lo + (hi - lo) / 2;
}

static int measure_legs(struct pvm_result *res)
{
	struct pvm_row probe = { .target = TARGET_LIVE, .readers = 1 };
	struct pvm_tracer *saved = res->tracer;
	const struct pvm_dyn *d;
	uint64_t acq;
	int ret = 0;

	if (!pvm_tracer_live(res->leg_tracer)) {
		bench_progress_done(res->c->quiet);
		fprintf(stderr, "vmalock bench: the simulated rows' release race is charged fixed "
				"legs (measuring their spread needs root and tracefs)\n");
		return 0;
	}
	probe.s = vml_zalloc(LEGS_SAMPLES * sizeof(*probe.s));
	probe.dyn = vml_zalloc(sizeof(*probe.dyn));
	if (!probe.s || !probe.dyn) {
		vml_free(probe.s);
		vml_free(probe.dyn);
		return -ENOMEM;
	}
	bench_progress(res->c->quiet, "proc-vs-map: tracing %u live samples for the simulated "
		       "rows' release race ...", LEGS_SAMPLES);
	res->tracer = res->leg_tracer;
	/* several samples: one sample's races lean to the regime it happened to be in */
	for (unsigned int i = 0; !ret && i < LEGS_SAMPLES; i++)
		ret = run_sample(res, &probe, i, 0, 0);
	res->tracer = saved;
	d = probe.dyn;
	if (!ret && (d->leg_gap_woke.count < LEGS_MIN_RACES ||
		     d->leg_release_run.count < LEGS_MIN_RACES ||
		     d->sleep_races[0] + d->sleep_races[1] < LEGS_MIN_RACES)) {
		bench_progress_done(res->c->quiet);
		fprintf(stderr, "vmalock bench: the traced live samples had %llu reader releases "
				"that woke the mapper, %llu wake-ups and %llu races (%u each needed): "
				"the simulated rows keep fixed legs\n",
			(unsigned long long)d->leg_gap_woke.count,
			(unsigned long long)d->leg_release_run.count,
			(unsigned long long)(d->sleep_races[0] + d->sleep_races[1]), LEGS_MIN_RACES);
	} else if (!ret) {
		struct bench_sim_costs *sc = &res->simcosts;
		/*
		 * The way in by the mapper's sleep when both kinds were seen
		 * often enough: after a lost race it sleeps only the next hold,
		 * and a vCPU that idled that briefly comes back sooner.
		 */
		bool split = d->leg_release_run_slept[0].count >= LEGS_MIN_SPLIT &&
			     d->leg_release_run_slept[1].count >= LEGS_MIN_SPLIT &&
			     d->sleep_races[0] && d->sleep_races[1];
		uint64_t in[2][SIM_LEG_DECILES];
		double w[2] = { 0, 1 };

		acq = trace_fine_quantile(&d->leg_run_acquire, 0.5);
		for (unsigned int i = 0; i < SIM_LEG_DECILES; i++) {
			double q = (i + 1) / 10.0;

			sc->sched.way_back_ns[i] =
				VML_MAX(trace_fine_quantile(&d->leg_gap_woke, q), (uint64_t)1);
			sc->sched.switch_in_ns[i] = trace_fine_quantile(
				split ? &d->leg_release_run_slept[1] : &d->leg_release_run, q) + acq;
			sc->sched.switch_in_short_ns[i] = split ?
				trace_fine_quantile(&d->leg_release_run_slept[0], q) + acq : 0;
		}
		sc->race_won = (double)(d->sleep_races_won[0] + d->sleep_races_won[1]) /
			       (double)(d->sleep_races[0] + d->sleep_races[1]);
		if (split) {
			for (unsigned int k = 0; k < 2; k++) {
				sc->race_won_slept[k] = (double)d->sleep_races_won[k] /
							(double)d->sleep_races[k];
				w[k] = (double)d->sleep_races[k] /
				       (double)(d->sleep_races[0] + d->sleep_races[1]);
			}
		}
		memcpy(in[0], split ? sc->sched.switch_in_short_ns : sc->sched.switch_in_ns,
		       sizeof(in[0]));
		memcpy(in[1], sc->sched.switch_in_ns, sizeof(in[1]));
		sc->way_back_shift_ns = race_shift(sc->sched.way_back_ns, in, w, sc->race_won);
		for (unsigned int i = 0; i < SIM_LEG_DECILES; i++)
			res->simcosts.sched.way_back_ns[i] = (uint64_t)VML_MAX(
				(int64_t)res->simcosts.sched.way_back_ns[i] +
				res->simcosts.way_back_shift_ns, (int64_t)1);
	}
	for (unsigned int i = 0; i < LEGS_SAMPLES; i++)
		vml_free(probe.s[i].hist);
	vml_free(probe.s);
	vml_free(probe.dyn);
	return ret;
}

static int pvm_run_rows(struct bench_run *br)
{
	const struct pvm_opts *o = br->opts;
	const struct bench_common *c = br->c;
	const struct bench_charge_opts *ch = &o->charge;
	unsigned int locks = bench_locks(br), nlocks = (unsigned int)__builtin_popcount(locks);
	unsigned int total, done = 0, k = 0, nsteal, nreaders = o->readers.nr;
	struct pvm_result *res = vml_zalloc(sizeof(*res));
	int ret = 0;

	if (!res)
		return EXIT_FAILURE;
	br->res = res;
	res->c = c;
	res->o = o;
	res->view = o->view;
	res->steals = bench_steals(br);
	/* Before any thread: the live session may mount tracefs in a namespace of ours. */
	if (c->trace && pvm_tracer_open(c, o->mapper.duration_s, &res->tracer))
		return EXIT_FAILURE;
	if (c->sim && !c->sim_costs && geteuid() == 0 && o->view != TARGET_VIEW_QUERY) {
		struct bench_common lc = *c;

		lc.live = true;
		lc.trace_events = NULL;
		if (pvm_tracer_open(&lc, o->mapper.duration_s, &res->leg_tracer))
			return EXIT_FAILURE;
	}
	bench_pick_cpus(&res->mapper_cpu, &res->reader_cpu);
	if (c->sim && c->sim_costs) {
		char err[256];

		ret = bench_sim_costs_get("vmalock bench", c->sim_costs, NULL, &res->simcosts);
		if (ret)
			return EXIT_FAILURE;
		ret = o->region_only ? 0 :
		      bench_sim_layout_load(c->sim_costs, &res->mirror, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "vmalock bench: --sim-costs %s: %s\n", c->sim_costs,
				ret == -EINVAL ? err : strerror(-ret));
			return EXIT_FAILURE;
		}
	} else if (c->sim && (o->view == TARGET_VIEW_QUERY || !target_live_available())) {
		fprintf(stderr, "vmalock bench: --cpus: the simulated machine's charges are "
				"measured on the live kernel, which %s; give --sim-costs FILE\n",
			o->view == TARGET_VIEW_QUERY ? "PROCMAP_QUERY has no calibration for" :
			"is not available here");
		return EXIT_FAILURE;
	}
	if ((c->model || (c->sim && !c->sim_costs)) && (ch->record_ns < 0 || ch->call_ns < 0) &&
	    o->view != TARGET_VIEW_QUERY && target_live_available()) {
		bench_progress(c->quiet, "proc-vs-map: calibrating %s record cost against the live "
			       "kernel ...", bench_view_name(o->view));
		ret = bench_calibrate_record(o->view, &res->cal);
		if (ret) {
			bench_progress_done(c->quiet);
			fprintf(stderr, "vmalock bench: calibration against the live kernel failed: "
					"%s (use --record-ns N and --call-ns N to set it)\n",
				strerror(-ret));
			return EXIT_FAILURE;
		}
		res->paired_page_ns = ch->record_ns < 0 && ch->page_ns < 0 && c->live &&
				      bench_view_walks_pages(o->view);
	}
	bench_charges(ch, o->view, res->cal.done ? &res->cal : NULL, &res->record_ns,
		      &res->page_ns, &res->call_ns);
	if (c->sim && !c->sim_costs) {
		bench_progress(c->quiet, "proc-vs-map: measuring the simulated machine's charges "
			       "on the live kernel ...");
		ret = bench_sim_costs_get("vmalock bench", NULL, &res->cal, &res->simcosts);
		if (ret) {
			bench_progress_done(c->quiet);
			return EXIT_FAILURE;
		}
		/* --record-ns and friends set the simulated readers' whole cost too */
		if (ch->record_ns >= 0)
			res->simcosts.record_ns = (uint64_t)ch->record_ns;
		if (ch->page_ns >= 0)
			res->simcosts.page_ns = (uint64_t)ch->page_ns;
		if (ch->call_ns >= 0)
			res->simcosts.call_ns = (uint64_t)ch->call_ns;
		ret = measure_legs(res);
		if (ret)
			return EXIT_FAILURE;
	}
	if ((c->model || c->sim) && !o->region_only && !res->mirror && target_live_available()) {
		struct target *t;

		ret = target_create(TARGET_LIVE, NULL, &t);
		if (!ret) {
			ret = bench_mirror_read(target_pid(t), &res->mirror);
			target_destroy(t);
		}
		if (ret) {
			fprintf(stderr, "vmalock bench: reading a live child's own mappings: %s "
					"(--region-only runs without them)\n", strerror(-ret));
			return EXIT_FAILURE;
		}
	}
	nsteal = (unsigned int)__builtin_popcount(res->steals);
	res->nr_rows = ((c->model ? nlocks * nsteal : 0) + (c->sim ? nlocks * nsteal : 0) +
			c->live) * nreaders;
	res->rows = vml_zalloc(res->nr_rows * sizeof(*res->rows));
	if (!res->rows)
		return EXIT_FAILURE;
	if (c->model)
		add_model_rows(res, locks, &k, 0);
	if (c->sim)
		add_model_rows(res, locks, &k, c->cpus);
	/* live rows: the kernel's own policies, once */
	for (unsigned int i = 0; c->live && i < nreaders; i++)
		res->rows[k++] = (struct pvm_row){ .target = TARGET_LIVE,
						   .readers = (unsigned int)o->readers.v[i] };
	for (k = 0; k < res->nr_rows; k++) {
		struct pvm_row *row = &res->rows[k];

		row->s = vml_zalloc(c->samples * sizeof(*row->s));
		if (!row->s)
			return EXIT_FAILURE;
		if (c->trace) {
			row->dyn = vml_zalloc(sizeof(*row->dyn));
			if (!row->dyn)
				return EXIT_FAILURE;
		}
	}
	/*
	 * Round-robin: sample i of every row before sample i + 1 of any, so that
	 * a change in the machine's load during the run hits every row alike
	 * and the ratios between rows stay fair. The live rows first, so that a
	 * round's model samples can be charged the page walk its live ones met.
	 */
	total = res->nr_rows * c->samples;
	for (unsigned int i = 0; i < c->samples && !ret; i++)
		for (int live = 1; live >= 0; live--)
			for (k = 0; k < res->nr_rows && !ret; k++)
				if ((res->rows[k].target == TARGET_LIVE) == live)
					ret = run_sample(res, &res->rows[k], i, ++done, total);
	for (k = 0; k < res->nr_rows && !ret; k++)
		row_summarise(&res->rows[k]);
	bench_progress_done(c->quiet);
	/* how fast the simulator ran here: host time, so on stderr, never in the results */
	if (!ret && c->sim && res->simstats.wall_ns)
		fprintf(stderr, "vmalock bench: simulated %.2f s on %u CPUs in %.2f s: %llu events, "
			"%.0f events a second\n", res->simstats.virtual_ns / 1e9, c->cpus,
			res->simstats.wall_ns / 1e9, (unsigned long long)res->simstats.events,
			res->simstats.events / (res->simstats.wall_ns / 1e9));
	if (ret == -ENOMEM)
		fprintf(stderr, "vmalock bench: out of memory\n");
	return ret ? EXIT_FAILURE : 0;
}

static void pvm_free(struct bench_run *br)
{
	const struct pvm_opts *o = br->opts;
	struct pvm_result *res = br->res;

	/* loaded by pvm_check(), for the whole run */
	bench_layout_free(o->layout);
	if (!res)
		return;
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		for (unsigned int i = 0; i < res->c->samples; i++)
			vml_free(res->rows[k].s ? res->rows[k].s[i].hist : NULL);
		vml_free(res->rows[k].s);
		vml_free(res->rows[k].dyn);
	}
	vml_free(res->rows);
	pvm_tracer_close(res->tracer);
	pvm_tracer_close(res->leg_tracer);
	bench_mirror_free(res->mirror);
	vml_free(res);
	br->res = NULL;
}

const struct pvm_row *pvm_find(const struct pvm_result *res, enum target_kind target,
			       enum vml_lock_policy lock, unsigned int readers)
{
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct pvm_row *row = &res->rows[k];

		if (row->target == target && !row->sim &&
		    (target == TARGET_LIVE || row->lock == lock) && row->readers == readers &&
		    row->nr)
			return row;
	}
	return NULL;
}

const struct pvm_row *pvm_find_sim(const struct pvm_result *res, enum vml_lock_policy lock,
				   unsigned int readers)
{
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct pvm_row *row = &res->rows[k];

		if (row->sim && row->lock == lock && row->readers == readers && row->nr)
			return row;
	}
	return NULL;
}

const char *pvm_target_label(const struct pvm_row *row)
{
	return row->sim ? "sim" : target_kind_name(row->target);
}

const char *pvm_lock_label(const struct pvm_row *row)
{
	return words_policy_label(&lock_policy_vocab, row->target, row->lock);
}

const char *pvm_steal_label(const struct pvm_row *row)
{
	return words_policy_label(&steal_policy_vocab, row->target, row->steal);
}

/* ---- the scenario ---- */

static void pvm_defaults(void *opts)
{
	struct pvm_opts *o = opts;

	*o = (struct pvm_opts){
		.view = VML_VIEW_MAPS,
		.readers = { .v = { 1 }, .nr = 1 },
		.charge = { .record_ns = -1, .page_ns = -1, .call_ns = -1 },
	};
	bench_mapper_defaults(&o->mapper);
}

static int pvm_check(const char *cmd, const struct bench_common *c, void *opts)
{
	struct pvm_opts *o = opts;
	int ret;

	if (o->busy_cpus && !c->cpus)
		return cli_usage_error(cmd, "--busy-cpus: needs --cpus N (a simulated machine)");
	if (o->busy_cpus && o->busy_cpus >= c->cpus)
		return cli_usage_error(cmd, "--busy-cpus %u: at most %u with --cpus %u (CPU 0 is "
				       "the mapper's)", o->busy_cpus, c->cpus - 1, c->cpus);
	ret = bench_check_mb(cmd, o->mapper.mb);
	if (ret || !o->layout_path)
		return ret;
	/* last: the check that does work, and whose result pvm_free() frees */
	return bench_layout_load(cmd, o->layout_path, o->mapper.mb << 20, c->live,
				 &o->layout);
}

#define P(f) offsetof(struct pvm_opts, f)
static const struct cli_opt pvm_opts_table[] = {
	{ "--view", "VIEW", cli_set_view, P(view), 0, 0, NULL,
	  "maps, smaps, smaps_rollup, numa_maps or query: the view the\n"
	  "readers read [maps; run: smaps]; query is PROCMAP_QUERY over\n"
	  "every VMA" },
	{ "--readers", "N[,N...]", cli_set_ulist, P(readers), 0, 256, NULL,
	  "reader threads, one row each [1; run: 0,1,4]" },
	BENCH_MAPPER_OPTS(struct pvm_opts, mapper),
	{ "--busy", "N", cli_set_uint, P(busy), 0, 1024, NULL,
	  "CPU hogs on the readers' CPU [0]" },
	{ "--busy-cpus", "K", cli_set_uint, P(busy_cpus), 1, SIM_MAX_CPUS, NULL,
	  "simulated rows (--cpus N): Paul's layout - the mapper on CPU 0,\n"
	  "the readers spread over the last K CPUs, --busy hogs on each\n"
	  "(run-proc-vs-map.sh --nbusycpus K) [the readers' CPU only]" },
	{ "--busyduration", "MS", cli_set_seconds, P(busyduration_ms), 0, 1e6, NULL,
	  "hogs spin MS then sleep 1 ms; 0 spins on [0]" },
	BENCH_CHARGE_OPTS(struct pvm_opts, charge),
	{ "--kernel-transients", NULL, cli_set_flag, P(kernel_transients), 0, 0, NULL,
	  "the model goes through 6.18's intermediate states (vmalock race\n"
	  "--help; its mapper's mmap/munmap meet only the re-walking VMA\n"
	  "iterator)" },
	{ "--layout", "FILE.ops", cli_set_string, P(layout_path), 0, 0, NULL,
	  "an op script (a twin of some process: docs/op-scripts.md)\n"
	  "laid out in the mapper's address space on every target\n"
	  "before the readers start; the mapper's region goes in a free\n"
	  "gap beside it, and the readers read it all (also on the\n"
	  "simulated machine). Live, it must lie in 0x100000000000-\n"
	  "0x200000000000. A line that fails, fork, select, swap, knobs\n"
	  "or require: exit 2" },
	{ "--region-only", NULL, cli_set_flag, P(region_only), 0, 0, NULL,
	  "the model's mm holds the mapper's region alone; by default it\n"
	  "also holds copies of the live mapper's own mappings (binary,\n"
	  "libraries, heap, stack), as the live mapper's smaps does, when\n"
	  "the live kernel is available" },
	CLI_OPT_END,
};
#undef P

const struct bench_scenario bench_proc_vs_map = {
	.name = "proc-vs-map",
	.question = "How long does a process's own mmap()/munmap() wait while low-priority "
		    "monitors read its /proc files, under each lock policy?",
	.rows = "a target, lock policy, steal policy and reader count: the mapper's call "
		"latency (us), median over samples",
	.about = "Paul McKenney's experiment: a mapper maps and unmaps random pages of a\n"
		 "populated region, timing every call, while low-priority readers read a\n"
		 "/proc view of its address space. `vmalock run` is this scenario on smaps\n"
		 "with the headline defaults, and a verdict.",
	.opts = pvm_opts_table,
	.opts_size = sizeof(struct pvm_opts),
	.defaults = pvm_defaults,
	.locks = VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA) |
		 VOCAB_BIT(VML_LOCK_VMA_STRICT) | VOCAB_BIT(VML_LOCK_VMA_RECHECK),
	.default_locks = VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA),
	.steals = VOCAB_BIT(VML_STEAL_KERNEL) | VOCAB_BIT(VML_STEAL_NOSTEAL_RETAKE) |
		  VOCAB_BIT(VML_STEAL_NOT_BEHIND_WRITER) | VOCAB_BIT(VML_STEAL_NEVER),
	.default_steals = VOCAB_BIT(VML_STEAL_KERNEL),
	.trace = true,
	.sim = true,
	.check = pvm_check,
	.run = pvm_run_rows,
	.print = pvm_print,
	.json = pvm_json,
	.plot = pvm_plot,
	.verdict = pvm_verdict,
	.free = pvm_free,
};
