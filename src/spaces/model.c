// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * model.c - the model target: a thin adapter from ops to the public API
 * (include/vmalock/mm.h, proc.h). One vml_sys per target, with the live
 * machine's defaults, so two model targets never share files or settings.
 *
 * The only logic here is what the system-call boundary does before the
 * model sees the call: an mmap without MAP_ANONYMOUS and without a file is
 * mmap(..., fd = -1, ...), which fails with EBADF; with MAP_ANONYMOUS the
 * kernel ignores the file; process_madvise() reads its one iovec (a length
 * over SSIZE_MAX is EINVAL, one over MAX_RW_COUNT is cut to it) before it
 * advises as madvise() does.
 *
 * Processes: `fork` adds an mm (numbered 1, 2, ... in fork order); ops and
 * views go to the selected one (`select`), the first mm at the start.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "host/host.h"
#include "util/linux_compat.h"
#include "vmalock/khugepaged.h"
#include "spaces/target.h"
#include "util/alloc.h"
#include "util/compiler.h"

struct model {
	struct vml_sys *sys;
	struct vml_mm *mm;		/* the script's first process */
	struct vml_mm **forks;		/* fork op children, forks[i] is process i + 1 */
	size_t nr_forks, forks_cap;
	struct vml_mm *cur;		/* the selected process: ops and views act on it */
	bool adopted;			/* sys and mm are the caller's (target_model_adopt) */
};

/* fs/read_write.c: the most one iovec may ask for (INT_MAX rounded down to a page). */
#define MAX_RW_COUNT (0x7fffffffUL & ~4095UL)

static int model_create(struct target *t)
{
	struct vml_sys_config cfg;	/* this host's, or the --profile's, with the script's knobs */
	struct model *m;
	size_t nr_knobs;
	const struct script_knob *knobs = target_env_knobs(t->env, &nr_knobs);
	char err[256];
	int ret = host_current_config_knobs(target_env_swap_bytes(t->env), knobs, nr_knobs, &cfg,
					    err, sizeof(err));

	if (ret)
		return ret;
	cfg.kernel_transients = target_env_kernel_transients(t->env);
	cfg.costs = *target_env_costs(t->env);
	m = vml_zalloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	ret = vml_sys_create(&cfg, &m->sys);
	if (ret)
		goto fail;
	ret = vml_mm_create(m->sys, &m->mm);
	if (ret)
		goto fail_sys;
	m->cur = m->mm;
	t->priv = m;
	return 0;
fail_sys:
	vml_sys_destroy(m->sys);
fail:
	vml_free(m);
	return ret;
}

