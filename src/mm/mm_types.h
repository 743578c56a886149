/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mm_types.h - the address space (struct mm), its mappings (struct vma),
 * anon_vma objects, folios and pages, and the modelled kernel (struct
 * vml_sys). The page-table types are in pgtable_types.h.
 *
 * Lock tags used on fields (see docs/locking.md for the whole picture):
 *
 *   [M]    written with mmap_lock held for write; read with mmap_lock held
 *          (read or write)
 *   [I]    immutable while the object is reachable (set before it is
 *          published, never changed after). VMAs are copy-on-write: a change
 *          to a mapping makes a new struct vma and retires the old one, so
 *          every [I] field of a VMA can be read by anyone holding the VMA's
 *          read lock, mmap_lock, or - racily, as a hint - RCU.
 *   [PTL]  the page-table lock of the PTE table holding the entry
 *   [PT]   mm->page_table_lock
 *   [atomic] C11 atomic; the comment says what orders it
 *
 * Lifetimes: an mm lives while mm_users > 0 (the owner and open readers
 * pin it with mmget); its memory lives while mm_count > 0 (mmgrab). A VMA
 * lives from vma_alloc() until an RCU grace period after it was detached.
 */
#ifndef VML_MM_MM_TYPES_H
#define VML_MM_MM_TYPES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sync/rcu.h"
#include "sync/rwsem.h"
#include "sync/seqcount.h"
#include "sync/spinlock.h"
#include "tree/itree.h"
#include "tree/rtree.h"
#include "util/list.h"
#include "vmalock/mm.h"

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1UL << PAGE_SHIFT)
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define PAGE_ALIGN(x)	(((x) + PAGE_SIZE - 1) & PAGE_MASK)
#define offset_in_page(x) ((unsigned long)(x) & ~PAGE_MASK)

#define PTRS_PER_TABLE	512
#define PMD_SHIFT	21
#define PUD_SHIFT	30
#define PGDIR_SHIFT	39
#define PMD_SIZE	(1UL << PMD_SHIFT)
#define PMD_MASK	(~(PMD_SIZE - 1))
#define HPAGE_PMD_ORDER	(PMD_SHIFT - PAGE_SHIFT)
#define HPAGE_PMD_NR	(1U << HPAGE_PMD_ORDER)

/* x86-64 with 4-level page tables: 47-bit user address space. */
#define TASK_SIZE	0x7ffffffff000UL
#define MMAP_MIN_ADDR	0x10000UL
#define DEFAULT_MMAP_BASE 0x7f0000000000UL

/* vm_flags: the kernel's bit values, so VmFlags prints in the kernel's order. */
#define VM_NONE		0x00000000UL
#define VM_READ		0x00000001UL
#define VM_WRITE	0x00000002UL
#define VM_EXEC		0x00000004UL
#define VM_SHARED	0x00000008UL
#define VM_MAYREAD	0x00000010UL
#define VM_MAYWRITE	0x00000020UL
#define VM_MAYEXEC	0x00000040UL
#define VM_MAYSHARE	0x00000080UL
#define VM_GROWSDOWN	0x00000100UL
#define VM_UFFD_MISSING	0x00000200UL
#define VM_PFNMAP	0x00000400UL
#define VM_MAYBE_GUARD	0x00000800UL	/* guard markers may be in its entries (6.18.y) */
#define VM_UFFD_WP	0x00001000UL
#define VM_LOCKED	0x00002000UL
#define VM_IO		0x00004000UL
#define VM_SEQ_READ	0x00008000UL
#define VM_RAND_READ	0x00010000UL
#define VM_DONTCOPY	0x00020000UL
#define VM_DONTEXPAND	0x00040000UL
#define VM_LOCKONFAULT	0x00080000UL
#define VM_ACCOUNT	0x00100000UL
#define VM_NORESERVE	0x00200000UL
#define VM_HUGETLB	0x00400000UL
#define VM_SYNC		0x00800000UL
#define VM_ARCH_1	0x01000000UL
#define VM_WIPEONFORK	0x02000000UL
#define VM_DONTDUMP	0x04000000UL
#define VM_SOFTDIRTY	0x08000000UL
#define VM_MIXEDMAP	0x10000000UL
#define VM_HUGEPAGE	0x20000000UL
#define VM_NOHUGEPAGE	0x40000000UL
#define VM_MERGEABLE	0x80000000UL

