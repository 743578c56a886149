// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * khugepaged.c - `vmalock bench khugepaged`: seed 003's experiment on the
 * model and on the live kernel. An address space holds --skip-vmas small
 * VMAs khugepaged cannot use, then --uncollapsible 2 MiB ranges it may scan
 * but not collapse (every PTE cleared by a sub-PMD MADV_DONTNEED, so more
 * pte_none than max_ptes_none: patch 2's budget eaters), then --ranges
 * collapsible 2 MiB ranges of small pages, while a mapper maps and unmaps
 * single pages in a separate 16 MiB area (Paul's mapper: a random page, map
 * or unmap, 10 us apart), contending for mmap_lock.
 *
 * Model rows: khugepaged runs in its own nice-19 thread with each --policy
 * (mainline; each of the series' fixes alone: resume, skip, drop; all of
 * them: fixed) under each --steal policy of the mmap_lock (how the drop
 * fix re-takes the lock: see vmalock/khugepaged.h).
 *
 * The live row (root): the same layout in vmalock-child, khugepaged's
 * sysfs knobs set for a fast scan (scan_sleep_millisecs = --scan-sleep)
 * and vm.max_map_count raised for the run, both put back afterwards
 * however the run ends (system/settings.h). The kernel is 6.18: the row is
 * mainline's. A range counts as collapsed once its first page is mapped by
 * a transparent huge page (/proc/PID/pagemap and /proc/kpageflags, read
 * every 2 ms: one page's walk each, not a whole smaps); khugepaged's holds
 * of the child's mmap_lock come from the mmap_lock tracepoints, when
 * tracefs is available.
 *
 * Per sample: the time until every collapsible range is collapsed (or
 * `>` the --duration limit), khugepaged's longest mmap_lock hold, how often
 * its trylock failed and it dropped the lock, and the mapper's latency.
 * The seed reports, with ~1M ineligible VMAs: hold 95 ms -> 170 us,
 * collapse 10.8 s -> 3.6 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sync/rcu.h"
#include "host/host.h"
#include "system/settings.h"
#include "internal.h"
#include "platform/platform.h"
#include "platform/sim.h"
#include "simcost.h"
#include "trace/analysis.h"
#include "trace/session.h"
#include "util/json.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/compiler.h"
#include "util/rand.h"
#include "vmalock/khugepaged.h"

#define KH_M2 (2UL << 20)
#define KH_PG 4096UL
#define KH_BASE 0x100000000000UL
#define KH_CHURN (KH_BASE + (1UL << 40))	/* the model mapper's area, far from the rest */
#define KH_CHURN_PAGES 4096UL			/* 16 MiB */
#define KH_POLL_NS (2 * NSEC_PER_MSEC)		/* live: how often collapse is checked */
#define KH_CHUNK_NS (250 * NSEC_PER_MSEC)	/* live: the mapper runs in chunks this long */
#define KH_NONE UINT64_MAX			/* a count the target cannot tell */

struct kh_sample {
	double collapse_ms;	/* NAN: not all ranges collapsed within --duration */
	double max_hold_ms, mean_hold_us;	/* NAN: not known (live without tracefs) */
	double max_hold_cpu_ms;	/* model: the most CPU time one hold used (NAN: live) */
	double retake_ms;	/* model: total time re-taking the lock after drops */
	double p50_us, p99_us, max_us, avg_us;
	double build_s;		/* laying out the address space */
	uint64_t trylock_failures, lock_drops, wakeups, collapsed;	/* KH_NONE: unknown */
	uint64_t holds;		/* khugepaged's mmap_lock(R) holds */
};

/* --policy: which of seed 003's fixes a scanner row has (kh_policy_fixes). */
enum kh_policy {
	KH_MAINLINE,		/* none: 6.18 */
	KH_RESUME,		/* the per-mm resume address alone */
	KH_SKIP,		/* skip to the next candidate alone */
	KH_DROP,		/* drop and re-take after 1024 skipped VMAs alone */
	KH_FIXED,		/* all three: the series */
};

struct kh_opts {
	unsigned long skip_vmas;	/* --skip-vmas ineligible VMAs */
	unsigned int ranges;		/* --ranges collapsible 2 MiB ranges */
	unsigned int uncollapsible;	/* --uncollapsible eligible ranges khugepaged
					 * cannot collapse (sub-PMD DONTNEED) */
	unsigned int scan_sleep_ms;	/* --scan-sleep between wakeups */
	unsigned int policies;		/* --policy: VOCAB_BIT(enum kh_policy)s */
	double duration_s;		/* --duration: a sample's time limit */
	uint64_t seed;			/* --seed: the mapper's */
	unsigned int mappers;		/* --mappers: model and simulated rows' mappers */
};

struct kh_row {
	enum target_kind target;
	bool sim;			/* the model on the simulated machine (--cpus) */
	enum kh_policy policy;		/* live: mainline (6.18) */
	enum vml_steal_policy steal;	/* model rows (the live row's is the kernel's) */
	struct kh_sample *s;
	unsigned int nr;
};

/* --policy, in the order rows show them. */
static const struct vml_word kh_policy_words[] = {
	{ "mainline", KH_MAINLINE, "6.18", 0 },
	{ "resume", KH_RESUME, "the per-mm resume address alone", 0 },
	{ "skip", KH_SKIP, "skip to the next candidate alone", 0 },
	{ "drop", KH_DROP, "drop and re-take the lock after 1024 skipped\nVMAs alone", 0 },
	{ "fixed", KH_FIXED, "all three: the series", 0 },
	{ "both", 0, "mainline,fixed", VOCAB_BIT(KH_MAINLINE) | VOCAB_BIT(KH_FIXED) },
	{ "all", 0, "every one",
	  VOCAB_BIT(KH_MAINLINE) | VOCAB_BIT(KH_RESUME) | VOCAB_BIT(KH_SKIP) | VOCAB_BIT(KH_DROP) |
	  VOCAB_BIT(KH_FIXED) },
	{ NULL, 0, NULL, 0 },
};
/* No noun: a bad --policy is "bad value", as the option has always said. */
static const struct vml_vocab kh_policy_vocab = { NULL, kh_policy_words };

/* The fixes each --policy runs with (vmalock/khugepaged.h). */
static const unsigned int kh_policy_fixes[] = {
	[KH_MAINLINE] = 0,
	[KH_RESUME] = VML_KHUGEPAGED_FIX_RESUME,
	[KH_SKIP] = VML_KHUGEPAGED_FIX_SKIP,
	[KH_DROP] = VML_KHUGEPAGED_FIX_DROP,
	[KH_FIXED] = VML_KHUGEPAGED_FIX_ALL,
};

static const char *policy_name(enum kh_policy p)
{
	return vocab_name(&kh_policy_vocab, p);
}

static const char *steal_label(const struct kh_row *r)
{
	return words_policy_label(&steal_policy_vocab, r->target, r->steal);
}

/* ---- the model ---- */

struct mapper {
	struct vml_mm *mm;
	unsigned long base;		/* its 16 MiB area */
	struct lat_hist *hist;
	uint64_t seed;
	int cpu;
	atomic_bool stop;
	int err;			/* the call that failed, if one did: read after join */
};

static void *mapper_thread(void *arg)
{
	struct mapper *m = arg;
	struct vml_rand r = vml_rand_init(m->seed, 7);

	bench_pin_thread(m->cpu);
	/* The VMAs and tree nodes it frees: on its own CPU, below it (sync/rcu.h). */
	if (m->cpu >= 0)
		vml_rcu_thread_callbacks(m->cpu, 19);
	while (!atomic_load(&m->stop)) {
		unsigned long a = m->base + vml_rand_below(&r, KH_CHURN_PAGES) * KH_PG;
		uint64_t t0 = plat_now_ns();
		int err;

		if (vml_rand_below(&r, 2))
			err = vml_mmap(m->mm, a, KH_PG, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE,
				       NULL, 0, NULL);
		else
			err = vml_munmap(m->mm, a, KH_PG);
		/*
		 * One page of a 16 MiB area: at most 4096 VMAs, within the
		 * headroom max_map_count leaves (below), so neither call fails
		 * but for want of memory, which ends the run.
		 */
		if (err) {
			m->err = err;
			break;
		}
		lat_hist_record(m->hist, plat_now_ns() - t0);
		bench_sleep_ns(10 * NSEC_PER_USEC);
	}
	return NULL;
}

/* Where the ranges start: past the ineligible VMAs, 2 MiB-aligned, a gap after them. */
static unsigned long ranges_base(unsigned long skip)
{
	return KH_BASE + ((2 * skip * KH_PG + KH_M2 - 1) & ~(KH_M2 - 1)) + KH_M2;
}

/* Mapper @i's area: 16 MiB, 32 MiB apart. */
static unsigned long churn_base(unsigned int i)
{
	return KH_CHURN + (unsigned long)i * 2 * KH_CHURN_PAGES * KH_PG;
}

/* The layout (the live child's CHILD_KH_LAYOUT builds the same), then each mapper's area. */
static int build(struct vml_sys *sys, unsigned long skip, unsigned int unc, unsigned int ranges,
		 unsigned int mappers, struct vml_mm **out)
{
	unsigned long rbase = ranges_base(skip), nr = unc + ranges;
	struct vml_mm *mm;
	int err;

	err = vml_mm_create(sys, &mm);
	if (err)
		return err;
	for (unsigned long i = 0; i < skip && !err; i++)
		err = vml_mmap(mm, KH_BASE + 2 * i * KH_PG, KH_PG,
			       PROT_READ | ((i & 1) ? PROT_WRITE : 0),
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0, NULL);
	/* Small pages first (THP is "madvise"), then advise: collapsible, not yet huge. */
	if (!err)
		err = vml_mmap(mm, rbase, nr * KH_M2, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, NULL, 0, NULL);
	/* Uncollapsible: each half zapped on its own, so the PTE table stays, all none. */
	for (unsigned long i = 0; i < unc && !err; i++) {
		err = vml_madvise(mm, rbase + i * KH_M2, KH_M2 / 2, MADV_DONTNEED);
		if (!err)
			err = vml_madvise(mm, rbase + i * KH_M2 + KH_M2 / 2, KH_M2 / 2,
					  MADV_DONTNEED);
	}
	if (!err)
		err = vml_madvise(mm, rbase, nr * KH_M2, MADV_HUGEPAGE);
	for (unsigned int i = 0; i < mappers && !err; i++)
		err = vml_mmap(mm, churn_base(i), KH_CHURN_PAGES * KH_PG, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE, NULL, 0, NULL);
	if (err) {
		vml_mm_destroy(mm);
		return err;
	}
	*out = mm;
	return 0;
}

static void fill_latency(struct kh_sample *s, const struct lat_hist *h)
{
	s->p50_us = lat_hist_quantile_ns(h, 0.5) / 1e3;
	s->p99_us = lat_hist_quantile_ns(h, 0.99) / 1e3;
	s->max_us = (double)h->max_ns / 1e3;
	s->avg_us = h->count ? (double)h->sum_ns / (double)h->count / 1e3 : 0;
}

/*
 * One model sample, on host threads or (@costs set) as the first task of a
 * simulated machine, charged @costs: every clock and thread below goes
 * through the platform layer.
 */
static int model_sample(const struct kh_opts *o, const struct kh_row *row,
			struct kh_sample *s, int mapper_cpu, int scan_cpu,
			const struct vml_kernel_costs *costs)
{
	struct vml_sys_config scfg;
	struct vml_khugepaged_config kcfg = {
		.policy = row->policy == KH_MAINLINE ? VML_KHUGEPAGED_MAINLINE :
							     VML_KHUGEPAGED_FIXED,
		.fixes = kh_policy_fixes[row->policy],
		.scan_sleep_ms = o->scan_sleep_ms,
	};
	struct mapper *m = vml_zalloc(o->mappers * sizeof(*m));
	struct plat_thread *mt = vml_zalloc(o->mappers * sizeof(*mt));
	struct vml_khugepaged_stats ks;
	struct vml_khugepaged *k = NULL;
	struct vml_mm *mm = NULL;
	struct vml_sys *sys;
	struct lat_hist *all = lat_hist_new();
	uint64_t t0, limit = (uint64_t)(o->duration_s * 1e9);
	unsigned int started = 0;
	int err;

	if (!m || !mt || !all) {
		err = -ENOMEM;
		goto out_free;
	}

	err = host_current_config(0, &scfg);
	if (err)
		goto out_free;
	if (costs)
		scfg.costs = *costs;
	/* each mapper's area: at most 4096 VMAs, within this headroom */
	scfg.max_map_count = o->skip_vmas + 65536 + o->mappers * KH_CHURN_PAGES;
	scfg.mmap_lock_steal = row->steal;
	/* The experiment's ranges are MADV_HUGEPAGE: THP must not be off. */
	if (scfg.thp == VML_THP_NEVER)
		scfg.thp = VML_THP_MADVISE;
	err = vml_sys_create(&scfg, &sys);
	if (err)
		goto out_free;
	t0 = vml_now_ns();	/* the host's time: building is not part of the experiment */
	err = build(sys, o->skip_vmas, o->uncollapsible, o->ranges, o->mappers, &mm);
	s->build_s = (double)(vml_now_ns() - t0) / 1e9;
	if (err) {
		vml_sys_destroy(sys);
		goto out_free;
	}
	err = vml_khugepaged_create(sys, &kcfg, &k);
	if (!err)
		err = vml_khugepaged_add(k, mm);
	/* mapper i on CPU mapper_cpu + i (simulated: CPUs 0..N-1), or anywhere */
	for (unsigned int i = 0; !err && i < o->mappers; i++) {
		m[i] = (struct mapper){ .mm = mm, .base = churn_base(i), .seed = o->seed + i,
					.cpu = mapper_cpu < 0 ? -1 : mapper_cpu + (int)i };
		m[i].hist = lat_hist_new();
		err = m[i].hist ? 0 : -ENOMEM;
		atomic_store(&m[i].stop, false);
		if (!err)
			err = plat_thread_create(&mt[i], &(struct plat_thread_opts){
							.cpu = -1, .name = "mapper" },
						 mapper_thread, &m[i]);
		started += !err;
	}
	if (!err) {
		bench_pin_thread(scan_cpu);
		err = vml_khugepaged_start(k);
	}
	if (err) {
		for (unsigned int i = 0; i < started; i++) {
			atomic_store(&m[i].stop, true);
			plat_thread_join(&mt[i]);
		}
		bench_pin_thread(-1);
		goto out;
	}
	t0 = plat_now_ns();
	s->collapse_ms = NAN;
	for (;;) {
		uint64_t now = plat_now_ns();

		vml_khugepaged_stats(k, &ks);
		if (ks.pages_collapsed >= o->ranges) {
			s->collapse_ms = (double)(now - t0) / 1e6;
			break;
		}
		if (now - t0 >= limit)
			break;
		bench_sleep_ns(NSEC_PER_MSEC);
	}
	vml_khugepaged_stop(k);
	for (unsigned int i = 0; i < started; i++) {
		atomic_store(&m[i].stop, true);
		plat_thread_join(&mt[i]);
		if (!err)
			err = m[i].err;
		lat_hist_merge(all, m[i].hist);
	}
	bench_pin_thread(-1);
	if (err)
		goto out;

	vml_khugepaged_stats(k, &ks);
	s->max_hold_ms = (double)ks.max_hold_ns / 1e6;
	s->max_hold_cpu_ms = (double)ks.max_hold_cpu_ns / 1e6;
	s->retake_ms = (double)ks.retake_ns_total / 1e6;
	s->mean_hold_us = ks.holds ? (double)ks.total_hold_ns / (double)ks.holds / 1e3 : NAN;
	s->trylock_failures = ks.trylock_failures;
	s->lock_drops = ks.lock_drops;
	s->wakeups = ks.wakeups;
	s->collapsed = ks.pages_collapsed;
	s->holds = KH_NONE;
	fill_latency(s, all);
out:
	vml_khugepaged_destroy(k);
	for (unsigned int i = 0; i < o->mappers; i++)
		vml_free(m[i].hist);
	vml_mm_destroy(mm);
	vml_sys_destroy(sys);
out_free:
	vml_free(m);
	vml_free(mt);
	vml_free(all);
	return err;
}

/* A model sample on the simulated machine: model_sample() as its first task. */
struct kh_sim {
	const struct kh_opts *o;
	const struct kh_row *row;
	struct kh_sample *s;
	const struct vml_kernel_costs *costs;
	int err;
};

static void *kh_sim_main(void *arg)
{
	struct kh_sim *ks = arg;

	/* the mapper on CPU 0 (model_sample pins it there), the scanner on the last */
	ks->err = model_sample(ks->o, ks->row, ks->s, 0, -1, ks->costs);
	return NULL;
}

static int sim_sample(const struct kh_opts *o, const struct kh_row *row, struct kh_sample *s,
		      const struct bench_sim_costs *table, uint64_t scan_vma_ns, unsigned int cpus,
		      uint64_t seed)
{
	struct vml_kernel_costs costs = table->kernel;
	struct kh_sim ks = { o, row, s, &costs, 0 };
	struct sim_config cfg = bench_sim_config(table, cpus, seed);
	int err;

	costs.scan_vma_ns = scan_vma_ns;
	err = sim_run(&cfg, kh_sim_main, &ks, NULL);
	return err ? err : ks.err;
}

/* ---- the live kernel ---- */

struct live_watch {
	pid_t pid;
	unsigned long first;		/* the first collapsible range */
	unsigned int ranges;
	uint64_t t0, done_ts;		/* done_ts: 0 until every range is huge */
	unsigned int huge;		/* ranges seen huge so far */
	int pagemap_fd, kpf_fd;
	struct trace_session *s;	/* NULL: no hold times */
	struct trace_analysis an;
	int trace_err;
	atomic_bool stop;
};

#define KPF_THP 22

/* Is the page at @addr mapped by a transparent huge page? */
static bool page_is_thp(struct live_watch *w, unsigned long addr)
{
	uint64_t pme, flags;

	if (pread(w->pagemap_fd, &pme, sizeof(pme), (off_t)(addr / KH_PG * 8)) != sizeof(pme) ||
	    !(pme & (1ULL << 63)))
		return false;
	pme &= (1ULL << 55) - 1;	/* the PFN (root only; 0 otherwise) */
	if (!pme || pread(w->kpf_fd, &flags, sizeof(flags), (off_t)(pme * 8)) != sizeof(flags))
		return false;
	return flags & (1ULL << KPF_THP);
}

static int feed(const struct trace_event *ev, void *arg)
{
	int ret = trace_analysis_feed(arg, ev);

	return ret == -EINVAL ? 0 : ret;
}

static void *live_watch_thread(void *arg)
{
	struct live_watch *w = arg;
	uint64_t next_trace = 0;

	while (!atomic_load(&w->stop)) {
		uint64_t now = vml_now_ns();

		if (!w->done_ts) {
			unsigned int n = 0;

			for (unsigned int i = 0; i < w->ranges; i++)
				n += page_is_thp(w, w->first + i * KH_M2);
			w->huge = n;
			if (n == w->ranges)
				w->done_ts = vml_now_ns();
		}
		if (w->s && !w->trace_err && now >= next_trace) {
			w->trace_err = trace_session_poll(w->s, false, feed, &w->an);
			next_trace = now + 100 * NSEC_PER_MSEC;
		}
		bench_sleep_ns(KH_POLL_NS);
	}
	return NULL;
}

/* khugepaged's holds of the child's mmap_lock, from the analysis. */
static void live_holds(const struct live_watch *w, uint64_t mm, struct kh_sample *s)
{
	const struct trace_mm *tm = trace_analysis_find_mm(&w->an, mm);
	struct trace_stat hold = { 0 };
	uint64_t failed = 0;

	s->max_hold_ms = s->mean_hold_us = s->max_hold_cpu_ms = s->retake_ms = NAN;
	s->trylock_failures = s->holds = KH_NONE;
	if (!w->s || w->trace_err || !tm)
		return;
	for (size_t i = 0; i < tm->nr_tasks; i++) {
		const struct trace_task *t = &tm->tasks[i];

		if (strncmp(t->comm, "khugepaged", 10))
			continue;
		trace_stat_merge(&hold, &t->hold[TRACE_READ]);
		failed += t->failed;
	}
	s->max_hold_ms = (double)hold.max_ns / 1e6;
	s->mean_hold_us = hold.count ? (double)hold.total_ns / (double)hold.count / 1e3 : NAN;
	s->trylock_failures = failed;
	s->holds = hold.count;
}

static int live_sample(const struct kh_opts *o, struct kh_sample *s, int mapper_cpu,
		       struct trace_session *ts)
{
	struct live_watch w = { .ranges = o->ranges, .pagemap_fd = -1, .kpf_fd = -1, .s = ts };
	struct child_lat_rep *rep = vml_malloc(sizeof(*rep));
	struct lat_hist *hist = lat_hist_new();
	uint64_t limit = (uint64_t)(o->duration_s * 1e9), mm = 0, t0;
	struct target *t = NULL;
	unsigned long first = 0;
	char path[64];
	pthread_t th;
	bool started = false;
	int ret = -ENOMEM;

	trace_analysis_init(&w.an, 0);
	if (!rep || !hist)
		goto out;
	ret = target_create(TARGET_LIVE, NULL, &t);
	if (ret)
		goto out;
	w.pid = target_pid(t);
	bench_pin_pid(w.pid, mapper_cpu);
	t0 = vml_now_ns();
	ret = target_live_kh_layout(t, KH_BASE, o->skip_vmas, o->ranges,
				    o->uncollapsible, &first, rep);
	s->build_s = (double)(vml_now_ns() - t0) / 1e9;
	if (ret) {
		fprintf(stderr, "vmalock bench: khugepaged: live: laying out %lu VMAs: %s\n",
			o->skip_vmas, strerror(-ret));
		goto out;
	}
	w.first = first + (unsigned long)o->uncollapsible * KH_M2;
	ret = target_live_mapper_setup(t, 0, KH_CHURN_PAGES * KH_PG, o->seed, rep);
	if (ret)
		goto out;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)w.pid);
	w.pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
	w.kpf_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (w.pagemap_fd < 0 || w.kpf_fd < 0) {
		ret = -errno;
		fprintf(stderr, "vmalock bench: khugepaged: live: %s: %s\n",
			w.pagemap_fd < 0 ? path : "/proc/kpageflags", strerror(errno));
		goto out;
	}
	if (w.s) {
		ret = trace_session_find_mm(w.s, w.pid, &mm);
		if (!ret)
			ret = trace_session_set_mm(w.s, mm);
		if (!ret)
			ret = trace_session_discard(w.s);
		w.an.mm_filter = mm;
		if (ret)
			w.s = NULL;
	}
	atomic_store(&w.stop, false);
	w.t0 = vml_now_ns();
	ret = -pthread_create(&th, NULL, live_watch_thread, &w);
	if (ret)
		goto out;
	started = true;
	/* The mapper runs in chunks until every range is huge, or the limit. */
	while (!w.done_ts && vml_now_ns() - w.t0 < limit) {
		ret = target_live_mapper_run(t, KH_CHUNK_NS, 10 * NSEC_PER_USEC, rep);
		if (ret)
			break;
		lat_hist_merge(hist, &rep->hist);
	}
	atomic_store(&w.stop, true);
	pthread_join(th, NULL);
	if (w.s && !w.trace_err)
		w.trace_err = trace_session_poll(w.s, true, feed, &w.an);
	if (ret)
		goto out;
	s->collapse_ms = w.done_ts ? (double)(w.done_ts - w.t0) / 1e6 : NAN;
	s->collapsed = w.huge;
	s->lock_drops = 0;		/* 6.18 never drops it while skipping */
	s->wakeups = KH_NONE;
	live_holds(&w, mm, s);
	fill_latency(s, hist);
out:
	if (!started)
		s->collapse_ms = NAN;
	if (w.pagemap_fd >= 0)
		close(w.pagemap_fd);
	if (w.kpf_fd >= 0)
		close(w.kpf_fd);
	target_destroy(t);
	trace_analysis_fini(&w.an);
	vml_free(hist);
	vml_free(rep);
	return ret;
}

