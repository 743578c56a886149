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
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "system/helper.h"
#include "system/keeper.h"
#include "system/keeper_proto.h"
#include "system/syslock.h"

static pthread_mutex_t keeper_lock = PTHREAD_MUTEX_INITIALIZER;
static int keeper_fd = -1;		/* [keeper_lock] our end of the keeper's stdin socket */
static long keeper_next_id = 1;		/* [keeper_lock] */
static pid_t keeper_owner;		/* [keeper_lock] the process that started it */
static int keeper_nest_fd = -1;		/* [keeper_lock] read end of its nest pipe */
static int keeper_has_lock;		/* [keeper_lock] it holds a copy of the syslock */
/* Our parent run's nest pipe (KEEPER_HOLD_ENV): written once, before any thread. */
static int parent_hold_fd = -1;

static const char *const verbs[] = {
	[KEEPER_DIR] = "dir",
	[KEEPER_FILE] = "file",
	[KEEPER_SWAP] = "swap",
	[KEEPER_WRITE] = "write",
};

/* Context: keeper_lock held. Send @fd to the keeper with the record "fd\t@what". */
static int keeper_send_fd(const char *what, int fd)
{
	char rec[32], cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = rec };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	ssize_t n;

	iov.iov_len = (size_t)snprintf(rec, sizeof(rec), "fd\t%s\n", what);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	do
		n = sendmsg(keeper_fd, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)iov.iov_len ? 0 : -EPIPE;
}

/* Context: keeper_lock held. Fork and exec the keeper on @sock (its stdin). */
static int keeper_spawn(int sock)
{
	char exe[PATH_MAX];
	int ret;
	pid_t pid;

	ret = helper_child_exe(exe, sizeof(exe));
	if (ret)
		return ret;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char *argv[] = { exe, (char *)"--keeper", NULL };

		dup2(sock, STDIN_FILENO);	/* dup2 clears close-on-exec on the copy */
		/* The keeper forks again to leave our process tree (no zombie). */
		if (fork() == 0)
			execv(exe, argv);
		_exit(0);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/*
 * Context: keeper_lock held. Return: 0 or -errno.
 *
 * Besides its stdin the keeper gets, as SCM_RIGHTS: the read end of its
 * nest pipe, which the vmalocks in the commands we run under `host --set`
 * open for writing (keeper_pass_hold(), keeper_adopt_hold()) - by path, so
 * that only they and their keepers hold it, not a shell or a program they
 * leave running; and our parent run's nest pipe, if we run under one. A keeper whose vmalock died waits for its nest pipe's end of file -
 * every nested vmalock and its keeper gone, each having put back what it
 * changed over our change - before it puts back ours: the values before us
 * are written last, whichever level dies first. Holding the parent's pipe,
 * it keeps the parent's keeper waiting for it in turn.
 */
static int keeper_start(void)
{
	int sv[2], nest[2], ret;

	/* A fork()ed child of ours must not write to its parent's keeper. */
	if (keeper_fd >= 0 && keeper_owner == getpid())
		return 0;
	keeper_fd = -1;
	keeper_nest_fd = -1;
	keeper_has_lock = 0;
	/* Close-on-exec: only this process holds our end, so its exit is the EOF. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	if (pipe2(nest, O_CLOEXEC)) {
		ret = -errno;
		close(sv[0]);
		close(sv[1]);
		return ret;
	}
	ret = keeper_spawn(sv[0]);
	close(sv[0]);
	keeper_fd = sv[1];
	if (!ret)
		ret = keeper_send_fd("nest", nest[0]);
	if (!ret && parent_hold_fd >= 0)
		ret = keeper_send_fd("hold", parent_hold_fd);
	/* No writer of ours: nested runs open it by its /proc path (keeper_pass_hold()). */
	close(nest[1]);
	if (ret) {
		close(keeper_fd);
		keeper_fd = -1;
		close(nest[0]);
		return ret;
	}
	keeper_owner = getpid();
	keeper_nest_fd = nest[0];
	return 0;
}

static int keeper_send(const char *rec, size_t len)
{
	ssize_t n;

	do
		n = send(keeper_fd, rec, len, MSG_NOSIGNAL);
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
	/*
	 * A setting or a swap file is registered under the system lock: the
	 * keeper holds a copy of it until it has undone them, so that no other
	 * run gets the lock in between and reads our values as the old ones.
	 */
	if (!keeper_has_lock && syslock_fd() >= 0) {
		ret = keeper_send_fd("lock", syslock_fd());
		if (ret)
			goto out;
		keeper_has_lock = 1;
	}
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

void keeper_adopt_hold(void)
{
	const char *env = getenv(KEEPER_HOLD_ENV);
	int fd;

	if (!env)
		return;
	/* Writing: we never write, but a writer's close is what the reader waits for. */
	fd = strncmp(env, "/proc/", 6) ? -1 : open(env, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	unsetenv(KEEPER_HOLD_ENV);	/* our own children are not nested in it */
	if (fd < 0) {
		/*
		 * The run we were started under is gone (killed), and its keeper
		 * may be putting its values back now: we are nested in nothing, and
		 * take the system lock ourselves rather than rely on its hold.
		 */
		unsetenv(SYSLOCK_ENV);
		return;
	}
	parent_hold_fd = fd;
}

int keeper_pass_hold(void)
{
	char path[64];
	int fd = keeper_nest_fd;

	/* No lock: one thread after fork(), and keeper_nest_fd only changes under it in ours. */
	if (fd < 0 || keeper_owner != getppid())
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)keeper_owner, fd);
	setenv(KEEPER_HOLD_ENV, path, 1);
	return 0;
}

void keeper_wait_nested(void)
{
	char c;
	int fd;

	pthread_mutex_lock(&keeper_lock);
	fd = keeper_owner == getpid() ? keeper_nest_fd : -1;
	pthread_mutex_unlock(&keeper_lock);
	/* Ends: at once without a writer, else when the last nested run's keeper exits. */
	while (fd >= 0) {
		ssize_t n = read(fd, &c, 1);

		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
}
