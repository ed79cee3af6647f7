/* tests/macsim/sandbox-exec.c - a stand-in for macOS's /usr/bin/sandbox-exec, so that test.sh
 * can run sbx's macOS runner (sbx-macsim: sbx.c built with -DSBX_FORCE_MACOS) end to end on
 * Linux. tests/macsim.tests.sh puts tests/macsim/bin first in PATH; `make
 * tests/macsim/bin/sandbox-exec` builds it (cc -O2 -Wall -Wextra, nothing beyond libc).
 *
 *   sandbox-exec -p PROFILE [--] CMD [ARGS...]
 *
 * Environment:
 *   SBX_MACSIM_DIR        (required) where it records what it saw and writes the kernel log:
 *                           profile.sb        the last PROFILE (overwritten)
 *                           profiles.log      every PROFILE (appended)
 *                           tag               the TAG of (deny default (with message "TAG"))
 *                           generated.policy  the sbx line-format policy the profile became
 *                           inner.jsonl       the inner Linux sbx's --violations JSON lines
 *                           kernel.log        Seatbelt's kernel events, one JSON object a line:
 *                             {"ts": "...", "process": "kernel", "pid": 0, "tid": "0x1a2b",
 *                              "type": "E", "msg": "..."}; tests/macsim/log follows it
 *   SBX_MACSIM_LINUX_SBX  (required) the Linux sbx that provides the boundary
 *   SBX_MACSIM_REPLAY     (optional) a file of recorded kernel events (tests/macsim/recorded.events)
 *                         appended to kernel.log as the command starts, @TAG@, @SUFFIX@ and
 *                         @HOME@ replaced by the run's tag, its suffix and $HOME
 *
 * Like Apple's: a usage error is exit 64 (EX_USAGE) and nothing runs; a profile that does not
 * parse is "sandbox-exec: syntax error ..." and exit 65 (EX_DATAERR), nothing runs. Otherwise
 * the exit status is the command's (128+N when a signal killed it). Signals sent to the
 * stand-in (INT, TERM, HUP, QUIT, USR1, USR2) are passed on, as they would reach the command
 * directly on a Mac (Apple's sandbox-exec execs the command in its own process), and the
 * inner sbx dies with the stand-in (SIGKILL included: PR_SET_PDEATHSIG).
 * SBX_MACSIM_DIR must lie outside the command's writable roots (the inner sbx refuses a
 * violations file the command could write).
 *
 * The profile must start with (version 1) then (deny default (with message "TAG")), as sbx
 * writes it, or be exactly (version 1)(allow default) (sbx --check's probe: the command is
 * then run as it is, without the inner sbx, since that profile restricts nothing); the rest
 * is parsed as s-expressions (strings with \" and \\ escapes, #"regex"
 * strings, ; comments) and what can be emulated is translated into sbx's line format:
 *
 * EMULATED (run under sbx's own Linux boundary: `$SBX_MACSIM_LINUX_SBX -c generated.policy
 * --violations=inner.jsonl -- /usr/bin/env -i K=V... CMD ARGS`, observe-writes on):
 *   (allow file-write* (subpath|literal "P"))          -> allow-write P
 *   (allow file-write*) with no filter                 -> allow-write / (the inner sbx then
 *       finds no runtime directory the command cannot write and exits 125; sbx-macsim itself
 *       refuses disable-filesystem, which writes this rule, since its own binary would be
 *       writable, so no run gets here)
 *   (deny file-write* (subpath|literal "P"))           -> deny-write P, when P overlaps an
 *       allow-write root that came BEFORE it (Seatbelt: the later rule wins; sbx: a write deny
 *       wins at any depth, so a deny no earlier allow overlaps is left out: writes are closed
 *       anyway, and it must not override an allow that comes after it, as the profile's
 *       deny of sbx's runtime directory before the run's TMPDIR)
 *   (deny file-read* (subpath|literal "P"))            -> deny-read P
 *   (allow file-read* (subpath|literal "P")) after a deny-read covering P -> allow-read P
 *   (allow network-outbound (remote ip "localhost:N") ...)  -> allow-host-port N for each N:
 *       127.0.0.1:N inside reaches sbx-macsim's proxy on the host's 127.0.0.1:N
 *   (allow network-outbound (remote unix-socket (path-regex #"^/")))  -> allow-all-unix-sockets
 *   The command's environment is exactly the stand-in's minus SBX_MACSIM_* (what sbx-macsim
 *   gave it: the proxy variables with the credential, its TMPDIR), not the inner sbx's.
 *
 * NOT EMULATED (ignored, so the simulation is looser or stricter than a Mac there):
 *   - process-*, signal, mach-*, ipc-*, iokit-*, sysctl-*, system-socket, user-preference-*,
 *     distributed-notification-post, appleevent-send, lsopen, pseudo-tty, file-ioctl,
 *     network-bind, network-inbound: Linux has no such thing, or the inner sbx decides alone
 *     (its own seccomp filters, its own network namespace with only lo);
 *   - file-write-unlink (renames are refused on Linux by the inner sbx's own pins instead);
 *   - regex and require-* filters (#"^/dev/ttys[0-9]+$"), and every rule about /dev (the
 *     inner sbx has its own /dev);
 *   - an allow of a path that does not exist when the command starts (the tools' log
 *     directories, ~/.npm/_logs): Linux cannot bind it, so it stays closed (stricter);
 *   - a deny of a path that does not exist when the command starts: Linux cannot cover a
 *     missing path without creating it; the inner sbx's own plan (same roots, same cwd and
 *     HOME, so the same mandatory denies) holds the dangerous names itself, but a user's
 *     deny-write of a missing path elsewhere is not held here (on a Mac it is);
 *   - a single Unix socket (remote unix-socket (subpath "P")): Linux refuses every AF_UNIX
 *     socket unless all are allowed (stricter);
 *   - network-outbound to anything but localhost:N (the inner sbx's namespace has only lo);
 *   - what is REPORTED differs: a read of a denied path reads empty on Linux and is not a
 *     kernel event here (a Mac refuses it and logs file-read-data); a connection to a
 *     localhost port the profile does not allow fails but is not a kernel event (the inner
 *     sbx reports only non-loopback connects; a Mac logs network-outbound 127.0.0.1:N);
 *   - the command sees uid 4242 (see UIDS), not the caller's.
 *
 * UIDS: sbx-macsim (this uid) keeps its runtime directory, with the command's TMPDIR, in
 * /tmp/sbx-UID, and a Linux sbx of the same uid hides that directory and refuses any
 * allow-write inside it. So the inner sbx runs in a user namespace of its own where this uid
 * appears as another (4242): its runtime directory is /tmp/sbx-4242, and /tmp/sbx-UID is an
 * ordinary path to it (files are still accessed as this uid).
 *
 * EVENTS: while the inner sbx runs (polled every 10 ms) and once more after it exits, each of
 * its JSON lines of kind "file" or "connect" becomes a kernel event in kernel.log,
 * `Sandbox: COMM(PID) deny(1) OP TARGET\nMESSAGE` (OP mapped from the syscall, see
 * seatbelt_op; the target as it is, a newline included, as a Mac's kernel is taken to print
 * a path: unverified here; MESSAGE that of the profile's rule that decides OP on TARGET, the
 * last that matches, and nothing when that rule has none: the stand-in adds no tag of its
 * own, so a deny rule without (with message TAG) is seen as a Mac would log it), so that
 * sbx-macsim's log monitor receives them through tests/macsim/log as it would a Mac's. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EX_USAGE	64
#define EX_DATAERR	65
#define EX_SOFTWARE	70
#define EX_OSERR	71

#define MAX_DEPTH	64
#define INNER_UID	4242

extern char **environ;

static const char *dir;		/* $SBX_MACSIM_DIR */

