// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * write.c - the op script that rebuilds a snapshot (docs/twin.md).
 *
 * Each VMA is made whole before the next, in address order:
 *
 *   1. mmap at its twin address, with the protection it needs while its
 *      pages are made (its own plus w where a page must be written, r where
 *      one must be read), and its kind's flags;
 *   2. touch its pages, coalesced into runs: `write` for anonymous pages
 *      (also the written copies in a private file mapping, and the pages
 *      of a shared writable mapping that smaps shows mostly dirty), `read`
 *      for page-cache pages and the zero page;
 *   3. madvise collapse the PMD blocks that AnonHugePages says are huge;
 *   4. madvise dontneed every run that must stay empty where a read may
 *      have mapped more than was touched: the twin's files are wholly in the
 *      page cache, so fault-around maps up to 16 pages around each read;
 *   5. madvise pageout the swapped runs (after writing them);
 *   6. mprotect to its own protection, the advices its VmFlags show
 *      (hugepage, nohugepage, dontfork, wipeonfork), its name, mlock.
 *
 * and mseal of the sealed VMAs comes last.
 *
 * Adjacent VMAs must stay two. The original's kernel kept them apart for a
 * reason the maps do not show (different anon_vmas, a move, two opens of a
 * file); the twin's kernel would merge two that look alike. So a VMA that
 * could merge with the one before it is kept apart on purpose:
 *   - anonymous: it is made at a staging address, written once (which gives
 *     it an anon_vma and fixes its page offset there), and moved into place
 *     with mremap: an anonymous VMA's vm_pgoff is its first address's page,
 *     so the moved one's does not continue its neighbour's and never merges;
 *   - file: it maps a second open of its twin file (an alias, `file NAMEb`):
 *     the kernel merges file VMAs only of one open file.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "script/script.h"
#include "twin/twin.h"

#define PAGE_SZ 4096UL
#define HPAGE_PAGES 512UL
#define GIB (1UL << 30)

/* The flags of an mmap for @v's kind (the placement is the script's default). */
static void map_flags(const struct twin_vma *v, char *buf, size_t len)
{
	/* 's' is VM_MAYSHARE; VmFlags' sh (VM_SHARED) is missing on a read-only open. */
	bool shared = v->perms[3] == 's';

	switch (v->kind) {
	case TK_SHARED_ANON:
		snprintf(buf, len, "shared,anon");
		break;
	case TK_STACK:
		snprintf(buf, len, "private,anon,growsdown");
		break;
	case TK_FILE:
	case TK_SHMEM:
		snprintf(buf, len, "%s", shared ? "shared" : "private");
		break;
	default:
		/* MAP_DROPPABLE is a mapping type of its own, in place of private. */
		snprintf(buf, len, "%s,anon", (v->vmflags & TV_DROPPABLE) ? "droppable" : "private");
		break;
	}
	if (v->vmflags & TV_NORESERVE)
		strncat(buf, ",noreserve", len - strlen(buf) - 1);
}

static bool is_anon_kind(enum twin_kind k)
{
	return k == TK_ANON || k == TK_HEAP || k == TK_STACK;
}

/* The name the twin gives @v (prctl PR_SET_VMA_ANON_NAME), or NULL. */
static const char *twin_name(const struct twin_vma *v, char *buf, size_t len)
{
	const char *n = NULL;
	size_t l;

	/*
	 * [heap] and [stack] stay unnamed: a name needs CONFIG_ANON_VMA_NAME,
	 * which many kernels lack (prctl then fails with EINVAL), and an
	 * [anon:NAME] in the original says its kernel has it.
	 */
	if (v->name && v->kind == TK_ANON && !strncmp(v->name, "[anon:", 6))
		n = v->name + 6;
	else if (v->name && v->kind == TK_SHARED_ANON && !strncmp(v->name, "[anon_shmem:", 12))
		n = v->name + 12;
	if (!n)
		return NULL;
	l = strlen(n);
	if (l && n[l - 1] == ']')
		l--;
	if (l >= len)
		l = len - 1;
	memcpy(buf, n, l);
	buf[l] = '\0';
	/* `#` starts a comment even inside a name: the one character a twin's name loses. */
	for (char *p = buf; *p; p++)
		if (*p == '#')
			*p = '_';
	/*
	 * The kernel takes no empty name and only printable characters but
	 * [ ] \\ $ ` (anon_vma_name_valid); a script line drops edge blanks.
	 * Text that could not come from a kernel gets no name.
	 */
	if (!l || buf[0] == ' ' || buf[l - 1] == ' ')
		return NULL;
	for (const char *p = buf; *p; p++)
		if (!isprint((unsigned char)*p) || strchr("[]\\$`", *p))
			return NULL;
	/* A last word `expect=...` would be read as the op's expectation. */
	{
		char *last = strrchr(buf, ' ');

		last = last ? last + 1 : buf;
		if (!strncmp(last, "expect=", 7))
			last[6] = '_';
	}
	return buf;
}

