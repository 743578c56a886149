/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * words.h - the words for what a run is made of, one vocabulary
 * (util/vocab.h) per enum: where it runs (--target), how the model's /proc
 * readers lock (--lock, enum vml_lock_policy), how mmap_lock's readers may
 * take it past a queued writer (--steal, enum vml_steal_policy), and the
 * model's switches (--i-mmap-order, --shmem-swap-usage). The option parser
 * reads them, and so do the tables and JSON the commands write: a policy is
 * spelt here and nowhere else.
 *
 * The live kernel's rows have no policy of their own choosing: their target
 * is "live", and tables and JSON say "kernel" in the policy columns
 * because of that target (words_policy_label), not because "kernel" were a
 * value of these enums.
 */
#ifndef VML_SPACES_WORDS_H
#define VML_SPACES_WORDS_H

#include "spaces/target.h"
#include "util/options.h"
#include "util/vocab.h"

extern const struct vml_vocab target_kind_vocab;	/* model, live; both */
extern const struct vml_vocab lock_policy_vocab;	/* mmap, vma, vma-strict, vma-recheck; both */
extern const struct vml_vocab steal_policy_vocab;	/* mainline, nosteal, not-behind-writer,
							 * never; all */
extern const struct vml_vocab i_mmap_order_vocab;	/* pre, post */
extern const struct vml_vocab shmem_swap_usage_vocab;	/* fast, per-page */
#define ROLLUP_WORD_CHECK 100
extern const struct vml_vocab rollup_vocab;	/* walk, incremental, check */

/* A policy's or switch's word in a row of @target: its name, or "kernel" (live). */
const char *words_policy_label(const struct vml_vocab *v, enum target_kind target, int value);

/* --view VIEW: enum vml_view (TARGET_VIEW_QUERY for "query"). */
int cli_set_view(const char *cmd, const struct cli_opt *o, const char *val, void *dst);

#endif /* VML_SPACES_WORDS_H */
