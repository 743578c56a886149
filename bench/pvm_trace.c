// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pvm_trace.c - proc-vs-map's --trace (see pvm_trace.h): one tracefs
 * session for the live rows, the model's own trace for the model rows, one
 * analysis for both, and the table that puts them side by side.
 *
 * Live: the session records mmap_lock events of the child's mm only (a
 * kernel-side filter on the mm pointer) and sched_wakeup/sched_switch of the
 * child and our reader threads; it is read once the sample ends, so the
 * ring buffer is sized for a whole sample (events lost are reported).
 * Model: vml_trace_start() before the mapper starts, vml_trace_stop() after
 * it ends; the readers are still running but no longer measured.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pvm_trace.h"
#include "target/host.h"
#include "trace/emit.h"
#include "trace/session.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/json.h"

struct pvm_tracer {
	struct trace_session *s;	/* NULL: live rows are not traced */
	uint64_t handoff_ns;		/* the shortest wait after which hand-off can happen */
	uint64_t live_mm;
	uint64_t lost_before;
	bool model_sched;		/* this model sample's sched events come from tracefs */
};

int pvm_tracer_open(const struct bench_opts *o, struct pvm_tracer **out)
{
	const struct host_profile *hp;
	struct pvm_tracer *tr = vml_zalloc(sizeof(*tr));
	int ret;

	if (!tr)
		return -ENOMEM;
	tr->handoff_ns = 4 * NSEC_PER_MSEC;
	if (!host_profile_current(&hp) && hp->handoff_ns)
		tr->handoff_ns = hp->handoff_ns;
	if (o->live) {
		/* A whole sample must fit: ~150k events a second, ~40 bytes each. */
		double kb = 8192 + o->duration_s * 12288;
		struct trace_session_opts so = {
			.events = TRACE_EV_MMAP_LOCK | TRACE_EV_SCHED,
			.buffer_kb = kb > 262144 ? 262144 : (size_t)kb,
		};

		ret = trace_session_open(&so, &tr->s);
		if (ret) {
			const char *hint = trace_unavailable_hint(ret);

			fprintf(stderr, "vmalock bench: --trace: %s; the live rows are not traced, "
				"the model's are\n", hint ? hint : strerror(-ret));
			tr->s = NULL;
		}
	}
	*out = tr;
	return 0;
}

void pvm_tracer_close(struct pvm_tracer *tr)
{
	if (!tr)
		return;
	trace_session_close(tr->s);
	vml_trace_reset();
	vml_free(tr);
}

bool pvm_tracer_live(const struct pvm_tracer *tr)
{
	return tr && tr->s;
}

static bool in(pid_t pid, const pid_t *v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (v[i] == pid)
			return true;
	return false;
}

/* Add what @a says about the mapper and the readers on @mm into @dyn. */
static void extract(struct pvm_dyn *dyn, const struct trace_analysis *a, uint64_t mm,
		    pid_t mapper, const pid_t *readers, unsigned int nr)
{
	const struct trace_mm *tm = trace_analysis_find_mm(a, mm);

	dyn->events += a->events;
	dyn->lost += a->lost;
	if (!tm)
		return;
	for (size_t i = 0; i < tm->nr_tasks; i++) {
		const struct trace_task *t = &tm->tasks[i];

		if (t->pid == mapper) {
			trace_stat_merge(&dyn->wr_acquire, &t->acquire[TRACE_WRITE_MODE]);
			trace_stat_merge(&dyn->wr_wait, &t->wait[TRACE_WRITE_MODE]);
			trace_stat_merge(&dyn->wr_wake, &t->wake);
			trace_stat_merge(&dyn->wr_rel_wake, &t->release_wake);
			trace_stat_merge(&dyn->wr_run_acq, &t->run_acquire);
			dyn->wr_wakeups += t->wakeups;
			dyn->stolen_waits += t->stolen_waits;
			dyn->race_unwoken += t->race_unwoken;
			dyn->race_slow += t->race_slow;
			dyn->race_ran += t->race_ran;
			dyn->handoffs += t->handoffs;
		} else if (in(t->pid, readers, nr)) {
			trace_stat_merge(&dyn->rd_hold, &t->hold[TRACE_READ]);
			trace_stat_merge(&dyn->rd_gap, &t->gap);
			trace_stat_merge(&dyn->rd_granted, &t->granted);
			dyn->steals += t->steals;
		}
	}
}

void pvm_trace_model_start(struct pvm_tracer *tr)
{
	if (!tr)
		return;
	/*
	 * With a tracefs session, the model's wake-ups and context switches are
	 * the kernel's own sched events of its threads (the same events as the
	 * live rows'); its lock events are its own. Lock events of no mm
	 * (filter mm == 1), sched events of every task (the mapper's thread id
	 * is not known yet; ours are picked out afterwards).
	 */
	tr->model_sched = false;
	if (tr->s && !trace_session_set_mm(tr->s, 1) && !trace_session_set_pids(tr->s, NULL, 0) &&
	    !trace_session_discard(tr->s))
		tr->model_sched = true;
	vml_trace_start(0);
}

