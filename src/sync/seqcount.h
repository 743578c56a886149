/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * seqcount.h - a sequence count: even = no writer, odd = a writer is inside.
 * Writers are serialised by an outer lock (for mm_lock_seq: mmap_lock write).
 * Readers speculate: read_begin, read data, then read_retry tells whether a
 * writer ran meanwhile.
 *
 * Ordering: write_begin is followed by the writer's stores (the increment is
 * a release RMW and readers' data loads must not be reordered before it, so
 * readers load the count with acquire and recheck with acquire after their
 * data loads); write_end is a release store that pairs with the acquire in
 * read_begin/read_retry and in vma_start_read's recheck.
 */
#ifndef VML_SYNC_SEQCOUNT_H
#define VML_SYNC_SEQCOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "sync/atomic.h"

struct seqcount {
	_Atomic uint32_t sequence;	/* [atomic] written only by the lock holder */
};

static inline void seqcount_init(struct seqcount *s)
{
	store_relaxed(&s->sequence, 0);
}

/* Context: caller holds the writer lock. Makes the count odd. */
static inline void seqcount_write_begin(struct seqcount *s)
{
	/* acq_rel: its acquire half keeps the writer's stores after it; pairs with seqcount_retry's re-read */
	fetch_add_acq_rel(&s->sequence, 1);
}

/* Context: caller holds the writer lock. Makes the count even; pairs with read_begin/read_retry. */
static inline void seqcount_write_end(struct seqcount *s)
{
	/* release: pairs with the acquire in seqcount_raw_read (read_begin, retry, vma_start_read) */
	fetch_add_release(&s->sequence, 1);
}

/* The raw value: odd while a writer is inside. Acquire, pairs with write_end. */
static inline uint32_t seqcount_raw_read(const struct seqcount *s)
{
	/* acquire: pairs with the release in seqcount_write_end (and write_begin's) */
	return load_acquire((_Atomic uint32_t *)&s->sequence);
}

/* Speculation start: fails (returns false) if a writer is inside. */
static inline bool seqcount_try_begin(const struct seqcount *s, uint32_t *seq)
{
	*seq = seqcount_raw_read(s);
	return !(*seq & 1);
}

/* True if a writer entered since try_begin returned @seq. */
static inline bool seqcount_retry(const struct seqcount *s, uint32_t seq)
{
	return seqcount_raw_read(s) != seq;
}

#endif /* VML_SYNC_SEQCOUNT_H */
