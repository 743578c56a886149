// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * script.c - the op-script parser and printer (the format is in script.h).
 *
 * The parser is deliberately permissive about values: it converts what the
 * line says into the numbers the syscall would get and leaves judging them to
 * the target, so a script can ask the kernel and the model the same invalid
 * question and compare answers. It rejects only lines that do not say
 * anything a syscall could be asked.
 *
 * Every op is one row of op_descs[] below: its name, its fixed arguments
 * (each of a type that has one parser and one printer), what may follow
 * them, and the handler for that and for what the op does to the script (a
 * file declared, a fork counted). Parsing a line, printing an op back
 * (format_op) and vmalock fuzz drawing an op's arguments (src/race/fuzz_gen.c,
 * through op_args()) all read the same row.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "script/script.h"
#include "util/alloc.h"
#include "util/compiler.h"
#include "util/linux_compat.h"

#define MAX_TOKENS 16
#define MAX_LINE 4096
/* A CR is a blank like space and tab, so a script saved with CRLF reads the same. */
#define BLANKS " \t\r"

/* ---- the names of values ---- */

static const struct op_word advices[] = {
	{ "dontneed", MADV_DONTNEED },
	{ "hugepage", MADV_HUGEPAGE },
	{ "nohugepage", MADV_NOHUGEPAGE },
	{ "pageout", MADV_PAGEOUT },
	{ "willneed", MADV_WILLNEED },
	{ "cold", MADV_COLD },
	{ "free", MADV_FREE },
	{ "guard_install", MADV_GUARD_INSTALL },
	{ "guard_remove", MADV_GUARD_REMOVE },
	{ "collapse", MADV_COLLAPSE },
	{ "populate_read", MADV_POPULATE_READ },
	{ "populate_write", MADV_POPULATE_WRITE },
	{ "wipeonfork", MADV_WIPEONFORK },
	{ "keeponfork", MADV_KEEPONFORK },
	{ "dontfork", MADV_DONTFORK },
	{ "dofork", MADV_DOFORK },
	{ "remove", MADV_REMOVE },
};

/* mlockall(2) flags, in format_op's order. */
static const struct op_word mcl_flags[] = {
	{ "current", MCL_CURRENT },
	{ "future", MCL_FUTURE },
	{ "onfault", MCL_ONFAULT },
};

/* mmap flags that map one-to-one to a MAP_* bit, in format_op's order. */
static const struct op_word map_flags[] = {
	{ "private", MAP_PRIVATE },
	{ "shared", MAP_SHARED },
	{ "anon", MAP_ANONYMOUS },
	{ "populate", MAP_POPULATE },
	{ "noreserve", MAP_NORESERVE },
	{ "growsdown", MAP_GROWSDOWN },
	{ "locked", MAP_LOCKED },
	{ "droppable", MAP_DROPPABLE },
};

static const char *const placement_names[] = {
	[OP_PLACE_AUTO] = NULL,
	[OP_PLACE_FIXED] = "fixed",
	[OP_PLACE_NOREPLACE] = "noreplace",
	[OP_PLACE_HINT] = "hint",
};

static const struct op_word accesses[] = {
	{ "read", OP_ACCESS_READ },
	{ "write", OP_ACCESS_WRITE },
};

const struct op_word *op_arg_words(enum op_arg_type type, size_t *nr)
{
	switch (type) {
	case OP_ARG_MAP_FLAGS:
		*nr = ARRAY_SIZE(map_flags);
		return map_flags;
	case OP_ARG_ADVICE:
		*nr = ARRAY_SIZE(advices);
		return advices;
	case OP_ARG_ACCESS:
		*nr = ARRAY_SIZE(accesses);
		return accesses;
	case OP_ARG_MCL_FLAGS:
		*nr = ARRAY_SIZE(mcl_flags);
		return mcl_flags;
	default:
		*nr = 0;
		return NULL;
	}
}

/* The name of @value in @words, or NULL. */
static const char *word_name(const struct op_word *words, size_t nr, int value)
{
	for (size_t i = 0; i < nr; i++)
		if (words[i].value == value)
			return words[i].name;
	return NULL;
}

/* The entry of @name in @words, or NULL. */
static const struct op_word *find_word(const struct op_word *words, size_t nr, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(words[i].name, name))
			return &words[i];
	return NULL;
}

#define E(x) { #x, x }
static const struct op_word errnos[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG), E(EBADF),
	E(EAGAIN), E(ENOMEM), E(EACCES), E(EFAULT), E(EBUSY), E(EEXIST), E(ENODEV),
	E(EINVAL), E(ENFILE), E(EMFILE), E(ETXTBSY), E(EFBIG), E(ENOSPC), E(ERANGE),
	E(ENAMETOOLONG), E(ENOSYS), E(EOVERFLOW), E(EOPNOTSUPP), E(EHWPOISON),
};
#undef E

const char *errno_name(int err, char *buf, size_t len)
{
	if (err == 0)
		return "0";
	for (size_t i = 0; i < ARRAY_SIZE(errnos); i++)
		if (errnos[i].value == -err)
			return errnos[i].name;
	snprintf(buf, len, "%d", err);
	return buf;
}

int errno_parse(const char *s, int *out)
{
	char *end;
	long v;

	for (size_t i = 0; i < ARRAY_SIZE(errnos); i++) {
		if (!strcmp(s, errnos[i].name)) {
			*out = -errnos[i].value;
			return 0;
		}
	}
	if (!*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < -4095 || v > 4095)
		return -EINVAL;
	*out = v > 0 ? (int)-v : (int)v;
	return 0;
}

