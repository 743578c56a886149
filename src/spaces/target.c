// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target.c - what both targets share: the file environment, the op
 * dispatch with the mmap placement rule, view reading and the
 * PROCMAP_QUERY walk. The model and live specifics are behind
 * struct target_ops (model.c, live.c).
 *
 * Everything here is single-threaded per target: a target, its readers and
 * its environment are used by one thread at a time (benchmarks that read a
 * view from other threads open their own readers on the target's pid or mm).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "system/keeper.h"
#include "system/keeper_proto.h"
#include "system/settings.h"
#include "system/swap.h"
#include "system/syslock.h"
#include "spaces/target.h"
#include "spaces/view.h"
#include "util/alloc.h"
#include "util/compiler.h"
#include "util/linux_compat.h"

#define VIEW_READ_CHUNK 4096	/* what `cat` and the kernel's seq_file use */
#define TARGET_PAGE_SIZE 4096UL	/* x86-64, as the live machine */

/* ---- the file environment ---- */

struct env_file {
	char *name;
	bool shmem;
};

struct target_env {
	int refs;			/* owned by one thread, see above */
	char dir[2][256];		/* [0]: /tmp/vmalock.XXXXXX, [1]: /dev/shm/vmalock.XXXXXX */
	long keeper[2];			/* their undo handles (keeper.h); <= 0: none */
	struct env_file *made;		/* files created on disk */
	size_t nr_made, made_cap;
	uint64_t swap_bytes;		/* the script's own swap (model: that many pages) */
	struct target_swap *swap;	/* live: the swap file turned on for it, or NULL */
	bool kernel_transients;		/* model: vml_sys_config.kernel_transients */
	struct vml_kernel_costs costs;	/* model: vml_sys_config.costs */
	const struct script_knob *knobs;	/* the script's `knobs` (its own) */
	size_t nr_knobs;
	int settings_mark;		/* live: setting_depth() before they were set; -1: not set */
};

static void remove_dir(const char *dir)
{
	if (*dir)
		keeper_remove_dir(dir);
}

int target_env_create(struct target_env **out)
{
	struct target_env *env = vml_zalloc(sizeof(*env));
	sigset_t stop, old;
	int ret;

	if (!env)
		return -ENOMEM;
	env->refs = 1;
	env->settings_mark = -1;
	/* $VMALOCK_TMPDIR and $VMALOCK_SHMDIR move them (tests watch their own). */
	for (int i = 0; i < 2; i++) {
		const char *base = getenv(i ? "VMALOCK_SHMDIR" : "VMALOCK_TMPDIR");

		if (!base || !*base)
			base = i ? "/dev/shm" : "/tmp";
		if ((size_t)snprintf(env->dir[i], sizeof(env->dir[i]), "%s/vmalock.XXXXXX", base) >=
		    sizeof(env->dir[i])) {
			vml_free(env);
			return -ENAMETOOLONG;
		}
	}
	/*
	 * A signal that kills us between making a directory and handing it to
	 * the keeper would leave it behind: hold the signals that end a run
	 * off until both are handed over (they are delivered right after).
	 */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	for (int i = 0; i < 2; i++) {
		if (!mkdtemp(env->dir[i])) {
			ret = -errno;
			env->dir[i][0] = '\0';
			if (i) {
				remove_dir(env->dir[0]);
				keeper_done(env->keeper[0]);
			}
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			vml_free(env);
			return ret;
		}
		/*
		 * Removed by target_env_put(), or by the keeper if we die first.
		 * Without a keeper (no vmalock-child found) a kill leaves them.
		 */
		env->keeper[i] = keeper_add(KEEPER_DIR, env->dir[i], NULL);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	*out = env;
	return 0;
}

struct target_env *target_env_get(struct target_env *env)
{
	env->refs++;
	return env;
}

void target_env_put(struct target_env *env)
{
	if (!env || --env->refs > 0)
		return;
	if (env->settings_mark >= 0)
		setting_pop_to(env->settings_mark);
	target_swap_off(env->swap);
	for (int i = 0; i < 2; i++) {
		remove_dir(env->dir[i]);
		keeper_done(env->keeper[i]);
	}
	for (size_t i = 0; i < env->nr_made; i++)
		vml_free(env->made[i].name);
	vml_free(env->made);
	vml_free(env);
}

uint64_t target_env_swap_bytes(const struct target_env *env)
{
	return env->swap_bytes;
}

void target_env_set_kernel_transients(struct target_env *env, bool on)
{
	env->kernel_transients = on;
}

void target_env_set_costs(struct target_env *env, const struct vml_kernel_costs *costs)
{
	memset(&env->costs, 0, sizeof(env->costs));
	if (costs)
		env->costs = *costs;
}

const struct vml_kernel_costs *target_env_costs(const struct target_env *env)
{
	return &env->costs;
}

bool target_env_kernel_transients(const struct target_env *env)
{
	return env->kernel_transients;
}

int target_env_set_swap(struct target_env *env, uint64_t bytes, bool live, char *err,
			size_t errlen)
{
	int ret;

	if (env->swap_bytes)
		return -EBUSY;
	if (live) {
		ret = target_swap_on(bytes, &env->swap, err, errlen);
		if (ret)
			return ret;
	}
	env->swap_bytes = bytes;
	return 0;
}

int target_env_set_knobs(struct target_env *env, const struct script_knob *knobs, size_t nr,
			 bool live, char *err, size_t errlen)
{
	int mark = setting_depth(), ret;

	if (env->nr_knobs || env->settings_mark >= 0)
		return -EBUSY;
	for (size_t i = 0; live && i < nr; i++) {
		const char *path = setting_path(knobs[i].name);

		ret = path ? setting_push(path, knobs[i].value, err, errlen) : -EINVAL;
		if (ret) {
			setting_pop_to(mark);
			return ret;
		}
	}
	if (live && nr)
		env->settings_mark = mark;
	env->knobs = knobs;
	env->nr_knobs = nr;
	return 0;
}

const struct script_knob *target_env_knobs(const struct target_env *env, size_t *nr)
{
	*nr = env->nr_knobs;
	return env->knobs;
}

const char *target_env_dir(const struct target_env *env, bool shmem)
{
	return env->dir[shmem];
}

char *target_env_path(const struct target_env *env, const char *name, bool shmem)
{
	size_t n = strlen(env->dir[shmem]) + strlen(name) + 2;
	char *p = vml_malloc(n);

	if (p)
		snprintf(p, n, "%s/%s", env->dir[shmem], name);
	return p;
}

/* Write @size bytes of a repeating non-zero pattern, so every page is cached. */
static int fill(int fd, unsigned long size)
{
	static char chunk[1 << 16];
	unsigned long done = 0;

	if (!chunk[0])
		for (size_t i = 0; i < sizeof(chunk); i++)
			chunk[i] = 'a' + i % 26;
	while (done < size) {
		size_t n = VML_MIN(size - done, sizeof(chunk));
		ssize_t w = write(fd, chunk, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		done += w;
	}
	return 0;
}

int target_env_make_file(struct target_env *env, const char *name, bool shmem,
			 unsigned long size)
{
	struct env_file *made;
	char *path;
	int fd, ret;

	for (size_t i = 0; i < env->nr_made; i++)
		if (!strcmp(env->made[i].name, name) && env->made[i].shmem == shmem)
			return 0;
	made = vml_grow_array(env->made, &env->made_cap, env->nr_made + 1, sizeof(*made), 8);
	if (!made)
		return -ENOMEM;
	env->made = made;
	path = target_env_path(env, name, shmem);
	if (!path)
		return -ENOMEM;
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	ret = fill(fd, size);
	/* Written back now, so the pages are cached and clean: smaps does not
	 * depend on when writeback happens to run. */
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (ret) {
		unlink(path);
		goto out;
	}
	env->made[env->nr_made].name = vml_strdup(name);
	if (!env->made[env->nr_made].name) {
		unlink(path);
		ret = -ENOMEM;
		goto out;
	}
	env->made[env->nr_made++].shmem = shmem;
out:
	vml_free(path);
	return ret;
}

/* ---- targets ---- */

const char *target_kind_name(enum target_kind kind)
{
	return kind == TARGET_LIVE ? "live" : "model";
}

/* A model target over the caller's sys and mm (target_model_adopt). */
struct adopted {
	struct vml_sys *sys;
	struct vml_mm *mm;
};

static int create(enum target_kind kind, struct target_env *env, const struct adopted *adopt,
		  struct target **out)
{
	struct target *t;
	int ret;

	/*
	 * One vmalock at a time on the live kernel: another run's calls drain the
	 * kernel's per-CPU LRU batches (lru_add_drain_all), change settings or
	 * add swap, and the views then depend on timing.
	 */
	if (kind == TARGET_LIVE) {
		ret = syslock_take();
		if (ret)
			return ret;
	}
	t = vml_zalloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->kind = kind;
	t->ops = kind == TARGET_LIVE ? &target_live_ops : &target_model_ops;
	if (env) {
		t->env = target_env_get(env);
	} else {
		ret = target_env_create(&t->env);
		if (ret) {
			vml_free(t);
			return ret;
		}
	}
	ret = adopt ? target_model_adopt_priv(t, adopt->sys, adopt->mm) : t->ops->create(t);
	if (ret) {
		target_env_put(t->env);
		vml_free(t);
		return ret;
	}
	*out = t;
	return 0;
}

int target_create(enum target_kind kind, struct target_env *env, struct target **out)
{
	return create(kind, env, NULL, out);
}

int target_model_adopt(struct vml_sys *sys, struct vml_mm *mm, struct target_env *env,
		       struct target **out)
{
	return create(TARGET_MODEL, env, &(struct adopted){ sys, mm }, out);
}

void target_destroy(struct target *t)
{
	if (!t)
		return;
	t->ops->destroy(t);
	for (size_t i = 0; i < t->nr_files; i++) {
		vml_free(t->files[i].name);
		vml_free(t->files[i].path);
	}
	vml_free(t->files);
	target_env_put(t->env);
	vml_free(t);
}

enum target_kind target_kind(const struct target *t)
{
	return t->kind;
}

struct target_env *target_env(const struct target *t)
{
	return t->env;
}

pid_t target_pid(const struct target *t)
{
	return t->kind == TARGET_LIVE ? t->pid : 0;
}

static struct target_file *find_file(struct target *t, const char *name)
{
	for (size_t i = 0; i < t->nr_files; i++)
		if (!strcmp(t->files[i].name, name))
			return &t->files[i];
	return NULL;
}

static int apply_file(struct target *t, const struct op *op, struct op_result *res)
{
	struct target_file *f;
	int ret;

	if (find_file(t, op->file)) {
		res->ret = -EEXIST;
		return 0;
	}
	f = vml_grow_array(t->files, &t->files_cap, t->nr_files + 1, sizeof(*f), 8);
	if (!f)
		return -ENOMEM;
	t->files = f;
	f = &t->files[t->nr_files];
	memset(f, 0, sizeof(*f));
	f->shmem = op->shmem;
	f->name = vml_strdup(op->file);
	if (op->memfd) {
		size_t n = strlen(op->file) + sizeof("/memfd: (deleted)");

		f->path = vml_malloc(n);
		if (f->path)
			snprintf(f->path, n, "/memfd:%s (deleted)", op->file);
	} else {
		f->path = target_env_path(t->env, op->file, op->shmem);
	}
	if (!f->name || !f->path) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = t->ops->file(t, op, f, &res->ret);
	if (ret || res->ret)
		goto fail;
	t->nr_files++;
	return 0;
fail:
	vml_free(f->name);
	vml_free(f->path);
	return ret;
}

/* The placement rule of script.h: which MAP_FIXED* bit this mmap gets. */
static int placement_flags(struct target *t, const struct op *op, int *flags)
{
	unsigned long len = (op->len + TARGET_PAGE_SIZE - 1) & ~(TARGET_PAGE_SIZE - 1);
	char *maps;
	size_t n;
	int ret;

	switch (op->placement) {
	case OP_PLACE_FIXED:
		*flags = MAP_FIXED;
		return 0;
	case OP_PLACE_NOREPLACE:
		*flags = MAP_FIXED_NOREPLACE;
		return 0;
	case OP_PLACE_HINT:
		*flags = 0;
		return 0;
	case OP_PLACE_AUTO:
		break;
	}
	if (len < op->len) {
		*flags = MAP_FIXED_NOREPLACE;	/* the kernel rejects the length anyway */
		return 0;
	}
	ret = target_read_view(t, VML_VIEW_MAPS, VML_LOCK_MMAP, &maps, &n);
	if (ret)
		return ret;
	*flags = maps_range_unmapped(maps, op->addr, len) ? MAP_FIXED_NOREPLACE : MAP_FIXED;
	vml_free(maps);
	return 0;
}

void target_forget_forks(struct target *t)
{
	t->ops->forget_forks(t);
}

int target_apply(struct target *t, const struct op *op, struct op_result *res)
{
	const struct target_file *file = NULL;
	int flags = 0, ret;

	res->ret = 0;
	res->addr = 0;
	switch (op->kind) {
	case OP_FILE:
		return apply_file(t, op, res);
	case OP_MMAP:
		if (op->file) {
			file = find_file(t, op->file);
			if (!file) {
				/* not created here (a failed `file` op): like a bad fd */
				res->ret = -EBADF;
				return 0;
			}
		}
		ret = placement_flags(t, op, &flags);
		if (ret)
			return ret;
		flags |= op->flags;
		break;
	case OP_TRUNCATE:
	case OP_PUNCH:
		file = find_file(t, op->file);	/* NULL: its `file` op failed (EBADF) */
		break;
	default:
		break;
	}
	return t->ops->apply(t, op, flags, file, res);
}

/* ---- views ---- */

static const char *const view_names[] = {
	[VML_VIEW_MAPS] = "maps",
	[VML_VIEW_SMAPS] = "smaps",
	[VML_VIEW_SMAPS_ROLLUP] = "smaps_rollup",
	[VML_VIEW_NUMA_MAPS] = "numa_maps",
};

const char *target_view_name(enum vml_view view)
{
	if (view == TARGET_VIEW_QUERY)
		return "query";
	return (unsigned int)view < ARRAY_SIZE(view_names) ? view_names[view] : "?";
}

int target_view_parse(const char *name, enum vml_view *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(view_names); i++) {
		if (!strcmp(name, view_names[i])) {
			*out = i;
			return 0;
		}
	}
	if (!strcmp(name, "query")) {
		*out = TARGET_VIEW_QUERY;
		return 0;
	}
	return -EINVAL;
}

int target_reader_open(struct target *t, enum vml_view view, enum vml_lock_policy lock,
		       struct target_reader **out)
{
	struct target_reader *r;
	int ret;

	if ((unsigned int)view >= ARRAY_SIZE(view_names))
		return -EINVAL;
	r = vml_zalloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->t = t;
	r->view = view;
	r->fd = -1;
	ret = t->ops->reader_open(t, view, lock, r);
	if (ret) {
		vml_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

ssize_t target_reader_read(struct target_reader *r, char *buf, size_t len)
{
	return r->t->ops->reader_read(r, buf, len);
}

int target_reader_rewind(struct target_reader *r)
{
	return r->t->ops->reader_rewind(r);
}

void target_reader_close(struct target_reader *r)
{
	if (!r)
		return;
	r->t->ops->reader_close(r);
	vml_free(r);
}

int target_read_view(struct target *t, enum vml_view view, enum vml_lock_policy lock,
		     char **text, size_t *len)
{
	struct target_reader *r;
	size_t n = 0, cap = 4 * VIEW_READ_CHUNK;
	char *buf = vml_malloc(cap + 1), *nb;
	ssize_t got;
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = target_reader_open(t, view, lock, &r);
	if (ret) {
		vml_free(buf);
		return ret;
	}
	for (;;) {
		if (cap - n < VIEW_READ_CHUNK) {
			nb = vml_realloc(buf, cap * 2 + 1);
			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		got = target_reader_read(r, buf + n, VIEW_READ_CHUNK);
		if (got <= 0) {
			ret = (int)got;
			break;
		}
		n += got;
	}
	target_reader_close(r);
	if (ret) {
		vml_free(buf);
		return ret;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

int target_query(struct target *t, enum vml_lock_policy lock, struct vml_procmap_query *q)
{
	return t->ops->query(t, lock, q);
}

int target_read_query_view(struct target *t, enum vml_lock_policy lock, unsigned long lo,
			   unsigned long hi, char **text, size_t *len)
{
	size_t n = 0, cap = 4096;
	char *buf = vml_malloc(cap), *nb, *name = vml_malloc(PATH_MAX), *line = NULL;
	unsigned long addr = lo;
	int ret = 0;

	if (buf)
		line = vml_malloc(PATH_MAX + 128);
	if (!buf || !name || !line) {
		vml_free(buf);
		vml_free(name);
		vml_free(line);
		return -ENOMEM;
	}
	buf[0] = '\0';
	while (addr < hi) {
		struct vml_procmap_query q = {
			.size = sizeof(q),
			.query_flags = VML_PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
			.query_addr = addr,
			.vma_name_size = PATH_MAX,
			.vma_name_addr = (uintptr_t)name,
		};
		char perms[5];
		int l;

		ret = target_query(t, lock, &q);
		if (ret == -ENOENT) {
			ret = 0;
			break;
		}
		if (ret)
			break;
		if (q.vma_start >= hi)
			break;
		perms[0] = q.vma_flags & VML_PROCMAP_QUERY_VMA_READABLE ? 'r' : '-';
		perms[1] = q.vma_flags & VML_PROCMAP_QUERY_VMA_WRITABLE ? 'w' : '-';
		perms[2] = q.vma_flags & VML_PROCMAP_QUERY_VMA_EXECUTABLE ? 'x' : '-';
		perms[3] = q.vma_flags & VML_PROCMAP_QUERY_VMA_SHARED ? 's' : 'p';
		perms[4] = '\0';
		l = maps_line_format(line, PATH_MAX + 127, q.vma_start, q.vma_end, perms,
				     q.vma_offset, q.dev_major, q.dev_minor, q.inode,
				     q.vma_name_size ? name : NULL);
		if (l < 0 || l >= PATH_MAX + 127) {
			ret = -ENAMETOOLONG;
			break;
		}
		line[l++] = '\n';
		if (n + l + 1 > cap) {
			nb = vml_realloc(buf, (cap + l) * 2);
			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			buf = nb;
			cap = (cap + l) * 2;
		}
		memcpy(buf + n, line, l);
		n += l;
		buf[n] = '\0';
		if (q.vma_end <= addr)
			break;		/* cannot happen; do not loop forever if it does */
		addr = q.vma_end;
	}
	vml_free(name);
	vml_free(line);
	if (ret) {
		vml_free(buf);
		return ret;
	}
	*text = buf;
	*len = n;
	return 0;
}