/* Set khugepaged up for a fast scan and room for the VMAs (root); undone by setting_pop_all. */
static int live_settings(const struct kh_opts *o)
{
	const struct host_profile *hp;
	char err[256], val[32], path[256];
	int ret = host_profile_current(&hp);

	if (ret)
		return ret;
	if (o->skip_vmas + 65536 > hp->max_map_count) {
		snprintf(val, sizeof(val), "%lu", o->skip_vmas + 65536);
		ret = setting_push(setting_path("max_map_count"), val, err, sizeof(err));
		if (ret)
			goto fail;
	}
	snprintf(path, sizeof(path), "%s", setting_path("khugepaged.scan_sleep_millisecs"));
	snprintf(val, sizeof(val), "%u", o->scan_sleep_ms);
	ret = setting_push(path, val, err, sizeof(err));
	if (ret)
		goto fail;
	if (!strcmp(hp->thp_enabled, "never")) {
		ret = setting_push(setting_path("thp"), "madvise", err, sizeof(err));
		if (ret)
			goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "vmalock bench: khugepaged: live: %s\n", err);
	setting_pop_all();
	return ret;
}

/* ---- reduction and output ---- */

/*
 * Medians over a row's samples: a collapse that never finished counts as the
 * slowest (+infinity); a count the target cannot tell (KH_NONE) as missing.
 */
