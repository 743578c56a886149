// SPDX-License-Identifier: GPL-2.0-or-later
/* View post-processing: maps line parsing and formatting, cut, normalise, diff. */
#include <time.h>	/* tap.h uses clock_gettime without including it */

#include "tap.h"
#include "spaces/view.h"
#include "util/alloc.h"

static void test_maps_line(void)
{
	const char *anon = "100000000000-100000004000 rw-p 00000000 00:00 0 ";
	const char *named = "55d0c4a00000-55d0c4a21000 rw-p 00000000 00:00 0"
			    "                          [heap]";
	struct maps_line ml;
	char buf[256];
	int n;

	ok(maps_line_parse(anon, strlen(anon), &ml), "anon line parses");
	ok(ml.start == 0x100000000000UL && ml.end == 0x100000004000UL, "bounds");
	is_str(ml.perms, "rw-p", "perms");
	ok(ml.inode == 0 && ml.name_len == 0 && ml.prefix_len == strlen(anon), "no name");
	ok(maps_line_parse(named, strlen(named), &ml), "named line parses");
	ok(ml.name_off == 73 && ml.name_len == 6, "name at column 73");
	ok(!maps_line_parse("Size:                  4 kB", 27, &ml), "smaps field is not a header");
	ok(!maps_line_parse("100000000000 default anon=1", 27, &ml), "numa_maps line is not");

	n = maps_line_format(buf, sizeof(buf), 0x55d0c4a00000UL, 0x55d0c4a21000UL, "rw-p", 0,
			     0, 0, 0, "[heap]");
	ok(n == (int)strlen(named) && !strcmp(buf, named), "format pads the name to column 73");
	n = maps_line_format(buf, sizeof(buf), 0x1000, 0x2000, "r--p", 0, 0, 0, 0, NULL);
	is_str(buf, "00001000-00002000 r--p 00000000 00:00 0 ", "8-digit minimum, trailing space");
	n = maps_line_format(buf, sizeof(buf), 0xffffffffff600000UL, 0xffffffffff601000UL,
			     "--xp", 0x123456789abcdef0UL, 0xfe, 0x1ff, 18446744073709551615UL,
			     "n");
	is_str(buf, "ffffffffff600000-ffffffffff601000 --xp 123456789abcdef0 fe:1ff "
		    "18446744073709551615  n", "a prefix past column 72: one more space (seq_pad)");
	is_int(n, (int)strlen(buf), "format returns the length");
}

static void test_normalise(void)
{
	const char *in =
		"100000000000-100000004000 rw-p 00000000 00:00 0 \n"
		"100000010000-100000018000 r--p 00002000 fe:00 10952900                   "
		"/tmp/vmalock.BGNkwO/data\n"
		"100000020000-100000021000 rw-s 00000000 00:1a 7                          "
		"/dev/shm/vmalock.aaaaaa/shm\n"
		"Rss:                   4 kB\n";
	const char *want =
		"100000000000-100000004000 rw-p 00000000 00:00 0 \n"
		"100000010000-100000018000 r--p 00002000 00:00 0                          "
		"/tmp/vmalock.XXXXXX/data\n"
		"100000020000-100000021000 rw-s 00000000 00:00 0                          "
		"/dev/shm/vmalock.XXXXXX/shm\n"
		"Rss:                   4 kB\n";
	const char *subst[] = {
		"/tmp/vmalock.BGNkwO", "/tmp/vmalock.XXXXXX",
		"/dev/shm/vmalock.aaaaaa", "/dev/shm/vmalock.XXXXXX",
	};
	char *out = view_normalise(in, subst, 2);

	is_str(out, want, "dev/inode zeroed, name re-padded to column 73, dirs replaced");
	vml_free(out);
	out = view_normalise("", subst, 2);
	is_str(out, "", "empty text");
	vml_free(out);
}