int parse_size(const char *s, unsigned long *out)
{
	unsigned long v = 0, mult = 1, digit;
	int base = 10;
	const char *p = s;
	size_t n = strlen(s);

	if (n == 0)
		return -EINVAL;
	switch (s[n - 1]) {
	case 'K': case 'k': mult = 1UL << 10; n--; break;
	case 'M': case 'm': mult = 1UL << 20; n--; break;
	case 'G': case 'g': mult = 1UL << 30; n--; break;
	case 'T': case 't': mult = 1UL << 40; n--; break;
	}
	if (n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
		n -= 2;
	}
	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		if (c >= '0' && c <= '9')
			digit = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			digit = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			digit = c - 'A' + 10;
		else
			return -EINVAL;
		if (v > (~0UL - digit) / base)
			return -EINVAL;		/* overflow */
		v = v * base + digit;
	}
	if (v > ~0UL / mult)
		return -EINVAL;
	*out = v * mult;
	return 0;
}

int parse_addr(const char *s, unsigned long *out)
{
	size_t n = strlen(s);

	/* Addresses are hex, and say so, so that `1000` is never misread. */
	if (n < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -EINVAL;
	if (s[n - 1] < '0' || (s[n - 1] > '9' && !strchr("abcdefABCDEF", s[n - 1])))
		return -EINVAL;		/* no suffixes on addresses */
	return parse_size(s, out);
}

int parse_prot(const char *s, int *out)
{
	int prot = 0, bit;

	if (!strcmp(s, "none")) {
		*out = PROT_NONE;
		return 0;
	}
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		switch (*s) {
		case 'r': bit = PROT_READ; break;
		case 'w': bit = PROT_WRITE; break;
		case 'x': bit = PROT_EXEC; break;
		case '-': continue;
		default: return -EINVAL;
		}
		if (prot & bit)
			return -EINVAL;
		prot |= bit;
	}
	*out = prot;
	return 0;
}

/* The parser's state while it walks the lines of one script. */
struct parser {
	const char *path;
	unsigned int line;
	const char *opname;	/* the op word of the current line, for messages */
	char opword[32];	/* ... where it is one (a copy: parsing cuts the line up) */
	char *err;
	size_t errlen;
	struct script *s;
	size_t ops_cap;
	size_t strings_cap;
	/* declared files: the strings are owned by the script */
	const char **files;
	size_t nr_files, files_cap;
	unsigned long nr_forks;	/* fork ops so far: what `select child N` may name */
};

__attribute__((format(printf, 2, 3)))
static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->err && p->errlen) {
		n = snprintf(p->err, p->errlen, "%s:%u: %s: ", p->path, p->line,
			     p->opname ? p->opname : "");
		if (n >= 0 && (size_t)n < p->errlen) {
			va_start(ap, fmt);
			vsnprintf(p->err + n, p->errlen - n, fmt, ap);
			va_end(ap);
		}
	}
	return -EINVAL;
}

/* Keep a copy of @str (length @n) in the script; the ops point to it. */
static const char *keep_string(struct parser *p, const char *str, size_t n)
{
	char **strings = vml_grow_array(p->s->strings, &p->strings_cap, p->s->nr_strings + 1,
					sizeof(char *), 16);
	char *c;

	if (!strings)
		return NULL;
	p->s->strings = strings;
	c = vml_malloc(n + 1);
	if (!c)
		return NULL;
	memcpy(c, str, n);
	c[n] = '\0';
	p->s->strings[p->s->nr_strings++] = c;
	return c;
}

static const char *find_file(struct parser *p, const char *name, size_t n)
{
	for (size_t i = 0; i < p->nr_files; i++)
		if (strlen(p->files[i]) == n && !strncmp(p->files[i], name, n))
			return p->files[i];
	return NULL;
}

/* ---- arguments: one parser and one printer a type ---- */

static int get_addr(struct parser *p, const char *tok, const char *what, unsigned long *out)
{
	if (parse_addr(tok, out))
		return fail(p, "%s '%s' is not a hex address (0x...)", what, tok);
	if (*out >= SCRIPT_TASK_SIZE)
		return fail(p, "%s %s is outside the user address range", what, tok);
	return 0;
}

static int get_size(struct parser *p, const char *tok, const char *what, unsigned long *out)
{
	if (parse_size(tok, out))
		return fail(p, "%s '%s' is not a size", what, tok);
	return 0;
}

static int get_prot(struct parser *p, const char *tok, int *out)
{
	if (parse_prot(tok, out))
		return fail(p, "unknown protection '%s' (a string of r w x -, or none)", tok);
	return 0;
}

