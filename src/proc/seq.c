// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * seq.c - seq_file, following fs/seq_file.c seq_read_iter closely: the
 * exact moments at which records are produced, dropped and re-produced are
 * what make /proc reads tear the way they do.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "platform/platform.h"
#include "proc/seq.h"
#include "util/alloc.h"
#include "util/compiler.h"
#include "util/debug.h"

#define SEQ_PAGE_SIZE 4096

int seq_open(struct seq_file *m, const struct seq_operations *op, void *private)
{
	*m = (struct seq_file){ .op = op, .private = private };
	return 0;
}

void seq_release(struct seq_file *m)
{
	vml_free(m->buf);
	m->buf = NULL;
}

void seq_rewind(struct seq_file *m)
{
	m->index = 0;
	m->count = 0;
	m->from = 0;
}

bool seq_has_overflowed(const struct seq_file *m)
{
	return m->count == m->size;
}

static void seq_set_overflow(struct seq_file *m)
{
	m->count = m->size;
}

void seq_write(struct seq_file *m, const void *data, size_t len)
{
	if (m->count + len < m->size) {
		memcpy(m->buf + m->count, data, len);
		m->count += len;
	} else {
		seq_set_overflow(m);
	}
}

void seq_putc(struct seq_file *m, char c)
{
	if (m->count >= m->size)
		return;
	m->buf[m->count++] = c;
}

void seq_puts(struct seq_file *m, const char *s)
{
	seq_write(m, s, strlen(s));
}

void seq_printf(struct seq_file *m, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (m->count < m->size) {
		va_start(ap, fmt);
		len = vsnprintf(m->buf + m->count, m->size - m->count, fmt, ap);
		va_end(ap);
		if (len >= 0 && m->count + (size_t)len < m->size) {
			m->count += (size_t)len;
			return;
		}
	}
	seq_set_overflow(m);
}

static void seq_delim(struct seq_file *m, const char *delim)
{
	if (delim && delim[0]) {
		if (delim[1] == 0)
			seq_putc(m, delim[0]);
		else
			seq_puts(m, delim);
	}
}

/* Digits are produced by hand: these run for every field of every record. */
void seq_put_hex_ll(struct seq_file *m, const char *delim, unsigned long long v, unsigned int width)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[32];
	unsigned int len = 0;

	seq_delim(m, delim);
	do {
		tmp[sizeof(tmp) - 1 - len++] = hex[v & 0xf];
		v >>= 4;
	} while (v);
	while (len < width && len < sizeof(tmp))
		tmp[sizeof(tmp) - 1 - len++] = '0';
	seq_write(m, tmp + sizeof(tmp) - len, len);
}

void seq_put_decimal_ull_width(struct seq_file *m, const char *delim, unsigned long long v,
			       unsigned int width)
{
	char tmp[32];
	unsigned int len = 0;

	seq_delim(m, delim);
	do {
		tmp[sizeof(tmp) - 1 - len++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (len < width && len < sizeof(tmp))
		tmp[sizeof(tmp) - 1 - len++] = ' ';
	seq_write(m, tmp + sizeof(tmp) - len, len);
}

void seq_put_decimal_ull(struct seq_file *m, const char *delim, unsigned long long v)
{
	seq_put_decimal_ull_width(m, delim, v, 0);
}

void seq_setwidth(struct seq_file *m, size_t size)
{
	m->pad_until = m->count + size;
}

void seq_pad(struct seq_file *m, char c)
{
	size_t size;

	if (m->pad_until > m->count) {
		size = m->pad_until - m->count;
		if (size + m->count > m->size) {
			seq_set_overflow(m);
			return;
		}
		memset(m->buf + m->count, ' ', size);
		m->count += size;
	}
	if (c)
		seq_putc(m, c);
}

void seq_escape(struct seq_file *m, const char *s, const char *esc)
{
	for (; *s; s++) {
		if (strchr(esc, *s)) {
			char tmp[5];

			snprintf(tmp, sizeof(tmp), "\\%03o", (unsigned char)*s);
			seq_puts(m, tmp);
		} else {
			seq_putc(m, *s);
		}
	}
}

/*
 * Show one record, then spend m->record_ns more of CPU time before the next:
 * a calibration that makes a reader's lock hold as long as the live
 * kernel's for the same records (see vml_reader_set_record_cost and
 * util/debug.h).
 */
static int seq_show(struct seq_file *m, void *p)
{
	int err = m->op->show(m, p);

	if (unlikely(m->record_ns))
		plat_charge_ns(m->record_ns, PLAT_KERNEL);
	return err;
}

static int seq_buf_alloc(struct seq_file *m, size_t size)
{
	vml_free(m->buf);
	m->buf = vml_malloc(size);
	m->size = m->buf ? size : 0;
	return m->buf ? 0 : -ENOMEM;
}

ssize_t seq_read(struct seq_file *m, char *out, size_t len)
{
	size_t copied = 0, n;
	void *p = NULL;
	int err = 0;

	if (!len)
		return 0;
	if (!m->buf && seq_buf_alloc(m, SEQ_PAGE_SIZE))
		return -ENOMEM;

	/* Output left over from the last read() goes first. */
	if (m->count) {
		n = m->count < len ? m->count : len;
		memcpy(out, m->buf + m->from, n);
		m->count -= n;
		m->from += n;
		copied += n;
		if (copied == len || m->count)
			goto done;
	}

	/* At least one non-empty record in the buffer. */
	m->from = 0;
	err = m->op->start(m, &m->index, &p);
	for (;;) {
		if (err) {
			p = NULL;
			break;
		}
		if (!p)
			break;
		err = seq_show(m, p);
		if (err < 0)
			break;
		if (err)
			m->count = 0;
		if (!m->count) {
			err = m->op->next(m, p, &m->index, &p);
			continue;
		}
		if (!seq_has_overflowed(m))
			goto fill;
		/* One record bigger than the buffer: start over with a bigger one. */
		m->op->stop(m, p);
		m->count = 0;
		if (seq_buf_alloc(m, m->size << 1))
			return copied ? (ssize_t)copied : -ENOMEM;
		p = NULL;
		err = m->op->start(m, &m->index, &p);
	}
	/* EOF or an error */
	m->op->stop(m, p);
	m->count = 0;
	goto done;

fill:
	/* More records while they fit and the caller wants more. */
	for (;;) {
		size_t offs = m->count;
		int64_t pos = m->index;

		/* An error here ends the fill quietly, as in the kernel: what fitted is returned. */
		if (m->op->next(m, p, &m->index, &p))
			p = NULL;
		if (pos == m->index)
			m->index++;	/* a buggy next(); the kernel does the same */
		if (!p)
			break;
		if (m->count >= len - copied)
			break;
		err = seq_show(m, p);
		if (err > 0) {
			m->count = offs;
		} else if (err || seq_has_overflowed(m)) {
			m->count = offs;
			break;
		}
	}
	m->op->stop(m, p);
	n = m->count < len - copied ? m->count : len - copied;
	memcpy(out + copied, m->buf, n);
	copied += n;
	m->count -= n;
	m->from = n;
done:
	if (!copied)
		return err;
	return (ssize_t)copied;
}
