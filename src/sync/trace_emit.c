// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace_emit.c - the model's per-run trace buffer (see trace_emit.h).
 *
 * Each thread appends to a buffer of its own, found through a thread-local
 * pointer tagged with the run's generation: a thread whose tag is stale
 * (a new run began, the old buffers may be gone) registers a fresh buffer
 * on the global list under trace_lock - the only shared step, once per
 * thread and run. Events of one thread are in timestamp order already, so
 * collecting is a k-way merge of the buffers, k being the number of
 * threads that emitted (a handful).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "platform/platform.h"
#include "sync/rcu.h"
#include "sync/trace_emit.h"
#include "util/alloc.h"
#include "util/clock.h"

#define TRACE_DEFAULT_MAX (4u << 20)
#define TRACE_FIRST_CAP 4096
#define TRACE_MAX_SPARES 16

struct tbuf {
	struct tbuf *next;		/* [trace_lock] on trace_bufs */
	int32_t tid;			/* [I] */
	struct trace_event *ev;		/* [owner thread] while recording */
	size_t len, cap;		/* [owner thread] */
	uint64_t lost;			/* [owner thread] */
	bool pooled;			/* [owner thread] ev is a pool array, as it came */
};

_Atomic bool vml_trace_on;

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tbuf *trace_bufs;			/* [trace_lock] this run's buffers */
static _Atomic uint64_t trace_gen = 1;		/* bumped by start and reset */
/* [controller] set while off; emitters read them after vml_trace_on's acquire */
static size_t trace_max = TRACE_DEFAULT_MAX;
static int32_t trace_tgid;
/*
 * Arrays written through once already (every page faulted in), handed to the
 * buffers of the next runs (vml_trace_set_pool): a page's first touch costs
 * microseconds on a VM, and an emitting thread takes one every ~80 events -
 * inside a lock hold or on a woken writer's way to the lock, where a
 * microsecond decides a race.
 */
static struct trace_event *spare_ev[TRACE_MAX_SPARES];	/* [trace_lock] */
static unsigned int nr_spare;				/* [trace_lock] */
static unsigned int pool_bufs;				/* [trace_lock] wanted */
static size_t pool_cap;					/* [trace_lock] events each */

static _Thread_local struct tbuf *my_buf;
static _Thread_local uint64_t my_gen;
static _Thread_local int32_t my_tid;

int32_t vml_gettid(void)
{
	if (unlikely(!my_tid))
		my_tid = (int32_t)syscall(SYS_gettid);
	return my_tid;
}

static struct tbuf *my_tbuf(void)
{
	/* acquire: pairs with the release increment in free_bufs(): a new run, new buffers */
	uint64_t gen = atomic_load_explicit(&trace_gen, memory_order_acquire);
	struct tbuf *b;

	if (likely(my_buf && my_gen == gen))
		return my_buf;
	b = vml_zalloc(sizeof(*b));
	if (!b)
		return NULL;
	b->tid = vml_gettid();
	pthread_mutex_lock(&trace_lock);
	if (nr_spare && pool_cap <= trace_max) {
		b->ev = spare_ev[--nr_spare];
		b->cap = pool_cap;
		b->pooled = true;
	}
	/* A reset may have run since we loaded gen: register with the current one. */
	b->next = trace_bufs;
	trace_bufs = b;
	my_gen = atomic_load_explicit(&trace_gen, memory_order_relaxed);
	pthread_mutex_unlock(&trace_lock);
	my_buf = b;
	return b;
}

void __vml_trace_emit(uint8_t kind, uint64_t mm, uint8_t flags, int32_t pid, int32_t other)
{
	struct trace_event *ev;
	struct tbuf *b;
	int cpu;

	/*
	 * The buffer is written inside an RCU read-side section that saw
	 * recording on: vml_trace_stop() waits for every such section, so
	 * collect and reset never meet a write (or a realloc) in progress,
	 * however many threads go on taking locks after the stop.
	 */
	vml_rcu_read_lock();
	/*
	 * acquire: pairs with the seq_cst store in vml_trace_start(), after
	 * trace_max and trace_tgid; the off switch needs no more than the
	 * grace period in vml_trace_stop().
	 */
	if (!atomic_load_explicit(&vml_trace_on, memory_order_acquire))
		goto out;
	b = my_tbuf();
	if (!b)
		goto out;
	if (b->len == b->cap) {
		size_t n = b->cap ? b->cap * 2 : TRACE_FIRST_CAP;
		struct trace_event *p;

		if (n > trace_max)
			n = trace_max;
		p = n > b->cap ? vml_realloc(b->ev, n * sizeof(*p)) : NULL;
		if (!p) {
			b->lost++;
			goto out;
		}
		b->ev = p;
		b->cap = n;
		b->pooled = false;
	}
	ev = &b->ev[b->len++];
	memset(ev, 0, sizeof(*ev));
	ev->ts = plat_now_ns();
	ev->mm = mm;
	ev->kind = kind;
	ev->flags = flags;
	ev->pid = pid ? pid : b->tid;
	ev->other_pid = other ? other : (pid ? b->tid : 0);
	ev->tgid = trace_tgid;
	cpu = plat_cpu_current();
	ev->cpu = cpu > 0 ? (uint16_t)cpu : 0;
out:
	vml_rcu_read_unlock();
}

