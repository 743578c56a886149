/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * strbuf.h - a growable string, for the tools' views and reports. An
 * allocation failure makes it sticky: what is added after it is dropped,
 * and strbuf_finish() says so. Start from struct strbuf b = { 0 }.
 */
#ifndef VML_UTIL_STRBUF_H
#define VML_UTIL_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *s;		/* NUL-terminated once anything was added */
	size_t len, cap;
	bool oom;		/* an allocation failed */
};

void strbuf_add(struct strbuf *b, const char *s, size_t n);
__attribute__((format(printf, 2, 3)))
void strbuf_printf(struct strbuf *b, const char *fmt, ...);

/*
 * strbuf_finish - the text, which the caller frees (vml_free); "" when
 * nothing was added.
 * Return: the text, or NULL when an allocation failed (the text is freed).
 */
char *strbuf_finish(struct strbuf *b);

#endif /* VML_UTIL_STRBUF_H */
