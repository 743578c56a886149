// SPDX-License-Identifier: GPL-2.0-or-later
/* The op-script parser and printer: every op, every error class, round trips. */
#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>

#include <time.h>	/* tap.h uses clock_gettime without including it */

#include "tap.h"
#include "script/script.h"
#include "util/alloc.h"
#include "util/linux_compat.h"

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

/* format_op round trip: each op of @s printed parses to the same op. */
static void test_round_trip(const struct script *s)
{
	char err[256];

	for (size_t i = 0; i < s->nr_ops; i++) {
		char line[512], text[2048];
		struct script *r;
		const struct op *a = &s->ops[i];
		bool decl = a->kind != OP_FILE;	/* a file op declares itself */

		format_op(a, line, sizeof(line));
		snprintf(text, sizeof(text), "%s%s\n",
			 decl ? "file data 1M\nfile shm 64K shmem\nfile mem 8K memfd\nfork\nfork\n" :
				"", line);
		r = parse(text, err, sizeof(err));
		if (!ok(r && r->nr_ops == (decl ? 6u : 1u), "format_op line %zu parses: %s", i,
			line)) {
			tap_diag("%s", err);
			script_free(r);
			continue;
		}
		ok(op_same(a, &r->ops[decl ? 5 : 0]), "format_op line %zu round-trips", i);
		script_free(r);
	}
}

static void test_ops(void)
{
	char err[256];
	struct script *s = parse(
		"# header\n"
		"\n"
		"file data 1M\n"
		"file shm 64K shmem   # a comment\n"
		"file mem 8K memfd\n"
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
		"fork\n"
		"mmap 0x100000700000 16K rw- droppable,anon\n"
		"mremap 0x100000700000 16K 16K maymove dontunmap hint=0x100000800000\n"
		"madvise 0x100000000000 4K guard_install\n"
		"madvise 0x100000000000 4K guard_remove\n"
		"process_madvise 0x100000000000 4K pageout expect=ENOMEM\n"
		"mlock 0x100000000000 4K onfault\n"
		"mlockall current,future,onfault\n"
		"mlockall none expect=EINVAL\n"
		"munlockall\n"
		"fork\n"
		"select child 2\n"
		"select parent\n"
		"mseal 0x100000000000 4K expect=EPERM\n"
		"truncate data 100K\n"
		"punch shm 4K 8K\n"
		"clear_refs 4\n"
		"clear_refs -1 expect=EINVAL\n"
		"madvise 0x100000000000 4K populate_write\n",
		err, sizeof(err));

	if (!ok(s != NULL, "a script with every op parses")) {
		tap_diag("%s", err);
		return;
	}
	is_int(s->nr_ops, 38, "38 ops");
	is_int(s->ops[0].kind, OP_FILE, "file op");
	is_str(s->ops[0].file, "data", "file name");
	is_int(s->ops[0].size, 1 << 20, "file size");
	ok(!s->ops[0].shmem && s->ops[1].shmem, "shmem flag");
	is_int(s->ops[3].line, 6, "line numbers count comments and blanks");
	is_int(s->ops[3].flags, MAP_PRIVATE | MAP_ANONYMOUS, "private,anon");
	is_int(s->ops[3].placement, OP_PLACE_AUTO, "default placement");
	ok(!s->ops[3].has_expect, "no expect");
	is_int(s->ops[4].flags, MAP_SHARED, "shared file mapping");
	is_str(s->ops[4].file, "data", "file=");
	is_int(s->ops[4].offset, 4096, "@offset");
	ok(s->ops[4].has_expect && s->ops[4].expect == -EINVAL, "expect=EINVAL");
	is_int(s->ops[5].flags, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_NORESERVE |
	       MAP_LOCKED | MAP_GROWSDOWN, "all MAP_ flags");
	is_int(s->ops[5].prot, PROT_READ | PROT_WRITE | PROT_EXEC, "rwx");
	is_int(s->ops[5].placement, OP_PLACE_FIXED, "fixed");
	is_int(s->ops[6].placement, OP_PLACE_NOREPLACE, "noreplace");
	is_int(s->ops[7].placement, OP_PLACE_HINT, "hint");
	is_int(s->ops[8].flags, 0, "flags none");
	is_int(s->ops[10].len, 4096, "hex length");
	is_int(s->ops[11].flags, MREMAP_MAYMOVE | MREMAP_FIXED | 4, "mremap flags");
	is_hex(s->ops[11].new_addr, 0x100000600000UL, "to=");
	is_int(s->ops[11].new_len, 8192, "new length");
	is_int(s->ops[12].advice, MADV_DONTNEED, "dontneed");
	ok(s->ops[13].advice == MADV_FREE && s->ops[13].has_expect && s->ops[13].expect == 0,
	   "free, expect=0");
	is_int(s->ops[14].access, OP_ACCESS_WRITE, "touch write");
	is_str(s->ops[17].name, "my heap  name", "name: rest of line, trimmed");
	ok(s->ops[18].name == NULL && s->ops[18].expect == -EINVAL, "name - clears, expect kept");
	is_int(s->ops[19].kind, OP_FORK, "fork");
	ok(s->ops[2].kind == OP_FILE && s->ops[2].memfd && s->ops[2].shmem, "memfd file");
	is_int(s->ops[20].flags, MAP_DROPPABLE | MAP_ANONYMOUS, "droppable,anon");
	ok(s->ops[21].flags == (MREMAP_MAYMOVE | MREMAP_DONTUNMAP) &&
	   s->ops[21].new_addr == 0x100000800000UL, "hint= is a destination without FIXED");
	is_int(s->ops[22].advice, MADV_GUARD_INSTALL, "guard_install");
	is_int(s->ops[23].advice, MADV_GUARD_REMOVE, "guard_remove");
	ok(s->ops[24].kind == OP_PROCESS_MADVISE && s->ops[24].advice == MADV_PAGEOUT,
	   "process_madvise");
	ok(s->ops[25].kind == OP_MLOCK && s->ops[25].flags == MLOCK_ONFAULT, "mlock onfault");
	ok(s->ops[26].kind == OP_MLOCKALL &&
	   s->ops[26].flags == (MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT), "mlockall flags");
	ok(s->ops[27].flags == 0 && s->ops[27].expect == -EINVAL, "mlockall none");
	is_int(s->ops[28].kind, OP_MUNLOCKALL, "munlockall");
	ok(s->ops[30].kind == OP_SELECT && s->ops[30].child == 2, "select child 2");
	ok(s->ops[31].kind == OP_SELECT && s->ops[31].child == 0, "select parent");
	ok(s->ops[32].kind == OP_MSEAL && s->ops[32].len == 4096 && s->ops[32].expect == -EPERM,
	   "mseal");
	ok(s->ops[33].kind == OP_TRUNCATE && !strcmp(s->ops[33].file, "data") &&
	   s->ops[33].size == 100 << 10, "truncate NAME SIZE");
	ok(s->ops[34].kind == OP_PUNCH && !strcmp(s->ops[34].file, "shm") &&
	   s->ops[34].offset == 4096 && s->ops[34].len == 8192, "punch NAME OFF LEN");
	ok(s->ops[35].kind == OP_CLEAR_REFS && s->ops[35].flags == 4, "clear_refs 4");
	ok(s->ops[36].flags == -1 && s->ops[36].expect == -EINVAL, "clear_refs -1");
	is_int(s->ops[37].advice, MADV_POPULATE_WRITE, "populate_write");
	test_round_trip(s);
	script_free(s);
}

