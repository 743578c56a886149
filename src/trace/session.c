// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * session.c - tracefs instances, events and reading (see session.h).
 *
 * Reading: tracefs_iterate_raw_events() drains every CPU's trace_pipe_raw
 * (partial pages too) and hands the records over oldest first - but only
 * within one call: a record that CPU 1 commits while CPU 0's buffer is read
 * lands in the next call, possibly older than records already handed over.
 * So records go into a pending array, sorted on each poll, and only those
 * older than (time the poll began - settle) leave it: by then every CPU has
 * committed them (a tracepoint commits within microseconds of taking its
 * timestamp, with preemption off), so they were all read in this poll or
 * an earlier one, and none can come later.
 */
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tracefs.h>

#include "trace/session.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/compiler.h"

#define TRACEFS_PATH "/sys/kernel/tracing"
#define DEFAULT_BUFFER_KB 4096
#define DEFAULT_SETTLE_NS (20 * NSEC_PER_MSEC)
#define MAX_FILTER_PIDS 64

enum { EV_START, EV_ACQUIRED, EV_RELEASED, EV_WAKEUP, EV_SWITCH, EV_CBEGIN, EV_CEND, NR_EV };

static const struct {
	const char *system, *name;
	unsigned int set;
	uint8_t kind;
} ev_table[NR_EV] = {
	[EV_START] = { "mmap_lock", "mmap_lock_start_locking", TRACE_EV_MMAP_LOCK, TRACE_LOCK_START },
	[EV_ACQUIRED] = { "mmap_lock", "mmap_lock_acquire_returned", TRACE_EV_MMAP_LOCK,
			  TRACE_LOCK_ACQUIRED },
	[EV_RELEASED] = { "mmap_lock", "mmap_lock_released", TRACE_EV_MMAP_LOCK,
			  TRACE_LOCK_RELEASED },
	[EV_WAKEUP] = { "sched", "sched_wakeup", TRACE_EV_SCHED, TRACE_SCHED_WAKEUP },
	[EV_SWITCH] = { "sched", "sched_switch", TRACE_EV_SCHED, TRACE_SCHED_SWITCH },
	[EV_CBEGIN] = { "lock", "contention_begin", TRACE_EV_CONTENTION, TRACE_CONTENTION_BEGIN },
	[EV_CEND] = { "lock", "contention_end", TRACE_EV_CONTENTION, TRACE_CONTENTION_END },
};

/* What a record's fields are called, per event. */
struct ev_fields {
	struct tep_event *ev;
	struct tep_format_field *mm, *write, *success;	/* lock events; mm = lock_addr */
	struct tep_format_field *pid, *comm, *other;	/* sched events */
};

struct pid_info {
	int32_t pid;		/* 0: empty slot */
	int32_t tgid;
	char comm[TRACE_COMM_LEN];
};

struct pending {
	struct trace_event ev;
	uint64_t seq;		/* read order: keeps equal timestamps in order */
};

struct trace_session {
	struct tracefs_instance *inst;
	struct tep_handle *tep;
	unsigned int events;
	struct ev_fields f[NR_EV];
	uint64_t settle_ns;
	uint64_t lost;
	uint64_t seq;
	struct pending *pend;
	size_t nr_pend, cap_pend;
	struct pid_info *pids;	/* open addressing, never more than half full */
	size_t nr_pids, used_pids;
	bool cmdlines_loaded;	/* the kernel's saved comms, loaded this poll */
	int err;		/* first error inside the iteration callback */
};

/* ---- tracefs: mounted, or mounted privately ---- */

static bool tracefs_ready;
static unsigned int sessions_made;

/* Where tracefs is mounted in this mount namespace, or NULL. */
static char *tracefs_mount_point(void)
{
	FILE *f = setmntent("/proc/self/mounts", "r");
	struct mntent *m;
	char *dir = NULL;

	if (!f)
		return NULL;
	while ((m = getmntent(f))) {
		if (!strcmp(m->mnt_type, "tracefs")) {
			dir = vml_strdup(m->mnt_dir);
			break;
		}
	}
	endmntent(f);
	return dir;
}

/*
 * Use tracefs where it is mounted; else mount it at /sys/kernel/tracing in
 * a mount namespace of our own, so that nothing outlives the process.
 */
