// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapshot.c - another process's address space as its /proc files show it.
 *
 * What is read, and why in this order:
 *
 *   /proc/PID/stat      its start time, before and after: a process that
 *                       exits while we read (or whose PID is reused) makes
 *                       smaps end early without an error, so only a second
 *                       look at stat tells a short read from a small process.
 *   /proc/PID/smaps     every VMA: maps' header line, the fields, VmFlags.
 *                       One pass, streamed line by line: 65,530 VMAs are
 *                       about 80 MB of text, never held whole.
 *   /proc/PID/pagemap   8 bytes per page, read with pread() in chunks of
 *                       64 Ki entries (512 KiB), only for VMAs whose smaps
 *                       shows pages (Rss or Swap): a JVM reserves gigabytes
 *                       it never touches.
 *
 * smaps and pagemap are two reads at two times: a page the process faults
 * in between is in one and not the other. The twin follows pagemap for
 * which pages, smaps for how many are huge; the comparison (compare.c) is
 * against smaps.
 *
 * Permission: the kernel checks PTRACE_MODE_READ at open() of smaps and
 * pagemap (same uid, or CAP_SYS_PTRACE); the EACCES comes back as is.
 * Without CAP_SYS_ADMIN pagemap hides page frame numbers (reads them as 0):
 * then the zero page cannot be told from a written page, nor a huge page's
 * frames from small ones (twin_snapshot.pfns says which).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "script/script.h"
#include "spaces/view.h"
#include "twin/twin.h"
#include "util/alloc.h"

#define PAGE_SZ 4096UL
#define PAGEMAP_CHUNK (64UL * 1024)	/* entries a pread: 512 KiB */
#define HPAGE_PAGES 512UL		/* a PMD's worth of pages */
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

#define PM_PFN_MASK ((1ULL << 55) - 1)
#define PM_EXCLUSIVE (1ULL << 56)
#define PM_FILE (1ULL << 61)
#define PM_SWAP (1ULL << 62)
#define PM_PRESENT (1ULL << 63)

static const char *const field_names[TF__COUNT] = {
	[TF_SIZE] = "Size", [TF_KERNEL_PAGE_SIZE] = "KernelPageSize",
	[TF_MMU_PAGE_SIZE] = "MMUPageSize", [TF_RSS] = "Rss", [TF_PSS] = "Pss",
	[TF_PSS_DIRTY] = "Pss_Dirty", [TF_SHARED_CLEAN] = "Shared_Clean",
	[TF_SHARED_DIRTY] = "Shared_Dirty", [TF_PRIVATE_CLEAN] = "Private_Clean",
	[TF_PRIVATE_DIRTY] = "Private_Dirty", [TF_REFERENCED] = "Referenced",
	[TF_ANONYMOUS] = "Anonymous", [TF_KSM] = "KSM", [TF_LAZYFREE] = "LazyFree",
	[TF_ANON_HUGE] = "AnonHugePages", [TF_SHMEM_PMD] = "ShmemPmdMapped",
	[TF_FILE_PMD] = "FilePmdMapped", [TF_SHARED_HUGETLB] = "Shared_Hugetlb",
	[TF_PRIVATE_HUGETLB] = "Private_Hugetlb", [TF_SWAP] = "Swap", [TF_SWAP_PSS] = "SwapPss",
	[TF_LOCKED] = "Locked",
};

const char *twin_field_name(enum twin_field f)
{
	return f < TF__COUNT ? field_names[f] : "?";
}

static const struct {
	char code[3];
	unsigned int bit;
} vmflag_codes[] = {
	{ "sh", TV_SHARED }, { "gd", TV_GROWSDOWN }, { "pf", TV_PFNMAP }, { "io", TV_IO },
	{ "lo", TV_LOCKED }, { "lf", TV_LOCKONFAULT }, { "dc", TV_DONTCOPY },
	{ "wf", TV_WIPEONFORK }, { "hg", TV_HUGEPAGE }, { "nh", TV_NOHUGEPAGE },
	{ "nr", TV_NORESERVE }, { "ht", TV_HUGETLB }, { "sl", TV_SEALED },
	{ "mm", TV_MIXEDMAP }, { "dp", TV_DROPPABLE }, { "ss", TV_SHADOW_STACK },
};

static void set_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* ---- smaps ---- */

