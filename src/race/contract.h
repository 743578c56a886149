/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * contract.h - what a /proc reader racing with a modifier may report
 * (docs/kernel.md §2 and §9), as a checker.
 *
 * The modifier cycles through a fixed list of states (the base layout, the
 * layout after each step, back to the base). Each state was captured while
 * nothing moved: its maps (the VMAs), and where the target offers them its
 * smaps, numa_maps and smaps_rollup, plus the pages of the tracked range
 * that are resident in it (simulated, modify.h, and checked against smaps).
 *
 * The contract, for a stream of records (two consecutive reads of a view, or
 * a walk of PROCMAP_QUERY answers) starting at position pos0:
 *
 *   Each record is a VMA as it was in some state (never half-updated), and
 *   it is the first VMA that ends after the previous record's end (pos0 for
 *   the first) in some state: the reader resumes from the end of what it
 *   showed, and in between the modifier may have gone round the cycle any
 *   number of times. That allows a VMA to be shown twice - an old form, then
 *   a new form that starts before where the old one ended (split pieces,
 *   then the merged VMA) - and forbids every other overlap, every VMA that
 *   existed throughout but was skipped, and every gap that existed at no
 *   time. A view read to its end must end with the last VMA of some state.
 *
 *   Views whose read() holds mmap_lock for the whole call (the `mmap`
 *   policy; smaps and numa_maps on 6.18) promise more: all records of one
 *   read come from one state (--per-read).
 *
 *   On the simulated machine, where every step happens at a known instant
 *   and one task runs at a time, each record is also checked against the
 *   layout at the moment it was looked up (race_check_lookups): a VMA that
 *   was there, unchanged, all the while the reader looked up what follows
 *   the previous record must not be skipped. States alone cannot tell that
 *   from a correct read: the skip shows a layout that did exist, only
 *   earlier (a reader that resumes from a stale iterator).
 *
 *   smaps records must be consistent in themselves (record.h) and show a
 *   VmFlags line and an Rss the VMA had in some state; numa_maps page counts
 *   likewise. smaps_rollup totals are a walk over the VMAs, each taken in
 *   some state, each page counted at most once: its Rss lies between the sum
 *   over pages of their least and their most residency across states.
 *
 * A contract is built once (single-threaded), then only read: any number of
 * reader threads may check against it concurrently.
 */
#ifndef VML_RACE_CONTRACT_H
#define VML_RACE_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "race/record.h"

#define RACE_MAX_STATES 32

/* What a record (or a read) broke; RACE_OK when nothing. */
enum race_rule {
	RACE_OK = 0,
	RACE_MALFORMED,		/* a record cut short or out of format */
	RACE_UNKNOWN,		/* a record that is no VMA of any state (half-updated) */
	RACE_BACKWARDS,		/* ends at or before the previous record's end */
	RACE_OVERLAP,		/* overlaps the previous record and is not its new form */
	RACE_MISSING,		/* a VMA that existed in every state was skipped */
	RACE_FAKE_GAP,		/* a gap that existed at no time */
	RACE_TORN_READ,		/* per-read views: one read mixes states */
	RACE_FIELDS,		/* smaps/numa_maps/rollup values inconsistent or impossible */
	RACE_TOTALS,		/* smaps_rollup totals no walk over the states can give */
	RACE_DOUBLE_COUNT,	/* dontneed: more pages counted than were ever mapped */
	RACE_SKIPPED,		/* simulated: a VMA there all the while its slot was looked up */
	RACE__RULES
};

/* Observations the contract allows, counted to show what the race reached. */
enum race_note {
	RACE_NOTE_DUP_IN_READ,		/* a VMA shown twice within one read */
	RACE_NOTE_DUP_ACROSS_READS,	/* ... the second time in the next read */
	RACE_NOTE_CHANGED,		/* a read that saw a state other than the base */
	RACE__NOTES
};

struct race_verdict {
	enum race_rule rule;
	size_t rec;			/* the record that broke it */
	bool note[RACE__NOTES];
	char why[400];
};

struct race_contract;

/*
 * race_contract_create - an empty contract tracking residency of the pages
 * of [@track_lo, @track_hi) (page-aligned).
 * Return: 0 or -ENOMEM.
 */
