// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * opts.c - the option tables' parser, checkers and help writer (opts.h).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "host/host.h"
#include "spaces/target.h"
#include "util/json.h"

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

/* "a, b or c" from a word list. */
static void word_list(const char *const *words, char *buf, size_t len)
{
	size_t used = 0, n = 0;

	while (words[n])
		n++;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 i == 0 ? "" : i + 1 == n ? " or " : ", ", words[i]);
}

/* The index of @val in @o->words, or a usage error naming @noun. */
static int choose(const char *cmd, const struct cli_opt *o, const char *noun, const char *val,
		  int *out)
{
	char list[256];

	for (int i = 0; o->words[i]; i++) {
		if (!strcmp(val, o->words[i])) {
			*out = i;
			return 0;
		}
	}
	word_list(o->words, list, sizeof(list));
	return cli_usage_error(cmd, "%s: unknown %s '%s' (%s)", o->name, noun, val, list);
}

int cli_set_choice(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	return choose(cmd, o, "value", val, (int *)dst);
}

/* words: any of "model", "live", "both" */
int cli_set_targets(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	int i, ret = choose(cmd, o, "target", val, &i);

	if (ret)
		return ret;
	*(unsigned int *)dst = !strcmp(o->words[i], "model") ? CLI_MODEL :
			       !strcmp(o->words[i], "live") ? CLI_LIVE : CLI_MODEL | CLI_LIVE;
	return 0;
}

static unsigned int lock_bits(const char *word)
{
	return !strcmp(word, "mmap") ? CLI_LOCK_MMAP :
	       !strcmp(word, "vma") ? CLI_LOCK_VMA :
	       !strcmp(word, "vma-strict") ? CLI_LOCK_VMA_STRICT :
	       !strcmp(word, "vma-recheck") ? CLI_LOCK_VMA_RECHECK :
	       CLI_LOCK_MMAP | CLI_LOCK_VMA;	/* both */
}

/*
 * words: any of "mmap", "vma", "vma-strict", "vma-recheck", "both" (mmap and
 * vma). A command whose words include "vma-strict" takes a comma list.
 */
int cli_set_locks(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	unsigned int set = 0;
	bool list = false;
	const char *s = val;
	int i, ret;

	for (i = 0; o->words[i]; i++)
		list |= !strcmp(o->words[i], "vma-strict");
	if (!list) {
		ret = choose(cmd, o, "policy", val, &i);
		if (!ret)
			*(unsigned int *)dst = lock_bits(o->words[i]);
		return ret;
	}
	for (;;) {
		size_t n = strcspn(s, ",");
		char item[32];

		if (!n || n >= sizeof(item))
			return cli_usage_error(cmd, "%s: bad value '%s' (a comma list of policies, "
					       "no empty item)", o->name, val);
		memcpy(item, s, n);
		item[n] = '\0';
		ret = choose(cmd, o, "policy", item, &i);
		if (ret)
			return ret;
		set |= lock_bits(item);
		if (!s[n])
			break;
		s += n + 1;
	}
	*(unsigned int *)dst = set;
	return 0;
}

/* A comma list of words: bit i set for each item that is words[i]. */
int cli_set_wordset(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	unsigned int set = 0;
	const char *s = val;
	char list[256];

	for (;;) {
		size_t n = strcspn(s, ",");
		int i;

		for (i = 0; o->words[i]; i++)
			if (strlen(o->words[i]) == n && !strncmp(s, o->words[i], n))
				break;
		if (!n || !o->words[i])
			goto bad;
		set |= 1u << i;
		if (!s[n])
			break;
		s += n + 1;
	}
	*(unsigned int *)dst = set;
	return 0;
bad:
	word_list(o->words, list, sizeof(list));
	return cli_usage_error(cmd, "%s: bad value '%s' (a comma list of %s)", o->name, val, list);
}

