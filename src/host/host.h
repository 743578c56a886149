/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * host.h - what the live kernel of this machine does, measured: the host
 * profile. The model is configured from it, so that a comparison with the
 * live kernel compares like with like on any machine; a saved profile
 * (`--profile FILE`) makes a model-only run reproduce another machine.
 *
 * Whatever the kernel decides from its boot options and sysfs is probed,
 * by experiment where no file says it (the zero page, fault-around,
 * protection keys in smaps, anonymous VMA names, page-cache folio sizes). docs/host-profile.md
 * lists every field, how it is found and what it changes in the model.
 */
#ifndef VML_HOST_HOST_H
#define VML_HOST_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "script/script.h"
#include "vmalock/mm.h"

#define HOST_MAX_MTHP 16
/* The name every swap file of ours starts with (system/swap.c). */
#define HOST_SWAP_PREFIX "vmalock-swap."
#define HOST_WORD 24

/*
 * How the kernel reads a page-walking view (smaps, numa_maps, smaps_rollup):
 * under mmap_lock(R) for each read() (6.18; smaps_rollup for the whole walk,
 * dropped when contended) or under per-VMA locks (seeds 000 and 002,
 * mm-unstable 2026). Found by experiment (host_probe_view_locks).
 */
enum host_view_lock {
	HOST_VIEW_LOCK_UNKNOWN = 0,	/* not probed (an older saved profile), or no verdict */
	HOST_VIEW_LOCK_MMAP,
	HOST_VIEW_LOCK_VMA,
};

/* The views probed, in this order (their names: host_view_lock_view_name). */
enum { HOST_LOCK_SMAPS, HOST_LOCK_NUMA_MAPS, HOST_LOCK_SMAPS_ROLLUP, HOST_LOCK_VIEWS };

/* One multi-size THP size (/sys/kernel/mm/transparent_hugepage/hugepages-NkB). */
struct host_mthp {
	unsigned int kb;
	char enabled[HOST_WORD];	/* always, inherit, madvise, never; "" if absent */
	char shmem_enabled[HOST_WORD];
};

struct host_profile {
	/* Where it comes from: "probed" or the file it was loaded from. */
	char source[256];
	char hostname[65];
	char date[32];			/* when it was probed, UTC, ISO 8601 */
	char kernel_release[65];	/* uname -r */
	unsigned int kernel_major, kernel_minor;
	unsigned long page_size;
	unsigned int cpus;		/* online */
	uint64_t ram_bytes;		/* MemTotal */

	/* Measured by experiment. */
	bool zero_page;			/* a read of untouched private anon memory maps the zero page */
	bool huge_zero_page;		/* ...and of a THP-eligible range, the huge zero page */
	bool pkeys;			/* smaps prints ProtectionKey: */
	bool anon_vma_name;		/* PR_SET_VMA_ANON_NAME works (CONFIG_ANON_VMA_NAME) */
	unsigned long fault_around_bytes;
	/*
	 * The read-ahead window of the device under the script's regular files
	 * (its block queue's read_ahead_kb); 0: not found, no read-around.
	 */
	unsigned long readahead_kb;
	/*
	 * The largest page-cache folio a write() of 64 KiB gives a regular
	 * file in the live side's directory, in kB (4: small pages only);
	 * 0: unknown (not root, or a layout no rule of the model's explains).
	 */
	unsigned int file_folio_max_kb;
	char file_folio_probe[96];	/* how it was found: "ext4: 64+64+16+8 kB", or why not */

	/* Transparent huge pages (sysfs, the selected word of each file). */
	char thp_enabled[HOST_WORD];
	char thp_defrag[HOST_WORD];
	char thp_shmem_enabled[HOST_WORD];
	struct host_mthp mthp[HOST_MAX_MTHP];
	unsigned int nr_mthp;
	struct {
		unsigned int defrag, max_ptes_none, max_ptes_swap, max_ptes_shared;
		unsigned int pages_to_scan, scan_sleep_ms, alloc_sleep_ms;
	} khugepaged;

	/* Memory limits. */
	uint64_t swap_total_bytes, swap_free_bytes;
	unsigned int nr_swap_devices;
	unsigned int numa_nodes;
	unsigned long max_map_count;
	int overcommit_memory;		/* 0 guess, 1 always, 2 never */
	unsigned int overcommit_ratio;
	uint64_t overcommit_kbytes;
	uint64_t stack_rlimit;		/* RLIMIT_STACK soft limit; UINT64_MAX: unlimited */

	/* Scheduling: what the mmap_lock's hand-off timing depends on. */
	unsigned int hz;		/* CONFIG_HZ; 0 unknown */
	char hz_source[64];		/* where hz was read */
	uint64_t handoff_ns;		/* RWSEM_WAIT_TIMEOUT: DIV_ROUND_UP(HZ, 250) jiffies */
	char preempt[HOST_WORD];	/* none, voluntary, full, lazy, "" unknown */

	/* Something else that touches our pages. */
	unsigned int nr_kdamonds;	/* running DAMON threads: they clear Accessed bits */
	char damon_ops[HOST_WORD];	/* paddr / vaddr / fvaddr of the first context */
	char damon_actions[64];		/* its schemes' actions, comma-separated */

	/*
	 * Which lock the kernel reads each page-walking view under, by
	 * experiment; probed only when asked for (host_probe_view_locks: it
	 * takes some 100 ms and 128 MiB for a moment), UNKNOWN until then.
	 */
	enum host_view_lock view_lock[HOST_LOCK_VIEWS];
	char view_lock_probe[HOST_LOCK_VIEWS][160];	/* the evidence, or why none */
};