static void
die(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("sandbox-exec: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die(EX_OSERR, "out of memory");
	return p;
}

static char *
xstrndup(const char *s, size_t n)
{
	char *d = xrealloc(NULL, n + 1);

	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

/* ---- a growing buffer -------------------------------------------------- */
struct buf {
	char *p;
	size_t n, cap;
};

static void
buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void
buf_puts(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die(EX_OSERR, "out of memory");
	buf_add(b, s, (size_t)n);
	free(s);
}

static char *
path_in_dir(const char *name)
{
	struct buf b = { 0 };

	buf_printf(&b, "%s/%s", dir, name);
	return b.p;
}

/* Write (or append) to $SBX_MACSIM_DIR/NAME in one write(2), so that tests/macsim/log never
 * sees half a line of kernel.log. */
static void
dir_write(const char *name, const char *data, size_t n, bool append)
{
	char *path = path_in_dir(name);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
	ssize_t w;

	if (fd < 0)
		die(EX_OSERR, "%s: %s", path, strerror(errno));
	while (n > 0) {
		w = write(fd, data, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die(EX_OSERR, "%s: write: %s", path, strerror(errno));
		data += w;
		n -= (size_t)w;
	}
	close(fd);
	free(path);
}

static char *
read_file(const char *path, off_t from, size_t *len)
{
	struct buf b = { 0 };
	char tmp[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return NULL;
	if (from > 0 && lseek(fd, from, SEEK_SET) < 0) {
		close(fd);
		return NULL;
	}
	buf_add(&b, "", 0);
	while ((r = read(fd, tmp, sizeof tmp)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		buf_add(&b, tmp, (size_t)r);
	}
	close(fd);
	*len = b.n;
	return b.p;
}

/* ---- the profile: s-expressions ------------------------------------------ */
enum nkind { N_LIST, N_ATOM, N_STR, N_REGEX };

struct node {
	enum nkind kind;
	char *s;		/* atom, string (unescaped) or regex (as written) */
	struct node **kid;
	size_t n, cap;
	int line;
};

struct parser {
	const char *p, *end;
	int line;
	const char *err;
	int errline;
};

static bool
perr(struct parser *ps, const char *msg)
{
	if (!ps->err) {
		ps->err = msg;
		ps->errline = ps->line;
	}
	return false;
}

static void
skip_space(struct parser *ps)
{
	while (ps->p < ps->end) {
		if (*ps->p == '\n') {
			ps->line++;
			ps->p++;
		} else if (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r' || *ps->p == '\f' || *ps->p == '\v') {
			ps->p++;
		} else if (*ps->p == ';') {
			while (ps->p < ps->end && *ps->p != '\n')
				ps->p++;
		} else {
			break;
		}
	}
}

static struct node *
node_new(enum nkind k, int line)
{
	struct node *n = xrealloc(NULL, sizeof *n);

	memset(n, 0, sizeof *n);
	n->kind = k;
	n->line = line;
	return n;
}

static void
node_add(struct node *l, struct node *k)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4;
		l->kid = xrealloc(l->kid, l->cap * sizeof *l->kid);
	}
	l->kid[l->n++] = k;
}

/* A string after its opening quote: \" and \\ are the only escapes (sbx's escaper writes no
 * other); a regex string (#"...") keeps its backslashes, \" does not end it. */
static struct node *
parse_string(struct parser *ps, bool regex)
{
	struct node *n = node_new(regex ? N_REGEX : N_STR, ps->line);
	struct buf b = { 0 };

	buf_add(&b, "", 0);
	for (;;) {
		if (ps->p >= ps->end)
			return perr(ps, "unterminated string"), NULL;
		char c = *ps->p++;

		if (c == '"')
			break;
		if (c == '\n')
			ps->line++;
		if (c == '\\') {
			if (ps->p >= ps->end)
				return perr(ps, "unterminated string"), NULL;
			char e = *ps->p++;

			if (regex) {
				if (e != '"')
					buf_add(&b, "\\", 1);
				buf_add(&b, &e, 1);
				continue;
			}
			if (e != '"' && e != '\\')
				return perr(ps, "unknown escape in a string (only \\\" and \\\\)"), NULL;
			c = e;
		}
		buf_add(&b, &c, 1);
	}
	n->s = b.p;
	return n;
}

static struct node *
parse_form(struct parser *ps, int depth)
{
	skip_space(ps);
	if (ps->p >= ps->end)
		return perr(ps, "unexpected end of profile"), NULL;
	if (depth > MAX_DEPTH)
		return perr(ps, "nested too deeply"), NULL;
	if (*ps->p == '(') {
		struct node *l = node_new(N_LIST, ps->line);

		ps->p++;
		for (;;) {
			skip_space(ps);
			if (ps->p >= ps->end)
				return perr(ps, "unbalanced parentheses: a list is not closed"), NULL;
			if (*ps->p == ')') {
				ps->p++;
				return l;
			}
			struct node *k = parse_form(ps, depth + 1);

			if (!k)
				return NULL;
			node_add(l, k);
		}
	}
	if (*ps->p == ')')
		return perr(ps, "unbalanced parentheses: unexpected )"), NULL;
	if (*ps->p == '"') {
		ps->p++;
		return parse_string(ps, false);
	}
	if (*ps->p == '#' && ps->p + 1 < ps->end && ps->p[1] == '"') {
		ps->p += 2;
		return parse_string(ps, true);
	}
	const char *s = ps->p;

	while (ps->p < ps->end && !strchr(" \t\r\n\f\v();\"", *ps->p))
		ps->p++;
	if (ps->p == s || memchr(s, 0, (size_t)(ps->p - s)))
		return perr(ps, "unexpected character"), NULL;
	struct node *a = node_new(N_ATOM, ps->line);

	a->s = xstrndup(s, (size_t)(ps->p - s));
	return a;
}

static bool
is_atom(const struct node *n, const char *s)
{
	return n && n->kind == N_ATOM && strcmp(n->s, s) == 0;
}

/* (HEAD "STRING"): its string, or NULL */
static const char *
filter_string(const struct node *f, const char *head)
{
	if (f->kind == N_LIST && f->n == 2 && is_atom(f->kid[0], head) && f->kid[1]->kind == N_STR)
		return f->kid[1]->s;
	return NULL;
}

/* ---- the translation ------------------------------------------------------ */
enum rkind { R_ALLOW_WRITE, R_DENY_WRITE, R_DENY_READ, R_ALLOW_READ, R_HOST_PORT, R_ALL_UNIX };

struct rule {
	enum rkind kind;
	const char *path;
	int port;
};

static struct rule *rules;
static size_t nrules, caprules;

static void
rule_add(enum rkind k, const char *path, int port)
{
	if (nrules == caprules) {
		caprules = caprules ? caprules * 2 : 64;
		rules = xrealloc(rules, caprules * sizeof *rules);
	}
	rules[nrules++] = (struct rule){ k, path, port };
}

static bool
path_within(const char *p, const char *d)
{
	size_t n = strlen(d);

	if (strcmp(d, "/") == 0)
		return p[0] == '/';
	return strncmp(p, d, n) == 0 && (p[n] == 0 || p[n] == '/');
}

/* A path-bearing filter of a file rule: (subpath "P") or (literal "P"); NULL for the others
 * (regex, require-*, with ...: not emulated). */
static const char *
file_filter_path(const struct node *f)
{
	const char *p = filter_string(f, "subpath");

	return p ? p : filter_string(f, "literal");
}

static void
collect_rule(const struct node *r)
{
	bool allow;
	const char *op;
	size_t i;

	if (r->kind != N_LIST || r->n < 2 || !(is_atom(r->kid[0], "allow") || is_atom(r->kid[0], "deny")) ||
	    r->kid[1]->kind != N_ATOM)
		return;	/* (import ...), (debug ...), ...: nothing to emulate */
	allow = is_atom(r->kid[0], "allow");
	op = r->kid[1]->s;
	if (strcmp(op, "file-write*") == 0) {
		bool any = false;

		for (i = 2; i < r->n; i++) {
			const char *p = file_filter_path(r->kid[i]);

			if (r->kid[i]->kind == N_LIST)
				any = true;
			if (p)
				rule_add(allow ? R_ALLOW_WRITE : R_DENY_WRITE, p, 0);
		}
		if (!any && allow)
			rule_add(R_ALLOW_WRITE, "/", 0);	/* (allow file-write*): everything */
	} else if (strcmp(op, "file-read*") == 0) {
		for (i = 2; i < r->n; i++) {
			const char *p = file_filter_path(r->kid[i]);

			if (p)
				rule_add(allow ? R_ALLOW_READ : R_DENY_READ, p, 0);
		}
	} else if (strcmp(op, "network-outbound") == 0 && allow) {
		for (i = 2; i < r->n; i++) {
			const struct node *f = r->kid[i];
			const char *ip;

			if (f->kind == N_LIST && f->n == 3 && is_atom(f->kid[0], "remote") && is_atom(f->kid[1], "ip") &&
			    f->kid[2]->kind == N_STR && (ip = f->kid[2]->s) && strncmp(ip, "localhost:", 10) == 0) {
				char *e;
				long port = strtol(ip + 10, &e, 10);

				if (*e == 0 && port >= 1 && port <= 65535)
					rule_add(R_HOST_PORT, NULL, (int)port);
			} else if (f->kind == N_LIST && f->n == 3 && is_atom(f->kid[0], "remote") &&
			    is_atom(f->kid[1], "unix-socket") && f->kid[2]->kind == N_LIST && f->kid[2]->n == 2 &&
			    is_atom(f->kid[2]->kid[0], "path-regex") && f->kid[2]->kid[1]->kind == N_REGEX &&
			    strcmp(f->kid[2]->kid[1]->s, "^/") == 0) {
				rule_add(R_ALL_UNIX, NULL, 0);
			}
		}
	}
}

static bool
exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

/* A path as one argument of the line format: always quoted ("literal" keeps sbx from
 * expanding globs in it); a control byte has no spelling there (sbx's own escaper refuses
 * one in a profile string, so sbx-macsim never writes one). */
static void
put_path(struct buf *b, const char *directive, const char *p)
{
	const char *c;

	for (c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			die(EX_SOFTWARE, "(stand-in) a path with a control byte cannot be emulated: %s", p);
	buf_printf(b, "%s literal \"", directive);
	for (c = p; *c; c++) {
		if (*c == '"' || *c == '\\')
			buf_add(b, "\\", 1);
		buf_add(b, c, 1);
	}
	buf_puts(b, "\"\n");
}

static char *
translate(void)
{
	struct buf b = { 0 };
	size_t i, j;

	buf_puts(&b, "# generated by tests/macsim/sandbox-exec from the Seatbelt profile in profile.sb\n"
	    "observe-writes on\n");
	for (i = 0; i < nrules; i++) {
		const struct rule *r = &rules[i];
		bool ok = false;

		if (r->path && path_within(r->path, "/dev"))
			continue;	/* the inner sbx has its own /dev */
		switch (r->kind) {
		case R_ALLOW_WRITE:	/* Linux cannot bind a missing root (~/.npm/_logs) */
			if (exists(r->path))
				put_path(&b, "allow-write", r->path);
			break;
		case R_DENY_WRITE:
			for (j = 0; j < i && !ok; j++)
				ok = rules[j].kind == R_ALLOW_WRITE &&
				    (path_within(r->path, rules[j].path) || path_within(rules[j].path, r->path));
			if (ok && exists(r->path))
				put_path(&b, "deny-write", r->path);
			break;
		case R_DENY_READ:
			if (exists(r->path))
				put_path(&b, "deny-read", r->path);
			break;
		case R_ALLOW_READ:
			for (j = 0; j < i && !ok; j++)
				ok = rules[j].kind == R_DENY_READ && path_within(r->path, rules[j].path) &&
				    exists(rules[j].path);
			if (ok && exists(r->path))
				put_path(&b, "allow-read", r->path);
			break;
		case R_HOST_PORT:
			for (j = 0; j < i && !ok; j++)
				ok = rules[j].kind == R_HOST_PORT && rules[j].port == r->port;
			if (!ok)
				buf_printf(&b, "allow-host-port %d\n", r->port);
			break;
		case R_ALL_UNIX:
			buf_puts(&b, "allow-all-unix-sockets\n");
			break;
		}
	}
	return b.p;
}

/* ---- kernel.log ------------------------------------------------------------ */
static void
json_string(struct buf *b, const char *s)
{
	buf_add(b, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			buf_printf(b, "\\%c", c);
		else if (c == '\n')
			buf_puts(b, "\\n");
		else if (c == '\t')
			buf_puts(b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			buf_printf(b, "\\u%04x", c);
		else
			buf_add(b, (const char *)&c, 1);
	}
	buf_add(b, "\"", 1);
}

/* One kernel event, as one line appended in one write. */
static void
kernel_event(const char *msg)
{
	struct buf b = { 0 };
	struct timeval tv;
	struct tm tm;
	char ts[64];

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tm);
	buf_printf(&b, "{\"ts\": \"%s.%06ld\", \"process\": \"kernel\", \"pid\": 0, \"tid\": \"0x1a2b\", "
	    "\"type\": \"E\", \"msg\": ", ts, (long)tv.tv_usec);
	json_string(&b, msg);
	buf_puts(&b, "}\n");
	dir_write("kernel.log", b.p, b.n, true);
	free(b.p);
}

/* Replace every @NAME@ of the table in s. */
static char *
substitute(const char *s, const char *const *from, const char *const *to, size_t n)
{
	struct buf b = { 0 };
	size_t i;

	buf_add(&b, "", 0);
	while (*s) {
		for (i = 0; i < n; i++) {
			size_t l = strlen(from[i]);

			if (strncmp(s, from[i], l) == 0) {
				buf_puts(&b, to[i]);
				s += l;
				break;
			}
		}
		if (i == n)
			buf_add(&b, s++, 1);
	}
	return b.p;
}

/* The recorded events: records separated by a line "%%"; lines starting with '#' are
 * comments; a record's lines (without the last newline) are the event's message. */
static void
replay(const char *file, const char *tag, const char *suffix)
{
	const char *home = getenv("HOME");
	const char *from[] = { "@TAG@", "@SUFFIX@", "@HOME@" };
	const char *to[] = { tag, suffix, home ? home : "" };
	struct buf rec = { 0 };
	size_t len;
	char *text = read_file(file, 0, &len), *line, *next;

	if (!text)
		die(EX_OSERR, "(stand-in) SBX_MACSIM_REPLAY: %s: %s", file, strerror(errno));
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (line[0] == '#')
			continue;
		if (strcmp(line, "%%") == 0) {
			if (rec.n) {
				char *msg = substitute(rec.p, from, to, 3);

				kernel_event(msg);
				free(msg);
			}
			rec.n = 0;
			continue;
		}
		if (rec.n)
			buf_add(&rec, "\n", 1);
		else if (!*line)
			continue;	/* blank lines between records */
		buf_puts(&rec, line);
	}
	if (rec.n) {
		char *msg = substitute(rec.p, from, to, 3);

		kernel_event(msg);
		free(msg);
	}
	free(rec.p);
	free(text);
}

/* The inner sbx's JSON lines: flat objects of strings, numbers and null (see sbx's README,
 * "violations"). A minimal reader for them. */
struct jrec {
	char *kind, *op, *target, *comm;
	long port, pid;
};

static void
utf8_put(struct buf *b, unsigned long cp)
{
	char o[4];

	if (cp < 0x80) {
		o[0] = (char)cp;
		buf_add(b, o, 1);
	} else if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6), o[1] = (char)(0x80 | (cp & 63));
		buf_add(b, o, 2);
	} else if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12), o[1] = (char)(0x80 | (cp >> 6 & 63)), o[2] = (char)(0x80 | (cp & 63));
		buf_add(b, o, 3);
	} else {
		o[0] = (char)(0xf0 | cp >> 18), o[1] = (char)(0x80 | (cp >> 12 & 63));
		o[2] = (char)(0x80 | (cp >> 6 & 63)), o[3] = (char)(0x80 | (cp & 63));
		buf_add(b, o, 4);
	}
}

