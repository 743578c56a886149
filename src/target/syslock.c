// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * syslock.c - the system-state lock (syslock.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "target/syslock.h"

enum { HELD_NONE, HELD_SHARED, HELD_EXCLUSIVE };

static pthread_mutex_t syslock_mutex = PTHREAD_MUTEX_INITIALIZER;
static int syslock_fd = -1;	/* [syslock_mutex] */
static int syslock_held;	/* [syslock_mutex] HELD_* */

const char *syslock_path(void)
{
	return access("/run/lock", W_OK) == 0 ? "/run/lock/vmalock.lock" : "/tmp/vmalock.lock";
}

/* Context: syslock_mutex held. */
static int take(int how)
{
	const char *held = getenv(SYSLOCK_ENV);
	char holder[32] = "";
	int want = how == LOCK_EX ? HELD_EXCLUSIVE : HELD_SHARED;

	if (held && !strcmp(held, "held"))
		return 0;	/* our parent holds it exclusively for us */
	if (syslock_held >= want)
		return 0;
	if (syslock_fd < 0) {
		syslock_fd = open(syslock_path(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
		if (syslock_fd < 0)
			return -errno;
	}
	if (flock(syslock_fd, how | LOCK_NB)) {
		if (errno != EWOULDBLOCK)
			return -errno;
		/* Only an exclusive holder blocks a shared taker; it wrote its pid. */
		if (how == LOCK_SH && pread(syslock_fd, holder, sizeof(holder) - 1, 0) > 0)
			holder[strcspn(holder, "\n")] = '\0';
		fprintf(stderr, "vmalock: waiting for %s: another vmalock %s%s%s%s\n",
			syslock_path(), how == LOCK_EX ? "uses the live kernel" :
			"changes system-wide settings", *holder ? " (" : "", holder,
			*holder ? ")" : "");
		while (flock(syslock_fd, how))
			if (errno != EINTR)
				return -errno;
	}
	if (how == LOCK_EX) {
		char pid[32];
		int n = snprintf(pid, sizeof(pid), "pid %d\n", (int)getpid());

		if (ftruncate(syslock_fd, 0) == 0)
			(void)!pwrite(syslock_fd, pid, (size_t)n, 0);
	}
	syslock_held = want;
	return 0;
}

int syslock_shared(void)
{
	int ret;

	pthread_mutex_lock(&syslock_mutex);
	ret = take(LOCK_SH);
	pthread_mutex_unlock(&syslock_mutex);
	return ret;
}

int syslock_exclusive(void)
{
	int ret;

	pthread_mutex_lock(&syslock_mutex);
	ret = take(LOCK_EX);
	pthread_mutex_unlock(&syslock_mutex);
	return ret;
}
