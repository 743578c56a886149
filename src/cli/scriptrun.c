// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * scriptrun.c - running an op script on targets, for `replay` and `show`.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "scriptrun.h"
#include "host/host.h"
#include "spaces/view.h"
#include "util/alloc.h"

/*
 * SIGINT, SIGTERM, SIGHUP while a script runs: stop after the current op so
 * that cli_run_finish() still removes the temporary directories and reaps
 * the child, then die of the signal as if it had not been caught.
 */
static volatile sig_atomic_t cli_interrupted;
static struct sigaction old_actions[3];
static const int caught[3] = { SIGINT, SIGTERM, SIGHUP };

static void on_signal(int sig)
{
	cli_interrupted = sig;
}

void cli_pin_to_this_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

int cli_run_start(struct cli_run *run, const char *cmd, const char *path,
		  const enum target_kind *kinds, int nr)
{
	const struct host_profile *p = NULL;
	struct host_profile with_knobs;
	bool want_profile = false;
	struct sigaction sa;
	char err[512];
	int ret;

	memset(run, 0, sizeof(*run));
	run->cmd = cmd;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++) {
		sigaction(caught[i], NULL, &old_actions[i]);
		if (old_actions[i].sa_handler != SIG_IGN)	/* nohup, background jobs */
			sigaction(caught[i], &sa, NULL);
	}
	run->signals_caught = true;
	ret = script_parse_file(path, &run->script, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s\n", err);
		return EXIT_USAGE;
	}
	want_profile = run->script->requires != 0 || run->script->nr_knobs;
	for (int i = 0; i < nr; i++)
		want_profile |= kinds[i] == TARGET_MODEL;	/* the model's settings */
	if (want_profile) {
		/* Probed here, so that a failed probe says why, not a target. */
		ret = host_profile_current(&p);
		if (ret) {
			fprintf(stderr, "vmalock %s: probing this host: %s\n", cmd,
				host_probe_failure(ret));
			return EXIT_CHECK_FAILED;
		}
	}
	/* The host as the script's knobs make it: every knob must exist there. */
	if (run->script->nr_knobs) {
		with_knobs = *p;
		for (size_t i = 0; i < run->script->nr_knobs; i++) {
			const struct script_knob *k = &run->script->knobs[i];

			if (host_profile_set_knob(&with_knobs, k->name, k->value)) {
				fprintf(stderr, "vmalock %s: %s: skipped: it sets the THP knob %s, "
					"which %s lacks\n", cmd, path, k->name,
					strcmp(p->source, "probed") ? p->source : "this host");
				return EXIT_SKIPPED;
			}
		}
		p = &with_knobs;
	}
	if (run->script->requires &&
	    script_requires_unmet(run->script->requires, p->pkeys, p->zero_page,
				  strcmp(p->thp_enabled, "never") != 0, p->anon_vma_name,
				  err, sizeof(err))) {
		fprintf(stderr, "vmalock %s: %s: skipped: it needs %s, which %s lacks\n",
			cmd, path, err, strcmp(p->source, "probed") ? p->source : "this host");
		return EXIT_SKIPPED;
	}
	cli_pin_to_this_cpu();
	ret = target_env_create(&run->env);
	if (ret) {
		fprintf(stderr, "vmalock %s: cannot create temporary directories: %s\n", cmd,
			strerror(-ret));
		return EXIT_CHECK_FAILED;
	}
	if (run->script->swap_bytes) {
		bool live = false;

		for (int i = 0; i < nr; i++)
			live |= kinds[i] == TARGET_LIVE;
		ret = target_env_set_swap(run->env, run->script->swap_bytes, live, err,
					  sizeof(err));
		if (ret == -EPERM) {
			fprintf(stderr, "vmalock %s: %s: skipped: %s\n", cmd, path, err);
			return EXIT_SKIPPED;
		}
		if (ret) {
			fprintf(stderr, "vmalock %s: %s: swap: %s\n", cmd, path, err);
			return EXIT_CHECK_FAILED;
		}
	}
	if (run->script->nr_knobs) {
		bool live = false;

		for (int i = 0; i < nr; i++)
			live |= kinds[i] == TARGET_LIVE;
		ret = target_env_set_knobs(run->env, run->script->knobs, run->script->nr_knobs, live,
					   err, sizeof(err));
		if (ret == -EPERM) {
			fprintf(stderr, "vmalock %s: %s: skipped: knobs: %s\n", cmd, path, err);
			return EXIT_SKIPPED;
		}
		if (ret) {
			fprintf(stderr, "vmalock %s: %s: knobs: %s\n", cmd, path, err);
			return EXIT_CHECK_FAILED;
		}
	}
	for (int i = 0; i < nr; i++) {
		ret = target_create(kinds[i], run->env, &run->t[i]);
		if (ret == -ENOSYS) {
			fprintf(stderr, "vmalock %s: --target %s: the model is not linked "
				"into this build yet (use --target live)\n", cmd,
				target_kind_name(kinds[i]));
			return EXIT_USAGE;
		}
		if (ret == -ENOENT && kinds[i] == TARGET_LIVE) {
			fprintf(stderr, "vmalock %s: live target: cannot find vmalock-child "
				"(looked next to /proc/self/exe, in $VML_CHILD_EXE and in the "
				"build directory)\n", cmd);
			return EXIT_CHECK_FAILED;
		}
		if (ret) {
			fprintf(stderr, "vmalock %s: %s target: %s\n", cmd,
				target_kind_name(kinds[i]), strerror(-ret));
			return EXIT_CHECK_FAILED;
		}
		run->nr++;
	}
	return 0;
}

