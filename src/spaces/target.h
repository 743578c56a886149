/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target.h - one interface over two address spaces: the model (a vml_mm) or
 * a live child process on the running kernel. The same op script, the same
 * /proc reader and the same checks run on both (README.md, "How it works").
 *
 * Files. `file NAME SIZE [shmem]` creates NAME in a private temporary
 * directory of the target's environment: /tmp/vmalock.XXXXXX/NAME for a
 * regular file, /dev/shm/vmalock.XXXXXX/NAME for shmem. `file NAME SIZE
 * memfd` is memfd_create(NAME) in the (first) process, written the same way,
 * which maps shows as /memfd:NAME (deleted) on both targets. The live target
 * writes all SIZE bytes (a repeating non-zero pattern) and fsyncs them
 * instead of just extending the file, so every page is in the page cache and
 * clean, as a program's data file would be: read faults then find cached pages
 * (and fault-around maps up to 64 KiB of them). The model target creates a
 * vml_file with the same absolute path, so `maps` prints identical names;
 * the model's files are therefore to be taken as fully cached too. The live
 * child opens each file once, O_RDWR, when it is declared, and maps that one
 * open file every time, as a program that opens its data file once would:
 * the kernel merges file VMAs only when they share the open file (the struct
 * file), so the model must treat one vml_file as one open file. Targets
 * that share an environment (the two sides of `--target both`) see the same
 * paths; the directories are removed when the last target using the
 * environment is destroyed.
 *
 * Errors. target_apply() returns the outcome of the machinery (0, or -errno
 * if the child died, a pipe broke, memory ran out); the op's own result -
 * what the syscall returned - is in struct op_result.
 */
#ifndef VML_SPACES_TARGET_H
#define VML_SPACES_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spaces/child_proto.h"
#include "script/script.h"
#include "vmalock/mm.h"
#include "vmalock/proc.h"

enum target_kind {
	TARGET_MODEL,
	TARGET_LIVE,
};

/* The temporary directories for a script's files; shared by reference. */
struct target_env;

/* Return: 0, or -errno from mkdtemp (both directories are created now). */
int target_env_create(struct target_env **out);
struct target_env *target_env_get(struct target_env *env);
/* Drop a reference; the last one removes both directories and their files. */
void target_env_put(struct target_env *env);
/* Swap the script's `swap SIZE` turned on in this environment (0: none). */
uint64_t target_env_swap_bytes(const struct target_env *env);
/*
 * target_env_set_swap - give the environment's targets @bytes of swap: the
 * model targets created afterwards that many swap pages; with @live, a swap
 * file of that size turned on now (target_swap_on) and off when the
 * environment goes. Call before creating the targets.
 * Return: 0 or -errno, @err saying why (-EPERM: not root).
 */
int target_env_set_swap(struct target_env *env, uint64_t bytes, bool live, char *err,
			size_t errlen);
/*
 * target_env_set_knobs - the script's `knobs` (@nr of @knobs, which must
 * outlive @env): the model targets created afterwards run as if the host's
 * THP sysfs knobs had these values; with @live, they get them on this
 * machine now (root; under the system-state lock, the old values
 * registered with the keeper) and get the old ones back when the
 * environment goes. Call before creating the targets.
 * Return: 0 or -errno, @err saying why (-EPERM: not root; -ENOENT: no such
 *         knob on this kernel).
 */
int target_env_set_knobs(struct target_env *env, const struct script_knob *knobs, size_t nr,
			 bool live, char *err, size_t errlen);
/* The knobs set with target_env_set_knobs(), *@nr of them. */
const struct script_knob *target_env_knobs(const struct target_env *env, size_t *nr);
/*
 * The model targets created afterwards in @env go through the kernel's
 * intermediate states (vml_sys_config.kernel_transients); live targets
 * ignore it.
 */
void target_env_set_kernel_transients(struct target_env *env, bool on);
/* Model targets made from @env charge @costs (vml_sys_config.costs; NULL: none). */
struct vml_kernel_costs;
void target_env_set_costs(struct target_env *env, const struct vml_kernel_costs *costs);
bool target_env_kernel_transients(const struct target_env *env);
const struct vml_kernel_costs *target_env_costs(const struct target_env *env);
/* The directory names, for normalising views: "/tmp/vmalock.AbC123". */
const char *target_env_dir(const struct target_env *env, bool shmem);

struct target;

