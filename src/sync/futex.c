// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sync/futex.h"
#include "util/clock.h"

int futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
	struct timespec ts, *tsp = NULL;
	long r;

	if (timeout_ns) {
		ts = vml_ns_to_timespec(timeout_ns);
		tsp = &ts;
	}
	r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, tsp, NULL, 0);
	if (r == 0)
		return 0;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return -EAGAIN;
	if (errno == ETIMEDOUT)
		return -ETIMEDOUT;
	return -EINTR;
}

int futex_wake(_Atomic uint32_t *word, int n)
{
	long r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);

	return r < 0 ? 0 : (int)r;
}
