// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * maps-fake-gap.c - show /proc/PID/maps reporting a gap that no state of the
 * address space had, on a kernel that reads maps under per-VMA locks (6.17+).
 *
 * Stands alone: libc and Linux headers only, nothing of vmalock.
 *
 *   cc -O2 -pthread -o maps-fake-gap maps-fake-gap.c
 *   ./maps-fake-gap                      # every kind, 2 s each
 *   ./maps-fake-gap --kind mapfixed --duration 60
 *   ./maps-fake-gap --kind mapfixed --duration 60 --noise 5   # many more
 *
 * The layout, built in a fresh range (0x100000000000 if free): 24 regions of
 * 3 pages back to back, alternating rw- (written, so they have an anon_vma)
 * and r-- (never touched), so no two neighbours merge and there is no gap
 * anywhere inside them; then, one region further, a spare area some kinds
 * take pages from. Regions 10 and 11 are A and B. One thread (the modifier)
 * changes A, then B, then puts A and B back, in a tight loop; each kind of
 * change is its own run:
 *
 *   mapfixed    mmap(MAP_FIXED) one page with PROT_EXEC added over the middle
 *               of A, then of B; map the original protection back over it
 *               (the three pieces merge again).
 *   mprotect    the same with mprotect(): split into three, merge back.
 *   remap       A and B have a one-page hole in the middle; mremap(MAYMOVE|
 *               FIXED) moves a page of the same protection (never touched)
 *               from the spare area into the hole (it merges: A is whole),
 *               then moves it back out (A is split by a hole again).
 *   remap-over  mremap(MAYMOVE|FIXED|DONTUNMAP) moves the middle page of an
 *               r-x spare VMA over the middle of A, then of B (three pieces);
 *               mprotect() gives it the original protection back (they merge).
 *               The kernel selftest proc-maps-race's "remap" test.
 *   remap-whole the same with the whole 3-page spare VMA moved over all of A,
 *               then of B: the destination is a whole VMA, so its neighbours
 *               are not touched (not write-locked) by the move.
 *   resize      mremap() shrinks A to one page in place, then B; grows both
 *               back in place.
 *
 * Another thread (the reader) reads /proc/self/maps from the start with
 * page-sized read()s until it is past the layout, again and again, and checks
 * each pair of consecutive records inside the layout, Q then R. The reader
 * resumes from the end of what it showed, and between two records the
 * modifier may have gone round its cycle any number of times, so the pair is
 * fine if, in some state, R is the first VMA that ends after Q's end. When
 * R starts after Q ends, the gap [Q.end, R.start) must then have been empty
 * in a state that had R:
 *
 *   legitimate  in a state between two system calls (captured before the
 *               run, single-threaded, by applying the cycle and reading maps);
 *   transient   only in an intermediate state inside one system call: the
 *               kernel really builds that tree, under mmap_lock(W), and no
 *               other way of looking (a fault, mmap, munmap, a maps reader
 *               under mmap_lock) can see it. The only one here is
 *               mremap(MREMAP_FIXED) over a mapped destination: mremap_to()
 *               unmaps the destination (do_munmap) before move_vma() maps the
 *               moved pages there, so the tree has a hole in between
 *               (remap-over, remap-whole). mmap(MAP_FIXED) leaves the old
 *               VMAs in the tree until the new one overwrites them; mprotect
 *               and the in-place resizes store the new layout in one go, and
 *               a shrink only clears what stays cleared;
 *   fake        no state had it, not even inside a system call.
 *
 * It prints, per kind, the counts per minute and the two records around the
 * first few fake (and transient) gaps, with the modifier's ops that ran
 * during that read().
 *
 * --query also asks PROCMAP_QUERY, after each pass, for the VMA covering the
 * middle page of A and of B where every state has it mapped: the ioctl looks
 * VMAs up with the same lock_next_vma() (from a fresh iterator), so it misses
 * what the mremap hole hides.
 *
 * Fake gaps are rare on an idle machine (a few a minute): the reader must be
 * held up for microseconds in a window of a few instructions. --noise USEC
 * pins the reader and the modifier to two CPUs and wakes a thread every USEC
 * microseconds on the reader's CPU; its timer interrupts land in that window
 * often enough to make them frequent, without changing what the kernel does.
 *
 * A gap found is a finding, not a failure: the exit status is 0 whatever it
 * finds, 1 if a system call of the setup or the cycle fails, 2 on bad usage
 * (one line naming the bad argument).
 *
 * Why 6.18 shows both: docs/findings/maps-fake-gaps.md in vmalock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

