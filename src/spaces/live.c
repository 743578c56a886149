// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * live.c - the live target: a vmalock-child process on the running kernel.
 *
 * The child is executed, not merely forked, so its address space is a fresh
 * process's and the script range is empty. Every op becomes one request over
 * a SOCK_SEQPACKET pair (child_proto.h) and the real system call in the
 * child; views are the child's /proc/PID files, read by this process;
 * PROCMAP_QUERY is the real ioctl on the child's /proc/PID/maps.
 *
 * Lifetime: the child has PR_SET_PDEATHSIG(SIGKILL) so it never outlives us;
 * target_destroy closes the socket (the child then kills its own fork()ed
 * children and exits) and reaps it, killing it if it does not exit in time.
 *
 * Processes: a `fork` op's child serves requests on a socket of its own,
 * whose other end comes back with the reply (child_proto.h). Ops go to the
 * selected process's socket, views and PROCMAP_QUERY to its /proc files.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spaces/child_proto.h"
#include "spaces/target.h"
#include "system/helper.h"
#include "util/alloc.h"
#include "util/compiler.h"

/* include/uapi/linux/fs.h (6.11+); our struct has the kernel's layout. */
#define PROCFS_IOCTL_MAGIC 'f'
#define VML_PROCMAP_QUERY_IOCTL _IOWR(PROCFS_IOCTL_MAGIC, 17, struct vml_procmap_query)
_Static_assert(sizeof(struct vml_procmap_query) == 104, "struct procmap_query is 104 bytes");

/* The script's first process and the forks' (the live child keeps 256 at most). */
#define LIVE_MAX_PROCS 257

struct live_proc {
	pid_t pid;
	int sock;		/* our end of its request channel */
};

struct live {
	int sock;		/* the first process's channel (proc[0].sock) */
	struct live_proc proc[LIVE_MAX_PROCS];
	size_t nr_procs;
	size_t cur;		/* the selected process: ops, views, queries */
	int maps_fd;		/* its /proc/PID/maps for PROCMAP_QUERY, opened on first use */
	struct child_req req;	/* one request buffer: 4 KiB, not on the stack */
};

bool target_live_available(void)
{
	char path[PATH_MAX];

	return helper_child_exe(path, sizeof(path)) == 0;
}

/* A reply on @sock; *@fd (if not NULL) gets a passed descriptor, or -1. */
static int recv_rep_fd(int sock, struct child_rep *rep, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = rep, .iov_len = sizeof(*rep) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int passed = -1;
	ssize_t n;

	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(&passed, CMSG_DATA(c), sizeof(int));
	if (fd)
		*fd = passed;
	else if (passed >= 0)
		close(passed);
	return n == sizeof(*rep) ? 0 : -ECHILD;	/* the child is gone */
}

static int recv_rep(struct live *l, struct child_rep *rep)
{
	return recv_rep_fd(l->sock, rep, NULL);
}

