// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock fuzz --rollup-check - the incremental smaps_rollup against the
 * walking one, on the model alone (the live kernel has no incremental
 * rollup). The sequences are fuzz's own (fuzz_gen.c: every op of the
 * script format, one fork a sequence, mlock, madvise pageout with --swap,
 * THP-shaped ops with --mthp); after every op each process's rollup is
 * read both ways (target_model_rollup_check) and must be byte-identical.
 * A difference saves the sequence up to that op as a script that
 * `vmalock replay FILE --rollup check` shows again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "cli.h"
#include "host/host.h"
#include "race/differential.h"
#include "spaces/view.h"
#include "util/alloc.h"
#include "util/clock.h"

#define RUNS_PER_TARGET 200	/* sequences before the model is made afresh */

struct rollup_fuzz {
	const struct fuzz_cli *cli;
	struct target_env *env;
	struct target *t;
	unsigned long on_target;	/* sequences run on this model */
	bool files;			/* the prologue's files exist on it */
	bool spoiled;			/* an op left what a reset cannot undo */
	struct script_knob knobs[FUZZ_MAX_KNOBS];
	size_t nr_knobs;
	unsigned int host_kb[HOST_MAX_MTHP];
	size_t nr_host_kb;
	unsigned long runs, applied, differences, saved;
	unsigned long forks, pageouts;	/* of applied: that succeeded */
};

static void rf_drop(struct rollup_fuzz *rf)
{
	target_destroy(rf->t);
	target_env_put(rf->env);
	rf->t = NULL;
	rf->env = NULL;
	rf->files = false;
	rf->spoiled = false;
	rf->on_target = 0;
}

/* A fresh model with --swap and (--mthp) the knob set of sequence @run. */
static int rf_make(struct rollup_fuzz *rf, uint64_t run)
{
	char err[256] = "";
	int ret = target_env_create(&rf->env);

	if (!ret && rf->cli->swap_bytes)
		ret = target_env_set_swap(rf->env, rf->cli->swap_bytes, false, err, sizeof(err));
	if (!ret && rf->cli->mthp) {
		rf->nr_knobs = fuzz_gen_knobs(rf->cli->seed, run, rf->host_kb, rf->nr_host_kb,
					      rf->knobs);
		ret = target_env_set_knobs(rf->env, rf->knobs, rf->nr_knobs, false, err,
					   sizeof(err));
	}
	if (!ret)
		ret = target_create(TARGET_MODEL, rf->env, &rf->t);
	if (ret && *err)
		fprintf(stderr, "vmalock fuzz: %s\n", err);
	return ret;
}

/* Back to one process with nothing mapped; a model that cannot be is made afresh. */
static int rf_reset(struct rollup_fuzz *rf, uint64_t run)
{
	struct op unlock = { .kind = OP_MUNLOCKALL };
	struct op unmap = { .kind = OP_MUNMAP, .addr = 0x10000UL,
			    .len = 0x7ffffffff000UL - 0x10000UL };
	struct op_result res;
	int ret;

	if (rf->t && (rf->spoiled || rf->on_target >= RUNS_PER_TARGET))
		rf_drop(rf);
	if (!rf->t)
		return rf_make(rf, run);
	target_forget_forks(rf->t);
	ret = target_apply(rf->t, &unlock, &res);
	if (!ret)
		ret = target_apply(rf->t, &unmap, &res);
	if (!ret && res.ret) {
		rf_drop(rf);	/* a sealed mapping stays: start afresh */
		return rf_make(rf, run);
	}
	return ret;
}

static bool op_spoils(const struct op *op)
{
	return op->kind == OP_MSEAL || op->kind == OP_TRUNCATE || op->kind == OP_PUNCH;
}

/* Save @ops (the sequence up to the differing op) with @what in its header. */
static void rf_save(struct rollup_fuzz *rf, const struct op *ops, const int *res, size_t nr,
		    uint64_t run, const char *what)
{
	char header[5200], path[512], knobs[512] = "";
	char *text;
	FILE *f;

	if (rf->saved >= rf->cli->max_failures)
		return;
	if (rf->nr_knobs) {
		fuzz_knobs_line(rf->knobs, rf->nr_knobs, knobs, sizeof(knobs) - 1);
		strcat(knobs, "\n");
	}
	snprintf(header, sizeof(header),
		 "# vmalock fuzz --rollup-check --seed %llu: run %llu; replay with\n"
		 "#   vmalock replay FILE --rollup check\n%s",
		 (unsigned long long)rf->cli->seed, (unsigned long long)run, knobs);
	if (rf->cli->swap_bytes) {
		size_t n = strlen(header);

		snprintf(header + n, sizeof(header) - n, "swap %luK\n", rf->cli->swap_bytes >> 10);
	}
	(void)what;
	text = fuzz_script_text(ops, res, nr, header);
	mkdir(rf->cli->save, 0777);
	snprintf(path, sizeof(path), "%s/rollup-%llu-%llu.ops", rf->cli->save,
		 (unsigned long long)rf->cli->seed, (unsigned long long)run);
	f = text ? fopen(path, "w") : NULL;
	if (f) {
		fputs(text, f);
		fclose(f);
		fprintf(stderr, "vmalock fuzz: saved %s\n", path);
		rf->saved++;
	}
	vml_free(text);
}