/* PROCMAP_QUERY (Linux 6.11, include/uapi/linux/fs.h), for older headers. */
struct query {
	uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size,
		 vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define QUERY_IOCTL _IOWR('f', 17, struct query)

#define PROG "maps-fake-gap"
#define NR_REGIONS 24
#define REGION_PAGES 3
#define A_REGION 10		/* A; B is the region after it */
#define PREFERRED_BASE 0x100000000000UL
#define MAX_OPS 4		/* ops in one cycle */
#define MAX_VMAS 64		/* layout VMAs in one state */
#define MAX_STATES 48
#define MAX_RECS 128		/* layout records in one pass */
#define MAX_EXAMPLES 20
#define LINE_MAX_LEN 160

static unsigned long page_size;
static unsigned long base;	/* region 0 */

static unsigned long region(int i)
{
	return base + (unsigned long)i * REGION_PAGES * page_size;
}

static unsigned long spare(void)
{
	return region(NR_REGIONS + 1);
}

static unsigned long span_end(void)
{
	return spare() + REGION_PAGES * page_size;
}

static unsigned long span_len(void)
{
	return (NR_REGIONS + 2) * REGION_PAGES * page_size;
}

static int region_prot(int i)
{
	return i % 2 ? PROT_READ : PROT_READ | PROT_WRITE;
}

/* ---- ops ---- */

enum op_kind { OP_MMAP, OP_MPROTECT, OP_MREMAP, OP_MUNMAP, OP_WRITE };

struct op {
	enum op_kind kind;
	unsigned long addr, len, new_len, new_addr;
	int prot, flags;
	char name[96];
};

static struct op op_mmap(unsigned long addr, unsigned long len, int prot)
{
	return (struct op){ .kind = OP_MMAP, .addr = addr, .len = len, .prot = prot };
}

static struct op op_mprotect(unsigned long addr, unsigned long len, int prot)
{
	return (struct op){ .kind = OP_MPROTECT, .addr = addr, .len = len, .prot = prot };
}

static struct op op_resize(unsigned long addr, unsigned long len, unsigned long new_len)
{
	return (struct op){ .kind = OP_MREMAP, .addr = addr, .len = len, .new_len = new_len };
}

static struct op op_move(unsigned long from, unsigned long to, int flags)
{
	return (struct op){ .kind = OP_MREMAP, .addr = from, .len = page_size,
			    .new_len = page_size, .new_addr = to,
			    .flags = MREMAP_MAYMOVE | MREMAP_FIXED | flags };
}

static struct op op_range(enum op_kind kind, unsigned long addr, unsigned long len)
{
	return (struct op){ .kind = kind, .addr = addr, .len = len };
}

/* Return: 0 or -errno. */
static int apply(const struct op *op)
{
	void *p;

	switch (op->kind) {
	case OP_MMAP:
		p = mmap((void *)op->addr, op->len, op->prot, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_FIXED, -1, 0);
		return p == MAP_FAILED ? -errno : 0;
	case OP_MPROTECT:
		return mprotect((void *)op->addr, op->len, op->prot) ? -errno : 0;
	case OP_MREMAP:
		p = mremap((void *)op->addr, op->len, op->new_len, op->flags,
			   (void *)op->new_addr);
		return p == MAP_FAILED ? -errno : 0;
	case OP_MUNMAP:
		return munmap((void *)op->addr, op->len) ? -errno : 0;
	case OP_WRITE:
		memset((void *)op->addr, 0x5a, op->len);
		return 0;
	}
	return -EINVAL;
}

static const char *prot_name(int prot)
{
	static const char *const names[8] = { "---", "r--", "-w-", "rw-",
					      "--x", "r-x", "-wx", "rwx" };
	return names[((prot & PROT_READ) ? 1 : 0) | ((prot & PROT_WRITE) ? 2 : 0) |
		     ((prot & PROT_EXEC) ? 4 : 0)];
}

/* A short name for reports: "mmap A+1p rwx". */
static void name_op(struct op *op)
{
	unsigned long a = region(A_REGION), b = region(A_REGION + 1), s = spare();
	char where[2][24];
	unsigned long at[2] = { op->addr, op->new_addr };

	for (int i = 0; i < 2; i++) {
		unsigned long x = at[i];
		const char *r = x >= s ? "S" : x >= b ? "B" : "A";
		unsigned long off = (x - (x >= s ? s : x >= b ? b : a)) / page_size;

		snprintf(where[i], sizeof(where[i]), "%s+%lup", r, off);
	}
	switch (op->kind) {
	case OP_MMAP:
		snprintf(op->name, sizeof(op->name), "mmap %s %s", where[0], prot_name(op->prot));
		break;
	case OP_MPROTECT:
		snprintf(op->name, sizeof(op->name), "mprotect %s %s", where[0],
			 prot_name(op->prot));
		break;
	case OP_MREMAP:
		if (op->flags & MREMAP_FIXED)
			snprintf(op->name, sizeof(op->name), "mremap %s -> %s%s", where[0],
				 where[1], op->flags & MREMAP_DONTUNMAP ? " dontunmap" : "");
		else
			snprintf(op->name, sizeof(op->name), "mremap %s %lup -> %lup", where[0],
				 op->len / page_size, op->new_len / page_size);
		break;
	default:
		snprintf(op->name, sizeof(op->name), "op %s", where[0]);
		break;
	}
}

/* ---- kinds ---- */

struct kind {
	const char *name;
	/* Extra setup after the regions; the cycle. Return: the number of ops. */
	int (*setup)(struct op *ops);
	int (*cycle)(struct op *ops);
	/* Does op @i of the cycle pass through a tree with its destination unmapped? */
	bool (*unmaps_dest)(int i);
};

static int setup_none(struct op *ops)
{
	(void)ops;
	return 0;
}

static int cycle_mapfixed(struct op *c)
{
	unsigned long a = region(A_REGION), b = region(A_REGION + 1), p = page_size;
	int pa = region_prot(A_REGION), pb = region_prot(A_REGION + 1);

	c[0] = op_mmap(a + p, p, pa | PROT_EXEC);
	c[1] = op_mmap(b + p, p, pb | PROT_EXEC);
	c[2] = op_mmap(a + p, p, pa);
	c[3] = op_mmap(b + p, p, pb);
	return 4;
}

static int cycle_mprotect(struct op *c)
{
	unsigned long a = region(A_REGION), b = region(A_REGION + 1), p = page_size;
	int pa = region_prot(A_REGION), pb = region_prot(A_REGION + 1);

	c[0] = op_mprotect(a + p, p, pa | PROT_EXEC);
	c[1] = op_mprotect(b + p, p, pb | PROT_EXEC);
	c[2] = op_mprotect(a + p, p, pa);
	c[3] = op_mprotect(b + p, p, pb);
	return 4;
}

/* Holes in the middle of A and B; the pages for them at S and S+2p. */
static int setup_remap(struct op *c)
{
	unsigned long a = region(A_REGION), b = region(A_REGION + 1), s = spare(), p = page_size;

	c[0] = op_range(OP_MUNMAP, a + p, p);
	c[1] = op_range(OP_MUNMAP, b + p, p);
	c[2] = op_mmap(s, p, region_prot(A_REGION));
	c[3] = op_mmap(s + 2 * p, p, region_prot(A_REGION + 1));
	return 4;
}

static int cycle_remap(struct op *c)
{
	unsigned long a = region(A_REGION), b = region(A_REGION + 1), s = spare(), p = page_size;

	c[0] = op_move(s, a + p, 0);
	c[1] = op_move(s + 2 * p, b + p, 0);
	c[2] = op_move(a + p, s, 0);
	c[3] = op_move(b + p, s + 2 * p, 0);
	return 4;
}

/* An r-x spare VMA whose middle page is moved (and left mapped) over A and B. */
static int setup_remap_over(struct op *c)
{
	c[0] = op_mmap(spare(), REGION_PAGES * page_size, PROT_READ | PROT_EXEC);
	return 1;
}

static int cycle_remap_over(struct op *c)
{
	unsigned long a = region(A_REGION), b = region(A_REGION + 1), s = spare(), p = page_size;

	c[0] = op_move(s + p, a + p, MREMAP_DONTUNMAP);
	c[1] = op_move(s + p, b + p, MREMAP_DONTUNMAP);
	c[2] = op_mprotect(a + p, p, region_prot(A_REGION));
	c[3] = op_mprotect(b + p, p, region_prot(A_REGION + 1));
	return 4;
}

/* The two moves unmap a mapped destination first (mremap_to -> do_munmap). */
static bool remap_over_unmaps_dest(int i)
{
	return i < 2;
}

/* A whole r-x spare region moved (and left mapped) over all of A, then of B. */
static int cycle_remap_whole(struct op *c)
{
	unsigned long a = region(A_REGION), b = region(A_REGION + 1), s = spare();
	unsigned long len = REGION_PAGES * page_size;

	c[0] = op_move(s, a, MREMAP_DONTUNMAP);
	c[1] = op_move(s, b, MREMAP_DONTUNMAP);
	c[0].len = c[0].new_len = c[1].len = c[1].new_len = len;
	c[2] = op_mprotect(a, len, region_prot(A_REGION));
	c[3] = op_mprotect(b, len, region_prot(A_REGION + 1));
	return 4;
}

static bool never(int i)
{
	(void)i;
	return false;
}

static int cycle_resize(struct op *c)
{
	unsigned long a = region(A_REGION), b = region(A_REGION + 1), p = page_size;
	unsigned long len = REGION_PAGES * p;

	c[0] = op_resize(a, len, p);
	c[1] = op_resize(b, len, p);
	c[2] = op_resize(a, p, len);
	c[3] = op_resize(b, p, len);
	return 4;
}

static const struct kind kinds[] = {
	{ "mapfixed", setup_none, cycle_mapfixed, never },
	{ "mprotect", setup_none, cycle_mprotect, never },
	{ "remap", setup_remap, cycle_remap, never },
	{ "remap-over", setup_remap_over, cycle_remap_over, remap_over_unmaps_dest },
	{ "remap-whole", setup_remap_over, cycle_remap_whole, remap_over_unmaps_dest },
	{ "resize", setup_none, cycle_resize, never },
};
#define NR_KINDS (int)(sizeof(kinds) / sizeof(kinds[0]))

/* ---- states ---- */

struct vma {
	unsigned long start, end;
	char perms[5];
};

struct state {
	struct vma v[MAX_VMAS];
	int nr;
	bool internal;		/* only inside a system call */
};

static struct state states[MAX_STATES];
static int nr_states;

/* Parse "start-end perms ..." Return: true if it is a maps line. */
static bool parse_line(const char *s, struct vma *v)
{
	char *e;

	v->start = strtoul(s, &e, 16);
	if (*e != '-')
		return false;
	v->end = strtoul(e + 1, &e, 16);
	if (*e != ' ' || strlen(e) < 6 || e[5] != ' ' || v->end <= v->start)
		return false;
	memcpy(v->perms, e + 1, 4);
	v->perms[4] = '\0';
	return true;
}

static bool in_layout(const struct vma *v)
{
	return v->start >= base && v->end <= span_end();
}

/* The layout's VMAs now, single-threaded. Return: 0 or -errno. */
static int capture(struct state *st)
{
	static char text[1 << 20];
	size_t len = 0;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY);