static int add_vma(struct twin_snapshot *s, const char *line, size_t len,
		   const struct maps_line *ml)
{
	struct twin_vma *v;

	if (s->nr == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct twin_vma *n = vml_realloc(s->vmas, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->vmas = n;
		s->cap = cap;
	}
	v = &s->vmas[s->nr];
	memset(v, 0, sizeof(*v));
	v->start = ml->start;
	v->end = ml->end;
	memcpy(v->perms, ml->perms, sizeof(v->perms));
	v->offset = ml->offset;
	v->dev_major = ml->dev_major;
	v->dev_minor = ml->dev_minor;
	v->inode = ml->inode;
	if (ml->name_len) {
		v->name = vml_malloc(ml->name_len + 1);
		if (!v->name)
			return -ENOMEM;
		memcpy(v->name, line + ml->name_off, ml->name_len);
		v->name[ml->name_len] = '\0';
	}
	s->nr++;
	return 0;
}

/* "Key:   123 kB" or "VmFlags: rd wr" or another "Key: value" line. */
static int field_line(struct twin_vma *v, const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len);
	size_t klen;

	if (!colon || colon == line)
		return -EINVAL;
	klen = colon - line;
	for (size_t i = 0; i < klen; i++)
		if (!isalnum((unsigned char)line[i]) && line[i] != '_')
			return -EINVAL;
	if (klen == 7 && !memcmp(line, "VmFlags", 7)) {
		const char *p = colon + 1, *end = line + len;

		while (p < end) {
			while (p < end && *p == ' ')
				p++;
			if (end - p >= 2)
				for (size_t i = 0; i < sizeof(vmflag_codes) / sizeof(vmflag_codes[0]); i++)
					if (!memcmp(p, vmflag_codes[i].code, 2) &&
					    (end - p == 2 || p[2] == ' '))
						v->vmflags |= vmflag_codes[i].bit;
			while (p < end && *p != ' ')
				p++;
		}
		return 0;
	}
	for (int f = 0; f < TF__COUNT; f++) {
		if (strlen(field_names[f]) == klen && !memcmp(line, field_names[f], klen)) {
			char *e;

			v->kb[f] = strtoul(colon + 1, &e, 10);
			return 0;
		}
	}
	return 0;	/* THPeligible, ProtectionKey, ...: kept out of the twin */
}

static bool perm_ok(char c, char a, char b)
{
	return c == a || c == b;
}

/* One line (without '\n') of smaps. */
static int smaps_line(struct twin_snapshot *s, const char *line, size_t len)
{
	struct maps_line ml;

	if (maps_line_parse(line, len, &ml)) {
		/* What the script will say of it must be what the kernel prints. */
		if (ml.start >= ml.end || (s->nr && ml.start < s->vmas[s->nr - 1].end) ||
		    ml.start % 4096 || ml.end % 4096 || ml.offset % 4096 ||
		    !perm_ok(ml.perms[0], 'r', '-') || !perm_ok(ml.perms[1], 'w', '-') ||
		    !perm_ok(ml.perms[2], 'x', '-') || !perm_ok(ml.perms[3], 'p', 's'))
			return -EINVAL;
		return add_vma(s, line, len, &ml);
	}
	if (!s->nr)
		return -EINVAL;
	return field_line(&s->vmas[s->nr - 1], line, len);
}

/*
 * VML_TWIN_TEST_STOP=smaps: stop ourselves (SIGSTOP) after the first line of
 * smaps, so that a test can end the process we read half-way through
 * (tests/cli/twin.sh); =pagemap: after smaps, before pagemap.
 */
static void test_stop(const char *where)
{
	const char *v = getenv("VML_TWIN_TEST_STOP");

	if (v && !strcmp(v, where))
		raise(SIGSTOP);
}

static int smaps_parse(FILE *f, struct twin_snapshot *s, char *err, size_t errlen, bool hook)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0;
	ssize_t n;
	int ret = 0;

	errno = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		ret = smaps_line(s, line, (size_t)n);
		if (ret) {
			set_err(err, errlen, "line %lu: %s: '%.60s'", lineno,
				ret == -ENOMEM ? "out of memory" : "not an smaps line", line);
			break;
		}
		if (hook && lineno == 1)
			test_stop("smaps");
		errno = 0;
	}
	if (!ret && ferror(f)) {
		ret = errno ? -errno : -EIO;
		set_err(err, errlen, "read after line %lu: %s", lineno, strerror(-ret));
	}
	free(line);
	return ret;
}

