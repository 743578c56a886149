// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * stats.c - quantiles of latency histograms, and medians (and minima,
 * maxima) over a row's samples: every scenario's table reduces its samples
 * here.
 *
 * The histogram (struct lat_hist, spaces/child_proto.h) is shared with the
 * live child, which fills it inside its own process; its buckets are less
 * than 0.8% wide, so a quantile read from it is within 0.4% of the exact
 * value, and the maximum is exact.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util/alloc.h"

struct lat_hist *lat_hist_new(void)
{
	struct lat_hist *h = vml_malloc(sizeof(*h));

	if (h)
		lat_hist_init(h);
	return h;
}

void lat_hist_merge(struct lat_hist *dst, const struct lat_hist *src)
{
	if (!src->count)
		return;
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
	if (src->min_ns < dst->min_ns)
		dst->min_ns = src->min_ns;
	if (src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	for (unsigned int i = 0; i < LAT_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
}

double lat_hist_quantile_ns(const struct lat_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0;
	if (q >= 1)
		return (double)h->max_ns;
	rank = (uint64_t)ceil(q * (double)h->count);
	if (rank < 1)
		rank = 1;
	for (unsigned int i = 0; i < LAT_HIST_BUCKETS; i++) {
		uint64_t width, low;
		double mid;

		seen += h->bucket[i];
		if (seen < rank)
			continue;
		low = lat_hist_bucket_low(i, &width);
		mid = (double)low + (double)(width - 1) / 2;
		if (mid < (double)h->min_ns)
			mid = (double)h->min_ns;
		if (mid > (double)h->max_ns)
			mid = (double)h->max_ns;
		return mid;
	}
	return (double)h->max_ns;
}

double lat_hist_mean_upto_ns(const struct lat_hist *h, double q)
{
	uint64_t rank, seen = 0;
	double sum = 0;

	if (!h->count)
		return NAN;
	rank = (uint64_t)ceil(q * (double)h->count);
	if (rank < 1)
		rank = 1;
	for (unsigned int i = 0; i < LAT_HIST_BUCKETS && seen < rank; i++) {
		uint64_t width, low, take = h->bucket[i];

		if (!take)
			continue;
		if (take > rank - seen)
			take = rank - seen;
		low = lat_hist_bucket_low(i, &width);
		sum += (double)take * ((double)low + (double)(width - 1) / 2);
		seen += take;
	}
	return sum / (double)seen;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double stat_median(const double *v, size_t n)
{
	double *c, m;

	if (!n)
		return 0;
	c = vml_malloc(n * sizeof(*c));
	if (!c)
		return NAN;
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	/* run-proc-vs-map.sh's median: the middle one, or the mean of the two middle ones */
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	vml_free(c);
	return m;
}

double stat_of(enum stat_reduce how, const void *samples, size_t n, size_t size, size_t off,
	       enum stat_member type)
{
	double *v = vml_malloc((n + 1) * sizeof(*v)), x;
	size_t k = 0;

	if (!v)
		return NAN;
	for (size_t i = 0; i < n; i++) {
		const char *p = (const char *)samples + i * size + off;

		if (type == STAT_U64) {
			if (*(const uint64_t *)p == UINT64_MAX)
				continue;
			x = (double)*(const uint64_t *)p;
		} else if (type == STAT_UINT) {
			x = (double)*(const unsigned int *)p;
		} else {
			x = *(const double *)p;
		}
		if (isnan(x) && how != STAT_MEDIAN_NAN_SLOWEST)
			continue;
		v[k++] = isnan(x) ? INFINITY : x;
	}
	x = !k ? NAN : how == STAT_MIN ? stat_min(v, k) : how == STAT_MAX ? stat_max(v, k) :
	    stat_median(v, k);
	vml_free(v);
	return x;
}

double stat_min(const double *v, size_t n)
{
	double m = n ? v[0] : 0;

	for (size_t i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

double stat_max(const double *v, size_t n)
{
	double m = n ? v[0] : 0;

	for (size_t i = 1; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}
