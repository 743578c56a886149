// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for the futex wrapper and the sequence count. */
#include <errno.h>
#include <pthread.h>

#include "sync/futex.h"
#include "sync/seqcount.h"
#include "tap.h"
#include "util/clock.h"

static _Atomic uint32_t word;

static void *waker(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	store_release(&word, 1);
	futex_wake(&word, 1);
	return NULL;
}

int main(void)
{
	struct seqcount s;
	uint32_t seq;
	pthread_t t;
	uint64_t t0;

	is_int(futex_wait(&word, 7, 0), -EAGAIN, "futex_wait returns -EAGAIN when the word differs");
	t0 = vml_now_ns();
	is_int(futex_wait(&word, 0, 10 * NSEC_PER_MSEC), -ETIMEDOUT, "futex_wait times out");
	ok(vml_now_ns() - t0 >= 9 * NSEC_PER_MSEC, "the timeout was waited");

	pthread_create(&t, NULL, waker, NULL);
	while (load_acquire(&word) == 0)
		futex_wait(&word, 0, 0);
	pthread_join(t, NULL);
	is_int(load_acquire(&word), 1, "a waiter wakes when the word changes");

	seqcount_init(&s);
	ok(seqcount_try_begin(&s, &seq), "speculation starts on an even count");
	ok(!seqcount_retry(&s, seq), "no retry without a writer");
	seqcount_write_begin(&s);
	ok(seqcount_raw_read(&s) & 1, "count is odd inside a write section");
	ok(!seqcount_try_begin(&s, &seq), "speculation fails while a writer is inside");
	seqcount_write_end(&s);
	ok(seqcount_retry(&s, 0), "retry after a writer ran");
	is_int(seqcount_raw_read(&s), 2, "count advanced by two");
	return tap_done();
}
