// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the op-script parser (src/script/script.c).
 *
 * Any input must parse or be refused with a message naming a line, without
 * a crash, a leak or undefined behaviour; and a script that parses must
 * print back (format_op) to text that parses to the same ops.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script/script.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *again = NULL, err[512];
	struct script *s = NULL, *t = NULL;
	size_t cap, len = 0;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (script_parse_string("fuzz.ops", text, &s, err, sizeof(err))) {
		/* refused: the message names the script and a line */
		if (strncmp(err, "fuzz.ops:", 9))
			abort();
		goto out;
	}
	/* Print it back and parse again: the same ops. */
	cap = s->nr_ops * 4200 + 1;
	again = malloc(cap);
	if (!again)
		goto out;
	again[0] = '\0';
	for (size_t i = 0; i < s->nr_ops; i++) {
		int n = format_op(&s->ops[i], again + len, cap - len - 1);

		if (n < 0 || (size_t)n >= cap - len - 1)
			abort();
		len += n;
		again[len++] = '\n';
		again[len] = '\0';
	}
	if (script_parse_string("again.ops", again, &t, err, sizeof(err))) {
		fprintf(stderr, "printed script does not parse: %s\n--\n%s--\n", err, again);
		abort();
	}
	if (t->nr_ops != s->nr_ops)
		abort();
	for (size_t i = 0; i < s->nr_ops; i++) {
		if (!op_same(&s->ops[i], &t->ops[i])) {
			char line[4200];

			format_op(&s->ops[i], line, sizeof(line));
			fprintf(stderr, "op %zu does not print back to itself: %s\n", i, line);
			abort();
		}
	}
out:
	script_free(s);
	script_free(t);
	free(again);
	free(text);
	return 0;
}
