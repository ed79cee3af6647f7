/* bench/proxy_load.c: the servers and clients of bench/proxy.sh.
 *
 * One binary, so the direct, sbx and srt rows run the same client code.
 * Build: cc -O2 -pthread -o proxy_load proxy_load.c (proxy.sh does this in
 * its scratch directory).
 *
 *   proxy_load serve IP HTTP_PORT BULK_PORT ECHO_PORT BULK_BYTES
 *       HTTP_PORT: reads a request head, answers a 13-byte 200 with
 *                  Connection: close, closes (epoll, one thread);
 *       BULK_PORT: reads a request head, answers 200 with BULK_BYTES zeros
 *                  as the body (a thread per connection, 1 MiB writes);
 *       ECHO_PORT: echoes what it reads (epoll, one thread).
 *
 * Every client takes TARGET: "direct:IP:PORT" (connect there),
 * "name:HOST:PORT" (HOST resolved once with getaddrinfo, then as direct:
 * a client that ignores HTTP_PROXY), or "proxy:HOST:PORT" (to HOST:PORT
 * through the HTTP proxy that $HTTP_PROXY names, as curl finds it; its
 * user:password, if any, is sent as Proxy-Authorization: Basic, which srt
 * requires); "tunnel:HOST:PORT" is proxy's, but reqs opens a CONNECT
 * tunnel for each request and sends GET / through it.
 *
 *   proxy_load bulk TARGET           CONNECT (proxy), GET /, read the body to EOF;
 *                                    prints "bytes=N secs=S MBps=M"
 *   proxy_load reqs TARGET N C       N requests over C threads, a new connection
 *                                    each: GET / (direct) or absolute-URI
 *                                    GET http://HOST:PORT/ (proxy), read to EOF;
 *                                    prints "ok=N err=E secs=S rps=R"
 *   proxy_load handshake TARGET N    N sequential connections: time from connect()
 *                                    to the end of the proxy's 200 reply head
 *                                    (direct: to connect() returning);
 *                                    prints "n=N err=E p50_us= p99_us= mean_us="
 *   proxy_load relay IP PORT NAME=ADDR...
 *       a minimal forwarding proxy, no policy, no sandbox: the relay floor
 *       of the request rows. It takes what the clients here send through
 *       sbx: an absolute-form request (GET http://HOST:PORT/PATH ...),
 *       sent on with its request line in origin form and its headers as
 *       they are, and CONNECT HOST:PORT (a 200, then bytes both ways).
 *       HOST is looked up in the NAME=ADDR pairs only (no resolver, no
 *       file); anything else gets a 502. One thread, epoll, a read of
 *       each side until EAGAIN; a forwarded request closes both sides once
 *       the upstream's answer has ended and gone to the client (one
 *       request a connection, Connection: close), a tunnel passes each
 *       EOF on and closes when both sides have ended. What any user-space
 *       proxy costs here: two TCP connections per request.
 *   proxy_load tunnels TARGET N DIR SECS
 *                                    writes DIR/phase "idle", waits for DIR/go;
 *                                    opens N tunnels (to an echo server), one
 *                                    round trip on each; writes DIR/phase
 *                                    "open N OK", waits for DIR/done; checks
 *                                    each tunnel again, closes them (each wait
 *                                    at most SECS); prints
 *                                    "open=N echo_ok=N recheck_ok=N"
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void
die(const char *m)
{
	fprintf(stderr, "proxy_load: %s: %s\n", m, strerror(errno));
	exit(2);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ---- servers ------------------------------------------------------------ */

static int
listen_on(const char *ip, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4096) < 0)
		die("bind/listen");
	return fd;
}

static long long bulk_bytes;

/* read a request head (up to 8 KiB, or EOF) */
static int
read_head(int fd)
{
	char b[8192];
	size_t n = 0;

	while (n < sizeof(b) - 1) {
		ssize_t r = read(fd, b + n, sizeof(b) - 1 - n);

		if (r <= 0)
			return -1;
		n += (size_t)r;
		b[n] = '\0';
		if (strstr(b, "\r\n\r\n"))
			return 0;
	}
	return 0;
}

