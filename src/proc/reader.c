// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * reader.c - the public face of the /proc views: open a view of an mm with
 * a lock policy, read() it in chunks, rewind, close.
 */
#include <errno.h>

#include "platform/platform.h"
#include "mm/mm.h"
#include "proc/internal.h"
#include "util/alloc.h"
#include "util/compiler.h"
#include "util/debug.h"

struct vml_reader {
	struct seq_file seq;
	struct proc_maps_private priv;
	enum vml_view view;
	uint64_t call_ns;	/* spent before each read's locks (vml_reader_set_call_cost) */
};

static const struct seq_operations *view_ops(enum vml_view view)
{
	switch (view) {
	case VML_VIEW_MAPS:
		return &proc_pid_maps_op;
	case VML_VIEW_SMAPS:
		return &proc_pid_smaps_op;
	case VML_VIEW_SMAPS_ROLLUP:
		return &proc_pid_smaps_rollup_op;
	case VML_VIEW_NUMA_MAPS:
		return &proc_pid_numa_maps_op;
	default:
		return NULL;
	}
}

int vml_reader_open(struct vml_mm *umm, enum vml_view view, enum vml_lock_policy lock,
		    struct vml_reader **out)
{
	const struct seq_operations *ops = view_ops(view);
	struct vml_reader *r;

	if (!umm || !out || !ops || (unsigned int)lock > VML_LOCK_VMA_RECHECK)
		return -EINVAL;
	r = vml_zalloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (view == VML_VIEW_NUMA_MAPS) {
		r->priv.numa = vml_zalloc(proc_numa_maps_size());
		if (!r->priv.numa) {
			vml_free(r);
			return -ENOMEM;
		}
	}
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
	if (unlikely(r->call_ns))
		plat_charge_ns(r->call_ns, PLAT_CALL);
	return seq_read(&r->seq, buf, len);
}

int vml_reader_set_flags(struct vml_reader *r, unsigned int flags)
{
	if (!r || (flags & ~(VML_READER_NOSTEAL | VML_READER_NODROP | VML_READER_ROLLUP_WALK)))
		return -EINVAL;
	r->priv.flags = flags;
	return 0;
}

int vml_reader_set_record_cost(struct vml_reader *r, uint64_t ns)
{
	if (!r || ns > 1000 * 1000 * 1000)
		return -EINVAL;
	r->seq.record_ns = ns;
	return 0;
}

int vml_reader_set_page_cost(struct vml_reader *r, uint64_t ns)
{
	if (!r || ns > 1000 * 1000 * 1000)
		return -EINVAL;
	r->priv.page_ns = ns;
	return 0;
}

int vml_reader_set_call_cost(struct vml_reader *r, uint64_t ns)
{
	if (!r || ns > 1000 * 1000 * 1000)
		return -EINVAL;
	r->call_ns = ns;
	return 0;
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
	vml_free(r->priv.numa);
	vml_free(r);
}
