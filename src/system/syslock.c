// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * syslock.c - the live-kernel lock (syslock.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "system/syslock.h"

#define WAIT_QUIET_S 30

static pthread_mutex_t syslock_mutex = PTHREAD_MUTEX_INITIALIZER;
static int syslock_fd = -1;	/* [syslock_mutex] held while >= 0 */

const char *syslock_path(void)
{
	return access("/run/lock", W_OK) == 0 ? "/run/lock/vmalock.lock" : "/tmp/vmalock.lock";
}

/* Context: syslock_mutex held. */
static int take(void)
{
	const char *held = getenv(SYSLOCK_ENV);
	char holder[32] = "", pid[32];
	int fd, n;

	if ((held && !strcmp(held, "held")) || syslock_fd >= 0)
		return 0;	/* our parent holds it for us, or we do */
	fd = open(syslock_path(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd >= 0) {
		/* Past the umask: the next user's run may write its pid too. */
		(void)fchmod(fd, 0666);
	} else if (errno == EACCES) {
		/*
		 * Another user's file (0644 under their umask, or a sticky
		 * directory's protected_regular): flock() needs no write access,
		 * only the holder's pid goes unwritten.
		 */
		fd = open(syslock_path(), O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	/*
	 * Ends: when the holder exits or unlocks (the kernel drops a dead
	 * process's flock). Polled, so that the wait can be reported: at once on
	 * a terminal, after WAIT_QUIET_S otherwise (a short wait behind another
	 * run is normal in a test suite or a batch). The report is a note
	 * ("vmalock: note: "), never an error, so that whoever reads stderr can
	 * tell the two apart (README.md, "The command").
	 */
	for (unsigned int waited_ms = 0; flock(fd, LOCK_EX | LOCK_NB); waited_ms += 50) {
		struct timespec ts = { 0, 50 * 1000000 };

		if (errno != EWOULDBLOCK && errno != EINTR) {
			n = -errno;
			close(fd);
			return n;
		}
		if (waited_ms == (isatty(STDERR_FILENO) ? 0 : WAIT_QUIET_S * 1000)) {
			/* The holder wrote its pid into the file. */
			if (pread(fd, holder, sizeof(holder) - 1, 0) > 0)
				holder[strcspn(holder, "\n")] = '\0';
			fprintf(stderr, "vmalock: note: waiting for %s: another vmalock uses the live "
				"kernel%s%s%s\n", syslock_path(), *holder ? " (" : "", holder,
				*holder ? ")" : "");
		}
		nanosleep(&ts, NULL);
	}
	n = snprintf(pid, sizeof(pid), "pid %d\n", (int)getpid());
	if (ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, pid, (size_t)n, 0);
	syslock_fd = fd;
	return 0;
}

int syslock_take(void)
{
	int ret;

	pthread_mutex_lock(&syslock_mutex);
	ret = take();
	pthread_mutex_unlock(&syslock_mutex);
	return ret;
}
