// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_diff.c - applying op sequences to the model and a live child side by
 * side, comparing after every op, and shrinking a difference (differential.h).
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
#define MAX_OUTSIDE 256		/* mappings placed outside the script range, per sequence */

struct fuzz_pair {
	struct target_env *env;
	struct target *t[2];		/* model, live */
	bool files;			/* the prologue's files exist */
	/* mappings the last sequence got outside the script range (hints, moves) */
	unsigned long out_addr[MAX_OUTSIDE], out_len[MAX_OUTSIDE];
	int out_target[MAX_OUTSIDE];
	size_t nr_out;
	unsigned int forks;		/* fork ops since the targets were created */
	/*
	 * An op since the last reset left what a reset cannot take back: a
	 * sealed VMA (no munmap of it), or the prologue's files changed for
	 * good (truncated, punched, collapsed into a huge folio). The next
	 * reset makes both targets and their files afresh.
	 */
	bool spoiled;
	/* its THP knobs (--mthp): the environment points here */
	struct script_knob knobs[FUZZ_MAX_KNOBS];
	size_t nr_knobs;
};

static const char *const diff_names[] = {
	[FUZZ_SAME] = "same",
	[FUZZ_RESULT] = "result",
	[FUZZ_ADDRESS] = "address",
	[FUZZ_MAPS] = "maps",
	[FUZZ_SMAPS] = "smaps",
};

const char *fuzz_diff_name(enum fuzz_diff_kind kind)
{
	return (unsigned int)kind < ARRAY_SIZE(diff_names) ? diff_names[kind] : "?";
}

void fuzz_pair_destroy(struct fuzz_pair *p)
{
	if (!p)
		return;
	target_destroy(p->t[0]);
	target_destroy(p->t[1]);
	target_env_put(p->env);
	vml_free(p);
}

/* Set once by the command before the first pair; read-only afterwards. */
static uint64_t fuzz_swap_bytes;

void fuzz_set_swap(uint64_t bytes)
{
	fuzz_swap_bytes = bytes;
}

/* Set by the command before it creates a pair (the main thread only). */
static struct script_knob fuzz_knobs[FUZZ_MAX_KNOBS];
static size_t fuzz_nr_knobs;
static char pair_err[256];	/* why the last fuzz_pair_create() failed */

int fuzz_set_knobs(const struct script_knob *knobs, size_t nr)
{
	if (nr > FUZZ_MAX_KNOBS)
		return -E2BIG;
	memcpy(fuzz_knobs, knobs, nr * sizeof(*knobs));
	fuzz_nr_knobs = nr;
	return 0;
}

const char *fuzz_pair_error(void)
{
	return pair_err;
}

/* Both targets and their environment, with the command's swap and knobs. */
static int pair_make_targets(struct fuzz_pair *p)
{
	int ret;

	pair_err[0] = '\0';
	ret = target_env_create(&p->env);
	if (!ret && fuzz_swap_bytes)
		ret = target_env_set_swap(p->env, fuzz_swap_bytes, false, pair_err,
					  sizeof(pair_err));
	if (!ret && fuzz_nr_knobs) {
		/* the pair's own copy: the environment keeps a pointer to it */
		memcpy(p->knobs, fuzz_knobs, fuzz_nr_knobs * sizeof(*p->knobs));
		p->nr_knobs = fuzz_nr_knobs;
		ret = target_env_set_knobs(p->env, p->knobs, p->nr_knobs, true, pair_err,
					   sizeof(pair_err));
	}
	if (!ret)
		ret = target_create(TARGET_MODEL, p->env, &p->t[0]);
	if (!ret)
		ret = target_create(TARGET_LIVE, p->env, &p->t[1]);
	return ret;
}

int fuzz_pair_create(struct fuzz_pair **out)
{
	struct fuzz_pair *p = vml_zalloc(sizeof(*p));
	int ret;

	if (!p)
		return -ENOMEM;
	ret = pair_make_targets(p);
	if (ret) {
		fuzz_pair_destroy(p);
		return ret;
	}
	*out = p;
	return 0;
}

/* A spoiled pair's reset: new targets and files, the pair's own settings kept. */
static int pair_renew(struct fuzz_pair *p)
{
	target_destroy(p->t[0]);
	target_destroy(p->t[1]);
	target_env_put(p->env);
	p->t[0] = p->t[1] = NULL;
	p->env = NULL;
	p->files = false;
	p->nr_out = 0;
	p->forks = 0;
	p->spoiled = false;
	return pair_make_targets(p);
}

