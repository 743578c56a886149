/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vocab.h - the words of an enum: one table per enum of (name, value, help
 * text), read by the option parser (util/options.h), by the tables a
 * command prints and by the JSON it writes, so that a value is spelt one
 * way everywhere and a new value is one line.
 *
 * A vocabulary may also hold aliases for sets of values ("both" for mmap and
 * vma): an alias has a non-zero .set (bits 1u << value) and is only ever
 * parsed, never printed. Values of a vocabulary used as a set lie below 32.
 * Tools only (the library never prints).
 */
#ifndef VML_UTIL_VOCAB_H
#define VML_UTIL_VOCAB_H

#include <stdbool.h>
#include <stddef.h>

struct vml_word {
	const char *name;	/* NULL ends a table */
	int value;		/* the enum's value; unused for an alias */
	const char *help;	/* one line for --help, or NULL */
	unsigned int set;	/* an alias: the values it stands for, as bits; 0: a word */
};

struct vml_vocab {
	/*
	 * What a word names, for errors ("unknown policy 'x'"); NULL: errors
	 * say "bad value" about the whole option value instead.
	 */
	const char *noun;
	const struct vml_word *words;
};

/* The bit of @value in a set of a vocabulary's values. */
#define VOCAB_BIT(value) (1u << (value))

/* The name of @value, or "?" when the vocabulary has no such word. */
const char *vocab_name(const struct vml_vocab *v, int value);

/* The word (not an alias) named @name, or NULL. */
const struct vml_word *vocab_find(const struct vml_vocab *v, const char *name, size_t len);

/* Every word's value as a set (aliases aside). */
unsigned int vocab_all(const struct vml_vocab *v);

/*
 * The words of @v whose values lie in [@min, @max] ("a, b or c"), then,
 * with @aliases, the aliases wholly within it; into @buf.
 */
void vocab_list(const struct vml_vocab *v, int min, int max, bool aliases, char *buf, size_t len);

/*
 * The words whose values are in @set, in the vocabulary's order (the order
 * rows follow): for (w = vocab_next(v, set, NULL); w; w = vocab_next(v, set, w)).
 */
const struct vml_word *vocab_next(const struct vml_vocab *v, unsigned int set,
				  const struct vml_word *after);

#endif /* VML_UTIL_VOCAB_H */
