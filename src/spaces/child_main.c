// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock-child - the live target's address space.
 *
 *   vmalock-child SOCKET_FD PARENT_PID
 *   vmalock-child --keeper        (keeper_main.c)
 *
 * Executed (not just forked) by live.c so that its address space is that of
 * a fresh process: this binary, libc, ld.so, the stack, the vdso - and the
 * script range 0x100000000000-0x200000000000 empty. It carries out each
 * request (child_proto.h) as the real system call and replies with the
 * result. It links only libc and allocates nothing after start-up, so the
 * only mappings that change are the ones the script asks for. A process it
 * forks (CHILD_FORK) does the same for requests on a socket of its own.
 *
 * For the benchmarks it also times operations itself (CHILD_TIMED_LOOP) and
 * runs as Paul McKenney's mapper (CHILD_MAPPER_SETUP/RUN): a populated
 * region where random pages are mapped over or unmapped, every call timed
 * with CLOCK_MONOTONIC, while vmalock's reader threads read our /proc files.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spaces/child_proto.h"
#include "system/keeper_proto.h"
#include "util/clock.h"
#include "util/linux_compat.h"
#include "util/rand.h"

#define MAX_FORKS 256

static pid_t forks[MAX_FORKS];
static int nr_forks;
static unsigned long page_size;

/* touch: a fault on the probed byte jumps back here with the signal number. */
static sigjmp_buf touch_env;
static volatile sig_atomic_t touch_signal;

static void on_fault(int sig)
{
	touch_signal = sig;
	siglongjmp(touch_env, 1);
}

/* Read or write one byte in each page of [addr, addr+len), in order. */
static long do_touch(unsigned long addr, unsigned long len, int write)
{
	static volatile unsigned long cur;	/* survives the siglongjmp */
	unsigned long end = addr + len;

	if (end < addr)
		end = ~0UL;
	if (sigsetjmp(touch_env, 1))
		return touch_signal == SIGBUS ? -EIO : -EFAULT;
	for (cur = addr; cur < end;) {
		volatile char *p = (volatile char *)cur;
		unsigned long next = (cur & ~(page_size - 1)) + page_size;

		if (write)
			*p = 0x5a;
		else
			(void)*p;
		if (next < cur)
			break;
		cur = next;
	}
	return 0;
}

static long sys_ret(long r)
{
	return r == -1 ? -errno : r;
}

/*
 * fork: the new process serves requests on a socket pair of its own; one end
 * goes back with the reply (*@pass_fd), the new process keeps the other as
 * *@sock and returns 0 here (and replies nothing: vmalock did not ask it).
 * It keeps its copy-on-write pages until that socket is closed or we die.
 * Return: the new pid, 0 in the new process, or -errno.
 */
static long do_fork(int *sock, int *pass_fd)
{
	pid_t me = getpid(), pid;
	int sv[2];
	long ret;

	if (nr_forks == MAX_FORKS)
		return -EAGAIN;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(sv[0]);
		close(sv[1]);
		return ret;
	}
	if (pid == 0) {
		close(*sock);
		close(sv[0]);
		*sock = sv[1];
		nr_forks = 0;		/* our own children, from now on */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != me)
			_exit(0);
		return 0;
	}
	close(sv[1]);
	forks[nr_forks++] = pid;
	*pass_fd = sv[0];
	return pid;
}

/* A memfd of @size bytes of the `file` op's pattern, cached as a write() leaves it. */
static long do_memfd(const char *name, unsigned long size)
{
	static char chunk[1 << 16];	/* static: no request allocates */
	unsigned long done = 0;
	int fd = memfd_create(name, MFD_CLOEXEC);
	long ret;

	if (fd < 0)
		return -errno;
	if (!chunk[0])
		for (size_t i = 0; i < sizeof(chunk); i++)
			chunk[i] = (char)('a' + i % 26);
	while (done < size) {
		size_t n = size - done < sizeof(chunk) ? size - done : sizeof(chunk);
		ssize_t w = write(fd, chunk, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			ret = -errno;
			close(fd);
			return ret;
		}
		done += (unsigned long)w;
	}
	return fd;
}