int twin_smaps_parse(FILE *f, struct twin_snapshot *s, char *err, size_t errlen)
{
	return smaps_parse(f, s, err, errlen, false);
}

/* ---- pagemap ---- */

void twin_pagemap_classify(const uint64_t *ents, size_t n, uint64_t zero_pfn,
			   unsigned char *pages)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t e = ents[i];

		if (e & PM_PRESENT) {
			if (e & PM_FILE)
				pages[i] = TP_FILE;
			else if (zero_pfn && (e & PM_PFN_MASK) == zero_pfn)
				pages[i] = TP_ZERO;
			else
				pages[i] = TP_ANON | (e & PM_EXCLUSIVE ? 0 : TP_NOT_EXCL);
		} else if (e & PM_SWAP) {
			pages[i] = TP_SWAP;
		} else {
			pages[i] = TP_NONE;
		}
	}
}

/*
 * Mark (TP_HUGE_HEAD) the first page of each PMD-aligned block of @ents
 * (which start at @addr) that a huge page maps: 512 anonymous pages whose
 * frames are contiguous from a 512-aligned one. Needs frame numbers.
 */
static void mark_huge(const uint64_t *ents, size_t n, unsigned long addr, unsigned char *pages)
{
	size_t first = ((HPAGE_PAGES - (addr / PAGE_SZ) % HPAGE_PAGES) % HPAGE_PAGES);

	for (size_t i = first; i + HPAGE_PAGES <= n; i += HPAGE_PAGES) {
		uint64_t pfn0 = ents[i] & PM_PFN_MASK;
		bool huge = (ents[i] & PM_PRESENT) && !(ents[i] & PM_FILE) && pfn0 &&
			    pfn0 % HPAGE_PAGES == 0;

		for (size_t j = 1; huge && j < HPAGE_PAGES; j++)
			huge = (ents[i + j] & PM_PRESENT) && !(ents[i + j] & PM_FILE) &&
			       (ents[i + j] & PM_PFN_MASK) == pfn0 + j;
		if (huge)
			pages[i] |= TP_HUGE_HEAD;
	}
}

unsigned long twin_infer_zero_pages(struct twin_vma *v)
{
	unsigned long n = (v->end - v->start) / PAGE_SZ, anon = 0, file = 0, cand = 0, excess;

	if (!v->pages)
		return 0;
	for (unsigned long p = 0; p < n; p++) {
		unsigned char st = v->pages[p] & TP_STATE_MASK;

		anon += st == TP_ANON;
		file += st == TP_FILE;
		cand += st == TP_ANON && (v->pages[p] & TP_NOT_EXCL);
	}
	if (anon + file <= v->kb[TF_RSS] / 4)
		return 0;
	excess = anon + file - v->kb[TF_RSS] / 4;
	if (cand != excess)
		return 0;	/* not told apart: all of them written */
	for (unsigned long p = 0; p < n; p++)
		if ((v->pages[p] & TP_STATE_MASK) == TP_ANON && (v->pages[p] & TP_NOT_EXCL))
			v->pages[p] = TP_ZERO;
	return excess;
}

/* The zero page's frame number, from a page of our own read once; 0: hidden. */
static uint64_t zero_pfn_of_self(void)
{
	volatile char *p = mmap(NULL, PAGE_SZ, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t e = 0;
	int fd;

	if (p == MAP_FAILED)
		return 0;
	(void)p[0];
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (pread(fd, &e, sizeof(e), (off_t)((unsigned long)p / PAGE_SZ * 8)) != sizeof(e))
			e = 0;
		close(fd);
	}
	munmap((void *)p, PAGE_SZ);
	return (e & PM_PRESENT) && !(e & PM_FILE) ? e & PM_PFN_MASK : 0;
}

/*
 * Read the pages of @v from @fd. Chunks start on 64 Ki-page boundaries of
 * the address, so a PMD block is never cut by one.
 * Return: 0, -ESRCH when pagemap reads short (the process's mm is gone).
 */
