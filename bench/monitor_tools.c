// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * monitor_tools.c - the monitoring tools of `vmalock bench monitor` and how
 * each is run against the mapper.
 *
 * Three ways, after how the tool is used in practice:
 *  - a command run once per poll (pmap, smem, top -b -n 1, ps, atop and
 *    pidstat with a count of 1, any --tool): `/bin/sh -c CMD` every
 *    interval; a poll still running after --tool-timeout is killed with its
 *    whole process group and counted;
 *  - htop, which has no batch mode: left running on a pseudo-terminal of
 *    ours with its own delay set to the interval (htop -d), its screen
 *    read and thrown away; its poll time is the CPU time it used per
 *    interval;
 *  - prometheus-process-exporter: started on a loopback port with a config
 *    that matches only this run's mapper (by its command line, which ends
 *    with our pid) and smaps gathering on; each poll is one scrape of
 *    /metrics by a small HTTP/1.0 GET of our own; stopped afterwards.
 *
 * Every tool runs in a session of its own (its process group is what a
 * timeout kills), with the polling thread's CPU (the readers' CPU of
 * proc-vs-map) and nice value, stdin and stdout on /dev/null.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "monitor.h"
#include "sync/atomic.h"
#include "util/clock.h"

extern char **environ;

struct builtin {
	const char *name, *cmd, *exe, *package, *learns;
	enum mon_kind kind;
};

/*
 * The built-in tools: what Debian packages that reads per-process memory
 * views, each invoked the way an operator or an agent polls with it.
 * docs/bench-methods.md ("What each tool needs and what you learn") has
 * the same list with what each needs.
 */
static const struct builtin builtins[] = {
	{ "pmap", "exec pmap -X {pid}", "pmap", "procps",
	  "every mapping's RSS, PSS, dirty and swap: all of smaps", MON_ONESHOT },
	{ "smem", "exec smem -P 'vmalock-child [0-9]+ {ppid}$'", "smem", "smem",
	  "USS, PSS and RSS per process, from smaps", MON_ONESHOT },
	{ "top", "exec top -b -n 1 -p {pid}", "top", "procps",
	  "RES, VIRT, SHR and %CPU, from stat, statm and status", MON_ONESHOT },
	{ "ps", "exec ps -o rss,vsz -p {pid}", "ps", "procps",
	  "RSS and VSZ, from stat and status", MON_ONESHOT },
	{ "htop", "exec htop -d {interval_ds} -p {pid}", "htop", "htop",
	  "top's columns, refreshed in place (no batch mode: run on a\n"
	  "pseudo-terminal)", MON_PTY },
	{ "atop", "exec atop -P MEM,PRM 1 1", "atop", "atop",
	  "system and per-process memory of every process, parseable", MON_ONESHOT },
	{ "atop-R", "exec atop -R -P MEM,PRM 1 1", "atop", "atop",
	  "the same with -R: every process's PSS, from smaps_rollup or\n"
	  "smaps", MON_ONESHOT },
	{ "pidstat", "exec pidstat -r -p {pid} 1 1", "pidstat", "sysstat",
	  "faults per second, VSZ and RSS over one second", MON_ONESHOT },
	{ "clear_refs", "exec sh -c 'cat /proc/{pid}/smaps >/dev/null && "
	  "echo 1 >/proc/{pid}/clear_refs'", "sh", "dash",
	  "cadvisor's working-set estimate: Referenced from smaps, then\n"
	  "every page's referenced bits cleared (clear_refs 1: mmap_lock\n"
	  "held for write for the whole walk)", MON_ONESHOT },
	{ "process-exporter", "exec prometheus-process-exporter -web.listen-address "
	  "127.0.0.1:{port} -config.path {config} -gather-smaps=true",
	  "prometheus-process-exporter", "prometheus-process-exporter",
	  "Prometheus metrics per process group, PSS from smaps_rollup;\n"
	  "one scrape of /metrics per interval", MON_EXPORTER },
};
#define NR_BUILTINS (sizeof(builtins) / sizeof(builtins[0]))

