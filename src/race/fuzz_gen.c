// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_gen.c - random op sequences for differential fuzzing (differential.h).
 *
 * Addresses: mostly page-aligned inside the window, drawn from the current
 * VMAs' boundaries (a page either side too) and insides; sometimes
 * unaligned, sometimes just outside the window. Lengths: mostly a few
 * pages or up to a VMA boundary; sometimes zero, unaligned, 2 MiB, or up to
 * the end of the script range. Every range stays inside the script range,
 * so no op can reach the live child's own mappings - but mlockall(), which
 * acts on the whole process, as the model's whole address space.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "race/differential.h"
#include "spaces/view.h"
#include "util/alloc.h"
#include "util/compiler.h"
#include "util/linux_compat.h"

#define PG 4096UL
#define WIN_LO SCRIPT_RANGE_LO
#define WIN_HI (SCRIPT_RANGE_LO + FUZZ_WINDOW_PAGES * PG)

static const char *const file_names[2] = { "f0", "s0" };

int fuzz_gen_init(struct fuzz_gen *g, uint64_t seed, uint64_t seq)
{
	memset(g, 0, sizeof(*g));
	g->rnd = vml_rand_init(seed, seq + 1);
	g->cap = 64;
	g->start = vml_malloc(g->cap * sizeof(*g->start));
	g->end = vml_malloc(g->cap * sizeof(*g->end));
	if (!g->start || !g->end) {
		fuzz_gen_free(g);
		return -ENOMEM;
	}
	return 0;
}

void fuzz_gen_free(struct fuzz_gen *g)
{
	vml_free(g->start);
	vml_free(g->end);
	g->start = g->end = NULL;
}

size_t fuzz_gen_prologue(struct op *ops, size_t max)
{
	if (max < 2)
		return 0;
	ops[0] = (struct op){ .kind = OP_FILE, .file = file_names[0], .size = FUZZ_FILE_SIZE };
	ops[1] = (struct op){ .kind = OP_FILE, .file = file_names[1], .size = FUZZ_FILE_SIZE,
			      .shmem = true };
	return 2;
}

/* The VMAs of the script range in @maps. */
static int load_layout(struct fuzz_gen *g, const char *maps)
{
	const char *s = maps;

	g->nr = 0;
	while (s && *s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		struct maps_line ml;

		if (maps_line_parse(s, len, &ml) && ml.start >= SCRIPT_RANGE_LO &&
		    ml.end <= SCRIPT_RANGE_HI) {
			if (g->nr == g->cap) {
				size_t cap = g->cap * 2;
				unsigned long *ns = vml_realloc(g->start, cap * sizeof(*ns));

				if (!ns)
					return -ENOMEM;
				g->start = ns;
				ns = vml_realloc(g->end, cap * sizeof(*ns));
				if (!ns)
					return -ENOMEM;
				g->end = ns;
				g->cap = cap;
			}
			g->start[g->nr] = ml.start;
			g->end[g->nr++] = ml.end;
		}
		s = nl ? nl + 1 : NULL;
	}
	return 0;
}

/* Uniform in [0, n); 0 when n is 0. */
static uint64_t below(struct fuzz_gen *g, uint64_t n)
{
	return n ? vml_rand_below(&g->rnd, n) : 0;
}

/* true with probability @pct percent */
static bool chance(struct fuzz_gen *g, unsigned int pct)
{
	return below(g, 100) < pct;
}

static unsigned long pick_addr(struct fuzz_gen *g)
{
	unsigned long a;
	unsigned int r = below(g, 100);

	if (g->nr && r < 45) {
		size_t i = below(g, g->nr);

		a = chance(g, 50) ? g->start[i] : g->end[i];
		if (chance(g, 30))
			a += chance(g, 50) ? PG : -PG;
	} else if (g->nr && r < 65) {
		size_t i = below(g, g->nr);

		a = g->start[i] + below(g, (g->end[i] - g->start[i]) / PG) * PG;
	} else if (r < 92) {
		a = WIN_LO + below(g, FUZZ_WINDOW_PAGES) * PG;
	} else if (r < 96) {
		a = WIN_LO + below(g, FUZZ_WINDOW_PAGES) * PG + 1 + below(g, PG - 1);
	} else {
		a = chance(g, 50) ? WIN_HI + below(g, 8) * PG : WIN_LO + 0x40000000UL;
	}
	if (a < SCRIPT_RANGE_LO || a >= SCRIPT_RANGE_HI)
		a = WIN_LO;
	return a;
}

