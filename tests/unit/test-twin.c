// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-twin - src/twin/ on hand-made smaps text and pagemap entries: the
 * parser (fields, VmFlags, names with spaces, text that is not smaps), the
 * pagemap classes, the kinds, the layout (gaps kept, large ones shrunk,
 * offsets within a GiB kept, too large refused), what the script keeps
 * apart (a staged anonymous VMA, an aliased file) and how it coalesces runs,
 * and the comparison (the same, a field off, a VMA missing). No process read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "script/script.h"
#include "tap.h"
#include "twin/twin.h"

#define GIB (1UL << 30)

static const char smaps[] =
	"55d000000000-55d000002000 r--p 00000000 fd:01 1234                       /usr/bin/prog\n"
	"Size:                  8 kB\n"
	"Rss:                   8 kB\n"
	"Pss:                   4 kB\n"
	"Shared_Clean:          8 kB\n"
	"Anonymous:             0 kB\n"
	"THPeligible:           0\n"
	"VmFlags: rd mr mw me \n"
	"55d000002000-55d000004000 r--p 00002000 fd:01 1234                       /usr/bin/prog\n"
	"Size:                  8 kB\n"
	"Rss:                   4 kB\n"
	"Anonymous:             4 kB\n"
	"VmFlags: rd mr mw me ac\n"
	"55d000100000-55d000300000 rw-p 00000000 00:00 0                          [heap]\n"
	"Size:               2048 kB\n"
	"Rss:                  12 kB\n"
	"Anonymous:            12 kB\n"
	"Locked:               12 kB\n"
	"VmFlags: rd wr mr mw me ac lo hg\n"
	"55d000300000-55d000301000 rw-p 00000000 00:00 0                          [anon:my # name]\n"
	"Size:                  4 kB\n"
	"VmFlags: rd wr mr mw me ac\n"
	"7f0000000000-7f0000001000 rw-s 00000000 00:01 77                         /dev/zero (deleted)\n"
	"Size:                  4 kB\n"
	"VmFlags: rd wr sh mr mw me ms\n"
	"7f0000001000-7f0000002000 rw-s 00000000 00:01 78                         /SYSV00000000 (deleted)\n"
	"VmFlags: rd wr sh mr mw me ms\n"
	"7f0000002000-7f0000003000 rw-p 00000000 00:00 0 \n"
	"VmFlags: rd wr mr mw me ac\n"
	"7f0000003000-7f0000004000 rw-p 00000000 00:00 0 \n"
	"VmFlags: rd wr mr mw me ac\n"
	"7f0000400000-7f0000600000 rw-p 00000000 00:0f 99                         /anon_hugepage (deleted)\n"
	"VmFlags: rd wr mr mw me de ht\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"VmFlags: rd wr mr mw me gd ac\n"
	"7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0                          [vdso]\n"
	"VmFlags: rd ex mr mw me de\n";

static struct twin_snapshot *parse(const char *text, int *ret, char *err, size_t errlen)
{
	struct twin_snapshot *s = calloc(1, sizeof(*s));
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	*ret = twin_smaps_parse(f, s, err, errlen);
	fclose(f);
	return s;
}

