// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The live target on the running kernel: ops become real system calls in
 * the child, views and PROCMAP_QUERY read the child, files live in private
 * directories that disappear with the target.
 */
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <time.h>	/* tap.h uses clock_gettime without including it */

#include "tap.h"
#include "spaces/target.h"
#include "spaces/view.h"
#include "util/alloc.h"

#define BASE 0x100000000000UL

static int run(struct target *t, const char *text, char *err, size_t errlen)
{
	struct script *s;
	struct op_result res;
	int ret = script_parse_string("t.ops", text, &s, err, errlen);

	if (ret)
		return ret;
	for (size_t i = 0; i < s->nr_ops; i++) {
		ret = target_apply(t, &s->ops[i], &res);
		if (ret)
			break;
		ret = res.ret;
		if (ret != (s->ops[i].has_expect ? s->ops[i].expect : 0)) {
			snprintf(err, errlen, "line %u: got %d", s->ops[i].line, ret);
			ret = ret ? ret : -EPROTO;
			break;
		}
		ret = 0;
	}
	script_free(s);
	return ret;
}

static char *maps(struct target *t)
{
	char *text, *cut;
	size_t len;

	if (target_read_view(t, VML_VIEW_MAPS, VML_LOCK_VMA, &text, &len))
		return NULL;
	cut = view_cut(VML_VIEW_MAPS, text, BASE, 0x200000000000UL);
	vml_free(text);
	return cut;
}

/* Reading twice, and rewinding, gives the same text. */
static void test_reads(struct target *t)
{
	struct target_reader *r;
	char *text, *text2, a[64], b[64];
	size_t len, len2;
	int ret;

	ret = target_read_view(t, VML_VIEW_SMAPS, VML_LOCK_VMA, &text, &len);
	ok(ret == 0 && strstr(text, "VmFlags:"), "smaps reads");
	ret = target_read_view(t, VML_VIEW_SMAPS, VML_LOCK_VMA, &text2, &len2);
	ok(ret == 0 && len == len2, "smaps reads the same twice");
	vml_free(text);
	vml_free(text2);
	ok(!target_reader_open(t, VML_VIEW_MAPS, VML_LOCK_MMAP, &r), "reader opens");
	ok(target_reader_read(r, a, sizeof(a)) == sizeof(a), "read 64 bytes");
	ok(!target_reader_rewind(r), "rewind");
	ok(target_reader_read(r, b, sizeof(b)) == sizeof(b) && !memcmp(a, b, sizeof(a)),
	   "the same 64 bytes after rewind");
	target_reader_close(r);
	ok(target_reader_open(t, (enum vml_view)42, VML_LOCK_MMAP, &r) == -EINVAL,
	   "unknown view: EINVAL");
}

/* PROCMAP_QUERY, the real ioctl, and the query view built on it. */
static void test_query(struct target *t)
{
	char name[256], *text, *text2;
	struct vml_procmap_query q = {
		.size = sizeof(q),
		.query_addr = BASE + 0x1800,
	};
	size_t len;
	int ret;

	ok(target_query(t, VML_LOCK_VMA, &q) == 0 && q.vma_start == BASE + 0x1000 &&
	   q.vma_end == BASE + 0x2000 && q.vma_flags == 0, "query: the --- piece");
	q = (struct vml_procmap_query){ .size = sizeof(q), .query_addr = BASE + 0x4000 };
	is_int(target_query(t, VML_LOCK_VMA, &q), -ENOENT, "query a hole: ENOENT");
	q = (struct vml_procmap_query){
		.size = sizeof(q), .query_addr = BASE + 0x4000,
		.query_flags = VML_PROCMAP_QUERY_COVERING_OR_NEXT_VMA |
			       VML_PROCMAP_QUERY_FILE_BACKED_VMA,
		.vma_name_size = sizeof(name), .vma_name_addr = (uintptr_t)name,
	};
	ok(target_query(t, VML_LOCK_VMA, &q) == 0 && q.vma_start == BASE + 0x10000 &&
	   q.inode != 0 && strstr(name, "/data"), "query: next file-backed VMA, with name");
	q = (struct vml_procmap_query){ .size = 8, .query_addr = BASE };
	is_int(target_query(t, VML_LOCK_VMA, &q), -EINVAL, "query: size too small");

	ret = target_read_query_view(t, VML_LOCK_VMA, BASE, 0x200000000000UL, &text, &len);
	text2 = maps(t);
	ok(ret == 0 && text2 && !strcmp(text, text2), "the query view equals maps");
	vml_free(text);
	vml_free(text2);
}

