// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock twin PID - an op script that rebuilds a running process's address
 * space (src/twin/, docs/twin.md); with --check, replay it and compare the
 * twin with the original, VMA by VMA.
 *
 * The original is read once (smaps, then pagemap) and never touched: no
 * ptrace, no signals. What the check compares the twin with is that reading,
 * not the process as it is when the replay ends.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "scriptrun.h"
#include "twin/twin.h"
#include "util/alloc.h"

/* What a replaying process has of its own besides the twin (vmalock-child, libc, ...). */
#define CHILD_OWN_VMAS 40

struct twin_opts {
	const char *pid;
	const char *out;
	bool check;
	unsigned int targets;		/* VOCAB_BIT(enum target_kind)s; 0: live */
	unsigned int attempts;		/* --check: fresh replays while only the views differ */
};

#define T(f) offsetof(struct twin_opts, f)
static const struct cli_opt twin_opt_table[] = {
	{ "--out", "FILE", cli_set_string, T(out), 0, 0, NULL,
	  "write the op script to FILE [stdout]" },
	{ "--check", NULL, cli_set_flag, T(check), 0, 0, NULL,
	  "replay the twin and compare its smaps with PID's, VMA by VMA\n"
	  "(a table on stdout; exit 1 if maps, Rss, Anonymous, Swap,\n"
	  "AnonHugePages or Locked differ on any VMA)" },
	{ "--target", "model|live|both", cli_set_words, T(targets), 0, 0, &target_kind_vocab,
	  "where --check replays the twin [live]" },
	{ "--attempts", "N", cli_set_uint, T(attempts), 1, 100, NULL,
	  "--check: replay on fresh targets up to N times while only the\n"
	  "views differ (the live kernel's own work, as in replay) [3]" },
	CLI_OPT_END,
};
#undef T

static const struct cli_opt *const twin_tables[] = { twin_opt_table, cli_common_opts, NULL };

static int pid_arg(void *opts, const char *arg)
{
	struct twin_opts *o = opts;

	if (o->pid)
		return cli_usage_error("twin", "unexpected argument '%s'", arg);
	o->pid = arg;
	return 0;
}

static void help(FILE *f)
{
	fprintf(f,
"usage: vmalock twin PID [options]\n"
"\n"
"Read process PID's smaps and pagemap and write an op script (docs/op-scripts.md)\n"
"that rebuilds its address space: every VMA with its protection, kind\n"
"(anonymous, file at its offset, shmem, stack, heap), VmFlags advices and name;\n"
"its present pages touched (written where they are anonymous, read where they\n"
"come from the page cache or are the zero page); its huge pages collapsed where\n"
"AnonHugePages says so; its swapped pages paged out (the script then asks for\n"
"swap: `swap SIZE`, root only); its locked VMAs locked. Replay it like any\n"
"script: vmalock replay FILE --target both --compare maps,smaps.\n"
"\n");
	cli_print_opts(f, twin_tables);
	fprintf(f,
"\n"
"Addresses keep their order and their gaps, moved by whole GiBs into the script\n"
"range (0x100000000000-0x200000000000); a gap over 1 GiB shrinks to 1-2 GiB.\n"
"Each file becomes a file of the same size (paths and inodes are not compared).\n"
"What the op format cannot make is left out, with a comment in the script:\n"
"[vdso], [vvar], [vsyscall] and other special mappings, hugetlb, device\n"
"mappings (VM_PFNMAP/VM_IO), shadow stacks, anon_inode and socket mappings.\n"
"[heap] becomes an anonymous mapping, [stack] a growsdown one, both unnamed:\n"
"neither grows as brk or the main stack does.\n"
"\n"
"The twin's maps (range, permissions, offset, kind of name) and its smaps Size,\n"
"Rss, Anonymous, Swap, AnonHugePages and Locked equal the original's on every\n"
"VMA, as PID was when read; Pss and the Shared_* fields depend on the other\n"
"processes that map the same pages, and --check gives their error.\n"
"\n"
"Reading another user's process needs root (CAP_SYS_PTRACE).\n"
"\n"
"Exit status: 0 the script written (and with --check, the twin agrees); 1 the\n"
"twin differs, a replay failed, PID exited while being read, or its layout\n"
"does not fit the script range; 2 bad usage, no such process, a kernel thread,\n"
"or not allowed to read it (one line with the errno); 77 --check of a twin\n"
"that needs swap, without root.\n");
}

static unsigned long max_map_count(void)
{
	unsigned long v = 65530;
	FILE *f = fopen("/proc/sys/vm/max_map_count", "re");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 65530;
		fclose(f);
	}
	return v;
}

