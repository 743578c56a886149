// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-json - the JSON layer (src/util/json.h): what JSON cannot hold comes
 * out as null, files are replaced whole, bad input is an error with a
 * position, the getters check types; the host profile survives a save and a
 * load unchanged; the benchmarks' one schema.
 *
 *   test-json                 the unit tests (TAP)
 *   test-json FILE...         round-trip each document: read, write, read
 *                             again, equal
 *   test-json --bench FILE... the same, and each has the benchmarks' schema
 *                             (tests/cli/bench.sh runs it on every document
 *                             the benchmarks write)
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

/*
 * The benchmarks' one schema (docs/bench-json.md): exactly "meta",
 * "calibration" and "rows" (a simulated run's also "sim_costs" and
 * "sim_layout"); meta names the scenario, the question and the
 * kernel, gives the samples (an integer from 1), the targets (each "model"
 * or "live") and the load average; calibration is an object or null; rows
 * is an array of objects. What a scenario's rows hold is its own (bench.sh
 * checks that). Return: NULL, or what is wrong.
 */
static const char *bench_schema(json_t *doc)
{
	static const char *const strings[] = { "scenario", "question", "kernel", "loadavg" };
	json_t *meta = json_object_get(doc, "meta"), *cal = json_object_get(doc, "calibration");
	json_t *rows = json_object_get(doc, "rows"), *targets, *v;
	const char *key;
	uint64_t samples;
	size_t i;

	if (!json_is_object(doc))
		return "not an object";
	json_object_foreach(doc, key, v) {
		/* a simulated run's table and mappings, which --sim-costs reads back */
		bool sim = !strcmp(key, "sim_costs") || !strcmp(key, "sim_layout");

		if (strcmp(key, "meta") && strcmp(key, "calibration") && strcmp(key, "rows") && !sim)
			return "a key besides meta, calibration and rows (and a simulated run's "
			       "sim_costs, sim_layout)";
	}
	if (!json_is_object(meta))
		return "no meta object";
	if (!cal || !(json_is_object(cal) || json_is_null(cal)))
		return "calibration is neither an object nor null";
	if (!json_is_array(rows))
		return "no rows array";
	json_array_foreach(rows, i, v)
		if (!json_is_object(v))
			return "a row that is not an object";
	for (i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		const char *s;

		if (json_get_str(meta, strings[i], &s))
			return "meta lacks a string: scenario, question, kernel or loadavg";
	}
	if (json_get_u64(meta, "samples", &samples) || !samples)
		return "meta.samples is not an integer from 1";
	targets = json_object_get(meta, "targets");
	if (!json_is_array(targets) || !json_array_size(targets))
		return "meta.targets is not a non-empty array";
	json_array_foreach(targets, i, v)
		if (!json_is_string(v) || (strcmp(json_string_value(v), "model") &&
					   strcmp(json_string_value(v), "live")))
			return "meta.targets holds something besides model and live";
	return NULL;
}

static int roundtrip(const char *path, bool bench)
{
	char err[512], tmp[4096];
	const char *wrong;
	json_t *a, *b;
	int ret = json_read_file(path, &a, err, sizeof(err));

	if (ret) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	wrong = bench ? bench_schema(a) : NULL;
	if (wrong) {
		fprintf(stderr, "%s: not the benchmarks' schema: %s\n", path, wrong);
		json_decref(a);
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

/* The schema check takes a document of the schema and refuses what strays from it. */
static void test_bench_schema(void)
{
	static const char *const bad[] = {
		"[]",
		"{\"meta\": {}, \"calibration\": null, \"rows\": []}",
		"{\"meta\": %s, \"rows\": []}",
		"{\"meta\": %s, \"calibration\": 3, \"rows\": []}",
		"{\"meta\": %s, \"calibration\": null, \"rows\": [1]}",
		"{\"meta\": %s, \"calibration\": null, \"rows\": [], \"scenario\": \"x\"}",
	};
	const char *meta = "{\"scenario\": \"ops\", \"question\": \"?\", \"kernel\": \"6.18\", "
			   "\"samples\": 2, \"targets\": [\"model\"], \"loadavg\": \"1 1 1\"}";
	char text[512];
	json_error_t e;
	json_t *doc;

	snprintf(text, sizeof(text), "{\"meta\": %s, \"calibration\": {\"record_ns\": 1}, "
		 "\"rows\": [{\"op\": \"x\"}]}", meta);
	doc = json_loads(text, 0, &e);
	ok(doc && !bench_schema(doc), "a benchmark document of the schema passes");
	json_decref(doc);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), bad[i], meta);
		doc = json_loads(text, 0, &e);
		ok(doc && bench_schema(doc), "refused: %s", bench_schema(doc) ? bench_schema(doc) :
		   "(passed)");
		json_decref(doc);
	}
}

/*
 * file_folio_max_kb: measured here as root (64 on ext4 with large folios),
 * it survives the round trip, and so does "unknown" (0), which configures
 * the model's default and so differs from no 64.
 */
static void test_profile_file_folios(const struct host_profile *p, const char *path)
{
	struct host_profile q = *p, r;
	struct vml_sys_config cfg;
	char err[512], diff[512];

	ok(p->file_folio_max_kb || geteuid(), "measured as root: %u kB (%s)", p->file_folio_max_kb,
	   p->file_folio_probe);
	q.file_folio_max_kb = 4;
	is_int(host_profile_save(&q, path), 0, "a profile of small file folios is saved");
	is_int(host_profile_load(path, &r, err, sizeof(err)), 0, "and loaded (%s)", err);
	is_int(r.file_folio_max_kb, 4, "file_folio_max_kb 4 comes back");
	ok(!strcmp(r.file_folio_probe, p->file_folio_probe), "and how it was found");
	host_profile_to_config(&r, 0, &cfg);
	is_int((long)cfg.file_folio_max_bytes, 4096, "the model's folios: one page");
	q.file_folio_max_kb = 64;
	is_int(host_profile_differences(&q, &r, diff, sizeof(diff)), 1, "4 vs 64 differs");
	ok(strstr(diff, "file_folio_max_kb: 64 vs 4") != NULL, "named: %s", diff);
	q.file_folio_max_kb = 0;
	is_int(host_profile_save(&q, path), 0, "an unknown size is saved");
	is_int(host_profile_load(path, &r, err, sizeof(err)), 0, "and loaded (%s)", err);
	is_int(r.file_folio_max_kb, 0, "as unknown");
	host_profile_to_config(&r, 0, &cfg);
	is_int((long)cfg.file_folio_max_bytes, 0, "which leaves the model its default");
	q.file_folio_max_kb = 64;
	is_int(host_profile_differences(&q, &r, diff, sizeof(diff)), 0,
	       "the default is 64: unknown differs from no 64 (%s)", diff);
	q.file_folio_max_kb = 48;
	is_int(host_profile_save(&q, path), 0, "a size of no power of two is saved");
	ok(host_profile_load(path, &r, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "file_folio_max_kb"), "but refused when loaded: %s", err);
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
	test_profile_file_folios(&p, path);
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (!mkdtemp(dir))
		return 1;
	if (argc > 1) {
		bool bench = !strcmp(argv[1], "--bench");

		for (int i = 1 + bench; i < argc; i++)
			failed |= roundtrip(argv[i], bench);
		rmdir(dir);
		return failed;
	}
	test_values();
	test_bench_schema();
	test_profile();
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			tap_diag("could not remove %s", dir);
	}
	return tap_done();
}
