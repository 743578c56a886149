// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock host - the host profile: what this machine's kernel does,
 * measured (src/host/host.c); compare it with a saved one.
 */
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "scriptrun.h"
#include "host/host.h"
#include "system/keeper.h"
#include "system/settings.h"
#include "system/syslock.h"
#include "util/json.h"

#define MAX_SETS 16
#define MAX_CMD 256

struct host_opts {
	const char *json, *profile, *compare;
	const char *sets[MAX_SETS];
	int nr_sets;
	char *cmd[MAX_CMD + 1];
	int nr_cmd;
};

/* --set NAME=VALUE, repeatable; the whole struct host_opts is @dst. */
static int add_set(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	struct host_opts *h = dst;
	const char *eq = strchr(val, '=');
	char name[64];

	if (!eq || eq == val || !eq[1] || (size_t)(eq - val) >= sizeof(name))
		return cli_usage_error(cmd, "%s: bad value '%s' (NAME=VALUE)", o->name, val);
	snprintf(name, sizeof(name), "%.*s", (int)(eq - val), val);
	if (!setting_path(name))
		return cli_usage_error(cmd, "%s: unknown setting '%s' (thp, thp_defrag, thp_shmem, "
				       "hugepages-NkB, hugepages-NkB.shmem, max_map_count, "
				       "khugepaged.KNOB)", o->name, name);
	if (h->nr_sets == MAX_SETS)
		return cli_usage_error(cmd, "%s: too many settings", o->name);
	h->sets[h->nr_sets++] = val;
	return 0;
}

static int command_arg(void *opts, const char *arg)
{
	struct host_opts *h = opts;

	if (h->nr_cmd == MAX_CMD)
		return cli_usage_error("host", "COMMAND: too many arguments");
	h->cmd[h->nr_cmd++] = (char *)arg;
	return 0;
}

/*
 * Run @argv with the settings changed and the system-state lock held for
 * it, then restore them. Return: the command's exit status (128 + signal).
 */
