// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The keeper: `vmalock-child --keeper`, started by keeper.c.
 *
 * vmalock changes things that must not outlive it: temporary directories,
 * a swap file it turned on, sysfs and sysctl settings it changed for a run.
 * It undoes each itself when done; the keeper is for when it cannot: a
 * SIGKILL, a crash, a signal that arrives at the wrong moment. vmalock
 * tells the keeper, over a pipe on the keeper's standard input, what to
 * undo before it makes each change, and that it has undone it afterwards.
 * When the pipe reaches end of file - vmalock exited, however it exited -
 * the keeper undoes whatever is still registered, newest first, and exits.
 *
 * The keeper runs in a session of its own and ignores the signals a
 * terminal or a test runner sends to vmalock's process group, so that it is
 * still there to clean up after them. Records are lines (shorter than
 * PIPE_BUF, so each write is atomic), fields separated by tabs:
 *
 *   add ID dir PATH            remove PATH and the files in it
 *   add ID file PATH           unlink PATH
 *   add ID swap PATH           swapoff PATH, then unlink it
 *   add ID write PATH VALUE    write VALUE to PATH (restore a setting)
 *   done ID                    forget ID: vmalock undid it itself
 *
 * libc only, like the rest of vmalock-child.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/swap.h>
#include <unistd.h>

#include "system/keeper_proto.h"

struct item {
	unsigned long id;
	char verb[8];
	char path[PATH_MAX];
	char value[128];
	int live;
};

#define MAX_ITEMS 256
static struct item items[MAX_ITEMS];
static int nr_items;

static void undo(const struct item *it)
{
	if (!strcmp(it->verb, "dir")) {
		keeper_remove_dir(it->path);
	} else if (!strcmp(it->verb, "file")) {
		unlink(it->path);
	} else if (!strcmp(it->verb, "swap")) {
		if (swapoff(it->path) && errno != EINVAL)
			fprintf(stderr, "vmalock keeper: swapoff %s: %s\n", it->path,
				strerror(errno));
		unlink(it->path);
	} else if (!strcmp(it->verb, "write")) {
		int fd = open(it->path, O_WRONLY);

		if (fd < 0 || write(fd, it->value, strlen(it->value)) < 0)
			fprintf(stderr, "vmalock keeper: restoring %s to '%s': %s\n", it->path,
				it->value, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
}

static void take(char *line)
{
	char *f[5], *save;
	int n = 0;

	for (char *t = strtok_r(line, "\t", &save); t && n < 5; t = strtok_r(NULL, "\t", &save))
		f[n++] = t;
	if (n == 2 && !strcmp(f[0], "done")) {
		unsigned long id = strtoul(f[1], NULL, 10);

		for (int i = 0; i < nr_items; i++)
			if (items[i].live && items[i].id == id)
				items[i].live = 0;
		return;
	}
	if (n < 4 || strcmp(f[0], "add") || nr_items == MAX_ITEMS)
		return;
	items[nr_items].id = strtoul(f[1], NULL, 10);
	snprintf(items[nr_items].verb, sizeof(items[0].verb), "%s", f[2]);
	snprintf(items[nr_items].path, sizeof(items[0].path), "%s", f[3]);
	snprintf(items[nr_items].value, sizeof(items[0].value), "%s", n == 5 ? f[4] : "");
	items[nr_items].live = 1;
	nr_items++;
}

int keeper_main(void)
{
	static char buf[KEEPER_MAX_RECORD * 4];
	size_t len = 0;
	int devnull;

	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	devnull = open("/dev/null", O_WRONLY);
	if (devnull >= 0) {
		dup2(devnull, STDOUT_FILENO);
		close(devnull);
	}
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf + len, sizeof(buf) - 1 - len);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* vmalock is gone: undo what it left */
		len += (size_t)n;
		buf[len] = '\0';
		while ((nl = memchr(buf, '\n', len))) {
			*nl = '\0';
			take(buf);
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len);
		}
		if (len == sizeof(buf) - 1)
			len = 0;	/* a record too long to be ours */
	}
	for (int i = nr_items - 1; i >= 0; i--)
		if (items[i].live)
			undo(&items[i]);
	return 0;
}