/* The end of the VMA containing @addr or the start of the next one; 0 if none. */
static unsigned long next_boundary(struct fuzz_gen *g, unsigned long addr)
{
	unsigned long best = 0;

	for (size_t i = 0; i < g->nr; i++) {
		unsigned long b = g->start[i] > addr ? g->start[i] : g->end[i];

		if (b > addr && (!best || b < best))
			best = b;
	}
	return best;
}

static unsigned long pick_len(struct fuzz_gen *g, unsigned long addr)
{
	unsigned int r = below(g, 100);
	unsigned long len, b;

	if (r < 45) {
		len = (1 + below(g, 8)) * PG;
	} else if (r < 65) {
		b = next_boundary(g, addr);
		len = b ? b - addr : (1 + below(g, 8)) * PG;
		if (b && chance(g, 40))
			len += chance(g, 50) ? PG : (len > PG ? -PG : 0);
	} else if (r < 77) {
		len = (9 + below(g, 56)) * PG;
	} else if (r < 82) {
		len = 0;
	} else if (r < 87) {
		len = below(g, 8) * PG + 1 + below(g, PG - 1);
	} else if (r < 93) {
		len = 2UL << 20;
	} else if (r < 99) {
		len = WIN_HI + (1UL << 20) - addr;	/* past the window */
	} else {
		/* to the end of the script range: rare, the model walks it page by page */
		len = SCRIPT_RANGE_HI - addr;
	}
	if (addr + len > SCRIPT_RANGE_HI || addr + len < addr)
		len = SCRIPT_RANGE_HI - addr;
	return len;
}

static int pick_prot(struct fuzz_gen *g)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_READ, PROT_READ,
		PROT_NONE, PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE | PROT_EXEC, PROT_WRITE,
		PROT_EXEC,
	};

	return prots[below(g, ARRAY_SIZE(prots))];
}

static void gen_mmap(struct fuzz_gen *g, struct op *op)
{
	unsigned int r = below(g, 100);

	op->addr = pick_addr(g);
	op->len = pick_len(g, op->addr);
	if (op->len > (8UL << 20) && chance(g, 90))
		op->len = (1 + below(g, 16)) * PG;	/* huge mappings: rarely */
	if (g->future_locked && op->len > 64 * PG)
		op->len = (1 + below(g, 16)) * PG;	/* mlockall(MCL_FUTURE) populates it */
	op->prot = pick_prot(g);
	if (r < 60)
		op->flags = MAP_PRIVATE;
	else if (r < 92)
		op->flags = MAP_SHARED;
	else if (r < 96)
		op->flags = MAP_PRIVATE | MAP_SHARED;	/* MAP_SHARED_VALIDATE */
	else
		op->flags = 0;
	if (chance(g, 35)) {
		op->file = file_names[below(g, 2)];
		op->offset = below(g, 20) * PG;
		if (chance(g, 5))
			op->offset += 1 + below(g, PG - 1);
		if (chance(g, 5))
			op->flags |= MAP_ANONYMOUS;
	} else if (chance(g, 96)) {
		op->flags |= MAP_ANONYMOUS;
	}
	/* populating and locking fault every page in: small mappings only */
	if (chance(g, 8) && op->len <= 64 * PG)
		op->flags |= MAP_POPULATE;
	if (chance(g, 5))
		op->flags |= MAP_NORESERVE;
	if (chance(g, 3))
		op->flags |= MAP_GROWSDOWN;
	if (chance(g, 3) && op->len <= 64 * PG)
		op->flags |= MAP_LOCKED;
	/* MAP_DROPPABLE is a mapping type of its own: anonymous memory only */
	if (chance(g, 4) && !op->file)
		op->flags = (op->flags & ~(MAP_PRIVATE | MAP_SHARED)) | MAP_DROPPABLE;
	r = below(g, 100);
	op->placement = r < 55 ? OP_PLACE_AUTO : r < 80 ? OP_PLACE_FIXED :
			r < 95 ? OP_PLACE_NOREPLACE : OP_PLACE_HINT;
}