/*
 * x86 protection keys live in vm_flags (VM_PKEY_BIT0..3 = VM_HIGH_ARCH_0..3),
 * so VMAs with different keys never merge. The model sets only the key of
 * execute-only mappings (arch/x86/mm/pkeys.c), and only on a host with pkeys.
 */
#define VM_PKEY_SHIFT	32
#define VM_PKEY_MASK	(0xfUL << VM_PKEY_SHIFT)

/* MAP_DROPPABLE (6.11+): pages may be dropped, dirty or not, instead of swapped. */
#define VM_DROPPABLE	(1UL << 40)
/* mseal(2) (6.10+, 64-bit only): never cleared; smaps `sl` (mseal.c). */
#define VM_SEALED	(1UL << 42)

#define VM_ACCESS_FLAGS	(VM_READ | VM_WRITE | VM_EXEC)
#define VM_LOCKED_MASK	(VM_LOCKED | VM_LOCKONFAULT)
#define VM_SPECIAL	(VM_IO | VM_DONTEXPAND | VM_PFNMAP | VM_MIXEDMAP)
/*
 * Sticky flags: a VMA merged from pieces of which any had one has it too
 * (VM_MAYBE_GUARD: the merged range may hold guard markers); and so they
 * never prevent a merge, like VM_SOFTDIRTY (which the live kernel lacks).
 */
#define VM_STICKY	(VM_SOFTDIRTY | VM_MAYBE_GUARD)
#define VM_IGNORE_MERGE	(VM_SOFTDIRTY | VM_STICKY)
/* Page tables copied by fork even without an anon_vma (vma_needs_copy). */
#define VM_COPY_ON_FORK	VM_MAYBE_GUARD

/* The per-VMA lock's reference count (docs/kernel.md §1). */
#define VMA_LOCK_OFFSET	0x40000000U
#define VMA_REF_LIMIT	(VMA_LOCK_OFFSET - 1)

struct vml_file;
struct folio;
struct mm;

/*
 * struct anon_vma - the identity of a set of anonymous pages. The model
 * keeps only what decides merges and sharing: identity and a reference
 * count. Owned by the VMAs (and folios) that point at it.
 */
struct anon_vma {
	_Atomic long refcount;		/* [atomic] VMAs + folios pointing here */
};

/* A VMA's anonymous name (PR_SET_VMA_ANON_NAME), shared between split pieces. */
struct anon_vma_name {
	_Atomic long refcount;		/* [atomic] */
	char name[];			/* [I] */
};

/*
 * struct vma - one mapping [vm_start, vm_end) of an mm.
 *
 * VMAs are copy-on-write (see vma_txn.c): once attached, every [I] field is
 * frozen until the VMA is detached, so a changed mapping is a new struct
 * vma. What still changes in place is the lock state (vm_refcnt,
 * vm_lock_seq) and the lazily created anon_vma.
 *
 * vm_refcnt (docs/kernel.md §1):
 *   0                    detached: readers' inc-not-zero fails (-EAGAIN: look again)
 *   1                    attached, no readers
 *   1 + n                attached, n read-lock holders
 *   VMA_LOCK_OFFSET+1+n  a writer excludes readers; n readers still draining
 *   VMA_LOCK_OFFSET+n    detaching, n transient readers draining
 * vm_lock_seq == mm->mm_lock_seq (odd) <=> write-locked in the current
 * mmap_lock write section; mmap_write_unlock() moves the mm seq on and so
 * releases every VMA write lock at once.
 */
struct vma {
	unsigned long vm_start;		/* [I] */
	unsigned long vm_end;		/* [I] */
	unsigned long vm_pgoff;		/* [I] file page offset; for anon: address >> PAGE_SHIFT at creation */
	unsigned long vm_flags;		/* [I] VM_* */
	struct vml_file *vm_file;	/* [I] a reference; NULL for private anonymous */
	struct anon_vma_name *anon_name; /* [I] a reference or NULL */
	struct mm *vm_mm;		/* [I] */
	bool fork_child;		/* [I] anon_vma chain not singular (forked): merges restricted */
	_Atomic(struct anon_vma *) anon_vma; /* [PT] set once, by the first write fault;
					 * read with load_acquire (pairs with store_release in anon_vma_prepare) */
	_Atomic uint32_t vm_refcnt;	/* [atomic] see above */
	_Atomic uint32_t vm_lock_seq;	/* written under mmap_lock(W); read racily as a hint, rechecked */
	struct itree_node shared;	/* [file i_mmap_rwsem] in vm_file's i_mmap, keyed by
					 * [vm_pgoff, last page offset] (vma_interval_tree) */
	struct vml_rcu_head rcu;	/* freed through vml_call_rcu once detached */
	bool staged;			/* [M] created by the running vma_txn, not yet attached */
};