static int read_pages(int fd, struct twin_vma *v, uint64_t zero_pfn, uint64_t *buf,
		      bool *pfns)
{
	unsigned long pg = v->start / PAGE_SZ, last = v->end / PAGE_SZ;
	size_t npages = last - pg;

	v->pages = vml_zalloc(npages);
	if (!v->pages)
		return -ENOMEM;
	while (pg < last) {
		unsigned long next = (pg / PAGEMAP_CHUNK + 1) * PAGEMAP_CHUNK;
		size_t n = (next < last ? next : last) - pg;
		size_t want = n * sizeof(uint64_t), got = 0;

		while (got < want) {
			ssize_t r = pread(fd, (char *)buf + got, want - got,
					  (off_t)(pg * sizeof(uint64_t) + got));

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return -errno;
			if (r == 0)
				return -ESRCH;
			got += (size_t)r;
		}
		twin_pagemap_classify(buf, n, zero_pfn, v->pages + (pg - v->start / PAGE_SZ));
		for (size_t i = 0; i < n && !*pfns; i++)
			if ((buf[i] & PM_PRESENT) && (buf[i] & PM_PFN_MASK))
				*pfns = true;
		mark_huge(buf, n, pg * PAGE_SZ, v->pages + (pg - v->start / PAGE_SZ));
		pg += n;
	}
	return 0;
}

/* ---- kinds and files ---- */

static bool starts(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

static bool ends(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* The twin file for @v's file, added if new. Return: its index, or -ENOMEM. */
static long file_of(struct twin_snapshot *s, const struct twin_vma *v, bool shmem)
{
	struct twin_file *f;

	for (size_t i = 0; i < s->nr_files; i++)
		if (s->files[i].dev_major == v->dev_major && s->files[i].dev_minor == v->dev_minor &&
		    s->files[i].inode == v->inode && s->files[i].shmem == shmem)
			return (long)i;
	if (s->nr_files == s->cap_files) {
		size_t cap = s->cap_files ? s->cap_files * 2 : 32;
		struct twin_file *n = vml_realloc(s->files, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->files = n;
		s->cap_files = cap;
	}
	f = &s->files[s->nr_files];
	memset(f, 0, sizeof(*f));
	f->dev_major = v->dev_major;
	f->dev_minor = v->dev_minor;
	f->inode = v->inode;
	f->shmem = shmem;
	/* The size: the file's own if its path still names it (same device and inode). */
	if (v->name && v->name[0] == '/' && !ends(v->name, " (deleted)")) {
		struct stat st;

		if (!stat(v->name, &st) && major(st.st_dev) == v->dev_major &&
		    minor(st.st_dev) == v->dev_minor && st.st_ino == v->inode && st.st_size > 0) {
			f->size = (unsigned long)st.st_size;	/* exactly: EOF decides SIGBUS */
			f->stat_size = true;
		}
	}
	return (long)s->nr_files++;
}

static bool on_tmpfs(const char *path)
{
	struct statfs sf;

	return path[0] == '/' && !ends(path, " (deleted)") && !statfs(path, &sf) &&
	       sf.f_type == TMPFS_MAGIC;
}

static void classify_one(struct twin_vma *v)
{
	const char *n = v->name;

	v->kind = TK_ANON;
	if (n && n[0] == '[' && strcmp(n, "[heap]") && strcmp(n, "[stack]") &&
	    !starts(n, "[anon:") && !starts(n, "[anon_shmem:"))
		v->skip = "a special mapping the kernel makes ([vdso], [vvar], [vsyscall], ...)";
	else if (v->vmflags & TV_HUGETLB)
		v->skip = "hugetlb (the op format has no MAP_HUGETLB)";
	else if (v->vmflags & (TV_PFNMAP | TV_IO | TV_MIXEDMAP))
		v->skip = "a device mapping (VM_PFNMAP/VM_IO/VM_MIXEDMAP)";
	else if (v->vmflags & TV_SHADOW_STACK)
		v->skip = "a shadow stack";
	else if (!n)
		v->kind = v->perms[3] == 's' ? TK_SHARED_ANON : TK_ANON;
	else if (!strcmp(n, "[heap]"))
		v->kind = TK_HEAP;
	else if (!strcmp(n, "[stack]"))
		v->kind = TK_STACK;
	else if (starts(n, "[anon:"))
		v->kind = TK_ANON;
	else if (starts(n, "[anon_shmem:"))
		v->kind = v->offset ? TK_SHMEM : TK_SHARED_ANON;
	else if (!strcmp(n, "/dev/zero (deleted)") || starts(n, "/dev/zero"))
		v->kind = v->offset || v->perms[3] != 's' ? TK_SHMEM : TK_SHARED_ANON;
	else if (starts(n, "/SYSV") || starts(n, "/memfd:") || on_tmpfs(n))
		v->kind = TK_SHMEM;
	else if (n[0] == '/')
		v->kind = TK_FILE;
	else
		v->skip = "not a file (anon_inode:, socket:, ...)";
	if (v->skip)
		v->kind = TK_SKIP;
}

int twin_snapshot_classify(struct twin_snapshot *s, char *err, size_t errlen)
{
	s->skipped = 0;
	for (size_t i = 0; i < s->nr; i++) {
		struct twin_vma *v = &s->vmas[i];

		classify_one(v);
		if (v->kind == TK_SKIP) {
			s->skipped++;
		} else if (v->kind == TK_FILE || v->kind == TK_SHMEM) {
			long f = file_of(s, v, v->kind == TK_SHMEM);

			if (f < 0) {
				set_err(err, errlen, "out of memory");
				return -ENOMEM;
			}
			v->file = (unsigned int)f;
		}
	}
	/* A file we could not stat is as large as what is mapped of it. */
	for (size_t i = 0; i < s->nr; i++) {
		struct twin_vma *v = &s->vmas[i];
		struct twin_file *f;

		if (v->kind != TK_FILE && v->kind != TK_SHMEM)
			continue;
		f = &s->files[v->file];
		if (!f->stat_size) {
			unsigned long ext = v->offset + (v->end - v->start);

			if (ext > f->size)
				f->size = ext;
		}
	}
	return 0;
}

/* ---- the process ---- */

/*
 * The state letter and start time (clock ticks since boot) of @pid.
 * Return: 0, or -ESRCH if there is no such process.
 */
static int proc_stat(pid_t pid, char *state, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -ESRCH;
	*state = p[2];
	/* Field 22; after ") " come field 3 (state) and on. */
	p += 2;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	*start = p ? strtoull(p, NULL, 10) : 0;
	return 0;
}

static void read_comm(struct twin_snapshot *s)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)s->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(s->comm, sizeof(s->comm), f))
		s->comm[strcspn(s->comm, "\n")] = '\0';
	fclose(f);
}

