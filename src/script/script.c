// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * script.c - the op-script parser and printer (the format is in script.h).
 *
 * The parser is deliberately permissive about values: it converts what the
 * line says into the numbers the syscall would get and leaves judging them to
 * the target, so a script can ask the kernel and the model the same invalid
 * question and compare answers. It rejects only lines that do not say
 * anything a syscall could be asked.
 */
#include <errno.h>
#include <stdarg.h>
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

static const char *const kind_names[OP__COUNT] = {
	[OP_MMAP] = "mmap",
	[OP_MUNMAP] = "munmap",
	[OP_MPROTECT] = "mprotect",
	[OP_MREMAP] = "mremap",
	[OP_MADVISE] = "madvise",
	[OP_TOUCH] = "touch",
	[OP_MLOCK] = "mlock",
	[OP_MUNLOCK] = "munlock",
	[OP_NAME] = "name",
	[OP_FILE] = "file",
	[OP_FORK] = "fork",
	[OP_MLOCKALL] = "mlockall",
	[OP_MUNLOCKALL] = "munlockall",
	[OP_SELECT] = "select",
	[OP_PROCESS_MADVISE] = "process_madvise",
};

const char *op_kind_name(enum op_kind kind)
{
	return (unsigned int)kind < OP__COUNT ? kind_names[kind] : "?";
}

static const struct {
	const char *name;
	int value;
} advices[] = {
	{ "dontneed", MADV_DONTNEED },
	{ "hugepage", MADV_HUGEPAGE },
	{ "nohugepage", MADV_NOHUGEPAGE },
	{ "pageout", MADV_PAGEOUT },
	{ "willneed", MADV_WILLNEED },
	{ "cold", MADV_COLD },
	{ "free", MADV_FREE },
	{ "guard_install", MADV_GUARD_INSTALL },
	{ "guard_remove", MADV_GUARD_REMOVE },
};

/* mlockall(2) flags, in format_op's order. */
static const struct {
	const char *name;
	int value;
} mcl_flags[] = {
	{ "current", MCL_CURRENT },
	{ "future", MCL_FUTURE },
	{ "onfault", MCL_ONFAULT },
};

