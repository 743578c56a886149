/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record.h - what one read() of a /proc view said, split into records: a
 * maps line, an smaps record (its header line and fields), a numa_maps line,
 * a PROCMAP_QUERY answer, or the smaps_rollup record. The race checker
 * (contract.h) judges records against the states the address space went
 * through; this file only parses them and checks what a record says about
 * itself.
 *
 * Records point into the caller's buffer: they live as long as it does.
 */
#ifndef VML_RACE_RECORD_H
#define VML_RACE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmalock/proc.h"

/* smaps and smaps_rollup fields (docs/kernel.md §3, 3.5); values in kB. */
enum race_field {
	RF_SIZE,
	RF_KERNELPAGESIZE,
	RF_MMUPAGESIZE,
	RF_RSS,
	RF_PSS,
	RF_PSS_DIRTY,
	RF_PSS_ANON,
	RF_PSS_FILE,
	RF_PSS_SHMEM,
	RF_SHARED_CLEAN,
	RF_SHARED_DIRTY,
	RF_PRIVATE_CLEAN,
	RF_PRIVATE_DIRTY,
	RF_REFERENCED,
	RF_ANONYMOUS,
	RF_KSM,
	RF_LAZYFREE,
	RF_ANONHUGEPAGES,
	RF_SHMEMPMDMAPPED,
	RF_FILEPMDMAPPED,
	RF_SHARED_HUGETLB,
	RF_PRIVATE_HUGETLB,
	RF_SWAP,
	RF_SWAPPSS,
	RF_LOCKED,
	RF_THPELIGIBLE,		/* a number, not kB */
	RF_PROTECTIONKEY,	/* a number; only where protection keys are enabled */
	RF__COUNT
};

struct race_rec {
	unsigned long start, end;	/* numa_maps: end is 0, the line does not say */
	const char *text;		/* the header line (a maps line) in the read's buffer */
	size_t len;			/* its length, without '\n' */
	size_t rec_len;			/* the whole record's length, with its '\n's */
	unsigned int read;		/* 0: the first read() of a pair, 1: the second */
	/* numa_maps: the line after the address up to the counts ("default file=/x") */
	const char *id;
	size_t id_len;
	unsigned long pages;		/* numa_maps: the sum of N<node>=; 0 without pages */
	/* smaps, smaps_rollup */
	unsigned long field[RF__COUNT];
	uint32_t has;			/* bit (1 << RF_*) per field present */
	const char *vmflags;		/* the VmFlags line */
	size_t vmflags_len;
	const char *bad;		/* why the record is malformed, or NULL */
};

/*
 * race_parse_read - split the text one read() returned into records.
 * @view: VML_VIEW_MAPS, _SMAPS, _SMAPS_ROLLUP or _NUMA_MAPS.
 * @read: stored in each record (0 or 1).
 * A read returns whole records (seq_file drops a record that does not fit
 * and produces it again next time); a record cut short or a line that
 * belongs to no record ends the parse with a last record whose ->bad says
 * why.
 * Return: the number of records, or -ENOSPC when there are more than @max.
 */
int race_parse_read(enum vml_view view, const char *text, size_t len, unsigned int read,
		    struct race_rec *recs, size_t max);

/*
 * race_fields_bad - what an smaps record (or, @rollup, the smaps_rollup
 * record) says about itself: the field list complete and in the kernel's
 * order, Size = end - start, Rss <= Size, Pss <= Rss, the four
 * Shared/Private counters adding up to Rss, Pss_Dirty <= Pss, Anonymous <= Rss.
 * Return: NULL if consistent, else a reason written into @buf.
 */
const char *race_fields_bad(const struct race_rec *r, bool rollup, char *buf, size_t len);

/*
 * race_rec_from_query - a PROCMAP_QUERY answer as a record: its maps line
 * (what maps would print for the VMA) is formatted into @buf, which the
 * record then points to.
 */
void race_rec_from_query(struct race_rec *r, const struct vml_procmap_query *q,
			 const char *name, char *buf, size_t buflen, unsigned int read);

/* The field's label as smaps prints it ("Pss_Dirty"). */
const char *race_field_name(enum race_field f);

#endif /* VML_RACE_RECORD_H */
