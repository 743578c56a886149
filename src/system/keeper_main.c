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
 * still there to clean up after them. Its standard input is a
 * SOCK_SEQPACKET socket: one record a message (shorter than PIPE_BUF),
 * fields separated by tabs:
 *
 *   add ID dir PATH            remove PATH and the files in it
 *   add ID file PATH           unlink PATH
 *   add ID swap PATH           swapoff PATH, then unlink it
 *   add ID write PATH VALUE    write VALUE to PATH (restore a setting)
 *   done ID                    forget ID: vmalock undid it itself
 *   fd nest|lock|hold          with a descriptor (SCM_RIGHTS): the read end
 *                              of our nest pipe; the system lock and the
 *                              parent run's nest pipe, kept open until we
 *                              exit (keeper.c, keeper_start)
 *
 * A keeper with something left to undo at end of file first waits for end
 * of file on the nest pipe: runs nested in ours (`host --set` under `host
 * --set`) put back their changes before we put back ours, so the values of
 * before the outermost run are the last written.
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
#include <sys/socket.h>
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

/*
 * One record from the socket, with the descriptor it may carry.
 * Return: its length (0 at end of file), or -1 on an error.
 */
static ssize_t receive(char *buf, size_t len, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	ssize_t n;

	do
		n = recvmsg(STDIN_FILENO, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	*fd = -1;
	for (c = CMSG_FIRSTHDR(&msg); n >= 0 && c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	return n;
}

int keeper_main(void)
{
	static char buf[KEEPER_MAX_RECORD + 1];
	int devnull, fd, nest = -1, live = 0;

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
	for (fd = 3; fd < 1024; fd++)
		close(fd);
	for (;;) {
		/* One record a message (SOCK_SEQPACKET). */
		ssize_t n = receive(buf, sizeof(buf) - 1, &fd);

		if (n <= 0)
			break;	/* vmalock is gone: undo what it left */
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		/*
		 * "fd nest": our nest pipe's read end. "fd lock", "fd hold": the
		 * system lock and the parent run's nest pipe, held until we exit.
		 */
		if (fd >= 0 && !strcmp(buf, "fd\tnest") && nest < 0)
			nest = fd;
		else if (fd < 0)
			take(buf);
	}
	for (int i = 0; i < nr_items; i++)
		live |= items[i].live;
	/*
	 * Nested runs (vmalock host --set under ours) changed what we changed
	 * over our values: they put theirs back first. Their vmalocks and
	 * keepers hold the nest pipe until then; only a run that died leaves
	 * us anything to undo, so a normal exit never waits here.
	 */
	while (live && nest >= 0) {
		ssize_t n = read(nest, buf, 1);

		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	for (int i = nr_items - 1; i >= 0; i--)
		if (items[i].live)
			undo(&items[i]);
	return 0;
}
