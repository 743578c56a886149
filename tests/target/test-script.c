// SPDX-License-Identifier: GPL-2.0-or-later
/* The op-script parser and printer: every op, every error class, round trips. */
#include <errno.h>
#include <sys/mman.h>

#include <time.h>	/* tap.h uses clock_gettime without including it */

#include "tap.h"
#include "target/script.h"
#include "util/alloc.h"

static struct script *parse(const char *text, char *err, size_t len)
{
	struct script *s = NULL;

	err[0] = '\0';
	if (script_parse_string("t.ops", text, &s, err, len))
		return NULL;
	return s;
}

static void test_numbers(void)
{
	unsigned long v;
	int prot, e;

	ok(!parse_size("4096", &v) && v == 4096, "decimal size");
	ok(!parse_size("0x1000", &v) && v == 4096, "hex size");
	ok(!parse_size("4K", &v) && v == 4096, "K suffix");
	ok(!parse_size("2M", &v) && v == 2 << 20, "M suffix");
	ok(!parse_size("1G", &v) && v == 1UL << 30, "G suffix");
	ok(!parse_size("0x10K", &v) && v == 16 << 10, "hex with suffix");
	ok(parse_size("", &v) == -EINVAL, "empty size rejected");
	ok(parse_size("K", &v) == -EINVAL, "bare suffix rejected");
	ok(parse_size("12q", &v) == -EINVAL, "junk rejected");
	ok(parse_size("-4", &v) == -EINVAL, "negative rejected");
	ok(parse_size("0x", &v) == -EINVAL, "bare 0x rejected");
	ok(parse_size("18446744073709551615", &v) == 0 && v == ~0UL, "largest value");
	ok(parse_size("18446744073709551616", &v) == -EINVAL, "overflow rejected");
	ok(parse_size("16777216T", &v) == -EINVAL, "suffix overflow rejected");
	ok(!parse_addr("0x100000000000", &v) && v == 0x100000000000UL, "address");
	ok(parse_addr("100000000000", &v) == -EINVAL, "address needs 0x");
	ok(parse_addr("0x1000K", &v) == -EINVAL, "no suffix on addresses");
	ok(!parse_prot("rw-", &prot) && prot == (PROT_READ | PROT_WRITE), "prot rw-");
	ok(!parse_prot("---", &prot) && prot == PROT_NONE, "prot ---");
	ok(!parse_prot("none", &prot) && prot == PROT_NONE, "prot none");
	ok(!parse_prot("rx", &prot) && prot == (PROT_READ | PROT_EXEC), "prot rx");
	ok(parse_prot("rr-", &prot) == -EINVAL, "prot with a repeat rejected");
	ok(parse_prot("rwq", &prot) == -EINVAL, "unknown prot letter rejected");
	ok(!errno_parse("EINVAL", &e) && e == -EINVAL, "errno name");
	ok(!errno_parse("0", &e) && e == 0, "errno 0");
	ok(!errno_parse("12", &e) && e == -12, "errno number");
	ok(errno_parse("EWHAT", &e) == -EINVAL, "unknown errno rejected");
}