#define MED(r, f) STAT_OF(MEDIAN_NAN_SLOWEST, (r)->s, (r)->nr, f)
#define MEDU(r, f) STAT_OF(MEDIAN, (r)->s, (r)->nr, f)

static const struct bench_col columns[] = {
	BENCH_TEXT("target", -6), BENCH_TEXT("policy", -8), BENCH_TEXT("steal", -17),
	BENCH_NUM("collapse(ms)", 12, FIXED, 1), BENCH_NUM("maxhold(ms)", 11, FIXED, 3),
	BENCH_NUM("meanhold(us)", 12, FIXED, 1), BENCH_NUM("cpuhold(ms)", 11, FIXED, 3),
	BENCH_NUM("retake(ms)", 10, FIXED, 1), BENCH_NUM("trylock", 8, FIXED, 0),
	BENCH_NUM("drops", 7, FIXED, 0), BENCH_NUM("collapsed", 9, FIXED, 0),
	BENCH_NUM("p50(us)", 9, FIXED, 1), BENCH_NUM("p99(us)", 9, FIXED, 1),
	BENCH_NUM("avg(us)", 9, FIXED, 1), BENCH_NUM("max(us)", 9, FIXED, 0),
	BENCH_NUM("build(s)", 8, FIXED, 1),
	BENCH_COLS_END,
};