/* The built-in tools' names, comma-separated. */
static const char *tool_names(void)
{
	static char names[256];

	if (!names[0])
		for (size_t i = 0; i < NR_BUILTINS; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i ? "," : "", builtins[i].name);
	return names;
}

static bool is_tool(const char *name)
{
	for (size_t i = 0; i < NR_BUILTINS; i++)
		if (!strcmp(name, builtins[i].name))
			return true;
	return false;
}

bool mon_have_exe(const char *exe)
{
	const char *path = getenv("PATH");
	char buf[512];

	if (strchr(exe, '/'))
		return !access(exe, X_OK);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if (n && (size_t)snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, exe) < sizeof(buf) &&
		    !access(buf, X_OK))
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

/* Is @name in the comma list @list? */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *s = list; *s;) {
		size_t k = strcspn(s, ",");

		if (k == n && !strncmp(s, name, n))
			return true;
		s += k + (s[k] == ',');
	}
	return false;
}

static void add_builtin(struct mon_result *res, const struct builtin *b)
{
	struct mon_tool *t = &res->tools[res->nr_tools++];

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", b->name);
	snprintf(t->cmd, sizeof(t->cmd), "%s", b->cmd);
	snprintf(t->exe, sizeof(t->exe), "%s", b->exe);
	t->kind = b->kind;
	t->package = b->package;
	t->learns = b->learns;
	t->builtin = true;
	if (!mon_have_exe(b->exe))
		snprintf(t->skip, sizeof(t->skip), "%s not installed (Debian package %s; "
			 "scripts/install-deps.sh installs it)", b->exe, b->package);
}

static void add_custom(struct mon_result *res, const char *cmd)
{
	struct mon_tool *t = &res->tools[res->nr_tools++];
	char exe[64], name[24];
	const char *base;
	size_t n;

	memset(t, 0, sizeof(*t));
	snprintf(t->cmd, sizeof(t->cmd), "%s", cmd);
	t->kind = MON_ONESHOT;
	/* the program: the first word, after any VAR=value assignments */
	for (;;) {
		while (*cmd == ' ' || *cmd == '\t')
			cmd++;
		n = strcspn(cmd, " \t");
		if (!memchr(cmd, '=', n) || !cmd[n])
			break;
		cmd += n;
	}
	snprintf(exe, sizeof(exe), "%.*s", (int)n, cmd);
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	snprintf(name, sizeof(name), "%.23s", base);
	/* two --tool rows of one program: number them */
	for (unsigned int i = 0; i + 1 < res->nr_tools; i++)
		if (!strcmp(res->tools[i].name, name)) {
			snprintf(name, sizeof(name), "%.18s#%u", base, res->nr_tools % 100);
			break;
		}
	memcpy(t->exe, exe, sizeof(t->exe));
	memcpy(t->name, name, sizeof(t->name));
	/* a shell word (exec, for, a subshell...) is the shell's business; a program must exist */
	if (strcspn(exe, "(;|&<>$`'\"{") == strlen(exe) && strcmp(exe, "exec") && strcmp(exe, "for") &&
	    strcmp(exe, "while") && strcmp(exe, "cd") && !mon_have_exe(exe))
		snprintf(t->skip, sizeof(t->skip), "%.60s: not found in PATH", exe);
}

int mon_set_tool(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	struct mon_cmds *l = dst;

	if (!*val || strspn(val, " \t") == strlen(val))
		return cli_usage_error(cmd, "%s: empty command", o->name);
	if (strlen(val) >= 500)
		return cli_usage_error(cmd, "%s: command longer than 500 characters", o->name);
	if (l->nr == MON_MAX_CMDS)
		return cli_usage_error(cmd, "%s: more than %d tools", o->name, MON_MAX_CMDS);
	l->cmd[l->nr++] = val;
	return 0;
}