static int tracefs_setup(void)
{
	char *dir;
	int ret;

	if (tracefs_ready)
		return 0;
	dir = tracefs_mount_point();
	if (!dir) {
		if (geteuid() != 0)
			return -EPERM;
		if (unshare(CLONE_NEWNS))
			return -errno;	/* EINVAL: threads share our fs; EPERM */
		/* Our mounts must not propagate to the parent namespace. */
		if (mount("none", "/", NULL, MS_REC | MS_SLAVE, NULL))
			return -errno;
		if (mount("nodev", TRACEFS_PATH, "tracefs", 0, NULL))
			return errno == ENODEV ? -ENODEV : -errno;
		dir = vml_strdup(TRACEFS_PATH);
		if (!dir)
			return -ENOMEM;
	}
	ret = tracefs_set_tracing_dir(dir);
	vml_free(dir);
	if (ret)
		return -ENOMEM;
	tracefs_ready = true;
	return 0;
}

/* Remove the vmalock-PID[-N] instances whose process is gone. */
static void remove_stale_instances(void)
{
	/* libtracefs 1.6 compiles the pattern as a basic regex: no + ? ( ) */
	char **names = tracefs_instances("^vmalock-[0-9]");

	if (!names)
		return;
	for (char **n = names; *n; n++) {
		char *end;
		long pid = strtol(*n + strlen("vmalock-"), &end, 10);
		struct tracefs_instance *inst;

		if (*end && (*end != '-' || end[1] < '0' || end[1] > '9'))
			continue;	/* not one of ours */
		if (pid <= 0 || pid == getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		inst = tracefs_instance_alloc(NULL, *n);
		if (inst) {
			tracefs_event_disable(inst, NULL, NULL);
			tracefs_instance_destroy(inst);
			tracefs_instance_free(inst);
		}
	}
	tracefs_list_free(names);
}

const char *trace_unavailable_hint(int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
		return "tracing the kernel's mmap_lock events needs root "
		       "(CAP_SYS_ADMIN, to mount tracefs and create an instance): run it with sudo";
	case -ENODEV:
		return "this kernel has no tracefs (needs CONFIG_FTRACE/CONFIG_TRACING); "
		       "or mount it yourself: mount -t tracefs nodev /sys/kernel/tracing";
	case -ENOENT:
		return "this kernel lacks the mmap_lock tracepoints "
		       "(events/mmap_lock/ in tracefs: Linux 5.10 or later with CONFIG_TRACING)";
	case -ENOTSUP:
		return "this kernel's tracefs has no \"mono\" trace clock";
	default:
		return NULL;
	}
}

/* ---- the session ---- */

static int find_fields(struct trace_session *s)
{
	for (int i = 0; i < NR_EV; i++) {
		struct ev_fields *f = &s->f[i];

		if (!(s->events & ev_table[i].set))
			continue;
		f->ev = tep_find_event_by_name(s->tep, ev_table[i].system, ev_table[i].name);
		if (!f->ev)
			return -ENOENT;
		switch (ev_table[i].kind) {
		case TRACE_LOCK_START:
		case TRACE_LOCK_ACQUIRED:
		case TRACE_LOCK_RELEASED:
			f->mm = tep_find_field(f->ev, "mm");
			f->write = tep_find_field(f->ev, "write");
			if (ev_table[i].kind == TRACE_LOCK_ACQUIRED)
				f->success = tep_find_field(f->ev, "success");
			if (!f->mm || !f->write ||
			    (ev_table[i].kind == TRACE_LOCK_ACQUIRED && !f->success))
				return -ENOENT;
			break;
		case TRACE_SCHED_WAKEUP:
			f->pid = tep_find_field(f->ev, "pid");
			f->comm = tep_find_field(f->ev, "comm");
			if (!f->pid || !f->comm)
				return -ENOENT;
			break;
		case TRACE_SCHED_SWITCH:
			f->pid = tep_find_field(f->ev, "next_pid");
			f->comm = tep_find_field(f->ev, "next_comm");
			f->other = tep_find_field(f->ev, "prev_pid");
			if (!f->pid || !f->comm || !f->other)
				return -ENOENT;
			break;
		default:
			f->mm = tep_find_field(f->ev, "lock_addr");
			if (!f->mm)
				return -ENOENT;
		}
	}
	return 0;
}