/* process_madvise(2) on ourselves: one iovec, through a pidfd of our own. */
static long do_process_madvise(unsigned long addr, unsigned long len, int advice)
{
	struct iovec iov = { .iov_base = (void *)addr, .iov_len = len };
	long pidfd = syscall(SYS_pidfd_open, getpid(), 0), ret;

	if (pidfd < 0)
		return -errno;
	ret = sys_ret(syscall(SYS_process_madvise, pidfd, &iov, 1, advice, 0));
	close((int)pidfd);
	return ret < 0 ? ret : 0;	/* success: the bytes advised */
}

/* Write @value, in decimal, to our own /proc/self/clear_refs. */
static long do_clear_refs(int value)
{
	char buf[16];
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC), n;
	long ret;

	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d", value);
	ret = write(fd, buf, (size_t)n) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/* Kill and reap every process we forked (their own forks die with them). */
static void reap_forks(void)
{
	for (int i = 0; i < nr_forks; i++) {
		kill(forks[i], SIGKILL);
		while (waitpid(forks[i], NULL, 0) < 0 && errno == EINTR)
			;
	}
	nr_forks = 0;
}

/* The benchmarks' replies: static, so that no request allocates. */
static struct child_lat_rep lat_rep;

/* Mapper mode: the region set up by CHILD_MAPPER_SETUP. */
static struct {
	unsigned long addr;
	unsigned long pages;		/* a power of two */
	struct vml_rand rand;
} mapper;

