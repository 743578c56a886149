/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * seq.h - a seq_file (fs/seq_file.c seq_read_iter) for the /proc views.
 *
 * One read() call: start() positions the iterator at m->index, show()
 * formats records into a page-sized buffer, next() advances, stop()
 * releases whatever start() locked. A record that does not fit is dropped
 * (its next() already ran: the view's start() must step back, see
 * docs/kernel.md §2); a record larger than the whole buffer doubles it.
 * Output not yet copied out stays in the buffer for the next read().
 */
#ifndef VML_PROC_SEQ_H
#define VML_PROC_SEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct seq_file;

/*
 * A view's iteration. Errors are negative errnos; a record pointer is set
 * only on success (NULL: no record, the end).
 */
struct seq_operations {
	/* 0 with the record at *@pos in *@v, or -errno. */
	int (*start)(struct seq_file *m, int64_t *pos, void **v);
	/* Release what start() took; @v is the last record, or NULL. */
	void (*stop)(struct seq_file *m, void *v);
	/* 0 with the record after @v in *@next (*@pos advanced), or -errno. */
	int (*next)(struct seq_file *m, void *v, int64_t *pos, void **next);
	/* 0, a positive value to drop the record, or -errno. */
	int (*show)(struct seq_file *m, void *v);
};

struct seq_file {
	char *buf;
	size_t size;		/* buffer size: PAGE_SIZE, doubled for huge records */
	size_t from;		/* start of the not-yet-copied output */
	size_t count;		/* bytes of output in buf */
	size_t pad_until;	/* seq_setwidth target */
	int64_t index;		/* the iterator position (an address for the VMA views) */
	uint64_t record_ns;	/* extra CPU time per record shown: a calibration, 0 = none */
	const struct seq_operations *op;
	void *private;
};

int seq_open(struct seq_file *m, const struct seq_operations *op, void *private);
void seq_release(struct seq_file *m);
/* read(2): bytes copied into @out, 0 at EOF, or -errno. */
ssize_t seq_read(struct seq_file *m, char *out, size_t len);
/* lseek(fd, 0, SEEK_SET) */
void seq_rewind(struct seq_file *m);

bool seq_has_overflowed(const struct seq_file *m);
void seq_putc(struct seq_file *m, char c);
void seq_puts(struct seq_file *m, const char *s);
void seq_write(struct seq_file *m, const void *data, size_t len);
__attribute__((format(printf, 2, 3)))
void seq_printf(struct seq_file *m, const char *fmt, ...);
/* @delim, then @v in lowercase hex, zero-padded to at least @width digits. */
void seq_put_hex_ll(struct seq_file *m, const char *delim, unsigned long long v, unsigned int width);
/* @delim, then @v in decimal, space-padded to at least @width characters. */
void seq_put_decimal_ull_width(struct seq_file *m, const char *delim, unsigned long long v,
			       unsigned int width);
void seq_put_decimal_ull(struct seq_file *m, const char *delim, unsigned long long v);
/* Pad with spaces up to the width set by seq_setwidth(), then put @c (if non-zero). */
void seq_setwidth(struct seq_file *m, size_t size);
void seq_pad(struct seq_file *m, char c);
/* A path as d_path prints it, escaping the characters in @esc as \ooo. */
void seq_escape(struct seq_file *m, const char *s, const char *esc);

#endif /* VML_PROC_SEQ_H */