static int parse_mmap_flags(struct parser *p, const char *tok, struct op *op)
{
	char buf[256];
	char *save, *f;

	if (strlen(tok) >= sizeof(buf))
		return fail(p, "flags too long");
	if (!strcmp(tok, "none"))
		return 0;	/* no MAP_* bit at all: the kernel says EINVAL */
	strcpy(buf, tok);
	if (!strtok_r(buf, ",", &save))
		return fail(p, "no flags in '%s' (use none for no flags)", tok);
	strcpy(buf, tok);
	for (f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		const struct op_word *w = find_word(map_flags, ARRAY_SIZE(map_flags), f);
		enum op_placement pl = OP_PLACE_AUTO;

		if (w) {
			op->flags |= w->value;
			continue;
		}
		if (!strcmp(f, "norserve")) {
			op->flags |= MAP_NORESERVE;
			continue;
		}
		for (size_t i = 1; i < ARRAY_SIZE(placement_names); i++)
			if (!strcmp(f, placement_names[i]))
				pl = i;
		if (pl == OP_PLACE_AUTO)
			return fail(p, "unknown flag '%s'", f);
		if (op->placement != OP_PLACE_AUTO && op->placement != pl)
			return fail(p, "'%s' conflicts with '%s'", f,
				    placement_names[op->placement]);
		op->placement = pl;
	}
	return 0;
}

/* `mlockall FLAGS`: a comma list of current, future, onfault, or `none`. */
static int parse_mcl_flags(struct parser *p, const char *tok, struct op *op)
{
	char buf[64];
	char *save, *f;

	if (!strcmp(tok, "none"))
		return 0;
	if (strlen(tok) >= sizeof(buf))
		return fail(p, "flags too long");
	strcpy(buf, tok);
	for (f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		const struct op_word *w = find_word(mcl_flags, ARRAY_SIZE(mcl_flags), f);

		if (!w)
			return fail(p, "unknown flag '%s' (current, future, onfault, or none)", f);
		op->flags |= w->value;
	}
	if (!op->flags)
		return fail(p, "no flags (current, future, onfault, or none)");
	return 0;
}

static int get_word(struct parser *p, const char *tok, enum op_arg_type type, int *out)
{
	size_t nr;
	const struct op_word *words = op_arg_words(type, &nr), *w = find_word(words, nr, tok);

	if (w) {
		*out = w->value;
		return 0;
	}
	if (type == OP_ARG_ACCESS)
		return fail(p, "unknown access '%s' (read or write)", tok);
	return fail(p, "unknown advice '%s'", tok);
}

static bool valid_file_name(const char *s)
{
	if (!*s || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s == '/' || *s == '=' || *s == '@' || (unsigned char)*s < 0x21)
			return false;
	return true;
}

/* The name of a file the line declares: new, and before the first fork. */
static int new_file(struct parser *p, const char *tok, struct op *op)
{
	if (!valid_file_name(tok))
		return fail(p, "bad file name '%s' (no '/', '=', '@' or spaces)", tok);
	if (find_file(p, tok, strlen(tok)))
		return fail(p, "file '%s' is already declared", tok);
	if (p->nr_forks)
		return fail(p, "files are declared before the first fork");
	op->file = keep_string(p, tok, strlen(tok));
	return op->file ? 0 : -ENOMEM;
}

/* The name of a file declared before the line. */
static int old_file(struct parser *p, const char *tok, struct op *op)
{
	op->file = find_file(p, tok, strlen(tok));
	if (!op->file)
		return fail(p, "file '%s' is not declared (declare it with `file %s SIZE`)", tok,
			    tok);
	return 0;
}

static int get_int(struct parser *p, const char *tok, const char *what, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(tok, &end, 10);
	if (!*tok || *end || errno || v < -2147483647L - 1 || v > 2147483647L)
		return fail(p, "%s '%s' is not a decimal number", what, tok);
	*out = (int)v;
	return 0;
}

/* Return: 0, -EINVAL (@p's message says why) or -ENOMEM. */
static int parse_arg(struct parser *p, const struct op_arg *a, const char *tok, struct op *op)
{
	void *field = (char *)op + a->field;

	switch (a->type) {
	case OP_ARG_ADDR:
		return get_addr(p, tok, a->what, field);
	case OP_ARG_SIZE:
		return get_size(p, tok, a->what, field);
	case OP_ARG_PROT:
		return get_prot(p, tok, field);
	case OP_ARG_MAP_FLAGS:
		return parse_mmap_flags(p, tok, op);
	case OP_ARG_ADVICE:
		return get_word(p, tok, a->type, field);
	case OP_ARG_ACCESS: {
		int access, r = get_word(p, tok, a->type, &access);

		if (!r)
			op->access = access;
		return r;
	}
	case OP_ARG_MCL_FLAGS:
		return parse_mcl_flags(p, tok, op);
	case OP_ARG_NEW_FILE:
		return new_file(p, tok, op);
	case OP_ARG_FILE:
		return old_file(p, tok, op);
	case OP_ARG_INT:
		return get_int(p, tok, a->what, field);
	}
	VML_BUG_ON(1);
	return -EINVAL;
}

/* A line being printed: snprintf into @buf, counting the length the whole line would have. */
struct out {
	char *buf;
	size_t len;
	int pos;
};

__attribute__((format(printf, 2, 3)))
static void add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	size_t off = (size_t)o->pos < o->len ? (size_t)o->pos : o->len;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->buf + off, o->len - off, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += n;
}