/* target.h */
int target_model_adopt_priv(struct target *t, struct vml_sys *sys, struct vml_mm *mm)
{
	struct model *m = vml_zalloc(sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->sys = sys;
	m->mm = m->cur = mm;
	m->adopted = true;
	t->priv = m;
	return 0;
}

static void model_destroy(struct target *t)
{
	struct model *m = t->priv;

	if (!m)
		return;
	for (size_t i = 0; i < m->nr_forks; i++)
		vml_mm_destroy(m->forks[i]);
	vml_free(m->forks);
	if (!m->adopted)
		vml_mm_destroy(m->mm);
	/* the mappings of a file hold references of their own */
	for (size_t i = 0; i < t->nr_files; i++)
		vml_file_put(t->files[i].priv);
	if (!m->adopted)
		vml_sys_destroy(m->sys);
	vml_free(m);
	t->priv = NULL;
}

static int model_file(struct target *t, const struct op *op, struct target_file *file, int *ret)
{
	struct model *m = t->priv;
	struct vml_file *f;

	/* A memfd is a tmpfs file whose maps name is file->path ("/memfd:NAME (deleted)"). */
	*ret = vml_file_create(m->sys, file->path, op->size,
			       (op->shmem ? VML_FILE_SHMEM : 0) | (op->memfd ? VML_FILE_MEMFD : 0), &f);
	if (!*ret)
		file->priv = f;
	return 0;
}

static int model_fork(struct model *m)
{
	struct vml_mm **nf, *child;
	int ret;

	nf = vml_grow_array(m->forks, &m->forks_cap, m->nr_forks + 1, sizeof(*nf), 4);
	if (!nf)
		return -ENOMEM;
	m->forks = nf;
	ret = vml_fork(m->cur, &child);
	if (!ret)
		m->forks[m->nr_forks++] = child;
	return ret;
}

/* madvise(2): MADV_COLLAPSE is the khugepaged layer's (vml_madvise_collapse). */
static int model_madvise(struct model *m, unsigned long addr, unsigned long len, int advice)
{
	if (advice == MADV_COLLAPSE)
		return vml_madvise_collapse(m->cur, addr, len);
	return vml_madvise(m->cur, addr, len, advice);
}

/* process_madvise(pidfd of ourselves, one iovec, advice, 0). */
static int model_process_madvise(struct model *m, const struct op *op)
{
	unsigned long len = op->len;

	if (!len)
		return 0;		/* an empty iovec is never looked at, not even its address */
	if (len > (unsigned long)SSIZE_MAX)
		return -EINVAL;		/* import_iovec */
	if (len > MAX_RW_COUNT)
		len = MAX_RW_COUNT;
	return model_madvise(m, op->addr, len, op->advice);
}

static void model_forget_forks(struct model *m)
{
	for (size_t i = 0; i < m->nr_forks; i++)
		vml_mm_destroy(m->forks[i]);
	m->nr_forks = 0;
	m->cur = m->mm;
}

/* @mm's smaps_rollup, walked (@walk) or from the incremental sums, into @buf. */
static ssize_t read_rollup(struct vml_mm *mm, bool walk, char *buf, size_t len)
{
	struct vml_reader *r;
	size_t n = 0;
	ssize_t got;
	int ret = vml_reader_open(mm, VML_VIEW_SMAPS_ROLLUP, VML_LOCK_VMA, &r);

	if (ret)
		return ret;
	ret = walk ? vml_reader_set_flags(r, VML_READER_ROLLUP_WALK) : 0;
	/* Ends: each read returns fewer bytes than asked only at the end, or fails. */
	while (!ret && n + 1 < len && (got = vml_reader_read(r, buf + n, len - 1 - n)) != 0) {
		if (got < 0) {
			ret = (int)got;
			break;
		}
		n += (size_t)got;
	}
	vml_reader_close(r);
	buf[n] = '\0';
	return ret ? ret : (ssize_t)n;
}

#define ROLLUP_TEXT 2048

/*
 * Every process's rollup from the sums first, then walked: a walk locks
 * the tables it passes, and each unlock recounts a table (rollup.c), which
 * would hide a share left stale by another process's change.
 */
int target_model_rollup_check(struct target *t, char *what, size_t len)
{
	struct model *m = t->priv;
	size_t nr = 1 + m->nr_forks;
	char *inc = vml_malloc(nr * ROLLUP_TEXT), walk[ROLLUP_TEXT];
	int ret = inc ? 0 : -ENOMEM;

	for (size_t i = 0; !ret && i < nr; i++) {
		ssize_t n = read_rollup(i ? m->forks[i - 1] : m->mm, false, inc + i * ROLLUP_TEXT,
					ROLLUP_TEXT);

		ret = n < 0 ? (int)n : 0;
	}
	for (size_t i = 0; !ret && i < nr; i++) {
		ssize_t n = read_rollup(i ? m->forks[i - 1] : m->mm, true, walk, sizeof(walk));

		if (n < 0)
			ret = (int)n;
		else if (strcmp(walk, inc + i * ROLLUP_TEXT)) {
			snprintf(what, len, "process %zu: smaps_rollup walked:\n%sincremental:\n%s",
				 i, walk, inc + i * ROLLUP_TEXT);
			ret = 1;
		}
	}
	vml_free(inc);
	return ret;
}

static int model_apply_op(struct target *t, const struct op *op, int mmap_flags,
			  const struct target_file *file, struct op_result *res);

/*
 * --rollup check: after the op, every process's rollup both ways. A
 * difference is printed (the library never prints; the tool layer may)
 * and fails the op with -EPROTO, which no system call returns here.
 */
static int model_apply(struct target *t, const struct op *op, int mmap_flags,
		       const struct target_file *file, struct op_result *res)
{
	char what[4500];
	int ret = model_apply_op(t, op, mmap_flags, file, res);

	if (ret || !host_model_switches().rollup_check)
		return ret;
	ret = target_model_rollup_check(t, what, sizeof(what));
	if (ret > 0) {
		fprintf(stderr, "vmalock: rollup check after %s: %s", op_kind_name(op->kind), what);
		res->ret = -EPROTO;
		ret = 0;
	}
	return ret;
}

static int model_apply_op(struct target *t, const struct op *op, int mmap_flags,
			  const struct target_file *file, struct op_result *res)
{
	struct model *m = t->priv;
	struct vml_file *f = file ? file->priv : NULL;
	int r;

	switch (op->kind) {
	case OP_MMAP:
		if (mmap_flags & MAP_ANONYMOUS)
			f = NULL;
		else if (!f) {
			r = -EBADF;
			break;
		}
		r = vml_mmap(m->cur, op->addr, op->len, op->prot, mmap_flags, f, op->offset,
			     &res->addr);
		break;
	case OP_MUNMAP:
		r = vml_munmap(m->cur, op->addr, op->len);
		break;
	case OP_MPROTECT:
		r = vml_mprotect(m->cur, op->addr, op->len, op->prot);
		break;
	case OP_MREMAP:
		r = vml_mremap(m->cur, op->addr, op->len, op->new_len, op->flags, op->new_addr,
			       &res->addr);
		break;
	case OP_MADVISE:
		r = model_madvise(m, op->addr, op->len, op->advice);
		break;
	case OP_TOUCH:
		r = vml_touch(m->cur, op->addr, op->len,
			      op->access == OP_ACCESS_WRITE ? VML_TOUCH_WRITE : VML_TOUCH_READ);
		break;
	case OP_MLOCK:
		r = op->flags ? vml_mlock2(m->cur, op->addr, op->len, (unsigned int)op->flags) :
				vml_mlock(m->cur, op->addr, op->len);
		break;
	case OP_MLOCKALL:
		r = vml_mlockall(m->cur, op->flags);
		break;
	case OP_MUNLOCKALL:
		r = vml_munlockall(m->cur);
		break;
	case OP_PROCESS_MADVISE:
		r = model_process_madvise(m, op);
		break;
	case OP_SELECT:
		if (op->child > m->nr_forks) {
			r = -ESRCH;	/* that fork failed */
			break;
		}
		m->cur = op->child ? m->forks[op->child - 1] : m->mm;
		r = 0;
		break;
	case OP_MUNLOCK:
		r = vml_munlock(m->cur, op->addr, op->len);
		break;
	case OP_NAME:
		r = vml_set_anon_name(m->cur, op->addr, op->len, op->name);
		break;
	case OP_FORK:
		r = model_fork(m);
		break;
	case OP_MSEAL:
		r = vml_mseal(m->cur, op->addr, op->len, 0);
		break;
	case OP_TRUNCATE:
		/* ftruncate's length is an off_t: a size above LLONG_MAX is negative */
		r = f ? vml_file_truncate(f, (long long)op->size) : -EBADF;
		break;
	case OP_PUNCH:
		r = f ? vml_file_punch(f, (long long)op->offset, (long long)op->len) : -EBADF;
		break;
	case OP_CLEAR_REFS:
		r = vml_clear_refs(m->cur, op->flags);
		break;
	default:
		return -EINVAL;
	}
	res->ret = r;
	return 0;
}

static int model_reader_open(struct target *t, enum vml_view view, enum vml_lock_policy lock,
			     struct target_reader *r)
{
	struct model *m = t->priv;
	struct vml_reader *vr;
	int ret = vml_reader_open(m->cur, view, lock, &vr);

	if (!ret)
		r->priv = vr;
	return ret;
}

static ssize_t model_reader_read(struct target_reader *r, char *buf, size_t len)
{
	return vml_reader_read(r->priv, buf, len);
}

static int model_reader_rewind(struct target_reader *r)
{
	vml_reader_rewind(r->priv);
	return 0;
}

static void model_reader_close(struct target_reader *r)
{
	vml_reader_close(r->priv);
}

static int model_query(struct target *t, enum vml_lock_policy lock, struct vml_procmap_query *q)
{
	struct model *m = t->priv;

	return vml_procmap_query(m->cur, lock, q);
}

struct vml_mm *target_model_mm(const struct target *t)
{
	return t->kind == TARGET_MODEL ? ((struct model *)t->priv)->mm : NULL;
}

static void model_forget(struct target *t)
{
	model_forget_forks(t->priv);
}

const struct target_ops target_model_ops = {
	.create = model_create,
	.destroy = model_destroy,
	.file = model_file,
	.apply = model_apply,
	.reader_open = model_reader_open,
	.reader_read = model_reader_read,
	.reader_rewind = model_reader_rewind,
	.reader_close = model_reader_close,
	.query = model_query,
	.forget_forks = model_forget,
};
