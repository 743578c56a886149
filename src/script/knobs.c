// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * knobs.c - the `knobs` directive (script.h): the transparent-hugepage
 * sysfs knobs a script may set for its run, and the values each takes -
 * the words its file under /sys/kernel/mm/transparent_hugepage lists.
 * Whether this kernel has a knob (an mTHP size) is for the live side and
 * the host profile to say; here only the spelling is checked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script/script.h"
#include "util/compiler.h"

static const struct {
	enum script_knob_file file;
	const char *values[7];
} knob_values[] = {
	{ KNOB_THP, { "always", "madvise", "never" } },
	{ KNOB_THP_DEFRAG, { "always", "defer", "defer+madvise", "madvise", "never" } },
	{ KNOB_THP_SHMEM, { "always", "within_size", "advise", "never", "deny", "force" } },
	{ KNOB_MTHP, { "always", "inherit", "madvise", "never" } },
	{ KNOB_MTHP_SHMEM, { "always", "inherit", "within_size", "advise", "never" } },
};

int script_knob_file(const char *name, enum script_knob_file *file, unsigned int *kb)
{
	static const struct {
		const char *name;
		enum script_knob_file file;
	} fixed[] = {
		{ "thp", KNOB_THP },
		{ "thp_defrag", KNOB_THP_DEFRAG },
		{ "thp_shmem", KNOB_THP_SHMEM },
	};
	unsigned long n;
	char *end;

	*kb = 0;
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++) {
		if (!strcmp(name, fixed[i].name)) {
			*file = fixed[i].file;
			return 0;
		}
	}
	/* hugepages-NkB or hugepages-NkB.shmem, N a power of two (a folio size). */
	if (strncmp(name, "hugepages-", 10) || name[10] < '1' || name[10] > '9')
		return -EINVAL;
	n = strtoul(name + 10, &end, 10);
	if (strncmp(end, "kB", 2) || n > (1UL << 30) || (n & (n - 1)))
		return -EINVAL;
	if (!strcmp(end + 2, ""))
		*file = KNOB_MTHP;
	else if (!strcmp(end + 2, ".shmem"))
		*file = KNOB_MTHP_SHMEM;
	else
		return -EINVAL;
	*kb = (unsigned int)n;
	return 0;
}

int script_knob_add(struct script *s, const char *tok, char *why, size_t len)
{
	const char *eq = strchr(tok, '=');
	struct script_knob *k;
	enum script_knob_file file;
	unsigned int kb;
	size_t i;

	if (!eq || eq == tok || !eq[1]) {
		snprintf(why, len, "'%s': want NAME=VALUE", tok);
		return -EINVAL;
	}
	if (s->nr_knobs == SCRIPT_MAX_KNOBS) {
		snprintf(why, len, "more than %d knobs", SCRIPT_MAX_KNOBS);
		return -EINVAL;
	}
	k = &s->knobs[s->nr_knobs];
	if ((size_t)(eq - tok) >= sizeof(k->name) || strlen(eq + 1) >= sizeof(k->value)) {
		snprintf(why, len, "'%s': name or value too long", tok);
		return -EINVAL;
	}
	snprintf(k->name, sizeof(k->name), "%.*s", (int)(eq - tok), tok);
	snprintf(k->value, sizeof(k->value), "%s", eq + 1);
	if (script_knob_file(k->name, &file, &kb)) {
		snprintf(why, len, "unknown knob '%s' (thp, thp_defrag, thp_shmem, hugepages-NkB, "
			 "hugepages-NkB.shmem)", k->name);
		return -EINVAL;
	}
	for (i = 0; i < s->nr_knobs; i++) {
		if (!strcmp(s->knobs[i].name, k->name)) {
			snprintf(why, len, "knob '%s' given twice", k->name);
			return -EINVAL;
		}
	}
	for (i = 0; i < ARRAY_SIZE(knob_values) && knob_values[i].file != file; i++)
		;
	VML_BUG_ON(i == ARRAY_SIZE(knob_values));
	for (size_t j = 0; knob_values[i].values[j]; j++) {
		if (!strcmp(k->value, knob_values[i].values[j])) {
			s->nr_knobs++;
			return 0;
		}
	}
	snprintf(why, len, "%s: unknown value '%s'", k->name, k->value);
	return -EINVAL;
}