static void *
bulk_conn(void *arg)
{
	static char zeros[1 << 20];
	int fd = (int)(intptr_t)arg;
	char h[200];
	long long left = bulk_bytes;
	char drain[4096];

	if (read_head(fd) == 0) {
		int n = snprintf(h, sizeof(h), "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
		    "Content-Length: %lld\r\nConnection: close\r\n\r\n", bulk_bytes);

		if (write(fd, h, (size_t)n) == n)
			while (left > 0) {
				ssize_t w = write(fd, zeros, left < (long long)sizeof(zeros) ? (size_t)left : sizeof(zeros));

				if (w <= 0)
					break;
				left -= w;
			}
	}
	/* close after the peer: no RST that could cut the tail */
	shutdown(fd, SHUT_WR);
	while (read(fd, drain, sizeof(drain)) > 0)
		;
	close(fd);
	return NULL;
}

static void *
bulk_server(void *arg)
{
	int lfd = (int)(intptr_t)arg;

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		pthread_t t;

		if (fd < 0)
			continue;
		if (pthread_create(&t, NULL, bulk_conn, (void *)(intptr_t)fd) != 0) {
			close(fd);
			continue;
		}
		pthread_detach(t);
	}
	return NULL;
}

/* per-fd state of the epoll servers: bytes of the head seen so far */
struct hst { unsigned char n, done; char tail[3]; };

static void *
epoll_server(void *arg)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n"
	    "Connection: close\r\n\r\nhello, world\n";
	int lfd = (int)((intptr_t)arg & 0xffffff), echo = (int)((intptr_t)arg >> 24);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = lfd }, evs[256];
	struct hst *st = calloc(1 << 17, sizeof(*st));	/* indexed by fd */
	char buf[65536];

	fcntl(lfd, F_SETFL, O_NONBLOCK);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) < 0)
		die("epoll");
	for (;;) {
		int n = epoll_wait(ep, evs, 256, -1);

		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd) {
				for (;;) {
					int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

					if (c < 0)
						break;
					if (c >= 1 << 17) {
						close(c);
						continue;
					}
					memset(&st[c], 0, sizeof(st[c]));
					ev.events = EPOLLIN;
					ev.data.fd = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
				}
				continue;
			}
			for (;;) {
				ssize_t r = read(fd, buf, sizeof(buf));

				if (r < 0 && errno == EAGAIN)
					break;
				if (r <= 0) {
					close(fd);	/* also leaves the epoll set */
					break;
				}
				if (echo) {
					/* small messages: the send buffer has room; block briefly if not */
					ssize_t off = 0;

					while (off < r) {
						ssize_t w = write(fd, buf + off, (size_t)(r - off));

						if (w > 0)
							off += w;
						else if (w < 0 && errno == EAGAIN)
							usleep(100);
						else
							break;
					}
					continue;
				}
				/* http: the head ends at CRLFCRLF, possibly split across reads */
				if (st[fd].done)
					continue;	/* after the answer: wait for the client's EOF */
				{
					char look[3 + sizeof(buf)];

					memcpy(look, st[fd].tail, st[fd].n);
					memcpy(look + st[fd].n, buf, (size_t)r);
					if (memmem(look, st[fd].n + (size_t)r, "\r\n\r\n", 4)) {
						(void)!write(fd, resp, sizeof(resp) - 1);
						shutdown(fd, SHUT_WR);	/* we close first; then the client's EOF */
						st[fd].done = 1;
						continue;
					}
					{
						size_t tot = st[fd].n + (size_t)r, k = tot < 3 ? tot : 3;

						memmove(st[fd].tail, look + tot - k, k);
						st[fd].n = (unsigned char)k;
					}
				}
			}
		}
	}
	return NULL;
}

static int
serve(char **av)
{
	int hl = listen_on(av[0], atoi(av[1])), bl = listen_on(av[0], atoi(av[2])), el = listen_on(av[0], atoi(av[3]));
	pthread_t t;

	bulk_bytes = atoll(av[4]);
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	pthread_create(&t, NULL, epoll_server, (void *)(intptr_t)hl);
	pthread_create(&t, NULL, epoll_server, (void *)(intptr_t)(el | (1 << 24)));
	bulk_server((void *)(intptr_t)bl);
	return 0;
}

/* ---- the relay floor: a minimal forwarding proxy ------------------------- */

#define RL_MAX_CONNS	8192
#define RL_HEAD_BYTES	8192		/* the request head, and then the client's bytes */
#define RL_BUF_BYTES	65536		/* the upstream's bytes */