static void print_cmp(FILE *out, const struct twin_snapshot *s, const char *target,
		      const struct twin_cmp *c)
{
	fprintf(out, "twin of %d (%s) on %s: %lu VMAs (%lu skipped), maps the same on %lu, "
		"missing %lu, extra %lu\n", (int)s->pid, s->comm, target, c->vmas, s->skipped,
		c->maps_same, c->missing, c->extra);
	if (c->locked_as_pss)
		fprintf(out, "Locked: %lu VMAs wholly locked on both sides, their Locked (the Pss "
			"of the locked pages) off as Pss is\n", c->locked_as_pss);
	if (c->first_diff[0])
		fprintf(out, "first difference: %s\n", c->first_diff);
	if (c->first_field_diff[0])
		fprintf(out, "first field difference: %s\n", c->first_field_diff);
	fprintf(out, "%-16s %9s %12s %12s %12s %12s  %s\n", "field", "same", "original kB",
		"twin kB", "sum|diff| kB", "max|diff| kB", "");
	for (int f = 0; f < TF__COUNT; f++) {
		const struct twin_field_cmp *fc = &c->f[f];
		unsigned long compared = c->vmas - c->missing;

		fprintf(out, "%-16s %4lu/%-4lu %12lu %12lu %12lu %12lu  %s\n", twin_field_name(f),
			fc->same, compared, fc->orig_kb, fc->twin_kb, fc->abs_diff_kb,
			fc->max_diff_kb,
			twin_field_exact(f) ? (fc->same == compared ? "exact" : "DIFFERS") : "");
	}
}

static bool cmp_ok(const struct twin_cmp *c)
{
	if (c->missing || c->extra || c->maps_same != c->vmas)
		return false;
	for (int f = 0; f < TF__COUNT; f++)
		if (twin_field_exact(f) && c->f[f].same != c->vmas)
			return false;
	return true;
}

/*
 * One replay of @path on the targets, each compared with @s; the tables go
 * to @out. *@views_only: the replay ran and only the views differ.
 * Return: an exit status.
 */
static int check_once(const struct twin_snapshot *s, const char *path,
		      const enum target_kind *kinds, int nr, FILE *out, bool *views_only)
{
	struct cli_run run;
	bool differs = false;
	int status;

	*views_only = false;
	status = cli_run_start(&run, "twin", path, kinds, nr);
	if (!status)
		status = cli_run_ops(&run);
	/* Every target compared, also after one that differs; none if the replay failed. */
	for (int i = 0; !status && i < run.nr; i++) {
		char *text = cli_run_view(&run, i, VML_VIEW_SMAPS, VML_LOCK_VMA, true,
					  SCRIPT_RANGE_LO, SCRIPT_RANGE_HI, true);
		struct twin_cmp c;
		int ret;

		if (!text) {
			differs = true;
			break;
		}
		ret = twin_compare(s, text, &c);
		vml_free(text);
		if (ret) {
			fprintf(stderr, "vmalock twin: the twin's smaps on %s: %s\n",
				target_kind_name(kinds[i]), strerror(-ret));
			differs = true;
			break;
		}
		print_cmp(out, s, target_kind_name(kinds[i]), &c);
		if (!cmp_ok(&c)) {
			differs = true;
			*views_only = true;
		}
	}
	if (!status && (differs || run.op_mismatch))
		status = EXIT_CHECK_FAILED;
	if (run.op_mismatch)
		*views_only = false;
	cli_run_finish(&run);
	return status;
}

/*
 * Replay @path and compare, up to @attempts times while only the views
 * differ: the live kernel works in the twin's process between ops as in any
 * (khugepaged may collapse a huge page the original did not have yet: see
 * vmalock replay --help), and only a difference on every attempt counts.
 * Return: an exit status.
 */
static int check(const struct twin_snapshot *s, const char *path, unsigned int targets,
		 unsigned int attempts)
{
	enum target_kind kinds[2];
	int nr = 0, status;

	for (const struct vml_word *w = vocab_next(&target_kind_vocab, targets, NULL); w;
	     w = vocab_next(&target_kind_vocab, targets, w))
		kinds[nr++] = (enum target_kind)w->value;
	for (unsigned int attempt = 1;; attempt++) {
		char *buf = NULL;
		size_t len = 0;
		bool views_only;
		FILE *out = open_memstream(&buf, &len);

		if (!out)
			return EXIT_CHECK_FAILED;
		status = check_once(s, path, kinds, nr, out, &views_only);
		fclose(out);
		if (status == EXIT_CHECK_FAILED && views_only && attempt < attempts) {
			fprintf(stderr, "vmalock twin: attempt %u of %u: the twin differs (below); "
				"again on fresh targets\n", attempt, attempts);
			fputs(buf, stderr);
			free(buf);
			continue;
		}
		if (!status && attempt > 1)
			fprintf(stderr, "vmalock twin: attempt %u of %u: the twin agrees\n", attempt,
				attempts);
		fputs(buf, stdout);
		free(buf);
		fflush(stdout);
		return status;
	}
}

