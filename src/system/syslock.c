// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * syslock.c - the live-kernel lock (syslock.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
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
static int held_fd = -1;	/* [syslock_mutex] held while >= 0 */

const char *syslock_path(void)
{
	return access("/run/lock", W_OK) == 0 ? "/run/lock/vmalock.lock" : "/tmp/vmalock.lock";
}

/*
 * The note of a wait, said by a thread of its own once the wait has lasted
 * after_s seconds, unless the lock came first. A thread, and not a polled
 * flock(LOCK_NB), so that the waiter sleeps in a blocking flock(): the
 * kernel wakes it as the holder unlocks, where a poller lost the lock, 50 ms
 * at a time, to a holder that runs one process after another (a test
 * script's live runs) and waited out that holder's whole sequence.
 */
struct wait_note {
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* signalled when the lock is ours */
	bool got;		/* [lock] */
	int fd;
	unsigned int after_s;
};

static void *say_waiting(void *arg)
{
	struct wait_note *w = arg;
	char holder[32] = "";
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += w->after_s;
	pthread_mutex_lock(&w->lock);
	/* Ends: when the lock is ours, or at the deadline. */
	while (!w->got && pthread_cond_timedwait(&w->cond, &w->lock, &until) != ETIMEDOUT)
		;
	if (!w->got) {
		/* The holder wrote its pid into the file. */
		if (pread(w->fd, holder, sizeof(holder) - 1, 0) > 0)
			holder[strcspn(holder, "\n")] = '\0';
		fprintf(stderr, "vmalock: note: waiting for %s: another vmalock uses the live "
			"kernel%s%s%s\n", syslock_path(), *holder ? " (" : "", holder,
			*holder ? ")" : "");
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/*
 * wait_for_holder - block until the lock on @fd is ours, saying so on stderr
 * at once on a terminal, after WAIT_QUIET_S otherwise (a short wait behind
 * another run is normal in a test suite or a batch). The report is a note
 * ("vmalock: note: "), never an error, so that whoever reads stderr can
 * tell the two apart (README.md, "The command").
 * Return: 0, or -errno when flock() fails for another reason than a holder.
 */
static int wait_for_holder(int fd)
{
	int busy = errno;	/* flock()'s, before isatty() below sets its own */
	struct wait_note w = {
		.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
		.fd = fd, .after_s = isatty(STDERR_FILENO) ? 0 : WAIT_QUIET_S,
	};
	pthread_t note;
	bool noting;
	int ret = 0;

	if (busy != EWOULDBLOCK)
		return -busy;
	noting = pthread_create(&note, NULL, say_waiting, &w) == 0;
	/* Ends: when the holder exits or unlocks (the kernel drops a dead process's flock). */
	while (flock(fd, LOCK_EX)) {
		if (errno != EINTR) {
			ret = -errno;
			break;
		}
	}
	pthread_mutex_lock(&w.lock);
	w.got = true;
	pthread_cond_signal(&w.cond);
	pthread_mutex_unlock(&w.lock);
	if (noting)
		pthread_join(note, NULL);
	return ret;
}

/* Context: syslock_mutex held. */
static int take(void)
{
	const char *held = getenv(SYSLOCK_ENV);
	char pid[32];
	int fd, n;

	if ((held && !strcmp(held, "held")) || held_fd >= 0)
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
	if (flock(fd, LOCK_EX | LOCK_NB) && (n = wait_for_holder(fd))) {
		close(fd);
		return n;
	}
	n = snprintf(pid, sizeof(pid), "pid %d\n", (int)getpid());
	if (ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, pid, (size_t)n, 0);
	held_fd = fd;
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

int syslock_fd(void)
{
	int fd;

	pthread_mutex_lock(&syslock_mutex);
	fd = held_fd;
	pthread_mutex_unlock(&syslock_mutex);
	return fd;
}