static void test_cut(void)
{
	const char *maps =
		"0ffffffff000-100000001000 rw-p 00000000 00:00 0 \n"
		"100000002000-100000003000 rw-p 00000000 00:00 0 \n"
		"200000000000-200000001000 rw-p 00000000 00:00 0 \n"
		"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0"
		"                          [stack]\n";
	const char *smaps =
		"0fff00000000-0fff00001000 rw-p 00000000 00:00 0 \n"
		"Size:                  4 kB\n"
		"VmFlags: rd wr mr mw me ac \n"
		"100000002000-100000003000 rw-p 00000000 00:00 0 \n"
		"Size:                  4 kB\n"
		"VmFlags: rd wr mr mw me ac \n"
		"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
		"Size:                132 kB\n";
	const char *numa =
		"0fff00000000 default anon=1 dirty=1 N0=1 kernelpagesize_kB=4\n"
		"100000002000 default\n"
		"7ffc00000000 default stack anon=3 dirty=3 N0=3 kernelpagesize_kB=4\n";
	char *out;

	out = view_cut(VML_VIEW_MAPS, maps, 0x100000000000UL, 0x200000000000UL);
	is_str(out, "0ffffffff000-100000001000 rw-p 00000000 00:00 0 \n"
		    "100000002000-100000003000 rw-p 00000000 00:00 0 \n",
	       "maps: overlapping lines kept, [hi, ...) dropped");
	vml_free(out);
	out = view_cut(VML_VIEW_SMAPS, smaps, 0x100000000000UL, 0x200000000000UL);
	is_str(out, "100000002000-100000003000 rw-p 00000000 00:00 0 \n"
		    "Size:                  4 kB\n"
		    "VmFlags: rd wr mr mw me ac \n", "smaps: whole records");
	vml_free(out);
	out = view_cut(VML_VIEW_NUMA_MAPS, numa, 0x100000000000UL, 0x200000000000UL);
	is_str(out, "100000002000 default\n", "numa_maps: by start address");
	vml_free(out);
	out = view_cut(VML_VIEW_SMAPS_ROLLUP, smaps, 1, 2);
	is_str(out, smaps, "smaps_rollup is never cut");
	vml_free(out);

	ok(maps_range_unmapped(maps, 0x100000001000UL, 0x1000), "gap is unmapped");
	ok(!maps_range_unmapped(maps, 0x100000001000UL, 0x1001), "touching the next VMA is not");
	ok(!maps_range_unmapped(maps, 0x100000000000UL, 0x1000), "inside a VMA is not");
	ok(maps_range_unmapped(maps, 0x100000003000UL, 0x1000), "right after a VMA is");
	ok(!maps_range_unmapped(maps, 0x0UL, ~0UL), "everything is not");
}

static void test_diff(void)
{
	const char *a = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\no\np\n";
	const char *b = "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\no\np\nq\n";
	char *d;

	d = view_diff(a, a, "x", "y");
	is_str(d, "", "same text: empty diff");
	vml_free(d);
	d = view_diff(a, b, "x", "y");
	is_str(d, "--- x\n+++ y\n"
		  "@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n"
		  "@@ -14,3 +14,4 @@\n n\n o\n p\n+q\n", "two hunks, as GNU diff -u prints them");
	vml_free(d);
	d = view_diff("x\n", "", "x", "y");
	is_str(d, "--- x\n+++ y\n@@ -1 +0,0 @@\n-x\n", "all deleted");
	vml_free(d);
	d = view_diff("", "x\n", "x", "y");
	is_str(d, "--- x\n+++ y\n@@ -0,0 +1 @@\n+x\n", "all added");
	vml_free(d);
	d = view_diff("a\nb\nc\n", "z\na\nb\nc\n", "x", "y");
	is_str(d, "--- x\n+++ y\n@@ -1,3 +1,4 @@\n+z\n a\n b\n c\n", "insert at the start");
	vml_free(d);
	d = view_diff("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nB\nc\nd\ne\nf\ng\nH\n", "x", "y");
	is_str(d, "--- x\n+++ y\n@@ -1,8 +1,8 @@\n a\n-b\n+B\n c\n d\n e\n f\n g\n-h\n+H\n",
	       "changes 6 lines apart share a hunk");
	vml_free(d);
}

int main(void)
{
	test_maps_line();
	test_normalise();
	test_cut();
	test_diff();
	return tap_done();
}