int cli_set_view(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	if (target_view_parse(val, (enum vml_view *)dst))
		return cli_usage_error(cmd, "%s: unknown view '%s' (maps, smaps, smaps_rollup, "
				       "numa_maps, query)", o->name, val);
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

int cli_set_profile(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	char err[512];

	(void)dst;
	if (host_profile_use_file(val, err, sizeof(err))) {
		fprintf(stderr, "vmalock %s: %s: %s\n", cmd, o->name, err);
		return EXIT_USAGE;
	}
	return 0;
}

/* words: "pre", "post" (enum vml_i_mmap_order by name) */
static int set_i_mmap_order(const char *cmd, const struct cli_opt *o, const char *val, void *dst)
{
	int i, ret = choose(cmd, o, "order", val, &i);

	(void)dst;
	if (!ret)
		host_set_i_mmap_order(i == 0 ? VML_I_MMAP_PRE : VML_I_MMAP_POST);
	return ret;
}

/* words: "fast", "per-page" */
static int set_shmem_swap_usage(const char *cmd, const struct cli_opt *o, const char *val,
				void *dst)
{
	int i, ret = choose(cmd, o, "value", val, &i);

	(void)dst;
	if (!ret)
		host_set_shmem_swap_usage(i == 0 ? VML_SHMEM_SWAP_FAST : VML_SHMEM_SWAP_PER_PAGE);
	return ret;
}

static const char *const i_mmap_order_words[] = { "pre", "post", NULL };
static const char *const shmem_swap_usage_words[] = { "fast", "per-page", NULL };

const struct cli_opt cli_common_opts[] = {
	{ "--profile", "FILE", cli_set_profile, 0, 0, 0, NULL,
	  "run the model as on the saved host profile FILE (vmalock host\n"
	  "--json) instead of this host's" },
	{ "--i-mmap-order", "pre|post", set_i_mmap_order, 0, 0, 0, i_mmap_order_words,
	  "the model's mmap stores a new file mapping in the mm's tree\n"
	  "inside its file's i_mmap_rwsem write section (pre: before\n"
	  "Linux 6.5, seed 001) or after it (post) [post; bench\n"
	  "exec-churn: both]" },
	{ "--shmem-swap-usage", "fast|per-page", set_shmem_swap_usage, 0, 0, 0,
	  shmem_swap_usage_words,
	  "how the model's smaps counts shmem swap: the object's\n"
	  "counter or a page-cache walk where they apply (fast), or a\n"
	  "lookup per empty page (per-page: before Linux 4.5, seed 004)\n"
	  "[fast; bench shmem-smaps: both]" },
	CLI_OPT_END,
};

static const struct cli_opt *find(const struct cli_opt *const *tables, const char *arg,
				  size_t n)
{
	for (int t = 0; tables[t]; t++)
		for (const struct cli_opt *o = tables[t]; o->name; o++)
			if (strlen(o->name) == n && !strncmp(arg, o->name, n))
				return o;
	return NULL;
}

int cli_parse(const char *cmd, const struct cli_opt *const *tables, int argc, char **argv,
	      void *opts, int (*positional)(void *opts, const char *arg), bool *help)
{
	bool options_done = false;

	*help = false;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = NULL, *eq;
		const struct cli_opt *o;
		int ret;

		if (options_done || arg[0] != '-' || !arg[1]) {
			ret = positional ? positional(opts, arg) :
				cli_usage_error(cmd, "unexpected argument '%s'", arg);
			if (ret)
				return ret;
			continue;
		}
		if (!strcmp(arg, "--")) {
			options_done = true;
			continue;
		}
		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			*help = true;
			return 0;
		}
		eq = strchr(arg, '=');
		o = find(tables, arg, eq ? (size_t)(eq - arg) : strlen(arg));
		if (!o)
			return cli_usage_error(cmd, "unknown option '%.*s'",
					       (int)(eq ? eq - arg : (long)strlen(arg)), arg);
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
		ret = o->set(cmd, o, val ? val : "", field(o, opts));
		if (ret)
			return ret;
	}
	return 0;
}

void cli_print_opts(FILE *f, const struct cli_opt *const *tables)
{
	for (int t = 0; tables[t]; t++) {
		for (const struct cli_opt *o = tables[t]; o->name; o++) {
			char head[64];
			const char *h = o->help;
			int n = snprintf(head, sizeof(head), "  %s%s%s", o->name, o->arg ? " " : "",
					 o->arg ? o->arg : "");

			fputs(head, f);
			if (n >= HELP_COLUMN - 1)
				fprintf(f, "\n%*s", HELP_COLUMN, "");
			else
				fprintf(f, "%*s", HELP_COLUMN - n, "");
			for (;;) {
				size_t len = strcspn(h, "\n");

				fprintf(f, "%.*s\n", (int)len, h);
				if (!h[len])
					break;
				h += len + 1;
				fprintf(f, "%*s", HELP_COLUMN, "");
			}
		}
	}
}
