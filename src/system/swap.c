// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * swap.c - a swap file of ours for a script's run (swap.h).
 *
 * The file is written in full (no holes: swapon refuses files with holes on
 * some filesystems), made a swap area by util-linux's mkswap, and turned on
 * with swapon(2). Its name carries our pid, so that a later run can tell a
 * leftover of a dead run from a file another live run is using.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/host.h"
#include "system/keeper.h"
#include "system/swap.h"
#include "system/syslock.h"
#include "util/alloc.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif
#ifndef BTRFS_SUPER_MAGIC
#define BTRFS_SUPER_MAGIC 0x9123683e
#endif
#ifndef RAMFS_MAGIC
#define RAMFS_MAGIC 0x858458f6
#endif

struct target_swap {
	char path[PATH_MAX];
	long keeper;		/* the keeper's undo handle */
};

extern char **environ;

static bool swap_capable_dir(const char *dir)
{
	struct statfs sf;

	if (statfs(dir, &sf) || access(dir, W_OK))
		return false;
	return sf.f_type != TMPFS_MAGIC && sf.f_type != RAMFS_MAGIC &&
	       sf.f_type != BTRFS_SUPER_MAGIC;
}

static const char *swap_dir(void)
{
	static const char *const dirs[] = { "/var/tmp", "/tmp", "/" };
	const char *env = getenv("VMALOCK_SWAP_DIR");

	if (env && *env)
		return swap_capable_dir(env) ? env : NULL;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (swap_capable_dir(dirs[i]))
			return dirs[i];
	return NULL;
}

/* "…/vmalock-swap.PID.N" -> PID, or 0 if @name is not ours. */
static pid_t owner_of(const char *name)
{
	const char *base = strrchr(name, '/');
	char *end;
	long pid;

	base = base ? base + 1 : name;
	if (strncmp(base, HOST_SWAP_PREFIX, strlen(HOST_SWAP_PREFIX)))
		return 0;
	pid = strtol(base + strlen(HOST_SWAP_PREFIX), &end, 10);
	return pid > 0 && *end == '.' ? (pid_t)pid : 0;
}

static bool alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

int target_swap_reap_stale(void)
{
	static const char *const dirs[] = { "/var/tmp", "/tmp", "/" };
	char line[PATH_MAX + 128], name[PATH_MAX], path[PATH_MAX];
	FILE *f = fopen("/proc/swaps", "r");
	const char *env = getenv("VMALOCK_SWAP_DIR");
	int n = 0;

	/* Turned on and orphaned: off first, or the unlink below frees nothing. */
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			pid_t pid;

			if (sscanf(line, "%4095s", name) != 1)
				continue;
			pid = owner_of(name);
			if (pid && !alive(pid) && !swapoff(name)) {
				unlink(name);
				n++;
			}
		}
		fclose(f);
	}
	for (size_t i = 0; i <= sizeof(dirs) / sizeof(dirs[0]); i++) {
		const char *dir = i < sizeof(dirs) / sizeof(dirs[0]) ? dirs[i] : env;
		struct dirent *de;
		DIR *d;

		if (!dir || !(d = opendir(dir)))
			continue;
		while ((de = readdir(d))) {
			pid_t pid = owner_of(de->d_name);

			if (!pid || alive(pid))
				continue;
			if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
			    sizeof(path))
				continue;
			swapoff(path);	/* if it is still on under another name: EINVAL */
			if (!unlink(path))
				n++;
		}
		closedir(d);
	}
	return n;
}

/* Write @bytes of zeros to @fd. Return: 0 or -errno. */
static int fill(int fd, uint64_t bytes)
{
	size_t chunk = 1 << 20;
	char *buf = vml_zalloc(chunk);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (uint64_t done = 0; done < bytes && !ret;) {
		size_t n = bytes - done < chunk ? (size_t)(bytes - done) : chunk;
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			ret = w < 0 ? -errno : -EIO;
		else
			done += (uint64_t)w;
	}
	vml_free(buf);
	if (!ret && fsync(fd))
		ret = -errno;
	return ret;
}

/* mkswap -q PATH, quietly. Return: 0, -ENOENT (no mkswap), or -EIO. */
static int run_mkswap(const char *path, char *err, size_t errlen)
{
	char *argv[] = { (char *)"mkswap", (char *)"-q", (char *)path, NULL };
	posix_spawn_file_actions_t fa;
	int status, ret;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	/* PATH may lack /sbin for a non-login root shell. */
	ret = posix_spawn(&pid, "/sbin/mkswap", &fa, NULL, argv, environ);
	if (ret == ENOENT)
		ret = posix_spawnp(&pid, "mkswap", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret) {
		snprintf(err, errlen, "cannot run mkswap (util-linux): %s", strerror(ret));
		return -ret;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(err, errlen, "mkswap %s failed", path);
		return -EIO;
	}
	return 0;
}

int target_swap_on(uint64_t bytes, struct target_swap **out, char *err, size_t errlen)
{
	static unsigned int seq;
	struct target_swap *s;
	const char *dir;
	int fd, ret;

	if (geteuid() != 0) {
		snprintf(err, errlen, "swap needs root (swapon: %s)", strerror(EPERM));
		return -EPERM;
	}
	/* Nobody else compares with the live kernel while it has our swap. */
	ret = syslock_take();
	if (ret) {
		snprintf(err, errlen, "system-state lock: %s", strerror(-ret));
		return ret;
	}
	target_swap_reap_stale();
	dir = swap_dir();
	if (!dir) {
		snprintf(err, errlen, "no writable disk-backed directory for a swap file "
			 "(set VMALOCK_SWAP_DIR; tmpfs and btrfs do not take swap files)");
		return -ENOENT;
	}
	s = vml_zalloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	snprintf(s->path, sizeof(s->path), "%s/%s%d.%u", strcmp(dir, "/") ? dir : "",
		 HOST_SWAP_PREFIX, (int)getpid(), seq++);
	/* Registered before it exists, so no window leaves it behind. */
	s->keeper = keeper_add(KEEPER_SWAP, s->path, NULL);
	if (s->keeper < 0) {
		ret = (int)s->keeper;
		snprintf(err, errlen, "cannot start the keeper that removes the swap file "
			 "if vmalock dies: %s", strerror(-ret));
		vml_free(s);
		return ret;
	}
	fd = open(s->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", s->path, strerror(-ret));
		goto fail;
	}
	ret = fill(fd, bytes);
	close(fd);
	if (ret) {
		snprintf(err, errlen, "writing %s: %s", s->path, strerror(-ret));
		goto fail;
	}
	ret = run_mkswap(s->path, err, errlen);
	if (ret)
		goto fail;
	if (swapon(s->path, 0)) {
		ret = -errno;
		snprintf(err, errlen, "swapon %s: %s", s->path, strerror(-ret));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	unlink(s->path);
	keeper_done(s->keeper);
	vml_free(s);
	return ret;
}

void target_swap_off(struct target_swap *s)
{
	if (!s)
		return;
	if (swapoff(s->path)) {
		/* Still on: the keeper retries when we exit; deleting it now would hide it. */
		fprintf(stderr, "vmalock: swapoff %s: %s (retried at exit)\n", s->path,
			strerror(errno));
	} else {
		unlink(s->path);
		keeper_done(s->keeper);
	}
	vml_free(s);
}
