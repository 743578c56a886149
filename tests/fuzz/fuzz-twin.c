// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: vmalock twin's smaps parser and what follows it
 * (src/twin/): any input is parsed or refused with a message naming a line,
 * without a crash, a leak or undefined behaviour. Text that parses is
 * classified, laid out, and written as an op script, which must parse
 * (script_parse_string) whenever the layout fits; and the original compared
 * with its own records moved to the twin's addresses is the same on every
 * VMA it keeps.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script/script.h"
#include "twin/twin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct twin_snapshot *s = calloc(1, sizeof(*s));
	char err[256], *text = NULL, *self = NULL;
	size_t len = 0, slen = 0;
	struct script *sc = NULL;
	struct twin_cmp c;
	FILE *f;

	if (!s || !size)
		goto out;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		goto out;
	if (twin_smaps_parse(f, s, err, sizeof(err))) {
		fclose(f);
		if (strncmp(err, "line ", 5) && strncmp(err, "read ", 5))
			abort();
		goto out;
	}
	fclose(f);
	if (twin_snapshot_classify(s, err, sizeof(err)) ||
	    twin_layout(s, SCRIPT_RANGE_LO, SCRIPT_RANGE_HI, err, sizeof(err)))
		goto out;
	f = open_memstream(&text, &len);
	if (!f || twin_script_write(s, f))
		abort();
	fclose(f);
	if (script_parse_string("twin.ops", text, &sc, err, sizeof(err))) {
		fprintf(stderr, "the twin does not parse: %s\n--\n%s--\n", err, text);
		abort();
	}
	/* The original against itself, moved: every kept VMA the same in maps. */
	f = open_memstream(&self, &slen);
	if (!f)
		abort();
	for (size_t i = 0; i < s->nr; i++) {
		const struct twin_vma *v = &s->vmas[i];

		if (v->kind == TK_SKIP)
			continue;
		fprintf(f, "%lx-%lx %s %08lx 00:00 0 %s\n", v->tstart, twin_addr(v, v->end),
			v->perms, v->offset,
			v->kind == TK_FILE || v->kind == TK_SHMEM ? "/f" :
			v->kind == TK_HEAP || v->kind == TK_STACK || !v->name ? "" : v->name);
	}
	fclose(f);
	if (twin_compare(s, self, &c) == 0 && c.maps_same != c.vmas) {
		fprintf(stderr, "the original moved differs from itself: %s\n", c.first_diff);
		abort();
	}
out:
	script_free(sc);
	free(self);
	free(text);
	twin_snapshot_free(s);
	return 0;
}