	if (fd < 0)
		return -errno;
	while ((n = read(fd, text + len, sizeof(text) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (n < 0)
		return -EIO;
	text[len] = '\0';
	st->nr = 0;
	st->internal = false;
	for (char *line = text, *nl; *line; line = nl + 1) {
		struct vma v;

		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = '\0';
		if (parse_line(line, &v) && in_layout(&v)) {
			if (st->nr == MAX_VMAS)
				return -E2BIG;
			st->v[st->nr++] = v;
		}
	}
	return 0;
}

static bool same_vma(const struct vma *x, const struct vma *y)
{
	return x->start == y->start && x->end == y->end && !strcmp(x->perms, y->perms);
}

static bool same_state(const struct state *x, const struct state *y)
{
	if (x->nr != y->nr)
		return false;
	for (int i = 0; i < x->nr; i++)
		if (!same_vma(&x->v[i], &y->v[i]))
			return false;
	return true;
}

/* Add unless there: a userspace state replaces an equal internal one. */
static int add_state(const struct state *st)
{
	for (int i = 0; i < nr_states; i++) {
		if (same_state(&states[i], st)) {
			states[i].internal &= st->internal;
			return 0;
		}
	}
	if (nr_states == MAX_STATES)
		return -E2BIG;
	states[nr_states++] = *st;
	return 0;
}

/* @st with [lo, hi) unmapped: the VMAs there trimmed or split. */
static void punch(const struct state *st, unsigned long lo, unsigned long hi, struct state *out)
{
	out->nr = 0;
	out->internal = true;
	for (int i = 0; i < st->nr && out->nr < MAX_VMAS - 1; i++) {
		struct vma v = st->v[i];

		if (v.end <= lo || v.start >= hi) {
			out->v[out->nr++] = v;
			continue;
		}
		if (v.start < lo) {
			out->v[out->nr] = v;
			out->v[out->nr++].end = lo;
		}
		if (v.end > hi) {
			out->v[out->nr] = v;
			out->v[out->nr++].start = hi;
		}
	}
}

/* Is @r, in some state of the class asked, the first VMA ending after @pos? */
static bool follows(const struct vma *r, unsigned long pos, bool internal)
{
	for (int j = 0; j < nr_states; j++) {
		const struct state *st = &states[j];
		bool has = false, blocked = false;

		if (st->internal != internal)
			continue;
		for (int i = 0; i < st->nr; i++) {
			const struct vma *v = &st->v[i];

			if (same_vma(v, r))
				has = true;
			else if (v->end > pos && v->start < r->start)
				blocked = true;	/* something ends after pos before r */
		}
		if (has && !blocked)
			return true;
	}
	return false;
}

static bool known(const struct vma *r)
{
	for (int j = 0; j < nr_states; j++)
		for (int i = 0; i < states[j].nr; i++)
			if (same_vma(&states[j].v[i], r))
				return true;
	return false;
}

/* ---- the run ---- */

enum finding { F_FAKE, F_TRANSIENT, F_OTHER, NR_FINDINGS };

static const char *const finding_names[NR_FINDINGS] = {
	[F_FAKE] = "fake gap",
	[F_TRANSIENT] = "transient gap",
	[F_OTHER] = "other",
};

struct example {
	char q[LINE_MAX_LEN], r[LINE_MAX_LEN];
	char why[96];
	bool same_read;
	unsigned long ops_lo, ops_hi;	/* ops [lo, hi) may have run during the reads */
};

struct run {
	const struct kind *kind;
	struct op cycle[MAX_OPS];
	int nr_ops;
	atomic_bool stop;
	atomic_ulong ops_started, ops_done;
	int mod_err;			/* set by the modifier on failure */
	char mod_msg[128];
	/* the reader's */
	unsigned long passes, reads, count[NR_FINDINGS];
	struct example ex[NR_FINDINGS][MAX_EXAMPLES];
	int max_examples;
	int reader_err;
	/* --noise: CPUs to pin the reader (and the noise thread) and the modifier to */
	long noise_us;
	int cpu_reader, cpu_modifier;
	/* --query: PROCMAP_QUERY at addresses mapped in every state */
	bool query;
	unsigned long query_addr[2];
	int nr_query_addr;
	unsigned long queries, query_misses;
	char query_example[MAX_EXAMPLES][LINE_MAX_LEN];
};

/* Is @addr mapped in every state between two system calls? */
static bool always_mapped(unsigned long addr)
{
	for (int j = 0; j < nr_states; j++) {
		bool in = false;

		if (states[j].internal)
			continue;
		for (int i = 0; i < states[j].nr; i++)
			in |= states[j].v[i].start <= addr && addr < states[j].v[i].end;
		if (!in)
			return false;
	}
	return true;
}

/*
 * --query: ask PROCMAP_QUERY (no flags: the VMA covering the address) for
 * each address that every state has mapped; an answer of ENOENT, or a VMA not
 * covering it, is a miss. Return: 0, or -errno if the ioctl is unusable.
 */
static int query_pass(struct run *run, int fd)
{
	for (int i = 0; i < run->nr_query_addr; i++) {
		struct query q = { .size = sizeof(q), .query_addr = run->query_addr[i] };
		int ret = ioctl(fd, QUERY_IOCTL, &q) ? -errno : 0;
		unsigned long k;

		if (ret && ret != -ENOENT)
			return ret;
		run->queries++;
		if (!ret && q.vma_start <= q.query_addr && q.query_addr < q.vma_end)
			continue;
		k = run->query_misses++;
		if (k < (unsigned long)run->max_examples)
			snprintf(run->query_example[k], sizeof(run->query_example[k]),
				 "PROCMAP_QUERY 0x%lx: %s", run->query_addr[i],
				 ret ? "ENOENT" : "a VMA that does not cover it");
	}
	return 0;
}

/* Pin the calling thread to @cpu; -1: leave it where it is. */
static void pin_to(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/*
 * --noise: sleep a few microseconds at a time on the reader's CPU, so that
 * timer interrupts (and wakeups) land on it often. The fake gap needs the
 * reader delayed in a window of a few instructions (the findings report says
 * which); this widens it now and then without touching what the kernel does.
 */
static void *noise(void *arg)
{
	struct run *run = arg;
	struct timespec ts = { 0, run->noise_us * 1000 };

	pin_to(run->cpu_reader);
	while (!atomic_load_explicit(&run->stop, memory_order_relaxed))
		nanosleep(&ts, NULL);
	return NULL;
}

static void *modifier(void *arg)
{
	struct run *run = arg;
	unsigned long n = 0;

	pin_to(run->cpu_modifier);

	while (!atomic_load_explicit(&run->stop, memory_order_relaxed)) {
		const struct op *op = &run->cycle[n % run->nr_ops];
		int ret;

		atomic_store_explicit(&run->ops_started, n + 1, memory_order_release);
		ret = apply(op);
		atomic_store_explicit(&run->ops_done, n + 1, memory_order_release);
		if (ret) {
			run->mod_err = ret;
			snprintf(run->mod_msg, sizeof(run->mod_msg), "%s: %s", op->name,
				 strerror(-ret));
			break;
		}
		n++;
	}
	return NULL;
}

struct rec {
	struct vma v;
	unsigned int read;		/* which read() of the pass */
	char line[LINE_MAX_LEN];
};

static void note(struct run *run, enum finding f, const struct rec *q, const struct rec *r,
		 const char *why, unsigned long ops_lo, unsigned long ops_hi)
{
	unsigned long k = run->count[f]++;
	struct example *e;

	if (k >= (unsigned long)run->max_examples)
		return;
	e = &run->ex[f][k];
	snprintf(e->q, sizeof(e->q), "%s", q->line);
	snprintf(e->r, sizeof(e->r), "%s", r->line);
	snprintf(e->why, sizeof(e->why), "%s", why);
	e->same_read = q->read == r->read;
	e->ops_lo = ops_lo;
	e->ops_hi = ops_hi;
}

static void check_pass(struct run *run, const struct rec *recs, int nr, unsigned long ops_lo,
		       unsigned long ops_hi)
{
	char why[96];

	for (int i = 1; i < nr; i++) {
		const struct rec *q = &recs[i - 1], *r = &recs[i];

		if (!known(&r->v)) {
			note(run, F_OTHER, q, r, "a record that is no VMA of any state",
			     ops_lo, ops_hi);
		} else if (r->v.end <= q->v.end) {
			note(run, F_OTHER, q, r, "a record that goes backwards", ops_lo, ops_hi);
		} else if (r->v.start < q->v.end) {
			/* a new form of what was shown: allowed (the kernel's tearing rules: docs/kernel.md §2) */
			if (!follows(&r->v, q->v.end, false) && !follows(&r->v, q->v.end, true))
				note(run, F_OTHER, q, r, "an overlap no state explains",
				     ops_lo, ops_hi);
		} else if (!follows(&r->v, q->v.end, false)) {
			bool transient = follows(&r->v, q->v.end, true);

			snprintf(why, sizeof(why), "0x%lx-0x%lx", q->v.end, r->v.start);
			note(run, transient ? F_TRANSIENT : F_FAKE, q, r, why, ops_lo, ops_hi);
		}
	}
}

static void *reader(void *arg)
{
	struct run *run = arg;
	static char buf[1 << 16];
	static struct rec recs[MAX_RECS];
	int fd = open("/proc/self/maps", O_RDONLY);

	pin_to(run->cpu_reader);
	if (fd < 0) {
		run->reader_err = -errno;
		return NULL;
	}
	while (!atomic_load_explicit(&run->stop, memory_order_relaxed)) {
		unsigned long ops_lo = atomic_load_explicit(&run->ops_done, memory_order_acquire);
		unsigned int nread = 0;
		bool past = false;
		int nr = 0;

		if (lseek(fd, 0, SEEK_SET) < 0) {
			run->reader_err = -errno;
			break;
		}
		while (!past) {
			ssize_t n = read(fd, buf, page_size);

			if (n <= 0) {
				if (n < 0)
					run->reader_err = -errno;
				break;
			}
			run->reads++;
			nread++;
			buf[n] = '\0';
			for (char *line = buf, *nl; *line; line = nl + 1) {
				struct rec *r = &recs[nr];

				nl = strchr(line, '\n');
				if (!nl)
					break;	/* seq_file returns whole lines */
				*nl = '\0';
				if (!parse_line(line, &r->v))
					continue;
				if (r->v.start >= span_end()) {
					past = true;
					break;
				}
				if (!in_layout(&r->v) || nr == MAX_RECS)
					continue;
				r->read = nread;
				snprintf(r->line, sizeof(r->line), "%.*s",
					 (int)sizeof(r->line) - 1, line);
				nr++;
			}
		}
		if (run->reader_err)
			break;
		check_pass(run, recs, nr, ops_lo,
			   atomic_load_explicit(&run->ops_started, memory_order_acquire));
		run->passes++;
		if (run->query && (run->reader_err = query_pass(run, fd)))
			break;
	}
	close(fd);
	return NULL;
}

/* ---- setup ---- */

static int die_errno(const char *what, int err)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(-err));
	return 1;
}

/* Find a free range for the layout: the preferred base, or one the kernel picks. */
static int place_layout(void)
{
	unsigned long len = span_len();
	void *p;

	base = PREFERRED_BASE;
	p = mmap((void *)base, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		 -1, 0);
	if (p == MAP_FAILED || (unsigned long)p != base) {
		if (p != MAP_FAILED)
			munmap(p, len);	/* an old kernel took it as a hint */
		p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		base = (unsigned long)p;
	}
	return munmap(p, len) ? -errno : 0;
}

static int run_ops(const struct op *ops, int n)
{
	for (int i = 0; i < n; i++) {
		int ret = apply(&ops[i]);

		if (ret)
			return ret;
	}
	return 0;
}

static int build_layout(const struct kind *k)
{
	struct op ops[8];
	int ret, n;

	for (int i = 0; i < NR_REGIONS; i++) {
		struct op o[2] = {
			op_mmap(region(i), REGION_PAGES * page_size, region_prot(i)),
			op_range(OP_WRITE, region(i), REGION_PAGES * page_size),
		};

		ret = run_ops(o, region_prot(i) & PROT_WRITE ? 2 : 1);
		if (ret)
			return ret;
	}
	n = k->setup(ops);
	return run_ops(ops, n);
}

/*
 * The states of @run's cycle: the layout after each op, over two rounds (an
 * op may leave something the next round sees differently), plus the
 * intermediate states of the ops that unmap their destination first.
 */
static int capture_states(struct run *run)
{
	struct state before, after, hole;
	int ret;

	nr_states = 0;
	ret = capture(&before);
	if (ret || (ret = add_state(&before)))
		return ret;
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < run->nr_ops; i++) {
			const struct op *op = &run->cycle[i];

			ret = apply(op);
			if (ret) {
				fprintf(stderr, PROG ": %s: %s: %s\n", run->kind->name, op->name,
					strerror(-ret));
				return ret;
			}
			ret = capture(&after);
			if (ret)
				return ret;
			if (run->kind->unmaps_dest(i)) {
				punch(&before, op->new_addr, op->new_addr + op->new_len, &hole);
				ret = add_state(&hole);
				if (ret)
					return ret;
			}
			ret = add_state(&after);
			if (ret)
				return ret;
			before = after;
		}
	}
	return 0;
}