static unsigned long
hex4(const char *s, bool *ok)
{
	unsigned long v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned long)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned long)(c - 'A' + 10);
		else
			*ok = false;
	}
	return v;
}

/* a JSON string at *p (after its quote); NULL when malformed */
static char *
jstring(const char **p)
{
	struct buf b = { 0 };
	const char *s = *p;
	bool ok = true;

	buf_add(&b, "", 0);
	while (*s && *s != '"') {
		if (*s != '\\') {
			buf_add(&b, s++, 1);
			continue;
		}
		s++;
		switch (*s) {
		case '"': case '\\': case '/': buf_add(&b, s, 1); break;
		case 'n': buf_add(&b, "\n", 1); break;
		case 't': buf_add(&b, "\t", 1); break;
		case 'r': buf_add(&b, "\r", 1); break;
		case 'b': buf_add(&b, "\b", 1); break;
		case 'f': buf_add(&b, "\f", 1); break;
		case 'u': {
			unsigned long cp;

			if (strnlen(s + 1, 4) < 4)
				goto bad;
			cp = hex4(s + 1, &ok);
			s += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && s[1] == '\\' && s[2] == 'u' && strnlen(s + 3, 4) == 4) {
				unsigned long lo = hex4(s + 3, &ok);

				if (lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					s += 6;
				}
			}
			if (!ok)
				goto bad;
			utf8_put(&b, cp);
			break;
		}
		default:
			goto bad;
		}
		s++;
	}
	if (*s != '"')
		goto bad;
	*p = s + 1;
	return b.p;
