/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tap.h - a tiny Test Anything Protocol producer for meson's `protocol: 'tap'`.
 *
 *   int main(void) {
 *           ok(1 + 1 == 2, "arithmetic");
 *           is_int(f(), -EINVAL, "f rejects bad input");
 *           return tap_done();          // prints the plan, returns the exit code
 *   }
 *
 * Stress tests print their seed with tap_diag() first, so a failure can be
 * replayed.
 */
#ifndef VML_TESTS_TAP_H
#define VML_TESTS_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int tap_count;
static int tap_failed;

__attribute__((format(printf, 1, 2), unused))
static void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

__attribute__((format(printf, 4, 5), unused))
static bool tap_ok(bool cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		printf("#   failed at %s:%d\n", file, line);
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...)                                                         \
	({                                                                             \
		long long g_ = (long long)(got), w_ = (long long)(want);               \
		bool r_ = tap_ok(g_ == w_, __FILE__, __LINE__, __VA_ARGS__);           \
		if (!r_)                                                               \
			printf("#   got %lld, want %lld\n", g_, w_);                       \
		r_;                                                                    \
	})

#define is_hex(got, want, ...)                                                         \
	({                                                                             \
		unsigned long long g_ = (unsigned long long)(got);                     \
		unsigned long long w_ = (unsigned long long)(want);                    \
		bool r_ = tap_ok(g_ == w_, __FILE__, __LINE__, __VA_ARGS__);           \
		if (!r_)                                                               \
			printf("#   got 0x%llx, want 0x%llx\n", g_, w_);                   \
		r_;                                                                    \
	})

#define is_str(got, want, ...)                                                         \
	({                                                                             \
		const char *g_ = (got), *w_ = (want);                                  \
		bool r_ = tap_ok(g_ && w_ && strcmp(g_, w_) == 0, __FILE__, __LINE__,  \
				 __VA_ARGS__);                                         \
		if (!r_)                                                               \
			printf("#   got:\n%s\n#   want:\n%s\n", g_ ? g_ : "(null)",        \
			       w_ ? w_ : "(null)");                                    \
		r_;                                                                    \
	})

__attribute__((unused))
static void tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	exit(0);
}

__attribute__((unused))
static int tap_done(void)
{
	printf("1..%d\n", tap_count);
	if (tap_failed)
		printf("# %d of %d failed\n", tap_failed, tap_count);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

/* A seed for stress tests: $VML_SEED if set, else from the clock. Printed. */
__attribute__((unused))
static uint64_t tap_seed(void)
{
	const char *s = getenv("VML_SEED");
	uint64_t seed;
	struct timespec ts;

	if (s && *s) {
		seed = strtoull(s, NULL, 0);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
	}
	tap_diag("seed %" PRIu64 " (replay with VML_SEED=%" PRIu64 ")", seed, seed);
	return seed;
}

/* Seconds a stress test runs: $VML_STRESS_SECONDS, else the given default. */
__attribute__((unused))
static double tap_stress_seconds(double dflt)
{
	const char *s = getenv("VML_STRESS_SECONDS");

	return s && *s ? strtod(s, NULL) : dflt;
}

/*
 * must_succeed(call): a set-up step that has to work - @call returns 0 or -errno
 * (the library's VML_MUST_CHECK functions) and anything but 0 ends the test
 * with "Bail out!", naming the call and the error.
 */
#define must_succeed(call) tap_must((long)(call), #call, __FILE__, __LINE__)

__attribute__((unused))
static void tap_must(long ret, const char *call, const char *file, int line)
{
	if (ret == 0)
		return;
	printf("Bail out! %s:%d: %s: %ld (%s)\n", file, line, call, ret,
	       ret < 0 ? strerror((int)-ret) : "not an errno");
	fflush(stdout);
	exit(1);
}

/*
 * may_fail(call): an op the test draws at random, whose failure is one of
 * the outcomes it expects (a range that is no longer mapped, a VMA limit);
 * its result must still be 0 or a negative errno, else "Bail out!". Returns
 * the result.
 */
#define may_fail(call) tap_may_fail((long)(call), #call, __FILE__, __LINE__)

__attribute__((unused))
static long tap_may_fail(long ret, const char *call, const char *file, int line)
{
	if (ret <= 0 && ret > -4096)
		return ret;
	printf("Bail out! %s:%d: %s: %ld is neither 0 nor an errno\n", file, line, call, ret);
	fflush(stdout);
	exit(1);
}

#endif /* VML_TESTS_TAP_H */