static void test_parse(void)
{
	char err[160] = "";
	int ret;
	struct twin_snapshot *s = parse(smaps, &ret, err, sizeof(err));

	is_int(ret, 0, "smaps: parsed (%s)", err);
	is_int(s->nr, 11, "smaps: every record");
	is_hex(s->vmas[1].start, 0x55d000002000UL, "a record's start");
	is_int(s->vmas[1].offset, 0x2000, "its offset");
	is_int(s->vmas[0].kb[TF_PSS], 4, "a field (Pss)");
	is_int(s->vmas[1].kb[TF_ANONYMOUS], 4, "another (Anonymous)");
	is_int(s->vmas[2].vmflags & (TV_LOCKED | TV_HUGEPAGE), TV_LOCKED | TV_HUGEPAGE,
	       "VmFlags lo and hg");
	is_str(s->vmas[3].name, "[anon:my # name]", "a name with spaces, kept whole");
	is_int(s->vmas[4].vmflags & TV_SHARED, TV_SHARED, "VmFlags sh");
	ok(s->vmas[7].name == NULL, "no name after the inode: none");
	twin_snapshot_free(s);

	s = parse("55d000000000-55d000002000 r--p 00000000 fd:01 1 /x\nnot smaps at all\n", &ret,
		  err, sizeof(err));
	ok(ret == -EINVAL && strstr(err, "line 2"), "a line that is not smaps: EINVAL at its line (%s)",
	   err);
	twin_snapshot_free(s);
	s = parse("Rss: 4 kB\n", &ret, err, sizeof(err));
	is_int(ret, -EINVAL, "a field before any VMA: EINVAL");
	twin_snapshot_free(s);
	s = parse("2000-3000 r--p 00000000 00:00 0\n1000-2000 r--p 00000000 00:00 0\n", &ret, err,
		  sizeof(err));
	is_int(ret, -EINVAL, "VMAs out of order: EINVAL");
	twin_snapshot_free(s);
}

static void test_pagemap(void)
{
	const uint64_t P = 1ULL << 63, S = 1ULL << 62, F = 1ULL << 61, X = 1ULL << 56;
	uint64_t e[6] = { 0, P | X | 1234, P | F | 99, P | 7, S | 5, P | F | 7 };
	unsigned char pages[6];
	struct twin_vma v = { .start = 0x1000, .end = 0x5000 };

	twin_pagemap_classify(e, 6, 7, pages);
	is_int(pages[0], TP_NONE, "pagemap: neither present nor swapped");
	is_int(pages[1], TP_ANON, "present, not a file page: anonymous");
	is_int(pages[2], TP_FILE, "present, bit 61: a page-cache page");
	is_int(pages[3], TP_ZERO, "present at the zero page's frame: the zero page");
	is_int(pages[4], TP_SWAP, "bit 62: swapped");
	is_int(pages[5], TP_FILE, "a file page at that frame is still a file page");
	twin_pagemap_classify(e, 6, 0, pages);
	is_int(pages[3], TP_ANON | TP_NOT_EXCL,
	       "frame numbers hidden: anonymous, not mapped exclusively (a candidate)");
	is_int(pages[1], TP_ANON, "mapped exclusively: written");

	/* Four pages: three anonymous present, one of them not exclusive; Rss 8 kB. */
	v.pages = (unsigned char[4]){ TP_ANON, TP_ANON | TP_NOT_EXCL, TP_ANON, TP_NONE };
	v.kb[TF_RSS] = 8;
	is_int(twin_infer_zero_pages(&v), 1, "one present page beyond Rss, one candidate: a zero page");
	is_int(v.pages[1], TP_ZERO, "and it is the candidate");
	v.pages = (unsigned char[4]){ TP_ANON | TP_NOT_EXCL, TP_ANON | TP_NOT_EXCL, TP_ANON, 0 };
	is_int(twin_infer_zero_pages(&v), 0, "two candidates for one: not told apart, none changed");
	is_int(v.pages[0], TP_ANON | TP_NOT_EXCL, "the page still written");
	v.kb[TF_RSS] = 12;
	v.pages = (unsigned char[4]){ TP_ANON | TP_NOT_EXCL, TP_ANON, TP_ANON, 0 };
	is_int(twin_infer_zero_pages(&v), 0, "Rss counts every present page: no zero page");
}