static void gen_mremap(struct fuzz_gen *g, struct op *op)
{
	unsigned int r = below(g, 100);

	op->addr = pick_addr(g);
	op->len = pick_len(g, op->addr);
	if (op->len > (64 * PG) && chance(g, 90))
		op->len = (1 + below(g, 8)) * PG;
	if (r < 20) {				/* shrink in place */
		op->new_len = op->len > PG ? op->len - (1 + below(g, op->len / PG - 1)) * PG : 0;
	} else if (r < 40) {			/* grow in place */
		op->new_len = op->len + (1 + below(g, 8)) * PG;
	} else if (r < 55) {			/* grow, may move */
		op->new_len = op->len + (1 + below(g, 8)) * PG;
		op->flags = MREMAP_MAYMOVE;
	} else if (r < 85) {			/* move to a fixed address (several VMAs: 6.17+) */
		op->new_len = chance(g, 70) ? op->len : (1 + below(g, 8)) * PG;
		op->flags = MREMAP_MAYMOVE | MREMAP_FIXED;
		op->new_addr = pick_addr(g);
		if (chance(g, 5))
			op->flags = MREMAP_FIXED;	/* without maymove: EINVAL */
	} else {				/* DONTUNMAP */
		op->new_len = chance(g, 85) ? op->len : op->len + PG;
		op->flags = MREMAP_MAYMOVE | MREMAP_DONTUNMAP;
		if (chance(g, 70)) {
			op->flags |= MREMAP_FIXED;
			op->new_addr = pick_addr(g);
		} else if (chance(g, 70)) {
			op->new_addr = pick_addr(g);	/* a hint: used where it is free */
		}
		if (chance(g, 5))
			op->flags = MREMAP_DONTUNMAP;	/* without maymove: EINVAL */
	}
	if (op->new_len > 64 * PG)
		op->new_len = 64 * PG;
	if (op->new_addr && op->new_addr + op->new_len > SCRIPT_RANGE_HI)
		op->new_addr = WIN_LO;
}

/* Any advice the script language names (script.c's list: the parser's own). */
static int pick_advice(struct fuzz_gen *g)
{
	size_t nr;
	const struct op_word *adv = op_arg_words(OP_ARG_ADVICE, &nr);

	return adv[below(g, nr)].value;
}

/*
 * The op's fixed arguments, in the order script.c's table lists them, each
 * drawn by its type: an address, a length from it, a protection, an advice.
 */
static void draw_args(struct fuzz_gen *g, struct op *op)
{
	size_t nr;
	const struct op_arg *args = op_args(op->kind, &nr);

	for (size_t i = 0; i < nr; i++) {
		void *field = (char *)op + args[i].field;

		switch (args[i].type) {
		case OP_ARG_ADDR:
			*(unsigned long *)field = pick_addr(g);
			break;
		case OP_ARG_SIZE:
			*(unsigned long *)field = pick_len(g, op->addr);
			break;
		case OP_ARG_PROT:
			*(int *)field = pick_prot(g);
			break;
		case OP_ARG_ADVICE:
			*(int *)field = pick_advice(g);
			break;
		default:
			VML_BUG_ON(1);	/* drawn by the op's own function (draws[]) */
		}
	}
}

/* madvise or process_madvise, after draw_args(). */
static void clamp_guard(struct fuzz_gen *g, struct op *op)
{
	/* guard markers take a page-table entry each: small ranges only */
	if (op->advice == MADV_GUARD_INSTALL && op->len > 64 * PG)
		op->len = (1 + below(g, 16)) * PG;
}

/* The bytes the layout maps: what mlockall(MCL_CURRENT) would fault in. */
static unsigned long mapped_bytes(const struct fuzz_gen *g)
{
	unsigned long sum = 0;

	for (size_t i = 0; i < g->nr; i++)
		sum += g->end[i] - g->start[i];
	return sum;
}

/*
 * mlockall or munlockall. MCL_CURRENT faults in every mapping, so only
 * while the layout is small; MCL_FUTURE locks (and faults in) every later
 * mapping, so the generator keeps later mmaps small while it holds.
 */
static void gen_mlockall(struct fuzz_gen *g, struct op *op)
{
	if (chance(g, 40)) {
		op->kind = OP_MUNLOCKALL;
		g->future_locked = false;
		return;
	}
	op->kind = OP_MLOCKALL;
	op->flags = (int)below(g, 8);	/* every mix, 0 and MCL_ONFAULT alone among them: EINVAL */
	if ((op->flags & MCL_CURRENT) && mapped_bytes(g) > (8UL << 20))
		op->flags &= ~MCL_CURRENT;
	if (op->flags && op->flags != MCL_ONFAULT)
		g->future_locked = op->flags & MCL_FUTURE;
}

