// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * common.c - the options every command takes (cli_common_opts): the host
 * profile the model copies, and the model's switches that change how, not
 * what (the views are the same either way).
 */
#include <stdio.h>

#include "cli.h"
#include "host/host.h"

int cli_set_profile(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	char err[512];

	(void)dst;
	if (host_profile_use_file(val, err, sizeof(err))) {
		fprintf(stderr, "vmalock %s: %s: %s\n", cmd, o->name, err);
		return EXIT_USAGE;
	}
	return 0;
}

static int set_i_mmap_order(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	int v, ret = cli_set_word(cmd, o, val, &v);

	(void)dst;
	if (!ret)
		host_set_i_mmap_order((enum vml_i_mmap_order)v);
	return ret;
}

static int set_shmem_swap_usage(const char *cmd, const struct cli_opt *o, const char *val,
				void *dst)
{
	int v, ret = cli_set_word(cmd, o, val, &v);

	(void)dst;
	if (!ret)
		host_set_shmem_swap_usage((enum vml_shmem_swap_usage)v);
	return ret;
}

static int set_rollup(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	int v, ret = cli_set_word(cmd, o, val, &v);

	(void)dst;
	if (!ret)
		host_set_rollup(v == ROLLUP_WORD_CHECK ? VML_ROLLUP_INCREMENTAL :
			       (enum vml_rollup_mode)v, v == ROLLUP_WORD_CHECK);
	return ret;
}

const struct cli_opt cli_common_opts[] = {
	{ "--profile", "FILE", cli_set_profile, 0, 0, 0, NULL,
	  "run the model as on the saved host profile FILE (vmalock host\n"
	  "--json) instead of this host's" },
	{ "--i-mmap-order", "pre|post", set_i_mmap_order, 0, 0, 0, &i_mmap_order_vocab,
	  "the model's mmap stores a new file mapping in the mm's tree\n"
	  "inside its file's i_mmap_rwsem write section (pre: before\n"
	  "Linux 6.5, seed 001) or after it (post) [post; bench\n"
	  "exec-churn: both]" },
	{ "--shmem-swap-usage", "fast|per-page", set_shmem_swap_usage, 0, 0, 0,
	  &shmem_swap_usage_vocab,
	  "how the model's smaps counts shmem swap: the object's\n"
	  "counter or a page-cache walk where they apply (fast), or a\n"
	  "lookup per empty page (per-page: before Linux 4.5, seed 004)\n"
	  "[fast; bench shmem-smaps: both]" },
	{ "--rollup", "walk|incremental|check", set_rollup, 0, 0, 0, &rollup_vocab,
	  "how the model's smaps_rollup gets its sums: a walk of the page\n"
	  "tables (walk, the kernel's), or sums every mm keeps up to date\n"
	  "as its page tables change, read without mmap_lock\n"
	  "(incremental, no kernel has it); check: incremental, and after\n"
	  "every op each process's rollup is read both ways and a\n"
	  "difference fails the op [walk]" },
	CLI_OPT_END,
};
