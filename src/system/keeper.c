// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * keeper.c - registering undos with the keeper process (keeper.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "system/helper.h"
#include "system/keeper.h"
#include "system/keeper_proto.h"

static pthread_mutex_t keeper_lock = PTHREAD_MUTEX_INITIALIZER;
static int keeper_fd = -1;		/* [keeper_lock] write end of the keeper's stdin */
static long keeper_next_id = 1;		/* [keeper_lock] */
static pid_t keeper_owner;		/* [keeper_lock] the process that started it */

static const char *const verbs[] = {
	[KEEPER_DIR] = "dir",
	[KEEPER_FILE] = "file",
	[KEEPER_SWAP] = "swap",
	[KEEPER_WRITE] = "write",
};

/* Context: keeper_lock held. Return: 0 or -errno. */
static int keeper_start(void)
{
	char exe[PATH_MAX];
	int p[2], ret;
	pid_t pid;

	/* A fork()ed child of ours must not write to its parent's keeper. */
	if (keeper_fd >= 0 && keeper_owner == getpid())
		return 0;
	keeper_fd = -1;
	ret = helper_child_exe(exe, sizeof(exe));
	if (ret)
		return ret;
	/* Close-on-exec: only this process holds the write end, so its exit is the EOF. */
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(p[0]);
		close(p[1]);
		return ret;
	}
	if (pid == 0) {
		char *argv[] = { exe, (char *)"--keeper", NULL };

		dup2(p[0], STDIN_FILENO);	/* dup2 clears close-on-exec on the copy */
		/* The keeper forks again to leave our process tree (no zombie). */
		if (fork() == 0)
			execv(exe, argv);
		_exit(0);
	}
	close(p[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	keeper_fd = p[1];
	keeper_owner = getpid();
	return 0;
}

static int keeper_send(const char *rec, size_t len)
{
	ssize_t n;

	do
		n = write(keeper_fd, rec, len);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -EPIPE;
}

long keeper_add(enum keeper_undo what, const char *path, const char *value)
{
	char rec[KEEPER_MAX_RECORD];
	long id;
	int ret, n;

	if ((unsigned int)what > KEEPER_WRITE || !path || strpbrk(path, "\t\n") ||
	    (value && strpbrk(value, "\t\n")))
		return -EINVAL;
	pthread_mutex_lock(&keeper_lock);
	ret = keeper_start();
	if (ret)
		goto out;
	id = keeper_next_id++;
	n = snprintf(rec, sizeof(rec), "add\t%ld\t%s\t%s%s%s\n", id, verbs[what], path,
		     value ? "\t" : "", value ? value : "");
	if (n < 0 || (size_t)n >= sizeof(rec)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	ret = keeper_send(rec, (size_t)n);
out:
	pthread_mutex_unlock(&keeper_lock);
	return ret ? ret : id;
}

void keeper_done(long handle)
{
	char rec[64];
	int n;

	if (handle <= 0)
		return;
	pthread_mutex_lock(&keeper_lock);
	if (keeper_fd >= 0 && keeper_owner == getpid()) {
		n = snprintf(rec, sizeof(rec), "done\t%ld\n", handle);
		(void)keeper_send(rec, (size_t)n);
	}
	pthread_mutex_unlock(&keeper_lock);
}