/* "0", "-EINVAL" */
static const char *result_str(int ret, char *buf, size_t len)
{
	char tmp[24];
	const char *n = errno_name(ret, tmp, sizeof(tmp));

	if (ret == 0 || n == tmp)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "-%s", n);
	return buf;
}

static bool in_range(unsigned long addr)
{
	return addr >= SCRIPT_RANGE_LO && addr < SCRIPT_RANGE_HI;
}

int cli_run_ops(struct cli_run *run)
{
	const struct script *s = run->script;

	for (size_t k = 0; k < s->nr_ops; k++) {
		const struct op *op = &s->ops[k];
		const char *name = op_kind_name(op->kind);
		struct op_result res[2];
		int want = op->has_expect ? op->expect : 0;
		char a[32], b[32];

		for (int i = 0; i < run->nr; i++) {
			int ret = target_apply(run->t[i], op, &res[i]);

			if (ret == -ECHILD) {
				fprintf(stderr, "%s:%u: %s: the live child died (an op outside "
					"the script range can unmap its code)\n", s->path, op->line,
					name);
				return EXIT_CHECK_FAILED;
			}
			if (ret) {
				fprintf(stderr, "%s:%u: %s: %s target failed: %s\n", s->path,
					op->line, name, target_kind_name(target_kind(run->t[i])),
					strerror(-ret));
				return EXIT_CHECK_FAILED;
			}
			if (cli_interrupted) {
				fprintf(stderr, "vmalock %s: interrupted\n", run->cmd);
				return EXIT_CHECK_FAILED;
			}
		}
		if (run->nr == 2 && res[0].ret != res[1].ret) {
			fprintf(stderr, "%s:%u: %s: model %s, live %s\n", s->path, op->line, name,
				result_str(res[0].ret, a, sizeof(a)),
				result_str(res[1].ret, b, sizeof(b)));
			run->op_mismatch = true;
		} else if (run->nr == 2 && res[0].ret == 0 && res[0].addr != res[1].addr &&
			   (in_range(res[0].addr) || in_range(res[1].addr))) {
			/* Only addresses in the script range are comparable: elsewhere
			 * each kernel picks its own (and the live one randomises). */
			fprintf(stderr, "%s:%u: %s: model 0x%lx, live 0x%lx\n", s->path, op->line,
				name, res[0].addr, res[1].addr);
			run->op_mismatch = true;
		}
		for (int i = 0; i < run->nr; i++) {
			if (res[i].ret == want)
				continue;
			fprintf(stderr, "%s:%u: %s: %s returned %s, expected %s\n", s->path,
				op->line, name, target_kind_name(target_kind(run->t[i])),
				result_str(res[i].ret, a, sizeof(a)),
				result_str(want, b, sizeof(b)));
			run->op_mismatch = true;
		}
	}
	return 0;
}

char *cli_run_view(struct cli_run *run, int i, enum vml_view view, enum vml_lock_policy lock,
		   bool cut, unsigned long lo, unsigned long hi, bool normalise)
{
	const char *subst[4] = {
		target_env_dir(run->env, false), "/tmp/vmalock.XXXXXX",
		target_env_dir(run->env, true), "/dev/shm/vmalock.XXXXXX",
	};
	struct target *t = run->t[i];
	char *text, *tmp;
	size_t len;
	int ret;

	if (view == TARGET_VIEW_QUERY)
		ret = target_read_query_view(t, lock, cut ? lo : 0, cut ? hi : ~0UL, &text, &len);
	else
		ret = target_read_view(t, view, lock, &text, &len);
	if (ret) {
		fprintf(stderr, "vmalock %s: %s target: reading %s: %s\n", run->cmd,
			target_kind_name(target_kind(t)), target_view_name(view), strerror(-ret));
		return NULL;
	}
	if (cut && view != TARGET_VIEW_QUERY) {
		tmp = view_cut(view, text, lo, hi);
		vml_free(text);
		text = tmp;
	}
	if (text && normalise) {
		tmp = view_normalise(text, subst, 2);
		vml_free(text);
		text = tmp;
	}
	if (!text)
		fprintf(stderr, "vmalock %s: out of memory\n", run->cmd);
	return text;
}

void cli_run_finish(struct cli_run *run)
{
	for (int i = 0; i < run->nr; i++)
		target_destroy(run->t[i]);
	target_env_put(run->env);
	script_free(run->script);
	if (run->signals_caught) {
		for (int i = 0; i < 3; i++)
			sigaction(caught[i], &old_actions[i], NULL);
		if (cli_interrupted)
			raise(cli_interrupted);
	}
	memset(run, 0, sizeof(*run));
}
