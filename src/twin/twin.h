/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * twin.h - a running process's address space, read from its /proc files
 * (smaps, which holds maps' lines, and pagemap), and the op script that
 * rebuilds it (docs/twin.md): the same VMAs in the same order with the
 * same gaps, shifted into the script range, with the same pages present,
 * written, huge, swapped and locked.
 *
 * Three steps, each its own function so that each can be tested alone:
 *
 *   twin_snapshot_read()   PID's smaps and pagemap -> struct twin_snapshot
 *   twin_layout()          where each VMA lands in the script range
 *   twin_script_write()    the op script
 *
 * and twin_compare(), which reads the twin's smaps (as a replay printed
 * it) with the same parser and says, field by field, how many VMAs agree.
 *
 * Nothing here prints: errors come back as -errno with a message in the
 * caller's buffer; the command (src/cli/twin.c) prints them.
 */
#ifndef VML_TWIN_TWIN_H
#define VML_TWIN_TWIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <sys/types.h>

/* The smaps fields a twin keeps, in the kernel's order (kB each). */
enum twin_field {
	TF_SIZE, TF_KERNEL_PAGE_SIZE, TF_MMU_PAGE_SIZE, TF_RSS, TF_PSS, TF_PSS_DIRTY,
	TF_SHARED_CLEAN, TF_SHARED_DIRTY, TF_PRIVATE_CLEAN, TF_PRIVATE_DIRTY,
	TF_REFERENCED, TF_ANONYMOUS, TF_KSM, TF_LAZYFREE, TF_ANON_HUGE, TF_SHMEM_PMD,
	TF_FILE_PMD, TF_SHARED_HUGETLB, TF_PRIVATE_HUGETLB, TF_SWAP, TF_SWAP_PSS,
	TF_LOCKED,
	TF__COUNT,
};
/* "Rss", "AnonHugePages", ...: the field's name in smaps. */
const char *twin_field_name(enum twin_field f);

/* VmFlags the twin acts on (two-letter codes in smaps' VmFlags line). */
enum twin_vmflag {
	TV_SHARED = 1u << 0,	/* sh */
	TV_GROWSDOWN = 1u << 1,	/* gd */
	TV_PFNMAP = 1u << 2,	/* pf */
	TV_IO = 1u << 3,	/* io */
	TV_LOCKED = 1u << 4,	/* lo */
	TV_LOCKONFAULT = 1u << 5,	/* lf */
	TV_DONTCOPY = 1u << 6,	/* dc */
	TV_WIPEONFORK = 1u << 7,	/* wf */
	TV_HUGEPAGE = 1u << 8,	/* hg */
	TV_NOHUGEPAGE = 1u << 9,	/* nh */
	TV_NORESERVE = 1u << 10,	/* nr */
	TV_HUGETLB = 1u << 11,	/* ht */
	TV_SEALED = 1u << 12,	/* sl */
	TV_MIXEDMAP = 1u << 13,	/* mm */
	TV_DROPPABLE = 1u << 14,	/* dp */
	TV_SHADOW_STACK = 1u << 15,	/* ss */
};

/* What a VMA is, for the twin. */
enum twin_kind {
	TK_ANON,		/* private anonymous (also [anon:NAME]) */
	TK_HEAP,		/* [heap]: brk's; an unnamed anonymous mapping in the twin */
	TK_STACK,		/* [stack]: a growsdown anonymous mapping in the twin */
	TK_FILE,		/* a regular file, private or shared */
	TK_SHMEM,		/* a tmpfs file: /dev/shm, SysV shm, memfd, a split shared anon */
	TK_SHARED_ANON,		/* /dev/zero (deleted), [anon_shmem:NAME], at offset 0 */
	TK_SKIP,		/* what the op format cannot make: see twin_vma.skip */
};

/* A page's state, from pagemap (one byte per page of a VMA). */
enum twin_page {
	TP_NONE = 0,		/* not present, not swapped */
	TP_ANON,		/* present, an anonymous page (written, or COW-copied) */
	TP_FILE,		/* present, a page-cache page (file or shmem) */
	TP_ZERO,		/* present, the shared zero page (read, never written) */
	TP_SWAP,		/* swapped out */
};
#define TP_STATE_MASK 0x0f	/* the enum twin_page in a page's byte */
#define TP_HUGE_HEAD 0x80	/* the first page of a PMD block a huge page maps */
#define TP_NOT_EXCL 0x40	/* TP_ANON not mapped exclusively (pagemap bit 56 clear):
				 * shared copy-on-write, or the zero page */

struct twin_vma {
	unsigned long start, end;	/* the original's */
	unsigned long tstart;		/* the twin's, set by twin_layout() */
	char perms[5];
	unsigned long offset;
	unsigned int dev_major, dev_minor;
	unsigned long inode;
	char *name;			/* as maps prints it; NULL: none */
	unsigned int vmflags;		/* enum twin_vmflag */
	unsigned long kb[TF__COUNT];	/* smaps fields */
	enum twin_kind kind;
	const char *skip;		/* TK_SKIP: why, for the script's comment */
	unsigned int file;		/* TK_FILE, TK_SHMEM: index into twin_snapshot.files */
	unsigned char *pages;		/* enum twin_page per page; NULL: nothing present */
	bool staged;			/* twin_script: mapped apart and moved into place */
	unsigned int alias;		/* twin_script: which open of its file (0, 1) */
};

