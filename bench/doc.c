// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * doc.c - the JSON document a run writes (--json), one schema for every
 * scenario (docs/bench-json.md; tests/tools/test-json checks it):
 *
 *   {"meta": {"scenario": NAME, "question": ..., "kernel": RELEASE,
 *             "samples": N, "targets": ["model", "live"], "loadavg": ...,
 *             ...the scenario's own settings and context},
 *    "calibration": {...what the model was charged and why} | null,
 *    "rows": [{...one object per row of the table}]}
 */
#include "internal.h"
#include "util/json.h"

json_t *bench_doc_new(const struct bench_run *r)
{
	json_t *doc = json_object(), *meta = json_object(), *targets = json_array();
	char load[128];

	if (!doc || !meta || !targets) {
		json_decref(doc);
		json_decref(meta);
		json_decref(targets);
		return NULL;
	}
	json_set_str(meta, "scenario", r->sc->name);
	json_set_str(meta, "question", r->sc->question);
	json_set_str(meta, "kernel", bench_kernel());
	json_set_u64(meta, "samples", r->c->samples);
	for (const struct vml_word *w = vocab_next(&target_kind_vocab, r->c->targets, NULL); w;
	     w = vocab_next(&target_kind_vocab, r->c->targets, w))
		json_push_new(targets, json_string(w->name));
	json_set_new(meta, "targets", targets);
	bench_loadavg(load, sizeof(load));
	json_set_str(meta, "loadavg", load);
	json_set_new(doc, "meta", meta);
	json_set_new(doc, "calibration", json_null());
	json_set_new(doc, "rows", json_array());
	return doc;
}

json_t *bench_doc_meta(json_t *doc)
{
	return json_object_get(doc, "meta");
}

json_t *bench_doc_rows(json_t *doc)
{
	return json_object_get(doc, "rows");
}

void bench_doc_set_calibration(json_t *doc, json_t *cal)
{
	json_object_set_new(doc, "calibration", cal);
}

json_t *bench_doc_row(json_t *doc, const char *target)
{
	json_t *row = json_object();

	if (target)
		json_set_str(row, "target", target);
	json_push_new(bench_doc_rows(doc), row);
	return row;
}

json_t *bench_doc_samples(json_t *row, const char *key)
{
	json_t *samples = json_array();

	json_set_new(row, key, samples);
	return samples;
}
