// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * analysis.c - waits, holds and blame from lock events (see analysis.h).
 *
 * The bookkeeping, per mm: the tasks holding the lock now (->holders) and
 * the tasks waiting now (->waiters), each with the time its hold or wait
 * began. An overlap between a hold and a wait is credited when the first of
 * the two ends:
 *
 *   hold ends (release, downgrade) at t: every waiter w gets, for this
 *       holder, t - max(hold_start, w.wait_start);
 *   wait ends (acquire_returned) at t: every holder h still holding gives
 *       the waiter t - max(h.hold_start, wait_start).
 *
 * So each (hold, wait) pair is credited exactly once, whichever ends first,
 * and a pair that never overlapped is never credited (its hold ended before
 * the wait began, so it is no longer in ->holders). The credits of one wait
 * collect in the waiter's ->cur list, one entry per (holder, mode), and are
 * merged into its ->blame list when the wait ends.
 *
 * Tasks are found by (mm, pid) in an open-addressing table of indices (the
 * per-mm task arrays move when they grow, so nothing holds pointers across
 * a feed). Waiting tasks are also listed globally for the sched events,
 * which carry no mm.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/analysis.h"
#include "util/alloc.h"
#include "util/compiler.h"

struct trace_slot {
	uint64_t mm;
	int32_t pid;		/* 0: empty (pid 0, the idle task, takes no mmap_lock) */
	uint32_t mm_idx, task_idx;
};

struct trace_ref {
	uint32_t mm_idx, task_idx;
};

unsigned int trace_hist_bucket(uint64_t ns)
{
	unsigned int b = ns ? 63 - (unsigned int)__builtin_clzll(ns) : 0;

	return b < TRACE_HIST_BUCKETS ? b : TRACE_HIST_BUCKETS - 1;
}

void trace_stat_add(struct trace_stat *st, uint64_t ns)
{
	st->count++;
	st->total_ns += ns;
	if (ns > st->max_ns)
		st->max_ns = ns;
	st->hist[trace_hist_bucket(ns)]++;
}

void trace_stat_merge(struct trace_stat *dst, const struct trace_stat *src)
{
	dst->count += src->count;
	dst->total_ns += src->total_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	for (unsigned int b = 0; b < TRACE_HIST_BUCKETS; b++)
		dst->hist[b] += src->hist[b];
}

void trace_fine_add(struct trace_fine *f, uint64_t ns)
{
	uint64_t b = ns / TRACE_FINE_NS;

	f->count++;
	f->n[b < TRACE_FINE_BUCKETS ? b : TRACE_FINE_BUCKETS - 1]++;
}

void trace_fine_merge(struct trace_fine *dst, const struct trace_fine *src)
{
	dst->count += src->count;
	for (unsigned int b = 0; b < TRACE_FINE_BUCKETS; b++)
		dst->n[b] += src->n[b];
}

uint64_t trace_fine_quantile(const struct trace_fine *f, double q)
{
	double want = q * (double)f->count, seen = 0;

	if (!f->count)
		return 0;
	for (unsigned int b = 0; b < TRACE_FINE_BUCKETS; b++) {
		if (f->n[b] && seen + f->n[b] >= want) {
			double frac = (want - seen) / f->n[b];

			return (uint64_t)((b + (frac > 0 ? frac : 0)) * TRACE_FINE_NS);
		}
		seen += f->n[b];
	}
	return (uint64_t)TRACE_FINE_BUCKETS * TRACE_FINE_NS;
}

uint64_t trace_stat_quantile(const struct trace_stat *st, double q)
{
	uint64_t want, seen = 0;

	if (!st->count)
		return 0;
	if (q < 0)
		q = 0;
	want = (uint64_t)(q * (double)st->count);
	if (want >= st->count)
		want = st->count - 1;
	for (unsigned int b = 0; b < TRACE_HIST_BUCKETS; b++) {
		seen += st->hist[b];
		if (seen > want) {
			uint64_t hi = b + 1 < 64 ? (1ULL << (b + 1)) - 1 : UINT64_MAX;

			return VML_MIN(hi, st->max_ns);
		}
	}
	return st->max_ns;
}