/* One sequence. Return: 0 (a difference counted and saved, or none) or -errno. */
static int rf_sequence(struct rollup_fuzz *rf, uint64_t run, struct op *ops, int *res)
{
	size_t nr = fuzz_gen_prologue(ops, 2, rf->cli->mthp), total = nr + rf->cli->ops;
	static char what[4500];
	struct fuzz_gen gen;
	int ret = rf_reset(rf, run);

	if (ret || (ret = fuzz_gen_init(&gen, rf->cli->seed, run)))
		return ret;
	gen.names = false;	/* the model's names are the host's setting: not drawn */
	if (rf->cli->mthp)
		fuzz_gen_thp(&gen);
	rf->on_target++;
	for (size_t k = 0; k < total && !ret; k++) {
		struct op_result r = { 0 };

		if (k >= nr) {
			char *text, *maps;
			size_t len;

			ret = target_read_view(rf->t, VML_VIEW_MAPS, VML_LOCK_VMA, &text, &len);
			if (ret)
				break;
			maps = view_cut(VML_VIEW_MAPS, text, SCRIPT_RANGE_LO, SCRIPT_RANGE_HI);
			vml_free(text);
			ret = maps ? fuzz_gen_next(&gen, maps, &ops[nr++]) : -ENOMEM;
			vml_free(maps);
			if (ret)
				break;
		}
		if (ops[k].kind == OP_FILE && rf->files) {
			res[k] = 0;	/* made for an earlier sequence */
			continue;
		}
		ret = target_apply(rf->t, &ops[k], &r);
		if (ret)
			break;
		res[k] = r.ret;
		rf->applied++;
		rf->forks += ops[k].kind == OP_FORK && !r.ret;
		rf->pageouts += (ops[k].kind == OP_MADVISE || ops[k].kind == OP_PROCESS_MADVISE) &&
				ops[k].advice == MADV_PAGEOUT && !r.ret;
		rf->spoiled |= op_spoils(&ops[k]) && !r.ret;
		ret = target_model_rollup_check(rf->t, what, sizeof(what));
		if (ret == 1) {
			rf->differences++;
			fprintf(stderr, "vmalock fuzz: run %llu, op %zu (%s): %s",
				(unsigned long long)run, k, op_kind_name(ops[k].kind), what);
			rf_save(rf, ops, res, k + 1, run, what);
			rf->spoiled = true;
			ret = 0;
			break;
		}
	}
	rf->files = true;
	fuzz_gen_free(&gen);
	return ret;
}

int fuzz_rollup_check(const struct fuzz_cli *cli, volatile sig_atomic_t *stop)
{
	struct rollup_fuzz rf = { .cli = cli };
	struct op *ops = vml_malloc((cli->ops + 2) * sizeof(*ops));
	int *res = vml_malloc((cli->ops + 2) * sizeof(*res));
	uint64_t t0 = vml_now_ns(), last = t0;
	int ret = ops && res ? 0 : -ENOMEM;

	if (cli->mthp) {
		const struct host_profile *hp;

		ret = host_profile_current(&hp);
		for (unsigned int i = 0; !ret && i < hp->nr_mthp && rf.nr_host_kb < HOST_MAX_MTHP;
		     i++)
			rf.host_kb[rf.nr_host_kb++] = hp->mthp[i].kb;
	}
	/* Every model made from now on keeps incremental sums. */
	host_set_rollup(VML_ROLLUP_INCREMENTAL, false);
	printf("vmalock fuzz --rollup-check: seed %llu, %lu runs of %u ops%s%s, model only\n",
	       (unsigned long long)cli->seed, cli->runs, cli->ops,
	       cli->swap_bytes ? ", with swap" : "", cli->mthp ? ", THP knobs drawn" : "");
	fflush(stdout);
	for (uint64_t run = cli->first_run; !ret && run - cli->first_run < cli->runs && !*stop;
	     run++) {
		ret = rf_sequence(&rf, run, ops, res);
		rf.runs++;
		if (vml_now_ns() - last > 10 * NSEC_PER_SEC) {
			last = vml_now_ns();
			fprintf(stderr, "vmalock fuzz: %lu runs, %lu ops, %lu differences\n",
				rf.runs, rf.applied, rf.differences);
		}
	}
	rf_drop(&rf);
	printf("fuzz --rollup-check: %lu runs, %lu ops in %.1f s, %lu differences (%lu forks, "
	       "%lu MADV_PAGEOUT among the ops)\n", rf.runs, rf.applied,
	       (double)(vml_now_ns() - t0) / NSEC_PER_SEC, rf.differences, rf.forks, rf.pageouts);
	vml_free(ops);
	vml_free(res);
	if (ret) {
		fprintf(stderr, "vmalock fuzz: %s\n", strerror(-ret));
		return EXIT_CHECK_FAILED;
	}
	return rf.differences || *stop ? EXIT_CHECK_FAILED : 0;
}
