/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * child_proto.h - the messages between the live target (live.c) and the
 * vmalock-child process (child_main.c) it executes.
 *
 * Transport: one AF_UNIX SOCK_SEQPACKET socket pair (a pipe that keeps
 * message boundaries and lets the parent write with MSG_NOSIGNAL, so a dead
 * child is an error, not a SIGPIPE). The parent sends one struct child_req,
 * the child answers with one struct child_rep; strictly alternating. The
 * child announces itself with one child_rep {0, 0} after it started. When
 * the parent closes its end, the child kills its own fork()ed children,
 * reaps them and exits.
 *
 * CHILD_FORK makes a process that serves requests too: the reply (its pid
 * in addr) carries one end of a new socket pair as SCM_RIGHTS ancillary
 * data, and the new process answers on the other end, the same protocol,
 * without a hello. It exits when that socket is closed, and is killed with
 * the process that forked it.
 *
 * Only system headers here: the child links nothing but libc.
 */
#ifndef VML_SPACES_CHILD_PROTO_H
#define VML_SPACES_CHILD_PROTO_H

#include <stdint.h>

#define CHILD_STR_MAX 4096

enum child_req_kind {
	CHILD_MMAP = 1,
	CHILD_MUNMAP,
	CHILD_MPROTECT,
	CHILD_MREMAP,
	CHILD_MADVISE,
	CHILD_TOUCH,
	CHILD_MLOCK,		/* flags: 0 mlock(2), else mlock2(2) with them */
	CHILD_MUNLOCK,
	CHILD_NAME,
	CHILD_FORK,
	CHILD_OPEN,		/* open str O_RDWR; the fd comes back in rep.addr */
	/* Replied to with struct child_lat_rep: */
	CHILD_TIMED_LOOP,	/* advice: enum child_loop_op; addr; len: iterations */
	CHILD_MAPPER_SETUP,	/* len: region bytes (a power of two pages); offset: seed;
				 * addr: where (MAP_FIXED_NOREPLACE), 0: the kernel picks */
	CHILD_MAPPER_RUN,	/* len: duration ns; new_len: sleep ns between ops */
	CHILD_KH_LAYOUT,	/* seed 003's address space: addr: base; len: ineligible
				 * one-page VMAs; new_len: collapsible 2 MiB ranges;
				 * offset: uncollapsible ones before them. rep.addr: the
				 * first range (uncollapsible ones first) */
	/* Replied to with struct child_rep again: */
	CHILD_MLOCKALL,		/* flags: MCL_* */
	CHILD_MUNLOCKALL,
	CHILD_MEMFD,		/* memfd_create(str), len bytes written; the fd in rep.addr */
	CHILD_PROCESS_MADVISE,	/* addr, len, advice: through a pidfd of the process itself */
	CHILD_REAP,		/* kill and reap every process this one forked */
	CHILD_MSEAL,		/* addr, len: mseal(2), flags 0 */
	CHILD_FTRUNCATE,	/* fd, len: ftruncate(2) */
	CHILD_PUNCH,		/* fd, offset, len: fallocate(PUNCH_HOLE | KEEP_SIZE) */
	CHILD_CLEAR_REFS,	/* advice: the value written to /proc/self/clear_refs */
};

/* What one CHILD_TIMED_LOOP iteration does (each iteration timed alone). */
enum child_loop_op {
	/* mmap one page rw private anon MAP_FIXED_NOREPLACE at addr, then munmap it */
	CHILD_LOOP_MMAP_MUNMAP = 1,
	/* mprotect the middle page of the 3-page rw VMA at addr to r--, then back */
	CHILD_LOOP_MPROTECT_SPLIT_MERGE,
	/* write one byte to page i of the unpopulated rw region at addr: one fault */
	CHILD_LOOP_WRITE_FAULT,
};

struct child_req {
	uint32_t kind;		/* enum child_req_kind */
	int32_t prot;		/* mmap, mprotect */
	int32_t flags;		/* mmap MAP_*, mremap MREMAP_* */
	int32_t advice;		/* madvise */
	int32_t write;		/* touch: 1 write, 0 read */
	uint32_t has_str;	/* open: str is the path; name: str is the name */
	int32_t fd;		/* mmap, ftruncate, punch: a fd from CHILD_OPEN, or -1 */
	uint64_t addr;
	uint64_t len;
	uint64_t new_len;	/* mremap */
	uint64_t new_addr;	/* mremap */
	uint64_t offset;	/* mmap */
	char str[CHILD_STR_MAX];
};

struct child_rep {
	int64_t ret;		/* 0 or -errno */
	uint64_t addr;		/* mmap, mremap: the result */
};

/*
 * lat_hist - a latency histogram, the payload of child_lat_rep and what the
 * benchmarks record into on the model side too (bench/stats.h reads it).
 * Log-linear buckets: exact below 256 ns, then 128 buckets per power of two
 * (each less than 0.8% wide) up to 2^41 ns (about 37 minutes); values above
 * land in the last bucket. count, sum, min and max are exact.
 */
#define LAT_HIST_SUB_BITS 7
#define LAT_HIST_SUB (1u << LAT_HIST_SUB_BITS)
#define LAT_HIST_MAX_SHIFT 33
#define LAT_HIST_BUCKETS ((LAT_HIST_MAX_SHIFT + 2) * LAT_HIST_SUB)

struct lat_hist {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t min_ns;	/* UINT64_MAX while empty */
	uint64_t max_ns;
	uint32_t bucket[LAT_HIST_BUCKETS];
};

static inline void lat_hist_init(struct lat_hist *h)
{
	h->count = 0;
	h->sum_ns = 0;
	h->min_ns = UINT64_MAX;
	h->max_ns = 0;
	for (unsigned int i = 0; i < LAT_HIST_BUCKETS; i++)
		h->bucket[i] = 0;
}

static inline unsigned int lat_hist_index(uint64_t ns)
{
	unsigned int shift = 0;

	if (ns >= 2 * LAT_HIST_SUB)
		shift = 63 - (unsigned int)__builtin_clzll(ns) - LAT_HIST_SUB_BITS;
	if (shift > LAT_HIST_MAX_SHIFT)
		return LAT_HIST_BUCKETS - 1;
	return shift * LAT_HIST_SUB + (unsigned int)(ns >> shift);
}

/* The smallest value that lands in bucket @i; the bucket is 1 << shift wide. */
static inline uint64_t lat_hist_bucket_low(unsigned int i, uint64_t *width)
{
	unsigned int shift = i < 2 * LAT_HIST_SUB ? 0 : i / LAT_HIST_SUB - 1;

	*width = 1ULL << shift;
	return (uint64_t)(i - shift * LAT_HIST_SUB) << shift;
}

static inline void lat_hist_record(struct lat_hist *h, uint64_t ns)
{
	h->count++;
	h->sum_ns += ns;
	if (ns < h->min_ns)
		h->min_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->bucket[lat_hist_index(ns)]++;
}

/* The reply to CHILD_TIMED_LOOP and CHILD_MAPPER_*. */
struct child_lat_rep {
	int64_t ret;		/* 0 or -errno (timed loop: the failing call's) */
	uint64_t addr;		/* mapper setup: the region */
	uint64_t nmaps;		/* mapper run: mmap() and munmap() calls made */
	uint64_t nunmaps;
	uint64_t nfails;	/* mapper run: calls that failed (ENOMEM past max_map_count) */
	struct lat_hist hist;	/* timed loop: one value per iteration; mapper: per call */
};

#endif /* VML_SPACES_CHILD_PROTO_H */