static int set_clock_and_buffer(struct trace_session *s, size_t kb)
{
	char *clock;
	bool mono;

	if (tracefs_instance_file_write(s->inst, "trace_clock", "mono") < 0)
		return -ENOTSUP;
	clock = tracefs_get_clock(s->inst);
	mono = clock && !strcmp(clock, "mono");
	free(clock);
	if (!mono)
		return -ENOTSUP;
	if (tracefs_instance_set_buffer_size(s->inst, kb, -1) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

int trace_session_open(const struct trace_session_opts *o, struct trace_session **out)
{
	const char *systems[4];
	struct trace_session *s;
	unsigned int events = o->events ? o->events : TRACE_EV_MMAP_LOCK;
	char name[64];
	int nr_sys = 0, ret;

	if (events & ~(TRACE_EV_MMAP_LOCK | TRACE_EV_SCHED | TRACE_EV_CONTENTION))
		return -EINVAL;
	ret = tracefs_setup();
	if (ret)
		return ret;
	remove_stale_instances();

	s = vml_zalloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->events = events;
	s->settle_ns = o->settle_ns ? o->settle_ns : DEFAULT_SETTLE_NS;
	if (sessions_made++)
		snprintf(name, sizeof(name), "vmalock-%d-%u", (int)getpid(), sessions_made);
	else
		snprintf(name, sizeof(name), "vmalock-%d", (int)getpid());
	s->inst = tracefs_instance_create(name);
	if (!s->inst) {
		ret = errno == EACCES || errno == EPERM ? -EPERM : -ENODEV;
		goto fail;
	}
	if (!tracefs_instance_is_new(s->inst)) {
		/* Left by an earlier process with our PID (it cannot be alive). */
		tracefs_event_disable(s->inst, NULL, NULL);
		tracefs_instance_destroy(s->inst);
		tracefs_instance_free(s->inst);
		s->inst = tracefs_instance_create(name);
		if (!s->inst || !tracefs_instance_is_new(s->inst)) {
			ret = -EBUSY;
			goto fail;
		}
	}
	ret = set_clock_and_buffer(s, o->buffer_kb ? o->buffer_kb : DEFAULT_BUFFER_KB);
	if (ret)
		goto fail;

	if (events & TRACE_EV_MMAP_LOCK)
		systems[nr_sys++] = "mmap_lock";
	if (events & TRACE_EV_SCHED)
		systems[nr_sys++] = "sched";
	if (events & TRACE_EV_CONTENTION)
		systems[nr_sys++] = "lock";
	systems[nr_sys] = NULL;
	s->tep = tracefs_local_events_system(NULL, systems);
	if (!s->tep) {
		ret = -ENOENT;
		goto fail;
	}
	ret = find_fields(s);
	if (ret)
		goto fail;
	if (o->mm) {
		ret = trace_session_set_mm(s, o->mm);
		if (ret)
			goto fail;
	}
	for (int i = 0; i < NR_EV; i++) {
		if (!(events & ev_table[i].set))
			continue;
		if (tracefs_event_enable(s->inst, ev_table[i].system, ev_table[i].name)) {
			ret = -ENOENT;
			goto fail;
		}
	}
	if (tracefs_trace_on(s->inst) < 0) {
		ret = -EIO;
		goto fail;
	}
	*out = s;
	return 0;
fail:
	trace_session_close(s);
	return ret;
}

void trace_session_close(struct trace_session *s)
{
	if (!s)
		return;
	if (s->inst) {
		tracefs_trace_off(s->inst);
		tracefs_event_disable(s->inst, NULL, NULL);
		tracefs_instance_destroy(s->inst);
		tracefs_instance_free(s->inst);
	}
	if (s->tep)
		tep_free(s->tep);
	vml_free(s->pend);
	vml_free(s->pids);
	vml_free(s);
}

/* Apply @filter ("" clears) to the events of @set. */
static int apply_filter(struct trace_session *s, int first, int last, const char *filter)
{
	for (int i = first; i <= last; i++) {
		int ret;

		if (!s->f[i].ev)
			continue;
		if (*filter)
			ret = tracefs_event_filter_apply(s->inst, s->f[i].ev, filter);
		else
			ret = tracefs_event_filter_clear(s->inst, s->f[i].ev);
		if (ret < 0)	/* else the bytes written */
			return errno ? -errno : -EINVAL;
	}
	return 0;
}

int trace_session_set_mm(struct trace_session *s, uint64_t mm)
{
	char filter[64] = "";

	if (mm)
		snprintf(filter, sizeof(filter), "mm == 0x%llx", (unsigned long long)mm);
	return apply_filter(s, EV_START, EV_RELEASED, filter);
}

/*
 * "FIELD == p0 || FIELD == p1 ..." (and the same of FIELD2 if not NULL), or
 * "" for all. vml_malloc'ed.
 */
static char *pid_filter(const char *field, const char *field2, const pid_t *pids, size_t nr)
{
	size_t len = 1 + 2 * nr * (strlen(field) + (field2 ? strlen(field2) : 0) + 24);
	char *f = vml_malloc(len), *p = f;

	if (!f)
		return NULL;
	*f = '\0';
	for (size_t i = 0; i < nr && nr <= MAX_FILTER_PIDS; i++) {
		p += snprintf(p, len - (size_t)(p - f), "%s%s == %d", i ? " || " : "", field,
			      (int)pids[i]);
		if (field2)
			p += snprintf(p, len - (size_t)(p - f), " || %s == %d", field2,
				      (int)pids[i]);
	}
	return f;
}

int trace_session_set_pids(struct trace_session *s, const pid_t *pids, size_t nr)
{
	char *fw, *fs;
	int ret;

	if (!(s->events & TRACE_EV_SCHED))
		return 0;
	fw = pid_filter("pid", NULL, pids, nr);
	fs = pid_filter("next_pid", "prev_pid", pids, nr);
	ret = fw && fs ? apply_filter(s, EV_WAKEUP, EV_WAKEUP, fw) : -ENOMEM;
	if (!ret)
		ret = apply_filter(s, EV_SWITCH, EV_SWITCH, fs);
	vml_free(fw);
	vml_free(fs);
	return ret;
}

int trace_session_discard(struct trace_session *s)
{
	s->nr_pend = 0;
	if (tracefs_instance_file_clear(s->inst, "trace") < 0)
		return errno ? -errno : -EIO;
	return 0;
}

uint64_t trace_session_lost(const struct trace_session *s)
{
	return s->lost;
}

/* ---- pids: comm and tgid ---- */

static struct pid_info *pid_slot(struct trace_session *s, int32_t pid)
{
	size_t mask = s->nr_pids - 1;

	/* Ends: never more than half full. */
	for (size_t i = ((uint32_t)pid * 2654435761u) & mask;; i = (i + 1) & mask)
		if (!s->pids[i].pid || s->pids[i].pid == pid)
			return &s->pids[i];
}

static int pids_grow(struct trace_session *s)
{
	struct pid_info *old = s->pids;
	size_t n = s->nr_pids ? s->nr_pids * 2 : 256, old_n = s->nr_pids;

	s->pids = vml_zalloc(n * sizeof(*s->pids));
	if (!s->pids) {
		s->pids = old;
		return -ENOMEM;
	}
	s->nr_pids = n;
	for (size_t i = 0; i < old_n; i++)
		if (old[i].pid)
			*pid_slot(s, old[i].pid) = old[i];
	vml_free(old);
	return 0;
}

/* Read a small /proc file into @buf (NUL-terminated). Return: bytes or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

static void copy_comm(char *dst, const char *src)
{
	size_t n = strnlen(src, TRACE_COMM_LEN - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void pid_lookup(struct trace_session *s, struct pid_info *pi)
{
	char path[64], buf[1024], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pi->pid);
	n = read_small(path, buf, sizeof(buf));
	if (n > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		copy_comm(pi->comm, buf);
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pi->pid);
		if (read_small(path, buf, sizeof(buf)) > 0 && (p = strstr(buf, "\nTgid:")))
			pi->tgid = (int32_t)strtol(p + strlen("\nTgid:"), NULL, 10);
		return;
	}
	/* Gone already (a short-lived reader): the kernel's saved comms. */
	if (!s->cmdlines_loaded) {
		tracefs_load_cmdlines(NULL, s->tep);
		s->cmdlines_loaded = true;
	}
	p = (char *)tep_data_comm_from_pid(s->tep, pi->pid);
	if (p && strcmp(p, "<...>"))
		copy_comm(pi->comm, p);
}

static void pid_fill(struct trace_session *s, struct trace_event *ev, bool look_up)
{
	struct pid_info *pi;

	if (ev->pid <= 0)
		return;
	if (!s->nr_pids && pids_grow(s))
		return;
	pi = pid_slot(s, ev->pid);
	if (!pi->pid) {
		if (!look_up)
			return;
		if ((s->used_pids + 1) * 2 > s->nr_pids) {
			if (pids_grow(s))
				return;
			pi = pid_slot(s, ev->pid);
		}
		pi->pid = ev->pid;
		s->used_pids++;
		pid_lookup(s, pi);
	}
	if (!ev->comm[0])
		memcpy(ev->comm, pi->comm, TRACE_COMM_LEN);
	else if (look_up || !pi->comm[0])
		memcpy(pi->comm, ev->comm, TRACE_COMM_LEN);
	ev->tgid = pi->tgid;
}

/* ---- reading ---- */

static uint64_t field_u64(struct tep_format_field *f, struct tep_record *rec)
{
	unsigned long long v = 0;

	if (f && tep_read_number_field(f, rec->data, &v))
		v = 0;
	return v;
}

static struct trace_event *pend_add(struct trace_session *s)
{
	struct pending *p;

	p = vml_grow_array(s->pend, &s->cap_pend, s->nr_pend + 1, sizeof(*p), 1024);
	if (!p)
		return NULL;
	s->pend = p;
	p = &s->pend[s->nr_pend++];
	memset(p, 0, sizeof(*p));
	p->seq = s->seq++;
	return &p->ev;
}

static int on_record(struct tep_event *event, struct tep_record *rec, int cpu, void *arg)
{
	struct trace_session *s = arg;
	struct trace_event *ev;
	int i;

	for (i = 0; i < NR_EV; i++)
		if (s->f[i].ev == event)
			break;
	if (i == NR_EV)
		return 0;
	if (rec->missed_events) {
		ev = pend_add(s);
		if (!ev)
			goto nomem;
		ev->ts = rec->ts;
		ev->cpu = (uint16_t)cpu;
		ev->kind = TRACE_LOST;
		ev->mm = rec->missed_events > 0 ? (uint64_t)rec->missed_events : 0;
		s->lost += ev->mm ? ev->mm : 1;
	}
	ev = pend_add(s);
	if (!ev)
		goto nomem;
	ev->ts = rec->ts;
	ev->cpu = (uint16_t)cpu;
	ev->kind = ev_table[i].kind;
	switch (ev->kind) {
	case TRACE_LOCK_START:
	case TRACE_LOCK_ACQUIRED:
	case TRACE_LOCK_RELEASED:
		ev->pid = tep_data_pid(s->tep, rec);
		ev->mm = field_u64(s->f[i].mm, rec);
		ev->flags = (field_u64(s->f[i].write, rec) ? TRACE_WRITE : 0) |
			    (field_u64(s->f[i].success, rec) ? TRACE_SUCCESS : 0);
		pid_fill(s, ev, true);
		break;
	case TRACE_SCHED_WAKEUP:
	case TRACE_SCHED_SWITCH:
		ev->pid = (int32_t)field_u64(s->f[i].pid, rec);
		ev->other_pid = ev->kind == TRACE_SCHED_SWITCH ?
				(int32_t)field_u64(s->f[i].other, rec) : tep_data_pid(s->tep, rec);
		memcpy(ev->comm, (char *)rec->data + s->f[i].comm->offset,
		       VML_MIN((unsigned int)TRACE_COMM_LEN, (unsigned int)s->f[i].comm->size));
		ev->comm[TRACE_COMM_LEN - 1] = '\0';
		pid_fill(s, ev, false);
		break;
	default:
		ev->pid = tep_data_pid(s->tep, rec);
		ev->mm = field_u64(s->f[i].mm, rec);
		pid_fill(s, ev, false);
	}
	return 0;
nomem:
	s->err = -ENOMEM;
	return 1;
}

static int pend_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->ev.ts != y->ev.ts)
		return x->ev.ts < y->ev.ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int trace_session_poll(struct trace_session *s, bool flush,
		       int (*cb)(const struct trace_event *ev, void *arg), void *arg)
{
	uint64_t begin = vml_now_ns(), limit;
	size_t i;
	int ret = 0;

	s->err = 0;
	s->cmdlines_loaded = false;
	if (tracefs_iterate_raw_events(s->tep, s->inst, NULL, 0, on_record, s) < 0 && !s->err)
		return errno ? -errno : -EIO;
	if (s->err)
		return s->err;
	qsort(s->pend, s->nr_pend, sizeof(*s->pend), pend_cmp);
	limit = flush ? UINT64_MAX : begin > s->settle_ns ? begin - s->settle_ns : 0;
	for (i = 0; i < s->nr_pend && s->pend[i].ev.ts <= limit; i++) {
		ret = cb(&s->pend[i].ev, arg);
		if (ret) {
			i++;
			break;
		}
	}
	memmove(s->pend, s->pend + i, (s->nr_pend - i) * sizeof(*s->pend));
	s->nr_pend -= i;
	return ret;
}

