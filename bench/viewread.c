// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * viewread.c - read a whole /proc view the way a monitoring agent does:
 * page-sized read() calls until end of file, then rewind. On the model
 * through vml_reader (with a lock policy), on the live kernel through
 * /proc/PID/<view>; `query` is PROCMAP_QUERY over every VMA instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"
#include "sync/atomic.h"
#include "util/alloc.h"
#include "util/clock.h"

/* include/uapi/linux/fs.h; struct vml_procmap_query has the kernel's layout. */
#define VML_PROCMAP_QUERY_IOCTL _IOWR('f', 17, struct vml_procmap_query)

static int vr_init(struct view_reader *vr, enum vml_view view)
{
	memset(vr, 0, sizeof(*vr));
	vr->view = view;
	vr->fd = -1;
	vr->buf = vml_malloc(view == TARGET_VIEW_QUERY ? PATH_MAX : BENCH_READ_CHUNK);
	return vr->buf ? 0 : -ENOMEM;
}

int view_reader_open_model(struct view_reader *vr, struct vml_mm *mm, enum vml_view view,
			   enum vml_lock_policy lock)
{
	int ret = vr_init(vr, view);

	if (ret)
		return ret;
	vr->mm = mm;
	vr->lock = lock;
	if (view != TARGET_VIEW_QUERY)
		ret = vml_reader_open(mm, view, lock, &vr->r);
	if (ret)
		view_reader_close(vr);
	return ret;
}

int view_reader_open_live(struct view_reader *vr, pid_t pid, enum vml_view view)
{
	char path[64];
	int ret = vr_init(vr, view);

	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid,
		 view == TARGET_VIEW_QUERY ? "maps" : target_view_name(view));
	vr->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (vr->fd < 0) {
		ret = -errno;
		view_reader_close(vr);
	}
	return ret;
}

static int vr_query(struct view_reader *vr, struct vml_procmap_query *q)
{
	if (vr->fd >= 0)
		return ioctl(vr->fd, VML_PROCMAP_QUERY_IOCTL, q) ? -errno : 0;
	return vml_procmap_query(vr->mm, vr->lock, q);
}

/* PROCMAP_QUERY from address 0 on, one VMA (with its name) per call. */
static long query_pass(struct view_reader *vr, const atomic_bool *stop)
{
	uint64_t addr = 0;
	long n = 0;

	for (;;) {
		struct vml_procmap_query q = {
			.size = sizeof(q),
			.query_flags = VML_PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
			.query_addr = addr,
			.vma_name_size = PATH_MAX,
			.vma_name_addr = (uintptr_t)vr->buf,
		};
		int ret = vr_query(vr, &q);

		if (ret == -ENOENT)
			return n;
		if (ret)
			return ret;
		n++;
		addr = q.vma_end;
		if (stop && load_relaxed(stop))
			return n;
	}
}

/* A read()'s text: the records' "Rss:" lines, and their sum in pages. */
static void rss_of(const char *buf, size_t len, unsigned long *records, unsigned long *pages)
{
	static const char key[] = "\nRss:";
	const char *p = buf, *end = buf + len;

	*records = *pages = 0;
	while (p < end) {
		const char *hit = memmem(p, (size_t)(end - p), key, sizeof(key) - 1);
		unsigned long kb = 0;

		if (!hit)
			break;
		for (p = hit + sizeof(key) - 1; p < end && *p == ' '; p++)
			;
		for (; p < end && *p >= '0' && *p <= '9'; p++)
			kb = kb * 10 + (unsigned long)(*p - '0');
		(*records)++;
		*pages += kb / (unsigned long)(getpagesize() / 1024);
	}
}

static void walk_sample(struct walk_sampler *ws, uint64_t cpu_ns, const char *buf, size_t len)
{
	unsigned long records, pages;
	double ns;

	if (ws->n >= WALK_MAX_SAMPLES)
		return;
	rss_of(buf, len, &records, &pages);
	if (pages < WALK_MIN_PAGES)
		return;
	ns = (double)cpu_ns - (double)records * ws->record_ns;
	if (ns > 0)
		ws->ns_per_page[ws->n++] = ns / (double)pages;
}

long view_reader_pass(struct view_reader *vr, const atomic_bool *stop)
{
	long lines = 0;

	if (vr->view == TARGET_VIEW_QUERY)
		return query_pass(vr, stop);
	for (;;) {
		ssize_t n;

		if (vr->r) {
			n = vml_reader_read(vr->r, vr->buf, BENCH_READ_CHUNK);
		} else {
			uint64_t t0 = vr->walk ? vml_thread_cpu_ns() : 0;

			n = read(vr->fd, vr->buf, BENCH_READ_CHUNK);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				n = -errno;
			else if (vr->walk && n > 0)
				walk_sample(vr->walk, vml_thread_cpu_ns() - t0, vr->buf, (size_t)n);
		}
		if (n < 0)
			return (long)n;
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			lines += vr->buf[i] == '\n';
		if (stop && load_relaxed(stop))
			break;
	}
	if (vr->r) {
		vml_reader_rewind(vr->r);
	} else if (lseek(vr->fd, 0, SEEK_SET) < 0) {
		return -errno;
	}
	return lines;
}

int view_reader_ns_per_record(struct view_reader *vr, unsigned long records, uint64_t min_ns,
			      double *out)
{
	uint64_t t0 = vml_now_ns(), el;
	unsigned long passes = 0;

	do {
		long n = view_reader_pass(vr, NULL);

		if (n < 0)
			return (int)n;
		passes++;
		el = vml_now_ns() - t0;
	} while (el < min_ns);
	*out = (double)el / ((double)passes * (double)records);
	return 0;
}

int view_reader_eof_ns(struct view_reader *vr, uint64_t min_ns, double *out)
{
	unsigned long calls = 0;
	uint64_t t0, el;
	ssize_t n;

	/* to the end once, then read() there: a whole call that takes no lock */
	for (;;) {
		n = vr->r ? vml_reader_read(vr->r, vr->buf, BENCH_READ_CHUNK) :
			    read(vr->fd, vr->buf, BENCH_READ_CHUNK);
		if (n < 0 && !vr->r && errno == EINTR)
			continue;
		if (n < 0)
			return vr->r ? (int)n : -errno;
		if (n == 0)
			break;
	}
	t0 = vml_now_ns();
	do {
		for (int i = 0; i < 64; i++, calls++) {
			n = vr->r ? vml_reader_read(vr->r, vr->buf, BENCH_READ_CHUNK) :
				    read(vr->fd, vr->buf, BENCH_READ_CHUNK);
			if (n != 0)
				return n < 0 ? (vr->r ? (int)n : -errno) : -EIO;
		}
		el = vml_now_ns() - t0;
	} while (el < min_ns);
	*out = (double)el / (double)calls;
	if (vr->r) {
		vml_reader_rewind(vr->r);
	} else if (lseek(vr->fd, 0, SEEK_SET) < 0) {
		return -errno;
	}
	return 0;
}

void view_reader_close(struct view_reader *vr)
{
	vml_reader_close(vr->r);
	vr->r = NULL;
	if (vr->fd >= 0)
		close(vr->fd);
	vr->fd = -1;
	vml_free(vr->buf);
	vr->buf = NULL;
}

long bench_live_vma_count(pid_t pid)
{
	struct view_reader vr;
	long n;
	int ret = view_reader_open_live(&vr, pid, VML_VIEW_MAPS);

	if (ret)
		return ret;
	n = view_reader_pass(&vr, NULL);
	view_reader_close(&vr);
	return n;
}