/* ---- reporting ---- */

static void print_ops(const struct run *run, unsigned long lo, unsigned long hi)
{
	unsigned long n = hi > lo ? hi - lo : 0;

	printf(", %lu op%s during the reads", n, n == 1 ? "" : "s");
	if (n == 0 || n > 4)
		return;
	printf(":");
	for (unsigned long i = lo; i < hi; i++)
		printf(" %s%s", run->cycle[i % run->nr_ops].name, i + 1 < hi ? ";" : "");
}

static void report(const struct run *run, double secs)
{
	unsigned long cycles = atomic_load(&run->ops_done) / (unsigned long)run->nr_ops;
	int userspace = 0;

	for (int j = 0; j < nr_states; j++)
		userspace += !states[j].internal;
	printf("kind %s: %.1f s, %lu passes, %lu reads, %lu cycles, %d states (%d inside a "
	       "system call): fake gaps %lu (%.1f/min), transient gaps %lu (%.1f/min), "
	       "other %lu\n", run->kind->name, secs, run->passes, run->reads, cycles,
	       nr_states, nr_states - userspace, run->count[F_FAKE],
	       run->count[F_FAKE] * 60.0 / secs, run->count[F_TRANSIENT],
	       run->count[F_TRANSIENT] * 60.0 / secs, run->count[F_OTHER]);
	if (run->query) {
		unsigned long shown = run->query_misses < (unsigned long)run->max_examples ?
				      run->query_misses : (unsigned long)run->max_examples;

		printf("  queries %lu at addresses mapped in every state: %lu missed "
		       "(%.1f/min)\n", run->queries, run->query_misses,
		       run->query_misses * 60.0 / secs);
		for (unsigned long k = 0; k < shown; k++)
			printf("  query miss: %s\n", run->query_example[k]);
	}
	for (int f = 0; f < NR_FINDINGS; f++) {
		unsigned long shown = run->count[f] < (unsigned long)run->max_examples ?
				      run->count[f] : (unsigned long)run->max_examples;

		for (unsigned long k = 0; k < shown; k++) {
			const struct example *e = &run->ex[f][k];

			printf("  %s %s, %s", finding_names[f], e->why,
			       e->same_read ? "inside one read()" : "across two read()s");
			print_ops(run, e->ops_lo, e->ops_hi);
			printf("\n       %s\n    >> %s\n", e->q, e->r);
		}
	}
	fflush(stdout);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_states(const struct kind *k)
{
	for (int j = 0; j < nr_states; j++) {
		printf("  state %d of %s%s:", j, k->name,
		       states[j].internal ? " (inside a system call)" : "");
		for (int i = 0; i < states[j].nr; i++) {
			const struct vma *v = &states[j].v[i];

			printf(" %lx-%lx %s", v->start - base, v->end - base, v->perms);
		}
		printf("\n");
	}
}

struct options {
	double duration;		/* seconds per kind */
	int max_examples;
	bool show_states;
	bool query;
	long noise_us;			/* 0: no noise thread, nothing pinned */
	int cpu[2];			/* --noise: the reader's CPU, the modifier's */
};

/* @total: the counts per finding, then the query misses, added to. */
static int run_kind(const struct kind *k, const struct options *o, unsigned long *total)
{
	static struct run run;
	long noise_us = o->noise_us;
	pthread_t mod, rd, nz;
	double t0;
	int ret;

	memset(&run, 0, sizeof(run));
	run.kind = k;
	run.max_examples = o->max_examples;
	run.noise_us = noise_us;
	run.cpu_reader = noise_us ? o->cpu[0] : -1;
	run.cpu_modifier = noise_us ? o->cpu[1] : -1;
	run.nr_ops = k->cycle(run.cycle);
	for (int i = 0; i < run.nr_ops; i++)
		name_op(&run.cycle[i]);
	ret = place_layout();
	if (ret)
		return die_errno("no free range for the layout", ret);
	ret = build_layout(k);
	if (ret)
		return die_errno("building the layout", ret);
	ret = capture_states(&run);
	if (ret)
		return die_errno("capturing the states", ret);
	run.query = o->query;
	for (int i = 0; i < 2; i++) {
		unsigned long addr = region(A_REGION + i) + page_size;

		if (always_mapped(addr))
			run.query_addr[run.nr_query_addr++] = addr;
	}

	t0 = now();
	if (pthread_create(&mod, NULL, modifier, &run) ||
	    pthread_create(&rd, NULL, reader, &run) ||
	    (noise_us && pthread_create(&nz, NULL, noise, &run))) {
		fprintf(stderr, PROG ": pthread_create failed\n");
		return 1;
	}
	while (now() - t0 < o->duration && !run.mod_err) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	atomic_store(&run.stop, true);
	pthread_join(mod, NULL);
	pthread_join(rd, NULL);
	if (noise_us)
		pthread_join(nz, NULL);
	munmap((void *)base, span_len());
	if (run.mod_err) {
		fprintf(stderr, PROG ": %s: %s\n", k->name, run.mod_msg);
		return 1;
	}
	if (run.reader_err)
		return die_errno("reading /proc/self/maps", run.reader_err);
	report(&run, now() - t0);
	if (o->show_states)
		print_states(k);
	for (int f = 0; f < NR_FINDINGS; f++)
		total[f] += run.count[f];
	total[NR_FINDINGS] += run.query_misses;
	return 0;
}

/* ---- main ---- */

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	return 2;
}

