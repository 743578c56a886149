// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock host - the host profile: what this machine's kernel does,
 * measured (src/target/host.c); compare it with a saved one.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "scriptrun.h"
#include "target/host.h"
#include "util/json.h"

static void help(FILE *f)
{
	fprintf(f,
"usage: vmalock host [options]\n"
"\n"
"Measure what this machine's kernel does that changes what its /proc views\n"
"show (the zero pages, protection keys, THP modes, fault-around, swap, NUMA\n"
"nodes, limits, the mmap_lock hand-off time, DAMON) and print it. Every\n"
"vmalock command configures the model from this profile, so that model and\n"
"live kernel are compared like with like; docs/host-profile.md lists the\n"
"fields and how each is found.\n"
"\n"
"  --json FILE        also write the profile as JSON (- for stdout: then no text)\n"
"  --profile FILE     print a saved profile instead of measuring this host\n"
"  --compare FILE     compare this host (or --profile) with the saved profile\n"
"                     FILE in the settings that change the corpus scripts'\n"
"                     views; exit 0 if none differs, 1 if some do (listed)\n"
"\n"
"Exit status: 0 success; 1 a measurement failed or --compare found a\n"
"difference; 2 bad usage or an unreadable profile.\n");
}

int cmd_host(int argc, char **argv)
{
	struct cli_args a = { .cmd = "host", .argc = argc, .argv = argv, .i = 1 };
	const char *json = NULL, *profile = NULL, *compare = NULL;
	struct host_profile p, other;
	char err[512], buf[1024];
	bool bad = false;
	int ret;

	while (a.i < argc && !bad) {
		const char *arg = argv[a.i];

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			help(stdout);
			return 0;
		} else if (cli_opt(&a, "--json", &json, &bad)) {
		} else if (cli_opt(&a, "--profile", &profile, &bad)) {
		} else if (cli_opt(&a, "--compare", &compare, &bad)) {
		} else if (arg[0] == '-' && arg[1]) {
			return cli_usage_error("host", "unknown option '%s'", arg);
		} else {
			return cli_usage_error("host", "unexpected argument '%s'", arg);
		}
	}
	if (bad)
		return EXIT_USAGE;
	if (json) {
		ret = json_check_writable(json);
		if (ret)
			return cli_usage_error("host", "--json: cannot write '%s': %s", json,
					       strerror(-ret));
	}
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
				strerror(-ret));
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