/* Does @op leave what fuzz_pair_reset() cannot undo (struct fuzz_pair's spoiled)? */
static bool op_spoils(const struct op *op)
{
	switch (op->kind) {
	case OP_MSEAL:
	case OP_TRUNCATE:
	case OP_PUNCH:
		return true;
	case OP_MADVISE:
	case OP_PROCESS_MADVISE:
		return op->advice == MADV_REMOVE || op->advice == MADV_COLLAPSE;
	default:
		return false;
	}
}

/* One view of target @i, cut to the script range and normalised. */
static char *view_of(struct fuzz_pair *p, int i, enum vml_view view)
{
	const char *subst[4] = {
		target_env_dir(p->env, false), "/tmp/vmalock.XXXXXX",
		target_env_dir(p->env, true), "/dev/shm/vmalock.XXXXXX",
	};
	char *text, *cut, *norm = NULL;
	size_t len;

	if (target_read_view(p->t[i], view, VML_LOCK_VMA, &text, &len))
		return NULL;
	cut = view_cut(view, text, SCRIPT_RANGE_LO, SCRIPT_RANGE_HI);
	vml_free(text);
	if (cut)
		norm = view_normalise(cut, subst, 2);
	vml_free(cut);
	return norm;
}

unsigned int fuzz_pair_forks(const struct fuzz_pair *p)
{
	return p->forks;
}

char *fuzz_pair_model_maps(struct fuzz_pair *p)
{
	return view_of(p, 0, VML_VIEW_MAPS);
}