/* The VmFlags that make two VMAs unmergeable, as the twin sets them. */
#define MERGE_FLAGS (TV_SHARED | TV_GROWSDOWN | TV_LOCKED | TV_LOCKONFAULT | TV_DONTCOPY | \
		     TV_WIPEONFORK | TV_HUGEPAGE | TV_NOHUGEPAGE | TV_NORESERVE | TV_SEALED | \
		     TV_DROPPABLE)

/* Would the twin's kernel merge @b into @a (adjacent) if nothing kept them apart? */
static bool would_merge(const struct twin_vma *a, const struct twin_vma *b)
{
	char na[128], nb[128];
	const char *an, *bn;

	if (a->kind == TK_SKIP || b->kind == TK_SKIP || a->end != b->start)
		return false;
	if (strcmp(a->perms, b->perms) || (a->vmflags & MERGE_FLAGS) != (b->vmflags & MERGE_FLAGS))
		return false;
	an = twin_name(a, na, sizeof(na));
	bn = twin_name(b, nb, sizeof(nb));
	if ((an || bn) && (!an || !bn || strcmp(an, bn)))
		return false;
	if (is_anon_kind(a->kind) && is_anon_kind(b->kind))
		return true;
	if ((a->kind == TK_FILE || a->kind == TK_SHMEM) && a->kind == b->kind && a->file == b->file &&
	    a->alias == b->alias)
		return b->offset == a->offset + (a->end - a->start);
	return false;	/* a shared anonymous mapping is a new object each time */
}

/* What a page of @v needs: 0 nothing, 'r' a read, 'w' a write. */
static char page_access(const struct twin_vma *v, unsigned char page)
{
	switch (page & TP_STATE_MASK) {
	case TP_ANON:
	case TP_SWAP:
		return 'w';
	case TP_ZERO:
		return 'r';
	case TP_FILE:
		/*
		 * A page-cache page of a shared writable mapping was written or only
		 * read; pagemap cannot tell (soft-dirty is off on these hosts), smaps
		 * counts: written when at least half its resident pages are dirty.
		 */
		if (v->perms[3] == 's' && v->perms[1] == 'w')
			return 2 * (v->kb[TF_SHARED_DIRTY] + v->kb[TF_PRIVATE_DIRTY]) >= v->kb[TF_RSS] ?
			       'w' : 'r';
		return is_anon_kind(v->kind) ? 'w' : 'r';
	default:
		return 0;
	}
}

static unsigned long npages(const struct twin_vma *v)
{
	return (v->end - v->start) / PAGE_SZ;
}

/* The staging address: above everything the layout placed, GiB-aligned. */
static unsigned long staging_base(const struct twin_snapshot *s)
{
	unsigned long top = SCRIPT_RANGE_LO;

	for (size_t i = 0; i < s->nr; i++)
		if (s->vmas[i].kind != TK_SKIP)
			top = twin_addr(&s->vmas[i], s->vmas[i].end);
	return (top + 2 * GIB) & ~(GIB - 1);
}

/* `touch` runs of one access; @ops counts lines. */
static void write_touches(FILE *f, const struct twin_vma *v, unsigned long *ops)
{
	unsigned long n = npages(v);

	for (unsigned long p = 0; p < n;) {
		char a = page_access(v, v->pages[p]);
		unsigned long q = p + 1;

		if (!a) {
			p++;
			continue;
		}
		while (q < n && page_access(v, v->pages[q]) == a)
			q++;
		fprintf(f, "touch 0x%lx 0x%lx %s\n", v->tstart + p * PAGE_SZ, (q - p) * PAGE_SZ,
			a == 'w' ? "write" : "read");
		(*ops)++;
		p = q;
	}
}