struct rl_name { char name[256]; struct in_addr a; };

static struct rl_name *rl_names;
static int rl_nnames;

struct rl_conn {
	int cfd, ufd;			/* -1 when closed */
	int st;				/* 0 free, 1 the request head, 2 connecting, 3 relaying */
	int fwd;			/* a forwarded request (not a tunnel) */
	int c_eof, u_eof;
	int c_shut, u_shut;		/* shutdown(SHUT_WR) done on that side */
	uint32_t cmask, umask;		/* the events epoll has for each side now */
	char *c2u, *u2c;		/* RL_HEAD_BYTES, RL_BUF_BYTES */
	size_t c2u_off, c2u_len, u2c_off, u2c_len;
};

static struct rl_conn *rl;
static int rl_ep;

/* tag of an fd in epoll: slot * 2 + side (1: upstream); the listener is ~0 */
static void
rl_watch(int fd, uint64_t tag, uint32_t *cur, uint32_t want)
{
	struct epoll_event ev = { .events = want, .data.u64 = tag };

	if (*cur == want)
		return;
	epoll_ctl(rl_ep, *cur == (uint32_t)~0u ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev);
	*cur = want;
}

static void
rl_close(struct rl_conn *c)
{
	if (c->cfd >= 0)
		close(c->cfd);	/* also leaves the epoll set */
	if (c->ufd >= 0)
		close(c->ufd);
	free(c->c2u);
	free(c->u2c);
	memset(c, 0, sizeof(*c));
	c->cfd = c->ufd = -1;
}

/* Send what b[*off..*len) holds; -1 on an error. */
static int
rl_flush(int fd, char *b, size_t *off, size_t *len)
{
	while (*off < *len) {
		ssize_t w = send(fd, b + *off, *len - *off, MSG_NOSIGNAL);

		if (w < 0)
			return errno == EAGAIN ? 0 : -1;
		*off += (size_t)w;
	}
	*off = *len = 0;
	return 0;
}

/* Read fd into b until EAGAIN, EOF or a full buffer; sets *eof. -1 on an error. */
static int
rl_fill(int fd, char *b, size_t cap, size_t *off, size_t *len, int *eof)
{
	if (*off == *len)
		*off = *len = 0;
	while (*len < cap) {
		ssize_t r = recv(fd, b + *len, cap - *len, 0);

		if (r > 0) {
			*len += (size_t)r;
			continue;
		}
		if (r == 0)
			*eof = 1;
		return r < 0 && errno != EAGAIN ? -1 : 0;
	}
	return 0;
}

/* The request head is whole in c2u: find the target, make the request line
 * origin-form (a forward), dial. -1: answer 502 and close. */
