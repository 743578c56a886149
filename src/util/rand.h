/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rand.h - a small deterministic PRNG (splitmix64 seeded xorshift), one stream per thread. */
#ifndef VML_UTIL_RAND_H
#define VML_UTIL_RAND_H

#include <stdint.h>

struct vml_rand {
	uint64_t s;
};

static inline uint64_t vml_rand_next(struct vml_rand *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0. */
static inline uint64_t vml_rand_below(struct vml_rand *r, uint64_t n)
{
	return vml_rand_next(r) % n;
}

/* Derive an independent stream, e.g. one per thread from one printed seed. */
static inline struct vml_rand vml_rand_init(uint64_t seed, uint64_t stream)
{
	struct vml_rand r = { .s = seed ^ (stream * 0xd1b54a32d192ed03ULL) };

	vml_rand_next(&r);
	return r;
}

#endif /* VML_UTIL_RAND_H */
