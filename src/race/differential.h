/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * differential.h - differential fuzzing (`vmalock fuzz`): random op sequences
 * applied to the model and a live child side by side; the result of every
 * op (errno included) and the maps of the script range after every step
 * must agree. A difference is shrunk to a minimal script (delta debugging:
 * drop ops, then simplify numbers) that `vmalock replay FILE --target both
 * --compare maps` shows.
 *
 * The generator (fuzz_gen.c) draws every op of the script format, with
 * addresses and sizes biased towards the VMAs that exist (their
 * boundaries, their insides, a page either side) and mostly inside a
 * 256 KiB window at SCRIPT_RANGE_LO, so that ops collide. Excluded, because
 * the two targets answer differently by design:
 *   - `name` where the live kernel has no CONFIG_ANON_VMA_NAME;
 *   - `file ... memfd` (the prologue's files are fixed);
 *   - more than one `fork` a sequence (the live child keeps at most 256
 *     forked children alive).
 *
 * The runner (fuzz_diff.c) keeps one model and one live target for many
 * sequences (a fresh model costs half a second to tear down) and clears
 * the script range between sequences; a difference is confirmed and shrunk
 * on fresh targets.
 */
#ifndef VML_RACE_DIFFERENTIAL_H
#define VML_RACE_DIFFERENTIAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "script/script.h"
#include "spaces/target.h"
#include "util/rand.h"

#define FUZZ_WINDOW_PAGES 64
#define FUZZ_FILE_SIZE (64UL << 10)

/* ---- the generator ---- */

struct fuzz_gen {
	struct vml_rand rnd;
	unsigned int forks;		/* forks drawn in this sequence */
	bool future_locked;		/* an mlockall(MCL_FUTURE) drawn and not undone */
	bool names;			/* draw `name` ops (the host has anon VMA names) */
	bool thp;			/* --mthp: ops shaped for huge pages (fuzz_gen_thp) */
	unsigned long win_lo;		/* the window most addresses fall in */
	unsigned long win_pages;
	/* the VMAs of the script range, from the model's maps before the op */
	unsigned long *start, *end;
	size_t nr, cap;
};

/* A generator for sequence @seq of run @seed. Return: 0 or -ENOMEM (cap of the VMA list). */
int fuzz_gen_init(struct fuzz_gen *g, uint64_t seed, uint64_t seq);
void fuzz_gen_free(struct fuzz_gen *g);

/*
 * The ops every sequence starts with: its files (file names live in static
 * storage); with @thp (--mthp) the tmpfs file is 4 MiB, room for huge pages.
 */
size_t fuzz_gen_prologue(struct op *ops, size_t max, bool thp);

/*
 * fuzz_gen_thp - shape this sequence's ops for huge pages (--mthp): a 4 MiB
 * window at a 2 MiB boundary half the time, addresses rounded to 64 KiB
 * and 2 MiB, lengths of whole blocks, madvise hugepage/nohugepage more
 * often, touches of a whole block, file offsets 0 and 2 MiB. Call right
 * after fuzz_gen_init(); without it a seed draws what it always drew.
 */
void fuzz_gen_thp(struct fuzz_gen *g);

/* The most knobs fuzz_gen_knobs() draws: thp, thp_shmem, two per size. */
#define FUZZ_MAX_KNOBS (2 + 2 * 4)

/*
 * fuzz_gen_knobs - the THP knob set for the pair of targets created at
 * sequence @seq of run @seed (--mthp): thp, thp_shmem, and for 64, 16, 128
 * and 2048 kB - those of @host_kb (the sizes this host has) -
 * hugepages-NkB and hugepages-NkB.shmem, in the order to write them.
 * A smaller size's shmem mode is never `inherit` under force (the kernel
 * refuses it).
 * Return: how many knobs it wrote to @out (FUZZ_MAX_KNOBS room).
 */
size_t fuzz_gen_knobs(uint64_t seed, uint64_t seq, const unsigned int *host_kb, size_t nr_host,
		      struct script_knob *out);

/* "knobs NAME=VALUE ..." for a script. Return: 0, or -ENOSPC (@len too small). */
int fuzz_knobs_line(const struct script_knob *knobs, size_t nr, char *buf, size_t len);

/*
 * fuzz_gen_next - draw the next op, knowing the layout from @maps (the
 * model's maps text before the op).
 * Return: 0 or -ENOMEM.
 */
int fuzz_gen_next(struct fuzz_gen *g, const char *maps, struct op *op);

/* ---- the runner ---- */

enum fuzz_diff_kind {
	FUZZ_SAME = 0,
	FUZZ_RESULT,		/* the op returned differently */
	FUZZ_ADDRESS,		/* mmap/mremap placed the mapping differently */
	FUZZ_MAPS,		/* maps of the script range differ after the op */
	FUZZ_SMAPS,		/* smaps (with --compare smaps) */
};

struct fuzz_diff {
	enum fuzz_diff_kind kind;
	size_t op;			/* the op after which it showed */
	enum op_kind op_kind;		/* ... and its kind */
	int ret[2];			/* model, live: the op's result */
	char what[1024];		/* a one-paragraph description (a diff for views) */
};

struct fuzz_pair;

/* A model and a live target sharing one file environment. Return: 0 or -errno. */
int fuzz_pair_create(struct fuzz_pair **out);
/*
 * The swap every pair's model gets from now on (the live side's swap file is
 * the caller's: target_swap_on). 0: none of ours.
 */
void fuzz_set_swap(uint64_t bytes);
/*
 * fuzz_set_knobs - the THP knobs (@nr of @knobs, copied) every pair created
 * from now on runs with: written on this machine while the pair lives
 * (target_env_set_knobs: root, the system-state lock, the keeper), and the
 * model configured as if the host had them. Also the fresh pairs that
 * confirm a difference, so set them before the pair that found it.
 * Return: 0 or -E2BIG (more than FUZZ_MAX_KNOBS).
 */
int fuzz_set_knobs(const struct script_knob *knobs, size_t nr);
/* Why the last fuzz_pair_create() failed, or "" (e.g. a knob the kernel refused). */
const char *fuzz_pair_error(void);
void fuzz_pair_destroy(struct fuzz_pair *p);

/* Forget the last sequence: unmap what it mapped. Return: 0 or -errno (a target failed). */
int fuzz_pair_reset(struct fuzz_pair *p);

/*
 * fuzz_pair_step - apply @op to both targets and compare.
 * @res_live: the live result, for expect= in a saved script (may be NULL).
 * Return: 0 with @d->kind FUZZ_SAME or the difference; -errno if a target
 *         itself failed (a dead live child: -ECHILD).
 */
int fuzz_pair_step(struct fuzz_pair *p, const struct op *op, size_t index, bool smaps,
		   struct fuzz_diff *d, int *res_live);

/* The model's maps of the script range (vml_malloc'ed), for the generator. */
char *fuzz_pair_model_maps(struct fuzz_pair *p);

/* Fork ops applied since the pair was created (the live child keeps 256 at most). */
unsigned int fuzz_pair_forks(const struct fuzz_pair *p);

/*
 * fuzz_replay - run @ops on fresh (@fresh: @p unused) or reused targets
 * (@p, reset first) until the first difference; @res_live (NULL, or @nr
 * entries) receives the live results.
 * Return: 1 differs (*@d), 0 same, -errno.
 */
int fuzz_replay(struct fuzz_pair *p, bool fresh, const struct op *ops, size_t nr, bool smaps,
		struct fuzz_diff *d, int *res_live);

/*
 * fuzz_shrink - make @ops (*@nr of them, the last one showing difference @d)
 * as small as it goes while it still shows a difference: drop chunks of
 * ops (ddmin), then simplify each op's numbers and flags. The file
 * prologue stays. @d is updated to the minimal script's difference.
 * Return: 0 or -errno.
 */
int fuzz_shrink(struct fuzz_pair *p, struct op *ops, size_t *nr, bool smaps,
		struct fuzz_diff *d);

/*
 * fuzz_script_text - @ops as a script: a header comment, then one line an
 * op with expect= the live result. Return: vml_malloc'ed text or NULL.
 */
char *fuzz_script_text(const struct op *ops, const int *expect, size_t nr, const char *header);

const char *fuzz_diff_name(enum fuzz_diff_kind kind);

#endif /* VML_RACE_DIFFERENTIAL_H */