static void test_ops(void)
{
	char err[256];
	struct script *s = parse(
		"# header\n"
		"\n"
		"file data 1M\n"
		"file shm 64K shmem   # a comment\n"
		"mmap 0x100000000000 16K rw- private,anon\n"
		"mmap 0x100000100000 8K r-- shared file=data@4K expect=EINVAL\n"
		"mmap 0x100000200000 4K rwx "
		"private,anon,populate,noreserve,locked,growsdown,fixed\n"
		"mmap 0x100000300000 4K --- shared,anon,noreplace\n"
		"mmap 0x100000400000 4K r-- private,anon,hint\n"
		"mmap 0x100000500000 4K r-- none\n"
		"munmap 0x100000000000 4K\n"
		"mprotect 0x100000001000 0x1000 r--\n"
		"mremap 0x100000000000 4K 8K maymove to=0x100000600000 dontunmap\n"
		"madvise 0x100000000000 4K dontneed\n"
		"madvise 0x100000000000 4K free expect=0\n"
		"touch 0x100000000000 8K write\n"
		"mlock 0x100000000000 4K\n"
		"munlock 0x100000000000 4K\n"
		"name 0x100000000000 4K my heap  name \n"
		"name 0x100000000000 4K - expect=EINVAL\n"
		"fork\n",
		err, sizeof(err));

	if (!ok(s != NULL, "a script with every op parses")) {
		tap_diag("%s", err);
		return;
	}
	is_int(s->nr_ops, 19, "19 ops");
	is_int(s->ops[0].kind, OP_FILE, "file op");
	is_str(s->ops[0].file, "data", "file name");
	is_int(s->ops[0].size, 1 << 20, "file size");
	ok(!s->ops[0].shmem && s->ops[1].shmem, "shmem flag");
	is_int(s->ops[2].line, 5, "line numbers count comments and blanks");
	is_int(s->ops[2].flags, MAP_PRIVATE | MAP_ANONYMOUS, "private,anon");
	is_int(s->ops[2].placement, OP_PLACE_AUTO, "default placement");
	ok(!s->ops[2].has_expect, "no expect");
	is_int(s->ops[3].flags, MAP_SHARED, "shared file mapping");
	is_str(s->ops[3].file, "data", "file=");
	is_int(s->ops[3].offset, 4096, "@offset");
	ok(s->ops[3].has_expect && s->ops[3].expect == -EINVAL, "expect=EINVAL");
	is_int(s->ops[4].flags, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_NORESERVE |
	       MAP_LOCKED | MAP_GROWSDOWN, "all MAP_ flags");
	is_int(s->ops[4].prot, PROT_READ | PROT_WRITE | PROT_EXEC, "rwx");
	is_int(s->ops[4].placement, OP_PLACE_FIXED, "fixed");
	is_int(s->ops[5].placement, OP_PLACE_NOREPLACE, "noreplace");
	is_int(s->ops[6].placement, OP_PLACE_HINT, "hint");
	is_int(s->ops[7].flags, 0, "flags none");
	is_int(s->ops[9].len, 4096, "hex length");
	is_int(s->ops[10].flags, MREMAP_MAYMOVE | MREMAP_FIXED | 4, "mremap flags");
	is_hex(s->ops[10].new_addr, 0x100000600000UL, "to=");
	is_int(s->ops[10].new_len, 8192, "new length");
	is_int(s->ops[11].advice, MADV_DONTNEED, "dontneed");
	ok(s->ops[12].advice == MADV_FREE && s->ops[12].has_expect && s->ops[12].expect == 0,
	   "free, expect=0");
	is_int(s->ops[13].access, OP_ACCESS_WRITE, "touch write");
	is_str(s->ops[16].name, "my heap  name", "name: rest of line, trimmed");
	ok(s->ops[17].name == NULL && s->ops[17].expect == -EINVAL, "name - clears, expect kept");
	is_int(s->ops[18].kind, OP_FORK, "fork");

	/* format_op round trip: the printed line parses to the same op */
	for (size_t i = 0; i < s->nr_ops; i++) {
		char line[512], text[2048];
		struct script *r;
		const struct op *a = &s->ops[i], *b;

		bool decl = a->kind != OP_FILE;	/* a file op declares itself */

		format_op(a, line, sizeof(line));
		snprintf(text, sizeof(text), "%s%s\n",
			 decl ? "file data 1M\nfile shm 64K shmem\n" : "", line);
		r = parse(text, err, sizeof(err));
		if (!ok(r && r->nr_ops == (decl ? 3u : 1u), "format_op line %zu parses: %s", i,
			line)) {
			tap_diag("%s", err);
			script_free(r);
			continue;
		}
		b = &r->ops[decl ? 2 : 0];
		ok(a->kind == b->kind && a->addr == b->addr && a->len == b->len &&
		   a->new_len == b->new_len && a->new_addr == b->new_addr && a->prot == b->prot &&
		   a->flags == b->flags && a->placement == b->placement && a->advice == b->advice &&
		   a->access == b->access && a->offset == b->offset && a->size == b->size &&
		   a->shmem == b->shmem && a->has_expect == b->has_expect &&
		   a->expect == b->expect &&
		   !strcmp(a->file ? a->file : "", b->file ? b->file : "") &&
		   !strcmp(a->name ? a->name : "", b->name ? b->name : ""),
		   "format_op line %zu round-trips", i);
		script_free(r);
	}
	script_free(s);
}

static void bad(const char *text, const char *want)
{
	char err[256];
	struct script *s = parse(text, err, sizeof(err));

	if (!ok(s == NULL && strstr(err, want), "rejects '%.*s' with '%s'",
		(int)strcspn(text, "\n"), text, want))
		tap_diag("got: %s", s ? "(accepted)" : err);
	script_free(s);
}

static void test_errors(void)
{
	bad("frob 0x1000 4K\n", "t.ops:1: frob: unknown op");
	bad("# c\nmunmap 0x100000000000\n", "t.ops:2: munmap: missing argument");
	bad("munmap 0x100000000000 4K 4K\n", "t.ops:1: munmap: too many arguments");
	bad("munmap 0x100000000000 4Q\n", "munmap: length '4Q' is not a size");
	bad("munmap 100000000000 4K\n", "munmap: address '100000000000' is not a hex address");
	bad("munmap 0x800000000000 4K\n", "munmap: address 0x800000000000 is outside the user");
	bad("mprotect 0x100000000000 4K rwz\n", "mprotect: unknown protection 'rwz'");
	bad("mmap 0x100000000000 4K rw- private,anon,bogus\n", "mmap: unknown flag 'bogus'");
	bad("mmap 0x100000000000 4K rw- private,fixed,hint\n", "'hint' conflicts with 'fixed'");
	bad("mmap 0x100000000000 4K rw- ,\n", "no flags");
	bad("mmap 0x100000000000 4K rw- private file=nope\n", "file 'nope' is not declared");
	bad("mmap 0x100000000000 4K rw- private file=d\nfile d 4K\n", "t.ops:1: mmap: file 'd'");
	bad("file d 4K\nfile d 8K\n", "t.ops:2: file: file 'd' is already declared");
	bad("file a/b 4K\n", "bad file name 'a/b'");
	bad("file d 4K tmpfs\n", "unknown argument 'tmpfs'");
	bad("madvise 0x100000000000 4K sometimes\n", "unknown advice 'sometimes'");
	bad("touch 0x100000000000 4K poke\n", "unknown access 'poke'");
	bad("mremap 0x100000000000 4K 8K jump\n", "unknown argument 'jump'");
	bad("mremap 0x100000000000 4K 8K to=0xffffffffffff\n", "outside the user address range");
	bad("munmap 0x100000000000 4K expect=EWHAT\n", "munmap: unknown errno 'EWHAT'");
	bad("munmap 0x100000000000 expect=EINVAL 4K\n", "expect= must end the line");
	bad("fork now\n", "fork: too many arguments");
	bad("name 0x100000000000 4K\n", "name: missing argument");
}

int main(void)
{
	test_numbers();
	test_ops();
	test_errors();
	return tap_done();
}
