// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fork.c - fork(2)'s address-space copy (kernel/fork.c dup_mmap,
 * mm/memory.c copy_page_range).
 *
 * The child gets a copy of every VMA but VM_DONTCOPY ones, without
 * VM_LOCKED. Anonymous memory is shared copy-on-write: both page-table
 * entries lose write permission and the page counts one more mapping, so
 * PSS splits it and the next write on either side copies it. The child's
 * VMAs get their own anon_vma chained to the parent's (fork_child), which
 * restricts their merges. File-backed VMAs without anonymous pages are not
 * copied at all: the child faults them in again (vma_needs_copy) - unless
 * they may hold guard markers (VM_COPY_ON_FORK), which are copied as they
 * are, like everything else in such a VMA's page tables.
 */
#include <errno.h>

#include "mm/rollup.h"
#include "mm/file.h"
#include "mm/folio.h"
#include "mm/huge_memory.h"
#include "mm/mm.h"
#include "mm/mmap_lock.h"
#include "mm/pgtable.h"
#include "mm/rmap.h"
#include "mm/swap.h"
#include "mm/vma.h"
#include "mm/vma_lock.h"
#include "mm/vma_txn.h"
#include "util/alloc.h"
#include "util/compiler.h"

/* Copy one PTE table's entries for [addr, end). Context: both mmap_locks(W). */
static int copy_pte_range(struct mm *dst, struct mm *src, struct vma *vma, unsigned long addr,
			  unsigned long end)
{
	bool cow = (vma->vm_flags & (VM_SHARED | VM_MAYWRITE)) == VM_MAYWRITE;
	int err = 0;

	while (addr < end) {
		unsigned long next = VML_MIN((addr & PMD_MASK) + PMD_SIZE, end);
		_Atomic uint64_t *spmd = pmd_offset(src, addr, false, &err);
		_Atomic uint64_t *dpmd;
		struct pte_table *spt, *dpt;

		/* acquire: pairs with pgtable.c's P1 releases */
		if (spmd && pmd_is_huge(load_acquire(spmd))) {
			/* A file's huge page is not copied: the child faults it in (copy_huge_pmd). */
			if (!vma_is_anonymous(vma)) {
				addr = next;
				continue;
			}
			/* The VMA holds the whole aligned range: share the huge page. */
			dpmd = pmd_offset(dst, addr, true, &err);
			if (!dpmd || copy_huge_pmd(dst, src, dpmd, spmd, vma, addr))
				return -ENOMEM;
			addr = next;
			continue;
		}
		spt = spmd ? pte_table_get(src, spmd, addr, false, &err) : NULL;
		if (!spt) {
			addr = next;
			continue;
		}
		dpmd = pmd_offset(dst, addr, true, &err);
		dpt = dpmd ? pte_table_get(dst, dpmd, addr, true, &err) : NULL;
		if (!dpt)
			return -ENOMEM;
		pte_lock(spt);
		for (; addr < next; addr += PAGE_SIZE) {
			_Atomic uint64_t *sp = &spt->e[pte_index(addr)];
			uint64_t pte = load_relaxed(sp);
			struct folio *folio;

			if (pte_is_guard(pte)) {
				store_relaxed(&dpt->e[pte_index(addr)], pte);	/* copy_pte_marker */
				continue;
			}
			if (pte_is_swap(pte)) {
				swap_dup(src->sys, pte >> PT_SWAP_SHIFT);
				mm_inc_counter(dst, MM_SWAPENTS);
				store_relaxed(&dpt->e[pte_index(addr)], pte);
				continue;
			}
			if (!pte_present(pte))
				continue;
			folio = page_folio(pte_page(pte));
			if (cow && (pte & PT_WRITE)) {
				/* Both sides lose write permission: the next write copies. */
				while (!cas_relaxed(sp, &pte, pte & ~PT_WRITE))
					;
				pte &= ~PT_WRITE;
			}
			if (!folio_is_zero(folio)) {
				/* Shared with the child now (folio_try_dup_anon_rmap_ptes). */
				if (folio_is_anon(folio))
					page_set_anon_exclusive(pte_page(pte), false);
				folio_get(folio);
				folio_add_rmap_pte(folio, pte_page(pte), dst);
				mm_inc_counter(dst, folio_mm_counter(folio));
			}
			/*
			 * The child's entry starts old; a shared mapping's also
			 * clean (copy_present_ptes), and the folio stays as it was:
			 * a page the hardware dirtied through a writable clean
			 * entry (shmem needs no write notification) is dirty in
			 * the parent's view only.
			 */
			if (vma->vm_flags & VM_SHARED)
				pte &= ~PT_DIRTY;
			store_relaxed(&dpt->e[pte_index(addr)], pte & ~PT_YOUNG);
		}
		pte_unlock(spt);
	}
	return 0;
}

