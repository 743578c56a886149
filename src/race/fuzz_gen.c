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
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "race/differential.h"
#include "spaces/view.h"
#include "util/alloc.h"
#include "util/compiler.h"
#include "util/linux_compat.h"

#define PG 4096UL
#define SZ_64K (64UL << 10)
#define PMD_SZ (2UL << 20)
#define THP_WINDOW_PAGES 1024	/* --mthp's 2 MiB-aligned window: 4 MiB */
#define THP_FILE_SIZE (4UL << 20)	/* --mthp's tmpfs file: room for PMD-mapped pages */

static const char *const file_names[2] = { "f0", "s0" };

int fuzz_gen_init(struct fuzz_gen *g, uint64_t seed, uint64_t seq)
{
	memset(g, 0, sizeof(*g));
	g->rnd = vml_rand_init(seed, seq + 1);
	g->win_lo = SCRIPT_RANGE_LO;
	g->win_pages = FUZZ_WINDOW_PAGES;
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

size_t fuzz_gen_prologue(struct op *ops, size_t max, bool thp)
{
	if (max < 2)
		return 0;
	ops[0] = (struct op){ .kind = OP_FILE, .file = file_names[0], .size = FUZZ_FILE_SIZE };
	ops[1] = (struct op){ .kind = OP_FILE, .file = file_names[1],
			      .size = thp ? THP_FILE_SIZE : FUZZ_FILE_SIZE, .shmem = true };
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

/*
 * --mthp: half the sequences collide in a 4 MiB window at a 2 MiB boundary
 * above the usual one, where whole PMD-sized blocks fit; the others keep
 * the 256 KiB window. Only --mthp calls it, so that without it every seed
 * draws what it drew before.
 */
void fuzz_gen_thp(struct fuzz_gen *g)
{
	g->thp = true;
	if (chance(g, 50)) {
		g->win_lo = SCRIPT_RANGE_LO + (1 + below(g, 8)) * PMD_SZ;
		g->win_pages = THP_WINDOW_PAGES;
	}
}

static unsigned long win_hi(const struct fuzz_gen *g)
{
	return g->win_lo + g->win_pages * PG;
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
		a = g->win_lo + below(g, g->win_pages) * PG;
	} else if (r < 96) {
		a = g->win_lo + below(g, g->win_pages) * PG + 1 + below(g, PG - 1);
	} else {
		a = chance(g, 50) ? win_hi(g) + below(g, 8) * PG : g->win_lo + 0x40000000UL;
	}
	/* --mthp: blocks a 64 KiB or a 2 MiB folio fits in, at their boundaries */
	if (g->thp && r < 92 && chance(g, 40))
		a &= ~(chance(g, 30) ? PMD_SZ - 1 : SZ_64K - 1);
	if (a < SCRIPT_RANGE_LO || a >= SCRIPT_RANGE_HI)
		a = g->win_lo;
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

/* --mthp: lengths that hold a whole 64 KiB or 2 MiB block, or just miss one */
static unsigned long thp_len(struct fuzz_gen *g)
{
	static const unsigned long lens[] = {
		SZ_64K, 2 * SZ_64K, PMD_SZ, PMD_SZ, 2 * PMD_SZ, PMD_SZ + SZ_64K, PMD_SZ - SZ_64K,
	};

	return lens[below(g, ARRAY_SIZE(lens))];
}

static unsigned long pick_len(struct fuzz_gen *g, unsigned long addr)
{
	unsigned int r = below(g, 100);
	unsigned long len, b;

	if (g->thp && r < 20) {
		len = thp_len(g);
	} else if (r < 45) {
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
		len = win_hi(g) + (1UL << 20) - addr;	/* past the window */
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

/*
 * --mthp: a mapping huge pages can fault into - writable, at a 2 MiB
 * boundary of the window, whole blocks long - keeping the drawn kind
 * (private or shared, anonymous or a file) and placement.
 */
static void thp_mmap(struct fuzz_gen *g, struct op *op)
{
	op->addr = g->win_lo + below(g, g->win_pages * PG / PMD_SZ + 1) * PMD_SZ;
	op->len = thp_len(g);
	op->prot = PROT_READ | PROT_WRITE;
	op->flags &= ~(MAP_POPULATE | MAP_LOCKED | MAP_GROWSDOWN);	/* small ones only */
	if (op->addr + op->len > SCRIPT_RANGE_HI)
		op->len = SCRIPT_RANGE_HI - op->addr;
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
		/* --mthp: file offsets a PMD-aligned address can map a huge page at */
		if (g->thp && chance(g, 40))
			op->offset = chance(g, 50) ? 0 : PMD_SZ;
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
	if (g->thp && chance(g, 40))
		thp_mmap(g, op);
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
		op->new_addr = g->win_lo;
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
	/* --mthp: the advice that switches THP per VMA, more often than 2 in 9 */
	if (g->thp && op->kind == OP_MADVISE && chance(g, 25))
		op->advice = chance(g, 60) ? MADV_HUGEPAGE : MADV_NOHUGEPAGE;
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
	/*
	 * --mthp: in a mapping, at a block boundary (a fault there can map a
	 * whole folio), a page or the whole block
	 */
	if (g->thp && g->nr && chance(g, 40)) {
		size_t i = below(g, g->nr);
		unsigned long block = chance(g, 50) ? PMD_SZ : SZ_64K;

		op->addr = (g->start[i] + below(g, (g->end[i] - g->start[i]) / PG) * PG) &
			   ~(block - 1);
		op->addr = op->addr < g->start[i] ? g->start[i] : op->addr;
		op->len = chance(g, 50) ? block : PG;
	}
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

/* A size or an offset in one of the prologue's files, around its size. */
static unsigned long file_bytes(struct fuzz_gen *g, unsigned long size)
{
	unsigned int r = below(g, 100);

	if (r < 15)
		return 0;
	if (r < 65)
		return below(g, size / PG + 1) * PG;		/* whole pages inside */
	if (r < 85)
		return size + below(g, 8) * PG;			/* at or past the end */
	return below(g, size);					/* anywhere, unaligned */
}

/* truncate or punch: one of the prologue's two files */
static void gen_file_op(struct fuzz_gen *g, struct op *op)
{
	unsigned int f = below(g, 2);
	unsigned long size = g->thp && f ? THP_FILE_SIZE : FUZZ_FILE_SIZE;

	op->file = file_names[f];
	if (op->kind == OP_TRUNCATE) {
		op->size = file_bytes(g, size);
		return;
	}
	op->offset = file_bytes(g, size);
	op->len = chance(g, 5) ? 0 : chance(g, 80) ? (1 + below(g, 8)) * PG : 1 + below(g, size);
}

/* clear_refs: mostly a value it takes (1..5), sometimes one it refuses */
static void gen_clear_refs(struct fuzz_gen *g, struct op *op)
{
	op->flags = chance(g, 90) ? 1 + (int)below(g, 5) : chance(g, 50) ? 0 : 6;
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
	{ OP_TOUCH, 865, 0, gen_touch },
	{ OP_MLOCK, 910, DRAW_ARGS, gen_mlock },
	{ OP_MUNLOCK, 930, DRAW_ARGS, NULL },
	{ OP_MLOCKALL, 945, 0, gen_mlockall },
	{ OP_MSEAL, 953, DRAW_ARGS, NULL },
	{ OP_TRUNCATE, 961, 0, gen_file_op },
	{ OP_PUNCH, 969, 0, gen_file_op },
	{ OP_CLEAR_REFS, 978, 0, gen_clear_refs },
	{ OP_SELECT, 986, DRAW_IF_FORKED, gen_select },
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

/* ---- THP knob sets (--mthp) ---- */

/*
 * Every shmem THP size is drawn with every value: the model allocates each
 * (docs/kernel-folios.md §15). 6.18's shmem_allowable_huge_orders() lets the
 * inherit sizes into shared anonymous memory wherever always, within_size
 * or advise allows huge pages, and under force alone.
 */

/* The mTHP sizes whose knobs are drawn, where the host has them. */
static const unsigned int knob_sizes_kb[] = { 64, 16, 128, 2048 };

static const char *const thp_words[] = { "always", "madvise", "never" };
static const char *const thp_shmem_words[] = {
	"always", "within_size", "advise", "never", "deny", "force",
};
static const char *const mthp_words[] = { "always", "inherit", "madvise", "never" };
static const char *const mthp_shmem_words[] = {
	"always", "inherit", "within_size", "advise", "never",
};

static void add_knob(struct script_knob *out, size_t *nr, const char *name, const char *value)
{
	snprintf(out[*nr].name, sizeof(out[*nr].name), "%s", name);
	snprintf(out[*nr].value, sizeof(out[*nr].value), "%s", value);
	(*nr)++;
}

/*
 * A shmem value for size @kb under top-level @shmem, as the kernel takes
 * it: under force it refuses `inherit` for a size other than the PMD size
 * (the write fails with EINVAL).
 */
static const char *draw_mthp_shmem(struct fuzz_gen *g, unsigned int kb, const char *shmem)
{
	bool inherit_ok = kb == 2048 || strcmp(shmem, "force");

	for (;;) {	/* ends: "never" is always allowed, one draw in five */
		const char *w = mthp_shmem_words[below(g, ARRAY_SIZE(mthp_shmem_words))];

		if (inherit_ok || strcmp(w, "inherit"))
			return w;
	}
}

size_t fuzz_gen_knobs(uint64_t seed, uint64_t seq, const unsigned int *host_kb, size_t nr_host,
		      struct script_knob *out)
{
	/* a stream of its own: a sequence's ops draw from stream seq + 1 */
	struct fuzz_gen g = { .rnd = vml_rand_init(seed, ~seq) };
	const char *shmem;
	size_t nr = 0;
	char name[32];

	add_knob(out, &nr, "thp", thp_words[below(&g, ARRAY_SIZE(thp_words))]);
	shmem = thp_shmem_words[below(&g, ARRAY_SIZE(thp_shmem_words))];
	/*
	 * The knobs are written in this order. The kernel refuses "force" while
	 * a smaller size's shmem knob is "inherit" (the last set may have left
	 * one so): under force the sizes go first, else the top-level one does
	 * (a size may then be set to inherit).
	 */
	if (strcmp(shmem, "force"))
		add_knob(out, &nr, "thp_shmem", shmem);
	for (size_t i = 0; i < ARRAY_SIZE(knob_sizes_kb); i++) {
		unsigned int kb = knob_sizes_kb[i];
		bool has = false;

		for (size_t k = 0; k < nr_host; k++)
			has |= host_kb[k] == kb;
		if (!has)
			continue;
		snprintf(name, sizeof(name), "hugepages-%ukB", kb);
		add_knob(out, &nr, name, mthp_words[below(&g, ARRAY_SIZE(mthp_words))]);
		snprintf(name, sizeof(name), "hugepages-%ukB.shmem", kb);
		add_knob(out, &nr, name, draw_mthp_shmem(&g, kb, shmem));
	}
	if (!strcmp(shmem, "force"))
		add_knob(out, &nr, "thp_shmem", shmem);
	return nr;
}

int fuzz_knobs_line(const struct script_knob *knobs, size_t nr, char *buf, size_t len)
{
	size_t n = snprintf(buf, len, "knobs");

	for (size_t i = 0; i < nr && n < len; i++)
		n += snprintf(buf + n, len - n, " %s=%s", knobs[i].name, knobs[i].value);
	return n < len ? 0 : -ENOSPC;
}
