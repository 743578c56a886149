// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-watch-stall VMALOCK - `vmalock watch` must name who stalls a process
 * and by how much, checked against what the stalled process measured itself.
 *
 * The planted stall (Paul McKenney's method, docs/kernel.md §10): a mapper
 * process maps and unmaps random pages of a populated 128 MiB region on
 * CPU 0, timing every call, while a nice-15 process on CPU 1 reads the
 * mapper's /proc/PID/smaps in a loop - under mmap_lock on 6.18, so the
 * mapper's mmap()/munmap() wait for it. `vmalock watch MAPPER --json` runs
 * all along, from before the mapper's first call to after its last.
 *
 * What the mapper measures itself, and why that is the right yardstick:
 * a call that waited for mmap_lock slept (the rwsem queues the writer and
 * schedules), so its thread's voluntary context switches (getrusage
 * RUSAGE_THREAD, read before and after the call, outside the timed span)
 * went up; a call that did not wait did not sleep (an anonymous
 * populate of one page and an unmap block on nothing else here). The
 * stall of a call that waited is its duration minus what the same kind of
 * call costs when it does not wait - the median of this run's calls of
 * that kind that did not sleep. The mapper's stall is the sum over the
 * calls that slept. Calls that were only preempted (involuntary switches,
 * other load on a busy machine) are not stalls on the lock and are not
 * counted, which is what makes the figure robust on a loaded machine:
 * the test compares a ratio and an attribution, never a speed.
 *
 * watch's figure is the mapper thread's total wait for mmap_lock (start
 * of locking to acquire, from the kernel's tracepoints) over the waits
 * that slept: its total less what it reports as "spun" (contended waits
 * that got the lock without sleeping - the rwsem's optimistic spin - which
 * are the calls the yardstick above leaves out; on a busy machine there
 * were 16,703 of them, 69 ms, which made the totals differ by 14%). The
 * two must agree within 10%, and the outside task that held the lock
 * longest during those waits must be the reader, holding it for read.
 *
 * Then a writer instead of the reader: a nice-15 process writing 1 to the
 * mapper's /proc/PID/clear_refs in a loop, as cadvisor's working-set
 * estimation does - 6.18 takes mmap_lock for write for the whole page-table
 * walk. watch must name it as the outside holder, holding for write, and
 * the mapper must have measured a stall.
 *
 * Then the same with no reader and two mapper threads (so that there are
 * waits, for each other): watch must attribute nothing to any task
 * outside the mapper. And after each watch, its tracefs instance
 * (vmalock-PID) must be gone. Last, a watched process that exits: watch
 * ends by itself, says so, and writes what it gathered.
 *
 * Skips (exit 77, one line) without root or when watch says tracing is
 * unavailable. Exit 0 pass, 1 fail. SECONDS (default 3) is the mapper's
 * run; REPORT keeps watch's text report of the planted stall.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

#define REGION (128UL << 20)
#define PAGE 4096UL
#define MAX_CALLS (1 << 20)
#define MAPPER_SLEEP_NS (10 * NSEC_PER_USEC)
#define TOLERANCE 0.10

struct call {
	uint64_t ns;		/* how long the call took */
	uint8_t map;		/* mmap (else munmap) */
	uint8_t slept;		/* its thread slept during it */
};

struct shared {
	double seconds;
	int nthreads;
	_Atomic unsigned long nr_calls;	/* thread 0's, in calls[] */
	_Atomic unsigned long other_calls;
	struct call calls[MAX_CALLS];
};

static const char *vmalock;
static const char *report_path;	/* keep the planted stall's text report here */
static struct shared *sh;
static int nr_cpus;
static int checks, failed;

static void check(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool cond, const char *fmt, ...)
{
	va_list ap;

	checks++;
	failed += !cond;
	printf("%sok %d - ", cond ? "" : "not ", checks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void skip(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	exit(77);
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (nr_cpus < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* ---- the mapper (a child process) ---- */

static unsigned long region;
static _Atomic bool go_on;

static uint64_t rand_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static long nvcsw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

static void *mapper_thread(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg + 1, end;
	struct timespec pause_ts = vml_ns_to_timespec(MAPPER_SLEEP_NS);
	bool first = !arg;

	end = vml_now_ns() + (uint64_t)(sh->seconds * NSEC_PER_SEC);
	while (vml_now_ns() < end && atomic_load(&go_on)) {
		uint64_t x = rand_next(&seed), t0, t1;
		unsigned long a = region + (x % (REGION / PAGE)) * PAGE;
		long v0, v1;
		bool map = x & (1ULL << 40);

		v0 = nvcsw();
		t0 = vml_now_ns();
		if (map)
			mmap((void *)a, PAGE, PROT_READ | PROT_WRITE,
			     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		else
			munmap((void *)a, PAGE);
		t1 = vml_now_ns();
		v1 = nvcsw();
		if (first && sh->nr_calls < MAX_CALLS) {
			struct call *c = &sh->calls[sh->nr_calls];

			c->map = map;
			c->slept = v1 != v0;
			c->ns = t1 - t0;
			atomic_store(&sh->nr_calls, sh->nr_calls + 1);
		} else if (!first) {
			atomic_fetch_add(&sh->other_calls, 1);
		}
		nanosleep(&pause_ts, NULL);
	}
	return NULL;
}

/* Set up, say 'R'eady on @out, wait for a byte on @in, run, say 'D'one, wait to be killed. */
static void mapper_main(int in, int out)
{
	pthread_t th[4];
	char c;
	void *p;

	prctl(PR_SET_NAME, "stall-mapper");
	pin(0);
	p = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		 -1, 0);
	if (p == MAP_FAILED)
		_exit(1);
	region = (unsigned long)p;
	memset(sh->calls, 0, sizeof(sh->calls));	/* no faults inside the run */
	atomic_store(&go_on, true);
	if (write(out, "R", 1) != 1 || read(in, &c, 1) != 1)
		_exit(1);
	for (int i = 1; i < sh->nthreads; i++)
		pthread_create(&th[i], NULL, mapper_thread, (void *)(uintptr_t)i);
	mapper_thread(NULL);
	for (int i = 1; i < sh->nthreads; i++)
		pthread_join(th[i], NULL);
	if (write(out, "D", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

struct mapper {
	pid_t pid;
	int to, from;
};

static int mapper_start(struct mapper *m, int nthreads, double seconds)
{
	int a[2], b[2];
	char c;

	sh->nthreads = nthreads;
	sh->seconds = seconds;
	sh->nr_calls = 0;
	sh->other_calls = 0;
	if (pipe(a) || pipe(b))
		return -1;
	m->pid = fork();
	if (m->pid == 0) {
		close(a[1]);
		close(b[0]);
		mapper_main(a[0], b[1]);
	}
	close(a[0]);
	close(b[1]);
	m->to = a[1];
	m->from = b[0];
	return read(m->from, &c, 1) == 1 && c == 'R' ? 0 : -1;
}

static void mapper_run(struct mapper *m)
{
	char c;

	if (write(m->to, "G", 1) != 1 || read(m->from, &c, 1) != 1 || c != 'D')
		fprintf(stderr, "# the mapper failed\n");
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* ---- the reader: nice 15, CPU 1, /proc/MAPPER/smaps in a loop ---- */

static pid_t reader_start(pid_t target)
{
	pid_t pid = fork();
	char path[64], buf[4096];

	if (pid)
		return pid;
	prctl(PR_SET_NAME, "smaps-reader");
	pin(1);
	setpriority(PRIO_PROCESS, 0, 15);
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)target);
	for (;;) {
		int fd = open(path, O_RDONLY);

		if (fd < 0)
			_exit(1);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
}

/* ---- the writer: nice 15, CPU 1, 1 into /proc/MAPPER/clear_refs in a loop ---- */

static pid_t clear_refs_start(pid_t target)
{
	pid_t pid = fork();
	char path[64];

	if (pid)
		return pid;
	prctl(PR_SET_NAME, "clear-refs");
	pin(1);
	setpriority(PRIO_PROCESS, 0, 15);
	snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)target);
	for (;;) {
		int fd = open(path, O_WRONLY);

		if (fd < 0 || write(fd, "1", 1) != 1)
			_exit(1);
		close(fd);
	}
}

/* ---- vmalock watch ---- */

struct watch {
	pid_t pid;
	int err;		/* its stderr */
	char json[64];
};

/*
 * Start `vmalock watch PID --json FILE` and wait until it watches; its
 * text report goes to @report (NULL: /dev/null).
 */
static int watch_start(struct watch *w, pid_t target, const char *report)
{
	char pidbuf[16], line[512];
	int p[2];
	size_t len = 0;

	snprintf(w->json, sizeof(w->json), "/tmp/vmalock-watch-test-%d.json", (int)getpid());
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)target);
	if (pipe(p))
		return -1;
	w->pid = fork();
	if (w->pid == 0) {
		int out = open(report ? report : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(out, 1);
		dup2(p[1], 2);
		execl(vmalock, vmalock, "watch", pidbuf, "--json", w->json, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	w->err = p[0];
	/* "vmalock watch: watching PID ..." once tracing is on, or one line and exit 2 */
	for (;;) {
		struct pollfd pfd = { .fd = w->err, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 30000) <= 0)
			return -1;
		n = read(w->err, line + len, sizeof(line) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		line[len] = '\0';
		if (strstr(line, "watching"))
			return 0;
	}
	{
		int st;

		waitpid(w->pid, &st, 0);
		line[strcspn(line, "\n")] = '\0';
		/* Only before any check: a later refusal is a failure, not a skip. */
		if (WIFEXITED(st) && WEXITSTATUS(st) == 2 && !checks)
			skip(len ? line : "vmalock watch cannot trace here");
		if (len)
			printf("# vmalock watch: %s\n", line);
	}
	return -1;
}

/*
 * SIGINT it (its normal stop) - or, with @wait_s, first wait that long for
 * it to end by itself - then parse its JSON. Its stderr lands in @errtext.
 */
static json_t *watch_finish(struct watch *w, int *status, double wait_s, char *errtext,
			    size_t len)
{
	json_error_t err;
	json_t *root;
	size_t got = 0;
	ssize_t n;

	for (double waited = 0; waited < wait_s; waited += 0.05) {
		if (waitpid(w->pid, status, WNOHANG) == w->pid)
			goto ended;
		usleep(50000);
	}
	kill(w->pid, SIGINT);
	waitpid(w->pid, status, 0);
ended:
	while (got + 1 < len && (n = read(w->err, errtext + got, len - 1 - got)) > 0)
		got += (size_t)n;
	errtext[got] = '\0';
	close(w->err);
	root = json_load_file(w->json, 0, &err);
	if (!root)
		printf("# %s: %s\n", w->json, err.text);
	unlink(w->json);
	return root;
}

/* Does the tracefs instance vmalock-@pid exist? Mounts tracefs privately if needed. */
static bool instance_exists(pid_t pid)
{
	static bool mounted;
	char path[128];
	struct stat st;

	if (!mounted && stat("/sys/kernel/tracing/instances", &st)) {
		if (unshare(CLONE_NEWNS) || mount("none", "/", NULL, MS_REC | MS_SLAVE, NULL) ||
		    mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
			return false;
	}
	mounted = true;
	snprintf(path, sizeof(path), "/sys/kernel/tracing/instances/vmalock-%d", (int)pid);
	return stat(path, &st) == 0;
}

static json_t *thread_of(json_t *root, pid_t tid)
{
	size_t i;
	json_t *t;

	json_array_foreach(json_object_get(root, "threads"), i, t)
		if (json_integer_value(json_object_get(t, "tid")) == tid)
			return t;
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of the calls of one kind that did not sleep. */
static uint64_t base_ns(bool map)
{
	unsigned long n = atomic_load(&sh->nr_calls), k = 0;
	uint64_t *v = malloc(n * sizeof(*v) + 1), med;

	for (unsigned long i = 0; i < n; i++)
		if (sh->calls[i].map == map && !sh->calls[i].slept)
			v[k++] = sh->calls[i].ns;
	if (!k) {
		free(v);
		return 0;
	}
	qsort(v, k, sizeof(*v), cmp_u64);
	med = v[k / 2];
	free(v);
	return med;
}

static void test_planted_stall(double seconds)
{
	uint64_t base[2], stall = 0, all_excess = 0, total = 0, traced, spun;
	unsigned long n, slept = 0;
	struct mapper m;
	struct watch w;
	json_t *root, *t, *h, *top = NULL;
	char errtext[4096];
	pid_t reader;
	int status;
	size_t i;

	if (mapper_start(&m, 1, seconds) || watch_start(&w, m.pid, report_path)) {
		check(false, "stall: mapper and watch start");
		return;
	}
	reader = reader_start(m.pid);
	usleep(200000);
	mapper_run(&m);
	reap(reader);
	usleep(300000);
	root = watch_finish(&w, &status, 0, errtext, sizeof(errtext));
	reap(m.pid);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "stall: watch ends at SIGINT, status 0");
	check(!instance_exists(w.pid), "stall: watch's tracefs instance vmalock-%d is gone",
	      (int)w.pid);
	if (!root) {
		check(false, "stall: watch wrote its JSON");
		return;
	}

	n = atomic_load(&sh->nr_calls);
	base[0] = base_ns(false);
	base[1] = base_ns(true);
	for (unsigned long c = 0; c < n; c++) {
		const struct call *k = &sh->calls[c];
		uint64_t ex = k->ns > base[k->map] ? k->ns - base[k->map] : 0;

		total += k->ns;
		all_excess += ex;
		if (k->slept) {
			slept++;
			stall += ex;
		}
	}
	printf("# mapper %d: %lu calls in %.1f s, %lu slept; uncontended median mmap %.1f us, "
	       "munmap %.1f us; its stall (calls that slept, minus that) %.3f ms; all excess "
	       "%.3f ms; time in calls %.3f ms\n", (int)m.pid, n, seconds, slept,
	       base[1] / 1e3, base[0] / 1e3, stall / 1e6, all_excess / 1e6, total / 1e6);

	t = thread_of(root, m.pid);
	check(t != NULL, "stall: watch reports the mapper's thread %d", (int)m.pid);
	if (!t)
		goto out;
	traced = json_integer_value(json_object_get(json_object_get(t, "waits"), "total_ns"));
	spun = json_integer_value(json_object_get(json_object_get(t, "spun"), "total_ns"));
	printf("# watch: %lld waits, total %.3f ms, longest %.3f ms; %lld without sleeping, "
	       "%.3f ms\n",
	       json_integer_value(json_object_get(json_object_get(t, "waits"), "count")),
	       traced / 1e6,
	       json_integer_value(json_object_get(json_object_get(t, "waits"), "max_ns")) / 1e6,
	       json_integer_value(json_object_get(json_object_get(t, "spun"), "count")),
	       json_integer_value(json_object_get(json_object_get(t, "spun"), "total_ns")) / 1e6);
	json_array_foreach(json_object_get(t, "holders"), i, h) {
		printf("#   held by %lld (%s) %s%s: %lld waits, overlap %.3f ms\n",
		       json_integer_value(json_object_get(h, "pid")),
		       json_string_value(json_object_get(h, "comm")),
		       json_string_value(json_object_get(h, "mode")),
		       json_is_true(json_object_get(h, "outside")) ? ", outside" : "",
		       json_integer_value(json_object_get(h, "waits")),
		       json_integer_value(json_object_get(h, "overlap_ns")) / 1e6);
		if (json_is_true(json_object_get(h, "outside")) &&
		    (!top || json_integer_value(json_object_get(h, "overlap_ns")) >
			     json_integer_value(json_object_get(top, "overlap_ns"))))
			top = h;
	}
	check(top && json_integer_value(json_object_get(top, "pid")) == reader &&
	      !strcmp(json_string_value(json_object_get(top, "mode")), "read"),
	      "stall: the outside holder during the waits is the reader %d, for read", (int)reader);
	check(stall > 0, "stall: the mapper measured a stall");
	traced = traced > spun ? traced - spun : 0;
	check(stall > 0 && fabs((double)traced - (double)stall) <= TOLERANCE * (double)stall,
	      "stall: watch's wait in the waits that slept, %.3f ms, is within %.0f%% of the "
	      "mapper's own %.3f ms (ratio %.3f)", traced / 1e6, TOLERANCE * 100, stall / 1e6,
	      stall ? (double)traced / (double)stall : 0);
out:
	json_decref(root);
}

/* The planted clear_refs writer: named, for write, and the mapper stalled. */
static void test_planted_clear_refs(double seconds)
{
	uint64_t base[2], stall = 0;
	struct mapper m;
	struct watch w;
	json_t *root, *t, *h, *top = NULL;
	char errtext[4096];
	pid_t writer;
	int status;
	size_t i;
	unsigned long n;

	if (mapper_start(&m, 1, seconds) || watch_start(&w, m.pid, NULL)) {
		check(false, "clear_refs: mapper and watch start");
		return;
	}
	writer = clear_refs_start(m.pid);
	usleep(200000);
	mapper_run(&m);
	reap(writer);
	usleep(300000);
	root = watch_finish(&w, &status, 0, errtext, sizeof(errtext));
	reap(m.pid);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "clear_refs: watch ends at SIGINT, status 0");
	if (!root) {
		check(false, "clear_refs: watch wrote its JSON");
		return;
	}
	n = atomic_load(&sh->nr_calls);
	base[0] = base_ns(false);
	base[1] = base_ns(true);
	for (unsigned long c = 0; c < n; c++) {
		const struct call *k = &sh->calls[c];

		if (k->slept && k->ns > base[k->map])
			stall += k->ns - base[k->map];
	}
	t = thread_of(root, m.pid);
	check(t != NULL, "clear_refs: watch reports the mapper's thread %d", (int)m.pid);
	if (t) {
		json_array_foreach(json_object_get(t, "holders"), i, h) {
			printf("#   held by %lld (%s) %s%s: %lld waits, overlap %.3f ms\n",
			       json_integer_value(json_object_get(h, "pid")),
			       json_string_value(json_object_get(h, "comm")),
			       json_string_value(json_object_get(h, "mode")),
			       json_is_true(json_object_get(h, "outside")) ? ", outside" : "",
			       json_integer_value(json_object_get(h, "waits")),
			       json_integer_value(json_object_get(h, "overlap_ns")) / 1e6);
			if (json_is_true(json_object_get(h, "outside")) &&
			    (!top || json_integer_value(json_object_get(h, "overlap_ns")) >
				     json_integer_value(json_object_get(top, "overlap_ns"))))
				top = h;
		}
	}
	check(top && json_integer_value(json_object_get(top, "pid")) == writer &&
	      !strcmp(json_string_value(json_object_get(top, "mode")), "write"),
	      "clear_refs: the outside holder during the waits is the writer %d, for write",
	      (int)writer);
	printf("# clear_refs: the mapper's stall %.3f ms in %lu calls\n", stall / 1e6, n);
	check(stall > 0, "clear_refs: the mapper measured a stall");
	json_decref(root);
}

static void test_no_reader(double seconds)
{
	struct mapper m;
	struct watch w;
	json_t *root, *t, *h;
	uint64_t waits = 0, outside = 0;
	bool own_holder = false;
	char errtext[4096];
	int status;
	size_t i, j;

	if (mapper_start(&m, 2, seconds) || watch_start(&w, m.pid, NULL)) {
		check(false, "no reader: mapper and watch start");
		return;
	}
	mapper_run(&m);
	usleep(300000);
	root = watch_finish(&w, &status, 0, errtext, sizeof(errtext));
	reap(m.pid);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "no reader: watch status 0");
	check(!instance_exists(w.pid), "no reader: watch's instance vmalock-%d is gone", (int)w.pid);
	if (!root) {
		check(false, "no reader: watch wrote its JSON");
		return;
	}
	json_array_foreach(json_object_get(root, "threads"), i, t) {
		waits += json_integer_value(json_object_get(json_object_get(t, "waits"), "count"));
		json_array_foreach(json_object_get(t, "holders"), j, h) {
			bool out = json_is_true(json_object_get(h, "outside"));

			if (out) {
				pid_t hp = (pid_t)json_integer_value(json_object_get(h, "pid"));
				const char *comm = json_string_value(json_object_get(h, "comm"));
				/*
				 * Another process on the machine may really read the
				 * mapper's address space meanwhile (atop, top, ps scan
				 * every process): watch is right to name it. What must
				 * never happen is a task of ours - the mapper, this
				 * test, watch itself, a reader - named as outside.
				 */
				bool ours = hp == m.pid || hp == getpid() || hp == w.pid ||
					    (comm && (!strcmp(comm, "smaps-reader") ||
						      !strcmp(comm, "clear-refs") ||
						      !strncmp(comm, "stall-", 6)));

				printf("# outside holder %d (%s): %lld ns%s\n", (int)hp,
				       comm ? comm : "?",
				       json_integer_value(json_object_get(h, "overlap_ns")),
				       ours ? "" : " (another process on this machine: not ours)");
				if (ours)
					outside += json_integer_value(json_object_get(h, "overlap_ns"));
			} else {
				own_holder = true;
			}
		}
	}
	printf("# two mapper threads, %lu + %lu calls: %llu waits\n",
	       atomic_load(&sh->nr_calls), atomic_load(&sh->other_calls),
	       (unsigned long long)waits);
	check(outside == 0, "no reader: none of our tasks is named as an outside holder");
	check(waits == 0 || own_holder, "no reader: the threads' waits are blamed on each other");
	json_decref(root);
}

/* The watched process exits: watch says so, ends by itself, keeps what it gathered. */
static void test_exit(void)
{
	char errtext[4096];
	struct watch w;
	json_t *root;
	pid_t child;
	int status, gate[2];
	char c;

	/* The child lives until watch is watching it, however long that takes. */
	if (pipe2(gate, O_CLOEXEC)) {	/* not inherited by watch: its EOF is ours to give */
		check(false, "exit: a pipe");
		return;
	}
	child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "short-lived");
		close(gate[1]);
		(void)!read(gate[0], &c, 1);	/* EOF when the parent closes its end */
		usleep(200000);
		_exit(0);
	}
	close(gate[0]);
	if (watch_start(&w, child, NULL)) {
		check(false, "exit: watch starts");
		close(gate[1]);
		reap(child);
		return;
	}
	close(gate[1]);
	waitpid(child, NULL, 0);
	root = watch_finish(&w, &status, 10, errtext, sizeof(errtext));
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0 && strstr(errtext, "exited"),
	      "exit: watch ends by itself when the process exits, says so, status 0");
	check(root && json_is_true(json_object_get(root, "exited")),
	      "exit: its JSON says the process exited");
	json_decref(root);
}

int main(int argc, char **argv)
{
	double seconds = argc > 2 ? atof(argv[2]) : 3;

	report_path = argc > 3 ? argv[3] : NULL;
	if (argc < 2 || seconds <= 0) {
		fprintf(stderr, "usage: test-watch-stall VMALOCK [SECONDS [REPORT]]\n");
		return 2;
	}
	vmalock = argv[1];
	if (geteuid() != 0)
		skip("not root: vmalock watch needs root for tracefs");
	nr_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	test_planted_stall(seconds);
	test_planted_clear_refs(seconds > 2 ? 2 : seconds);
	test_no_reader(seconds > 2 ? 2 : seconds);
	test_exit();
	printf("1..%d\n", checks);
	return failed ? 1 : 0;
}