static long timed_loop(const struct child_req *q, struct child_lat_rep *r)
{
	unsigned long addr = q->addr, ps = page_size;

	for (uint64_t i = 0; i < q->len; i++) {
		uint64_t t0 = vml_now_ns(), t1;
		void *p;

		switch (q->advice) {
		case CHILD_LOOP_MMAP_MUNMAP:
			p = mmap((void *)addr, ps, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (p == MAP_FAILED)
				return -errno;
			if (munmap(p, ps))
				return -errno;
			break;
		case CHILD_LOOP_MPROTECT_SPLIT_MERGE:
			if (mprotect((void *)(addr + ps), ps, PROT_READ) ||
			    mprotect((void *)(addr + ps), ps, PROT_READ | PROT_WRITE))
				return -errno;
			break;
		case CHILD_LOOP_WRITE_FAULT:
			*(volatile char *)(addr + i * ps) = 1;
			break;
		default:
			return -EINVAL;
		}
		t1 = vml_now_ns();
		lat_hist_record(&r->hist, t1 - t0);
	}
	return 0;
}

/* mapper.c's set-up: a populated private anonymous region; waits for RUN. */
static long mapper_setup(const struct child_req *q, struct child_lat_rep *r)
{
	unsigned long pages = q->len / page_size;
	void *p;

	if (!pages || (pages & (pages - 1)) || mapper.addr)
		return -EINVAL;
	p = mmap((void *)q->addr, q->len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | (q->addr ? MAP_FIXED_NOREPLACE : 0),
		 -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (q->addr && (unsigned long)p != q->addr) {	/* before 4.17: a hint, taken elsewhere */
		munmap(p, q->len);
		return -EEXIST;
	}
	mapper.addr = (unsigned long)p;
	mapper.pages = pages;
	mapper.rand = vml_rand_init(q->offset, 0);
	r->addr = mapper.addr;
	return 0;
}

/*
 * mapper.c's loop: for the duration, a random page is mapped over (MAP_FIXED,
 * populated) or unmapped with probability 1/2 each; every call is timed; a
 * short sleep between calls "discourages preempting map operations".
 */
static long mapper_run(const struct child_req *q, struct child_lat_rep *r)
{
	struct timespec pause_ts = vml_ns_to_timespec(q->new_len);
	uint64_t end = vml_now_ns() + q->len;

	if (!mapper.addr)
		return -EINVAL;
	do {	/* at least one call, however late we are scheduled */
		uint64_t x = vml_rand_next(&mapper.rand), t0, t1;
		unsigned long a = mapper.addr + (x & (mapper.pages - 1)) * page_size;
		long ret;

		t0 = vml_now_ns();
		if (x & (1ULL << 40)) {
			ret = syscall(SYS_mmap, a, page_size, PROT_READ | PROT_WRITE,
				      MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
				      -1, 0);
			r->nmaps++;
		} else {
			ret = syscall(SYS_munmap, a, page_size);
			r->nunmaps++;
		}
		t1 = vml_now_ns();
		if (ret == -1)
			r->nfails++;	/* counted, not fatal: the call was still timed */
		lat_hist_record(&r->hist, t1 - t0);
		if (q->new_len)
			nanosleep(&pause_ts, NULL);
	} while (vml_now_ns() < end);
	return 0;
}

/*
 * seed 003's layout (bench/khugepaged.c builds the same on the model): @len
 * one-page VMAs khugepaged cannot use (too small for a PMD; alternately rw-
 * and r--, a page apart), then 2 MiB-aligned ranges of small populated
 * pages, MADV_HUGEPAGE: the first @offset made uncollapsible by a sub-PMD
 * MADV_DONTNEED of each half (every PTE none, the table kept: more pte_none
 * than max_ptes_none), the @new_len others collapsible.
 */
static long kh_layout(const struct child_req *q, struct child_lat_rep *r)
{
	unsigned long ps = page_size, m2 = 2UL << 20, n = q->len;
	unsigned long nr = q->new_len + q->offset, rbase;
	void *p;

	rbase = ((q->addr + 2 * n * ps + m2 - 1) & ~(m2 - 1)) + m2;
	for (unsigned long i = 0; i < n; i++) {
		p = mmap((void *)(q->addr + 2 * i * ps), ps, PROT_READ | ((i & 1) ? PROT_WRITE : 0),
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
	}
	p = mmap((void *)rbase, nr * m2, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	for (unsigned long i = 0; i < q->offset; i++) {
		if (madvise((void *)(rbase + i * m2), m2 / 2, MADV_DONTNEED) ||
		    madvise((void *)(rbase + i * m2 + m2 / 2), m2 / 2, MADV_DONTNEED))
			return -errno;
	}
	if (madvise((void *)rbase, nr * m2, MADV_HUGEPAGE))
		return -errno;
	r->addr = rbase;
	return 0;
}

/* The benchmark requests: reply with lat_rep. Return: false if not one of them. */
static bool handle_lat(const struct child_req *q, struct child_lat_rep *r)
{
	long ret;

	memset(r, 0, offsetof(struct child_lat_rep, hist));
	lat_hist_init(&r->hist);
	switch (q->kind) {
	case CHILD_TIMED_LOOP:
		ret = timed_loop(q, r);
		break;
	case CHILD_MAPPER_SETUP:
		ret = mapper_setup(q, r);
		break;
	case CHILD_MAPPER_RUN:
		ret = mapper_run(q, r);
		break;
	case CHILD_KH_LAYOUT:
		ret = kh_layout(q, r);
		break;
	default:
		return false;
	}
	r->ret = ret;
	return true;
}

/*
 * Carry out one request. Return: false in a process CHILD_FORK just made,
 * which replies nothing (and serves *@sock, its own socket, from now on).
 */
static bool handle(int *sock, const struct child_req *q, struct child_rep *r, int *pass_fd)
{
	long ret = 0;

	r->addr = 0;
	*pass_fd = -1;
	switch (q->kind) {
	case CHILD_MMAP:
		ret = sys_ret(syscall(SYS_mmap, q->addr, q->len, q->prot, q->flags, q->fd,
				      q->offset));
		if (ret >= 0 || ret < -4095) {
			r->addr = (unsigned long)ret;
			ret = 0;
		}
		break;
	case CHILD_OPEN:
		/* kept open until we exit: every mapping of the file shares it */
		ret = open(q->str, O_RDWR | O_CLOEXEC);
		if (ret < 0) {
			ret = -errno;
		} else {
			r->addr = ret;
			ret = 0;
		}
		break;
	case CHILD_MUNMAP:
		ret = sys_ret(syscall(SYS_munmap, q->addr, q->len));
		break;
	case CHILD_MPROTECT:
		ret = sys_ret(syscall(SYS_mprotect, q->addr, q->len, q->prot));
		break;
	case CHILD_MREMAP:
		ret = sys_ret(syscall(SYS_mremap, q->addr, q->len, q->new_len, q->flags,
				      q->new_addr));
		if (ret >= 0 || ret < -4095) {
			r->addr = (unsigned long)ret;
			ret = 0;
		}
		break;
	case CHILD_MADVISE:
		ret = sys_ret(syscall(SYS_madvise, q->addr, q->len, q->advice));
		break;
	case CHILD_TOUCH:
		ret = do_touch(q->addr, q->len, q->write);
		break;
	case CHILD_MLOCK:
		if (q->flags)
			ret = sys_ret(syscall(SYS_mlock2, q->addr, q->len, q->flags));
		else
			ret = sys_ret(syscall(SYS_mlock, q->addr, q->len));
		break;
	case CHILD_MLOCKALL:
		ret = sys_ret(syscall(SYS_mlockall, q->flags));
		break;
	case CHILD_MUNLOCKALL:
		ret = sys_ret(syscall(SYS_munlockall));
		break;
	case CHILD_MEMFD:
		ret = do_memfd(q->str, q->len);
		if (ret >= 0) {
			r->addr = (unsigned long)ret;
			ret = 0;
		}
		break;
	case CHILD_PROCESS_MADVISE:
		ret = do_process_madvise(q->addr, q->len, q->advice);
		break;
	case CHILD_REAP:
		reap_forks();
		break;
	case CHILD_MSEAL:
		ret = sys_ret(syscall(VML_NR_mseal, q->addr, q->len, 0UL));
		break;
	case CHILD_FTRUNCATE:
		ret = sys_ret(ftruncate(q->fd, (off_t)q->len));
		break;
	case CHILD_PUNCH:
		ret = sys_ret(fallocate(q->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					(off_t)q->offset, (off_t)q->len));
		break;
	case CHILD_CLEAR_REFS:
		ret = do_clear_refs(q->advice);
		break;
	case CHILD_MUNLOCK:
		ret = sys_ret(syscall(SYS_munlock, q->addr, q->len));
		break;
	case CHILD_NAME:
		ret = sys_ret(prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, q->addr, q->len,
				    q->has_str ? q->str : NULL));
		break;
	case CHILD_FORK:
		ret = do_fork(sock, pass_fd);
		if (!ret)
			return false;	/* the new process */
		if (ret > 0) {
			r->addr = (unsigned long)ret;
			ret = 0;
		}
		break;
	default:
		ret = -ENOSYS;
	}
	r->ret = ret;
	return true;
}

/* Send @r, with @fd as SCM_RIGHTS when it is not -1 (then closed here). Return: 0 or -1. */
static int send_rep(int sock, const struct child_rep *r, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)r, .iov_len = sizeof(*r) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	if (fd >= 0)
		close(fd);
	return n == (ssize_t)sizeof(*r) ? 0 : -1;
}

int main(int argc, char **argv)
{
	static struct child_req req;	/* static: no stack growth, no heap */
	struct child_rep rep = { 0 };
	struct sigaction sa;
	int sock, pass_fd;

	if (argc == 2 && !strcmp(argv[1], "--keeper"))
		return keeper_main();
	if (argc != 3) {
		fprintf(stderr, "%s: run by vmalock's live target, not by hand\n", argv[0]);
		return 2;
	}
	sock = atoi(argv[1]);
	/* Die with the parent; if it is already gone, do not linger. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != (pid_t)atol(argv[2]))
		return 1;
	page_size = sysconf(_SC_PAGESIZE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);

	if (send(sock, &rep, sizeof(rep), MSG_NOSIGNAL) != sizeof(rep))
		return 1;
	for (;;) {
		ssize_t n = recv(sock, &req, sizeof(req), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(req))
			break;		/* the parent closed: exit */
		if (handle_lat(&req, &lat_rep)) {
			if (send(sock, &lat_rep, sizeof(lat_rep), MSG_NOSIGNAL) != sizeof(lat_rep))
				break;
			continue;
		}
		if (!handle(&sock, &req, &rep, &pass_fd))
			continue;	/* a new process: its socket has no request yet */
		if (send_rep(sock, &rep, pass_fd))
			break;
	}
	reap_forks();
	return 0;
}
