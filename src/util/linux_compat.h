/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * linux_compat.h - the Linux ABI constants vmalock uses, with fallbacks for
 * C libraries whose headers predate them. The values are the kernel's
 * (include/uapi/asm-generic/mman-common.h, include/uapi/linux/mman.h,
 * include/uapi/linux/prctl.h); the model and the live target both rely on
 * them being exactly these. Include this instead of <sys/mman.h> and
 * <sys/prctl.h> wherever one of the constants below is used.
 */
#ifndef VML_UTIL_LINUX_COMPAT_H
#define VML_UTIL_LINUX_COMPAT_H

#include <sys/mman.h>
#include <sys/prctl.h>

/* mmap(2) */
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MAP_UNINITIALIZED
#define MAP_UNINITIALIZED 0x4000000
#endif
#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE 0x08		/* a mapping type, like MAP_PRIVATE (6.11+) */
#endif

/* mprotect(2) */
#ifndef PROT_SEM
#define PROT_SEM 0x8
#endif

/* mremap(2) */
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

/* madvise(2) */
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif
#ifndef MADV_KEEPONFORK
#define MADV_KEEPONFORK 19
#endif
#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22		/* 5.14+ */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25		/* 6.1+ */
#endif
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102		/* 6.13+ */
#endif
#ifndef MADV_GUARD_REMOVE
#define MADV_GUARD_REMOVE 103
#endif

/* mseal(2), 6.10+ */
#define VML_NR_mseal 462		/* x86-64; glibc may not name it yet */

/* fallocate(2) */
#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif

/* mlock2(2), mlockall(2) */
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 0x01
#endif
#ifndef MCL_CURRENT
#define MCL_CURRENT 1
#endif
#ifndef MCL_FUTURE
#define MCL_FUTURE 2
#endif
#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

/* prctl(2): anonymous VMA names */
#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#endif
#ifndef PR_SET_VMA_ANON_NAME
#define PR_SET_VMA_ANON_NAME 0
#endif

#endif /* VML_UTIL_LINUX_COMPAT_H */
