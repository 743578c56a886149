// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock replay - apply an op script, print or compare views.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "scriptrun.h"
#include "target/host.h"
#include "target/view.h"
#include "util/alloc.h"

#define MAX_COMPARE 8
#define DAMON_RETRIES 4

static void help(FILE *f)
{
	fprintf(f,
"usage: vmalock replay FILE [options]\n"
"\n"
"Apply the op script FILE (format: tests/scripts/README.md) to a fresh address\n"
"space and print a view of the script range, with device and inode numbers and\n"
"the temporary file directories normalised.\n"
"\n"
"  --target model|live|both  where to run it (default: %s)%s\n"
"  --view VIEW               maps (default), smaps, smaps_rollup, numa_maps, or\n"
"                            query (PROCMAP_QUERY, printed as maps lines)\n"
"  --compare VIEW,...        run on both targets and diff these views; any\n"
"                            difference is printed as a unified diff (implies\n"
"                            --target both)\n"
"  --profile FILE            run the model as on the saved host profile FILE\n"
"                            (`vmalock host --json`) instead of this host's\n"
"  --lock mmap|vma           the model's /proc reader locking (default vma);\n"
"                            the live kernel uses its own\n"
"  --range LO-HI             the address range shown (default 0x%lx-0x%lx);\n"
"                            smaps_rollup is whole-process and never cut (the\n"
"                            live one includes the child's binary and libc)\n"
"  --raw                     do not normalise device, inode and directory names\n"
"  --quiet                   print only failures and differences\n"
"\n"
"An op without expect= must succeed; one with expect=ERRNO must fail with it.\n"
"Exit status: 0 all as expected; 1 an op ended otherwise, the targets differ,\n"
"or a target failed; 2 bad usage or a bad script line.\n",
		target_model_available ? "model" : "live",
		target_model_available ? "" :
		"\n                            (the model is not linked into this build yet)",
		SCRIPT_RANGE_LO, SCRIPT_RANGE_HI);
}

static int parse_range(const char *s, unsigned long *lo, unsigned long *hi)
{
	char buf[64];
	char *dash;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (!dash)
		return -1;
	*dash = '\0';
	if (parse_addr(buf, lo) || parse_addr(dash + 1, hi) || *lo >= *hi)
		return -1;
	return 0;
}

