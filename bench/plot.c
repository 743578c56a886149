// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * plot.c - --plot: a data file and a gnuplot script that a scenario fills
 * (struct bench_plot), gnuplot run on them, and its many-line errors made
 * one line of ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

extern char **environ;

/* The `set terminal` line for @path's extension, or NULL if unsupported. */
static const char *terminal(const char *path)
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

/* A temporary file: /tmp/vmalock-plot.XXXXXX (created). */
static int tmpfile_at(char *path, size_t len, FILE **f)
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

void bench_plot_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

void bench_plot_data(const struct bench_plot *p)
{
	bench_plot_quoted(p->script, p->data_path);
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

/* Run gnuplot on @script (a script's text). Return: 0 or -1 (printed why). */
static int gnuplot(const char *script)
{
	char path[64], errpath[64], msg[256];
	FILE *f, *e;
	int ret = tmpfile_at(path, sizeof(path), &f);

	if (ret) {
		fprintf(stderr, "vmalock: plot: temporary file: %s\n", strerror(-ret));
		return -1;
	}
	fputs(script, f);
	fclose(f);
	ret = tmpfile_at(errpath, sizeof(errpath), &e);
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

int bench_plot_run(const struct bench_run *r)
{
	struct bench_plot p = { .path = r->c->plot };
	const char *term = terminal(p.path);
	int ret;

	if (!term) {
		fprintf(stderr, "vmalock: --plot %s: not .png or .svg\n", p.path);
		return -1;
	}
	ret = tmpfile_at(p.data_path, sizeof(p.data_path), &p.data);
	if (ret) {
		fprintf(stderr, "vmalock: --plot: temporary file: %s\n", strerror(-ret));
		return -1;
	}
	p.script = open_memstream(&p.text, &p.len);
	if (!p.script) {
		fclose(p.data);
		unlink(p.data_path);
		fprintf(stderr, "vmalock: --plot: out of memory\n");
		return -1;
	}
	fprintf(p.script, "%s\nset output ", term);
	bench_plot_quoted(p.script, p.path);
	fputc('\n', p.script);
	ret = r->sc->plot(&p, r);
	if (fclose(p.data) && !ret)
		ret = -EIO;
	fclose(p.script);
	if (ret)
		fprintf(stderr, "vmalock: --plot: writing %s failed: %s\n", p.data_path,
			strerror(-ret));
	else
		ret = gnuplot(p.text);
	free(p.text);
	unlink(p.data_path);
	return ret ? -1 : 0;
}