static inline unsigned long vma_pages(const struct vma *vma)
{
	return (vma->vm_end - vma->vm_start) >> PAGE_SHIFT;
}

static inline bool vma_is_anonymous(const struct vma *vma)
{
	return vma->vm_file == NULL;
}

struct pt_table;	/* pgtable_types.h */

/*
 * struct page / struct folio. Folios are metadata only: the model keeps no
 * page contents. A folio of order n has 2^n pages inline.
 */
struct page {
	_Atomic int32_t mapcount;	/* [atomic] PTE mappings of this page (not counting PMD ones) */
	uint16_t index;			/* [I] index within the folio (< 512) */
	_Atomic uint16_t flags;		/* [atomic] PAGE_* */
	struct folio *folio;		/* [I] */
} __attribute__((aligned(16)));

/*
 * page flags. The model keeps no page contents, only whether a page may
 * hold data: an anonymous page is zero-filled until a user write (touch)
 * stores into it, or it is a copy of such a page. A split of an anonymous
 * large folio maps zero-filled pages to the zero page (docs/kernel-folios.md §14).
 */
#define PAGE_DATA	0x1U
/*
 * PageAnonExclusive: this anonymous page is mapped by one process only and
 * may be written without copying - set on a page a fault gives a process
 * (new, copied, or swapped in by its only user), cleared when fork shares
 * it. A write to a write-protected entry reuses such a page at once, and
 * mprotect makes its entry writable again (can_change_pte_writable).
 */
#define PAGE_ANON_EXCLUSIVE 0x2U

/* folio flags */
#define PG_anon		0x01UL
#define PG_swapbacked	0x02UL		/* anon or shmem */
#define PG_dirty	0x04UL
#define PG_referenced	0x08UL
#define PG_active	0x10UL
#define PG_unevictable	0x20UL
#define PG_zero		0x40UL		/* the shared zero page */
#define PG_swapcache	0x80UL
#define PG_lru_batch	0x100UL		/* in an LRU batch (kernel: PG_lru clear) */

struct folio {
	_Atomic int refcount;		/* [atomic] mappings + page cache + transient users */
	_Atomic int entire_mapcount;	/* [atomic] PMD mappings of a large folio */
	_Atomic int total_mapcount;	/* [atomic] all mappings (PTE + PMD) */
	_Atomic unsigned long flags;	/* [atomic] PG_* */
	unsigned int order;		/* [I] */
	int nid;			/* [I] NUMA node */
	/*
	 * Large folios only, the kernel's MM_ID tracking (CONFIG_MM_ID): two
	 * slots, each an mm (compared, never followed) and that mm's share of
	 * total_mapcount minus one (-1: the slot is free), and whether the
	 * folio may be mapped by more than one mm: set when a second mm takes
	 * a slot, cleared when a slot empties and the other holds every
	 * mapping. folio_maybe_mapped_shared().
	 */
	spinlock_t mapcount_lock;	/* folio_lock_large_mapcount; a leaf under the ptl */
	struct mm *mm_id[2];		/* [mapcount_lock] NULL: free */
	int mm_id_mapcount[2];		/* [mapcount_lock] */
	_Atomic bool maybe_shared;	/* written under mapcount_lock; read racily */
	void *mapping;			/* [I] struct anon_vma * (anon) or struct vml_file * (file/shmem) */
	unsigned long index;		/* [I] page index in the file (file folios) */
	unsigned long swap;		/* [swap_lock] its swap slot while PG_swapcache */
	/*
	 * While unevictable: how many mlocks hold it (the kernel's
	 * folio->mlock_count, "might undercount"); the munlock that takes it
	 * to 0 makes the folio evictable again.
	 */
	unsigned int mlock_count;	/* [sys->lru_lock] */
	struct page pages[];
};