/* ---- finding a process's mm ---- */

struct mm_probe {
	int32_t tid;
	uint64_t t1, t2;	/* [.., t1): our own mm; [t1, t2]: the target's */
	uint64_t own[4], target[4];
	int nr_own, nr_target;
};

static void probe_add(uint64_t *set, int *nr, uint64_t mm)
{
	for (int i = 0; i < *nr; i++)
		if (set[i] == mm)
			return;
	if (*nr < 4)
		set[(*nr)++] = mm;
}

static int probe_cb(const struct trace_event *ev, void *arg)
{
	struct mm_probe *p = arg;

	if (ev->pid != p->tid || (ev->kind != TRACE_LOCK_START && ev->kind != TRACE_LOCK_ACQUIRED))
		return 0;
	if (ev->ts < p->t1)
		probe_add(p->own, &p->nr_own, ev->mm);
	else if (ev->ts <= p->t2)
		probe_add(p->target, &p->nr_target, ev->mm);
	return 0;
}

/* Read @path to the end (or only its first page), in page-sized reads. Return: 0 or -errno. */
static int read_proc(const char *path, bool whole)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	memset(buf, 0, sizeof(buf));	/* no page fault on our own mm inside the read */
	do
		n = read(fd, buf, sizeof(buf));
	while (n > 0 && whole);
	close(fd);
	return n < 0 ? -errno : 0;
}

