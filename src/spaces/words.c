// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * words.c - the vocabularies of targets and lock policies (words.h).
 */
#include <assert.h>

#include "spaces/words.h"
#include "vmalock/mm.h"
#include "vmalock/proc.h"

/* Sets of these values are bits of an unsigned int (VOCAB_BIT). */
static_assert(TARGET_LIVE < 32 && VML_LOCK_VMA_RECHECK < 32 && VML_STEAL_NOSTEAL_RETAKE < 32,
	      "a vocabulary's values must fit the bits of a set");

static const struct vml_word target_kind_words[] = {
	{ "model", TARGET_MODEL, NULL, 0 },
	{ "live", TARGET_LIVE, NULL, 0 },
	{ "both", 0, NULL, VOCAB_BIT(TARGET_MODEL) | VOCAB_BIT(TARGET_LIVE) },
	{ NULL, 0, NULL, 0 },
};
const struct vml_vocab target_kind_vocab = { "target", target_kind_words };

static const struct vml_word lock_policy_words[] = {
	{ "mmap", VML_LOCK_MMAP,
	  "mmap_lock(R) for each read() (6.18's smaps,\nsmaps_rollup, numa_maps)", 0 },
	{ "vma", VML_LOCK_VMA,
	  "RCU and one VMA read lock at a time (6.17+\nmaps and query)", 0 },
	{ "vma-strict", VML_LOCK_VMA_STRICT,
	  "vma, a gap shown only when proven (the\n"
	  "reader-side fix of docs/findings/maps-fake-gaps.md)", 0 },
	{ "vma-recheck", VML_LOCK_VMA_RECHECK,
	  "vma, every gap looked up again (fixes that\nnote's case 1 only)", 0 },
	{ "both", 0, "mmap,vma", VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA) },
	{ NULL, 0, NULL, 0 },
};
const struct vml_vocab lock_policy_vocab = { "policy", lock_policy_words };

/* In the order rows show them. */
static const struct vml_word steal_policy_words[] = {
	{ "mainline", VML_STEAL_KERNEL, "6.18: steal unless hand-off is pending", 0 },
	{ "nosteal", VML_STEAL_NOSTEAL_RETAKE,
	  "6.18, but readers that drop the lock for a\n"
	  "writer re-take it without stealing (the 2026\nseries)", 0 },
	{ "not-behind-writer", VML_STEAL_NOT_BEHIND_WRITER,
	  "never steal when a writer is first in\nthe queue (Peter Zijlstra)", 0 },
	{ "never", VML_STEAL_NEVER, "never steal past any waiter", 0 },
	{ "all", 0, "the four",
	  VOCAB_BIT(VML_STEAL_KERNEL) | VOCAB_BIT(VML_STEAL_NOSTEAL_RETAKE) |
	  VOCAB_BIT(VML_STEAL_NOT_BEHIND_WRITER) | VOCAB_BIT(VML_STEAL_NEVER) },
	{ NULL, 0, NULL, 0 },
};
/* No noun: a bad --steal is "bad value", as the option has always said. */
const struct vml_vocab steal_policy_vocab = { NULL, steal_policy_words };

const char *words_policy_label(const struct vml_vocab *v, enum target_kind target, int value)
{
	return target == TARGET_LIVE ? "kernel" : vocab_name(v, value);
}

static const struct vml_word i_mmap_order_words[] = {
	{ "pre", VML_I_MMAP_PRE, NULL, 0 },
	{ "post", VML_I_MMAP_POST, NULL, 0 },
	{ NULL, 0, NULL, 0 },
};
const struct vml_vocab i_mmap_order_vocab = { "order", i_mmap_order_words };

static const struct vml_word shmem_swap_usage_words[] = {
	{ "fast", VML_SHMEM_SWAP_FAST, NULL, 0 },
	{ "per-page", VML_SHMEM_SWAP_PER_PAGE, NULL, 0 },
	{ NULL, 0, NULL, 0 },
};
const struct vml_vocab shmem_swap_usage_vocab = { "value", shmem_swap_usage_words };

/* VML_ROLLUP_* plus "check" (ROLLUP_WORD_CHECK): incremental, compared after every op. */
static const struct vml_word rollup_words[] = {
	{ "walk", VML_ROLLUP_WALK, NULL, 0 },
	{ "incremental", VML_ROLLUP_INCREMENTAL, NULL, 0 },
	{ "check", ROLLUP_WORD_CHECK, NULL, 0 },
	{ NULL, 0, NULL, 0 },
};
const struct vml_vocab rollup_vocab = { "value", rollup_words };

int cli_set_view(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	if (target_view_parse(val, (enum vml_view *)dst))
		return cli_usage_error(cmd, "%s: unknown view '%s' (maps, smaps, smaps_rollup, "
				       "numa_maps, query)", o->name, val);
	return 0;
}