/* Sizes print with the largest exact suffix; 0 and odd sizes in decimal. */
static const char *fmt_size(unsigned long v, char *buf, size_t len)
{
	static const char sfx[] = "TGMK";

	for (int i = 0; i < 4; i++) {
		unsigned long unit = 1UL << (10 * (4 - i));

		if (v && v % unit == 0) {
			snprintf(buf, len, "%lu%c", v / unit, sfx[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%lu", v);
	return buf;
}

static const char *fmt_prot(int prot, char *buf)
{
	if (prot == PROT_NONE)
		return "---";
	buf[0] = prot & PROT_READ ? 'r' : '-';
	buf[1] = prot & PROT_WRITE ? 'w' : '-';
	buf[2] = prot & PROT_EXEC ? 'x' : '-';
	buf[3] = '\0';
	return buf;
}

/* The names of the bits of @flags in @words, comma-separated after @sep; Return: how many. */
static int add_bits(struct out *o, const char *sep, const struct op_word *words, size_t nr,
		    int flags)
{
	int n = 0;

	for (size_t i = 0; i < nr; i++)
		if (flags & words[i].value)
			add(o, "%s%s", n++ ? "," : sep, words[i].name);
	return n;
}

static void print_arg(struct out *o, const struct op *op, const struct op_arg *a)
{
	const void *field = (const char *)op + a->field;
	char b[32], pr[4];
	const char *name;

	switch (a->type) {
	case OP_ARG_ADDR:
		add(o, " 0x%lx", *(const unsigned long *)field);
		break;
	case OP_ARG_SIZE:
		add(o, " %s", fmt_size(*(const unsigned long *)field, b, sizeof(b)));
		break;
	case OP_ARG_PROT:
		add(o, " %s", fmt_prot(*(const int *)field, pr));
		break;
	case OP_ARG_MAP_FLAGS: {
		int n = add_bits(o, " ", map_flags, ARRAY_SIZE(map_flags), op->flags);

		if (op->placement != OP_PLACE_AUTO)
			add(o, "%s%s", n++ ? "," : " ", placement_names[op->placement]);
		if (!n)
			add(o, " none");
		break;
	}
	case OP_ARG_ADVICE:
		name = word_name(advices, ARRAY_SIZE(advices), *(const int *)field);
		add(o, " %s", name ? name : "");
		break;
	case OP_ARG_ACCESS:
		add(o, " %s", op->access == OP_ACCESS_WRITE ? "write" : "read");
		break;
	case OP_ARG_MCL_FLAGS:
		if (!add_bits(o, " ", mcl_flags, ARRAY_SIZE(mcl_flags), op->flags))
			add(o, " none");
		break;
	case OP_ARG_NEW_FILE:
	case OP_ARG_FILE:
		add(o, " %s", op->file);
		break;
	case OP_ARG_INT:
		add(o, " %d", *(const int *)field);
		break;
	}
}

/* ---- what follows the fixed arguments: each op's own handler ---- */

/* file=NAME[@OFF] */
static int parse_file_arg(struct parser *p, const char *tok, struct op *op)
{
	const char *name = tok + 5, *at = strchr(name, '@');
	size_t n = at ? (size_t)(at - name) : strlen(name);

	if (strncmp(tok, "file=", 5))
		return fail(p, "unexpected argument '%s' (want file=NAME[@OFF])", tok);
	if (n == 0)
		return fail(p, "file= needs a name");
	op->file = find_file(p, name, n);
	if (!op->file)
		return fail(p, "file '%.*s' is not declared (declare it with `file %.*s SIZE`)",
			    (int)n, name, (int)n, name);
	if (at && get_size(p, at + 1, "offset", &op->offset))
		return -EINVAL;
	return 0;
}

static int parse_mmap_more(struct parser *p, char **tok, int nr, struct op *op)
{
	return nr ? parse_file_arg(p, tok[0], op) : 0;
}

static void print_mmap_more(struct out *o, const struct op *op)
{
	char a[32];

	if (op->file) {
		add(o, " file=%s", op->file);
		if (op->offset)
			add(o, "@%s", fmt_size(op->offset, a, sizeof(a)));
	}
}

static int parse_mlock_more(struct parser *p, char **tok, int nr, struct op *op)
{
	if (!nr)
		return 0;
	if (strcmp(tok[0], "onfault"))
		return fail(p, "unknown argument '%s' (want onfault)", tok[0]);
	op->flags = MLOCK_ONFAULT;
	return 0;
}

static void print_mlock_more(struct out *o, const struct op *op)
{
	if (op->flags & MLOCK_ONFAULT)
		add(o, " onfault");
}

static int parse_mremap_arg(struct parser *p, const char *tok, struct op *op)
{
	if (!strcmp(tok, "maymove")) {
		op->flags |= MREMAP_MAYMOVE;
	} else if (!strcmp(tok, "dontunmap")) {
		op->flags |= MREMAP_DONTUNMAP;
	} else if (!strncmp(tok, "to=", 3) || !strncmp(tok, "hint=", 5)) {
		bool fixed = tok[0] == 't';

		if (op->new_addr || (op->flags & MREMAP_FIXED))
			return fail(p, "'%s': a second destination", tok);
		if (get_addr(p, tok + (fixed ? 3 : 5), fixed ? "to=" : "hint=", &op->new_addr))
			return -EINVAL;
		if (fixed)
			op->flags |= MREMAP_FIXED;
		else if (!op->new_addr)
			return fail(p, "hint=0x0 is no hint (leave it out)");
	} else {
		return fail(p, "unknown argument '%s' (maymove, to=ADDR, hint=ADDR, dontunmap)",
			    tok);
	}
	return 0;
}

static int parse_mremap_more(struct parser *p, char **tok, int nr, struct op *op)
{
	for (int k = 0; k < nr; k++)
		if (parse_mremap_arg(p, tok[k], op))
			return -EINVAL;
	return 0;
}

static void print_mremap_more(struct out *o, const struct op *op)
{
	if (op->flags & MREMAP_MAYMOVE)
		add(o, " maymove");
	if (op->flags & MREMAP_FIXED)
		add(o, " to=0x%lx", op->new_addr);
	else if (op->new_addr)
		add(o, " hint=0x%lx", op->new_addr);
	if (op->flags & MREMAP_DONTUNMAP)
		add(o, " dontunmap");
}

/* `file NAME SIZE [shmem|memfd]`: the kind, then the file is declared. */
static int parse_file_more(struct parser *p, char **tok, int nr, struct op *op)
{
	const char **files;

	if (nr) {
		if (strcmp(tok[0], "shmem") && strcmp(tok[0], "memfd"))
			return fail(p, "unknown argument '%s' (want shmem or memfd)", tok[0]);
		op->shmem = true;	/* a memfd is a tmpfs file too */
		op->memfd = tok[0][0] == 'm';
	}
	files = vml_grow_array(p->files, &p->files_cap, p->nr_files + 1, sizeof(char *), 16);
	if (!files)
		return -ENOMEM;
	p->files = files;
	p->files[p->nr_files++] = op->file;
	return 0;
}

static void print_file_more(struct out *o, const struct op *op)
{
	add(o, "%s", op->memfd ? " memfd" : op->shmem ? " shmem" : "");
}

static int parse_fork(struct parser *p, char **tok, int nr, struct op *op)
{
	p->nr_forks++;
	return 0;
}

/* `select child N` or `select parent`: the whole argument list (OP_D_OWN_ARGS). */
static int parse_select(struct parser *p, char **tok, int nr, struct op *op)
{
	unsigned long n;

	if (nr == 1 && !strcmp(tok[0], "parent"))
		return 0;
	if (nr != 2 || strcmp(tok[0], "child"))
		return fail(p, "want `select child N` or `select parent`");
	if (parse_size(tok[1], &n) || n == 0 || n > 1000000)
		return fail(p, "child '%s' is not a fork number (1, 2, ...)", tok[1]);
	if (n > p->nr_forks)
		return fail(p, "no fork %lu before this line", n);
	op->child = (unsigned int)n;
	return 0;
}

static void print_select(struct out *o, const struct op *op)
{
	if (op->child)
		add(o, " child %u", op->child);
	else
		add(o, " parent");
}

/* The `name` op's string: the rest of the line (OP_D_REST_OF_LINE); `-` clears. */
static int parse_name_more(struct parser *p, char **tok, int nr, struct op *op)
{
	if (!strcmp(tok[0], "-"))
		return 0;
	op->name = keep_string(p, tok[0], strlen(tok[0]));
	return op->name ? 0 : -ENOMEM;
}

static void print_name_more(struct out *o, const struct op *op)
{
	add(o, " %s", op->name ? op->name : "-");
}

/* ---- the ops ---- */

/* struct op_desc flags */
enum {
	/* After the fixed arguments, the rest of the line (trimmed) is one more word, required. */
	OP_D_REST_OF_LINE = 1 << 0,
	/* The handler takes every word after the op and checks how many itself. */
	OP_D_OWN_ARGS = 1 << 1,
};

#define OP_MAX_ARGS 4

/*
 * struct op_desc - one op of the script language.
 * A line is `NAME ARG... MORE... [expect=ERRNO]`: the fixed arguments @args
 * in order, each parsed and printed by its type (parse_arg(), print_arg()),
 * then up to @max_more words, which the op's handler @parse reads once the
 * fixed arguments are in the op, and @print prints back. @parse is also
 * where the op changes the parser's state (a file declared, a fork
 * counted), so it runs even when no word follows.
 */
struct op_desc {
	const char *name;
	struct op_arg args[OP_MAX_ARGS];
	unsigned int nr_args;
	unsigned int max_more;
	const char *more_usage;		/* the words after @args, for messages */
	unsigned int flags;		/* OP_D_* */
	int (*parse)(struct parser *p, char **tok, int nr, struct op *op);
	void (*print)(struct out *o, const struct op *op);
};

#define ARG(t, u, w, f) { OP_ARG_##t, u, w, offsetof(struct op, f) }
#define A_ADDR ARG(ADDR, "ADDR", "address", addr)
#define A_LEN ARG(SIZE, "LEN", "length", len)
#define A_PROT ARG(PROT, "PROT", "protection", prot)
#define A_ADVICE ARG(ADVICE, "ADVICE", "advice", advice)
#define ARGS(...) .args = { __VA_ARGS__ }, \
	.nr_args = sizeof((struct op_arg[]){ __VA_ARGS__ }) / sizeof(struct op_arg)

static const struct op_desc op_descs[OP__COUNT] = {
	[OP_MMAP] = {
		.name = "mmap",
		ARGS(A_ADDR, A_LEN, A_PROT, ARG(MAP_FLAGS, "FLAGS", "flags", flags)),
		.max_more = 1, .more_usage = "[file=NAME[@OFF]]",
		.parse = parse_mmap_more, .print = print_mmap_more,
	},
	[OP_MUNMAP] = { .name = "munmap", ARGS(A_ADDR, A_LEN) },
	[OP_MPROTECT] = { .name = "mprotect", ARGS(A_ADDR, A_LEN, A_PROT) },
	[OP_MREMAP] = {
		.name = "mremap",
		ARGS(A_ADDR, ARG(SIZE, "OLDLEN", "old length", len),
		     ARG(SIZE, "NEWLEN", "new length", new_len)),
		.max_more = 3, .more_usage = "[maymove] [to=ADDR|hint=ADDR] [dontunmap]",
		.parse = parse_mremap_more, .print = print_mremap_more,
	},
	[OP_MADVISE] = { .name = "madvise", ARGS(A_ADDR, A_LEN, A_ADVICE) },
	[OP_PROCESS_MADVISE] = { .name = "process_madvise", ARGS(A_ADDR, A_LEN, A_ADVICE) },
	[OP_TOUCH] = {
		.name = "touch",
		ARGS(A_ADDR, A_LEN, ARG(ACCESS, "read|write", "access", access)),
	},
	[OP_MLOCK] = {
		.name = "mlock",
		ARGS(A_ADDR, A_LEN),
		.max_more = 1, .more_usage = "[onfault]",
		.parse = parse_mlock_more, .print = print_mlock_more,
	},
	[OP_MUNLOCK] = { .name = "munlock", ARGS(A_ADDR, A_LEN) },
	[OP_MLOCKALL] = {
		.name = "mlockall",
		ARGS(ARG(MCL_FLAGS, "current,future,onfault|none", "flags", flags)),
	},
	[OP_MUNLOCKALL] = { .name = "munlockall" },
	[OP_NAME] = {
		.name = "name",
		ARGS(A_ADDR, A_LEN),
		.max_more = 1, .more_usage = "STRING|-", .flags = OP_D_REST_OF_LINE,
		.parse = parse_name_more, .print = print_name_more,
	},
	[OP_FILE] = {
		.name = "file",
		ARGS(ARG(NEW_FILE, "NAME", "file name", file), ARG(SIZE, "SIZE", "size", size)),
		.max_more = 1, .more_usage = "[shmem|memfd]",
		.parse = parse_file_more, .print = print_file_more,
	},
	[OP_FORK] = { .name = "fork", .parse = parse_fork },
	[OP_MSEAL] = { .name = "mseal", ARGS(A_ADDR, A_LEN) },
	[OP_TRUNCATE] = {
		.name = "truncate",
		ARGS(ARG(FILE, "NAME", "file name", file), ARG(SIZE, "SIZE", "size", size)),
	},
	[OP_PUNCH] = {
		.name = "punch",
		ARGS(ARG(FILE, "NAME", "file name", file), ARG(SIZE, "OFF", "offset", offset),
		     ARG(SIZE, "LEN", "length", len)),
	},
	[OP_CLEAR_REFS] = { .name = "clear_refs", ARGS(ARG(INT, "VALUE", "value", flags)) },
	[OP_SELECT] = {
		.name = "select",
		.more_usage = "child N|parent", .flags = OP_D_OWN_ARGS,
		.parse = parse_select, .print = print_select,
	},
};

#undef ARGS
#undef A_ADVICE
#undef A_PROT
#undef A_LEN
#undef A_ADDR
#undef ARG

static const struct op_desc *op_desc(enum op_kind kind)
{
	return (unsigned int)kind < OP__COUNT ? &op_descs[kind] : NULL;
}

const char *op_kind_name(enum op_kind kind)
{
	return op_desc(kind) ? op_descs[kind].name : "?";
}

const struct op_arg *op_args(enum op_kind kind, size_t *nr)
{
	const struct op_desc *d = op_desc(kind);

	*nr = d ? d->nr_args : 0;
	return d ? d->args : NULL;
}

/* ---- op lines ---- */

/* A trailing expect=ERRNO may end any op line: take it off @line, into @op. */
static int take_expect(struct parser *p, char *line, struct op *op)
{
	char *t = line + strlen(line);

	while (t > line && strchr(BLANKS, t[-1]))
		*--t = '\0';
	while (t > line && !strchr(BLANKS, t[-1]))
		t--;
	if (t > line && !strncmp(t, "expect=", 7)) {
		if (errno_parse(t + 7, &op->expect))
			return fail(p, "unknown errno '%s' in expect=", t + 7);
		op->has_expect = true;
		*t = '\0';
	}
	return 0;
}

/* The blank-separated words of @s into @tok. Return: how many, or -EINVAL. */
static int split_words(struct parser *p, char *s, char **tok)
{
	char *save, *t;
	int n = 0;

	for (t = strtok_r(s, BLANKS, &save); t; t = strtok_r(NULL, BLANKS, &save)) {
		if (n == MAX_TOKENS - 1)
			return fail(p, "too many arguments");
		if (!strncmp(t, "expect=", 7))
			return fail(p, "expect= must end the line");
		tok[n++] = t;
	}
	return n;
}

/* @nr words of @s, then the rest of it, trimmed, as one more (if not empty). Return: how many. */
static int split_rest(char *s, char **tok, unsigned int nr)
{
	char *end;
	unsigned int n;

	for (n = 0; n < nr; n++) {
		s += strspn(s, BLANKS);
		if (!*s)
			return n;
		tok[n] = s;
		s += strcspn(s, BLANKS);
		if (*s)
			*s++ = '\0';
	}
	s += strspn(s, BLANKS);
	end = s + strlen(s);
	while (end > s && strchr(BLANKS, end[-1]))
		*--end = '\0';
	if (!*s)
		return n;
	tok[n++] = s;
	return n;
}

static int want_args(struct parser *p, const struct op_desc *d, int nr)
{
	int min = d->nr_args + !!(d->flags & OP_D_REST_OF_LINE), max = d->nr_args + d->max_more;
	char usage[128];
	size_t pos = 0;

	if (nr >= min && nr <= max)
		return 0;
	usage[0] = '\0';
	for (unsigned int i = 0; i < d->nr_args; i++)
		pos += snprintf(usage + pos, sizeof(usage) - pos, "%s%s", pos ? " " : "",
				d->args[i].usage);
	if (d->more_usage)
		snprintf(usage + pos, sizeof(usage) - pos, "%s%s", pos ? " " : "", d->more_usage);
	if (nr < min)
		return fail(p, "missing argument (usage: %s %s)", p->opname, usage);
	return fail(p, "too many arguments (usage: %s %s)", p->opname, usage);
}

/* One op line into @op. Return: 0, -EINVAL (@p's message says why) or -ENOMEM. */
static int parse_line(struct parser *p, char *line, struct op *op)
{
	char *tok[MAX_TOKENS], *rest;
	const struct op_desc *d = NULL;
	int nr, r;

	line += strspn(line, BLANKS);
	snprintf(p->opword, sizeof(p->opword), "%.*s", (int)strcspn(line, BLANKS), line);
	p->opname = p->opword;
	r = take_expect(p, line, op);
	if (r)
		return r;
	rest = line + strcspn(line, BLANKS);
	if (*rest)
		*rest++ = '\0';
	for (size_t i = 0; i < OP__COUNT && !d; i++)
		if (!strcmp(line, op_descs[i].name))
			d = &op_descs[i];
	if (!d)
		return fail(p, "unknown op");
	op->kind = (enum op_kind)(d - op_descs);
	op->line = p->line;

	if (d->flags & OP_D_REST_OF_LINE)
		nr = split_rest(rest, tok, d->nr_args);
	else
		nr = split_words(p, rest, tok);
	if (nr < 0)
		return nr;
	if (!(d->flags & OP_D_OWN_ARGS) && (r = want_args(p, d, nr)))
		return r;
	for (unsigned int i = 0; i < d->nr_args; i++)
		if ((r = parse_arg(p, &d->args[i], tok[i], op)))
			return r;
	return d->parse ? d->parse(p, tok + d->nr_args, nr - (int)d->nr_args, op) : 0;
}

static const struct {
	const char *name;
	unsigned int bit;
} require_names[] = {
	{ "pkeys", SCRIPT_REQ_PKEYS },
	{ "no-pkeys", SCRIPT_REQ_NO_PKEYS },
	{ "zero-page", SCRIPT_REQ_ZERO_PAGE },
	{ "no-zero-page", SCRIPT_REQ_NO_ZERO_PAGE },
	{ "thp", SCRIPT_REQ_THP },
	{ "anon-vma-name", SCRIPT_REQ_ANON_VMA_NAME },
};

bool script_requires_unmet(unsigned int requires, bool pkeys, bool zero_page, bool thp,
			   bool anon_vma_name, char *buf, size_t len)
{
	static const struct {
		unsigned int bit;
		bool want;
		const char *what;
	} checks[] = {
		{ SCRIPT_REQ_PKEYS, true, "protection keys" },
		{ SCRIPT_REQ_NO_PKEYS, false, "no protection keys" },
		{ SCRIPT_REQ_ZERO_PAGE, true, "the zero page" },
		{ SCRIPT_REQ_NO_ZERO_PAGE, false, "no zero page" },
		{ SCRIPT_REQ_THP, true, "THP not \"never\"" },
		{ SCRIPT_REQ_ANON_VMA_NAME, true, "anonymous VMA names" },
	};
	const bool have[] = { pkeys, pkeys, zero_page, zero_page, thp, anon_vma_name };
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(checks); i++) {
		if (!(requires & checks[i].bit) || have[i] == checks[i].want)
			continue;
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 checks[i].what);
	}
	return used > 0;
}

/* `swap SIZE`, `require FEATURE...` or `knobs NAME=VALUE...`; Return: 1 handled, 0 not a directive, -errno. */
static int parse_directive(struct parser *p, char *line)
{
	char *save, *t, *word;
	size_t wlen;
	int n = 0;


	line += strspn(line, BLANKS);
	wlen = strcspn(line, BLANKS);
	if (!((wlen == 4 && !strncmp(line, "swap", 4)) || (wlen == 7 && !strncmp(line, "require", 7)) ||
	      (wlen == 5 && !strncmp(line, "knobs", 5))))
		return 0;	/* an op line: left as it is for parse_line() */
	word = strtok_r(line, BLANKS, &save);
	p->opname = word;
	if (p->s->nr_ops)
		return fail(p, "a directive must come before the first op");
	if (!strcmp(word, "swap")) {
		unsigned long size;

		t = strtok_r(NULL, BLANKS, &save);
		if (!t || strtok_r(NULL, BLANKS, &save))
			return fail(p, "want SIZE");
		if (p->s->swap_bytes)
			return fail(p, "swap is given twice");
		if (get_size(p, t, "size", &size))
			return -EINVAL;
		if (size < (1UL << 20) || size > (64UL << 30) || size % 4096)
			return fail(p, "swap size '%s' out of range (1M to 64G, whole pages)", t);
		p->s->swap_bytes = size;
		return 1;
	}
	if (!strcmp(word, "knobs")) {
		char why[160];

		while ((t = strtok_r(NULL, BLANKS, &save)) && !script_knob_add(p->s, t, why, sizeof(why)))
			n++;
		if (t)
			return fail(p, "%s", why);
		return n ? 1 : fail(p, "want NAME=VALUE...");
	}
	while ((t = strtok_r(NULL, BLANKS, &save))) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(require_names); i++)
			if (!strcmp(t, require_names[i].name))
				break;
		if (i == ARRAY_SIZE(require_names))
			return fail(p, "unknown feature '%s' (pkeys, no-pkeys, zero-page, "
				    "no-zero-page, thp, anon-vma-name)", t);
		p->s->requires |= require_names[i].bit;
		n++;
	}
	if (!n)
		return fail(p, "want FEATURE...");
	return 1;
}