int mon_set_tool_names(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	if (strcmp(val, "all") && strcmp(val, "none")) {
		for (const char *s = val;;) {
			size_t n = strcspn(s, ",");
			char name[32];

			if (!n || n >= sizeof(name))
				return cli_usage_error(cmd, "%s: bad value '%s' (all, none, or some of %s)",
						       o->name, val, tool_names());
			memcpy(name, s, n);
			name[n] = '\0';
			if (!is_tool(name))
				return cli_usage_error(cmd, "%s: unknown tool '%s' (%s)", o->name, name,
						       tool_names());
			if (!s[n])
				break;
			s += n + 1;
		}
	}
	*(const char **)dst = val;
	return 0;
}

int mon_tools_init(const struct mon_opts *o, struct mon_result *res)
{
	const char *sel = o->tool_names;

	if (!sel)
		sel = o->tools.nr ? "none" : "all";
	for (size_t i = 0; i < NR_BUILTINS; i++)
		if (!strcmp(sel, "all") || in_list(sel, builtins[i].name))
			add_builtin(res, &builtins[i]);
	for (unsigned int i = 0; i < o->tools.nr && res->nr_tools < MON_MAX_TOOLS; i++)
		add_custom(res, o->tools.cmd[i]);
	return 0;
}

/* ---- expanding a command ---- */

/* @t's command with its placeholders filled in. Return: 0 or -ENAMETOOLONG. */
static int expand(const struct mon_driver *d, char *out, size_t len)
{
	const char *s = d->tool->cmd;
	size_t n = 0;

	while (*s) {
		char val[128] = "";
		const char *end;
		int k;

		if (*s != '{' || !(end = strchr(s, '}'))) {
			if (n + 1 >= len)
				return -ENAMETOOLONG;
			out[n++] = *s++;
			continue;
		}
		k = (int)(end - s + 1);
		if (!strncmp(s, "{pid}", (size_t)k))
			snprintf(val, sizeof(val), "%ld", (long)d->mapper);
		else if (!strncmp(s, "{ppid}", (size_t)k))
			snprintf(val, sizeof(val), "%ld", (long)d->res->self);
		else if (!strncmp(s, "{interval}", (size_t)k))
			snprintf(val, sizeof(val), "%.0f", (double)d->interval_ns / 1e9 < 1 ? 1 :
				 (double)d->interval_ns / 1e9);
		else if (!strncmp(s, "{interval_ds}", (size_t)k))
			snprintf(val, sizeof(val), "%.0f", (double)d->interval_ns / 1e8 < 1 ? 1 :
				 (double)d->interval_ns / 1e8);
		else if (!strncmp(s, "{port}", (size_t)k))
			snprintf(val, sizeof(val), "%d", d->port);
		else if (!strncmp(s, "{config}", (size_t)k))
			snprintf(val, sizeof(val), "%s", d->config);
		else
			snprintf(val, sizeof(val), "%.*s", k, s);	/* not ours: as it is */
		if (n + strlen(val) >= len)
			return -ENAMETOOLONG;
		memcpy(out + n, val, strlen(val));
		n += strlen(val);
		s = end + 1;
	}
	out[n] = '\0';
	return 0;
}

/* ---- processes ---- */

static int pidfd_open_(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

static void kill_group(pid_t pid, int sig)
{
	if (pid > 0)
		kill(-pid, sig);
}

/*
 * wait_for - reap @pid, killing its process group if it is not done
 * within @timeout_ns, and whatever it left running in the group anyway.
 * The group is killed while the leader is still a zombie (waitid with
 * WNOWAIT), so its id cannot have been reused by then.
 * Return: its wait status, with *@timed_out set when it had to be killed.
 * Ends: at the deadline at the latest (SIGKILL cannot be ignored).
 */
static int wait_for(pid_t pid, uint64_t timeout_ns, bool *timed_out)
{
	int fd = pidfd_open_(pid), status = 0;
	uint64_t end = vml_now_ns() + timeout_ns;

	*timed_out = false;
	for (;;) {
		siginfo_t info = { 0 };
		uint64_t now;
		int r = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);

		if (!r && info.si_pid == pid)
			break;		/* exited, not reaped yet */
		if (r && errno != EINTR)
			break;		/* not our child: nothing to wait for */
		now = vml_now_ns();
		if (now >= end) {
			*timed_out = true;
			kill_group(pid, SIGKILL);
			break;
		}
		if (fd >= 0) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			uint64_t left = (end - now) / NSEC_PER_MSEC + 1;

			poll(&p, 1, left > 1000 ? 1000 : (int)left);
		} else {
			bench_sleep_ns(NSEC_PER_MSEC);
		}
	}
	if (fd >= 0)
		close(fd);
	/* whatever the tool left behind in its group, while the leader holds the id */
	kill_group(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

/* The environment for a tool: ours, with @add ("NAME=value" strings) replacing. */
static char **tool_env(const char *const *add, unsigned int nr_add)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + nr_add + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool replaced = false;

		for (unsigned int j = 0; j < nr_add; j++) {
			size_t len = strcspn(add[j], "=") + 1;

			if (!strncmp(environ[i], add[j], len))
				replaced = true;
		}
		if (!replaced)
			env[k++] = environ[i];
	}
	for (unsigned int j = 0; j < nr_add; j++)
		env[k++] = (char *)add[j];
	env[k] = NULL;
	return env;
}