static const struct kh_row *find_row(const struct kh_row *rows, unsigned int nr,
				     enum target_kind target, enum kh_policy policy, bool sim)
{
	for (unsigned int i = 0; i < nr; i++)
		if (rows[i].target == target && rows[i].policy == policy && rows[i].nr &&
		    rows[i].sim == sim)
			return &rows[i];
	return NULL;
}

/* What a run measured: a row per target, policy and steal policy. */
struct kh_result {
	struct kh_row rows[2 * ARRAY_SIZE(kh_policy_fixes) * 32 + 1];
	unsigned int nr;
	/* simulated rows */
	struct bench_sim_costs simcosts;	/* the table (scan_vma_ns: see kh_scan_vma_ns) */
	bool vma_ns_from_live;		/* scan_vma_ns from each round's live sample */
};

/* "@what mainline / live kernel": @m's hold, mapper max and collapse time over @live's. */
static void print_over_live(FILE *f, const char *what, const struct kh_row *m,
			    const struct kh_row *live)
{
	double ca, cb;

	if (!m || !live)
		return;
	ca = MED(m, collapse_ms);
	cb = MED(live, collapse_ms);
	fprintf(f, "%s mainline / live kernel: longest hold %.3gx, mapper max %.3gx, "
		   "time to collapse ", what, MED(m, max_hold_ms) / MED(live, max_hold_ms),
		MED(m, max_us) / MED(live, max_us));
	if (isinf(ca) || isinf(cb))
		fprintf(f, "n/a\n");
	else
		fprintf(f, "%.3gx\n", ca / cb);
}