/* Send l->req to the selected process; the reply in *@rep, a passed fd in *@fd. */
static int call_fd(struct live *l, struct child_rep *rep, int *fd)
{
	int sock = l->proc[l->cur].sock;
	ssize_t n;

	do
		n = send(sock, &l->req, sizeof(l->req), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EPIPE || errno == ECONNRESET ? -ECHILD : -errno;
	return recv_rep_fd(sock, rep, fd);
}

static int call(struct live *l, struct child_rep *rep)
{
	return call_fd(l, rep, NULL);
}

static void reap(pid_t pid)
{
	struct timespec ts = { 0, 1000000 };

	/* The child exits on EOF within microseconds; give it 2 s before SIGKILL. */
	for (int i = 0; i < 2000; i++) {
		pid_t r = waitpid(pid, NULL, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			return;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static int live_create(struct target *t)
{
	char exe[PATH_MAX], fdarg[16], pidarg[24];
	struct child_rep rep;
	struct live *l;
	int sv[2], ret;
	pid_t pid;

	ret = helper_child_exe(exe, sizeof(exe));
	if (ret)
		return ret;
	l = vml_zalloc(sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->maps_fd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		ret = -errno;
		vml_free(l);
		return ret;
	}
	snprintf(fdarg, sizeof(fdarg), "%d", sv[1]);
	snprintf(pidarg, sizeof(pidarg), "%ld", (long)getpid());
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(sv[0]);
		close(sv[1]);
		vml_free(l);
		return ret;
	}
	if (pid == 0) {
		/* Only async-signal-safe calls between fork and exec. */
		char *argv[] = { exe, fdarg, pidarg, NULL };

		fcntl(sv[1], F_SETFD, 0);
		execv(exe, argv);
		_exit(127);
	}
	close(sv[1]);
	l->sock = sv[0];
	l->proc[0] = (struct live_proc){ .pid = pid, .sock = sv[0] };
	l->nr_procs = 1;
	t->pid = pid;
	t->priv = l;
	/* The hello message: exec worked and the child is ready. */
	ret = recv_rep(l, &rep);
	if (ret) {
		close(l->sock);
		reap(pid);
		vml_free(l);
		t->priv = NULL;
		t->pid = 0;
		return ret;
	}
	return 0;
}

static void live_destroy(struct target *t)
{
	struct live *l = t->priv;

	if (!l)
		return;
	if (l->maps_fd >= 0)
		close(l->maps_fd);
	for (size_t i = 1; i < l->nr_procs; i++)
		close(l->proc[i].sock);	/* each exits; the first process reaps them */
	close(l->sock);
	reap(t->pid);
	vml_free(l);
	t->priv = NULL;
}

static int set_str(struct child_req *q, const char *s)
{
	if (!s)
		return 0;
	if (strlen(s) >= sizeof(q->str))
		return -ENAMETOOLONG;
	strcpy(q->str, s);
	q->has_str = 1;
	return 0;
}

/* Create the file (once per environment), then open it in the child for good. */
static int live_file(struct target *t, const struct op *op, struct target_file *file, int *ret)
{
	struct live *l = t->priv;
	struct child_req *q = &l->req;
	struct child_rep rep;
	int r;

	memset(q, 0, offsetof(struct child_req, str));
	if (op->memfd) {
		q->kind = CHILD_MEMFD;
		q->len = op->size;
		r = set_str(q, op->file);
	} else {
		*ret = target_env_make_file(t->env, op->file, op->shmem, op->size);
		if (*ret)
			return 0;
		q->kind = CHILD_OPEN;
		r = set_str(q, file->path);
	}
	if (!r)
		r = call(l, &rep);
	if (r)
		return r;
	*ret = (int)rep.ret;
	file->handle = (long)rep.addr;
	return 0;
}

/*
 * MADV_PAGEOUT starts writeback (to swap, or of dirty file pages) and
 * returns: until the disk finishes, the pages are still in memory under
 * writeback, and numa_maps counts them (writeback=). The next op and the
 * views must not depend on how fast the disk is, so wait - up to a second -
 * until nothing is under writeback (nr_writeback in /proc/vmstat, for the
 * whole system: a busy machine may keep it above 0, hence the bound). The
 * model has no disk: its pageout is complete when it returns.
 */
void target_wait_writeback(void)
{
	struct timespec ts = { 0, 200000 };

	for (int i = 0; i < 5000; i++) {
		char line[128];
		long nr = -1;
		FILE *f = fopen("/proc/vmstat", "r");

		if (!f)
			return;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "nr_writeback %ld", &nr) == 1)
				break;
		fclose(f);
		if (nr <= 0)
			return;
		nanosleep(&ts, NULL);
	}
}

/* Fork the selected process (l->req is the request); the new one is numbered next. */
static int live_fork(struct target *t, struct op_result *res)
{
	struct live *l = t->priv;
	struct child_rep rep;
	int fd = -1, ret;

	ret = call_fd(l, &rep, &fd);
	if (ret)
		return ret;
	res->ret = (int)rep.ret;
	if (rep.ret) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (fd < 0)
		return -EPROTO;		/* a fork without its channel */
	if (l->nr_procs == LIVE_MAX_PROCS) {
		close(fd);		/* it exits; counted as a failed fork */
		res->ret = -EAGAIN;
		return 0;
	}
	l->proc[l->nr_procs++] = (struct live_proc){ .pid = (pid_t)rep.addr, .sock = fd };
	return 0;
}

/* `select`: later ops, views and queries go to process @child (0: the first). */
static int live_select(struct target *t, unsigned int child, struct op_result *res)
{
	struct live *l = t->priv;

	if (child >= l->nr_procs) {
		res->ret = -ESRCH;	/* that fork failed */
		return 0;
	}
	if (l->cur != child && l->maps_fd >= 0) {
		close(l->maps_fd);
		l->maps_fd = -1;
	}
	l->cur = child;
	return 0;
}

static int live_apply(struct target *t, const struct op *op, int mmap_flags,
		      const struct target_file *file, struct op_result *res)
{
	struct live *l = t->priv;
	struct child_req *q = &l->req;
	struct child_rep rep;
	int ret = 0;

	memset(q, 0, offsetof(struct child_req, str));
	q->str[0] = '\0';
	q->addr = op->addr;
	q->len = op->len;
	switch (op->kind) {
	case OP_MMAP:
		q->kind = CHILD_MMAP;
		q->prot = op->prot;
		q->flags = mmap_flags;
		q->offset = op->offset;
		q->fd = file ? (int32_t)file->handle : -1;
		break;
	case OP_MUNMAP:
		q->kind = CHILD_MUNMAP;
		break;
	case OP_MPROTECT:
		q->kind = CHILD_MPROTECT;
		q->prot = op->prot;
		break;
	case OP_MREMAP:
		q->kind = CHILD_MREMAP;
		q->flags = op->flags;
		q->new_len = op->new_len;
		q->new_addr = op->new_addr;
		break;
	case OP_MADVISE:
		q->kind = CHILD_MADVISE;
		q->advice = op->advice;
		break;
	case OP_TOUCH:
		q->kind = CHILD_TOUCH;
		q->write = op->access == OP_ACCESS_WRITE;
		break;
	case OP_MLOCK:
		q->kind = CHILD_MLOCK;
		q->flags = op->flags;
		break;
	case OP_MLOCKALL:
		q->kind = CHILD_MLOCKALL;
		q->flags = op->flags;
		break;
	case OP_MUNLOCKALL:
		q->kind = CHILD_MUNLOCKALL;
		break;
	case OP_PROCESS_MADVISE:
		q->kind = CHILD_PROCESS_MADVISE;
		q->advice = op->advice;
		break;
	case OP_SELECT:
		return live_select(t, op->child, res);
	case OP_MUNLOCK:
		q->kind = CHILD_MUNLOCK;
		break;
	case OP_NAME:
		q->kind = CHILD_NAME;
		ret = set_str(q, op->name);
		break;
	case OP_FORK:
		q->kind = CHILD_FORK;
		return live_fork(t, res);
	case OP_MSEAL:
		q->kind = CHILD_MSEAL;
		break;
	case OP_TRUNCATE:
	case OP_PUNCH:
		if (!file) {
			res->ret = -EBADF;	/* its `file` op failed: no descriptor */
			return 0;
		}
		q->kind = op->kind == OP_TRUNCATE ? CHILD_FTRUNCATE : CHILD_PUNCH;
		q->fd = (int32_t)file->handle;
		q->len = op->kind == OP_TRUNCATE ? op->size : op->len;
		q->offset = op->offset;
		break;
	case OP_CLEAR_REFS:
		q->kind = CHILD_CLEAR_REFS;
		q->advice = op->flags;
		break;
	default:
		return -EINVAL;
	}
	if (ret)
		return ret;
	ret = call(l, &rep);
	if (ret)
		return ret;
	res->ret = (int)rep.ret;
	res->addr = rep.addr;
	if (op->kind == OP_MADVISE && op->advice == MADV_PAGEOUT && !rep.ret)
		target_wait_writeback();
	return 0;
}

static int proc_open(pid_t pid, const char *what)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int live_reader_open(struct target *t, enum vml_view view, enum vml_lock_policy lock,
			    struct target_reader *r)
{
	struct live *l = t->priv;
	int fd = proc_open(l->proc[l->cur].pid, target_view_name(view));

	(void)lock;	/* the kernel has its own policy */
	if (fd < 0)
		return fd;
	r->fd = fd;
	return 0;
}

static ssize_t live_reader_read(struct target_reader *r, char *buf, size_t len)
{
	ssize_t n;

	do
		n = read(r->fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static int live_reader_rewind(struct target_reader *r)
{
	return lseek(r->fd, 0, SEEK_SET) < 0 ? -errno : 0;
}

static void live_reader_close(struct target_reader *r)
{
	close(r->fd);
}

static int live_query(struct target *t, enum vml_lock_policy lock, struct vml_procmap_query *q)
{
	struct live *l = t->priv;

	(void)lock;
	if (l->maps_fd < 0) {
		int fd = proc_open(l->proc[l->cur].pid, "maps");

		if (fd < 0)
			return fd;
		l->maps_fd = fd;
	}
	return ioctl(l->maps_fd, VML_PROCMAP_QUERY_IOCTL, q) ? -errno : 0;
}

/* ---- the benchmark requests (child_lat_rep replies) ---- */

static int call_lat(struct target *t, struct child_lat_rep *rep)
{
	struct live *l = t->priv;
	ssize_t n;

	do
		n = send(l->sock, &l->req, sizeof(l->req), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EPIPE || errno == ECONNRESET ? -ECHILD : -errno;
	do
		n = recv(l->sock, rep, sizeof(*rep), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n != sizeof(*rep))
		return -ECHILD;
	return (int)rep->ret;
}

static struct child_req *lat_req(struct target *t, uint32_t kind)
{
	struct live *l = t->priv;

	memset(&l->req, 0, offsetof(struct child_req, str));
	l->req.kind = kind;
	l->req.fd = -1;
	return &l->req;
}

int target_live_timed_loop(struct target *t, enum child_loop_op op, unsigned long addr,
			   unsigned long n, struct child_lat_rep *rep)
{
	struct child_req *q;

	if (t->kind != TARGET_LIVE || !t->priv)
		return -EINVAL;
	q = lat_req(t, CHILD_TIMED_LOOP);
	q->advice = (int32_t)op;
	q->addr = addr;
	q->len = n;
	return call_lat(t, rep);
}

int target_live_mapper_setup(struct target *t, unsigned long addr, unsigned long len,
			     uint64_t seed, struct child_lat_rep *rep)
{
	struct child_req *q;

	if (t->kind != TARGET_LIVE || !t->priv)
		return -EINVAL;
	q = lat_req(t, CHILD_MAPPER_SETUP);
	q->addr = addr;
	q->len = len;
	q->offset = seed;
	return call_lat(t, rep);
}

int target_live_mapper_run(struct target *t, uint64_t duration_ns, uint64_t sleep_ns,
			   struct child_lat_rep *rep)
{
	struct child_req *q;

	if (t->kind != TARGET_LIVE || !t->priv)
		return -EINVAL;
	q = lat_req(t, CHILD_MAPPER_RUN);
	q->len = duration_ns;
	q->new_len = sleep_ns;
	return call_lat(t, rep);
}

/* End every forked process: the first one kills and reaps them all. */
static void live_forget_forks(struct target *t)
{
	struct live *l = t->priv;
	struct child_rep rep;

	for (size_t i = 1; i < l->nr_procs; i++)
		close(l->proc[i].sock);
	l->nr_procs = 1;
	if (l->cur && l->maps_fd >= 0) {
		close(l->maps_fd);
		l->maps_fd = -1;
	}
	l->cur = 0;
	memset(&l->req, 0, offsetof(struct child_req, str));
	l->req.kind = CHILD_REAP;
	call(l, &rep);	/* a dead child shows at the next op */
}

int target_live_kh_layout(struct target *t, unsigned long base, unsigned long vmas,
			  unsigned int ranges, unsigned int uncollapsible, unsigned long *first,
			  struct child_lat_rep *rep)
{
	struct child_req *q;
	int ret;

	if (t->kind != TARGET_LIVE || !t->priv)
		return -EINVAL;
	q = lat_req(t, CHILD_KH_LAYOUT);
	q->addr = base;
	q->len = vmas;
	q->new_len = ranges;
	q->offset = uncollapsible;
	ret = call_lat(t, rep);
	if (!ret)
		*first = rep->addr;
	return ret;
}

const struct target_ops target_live_ops = {
	.create = live_create,
	.destroy = live_destroy,
	.file = live_file,
	.apply = live_apply,
	.reader_open = live_reader_open,
	.reader_read = live_reader_read,
	.reader_rewind = live_reader_rewind,
	.reader_close = live_reader_close,
	.query = live_query,
	.forget_forks = live_forget_forks,
};