/*
 * spawn - start `/bin/sh -c @cmd` (under strace when observing) in a
 * session of its own, stdin and stdout on /dev/null (or all three on the
 * terminal @tty), stderr on /dev/null or @errfile.
 * Return: 0 with *@out set, or -errno.
 */
static int spawn(const struct mon_driver *d, const char *cmd, const char *tty, const char *errfile,
		 char *const *env, pid_t *out)
{
	char trace_out[128];
	char *argv[24];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	int n = 0, ret;

	if (d->strace_dir) {
		snprintf(trace_out, sizeof(trace_out), "%s/t", d->strace_dir);
		argv[n++] = "strace";
		argv[n++] = "-ff";		/* one file per thread: no interleaved lines */
		argv[n++] = "-y";		/* each fd with its path: reads need no open to match */
		argv[n++] = "-qq";
		argv[n++] = "-s";
		argv[n++] = "0";		/* no data */
		argv[n++] = "--seccomp-bpf";	/* stop the tool only at these calls */
		argv[n++] = "-e";
		argv[n++] = "trace=openat,open,read,pread64,readv,preadv";
		argv[n++] = "-o";
		argv[n++] = trace_out;
	}
	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = (char *)cmd;
	argv[n] = NULL;

	posix_spawn_file_actions_init(&fa);
	if (tty) {
		/* the first terminal a session leader opens becomes its controlling one */
		posix_spawn_file_actions_addopen(&fa, 0, tty, O_RDWR, 0);
		posix_spawn_file_actions_adddup2(&fa, 0, 1);
		posix_spawn_file_actions_adddup2(&fa, 0, 2);
	} else {
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 2, errfile ? errfile : "/dev/null",
						 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	}
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF);
	/* the CPU and nice value are the calling (polling) thread's: children inherit them */
	ret = posix_spawnp(out, argv[0], &fa, &at, argv, env ? env : environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return -ret;
}

static void note(struct mon_driver *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct mon_driver *d, const char *fmt, ...)
{
	va_list ap;

	if (d->note[0])
		return;
	va_start(ap, fmt);
	vsnprintf(d->note, sizeof(d->note), fmt, ap);
	va_end(ap);
}

/* The first line of @path, into @out ("" if none). */
static void first_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");

	out[0] = '\0';
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

/* One run of a command tool. */
static void poll_oneshot(struct mon_driver *d, const char *cmd)
{
	char errfile[96] = "", line[120];
	uint64_t t0 = vml_now_ns();
	bool timed_out;
	pid_t pid;
	int status, ret;

	if (d->strace_dir)
		snprintf(errfile, sizeof(errfile), "%s/stderr", d->tmpdir);
	ret = spawn(d, cmd, NULL, errfile[0] ? errfile : NULL, NULL, &pid);
	if (ret) {
		d->errors++;
		note(d, "cannot run: %s", strerror(-ret));
		return;
	}
	status = wait_for(pid, d->timeout_ns, &timed_out);
	d->poll_ns += vml_now_ns() - t0;
	d->polls++;
	d->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (timed_out) {
		d->timeouts++;
		note(d, "killed after the %g s timeout", (double)d->timeout_ns / 1e9);
	} else if (d->exit_status) {
		d->errors++;
		first_line(errfile, line, sizeof(line));
		if (line[0])
			note(d, "exit %d: %s", d->exit_status, line);
		else
			note(d, "exit %d", d->exit_status);
	}
}

