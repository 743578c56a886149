// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * monitor_strace.c - what a monitoring tool reads of /proc, observed, not
 * taken from its documentation: the tool runs once (a resident one for a
 * few polls) under
 *
 *	strace -ff -y -qq -s 0 --seccomp-bpf \
 *	       -e trace=openat,open,read,pread64,readv,preadv -o DIR/t ...
 *
 * against the mapper after a run of it (so its address space has the
 * thousands of VMAs a sample ends with), and every read() of a /proc file
 * is counted: per file of the mapper (smaps, cmdline, task/TID/stat...),
 * per file name of other processes, and /proc files of no process. -y puts
 * each descriptor's path beside it, so relative opens (atop chdir()s into
 * /proc/PID) and inherited descriptors need no bookkeeping; -ff writes one
 * file per thread, so no call is split across lines.
 *
 * A poll is one run of a command; for a resident tool, the number of times
 * it opened the mapper's stat (every tool here reads it once a refresh),
 * or the number of polls it was given when it never did.
 *
 * Which of the files take the mapper's locks, and how, is the kernel's
 * business (docs/kernel.md section 2): mon_file_lock() says it for 6.18
 * and the model view that replays it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "monitor.h"
#include "sync/atomic.h"
#include "util/clock.h"

const char *mon_file_lock(const char *file, bool maps_per_vma, int *view)
{
	if (!strncmp(file, "task/", 5))
		file += 5;
	*view = -1;
	if (!strcmp(file, "maps")) {
		*view = VML_VIEW_MAPS;
		return maps_per_vma ? "per-VMA locks (RCU), no mmap_lock" : "mmap_lock each read()";
	}
	/* the page-walking views: as the host profile found (vmalock host: *_lock) */
	if (!strcmp(file, "smaps")) {
		*view = VML_VIEW_SMAPS;
		return bench_kernel_view_per_vma(VML_VIEW_SMAPS, NULL) ?
		       "per-VMA locks, no mmap_lock" : "mmap_lock each read()";
	}
	if (!strcmp(file, "smaps_rollup")) {
		*view = VML_VIEW_SMAPS_ROLLUP;
		return bench_kernel_view_per_vma(VML_VIEW_SMAPS_ROLLUP, NULL) ?
		       "per-VMA locks, no mmap_lock" : "mmap_lock whole walk";
	}
	if (!strcmp(file, "numa_maps")) {
		*view = VML_VIEW_NUMA_MAPS;
		return bench_kernel_view_per_vma(VML_VIEW_NUMA_MAPS, NULL) ?
		       "per-VMA locks, no mmap_lock" : "mmap_lock each read()";
	}
	/* access_remote_vm(): mmap_read_lock_killable around the copy */
	if (!strcmp(file, "cmdline") || !strcmp(file, "environ") || !strcmp(file, "mem")) {
		*view = MON_VIEW_HOLD;
		return "mmap_lock per copy";
	}
	if (!strcmp(file, "pagemap")) {
		*view = MON_VIEW_HOLD;
		return "mmap_lock per walk";
	}
	/* a write: clear_refs_write takes mmap_lock(W) for every value on 6.18 */
	if (!strcmp(file, "clear_refs")) {
		*view = MON_VIEW_CLEAR_REFS;
		return "mmap_lock(W) whole walk";
	}
	return "none";
}

/* The entry for @name in @files (added if new), or NULL when full. */
static struct mon_file *file_get(struct mon_file *files, unsigned int *nr, const char *name)
{
	for (unsigned int i = 0; i < *nr; i++)
		if (!strcmp(files[i].name, name))
			return &files[i];
	if (*nr == MON_MAX_FILES)
		return NULL;
	memset(&files[*nr], 0, sizeof(files[*nr]));
	snprintf(files[*nr].name, sizeof(files[*nr].name), "%s", name);
	return &files[(*nr)++];
}

