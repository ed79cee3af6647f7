/* sysprobe: issue one raw system call per input line and say what happened.
 *
 *   sysprobe OP [ARG...]     prints RESULT: "ok", "ok:DATA", an errno name
 *                            (EPERM, ENOSYS, ...), or "killed:SIGNAME" for
 *                            calls made in a child that the kernel killed.
 * test.sh runs it inside and outside the sandbox: the outside run is the
 * control that shows the mechanism works there. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

static long stop_new_probe;	/* an address to read in another process (stop_new) */

static const char *
errname(int e)
{
	static const struct { int e; const char *n; } t[] = {
		{ EPERM, "EPERM" }, { ENOSYS, "ENOSYS" }, { EACCES, "EACCES" }, { ENOENT, "ENOENT" },
		{ EINVAL, "EINVAL" }, { EFAULT, "EFAULT" }, { ESRCH, "ESRCH" }, { EAFNOSUPPORT, "EAFNOSUPPORT" },
		{ ECONNREFUSED, "ECONNREFUSED" }, { ENODEV, "ENODEV" }, { EBADF, "EBADF" }, { ENOTTY, "ENOTTY" },
		{ EROFS, "EROFS" }, { EBUSY, "EBUSY" }, { EIO, "EIO" }, { ENOKEY, "ENOKEY" }, { ENOMEM, "ENOMEM" },
	};
	static char buf[32];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].e == e)
			return t[i].n;
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