/* ---- the exporter: a port, a config, a scrape ---- */

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd < 0)
		return -1;
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static int connect_port(int port, uint64_t timeout_ns)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int err = 0;
	socklen_t len = sizeof(err);

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS) {
		err = -errno;
		close(fd);
		return err;
	}
	if (poll(&p, 1, (int)(timeout_ns / NSEC_PER_MSEC) + 1) != 1 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
		close(fd);
		return err ? -err : -ETIMEDOUT;
	}
	return fd;
}

/*
 * scrape - GET /metrics over HTTP/1.0, read to the end.
 * Return: bytes of the response, or -errno (-EPROTO: not a 200).
 */
static long scrape(int port, uint64_t timeout_ns)
{
	static const char req[] = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n"
				  "User-Agent: vmalock-bench-monitor\r\n\r\n";
	uint64_t end = vml_now_ns() + timeout_ns;
	char buf[16384], head[16] = "";
	long total = 0;
	int fd = connect_port(port, timeout_ns);

	if (fd < 0)
		return fd;
	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1) {
		close(fd);
		return -EIO;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = vml_now_ns();
		ssize_t n;

		if (now >= end || poll(&p, 1, (int)((end - now) / NSEC_PER_MSEC) + 1) != 1) {
			close(fd);
			return -ETIMEDOUT;
		}
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		if (total < (long)sizeof(head) - 1)
			memcpy(head + total, buf, (size_t)n < sizeof(head) - 1 - (size_t)total ?
			       (size_t)n : sizeof(head) - 1 - (size_t)total);
		total += n;
	}
	close(fd);
	/* "HTTP/1.1 200 " */
	return strncmp(head, "HTTP/1.", 7) || strncmp(head + 8, " 200", 4) ? -EPROTO : total;
}

static int exporter_config(struct mon_driver *d)
{
	FILE *f;

	snprintf(d->config, sizeof(d->config), "%s/process-exporter.yml", d->tmpdir);
	f = fopen(d->config, "w");
	if (!f)
		return -errno;
	/* only this run's mapper: vmalock-child's arguments are its socket and our pid */
	fprintf(f, "process_names:\n  - name: \"vmalock-mapper\"\n    cmdline:\n"
		   "    - 'vmalock-child [0-9]+ %ld$'\n", (long)d->res->self);
	return fclose(f) ? -EIO : 0;
}

static void poll_scrape(struct mon_driver *d)
{
	uint64_t t0 = vml_now_ns();
	long n = scrape(d->port, d->timeout_ns);

	d->poll_ns += vml_now_ns() - t0;
	d->polls++;
	if (n == -ETIMEDOUT) {
		d->timeouts++;
		note(d, "a scrape timed out after %g s", (double)d->timeout_ns / 1e9);
	} else if (n < 0) {
		d->errors++;
		note(d, "scrape: %s", n == -EPROTO ? "not HTTP 200" : strerror((int)-n));
	}
}

/* ---- the pseudo-terminal (htop) ---- */

