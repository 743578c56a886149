// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * run.c - the race run: phases, the modifier thread, the reader threads
 * (run.h).
 *
 * Threads of one phase and what they share:
 *   the main thread builds the layout and the contract, starts the others,
 *   sleeps for the phase's time, sets `stop` and joins them;
 *   the modifier owns the target while the phase runs (target_apply);
 *   readers own their reader (a vml_reader or a /proc fd) and their
 *   counters, read the contract (immutable by then), and take `lock` only
 *   to record the phase's first violation.
 *
 * On the simulated machine records are also checked against the layout at
 * the moment they were looked up (contract.h, race_check_lookups). The
 * modifier keeps a clock, two ticks per op; a reader notes it when a
 * read() begins and ends, when the model's reader starts looking up the
 * next VMA (vml_proc_next_hook, per-VMA policies) and when a page walk
 * ends (vml_proc_walk_hook), and gives each record the window between the
 * last moment before its lookup from which the tree it searched was
 * certainly fresh and the first moment after the lookup (lookup_windows).
 * Only one task runs at a time there, so what the clock says is the layout
 * the reader saw; on real threads there is no such common instant, and
 * the check is off.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "host/host.h"
#include "mm/debug.h"
#include "platform/platform.h"
#include "race/run.h"
#include "sync/atomic.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/compiler.h"
#include "util/debug.h"
#include "util/rand.h"
#include "util/strbuf.h"

#define READ_SIZE 4096			/* what the kernel selftest reads: a page */
#define MAX_RECS 1024			/* records in two reads */
#define QUERY_WALK 5			/* PROCMAP_QUERY calls per walk */
#define ROLLUP_MAX 8192
#define LOOKUP_LOG (2 * MAX_RECS + 16)	/* clock readings in one read_pair */

/* include/uapi/linux/fs.h; our struct has the kernel's layout (see spaces/live.c). */
#define RACE_PROCMAP_QUERY _IOWR('f', 17, struct vml_procmap_query)

/* What the threads of one phase share. */
struct phase_ctx {
	const struct race_opts *o;
	struct race_phase *ph;
	struct target *t;
	struct race_layout layout;
	struct race_contract *contract;
	struct op cycle[RACE_MAX_CYCLE];
	int nr_cycle;
	atomic_bool stop;		/* [atomic] set by the main thread or a failing thread */
	atomic_ulong cycles;		/* [atomic] */
	atomic_ulong reads;		/* [atomic] checked so far, all readers */
	/*
	 * The temporal check (simulated runs): the modifier's clock, two ticks
	 * per op (contract.h, struct race_window): even between ops, odd
	 * during one.
	 */
	bool temporal;
	_Atomic uint64_t clock;		/* [atomic] written by the modifier only */
	pthread_mutex_t lock;		/* the first violation and error in *ph */
	atomic_bool have_first;		/* [atomic] a hint: ph->first_text is set */
	/*
	 * dontneed: the most any state showed - the VMA's smaps Rss (kB), the
	 * smaps_rollup Rss (kB), the VMA's numa_maps pages - set before the
	 * readers start, then only read.
	 */
	unsigned long pw_max;
};

/* A reading of the modifier's clock by a reader, and what the reader was doing. */
enum lookup_kind {
	LK_BEGIN,		/* a read() call begins */
	LK_END,			/* ... and has returned */
	LK_NEXT,		/* the model's reader starts looking up the VMA after @from */
	LK_WALK,		/* a page walk ended: RCU is taken again, the iterator fresh */
};

struct lookup_ev {
	unsigned char kind;		/* enum lookup_kind */
	unsigned char read;		/* which read() of the pair */
	unsigned long from;		/* LK_NEXT */
	uint64_t clock;
};

struct reader {
	struct phase_ctx *c;
	unsigned int id;
	struct vml_rand rnd;
	struct vml_reader *vr;		/* model */
	int fd;				/* live */
	uint64_t reads, violations, by_rule[RACE__RULES], notes[RACE__NOTES];
	char buf[3 * READ_SIZE + ROLLUP_MAX + 1];
	char qline[QUERY_WALK][512];
	char qname[256];
	struct race_rec recs[MAX_RECS];
	/* the temporal check: one read_pair's clock readings, and each record's window */
	struct lookup_ev log[LOOKUP_LOG];
	size_t nr_log;
	bool log_lost;			/* the log overflowed: this read_pair goes unchecked */
	unsigned int cur_read;		/* the read() under way */
	struct race_window win[MAX_RECS];
};

static void phase_fail(struct phase_ctx *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void phase_fail(struct phase_ctx *c, int err, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&c->lock);
	if (!c->ph->error) {
		c->ph->error = err ? err : -EIO;
		va_start(ap, fmt);
		vsnprintf(c->ph->error_why, sizeof(c->ph->error_why), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&c->lock);
	atomic_store(&c->stop, true);
}

static void op_text(const struct op *op, char *buf, size_t len)
{
	format_op(op, buf, len);
}

/* Apply one op, which must succeed. Return: 0 or -errno (with the phase failed). */
static int apply(struct phase_ctx *c, const struct op *op)
{
	struct op_result res;
	char line[160], e[24];
	int ret = target_apply(c->t, op, &res);

	if (!ret && !res.ret)
		return 0;
	op_text(op, line, sizeof(line));
	if (ret)
		phase_fail(c, ret, "%s target: %s: %s", target_kind_name(c->o->target), line,
			   strerror(-ret));
	else
		phase_fail(c, res.ret, "%s: returned %s", line, errno_name(res.ret, e, sizeof(e)));
	return ret ? ret : res.ret;
}

/* ---- the two targets' readers ---- */

static bool is_model(const struct phase_ctx *c)
{
	return c->o->target == TARGET_MODEL;
}

static int reader_open(struct reader *r)
{
	struct phase_ctx *c = r->c;
	enum vml_view view = c->ph->view == TARGET_VIEW_QUERY ? VML_VIEW_MAPS : c->ph->view;
	char path[64];

	r->fd = -1;
	if (is_model(c)) {
		int ret;

		if (c->ph->view == TARGET_VIEW_QUERY)
			return 0;
		ret = vml_reader_open(target_model_mm(c->t), view, c->ph->lock, &r->vr);
		/* simulated: the kernel's whole costs, so that reads take virtual time */
		if (!ret && c->o->cpus && c->o->sim_record_ns)
			ret = vml_reader_set_record_cost(r->vr, c->o->sim_record_ns);
		if (!ret && c->o->cpus && c->o->sim_call_ns)
			ret = vml_reader_set_call_cost(r->vr, c->o->sim_call_ns);
		if (!ret && c->o->cpus && c->o->sim_page_ns)
			ret = vml_reader_set_page_cost(r->vr, c->o->sim_page_ns);
		return ret;
	}
	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)target_pid(c->t),
		 target_view_name(view));
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	return r->fd < 0 ? -errno : 0;
}