static int gone(struct twin_snapshot *s, unsigned long long start0, char *err, size_t errlen,
		const char *when)
{
	unsigned long long start;
	char state;

	if (proc_stat(s->pid, &state, &start) || state == 'Z' || state == 'X' || start != start0) {
		set_err(err, errlen, "process %d exited %s (ESRCH): no twin", (int)s->pid, when);
		return TWIN_EXITED;
	}
	return 0;
}

int twin_snapshot_read(pid_t pid, struct twin_snapshot **out, char *err, size_t errlen)
{
	struct twin_snapshot *s;
	unsigned long long start0;
	uint64_t zero_pfn, *buf = NULL;
	char path[64], state;
	FILE *f;
	int fd = -1, ret;

	ret = proc_stat(pid, &state, &start0);
	if (ret || state == 'Z' || state == 'X') {
		set_err(err, errlen, "no process %d (ESRCH)", (int)pid);
		return -ESRCH;
	}
	s = vml_zalloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->pid = pid;
	read_comm(s);
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		goto open_failed;
	}
	ret = smaps_parse(f, s, err, errlen, true);
	if (ret == -ESRCH) {
		set_err(err, errlen, "process %d exited while its smaps was read (ESRCH): no twin",
			(int)pid);
		ret = TWIN_EXITED;
	}
	fclose(f);
	if (!ret && !s->nr) {
		/* A kernel thread's smaps is empty; so is an exited process's. */
		ret = gone(s, start0, err, errlen, "while it was read");
		if (!ret) {
			set_err(err, errlen, "process %d has no address space (a kernel thread): "
				"nothing to twin (EINVAL)", (int)pid);
			ret = -EINVAL;
		}
	}
	if (ret)
		goto fail;
	test_stop("pagemap");
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (ret == -ESRCH || ret == -ENOENT) {
			set_err(err, errlen, "process %d exited while it was read (ESRCH): no twin",
				(int)pid);
			ret = TWIN_EXITED;
			goto fail;
		}
		goto open_failed;
	}
	ret = twin_snapshot_classify(s, err, errlen);
	if (!ret)	/* before pagemap: a layout too large for the range is refused at once */
		ret = twin_layout(s, SCRIPT_RANGE_LO, SCRIPT_RANGE_HI, err, errlen);
	if (ret)
		goto fail;
	zero_pfn = zero_pfn_of_self();
	buf = vml_malloc(PAGEMAP_CHUNK * sizeof(uint64_t));
	if (!buf) {
		ret = -ENOMEM;
		set_err(err, errlen, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < s->nr; i++) {
		struct twin_vma *v = &s->vmas[i];

		if (v->kind == TK_SKIP || (!v->kb[TF_RSS] && !v->kb[TF_SWAP]))
			continue;
		ret = read_pages(fd, v, zero_pfn, buf, &s->pfns);
		if (ret == -ESRCH) {
			set_err(err, errlen, "process %d exited while its pagemap was read (ESRCH): "
				"no twin", (int)pid);
			ret = TWIN_EXITED;
			goto fail;
		}
		if (ret) {
			set_err(err, errlen, "%s: %s", path, strerror(-ret));
			goto fail;
		}
		if (!zero_pfn)
			twin_infer_zero_pages(v);
		for (unsigned long p = 0; p < (v->end - v->start) / PAGE_SZ; p++)
			s->swapped_pages += (v->pages[p] & TP_STATE_MASK) == TP_SWAP;
	}
	/* A short smaps is only known by looking again: the same process, still alive? */
	ret = gone(s, start0, err, errlen, "while it was read");
	if (ret)
		goto fail;
	vml_free(buf);
	close(fd);
	*out = s;
	return 0;

open_failed:
	if ((ret == -EACCES || ret == -EPERM) && geteuid())
		set_err(err, errlen, "%s: %s (%s): reading another user's process needs root "
			"(CAP_SYS_PTRACE)", path, strerror(-ret), ret == -EACCES ? "EACCES" : "EPERM");
	else if (ret == -EACCES || ret == -EPERM)
		set_err(err, errlen, "%s: %s (%s): the kernel's ptrace check refused root too "
			"(a process that is not dumpable, or of an outer user namespace)", path,
			strerror(-ret), ret == -EACCES ? "EACCES" : "EPERM");
	else if (ret == -ENOENT || ret == -ESRCH)
		set_err(err, errlen, "no process %d (ESRCH)", (int)pid), ret = -ESRCH;
	else
		set_err(err, errlen, "%s: %s", path, strerror(-ret));
fail:
	if (fd >= 0)
		close(fd);
	vml_free(buf);
	twin_snapshot_free(s);
	return ret;
}

