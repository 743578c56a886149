/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vmalock/proc.h - the /proc/PID views of a modelled address space, in the
 * kernel's exact text formats, read through a read(2)-like interface that
 * resumes between calls the way seq_file does (by address, docs/kernel.md §2).
 *
 * A reader is an open file's position: one thread at a time may use it (as
 * with a file descriptor shared between threads without a lock). Any number
 * of readers, in any threads, may read one mm at once, while other threads
 * change it (vmalock/mm.h). "Context:" lines say which locks a call takes
 * and whether it may sleep, as in vmalock/mm.h.
 */
#ifndef VMALOCK_PROC_H
#define VMALOCK_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vmalock/mm.h"

#ifdef __cplusplus
extern "C" {
#endif

enum vml_view {
	VML_VIEW_MAPS = 0,
	VML_VIEW_SMAPS,
	VML_VIEW_SMAPS_ROLLUP,
	VML_VIEW_NUMA_MAPS,
};

/* How a reader locks the address space while it produces text. */
enum vml_lock_policy {
	VML_LOCK_MMAP = 0,	/* hold mmap_lock(R) for each read() call (before 6.17) */
	VML_LOCK_VMA,		/* RCU + one VMA read lock at a time, fall back to mmap_lock */
	VML_LOCK_VMA_STRICT,	/* VMA, but show a gap only when it is proven to have
				 * existed between system calls, else fall back to
				 * mmap_lock (the reader-side fix of
				 * docs/findings/maps-fake-gaps.md) */
	VML_LOCK_VMA_RECHECK,	/* VMA, but look every gap up again from the tree's
				 * root and fall back if that finds another VMA
				 * (fixes only that document's case 1) */
};

struct vml_reader;

/*
 * Return: 0, -EINVAL (bad view or policy), -ENOMEM. The reader holds a reference on @mm.
 * Context: any thread, several at once; takes no lock of @mm, never sleeps.
 *
 * Under VML_LOCK_VMA the page-walking views (smaps, smaps_rollup, numa_maps)
 * hold one VMA's read lock during its page walk and no RCU; under
 * VML_LOCK_MMAP smaps and numa_maps hold mmap_lock(R) for each read() (as
 * mainline does) and smaps_rollup drops it after a VMA when a writer waits
 * (see VML_READER_NOSTEAL). docs/locking.md, "/proc readers", has the details.
 */
VML_MUST_CHECK
int vml_reader_open(struct vml_mm *mm, enum vml_view view, enum vml_lock_policy lock,
		    struct vml_reader **out);

/*
 * Reader flags: details of a lock policy.
 * VML_READER_NOSTEAL: smaps_rollup, after dropping mmap_lock for a queued
 *   writer, re-takes it without stealing it back (the 2026 down_read_nosteal
 *   proposal), so the writer actually gets in. Default: mainline (steals).
 * VML_READER_NODROP: smaps_rollup never drops mmap_lock for a waiter (the
 *   behaviour before 5.10), for comparison.
 */
#define VML_READER_NOSTEAL	0x1
#define VML_READER_NODROP	0x2
/*
 * VML_READER_ROLLUP_WALK: smaps_rollup walks the page tables even when the
 *   system keeps incremental sums (VML_ROLLUP_INCREMENTAL) - the reference
 *   an incremental read is compared with.
 */
#define VML_READER_ROLLUP_WALK	0x4
/*
 * Return: 0 or -EINVAL (unknown flag). Set before the first read.
 * Context (this and the three cost setters below): the reader's thread,
 * before its first read; no lock, never sleeps.
 */
int vml_reader_set_flags(struct vml_reader *r, unsigned int flags);
/*
 * Like read(2): bytes copied (at most @len), 0 at end of file, or -errno.
 * Once the mm is gone: end of file, except smaps_rollup: -ESRCH (as the kernel).
 * Context: one thread at a time per reader. Takes what the reader's policy
 * says for the length of the call: VML_LOCK_MMAP mmap_lock(R); the VMA
 * policies RCU and one VMA's read lock at a time, with mmap_lock(R) as the
 * fallback. May sleep (waiting for mmap_lock, and the set costs spin).
 */
VML_MUST_CHECK
ssize_t vml_reader_read(struct vml_reader *r, char *buf, size_t len);
/*
 * Spend @ns more of CPU time on every record the reader shows, inside the
 * lock its policy holds (mmap_lock, or the record's VMA lock). The model
 * runs the kernel's algorithms at userspace speed, which can be several
 * times faster per record than the kernel; how long a reader holds a lock
 * decides how often a writer slips in between two read()s, so benchmarks
 * that compare with a live kernel measure both sides' per-record cost and
 * charge the model the difference. 0 (the default) is the model's own speed.
 * Return: 0 or -EINVAL (more than a second).
 */
int vml_reader_set_record_cost(struct vml_reader *r, uint64_t ns);
/*
 * Spend @ns more of CPU time per anonymous page a page-walking view (smaps,
 * smaps_rollup, numa_maps) meets - a present anonymous PTE or a swap PTE,
 * a huge PMD counting one - inside the locks it holds for the walk: the
 * part of the kernel's cost that grows with the anonymous memory a VMA
 * maps, which the model's walk does faster. Empty entries cost the kernel
 * next to nothing, and page-cache pages about what they cost the model, so
 * they are not charged. 0 (the default): no charge. Return: 0 or -EINVAL
 * (more than a second).
 */
int vml_reader_set_page_cost(struct vml_reader *r, uint64_t ns);
/*
 * Spend @ns more of CPU time at the start of every vml_reader_read() call,
 * before it takes any lock: what a read() system call costs the kernel's
 * reader between dropping its lock at the end of one call and taking it at
 * the start of the next (copying out, leaving and re-entering the kernel,
 * seq_read's own work), which the model's function call does not pay. That
 * gap is the window a writer woken by the reader's release has to take the
 * lock before the reader steals it back (docs/kernel.md §5.3), so benchmarks
 * that compare with a live kernel measure it and charge it. 0 (the default):
 * no charge. Return: 0 or -EINVAL (more than a second).
 */
int vml_reader_set_call_cost(struct vml_reader *r, uint64_t ns);

/*
 * lseek(fd, 0, SEEK_SET); close(fd) (NULL is a no-op).
 * Context: the reader's thread (not during a read); no mmap_lock, never sleeps.
 */
void vml_reader_rewind(struct vml_reader *r);
void vml_reader_close(struct vml_reader *r);

/* PROCMAP_QUERY: the same struct layout, flags, matching rules and errors as the ioctl. */
struct vml_procmap_query {
	uint64_t size;			/* in: sizeof(struct vml_procmap_query) */
	uint64_t query_flags;		/* in: VML_PROCMAP_QUERY_* */
	uint64_t query_addr;		/* in */
	uint64_t vma_start;		/* out */
	uint64_t vma_end;		/* out */
	uint64_t vma_flags;		/* out: VML_PROCMAP_QUERY_VMA_* */
	uint64_t vma_page_size;		/* out */
	uint64_t vma_offset;		/* out */
	uint64_t inode;			/* out */
	uint32_t dev_major;		/* out */
	uint32_t dev_minor;		/* out */
	uint32_t vma_name_size;		/* in/out */
	uint32_t build_id_size;		/* in/out */
	uint64_t vma_name_addr;		/* in: user buffer for the name */
	uint64_t build_id_addr;		/* in */
};

#define VML_PROCMAP_QUERY_VMA_READABLE		0x01
#define VML_PROCMAP_QUERY_VMA_WRITABLE		0x02
#define VML_PROCMAP_QUERY_VMA_EXECUTABLE	0x04
#define VML_PROCMAP_QUERY_VMA_SHARED		0x08
#define VML_PROCMAP_QUERY_COVERING_OR_NEXT_VMA	0x10
#define VML_PROCMAP_QUERY_FILE_BACKED_VMA	0x20

/*
 * Context: any thread, several at once. VML_LOCK_MMAP: mmap_lock(R); the VMA
 * policies: RCU and the found VMA's read lock, mmap_lock(R) as the fallback.
 * May sleep.
 */
VML_MUST_CHECK
int vml_procmap_query(struct vml_mm *mm, enum vml_lock_policy lock, struct vml_procmap_query *q);

/*
 * vml_access_remote_vm - what one read() of /proc/PID/cmdline, environ or
 * auxv costs @mm: the kernel copies the process's memory under mmap_lock(R)
 * (access_remote_vm). The model keeps no memory contents, so the copy is
 * @copy_ns of the CPU inside the lock (a live read's time, say): a monitor's
 * reads of those files contend with @mm's writers as the kernel's do, under
 * any reader lock policy, since they take no VMA lock.
 * Return: 0, or -EINVAL (@mm NULL).
 * Context: any thread, several at once; holds mmap_lock(R) for @copy_ns;
 * may sleep waiting for it.
 */
int vml_access_remote_vm(struct vml_mm *mm, uint64_t copy_ns);

#ifdef __cplusplus
}
#endif

#endif /* VMALOCK_PROC_H */