bad:
	free(b.p);
	return NULL;
}

static bool
jrecord(const char *s, struct jrec *r)
{
	memset(r, 0, sizeof *r);
	while (*s == ' ')
		s++;
	if (*s++ != '{')
		return false;
	for (;;) {
		char *key, *str = NULL;
		long num = 0;

		while (*s == ' ' || *s == ',')
			s++;
		if (*s == '}')
			return r->kind != NULL;
		if (*s++ != '"' || !(key = jstring(&s)))
			return false;
		while (*s == ' ')
			s++;
		if (*s++ != ':')
			return false;
		while (*s == ' ')
			s++;
		if (*s == '"') {
			s++;
			if (!(str = jstring(&s)))
				return false;
		} else if (strncmp(s, "null", 4) == 0) {
			s += 4;
		} else {
			char *e;

			num = strtol(s, &e, 10);
			if (e == s)
				return false;
			s = e;
		}
		if (strcmp(key, "kind") == 0)
			r->kind = str, str = NULL;
		else if (strcmp(key, "op") == 0)
			r->op = str, str = NULL;
		else if (strcmp(key, "target") == 0)
			r->target = str, str = NULL;
		else if (strcmp(key, "comm") == 0)
			r->comm = str, str = NULL;
		else if (strcmp(key, "port") == 0)
			r->port = num;
		else if (strcmp(key, "pid") == 0)
			r->pid = num;
		free(key);
		free(str);
	}
}