/*
 * host_probe_view_locks - find out, for smaps, numa_maps and smaps_rollup,
 * whether a reader of this process's own view, in the middle of walking one
 * big VMA (128 MiB of written pages), keeps a writer of another area
 * (mmap + munmap of a page) out (mmap_lock) or not (per-VMA locks). Trials
 * with a thread preempted are thrown away; up to HOST_LOCK_TRIALS per view,
 * and a verdict needs three agreeing trials and none against.
 * Context: needs 2 CPUs; pins two threads of its own for the trials.
 * Return: 0 (each view's verdict, possibly UNKNOWN, in @p), or -errno when
 *         the experiment could not be set up.
 */
int host_probe_view_locks(struct host_profile *p);
const char *host_view_lock_name(enum host_view_lock l);		/* "mmap", "vma", "unknown" */
const char *host_view_lock_view_name(unsigned int i);		/* "smaps", ... */

/*
 * host_view_per_vma - does the kernel of the current profile read @view (an
 * enum vml_view, or TARGET_VIEW_QUERY's value for PROCMAP_QUERY) under
 * per-VMA locks? maps and PROCMAP_QUERY: by release (6.17+, 6.18+); the
 * page-walking views: the profile's view_lock, probed on first use when the
 * profile is this host's, loaded otherwise; UNKNOWN counts as mmap_lock (no
 * release is known to read them per VMA).
 * @how: if not NULL, where the answer came from ("probed", "profile FILE",
 *       "release 6.18", "unknown: ...").
 */
bool host_view_per_vma(int view, const char **how);


/*
 * host_probe - measure this machine. Takes a few milliseconds (it maps,
 * touches and reads memory and a small file of its own in @tmpdir, or $TMPDIR
 * or /tmp when NULL).
 * Return: 0, or -errno when a measurement could not be made at all.
 */
int host_probe(struct host_profile *p, const char *tmpdir);
/* Why this thread's last host_probe() failed with @ret, in words. */
const char *host_probe_failure(int ret);

/* The model's settings for this profile (swap: @extra_swap_bytes on top of free swap). */
void host_profile_to_config(const struct host_profile *p, uint64_t extra_swap_bytes,
			    struct vml_sys_config *cfg);

/*
 * host_profile_differences - the settings in which @a and @b differ that
 * change what the corpus scripts' views show (kernel version, zero pages,
 * protection keys, THP modes, fault-around, swap, ...), as one line
 * "zero_page: false vs true; pkeys: ..." in @buf.
 * Return: the number of such settings (0: the references apply).
 */
int host_profile_differences(const struct host_profile *a, const struct host_profile *b,
			     char *buf, size_t len);

/*
 * host_profile_unmodelled - what the profile says the kernel does that the
 * model does not model (e.g. anonymous multi-size THP), as one line in @buf.
 * Return: the number of such settings; 0 when the model can follow this host.
 */
int host_profile_unmodelled(const struct host_profile *p, char *buf, size_t len);

/* Text, one setting a line, for `vmalock host`. */
void host_profile_print(const struct host_profile *p, FILE *f);

/* JSON (util/json.h). Return: 0 or -errno; on a bad document @err says why. */
int host_profile_save(const struct host_profile *p, const char *path);
int host_profile_load(const char *path, struct host_profile *p, char *err, size_t errlen);

/*
 * The profile the model targets of this process use: loaded once with
 * host_profile_use_file(), else probed on first use (and then cached).
 * Return: 0 and the profile, or -errno (@err says why).
 */
int host_profile_use_file(const char *path, char *err, size_t errlen);
int host_profile_current(const struct host_profile **out);
/* The model's settings from the current profile and switches. Return: 0 or -errno. */
int host_current_config(uint64_t extra_swap_bytes, struct vml_sys_config *cfg);
/*
 * host_profile_set_knob - @p as if the THP sysfs knob @name (a `knobs`
 * name, script.h) had been set to @value on its host.
 * Return: 0; -ENOENT if that host has no such knob (a size it lacks);
 *         -EINVAL for no knob of that name.
 */
int host_profile_set_knob(struct host_profile *p, const char *name, const char *value);
/*
 * host_current_config_knobs - host_current_config() for a script with
 * `knobs`: the current profile with @knobs set (host_profile_set_knob).
 * Return: 0 or -errno; on -ENOENT @err names the knob the host lacks.
 */
int host_current_config_knobs(uint64_t extra_swap_bytes, const struct script_knob *knobs,
			      size_t nr, struct vml_sys_config *cfg, char *err, size_t errlen);

/*
 * Model switches: design choices no host profile holds, for A/B runs of a
 * kernel change (`--i-mmap-order`, `--shmem-swap-usage`). Unset, the model
 * uses its defaults (mainline's); set, host_current_config() applies them
 * on top of the profile. Set them before the first model is configured.
 */
struct host_model_switches {
	bool i_mmap_order_set;
	enum vml_i_mmap_order i_mmap_order;		/* seed 001 */
	bool shmem_swap_usage_set;
	enum vml_shmem_swap_usage shmem_swap_usage;	/* seed 004 */
	enum vml_rollup_mode rollup;			/* issue 25 item 5 */
	/*
	 * rollup_check: keep incremental sums and, after every op a model
	 * target applies, compare each process's smaps_rollup read both ways
	 * (spaces/model.c); a difference fails the op.
	 */
	bool rollup_check;
};
void host_set_i_mmap_order(enum vml_i_mmap_order order);
void host_set_shmem_swap_usage(enum vml_shmem_swap_usage usage);
void host_set_rollup(enum vml_rollup_mode mode, bool check);
/* The switches set so far. */
struct host_model_switches host_model_switches(void);

#endif /* VML_HOST_HOST_H */
