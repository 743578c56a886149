// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vocab.c - looking words up in an enum's vocabulary (vocab.h).
 */
#include <stdio.h>
#include <string.h>

#include "util/vocab.h"

const char *vocab_name(const struct vml_vocab *v, int value)
{
	for (const struct vml_word *w = v->words; w->name; w++)
		if (!w->set && w->value == value)
			return w->name;
	return "?";
}

const struct vml_word *vocab_find(const struct vml_vocab *v, const char *name, size_t len)
{
	for (const struct vml_word *w = v->words; w->name; w++)
		if (strlen(w->name) == len && !strncmp(w->name, name, len))
			return w;
	return NULL;
}

unsigned int vocab_all(const struct vml_vocab *v)
{
	unsigned int set = 0;

	for (const struct vml_word *w = v->words; w->name; w++)
		if (!w->set)
			set |= VOCAB_BIT(w->value);
	return set;
}

/* Is @w a word in [@min, @max], or (with @aliases) an alias of words all in it? */
static bool listed(const struct vml_word *w, int min, int max, bool aliases)
{
	if (!w->set)
		return w->value >= min && w->value <= max;
	if (!aliases)
		return false;
	for (int b = 0; b < 32; b++)
		if ((w->set & VOCAB_BIT(b)) && (b < min || b > max))
			return false;
	return true;
}

void vocab_list(const struct vml_vocab *v, int min, int max, bool aliases, char *buf, size_t len)
{
	size_t used = 0, n = 0, i = 0;

	for (const struct vml_word *w = v->words; w->name; w++)
		n += listed(w, min, max, aliases);
	buf[0] = '\0';
	for (const struct vml_word *w = v->words; w->name && used < len; w++) {
		if (!listed(w, min, max, aliases))
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i == 0 ? "" : i + 1 == n ? " or " : ", ", w->name);
		i++;
	}
}

const struct vml_word *vocab_next(const struct vml_vocab *v, unsigned int set,
				  const struct vml_word *after)
{
	for (const struct vml_word *w = after ? after + 1 : v->words; w->name; w++)
		if (!w->set && (set & VOCAB_BIT(w->value)))
			return w;
	return NULL;
}
