// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * platform.c - the platform calls (platform.h): a simulated task's go to the
 * simulator (sim.c), everyone else's to the host.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "platform/platform.h"
#include "platform/sim_calls.h"
#include "util/alloc.h"
#include "util/debug.h"

void plat_charge_ns(uint64_t ns, enum plat_charge_kind kind)
{
	if (plat_simulated())
		sim_charge(ns, kind);
	else if (ns)
		vml_spin_ns(ns);
}

void plat_cpu_relax(void)
{
	if (plat_simulated()) {
		sim_relax();
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

void plat_yield(void)
{
	if (plat_simulated())
		sim_yield();
	else
		sched_yield();
}

void plat_sleep_ns(uint64_t ns)
{
	struct timespec ts;

	if (plat_simulated()) {
		sim_sleep(ns);
		return;
	}
	ts = vml_ns_to_timespec(ns);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int plat_futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
	struct timespec ts, *tsp = NULL;
	long r;

	if (plat_simulated())
		return sim_futex_wait(word, expected, timeout_ns);
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

int plat_futex_wake(_Atomic uint32_t *word, int n)
{
	long r;

	if (plat_simulated())
		return sim_futex_wake(word, n);
	r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
	return r < 0 ? 0 : (int)r;
}

/* A host thread's start: place it, then run. */
struct host_start {
	struct plat_thread_opts o;
	void *(*fn)(void *);
	void *arg;
};

static void *host_thread(void *p)
{
	struct host_start s = *(struct host_start *)p;

	vml_free(p);
	if (s.o.cpu >= 0)
		plat_pin_self(s.o.cpu);
	if (s.o.nice)
		plat_nice_self(s.o.nice);
	return s.fn(s.arg);
}

int plat_thread_create(struct plat_thread *t, const struct plat_thread_opts *o,
		       void *(*fn)(void *), void *arg)
{
	static const struct plat_thread_opts none = { .cpu = -1 };
	struct host_start *s;
	int ret;

	if (!o)
		o = &none;
	t->task = NULL;
	if (plat_simulated())
		return sim_thread_create(t, o, fn, arg);
	s = vml_malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (struct host_start){ *o, fn, arg };
	ret = pthread_create(&t->thread, NULL, host_thread, s);
	if (ret) {
		vml_free(s);
		return -ret;
	}
	return 0;
}

void *plat_thread_join(struct plat_thread *t)
{
	void *res = NULL;

	if (t->task)
		return sim_thread_join(t);
	pthread_join(t->thread, &res);
	return res;
}

int plat_pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	if (plat_simulated())
		return sim_pin_self(cpu);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) ? -EINVAL : 0;
}

int plat_nice_self(int nice)
{
	if (plat_simulated())
		return sim_nice_self(nice);
	/* Linux: PRIO_PROCESS with a thread id sets that one thread's nice value. */
	return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice) ? -errno : 0;
}