static void kh_print(FILE *f, const struct bench_run *r)
{
	const struct kh_opts *o = r->opts;
	const struct kh_result *res = r->res;
	const struct kh_row *rows = res->rows, *m, *x;
	unsigned int nr = res->nr;
	struct bench_table t;

	fprintf(f, "# khugepaged: %lu ineligible VMAs, %u uncollapsible and %u collapsible 2 MiB "
		   "ranges, %u mapper%s contending; scan every %u ms, 4096 pages a wakeup; medians "
		   "of %u samples\n", o->skip_vmas, o->uncollapsible, o->ranges, o->mappers,
		o->mappers == 1 ? "" : "s", o->scan_sleep_ms, r->c->samples);
	fprintf(f, "# collapse: ms until every collapsible range is huge ('-': not within "
		   "%g s); maxhold: khugepaged's longest mmap_lock hold, meanhold its mean one; "
		   "cpuhold: the most CPU\n"
		   "# time one hold used (model: a hold's length had the scanner not been "
		   "preempted, as the kernel's is not while it skips VMAs); retake: total ms spent\n"
		   "# re-taking the lock after drops (queued behind the mapper, then woken); mapper "
		   "latency in us\n",
		o->duration_s);
	bench_table_start(&t, f, columns, 0);
	for (unsigned int i = 0; i < nr; i++) {
		const struct kh_row *k = &rows[i];

		if (!k->nr)
			continue;
		bench_text(&t, k->sim ? "sim" : target_kind_name(k->target));
		bench_text(&t, policy_name(k->policy));
		bench_text(&t, steal_label(k));
		bench_num(&t, MED(k, collapse_ms));
		bench_num(&t, MED(k, max_hold_ms));
		bench_num(&t, MED(k, mean_hold_us));
		bench_num(&t, k->target == TARGET_MODEL && !k->sim ? MED(k, max_hold_cpu_ms) : NAN);
		bench_num(&t, k->target == TARGET_MODEL ? MED(k, retake_ms) : NAN);
		bench_num(&t, MEDU(k, trylock_failures));
		bench_num(&t, MEDU(k, lock_drops));
		bench_num(&t, MEDU(k, collapsed));
		bench_num(&t, MED(k, p50_us));
		bench_num(&t, MED(k, p99_us));
		bench_num(&t, MED(k, avg_us));
		bench_num(&t, MED(k, max_us));
		bench_num(&t, MED(k, build_s));
		bench_row_end(&t);
	}
	/* The seed's criterion, model: fixed against mainline (the first of each). */
	m = find_row(rows, nr, TARGET_MODEL, KH_MAINLINE, false);
	x = find_row(rows, nr, TARGET_MODEL, KH_FIXED, false);
	if (m && x) {
		double ca = MED(m, collapse_ms), cb = MED(x, collapse_ms);

		fprintf(f, "model fixed (%s) / mainline (%s): longest mmap_lock hold %.3gx "
			   "(fixed: %.3f ms, %.3f ms of it on the CPU at most), mapper max latency "
			   "%.3gx, ", steal_label(x), steal_label(m),
			MED(x, max_hold_ms) / MED(m, max_hold_ms), MED(x, max_hold_ms),
			MED(x, max_hold_cpu_ms), MED(x, max_us) / MED(m, max_us));
		if (isinf(ca) || isinf(cb))
			fprintf(f, "time to collapse n/a (%s did not finish)\n",
				isinf(ca) ? "mainline" : "fixed");
		else
			fprintf(f, "time to collapse %.3gx\n", cb / ca);
	}
	x = find_row(rows, nr, TARGET_LIVE, KH_MAINLINE, false);
	print_over_live(f, "model", m, x);
	print_over_live(f, "sim", find_row(rows, nr, TARGET_MODEL, KH_MAINLINE, true), x);
	if (r->c->sim) {
		fprintf(f, "# sim: the model on a simulated machine of %u CPUs (docs/simulation.md), "
			   "seed %llu; khugepaged charged %s a VMA it scans\n", r->c->cpus,
			(unsigned long long)r->c->sim_seed,
			res->vma_ns_from_live ? "the live sample's longest hold over the VMAs of "
						"its round" : "the table's scan_vma_ns");
		bench_sim_costs_print(f, &res->simcosts);
	}
}