static int
rl_start(struct rl_conn *c, size_t head_n)
{
	char *sp = memchr(c->c2u, ' ', head_n), *hp, *end, *colon, host[256];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	size_t hn;
	int i, port;

	if (!sp)
		return -1;
	c->fwd = !(sp - c->c2u == 7 && memcmp(c->c2u, "CONNECT", 7) == 0);
	hp = sp + 1;
	if (c->fwd) {
		if (strncmp(hp, "http://", 7) != 0)
			return -1;
		hp += 7;
	}
	end = hp + strcspn(hp, c->fwd ? "/ \r" : " \r");
	if (!(colon = memchr(hp, ':', (size_t)(end - hp))))
		colon = end, port = 80;
	else
		port = atoi(colon + 1);
	hn = (size_t)(colon - hp);
	if (hn >= sizeof(host))
		return -1;
	memcpy(host, hp, hn);
	host[hn] = '\0';
	for (i = 0; i < rl_nnames && strcmp(rl_names[i].name, host) != 0; i++)
		;
	if (i == rl_nnames)
		return -1;
	sa.sin_addr = rl_names[i].a;
	sa.sin_port = htons((uint16_t)port);
	if (c->fwd) {
		/* "GET http://h:p/x HTTP/1.1" -> "GET /x HTTP/1.1": the path moves down */
		size_t mlen = (size_t)(sp + 1 - c->c2u);

		if (*end != '/')
			return -1;
		memmove(c->c2u + mlen, end, c->c2u_len - (size_t)(end - c->c2u));
		c->c2u_len -= (size_t)(end - (sp + 1));
	} else {
		c->c2u_len -= head_n;	/* what follows the CONNECT head goes through the tunnel */
		memmove(c->c2u, c->c2u + head_n, c->c2u_len);
	}
	if ((c->ufd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (connect(c->ufd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS)
		return -1;
	c->st = 2;
	return 0;
}

/* Interest follows buffers; a forward closes whole once the upstream has
 * ended and everything it said has gone to the client. */
static void
rl_update(struct rl_conn *c, unsigned slot)
{
	uint32_t cw = 0, uw = 0;

	if (c->st == 3) {
		if (c->u_eof && c->u2c_len == 0 && (c->fwd || c->c_eof)) {
			rl_close(c);
			return;
		}
		if (c->c_eof && c->c2u_len == 0 && !c->u_shut)
			c->u_shut = !shutdown(c->ufd, SHUT_WR);
		if (c->u_eof && c->u2c_len == 0 && !c->c_shut)
			c->c_shut = !shutdown(c->cfd, SHUT_WR);
		if (!c->c_eof && c->c2u_len < RL_HEAD_BYTES)
			cw |= EPOLLIN;
		if (c->u2c_len)
			cw |= EPOLLOUT;
		if (!c->u_eof && c->u2c_len < RL_BUF_BYTES)
			uw |= EPOLLIN;
		if (c->c2u_len)
			uw |= EPOLLOUT;
	} else if (c->st == 2) {
		uw = EPOLLOUT;
	} else {
		cw = EPOLLIN;
	}
	rl_watch(c->cfd, (uint64_t)slot * 2, &c->cmask, cw);
	if (c->ufd >= 0)
		rl_watch(c->ufd, (uint64_t)slot * 2 + 1, &c->umask, uw);
}

static void
rl_event(unsigned slot, int up, uint32_t ev)
{
	static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
	static const char bad[] = "HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
	struct rl_conn *c = &rl[slot];

	if (c->st == 1) {
		char *e;
		int eof = 0;

		if (rl_fill(c->cfd, c->c2u, RL_HEAD_BYTES - 1, &c->c2u_off, &c->c2u_len, &eof) < 0 || eof) {
			rl_close(c);
			return;
		}
		c->c2u[c->c2u_len] = '\0';
		if (!(e = strstr(c->c2u, "\r\n\r\n"))) {
			if (c->c2u_len == RL_HEAD_BYTES - 1)
				rl_close(c);
			return;
		}
		if (rl_start(c, (size_t)(e + 4 - c->c2u)) < 0) {
			(void)!send(c->cfd, bad, sizeof(bad) - 1, MSG_NOSIGNAL);
			rl_close(c);
			return;
		}
		c->umask = ~0u;
		rl_update(c, slot);
		return;
	}
	if (c->st == 2) {
		int err = 0;
		socklen_t el = sizeof(err);

		if (!up) {
			if (ev & (EPOLLHUP | EPOLLERR))
				rl_close(c);	/* the client left while we dialled */
			return;
		}
		getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) {
			(void)!send(c->cfd, bad, sizeof(bad) - 1, MSG_NOSIGNAL);
			rl_close(c);
			return;
		}
		c->st = 3;
		if (!c->fwd) {
			memcpy(c->u2c, ok, sizeof(ok) - 1);
			c->u2c_len = sizeof(ok) - 1;
		}
		ev = EPOLLOUT;	/* what is queued goes now, both ways */
		if (rl_flush(c->cfd, c->u2c, &c->u2c_off, &c->u2c_len) < 0) {
			rl_close(c);
			return;
		}
	}
	if (ev & EPOLLERR)
		goto gone;
	if (up) {
		if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->u_eof &&
		    rl_fill(c->ufd, c->u2c, RL_BUF_BYTES, &c->u2c_off, &c->u2c_len, &c->u_eof) < 0)
			goto gone;
		if (rl_flush(c->cfd, c->u2c, &c->u2c_off, &c->u2c_len) < 0 ||
		    ((ev & EPOLLOUT) && rl_flush(c->ufd, c->c2u, &c->c2u_off, &c->c2u_len) < 0))
			goto gone;
	} else {
		if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->c_eof &&
		    rl_fill(c->cfd, c->c2u, RL_HEAD_BYTES, &c->c2u_off, &c->c2u_len, &c->c_eof) < 0)
			goto gone;
		if (rl_flush(c->ufd, c->c2u, &c->c2u_off, &c->c2u_len) < 0 ||
		    ((ev & EPOLLOUT) && rl_flush(c->cfd, c->u2c, &c->u2c_off, &c->u2c_len) < 0))
			goto gone;
	}
	rl_update(c, slot);
	return;
gone:
	rl_close(c);
}