static void size_seen(struct mon_file *f, uint64_t size)
{
	unsigned int least = 0;

	for (unsigned int i = 0; i < 8; i++) {
		if (f->size_count[i] && f->sizes[i] == size) {
			f->size_count[i]++;
			return;
		}
		if (f->size_count[i] < f->size_count[least])
			least = i;
	}
	/* a new size replaces the rarest (8 kinds are plenty: tools ask for one or two) */
	f->sizes[least] = size;
	f->size_count[least] = 1;
}

struct obs_parse {
	struct mon_obs *ob;
	pid_t mapper;
	uint8_t *seen;		/* bitmap of other pids read */
	uint8_t *self;		/* bitmap of the tool's own pids and tids (its trace files) */
	size_t seen_bits;
	double sys_reads, sys_bytes;
};

/*
 * Classify @path: the mapper's file (its name below /proc/PID/, task/TID/
 * folded to task/), another process's, or a /proc file of no process.
 * Return: the entry to count into, or NULL (not /proc, or the tool's own).
 */
static struct mon_file *classify(struct obs_parse *p, const char *path, bool *sys)
{
	char name[40];
	const char *rest;
	char *end;
	long pid;

	*sys = false;
	if (strncmp(path, "/proc/", 6))
		return NULL;
	path += 6;
	if (!strncmp(path, "self/", 5) || !strncmp(path, "thread-self/", 12))
		return NULL;	/* the tool's own */
	pid = strtol(path, &end, 10);
	if (end == path || *end != '/') {
		*sys = true;
		return NULL;
	}
	rest = end + 1;
	if (!strncmp(rest, "task/", 5)) {
		const char *t = strchr(rest + 5, '/');

		snprintf(name, sizeof(name), "task/%s", t ? t + 1 : "");
	} else {
		snprintf(name, sizeof(name), "%s", rest);
	}
	if (pid == p->mapper)
		return file_get(p->ob->mapper, &p->ob->nr_mapper, name);
	/* -y names /proc/self/... by the pid it is: the tool's own files */
	if ((size_t)pid < p->seen_bits && (p->self[pid / 8] & (1u << (pid % 8))))
		return NULL;
	if ((size_t)pid < p->seen_bits && !(p->seen[pid / 8] & (1u << (pid % 8)))) {
		p->seen[pid / 8] |= (uint8_t)(1u << (pid % 8));
		p->ob->other_pids++;
	}
	{
		struct mon_file *f = file_get(p->ob->other, &p->ob->nr_other, name);

		if (f && f->last_pid != (pid_t)pid) {
			f->last_pid = (pid_t)pid;
			f->pids++;
		}
		return f;
	}
}

/* The path in "N</path>" at @s, into @out. Return: the character after '>', or NULL. */
static const char *fd_path(const char *s, char *out, size_t len)
{
	const char *lt, *gt;

	while (*s >= '0' && *s <= '9')
		s++;
	if (*s != '<')
		return NULL;
	lt = s + 1;
	gt = strstr(lt, ">, ");
	if (!gt)
		gt = strchr(lt, '>');
	if (!gt || (size_t)(gt - lt) >= len)
		return NULL;
	memcpy(out, lt, (size_t)(gt - lt));
	out[gt - lt] = '\0';
	return gt + 1;
}

/* The return value at " = " (the last one on the line); false if there is none. */
static bool ret_value(const char *line, long *ret, const char **eq)
{
	const char *e = NULL, *s = line;

	while ((s = strstr(s, ") ")))
		e = s++;
	if (!e)
		return false;
	s = e + 1;
	while (*s == ' ')
		s++;
	if (*s != '=')
		return false;
	*eq = e;
	*ret = strtol(s + 1, NULL, 10);
	return true;
}

