// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock show - print one whole view of a scripted address space.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "scriptrun.h"
#include "util/alloc.h"

struct show_opts {
	const char *view_name;
	const char *file;
	int target;			/* enum target_kind */
	unsigned int locks;		/* VOCAB_BIT(enum vml_lock_policy)s */
};

static int set_script(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	if (*(const char **)dst)
		return cli_usage_error(cmd, "%s: a second script '%s'", o->name, val);
	return cli_set_string(cmd, o, val, dst);
}

#define S(f) offsetof(struct show_opts, f)
static const struct cli_opt show_opts_table[] = {
	{ "--script", "FILE", set_script, S(file), 0, 0, NULL,
	  "the op script (or give it after VIEW; - reads stdin)" },
	{ "--target", "model|live", cli_set_word, S(target), 0, 0, &target_kind_vocab,
	  "where to run it [model]" },
	{ "--lock", "mmap|vma|both", cli_set_words, S(locks), VML_LOCK_MMAP, VML_LOCK_VMA,
	  &lock_policy_vocab,
	  "the model's /proc reader locking [vma]; both: each in turn;\n"
	  "the live kernel uses its own" },
	CLI_OPT_END,
};
#undef S

static const struct cli_opt *const show_tables[] = { show_opts_table, cli_common_opts, NULL };

static void help(FILE *f)
{
	fprintf(f,
"usage: vmalock show VIEW FILE [options]\n"
"\n"
"Apply the op script FILE to a fresh address space and print VIEW exactly as\n"
"read (whole address space, nothing normalised). VIEW is maps, smaps,\n"
"smaps_rollup, numa_maps, or query (PROCMAP_QUERY over every VMA, printed as\n"
"maps lines).\n"
"\n");
	cli_print_opts(f, show_tables);
	fprintf(f,
"\n"
"Exit status: 0 success; 1 an op ended unlike its expect= (default: success)\n"
"or the target failed; 2 bad usage or a bad script line; 77 the script needs\n"
"what this host lacks.\n");
}

static int positional(void *opts, const char *arg)
{
	struct show_opts *s = opts;

	if (!s->view_name)
		s->view_name = arg;
	else if (!s->file)
		s->file = arg;
	else
		return cli_usage_error("show", "unexpected argument '%s'", arg);
	return 0;
}

int cmd_show(int argc, char **argv)
{
	const unsigned int both = VOCAB_BIT(VML_LOCK_MMAP) | VOCAB_BIT(VML_LOCK_VMA);
	struct show_opts o = { .target = TARGET_MODEL, .locks = VOCAB_BIT(VML_LOCK_VMA) };
	enum vml_view view;
	enum target_kind kind;
	bool help_wanted;
	struct cli_run run;
	int status;

	status = cli_parse("show", show_tables, argc, argv, &o, positional, &help_wanted);
	if (status)
		return status;
	if (help_wanted) {
		help(stdout);
		return 0;
	}
	if (!o.view_name)
		return cli_usage_error("show", "missing VIEW");
	if (target_view_parse(o.view_name, &view))
		return cli_usage_error("show", "VIEW: unknown view '%s' (maps, smaps, smaps_rollup, "
				       "numa_maps, query)", o.view_name);
	if (!o.file)
		return cli_usage_error("show", "missing FILE");
	kind = (enum target_kind)o.target;

	status = cli_run_start(&run, "show", o.file, &kind, 1);
	if (!status)
		status = cli_run_ops(&run);
	for (int l = 0; !status && l < 2; l++) {
		enum vml_lock_policy lock = l ? VML_LOCK_VMA : VML_LOCK_MMAP;
		char *text;

		if (!(o.locks & VOCAB_BIT(lock)))
			continue;
		if (kind == TARGET_LIVE && l && (o.locks & VOCAB_BIT(VML_LOCK_MMAP)))
			break;	/* the live kernel has one policy */
		text = cli_run_view(&run, 0, view, lock, false, 0, 0, false);
		if (!text) {
			status = EXIT_CHECK_FAILED;
			break;
		}
		if (kind == TARGET_MODEL && o.locks == both)
			printf("== model (%s): %s\n", vocab_name(&lock_policy_vocab, lock),
			       target_view_name(view));
		fputs(text, stdout);
		vml_free(text);
	}
	if (!status && run.op_mismatch)
		status = EXIT_CHECK_FAILED;
	cli_run_finish(&run);
	fflush(stdout);
	return status;
}