static void usage(void)
{
	printf("usage: " PROG " [--kind NAME|all] [--duration SECONDS] [--examples N] "
	       "[--noise USEC] [--query] [--states]\n"
	       "  --kind       mapfixed, mprotect, remap, remap-over, remap-whole, resize\n"
	       "               or all (default)\n"
	       "  --duration   seconds per kind (default 2)\n"
	       "  --examples   gaps printed per kind, with the records around them "
	       "(default 3, at most %d)\n"
	       "  --noise      pin the reader and the modifier to two CPUs and wake a thread\n"
	       "               every USEC microseconds on the reader's (default 0: off);\n"
	       "               makes the rare fake gaps frequent\n"
	       "  --query      also ask PROCMAP_QUERY (6.11+) after each pass for the middle\n"
	       "               pages of A and B when every state has them mapped\n"
	       "  --states     print the states each kind was checked against (offsets "
	       "from the layout's start)\n"
	       "Exit status: 0 whatever it finds, 1 if a system call fails, 2 on bad usage.\n",
	       MAX_EXAMPLES);
}

/* A whole number in [lo, hi]. Return: 0 or -EINVAL. */
static int parse_long(const char *val, long lo, long hi, long *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(val, &end, 10);
	if (errno || *end || end == val || n < lo || n > hi)
		return -EINVAL;
	*out = n;
	return 0;
}