/*
 * target_create - a fresh address space.
 * @env: the file environment to use (a reference is taken), or NULL for a
 *       private one.
 * Return: 0; -ENOSYS for TARGET_MODEL while the model is not linked in;
 *         -ENOENT if the live child executable cannot be found; -errno.
 */
int target_create(enum target_kind kind, struct target_env *env, struct target **out);
/*
 * target_model_adopt - a model target whose ops act on @mm of @sys, which
 * the caller made and keeps: target_destroy() leaves both (and what the ops
 * mapped) alone. For benchmarks that build their own mm (a lock policy, a
 * simulated machine's costs) and lay out an op script in it first.
 * `fork` ops make mms of the target's own, destroyed with it.
 * Return: 0 or -errno.
 */
int target_model_adopt(struct vml_sys *sys, struct vml_mm *mm, struct target_env *env,
		       struct target **out);
/* Kill and reap a live child, free the model, remove files. NULL is a no-op. */
void target_destroy(struct target *t);

enum target_kind target_kind(const struct target *t);
const char *target_kind_name(enum target_kind kind);	/* "model", "live" */
struct target_env *target_env(const struct target *t);
/* The live child's pid (for benchmarks that read /proc directly); 0 for the model. */
pid_t target_pid(const struct target *t);
/* The model's address space; NULL for a live target. */
struct vml_mm *target_model_mm(const struct target *t);
/*
 * target_model_rollup_check - read every process's smaps_rollup both ways
 * (walked, and from the incremental sums: the model must run with
 * VML_ROLLUP_INCREMENTAL). Return: 0 the same, 1 a difference (described
 * in @what, @len bytes), -errno.
 */
int target_model_rollup_check(struct target *t, char *what, size_t len);

struct op_result {
	int ret;		/* 0 or -errno: what the syscall returned */
	unsigned long addr;	/* mmap, mremap: the resulting address on success */
};

/*
 * target_forget_forks - end the processes `fork` made (a live target's
 * children exit) and select the first process again; the next fork is
 * process 1. For runs that reuse a target for several scripts (fuzz).
 */
void target_forget_forks(struct target *t);

/*
 * target_apply - carry out one op (placement rule in script.h).
 * Return: 0 with *@res filled in, or -errno if the target itself failed.
 */
int target_apply(struct target *t, const struct op *op, struct op_result *res);

/* A /proc view reader: read(2) semantics over the model or /proc/PID/<view>. */
struct target_reader;

/*
 * target_reader_open - open one view.
 * @lock: the locking policy of the model's reader; the live kernel has its
 *        own (6.18: maps and PROCMAP_QUERY under per-VMA locks, the others
 *        under mmap_lock) and ignores it.
 */
int target_reader_open(struct target *t, enum vml_view view, enum vml_lock_policy lock,
		       struct target_reader **out);
/* Like read(2): bytes read, 0 at end, -errno. */
ssize_t target_reader_read(struct target_reader *r, char *buf, size_t len);
/* lseek(fd, 0, SEEK_SET). Return: 0 or -errno. */
int target_reader_rewind(struct target_reader *r);
void target_reader_close(struct target_reader *r);

/*
 * target_read_view - the whole view as one string, read with page-sized
 * read() calls like `cat`. *@text is vml_malloc'ed and NUL-terminated.
 */
int target_read_view(struct target *t, enum vml_view view, enum vml_lock_policy lock,
		     char **text, size_t *len);

/*
 * target_query - one PROCMAP_QUERY (the real ioctl on the child's
 * /proc/PID/maps, or vml_procmap_query). @q->vma_name_addr and
 * build_id_addr are pointers into this process.
 * Return: 0 or -errno, as the ioctl.
 */
int target_query(struct target *t, enum vml_lock_policy lock, struct vml_procmap_query *q);

/*
 * target_read_query_view - walk [@lo, @hi) with PROCMAP_QUERY
 * (COVERING_OR_NEXT_VMA) and print one maps-format line per VMA, so the
 * query path can be compared with `maps` and across targets.
 */
int target_read_query_view(struct target *t, enum vml_lock_policy lock, unsigned long lo,
			   unsigned long hi, char **text, size_t *len);

/* View names as the command line spells them. */
const char *target_view_name(enum vml_view view);
/* "maps" -> VML_VIEW_MAPS, ...; "query" -> TARGET_VIEW_QUERY. Return: 0 or -EINVAL. */
#define TARGET_VIEW_QUERY ((enum vml_view)100)
int target_view_parse(const char *name, enum vml_view *out);