int trace_session_find_mm(struct trace_session *s, pid_t pid, uint64_t *mm)
{
	static const char *const views[] = { "cmdline", "smaps_rollup" };
	struct mm_probe p = { .tid = (int32_t)syscall(SYS_gettid) };
	char filter[64], path[64];
	int ret;

	if (!(s->events & TRACE_EV_MMAP_LOCK) || pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (access(path, F_OK))
		return -ESRCH;
	snprintf(filter, sizeof(filter), "common_pid == %d", (int)p.tid);
	ret = apply_filter(s, EV_START, EV_RELEASED, filter);
	for (size_t v = 0; !ret && v < sizeof(views) / sizeof(views[0]); v++) {
		ret = trace_session_discard(s);
		if (ret)
			break;
		read_proc("/proc/self/cmdline", false);
		p.t1 = vml_now_ns();
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, views[v]);
		ret = read_proc(path, true);
		p.t2 = vml_now_ns();
		if (ret == -ENOENT) {
			ret = -ESRCH;
			break;
		}
		ret = trace_session_poll(s, true, probe_cb, &p);
		if (ret)
			break;
		for (int i = 0; i < p.nr_target; i++) {
			bool own = false;

			for (int j = 0; j < p.nr_own; j++)
				own |= p.target[i] == p.own[j];
			if (!own || pid == getpid()) {
				*mm = p.target[i];
				goto found;
			}
		}
		p.nr_own = p.nr_target = 0;
	}
	if (!ret)
		ret = -ESRCH;
found:
	apply_filter(s, EV_START, EV_RELEASED, "");
	trace_session_discard(s);
	return ret;
}
