// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock host - the host profile: what this machine's kernel does,
 * measured (src/target/host.c); compare it with a saved one.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "scriptrun.h"
#include "target/host.h"
#include "util/json.h"

struct host_opts {
	const char *json, *profile, *compare;
};

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
"show (the zero pages, protection keys, THP modes, fault-around, swap, NUMA\n"
"nodes, limits, the mmap_lock hand-off time, DAMON) and print it. Every\n"
"vmalock command configures the model from this profile, so that model and\n"
"live kernel are compared like with like; docs/host-profile.md lists the\n"
"fields and how each is found.\n"
"\n");
	cli_print_opts(f, host_tables);
	fprintf(f,
"\n"
"Exit status: 0 success; 1 a measurement failed or --compare found a\n"
"difference; 2 bad usage or an unreadable profile.\n");
}

int cmd_host(int argc, char **argv)
{
	struct host_opts o = { 0 };
	const char *json, *profile, *compare;
	struct host_profile p, other;
	char err[512], buf[1024];
	bool help_wanted;
	int ret;

	ret = cli_parse("host", host_tables, argc, argv, &o, NULL, &help_wanted);
	if (ret)
		return ret;
	if (help_wanted) {
		help(stdout);
		return 0;
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
