/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * futex.h - sleep until a 32-bit word changes, and wake sleepers on it.
 * Private futexes: all users are threads of one process.
 */
#ifndef VML_SYNC_FUTEX_H
#define VML_SYNC_FUTEX_H

#include <stdatomic.h>
#include <stdint.h>

/*
 * futex_wait - sleep while *@word == @expected
 * @timeout_ns: relative timeout; 0 means wait without timeout.
 * Return: 0 when woken (possibly spuriously), -EAGAIN if *@word != @expected
 *         on entry, -ETIMEDOUT, or -EINTR on a signal. Callers always re-check.
 */
int futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns);

/* futex_wake - wake up to @n sleepers on @word; returns how many were woken. */
int futex_wake(_Atomic uint32_t *word, int n);

#endif /* VML_SYNC_FUTEX_H */