static void reader_close(struct reader *r)
{
	vml_reader_close(r->vr);
	r->vr = NULL;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

static int reader_rewind(struct reader *r)
{
	if (r->vr) {
		vml_reader_rewind(r->vr);
		return 0;
	}
	return lseek(r->fd, 0, SEEK_SET) < 0 ? -errno : 0;
}

static ssize_t reader_read(struct reader *r, char *buf, size_t len)
{
	ssize_t n;

	if (r->vr)
		return vml_reader_read(r->vr, buf, len);
	do
		n = read(r->fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static int reader_query(struct reader *r, struct vml_procmap_query *q)
{
	if (is_model(r->c))
		return vml_procmap_query(target_model_mm(r->c->t), r->c->ph->lock, q);
	return ioctl(r->fd, RACE_PROCMAP_QUERY, q) ? -errno : 0;
}

/* ---- the readers' hooks ---- */

/*
 * --noise: a model reader is held up for 0..noise_us microseconds (uniform)
 * right after it drops the read lock of a VMA that ends in A or B, or of the
 * VMA before A - between vma_end_read() and lock_next_vma(), where an
 * interrupt or a preempted vCPU holds the kernel's reader up in
 * docs/findings/maps-fake-gaps.md case 1 (the standalone reproducer's
 * --noise makes such interrupts). What the model does is unchanged; the
 * window in which a writer can finish a merge before the reader looks up
 * the next VMA is just as wide as on a noisy kernel. The hook (next_hook,
 * also the temporal check's) reads the range and the reader's random
 * stream through the thread's own reader.
 */
static struct {
	unsigned long lo, hi;		/* held up when lo <= from <= hi */
	unsigned int us;
} noise;				/* set before the readers start, cleared after they end */
static _Thread_local struct reader *hook_reader;	/* this thread's, if it is a reader */

/* Note the modifier's clock, and what the reader is doing, in its log. */
static void log_clock(struct reader *r, enum lookup_kind kind, unsigned long from)
{
	if (r->nr_log == LOOKUP_LOG) {
		r->log_lost = true;
		return;
	}
	r->log[r->nr_log++] = (struct lookup_ev){
		.kind = kind, .read = (unsigned char)r->cur_read, .from = from,
		.clock = load_relaxed(&r->c->clock),
	};
}

/* vml_proc_next_hook: --noise, and the lookup's start for the temporal check. */
static void next_hook(unsigned long from)
{
	struct reader *r = hook_reader;

	if (!r)
		return;
	if (noise.us && from >= noise.lo && from <= noise.hi)
		plat_sleep_ns(vml_rand_below(&r->rnd, noise.us + 1) * NSEC_PER_USEC);
	/* after the noise: the lookup begins after this reading either way */
	if (r->c->temporal)
		log_clock(r, LK_NEXT, from);
}

/*
 * vml_proc_walk_hook: a page walk ends. Under per-VMA locks RCU was dropped
 * for it and the iterator reset (or, broken, set): the next lookup walks
 * down a tree no older than this moment. Under mmap_lock nothing moves
 * until the read() ends, so the moment is as good.
 */
static void walk_hook(struct vma *vma)
{
	struct reader *r = hook_reader;

	(void)vma;
	if (r && r->c->temporal)
		log_clock(r, LK_WALK, 0);
}

/*
 * Each record's window (contract.h) from one read_pair's log. A lookup
 * runs from its LK_NEXT reading to the reader's next reading of that
 * read(); the tree it searched is no older than the read()'s start or the
 * last page walk's end before it, whichever is later (maps holds RCU for
 * the whole read(), and its iterator's path may be that old). A record is
 * the one the last lookup from its start position found in its read(); a
 * record with no such lookup (policy mmap, or after a fallback) gets the
 * whole read() call. @end (the end of the file) gets the lookup from after
 * the last record, or the read() calls from the last record's on.
 * Return: false if the log overflowed (nothing can be said).
 */
static bool lookup_windows(struct reader *r, unsigned long pos0, size_t nr, bool eof,
			   struct race_window *end)
{
	struct race_window call[3] = { 0 }, look = { 0 };
	uint64_t fresh = 0;
	size_t i, at = SIZE_MAX;
	int last_read = 0;

	if (r->log_lost)
		return false;
	for (size_t k = 0; k < r->nr_log; k++) {
		const struct lookup_ev *e = &r->log[k];

		if (e->kind == LK_BEGIN)
			call[e->read].lo = e->clock;
		else if (e->kind == LK_END)
			call[e->read].hi = e->clock;
		last_read = e->read;
	}
	for (i = 0; i < nr; i++)
		r->win[i] = call[r->recs[i].read];
	/*
	 * Lookups come in the order of their records: (read, from) grows,
	 * a retry repeating the one before; every read() begins with
	 * LK_BEGIN, which sets @fresh. One pass over both.
	 */
	i = 0;
	for (size_t k = 0; k < r->nr_log; k++) {
		const struct lookup_ev *e = &r->log[k];
		struct race_window w;
		size_t n;

		if (e->kind == LK_BEGIN || e->kind == LK_WALK)
			fresh = e->clock;
		if (e->kind != LK_NEXT)
			continue;
		w = (struct race_window){ .lo = fresh, .hi = call[e->read].hi };
		for (n = k + 1; n < r->nr_log; n++)
			if (r->log[n].read == e->read) {
				w.hi = r->log[n].clock;
				break;
			}
		/* the records up to this lookup's, whose own lookups were not seen */
		while (i < nr && (r->recs[i].read < e->read ||
				  (r->recs[i].read == e->read &&
				   (i ? r->recs[i - 1].end : pos0) < e->from)))
			i++;
		if (i < nr && r->recs[i].read == e->read && (i ? r->recs[i - 1].end : pos0) == e->from)
			r->win[i] = w;		/* a later retry overwrites */
		if (e->from == (nr ? r->recs[nr - 1].end : pos0)) {
			look = w;
			at = k;
		}
	}
	if (eof) {
		if (at != SIZE_MAX)
			*end = (struct race_window){ .lo = look.lo, .hi = call[last_read].hi };
		else
			*end = (struct race_window){
				.lo = call[nr ? r->recs[nr - 1].read : 0].lo,
				.hi = call[last_read].hi,
			};
	}
	return true;
}

/*
 * numa_maps lines do not say where a VMA ends, but the lookup after each
 * record starts from there: the j-th distinct LK_NEXT of a read() looked
 * up its j-th record (a retry repeats one; after the records, the lookup
 * of the one dropped for room or of the end of the file). Sets each
 * record's end. Return: false if the log does not fit that pattern (a
 * fallback to mmap_lock stops the readings), or an end is no VMA's.
 */
static bool numa_ends(struct reader *r, size_t nr)
{
	unsigned long expect = 0;	/* where the next record's lookup must start */
	size_t k = 0;

	if (r->log_lost)
		return false;
	for (size_t i = 0; i < nr; i++) {
		struct race_rec *rec = &r->recs[i];
		bool have = false;

		/* this record's lookup: the next LK_NEXT of its read() from @expect */
		for (; k < r->nr_log && !have; k++)
			have = r->log[k].kind == LK_NEXT && r->log[k].read == rec->read &&
			       r->log[k].from == expect;
		/* its end: the next lookup from elsewhere, in this read() or the next */
		for (; k < r->nr_log; k++)
			if (r->log[k].kind == LK_NEXT && r->log[k].from != expect)
				break;
		if (!have || k == r->nr_log || r->log[k].from <= rec->start ||
		    !race_contract_knows(r->c->contract, rec->start, r->log[k].from))
			return false;
		rec->end = expect = r->log[k].from;
	}
	return true;
}

/* ---- one read and its verdict ---- */

/* Records near the offending one or a read boundary are shown, the others elided. */
static bool near_interest(const struct race_rec *recs, size_t nr, size_t i, size_t bad)
{
	if (i + 4 >= bad && i <= bad + 3)
		return true;
	for (size_t k = 1; k < nr; k++)
		if (recs[k].read != recs[k - 1].read && i + 3 >= k && i <= k + 2)
			return true;
	return i + 3 >= nr;
}

/* The reads of a violation, records away from it elided; the offending one marked. */
static char *report_reads(struct reader *r, const struct race_verdict *v, size_t nr,
			  const char *raw, size_t rawlen)
{
	struct strbuf t = { 0 };
	size_t elided = 0;
	unsigned int read = ~0u;

	if (!nr || r->c->ph->view == VML_VIEW_SMAPS_ROLLUP) {
		strbuf_printf(&t, "-- the read (%zu bytes):\n", rawlen);
		strbuf_add(&t, raw, rawlen);
		return strbuf_finish(&t);
	}
	for (size_t i = 0; i < nr; i++) {
		const struct race_rec *rec = &r->recs[i];

		if (rec->read != read) {
			if (elided)
				strbuf_printf(&t, "   ... (%zu records)\n", elided);
			elided = 0;
			read = rec->read;
			if (r->c->ph->view == TARGET_VIEW_QUERY)
				strbuf_printf(&t, "-- PROCMAP_QUERY answers from 0x%lx, as maps "
					    "lines:\n", race_region_addr(&r->c->layout,
									 r->c->layout.a - 1));
			else
				strbuf_printf(&t, "-- read %u:\n", read + 1);
		}
		if (!near_interest(r->recs, nr, i, v->rec)) {
			elided++;
			continue;
		}
		if (elided)
			strbuf_printf(&t, "   ... (%zu records)\n", elided);
		elided = 0;
		strbuf_add(&t, i == v->rec ? ">> " : "   ", 3);
		strbuf_add(&t, rec->text, rec->rec_len);
		if (!rec->rec_len || rec->text[rec->rec_len - 1] != '\n')
			strbuf_add(&t, "\n", 1);
	}
	if (elided)
		strbuf_printf(&t, "   ... (%zu records)\n", elided);
	if (v->rec >= nr)
		strbuf_printf(&t, ">> (end of file)\n");
	return strbuf_finish(&t);
}

static void count(struct reader *r, const struct race_verdict *v, size_t nr, const char *raw,
		  size_t rawlen)
{
	struct race_phase *ph = r->c->ph;

	r->reads++;
	fetch_add_relaxed(&r->c->reads, 1);
	for (int i = 0; i < RACE__NOTES; i++)
		r->notes[i] += v->note[i];
	if (v->rule == RACE_OK)
		return;
	r->violations++;
	r->by_rule[v->rule]++;
	if (atomic_load_explicit(&r->c->have_first, memory_order_relaxed))
		return;
	pthread_mutex_lock(&r->c->lock);
	if (!ph->first_text) {
		ph->first = *v;
		ph->reads_to_first = load_relaxed(&r->c->reads);
		ph->first_text = report_reads(r, v, nr, raw, rawlen);
		atomic_store_explicit(&r->c->have_first, true, memory_order_relaxed);
	}
	pthread_mutex_unlock(&r->c->lock);
}

/*
 * Two page-sized reads from the start of maps, smaps or numa_maps; when the
 * second one is short, a third tells whether that was the end of the file.
 */
static int read_pair(struct reader *r)
{
	struct phase_ctx *c = r->c;
	struct race_window end;
	struct race_verdict v;
	ssize_t n[3] = { 0 };
	size_t off = 0;
	int nr = 0, k, ret;
	bool eof = false;

	ret = reader_rewind(r);
	if (ret)
		return ret;
	r->nr_log = 0;
	r->log_lost = false;
	for (int i = 0; i < 3; i++) {
		if (i == 2 && n[1] == READ_SIZE)
			break;
		r->cur_read = i;
		if (c->temporal)
			log_clock(r, LK_BEGIN, 0);
		n[i] = reader_read(r, r->buf + off, READ_SIZE);
		if (c->temporal)
			log_clock(r, LK_END, 0);
		if (n[i] < 0)
			return (int)n[i];
		if (!n[i]) {
			eof = true;
			break;
		}
		k = race_parse_read(c->ph->view, r->buf + off, n[i], i, r->recs + nr,
				    MAX_RECS - nr);
		if (k < 0)
			return k;
		nr += k;
		off += n[i];
	}
	if (!nr)
		return -ENODATA;
	race_check_records(c->contract, c->ph->view, c->ph->per_read, 0, r->recs, nr, eof, &v);
	if (v.rule == RACE_OK && c->temporal &&
	    (c->ph->view != VML_VIEW_NUMA_MAPS || numa_ends(r, nr)) &&
	    lookup_windows(r, 0, nr, eof, &end)) {
		bool note[RACE__NOTES];

		memcpy(note, v.note, sizeof(note));
		race_check_lookups(c->contract, c->ph->view, 0, r->recs, r->win, nr,
				   eof ? &end : NULL, &v);
		memcpy(v.note, note, sizeof(note));
	}
	count(r, &v, nr, r->buf, off);
	return 0;
}

/* PROCMAP_QUERY from the VMA before A on, each answer's end the next address. */
static int query_walk(struct reader *r)
{
	struct phase_ctx *c = r->c;
	unsigned long pos0 = race_region_addr(&c->layout, c->layout.a - 1), addr = pos0;
	struct race_verdict v;
	int i, ret;

	for (i = 0; i < QUERY_WALK; i++) {
		struct vml_procmap_query q = {
			.size = sizeof(q),
			.query_flags = VML_PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
			.query_addr = addr,
			.vma_name_size = sizeof(r->qname),
			.vma_name_addr = (uintptr_t)r->qname,
		};

		r->win[i].lo = load_relaxed(&c->clock);
		ret = reader_query(r, &q);
		r->win[i].hi = load_relaxed(&c->clock);
		if (ret)
			return ret;
		race_rec_from_query(&r->recs[i], &q, r->qname, r->qline[i], sizeof(r->qline[i]),
				    0);
		addr = q.vma_end;
	}
	race_check_records(c->contract, VML_VIEW_MAPS, false, pos0, r->recs, QUERY_WALK, false,
			   &v);
	/* each PROCMAP_QUERY call is one lookup: its window is the call */
	if (v.rule == RACE_OK && c->temporal) {
		bool note[RACE__NOTES];

		memcpy(note, v.note, sizeof(note));
		race_check_lookups(c->contract, VML_VIEW_MAPS, pos0, r->recs, r->win, QUERY_WALK,
				   NULL, &v);
		memcpy(v.note, note, sizeof(note));
	}
	count(r, &v, QUERY_WALK, NULL, 0);
	return 0;
}

static int read_rollup(struct reader *r)
{
	struct race_verdict v;
	size_t n = 0;
	ssize_t got;
	int nr, ret = reader_rewind(r);

	if (ret)
		return ret;
	do {
		got = reader_read(r, r->buf + n, ROLLUP_MAX - n);
		if (got < 0)
			return (int)got;
		n += got;
	} while (got > 0 && n < ROLLUP_MAX);
	nr = race_parse_read(VML_VIEW_SMAPS_ROLLUP, r->buf, n, 0, r->recs, MAX_RECS);
	if (nr < 0)
		return nr;
	race_check_rollup(r->c->contract, r->recs, nr, &v);
	count(r, &v, nr, r->buf, n);
	return 0;
}

/*
 * The target is shared by the phases of a run: clear what the last one left
 * (the tearing layout or the pagewalk one, whichever is larger).
 */
static int clear_layout(struct phase_ctx *c)
{
	struct race_layout *l = &c->layout;
	unsigned long lo, hi;

	l->base = SCRIPT_RANGE_LO;
	l->nr_regions = c->o->regions ? c->o->regions : RACE_DEFAULT_REGIONS;
	l->a = 1;
	race_layout_range(l, &lo, &hi);
	if (hi - lo < RACE_PAGEWALK_SIZE)
		hi = lo + RACE_PAGEWALK_SIZE;
	return apply(c, &(struct op){ .kind = OP_MUNMAP, .addr = lo, .len = hi - lo });
}

/* ---- dontneed: the kernel selftest pagewalk_race_test ---- */

/*
 * What a read of the phase's view says about the pagewalk VMA: its smaps
 * record or numa_maps line (the one that starts at the layout's base), or
 * the smaps_rollup record. Return: the record, or NULL if @recs has none.
 */
static const struct race_rec *pagewalk_rec(const struct phase_ctx *c, const struct race_rec *recs,
					   int nr)
{
	for (int i = 0; i < nr; i++) {
		if (recs[i].bad)
			return &recs[i];	/* the caller reports it as malformed */
		if (c->ph->view == VML_VIEW_SMAPS_ROLLUP || recs[i].start == c->layout.base)
			return &recs[i];
	}
	return NULL;
}

/* The figure checked: Rss in kB (smaps, smaps_rollup) or pages (numa_maps). */
static unsigned long pagewalk_value(const struct phase_ctx *c, const struct race_rec *rec)
{
	return c->ph->view == VML_VIEW_NUMA_MAPS ? rec->pages : rec->field[RF_RSS];
}

/*
 * The margin smaps_rollup gets over what the states showed: the selftest's
 * 256 kB, for the rest of a live process (its stack, its allocator) moving a
 * little while the phase runs. Counting the first PMD twice adds 2048 kB.
 */
#define PAGEWALK_ROLLUP_SLACK_KB 256

static unsigned long pagewalk_bound(const struct phase_ctx *c)
{
	return c->pw_max + (c->ph->view == VML_VIEW_SMAPS_ROLLUP ? PAGEWALK_ROLLUP_SLACK_KB : 0);
}

/*
 * Build the pagewalk layout, go round the cycle once to warm up, then once
 * more capturing the phase's view after each op: the most the VMA (or the
 * whole process, for smaps_rollup) showed in any state is the bound no read
 * may pass.
 */
static int pagewalk_setup(struct phase_ctx *c)
{
	struct race_layout *l = &c->layout;
	struct op setup[4];
	struct race_rec *recs = vml_malloc(MAX_RECS * sizeof(*recs));
	int n, ret = recs ? clear_layout(c) : -ENOMEM;

	if (ret)
		goto out;
	n = race_setup_ops(l, RACE_MOD_DONTNEED, setup, ARRAY_SIZE(setup));
	for (int i = 0; i < n && !ret; i++)
		ret = apply(c, &setup[i]);
	c->nr_cycle = race_cycle_ops(l, RACE_MOD_DONTNEED, c->cycle, RACE_MAX_CYCLE);
	c->pw_max = 0;
	for (int round = 0; round < 2 && !ret; round++) {
		for (int i = 0; i < c->nr_cycle && !ret; i++) {
			const struct race_rec *rec;
			char *text;
			size_t len;
			int nr;

			ret = apply(c, &c->cycle[i]);
			if (ret || !round)
				continue;
			ret = target_read_view(c->t, c->ph->view, VML_LOCK_MMAP, &text, &len);
			if (ret) {
				phase_fail(c, ret, "reading %s: %s", target_view_name(c->ph->view),
					   strerror(-ret));
				break;
			}
			nr = race_parse_read(c->ph->view, text, len, 0, recs, MAX_RECS);
			rec = nr > 0 ? pagewalk_rec(c, recs, nr) : NULL;
			if (!rec || rec->bad) {
				ret = -EPROTO;
				phase_fail(c, ret, "state %d: %s shows no record for 0x%lx%s%s", i,
					   target_view_name(c->ph->view), l->base,
					   rec ? ": " : "", rec ? rec->bad : "");
			} else if (pagewalk_value(c, rec) > c->pw_max) {
				c->pw_max = pagewalk_value(c, rec);
			}
			vml_free(text);
		}
	}
	c->ph->nr_states = c->nr_cycle;
out:
	if (ret && !c->ph->error)
		phase_fail(c, ret, "setting up: %s", strerror(-ret));
	vml_free(recs);
	return ret;
}

/*
 * One check of pagewalk_race_test: read the view from the start, page by
 * page (smaps_rollup: whole), until the VMA's record; its Rss (numa_maps:
 * pages) must not exceed what any state had - a walk that ran twice over
 * the same range counts the first PMD twice (judged first: it is what the
 * check is for). smaps records must also be consistent in themselves (Rss
 * <= Size among them).
 */
static int pagewalk_read(struct reader *r)
{
	struct phase_ctx *c = r->c;
	enum vml_view view = c->ph->view;
	const struct race_rec *rec = NULL;
	struct race_verdict v = { .rule = RACE_OK };
	size_t off = 0;
	ssize_t n;
	int nr, ret = reader_rewind(r);
	char why[200];

	if (ret)
		return ret;
	/* Ends: each read moves on through the file, which ends. */
	while (!rec) {
		size_t want = view == VML_VIEW_SMAPS_ROLLUP ? ROLLUP_MAX - off : READ_SIZE;

		if (!want)
			break;
		n = reader_read(r, r->buf + off, want);
		if (n < 0)
			return (int)n;
		if (!n)
			break;
		if (view == VML_VIEW_SMAPS_ROLLUP) {
			off += n;		/* the one record, whole */
			continue;
		}
		nr = race_parse_read(view, r->buf, n, 0, r->recs, MAX_RECS);
		if (nr < 0)
			return nr;
		rec = pagewalk_rec(c, r->recs, nr);
		off = n;
	}
	if (view == VML_VIEW_SMAPS_ROLLUP) {
		nr = race_parse_read(view, r->buf, off, 0, r->recs, MAX_RECS);
		if (nr < 0)
			return nr;
		rec = pagewalk_rec(c, r->recs, nr);
	}
	if (!rec) {
		v.rule = RACE_MISSING;
		snprintf(v.why, sizeof(v.why), "no record for the VMA at 0x%lx", c->layout.base);
	} else if (rec->bad) {
		v.rule = RACE_MALFORMED;
		snprintf(v.why, sizeof(v.why), "%s", rec->bad);
	} else if (pagewalk_value(c, rec) > pagewalk_bound(c)) {
		v.rule = RACE_DOUBLE_COUNT;
		snprintf(v.why, sizeof(v.why), "%s %lu %s, but no state had more than %lu%s: a "
			 "range walked twice", view == VML_VIEW_NUMA_MAPS ? "pages" : "Rss",
			 pagewalk_value(c, rec), view == VML_VIEW_NUMA_MAPS ? "pages" : "kB",
			 c->pw_max, view == VML_VIEW_SMAPS_ROLLUP ? " kB (+256 kB, the selftest's "
			 "margin)" : view == VML_VIEW_NUMA_MAPS ? "" : " kB");
	} else if (view != VML_VIEW_NUMA_MAPS &&
		   race_fields_bad(rec, view == VML_VIEW_SMAPS_ROLLUP, why, sizeof(why))) {
		v.rule = RACE_FIELDS;
		snprintf(v.why, sizeof(v.why), "%s", why);
	}
	if (rec && !rec->bad)
		v.note[RACE_NOTE_CHANGED] = pagewalk_value(c, rec) != c->pw_max;
	count(r, &v, 0, rec ? rec->text : r->buf, rec ? rec->rec_len : off);
	return 0;
}

/* A few hundred nanoseconds at most, so that steps and reads meet at varying offsets. */
static void jitter(struct vml_rand *rnd)
{
	unsigned int n = vml_rand_below(rnd, 4) ? 0 : vml_rand_below(rnd, 256);

	for (volatile unsigned int i = 0; i < n; i++)
		;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct phase_ctx *c = r->c;
	int ret = reader_open(r);

	hook_reader = r;
	if (ret) {
		phase_fail(c, ret, "reader %u: opening %s: %s", r->id,
			   target_view_name(c->ph->view), strerror(-ret));
		return NULL;
	}
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		jitter(&r->rnd);
		if (c->ph->mod == RACE_MOD_DONTNEED)
			ret = pagewalk_read(r);
		else if (c->ph->view == TARGET_VIEW_QUERY)
			ret = query_walk(r);
		else if (c->ph->view == VML_VIEW_SMAPS_ROLLUP)
			ret = read_rollup(r);
		else
			ret = read_pair(r);
		if (ret) {
			phase_fail(c, ret, "reader %u: reading %s: %s", r->id,
				   target_view_name(c->ph->view), strerror(-ret));
			break;
		}
	}
	reader_close(r);
	return NULL;
}

static void *modifier_main(void *arg)
{
	struct phase_ctx *c = arg;
	struct vml_rand rnd = vml_rand_init(c->o->seed, 0);

	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		for (int i = 0; i < c->nr_cycle; i++) {
			int ret;

			/* relaxed: the simulator runs one task at a time (the temporal check) */
			fetch_add_relaxed(&c->clock, 1);
			ret = apply(c, &c->cycle[i]);
			fetch_add_relaxed(&c->clock, 1);
			if (ret)
				return NULL;
			jitter(&rnd);
		}
		atomic_fetch_add_explicit(&c->cycles, 1, memory_order_relaxed);
	}
	return NULL;
}

/* ---- setting a phase up ---- */

/* A whole view, or NULL with *@absent when the target does not offer it. */
static char *capture_view(struct phase_ctx *c, enum vml_view view, bool *absent)
{
	char *text;
	size_t len;
	int ret = target_read_view(c->t, view, VML_LOCK_MMAP, &text, &len);

	*absent = false;
	if (ret == -EINVAL && is_model(c)) {
		*absent = true;
		return NULL;
	}
	if (ret) {
		phase_fail(c, ret, "reading %s: %s", target_view_name(view), strerror(-ret));
		return NULL;
	}
	return text;
}

struct capture {
	char *text[4];		/* maps, smaps, numa_maps, smaps_rollup */
};

static const enum vml_view capture_views[4] = {
	VML_VIEW_MAPS, VML_VIEW_SMAPS, VML_VIEW_NUMA_MAPS, VML_VIEW_SMAPS_ROLLUP,
};

static void capture_free(struct capture *cap)
{
	for (int i = 0; i < 4; i++)
		vml_free(cap->text[i]);
	memset(cap, 0, sizeof(*cap));
}

static int capture(struct phase_ctx *c, struct capture *cap)
{
	bool absent;

	memset(cap, 0, sizeof(*cap));
	for (int i = 0; i < 4; i++) {
		cap->text[i] = capture_view(c, capture_views[i], &absent);
		if (!cap->text[i] && !absent) {
			capture_free(cap);
			return c->ph->error ? c->ph->error : -ENOMEM;
		}
	}
	return 0;
}

/* Which region ends the first read of @view in the base layout. */
static int find_boundary(struct phase_ctx *c)
{
	struct race_layout *l = &c->layout;
	enum vml_view view = c->ph->view;
	struct target_reader *tr;
	struct race_rec *recs;
	char *buf;
	ssize_t n1, n2;
	int a, b, ret;
	unsigned long start;

	if (view == VML_VIEW_SMAPS_ROLLUP) {
		l->a = l->nr_regions / 2;	/* no read boundary: any pair in the middle */
		return 0;
	}
	if (view == TARGET_VIEW_QUERY)
		view = VML_VIEW_MAPS;	/* the boundary the maps reader sees */
	buf = vml_malloc(2 * READ_SIZE);
	recs = vml_malloc(MAX_RECS * sizeof(*recs));
	ret = buf && recs ? target_reader_open(c->t, view, c->ph->lock, &tr) : -ENOMEM;
	if (ret) {
		vml_free(buf);
		vml_free(recs);
		phase_fail(c, ret, "opening %s: %s", target_view_name(view), strerror(-ret));
		return ret;
	}
	n1 = target_reader_read(tr, buf, READ_SIZE);
	n2 = n1 > 0 ? target_reader_read(tr, buf + n1, READ_SIZE) : 0;
	target_reader_close(tr);
	a = n1 > 0 ? race_parse_read(view, buf, n1, 0, recs, MAX_RECS) : -EIO;
	b = a > 0 && n2 > 0 ? race_parse_read(view, buf + n1, n2, 1, recs + a, MAX_RECS - a) : 0;
	ret = -ERANGE;
	if (a > 0 && b > 0 && !recs[a - 1].bad && !recs[a].bad) {
		start = recs[a - 1].start;
		l->a = (start - l->base) / RACE_REGION_SIZE;
		if (start >= l->base && (start - l->base) % RACE_REGION_SIZE == 0 && l->a >= 1 &&
		    l->a + 2 < l->nr_regions && recs[a].start == race_region_addr(l, l->a + 1))
			ret = 0;
	}
	if (ret)
		phase_fail(c, ret, "the first read of %s does not end inside the regions "
			   "(%zd bytes; try more --regions)", target_view_name(view), n1);
	vml_free(buf);
	vml_free(recs);
	return ret;
}

static int add_state(struct phase_ctx *c, const struct capture *cap,
		     const struct race_pages *pages, unsigned char *res)
{
	char why[400];
	int ret;

	race_pages_resident(pages, res);
	ret = race_contract_add_state(c->contract, cap->text[0], cap->text[1], cap->text[2],
				      cap->text[3], res, why, sizeof(why));
	if (ret == -EINVAL)
		phase_fail(c, ret, "state %zu: %s", race_contract_nr_states(c->contract), why);
	else if (ret)
		phase_fail(c, ret, "state %zu: %s", race_contract_nr_states(c->contract),
			   strerror(-ret));
	return ret;
}

/*
 * Build the layout, find the boundary, and capture one cycle's states after
 * a warm-up cycle (the first cycle leaves pages where the steady state has
 * them). The cycle must end in the base layout, and going round once more
 * must give the same layouts again (maps is compared: the other views also
 * carry counters of the rest of a live process).
 */
static int phase_setup(struct phase_ctx *c)
{
	struct race_layout *l = &c->layout;
	struct race_pages pages = { 0 };
	struct capture base = { 0 }, caps[RACE_MAX_CYCLE] = { 0 }, cur = { 0 };
	struct op *setup = NULL;
	unsigned char *res = NULL;
	unsigned long lo, hi;
	int n, ret;
	char why[400];

	ret = clear_layout(c);
	if (ret)
		return ret;
	race_layout_range(l, &lo, &hi);
	setup = vml_malloc((2 * l->nr_regions + 1) * sizeof(*setup));
	ret = setup ? race_pages_init(&pages, l) : -ENOMEM;
	if (ret)
		goto out;
	n = race_setup_ops(l, c->ph->mod, setup, 2 * l->nr_regions + 1);
	for (int i = 0; i < n && !ret; i++) {
		ret = apply(c, &setup[i]);
		race_pages_apply(&pages, &setup[i]);
	}
	if (ret || (ret = find_boundary(c)))
		goto out;
	c->ph->boundary = l->a;
	c->nr_cycle = race_cycle_ops(l, c->ph->mod, c->cycle, RACE_MAX_CYCLE);
	ret = race_contract_create(lo, hi, &c->contract);
	res = vml_malloc(race_pages_count(&pages) + 1);
	if (!ret && !res)
		ret = -ENOMEM;
	if (ret)
		goto out;
	for (int i = 0; i < c->nr_cycle && !ret; i++) {
		ret = apply(c, &c->cycle[i]);
		race_pages_apply(&pages, &c->cycle[i]);
	}
	if (ret || (ret = capture(c, &base)) || (ret = add_state(c, &base, &pages, res)))
		goto out;
	for (int round = 0; round < 2 && !ret; round++) {
		for (int i = 0; i < c->nr_cycle && !ret; i++) {
			const struct capture *want = i == c->nr_cycle - 1 ? &base : &caps[i];

			ret = apply(c, &c->cycle[i]);
			race_pages_apply(&pages, &c->cycle[i]);
			if (ret || (ret = capture(c, &cur)))
				break;
			if ((round || i == c->nr_cycle - 1) && strcmp(want->text[0], cur.text[0])) {
				char line[160];

				format_op(&c->cycle[i], line, sizeof(line));
				ret = -EPROTO;
				phase_fail(c, ret, "the %s cycle is not periodic: after `%s` the "
					   "layout differs from %s", race_mod_name(c->ph->mod),
					   line, i == c->nr_cycle - 1 ? "the base layout" :
					   "the first round's");
			} else if (round == 0 && i < c->nr_cycle - 1) {
				ret = add_state(c, &cur, &pages, res);
				caps[i] = cur;
				memset(&cur, 0, sizeof(cur));
			}
			capture_free(&cur);
		}
	}
	if (ret)
		goto out;
	ret = race_contract_finish(c->contract, why, sizeof(why));
	if (ret)
		phase_fail(c, ret, "%s", ret == -EINVAL ? why : strerror(-ret));
	c->ph->nr_states = race_contract_nr_states(c->contract);
	if (!ret && c->o->cpus) {
		struct race_reach reach[RACE_MAX_CYCLE];

		for (int i = 0; i < c->nr_cycle; i++)
			race_op_reach(&c->cycle[i], &reach[i]);
		ret = race_contract_set_cycle(c->contract, reach, c->nr_cycle);
		if (ret)
			phase_fail(c, ret, "%d ops in the %s cycle, but %zu states", c->nr_cycle,
				   race_mod_name(c->ph->mod), race_contract_nr_states(c->contract));
	}
out:
	if (ret && !c->ph->error)
		phase_fail(c, ret, "setting up: %s", strerror(-ret));
	capture_free(&base);
	capture_free(&cur);
	for (int i = 0; i < RACE_MAX_CYCLE; i++)
		capture_free(&caps[i]);
	race_pages_free(&pages);
	vml_free(res);
	vml_free(setup);
	return ret;
}

static void run_phase(const struct race_opts *o, struct race_phase *ph, struct target *t)
{
	struct phase_ctx c = { .o = o, .ph = ph, .t = t };
	struct reader *readers;
	struct plat_thread *tids, mod;
	unsigned int nr = o->readers ? o->readers : 1, started = 0;
	uint64_t t0, deadline;
	bool mod_started = false;

	pthread_mutex_init(&c.lock, NULL);
	readers = vml_zalloc(nr * sizeof(*readers));
	tids = vml_zalloc(nr * sizeof(*tids));
	if (!readers || !tids) {
		phase_fail(&c, -ENOMEM, "out of memory");
		goto out;
	}
	if (ph->mod == RACE_MOD_DONTNEED ? pagewalk_setup(&c) : phase_setup(&c))
		goto out;

	atomic_store(&vml_debug_broken, o->broken);
	memset(&noise, 0, sizeof(noise));
	if (o->noise_us && is_model(&c) && ph->lock != VML_LOCK_MMAP &&
	    ph->mod != RACE_MOD_DONTNEED) {
		noise.lo = race_region_addr(&c.layout, c.layout.a);
		noise.hi = race_region_addr(&c.layout, c.layout.a + 2);
		noise.us = o->noise_us;
		atomic_store(&vml_proc_next_hook, next_hook);
	}
	/* The temporal check where timing is exact (smaps_rollup is one record). */
	c.temporal = o->cpus && ph->mod != RACE_MOD_DONTNEED &&
		     ph->view != VML_VIEW_SMAPS_ROLLUP;
	if (c.temporal) {
		atomic_store(&vml_proc_next_hook, next_hook);
		atomic_store(&vml_proc_walk_hook, walk_hook);
	}
	t0 = plat_now_ns();
	deadline = t0 + (uint64_t)(o->seconds * NSEC_PER_SEC);
	for (unsigned int i = 0; i < nr; i++) {
		readers[i].c = &c;
		readers[i].id = i;
		readers[i].fd = -1;
		readers[i].rnd = vml_rand_init(o->seed, i + 1);
		if (plat_thread_create(&tids[i], &(struct plat_thread_opts){ .cpu = -1,
				       .name = "reader" }, reader_main, &readers[i])) {
			phase_fail(&c, -EAGAIN, "cannot start a reader thread");
			break;
		}
		started++;
	}
	if (started == nr) {
		mod_started = !plat_thread_create(&mod, &(struct plat_thread_opts){ .cpu = -1,
						  .name = "modifier" }, modifier_main, &c);
		if (!mod_started)
			phase_fail(&c, -EAGAIN, "cannot start the modifier thread");
	}
	while (!atomic_load(&c.stop) && plat_now_ns() < deadline && !(o->stop && *o->stop))
		plat_sleep_ns(VML_MIN(10 * NSEC_PER_MSEC, deadline - plat_now_ns()));
	atomic_store(&c.stop, true);
	if (mod_started)
		plat_thread_join(&mod);
	for (unsigned int i = 0; i < started; i++)
		plat_thread_join(&tids[i]);
	atomic_store(&vml_debug_broken, 0);
	atomic_store(&vml_proc_next_hook, NULL);
	atomic_store(&vml_proc_walk_hook, NULL);
	ph->seconds = (double)(plat_now_ns() - t0) / NSEC_PER_SEC;
	ph->cycles = atomic_load(&c.cycles);
	for (unsigned int i = 0; i < started; i++) {
		ph->reads += readers[i].reads;
		ph->violations += readers[i].violations;
		for (int k = 0; k < RACE__RULES; k++)
			ph->by_rule[k] += readers[i].by_rule[k];
		for (int k = 0; k < RACE__NOTES; k++)
			ph->notes[k] += readers[i].notes[k];
	}
out:
	race_contract_destroy(c.contract);
	vml_free(readers);
	vml_free(tids);
	pthread_mutex_destroy(&c.lock);
}

/* Does target @t offer @view? (The model's smaps family is not there yet.) */
static bool view_available(struct target *t, enum vml_view view)
{
	struct target_reader *r;

	if (view == TARGET_VIEW_QUERY || target_kind(t) == TARGET_LIVE)
		return true;
	if (target_reader_open(t, view, VML_LOCK_VMA, &r))
		return false;
	target_reader_close(r);
	return true;
}

int race_views_available(enum target_kind kind, const enum vml_view *views, unsigned int nr,
			 bool *avail)
{
	struct target *t;
	int ret = target_create(kind, NULL, &t);

	if (ret)
		return ret;
	for (unsigned int i = 0; i < nr; i++)
		avail[i] = view_available(t, views[i]);
	target_destroy(t);
	return 0;
}

/* ---- the phases on the simulated machine ---- */

struct sim_phase {
	const struct race_opts *o;
	struct race_phase *ph;
	struct target_env *env;
	int ret;
};

/* The first task of a fresh machine: a fresh model, the phase on it. */
static void *sim_phase_main(void *arg)
{
	struct sim_phase *s = arg;
	struct target *t;

	s->ret = target_create(TARGET_MODEL, s->env, &t);
	if (s->ret)
		return NULL;
	run_phase(s->o, s->ph, t);
	target_destroy(t);
	return NULL;
}

/*
 * Schedules until one shows a violation: each on a fresh machine and a fresh
 * model, so that its seed replays it exactly (--sim-seed).
 */
static void explore_phase(const struct race_opts *o, struct race_phase *ph,
			  struct target_env *env)
{
	unsigned int n = o->schedules ? o->schedules : 1;
	uint64_t reads = 0;

	for (unsigned int k = 0; k < n && !(o->stop && *o->stop); k++) {
		struct race_phase one = { .view = ph->view, .kernel_lock = ph->kernel_lock,
					  .lock = ph->lock, .mod = ph->mod,
					  .per_read = ph->per_read };
		struct sim_phase s = { .o = o, .ph = &one, .env = env };
		struct sim_config cfg = {
			.cpus = o->cpus, .seed = o->sim_seed + k, .costs = o->sim_sched,
			.explore = o->explore, .pct_depth = o->pct_depth,
			.pct_steps = RACE_PCT_STEPS,
		};
		int ret = sim_run(&cfg, sim_phase_main, &s, NULL);

		ph->schedules = k + 1;
		if (!ret)
			ret = s.ret;
		if (ret && !one.error) {
			one.error = ret;
			snprintf(one.error_why, sizeof(one.error_why), "simulated machine: %s",
				 strerror(-ret));
		}
		ph->boundary = one.boundary;
		ph->nr_states = one.nr_states;
		ph->reads += one.reads;
		ph->violations += one.violations;
		ph->cycles += one.cycles;
		ph->seconds += one.seconds;
		for (int i = 0; i < RACE__RULES; i++)
			ph->by_rule[i] += one.by_rule[i];
		for (int i = 0; i < RACE__NOTES; i++)
			ph->notes[i] += one.notes[i];
		if (one.error) {
			ph->error = one.error;
			memcpy(ph->error_why, one.error_why, sizeof(ph->error_why));
		}
		if (one.first_text) {
			ph->first = one.first;
			ph->first_text = one.first_text;
			ph->first_seed = cfg.seed;
			ph->reads_to_first = reads + one.reads_to_first;
			ph->sched_reads_to_first = one.reads_to_first;
			break;
		}
		reads += one.reads;
		if (one.error)
			break;
	}
}

int race_run(const struct race_opts *o, race_phase_fn fn, void *arg)
{
	bool live = o->target == TARGET_LIVE;
	unsigned int nr_locks = live ? 1 : o->nr_locks;
	struct target_env *env;
	struct target *t;
	int ret = target_env_create(&env);

	if (ret)
		return ret;
	target_env_set_kernel_transients(env, o->kernel_transients);
	if (o->cpus)
		target_env_set_costs(env, &o->sim_kernel);
	/* One target for the whole run: creating and tearing down costs more than a phase. */
	ret = target_create(o->target, env, &t);
	if (ret) {
		target_env_put(env);
		return ret;
	}
	for (unsigned int v = 0; v < o->nr_views; v++) {
		enum vml_view view = o->views[v];
		bool avail = view_available(t, view);

		for (unsigned int l = 0; l < nr_locks; l++) {
			for (unsigned int m = 0; m < o->nr_mods; m++) {
				struct race_phase ph = {
					.view = view,
					.kernel_lock = live,
					.lock = live ? VML_LOCK_VMA : o->locks[l],
					.mod = o->mods[m],
					.kernel_per_vma = live && host_view_per_vma((int)view, NULL),
				};

				if (!race_mod_applies(o->mods[m], view))
					continue;
				if (o->stop && *o->stop) {
					ret = -EINTR;
					goto out;
				}
				if (ph.mod == RACE_MOD_DONTNEED)
					ph.per_read = false;	/* one record is checked */
				else if (live)
					ph.per_read = (view == VML_VIEW_SMAPS ||
						       view == VML_VIEW_NUMA_MAPS) &&
						      !ph.kernel_per_vma;
				else
					ph.per_read = o->locks[l] == VML_LOCK_MMAP &&
						      view != TARGET_VIEW_QUERY &&
						      view != VML_VIEW_SMAPS_ROLLUP;
				if (!avail)
					ph.skipped = "the model has no such view yet";
				else if (o->cpus)
					explore_phase(o, &ph, env);
				else
					run_phase(o, &ph, t);
				fn(&ph, arg);
				vml_free(ph.first_text);
				/* the live child died: nothing more can run */
				if (ph.error == -ECHILD)
					goto out;
			}
		}
	}
out:
	target_destroy(t);
	target_env_put(env);
	return ret;
}
