// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * remote.c - the /proc files that read a process's memory rather than its
 * VMAs (cmdline, environ, auxv): access_remote_vm() holds mmap_lock(R)
 * while it copies. The model has no memory contents; what it keeps of such
 * a read is the lock hold.
 */
#include <errno.h>

#include "platform/platform.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "util/debug.h"
#include "vmalock/proc.h"

int vml_access_remote_vm(struct vml_mm *umm, uint64_t copy_ns)
{
	struct mm *mm;

	if (!umm)
		return -EINVAL;
	mm = to_mm(umm);
	mmap_read_lock(mm);
	plat_charge_ns(copy_ns, PLAT_KERNEL);	/* get_user_pages_remote() and the copy */
	mmap_read_unlock(mm);
	return 0;
}
