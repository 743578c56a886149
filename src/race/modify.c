// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * modify.c - the race layout, the modification cycles and their simulated
 * effect on resident pages (modify.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "race/contract.h"
#include "race/modify.h"
#include "spaces/target.h"
#include "util/alloc.h"
#include "util/compiler.h"
#include "util/linux_compat.h"

#define RP_MAPPED 0x1
#define RP_RESIDENT 0x2
#define RP_PROT_SHIFT 2

static const char *const mod_names[RACE__MODS] = {
	[RACE_MOD_SPLIT] = "split",
	[RACE_MOD_MPROTECT] = "mprotect",
	[RACE_MOD_RESIZE] = "resize",
	[RACE_MOD_REMAP] = "remap",
	[RACE_MOD_REMAP_WHOLE] = "remap-whole",
	[RACE_MOD_UNMAP] = "unmap",
	[RACE_MOD_DONTNEED] = "dontneed",
};

const char *race_mod_name(enum race_mod m)
{
	return (unsigned int)m < RACE__MODS ? mod_names[m] : "?";
}

int race_mod_parse(const char *name, enum race_mod *out)
{
	for (int i = 0; i < RACE__MODS; i++) {
		if (!strcmp(name, mod_names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

bool race_mod_applies(enum race_mod m, int view)
{
	/* a page counted twice shows only where pages are counted */
	if (m == RACE_MOD_DONTNEED)
		return view == VML_VIEW_SMAPS || view == VML_VIEW_SMAPS_ROLLUP ||
		       view == VML_VIEW_NUMA_MAPS;
	return true;
}

unsigned long race_region_addr(const struct race_layout *l, unsigned int i)
{
	return l->base + (unsigned long)i * RACE_REGION_SIZE;
}

int race_region_prot(unsigned int i)
{
	return i % 2 ? PROT_READ : PROT_READ | PROT_WRITE;
}

/* One region's gap after the last region: the spare never touches a region. */
unsigned long race_spare_addr(const struct race_layout *l)
{
	return race_region_addr(l, l->nr_regions + 1);
}

void race_layout_range(const struct race_layout *l, unsigned long *lo, unsigned long *hi)
{
	*lo = l->base;
	*hi = race_spare_addr(l) + RACE_REGION_SIZE;
}

static struct op op_mmap(unsigned long addr, unsigned long len, int prot)
{
	return (struct op){ .kind = OP_MMAP, .addr = addr, .len = len, .prot = prot,
			    .flags = MAP_PRIVATE | MAP_ANONYMOUS,
			    .placement = OP_PLACE_FIXED };
}

static struct op op_range(enum op_kind kind, unsigned long addr, unsigned long len)
{
	return (struct op){ .kind = kind, .addr = addr, .len = len };
}

static struct op op_mprotect(unsigned long addr, unsigned long len, int prot)
{
	return (struct op){ .kind = OP_MPROTECT, .addr = addr, .len = len, .prot = prot };
}

static struct op op_resize(unsigned long addr, unsigned long len, unsigned long new_len)
{
	return (struct op){ .kind = OP_MREMAP, .addr = addr, .len = len, .new_len = new_len };
}

static struct op op_move_in(unsigned long from, unsigned long to, unsigned long len)
{
	return (struct op){ .kind = OP_MREMAP, .addr = from, .len = len, .new_len = len,
			    .new_addr = to,
			    .flags = MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP };
}

static struct op op_write(unsigned long addr, unsigned long len)
{
	return (struct op){ .kind = OP_TOUCH, .addr = addr, .len = len,
			    .access = OP_ACCESS_WRITE };
}

static struct op op_advise(unsigned long addr, unsigned long len, int advice)
{
	return (struct op){ .kind = OP_MADVISE, .addr = addr, .len = len, .advice = advice };
}

int race_setup_ops(const struct race_layout *l, enum race_mod m, struct op *ops, size_t max)
{
	size_t n = 0;

	if (m == RACE_MOD_DONTNEED) {
		if (max < 3)
			return -ENOSPC;
		ops[n++] = op_mmap(l->base, RACE_PAGEWALK_SIZE, PROT_READ | PROT_WRITE);
		ops[n++] = op_advise(l->base, RACE_PAGEWALK_SIZE, MADV_NOHUGEPAGE);
		ops[n++] = op_write(l->base, RACE_PMD_SIZE);
		return (int)n;
	}

	for (unsigned int i = 0; i < l->nr_regions; i++) {
		unsigned long addr = race_region_addr(l, i);
		int prot = race_region_prot(i);

		if (n + 2 > max)
			return -ENOSPC;
		ops[n++] = op_mmap(addr, RACE_REGION_SIZE, prot);
		if (prot & PROT_WRITE)
			ops[n++] = op_write(addr, RACE_REGION_SIZE);
	}
	if (n + 1 > max)
		return -ENOSPC;
	ops[n++] = op_mmap(race_spare_addr(l), RACE_REGION_SIZE, PROT_READ | PROT_EXEC);
	return (int)n;
}

int race_cycle_ops(const struct race_layout *l, enum race_mod m, struct op *ops, size_t max)
{
	unsigned long a = race_region_addr(l, l->a), b = race_region_addr(l, l->a + 1);
	unsigned long s = race_spare_addr(l), p = RACE_PAGE_SIZE;
	int pa = race_region_prot(l->a), pb = race_region_prot(l->a + 1);
	struct op c[RACE_MAX_CYCLE];
	int n = 0;

	switch (m) {
	case RACE_MOD_SPLIT:
		c[n++] = op_mmap(a + p, p, pa | PROT_EXEC);
		c[n++] = op_mmap(b + p, p, pb | PROT_EXEC);
		c[n++] = op_mmap(a + p, p, pa);
		c[n++] = op_mmap(b + p, p, pb);
		break;
	case RACE_MOD_MPROTECT:
		c[n++] = op_mprotect(a + p, p, pa | PROT_EXEC);
		c[n++] = op_mprotect(b + p, p, pb | PROT_EXEC);
		c[n++] = op_mprotect(a + p, p, pa);
		c[n++] = op_mprotect(b + p, p, pb);
		break;
	case RACE_MOD_RESIZE:
		c[n++] = op_resize(a, RACE_REGION_SIZE, p);
		c[n++] = op_resize(b, RACE_REGION_SIZE, p);
		c[n++] = op_resize(a, p, RACE_REGION_SIZE);
		c[n++] = op_resize(b, p, RACE_REGION_SIZE);
		break;
	case RACE_MOD_REMAP:
		c[n++] = op_move_in(s + p, a + p, p);
		c[n++] = op_move_in(s + p, b + p, p);
		c[n++] = op_mprotect(a + p, p, pa);
		c[n++] = op_mprotect(b + p, p, pb);
		break;
	case RACE_MOD_REMAP_WHOLE:
		c[n++] = op_move_in(s, a, RACE_REGION_SIZE);
		c[n++] = op_move_in(s, b, RACE_REGION_SIZE);
		c[n++] = op_mprotect(a, RACE_REGION_SIZE, pa);
		c[n++] = op_mprotect(b, RACE_REGION_SIZE, pb);
		break;
	case RACE_MOD_UNMAP:
		c[n++] = op_range(OP_MUNMAP, a, RACE_REGION_SIZE);
		c[n++] = op_range(OP_MUNMAP, b, RACE_REGION_SIZE);
		c[n++] = op_mmap(a, RACE_REGION_SIZE, pa);
		if (pa & PROT_WRITE)
			c[n++] = op_write(a, RACE_REGION_SIZE);
		c[n++] = op_mmap(b, RACE_REGION_SIZE, pb);
		if (pb & PROT_WRITE)
			c[n++] = op_write(b, RACE_REGION_SIZE);
		break;
	case RACE_MOD_DONTNEED:
		/* the selftest's racer: one byte written, the whole PMD dropped */
		c[n++] = op_write(l->base + RACE_PMD_SIZE, p);
		c[n++] = op_advise(l->base + RACE_PMD_SIZE, RACE_PMD_SIZE, MADV_DONTNEED);
		break;
	case RACE__MODS:
		return -EINVAL;
	}
	if ((size_t)n > max)
		return -ENOSPC;
	memcpy(ops, c, n * sizeof(*c));
	return n;
}

void race_op_reach(const struct op *op, struct race_reach *out)
{
	memset(out, 0, sizeof(*out));
	if (op->kind == OP_TOUCH)
		return;
	out->lo[0] = op->addr;
	out->hi[0] = op->addr + op->len;
	if (op->kind != OP_MREMAP)
		return;
	if (op->flags & MREMAP_FIXED) {
		out->lo[1] = op->new_addr;
		out->hi[1] = op->new_addr + op->new_len;
	} else {
		out->hi[0] = op->addr + VML_MAX(op->len, op->new_len);	/* in place */
	}
}

/* ---- residency ---- */

int race_pages_init(struct race_pages *p, const struct race_layout *l)
{
	race_layout_range(l, &p->lo, &p->hi);
	p->page = vml_zalloc(race_pages_count(p) + 1);
	return p->page ? 0 : -ENOMEM;
}

void race_pages_free(struct race_pages *p)
{
	vml_free(p->page);
	p->page = NULL;
}

size_t race_pages_count(const struct race_pages *p)
{
	return (p->hi - p->lo) / RACE_PAGE_SIZE;
}

/* The page index of @addr, or -1 outside the range. */
static long idx(const struct race_pages *p, unsigned long addr)
{
	return addr >= p->lo && addr < p->hi ? (long)((addr - p->lo) / RACE_PAGE_SIZE) : -1;
}

static void set_range(struct race_pages *p, unsigned long addr, unsigned long len,
		      unsigned char v)
{
	for (unsigned long a = addr; a < addr + len; a += RACE_PAGE_SIZE)
		if (idx(p, a) >= 0)
			p->page[idx(p, a)] = v;
}

void race_pages_apply(struct race_pages *p, const struct op *op)
{
	unsigned char v, prot;
	long i;

	switch (op->kind) {
	case OP_MMAP:
		/* a fresh private anonymous mapping: nothing resident yet */
		set_range(p, op->addr, op->len, RP_MAPPED | (op->prot << RP_PROT_SHIFT));
		break;
	case OP_MUNMAP:
		set_range(p, op->addr, op->len, 0);
		break;
	case OP_MPROTECT:
		for (unsigned long a = op->addr; a < op->addr + op->len; a += RACE_PAGE_SIZE) {
			i = idx(p, a);
			if (i >= 0 && (p->page[i] & RP_MAPPED))
				p->page[i] = (p->page[i] & (RP_MAPPED | RP_RESIDENT)) |
					     (op->prot << RP_PROT_SHIFT);
		}
		break;
	case OP_MREMAP:
		if (op->flags & MREMAP_DONTUNMAP) {
			/* the pages move; the source stays mapped, empty */
			for (unsigned long o = 0; o < op->len; o += RACE_PAGE_SIZE) {
				long s = idx(p, op->addr + o), d = idx(p, op->new_addr + o);

				v = s >= 0 ? p->page[s] : 0;
				if (d >= 0)
					p->page[d] = v;
				if (s >= 0)
					p->page[s] = v & ~RP_RESIDENT;
			}
		} else if (op->new_len < op->len) {
			set_range(p, op->addr + op->new_len, op->len - op->new_len, 0);
		} else if (op->new_len > op->len) {
			i = idx(p, op->addr);
			prot = i >= 0 ? p->page[i] & ~RP_RESIDENT : 0;
			set_range(p, op->addr + op->len, op->new_len - op->len, prot);
		}
		break;
	case OP_TOUCH:
		if (op->access != OP_ACCESS_WRITE)
			break;	/* a read fault maps the zero page: not resident in Rss */
		for (unsigned long a = op->addr; a < op->addr + op->len; a += RACE_PAGE_SIZE) {
			i = idx(p, a);
			if (i >= 0 && (p->page[i] & RP_MAPPED) &&
			    ((p->page[i] >> RP_PROT_SHIFT) & PROT_WRITE))
				p->page[i] |= RP_RESIDENT;
		}
		break;
	default:
		break;
	}
}

void race_pages_resident(const struct race_pages *p, unsigned char *out)
{
	for (size_t i = 0; i < race_pages_count(p); i++)
		out[i] = (p->page[i] & RP_RESIDENT) != 0;
}