static int dup_vma(struct vma_txn *t, struct mm *child, struct vma *vma, struct vma **out)
{
	struct vma *copy = vma_dup(vma);
	struct anon_vma *av;
	int err;

	if (!copy)
		return -ENOMEM;
	copy->vm_mm = child;
	copy->vm_flags &= ~VM_LOCKED_MASK;
	av = load_relaxed(&copy->anon_vma);
	if (av) {
		/* anon_vma_fork: the child's own anon_vma, chained to the parent's. */
		struct anon_vma *mine = anon_vma_alloc();

		if (!mine) {
			vma_free_unpublished(copy);
			return -ENOMEM;
		}
		anon_vma_put(av);
		store_relaxed(&copy->anon_vma, mine);
		copy->fork_child = true;
	}
	if (vma->vm_flags & VM_WIPEONFORK) {
		anon_vma_put(load_relaxed(&copy->anon_vma));
		store_relaxed(&copy->anon_vma, NULL);
		copy->fork_child = false;
	}
	err = vt_insert(t, copy);
	if (err) {
		vma_free_unpublished(copy);
		return err;
	}
	*out = copy;
	return 0;
}

int vml_fork(struct vml_mm *uparent, struct vml_mm **child_out)
{
	struct mm *parent = to_mm(uparent), *child;
	struct vma_iterator vmi;
	struct vma_txn t;
	struct vma *vma, *copy;
	int err;

	if (!parent || !child_out)
		return -EINVAL;
	err = mm_alloc(parent->sys, &child);
	if (err)
		return err;
	child->mmap_base = parent->mmap_base;
	mmap_read_lock(parent);	/* arch_dup_pkeys: the key allocation goes with the copy */
	child->execute_only_pkey = parent->execute_only_pkey;
	mmap_read_unlock(parent);

	mmap_write_lock(parent);
	mmap_write_lock_nested(child);
	vma_txn_begin(&t, child);
	vma_iter_init(&vmi, parent, 0);
	for_each_vma(vmi, vma) {
		if (vma->vm_flags & VM_DONTCOPY)
			continue;
		vma_start_write(vma);	/* no faults while its entries are copied */
		err = dup_vma(&t, child, vma, &copy);
		if (err)
			break;
		if (!(vma->vm_flags & VM_WIPEONFORK) &&
		    (vma_anon_vma(vma) || (vma->vm_flags & VM_COPY_ON_FORK))) {
			err = copy_pte_range(child, parent, vma, vma->vm_start, vma->vm_end);
			if (err)
				break;
		}
	}
	if (err) {
		vma_txn_abort(&t);
		mmap_write_unlock(child);
		mmap_write_unlock(parent);
		mmput(child);	/* zaps what was copied: the parent's counts are as before */
		return err;
	}
	vma_txn_commit(&t);
	/*
	 * Incremental rollup: the child's tables were filled before its VMAs
	 * were in its tree, where a count looks for VM_LOCKED: count them now.
	 */
	rollup_range_update(child, 0, TASK_SIZE);
	mmap_write_unlock(child);
	mmap_write_unlock(parent);
	*child_out = from_mm(child);
	return 0;
}