static void test_classify_layout(void)
{
	char err[200] = "";
	int ret;
	struct twin_snapshot *s = parse(smaps, &ret, err, sizeof(err));
	static const enum twin_kind kinds[] = {
		TK_FILE, TK_FILE, TK_HEAP, TK_ANON, TK_SHARED_ANON, TK_SHMEM, TK_ANON, TK_ANON,
		TK_SKIP, TK_STACK, TK_SKIP,
	};
	bool all = true;

	is_int(twin_snapshot_classify(s, err, sizeof(err)), 0, "classify");
	for (size_t i = 0; i < s->nr; i++)
		if (s->vmas[i].kind != kinds[i]) {
			all = false;
			printf("#   VMA %zu: kind %d, want %d\n", i, s->vmas[i].kind, kinds[i]);
		}
	ok(all, "kinds: file, heap, anon, shared anon, SysV shm, hugetlb and [vdso] skipped, stack");
	is_int(s->skipped, 2, "two skipped");
	ok(s->vmas[8].skip && strstr(s->vmas[8].skip, "hugetlb"), "hugetlb says why");
	is_int(s->nr_files, 2, "two files: the program's, and the SysV segment");
	is_int(s->files[s->vmas[5].file].size, 4096, "a file it cannot stat: the extent mapped");

	is_int(twin_layout(s, SCRIPT_RANGE_LO, SCRIPT_RANGE_HI, err, sizeof(err)), 0, "layout");
	is_hex(s->vmas[0].tstart % GIB, 0x55d000000000UL % GIB, "the first keeps its offset in its GiB");
	is_hex(s->vmas[2].tstart - s->vmas[0].tstart, 0x100000, "a gap under 1 GiB kept");
	ok(s->vmas[4].tstart - (s->vmas[3].tstart + 0x1000) >= GIB &&
	   s->vmas[4].tstart - (s->vmas[3].tstart + 0x1000) < 2 * GIB,
	   "a gap of terabytes shrunk to 1-2 GiB");
	is_hex(s->vmas[4].tstart % GIB, 0x7f0000000000UL % GIB, "and the offset in the GiB kept");
	ok(s->vmas[0].tstart >= SCRIPT_RANGE_LO && s->vmas[9].tstart + 0x21000 <= SCRIPT_RANGE_HI,
	   "all in the script range");
	ret = twin_layout(s, SCRIPT_RANGE_LO, SCRIPT_RANGE_LO + 2 * GIB, err, sizeof(err));
	ok(ret == -E2BIG && strstr(err, "does not fit"), "too small a range: E2BIG (%s)", err);
	twin_snapshot_free(s);
}

