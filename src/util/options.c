// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * options.c - the option tables' parser, checkers and help writer (options.h).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/options.h"

#define HELP_COLUMN 28

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vmalock %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try vmalock %s --help)\n", cmd);
	return EXIT_USAGE;
}

static void *field(const struct cli_opt *o, void *opts)
{
	return (char *)opts + o->off;
}

int cli_set_flag(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	(void)cmd;
	(void)o;
	(void)val;
	*(bool *)dst = true;
	return 0;
}

int cli_set_string(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	if (!*val)
		return cli_usage_error(cmd, "%s: empty value", o->name);
	*(const char **)dst = val;
	return 0;
}

int cli_parse_count(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v, mul = 1;
	char *end;

	/* strtoul would take "-1" as a huge number and " 1" as 1: neither is a count. */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		mul = 1000;
	else if (*end == 'M')
		mul = 1000000;
	if (mul > 1)
		end++;
	if (*end || (v && mul > ~0UL / v))
		return -EINVAL;
	v *= mul;
	if (v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int bad_number(const char *cmd, const struct cli_opt *o, const char *val)
{
	return cli_usage_error(cmd, "%s: bad value '%s' (a number, %.0f to %.0f)", o->name, val,
			       o->min, o->max);
}

int cli_set_ulong(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	unsigned long v;

	if (cli_parse_count(val, (unsigned long)o->min, (unsigned long)o->max, &v))
		return bad_number(cmd, o, val);
	*(unsigned long *)dst = v;
	return 0;
}

int cli_set_uint(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	unsigned long v;

	if (cli_parse_count(val, (unsigned long)o->min, (unsigned long)o->max, &v) || v > ~0U)
		return bad_number(cmd, o, val);
	*(unsigned int *)dst = (unsigned int)v;
	return 0;
}

int cli_set_u64(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (*val < '0' || *val > '9' || ((v = strtoull(val, &end, 0)), errno) || *end)
		return cli_usage_error(cmd, "%s: bad value '%s' (a number, 0 to %llu)", o->name,
				       val, (unsigned long long)UINT64_MAX);
	*(uint64_t *)dst = v;
	return 0;
}

int cli_set_seconds(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(val, &end);
	if (!*val || *val == '-' || *val == ' ' || errno || end == val || *end || !isfinite(v) ||
	    v < o->min || v > o->max)
		return cli_usage_error(cmd, "%s: bad value '%s' (%g to %g)", o->name, val, o->min,
				       o->max);
	*(double *)dst = v;
	return 0;
}

int cli_set_size(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	unsigned long v, shift = 0;
	char *end;

	errno = 0;
	if (*val < '0' || *val > '9')
		goto bad;
	v = strtoul(val, &end, 0);
	if (errno)
		goto bad;
	switch (*end) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	}
	if (*end || v > (~0UL >> shift))
		goto bad;
	v <<= shift;
	if (v < o->min || v > o->max)
		goto bad;
	*(unsigned long *)dst = v;
	return 0;
bad:
	return cli_usage_error(cmd, "%s: bad value '%s' (bytes, or with K, M, G; %.0f to %.0f)",
			       o->name, val, o->min, o->max);
}

int cli_set_ulist(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	struct cli_ulist *l = dst, out = { .nr = 0 };
	const char *s = val;

	for (;;) {
		size_t n = strcspn(s, ",");
		char item[64];

		if (!n || n >= sizeof(item) || out.nr == CLI_MAX_LIST)
			goto bad;
		memcpy(item, s, n);
		item[n] = '\0';
		if (cli_parse_count(item, (unsigned long)o->min, (unsigned long)o->max,
				    &out.v[out.nr]))
			goto bad;
		out.nr++;
		if (!s[n])
			break;
		s += n + 1;
	}
	*l = out;
	return 0;
bad:
	return cli_usage_error(cmd, "%s: bad value '%s' (N[,N...], at most %d, each %.0f to %.0f)",
			       o->name, val, CLI_MAX_LIST, o->min, o->max);
}

/* The values @o accepts of its vocabulary: [min, max], or all of them. */
static void vocab_range(const struct cli_opt *o, int *min, int *max)
{
	bool all = o->min == 0 && o->max == 0;

	*min = all ? INT_MIN : (int)o->min;
	*max = all ? INT_MAX : (int)o->max;
}

/* The word of @o's vocabulary named @name (@len characters) that @o accepts, or NULL. */
static const struct vml_word *accepted(const struct cli_opt *o, const char *name, size_t len,
				       bool aliases)
{
	const struct vml_word *w = vocab_find(o->vocab, name, len);
	int min, max;

	vocab_range(o, &min, &max);
	if (!w || (w->set && !aliases))
		return NULL;
	if (!w->set)
		return w->value >= min && w->value <= max ? w : NULL;
	for (int b = 0; b < 32; b++)
		if ((w->set & VOCAB_BIT(b)) && (b < min || b > max))
			return NULL;
	return w;
}

static int unknown_word(const char *cmd, const struct cli_opt *o, const char *val,
			const char *item, size_t len, bool aliases)
{
	char list[256];
	int min, max;

	vocab_range(o, &min, &max);
	vocab_list(o->vocab, min, max, aliases, list, sizeof(list));
	if (!o->vocab->noun)
		return cli_usage_error(cmd, "%s: bad value '%s' (%s%s)", o->name, val,
				       aliases ? "a comma list of " : "", list);
	return cli_usage_error(cmd, "%s: unknown %s '%.*s' (%s)", o->name, o->vocab->noun,
			       (int)len, item, list);
}

int cli_set_word(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	const struct vml_word *w = accepted(o, val, strlen(val), false);

	if (!w)
		return unknown_word(cmd, o, val, val, strlen(val), false);
	*(int *)dst = w->value;
	return 0;
}

int cli_set_words(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	unsigned int set = 0;
	const char *s = val;

	for (;;) {
		size_t n = strcspn(s, ",");
		const struct vml_word *w;

		if (!n) {
			char list[256];
			int min, max;

			vocab_range(o, &min, &max);
			vocab_list(o->vocab, min, max, true, list, sizeof(list));
			return cli_usage_error(cmd, "%s: bad value '%s' (a comma list of %s, no "
					       "empty item)", o->name, val, list);
		}
		w = accepted(o, s, n, true);
		if (!w)
			return unknown_word(cmd, o, val, s, n, true);
		set |= w->set ? w->set : VOCAB_BIT(w->value);
		if (!s[n])
			break;
		s += n + 1;
	}
	*(unsigned int *)dst = set;
	return 0;
}

int cli_set_json_path(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	int ret = *val ? json_check_writable(val) : -ENOENT;

	if (ret)
		return cli_usage_error(cmd, "%s: cannot write '%s': %s", o->name, val,
				       strerror(-ret));
	*(const char **)dst = val;
	return 0;
}

int cli_set_plot_path(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	const char *dot = strrchr(val, '.');

	if (!dot || (strcmp(dot, ".png") && strcmp(dot, ".svg")))
		return cli_usage_error(cmd, "%s: bad value '%s' (FILE.png or FILE.svg)", o->name, val);
	return cli_set_json_path(cmd, o, val, dst);
}

const struct cli_opt *cli_find(const struct cli_opt *const *tables, const char *name, size_t n)
{
	for (int t = 0; tables[t]; t++)
		for (const struct cli_opt *o = tables[t]; o->name; o++)
			if (strlen(o->name) == n && !strncmp(name, o->name, n))
				return o;
	return NULL;
}

/* The entry named @n characters of @arg, and the struct its value goes into. */
static const struct cli_opt *find(const struct cli_table *tables, const char *arg, size_t n,
				  void **base)
{
	for (int t = 0; tables[t].opts; t++) {
		for (const struct cli_opt *o = tables[t].opts; o->name; o++) {
			if (strlen(o->name) == n && !strncmp(arg, o->name, n)) {
				*base = tables[t].base;
				return o;
			}
		}
	}
	return NULL;
}

int cli_parse(const char *cmd, const struct cli_opt *const *tables, int argc, char **argv,
	      void *opts, int (*positional)(void *opts, const char *arg), bool *help)
{
	struct cli_table t[8];
	int n = 0;

	while (tables[n]) {
		if (n == 7)
			abort();	/* a command with more tables: raise the bound */
		t[n] = (struct cli_table){ tables[n], opts };
		n++;
	}
	t[n] = (struct cli_table){ NULL, NULL };
	return cli_parse_into(cmd, t, argc, argv, opts, positional, help);
}

int cli_parse_into(const char *cmd, const struct cli_table *tables, int argc, char **argv,
		   void *arg, int (*positional)(void *arg, const char *val), bool *help)
{
	bool options_done = false;

	*help = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL, *eq;
		const struct cli_opt *o;
		void *base;
		int ret;

		if (options_done || a[0] != '-' || !a[1]) {
			ret = positional ? positional(arg, a) :
				cli_usage_error(cmd, "unexpected argument '%s'", a);
			if (ret)
				return ret;
			continue;
		}
		if (!strcmp(a, "--")) {
			options_done = true;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			*help = true;
			return 0;
		}
		eq = strchr(a, '=');
		o = find(tables, a, eq ? (size_t)(eq - a) : strlen(a), &base);
		if (!o)
			return cli_usage_error(cmd, "unknown option '%.*s'",
					       (int)(eq ? eq - a : (long)strlen(a)), a);
		if (!o->arg) {
			if (eq)
				return cli_usage_error(cmd, "%s takes no value", o->name);
		} else if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			return cli_usage_error(cmd, "%s needs a value", o->name);
		}
		ret = o->set(cmd, o, val ? val : "", field(o, base));
		if (ret)
			return ret;
	}
	return 0;
}

