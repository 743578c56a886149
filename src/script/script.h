/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * script.h - op scripts: a small text language that describes a sequence of
 * address-space operations, run unchanged on the model and on a live child
 * process (docs/op-scripts.md).
 *
 * One op a line; `#` starts a comment (anywhere, also inside a `name`
 * string); blank lines are ignored. Sizes are decimal, 0x hex, or either
 * with a K/M/G suffix (x1024^n); addresses are 0x hex. Every op line may end
 * with `expect=ERRNO` (`expect=EINVAL`, `expect=0`) to say how the op must
 * end on every target; without it the op must succeed.
 *
 *   mmap     ADDR LEN PROT FLAGS [file=NAME[@OFF]]
 *   munmap   ADDR LEN
 *   mprotect ADDR LEN PROT
 *   mremap   ADDR OLDLEN NEWLEN [maymove] [to=ADDR|hint=ADDR] [dontunmap]
 *   madvise  ADDR LEN ADVICE     (dontneed hugepage nohugepage pageout willneed
 *                                 cold free guard_install guard_remove collapse
 *                                 populate_read populate_write wipeonfork
 *                                 keeponfork dontfork dofork remove)
 *   process_madvise ADDR LEN ADVICE   (through a pidfd of the process itself)
 *   touch    ADDR LEN read|write
 *   mlock    ADDR LEN [onfault]  munlock ADDR LEN
 *   mlockall FLAGS               (comma list of current, future, onfault; or none)
 *   munlockall
 *   name     ADDR LEN STRING     (rest of the line; `-` clears the name)
 *   file     NAME SIZE [shmem|memfd]
 *   mseal    ADDR LEN
 *   truncate NAME SIZE           ftruncate(2) of a declared file
 *   punch    NAME OFF LEN        fallocate(2) PUNCH_HOLE|KEEP_SIZE of a declared file
 *   clear_refs VALUE             write VALUE (decimal) to /proc/PID/clear_refs
 *   fork
 *   select   child N | parent    (later ops and the views: forked process N, or
 *                                 the script's first process)
 *
 * Directives, before the first op:
 *
 *   swap     SIZE         the script needs SIZE of swap: the live target turns
 *                         on a swap file of that size for the run (root only;
 *                         target_swap.h), the model gets as many swap pages.
 *                         At most once.
 *   require  FEATURE...   the script shows what only some hosts do; on others it
 *                         is skipped. FEATURE: pkeys, no-pkeys, zero-page,
 *                         no-zero-page, thp (THP not "never"), anon-vma-name.
 *   knobs    NAME=VALUE...  transparent-hugepage sysfs knobs for the run: the
 *                         live target sets them (root only; system/settings.h)
 *                         and puts them back afterwards, the model runs as if
 *                         the host had them. NAME: thp, thp_defrag, thp_shmem
 *                         (enabled, defrag, shmem_enabled), hugepages-NkB and
 *                         hugepages-NkB.shmem (that size's enabled and
 *                         shmem_enabled). Each NAME at most once; several
 *                         lines add up.
 *
 * PROT is a string of r, w, x and - (`rw-`, `r--`, `---`, `rx`), or `none`.
 * FLAGS is a comma list of private, shared, anon, populate, fixed, noreplace,
 * hint, noreserve (alias norserve), growsdown, locked, droppable
 * (MAP_DROPPABLE, a mapping type of its own); or `none` (no MAP_* bit at all,
 * which the kernel rejects). `private,shared` is MAP_SHARED_VALIDATE.
 *
 * Processes: `fork` numbers the new process 1, 2, ... in the order of the
 * script's fork ops (whichever process forks); `select child N` makes
 * process N the one later ops act on and the views show, `select parent`
 * the script's first process again. N must name a fork op before it. Files
 * are declared before the first fork (a fork inherits the open files).
 *
 * The parser rejects only what cannot be expressed (unknown op, wrong number
 * of arguments, malformed number, unknown prot/flag/advice, a file used
 * before it is declared or declared twice, an address at or above the top of
 * the user address space). Everything else - unaligned addresses, zero
 * lengths, contradictory flags - is passed to the target, whose kernel (real
 * or modelled) decides; scripts test those errors with expect=.
 *
 * Placement of a mapping (the same rule on every target, target_apply()):
 *   fixed     -> MAP_FIXED
 *   noreplace -> MAP_FIXED_NOREPLACE
 *   hint      -> neither: ADDR is a hint
 *   none of them -> MAP_FIXED_NOREPLACE when [ADDR, ADDR+LEN) is entirely
 *                   unmapped in the target, else MAP_FIXED (an overlay).
 */
#ifndef VML_SCRIPT_SCRIPT_H
#define VML_SCRIPT_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

/* The convention: a range that is free in a fresh process (docs/op-scripts.md). */
#define SCRIPT_RANGE_LO 0x100000000000UL
#define SCRIPT_RANGE_HI 0x200000000000UL
/* x86-64 TASK_SIZE with 4-level page tables: the end of user space. */
#define SCRIPT_TASK_SIZE 0x7ffffffff000UL

enum op_kind {
	OP_MMAP,
	OP_MUNMAP,
	OP_MPROTECT,
	OP_MREMAP,
	OP_MADVISE,
	OP_TOUCH,
	OP_MLOCK,
	OP_MUNLOCK,
	OP_NAME,
	OP_FILE,
	OP_FORK,
	OP_MLOCKALL,
	OP_MUNLOCKALL,
	OP_SELECT,
	OP_PROCESS_MADVISE,
	OP_MSEAL,
	OP_TRUNCATE,
	OP_PUNCH,
	OP_CLEAR_REFS,
	OP__COUNT,
};

/* How an mmap op chooses between a fixed and a hinted address (see above). */
enum op_placement {
	OP_PLACE_AUTO = 0,
	OP_PLACE_FIXED,
	OP_PLACE_NOREPLACE,
	OP_PLACE_HINT,
};

enum op_access {
	OP_ACCESS_READ = 0,
	OP_ACCESS_WRITE,
};

/*
 * One parsed op. Which fields mean something depends on @kind; the others
 * are zero. Numeric values are Linux's own (PROT_*, MAP_*, MREMAP_*, MADV_*).
 */
struct op {
	enum op_kind kind;
	unsigned int line;		/* 1-based source line; 0 for generated ops */
	unsigned long addr;		/* all but file/fork; mremap: the old address */
	unsigned long len;		/* all but file/fork; mremap: the old length */
	unsigned long new_len;		/* mremap */
	unsigned long new_addr;		/* mremap to= (with MREMAP_FIXED) */
	int prot;			/* mmap, mprotect: PROT_* */
	int flags;			/* mmap: MAP_* but the placement; mremap: MREMAP_*;
					 * mlock: MLOCK_ONFAULT; mlockall: MCL_*;
					 * clear_refs: the value written */
	enum op_placement placement;	/* mmap */
	int advice;			/* madvise, process_madvise: MADV_* */
	enum op_access access;		/* touch */
	const char *file;		/* mmap file=, file, truncate, punch: the name
					 * (owned by the script) */
	unsigned long offset;		/* mmap, punch: file offset in bytes */
	unsigned long size;		/* file, truncate: size in bytes */
	bool shmem;			/* file: a tmpfs (shmem) file */
	bool memfd;			/* file: memfd_create(NAME) in the process (shmem too) */
	unsigned int child;		/* select: the process, 0 (parent) or a fork's number */
	const char *name;		/* name: the string, NULL to clear (owned by the script) */
	bool has_expect;
	int expect;			/* 0 or -errno, when has_expect */
};

/*
 * The arguments of an op. Each op's fixed arguments, in order, are a row of
 * script.c's table of ops; what may follow them is the op's own. A type has
 * one parser and one printer there; vmalock fuzz draws the arguments of
 * most ops by type from the same rows (src/race/fuzz_gen.c).
 */
enum op_arg_type {
	OP_ARG_ADDR,		/* unsigned long: 0x hex, below SCRIPT_TASK_SIZE */
	OP_ARG_SIZE,		/* unsigned long: a size */
	OP_ARG_PROT,		/* int: PROT_* */
	OP_ARG_MAP_FLAGS,	/* int: MAP_* but the placement; and the placement */
	OP_ARG_ADVICE,		/* int: MADV_*, by name */
	OP_ARG_ACCESS,		/* enum op_access: read or write */
	OP_ARG_MCL_FLAGS,	/* int: MCL_*, a comma list or none */
	OP_ARG_NEW_FILE,	/* const char *: the name of the file the op declares */
	OP_ARG_FILE,		/* const char *: the name of a file declared before */
	OP_ARG_INT,		/* int: a decimal number, maybe negative */
};

struct op_arg {
	enum op_arg_type type;
	const char *usage;	/* its word in a usage line: "ADDR", "OLDLEN" */
	const char *what;	/* its name in messages: "address", "old length" */
	size_t field;		/* where it goes: offsetof(struct op, ...) */
};

/* The fixed arguments of @kind, in order: *@nr of them. */
const struct op_arg *op_args(enum op_kind kind, size_t *nr);

/* A word a script spells a value with, and the value. */
struct op_word {
	const char *name;
	int value;
};

/*
 * op_arg_words - the words an argument of @type is spelt with (the advices,
 * the flags), in format_op's order: *@nr of them; NULL for a type that has none.
 */
const struct op_word *op_arg_words(enum op_arg_type type, size_t *nr);

/* `require` features (script_requires_met()). */
enum script_require {
	SCRIPT_REQ_PKEYS = 1 << 0,
	SCRIPT_REQ_NO_PKEYS = 1 << 1,
	SCRIPT_REQ_ZERO_PAGE = 1 << 2,
	SCRIPT_REQ_NO_ZERO_PAGE = 1 << 3,
	SCRIPT_REQ_THP = 1 << 4,
	SCRIPT_REQ_ANON_VMA_NAME = 1 << 5,
};

/* One `knobs` setting: a knob by its settings name, and the word to write. */
struct script_knob {
	char name[32];			/* thp, hugepages-64kB, hugepages-64kB.shmem, ... */
	char value[16];			/* always, never, ... */
};
#define SCRIPT_MAX_KNOBS 32

/* The sysfs file a knob's name stands for (transparent_hugepage/...). */
enum script_knob_file {
	KNOB_THP,		/* enabled */
	KNOB_THP_DEFRAG,	/* defrag */
	KNOB_THP_SHMEM,		/* shmem_enabled */
	KNOB_MTHP,		/* hugepages-NkB/enabled */
	KNOB_MTHP_SHMEM,	/* hugepages-NkB/shmem_enabled */
};

struct script {
	char *path;			/* as given; used in messages */
	unsigned long swap_bytes;	/* `swap SIZE`; 0: none */
	unsigned int requires;		/* enum script_require bits */
	struct script_knob knobs[SCRIPT_MAX_KNOBS];	/* `knobs`, in the order given */
	size_t nr_knobs;
	struct op *ops;
	size_t nr_ops;
	char **strings;			/* every string the ops point to */
	size_t nr_strings;
};

/* The largest script file read: anything bigger is not a script. */
#define SCRIPT_MAX_BYTES (16UL << 20)

/*
 * script_parse_file - read and parse an op script; "-" reads standard input.
 * A directory, or a file over SCRIPT_MAX_BYTES, is refused (-EISDIR, -EFBIG).
 * Return: 0 and *@out; -errno if the file cannot be read (@err says so), or
 *         -EINVAL on a bad line, with @err set to `FILE:LINE: OP: reason`.
 */
int script_parse_file(const char *path, struct script **out, char *err, size_t errlen);
/* Same, from a string; @path is only used in messages. */
int script_parse_string(const char *path, const char *text, struct script **out,
			char *err, size_t errlen);
void script_free(struct script *s);

/*
 * script_requires_unmet - the `require` features @requires that a host with
 * the given properties lacks, as one phrase in @buf ("protection keys").
 * Return: true if any is unmet.
 */
bool script_requires_unmet(unsigned int requires, bool pkeys, bool zero_page, bool thp,
			   bool anon_vma_name, char *buf, size_t len);

/*
 * script_knob_file - which sysfs file the knob @name is, and for a size's
 * (hugepages-NkB[.shmem]) that size in *@kb (else 0).
 * Return: 0, or -EINVAL for no knob of that name.
 */
int script_knob_file(const char *name, enum script_knob_file *file, unsigned int *kb);
/*
 * script_knob_add - add `knobs` token @tok (NAME=VALUE) to @s, checking the
 * name, the value (one of the words the knob's file takes) and that the
 * name is new. Return: 0, or -EINVAL with @why saying what is wrong.
 */
int script_knob_add(struct script *s, const char *tok, char *why, size_t len);

/* An op's keyword ("mmap", ...). */
const char *op_kind_name(enum op_kind kind);

/*
 * format_op - print @op back as one script line (no newline), canonical
 * spelling: sizes with the largest exact K/M/G suffix, addresses 0x hex.
 * Parsing the result gives the same op (line number aside).
 * Return: the length the line has (snprintf-style).
 */
int format_op(const struct op *op, char *buf, size_t len);

/*
 * op_same - do @a and @b say the same (every field but the line; strings by
 * their text; expect only where there is one)? What format_op promises of a
 * line parsed back.
 */
bool op_same(const struct op *a, const struct op *b);

/* "EINVAL" for -EINVAL, "0" for 0, or a number; for messages and format_op. */
const char *errno_name(int err, char *buf, size_t len);
/* "EINVAL" or "-22" or "22" -> -22; "0" -> 0. Return: 0, or -EINVAL if unknown. */
int errno_parse(const char *s, int *out);

/* Parse a size (decimal, 0x hex, optional K/M/G suffix). Return: 0 or -EINVAL. */
int parse_size(const char *s, unsigned long *out);
/* Parse an address (0x hex). Return: 0 or -EINVAL. */
int parse_addr(const char *s, unsigned long *out);
/* Parse PROT (`rw-`, `none`). Return: 0 or -EINVAL. */
int parse_prot(const char *s, int *out);

#endif /* VML_SCRIPT_SCRIPT_H */