/* Whether pid has stopped (state T in /proc/PID/stat), waiting up to a second. */
static int
wait_stopped(int pid)
{
	char path[64], st[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (int tries = 0; tries < 1000; tries++) {
		int fd = open(path, O_RDONLY);
		ssize_t n = fd >= 0 ? read(fd, st, sizeof(st) - 1) : -1;
		char *close_paren;

		if (fd >= 0)
			close(fd);
		if (n <= 0)
			return 0;
		st[n] = '\0';
		close_paren = strrchr(st, ')');
		if (!close_paren || close_paren[2] == 'Z' || close_paren[2] == 'X')
			return 0;
		if (close_paren[2] == 'T' || close_paren[2] == 't')
			return 1;
		usleep(1000);
	}
	return 0;
}

static int
report(long rc)
{
	if (rc < 0)
		printf("%s\n", errname(errno));
	else
		printf("ok\n");
	return 0;
}

/* Run fn in a child; report how it ended (a seccomp kill is SIGSYS). */
static int
in_child(long (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		long rc = fn();

		_exit(rc < 0 ? 100 + (errno & 0x7f) : 0);
	}
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		printf("killed:%s\n", sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
	else if (WEXITSTATUS(st) >= 100)
		printf("ret:%s\n", errname(WEXITSTATUS(st) - 100));
	else
		printf("ret:ok\n");
	return 0;
}

#if defined(__x86_64__)
static long
int80_socketcall(void)
{
	long ret;
	/* i386 socketcall(SYS_SOCKET=1, args) through int 0x80: args points
	 * nowhere useful, so a working ABI answers EFAULT, not a socket */
	__asm__ volatile ("int $0x80" : "=a"(ret) : "a"(102), "b"(1), "c"(0) : "memory");
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

static long
x32_socket(void)
{
	return syscall(0x40000000 | 41, AF_UNIX, SOCK_STREAM, 0);
}
#endif

static void *
thread_main(void *arg)
{
	return arg;
}

int
main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";
	const char *a1 = argc > 2 ? argv[2] : "";

	if (!strcmp(op, "socket_unix"))
		return report(socket(AF_UNIX, SOCK_STREAM, 0));
	if (!strcmp(op, "socket_unix_hi"))	/* domain with garbage in the upper half */
		return report(syscall(SYS_socket, (1UL << 32) | AF_UNIX, SOCK_STREAM, 0));
	if (!strcmp(op, "socket_inet"))
		return report(socket(AF_INET, SOCK_STREAM, 0));
	if (!strcmp(op, "socketpair")) {
		int sv[2];

		return report(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	}
	if (!strcmp(op, "socket_vsock"))
		return report(socket(40 /* AF_VSOCK */, SOCK_STREAM, 0));
	if (!strcmp(op, "connect_unix")) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		if (fd < 0)
			return report(-1);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", a1);
		return report(connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
	}
	if (!strcmp(op, "io_uring_setup")) {
		char params[120] = { 0 };

		return report(syscall(425, 1, params));
	}
	if (!strcmp(op, "unshare_user"))
		return report(unshare(CLONE_NEWUSER));
	if (!strcmp(op, "unshare_mnt"))
		return report(unshare(CLONE_NEWNS));
	if (!strcmp(op, "mount_tmpfs"))
		return report(mount("tmpfs", a1, "tmpfs", 0, NULL));
	if (!strcmp(op, "umount"))
		return report(umount2(a1, MNT_DETACH));
	if (!strcmp(op, "fsopen"))
		return report(syscall(430, "tmpfs", 0));
	if (!strcmp(op, "open_tree"))
		return report(syscall(428, AT_FDCWD, a1, 1 /* OPEN_TREE_CLONE */));
	if (!strcmp(op, "setns")) {
		int fd = open(a1, O_RDONLY);

		if (fd < 0)
			return report(-1);
		return report(setns(fd, 0));
	}
	if (!strcmp(op, "chroot"))
		return report(chroot(a1));
	if (!strcmp(op, "tiocsti")) {
		char c = ' ';

		return report(ioctl(0, TIOCSTI, &c));
	}
	if (!strcmp(op, "keyctl"))	/* KEYCTL_GET_KEYRING_ID of the session keyring */
		return report(syscall(SYS_keyctl, 0, -3, 0));
	if (!strcmp(op, "memfd_secret"))	/* 447 on x86_64 and aarch64 */
		return report(syscall(447, 0));
	if (!strcmp(op, "clone3")) {
		char args[88] = { 0 };

		long rc = syscall(435, args, sizeof(args));

		if (rc == 0)
			_exit(0);	/* the child of a working clone3 */
		return report(rc);
	}
#if defined(__x86_64__)
	if (!strcmp(op, "int80"))
		return in_child(int80_socketcall);
	if (!strcmp(op, "x32"))
		return in_child(x32_socket);
#else
	if (!strcmp(op, "int80") || !strcmp(op, "x32")) {
		printf("n/a\n");
		return 0;
	}
#endif
	if (!strcmp(op, "ptrace")) {
		long rc = ptrace(PTRACE_ATTACH, atoi(a1), 0, 0);

		if (rc == 0)
			ptrace(PTRACE_DETACH, atoi(a1), 0, 0);
		return report(rc);
	}
	if (!strcmp(op, "vmread")) {
		char buf[8];
		struct iovec l = { buf, sizeof(buf) }, r = { (void *)0x400000, sizeof(buf) };
		long rc = process_vm_readv(atoi(a1), &l, 1, &r, 1, 0);

		if (rc < 0 && errno == EFAULT)	/* allowed, but nothing mapped there */
			rc = 0;
		return report(rc);
	}
	if (!strcmp(op, "kill"))
		return report(kill(atoi(a1), argc > 3 ? atoi(argv[3]) : 0));
	if (!strcmp(op, "threads")) {
		pthread_t t[8];
		int i;

		for (i = 0; i < 8; i++)
			if ((errno = pthread_create(&t[i], NULL, thread_main, NULL)) != 0)
				return report(-1);
		for (i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
		return report(0);
	}
	/* stop_new SECONDS COMM: SIGSTOP the first new process named COMM, then
	 * try to reach its memory: /proc/PID/mem for writing, process_vm_readv,
	 * ptrace. Prints "ok:stopped PID mem=R vmread=R ptrace=R control=R",
	 * each R "ok" or an errno name; control is /proc/CHILD/mem of a child
	 * of our own, which must work (the attempts can succeed here). A
	 * session's exec shares sbx-init's memory until it execs (clone with
	 * CLONE_VM): reaching it would be reaching init. */
	if (!strcmp(op, "stop_new")) {
		time_t end = time(NULL) + atoi(a1);
		int fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY), last = -1;
		char buf[32], path[64], comm[32];

		if (fd < 0 || argc < 4)
			return report(-1);
		while (time(NULL) < end) {
			ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
			int now;

			if (n <= 0)
				return report(-1);
			buf[n] = '\0';
			now = atoi(buf);
			for (int pid = last < 0 ? now + 1 : last + 1; pid <= now; pid++) {
				int cfd;

				/* stopped first, looked at after: the child may exec at any
				 * moment. A child inside execve when the signal is sent stops
				 * only on its way out, with the new program's memory and name:
				 * so its name is read once it has stopped, never before */
				if (kill(pid, SIGSTOP) < 0 || !wait_stopped(pid))
					continue;
				snprintf(path, sizeof(path), "/proc/%d/comm", pid);
				cfd = open(path, O_RDONLY);
				n = cfd >= 0 ? read(cfd, comm, sizeof(comm) - 1) : -1;
				if (cfd >= 0)
					close(cfd);
				if (n > 0 && comm[n - 1] == '\n')
					n--;
				if (n > 0 && (comm[n] = '\0', !strcmp(comm, argv[3]))) {
					char word[8];
					struct iovec local = { word, sizeof(word) }, remote = { (void *)&stop_new_probe, sizeof(word) };
					int mfd, mem, vm, pt, ctl;
					pid_t own = fork();

					if (own == 0) {
						pause();
						_exit(0);
					}
					snprintf(path, sizeof(path), "/proc/%d/mem", pid);
					mfd = open(path, O_RDWR);
					mem = mfd >= 0 ? 0 : errno;
					if (mfd >= 0)
						close(mfd);
					vm = process_vm_readv(pid, &local, 1, &remote, 1, 0) >= 0 ? 0 : errno;
					pt = ptrace(PTRACE_ATTACH, pid, NULL, NULL) == 0 ? 0 : errno;
					snprintf(path, sizeof(path), "/proc/%d/mem", (int)own);
					mfd = own > 0 ? open(path, O_RDWR) : -1;
					ctl = mfd >= 0 ? 0 : errno;
					if (mfd >= 0)
						close(mfd);
					if (own > 0)
						kill(own, SIGKILL);
					printf("ok:stopped %d mem=%s", pid, mem ? errname(mem) : "ok");
					printf(" vmread=%s", vm ? errname(vm) : "ok");
					printf(" ptrace=%s", pt ? errname(pt) : "ok");
					printf(" control=%s\n", ctl ? errname(ctl) : "ok");
					return 0;
				}
				kill(pid, SIGCONT);
			}
			last = now;
		}
		printf("ok:none\n");
		return 0;
	}
	if (!strcmp(op, "under_listener") && argc > 2) {
		/* run argv[2..] under a seccomp program of ours that has a
		 * listener (it lets every call go): the kernel allows one in a
		 * filter chain, so a program below it asking for one gets EBUSY
		 * (sbx-init's write observer, as under a container's supervisor) */
		struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		struct sock_fprog prog = { 1, &allow };
		int st = 0;
		long fd;
		pid_t pid;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    (fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			 SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog)) < 0)
			return report(-1);
		if ((pid = fork()) == 0) {
			execvp(argv[2], argv + 2);
			_exit(127);
		}
		while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);	/* fd held till here */
	}
	fprintf(stderr, "sysprobe: unknown op %s\n", op);
	return 2;
}
