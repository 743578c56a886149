// SPDX-License-Identifier: GPL-2.0-or-later
/* strbuf.c - a growable string (strbuf.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/strbuf.h"

/* Room for @n more bytes and the NUL. */
static bool strbuf_room(struct strbuf *b, size_t n)
{
	char *s;

	if (b->oom)
		return false;
	s = vml_grow_array(b->s, &b->cap, b->len + n + 1, 1, 256);
	if (!s) {
		b->oom = true;
		return false;
	}
	b->s = s;
	return true;
}

void strbuf_add(struct strbuf *b, const char *s, size_t n)
{
	if (!strbuf_room(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void strbuf_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0 || !strbuf_room(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *strbuf_finish(struct strbuf *b)
{
	char *s = b->s;

	if (b->oom) {
		vml_free(s);
		s = NULL;
	} else if (!s) {
		s = vml_strdup("");
	}
	*b = (struct strbuf){ 0 };
	return s;
}
