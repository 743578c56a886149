// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * doc.c - the JSON document a run writes (--json): every scenario's has
 * the same shape, docs/bench-json.md.
 */
#include "internal.h"
#include "util/json.h"

json_t *bench_doc_new(const struct bench_run *r)
{
	json_t *doc = json_object();

	if (!doc)
		return NULL;
	json_set_str(doc, "scenario", r->sc->name);
	json_set_str(doc, "kernel", bench_kernel());
	json_set_u64(doc, "samples", r->c->samples);
	return doc;
}

json_t *bench_doc_meta(json_t *doc)
{
	return doc;
}

json_t *bench_doc_rows(json_t *doc)
{
	json_t *rows = json_object_get(doc, "rows");

	if (!rows) {
		rows = json_array();
		json_object_set_new(doc, "rows", rows);
	}
	return rows;
}

void bench_doc_set_calibration(json_t *doc, json_t *cal)
{
	json_object_set_new(doc, "calibration", cal);
}
