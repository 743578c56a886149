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
 * it ends; the readers are still running but no longer measured (the stop
 * waits for the events they were writing, src/sync/trace_emit.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "pvm_trace.h"
#include "host/host.h"
#include "sync/trace_emit.h"
#include "trace/session.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/json.h"

/* the mapper, up to 4 readers, our RCU callback worker and one to spare; 24 MiB each */
#define PVM_TRACE_POOL_BUFS 7
#define PVM_TRACE_POOL_EVENTS (512u << 10)

struct pvm_tracer {
	struct trace_session *s;	/* NULL: live rows are not traced */
	uint64_t handoff_ns;		/* the shortest wait after which hand-off can happen */
	uint64_t live_mm;
	uint64_t lost_before;
	bool model_sched;		/* this model sample's sched events come from tracefs */
	FILE *events;			/* --trace-events, or NULL */
	unsigned int nr_dumped;		/* samples written to it */
	char label[64];			/* the row of the sample being traced */
};

int pvm_tracer_open(const struct bench_common *c, double duration_s, struct pvm_tracer **out)
{
	const struct host_profile *hp;
	struct pvm_tracer *tr = vml_zalloc(sizeof(*tr));
	int ret;

	if (!tr)
		return -ENOMEM;
	if (c->trace_events) {
		tr->events = fopen(c->trace_events, "w");
		if (!tr->events) {
			ret = -errno;
			fprintf(stderr, "vmalock bench: --trace-events: cannot write '%s': %s\n",
				c->trace_events, strerror(-ret));
			vml_free(tr);
			return ret;
		}
		fprintf(tr->events, "# vmalock --trace events: per sample, time order; t_us from "
			"the sample's first event\n# t_us cpu pid comm event [mode] (lock: mmap_lock "
			"or vma; wakeup: by pid; switch: from pid)\n");
	}
	tr->handoff_ns = 4 * NSEC_PER_MSEC;
	if (!host_profile_current(&hp) && hp->handoff_ns)
		tr->handoff_ns = hp->handoff_ns;
	if (c->live || c->model) {
		/* A whole sample must fit: ~150k events a second, ~40 bytes each. */
		double kb = 8192 + duration_s * 12288;
		struct trace_session_opts so = {
			.events = TRACE_EV_MMAP_LOCK | TRACE_EV_SCHED,
			.buffer_kb = kb > 262144 ? 262144 : (size_t)kb,
		};

		ret = trace_session_open(&so, &tr->s);
		if (ret) {
			const char *hint = trace_unavailable_hint(ret);

			fprintf(stderr, "vmalock bench: --trace: %s; the live rows are not traced, "
				"the model's are from its own events only\n",
				hint ? hint : strerror(-ret));
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
	if (tr->events && fclose(tr->events))
		fprintf(stderr, "vmalock bench: --trace-events: %s\n", strerror(errno));
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
			trace_fine_merge(&dyn->leg_release_run, &t->release_run);
			trace_fine_merge(&dyn->leg_release_run_slept[0], &t->release_run_slept[0]);
			trace_fine_merge(&dyn->leg_release_run_slept[1], &t->release_run_slept[1]);
			trace_fine_merge(&dyn->leg_run_acquire, &t->run_acquire_fine);
			dyn->wr_wakeups += t->wakeups;
			dyn->stolen_waits += t->stolen_waits;
			dyn->race_unwoken += t->race_unwoken;
			dyn->race_slow += t->race_slow;
			dyn->race_ran += t->race_ran;
			for (int b = 0; b < 2; b++) {
				dyn->sleep_races[b] += t->sleep_races[b];
				dyn->sleep_races_won[b] += t->sleep_races_won[b];
			}
			dyn->handoffs += t->handoffs;
		} else if (in(t->pid, readers, nr)) {
			trace_stat_merge(&dyn->rd_hold, &t->hold[TRACE_READ]);
			trace_stat_merge(&dyn->rd_gap, &t->gap);
			trace_fine_merge(&dyn->leg_gap_woke, &t->gap_woke);
			trace_stat_merge(&dyn->rd_granted, &t->granted);
			dyn->steals += t->steals;
		}
	}
}

void pvm_trace_model_start(struct pvm_tracer *tr, bool sim)
{
	if (!tr)
		return;
	/*
	 * A simulated row: the model's own wake-ups and switch-ins, in
	 * virtual time, are all there is (the host's scheduler does not
	 * schedule its tasks).
	 */
	tr->model_sched = false;
	if (sim)
		goto start;
	/*
	 * With a tracefs session, the model's wake-ups and context switches are
	 * the kernel's own sched events of its threads (the same events as the
	 * live rows'); its lock events are its own. Lock events of no mm
	 * (filter mm == 1), sched events of every task (the mapper's thread id
	 * is not known yet; ours are picked out afterwards).
	 */
	if (tr->s && !trace_session_set_mm(tr->s, 1) && !trace_session_set_pids(tr->s, NULL, 0) &&
	    !trace_session_discard(tr->s))
		tr->model_sched = true;
	/*
	 * Buffers faulted in beforehand for the mapper and the readers: a
	 * first touch costs ~3 us on our VMs and would land inside holds and
	 * races (docs/findings/2026-12-01-page-walk-cost.md, "What it
	 * changed": without --trace).
	 */
start:
	vml_trace_set_pool(PVM_TRACE_POOL_BUFS, PVM_TRACE_POOL_EVENTS);
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

	if (sched && (e->drop_sched ||
		      (e->pids && !in(ev->pid, e->pids, e->nr_pids) &&
		       !(ev->kind == TRACE_SCHED_SWITCH && in(ev->other_pid, e->pids, e->nr_pids)))))
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

/*
 * Readers off the CPU while holding a lock: a reader's holds (mmap_lock of
 * @mm, or - model - any of its VMA locks) from its lock events, and the
 * context switches away from it (prev_pid) and back (next_pid). Each time
 * it is switched out holding one, the task that got its CPU is its
 * preempter, credited with the time until the reader ran again.
 */
struct offcpu {
	uint64_t mm;
	const pid_t *readers;
	unsigned int nr;
	struct {
		bool mm_held, vma_held;
		uint64_t off_ts;	/* 0: on the CPU */
		bool off_vma;		/* what it held when switched out */
		int32_t by_pid;
		char by_comm[TRACE_COMM_LEN];
	} r[64];
	struct pvm_dyn *dyn;
};

static void offcpu_credit(struct pvm_dyn *d, const char *comm, int32_t pid, uint64_t ns)
{
	unsigned int i;

	for (i = 0; i < d->nr_off_by; i++)
		if (d->off_by[i].pid == pid)
			break;
	if (i == d->nr_off_by) {
		char path[64];

		if (d->nr_off_by == PVM_OFF_BY_MAX)
			return;
		memset(&d->off_by[i], 0, sizeof(d->off_by[i]));
		d->off_by[i].pid = pid;
		/* A thread of ours (the model's RCU callback worker, ...): say so. */
		snprintf(path, sizeof(path), "/proc/self/task/%d", (int)pid);
		snprintf(d->off_by[i].comm, sizeof(d->off_by[i].comm), "%s%s",
			 pid > 0 && !access(path, F_OK) ? "self:" : "", comm);
		d->nr_off_by++;
	}
	d->off_by[i].count++;
	d->off_by[i].total_ns += ns;
	if (ns > d->off_by[i].max_ns)
		d->off_by[i].max_ns = ns;
}

static void offcpu_event(struct offcpu *o, const struct trace_event *ev)
{
	for (unsigned int i = 0; i < o->nr && i < 64; i++) {
		if (ev->kind == TRACE_SCHED_SWITCH) {
			if (ev->other_pid == o->readers[i] && (o->r[i].mm_held || o->r[i].vma_held) &&
			    ev->pid != o->readers[i]) {
				o->r[i].off_ts = ev->ts;
				o->r[i].off_vma = !o->r[i].mm_held;
				o->r[i].by_pid = ev->pid;
				memcpy(o->r[i].by_comm, ev->comm, TRACE_COMM_LEN);
			} else if (ev->pid == o->readers[i] && o->r[i].off_ts) {
				uint64_t ns = ev->ts > o->r[i].off_ts ? ev->ts - o->r[i].off_ts : 0;

				trace_stat_add(o->r[i].off_vma ? &o->dyn->rd_off_vma : &o->dyn->rd_off_mm,
					       ns);
				offcpu_credit(o->dyn, o->r[i].by_comm, o->r[i].by_pid, ns);
				o->r[i].off_ts = 0;
			}
			continue;
		}
		if (ev->pid != o->readers[i] || ev->kind == TRACE_SCHED_WAKEUP)
			continue;
		if (ev->mm == o->mm && ev->kind == TRACE_LOCK_ACQUIRED && (ev->flags & TRACE_SUCCESS))
			o->r[i].mm_held = true;
		else if (ev->mm == o->mm && ev->kind == TRACE_LOCK_RELEASED)
			o->r[i].mm_held = false;
		else if (ev->mm == (o->mm | TRACE_VMA_TAG) && ev->kind == TRACE_LOCK_ACQUIRED &&
			 (ev->flags & TRACE_SUCCESS))
			o->r[i].vma_held = true;
		else if (ev->mm == (o->mm | TRACE_VMA_TAG) && ev->kind == TRACE_LOCK_RELEASED)
			o->r[i].vma_held = false;
	}
}

/* One line of --trace-events for @ev, @t0 being the sample's first event. */
static void dump_event(FILE *f, const struct trace_event *ev, uint64_t t0, uint64_t mm)
{
	static const char *const kinds[] = {
		[TRACE_LOCK_START] = "start_locking", [TRACE_LOCK_ACQUIRED] = "acquire_returned",
		[TRACE_LOCK_RELEASED] = "released", [TRACE_SCHED_WAKEUP] = "sched_wakeup",
		[TRACE_SCHED_SWITCH] = "sched_switch", [TRACE_CONTENTION_BEGIN] = "contention_begin",
		[TRACE_CONTENTION_END] = "contention_end", [TRACE_LOST] = "LOST",
	};
	const char *kind = ev->kind < sizeof(kinds) / sizeof(kinds[0]) && kinds[ev->kind] ?
			   kinds[ev->kind] : "?";

	fprintf(f, "%12.3f %2u %7d %-15s %s", (double)(ev->ts - t0) / 1e3, ev->cpu, ev->pid,
		ev->comm[0] ? ev->comm : "-", kind);
	switch (ev->kind) {
	case TRACE_LOCK_START:
	case TRACE_LOCK_ACQUIRED:
	case TRACE_LOCK_RELEASED:
		fprintf(f, " %s %s%s", ev->mm == mm ? "mmap_lock" : "vma",
			ev->flags & TRACE_WRITE ? "write" : "read",
			ev->kind == TRACE_LOCK_ACQUIRED && !(ev->flags & TRACE_SUCCESS) ? " failed" : "");
		break;
	case TRACE_SCHED_WAKEUP:
		fprintf(f, " by %d", ev->other_pid);
		break;
	case TRACE_SCHED_SWITCH:
		fprintf(f, " from %d", ev->other_pid);
		break;
	case TRACE_LOST:
		fprintf(f, " %llu events", (unsigned long long)ev->mm);
		break;
	default:
		break;
	}
	fputc('\n', f);
}

void pvm_trace_label(struct pvm_tracer *tr, const char *target, const char *lock,
		     const char *steal)
{
	if (tr)
		snprintf(tr->label, sizeof(tr->label), "%s %s %s", target, lock, steal);
}

/* --trace-events: a header naming the sample's row and tasks. */
static void dump_header(struct pvm_tracer *tr, pid_t mapper, const pid_t *readers,
			unsigned int nr)
{
	if (!tr->events)
		return;
	fprintf(tr->events, "# sample %u: %s, mapper %d, %u reader%s", ++tr->nr_dumped, tr->label,
		(int)mapper, nr, nr == 1 ? "" : "s");
	for (unsigned int i = 0; i < nr; i++)
		fprintf(tr->events, "%s%d", i ? "," : " ", (int)readers[i]);
	fputc('\n', tr->events);
}

/* --trace-events: a sample's lines are all on disk, or the run stops saying why. */
static int dump_flush(struct pvm_tracer *tr)
{
	errno = 0;
	if (!tr->events || (!fflush(tr->events) && !ferror(tr->events)))
		return 0;
	fprintf(stderr, "vmalock bench: --trace-events: writing: %s\n",
		strerror(errno ? errno : EIO));
	return -EIO;
}

/*
 * Feed @a, @b (if not NULL) and @o the merge (by time) of @x and @y; write
 * each event to @dump too, if not NULL (@mm: the mm's mmap_lock).
 */
static int feed_merged(struct trace_analysis *a, struct trace_analysis *b, struct offcpu *o,
		       const struct evvec *x, const struct evvec *y, FILE *dump)
{
	size_t i = 0, j = 0;
	uint64_t t0 = 0;

	while (i < x->n || j < y->n) {
		const struct trace_event *ev;
		int ret;

		if (j == y->n || (i < x->n && x->v[i].ts <= y->v[j].ts))
			ev = &x->v[i++];
		else
			ev = &y->v[j++];
		if (dump) {
			if (!t0)
				t0 = ev->ts;
			dump_event(dump, ev, t0, o->mm);
		}
		offcpu_event(o, ev);
		ret = trace_analysis_feed(a, ev);
		if (!ret && b)
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
	if (!ret) {
		struct offcpu *oc = vml_zalloc(sizeof(*oc));

		ret = -ENOMEM;
		if (oc) {
			*oc = (struct offcpu){ .mm = m, .readers = readers, .nr = nr, .dyn = dyn };
			dump_header(tr, mapper, readers, nr);
			ret = feed_merged(&am, &av, oc, &own, &kern, tr->events);
			if (!ret)
				ret = dump_flush(tr);
			vml_free(oc);
		}
	}
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

int pvm_trace_live_end(struct pvm_tracer *tr, struct pvm_dyn *dyn, pid_t child,
		       const pid_t *readers, unsigned int nr, double seconds)
{
	struct evvec ev = { 0 }, none = { 0 };
	struct trace_analysis a;
	struct offcpu *oc;
	int ret;

	if (!pvm_tracer_live(tr))
		return 0;
	trace_analysis_init(&a, tr->live_mm);
	a.handoff_ns = tr->handoff_ns;
	oc = vml_zalloc(sizeof(*oc));
	ret = oc ? trace_session_poll(tr->s, true, evvec_add, &ev) : -ENOMEM;
	if (!ret) {
		*oc = (struct offcpu){ .mm = tr->live_mm, .readers = readers, .nr = nr, .dyn = dyn };
		dump_header(tr, child, readers, nr);
		ret = feed_merged(&a, NULL, oc, &ev, &none, tr->events);
		if (!ret)
			ret = dump_flush(tr);
	}
	vml_free(oc);
	vml_free(ev.v);
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

static const struct bench_col dyn_columns[] = {
	BENCH_TEXT("target", -6), BENCH_TEXT("lock", -6), BENCH_TEXT("steal", -17),
	BENCH_NUM("rd", 3, FIXED, 0), BENCH_NUM("hold50", 6, LOG, 0),
	BENCH_NUM("hold99", 6, LOG, 0), BENCH_NUM("gap50", 6, LOG, 0),
	BENCH_NUM("gap99", 6, LOG, 0), BENCH_NUM("wait/s", 6, LOG, 0),
	BENCH_NUM("wait50", 6, LOG, 0), BENCH_NUM("wait99", 6, LOG, 0),
	BENCH_NUM("waitmx", 6, LOG, 0), BENCH_NUM("steal/s", 7, FIXED, 1),
	BENCH_NUM("stoln%", 6, LOG, 0), BENCH_NUM("hoff/s", 6, LOG, 0),
	BENCH_NUM("[rwsem]", 7, FIXED, 1), BENCH_NUM("rlwk50", 6, LOG, 0),
	BENCH_NUM("wake50", 6, LOG, 0), BENCH_NUM("wake99", 6, LOG, 0),
	BENCH_NUM("runacq", 6, LOG, 0), BENCH_TEXT("race u/s/r %", -14),
	BENCH_TEXT("won% s/l", -9), BENCH_NUM("vma50", 6, LOG, 0), BENCH_NUM("vmamx", 6, LOG, 0),
	BENCH_NUM("lost", 5, FIXED, 0),
	BENCH_COLS_END,
};

static int by_total(const void *a, const void *b)
{
	const struct pvm_off_by *x = a, *y = b;

	return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : 0;
}

/* Readers switched out while holding a lock, and by whom (kernel sched events only). */
static void print_offcpu(FILE *f, struct pvm_result *res)
{
	bool any = false;

	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct pvm_row *row = &res->rows[k];
		struct pvm_dyn *d = row->dyn;

		if (!d || !d->samples || !(d->rd_off_mm.count + d->rd_off_vma.count))
			continue;
		if (!any)
			fprintf(f, "# readers switched out while holding a lock (us: count, p50, max "
				   "of the time until they ran again) and who took their CPU "
				   "(comm/pid: times, total ms, max ms):\n");
		any = true;
		qsort(d->off_by, d->nr_off_by, sizeof(d->off_by[0]), by_total);
		fprintf(f, "%-6s %-6s %-17s %3u  mmap_lock %llu, %.0f, %.0f; VMA lock %llu, %.0f, "
			   "%.0f; by", target_kind_name(row->target), pvm_lock_label(row),
			pvm_steal_label(row), row->readers,
			(unsigned long long)d->rd_off_mm.count, q_us(&d->rd_off_mm, 0.5),
			us(d->rd_off_mm.max_ns), (unsigned long long)d->rd_off_vma.count,
			q_us(&d->rd_off_vma, 0.5), us(d->rd_off_vma.max_ns));
		for (unsigned int i = 0; i < d->nr_off_by && i < 4; i++)
			fprintf(f, "%s %s/%d %llu, %.1f, %.1f", i ? ";" : "", d->off_by[i].comm,
				(int)d->off_by[i].pid, (unsigned long long)d->off_by[i].count,
				(double)d->off_by[i].total_ns / 1e6, (double)d->off_by[i].max_ns / 1e6);
		fprintf(f, "\n");
	}
}

void pvm_print_dynamics(FILE *f, struct pvm_result *res)
{
	struct bench_table t;
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
		   "# won%%: of the releases that left the lock free while the mapper slept in its "
		   "wait, %% it took next, when it had slept < %.0f us / longer (needs its "
		   "switch-outs: root)\n"
		   "# vma: the model mapper's waits for VMA readers (p50, max)\n",
		   res->tracer ? (double)res->tracer->handoff_ns / 1e6 : 4.0,
		   pvm_tracer_live(res->tracer) ? "the kernel's sched events on both targets" :
		   "live: sched events; model: its futex wake -> back from futex_wait",
		   (double)TRACE_SHORT_SLEEP_NS / 1e3);
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		if (res->rows[k].sim && res->rows[k].dyn && res->rows[k].dyn->samples) {
			fprintf(f, "# sim: the model's own events in virtual time; wake: its futex "
				   "wake -> back from futex_wait on its simulated CPU\n");
			break;
		}
	}
	bench_table_start(&t, f, dyn_columns, 0);
	for (unsigned int k = 0; k < res->nr_rows; k++) {
		const struct pvm_row *row = &res->rows[k];
		const struct pvm_dyn *d = row->dyn;
		uint64_t races;
		char race[32];
		double s;

		if (!d || !d->samples)
			continue;
		s = d->seconds > 0 ? d->seconds : 1;
		bench_text(&t, row->sim ? "sim" : target_kind_name(row->target));
		bench_text(&t, pvm_lock_label(row));
		bench_text(&t, pvm_steal_label(row));
		bench_num(&t, row->readers);
		bench_num(&t, q_us(&d->rd_hold, 0.5));
		bench_num(&t, q_us(&d->rd_hold, 0.99));
		bench_num(&t, q_us(&d->rd_gap, 0.5));
		bench_num(&t, q_us(&d->rd_gap, 0.99));
		bench_num(&t, (double)d->wr_wait.count / s);
		bench_num(&t, q_us(&d->wr_wait, 0.5));
		bench_num(&t, q_us(&d->wr_wait, 0.99));
		bench_num(&t, us(d->wr_wait.max_ns));
		bench_num(&t, (double)d->steals / s);
		bench_num(&t, d->wr_wait.count ?
			  100.0 * (double)d->stolen_waits / (double)d->wr_wait.count : 0);
		bench_num(&t, (double)d->handoffs / s);
		bench_num(&t, d->have_rwsem ? (double)d->handoffs_rwsem / s : NAN);
		bench_num(&t, q_us(&d->wr_rel_wake, 0.5));
		bench_num(&t, q_us(&d->wr_wake, 0.5));
		bench_num(&t, q_us(&d->wr_wake, 0.99));
		bench_num(&t, q_us(&d->wr_run_acq, 0.5));
		races = d->race_unwoken + d->race_slow + d->race_ran;
		if (races)
			snprintf(race, sizeof(race), "%.0f/%.0f/%.0f",
				 100.0 * (double)d->race_unwoken / (double)races,
				 100.0 * (double)d->race_slow / (double)races,
				 100.0 * (double)d->race_ran / (double)races);
		else
			snprintf(race, sizeof(race), "-");
		bench_text(&t, race);
		if (d->sleep_races[0] || d->sleep_races[1]) {
			char won[2][8];

			for (int b = 0; b < 2; b++)
				if (d->sleep_races[b])
					snprintf(won[b], sizeof(won[b]), "%.0f",
						 100.0 * (double)d->sleep_races_won[b] /
						 (double)d->sleep_races[b]);
				else
					snprintf(won[b], sizeof(won[b]), "-");
			snprintf(race, sizeof(race), "%s/%s", won[0], won[1]);
		} else {
			snprintf(race, sizeof(race), "-");
		}
		bench_text(&t, race);
		if (row->target == TARGET_MODEL) {
			bench_num(&t, q_us(&d->vma_wait, 0.5));
			bench_num(&t, us(d->vma_wait.max_ns));
		} else {
			bench_text(&t, "-");
			bench_text(&t, "-");
		}
		bench_num(&t, (double)d->lost);
		bench_row_end(&t);
	}
	print_offcpu(f, res);
}