static int parse_compare(const char *s, enum vml_view *views, int *nr)
{
	char buf[256];
	char *save, *v;

	if (strlen(s) >= sizeof(buf))
		return cli_usage_error("replay", "--compare: too long");
	strcpy(buf, s);
	*nr = 0;
	for (v = strtok_r(buf, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
		if (*nr == MAX_COMPARE)
			return cli_usage_error("replay", "--compare: too many views");
		if (cli_parse_view("replay", "--compare", v, &views[*nr]))
			return EXIT_USAGE;
		(*nr)++;
	}
	if (!*nr)
		return cli_usage_error("replay", "--compare: no view in '%s'", s);
	return 0;
}

static int line_count(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Does @diff change nothing but Referenced: lines? */
static bool referenced_only(const char *diff)
{
	for (const char *l = diff; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		if ((l[0] == '-' || l[0] == '+') && strncmp(l, "---", 3) && strncmp(l, "+++", 3) &&
		    strncmp(l + 1, "Referenced:", 11))
			return false;
	}
	return true;
}

/*
 * Compare every view; the output (diffs, or "same" lines) goes to @out.
 * Return: 0, EXIT_CHECK_FAILED; *@ref_only tells whether all the
 * differences were in Referenced: lines.
 */
static int compare(struct cli_run *run, const enum vml_view *views, int nr_views,
		   enum vml_lock_policy lock, unsigned long lo, unsigned long hi, bool raw,
		   bool quiet, FILE *out, bool *ref_only)
{
	int status = 0;

	*ref_only = true;
	for (int v = 0; v < nr_views; v++) {
		const char *name = target_view_name(views[v]);
		char *text[2], *diff, la[64], lb[64];

		text[0] = cli_run_view(run, 0, views[v], lock, true, lo, hi, !raw);
		text[1] = text[0] ? cli_run_view(run, 1, views[v], lock, true, lo, hi, !raw) : NULL;
		if (!text[1]) {
			vml_free(text[0]);
			*ref_only = false;
			return EXIT_CHECK_FAILED;
		}
		snprintf(la, sizeof(la), "model/%s", name);
		snprintf(lb, sizeof(lb), "live/%s", name);
		diff = view_diff(text[0], text[1], la, lb);
		if (!diff) {
			fprintf(stderr, "vmalock replay: out of memory\n");
			status = EXIT_CHECK_FAILED;
			*ref_only = false;
		} else if (*diff) {
			fputs(diff, out);
			status = EXIT_CHECK_FAILED;
			*ref_only &= referenced_only(diff);
		} else if (!quiet) {
			fprintf(out, "%s: same on model and live (%d lines)\n", name,
				line_count(text[0]));
		}
		vml_free(diff);
		vml_free(text[0]);
		vml_free(text[1]);
	}
	return status;
}

int cmd_replay(int argc, char **argv)
{
	struct cli_args a = { .cmd = "replay", .argc = argc, .argv = argv, .i = 1 };
	const char *file = NULL, *val, *target = NULL, *cmp = NULL;
	enum vml_view view = VML_VIEW_MAPS, views[MAX_COMPARE];
	enum vml_lock_policy lock = VML_LOCK_VMA;
	enum target_kind kinds[2];
	unsigned long lo = SCRIPT_RANGE_LO, hi = SCRIPT_RANGE_HI;
	bool quiet = false, raw = false, bad = false;
	int nr_views = 0, nr_kinds, status;
	struct cli_run run;

	while (a.i < argc && !bad) {
		const char *arg = argv[a.i];

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			help(stdout);
			return 0;
		} else if (cli_opt(&a, "--profile", &val, &bad)) {
			if (!bad && cli_use_profile("replay", val))
				return EXIT_USAGE;
		} else if (cli_opt(&a, "--target", &target, &bad)) {
		} else if (cli_opt(&a, "--compare", &cmp, &bad)) {
		} else if (cli_opt(&a, "--view", &val, &bad)) {
			if (!bad && cli_parse_view("replay", "--view", val, &view))
				return EXIT_USAGE;
		} else if (cli_opt(&a, "--lock", &val, &bad)) {
			if (!bad && cli_parse_lock("replay", val, &lock))
				return EXIT_USAGE;
		} else if (cli_opt(&a, "--range", &val, &bad)) {
			if (!bad && parse_range(val, &lo, &hi))
				return cli_usage_error("replay", "--range: bad range '%s' "
						       "(want 0xLO-0xHI, LO < HI)", val);
		} else if (cli_opt(&a, "--quiet", NULL, &bad)) {
			quiet = true;
		} else if (cli_opt(&a, "--raw", NULL, &bad)) {
			raw = true;
		} else if (arg[0] == '-' && arg[1]) {
			return cli_usage_error("replay", "unknown option '%s'", arg);
		} else if (!file) {
			file = arg;
			a.i++;
		} else {
			return cli_usage_error("replay", "unexpected argument '%s'", arg);
		}
	}
	if (bad)
		return EXIT_USAGE;
	if (!file)
		return cli_usage_error("replay", "missing FILE");
	if (cmp && parse_compare(cmp, views, &nr_views))
		return EXIT_USAGE;
	if (!target)
		target = cmp ? "both" : target_model_available ? "model" : "live";
	if (!strcmp(target, "model")) {
		kinds[0] = TARGET_MODEL;
		nr_kinds = 1;
	} else if (!strcmp(target, "live")) {
		kinds[0] = TARGET_LIVE;
		nr_kinds = 1;
	} else if (!strcmp(target, "both")) {
		kinds[0] = TARGET_MODEL;
		kinds[1] = TARGET_LIVE;
		nr_kinds = 2;
	} else {
		return cli_usage_error("replay", "--target: unknown target '%s' "
				       "(model, live or both)", target);
	}
	if (cmp && nr_kinds != 2)
		return cli_usage_error("replay", "--compare needs --target both, not '%s'", target);

	/*
	 * DAMON (vmalock host shows it) moves a sampled page's Accessed bit into
	 * the folio's young flag, which smaps counts as Referenced and which no
	 * later MADV_COLD/PAGEOUT clears: a live Referenced can be higher than the
	 * model's by chance. A comparison whose only differences are Referenced
	 * lines is run again on fresh targets, up to DAMON_RETRIES times.
	 */
	for (int attempt = 1;; attempt++) {
		bool ref_only = false;
		char *buf = NULL;
		size_t buflen = 0;
		FILE *out;

		status = cli_run_start(&run, "replay", file, kinds, nr_kinds);
		if (!status)
			status = cli_run_ops(&run);
		if (status || !cmp)
			break;
		out = open_memstream(&buf, &buflen);
		if (!out) {
			status = EXIT_CHECK_FAILED;
			break;
		}
		status = compare(&run, views, nr_views, lock, lo, hi, raw, quiet, out, &ref_only);
		fclose(out);
		if (status && ref_only && !run.op_mismatch && attempt < DAMON_RETRIES &&
		    host_damon_running()) {
			fprintf(stderr, "vmalock replay: only Referenced differs, and DAMON runs on "
				"this host: trying again (%d of %d)\n", attempt + 1, DAMON_RETRIES);
			free(buf);
			cli_run_finish(&run);
			continue;
		}
		fputs(buf, stdout);
		free(buf);
		if (!status && run.op_mismatch)
			status = EXIT_CHECK_FAILED;
		goto out;
	}
	if (status)
		goto out;
	if (!quiet) {
		for (int i = 0; i < run.nr; i++) {
			char *text = cli_run_view(&run, i, view, lock, true, lo, hi, !raw);

			if (!text) {
				status = EXIT_CHECK_FAILED;
				break;
			}
			if (run.nr > 1)
				printf("== %s: %s\n", target_kind_name(kinds[i]),
				       target_view_name(view));
			fputs(text, stdout);
			vml_free(text);
		}
	}
	if (!status && run.op_mismatch)
		status = EXIT_CHECK_FAILED;
out:
	cli_run_finish(&run);
	fflush(stdout);
	return status;
}
