// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-json - the JSON layer (src/util/json.h): what JSON cannot hold comes
 * out as null, files are replaced whole, bad input is an error with a
 * position, the getters check types; the host profile survives a save and a
 * load unchanged.
 *
 *   test-json                 the unit tests (TAP)
 *   test-json FILE...         round-trip each document: read, write, read
 *                             again, equal (tests/cli/bench.sh runs it on
 *                             every document the benchmarks write)
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "host/host.h"
#include "util/json.h"

static char dir[] = "/tmp/vmalock-test-json.XXXXXX";

static int roundtrip(const char *path)
{
	char err[512], tmp[4096];
	json_t *a, *b;
	int ret = json_read_file(path, &a, err, sizeof(err));

	if (ret) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s/roundtrip.json", dir);
	ret = json_write_file(a, tmp);
	if (!ret)
		ret = json_read_file(tmp, &b, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s: %s\n", path, ret == -EINVAL ? err : strerror(-ret));
		json_decref(a);
		return 1;
	}
	ret = !json_equal(a, b);
	if (ret)
		fprintf(stderr, "%s: differs after a write and a read\n", path);
	json_decref(a);
	json_decref(b);
	unlink(tmp);
	return ret;
}

static void test_values(void)
{
	char path[4096], err[256];
	json_t *doc = json_object(), *back;
	const char *s;
	double d;
	uint64_t u;
	bool b;

	json_set_str(doc, "s", "a \"quoted\"\n\tstring");
	json_set_double(doc, "nan", NAN);
	json_set_double(doc, "inf", INFINITY);
	json_set_double(doc, "pi", 3.25);
	json_set_u64(doc, "big", 1ULL << 62);
	json_set_bool(doc, "yes", true);
	snprintf(path, sizeof(path), "%s/v.json", dir);
	is_int(json_write_file(doc, path), 0, "a document is written");
	is_int(json_read_file(path, &back, err, sizeof(err)), 0, "and read back");
	ok(json_is_null(json_object_get(back, "nan")) && json_is_null(json_object_get(back, "inf")),
	   "NaN and infinity come back as null");
	ok(!json_get_str(back, "s", &s) && !strcmp(s, "a \"quoted\"\n\tstring"),
	   "a string with quotes and control characters survives");
	ok(!json_get_double(back, "pi", &d) && d == 3.25, "a double survives");
	ok(!json_get_u64(back, "big", &u) && u == 1ULL << 62, "a 62-bit integer survives");
	ok(!json_get_bool(back, "yes", &b) && b, "a bool survives");
	is_int(json_get_u64(back, "s", &u), -EINVAL, "a getter refuses another type");
	is_int(json_get_u64(back, "none", &u), -ENOENT, "a getter says what is missing");
	is_int(json_get_double(back, "big", &d), 0, "an integer reads as a double");
	json_decref(back);
	json_decref(doc);

	snprintf(path, sizeof(path), "%s/bad.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\"a\": 1,\n \"a\": 2}\n", f);
	fclose(f);
	is_int(json_read_file(path, &back, err, sizeof(err)), -EINVAL, "a duplicate key is refused");
	ok(strstr(err, "bad.json:2:") != NULL, "with the file and line (%s)", err);
	is_int(json_read_file(dir, &back, err, sizeof(err)), -EISDIR, "a directory is refused");
	is_int(json_check_writable("/nonexistent/x.json"), -ENOENT, "an unwritable path is seen early");
	is_int(json_check_writable(dir), -EISDIR, "so is a directory");
	snprintf(path, sizeof(path), "%s/new.json", dir);
	is_int(json_check_writable(path), 0, "a new file in a writable directory is fine");
	ok(access(path, F_OK) != 0, "and the check creates nothing");
}

static void test_profile(void)
{
	struct host_profile p, q;
	char path[4096], err[512], diff[512];

	is_int(host_probe(&p, dir), 0, "this host is probed");
	snprintf(path, sizeof(path), "%s/profile.json", dir);
	is_int(host_profile_save(&p, path), 0, "the profile is saved");
	is_int(host_profile_load(path, &q, err, sizeof(err)), 0, "and loaded (%s)", err);
	is_int(host_profile_differences(&p, &q, diff, sizeof(diff)), 0,
	       "nothing that matters differs after the round trip (%s)", diff);
	ok(!strcmp(p.kernel_release, q.kernel_release) && p.hz == q.hz &&
	   p.handoff_ns == q.handoff_ns && p.nr_mthp == q.nr_mthp && p.ram_bytes == q.ram_bytes &&
	   p.nr_kdamonds == q.nr_kdamonds && !strcmp(p.damon_actions, q.damon_actions),
	   "nor anything else");
	q.zero_page = !q.zero_page;
	q.pkeys = !q.pkeys;
	is_int(host_profile_differences(&p, &q, diff, sizeof(diff)), 2,
	       "two changed settings are two differences");
	ok(strstr(diff, "zero_page") && strstr(diff, "pkeys"), "named: %s", diff);
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (!mkdtemp(dir))
		return 1;
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			failed |= roundtrip(argv[i]);
		rmdir(dir);
		return failed;
	}
	test_values();
	test_profile();
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			tap_diag("could not remove %s", dir);
	}
	return tap_done();
}