void twin_snapshot_free(struct twin_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr; i++) {
		vml_free(s->vmas[i].name);
		vml_free(s->vmas[i].pages);
	}
	vml_free(s->vmas);
	vml_free(s->files);
	vml_free(s);
}

/* ---- layout ---- */

#define GIB (1UL << 30)

int twin_layout(struct twin_snapshot *s, unsigned long lo, unsigned long hi, char *err,
		size_t errlen)
{
	unsigned long delta = 0, prev_end = 0, next = lo;
	bool first = true;

	for (size_t i = 0; i < s->nr; i++) {
		struct twin_vma *v = &s->vmas[i];

		if (v->kind == TK_SKIP)
			continue;
		if (first) {
			/* Its offset within its GiB, one GiB above @lo (lo is GiB-aligned). */
			v->tstart = lo + GIB + v->start % GIB;
			first = false;
		} else {
			unsigned long gap = v->start - prev_end;

			if (gap > GIB)
				gap -= (gap - GIB) / GIB * GIB;	/* now in [1, 2) GiB */
			v->tstart = next + gap;
		}
		delta = v->tstart - v->start;
		if (v->end + delta > hi || v->end + delta < v->tstart) {
			set_err(err, errlen, "the address space does not fit the script range "
				"0x%lx-0x%lx: VMA %zu (0x%lx-0x%lx) would end at 0x%lx", lo, hi, i,
				v->start, v->end, v->end + delta);
			return -E2BIG;
		}
		prev_end = v->end;
		next = v->end + delta;
	}
	return 0;
}