static inline unsigned long folio_nr_pages(const struct folio *f)
{
	return 1UL << f->order;
}

static inline bool folio_test(const struct folio *f, unsigned long flag)
{
	return atomic_load_explicit(&((struct folio *)f)->flags, memory_order_relaxed) & flag;
}

static inline void folio_set(struct folio *f, unsigned long flag)
{
	atomic_fetch_or_explicit(&f->flags, flag, memory_order_relaxed);
}

static inline void folio_clear(struct folio *f, unsigned long flag)
{
	atomic_fetch_and_explicit(&f->flags, ~flag, memory_order_relaxed);
}

/* The rollup's sums: bytes, or bytes << PSS_SHIFT for the PSS ones (smaps.c). */
enum rollup_field {
	RU_RSS,
	RU_PSS,
	RU_PSS_DIRTY,
	RU_PSS_ANON,
	RU_PSS_FILE,
	RU_PSS_SHMEM,
	RU_SHARED_CLEAN,
	RU_SHARED_DIRTY,
	RU_PRIVATE_CLEAN,
	RU_PRIVATE_DIRTY,
	RU_REFERENCED,
	RU_ANONYMOUS,
	RU_LAZYFREE,
	RU_ANON_THP,
	RU_SHMEM_THP,
	RU_FILE_THP,
	RU_SWAP,
	RU_SWAP_PSS,
	RU_PSS_LOCKED,
	NR_ROLLUP,
};

#define ROLLUP_PSS_SHIFT 12

/* One table's (or one huge PMD's) share of the sums, as last counted. */
struct rollup_sums {
	int64_t v[NR_ROLLUP];
};

enum mm_counter {
	MM_FILEPAGES,
	MM_ANONPAGES,
	MM_SWAPENTS,
	MM_SHMEMPAGES,
	NR_MM_COUNTERS,
};

/* Lock-event and fault counters; relaxed atomics, for reports only. */
struct mm_stats {
	_Atomic uint64_t vma_lock_success;
	_Atomic uint64_t vma_lock_abort;
	_Atomic uint64_t vma_lock_retry;
	_Atomic uint64_t vma_lock_miss;
	_Atomic uint64_t faults;
	_Atomic uint64_t faults_vma_locked;
	_Atomic uint64_t mmap_read_locks;
	_Atomic uint64_t mmap_write_locks;
	_Atomic uint64_t proc_mmap_fallbacks;
	_Atomic uint64_t proc_contended_drops;
	_Atomic uint64_t shmem_swap_none;	/* smaps' shmem swap paths (vml_mm_stats) */
	_Atomic uint64_t shmem_swap_object;
	_Atomic uint64_t shmem_swap_walk;
	_Atomic uint64_t shmem_swap_per_page;
	_Atomic uint64_t shmem_swap_lookups;
};

/*
 * struct mm - an address space. Created by vml_mm_create() or vml_fork();
 * destroyed when its last user (owner, reader) drops it.
 */
struct mm {
	struct rwsem mmap_lock;		/* the address-space lock */
	struct seqcount mm_lock_seq;	/* odd while mmap_lock is write-held (docs/kernel.md §1) */
	struct rtree mm_mt;		/* VMAs by range: [M]+VMA write locks to change; RCU to read */
	_Atomic unsigned long map_count; /* [M] number of VMAs; also read racily (stats, mremap checks) */
	_Atomic uint32_t vma_writer_wait; /* [atomic] futex word: bumped by the last reader a
					 * VMA writer waits for (the kernel's rcuwait) */
	_Atomic int32_t vma_writer_tid;	/* [atomic] the waiting writer's thread id, set
					 * only while tracing (sync/trace_emit.h) */
	struct vml_sys *sys;		/* [I] */
	unsigned long mmap_base;	/* [I] top-down placement starts below this */
	unsigned long locked_vm;	/* [M] pages in VM_LOCKED VMAs */
	unsigned long def_flags;	/* [M] added to every new mapping's flags: VM_LOCKED
					 * (and VM_LOCKONFAULT) after mlockall(MCL_FUTURE) */
	/*
	 * The VMAs a real process has besides the script's - its code,
	 * libraries, stack - locked by mlockall(MCL_CURRENT) and unlocked by
	 * munlockall(): a change of their VM_LOCKED runs mlock_fixup on them,
	 * which drains this CPU's LRU batches, whatever the script maps.
	 */
	bool rest_locked;		/* [M] */
	int execute_only_pkey;		/* [M] the pkey of PROT_EXEC-only mappings; -1: none
					 * allocated yet (mm->context.execute_only_pkey) */

