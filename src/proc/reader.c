// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * reader.c - the public face of the /proc views: open a view of an mm with
 * a lock policy, read() it in chunks, rewind, close.
 */
#include <errno.h>

#include "mm/mm.h"
#include "proc/internal.h"
#include "util/alloc.h"

struct vml_reader {
	struct seq_file seq;
	struct proc_maps_private priv;
	enum vml_view view;
};

static const struct seq_operations *view_ops(enum vml_view view)
{
	switch (view) {
	case VML_VIEW_MAPS:
		return &proc_pid_maps_op;
	default:
		return NULL;
	}
}

int vml_reader_open(struct vml_mm *umm, enum vml_view view, enum vml_lock_policy lock,
		    struct vml_reader **out)
{
	const struct seq_operations *ops = view_ops(view);
	struct vml_reader *r;

	if (!umm || !out || !ops || (lock != VML_LOCK_MMAP && lock != VML_LOCK_VMA))
		return -EINVAL;
	r = vml_zalloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->view = view;
	r->priv.mm = to_mm(umm);
	r->priv.lock = lock;
	mmgrab(r->priv.mm);
	seq_open(&r->seq, ops, &r->priv);
	*out = r;
	return 0;
}

ssize_t vml_reader_read(struct vml_reader *r, char *buf, size_t len)
{
	if (!r || (!buf && len))
		return -EINVAL;
	return seq_read(&r->seq, buf, len);
}

void vml_reader_rewind(struct vml_reader *r)
{
	if (r)
		seq_rewind(&r->seq);
}

void vml_reader_close(struct vml_reader *r)
{
	if (!r)
		return;
	seq_release(&r->seq);
	mmdrop(r->priv.mm);
	vml_free(r);
}