static int
relay(char **av, int n)
{
	int lfd = listen_on(av[0], atoi(av[1]));
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = ~0ull }, evs[256];

	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	rl_names = calloc((size_t)n, sizeof(*rl_names));
	rl = calloc(RL_MAX_CONNS, sizeof(*rl));
	for (int i = 2; i < n + 2; i++) {
		char *eq = strchr(av[i], '=');

		if (!eq || (size_t)(eq - av[i]) >= sizeof(rl_names[0].name) ||
		    inet_pton(AF_INET, eq + 1, &rl_names[rl_nnames].a) != 1) {
			fprintf(stderr, "proxy_load relay: %s is not NAME=IPV4\n", av[i]);
			return 2;
		}
		memcpy(rl_names[rl_nnames].name, av[i], (size_t)(eq - av[i]));
		rl_nnames++;
	}
	for (int i = 0; i < RL_MAX_CONNS; i++)
		rl[i].cfd = rl[i].ufd = -1;
	fcntl(lfd, F_SETFL, O_NONBLOCK);
	if ((rl_ep = epoll_create1(EPOLL_CLOEXEC)) < 0 || epoll_ctl(rl_ep, EPOLL_CTL_ADD, lfd, &ev) < 0)
		die("epoll");
	for (;;) {
		int k = epoll_wait(rl_ep, evs, 256, -1);

		for (int i = 0; i < k; i++) {
			uint64_t tag = evs[i].data.u64;

			if (tag == ~0ull) {
				int fd;
				unsigned s = 0;

				while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
					while (s < RL_MAX_CONNS && rl[s].st)
						s++;
					if (s == RL_MAX_CONNS || !(rl[s].c2u = malloc(RL_HEAD_BYTES)) ||
					    !(rl[s].u2c = malloc(RL_BUF_BYTES))) {
						if (s < RL_MAX_CONNS)
							free(rl[s].c2u);
						close(fd);
						continue;
					}
					rl[s].cfd = fd;
					rl[s].st = 1;
					rl[s].cmask = ~0u;
					rl_update(&rl[s], s);
					rl_event(s, 0, EPOLLIN);	/* the request is most likely there already */
				}
				continue;
			}
			if (rl[tag / 2].st)
				rl_event((unsigned)(tag / 2), (int)(tag % 2), evs[i].events);
		}
	}
	return 0;
}

/* ---- clients ------------------------------------------------------------ */

struct target {
	int proxy;			/* through an HTTP proxy */
	int tunnel;			/* proxy, and reqs CONNECTs first ("tunnel:"): the CONNECT path */
	char auth[2048];		/* "Proxy-Authorization: Basic ...\r\n" from $HTTP_PROXY's userinfo, or "" */
	struct sockaddr_in sa;		/* where to connect() */
	char host[256];			/* proxy: the target's name */
	int port;			/* proxy: the target's port */
};

static struct target tg;

