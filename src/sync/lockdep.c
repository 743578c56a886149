// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lockdep.c - the lock-order checker (see lockdep.h), compiled in only
 * with -Dlockdep=true.
 *
 * The order is a tree of classes (docs/locking.md, "Lock order"): while
 * holding a lock of class H, a thread may wait for a lock of class C only
 * if H is a proper ancestor of C. Two locks can then only ever be waited
 * for in one order, so no cycle of waiters - no deadlock - can form among
 * checked acquisitions. A class that hangs from the root is "taken alone":
 * nothing else may be held when waiting for it, and nothing may be waited
 * for under it.
 *
 * State: per thread, the stack of locks held (class, address, flags,
 * where it was taken), at most LOCKDEP_MAX_HELD deep. Nothing is shared
 * between threads, so the checker takes no lock itself and adds no
 * ordering between threads (ThreadSanitizer sees the program as it is).
 */
#include <execinfo.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sync/lockdep.h"
#include "sync/rcu.h"
#include "util/compiler.h"

#if VML_LOCKDEP

#define LOCKDEP_MAX_HELD 32

/*
 * The order tree, as each class's parent (LOCK_CLASS_NONE: the root).
 *
 *   mmap_lock
 *     -> vma lock
 *       -> i_mmap_rwsem
 *         -> page_table_lock
 *           -> ptl
 *             -> swap_lock
 *             -> lru_lock
 *             -> i_pages_lock
 *             -> a large folio's mapcount_lock
 *             -> mm->rollup_lock (incremental rollup)
 *     -> khugepaged's lock
 */
static const enum lock_class lock_parent[LOCK_CLASS_NR] = {
	[LOCK_CLASS_MMAP] = LOCK_CLASS_NONE,
	[LOCK_CLASS_VMA] = LOCK_CLASS_MMAP,
	[LOCK_CLASS_I_MMAP] = LOCK_CLASS_VMA,
	[LOCK_CLASS_PAGE_TABLE] = LOCK_CLASS_I_MMAP,
	[LOCK_CLASS_PTL] = LOCK_CLASS_PAGE_TABLE,
	[LOCK_CLASS_SWAP] = LOCK_CLASS_PTL,
	[LOCK_CLASS_LRU] = LOCK_CLASS_PTL,
	[LOCK_CLASS_I_PAGES] = LOCK_CLASS_PTL,
	[LOCK_CLASS_KHUGEPAGED] = LOCK_CLASS_MMAP,
	[LOCK_CLASS_MAPCOUNT] = LOCK_CLASS_PTL,
	[LOCK_CLASS_ROLLUP] = LOCK_CLASS_PTL,
};

static const char *const lock_name[LOCK_CLASS_NR] = {
	[LOCK_CLASS_NONE] = "(uninitialised lock)",
	[LOCK_CLASS_MMAP] = "mmap_lock",
	[LOCK_CLASS_VMA] = "vma lock",
	[LOCK_CLASS_I_MMAP] = "i_mmap_rwsem",
	[LOCK_CLASS_PAGE_TABLE] = "page_table_lock",
	[LOCK_CLASS_PTL] = "ptl",
	[LOCK_CLASS_I_PAGES] = "i_pages_lock",
	[LOCK_CLASS_SWAP] = "swap_lock",
	[LOCK_CLASS_LRU] = "lru_lock",
	[LOCK_CLASS_KHUGEPAGED] = "khugepaged lock",
	[LOCK_CLASS_MAPCOUNT] = "large folio mapcount_lock",
	[LOCK_CLASS_ROLLUP] = "mm rollup_lock",
};

/* Classes whose acquisition sleeps: never inside an RCU read-side section. */
static bool class_sleeps(enum lock_class c)
{
	return c == LOCK_CLASS_MMAP || c == LOCK_CLASS_VMA || c == LOCK_CLASS_I_MMAP;
}

struct held_lock {
	enum lock_class class;
	const void *lock;
	unsigned int flags;
	const void *where;	/* return address of the acquisition */
};

static _Thread_local struct held_lock held[LOCKDEP_MAX_HELD];
static _Thread_local unsigned int depth;
static _Atomic(lockdep_report_fn) report_hook;

lockdep_report_fn lockdep_set_report(lockdep_report_fn fn)
{
	return atomic_exchange_explicit(&report_hook, fn, memory_order_relaxed);
}

static bool is_ancestor(enum lock_class a, enum lock_class c)
{
	/* Ends: the tree has no cycles, and every path reaches the root. */
	for (c = lock_parent[c]; c != LOCK_CLASS_NONE; c = lock_parent[c])
		if (c == a)
			return true;
	return false;
}

static const char *class_name(enum lock_class c)
{
	return (unsigned int)c < LOCK_CLASS_NR ? lock_name[c] : "(bad class)";
}