/* The PMD blocks to collapse: AnonHugePages / 2 MiB of them, huge-marked first. */
static void write_collapses(FILE *f, const struct twin_vma *v, unsigned long *ops)
{
	unsigned long want = v->kb[TF_ANON_HUGE] / 2048, n = npages(v), done = 0;
	unsigned long first = (HPAGE_PAGES - (v->tstart / PAGE_SZ) % HPAGE_PAGES) % HPAGE_PAGES;

	if (!want || (v->vmflags & TV_NOHUGEPAGE) || !v->pages)
		return;
	for (int pass = 0; pass < 2 && done < want; pass++) {
		for (unsigned long b = first; b + HPAGE_PAGES <= n && done < want; b += HPAGE_PAGES) {
			bool all = true;

			if (pass == 0 && !(v->pages[b] & TP_HUGE_HEAD))
				continue;
			if (pass == 1 && (v->pages[b] & TP_HUGE_HEAD))
				continue;	/* the first pass took it */
			for (unsigned long j = 0; j < HPAGE_PAGES && all; j++)
				all = (v->pages[b + j] & TP_STATE_MASK) == TP_ANON;
			if (!all)
				continue;
			fprintf(f, "madvise 0x%lx 2M collapse\n", v->tstart + b * PAGE_SZ);
			(*ops)++;
			done++;
		}
	}
}

/* `madvise ... @advice` for each run of pages whose state is (or, @empty, is not) kept. */
static void write_runs(FILE *f, const struct twin_vma *v, bool empty, enum twin_page state,
		       const char *advice, unsigned long *ops)
{
	unsigned long n = npages(v);

	if (!v->pages) {	/* nothing present: all of it one run, or none */
		if (empty) {
			fprintf(f, "madvise 0x%lx 0x%lx %s\n", v->tstart, n * PAGE_SZ, advice);
			(*ops)++;
		}
		return;
	}
	for (unsigned long p = 0; p < n;) {
		bool in = empty ? (!v->pages || !page_access(v, v->pages[p]))
				: (v->pages && (v->pages[p] & TP_STATE_MASK) == state);
		unsigned long q = p + 1;

		if (!in) {
			p++;
			continue;
		}
		while (q < n && (empty ? (!v->pages || !page_access(v, v->pages[q]))
				       : (v->pages && (v->pages[q] & TP_STATE_MASK) == state)))
			q++;
		fprintf(f, "madvise 0x%lx 0x%lx %s\n", v->tstart + p * PAGE_SZ, (q - p) * PAGE_SZ,
			advice);
		(*ops)++;
		p = q;
	}
}

static void file_name(const struct twin_vma *v, char *buf, size_t len)
{
	snprintf(buf, len, "f%u%s", v->file, v->alias ? "b" : "");
}

static void write_vma(FILE *f, struct twin_vma *v, unsigned long stage, unsigned long *ops)
{
	unsigned long len = v->end - v->start, n = npages(v);
	bool need_r = false, need_w = false, reads_file = false;
	char prot[4], flags[64], fname[32], nbuf[128];
	const char *name;

	fprintf(f, "# %lx-%lx %s %08lx %s  Rss %lu kB\n", v->start, v->end, v->perms, v->offset,
		v->name ? v->name : "", v->kb[TF_RSS]);
	for (unsigned long p = 0; v->pages && p < n; p++) {
		char a = page_access(v, v->pages[p]);

		need_r |= a == 'r';
		need_w |= a == 'w';
		reads_file |= a == 'r' && (v->pages[p] & TP_STATE_MASK) == TP_FILE;
	}
	if (v->staged)
		need_w = true;	/* the one write that pins it at the staging address */
	snprintf(prot, sizeof(prot), "%c%c%c", v->perms[0] == 'r' || need_r || need_w ? 'r' : '-',
		 v->perms[1] == 'w' || need_w ? 'w' : '-', v->perms[2]);
	map_flags(v, flags, sizeof(flags));
	fname[0] = '\0';
	if (v->kind == TK_FILE || v->kind == TK_SHMEM)
		file_name(v, fname, sizeof(fname));
	if (v->staged) {
		fprintf(f, "mmap 0x%lx 0x%lx %s %s\n", stage, len, prot, flags);
		fprintf(f, "touch 0x%lx 4K write\n", stage);
		fprintf(f, "mremap 0x%lx 0x%lx 0x%lx maymove to=0x%lx\n", stage, len, len, v->tstart);
		*ops += 3;
	} else if (fname[0]) {
		fprintf(f, "mmap 0x%lx 0x%lx %s %s file=%s@0x%lx\n", v->tstart, len, prot, flags,
			fname, v->offset);
		(*ops)++;
	} else {
		fprintf(f, "mmap 0x%lx 0x%lx %s %s\n", v->tstart, len, prot, flags);
		(*ops)++;
	}
	if (v->pages) {
		write_touches(f, v, ops);
		write_collapses(f, v, ops);
	}
	if (reads_file || v->staged)
		write_runs(f, v, true, TP_NONE, "dontneed", ops);
	if (v->pages)
		write_runs(f, v, false, TP_SWAP, "pageout", ops);
	if (strncmp(prot, v->perms, 3)) {
		fprintf(f, "mprotect 0x%lx 0x%lx %.3s\n", v->tstart, len, v->perms);
		(*ops)++;
	}
	if (v->vmflags & TV_HUGEPAGE)
		fprintf(f, "madvise 0x%lx 0x%lx hugepage\n", v->tstart, len), (*ops)++;
	if (v->vmflags & TV_NOHUGEPAGE)
		fprintf(f, "madvise 0x%lx 0x%lx nohugepage\n", v->tstart, len), (*ops)++;
	if (v->vmflags & TV_DONTCOPY)
		fprintf(f, "madvise 0x%lx 0x%lx dontfork\n", v->tstart, len), (*ops)++;
	if (v->vmflags & TV_WIPEONFORK)
		fprintf(f, "madvise 0x%lx 0x%lx wipeonfork\n", v->tstart, len), (*ops)++;
	name = twin_name(v, nbuf, sizeof(nbuf));
	if (name)
		fprintf(f, "name 0x%lx 0x%lx %s\n", v->tstart, len, name), (*ops)++;
	/*
	 * mlock of a PROT_NONE VMA locks it (VmFlags lo) and then fails with
	 * ENOMEM: populating it faults (mm/gup.c check_vma_flags). mlockall,
	 * which the original may have used, ignores that; a script says it.
	 */
	if (v->vmflags & TV_LOCKED)
		fprintf(f, "mlock 0x%lx 0x%lx%s%s\n", v->tstart, len,
			(v->vmflags & TV_LOCKONFAULT) ? " onfault" : "",
			!strncmp(v->perms, "---", 3) && !(v->vmflags & TV_LOCKONFAULT) ?
			" expect=ENOMEM" : ""), (*ops)++;
}