static int open_pty(char *slave, size_t len)
{
	struct winsize ws = { .ws_row = 50, .ws_col = 200 };
	int fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (grantpt(fd) || unlockpt(fd) || ptsname_r(fd, slave, len) ||
	    ioctl(fd, TIOCSWINSZ, &ws)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Read and drop what the terminal program wrote (else it blocks on a full pty). */
static void drain(int fd, uint64_t until_ns, const atomic_bool *stop)
{
	char buf[8192];

	for (;;) {
		uint64_t now = vml_now_ns();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t left = until_ns > now ? (until_ns - now) / NSEC_PER_MSEC : 0;

		/* pairs with mon_driver_stop()'s store_release(&d->stop) */
		if (now >= until_ns || (stop && load_acquire(stop)))
			return;
		if (poll(&p, 1, left > 50 ? 50 : (int)left + 1) == 1 &&
		    (read(fd, buf, sizeof(buf)) <= 0 && errno != EINTR && errno != EAGAIN))
			bench_sleep_ns(left > 50 ? 50 * NSEC_PER_MSEC : left * NSEC_PER_MSEC);
	}
}

/* utime + stime of @pid in ns, or 0. */
static uint64_t cpu_ns(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* after "pid (comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return 0;
	return (ut + st) * (NSEC_PER_SEC / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* ---- the polling thread ---- */

/* Wait until @t (draining a terminal meanwhile); false if told to stop. */
static bool wait_until(struct mon_driver *d, uint64_t t)
{
	/* pairs with mon_driver_stop()'s store_release(&d->stop): nothing rides on it */
	while (!load_acquire(&d->stop)) {
		uint64_t now = vml_now_ns();

		if (now >= t)
			return true;
		if (d->pty >= 0)
			drain(d->pty, t, &d->stop);
		else
			bench_sleep_ns(t - now > 20 * NSEC_PER_MSEC ? 20 * NSEC_PER_MSEC : t - now);
	}
	return false;
}

/*
 * The driver gives up before its first poll (@tool_failed: the tool's fault,
 * counted in its row): mon_driver_start() returns start_ret, mon_observe()
 * stops waiting. Return: NULL, the thread's result.
 */
static void *give_up(struct mon_driver *d, bool tool_failed)
{
	d->errors += tool_failed;
	d->start_ret = -EIO;
	store_release(&d->done, true);	/* pairs with mon_observe()'s load_acquire(&d.done) */
	store_release(&d->ready, true);	/* pairs with mon_driver_start()'s load_acquire */
	return NULL;
}

/*
 * Start a resident tool (a terminal program, an exporter) from the driver's
 * thread, so that it inherits the thread's CPU and nice value. Return: 0, or
 * -EIO (the note says why).
 */
static int start_resident(struct mon_driver *d, const char *cmd)
{
	char rc[112], term[] = "TERM=xterm";
	const char *add[2] = { term, rc };
	char slave[64], errfile[96] = "";
	char **env = NULL;
	int ret, fd = -1;

	if (d->tool->kind == MON_PTY) {
		d->pty = open_pty(slave, sizeof(slave));
		if (d->pty < 0) {
			note(d, "no pseudo-terminal: %s", strerror(-d->pty));
			return -EIO;
		}
		/* htop's own settings file, not the user's */
		snprintf(rc, sizeof(rc), "HTOPRC=%s/htoprc", d->tmpdir);
		env = tool_env(add, 2);
	} else if (d->strace_dir) {
		snprintf(errfile, sizeof(errfile), "%s/stderr", d->tmpdir);
	}
	ret = spawn(d, cmd, d->tool->kind == MON_PTY ? slave : NULL, errfile[0] ? errfile : NULL,
		    env, &d->pid);
	free(env);
	if (ret) {
		note(d, "cannot run: %s", strerror(-ret));
		d->pid = 0;
		return -EIO;
	}
	if (d->tool->kind != MON_EXPORTER)
		return 0;
	for (uint64_t end = vml_now_ns() + d->timeout_ns;
	     vml_now_ns() < end && (fd = connect_port(d->port, 100 * NSEC_PER_MSEC)) < 0 &&
	     waitpid(d->pid, NULL, WNOHANG) == 0;)
		bench_sleep_ns(20 * NSEC_PER_MSEC);
	if (fd < 0) {
		note(d, "not listening on 127.0.0.1:%d after %g s", d->port,
		     (double)d->timeout_ns / 1e9);
		return -EIO;
	}
	close(fd);
	return 0;
}

static void *driver_main(void *arg)
{
	struct mon_driver *d = arg;
	char cmd[MON_CMD_MAX + 64];
	uint64_t next;

	/* the tools inherit this thread's CPU and nice value (spawn) */
	bench_pin_thread(d->res->reader_cpu);
	bench_nice_thread((int)d->res->o->tool_nice);
	if (expand(d, cmd, sizeof(cmd))) {
		note(d, "command too long");
		return give_up(d, false);
	}
	if (d->tool->kind != MON_ONESHOT && start_resident(d, cmd))
		return give_up(d, true);
	d->t0 = vml_now_ns() + d->settle_ns;
	/* pairs with mon_driver_start()'s load_acquire(&d->ready): publishes t0, pid, pty */
	store_release(&d->ready, true);
	if (d->tool->kind == MON_PTY) {
		uint64_t c0 = cpu_ns(d->pid);

		/* htop polls itself: keep its terminal drained until told to stop */
		wait_until(d, UINT64_MAX);
		d->polls = (unsigned int)((vml_now_ns() - d->t0 + d->interval_ns - 1) / d->interval_ns);
		if (!d->polls)
			d->polls = 1;
		d->poll_ns = cpu_ns(d->pid) - c0;
		/* pairs with mon_observe()'s load_acquire(&d.done) */
		store_release(&d->done, true);
		return NULL;
	}
	for (unsigned int k = 0; !d->max_polls || d->polls < d->max_polls; k++) {
		next = d->t0 + k * d->interval_ns;
		if (next < vml_now_ns() && k)	/* the last poll overran: go on at once */
			next = vml_now_ns();
		if (!wait_until(d, next))
			break;
		if (d->tool->kind == MON_ONESHOT)
			poll_oneshot(d, cmd);
		else
			poll_scrape(d);
	}
	/* pairs with mon_observe()'s load_acquire(&d.done): the polls are done */
	store_release(&d->done, true);
	return NULL;
}

int mon_driver_start(struct mon_driver *d, uint64_t settle_ns)
{
	int ret;

	d->pty = -1;
	d->pid = 0;
	d->exit_status = -1;
	d->start_ret = 0;
	d->settle_ns = settle_ns;
	atomic_init(&d->stop, false);
	atomic_init(&d->done, false);
	atomic_init(&d->ready, false);
	snprintf(d->tmpdir, sizeof(d->tmpdir), "/tmp/vmalock-monitor.XXXXXX");
	if (!mkdtemp(d->tmpdir)) {
		ret = -errno;
		note(d, "temporary directory: %s", strerror(-ret));
		d->tmpdir[0] = '\0';
		return ret;
	}
	if (d->tool->kind == MON_EXPORTER) {
		d->port = free_port();
		ret = d->port < 0 ? -EADDRNOTAVAIL : exporter_config(d);
		if (ret) {
			note(d, "exporter set-up: %s", strerror(-ret));
			return ret;
		}
	}
	ret = -pthread_create(&d->thread, NULL, driver_main, d);
	if (ret) {
		note(d, "thread: %s", strerror(-ret));
		return ret;
	}
	d->started = true;
	/*
	 * Pairs with driver_main()'s store_release(&d->ready): start_ret, the
	 * note, the resident tool's pid are its; later polls write notes of
	 * their own, read after the join.
	 */
	while (!load_acquire(&d->ready))
		bench_sleep_ns(NSEC_PER_MSEC);
	return d->start_ret;
}

/* Remove the files a tool left in our temporary directory, then the directory. */
static void remove_tmpdir(const char *dir)
{
	static const char *const files[] = { "process-exporter.yml", "htoprc", "stderr", NULL };
	char path[128];

	if (!dir[0])
		return;
	for (int i = 0; files[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

void mon_driver_stop(struct mon_driver *d)
{
	/* pairs with wait_until()'s and drain()'s load_acquire()s */
	store_release(&d->stop, true);
	if (d->started)
		pthread_join(d->thread, NULL);
	d->started = false;
	if (d->pid > 0) {
		bool timed_out;

		/* SIGTERM first: strace detaches, htop restores its terminal, the exporter exits */
		kill_group(d->pid, SIGTERM);
		wait_for(d->pid, 2 * NSEC_PER_SEC, &timed_out);
		d->pid = 0;
	}
	if (d->pty >= 0)
		close(d->pty);
	d->pty = -1;
	remove_tmpdir(d->tmpdir);
	d->tmpdir[0] = '\0';
}