int script_parse_string(const char *path, const char *text, struct script **out,
			char *err, size_t errlen)
{
	struct parser p = { .path = path, .err = err, .errlen = errlen };
	char line[MAX_LINE];
	const char *s = text;
	int ret = 0;

	p.s = vml_zalloc(sizeof(*p.s));
	if (!p.s)
		return -ENOMEM;
	p.s->path = vml_strdup(path);
	if (!p.s->path) {
		ret = -ENOMEM;
		goto out;
	}
	while (*s) {
		size_t n = strcspn(s, "\n");
		struct op op = { 0 }, *ops;
		char *c;

		p.line++;
		p.opname = NULL;
		if (n >= sizeof(line)) {
			ret = fail(&p, "line too long");
			goto out;
		}
		memcpy(line, s, n);
		line[n] = '\0';
		s += n + (s[n] == '\n');
		c = strchr(line, '#');
		if (c)
			*c = '\0';
		if (line[strspn(line, BLANKS)] == '\0')
			continue;
		ret = parse_directive(&p, line);
		if (ret == 1) {
			ret = 0;
			continue;
		}
		if (ret)
			goto out;
		ret = parse_line(&p, line, &op);
		if (ret == -ENOMEM)
			fail(&p, "out of memory");
		if (ret)
			goto out;
		ops = vml_grow_array(p.s->ops, &p.ops_cap, p.s->nr_ops + 1, sizeof(op), 16);
		if (!ops) {
			ret = -ENOMEM;
			fail(&p, "out of memory");
			goto out;
		}
		p.s->ops = ops;
		p.s->ops[p.s->nr_ops++] = op;
	}
out:
	vml_free(p.files);
	if (ret) {
		script_free(p.s);
		return ret;
	}
	*out = p.s;
	return 0;
}