/* Placement: with no flag, an mmap over a mapping replaces it; and mmap's own errors. */
static void test_placement(struct target *t)
{
	struct op op = { .kind = OP_MMAP, .addr = BASE + 0x30000, .len = 4096,
			 .prot = PROT_READ, .flags = MAP_PRIVATE };
	struct op_result res;
	char err[256], *text;
	int ret;

	ret = run(t, "mmap 0x100000001000 8K r-- private,anon\n", err, sizeof(err));
	text = maps(t);
	ok(ret == 0 && text && strstr(text, "100000001000-100000003000 r--p"),
	   "an mmap over existing mappings overlays them");
	vml_free(text);
	ok(!target_apply(t, &op, &res) && res.ret == -EBADF,
	   "no anon and no file: EBADF, like fd -1");
	op.flags |= MAP_ANONYMOUS;
	ok(!target_apply(t, &op, &res) && res.ret == 0 && res.addr == BASE + 0x30000,
	   "mmap returns the address");
	op.file = "undeclared";
	op.flags &= ~MAP_ANONYMOUS;
	ok(!target_apply(t, &op, &res) && res.ret == -EBADF, "unknown file: EBADF");
}

/* A second target in the same environment sees the same paths (@dir: the env's /tmp one). */
static void test_shared_env(struct target_env *env, const char *dir)
{
	struct target *t2;
	char err[256];
	int ret;

	ok(!target_create(TARGET_LIVE, env, &t2), "second live target, shared env");
	ret = run(t2, "file data 8K\nmmap 0x100000010000 8K r-- private file=data\n",
		  err, sizeof(err));
	ok(ret == 0, "shared file declared again in the second target");
	target_destroy(t2);
	ok(access(dir, F_OK) == 0, "env survives while a target uses it");
}

int main(void)
{
	struct target *t;
	struct target_env *env;
	char err[256], dir[2][64], path[128], *text;
	int ret;

	t = NULL;
	ret = target_create(TARGET_MODEL, NULL, &t);
	ok(ret == 0, "model target available");
	target_destroy(t);

	ret = target_create(TARGET_LIVE, NULL, &t);
	if (ret == -ENOENT)
		tap_skip_all("vmalock-child not built");
	if (!is_int(ret, 0, "live target created"))
		return tap_done();
	ok(target_pid(t) > 0 && kill(target_pid(t), 0) == 0, "the child runs");
	ok(target_model_mm(t) == NULL, "no model mm");
	env = target_env(t);
	strcpy(dir[0], target_env_dir(env, false));
	strcpy(dir[1], target_env_dir(env, true));
	ok(access(dir[0], F_OK) == 0 && access(dir[1], F_OK) == 0, "temporary directories exist");

	text = maps(t);
	is_str(text, "", "the script range starts empty");
	vml_free(text);

	ret = run(t,
		  "file data 8K\n"
		  "file shm 16K shmem\n"
		  "mmap 0x100000000000 16K rw- private,anon\n"
		  "mprotect 0x100000001000 4K ---\n"
		  "mmap 0x100000010000 16K r-- private file=data\n"
		  "mmap 0x100000020000 16K rw- shared file=shm@4K\n"
		  "mmap 0x100000000000 4K rw- private,anon,noreplace expect=EEXIST\n"
		  "munmap 0x100000100000 4K\n"
		  "touch 0x100000000000 8K write expect=EFAULT\n"
		  "touch 0x100000010000 16K read expect=EIO\n"
		  "touch 0x100000020000 12K write\n"
		  "fork\n",
		  err, sizeof(err));
	if (!is_int(ret, 0, "ops give the kernel's results"))
		tap_diag("%s", err);
	snprintf(path, sizeof(path), "%s/data", dir[0]);
	ok(access(path, F_OK) == 0, "regular file in /tmp/vmalock.*");
	snprintf(path, sizeof(path), "%s/shm", dir[1]);
	ok(access(path, F_OK) == 0, "shmem file in /dev/shm/vmalock.*");

	text = maps(t);
	ok(text && strstr(text, "100000000000-100000001000 rw-p 00000000 00:00 0 \n"
				"100000001000-100000002000 ---p 00000000 00:00 0 \n"
				"100000002000-100000004000 rw-p 00000000 00:00 0 \n"),
	   "mprotect split the anonymous mapping in three");
	ok(text && strstr(text, "/data\n") && strstr(text, "rw-s 00001000"),
	   "file mappings show path and offset");
	vml_free(text);

	test_reads(t);
	test_query(t);
	test_placement(t);
	test_shared_env(env, dir[0]);

	{
		pid_t pid = target_pid(t);

		target_destroy(t);
		ok(kill(pid, 0) < 0 && errno == ESRCH, "the child is reaped");
	}
	ok(access(dir[0], F_OK) < 0 && access(dir[1], F_OK) < 0,
	   "temporary directories removed at destroy");
	target_destroy(NULL);
	return tap_done();
}