static bool
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The Seatbelt operation a Mac's kernel would name for the refused Linux syscall. */
static const char *
seatbelt_op(const char *op, const char *target)
{
	if (strcmp(op, "open") == 0 || strcmp(op, "openat") == 0 || strcmp(op, "openat2") == 0 ||
	    strcmp(op, "creat") == 0)
		return exists(target) ? "file-write-data" : "file-write-create";
	if (starts(op, "unlink") || strcmp(op, "rmdir") == 0 || starts(op, "rename"))
		return "file-write-unlink";
	if (starts(op, "mkdir") || starts(op, "mknod") || starts(op, "symlink") || starts(op, "link"))
		return "file-write-create";
	if (strstr(op, "chmod"))
		return "file-write-mode";
	if (strstr(op, "chown"))
		return "file-write-owner";
	if (starts(op, "utime") || strcmp(op, "futimesat") == 0)
		return "file-write-times";
	if (strstr(op, "xattr"))
		return "file-write-xattr";
	return "file-write-data";	/* truncate, and the rest */
}

/* ---- which rule refused ---------------------------------------------------------
 * A Mac's kernel logs a refusal with the message of the rule that decided it, and none when
 * that rule has no (with message ...): so the tag is taken from the profile, never added
 * here. The rule is the last one whose operations and filters match (Seatbelt's order). */