int script_parse_file(const char *path, struct script **out, char *err, size_t errlen)
{
	bool in = !strcmp(path, "-");
	FILE *f = in ? stdin : fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	struct stat st;
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	/* fopen() opens a directory; reading it is what fails. Say so first. */
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: %s", path, strerror(EISDIR));
		if (!in)
			fclose(f);
		return -EISDIR;
	}
	for (;;) {
		char *more;

		if (len > SCRIPT_MAX_BYTES) {
			snprintf(err, errlen, "%s: too large for an op script (over %lu MiB)", path,
				 SCRIPT_MAX_BYTES >> 20);
			ret = -EFBIG;
			goto fail;
		}
		more = vml_grow_array(text, &cap, len + 4097, 1, 16);
		if (!more) {
			snprintf(err, errlen, "%s: out of memory", path);
			ret = -ENOMEM;
			goto fail;
		}
		text = more;
		n = fread(text + len, 1, 4096, f);
		len += n;
		if (n < 4096)
			break;
	}
	if (ferror(f)) {
		ret = errno ? -errno : -EIO;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		goto fail;
	}
	if (!in)
		fclose(f);
	text[len] = '\0';
	if (memchr(text, '\0', len)) {
		snprintf(err, errlen, "%s: not a text file", path);
		vml_free(text);
		return -EINVAL;
	}
	ret = script_parse_string(path, text, out, err, errlen);
	vml_free(text);
	return ret;
