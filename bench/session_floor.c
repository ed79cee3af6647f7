/* bench/session_floor.c: the least a session's exec can cost on this
 * machine, with no sandbox and no policy: what `sbx exec` is compared with
 * in bench/overhead.sh (row 3d).
 *
 * One long-lived server and one short-lived client, the shape of any
 * session a shell or an agent's hook can call: the client connects to the
 * server's unix socket and hands it its stdin, stdout and stderr
 * (SCM_RIGHTS) with the command's argv; the server starts the command with
 * vfork and execvp on those descriptors, waits for it, and sends its status
 * back; the client exits with it. That is one process hop each way. sbx
 * has two, because the boundary needs both ends: its daemon outside the
 * sandbox (the policy, the proxy, the refusals) and sbx-init inside (the
 * namespaces and filters the command must be born under).
 *
 *   session_floor serve SOCKET &        (runs until killed)
 *   session_floor run SOCKET CMD ARGS...
 *
 * And the same with sbx's shape, two hops each way, still no sandbox: a
 * relay in front of the server, one connection to it kept open (as sbx's
 * daemon keeps one to sbx-init), passing each request and its descriptors
 * on and the status back:
 *
 *   session_floor relay SOCKET UPSTREAM &   (UPSTREAM: a serve's SOCKET)
 *   session_floor run SOCKET CMD ARGS...
 *
 * Build: cc -O2 -o session_floor bench/session_floor.c (musl-gcc -static
 * for the same start-up as sbx's static build). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_REQ	65536

static int
sock_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -1;
	strcpy(sa->sun_path, path);
	return 0;
}

/* A request: argv as NUL-separated strings, with fds 0-2 attached.
 * Returns its length, or -1. */
static ssize_t
recv_req(int c, char *req, int fds[3])
{
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = { req, MAX_REQ - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
		.msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n = recvmsg(c, &mh, MSG_CMSG_CLOEXEC);

	if (n <= 0 || !(cm = CMSG_FIRSTHDR(&mh)) || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(3 * sizeof(int)))
		return -1;
	memcpy(fds, CMSG_DATA(cm), 3 * sizeof(int));
	req[n] = '\0';
	return n;
}

static int
send_req(int s, char *req, size_t n, const int fds[3])
{
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = { req, n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
		.msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(3 * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, 3 * sizeof(int));
	return sendmsg(s, &mh, 0) < 0 ? -1 : 0;
}

/* One request: the command started, waited for, its status sent back. */
static int
serve_one(int c)
{
	static char req[MAX_REQ];
	char *argv[256];
	int fds[3], argc = 0, status;
	ssize_t n = recv_req(c, req, fds);
	pid_t pid;

	if (n < 0)
		return -1;
	for (char *p = req; p < req + n && argc < 255; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	pid = vfork();
	if (pid == 0) {
		for (int k = 0; k < 3; k++)
			dup2(fds[k], k);
		execvp(argv[0], argv);
		_exit(127);
	}
	for (int k = 0; k < 3; k++)
		close(fds[k]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		status = 127 << 8;
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return write(c, &status, sizeof(status)) == sizeof(status) ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct sockaddr_un sa;
	int s, status;

	if (argc < 3 || sock_addr(argv[2], &sa) < 0)
		return fprintf(stderr, "usage: session_floor serve SOCKET | relay SOCKET UPSTREAM | run SOCKET CMD ARGS...\n"), 2;
	if (strcmp(argv[1], "relay") == 0 && argc == 4) {
		struct sockaddr_un ua;
		static char req[MAX_REQ];
		int up;

		signal(SIGPIPE, SIG_IGN);
		if (sock_addr(argv[3], &ua) < 0 || (up = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
		    connect(up, (struct sockaddr *)&ua, sizeof(ua)) < 0)
			return perror("session_floor: upstream"), 1;
		unlink(argv[2]);
		if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
		    bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s, 64) < 0)
			return perror("session_floor: listen"), 1;
		for (;;) {
			int c = accept4(s, NULL, NULL, SOCK_CLOEXEC), fds[3];
			ssize_t n = c < 0 ? -1 : recv_req(c, req, fds);

			if (n >= 0) {
				if (send_req(up, req, (size_t)n, fds) < 0 || read(up, &status, sizeof(status)) != sizeof(status))
					return perror("session_floor: upstream"), 1;
				for (int k = 0; k < 3; k++)
					close(fds[k]);
				(void)!write(c, &status, sizeof(status));
			}
			if (c >= 0)
				close(c);
		}
	}
	if (strcmp(argv[1], "serve") == 0) {
		signal(SIGPIPE, SIG_IGN);
		unlink(argv[2]);
		if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
		    bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s, 64) < 0)
			return perror("session_floor: listen"), 1;
		for (;;) {
			int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);

			if (c < 0)
				continue;
			while (serve_one(c) == 0)
				;	/* a relay keeps its connection: request after request */
			close(c);
		}
	}
	if (strcmp(argv[1], "run") == 0 && argc > 3) {
		static char req[MAX_REQ];
		size_t n = 0;
		int fds[3] = { 0, 1, 2 };
		char cbuf[CMSG_SPACE(sizeof(fds))];
		struct iovec iov;
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			.msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

		for (int i = 3; i < argc; i++) {
			size_t l = strlen(argv[i]) + 1;

			if (n + l > sizeof(req))
				return fprintf(stderr, "session_floor: arguments too long\n"), 2;
			memcpy(req + n, argv[i], l);
			n += l;
		}
		iov = (struct iovec){ req, n };
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(cm), fds, sizeof(fds));
		if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
		    connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || sendmsg(s, &mh, 0) < 0 ||
		    read(s, &status, sizeof(status)) != sizeof(status))
			return perror("session_floor: run"), 125;
		return status & 0xff;
	}
	return fprintf(stderr, "usage: session_floor serve SOCKET | relay SOCKET UPSTREAM | run SOCKET CMD ARGS...\n"), 2;
}