static const struct node *profile_top;

static bool
op_matches(const char *rule_op, const char *op)
{
	size_t n = strlen(rule_op);

	if (strcmp(rule_op, "default") == 0 || strcmp(rule_op, op) == 0)
		return true;
	return n > 1 && rule_op[n - 1] == '*' && strncmp(op, rule_op, n - 1) == 0;
}

/* Does a filter match path (NULL: an operation with no path, a connection)? literal,
 * subpath, regex and path-regex (POSIX extended, as Seatbelt's), vnode-type, require-*;
 * any other filter (network, mach) does not. */
static bool
filter_matches(const struct node *f, const char *path)
{
	const char *h, *arg;
	size_t i;

	if (f->kind != N_LIST || f->n < 2 || f->kid[0]->kind != N_ATOM)
		return false;
	h = f->kid[0]->s;
	arg = f->kid[1]->kind == N_STR || f->kid[1]->kind == N_REGEX || f->kid[1]->kind == N_ATOM ?
	    f->kid[1]->s : NULL;
	if (strcmp(h, "require-all") == 0 || strcmp(h, "require-any") == 0) {
		bool all = h[8] == 'a' && h[9] == 'l';

		for (i = 1; i < f->n; i++)
			if (filter_matches(f->kid[i], path) != all)
				return !all;
		return all;
	}
	if (strcmp(h, "require-not") == 0)
		return !filter_matches(f->kid[1], path);
	if (!path || !arg)
		return false;
	if (strcmp(h, "literal") == 0)
		return strcmp(path, arg) == 0;
	if (strcmp(h, "subpath") == 0)
		return path_within(path, arg);
	if (strcmp(h, "regex") == 0 || strcmp(h, "path-regex") == 0) {
		regex_t re;
		bool hit;

		if (regcomp(&re, arg, REG_EXTENDED | REG_NOSUB) != 0)
			die(EX_DATAERR, "(stand-in) a regex it cannot compile: %s", arg);
		hit = regexec(&re, path, 0, NULL, 0) == 0;
		regfree(&re);
		return hit;
	}
	if (strcmp(h, "vnode-type") == 0) {
		struct stat st;

		return lstat(path, &st) == 0 && strcmp(arg, S_ISDIR(st.st_mode) ? "DIRECTORY" :
		    S_ISREG(st.st_mode) ? "REGULAR-FILE" : S_ISLNK(st.st_mode) ? "SYMLINK" : "OTHER") == 0;
	}
	return false;
}

