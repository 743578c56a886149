// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The lock-order checker (src/sync/lockdep.h) catches what it claims to:
 * each inversion below is made on purpose, on one thread, where it cannot
 * deadlock, and must be reported; the orders docs/locking.md allows must
 * not be. The reports go to a hook here; one child process makes an
 * inversion without the hook and must die of SIGABRT, as every other
 * program built with -Dlockdep=true would. Skipped without lockdep.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mm/file.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm/vma_lock.h"
#include "mm_helpers.h"
#include "sync/lockdep.h"
#include "sync/rcu.h"
#include "sync/spinlock.h"
#include "tap.h"
#include "util/alloc.h"

#if VML_LOCKDEP

static int reports;
static char last[4096];

static void catch_report(const char *report)
{
	reports++;
	snprintf(last, sizeof(last), "%s", report);
}

/* The state the cases share. */
static struct mm *mm, *child;
static struct vml_mm *umm;
static struct vml_file *file;
static struct pte_table *pt;
static spinlock_t lru, ipages;

/* Run @fn and check it caused exactly @want reports, the last one containing @needle. */
static void expect(int want, const char *needle, void (*fn)(void), const char *what)
{
	int before = reports;

	last[0] = 0;
	fn();
	is_int(reports - before, want, "%s", what);
	if (want && needle)
		ok(strstr(last, needle) != NULL, "  ...the report says \"%s\"", needle);
}

static void documented_order(void)
{
	mmap_write_lock(mm);
	i_mmap_lock_write(file);
	spin_lock(&mm->page_table_lock);
	spin_lock(&pt->ptl);
	spin_lock(&lru);
	spin_unlock(&lru);
	spin_lock(&ipages);
	spin_unlock(&ipages);
	spin_unlock(&pt->ptl);
	spin_unlock(&mm->page_table_lock);
	i_mmap_unlock_write(file);
	mmap_write_unlock(mm);
}

static void mmap_lock_under_ptl(void)
{
	spin_lock(&pt->ptl);
	mmap_read_lock(mm);
	mmap_read_unlock(mm);
	spin_unlock(&pt->ptl);
}

static void i_mmap_under_page_table_lock(void)
{
	spin_lock(&mm->page_table_lock);
	i_mmap_lock_read(file);
	i_mmap_unlock_read(file);
	spin_unlock(&mm->page_table_lock);
}

static void siblings_nested(void)
{
	spin_lock(&lru);
	spin_lock(&pt->ptl);
	spin_unlock(&pt->ptl);
	spin_unlock(&lru);
}

static void trylock_under_ptl(void)
{
	spin_lock(&pt->ptl);
	if (mmap_read_trylock(mm))
		mmap_read_unlock(mm);
	spin_unlock(&pt->ptl);
}

static void mmap_lock_under_rcu(void)
{
	vml_rcu_read_lock();
	mmap_read_lock(mm);
	mmap_read_unlock(mm);
	vml_rcu_read_unlock();
}

static void mmap_read_lock_twice(void)
{
	mmap_read_lock(mm);
	mmap_read_lock(mm);
	mmap_read_unlock(mm);
	mmap_read_unlock(mm);
}

static void two_mms(void)
{
	mmap_write_lock(mm);
	mmap_write_lock(child);
	mmap_write_unlock(child);
	mmap_write_unlock(mm);
}

static void two_mms_nested(void)
{
	mmap_write_lock(mm);
	mmap_write_lock_nested(child);
	mmap_write_unlock(child);
	mmap_write_unlock(mm);
}

static void release_unheld(void)
{
	spin_unlock(&lru);
}

static void mmap_lock_under_vma_lock(void)
{
	struct vma *vma;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, 0x100000000000UL);
	vml_assert(vma && vma_start_read_locked(vma));
	mmap_read_unlock(mm);
	/* A reader holding a VMA lock must not wait for mmap_lock: a writer may wait for it. */
	mmap_write_lock(mm);
	mmap_write_unlock(mm);
	vma_end_read(vma);
}

static void test_child_aborts(void)
{
	spinlock_t a, b;
	int status = 0;
	pid_t pid;

	spin_lock_init(&a, LOCK_CLASS_LRU);
	spin_lock_init(&b, LOCK_CLASS_PTL);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* No hook: the default report prints and aborts. */
		close(2);	/* keep the expected report out of the test log */
		spin_lock(&a);
		spin_lock(&b);	/* ptl under lru_lock: against the order */
		_exit(0);
	}
	ok(pid > 0 && waitpid(pid, &status, 0) == pid, "forked a child that inverts two spinlocks");
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "the child died of SIGABRT");
}

int main(void)
{
	struct vml_sys *sys = NULL;
	struct vml_mm *uchild = NULL;

	/* First, while the process has one thread: fork() is simplest then. */
	test_child_aborts();

	lockdep_set_report(catch_report);
	if (vml_sys_create(NULL, &sys) || vml_mm_create(sys, &umm) || vml_mm_create(sys, &uchild) ||
	    vml_file_create(sys, "/lockdep", 4096, 0, &file) ||
	    vml_mmap(umm, 0x100000000000UL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, NULL, 0, NULL) ||
	    !(pt = pte_table_alloc())) {
		ok(0, "setup");
		return tap_done();
	}
	mm = to_mm(umm);
	child = to_mm(uchild);
	spin_lock_init(&lru, LOCK_CLASS_LRU);
	spin_lock_init(&ipages, LOCK_CLASS_I_PAGES);

	expect(0, NULL, documented_order,
	       "mmap_lock -> i_mmap_rwsem -> page_table_lock -> ptl -> lru_lock, i_pages_lock: no report");
	is_int((int)lockdep_depth(), 0, "and nothing is held after");
	expect(1, "mmap_lock taken while holding ptl", mmap_lock_under_ptl,
	       "mmap_lock(R) under a ptl is reported");
	expect(1, "i_mmap_rwsem taken while holding page_table_lock", i_mmap_under_page_table_lock,
	       "i_mmap_rwsem under page_table_lock is reported");
	expect(1, "ptl taken while holding lru_lock", siblings_nested,
	       "two siblings of the tree nested (ptl under lru_lock) are reported");
	expect(0, NULL, trylock_under_ptl,
	       "a trylock cannot wait: mmap_read_trylock under a ptl is not reported");
	expect(1, "inside an RCU read-side section", mmap_lock_under_rcu,
	       "waiting for mmap_lock inside RCU is reported");
	expect(1, "the same lock again", mmap_read_lock_twice,
	       "taking mmap_lock(R) twice is reported (a queued writer would deadlock it)");
	expect(1, "without a nesting annotation", two_mms,
	       "two mms' mmap_locks without the nesting annotation are reported");
	expect(0, NULL, two_mms_nested, "...and with mmap_write_lock_nested (fork) they are not");
	expect(1, "releasing a lock not held", release_unheld, "releasing a lock not held is reported");
	expect(1, "mmap_lock taken while holding vma lock", mmap_lock_under_vma_lock,
	       "mmap_lock(W) while holding a VMA read lock is reported");
	is_int((int)lockdep_depth(), 0, "nothing is held at the end");

	lockdep_set_report(NULL);
	vml_free(pt);
	vml_file_put(file);
	vml_mm_destroy(uchild);
	vml_mm_destroy(umm);
	vml_sys_destroy(sys);
	return tap_done();
}

#else

int main(void)
{
	tap_skip_all("built without -Dlockdep=true");
	return 0;
}

#endif