/* @text's lines (the cursor is where the first goes); the others @indent spaces in. */
static void print_lines(FILE *f, const char *text, int indent)
{
	for (;;) {
		size_t len = strcspn(text, "\n");

		fprintf(f, "%.*s\n", (int)len, text);
		if (!text[len])
			break;
		text += len + 1;
		fprintf(f, "%*s", indent, "");
	}
}

/* The words of @o's vocabulary that have a help text, under its help: "NAME: help". */
static void print_words(FILE *f, const struct cli_opt *o)
{
	if (!o->vocab)
		return;
	for (const struct vml_word *w = o->vocab->words; w->name; w++) {
		if (!w->help || !accepted(o, w->name, strlen(w->name), true))
			continue;
		fprintf(f, "%*s  %s: ", HELP_COLUMN, "", w->name);
		print_lines(f, w->help, HELP_COLUMN + 4);
	}
}

void cli_print_opts(FILE *f, const struct cli_opt *const *tables)
{
	for (int t = 0; tables[t]; t++) {
		for (const struct cli_opt *o = tables[t]; o->name; o++) {
			char head[64];
			int n = snprintf(head, sizeof(head), "  %s%s%s", o->name, o->arg ? " " : "",
					 o->arg ? o->arg : "");

			fputs(head, f);
			if (n >= HELP_COLUMN - 1)
				fprintf(f, "\n%*s", HELP_COLUMN, "");
			else
				fprintf(f, "%*s", HELP_COLUMN - n, "");
			print_lines(f, o->help, HELP_COLUMN);
			print_words(f, o);
		}
	}
}