/* The message of the rule that decides op on path: NULL when it carries none. */
static const char *
deciding_message(const char *op, const char *path)
{
	const char *msg = NULL;
	size_t i, k;

	for (i = 1; profile_top && i < profile_top->n; i++) {
		const struct node *r = profile_top->kid[i];
		const char *m = NULL;
		bool op_hit = false, filters = false, hit = false;

		if (r->kind != N_LIST || r->n < 2 || !(is_atom(r->kid[0], "allow") || is_atom(r->kid[0], "deny")))
			continue;
		for (k = 1; k < r->n; k++) {
			const struct node *x = r->kid[k];

			if (x->kind == N_ATOM) {
				op_hit |= op_matches(x->s, op);
			} else if (x->kind == N_LIST && x->n == 3 && is_atom(x->kid[0], "with") &&
			    is_atom(x->kid[1], "message") && x->kid[2]->kind == N_STR) {
				m = x->kid[2]->s;
			} else {
				filters = true;
				hit |= filter_matches(x, path);
			}
		}
		if (op_hit && (!filters || hit))
			msg = m;
	}
	return msg;
}

/* The inner sbx's JSON lines from offset from on, each whole one as a kernel event; returns
 * the offset after the last whole line (the inner sbx writes a record in one write(2), but a
 * line is taken only once its newline is there). */
static off_t
convert_inner(off_t from)
{
	char *path = path_in_dir("inner.jsonl"), *line, *next;
	size_t len;
	char *text = read_file(path, from, &len);

	free(path);
	if (!text)
		return from;
	for (line = text; (next = strchr(line, '\n')); line = next) {
		struct jrec r;
		struct buf m = { 0 };

		*next++ = 0;
		from += next - line;
		if (!jrecord(line, &r)) {
			fprintf(stderr, "sandbox-exec: (stand-in) an inner violation line it cannot read: %s\n", line);
			continue;
		}
		if (strcmp(r.kind, "file") == 0 && r.op && r.target) {
			const char *op = seatbelt_op(r.op, r.target), *msg = deciding_message(op, r.target);

			buf_printf(&m, "Sandbox: %s(%ld) deny(1) %s %s%s%s", r.comm ? r.comm : "?", r.pid, op,
			    r.target, msg ? "\n" : "", msg ? msg : "");
		} else if (strcmp(r.kind, "connect") == 0 && r.target) {
			const char *msg = deciding_message("network-outbound", NULL);

			buf_printf(&m, "Sandbox: %s(%ld) deny(1) network-outbound %s:%ld%s%s", r.comm ? r.comm : "?",
			    r.pid, r.target, r.port, msg ? "\n" : "", msg ? msg : "");
		}
		if (m.p)
			kernel_event(m.p);
		free(m.p);
		free(r.kind), free(r.op), free(r.target), free(r.comm);
	}
	free(text);
	return from;
}

/* ---- running the command ------------------------------------------------------ */
static volatile pid_t child;

static void
forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

static void
write_proc(const char *file, const char *s)
{
	int fd = open(file, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s)) {
		fprintf(stderr, "sandbox-exec: (stand-in) %s: %s\n", file, strerror(errno));
		_exit(EX_OSERR);
	}
	close(fd);
}

/* In the child: a user namespace where this uid is INNER_UID (see UIDS above). */
static void
remap_uid(void)
{
	unsigned u = (unsigned)geteuid(), g = (unsigned)getegid();
	unsigned nu = u == INNER_UID ? INNER_UID + 1 : INNER_UID;
	char map[64];

	if (unshare(CLONE_NEWUSER) < 0) {
		fprintf(stderr, "sandbox-exec: (stand-in) cannot make a user namespace for the inner sbx: %s\n",
		    strerror(errno));
		_exit(EX_OSERR);
	}
	write_proc("/proc/self/setgroups", "deny");
	snprintf(map, sizeof map, "%u %u 1", nu, u);
	write_proc("/proc/self/uid_map", map);
	snprintf(map, sizeof map, "%u %u 1", nu, g);
	write_proc("/proc/self/gid_map", map);
}

static void
usage(void)
{
	fputs("usage: sandbox-exec [-f profile-file] [-n profile-name] [-p profile-string] "
	    "[-D key=value ...] command [arguments ...]\n"
	    "(stand-in for tests: only -p PROFILE [--] command [arguments ...])\n", stderr);
	exit(EX_USAGE);
}

