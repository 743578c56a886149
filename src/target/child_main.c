// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmalock-child - the live target's address space.
 *
 *   vmalock-child SOCKET_FD PARENT_PID
 *
 * Executed (not just forked) by live.c so that its address space is that of
 * a fresh process: this binary, libc, ld.so, the stack, the vdso - and the
 * script range 0x100000000000-0x200000000000 empty. It carries out each
 * request (child_proto.h) as the real system call and replies with the
 * result. It links only libc and allocates nothing after start-up, so the
 * only mappings that change are the ones the script asks for.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target/child_proto.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

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

/* fork: the new process keeps its copy-on-write pages until we exit. */
static long do_fork(int sock)
{
	pid_t me = getpid(), pid;

	if (nr_forks == MAX_FORKS)
		return -EAGAIN;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(sock);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != me)
			_exit(0);
		for (;;)
			pause();
	}
	forks[nr_forks++] = pid;
	return 0;
}

static void handle(int sock, const struct child_req *q, struct child_rep *r)
{
	long ret = 0;

	r->addr = 0;
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
		ret = sys_ret(syscall(SYS_mlock, q->addr, q->len));
		break;
	case CHILD_MUNLOCK:
		ret = sys_ret(syscall(SYS_munlock, q->addr, q->len));
		break;
	case CHILD_NAME:
		ret = sys_ret(prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, q->addr, q->len,
				    q->has_str ? q->str : NULL));
		break;
	case CHILD_FORK:
		ret = do_fork(sock);
		break;
	default:
		ret = -ENOSYS;
	}
	r->ret = ret;
}

static void reap_forks(void)
{
	for (int i = 0; i < nr_forks; i++) {
		kill(forks[i], SIGKILL);
		while (waitpid(forks[i], NULL, 0) < 0 && errno == EINTR)
			;
	}
}

int main(int argc, char **argv)
{
	static struct child_req req;	/* static: no stack growth, no heap */
	struct child_rep rep = { 0 };
	struct sigaction sa;
	int sock;

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
		handle(sock, &req, &rep);
		if (send(sock, &rep, sizeof(rep), MSG_NOSIGNAL) != sizeof(rep))
			break;
	}
	reap_forks();
	return 0;
}