/*
 * ---- live only: operations timed inside the child, for bench/ ----
 * Each fills *@rep (child_proto.h) and returns 0 or -errno: -EINVAL on a
 * model target or bad arguments, -ECHILD if the child died, or the errno of
 * the child's first failing call. Timing happens in the child, around each
 * call, so the request's round trip is not in the figures.
 */

/*
 * target_live_timed_loop - run @op @n times (enum child_loop_op: the page
 * at @addr is mapped and unmapped; the 3-page VMA at @addr is split and
 * merged; the pages from @addr on are write-faulted one each).
 */
int target_live_timed_loop(struct target *t, enum child_loop_op op, unsigned long addr,
			   unsigned long n, struct child_lat_rep *rep);
/*
 * Mapper mode: map the populated @len-byte region (rep->addr) at @addr
 * (MAP_FIXED_NOREPLACE; 0: where the kernel puts it); @seed its random stream.
 */
int target_live_mapper_setup(struct target *t, unsigned long addr, unsigned long len,
			     uint64_t seed, struct child_lat_rep *rep);
/* Run the mapper for @duration_ns, sleeping @sleep_ns between calls; blocks until done. */
int target_live_mapper_run(struct target *t, uint64_t duration_ns, uint64_t sleep_ns,
			   struct child_lat_rep *rep);
/*
 * target_live_kh_layout - seed 003's address space in the child (see
 * CHILD_KH_LAYOUT): @vmas ineligible one-page VMAs from @base, then
 * @uncollapsible and @ranges 2 MiB MADV_HUGEPAGE ranges; *@first = the first
 * range. Return: 0 or -errno.
 */
int target_live_kh_layout(struct target *t, unsigned long base, unsigned long vmas,
			  unsigned int ranges, unsigned int uncollapsible, unsigned long *first,
			  struct child_lat_rep *rep);

/* ---- the two implementations (internal to spaces/) ---- */

struct target_file;

struct target_ops {
	int (*create)(struct target *t);
	void (*destroy)(struct target *t);
	/* `file`: make @file (name and path filled in) exist; may set file->priv */
	int (*file)(struct target *t, const struct op *op, struct target_file *file, int *ret);
	/* every other op; @mmap_flags has the placement bits; @file for mmap file= */
	int (*apply)(struct target *t, const struct op *op, int mmap_flags,
		     const struct target_file *file, struct op_result *res);
	int (*reader_open)(struct target *t, enum vml_view view, enum vml_lock_policy lock,
			   struct target_reader *r);
	ssize_t (*reader_read)(struct target_reader *r, char *buf, size_t len);
	int (*reader_rewind)(struct target_reader *r);
	void (*reader_close)(struct target_reader *r);
	int (*query)(struct target *t, enum vml_lock_policy lock, struct vml_procmap_query *q);
	/* end every forked process, select the first one, number forks from 1 again */
	void (*forget_forks)(struct target *t);
};

struct target_file {
	char *name;		/* as declared in the script */
	char *path;		/* absolute: what maps shows (memfd: "/memfd:NAME (deleted)") */
	bool shmem;
	void *priv;		/* the model's struct vml_file */
	long handle;		/* live: the child's fd for it */
};

/* Owned by one thread: targets are not shared between threads without a lock. */
struct target {
	enum target_kind kind;
	const struct target_ops *ops;
	struct target_env *env;
	struct target_file *files;
	size_t nr_files, files_cap;
	pid_t pid;			/* live: the child */
	void *priv;			/* the implementation's state */
};

struct target_reader {
	struct target *t;
	enum vml_view view;
	int fd;				/* live */
	void *priv;			/* model: struct vml_reader */
};

/* model.c: target_model_adopt()'s state in @t->priv. Return: 0 or -ENOMEM. */
int target_model_adopt_priv(struct target *t, struct vml_sys *sys, struct vml_mm *mm);

extern const struct target_ops target_live_ops;
extern const struct target_ops target_model_ops;
/* Can a live target be made here (is vmalock-child found)? */
bool target_live_available(void);
/* After MADV_PAGEOUT: wait (up to a second) until nothing is under writeback (live.c). */
void target_wait_writeback(void);

/*
 * Create NAME in @env's directory with SIZE bytes written (once per
 * environment: a second call for the same name is a no-op).
 * Return: 0 or -errno.
 */
int target_env_make_file(struct target_env *env, const char *name, bool shmem,
			 unsigned long size);
/* The absolute path NAME has (or will have) in @env; vml_malloc'ed. */
char *target_env_path(const struct target_env *env, const char *name, bool shmem);

#endif /* VML_SPACES_TARGET_H */