/* What the parser's table of ops tells others (vmalock fuzz's generator). */
static void test_table(void)
{
	const struct op_word *words;
	const struct op_arg *args;
	size_t nr;

	args = op_args(OP_MREMAP, &nr);
	ok(nr == 3 && args[0].type == OP_ARG_ADDR && args[1].type == OP_ARG_SIZE &&
	   args[2].field == offsetof(struct op, new_len), "mremap: ADDR OLDLEN NEWLEN");
	op_args(OP_FORK, &nr);
	is_int(nr, 0, "fork has no arguments");
	ok(op_args(OP__COUNT, &nr) == NULL && nr == 0, "no such op: no arguments");
	words = op_arg_words(OP_ARG_ADVICE, &nr);
	ok(nr == 17 && !strcmp(words[0].name, "dontneed") && words[0].value == MADV_DONTNEED &&
	   words[16].value == MADV_REMOVE, "the advices");
	ok(op_arg_words(OP_ARG_ADDR, &nr) == NULL && nr == 0, "addresses have no words");
	is_str(op_kind_name(OP_PROCESS_MADVISE), "process_madvise", "op name");
	is_str(op_kind_name(OP__COUNT), "?", "no such op");
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
	bad("mlock 0x100000000000 4K never\n", "mlock: unknown argument 'never'");
	bad("munlock 0x100000000000 4K onfault\n", "munlock: too many arguments");
	bad("mlockall current,later\n", "mlockall: unknown flag 'later'");
	bad("mlockall\n", "mlockall: missing argument");
	bad("munlockall now\n", "munlockall: too many arguments");
	bad("select child 1\n", "select: no fork 1 before this line");
	bad("fork\nselect child 0\n", "t.ops:2: select: child '0' is not a fork number");
	bad("select sibling\n", "want `select child N` or `select parent`");
	bad("process_madvise 0x100000000000 4K never\n", "unknown advice 'never'");
	bad("mremap 0x100000000000 4K 4K maymove to=0x100000100000 hint=0x100000200000\n",
	    "a second destination");
	bad("mremap 0x100000000000 4K 4K maymove dontunmap hint=0x0\n", "hint=0x0 is no hint");
	bad("file d 4K memfd,shmem\n", "unknown argument 'memfd,shmem'");
	bad("fork\nfile d 4K\n", "t.ops:2: file: files are declared before the first fork");
	bad("truncate nope 4K\n", "truncate: file 'nope' is not declared");
	bad("file d 4K\npunch d 4K\n", "t.ops:2: punch: missing argument");
	bad("clear_refs 1x\n", "clear_refs: value '1x' is not a decimal number");
	bad("mseal 0x100000000000\n", "mseal: missing argument");
}

int main(void)
{
	test_numbers();
	test_ops();
	test_table();
	test_errors();
	return tap_done();
}