static int describe(char *buf, size_t size, enum lock_class c, const void *lock,
		    unsigned int flags, const void *where)
{
	return snprintf(buf, size, "%s %p%s%s%s (taken at %p)\n", class_name(c), lock,
			(flags & LOCKDEP_READ) ? " read" : "", (flags & LOCKDEP_TRY) ? " try" : "",
			(flags & LOCKDEP_NESTED) ? " nested" : "", where);
}

__attribute__((cold, format(printf, 5, 6)))
static void report(enum lock_class c, const void *lock, unsigned int flags, const void *where,
		   const char *fmt, ...)
{
	lockdep_report_fn hook = atomic_load_explicit(&report_hook, memory_order_relaxed);
	char buf[4096];
	size_t n = 0;
	va_list ap;

	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "vmalock: lockdep: ");
	va_start(ap, fmt);
	n += (size_t)vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	n = VML_MIN(n, sizeof(buf) - 1);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\n  acquiring: ");
	n = VML_MIN(n, sizeof(buf) - 1);
	n += (size_t)describe(buf + n, sizeof(buf) - n, c, lock, flags, where);
	n = VML_MIN(n, sizeof(buf) - 1);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "  held, oldest first:%s\n",
			      depth ? "" : " nothing");
	for (unsigned int i = 0; i < depth && n < sizeof(buf) - 1; i++) {
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "    #%u ", i);
		n = VML_MIN(n, sizeof(buf) - 1);
		n += (size_t)describe(buf + n, sizeof(buf) - n, held[i].class, held[i].lock,
				      held[i].flags, held[i].where);
		n = VML_MIN(n, sizeof(buf) - 1);
	}
	if (hook) {
		hook(buf);
		return;
	}
	fputs(buf, stderr);
	{
		void *frames[32];
		int nf = backtrace(frames, 32);

		backtrace_symbols_fd(frames, nf, 2);
	}
	abort();
}

static void check(enum lock_class c, const void *lock, unsigned int flags, const void *where,
		  bool *found)
{
	*found = false;
	if (c <= LOCK_CLASS_NONE || c >= LOCK_CLASS_NR)
		report(c, lock, flags, where, "a lock without a class (spin_lock_init missing?)");
	if (class_sleeps(c) && vml_rcu_read_held())
		report(c, lock, flags, where, "waiting for a sleeping lock inside an RCU read-side section");
	for (unsigned int i = 0; i < depth; i++) {
		const struct held_lock *h = &held[i];

		if (h->lock == lock) {
			if (flags & LOCKDEP_REENTER)
				*found = true;
			else
				report(c, lock, flags, where, "the same lock again (held as #%u)", i);
		} else if (h->class == c) {
			if (!(flags & LOCKDEP_NESTED))
				report(c, lock, flags, where,
				       "a second %s (#%u held) without a nesting annotation",
				       class_name(c), i);
		} else if (!is_ancestor(h->class, c)) {
			report(c, lock, flags, where, "%s taken while holding %s (#%u): against the lock order",
			       class_name(c), class_name(h->class), i);
		}
	}
}

__attribute__((noinline))
void lockdep_acquire(enum lock_class class, const void *lock, unsigned int flags)
{
	const void *where = __builtin_return_address(0);
	bool found = false;

	if (flags & LOCKDEP_TRY) {
		if (flags & LOCKDEP_REENTER)
			found = lockdep_is_held(lock);
	} else {
		check(class, lock, flags, where, &found);
	}
	if (found)
		return;
	if (depth == LOCKDEP_MAX_HELD) {
		report(class, lock, flags, where, "more than %d locks held", LOCKDEP_MAX_HELD);
		return;
	}
	held[depth++] = (struct held_lock){ .class = class, .lock = lock, .flags = flags,
					    .where = where };
}

static bool remove_held(const void *lock)
{
	/* The most recent first: a lock taken twice (NESTED) goes in reverse order. */
	for (unsigned int i = depth; i-- > 0;) {
		if (held[i].lock != lock)
			continue;
		memmove(&held[i], &held[i + 1], (depth - i - 1) * sizeof(held[0]));
		depth--;
		return true;
	}
	return false;
}

__attribute__((noinline))
void lockdep_release(enum lock_class class, const void *lock)
{
	if (!remove_held(lock))
		report(class, lock, 0, __builtin_return_address(0), "releasing a lock not held");
}

void lockdep_release_if_held(enum lock_class class, const void *lock)
{
	(void)class;
	remove_held(lock);
}

bool lockdep_is_held(const void *lock)
{
	for (unsigned int i = 0; i < depth; i++)
		if (held[i].lock == lock)
			return true;
	return false;
}

unsigned int lockdep_depth(void)
{
	return depth;
}

#endif /* VML_LOCKDEP */