/* The first two CPUs this process may run on. Return: 0 or -ENODEV. */
static int two_cpus(int cpu[2])
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -ENODEV;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpu[n++] = c;
	return n == 2 ? 0 : -ENODEV;
}

static int parse_args(int argc, char **argv, struct options *o, int *only)
{
	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;
		long n;

		if (!strcmp(opt, "--states")) {
			o->show_states = true;
			continue;
		}
		if (!strcmp(opt, "--query")) {
			o->query = true;
			continue;
		}
		if (strcmp(opt, "--kind") && strcmp(opt, "--duration") &&
		    strcmp(opt, "--examples") && strcmp(opt, "--noise"))
			return usage_error("unexpected argument '%s' (try --help)", opt);
		if (!val)
			return usage_error("%s: needs a value", opt);
		i++;
		if (!strcmp(opt, "--kind")) {
			*only = -1;
			for (int k = 0; k < NR_KINDS; k++)
				if (!strcmp(val, kinds[k].name))
					*only = k;
			if (*only < 0 && strcmp(val, "all"))
				return usage_error("--kind: unknown kind '%s'", val);
		} else if (!strcmp(opt, "--duration")) {
			errno = 0;
			o->duration = strtod(val, &end);
			if (errno || *end || end == val || !(o->duration > 0) ||
			    o->duration > 86400)
				return usage_error("--duration: bad number of seconds '%s'", val);
		} else if (!strcmp(opt, "--examples")) {
			if (parse_long(val, 0, MAX_EXAMPLES, &n))
				return usage_error("--examples: bad count '%s' (0-%d)", val,
						   MAX_EXAMPLES);
			o->max_examples = (int)n;
		} else {
			if (parse_long(val, 0, 1000000, &o->noise_us))
				return usage_error("--noise: bad number of microseconds '%s'",
						   val);
			if (o->noise_us && two_cpus(o->cpu))
				return usage_error("--noise: needs two CPUs to pin the reader "
						   "and the modifier apart");
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = { .duration = 2.0, .max_examples = 3 };
	unsigned long total[NR_FINDINGS + 1] = { 0 };	/* and the query misses */
	struct utsname u;
	int only = -1, ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage();
			return 0;
		}
	}
	ret = parse_args(argc, argv, &o, &only);
	if (ret)
		return ret;

	page_size = (unsigned long)sysconf(_SC_PAGESIZE);
	if (uname(&u))
		strcpy(u.release, "?");
	ret = place_layout();
	if (ret)
		return die_errno("no free range for the layout", ret);
	printf(PROG ": Linux %s, page size %lu, layout 0x%lx-0x%lx: %d regions of %d pages, "
	       "A = 0x%lx, B = 0x%lx, spare S = 0x%lx; reader: /proc/self/maps in %lu-byte "
	       "read()s", u.release, page_size, base, span_end(), NR_REGIONS, REGION_PAGES,
	       region(A_REGION), region(A_REGION + 1), spare(), page_size);
	if (o.noise_us)
		printf("; noise every %ld us on CPU %d (reader), modifier on CPU %d",
		       o.noise_us, o.cpu[0], o.cpu[1]);
	printf("\n");
	fflush(stdout);

	for (int k = 0; k < NR_KINDS; k++) {
		if (only >= 0 && k != only)
			continue;
		ret = run_kind(&kinds[k], &o, total);
		if (ret)
			return ret;
	}
	printf("total: fake gaps %lu, transient gaps %lu, other %lu", total[F_FAKE],
	       total[F_TRANSIENT], total[F_OTHER]);
	if (o.query)
		printf(", query misses %lu", total[NR_FINDINGS]);
	printf("\n");
	return 0;
}