/* %XX decoding, in place */
static void
pct_decode(char *s)
{
	char *o = s;

	for (; *s; s++) {
		unsigned v;

		if (s[0] == '%' && s[1] && s[2] && sscanf(s + 1, "%2x", &v) == 1) {
			*o++ = (char)v;
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static void
b64(const unsigned char *in, size_t n, char *out)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		*out++ = t[in[i] >> 2];
		*out++ = t[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
		*out++ = t[((in[i + 1] & 15) << 2) | (in[i + 2] >> 6)];
		*out++ = t[in[i + 2] & 63];
	}
	if (n - i == 1) {
		*out++ = t[in[i] >> 2];
		*out++ = t[(in[i] & 3) << 4];
		*out++ = '=';
		*out++ = '=';
	} else if (n - i == 2) {
		*out++ = t[in[i] >> 2];
		*out++ = t[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
		*out++ = t[(in[i + 1] & 15) << 2];
		*out++ = '=';
	}
	*out = '\0';
}

/* The proxy from $HTTP_PROXY (as curl reads it): http://[user:pass@]host:port,
 * host an IPv4 literal or localhost; userinfo becomes Proxy-Authorization
 * (srt puts a per-run credential there and answers 407 without it). */
static void
proxy_from_env(char *ip, size_t ipn, int *port)
{
	const char *e = getenv("HTTP_PROXY");
	char u[1024], *at, *hp, *colon;

	if (!e || !*e)
		e = getenv("http_proxy");
	if (!e || strncmp(e, "http://", 7) != 0 || strlen(e + 7) >= sizeof(u)) {
		fprintf(stderr, "proxy_load: no usable HTTP_PROXY (%s)\n", e ? e : "unset");
		exit(2);
	}
	snprintf(u, sizeof(u), "%s", e + 7);
	u[strcspn(u, "/")] = '\0';
	hp = u;
	if ((at = strrchr(u, '@'))) {
		char cred[1024], enc[1400];

		*at = '\0';
		hp = at + 1;
		if (strlen(u) > 490) {
			fprintf(stderr, "proxy_load: HTTP_PROXY credentials too long\n");
			exit(2);
		}
		/* user and password are %-decoded separately (decoding only shrinks) */
		if ((colon = strchr(u, ':')))
			*colon = '\0';
		pct_decode(u);
		if (colon)
			pct_decode(colon + 1);
		snprintf(cred, sizeof(cred), "%.490s%s%.490s", u, colon ? ":" : "", colon ? colon + 1 : "");
		b64((const unsigned char *)cred, strlen(cred), enc);
		snprintf(tg.auth, sizeof(tg.auth), "Proxy-Authorization: Basic %s\r\n", enc);
	}
	if (!(colon = strrchr(hp, ':'))) {
		fprintf(stderr, "proxy_load: HTTP_PROXY has no port\n");
		exit(2);
	}
	*colon = '\0';
	*port = atoi(colon + 1);
	if (strlen(hp) >= ipn) {
		fprintf(stderr, "proxy_load: HTTP_PROXY host too long\n");
		exit(2);
	}
	strcpy(ip, strcmp(hp, "localhost") == 0 ? "127.0.0.1" : hp);
}

static void
parse_target(const char *s)
{
	char ip[64];
	int port;

	if (sscanf(s, "direct:%63[^:]:%d", ip, &port) == 2) {
		tg.proxy = 0;
	} else if (sscanf(s, "name:%255[^:]:%d", tg.host, &port) == 2) {
		/* resolved once, as a client that ignores HTTP_PROXY does (sbx's
		 * network-capture: the DNS stub's answer is a capture address) */
		struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;

		tg.proxy = 0;
		if (getaddrinfo(tg.host, NULL, &hints, &res) != 0) {
			fprintf(stderr, "proxy_load: %s does not resolve\n", tg.host);
			exit(2);
		}
		inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, ip, sizeof(ip));
		freeaddrinfo(res);
	} else if (sscanf(s, "proxy:%255[^:]:%d", tg.host, &tg.port) == 2 ||
	    (sscanf(s, "tunnel:%255[^:]:%d", tg.host, &tg.port) == 2 && (tg.tunnel = 1))) {
		tg.proxy = 1;
		proxy_from_env(ip, sizeof(ip), &port);
	} else {
		fprintf(stderr, "proxy_load: bad target %s\n", s);
		exit(2);
	}
	tg.sa.sin_family = AF_INET;
	tg.sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, ip, &tg.sa.sin_addr) != 1) {
		fprintf(stderr, "proxy_load: bad address %s\n", ip);
		exit(2);
	}
}

