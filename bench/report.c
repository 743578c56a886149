// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report.c - the results tables every scenario prints (struct bench_col:
 * columns of a heading and a width, cells written by kind), and the ratios
 * verdict lines quote.
 */
#include <math.h>
#include <stdarg.h>

#include "internal.h"

/* Spaces before column @i: none before the first. */
static int gap(const struct bench_col *c, unsigned int i)
{
	return i == 0 ? 0 : c->gap ? c->gap : 1;
}

static bool hidden(const struct bench_table *t, unsigned int i)
{
	return i < 32 && (t->hide & (1u << i));
}

void bench_table_start(struct bench_table *t, FILE *f, const struct bench_col *cols,
		       unsigned int hide)
{
	unsigned int shown = 0;

	*t = (struct bench_table){ .f = f, .cols = cols, .hide = hide };
	for (unsigned int i = 0; cols[i].head; i++) {
		const struct bench_col *c = &cols[i];

		if (hidden(t, i))
			continue;
		fprintf(f, "%*s%*s", gap(c, shown++), "", c->width, c->head);
	}
	fputc('\n', f);
}

/* The next cell's column, or NULL: hidden (its value is dropped). */
static const struct bench_col *next(struct bench_table *t, unsigned int *shown_before)
{
	unsigned int i = t->next++, shown = 0;

	for (unsigned int k = 0; k < i; k++)
		shown += !hidden(t, k);
	*shown_before = shown;
	return hidden(t, i) ? NULL : &t->cols[i];
}

void bench_text(struct bench_table *t, const char *s)
{
	unsigned int n;
	const struct bench_col *c = next(t, &n);

	if (!c)
		return;
	if (c->prec)
		fprintf(t->f, "%*s%*.*s", gap(c, n), "", c->width, c->prec, s);
	else
		fprintf(t->f, "%*s%*s", gap(c, n), "", c->width, s);
}

void bench_textf(struct bench_table *t, const char *fmt, ...)
{
	unsigned int n;
	const struct bench_col *c = next(t, &n);
	va_list ap;

	if (!c)
		return;
	fprintf(t->f, "%*s", gap(c, n), "");
	va_start(ap, fmt);
	vfprintf(t->f, fmt, ap);
	va_end(ap);
}

/* @v in column @c's way of writing numbers, @w wide. */
static void number(FILE *f, const struct bench_col *c, int w, double v)
{
	double a = fabs(v);

	switch (c->num) {
	case BENCH_NUM_RAW:	/* printf's own nan and inf */
		fprintf(f, "%*.*f", w, c->prec, v);
		return;
	case BENCH_NUM_G:
		fprintf(f, "%*.*g", w, c->prec, v);
		return;
	case BENCH_NUM_US:	/* microseconds: decimals while they fit */
		fprintf(f, "%*.*f", w, v < 100000 ? c->prec : 0, v);
		return;
	case BENCH_NUM_NS:	/* nanoseconds: whole below 10 us, 3 digits above */
		if (isnan(v))
			fprintf(f, "%*s", w, "-");
		else if (v < 10000)
			fprintf(f, "%*.0f", w, v);
		else
			fprintf(f, "%*.3g", w, v);
		return;
	case BENCH_NUM_LOG:	/* anything from 0.01 up: 2 decimals, whole, then exponent */
		if (v < 10)
			fprintf(f, "%*.2f", w, v);
		else if (v < 100000)
			fprintf(f, "%*.0f", w, v);
		else
			fprintf(f, "%*.0e", w, v);
		return;
	case BENCH_NUM_COUNT:	/* a count per poll: whole where it is */
		if (isfinite(v) && v == floor(v)) {
			fprintf(f, "%*.0f", w, v);
			return;
		}
		if (isfinite(v) && v < 100) {
			fprintf(f, "%*.2f", w, v);
			return;
		}
		/* fall through */
	case BENCH_NUM_ADAPT:	/* fewer decimals as it grows */
		if (!isfinite(v))
			fprintf(f, "%*s", w, "-");
		else
			fprintf(f, "%*.*f", w, v != 0 && a < 0.1 ? 3 : a < 10 ? 2 : a < 100000 ? 1 : 0,
				v);
		return;
	case BENCH_NUM_FIXED:
		break;
	}
	if (!isfinite(v))
		fprintf(f, "%*s", w, "-");
	else
		fprintf(f, "%*.*f", w, c->prec, v);
}

void bench_num(struct bench_table *t, double v)
{
	unsigned int n;
	const struct bench_col *c = next(t, &n);

	if (!c)
		return;
	fprintf(t->f, "%*s", gap(c, n), "");
	number(t->f, c, c->width, v);
}

void bench_row_end(struct bench_table *t)
{
	fputc('\n', t->f);
	t->next = 0;
}

const char *bench_ratio(char *buf, size_t len, double num, double den)
{
	double r = den > 0 ? num / den : 0;

	if (!(den > 0) || !(num >= 0))
		snprintf(buf, len, "-");
	else if (r < 9.95)
		snprintf(buf, len, "%.2fx", r);
	else
		snprintf(buf, len, "%.0fx", r);
	return buf;
}