static void json_u64_or_null(json_t *o, const char *key, uint64_t v)
{
	if (v == KH_NONE)
		json_set_double(o, key, NAN);	/* null */
	else
		json_set_u64(o, key, v);
}

static json_t *json_sample(const struct kh_sample *s)
{
	json_t *o = json_object();

	json_set_double(o, "collapse_ms", s->collapse_ms);
	json_set_double(o, "max_hold_ms", s->max_hold_ms);
	json_set_double(o, "max_hold_cpu_ms", s->max_hold_cpu_ms);
	json_set_double(o, "retake_ms", s->retake_ms);
	json_set_double(o, "mean_hold_us", s->mean_hold_us);
	json_set_double(o, "p50_us", s->p50_us);
	json_set_double(o, "p99_us", s->p99_us);
	json_set_double(o, "avg_us", s->avg_us);
	json_set_double(o, "max_us", s->max_us);
	json_set_double(o, "build_s", s->build_s);
	json_u64_or_null(o, "trylock_failures", s->trylock_failures);
	json_u64_or_null(o, "lock_drops", s->lock_drops);
	json_u64_or_null(o, "wakeups", s->wakeups);
	json_u64_or_null(o, "collapsed", s->collapsed);
	return o;
}

static void kh_json(json_t *doc, const struct bench_run *br)
{
	const struct kh_opts *o = br->opts;
	const struct kh_result *res = br->res;
	json_t *meta = bench_doc_meta(doc);

	json_set_u64(meta, "skip_vmas", o->skip_vmas);
	json_set_u64(meta, "ranges", o->ranges);
	json_set_u64(meta, "uncollapsible", o->uncollapsible);
	json_set_u64(meta, "scan_sleep_ms", o->scan_sleep_ms);
	json_set_u64(meta, "mappers", o->mappers);
	json_set_double(meta, "duration_s", o->duration_s);
	if (br->c->sim)
		json_set_new(doc, "sim_costs", bench_sim_costs_json(&res->simcosts));
	for (unsigned int i = 0; i < res->nr; i++) {
		const struct kh_row *r = &res->rows[i];
		json_t *row, *per;

		if (!r->nr)
			continue;
		row = bench_doc_row(doc, target_kind_name(r->target));
		json_set_bool(row, "sim", r->sim);
		if (r->sim)
			json_set_u64(row, "cpus", br->c->cpus);
		json_set_str(row, "policy", policy_name(r->policy));
		json_set_str(row, "steal", steal_label(r));
		/* A policy that never finished collapsing has no time: null. */
		json_set_double(row, "collapse_ms", MED(r, collapse_ms));
		json_set_double(row, "max_hold_ms", MED(r, max_hold_ms));
		json_set_double(row, "max_hold_cpu_ms", MED(r, max_hold_cpu_ms));
		json_set_double(row, "mean_hold_us", MED(r, mean_hold_us));
		json_set_double(row, "p50_us", MED(r, p50_us));
		json_set_double(row, "p99_us", MED(r, p99_us));
		json_set_double(row, "avg_us", MED(r, avg_us));
		json_set_double(row, "max_us", MED(r, max_us));
		per = bench_doc_samples(row, "per_sample");
		for (unsigned int j = 0; j < r->nr; j++)
			json_push_new(per, json_sample(&r->s[j]));
	}
}