static void free_bufs(void)
{
	struct tbuf *b, *n;

	pthread_mutex_lock(&trace_lock);
	b = trace_bufs;
	trace_bufs = NULL;
	/* release: pairs with the acquire load in my_tbuf(): whoever sees it gets a new buffer */
	atomic_fetch_add_explicit(&trace_gen, 1, memory_order_release);
	for (; b; b = n) {	/* still under trace_lock: the pool's arrays go back */
		n = b->next;
		if (b->pooled && b->cap == pool_cap && nr_spare < pool_bufs) {
			spare_ev[nr_spare++] = b->ev;
			b->ev = NULL;
		}
		vml_free(b->ev);
		vml_free(b);
	}
	pthread_mutex_unlock(&trace_lock);
}

/* Context: trace_lock held. Fill the pool up to pool_bufs, or drop it all. */
static void pool_fill(void)
{
	while (nr_spare > pool_bufs)
		vml_free(spare_ev[--nr_spare]);
	while (nr_spare < pool_bufs) {
		struct trace_event *ev = vml_malloc(pool_cap * sizeof(*ev));

		if (!ev)
			break;		/* buffers then start small, as without a pool */
		memset(ev, 0, pool_cap * sizeof(*ev));	/* the faults, now */
		spare_ev[nr_spare++] = ev;
	}
}

void vml_trace_set_pool(unsigned int bufs, size_t events)
{
	pthread_mutex_lock(&trace_lock);
	if (events != pool_cap) {
		while (nr_spare)
			vml_free(spare_ev[--nr_spare]);
	}
	pool_bufs = VML_MIN(bufs, (unsigned int)TRACE_MAX_SPARES);
	pool_cap = pool_bufs ? events : 0;
	if (!pool_cap)
		pool_bufs = 0;
	pthread_mutex_unlock(&trace_lock);
}

int vml_trace_start(size_t max_events)
{
	if (atomic_load(&vml_trace_on))
		return -EBUSY;
	free_bufs();
	pthread_mutex_lock(&trace_lock);
	pool_fill();
	pthread_mutex_unlock(&trace_lock);
	trace_max = max_events ? max_events : TRACE_DEFAULT_MAX;
	trace_tgid = (int32_t)getpid();
	/* seq_cst, so release: pairs with the acquire load in __vml_trace_emit() */
	atomic_store(&vml_trace_on, true);
	return 0;
}

void vml_trace_stop(void)
{
	vml_assert(!vml_rcu_read_held());
	atomic_store(&vml_trace_on, false);
	/* Every emit that saw recording on has finished with its buffer. */
	vml_synchronize_rcu();
}

void vml_trace_reset(void)
{
	vml_trace_stop();
	free_bufs();
}

int vml_trace_collect(int (*cb)(const struct trace_event *ev, void *arg), void *arg,
		      uint64_t *lost)
{
	struct tbuf *b, **v;
	size_t nr = 0, *pos;
	uint64_t dropped = 0;
	int ret = 0;

	pthread_mutex_lock(&trace_lock);
	for (b = trace_bufs; b; b = b->next)
		nr++;
	v = vml_zalloc((nr + 1) * sizeof(*v));
	pos = vml_zalloc((nr + 1) * sizeof(*pos));
	if (!v || !pos) {
		pthread_mutex_unlock(&trace_lock);
		vml_free(v);
		vml_free(pos);
		return -ENOMEM;
	}
	nr = 0;
	for (b = trace_bufs; b; b = b->next) {
		v[nr++] = b;
		dropped += b->lost;
	}
	pthread_mutex_unlock(&trace_lock);
	if (lost)
		*lost = dropped;
	/* Ends: each pass delivers one event, and there are finitely many. */
	for (;;) {
		size_t best = nr;

		for (size_t i = 0; i < nr; i++) {
			if (pos[i] == v[i]->len)
				continue;
			if (best == nr || v[i]->ev[pos[i]].ts < v[best]->ev[pos[best]].ts)
				best = i;
		}
		if (best == nr)
			break;
		ret = cb(&v[best]->ev[pos[best]++], arg);
		if (ret)
			break;
	}
	vml_free(v);
	vml_free(pos);
	return ret;
}