int race_contract_create(unsigned long track_lo, unsigned long track_hi,
			 struct race_contract **out);

/*
 * race_contract_add_state - one state, as captured while nothing moved.
 * @maps: the whole maps view (required).
 * @smaps, @numa, @rollup: the whole view, or NULL where the target lacks it.
 * @resident: one byte per page of the tracked range, nonzero if resident.
 * States must be added in the modifier's order, the base state first.
 * Return: 0; -ENOMEM; -E2BIG (too many states); -EINVAL with @why filled in
 *         when the texts do not parse or disagree with @resident (the
 *         residency simulation is wrong for this target).
 */
int race_contract_add_state(struct race_contract *c, const char *maps, const char *smaps,
			    const char *numa, const char *rollup, const unsigned char *resident,
			    char *why, size_t whylen);

/* Done adding: index the VMAs. Return: 0, -ENOMEM, or -EINVAL (@why) if inconsistent. */
int race_contract_finish(struct race_contract *c, char *why, size_t whylen);
void race_contract_destroy(struct race_contract *c);

size_t race_contract_nr_states(const struct race_contract *c);

/*
 * race_check_records - judge a stream of records (maps, smaps, numa_maps,
 * query) against the contract.
 * @pos0: the position the stream starts from (0 for a view read from the
 *        start; the first query's address for a query walk).
 * @per_read: all records with the same ->read must come from one state.
 * @eof: the reads ended at end of file: the last record must have been the
 *       last VMA in some state.
 * Context: the contract is finished; any thread.
 */
void race_check_records(const struct race_contract *c, enum vml_view view, bool per_read,
			unsigned long pos0, const struct race_rec *recs, size_t nr, bool eof,
			struct race_verdict *v);

/* race_check_rollup - judge one smaps_rollup read (@nr records: 1 expected). */
void race_check_rollup(const struct race_contract *c, const struct race_rec *recs, size_t nr,
		       struct race_verdict *v);

/*
 * The temporal check (simulated runs only: real threads have no common
 * instant). The modifier keeps a clock: 2m between system calls after m ops
 * of its cycle (the layout is state m mod nr_states), 2m + 1 while op m is
 * under way (the layout is state m, state m + 1, or what the op passes
 * through between them).
 */
struct race_window {
	uint64_t lo, hi;	/* the clock before the lookup began, and after it ended */
};

/* Where one op of the cycle may replace VMAs: up to two address ranges. */
struct race_reach {
	unsigned long lo[2], hi[2];	/* [lo, hi); an unused one has lo == hi */
};

/*
 * race_contract_set_cycle - what each op of the cycle may replace: op k
 * leads from state k to state k + 1 (mod nr_states); a VMA in both states
 * and outside @reach[k] is taken to be there throughout op k.
 * Context: after race_contract_finish; single-threaded.
 * Return: 0, or -EINVAL unless @nr_ops is the number of states.
 */
int race_contract_set_cycle(struct race_contract *c, const struct race_reach *reach,
			    size_t nr_ops);

/* Is [@start, @end) a VMA of some state? */
bool race_contract_knows(const struct race_contract *c, unsigned long start, unsigned long end);

/*
 * race_check_lookups - judge a stream race_check_records() passed against
 * the layout at the moment each record was looked up. Record i was looked
 * up, from the previous record's end (@pos0 for the first), at some
 * moment of @win[i]; then it is the first VMA ending after that address
 * in the layout of that moment, so no VMA that was there, unchanged,
 * throughout @win[i] and ends after the address may start before the
 * record. @end, when not NULL, is the window of the lookup that found
 * nothing after the last record (end of file). Without a cycle
 * (race_contract_set_cycle) nothing is checked.
 * Context: the contract is finished; any thread.
 */
void race_check_lookups(const struct race_contract *c, enum vml_view view, unsigned long pos0,
			const struct race_rec *recs, const struct race_window *win, size_t nr,
			const struct race_window *end, struct race_verdict *v);

const char *race_rule_name(enum race_rule rule);
const char *race_note_name(enum race_note note);

#endif /* VML_RACE_CONTRACT_H */