/* The rows: model ones per policy and steal policy, then the live kernel's (root). */
static void kh_rows(const struct bench_run *br, struct kh_result *res, bool live)
{
	const struct kh_opts *o = br->opts;
	unsigned int steals = bench_steals(br), policies = o->policies;

	for (const struct vml_word *p = vocab_next(&kh_policy_vocab, policies, NULL);
	     br->c->model && p; p = vocab_next(&kh_policy_vocab, policies, p))
		for (const struct vml_word *s = vocab_next(&steal_policy_vocab, steals, NULL); s;
		     s = vocab_next(&steal_policy_vocab, steals, s))
			res->rows[res->nr++] = (struct kh_row){
				.target = TARGET_MODEL, .policy = (enum kh_policy)p->value,
				.steal = (enum vml_steal_policy)s->value,
			};
	if (live)
		res->rows[res->nr++] = (struct kh_row){ .target = TARGET_LIVE,
							.policy = KH_MAINLINE };
	/* After the live row: a round's simulated samples may be charged what it measured. */
	for (const struct vml_word *p = vocab_next(&kh_policy_vocab, policies, NULL);
	     br->c->sim && p; p = vocab_next(&kh_policy_vocab, policies, p))
		for (const struct vml_word *s = vocab_next(&steal_policy_vocab, steals, NULL); s;
		     s = vocab_next(&steal_policy_vocab, steals, s))
			res->rows[res->nr++] = (struct kh_row){
				.target = TARGET_MODEL, .sim = true,
				.policy = (enum kh_policy)p->value,
				.steal = (enum vml_steal_policy)s->value,
			};
}

/*
 * What a simulated sample of round @smp is charged per VMA scanned: the
 * table's, or the round's live sample's longest hold (6.18 walks every
 * ineligible VMA in one hold) over the VMAs it covered. 0: not known.
 */
static uint64_t kh_scan_vma_ns(const struct kh_opts *o, const struct kh_result *res,
			       unsigned int smp)
{
	const struct kh_row *l = find_row(res->rows, res->nr, TARGET_LIVE, KH_MAINLINE, false);

	if (!res->vma_ns_from_live)
		return res->simcosts.kernel.scan_vma_ns;
	if (!l || l->nr <= smp || isnan(l->s[smp].max_hold_ms) || !o->skip_vmas)
		return 0;
	return (uint64_t)(l->s[smp].max_hold_ms * 1e6 / (double)(o->skip_vmas + o->uncollapsible +
								  o->ranges));
}

static const struct kh_row *first_sim_row(const struct kh_result *res)
{
	for (unsigned int i = 0; i < res->nr; i++)
		if (res->rows[i].sim)
			return &res->rows[i];
	return NULL;
}

static int kh_run(struct bench_run *br)
{
	const struct kh_opts *o = br->opts;
	const struct bench_common *c = br->c;
	struct kh_result *res = vml_zalloc(sizeof(*res));
	struct trace_session *ts = NULL;
	bool live = c->live;
	int mapper_cpu, scan_cpu, ret = 0;

	br->res = res;
	if (!res) {
		fprintf(stderr, "vmalock: bench khugepaged: out of memory\n");
		return -ENOMEM;
	}
	/* Before any thread: the session may mount tracefs in a namespace of ours. */
	if (live && geteuid()) {
		fprintf(stderr, "vmalock bench: khugepaged: the live row needs root (khugepaged's "
				"sysfs knobs and vm.max_map_count are set for the run); model rows "
				"only\n");
		live = false;
	}
	if (live) {
		struct trace_session_opts so = { .events = TRACE_EV_MMAP_LOCK, .buffer_kb = 65536 };
		int err = trace_session_open(&so, &ts);

		if (err) {
			const char *hint = trace_unavailable_hint(err);

			fprintf(stderr, "vmalock bench: khugepaged: live: no hold times: %s\n",
				hint ? hint : strerror(-err));
			ts = NULL;
		}
	}
	bench_pick_cpus(&mapper_cpu, &scan_cpu);
	if (c->sim) {
		if (!c->sim_costs)
			bench_progress(c->quiet, "khugepaged: measuring the simulated machine's "
				       "charges ...");
		ret = bench_sim_costs_get("vmalock bench khugepaged", c->sim_costs, NULL,
					  &res->simcosts);
		if (ret) {
			trace_session_close(ts);
			return ret;
		}
		res->vma_ns_from_live = !res->simcosts.kernel.scan_vma_ns;
		if (res->vma_ns_from_live && (!live || !ts)) {
			trace_session_close(ts);
			fprintf(stderr, "vmalock bench khugepaged: --cpus: the simulated rows need the "
					"kernel's cost of a VMA scanned: the live row with its hold "
					"times (root, tracefs) in the same run, or --sim-costs FILE with "
					"sim_costs.scan_vma_ns (an earlier run's --json)\n");
			return -EINVAL;
		}
	}
	kh_rows(br, res, live);
	if (!res->nr) {
		trace_session_close(ts);
		fprintf(stderr, "vmalock bench: khugepaged: nothing to run\n");
		return -EINVAL;
	}
	for (unsigned int i = 0; i < res->nr; i++) {
		res->rows[i].s = vml_zalloc(c->samples * sizeof(*res->rows[i].s));
		if (!res->rows[i].s) {
			trace_session_close(ts);
			return -ENOMEM;
		}
	}
	if (live && live_settings(o)) {
		vml_free(res->rows[--res->nr].s);	/* the live row goes; the model's stay */
		live = false;
	}
	/* Round-robin over the rows, so load drift hits every policy alike. */
	for (unsigned int smp = 0; smp < c->samples && !ret; smp++) {
		for (unsigned int i = 0; i < res->nr && !ret; i++) {
			struct kh_row *row = &res->rows[i];
			int err;

			bench_progress(c->quiet, "khugepaged: %s %s %s, sample %u/%u",
				       row->sim ? "sim" : target_kind_name(row->target),
				       policy_name(row->policy), steal_label(row), smp + 1,
				       c->samples);
			if (row->sim) {
				uint64_t vma_ns = kh_scan_vma_ns(o, res, smp);

				/* a live sample without holds (all collapsed before a scan): the last */
				if (!vma_ns && res->simcosts.kernel.scan_vma_ns) {
					vma_ns = res->simcosts.kernel.scan_vma_ns;
					if (row == first_sim_row(res))
						fprintf(stderr, "vmalock bench khugepaged: sim: the live "
								"sample of round %u has no hold time; "
								"its simulated samples are charged the "
								"last round's, %llu ns a VMA\n", smp + 1,
							(unsigned long long)vma_ns);
				}
				err = vma_ns ? sim_sample(o, row, &row->s[smp], &res->simcosts,
							  vma_ns, c->cpus,
							  c->sim_seed * 0xd1b54a32d192ed03ULL + smp) :
					       -ENODATA;
				if (!vma_ns)
					fprintf(stderr, "vmalock bench khugepaged: sim: the live "
							"sample of round %u has no hold time to "
							"charge\n", smp + 1);
				if (!err && res->vma_ns_from_live)
					res->simcosts.kernel.scan_vma_ns = vma_ns;	/* the last */
			} else if (row->target == TARGET_MODEL)
				err = model_sample(o, row, &row->s[smp], mapper_cpu, scan_cpu, NULL);
			else
				err = live_sample(o, &row->s[smp], mapper_cpu, ts);
			if (err) {
				bench_progress_done(c->quiet);
				fprintf(stderr, "vmalock: bench khugepaged: %s: %s\n",
					row->sim ? "sim" : target_kind_name(row->target),
					strerror(-err));
				ret = err;
			}
			row->nr = smp + 1;
		}
	}
	if (live)
		setting_pop_all();
	trace_session_close(ts);
	bench_progress_done(c->quiet);
	return ret;
}