	struct pt_table *pgd;		/* [I] root page table */
	spinlock_t page_table_lock;	/* upper-level table population, PMD leaves, anon_vma */

	_Atomic long rss[NR_MM_COUNTERS]; /* [atomic] resident pages by kind */
	_Atomic int mm_users;		/* [atomic] address space alive while > 0 */
	_Atomic int mm_count;		/* [atomic] struct alive while > 0 */
	bool exiting;			/* [M] set by exit before teardown */

	struct mm_stats stats;

	/*
	 * Incremental smaps_rollup (rollup.c; only with cfg.rollup =
	 * VML_ROLLUP_INCREMENTAL): the sum of every stable table's share,
	 * each field changed by one relaxed atomic add of a difference; a
	 * table's share enters or leaves it whole under rollup_lock.
	 */
	_Atomic int64_t rollup[NR_ROLLUP];	/* [atomic] added to under the ptl or
						 * page_table_lock whose table changed */
	spinlock_t rollup_lock;			/* protects rollup_volatile and a share's moves
						 * in and out of rollup[]; under a ptl */
	struct list_head rollup_volatile;	/* [rollup_lock] tables whose share others
						 * can change, not in rollup[]: a read counts
						 * them (pte_table.rollup_node) */
	_Atomic long rollup_shmem_vmas;		/* [M] written; read racily: shmem VMAs, whose
						 * object's swap a read asks for */
};

/* struct vml_sys - the modelled kernel: settings shared by every mm. */
struct vml_sys {
	struct vml_sys_config cfg;	/* [I] after creation */
	/*
	 * cfg.thp_anon as bit masks of orders (huge_anon_orders_always,
	 * _madvise, _inherit): which sizes anonymous faults may allocate.
	 */
	unsigned long thp_anon_always;	/* [I] */
	unsigned long thp_anon_madvise;	/* [I] */
	unsigned long thp_anon_inherit;	/* [I] */
	/* cfg.shmem_mthp as masks of orders, in the same way (huge_shmem_orders_*). */
	unsigned long shmem_orders_always;	/* [I] */
	unsigned long shmem_orders_within_size;	/* [I] */
	unsigned long shmem_orders_madvise;	/* [I] */
	unsigned long shmem_orders_inherit;	/* [I] */
	_Atomic uint64_t next_inode;	/* [atomic] inode numbers for files */
	_Atomic long nr_mms;		/* [atomic] live mms (destroy asserts zero) */
	_Atomic long nr_files;		/* [atomic] live files */
	struct folio *zero_folio;	/* [I] the shared zero page */
	struct folio *huge_zero_folio;	/* [I] the PMD-sized zero page (use_huge_zero_page) */
	spinlock_t swap_lock;		/* protects the swap allocator below */
	_Atomic int32_t *swap_map;	/* [swap_lock] swap entries referring to each slot
					 * (index 0 unused); a slot is in use while it has
					 * one, or a swap-cache folio */
	struct folio **swap_cache;	/* [swap_lock] the folio caching each slot, holding
					 * a reference on it (an anonymous page swapped in
					 * and not yet freed from the swap cache), or NULL */
	unsigned long swap_next;	/* [swap_lock] where the next search starts */
	unsigned long swap_used;	/* [swap_lock] */
	/*
	 * The per-CPU LRU folio batches of mm/swap.c and mm/mlock.c (one set:
	 * the live scripts run on one CPU). A small folio's activation,
	 * deactivation, MADV_FREE, mlock and munlock take effect only when its
	 * batch is moved: when full, when a large folio joins it, or at an
	 * lru_add_drain() (folio.c). Batch i holds moves of kind i (enum
	 * lru_op), the last one the three mlock kinds, each entry's in lru_ops.
	 */
	spinlock_t lru_lock;		/* protects the batches below */
	struct folio *lru_batch[4][31];	/* [lru_lock] a reference each; NR_LRU_BATCHES */
	unsigned char lru_ops[4][31];	/* [lru_lock] each entry's enum lru_op */
	unsigned int lru_nr[4];		/* [lru_lock] */
};

#endif /* VML_MM_MM_TYPES_H */