/* `name`, after draw_args(): names only where both targets have them (draws[]). */
static void gen_name(struct fuzz_gen *g, struct op *op)
{
	/* -: clear; one with a space */
	static const char *const names[] = { "fz", "a name", NULL };

	op->name = names[below(g, 3)];
}

static void gen_touch(struct fuzz_gen *g, struct op *op)
{
	op->addr = pick_addr(g);
	op->len = (1 + below(g, 16)) * PG;
	if (op->addr + op->len > SCRIPT_RANGE_HI)
		op->len = SCRIPT_RANGE_HI - op->addr;
	op->access = chance(g, 60) ? OP_ACCESS_WRITE : OP_ACCESS_READ;
}

/* mlock, after draw_args() */
static void gen_mlock(struct fuzz_gen *g, struct op *op)
{
	if (op->len > 64 * PG)
		op->len = (1 + below(g, 8)) * PG;	/* mlock populates */
	if (chance(g, 30))
		op->flags = MLOCK_ONFAULT;
}

/* the parent, or the child of the sequence's fork (number 1) */
static void gen_select(struct fuzz_gen *g, struct op *op)
{
	op->child = chance(g, 50) ? 1 : 0;
}

/* One fork a sequence (the live child keeps 256 at most); after it, a munlock instead. */
static void gen_fork(struct fuzz_gen *g, struct op *op)
{
	if (!g->forks) {
		g->forks++;
		return;
	}
	op->kind = OP_MUNLOCK;
	draw_args(g, op);
}

/*
 * The ops and how often each is drawn: the first row, in this order, whose
 * condition holds and whose @below (per mille) the draw is under. With
 * DRAW_ARGS the op's fixed arguments are drawn by type in the order of
 * script.c's table (draw_args()), then @gen adds what is the op's own. mmap,
 * mremap and touch draw all of theirs in @gen: shaped to the op, and in an
 * order that keeps what every seed draws. munlockall comes from
 * gen_mlockall().
 */
enum { DRAW_ARGS = 1 << 0, DRAW_IF_NAMES = 1 << 1, DRAW_IF_FORKED = 1 << 2 };

static const struct draw {
	enum op_kind kind;
	unsigned int below;
	unsigned int flags;
	void (*gen)(struct fuzz_gen *g, struct op *op);
} draws[] = {
	{ OP_NAME, 20, DRAW_ARGS | DRAW_IF_NAMES, gen_name },
	{ OP_MMAP, 300, 0, gen_mmap },
	{ OP_MUNMAP, 420, DRAW_ARGS, NULL },
	{ OP_MPROTECT, 570, DRAW_ARGS, NULL },
	{ OP_MREMAP, 690, 0, gen_mremap },
	{ OP_MADVISE, 750, DRAW_ARGS, clamp_guard },
	{ OP_PROCESS_MADVISE, 770, DRAW_ARGS, clamp_guard },
	{ OP_TOUCH, 880, 0, gen_touch },
	{ OP_MLOCK, 930, DRAW_ARGS, gen_mlock },
	{ OP_MUNLOCK, 955, DRAW_ARGS, NULL },
	{ OP_MLOCKALL, 970, 0, gen_mlockall },
	{ OP_SELECT, 980, DRAW_IF_FORKED, gen_select },
	{ OP_FORK, 1000, 0, gen_fork },
};

/* Is @d the row for draw @r? */
static bool drawn(const struct fuzz_gen *g, const struct draw *d, unsigned int r)
{
	if ((d->flags & DRAW_IF_NAMES) && !g->names)
		return false;
	if ((d->flags & DRAW_IF_FORKED) && !g->forks)
		return false;
	return r < d->below;
}

int fuzz_gen_next(struct fuzz_gen *g, const char *maps, struct op *op)
{
	unsigned int r = below(g, 1000);
	const struct draw *d;
	int ret = load_layout(g, maps);

	if (ret)
		return ret;
	/* Ends: the last row takes every draw under 1000. */
	for (d = draws; !drawn(g, d, r); d++)
		;
	memset(op, 0, sizeof(*op));
	op->kind = d->kind;
	if (d->flags & DRAW_ARGS)
		draw_args(g, op);
	if (d->gen)
		d->gen(g, op);
	return 0;
}