/* Write the script to @path (through PATH.tmp, renamed: never half a script) or stdout. */
static int write_script(struct twin_snapshot *s, const char *path)
{
	char tmp[4096];
	FILE *f;
	int ret;

	if (!path)
		return twin_script_write(s, stdout) ? EXIT_CHECK_FAILED : 0;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return cli_usage_error("twin", "--out: path too long");
	f = fopen(tmp, "we");
	if (!f) {
		fprintf(stderr, "vmalock twin: %s: %s\n", tmp, strerror(errno));
		return EXIT_USAGE;
	}
	ret = twin_script_write(s, f);
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (!ret) {
		struct stat st;

		if (!stat(path, &st) && (unsigned long)st.st_size > SCRIPT_MAX_BYTES)
			fprintf(stderr, "vmalock twin: warning: %s is %lld bytes, over the %lu a "
				"script may have: replay refuses it\n", path,
				(long long)st.st_size, SCRIPT_MAX_BYTES);
	}
	if (ret) {
		fprintf(stderr, "vmalock twin: %s: %s\n", path, strerror(-ret));
		unlink(tmp);
		return EXIT_CHECK_FAILED;
	}
	return 0;
}

int cmd_twin(int argc, char **argv)
{
	struct twin_opts o = { 0 };
	struct twin_snapshot *s = NULL;
	char err[512], tmpl[] = "/tmp/vmalock-twin.XXXXXX";
	const char *path;
	unsigned long pid, pages = 0, rss = 0;
	bool help_wanted;
	int status, ret;

	status = cli_parse("twin", twin_tables, argc, argv, &o, pid_arg, &help_wanted);
	if (status)
		return status;
	if (help_wanted) {
		help(stdout);
		return 0;
	}
	if (!o.pid)
		return cli_usage_error("twin", "missing PID");
	if (cli_parse_count(o.pid, 1, 0x3fffffff, &pid))
		return cli_usage_error("twin", "PID: bad value '%s' (a number, 1 to %d)", o.pid,
				       0x3fffffff);
	if (!o.check && o.targets)
		return cli_usage_error("twin", "--target: only with --check");
	if (!o.check && o.attempts)
		return cli_usage_error("twin", "--attempts: only with --check");
	if (!o.attempts)
		o.attempts = 3;
	if (!o.targets)
		o.targets = VOCAB_BIT(TARGET_LIVE);
	ret = twin_snapshot_read((pid_t)pid, &s, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "vmalock twin: %s\n", err);
		return ret == -ENOMEM || ret == TWIN_EXITED || ret == -E2BIG ? EXIT_CHECK_FAILED :
		       EXIT_USAGE;
	}
	ret = twin_layout(s, SCRIPT_RANGE_LO, SCRIPT_RANGE_HI, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "vmalock twin: process %lu: %s\n", pid, err);
		twin_snapshot_free(s);
		return EXIT_CHECK_FAILED;
	}
	path = o.out;
	if (!path && o.check) {
		int fd = mkstemp(tmpl);

		if (fd < 0) {
			fprintf(stderr, "vmalock twin: %s: %s\n", tmpl, strerror(errno));
			twin_snapshot_free(s);
			return EXIT_CHECK_FAILED;
		}
		close(fd);
		path = tmpl;
	}
	status = write_script(s, path);
	for (size_t i = 0; i < s->nr; i++) {
		rss += s->vmas[i].kind == TK_SKIP ? 0 : s->vmas[i].kb[TF_RSS];
		for (unsigned long p = 0; s->vmas[i].pages && p < (s->vmas[i].end -
		     s->vmas[i].start) / 4096; p++)
			pages += (s->vmas[i].pages[p] & TP_STATE_MASK) != TP_NONE &&
				 (s->vmas[i].pages[p] & TP_STATE_MASK) != TP_SWAP;
	}
	if (!status)
		fprintf(stderr, "vmalock twin: process %lu (%s): %zu VMAs (%lu skipped), Rss %lu kB, "
			"%lu pages present, %lu swapped%s%s\n", pid, s->comm, s->nr, s->skipped, rss,
			pages, s->swapped_pages, o.out ? ": " : "", o.out ? o.out : "");
	if (!status && s->nr - s->skipped + CHILD_OWN_VMAS > max_map_count())
		fprintf(stderr, "vmalock twin: warning: the twin has %zu VMAs and a replaying "
			"process about %d of its own, over vm.max_map_count (%lu): a replay's last "
			"mmaps fail with ENOMEM\n", s->nr - s->skipped, CHILD_OWN_VMAS,
			max_map_count());
	if (!status && o.check)
		status = check(s, path, o.targets, o.attempts);
	if (path == tmpl)
		unlink(tmpl);
	twin_snapshot_free(s);
	return status;
}
