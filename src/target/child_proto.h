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
 * Only system headers here: the child links nothing but libc.
 */
#ifndef VML_TARGET_CHILD_PROTO_H
#define VML_TARGET_CHILD_PROTO_H

#include <stdint.h>

#define CHILD_EXE_NAME "vmalock-child"
#define CHILD_STR_MAX 4096

enum child_req_kind {
	CHILD_MMAP = 1,
	CHILD_MUNMAP,
	CHILD_MPROTECT,
	CHILD_MREMAP,
	CHILD_MADVISE,
	CHILD_TOUCH,
	CHILD_MLOCK,
	CHILD_MUNLOCK,
	CHILD_NAME,
	CHILD_FORK,
	CHILD_OPEN,		/* open str O_RDWR; the fd comes back in rep.addr */
};

struct child_req {
	uint32_t kind;		/* enum child_req_kind */
	int32_t prot;		/* mmap, mprotect */
	int32_t flags;		/* mmap MAP_*, mremap MREMAP_* */
	int32_t advice;		/* madvise */
	int32_t write;		/* touch: 1 write, 0 read */
	uint32_t has_str;	/* open: str is the path; name: str is the name */
	int32_t fd;		/* mmap: a fd from CHILD_OPEN, or -1 */
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

#endif /* VML_TARGET_CHILD_PROTO_H */
