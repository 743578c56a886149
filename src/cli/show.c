// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock show - print one whole view of a scripted address space.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "scriptrun.h"
#include "util/alloc.h"

static void help(FILE *f)
{
	fprintf(f,
"usage: vmalock show VIEW --script FILE [options]\n"
"\n"
"Apply the op script FILE to a fresh address space and print VIEW exactly as\n"
"read (whole address space, nothing normalised). VIEW is maps, smaps,\n"
"smaps_rollup, numa_maps, or query (PROCMAP_QUERY over every VMA, printed as\n"
"maps lines).\n"
"\n"
"  --script FILE        the op script (required)\n"
"  --target model|live  where to run it (default: %s)%s\n"
"  --profile FILE       run the model as on the saved host profile FILE\n"
"                       (`vmalock host --json`) instead of this host's\n"
"  --lock mmap|vma      the model's /proc reader locking (default vma);\n"
"                       the live kernel uses its own\n"
"\n"
"Exit status: 0 success; 1 an op ended unlike its expect= (default: success)\n"
"or the target failed; 2 bad usage or a bad script line.\n",
		target_model_available ? "model" : "live",
		target_model_available ? "" : "; the model is not linked into this build yet");
}

int cmd_show(int argc, char **argv)
{
	struct cli_args a = { .cmd = "show", .argc = argc, .argv = argv, .i = 1 };
	const char *script = NULL, *target = NULL, *val, *view_name = NULL;
	enum vml_lock_policy lock = VML_LOCK_VMA;
	enum vml_view view;
	enum target_kind kind;
	bool bad = false;
	struct cli_run run;
	char *text;
	int status;

	while (a.i < argc && !bad) {
		const char *arg = argv[a.i];

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			help(stdout);
			return 0;
		} else if (cli_opt(&a, "--script", &script, &bad)) {
		} else if (cli_opt(&a, "--profile", &val, &bad)) {
			if (!bad && cli_use_profile("show", val))
				return EXIT_USAGE;
		} else if (cli_opt(&a, "--target", &target, &bad)) {
		} else if (cli_opt(&a, "--lock", &val, &bad)) {
			if (!bad && cli_parse_lock("show", val, &lock))
				return EXIT_USAGE;
		} else if (arg[0] == '-' && arg[1]) {
			return cli_usage_error("show", "unknown option '%s'", arg);
		} else if (!view_name) {
			view_name = arg;
			a.i++;
		} else {
			return cli_usage_error("show", "unexpected argument '%s'", arg);
		}
	}
	if (bad)
		return EXIT_USAGE;
	if (!view_name)
		return cli_usage_error("show", "missing VIEW");
	if (cli_parse_view("show", "VIEW", view_name, &view))
		return EXIT_USAGE;
	if (!script)
		return cli_usage_error("show", "missing --script FILE");
	if (!target)
		target = target_model_available ? "model" : "live";
	if (!strcmp(target, "model"))
		kind = TARGET_MODEL;
	else if (!strcmp(target, "live"))
		kind = TARGET_LIVE;
	else
		return cli_usage_error("show", "--target: unknown target '%s' (model or live)",
				       target);

	status = cli_run_start(&run, "show", script, &kind, 1);
	if (!status)
		status = cli_run_ops(&run);
	if (status)
		goto out;
	text = cli_run_view(&run, 0, view, lock, false, 0, 0, false);
	if (!text) {
		status = EXIT_CHECK_FAILED;
		goto out;
	}
	fputs(text, stdout);
	vml_free(text);
	if (run.op_mismatch)
		status = EXIT_CHECK_FAILED;
out:
	cli_run_finish(&run);
	fflush(stdout);
	return status;
}