void trace_task_waits(const struct trace_task *t, struct trace_stat *out)
{
	memset(out, 0, sizeof(*out));
	trace_stat_merge(out, &t->wait[TRACE_READ]);
	trace_stat_merge(out, &t->wait[TRACE_WRITE_MODE]);
}

void trace_analysis_init(struct trace_analysis *a, uint64_t mm_filter)
{
	memset(a, 0, sizeof(*a));
	a->mm_filter = mm_filter;
}

void trace_analysis_fini(struct trace_analysis *a)
{
	for (size_t m = 0; m < a->nr_mms; m++) {
		struct trace_mm *mm = &a->mms[m];

		for (size_t i = 0; i < mm->nr_tasks; i++) {
			vml_free(mm->tasks[i].blame);
			vml_free(mm->tasks[i].cur);
		}
		vml_free(mm->tasks);
		vml_free(mm->holders);
		vml_free(mm->waiters);
	}
	vml_free(a->mms);
	vml_free(a->slots);
	vml_free(a->waiting);
	memset(a, 0, sizeof(*a));
}

/* Grow *@p (of *@cap elements of @size) to hold at least @need. Return: 0 or -ENOMEM. */
static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 4;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = vml_realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static size_t slot_hash(uint64_t mm, int32_t pid, size_t mask)
{
	uint64_t h = (mm >> 4) ^ ((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ULL);

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	return (size_t)h & mask;
}

static struct trace_slot *slot_find(const struct trace_analysis *a, uint64_t mm, int32_t pid)
{
	size_t mask, i;

	if (!a->nr_slots)
		return NULL;
	mask = a->nr_slots - 1;
	/* Ends: the table is never more than half full, so an empty slot comes. */
	for (i = slot_hash(mm, pid, mask);; i = (i + 1) & mask) {
		struct trace_slot *s = &a->slots[i];

		if (!s->pid)
			return s;
		if (s->mm == mm && s->pid == pid)
			return s;
	}
}

static int slots_grow(struct trace_analysis *a)
{
	size_t n = a->nr_slots ? a->nr_slots * 2 : 64;
	struct trace_slot *old = a->slots;
	size_t old_n = a->nr_slots;

	a->slots = vml_zalloc(n * sizeof(*a->slots));
	if (!a->slots) {
		a->slots = old;
		return -ENOMEM;
	}
	a->nr_slots = n;
	for (size_t i = 0; i < old_n; i++)
		if (old[i].pid)
			*slot_find(a, old[i].mm, old[i].pid) = old[i];
	vml_free(old);
	return 0;
}

static struct trace_mm *mm_get(struct trace_analysis *a, uint64_t mm, uint32_t *idx)
{
	for (size_t i = 0; i < a->nr_mms; i++) {
		if (a->mms[i].mm == mm) {
			*idx = (uint32_t)i;
			return &a->mms[i];
		}
	}
	if (grow((void **)&a->mms, &a->cap_mms, a->nr_mms + 1, sizeof(*a->mms)))
		return NULL;
	memset(&a->mms[a->nr_mms], 0, sizeof(*a->mms));
	a->mms[a->nr_mms].mm = mm;
	*idx = (uint32_t)a->nr_mms;
	return &a->mms[a->nr_mms++];
}

const struct trace_mm *trace_analysis_find_mm(const struct trace_analysis *a, uint64_t mm)
{
	for (size_t i = 0; i < a->nr_mms; i++)
		if (a->mms[i].mm == mm)
			return &a->mms[i];
	return NULL;
}

static void task_name(struct trace_task *t, const struct trace_event *ev)
{
	if (ev->comm[0]) {
		memcpy(t->comm, ev->comm, TRACE_COMM_LEN);
		t->comm[TRACE_COMM_LEN - 1] = '\0';
	}
	if (ev->tgid)
		t->tgid = ev->tgid;
}

/*
 * The task of @ev->pid on @ev->mm, created if new, with *@mi its mm's index.
 * Return: NULL on allocation failure (nothing changed).
 */
static struct trace_task *task_get(struct trace_analysis *a, const struct trace_event *ev,
				   uint32_t *mi)
{
	struct trace_slot *s;
	struct trace_mm *mm;
	struct trace_task *t;

	s = slot_find(a, ev->mm, ev->pid);
	if (s && s->pid) {
		*mi = s->mm_idx;
		t = &a->mms[s->mm_idx].tasks[s->task_idx];
		task_name(t, ev);
		return t;
	}
	if ((a->used_slots + 1) * 2 > a->nr_slots && slots_grow(a))
		return NULL;
	mm = mm_get(a, ev->mm, mi);
	if (!mm || grow((void **)&mm->tasks, &mm->cap_tasks, mm->nr_tasks + 1,
			sizeof(*mm->tasks)))
		return NULL;
	t = &mm->tasks[mm->nr_tasks];
	memset(t, 0, sizeof(*t));
	t->pid = ev->pid;
	task_name(t, ev);
	s = slot_find(a, ev->mm, ev->pid);
	s->mm = ev->mm;
	s->pid = ev->pid;
	s->mm_idx = *mi;
	s->task_idx = (uint32_t)mm->nr_tasks++;
	a->used_slots++;
	return t;
}

static uint64_t since(uint64_t t, uint64_t from)
{
	return t > from ? t - from : 0;
}

/* Remove @v from the array @arr of *@nr. */
static void idx_remove(uint32_t *arr, size_t *nr, uint32_t v)
{
	for (size_t i = 0; i < *nr; i++) {
		if (arr[i] == v) {
			arr[i] = arr[--*nr];
			return;
		}
	}
}

static void waiting_remove(struct trace_analysis *a, uint32_t mi, uint32_t ti)
{
	for (size_t i = 0; i < a->nr_waiting; i++) {
		if (a->waiting[i].mm_idx == mi && a->waiting[i].task_idx == ti) {
			a->waiting[i] = a->waiting[--a->nr_waiting];
			return;
		}
	}
}

/* Find (pid, write) in @list of @nr, appending it (if room was reserved) when absent. */
static struct trace_blame *blame_entry(struct trace_blame *list, size_t *nr,
				       const struct trace_task *h, bool write)
{
	for (size_t i = 0; i < *nr; i++)
		if (list[i].pid == h->pid && list[i].write == write)
			return &list[i];
	memset(&list[*nr], 0, sizeof(*list));
	list[*nr].pid = h->pid;
	list[*nr].write = write;
	return &list[(*nr)++];
}

/*
 * Make room for one more entry in every waiter's ->cur (before a hold ends)
 * or in @t's ->cur for every holder (before a wait ends), so that crediting
 * cannot fail half-way. Return: 0 or -ENOMEM.
 */
static int reserve_cur(struct trace_task *t, size_t more)
{
	return grow((void **)&t->cur, &t->cap_cur, t->nr_cur + more, sizeof(*t->cur));
}

/* Credit @h's hold (mode @write) with @ns of @w's open wait; no overlap, no credit. */
static void credit(struct trace_task *w, const struct trace_task *h, bool write, uint64_t ns)
{
	struct trace_blame *b;

	if (!ns)
		return;
	b = blame_entry(w->cur, &w->nr_cur, h, write);

	memcpy(b->comm, h->comm, TRACE_COMM_LEN);
	b->tgid = h->tgid;
	b->total_ns += ns;
}

/* The lock came free at @ts: a race opens for each writer asleep in its wait. */
static void open_sleep_races(struct trace_mm *mm, uint64_t ts)
{
	for (size_t i = 0; i < mm->nr_waiters; i++) {
		struct trace_task *w = &mm->tasks[mm->waiters[i]];

		if (w->st_wait - 1 == TRACE_WRITE_MODE && w->asleep_ts)
			w->race_open = 1 + (since(ts, w->asleep_ts) >= TRACE_SHORT_SLEEP_NS);
	}
}

/* Task @ti took the lock: the open races end, won by @ti if it is theirs. */
static void close_sleep_races(struct trace_mm *mm, uint32_t ti)
{
	for (size_t i = 0; i < mm->nr_waiters; i++) {
		struct trace_task *w = &mm->tasks[mm->waiters[i]];

		if (!w->race_open)
			continue;
		w->sleep_races[w->race_open - 1]++;
		if (mm->waiters[i] == ti)
			w->sleep_races_won[w->race_open - 1]++;
		w->race_open = 0;
	}
}

/*
 * End @t's hold at @ts (a release, or the write half of a downgrade):
 * credit every waiter, account the hold. Return: 0 or -ENOMEM (nothing done).
 */
static int hold_end(struct trace_analysis *a, uint32_t mi, uint32_t ti, uint64_t ts)
{
	struct trace_mm *mm = &a->mms[mi];
	struct trace_task *t = &mm->tasks[ti];
	bool write = t->st_hold - 1 == TRACE_WRITE_MODE;

	for (size_t i = 0; i < mm->nr_waiters; i++)
		if (mm->waiters[i] != ti && reserve_cur(&mm->tasks[mm->waiters[i]], 1))
			return -ENOMEM;
	for (size_t i = 0; i < mm->nr_waiters; i++) {
		struct trace_task *w = &mm->tasks[mm->waiters[i]];

		if (mm->waiters[i] == ti)
			continue;
		credit(w, t, write, since(ts, VML_MAX(t->hold_start, w->wait_start)));
	}
	trace_stat_add(&t->hold[write], since(ts, t->hold_start));
	t->st_hold = 0;
	mm->last_free_ts = VML_MAX(mm->last_free_ts, ts);
	idx_remove(mm->holders, &mm->nr_holders, ti);
	if (!write) {
		t->have_release = true;
		t->release_ts = ts;
		t->release_woke = false;	/* until a sleeping writer's wake-up names it */
	}
	return 0;
}

static int hold_begin(struct trace_analysis *a, uint32_t mi, uint32_t ti, bool write, uint64_t ts)
{
	struct trace_mm *mm = &a->mms[mi];
	struct trace_task *t;

	if (grow((void **)&mm->holders, &mm->cap_holders, mm->nr_holders + 1,
		 sizeof(*mm->holders)))
		return -ENOMEM;
	t = &mm->tasks[ti];
	t->st_hold = 1 + write;
	t->hold_start = ts;
	mm->holders[mm->nr_holders++] = ti;
	return 0;
}

/* Drop @t's open wait without accounting it. */
static void wait_drop(struct trace_analysis *a, uint32_t mi, uint32_t ti)
{
	struct trace_mm *mm = &a->mms[mi];

	mm->tasks[ti].st_wait = 0;
	mm->tasks[ti].nr_cur = 0;
	idx_remove(mm->waiters, &mm->nr_waiters, ti);
	waiting_remove(a, mi, ti);
}

/*
 * End @t's wait at @ts: credit the holders still holding, account it;
 * *@contended: another task held the lock during it, or @t was woken.
 */
static int wait_end(struct trace_analysis *a, uint32_t mi, uint32_t ti, uint64_t ts,
		    bool *contended)
{
	struct trace_mm *mm = &a->mms[mi];
	struct trace_task *t = &mm->tasks[ti];

	if (reserve_cur(t, mm->nr_holders) ||
	    grow((void **)&t->blame, &t->cap_blame, t->nr_blame + t->nr_cur + mm->nr_holders,
		 sizeof(*t->blame)))
		return -ENOMEM;
	for (size_t i = 0; i < mm->nr_holders; i++) {
		const struct trace_task *h = &mm->tasks[mm->holders[i]];

		if (mm->holders[i] == ti)
			continue;
		credit(t, h, h->st_hold - 1 == TRACE_WRITE_MODE,
		       since(ts, VML_MAX(h->hold_start, t->wait_start)));
	}
	if (t->st_wait - 1 == TRACE_READ && !t->wait_woken) {
		/* Readers share: a read hold delayed this reader only if it slept. */
		size_t k = 0;

		for (size_t i = 0; i < t->nr_cur; i++)
			if (t->cur[i].write)
				t->cur[k++] = t->cur[i];
		t->nr_cur = k;
	}
	trace_stat_add(&t->acquire[t->st_wait - 1], since(ts, t->wait_start));
	*contended = t->nr_cur || t->wait_woken;
	if (*contended)
		trace_stat_add(&t->wait[t->st_wait - 1], since(ts, t->wait_start));
	if (*contended && !t->wait_woken && t->st_wait - 1 == TRACE_WRITE_MODE)
		trace_stat_add(&t->spun, since(ts, t->wait_start));
	if (t->st_wait - 1 == TRACE_WRITE_MODE && t->wait_steals) {
		t->stolen_waits++;
		if (a->handoff_ns && since(ts, t->wait_start) >= a->handoff_ns)
			t->handoffs++;
	}
	for (size_t i = 0; i < t->nr_cur; i++) {
		const struct trace_blame *c = &t->cur[i];
		struct trace_blame *b;
		size_t n = t->nr_blame, j;

		for (j = 0; j < n; j++)
			if (t->blame[j].pid == c->pid && t->blame[j].write == c->write)
				break;
		if (j == n) {
			b = &t->blame[t->nr_blame++];
			*b = *c;
			b->waits = 0;
			b->total_ns = 0;
			b->max_ns = 0;
		} else {
			b = &t->blame[j];
			memcpy(b->comm, c->comm, TRACE_COMM_LEN);
			if (c->tgid)
				b->tgid = c->tgid;
		}
		b->waits++;
		b->total_ns += c->total_ns;
		b->max_ns = VML_MAX(b->max_ns, c->total_ns);
	}
	wait_drop(a, mi, ti);
	return 0;
}

static int on_start(struct trace_analysis *a, const struct trace_event *ev)
{
	bool write = ev->flags & TRACE_WRITE;
	struct trace_task *t;
	struct trace_mm *mm;
	uint32_t mi, ti;
	int ret;

	t = task_get(a, ev, &mi);
	if (!t)
		return -ENOMEM;
	mm = &a->mms[mi];
	ti = (uint32_t)(t - mm->tasks);
	if (grow((void **)&mm->waiters, &mm->cap_waiters, mm->nr_waiters + 1,
		 sizeof(*mm->waiters)) ||
	    grow((void **)&a->waiting, &a->cap_waiting, a->nr_waiting + 1, sizeof(*a->waiting)))
		return -ENOMEM;
	if (t->st_hold) {	/* its release was lost: end the hold here */
		ret = hold_end(a, mi, ti, ev->ts);
		if (ret)
			return ret;
		a->inconsistent++;
	}
	if (t->st_wait) {	/* its acquire_returned was lost */
		wait_drop(a, mi, ti);
		a->inconsistent++;
	}
	if (t->have_release) {
		trace_stat_add(&t->gap, since(ev->ts, t->release_ts));
		if (t->release_woke)
			trace_fine_add(&t->gap_woke, since(ev->ts, t->release_ts));
		t->have_release = false;
	}
	for (size_t i = 0; !write && i < mm->nr_waiters; i++) {
		struct trace_task *w = &mm->tasks[mm->waiters[i]];

		if (w->st_wait - 1 != TRACE_WRITE_MODE || mm->last_free_ts <= w->wait_start)
			continue;
		if (w->ran_ts > mm->last_free_ts)
			w->race_ran++;
		else if (w->woken && w->woken_ts >= mm->last_free_ts)
			w->race_slow++;
		else
			w->race_unwoken++;
	}
	t->st_wait = 1 + write;
	t->wait_start = ev->ts;
	t->wait_steals = 0;
	t->ran_ts = 0;
	t->asleep_ts = 0;
	t->race_open = 0;
	t->woken = false;
	t->wait_woken = false;
	t->nr_cur = 0;
	mm->waiters[mm->nr_waiters++] = ti;
	a->waiting[a->nr_waiting++] = (struct trace_ref){ mi, ti };
	return 0;
}

static int on_acquired(struct trace_analysis *a, const struct trace_event *ev)
{
	bool write = ev->flags & TRACE_WRITE, success = ev->flags & TRACE_SUCCESS;
	bool contended = false;
	uint64_t since_ts = ev->ts, wait_start = 0;
	struct trace_task *t;
	uint32_t mi, ti;
	int ret;

	t = task_get(a, ev, &mi);
	if (!t)
		return -ENOMEM;
	ti = (uint32_t)(t - a->mms[mi].tasks);
	if (t->st_hold - 1 == TRACE_WRITE_MODE && !write && success && !t->st_wait) {
		/* mmap_write_downgrade(): the write hold becomes a read hold */
		if (grow((void **)&a->mms[mi].holders, &a->mms[mi].cap_holders,
			 a->mms[mi].nr_holders + 1, sizeof(uint32_t)))
			return -ENOMEM;
		ret = hold_end(a, mi, ti, ev->ts);
		if (ret)
			return ret;
		a->mms[mi].tasks[ti].have_release = false;
		return hold_begin(a, mi, ti, false, ev->ts);
	}
	if (success && grow((void **)&a->mms[mi].holders, &a->mms[mi].cap_holders,
			    a->mms[mi].nr_holders + 1, sizeof(uint32_t)))
		return -ENOMEM;
	if (success)
		close_sleep_races(&a->mms[mi], ti);
	if (t->st_wait) {
		bool writer_queued = false;

		for (size_t i = 0; !write && success && i < a->mms[mi].nr_waiters; i++)
			writer_queued |= a->mms[mi].tasks[a->mms[mi].waiters[i]].st_wait - 1 ==
					 TRACE_WRITE_MODE;
		wait_start = t->wait_start;
		if (t->ran_ts > t->wait_start && success) {
			trace_stat_add(&t->run_acquire, since(ev->ts, t->ran_ts));
			trace_fine_add(&t->run_acquire_fine, since(ev->ts, t->ran_ts));
		}
		ret = wait_end(a, mi, ti, ev->ts, &contended);
		if (ret)
			return ret;
		if (writer_queued && !contended) {
			struct trace_mm *mm = &a->mms[mi];

			mm->tasks[ti].steals++;
			for (size_t i = 0; i < mm->nr_waiters; i++)
				if (mm->tasks[mm->waiters[i]].st_wait - 1 == TRACE_WRITE_MODE)
					mm->tasks[mm->waiters[i]].wait_steals++;
		}
		/* A queued reader got the lock when the last holder let it in. */
		if (contended && !write && success) {
			since_ts = VML_MAX(wait_start, a->mms[mi].last_free_ts);
			if (since_ts > ev->ts)
				since_ts = ev->ts;
			trace_stat_add(&a->mms[mi].tasks[ti].granted, ev->ts - since_ts);
		}
	} else if (t->have_release && success) {	/* a trylock: no start_locking */
		trace_stat_add(&t->gap, since(ev->ts, t->release_ts));
		t->have_release = false;
	}
	t = &a->mms[mi].tasks[ti];
	if (!success) {
		t->failed++;
		return 0;
	}
	if (t->st_hold) {	/* its release was lost */
		ret = hold_end(a, mi, ti, ev->ts);
		if (ret)
			return ret;
		a->inconsistent++;
	}
	return hold_begin(a, mi, ti, write, since_ts);
}

static int on_released(struct trace_analysis *a, const struct trace_event *ev)
{
	struct trace_slot *s = slot_find(a, ev->mm, ev->pid);
	struct trace_task *t;
	int ret;

	if (!s || !s->pid)
		return 0;	/* acquired before the stream began */
	t = &a->mms[s->mm_idx].tasks[s->task_idx];
	task_name(t, ev);
	if (!t->st_hold)
		return 0;
	if ((t->st_hold - 1 == TRACE_WRITE_MODE) != !!(ev->flags & TRACE_WRITE))
		a->inconsistent++;	/* accounted in the mode it was taken in */
	ret = hold_end(a, s->mm_idx, s->task_idx, ev->ts);
	if (!ret && !a->mms[s->mm_idx].nr_holders)
		open_sleep_races(&a->mms[s->mm_idx], ev->ts);
	return ret;
}

/* The read release at @ts woke a sleeping writer: its reader's next attempt is a race's leg. */
static void mark_release_woke(struct trace_mm *mm, uint64_t ts)
{
	for (size_t i = 0; i < mm->nr_tasks; i++)
		if (mm->tasks[i].have_release && mm->tasks[i].release_ts == ts)
			mm->tasks[i].release_woke = true;
}

static void on_sched(struct trace_analysis *a, const struct trace_event *ev)
{
	for (size_t i = 0; i < a->nr_waiting; i++) {
		struct trace_task *t = &a->mms[a->waiting[i].mm_idx].tasks[a->waiting[i].task_idx];

		if (ev->kind == TRACE_SCHED_SWITCH && ev->other_pid && t->pid == ev->other_pid &&
		    t->pid != ev->pid) {
			t->asleep_ts = ev->ts;	/* it left the CPU */
			continue;
		}
		if (t->pid != ev->pid)
			continue;
		if (ev->kind == TRACE_SCHED_WAKEUP) {
			const struct trace_mm *mm = &a->mms[a->waiting[i].mm_idx];

			t->wakeups++;
			t->wait_woken = true;
			if (!t->woken) {	/* a second wake-up before it runs changes nothing */
				t->woken = true;
				t->woken_ts = ev->ts;
				t->woken_release_ts = 0;
				if (mm->last_free_ts > t->wait_start) {
					trace_stat_add(&t->release_wake, since(ev->ts, mm->last_free_ts));
					t->woken_release_ts = mm->last_free_ts;
					t->woken_long = t->asleep_ts &&
						since(mm->last_free_ts, t->asleep_ts) >=
							TRACE_SHORT_SLEEP_NS;
					mark_release_woke(&a->mms[a->waiting[i].mm_idx],
							  mm->last_free_ts);
				}
			}
		} else {
			t->ran_ts = ev->ts;
			t->asleep_ts = 0;
			if (t->woken) {
				trace_stat_add(&t->wake, since(ev->ts, t->woken_ts));
				if (t->woken_release_ts) {
					uint64_t ns = since(ev->ts, t->woken_release_ts);

					trace_fine_add(&t->release_run, ns);
					trace_fine_add(&t->release_run_slept[t->woken_long], ns);
				}
				t->woken = false;
			}
		}
	}
}

static void on_lost(struct trace_analysis *a, const struct trace_event *ev)
{
	a->lost += ev->mm ? ev->mm : 1;
	for (size_t m = 0; m < a->nr_mms; m++) {
		struct trace_mm *mm = &a->mms[m];

		for (size_t i = 0; i < mm->nr_tasks; i++) {
			mm->tasks[i].st_wait = 0;
			mm->tasks[i].st_hold = 0;
			mm->tasks[i].have_release = false;
			mm->tasks[i].woken = false;
			mm->tasks[i].race_open = 0;
			mm->tasks[i].asleep_ts = 0;
			mm->tasks[i].nr_cur = 0;
		}
		mm->nr_holders = 0;
		mm->nr_waiters = 0;
	}
	a->nr_waiting = 0;
}

int trace_analysis_feed(struct trace_analysis *a, const struct trace_event *ev)
{
	int ret = 0;

	switch (ev->kind) {
	case TRACE_LOCK_START:
	case TRACE_LOCK_ACQUIRED:
	case TRACE_LOCK_RELEASED:
		if (a->mm_filter && ev->mm != a->mm_filter)
			return 0;
		if (ev->pid <= 0)
			return -EINVAL;
		ret = ev->kind == TRACE_LOCK_START ? on_start(a, ev) :
		      ev->kind == TRACE_LOCK_ACQUIRED ? on_acquired(a, ev) : on_released(a, ev);
		break;
	case TRACE_SCHED_WAKEUP:
	case TRACE_SCHED_SWITCH:
		on_sched(a, ev);
		break;
	case TRACE_CONTENTION_BEGIN:
	case TRACE_CONTENTION_END:
		break;		/* recorded for the traces; not analysed yet */
	case TRACE_LOST:
		on_lost(a, ev);
		return 0;
	default:
		return -EINVAL;
	}
	if (ret)
		return ret;
	if (!a->events++)
		a->first_ts = ev->ts;
	if (ev->ts > a->last_ts)
		a->last_ts = ev->ts;
	return 0;
}