static int
dial(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { 15, 0 };

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&tg.sa, sizeof(tg.sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read a reply head up to CRLFCRLF a byte at a time (nothing after it is
 * consumed); 0 when it is a 200. */
static int
read_reply_head(int fd, char *b, size_t cap)
{
	size_t n = 0;

	while (n < cap - 1) {
		ssize_t r = read(fd, b + n, 1);

		if (r <= 0)
			return -1;
		n++;
		if (n >= 4 && memcmp(b + n - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	b[n] = '\0';
	return strncmp(b, "HTTP/1.", 7) == 0 && strncmp(b + 8, " 200", 4) == 0 ? 0 : -1;
}

static char last_err[300];

/* A connection that is a tunnel to the target: direct, or CONNECT */
static int
open_tunnel(void)
{
	char b[4096];
	int fd = dial(), n;

	if (fd < 0 || !tg.proxy)
		return fd;
	n = snprintf(b, sizeof(b), "CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n%s\r\n", tg.host, tg.port, tg.host, tg.port,
	    tg.auth);
	if (send_all(fd, b, (size_t)n) < 0 || read_reply_head(fd, b, sizeof(b)) < 0) {
		snprintf(last_err, sizeof(last_err), "CONNECT reply: %.*s", (int)strcspn(b, "\r\n"), b);
		close(fd);
		return -1;
	}
	return fd;
}

static int
bulk(void)
{
	static char buf[1 << 18];
	char head[8192];
	int fd, n;
	long long got = 0;
	size_t hn = 0;
	double t0, t1;
	char *end = NULL;

	t0 = now_s();
	if ((fd = open_tunnel()) < 0) {
		fprintf(stderr, "proxy_load bulk: cannot open the tunnel %s\n", last_err);
		return 1;
	}
	n = snprintf(head, sizeof(head), "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", tg.proxy ? tg.host : "x");
	if (send_all(fd, head, (size_t)n) < 0)
		die("send");
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r < 0)
			snprintf(last_err, sizeof(last_err), "read: %s", strerror(errno));
		if (r <= 0)
			break;
		if (!end) {	/* the response head, then the body */
			size_t k = (size_t)r < sizeof(head) - 1 - hn ? (size_t)r : sizeof(head) - 1 - hn;

			memcpy(head + hn, buf, k);
			hn += k;
			head[hn] = '\0';
			if ((end = strstr(head, "\r\n\r\n"))) {
				size_t hl = (size_t)(end + 4 - head);

				got += (long long)(hn - hl) + (r - (ssize_t)k);
			}
			continue;
		}
		got += r;
	}
	t1 = now_s();
	close(fd);
	printf("bytes=%lld secs=%.3f MBps=%.1f%s%s\n", got, t1 - t0, got / (t1 - t0) / 1e6,
	    last_err[0] ? " end=" : "", last_err);
	return got > 0 ? 0 : 1;
}

static int reqs_total, reqs_next, reqs_ok, reqs_err;
static pthread_mutex_t reqs_lock = PTHREAD_MUTEX_INITIALIZER;

static void *
reqs_worker(void *arg)
{
	char req[2048], b[4096];
	int n;

	(void)arg;
	if (tg.proxy && !tg.tunnel)
		n = snprintf(req, sizeof(req), "GET http://%s:%d/ HTTP/1.1\r\nHost: %s:%d\r\n%sConnection: close\r\n\r\n",
		    tg.host, tg.port, tg.host, tg.port, tg.auth);
	else
		n = snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", tg.host[0] ? tg.host : "x");
	for (;;) {
		int fd, ok = 0;
		size_t got = 0;

		pthread_mutex_lock(&reqs_lock);
		if (reqs_next >= reqs_total) {
			pthread_mutex_unlock(&reqs_lock);
			return NULL;
		}
		reqs_next++;
		pthread_mutex_unlock(&reqs_lock);
		if ((fd = tg.tunnel ? open_tunnel() : dial()) >= 0 && send_all(fd, req, (size_t)n) == 0) {
			for (;;) {	/* to EOF: the server (or proxy) closes first */
				ssize_t r = read(fd, b + (got < 64 ? got : 64), got < 64 ? 64 - got + 1000 : 1000);

				if (r <= 0)
					break;
				got += (size_t)r;
			}
			b[got < 64 ? got : 64] = '\0';
			ok = got > 12 && strncmp(b, "HTTP/1.", 7) == 0 && strncmp(b + 8, " 200", 4) == 0;
			if (!ok) {
				pthread_mutex_lock(&reqs_lock);
				snprintf(last_err, sizeof(last_err), "%.*s", (int)strcspn(b, "\r\n"), b);
				pthread_mutex_unlock(&reqs_lock);
			}
		}
		if (fd >= 0)
			close(fd);
		__atomic_add_fetch(ok ? &reqs_ok : &reqs_err, 1, __ATOMIC_RELAXED);
	}
}

static int
reqs(int total, int threads)
{
	pthread_t t[256];
	double t0, t1;

	if (threads < 1 || threads > 256)
		threads = 1;
	reqs_total = total;
	t0 = now_s();
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, reqs_worker, NULL) != 0)
			die("pthread_create");
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	t1 = now_s();
	printf("ok=%d err=%d secs=%.3f rps=%.0f%s%s\n", reqs_ok, reqs_err, t1 - t0, reqs_ok / (t1 - t0),
	    reqs_err && last_err[0] ? " last_err=" : "", reqs_err ? last_err : "");
	return reqs_ok ? 0 : 1;
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int
handshake(int n)
{
	double *lat = calloc((size_t)n, sizeof(double)), sum = 0;
	int ok = 0, err = 0;

	for (int i = 0; i < n; i++) {
		double t0 = now_s();
		int fd = open_tunnel();

		if (fd < 0) {
			err++;
			continue;
		}
		lat[ok++] = (now_s() - t0) * 1e6;
		close(fd);
	}
	if (!ok) {
		printf("n=0 err=%d %s\n", err, last_err);
		return 1;
	}
	qsort(lat, (size_t)ok, sizeof(double), dcmp);
	for (int i = 0; i < ok; i++)
		sum += lat[i];
	printf("n=%d err=%d p50_us=%.0f p99_us=%.0f mean_us=%.0f max_us=%.0f\n", ok, err,
	    lat[(ok - 1) / 2], lat[(int)((ok - 1) * 0.99)], sum / ok, lat[ok - 1]);
	return 0;
}

static int
echo_once(int fd, int i)
{
	char m[32], b[32];
	int n = snprintf(m, sizeof(m), "ping %d\n", i);
	size_t got = 0;

	if (send_all(fd, m, (size_t)n) < 0)
		return -1;
	while (got < (size_t)n) {
		ssize_t r = read(fd, b + got, (size_t)n - got);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return memcmp(m, b, (size_t)n) == 0 ? 0 : -1;
}

/* write s to dir/name, atomically (a rename) */
static void
put_file(const char *dir, const char *name, const char *s)
{
	char tmp[4096], dst[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	if ((f = fopen(tmp, "w"))) {
		fputs(s, f);
		fclose(f);
		rename(tmp, dst);
	}
}

/* wait until dir/name exists, at most secs; 0 when it does */
static int
wait_file(const char *dir, const char *name, int secs)
{
	char p[4096];
	struct stat sb;
	double t0 = now_s();

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	while (stat(p, &sb) < 0) {
		if (now_s() - t0 > secs)
			return -1;
		usleep(20000);
	}
	return 0;
}

static int
tunnels(int n, const char *dir, int secs)
{
	int *fds = calloc((size_t)n, sizeof(int)), open_n = 0, echo_ok = 0, re_ok = 0;
	char msg[200];

	put_file(dir, "phase", "idle\n");
	if (wait_file(dir, "go", secs) < 0) {
		printf("open=0 echo_ok=0 recheck_ok=0 last_err=no-go-file\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		fds[i] = open_tunnel();
		if (fds[i] < 0)
			continue;
		open_n++;
		if (echo_once(fds[i], i) == 0)
			echo_ok++;
	}
	snprintf(msg, sizeof(msg), "open %d %d\n", open_n, echo_ok);
	put_file(dir, "phase", msg);
	wait_file(dir, "done", secs);
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0) {
			if (echo_once(fds[i], i) == 0)
				re_ok++;
			close(fds[i]);
		}
	printf("open=%d echo_ok=%d recheck_ok=%d%s%s\n", open_n, echo_ok, re_ok, open_n < n ? " last_err=" : "",
	    open_n < n ? last_err : "");
	return open_n == n ? 0 : 1;
}

int
main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 7 && strcmp(argv[1], "serve") == 0)
		return serve(argv + 2);
	if (argc >= 5 && strcmp(argv[1], "relay") == 0)
		return relay(argv + 2, argc - 4);
	raise_nofile();
	if (argc >= 3)
		parse_target(argv[2]);
	if (argc == 3 && strcmp(argv[1], "bulk") == 0)
		return bulk();
	if (argc == 5 && strcmp(argv[1], "reqs") == 0)
		return reqs(atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && strcmp(argv[1], "handshake") == 0)
		return handshake(atoi(argv[3]));
	if (argc == 6 && strcmp(argv[1], "tunnels") == 0)
		return tunnels(atoi(argv[3]), argv[4], atoi(argv[5]));
	fprintf(stderr, "usage: see the comment at the top of bench/proxy_load.c\n");
	return 2;
}