static void test_script(void)
{
	char err[200] = "", *text = NULL, *diff_text = NULL;
	size_t len = 0;
	int ret;
	struct twin_snapshot *s = parse(smaps, &ret, err, sizeof(err));
	FILE *f;
	struct twin_cmp c;
	struct script *sc;

	twin_snapshot_classify(s, err, sizeof(err));
	twin_layout(s, SCRIPT_RANGE_LO, SCRIPT_RANGE_HI, err, sizeof(err));
	/* The heap: pages 0-1 written, 2 none, 3 written; the second file page copied. */
	s->vmas[2].pages = calloc(512, 1);
	s->vmas[2].pages[0] = s->vmas[2].pages[1] = s->vmas[2].pages[3] = TP_ANON;
	s->vmas[2].pages[5] = s->vmas[2].pages[6] = TP_SWAP;
	s->swapped_pages = 2;
	s->vmas[1].pages = calloc(2, 1);
	s->vmas[1].pages[0] = TP_ANON;
	s->vmas[1].pages[1] = TP_FILE;
	f = open_memstream(&text, &len);
	is_int(twin_script_write(s, f), 0, "script written");
	fclose(f);
	ok(strstr(text, "file f0 0x4000\n") && strstr(text, "file f0b 0x4000\n"),
	   "the program's file and its alias declared");
	ok(strstr(text, "file=f0b@0x2000"), "the second of two adjacent pieces maps the alias");
	ok(strstr(text, "mremap ") && s->vmas[7].staged,
	   "the second of two adjacent anonymous VMAs is made apart and moved into place");
	ok(strstr(text, "touch 0x") && strstr(text, " 0x2000 write\n"),
	   "written pages 0-1 of the heap: one touch of 8K");
	ok(strstr(text, "mlock ") && strstr(text, "madvise ") && strstr(text, " hugepage\n"),
	   "the locked heap locked, its hg advised");
	ok(strstr(text, "name 0x") && strstr(text, " my _ name\n"),
	   "a # in a name becomes _ (it would start a comment)");
	ok(strstr(text, "touch 0x") && strstr(text, " 0x1000 read\n") &&
	   strstr(text, "mprotect ") && strstr(text, " r--\n"),
	   "a copied page of a read-only file mapping: written while writable, then r--");
	ok(strstr(text, "# skipped: 7ffd00100000-7ffd00102000 r-xp [vdso]"), "[vdso] left out, said");
	ok(!strncmp(strstr(text, "\nswap ") ?: "", "\nswap 64M\n", 10),
	   "swapped pages: a swap directive, before the files");
	ok(strstr(text, "\nswap ") < strstr(text, "\nfile "), "(before the first file)");
	{
		char want[128];

		snprintf(want, sizeof(want), "touch 0x%lx 0x2000 write\n",
			 s->vmas[2].tstart + 5 * 4096);
		ok(strstr(text, want), "the swapped pages written first");
		snprintf(want, sizeof(want), "madvise 0x%lx 0x2000 pageout\n",
			 s->vmas[2].tstart + 5 * 4096);
		ok(strstr(text, want), "then paged out");
	}
	ret = script_parse_string("twin", text, &sc, err, sizeof(err));
	is_int(ret, 0, "the script parses (%s)", err);
	if (!ret)
		script_free(sc);

	/* The comparison: the original's own records moved to the twin's addresses. */
	f = open_memstream(&diff_text, &len);
	for (size_t i = 0; i < s->nr; i++) {
		const struct twin_vma *v = &s->vmas[i];
		const char *name = v->kind == TK_FILE || v->kind == TK_SHMEM ? "/tmp/x" :
				   v->kind == TK_HEAP || v->kind == TK_STACK ? "" :
				   v->name ? v->name : "";

		if (v->kind == TK_SKIP)
			continue;
		fprintf(f, "%lx-%lx %s %08lx 00:00 0 %s\nSize: %lu kB\nRss: %lu kB\n"
			"Anonymous: %lu kB\nLocked: %lu kB\nVmFlags: rd\n", v->tstart,
			twin_addr(v, v->end), v->perms, v->offset, name, v->kb[TF_SIZE],
			v->kb[TF_RSS] + (i == 2), v->kb[TF_ANONYMOUS], v->kb[TF_LOCKED]);
	}
	fclose(f);
	is_int(twin_compare(s, diff_text, &c), 0, "compare");
	is_int(c.vmas, 9, "compare: the nine VMAs made");
	is_int(c.maps_same, 9, "maps the same on all");
	is_int(c.missing + c.extra, 0, "none missing or extra");
	is_int(c.f[TF_ANONYMOUS].same, 9, "Anonymous the same on all");
	is_int(c.f[TF_RSS].same, 8, "Rss off on the one VMA changed");
	is_int(c.f[TF_RSS].max_diff_kb, 1, "by 1 kB");
	ok(strstr(c.first_field_diff, "Rss 12 kB in the original, 13 kB"), "and said: %s",
	   c.first_field_diff);
	/* One VMA gone from the twin. */
	{
		char *cut = strdup(diff_text), *p = strstr(cut, "\n"), *q;

		q = strstr(p + 1, "VmFlags: rd\n");	/* the end of the first record */
		memmove(cut, q + strlen("VmFlags: rd\n"), strlen(q + strlen("VmFlags: rd\n")) + 1);
		is_int(twin_compare(s, cut, &c), 0, "compare without the first VMA");
		is_int(c.missing, 1, "one missing, found");
		free(cut);
	}
	free(diff_text);
	free(text);
	twin_snapshot_free(s);
}

int main(void)
{
	test_parse();
	test_pagemap();
	test_classify_layout();
	test_script();
	return tap_done();
}