int twin_script_write(struct twin_snapshot *s, FILE *f)
{
	unsigned long rss = 0, ops = 0, stage = staging_base(s), staged = 0, aliased = 0;
	struct twin_vma *prev = NULL;

	/* Decide what keeps adjacent VMAs apart before any line: files are declared first. */
	for (size_t i = 0; i < s->nr; i++) {
		struct twin_vma *v = &s->vmas[i];

		v->staged = false;
		v->alias = 0;
		if (v->kind == TK_SKIP) {
			prev = NULL;
			continue;
		}
		rss += v->kb[TF_RSS];
		if (prev && would_merge(prev, v)) {
			if (is_anon_kind(v->kind)) {
				v->staged = true;
				staged++;
			} else {
				v->alias = !prev->alias;
				s->files[v->file].aliased = true;
				aliased++;
			}
		}
		prev = v;
	}
	fprintf(f, "# vmalock twin of process %d (%s): %zu VMAs, %lu skipped; Rss %lu kB\n",
		(int)s->pid, s->comm, s->nr, s->skipped, rss);
	fprintf(f, "# Addresses: shifted by whole GiBs into the script range, gaps over 1 GiB\n"
		   "# shrunk to 1-2 GiB (docs/twin.md). %lu VMAs made apart and moved into place,\n"
		   "# %lu mapped through a second open of their file: the kernel would merge them.\n",
		staged, aliased);
	if (!s->pfns)
		fprintf(f, "# pagemap hid page frame numbers: zero-page reads counted as writes,\n"
			   "# huge pages found by AnonHugePages alone.\n");
	for (size_t i = 0; i < s->nr; i++)
		if (s->vmas[i].kind == TK_SKIP)
			fprintf(f, "# skipped: %lx-%lx %s %s: %s\n", s->vmas[i].start, s->vmas[i].end,
				s->vmas[i].perms, s->vmas[i].name ? s->vmas[i].name : "",
				s->vmas[i].skip);
	if (s->swapped_pages) {
		unsigned long mb = (s->swapped_pages * PAGE_SZ >> 20) + 16;

		fprintf(f, "swap %luM\n", mb < 64 ? 64 : mb);
	}
	for (size_t i = 0; i < s->nr_files; i++) {
		const struct twin_file *tf = &s->files[i];

		fprintf(f, "file f%zu 0x%lx%s\n", i, tf->size, tf->shmem ? " shmem" : "");
		if (tf->aliased)
			fprintf(f, "file f%zub 0x%lx%s\n", i, tf->size, tf->shmem ? " shmem" : "");
	}
	for (size_t i = 0; i < s->nr; i++)
		if (s->vmas[i].kind != TK_SKIP)
			write_vma(f, &s->vmas[i], stage, &ops);
	for (size_t i = 0; i < s->nr; i++)
		if (s->vmas[i].kind != TK_SKIP && (s->vmas[i].vmflags & TV_SEALED))
			fprintf(f, "mseal 0x%lx 0x%lx\n", s->vmas[i].tstart,
				s->vmas[i].end - s->vmas[i].start);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