/* A growing array of events. */
struct evvec {
	struct trace_event *v;
	size_t n, cap;
	const pid_t *pids;	/* keep sched events of these only */
	unsigned int nr_pids;
	bool drop_sched;	/* keep no sched event */
};

static int evvec_add(const struct trace_event *ev, void *arg)
{
	struct evvec *e = arg;
	bool sched = ev->kind == TRACE_SCHED_WAKEUP || ev->kind == TRACE_SCHED_SWITCH;

	if (sched && (e->drop_sched || (e->pids && !in(ev->pid, e->pids, e->nr_pids))))
		return 0;
	if (e->n == e->cap) {
		size_t n = e->cap ? e->cap * 2 : 65536;
		struct trace_event *p = vml_realloc(e->v, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		e->v = p;
		e->cap = n;
	}
	e->v[e->n++] = *ev;
	return 0;
}

/* Feed @a and @b the merge (by time) of @x and @y. */
static int feed_merged(struct trace_analysis *a, struct trace_analysis *b,
		       const struct evvec *x, const struct evvec *y)
{
	size_t i = 0, j = 0;

	while (i < x->n || j < y->n) {
		const struct trace_event *ev;
		int ret;

		if (j == y->n || (i < x->n && x->v[i].ts <= y->v[j].ts))
			ev = &x->v[i++];
		else
			ev = &y->v[j++];
		ret = trace_analysis_feed(a, ev);
		if (!ret)
			ret = trace_analysis_feed(b, ev);
		if (ret && ret != -EINVAL)	/* -EINVAL: an event it does not take */
			return ret;
	}
	return 0;
}

int pvm_trace_model_end(struct pvm_tracer *tr, struct pvm_dyn *dyn, const void *mm,
			pid_t mapper, const pid_t *readers, unsigned int nr, double seconds,
			uint64_t handoffs_rwsem)
{
	struct trace_analysis am, av;
	uint64_t m = (uint64_t)(uintptr_t)mm, lost = 0;
	struct evvec own = { .drop_sched = tr && tr->model_sched }, kern = { 0 };
	pid_t *pids = NULL;
	const struct trace_mm *tv;
	int ret;

	if (!tr)
		return 0;
	vml_trace_stop();
	trace_analysis_init(&am, m);
	trace_analysis_init(&av, m | TRACE_VMA_TAG);
	am.handoff_ns = tr->handoff_ns;
	ret = vml_trace_collect(evvec_add, &own, &lost);
	if (!ret && tr->model_sched) {
		pids = vml_malloc((nr + 1) * sizeof(*pids));
		ret = pids ? 0 : -ENOMEM;
		if (pids) {
			pids[0] = mapper;
			memcpy(pids + 1, readers, nr * sizeof(*pids));
			kern.pids = pids;
			kern.nr_pids = nr + 1;
			ret = trace_session_poll(tr->s, true, evvec_add, &kern);
		}
	}
	if (!ret)
		ret = feed_merged(&am, &av, &own, &kern);
	if (!ret) {
		extract(dyn, &am, m, mapper, readers, nr);
		dyn->lost += lost;
		dyn->samples++;
		dyn->seconds += seconds;
		dyn->handoffs_rwsem += handoffs_rwsem;
		dyn->have_rwsem = true;
		tv = trace_analysis_find_mm(&av, m | TRACE_VMA_TAG);
		for (size_t i = 0; tv && i < tv->nr_tasks; i++)
			if (tv->tasks[i].pid == mapper)
				trace_stat_merge(&dyn->vma_wait, &tv->tasks[i].wait[TRACE_WRITE_MODE]);
	}
	trace_analysis_fini(&am);
	trace_analysis_fini(&av);
	vml_free(own.v);
	vml_free(kern.v);
	vml_free(pids);
	vml_trace_reset();
	return ret;
}

int pvm_trace_live_start(struct pvm_tracer *tr, pid_t child, const pid_t *readers,
			 unsigned int nr)
{
	pid_t *pids;
	int ret;

	if (!pvm_tracer_live(tr))
		return 0;
	pids = vml_malloc((nr + 1) * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	pids[0] = child;
	memcpy(pids + 1, readers, nr * sizeof(*pids));
	ret = trace_session_find_mm(tr->s, child, &tr->live_mm);
	if (!ret)
		ret = trace_session_set_mm(tr->s, tr->live_mm);
	if (!ret)
		ret = trace_session_set_pids(tr->s, pids, nr + 1);
	if (!ret)
		ret = trace_session_discard(tr->s);
	vml_free(pids);
	tr->lost_before = trace_session_lost(tr->s);
	return ret;
}

static int feed_one(const struct trace_event *ev, void *arg)
{
	int ret = trace_analysis_feed(arg, ev);

	return ret == -EINVAL ? 0 : ret;
}

int pvm_trace_live_end(struct pvm_tracer *tr, struct pvm_dyn *dyn, pid_t child,
		       const pid_t *readers, unsigned int nr, double seconds)
{
	struct trace_analysis a;
	int ret;

	if (!pvm_tracer_live(tr))
		return 0;
	trace_analysis_init(&a, tr->live_mm);
	a.handoff_ns = tr->handoff_ns;
	ret = trace_session_poll(tr->s, true, feed_one, &a);
	if (!ret) {
		extract(dyn, &a, tr->live_mm, child, readers, nr);
		dyn->samples++;
		dyn->seconds += seconds;
	}
	trace_analysis_fini(&a);
	return ret;
}

/* ---- the table ---- */

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

static double q_us(const struct trace_stat *st, double q)
{
	return us(trace_stat_quantile(st, q));
}

static void put(FILE *f, double v)
{
	if (v < 10)
		fprintf(f, " %6.2f", v);
	else if (v < 100000)
		fprintf(f, " %6.0f", v);
	else
		fprintf(f, " %6.0e", v);
}

void pvm_print_dynamics(FILE *f, const struct pvm_result *res)
{
	bool any = false;

	for (unsigned int k = 0; k < res->nr_rows; k++)
		any |= res->rows[k].dyn && res->rows[k].dyn->samples;
	if (!any)
		return;
	fprintf(f, "\n# lock dynamics from traces (--trace): the mmap_lock of the mapper's mm, all "
		   "samples together; times in us, p50/p99 within 2x (log2 buckets)\n"
		   "# hold: a reader's hold; gap: its release -> its next attempt; wait: the "
		   "mapper's contended write acquisitions (per s, p50, p99, max)\n"
		   "# steal/s: reads past the queued mapper; stoln%%: write waits a steal went past; "
		   "hoff/s: those >= %.1f ms (inferred hand-offs; [rwsem]: the model's own count)\n"
		   "# rlwk: a reader's release -> the waiting mapper's wake-up; wake: its wake-up -> "
		   "running (%s); runacq: its switch-in -> acquired\n"
		   "# race: at a reader's attempt while the mapper waits, %% of attempts that came "
		   "before the mapper was woken / while woken but not running / after it ran\n"
		   "# vma: the model mapper's waits for VMA readers (p50, max)\n",
		   res->tracer ? (double)res->tracer->handoff_ns / 1e6 : 4.0,
		   pvm_tracer_live(res->tracer) ? "the kernel's sched events on both targets" :
		   "live: sched events; model: its futex wake -> back from futex_wait");
	fprintf(f, "%-6s %-6s %-17s %3s %6s %6s %6s %6s %6s %6s %6s %6s %7s %6s %6s %7s %6s %6s "
		   "%6s %6s %-14s %6s %6s %5s\n",
		"target", "lock", "steal", "rd", "hold50", "hold99", "gap50", "gap99", "wait/s",
		"wait50", "wait99", "waitmx", "steal/s", "stoln%", "hoff/s", "[rwsem]", "rlwk50",
		"wake50", "wake99", "runacq", "race u/s/r %", "vma50", "vmamx", "lost");
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct pvm_row *row = &res->rows[k];
		const struct pvm_dyn *d = row->dyn;
		uint64_t races;
		char race[32];
		double s;

		if (!d || !d->samples)
			continue;
		s = d->seconds > 0 ? d->seconds : 1;
		fprintf(f, "%-6s %-6s %-17s %3u", target_kind_name(row->target),
			bench_lock_name(row->lock), bench_steal_name(row->steal), row->readers);
		put(f, q_us(&d->rd_hold, 0.5));
		put(f, q_us(&d->rd_hold, 0.99));
		put(f, q_us(&d->rd_gap, 0.5));
		put(f, q_us(&d->rd_gap, 0.99));
		put(f, (double)d->wr_wait.count / s);
		put(f, q_us(&d->wr_wait, 0.5));
		put(f, q_us(&d->wr_wait, 0.99));
		put(f, us(d->wr_wait.max_ns));
		fprintf(f, " %7.1f", (double)d->steals / s);
		put(f, d->wr_wait.count ? 100.0 * (double)d->stolen_waits / (double)d->wr_wait.count : 0);
		put(f, (double)d->handoffs / s);
		if (d->have_rwsem)
			fprintf(f, " %7.1f", (double)d->handoffs_rwsem / s);
		else
			fprintf(f, " %7s", "-");
		put(f, q_us(&d->wr_rel_wake, 0.5));
		put(f, q_us(&d->wr_wake, 0.5));
		put(f, q_us(&d->wr_wake, 0.99));
		put(f, q_us(&d->wr_run_acq, 0.5));
		races = d->race_unwoken + d->race_slow + d->race_ran;
		if (races)
			snprintf(race, sizeof(race), "%.0f/%.0f/%.0f",
				 100.0 * (double)d->race_unwoken / (double)races,
				 100.0 * (double)d->race_slow / (double)races,
				 100.0 * (double)d->race_ran / (double)races);
		else
			snprintf(race, sizeof(race), "-");
		fprintf(f, " %-14s", race);
		if (row->target == TARGET_MODEL) {
			put(f, q_us(&d->vma_wait, 0.5));
			put(f, us(d->vma_wait.max_ns));
		} else {
			fprintf(f, " %6s %6s", "-", "-");
		}
		fprintf(f, " %5llu\n", (unsigned long long)d->lost);
	}
}