static int run_with_settings(struct host_opts *h)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	char err[512];
	int status = 0, ret;
	pid_t pid;

	for (int i = 0; i < h->nr_sets; i++) {
		const char *eq = strchr(h->sets[i], '=');
		char name[64];

		snprintf(name, sizeof(name), "%.*s", (int)(eq - h->sets[i]), h->sets[i]);
		ret = setting_push(setting_path(name), eq + 1, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "vmalock host: --set %s: %s\n", h->sets[i], err);
			setting_pop_all();
			return ret == -EPERM ? EXIT_USAGE : EXIT_CHECK_FAILED;
		}
	}
	/* The command gets the signals; we wait for it and then restore. */
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &ign, &old[i]);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			sigaction(sigs[i], &old[i], NULL);
		setenv(SYSLOCK_ENV, "held", 1);
		/* A vmalock in COMMAND: our keeper waits for its keeper (keeper.h). */
		keeper_pass_hold();
		execvp(h->cmd[0], h->cmd);
		fprintf(stderr, "vmalock host: %s: %s\n", h->cmd[0], strerror(errno));
		_exit(127);
	}
	if (pid < 0) {
		fprintf(stderr, "vmalock host: fork: %s\n", strerror(errno));
		status = EXIT_CHECK_FAILED << 8;
	} else {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	/* A vmalock nested in COMMAND puts back its values (over ours) first. */
	keeper_wait_nested();
	setting_pop_all();
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define H(f) offsetof(struct host_opts, f)
static const struct cli_opt host_opt_table[] = {
	{ "--json", "FILE", cli_set_json_path, H(json), 0, 0, NULL,
	  "also write the profile as JSON (- for stdout: then no text)" },
	{ "--profile", "FILE", cli_set_string, H(profile), 0, 0, NULL,
	  "print a saved profile instead of measuring this host" },
	{ "--compare", "FILE", cli_set_string, H(compare), 0, 0, NULL,
	  "compare this host (or --profile) with the saved profile FILE\n"
	  "in the settings that change the corpus scripts' views; exit 0\n"
	  "if none differs, 1 if some do (listed)" },
	{ "--set", "NAME=VALUE", add_set, 0, 0, 0, NULL,
	  "with -- COMMAND...: run COMMAND with this kernel setting changed\n"
	  "(root; repeatable): thp, thp_defrag, thp_shmem (the THP sysfs\n"
	  "modes), hugepages-NkB, hugepages-NkB.shmem (one mTHP size's\n"
	  "enabled and shmem_enabled), max_map_count, khugepaged.KNOB; the\n"
	  "old values come back afterwards, also when COMMAND or vmalock is\n"
	  "interrupted or killed" },
	CLI_OPT_END,
};
#undef H

static const struct cli_opt *const host_tables[] = { host_opt_table, NULL };

static void help(FILE *f)
{
	fprintf(f,
"usage: vmalock host [options]\n"
"\n"
"Measure what this machine's kernel does that changes what its /proc views\n"
"show (the zero pages, protection keys, THP modes, fault-around, page-cache\n"
"folio sizes, swap, NUMA nodes, limits, the mmap_lock hand-off time, DAMON)\n"
"and print it. Every vmalock command configures the model from this\n"
"profile, so that model and live kernel are compared like with like;\n"
"docs/host-profile.md lists the fields and how each is found.\n"
"\n");
	cli_print_opts(f, host_tables);
	fprintf(f,
"\n"
"With --set ... -- COMMAND, the system-state lock is held for COMMAND: other\n"
"vmalock runs on the live kernel wait (vmalock processes under COMMAND do not).\n"
"Nested --set (a vmalock under COMMAND changing a setting again) puts back the\n"
"value it found first; the values of before the outermost run come back last,\n"
"whichever run is killed.\n"
"\n"
"Exit status: 0 success; 1 a measurement failed or --compare found a\n"
"difference; 2 bad usage or an unreadable profile; with COMMAND, its status.\n");
}

int cmd_host(int argc, char **argv)
{
	struct host_opts o = { 0 };
	const char *json, *profile, *compare;
	struct host_profile p, other;
	char err[512], buf[1024];
	bool help_wanted;
	int ret;

	ret = cli_parse("host", host_tables, argc, argv, &o, command_arg, &help_wanted);
	if (ret)
		return ret;
	if (help_wanted) {
		help(stdout);
		return 0;
	}
	if (o.nr_sets || o.nr_cmd) {
		if (!o.nr_sets || !o.nr_cmd)
			return cli_usage_error("host", o.nr_sets ? "--set needs -- COMMAND" :
					       "unexpected argument '%s'", o.cmd[0]);
		o.cmd[o.nr_cmd] = NULL;
		return run_with_settings(&o);
	}
	json = o.json;
	profile = o.profile;
	compare = o.compare;
	if (profile) {
		ret = host_profile_load(profile, &p, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "vmalock host: --profile: %s\n", err);
			return EXIT_USAGE;
		}
	} else {
		ret = host_probe(&p, NULL);
		if (ret) {
			fprintf(stderr, "vmalock host: probing this host failed: %s\n",
				host_probe_failure(ret));
			return EXIT_CHECK_FAILED;
		}
	}
	if (compare) {
		ret = host_profile_load(compare, &other, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "vmalock host: --compare: %s\n", err);
			return EXIT_USAGE;
		}
		if (host_profile_differences(&other, &p, buf, sizeof(buf))) {
			printf("differs from %s (recorded vs %s): %s\n", compare,
			       profile ? profile : "this host", buf);
			return EXIT_CHECK_FAILED;
		}
		printf("same as %s in every setting the corpus views depend on\n", compare);
		return 0;
	}
	/* Not for --compare: which lock the views take changes no view's text. */
	if (!profile) {
		ret = host_probe_view_locks(&p);
		if (ret) {
			fprintf(stderr, "vmalock host: probing the view locks failed: %s\n",
				strerror(-ret));
			return EXIT_CHECK_FAILED;
		}
	}
	if (!json || strcmp(json, "-"))
		host_profile_print(&p, stdout);
	if (json) {
		fflush(stdout);
		ret = host_profile_save(&p, json);
		if (ret) {
			fprintf(stderr, "vmalock host: --json %s: %s\n", json, strerror(-ret));
			return EXIT_CHECK_FAILED;
		}
	}
	return 0;
}