static void parse_open(struct obs_parse *p, const char *args, long ret, const char *eq)
{
	char path[512] = "", dir[256] = "";
	const char *q;
	struct mon_file *f;
	bool sys;

	if (ret >= 0) {
		/* "= 5</proc/1234/stat>" */
		const char *r = strstr(eq, "= ");

		if (!r || !fd_path(r + 2, path, sizeof(path)))
			return;
	} else {
		/* openat(AT_FDCWD</proc/1234>, "stat", ...) or open("/proc/1/stat", ...) */
		const char *lt = strchr(args, '<'), *quote = strchr(args, '"');

		if (lt && quote && lt < quote) {
			const char *gt = strchr(lt, '>');

			if (gt && (size_t)(gt - lt - 1) < sizeof(dir))
				snprintf(dir, sizeof(dir), "%.*s", (int)(gt - lt - 1), lt + 1);
		}
		if (!quote || !(q = strchr(quote + 1, '"')))
			return;
		if (quote[1] == '/' || !dir[0])
			snprintf(path, sizeof(path), "%.*s", (int)(q - quote - 1), quote + 1);
		else
			snprintf(path, sizeof(path), "%s/%.*s", dir, (int)(q - quote - 1), quote + 1);
	}
	f = classify(p, path, &sys);
	if (!f)
		return;
	if (ret >= 0)
		f->opens++;
	else
		f->fails++;
}

static void parse_read(struct obs_parse *p, const char *call, const char *args, long ret,
		       const char *eq)
{
	char path[512];
	uint64_t size = 0;
	struct mon_file *f;
	const char *s;
	bool sys;

	if (!fd_path(args, path, sizeof(path)))
		return;
	if (!strcmp(call, "readv") || !strcmp(call, "preadv")) {
		for (s = args; (s = strstr(s, "iov_len=")) && s < eq; s += 8)
			size += strtoull(s + 8, NULL, 10);
	} else {
		/* read(fd, buf, SIZE) and pread64(fd, buf, SIZE, OFFSET): the third argument */
		const char *c[4] = { NULL };
		int n = 0;

		for (s = args; s < eq && n < 4; s++)
			if (*s == ',' && s[1] == ' ')
				c[n++] = s;
		/* the buffer is printed as ""... or "": no commas inside with -s 0 */
		if (n >= 2)
			size = strtoull(c[1] + 2, NULL, 10);
	}
	f = classify(p, path, &sys);
	if (sys) {
		p->sys_reads++;
		p->sys_bytes += ret > 0 ? (double)ret : 0;
	}
	if (!f)
		return;
	f->reads++;
	f->data_reads += ret > 0;
	f->bytes += ret > 0 ? (double)ret : 0;
	size_seen(f, size);
}

static void parse_file(struct obs_parse *p, const char *path)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char call[16];
		const char *paren = strchr(line, '('), *eq;
		long ret;
		size_t n;

		if (!paren || (n = (size_t)(paren - line)) >= sizeof(call))
			continue;
		memcpy(call, line, n);
		call[n] = '\0';
		if (!ret_value(line, &ret, &eq))
			continue;
		if (!strcmp(call, "openat") || !strcmp(call, "open"))
			parse_open(p, paren + 1, ret, eq);
		else if (!strcmp(call, "read") || !strcmp(call, "pread64") || !strcmp(call, "readv") ||
			 !strcmp(call, "preadv"))
			parse_read(p, call, paren + 1, ret, eq);
	}
	free(line);
	fclose(f);
}

static void per_poll(struct mon_file *files, unsigned int nr, double polls)
{
	for (unsigned int i = 0; i < nr; i++) {
		struct mon_file *f = &files[i];
		unsigned int best = 0;

		for (unsigned int k = 1; k < 8; k++)
			if (f->size_count[k] > f->size_count[best])
				best = k;
		f->size = (unsigned int)f->sizes[best];
		f->opens /= polls;
		f->reads /= polls;
		f->data_reads /= polls;
		f->bytes /= polls;
		f->fails /= polls;
		f->pids /= polls;
	}
}