/* mmap flags that map one-to-one to a MAP_* bit, in format_op's order. */
static const struct {
	const char *name;
	int value;
} map_flags[] = {
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

#define E(x) { #x, x }
static const struct {
	const char *name;
	int value;
} errnos[] = {
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

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	n = vml_realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

/* Keep a copy of @str (length @n) in the script; the ops point to it. */
static const char *keep_string(struct parser *p, const char *str, size_t n)
{
	char *c;

	if (grow((void **)&p->s->strings, &p->strings_cap, p->s->nr_strings + 1, sizeof(char *)))
		return NULL;
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

static int want_args(struct parser *p, int ntok, int min, int max, const char *usage)
{
	if (ntok - 1 < min)
		return fail(p, "missing argument (usage: %s %s)", p->opname, usage);
	if (ntok - 1 > max)
		return fail(p, "too many arguments (usage: %s %s)", p->opname, usage);
	return 0;
}

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
		enum op_placement pl = OP_PLACE_AUTO;
		size_t i;

		for (i = 0; i < ARRAY_SIZE(map_flags); i++) {
			if (!strcmp(f, map_flags[i].name)) {
				op->flags |= map_flags[i].value;
				break;
			}
		}
		if (i < ARRAY_SIZE(map_flags))
			continue;
		if (!strcmp(f, "norserve")) {
			op->flags |= MAP_NORESERVE;
			continue;
		}
		for (i = 1; i < ARRAY_SIZE(placement_names); i++)
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
		size_t i;

		for (i = 0; i < ARRAY_SIZE(mcl_flags); i++)
			if (!strcmp(f, mcl_flags[i].name))
				break;
		if (i == ARRAY_SIZE(mcl_flags))
			return fail(p, "unknown flag '%s' (current, future, onfault, or none)", f);
		op->flags |= mcl_flags[i].value;
	}
	if (!op->flags)
		return fail(p, "no flags (current, future, onfault, or none)");
	return 0;
}

static int get_advice(struct parser *p, const char *tok, struct op *op)
{
	for (size_t i = 0; i < ARRAY_SIZE(advices); i++) {
		if (!strcmp(tok, advices[i].name)) {
			op->advice = advices[i].value;
			return 0;
		}
	}
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

/*
 * The `name` op: the name is the rest of the line after ADDR and LEN (with a
 * trailing expect= already removed), trimmed.
 */
static int parse_name(struct parser *p, char *rest, struct op *op)
{
	char *tok[2], *s = rest, *end;

	for (int i = 0; i < 2; i++) {
		s += strspn(s, BLANKS);
		if (!*s)
			return want_args(p, i + 1, 3, 3, "ADDR LEN STRING|-");
		tok[i] = s;
		s += strcspn(s, BLANKS);
		if (*s)
			*s++ = '\0';
	}
	s += strspn(s, BLANKS);
	end = s + strlen(s);
	while (end > s && strchr(BLANKS, end[-1]))
		*--end = '\0';
	if (!*s)
		return want_args(p, 3, 3, 3, "ADDR LEN STRING|-");
	if (get_addr(p, tok[0], "address", &op->addr) || get_size(p, tok[1], "length", &op->len))
		return -EINVAL;
	if (strcmp(s, "-")) {
		op->name = keep_string(p, s, strlen(s));
		if (!op->name)
			return -ENOMEM;
	}
	return 0;
}

static int parse_line(struct parser *p, char *line, struct op *op)
{
	char *tok[MAX_TOKENS], *save, *t, *after_op;
	char opword[32];
	unsigned long n;
	int ntok = 0;
	size_t i;
	int r;

	line += strspn(line, BLANKS);
	snprintf(opword, sizeof(opword), "%.*s", (int)strcspn(line, BLANKS), line);
	p->opname = opword;

	/* A trailing expect=ERRNO may end any op line; take it off first. */
	t = line + strlen(line);
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

	after_op = line + strcspn(line, BLANKS);
	if (*after_op)
		*after_op++ = '\0';
	for (i = 0; i < OP__COUNT; i++)
		if (!strcmp(line, kind_names[i]))
			break;
	if (i == OP__COUNT)
		return fail(p, "unknown op");
	op->kind = i;
	op->line = p->line;

	if (op->kind == OP_NAME)
		return parse_name(p, after_op, op);

	tok[ntok++] = line;
	for (t = strtok_r(after_op, BLANKS, &save); t; t = strtok_r(NULL, BLANKS, &save)) {
		if (ntok == MAX_TOKENS)
			return fail(p, "too many arguments");
		if (!strncmp(t, "expect=", 7))
			return fail(p, "expect= must end the line");
		tok[ntok++] = t;
	}

	switch (op->kind) {
	case OP_MMAP:
		if ((r = want_args(p, ntok, 4, 5, "ADDR LEN PROT FLAGS [file=NAME[@OFF]]")))
			return r;
		if (get_addr(p, tok[1], "address", &op->addr) ||
		    get_size(p, tok[2], "length", &op->len) || get_prot(p, tok[3], &op->prot) ||
		    parse_mmap_flags(p, tok[4], op))
			return -EINVAL;
		if (ntok == 6 && parse_file_arg(p, tok[5], op))
			return -EINVAL;
		return 0;
	case OP_MLOCK:
		if ((r = want_args(p, ntok, 2, 3, "ADDR LEN [onfault]")))
			return r;
		if (ntok == 4) {
			if (strcmp(tok[3], "onfault"))
				return fail(p, "unknown argument '%s' (want onfault)", tok[3]);
			op->flags = MLOCK_ONFAULT;
		}
		/* fallthrough */
	case OP_MUNMAP:
	case OP_MUNLOCK:
		if (op->kind != OP_MLOCK && (r = want_args(p, ntok, 2, 2, "ADDR LEN")))
			return r;
		if (get_addr(p, tok[1], "address", &op->addr) ||
		    get_size(p, tok[2], "length", &op->len))
			return -EINVAL;
		return 0;
	case OP_MPROTECT:
		if ((r = want_args(p, ntok, 3, 3, "ADDR LEN PROT")))
			return r;
		if (get_addr(p, tok[1], "address", &op->addr) ||
		    get_size(p, tok[2], "length", &op->len) || get_prot(p, tok[3], &op->prot))
			return -EINVAL;
		return 0;
	case OP_MREMAP:
		r = want_args(p, ntok, 3, 6,
			      "ADDR OLDLEN NEWLEN [maymove] [to=ADDR|hint=ADDR] [dontunmap]");
		if (r)
			return r;
		if (get_addr(p, tok[1], "address", &op->addr) ||
		    get_size(p, tok[2], "old length", &op->len) ||
		    get_size(p, tok[3], "new length", &op->new_len))
			return -EINVAL;
		for (int k = 4; k < ntok; k++)
			if (parse_mremap_arg(p, tok[k], op))
				return -EINVAL;
		return 0;
	case OP_MADVISE:
	case OP_PROCESS_MADVISE:
		if ((r = want_args(p, ntok, 3, 3, "ADDR LEN ADVICE")))
			return r;
		if (get_addr(p, tok[1], "address", &op->addr) ||
		    get_size(p, tok[2], "length", &op->len) || get_advice(p, tok[3], op))
			return -EINVAL;
		return 0;
	case OP_TOUCH:
		if ((r = want_args(p, ntok, 3, 3, "ADDR LEN read|write")))
			return r;
		if (get_addr(p, tok[1], "address", &op->addr) ||
		    get_size(p, tok[2], "length", &op->len))
			return -EINVAL;
		if (!strcmp(tok[3], "read"))
			op->access = OP_ACCESS_READ;
		else if (!strcmp(tok[3], "write"))
			op->access = OP_ACCESS_WRITE;
		else
			return fail(p, "unknown access '%s' (read or write)", tok[3]);
		return 0;
	case OP_FILE:
		if ((r = want_args(p, ntok, 2, 3, "NAME SIZE [shmem|memfd]")))
			return r;
		if (!valid_file_name(tok[1]))
			return fail(p, "bad file name '%s' (no '/', '=', '@' or spaces)", tok[1]);
		if (find_file(p, tok[1], strlen(tok[1])))
			return fail(p, "file '%s' is already declared", tok[1]);
		if (p->nr_forks)
			return fail(p, "files are declared before the first fork");
		if (get_size(p, tok[2], "size", &op->size))
			return -EINVAL;
		if (ntok == 4) {
			if (strcmp(tok[3], "shmem") && strcmp(tok[3], "memfd"))
				return fail(p, "unknown argument '%s' (want shmem or memfd)",
					    tok[3]);
			op->shmem = true;	/* a memfd is a tmpfs file too */
			op->memfd = tok[3][0] == 'm';
		}
		op->file = keep_string(p, tok[1], strlen(tok[1]));
		if (!op->file ||
		    grow((void **)&p->files, &p->files_cap, p->nr_files + 1, sizeof(char *)))
			return -ENOMEM;
		p->files[p->nr_files++] = op->file;
		return 0;
	case OP_FORK:
		if ((r = want_args(p, ntok, 0, 0, "")))
			return r;
		p->nr_forks++;
		return 0;
	case OP_MLOCKALL:
		if ((r = want_args(p, ntok, 1, 1, "current,future,onfault|none")))
			return r;
		return parse_mcl_flags(p, tok[1], op);
	case OP_MUNLOCKALL:
		return want_args(p, ntok, 0, 0, "");
	case OP_SELECT:
		if (ntok == 2 && !strcmp(tok[1], "parent"))
			return 0;
		if (ntok != 3 || strcmp(tok[1], "child"))
			return fail(p, "want `select child N` or `select parent`");
		if (parse_size(tok[2], &n) || n == 0 || n > 1000000)
			return fail(p, "child '%s' is not a fork number (1, 2, ...)", tok[2]);
		if (n > p->nr_forks)
			return fail(p, "no fork %lu before this line", n);
		op->child = (unsigned int)n;
		return 0;
	case OP_NAME:
	case OP__COUNT:
		break;
	}
	VML_BUG_ON(1);
	return -EINVAL;
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
		struct op op = { 0 };
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
		if (grow((void **)&p.s->ops, &p.ops_cap, p.s->nr_ops + 1, sizeof(op))) {
			ret = -ENOMEM;
			fail(&p, "out of memory");
			goto out;
		}
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
		if (len > SCRIPT_MAX_BYTES) {
			snprintf(err, errlen, "%s: too large for an op script (over %lu MiB)", path,
				 SCRIPT_MAX_BYTES >> 20);
			ret = -EFBIG;
			goto fail;
		}
		if (grow((void **)&text, &cap, len + 4097, 1)) {
			snprintf(err, errlen, "%s: out of memory", path);
			ret = -ENOMEM;
			goto fail;
		}
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

/* snprintf that appends, tracking the length the whole line would have. */
__attribute__((format(printf, 4, 5)))
static void add(char *buf, size_t len, int *pos, const char *fmt, ...)
{
	va_list ap;
	size_t off = (size_t)*pos < len ? (size_t)*pos : len;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + off, len - off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos += n;
}

int format_op(const struct op *op, char *buf, size_t len)
{
	char a[32], b[32], c[32], pr[4];
	int pos = 0;
	bool first = true;

	if (len)
		buf[0] = '\0';
	add(buf, len, &pos, "%s", op_kind_name(op->kind));
	switch (op->kind) {
	case OP_MMAP:
		add(buf, len, &pos, " 0x%lx %s %s ", op->addr, fmt_size(op->len, a, sizeof(a)),
		    fmt_prot(op->prot, pr));
		for (size_t i = 0; i < ARRAY_SIZE(map_flags); i++) {
			if (op->flags & map_flags[i].value) {
				add(buf, len, &pos, "%s%s", first ? "" : ",", map_flags[i].name);
				first = false;
			}
		}
		if (op->placement != OP_PLACE_AUTO) {
			add(buf, len, &pos, "%s%s", first ? "" : ",",
			    placement_names[op->placement]);
			first = false;
		}
		if (first)
			add(buf, len, &pos, "none");
		if (op->file) {
			add(buf, len, &pos, " file=%s", op->file);
			if (op->offset)
				add(buf, len, &pos, "@%s", fmt_size(op->offset, a, sizeof(a)));
		}
		break;
	case OP_MUNMAP:
	case OP_MLOCK:
	case OP_MUNLOCK:
		add(buf, len, &pos, " 0x%lx %s", op->addr, fmt_size(op->len, a, sizeof(a)));
		if (op->kind == OP_MLOCK && (op->flags & MLOCK_ONFAULT))
			add(buf, len, &pos, " onfault");
		break;
	case OP_MLOCKALL:
		for (size_t i = 0; i < ARRAY_SIZE(mcl_flags); i++) {
			if (op->flags & mcl_flags[i].value) {
				add(buf, len, &pos, "%s%s", first ? " " : ",", mcl_flags[i].name);
				first = false;
			}
		}
		if (first)
			add(buf, len, &pos, " none");
		break;
	case OP_SELECT:
		if (op->child)
			add(buf, len, &pos, " child %u", op->child);
		else
			add(buf, len, &pos, " parent");
		break;
	case OP_MPROTECT:
		add(buf, len, &pos, " 0x%lx %s %s", op->addr, fmt_size(op->len, a, sizeof(a)),
		    fmt_prot(op->prot, pr));
		break;
	case OP_MREMAP:
		add(buf, len, &pos, " 0x%lx %s %s", op->addr, fmt_size(op->len, a, sizeof(a)),
		    fmt_size(op->new_len, b, sizeof(b)));
		if (op->flags & MREMAP_MAYMOVE)
			add(buf, len, &pos, " maymove");
		if (op->flags & MREMAP_FIXED)
			add(buf, len, &pos, " to=0x%lx", op->new_addr);
		else if (op->new_addr)
			add(buf, len, &pos, " hint=0x%lx", op->new_addr);
		if (op->flags & MREMAP_DONTUNMAP)
			add(buf, len, &pos, " dontunmap");
		break;
	case OP_MADVISE:
	case OP_PROCESS_MADVISE:
		add(buf, len, &pos, " 0x%lx %s ", op->addr, fmt_size(op->len, a, sizeof(a)));
		for (size_t i = 0; i < ARRAY_SIZE(advices); i++)
			if (advices[i].value == op->advice)
				add(buf, len, &pos, "%s", advices[i].name);
		break;
	case OP_TOUCH:
		add(buf, len, &pos, " 0x%lx %s %s", op->addr, fmt_size(op->len, a, sizeof(a)),
		    op->access == OP_ACCESS_WRITE ? "write" : "read");
		break;
	case OP_NAME:
		add(buf, len, &pos, " 0x%lx %s %s", op->addr, fmt_size(op->len, a, sizeof(a)),
		    op->name ? op->name : "-");
		break;
	case OP_FILE:
		add(buf, len, &pos, " %s %s%s", op->file, fmt_size(op->size, a, sizeof(a)),
		    op->memfd ? " memfd" : op->shmem ? " shmem" : "");
		break;
	case OP_FORK:
	case OP_MUNLOCKALL:
	case OP__COUNT:
		break;
	}
	if (op->has_expect)
		add(buf, len, &pos, " expect=%s", errno_name(op->expect, c, sizeof(c)));
	return pos;
}
