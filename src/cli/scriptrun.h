/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scriptrun.h - what `vmalock replay` and `vmalock show` share: option
 * parsing helpers and running an op script on one or two targets.
 */
#ifndef VML_CLI_SCRIPTRUN_H
#define VML_CLI_SCRIPTRUN_H

#include <stdbool.h>

#include "script/script.h"
#include "spaces/target.h"

/*
 * Keep this process, and a live child it starts later, on the CPU it runs
 * on now. The kernel's LRU folio batches are per CPU: a child that moves
 * between two ops can leave an advice (MADV_FREE, COLD) waiting in a batch
 * the next op does not drain, and LazyFree or Referenced then change from
 * run to run. Best effort: nothing happens if the CPU cannot be known.
 */
void cli_pin_to_this_cpu(void);

/* A script applied to one or two targets (model first when there are two). */
struct cli_run {
	const char *cmd;
	struct script *script;
	struct target_env *env;
	struct target *t[2];
	int nr;
	bool op_mismatch;	/* an op ended unlike its expect=, or unlike the other target */
	bool signals_caught;	/* SIGINT/TERM/HUP handlers installed until finish */
};

/*
 * Parse @path and create the targets. Prints one line on failure. Call
 * cli_run_finish() afterwards in every case.
 * Return: 0, or the exit status (EXIT_USAGE for a bad script line or an
 *         unavailable target, EXIT_CHECK_FAILED for a target that failed).
 */
int cli_run_start(struct cli_run *run, const char *cmd, const char *path,
		  const enum target_kind *kinds, int nr);
/*
 * Apply every op to every target in lock step, printing (stderr) each op
 * whose result differs from its expect= (default 0) or between targets.
 * Return: 0, or EXIT_CHECK_FAILED when a target itself failed.
 */
int cli_run_ops(struct cli_run *run);
/*
 * One view of target @i: the whole text, or (@cut) the VMAs overlapping
 * [@lo, @hi); device/inode and temporary directories normalised if @normalise.
 * Return: vml_malloc'ed text, or NULL after printing why.
 */
char *cli_run_view(struct cli_run *run, int i, enum vml_view view, enum vml_lock_policy lock,
		   bool cut, unsigned long lo, unsigned long hi, bool normalise);
void cli_run_finish(struct cli_run *run);

#endif /* VML_CLI_SCRIPTRUN_H */