static void kh_free(struct bench_run *br)
{
	struct kh_result *res = br->res;

	for (unsigned int i = 0; res && i < res->nr; i++)
		vml_free(res->rows[i].s);
	vml_free(res);
}

static int kh_check(const char *cmd, const struct bench_common *c, void *opts)
{
	const struct kh_opts *o = opts;

	if (o->mappers > 1 && !c->sim_only)
		return cli_usage_error(cmd, "--mappers %u: with --cpus N --sim-only (the live "
				       "child has one mapper, and this machine %ld CPUs)",
				       o->mappers, sysconf(_SC_NPROCESSORS_ONLN));
	if (o->mappers > c->cpus && c->sim_only)
		return cli_usage_error(cmd, "--mappers %u: at most one a CPU (--cpus %u)",
				       o->mappers, c->cpus);
	return 0;
}

static void kh_defaults(void *opts)
{
	struct kh_opts *o = opts;

	*o = (struct kh_opts){
		.skip_vmas = 100000,
		.ranges = 8,
		.scan_sleep_ms = 10,
		.policies = VOCAB_BIT(KH_MAINLINE) | VOCAB_BIT(KH_FIXED),
		.duration_s = 3,
		.seed = 1,
		.mappers = 1,
	};
}

#define K(f) offsetof(struct kh_opts, f)
static const struct cli_opt kh_opts_table[] = {
	{ "--skip-vmas", "N", cli_set_ulong, K(skip_vmas), 0, 4000000, NULL,
	  "ineligible VMAs before the ranges [100k]" },
	{ "--ranges", "N", cli_set_uint, K(ranges), 1, 4096, NULL,
	  "collapsible 2 MiB ranges [8]" },
	{ "--uncollapsible", "N", cli_set_uint, K(uncollapsible), 0, 4096, NULL,
	  "eligible 2 MiB ranges it cannot collapse (every PTE cleared by\n"
	  "a sub-PMD MADV_DONTNEED: more pte_none than max_ptes_none),\n"
	  "before the collapsible ones [0]" },
	{ "--scan-sleep", "MS", cli_set_uint, K(scan_sleep_ms), 1, 60000, NULL,
	  "sleep between wakeups [10]" },
	{ "--policy", "LIST", cli_set_words, K(policies), 0, 0, &kh_policy_vocab,
	  "scanner rows, a comma list of seed 003's fixes [both]:" },
	{ "--duration", "SECONDS", cli_set_seconds, K(duration_s), 0.001, 86400, NULL,
	  "time limit per sample [3]" },
	{ "--seed", "N", cli_set_u64, K(seed), 0, 0, NULL,
	  "the mapper's random stream [1]" },
	{ "--mappers", "N", cli_set_uint, K(mappers), 1, 256, NULL,
	  "mappers, each in a 16 MiB area of its own, with --sim-only (the\n"
	  "live child has one): simulated, mapper i on CPU i [1]" },
	CLI_OPT_END,
};
#undef K

const struct bench_scenario bench_khugepaged = {
	.name = "khugepaged",
	.question = "Seed 003: how long does khugepaged hold mmap_lock and take to collapse "
		    "ranges behind many ineligible VMAs, with 6.18's scanner, each 2026 fix and "
		    "all of them?",
	.rows = "a target, --policy and --steal policy: time to collapse, the scanner's "
		"mmap_lock holds, and the contending mapper's latency",
	.about = "The live row (root) is 6.18's khugepaged; the run sets vm.max_map_count\n"
		 "and khugepaged's scan_sleep_millisecs and restores them.",
	.opts = kh_opts_table,
	.opts_size = sizeof(struct kh_opts),
	.defaults = kh_defaults,
	.steals = VOCAB_BIT(VML_STEAL_KERNEL) | VOCAB_BIT(VML_STEAL_NOSTEAL_RETAKE) |
		  VOCAB_BIT(VML_STEAL_NOT_BEHIND_WRITER) | VOCAB_BIT(VML_STEAL_NEVER),
	.default_steals = VOCAB_BIT(VML_STEAL_NOSTEAL_RETAKE),
	.sim = true,
	.check = kh_check,
	.run = kh_run,
	.print = kh_print,
	.json = kh_json,
	.free = kh_free,
};