/* Parse and remove every trace file in @dir, then @dir. */
static void parse_dir(struct obs_parse *p, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[320];

	if (!d)
		return;
	/* the files are t.TID: every thread and process of the tool */
	while ((e = readdir(d))) {
		unsigned long tid;

		if (!strncmp(e->d_name, "t.", 2) && (tid = strtoul(e->d_name + 2, NULL, 10)) &&
		    tid < p->seen_bits)
			p->self[tid / 8] |= (uint8_t)(1u << (tid % 8));
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!strncmp(e->d_name, "t.", 2))
			parse_file(p, path);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

int mon_observe(struct mon_result *res, unsigned int t, pid_t mapper)
{
	const struct mon_opts *o = res->o;
	struct mon_obs *ob = &res->obs[t];
	const struct mon_tool *tool = &res->tools[t];
	char dir[64] = "/tmp/vmalock-strace.XXXXXX";
	struct mon_driver d = {
		.res = res,
		.tool = tool,
		.mapper = mapper,
		.strace_dir = dir,
		.interval_ns = (uint64_t)(o->interval_s * NSEC_PER_SEC),
		/* strace slows a tool several times over */
		.timeout_ns = (uint64_t)(4 * o->tool_timeout_s * NSEC_PER_SEC),
	};
	struct obs_parse p = { .ob = ob, .mapper = mapper };
	uint64_t t0, window;
	double stat_opens = 0;
	int ret;

	memset(ob, 0, sizeof(*ob));
	if (!mkdtemp(dir)) {
		snprintf(ob->why, sizeof(ob->why), "temporary directory: %s", strerror(errno));
		return 0;
	}
	switch (tool->kind) {
	case MON_ONESHOT:
		d.max_polls = 1;
		break;
	case MON_EXPORTER:
		d.max_polls = 3;	/* back to back: what a scrape reads does not depend on when */
		d.interval_ns = 100 * NSEC_PER_MSEC;
		break;
	case MON_PTY:
		break;
	}
	t0 = vml_now_ns();
	ret = mon_driver_start(&d, 0);
	if (!ret) {
		/* a resident terminal program: two and a half of its own intervals */
		window = tool->kind == MON_PTY ? d.interval_ns * 5 / 2 : d.timeout_ns * 2;
		/* pairs with driver_main()'s store_release(&d->done) after its last poll */
		while (!load_acquire(&d.done) && vml_now_ns() - t0 < window)
			bench_sleep_ns(10 * NSEC_PER_MSEC);
	}
	mon_driver_stop(&d);
	ob->wall_ms = (double)(vml_now_ns() - t0) / 1e6;
	p.seen_bits = 1u << 22;		/* PID_MAX_LIMIT */
	p.seen = calloc(p.seen_bits / 8, 1);
	p.self = calloc(p.seen_bits / 8, 1);
	if (p.seen && p.self)
		parse_dir(&p, dir);
	free(p.seen);
	free(p.self);
	if (ret || (!d.polls && tool->kind != MON_PTY)) {
		snprintf(ob->why, sizeof(ob->why), "observing it failed: %s",
			 d.note[0] ? d.note : strerror(-ret));
		return 0;
	}
	for (unsigned int i = 0; i < ob->nr_mapper; i++)
		if (!strcmp(ob->mapper[i].name, "stat"))
			stat_opens = ob->mapper[i].opens;
	ob->polls = tool->kind == MON_ONESHOT ? 1 : stat_opens ? stat_opens : d.polls ? d.polls : 1;
	if (d.timeouts)
		snprintf(ob->why, sizeof(ob->why), "under strace: %s", d.note);
	else if (d.note[0])
		snprintf(ob->why, sizeof(ob->why), "%s", d.note);
	per_poll(ob->mapper, ob->nr_mapper, ob->polls);
	per_poll(ob->other, ob->nr_other, ob->polls);
	/* other_pids stays the number of distinct processes: each poll reads the same */
	ob->sys_reads = p.sys_reads / ob->polls;
	ob->sys_bytes = p.sys_bytes / ob->polls;
	ob->done = true;
	return 0;
}