static int apply_both(struct fuzz_pair *p, const struct op *op, struct op_result *res)
{
	for (int i = 0; i < 2; i++) {
		int ret;

		if (op->kind == OP_FILE && p->files) {
			res[i] = (struct op_result){ 0 };	/* made by an earlier sequence */
			continue;
		}
		ret = target_apply(p->t[i], op, &res[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static bool in_range(unsigned long a)
{
	return a >= SCRIPT_RANGE_LO && a < SCRIPT_RANGE_HI;
}

/* Remember a mapping placed outside the script range, to unmap it at reset. */
static void note_outside(struct fuzz_pair *p, const struct op *op, const struct op_result *res)
{
	unsigned long len = op->kind == OP_MREMAP ? op->new_len : op->len;

	len = (len + PG - 1) & ~(PG - 1);
	for (int i = 0; i < 2; i++) {
		if (res[i].ret || in_range(res[i].addr) || !res[i].addr ||
		    p->nr_out == MAX_OUTSIDE)
			continue;
		p->out_addr[p->nr_out] = res[i].addr;
		p->out_target[p->nr_out] = i;
		p->out_len[p->nr_out++] = len;
	}
}

static void describe_result(struct fuzz_diff *d, const struct op *op, const char *what)
{
	char line[256], a[24], b[24];

	format_op(op, line, sizeof(line));
	snprintf(d->what, sizeof(d->what), "op %zu `%s`: %s model %s, live %s", d->op + 1, line,
		 what, errno_name(d->ret[0], a, sizeof(a)), errno_name(d->ret[1], b, sizeof(b)));
}

static int compare_view(struct fuzz_pair *p, enum vml_view view, struct fuzz_diff *d,
			const struct op *op)
{
	char *m = view_of(p, 0, view), *l = m ? view_of(p, 1, view) : NULL, *diff = NULL;
	char line[256], la[32], lb[32];
	int ret = 0;

	if (!m || !l) {
		ret = -ENOMEM;
		goto out;
	}
	if (!strcmp(m, l))
		goto out;
	snprintf(la, sizeof(la), "model/%s", target_view_name(view));
	snprintf(lb, sizeof(lb), "live/%s", target_view_name(view));
	diff = view_diff(m, l, la, lb);
	format_op(op, line, sizeof(line));
	d->kind = view == VML_VIEW_MAPS ? FUZZ_MAPS : FUZZ_SMAPS;
	snprintf(d->what, sizeof(d->what), "after op %zu `%s`: %s differs:\n%s", d->op + 1, line,
		 target_view_name(view), diff ? diff : "(out of memory for the diff)");
out:
	vml_free(m);
	vml_free(l);
	vml_free(diff);
	return ret;
}

int fuzz_pair_step(struct fuzz_pair *p, const struct op *op, size_t index, bool smaps,
		   struct fuzz_diff *d, int *res_live)
{
	struct op_result res[2];
	int ret;

	memset(d, 0, sizeof(*d));
	d->op = index;
	d->op_kind = op->kind;
	if (op_spoils(op))
		p->spoiled = true;
	ret = apply_both(p, op, res);
	if (ret)
		return ret;
	if (op->kind == OP_FORK)
		p->forks++;
	d->ret[0] = res[0].ret;
	d->ret[1] = res[1].ret;
	if (res_live)
		*res_live = res[1].ret;
	note_outside(p, op, res);
	if (res[0].ret != res[1].ret) {
		d->kind = FUZZ_RESULT;
		describe_result(d, op, "returned");
		return 0;
	}
	if (!res[0].ret && res[0].addr != res[1].addr &&
	    (in_range(res[0].addr) || in_range(res[1].addr))) {
		d->kind = FUZZ_ADDRESS;
		describe_result(d, op, "placed differently:");
		snprintf(d->what + strlen(d->what), sizeof(d->what) - strlen(d->what),
			 " (model 0x%lx, live 0x%lx)", res[0].addr, res[1].addr);
		return 0;
	}
	ret = compare_view(p, VML_VIEW_MAPS, d, op);
	if (!ret && !d->kind && smaps)
		ret = compare_view(p, VML_VIEW_SMAPS, d, op);
	return ret;
}

/* Unmap every VMA of the script range that @maps lists, on target @i. */
static int unmap_listed(struct fuzz_pair *p, int i, const char *maps)
{
	const char *s = maps;

	while (s && *s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		struct maps_line ml;
		struct op_result res;
		struct op op = { .kind = OP_MUNMAP };
		int ret;

		if (maps_line_parse(s, len, &ml)) {
			op.addr = ml.start;
			op.len = ml.end - ml.start;
			ret = target_apply(p->t[i], &op, &res);
			if (ret)
				return ret;
		}
		s = nl ? nl + 1 : NULL;
	}
	return 0;
}

int fuzz_pair_reset(struct fuzz_pair *p)
{
	int ret = 0;

	if (p->spoiled)
		return pair_renew(p);

	for (int i = 0; i < 2 && !ret; i++) {
		struct op unlock = { .kind = OP_MUNLOCKALL };
		struct op_result unlock_res;
		char *maps;

		/* Back to the first process alone, with no mlockall(MCL_FUTURE) in force. */
		target_forget_forks(p->t[i]);
		ret = target_apply(p->t[i], &unlock, &unlock_res);
		if (ret)
			break;
		maps = view_of(p, i, VML_VIEW_MAPS);

		ret = maps ? unmap_listed(p, i, maps) : -ENOMEM;
		vml_free(maps);
		/*
		 * What the kernel placed for us outside the range: the sequence
		 * never touches it again, and the live child maps nothing of its
		 * own after start-up, so it is still exactly that mapping.
		 */
		for (size_t k = 0; k < p->nr_out && !ret; k++) {
			struct op op = { .kind = OP_MUNMAP, .addr = p->out_addr[k],
					 .len = p->out_len[k] };
			struct op_result res;

			if (p->out_target[k] == i)
				ret = target_apply(p->t[i], &op, &res);
		}
	}
	p->nr_out = 0;
	p->files = true;
	return ret;
}

int fuzz_replay(struct fuzz_pair *p, bool fresh, const struct op *ops, size_t nr, bool smaps,
		struct fuzz_diff *d, int *res_live)
{
	struct fuzz_pair *q = p;
	int ret = 0;

	if (fresh) {
		ret = fuzz_pair_create(&q);
		if (ret)
			return ret;
	} else {
		ret = fuzz_pair_reset(p);
		if (ret)
			return ret;
	}
	memset(d, 0, sizeof(*d));
	for (size_t k = 0; k < nr && !ret; k++) {
		ret = fuzz_pair_step(q, &ops[k], k, smaps, d, res_live ? &res_live[k] : NULL);
		if (!ret && d->kind)
			ret = 1;
	}
	if (fresh)
		fuzz_pair_destroy(q);
	return ret;
}

/* ---- shrinking ---- */

/*
 * Does @ops still show the difference @d stands for (the same kind after
 * the same kind of op, with the same two results)? Shrinking must not slide
 * from one bug to another. Truncates *@nr to the first difference.
 * Return: 1, 0, -errno.
 */
static int still_fails(struct fuzz_pair *p, struct op *ops, size_t *nr, bool smaps,
		       struct fuzz_diff *d)
{
	struct fuzz_diff dd;
	int ret = fuzz_replay(p, false, ops, *nr, smaps, &dd, NULL);

	if (ret != 1)
		return ret;
	if (dd.kind != d->kind || dd.op_kind != d->op_kind ||
	    (d->kind == FUZZ_RESULT && (dd.ret[0] != d->ret[0] || dd.ret[1] != d->ret[1])))
		return 0;
	*nr = dd.op + 1;
	*d = dd;
	return 1;
}

/* Does every `select child N` of @ops follow N forks, as a script must? */
static bool selects_valid(const struct op *ops, size_t nr)
{
	unsigned int forks = 0;

	for (size_t k = 0; k < nr; k++) {
		if (ops[k].kind == OP_FORK)
			forks++;
		else if (ops[k].kind == OP_SELECT && ops[k].child > forks)
			return false;
	}
	return true;
}

/* ddmin over the ops after the prologue: remove chunks while the difference stays. */
static int drop_ops(struct fuzz_pair *p, struct op *ops, size_t *nr, size_t keep, bool smaps,
		    struct fuzz_diff *d)
{
	struct op *trial = vml_malloc((*nr + 1) * sizeof(*trial));
	size_t chunks = 2;
	int ret = 0;

	if (!trial)
		return -ENOMEM;
	while (*nr - keep >= 1 && ret >= 0) {
		size_t body = *nr - keep, size = (body + chunks - 1) / chunks;
		bool reduced = false;

		for (size_t c = 0; c < chunks && !reduced; c++) {
			size_t lo = keep + c * size, hi = VML_MIN(lo + size, *nr), n = 0;

			if (lo >= hi)
				continue;
			for (size_t k = 0; k < *nr; k++)
				if (k < lo || k >= hi)
					trial[n++] = ops[k];
			if (!selects_valid(trial, n))
				continue;	/* no script says that: keep the fork */
			ret = still_fails(p, trial, &n, smaps, d);
			if (ret < 0)
				break;
			if (ret == 1) {
				memcpy(ops, trial, n * sizeof(*ops));
				*nr = n;
				chunks = VML_MAX(chunks - 1, 2);
				reduced = true;
			}
		}
		if (ret < 0)
			break;
		if (!reduced) {
			if (size <= 1)
				break;
			chunks = VML_MIN(chunks * 2, body);
		}
	}
	vml_free(trial);
	return ret < 0 ? ret : 0;
}

/* Try simpler values for one op's fields, keeping each that keeps the difference. */
static int simplify(struct fuzz_pair *p, struct op *ops, size_t *nr, size_t keep, bool smaps,
		    struct fuzz_diff *d)
{
	static const int drop_flags[] = { MAP_POPULATE, MAP_NORESERVE, MAP_LOCKED, MAP_GROWSDOWN };

	for (size_t k = keep; k < *nr; k++) {
		struct op *op = &ops[k];

		for (int attempt = 0; attempt < 12; attempt++) {
			struct op saved = *op;
			size_t n = *nr;
			int ret;

			switch (attempt) {
			case 0:
				if (op->len > PG && !(op->len & (PG - 1)))
					op->len = PG;
				break;
			case 1:
				if (op->len > 2 * PG && !(op->len & (PG - 1)))
					op->len = (op->len / 2) & ~(PG - 1);
				break;
			case 2:
				if (op->new_len > PG && !(op->new_len & (PG - 1)))
					op->new_len = PG;
				break;
			case 3:
				op->offset = 0;
				break;
			case 4:
				if (op->kind == OP_MMAP)
					op->placement = OP_PLACE_AUTO;
				break;
			case 5:
				if (op->kind == OP_MMAP || op->kind == OP_MPROTECT)
					op->prot = PROT_READ | PROT_WRITE;
				break;
			default:
				if (op->kind == OP_MMAP &&
				    attempt - 6 < (int)ARRAY_SIZE(drop_flags))
					op->flags &= ~drop_flags[attempt - 6];
				break;
			}
			if (!memcmp(&saved, op, sizeof(saved)))
				continue;
			ret = still_fails(p, ops, &n, smaps, d);
			if (ret < 0)
				return ret;
			if (ret == 1 && n == *nr)
				continue;	/* simpler, and still fails at the same op */
			*op = saved;
		}
	}
	return 0;
}

int fuzz_shrink(struct fuzz_pair *p, struct op *ops, size_t *nr, bool smaps,
		struct fuzz_diff *d)
{
	size_t keep = 0;
	int ret;

	while (keep < *nr && ops[keep].kind == OP_FILE)
		keep++;
	ret = drop_ops(p, ops, nr, keep, smaps, d);
	if (!ret)
		ret = simplify(p, ops, nr, keep, smaps, d);
	if (!ret)
		ret = still_fails(p, ops, nr, smaps, d) < 0 ? -EIO : 0;
	return ret;
}

char *fuzz_script_text(const struct op *ops, const int *expect, size_t nr, const char *header)
{
	size_t cap = strlen(header) + nr * 200 + 64, len = 0;
	char *out = vml_malloc(cap);

	if (!out)
		return NULL;
	len = snprintf(out, cap, "%s", header);
	for (size_t k = 0; k < nr; k++) {
		struct op op = ops[k];

		op.has_expect = op.kind != OP_FILE;
		op.expect = expect[k];
		len += format_op(&op, out + len, cap - len);
		if (len + 2 >= cap)
			break;
		out[len++] = '\n';
		out[len] = '\0';
	}
	return out;
}