/* A file the original maps, by device and inode; one twin file each. */
struct twin_file {
	unsigned int dev_major, dev_minor;
	unsigned long inode;
	unsigned long size;		/* bytes: stat()'s, else the extent mapped */
	bool stat_size;			/* @size is stat()'s */
	bool shmem;
	bool aliased;			/* a second open is needed (twin_script) */
};

struct twin_snapshot {
	pid_t pid;
	char comm[64];
	struct twin_vma *vmas;
	size_t nr, cap;
	struct twin_file *files;
	size_t nr_files, cap_files;
	bool pfns;			/* pagemap showed page frame numbers (root) */
	unsigned long swapped_pages;
	unsigned long skipped;
};

/*
 * twin_smaps_parse - add the records of smaps text from @f to @s.
 * Return: 0, or -EINVAL (@err says which line) for text that is not smaps,
 *         -ENOMEM, or -errno of a read error.
 */
int twin_smaps_parse(FILE *f, struct twin_snapshot *s, char *err, size_t errlen);

/*
 * Classify @n pagemap entries into @pages; @zero_pfn the zero page's (0:
 * unknown, frame numbers hidden: TP_NOT_EXCL marks the candidates).
 */
void twin_pagemap_classify(const uint64_t *ents, size_t n, uint64_t zero_pfn,
			   unsigned char *pages);

/*
 * twin_snapshot_read - read process @pid's smaps, then pagemap for every VMA
 * that has pages (Rss or Swap), in chunks of 64 Ki entries; the kinds and
 * files are decided (statfs/stat of the paths that still exist).
 * Context: the caller may read another user's process only with the same
 *          uid or CAP_SYS_PTRACE (the kernel's PTRACE_MODE_READ check).
 * Return: 0 and *@out; -ESRCH (no such process), TWIN_EXITED (it exited, or
 *         its PID was reused, while being read), -EINVAL (no address space:
 *         a kernel thread), -E2BIG (its layout does not fit the script
 *         range), -EACCES/-EPERM (not allowed), -ENOMEM, or another -errno; @err names the file and what
 *         failed, with the errno's name.
 */
#define TWIN_EXITED (-ECHILD)
int twin_snapshot_read(pid_t pid, struct twin_snapshot **out, char *err, size_t errlen);

/*
 * Without frame numbers, tell @v's zero-page reads from its written pages by
 * smaps' count (done by twin_snapshot_read; for tests): Rss counts no zero
 * page, so present anonymous pages beyond Rss are zero pages - the pages not
 * mapped exclusively, when there are exactly that many of them.
 * Return: how many pages became TP_ZERO.
 */
unsigned long twin_infer_zero_pages(struct twin_vma *v);

/* Decide each VMA's kind and file (done by twin_snapshot_read; for tests). */
int twin_snapshot_classify(struct twin_snapshot *s, char *err, size_t errlen);

void twin_snapshot_free(struct twin_snapshot *s);

/*
 * twin_layout - place every VMA in [lo, hi): VMAs less than 1 GiB apart keep
 * their gap exactly; a larger gap is shrunk by whole GiBs to between 1 and
 * 2 GiB, so every address keeps its offset within its GiB (huge pages stay
 * aligned). Return: 0, or -E2BIG if it does not fit (@err says how much).
 */
int twin_layout(struct twin_snapshot *s, unsigned long lo, unsigned long hi, char *err,
		size_t errlen);

/* The twin's address of the original's @addr in @v. */
static inline unsigned long twin_addr(const struct twin_vma *v, unsigned long addr)
{
	return v->tstart + (addr - v->start);
}

/*
 * twin_script_write - the op script to @f (after twin_layout()).
 * Return: 0 or -errno of the write.
 */
int twin_script_write(struct twin_snapshot *s, FILE *f);

/* twin_compare's result: per field, how many VMAs agree and by how much not. */
struct twin_field_cmp {
	unsigned long same;		/* VMAs whose value is the original's */
	unsigned long orig_kb, twin_kb;	/* sums over the VMAs compared */
	unsigned long abs_diff_kb;	/* sum of |twin - orig| */
	unsigned long max_diff_kb;	/* the largest |twin - orig| of one VMA */
};
struct twin_cmp {
	unsigned long vmas;		/* the original's VMAs the twin has (not skipped) */
	unsigned long maps_same;	/* range, perms, offset and kind of name the same */
	unsigned long missing;		/* of the original's, not found in the twin */
	unsigned long extra;		/* the twin's that the original lacks */
	struct twin_field_cmp f[TF__COUNT];
	unsigned long locked_as_pss;	/* VMAs whose Locked agrees as Pss does (compare.c) */
	char first_diff[256];		/* the first difference in maps */
	char first_field_diff[256];	/* the first in a field that must agree */		/* the first difference in maps, for the message */
};

/* The fields that must agree on every VMA (docs/twin.md); the others get an error. */
bool twin_field_exact(enum twin_field f);

/*
 * twin_compare - compare the original @s (laid out) with the twin's smaps
 * text @twin_smaps as a replay printed it (normalised or not).
 * Return: 0, or -EINVAL/-ENOMEM from parsing it.
 */
int twin_compare(const struct twin_snapshot *s, const char *twin_smaps, struct twin_cmp *c);

#endif /* VML_TWIN_TWIN_H */
