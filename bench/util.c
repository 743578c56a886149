// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * util.c - names, what the model can do, and the output helpers (JSON
 * values, gnuplot) the scenarios share.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "util/alloc.h"
#include "util/json.h"

extern char **environ;

const char *bench_view_name(enum vml_view view)
{
	return view == TARGET_VIEW_QUERY ? "query" : target_view_name(view);
}

bool bench_view_walks_pages(enum vml_view view)
{
	return view == VML_VIEW_SMAPS || view == VML_VIEW_SMAPS_ROLLUP || view == VML_VIEW_NUMA_MAPS;
}

const char *bench_kernel(void)
{
	static struct utsname u;

	if (!u.release[0] && uname(&u))
		strcpy(u.release, "unknown");
	return u.release;
}


int bench_json_write(json_t *doc, const char *path)
{
	int ret = json_write_file(doc, path);

	json_decref(doc);
	if (ret)
		fprintf(stderr, "vmalock: --json %s: %s\n", path, strerror(-ret));
	return ret;
}

const char *bench_plot_terminal(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (!dot)
		return NULL;
	/* gnuplot-nox has pngcairo; fall back on libgd's png where it does not */
	if (!strcmp(dot, ".png"))
		return "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
		       "  set terminal pngcairo size 1400,560 noenhanced font ',10'\n"
		       "} else {\n"
		       "  set terminal png size 1400,560 noenhanced\n"
		       "}";
	if (!strcmp(dot, ".svg"))
		return "set terminal svg size 1400,560 dynamic noenhanced font 'sans,10'";
	return NULL;
}

int bench_tmpfile(char *path, size_t len, FILE **f)
{
	int fd;

	if (snprintf(path, len, "/tmp/vmalock-plot.XXXXXX") >= (int)len)
		return -ENAMETOOLONG;
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	*f = fdopen(fd, "w");
	if (!*f) {
		close(fd);
		unlink(path);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Run `gnuplot FILE` once, its stderr into @errpath (gnuplot's messages are
 * many lines, with the script quoted; ours is one).
 * Return: its exit status, or -1 if it could not run.
 */
static int run_gnuplot(const char *file, const char *errpath)
{
	char *argv[] = { "gnuplot", (char *)file, NULL };
	posix_spawn_file_actions_t fa;
	int status, ret;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, errpath, O_WRONLY | O_TRUNC, 0);
	ret = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret)
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The last non-empty line of @path, trimmed, into @buf. */
static void last_line(const char *path, char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " \t^");

		p[strcspn(p, "\n")] = '\0';
		if (*p)
			snprintf(buf, len, "%s", p);
	}
	fclose(f);
}

int bench_gnuplot(const char *script)
{
	char path[64], errpath[64], msg[256];
	FILE *f, *e;
	int ret = bench_tmpfile(path, sizeof(path), &f);

	if (ret) {
		fprintf(stderr, "vmalock: plot: temporary file: %s\n", strerror(-ret));
		return -1;
	}
	fputs(script, f);
	fclose(f);
	ret = bench_tmpfile(errpath, sizeof(errpath), &e);
	if (ret) {
		unlink(path);
		fprintf(stderr, "vmalock: plot: temporary file: %s\n", strerror(-ret));
		return -1;
	}
	fclose(e);
	ret = run_gnuplot(path, errpath);
	if (ret == -1) {
		fprintf(stderr, "vmalock: plot: cannot run gnuplot (install gnuplot-nox)\n");
	} else if (ret) {
		last_line(errpath, msg, sizeof(msg));
		fprintf(stderr, "vmalock: plot: gnuplot failed: %s\n", *msg ? msg : "no message");
	}
	unlink(path);
	unlink(errpath);
	return ret ? -1 : 0;
}

void bench_print_load(FILE *f)
{
	char buf[128] = "";
	FILE *l = fopen("/proc/loadavg", "r");

	if (l) {
		if (!fgets(buf, sizeof(buf), l))
			buf[0] = '\0';
		fclose(l);
	}
	buf[strcspn(buf, "\n")] = '\0';
	/* A busy machine moves tails and the kernel's LRU behaviour: say how busy it was. */
	fprintf(f, "# load average at start (1, 5, 15 min, runnable/total, last pid): %s\n",
		*buf ? buf : "unknown");
}
