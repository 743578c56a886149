/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vmalock/mm.h - a modelled kernel ("sys"), its address spaces ("mm") and
 * files, and the system calls that change an address space.
 *
 * Every function returns 0 or a negative errno, the same errno the Linux
 * kernel returns for the same call. A call that fails changes nothing.
 * Protection, mapping, remap and advice values are Linux's own (PROT_*,
 * MAP_*, MREMAP_*, MADV_* from <sys/mman.h>). A thread needs no
 * registration.
 *
 * Each function's "Context:" says which of the model's locks it takes,
 * whether it may sleep (wait on a futex - for mmap_lock, a VMA's readers, a
 * file's i_mmap_rwsem - or for an RCU grace period or a thread), and
 * whether several threads may call it at once. The address-space calls are
 * the kernel's system calls and take the kernel's locks (docs/locking.md):
 * any number of threads may make them on one mm at once, with /proc readers
 * (vmalock/proc.h) and khugepaged (vmalock/khugepaged.h), and they serialise
 * on mmap_lock as processes' threads do. None is async-signal-safe.
 */
#ifndef VMALOCK_MM_H
#define VMALOCK_MM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * VML_MUST_CHECK marks every function that can fail with valid arguments -
 * out of memory, a limit, the address space's state - so the compiler warns
 * when a caller drops its result (warn_unused_result; a (void) cast does
 * not silence GCC). Functions that fail only on invalid arguments (NULL, an
 * unknown flag, a value out of range: vml_mm_stats, vml_reader_set_flags...)
 * are not marked.
 */
#if defined(__GNUC__) || defined(__clang__)
#define VML_MUST_CHECK __attribute__((warn_unused_result))
#else
#define VML_MUST_CHECK
#endif

struct vml_sys;		/* the modelled kernel: settings, page cache, swap, files */
struct vml_mm;		/* one address space */
struct vml_file;	/* a regular or shmem (tmpfs) file */

enum vml_thp_mode {
	VML_THP_MADVISE = 0,	/* default, as on the live machine */
	VML_THP_ALWAYS,
	VML_THP_NEVER,
};

/*
 * One size of anonymous THP (transparent_hugepage/hugepages-NkB/enabled).
 * Zero is the kernel's boot default: "inherit" for the PMD size, "never"
 * for every smaller one.
 */
enum vml_mthp_mode {
	VML_MTHP_DEFAULT = 0,
	VML_MTHP_NEVER,
	VML_MTHP_ALWAYS,
	VML_MTHP_MADVISE,	/* only in VMAs advised MADV_HUGEPAGE */
	VML_MTHP_INHERIT,	/* as the global mode (vml_sys_config.thp) says */
};
/*
 * shmem THP (transparent_hugepage/shmem_enabled): the huge= policy of the
 * kernel's internal shmem mount (shared anonymous memory, memfd), and
 * deny/force over every tmpfs mount. Zero is the boot default, never.
 */
enum vml_shmem_huge {
	VML_SHMEM_HUGE_NEVER = 0,
	VML_SHMEM_HUGE_ALWAYS,
	VML_SHMEM_HUGE_WITHIN_SIZE,	/* only a huge page that lies within the file's size */
	VML_SHMEM_HUGE_ADVISE,		/* only in VMAs advised MADV_HUGEPAGE */
	VML_SHMEM_HUGE_DENY,		/* none anywhere, whatever a mount says */
	VML_SHMEM_HUGE_FORCE,		/* everywhere, whatever a mount says */
};

/*
 * One size of shmem THP for the internal mount's objects - shared anonymous
 * memory and memfd - in a mapping (transparent_hugepage/hugepages-NkB/
 * shmem_enabled). Zero is the kernel's boot default: "inherit" for the PMD
 * size, "never" for every smaller one.
 */
enum vml_shmem_mthp_mode {
	VML_SHMEM_MTHP_DEFAULT = 0,
	VML_SHMEM_MTHP_NEVER,
	VML_SHMEM_MTHP_ALWAYS,
	VML_SHMEM_MTHP_WITHIN_SIZE,	/* only a folio that lies within the object's size */
	VML_SHMEM_MTHP_ADVISE,		/* only in VMAs advised MADV_HUGEPAGE */
	VML_SHMEM_MTHP_INHERIT,		/* as shmem_enabled says, and alone under "force" */
};

/* Folio orders 0..9 (4 KiB .. 2 MiB); anonymous THP has orders 2..9. */
#define VML_THP_ORDERS 10

/* mmap_lock reader policy (see docs/locking.md). */
enum vml_steal_policy {
	VML_STEAL_KERNEL = 0,		/* readers steal unless hand-off is pending (mainline) */
	VML_STEAL_NOT_BEHIND_WRITER,	/* never steal when the first waiter is a writer */
	VML_STEAL_NEVER,
	VML_STEAL_NOSTEAL_RETAKE,	/* mainline, but readers that dropped the lock for a
					 * writer (smaps_rollup's resume, lock_next_vma's
					 * mmap_lock fallback, khugepaged) re-take it with the
					 * 2026 mmap_read_lock_nosteal */
};

/* vm.overcommit_memory. */
enum vml_overcommit {
	VML_OVERCOMMIT_GUESS = 0,	/* heuristic: only a single absurd request fails */
	VML_OVERCOMMIT_ALWAYS,		/* never refuse */
	VML_OVERCOMMIT_NEVER,		/* strict; approximated per mm (see sys.c) */
};

/*
 * Where mmap() stores a new file mapping in the address space's tree and
 * counts it in map_count, relative to the file's i_mmap_rwsem write section
 * that adds it to the file's reverse map (docs/kernel.md section 8; seed 001).
 */
enum vml_i_mmap_order {
	VML_I_MMAP_POST = 0,	/* after the section: Linux 6.5 and later (seed 001's patch) */
	VML_I_MMAP_PRE,		/* inside it: before the patch */
};

/* How smaps counts a shmem mapping's pages in swap (docs/kernel.md section 7; seed 004). */
enum vml_shmem_swap_usage {
	VML_SHMEM_SWAP_FAST = 0,	/* Linux 4.5 and later: the object's counter, a walk of
					 * its page cache, or - private writable mappings of a
					 * partly swapped object only - a lookup per empty entry */
	VML_SHMEM_SWAP_PER_PAGE,	/* before: a page-cache lookup for every empty entry of
					 * every shmem mapping */
};

/*
 * How smaps_rollup gets its sums (docs/findings/2026-12-04-incremental-rollup.md).
 * WALK is the kernel's: a read walks every VMA's page tables. INCREMENTAL
 * (no kernel has it): every mm keeps the sums up to date as its page tables
 * change, and a read copies them without taking mmap_lock; the walk stays
 * available to a reader that asks for it (VML_READER_ROLLUP_WALK).
 */
enum vml_rollup_mode {
	VML_ROLLUP_WALK = 0,
	VML_ROLLUP_INCREMENTAL,
};

/*
 * Zero-initialised fields take the defaults shown: a reference machine (the
 * one the project was first compared on), not the machine this runs on. The
 * vmalock command never relies on them: it configures the model from the
 * host profile it measures (src/host/host.c, docs/host-profile.md).
 */
struct vml_sys_config {
	unsigned long max_map_count;	/* 65530 */
	enum vml_thp_mode thp;		/* madvise */
	unsigned int numa_nodes;	/* 1 */
	unsigned long swap_pages;	/* 0: no swap device */
	unsigned long fault_around_bytes; /* 65536 */
	/*
	 * Pages a fault that misses a regular file's page cache reads in
	 * around it (the device's read-ahead window; mmap read-around). 0: the
	 * page alone.
	 */
	unsigned long file_ra_pages;
	unsigned long file_folio_max_bytes; /* 0: 65536 (ext4 with large folios): the
					 * largest page-cache folio write() gives a regular
					 * file; PAGE_SIZE: small pages only. A power of two;
					 * a 64 KiB write chunk bounds it anyway */
	enum vml_steal_policy mmap_lock_steal;	/* kernel */
	uint64_t mmap_lock_handoff_ns;	/* 4 ms (RWSEM_WAIT_TIMEOUT at HZ=250) */
	bool anon_vma_name;		/* false: PR_SET_VMA_ANON_NAME fails with EINVAL,
					 * as on a kernel without CONFIG_ANON_VMA_NAME */
	bool use_zero_page;		/* false: a read of untouched private anonymous memory
					 * allocates a page, as on a kernel booted with
					 * pvm_no_zero_page=1; true: mainline's shared zero page */
	bool use_huge_zero_page;	/* false: such a read in a THP-eligible range allocates
					 * a huge page; true: it maps the huge zero page
					 * (transparent_hugepage/use_zero_page) */
	bool pkeys;			/* false: smaps prints no "ProtectionKey:" line, as on a
					 * CPU without protection keys; true: it prints key 0 */
	enum vml_overcommit overcommit;	/* guess */
	unsigned long ram_pages;	/* this machine's (sysconf _SC_PHYS_PAGES): the
					 * overcommit heuristic refuses to commit more than
					 * RAM + swap in one go (ENOMEM) */
	unsigned long stack_rlimit;	/* 8 MiB: how far a MAP_GROWSDOWN VMA may grow */
	enum vml_i_mmap_order i_mmap_order;	/* post */
	enum vml_shmem_swap_usage shmem_swap_usage;	/* fast */
	enum vml_rollup_mode rollup;	/* walk */
	bool kernel_transients;		/* false: every system call publishes its result at
					 * once, and a lockless reader's VMA iterator keeps
					 * the tree snapshot it walks; true: the model goes
					 * through the intermediate states 6.18 exposes to
					 * per-VMA-lock readers - mremap(MREMAP_FIXED)
					 * publishes the destination unmapped before the
					 * move, and an iterator whose tree node a writer
					 * replaced walks down again from the end of the VMA
					 * it returned last, as the maple tree's does, which
					 * skips the rest of a VMA that grew by a merge
					 * (docs/findings/maps-fake-gaps.md) */
	bool no_per_vma_lock;		/* false: page faults and a MADV_DONTNEED inside one VMA
					 * take that VMA's read lock (lock_vma_under_rcu) and
					 * fall back to mmap_lock(R), as 6.18; true: they take
					 * mmap_lock(R), as a kernel without CONFIG_PER_VMA_LOCK
					 * (before 6.4). Readers have their own policy */
	uint64_t mmap_lock_tick_ns;	/* 0: a waiter may force hand-off exactly
					 * mmap_lock_handoff_ns after it queued; else the
					 * kernel's jiffies of this length (1e9 / HZ): the
					 * timeout is rounded up to ticks and counted from the
					 * tick it queued in, 4-8 ms at HZ=250 */
	/*
	 * Anonymous THP per size, indexed by folio order (order 9 is the PMD
	 * size, 4 the 64 KiB mTHP): each size's own mode, "inherit" taking
	 * @thp's. All zero: the boot default (PMD inherits, no mTHP). Orders
	 * 0 and 1 must be zero or never.
	 */
	enum vml_mthp_mode thp_anon[VML_THP_ORDERS];
	enum vml_shmem_huge shmem_huge;	/* never */
	/*
	 * shmem THP per size, indexed by folio order (1: 8 KiB .. 9: 2 MiB),
	 * as thp_anon. All zero: the boot default (PMD inherits, no other
	 * size). Order 0 must be zero or never.
	 */
	enum vml_shmem_mthp_mode shmem_mthp[VML_THP_ORDERS];
	/*
	 * What the kernel spends on each step, charged as CPU time where the
	 * kernel spends it (all 0: nothing is charged, the model runs at its
	 * own speed). The simulated machine sets them from measurements of
	 * the live kernel (docs/simulation.md); on real threads a charge is a
	 * busy spin.
	 */
	struct vml_kernel_costs {
		uint64_t syscall_ns;	/* a system call's entry and exit, outside any lock */
		uint64_t mmap_ns;	/* mmap()'s work under mmap_lock (write): one VMA */
		uint64_t munmap_ns;	/* munmap()'s work under mmap_lock (write): one VMA */
		uint64_t fault_ns;	/* a page fault that maps one page, under its lock */
		uint64_t zap_ns;	/* per present page-table entry zapped (munmap, DONTNEED) */
		uint64_t scan_vma_ns;	/* khugepaged: one VMA its scan looks at, under mmap_lock(R) */
		/*
		 * The file mapping lock's work (bench exec-churn, seed 001):
		 * a VMA put in or taken out of its file's i_mmap interval
		 * tree, under i_mmap_rwsem(W); and mmap()'s store of the
		 * mapping in the mm's tree, charged at the store on top of
		 * mmap_ns: inside i_mmap_rwsem(W) under i_mmap_order pre,
		 * outside under post.
		 */
		uint64_t i_mmap_insert_ns;
		uint64_t i_mmap_remove_ns;
		uint64_t vma_store_ns;
	} costs;
};

/* Context: any thread, several at once; allocates, takes no lock, never sleeps. */
VML_MUST_CHECK
int vml_sys_create(const struct vml_sys_config *cfg, struct vml_sys **out);
/*
 * Context: one thread, once every mm, file and khugepaged of @sys is
 * destroyed or put; waits for an RCU grace period's callbacks (sleeps).
 * NULL is a no-op.
 */
void vml_sys_destroy(struct vml_sys *sys);

/*
 * An empty address space: no mappings; top-down placement below 0x7f0000000000.
 * Context: any thread, several at once (the same @sys too); never sleeps.
 */
VML_MUST_CHECK
int vml_mm_create(struct vml_sys *sys, struct vml_mm **out);
/*
 * Exit: unmap everything and drop the caller's reference. NULL is a no-op.
 * Open readers see end-of-file afterwards.
 * Context: no other call on @mm may be running or follow, except through
 * readers opened before (they keep its memory, not its mappings). Takes
 * mmap_lock(W) to unmap: may sleep until readers and faults leave.
 */
void vml_mm_destroy(struct vml_mm *mm);

/*
 * Files. @path is what maps shows (absolute, as d_path prints it). The file
 * has data: its pages are in the page cache, as after write() and fsync()
 * (clean; a tmpfs file's pages are dirty, as tmpfs never writes back).
 * VML_FILE_SHMEM makes a tmpfs file (shmem: swap-backed, counts as Pss_Shmem).
 * One vml_file is one open file: mappings merge only within one vml_file.
 * vml_file_put drops the creator's reference; mappings hold their own.
 * Context: any thread, several at once; neither call sleeps nor takes
 * mmap_lock. The caller must not use @file after its put.
 */
#define VML_FILE_SHMEM 0x1
/* With VML_FILE_SHMEM: a memfd, on the internal mount that shmem_enabled governs. */
#define VML_FILE_MEMFD 0x2
VML_MUST_CHECK
int vml_file_create(struct vml_sys *sys, const char *path, unsigned long size,
		    unsigned int flags, struct vml_file **out);
void vml_file_put(struct vml_file *file);

/*
 * mmap(2). @file is the mapped file, or NULL with MAP_ANONYMOUS in @flags.
 * MAP_DROPPABLE (0x08, a mapping type) makes anonymous memory whose pages
 * reclaim may drop, written or not.
 * Without MAP_ANONYMOUS a NULL @file is mmap(..., fd = -1, ...): -EBADF,
 * as the kernel returns. With MAP_ANONYMOUS @file is ignored, as the fd is.
 *
 * Context (mmap, munmap, mprotect, mremap here; mlock, mlock2, munlock,
 * mlockall, munlockall and set_anon_name below): several threads at once,
 * on one mm too. Each takes mmap_lock(W) and write-locks every VMA it
 * changes (waiting for that VMA's readers), a file mapping's i_mmap_rwsem(W)
 * as well; populating (MAP_POPULATE, MAP_LOCKED, mlock) faults pages in under
 * mmap_lock(R) afterwards. All may sleep.
 */
VML_MUST_CHECK
int vml_mmap(struct vml_mm *mm, unsigned long addr, unsigned long len, int prot, int flags,
	     struct vml_file *file, unsigned long offset, unsigned long *addr_out);
VML_MUST_CHECK
int vml_munmap(struct vml_mm *mm, unsigned long addr, unsigned long len);
VML_MUST_CHECK
int vml_mprotect(struct vml_mm *mm, unsigned long addr, unsigned long len, int prot);
VML_MUST_CHECK
int vml_mremap(struct vml_mm *mm, unsigned long old_addr, unsigned long old_len,
	       unsigned long new_len, int flags, unsigned long new_addr, unsigned long *addr_out);
/*
 * madvise(2), with MADV_GUARD_INSTALL (102) and MADV_GUARD_REMOVE (103) among
 * the advices, MADV_POPULATE_READ/WRITE (22, 23: fault the range in as GUP
 * does, under mmap_lock(R)) and MADV_REMOVE (9: a hole in the file of a
 * shared writable mapping, punched after mmap_lock is dropped, as
 * vml_file_punch). MADV_COLLAPSE is vml_madvise_collapse()
 * (vmalock/khugepaged.h); here it is -EINVAL.
 * Context: several threads at once. MADV_DONTNEED holds only the VMA's read
 * lock when the range lies inside one VMA, else mmap_lock(R), as 6.18's
 * does; every other advice holds mmap_lock(W). May sleep.
 */
VML_MUST_CHECK
int vml_madvise(struct vml_mm *mm, unsigned long addr, unsigned long len, int advice);
VML_MUST_CHECK
int vml_mlock(struct vml_mm *mm, unsigned long addr, unsigned long len);
/* mlock2(2): @flags 0 or MLOCK_ONFAULT (lock pages as they fault in; populate nothing). */
VML_MUST_CHECK
int vml_mlock2(struct vml_mm *mm, unsigned long addr, unsigned long len, unsigned int flags);
VML_MUST_CHECK
int vml_munlock(struct vml_mm *mm, unsigned long addr, unsigned long len);
/*
 * mlockall(2): @flags a mix of MCL_CURRENT, MCL_FUTURE and MCL_ONFAULT
 * (not alone). MCL_FUTURE locks every later mapping of @mm. munlockall(2)
 * undoes both.
 */
VML_MUST_CHECK
int vml_mlockall(struct vml_mm *mm, int flags);
VML_MUST_CHECK
int vml_munlockall(struct vml_mm *mm);
/*
 * mseal(2): seal [addr, addr+len), which must be mapped without a hole
 * (-ENOMEM); @flags must be 0. A sealed VMA refuses munmap, mprotect,
 * mremap, an mmap over it, and the madvise advices that discard an
 * anonymous read-only VMA's data, with -EPERM. Context: as vml_mmap's.
 */
VML_MUST_CHECK
int vml_mseal(struct vml_mm *mm, unsigned long addr, unsigned long len, unsigned long flags);
/*
 * /proc/PID/clear_refs: write @value (1 all, 2 anonymous, 3 file-mapped
 * pages: clear their young bits and referenced flags; 4 soft-dirty, which
 * the model's hosts do not build (CONFIG_MEM_SOFT_DIRTY=n): nothing to
 * clear; 5 reset the peak RSS). Return: 0, or -EINVAL for another value.
 * Context: takes mmap_lock(W), as 6.18 does for every value.
 */
VML_MUST_CHECK
int vml_clear_refs(struct vml_mm *mm, int value);
/*
 * ftruncate(2) of @file to @size bytes, and fallocate(2)
 * FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE of [offset, offset+len): the
 * pages that go are unmapped from every mapping of the file, in every mm
 * (unmap_mapping_range through i_mmap; truncation takes private copies
 * too), then dropped from the page cache (and shmem's swap). A later fault
 * beyond the new end of file raises SIGBUS.
 * Return: 0 or -errno (-EINVAL: a negative size or offset, a zero length).
 * Context: takes each mapping mm's mmap_lock(R) in turn, after i_mmap_rwsem(R).
 */
VML_MUST_CHECK
int vml_file_truncate(struct vml_file *file, long long size);
VML_MUST_CHECK
int vml_file_punch(struct vml_file *file, long long offset, long long len);
/*
 * prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, addr, len, name); NULL name clears.
 * Context: as vml_mmap's; mmap_lock(W).
 */
VML_MUST_CHECK
int vml_set_anon_name(struct vml_mm *mm, unsigned long addr, unsigned long len, const char *name);

/*
 * Access memory as a CPU would, one page at a time, faulting pages in.
 * Context: several threads at once, with every other call. A fault holds
 * the faulting VMA's read lock only (lock_vma_under_rcu), or, when that
 * fails, mmap_lock(R) - and mmap_lock(W) briefly to grow a stack VMA - as
 * the kernel's fault path does. May sleep.
 * Return: 0; -EFAULT where the access would raise SIGSEGV; -EIO for SIGBUS
 * (a file page beyond end of file). Pages before the failing one stay touched.
 */
#define VML_TOUCH_READ  0
#define VML_TOUCH_WRITE 1
VML_MUST_CHECK
int vml_touch(struct vml_mm *mm, unsigned long addr, unsigned long len, int access);

/*
 * fork(2): a child address space sharing anonymous pages copy-on-write.
 * Context: several threads at once; takes mmap_lock(W) of @mm and of the
 * child while it copies. May sleep.
 */
VML_MUST_CHECK
int vml_fork(struct vml_mm *mm, struct vml_mm **child_out);

/* Counters, monotonic since the mm was created. */
struct vml_mm_stats {
	uint64_t map_count;		/* current number of VMAs */
	uint64_t rss_pages;		/* current resident pages (anon + file + shmem) */
	uint64_t vma_lock_success;	/* lock_vma_under_rcu / lock_next_vma outcomes */
	uint64_t vma_lock_abort;
	uint64_t vma_lock_retry;
	uint64_t vma_lock_miss;
	uint64_t faults;		/* page faults handled */
	uint64_t faults_vma_locked;	/* ...of which under the per-VMA lock */
	uint64_t mmap_read_locks;	/* mmap_lock acquisitions */
	uint64_t mmap_write_locks;
	uint64_t mmap_read_steals;	/* reader took mmap_lock past a queued waiter */
	uint64_t mmap_handoffs;		/* a queued waiter forced hand-off */
	uint64_t proc_mmap_fallbacks;	/* /proc readers that fell back to mmap_lock */
	uint64_t proc_contended_drops;	/* smaps_rollup / scanner dropped mmap_lock for a waiter */
	/*
	 * How smaps and smaps_rollup found the swapped pages of shmem mappings
	 * (shmem_swap_usage), one count per VMA gathered: nothing in swap (no
	 * look at all), the mapping covers the whole object (its counter), a
	 * part of it (a walk of the page cache over the mapped range); and the
	 * VMAs walked with a page-cache lookup per empty entry instead or as
	 * well, with the number of those lookups.
	 */
	uint64_t shmem_swap_none;
	uint64_t shmem_swap_object;
	uint64_t shmem_swap_walk;
	uint64_t shmem_swap_per_page;
	uint64_t shmem_swap_lookups;
};
/*
 * Context: any thread, at any time, several at once; takes no lock and never
 * sleeps. Each counter is read on its own (relaxed): while other threads
 * run, the fields need not add up.
 */
int vml_mm_stats(struct vml_mm *mm, struct vml_mm_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* VMALOCK_MM_H */