fail:
	if (!in)
		fclose(f);
	vml_free(text);
	return ret;
}

void script_free(struct script *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr_strings; i++)
		vml_free(s->strings[i]);
	vml_free(s->strings);
	vml_free(s->ops);
	vml_free(s->path);
	vml_free(s);
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

bool op_same(const struct op *a, const struct op *b)
{
	return a->kind == b->kind && a->addr == b->addr && a->len == b->len &&
	       a->new_len == b->new_len && a->new_addr == b->new_addr && a->prot == b->prot &&
	       a->flags == b->flags && a->placement == b->placement && a->advice == b->advice &&
	       a->access == b->access && a->offset == b->offset && a->size == b->size &&
	       a->shmem == b->shmem && a->memfd == b->memfd && a->child == b->child &&
	       a->has_expect == b->has_expect && (!a->has_expect || a->expect == b->expect) &&
	       same_str(a->file, b->file) && same_str(a->name, b->name);
}

int format_op(const struct op *op, char *buf, size_t len)
{
	const struct op_desc *d = op_desc(op->kind);
	struct out o = { .buf = buf, .len = len };
	char e[32];

	if (len)
		buf[0] = '\0';
	add(&o, "%s", op_kind_name(op->kind));
	for (unsigned int i = 0; d && i < d->nr_args; i++)
		print_arg(&o, op, &d->args[i]);
	if (d && d->print)
		d->print(&o, op);
	if (op->has_expect)
		add(&o, " expect=%s", errno_name(op->expect, e, sizeof(e)));
	return o.pos;
}