int
main(int argc, char **argv)
{
	const char *profile, *sbx, *replay_file, *tag, *suffix;
	char **cmd, **av, *policy, *gen, *viol, *inner;
	struct parser ps;
	struct node *top = node_new(N_LIST, 1), *f;
	struct stat st;
	off_t from = 0;
	size_t i, n;
	int ai, status;

	if (argc < 4 || strcmp(argv[1], "-p") != 0)
		usage();
	profile = argv[2];
	ai = 3;
	if (strcmp(argv[ai], "--") == 0)
		ai++;
	if (ai >= argc)
		usage();
	cmd = argv + ai;

	dir = getenv("SBX_MACSIM_DIR");
	sbx = getenv("SBX_MACSIM_LINUX_SBX");
	if (!dir || !*dir)
		die(EX_SOFTWARE, "(stand-in) SBX_MACSIM_DIR is not set");
	if (!sbx || !*sbx)
		die(EX_SOFTWARE, "(stand-in) SBX_MACSIM_LINUX_SBX is not set");
	dir_write("profile.sb", profile, strlen(profile), false);
	dir_write("profiles.log", profile, strlen(profile), true);
	dir_write("profiles.log", "\n", 1, true);

	/* parse: (version 1), (deny default (with message "TAG")), then the rules */
	memset(&ps, 0, sizeof ps);
	ps.p = profile;
	ps.end = profile + strlen(profile);
	ps.line = 1;
	for (;;) {
		skip_space(&ps);
		if (ps.p >= ps.end)
			break;
		if (!(f = parse_form(&ps, 0)))
			die(EX_DATAERR, "syntax error: line %d: %s", ps.errline, ps.err);
		node_add(top, f);
	}
	if (top->n < 1 || top->kid[0]->kind != N_LIST || top->kid[0]->n != 2 || !is_atom(top->kid[0]->kid[0], "version") ||
	    !is_atom(top->kid[0]->kid[1], "1"))
		die(EX_DATAERR, "syntax error: the profile does not start with (version 1)");
	f = top->n >= 2 ? top->kid[1] : NULL;
	if (top->n == 2 && f->kind == N_LIST && f->n == 2 && is_atom(f->kid[0], "allow") && is_atom(f->kid[1], "default")) {
		/* (version 1)(allow default), sbx --check's probe: no restriction at all, so the
		 * command runs as it is (on a Mac, in sandbox-exec's own process) */
		execvp(cmd[0], cmd);
		die(127, "execvp() of '%s' failed: %s", cmd[0], strerror(errno));
	}
	if (!f || f->kind != N_LIST || f->n != 3 || !is_atom(f->kid[0], "deny") || !is_atom(f->kid[1], "default") ||
	    f->kid[2]->kind != N_LIST || f->kid[2]->n != 3 || !is_atom(f->kid[2]->kid[0], "with") ||
	    !is_atom(f->kid[2]->kid[1], "message") || f->kid[2]->kid[2]->kind != N_STR)
		die(EX_DATAERR, "syntax error: (version 1) is not followed by (deny default (with message \"TAG\")) "
		    "(stand-in: sbx always tags its profile)");
	tag = f->kid[2]->kid[2]->s;
	suffix = strstr(tag, "_END_") ? strstr(tag, "_END_") + 5 : "";
	dir_write("tag", tag, strlen(tag), false);
	dir_write("tag", "\n", 1, true);

	profile_top = top;
	for (i = 2; i < top->n; i++)
		collect_rule(top->kid[i]);
	policy = translate();
	dir_write("generated.policy", policy, strlen(policy), false);

	/* the recorded events, as the command starts */
	replay_file = getenv("SBX_MACSIM_REPLAY");
	if (replay_file && *replay_file)
		replay(replay_file, tag, suffix);

	/* sbx -c generated.policy --violations=inner.jsonl -- /usr/bin/env -i K=V... CMD ARGS */
	gen = path_in_dir("generated.policy");
	inner = path_in_dir("inner.jsonl");
	if (stat(inner, &st) == 0)
		from = st.st_size;
	viol = xrealloc(NULL, strlen(inner) + 16);
	sprintf(viol, "--violations=%s", inner);
	for (n = 0; environ[n]; n++)
		;
	for (i = 0; cmd[i]; i++)
		;
	av = xrealloc(NULL, (8 + n + i) * sizeof *av);
	n = 0;
	av[n++] = (char *)sbx;
	av[n++] = "-c";
	av[n++] = gen;
	av[n++] = viol;
	av[n++] = "--";
	av[n++] = "/usr/bin/env";
	av[n++] = "-i";
	for (i = 0; environ[i]; i++)
		if (!starts(environ[i], "SBX_MACSIM_") && strchr(environ[i], '='))
			av[n++] = environ[i];
	for (i = 0; cmd[i]; i++)
		av[n++] = cmd[i];
	av[n] = NULL;

	for (i = 0; i < sizeof forwarded / sizeof *forwarded; i++) {
		struct sigaction sa;

		memset(&sa, 0, sizeof sa);
		sa.sa_handler = forward;
		sa.sa_flags = SA_RESTART;
		sigaction(forwarded[i], &sa, NULL);
	}
	child = fork();
	if (child < 0)
		die(EX_OSERR, "fork: %s", strerror(errno));
	if (child == 0) {
		pid_t parent = getppid();

		for (i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
			signal(forwarded[i], SIG_DFL);
		/* on a Mac the command IS sandbox-exec's process: it cannot outlive it */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(EX_OSERR);
		remap_uid();
		execv(sbx, av);
		fprintf(stderr, "sandbox-exec: (stand-in) %s: %s\n", sbx, strerror(errno));
		_exit(EX_OSERR);
	}
	/* what the inner sbx refuses, as the Mac kernel's log events, as it happens (every 10 ms) */
	for (;;) {
		pid_t w = waitpid(child, &status, WNOHANG);

		from = convert_inner(from);
		if (w == child)
			break;
		if (w < 0 && errno != EINTR)
			die(EX_OSERR, "waitpid: %s", strerror(errno));
		usleep(10000);
	}
	convert_inner(from);

	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
