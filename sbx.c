/* sbx: run one untrusted command inside an OS-level boundary.
 *
 * ====================================================================
 * 0. MAP (keep the structure of this file intact)
 * ====================================================================
 *
 * sbx turns a policy into a boundary around one command:
 *
 *   policy file (srt settings JSON, or the line format)
 *     -> struct policy                  (section 3, pure)
 *     -> facts about the disk           (5a the disk view, 5c the rules
 *                                        resolved, the globs expanded, the
 *                                        scan for dangerous names and git)
 *     -> struct plan: a list of mounts  (5d, pure)
 *     -> the run's facts, the bwrap argv, the seccomp programs, the
 *        messages between sbx's processes (section 6, pure)
 *     -> the proxy and the violations log (sections 7, 8: services)
 *     -> the run on disk (9), then bwrap runs `sbx --inner` (10a): nested
 *        namespaces, sbx-init, the filters, then the command
 *
 * Reads are open except what the policy denies; writes are closed except the
 * allowed roots; the network namespace is empty; seccomp filters close what
 * namespaces leave open (Unix sockets, io_uring, new namespaces and mounts,
 * TIOCSTI, the keyring, other syscall ABIs). The kernel's mount table IS
 * the filesystem policy: there are no path checks in user space, so nothing
 * a racing command does to a path name can change a decision.
 *
 * Build:   cc -o sbx sbx.c          (Linux x86_64/arm64; nothing beyond libc)
 * Test:    make test
 * Use:     ./sbx -c policy.example -- make test
 *
 * Sections, in the order data flows: the pure parts, then the services,
 * then the runners, then the CLI. Each division opens with the prototypes
 * it needs (a forward reference, or functions that call each other); there
 * are none in the middle. (grep -n '^ \* [0-9]*\. [A-Z]\|^/\* ---- ' sbx.c
 * prints the banners this list must match.)
 *   1. Platform switch and limits, and the platform interface (what each
 *      runner section defines, so shared code never asks the platform)
 *   2. Utilities: 2.1 the arena, 2.2 vectors, buffers, a string set, 2.3
 *      directories read into a buffer of our own, 2.4 descriptors
 *      (inherited ones closed on exec as sbx starts; passing them over a
 *      socket), 2.5 path helpers
 *   3. Policy: 3.1 the model, 3.2 the directive table, 3.3 values, 3.4 the
 *      line format, 3.5 a JSON reader, 3.6 srt settings as a table, 3.7
 *      printers, 3.8 a reader of git's config format, 3.9 a policy
 *      update (a control-fd line): what changed, what applies live
 *   4. Matching: 4.1 domain patterns, 4.2 addresses, 4.3 globs, 4.4 hosts
 *      (the canonical form), 4.5 domain patterns matched (the network
 *      decision), 4.6 resolved-address classes (for the proxy), 4.7 the
 *      routes: the MITM proxy's socket, the parent proxy, or direct
 *   5. Filesystem plan (pure, over a disk view): 5a the disk view, path
 *      resolution and glob expansion, 5b facts and mounts (the types), 5c
 *      from policy rules to facts (the dangerous names, what a git
 *      repository runs, the fact finder, what an agent's settings run, the
 *      scan), 5d the mount plan (facts -> mounts)
 *   6. Renderers and wire formats (pure): 6a the run's facts and the bwrap
 *      argv, 6b the seccomp programs (seccomp_bpf.h: syscall tables, rule
 *      tables, assembler, disassembler), 6c the messages between sbx's
 *      processes (control, handed fds, expose-port, decision records, the
 *      observer's events, the network tables), 6d the Seatbelt profile (the plan and the
 *      network policy as SBPL, for macOS; printed on every platform)
 *   7. Proxy: the poll() loop; 7.1 parsers (pure: HTTP head, SOCKS5/4a, the
 *      SSH refusal, DNS messages), 7.2 resolver threads, 7.3 connections
 *      and relay, 7.4 the DNS stub and capture, 7.5 the lockdown (per
 *      platform), 7.6 the proxy process as its steps
 *   8. Violations: 8.1 one store of every refusal and the report (srt's
 *      <sandbox_violations> block: of each class the first and the last,
 *      the refusals that matter most a class apart; JSON lines, rotated
 *      past a cap; --explain's hints), 8.2 the sources (the observer's
 *      events judged against the plan, the proxy's decisions, macOS's
 *      unified log parsed; the audit's come from 9b)
 *   9. The run on disk (every platform): 9a the runtime directory and the
 *      placeholders shared by concurrent runs (a registry of flock(2)ed
 *      entries on tmpfs, a pool they are set aside in; untouched TMPDIRs
 *      kept as spares), 9b the audit of repositories made during the run
 *      (and what the sandbox touched, so it acts only on the sandbox's), 9c the
 *      programs sbx runs (found, tamper-checked), the caller's denied
 *      variables forgotten, the signals passed on, 9d live policy: the
 *      control fd's lines read, compared, the network lists applied, 9e
 *      the MITM route: the proxy's socket, dialled by sbx
 *  10. Linux runner: 10a the inner helper (the listeners it hands over, the
 *      socat bridge, expose-port connections, nested namespaces, sbx-init
 *      and the symlinks it pins and the names in writable places it binds
 *      (asking sbx to cover again what another program changed),
 *      capabilities, the filters, the hand that gives sbx the observer's
 *      listener, the command started with vfork, a session's with
 *      clone(CLONE_VM) on a stack of its own, in a session of its own), 10b
 *      the write observer (the listener's reader, a process of its own; the
 *      checks that it read what the kernel acts on, for the audit), 10c running
 *      under bwrap as named steps (the proxy forked on the first
 *      connection, the observer on the first call it sees), 10d --check,
 *      10e the platform interface on Linux (the proxy's lockdown: Landlock
 *      and its seccomp program), 10f sessions
 *      (one sandbox, many commands: the daemon and its sbx-tidy, sbx exec,
 *      the agent hooks)
 *  11. macOS runner (Seatbelt): 11a the platform interface on macOS, 11b the
 *      log monitor, 11c sandbox-exec as sbx's child, the proxy on loopback
 *      with a per-run credential, as named steps, 11d --check
 *  12. CLI and main: option table, usage, the print modes, named steps
 *
 * Invariants (../shared/DESIGN.md section 3):
 *   - Fail closed: if the boundary cannot be built as asked, exit 125 and
 *     never run the command.
 *   - Deny wins: a write deny (the policy's or a mandatory one) is a read-only
 *     mount placed after every allow it overrides; its ancestors inside a
 *     writable root are pinned with a bind so they cannot be renamed away.
 *   - sbx cannot be tampered with from inside: if its own binary, bwrap or
 *     socat would be writable in the sandbox, sbx refuses (unless
 *     disable-filesystem switched the filesystem boundary off: one warning).
 *   - Nothing written inside runs later outside: the mandatory denies, every
 *     entry of .git through which git runs code, what git's config names,
 *     what an agent's settings name, and the audit of repositories made
 *     during the run (5c, 9b).
 *   - Concurrent runs never weaken each other, and nothing a sandbox wrote
 *     is trusted without proof: placeholders are shared and locked (9a),
 *     the runtime directory is never where a command can write.
 *   - The caller's state stays outside: only fds 0, 1, 2 and no variable
 *     deny-env names reach the command.
 *   - Everything from inside is hostile; the policy is trusted but checked
 *     strictly, because a typo there silently weakens the boundary.
 *
 * Memory: one arena per process (2.1). Policy, plan and argv strings are
 * allocated there and never freed; the arena dies with the process (one
 * exception: a control-fd line's reading is released, 9d). No
 * arena allocation after the proxy's lockdown (it lives for hours; amalloc
 * enforces it).
 * Errors: pure code returns -1 and fills a struct err (err_set, the one
 * setter); setup code calls die() or die_hint() and exits 125.
 *
 * Glossary: root = a writable directory (allow-write); deny = a path that a
 * mount covers; placeholder = an empty file or directory sbx creates so that
 * a missing dangerous name can be covered; pin = a bind of a directory onto
 * itself, so it is a mount point and rename(2)/rmdir(2) fail with EBUSY.
 */

/* ====================================================================
 * 1. PLATFORM SWITCH AND LIMITS
 * ==================================================================== */

#if defined(SBX_FORCE_MACOS) || defined(__APPLE__)
#  define SBX_MACOS 1	/* SBX_FORCE_MACOS: exercise the macOS path on Linux */
#  define SBX_SELF_BOUND_INSIDE 0	/* no mounts: sbx --connect runs from where sbx is */
#  define SBX_PLACEHOLDERS 0	/* a Seatbelt rule matches a name not there yet: no mount point needed */
#  define SBX_RECORD_SOCKET SOCK_DGRAM	/* macOS has no SOCK_SEQPACKET for AF_UNIX ... */
#  define SBX_PROXY_WATCHES_PARENT 1	/* ... and a datagram pair never hangs up: the proxy looks */
#  define SBX_RECORD_BATCH_BYTES 2048	/* ... and takes no datagram longer (net.local.dgram.maxdgram) */
#  define SBX_DNS_STUB 0	/* the command uses the system's resolver: no network namespace to answer in */
#  define SBX_REGISTRY_BASE NULL	/* the placeholder registry stays in the runtime root (no placeholders) */
#elif defined(__linux__)
#  define SBX_LINUX 1
#  define SBX_SELF_BOUND_INSIDE 1	/* bound under the runtime root, whatever covers its path */
#  define SBX_PLACEHOLDERS 1	/* a mount needs something to mount on (9a) */
#  define SBX_RECORD_SOCKET SOCK_SEQPACKET	/* the proxy's records: one a message, and a hang-up when sbx dies */
#  define SBX_PROXY_WATCHES_PARENT 0
#  define SBX_RECORD_BATCH_BYTES 4096	/* the proxy's allows, batched in one message (7) */
#  define SBX_DNS_STUB 1	/* network-dns and network-capture: the stub inside the namespace (7.4) */
#  ifndef SBX_REGISTRY_BASE
#    define SBX_REGISTRY_BASE "/dev/shm"	/* the registry and run directories, on tmpfs, out of every sandbox (9a) */
#  endif
#  ifndef _GNU_SOURCE
#    define _GNU_SOURCE	/* memfd_create, pipe2, ppoll */
#  endif
#else
#  error "sbx runs on Linux and macOS"
#endif

/* Build switches, each on by default: bench/overhead.sh builds sbx with
 * one off at a time (and all off) to measure what each step of the
 * per-command work (issue 16) buys, alone and stacked, against the same
 * bwrap floor in the same run. They never weaken the boundary: each
 * chooses between two ways of doing the same thing. */
#ifndef SBX_PH_POOL
#  define SBX_PH_POOL 1		/* placeholders set aside in a pool, not removed (9a) */
#endif
#ifndef SBX_INIT_BINDS
#  define SBX_INIT_BINDS 1	/* sbx-init binds the names in writable places (plan_binds_to_init) */
#endif
#ifndef SBX_VFORK
#  define SBX_VFORK 1		/* bwrap, and a run's command by sbx-init, started with vfork */
#endif
#ifndef SBX_TMPDIR_SPARE
#  define SBX_TMPDIR_SPARE 1	/* a run's untouched TMPDIR set aside for the next (tmpdir_spare_put) */
#endif
#ifndef SBX_SCAN_CACHE		/* the walk takes unchanged directories' listings from the scan cache (5c) */
#  ifdef SBX_LINUX
#    define SBX_SCAN_CACHE 1
#  else
#    define SBX_SCAN_CACHE 0	/* macOS: every directory listed (sc_fs_trusted) */
#  endif
#endif
#ifndef SBX_ONE_NETNS
#  define SBX_ONE_NETNS 1	/* with the DNS stub, bwrap makes no network namespace (bw_render_options) */
#endif
/* and SBX_REGISTRY_BASE=NULL: the registry and run directories in the runtime root, on disk */

#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/uio.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <ifaddrs.h>
#include <poll.h>
#include <pthread.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <net/if.h>
#include <sys/un.h>		/* the MITM proxy's socket (9e), on every platform */
#ifndef MSG_NOSIGNAL
#  define MSG_NOSIGNAL 0	/* older macOS: the proxy ignores SIGPIPE anyway */
#endif
#ifndef MSG_CMSG_CLOEXEC
#  define MSG_CMSG_CLOEXEC 0	/* macOS: recv_fds sets FD_CLOEXEC itself */
#endif
#ifndef MAP_POPULATE
#  define MAP_POPULATE 0
#endif
#ifndef POLLRDHUP
#  define POLLRDHUP 0	/* macOS: poll() never says the peer has ended; the relay reads the EOF a round later */
#endif
#if SBX_LINUX
#  include <sched.h>
#  include <sys/mount.h>
#  include <sys/statvfs.h>	/* the flags a read-only bind keeps (bind_held) */
#  include <sys/vfs.h>		/* fstatfs: the observer's walk stops at /proc (10b) */
#  include <sys/sysmacros.h>	/* major, minor: a file /proc/PID/maps names (10b) */
#  include <sys/prctl.h>
#  include <sys/ioctl.h>
#  include <sys/signalfd.h>
#  include <sys/syscall.h>
#  include <sys/utsname.h>
#  ifndef SYS_close_range
#    define SYS_close_range	436	/* Linux 5.9; the same number on x86_64 and aarch64 */
#  endif
#  define SBX_CLOSE_RANGE_CLOEXEC	(1U << 2)	/* Linux 5.11 */
#  ifndef SYS_open_tree
#    define SYS_open_tree	428	/* Linux 5.2; the same on x86_64 and aarch64 */
#    define SYS_move_mount	429
#  endif
#  ifndef SYS_mount_setattr
#    define SYS_mount_setattr	442	/* Linux 5.12 */
#  endif
#  define SBX_OPEN_TREE_CLONE		1
#  define SBX_MOVE_MOUNT_F_EMPTY_PATH	0x4
#  define SBX_AT_RECURSIVE		0x8000
#  define SBX_MOUNT_ATTR_RDONLY		0x1
#endif

#ifndef O_PATH
#  define O_PATH	O_RDONLY	/* macOS: no O_PATH; a directory opened for reading serves */
#endif
#ifndef SOCK_CLOEXEC
#  define SOCK_CLOEXEC	0	/* macOS: where a child could inherit it, fcntl() sets FD_CLOEXEC just after */
#endif
#if SBX_MACOS && defined(__APPLE__)
#  include <sys/sysctl.h>	/* the start time of a process (11a) */
#  include <mach-o/dyld.h>	/* _NSGetExecutablePath */
#endif


extern char **environ;	/* POSIX; declared by unistd.h only under _GNU_SOURCE on glibc */

#define SBX_VERSION		"0.1.0"
#define SBX_SRT_VERSION		"0.0.81"	/* the srt release whose rules we follow */

#define SBX_MAX_POLICY_BYTES	(1 << 20)	/* a policy file larger than 1 MiB is a mistake */
#define SBX_MAX_LINE_BYTES	4096		/* line format: longer lines are refused */
#define SBX_MAX_PATH_ARG_BYTES	2000		/* so any path prints as a line under 4096, escapes and all */
#define SBX_MAX_TEXT_ARG_BYTES	1000		/* a reason, an ignore-violations string */
#define SBX_MAX_INCLUDE_DEPTH	8
#define SBX_MAX_JSON_DEPTH	32
#define SBX_MAX_SYMLINKS	40		/* as the kernel's MAXSYMLINKS */
#define SBX_MAX_GLOB_MATCHES	4096		/* per pattern */
#define SBX_MAX_WALK_ENTRIES	2000000		/* per glob or scan: fail closed beyond */
#define SBX_MAX_MOUNTS		8000		/* bwrap itself copes; this bounds a runaway glob */
#define SBX_DEFAULT_DENY_DEPTH	3		/* srt's mandatoryDenySearchDepth default */
#define SBX_PROXY_HTTP_PORT	3128		/* inside the sandbox, as srt */
#define SBX_PROXY_SOCKS_PORT	1080
#define SBX_MAX_HOST_PORTS	64		/* allow-host-port and expose-port, each */
#define SBX_MAX_HOST_BYTES	255		/* a host name, as srt's isValidHost (4.4) */
/* descriptors the inner helper hands sbx: the proxy's (v4, v6), allow-host-port's (v4, v6),
 * the expose channel, the DNS stub, the capture listeners */
#define SBX_MAX_HANDED		(4 + 2 * SBX_MAX_HOST_PORTS + 1 + 1 + SBX_MAX_HOST_PORTS)
#define SBX_FRAME_MAX_BYTES	(4 << 20)	/* a session message's body (6c, 10f) */
#define SBX_EXIT_FAILURE	125		/* sbx itself failed: env(1)/timeout(1) convention */
#define SBX_EXIT_CANNOT_RUN	126
#define SBX_EXIT_NOT_FOUND	127

#define LEN(a)	(sizeof(a) / sizeof((a)[0]))

/* The platform interface. Shared code (sections 2 to 9, and 12) never asks
 * which platform it runs on: it calls these, and each runner section
 * defines every one of them, section 10 on Linux (10e), section 11 on
 * macOS (and, under SBX_FORCE_MACOS, its simulation on Linux). So every
 * #if about the platform stays in section 1 and the runner sections. */
struct policy;
struct plan;
struct run_paths;
struct run_facts;
struct vstore;
/* Mark every descriptor >= lowest close-on-exec in one call: 0, or -1
 * when this kernel cannot (2.4 then marks them one by one). */
static int plat_cloexec_fast(int lowest);
/* When process pid started (a stable number per process: a pid reused
 * later gives another), or -1 when it is gone (9a's registry). */
static long long plat_proc_start_time(pid_t pid);
/* ctime and, where the file system records it, birth time (-1 if not) of
 * dirfd/name in ns, not following a symlink; false if it is not there. */
static bool plat_file_times(int dirfd, const char *name, long long *ctime_ns, long long *btime_ns);
/* sbx's own binary, its real path (in buf), or NULL when it cannot be
 * found (replaced or deleted while it runs: an upgrade). */
static const char *plat_self_exe(char *buf, size_t n);
/* sbx started as one of its own helpers (Linux: `sbx --inner` under
 * bwrap): runs it and returns its exit status; -1 when argv is not one. */
static int plat_helper_main(int argc, char **argv);
static int plat_session_main(int *argc, char ***argv);
/* Can this platform's sandbox make the placeholders' read-only binds
 * itself, after the sandbox is built (plan_binds_to_init)? */
static bool plat_init_binds(const struct policy *p);
/* --check: can this machine build the sandbox? The exit status. */
static int plat_check(const struct policy *p);
/* Run the command in this platform's sandbox; every refusal goes to
 * store. Returns the command's exit status; dies (125) when the sandbox
 * cannot be built. */
static int plat_run(const struct policy *p, const struct plan *pl, const struct run_paths *rp,
    const struct run_facts *rf, struct vstore *store);
/* The proxy's (7): descriptors made close-on-exec and non-blocking (a TCP
 * socket, an accepted connection (-1, EAGAIN: none waits), a pipe), and
 * its lockdown before it reads a byte from the sandbox (7.5). */
/* A file of no name, read-write and close-on-exec, for what one message
 * cannot carry (the network tables, 6c); -1 with errno when there is none. */
static int plat_anon_file(const char *name);
static int px_socket_cloexec_nonblock(int family);
static int px_accept_cloexec_nonblock(int lfd);
static int px_pipe_cloexec_nonblock(int p[2]);
static void px_lockdown(void);

/* ====================================================================
 * 2. UTILITIES: errors, arena, vectors, buffers, descriptors, path helpers
 * ==================================================================== */

static const char *progname = "sbx";
static int verbose;		/* -v: show the plan's decisions on stderr */

/* Copy s into dst, a buffer of n bytes: cut to fit, always terminated
 * (when n > 0). Returns strlen(s), as strlcpy does: a result >= n says it was
 * cut. What snprintf(dst, n, "%s", s) did through printf's machinery,
 * several times over for each request in the proxy. */
static size_t
str_copy(char *dst, const char *s, size_t n)
{
	size_t len = strlen(s);

	if (n) {
		size_t k = len < n ? len : n - 1;

		memcpy(dst, s, k);
		dst[k] = '\0';
	}
	return len;
}

/* The error record of pure code: where in the input, and what. */
struct err {
	const char *file;	/* borrowed; NULL when not about a file */
	int line, col;		/* 0 when unknown */
	char msg[320];
};

/* The one error setter: every reader's own (jw_fail, fx_fail) only says
 * where, and calls this. Returns -1, so `return err_set(...)` reads well. */
static int
err_vset(struct err *e, const char *file, int line, int col, const char *fmt, va_list ap)
{
	e->file = file;
	e->line = line;
	e->col = col;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	return -1;
}

static int __attribute__((format(printf, 5, 6)))
err_set(struct err *e, const char *file, int line, int col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(e, file, line, col, fmt, ap);
	va_end(ap);
	return -1;
}

/* Format an error as "file:line:col: msg" (the parts that are known). */
static void
err_format(const struct err *e, char *out, size_t n)
{
	if (e->file && e->line && e->col)
		snprintf(out, n, "%s:%d:%d: %s", e->file, e->line, e->col, e->msg);
	else if (e->file && e->line)
		snprintf(out, n, "%s:%d: %s", e->file, e->line, e->msg);
	else if (e->file)
		snprintf(out, n, "%s: %s", e->file, e->msg);
	else
		str_copy(out, e->msg, n);
}

static void
vwarnx(const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "%s: %s\n", progname, msg);
}

static void
warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
}

/* SBX_TIMING set: one line on stderr a step, "sbx: timing T ms STEP", T
 * on CLOCK_MONOTONIC (every process of a run on the same clock, the
 * helpers inside bwrap too): where a run's time goes (docs/SCAN.md). */
static void
timing(const char *step)
{
	static int on = -1;
	struct timespec ts;

	if (on < 0)
		on = getenv("SBX_TIMING") != NULL;
	if (!on)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(stderr, "sbx: timing %.3f ms %s\n", (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6, step);
}

/* -v output: the plan's decisions, one line each. */
static void
note(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
}

/* Setup failures: one sentence, an optional hint, exit 125. Never runs the command. */
static void __attribute__((noreturn, format(printf, 2, 3)))
die_hint(const char *hint, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
	if (hint)
		fprintf(stderr, "%s: hint: %s\n", progname, hint);
	exit(SBX_EXIT_FAILURE);
}

#define die(...)	die_hint(NULL, __VA_ARGS__)

static void __attribute__((noreturn))
die_err(const struct err *e)
{
	char buf[1200];

	err_format(e, buf, sizeof(buf));
	die("%s", buf);
}

/* BUG: a check the security argument rests on; aborts even under -DNDEBUG. */
#define BUG_ON(cond) do { if (cond) { \
	fprintf(stderr, "%s: BUG at %s:%d: %s\n", progname, __FILE__, __LINE__, #cond); \
	abort(); } } while (0)

/* ---- 2.1 The arena: every long-lived allocation, never freed ------ */

struct arena_block { struct arena_block *next; size_t used, size; char data[]; };
static struct arena_block *arena_head;
static struct arena_block *arena_spare;	/* the last block arena_release freed, kept for the next */

/* The rule: no arena allocation after the proxy's lockdown. The arena is
 * never freed (its blocks are malloc'd and live as long as the process),
 * and the proxy lives as long as the command, for hours: whatever it took
 * from the arena per connection or per request would grow without bound,
 * and a command opening connections in a loop would turn that into memory
 * exhaustion outside the sandbox (DESIGN 6: a few MiB). The arena has no
 * lock either, and the resolver threads start after the lockdown. So the
 * proxy takes from the arena only while it sets up (own_addresses in
 * px_init); its loop uses the stack, or malloc and free (struct buf, the
 * relay buffers, the resolver's jobs). px_main seals the arena after
 * px_lockdown, and amalloc enforces the rule. */
static bool arena_sealed;

static void *
amalloc(size_t n)
{
	struct arena_block *b = arena_head;
	void *p;

	BUG_ON(arena_sealed);
	n = (n + 15) & ~(size_t)15;
	if (!b || b->size - b->used < n) {
		size_t size = n > 60000 ? n : 60000;

		if (arena_spare && arena_spare->size >= n) {
			b = arena_spare;
			arena_spare = NULL;
		} else if (!(b = malloc(sizeof(*b) + size))) {
			die("out of memory");
		} else {
			b->size = size;
		}
		b->next = arena_head;
		b->used = 0;
		arena_head = b;
	}
	p = b->data + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

/* From here on every amalloc is a bug (the rule above amalloc). */
static void
arena_seal(void)
{
	arena_sealed = true;
}

/* A point in the arena to come back to: arena_release frees everything
 * allocated after it (the blocks are a stack). For a reader whose result
 * is copied out before the release: a control-fd line (9d), read in a
 * process that lives as long as the command; a session's messages (10f).
 * One freed block is kept for the next amalloc that needs one: a daemon
 * whose message crosses a block's end would otherwise have musl map and
 * unmap one each time (an munmap is a TLB shootdown, dear on a VM). */
struct arena_mark { struct arena_block *head; size_t used; };

static struct arena_mark
arena_mark(void)
{
	return (struct arena_mark){ arena_head, arena_head ? arena_head->used : 0 };
}

static void
arena_release(struct arena_mark m)
{
	while (arena_head && arena_head != m.head) {
		struct arena_block *next = arena_head->next;

		if (!arena_spare || arena_spare->size < arena_head->size) {
			free(arena_spare);
			arena_spare = arena_head;
		} else {
			free(arena_head);
		}
		arena_head = next;
	}
	BUG_ON(arena_head != m.head);	/* the mark was made in this arena */
	if (arena_head)
		arena_head->used = m.used;
}

/* Free every block: for fuzz targets and tests that run the parsers many
 * times in one process. Every arena pointer is invalid afterwards. */
static void __attribute__((unused))
arena_reset(void)
{
	while (arena_head) {
		struct arena_block *next = arena_head->next;

		free(arena_head);
		arena_head = next;
	}
	free(arena_spare);
	arena_spare = NULL;
}

static char *
astrndup(const char *s, size_t n)
{
	char *p = amalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static char *
astrdup(const char *s)
{
	return astrndup(s, strlen(s));
}

static char * __attribute__((format(printf, 1, 2)))
aprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	char small[256];

	/* one pass when it fits a small buffer (nearly always: paths, notes);
	 * a run's planning formats a few hundred strings */
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	p = amalloc((size_t)n + 1);
	if ((size_t)n < sizeof(small)) {
		memcpy(p, small, (size_t)n + 1);
		return p;
	}
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

/* ---- 2.2 Vectors of pointers and growable byte buffers ------------ */

struct vec { void **v; size_t n, cap; };	/* elements borrowed (arena) */

static void
vec_push(struct vec *vv, void *p)
{
	if (vv->n == vv->cap) {
		size_t cap = vv->cap ? vv->cap * 2 : 8;
		void **nv = amalloc(cap * sizeof(*nv));

		if (vv->n)
			memcpy(nv, vv->v, vv->n * sizeof(*nv));
		vv->v = nv;
		vv->cap = cap;
	}
	vv->v[vv->n++] = p;
}

struct buf { char *p; size_t n, cap; };	/* owned, malloc'd: may grow large */

static void
buf_grow(struct buf *b, size_t extra)
{
	if (b->n + extra + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->n + extra + 1)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			die("out of memory");
		b->cap = cap;
	}
}

static void
buf_putn(struct buf *b, const char *s, size_t n)
{
	buf_grow(b, n);
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void
buf_puts(struct buf *b, const char *s)
{
	buf_putn(b, s, strlen(s));
}

static void
buf_putc(struct buf *b, char c)
{
	buf_putn(b, &c, 1);
}

/* Empty b for reuse, its memory kept (a scratch buffer: musl maps and
 * unmaps a page for a small malloc and free done alone). */
static void
buf_reset(struct buf *b)
{
	b->n = 0;
	if (b->p)
		b->p[0] = '\0';
}

/* The same for a buffer of messages kept from one to the next (a
 * session's daemon, an exec's request in sbx-init), except one a long
 * message made large: that is freed. */
static void __attribute__((unused))	/* sessions are Linux's */
buf_recycle(struct buf *b)
{
	if (b->cap > 65536) {
		free(b->p);
		*b = (struct buf){ 0 };
	}
	buf_reset(b);
}

static void __attribute__((format(printf, 2, 3)))
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

/* Append s shell-quoted: bare when it is made only of safe bytes, else in
 * single quotes with each ' written as '\''. */
static void
buf_put_shell_quoted(struct buf *b, const char *s)
{
	const char *p;
	bool safe = *s != '\0';

	for (p = s; *p && safe; p++)
		safe = isalnum((unsigned char)*p) || strchr("@%+=:,./_-", *p);
	if (safe) {
		buf_puts(b, s);
		return;
	}
	buf_putc(b, '\'');
	for (p = s; *p; p++) {
		if (*p == '\'')
			buf_puts(b, "'\\''");
		else
			buf_putc(b, *p);
	}
	buf_putc(b, '\'');
}

/* Read a whole file (at most max bytes) into a malloc'd buffer. Returns 0, or
 * -1 with errno set (EFBIG when the file is larger than max).
 * Files are opened with openat(AT_FDCWD, ...) throughout, never open():
 * musl's open() follows an O_CLOEXEC open with fcntl(F_SETFD) (for kernels
 * before 2.6.23), a system call more per file on every run; openat() does
 * not. */
static int
read_file(const char *path, size_t max, struct buf *out)
{
	int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -1;
	for (;;) {
		/* reads of 4 KiB, then of as much again as came: most files
		 * read here are small, and a 64 KiB buffer was a mmap and a
		 * munmap each */
		buf_grow(out, out->n < 4096 ? 4096 : out->n);
		r = read(fd, out->p + out->n, out->cap - out->n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		out->n += (size_t)r;
		if (out->n > max) {
			close(fd);
			errno = EFBIG;
			return -1;
		}
	}
	out->p[out->n] = '\0';
	close(fd);
	return r < 0 ? -1 : 0;
}

/* Write all of n bytes, retrying short writes. Returns 0 or -1. */
static int
write_all(int fd, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Parse a decimal integer in [lo, hi]. Returns 0, or -1 with *why set. */
static int
parse_int(const char *s, long lo, long hi, long *out, const char **why)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s) && !(*s == '-' && isdigit((unsigned char)s[1]))) {
		*why = "not a number";
		return -1;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end != '\0') {
		*why = "not a number";
		return -1;
	}
	if (errno == ERANGE || v < lo || v > hi) {
		*why = "out of range";
		return -1;
	}
	*out = v;
	return 0;
}

/* Edit distance, for "did you mean". Names are short; the table is small. */
static int
edit_distance(const char *a, const char *b)
{
	int row[64], i, j, la = (int)strlen(a), lb = (int)strlen(b);

	if (la >= 63 || lb >= 63)
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		int diag = row[0], tmp;

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);

			tmp = row[j];
			row[j] = row[j] + 1;
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (diag + cost < row[j])
				row[j] = diag + cost;
			diag = tmp;
		}
	}
	return row[lb];
}

/* The closest of names[] to s within a small distance, or NULL. */
static const char *
closest_name(const char *s, const char *const *names, size_t n)
{
	const char *best = NULL;
	int bestd = 4;
	size_t i;

	for (i = 0; i < n; i++) {
		int d = edit_distance(s, names[i]);

		if (d < bestd) {
			bestd = d;
			best = names[i];
		}
	}
	return best;
}

/* A control character: none may reach a policy value, a reply line or
 * the proxy's reports, where it could end a line or forge one. */
static bool
is_control(unsigned char ch)
{
	return ch < 0x20 || ch == 0x7f;
}

/* A set of strings (borrowed), by open addressing: for the hundred
 * thousand directories of a large tree, where a vector's linear search
 * would be quadratic. */
struct strset { const char **slot; size_t cap, n; };

static uint64_t
str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static bool
strset_has(const struct strset *set, const char *s)
{
	size_t i;

	if (!set->cap)
		return false;
	for (i = str_hash(s) & (set->cap - 1); set->slot[i]; i = (i + 1) & (set->cap - 1))
		if (strcmp(set->slot[i], s) == 0)
			return true;
	return false;
}

static void
strset_add(struct strset *set, const char *s)
{
	size_t i;

	if (2 * (set->n + 1) > set->cap) {	/* keep it at most half full */
		struct strset bigger = { NULL, set->cap ? set->cap * 2 : 64, 0 };

		bigger.slot = amalloc(bigger.cap * sizeof(*bigger.slot));
		for (i = 0; i < set->cap; i++)
			if (set->slot[i])
				strset_add(&bigger, set->slot[i]);
		*set = bigger;
	}
	for (i = str_hash(s) & (set->cap - 1); set->slot[i]; i = (i + 1) & (set->cap - 1))
		if (strcmp(set->slot[i], s) == 0)
			return;
	set->slot[i] = s;
	set->n++;
}

/* ---- 2.3 Directories, read into a buffer of our own ------------------
 *
 * musl's opendir callocs its 2 KiB DIR, a size its allocator serves from a
 * group mapped for it and unmapped again at closedir: a run opened seven
 * (the scan, the registry, the audit, removals), each an mmap, an munmap
 * and a page fault on first touch (11 us on the VM measured, where a fault
 * traps to the hypervisor). A dir_stream reads getdents64 into a buffer
 * from a small static pool instead (a walk holds one a level; past the
 * pool, malloc), touched once and reused. Elsewhere (macOS), DIR under the
 * same three calls. "." and ".." are never returned. */
#define SBX_DIR_POOL	8

struct dir_stream {
	int fd;
	bool pooled;
#if defined(SYS_getdents64)
	unsigned pos, end;
	char buf[2048] __attribute__((aligned(8)));	/* struct linux_dirent64 records */
#else
	DIR *d;
#endif
};
struct dir_entry { const char *name; unsigned char type; /* DT_*, DT_UNKNOWN where the fs says nothing */ };

static struct dir_stream dir_pool[SBX_DIR_POOL];
static bool dir_pool_used[SBX_DIR_POOL];

/* The stream's memory back to the pool (or to malloc). */
static void
dir_release(struct dir_stream *d)
{
	if (d->pooled)
		dir_pool_used[d - dir_pool] = false;
	else
		free(d);
}

/* A stream on the open directory fd, which it owns from here (closed by
 * dir_close, or now on failure). NULL + errno. */
static struct dir_stream *
dir_open_fd(int fd)
{
	struct dir_stream *d = NULL;
	size_t i;

	if (fd < 0)
		return NULL;
	for (i = 0; i < SBX_DIR_POOL && !d; i++)
		if (!dir_pool_used[i]) {
			dir_pool_used[i] = true;
			d = &dir_pool[i];
			d->pooled = true;
		}
	if (!d && (d = malloc(sizeof(*d))))
		d->pooled = false;
	if (!d) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	d->fd = fd;
#if defined(SYS_getdents64)
	d->pos = d->end = 0;
#else
	if (!(d->d = fdopendir(fd))) {
		int err = errno;

		close(fd);
		dir_release(d);
		errno = err;
		return NULL;
	}
#endif
	return d;
}

/* openat(at, path) as a directory, never following a last-component
 * symlink; then as dir_open_fd. */
static struct dir_stream *
dir_open(int at, const char *path)
{
	return dir_open_fd(openat(at, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

/* The next entry: 1 with e set (e->name good until the next call), 0 at
 * the end, -1 with errno on an error. */
static int
dir_next(struct dir_stream *d, struct dir_entry *e)
{
	for (;;) {
#if defined(SYS_getdents64)
		const char *rec;
		unsigned short reclen;

		if (d->pos >= d->end) {
			long n = syscall(SYS_getdents64, d->fd, d->buf, sizeof(d->buf));

			if (n <= 0)
				return n < 0 ? -1 : 0;
			d->pos = 0;
			d->end = (unsigned)n;
		}
		rec = d->buf + d->pos;	/* ino 8, off 8, reclen 2, type 1, name */
		memcpy(&reclen, rec + 16, 2);
		d->pos += reclen;
		e->type = (unsigned char)rec[18];
		e->name = rec + 19;
#else
		struct dirent *de;

		errno = 0;
		if (!(de = readdir(d->d)))
			return errno ? -1 : 0;
		e->type = de->d_type;
		e->name = de->d_name;
#endif
		if (strcmp(e->name, ".") && strcmp(e->name, ".."))
			return 1;
	}
}

/* The stream's descriptor (for *at calls under it). */
static int
dir_fd(const struct dir_stream *d)
{
	return d->fd;
}

static void
dir_close(struct dir_stream *d)
{
	if (!d)
		return;
#if defined(SYS_getdents64)
	close(d->fd);
#else
	closedir(d->d);
#endif
	dir_release(d);
}

/* ---- 2.4 Descriptors: inherited ones, and passing them over a socket --
 *
 * SECURITY: sbx marks every descriptor above 2 close-on-exec as it starts,
 * so none that the caller leaked (shells, IDEs and agent harnesses do)
 * reaches bwrap or the command: an open directory is a way past every
 * mount (`echo x > /proc/self/fd/7/file`), an open file a way past every
 * deny. sbx clears the flag only on the descriptors it means to pass. */

/* A copy of fd, close-on-exec, numbered lowest or above. On Linux one
 * system call: musl's fcntl follows F_DUPFD_CLOEXEC with an F_SETFD (for
 * kernels before 2.6.24), and a run dups a directory for each placeholder
 * (open_parent_nofollow): 39 calls a run. */
static int
dup_cloexec(int fd, int lowest)
{
#if SBX_LINUX
	return (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, lowest);
#else
	return fcntl(fd, F_DUPFD_CLOEXEC, lowest);
#endif
}

/* The fallback for kernels without close_range(CLOSE_RANGE_CLOEXEC)
 * (before 5.11): each open descriptor, as /proc/self/fd (or /dev/fd)
 * lists them, else every number up to the open-file limit. Returns 0, or
 * -1 when one could not be marked. */
static int
fds_cloexec_listed(int lowest)
{
	static const char *const dirs[] = { "/proc/self/fd", "/dev/fd" };
	struct rlimit rl;
	long fd, max;

	for (size_t i = 0; i < LEN(dirs); i++) {
		struct dir_stream *d = dir_open_fd(openat(AT_FDCWD, dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC));
		struct dir_entry de;
		int rc = 0;

		if (!d)
			continue;
		while (dir_next(d, &de) == 1) {
			fd = strtol(de.name, NULL, 10);
			if (!isdigit((unsigned char)de.name[0]) || fd < lowest || fd == dir_fd(d))
				continue;
			if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0 && errno != EBADF)
				rc = -1;
		}
		dir_close(d);
		return rc;
	}
	max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur : 1 << 20;
	for (fd = lowest; fd < max && fd < 1 << 20; fd++)
		if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0 && errno != EBADF)
			return -1;
	return 0;
}

static int
fds_cloexec_from(int lowest)
{
	if (plat_cloexec_fast(lowest) == 0)
		return 0;	/* one call, however many there are */
	return fds_cloexec_listed(lowest);
}

/* Close every descriptor above 2 but the n in keep. A child forked to
 * parse hostile input (the proxy, the observer) holds only what it needs,
 * whatever sbx had open when it forked: the placeholders' locks, the other
 * child's channels, the proxy's listeners (an observer taken over by a
 * memory bug must not be able to accept the command's connections and dial
 * out for it), the report's sink. Listed from /proc/self/fd (or /dev/fd),
 * else every number up to the open-file limit. */
static void
fds_close_except(const int *keep, size_t n)
{
	static const char *const dirs[] = { "/proc/self/fd", "/dev/fd" };
	struct vec open_fds = { 0 };
	struct rlimit rl;
	long fd, max;
	bool listed = false;

	for (size_t i = 0; i < LEN(dirs) && !listed; i++) {
		struct dir_stream *d = dir_open_fd(openat(AT_FDCWD, dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC));
		struct dir_entry de;

		if (!d)
			continue;
		while (dir_next(d, &de) == 1)
			if (isdigit((unsigned char)de.name[0]) && (fd = strtol(de.name, NULL, 10)) > 2 &&
			    fd != dir_fd(d))
				vec_push(&open_fds, (void *)(intptr_t)fd);
		dir_close(d);
		listed = true;
	}
	if (!listed) {
		max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur : 1 << 20;
		for (fd = 3; fd < max && fd < 1 << 20; fd++)
			vec_push(&open_fds, (void *)(intptr_t)fd);
	}
	for (size_t i = 0; i < open_fds.n; i++) {
		bool kept = false;

		fd = (long)(intptr_t)open_fds.v[i];
		for (size_t k = 0; k < n && !kept; k++)
			kept = keep[k] == fd;
		if (!kept)
			close((int)fd);
	}
}

/* One sendmsg of niov pieces with nfd descriptors attached (SCM_RIGHTS);
 * what sendmsg returns (EINTR retried). */
static ssize_t
send_iov_fds(int sock, struct iovec *iov, int niov, const int *fds, int nfd)
{
	struct msghdr mh;
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int) * SBX_MAX_HANDED)]; } u;
	ssize_t r;

	if (nfd < 0 || nfd > SBX_MAX_HANDED) {
		errno = EINVAL;
		return -1;
	}
	memset(&mh, 0, sizeof(mh));
	memset(&u, 0, sizeof(u));
	mh.msg_iov = iov;
	mh.msg_iovlen = (size_t)niov;
	if (nfd > 0) {
		struct cmsghdr *cm;

		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfd);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfd);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfd);
	}
	while ((r = sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return r;
}

/* Send n bytes with nfd descriptors attached (SCM_RIGHTS), one message. */
static int
send_fds(int sock, const void *data, size_t n, const int *fds, int nfd)
{
	struct iovec iov = { (void *)data, n };

	return send_iov_fds(sock, &iov, 1, fds, nfd) == (ssize_t)n ? 0 : -1;
}

/* Receive one message of at most cap bytes with at most max_fds
 * descriptors; more descriptors than that, or a cut message, is refused
 * (and every descriptor that came is closed). Returns the byte count
 * (*nfd set), or -1. */
static ssize_t
recv_fds(int sock, void *data, size_t cap, int *fds, int max_fds, int *nfd, int flags)
{
	struct msghdr mh;
	struct iovec iov = { data, cap };
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int) * (SBX_MAX_HANDED + 4))]; } u;
	struct cmsghdr *cm;
	int count = 0, i;
	ssize_t r;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	do
		r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);
	while (r < 0 && errno == EINTR);
	*nfd = 0;
	if (r < 0)
		return -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));

			for (i = 0; i < k; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				if (!MSG_CMSG_CLOEXEC)	/* set here where recvmsg cannot (no threads fork meanwhile) */
					(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
				if (count < max_fds)
					fds[count] = fd;
				else
					close(fd);
				count++;
			}
		}
	if (r == 0 || count > max_fds || (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
		for (i = 0; i < count && i < max_fds; i++)
			close(fds[i]);
		return -1;
	}
	*nfd = count;
	return r;
}

/* A framed message on a stream socket (the session messages, 6c): a type
 * byte, a u32 length, the body; descriptors ride on the header. */
#define SBX_FRAME_SHORT_BYTES	(PATH_MAX + 2048)	/* init's "Z" and the words of a failure fit */
static int
frame_send(int sock, char type, const void *body, size_t n, const int *fds, int nfd)
{
	char hdr[5];
	uint32_t len = (uint32_t)n;

	hdr[0] = type;
	memcpy(hdr + 1, &len, 4);
	/* header and body in one sendmsg: two writes would wake the reader
	 * twice (each a hop on a busy machine), and a session's exec crosses
	 * six of these. What a signal cut short goes on with write_all (the
	 * reader reads the body with read() either way). Without descriptors,
	 * a short one goes in one send() instead: sbx-init's "S" and "Z" are
	 * sent under the observer's program, which stops every sendmsg (its
	 * address is in memory, 10b) and lets send() go (sendto with none) */
	if (!nfd && n <= SBX_FRAME_SHORT_BYTES) {
		char one[sizeof(hdr) + SBX_FRAME_SHORT_BYTES];
		ssize_t r;

		memcpy(one, hdr, sizeof(hdr));
		memcpy(one + sizeof(hdr), body, n);
		while ((r = send(sock, one, sizeof(hdr) + n, MSG_NOSIGNAL)) < 0 && errno == EINTR)
			;
		if (r < (ssize_t)sizeof(hdr))
			return -1;
		return write_all(sock, one + r, sizeof(hdr) + n - (size_t)r);
	}
	if (n) {
		struct iovec iov[2] = { { hdr, sizeof(hdr) }, { (void *)body, n } };
		ssize_t r = send_iov_fds(sock, iov, 2, fds, nfd);

		if (r < (ssize_t)sizeof(hdr))
			return -1;	/* the header (and the descriptors with it) did not go */
		return (size_t)r == sizeof(hdr) + n ? 0 : write_all(sock, (const char *)body + (r - sizeof(hdr)),
		    n - (size_t)(r - (ssize_t)sizeof(hdr)));
	}
	return send_fds(sock, hdr, sizeof(hdr), fds, nfd);
}

/* Read one framed message (blocking; a socket with SO_RCVTIMEO bounds a
 * peer that stops half way): the body into b (emptied first), at most
 * SBX_FRAME_MAX_BYTES, and up to max_fds descriptors. Returns the type,
 * or -1 (end of stream, an error, a message too long or with too many
 * descriptors: those that came are closed). */
static int
frame_recv(int sock, struct buf *b, int *fds, int max_fds, int *nfd)
{
	char hdr[5];
	size_t got = 0;
	uint32_t len;

	*nfd = 0;
	b->n = 0;
	while (got < sizeof(hdr)) {
		int k = 0;
		ssize_t r = recv_fds(sock, hdr + got, sizeof(hdr) - got, fds + *nfd, max_fds - *nfd, &k, 0);

		if (r <= 0)
			goto fail;
		got += (size_t)r;
		*nfd += k;
	}
	memcpy(&len, hdr + 1, 4);
	if (len > SBX_FRAME_MAX_BYTES)
		goto fail;
	buf_grow(b, len + 1);
	while (b->n < len) {
		ssize_t r = read(sock, b->p + b->n, len - b->n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			goto fail;
		b->n += (size_t)r;
	}
	b->p[b->n] = '\0';
	return (unsigned char)hdr[0];
fail:
	for (int i = 0; i < *nfd; i++)
		close(fds[i]);
	*nfd = 0;
	return -1;
}

/* ---- 2.5 Path helpers ------------------------------------------- */

/* Lexically clean an absolute path: collapse "//", drop "/./" and a trailing
 * "/" or "/.". ".." is resolved against the disk later (it may pass through a
 * symlink), so it is kept. Returns an arena string. */
static char *
path_clean(const char *in)
{
	char *out = amalloc(strlen(in) + 2), *o = out;
	const char *p = in;

	while (*p) {
		if (*p == '/') {
			while (*p == '/')
				p++;
			if (p[0] == '.' && (p[1] == '/' || p[1] == '\0')) {
				p++;
				continue;
			}
			*o++ = '/';
			continue;
		}
		*o++ = *p++;
	}
	if (o > out + 1 && o[-1] == '/')
		o--;
	if (o == out)
		*o++ = '/';
	*o = '\0';
	return out;
}

static char *
path_join(const char *dir, const char *name)
{
	size_t d = strcmp(dir, "/") == 0 ? 0 : strlen(dir), n = strlen(name);
	char *p = amalloc(d + 1 + n + 1);

	memcpy(p, dir, d);	/* no printf: the planner joins a hundred paths a run */
	p[d] = '/';
	memcpy(p + d + 1, name, n + 1);
	return p;
}

/* True when p is inside dir or is dir itself. Both clean and absolute. */
static bool
path_within(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* Parent directory of a clean absolute path, as an arena string. */
static char *
path_dirname(const char *p)
{
	const char *slash = strrchr(p, '/');

	if (!slash || slash == p)
		return astrdup("/");
	return astrndup(p, (size_t)(slash - p));
}

/* Number of components: "/" is 0, "/a" is 1. */
static int
path_depth(const char *p)
{
	int d = 0;

	for (; *p; p++)
		if (*p == '/' && p[1])
			d++;
	return d;
}

/* Does a clean path have a ".." component (which path_clean keeps)? */
static bool
path_has_dotdot(const char *p)
{
	for (; (p = strstr(p, "/..")); p += 3)
		if (p[3] == '/' || p[3] == '\0')
			return true;
	return false;
}

/* Lexically normalise an absolute path into out (n bytes): "//" and "/./"
 * collapse, ".." takes away the component before it (never past "/"), a
 * trailing "/" goes. Unlike path_clean it resolves "..", without the disk:
 * only for the write observer's paths, which are hints (section 8), read
 * from memory that may have changed since; no arena, so a storm of events
 * costs no memory. Returns 0, or -1 when in is not absolute or out is too
 * small. */
static int
path_normalize_lex(const char *in, char *out, size_t n)
{
	size_t o = 0;
	const char *p = in;

	if (*p != '/' || n < 2)
		return -1;
	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (len == 0 || (len == 1 && p[0] == '.')) {
			p += len;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;	/* and the '/' before the component */
			p += 2;
			continue;
		}
		if (o + 1 + len + 1 > n)
			return -1;
		out[o++] = '/';
		memcpy(out + o, p, len);
		o += len;
		out[o] = '\0';
		p += len;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

static bool
has_glob_chars(const char *s)
{
	return strpbrk(s, "*?[]") != NULL;
}

/* ====================================================================
 * 3. POLICY: model, directive table, line reader, JSON reader, printers
 * ==================================================================== */

/* Prototypes: the matchers this section checks values with (4), and the
 * readers that call each other (include, JSON values, JSON objects). */
struct policy;
struct pol_ctx;
struct jparser;
struct jval;
struct jwalk;
static int match_check_pattern(const char *pat, bool deny_list, const char **why);
static bool is_ipv6_literal(const char *s);
static int ipv4_whatwg(const char *h, uint32_t *out);
static int match_parse_cidr(const char *s, int *family, unsigned char addr[16], int *prefix);
static void sb_base64(const unsigned char *s, size_t n, struct buf *out);
static int pol_read_file(struct policy *p, struct pol_ctx *c, const char *path, struct err *e);
static int json_parse_policy(struct policy *p, struct pol_ctx *c, const char *text, size_t n,
    const char *file, struct err *e);
static int utf8_valid_len(const unsigned char *p, const unsigned char *end);
static int json_value(struct jparser *jp, struct jval **out, int depth);
static int jw_object(struct jwalk *w, const char *name, const struct jval *obj);

/* ---- 3.1 The model ---------------------------------------------- */

enum path_list { PL_ALLOW_WRITE, PL_DENY_WRITE, PL_DENY_READ, PL_ALLOW_READ, PL_DENY_SECRET, PL_COUNT };

struct pathrule {
	const char *path;	/* absolute, clean, "~" expanded; globs not yet expanded */
	bool literal;		/* srt's { "path": ..., "literal": true }: never globbed */
	bool dir_form;		/* written with a trailing slash-star-star: what lies beneath the
				 * directories path names, never a file so named (srt's
				 * directory form, 5c) */
	const char *file;	/* where it was written, for messages */
	int line;
};

struct domrule { const char *pattern, *reason; };	/* reason may be NULL */
struct ignorerule { const char *command, *line; };	/* ignoreViolations */

enum bridge_mode { BRIDGE_FD, BRIDGE_SOCAT };

struct where { const char *file; int line; };	/* where a directive was read, for messages */

struct policy {
	struct vec paths[PL_COUNT];	/* of struct pathrule */
	struct vec allow_domains;	/* of const char * */
	struct vec deny_domains;	/* of struct domrule */
	struct vec deny_addresses;	/* of const char *, IP or CIDR */
	struct vec allow_unix_sockets;	/* of const char *, a path (macOS meaning) */
	struct vec allow_mach_lookup;	/* of const char * (macOS) */
	struct vec git_safe_dirs;	/* of const char * */
	struct vec ignores;		/* of struct ignorerule */
	struct vec host_ports;		/* of const char *, "PORT": allow-host-port */
	struct vec expose_ports;	/* of const char *, "PORT": expose-port */
	struct vec deny_env;		/* of const char *, a NAME pattern (* globs): deny-env */
	struct vec protected_names;	/* of const char *: protect, added to the mandatory denies */
	long mandatory_deny_depth;	/* 1..10 */
	bool allow_all_unix_sockets, allow_local_binding, allow_git_config;
	bool weaker_nested_sandbox, allow_nested_userns, weaker_network_isolation;
	bool allow_apple_events, allow_pty, fs_disabled;
	long bridge;			/* enum bridge_mode */
	long observe_writes;		/* 0 or 1 */
	long network_dns;		/* 0 or 1: the DNS stub inside (Linux, when the proxy runs) */
	long network_capture;		/* 0 or 1: allowed names answered with loopback addresses it captures */
	const char *bwrap_path, *socat_path;	/* absolute, or NULL: PATH lookup */
	const char *parent_http, *parent_https;	/* parent-proxy URLs as written, or NULL: the environment's */
	struct vec parent_bypass;	/* of const char *: parent-proxy-bypass, NO_PROXY's entries */
	const char *mitm_socket;	/* mitm-proxy: the Unix socket of the person's MITM proxy, or NULL */
	struct vec mitm_domains;	/* of const char *: mitm-proxy-domain, the hosts sent through it */
	struct where mitm_socket_at, mitm_domain_at;	/* where the first of each was given (pol_check_whole) */
	bool refuse_opaque_tunnels, require_host_match;	/* srt's request-filter knobs (7.3) */
	long http_proxy_port, socks_proxy_port;	/* the person's own proxy on this machine's 127.0.0.1, or 0 */
	struct vec strip_response_headers;	/* of const char *: header names, removed from plain-HTTP answers */
	const char *ambiguous_request_target;	/* refuse|asSpelled|normalize: inert without filterRequest */
	bool allow_plaintext_header_set;	/* inert without filterRequest */
	/* not read but derived, once, after reading (main_parent_route): the
	 * parent route in effect, the policy's or else sbx's environment's
	 * (4.7); NULL: every allowed connection is dialled directly */
	const struct parent_route *route;
};

/* Where relative paths and "~" point while a policy is read. */
struct pol_ctx {
	const char *cwd, *home;
	int include_depth;
	const char *include_stack[SBX_MAX_INCLUDE_DEPTH + 1];	/* real paths, for loop detection */
};

static void
pol_init(struct policy *p)
{
	memset(p, 0, sizeof(*p));
	p->mandatory_deny_depth = SBX_DEFAULT_DENY_DEPTH;
	p->bridge = BRIDGE_FD;
	p->observe_writes = 1;
	p->network_dns = 1;
}

/* The credential stores the default policy hides (and policy.example
 * lists): not every machine has each, so a missing one is no typo. */
static const char *const default_deny_read[] = {
	"~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gcloud", "~/.kube", "~/.docker/config.json", "~/.netrc",
	"~/.git-credentials",
};

/* Whether path (clean, absolute) is one of default_deny_read, home taken
 * for "~": a rule for one of these says nothing when it names nothing. */
static bool
pol_is_default_deny(const char *path, const char *home)
{
	size_t i;

	for (i = 0; i < LEN(default_deny_read); i++) {
		const char *entry = default_deny_read[i];

		BUG_ON(strncmp(entry, "~/", 2) != 0);	/* each is "~/" and a name below home */
		if (strcmp(path, path_join(home, entry + strlen("~/"))) == 0)
			return true;
	}
	return false;
}

/* ---- 3.2 The directive table: one row drives the line reader, the
 * command-line options, both printers, --help and the man page -------- */

/* How a directive's arguments are checked and applied: each kind has its
 * handler in dkind_ops, indexed by kind with designated initializers, so
 * this order is free. */
enum dkind {
	DK_FLAG,	/* no argument; sets a bool */
	DK_PATH,	/* PATH: appended to a path list */
	DK_ALLOW_DOMAIN,	/* PATTERN */
	DK_DENY_DOMAIN,	/* PATTERN ["reason"] */
	DK_ADDRESS,	/* CIDR */
	DK_SOCKET,	/* PATH, kept as a string list */
	DK_STRING,	/* a free string, kept in a list */
	DK_DEPTH,	/* N in 1..10 */
	DK_ONOFF,	/* on|off */
	DK_BRIDGE,	/* fd|socat */
	DK_IGNORE,	/* COMMAND-SUBSTRING LINE-SUBSTRING */
	DK_BINARY,	/* absolute path of a helper program */
	DK_INCLUDE,	/* FILE: read another policy file here */
	DK_PORT,	/* PORT in 1..65535, kept in a list */
	DK_ENV,		/* NAME of an environment variable, * globs allowed, kept in a list */
	DK_NAME,	/* a name or relative path below a root (protect) */
	DK_PROXY_URL,	/* an http:// parent proxy URL, into a string */
	DK_BYPASS,	/* a NO_PROXY entry: *, CIDR, a host or domain suffix; kept in a list */
	DK_HEADER,	/* an HTTP header name (a token), kept in a list */
	DK_CHOICE,	/* one word of the directive's own list (directive_choices), into a string */
	DK_PORT1,	/* PORT in 1..65535, into a long, given once */
	DK_UNIX_SOCKET,	/* the absolute path of a Unix socket, into a string, given once */
	DK_MITM_DOMAIN,	/* PATTERN with no port (srt's mitmProxy.domains), kept in a list */
};

struct directive {
	const char *name;	/* the line-format word; the option is --name[=ARG] */
	enum dkind kind;	/* how its arguments are checked and applied (dkind_ops) */
	int nargs_min, nargs_max;	/* how many arguments it takes */
	size_t off;		/* the field of struct policy it fills */
	const char *metavar;	/* argument as shown in help; NULL for flags */
	const char *json;	/* the srt settings key it mirrors, or NULL */
	const char *help;
};

#define F(field)	offsetof(struct policy, field)

/* One row per directive: adding one is adding a row (and, for a new kind
 * of argument, its handler in dkind_ops). nargs_min..nargs_max is checked
 * before the kind's handler sees the arguments: 1..2 for a PATH
 * ("literal PATH") and a deny-domain (PATTERN "REASON"), 2 for
 * ignore-violations, 0 for a flag.
 * ORDER: the printers, --help and the man page emit directives in this order. */
static const struct directive directives[] = {
/*	name	kind	nargs_min, nargs_max	field	metavar	srt key
 *	help */
	{ "allow-write", DK_PATH, 1, 2, F(paths[PL_ALLOW_WRITE]), "PATH", "filesystem.allowWrite",
	  "make PATH (a directory tree or a file) writable; everything else is read-only" },
	{ "deny-write", DK_PATH, 1, 2, F(paths[PL_DENY_WRITE]), "PATH", "filesystem.denyWrite",
	  "keep PATH read-only even inside an allowed root (deny wins)" },
	{ "deny-read", DK_PATH, 1, 2, F(paths[PL_DENY_READ]), "PATH", "filesystem.denyRead",
	  "hide PATH: a denied file reads as empty, a denied directory is empty" },
	{ "allow-read", DK_PATH, 1, 2, F(paths[PL_ALLOW_READ]), "PATH", "filesystem.allowRead",
	  "show PATH again inside a denied directory" },
	{ "deny-secret-file", DK_PATH, 1, 2, F(paths[PL_DENY_SECRET]), "PATH", "credentials.files",
	  "hide PATH as deny-read does, but no allow-read or allow-write below it shows anything again" },
	{ "deny-env", DK_ENV, 1, 1, F(deny_env), "NAME", "credentials.envVars",
	  "remove matching variables from the command's environment (* matches any run: AWS_*, *_TOKEN)" },
	{ "allow-domain", DK_ALLOW_DOMAIN, 1, 1, F(allow_domains), "PATTERN", "network.allowedDomains",
	  "allow connections to a host: example.com, *.example.com, example.com:443, [::1]" },
	{ "deny-domain", DK_DENY_DOMAIN, 1, 2, F(deny_domains), "PATTERN [\"REASON\"]", "network.deniedDomains",
	  "refuse a host even if allowed; the reason is shown to the command (srt deniedDomainReasons)" },
	{ "deny-address", DK_ADDRESS, 1, 1, F(deny_addresses), "CIDR", "network.deniedResolvedAddresses",
	  "refuse any allowed name that resolves into this address range" },
	{ "allow-unix-socket", DK_SOCKET, 1, 1, F(allow_unix_sockets), "PATH", "network.allowUnixSockets",
	  "macOS: allow connecting to this Unix socket (Linux ignores it, as srt does)" },
	{ "allow-all-unix-sockets", DK_FLAG, 0, 0, F(allow_all_unix_sockets), NULL, "network.allowAllUnixSockets",
	  "allow socket(AF_UNIX) and AF_VSOCK" },
	{ "allow-local-binding", DK_FLAG, 0, 0, F(allow_local_binding), NULL, "network.allowLocalBinding",
	  "macOS: allow listening on localhost (Linux: the sandbox has its own loopback anyway)" },
	{ "allow-mach-lookup", DK_STRING, 1, 1, F(allow_mach_lookup), "NAME", "network.allowMachLookup",
	  "macOS: allow looking up this Mach service (a trailing * matches a prefix)" },
	{ "mandatory-deny-depth", DK_DEPTH, 1, 1, F(mandatory_deny_depth), "N", "mandatoryDenySearchDepth",
	  "how deep to look for dangerous files (.bashrc, .git/hooks, ...) in each root: 1..10, default 3" },
	{ "allow-git-config", DK_FLAG, 0, 0, F(allow_git_config), NULL, "filesystem.allowGitConfig",
	  "let the command write .git/config (hooks stay read-only)" },
	{ "git-safe-directory", DK_STRING, 1, 1, F(git_safe_dirs), "PATH", "git.safeDirectories",
	  "add a git safe.directory entry inside (through GIT_CONFIG_* variables)" },
	{ "weaker-nested-sandbox", DK_FLAG, 0, 0, F(weaker_nested_sandbox), NULL, "enableWeakerNestedSandbox",
	  "for running inside a container: bind the host /proc instead of mounting a fresh one" },
	{ "allow-nested-userns", DK_FLAG, 0, 0, F(allow_nested_userns), NULL, "allowNestedUserNamespaces",
	  "let the command create user namespaces (rootless containers, browser sandboxes)" },
	{ "weaker-network-isolation", DK_FLAG, 0, 0, F(weaker_network_isolation), NULL, "enableWeakerNetworkIsolation",
	  "macOS: allow com.apple.trustd.agent (Go TLS verification); an exfiltration path" },
	{ "allow-apple-events", DK_FLAG, 0, 0, F(allow_apple_events), NULL, "allowAppleEvents",
	  "macOS: allow sending Apple Events; other apps then run code outside the sandbox" },
	{ "allow-pty", DK_FLAG, 0, 0, F(allow_pty), NULL, "allowPty",
	  "macOS: allow opening pseudo-terminals" },
	{ "ignore-violations", DK_IGNORE, 2, 2, F(ignores), "COMMAND LINE", "ignoreViolations",
	  "drop violations whose line contains LINE, for commands containing COMMAND (* = any)" },
	{ "bridge", DK_BRIDGE, 1, 1, F(bridge), "fd|socat", NULL,
	  "how the proxy is reached inside: fd (default, listeners handed over) or socat (srt's topology)" },
	{ "observe-writes", DK_ONOFF, 1, 1, F(observe_writes), "on|off", NULL,
	  "report denied write attempts as violations (default on)" },
	{ "network-dns", DK_ONOFF, 1, 1, F(network_dns), "on|off", NULL,
	  "Linux: answer DNS inside: allowed names resolve (the proxy's resolver, the address guard applied), "
	  "others are refused at once and reported (default on)" },
	{ "network-capture", DK_ONOFF, 1, 1, F(network_capture), "on|off", NULL,
	  "Linux: answer allowed names with loopback addresses whose ports 80, 443 and the allow rules' lead "
	  "to the proxy, for programs that ignore HTTP_PROXY (default off)" },
	{ "bwrap-path", DK_BINARY, 1, 1, F(bwrap_path), "PATH", "bwrapPath",
	  "the bubblewrap binary to run (default: bwrap from PATH)" },
	{ "socat-path", DK_BINARY, 1, 1, F(socat_path), "PATH", "socatPath",
	  "the socat binary for bridge socat (default: socat from PATH)" },
	{ "disable-filesystem", DK_FLAG, 0, 0, F(fs_disabled), NULL, "filesystem.disabled",
	  "no filesystem rules at all: the whole disk writable (srt's filesystem.disabled)" },
	{ "allow-host-port", DK_PORT, 1, 1, F(host_ports), "PORT", NULL,
	  "let 127.0.0.1:PORT inside reach this machine's 127.0.0.1:PORT (a dev server, a database)" },
	{ "expose-port", DK_PORT, 1, 1, F(expose_ports), "PORT", NULL,
	  "let this machine's 127.0.0.1:PORT reach a server the command runs on its own 127.0.0.1:PORT" },
	{ "protect", DK_NAME, 1, 1, F(protected_names), "PATH-NAME", NULL,
	  "add a name (.envrc) or a relative path (.config/tool/rc) to the mandatory denies: read-only at the "
	  "top of every writable root (and, a single name, wherever the scan finds it), held when missing where "
	  "srt's names are" },
	{ "parent-proxy", DK_PROXY_URL, 1, 1, F(parent_http), "URL", "network.parentProxy.http",
	  "send allowed connections on through this upstream HTTP proxy (default: HTTP_PROXY of sbx's "
	  "environment); policy first, then the parent" },
	{ "parent-proxy-https", DK_PROXY_URL, 1, 1, F(parent_https), "URL", "network.parentProxy.https",
	  "the upstream proxy for tunnels (CONNECT, SOCKS) when not parent-proxy's (default: HTTPS_PROXY)" },
	{ "parent-proxy-bypass", DK_BYPASS, 1, 1, F(parent_bypass), "PATTERN", "network.parentProxy.noProxy",
	  "reach these directly, not through the parent: * | a CIDR | a host or domain suffix (NO_PROXY's "
	  "syntax; loopback always is)" },
	{ "mitm-proxy", DK_UNIX_SOCKET, 1, 1, F(mitm_socket), "SOCKET", "network.mitmProxy.socketPath",
	  "send allowed connections to the mitm-proxy-domain hosts on through the HTTP proxy listening on this Unix "
	  "socket (yours, which may inspect TLS): CONNECT for tunnels (SOCKS too), absolute form for plain HTTP; "
	  "policy first, and before any parent proxy" },
	{ "mitm-proxy-domain", DK_MITM_DOMAIN, 1, 1, F(mitm_domains), "PATTERN", "network.mitmProxy.domains",
	  "a host that goes through mitm-proxy: example.com, *.example.com (no :port: every port); mitm-proxy needs "
	  "at least one" },
	{ "http-proxy-port", DK_PORT1, 1, 1, F(http_proxy_port), "PORT", "network.httpProxyPort",
	  "hand HTTP proxying to your own proxy on this machine's 127.0.0.1:PORT instead of sbx's (it does the "
	  "filtering: sbx's policy does not apply to what goes through it)" },
	{ "socks-proxy-port", DK_PORT1, 1, 1, F(socks_proxy_port), "PORT", "network.socksProxyPort",
	  "the same for SOCKS: your own SOCKS proxy on 127.0.0.1:PORT" },
	{ "refuse-opaque-tunnels", DK_FLAG, 0, 0, F(refuse_opaque_tunnels), NULL, "network.refuseOpaqueTunnels",
	  "refuse every CONNECT (403) and SOCKS tunnel: the proxy cannot see into them (no TLS termination), so "
	  "only plain HTTP goes out; it stops ssh through the proxy too" },
	{ "require-host-match", DK_FLAG, 0, 0, F(require_host_match), NULL, "network.requireHostMatch",
	  "plain HTTP: answer 421 when the Host header names another host or port than the request's target" },
	{ "strip-response-header", DK_HEADER, 1, 1, F(strip_response_headers), "NAME", "network.stripResponseHeaders",
	  "remove this header from plain-HTTP responses (case, '-', '_' and '.' folded: set-cookie)" },
	{ "ambiguous-request-target", DK_CHOICE, 1, 1, F(ambiguous_request_target), "refuse|asSpelled|normalize",
	  "network.ambiguousRequestTarget", "srt's, for its filterRequest callback, which a settings file cannot hold: "
	  "accepted and checked, it changes nothing in sbx" },
	{ "allow-plaintext-header-set", DK_FLAG, 0, 0, F(allow_plaintext_header_set), NULL,
	  "network.allowPlaintextHeaderSet", "srt's, for its filterRequest callback: accepted, changes nothing in sbx" },
	{ "include", DK_INCLUDE, 1, 1, 0, "FILE", NULL,
	  "read another policy file here (relative to this file's directory)" },
};

#undef F

static const struct directive *
directive_find(const char *name)
{
	size_t i;

	for (i = 0; i < LEN(directives); i++)
		if (strcmp(directives[i].name, name) == 0)
			return &directives[i];
	return NULL;
}

#define FIELD(p, d, type)	((type *)((char *)(p) + (d)->off))

/* ---- 3.3 Values: paths, patterns and addresses, checked strictly --- */

/* A parent (upstream) proxy, as its URL says (srt parent-proxy.js): an
 * http:// one, or host:port with no scheme (curl's reading). https://
 * is refused: it needs TLS to the parent, which sbx does not speak (the
 * tunnels through an http:// parent stay end-to-end encrypted anyway). */
struct parent_proxy {
	char host[SBX_MAX_HOST_BYTES + 1];	/* a name or an address, unbracketed */
	int port;				/* 80 when the URL has none */
	const char *auth;			/* "Basic <base64 user:password>" (arena), or NULL */
};

static int
hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Percent-decoding of a URL's user or password (n bytes) into out; a bad
 * escape is kept as written, as srt does. */
static void
url_unescape(const char *s, size_t n, struct buf *out)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 3 <= n &&
		    hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
			buf_putc(out, (char)(hex_digit(s[i + 1]) << 4 | hex_digit(s[i + 2])));
			i += 2;
		} else {
			buf_putc(out, s[i]);
		}
	}
}

static int
proxy_url_parse(const char *url, struct parent_proxy *pp, const char **why)
{
	const char *p = url, *auth, *end, *at, *host, *hend, *colon = NULL;
	long port = 80;
	bool v6;	/* [ADDRESS]: an IPv6 literal (host[-1] would read before a URL that starts there) */

	memset(pp, 0, sizeof(*pp));
	for (const char *q = url; *q; q++)
		if (*q == ' ' || *q == '\t') {
			*why = "a URL holds no spaces";
			return -1;
		}
	{
		const char *sep = strstr(url, "://");
		size_t sn = sep ? (size_t)(sep - url) : 0;

		if (sep && sn > 0 && isalpha((unsigned char)url[0]) && strspn(url, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-") >= sn) {
			if (sn == 5 && strncasecmp(url, "https", 5) == 0) {
				*why = "an https:// parent proxy needs TLS to the parent, which sbx does not speak; "
				    "give its http:// address (the tunnels through it stay end-to-end encrypted)";
				return -1;
			}
			if (sn != 4 || strncasecmp(url, "http", 4) != 0) {
				*why = "only an http:// parent proxy is supported";
				return -1;
			}
			p = sep + 3;
		}
	}
	for (end = p; *end && *end != '/' && *end != '?' && *end != '#'; end++)
		;
	if (*end && strcmp(end, "/") != 0) {
		*why = "a parent proxy URL has no path, query or fragment";
		return -1;
	}
	for (at = end; at > p && at[-1] != '@'; at--)
		;
	auth = at > p ? p : NULL;	/* RFC 3986: the userinfo ends at the last '@' */
	host = at > p ? at : p;
	if (auth) {
		const char *sep = memchr(auth, ':', (size_t)(at - 1 - auth));
		struct buf cred = { 0 }, b64 = { 0 };

		url_unescape(auth, sep ? (size_t)(sep - auth) : (size_t)(at - 1 - auth), &cred);
		buf_putc(&cred, ':');
		if (sep)
			url_unescape(sep + 1, (size_t)(at - 1 - sep - 1), &cred);
		for (size_t i = 0; i < cred.n; i++)
			if (is_control((unsigned char)cred.p[i])) {
				free(cred.p);
				*why = "the user name or password decodes to a control character";
				return -1;
			}
		buf_puts(&b64, "Basic ");
		sb_base64((const unsigned char *)cred.p, cred.n, &b64);
		pp->auth = astrndup(b64.p, b64.n);
		free(cred.p);
		free(b64.p);
	}
	v6 = *host == '[';
	if (v6) {
		hend = memchr(host, ']', (size_t)(end - host));
		if (!hend) {
			*why = "an IPv6 address without its closing ']'";
			return -1;
		}
		colon = hend + 1 < end ? hend + 1 : NULL;
		if (colon && *colon != ':') {
			*why = "something other than :PORT after the IPv6 address";
			return -1;
		}
		host++;
	} else {
		colon = memchr(host, ':', (size_t)(end - host));
		hend = colon ? colon : end;
	}
	if (hend == host || (size_t)(hend - host) > SBX_MAX_HOST_BYTES) {
		*why = "no host, or a host longer than 255 bytes";
		return -1;
	}
	memcpy(pp->host, host, (size_t)(hend - host));
	pp->host[hend - host] = '\0';
	{
		unsigned char a[16];

		if (v6 ? inet_pton(AF_INET6, pp->host, a) != 1 :
		    strspn(pp->host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != strlen(pp->host)) {
			*why = v6 ? "not an IPv6 address inside [ ]" : "a host name holds only letters, digits, '.', '_' and '-'";
			return -1;
		}
	}
	if (colon) {
		char ps[8];
		size_t pn = (size_t)(end - colon - 1);
		const char *perr;

		if (pn == 0 || pn >= sizeof(ps)) {
			*why = "a bad port";
			return -1;
		}
		memcpy(ps, colon + 1, pn);
		ps[pn] = '\0';
		if (parse_int(ps, 1, 65535, &port, &perr) < 0) {
			*why = "a bad port";
			return -1;
		}
	}
	pp->port = (int)port;
	return 0;
}

/* A NO_PROXY entry (srt parseNoProxy): "*", a CIDR or an address, or a
 * host or domain suffix ("example.com", ".example.com", "*.example.com",
 * any of them with a ":port", which is ignored, as srt and Go do). */
static int
proxy_bypass_check(const char *e, const char **why)
{
	int fam, prefix;
	unsigned char a[16];

	if (strcmp(e, "*") == 0)
		return 0;
	if (strchr(e, '/')) {
		if (match_parse_cidr(e, &fam, a, &prefix) < 0) {
			*why = "not a CIDR range";
			return -1;
		}
		return 0;
	}
	if (!*e || strspn(e, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:*[]") != strlen(e) ||
	    (strchr(e, '*') && strncmp(e, "*.", 2) != 0) || strchr(e + (e[0] == '*'), '*')) {
		*why = "not *, a CIDR, an address, or a host or domain suffix (a '*' only as \"*.\" in front)";
		return -1;
	}
	return 0;
}


/* Turn a spelled path into a clean absolute one, as srt does: "~" and "~/"
 * expand to $HOME, a relative path is taken against the current directory,
 * a trailing "/" means the directory itself, and a trailing "/" "**" what
 * lies beneath it (*dir_form set, when dir_form is not NULL). */
static int
pol_normalize_path(const struct pol_ctx *c, const char *s, char **out, bool *dir_form, const char **why)
{
	char *p;
	size_t n;

	if (*s == '\0') {
		*why = "empty path";
		return -1;
	}
	if (s[0] == '~' && s[1] != '/' && s[1] != '\0') {
		*why = "~user paths are not supported; write the full path";
		return -1;
	}
	if (s[0] == '~') {
		if (!c->home || !*c->home) {
			*why = "path starts with ~ but HOME is not set";
			return -1;
		}
		p = aprintf("%s%s", c->home, s + 1);
	} else if (s[0] != '/') {
		p = path_join(c->cwd, s);
	} else {
		p = astrdup(s);
	}
	/* a trailing slash-star-star means what lies beneath the directory
	 * (srt: removeTrailingGlobSuffix, then its directory form): the path
	 * is the directory, and *dir_form says a file of that name is not
	 * meant (5c); cleaning first and after each strip makes a trailing
	 * slash-star-star-slash, or -dot, mean the directory too */
	p = path_clean(p);
	if (dir_form)
		*dir_form = false;
	for (;;) {
		n = strlen(p);
		if (n > 3 && strcmp(p + n - 3, "/**") == 0) {
			p[n - 3] = '\0';
			p = path_clean(p);
			if (dir_form)
				*dir_form = true;
		} else {
			break;
		}
	}
	if (strlen(p) > SBX_MAX_PATH_ARG_BYTES) {
		*why = "path longer than 2000 bytes";
		return -1;
	}
	*out = p;
	return 0;
}

/* A rule's path as it was written (with its trailing slash-star-star for
 * the directory form), for the printers: read back, the same rule. */
static const char *
pathrule_spelling(const struct pathrule *r)
{
	if (!r->dir_form)
		return r->path;
	return strcmp(r->path, "/") == 0 ? "/**" : aprintf("%s/**", r->path);
}

/* Paths a deny cannot honour, refused where they are written: a deny that
 * silently does nothing is the worst kind of policy bug. 5c checks the
 * table again on the real path, for what a symlink or a glob leads there.
 * /sys is not here: a --tmpfs or an empty file over sysfs hides it. */
#define DENY_READS	(1u << PL_DENY_READ | 1u << PL_DENY_SECRET)
static const struct path_refusal {
	unsigned lists;		/* bits of enum path_list */
	const char *path;
	bool below;		/* also every path under it */
	const char *why;
} path_refusals[] = {
	{ DENY_READS, "/", false,
	  "hiding the whole disk leaves nothing to run the command with (bubblewrap fails on /bin); deny the "
	  "directories that hold secrets instead (deny-read /home, deny-read /root) and allow-read what the "
	  "command needs inside them" },
	{ DENY_READS | 1u << PL_DENY_WRITE, "/proc", true,
	  "sbx mounts a fresh /proc for the command, showing only the command's own processes, and it would "
	  "cover this deny; remove the line (other processes' files are not visible anyway)" },
	{ DENY_READS | 1u << PL_DENY_WRITE, "/dev", true,
	  "sbx mounts a minimal /dev for the command (null, zero, full, random, urandom, tty, pts, shm), and "
	  "it would cover this deny; remove the line" },
};

/* Why a rule of this list cannot name path (clean, absolute), or NULL. */
static const char *
path_refused(enum path_list which, const char *path)
{
	size_t i;

	for (i = 0; i < LEN(path_refusals); i++) {
		const struct path_refusal *r = &path_refusals[i];

		if ((r->lists & 1u << which) &&
		    (strcmp(path, r->path) == 0 || (r->below && path_within(path, r->path))))
			return r->why;
	}
	return NULL;
}

/* An environment variable name, or a pattern of one: letters, digits and
 * "_", not starting with a digit (srt's rule, which also keeps a name from
 * reading as an option of bwrap's --unsetenv), and sbx's "*" for any run. */
static int
env_check_pattern(const char *s, const char **why)
{
	const char *q;

	if (!*s || isdigit((unsigned char)*s)) {
		*why = "a variable name starts with a letter, _ or *";
		return -1;
	}
	for (q = s; *q; q++)
		if (!isalnum((unsigned char)*q) && *q != '_' && *q != '*') {
			*why = "a variable name holds only letters, digits and _ (and * to match any run)";
			return -1;
		}
	return 0;
}

static struct pathrule *
pol_add_path(struct policy *p, enum path_list which, const char *path, bool literal, bool dir_form,
    const char *file, int line)
{
	struct pathrule *r = amalloc(sizeof(*r));

	r->path = path;
	r->literal = literal;
	r->dir_form = dir_form && !literal;
	r->file = file;
	r->line = line;
	vec_push(&p->paths[which], r);
	return r;
}

/* One directive being applied: its arguments, and where it was written
 * (every error names that place). */
struct dcall {
	struct policy *p;
	struct pol_ctx *c;
	const struct directive *d;
	char **args;
	int nargs;		/* held to the row's nargs_min..nargs_max before a handler runs */
	const char *file;
	int line;
	struct err *e;
};

#define DFIELD(a, type)	FIELD((a)->p, (a)->d, type)

/* Whether a string list already holds s (a directive written twice is
 * applied once, so the printers write it once; the audit's lists of
 * repositories seen and done). */
static bool
str_listed(const struct vec *v, const char *s)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (strcmp(v->v[i], s) == 0)
			return true;
	return false;
}

/* Whether a port list (of "PORT" strings) holds port. */
static bool
port_listed(const struct vec *v, long port)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (atol(v->v[i]) == port)
			return true;
	return false;
}

/* The handlers, one per kind of argument (enum dkind), come next. Each
 * checks its arguments strictly and fills the row's field of struct
 * policy; each returns 0, or -1 with e filled. pol_apply has checked the
 * count already, so args[0] .. args[nargs - 1] exist. */

static int
pol_apply_flag(const struct dcall *a)
{
	*DFIELD(a, bool) = true;
	return 0;
}

/* PATH, or "literal PATH" (a path never globbed), onto a path list. */
static int
pol_apply_path(const struct dcall *a)
{
	const char *why = NULL, *spelled = a->args[0];
	char *path;
	bool literal = false, dir_form;
	enum path_list which;

	/* the list this row fills: its field is one of p->paths[] */
	for (which = 0; which < PL_COUNT; which++)
		if (&a->p->paths[which] == DFIELD(a, struct vec))
			break;
	BUG_ON(which == PL_COUNT);
	if (a->nargs == 2) {
		if (strcmp(a->args[0], "literal") != 0)
			return err_set(a->e, a->file, a->line, 0,
			    "%s takes one PATH (or \"literal PATH\" for a path never globbed)", a->d->name);
		/* srt's credentials.files entry has no literal form, so
		 * one could not be written back as srt settings */
		if (which == PL_DENY_SECRET)
			return err_set(a->e, a->file, a->line, 0, "%s takes one PATH (no literal form, as srt's "
			    "credentials.files)", a->d->name);
		literal = true;
		spelled = a->args[1];
	}
	if (pol_normalize_path(a->c, spelled, &path, &dir_form, &why) < 0)
		return err_set(a->e, a->file, a->line, 0, "%s %s: %s", a->d->name, spelled, why);
	/* lexically only where no ".." can lead elsewhere; 5c checks
	 * every path again once it is resolved */
	if (!path_has_dotdot(path) && (why = path_refused(which, path)))
		return err_set(a->e, a->file, a->line, 0, "%s %s: %s", a->d->name, spelled, why);
	pol_add_path(a->p, which, path, literal, dir_form, a->file, a->line);
	return 0;
}

/* The argument, checked (checked < 0: refused, saying why), onto its
 * string list once: a directive written twice is applied once. */
static int
pol_add_once(const struct dcall *a, int checked, const char *why)
{
	if (checked < 0)
		return err_set(a->e, a->file, a->line, 0, "%s %s: %s", a->d->name, a->args[0], why);
	if (!str_listed(DFIELD(a, struct vec), a->args[0]))
		vec_push(DFIELD(a, struct vec), astrdup(a->args[0]));
	return 0;
}

/* PATTERN, onto the allow list. */
static int
pol_apply_allow_domain(const struct dcall *a)
{
	const char *why = NULL;
	int checked = match_check_pattern(a->args[0], false, &why);

	return pol_add_once(a, checked, why);
}

/* PATTERN ["REASON"], onto the deny list: one entry per pattern, because
 * srt keys reasons by the pattern, so two entries with two reasons could
 * not both be written back. */
static int
pol_apply_deny_domain(const struct dcall *a)
{
	const char *why = NULL;
	struct vec *v = DFIELD(a, struct vec);
	struct domrule *r = NULL;
	size_t k;

	if (match_check_pattern(a->args[0], true, &why) < 0)
		return err_set(a->e, a->file, a->line, 0, "%s %s: %s", a->d->name, a->args[0], why);
	if (a->nargs == 2 && !*a->args[1])
		return err_set(a->e, a->file, a->line, 0, "%s %s: the reason is empty", a->d->name, a->args[0]);
	for (k = 0; k < v->n; k++)
		if (strcmp(((struct domrule *)v->v[k])->pattern, a->args[0]) == 0)
			r = v->v[k];
	if (r) {
		if (a->nargs == 2 && r->reason && strcmp(r->reason, a->args[1]) != 0)
			return err_set(a->e, a->file, a->line, 0, "%s %s: denied already, with another reason",
			    a->d->name, a->args[0]);
		if (a->nargs == 2)
			r->reason = astrdup(a->args[1]);
		return 0;
	}
	r = amalloc(sizeof(*r));
	r->pattern = astrdup(a->args[0]);
	if (a->nargs == 2)
		r->reason = astrdup(a->args[1]);
	vec_push(v, r);
	return 0;
}

/* An IP address or CIDR range, kept as written. */
static int
pol_apply_address(const struct dcall *a)
{
	int fam, prefix;
	unsigned char addr[16];

	if (match_parse_cidr(a->args[0], &fam, addr, &prefix) < 0)
		return err_set(a->e, a->file, a->line, 0,
		    "%s %s: not an IP address or CIDR range (e.g. 10.0.0.0/8, 192.168.1.10, fc00::/7; IPv6 unbracketed)",
		    a->d->name, a->args[0]);
	vec_push(DFIELD(a, struct vec), astrdup(a->args[0]));
	return 0;
}

/* A socket path, normalised as a rule's path is, kept as a string. */
static int
pol_apply_socket(const struct dcall *a)
{
	const char *why = NULL;
	char *path;

	if (pol_normalize_path(a->c, a->args[0], &path, NULL, &why) < 0)
		return err_set(a->e, a->file, a->line, 0, "%s %s: %s", a->d->name, a->args[0], why);
	vec_push(DFIELD(a, struct vec), path);
	return 0;
}

/* Any non-empty string, kept in a list. */
static int
pol_apply_string(const struct dcall *a)
{
	if (!*a->args[0])
		return err_set(a->e, a->file, a->line, 0, "%s: empty argument", a->d->name);
	vec_push(DFIELD(a, struct vec), astrdup(a->args[0]));
	return 0;
}

/* A name or a relative path below every root (protect): an absolute path
 * or ".." would be one place, and is what deny-write is for. */
static int
pol_apply_name(const struct dcall *a)
{
	const char *s = a->args[0], *q;

	if (!*s || s[0] == '/' || s[0] == '~' || s[strlen(s) - 1] == '/' || strstr(s, "//"))
		return err_set(a->e, a->file, a->line, 0, "%s %s: a name or a relative path below a root "
		    "(.envrc, .config/tool/rc); for one place, use deny-write", a->d->name, s);
	for (q = s; q; q = strchr(q, '/') ? strchr(q, '/') + 1 : NULL)
		if ((q[0] == '.' && (q[1] == '/' || !q[1])) ||
		    (q[0] == '.' && q[1] == '.' && (q[2] == '/' || !q[2])))
			return err_set(a->e, a->file, a->line, 0, "%s %s: \".\" and \"..\" are not allowed", a->d->name, s);
	if (!str_listed(DFIELD(a, struct vec), s))
		vec_push(DFIELD(a, struct vec), astrdup(s));
	return 0;
}

/* A port 1..65535, kept as "PORT" in a list of at most SBX_MAX_HOST_PORTS. */
static int
pol_apply_port(const struct dcall *a)
{
	struct vec *ports = DFIELD(a, struct vec);
	const char *why = NULL;
	const struct vec *other;
	long v;

	if (parse_int(a->args[0], 1, 65535, &v, &why) < 0 || a->args[0][0] == '0')
		return err_set(a->e, a->file, a->line, 0, "%s %s: not a port (1..65535)", a->d->name, a->args[0]);
	if (v == SBX_PROXY_HTTP_PORT || v == SBX_PROXY_SOCKS_PORT)
		return err_set(a->e, a->file, a->line, 0, "%s %ld: the proxy listens there inside", a->d->name, v);
	if (port_listed(ports, v))
		return 0;	/* twice is once */
	/* one port, one direction: inside, 127.0.0.1:PORT is either sbx's
	 * listener (allow-host-port) or the command's server (expose-port).
	 * Checked here, as the second one is read, and not in a pass after
	 * reading: that keeps which error a policy with two problems reports
	 * (the first in the file) as it has always been */
	other = ports == &a->p->host_ports ? &a->p->expose_ports : &a->p->host_ports;
	if (port_listed(other, v))
		return err_set(a->e, a->file, a->line, 0, "allow-host-port %ld and expose-port %ld: "
		    "a port goes one way only", v, v);
	if (ports->n == SBX_MAX_HOST_PORTS)
		return err_set(a->e, a->file, a->line, 0, "%s: at most %d ports", a->d->name, SBX_MAX_HOST_PORTS);
	vec_push(ports, aprintf("%ld", v));
	return 0;
}

/* An environment variable NAME pattern, kept in a list. */
static int
pol_apply_env(const struct dcall *a)
{
	const char *why = NULL;
	int checked = env_check_pattern(a->args[0], &why);

	return pol_add_once(a, checked, why);
}

/* N in 1..10, into a long. */
static int
pol_apply_depth(const struct dcall *a)
{
	const char *why = NULL;
	long v;

	if (parse_int(a->args[0], 1, 10, &v, &why) < 0)
		return err_set(a->e, a->file, a->line, 0, "%s %s: %s (1..10)", a->d->name, a->args[0], why);
	*DFIELD(a, long) = v;
	return 0;
}

/* on|off, into a long (1 or 0). */
static int
pol_apply_onoff(const struct dcall *a)
{
	if (strcmp(a->args[0], "on") != 0 && strcmp(a->args[0], "off") != 0)
		return err_set(a->e, a->file, a->line, 0, "%s takes on or off, not \"%s\"", a->d->name, a->args[0]);
	*DFIELD(a, long) = strcmp(a->args[0], "on") == 0;
	return 0;
}

/* fd|socat, into a long (enum bridge_mode). */
static int
pol_apply_bridge(const struct dcall *a)
{
	if (strcmp(a->args[0], "fd") != 0 && strcmp(a->args[0], "socat") != 0)
		return err_set(a->e, a->file, a->line, 0, "%s takes fd or socat, not \"%s\"", a->d->name, a->args[0]);
	*DFIELD(a, long) = strcmp(a->args[0], "socat") == 0 ? BRIDGE_SOCAT : BRIDGE_FD;
	return 0;
}

/* COMMAND-SUBSTRING LINE-SUBSTRING, both non-empty, onto a list. */
static int
pol_apply_ignore(const struct dcall *a)
{
	struct ignorerule *r = amalloc(sizeof(*r));

	if (!*a->args[0] || !*a->args[1])
		return err_set(a->e, a->file, a->line, 0, "%s: empty argument", a->d->name);
	r->command = astrdup(a->args[0]);
	r->line = astrdup(a->args[1]);
	vec_push(DFIELD(a, struct vec), r);
	return 0;
}

/* The absolute path of a helper program, into a string. */
static int
pol_apply_binary(const struct dcall *a)
{
	if (a->args[0][0] != '/')
		return err_set(a->e, a->file, a->line, 0, "%s %s: binary path must be absolute", a->d->name, a->args[0]);
	if (strlen(a->args[0]) > SBX_MAX_PATH_ARG_BYTES)
		return err_set(a->e, a->file, a->line, 0, "%s: path longer than %d bytes", a->d->name,
		    SBX_MAX_PATH_ARG_BYTES);
	*DFIELD(a, const char *) = path_clean(a->args[0]);
	return 0;
}

/* FILE: read another policy file here. A relative FILE is taken against
 * the directory of the file that names it; a file named without a "/"
 * (in the current directory) leaves it as written. */
static int
pol_apply_include(const struct dcall *a)
{
	const char *inc = a->args[0], *file = a->file;

	if (inc[0] != '/' && file) {
		const char *slash = strrchr(file, '/');

		inc = slash ? aprintf("%.*s/%s", (int)(slash - file), file, inc) : inc;
	}
	if (pol_read_file(a->p, a->c, inc, a->e) < 0) {
		/* an error about the included file as a whole (missing,
		 * empty, a loop) is reported at the include line */
		if (a->e->line == 0 && a->e->file && strcmp(a->e->file, inc) == 0) {
			char *msg = aprintf("include %s: %s", a->args[0], a->e->msg);

			err_set(a->e, file, a->line, 0, "%.300s", msg);
		}
		return -1;
	}
	return 0;
}

/* An http:// parent proxy URL (proxy_url_parse checks it), into a
 * string: given once. */
static int
pol_apply_proxy_url(const struct dcall *a)
{
	struct parent_proxy pp;
	const char *why = NULL;

	if (*DFIELD(a, const char *))
		return err_set(a->e, a->file, a->line, 0, "%s: given twice", a->d->name);
	if (proxy_url_parse(a->args[0], &pp, &why) < 0)
		return err_set(a->e, a->file, a->line, 0, "%s %s: %s", a->d->name, a->args[0], why);
	*DFIELD(a, const char *) = astrdup(a->args[0]);
	return 0;
}

/* An HTTP header name: a token (RFC 9110 5.1), kept in a list. */
static int
pol_apply_header(const struct dcall *a)
{
	const char *n = a->args[0];

	if (!*n || strspn(n, "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(n))
		return err_set(a->e, a->file, a->line, 0, "%s %s: not a header name", a->d->name, n);
	vec_push(DFIELD(a, struct vec), astrdup(n));
	return 0;
}

/* PORT in 1..65535, into a long, given once. */
static int
pol_apply_port1(const struct dcall *a)
{
	const char *why = NULL;
	long v;

	if (*DFIELD(a, long))
		return err_set(a->e, a->file, a->line, 0, "%s: given twice", a->d->name);
	if (parse_int(a->args[0], 1, 65535, &v, &why) < 0)
		return err_set(a->e, a->file, a->line, 0, "%s %s: %s (1..65535)", a->d->name, a->args[0], why);
	*DFIELD(a, long) = v;
	return 0;
}

/* One word of the directive's own list (its metavar, "a|b|c"), into a
 * string. */
static int
pol_apply_choice(const struct dcall *a)
{
	const char *m = a->d->metavar, *w = a->args[0];
	size_t wn = strlen(w);

	for (const char *p = m; *p;) {
		size_t n = strcspn(p, "|");

		if (n == wn && strncmp(p, w, n) == 0) {
			*DFIELD(a, const char *) = astrdup(w);
			return 0;
		}
		p += n + (p[n] == '|');
	}
	return err_set(a->e, a->file, a->line, 0, "%s takes %s, not \"%s\"", a->d->name, m, w);
}

/* One NO_PROXY entry (proxy_bypass_check), kept in a list. */
static int
pol_apply_bypass(const struct dcall *a)
{
	const char *why = NULL;

	if (proxy_bypass_check(a->args[0], &why) < 0)
		return err_set(a->e, a->file, a->line, 0, "%s %s: %s", a->d->name, a->args[0], why);
	vec_push(DFIELD(a, struct vec), astrdup(a->args[0]));
	return 0;
}

/* The absolute path of a Unix socket (mitm-proxy), into a string, given
 * once. It must fit a sockaddr_un (sun_path, 104 bytes on macOS, 108 on
 * Linux, its NUL included): a longer one could never be dialled, and
 * saying so here beats a 502 for every connection. */
static int
pol_apply_unix_socket(const struct dcall *a)
{
	const char *s = a->args[0];

	if (*DFIELD(a, const char *))
		return err_set(a->e, a->file, a->line, 0, "%s: given twice", a->d->name);
	if (s[0] != '/')
		return err_set(a->e, a->file, a->line, 0, "%s %s: the socket path must be absolute", a->d->name, s);
	if (strlen(path_clean(s)) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return err_set(a->e, a->file, a->line, 0, "%s %s: longer than a Unix socket address holds (%zu bytes)",
		    a->d->name, s, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
	*DFIELD(a, const char *) = path_clean(s);
	a->p->mitm_socket_at = (struct where){ a->file, a->line };
	return 0;
}

/* A host for the MITM route (srt's mitmProxy.domains: isValidDomainPattern,
 * a host with no port, matched on every port), kept in a list. Checked as
 * allow-domain's patterns are, in either IPv6 spelling: srt's bare one
 * (::1) or sbx's bracketed one ([::1]). */
static int
pol_apply_mitm_domain(const struct dcall *a)
{
	const char *pat = a->args[0], *why = NULL;
	const char *close = pat[0] == '[' ? strchr(pat, ']') : NULL;

	if (!is_ipv6_literal(pat)) {
		if (match_check_pattern(pat, false, &why) < 0)
			return err_set(a->e, a->file, a->line, 0, "%s %s: %s", a->d->name, pat,
			    strncmp(why, "invalid domain pattern:", 23) != 0 ? why : "invalid domain pattern: must be a "
			    "domain (example.com), a wildcard (*.example.com) or an IPv6 literal (::1, [::1]), with no :port; "
			    "patterns as broad as \"*.com\" or \"*\" are refused");
		if (close ? close[1] != '\0' : strchr(pat, ':') != NULL)
			return err_set(a->e, a->file, a->line, 0, "%s %s: a host with no :port (the MITM route takes "
			    "every port of it, as srt)", a->d->name, pat);
	}
	vec_push(DFIELD(a, struct vec), astrdup(pat));
	if (!a->p->mitm_domain_at.file && !a->p->mitm_domain_at.line)
		a->p->mitm_domain_at = (struct where){ a->file, a->line };
	return 0;
}

/* The handler of each kind, and how its arguments are bounded. Indexed by
 * enum dkind with designated initializers, so the order of either is free;
 * a kind left out has no handler, which pol_apply reports as internal. */
static const struct dkind_ops {
	int (*apply)(const struct dcall *a);
	bool path_args;		/* its arguments are paths: not held to
				 * SBX_MAX_TEXT_ARG_BYTES, but to the path
				 * checks (SBX_MAX_PATH_ARG_BYTES; an include's
				 * name, the kernel's when it is opened) */
} dkind_ops[] = {
	[DK_FLAG] = { pol_apply_flag, false },
	[DK_PATH] = { pol_apply_path, true },
	[DK_ALLOW_DOMAIN] = { pol_apply_allow_domain, false },
	[DK_DENY_DOMAIN] = { pol_apply_deny_domain, false },
	[DK_ADDRESS] = { pol_apply_address, false },
	[DK_SOCKET] = { pol_apply_socket, true },
	[DK_STRING] = { pol_apply_string, false },
	[DK_DEPTH] = { pol_apply_depth, false },
	[DK_ONOFF] = { pol_apply_onoff, false },
	[DK_BRIDGE] = { pol_apply_bridge, false },
	[DK_IGNORE] = { pol_apply_ignore, false },
	[DK_BINARY] = { pol_apply_binary, true },
	[DK_INCLUDE] = { pol_apply_include, true },
	[DK_PORT] = { pol_apply_port, false },
	[DK_ENV] = { pol_apply_env, false },
	[DK_NAME] = { pol_apply_name, false },
	[DK_PROXY_URL] = { pol_apply_proxy_url, false },
	[DK_BYPASS] = { pol_apply_bypass, false },
	[DK_HEADER] = { pol_apply_header, false },
	[DK_CHOICE] = { pol_apply_choice, false },
	[DK_PORT1] = { pol_apply_port1, false },
	[DK_UNIX_SOCKET] = { pol_apply_unix_socket, true },
	[DK_MITM_DOMAIN] = { pol_apply_mitm_domain, false },
};

/* Arguments come from either reader (and the command line); each must
 * print back as a line: no control characters (a newline has no
 * line-format spelling, and no path, host or reason needs one), and
 * bounded. Returns 0, or -1 with e filled. */
static int
pol_check_args(const struct dcall *a, bool path_args)
{
	int i;

	for (i = 0; i < a->nargs; i++) {
		const unsigned char *q;

		for (q = (const unsigned char *)a->args[i]; *q; q++)
			if (is_control(*q))
				return err_set(a->e, a->file, a->line, 0, "%s: control character in an argument",
				    a->d->name);
		if (strlen(a->args[i]) > SBX_MAX_TEXT_ARG_BYTES && !path_args)
			return err_set(a->e, a->file, a->line, 0, "%s: argument longer than %d bytes", a->d->name,
			    SBX_MAX_TEXT_ARG_BYTES);
	}
	return 0;
}

/* Apply one directive with its arguments: check the arguments, then their
 * count against the row, then hand them to the row's kind. Returns 0, or
 * -1 with e filled. */
static int
pol_apply(struct policy *p, struct pol_ctx *c, const struct directive *d, char **args,
    int nargs, const char *file, int line, struct err *e)
{
	const struct dcall a = { p, c, d, args, nargs, file, line, e };
	const struct dkind_ops *ops = (size_t)d->kind < LEN(dkind_ops) && dkind_ops[d->kind].apply ?
	    &dkind_ops[d->kind] : NULL;

	if (pol_check_args(&a, ops && ops->path_args) < 0)
		return -1;
	if (nargs < d->nargs_min || nargs > d->nargs_max) {
		if (d->metavar)
			return err_set(e, file, line, 0, "%s takes %s", d->name, d->metavar);
		return err_set(e, file, line, 0, "%s takes no argument", d->name);
	}
	if (!ops)
		return err_set(e, file, line, 0, "internal: unhandled directive kind");
	return ops->apply(&a);
}

/* ---- 3.4 The line format ---------------------------------------- */

#define UTF8_BOM	"\xef\xbb\xbf"	/* U+FEFF as UTF-8: skipped at the start of a file */

/* Split a line into words: bare words end at white space; "a quoted word"
 * may hold spaces and the escapes \" and \\; a # at the start of a word
 * begins a comment. Returns the word count, or -1 with *why set. Words
 * point into line, which is modified. */
static int
pol_split_words(char *line, char **words, int max, const char **why)
{
	int n = 0;
	char *r = line, *w;

	for (;;) {
		while (*r == ' ' || *r == '\t' || *r == '\r')
			r++;
		if (*r == '\0' || *r == '#')
			return n;
		if (n == max) {
			*why = "too many arguments";
			return -1;
		}
		words[n++] = w = r;
		if (*r == '"') {
			r++;
			for (;;) {
				if (*r == '\0') {
					*why = "unterminated quoted argument";
					return -1;
				}
				if (*r == '"')
					break;
				if (*r == '\\') {
					if (r[1] != '"' && r[1] != '\\') {
						*why = "unknown escape in quoted argument (only \\\" and \\\\)";
						return -1;
					}
					r++;
				}
				*w++ = *r++;
			}
			r++;
			if (*r != '\0' && *r != ' ' && *r != '\t' && *r != '\r') {
				*why = "text right after a closing quote";
				return -1;
			}
		} else {
			while (*r && *r != ' ' && *r != '\t' && *r != '\r')
				*w++ = *r++;
		}
		if (*r)
			r++;
		*w = '\0';
	}
}

static const char *
did_you_mean_directive(const char *word)
{
	const char *names[LEN(directives)];
	size_t i;

	for (i = 0; i < LEN(directives); i++)
		names[i] = directives[i].name;
	return closest_name(word, names, LEN(names));
}

/* Parse one line of the line format. Returns 0, or -1 with e filled. */
static int
pol_parse_line(struct policy *p, struct pol_ctx *c, char *line, const char *file, int lineno,
    struct err *e)
{
	char *words[8];
	const char *why = NULL, *hint;
	const struct directive *d;
	int n = pol_split_words(line, words, (int)LEN(words), &why);

	if (n < 0)
		return err_set(e, file, lineno, 0, "%s", why);
	if (n == 0)
		return 0;
	d = directive_find(words[0]);
	if (!d && strncmp(words[0], UTF8_BOM, 3) == 0)
		return err_set(e, file, lineno, 0, "a byte-order mark (U+FEFF) is allowed only as the first "
		    "bytes of the file");
	if (!d) {
		hint = did_you_mean_directive(words[0]);
		if (hint)
			return err_set(e, file, lineno, 0, "unknown directive \"%s\" (did you mean \"%s\"?)",
			    words[0], hint);
		return err_set(e, file, lineno, 0, "unknown directive \"%s\" (sbx --help lists them)", words[0]);
	}
	return pol_apply(p, c, d, words + 1, n - 1, file, lineno, e);
}

/* Parse a whole policy text: JSON when its first non-blank byte is '{',
 * else the line format. A UTF-8 byte-order mark at the very start is
 * skipped, for either format: editors on Windows write one, and without
 * this a JSON file would be read as the line format and fail with a
 * puzzling "unknown directive". Returns 0, or -1 with e filled. */
static int
pol_parse_text(struct policy *p, struct pol_ctx *c, char *text, size_t n, const char *file,
    struct err *e)
{
	size_t i, start;
	int lineno = 1;
	bool blank = true;

	if (n >= 3 && memcmp(text, UTF8_BOM, 3) == 0) {
		text += 3;
		n -= 3;
	}
	/* a UTF-16 file would otherwise be "NUL byte in policy file" */
	if (n >= 2 && ((unsigned char)text[0] == 0xff || (unsigned char)text[0] == 0xfe) &&
	    (unsigned char)text[1] == ((unsigned char)text[0] ^ 1))
		return err_set(e, file, 1, 0, "the file is UTF-16 (it starts with a byte-order mark %02X %02X); save it "
		    "as UTF-8", (unsigned char)text[0], (unsigned char)text[1]);
	for (i = 0; i < n; i++) {
		if (text[i] == '\0') {
			int l = 1;
			size_t j;

			for (j = 0; j < i; j++)
				l += text[j] == '\n';
			return err_set(e, file, l, 0, "NUL byte in policy file");
		}
		if (!isspace((unsigned char)text[i]))
			blank = false;
	}
	if (blank)
		return err_set(e, file, 0, 0, "policy file is empty (sbx refuses to fall back to a default)");
	for (i = 0; isspace((unsigned char)text[i]); i++)
		;
	if (text[i] == '{')
		return json_parse_policy(p, c, text, n, file, e);

	for (start = 0; start < n; lineno++) {
		size_t end = start, k;

		while (end < n && text[end] != '\n')
			end++;
		if (end - start > SBX_MAX_LINE_BYTES)
			return err_set(e, file, lineno, 0, "line longer than %d bytes", SBX_MAX_LINE_BYTES);
		for (k = start; k < end;) {	/* UTF-8 only, as JSON: either printer must write it back */
			int l = utf8_valid_len((const unsigned char *)text + k, (const unsigned char *)text + end);

			if (!l)
				return err_set(e, file, lineno, 0, "invalid UTF-8");
			k += (size_t)l;
		}
		text[end] = '\0';
		if (pol_parse_line(p, c, text + start, file, lineno, e) < 0)
			return -1;
		start = end + 1;
	}
	return 0;
}

/* Read a policy file, and the files it includes. There is no "-" for
 * standard input: stdin belongs to the command, which sbx runs after the
 * policy is read, so "-" is just a file of that name. Returns 0, or -1
 * with e filled. */
static int
pol_read_file(struct policy *p, struct pol_ctx *c, const char *path, struct err *e)
{
	struct buf b = { 0 };
	char real[PATH_MAX];
	int i, rc;
	const char *file = astrdup(path);

	if (read_file(path, SBX_MAX_POLICY_BYTES, &b) < 0) {
		int saved = errno;

		free(b.p);
		if (saved == EFBIG)
			return err_set(e, file, 0, 0, "policy file larger than %d bytes", SBX_MAX_POLICY_BYTES);
		if (saved == ENOENT)
			return err_set(e, file, 0, 0, "no such policy file (sbx refuses to fall back to a default)");
		return err_set(e, file, 0, 0, "cannot read policy file: %s", strerror(saved));
	}
	if (!realpath(path, real))
		str_copy(real, path, sizeof(real));
	for (i = 0; i < c->include_depth; i++)
		if (strcmp(c->include_stack[i], real) == 0) {
			free(b.p);
			return err_set(e, file, 0, 0, "include loop: this file includes itself (through %s)",
			    c->include_stack[c->include_depth - 1]);
		}
	if (c->include_depth >= SBX_MAX_INCLUDE_DEPTH) {
		free(b.p);
		return err_set(e, file, 0, 0, "includes nested deeper than %d", SBX_MAX_INCLUDE_DEPTH);
	}
	c->include_stack[c->include_depth++] = astrdup(real);
	rc = pol_parse_text(p, c, b.p ? b.p : (char *)"", b.n, file, e);
	c->include_depth--;
	free(b.p);
	return rc;
}

/* ---- 3.5 A strict JSON reader (RFC 8259), for srt settings files ---
 *
 * Strict because a settings file is a security policy: a trailing comma, a
 * comment, a duplicate key or a lone surrogate is an error with its line and
 * column, never a guess. Depth and size are bounded. The result is a small
 * tree in the arena. */

/* ORDER: json_type_name's names[] relies on this order. */
enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jpos { int line, col; };

struct jval {
	enum jtype t;
	int line, col;
	bool b;			/* J_BOOL */
	double num;		/* J_NUM */
	bool integral;		/* J_NUM written without fraction or exponent */
	const char *s;		/* J_STR (NUL-free: NUL is refused) */
	size_t n;		/* J_ARR, J_OBJ: element count */
	struct jval **items;	/* J_ARR, J_OBJ */
	const char **keys;	/* J_OBJ */
	struct jpos **key_at;	/* J_OBJ: where keys[i] is written, for messages */
};

struct jparser {
	const char *s, *end, *file;
	int line;
	const char *line_start;
	struct err *e;
};

static int
json_fail(struct jparser *jp, const char *fmt, const char *arg)
{
	return err_set(jp->e, jp->file, jp->line, (int)(jp->s - jp->line_start) + 1, fmt, arg);
}

static void
json_ws(struct jparser *jp)
{
	while (jp->s < jp->end) {
		char ch = *jp->s;

		if (ch == '\n') {
			jp->line++;
			jp->line_start = jp->s + 1;
		} else if (ch != ' ' && ch != '\t' && ch != '\r') {
			return;
		}
		jp->s++;
	}
}

static const char *
json_type_name(enum jtype t)
{
	/* ORDER: enum jtype */
	static const char *const names[] = { "null", "a boolean", "a number", "a string", "an array", "an object" };

	return names[t];
}

static int
json_hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		int ch = (unsigned char)p[i], d;

		if (ch >= '0' && ch <= '9')
			d = ch - '0';
		else if (ch >= 'a' && ch <= 'f')
			d = ch - 'a' + 10;
		else if (ch >= 'A' && ch <= 'F')
			d = ch - 'A' + 10;
		else
			return -1;
		v = v * 16 + (unsigned)d;
	}
	*out = v;
	return 0;
}

static void
utf8_put(struct buf *b, unsigned cp)
{
	if (cp < 0x80) {
		buf_putc(b, (char)cp);
	} else if (cp < 0x800) {
		buf_putc(b, (char)(0xc0 | cp >> 6));
		buf_putc(b, (char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		buf_putc(b, (char)(0xe0 | cp >> 12));
		buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
		buf_putc(b, (char)(0x80 | (cp & 0x3f)));
	} else {
		buf_putc(b, (char)(0xf0 | cp >> 18));
		buf_putc(b, (char)(0x80 | ((cp >> 12) & 0x3f)));
		buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
		buf_putc(b, (char)(0x80 | (cp & 0x3f)));
	}
}

/* Length of one valid UTF-8 sequence at p (shortest form, no surrogates, at
 * most U+10FFFF), or 0 when invalid. */
static int
utf8_valid_len(const unsigned char *p, const unsigned char *end)
{
	int len, i;
	unsigned cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		len = 2, cp = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		len = 3, cp = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (end - p < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static int
json_string(struct jparser *jp, const char **out)
{
	struct buf b = { 0 };

	jp->s++;	/* the opening quote */
	buf_grow(&b, 16);
	for (;;) {
		unsigned char ch;

		if (jp->s >= jp->end) {
			free(b.p);
			return json_fail(jp, "unterminated string%s", "");
		}
		ch = (unsigned char)*jp->s;
		if (ch == '"')
			break;
		if (ch < 0x20) {
			free(b.p);
			return json_fail(jp, "control character in string (write it as \\u00XX)%s", "");
		}
		if (ch == '\\') {
			unsigned cp, lo;

			if (jp->end - jp->s < 2) {
				free(b.p);
				return json_fail(jp, "unterminated string%s", "");
			}
			switch (jp->s[1]) {
			case '"': buf_putc(&b, '"'); break;
			case '\\': buf_putc(&b, '\\'); break;
			case '/': buf_putc(&b, '/'); break;
			case 'b': buf_putc(&b, '\b'); break;
			case 'f': buf_putc(&b, '\f'); break;
			case 'n': buf_putc(&b, '\n'); break;
			case 'r': buf_putc(&b, '\r'); break;
			case 't': buf_putc(&b, '\t'); break;
			case 'u':
				if (jp->end - jp->s < 6 || json_hex4(jp->s + 2, &cp) < 0) {
					free(b.p);
					return json_fail(jp, "bad \\u escape%s", "");
				}
				if (cp >= 0xdc00 && cp <= 0xdfff) {
					free(b.p);
					return json_fail(jp, "lone low surrogate in \\u escape%s", "");
				}
				if (cp >= 0xd800 && cp <= 0xdbff) {
					if (jp->end - jp->s < 12 || jp->s[6] != '\\' || jp->s[7] != 'u' ||
					    json_hex4(jp->s + 8, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff) {
						free(b.p);
						return json_fail(jp, "high surrogate not followed by a low one%s", "");
					}
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					jp->s += 6;
				}
				if (cp == 0) {
					free(b.p);
					return json_fail(jp, "NUL character (\\u0000) in string%s", "");
				}
				utf8_put(&b, cp);
				jp->s += 4;
				break;
			default:
				free(b.p);
				return json_fail(jp, "unknown escape in string%s", "");
			}
			jp->s += 2;
			continue;
		}
		if (ch >= 0x80) {
			int len = utf8_valid_len((const unsigned char *)jp->s, (const unsigned char *)jp->end);

			if (!len) {
				free(b.p);
				return json_fail(jp, "invalid UTF-8 in string%s", "");
			}
			buf_putn(&b, jp->s, (size_t)len);
			jp->s += len;
			continue;
		}
		buf_putc(&b, (char)ch);
		jp->s++;
	}
	jp->s++;
	*out = astrndup(b.p ? b.p : "", b.n);
	free(b.p);
	return 0;
}

static int
json_number(struct jparser *jp, struct jval *v)
{
	const char *p = jp->s, *start = jp->s;
	char tmp[64];

	v->integral = true;
	if (*p == '-')
		p++;
	if (p < jp->end && *p == '0')
		p++;
	else if (p < jp->end && *p >= '1' && *p <= '9')
		while (p < jp->end && isdigit((unsigned char)*p))
			p++;
	else
		return json_fail(jp, "bad number%s", "");
	if (p < jp->end && *p == '.') {
		v->integral = false;
		p++;
		if (p >= jp->end || !isdigit((unsigned char)*p))
			return json_fail(jp, "bad number: digits must follow the point%s", "");
		while (p < jp->end && isdigit((unsigned char)*p))
			p++;
	}
	if (p < jp->end && (*p == 'e' || *p == 'E')) {
		v->integral = false;
		p++;
		if (p < jp->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= jp->end || !isdigit((unsigned char)*p))
			return json_fail(jp, "bad number exponent%s", "");
		while (p < jp->end && isdigit((unsigned char)*p))
			p++;
	}
	if ((size_t)(p - start) >= sizeof(tmp))
		return json_fail(jp, "number too long%s", "");
	memcpy(tmp, start, (size_t)(p - start));
	tmp[p - start] = '\0';
	v->num = strtod(tmp, NULL);
	jp->s = p;
	return 0;
}

static int
json_container(struct jparser *jp, struct jval *v, int depth)
{
	bool obj = *jp->s == '{';
	char close = obj ? '}' : ']';
	struct vec items = { 0 }, keys = { 0 }, key_at = { 0 };
	size_t i;

	v->t = obj ? J_OBJ : J_ARR;
	jp->s++;
	json_ws(jp);
	if (jp->s < jp->end && *jp->s == close) {
		jp->s++;
		return 0;
	}
	for (;;) {
		struct jval *item;

		json_ws(jp);
		if (obj) {
			const char *key;
			struct jpos *at = amalloc(sizeof(*at));

			at->line = jp->line;
			at->col = (int)(jp->s - jp->line_start) + 1;

			if (jp->s >= jp->end || *jp->s != '"')
				return json_fail(jp, "expected a key in double quotes%s", "");
			if (json_string(jp, &key) < 0)
				return -1;
			for (i = 0; i < keys.n; i++)
				if (strcmp(keys.v[i], key) == 0)
					return err_set(jp->e, jp->file, at->line, at->col, "duplicate key \"%s\"", key);
			vec_push(&keys, (void *)key);
			vec_push(&key_at, at);
			json_ws(jp);
			if (jp->s >= jp->end || *jp->s != ':')
				return json_fail(jp, "expected ':' after the key%s", "");
			jp->s++;
		}
		if (json_value(jp, &item, depth + 1) < 0)
			return -1;
		vec_push(&items, item);
		json_ws(jp);
		if (jp->s < jp->end && *jp->s == ',') {
			jp->s++;
			json_ws(jp);
			if (jp->s < jp->end && *jp->s == close)
				return json_fail(jp, "trailing comma%s", "");
			continue;
		}
		if (jp->s < jp->end && *jp->s == close) {
			jp->s++;
			break;
		}
		return json_fail(jp, obj ? "expected ',' or '}'%s" : "expected ',' or ']'%s", "");
	}
	v->n = items.n;
	v->items = (struct jval **)items.v;
	if (obj) {
		v->keys = (const char **)keys.v;
		v->key_at = (struct jpos **)key_at.v;
	}
	return 0;
}

static int
json_value(struct jparser *jp, struct jval **out, int depth)
{
	struct jval *v = amalloc(sizeof(*v));

	json_ws(jp);
	v->line = jp->line;
	v->col = (int)(jp->s - jp->line_start) + 1;
	*out = v;
	if (depth > SBX_MAX_JSON_DEPTH)
		return json_fail(jp, "nested deeper than %s levels", "32");
	if (jp->s >= jp->end)
		return json_fail(jp, "unexpected end of input%s", "");
	switch (*jp->s) {
	case '{':
	case '[':
		return json_container(jp, v, depth);
	case '"':
		v->t = J_STR;
		return json_string(jp, &v->s);
	case 't':
	case 'f':
	case 'n': {
		static const struct { const char *word; enum jtype t; bool b; } lits[] = {
			{ "true", J_BOOL, true }, { "false", J_BOOL, false }, { "null", J_NULL, false },
		};
		size_t i;

		for (i = 0; i < LEN(lits); i++) {
			size_t n = strlen(lits[i].word);

			if ((size_t)(jp->end - jp->s) >= n && memcmp(jp->s, lits[i].word, n) == 0) {
				v->t = lits[i].t;
				v->b = lits[i].b;
				jp->s += n;
				return 0;
			}
		}
		return json_fail(jp, "unexpected word (JSON has true, false and null)%s", "");
	}
	default:
		if (*jp->s == '-' || isdigit((unsigned char)*jp->s)) {
			v->t = J_NUM;
			return json_number(jp, v);
		}
		if (*jp->s == '/')
			return json_fail(jp, "comments are not JSON%s", "");
		return json_fail(jp, "unexpected character%s", "");
	}
}

/* Parse a whole JSON document. Returns 0, or -1 with e filled. */
static int
json_parse(const char *text, size_t n, const char *file, struct jval **out, struct err *e)
{
	struct jparser jp = { text, text + n, file, 1, text, e };

	if (n >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		return err_set(e, file, 1, 1, "byte order mark at the start (save the file as plain UTF-8)");
	if (json_value(&jp, out, 0) < 0)
		return -1;
	json_ws(&jp);
	if (jp.s != jp.end)
		return json_fail(&jp, "text after the end of the JSON value%s", "");
	return 0;
}

/* ---- 3.6 srt settings: the schema, as a table ----------------------
 *
 * srt (zod) strips unknown keys silently, so a typo such as "denyReed" drops
 * a deny without a word. sbx refuses unknown keys and names the closest
 * known one. A key for an srt feature sbx does not build, that a user would
 * rely on for safety, is an error; a key that only steers srt's own
 * internals is accepted and ignored (noted under -v). */

enum jkind {
	JK_OBJECT,	/* a nested object whose keys are rows with this row's name as parent */
	JK_RECORD,	/* JK_OBJECT with every one of its rows required (srt's z.object, no .optional()) */
	JK_PATHS,	/* array of path entries (string or {path, literal:true}) -> directive */
	JK_STRINGS,	/* array of strings -> directive */
	JK_BOOL,	/* true sets the flag directive */
	JK_DEPTH,	/* integer -> directive */
	JK_BINARY,	/* absolute path string -> directive */
	JK_REASONS,	/* deniedDomainReasons: { "entry": "reason" } */
	JK_IGNORES,	/* ignoreViolations: { "command": ["line", ...] } */
	JK_ENUM,	/* a string -> directive with that argument */
	JK_PORTS,	/* array of integers 1..65535 -> directive */
	JK_CSV,		/* a comma-separated string (NO_PROXY's form) -> the directive per entry */
	JK_PORT1,	/* an integer 1..65535 -> directive */
	JK_CREDENTIALS,	/* credentials.files / envVars: [{ "path"|"name": ..., "mode": "deny" }] -> directive */
	JK_IGNORED,	/* srt internals: accepted, ignored */
	JK_UNSUPPORTED,	/* an srt feature sbx does not build: refused */
};

/* srt's credentials block: mode "deny" is a read deny or a removed variable,
 * which sbx builds; mode "mask" hands the command a stand-in and swaps the
 * real value in on the way out, which means reading the command's TLS. */
#define SBX_MASKING_WHY	"credential masking needs TLS termination, which sbx does not do; use mode \"deny\""

/* Keys of a credential entry that only masking reads (srt accepts and
 * ignores them on a "deny" entry; sbx refuses them rather than guess). */
static const char *const cred_mask_only_keys[] = {
	"extract", "onExtractNoMatch", "decode", "maskClaims", "maskDuplicates", "injectHosts",
};

struct jkey {
	const char *parent;	/* "" for the top level */
	const char *key;
	enum jkind kind;
	const char *directive;	/* the line-format directive it feeds */
	const char *why;	/* JK_IGNORED / JK_UNSUPPORTED: the reason */
};

static const struct jkey jkeys[] = {
	{ "", "network", JK_OBJECT, NULL, NULL },
	{ "", "filesystem", JK_OBJECT, NULL, NULL },
	{ "", "git", JK_OBJECT, NULL, NULL },
	{ "", "sbx", JK_OBJECT, NULL, NULL },	/* sbx's own settings; srt strips this key */
	{ "", "ignoreViolations", JK_IGNORES, "ignore-violations", NULL },
	{ "", "enableWeakerNestedSandbox", JK_BOOL, "weaker-nested-sandbox", NULL },
	{ "", "allowNestedUserNamespaces", JK_BOOL, "allow-nested-userns", NULL },
	{ "", "enableWeakerNetworkIsolation", JK_BOOL, "weaker-network-isolation", NULL },
	{ "", "allowAppleEvents", JK_BOOL, "allow-apple-events", NULL },
	{ "", "allowPty", JK_BOOL, "allow-pty", NULL },
	{ "", "mandatoryDenySearchDepth", JK_DEPTH, "mandatory-deny-depth", NULL },
	{ "", "bwrapPath", JK_BINARY, "bwrap-path", NULL },
	{ "", "socatPath", JK_BINARY, "socat-path", NULL },
	{ "", "ripgrep", JK_IGNORED, NULL, "sbx scans for dangerous files itself; ripgrep is not used" },
	{ "", "seccomp", JK_IGNORED, NULL, "sbx assembles and installs its own seccomp filters" },
	{ "", "javaAgentJarPath", JK_IGNORED, NULL, "sbx sets JAVA_TOOL_OPTIONS proxy properties instead of an agent" },
	{ "", "windows", JK_IGNORED, NULL, "sbx does not run on Windows" },
	{ "", "credentials", JK_OBJECT, NULL, NULL },	/* strict in srt too */
	{ "", "tlsTerminate", JK_UNSUPPORTED, NULL, "sbx does not terminate TLS" },
	{ "", "mitmProxy", JK_UNSUPPORTED, NULL, "it belongs under \"network\"" },
	{ "", "parentProxy", JK_UNSUPPORTED, NULL, "it belongs under \"network\"" },
	{ "network", "allowedDomains", JK_STRINGS, "allow-domain", NULL },
	{ "network", "deniedDomains", JK_STRINGS, "deny-domain", NULL },
	{ "network", "deniedDomainReasons", JK_REASONS, NULL, NULL },
	{ "network", "deniedResolvedAddresses", JK_STRINGS, "deny-address", NULL },
	{ "network", "allowUnixSockets", JK_STRINGS, "allow-unix-socket", NULL },
	{ "network", "allowAllUnixSockets", JK_BOOL, "allow-all-unix-sockets", NULL },
	{ "network", "allowLocalBinding", JK_BOOL, "allow-local-binding", NULL },
	{ "network", "allowMachLookup", JK_STRINGS, "allow-mach-lookup", NULL },
	{ "network", "strictAllowlist", JK_IGNORED, NULL, "sbx never asks, so the allow list is always strict" },
	{ "network", "httpProxyPort", JK_PORT1, "http-proxy-port", NULL },
	{ "network", "socksProxyPort", JK_PORT1, "socks-proxy-port", NULL },
	{ "network", "tlsTerminate", JK_UNSUPPORTED, NULL, "sbx does not terminate TLS" },
	{ "network", "mitmProxy", JK_RECORD, NULL, NULL },
	{ "mitmProxy", "socketPath", JK_ENUM, "mitm-proxy", NULL },
	{ "mitmProxy", "domains", JK_STRINGS, "mitm-proxy-domain", NULL },
	{ "network", "parentProxy", JK_OBJECT, NULL, NULL },
	{ "parentProxy", "http", JK_ENUM, "parent-proxy", NULL },
	{ "parentProxy", "https", JK_ENUM, "parent-proxy-https", NULL },
	{ "parentProxy", "noProxy", JK_CSV, "parent-proxy-bypass", NULL },
	{ "network", "filterRequest", JK_UNSUPPORTED, NULL, "a request filter is a library callback, not a setting" },
	{ "network", "allowPlaintextHeaderSet", JK_BOOL, "allow-plaintext-header-set", NULL },
	{ "network", "stripResponseHeaders", JK_STRINGS, "strip-response-header", NULL },
	{ "network", "refuseOpaqueTunnels", JK_BOOL, "refuse-opaque-tunnels", NULL },
	{ "network", "requireHostMatch", JK_BOOL, "require-host-match", NULL },
	{ "network", "ambiguousRequestTarget", JK_ENUM, "ambiguous-request-target", NULL },
	{ "filesystem", "denyRead", JK_PATHS, "deny-read", NULL },
	{ "filesystem", "allowRead", JK_PATHS, "allow-read", NULL },
	{ "filesystem", "allowWrite", JK_PATHS, "allow-write", NULL },
	{ "filesystem", "denyWrite", JK_PATHS, "deny-write", NULL },
	{ "filesystem", "allowGitConfig", JK_BOOL, "allow-git-config", NULL },
	{ "filesystem", "disabled", JK_BOOL, "disable-filesystem", NULL },
	{ "git", "safeDirectories", JK_STRINGS, "git-safe-directory", NULL },
	{ "credentials", "files", JK_CREDENTIALS, "deny-secret-file", NULL },
	{ "credentials", "envVars", JK_CREDENTIALS, "deny-env", NULL },
	{ "credentials", "allowPlaintextInject", JK_UNSUPPORTED, NULL, "it only matters to " SBX_MASKING_WHY },
	{ "credentials", "awsPairs", JK_UNSUPPORTED, NULL, "AWS pairs link masked variables, and " SBX_MASKING_WHY },
	{ "credentials", "sigv4", JK_UNSUPPORTED, NULL, "SigV4 re-signing is part of masking, and " SBX_MASKING_WHY },
	{ "sbx", "bridge", JK_ENUM, "bridge", NULL },
	{ "sbx", "observeWrites", JK_BOOL, "observe-writes", NULL },
	{ "sbx", "networkDns", JK_BOOL, "network-dns", NULL },
	{ "sbx", "networkCapture", JK_BOOL, "network-capture", NULL },
	{ "sbx", "allowHostPorts", JK_PORTS, "allow-host-port", NULL },
	{ "sbx", "exposePorts", JK_PORTS, "expose-port", NULL },
	{ "sbx", "protectedFiles", JK_STRINGS, "protect", NULL },
};

struct jwalk {
	struct policy *p;
	struct pol_ctx *c;
	const char *file;
	struct err *e;
	struct jval *reasons;	/* deniedDomainReasons, applied after deniedDomains */
};

static int
jw_fail(struct jwalk *w, const struct jval *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(w->e, w->file, v->line, v->col, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *
jkey_dotted(const struct jkey *k)
{
	return *k->parent ? aprintf("%s.%s", k->parent, k->key) : k->key;
}

/* Feed one argument list to a directive, translating the error position to the JSON value. */
static int
jw_apply(struct jwalk *w, const struct jkey *k, const struct jval *at, char **args, int nargs)
{
	const struct directive *d = directive_find(k->directive);

	BUG_ON(!d);
	if (pol_apply(w->p, w->c, d, args, nargs, w->file, at->line, w->e) < 0) {
		w->e->col = at->col;
		/* name the srt key rather than our directive */
		if (strncmp(w->e->msg, d->name, strlen(d->name)) == 0)
			snprintf(w->e->msg, sizeof(w->e->msg), "%s%s", jkey_dotted(k),
			    aprintf("%s", w->e->msg + strlen(d->name)));
		return -1;
	}
	return 0;
}

static int
jw_key(struct jwalk *w, const struct jkey *k, const struct jval *v)
{
	const char *dotted = jkey_dotted(k);
	char *args[2];
	size_t i;

	switch (k->kind) {
	case JK_OBJECT:
	case JK_RECORD:
		if (v->t != J_OBJ)
			return jw_fail(w, v, "%s: expected an object, got %s", dotted, json_type_name(v->t));
		for (i = 0; k->kind == JK_RECORD && i < LEN(jkeys); i++) {
			size_t j;

			if (strcmp(jkeys[i].parent, k->key) != 0)
				continue;
			for (j = 0; j < v->n && strcmp(v->keys[j], jkeys[i].key) != 0; j++)
				;
			if (j == v->n)
				return jw_fail(w, v, "%s.%s: required", dotted, jkeys[i].key);
		}
		return jw_object(w, k->key, v);
	case JK_PATHS:
	case JK_STRINGS:
		if (v->t != J_ARR)
			return jw_fail(w, v, "%s: expected an array, got %s", dotted, json_type_name(v->t));
		for (i = 0; i < v->n; i++) {
			const struct jval *it = v->items[i];

			if (it->t == J_STR) {
				if (!*it->s)
					return jw_fail(w, it, "%s[%zu]: empty string", dotted, i);
				args[0] = (char *)it->s;
				if (jw_apply(w, k, it, args, 1) < 0)
					return -1;
			} else if (k->kind == JK_PATHS && it->t == J_OBJ) {
				/* { "path": "...", "literal": true } is strict in srt too */
				const struct jval *path = NULL, *lit = NULL;
				size_t j;

				for (j = 0; j < it->n; j++) {
					if (strcmp(it->keys[j], "path") == 0)
						path = it->items[j];
					else if (strcmp(it->keys[j], "literal") == 0)
						lit = it->items[j];
					else
						return jw_fail(w, it->items[j], "%s[%zu]: unknown key \"%s\" (a path entry has \"path\" and \"literal\")",
						    dotted, i, it->keys[j]);
				}
				if (!path || path->t != J_STR || !*path->s || !lit || lit->t != J_BOOL || !lit->b)
					return jw_fail(w, it, "%s[%zu]: expected a path, or { \"path\": \"<path>\", \"literal\": true }",
					    dotted, i);
				args[0] = (char *)"literal";
				args[1] = (char *)path->s;
				if (jw_apply(w, k, it, args, 2) < 0)
					return -1;
			} else {
				return jw_fail(w, it, "%s[%zu]: expected %s, got %s", dotted, i,
				    k->kind == JK_PATHS ? "a path string" : "a string", json_type_name(it->t));
			}
		}
		return 0;
	case JK_BOOL:
		if (v->t != J_BOOL)
			return jw_fail(w, v, "%s: expected a boolean, got %s", dotted, json_type_name(v->t));
		/* an on|off directive takes false too; a flag has no "off",
		 * so false leaves it as it was */
		if (directive_find(k->directive)->kind == DK_ONOFF) {
			args[0] = (char *)(v->b ? "on" : "off");
			return jw_apply(w, k, v, args, 1);
		}
		if (v->b)
			return jw_apply(w, k, v, args, 0);
		return 0;
	case JK_DEPTH:
		if (v->t != J_NUM || !v->integral)
			return jw_fail(w, v, "%s: expected an integer, got %s", dotted, json_type_name(v->t));
		if (v->num < 1 || v->num > 10)
			return jw_fail(w, v, "%s: must be between 1 and 10", dotted);
		args[0] = aprintf("%d", (int)v->num);
		return jw_apply(w, k, v, args, 1);
	case JK_BINARY:
	case JK_ENUM:
		if (v->t != J_STR)
			return jw_fail(w, v, "%s: expected a string, got %s", dotted, json_type_name(v->t));
		args[0] = (char *)v->s;
		return jw_apply(w, k, v, args, 1);
	case JK_PORT1:
		if (v->t != J_NUM || !v->integral || v->num < 1 || v->num > 65535)
			return jw_fail(w, v, "%s: expected a port number (1..65535)", dotted);
		args[0] = aprintf("%ld", (long)v->num);
		return jw_apply(w, k, v, args, 1);
	case JK_CSV: {
		char *copy, *entry, *save;

		if (v->t != J_STR)
			return jw_fail(w, v, "%s: expected a string, got %s", dotted, json_type_name(v->t));
		copy = astrdup(v->s);
		for (entry = strtok_r(copy, ",", &save); entry; entry = strtok_r(NULL, ",", &save)) {
			char *end = entry + strlen(entry);

			while (*entry == ' ' || *entry == '\t')
				entry++;
			while (end > entry && (end[-1] == ' ' || end[-1] == '\t'))
				*--end = '\0';
			if (!*entry)
				continue;	/* "a,,b" and a trailing comma, as srt */
			args[0] = entry;
			if (jw_apply(w, k, v, args, 1) < 0)
				return -1;
		}
		return 0;
	}
	case JK_PORTS:
		if (v->t != J_ARR)
			return jw_fail(w, v, "%s: expected an array, got %s", dotted, json_type_name(v->t));
		for (i = 0; i < v->n; i++) {
			const struct jval *it = v->items[i];

			if (it->t != J_NUM || !it->integral || it->num < 1 || it->num > 65535)
				return jw_fail(w, it, "%s[%zu]: expected a port number (1..65535)", dotted, i);
			args[0] = aprintf("%d", (int)it->num);
			if (jw_apply(w, k, it, args, 1) < 0)
				return -1;
		}
		return 0;
	case JK_REASONS:
		if (v->t != J_OBJ)
			return jw_fail(w, v, "%s: expected an object, got %s", dotted, json_type_name(v->t));
		w->reasons = (struct jval *)v;
		return 0;
	case JK_IGNORES:
		if (v->t != J_OBJ)
			return jw_fail(w, v, "%s: expected an object, got %s", dotted, json_type_name(v->t));
		for (i = 0; i < v->n; i++) {
			const struct jval *list = v->items[i];
			size_t j;

			if (list->t != J_ARR)
				return jw_fail(w, list, "%s[\"%s\"]: expected an array of strings, got %s", dotted,
				    v->keys[i], json_type_name(list->t));
			for (j = 0; j < list->n; j++) {
				if (list->items[j]->t != J_STR)
					return jw_fail(w, list->items[j], "%s[\"%s\"][%zu]: expected a string", dotted,
					    v->keys[i], j);
				args[0] = (char *)v->keys[i];
				args[1] = (char *)list->items[j]->s;
				if (jw_apply(w, k, list->items[j], args, 2) < 0)
					return -1;
			}
		}
		return 0;
	case JK_CREDENTIALS: {
		/* srt's entry: { "path" (files) or "name" (envVars), "mode" } */
		const char *id = directive_find(k->directive)->kind == DK_ENV ? "name" : "path";

		if (v->t != J_ARR)
			return jw_fail(w, v, "%s: expected an array, got %s", dotted, json_type_name(v->t));
		for (i = 0; i < v->n; i++) {
			const struct jval *it = v->items[i], *name = NULL, *mode = NULL;
			size_t j, m;

			if (it->t != J_OBJ)
				return jw_fail(w, it, "%s[%zu]: expected an object { \"%s\": ..., \"mode\": \"deny\" }, "
				    "got %s", dotted, i, id, json_type_name(it->t));
			for (j = 0; j < it->n; j++) {
				if (strcmp(it->keys[j], id) == 0) {
					name = it->items[j];
					continue;
				}
				if (strcmp(it->keys[j], "mode") == 0) {
					mode = it->items[j];
					continue;
				}
				for (m = 0; m < LEN(cred_mask_only_keys); m++)
					if (strcmp(it->keys[j], cred_mask_only_keys[m]) == 0)
						return jw_fail(w, it->items[j], "%s[%zu].%s: only masking reads it, and %s",
						    dotted, i, it->keys[j], SBX_MASKING_WHY);
				return jw_fail(w, it->items[j], "%s[%zu]: unknown key \"%s\" (an entry has \"%s\" and "
				    "\"mode\")", dotted, i, it->keys[j], id);
			}
			if (!name || name->t != J_STR)
				return jw_fail(w, name ? name : it, "%s[%zu].%s: %s", dotted, i, id,
				    name ? aprintf("expected a string, got %s", json_type_name(name->t)) : "required");
			if (!mode || mode->t != J_STR || (strcmp(mode->s, "deny") != 0 && strcmp(mode->s, "mask") != 0))
				return jw_fail(w, mode ? mode : it, "%s[%zu].mode: %s", dotted, i,
				    mode ? "expected \"deny\" or \"mask\"" : "required (\"deny\")");
			if (strcmp(mode->s, "mask") == 0)
				return jw_fail(w, mode, "%s[%zu].mode: %s", dotted, i, SBX_MASKING_WHY);
			args[0] = (char *)name->s;
			if (jw_apply(w, k, name, args, 1) < 0)
				return -1;
		}
		return 0;
	}
	case JK_IGNORED:
		note("%s:%d: %s is accepted and ignored: %s", w->file, v->line, dotted, k->why);
		return 0;
	case JK_UNSUPPORTED:
		return jw_fail(w, v, "%s: %s (remove the key; sbx refuses rather than run without it)", dotted, k->why);
	}
	return 0;
}

static int
jw_object(struct jwalk *w, const char *name, const struct jval *obj)
{
	size_t i, j;

	for (i = 0; i < obj->n; i++) {
		const struct jkey *k = NULL;
		const char *names[LEN(jkeys)];
		size_t nn = 0;

		for (j = 0; j < LEN(jkeys); j++) {
			if (strcmp(jkeys[j].parent, name) != 0)
				continue;
			names[nn++] = jkeys[j].key;
			if (strcmp(jkeys[j].key, obj->keys[i]) == 0)
				k = &jkeys[j];
		}
		if (!k) {
			const char *hint = closest_name(obj->keys[i], names, nn);

			w->e->file = w->file;
			w->e->line = obj->key_at[i]->line;
			w->e->col = obj->key_at[i]->col;
			snprintf(w->e->msg, sizeof(w->e->msg), "unknown key \"%s\"%s%s%s%s", obj->keys[i],
			    *name ? aprintf(" in %s", name) : "", hint ? " (did you mean \"" : "",
			    hint ? hint : "", hint ? "\"?)" : "");
			return -1;
		}
		if (jw_key(w, k, obj->items[i]) < 0)
			return -1;
	}
	return 0;
}

/* network.deniedDomainReasons, once the whole file is read: srt keys a
 * reason by the exact deniedDomains entry, wherever in the file either
 * is. A reason for an entry that is not in the list is a typo that would
 * silently lose the message, so it is an error here. The entries read so
 * far count (this file's, and those of a file that includes it, before
 * the include line); --deny-domain options are applied later, and do
 * not. Returns 0, or -1 with w->e filled. */
static int
jw_reasons(struct jwalk *w)
{
	const struct jval *reasons = w->reasons;
	size_t i, j;

	for (i = 0; i < reasons->n; i++) {
		const struct jval *r = reasons->items[i];
		bool found = false;

		if (r->t != J_STR || !*r->s)
			return jw_fail(w, r, "network.deniedDomainReasons[\"%s\"]: expected a non-empty string",
			    reasons->keys[i]);
		for (const unsigned char *q = (const unsigned char *)r->s; *q; q++)
			if (is_control(*q))
				return jw_fail(w, r, "network.deniedDomainReasons[\"%s\"]: control character in the reason",
				    reasons->keys[i]);
		if (strlen(r->s) > SBX_MAX_TEXT_ARG_BYTES)
			return jw_fail(w, r, "network.deniedDomainReasons[\"%s\"]: longer than %d bytes",
			    reasons->keys[i], SBX_MAX_TEXT_ARG_BYTES);
		for (j = 0; j < w->p->deny_domains.n; j++) {
			struct domrule *d = w->p->deny_domains.v[j];

			if (strcmp(d->pattern, reasons->keys[i]) == 0) {
				d->reason = r->s;
				found = true;
			}
		}
		if (!found)
			return err_set(w->e, w->file, reasons->key_at[i]->line, reasons->key_at[i]->col,
			    "network.deniedDomainReasons: \"%s\" is not an entry of network.deniedDomains",
			    reasons->keys[i]);
	}
	return 0;
}

/* Read an srt settings file into p: the JSON, then its keys as
 * directives, then the reasons. Returns 0, or -1 with e filled. */
static int
json_parse_policy(struct policy *p, struct pol_ctx *c, const char *text, size_t n, const char *file,
    struct err *e)
{
	struct jval *root;
	struct jwalk w = { p, c, file, e, NULL };

	if (json_parse(text, n, file, &root, e) < 0)
		return -1;
	if (root->t != J_OBJ)
		return jw_fail(&w, root, "the settings must be a JSON object");
	if (jw_object(&w, "", root) < 0)
		return -1;
	if (w.reasons && jw_reasons(&w) < 0)
		return -1;
	return 0;
}

/* After reading, from every source (the file, the default, the
 * --directive options): what only the whole policy shows. Directives that
 * weaken each other or do nothing here are said, one warning each (a
 * policy that silently does less than it reads is the worst kind of
 * policy bug). One conflict is refused where it is read instead
 * (pol_apply_port), so that a policy with two errors reports the first. */
static void
pol_validate(const struct policy *p, struct vec *warnings)
{
	if (p->allow_unix_sockets.n)
		vec_push(warnings, "allow-unix-socket is ignored on Linux (as srt does); allow-all-unix-sockets is "
		    "the Linux form");
	if (p->fs_disabled)
		vec_push(warnings, "disable-filesystem: no filesystem isolation; the command can read and write "
		    "whatever you can (sbx itself, your shell's startup files, git hooks); only the network and "
		    "deny-secret-file are confined");
	if (p->deny_env.n && p->weaker_nested_sandbox)
		vec_push(warnings, "deny-env with weaker-nested-sandbox: the command sees the host's /proc, where the "
		    "environment of your other processes (the shell that ran sbx) may be readable");
}

/* What the whole policy must hold, once every source is read (the file,
 * its includes, the --directive options; a control-fd line the same): the
 * MITM route is a socket and its hosts, each useless without the other
 * (srt: mitmProxy needs socketPath and domains, at least one). Refused
 * rather than warned: a route that silently is not there sends the hosts
 * the person meant for inspection straight out. Returns 0, or -1 with e
 * filled, at the directive given alone. */
static int
pol_check_whole(const struct policy *p, struct err *e)
{
	if (p->mitm_socket && !p->mitm_domains.n)
		return err_set(e, p->mitm_socket_at.file, p->mitm_socket_at.line, 0, "mitm-proxy %s: no mitm-proxy-domain "
		    "names a host to send through it (network.mitmProxy.domains needs at least one)", p->mitm_socket);
	if (!p->mitm_socket && p->mitm_domains.n)
		return err_set(e, p->mitm_domain_at.file, p->mitm_domain_at.line, 0, "mitm-proxy-domain %s: no mitm-proxy "
		    "names the socket to send it through", (const char *)p->mitm_domains.v[0]);
	return 0;
}

/* The directives that open a real hole in the macOS boundary, with the
 * warning srt's README gives for each: said by --check and by
 * --print=policy/json, where a person reviews a policy, so an opt-in is
 * never taken for a small convenience. */
static void
pol_weakenings(const struct policy *p, struct vec *warnings)
{
	static const struct { size_t off; const char *text; } weak[] = {
		{ offsetof(struct policy, weaker_network_isolation), "weaker-network-isolation (macOS): lets the command "
		  "reach com.apple.trustd.agent, which Go programs need to verify TLS certificates; srt's README calls it "
		  "a potential data exfiltration vector" },
		{ offsetof(struct policy, allow_apple_events), "allow-apple-events (macOS): the command can open and "
		  "script other applications (open, osascript), and they run outside the sandbox; this removes "
		  "code-execution isolation, not just weakens it" },
	};

	for (size_t i = 0; i < LEN(weak); i++)
		if (*(const bool *)((const char *)p + weak[i].off))
			vec_push(warnings, (void *)weak[i].text);
}

/* ---- 3.7 Printers: the effective policy in either format -----------
 * Reading either output back gives the same policy (a test checks). */

/* A line-format word: bare when safe, else double-quoted with \" and \\. */
static void
buf_put_word(struct buf *b, const char *s)
{
	const char *p;
	bool bare = *s && *s != '#' && *s != '"';

	for (p = s; *p && bare; p++)
		bare = !isspace((unsigned char)*p) && *p != '"' && *p != '\\';
	if (bare) {
		buf_puts(b, s);
		return;
	}
	buf_putc(b, '"');
	for (p = s; *p; p++) {
		if (*p == '"' || *p == '\\')
			buf_putc(b, '\\');
		buf_putc(b, *p);
	}
	buf_putc(b, '"');
}

static void
pol_print_lines(const struct policy *p, struct buf *b)
{
	size_t i, j;

	for (i = 0; i < LEN(directives); i++) {
		const struct directive *d = &directives[i];
		const struct vec *v = FIELD(p, d, const struct vec);

		switch (d->kind) {
		case DK_FLAG:
			if (*FIELD(p, d, const bool))
				buf_printf(b, "%s\n", d->name);
			break;
		case DK_PATH:
			for (j = 0; j < v->n; j++) {
				const struct pathrule *r = v->v[j];

				buf_printf(b, "%s %s", d->name, r->literal ? "literal " : "");
				buf_put_word(b, pathrule_spelling(r));
				buf_putc(b, '\n');
			}
			break;
		case DK_ALLOW_DOMAIN:
		case DK_ADDRESS:
		case DK_SOCKET:
		case DK_STRING:
		case DK_PORT:
		case DK_ENV:
		case DK_NAME:
		case DK_BYPASS:
		case DK_HEADER:
		case DK_MITM_DOMAIN:
			for (j = 0; j < v->n; j++) {
				buf_printf(b, "%s ", d->name);
				buf_put_word(b, v->v[j]);
				buf_putc(b, '\n');
			}
			break;
		case DK_DENY_DOMAIN:
			for (j = 0; j < v->n; j++) {
				const struct domrule *r = v->v[j];

				buf_printf(b, "%s ", d->name);
				buf_put_word(b, r->pattern);
				if (r->reason) {
					buf_putc(b, ' ');
					buf_put_word(b, r->reason);
				}
				buf_putc(b, '\n');
			}
			break;
		case DK_IGNORE:
			for (j = 0; j < v->n; j++) {
				const struct ignorerule *r = v->v[j];

				buf_printf(b, "%s ", d->name);
				buf_put_word(b, r->command);
				buf_putc(b, ' ');
				buf_put_word(b, r->line);
				buf_putc(b, '\n');
			}
			break;
		case DK_DEPTH:
			buf_printf(b, "%s %ld\n", d->name, *FIELD(p, d, const long));
			break;
		case DK_PORT1:
			if (*FIELD(p, d, const long))
				buf_printf(b, "%s %ld\n", d->name, *FIELD(p, d, const long));
			break;
		case DK_ONOFF:
			buf_printf(b, "%s %s\n", d->name, *FIELD(p, d, const long) ? "on" : "off");
			break;
		case DK_BRIDGE:
			buf_printf(b, "%s %s\n", d->name, *FIELD(p, d, const long) == BRIDGE_SOCAT ? "socat" : "fd");
			break;
		case DK_BINARY:
		case DK_PROXY_URL:
		case DK_CHOICE:
		case DK_UNIX_SOCKET:
			if (*FIELD(p, d, const char *const)) {
				buf_printf(b, "%s ", d->name);
				buf_put_word(b, *FIELD(p, d, const char *const));
				buf_putc(b, '\n');
			}
			break;
		case DK_INCLUDE:
			break;	/* included files are already part of the policy */
		}
	}
}

static void
buf_put_json_string(struct buf *b, const char *s)
{
	const unsigned char *p;

	buf_putc(b, '"');
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			buf_printf(b, "\\%c", *p);
		else if (*p < 0x20)
			buf_printf(b, "\\u%04x", *p);
		else
			buf_putc(b, (char)*p);
	}
	buf_putc(b, '"');
}

/* Print a JSON member list: members are added with jm_*() and commas placed between them. */
struct jout { struct buf *b; int depth; bool first[8]; };

static void
jo_key(struct jout *o, const char *key)
{
	if (!o->first[o->depth])
		buf_putc(o->b, ',');
	o->first[o->depth] = false;
	buf_printf(o->b, "\n%*s", 2 * (o->depth + 1), "");
	if (key) {
		buf_put_json_string(o->b, key);
		buf_puts(o->b, ": ");
	}
}

static void
jo_open(struct jout *o, const char *key, char bracket)
{
	jo_key(o, key);
	buf_putc(o->b, bracket);
	o->depth++;
	o->first[o->depth] = true;
}

static void
jo_close(struct jout *o, char bracket)
{
	bool empty = o->first[o->depth];

	o->depth--;
	if (!empty)
		buf_printf(o->b, "\n%*s", 2 * (o->depth + 1), "");
	buf_putc(o->b, bracket);
}

/* A list of ports ("5432" strings) as an array of numbers. */
static void
jo_ports(struct jout *o, const char *key, const struct vec *v)
{
	size_t i;

	jo_open(o, key, '[');
	for (i = 0; i < v->n; i++) {
		jo_key(o, NULL);
		buf_puts(o->b, v->v[i]);
	}
	jo_close(o, ']');
}

static void
jo_strings(struct jout *o, const char *key, const struct vec *v, bool paths)
{
	size_t i;

	jo_open(o, key, '[');
	for (i = 0; i < v->n; i++) {
		jo_key(o, NULL);
		if (paths) {
			const struct pathrule *r = v->v[i];

			if (r->literal) {
				buf_puts(o->b, "{ \"path\": ");
				buf_put_json_string(o->b, r->path);
				buf_puts(o->b, ", \"literal\": true }");
			} else {
				buf_put_json_string(o->b, pathrule_spelling(r));
			}
		} else {
			buf_put_json_string(o->b, v->v[i]);
		}
	}
	jo_close(o, ']');
}

static void
jo_bool(struct jout *o, const char *key, bool v)
{
	if (v) {
		jo_key(o, key);
		buf_puts(o->b, "true");
	}
}

static void
pol_print_json(const struct policy *p, struct buf *b)
{
	struct jout o = { b, 0, { true } };
	struct vec dd = { 0 };
	size_t i, j;

	buf_putc(b, '{');
	o.depth = 0;
	o.first[0] = true;
	jo_open(&o, "network", '{');
	jo_strings(&o, "allowedDomains", &p->allow_domains, false);
	for (i = 0; i < p->deny_domains.n; i++)
		vec_push(&dd, (void *)((struct domrule *)p->deny_domains.v[i])->pattern);
	jo_strings(&o, "deniedDomains", &dd, false);
	for (i = 0; i < p->deny_domains.n; i++)
		if (((struct domrule *)p->deny_domains.v[i])->reason)
			break;
	if (i < p->deny_domains.n) {
		jo_open(&o, "deniedDomainReasons", '{');
		for (i = 0; i < p->deny_domains.n; i++) {
			const struct domrule *r = p->deny_domains.v[i];

			if (r->reason) {
				jo_key(&o, r->pattern);
				buf_put_json_string(b, r->reason);
			}
		}
		jo_close(&o, '}');
	}
	if (p->deny_addresses.n)
		jo_strings(&o, "deniedResolvedAddresses", &p->deny_addresses, false);
	if (p->allow_unix_sockets.n)
		jo_strings(&o, "allowUnixSockets", &p->allow_unix_sockets, false);
	jo_bool(&o, "allowAllUnixSockets", p->allow_all_unix_sockets);
	jo_bool(&o, "allowLocalBinding", p->allow_local_binding);
	if (p->allow_mach_lookup.n)
		jo_strings(&o, "allowMachLookup", &p->allow_mach_lookup, false);
	if (p->parent_http || p->parent_https || p->parent_bypass.n) {
		jo_open(&o, "parentProxy", '{');
		if (p->parent_http) {
			jo_key(&o, "http");
			buf_put_json_string(b, p->parent_http);
		}
		if (p->parent_https) {
			jo_key(&o, "https");
			buf_put_json_string(b, p->parent_https);
		}
		if (p->parent_bypass.n) {
			struct buf csv = { 0 };

			for (size_t k = 0; k < p->parent_bypass.n; k++)
				buf_printf(&csv, "%s%s", k ? "," : "", (const char *)p->parent_bypass.v[k]);
			buf_putc(&csv, '\0');
			jo_key(&o, "noProxy");
			buf_put_json_string(b, csv.p);
			free(csv.p);
		}
		jo_close(&o, '}');
	}
	if (p->mitm_socket || p->mitm_domains.n) {
		jo_open(&o, "mitmProxy", '{');
		if (p->mitm_socket) {
			jo_key(&o, "socketPath");
			buf_put_json_string(b, p->mitm_socket);
		}
		jo_strings(&o, "domains", &p->mitm_domains, false);
		jo_close(&o, '}');
	}
	if (p->http_proxy_port) {
		jo_key(&o, "httpProxyPort");
		buf_printf(b, "%ld", p->http_proxy_port);
	}
	if (p->socks_proxy_port) {
		jo_key(&o, "socksProxyPort");
		buf_printf(b, "%ld", p->socks_proxy_port);
	}
	if (p->refuse_opaque_tunnels)
		jo_bool(&o, "refuseOpaqueTunnels", true);
	if (p->require_host_match)
		jo_bool(&o, "requireHostMatch", true);
	if (p->strip_response_headers.n)
		jo_strings(&o, "stripResponseHeaders", &p->strip_response_headers, false);
	if (p->ambiguous_request_target) {
		jo_key(&o, "ambiguousRequestTarget");
		buf_put_json_string(b, p->ambiguous_request_target);
	}
	if (p->allow_plaintext_header_set)
		jo_bool(&o, "allowPlaintextHeaderSet", true);
	jo_close(&o, '}');

	jo_open(&o, "filesystem", '{');
	jo_strings(&o, "denyRead", &p->paths[PL_DENY_READ], true);
	jo_strings(&o, "allowRead", &p->paths[PL_ALLOW_READ], true);
	jo_strings(&o, "allowWrite", &p->paths[PL_ALLOW_WRITE], true);
	jo_strings(&o, "denyWrite", &p->paths[PL_DENY_WRITE], true);
	jo_bool(&o, "allowGitConfig", p->allow_git_config);
	jo_bool(&o, "disabled", p->fs_disabled);
	jo_close(&o, '}');

	/* srt's credentials block, deny mode: srt reads it too (a "*" in a
	 * name is sbx's; srt refuses such a file rather than drop the deny) */
	if (p->paths[PL_DENY_SECRET].n || p->deny_env.n) {
		static const struct { const char *key, *id; } cred_lists[] = { { "files", "path" }, { "envVars", "name" } };

		jo_open(&o, "credentials", '{');
		for (i = 0; i < LEN(cred_lists); i++) {
			const struct vec *v = i == 0 ? &p->paths[PL_DENY_SECRET] : &p->deny_env;

			if (!v->n)
				continue;
			jo_open(&o, cred_lists[i].key, '[');
			for (j = 0; j < v->n; j++) {
				jo_key(&o, NULL);
				buf_printf(b, "{ \"%s\": ", cred_lists[i].id);
				buf_put_json_string(b, i == 0 ? pathrule_spelling(v->v[j]) : v->v[j]);
				buf_puts(b, ", \"mode\": \"deny\" }");
			}
			jo_close(&o, ']');
		}
		jo_close(&o, '}');
	}
	if (p->ignores.n) {
		jo_open(&o, "ignoreViolations", '{');
		for (i = 0; i < p->ignores.n; i++) {
			const struct ignorerule *r = p->ignores.v[i];

			for (j = 0; j < i; j++)	/* one key per command, in first-seen order */
				if (strcmp(((struct ignorerule *)p->ignores.v[j])->command, r->command) == 0)
					break;
			if (j < i)
				continue;
			jo_open(&o, r->command, '[');
			for (j = i; j < p->ignores.n; j++) {
				const struct ignorerule *s = p->ignores.v[j];

				if (strcmp(s->command, r->command) == 0) {
					jo_key(&o, NULL);
					buf_put_json_string(b, s->line);
				}
			}
			jo_close(&o, ']');
		}
		jo_close(&o, '}');
	}
	if (p->git_safe_dirs.n) {
		jo_open(&o, "git", '{');
		jo_strings(&o, "safeDirectories", &p->git_safe_dirs, false);
		jo_close(&o, '}');
	}
	jo_bool(&o, "enableWeakerNestedSandbox", p->weaker_nested_sandbox);
	jo_bool(&o, "allowNestedUserNamespaces", p->allow_nested_userns);
	jo_bool(&o, "enableWeakerNetworkIsolation", p->weaker_network_isolation);
	jo_bool(&o, "allowAppleEvents", p->allow_apple_events);
	jo_bool(&o, "allowPty", p->allow_pty);
	jo_key(&o, "mandatoryDenySearchDepth");
	buf_printf(b, "%ld", p->mandatory_deny_depth);
	if (p->bwrap_path) {
		jo_key(&o, "bwrapPath");
		buf_put_json_string(b, p->bwrap_path);
	}
	if (p->socat_path) {
		jo_key(&o, "socatPath");
		buf_put_json_string(b, p->socat_path);
	}
	/* sbx's own settings live under "sbx", a key srt strips, so srt still reads the file */
	jo_open(&o, "sbx", '{');
	jo_key(&o, "bridge");
	buf_puts(b, p->bridge == BRIDGE_SOCAT ? "\"socat\"" : "\"fd\"");
	jo_key(&o, "observeWrites");
	buf_puts(b, p->observe_writes ? "true" : "false");
	jo_key(&o, "networkDns");
	buf_puts(b, p->network_dns ? "true" : "false");
	jo_key(&o, "networkCapture");
	buf_puts(b, p->network_capture ? "true" : "false");
	if (p->host_ports.n)
		jo_ports(&o, "allowHostPorts", &p->host_ports);
	if (p->expose_ports.n)
		jo_ports(&o, "exposePorts", &p->expose_ports);
	if (p->protected_names.n)
		jo_strings(&o, "protectedFiles", &p->protected_names, false);
	jo_close(&o, '}');
	buf_puts(b, "\n}\n");
}

/* ---- 3.8 Git's configuration format: a small reader (pure) ----------
 * sbx reads what git would read (git-config(1), "CONFIGURATION FILE") to
 * learn which paths a repository would execute or read configuration from,
 * without running git: running the repository's git is exactly what would
 * run its core.fsmonitor. The grammar follows git's config.c: sections
 * "[name]", "[name \"sub\"]" (the subsection keeps its case, \ escapes any
 * byte) and the old "[name.sub]" (all lower case); keys are letters, digits
 * and "-", case-insensitive, a key without "=" is boolean true; values trim
 * outside quotes, keep runs of inner blanks as spaces, take \n \t \b \\ \"
 * and a backslash-newline continuation; # and ; start comments outside
 * quotes. SECURITY: the input may be hostile (a repository made inside a
 * sandbox), so it is bounded (size, entries) and refused as a whole where
 * git would refuse it or where the two readers could disagree (a NUL byte):
 * a caller then treats the whole file as suspect, never half of it. */

#define SBX_MAX_GITCFG_BYTES	(1 << 20)	/* git's own configs are a few KiB */
#define SBX_MAX_GITCFG_ENTRIES	10000		/* over all the files of one read */
#define SBX_MAX_GITCFG_DEPTH	10		/* git's MAX_INCLUDE_DEPTH */

struct gitcfg_entry {
	const char *section;	/* lower case */
	const char *sub;	/* as written, or NULL */
	const char *key;	/* lower case */
	const char *value;	/* NULL: written without "=" (boolean true) */
	const char *file;	/* borrowed */
	int line;
};

struct gitcfg_src { const char *p, *end; int line; bool eof; };

/* git's get_next_char: "\r\n" reads as "\n"; the end reads as "\n" once more. */
static int
gitcfg_getc(struct gitcfg_src *s)
{
	int c;

	if (s->p >= s->end) {
		s->eof = true;
		return '\n';
	}
	c = (unsigned char)*s->p++;
	if (c == '\r' && s->p < s->end && *s->p == '\n')
		c = (unsigned char)*s->p++;
	if (c == '\n')
		s->line++;
	return c;
}

static bool
gitcfg_keychar(int c)
{
	return isalnum(c) || c == '-';
}

/* The value after "=", up to the end of its (logical) line; NULL on an error. */
static const char *
gitcfg_value(struct gitcfg_src *s)
{
	static struct buf b;	/* scratch (buf_reset): the value goes to the arena */
	int quote = 0, comment = 0, space = 0;

	buf_reset(&b);

	for (;;) {
		int c = gitcfg_getc(s);

		if (c == '\n') {
			if (quote)
				goto bad;
			break;
		}
		if (comment)
			continue;
		if (isspace(c) && !quote) {
			if (b.n)
				space++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = 1;
			continue;
		}
		for (; space; space--)
			buf_putc(&b, ' ');
		if (c == '\\') {
			c = gitcfg_getc(s);
			switch (c) {
			case '\n': continue;	/* continuation: the value goes on */
			case 't': c = '\t'; break;
			case 'b': c = '\b'; break;
			case 'n': c = '\n'; break;
			case '\\': case '"': break;
			default: goto bad;	/* git: "bad config line" */
			}
			buf_putc(&b, (char)c);
			continue;
		}
		if (c == '"') {
			quote = 1 - quote;
			continue;
		}
		buf_putc(&b, (char)c);
	}
	return astrdup(b.p ? b.p : "");
bad:
	return NULL;
}

/* Parse one file's text into entries (appended to out). Returns 0; 1
 * where git would stop ("bad config line"), with *line the first such
 * line; or -1, *line set, where this reader cannot stand for git's (a NUL
 * byte, past which the two could disagree; more entries than
 * SBX_MAX_GITCFG_ENTRIES). With resync, a bad line is skipped and the
 * reading goes on at the next: git reads none of the file, but the rest
 * is what it will run the day the line is fixed, so a caller protecting
 * what a config names learns as much of it as can be read. */
static int
gitcfg_scan(const char *text, size_t n, const char *file, struct vec *out, int *line, bool resync)
{
	struct gitcfg_src s = { text, text + n, 1, false };
	const char *section = NULL, *sub = NULL;
	int comment = 0, bad_line = 0;

	*line = 1;
	if (memchr(text, '\0', n))
		return -1;	/* git's reader and this one could disagree past a NUL */
	if (n >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		s.p += 3;	/* a UTF-8 byte-order mark, which git skips */
	for (;;) {
		int c = gitcfg_getc(&s);

		if (c == '\n') {
			if (s.eof)
				break;
			comment = 0;
			continue;
		}
		if (comment || isspace(c))
			continue;
		if (c == '#' || c == ';') {
			comment = 1;
			continue;
		}
		if (c == '[') {
			static struct buf name, sb;	/* scratch (buf_reset): copied to the arena */
			bool have_sub = false;
			char *dot;

			buf_reset(&name);
			buf_reset(&sb);

			for (;;) {
				c = gitcfg_getc(&s);
				if (s.eof || c == '\n')
					goto bad;
				if (c == ']')
					break;
				if (isspace(c)) {
					while (isspace(c = gitcfg_getc(&s)) && c != '\n')
						;
					if (c != '"')
						goto bad;
					for (;;) {
						c = gitcfg_getc(&s);
						if (c == '\n')
							goto bad;
						if (c == '"')
							break;
						if (c == '\\' && (c = gitcfg_getc(&s)) == '\n')
							goto bad;
						buf_putc(&sb, (char)c);
					}
					if (gitcfg_getc(&s) != ']')
						goto bad;
					have_sub = true;
					break;
				}
				if (!gitcfg_keychar(c) && c != '.')
					goto bad;
				buf_putc(&name, (char)tolower(c));
			}
			if (!name.n)
				goto bad;
			section = astrdup(name.p);
			sub = have_sub ? astrdup(sb.p ? sb.p : "") : NULL;
			if (!have_sub && (dot = strchr(section, '.'))) {	/* [section.sub] */
				*dot = '\0';
				sub = dot + 1;
			}
			if (!*section)	/* git takes "[.x]" as a section named "": refused, not guessed */
				goto bad;
			continue;
		}
		if (!isalpha(c) || !section)
			goto bad;	/* git: a key must start with a letter and follow a section */
		{
			static struct buf key;	/* scratch (buf_reset) */
			struct gitcfg_entry *en;
			int at = s.line;

			buf_reset(&key);

			do {
				buf_putc(&key, (char)tolower(c));
				c = gitcfg_getc(&s);
			} while (!s.eof && gitcfg_keychar(c));
			while (c == ' ' || c == '\t')
				c = gitcfg_getc(&s);
			en = amalloc(sizeof(*en));
			en->section = section;
			en->sub = sub;
			en->key = astrdup(key.p);
			en->file = file;
			en->line = at;
			if (c != '\n') {
				if (c != '=' || !(en->value = gitcfg_value(&s)))
					goto bad;
			}
			if (out->n >= SBX_MAX_GITCFG_ENTRIES) {
				*line = at;
				return -1;
			}
			vec_push(out, en);
			if (s.eof)
				break;
		}
		continue;
bad:
		if (!bad_line)
			bad_line = s.line - (s.p > text && s.p[-1] == '\n');	/* the line git names */
		if (!resync)
			break;
		while (!(s.p > text && s.p[-1] == '\n') && !s.eof)
			gitcfg_getc(&s);	/* to the start of the next line */
		if (s.eof)
			break;
		comment = 0;
	}
	if (bad_line)
		*line = bad_line;
	return bad_line ? 1 : 0;
}

/* The strict reading: a file git would stop at, or this reader could
 * misread, is refused whole (0 or -1, *line where). */
static int
gitcfg_parse(const char *text, size_t n, const char *file, struct vec *out, int *line)
{
	return gitcfg_scan(text, n, file, out, line, false) != 0 ? -1 : 0;
}

/* Does entry e name section.[sub.]key? sub: NULL any, "" none, "*" any but none. */
static bool
gitcfg_is(const struct gitcfg_entry *e, const char *section, const char *sub, const char *key)
{
	if (strcmp(e->section, section) != 0 || (strcmp(key, "*") != 0 && strcmp(e->key, key) != 0))
		return false;
	if (!sub)
		return true;
	if (!*sub)
		return e->sub == NULL;
	return e->sub != NULL && (strcmp(sub, "*") == 0 || strcmp(e->sub, sub) == 0);
}

/* A pathname value as git expands it (git-config(1), "pathname"): "~/" is
 * $HOME, a relative one is relative to base. NULL when it cannot be placed
 * ("~user", or no $HOME). */
static const char *
gitcfg_path(const char *value, const char *base, const char *home)
{
	if (!value || !*value)
		return NULL;
	if (value[0] == '~') {
		if (!home || (value[1] && value[1] != '/'))
			return NULL;
		return path_clean(aprintf("%s%s", home, value + 1));
	}
	if (value[0] == '/')
		return path_clean(value);
	return base ? path_clean(path_join(base, value)) : NULL;
}

/* ---- 3.9 A policy update: what changed, and what a running sandbox takes
 *
 * A line on the control fd (9d) is a whole new policy. Only the network
 * lists can change under a running command: the proxy decides each new
 * connection, so its allow list, deny list (reasons too) and denied
 * address ranges are swapped in live (6c, 7.6). Everything else is
 * already built into the sandbox (mounts, filters, the environment, the
 * listeners) and cannot follow: each such key that differs is named, so
 * nobody takes a warning-free update for an applied one. The routes (the
 * parent proxy, the MITM proxy's socket and its hosts) are the run's too:
 * the proxy was forked with them and sbx dials the socket it was given, so
 * a line that moves hosts onto or off the MITM route is named, not taken
 * (a host half-moved between two proxies is worse than none moved). Pure. */

static bool
str_eq_or_null(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Does directive d's field hold the same in a and b? */
static bool
pol_field_equal(const struct policy *a, const struct policy *b, const struct directive *d)
{
	const struct vec *va = FIELD(a, d, const struct vec), *vb = FIELD(b, d, const struct vec);

	switch (d->kind) {
	case DK_FLAG:
		return *FIELD(a, d, const bool) == *FIELD(b, d, const bool);
	case DK_DEPTH:
	case DK_ONOFF:
	case DK_BRIDGE:
	case DK_PORT1:
		return *FIELD(a, d, const long) == *FIELD(b, d, const long);
	case DK_BINARY:
	case DK_PROXY_URL:
	case DK_CHOICE:
	case DK_UNIX_SOCKET:
		return str_eq_or_null(*FIELD(a, d, const char *const), *FIELD(b, d, const char *const));
	case DK_INCLUDE:
		return true;	/* no field of its own: what it read is in the others */
	case DK_PATH:		/* the lists, compared below; no default: a new kind must say which it is */
	case DK_ALLOW_DOMAIN:
	case DK_DENY_DOMAIN:
	case DK_ADDRESS:
	case DK_SOCKET:
	case DK_STRING:
	case DK_IGNORE:
	case DK_PORT:
	case DK_ENV:
	case DK_NAME:
	case DK_BYPASS:
	case DK_HEADER:
	case DK_MITM_DOMAIN:
		break;
	}
	if (va->n != vb->n)
		return false;
	for (size_t i = 0; i < va->n; i++) {
		bool same;

		if (d->kind == DK_PATH) {
			const struct pathrule *x = va->v[i], *y = vb->v[i];

			same = strcmp(x->path, y->path) == 0 && x->literal == y->literal && x->dir_form == y->dir_form;
		} else if (d->kind == DK_DENY_DOMAIN) {
			const struct domrule *x = va->v[i], *y = vb->v[i];

			same = strcmp(x->pattern, y->pattern) == 0 && str_eq_or_null(x->reason, y->reason);
		} else if (d->kind == DK_IGNORE) {
			const struct ignorerule *x = va->v[i], *y = vb->v[i];

			same = strcmp(x->command, y->command) == 0 && strcmp(x->line, y->line) == 0;
		} else {
			same = strcmp(va->v[i], vb->v[i]) == 0;
		}
		if (!same)
			return false;
	}
	return true;
}

/* Can a running sandbox take a change of d? The network lists only. */
static bool
directive_is_live(const struct directive *d)
{
	return d->kind == DK_ALLOW_DOMAIN || d->kind == DK_DENY_DOMAIN || d->kind == DK_ADDRESS;
}

/* The directives whose values differ between the running policy and an
 * update, into live (applied) and fixed (not), in table order. */
static void
pol_changes(const struct policy *running, const struct policy *update, struct vec *live, struct vec *fixed)
{
	for (size_t i = 0; i < LEN(directives); i++)
		if (!pol_field_equal(running, update, &directives[i]))
			vec_push(directive_is_live(&directives[i]) ? live : fixed, (void *)&directives[i]);
}

/* ====================================================================
 * 4. MATCHING: domain patterns, addresses, globs
 * ==================================================================== */

/* ---- 4.1 Domain patterns (srt 0.0.81 domain-pattern.js) ------------ */

static bool
is_ipv6_literal(const char *s)
{
	struct in6_addr a;

	return inet_pton(AF_INET6, s, &a) == 1;
}

/* srt's isValidDomainPattern on the host part. */
static bool
host_pattern_valid(const char *h, bool deny_list)
{
	const char *p;
	size_t n = strlen(h);

	if (deny_list && strcmp(h, "*") == 0)
		return true;
	if (is_ipv6_literal(h))
		return true;
	if (strstr(h, "://") || strchr(h, '/') || strchr(h, ':'))
		return false;
	if (strcmp(h, "localhost") == 0)
		return true;
	if (strncmp(h, "*.", 2) == 0) {
		const char *rest = h + 2;
		size_t rn = strlen(rest);

		if (!strchr(rest, '.') || rest[0] == '.' || rest[rn - 1] == '.' || strstr(rest, "..") ||
		    strchr(rest, '*'))
			return false;
		return true;
	}
	if (strchr(h, '*'))
		return false;
	if (!strchr(h, '.') || h[0] == '.' || h[n - 1] == '.')
		return false;
	for (p = h; *p; p++)	/* srt checks names at match time; refusing now is kinder */
		if (!isalnum((unsigned char)*p) && !strchr("._-", *p))
			return false;
	return true;
}

/* Check a domain pattern as srt does: an optional ":port" (1-65535, no
 * leading zero), bracketed IPv6, "*.x.y" wildcards that never match the
 * apex, and no patterns as broad as "*" or "*.com" (deny lists may say "*").
 * Returns 0, or -1 with *why set. */
static int
match_check_pattern(const char *pat, bool deny_list, const char **why)
{
	char host[300];
	const char *colon, *port = NULL;
	size_t colons = 0;
	const char *p;

	*why = deny_list
	    ? "invalid domain pattern: must be a domain (example.com), a wildcard (*.example.com), a bracketed "
	      "IPv6 literal ([::1]) or \"*\" (deny all), with an optional :port (1-65535)"
	    : "invalid domain pattern: must be a domain (example.com), a wildcard (*.example.com) or a bracketed "
	      "IPv6 literal ([::1], [2001:db8::1]:443), with an optional :port (1-65535); patterns as broad as "
	      "\"*.com\" or \"*\" are refused";
	if (strlen(pat) >= sizeof(host) || !*pat)
		return -1;
	for (p = pat; *p; p++)
		colons += *p == ':';
	if (colons >= 2 && pat[0] != '[')	/* srt: hasValidIpv6Bracketing */
		return -1;
	if (pat[0] == '[') {
		const char *close = strchr(pat, ']');
		size_t hn;

		if (!close)
			return -1;
		hn = (size_t)(close - pat - 1);
		memcpy(host, pat + 1, hn);
		host[hn] = '\0';
		if (strchr(host, '%'))
			*strchr(host, '%') = '\0';	/* zone dropped, as srt */
		if (!is_ipv6_literal(host))
			return -1;
		if (close[1] == '\0')
			return 0;
		if (close[1] != ':')
			return -1;
		port = close + 2;
	} else {
		colon = strchr(pat, ':');
		if (colon) {
			memcpy(host, pat, (size_t)(colon - pat));
			host[colon - pat] = '\0';
			port = colon + 1;
		} else {
			strcpy(host, pat);
		}
		if (!host_pattern_valid(host, deny_list))
			return -1;
		{
			/* a host that ends in a number is IPv4 to the WHATWG parser
			 * requests go through (4.4): write it as a.b.c.d, or it would
			 * match nothing (127.1 never equals the canonical 127.0.0.1) */
			uint32_t v4;
			int r4 = ipv4_whatwg(host, &v4);
			char dotted[32];

			if (r4 < 0)
				return -1;
			snprintf(dotted, sizeof(dotted), "%u.%u.%u.%u", v4 >> 24, (v4 >> 16) & 255, (v4 >> 8) & 255, v4 & 255);
			if (r4 == 1 && strcmp(dotted, host) != 0) {
				*why = "an IPv4 address in a pattern must be written a.b.c.d (it is matched after canonicalisation)";
				return -1;
			}
		}
	}
	if (port) {
		long v;
		const char *pw;

		if (port[0] < '1' || port[0] > '9' || strlen(port) > 5 || parse_int(port, 1, 65535, &v, &pw) < 0)
			return -1;
	}
	return 0;
}

/* ---- 4.2 Addresses --------------------------------------------- */

/* Parse "a.b.c.d", "a.b.c.d/n", "v6" or "v6/n" (unbracketed). Returns 0 or -1. */
static int
match_parse_cidr(const char *s, int *family, unsigned char addr[16], int *prefix)
{
	char tmp[64];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	long v;
	const char *why;

	if (n == 0 || n >= sizeof(tmp))
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (inet_pton(AF_INET, tmp, addr) == 1)
		*family = AF_INET, *prefix = 32;
	else if (inet_pton(AF_INET6, tmp, addr) == 1)
		*family = AF_INET6, *prefix = 128;
	else
		return -1;
	if (slash) {
		if (!isdigit((unsigned char)slash[1]) || (slash[1] == '0' && slash[2]) ||
		    parse_int(slash + 1, 0, *prefix, &v, &why) < 0)
			return -1;
		*prefix = (int)v;
	}
	return 0;
}

/* ---- 4.3 Globs: *, ?, [...] and ** ---------------------------------
 * srt's matching (globToRegex): "*" and "?" never cross a "/"; "**" followed
 * by "/" matches any number of components (zero included); any other "**"
 * matches any run, "/" included ("a**.pem" is a.pem, ab.pem and a/x/b.pem);
 * "[...]" is a class with ranges and "!" or "^" for negation, never "/".
 * Dot files are matched like any other name: for a deny, matching more is
 * the safe side. A trailing slash-star-star is no glob: the policy reads it
 * as the directory form (3.3, 5c). */

static bool
glob_class(const char **pp, char c)
{
	const char *p = *pp + 1;
	bool neg = false, hit = false;

	if (*p == '!' || *p == '^')
		neg = true, p++;
	if (*p == ']') {	/* a leading ] is literal */
		hit = c == ']';
		p++;
	}
	while (*p && *p != ']') {
		if (p[1] == '-' && p[2] && p[2] != ']') {
			hit |= c >= p[0] && c <= p[2];
			p += 3;
		} else {
			hit |= c == *p;
			p++;
		}
	}
	if (*p != ']')
		return false;	/* unterminated: matches nothing */
	*pp = p + 1;
	return hit != neg;
}

/* Match one path component against one pattern component (no '/'). */
static bool
glob_match_component(const char *pat, const char *s)
{
	while (*pat) {
		if (*pat == '*') {
			while (*pat == '*')
				pat++;
			if (!*pat)
				return true;
			for (; *s; s++)
				if (glob_match_component(pat, s))
					return true;
			return false;
		}
		if (!*s)
			return false;
		if (*pat == '?') {
			pat++, s++;
		} else if (*pat == '[') {
			if (!glob_class(&pat, *s))
				return false;
			s++;
		} else {
			if (*pat != *s)
				return false;
			pat++, s++;
		}
	}
	return *s == '\0';
}

/* Match a relative path (several components) against a pattern in which a
 * "**" is not a whole component, as srt's regular expression does: a run
 * of stars reads as globToRegex rewrites it, "**" then "/" first (zero or
 * more directories), then "**" (any run) and a last "*" (any run but "/"). */
static bool
glob_match_path(const char *p, const char *s)
{
	for (;;) {
		if (*p == '*') {
			size_t k = strspn(p, "*");
			bool dirs = p[k] == '/' && k >= 2;	/* "**" "/": (.* "/")? */
			size_t left = k - (dirs ? 2 : 0);	/* 0; 1: [^/]*; 2 and more: .* */
			const char *rest = p + k + dirs;

			for (const char *t = s;; t++) {
				if (dirs) {
					if (glob_match_path(rest, t))
						return true;
					for (const char *u = t; *u; u++)
						if (*u == '/' && glob_match_path(rest, u + 1))
							return true;
				} else if (glob_match_path(rest, t)) {
					return true;
				}
				if (!*t || left == 0 || (left == 1 && *t == '/'))
					return false;
			}
		}
		if (!*p)
			return !*s;
		if (!*s || (*s == '/' && *p != '/'))
			return false;
		if (*p == '?') {
			p++;
		} else if (*p == '[') {
			if (!glob_class(&p, *s))
				return false;
		} else if (*p++ != *s) {
			return false;
		}
		s++;
	}
}

/* Match an environment variable name (n bytes: the part of "NAME=VALUE"
 * before the '=') against a deny-env pattern, in which "*" matches any run
 * and every other byte itself, case and all (names are case-sensitive).
 * Greedy with one backtrack point: never exponential in the stars. */
static bool
env_match(const char *pat, const char *name, size_t n)
{
	const char *star = NULL;
	size_t i = 0, star_i = 0;

	while (i < n) {
		if (*pat == '*') {
			star = ++pat;
			star_i = i;
		} else if (*pat && *pat == name[i]) {
			pat++;
			i++;
		} else if (star) {
			pat = star;
			i = ++star_i;
		} else {
			return false;
		}
	}
	while (*pat == '*')
		pat++;
	return *pat == '\0';
}

/* ---- 4.4 Hosts: validity and the canonical form (srt 5.2, 1.4) -------
 * A request names a host in many spellings; the decision must see one.
 * srt canonicalises with the WHATWG URL host parser; these are its rules
 * for the forms a proxy meets: lowercase, one trailing dot dropped,
 * brackets dropped, IPv4 written as numbers in any WHATWG form (127.1,
 * 2130706433, 0x7f.0.0.1, 0177.0.0.1) made dotted-decimal, IPv6
 * compressed, and an IPv4-mapped IPv6 address made IPv4. */

/* srt's isValidHost: non-empty, at most 255 bytes, no '%', and an IP
 * literal or only [A-Za-z0-9._-]. */
static bool
match_host_valid(const char *h)
{
	size_t n = strlen(h);
	const char *p;
	char tmp[SBX_MAX_HOST_BYTES + 1];

	if (n == 0 || n > SBX_MAX_HOST_BYTES || strchr(h, '%'))
		return false;
	str_copy(tmp, h, sizeof(tmp));
	if (tmp[0] == '[' && tmp[n - 1] == ']') {	/* [v6] */
		tmp[n - 1] = '\0';
		return is_ipv6_literal(tmp + 1);
	}
	if (is_ipv6_literal(tmp))
		return true;
	for (p = h; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._-", *p))
			return false;
	return true;
}

/* One WHATWG IPv4 number: decimal, 0x hex or 0-prefixed octal. Returns 0
 * with *v set, or -1 if the label is not a number of that form. */
static int
ipv4_number(const char *s, size_t n, uint64_t *v)
{
	unsigned base = 10;
	size_t i;

	if (n == 0)
		return -1;
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2, n -= 2;
	else if (n >= 2 && s[0] == '0')
		base = 8, s++, n--;
	*v = 0;
	for (i = 0; i < n; i++) {
		int d = isdigit((unsigned char)s[i]) ? s[i] - '0'
		    : isxdigit((unsigned char)s[i]) ? tolower((unsigned char)s[i]) - 'a' + 10 : 99;

		if (d >= (int)base)
			return -1;
		*v = *v * base + (unsigned)d;
		if (*v > 0xffffffffULL)
			*v = 0x100000000ULL;	/* too big; stays too big */
	}
	return 0;
}

/* WHATWG "ends in a number": then the host must parse as IPv4. Returns 1
 * with out set, 0 if it is a name, -1 if it is a malformed number. */
static int
ipv4_whatwg(const char *h, uint32_t *out)
{
	const char *parts[5], *last;
	size_t lens[5], n = 0, i;
	const char *p = h;
	uint64_t v, acc = 0;

	while (n < 5) {
		const char *dot = strchr(p, '.');

		parts[n] = p;
		lens[n] = dot ? (size_t)(dot - p) : strlen(p);
		n++;
		if (!dot)
			break;
		p = dot + 1;
	}
	if (n == 5)
		return strspn(h, "0123456789.xX") == strlen(h) ? -1 : 0;
	if (n > 1 && lens[n - 1] == 0)
		n--;	/* a trailing dot */
	last = parts[n - 1];
	if (ipv4_number(last, lens[n - 1], &v) < 0)
		return 0;	/* the last label is not a number: a name */
	for (i = 0; i < n; i++) {
		if (ipv4_number(parts[i], lens[i], &v) < 0)
			return -1;
		if (i < n - 1) {
			if (v > 255)
				return -1;
			acc |= v << (8 * (3 - i));
		} else {
			if (v >= (1ULL << (8 * (5 - n))))
				return -1;
			acc |= v;
		}
	}
	*out = (uint32_t)acc;
	return 1;
}

/* Write the canonical form of host into out (at least 256 bytes). Returns
 * 0, or -1 when the host is malformed. */
static int
match_canonical_host(const char *host, char *out, size_t n)
{
	char h[SBX_MAX_HOST_BYTES + 2];
	size_t len = strlen(host), i;
	struct in6_addr a6;
	uint32_t v4;
	int r;

	if (!len || len > SBX_MAX_HOST_BYTES)
		return -1;
	str_copy(h, host, sizeof(h));
	if (h[0] == '[') {
		if (h[len - 1] != ']')
			return -1;
		h[len - 1] = '\0';
		memmove(h, h + 1, len - 1);
		if (inet_pton(AF_INET6, h, &a6) != 1)
			return -1;
	} else if (strchr(h, ':')) {
		if (inet_pton(AF_INET6, h, &a6) != 1)
			return -1;
	} else {
		for (i = 0; h[i]; i++)
			h[i] = (char)tolower((unsigned char)h[i]);
		len = strlen(h);
		if (len > 1 && h[len - 1] == '.')
			h[--len] = '\0';
		if (!len || h[0] == '.')
			return -1;
		r = ipv4_whatwg(h, &v4);
		if (r < 0)
			return -1;
		if (r == 1)
			snprintf(out, n, "%u.%u.%u.%u", v4 >> 24, (v4 >> 16) & 255, (v4 >> 8) & 255, v4 & 255);
		else
			str_copy(out, h, n);
		return 0;
	}
	/* IPv6: an IPv4-mapped address is its IPv4 address */
	if (IN6_IS_ADDR_V4MAPPED(&a6)) {
		snprintf(out, n, "%u.%u.%u.%u", a6.s6_addr[12], a6.s6_addr[13], a6.s6_addr[14], a6.s6_addr[15]);
		return 0;
	}
	return inet_ntop(AF_INET6, &a6, out, (socklen_t)n) ? 0 : -1;
}

/* ---- 4.5 Domain patterns: matching (srt matchesDomainPatternWithPort) --
 * A pattern is "host" or "host:port"; "*.base" matches names below base
 * but never base itself nor an IP literal; "*" (deny lists) matches any
 * host. The request host must already be canonical. */

static bool
host_is_ip(const char *h)
{
	struct in_addr a4;

	return inet_pton(AF_INET, h, &a4) == 1 || is_ipv6_literal(h);
}

/* Split a checked pattern into its host (lowercased; a bracketed IPv6
 * canonicalised) and port (0 = any). */
static void
pattern_split(const char *pat, char *host, size_t n, int *port)
{
	const char *colon;

	*port = 0;
	if (pat[0] == '[') {
		const char *close = strchr(pat, ']');
		char v6[128];
		struct in6_addr a;

		snprintf(v6, sizeof(v6), "%.*s", (int)(close - pat - 1), pat + 1);
		if (strchr(v6, '%'))
			*strchr(v6, '%') = '\0';
		if (inet_pton(AF_INET6, v6, &a) == 1)
			match_canonical_host(v6, host, n);
		else
			str_copy(host, v6, n);
		if (close[1] == ':')
			*port = atoi(close + 2);
		return;
	}
	colon = strchr(pat, ':');
	snprintf(host, n, "%.*s", (int)(colon ? colon - pat : (ptrdiff_t)strlen(pat)), pat);
	for (char *p = host; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (colon)
		*port = atoi(colon + 1);
}

static bool
match_domain(const char *host, int port, const char *pattern)
{
	char ph[300];
	int pport;
	size_t hn, bn;

	pattern_split(pattern, ph, sizeof(ph), &pport);
	if (pport && pport != port)
		return false;
	if (strcmp(ph, "*") == 0)
		return true;
	if (strncmp(ph, "*.", 2) == 0) {
		hn = strlen(host);
		bn = strlen(ph + 1);	/* ".base" */
		return !host_is_ip(host) && hn > bn && strcmp(host + hn - bn, ph + 1) == 0;
	}
	return strcmp(host, ph) == 0;
}

/* The decision, in srt's order (5.2): a malformed host is denied; then the
 * deny list (with its reason); then the allow list; otherwise denied. The
 * reason is what the command is told. Pure. */
struct net_verdict { bool allow; const char *reason; };

/* The deny rule that refuses canon at port (-1: only a rule without a
 * port matches), as its reason; NULL when none does. */
static const char *
net_denied(const struct policy *p, const char *canon, int port)
{
	for (size_t i = 0; i < p->deny_domains.n; i++) {
		const struct domrule *r = p->deny_domains.v[i];

		if (match_domain(canon, port, r->pattern))
			return r->reason ? r->reason : "host is on the deny list";
	}
	return NULL;
}

static struct net_verdict
net_decide(const struct policy *p, const char *host, int port)
{
	struct net_verdict v = { false, "malformed host" };
	char canon[SBX_MAX_HOST_BYTES + 64];
	const char *deny;
	size_t i;

	if (!match_host_valid(host) || match_canonical_host(host, canon, sizeof(canon)) < 0)
		return v;
	if ((deny = net_denied(p, canon, port))) {
		v.reason = deny;
		return v;
	}
	for (i = 0; i < p->allow_domains.n; i++)
		if (match_domain(canon, port, p->allow_domains.v[i])) {
			v.allow = true;
			v.reason = "allowed";
			return v;
		}
	/* srt's words, and when the list is empty the reason behind them: a
	 * policy with no allow-domain allows no network, which a model reading
	 * the refusal should be told rather than left to guess */
	v.reason = p->allow_domains.n ? "host is not on the allow list" :
	    "host is not on the allow list: the policy allows no network";
	return v;
}

/* The DNS stub's question (7.4): may this name be looked up at all? A
 * name is asked without a port, so a deny rule refuses it only when it
 * holds for every port (no ":port"), and an allow rule admits it when some
 * connection could use it: one with no port does (a port rule denies one
 * port of infinitely many), one with a port only when the name is allowed
 * on that port (net_decide). SECURITY: a name denied on every port it is
 * allowed on (allow-domain h:443 and deny-domain h:443) is refused, never
 * looked up: the proxy's CONNECT never looks it up either. Each connection
 * is still decided on its own, port and all, when it is made. Pure. */
static struct net_verdict
net_decide_name(const struct policy *p, const char *host)
{
	struct net_verdict v = { false, "malformed host" };
	char canon[SBX_MAX_HOST_BYTES + 64];
	const char *deny;
	size_t i;

	if (!match_host_valid(host) || match_canonical_host(host, canon, sizeof(canon)) < 0)
		return v;
	if ((deny = net_denied(p, canon, -1))) {	/* -1: no port rule matches it */
		v.reason = deny;
		return v;
	}
	v.reason = p->allow_domains.n ? "host is not on the allow list" :
	    "host is not on the allow list: the policy allows no network";
	for (i = 0; i < p->allow_domains.n; i++) {
		char ph[300];
		int pport;
		struct net_verdict w;

		pattern_split(p->allow_domains.v[i], ph, sizeof(ph), &pport);
		if (!match_domain(canon, pport, p->allow_domains.v[i]))
			continue;
		if (pport && !(w = net_decide(p, host, pport)).allow) {
			v.reason = w.reason;	/* denied on the port this rule allows: the deny's words */
			continue;
		}
		v.allow = true;
		v.reason = "allowed";
		return v;
	}
	return v;
}

/* network-capture's ports (7.4): 80 and 443, then each port an allow rule
 * for a name names (a rule for an address or localhost is not a name the
 * stub hands out), less the ports already taken inside: the proxy's own,
 * allow-host-port's, and expose-port's (the command's own server listens
 * there: a capture listener would take the port from it, and this
 * machine's connections would reach the proxy as CONNECTs to 127.0.0.1).
 * Fills out (at most max), returns the count. Pure. */
static size_t __attribute__((unused))	/* the Linux runner's (10c), and the tests' */
capture_ports(const struct policy *p, uint16_t *out, size_t max)
{
	size_t n = 0, i, k;
	long taken[2 + 2 * SBX_MAX_HOST_PORTS];
	size_t ntaken = 0;

	taken[ntaken++] = SBX_PROXY_HTTP_PORT;
	taken[ntaken++] = SBX_PROXY_SOCKS_PORT;
	for (i = 0; i < p->host_ports.n && ntaken < LEN(taken); i++)
		taken[ntaken++] = atol(p->host_ports.v[i]);
	for (i = 0; i < p->expose_ports.n && ntaken < LEN(taken); i++)
		taken[ntaken++] = atol(p->expose_ports.v[i]);
	for (i = 0; i < 2 + p->allow_domains.n && n < max; i++) {
		char ph[300];
		int port;
		bool seen = false;

		if (i < 2) {
			port = i == 0 ? 80 : 443;
		} else {
			pattern_split(p->allow_domains.v[i - 2], ph, sizeof(ph), &port);
			if (!port || host_is_ip(ph) || strcmp(ph, "localhost") == 0)
				continue;
		}
		for (k = 0; k < ntaken; k++)
			seen |= taken[k] == port;
		for (k = 0; k < n; k++)
			seen |= out[k] == port;
		if (!seen)
			out[n++] = (uint16_t)port;
	}
	return n;
}

/* ---- 4.6 Resolved addresses (srt resolved-address-guard.js, 5.6) ------
 * After an allow, every address the name resolves to is judged; the
 * proxy dials only survivors, with no second lookup, so a DNS answer
 * cannot aim an allowed name at 127.0.0.1 or the metadata service. */

struct addr { int family; unsigned char b[16]; };	/* AF_INET: b[0..3] */

static int
addr_parse(const char *s, struct addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, a->b) == 1)
		a->family = AF_INET;
	else if (inet_pton(AF_INET6, s, a->b) == 1)
		a->family = AF_INET6;
	else
		return -1;
	return 0;
}

/* An address from a sockaddr; false for other families. */
static bool
addr_from_sockaddr(const struct sockaddr *sa, struct addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = sa->sa_family;
	if (sa->sa_family == AF_INET)
		memcpy(a->b, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else if (sa->sa_family == AF_INET6)
		memcpy(a->b, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	else
		return false;
	return true;
}

/* This machine's interface addresses (struct addr *, arena): an allowed
 * name must not resolve to one of them. */
static void
own_addresses(struct vec *out)
{
	struct ifaddrs *ifs, *ifa;

	if (getifaddrs(&ifs) < 0)
		return;
	for (ifa = ifs; ifa; ifa = ifa->ifa_next) {
		struct addr *a = amalloc(sizeof(*a));

		if (ifa->ifa_addr && addr_from_sockaddr(ifa->ifa_addr, a))
			vec_push(out, a);
	}
	freeifaddrs(ifs);
}

/* A range, parsed (match_parse_cidr). */
struct cidr { int family; unsigned char net[16]; int prefix; };

static bool
addr_in_net(const struct addr *a, const struct cidr *n)
{
	int whole = n->prefix / 8, rest = n->prefix % 8;

	if (n->family != a->family || memcmp(a->b, n->net, (size_t)whole) != 0)
		return false;
	return !rest || ((a->b[whole] ^ n->net[whole]) & (0xff00 >> rest) & 0xff) == 0;
}

static bool
addr_in_cidr(const struct addr *a, const char *cidr)
{
	struct cidr n;

	return match_parse_cidr(cidr, &n.family, n.net, &n.prefix) == 0 && addr_in_net(a, &n);
}

/* The IPv4 address an IPv6 one carries: mapped ::ffff:a.b.c.d, SIIT
 * ::ffff:0:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4
 * 2002:AABB:CCDD::/48. Returns false when there is none. */
static bool
addr_embedded_v4(const struct addr *a, struct addr *v4)
{
	static const unsigned char zero[12] = { 0 };
	const unsigned char *b = a->b;
	int off = -1;

	if (a->family != AF_INET6)
		return false;
	if (memcmp(b, zero, 10) == 0 && b[10] == 0xff && b[11] == 0xff)
		off = 12;	/* mapped */
	else if (memcmp(b, zero, 8) == 0 && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0)
		off = 12;	/* SIIT */
	else if (memcmp(b, zero, 12) == 0)
		off = 12;	/* compatible (deprecated, still routed by some stacks) */
	else if (b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && memcmp(b + 4, zero, 8) == 0)
		off = 12;	/* NAT64 well-known prefix */
	else if (b[0] == 0x20 && b[1] == 0x02)
		off = 2;	/* 6to4 */
	if (off < 0)
		return false;
	memset(v4, 0, sizeof(*v4));
	v4->family = AF_INET;
	memcpy(v4->b, b + off, 4);
	return true;
}

/* Address classes no allowed name may resolve to. ORDER: checked in turn. */
static const struct { const char *cidr, *class_name; } addr_classes[] = {
	{ "127.0.0.0/8", "a loopback address" }, { "::1/128", "a loopback address" },
	{ "0.0.0.0/8", "an unspecified address" }, { "::/128", "an unspecified address" },
	{ "169.254.0.0/16", "a link-local address" }, { "fe80::/10", "a link-local address" },
	{ "224.0.0.0/4", "a multicast address" }, { "ff00::/8", "a multicast address" },
	{ "255.255.255.255/32", "a broadcast address" },
	/* cloud metadata services outside link-local: Alibaba, Azure, Oracle/others, AWS IPv6, ... */
	{ "100.100.100.200/32", "a cloud metadata address" }, { "168.63.129.16/32", "a cloud metadata address" },
	{ "192.0.0.192/32", "a cloud metadata address" }, { "fd00:ec2::/32", "a cloud metadata address" },
	{ "fd20:ce::254/128", "a cloud metadata address" }, { "fd00:c1::a9fe:a9fe/128", "a cloud metadata address" },
	{ "fd00:42::42/128", "a cloud metadata address" }, { "fd00:a9fe:a9fe::1/128", "a cloud metadata address" },
	{ "fd00:100::100:200/128", "a cloud metadata address" },
};

/* Does an IP-literal entry of a domain list name this address (and port)? */
static bool
addr_in_literal_entries(const struct addr *a, int port, const struct vec *list, bool domrules)
{
	size_t i;

	for (i = 0; i < list->n; i++) {
		const char *pat = domrules ? ((const struct domrule *)list->v[i])->pattern : list->v[i];
		char ph[300];
		int pport;
		struct addr e;

		pattern_split(pat, ph, sizeof(ph), &pport);
		if ((pport && pport != port) || addr_parse(ph, &e) < 0 || e.family != a->family)
			continue;
		if (memcmp(e.b, a->b, a->family == AF_INET ? 4 : 16) == 0)
			return true;
	}
	return false;
}

/* addr_classes, parsed: once, at the first address judged (the proxy's
 * first request), not for every address of every request. Parsing the 18
 * ranges (an inet_pton or two each) was most of the guard's work: 12 300
 * instructions to judge one IPv4 address, 1 200 now (callgrind). */
static struct cidr addr_class_nets[LEN(addr_classes)];
static bool addr_class_nets_done;

/* The class of one address that keeps it from being dialled, or NULL. */
static const char *
addr_class(const struct policy *p, const struct addr *a, const struct vec *own)
{
	size_t i;

	if (!addr_class_nets_done) {
		for (i = 0; i < LEN(addr_classes); i++) {
			struct cidr *n = &addr_class_nets[i];

			/* a typo in the table would silently refuse nothing */
			BUG_ON(match_parse_cidr(addr_classes[i].cidr, &n->family, n->net, &n->prefix) < 0);
		}
		addr_class_nets_done = true;
	}
	for (i = 0; i < LEN(addr_classes); i++)
		if (addr_in_net(a, &addr_class_nets[i]))
			return addr_classes[i].class_name;
	for (i = 0; i < p->deny_addresses.n; i++)
		if (addr_in_cidr(a, p->deny_addresses.v[i]))
			return "a listed address";
	for (i = 0; own && i < own->n; i++) {
		const struct addr *o = own->v[i];

		if (o->family == a->family && memcmp(o->b, a->b, a->family == AF_INET ? 4 : 16) == 0)
			return "one of this host's addresses";
	}
	return NULL;
}

/* Judge one resolved address of an allowed host (canonical), in srt's
 * order. own: this machine's interface addresses (struct addr *). Returns
 * NULL when it may be dialled, else the reason class. Pure. */
static const char *
net_judge_address(const struct policy *p, const char *host, int port, const struct addr *a, const struct vec *own)
{
	struct addr v4;
	bool has_v4 = addr_embedded_v4(a, &v4);
	const char *cls;
	size_t hn = strlen(host);

	if (host_is_ip(host))
		return NULL;	/* srt: a literal IP was decided by the allow list itself */
	if (addr_in_literal_entries(a, port, &p->deny_domains, true) ||
	    (has_v4 && addr_in_literal_entries(&v4, port, &p->deny_domains, true)))
		return "a deny-listed address";
	if (addr_in_literal_entries(a, port, &p->allow_domains, false))
		return NULL;
	if (strcmp(host, "localhost") == 0 || (hn > 10 && strcmp(host + hn - 10, ".localhost") == 0)) {
		bool loop = addr_in_cidr(a, "127.0.0.0/8") || addr_in_cidr(a, "::1/128") ||
		    (has_v4 && addr_in_cidr(&v4, "127.0.0.0/8"));

		return loop ? NULL : "a non-loopback address";
	}
	if ((cls = addr_class(p, a, own)))
		return cls;
	if (has_v4 && (cls = addr_class(p, &v4, own)))
		return cls;
	return NULL;
}

/* ---- 4.7 The routes: which way an allowed connection takes ------------
 * (srt parent-proxy.js, getMitmSocketPath.) The policy decides first,
 * always. A host of mitm-proxy-domain then goes to the MITM proxy's Unix
 * socket (mitm_routes, below; sbx dials it for the proxy, 9e). Any other
 * goes through the parent proxy unless its host is bypassed:
 * loopback always, then NO_PROXY's entries (Go's httpproxy reading: "*",
 * CIDRs and addresses, "example.com" matching it and its subdomains,
 * ".example.com" the same, a ":port" ignored). Tunnels (CONNECT, SOCKS)
 * take the https parent (falling back to http's), plain HTTP the http
 * one only, as curl does. */

struct parent_route {
	bool have_http, have_https;
	struct parent_proxy http, https;	/* https: the tunnels'; http: plain requests' */
	const char *http_from, *https_from;	/* where each came from: "parent-proxy", "HTTP_PROXY", ... */
	bool bypass_all;
	struct vec bypass_names;	/* of const char *: lower case; ".x" or "x" */
	struct vec bypass_nets;		/* of const char *: a CIDR, or an address */
};

/* One NO_PROXY entry (checked by proxy_bypass_check, or from the
 * environment: then one that is not understood is skipped, as srt does). */
static void
parent_bypass_add(struct parent_route *r, const char *entry)
{
	char v[SBX_MAX_HOST_BYTES + 16], *c;
	unsigned char a[16];
	int fam, prefix;
	size_t n;

	while (*entry == ' ' || *entry == '\t')
		entry++;
	n = strlen(entry);
	while (n > 0 && (entry[n - 1] == ' ' || entry[n - 1] == '\t'))
		n--;
	if (n == 0 || n >= sizeof(v))
		return;
	memcpy(v, entry, n);
	v[n] = '\0';
	if (strcmp(v, "*") == 0) {
		r->bypass_all = true;
		return;
	}
	if (strchr(v, '/')) {
		if (match_parse_cidr(v, &fam, a, &prefix) == 0)
			vec_push(&r->bypass_nets, astrdup(v));
		return;	/* a malformed CIDR is not a name either */
	}
	for (c = v; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	c = v;
	if (*c == '[' && (c = strchr(v, ']'))) {	/* [v6] or [v6]:port */
		*c = '\0';
		c = v + 1;
	} else {
		c = v;
		if (strncmp(c, "*.", 2) == 0)
			c++;	/* "*.x" is ".x" */
	}
	if (addr_parse(c, &(struct addr){ 0 }) == 0) {
		vec_push(&r->bypass_nets, astrdup(c));	/* an address: an exact match */
		return;
	}
	{
		char *colon = strrchr(c, ':');

		if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1))
			*colon = '\0';	/* the port is ignored */
	}
	if (*c && strcmp(c, ".") != 0)
		vec_push(&r->bypass_names, astrdup(c));
}

/* Does a connection to host (as the client named it) go directly? */
static bool
parent_bypassed(const struct parent_route *r, const char *host)
{
	char h[SBX_MAX_HOST_BYTES + 1];
	size_t n = strlen(host), hn;
	struct addr a;

	if (n >= sizeof(h))
		return false;
	if (host[0] == '[' && n > 1 && host[n - 1] == ']') {
		memcpy(h, host + 1, n - 2);
		h[n - 2] = '\0';
	} else {
		memcpy(h, host, n + 1);
	}
	for (char *c = h; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	hn = strlen(h);
	if (hn > 0 && h[hn - 1] == '.')
		h[--hn] = '\0';
	if (addr_parse(h, &a) == 0) {
		struct addr v4;

		if (addr_in_cidr(&a, "127.0.0.0/8") || addr_in_cidr(&a, "::1/128") ||
		    (addr_embedded_v4(&a, &v4) && addr_in_cidr(&v4, "127.0.0.0/8")))
			return true;	/* loopback: never through a parent */
		if (r->bypass_all)
			return true;
		for (size_t i = 0; i < r->bypass_nets.n; i++)
			if (strchr(r->bypass_nets.v[i], '/') ? addr_in_cidr(&a, r->bypass_nets.v[i]) :
			    addr_in_cidr(&a, aprintf("%s/%d", (const char *)r->bypass_nets.v[i], a.family == AF_INET ? 32 : 128)))
				return true;
		return false;
	}
	if (strcmp(h, "localhost") == 0 || r->bypass_all)
		return true;
	for (size_t i = 0; i < r->bypass_names.n; i++) {
		const char *v = r->bypass_names.v[i];
		size_t vn = strlen(v);

		if (v[0] == '.' ? strcmp(h, v + 1) == 0 || (hn > vn && strcmp(h + hn - vn, v) == 0) :
		    strcmp(h, v) == 0 || (hn > vn && h[hn - vn - 1] == '.' && strcmp(h + hn - vn, v) == 0))
			return true;
	}
	return false;
}

/* The parent a connection to host goes through, or NULL: directly. */
static const struct parent_proxy *
parent_for(const struct parent_route *r, const char *host, bool tunnel)
{
	if (!r || (!r->have_http && !r->have_https) || parent_bypassed(r, host))
		return NULL;
	if (tunnel)
		return r->have_https ? &r->https : &r->http;
	return r->have_http ? &r->http : NULL;	/* plain HTTP never takes HTTPS_PROXY alone (curl) */
}

/* Does an allowed connection to canon (a canonical host) take the MITM
 * route (srt getMitmSocketPath)? Its patterns are matched as allow-domain's
 * with no port, so every port of a host goes the one way; a bare IPv6
 * pattern (srt's spelling) is compared in canonical form. The MITM route
 * comes before the parent's, as srt's order: MITM socket > parent >
 * direct. Pure. */
static bool
mitm_routes(const struct policy *p, const char *canon)
{
	for (size_t i = 0; p->mitm_socket && i < p->mitm_domains.n; i++) {
		const char *pat = p->mitm_domains.v[i];
		char v6[SBX_MAX_HOST_BYTES + 64];

		if (is_ipv6_literal(pat) ? match_canonical_host(pat, v6, sizeof(v6)) == 0 && strcmp(v6, canon) == 0 :
		    match_domain(canon, 0, pat))
			return true;
	}
	return false;
}

/* A URL for messages: its password (and user) replaced by "***". */
static const char *
url_redacted(const char *url)
{
	const char *start = strstr(url, "://"), *end, *at;

	start = start ? start + 3 : url;
	end = start + strcspn(start, "/?#");
	for (at = end; at > start && at[-1] != '@'; at--)
		;
	return at > start ? aprintf("%.*s***:***@%s", (int)(start - url), url, at) : url;
}

static const char *
env_value(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

/* The route in effect (srt resolveParentProxy): each of the policy's
 * parent-proxy, parent-proxy-https and parent-proxy-bypass, or else what
 * sbx's own environment says (HTTP_PROXY or http_proxy, HTTPS_PROXY or
 * https_proxy, falling back to the http one, NO_PROXY or no_proxy; an
 * empty value is unset). A URL from the environment that does not parse
 * is skipped with a warning, as srt does; an https:// one stops the run:
 * sbx cannot reach it, and going around a proxy the person set is not for
 * sbx to decide. Returns 0, or -1 with *why. */
static int
parent_route_collect(const struct policy *p, char *const *envp, struct parent_route *r, struct vec *warnings,
    const char **why)
{
	struct { const char *url, *from; } w[2] = { { p->parent_http, "parent-proxy" }, { p->parent_https, "parent-proxy-https" } };
	static const char *const envs[2][2] = { { "HTTP_PROXY", "http_proxy" }, { "HTTPS_PROXY", "https_proxy" } };

	memset(r, 0, sizeof(*r));
	for (int k = 0; k < 2; k++)
		for (int e = 0; !w[k].url && e < 2; e++) {
			const char *v = env_value(envp, envs[k][e]);

			if (v && *v) {
				w[k].url = v;
				w[k].from = envs[k][e];
			}
		}
	if (!w[1].url)
		w[1] = w[0];	/* tunnels fall back to the http parent (curl) */
	for (int k = 0; k < 2; k++) {
		struct parent_proxy *pp = k ? &r->https : &r->http;
		const char *perr = NULL;

		if (!w[k].url || (k == 1 && w[1].url == w[0].url && !r->have_http))
			continue;	/* unset, or the http one that was already found wanting */
		if (proxy_url_parse(w[k].url, pp, &perr) < 0) {
			if (strncasecmp(w[k].url, "https://", 8) == 0) {
				*why = aprintf("%s=%s: %s", w[k].from, url_redacted(w[k].url), perr);
				return -1;
			}
			vec_push(warnings, (void *)aprintf("%s=%s: %s; ignored, as srt does", w[k].from,
			    url_redacted(w[k].url), perr));
			continue;
		}
		if (k)
			r->have_https = true, r->https_from = w[k].from;
		else
			r->have_http = true, r->http_from = w[k].from;
	}
	if (p->parent_bypass.n) {
		for (size_t i = 0; i < p->parent_bypass.n; i++)
			parent_bypass_add(r, p->parent_bypass.v[i]);
	} else {
		const char *np = env_value(envp, "NO_PROXY");
		char *copy, *entry, *save;

		if (!np || !*np)
			np = env_value(envp, "no_proxy");
		copy = astrdup(np ? np : "");
		for (entry = strtok_r(copy, ",", &save); entry; entry = strtok_r(NULL, ",", &save))
			parent_bypass_add(r, entry);
	}
	return 0;
}

/* ====================================================================
 * 5. FILESYSTEM PLAN: policy + a view of the disk -> a list of mounts
 * ==================================================================== */

/* Prototypes: a repository's submodules and worktrees are repositories
 * too (fx_gitdir recurses through them). */
struct fact_finder;
static int fx_gitdir(struct fact_finder *fx, const char *root, const char *gd, const char *top, int depth);

/* ---- 5a. The disk view and path resolution -------------------------
 * Everything the planner learns about the disk goes through struct disk,
 * so tests can plan over a fake tree (tests/unit.c) exactly as over the
 * real one. The real view walks with openat(2) on directory fds and
 * O_NOFOLLOW, so a walk never leaves a tree through a symlink. */

enum fkind { FK_MISSING, FK_FILE, FK_DIR, FK_LINK, FK_OTHER, FK_UNREADABLE };

struct fid { dev_t dev; ino_t ino; };

struct disk_ops {
	/* lstat(2): the kind of path, and its identity when id is not NULL */
	enum fkind (*lstat)(void *ctx, const char *path, struct fid *id);
	/* readlink(2) into buf (NUL-terminated); returns the length or -1 */
	int (*readlink)(void *ctx, const char *path, char *buf, size_t n);
	/* open a directory: parent NULL means name is an absolute path, else a
	 * name inside parent (never followed if it is a symlink); NULL + errno */
	void *(*opendir)(void *ctx, void *parent, const char *name);
	/* next entry: 1 with *name and *kind set, 0 at the end, -1 on error */
	int (*readdir)(void *ctx, void *dir, const char **name, enum fkind *kind);
	void (*closedir)(void *ctx, void *dir);
	/* a regular file's bytes (following symlinks, as git does for its
	 * config and includes), at most max; 0, or -1 with errno (ENOENT,
	 * EFBIG past max, EINVAL for a FIFO or device: never blocks) */
	int (*readfile)(void *ctx, const char *path, size_t max, struct buf *out);
	/* how many entries dir held that readdir did not return (a cached
	 * listing keeps only what the walk reads), for the walk's bounds;
	 * NULL: none */
	long (*unread)(void *ctx, void *dir);
};

struct disk { const struct disk_ops *ops; void *ctx; };

static enum fkind
kind_of_mode(mode_t m)
{
	if (S_ISDIR(m))
		return FK_DIR;
	if (S_ISREG(m))
		return FK_FILE;
	if (S_ISLNK(m))
		return FK_LINK;
	return FK_OTHER;
}

/* lstat(2), asked now */
static enum fkind
real_lstat_now(void *ctx, const char *path, struct fid *id)
{
	struct stat st;
	enum fkind k;

	(void)ctx;
	if (lstat(path, &st) < 0) {
		k = errno == ENOENT || errno == ENOTDIR ? FK_MISSING : FK_UNREADABLE;
		memset(&st, 0, sizeof(st));
	} else {
		k = kind_of_mode(st.st_mode);
	}
	if (id) {
		id->dev = st.st_dev;
		id->ino = st.st_ino;
	}
	return k;
}

static enum fkind
real_lstat(void *ctx, const char *path, struct fid *id)
{
	/* Planning resolves the same prefixes again and again ("/", $HOME, the
	 * project, for each of dozens of names), and nothing runs in the
	 * sandbox yet to change them: each answer is kept (a bounded table;
	 * when it is full, lstat(2) answers). The hash table holds only the
	 * index of an answer, and the answers fill their array in order: a run
	 * keeps a few dozen, so they touch two pages, where a table of the
	 * answers themselves, spread by their hashes, touched sixteen (a first
	 * touch is a page fault, 11 us on the VM measured) */
	static struct { const char *path; enum fkind kind; struct fid id; } memo[2048];
	static uint16_t slot[2048];	/* index + 1 into memo, or 0: free */
	static size_t nmemo;
	size_t i = str_hash(path) & (LEN(slot) - 1), tries;
	struct fid fid;
	enum fkind k;

	for (tries = 0; slot[i] && tries < 16; tries++, i = (i + 1) & (LEN(slot) - 1))
		if (strcmp(memo[slot[i] - 1].path, path) == 0) {
			if (id)
				*id = memo[slot[i] - 1].id;
			return memo[slot[i] - 1].kind;
		}
	k = real_lstat_now(ctx, path, &fid);
	if (!slot[i] && nmemo < LEN(memo)) {
		memo[nmemo].path = astrdup(path);
		memo[nmemo].kind = k;
		memo[nmemo].id = fid;
		slot[i] = (uint16_t)++nmemo;
	}
	if (id)
		*id = fid;
	return k;
}

static int
real_readlink(void *ctx, const char *path, char *buf, size_t n)
{
	ssize_t r = readlink(path, buf, n - 1);

	(void)ctx;
	if (r < 0 || (size_t)r >= n - 1)
		return -1;
	buf[r] = '\0';
	return (int)r;
}

static void *
real_opendir(void *ctx, void *parent, const char *name)
{
	(void)ctx;
	return dir_open(parent ? dir_fd(parent) : AT_FDCWD, name);
}

static int
real_readdir(void *ctx, void *dir, const char **name, enum fkind *kind)
{
	struct dir_entry de;
	int r;

	(void)ctx;
	if ((r = dir_next(dir, &de)) != 1)
		return r;
	*name = de.name;
	switch (de.type) {	/* d_type: no stat per entry on the common file systems */
	case DT_DIR: *kind = FK_DIR; break;
	case DT_REG: *kind = FK_FILE; break;
	case DT_LNK: *kind = FK_LINK; break;
	case DT_UNKNOWN: {
		struct stat st;

		*kind = fstatat(dir_fd(dir), de.name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? kind_of_mode(st.st_mode) : FK_OTHER;
		break;
	}
	default: *kind = FK_OTHER;
	}
	return 1;
}

static void
real_closedir(void *ctx, void *dir)
{
	(void)ctx;
	dir_close(dir);
}

static int
real_readfile(void *ctx, const char *path, size_t max, struct buf *out)
{
	/* O_NONBLOCK: a FIFO named by a hostile include must not hang sbx */
	int fd = openat(AT_FDCWD, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t r;

	(void)ctx;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		errno = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? EFBIG : EINVAL;
		close(fd);
		return -1;
	}
	out->n = 0;
	for (;;) {
		buf_grow(out, out->n < 4096 ? 4096 : out->n);	/* read_file says why */
		r = read(fd, out->p + out->n, out->cap - out->n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		out->n += (size_t)r;
		if (out->n > max) {
			r = -1;
			errno = EFBIG;
			break;
		}
	}
	out->p[out->n] = '\0';
	close(fd);
	return r < 0 ? -1 : 0;
}

static const struct disk_ops real_disk_ops = {
	real_lstat, real_readlink, real_opendir, real_readdir, real_closedir, real_readfile, NULL,
}, real_disk_ops_now = {	/* for sbx's own changes before the plan (allow_write_make_missing):
			 * what it learns must not be remembered into the plan */
	real_lstat_now, real_readlink, real_opendir, real_readdir, real_closedir, real_readfile, NULL,
};

/* The result of resolving one spelled path against the disk. */
struct resolved {
	const char *path;	/* real path; for a missing path, the real deepest
				 * existing ancestor plus the missing names */
	enum fkind kind;	/* of path: FK_MISSING, FK_FILE, FK_DIR, FK_OTHER, FK_UNREADABLE */
	const char *first_missing;	/* FK_MISSING: the first name that does not exist */
	bool through_file;	/* a component was a file (e.g. a worktree's .git file):
				 * path is then that file */
	bool via_link;		/* a symlink was followed on the way */
	struct vec links;	/* of const char *: where each symlink followed lies
				 * (its real directory and its name), in order */
};

/* Resolve symlinks as realpath(3) does, through the disk view, but carry on
 * past the first missing name (srt's resolveSymlinkedDenyPath): a deny of a
 * path that does not exist yet must still name where it would be created.
 * Returns 0, or -1 with *why set (a loop, or ".." after a missing name). */
static int
resolve_path(const struct disk *dk, const char *spelled, struct resolved *out, const char **why)
{
	char rest[PATH_MAX * 2], link[PATH_MAX];
	char cur[PATH_MAX];
	int links = 0;
	bool missing = false;

	memset(out, 0, sizeof(*out));
	if (strlen(spelled) >= PATH_MAX) {
		*why = "path too long";
		return -1;
	}
	str_copy(rest, spelled, sizeof(rest));
	strcpy(cur, "/");
	for (;;) {
		char *r = rest, *name, *next;
		char cand[PATH_MAX];
		enum fkind k;

		while (*r == '/')
			r++;
		if (!*r)
			break;
		name = r;
		next = strchr(r, '/');
		if (next)
			*next++ = '\0';
		else
			next = r + strlen(r);
		if (strlen(name) > NAME_MAX) {
			*why = "a path component longer than NAME_MAX";
			return -1;
		}
		memcpy(cand, name, strlen(name) + 1);	/* before rest is moved over it */
		memmove(rest, next, strlen(next) + 1);	/* rest := what follows name */
		if (strcmp(cand, ".") == 0)
			continue;
		if (strcmp(cand, "..") == 0) {
			if (missing) {
				*why = "\"..\" after a name that does not exist";
				return -1;
			}
			str_copy(cur, path_dirname(cur), sizeof(cur));
			continue;
		}
		{
			char joined[PATH_MAX];

			if (snprintf(joined, sizeof(joined), "%s%s%s", cur, strcmp(cur, "/") ? "/" : "", cand) >=
			    (int)sizeof(joined)) {
				*why = "path too long";
				return -1;
			}
			str_copy(cand, joined, sizeof(cand));
		}
		if (missing) {
			str_copy(cur, cand, sizeof(cur));
			continue;
		}
		k = dk->ops->lstat(dk->ctx, cand, NULL);
		if (k == FK_LINK) {
			char tmp[PATH_MAX * 2];

			if (++links > SBX_MAX_SYMLINKS) {
				*why = "too many levels of symbolic links";
				return -1;
			}
			if (dk->ops->readlink(dk->ctx, cand, link, sizeof(link)) < 0) {
				*why = "unreadable symbolic link";
				return -1;
			}
			out->via_link = true;
			vec_push(&out->links, astrdup(cand));
			if (snprintf(tmp, sizeof(tmp), "%s/%s", link, rest) >= (int)sizeof(tmp)) {
				*why = "path too long";
				return -1;
			}
			str_copy(rest, tmp, sizeof(rest));
			if (link[0] == '/')
				strcpy(cur, "/");
			continue;
		}
		if (k == FK_MISSING) {
			missing = true;
			out->first_missing = astrdup(cand);
			str_copy(cur, cand, sizeof(cur));
			continue;
		}
		str_copy(cur, cand, sizeof(cur));
		if (k != FK_DIR) {
			char *r2 = rest;

			while (*r2 == '/')
				r2++;
			if (*r2) {	/* a file in the middle of the path */
				out->through_file = k == FK_FILE;
				out->path = astrdup(cur);
				/* a FIFO, socket or device there: nothing can be
				 * made below it, but a command that can replace it
				 * by a directory could; the thing itself is what a
				 * deny covers */
				out->kind = k == FK_FILE ? FK_FILE : k == FK_OTHER ? FK_OTHER : FK_MISSING;
				if (out->kind == FK_MISSING)
					out->first_missing = out->path;
				return 0;
			}
			out->kind = k;
			out->path = astrdup(cur);
			return 0;
		}
	}
	out->path = path_clean(cur);
	out->kind = missing ? FK_MISSING : dk->ops->lstat(dk->ctx, out->path, NULL);
	return 0;
}

/* Expand a glob against the disk. Each match (an existing path, spelled
 * with the glob's prefix) is pushed to out. Returns 0, or -1 with *why set
 * when the walk is larger than SBX_MAX_WALK_ENTRIES. */
struct glob_walk {
	const struct disk *dk;
	struct vec *out;
	long visited;
	const char *why;
};

/* Every entry beneath dir whose path from the walk's start (rel) matches
 * pat, at any depth: the rest of a pattern with a "**" inside a component
 * (glob_match_path), which can end any number of components down. Links
 * are matched, never entered, as in glob_expand_at. */
static int
glob_expand_tail(struct glob_walk *gw, const char *dir, const char *rel, const char *pat, int depth)
{
	void *dh;
	const char *name;
	enum fkind k;
	int rc = 0;

	if (depth > 64 || !(dh = gw->dk->ops->opendir(gw->dk->ctx, NULL, dir)))
		return 0;
	while (rc == 0 && gw->dk->ops->readdir(gw->dk->ctx, dh, &name, &k) == 1) {
		const char *r = *rel ? aprintf("%s/%s", rel, name) : astrdup(name);

		if (++gw->visited > SBX_MAX_WALK_ENTRIES) {
			gw->why = "the glob walks more than 2000000 entries; make it narrower";
			rc = -1;
			break;
		}
		if (glob_match_path(pat, r))
			vec_push(gw->out, path_join(dir, name));
		if (k == FK_DIR)
			rc = glob_expand_tail(gw, path_join(dir, name), r, pat, depth + 1);
	}
	gw->dk->ops->closedir(gw->dk->ctx, dh);
	if (rc == 0 && gw->out->n > SBX_MAX_GLOB_MATCHES) {
		gw->why = "the glob matches more than 4096 paths; make it narrower";
		return -1;
	}
	return rc;
}

static int
glob_expand_at(struct glob_walk *gw, const char *dir, char **comps, int ncomps, int depth)
{
	void *dh;
	const char *name;
	enum fkind k;
	int rc = 0;

	if (ncomps > 0 && strstr(comps[0], "**") && strcmp(comps[0], "**") != 0) {
		struct buf pat = { 0 };
		const char *tail;

		for (int i = 0; i < ncomps; i++)
			buf_printf(&pat, "%s%s", i ? "/" : "", comps[i]);
		tail = astrdup(pat.p);
		free(pat.p);
		return glob_expand_tail(gw, dir, "", tail, depth);
	}
	if (ncomps == 0) {
		vec_push(gw->out, astrdup(dir));
		return 0;
	}
	if (depth > 64)
		return 0;
	if (!has_glob_chars(comps[0])) {
		char *p = path_join(dir, comps[0]);
		enum fkind pk = gw->dk->ops->lstat(gw->dk->ctx, p, NULL);

		if (pk == FK_MISSING || pk == FK_UNREADABLE || (ncomps > 1 && pk != FK_DIR))
			return 0;
		return glob_expand_at(gw, p, comps + 1, ncomps - 1, depth + 1);
	}
	if (strcmp(comps[0], "**") == 0 && glob_expand_at(gw, dir, comps + 1, ncomps - 1, depth + 1) < 0)
		return -1;
	dh = gw->dk->ops->opendir(gw->dk->ctx, NULL, dir);
	if (!dh)
		return 0;
	while (rc == 0 && gw->dk->ops->readdir(gw->dk->ctx, dh, &name, &k) == 1) {
		char *p;

		if (++gw->visited > SBX_MAX_WALK_ENTRIES) {
			gw->why = "the glob walks more than 2000000 entries; make it narrower";
			rc = -1;
			break;
		}
		p = path_join(dir, name);
		if (strcmp(comps[0], "**") == 0) {
			if (k == FK_DIR)
				rc = glob_expand_at(gw, p, comps, ncomps, depth + 1);
			continue;
		}
		if (!glob_match_component(comps[0], name))
			continue;
		if (ncomps == 1)
			vec_push(gw->out, p);
		else if (k == FK_DIR)
			rc = glob_expand_at(gw, p, comps + 1, ncomps - 1, depth + 1);
	}
	gw->dk->ops->closedir(gw->dk->ctx, dh);
	if (gw->out->n > SBX_MAX_GLOB_MATCHES) {
		gw->why = "the glob matches more than 4096 paths; make it narrower";
		return -1;
	}
	return rc;
}

static int
glob_expand(const struct disk *dk, const char *pattern, struct vec *out, const char **why)
{
	char *copy = astrdup(pattern), *comps[PATH_MAX / 2], *tok, *save;
	int n = 0;
	struct glob_walk gw = { dk, out, 0, NULL };

	for (tok = strtok_r(copy, "/", &save); tok; tok = strtok_r(NULL, "/", &save))
		comps[n++] = tok;
	if (glob_expand_at(&gw, "/", comps, n, 0) < 0) {
		*why = gw.why;
		return -1;
	}
	return 0;
}

/* ---- 5b. Facts and mounts: what 5c produces and 5d consumes ---------- */

enum rule_bits {
	RB_HIDE = 1,		/* deny-read */
	RB_SHOW = 2,		/* allow-read */
	RB_WRITE = 4,		/* allow-write */
	RB_DENY_WRITE = 8,	/* deny-write, or a mandatory deny */
	RB_PLACEHOLDER = 16,	/* a missing write deny: the node is its first missing name */
	RB_LINK_PIN = 32,	/* a dangerous name that is a symlink: the link itself is pinned */
	RB_DANGLING = 64,	/* the missing target of such a link: refused where it could be made */
	RB_SECRET = 128,	/* deny-secret-file: hidden, and nothing below is shown again */
	/* records that mount nothing, for what runs after the command (9b) */
	RB_GITDIR = 256,	/* a repository directory protected during the run */
	RB_AUDIT_ROOT = 512,	/* a writable root searched afterwards for new repositories */
	RB_REPO_SEEN = 1024,	/* a .git there before the run (what is not is new after it) */
	RB_SEEN_PARTIAL = 2048,	/* the search for them stopped at the walk's bound */
};

/* What a placeholder is. ORDER: placeholder_kinds[] (its description) and
 * ph_kind_letters[] (its letter in the registry, 5d) rely on this order. */
enum phkind {
	PH_DIR,		/* an empty directory: git ignores it, so `git add -A` does
			 * not commit a dozen empty dotfiles */
	PH_FILE,	/* an empty file: a config git must still be able to read */
	PH_DOT,		/* a file holding ".": a missing .git/commondir; git reads it
			 * as "the common directory is this one", while an empty file
			 * or a directory there makes every git command fail */
};

/* ORDER: enum phkind */
static const char *const placeholder_kinds[] = { "an empty directory", "an empty file", "a file holding \".\"" };

/* ORDER: mount_cmp orders mounts at one key by this order (bwrap mounts
 * the later over the earlier), and plan_note_mounts' kinds[] (the -v
 * mount notes) names them in it. */
enum mkind {
	MK_BIND_RO,	/* --ro-bind P P */
	MK_BIND_RW,	/* --bind P P */
	MK_EMPTY_FILE,	/* --ro-bind EMPTY P: a hidden file reads as empty (EMPTY is an
			 * empty read-only file of the run; /dev/null would be a
			 * nodev device there, and reading it would fail) */
	MK_TMPFS,	/* --tmpfs P: a hidden directory */
	MK_REMOUNT_RO,	/* --remount-ro P: after the paths bound back into a --tmpfs */
	MK_BIND_FROM,	/* --ro-bind SRC P: a host file shown at another path (sbx itself) */
	MK_PIN_LINK,	/* a symlink mounted onto itself, unfollowed, by sbx-init (10a): bwrap
			 * follows every link it mounts on, so this one is not in its argv */
	MK_BIND_RO_INIT,	/* MK_BIND_RO of a name in a writable place, made by sbx-init in
			 * the nested mount namespace instead of bwrap (plan_binds_to_init) */
	MK_BIND_RW_INIT,	/* MK_BIND_RW there (a pin), the same way, with what is below it */
};

struct mount {
	enum mkind kind;
	const char *path;
	const char *why;	/* for -v */
	const char *src;	/* MK_BIND_FROM: the host path */
	const char *key;	/* sort key: the path; for MK_REMOUNT_RO, the path
				 * plus "/\xff", after everything inside it */
};

struct fact {
	const char *path;	/* real, clean, absolute */
	enum fkind kind;
	unsigned rules;		/* enum rule_bits */
	const char *why;
	enum phkind ph;		/* RB_PLACEHOLDER: what to create */
};

struct pnode {			/* a fact merged per path, with its computed state */
	const char *path;
	enum fkind kind;
	unsigned rules;
	bool visible, writable, forced, mounted;
	bool secret;		/* inside a deny-secret-file: hidden whatever lies below */
	const char *why;
	enum phkind ph;
};

/* A placeholder is created on the host and bound read-only onto itself, so
 * nothing can be created at its name. It is an empty directory unless git
 * needs to read a file there (srt binds /dev/null instead, which git
 * refuses to add at all). */
struct placeholder { const char *path; enum phkind kind; };

struct plan {
	struct vec mounts;	/* of struct mount, in bwrap order */
	struct vec placeholders;	/* of struct placeholder, to create before and remove after */
	struct vec nodes;	/* of struct pnode, sorted; for plan_is_writable() */
	struct vec gitdirs;	/* of const char *: repositories protected during the run (9b) */
	struct vec audit_roots;	/* of const char *: writable roots to search after it (9b) */
	struct vec repos_seen;	/* of const char *: every .git in them before the run (9b) */
	struct vec dirs_seen;	/* of const char *: every directory of them the same walk listed,
				 * node_modules ones included (not entered); main fills it */
	bool seen_partial;	/* repos_seen stopped at the walk's bound */
	bool fs_disabled;
	bool allow_git_config;	/* the policy lets the command write .git/config (9b) */
};

static void
plan_add_fact(struct vec *facts, const char *path, enum fkind kind, unsigned rules, const char *why)
{
	struct fact *f = amalloc(sizeof(*f));

	f->path = path;
	f->kind = kind;
	f->rules = rules;
	f->why = why;
	vec_push(facts, f);
}

static void
plan_add_placeholder(struct vec *facts, const char *path, enum phkind ph, const char *why)
{
	plan_add_fact(facts, path, FK_MISSING, RB_PLACEHOLDER, why);
	((struct fact *)facts->v[facts->n - 1])->ph = ph;
}

/* ---- 5c. From policy rules to facts: resolution, the scan, git ------- */

/* Where a dangerous name is looked for, and where a missing one is held by
 * a placeholder. Each placeholder is a mount (bwrap rereads the mount table
 * for every one, ~0.3 ms), so a missing name is held only where a tool
 * would read it later. */
enum dwhere {
	DW_TOP,		/* top of every root and the walk; held at the top of the
			 * cwd, $HOME and git work trees (srt's list) */
	DW_HOME_HELD,	/* top of every root and the walk; held only at $HOME */
	DW_EXISTING,	/* top of every root and the walk; never held */
	DW_HOME,	/* only under $HOME, wherever that lies in a writable root;
			 * held. A project's own copy is not denied: the project's
			 * code runs in the project anyway */
	DW_HOME_FILE,	/* as DW_HOME, held by an empty file: the program refuses a
			 * directory there (Codex: "is not a file") and reads an
			 * empty file as no settings */
	DW_PROJECT,	/* as DW_TOP, but never directly in $HOME: an agent keeps
			 * its own state there (Codex writes sessions/, log/,
			 * history.jsonl and auth.json in ~/.codex), so there the
			 * DW_HOME rows name only the parts of it that run */
};

static bool
dw_home_only(enum dwhere w)
{
	return w == DW_HOME || w == DW_HOME_FILE;
}

/* Files that run code later, outside the sandbox, if a command could write
 * them: srt's DANGEROUS_FILES (sandbox-utils.js), then sbx's additions (the
 * class: a file that makes a tool run code without the person choosing to
 * run the project's code). ~/.gitconfig's XDG twin and the files git
 * configuration names are in the git part below. */
static const struct { const char *name; const char *why; enum dwhere where; } dangerous_files[] = {
	{ ".gitconfig", "git runs commands named in it (core.pager, aliases)", DW_TOP },
	{ ".gitmodules", "submodule URLs and update commands run on the next update", DW_TOP },
	{ ".bashrc", "the next interactive bash runs it", DW_TOP },
	{ ".bash_profile", "the next login bash runs it", DW_TOP },
	{ ".zshrc", "the next interactive zsh runs it", DW_TOP },
	{ ".zprofile", "the next login zsh runs it", DW_TOP },
	{ ".profile", "the next login shell runs it", DW_TOP },
	{ ".ripgreprc", "ripgrep options can name a preprocessor to run", DW_TOP },
	{ ".mcp.json", "names MCP servers an agent will start with full access", DW_TOP },
	/* beyond srt */
	{ ".zshenv", "every zsh runs it, scripts included", DW_HOME_HELD },
	{ ".zlogin", "the next login zsh runs it", DW_HOME_HELD },
	{ ".zlogout", "zsh runs it at logout", DW_HOME_HELD },
	{ ".bash_login", "a login bash runs it when .bash_profile is absent", DW_HOME_HELD },
	{ ".bash_logout", "bash runs it at logout", DW_HOME_HELD },
	{ ".bash_aliases", "Debian's and Ubuntu's .bashrc source it", DW_HOME_HELD },
	{ ".pre-commit-config.yaml", "the pre-commit hook runs the programs it lists on the next commit", DW_EXISTING },
	{ ".lefthook.yml", "the lefthook git hook runs the commands it lists", DW_EXISTING },
	{ "lefthook.yml", "the lefthook git hook runs the commands it lists", DW_EXISTING },
	{ ".config/git/config", "git's XDG global config: runs what it names, like ~/.gitconfig", DW_HOME },
	{ ".config/fish/config.fish", "every fish shell runs it", DW_HOME },
	{ ".config/fish/conf.d", "every fish shell runs the files in it", DW_HOME },
	{ ".bashrc.d", "Fedora's .bashrc runs the files in it", DW_HOME },
	{ ".config/environment.d", "systemd sets these variables (LD_PRELOAD, PATH) for the next session", DW_HOME },
	{ ".config/systemd/user", "user services start at the next login", DW_HOME },
	{ ".config/autostart", "the desktop starts these at the next login", DW_HOME },
	{ ".ssh/config", "ProxyCommand, LocalCommand and Match exec run on the next ssh (and git over ssh)", DW_HOME },
	{ ".npmrc", "npm runs what it names (node-options, script-shell, git) in every project", DW_HOME },
	{ ".yarnrc", "yarn runs the yarn-path it names in every project", DW_HOME },
	{ ".yarnrc.yml", "yarn runs the yarnPath it names in every project", DW_HOME },
	{ ".vimrc", "vim runs it at start", DW_HOME },
	{ ".config/nvim", "neovim runs init.lua/init.vim and plugins from it at start", DW_HOME },
	{ ".emacs", "emacs runs it at start", DW_HOME },
	{ ".emacs.d", "emacs runs init.el from it at start", DW_HOME },
	{ ".tmux.conf", "tmux runs its run-shell and if-shell commands at start", DW_HOME },
	{ ".gdbinit", "gdb runs it at start", DW_HOME },
	{ ".claude.json", "Claude Code starts the MCP servers it names, with full access", DW_HOME },
	{ ".codex/config.toml", "Codex starts the MCP servers and notify commands it names", DW_HOME_FILE },
	/* the agents' parts of $HOME that run (agent_files below: what they
	 * name), not the whole of ~/.codex or ~/.claude, which the agents
	 * write as they work (sessions, logs, auth, projects, todos) */
	{ ".codex/hooks.json", "Codex runs the hook commands it names with full access", DW_HOME },
	{ ".codex/hooks", "holds the scripts Codex's hooks run with full access", DW_HOME },
	{ ".codex/rules", "its rules let commands run outside Codex's sandbox", DW_HOME },
	{ ".codex/plugins", "Codex runs its plugins' hooks and MCP servers with full access", DW_HOME },
	{ ".claude/settings.json", "defines the hooks, status line and helpers Claude Code runs with full access",
	  DW_HOME },
	{ ".claude/hooks", "holds the scripts Claude Code's hooks run with full access", DW_HOME },
	{ ".claude/skills", "a skill can declare hooks Claude Code runs with full access", DW_HOME },
	{ ".claude/agents", "agent definitions run later with full access", DW_HOME },
	{ ".claude/commands", "agent commands run later with full access", DW_HOME },
	{ ".claude/plugins", "Claude Code runs its plugins' hooks and MCP servers with full access", DW_HOME },
	{ ".bash_completion", "bash-completion sources it in every interactive bash", DW_HOME },
	{ ".local/share/bash-completion/completions", "bash sources a completion file from it on the first tab", DW_HOME },
	{ ".config/fish/functions", "fish runs a function file from it when its name is typed", DW_HOME },
	{ ".ipython/profile_default/startup", "ipython runs the files in it at start", DW_HOME },
	{ ".gradle/init.d", "gradle runs the init scripts in it in every build", DW_HOME },
	{ ".config/Code/User/settings.json", "VS Code runs the terminal profiles and tasks it names", DW_HOME },
	{ ".config/Code/User/tasks.json", "VS Code runs its tasks (some at folder open)", DW_HOME },
	{ ".psqlrc", "psql runs its \\! shell escapes at start", DW_HOME },
	{ ".Rprofile", "R runs it at start", DW_HOME },
	{ ".irbrc", "irb runs it at start", DW_HOME },
	{ ".xprofile", "the display manager runs it at the next login", DW_HOME },
	{ ".pam_environment", "pam sets these variables (LD_PRELOAD) at the next login", DW_HOME },
	{ ".config/direnv/direnvrc", "direnv runs it for every allowed .envrc", DW_HOME },
	{ ".cargo/config.toml", "cargo runs the rustc wrappers and runners it names in every build", DW_HOME },
};

/* Directories (and files below a dot-directory) that agents and editors
 * run from, srt's list and sbx's additions. The ".claude/" rows are named
 * again in claude_children: change them together. */
static const struct { const char *name; const char *why; enum dwhere where; } dangerous_dirs[] = {
	{ ".vscode", "editor tasks and settings run outside the sandbox", DW_TOP },
	{ ".idea", "IDE run configurations run outside the sandbox", DW_TOP },
	{ ".claude/commands", "agent commands run later with full access", DW_TOP },
	{ ".claude/agents", "agent definitions run later with full access", DW_TOP },
	/* beyond srt */
	{ ".claude/settings.json", "defines hooks Claude Code runs with full access", DW_TOP },
	{ ".claude/settings.local.json", "defines hooks Claude Code runs with full access", DW_TOP },
	{ ".claude/hooks", "holds the scripts Claude Code's hooks run with full access", DW_TOP },
	{ ".claude/skills", "a skill can declare hooks Claude Code runs with full access", DW_TOP },
	{ ".codex", "Codex runs what its config.toml and hooks.json name (MCP servers, notify, hooks) with full "
	  "access, and its rules let commands past Codex's sandbox", DW_PROJECT },
	{ ".devcontainer", "initializeCommand runs on this machine when the editor opens the project", DW_EXISTING },
	{ ".cursor/mcp.json", "names MCP servers Cursor starts with full access", DW_EXISTING },
	{ ".gemini/settings.json", "names MCP servers and tools Gemini CLI runs with full access", DW_EXISTING },
};

/* Files below .claude/ the walk looks for: the ".claude/" rows of
 * dangerous_dirs, without the prefix. Their order is free, but the two
 * lists must name the same files: change them together. */
static const char *const claude_children[] = { "commands", "agents", "settings.json", "settings.local.json", "hooks",
	"skills" };

/* ---- git: what a repository runs (gitrepository-layout(5), githooks(5),
 * git-config(1)) ------------------------------------------------------
 * Inside a writable root, every entry of a repository directory through
 * which git runs code or reads configuration from elsewhere is read-only;
 * the rest of .git stays writable, because git makes its lock files
 * (index.lock, HEAD.lock, config.lock) in .git itself: a read-only .git
 * with writable exceptions cannot work. A missing one is held, in every
 * repository the scan protects (at a root's top, nested, bare, a
 * submodule's under modules/, a worktree's under worktrees/): a
 * placeholder git reads as absent (an empty config, an empty hooks
 * directory, a commondir holding "."), bound read-only for the run and
 * gone after it, so nothing the command writes there is left for the
 * audit (9b) to clean up.
 *
 * The rest of gitrepository-layout(5), and why it is left writable:
 *   info/attributes    selects filter, diff and merge drivers, but only
 *                      ones a config defines; the work tree's own
 *                      .gitattributes can do the same
 *   objects/ (info/alternates), refs/, packed-refs, HEAD, index, logs/,
 *   shallow, info/grafts, info/exclude, info/sparse-checkout
 *                      what git stores and shows, not what it runs; git
 *                      writes them in every commit and fetch
 *   branches/, remotes/
 *                      a remote's URL: a transport git has (ext:: needs
 *                      protocol.allow, in the config)
 *   rebase-merge/, sequencer/
 *                      the todo list's exec lines, and the merge strategy
 *                      (a path, from the work tree), run on the person's
 *                      `git rebase --continue`; git makes these in every
 *                      rebase (a placeholder there reads as one in
 *                      progress), so the audit (audit_todo, audit_strategy)
 *                      disables them after
 *   a worktrees/NAME/ or modules/NAME/ not there before the run
 *                      a repository the command makes: `git worktree add`
 *                      and `git submodule add` must work; audited after */
enum gd_flags {
	GD_HOLD = 1,		/* held when missing */
	GD_CONFIG = 2,		/* allow-git-config lifts it */
};

static const struct gitdir_entry {
	const char *name;
	enum phkind ph;
	unsigned flags;		/* enum gd_flags */
	const char *why;
} gitdir_entries[] = {
	{ "hooks", PH_DIR, GD_HOLD, "git runs hooks on commit, checkout, merge, rebase and push" },
	{ "config", PH_FILE, GD_HOLD | GD_CONFIG,
	  "git runs what it names (core.fsmonitor, core.pager, aliases, filters) and reads what it includes" },
	{ "config.worktree", PH_FILE, GD_HOLD, "git reads it as config once extensions.worktreeConfig is on, "
	  "as `git sparse-checkout init` and `git config --worktree` setups switch it on later" },
	{ "commondir", PH_DOT, GD_HOLD, "git takes config and hooks from the directory it names" },
}, worktree_entries[] = {	/* $GIT_COMMON_DIR/worktrees/NAME: a linked worktree's own gitdir */
	/* not held: without one, worktrees/NAME has no objects, and git
	 * takes it for no repository at all */
	{ "commondir", PH_DOT, 0, "git takes config and hooks from the directory it names" },
	{ "gitdir", PH_FILE, 0, "names the worktree's .git file; git worktree repair and prune follow it" },
	{ "config.worktree", PH_FILE, GD_HOLD, "git reads it as the worktree's config once "
	  "extensions.worktreeConfig is on" },
};

/* Settings whose value git executes or reads config from. The planner
 * protects the paths they name (when those lie in a writable root); the
 * audit of repositories created during a run (9b) removes the settings.
 * sub: NULL any, "" none, "*" any subsection; key "*": any key. */
enum gkv {
	GV_HOOKS,	/* a directory git runs hooks from */
	GV_INCLUDE,	/* another config file, relative to the including one */
	GV_CMD,		/* a shell command: the paths among its words */
	GV_SETTING,	/* no path, but it lets something run: audit only */
};

static const struct git_key {
	const char *section, *sub, *key;
	enum gkv kind;
	const char *why;
} git_config_keys[] = {
	{ "core", "", "hookspath", GV_HOOKS, "git runs the hooks in it" },
	{ "init", "", "templatedir", GV_HOOKS, "git init and clone copy hooks from it" },
	{ "include", "", "path", GV_INCLUDE, "git reads it as config" },
	{ "includeif", "*", "path", GV_INCLUDE, "git reads it as config" },
	{ "core", "", "fsmonitor", GV_CMD, "git status runs it" },
	{ "core", "", "sshcommand", GV_CMD, "git fetch and push run it" },
	{ "core", "", "pager", GV_CMD, "git log and diff run it" },
	{ "core", "", "editor", GV_CMD, "git commit runs it" },
	{ "core", "", "askpass", GV_CMD, "git runs it for a password" },
	{ "core", "", "gitproxy", GV_CMD, "git fetch runs it" },
	{ "core", "", "alternaterefscommand", GV_CMD, "git fetch and push run it" },
	{ "sequence", "", "editor", GV_CMD, "git rebase -i runs it" },
	{ "pager", "", "*", GV_CMD, "the command it names runs its output through it" },
	{ "alias", NULL, "*", GV_CMD, "git runs \"!\" aliases in a shell; others may pass -c settings" },
	{ "filter", "*", "clean", GV_CMD, "git add runs it" },
	{ "filter", "*", "smudge", GV_CMD, "git checkout runs it" },
	{ "filter", "*", "process", GV_CMD, "git add and checkout run it" },
	{ "diff", "*", "textconv", GV_CMD, "git diff and log run it" },
	{ "diff", "*", "command", GV_CMD, "git diff runs it" },
	{ "diff", "", "external", GV_CMD, "git diff runs it" },
	{ "merge", "*", "driver", GV_CMD, "git merge runs it" },
	{ "mergetool", "*", "cmd", GV_CMD, "git mergetool runs it" },
	{ "mergetool", "*", "path", GV_CMD, "git mergetool runs it" },
	{ "difftool", "*", "cmd", GV_CMD, "git difftool runs it" },
	{ "difftool", "*", "path", GV_CMD, "git difftool runs it" },
	{ "credential", NULL, "helper", GV_CMD, "git runs it for credentials" },
	{ "gpg", NULL, "program", GV_CMD, "git commit -S and log --show-signature run it" },
	{ "gpg", "ssh", "defaultkeycommand", GV_CMD, "git commit -S runs it" },
	{ "interactive", "", "difffilter", GV_CMD, "git add -p runs it" },
	{ "uploadpack", "", "packobjectshook", GV_CMD, "git upload-pack runs it" },
	{ "remote", "*", "uploadpack", GV_CMD, "git fetch runs it" },
	{ "remote", "*", "receivepack", GV_CMD, "git push runs it" },
	{ "remote", "*", "vcs", GV_CMD, "git fetch runs git-remote-<vcs>" },
	{ "submodule", "*", "update", GV_CMD, "git submodule update runs \"!\" commands" },
	{ "hook", "*", "command", GV_CMD, "git runs it as a hook (git 2.46+)" },
	{ "trailer", "*", "command", GV_CMD, "git interpret-trailers runs it" },
	{ "imap", "", "tunnel", GV_CMD, "git imap-send runs it" },
	{ "lfs", "*", "path", GV_CMD, "git lfs runs the custom transfer agent it names" },
	{ "lfs", "*", "clean", GV_CMD, "git lfs runs the extension on git add" },
	{ "lfs", "*", "smudge", GV_CMD, "git lfs runs the extension on checkout" },
	{ "trailer", "*", "cmd", GV_CMD, "git interpret-trailers runs it" },
	{ "browser", "*", "cmd", GV_CMD, "git web--browse runs it" },
	{ "browser", "*", "path", GV_CMD, "git web--browse runs it" },
	{ "man", "*", "cmd", GV_CMD, "git help runs it" },
	{ "man", "*", "path", GV_CMD, "git help runs it" },
	{ "sendemail", NULL, "sendmailcmd", GV_CMD, "git send-email runs it" },
	{ "sendemail", NULL, "smtpserver", GV_CMD, "git send-email runs it when it is a path" },
	{ "sendemail", NULL, "tocmd", GV_CMD, "git send-email runs it" },
	{ "sendemail", NULL, "cccmd", GV_CMD, "git send-email runs it" },
	{ "protocol", NULL, "allow", GV_SETTING, "\"ext::\" remotes run commands once their protocol is allowed" },
};

/* git's hook names (githooks(5)): protected one by one when core.hooksPath
 * names a writable root itself, which cannot be made read-only whole. */
static const char *const git_hook_names[] = {
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
	"pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
	"reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
	"fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit",
	"post-index-change",
};

/* git's false: "false", "no", "off", "0" or empty; any other value is true */
static bool
gitcfg_false(const char *v)
{
	return v && (strcasecmp(v, "false") == 0 || strcasecmp(v, "no") == 0 || strcasecmp(v, "off") == 0 ||
	    strcmp(v, "0") == 0 || !*v);
}

static const struct git_key *
git_key_of(const struct gitcfg_entry *e)
{
	size_t i;

	for (i = 0; i < LEN(git_config_keys); i++)
		if (gitcfg_is(e, git_config_keys[i].section, git_config_keys[i].sub, git_config_keys[i].key))
			return &git_config_keys[i];
	return NULL;
}

/* Would git treat this entry as one that runs something? For the audit:
 * an alias runs a shell only with "!", but an alias without it can still
 * pass "-c core.fsmonitor=...", so every alias with a "-c" or "!" counts;
 * core.fsmonitor=false and the like do not. */
static bool
git_key_runs(const struct gitcfg_entry *e, const struct git_key *k)
{
	if (!k)
		return false;
	if (gitcfg_is(e, "alias", NULL, "*"))
		return e->value && (e->value[0] == '!' || strstr(e->value, "-c") || strstr(e->value, "--config"));
	if (gitcfg_is(e, "core", "", "fsmonitor"))
		return !gitcfg_false(e->value);
	return true;
}

/* The files a command-valued setting runs, as written (relative to the work
 * tree, or ~/...): a word in program position that contains a "/" (the
 * first, or one after a shell operator or a prefix such as `env`, `exec`,
 * `then`), and the script after an interpreter (`sh x.sh`, `node t.js`:
 * read from the work tree). Other words are arguments: protecting them
 * would make `!cd ./pkg && make` keep ./pkg read-only, and the program
 * decides what it does with them. Quotes are dropped. git_args: an alias
 * without "!" runs git, not a shell: only its -c settings' values count,
 * as commands (`-c core.fsmonitor=./x status`). */
static void
git_cmd_words(const char *cmd, bool git_args, struct vec *runs)
{
	static const char *const interpreters[] = { "sh", "bash", "zsh", "dash", "ksh", "fish", "node", "deno",
		"bun", "python", "python3", "perl", "ruby", "php", "source", "." };
	static const char *const prefixes[] = { "env", "exec", "command", "nohup", "time", "then", "do", "else",
		"if", "while", "until", "{", "!", "xargs" };
	const char *s = cmd;
	bool program = true, script = false, after_c = false;
	int n = 0;
	size_t i;

	if (*s == '!')
		s++;
	while (*s && n < 64) {
		struct buf w = { 0 };
		const char *word;
		bool interp = false, prefix = false;

		for (; *s && (isspace((unsigned char)*s) || strchr(";|&<>()`$", *s)); s++)
			if (strchr(";|&(`$", *s))
				program = true;
		while (*s && !isspace((unsigned char)*s) && !strchr(";|&<>()`$", *s)) {
			if (*s != '"' && *s != '\'')
				buf_putc(&w, *s);
			s++;
		}
		if (!w.n)
			continue;
		n++;
		word = w.p;
		if (git_args) {
			if (after_c && strchr(word, '='))
				git_cmd_words(strchr(word, '=') + 1, false, runs);
			after_c = strcmp(word, "-c") == 0;
		} else if (word[0] == '-') {
			if (strcmp(word, "-c") == 0) {	/* `sh -c CMD`: a command follows, not a script */
				script = false;
				program = true;
			}
		} else if (program && strchr(word, '=') && (!strchr(word, '/') || strchr(word, '=') < strchr(word, '/'))) {
			;	/* A=B before the program: it still follows */
		} else {
			for (i = 0; i < LEN(interpreters); i++)
				interp |= strcmp(word, interpreters[i]) == 0;
			for (i = 0; i < LEN(prefixes); i++)
				prefix |= strcmp(word, prefixes[i]) == 0;
			if (script || (program && (strchr(word, '/') || strncmp(word, "~/", 2) == 0)))
				vec_push(runs, astrdup(word));
			script = interp;
			program = interp || prefix;
		}
		free(w.p);
	}
}

/* What turns the policy's path rules and the disk into facts (struct
 * fact): the rules resolved, the globs expanded, the scan of the writable
 * roots for dangerous names and git repositories. (Not to be confused
 * with the proxy's resolver, which is DNS.) */
struct fact_finder {
	const char *cwd, *home;	/* real paths; home may be NULL */
	const struct policy *p;
	const struct disk *dk;
	const struct disk *sdk;	/* the walk's listings: dk, or the scan cache over it */
	struct vec *facts;	/* of struct fact */
	struct vec roots;	/* of const char *: writable directories to scan */
	struct vec warnings;	/* of const char *: printed by main, one line each */
	long walked;
	struct err *e;
	struct vec git_global;	/* of struct gitcfg_entry: the global and system config */
	struct vec gitdirs;	/* of const char *: repositories already protected */
	bool dotless;		/* a protect name without a leading dot: no fast path in the walk */
	struct vec dirs;	/* of const char *: every directory the scan and fx_seen_repos listed (9b) */
	long seen_walked;	/* fx_seen_repos's entries, bounded apart from the scan's */
	struct vec agent_seen;	/* of const char *: "file\nproject", each agent settings file read for a project */
	struct vec agent_read;	/* of struct agent_read: the commands each holds, read once */
	long agent_paths;	/* paths protected for them (SBX_MAX_AGENT_PATHS) */
};

/* The file name of the default policy's rules (their denies are generic:
 * not every machine has ~/.aws, and that is no typo). */
static const char default_policy_file[] = "default policy";

/* A deny that names nothing is a warning by default: a typo in a deny
 * must never pass unnoticed. The usual credential stores (the default
 * policy's list, which policies copy) are not every machine's, so those
 * say nothing. */
static void __attribute__((format(printf, 3, 4)))
fx_warn(struct fact_finder *fx, const struct pathrule *r, const char *fmt, ...)
{
	va_list ap;
	char msg[1200];

	if (r && r->file && strcmp(r->file, default_policy_file) == 0)
		return;
	if (r && fx->home && pol_is_default_deny(r->path, fx->home))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < fx->warnings.n; i++)
		if (strcmp(fx->warnings.v[i], msg) == 0)
			return;	/* one line each: a config read for every worktree of a repository */
	vec_push(&fx->warnings, astrdup(msg));
}

static int
fx_fail(struct fact_finder *fx, const struct pathrule *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(fx->e, r ? r->file : NULL, r ? r->line : 0, 0, fmt, ap);
	va_end(ap);
	return -1;
}

/* Add a write deny for a resolved path: an existing one is bound read-only,
 * a missing one becomes a placeholder at its first missing name. */
static void
fx_deny_write_ph(struct fact_finder *fx, const struct resolved *res, const char *why, enum phkind ph)
{
	if (res->kind == FK_MISSING) {
		/* the kind asked for only when the missing name is the path's
		 * last; an ancestor of it must be a directory */
		plan_add_placeholder(fx->facts, res->first_missing,
		    strcmp(res->first_missing, res->path) == 0 ? ph : PH_DIR, why);
	} else if (res->kind != FK_UNREADABLE) {
		plan_add_fact(fx->facts, res->path, res->kind, RB_DENY_WRITE, why);
	}
}

static void
fx_deny_write(struct fact_finder *fx, const struct resolved *res, const char *why)
{
	fx_deny_write_ph(fx, res, why, PH_DIR);
}

/* Expand one rule into the spelled paths it names: itself, or its glob matches. */
static int
fx_expand(struct fact_finder *fx, const struct pathrule *r, struct vec *out)
{
	const char *why;
	size_t i;

	if (r->literal || !has_glob_chars(r->path)) {
		vec_push(out, (void *)r->path);
		return 0;
	}
	if (glob_expand(fx->dk, r->path, out, &why) < 0)
		return fx_fail(fx, r, "%s: %s", r->path, why);
	note("%s:%d: glob %s matched %zu path%s", r->file ? r->file : "-", r->line, r->path, out->n,
	    out->n == 1 ? "" : "s");
	for (i = 0; i < out->n; i++)
		note("  %s", (const char *)out->v[i]);
	return 0;
}

static const char *
rule_why(const char *directive, const struct pathrule *r)
{
	if (r->file && r->line)
		return aprintf("%s %s (%s:%d)", directive, r->path, r->file, r->line);
	return aprintf("%s %s", directive, r->path);
}

/* Rules spelled through a symlink. SECURITY: bwrap follows every symlink
 * in the path of a mount, and a command can make a link wherever it can
 * write; the link outlives the run. One run's `ln -s ../other build` in
 * the project, and the next run of `allow-write .` and `allow-write
 * ./build` writes ../other (or ~/.ssh, or /etc); of `allow-read ./build`
 * under a deny-read, reads it. So an allow rule whose path follows a
 * symlink that lies in a place the policy makes writable is not followed:
 * it is skipped, with one line naming the link, where it leads and what to
 * name instead, and the run goes on without it. Nothing is widened, and a
 * planted link cannot stop every later run either, as a refusal would. A
 * write deny spelled through such a link pins it (fx_rules). A link
 * anywhere else (/var/run -> /run, macOS's /tmp -> private/tmp, a home
 * reached through a link the person made outside every writable root) no
 * command of this policy could have made: it is followed, as the kernel
 * follows it, and only a write root it widens to a broader directory is
 * refused (fx_rules). srt skips every write root whose real path is
 * neither its spelled one nor below it (isSymlinkOutsideBoundary), which
 * also breaks a home reached through a link, and follows allowRead's. The
 * policy's writable places are the real directories of all its allow-write
 * rules, a skipped one included (so no order of the rules decides); a link
 * that a run with wider roots left is judged by this run's. */

/* The real directories the policy's allow-write rules name, globs
 * expanded: where a command may write, so may have left a symlink. A rule
 * that names nothing, or fails, adds nothing (fx_rules says why). */
static void
write_areas(const struct disk *dk, const struct policy *p, struct vec *out)
{
	size_t i, j;

	for (i = 0; i < p->paths[PL_ALLOW_WRITE].n; i++) {
		const struct pathrule *r = p->paths[PL_ALLOW_WRITE].v[i];
		struct vec spelled = { 0 };
		const char *why;

		if (r->literal || !has_glob_chars(r->path))
			vec_push(&spelled, (void *)r->path);
		else if (glob_expand(dk, r->path, &spelled, &why) < 0)
			continue;
		for (j = 0; j < spelled.n; j++) {
			struct resolved res;

			if (resolve_path(dk, spelled.v[j], &res, &why) == 0 && res.kind == FK_DIR)
				vec_push(out, (void *)res.path);
		}
	}
}

/* The one of areas a symlink at link lies in, or NULL. */
static const char *
link_area(const char *link, const struct vec *areas)
{
	size_t i;

	for (i = 0; i < areas->n; i++)
		if (path_within(link, areas->v[i]))
			return areas->v[i];
	return NULL;
}

/* The first symlink res followed that lies in one of areas (a command
 * could have made it), with *area set to that one; NULL if none. */
static const char *
planted_link(const struct resolved *res, const struct vec *areas, const char **area)
{
	size_t i;

	for (i = 0; i < res->links.n; i++)
		if ((*area = link_area(res->links.v[i], areas)))
			return res->links.v[i];
	return NULL;
}

/* The line that says a write root is skipped for a planted link. */
static const char *
planted_link_warning(const struct disk *dk, const char *why, const struct resolved *res, const char *link,
    const char *area, const char *able)
{
	char to[PATH_MAX];

	if (dk->ops->readlink(dk->ctx, link, to, sizeof(to)) < 0)
		str_copy(to, "?", sizeof(to));
	return aprintf("%s: skipped, not followed: %s is a symlink (to %s) in the writable root %s, where a "
	    "command could have made it; to make %s %s, name it itself", why, link, to, area, res->path, able);
}

/* A deny-read in the directory form (X with a trailing slash-star-star:
 * what lies beneath X) names every entry under each directory X, and
 * collapses to X, hidden whole, as srt's expandReadDenyGlobLinux does:
 * an empty X names nothing, so it is not hidden (srt: nothing to deny).
 * Where an allow-read or allow-write (resolved earlier: fx_rules runs the
 * allows first) shows a path R at or under X again, what lies directly
 * beneath R is still named by the deny and stays hidden, as in srt (the
 * entries deeper down go with those); they are added to spelled, to be
 * resolved and hidden as any match is. Returns 1, 0 for an empty X, or -1
 * (fx_fail). */
static int
fx_dir_form_deny(struct fact_finder *fx, const struct pathrule *r, const char *x, struct vec *spelled)
{
	void *dh = fx->dk->ops->opendir(fx->dk->ctx, NULL, x);
	const char *name;
	enum fkind k;
	size_t i, n = fx->facts->n;
	bool empty = true;

	if (dh) {
		empty = fx->dk->ops->readdir(fx->dk->ctx, dh, &name, &k) != 1;
		fx->dk->ops->closedir(fx->dk->ctx, dh);
	}
	if (empty)
		return 0;
	for (i = 0; i < n; i++) {
		const struct fact *f = fx->facts->v[i];

		if (!(f->rules & (RB_SHOW | RB_WRITE)) || f->kind != FK_DIR || !path_within(f->path, x) ||
		    !(dh = fx->dk->ops->opendir(fx->dk->ctx, NULL, f->path)))
			continue;
		while (fx->dk->ops->readdir(fx->dk->ctx, dh, &name, &k) == 1) {
			if (spelled->n > SBX_MAX_GLOB_MATCHES) {
				fx->dk->ops->closedir(fx->dk->ctx, dh);
				return fx_fail(fx, r, "%s: more than %d paths under what allow-read and allow-write show "
				    "again inside it; make it narrower", r->path, SBX_MAX_GLOB_MATCHES);
			}
			vec_push(spelled, path_join(f->path, name));
		}
		fx->dk->ops->closedir(fx->dk->ctx, dh);
	}
	return 1;
}

static int
fx_rules(struct fact_finder *fx, enum path_list which, const char *directive)
{
	const struct vec *rules = &fx->p->paths[which];
	struct vec areas = { 0 };
	bool allow = which == PL_ALLOW_WRITE || which == PL_ALLOW_READ;
	size_t i, j;

	if (which != PL_DENY_READ && which != PL_DENY_SECRET)
		write_areas(fx->dk, fx->p, &areas);

	for (i = 0; i < rules->n; i++) {
		const struct pathrule *r = rules->v[i];
		struct vec spelled = { 0 };
		const char *why = rule_why(directive, r);
		size_t matched;

		if (fx_expand(fx, r, &spelled) < 0)
			return -1;
		matched = spelled.n;	/* past it: entries fx_dir_form_deny adds */
		if (!spelled.n && which != PL_ALLOW_READ)
			fx_warn(fx, r, "%s: the glob matches nothing (a typo?)%s", why,
			    which == PL_ALLOW_WRITE ? "" : "; a file created there later is not covered");
		for (j = 0; j < spelled.n; j++) {
			const char *sp = spelled.v[j], *err, *link, *area;
			struct resolved res;
			size_t k;

			if (resolve_path(fx->dk, sp, &res, &err) < 0) {
				if (allow && (link = planted_link(&res, &areas, &area))) {
					vec_push(&fx->warnings, (void *)aprintf("%s: skipped, not followed: %s is a "
					    "symlink in the writable root %s, where a command could have made it, "
					    "and the path through it does not resolve (%s)", why, link, area, err));
					continue;
				}
				return fx_fail(fx, r, "%s %s: %s", directive, sp, err);
			}
			if (allow && (link = planted_link(&res, &areas, &area))) {
				vec_push(&fx->warnings, (void *)planted_link_warning(fx->dk, why, &res, link, area,
				    which == PL_ALLOW_WRITE ? "writable" : "readable"));
				continue;
			}
			/* SECURITY: a write deny spelled through a symlink in a writable
			 * place holds only while the link does: a command that replaced
			 * it would write at the spelled path. Each such link is pinned
			 * (as srt masks it), and the target is denied below. */
			for (k = 0; which == PL_DENY_WRITE && k < res.links.n; k++)
				if (link_area(res.links.v[k], &areas))
					plan_add_fact(fx->facts, res.links.v[k], FK_LINK, RB_LINK_PIN,
					    aprintf("%s (a symlink on its way: pinned)", why));
			/* what a glob matched or a symlink leads to, checked as the
			 * spelled rule was (3.3): a deny there is refused, not skipped */
			if ((err = path_refused(which, res.path))) {
				const char *what = strcmp(sp, r->path) ? aprintf("matches %s", sp) : NULL;

				if (strcmp(res.path, sp) != 0)
					what = aprintf("%s%sleads to %s", what ? what : "", what ? ", which " : "",
					    res.path);
				return fx_fail(fx, r, "%s %s: %s: %s", directive, r->path, what ? what : "refused", err);
			}
			if (path_within(res.path, "/proc") || path_within(res.path, "/dev")) {
				/* bwrap mounts a fresh /dev and /proc over these; an
				 * allow there changes nothing (the denies are refused above) */
				if (which == PL_ALLOW_WRITE && path_within(res.path, "/proc"))
					return fx_fail(fx, r, "%s %s: /proc cannot be made writable", directive, sp);
				note("%s: %s is under /dev or /proc, which sbx mounts itself; skipped", why, sp);
				continue;
			}
			if (which == PL_ALLOW_WRITE && path_within(res.path, "/sys"))
				return fx_fail(fx, r, "%s %s: /sys cannot be made writable", directive, sp);
			/* the directory form names what lies beneath a directory: a
			 * file of that name (or a link to one) is not meant (srt) */
			if (r->dir_form && j < matched && res.kind != FK_DIR && res.kind != FK_MISSING &&
			    res.kind != FK_UNREADABLE) {
				if (which != PL_ALLOW_READ && which != PL_ALLOW_WRITE && !has_glob_chars(r->path))
					fx_warn(fx, r, "%s: %s is not a directory, so nothing lies beneath it to deny (a "
					    "typo? name the file itself)", why, sp);
				else
					note("%s: %s is not a directory, so nothing lies beneath it", why, sp);
				continue;
			}
			if (which == PL_DENY_READ && r->dir_form && j < matched && res.kind == FK_DIR) {
				int rc = fx_dir_form_deny(fx, r, res.path, &spelled);

				if (rc < 0)
					return -1;
				if (rc == 0) {
					note("%s: %s is empty: nothing beneath it to hide (as srt)", why, sp);
					continue;
				}
			}
			switch (which) {
			case PL_ALLOW_WRITE:
				if (res.kind == FK_MISSING || res.kind == FK_UNREADABLE) {
					fx_warn(fx, r, "%s: %s; skipped", why, res.kind == FK_MISSING ?
					    "does not exist, nor does its parent directory" : "cannot be inspected");
					continue;
				}
				/* a link no command could have made (those were skipped
				 * above) that widens the root: the policy's own mistake */
				if (res.via_link && strcmp(res.path, sp) != 0 &&
				    (path_within(sp, res.path) || path_depth(res.path) <= 1))
					return fx_fail(fx, r,
					    "%s %s: is a symlink to %s, a broader directory; name %s itself if that is meant",
					    directive, sp, res.path, res.path);
				plan_add_fact(fx->facts, res.path, res.kind, RB_WRITE, why);
				if (res.kind == FK_DIR)
					vec_push(&fx->roots, (void *)res.path);
				break;
			case PL_ALLOW_READ:
				if (res.kind != FK_MISSING && res.kind != FK_UNREADABLE)
					plan_add_fact(fx->facts, res.path, res.kind, RB_SHOW, why);
				break;
			case PL_DENY_READ:
				if (res.kind == FK_MISSING || res.kind == FK_UNREADABLE) {
					fx_warn(fx, r, "%s: %s (a typo?), so nothing is hidden; a file created there later is "
					    "readable", why, res.kind == FK_MISSING ? "does not exist" : "cannot be inspected");
					continue;
				}
				plan_add_fact(fx->facts, res.path, res.kind, RB_HIDE, why);
				break;
			case PL_DENY_SECRET:
				if (res.kind == FK_MISSING || res.kind == FK_UNREADABLE) {
					fx_warn(fx, r, "%s: %s (a typo?), so nothing is hidden; a file created there later is "
					    "readable", why, res.kind == FK_MISSING ? "does not exist" : "cannot be inspected");
					continue;
				}
				plan_add_fact(fx->facts, res.path, res.kind, RB_HIDE | RB_SECRET, why);
				break;
			case PL_DENY_WRITE:
				if (res.kind == FK_MISSING)
					fx_warn(fx, r, "%s: does not exist (a typo?); nothing can be created there inside the "
					    "sandbox", why);
				fx_deny_write(fx, &res, why);
				break;
			case PL_COUNT:
				break;
			}
		}
	}
	return 0;
}

static bool
name_ieq(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

/* A dangerous name, or a directory on the way to one, that is a symlink
 * (a dotfiles repository's .bashrc, .claude/commands -> ../shared/commands,
 * a link an earlier run left dangling). SECURITY: a mount on the link's
 * target does not stop the command from replacing the link itself, so the
 * link is pinned (sbx-init mounts it onto itself without following it; a
 * mount point can be neither removed nor renamed), and, when deny_target,
 * its target is denied as the name would be. A target that does not exist
 * cannot be covered without creating it: where the command could create
 * it, the planner refuses the run (RB_DANGLING). Returns 1 when the target
 * exists, 0 when it does not, -1 with fx->e filled on error. */
static int
fx_cover_link(struct fact_finder *fx, const char *link, const char *why, bool deny_target)
{
	struct resolved res;
	const char *err;

	plan_add_fact(fx->facts, link, FK_LINK, RB_LINK_PIN, aprintf("%s (a symlink: pinned)", why));
	if (resolve_path(fx->dk, link, &res, &err) < 0)
		return fx_fail(fx, NULL, "%s: %s", link, err);
	if (res.kind == FK_MISSING) {
		plan_add_fact(fx->facts, res.first_missing, FK_MISSING, RB_DANGLING,
		    aprintf("%s, the target of the symlink %s (%s)", res.first_missing, link, why));
		return 0;
	}
	if (deny_target)
		fx_deny_write(fx, &res, aprintf("%s (the target of the symlink %s)", why, link));
	return 1;
}

/* A mandatory deny at root/rel; a missing one is held by a placeholder
 * when hold_missing. Symlinks on the way are covered as fx_cover_link says. */
static int
fx_mandatory_ph(struct fact_finder *fx, const char *root, const char *rel, const char *why, bool hold_missing,
    enum phkind ph)
{
	char *path = path_join(root, rel), *p;
	const char *reason = aprintf("mandatory deny %s: %s", rel, why);
	struct resolved res;
	const char *err;

	for (p = path + strlen(root) + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char *prefix = astrndup(path, (size_t)(p - path));
			int rc;

			if (fx->dk->ops->lstat(fx->dk->ctx, prefix, NULL) == FK_LINK) {
				rc = fx_cover_link(fx, prefix, reason, !*p);
				if (rc <= 0)
					return rc;	/* an error, or a dangling link: nothing below it */
				if (!*p)
					return 0;	/* the name itself: its target is denied */
			}
			if (!*p)
				break;
		}
	}
	if (resolve_path(fx->dk, path, &res, &err) < 0)
		return fx_fail(fx, NULL, "%s: %s", path, err);
	if (res.kind == FK_MISSING && !hold_missing)
		return 0;
	fx_deny_write_ph(fx, &res, reason, ph);
	return 0;
}

static int
fx_mandatory(struct fact_finder *fx, const char *root, const char *rel, const char *why, bool hold_missing)
{
	return fx_mandatory_ph(fx, root, rel, why, hold_missing, PH_DIR);
}

/* A mandatory deny of an absolute path, when it lies in a writable root
 * (outside them it is read-only anyway). */
static int
fx_protect(struct fact_finder *fx, const char *path, const char *why, bool hold, enum phkind ph)
{
	struct resolved res;
	const char *err, *root = NULL;
	size_t i;

	if (resolve_path(fx->dk, path, &res, &err) < 0)
		return 0;	/* git cannot reach it either */
	for (i = 0; i < fx->roots.n; i++)
		if (path_within(res.path, fx->roots.v[i]) && strcmp(res.path, fx->roots.v[i]) != 0 &&
		    (!root || strlen(fx->roots.v[i]) > strlen(root)))
			root = fx->roots.v[i];
	if (!root)
		return 0;
	return fx_mandatory_ph(fx, root, res.path + strlen(root) + 1, why, hold, ph);
}

/* Read a git config file and, after it, the files it includes (include.path,
 * and includeIf.*.path whatever the condition: a file named under any
 * condition is protected). A missing file reads as empty, as in git.
 * *budget bounds the bytes read over all the files (includes can fan out).
 * Returns 0; 1 with *why when one of the files has a line git cannot
 * parse (git then refuses every command that reads it; out holds what
 * the other lines say, gitcfg_scan); or -1 with *why. */
static int
git_config_read(const struct disk *dk, const char *home, const char *path, int depth, size_t *budget,
    struct vec *out, const char **why)
{
	/* the file's text, kept between files (a run reads three or four:
	 * musl mapped and unmapped a buffer for each); done with before an
	 * include is read (gitcfg_parse copies what it keeps), so the
	 * recursion below never finds it in use */
	static struct buf b;
	size_t start = out->n, i, n;
	int line, rc;

	if (depth > SBX_MAX_GITCFG_DEPTH) {
		*why = aprintf("%s: git config includes nested more than %d deep", path, SBX_MAX_GITCFG_DEPTH);
		return -1;
	}
	buf_recycle(&b);
	if (dk->ops->readfile(dk->ctx, path, SBX_MAX_GITCFG_BYTES, &b) < 0) {
		int err = errno;

		if (err == ENOENT || err == ENOTDIR || err == EACCES)
			return 0;	/* git skips these too (EACCES with a warning) */
		*why = aprintf("%s: git config that cannot be read (%s)", path, strerror(err));
		return -1;
	}
	if (b.n > *budget) {
		*why = aprintf("%s: git config and its includes pass %d bytes", path, 4 * SBX_MAX_GITCFG_BYTES);
		return -1;
	}
	*budget -= b.n;
	rc = gitcfg_scan(b.p ? b.p : "", b.n, astrdup(path), out, &line, true);
	if (rc < 0) {
		*why = aprintf("%s:%d: git config sbx cannot read as git does (a NUL byte, or more than %d entries)",
		    path, line, SBX_MAX_GITCFG_ENTRIES);
		return -1;
	}
	if (rc > 0)
		*why = aprintf("%s:%d: a line git cannot parse", path, line);
	buf_recycle(&b);
	n = out->n;
	for (i = start; i < n; i++) {
		const struct gitcfg_entry *e = out->v[i];
		const char *inc, *err, *inc_why;
		struct resolved res;
		int r;

		if ((gitcfg_is(e, "include", "", "path") || gitcfg_is(e, "includeif", "*", "path")) &&
		    (inc = gitcfg_path(e->value, path_dirname(path), home)) &&
		    resolve_path(dk, inc, &res, &err) == 0 && res.kind != FK_MISSING) {
			r = git_config_read(dk, home, res.path, depth + 1, budget, out, &inc_why);
			if (r < 0 || (r > 0 && rc == 0)) {
				*why = inc_why;
				if (r < 0)
					return -1;
				rc = 1;
			}
		}
	}
	return rc;
}

/* Protect what a repository's effective config (the global files, then
 * the repository's own) names: hook directories, included files, and the
 * programs and scripts of commands. top is the work tree (relative
 * hooksPath and commands are taken from there). */
static int
fx_git_named(struct fact_finder *fx, const struct vec *cfg, const char *top)
{
	size_t i, j, pass;

	for (pass = 0; pass < 2; pass++) {
		const struct vec *v = pass ? cfg : &fx->git_global;

		for (i = 0; v && i < v->n; i++) {
			const struct gitcfg_entry *e = v->v[i];
			const struct git_key *k = git_key_of(e);
			const char *why, *path;
			struct vec runs = { 0 };

			if (!k || !e->value || k->kind == GV_SETTING)
				continue;
			why = aprintf("%s.%s%s%s in %s:%d: %s", e->section, e->sub ? e->sub : "", e->sub ? "." : "",
			    e->key, e->file, e->line, k->why);
			switch (k->kind) {
			case GV_HOOKS:
				if (!(path = gitcfg_path(e->value, top, fx->home)))
					break;
				for (j = 0; j < fx->roots.n; j++)
					if (path_within(fx->roots.v[j], path))
						break;
				if (j < fx->roots.n) {
					/* a writable root itself: its hook names, one by one */
					for (j = 0; j < LEN(git_hook_names); j++)
						if (fx_protect(fx, path_join(path, git_hook_names[j]), why, false, PH_DIR) < 0)
							return -1;
					break;
				}
				if (fx_protect(fx, path, why, true, PH_DIR) < 0)
					return -1;
				/* husky: hooksPath .husky/_ holds stubs that run .husky/<hook> */
				if (strcmp(strrchr(path, '/') + 1, "_") == 0 &&
				    fx_protect(fx, path_dirname(path), why, false, PH_DIR) < 0)
					return -1;
				break;
			case GV_INCLUDE:
				if ((path = gitcfg_path(e->value, path_dirname(e->file), fx->home)) &&
				    fx_protect(fx, path, why, true, PH_FILE) < 0)
					return -1;
				break;
			case GV_CMD:
				if (!top)
					break;
				git_cmd_words(e->value, gitcfg_is(e, "alias", NULL, "*") && e->value[0] != '!', &runs);
				for (j = 0; j < runs.n; j++)
					if ((path = gitcfg_path(runs.v[j], top, fx->home)) &&
					    fx_protect(fx, path, why, true, PH_DIR) < 0)
						return -1;
				break;
			case GV_SETTING:
				break;
			}
		}
	}
	return 0;
}

/* A config with a line git cannot parse (git_config_read returned rc 1):
 * git refuses every command that reads it, in that repository or, for a
 * global one, everywhere, so nothing it names runs, and the run goes on
 * with one warning. The file stays read-only wherever the command could
 * write (a mandatory deny), so the command can neither repair it into one
 * that runs its code nor break a good one into this; what the other lines
 * name is protected as usual, for the day the person fixes the line. */
static void
fx_git_unparsable(struct fact_finder *fx, int rc, const char *why, bool writable)
{
	if (rc > 0)
		fx_warn(fx, NULL, "warning: %s, so git refuses to run there until it is fixed; %s, and what its "
		    "other lines name stays protected", why, writable ? "allow-git-config leaves the file writable" :
		    "the file stays read-only");
}

/* A gitdir's effective local config: its config (or, with a commondir, the
 * common directory's) and config.worktree when that is switched on.
 * Returns 0 or -1 (fx_fail). */
static int
fx_git_config(struct fact_finder *fx, const char *gd, const char *common, struct vec *cfg)
{
	size_t budget = 4 * SBX_MAX_GITCFG_BYTES, i;
	const char *why;
	bool wtconfig = false;
	int rc;

	rc = git_config_read(fx->dk, fx->home, path_join(common ? common : gd, "config"), 0, &budget, cfg, &why);
	if (rc < 0)
		return fx_fail(fx, NULL, "%s (sbx reads a repository's config to protect what it runs; fix or "
		    "remove the file, or leave the repository read-only)", why);
	fx_git_unparsable(fx, rc, why, fx->p->allow_git_config);
	for (i = 0; i < cfg->n; i++)
		if (gitcfg_is(cfg->v[i], "extensions", "", "worktreeconfig"))
			wtconfig = !gitcfg_false(((const struct gitcfg_entry *)cfg->v[i])->value);
	if (!wtconfig)
		return 0;
	rc = git_config_read(fx->dk, fx->home, path_join(gd, "config.worktree"), 0, &budget, cfg, &why);
	if (rc < 0)
		return fx_fail(fx, NULL, "%s", why);
	fx_git_unparsable(fx, rc, why, false);
	return 0;
}

static bool
fx_gitdir_known(struct fact_finder *fx, const char *gd)
{
	size_t i;

	for (i = 0; i < fx->gitdirs.n; i++)
		if (strcmp(fx->gitdirs.v[i], gd) == 0)
			return true;
	vec_push(&fx->gitdirs, (void *)gd);
	plan_add_fact(fx->facts, gd, FK_DIR, RB_GITDIR, "a repository protected during the run");
	return false;
}

/* The submodule repositories under .git/modules: a submodule's name may
 * hold "/", so a directory without HEAD is searched below (bounded). */
static int
fx_git_modules(struct fact_finder *fx, const char *root, const char *dir, int depth)
{
	void *dh = fx->dk->ops->opendir(fx->dk->ctx, NULL, dir);
	const char *name;
	enum fkind k;
	struct vec subs = { 0 };
	size_t i;

	if (!dh)
		return 0;
	while (fx->dk->ops->readdir(fx->dk->ctx, dh, &name, &k) == 1)
		if (k == FK_DIR)
			vec_push(&subs, path_join(dir, name));
	fx->dk->ops->closedir(fx->dk->ctx, dh);
	for (i = 0; i < subs.n && depth < 8; i++) {
		const char *sub = subs.v[i];

		if (fx->dk->ops->lstat(fx->dk->ctx, path_join(sub, "HEAD"), NULL) != FK_MISSING) {
			if (fx_gitdir(fx, root, sub, NULL, depth + 1) < 0)
				return -1;
		} else if (fx_git_modules(fx, root, sub, depth + 1) < 0) {
			return -1;
		}
	}
	return 0;
}

/* Protect one repository directory gd inside the writable root: the
 * gitdir_entries, its linked worktrees' entries, its submodules'
 * repositories, and what its config names. */
static int
fx_gitdir(struct fact_finder *fx, const char *root, const char *gd, const char *top, int depth)
{
	struct vec cfg = { 0 };
	size_t i;
	void *dh;
	const char *name;
	enum fkind k;
	struct vec wts = { 0 };

	if (fx_gitdir_known(fx, gd))
		return 0;
	if (fx_git_config(fx, gd, NULL, &cfg) < 0)
		return -1;
	for (i = 0; i < LEN(gitdir_entries); i++) {
		const struct gitdir_entry *g = &gitdir_entries[i];

		if ((g->flags & GD_CONFIG) && fx->p->allow_git_config)
			continue;
		if (fx_mandatory_ph(fx, root, path_join(gd, g->name) + strlen(root) + 1, g->why, g->flags & GD_HOLD,
		    g->ph) < 0)
			return -1;
	}
	if ((dh = fx->dk->ops->opendir(fx->dk->ctx, NULL, path_join(gd, "worktrees")))) {
		while (fx->dk->ops->readdir(fx->dk->ctx, dh, &name, &k) == 1)
			if (k == FK_DIR)
				vec_push(&wts, path_join(path_join(gd, "worktrees"), name));
		fx->dk->ops->closedir(fx->dk->ctx, dh);
	}
	for (i = 0; i < wts.n; i++) {
		size_t j;

		fx_gitdir_known(fx, wts.v[i]);
		for (j = 0; j < LEN(worktree_entries); j++)
			if (fx_mandatory_ph(fx, root, path_join(wts.v[i], worktree_entries[j].name) + strlen(root) + 1,
			    worktree_entries[j].why, worktree_entries[j].flags & GD_HOLD, worktree_entries[j].ph) < 0)
				return -1;
	}
	if (depth < 8 && fx_git_modules(fx, root, path_join(gd, "modules"), depth) < 0)
		return -1;
	return fx_git_named(fx, &cfg, top ? top : path_dirname(gd));
}

/* The directory a gitdir pointer file names ("gitdir: X" in a .git file,
 * the text of commondir or gitdir), resolved against base; NULL if none. */
static const char *
fx_git_pointer(struct fact_finder *fx, const char *file, const char *base, const char *prefix, enum fkind want)
{
	struct buf b = { 0 };
	struct resolved res;
	const char *err;
	char *p;

	if (fx->dk->ops->readfile(fx->dk->ctx, file, 4096, &b) < 0 || !b.p) {
		free(b.p);
		return NULL;
	}
	p = astrdup(b.p);
	free(b.p);
	p[strcspn(p, "\r\n")] = '\0';
	if (prefix) {
		if (strncmp(p, prefix, strlen(prefix)) != 0)
			return NULL;
		for (p += strlen(prefix); *p == ' '; p++)
			;
	}
	if (!*p || resolve_path(fx->dk, p[0] == '/' ? p : path_join(base, p), &res, &err) < 0 ||
	    res.kind != want)
		return NULL;
	return res.path;
}

/* git worktrees work. A linked worktree at top whose repository lies outside
 * every writable root keeps its index, HEAD and logs in the repository's
 * $GIT_COMMON_DIR/worktrees/NAME and its objects and refs in the common
 * directory, so srt and Codex cannot commit there (claude-code#33657,
 * codex#23661). Exactly those become writable: worktrees/NAME and the
 * common directory's objects/, refs/ and logs/ (packed-refs is rewritten by
 * a rename in the common directory itself, which stays read-only; git
 * commit does not need it). worktrees/NAME's commondir, gitdir and
 * config.worktree stay read-only, and so does everything else of the main
 * repository, its hooks and config included; what its config names is
 * protected as for any repository. SECURITY: the .git file is believed
 * only as git itself checks it: the gitdir it names sits in its common
 * directory's worktrees/ and its gitdir file points back at this .git, so
 * a .git file a command wrote cannot make another directory writable. */
static int
fx_git_worktree(struct fact_finder *fx, const char *top)
{
	const char *dotgit = path_join(top, ".git"), *gd, *common, *back;
	static const char *const shared[] = { "objects", "refs", "logs" };
	struct vec cfg = { 0 };
	size_t i;

	if (!(gd = fx_git_pointer(fx, dotgit, top, "gitdir:", FK_DIR)) ||
	    !(common = fx_git_pointer(fx, path_join(gd, "commondir"), gd, NULL, FK_DIR)) ||
	    strcmp(path_dirname(gd), path_join(common, "worktrees")) != 0 ||
	    !(back = fx_git_pointer(fx, path_join(gd, "gitdir"), gd, NULL, FK_FILE)) || strcmp(back, dotgit) != 0)
		return 0;	/* not a linked worktree git would accept */
	for (i = 0; i < fx->roots.n; i++)
		if (path_within(gd, fx->roots.v[i]))
			return 0;	/* writable already; protected where its repository is scanned */
	if (fx_gitdir_known(fx, gd))
		return 0;
	note("%s is a worktree of %s: its gitdir and the common objects, refs and logs are writable", top, common);
	plan_add_fact(fx->facts, gd, FK_DIR, RB_WRITE, aprintf("the worktree %s commits here", top));
	for (i = 0; i < LEN(shared); i++)
		if (fx->dk->ops->lstat(fx->dk->ctx, path_join(common, shared[i]), NULL) == FK_DIR)
			plan_add_fact(fx->facts, path_join(common, shared[i]), FK_DIR, RB_WRITE,
			    aprintf("the worktree %s commits here", top));
	if (fx_git_config(fx, gd, common, &cfg) < 0)
		return -1;
	for (i = 0; i < LEN(worktree_entries); i++) {
		const struct gitdir_entry *g = &worktree_entries[i];
		struct resolved res;
		const char *err;

		if (resolve_path(fx->dk, path_join(gd, g->name), &res, &err) < 0)
			continue;
		if (res.kind != FK_MISSING || (g->flags & GD_HOLD))
			fx_deny_write_ph(fx, &res, aprintf("mandatory deny %s: %s", g->name, g->why), g->ph);
	}
	return fx_git_named(fx, &cfg, top);
}

/* ---- agents: what Claude Code's and Codex's settings run --------------
 * Claude Code runs the commands its settings name with the person's full
 * rights, outside any sandbox: a hook on every tool call, the status line on
 * every update, the API key helper. Codex does the same with notify, its
 * hooks and its MCP servers. The files themselves are read-only (the rows
 * above), but a script they name is an ordinary file: a sandboxed command
 * rewrote .claude/hooks/fmt.sh, and Claude Code's next PostToolUse hook ran
 * it. So, as for git's config, the planner reads each of these files and
 * protects the paths its commands name, wherever they lie in a writable
 * root: the project's (the current directory and its work tree's top, and
 * every .claude and .codex directory the scan finds, whose parent is their
 * project) and $HOME's and the machine's, which apply in every project
 * (their relative paths and $CLAUDE_PROJECT_DIR are the current project's). */

#define SBX_MAX_AGENT_CFG_BYTES	(1 << 20)	/* settings files are a few KiB */
#define SBX_MAX_AGENT_PATHS	256		/* paths protected for all of them; a warning past it */

enum agent_fmt { AG_JSON, AG_TOML };

static const struct agent_file {
	const char *dir, *name;	/* dir: in a project (or $HOME), or absolute */
	enum agent_fmt fmt;
	const char *why;
} agent_files[] = {
	{ ".claude", "settings.json", AG_JSON, "Claude Code runs it with full access" },
	{ ".claude", "settings.local.json", AG_JSON, "Claude Code runs it with full access" },
	{ ".codex", "config.toml", AG_TOML, "Codex runs it with full access" },
	{ ".codex", "hooks.json", AG_JSON, "Codex runs it with full access" },
	{ ".", ".mcp.json", AG_JSON, "Claude Code starts it with full access" },
	{ "/etc/claude-code", "managed-settings.json", AG_JSON, "Claude Code runs it with full access" },
	{ "/etc/codex", "config.toml", AG_TOML, "Codex runs it with full access" },
};

/* The settings whose value is a command. A JSON row is a path through the
 * document, "*" for every key of an object or element of an array; its
 * last name is what a loose reading (agent_loose) looks for in a file that
 * is not JSON sbx reads. A TOML row is a key's last name, wherever it
 * stands ([mcp_servers.x] command, [[hooks.Stop.hooks]] command). Every
 * value is read as a command line (agent_cmd_paths): an argv element
 * (notify = ["python3", "notify.py"]) is then its own word. */
static const struct agent_key {
	enum agent_fmt fmt;
	const char *path;
	const char *what;
} agent_keys[] = {
	{ AG_JSON, "hooks.*.*.hooks.*.command", "a hook" },
	{ AG_JSON, "statusLine.command", "the status line" },
	{ AG_JSON, "fileSuggestion.command", "the file suggestion command" },
	{ AG_JSON, "apiKeyHelper", "the API key helper" },
	{ AG_JSON, "awsAuthRefresh", "the AWS auth refresh" },
	{ AG_JSON, "awsCredentialExport", "the AWS credential export" },
	{ AG_JSON, "otelHeadersHelper", "the OpenTelemetry headers helper" },
	{ AG_JSON, "mcpServers.*.command", "an MCP server" },
	{ AG_JSON, "mcpServers.*.args.*", "an MCP server's arguments" },
	{ AG_TOML, "notify", "notify" },
	{ AG_TOML, "command", "an MCP server's or a hook's command" },
	{ AG_TOML, "args", "an MCP server's arguments" },
};

struct agent_cmd { const char *what, *cmd; };

struct agent_read { const char *file; struct vec cmds; };	/* of struct agent_cmd: a file's, read once */

/* What a word of a command names (agent_cmd_paths). ORDER: tests/unit.c's
 * agent_paths_text prints them as "HEU". */
enum agent_pk {
	AP_HOLD,	/* a path: protected, held when missing */
	AP_EXISTING,	/* a quoted part with blanks, or a word of it: protected if it
			 * exists, not held (were it misread, its placeholder would
			 * be named after half a path) */
	AP_UNKNOWN,	/* a word with a variable sbx cannot expand: said under -v */
};

struct agent_path { const char *path; enum agent_pk kind; };

/* Every string at path (agent_keys) below v, pushed as a struct agent_cmd. */
static void
agent_json_at(const struct jval *v, const char *path, const char *what, struct vec *out)
{
	const char *dot = strchr(path, '.'), *rest = dot ? dot + 1 : "";
	size_t n = dot ? (size_t)(dot - path) : strlen(path), i;

	if (!*path) {
		if (v->t == J_STR) {
			struct agent_cmd *c = amalloc(sizeof(*c));

			c->what = what;
			c->cmd = v->s;
			vec_push(out, c);
		}
		return;
	}
	for (i = 0; (v->t == J_OBJ || v->t == J_ARR) && i < v->n; i++)
		if ((n == 1 && path[0] == '*') ||
		    (v->t == J_OBJ && strlen(v->keys[i]) == n && strncmp(v->keys[i], path, n) == 0))
			agent_json_at(v->items[i], rest, what, out);
}

/* The agent_keys row a loose reading's key names (a row's last name that
 * is not "*": "args" of mcpServers.*.args.*), or NULL. */
static const struct agent_key *
agent_key_named(enum agent_fmt fmt, const char *key)
{
	size_t i, n = key ? strlen(key) : 0;

	for (i = 0; key && i < LEN(agent_keys); i++) {
		const char *path = agent_keys[i].path, *end = path + strlen(path), *name;

		while (end - path >= 2 && strcmp(end - 2, ".*") == 0)
			end -= 2;
		for (name = end; name > path && name[-1] != '.'; name--)
			;
		if (agent_keys[i].fmt == fmt && (size_t)(end - name) == n && strncmp(name, key, n) == 0)
			return &agent_keys[i];
	}
	return NULL;
}

/* One quoted string at *pp ("..." with backslash escapes, '...' literal, or
 * either tripled, as TOML writes them); *pp moves past it. An unterminated
 * one ends at its line. Returns an arena string. */
static const char *
agent_loose_string(const char **pp, const char *end)
{
	const char *p = *pp, *r;
	char q = *p;
	bool triple = end - p >= 3 && p[1] == q && p[2] == q;
	struct buf b = { 0 };

	for (p += triple ? 3 : 1; p < end; p++) {
		if (triple ? end - p >= 3 && p[0] == q && p[1] == q && p[2] == q : *p == q) {
			p += triple ? 3 : 1;
			break;
		}
		if (!triple && *p == '\n')
			break;
		if (q == '"' && *p == '\\' && p + 1 < end) {
			p++;	/* \uXXXX stays "uXXXX": a path spelled so is not taken */
			buf_putc(&b, *p == 'n' ? '\n' : *p == 't' ? '\t' : *p);
			continue;
		}
		buf_putc(&b, *p);
	}
	*pp = p;
	r = astrndup(b.p ? b.p : "", b.n);
	free(b.p);
	return r;
}

/* A loose reading: every string that stands as the value of a key in
 * agent_keys, pushed as a struct agent_cmd. For TOML, which sbx has no
 * reader for, and for a settings file the strict JSON reader refuses
 * (Claude Code's JSON.parse takes a duplicate key, which 3.5 does not). A
 * key is the last name before "=" or ":"; every string after it, alone or in
 * an array, is its value until the next key. A TOML table header
 * ([projects."/home/me/p"]) and a comment name no value. SECURITY: the file
 * may be hostile; nothing here fails, and a string misread as a command
 * only protects a path more. */
static void
agent_loose(const char *s, size_t n, enum agent_fmt fmt, struct vec *out)
{
	const char *p = s, *end = s + n, *last = NULL, *key_name = NULL;
	const struct agent_key *key = NULL;	/* the key the strings that follow are values of */
	bool line_start = true, in_value = false;	/* TOML: after "=", until its line ends outside brackets */
	int depth = 0;

	while (p < end) {
		char c = *p;

		if (c == '\n') {
			line_start = true;
			in_value = in_value && depth > 0;
			p++;
			continue;
		}
		if (isspace((unsigned char)c) || c == ',') {
			p++;
			continue;
		}
		if (fmt == AG_TOML && (c == '#' || (c == '[' && line_start && !in_value))) {
			if (c == '[')
				key = NULL;	/* a new table: no key yet */
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		line_start = false;
		if (c == '"' || c == '\'') {
			const char *str = agent_loose_string(&p, end), *q = p;

			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			if (q < end && (*q == '=' || *q == ':' || *q == '.')) {
				last = str;	/* a key, or a dotted key's part */
			} else if (key) {
				struct agent_cmd *cmd = amalloc(sizeof(*cmd));

				/* in a loose JSON reading a "command" may be any row's */
				cmd->what = fmt == AG_JSON ? aprintf("a \"%s\" setting", key_name) : key->what;
				cmd->cmd = str;
				vec_push(out, cmd);
			}
			continue;
		}
		if (c == '=' || c == ':') {
			key = agent_key_named(fmt, last);
			key_name = last;
			last = NULL;
			in_value = true;
			depth = 0;
		} else if (c == '[' || c == '{') {
			depth++;
		} else if (c == ']' || c == '}') {
			depth--;
		} else if (isalnum((unsigned char)c) || c == '_' || c == '-') {
			const char *w = p;

			while (p < end && (isalnum((unsigned char)*p) || *p == '_' || *p == '-'))
				p++;
			last = astrndup(w, (size_t)(p - w));
			continue;
		}
		p++;
	}
}

/* A $NAME or ${NAME} at *pp as the shell would expand it for a command
 * the agent runs: $CLAUDE_PROJECT_DIR is the project, $HOME the home;
 * *pp moves past it. NULL for any other variable (its value is the
 * command's, unknown here); "$" itself when no name follows. */
static const char *
agent_var(const char **pp, const char *project, const char *home)
{
	const char *p = *pp + 1, *name;
	bool brace = *p == '{';
	size_t n;

	p += brace;
	for (name = p; isalnum((unsigned char)*p) || *p == '_'; p++)
		;
	n = (size_t)(p - name);
	if (brace) {	/* ${NAME:-default} and the like: not a plain NAME */
		bool plain = *p == '}';

		while (*p && *p != '}')
			p++;
		p += *p == '}';
		if (!plain)
			n = 0;
	} else if (!n) {
		if (!*p || !strchr("@*#?$!-", *p)) {
			*pp = p;
			return "$";
		}
		p++;	/* $@, $?, $$ ... */
	}
	*pp = p;
	if (n == strlen("CLAUDE_PROJECT_DIR") && strncmp(name, "CLAUDE_PROJECT_DIR", n) == 0)
		return project;
	if (n == strlen("HOME") && strncmp(name, "HOME", n) == 0)
		return home;
	return NULL;
}

/* The paths a command line names, words split as the shell splits them: at
 * blanks and operators (; | & < > ( ) `), quotes removed, backslashes
 * taken, $CLAUDE_PROJECT_DIR and $HOME (with braces or without) and a
 * leading ~ expanded. Every word that then holds a "/" is taken, made
 * absolute against the project: the program ("$CLAUDE_PROJECT_DIR"/.claude/
 * hooks/fmt.sh, ./x, ~/bin/x) and equally each argument, so an
 * interpreter's script (bash x.sh, python3 tools/y.py, node a.js) and a
 * tool's config (--config=./c.js: the value after "=" is a word too) are
 * covered without knowing any program's options (a word with a glob is
 * taken as written: fx_agent_protect expands it). Conservative on purpose:
 * an argument that is no path (sed's s/a/b/) costs at most a placeholder;
 * a path missed is a script the command could rewrite. Not taken: a word
 * with another variable (AP_UNKNOWN: its value is the hook's, unknown
 * here), an option without "=", a URL or host:path (a ":" before the first
 * "/"), and a redirection's target (written, not run).
 * A quoted part with blanks or operators (sh -c '...', "$(...)") is also
 * read again as a command line of its own, as the shell that runs it will.
 * With operators it is a command line and nothing else. With blanks only it
 * may be one path ("$CLAUDE_PROJECT_DIR/my hooks/x.sh") or a short command
 * line (sh -c 'x.sh arg'): both readings count, but only where they exist
 * (weak: AP_EXISTING), since holding a missing one would leave a
 * placeholder named after half a path.
 * SECURITY: a relative word after `cd DIR` (cd scripts && sh sub/x.sh)
 * is what the shell finds below DIR: it is taken there too (and still
 * against the project, as the cd may fail). Taken against the project
 * only, scripts/sub/x.sh stayed writable and the hook ran it. Pure. */
static void
agent_cmd_paths(const char *cmd, const char *project, const char *home, bool weak, struct vec *out, int depth)
{
	static const char ops[] = ";|&<>()`";
	const char *s = cmd, *cwd = NULL;	/* cwd: after a cd, absolute */
	bool redirect = false, first = true, cd_arg = false;	/* first: a command's first word */
	int words = 0;

	while (*s && words < 4096) {	/* a bound for a hostile file; no hook has as many */
		struct buf w = { 0 }, raw = { 0 };	/* the word; its quoted parts as written */
		bool unknown = false, blanks = false, operators = false;
		const char *cand, *eq, *colon, *slash, *v, *at, *start;
		bool assign, cmdword, bare, cd_dir = false;

		for (; *s && (isspace((unsigned char)*s) || strchr(ops, *s)); s++)
			if (strchr(ops, *s)) {
				redirect = *s == '>';
				first = first || (*s != '<' && *s != '>');
				cd_arg = false;
			}
		if (!*s)
			break;
		words++;
		start = s;
		if (*s == '~' && (!s[1] || s[1] == '/' || isspace((unsigned char)s[1]) || strchr(ops, s[1]))) {
			if (home)
				buf_puts(&w, home);
			unknown |= !home;
			s++;
		} else {
			unknown |= *s == '~';	/* ~user */
		}
		while (*s && !isspace((unsigned char)*s) && !strchr(ops, *s)) {
			if (*s == '\'' || *s == '"') {
				char q = *s++;

				while (*s && *s != q) {
					if (q == '"' && *s == '$' && s[1] != '(') {
						at = s;
						if ((v = agent_var(&s, project, home)))
							buf_puts(&w, v);
						unknown |= !v;
						buf_putn(&raw, at, (size_t)(s - at));
						continue;
					}
					if (q == '"' && *s == '\\' && s[1] && strchr("\"\\$`", s[1])) {
						buf_putc(&w, s[1]);	/* and unescaped for the shell it reaches */
						buf_putc(&raw, s[1]);
						s += 2;
						continue;
					}
					blanks |= isspace((unsigned char)*s) != 0;
					operators |= strchr(ops, *s) || *s == '$' || *s == '\n';	/* "$(" here */
					buf_putc(&w, *s);
					buf_putc(&raw, *s++);
				}
				s += *s == q;
				buf_putc(&raw, ' ');
				continue;
			}
			if (*s == '\\' && s[1]) {
				buf_putc(&w, s[1]);
				s += 2;
				continue;
			}
			if (*s == '$' && s[1] == '(') {
				s++;	/* "$(" ends the word; the "(" is an operator */
				break;
			}
			if (*s == '$') {
				if ((v = agent_var(&s, project, home)))
					buf_puts(&w, v);
				unknown |= !v;
				continue;
			}
			buf_putc(&w, *s++);
		}
		if ((blanks || operators) && raw.p && depth < 3)
			agent_cmd_paths(raw.p, cwd ? cwd : project, home, weak || !operators, out, depth + 1);
		cand = w.p ? w.p : "";
		assign = strchr(cand, '=') && cand[0] != '=' && (!strchr(cand, '/') || strchr(cand, '=') < strchr(cand, '/'));
		cmdword = first && !redirect && !assign;
		if (cd_arg && !redirect && cand[0] != '-') {
			/* cd's directory: where the words after it are found */
			cwd = unknown ? NULL : path_clean(cand[0] == '/' ? cand : path_join(cwd ? cwd : project, cand));
			cd_arg = false;
			cd_dir = true;
		} else if (first && !redirect && (strcmp(cand, "cd") == 0 || strcmp(cand, "pushd") == 0)) {
			cd_arg = true;
		}
		first = first && !redirect && assign;	/* A=B cmd: cmd is the first */
		if ((eq = strchr(cand, '=')) && (!(slash = strchr(cand, '/')) || eq < slash))
			cand = eq + 1;	/* A=B, --config=B: B */
		else if (cand[0] == '-')
			cand = "";	/* an option */
		colon = strchr(cand, ':');
		slash = strchr(cand, '/');
		/* SECURITY: an argument with no "/" (python3 hook.py, bash lint.sh,
		 * node fmt.js) is a file in the directory the hook runs in: taken
		 * where it exists, and held when missing if it looks like a script
		 * (a missing build or lint is a tool's word, and a placeholder
		 * there would stop the tool). The command word itself is looked
		 * up in PATH, not here. Not taken, hook.py stayed writable. */
		bare = !slash && !cmdword && !assign && !cd_dir && cand[0] && !colon && strcmp(cand, ".") != 0 &&
		    strcmp(cand, "..") != 0 && cand[strspn(cand, "0123456789")];	/* 2>x: a descriptor */
		if (!redirect && !operators && (bare || (slash && !(colon && colon < slash)))) {
			struct agent_path *ap = amalloc(sizeof(*ap));
			const char *ext = strrchr(cand, '.');

			ap->kind = unknown ? AP_UNKNOWN : weak || blanks ? AP_EXISTING : AP_HOLD;
			if (bare && ap->kind == AP_HOLD && !(ext && strstr(" .sh .bash .zsh .py .js .mjs .cjs .ts .rb .pl .php .lua ",
			    aprintf(" %s ", ext))))
				ap->kind = AP_EXISTING;
			ap->path = unknown ? astrndup(start, (size_t)(s - start)) :
			    path_clean(cand[0] == '/' ? cand : path_join(project, cand));
			vec_push(out, ap);
			if (cwd && !cd_dir && !unknown && cand[0] != '/' && strcmp(cwd, project) != 0) {
				struct agent_path *ap2 = amalloc(sizeof(*ap2));

				*ap2 = *ap;
				ap2->path = path_clean(path_join(cwd, cand));
				vec_push(out, ap2);
			}
		}
		redirect = false;
		free(w.p);
		free(raw.p);
	}
}

/* Protect one path a command names (agent_cmd_paths), where it lies in a
 * writable root. A directory is left as it is: the program decides what
 * it runs from there (cd dir && make), as it does with the project's own
 * code, and a project's directory made read-only whole would stop the
 * work. The root is found by the path as spelled, so a symlink on the way
 * (.venv/bin/python) is pinned and its target denied (fx_mandatory_ph),
 * not only the target. A missing path is held by a placeholder, as the
 * paths git's config names are: else the command could create the script
 * the next hook runs. */
static int
fx_agent_protect(struct fact_finder *fx, const struct agent_path *ap, const char *why)
{
	struct resolved res;
	const char *err, *root = NULL;
	size_t i;

	if (ap->kind == AP_UNKNOWN) {
		note("%s: %s holds a variable sbx cannot expand; not protected", why, ap->path);
		return 0;
	}
	if (has_glob_chars(ap->path)) {
		/* the shell expands it when the hook runs: the files it matches
		 * now are protected (one directory listed), a file the command
		 * adds that it would match is not; name such scripts one by one */
		struct vec m = { 0 };
		struct agent_path one = { NULL, AP_EXISTING };

		if (has_glob_chars(path_dirname(ap->path)) || glob_expand(fx->dk, ap->path, &m, &err) < 0) {
			note("%s: %s: a glob sbx does not expand; not protected", why, ap->path);
			return 0;
		}
		for (i = 0; i < m.n; i++) {
			one.path = m.v[i];
			if (fx_agent_protect(fx, &one, why) < 0)
				return -1;
		}
		return 0;
	}
	if (resolve_path(fx->dk, ap->path, &res, &err) < 0)
		return 0;	/* the agent cannot run it either */
	if (res.kind == FK_DIR) {
		note("%s: %s is a directory: left as it is", why, ap->path);
		return 0;
	}
	if (res.kind == FK_MISSING && ap->kind != AP_HOLD)
		return 0;
	if (fx->agent_paths++ == SBX_MAX_AGENT_PATHS)
		vec_push(&fx->warnings, aprintf("the agents' settings name more than %d paths; the rest are not "
		    "protected (%s)", SBX_MAX_AGENT_PATHS, why));
	if (fx->agent_paths > SBX_MAX_AGENT_PATHS)
		return 0;
	for (i = 0; !path_has_dotdot(ap->path) && i < fx->roots.n; i++)
		if (path_within(ap->path, fx->roots.v[i]) && strcmp(ap->path, fx->roots.v[i]) != 0 &&
		    (!root || strlen(fx->roots.v[i]) > strlen(root)))
			root = fx->roots.v[i];
	if (root)
		return fx_mandatory_ph(fx, root, ap->path + strlen(root) + 1, why, true, PH_DIR);
	return fx_protect(fx, ap->path, why, true, PH_DIR);
}

/* One settings file read (once: the commands it holds are kept), and the
 * paths its commands name protected, relative ones and $CLAUDE_PROJECT_DIR
 * taken in project. A file that is not JSON sbx reads is read loosely,
 * with one warning: the file itself is read-only already, and what its
 * commands name is still protected. Returns 0, or -1 (fx_fail). */
static int
fx_agent_file(struct fact_finder *fx, const char *file, const struct agent_file *af, const char *project)
{
	const char *seen = aprintf("%s\n%s", file, project);
	struct agent_read *rd = NULL;
	size_t i, j;

	for (i = 0; i < fx->agent_seen.n; i++)
		if (strcmp(fx->agent_seen.v[i], seen) == 0)
			return 0;
	vec_push(&fx->agent_seen, (void *)seen);
	for (i = 0; i < fx->agent_read.n && !rd; i++)
		if (strcmp(((struct agent_read *)fx->agent_read.v[i])->file, file) == 0)
			rd = fx->agent_read.v[i];
	if (!rd) {
		struct buf b = { 0 };
		struct jval *doc;
		struct err e = { 0 };
		const char *t;

		rd = amalloc(sizeof(*rd));
		rd->file = file;
		vec_push(&fx->agent_read, rd);
		if (fx->dk->ops->readfile(fx->dk->ctx, file, SBX_MAX_AGENT_CFG_BYTES, &b) < 0) {
			/* EINVAL: not a regular file (another run's placeholder
			 * directory): the agent reads no settings there either */
			if (errno != ENOENT && errno != ENOTDIR && errno != EINVAL)
				vec_push(&fx->warnings, aprintf("%s: cannot be read (%s); what its commands name is not "
				    "protected", file, strerror(errno)));
			free(b.p);
			return 0;
		}
		for (t = b.p ? b.p : ""; isspace((unsigned char)*t); t++)
			;
		if (af->fmt == AG_JSON && *t && json_parse(b.p, b.n, file, &doc, &e) == 0) {
			for (j = 0; j < LEN(agent_keys); j++)
				if (agent_keys[j].fmt == AG_JSON)
					agent_json_at(doc, agent_keys[j].path, agent_keys[j].what, &rd->cmds);
		} else if (*t) {
			if (af->fmt == AG_JSON) {
				char msg[1200];

				err_format(&e, msg, sizeof(msg));
				vec_push(&fx->warnings, aprintf("%s (sbx's JSON reader refuses it, so it is read loosely: "
				    "the paths its commands name are still protected)", msg));
			}
			agent_loose(b.p, b.n, af->fmt, &rd->cmds);
		}
		free(b.p);
	}
	for (i = 0; i < rd->cmds.n; i++) {
		const struct agent_cmd *c = rd->cmds.v[i];
		const char *why = aprintf("named by %s in %s: %s", c->what, file, af->why);
		struct vec paths = { 0 };

		agent_cmd_paths(c->cmd, project, fx->home, false, &paths, 0);
		for (j = 0; j < paths.n; j++)
			if (fx_agent_protect(fx, paths.v[j], why) < 0)
				return -1;
	}
	return 0;
}

/* The agents' settings files in dir (a project, or $HOME), or with dir
 * NULL the machine's, read for project. */
static int
fx_agent_dir(struct fact_finder *fx, const char *dir, const char *project)
{
	size_t i;

	for (i = 0; i < LEN(agent_files); i++) {
		const struct agent_file *af = &agent_files[i];

		if ((af->dir[0] == '/') != !dir)
			continue;
		if (fx_agent_file(fx, path_clean(path_join(dir ? path_join(dir, af->dir) : af->dir, af->name)), af,
		    project) < 0)
			return -1;
	}
	return 0;
}

/* ---- the scan cache: listings kept between runs, verified on use -------
 *
 * The walk below reads every directory of every writable root: a home of
 * 100,000 files is thousands of directories, each an open, two getdents
 * and a close, before every command. Most of them did not change since
 * the last run. The scan cache keeps, for each directory a run listed,
 * its identity (device, inode), its ctime and mtime, and the part of its
 * listing the walk reads (its subdirectories, its names with a leading
 * dot, HEAD); the next run's walk takes a directory's listing from it
 * when one lstat(2) of the directory gives the same four, and lists it
 * again otherwise. The walk itself is the same code over another disk
 * view (struct disk): the same facts come out, with the same depth rules.
 *
 * SECURITY, why a matching ctime means the same listing: creating,
 * removing or renaming an entry sets the directory's ctime (and mtime) to
 * now; utimensat(2) can set mtime back, never ctime (only a clock set back
 * by root could), so a command that changed a directory cannot make it
 * look unchanged. A directory replaced by another is another inode, or
 * the same inode number reused, with a new ctime; one replaced by a file
 * or a symlink changes its parent's listing. The kernel takes ctime from a
 * coarse clock (a tick, up to 10 ms, behind): a listing is trusted only
 * when the directory's ctime is SBX_SCAN_CACHE_RACY_NS older than the
 * start of the scan that read it, so a change made while or after it was
 * read has a later ctime (git's "racy" index entries, the same cure). Only file systems
 * whose ctime is kept by the kernel that serves them are trusted
 * (sc_fs_trusted: not NFS, FUSE or overlayfs, where a directory can change
 * under a ctime the kernel cached): elsewhere every directory is listed.
 *
 * It is kept in the registry's place (/dev/shm/sbx-UID, else the runtime
 * root, 9a), where no command can write; read only when it is a regular
 * file of this uid that no one else can write, every offset checked
 * before use (a damaged file is a file not there: every directory is
 * listed). Written to a new name and renamed over the old, so a
 * concurrent run reads one whole file or the other, and each entry of
 * either is verified before use. Bounded: SBX_SCAN_CACHE_MAX_DIRS
 * directories (the trees of the roots this run walked first, then other
 * runs' roots while they fit). Linux only (macOS lists every directory). */
#define SBX_SCAN_CACHE_FILE	"scan-cache"
#define SBX_SCAN_CACHE_MAX_DIRS	262144		/* ~15 MiB of records at most */
#define SBX_SCAN_CACHE_RACY_NS	20000000LL	/* the audit's margin for the coarse clock (audit_record) */
#define SBX_SCAN_CACHE_MAGIC	"sbxscan2"
#define SBX_SCAN_CACHE_RESTAMPS	64		/* ctimes moved, listings the same: no rewrite up to this */

/* The file: a head, the records (a parent before its children), the
 * children's name offsets, the names (a kind byte, then the name and a
 * NUL), and a hash table of (parent, name) -> record + 1. */
struct sc_head { char magic[8]; uint32_t nrec, nkid, nname, nslot; };
struct sc_rec {
	uint64_t dev, ino;
	int64_t ctime, mtime;	/* ns */
	uint32_t parent;	/* record + 1, or 0: a root, named by its whole path */
	uint32_t name;		/* offset of the kind byte before the name */
	uint32_t kid0, nkids;	/* the listing kept */
	uint32_t trusted;	/* 0: kept only as the way to its children's records */
	uint32_t old;		/* in memory only: name and kids are the old file's (not copied yet) */
	uint32_t nents;		/* every entry the directory held, kept or not (disk_ops.unread) */
	uint32_t pad;
};

struct sc_file {
	const struct sc_rec *rec;
	const uint32_t *kid, *slot;
	const char *name;
	uint32_t nrec, nkid, nname, nslot;
};

struct scan_cache {
	const struct disk *under;	/* the real view */
	const char *path;		/* NULL: read nothing, write nothing */
	struct sc_file old;
	void *map;
	size_t maplen;
	struct buf recs, kids, names;	/* the new file's parts */
	long long now;			/* ns, when the scan began */
	struct { dev_t dev; bool ok; } fs[16];
	size_t nfs;
	long served, listed;	/* directories: from the old file, listed */
	long changed, restamped;	/* listed and kept: new or changed, or as the old file has them */
};

/* A directory opened through the cache: its listing read from the old
 * file (real NULL), or from the disk and kept as it goes. */
struct sc_dir {
	struct dir_stream *real;
	const char *path;
	uint32_t old;		/* the old file's record at this (parent, name) + 1, or 0 */
	uint32_t self;		/* this directory's record in the new file + 1 */
	uint32_t pos;		/* served: the next child */
	uint32_t nents;		/* listed: the entries read */
	bool served, done, keep, trusted;
	struct buf kids;	/* listed: the children's name offsets in the new names */
};

static uint32_t
sc_hash(uint32_t parent, const char *name)
{
	return (uint32_t)(str_hash(name) ^ (parent * 0x9e3779b97f4a7c15ULL >> 17));
}

/* The old file's record for (parent + 1, name), + 1; or 0. Each offset
 * read from the file is checked where it is used (sc_kids_ok too), so a
 * damaged file is never read out of bounds, and a run costs what it looks
 * up, not the whole file: the names end with a NUL (sc_load). */
static uint32_t
sc_find(const struct sc_file *f, uint32_t parent, const char *name)
{
	uint32_t i, n;

	if (!f->nslot)
		return 0;
	for (i = sc_hash(parent, name) & (f->nslot - 1), n = 0; n < f->nslot && f->slot[i];
	    i = (i + 1) & (f->nslot - 1), n++) {
		const struct sc_rec *r;

		if (f->slot[i] > f->nrec)
			return 0;
		r = &f->rec[f->slot[i] - 1];
		if (r->parent == parent && r->name + 1 < f->nname && strcmp(f->name + r->name + 1, name) == 0)
			return f->slot[i];
	}
	return 0;
}

/* Are the old record's children within the file? */
static bool
sc_kids_ok(const struct sc_file *f, const struct sc_rec *r)
{
	if (r->kid0 > f->nkid || r->nkids > f->nkid - r->kid0)
		return false;
	for (uint32_t i = 0; i < r->nkids; i++)
		if (f->kid[r->kid0 + i] + 1 >= f->nname)
			return false;
	return true;
}

/* Map the file at sc->path, if it is one sbx can trust. */
static void
sc_load(struct scan_cache *sc)
{
	int fd = openat(AT_FDCWD, sc->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct sc_head h;
	struct stat st;
	size_t need;
	const char *p;

	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) ||
	    st.st_size < (off_t)sizeof(h) || st.st_size > (off_t)SBX_SCAN_CACHE_MAX_DIRS * 128) {
		note("scan cache %s: not a private file of this user, or too large: not used", sc->path);
		close(fd);
		return;
	}
	sc->maplen = (size_t)st.st_size;
	sc->map = mmap(NULL, sc->maplen, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (sc->map == MAP_FAILED) {
		sc->map = NULL;
		return;
	}
	memcpy(&h, sc->map, sizeof(h));
	need = sizeof(h) + (size_t)h.nrec * sizeof(struct sc_rec) + ((size_t)h.nkid + h.nslot) * 4 + h.nname;
	if (memcmp(h.magic, SBX_SCAN_CACHE_MAGIC, 8) != 0 || h.nrec > SBX_SCAN_CACHE_MAX_DIRS ||
	    h.nkid > 64u * SBX_SCAN_CACHE_MAX_DIRS || h.nslot > 4u * SBX_SCAN_CACHE_MAX_DIRS ||
	    h.nname > 64u << 20 || need != sc->maplen)
		goto bad;
	p = (const char *)sc->map + sizeof(h);
	sc->old.rec = (const struct sc_rec *)p;
	p += (size_t)h.nrec * sizeof(struct sc_rec);
	sc->old.kid = (const uint32_t *)p;
	p += (size_t)h.nkid * 4;
	sc->old.slot = (const uint32_t *)p;
	p += (size_t)h.nslot * 4;
	sc->old.name = p;
	sc->old.nrec = h.nrec;
	sc->old.nkid = h.nkid;
	sc->old.nslot = h.nslot;
	sc->old.nname = h.nname;
	if (h.nname && sc->old.name[h.nname - 1] == '\0' && (h.nslot & (h.nslot - 1)) == 0 && h.nslot >= h.nrec)
		return;
bad:
	note("scan cache %s: damaged: not used", sc->path);
	memset(&sc->old, 0, sizeof(sc->old));
	munmap(sc->map, sc->maplen);
	sc->map = NULL;
}

/* Is dev's file system one whose directory ctimes the kernel keeps itself
 * (local, not stacked)? Asked once a device. */
static bool
sc_fs_trusted(struct scan_cache *sc, dev_t dev, const char *path)
{
#if SBX_LINUX
	/* ext2/3/4, xfs, btrfs, tmpfs, f2fs */
	static const unsigned long trusted[] = { 0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0xF2F52010 };
	struct statfs sf;
	size_t i;

	for (i = 0; i < sc->nfs; i++)
		if (sc->fs[i].dev == dev)
			return sc->fs[i].ok;
	if (i == LEN(sc->fs))
		return false;
	sc->fs[i].dev = dev;
	sc->fs[i].ok = false;
	sc->nfs++;
	if (statfs(path, &sf) == 0)
		for (size_t j = 0; j < LEN(trusted); j++)
			sc->fs[i].ok |= (unsigned long)sf.f_type == trusted[j];
	return sc->fs[i].ok;
#else
	(void)sc, (void)dev, (void)path;
	return false;
#endif
}

static int64_t
sc_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* A name for the new file's names: its offset. */
static uint32_t
sc_name(struct scan_cache *sc, const char *name, enum fkind k)
{
	uint32_t off = (uint32_t)sc->names.n;

	buf_putc(&sc->names, (char)k);
	buf_putn(&sc->names, name, strlen(name) + 1);
	return off;
}

/* What of a listing the walk reads (fx_scan_walk, fx_seen_repos): every
 * subdirectory, every name with a leading dot (each dangerous name has
 * one), and HEAD (a bare repository's mark, gitdir_part). */
static bool
sc_kept(const char *name, enum fkind k)
{
	return k == FK_DIR || name[0] == '.' || strcmp(name, "HEAD") == 0;
}

static void *
sc_opendir(void *ctx, void *parent, const char *name)
{
	struct scan_cache *sc = ctx;
	struct sc_dir *pd = parent, *d;
	struct stat st;
	struct sc_rec r = { 0 };
	int at = pd && pd->real ? dir_fd(pd->real) : AT_FDCWD;
	const char *path = pd ? path_join(pd->path, name) : name, *rel = pd && pd->real ? name : path;
	uint32_t old = sc_find(&sc->old, pd ? pd->old : 0, pd ? name : path);
	const struct sc_rec *o = old ? &sc->old.rec[old - 1] : NULL;
	/* the children of .claude are read whole (fx_scan_children): listed */
	bool keep = (!pd || pd->self) && !name_ieq(strrchr(path, '/') + 1, ".claude");

	if (!(d = calloc(1, sizeof(*d))))
		return NULL;
	d->path = path;
	d->old = old;
	/* with a record to check, one lstat(2) decides; without one, the
	 * directory is read anyway, and its descriptor says what it is */
	if (keep && o && o->trusted && fstatat(at, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
	    o->dev == (uint64_t)st.st_dev && o->ino == (uint64_t)st.st_ino && o->ctime == sc_ns(&st.st_ctim) &&
	    o->mtime == sc_ns(&st.st_mtim) && sc_fs_trusted(sc, st.st_dev, path) && sc_kids_ok(&sc->old, o)) {
		d->served = true;
		r = *o;		/* its name and children stay in the old file until sc_save */
		r.old = 1;
		sc->served++;
	} else {
		if (!(d->real = dir_open(at, rel))) {
			int err = errno;

			free(d);
			errno = err;
			return NULL;
		}
		sc->listed++;
		keep &= fstat(dir_fd(d->real), &st) == 0 && sc_fs_trusted(sc, st.st_dev, path);
		r.dev = st.st_dev;
		r.ino = st.st_ino;
		r.ctime = sc_ns(&st.st_ctim);
		r.mtime = sc_ns(&st.st_mtim);
		/* trusted next time if old enough that a change after the scan
		 * began has a later ctime; else kept only as the way down */
		d->trusted = r.ctime < sc->now - SBX_SCAN_CACHE_RACY_NS;
	}
	if (keep) {
		r.parent = pd ? pd->self : 0;
		if (!r.old)
			r.name = sc_name(sc, pd ? name : path, FK_DIR);
		d->keep = true;
		d->self = (uint32_t)(sc->recs.n / sizeof(r)) + 1;
		buf_putn(&sc->recs, (const char *)&r, sizeof(r));
	}
	return d;
}

static int
sc_readdir(void *ctx, void *dir, const char **name, enum fkind *kind)
{
	struct scan_cache *sc = ctx;
	struct sc_dir *d = dir;
	int r;

	if (d->served) {
		/* from the old file's map, which stays put until sc_save: the
		 * new file's names grow (and move) as the walk goes down */
		const struct sc_rec *o = &sc->old.rec[d->old - 1];
		const char *kn;

		if (d->pos >= o->nkids)
			return 0;
		kn = sc->old.name + sc->old.kid[o->kid0 + d->pos++];
		*kind = (enum fkind)kn[0];
		*name = kn + 1;
		return 1;
	}
	r = sc->under->ops->readdir(sc->under->ctx, d->real, name, kind);
	d->nents += r == 1;
	if (r == 1 && d->keep && sc_kept(*name, *kind)) {
		uint32_t off = sc_name(sc, *name, *kind);

		buf_putn(&d->kids, (const char *)&off, 4);
	}
	d->done = r == 0;
	return r;
}

/* Is the listing just kept the one the old file holds for that place (a
 * directory whose ctime moved with nothing the walk reads changed: the
 * project's own, where each run's placeholders come and go)? */
static bool
sc_same_kids(const struct scan_cache *sc, const struct sc_rec *r, uint32_t old)
{
	const struct sc_rec *o = old ? &sc->old.rec[old - 1] : NULL;
	const uint32_t *kids = (const uint32_t *)sc->kids.p;

	if (!o || (!o->trusted && r->trusted) || o->nkids != r->nkids || !sc_kids_ok(&sc->old, o))
		return false;
	for (uint32_t i = 0; i < r->nkids; i++)
		if (strcmp(sc->names.p + kids[r->kid0 + i], sc->old.name + sc->old.kid[o->kid0 + i]) != 0)
			return false;
	return true;
}

static void
sc_closedir(void *ctx, void *dir)
{
	struct scan_cache *sc = ctx;
	struct sc_dir *d = dir;

	if (d->real && d->keep) {
		struct sc_rec *r = &((struct sc_rec *)sc->recs.p)[d->self - 1];

		r->kid0 = (uint32_t)(sc->kids.n / 4);
		r->nkids = (uint32_t)(d->kids.n / 4);
		r->trusted = d->done && d->trusted;	/* a listing cut short: only a way down */
		r->nents = d->nents;
		buf_putn(&sc->kids, d->kids.p ? d->kids.p : "", d->kids.n);
		if (sc_same_kids(sc, r, d->old))
			sc->restamped++;
		else
			sc->changed++;
	}
	if (d->real)
		dir_close(d->real);
	free(d->kids.p);
	free(d);
}

static enum fkind
sc_lstat(void *ctx, const char *path, struct fid *id)
{
	const struct scan_cache *sc = ctx;

	return sc->under->ops->lstat(sc->under->ctx, path, id);
}

static int
sc_readlink(void *ctx, const char *path, char *buf, size_t n)
{
	const struct scan_cache *sc = ctx;

	return sc->under->ops->readlink(sc->under->ctx, path, buf, n);
}

static int
sc_readfile(void *ctx, const char *path, size_t max, struct buf *out)
{
	const struct scan_cache *sc = ctx;

	return sc->under->ops->readfile(sc->under->ctx, path, max, out);
}

static long
sc_unread(void *ctx, void *dir)
{
	const struct scan_cache *sc = ctx;
	const struct sc_dir *d = dir;
	const struct sc_rec *o = d->served ? &sc->old.rec[d->old - 1] : NULL;

	return o && o->nents > o->nkids ? (long)(o->nents - o->nkids) : 0;
}

static const struct disk_ops sc_disk_ops = {
	sc_lstat, sc_readlink, sc_opendir, sc_readdir, sc_closedir, sc_readfile, sc_unread,
};

/* The cache at path (NULL: none kept), over the real view under. */
static void
sc_open(struct scan_cache *sc, const struct disk *under, const char *path)
{
	struct timespec now;

	memset(sc, 0, sizeof(*sc));
	sc->under = under;
	sc->path = path;
	clock_gettime(CLOCK_REALTIME, &now);
	sc->now = sc_ns(&now);
	if (path)
		sc_load(sc);
}

/* A record's name (its kind byte first), wherever it is. */
static const char *
sc_rec_name(const struct scan_cache *sc, const struct sc_rec *r)
{
	return (r->old ? sc->old.name : sc->names.p) + r->name;
}

/* Append record r (this run's, or the old file's with parent already
 * mapped) to the file being built, its name and children copied. */
static void
sc_emit(const struct scan_cache *sc, struct sc_rec r, struct buf *recs, struct buf *kids, struct buf *names)
{
	const char *nm = sc_rec_name(sc, &r);
	uint32_t j, off;

	off = (uint32_t)names->n;
	buf_putn(names, nm, strlen(nm) + 1);
	r.name = off;
	for (j = 0; j < r.nkids; j++) {
		const char *kn = r.old ? sc->old.name + sc->old.kid[r.kid0 + j] :
		    sc->names.p + ((const uint32_t *)sc->kids.p)[r.kid0 + j];

		off = (uint32_t)names->n;
		buf_putn(names, kn, strlen(kn) + 1);
		buf_putn(kids, (const char *)&off, 4);
	}
	r.kid0 = (uint32_t)(kids->n / 4) - r.nkids;
	r.old = 0;
	buf_putn(recs, (const char *)&r, sizeof(r));
}

/* Write the new file: this run's records, then the old file's trees of
 * roots this run did not walk while they fit. Nothing is written when
 * every directory came from the old file or was listed the same (but for
 * a few ctimes, listed again next time): the usual run over an unchanged
 * tree copies nothing. */
static void
sc_save(struct scan_cache *sc)
{
	const struct sc_rec *nr = (const struct sc_rec *)sc->recs.p;
	uint32_t n = (uint32_t)(sc->recs.n / sizeof(*nr)), i, j, *map = NULL, *slot, total;
	struct strset roots = { 0 };	/* in the arena */
	struct sc_head h = { SBX_SCAN_CACHE_MAGIC, 0, 0, 0, 0 };
	struct buf out = { 0 }, recs = { 0 }, kids = { 0 }, names = { 0 };
	const char *tmp;
	int fd;

	/* no listing differs from the old file's (a directory gone, or one
	 * made, is a listing that changed): it holds what this run walked */
	if (!sc->path || n > SBX_SCAN_CACHE_MAX_DIRS || (!sc->changed && sc->restamped <= SBX_SCAN_CACHE_RESTAMPS))
		goto done;
	for (i = 0; i < n; i++)
		if (!nr[i].parent)
			strset_add(&roots, sc_rec_name(sc, &nr[i]) + 1);
	/* the old trees kept: those of roots this run did not walk */
	if (sc->old.nrec && !(map = calloc(sc->old.nrec, sizeof(*map))))
		goto done;
	for (i = 0, total = n; i < sc->old.nrec && total < SBX_SCAN_CACHE_MAX_DIRS; i++) {
		const struct sc_rec *o = &sc->old.rec[i];

		if (o->parent > i || o->name + 1 >= sc->old.nname || !sc_kids_ok(&sc->old, o) ||
		    (o->parent ? !map[o->parent - 1] : strset_has(&roots, sc->old.name + o->name + 1)))
			continue;	/* a tree this run walked again, or one not kept */
		map[i] = ++total;
	}
	for (i = 0; i < n; i++)
		sc_emit(sc, nr[i], &recs, &kids, &names);
	for (i = 0; i < sc->old.nrec; i++)
		if (map[i]) {
			struct sc_rec r = sc->old.rec[i];

			r.parent = r.parent ? map[r.parent - 1] : 0;
			r.old = 1;
			sc_emit(sc, r, &recs, &kids, &names);
		}
	h.nrec = total;
	h.nkid = (uint32_t)(kids.n / 4);
	h.nname = (uint32_t)names.n;
	for (h.nslot = 16; h.nslot < 2 * total; h.nslot *= 2)
		;
	if (!(slot = calloc(h.nslot, 4)))
		goto done;
	nr = (const struct sc_rec *)recs.p;
	for (i = 0; i < total; i++) {
		for (j = sc_hash(nr[i].parent, names.p + nr[i].name + 1) & (h.nslot - 1); slot[j];
		    j = (j + 1) & (h.nslot - 1))
			;
		slot[j] = i + 1;
	}
	buf_putn(&out, (const char *)&h, sizeof(h));
	buf_putn(&out, recs.p ? recs.p : "", recs.n);
	buf_putn(&out, kids.p ? kids.p : "", kids.n);
	buf_putn(&out, (const char *)slot, (size_t)h.nslot * 4);
	buf_putn(&out, names.p ? names.p : "", names.n);
	free(slot);
	/* a name of this process's own, then renamed over: a concurrent run
	 * maps the old file or this one, whole */
	tmp = aprintf("%s.%d", sc->path, (int)getpid());
	unlink(tmp);	/* a dead run's, with this pid */
	fd = openat(AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write_all(fd, out.p, out.n) < 0 || close(fd) < 0 || rename(tmp, sc->path) < 0) {
		note("scan cache %s: cannot write it: %s", sc->path, strerror(errno));
		unlink(tmp);
	} else {
		note("scan cache %s: %u directories, %zu bytes", sc->path, total, out.n);
	}
done:
	free(out.p);
	free(recs.p);
	free(kids.p);
	free(names.p);
	free(map);
	if (sc->map)
		munmap(sc->map, sc->maplen);
	sc->map = NULL;
	memset(&sc->old, 0, sizeof(sc->old));
}

/* The dangerous names directly at the top of a writable root: the whole
 * list, placeholders included (srt's linuxGetCwdMandatoryDenyPaths). A
 * placeholder costs a mount (and bwrap rereads the mount table for each),
 * so missing names are held only where they would be read later: the
 * current directory (as srt), $HOME (shell rc files, ~/.gitconfig) and git
 * work trees (.gitmodules, .vscode, .mcp.json of a project). Elsewhere,
 * only the dangerous files that exist are denied. */
static int
fx_scan_top(struct fact_finder *fx, const char *root)
{
	size_t i;
	enum fkind git = fx->dk->ops->lstat(fx->dk->ctx, path_join(root, ".git"), NULL);
	bool is_home = fx->home && strcmp(root, fx->home) == 0;
	bool hold_missing = strcmp(root, fx->cwd) == 0 || is_home || git != FK_MISSING;

	for (i = 0; i < LEN(dangerous_files) + LEN(dangerous_dirs); i++) {
		bool f = i < LEN(dangerous_files);
		size_t j = f ? i : i - LEN(dangerous_files);
		enum dwhere w = f ? dangerous_files[j].where : dangerous_dirs[j].where;

		if (dw_home_only(w) || (w == DW_PROJECT && is_home))
			continue;
		if (fx_mandatory(fx, root, f ? dangerous_files[j].name : dangerous_dirs[j].name,
		    f ? dangerous_files[j].why : dangerous_dirs[j].why,
		    w == DW_TOP || w == DW_PROJECT ? hold_missing : w == DW_HOME_HELD ? is_home : false) < 0)
			return -1;
	}
	for (i = 0; i < fx->p->protected_names.n; i++)
		if (fx_mandatory(fx, root, fx->p->protected_names.v[i], "named by protect in the policy", hold_missing) < 0)
			return -1;
	if (fx_agent_dir(fx, root, root) < 0)
		return -1;
	if (git == FK_DIR) {
		if (fx_gitdir(fx, root, path_join(root, ".git"), root, 0) < 0)
			return -1;
	} else if (git == FK_LINK) {	/* its gitdir could be anything */
		return fx_fail(fx, NULL, "%s/.git is a symlink in a writable directory; sbx cannot tell which repository "
		    "it makes git use, so it refuses (hint: replace the link by a .git file, \"gitdir: PATH\", as git "
		    "worktree writes)", root);
	} else if (git == FK_FILE) {
		if (fx_mandatory(fx, root, ".git", "a worktree's .git file says where git finds its hooks", true) < 0)
			return -1;
		if (git == FK_FILE && fx_git_worktree(fx, root) < 0)
			return -1;
	}
	return 0;
}

/* A dangerous name the walk found: denied, or, a symlink, covered. */
static int
fx_deny_found(struct fact_finder *fx, const char *p, enum fkind k, const char *why)
{
	if (k == FK_LINK)
		return fx_cover_link(fx, p, why, true) < 0 ? -1 : 0;
	plan_add_fact(fx->facts, p, k, RB_DENY_WRITE, why);
	return 0;
}

/* Look inside dir (a handle) for children named one of names[] (any case);
 * add each as a mandatory deny. */
static int
fx_scan_children(struct fact_finder *fx, void *parent, const char *dirpath, const char *dirname,
    const char *const *names, size_t n, const char *why)
{
	void *dh = fx->sdk->ops->opendir(fx->sdk->ctx, parent, dirname);
	const char *name;
	enum fkind k;
	size_t i;
	int rc = 0;

	if (!dh)
		return 0;
	while (rc == 0 && fx->sdk->ops->readdir(fx->sdk->ctx, dh, &name, &k) == 1)
		for (i = 0; i < n; i++)
			if (name_ieq(name, names[i])) {
				const char *p = path_join(dirpath, name);

				if (k == FK_LINK)
					rc = fx_cover_link(fx, p, why, true) < 0 ? -1 : 0;
				else
					plan_add_fact(fx->facts, p, k, RB_DENY_WRITE, why);
			}
	fx->sdk->ops->closedir(fx->sdk->ctx, dh);
	return rc;
}

/* The entries by which git takes a directory for a gitdir, whatever its
 * name (a bare repository, a .git renamed away): HEAD, objects/, refs/.
 * Returns the bit of one of them, so a reader can tell all three apart. */
static unsigned
gitdir_part(const char *name, enum fkind k)
{
	return strcmp(name, "HEAD") == 0 && k == FK_FILE ? 1 : strcmp(name, "objects") == 0 && k == FK_DIR ? 2 :
	    strcmp(name, "refs") == 0 && k == FK_DIR ? 4 : 0;
}

/* Every .git under dir, at any depth, and every directory (the audit after
 * the run compares: a .git that was not there is new, and only a directory
 * that changed can hold one). The scan's walk goes on with this below its
 * own depth. Not entering .git or node_modules (where the audit goes by
 * birth time); bounded. */
static void
fx_seen_repos(struct fact_finder *fx, void *dh, const char *dir, long *walked, int depth)
{
	const char *name;
	enum fkind k;
	struct vec subs = { 0 };
	size_t i;
	unsigned parts = 0;

	vec_push(&fx->dirs, (void *)dir);
	while (fx->sdk->ops->readdir(fx->sdk->ctx, dh, &name, &k) == 1) {
		if (++*walked > SBX_MAX_WALK_ENTRIES) {
			plan_add_fact(fx->facts, dir, FK_DIR, RB_SEEN_PARTIAL, "the search for repositories stopped");
			return;
		}
		parts |= gitdir_part(name, k);
		if (strcmp(name, ".git") == 0)
			plan_add_fact(fx->facts, path_join(dir, name), k, RB_REPO_SEEN, "a repository before the run");
		else if (k == FK_DIR && strcmp(name, "node_modules") == 0)
			vec_push(&fx->dirs, path_join(dir, name));	/* listed, not entered */
		else if (k == FK_DIR && depth < 256)
			vec_push(&subs, astrdup(name));
	}
	if (fx->sdk->ops->unread && (*walked += fx->sdk->ops->unread(fx->sdk->ctx, dh)) > SBX_MAX_WALK_ENTRIES) {
		plan_add_fact(fx->facts, dir, FK_DIR, RB_SEEN_PARTIAL, "the search for repositories stopped");
		return;
	}
	if (parts == 7) {	/* a gitdir (a bare repository): listed, its objects not walked */
		plan_add_fact(fx->facts, dir, FK_DIR, RB_REPO_SEEN, "a repository before the run");
		return;
	}
	for (i = 0; i < subs.n; i++) {
		void *sub = fx->sdk->ops->opendir(fx->sdk->ctx, dh, subs.v[i]);

		if (sub) {
			fx_seen_repos(fx, sub, path_join(dir, subs.v[i]), walked, depth + 1);
			fx->sdk->ops->closedir(fx->sdk->ctx, sub);
		}
	}
}

/* The walk below a root, srt's depth semantics (one ripgrep pass there):
 * with depth N, a dangerous file counts in directories at depth <= N-1 (the
 * root is 0); a dangerous directory, .claude/ and .git/ in directories at
 * depth <= N-2. node_modules is skipped, as srt does; .git is not entered
 * (its dangerous parts are named above). Names match in any case. */
static int
fx_scan_walk(struct fact_finder *fx, void *dh, const char *path, int depth)
{
	long maxd = fx->p->mandatory_deny_depth;
	const char *name;
	enum fkind k;
	int r;
	size_t i;
	unsigned gitdir_parts = 0;
	bool gitdir_said = false;

	vec_push(&fx->dirs, (void *)path);	/* for the audit after the run (9b) */
	while ((r = fx->sdk->ops->readdir(fx->sdk->ctx, dh, &name, &k)) == 1) {
		bool dangerous = false, dir_level = depth <= maxd - 2;
		char *p;

		if ((gitdir_parts |= gitdir_part(name, k)) == 7 && !gitdir_said) {
			/* a gitdir (a bare repository): a push to it runs its
			 * hooks, so it is protected as a .git is (its own
			 * directory is where git runs them) */
			gitdir_said = true;
			plan_add_fact(fx->facts, path, FK_DIR, RB_REPO_SEEN, "a repository before the run");
			if (fx_gitdir(fx, path_dirname(path), path, path, 0) < 0)
				return -1;
		}

		/* every .git, every directory, as far down as fx_seen_repos goes:
		 * what is not listed is new after the run (9b) */
		if (strcmp(name, ".git") == 0)
			plan_add_fact(fx->facts, path_join(path, name), k, RB_REPO_SEEN, "a repository before the run");
		if (k == FK_DIR && strcmp(name, "node_modules") == 0)
			vec_push(&fx->dirs, path_join(path, name));	/* listed, not entered */
		else if (k == FK_DIR && depth + 1 > maxd - 1 && strcmp(name, ".git") != 0) {
			void *sub = fx->sdk->ops->opendir(fx->sdk->ctx, dh, name);

			if (sub) {
				fx_seen_repos(fx, sub, path_join(path, name), &fx->seen_walked, depth + 1);
				fx->sdk->ops->closedir(fx->sdk->ctx, sub);
			}
		}

		if (++fx->walked > SBX_MAX_WALK_ENTRIES)
			return fx_fail(fx, NULL, "the scan for dangerous files under %s passed %d entries; "
			    "lower mandatory-deny-depth or narrow allow-write", path, SBX_MAX_WALK_ENTRIES);
		if (name[0] != '.' && !fx->dotless && (k != FK_DIR || depth + 1 > maxd - 1))
			continue;	/* fast path: every dangerous name the walk looks for starts with a dot */
		p = path_join(path, name);
		if (depth <= maxd - 1)
			for (i = 0; i < LEN(dangerous_files); i++)
				if (!dw_home_only(dangerous_files[i].where) && name_ieq(name, dangerous_files[i].name) &&
				    fx_deny_found(fx, p, k, aprintf("mandatory deny %s: %s", dangerous_files[i].name,
				    dangerous_files[i].why)) < 0)
					return -1;
		for (i = 0; dir_level && i < LEN(dangerous_dirs); i++)
			if (!strchr(dangerous_dirs[i].name, '/') && name_ieq(name, dangerous_dirs[i].name) &&
			    !(dangerous_dirs[i].where == DW_PROJECT && fx->home && strcmp(path, fx->home) == 0) &&
			    fx_deny_found(fx, p, k, aprintf("mandatory deny %s: %s", name, dangerous_dirs[i].why)) < 0)
				return -1;
		for (i = 0; depth <= maxd - 1 && i < fx->p->protected_names.n; i++)
			if (!strchr(fx->p->protected_names.v[i], '/') && name_ieq(name, fx->p->protected_names.v[i]) &&
			    fx_deny_found(fx, p, k, aprintf("protect %s: named by the policy", name)) < 0)
				return -1;
		if (dir_level && name_ieq(name, ".claude")) {
			static const char claude_why[] = "agent configuration runs later with full access";

			if (k == FK_DIR && fx_scan_children(fx, dh, p, name, claude_children, LEN(claude_children),
			    "mandatory deny .claude/: agent configuration runs later with full access") < 0)
				return -1;
			/* a linked .claude: its link pinned, the names inside its target denied */
			for (i = 0; k == FK_LINK && i < LEN(claude_children); i++)
				if (fx_mandatory(fx, path, aprintf("%s/%s", name, claude_children[i]), claude_why, false) < 0)
					return -1;
		}
		if (dir_level && (name_ieq(name, ".claude") || name_ieq(name, ".codex")) && fx_agent_dir(fx, path, path) < 0)
			return -1;
		if (dir_level && name_ieq(name, ".git")) {
			dangerous = k == FK_LINK;
			/* a nested repository: protected as one at a root's top */
			if (k == FK_DIR && fx_gitdir(fx, path, p, path, 0) < 0)
				return -1;
			if (k == FK_FILE)
				plan_add_fact(fx->facts, p, k, RB_DENY_WRITE,
				    "mandatory deny .git: a worktree's .git file says where git finds its hooks");
		}
		if (dangerous && k == FK_LINK)	/* a .git symlink: its gitdir could be anything */
			return fx_fail(fx, NULL, "%s is a symlink in a writable directory; sbx cannot tell which "
			    "repository it makes git use, so it refuses (hint: replace the link by a .git file, "
			    "\"gitdir: PATH\", as git worktree writes)", p);
		if (k == FK_DIR && depth + 1 <= maxd - 1 && strcmp(name, "node_modules") != 0 &&
		    !name_ieq(name, ".git")) {
			void *sub = fx->sdk->ops->opendir(fx->sdk->ctx, dh, name);

			if (!sub) {
				/* SECURITY: a directory sbx cannot list may hold anything:
				 * keep all of it read-only (srt does the same) */
				if (errno == EACCES || errno == EPERM) {
					note("%s: cannot be listed; kept read-only whole", p);
					plan_add_fact(fx->facts, p, FK_DIR, RB_DENY_WRITE,
					    "unlistable directory in a writable root: kept read-only");
				}
				continue;
			}
			r = fx_scan_walk(fx, sub, p, depth + 1);
			fx->sdk->ops->closedir(fx->sdk->ctx, sub);
			if (r < 0)
				return -1;
		}
	}
	if (r < 0)
		return fx_fail(fx, NULL, "cannot list %s: %s", path, strerror(errno));
	if (fx->sdk->ops->unread && (fx->walked += fx->sdk->ops->unread(fx->sdk->ctx, dh)) > SBX_MAX_WALK_ENTRIES)
		return fx_fail(fx, NULL, "the scan for dangerous files under %s passed %d entries; "
		    "lower mandatory-deny-depth or narrow allow-write", path, SBX_MAX_WALK_ENTRIES);
	return 0;
}

static int
fx_scan_root(struct fact_finder *fx, const char *root)
{
	void *dh;
	int rc;

	if (fx_scan_top(fx, root) < 0)
		return -1;
	dh = fx->sdk->ops->opendir(fx->sdk->ctx, NULL, root);
	if (!dh)
		return 0;
	rc = fx_scan_walk(fx, dh, root, 0);
	fx->sdk->ops->closedir(fx->sdk->ctx, dh);
	return rc;
}

/* What a run adds to every policy: its private TMPDIR, writable, inside the
 * runtime directory, which is hidden (other runs' files, the placeholder
 * registry). */
struct run_paths {
	const char *cwd;	/* real */
	const char *runtime_root;	/* chosen by runtime_root_pick (9a); NULL before */
	const char *tmpdir;	/* the command's TMPDIR, inside runtime_root (on disk) */
	const char *empty_file;	/* bound over denied files: reads as empty */
	const char *home;	/* real $HOME, or NULL */
	const char *bridge_dir;	/* bridge socat: the proxy's sockets (0700), or NULL */
	const char *git_global[4];	/* git's global and system config files, NULL-ended */
	struct vec runtime_covers;	/* of const char *: the other runtime directories, hidden too */
	const char *resolv_conf;	/* network-dns: "nameserver 127.0.0.1", bound over /etc/resolv.conf */
	const char *run_dir;	/* this run's own files: on tmpfs where there is one (registry_root_pick) */
};

/* The policy's own path rules, resolved into facts: no run paths, no
 * scan. What this alone makes writable decides where the runtime root may
 * lie (9a: never anywhere the command can write). Returns 0, or -1 with
 * fx->e filled. */
static int
plan_resolve_rules(struct fact_finder *fx)
{
	/* disable-filesystem drops every rule but the secrets: srt drops
	 * those too, but a secret named and then silently readable is the
	 * hole this directive exists to close */
	if (fx->p->fs_disabled)
		return fx_rules(fx, PL_DENY_SECRET, "deny-secret-file");
	return fx_rules(fx, PL_ALLOW_WRITE, "allow-write") < 0 || fx_rules(fx, PL_ALLOW_READ, "allow-read") < 0 ||
	    fx_rules(fx, PL_DENY_READ, "deny-read") < 0 || fx_rules(fx, PL_DENY_WRITE, "deny-write") < 0 ||
	    fx_rules(fx, PL_DENY_SECRET, "deny-secret-file") < 0 ? -1 : 0;
}

/* What every run adds: its private TMPDIR, writable, inside the runtime
 * directory, which is hidden (other runs' files and the placeholder
 * registry). */
static void
plan_add_run_paths(const struct fact_finder *fx, const struct run_paths *rp)
{
	if (fx->p->fs_disabled || !rp->runtime_root)
		return;
	plan_add_fact(fx->facts, rp->runtime_root, FK_DIR, RB_HIDE, "sbx runtime directory: other runs' files");
	plan_add_fact(fx->facts, rp->tmpdir, FK_DIR, RB_WRITE, "the command's private TMPDIR");
	for (size_t i = 0; i < rp->runtime_covers.n; i++)
		plan_add_fact(fx->facts, rp->runtime_covers.v[i], FK_DIR, RB_HIDE,
		    "another place of sbx's runtime directory: no command may write or read it");
}

/* What the agents' settings name (fx_agent_dir), for the project the
 * command runs in: the current directory, and the top of its work tree
 * when that is above (an agent started there, its Bash call in a
 * subdirectory); each read with its own settings, $HOME's and the
 * machine's. The scan has read those of the writable roots and of the
 * .claude and .codex directories below them, each for its own project. */
static int
plan_agents(struct fact_finder *fx, const struct run_paths *rp)
{
	const char *projects[2] = { rp->cwd, NULL }, *d;
	size_t i;

	for (d = rp->cwd; strcmp(d, "/") != 0; d = path_dirname(d))
		if (fx->dk->ops->lstat(fx->dk->ctx, path_join(d, ".git"), NULL) != FK_MISSING) {
			projects[1] = strcmp(d, rp->cwd) != 0 ? d : NULL;
			break;
		}
	for (i = 0; i < LEN(projects) && projects[i]; i++)
		if (fx_agent_dir(fx, projects[i], projects[i]) < 0 ||
		    (rp->home && fx_agent_dir(fx, rp->home, projects[i]) < 0) || fx_agent_dir(fx, NULL, projects[i]) < 0)
			return -1;
	return 0;
}

/* The mandatory-deny scan: each writable root once, and the cwd too when
 * it is writable (srt scans only its cwd); the repositories there and what
 * git's config makes them run; the files read from $HOME. An allow-write
 * of a dangerous file itself is still denied: mandatory means mandatory.
 * Returns 0, or -1 with fx->e filled. */
static int
plan_resolve_scan(struct fact_finder *fx, const struct run_paths *rp)
{
	const struct policy *p = fx->p;
	const struct disk *dk = fx->dk;
	size_t i, j;

	if (p->fs_disabled)
		return 0;
	for (i = 0; i < p->protected_names.n; i++)
		fx->dotless |= ((const char *)p->protected_names.v[i])[0] != '.' && !strchr(p->protected_names.v[i], '/');
	if (fx->dotless)
		fx->sdk = fx->dk;	/* the scan cache keeps only names with a dot (sc_kept) */
	/* git's global config applies in every repository: what it names
	 * (a core.hooksPath in $HOME) is protected wherever git runs */
	for (i = 0; i < LEN(rp->git_global) && rp->git_global[i]; i++) {
		size_t budget = 4 * SBX_MAX_GITCFG_BYTES;
		const char *why;

		int rc = git_config_read(dk, rp->home, rp->git_global[i], 0, &budget, &fx->git_global, &why);

		if (rc < 0)
			return fx_fail(fx, NULL, "%s", why);
		fx_git_unparsable(fx, rc, why, false);
	}
	for (i = 0; i < p->paths[PL_ALLOW_WRITE].n; i++) {
		const struct pathrule *r = p->paths[PL_ALLOW_WRITE].v[i];
		const char *base = strrchr(r->path, '/') + 1;

		for (j = 0; j < LEN(dangerous_files); j++)
			if (name_ieq(base, dangerous_files[j].name) &&
			    fx_mandatory(fx, path_dirname(r->path), base, dangerous_files[j].why, true) < 0)
				return -1;
	}
	for (i = 0; i < fx->roots.n; i++)
		if (path_within(fx->cwd, fx->roots.v[i]) && strcmp(fx->cwd, fx->roots.v[i]) != 0) {
			vec_push(&fx->roots, (void *)fx->cwd);
			break;
		}
	for (i = 0; i < fx->roots.n; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(fx->roots.v[i], fx->roots.v[j]) == 0)
				break;
		if (j < i)
			continue;
		if (fx_scan_root(fx, fx->roots.v[i]) < 0)
			return -1;
		plan_add_fact(fx->facts, fx->roots.v[i], FK_DIR, RB_AUDIT_ROOT, "searched for new repositories after the run");
	}
	/* files read from $HOME wherever $HOME lies in a writable root (the
	 * whole of it, or only ~/.config), and git's global config files */
	for (i = 0; rp->home && i < LEN(dangerous_files); i++)
		if (dw_home_only(dangerous_files[i].where) &&
		    fx_protect(fx, path_join(rp->home, dangerous_files[i].name), aprintf("mandatory deny ~/%s: %s",
		    dangerous_files[i].name, dangerous_files[i].why), true,
		    dangerous_files[i].where == DW_HOME_FILE ? PH_FILE : PH_DIR) < 0)
			return -1;
	for (i = 0; i < LEN(rp->git_global) && rp->git_global[i]; i++)
		if (fx_protect(fx, rp->git_global[i], "git's global config: git runs what it names", true, PH_FILE) < 0)
			return -1;
	if (fx_git_named(fx, NULL, rp->cwd) < 0)
		return -1;
	if (plan_agents(fx, rp) < 0)
		return -1;
	/* the cwd inside a worktree, below its top: git finds the .git above */
	for (i = 0; i < fx->roots.n; i++)
		if (path_within(rp->cwd, fx->roots.v[i])) {
			const char *d;

			for (d = rp->cwd; strcmp(d, "/") != 0; d = path_dirname(d)) {
				enum fkind k = dk->ops->lstat(dk->ctx, path_join(d, ".git"), NULL);

				if (k == FK_FILE && fx_git_worktree(fx, d) < 0)
					return -1;
				if (k != FK_MISSING)
					break;
			}
			break;
		}
	return 0;
}

static void
fx_init(struct fact_finder *fx, const struct policy *p, const struct disk *dk, const char *cwd,
    const char *home, struct vec *facts, struct err *e)
{
	memset(fx, 0, sizeof(*fx));
	fx->cwd = cwd;
	fx->home = home;
	fx->p = p;
	fx->dk = dk;
	fx->sdk = dk;
	fx->facts = facts;
	fx->e = e;
}

/* Resolve the whole policy into facts, in the three steps above (main
 * runs them one by one: the runtime root is chosen between the first and
 * the second). Returns 0, or -1 with e filled. */
static int __attribute__((unused))	/* tests/unit.c plans in one call */
plan_resolve(const struct policy *p, const struct disk *dk, const struct run_paths *rp,
    struct vec *facts, struct err *e)
{
	struct fact_finder fx;

	fx_init(&fx, p, dk, rp->cwd, rp->home, facts, e);
	if (plan_resolve_rules(&fx) < 0)
		return -1;
	plan_add_run_paths(&fx, rp);
	return plan_resolve_scan(&fx, rp);
}

/* ---- 5d. The mount plan: facts -> mounts (pure) ------------------------
 *
 * Facts: each rule, resolved to a real path and a kind, is a node in a tree
 * of paths. A node's state follows from its own rules and its parent's:
 *
 *   visible:  a secret deny on the node or any ancestor -> no (it wins at
 *             any depth, as a write deny does); allow-read or allow-write on
 *             the node -> yes; deny-read -> no; else as the parent (reads
 *             are open at the root)
 *   writable: a write deny on the node or any ancestor -> no (deny wins at
 *             any depth); allow-write -> yes; else as the parent (no at root)
 *
 * A mount is emitted only where the state changes:
 *   visible -> hidden:   directory: --tmpfs, then --remount-ro after the
 *                        paths bound back inside it; file: --ro-bind /dev/null
 *   hidden -> visible:   --bind or --ro-bind of the host path (allow-read/write
 *                        inside a denied directory)
 *   writable changes:    --bind (allow) or --ro-bind (deny)
 *   missing write deny in a writable place: a placeholder (9a), bound read-only
 *
 * Mounts are ordered parents first, so a deny always lands on top of the
 * allow it overrides. Every directory between a write deny and the writable
 * mount above it is pinned (bound onto itself): a mount point cannot be
 * renamed, so `mv .git .git2 && mkdir -p .git/hooks` cannot step around a
 * read-only .git/hooks (bwrap and the kernel both allow renaming an
 * ancestor of a mount point otherwise). */

/* Order paths so that a parent comes right before its subtree: compare as
 * strings in which the end sorts first, then '/', then every other byte. */
static int
path_byte_rank(unsigned char ch)
{
	return ch == '\0' ? 0 : ch == '/' ? 1 : ch + 2;
}

static int
path_order(const char *a, const char *b)
{
	for (; *a && *a == *b; a++, b++)
		;
	return path_byte_rank((unsigned char)*a) - path_byte_rank((unsigned char)*b);
}

static int
pnode_cmp(const void *a, const void *b)
{
	const struct pnode *x = *(struct pnode *const *)a, *y = *(struct pnode *const *)b;

	return path_order(x->path, y->path);
}

static int
mount_cmp(const void *a, const void *b)
{
	const struct mount *x = *(struct mount *const *)a, *y = *(struct mount *const *)b;
	int c = path_order(x->key, y->key);

	return c ? c : (int)x->kind - (int)y->kind;	/* ORDER: enum mkind */
}

static void
plan_mount(struct plan *pl, enum mkind kind, const char *path, const char *why)
{
	struct mount *m = amalloc(sizeof(*m));

	m->kind = kind;
	m->path = path;
	m->why = why;
	m->key = kind == MK_REMOUNT_RO ? aprintf("%s/\xff", path) : path;
	vec_push(&pl->mounts, m);
}

/* Turn facts into a plan. Pure. Returns 0, or -1 with *why set. */
static int
plan_build(const struct vec *facts, bool fs_disabled, struct plan *pl, const char **why)
{
	struct pnode **stack;
	struct pnode root = { "/", FK_DIR, 0, true, false, false, true, false, "root", PH_DIR };
	size_t i, j, sp = 0;

	memset(pl, 0, sizeof(*pl));
	pl->fs_disabled = fs_disabled;
	root.writable = fs_disabled;

	/* merge facts per path */
	for (i = 0; i < facts->n; i++) {
		const struct fact *f = facts->v[i];
		const char *path = f->path;
		struct pnode *n = NULL;

		if (f->rules & (RB_GITDIR | RB_AUDIT_ROOT | RB_REPO_SEEN | RB_SEEN_PARTIAL)) {	/* records, not mounts */
			struct vec *v = f->rules & RB_GITDIR ? &pl->gitdirs : f->rules & RB_AUDIT_ROOT ?
			    &pl->audit_roots : &pl->repos_seen;

			pl->seen_partial |= !!(f->rules & RB_SEEN_PARTIAL);
			for (j = 0; j < v->n && strcmp(v->v[j], path) != 0; j++)
				;
			if (j == v->n && !(f->rules & RB_SEEN_PARTIAL))
				vec_push(v, (void *)path);
			continue;
		}

		for (j = 0; j < pl->nodes.n; j++)
			if (strcmp(((struct pnode *)pl->nodes.v[j])->path, path) == 0) {
				n = pl->nodes.v[j];
				break;
			}
		if (!n) {
			n = amalloc(sizeof(*n));
			n->path = path;
			n->kind = f->kind;
			n->why = f->why;
			n->ph = f->ph;
			vec_push(&pl->nodes, n);
		} else if ((f->rules & RB_PLACEHOLDER) && f->ph != n->ph) {
			n->ph = PH_DIR;	/* the first missing name of two paths: a directory */
		}
		if (n->kind == FK_MISSING && f->kind != FK_MISSING)
			n->kind = f->kind;
		n->rules |= f->rules;
		if ((f->rules & (RB_DENY_WRITE | RB_HIDE)) && !(n->rules & ~f->rules & (RB_DENY_WRITE | RB_HIDE)))
			n->why = f->why;	/* a deny's reason is the one worth showing */
	}
	if (pl->nodes.n)
		qsort(pl->nodes.v, pl->nodes.n, sizeof(void *), pnode_cmp);

	stack = amalloc((pl->nodes.n + 1) * sizeof(*stack));
	stack[sp++] = &root;
	for (i = 0; i < pl->nodes.n; i++) {
		struct pnode *n = pl->nodes.v[i], *par;
		bool vis, wr, forced;

		while (sp > 1 && !path_within(n->path, stack[sp - 1]->path))
			sp--;
		par = stack[sp - 1];
		vis = par->visible;
		/* SECURITY: a secret stays hidden whatever is allowed below it:
		 * nothing under it is bound back (srt: credential denies) */
		n->secret = par->secret || (n->rules & RB_SECRET);
		if (n->secret)
			vis = false;
		else if (n->rules & (RB_SHOW | RB_WRITE))
			vis = true;	/* allow-read wins over deny-read on the same path (srt) */
		else if (n->rules & RB_HIDE)
			vis = false;
		forced = par->forced || (n->rules & (RB_DENY_WRITE | RB_PLACEHOLDER | RB_LINK_PIN));
		wr = forced ? false : (n->rules & RB_WRITE) ? true : par->writable;

		/* what is mounted decides the state below this node */
		n->visible = par->visible;
		n->writable = par->writable;
		n->forced = forced;
		if (n->rules & RB_PLACEHOLDER) {
			if (par->visible && par->writable) {
				struct placeholder *ph = amalloc(sizeof(*ph));

				ph->path = n->path;
				ph->kind = n->ph;
				vec_push(&pl->placeholders, ph);
				plan_mount(pl, MK_BIND_RO, n->path, n->why);
				n->writable = false;
				n->mounted = true;
			}
		} else if (n->rules & RB_LINK_PIN) {
			/* outside every writable place a link cannot be replaced anyway */
			if (par->visible && par->writable) {
				plan_mount(pl, MK_PIN_LINK, n->path, n->why);
				n->writable = false;
				n->mounted = true;
			}
		} else if (n->rules & RB_DANGLING) {
			if (par->visible && par->writable) {
				*why = aprintf("%s: does not exist, and the command could create it there, to run later; "
				    "sbx refuses (hint: create it, or remove the link that points at it)", n->why);
				return -1;
			}
		} else if (n->kind == FK_MISSING || n->kind == FK_UNREADABLE) {
			/* nothing to mount on; a missing path outside every writable
			 * place cannot be created either */
		} else if (!vis) {
			if (par->visible) {
				plan_mount(pl, n->kind == FK_DIR ? MK_TMPFS : MK_EMPTY_FILE, n->path, n->why);
				if (n->kind == FK_DIR)
					plan_mount(pl, MK_REMOUNT_RO, n->path, n->why);
				n->mounted = true;
			}
			n->visible = false;
		} else if (!par->visible || wr != par->writable) {
			plan_mount(pl, wr ? MK_BIND_RW : MK_BIND_RO, n->path, n->why);
			n->visible = true;
			n->writable = wr;
			n->mounted = true;
		}

		/* SECURITY: pin the directories between a deny (of writes, or of
		 * reads: `mv a a2` would carry a hidden a/b/secret out from under
		 * its cover) and the writable mount above it, so none of them can
		 * be renamed away */
		if (n->mounted && par->visible && par->writable && (!n->writable || !n->visible)) {
			const char *top = "/";
			size_t k;
			char *d;

			for (k = sp; k-- > 0;)
				if (stack[k]->mounted) {
					top = stack[k]->path;
					break;
				}
			for (d = path_dirname(n->path); strcmp(d, top) != 0 && path_within(d, top) &&
			    strcmp(d, "/") != 0; d = path_dirname(d)) {
				bool dup = false;

				for (k = 0; k < pl->mounts.n; k++) {
					struct mount *m = pl->mounts.v[k];

					if (strcmp(m->path, d) == 0 && m->kind == MK_BIND_RW)
						dup = true;
				}
				if (!dup)
					plan_mount(pl, MK_BIND_RW, d, aprintf("pin: keeps %s from being renamed away", n->path));
			}
		}
		stack[sp++] = n;
		if (pl->mounts.n > SBX_MAX_MOUNTS) {
			*why = "the plan has more than 8000 mounts; narrow the globs";
			return -1;
		}
	}
	if (pl->mounts.n)
		qsort(pl->mounts.v, pl->mounts.n, sizeof(void *), mount_cmp);
	return 0;
}

/* Show a host file at another path inside (after the plan is built: keeps
 * bwrap's order, parents first). */
static void
plan_bind_from(struct plan *pl, const char *src, const char *dest, const char *why)
{
	plan_mount(pl, MK_BIND_FROM, dest, why);
	((struct mount *)pl->mounts.v[pl->mounts.n - 1])->src = src;
	qsort(pl->mounts.v, pl->mounts.n, sizeof(void *), mount_cmp);
}

/* Would path (real) be writable inside the sandbox under this plan? */
static bool
plan_is_writable(const struct plan *pl, const char *path)
{
	const struct pnode *best = NULL;
	size_t i;

	if (pl->fs_disabled)
		return true;
	for (i = 0; i < pl->nodes.n; i++) {
		const struct pnode *n = pl->nodes.v[i];

		if (path_within(path, n->path) && (!best || strlen(n->path) > strlen(best->path)) &&
		    (n->mounted || n->kind == FK_DIR || n->kind == FK_FILE)) {
			/* a node that mounted nothing has its parent's state, which
			 * it recorded; so the deepest node decides */
			best = n;
		}
	}
	if (!best)
		return false;
	return best->visible && best->writable;
}

/* Hand sbx-init the binds of names in a writable place: each bind of a
 * path onto itself whose parent the command can write, which ph_acquire
 * covers and holds. Two reasons:
 *  - Other programs work in those directories (a shell in /tmp, a `git
 *    checkout` in the project, an editor saving by rename). A name the scan
 *    saw may be gone, or another file, by the time it is mounted on. bwrap
 *    then fails the whole run ("Can't find source path", or "Unable to find
 *    ... in mount table" when the name goes while bwrap rereads the mount
 *    table), and a bind it skipped would leave the name creatable. sbx-init
 *    binds by the device and inode sbx holds, and what changed goes back to
 *    sbx, which covers it as it is now (run_rebind): a placeholder where it
 *    is gone, what is there where it was replaced. Nothing is walked again
 *    and nothing is planned again: the run goes on with every name covered.
 *  - It is cheaper: three syscalls each (open_tree, move_mount, a remount),
 *    where bwrap rereads the whole mount table for every bind (~50 us each
 *    with a dozen mounts, more with more).
 * A read-only bind is sbx-init's only when it is a leaf (no other mount of
 * the plan lies below it): sbx-init binds after bwrap has made all of its
 * own, and a read-only clone takes nothing below it, so it would cover one
 * made below it. A pin (MK_BIND_RW) is cloned with what is below it (10a,
 * bind_held), so it may have mounts below. A FIFO or a device denied in a
 * root stays bwrap's (sbx holds only files and directories). The platform
 * says whether sbx-init can (plat_init_binds). Pure. */
static void
plan_binds_to_init(struct plan *pl)
{
	for (size_t i = 0; i < pl->mounts.n; i++) {
		struct mount *m = pl->mounts.v[i];
		bool leaf = true;

		if ((m->kind != MK_BIND_RO && m->kind != MK_BIND_RW) || !plan_is_writable(pl, path_dirname(m->path)))
			continue;
		for (size_t j = 0; j < pl->nodes.n; j++) {
			const struct pnode *n = pl->nodes.v[j];

			if (strcmp(n->path, m->path) == 0 && n->kind == FK_OTHER)
				leaf = false;	/* a FIFO or a device: sbx holds only files and directories */
		}
		for (size_t j = 0; m->kind == MK_BIND_RO && j < pl->mounts.n; j++) {
			const struct mount *o = pl->mounts.v[j];

			if (o != m && strcmp(o->path, m->path) != 0 && path_within(o->path, m->path))
				leaf = false;
		}
		if (leaf)
			m->kind = m->kind == MK_BIND_RW ? MK_BIND_RW_INIT : MK_BIND_RO_INIT;
	}
	qsort(pl->mounts.v, pl->mounts.n, sizeof(void *), mount_cmp);
}

/* ====================================================================
 * 6. RENDERERS AND WIRE FORMATS: the run's facts, the bwrap argv, the
 *    seccomp programs, the messages between sbx's processes, the Seatbelt
 *    profile (all pure)
 * ====================================================================
 *
 * Everything here is a function of the policy, the plan and the run's
 * facts, compiled on every platform and tested as goldens (tests/unit.c),
 * the Seatbelt profile (6d) among them. */

/* ---- 6a. The run's facts and the bwrap argv ------------------------------
 *
 * Everything a run decides beyond the plan (does the proxy run, is sbx
 * shown inside, what it continues from the caller's environment) is
 * decided once, in run_facts_collect, and read by the run, --print=argv
 * and the session mode to come. Two places deciding "the proxy runs" each
 * their own way is how --print=argv once showed a command that was not
 * the one that ran (GIT_SSH_COMMAND naming a binary that was not there).
 *
 * Order of the argv, as srt's: session and lifetime, network, environment,
 * the filesystem (--ro-bind / / then the plan's mounts), /dev, pid and
 * user namespaces, /proc, then the inner helper and the command. */

/* The descriptors bwrap inherits sit at fixed numbers (the bwrap child
 * moves them there before exec), so the argv is the same bytes whether it
 * runs or is printed. */
enum bwrap_fd {
	SBX_FD_EXE = 3,		/* sbx's own binary, read-only: bwrap runs /proc/self/fd/3 */
	SBX_FD_INFO = 4,	/* bwrap --info-fd: tells the host the inner helper's pid */
	SBX_FD_CTL = 5,		/* the control socket: instructions in, "R" out once the command starts */
	SBX_FD_ARGS = 6,	/* where bwrap reads its options from (--args) */
};

/* Where the command finds the proxy. On Linux: in the sandbox's own network
 * namespace, at srt's fixed ports, with no credential (nothing but the
 * command can reach them). On macOS: on this machine's loopback, at ports
 * the kernel picks, and with a credential made for the run, because every
 * local process can reach a loopback port (srt does the same, 3.3). */
struct proxy_endpoint {
	int http_port, socks_port;
	const char *user, *token;	/* the credential, or NULL: none */
	bool http_external, socks_external;	/* that port is the person's own proxy's: no credential */
};

struct run_facts {
	const struct run_paths *rp;	/* the command's TMPDIR, the empty file, the bridge directory */
	bool proxy;		/* the proxy runs (policy_runs_proxy: always) */
	struct proxy_endpoint ep;	/* where (Linux's; the macOS runner sets its own) */
	const char *self;	/* sbx's binary on this machine, shown inside at self_inside */
	const char *self_inside;	/* where: sbx --connect for GIT_SSH_COMMAND; NULL: not shown, not set */
	bool as_uid0;		/* sbx runs as uid 0: bwrap keeps CAP_SETFCAP for the nested namespace */
	bool dns, capture;	/* network-dns and network-capture in effect (7.4) */
	bool tmp_spare;		/* the TMPDIR may be set aside for a later run (tmpdir_spare_put) */
	const char *resolv_at;	/* dns: where /etc/resolv.conf leads (realpath), bound over; NULL: none */
	long git_config_count;	/* the caller's GIT_CONFIG_COUNT, continued (0 when denied or unset) */
	const char *java_tool_options;	/* the caller's JAVA_TOOL_OPTIONS, kept in front; NULL when denied */
	char *const *envp;	/* the caller's environment, what deny-env is matched against; NULL: none */
	char **cmd;		/* the command and its arguments (sent over the control socket) */
};

/* Does the proxy run? Always, as srt's (3.3): its listeners are made
 * inside and the proxy's environment variables are set even when the
 * policy allows no domain, so a client that tries is refused at once with
 * a 403 and the reason (the policy allows no network), and the refusal is
 * reported, where with nothing listening it met a DNS failure after a
 * minute of retries that never named the sandbox. It costs next to nothing
 * until then: sbx forks the proxy on the first connection (run_supervise).
 * The one place this is decided; p stays for a policy that may one day
 * turn the network fully off or on. */
static bool
policy_runs_proxy(const struct policy *p)
{
	(void)p;
	return true;
}

/* Does a deny-env pattern name this variable (n bytes of name)? */
static bool
env_denied(const struct policy *p, const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < p->deny_env.n; i++)
		if (env_match(p->deny_env.v[i], name, n))
			return true;
	return false;
}

/* Decide the run's facts. self is sbx's own binary (realpath of
 * /proc/self/exe), or NULL when it cannot be found: then GIT_SSH_COMMAND
 * is not set, since sbx --connect would not be there to run it. */
static void
run_facts_collect(struct run_facts *rf, const struct policy *p, const struct run_paths *rp, const char *self,
    bool as_uid0, char *const *envp, char **cmd)
{
	size_t i;
	long v;
	const char *why;

	memset(rf, 0, sizeof(*rf));
	rf->rp = rp;
	rf->proxy = policy_runs_proxy(p);
	rf->ep.http_port = SBX_PROXY_HTTP_PORT;
	rf->ep.socks_port = SBX_PROXY_SOCKS_PORT;
	if (rf->proxy && self && rp->runtime_root) {
		rf->self = self;
		/* bound at a fixed path under the hidden runtime root where the
		 * platform builds the sandbox from mounts; elsewhere run from where
		 * it is (section 1) */
		rf->self_inside = SBX_SELF_BOUND_INSIDE ? path_join(rp->runtime_root, "sbx") : self;
	}
	rf->as_uid0 = as_uid0;
	rf->dns = rf->proxy && p->network_dns && SBX_DNS_STUB;
	rf->capture = rf->dns && p->network_capture;
	/* SECURITY: a TMPDIR goes on to a later run only when no descriptor
	 * of it can have left the sandbox: with allow-all-unix-sockets the
	 * command can pass one (SCM_RIGHTS) to a process of another sandbox
	 * that outlives this run, and with weaker-nested-sandbox it sees the
	 * host's /proc; that process would read and write the next run's
	 * "fresh" TMPDIR through the writable mount the descriptor carries
	 * (found by an attack review: tmpdir_spares_fd_held) */
	rf->tmp_spare = SBX_TMPDIR_SPARE && !p->allow_all_unix_sockets && !p->weaker_nested_sandbox;
	if (rf->dns) {
		/* a resolv.conf that is a link (systemd-resolved's) is covered
		 * where it leads; with none, the C library asks 127.0.0.1 anyway */
		char real[PATH_MAX];

		rf->resolv_at = realpath("/etc/resolv.conf", real) ? astrdup(real) : NULL;
	}
	rf->envp = envp;
	rf->cmd = cmd;
	for (i = 0; envp && envp[i]; i++) {
		if (strncmp(envp[i], "GIT_CONFIG_COUNT=", 17) == 0 && !env_denied(p, "GIT_CONFIG_COUNT", 16))
			rf->git_config_count = parse_int(envp[i] + 17, 0, 1000000, &v, &why) == 0 ? v : 0;
		else if (strncmp(envp[i], "JAVA_TOOL_OPTIONS=", 18) == 0 && !env_denied(p, "JAVA_TOOL_OPTIONS", 17))
			rf->java_tool_options = envp[i] + 18;
	}
}

static void
argv_push(struct vec *v, const char *s)
{
	vec_push(v, (void *)s);
}

static void
argv_push3(struct vec *v, const char *a, const char *b, const char *c)
{
	argv_push(v, a);
	argv_push(v, b);
	if (c)
		argv_push(v, c);
}

/* Parts of /proc that reach past the sandbox's namespaces (global sysctls,
 * sysrq), kept read-only as bwrap's own --proc does: a command run by root
 * is uid 0 in its namespace and would pass their permission checks. */
static const char *const proc_covers[] = { "/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus" };

static void
env_push(struct vec *kv, const char *name, const char *value)
{
	vec_push(kv, (void *)name);
	vec_push(kv, (void *)value);
}

/* Where programs find the proxy: every variable srt sets (3.3), pointing
 * at the proxy's listeners (rf->ep), and what srt lacks: JVM properties
 * (JVM tools ignore HTTPS_PROXY) and NODE_USE_ENV_PROXY (node's fetch
 * honours the variables where it supports them). With a credential
 * (macOS) it is in every URL, and sbx --connect finds it in
 * SBX_PROXY_PORT and SBX_PROXY_CREDENTIAL. */
static void
run_env_proxy(const struct run_facts *rf, struct vec *kv)
{
	const struct proxy_endpoint *ep = &rf->ep;
	const char *jto = rf->java_tool_options;	/* NULL when denied: it must not come back in front of ours */
	static const char *const http_vars[] = { "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
		"ALL_PROXY", "all_proxy", "GRPC_PROXY", "grpc_proxy", "DOCKER_HTTP_PROXY", "DOCKER_HTTPS_PROXY" };
	static const char no_proxy[] = "localhost,127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16";
	const char *cred = ep->token ? aprintf("%s:%s@", ep->user, ep->token) : "";
	const char *http = aprintf("http://%s127.0.0.1:%d", ep->http_external ? "" : cred, ep->http_port);
	const char *socks = aprintf("socks5h://%s127.0.0.1:%d", ep->socks_external ? "" : cred, ep->socks_port);
	size_t i;

	for (i = 0; i < LEN(http_vars); i++)
		env_push(kv, http_vars[i], http);
	env_push(kv, "FTP_PROXY", socks);
	env_push(kv, "ftp_proxy", socks);
	env_push(kv, "RSYNC_PROXY", aprintf("%s127.0.0.1:%d", ep->socks_external ? "" : cred, ep->socks_port));
	env_push(kv, "NO_PROXY", no_proxy);
	env_push(kv, "no_proxy", no_proxy);
	env_push(kv, "CLOUDSDK_PROXY_TYPE", "http");
	env_push(kv, "CLOUDSDK_PROXY_ADDRESS", "127.0.0.1");
	env_push(kv, "CLOUDSDK_PROXY_PORT", aprintf("%d", ep->http_port));
	if (ep->token && !ep->http_external) {
		env_push(kv, "CLOUDSDK_PROXY_USERNAME", ep->user);
		env_push(kv, "CLOUDSDK_PROXY_PASSWORD", ep->token);
		env_push(kv, "SBX_PROXY_PORT", aprintf("%d", ep->http_port));
		env_push(kv, "SBX_PROXY_CREDENTIAL", aprintf("%s:%s", ep->user, ep->token));
	}
	env_push(kv, "NODE_USE_ENV_PROXY", "1");
	/* ssh (and git over ssh) through the proxy with sbx's own CONNECT
	 * client (on Linux bound at a fixed path inside): no socat needed */
	if (rf->self_inside)
		env_push(kv, "GIT_SSH_COMMAND", aprintf("ssh -o ControlMaster=no -o ControlPath=none "
		    "-o ProxyCommand='%s --connect %%h %%p'", rf->self_inside));
	env_push(kv, "JAVA_TOOL_OPTIONS", aprintf("%s%s-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=%d "
	    "-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=%d -Dhttp.nonProxyHosts=localhost|127.*|[::1]",
	    jto ? jto : "", jto ? " " : "", ep->http_port, ep->http_port));
}

/* Does the plan hide path: is the last mount at it or at its deepest
 * covered ancestor a tmpfs (a deny-read directory, nothing bound back at
 * or above path)? Then nothing can be bound there: bwrap would have to
 * create the mount point in a read-only tmpfs, and fails. Pure. */
static bool
plan_hides(const struct plan *pl, const char *path)
{
	const struct mount *deepest = NULL;

	for (size_t i = 0; i < pl->mounts.n; i++) {
		const struct mount *m = pl->mounts.v[i];

		if (m->kind == MK_REMOUNT_RO || m->kind == MK_PIN_LINK || !path_within(path, m->path))
			continue;
		if (!deepest || strlen(m->path) >= strlen(deepest->path))	/* bwrap order: the later is on top */
			deepest = m;
	}
	return deepest && deepest->kind == MK_TMPFS;
}

/* The variables sbx sets for the command, in order, as name, value pairs
 * in kv: both runners set exactly these (bwrap's --setenv, the macOS
 * runner's environment), after removing what deny-env names. */
static void
run_env(const struct policy *p, const struct run_facts *rf, struct vec *kv)
{
	env_push(kv, "SANDBOX_RUNTIME", "1");
	if (rf->proxy)
		run_env_proxy(rf, kv);
	env_push(kv, "TMPDIR", rf->rp->tmpdir);
	if (p->git_safe_dirs.n) {
		/* continue the caller's GIT_CONFIG_COUNT (0 when it was denied) */
		long base = rf->git_config_count;

		for (size_t i = 0; i < p->git_safe_dirs.n; i++) {
			env_push(kv, aprintf("GIT_CONFIG_KEY_%ld", base + (long)i), "safe.directory");
			env_push(kv, aprintf("GIT_CONFIG_VALUE_%ld", base + (long)i), p->git_safe_dirs.v[i]);
		}
		env_push(kv, "GIT_CONFIG_COUNT", aprintf("%ld", base + (long)p->git_safe_dirs.n));
	}
}

/* The options bwrap reads from --args (NUL-separated, so thousands of
 * mounts fit where a command line would not). */
static void
bw_render_options(const struct policy *p, const struct plan *pl, const struct run_facts *rf, struct vec *out)
{
	size_t i;

	/* No --new-session: the seccomp filter refuses TIOCSTI and TIOCLINUX,
	 * so the command keeps the terminal (job control, resizing, tty(1))
	 * without being able to type into the shell that runs after it. */
	argv_push(out, "--die-with-parent");
	/* only lo: the network is closed. With the DNS stub, the inner helper
	 * makes the command's network namespace itself (inner_own_network: it
	 * must own it to bind port 53), and one of bwrap's would be a second
	 * that nothing uses (each costs ~0.2 ms to make). Then the inner helper
	 * refuses to go on without its own (fail closed); until it has it, only
	 * sbx's helper runs, in the host's network namespace, and it connects
	 * nowhere. A sandbox that may run without nested namespaces keeps
	 * bwrap's. */
	if (!SBX_ONE_NETNS || !rf->dns || p->weaker_nested_sandbox)
		argv_push(out, "--unshare-net");
	/* deny-env: each variable of sbx's environment that a pattern names is
	 * removed, before sbx sets its own: bwrap applies these in order (srt
	 * relies on it too), so a name sbx sets itself (SANDBOX_RUNTIME,
	 * TMPDIR, the proxy's) holds sbx's value, never the caller's */
	for (i = 0; rf->envp && rf->envp[i]; i++) {
		const char *eq = strchr(rf->envp[i], '=');

		if (eq && eq > rf->envp[i] && env_denied(p, rf->envp[i], (size_t)(eq - rf->envp[i])))
			argv_push3(out, "--unsetenv", astrndup(rf->envp[i], (size_t)(eq - rf->envp[i])), NULL);
	}
	{
		struct vec kv = { 0 };

		run_env(p, rf, &kv);
		for (i = 0; i + 1 < kv.n; i += 2)
			argv_push3(out, "--setenv", kv.v[i], kv.v[i + 1]);
	}

	argv_push3(out, pl->fs_disabled ? "--bind" : "--ro-bind", "/", "/");
	for (i = 0; i < pl->mounts.n; i++) {
		const struct mount *m = pl->mounts.v[i];

		switch (m->kind) {
		case MK_BIND_RO:
			argv_push3(out, "--ro-bind", m->path, m->path);
			break;
		case MK_BIND_RW:
			argv_push3(out, "--bind", m->path, m->path);
			break;
		case MK_EMPTY_FILE:
			argv_push3(out, "--ro-bind", rf->rp->empty_file, m->path);
			break;
		case MK_TMPFS:
			argv_push3(out, "--tmpfs", m->path, NULL);
			break;
		case MK_REMOUNT_RO:
			argv_push3(out, "--remount-ro", m->path, NULL);
			break;
		case MK_BIND_FROM:
			argv_push3(out, "--ro-bind", m->src, m->path);
			break;
		case MK_PIN_LINK:
		case MK_BIND_RO_INIT:
		case MK_BIND_RW_INIT:
			break;	/* sbx-init's, from the control message */
		}
	}
	/* the stub's resolv.conf, unless a deny-read directory hides where it
	 * leads (deny-read /etc, or /run under systemd-resolved's link): the
	 * command then has none, and the C library asks 127.0.0.1 anyway */
	if (rf->dns && rf->resolv_at && !plan_hides(pl, rf->resolv_at))
		argv_push3(out, "--ro-bind", rf->rp->resolv_conf, rf->resolv_at);
	argv_push3(out, "--dev", "/dev", NULL);
	argv_push(out, "--unshare-pid");
	argv_push(out, "--unshare-user");
	argv_push3(out, "--cap-drop", "ALL", NULL);
	/* KERNEL (5.12+): mapping uid 0 in the nested user namespace needs
	 * CAP_SETFCAP where it is created; the inner helper has it only until
	 * it unshares, and the command starts with no capabilities at all */
	if (rf->as_uid0)
		argv_push3(out, "--cap-add", "CAP_SETFCAP", NULL);
	/* KERNEL: a fresh procfs may be mounted in the nested user namespace
	 * only while some proc mount in it is fully visible (no locked mounts
	 * over its contents: mount_too_revealing()). bwrap's own --proc covers
	 * /proc/sys and others, so the host's /proc is bound here instead; only
	 * sbx's inner helper ever sees it: its init mounts the command's fresh
	 * /proc over it, with those covers. A weaker sandbox keeps this /proc
	 * for the command, so it gets the covers here. */
	argv_push3(out, "--bind", "/proc", "/proc");
	if (p->weaker_nested_sandbox)
		for (i = 0; i < LEN(proc_covers); i++)
			argv_push3(out, "--ro-bind-try", proc_covers[i], proc_covers[i]);
	/* our inner helper is pid 1: it forwards signals and reports exec errors */
	argv_push(out, "--as-pid-1");
	argv_push3(out, "--info-fd", aprintf("%d", SBX_FD_INFO), NULL);
}

/* What follows the options: sbx itself, run from its inherited read-only
 * fd (so a deny-read or a bind over its install path cannot change what
 * runs), as the inner helper. The command travels over the control socket;
 * for --print=argv it is shown after a "#". */
static void
bw_render_command(struct vec *out)
{
	argv_push(out, "--");
	argv_push(out, aprintf("/proc/self/fd/%d", SBX_FD_EXE));
	argv_push(out, "--inner");
	argv_push(out, aprintf("%d", SBX_FD_CTL));
	argv_push(out, aprintf("%d,%d,%d", SBX_FD_EXE, SBX_FD_INFO, SBX_FD_ARGS));
}

/* The whole bwrap invocation, as it runs: bwrap reads the options from
 * the --args descriptor (NUL-separated, so thousands of mounts fit where
 * a command line would not) and takes the rest from its argv. */
struct bw_invocation {
	struct vec opts;	/* of char *: the options, read from SBX_FD_ARGS */
	struct vec argv;	/* of char *: bwrap --args 6 -- /proc/self/fd/3 --inner 5 3,4,6, NULL-ended */
	const struct plan *pl;	/* for the symlinks sbx-init pins (not bwrap's) */
	char **cmd;		/* the command: sent over the control socket, not in argv */
};

/* Render the invocation: the run and --print=argv both call this, with
 * the same facts, so what is printed is what runs. */
static void
bw_render(const char *bwrap, const struct policy *p, const struct plan *pl, const struct run_facts *rf,
    struct bw_invocation *bi)
{
	memset(bi, 0, sizeof(*bi));
	bi->pl = pl;
	bi->cmd = rf->cmd;
	bw_render_options(p, pl, rf, &bi->opts);
	argv_push(&bi->argv, bwrap);
	argv_push(&bi->argv, "--args");
	argv_push(&bi->argv, aprintf("%d", SBX_FD_ARGS));
	bw_render_command(&bi->argv);
	argv_push(&bi->argv, NULL);
}

/* The bytes written to the --args descriptor. */
static void
bw_args_blob(const struct bw_invocation *bi, struct buf *b)
{
	for (size_t i = 0; i < bi->opts.n; i++)
		buf_putn(b, bi->opts.v[i], strlen(bi->opts.v[i]) + 1);
}

/* --print=argv: the whole bwrap command, shell-quoted, one option a line,
 * with the options shown where bwrap reads them from (--args 6 is left
 * out: the descriptor holds exactly these words). */
static void
bw_print(const struct bw_invocation *bi, struct buf *b)
{
	size_t i;

	buf_put_shell_quoted(b, bi->argv.v[0]);
	for (i = 0; i < bi->opts.n; i++) {
		const char *a = bi->opts.v[i];

		if (a[0] == '-' && a[1] == '-') {
			buf_puts(b, " \\\n  ");
		} else {
			buf_putc(b, ' ');
		}
		buf_put_shell_quoted(b, a);
	}
	buf_puts(b, " \\\n ");
	for (i = 3; i < bi->argv.n && bi->argv.v[i]; i++) {	/* after bwrap --args 6 */
		buf_putc(b, ' ');
		buf_put_shell_quoted(b, bi->argv.v[i]);
	}
	buf_puts(b, "\n# command, sent over the control socket:");
	for (i = 0; bi->cmd && bi->cmd[i]; i++) {
		buf_putc(b, ' ');
		buf_put_shell_quoted(b, bi->cmd[i]);
	}
	buf_putc(b, '\n');
	for (i = 0; bi->pl && i < bi->pl->mounts.n; i++) {	/* not bwrap's: it follows every link it mounts on */
		const struct mount *m = bi->pl->mounts.v[i];

		if (m->kind == MK_PIN_LINK)
			buf_printf(b, "# symlink pinned by sbx-init (mounted onto itself, not followed): %s\n", m->path);
		if (m->kind == MK_BIND_RO_INIT)
			buf_printf(b, "# bound read-only onto itself by sbx-init: %s\n", m->path);
		if (m->kind == MK_BIND_RW_INIT)
			buf_printf(b, "# pinned (bound onto itself, with what is below it) by sbx-init: %s\n", m->path);
	}
}

/* ---- 6b. The seccomp programs ------------------------------------------
 *
 * seccomp_bpf.h: the syscall numbers of both architectures as data, the
 * filters as tables of rules (each with its reason), the assembler that
 * turns them into cBPF (jumps by labels, resolved in one pass) and the
 * disassembler behind --print=bpf. Installed by the inner helper (10a) and
 * the proxy's lockdown (7.5). */

#include "seccomp_bpf.h"

/* ---- 6c. Wire formats: the messages between sbx's processes -------------
 *
 * sbx, the inner helper and the proxy are separate processes, and each
 * side of every pair may be the one a memory bug took over (the proxy
 * parses hostile bytes; the inner helper shares a namespace with the
 * command). So every message has a pure encoder and a strict decoder,
 * fuzzed as one (tests/fuzz_wire.c: what decodes encodes back to the same
 * bytes):
 *   the control message    sbx -> inner helper: what to build and run
 *   the handed-fd message  inner helper -> sbx: listeners made inside
 *   expose-port messages   proxy <-> inner helper: a connection inside
 *   decision records       proxy -> sbx: each connection's verdict
 *   observer events        the write observer -> sbx: what the command tried
 *   network tables         sbx -> proxy: the lists a control-fd line changed
 *   MITM socket messages   proxy <-> sbx: the MITM proxy's socket, dialled by sbx */

/* The control message to the inner helper (10a). */
enum inner_flag {
	IF_UNIX_BLOCK = 1,	/* keep the unix-block rules */
	IF_ALLOW_USERNS = 2,	/* allow-nested-userns */
	IF_WEAKER = 4,		/* weaker-nested-sandbox */
	IF_PROXY = 8,		/* make the proxy listeners and hand them over */
	IF_OBSERVE = 16,	/* observe-writes: sbx-init installs the observer's program and
				 * hands its listener over with "R" */
	IF_DNS = 32,		/* network-dns: a network namespace of the helper's own, the stub's
				 * UDP socket on 127.0.0.1:53 handed over */
	IF_CAPTURE = 64,	/* network-capture: listeners on 0.0.0.0:port for each capture port */
	IF_SESSION = 128,	/* a session (10f): sbx-init runs no command of its own but each exec sbx
				 * sends over the control socket, which it keeps */
};

#define SBX_CTL_MAGIC		"SBX1"
#define SBX_CTL_MAX_BYTES	(4 << 20)
#define SBX_CTL_MAX_ARGS	65536

/* A name sbx-init binds onto itself (plan_binds_to_init), and what it must
 * be: the device and inode of what sbx holds there (ph_cover). */
struct init_bind { char *path; uint64_t dev, ino; uint32_t flags; };

enum init_bind_flags {
	IB_PIN = 1,	/* read-write, with what is mounted below it (MK_BIND_RW_INIT) */
	IB_NONE = 2,	/* in sbx's answer to a rebind: nothing to bind there (run_rebind) */
};

/* What the inner helper is told. Ports are the policy's allow-host-port
 * and expose-port lists; socat and bridge_sock are set for bridge socat. */
struct inner_msg {
	uint32_t flags;
	uint32_t nports; uint16_t ports[SBX_MAX_HOST_PORTS];	/* allow-host-port */
	uint32_t nexpose; uint16_t expose[SBX_MAX_HOST_PORTS];	/* expose-port */
	uint32_t ncapture; uint16_t capture[SBX_MAX_HOST_PORTS];	/* network-capture's ports (capture_ports) */
	const char *socat;		/* bridge socat: the socat binary, else NULL */
	const char *bridge_sock[2];	/* bridge socat: the proxy's Unix sockets, HTTP and SOCKS */
	uint32_t nlinks; char **links;	/* symlinked dangerous names sbx-init pins (MK_PIN_LINK) */
	uint32_t nbinds; struct init_bind *binds;	/* names sbx-init binds (MK_BIND_RO_INIT, MK_BIND_RW_INIT) */
	char **argv;
};

static void
put_u32(struct buf *b, uint32_t v)
{
	buf_putn(b, (const char *)&v, 4);
}

/* Encode the instructions for the inner helper:
 *   "SBX1" u32 length | u32 flags | u32 nports | nports x u32 | u32 nexpose |
 *   nexpose x u32 | u32 ncapture | ncapture x u32 | socat NUL | http socket NUL | socks socket NUL |
 *   u32 nlinks | nlinks NUL-terminated absolute paths |
 *   u32 nbinds | nbinds x (NUL-terminated absolute path, u64 dev, u64 ino, u32 flags) |
 *   u32 argc | argc NUL-terminated strings
 * (an empty string is "none"). */
static void
ctl_encode(const struct inner_msg *m, struct buf *b)
{
	struct buf body = { 0 };
	uint32_t argc = 0, i;

	while (m->argv[argc])
		argc++;
	put_u32(&body, m->flags);
	put_u32(&body, m->nports);
	for (i = 0; i < m->nports; i++)
		put_u32(&body, m->ports[i]);
	put_u32(&body, m->nexpose);
	for (i = 0; i < m->nexpose; i++)
		put_u32(&body, m->expose[i]);
	put_u32(&body, m->ncapture);
	for (i = 0; i < m->ncapture; i++)
		put_u32(&body, m->capture[i]);
	buf_putn(&body, m->socat ? m->socat : "", strlen(m->socat ? m->socat : "") + 1);
	for (i = 0; i < 2; i++)
		buf_putn(&body, m->bridge_sock[i] ? m->bridge_sock[i] : "",
		    strlen(m->bridge_sock[i] ? m->bridge_sock[i] : "") + 1);
	put_u32(&body, m->nlinks);
	for (i = 0; i < m->nlinks; i++)
		buf_putn(&body, m->links[i], strlen(m->links[i]) + 1);
	put_u32(&body, m->nbinds);
	for (i = 0; i < m->nbinds; i++) {
		buf_putn(&body, m->binds[i].path, strlen(m->binds[i].path) + 1);
		buf_putn(&body, (const char *)&m->binds[i].dev, 8);
		buf_putn(&body, (const char *)&m->binds[i].ino, 8);
		put_u32(&body, m->binds[i].flags);
	}
	put_u32(&body, argc);
	for (i = 0; i < argc; i++)
		buf_putn(&body, m->argv[i], strlen(m->argv[i]) + 1);
	buf_putn(b, SBX_CTL_MAGIC, 4);
	put_u32(b, (uint32_t)body.n);
	buf_putn(b, body.p, body.n);
	free(body.p);
}

/* A reader over a message: each take checks the bytes are there. */
struct cursor { const char *p, *end; const char *why; };

/* n bytes into v (a u32 or a u64, in this machine's order: both ends are
 * this machine) */
static bool
take_bytes(struct cursor *c, void *v, size_t n, const char *what)
{
	if (c->why)
		return false;
	if ((size_t)(c->end - c->p) < n) {
		c->why = what;
		return false;
	}
	memcpy(v, c->p, n);
	c->p += n;
	return true;
}

static bool
take_u32(struct cursor *c, uint32_t *v, const char *what)
{
	return take_bytes(c, v, 4, what);
}

static bool
take_str(struct cursor *c, char **s, const char *what)
{
	const char *nul;

	if (c->why)
		return false;
	if (!(nul = memchr(c->p, '\0', (size_t)(c->end - c->p)))) {
		c->why = what;
		return false;
	}
	*s = astrndup(c->p, (size_t)(nul - c->p));
	c->p = nul + 1;
	return true;
}

static bool
take_ports(struct cursor *c, uint32_t *n, uint16_t *ports, const char *what)
{
	uint32_t i, port;

	if (!take_u32(c, n, what))
		return false;
	if (*n > SBX_MAX_HOST_PORTS) {
		c->why = "bad port count";
		return false;
	}
	for (i = 0; i < *n; i++) {
		if (!take_u32(c, &port, what))
			return false;
		if (port == 0 || port > 65535) {
			c->why = "bad port";
			return false;
		}
		ports[i] = (uint16_t)port;
	}
	return true;
}

/* Decode them: every length checked, nothing trusted. Returns 0, or -1
 * with *why set. */
static int
ctl_decode(const char *p, size_t n, struct inner_msg *m, const char **why)
{
	struct cursor c = { p + 8, p + n, NULL };
	uint32_t len, argc = 0, i;
	char *s[3];

	memset(m, 0, sizeof(*m));
	if (n < 8 || memcmp(p, SBX_CTL_MAGIC, 4) != 0) {
		*why = "bad magic or short message";
		return -1;
	}
	memcpy(&len, p + 4, 4);
	if (len != n - 8) {
		*why = "length does not match";
		return -1;
	}
	if (take_u32(&c, &m->flags, "no flags") &&
	    (m->flags & ~(uint32_t)(IF_UNIX_BLOCK | IF_ALLOW_USERNS | IF_WEAKER | IF_PROXY | IF_OBSERVE | IF_DNS |
	    IF_CAPTURE | IF_SESSION)))
		c.why = "unknown flags";
	take_ports(&c, &m->nports, m->ports, "allow-host-port list cut short");
	take_ports(&c, &m->nexpose, m->expose, "expose-port list cut short");
	take_ports(&c, &m->ncapture, m->capture, "capture port list cut short");
	for (i = 0; i < 3; i++)
		take_str(&c, &s[i], "bridge strings cut short");
	if (take_u32(&c, &m->nlinks, "no link count") && m->nlinks > SBX_MAX_MOUNTS)
		c.why = "bad link count";
	if (!c.why)
		m->links = amalloc((m->nlinks + 1) * sizeof(char *));
	for (i = 0; !c.why && i < m->nlinks; i++)
		if (take_str(&c, &m->links[i], "link path not terminated") && m->links[i][0] != '/')
			c.why = "a link path that is not absolute";
	if (take_u32(&c, &m->nbinds, "no bind count") && m->nbinds > SBX_MAX_MOUNTS)
		c.why = "bad bind count";
	if (!c.why)
		m->binds = amalloc((m->nbinds + 1) * sizeof(*m->binds));
	for (i = 0; !c.why && i < m->nbinds; i++)
		if (take_str(&c, &m->binds[i].path, "bind path not terminated") && m->binds[i].path[0] != '/')
			c.why = "a bind path that is not absolute";
		else if (take_bytes(&c, &m->binds[i].dev, 8, "bind cut short") &&
		    take_bytes(&c, &m->binds[i].ino, 8, "bind cut short") &&
		    take_u32(&c, &m->binds[i].flags, "bind cut short") && (m->binds[i].flags & ~(uint32_t)IB_PIN))
			c.why = "unknown bind flags";
	if (take_u32(&c, &argc, "no argument count") && (argc == 0 || argc > SBX_CTL_MAX_ARGS))
		c.why = "bad argument count";
	if (!c.why) {
		m->socat = *s[0] ? s[0] : NULL;
		m->bridge_sock[0] = *s[1] ? s[1] : NULL;
		m->bridge_sock[1] = *s[2] ? s[2] : NULL;
		if (!m->socat != !m->bridge_sock[0] || !m->socat != !m->bridge_sock[1])
			c.why = "bridge socat half described";
		m->argv = amalloc((argc + 1) * sizeof(char *));
	}
	for (i = 0; !c.why && i < argc; i++)
		take_str(&c, &m->argv[i], "argument not terminated");
	if (!c.why && c.p != c.end)
		c.why = "bytes after the last argument";
	if (c.why) {
		*why = c.why;
		return -1;
	}
	return 0;
}

/* A rebind: the binds sbx-init could not make as planned because the name
 * changed on this machine after sbx covered it (gone, or another file or
 * directory now), and sbx's answer, what covers each of them now
 * (run_rebind). Both are frames (frame_send: the type, a u32 length,
 * the body), sent before sbx-init's "R"; sbx-init waits for the answer:
 *   'V': u32 n | n x u32 index into the instructions' binds, rising
 *   'W': u32 n | n x (u32 index, NUL-terminated absolute path, u64 dev,
 *        u64 ino, u32 flags)
 * The answer's path may be an ancestor of the one asked about (the first
 * name on the way that is gone, covered by one placeholder), and IB_NONE
 * says there is nothing to bind (no name on the way the command could
 * create). The decoders check every index against the instructions: the
 * answer replaces those binds in place. */
#define SBX_REBIND_ASK		'V'
#define SBX_REBIND_ANSWER	'W'

static void
rebind_ask_encode(const uint32_t *idx, uint32_t n, struct buf *b)
{
	b->n = 0;
	put_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		put_u32(b, idx[i]);
}

/* Into idx (room for nbinds): the indices asked about, each below nbinds
 * and rising. Returns their count, or -1 with *why set. */
static int
rebind_ask_decode(const char *p, size_t n, uint32_t nbinds, uint32_t *idx, const char **why)
{
	struct cursor c = { p, p + n, NULL };
	uint32_t count = 0;

	if (take_u32(&c, &count, "no count") && (count == 0 || count > nbinds))
		c.why = "bad count";
	for (uint32_t i = 0; !c.why && i < count; i++)
		if (take_u32(&c, &idx[i], "cut short") && (idx[i] >= nbinds || (i && idx[i] <= idx[i - 1])))
			c.why = "an index out of range or out of order";
	if (!c.why && c.p != c.end)
		c.why = "bytes after the last index";
	*why = c.why;
	return c.why ? -1 : (int)count;
}

static void
rebind_answer_encode(const struct init_bind *binds, const uint32_t *idx, uint32_t n, struct buf *b)
{
	b->n = 0;
	put_u32(b, n);
	for (uint32_t i = 0; i < n; i++) {
		const struct init_bind *ib = &binds[idx[i]];

		put_u32(b, idx[i]);
		buf_putn(b, ib->path, strlen(ib->path) + 1);
		buf_putn(b, (const char *)&ib->dev, 8);
		buf_putn(b, (const char *)&ib->ino, 8);
		put_u32(b, ib->flags);
	}
}

/* The answer, for exactly the indices asked about (idx, n): each replaces
 * binds[index]. Returns 0, or -1 with *why set (binds then unchanged). */
static int
rebind_answer_decode(const char *p, size_t n, struct init_bind *binds, const uint32_t *idx, uint32_t count,
    const char **why)
{
	struct cursor c = { p, p + n, NULL };
	struct init_bind *got = amalloc((count + 1) * sizeof(*got));
	uint32_t k = 0, index;

	if (take_u32(&c, &k, "no count") && k != count)
		c.why = "not the count asked about";
	for (uint32_t i = 0; !c.why && i < count; i++) {
		if (take_u32(&c, &index, "cut short") && index != idx[i])
			c.why = "not the index asked about";
		else if (take_str(&c, &got[i].path, "path not terminated") && got[i].path[0] != '/')
			c.why = "a path that is not absolute";
		else if (take_bytes(&c, &got[i].dev, 8, "cut short") && take_bytes(&c, &got[i].ino, 8, "cut short") &&
		    take_u32(&c, &got[i].flags, "cut short") && (got[i].flags & ~(uint32_t)(IB_PIN | IB_NONE)))
			c.why = "unknown flags";
	}
	if (!c.why && c.p != c.end)
		c.why = "bytes after the last bind";
	*why = c.why;
	if (c.why)
		return -1;
	for (uint32_t i = 0; i < count; i++)
		binds[idx[i]] = got[i];
	return 0;
}

/* The descriptors the inner helper hands to sbx, each with a role: the
 * proxy's listeners, allow-host-port listeners, the expose-port channel.
 * The role's value is its byte in the handed-fd message (handed_encode). */
enum listener_role {
	LR_PROXY = 'P',		/* HTTP and SOCKS (the first byte decides) */
	LR_HOST_PORT = 'H',	/* allow-host-port: to this machine's 127.0.0.1:port */
	LR_EXPOSE = 'X',	/* expose-port: on this machine, to the command's 127.0.0.1:port; handed over,
				 * it is the channel the proxy asks the inner helper for connections on */
	LR_DNS = 'N',		/* the DNS stub's UDP socket, 127.0.0.1:53 (7.6) */
	LR_CAPTURE = 'C',	/* network-capture: 0.0.0.0:port, each connection a CONNECT to the name
				 * its address stands for (7.4) */
};

/* Does the inner helper hand descriptors over (an "L" message)? Both
 * sides ask this one function. */
static bool
inner_hands_fds(const struct inner_msg *m)
{
	return (m->flags & (IF_PROXY | IF_DNS | IF_CAPTURE)) || m->nports || m->nexpose;
}

/* The handed-fd message: "L", the count of descriptors attached
 * (SCM_RIGHTS), then per descriptor, in the same order, its role byte and
 * port (u16, host order; 0 for the expose-port channel). The count makes
 * the message self-delimiting: the control socket is a stream, and a
 * message with no descriptor attached (bridge socat, no ports) is merged
 * by the kernel with the "R" the helper sends once the command starts; a
 * reader that took "LR" for one bad message lost the "R" and reported a
 * sandbox that ran as one that never started. */
#define SBX_HANDED_MAX_BYTES	(2 + 3 * SBX_MAX_HANDED)
struct handed {
	int n;
	enum listener_role role[SBX_MAX_HANDED];
	uint16_t port[SBX_MAX_HANDED];
};

static void
handed_add(struct handed *h, enum listener_role role, uint16_t port)
{
	BUG_ON(h->n >= SBX_MAX_HANDED);
	h->role[h->n] = role;
	h->port[h->n++] = port;
}

static size_t
handed_encode(const struct handed *h, char *out)
{
	size_t n = 2;

	out[0] = 'L';
	out[1] = (char)h->n;
	for (int i = 0; i < h->n; i++) {
		out[n++] = (char)h->role[i];
		memcpy(out + n, &h->port[i], 2);
		n += 2;
	}
	return n;
}

/* Decode a handed-fd message from the n bytes read, which came with nfd
 * descriptors; *used is its length (what follows is the next message).
 * The inner helper is sbx itself, before the command runs, but a message
 * that does not add up is refused whole rather than half used. */
static int
handed_decode(const char *b, size_t n, int nfd, struct handed *h, size_t *used, const char **why)
{
	int expose = 0, dns = 0;

	memset(h, 0, sizeof(*h));
	if (n < 2 || b[0] != 'L' || nfd < 0 || nfd > SBX_MAX_HANDED || (unsigned char)b[1] != nfd ||
	    n < 2 + 3 * (size_t)nfd) {
		*why = "a handed-fd message that does not match its descriptors";
		return -1;
	}
	*used = 2 + 3 * (size_t)nfd;
	for (int i = 0; i < nfd; i++) {
		enum listener_role role = (enum listener_role)(unsigned char)b[2 + 3 * i];
		uint16_t port;

		memcpy(&port, b + 3 + 3 * i, 2);
		if (role != LR_PROXY && role != LR_HOST_PORT && role != LR_EXPOSE && role != LR_DNS && role != LR_CAPTURE) {
			*why = "an unknown role in a handed-fd message";
			return -1;
		}
		if ((role == LR_EXPOSE) != (port == 0) || (role == LR_EXPOSE && ++expose > 1) ||
		    (role == LR_DNS && (port != 53 || ++dns > 1))) {
			*why = "a bad port in a handed-fd message";
			return -1;
		}
		handed_add(h, role, port);
	}
	return 0;
}

/* The expose-port messages, between the proxy and the inner helper over a
 * SOCK_SEQPACKET pair: the proxy asks "u32 slot | u32 gen | u32 port"; the
 * helper answers "u32 slot | u32 gen | u32 errno" with, for errno 0, a
 * socket connecting to the command's 127.0.0.1:port attached (a socket
 * belongs to the network namespace it was made in, so the host's proxy can
 * use it). slot and gen name the proxy's connection: an answer for one
 * that has gone is dropped. Host order: both ends are this machine. */
#define SBX_EXPOSE_MSG_BYTES	12
struct expose_msg { uint32_t slot, gen, value; };	/* value: the port asked, or the errno answered */

static void
expose_encode(const struct expose_msg *m, unsigned char out[SBX_EXPOSE_MSG_BYTES])
{
	memcpy(out, &m->slot, 4);
	memcpy(out + 4, &m->gen, 4);
	memcpy(out + 8, &m->value, 4);
}

/* A message of n bytes (n < 0: none came). The port a request names is
 * checked by the helper against the policy's list (EPERM otherwise). */
static int
expose_decode(const unsigned char *b, ssize_t n, struct expose_msg *m)
{
	if (n != SBX_EXPOSE_MSG_BYTES)
		return -1;
	memcpy(&m->slot, b, 4);
	memcpy(&m->gen, b + 4, 4);
	memcpy(&m->value, b + 8, 4);
	return 0;
}

/* Session messages (10f): between `sbx exec` and a session's sbx over the
 * session's socket, and between that sbx and sbx-init over the control
 * socket. Each is framed on a stream: a type byte, a u32 length, then that
 * many bytes of body; the descriptors a message carries (an exec's stdin,
 * stdout and stderr) ride on its type byte. Types:
 *   'E' exec: exec_req (client -> sbx -> init), with 3 descriptors
 *   'S' started: u32 id | u32 pid (init -> sbx; the client is not told,
 *       an old client skips it)
 *   'Z' ended: u32 id | i32 exit status as the shell gives it (init -> sbx;
 *       sbx -> client: then the exec's violations block as text)
 *   'K' signal: u32 id | u32 signal (client -> sbx -> init)
 *   'Q' stop the session, 'P' who are you (client -> sbx; the answer 'P'
 *       carries a line of text)
 *   'A' the audit's report as the session ends (sbx -> a client that is
 *       no exec's: `sbx session stop`, the agent hook's session end)
 * The exec request's body:
 *   u32 id | u32 flags | u32 argc | argc NUL-terminated | u32 envc |
 *   envc NUL-terminated NAME=VALUE | cwd NUL
 * decoded strictly: sbx takes it from a client (of its own uid, but not
 * trusted to be well formed), init from sbx. */
#define SBX_EXEC_MAX_STRINGS	65536

struct exec_req {
	uint32_t id;		/* sbx's number for the exec (0 from a client) */
	uint32_t flags;		/* none yet: must be 0 */
	char **argv, **envp;	/* NULL-terminated */
	const char *cwd;	/* absolute */
};

static void
exec_req_encode(const struct exec_req *e, struct buf *b)
{
	uint32_t n = 0;
	size_t size = 12 + strlen(e->cwd) + 1;

	/* sized first, so the buffer is one allocation: the client's whole
	 * run is a few hundred microseconds, and each new page it touches is a
	 * fault (a trap to the hypervisor on a VM) */
	for (char **v = e->argv; *v; v++)
		size += strlen(*v) + 1;
	for (char **v = e->envp; *v; v++)
		size += strlen(*v) + 1;
	buf_grow(b, size);
	put_u32(b, e->id);
	put_u32(b, e->flags);
	while (e->argv[n])
		n++;
	put_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		buf_putn(b, e->argv[i], strlen(e->argv[i]) + 1);
	for (n = 0; e->envp[n]; n++)
		;
	put_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		buf_putn(b, e->envp[i], strlen(e->envp[i]) + 1);
	buf_putn(b, e->cwd, strlen(e->cwd) + 1);
}

/* Decode an exec request's body: every count bounded, every string
 * terminated, each variable NAME=VALUE with a name, the directory
 * absolute, nothing after it. Returns 0, or -1 with *why. */
static int
exec_req_decode(const char *p, size_t n, struct exec_req *e, const char **why)
{
	struct cursor c = { p, p + n, NULL };
	uint32_t argc = 0, envc = 0;
	char *cwd = NULL;

	memset(e, 0, sizeof(*e));
	take_u32(&c, &e->id, "no id");
	if (take_u32(&c, &e->flags, "no flags") && e->flags != 0)
		c.why = "unknown flags";
	if (take_u32(&c, &argc, "no argument count") && (argc == 0 || argc > SBX_EXEC_MAX_STRINGS))
		c.why = "bad argument count";
	if (!c.why)
		e->argv = amalloc((argc + 1) * sizeof(char *));
	for (uint32_t i = 0; !c.why && i < argc; i++)
		take_str(&c, &e->argv[i], "argument not terminated");
	if (take_u32(&c, &envc, "no environment count") && envc > SBX_EXEC_MAX_STRINGS)
		c.why = "bad environment count";
	if (!c.why)
		e->envp = amalloc((envc + 1) * sizeof(char *));
	for (uint32_t i = 0; !c.why && i < envc; i++)
		if (take_str(&c, &e->envp[i], "variable not terminated") &&
		    (e->envp[i][0] == '=' || !strchr(e->envp[i], '=')))
			c.why = "a variable that is not NAME=VALUE";
	if (take_str(&c, &cwd, "no directory") && cwd[0] != '/')
		c.why = "a directory that is not absolute";
	if (!c.why && c.p != c.end)
		c.why = "bytes after the request";
	if (c.why) {
		*why = c.why;
		return -1;
	}
	e->argv[argc] = NULL;
	e->envp[envc] = NULL;
	e->cwd = cwd;
	return 0;
}

struct px_listener { int fd; enum listener_role role; int port; };

/* Decisions. Every connection the proxy decides goes through px_record, as
 * one record over a SOCK_SEQPACKET pair to sbx, which keeps them for the
 * violations report (section 8) and shows them under -v:
 *
 *   'D' verdict proto route op port(2, big-endian) lost(4) hostlen(1) host reasonlen(2) reason
 *
 * A message holds one record or several back to back (the proxy batches
 * its allows, px_record_raw), at most SBX_RECORD_BATCH_BYTES; each record's
 * lengths say where the next begins. At the end of a run sbx sends 'F' and
 * the proxy answers 'f' once every record it held has gone before it
 * (net_log_finish).
 * The proxy never waits for sbx: a record the socket cannot take now is
 * counted, and the count (lost) rides on the next record that fits. The
 * same pair tells the proxy that sbx has gone (it polls as hung up).
 * sbx decodes strictly (px_decision_decode): the proxy parses hostile bytes,
 * and a proxy taken over by a memory bug must not confuse sbx in turn. */
/* ORDER: verdict_names, and net_log's totals indexed by verdict (8). */
/* How a connection reached the proxy. ORDER: proto_names. */
enum proto { PR_HTTP_CONNECT, PR_HTTP_FORWARD, PR_SOCKS5, PR_SOCKS4, PR_HOST_PORT, PR_EXPOSE, PR_DNS, PR_CAPTURE };

enum px_verdict { PXV_ALLOW, PXV_DENY, PXV_FAIL };	/* FAIL: allowed, but the network said no */

enum px_route { PXR_DIRECT, PXR_PARENT, PXR_MITM };	/* how an allowed connection went on (4.7) */
/* What a record is about, srt's line for each: a connection to host:port
 * ("deny network-outbound HOST:PORT"), an HTTP request the knobs refused
 * ("deny http-request METHOD TARGET", host holding "METHOD TARGET"), a
 * SOCKS tunnel ("deny socks-tunnel HOST:PORT"), and sbx's own: a client
 * without the run's proxy credential ("deny proxy-credential missing"),
 * where the host it named is not kept: any local process can reach the
 * macOS proxy, and its words must not reach the report a model reads;
 * and a name the DNS stub was asked ("deny dns-query NAME", 7.4). */
enum px_op { PXO_OUTBOUND, PXO_HTTP_REQUEST, PXO_SOCKS_TUNNEL, PXO_CREDENTIAL, PXO_DNS };

struct px_decision {
	enum px_verdict verdict;
	enum proto proto;
	enum px_route route;
	enum px_op op;
	uint16_t port;
	uint32_t lost;				/* records dropped just before this one */
	char host[SBX_MAX_HOST_BYTES + 1];	/* as the client named it; control bytes as '?' */
	char reason[SBX_MAX_TEXT_ARG_BYTES + 1];	/* empty for an allow */
};

#define SBX_DECISION_MAX_BYTES	(14 + SBX_MAX_HOST_BYTES + SBX_MAX_TEXT_ARG_BYTES)
_Static_assert(SBX_DECISION_MAX_BYTES <= SBX_RECORD_BATCH_BYTES, "a batch holds the longest record");

static const char *const proto_names[] = { "http-connect", "http", "socks5", "socks4", "host-port", "expose-port", "dns",
	"capture" };	/* ORDER: enum proto */
static const char *const verdict_names[] = { "allow", "deny", "fail" };	/* ORDER: enum px_verdict */
static const char *const op_names[] = { "network-outbound", "http-request", "socks-tunnel", "proxy-credential",
	"dns-query" };	/* ORDER: enum px_op */
static const char *const route_via[] = { "", " via the parent proxy", " via the MITM proxy" };	/* ORDER: enum px_route */

/* Encode d into out (SBX_DECISION_MAX_BYTES); returns the length. */
static size_t
px_decision_encode(const struct px_decision *d, unsigned char *out)
{
	size_t hn = strnlen(d->host, SBX_MAX_HOST_BYTES), rn = strnlen(d->reason, SBX_MAX_TEXT_ARG_BYTES), n = 0;

	out[n++] = 'D';
	out[n++] = (unsigned char)d->verdict;
	out[n++] = (unsigned char)d->proto;
	out[n++] = (unsigned char)d->route;
	out[n++] = (unsigned char)d->op;
	out[n++] = (unsigned char)(d->port >> 8);
	out[n++] = (unsigned char)d->port;
	for (int k = 3; k >= 0; k--)
		out[n++] = (unsigned char)(d->lost >> (8 * k));
	out[n++] = (unsigned char)hn;
	for (size_t k = 0; k < hn; k++)	/* a malformed host may hold anything */
		out[n++] = is_control((unsigned char)d->host[k]) ? '?' : (unsigned char)d->host[k];
	out[n++] = (unsigned char)(rn >> 8);
	out[n++] = (unsigned char)rn;
	for (size_t k = 0; k < rn; k++)
		out[n++] = is_control((unsigned char)d->reason[k]) ? '?' : (unsigned char)d->reason[k];
	return n;
}

/* Decode the record at the front of b[0..n): every length inside n, every
 * field in range, no control bytes. Returns its length (what follows it is
 * the next record's), or -1 for a record sbx must not believe. */
static long
px_decision_next(const unsigned char *b, size_t n, struct px_decision *d)
{
	size_t hn, rn;

	memset(d, 0, sizeof(*d));
	if (n < 14 || b[0] != 'D' || b[1] >= LEN(verdict_names) || b[2] >= LEN(proto_names) || b[3] >= LEN(route_via) ||
	    b[4] >= LEN(op_names))
		return -1;
	d->verdict = (enum px_verdict)b[1];
	d->proto = (enum proto)b[2];
	d->route = (enum px_route)b[3];
	d->op = (enum px_op)b[4];
	d->port = (uint16_t)(b[5] << 8 | b[6]);
	d->lost = (uint32_t)b[7] << 24 | (uint32_t)b[8] << 16 | (uint32_t)b[9] << 8 | b[10];
	hn = b[11];
	if (n < 14 + hn)
		return -1;
	rn = (size_t)b[12 + hn] << 8 | b[13 + hn];
	if (rn > SBX_MAX_TEXT_ARG_BYTES || n < 14 + hn + rn || (d->verdict == PXV_ALLOW) != (rn == 0))
		return -1;
	for (size_t k = 0; k < hn + rn; k++)
		if (is_control(b[k < hn ? 12 + k : 14 + k]))	/* the host, then the reason */
			return -1;
	memcpy(d->host, b + 12, hn);
	memcpy(d->reason, b + 14 + hn, rn);
	return (long)(14 + hn + rn);
}

/* Decode exactly one record, b[0..n) and nothing more. Returns 0 or -1. */
static int __attribute__((unused))	/* the tests' and the fuzzer's */
px_decision_decode(const unsigned char *b, size_t n, struct px_decision *d)
{
	if (px_decision_next(b, n, d) == (long)n)
		return 0;
	memset(d, 0, sizeof(*d));
	return -1;
}

/* The MITM route's socket (4.7), over the record pair. The proxy may not
 * create a Unix socket (its lockdown, 7.4), so it asks sbx, which dials
 * the policy's mitm-proxy without waiting (9e) and hands the connection
 * over:
 *
 *   ask     proxy -> sbx   'M' slot(4) gen(4)
 *   answer  sbx -> proxy   'm' slot(4) gen(4) errno(4), and for errno 0 the
 *                          connected socket attached (SCM_RIGHTS)
 *
 * (host order: both ends are this machine). slot and gen name the proxy's
 * connection, as the expose-port messages' do: an answer for one that has
 * gone is dropped. SECURITY: the ask names no path. sbx dials the one
 * socket the policy names, so a proxy a memory bug took over gets through
 * sbx nothing the route would not give it anyway. */
#define SBX_MITM_ASK_BYTES	9
#define SBX_MITM_ANSWER_BYTES	13
#define SBX_MITM_MAX_ERRNO	4095	/* errnos are small positive numbers (the kernel's MAX_ERRNO) */

struct mitm_msg {
	char kind;		/* 'M' ask, 'm' answer */
	uint32_t slot, gen;
	uint32_t err;		/* the answer's errno, 0: a socket is attached; 0 in an ask */
};

/* Encode m into out (SBX_MITM_ANSWER_BYTES); returns the length. */
static size_t
mitm_encode(const struct mitm_msg *m, unsigned char *out)
{
	out[0] = (unsigned char)m->kind;
	memcpy(out + 1, &m->slot, 4);
	memcpy(out + 5, &m->gen, 4);
	if (m->kind == 'M')
		return SBX_MITM_ASK_BYTES;
	memcpy(out + 9, &m->err, 4);
	return SBX_MITM_ANSWER_BYTES;
}

/* Decode an ask or an answer of n bytes: its kind's exact length, an
 * errno in range. Whether a socket came with it is the receiver's to
 * check (it holds the descriptors). Returns 0, or -1. */
static int
mitm_decode(const unsigned char *b, size_t n, struct mitm_msg *m)
{
	memset(m, 0, sizeof(*m));
	if (n < 1 || (b[0] == 'M' ? n != SBX_MITM_ASK_BYTES : b[0] != 'm' || n != SBX_MITM_ANSWER_BYTES))
		return -1;
	m->kind = (char)b[0];
	memcpy(&m->slot, b + 1, 4);
	memcpy(&m->gen, b + 5, 4);
	if (m->kind == 'm')
		memcpy(&m->err, b + 9, 4);
	return m->err > SBX_MITM_MAX_ERRNO ? -1 : 0;
}

/* The write observer's events, observer -> sbx over a SOCK_SEQPACKET
 * pair, one record each (the observer is in 10b, the judging in 8):
 *
 *   'O' call(1) lost(4) pid(4) sid(4) port(2) commlen(1) comm pathlen(2) target
 *
 * (big-endian; port is an address's, and a path's record carries its
 * OBS_F_* flags there). sid is the caller's session in the sandbox's innermost pid
 * namespace, read while the call waits (0: not read; a session's daemon
 * gives the refusal to the exec of that session, 10f). call indexes
 * obs_calls: which syscall, and where its path or address lies. target is
 * the absolute path as the command named it, resolved against its dirfd
 * or cwd (its raw bytes: a file name may hold anything but NUL, and the
 * judging needs it as it is; the report sanitises), for an address (a
 * connect, a send) the address in text, and for setsid the new session's
 * id in decimal (sid is then the session it left). The observer reads
 * hostile memory, so sbx decodes strictly: a record that does not add up
 * is dropped and counted. Like px_record, the observer never waits for
 * sbx: what the socket cannot take is counted in lost. */

/* What a call names, and where: argument indexes into seccomp_data.args.
 *   OW_PATH: dfd -1: relative to the cwd (AT_FDCWD); path -1: the file
 *     open on dfd; dfd2/path2: a second path (rename's new name), path2
 *     -1: none.
 *   OW_ADDR: path: a sockaddr's, dfd: its length's (connect, sendto).
 *   OW_MSG: path: a struct msghdr's, whose msg_name is the address
 *     (sendmsg); OW_MMSG: path: struct mmsghdr[], dfd: their count
 *     (sendmmsg), every address in them.
 *   OW_BIND: as OW_ADDR, and a Unix socket's path is a file written.
 *   OW_SETSID: none; the caller's sessions, from /proc (a session's).
 *   OW_SHARE: none; a call that lets one process change what another's
 *     call names (clone, ptrace, process_vm_writev): it only ever makes
 *     the audit unsure (9b), its record marked OBS_F_WHERE.
 * ORDER: none; an index into this table is the record's call byte. */
enum obs_what { OW_PATH, OW_ADDR, OW_MSG, OW_MMSG, OW_BIND, OW_SETSID, OW_SHARE };

struct obs_call { enum sc_id sc; int8_t dfd, path, dfd2, path2; uint8_t what; };

#define P_	OW_PATH
static const struct obs_call obs_calls[] = {
	{ SC_open, -1, 0, 0, -1, P_ },		{ SC_openat, 0, 1, 0, -1, P_ },
	{ SC_openat2, 0, 1, 0, -1, P_ },	{ SC_creat, -1, 0, 0, -1, P_ },
	{ SC_truncate, -1, 0, 0, -1, P_ },	{ SC_unlink, -1, 0, 0, -1, P_ },
	{ SC_unlinkat, 0, 1, 0, -1, P_ },	{ SC_rmdir, -1, 0, 0, -1, P_ },
	{ SC_rename, -1, 0, -1, 1, P_ },	{ SC_renameat, 0, 1, 2, 3, P_ },
	{ SC_renameat2, 0, 1, 2, 3, P_ },	{ SC_mkdir, -1, 0, 0, -1, P_ },
	{ SC_mkdirat, 0, 1, 0, -1, P_ },	{ SC_mknod, -1, 0, 0, -1, P_ },
	{ SC_mknodat, 0, 1, 0, -1, P_ },	{ SC_symlink, -1, 1, 0, -1, P_ },
	{ SC_symlinkat, 1, 2, 0, -1, P_ },	{ SC_link, -1, 1, 0, -1, P_ },
	{ SC_linkat, 2, 3, 0, -1, P_ },		{ SC_chmod, -1, 0, 0, -1, P_ },
	{ SC_fchmodat, 0, 1, 0, -1, P_ },	{ SC_fchmodat2, 0, 1, 0, -1, P_ },
	{ SC_chown, -1, 0, 0, -1, P_ },		{ SC_fchownat, 0, 1, 0, -1, P_ },
	{ SC_lchown, -1, 0, 0, -1, P_ },	{ SC_utime, -1, 0, 0, -1, P_ },
	{ SC_utimes, -1, 0, 0, -1, P_ },	{ SC_utimensat, 0, 1, 0, -1, P_ },
	{ SC_setxattr, -1, 0, 0, -1, P_ },	{ SC_lsetxattr, -1, 0, 0, -1, P_ },
	{ SC_fsetxattr, 0, -1, 0, -1, P_ },	{ SC_setxattrat, 0, 1, 0, -1, P_ },
	{ SC_removexattr, -1, 0, 0, -1, P_ },	{ SC_lremovexattr, -1, 0, 0, -1, P_ },
	{ SC_fremovexattr, 0, -1, 0, -1, P_ },	{ SC_removexattrat, 0, 1, 0, -1, P_ },
	{ SC_connect, 2, 1, 0, -1, OW_ADDR },	/* args: fd, sockaddr, addrlen */
	{ SC_futimesat, 0, 1, 0, -1, P_ },	{ SC_fchmod, 0, -1, 0, -1, P_ },
	{ SC_fchown, 0, -1, 0, -1, P_ },
	{ SC_sendto, 5, 4, 0, -1, OW_ADDR },	/* fd, buf, len, flags, sockaddr, addrlen */
	{ SC_sendmsg, 0, 1, 0, -1, OW_MSG },	/* fd, msghdr, flags */
	{ SC_sendmmsg, 2, 1, 0, -1, OW_MMSG },	/* fd, mmsghdr[], vlen, flags */
	{ SC_bind, 2, 1, 0, -1, OW_BIND },	/* fd, sockaddr, addrlen */
	{ SC_setsid, 0, -1, 0, -1, OW_SETSID },
	{ SC_clone, -1, -1, 0, -1, OW_SHARE },	{ SC_ptrace, -1, -1, 0, -1, OW_SHARE },
	{ SC_process_vm_writev, -1, -1, 0, -1, OW_SHARE },
};
#undef P_

/* A path record's flags, in the slot an address's port takes. OBS_F_WHERE:
 * the target is where the call's path leads (a symlink on its way, or a
 * descriptor it names), or "/" for a call with none: recorded for the
 * audit's attribution, never judged as a refusal. Bits 8-11: why the
 * observer cannot vouch for what the call named (enum obs_unsure), which
 * makes the audit act on every repository changed during the run (9b). */
#define OBS_F_WHERE		0x0001
#define OBS_F_EXISTS		0x0002	/* mkdir of a name that is there: it fails, changing nothing */
#define OBS_F_UNSURE_SHIFT	8

/* ORDER: obs_unsure_why[] */
enum obs_unsure { OU_NONE, OU_THREADS, OU_SHARED_PAGE, OU_SHARING, OU_WRITES_OTHERS, OU_SYMLINK_MADE,
	OU_MOVED, OU_PROC, OU_UNREAD, OU_COUNT };

static const char *const obs_unsure_why[] = {
	"",
	"a process with several threads wrote (another could change the path it named)",
	"a path was read from memory another process could change",
	"processes shared memory, descriptors or a directory (clone, or vfork from threads)",
	"a process wrote another's memory (ptrace, process_vm_writev)",
	"the command made a symlink",
	"the command moved a directory or a symlink",
	"a path through /proc or /dev/fd the observer cannot follow",
	"a path the observer could not read or follow",
};

#define SBX_OBS_COMM_BYTES	16	/* TASK_COMM_LEN, its NUL included */
#define SBX_OBS_TARGET_BYTES	4095	/* PATH_MAX less its NUL */
#define SBX_OBS_HEAD_BYTES	19	/* 'O' .. commlen, then pathlen's 2 */
#define SBX_OBS_MAX_BYTES	(SBX_OBS_HEAD_BYTES + SBX_OBS_COMM_BYTES + SBX_OBS_TARGET_BYTES)

struct obs_event {
	uint8_t call;			/* index into obs_calls */
	uint32_t lost;			/* events dropped just before this one */
	uint32_t pid;			/* as this machine's pid namespace sees it */
	uint32_t sid;			/* its session in the innermost namespace; 0: unknown */
	uint16_t port;			/* an address's only */
	char comm[SBX_OBS_COMM_BYTES + 1];	/* control bytes as '?' */
	char target[SBX_OBS_TARGET_BYTES + 1];
	uint16_t flags;			/* a path's only: OBS_F_* (in port's slot on the wire) */
};

/* Encode e into out (SBX_OBS_MAX_BYTES); returns the length. */
static size_t
obs_event_encode(const struct obs_event *e, unsigned char *out)
{
	size_t cn = strnlen(e->comm, SBX_OBS_COMM_BYTES), tn = strnlen(e->target, SBX_OBS_TARGET_BYTES), n = 0;

	out[n++] = 'O';
	out[n++] = e->call;
	for (int k = 3; k >= 0; k--)
		out[n++] = (unsigned char)(e->lost >> (8 * k));
	for (int k = 3; k >= 0; k--)
		out[n++] = (unsigned char)(e->pid >> (8 * k));
	for (int k = 3; k >= 0; k--)
		out[n++] = (unsigned char)(e->sid >> (8 * k));
	uint16_t slot = obs_calls[e->call].what == OW_PATH || obs_calls[e->call].what == OW_SHARE ? e->flags : e->port;

	out[n++] = (unsigned char)(slot >> 8);
	out[n++] = (unsigned char)slot;
	out[n++] = (unsigned char)cn;
	for (size_t k = 0; k < cn; k++)	/* prctl(PR_SET_NAME) takes any bytes */
		out[n++] = is_control((unsigned char)e->comm[k]) ? '?' : (unsigned char)e->comm[k];
	out[n++] = (unsigned char)(tn >> 8);
	out[n++] = (unsigned char)tn;
	memcpy(out + n, e->target, tn);
	return n + tn;
}

/* Is s (NUL-terminated) an IPv4 or IPv6 address in text? */
static bool
obs_is_address(const char *s)
{
	unsigned char a[16];

	return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

/* Is s a session id in decimal: digits only, no leading zero, at most
 * the kernel's PID_MAX_LIMIT (4194304)? */
static bool
obs_is_sid(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n > 0 && n <= 7 && !s[n] && s[0] != '0' && strtoul(s, NULL, 10) <= 4194304;
}

/* Decode one record: every length exact, a known call, a comm without
 * control bytes, a target that is an absolute path (files, a Unix
 * socket's), an address (connect, a send), or a session id (setsid).
 * Returns 0, or -1 for a record sbx must not believe. */
static int
obs_event_decode(const unsigned char *b, size_t n, struct obs_event *e)
{
	const size_t h = SBX_OBS_HEAD_BYTES, c0 = h - 2;	/* c0: comm's first byte */
	size_t cn, tn;

	memset(e, 0, sizeof(*e));
	if (n < h || b[0] != 'O' || b[1] >= LEN(obs_calls))
		return -1;
	e->call = b[1];
	e->lost = (uint32_t)b[2] << 24 | (uint32_t)b[3] << 16 | (uint32_t)b[4] << 8 | b[5];
	e->pid = (uint32_t)b[6] << 24 | (uint32_t)b[7] << 16 | (uint32_t)b[8] << 8 | b[9];
	e->sid = (uint32_t)b[10] << 24 | (uint32_t)b[11] << 16 | (uint32_t)b[12] << 8 | b[13];
	e->port = (uint16_t)(b[14] << 8 | b[15]);
	cn = b[16];
	if (cn > SBX_OBS_COMM_BYTES || n < h + cn)
		return -1;
	tn = (size_t)b[c0 + cn] << 8 | b[c0 + 1 + cn];
	if (tn == 0 || tn > SBX_OBS_TARGET_BYTES || n != h + cn + tn)
		return -1;
	for (size_t k = 0; k < cn; k++)
		if (is_control(b[c0 + k]))
			return -1;
	if (memchr(b + h + cn, '\0', tn))
		return -1;
	memcpy(e->comm, b + c0, cn);
	memcpy(e->target, b + h + cn, tn);
	switch (obs_calls[e->call].what) {
	case OW_ADDR:
	case OW_MSG:
	case OW_MMSG:
		return obs_is_address(e->target) ? 0 : -1;
	case OW_SETSID:
		return obs_is_sid(e->target) && e->port == 0 ? 0 : -1;
	case OW_PATH:
	case OW_SHARE:	/* the slot holds a path's flags */
		e->flags = e->port;
		e->port = 0;
		if ((e->flags & ~(OBS_F_WHERE | OBS_F_EXISTS | 0xf00)) || (e->flags >> OBS_F_UNSURE_SHIFT) >= OU_COUNT ||
		    (obs_calls[e->call].what == OW_SHARE && !(e->flags & OBS_F_WHERE)))
			return -1;
		break;
	case OW_BIND:
		break;
	}
	return e->target[0] == '/' && e->port == 0 ? 0 : -1;
}

/* The network tables, sbx -> proxy, when a line on the control fd changes
 * them (9d): the allow list, the deny list with its reasons, the denied
 * address ranges. The proxy swaps them in between two poll iterations
 * (7.6): a connection already decided keeps its decision.
 *
 *   'N' u32 nallow (u16 len, pattern)* u32 ndeny (u16 len, pattern,
 *   u8 has_reason, [u16 len, reason])* u32 naddr (u16 len, cidr)*
 *
 * (big-endian). A table may be larger than one datagram (macOS's are 2
 * KiB), so it travels in a file of its own (plat_anon_file) whose
 * descriptor rides on a 'P' message over the record pair: "P" u32 length
 * (host order), one descriptor attached. sbx is the trusted side here, but
 * the proxy's matchers assume checked patterns (4.5 splits a bracketed
 * one at its ']'), so the decoder checks each entry as the policy reader
 * did, and refuses the whole table for one that does not pass. The
 * decoded tables are malloc'd (the proxy's arena is sealed, 2.1). */
#define SBX_TABLES_MAX_BYTES	(4 << 20)
#define SBX_TABLES_MSG_BYTES	5

struct net_tables {
	struct vec allow, deny, addrs;	/* as in struct policy; every array and string malloc'd below */
	struct domrule *rules;		/* deny's elements */
	char *strings;
};

static void
put_be16(struct buf *b, size_t v)
{
	unsigned char x[2] = { (unsigned char)(v >> 8), (unsigned char)v };

	buf_putn(b, (const char *)x, 2);
}

static void
put_be32(struct buf *b, size_t v)
{
	unsigned char x[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
		(unsigned char)v };

	buf_putn(b, (const char *)x, 4);
}

static void
put_str16(struct buf *b, const char *s)
{
	put_be16(b, strlen(s));
	buf_puts(b, s);
}

/* Encode the three lists (of const char *, struct domrule *, const char *). */
static void
net_tables_encode(const struct vec *allow, const struct vec *deny, const struct vec *addrs, struct buf *b)
{
	buf_putc(b, 'N');
	put_be32(b, allow->n);
	for (size_t i = 0; i < allow->n; i++)
		put_str16(b, allow->v[i]);
	put_be32(b, deny->n);
	for (size_t i = 0; i < deny->n; i++) {
		const struct domrule *r = deny->v[i];

		put_str16(b, r->pattern);
		buf_putc(b, r->reason ? 1 : 0);
		if (r->reason)
			put_str16(b, r->reason);
	}
	put_be32(b, addrs->n);
	for (size_t i = 0; i < addrs->n; i++)
		put_str16(b, addrs->v[i]);
}

static void
net_tables_free(struct net_tables *t)
{
	if (!t)
		return;
	free(t->allow.v);
	free(t->deny.v);
	free(t->addrs.v);
	free(t->rules);
	free(t->strings);
	free(t);
}

/* One string of a table: u16 length (1..SBX_MAX_TEXT_ARG_BYTES), no NUL
 * or control byte; copied NUL-terminated to *s (advanced). */
static const char *
tables_take_str(const unsigned char *b, size_t n, size_t *off, char **s, const char **why)
{
	size_t len;
	char *out = *s;

	if (n - *off < 2) {
		*why = "a string cut short";
		return NULL;
	}
	len = (size_t)b[*off] << 8 | b[*off + 1];
	*off += 2;
	if (len == 0 || len > SBX_MAX_TEXT_ARG_BYTES || n - *off < len) {
		*why = "a bad string length";
		return NULL;
	}
	for (size_t k = 0; k < len; k++)
		if (!b[*off + k] || is_control(b[*off + k])) {
			*why = "a control byte in a string";
			return NULL;
		}
	memcpy(out, b + *off, len);
	out[len] = '\0';
	*off += len;
	*s += len + 1;
	return out;
}

/* Decode a table: every length exact, every entry checked as the policy
 * reader checks it (3.3). Returns the tables (net_tables_free), or NULL
 * with *why set. */
static struct net_tables *
net_tables_decode(const unsigned char *b, size_t n, const char **why)
{
	struct net_tables *t = calloc(1, sizeof(*t));
	struct vec *lists[3];
	size_t off = 1;
	char *s;

	if (!t || !(t->strings = malloc(n + 1))) {
		free(t);
		*why = "out of memory";
		return NULL;
	}
	lists[0] = &t->allow;
	lists[1] = &t->deny;
	lists[2] = &t->addrs;
	s = t->strings;
	if (n < 1 || b[0] != 'N' || n > SBX_TABLES_MAX_BYTES) {
		*why = "not a table";
		goto fail;
	}
	for (int l = 0; l < 3; l++) {
		size_t cnt;

		if (n - off < 4) {
			*why = "a count cut short";
			goto fail;
		}
		cnt = (size_t)b[off] << 24 | (size_t)b[off + 1] << 16 | (size_t)b[off + 2] << 8 | b[off + 3];
		off += 4;
		if (cnt > (n - off) / 3) {	/* each entry takes 3 bytes at least */
			*why = "a count larger than the table";
			goto fail;
		}
		lists[l]->v = malloc((cnt ? cnt : 1) * sizeof(void *));
		if (l == 1)
			t->rules = malloc((cnt ? cnt : 1) * sizeof(struct domrule));
		if (!lists[l]->v || (l == 1 && !t->rules)) {
			*why = "out of memory";
			goto fail;
		}
		lists[l]->cap = cnt;
		for (size_t i = 0; i < cnt; i++) {
			const char *e = tables_take_str(b, n, &off, &s, why), *check, *reason = NULL;
			int fam, prefix;
			unsigned char a[16];

			if (!e)
				goto fail;
			if (l == 1) {
				if (n - off < 1 || b[off] > 1) {
					*why = "a bad reason flag";
					goto fail;
				}
				if (b[off++] && !(reason = tables_take_str(b, n, &off, &s, why)))
					goto fail;
			}
			if (l < 2 ? match_check_pattern(e, l == 1, &check) < 0 : match_parse_cidr(e, &fam, a, &prefix) < 0) {
				*why = l < 2 ? "a domain pattern that does not check" : "an address range that does not parse";
				goto fail;
			}
			if (l == 1) {
				t->rules[i].pattern = e;
				t->rules[i].reason = reason;
				lists[l]->v[i] = &t->rules[i];
			} else {
				lists[l]->v[i] = (void *)e;
			}
			lists[l]->n++;
		}
	}
	if (off != n) {
		*why = "bytes after the tables";
		goto fail;
	}
	return t;
fail:
	net_tables_free(t);
	return NULL;
}

/* ---- 6d. The Seatbelt profile: the plan and the network policy as SBPL ---
 *
 * macOS has no mount namespace: the same plan becomes a Seatbelt profile
 * (SBPL, a Scheme dialect) that `sandbox-exec -p` applies to the command.
 * In SBPL a later rule that matches wins over an earlier one, which is how
 * bwrap's mounts behave too (a later mount covers an earlier one), so the
 * plan's mounts, sorted parents first, render in their order, once for
 * reads and once for writes:
 *
 *   MK_BIND_RW P      allow read, allow write      (subpath P) (and _INIT)
 *   MK_BIND_RO P      allow read, deny write       (subpath P) (and _INIT): a deny-write,
 *                     a mandatory deny, a git rule inside a root, or a path
 *                     shown again inside a hidden directory
 *   MK_TMPFS P        deny read, deny write        (subpath P): hidden; the
 *                     write deny too, or a command could overwrite a secret
 *                     it cannot read (on Linux it writes into a tmpfs)
 *   MK_EMPTY_FILE P   deny read, deny write        (literal P)
 *   MK_PIN_LINK P     deny write                   (literal P): the link itself
 *   MK_REMOUNT_RO,    nothing: the tmpfs's read-only remount and sbx's own
 *   MK_BIND_FROM      binary shown inside are bwrap's mechanics
 *
 * Placeholders are not needed: a (literal) or (subpath) deny matches a
 * path that does not exist yet, so its creation is refused. Every mount
 * point cannot be renamed on Linux (EBUSY); here each gets a deny of
 * file-write-unlink on its literal path at the end, so `mv .git g2` cannot
 * carry a protected hooks directory out from under its rule (Seatbelt
 * checks the name an operation uses, not what lies below it). */

/* Where the profile's inputs beyond the plan come from (sb_facts_collect). */
struct sb_facts {
	const char *tag;	/* CMD64_<base64>_END_<suffix>: log lines map back to the run */
	const char *suffix;	/* per run, random (an input: goldens stay stable) */
	const char *tmpdir;	/* the command's private TMPDIR */
	int http_port, socks_port;	/* the proxy's listeners on 127.0.0.1 */
};

/* Standard base64 (RFC 4648 4) of n bytes, into out. */
static void
sb_base64(const unsigned char *s, size_t n, struct buf *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) |
		    (i + 2 < n ? s[i + 2] : 0);

		buf_putc(out, a[v >> 18 & 63]);
		buf_putc(out, a[v >> 12 & 63]);
		buf_putc(out, i + 1 < n ? a[v >> 6 & 63] : '=');
		buf_putc(out, i + 2 < n ? a[v & 63] : '=');
	}
}

/* The facts, from the run's paths, the command, the proxy's ports and the
 * run's random suffix (pure: the caller draws the suffix and binds the
 * ports). The tag carries the first 100 bytes of the command, as srt's
 * (its base64 has no byte the profile's strings must escape). */
static void
sb_facts_collect(struct sb_facts *f, const struct run_paths *rp, char *const *cmd, const char *suffix,
    int http_port, int socks_port)
{
	struct buf c = { 0 }, b = { 0 };

	for (size_t i = 0; cmd && cmd[i]; i++) {
		if (i)
			buf_putc(&c, ' ');
		buf_puts(&c, cmd[i]);
	}
	sb_base64((const unsigned char *)(c.p ? c.p : ""), c.n > 100 ? 100 : c.n, &b);
	f->tag = aprintf("CMD64_%s_END_%s", b.p ? b.p : "", suffix);
	f->suffix = suffix;
	f->tmpdir = rp->tmpdir;
	f->http_port = http_port;
	f->socks_port = socks_port;
	free(c.p);
	free(b.p);
}

/* Append s as an SBPL string literal, quotes included. Returns 0, or -1
 * when s holds a control byte or is not UTF-8. `"` and `\` are escaped;
 * everything else is refused rather than escaped, because which escapes
 * SBPL's reader accepts beyond those two is not documented, and a path
 * with a newline or invalid UTF-8 in a policy is a mistake or an attack
 * (APFS names are UTF-8): failing closed costs nothing real. */
static int
sb_put_string(struct buf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
	size_t start = out->n;

	buf_putc(out, '"');
	while (p < end) {
		int len = *p < 0x80 ? 1 : utf8_valid_len(p, end);

		if (len == 0 || (len == 1 && is_control(*p))) {
			out->n = start;	/* nothing half-written */
			if (out->p)
				out->p[start] = '\0';
			return -1;
		}
		if (*p == '"' || *p == '\\')
			buf_putc(out, '\\');
		buf_putn(out, (const char *)p, (size_t)len);
		p += len;
	}
	buf_putc(out, '"');
	return 0;
}

/* The sysctls a shell's programs read: srt's list, name by name (a
 * prefix over kern. would include kern.proc.* of every user and more). */
#define SB_SYSCTL_READ \
	"(sysctl-name \"hw.activecpu\") (sysctl-name \"hw.busfrequency_compat\") (sysctl-name \"hw.byteorder\") " \
	"(sysctl-name \"hw.cacheconfig\") (sysctl-name \"hw.cachelinesize_compat\") (sysctl-name \"hw.cpufamily\") " \
	"(sysctl-name \"hw.cpufrequency\") (sysctl-name \"hw.cpufrequency_compat\") (sysctl-name \"hw.cputype\") " \
	"(sysctl-name \"hw.l1dcachesize_compat\") (sysctl-name \"hw.l1icachesize_compat\") " \
	"(sysctl-name \"hw.l2cachesize_compat\") (sysctl-name \"hw.l3cachesize_compat\") (sysctl-name \"hw.logicalcpu\") " \
	"(sysctl-name \"hw.logicalcpu_max\") (sysctl-name \"hw.machine\") (sysctl-name \"hw.memsize\") " \
	"(sysctl-name \"hw.ncpu\") (sysctl-name \"hw.nperflevels\") (sysctl-name \"hw.packages\") " \
	"(sysctl-name \"hw.pagesize_compat\") (sysctl-name \"hw.pagesize\") (sysctl-name \"hw.physicalcpu\") " \
	"(sysctl-name \"hw.physicalcpu_max\") (sysctl-name \"hw.tbfrequency_compat\") (sysctl-name \"hw.vectorunit\") " \
	"(sysctl-name \"kern.argmax\") (sysctl-name \"kern.bootargs\") (sysctl-name \"kern.hostname\") " \
	"(sysctl-name \"kern.maxfiles\") (sysctl-name \"kern.maxfilesperproc\") (sysctl-name \"kern.maxproc\") " \
	"(sysctl-name \"kern.ngroups\") (sysctl-name \"kern.osproductversion\") (sysctl-name \"kern.osrelease\") " \
	"(sysctl-name \"kern.ostype\") (sysctl-name \"kern.osvariant_status\") (sysctl-name \"kern.osversion\") " \
	"(sysctl-name \"kern.secure_kernel\") (sysctl-name \"kern.tcsm_available\") (sysctl-name \"kern.tcsm_enable\") " \
	"(sysctl-name \"kern.usrstack64\") (sysctl-name \"kern.version\") (sysctl-name \"kern.willshutdown\") " \
	"(sysctl-name \"machdep.cpu.brand_string\") (sysctl-name \"machdep.ptrauth_enabled\") " \
	"(sysctl-name \"security.mac.lockdown_mode_state\") (sysctl-name \"sysctl.proc_cputype\") " \
	"(sysctl-name \"vm.loadavg\") (sysctl-name-prefix \"hw.optional.arm\") (sysctl-name-prefix \"hw.optional.armv8_\") " \
	"(sysctl-name-prefix \"hw.perflevel\") (sysctl-name-prefix \"kern.proc.all\") " \
	"(sysctl-name-prefix \"kern.proc.pgrp.\") (sysctl-name-prefix \"kern.proc.pid.\") " \
	"(sysctl-name-prefix \"machdep.cpu.\") (sysctl-name-prefix \"net.routetable.\")"

/* What a shell needs, added back after (deny default): srt's list
 * (srt-behaviour.md 8), each with the reason it is there. Constant text:
 * nothing here comes from the policy. */
static const struct { const char *rule, *why; } sb_shell_rules[] = {
	{ "(allow process-exec)", "a shell runs programs" },
	{ "(allow process-fork)", "a shell forks for every command and pipeline" },
	{ "(allow process-info* (target same-sandbox))", "ps, job control, getpgrp: only about processes of this sandbox" },
	{ "(allow signal (target same-sandbox))", "kill and job control inside; never a process outside" },
	{ "(allow mach-priv-task-port (target same-sandbox))", "debuggers and runtimes that inspect their own children" },
	{ "(allow user-preference-read)", "CFPreferences: most Apple frameworks read defaults at start" },
	{ "(allow mach-lookup (global-name \"com.apple.audio.systemsoundserver\"))", "AudioToolbox, linked by many CLI tools" },
	{ "(allow mach-lookup (global-name \"com.apple.distributed_notifications@Uv3\"))", "CFNotificationCenter" },
	{ "(allow mach-lookup (global-name \"com.apple.FontObjectsServer\"))", "CoreText, for tools that render text" },
	{ "(allow mach-lookup (global-name \"com.apple.fonts\"))", "the font registry" },
	{ "(allow mach-lookup (global-name \"com.apple.logd\"))", "os_log: every framework logs" },
	{ "(allow mach-lookup (global-name \"com.apple.lsd.mapdb\"))", "LaunchServices' database: file types, bundles" },
	{ "(allow mach-lookup (global-name \"com.apple.PowerManagement.control\"))", "IOPM assertions (caffeinate-like calls in builds)" },
	{ "(allow mach-lookup (global-name \"com.apple.system.logger\"))", "asl, the older logging API" },
	{ "(allow mach-lookup (global-name \"com.apple.system.notification_center\"))", "notify(3): time zone and network changes" },
	{ "(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\"))", "getpwuid, getgrgid: the user's name and home" },
	{ "(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.membership\"))", "group membership checks" },
	{ "(allow mach-lookup (global-name \"com.apple.bsd.dirhelper\"))", "confstr(_CS_DARWIN_USER_TEMP_DIR)" },
	{ "(allow mach-lookup (global-name \"com.apple.securityd.xpc\"))", "Security.framework: keychain-free certificate reads" },
	{ "(allow mach-lookup (global-name \"com.apple.coreservices.launchservicesd\"))", "LaunchServices: bundle lookups" },
	{ "(allow mach-lookup (global-name \"com.apple.SecurityServer\"))", "Security.framework's legacy server" },
	{ "(allow ipc-posix-shm)", "POSIX shared memory: Python multiprocessing, node workers" },
	{ "(allow ipc-posix-sem)", "POSIX semaphores: the same" },
	{ "(allow iokit-get-properties)", "hardware facts (CPU count, model) read through IOKit" },
	{ "(allow iokit-open (iokit-registry-entry-class \"IOSurfaceRootUserClient\") "
	  "(iokit-registry-entry-class \"RootDomainUserClient\") (iokit-user-client-class \"IOSurfaceSendRight\"))",
	  "IOSurface (graphics buffers some tools create) and power state queries; no other IOKit client" },
	{ "(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))",
	  "AF_SYSTEM/SYSPROTO_CONTROL: the kernel's control sockets that libnetwork queries; no network" },
	{ "(allow sysctl-read " SB_SYSCTL_READ ")",
	  "CPU count and features, page size, OS version, this user's processes: srt's names, no wildcard over kern." },
	{ "(allow sysctl-write (sysctl-name \"kern.tcsm_enable\"))", "V8 sets it when it counts threads (srt); the one write" },
	{ "(allow distributed-notification-post)", "CFNotificationCenter posts" },
	{ "(allow file-ioctl (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/random\") (literal \"/dev/urandom\") "
	  "(literal \"/dev/dtracehelper\") (literal \"/dev/tty\"))", "isatty and friends on the standard devices" },
};

/* A rule with one path filter: "(ACTION OPS (FILTER "PATH"))". Returns 0,
 * or -1 when the path cannot be a profile string. */
static int
sb_rule(struct buf *out, const char *action, const char *ops, const char *filter, const char *path)
{
	buf_printf(out, "(%s %s (%s ", action, ops, filter);
	if (sb_put_string(out, path) < 0)
		return -1;
	buf_puts(out, "))\n");
	return 0;
}

/* What each mount kind says about reads and writes (NULL: nothing), and
 * its filter. ORDER: enum mkind. */
static const struct { const char *read, *write, *filter; } sb_mount_rules[] = {
	[MK_BIND_RO] = { "allow", "deny", "subpath" },
	[MK_BIND_RW] = { "allow", "allow", "subpath" },
	[MK_EMPTY_FILE] = { "deny", "deny", "literal" },
	[MK_TMPFS] = { "deny", "deny", "subpath" },
	[MK_REMOUNT_RO] = { NULL, NULL, NULL },
	[MK_BIND_FROM] = { NULL, NULL, NULL },
	[MK_PIN_LINK] = { NULL, "deny", "literal" },
	[MK_BIND_RO_INIT] = { "allow", "deny", "subpath" },
	[MK_BIND_RW_INIT] = { "allow", "allow", "subpath" },
};

/* The profile. Returns 0, or -1 with *why set when a path or name cannot
 * be written as a profile string (then out holds no usable profile). */
static int
seatbelt_render(const struct policy *p, const struct plan *pl, const struct sb_facts *f, struct buf *out,
    const char **why)
{
	const char *bad = NULL;
	size_t i;

	/* Every string below goes through sb_put_string; a refusal is kept
	 * in bad and reported once, at the end. */
#define SB_PATH(action, ops, filter, path)	do { if (sb_rule(out, action, ops, filter, path) < 0 && !bad) bad = (path); } while (0)

	buf_puts(out, "(version 1)\n");
	buf_puts(out, "(deny default (with message ");
	if (sb_put_string(out, f->tag) < 0)
		bad = f->tag;
	buf_puts(out, "))\n\n; what a shell needs (srt's list)\n");
	for (i = 0; i < LEN(sb_shell_rules); i++)
		buf_printf(out, "%s\t; %s\n", sb_shell_rules[i].rule, sb_shell_rules[i].why);
	if (p->allow_pty)	/* allow-pty: script, expect, tmux inside */
		buf_puts(out, "(allow pseudo-tty)\n(allow file-read* file-write* file-ioctl (literal \"/dev/ptmx\") "
		    "(regex #\"^/dev/ttys[0-9]+$\"))\n");
	for (i = 0; i < p->allow_mach_lookup.n; i++) {
		const char *name = p->allow_mach_lookup.v[i];
		size_t n = strlen(name);
		bool prefix = n > 0 && name[n - 1] == '*';	/* srt: a trailing * is a prefix */

		buf_printf(out, "(allow mach-lookup (%s ", prefix ? "global-name-prefix" : "global-name");
		if (sb_put_string(out, prefix ? astrndup(name, n - 1) : name) < 0 && !bad)
			bad = name;
		buf_puts(out, "))\t; allow-mach-lookup\n");
	}
	if (p->weaker_network_isolation)	/* Go's TLS verifies through trustd: an exfiltration path (srt's README) */
		buf_puts(out, "(allow mach-lookup (global-name \"com.apple.trustd.agent\"))\t; weaker-network-isolation\n");
	if (p->allow_apple_events)	/* other apps then run code outside the sandbox (srt's README) */
		buf_puts(out, "(allow appleevent-send)\n(allow lsopen)\n"
		    "(allow mach-lookup (global-name \"com.apple.coreservices.appleevents\") "
		    "(global-name \"com.apple.CoreServices.coreservicesd\") "
		    "(global-name \"com.apple.coreservices.quarantine-resolver\"))\t; allow-apple-events\n");

	/* reads: open, then the plan's hidden paths and what is shown again */
	buf_puts(out, "\n; reads: everything, then the plan's hidden paths and what it shows again\n(allow file-read*)\n");
	for (i = 0; i < pl->mounts.n; i++) {
		const struct mount *m = pl->mounts.v[i];

		if (sb_mount_rules[m->kind].read)
			SB_PATH(sb_mount_rules[m->kind].read, "file-read*", sb_mount_rules[m->kind].filter, m->path);
	}

	/* writes: the devices and ttys first, then the plan in its order, so
	 * every deny (deny-write, the mandatory denies, the git rules) comes
	 * after the allow it overrides and wins */
	buf_puts(out, "\n; writes: the standard devices, then the plan (its denies after the allows they override)\n");
	buf_puts(out, "(allow file-write* (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") "
	    "(regex #\"^/dev/ttys[0-9]+$\"))\n");
	/* the private TMPDIR is in the plan (plan_add_run_paths): a writable
	 * root shown again inside the hidden runtime directory */
	if (pl->fs_disabled)
		buf_puts(out, "(allow file-write*)\t; disable-filesystem\n");
	for (i = 0; i < pl->mounts.n; i++) {
		const struct mount *m = pl->mounts.v[i];

		if (sb_mount_rules[m->kind].write)
			SB_PATH(sb_mount_rules[m->kind].write, "file-write*", sb_mount_rules[m->kind].filter, m->path);
	}
	buf_puts(out, "\n; no rename or removal of what the plan covers (a mount point on Linux)\n");
	for (i = 0; i < pl->mounts.n; i++) {
		const struct mount *m = pl->mounts.v[i];

		if (sb_mount_rules[m->kind].write && !(m->kind == MK_BIND_RW && f->tmpdir && strcmp(m->path, f->tmpdir) == 0))
			SB_PATH("deny", "file-write-unlink", "literal", m->path);
	}

	/* network: only the proxy's ports and allow-host-port, by remote
	 * address. Never a (local ip ...) filter on outbound: it is matched
	 * against the socket's source address, the any-address of an unbound
	 * socket, which Seatbelt's "localhost" matches, so it would admit
	 * every connection (srt's comment). */
	buf_puts(out, "\n; network: the proxy's ports on localhost, by remote address only\n");
	buf_printf(out, "(allow network-outbound (remote ip \"localhost:%d\") (remote ip \"localhost:%d\"))\n",
	    f->http_port, f->socks_port);
	for (i = 0; i < p->host_ports.n; i++) {
		long port;
		const char *perr;

		if (parse_int(p->host_ports.v[i], 1, 65535, &port, &perr) == 0)
			buf_printf(out, "(allow network-outbound (remote ip \"localhost:%ld\"))\t; allow-host-port\n", port);
	}
	for (i = 0; i < p->expose_ports.n; i++) {	/* the command's own listener, reached from this machine */
		long port;
		const char *perr;

		if (parse_int(p->expose_ports.v[i], 1, 65535, &port, &perr) == 0)
			buf_printf(out, "(allow network-bind (local ip \"localhost:%ld\"))\n(allow network-inbound "
			    "(local ip \"localhost:%ld\"))\t; expose-port\n", port, port);
	}
	if (p->allow_local_binding)	/* bind and inbound only: srt also opens outbound to every
					 * localhost port, an exfiltration path (srt #131, #225);
					 * "*:*" because Seatbelt's localhost misses ::ffff:127.0.0.1 */
		buf_puts(out, "(allow network-bind (local ip \"*:*\"))\n(allow network-inbound (local ip \"*:*\"))"
		    "\t; allow-local-binding\n");
	/* Unix sockets: socket(AF_UNIX) itself (AF_UNIX) is harmless, what
	 * it may reach is the rule; bind and connect each get their own rule,
	 * so no (local ...) filter ever sits on an outbound one */
	if (p->allow_all_unix_sockets || p->allow_unix_sockets.n)
		buf_puts(out, "(allow system-socket (socket-domain AF_UNIX))\n");
	if (p->allow_all_unix_sockets)
		buf_puts(out, "(allow network-bind (local unix-socket (path-regex #\"^/\")))\n"
		    "(allow network-outbound (remote unix-socket (path-regex #\"^/\")))\t; allow-all-unix-sockets\n");
	for (i = 0; i < p->allow_unix_sockets.n; i++) {
		buf_puts(out, "(allow network-outbound (remote unix-socket (subpath ");
		if (sb_put_string(out, p->allow_unix_sockets.v[i]) < 0 && !bad)
			bad = p->allow_unix_sockets.v[i];
		buf_puts(out, ")))\t; allow-unix-socket\n");
	}
#undef SB_PATH
	if (bad) {
		*why = "a path or name holds a control byte or is not UTF-8: it cannot be written into a Seatbelt profile";
		return -1;
	}
	return 0;
}

/* ====================================================================
 * 7. PROXY: one poll() loop owns every listener and connection
 * ====================================================================
 *
 * The sandbox's network namespace holds only its own loopback. `sbx
 * --inner` creates the listeners there (127.0.0.1:3128 HTTP, :1080 SOCKS)
 * and hands their fds to the host over the control socket; a process
 * forked from sbx runs this loop on them, outside the namespace. So a
 * connection from the command lands straight here: one hop, no relay
 * process, no socket file, and no race (the listeners exist before the
 * command starts; connections wait in their backlog).
 *
 * Both listeners speak both protocols: the first byte decides (0x05
 * SOCKS5, 0x04 SOCKS4/4a, anything else HTTP), as srt's mux does.
 *
 *   CS_PEEK --0x05--> CS_SOCKS5_GREETING -> [CS_SOCKS5_AUTH] -> CS_SOCKS5_REQUEST -+
 *           --0x04--> CS_SOCKS4_REQUEST --------------------------------------+
 *           --else--> CS_HTTP_HEAD ---------------------------------------------+
 *                                                                            |
 *   decide (4.5) -- deny --> CS_REPLY_CLOSE (403 / SOCKS refusal / SSH refusal)
 *              \-- allow -> CS_RESOLVING (resolver threads) -> judge each address (4.6)
 *                           -> CS_CONNECTING (non-blocking, next address on failure)
 *                           -> reply -> CS_RELAY (both ways, bounded, half-close) -> closed
 *
 * An allowed host on the MITM route (4.7) is not resolved: sbx dials the
 * route's Unix socket for it (CS_MITM_WAIT, 9e), and the proxy speaks to
 * it as to a parent (CONNECT, CS_PARENT_REPLY; or the request in absolute
 * form).
 *
 * Each decision (allow, deny, or a network failure) is one record sent to
 * sbx (px_record, below), which keeps them for the violations report.
 *
 * Everything a connection sends is hostile: every field is bounded, each
 * state has a deadline, and a bad client closes its own connection only. */

/* Prototypes: a lookup's answer (7.3; the hosts file's comes from 7.2's
 * reader in the loop), the next address after a failed connect, and
 * sending what a buffer holds (7.3; the parent's CONNECT goes out that
 * way), the DNS
 * stub's answer from the resolver and a capture connection (7.4). The calls
 * that differ per platform (px_socket_cloexec_nonblock and the others,
 * px_lockdown) are the platform interface's (section 1). */
struct proxy;
struct conn;
struct rbuf;
static void px_connect_next(struct proxy *px, struct conn *c);
static void px_on_events(struct proxy *px, struct conn *c, unsigned slot, short crev, short urev);
static void px_resolved(struct proxy *px, struct conn *c, struct addrinfo *res, int err);
static void px_dns_resolved(struct proxy *px, unsigned qi, unsigned gen, struct addrinfo *res, int err);
static void px_capture(struct proxy *px, struct conn *c, unsigned slot, int port);
static bool relay_out(int fd, struct rbuf *r);

#define SBX_MAX_HTTP_HEAD_BYTES	16384
#define SBX_SOCKS_NO_AUTH_REASON	"This proxy requires authentication, and this client did not offer an " \
	"authentication method, so the connection was refused."	/* srt's words (5.4) */
#define SBX_RELAY_BUF_BYTES	65536		/* per direction, allocated on first use, freed when drained */
#define SBX_BULK_AFTER_BYTES	(256 * 1024)	/* a tunnel direction that carried this much is bulk */
#define SBX_BULK_BUF_BYTES	(512 * 1024)	/* a bulk direction's buffer, kept until the tunnel closes */
#define SBX_BULK_BUDGET_BYTES	(32 * 1024 * 1024)	/* all bulk buffers together; beyond: 64 KiB ones */
#define SBX_BULK_ROUNDS		4		/* extra read-and-send rounds per event for a bulk direction */
#define SBX_HANDSHAKE_MS	10000		/* first byte and request head: slowloris bound */
#define SBX_CONNECT_MS		10000
#define SBX_HALF_CLOSED_MS	10000
#define SBX_MAX_CONNS		4096
#define SBX_MAX_HANDSHAKES	256		/* clients still to send their request: the oldest goes first */
#define SBX_RESOLVER_THREADS	2
#define SBX_DNS_PENDING		64		/* DNS questions waiting for the resolver at once */
#define SBX_DNS_TTL		30		/* seconds: what a client may keep a looked-up answer */
#define SBX_DNS_CAPTURE_TTL	3600		/* a capture address stands for its name for the whole run */
#define SBX_MAX_CAPTURE_NAMES	4096		/* names handed a capture address in one run */

/* ORDER: the handshake states (CS_PEEK .. CS_SOCKS4_REQUEST) come before
 * CS_RESOLVING: px_on_events tests st < CS_RESOLVING for "still reading
 * the request". */
enum conn_state {
	CS_FREE, CS_PEEK, CS_HTTP_HEAD, CS_SOCKS5_GREETING, CS_SOCKS5_AUTH, CS_SOCKS5_REQUEST,
	CS_SOCKS4_REQUEST, CS_RESOLVING, CS_INSIDE_WAIT, CS_CONNECTING, CS_PARENT_REPLY, CS_RELAY, CS_REPLY_CLOSE,
	CS_MITM_WAIT,	/* sbx dials the MITM proxy's socket (9e); its answer comes on the record pair */
};


/* SOCKS reply codes (RFC 1928 section 6; SOCKS4) */
enum {
	SOCKS5_OK = 0x00, SOCKS5_FAILURE = 0x01, SOCKS5_NOT_ALLOWED = 0x02, SOCKS5_NET_UNREACHABLE = 0x03,
	SOCKS5_HOST_UNREACHABLE = 0x04, SOCKS5_REFUSED = 0x05, SOCKS5_TTL_EXPIRED = 0x06,
	SOCKS5_CMD_UNSUPPORTED = 0x07, SOCKS5_ATYP_UNSUPPORTED = 0x08,
	SOCKS4_OK = 0x5a, SOCKS4_REFUSED = 0x5b,
};

/* One direction of a connection: bytes p[off..len) wait to be sent. p is
 * owned and is NULL while the direction is idle (see 7.3, "buffers"). */
struct rbuf {
	char *p;
	size_t off, len;
	size_t cap;		/* p's size: SBX_RELAY_BUF_BYTES, or SBX_BULK_BUF_BYTES (mmap, budgeted) */
	uint64_t moved;		/* bytes read into this direction so far */
};

struct conn {
	/* fds */	int cfd, ufd;			/* owned; -1 when closed */
	/* state */	enum conn_state st;
	/* request */	enum proto proto;
			char host[SBX_MAX_HOST_BYTES + 1];	/* as the client named it */
			int port;
			char *head; size_t head_n;	/* owned: bytes read before relaying */
			char *fwd; size_t fwd_n;	/* owned: the rewritten request (HTTP forward) */
	/* relay */	struct rbuf c2u, u2c;
			bool c_eof, u_eof;
			bool resp_head;			/* HTTP forward: the final response head is not rewritten yet */
			size_t resp_ok;			/* bytes at the front of u2c that may go meanwhile (1xx heads) */
	/* resolve */	unsigned gen;			/* a resolver answer for an older gen is dropped */
			struct addrinfo *addrs, *next_addr;	/* owned (getaddrinfo, or hosts_lookup) */
			bool addrs_mine;		/* addrs is hosts_lookup's: free(), not freeaddrinfo() */
			char refused[200];		/* classes of refused addresses */
			bool dialled;			/* some address passed the guard */
	/* credential */	const char *unauthorised;	/* why, when it must be refused for it; NULL: fine */
	/* knobs */	const char *misdirected;	/* require-host-match: why the Host header is wrong, or NULL */
	/* forward */	int64_t body_left;		/* the request's body still to relay, or -1: to the end */
			bool c_done;			/* the request is whole: nothing more is read from the client */
	/* route */	const struct parent_proxy *via;	/* the parent it goes through (4.7), or NULL: directly */
			char *phead; size_t phead_n;	/* owned: the parent's answer to CONNECT, so far */
			bool mitm;			/* the MITM route: via is px_mitm_hop, the socket sbx's (9e) */
	/* time */	int64_t deadline_ms;
};

struct proxy {
	const struct policy *p;		/* &live: the policy sbx forked it with, its network lists swapped
					 * for each table sbx sends (px_take_tables) */
	struct policy live;
	struct net_tables *tables;	/* owned: the lists live points to since the last swap, or NULL */
	struct vec own;			/* this machine's addresses (struct addr *) */
	struct conn *conns;		/* SBX_MAX_CONNS slots */
	unsigned conns_end;		/* one past the highest slot in use: the loop scans only below it */
	struct px_listener listeners[SBX_MAX_HANDED + 2 + SBX_MAX_HOST_PORTS];
	int nlisteners;
	int expose_fd;			/* expose-port: the inner helper opens inside connections, or -1 */
	int resolved_pipe[2];
	const char *token;		/* the run's proxy credential, or NULL: none asked (7.1) */
	pid_t parent;			/* sbx (SBX_PROXY_WATCHES_PARENT) */
	struct dns_pending *dnsq;	/* SBX_DNS_PENDING questions waiting for the resolver (7.4) */
	unsigned dns_gen;
	char (*capture_names)[SBX_MAX_HOST_BYTES + 1];	/* network-capture: the name each address stands
							 * for, or NULL: no capture listener (7.4) */
	unsigned ncapture;
	bool hosts_first;		/* the resolver reads the hosts file before DNS: hosts_lookup may (7.2) */
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}


/* Decisions: each connection's verdict goes to sbx as one record (6c),
 * through px_record.
 *
 * Batching. A record sent as it was made woke sbx once per request, and
 * that wake-up was the largest single cost of a short request here (on
 * the 2-CPU machine of README's Figures, sequential requests went from
 * 0.20 to 0.29 of a direct connection's rate without it). So an allow
 * waits in px_batch, at most SBX_RECORD_DELAY_MS, and goes with the
 * others in one message. Everything else goes at once, the allows before
 * it first (the order is kept): a refusal reaches the violations log as it
 * happens, a failure with it. The batch also goes before an 'M' ask, which
 * wants a prompt answer and must not wait behind it, and when sbx asks
 * for it at its end ('F', px_from_sbx), so the report misses nothing. */
#define SBX_RECORD_DELAY_MS	50

static int px_report_fd = -1;	/* the proxy's end of the pair (the proxy is one process) */
static uint32_t px_report_lost;	/* records not sent since the last batch that was */
static unsigned char px_batch[SBX_RECORD_BATCH_BYTES];
static size_t px_batch_n;	/* bytes in px_batch */
static uint32_t px_batch_count;	/* records in px_batch */
static int64_t px_batch_due_ms;	/* when the oldest waiting allow must go; 0: none waits */

/* Send what px_batch holds, in one message. Never waits: a batch the
 * socket cannot take now is counted as lost, and the count rides on the
 * next record that goes. */
static void
px_records_flush(void)
{
	if (!px_batch_n)
		return;
	if (send(px_report_fd, px_batch, px_batch_n, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)px_batch_n)
		px_report_lost = 0;
	else
		px_report_lost += px_batch_count;
	px_batch_n = 0;
	px_batch_count = 0;
	px_batch_due_ms = 0;
}

/* Every decision goes through here: about op on target (a host and
 * port, or for an HTTP request "METHOD URL" and port 0). */
static void
px_record_raw(enum proto proto, enum px_route route, enum px_verdict v, enum px_op op, const char *target, int port,
    const char *reason)
{
	struct px_decision d;

	if (px_report_fd < 0)
		return;
	if (px_batch_n + SBX_DECISION_MAX_BYTES > sizeof(px_batch))
		px_records_flush();	/* the next record may not fit */
	memset(&d, 0, sizeof(d));
	d.verdict = v;
	d.proto = proto;
	d.route = route;
	d.op = op;
	d.port = (uint16_t)port;
	d.lost = px_batch_n ? 0 : px_report_lost;	/* the batch's first record carries the count */
	str_copy(d.host, target, sizeof(d.host));
	str_copy(d.reason, v == PXV_ALLOW ? "" : reason && *reason ? reason : "?", sizeof(d.reason));
	px_batch_n += px_decision_encode(&d, px_batch + px_batch_n);
	px_batch_count++;
	if (v != PXV_ALLOW)
		px_records_flush();
	else if (!px_batch_due_ms)
		px_batch_due_ms = now_ms() + SBX_RECORD_DELAY_MS;
}

static void
px_record_as(const struct conn *c, enum px_verdict v, enum px_op op, const char *target, int port, const char *reason)
{
	px_record_raw(c->proto, c->mitm ? PXR_MITM : c->via ? PXR_PARENT : PXR_DIRECT, v, op, target, port, reason);
}

/* A connection's decision: network-outbound, to its host and port. */
static void
px_record(const struct conn *c, enum px_verdict v, const char *reason)
{
	px_record_as(c, v, PXO_OUTBOUND, c->host, c->port, reason);
}

/* ---- 7.1 Parsers: bytes in, a result out (pure; fuzzed) ---------------- */

struct http_req {
	bool connect;
	char host[SBX_MAX_HOST_BYTES + 1];
	int port;
	const char *path; size_t path_n;	/* origin-form target (forward only) */
	const char *version;			/* "HTTP/1.0" or "HTTP/1.1" */
	bool has_host;
	int host_count;				/* Host headers */
	long long content_length;		/* its Content-Length, or -1 */
	bool chunked;				/* a Transfer-Encoding: the body's end is not counted */
	const char *host_hdr; size_t host_hdr_n;	/* the first one's value, white space trimmed */
	const char *auth; size_t auth_n;	/* the Proxy-Authorization value, or NULL */
	size_t head_n;				/* bytes of the head, CRLFCRLF included */
};

/* Split "host[:port]" or "[v6][:port]" into host and port (default dflt).
 * Returns 0 or -1. */
static int
split_authority(const char *s, size_t n, char *host, size_t hn, int *port, int dflt)
{
	const char *colon = NULL, *hs = s;
	size_t hl;
	long v;
	const char *why;
	char ps[8];

	if (n == 0)
		return -1;
	if (s[0] == '[') {
		const char *close = memchr(s, ']', n);

		if (!close)
			return -1;
		hs = s;
		hl = (size_t)(close - s) + 1;
		if (hl < n) {
			if (s[hl] != ':')
				return -1;
			colon = s + hl;
		}
	} else {
		colon = memchr(s, ':', n);
		hl = colon ? (size_t)(colon - s) : n;
		if (colon && memchr(colon + 1, ':', n - hl - 1))
			return -1;
	}
	if (hl == 0 || hl >= hn)
		return -1;
	memcpy(host, hs, hl);
	host[hl] = '\0';
	*port = dflt;
	if (colon) {
		size_t pl = n - (size_t)(colon + 1 - s);

		if (pl == 0 || pl >= sizeof(ps))
			return -1;
		memcpy(ps, colon + 1, pl);
		ps[pl] = '\0';
		if (parse_int(ps, 1, 65535, &v, &why) < 0)
			return -1;
		*port = (int)v;
	} else if (dflt == 0) {
		return -1;	/* CONNECT needs a port */
	}
	return 0;
}

/* Connection options: the header names a request's Connection fields list.
 * Such a header is for this hop only (RFC 9110 7.6.1): `Connection: X-Token`
 * with `X-Token: …` is a client telling its proxy something, not the
 * server. Collected once per head and at most SBX_MAX_CONNECTION_OPTIONS
 * (a head listing more is a 400): checking each header line against every
 * line again made a 16 KiB head of tiny lines cost 50 ms of the one loop. */
#define SBX_MAX_CONNECTION_OPTIONS	32

struct conn_opts {
	int n;
	const char *name[SBX_MAX_CONNECTION_OPTIONS];
	size_t len[SBX_MAX_CONNECTION_OPTIONS];
};

/* The options of the header lines lines..end (each CRLF-terminated with a
 * colon, as http_parse_head checks first); -1 if there are too many. */
static int
connection_options(const char *lines, const char *end, struct conn_opts *o)
{
	o->n = 0;
	for (const char *line = lines; line < end;) {
		const char *le = memchr(line, '\r', (size_t)(end - line)), *colon = memchr(line, ':', (size_t)(le - line));

		if (colon - line == 10 && strncasecmp(line, "connection", 10) == 0) {
			for (const char *v = colon + 1; v < le;) {
				const char *t;

				while (v < le && (*v == ' ' || *v == '\t' || *v == ','))
					v++;
				for (t = v; v < le && *v != ',' && *v != ' ' && *v != '\t'; v++)
					;
				if (v == t)
					continue;
				if (o->n == SBX_MAX_CONNECTION_OPTIONS)
					return -1;
				o->name[o->n] = t;
				o->len[o->n++] = (size_t)(v - t);
			}
		}
		line = le + 2;
	}
	return 0;
}

/* Is the header name (n bytes) one of the options? Framing never is: without
 * its Content-Length or Transfer-Encoding the body the proxy relays would
 * reach the server as a second request. */
static bool
connection_option(const struct conn_opts *o, const char *name, size_t n)
{
	if ((n == 14 && strncasecmp(name, "content-length", 14) == 0) ||
	    (n == 17 && strncasecmp(name, "transfer-encoding", 17) == 0))
		return false;
	for (int i = 0; i < o->n; i++)
		if (o->len[i] == n && strncasecmp(o->name[i], name, n) == 0)
			return true;
	return false;
}

/* Parse an HTTP/1.x proxy request head. Returns >0 (the head's length) when
 * complete, 0 when more bytes are needed, -400 or -431 on error. */
static int
http_parse_head(const char *buf, size_t n, struct http_req *r)
{
	const char *end = NULL, *sp1, *sp2, *eol, *line, *target;
	size_t i, tn;

	memset(r, 0, sizeof(*r));
	r->content_length = -1;
	for (i = 3; i < n; i++)
		if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r') {
			end = buf + i + 1;
			break;
		}
	if (!end)
		return n >= SBX_MAX_HTTP_HEAD_BYTES ? -431 : 0;
	r->head_n = (size_t)(end - buf);
	/* SECURITY: CR and LF only as CRLF, no NUL. A bare LF inside a header
	 * value is a line break to a lenient upstream: "X: a\nHost: other"
	 * would smuggle a second Host past the rewrite (domain fronting on an
	 * allowed server) */
	for (i = 0; i < r->head_n; i++)
		if (buf[i] == '\0' || (buf[i] == '\r' && (i + 1 == r->head_n || buf[i + 1] != '\n')) ||
		    (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r')))
			return -400;
	eol = memchr(buf, '\r', r->head_n);
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	if (!sp1)
		return -400;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
	if (!sp2 || eol - sp2 != 9 || (memcmp(sp2 + 1, "HTTP/1.1", 8) && memcmp(sp2 + 1, "HTTP/1.0", 8)))
		return -400;
	for (i = 0; buf + i < sp1; i++)
		if (!isupper((unsigned char)buf[i]))
			return -400;
	r->version = memcmp(sp2 + 1, "HTTP/1.1", 8) == 0 ? "HTTP/1.1" : "HTTP/1.0";
	target = sp1 + 1;
	tn = (size_t)(sp2 - target);
	for (i = 0; i < tn; i++)
		if ((unsigned char)target[i] <= ' ' || target[i] == 0x7f)
			return -400;
	r->connect = sp1 - buf == 7 && memcmp(buf, "CONNECT", 7) == 0;
	if (r->connect) {
		if (split_authority(target, tn, r->host, sizeof(r->host), &r->port, 0) < 0)
			return -400;
	} else {
		/* absolute-form (RFC 9112 3.2.2): the target decides, never Host */
		const char *auth, *auth_end, *at;

		if (tn < 8 || strncasecmp(target, "http://", 7) != 0)
			return -400;
		auth = target + 7;
		for (auth_end = auth; auth_end < target + tn && !strchr("/?#", *auth_end); auth_end++)
			;
		/* RFC 3986 3.2.1: userinfo ends at the last '@' of the authority */
		for (at = auth_end; at > auth && at[-1] != '@'; at--)
			;
		if (at > auth)
			auth = at;
		if (split_authority(auth, (size_t)(auth_end - auth), r->host, sizeof(r->host), &r->port, 80) < 0)
			return -400;
		r->path = auth_end;
		r->path_n = (size_t)(target + tn - auth_end);
	}
	/* header lines: name ":" value, no obs-fold, no bare CR/LF */
	for (line = eol + 2; line < end - 2;) {
		const char *le = memchr(line, '\r', (size_t)(end - line)), *colon;

		if (!le || le[1] != '\n' || le == line)
			return -400;
		colon = memchr(line, ':', (size_t)(le - line));
		if (!colon || colon == line || *line == ' ' || *line == '\t')
			return -400;
		for (const char *q = line; q < colon; q++)
			if (!isgraph((unsigned char)*q))
				return -400;
		if (colon - line == 4 && strncasecmp(line, "host", 4) == 0) {
			const char *v = colon + 1, *ve = le;

			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			if (!r->host_count++) {
				r->host_hdr = v;
				r->host_hdr_n = (size_t)(ve - v);
			}
			r->has_host = true;
		}
		if (colon - line == 17 && strncasecmp(line, "transfer-encoding", 17) == 0)
			r->chunked = true;	/* any coding: its end is not a count of bytes */
		if (colon - line == 14 && strncasecmp(line, "content-length", 14) == 0) {
			const char *v = colon + 1;
			long long cl = 0;

			while (v < le && (*v == ' ' || *v == '\t'))
				v++;
			if (v == le)
				return -400;
			for (; v < le && isdigit((unsigned char)*v); v++) {
				if (cl > (LLONG_MAX - 9) / 10)
					return -400;
				cl = cl * 10 + (*v - '0');
			}
			while (v < le && (*v == ' ' || *v == '\t'))
				v++;
			/* SECURITY: one length, stated once (or repeated the same):
			 * two readings of a body's end smuggle a second request */
			if (v != le || (r->content_length >= 0 && r->content_length != cl))
				return -400;
			r->content_length = cl;
		}
		if (colon - line == 19 && strncasecmp(line, "proxy-authorization", 19) == 0) {
			if (r->auth)
				return -400;	/* two credentials: which one counts is not for us to guess */
			r->auth = colon + 1;
			r->auth_n = (size_t)(le - colon - 1);
		}
		line = le + 2;
	}
	{
		struct conn_opts opts;

		if (connection_options(eol + 2, end - 2, &opts) < 0)
			return -400;	/* more connection options than any client sends */
	}
	if (!r->connect && strcmp(r->version, "HTTP/1.1") == 0 && !r->has_host)
		return -400;	/* as srt */
	return (int)r->head_n;
}

/* Headers that belong to one hop (RFC 9110 7.6.1) or to the proxy. */
static bool
hop_by_hop(const char *name, size_t n)
{
	static const char *const hop[] = { "connection", "keep-alive", "proxy-connection", "proxy-authorization",
		"proxy-authenticate", "te", "trailer", "upgrade", "host" };
	size_t i;

	for (i = 0; i < LEN(hop); i++)
		if (strlen(hop[i]) == n && strncasecmp(name, hop[i], n) == 0)
			return true;
	return false;
}

/* The request as the origin server gets it: origin-form, Host from the
 * target in its canonical form (4.4: the host the policy judged and the
 * proxy dials, and the one a parent's or the MITM proxy's URL names, so
 * the two never disagree; an IPv6 address in brackets), hop-by-hop and
 * Proxy-* headers removed (the fixed set and the connection options the
 * request names), one request per connection (Connection: close), so
 * each request is decided on its own target. A target with no canonical
 * form keeps its spelling: the policy refuses it as malformed before
 * anything is sent. Returns a malloc'd head. */
static char *
http_rewrite(const char *buf, const struct http_req *r, size_t *out_n)
{
	struct buf b = { 0 };
	struct conn_opts opts;
	const char *line = memchr(buf, '\n', r->head_n) + 1, *end = buf + r->head_n - 2;
	char canon[SBX_MAX_HOST_BYTES + 64];
	bool v6 = false;

	if (match_canonical_host(r->host, canon, sizeof(canon)) == 0)
		v6 = strchr(canon, ':') != NULL;
	else
		str_copy(canon, r->host, sizeof(canon));
	buf_putn(&b, buf, (size_t)(memchr(buf, ' ', r->head_n) - (void *)buf));
	buf_putc(&b, ' ');
	if (r->path_n == 0 || r->path[0] != '/')
		buf_putc(&b, '/');
	buf_putn(&b, r->path, r->path_n);
	buf_printf(&b, v6 ? " %s\r\nHost: [%s]" : " %s\r\nHost: %s", r->version, canon);
	if (r->port != 80)
		buf_printf(&b, ":%d", r->port);
	buf_puts(&b, "\r\n");
	(void)connection_options(line, end, &opts);	/* http_parse_head refused more than the bound */
	while (line < end) {
		const char *le = memchr(line, '\r', (size_t)(end - line)), *colon = memchr(line, ':', (size_t)(le - line));
		size_t nn = (size_t)(colon - line);

		if (!hop_by_hop(line, nn) && !(nn >= 6 && strncasecmp(line, "proxy-", 6) == 0) &&
		    !connection_option(&opts, line, nn))
			buf_putn(&b, line, (size_t)(le - line + 2));
		line = le + 2;
	}
	buf_puts(&b, "Connection: close\r\n\r\n");
	*out_n = b.n;
	return b.p;
}

/* The response head as the client gets it: its Connection, Keep-Alive and
 * Proxy-Connection headers replaced by "Connection: close", since the
 * proxy sends one request per upstream connection; a client left
 * believing in keep-alive would send its next request into a closed
 * socket. head_n covers CRLFCRLF. Returns a malloc'd copy of the whole
 * buffer with the head rewritten. */
/* Is the header name (n bytes) one of strip's, with case, '-', '_' and
 * '.' folded (srt's foldHeaderName: x_secret is X-Secret)? */
static bool
header_stripped(const struct vec *strip, const char *name, size_t n)
{
	for (size_t i = 0; strip && i < strip->n; i++) {
		const char *s = strip->v[i];
		size_t k;

		if (strlen(s) != n)
			continue;
		for (k = 0; k < n; k++) {
			char a = (char)tolower((unsigned char)s[k]), b = (char)tolower((unsigned char)name[k]);

			if ((a == '_' || a == '.' ? '-' : a) != (b == '_' || b == '.' ? '-' : b))
				break;
		}
		if (k == n)
			return true;
	}
	return false;
}

static char *
http_rewrite_response(const char *buf, size_t n, size_t head_n, const struct vec *strip, size_t *out_n)
{
	struct buf b = { 0 };
	const char *line = memchr(buf, '\n', head_n), *end = buf + head_n - 2;

	if (!line)
		line = buf + head_n;
	else
		line++;
	buf_putn(&b, buf, (size_t)(line - buf));	/* the status line */
	buf_puts(&b, "Connection: close\r\n");
	while (line < end) {
		const char *le = memchr(line, '\n', (size_t)(end + 2 - line));
		const char *colon;
		size_t ln;

		if (!le)
			break;
		ln = (size_t)(le - line + 1);
		colon = memchr(line, ':', ln);
		if (!colon || !(((colon - line == 10 && strncasecmp(line, "connection", 10) == 0)) ||
		    (colon - line == 10 && strncasecmp(line, "keep-alive", 10) == 0) ||
		    (colon - line == 16 && strncasecmp(line, "proxy-connection", 16) == 0) ||
		    header_stripped(strip, line, (size_t)(colon - line)))) {
			/* each line ends in CRLF, a bare LF's too: the head the
			 * client gets ends where its own parser will think it does */
			size_t keep = ln - 1 - (ln >= 2 && line[ln - 2] == '\r');

			buf_putn(&b, line, keep);
			buf_puts(&b, "\r\n");
		}
		line = le + 1;
	}
	buf_puts(&b, "\r\n");
	buf_putn(&b, buf + head_n, n - head_n);	/* the body bytes that came with it */
	*out_n = b.n;
	return b.p;
}

/* SOCKS5 greeting: VER NMETHODS METHODS. Returns >0 (its length) with the
 * method chosen (0x00 no auth, 0x02 user/pass, 0xff none), 0 if short.
 * The one offered first among the two is not what decides: without a
 * credential to ask for, no auth is preferred; with one (want_auth),
 * user/pass, and a client that offers only no auth is taken on and
 * refused once its request says where it meant to go (srt, 5.4). */
static int
socks5_parse_greeting(const unsigned char *b, size_t n, bool want_auth, int *method)
{
	const int first = want_auth ? 0x02 : 0x00, second = want_auth ? 0x00 : 0x02;

	if (n < 2)
		return 0;
	if (n < 2 + (size_t)b[1])
		return 0;
	*method = 0xff;
	for (size_t i = 0; i < b[1] && *method != first; i++)
		if (b[2 + i] == first || b[2 + i] == second)
			*method = b[2 + i];
	return 2 + b[1];
}

/* RFC 1929: VER(1) ULEN UNAME PLEN PASSWD. Returns its length with the
 * user name and password (not NUL-ended; checked by proxy_credential_ok),
 * 0 if short, or -1. */
static int
socks5_parse_auth(const unsigned char *b, size_t n, const unsigned char **user, size_t *ul,
    const unsigned char **pass, size_t *pl)
{
	if (n < 2)
		return 0;
	if (b[0] != 0x01)
		return -1;
	*ul = b[1];
	if (n < 2 + *ul + 1)
		return 0;
	*pl = b[2 + *ul];
	if (n < 3 + *ul + *pl)
		return 0;
	*user = b + 2;
	*pass = b + 3 + *ul;
	return (int)(3 + *ul + *pl);
}

/* The proxy's credential (macOS: its listeners are on this machine's
 * loopback, where every local process can reach them; on Linux they
 * exist only inside the sandbox and none is asked). srt's rule (5.3): a
 * user name of any text but empty, and the run's token as the password.
 * The comparison takes the same time wherever the first difference is. */
static bool
proxy_credential_ok(const unsigned char *user, size_t ul, const unsigned char *pass, size_t pl, const char *token)
{
	size_t tn = strlen(token);
	unsigned diff = 0;

	(void)user;	/* any name: srt's attribution key, not a secret */
	if (ul == 0 || pl != tn)
		return false;
	for (size_t i = 0; i < tn; i++)
		diff |= (unsigned)(pass[i] ^ (unsigned char)token[i]);
	return diff == 0;
}

/* A Proxy-Authorization value (n bytes): srt's /^basic\s+([a-z0-9+\/=]+)\s*$/i,
 * the base64 decoded as "user:password", then proxy_credential_ok. */
static bool
proxy_basic_ok(const char *v, size_t n, const char *token)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char dec[256];
	size_t i = 0, start, end, dn = 0;
	unsigned acc = 0;
	int bits = 0;
	const unsigned char *colon;

	while (i < n && (v[i] == ' ' || v[i] == '\t'))
		i++;
	if (n - i < 6 || strncasecmp(v + i, "basic", 5) != 0 || (v[i + 5] != ' ' && v[i + 5] != '\t'))
		return false;
	for (i += 5; i < n && (v[i] == ' ' || v[i] == '\t'); i++)
		;
	for (start = i; i < n && v[i] != ' ' && v[i] != '\t'; i++)
		;
	end = i;
	for (; i < n; i++)
		if (v[i] != ' ' && v[i] != '\t')
			return false;
	for (i = start; i < end && v[i] != '='; i++) {
		const char *at = memchr(b64, v[i], 64);

		if (!at || v[i] == '\0')
			return false;
		acc = acc << 6 | (unsigned)(at - b64);
		if ((bits += 6) >= 8) {
			bits -= 8;
			if (dn == sizeof(dec))
				return false;
			dec[dn++] = (unsigned char)(acc >> bits);
		}
	}
	for (; i < end; i++)
		if (v[i] != '=')
			return false;	/* '=' only as padding, at the end */
	if (start == end || !(colon = memchr(dec, ':', dn)))
		return false;
	return proxy_credential_ok(dec, (size_t)(colon - dec), colon + 1, dn - (size_t)(colon - dec) - 1, token);
}

/* SOCKS5 request: VER CMD RSV ATYP DST.ADDR DST.PORT. Returns >0 with host
 * and port, 0 if short, or -(reply code) on a request to refuse. */
static int
socks5_parse_request(const unsigned char *b, size_t n, char *host, size_t hn, int *port)
{
	size_t alen, off;

	if (n < 5)
		return 0;
	if (b[0] != 0x05 || b[2] != 0x00)
		return -SOCKS5_FAILURE;
	switch (b[3]) {
	case 0x01: alen = 4; off = 4; break;
	case 0x04: alen = 16; off = 4; break;
	case 0x03: alen = b[4]; off = 5; if (alen == 0) return -SOCKS5_FAILURE; break;
	default: return -SOCKS5_ATYP_UNSUPPORTED;
	}
	if (n < off + alen + 2)
		return 0;
	if (b[1] != 0x01)
		return -SOCKS5_CMD_UNSUPPORTED;	/* BIND, UDP ASSOCIATE */
	if (b[3] == 0x03) {
		if (alen >= hn || memchr(b + off, '\0', alen))
			return -SOCKS5_FAILURE;
		memcpy(host, b + off, alen);
		host[alen] = '\0';
	} else if (!inet_ntop(b[3] == 0x01 ? AF_INET : AF_INET6, b + off, host, (socklen_t)hn)) {
		return -SOCKS5_FAILURE;
	}
	*port = b[off + alen] << 8 | b[off + alen + 1];
	if (*port == 0)
		return -SOCKS5_FAILURE;
	return (int)(off + alen + 2);
}

/* SOCKS4/4a: VER CMD PORT(2) IP(4) USERID NUL [HOST NUL if IP is 0.0.0.x].
 * Returns >0, 0 if short, or -1 to refuse. */
static int
socks4_parse(const unsigned char *b, size_t n, char *host, size_t hn, int *port)
{
	const unsigned char *nul;
	size_t off;

	if (n < 9)
		return 0;
	if (b[0] != 0x04 || b[1] != 0x01)
		return -1;
	nul = memchr(b + 8, '\0', n - 8);
	if (!nul)
		return n > 8 + 255 ? -1 : 0;
	if (nul - (b + 8) > 255)
		return -1;	/* the same bound whether the userid's NUL has come or not */
	off = (size_t)(nul - b) + 1;
	*port = b[2] << 8 | b[3];
	if (b[4] == 0 && b[5] == 0 && b[6] == 0 && b[7] != 0) {	/* 4a: a name follows */
		const unsigned char *hnul = memchr(b + off, '\0', n - off);
		size_t l;

		if (!hnul)
			return n - off > SBX_MAX_HOST_BYTES ? -1 : 0;
		l = (size_t)(hnul - (b + off));
		if (l == 0 || l >= hn)
			return -1;
		memcpy(host, b + off, l);
		host[l] = '\0';
		off += l + 1;
	} else {
		inet_ntop(AF_INET, b + 4, host, (socklen_t)hn);
	}
	return *port ? (int)off : -1;
}

/* srt's in-band refusal for SSH (5.4): a server banner and an unencrypted
 * SSH_MSG_DISCONNECT (reason 1, HOST_NOT_ALLOWED_TO_CONNECT) whose text is
 * the reason, so `ssh` and `git` print why the connection was refused. */
static void
ssh_refusal(struct buf *b, const char *reason)
{
	struct buf pl = { 0 };
	uint32_t rl = (uint32_t)strlen(reason), plen, be;
	unsigned char pad;

	buf_puts(b, "SSH-2.0-policy_refusal\r\n");
	buf_putc(&pl, 1);	/* SSH_MSG_DISCONNECT */
	be = htonl(1);
	buf_putn(&pl, (const char *)&be, 4);
	be = htonl(rl);
	buf_putn(&pl, (const char *)&be, 4);
	buf_putn(&pl, reason, rl);
	be = 0;
	buf_putn(&pl, (const char *)&be, 4);	/* language tag "" */
	pad = (unsigned char)(8 - (4 + 1 + pl.n) % 8);
	if (pad < 4)
		pad += 8;
	plen = htonl((uint32_t)(1 + pl.n + pad));
	buf_putn(b, (const char *)&plen, 4);
	buf_putc(b, (char)pad);
	buf_putn(b, pl.p, pl.n);
	for (unsigned i = 0; i < pad; i++)
		buf_putc(b, 0);
	free(pl.p);
}

/* The parent proxy (4.7), as srt's openConnectTunnel speaks to it. */

#define SBX_PARENT_MS	30000	/* for the parent's answer to CONNECT, as srt */

/* host as it stands in an authority: an IPv6 address in brackets. */
static void
authority_put(struct buf *b, const char *host, int port)
{
	buf_printf(b, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
}

/* "CONNECT host:port", with the parent's credential if it has one. host
 * passed the policy's checks (srt's isValidHost: no CR, LF or space). */
static void
parent_connect_request(struct buf *b, const char *host, int port, const char *auth)
{
	buf_puts(b, "CONNECT ");
	authority_put(b, host, port);
	buf_puts(b, " HTTP/1.1\r\nHost: ");
	authority_put(b, host, port);
	buf_puts(b, "\r\n");
	if (auth)
		buf_printf(b, "Proxy-Authorization: %s\r\n", auth);
	buf_puts(b, "\r\n");
}

/* The parent's answer to CONNECT, n bytes so far. Returns 0 while its head
 * is incomplete, its length (the tunnel's bytes follow) for "HTTP/1.x
 * 2xx", -1 for any other status (the status line is in *line, at most
 * line_n bytes) and -2 for a head over 16 KiB (srt's bound). */
static int
parent_reply(const char *b, size_t n, char *line, size_t line_n)
{
	const char *end = NULL;
	size_t ln;

	for (size_t i = 3; i < n && !end; i++)
		if (b[i] == '\n' && b[i - 1] == '\r' && b[i - 2] == '\n' && b[i - 3] == '\r')
			end = b + i + 1;
	if (!end)
		return n >= SBX_MAX_HTTP_HEAD_BYTES ? -2 : 0;
	ln = strcspn(b, "\r\n");
	snprintf(line, line_n, "%.*s", (int)(ln < line_n ? ln : line_n - 1), b);
	for (char *c = line; *c; c++)
		if (is_control((unsigned char)*c))
			*c = '?';
	/* srt: /^HTTP\/1\.[01] 2\d\d(?:\s|$)/ */
	if (ln < 12 || memcmp(b, "HTTP/1.", 7) != 0 || (b[7] != '0' && b[7] != '1') || b[8] != ' ' || b[9] != '2' ||
	    !isdigit((unsigned char)b[10]) || !isdigit((unsigned char)b[11]) || (ln > 12 && !isspace((unsigned char)b[12])))
		return -1;
	return (int)(end - b);
}

/* A forwarded request (http_rewrite's origin form) made absolute for the
 * parent: "GET http://host:port/path HTTP/1.1", and the parent's
 * credential. The client's own Proxy-* headers were dropped already. */
static char *
http_absolute_form(const char *fwd, size_t n, const char *host, int port, const char *auth, size_t *out_n)
{
	struct buf b = { 0 };
	const char *sp = memchr(fwd, ' ', n), *eol = memchr(fwd, '\n', n);

	buf_putn(&b, fwd, (size_t)(sp - fwd) + 1);
	buf_puts(&b, "http://");
	if (port == 80)
		buf_printf(&b, strchr(host, ':') ? "[%s]" : "%s", host);
	else
		authority_put(&b, host, port);
	buf_putn(&b, sp + 1, (size_t)(eol - sp));	/* the path, the version, CRLF */
	if (auth)
		buf_printf(&b, "Proxy-Authorization: %s\r\n", auth);
	buf_putn(&b, eol + 1, n - (size_t)(eol + 1 - fwd));
	*out_n = b.n;
	return b.p;
}

/* requireHostMatch (srt request-filter.js hostMismatch, for plain HTTP):
 * NULL when the request's Host header names its target, else why. It
 * names it when it is the target's host, in any case, with the target's
 * port after one colon, or with no port when that is 80; with brackets
 * only around an IPv6 address. Any other shape (empty, a trailing colon
 * or dot, brackets around a name) names no host; two Host headers are a
 * mismatch, none is not (HTTP/1.1 without one is refused earlier, 400). */
static const char *
http_host_mismatch(const struct http_req *r, const char *want, int port)
{
	const char *h = r->host_hdr, *host = h, *rest;
	size_t n = r->host_hdr_n, hn;
	char ps[8];

	if (r->host_count == 0)
		return NULL;
	if (r->host_count > 1)
		return "more than one Host header";
	if (n && h[0] == '[') {
		const char *end = memchr(h, ']', n);
		char v6[64];
		unsigned char a[16];

		if (!end || (size_t)(end - h - 1) >= sizeof(v6))
			goto mismatch;
		memcpy(v6, h + 1, (size_t)(end - h - 1));
		v6[end - h - 1] = '\0';
		if (inet_pton(AF_INET6, v6, a) != 1)
			goto mismatch;
		host = h + 1;
		hn = (size_t)(end - h - 1);
		rest = end + 1;
	} else {
		const char *colon = memchr(h, ':', n);

		hn = colon ? (size_t)(colon - h) : n;
		rest = h + hn;
		if (memchr(h, '[', hn) || memchr(h, ']', hn))
			goto mismatch;
	}
	if (hn != strlen(want) || strncasecmp(host, want, hn) != 0)
		goto mismatch;
	if (rest == h + n)
		return port == 80 ? NULL : "Host header does not match the request target";
	if (*rest != ':' || rest + 1 == h + n || (size_t)(h + n - rest - 1) >= sizeof(ps))
		goto mismatch;
	memcpy(ps, rest + 1, (size_t)(h + n - rest - 1));
	ps[h + n - rest - 1] = '\0';
	{
		char wp[8];	/* the proxy's arena is sealed: no aprintf here */

		snprintf(wp, sizeof(wp), "%d", port);
		if (strpbrk(ps, "[]:") || strcmp(ps, wp) != 0)
			goto mismatch;
	}
	return NULL;
mismatch:
	return "Host header does not match the request target";
}

/* DNS messages (RFC 1035 4.1), the stub's side (7.4). A query comes from
 * the sandbox: hostile bytes. Accepted: a query (QR 0, opcode 0) with
 * exactly one question and nothing in the answer and authority sections
 * (an EDNS OPT in the additional one is allowed, and ignored); the name's
 * labels are 1..63 bytes, uncompressed (a query has nothing earlier to
 * point at), 253 characters in all. A label holding a byte no host name
 * holds (a '.', a NUL, a space: the policy is asked about the name as
 * text, and "a.b" as one label must not read as two) marks the question
 * bad; it is refused, never looked up. The answer is built from the
 * parsed question, never by echoing the packet back. */
#define SBX_DNS_MAX_NAME	253
#define SBX_DNS_UDP_BYTES	512	/* RFC 1035 4.2.1: every answer fits, with no EDNS to negotiate */

enum dns_rcode { DNS_NOERROR = 0, DNS_FORMERR = 1, DNS_SERVFAIL = 2, DNS_NXDOMAIN = 3, DNS_NOTIMP = 4, DNS_REFUSED = 5 };
enum { DNS_TYPE_A = 1, DNS_TYPE_AAAA = 28, DNS_CLASS_IN = 1 };

struct dns_question {
	uint16_t id;
	bool rd;			/* recursion desired: echoed */
	bool have_question;		/* parsed far enough to be echoed in the answer */
	bool bad;			/* a byte no host name holds: refused */
	char spelled[SBX_DNS_MAX_NAME + 1];	/* as asked (case kept: some clients check it), '?' for bad bytes */
	char name[SBX_DNS_MAX_NAME + 1];	/* lower case: what the policy is asked about */
	uint16_t qtype, qclass;
};

static uint16_t
be16(const unsigned char *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

/* Parse one datagram. Returns DNS_NOERROR for a question to answer, another
 * rcode to answer with at once (q->id set, q->have_question says whether
 * the question can be echoed), or -1 to drop it unanswered: shorter than a
 * header, or a response (answering responses could loop two resolvers). */
static int
dns_query_parse(const unsigned char *b, size_t n, struct dns_question *q)
{
	size_t pos = 12, len = 0;

	memset(q, 0, sizeof(*q));
	if (n < 12 || (b[2] & 0x80))
		return -1;
	q->id = be16(b);
	q->rd = (b[2] & 0x01) != 0;
	if (((b[2] >> 3) & 0x0f) != 0)
		return DNS_NOTIMP;	/* only QUERY */
	if (be16(b + 4) != 1 || be16(b + 6) != 0 || be16(b + 8) != 0 || be16(b + 10) > 1)
		return DNS_FORMERR;
	for (;;) {
		unsigned lab;

		if (pos >= n)
			return DNS_FORMERR;
		lab = b[pos++];
		if (lab == 0)
			break;
		if (lab > 63 || pos + lab > n || len + (len ? 1 : 0) + lab > SBX_DNS_MAX_NAME)
			return DNS_FORMERR;	/* compression (0xc0), the reserved 0x40/0x80, or too long */
		if (len)
			q->spelled[len++] = '.';
		for (unsigned k = 0; k < lab; k++) {
			unsigned char ch = b[pos + k];
			bool ok = isalnum(ch) || ch == '-' || ch == '_';

			q->bad |= !ok;
			q->spelled[len++] = ok ? (char)ch : '?';
		}
		pos += lab;
	}
	if (pos + 4 > n)
		return DNS_FORMERR;
	q->spelled[len] = '\0';
	for (size_t k = 0; k <= len; k++)
		q->name[k] = (char)tolower((unsigned char)q->spelled[k]);
	q->qtype = be16(b + pos);
	q->qclass = be16(b + pos + 2);
	q->have_question = true;
	return DNS_NOERROR;
}

/* The answer to q: rcode, and for DNS_NOERROR the addresses of q->qtype's
 * family (others are skipped), each with ttl seconds, as many as fit in
 * SBX_DNS_UDP_BYTES (no TC bit: a client then has fewer addresses, which
 * is an answer; truncation would send it to TCP, where no stub listens).
 * out holds SBX_DNS_UDP_BYTES. Returns the length. Pure. */
static size_t
dns_reply_build(const struct dns_question *q, int rcode, const struct addr *a, size_t na, uint32_t ttl,
    unsigned char *out)
{
	size_t n = 12, nans = 0;
	int fam = q->qtype == DNS_TYPE_A ? AF_INET : q->qtype == DNS_TYPE_AAAA ? AF_INET6 : 0;

	memset(out, 0, 12);
	out[0] = (unsigned char)(q->id >> 8);
	out[1] = (unsigned char)q->id;
	out[2] = (unsigned char)(0x80 | (q->rd ? 0x01 : 0));	/* QR, opcode 0, RD echoed */
	out[3] = (unsigned char)(0x80 | (rcode & 0x0f));	/* RA */
	if (!q->have_question)
		return n;
	out[5] = 1;	/* QDCOUNT */
	for (const char *l = q->spelled; *l;) {	/* the name, label by label, as asked */
		size_t ll = strcspn(l, ".");

		out[n++] = (unsigned char)ll;
		memcpy(out + n, l, ll);
		n += ll;
		l += ll + (l[ll] == '.');
	}
	out[n++] = 0;
	out[n++] = (unsigned char)(q->qtype >> 8);
	out[n++] = (unsigned char)q->qtype;
	out[n++] = (unsigned char)(q->qclass >> 8);
	out[n++] = (unsigned char)q->qclass;
	for (size_t i = 0; rcode == DNS_NOERROR && i < na && nans < 0xffff; i++) {
		size_t alen = a[i].family == AF_INET ? 4 : 16;

		if (a[i].family != fam || n + 12 + alen > SBX_DNS_UDP_BYTES)
			continue;
		out[n++] = 0xc0;	/* the name: a pointer to the question's, at offset 12 */
		out[n++] = 12;
		out[n++] = (unsigned char)(q->qtype >> 8);
		out[n++] = (unsigned char)q->qtype;
		out[n++] = 0;
		out[n++] = DNS_CLASS_IN;
		for (int k = 3; k >= 0; k--)
			out[n++] = (unsigned char)(ttl >> (8 * k));
		out[n++] = 0;
		out[n++] = (unsigned char)alen;
		memcpy(out + n, a[i].b, alen);
		n += alen;
		nans++;
	}
	out[6] = (unsigned char)(nans >> 8);
	out[7] = (unsigned char)nans;
	return n;
}

/* ---- 7.2 The resolver: blocking getaddrinfo off the event loop -------- */

struct dns_job {
	unsigned slot, gen;
	char host[SBX_MAX_HOST_BYTES + 1];
	struct addrinfo *res;
	int err;
	struct dns_job *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct dns_job *queue, *done;	/* to resolve; answered */
	int notify_fd;			/* write end of the loop's pipe */
} dns = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, -1 };

static void *
dns_worker(void *arg)
{
	(void)arg;
	for (;;) {
		struct dns_job *j;
		struct addrinfo hints;

		pthread_mutex_lock(&dns.lock);
		while (!dns.queue)
			pthread_cond_wait(&dns.wake, &dns.lock);
		j = dns.queue;
		dns.queue = j->next;
		pthread_mutex_unlock(&dns.lock);

		memset(&hints, 0, sizeof(hints));
		hints.ai_socktype = SOCK_STREAM;
		hints.ai_family = AF_UNSPEC;
		j->err = getaddrinfo(j->host, NULL, &hints, &j->res);

		pthread_mutex_lock(&dns.lock);
		j->next = dns.done;
		dns.done = j;
		pthread_mutex_unlock(&dns.lock);
		(void)!write(dns.notify_fd, "x", 1);
	}
	return NULL;
}

static void
dns_submit(unsigned slot, unsigned gen, const char *host)
{
	struct dns_job *j = calloc(1, sizeof(*j));

	if (!j)
		return;
	j->slot = slot;
	j->gen = gen;
	if (str_copy(j->host, host, sizeof(j->host)) >= sizeof(j->host)) {	/* canonical forms are never longer; */
		free(j);	/* refuse, don't truncate */
		return;
	}
	pthread_mutex_lock(&dns.lock);
	j->next = dns.queue;
	dns.queue = j;
	pthread_mutex_unlock(&dns.lock);
	/* signalled after the unlock: a worker woken while the loop still
	 * held the lock went straight back to sleep on the mutex, two more
	 * futex calls and a context switch per lookup (strace) */
	pthread_cond_signal(&dns.wake);
}

/* The hosts file, read in the loop. A lookup through a resolver thread
 * costs two wake-ups (the thread's futex, then the loop's pipe): on the
 * 2-CPU machine of README's Figures, about a sixth of a short request's
 * time (sequential requests, lookups in the loop against through a
 * thread, interleaved in one run: 7419 against 6191 a second).
 * But getaddrinfo asks the hosts file first and DNS only for a name it
 * does not hold: musl (the static build) always, glibc where
 * nsswitch.conf's hosts line begins with files (Debian's default). A name
 * the file holds never blocks, so the loop looks it up itself, as
 * getaddrinfo would: each lookup reads the file's lines as they are now
 * (its text is kept only while the file is unchanged, hosts_open below;
 * no answer is ever kept), and every address then meets the same guard
 * (px_connect_next).
 * An address literal (a CONNECT to 192.0.2.1, a parent proxy on
 * 127.0.0.1) is its own answer, here too. Any other name goes to a
 * resolver thread.
 *
 * Only what both libcs read the same way is taken: the name matched whole
 * and byte for byte (musl compares bytes; glibc ignores case, so it can
 * only find more lines, never other ones); the address a plain IPv4 or
 * IPv6 literal (inet_pton). A line that holds the name but is anything
 * else (leading blanks, which musl skips; "10.1" or a scope id, which
 * musl's parser takes; a line longer than musl's 512-byte buffer; more
 * addresses than SBX_HOSTS_MAX_ADDRS) leaves the name to getaddrinfo,
 * which knows its own rules. hosts_first (px_init) says whether this
 * machine's resolver reads the file first at all. */
#define SBX_HOSTS_LINE_BYTES	512
#define SBX_HOSTS_MAX_ADDRS	16

struct hosts_answer {	/* one block: px_close frees it (conn.addrs_mine) */
	struct addrinfo ai[SBX_HOSTS_MAX_ADDRS];
	struct sockaddr_in6 sa[SBX_HOSTS_MAX_ADDRS];	/* big enough for either family */
};

/* Find name in a hosts file f: the addresses of every line naming it, in
 * the file's order, into out (up to max). Returns how many (0: the file
 * does not name it), or -1: a line naming it is one to leave to
 * getaddrinfo (above). */
static int
hosts_find(FILE *f, const char *name, struct addr *out, int max)
{
	char line[SBX_HOSTS_LINE_BYTES];
	int n = 0;

	while (fgets(line, sizeof(line), f)) {
		char *tok, *save = NULL, *first;
		bool named = false, leading = isspace((unsigned char)line[0]);
		size_t len = strlen(line);

		if (len == sizeof(line) - 1 && line[len - 1] != '\n')
			return -1;	/* longer than musl's buffer: it would read it in pieces */
		line[strcspn(line, "#")] = '\0';
		if (!(first = strtok_r(line, " \t\r\n\v\f", &save)))
			continue;
		while (!named && (tok = strtok_r(NULL, " \t\r\n\v\f", &save)))
			named = strcmp(tok, name) == 0;
		if (!named)
			continue;
		if (leading || n == max || addr_parse(first, &out[n]) < 0)
			return -1;
		n++;
	}
	return ferror(f) ? -1 : n;
}

/* The hosts file's text, kept. Reading the file for each request was six
 * system calls (musl's fopen: open, two fcntl, two reads, a close), a
 * fifth of the proxy's for a short request (strace). So its text is
 * kept, and used again while stat(2) says the file is the one it was read
 * from, unchanged: the same device, inode, size, mtime and ctime. The
 * text, not an answer: each lookup still finds the name's lines in it
 * (hosts_find), every address still meets the guard, and a name it does
 * not hold still goes to getaddrinfo.
 *
 * Unchanged must mean unchanged. Any write gives the file a new ctime (no
 * call sets ctime back; mtime can be set), but only in the timestamp's
 * granularity: a second on ext4 with 128-byte inodes, a clock tick at
 * best. A text read within that granularity of the file's last change
 * could be followed by another change with the very same stat. So the
 * text is kept only when the file's mtime and ctime were at least
 * SBX_HOSTS_SETTLE_S old as it was read; a later change is then stamped
 * later than both, whatever the granularity below that (which is why
 * whole seconds compare, on every platform). A file changed just now is
 * read again for each request, as before, until it settles; so is one
 * over SBX_HOSTS_KEEP_BYTES (ad blockers' hosts files run to megabytes)
 * or anything but a regular file. */
#define SBX_HOSTS_KEEP_BYTES	65536
#define SBX_HOSTS_SETTLE_S	2

static struct {
	struct stat st;		/* the file's, as its text was read */
	char *text;		/* owned (malloc: the arena is sealed), or NULL: nothing kept */
	size_t n;
} hosts_kept;

/* May the text of a hosts file with this stat, read at now, be kept? Pure. */
static bool
hosts_may_keep(const struct stat *st, time_t now)
{
	return S_ISREG(st->st_mode) && st->st_size <= SBX_HOSTS_KEEP_BYTES &&
	    now - st->st_mtime >= SBX_HOSTS_SETTLE_S && now - st->st_ctime >= SBX_HOSTS_SETTLE_S;
}

/* Is the file of stat now the file of stat then, unchanged? Pure. */
static bool
hosts_same(const struct stat *now, const struct stat *then)
{
	return now->st_dev == then->st_dev && now->st_ino == then->st_ino && now->st_size == then->st_size &&
	    now->st_mtime == then->st_mtime && now->st_ctime == then->st_ctime;
}

/* The hosts file as a stream for hosts_find: the kept text while the file
 * is unchanged, else the file read now (and its text kept when it may
 * be). NULL when there is no file, or nothing in it. */
static FILE *
hosts_open(void)
{
	static const char path[] = "/etc/hosts";
	struct stat st;
	struct buf b = { 0 };
	bool have = stat(path, &st) == 0;

	if (hosts_kept.text && have && hosts_same(&st, &hosts_kept.st))
		return hosts_kept.n ? fmemopen(hosts_kept.text, hosts_kept.n, "r") : NULL;
	free(hosts_kept.text);
	hosts_kept.text = NULL;
	if (!have || !hosts_may_keep(&st, time(NULL)))
		return fopen(path, "re");
	/* read after the stat: a change in between leaves a text newer than
	 * the stat kept, and the next stat, differing, reads it again */
	if (read_file(path, SBX_HOSTS_KEEP_BYTES, &b) < 0 || b.n != (size_t)st.st_size) {
		free(b.p);	/* it changed meanwhile: read as it is now, not kept */
		return fopen(path, "re");
	}
	hosts_kept.st = st;
	hosts_kept.text = b.p;
	hosts_kept.n = b.n;
	return b.n ? fmemopen(b.p, b.n, "r") : NULL;	/* fmemopen takes no empty buffer */
}

/* name's addresses as getaddrinfo(name, NULL, {AF_UNSPEC, SOCK_STREAM})
 * lists them, when that never blocks: an address literal (inet_pton's
 * strict forms, which every getaddrinfo reads the same) is its own
 * answer; with read_file, a name the hosts file holds. NULL otherwise, or
 * when the file names it in a way left to getaddrinfo. Owned by the
 * caller: free(). */
static struct addrinfo *
hosts_lookup(const char *name, bool read_file)
{
	struct addr a[SBX_HOSTS_MAX_ADDRS];
	struct hosts_answer *h;
	FILE *f;
	int n = addr_parse(name, &a[0]) == 0 ? 1 : 0;

	if (!n && (!read_file || !(f = hosts_open())))
		return NULL;
	if (!n) {
		n = hosts_find(f, name, a, SBX_HOSTS_MAX_ADDRS);
		fclose(f);
	}
	if (n <= 0 || !(h = calloc(1, sizeof(*h))))
		return NULL;
	for (int i = 0; i < n; i++) {
		struct addrinfo *ai = &h->ai[i];

		ai->ai_family = a[i].family;
		ai->ai_socktype = SOCK_STREAM;
		ai->ai_protocol = IPPROTO_TCP;
		ai->ai_addr = (struct sockaddr *)&h->sa[i];
		if (a[i].family == AF_INET) {
			struct sockaddr_in *in = (struct sockaddr_in *)&h->sa[i];

			in->sin_family = AF_INET;
			memcpy(&in->sin_addr, a[i].b, sizeof(in->sin_addr));
			ai->ai_addrlen = sizeof(*in);
		} else {
			h->sa[i].sin6_family = AF_INET6;
			memcpy(&h->sa[i].sin6_addr, a[i].b, sizeof(h->sa[i].sin6_addr));
			ai->ai_addrlen = sizeof(h->sa[i]);
		}
		ai->ai_next = i + 1 < n ? &h->ai[i + 1] : NULL;
	}
	return &h->ai[0];	/* the block's start: free() takes it */
}

/* ---- 7.3 Connections ------------------------------------------------- */

/* buffers. A relay buffer exists only while its direction has bytes in
 * flight: a thousand idle tunnels hold none. Most exchanges are short and
 * get SBX_RELAY_BUF_BYTES from malloc. A tunnel direction that has carried
 * SBX_BULK_AFTER_BYTES is bulk, and its next buffer is SBX_BULK_BUF_BYTES,
 * mapped for it and kept until the tunnel closes (freeing it on every drain
 * would be an mmap, 128 page faults and a munmap per chunk). Each poll()
 * round and recv/send pair can then move eight times the bytes: on the
 * 2-CPU machine of README's Figures a 1 GiB stream went from 0.54 to 0.78
 * of a direct connection. The bulk buffers together stay within
 * SBX_BULK_BUDGET_BYTES, so a storm of bulk tunnels costs at most that much
 * more memory; the tunnels past it relay with small buffers.
 *
 * splice(2) through a pipe was built and measured first: 0.59-0.63 of
 * direct, below the copying relay with 512 KiB buffers. Between two TCP
 * sockets it moves page references, but the receiving socket gets many
 * small fragments, and the client's recv copies them one by one anyway. */
static size_t relay_bulk_bytes;	/* SBX_BULK_BUF_BYTES buffers mapped now (the proxy is one thread) */

/* Spares. musl's malloc hands a freed 64 KiB or 16 KiB block straight back
 * to the kernel, so every short request paid three mmap/munmap pairs and
 * the page faults of fresh pages for its head and relay buffers (strace:
 * 6 of its ~40 calls; perf: munmap alone 6% of the proxy's time). A few
 * freed buffers of each size are kept for the next connection instead:
 * at most SBX_SPARE_BUFS of each, 640 KiB, so idle tunnels still hold
 * nothing of their own. A buffer's old bytes are never read: every reader
 * stops at the length its new owner filled (off..len, head_n). */
#define SBX_SPARE_BUFS	8

struct spares {
	size_t size;
	unsigned n;
	void *v[SBX_SPARE_BUFS];	/* owned */
};

static struct spares relay_spares = { SBX_RELAY_BUF_BYTES, 0, { 0 } };
static struct spares head_spares = { SBX_MAX_HTTP_HEAD_BYTES, 0, { 0 } };

/* A buffer of s->size bytes, or NULL. */
static void *
spare_take(struct spares *s)
{
	return s->n ? s->v[--s->n] : malloc(s->size);
}

/* p (from spare_take, or NULL) is no longer used. */
static void
spare_give(struct spares *s, void *p)
{
	if (p && s->n < SBX_SPARE_BUFS)
		s->v[s->n++] = p;
	else
		free(p);
}

static bool
rbuf_alloc(struct rbuf *r, bool may_bulk)
{
	if (may_bulk && r->moved >= SBX_BULK_AFTER_BYTES &&
	    relay_bulk_bytes + SBX_BULK_BUF_BYTES <= SBX_BULK_BUDGET_BYTES) {
		void *m = mmap(NULL, SBX_BULK_BUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m != MAP_FAILED) {
			r->p = m;
			r->cap = SBX_BULK_BUF_BYTES;
			relay_bulk_bytes += SBX_BULK_BUF_BYTES;
			return true;
		}
	}
	r->p = spare_take(&relay_spares);
	r->cap = r->p ? SBX_RELAY_BUF_BYTES : 0;
	return r->p != NULL;
}

static void
rbuf_free(struct rbuf *r)
{
	if (r->cap == SBX_BULK_BUF_BYTES) {
		munmap(r->p, SBX_BULK_BUF_BYTES);
		relay_bulk_bytes -= SBX_BULK_BUF_BYTES;
	} else {
		spare_give(&relay_spares, r->p);
	}
	r->p = NULL;
	r->off = r->len = r->cap = 0;
}

/* The direction has sent all it held: a small buffer goes back (idle
 * tunnels cost nothing), a bulk one stays for the next chunk. */
static void
rbuf_drained(struct rbuf *r)
{
	if (r->cap == SBX_BULK_BUF_BYTES)
		r->off = r->len = 0;
	else
		rbuf_free(r);
}

/* Queue bytes to send; returns false if the buffer cannot hold them. */
static bool
rbuf_put(struct rbuf *r, const void *s, size_t n)
{
	if (!r->p && !rbuf_alloc(r, false))
		return false;
	if (r->off && r->off == r->len)
		r->off = r->len = 0;
	if (r->cap - r->len < n) {
		memmove(r->p, r->p + r->off, r->len - r->off);
		r->len -= r->off;
		r->off = 0;
	}
	if (r->cap - r->len < n)
		return false;
	memcpy(r->p + r->len, s, n);
	r->len += n;
	return true;
}

static void
px_close(struct proxy *px, struct conn *c)
{
	if (c->cfd >= 0)
		close(c->cfd);
	if (c->ufd >= 0)
		close(c->ufd);
	rbuf_free(&c->c2u);
	rbuf_free(&c->u2c);
	c->c2u.moved = c->u2c.moved = 0;
	spare_give(&head_spares, c->head);
	free(c->fwd);
	free(c->phead);
	if (c->addrs && c->addrs_mine)
		free(c->addrs);
	else if (c->addrs)
		freeaddrinfo(c->addrs);
	{
		unsigned gen = c->gen + 1;

		memset(c, 0, sizeof(*c));
		c->gen = gen;	/* a late resolver answer for the old connection is dropped */
	}
	c->cfd = c->ufd = -1;
	c->st = CS_FREE;
	/* slots are taken lowest first, so the end shrinks back as the
	 * highest ones close: one bulk tunnel is not a 4096-slot scan per poll */
	while (px->conns_end > 0 && px->conns[px->conns_end - 1].st == CS_FREE)
		px->conns_end--;
}

/* Answer the client and close once the answer is sent. */
static void
px_reply_close(struct conn *c, const void *s, size_t n)
{
	rbuf_put(&c->u2c, s, n);
	c->st = CS_REPLY_CLOSE;
	c->deadline_ms = now_ms() + SBX_CONNECT_MS;
}

static void
px_socks_reply(struct conn *c, int code, bool close_after)
{
	static const unsigned char tail[] = { 0x00, 0x01, 0, 0, 0, 0, 0, 0 };
	unsigned char r[10];

	if (c->proto == PR_SOCKS4) {
		unsigned char r4[8] = { 0x00, (unsigned char)code, 0, 0, 0, 0, 0, 0 };

		if (close_after)
			px_reply_close(c, r4, 8);
		else
			rbuf_put(&c->u2c, r4, 8);
		return;
	}
	r[0] = 0x05;
	r[1] = (unsigned char)code;
	memcpy(r + 2, tail, 8);
	if (close_after)
		px_reply_close(c, r, 10);
	else
		rbuf_put(&c->u2c, r, 10);
}

/* Answer a refused connection in the words of its protocol (srt 5.3,
 * 5.4); px_refuse records it first. */
static void
px_reply_refusal(struct conn *c, const char *reason, bool policy)
{
	struct buf b = { 0 };
	char phrase[200];
	size_t i;

	if (policy && c->port == 22 && c->proto != PR_HTTP_FORWARD) {
		/* ssh through the proxy: say why, in SSH */
		if (c->proto == PR_HTTP_CONNECT)
			buf_puts(&b, "HTTP/1.1 200 Connection Established\r\n\r\n");
		else if (c->proto != PR_CAPTURE)	/* a captured ssh hears the refusal straight away */
			px_socks_reply(c, c->proto == PR_SOCKS4 ? SOCKS4_OK : SOCKS5_OK, false);
		ssh_refusal(&b, reason);
		px_reply_close(c, b.p, b.n);
		free(b.p);
		return;
	}
	switch (c->proto) {
	case PR_HOST_PORT:
	case PR_EXPOSE:
	case PR_CAPTURE:
	case PR_DNS:
		break;	/* no protocol to answer in: the connection just closes */
	case PR_HTTP_CONNECT:
		/* the status phrase is the reason, as srt; no CR/LF can get in it.
		 * X-Proxy-Error says the policy refused: an allowed host whose
		 * upstream failed (refused, unresolvable, a parent's refusal)
		 * is a plain 502, so a client or a model reading it never takes
		 * a network fault for a rule to work around */
		str_copy(phrase, reason, sizeof(phrase));
		for (i = 0; phrase[i]; i++)
			if (is_control((unsigned char)phrase[i]))
				phrase[i] = ' ';
		buf_printf(&b, "HTTP/1.1 %s %s\r\n%sConnection: close\r\nContent-Length: 0\r\n\r\n", policy ? "403" : "502",
		    phrase, policy ? "Content-Type: text/plain\r\nX-Proxy-Error: blocked-by-allowlist\r\n" : "");
		break;
	case PR_HTTP_FORWARD:
		if (policy)
			buf_puts(&b, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-allowlist\r\n"
			    "Connection: close\r\nContent-Length: 40\r\n\r\nConnection blocked by network allowlist\n");
		else
			buf_puts(&b, "HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
		break;
	case PR_SOCKS5:
		px_socks_reply(c, policy ? SOCKS5_NOT_ALLOWED : SOCKS5_HOST_UNREACHABLE, true);
		return;
	case PR_SOCKS4:
		px_socks_reply(c, SOCKS4_REFUSED, true);
		return;
	}
	px_reply_close(c, b.p, b.n);
	free(b.p);
}

static void
px_http_error(struct conn *c, int code)
{
	const char *r = code == 431 ? "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
	    : code == 503 ? "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
	    : code == 504 ? "HTTP/1.1 504 Gateway Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
	    : "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";

	px_reply_close(c, r, strlen(r));
}

/* Refuse a connection: recorded, then answered (px_reply_refusal). */
static void
px_refuse(struct conn *c, const char *reason, bool policy)
{
	px_record(c, policy ? PXV_DENY : PXV_FAIL, reason);
	px_reply_refusal(c, reason, policy);
}

/* A client without the run's credential (macOS): HTTP gets 407, as srt
 * (5.3), SOCKS its refusal; recorded without the host it named (px_op). */
static void
px_refuse_credential(struct conn *c, const char *what, const char *reason)
{
	static const char r[] = "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"sbx\"\r\n"
	    "Connection: close\r\nContent-Length: 0\r\n\r\n";

	px_record_as(c, PXV_DENY, PXO_CREDENTIAL, what, 0, reason);
	if (c->proto == PR_HTTP_CONNECT || c->proto == PR_HTTP_FORWARD)
		px_reply_close(c, r, sizeof(r) - 1);
	else
		px_reply_refusal(c, reason, true);	/* 0x02, or in SSH for port 22 */
}

/* refuse-opaque-tunnels, SOCKS: refused before the policy is asked, as
 * srt's ruleset validator does, with a general failure (its reply, not a
 * claim that the policy refused this host). */
static void
px_refuse_socks_tunnel(struct conn *c)
{
	px_record_as(c, PXV_DENY, PXO_SOCKS_TUNNEL, c->host, c->port, "refuseOpaqueTunnels");
	px_socks_reply(c, c->proto == PR_SOCKS4 ? SOCKS4_REFUSED : SOCKS5_FAILURE, true);
}

/* refuse-opaque-tunnels, CONNECT (after the allow): srt's rawDenied, byte
 * for byte, recorded as "deny http-request CONNECT host:port (reason)". */
static void
px_refuse_connect_tunnel(struct conn *c, const char *canon)
{
	static const char reason[] = "this proxy does not tunnel CONNECTs it cannot inspect";
	char target[SBX_MAX_HOST_BYTES + 32];
	struct buf b = { 0 };

	snprintf(target, sizeof(target), strchr(canon, ':') ? "CONNECT [%s]:%d" : "CONNECT %s:%d", canon, c->port);
	px_record_as(c, PXV_DENY, PXO_HTTP_REQUEST, target, 0, reason);
	buf_printf(&b, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n"
	    "\r\n%s", reason);
	px_reply_close(c, b.p, b.n);
	free(b.p);
}

/* require-host-match (after the allow): 421 with the reason, as srt's
 * respondDenied; recorded as "deny http-request GET http://host/path (why)",
 * the query cut to "?…" as srt's redactUrlForViolation does. */
static void
px_refuse_misdirected(struct conn *c, const char *canon)
{
	const char *sp = memchr(c->fwd, ' ', c->fwd_n), *path = sp + 1;
	size_t pn = strcspn(path, " ?#");
	struct buf t = { 0 }, b = { 0 };

	buf_putn(&t, c->fwd, (size_t)(sp - c->fwd));	/* the method */
	buf_printf(&t, strchr(canon, ':') ? " http://[%s]" : " http://%s", canon);
	if (c->port != 80)	/* the scheme's own port is elided, as srt */
		buf_printf(&t, ":%d", c->port);
	buf_putn(&t, path, pn);
	if (path[pn] == '?' || path[pn] == '#')
		buf_puts(&t, "?\u2026");
	buf_putc(&t, '\0');
	px_record_as(c, PXV_DENY, PXO_HTTP_REQUEST, t.p, 0, c->misdirected);
	buf_printf(&b, "HTTP/1.1 421 Misdirected Request\r\nContent-Type: text/plain\r\n"
	    "X-Proxy-Error: blocked-by-sandbox-runtime\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n%s\n",
	    strlen(c->misdirected) + 1, c->misdirected);
	px_reply_close(c, b.p, b.n);
	free(t.p);
	free(b.p);
}

/* The MITM route (4.7): spoken to as a parent is (CONNECT, or a plain
 * request in absolute form), but with no credential and no address: sbx
 * dials its socket, which this process may not (7.4). */
static const struct parent_proxy px_mitm_hop;

/* The hop a tunnel or a request goes through, for messages. */
static const char *
px_hop_name(const struct conn *c)
{
	return c->mitm ? "the MITM proxy" : "the parent proxy";
}

/* Ask sbx for a connection to the MITM proxy's socket (6c); the answer
 * comes on the record pair (px_mitm_answer). Never waits: a pair too full
 * to take the ask fails the connection at once. */
static void
px_mitm_ask(struct conn *c, unsigned slot)
{
	struct mitm_msg m = { 'M', slot, c->gen, 0 };
	unsigned char b[SBX_MITM_ANSWER_BYTES];
	size_t n = mitm_encode(&m, b);

	c->st = CS_MITM_WAIT;
	c->deadline_ms = now_ms() + SBX_CONNECT_MS;
	px_records_flush();	/* sbx answers the ask at once: the waiting records go first */
	if (px_report_fd < 0 || send(px_report_fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)n)
		px_refuse(c, "sbx did not take the ask for the MITM proxy's socket", false);
}

/* A parsed request: decide, then resolve (or dial a literal at once). */
static void
px_decide(struct proxy *px, struct conn *c, unsigned slot)
{
	struct net_verdict v = net_decide(px->p, c->host, c->port);
	char canon[SBX_MAX_HOST_BYTES + 64];
	struct addrinfo *res;
	const char *name;

	if (!v.allow) {
		px_refuse(c, v.reason, true);
		return;
	}
	match_canonical_host(c->host, canon, sizeof(canon));
	if (c->proto == PR_HTTP_CONNECT && px->p->refuse_opaque_tunnels) {
		px_refuse_connect_tunnel(c, canon);
		return;
	}
	if (c->proto == PR_CAPTURE && px->p->refuse_opaque_tunnels) {	/* as opaque as a CONNECT */
		px_refuse(c, "refuseOpaqueTunnels: only plain HTTP through the proxy goes out", true);
		return;
	}
	if (c->misdirected) {
		px_refuse_misdirected(c, canon);
		return;
	}
	/* the route: the MITM proxy or the parent resolves the name (and is
	 * exempt from the guard, srt: users run cntlm on 127.0.0.1), or we do */
	c->mitm = mitm_routes(px->p, canon);
	c->via = c->mitm ? &px_mitm_hop : parent_for(px->p->route, canon, c->proto != PR_HTTP_FORWARD);
	if (c->via && c->proto == PR_HTTP_FORWARD) {
		size_t n;
		char *abs = http_absolute_form(c->fwd, c->fwd_n, canon, c->port, c->via->auth, &n);

		free(c->fwd);
		c->fwd = abs;
		c->fwd_n = n;
	}
	if (c->mitm) {
		px_mitm_ask(c, slot);
		return;
	}
	c->st = CS_RESOLVING;
	c->deadline_ms = now_ms() + SBX_CONNECT_MS;
	name = c->via ? c->via->host : canon;
	if ((res = hosts_lookup(name, px->hosts_first))) {	/* no thread needed (7.2) */
		c->addrs_mine = true;
		px_resolved(px, c, res, 0);
		return;
	}
	dns_submit(slot, c->gen, name);
}

/* The resolver answered: walk its addresses (px_connect_next). */
static void
px_resolved(struct proxy *px, struct conn *c, struct addrinfo *res, int err)
{
	if ((err || !res) && c->via) {
		char why[SBX_MAX_HOST_BYTES + 64];	/* no arena here: it is sealed (2.1) */

		if (res)
			freeaddrinfo(res);
		snprintf(why, sizeof(why), "the parent proxy %s does not resolve", c->via->host);
		px_refuse(c, why, false);
		return;
	}
	if (err || !res) {
		if (res)
			freeaddrinfo(res);
		if (c->proto == PR_SOCKS5) {
			px_record(c, PXV_FAIL, "does not resolve");
			px_socks_reply(c, SOCKS5_HOST_UNREACHABLE, true);
		} else {
			px_refuse(c, "the name does not resolve", false);
		}
		return;
	}
	c->addrs = c->next_addr = res;
	c->refused[0] = '\0';
	c->dialled = false;
	px_connect_next(px, c);
}

/* A connection just dialled whose socket is connected already goes on at
 * once, not a poll() round over every descriptor later: over a veth or
 * loopback the SYN-ACK is handled as connect(2) releases the socket, so
 * the call returns EINPROGRESS for a connection that is up. One poll() of
 * this socket, without waiting, says. */
static void
px_connected_yet(struct proxy *px, struct conn *c)
{
	struct pollfd p = { c->ufd, POLLOUT, 0 };

	if (poll(&p, 1, 0) == 1)
		px_on_events(px, c, (unsigned)(c - px->conns), 0, p.revents);
}

/* Dial the next address the guard allows (4.6), with no second lookup: a
 * rebinding answer cannot aim an allowed name at 127.0.0.1. When none is
 * left: refused by the guard, or unreachable. */
static void
px_connect_next(struct proxy *px, struct conn *c)
{
	char canon[SBX_MAX_HOST_BYTES + 64];

	match_canonical_host(c->host, canon, sizeof(canon));
	while (c->next_addr) {
		struct addrinfo *ai = c->next_addr;
		struct addr a;
		const char *cls;
		int fd;

		c->next_addr = ai->ai_next;
		if (!addr_from_sockaddr(ai->ai_addr, &a))
			continue;
		if (ai->ai_family == AF_INET)
			((struct sockaddr_in *)ai->ai_addr)->sin_port = htons((uint16_t)(c->via ? c->via->port : c->port));
		else
			((struct sockaddr_in6 *)ai->ai_addr)->sin6_port = htons((uint16_t)(c->via ? c->via->port : c->port));
		/* the parent's own address is exempt (srt): the person named it */
		if (!c->via && (cls = net_judge_address(px->p, canon, c->port, &a, &px->own))) {
			if (!strstr(c->refused, cls))
				snprintf(c->refused + strlen(c->refused), sizeof(c->refused) - strlen(c->refused), "%s%s",
				    c->refused[0] ? " / " : "", cls);
			continue;
		}
		c->dialled = true;
		fd = px_socket_cloexec_nonblock(ai->ai_family);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
			close(fd);
			continue;
		}
		c->ufd = fd;
		c->st = CS_CONNECTING;
		c->deadline_ms = now_ms() + SBX_CONNECT_MS;
		px_connected_yet(px, c);
		return;
	}
	if (c->via) {
		char why[SBX_MAX_HOST_BYTES + 64];

		snprintf(why, sizeof(why), "the parent proxy %s:%d refused the connection or is unreachable",
		    c->via->host, c->via->port);
		px_refuse(c, why, false);
	} else if (!c->dialled) {
		char why[260];

		snprintf(why, sizeof(why), "resolved to %s", c->refused);
		px_refuse(c, why, true);
	} else if (c->proto == PR_SOCKS5) {
		px_record(c, PXV_FAIL, "connection refused or unreachable");
		px_socks_reply(c, SOCKS5_REFUSED, true);
	} else {
		px_refuse(c, "the upstream refused the connection", false);
	}
}

/* The way to the target is open (a direct connection, or the parent's
 * tunnel): answer the client and start relaying. */
static void
px_tunnel_ready(struct conn *c)
{
	static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
	int one = 1;

	px_record(c, PXV_ALLOW, NULL);
	setsockopt(c->ufd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	switch (c->proto) {
	case PR_HTTP_CONNECT:
		rbuf_put(&c->u2c, ok, sizeof(ok) - 1);
		break;
	case PR_HTTP_FORWARD:
		rbuf_put(&c->c2u, c->fwd, c->fwd_n);
		c->resp_head = true;
		break;
	case PR_SOCKS5:
		px_socks_reply(c, SOCKS5_OK, false);
		break;
	case PR_SOCKS4:
		px_socks_reply(c, SOCKS4_OK, false);
		break;
	case PR_HOST_PORT:
	case PR_EXPOSE:
	case PR_CAPTURE:
	case PR_DNS:
		break;	/* nothing to say: bytes flow at once */
	}
	if (c->proto == PR_HTTP_FORWARD && c->body_left >= 0 && (int64_t)c->head_n > c->body_left)
		c->head_n = (size_t)c->body_left;	/* what follows the body is not sent */
	if (c->proto == PR_HTTP_FORWARD && c->body_left >= 0) {
		c->body_left -= (int64_t)c->head_n;
		c->c_done = c->body_left == 0;
	}
	if (c->head_n)	/* early data after the request: the client's first bytes */
		rbuf_put(&c->c2u, c->head, c->head_n);
	spare_give(&head_spares, c->head);
	c->head = NULL;
	c->head_n = 0;
	c->st = CS_RELAY;
	c->deadline_ms = 0;	/* idle tunnels are kept (ssh sessions), with keepalive */
}

/* Connected upstream. Through a parent, a tunnel is asked for first
 * (CONNECT, its answer read in CS_PARENT_REPLY); a plain request goes to
 * the parent as it is, in absolute form (px_decide made it so). */
static void
px_established(struct conn *c)
{
	struct buf b = { 0 };

	if (!c->via || c->proto == PR_HTTP_FORWARD) {
		px_tunnel_ready(c);
		return;
	}
	{
		char canon[SBX_MAX_HOST_BYTES + 64];

		/* the spelling the policy and the route judged (srt: the authority
		 * on the wire is the canonical host), not the client's FAR.Test. */
		match_canonical_host(c->host, canon, sizeof(canon));
		parent_connect_request(&b, canon, c->port, c->via->auth);
	}
	rbuf_put(&c->c2u, b.p, b.n);
	free(b.p);
	c->st = CS_PARENT_REPLY;
	c->deadline_ms = now_ms() + SBX_PARENT_MS;
}

/* The parent's answer to CONNECT: a 2xx opens the tunnel (what came after
 * its head is the target's first bytes); anything else is refused, with
 * its status line as the reason. */
static void
px_parent_reply(struct proxy *px, struct conn *c, short urev)
{
	char line[160], why[220];
	ssize_t r;
	int rc;

	if ((urev & POLLOUT) && !relay_out(c->ufd, &c->c2u)) {
		px_close(px, c);
		return;
	}
	if (!(urev & (POLLIN | POLLHUP | POLLERR)))
		return;
	if (!c->phead && !(c->phead = malloc(SBX_MAX_HTTP_HEAD_BYTES))) {
		px_close(px, c);
		return;
	}
	r = recv(c->ufd, c->phead + c->phead_n, SBX_MAX_HTTP_HEAD_BYTES - c->phead_n, 0);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r > 0)
		c->phead_n += (size_t)r;
	rc = parent_reply(c->phead, c->phead_n, line, sizeof(line));
	if (rc == 0 && r > 0)
		return;
	if (rc > 0) {
		char *head = c->phead;

		c->phead = NULL;
		px_tunnel_ready(c);	/* the client's answer first (200, SOCKS success), */
		rbuf_put(&c->u2c, head + rc, c->phead_n - (size_t)rc);	/* then the target's first bytes */
		free(head);
		c->phead_n = 0;
		return;
	}
	snprintf(why, sizeof(why), "%s %s", px_hop_name(c), rc == -1 ? "refused the tunnel: " :
	    rc == -2 ? "answered CONNECT with a head over 16 KiB" : "closed the connection before it answered CONNECT");
	if (rc == -1)
		str_copy(why + strlen(why), line, sizeof(why) - strlen(why));
	close(c->ufd);
	c->ufd = -1;
	px_refuse(c, why, false);
}

/* Consume n bytes of the request head; what follows is early data. */
static void
head_consume(struct conn *c, size_t n)
{
	memmove(c->head, c->head + n, c->head_n - n);
	c->head_n -= n;
}

/* Read request bytes and advance the handshake states. */
static void
px_on_handshake(struct proxy *px, struct conn *c, unsigned slot)
{
	ssize_t r;
	int rc, method;

	if (!c->head && !(c->head = spare_take(&head_spares))) {
		px_close(px, c);
		return;
	}
	r = recv(c->cfd, c->head + c->head_n, SBX_MAX_HTTP_HEAD_BYTES - c->head_n, 0);
	if (r <= 0) {
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		px_close(px, c);
		return;
	}
	c->head_n += (size_t)r;
	for (;;) {
		const unsigned char *b = (const unsigned char *)c->head;

		switch (c->st) {
		case CS_PEEK:
			c->st = b[0] == 0x05 ? CS_SOCKS5_GREETING : b[0] == 0x04 ? CS_SOCKS4_REQUEST : CS_HTTP_HEAD;
			continue;
		case CS_HTTP_HEAD: {
			struct http_req req;

			rc = http_parse_head(c->head, c->head_n, &req);
			if (rc == 0)
				return;
			c->proto = req.connect ? PR_HTTP_CONNECT : PR_HTTP_FORWARD;
			if (rc < 0) {
				px_http_error(c, -rc);
				return;
			}
			str_copy(c->host, req.host, sizeof(c->host));
			c->port = req.port;
			if (px->token && !(req.auth && proxy_basic_ok(req.auth, req.auth_n, px->token))) {
				px_refuse_credential(c, req.auth ? "wrong" : "missing", req.auth ?
				    "a client of the proxy gave a wrong credential: not this run's" :
				    "a client of the proxy gave no credential: a program that ignores the one in the proxy "
				    "variables' URLs, or another process on this machine");
				return;
			}
			if (!req.connect && px->p->require_host_match) {	/* judged after the allow, as srt */
				char canon[SBX_MAX_HOST_BYTES + 64];

				match_canonical_host(req.host, canon, sizeof(canon));
				c->misdirected = http_host_mismatch(&req, canon, req.port);
			}
			if (!req.connect) {
				c->fwd = http_rewrite(c->head, &req, &c->fwd_n);
				/* one request a connection: its body and no more, so a
				 * request pipelined after it is neither sent undecided
				 * nor with a Proxy-Authorization (a Transfer-Encoding'd
				 * body runs to the client's end, as before) */
				c->body_left = req.chunked ? -1 : req.content_length >= 0 ? req.content_length : 0;
			}
			head_consume(c, (size_t)rc);
			px_decide(px, c, slot);
			return;
		}
		case CS_SOCKS5_GREETING:
			c->proto = PR_SOCKS5;
			rc = socks5_parse_greeting(b, c->head_n, px->token != NULL, &method);
			if (rc == 0)
				return;
			{
				unsigned char reply[2] = { 0x05, (unsigned char)method };

				if (method == 0xff) {
					px_reply_close(c, reply, 2);
					return;
				}
				rbuf_put(&c->u2c, reply, 2);
			}
			head_consume(c, (size_t)rc);
			if (px->token && method == 0x00)	/* refused with the reason once the request names a host */
				c->unauthorised = SBX_SOCKS_NO_AUTH_REASON;
			c->st = method == 0x02 ? CS_SOCKS5_AUTH : CS_SOCKS5_REQUEST;
			if (!c->head_n)
				return;
			continue;
		case CS_SOCKS5_AUTH: {
			const unsigned char *user, *pass;
			size_t ul, pl;

			rc = socks5_parse_auth(b, c->head_n, &user, &ul, &pass, &pl);
			if (rc == 0)
				return;
			if (rc < 0) {
				px_close(px, c);
				return;
			}
			/* a wrong credential is answered as a right one would be, and
			 * refused with the reason once the request names a host: the
			 * refusal then says where the command meant to go */
			if (px->token && !proxy_credential_ok(user, ul, pass, pl, px->token))
				c->unauthorised = "a client of the proxy gave a wrong credential: not this run's";
			rbuf_put(&c->u2c, "\x01\x00", 2);
			head_consume(c, (size_t)rc);
			c->st = CS_SOCKS5_REQUEST;
			if (!c->head_n)
				return;
			continue;
		}
		case CS_SOCKS5_REQUEST:
			rc = socks5_parse_request(b, c->head_n, c->host, sizeof(c->host), &c->port);
			if (rc == 0)
				return;
			if (rc < 0) {
				px_socks_reply(c, -rc, true);
				return;
			}
			head_consume(c, (size_t)rc);
			if (c->unauthorised) {
				px_refuse_credential(c, strcmp(c->unauthorised, SBX_SOCKS_NO_AUTH_REASON) == 0 ? "missing" :
				    "wrong", c->unauthorised);
				return;
			}
			if (px->p->refuse_opaque_tunnels) {
				px_refuse_socks_tunnel(c);
				return;
			}
			px_decide(px, c, slot);
			return;
		case CS_SOCKS4_REQUEST:
			c->proto = PR_SOCKS4;
			rc = socks4_parse(b, c->head_n, c->host, sizeof(c->host), &c->port);
			if (rc == 0)
				return;
			if (rc < 0) {
				px_socks_reply(c, SOCKS4_REFUSED, true);
				return;
			}
			head_consume(c, (size_t)rc);
			if (px->token) {	/* SOCKS4 has a user id but no password */
				px_refuse_credential(c, "missing", "SOCKS4 cannot carry the proxy credential: use SOCKS5 or HTTP");
				return;
			}
			if (px->p->refuse_opaque_tunnels) {
				px_refuse_socks_tunnel(c);
				return;
			}
			px_decide(px, c, slot);
			return;
		default:
			return;
		}
	}
}

/* Move bytes from fd into r; returns false at EOF or error. */
static bool
relay_in(int fd, struct rbuf *r, bool may_bulk)
{
	ssize_t n;

	if (!r->p && !rbuf_alloc(r, may_bulk))
		return false;
	if (r->off == r->len) {
		r->off = r->len = 0;
	} else if (r->len == r->cap) {
		/* full at the end but partly sent: move the rest down, or the
		 * recv below would ask for 0 bytes and read as an EOF */
		memmove(r->p, r->p + r->off, r->len - r->off);
		r->len -= r->off;
		r->off = 0;
	}
	n = recv(fd, r->p + r->len, r->cap - r->len, 0);
	if (n > 0) {
		r->len += (size_t)n;
		r->moved += (uint64_t)n;
		return true;
	}
	return n < 0 && (errno == EAGAIN || errno == EINTR);
}

/* Send what r holds to fd; returns false on error. */
static bool
relay_out(int fd, struct rbuf *r)
{
	ssize_t n;

	if (r->off == r->len)
		return true;
	n = send(fd, r->p + r->off, r->len - r->off, MSG_NOSIGNAL);
	if (n > 0) {
		r->off += (size_t)n;
		if (r->off == r->len)
			rbuf_drained(r);
		return true;
	}
	return n < 0 && (errno == EAGAIN || errno == EINTR);
}

/* A bulk direction whose chunk left whole: the socket most likely holds
 * more already, so read and send again at once, up to SBX_BULK_ROUNDS
 * times, instead of a poll() over every connection per chunk (a few
 * percent on one stream here; 16 rounds did no better). Bounded (2 MiB an
 * event), so one fast tunnel cannot starve the others. Sets *eof at EOF;
 * false when sending failed (the caller closes the connection). */
static bool
relay_pump(int from, int to, struct rbuf *r, bool *eof)
{
	for (int round = 0; round < SBX_BULK_ROUNDS && !*eof && r->off == r->len; round++) {
		if (!relay_in(from, r, true)) {
			*eof = true;
			break;
		}
		if (r->off == r->len)
			break;			/* nothing more queued: back to poll() */
		if (!relay_out(to, r))
			return false;
	}
	return true;
}

static bool
rbuf_room(const struct rbuf *r)
{
	return !r->p || r->len < r->cap || r->off > 0;
}

static bool
rbuf_pending(const struct rbuf *r)
{
	return r->p && r->off < r->len;
}

/* HTTP forward: hold the upstream's bytes until its response head is whole,
 * then rewrite it (http_rewrite_response). A head that does not fit the
 * buffer, or an upstream that ends first, is passed on as it is. */
static void
px_fix_response(const struct proxy *px, struct conn *c)
{
	size_t n, i, out_n;
	const char *p;
	char *out;

	if (!c->resp_head)
		return;
	if (!c->u2c.p) {
		if (c->u_eof)
			c->resp_head = false;	/* nothing came: let the close through */
		return;
	}
	for (;;) {
		p = c->u2c.p + c->u2c.off + c->resp_ok;
		n = c->u2c.len - c->u2c.off - c->resp_ok;
		for (i = 3; i < n; i++)
			if (p[i] == '\n' && p[i - 1] == '\r' && p[i - 2] == '\n' && p[i - 3] == '\r')
				break;
		if (i >= n) {
			if (!(c->u_eof || c->u2c.len == c->u2c.cap))
				return;
			c->resp_head = false;	/* not HTTP as we know it: relay it untouched, */
			if (px->p->strip_response_headers.n) {	/* unless headers must go: 502, as srt */
				static const char bad[] = "HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";

				memmove(c->u2c.p, c->u2c.p + c->u2c.off, c->resp_ok);	/* the interim heads stay */
				c->u2c.off = 0;
				c->u2c.len = c->resp_ok;
				if (c->u2c.len + sizeof(bad) - 1 <= c->u2c.cap) {
					memcpy(c->u2c.p + c->u2c.len, bad, sizeof(bad) - 1);
					c->u2c.len += sizeof(bad) - 1;
				}
				c->u_eof = true;	/* nothing more of it is read */
				px_record(c, PXV_FAIL, "the upstream's answer is not an HTTP head whose headers can be stripped");
			}
			return;
		}
		/* an interim 1xx head (100 Continue) goes at once, untouched: the
		 * client may be waiting for it before it sends its body */
		if (n > 12 && memcmp(p, "HTTP/1.", 7) == 0 && p[9] == '1') {
			c->resp_ok += i + 1;
			continue;
		}
		break;
	}
	out = http_rewrite_response(p, n, i + 1, &px->p->strip_response_headers, &out_n);
	c->resp_head = false;
	if (c->resp_ok + out_n <= c->u2c.cap) {
		memmove(c->u2c.p, c->u2c.p + c->u2c.off, c->resp_ok);
		memcpy(c->u2c.p + c->resp_ok, out, out_n);
		c->u2c.off = 0;
		c->u2c.len = c->resp_ok + out_n;
	}
	c->resp_ok = 0;
	free(out);
}

/* Send to the client what may go: all of u2c, or while the final response
 * head is held, only the interim heads before it (resp_ok counts from off,
 * which compaction keeps at the front, so it stays right). */
static bool
px_send_client(struct conn *c)
{
	ssize_t k;

	if (!c->resp_head)
		return relay_out(c->cfd, &c->u2c);
	if (!c->resp_ok)
		return true;
	k = send(c->cfd, c->u2c.p + c->u2c.off, c->resp_ok, MSG_NOSIGNAL);
	if (k > 0) {
		c->u2c.off += (size_t)k;
		c->resp_ok -= (size_t)k;
		return true;
	}
	return k < 0 && (errno == EAGAIN || errno == EINTR);
}

/* Interest follows buffers, here and only here: read a side while its
 * outgoing buffer has room, write while there are bytes to send. */
static void
px_interest(const struct conn *c, short *cev, short *uev)
{
	*cev = *uev = 0;
	switch (c->st) {
	case CS_PEEK: case CS_HTTP_HEAD: case CS_SOCKS5_GREETING: case CS_SOCKS5_AUTH:
	case CS_SOCKS5_REQUEST: case CS_SOCKS4_REQUEST:
		*cev = POLLIN | (rbuf_pending(&c->u2c) ? POLLOUT : 0);
		break;
	case CS_RESOLVING:
	case CS_MITM_WAIT:
		*cev = rbuf_pending(&c->u2c) ? POLLOUT : 0;
		break;
	case CS_INSIDE_WAIT:
		break;	/* the client's first bytes wait in its socket */
	case CS_CONNECTING:
		*uev = POLLOUT;
		*cev = rbuf_pending(&c->u2c) ? POLLOUT : 0;
		break;
	case CS_PARENT_REPLY:	/* the client's first bytes wait until the tunnel is open */
		*uev = POLLIN | (rbuf_pending(&c->c2u) ? POLLOUT : 0);
		*cev = rbuf_pending(&c->u2c) ? POLLOUT : 0;
		break;
	case CS_RELAY:
		if (!c->c_eof && !c->c_done && rbuf_room(&c->c2u))
			*cev |= POLLIN;
		if (rbuf_pending(&c->u2c) && (!c->resp_head || c->resp_ok))
			*cev |= POLLOUT;
		if (!c->u_eof && rbuf_room(&c->u2c))
			*uev |= POLLIN | POLLRDHUP;	/* px_on_events: the answer and its end, at once */
		if (rbuf_pending(&c->c2u))
			*uev |= POLLOUT;
		break;
	case CS_REPLY_CLOSE:
		*cev = POLLOUT;
		break;
	case CS_FREE:
		break;
	}
}

/* An allow-host-port connection: no request to parse or decide, the
 * policy named the port; dial this machine's 127.0.0.1:port. */
static void
px_host_port(struct conn *c, int port)
{
	struct sockaddr_in sa;
	int fd = px_socket_cloexec_nonblock(AF_INET);

	c->proto = PR_HOST_PORT;
	snprintf(c->host, sizeof(c->host), "127.0.0.1");
	c->port = port;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS)) {
		if (fd >= 0)
			close(fd);
		c->st = CS_REPLY_CLOSE;	/* nothing queued: closes at once */
		return;
	}
	c->ufd = fd;
	c->st = CS_CONNECTING;
	c->dialled = true;
	c->deadline_ms = now_ms() + SBX_CONNECT_MS;
}

/* An expose-port connection from this machine: ask the inner helper for a
 * socket connecting to the command's 127.0.0.1:port (inner_expose_connect);
 * the answer comes back on expose_fd (px_expose_answer). */
static void
px_expose_request(struct proxy *px, struct conn *c, unsigned slot, int port)
{
	struct expose_msg req = { slot, c->gen, (uint32_t)port };
	unsigned char b[SBX_EXPOSE_MSG_BYTES];

	expose_encode(&req, b);
	c->proto = PR_EXPOSE;
	snprintf(c->host, sizeof(c->host), "127.0.0.1");
	c->port = port;
	c->st = CS_INSIDE_WAIT;
	c->deadline_ms = now_ms() + SBX_CONNECT_MS;
	if (px->expose_fd < 0 || send(px->expose_fd, b, sizeof(b), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(b))
		c->st = CS_REPLY_CLOSE;	/* nothing queued: closes at once */
}

/* SECURITY: on macOS every local process can reach the proxy, and one that
 * opens thousands of connections and says nothing would hold every slot
 * until its handshake deadline: the command's next connection would get
 * a 503. At most SBX_MAX_HANDSHAKES clients may be still to send their
 * request; past that, the one waiting longest is closed for the new one
 * (a real client sends its request at once). */
static void
px_make_room_for_handshake(struct proxy *px)
{
	unsigned n = 0, oldest = 0;
	int64_t oldest_deadline = INT64_MAX;

	for (unsigned s = 0; s < px->conns_end; s++) {
		const struct conn *c = &px->conns[s];

		if (c->st == CS_FREE || c->st >= CS_RESOLVING)	/* ORDER: enum conn_state */
			continue;
		n++;
		if (c->deadline_ms < oldest_deadline) {
			oldest_deadline = c->deadline_ms;
			oldest = s;
		}
	}
	if (n >= SBX_MAX_HANDSHAKES)
		px_close(px, &px->conns[oldest]);
}

/* The inner helper's answer: a socket inside, or the errno it got. */
static void
px_expose_answer(struct proxy *px)
{
	unsigned char b[SBX_EXPOSE_MSG_BYTES];
	struct expose_msg ans;
	int fd = -1, nfd = 0;
	ssize_t n;
	struct conn *c;

	while ((n = recv_fds(px->expose_fd, b, sizeof(b), &fd, 1, &nfd, MSG_DONTWAIT)) >= 0) {
		/* the connection it is for, if still waiting (an answer for one
		 * that went, or one not understood, is dropped) */
		c = expose_decode(b, n, &ans) == 0 && ans.slot < SBX_MAX_CONNS && px->conns[ans.slot].gen == ans.gen &&
		    px->conns[ans.slot].st == CS_INSIDE_WAIT ? &px->conns[ans.slot] : NULL;
		if (!c || ans.value != 0 || nfd != 1) {
			if (nfd == 1)
				close(fd);
			if (c)
				px_close(px, c);	/* it could not connect inside */
			continue;
		}
		c->ufd = fd;
		c->st = CS_CONNECTING;
		c->dialled = true;
	}
	if (errno != EAGAIN && errno != EINTR) {
		close(px->expose_fd);	/* the helper is gone: no new exposes */
		px->expose_fd = -1;
	}
}

/* sbx's answer to px_mitm_ask (6c): a connection to the MITM proxy's
 * socket, spoken to as a parent from here on (px_established), or the
 * errno sbx got, answered as an unreachable upstream (502, SOCKS host
 * unreachable) and recorded with it. fd: the socket that came, or -1;
 * taken here. An answer for a connection that has gone is dropped. */
static void
px_mitm_answer(struct proxy *px, const unsigned char *b, size_t n, int fd)
{
	struct mitm_msg ans;
	struct conn *c;
	char why[SBX_MAX_TEXT_ARG_BYTES];

	c = mitm_decode(b, n, &ans) == 0 && ans.kind == 'm' && ans.slot < SBX_MAX_CONNS &&
	    px->conns[ans.slot].gen == ans.gen && px->conns[ans.slot].st == CS_MITM_WAIT ? &px->conns[ans.slot] : NULL;
	if (c && !ans.err && fd >= 0) {
		fcntl(fd, F_SETFL, O_NONBLOCK);
		c->ufd = fd;
		c->dialled = true;
		px_established(c);
		return;
	}
	if (fd >= 0)
		close(fd);
	if (!c)
		return;
	snprintf(why, sizeof(why), "the MITM proxy's socket %s: %s", px->p->mitm_socket ? px->p->mitm_socket : "?",
	    ans.err ? strerror((int)ans.err) : "sbx sent no socket");
	px_refuse(c, why, false);
}

static void
px_accept(struct proxy *px, const struct px_listener *l)
{
	for (int k = 0; k < 64; k++) {
		int fd = px_accept_cloexec_nonblock(l->fd);
		unsigned i;

		if (fd < 0)
			return;
		px_make_room_for_handshake(px);
		for (i = 0; i < SBX_MAX_CONNS && px->conns[i].st != CS_FREE; i++)
			;
		if (i == SBX_MAX_CONNS) {	/* full: say so and drop it */
			static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n";

			if (l->role == LR_PROXY)
				(void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		px->conns[i].cfd = fd;
		px->conns[i].ufd = -1;
		px->conns[i].st = CS_PEEK;
		if (i >= px->conns_end)
			px->conns_end = i + 1;
		px->conns[i].deadline_ms = now_ms() + SBX_HANDSHAKE_MS;
		if (l->role == LR_PROXY)
			px_on_handshake(px, &px->conns[i], i);	/* a client sends its request at once: read it
								 * now, not a poll() round later */
		else if (l->role == LR_HOST_PORT)
			px_host_port(&px->conns[i], l->port);
		else if (l->role == LR_EXPOSE)
			px_expose_request(px, &px->conns[i], i, l->port);
		else if (l->role == LR_CAPTURE)
			px_capture(px, &px->conns[i], i, l->port);
	}
}

/* Is a forwarded request's exchange over? The request went whole, the
 * upstream's answer has ended and gone to the client: nothing more can
 * come either way (one request a connection), so the connection closes
 * now, not after a half-close and a poll() round for the client's EOF.
 * Not while the client has sent bytes past its request that were never
 * read: close(2) answers unread bytes with a reset, which drops what the
 * socket still has to send, the answer's tail among it. One recv says
 * (those bytes are dropped anyway, c_done). */
static bool
px_forward_over(const struct conn *c)
{
	char past[512];
	ssize_t r;

	if (c->proto != PR_HTTP_FORWARD || !c->c_done || c->c_eof || !c->u_eof || c->resp_head ||
	    rbuf_pending(&c->c2u) || rbuf_pending(&c->u2c))
		return false;
	r = recv(c->cfd, past, sizeof(past), MSG_DONTWAIT);
	return r == 0 || (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

/* Handle what poll reported for one connection. */
static void
px_on_events(struct proxy *px, struct conn *c, unsigned slot, short crev, short urev)
{
	bool bulk;

	if (c->st == CS_CONNECTING && urev) {
		int err = 0;
		socklen_t el = sizeof(err);

		getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) {
			close(c->ufd);
			c->ufd = -1;
			if (c->proto == PR_HOST_PORT || c->proto == PR_EXPOSE)
				px_close(px, c);	/* nothing listens on that port */
			else
				px_connect_next(px, c);
			return;
		}
		px_established(c);
		/* what established queued (the request, the client's "200",
		 * the parent's CONNECT) goes now, not a poll() round later: a
		 * socket that just connected can take it */
		urev = POLLOUT;
		crev |= POLLOUT;
	}
	if (c->st == CS_PARENT_REPLY && urev) {
		px_parent_reply(px, c, urev);
		if (c->st == CS_FREE)
			return;
		urev = 0;
	}
	if (crev & (POLLERR | POLLNVAL)) {
		px_close(px, c);
		return;
	}
	if (c->st == CS_REPLY_CLOSE) {
		if (!relay_out(c->cfd, &c->u2c) || !rbuf_pending(&c->u2c))
			px_close(px, c);
		return;
	}
	if (c->st != CS_RELAY && (crev & POLLOUT) && !relay_out(c->cfd, &c->u2c)) {
		/* replies before the relay; in it, px_send_client below, which
		 * holds an HTTP response head back until it is rewritten */
		px_close(px, c);
		return;
	}
	if (c->st < CS_RESOLVING && (crev & (POLLIN | POLLHUP))) {	/* ORDER: enum conn_state */
		px_on_handshake(px, c, slot);
		return;
	}
	if (c->st != CS_RELAY) {
		if (crev & POLLHUP)	/* the client left while we resolved or dialled */
			px_close(px, c);
		return;
	}
	/* POLLHUP with data still readable is read first, as nc does. What was
	 * read is sent on at once (the other side is usually writable): one
	 * poll() per chunk instead of two */
	bulk = c->proto != PR_HTTP_FORWARD;	/* its response head is rewritten in a small buffer */
	if (c->c_done && (crev & POLLHUP))
		c->c_eof = true;	/* the client left */
	if ((crev & (POLLIN | POLLHUP)) && !c->c_eof && !c->c_done && rbuf_room(&c->c2u)) {
		uint64_t before = c->c2u.moved;

		if (!relay_in(c->cfd, &c->c2u, bulk))
			c->c_eof = true;
		if (c->proto == PR_HTTP_FORWARD && c->body_left >= 0) {
			int64_t got = (int64_t)(c->c2u.moved - before);

			if (got > c->body_left)
				c->c2u.len -= (size_t)(got - c->body_left);	/* past the body: dropped */
			c->body_left -= got < c->body_left ? got : c->body_left;
			c->c_done = c->body_left == 0;
		}
		urev |= POLLOUT;
	}
	if ((urev & (POLLIN | POLLHUP)) && !c->u_eof && rbuf_room(&c->u2c)) {
		/* an upstream that has ended (POLLRDHUP: an answer and its
		 * close came together, as a server's Connection: close does) is
		 * read to its EOF now, not a poll() round later */
		if (!relay_in(c->ufd, &c->u2c, bulk) ||
		    ((urev & POLLRDHUP) && rbuf_room(&c->u2c) && !relay_in(c->ufd, &c->u2c, bulk)))
			c->u_eof = true;
		crev |= POLLOUT;
	}
	px_fix_response(px, c);
	if ((urev & POLLERR) || ((urev & POLLOUT) && !relay_out(c->ufd, &c->c2u)) ||
	    ((crev & POLLOUT) && !px_send_client(c))) {
		px_close(px, c);
		return;
	}
	if ((c->c2u.cap == SBX_BULK_BUF_BYTES && (crev & POLLIN) && !relay_pump(c->cfd, c->ufd, &c->c2u, &c->c_eof)) ||
	    (c->u2c.cap == SBX_BULK_BUF_BYTES && (urev & POLLIN) && !relay_pump(c->ufd, c->cfd, &c->u2c, &c->u_eof))) {
		px_close(px, c);
		return;
	}
	if (px_forward_over(c)) {
		px_close(px, c);
		return;
	}
	/* half-close: an EOF travels on once its buffer has drained */
	if (c->c_eof && !rbuf_pending(&c->c2u))
		shutdown(c->ufd, SHUT_WR);
	if (c->u_eof && !rbuf_pending(&c->u2c) && !c->resp_head)
		shutdown(c->cfd, SHUT_WR);
	if (c->c_eof && c->u_eof && !rbuf_pending(&c->c2u) && !rbuf_pending(&c->u2c)) {
		px_close(px, c);
		return;
	}
	/* half-closed: the other side gets SBX_HALF_CLOSED_MS of silence to
	 * finish, then the tunnel goes (a client that left, an upstream that
	 * never answers: no fd held forever); open tunnels have no deadline */
	c->deadline_ms = c->c_eof || c->u_eof ? now_ms() + SBX_HALF_CLOSED_MS : 0;
}

/* Deadlines that passed by now: a slow or silent peer. A connection still
 * resolving or dialling gets its protocol's timeout answer (and closes once
 * it is sent); any other closes at once. */
static void
px_on_timeouts(struct proxy *px, int64_t now)
{
	for (unsigned s = 0; s < px->conns_end; s++) {
		struct conn *c = &px->conns[s];

		if (c->st == CS_FREE || !c->deadline_ms || c->deadline_ms > now)
			continue;
		if (c->proto == PR_HOST_PORT || c->proto == PR_EXPOSE) {
			px_close(px, c);
			continue;
		}
		if (c->st == CS_CONNECTING || c->st == CS_RESOLVING || c->st == CS_PARENT_REPLY || c->st == CS_MITM_WAIT) {
			px_record(c, PXV_FAIL, c->st == CS_PARENT_REPLY ? (c->mitm ? "the MITM proxy did not answer CONNECT in time" :
			    "the parent proxy did not answer CONNECT in time") : c->st == CS_CONNECTING ?
			    "the upstream did not answer in time" : c->st == CS_MITM_WAIT ?
			    "sbx did not hand over the MITM proxy's socket in time" : "the name did not resolve in time");
			if (c->proto == PR_CAPTURE) {
				px_close(px, c);	/* no protocol to say it in */
				continue;
			}
			if (c->proto == PR_SOCKS5 || c->proto == PR_SOCKS4)
				px_socks_reply(c, c->proto == PR_SOCKS4 ? SOCKS4_REFUSED : SOCKS5_TTL_EXPIRED, true);
			else
				px_http_error(c, 504);
			if (c->ufd >= 0) {
				close(c->ufd);
				c->ufd = -1;
			}
		} else {
			px_close(px, c);
		}
	}
}

/* The resolver threads answered (their pipe is readable): hand each answer
 * to its connection, unless that connection has moved on (gen). */
static void
px_on_resolver(struct proxy *px)
{
	char drain[64];
	struct dns_job *done;

	while (read(px->resolved_pipe[0], drain, sizeof(drain)) > 0)
		;
	pthread_mutex_lock(&dns.lock);
	done = dns.done;
	dns.done = NULL;
	pthread_mutex_unlock(&dns.lock);
	while (done) {
		struct dns_job *j = done;

		done = j->next;
		if (j->slot >= SBX_MAX_CONNS) {	/* a DNS stub question's (7.4) */
			px_dns_resolved(px, j->slot - SBX_MAX_CONNS, j->gen, j->res, j->err);
		} else if (px->conns[j->slot].st == CS_RESOLVING && px->conns[j->slot].gen == j->gen) {
			px_resolved(px, &px->conns[j->slot], j->res, j->err);
		} else if (j->res) {
			freeaddrinfo(j->res);
		}
		free(j);
	}
}

/* ---- 7.4 The DNS stub and capture: names inside, answered here -------
 *
 * network-dns (default on, Linux): the command's resolv.conf names
 * 127.0.0.1 (bound over /etc/resolv.conf), where the inner helper made a
 * UDP socket in the command's network namespace and handed it here, the
 * way it hands the proxy's listeners: a query lands straight in this loop,
 * no relay process. Each question is decided as a connection would be,
 * but for the name alone (net_decide_name): a name the policy refuses is
 * answered REFUSED at once, with a record saying why ("deny dns-query
 * NAME"), and is never looked up outside; an allowed one is looked up by
 * the resolver threads (7.2), each address judged by the resolved-address
 * guard (4.6), and answered with the survivors of the family asked
 * (REFUSED, and a record, when the guard took them all). Other types (MX,
 * TXT, HTTPS) of an allowed name get an empty answer: only addresses are
 * ever relayed, so a TXT record cannot carry data in. What a lookup of an
 * allowed name can carry out (the name itself, to the name's own
 * servers) the proxy's CONNECT already carries: a wildcard rule allows
 * both.
 *
 * network-capture: for programs that dial what they resolved (Go's own
 * transports, raw sockets, SDKs that ignore HTTP_PROXY). The stub answers
 * an allowed name's A question with an address of its own, 127.77.x.y,
 * one per name for the whole run (capture_names), and AAAA with nothing,
 * so clients take that address; the inner helper listens on 0.0.0.0 at
 * the capture ports (capture_ports), and a connection's own address
 * (getsockname) says which name it is for. From there it is a CONNECT to
 * NAME:PORT: px_decide, the same guard, the same route, the same records,
 * only with no protocol to answer in (a refusal closes the connection, and
 * on port 22 speaks the SSH refusal). An address that stands for no name
 * (127.0.0.1:443, a literal a program was given) is decided as that
 * literal, which the policy refuses unless it names it. */

struct dns_pending {
	bool used;
	unsigned gen;
	int fd;					/* the stub's socket, to answer on */
	struct dns_question q;
	struct sockaddr_storage from;		/* who asked */
	socklen_t fromlen;
	int64_t deadline_ms;
};

#define SBX_CAPTURE_NET	0x7f4d0000u	/* 127.77.0.0/16: capture addresses, 127.77.0.1 for the first name */

static void
px_dns_send(int fd, const struct sockaddr_storage *to, socklen_t tolen, const struct dns_question *q, int rcode,
    const struct addr *a, size_t na, uint32_t ttl)
{
	unsigned char out[SBX_DNS_UDP_BYTES];
	size_t n = dns_reply_build(q, rcode, a, na, ttl, out);

	(void)!sendto(fd, out, n, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)to, tolen);
}

static void
px_dns_record(enum px_verdict v, const char *name, const char *reason)
{
	px_record_raw(PR_DNS, PXR_DIRECT, v, PXO_DNS, name, 0, reason);
}

/* The capture address of a canonical name: the one it has, or the next
 * one. Returns the index (address SBX_CAPTURE_NET + index + 1), or -1
 * when the run has handed out every one. */
static int
px_capture_index(struct proxy *px, const char *canon)
{
	unsigned i;

	for (i = 0; i < px->ncapture; i++)
		if (strcmp(px->capture_names[i], canon) == 0)
			return (int)i;
	if (px->ncapture == SBX_MAX_CAPTURE_NAMES || strlen(canon) > SBX_MAX_HOST_BYTES)
		return -1;
	memcpy(px->capture_names[px->ncapture], canon, strlen(canon) + 1);
	return (int)px->ncapture++;
}

/* One question, decided (the module comment above). */
static void
px_dns_question(struct proxy *px, int fd, const struct dns_question *q, const struct sockaddr_storage *from,
    socklen_t fromlen)
{
	char canon[SBX_MAX_HOST_BYTES + 64];
	struct net_verdict v;
	unsigned i;

	if (q->bad) {
		px_dns_record(PXV_DENY, q->spelled, "a name no host can have");
		px_dns_send(fd, from, fromlen, q, DNS_REFUSED, NULL, 0, 0);
		return;
	}
	if (!q->name[0] || q->qclass != DNS_CLASS_IN) {	/* the root, or CHAOS and the like: nothing to look up */
		px_dns_send(fd, from, fromlen, q, q->name[0] ? DNS_NOTIMP : DNS_REFUSED, NULL, 0, 0);
		return;
	}
	v = net_decide_name(px->p, q->name);
	if (!v.allow || match_canonical_host(q->name, canon, sizeof(canon)) < 0) {
		px_dns_record(PXV_DENY, q->name, v.reason);
		px_dns_send(fd, from, fromlen, q, DNS_REFUSED, NULL, 0, 0);
		return;
	}
	if (q->qtype != DNS_TYPE_A && q->qtype != DNS_TYPE_AAAA) {
		px_dns_send(fd, from, fromlen, q, DNS_NOERROR, NULL, 0, 0);	/* only addresses are relayed */
		return;
	}
	if (px->capture_names) {
		struct addr a = { AF_INET, { 0 } };
		int idx;

		if (q->qtype == DNS_TYPE_AAAA) {
			px_dns_send(fd, from, fromlen, q, DNS_NOERROR, NULL, 0, 0);	/* IPv4 only: the A is captured */
			return;
		}
		if ((idx = px_capture_index(px, canon)) < 0) {
			px_dns_record(PXV_FAIL, q->name, "network-capture has handed out every address of this run");
			px_dns_send(fd, from, fromlen, q, DNS_SERVFAIL, NULL, 0, 0);
			return;
		}
		uint32_t ip = htonl(SBX_CAPTURE_NET + (uint32_t)idx + 1);

		memcpy(a.b, &ip, 4);
		px_dns_record(PXV_ALLOW, q->name, NULL);
		px_dns_send(fd, from, fromlen, q, DNS_NOERROR, &a, 1, SBX_DNS_CAPTURE_TTL);
		return;
	}
	for (i = 0; i < SBX_DNS_PENDING && px->dnsq[i].used; i++)
		;
	if (i == SBX_DNS_PENDING) {
		px_dns_record(PXV_FAIL, q->name, "too many questions at once");
		px_dns_send(fd, from, fromlen, q, DNS_SERVFAIL, NULL, 0, 0);
		return;
	}
	px->dnsq[i] = (struct dns_pending){ true, ++px->dns_gen, fd, *q, *from, fromlen, now_ms() + SBX_CONNECT_MS };
	dns_submit(SBX_MAX_CONNS + i, px->dnsq[i].gen, canon);
}

/* The resolver's answer for question qi: the addresses of the family
 * asked that the guard lets through. */
static void
px_dns_resolved(struct proxy *px, unsigned qi, unsigned gen, struct addrinfo *res, int err)
{
	struct dns_pending *d = qi < SBX_DNS_PENDING ? &px->dnsq[qi] : NULL;
	struct addr keep[32];
	size_t nkeep = 0;
	char refused[200] = "", canon[SBX_MAX_HOST_BYTES + 64];
	int fam;

	if (!d || !d->used || d->gen != gen) {
		if (res)
			freeaddrinfo(res);
		return;
	}
	d->used = false;
	fam = d->q.qtype == DNS_TYPE_A ? AF_INET : AF_INET6;
	match_canonical_host(d->q.name, canon, sizeof(canon));
	for (struct addrinfo *ai = err ? NULL : res; ai && nkeep < LEN(keep); ai = ai->ai_next) {
		struct addr a;
		const char *cls;
		bool dup = false;

		if (!addr_from_sockaddr(ai->ai_addr, &a) || a.family != fam)
			continue;
		if ((cls = net_judge_address(px->p, canon, 0, &a, &px->own))) {
			if (!strstr(refused, cls))
				snprintf(refused + strlen(refused), sizeof(refused) - strlen(refused), "%s%s",
				    refused[0] ? " / " : "", cls);
			continue;
		}
		for (size_t k = 0; k < nkeep; k++)
			dup |= memcmp(&keep[k], &a, sizeof(a)) == 0;
		if (!dup)
			keep[nkeep++] = a;
	}
	if (res)
		freeaddrinfo(res);
	if (err) {
		bool none = err == EAI_NONAME
#ifdef EAI_NODATA
		    || err == EAI_NODATA
#endif
		    ;

		px_dns_record(PXV_FAIL, d->q.name, "does not resolve");
		px_dns_send(d->fd, &d->from, d->fromlen, &d->q, none ? DNS_NXDOMAIN : DNS_SERVFAIL, NULL, 0, 0);
	} else if (!nkeep && refused[0]) {
		char why[220];

		snprintf(why, sizeof(why), "resolved to %s", refused);
		px_dns_record(PXV_DENY, d->q.name, why);
		px_dns_send(d->fd, &d->from, d->fromlen, &d->q, DNS_REFUSED, NULL, 0, 0);
	} else {
		px_dns_record(PXV_ALLOW, d->q.name, NULL);
		px_dns_send(d->fd, &d->from, d->fromlen, &d->q, DNS_NOERROR, keep, nkeep, SBX_DNS_TTL);
	}
}

/* Questions still unanswered at their deadline: SERVFAIL (the client has
 * most likely asked again by then). */
static void
px_dns_timeouts(struct proxy *px, int64_t now)
{
	for (unsigned i = 0; px->dnsq && i < SBX_DNS_PENDING; i++) {
		struct dns_pending *d = &px->dnsq[i];

		if (!d->used || d->deadline_ms > now)
			continue;
		d->used = false;
		px_dns_record(PXV_FAIL, d->q.name, "the name did not resolve in time");
		px_dns_send(d->fd, &d->from, d->fromlen, &d->q, DNS_SERVFAIL, NULL, 0, 0);
	}
}

/* The stub's socket is readable: every datagram waiting (up to a round's
 * worth), each parsed (7.1) and decided. */
static void
px_dns_read(struct proxy *px, int fd)
{
	for (int k = 0; k < 64; k++) {
		unsigned char b[1500];
		struct sockaddr_storage from;
		socklen_t fromlen = sizeof(from);
		struct dns_question q;
		ssize_t n = recvfrom(fd, b, sizeof(b), MSG_DONTWAIT, (struct sockaddr *)&from, &fromlen);
		int rc;

		if (n < 0)
			return;
		if ((rc = dns_query_parse(b, (size_t)n, &q)) < 0)
			continue;
		if (rc != DNS_NOERROR)
			px_dns_send(fd, &from, fromlen, &q, rc, NULL, 0, 0);
		else
			px_dns_question(px, fd, &q, &from, fromlen);
	}
}

/* A capture connection: the name its address stands for, or the literal
 * address, then decided as a CONNECT to it (px_decide). */
static void
px_capture(struct proxy *px, struct conn *c, unsigned slot, int port)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	uint32_t ip;

	c->proto = PR_CAPTURE;
	c->port = port;
	if (getsockname(c->cfd, (struct sockaddr *)&sa, &sl) < 0 || sa.sin_family != AF_INET) {
		c->st = CS_REPLY_CLOSE;	/* nothing queued: closes at once */
		return;
	}
	ip = ntohl(sa.sin_addr.s_addr);
	if ((ip & 0xffff0000u) == SBX_CAPTURE_NET && ip - SBX_CAPTURE_NET >= 1 && ip - SBX_CAPTURE_NET <= px->ncapture)
		str_copy(c->host, px->capture_names[ip - SBX_CAPTURE_NET - 1], sizeof(c->host));
	else
		inet_ntop(AF_INET, &sa.sin_addr, c->host, sizeof(c->host));
	px_decide(px, c, slot);
}

/* Does getaddrinfo read the hosts file before asking DNS (7.2)? Only
 * when nsswitch.conf's hosts line names files first: glibc's rule, and
 * without the file glibc asks DNS first. musl reads the file first
 * always, so for it the answer is at worst a needless no. Read once: the
 * proxy reads no configuration after its start. */
static bool
resolver_hosts_first(void)
{
	char line[512];
	bool first = false;
	FILE *f = fopen("/etc/nsswitch.conf", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *key = strtok_r(line, " \t\r\n", &save), *src;

		if (key && strcmp(key, "hosts:") == 0) {
			src = strtok_r(NULL, " \t\r\n", &save);
			first = src && strcmp(src, "files") == 0;
			break;
		}
	}
	fclose(f);
	return first;
}

/* ---- 7.5 The lockdown: what a memory bug in the proxy could still do -------
 *
 * Before the proxy reads a byte from the sandbox it locks itself down
 * (DESIGN 3.6), in one function per platform, px_lockdown (the platform
 * interface: 10e on Linux, not dumpable, Landlock and the seccomp
 * program; 11 on macOS). What every platform shares is here. */

/* SECURITY: load what the resolver needs (NSS modules, hosts, resolv.conf)
 * once, before px_lockdown takes away what loading them takes. */
static void
px_warm_resolver(void)
{
	struct addrinfo *warm = NULL;

	if (getaddrinfo("localhost", NULL, NULL, &warm) == 0)
		freeaddrinfo(warm);
}


/* ---- 7.6 The proxy process: set-up, lockdown, the loop -------------------
 *
 * px_main is the whole life of the process, one named step each: px_init
 * (the state, and this machine's addresses, read while it still may), the
 * resolver warm-up, px_lockdown, the arena sealed (2.1), the resolver
 * threads, px_loop. */

/* Set up the proxy: the resolver's pipe, every descriptor the hard limit
 * allows, the connection table, the listeners, this machine's addresses
 * (getifaddrs, for the resolved-address guard). Exits 125 when it cannot. */
static void
px_init(struct proxy *px, const struct policy *p, const struct px_listener *ls, int nl, int expose_fd, int report_fd,
    const char *token)
{
	static struct conn conns[SBX_MAX_CONNS];
	struct rlimit rl;
	int i;

	static const int terminal_signals[] = { SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGUSR1, SIGUSR2 };

	if (px_pipe_cloexec_nonblock(px->resolved_pipe) < 0)
		_exit(SBX_EXIT_FAILURE);
	signal(SIGPIPE, SIG_IGN);
	/* a terminal's ^C goes to its whole foreground process group, this
	 * process included; the proxy lives until sbx goes (or kills it),
	 * whatever the command does with the signal */
	for (i = 0; i < (int)LEN(terminal_signals); i++)
		signal(terminal_signals[i], SIG_IGN);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (i = 0; i < SBX_MAX_CONNS; i++)
		conns[i].cfd = conns[i].ufd = -1;
	px->live = *p;
	px->p = &px->live;
	px->token = token;
	px->parent = getppid();
	px->conns = conns;
	px_report_fd = report_fd;
	px->expose_fd = expose_fd;
	for (i = 0; i < nl && i < (int)LEN(px->listeners); i++) {
		px->listeners[i] = ls[i];
		fcntl(ls[i].fd, F_SETFL, O_NONBLOCK);
		if (ls[i].role == LR_CAPTURE && !px->capture_names)	/* pages are touched as names come */
			px->capture_names = calloc(SBX_MAX_CAPTURE_NAMES, sizeof(*px->capture_names));
	}
	px->nlisteners = i;
	px->dnsq = calloc(SBX_DNS_PENDING, sizeof(*px->dnsq));
	if (!px->dnsq)
		_exit(SBX_EXIT_FAILURE);
	own_addresses(&px->own);	/* arena: before the seal */
	px->hosts_first = resolver_hosts_first();
}

/* The resolver threads (7.2), after the lockdown so that they run under it. */
static void
px_start_resolvers(struct proxy *px)
{
	pthread_t t;

	dns.notify_fd = px->resolved_pipe[1];
	for (int i = 0; i < SBX_RESOLVER_THREADS; i++)
		pthread_create(&t, NULL, dns_worker, NULL);
}

/* A 'P' message from sbx (6c): the new network tables, in the file fd.
 * Swapped in whole, between two poll iterations: a connection decided
 * keeps its decision, the next one is decided by the new lists; one that
 * is resolving is judged by the new denied addresses (the safe side). A
 * table that does not decode changes nothing. */
static void
px_take_tables(struct proxy *px, const unsigned char *msg, ssize_t n, int fd)
{
	uint32_t len;
	unsigned char *b;
	struct net_tables *t = NULL;
	const char *why = "a bad 'P' message";
	size_t got = 0;

	memcpy(&len, msg + 1, n == SBX_TABLES_MSG_BYTES ? 4 : 0);
	if (n != SBX_TABLES_MSG_BYTES || msg[0] != 'P' || len > SBX_TABLES_MAX_BYTES || !(b = malloc(len + 1))) {
		warnx("proxy: a policy update from sbx refused: %s", why);
		return;
	}
	while (got < len) {	/* malloc, never the arena: it is sealed (2.1) */
		ssize_t r = pread(fd, b + got, len - got, (off_t)got);

		if (r == 0 || (r < 0 && errno != EINTR))
			break;
		got += r > 0 ? (size_t)r : 0;
	}
	if (got == len)
		t = net_tables_decode(b, len, &why);
	else
		why = "the table is cut short";
	free(b);
	if (!t) {
		warnx("proxy: a policy update from sbx refused: %s", why);
		return;
	}
	px->live.allow_domains = t->allow;
	px->live.deny_domains = t->deny;
	px->live.deny_addresses = t->addrs;
	net_tables_free(px->tables);	/* the lists before: nothing points into them past this call */
	px->tables = t;
}

/* sbx's end of the record pair: tables from sbx, answers to the MITM
 * route's asks, sbx asking for the records still batched ('F'), or its
 * end closing.
 * Returns only while sbx is there. */
static void
px_from_sbx(struct proxy *px)
{
	for (;;) {
		unsigned char msg[SBX_MITM_ANSWER_BYTES + 1];	/* one more: a longer message is refused */
		int fd = -1, nfd = 0;
		ssize_t n;

		errno = 0;
		n = recv_fds(px_report_fd, msg, sizeof(msg), &fd, 1, &nfd, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0)
			_exit(0);	/* sbx has gone (its end closed: a read of 0) */
		if (msg[0] == 'm') {	/* the MITM proxy's socket, or why not */
			px_mitm_answer(px, msg, (size_t)n, nfd == 1 ? fd : -1);
			continue;
		}
		if (msg[0] == 'F' && n == 1 && nfd == 0) {	/* the run ends: every record, then 'f' after them */
			px_records_flush();
			(void)send(px_report_fd, "f", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
			continue;
		}
		if (nfd == 1) {
			px_take_tables(px, msg, n, fd);
			close(fd);
		}
	}
}

/* The loop: expired deadlines, one poll() over sbx's end of the report
 * pair, the resolver's pipe, the expose channel, the listeners and every
 * connection, then what it reported. Returns never: exits 0 when sbx has
 * gone, 125 when poll() fails. */
static void __attribute__((noreturn))
px_loop(struct proxy *px)
{
	size_t npfd = 3 + LEN(px->listeners) + 2 * SBX_MAX_CONNS;
	struct pollfd *pfd = calloc(npfd, sizeof(*pfd));	/* malloc: the arena is sealed */
	unsigned *pslot = calloc(npfd, sizeof(*pslot));
	int i;

	if (!pfd || !pslot)
		_exit(SBX_EXIT_FAILURE);
	for (;;) {
		int64_t now = now_ms(), next = -1;
		nfds_t n = 0;
		int timeout, rc;
		unsigned s;

		px_on_timeouts(px, now);
		px_dns_timeouts(px, now);
		if (px_batch_due_ms && px_batch_due_ms <= now)
			px_records_flush();
		next = px_batch_due_ms ? px_batch_due_ms : -1;
		for (unsigned q = 0; q < SBX_DNS_PENDING; q++)
			if (px->dnsq[q].used && (next < 0 || px->dnsq[q].deadline_ms < next))
				next = px->dnsq[q].deadline_ms;
		pfd[n].fd = px_report_fd; pfd[n].events = POLLIN; n++;	/* tables from sbx, or its end closing */
		pfd[n].fd = px->resolved_pipe[0]; pfd[n].events = POLLIN; n++;
		pfd[n].fd = px->expose_fd; pfd[n].events = POLLIN; n++;	/* -1: poll skips it */
		for (i = 0; i < px->nlisteners; i++) {
			pfd[n].fd = px->listeners[i].fd;
			pfd[n].events = POLLIN;
			n++;
		}
		for (s = 0; s < px->conns_end; s++) {
			struct conn *c = &px->conns[s];
			short cev, uev;

			if (c->st == CS_FREE)
				continue;
			if (c->deadline_ms && (next < 0 || c->deadline_ms < next))
				next = c->deadline_ms;
			px_interest(c, &cev, &uev);
			pfd[n].fd = c->cfd; pfd[n].events = cev; pslot[n] = s * 2; n++;
			if (c->ufd >= 0) {
				pfd[n].fd = c->ufd; pfd[n].events = uev; pslot[n] = s * 2 + 1; n++;
			}
		}
		timeout = next < 0 ? -1 : (int)(next - now > 0 ? next - now : 0);
		if (SBX_PROXY_WATCHES_PARENT && (timeout < 0 || timeout > 1000))
			timeout = 1000;	/* a datagram pair never says sbx has gone: look each second */
		rc = poll(pfd, n, timeout);
		if (SBX_PROXY_WATCHES_PARENT && getppid() != px->parent)
			_exit(0);	/* sbx has gone (this process was handed to another parent) */
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			_exit(SBX_EXIT_FAILURE);
		}
		if (pfd[0].revents)
			px_from_sbx(px);	/* first: what follows is decided by the new tables */
		if (pfd[1].revents & POLLIN)
			px_on_resolver(px);
		if (pfd[2].revents)
			px_expose_answer(px);
		for (i = 0; i < px->nlisteners; i++)
			if ((pfd[3 + i].revents & POLLIN) && px->listeners[i].role == LR_DNS)
				px_dns_read(px, px->listeners[i].fd);
			else if (pfd[3 + i].revents & POLLIN)
				px_accept(px, &px->listeners[i]);
		for (nfds_t k = (nfds_t)(3 + px->nlisteners); k < n; k++) {
			unsigned slot = pslot[k] / 2;
			struct conn *c = &px->conns[slot];
			short crev = 0, urev = 0;

			if (pslot[k] % 2)
				continue;	/* handled with its client side below */
			if (c->st == CS_FREE || pfd[k].fd != c->cfd)
				continue;
			crev = pfd[k].revents;
			if (k + 1 < n && pslot[k + 1] == slot * 2 + 1 && pfd[k + 1].fd == c->ufd)
				urev = pfd[k + 1].revents;
			if (crev || urev)
				px_on_events(px, c, slot, crev, urev);
		}
	}
}

/* The proxy process: runs until sbx goes away (report_fd hangs up). token:
 * the credential every client must give (macOS), or NULL (Linux). */
static void __attribute__((noreturn))
px_main(const struct policy *p, const struct px_listener *ls, int nl, int expose_fd, int report_fd, const char *token)
{
	static struct proxy px;

	px_init(&px, p, ls, nl, expose_fd, report_fd, token);
	px_warm_resolver();
	px_lockdown();
	arena_seal();		/* the proxy lives for hours: no arena from here on (2.1) */
	px_start_resolvers(&px);
	px_loop(&px);
}

/* ====================================================================
 * 8. VIOLATIONS
 * ====================================================================
 * Every refusal of the run, told to the person or model that ran the
 * command: the proxy's decisions (one record each over the report pair,
 * px_record in section 7, its encoding in 6c), the write observer's events
 * (10b; judged here against the plan), the git audit's findings (9b). One
 * store keeps them; after the command, srt's <sandbox_violations> block
 * (or JSON lines as they come, and --explain's hints) says what and why.
 * -v also shows each proxy decision as it comes and a summary at exit. */

/* Prototypes: the hint for a Seatbelt refusal, with its source (8.2), and
 * the MITM route's dialler, whose asks come with the decisions (9e). */
struct violation;
static const char *sblog_hint(const struct violation *v, const struct plan *pl, const char *t);
static int mitm_serve(int report, const char *path, const unsigned char *rec, size_t n);

/* The store: every refusal of the run, from every source. The proxy's
 * decisions (net_log below, from the report pair), the write observer's
 * events (judged against the plan before they come here) and the git
 * audit's findings after the run each become one struct violation.
 * Repeats collapse into a count. */
enum vkind {
	VK_FILE,	/* the observer: a write-intent syscall on a path the plan keeps read-only */
	VK_NET,		/* the proxy: a connection it refused (network-outbound, socks-tunnel) */
	VK_CONNECT,	/* the observer: connect() (or a send) to an address other than the proxy's */
	VK_AUDIT,	/* the audit after the run: a hook or setting neutralised */
	VK_SEATBELT,	/* macOS: the kernel's Seatbelt refusal, from the unified log (sblog) */
};	/* ORDER: vkind_names */

struct violation {
	enum vkind kind;
	const char *op;		/* the syscall ("openat"), "network-outbound", "connect", the audit's verb */
	const char *target;	/* a path, a host, an address */
	int port;		/* VK_NET and VK_CONNECT; 0 otherwise */
	const char *reason;	/* why, or NULL */
	int pid;		/* the process that tried, as seen on this machine; 0: unknown */
	const char *comm;	/* its command name, or NULL */
	int64_t time_ms;	/* wall clock, ms since the epoch */
	uint64_t count;		/* in the store: how many times it came */
	uint32_t sid;		/* the observer's: the caller's session inside (a session's exec); 0: unknown */
};


/* ---- 8.1 The store and the report: srt's block, JSON lines, hints ----- */

#define SBX_HINTS_MAX	50	/* --explain's hints, then "... and N more" */

/* Is this code point one srt's store turns into a space (its sanitiser,
 * sandbox-violation-store.js)? C0, DEL and C1 controls, the soft hyphen,
 * bidi marks and embeddings, zero-width characters, the line and paragraph
 * separators, the byte-order mark and the Tags block: each can hide or
 * reorder what a reader sees, or end a line a model reads as the block's. */
static bool
report_cp_hidden(unsigned cp)
{
	static const struct { unsigned lo, hi; } hidden[] = {
		{ 0x00, 0x1f }, { 0x7f, 0x9f }, { 0xad, 0xad }, { 0x61c, 0x61c }, { 0x180e, 0x180e },
		{ 0x200b, 0x200f }, { 0x2028, 0x202e }, { 0x2060, 0x2064 }, { 0x2066, 0x206f }, { 0xfeff, 0xfeff },
		{ 0xe0000, 0xe007f },
	};

	for (size_t i = 0; i < LEN(hidden); i++)
		if (cp >= hidden[i].lo && cp <= hidden[i].hi)
			return true;
	return false;
}

/* Untrusted text (a path the command chose, a host it named) as it may
 * stand in the block: hidden characters a space, '<' and '>' removed (so
 * "x</sandbox_violations>\ndeny ..." can neither close the block nor start
 * a forged line in it), bytes that are not UTF-8 a '?'. */
static void
report_sanitise(const char *s, struct buf *out)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);

	while (p < end) {
		int n = utf8_valid_len(p, end);
		unsigned cp = 0;

		if (n == 0) {
			buf_putc(out, '?');
			p++;
			continue;
		}
		if (n == 1)
			cp = p[0];
		else
			for (int i = 0; i < n; i++)
				cp = i ? cp << 6 | (p[i] & 0x3f) : p[0] & (0xff >> (n + 1));
		if (cp == '<' || cp == '>')
			;
		else if (report_cp_hidden(cp))
			buf_putc(out, ' ');
		else
			buf_putn(out, (const char *)p, (size_t)n);
		p += n;
	}
}

/* One record as srt writes it: "deny <syscall> <path>", "deny
 * network-outbound <host>:<port> (<reason>)"; sbx's own: "deny connect
 * <address>:<port> (<reason>)" and the audit's "neutralised <path>
 * (<what>)". Untrusted parts sanitised; the whole trimmed, as srt does. */
static void
violation_line(const struct violation *v, struct buf *out)
{
	struct buf raw = { 0 };
	size_t a, b;

	buf_puts(&raw, v->kind == VK_AUDIT ? "" : "deny ");
	buf_puts(&raw, v->op);
	buf_putc(&raw, ' ');
	report_sanitise(v->target, &raw);
	if (v->port)
		buf_printf(&raw, ":%d", v->port);
	if (v->reason && *v->reason) {
		buf_puts(&raw, " (");
		report_sanitise(v->reason, &raw);
		buf_putc(&raw, ')');
	}
	buf_putc(&raw, '\0');
	for (a = 0; raw.p[a] == ' '; a++)
		;
	for (b = strlen(raw.p); b > a && raw.p[b - 1] == ' '; b--)
		;
	buf_putn(out, raw.p + a, b - a);
	free(raw.p);
}

/* ignore-violations, with srt's rules: a "*" rule's text anywhere in the
 * line drops it; another rule's command text, found in the command, drops
 * the lines its text is found in. For file events srt tests the path only. */
static bool
violation_ignored(const struct policy *p, const char *cmdline, const struct violation *v, const char *line)
{
	const char *tested = v->kind == VK_FILE ? v->target : line;

	for (size_t i = 0; i < p->ignores.n; i++) {
		const struct ignorerule *r = p->ignores.v[i];

		if ((strcmp(r->command, "*") == 0 || strstr(cmdline, r->command)) && strstr(tested, r->line))
			return true;
	}
	return false;
}

/* One record as a JSON line (--violations=FILE, --violations-fd): time,
 * kind, op, target, port, reason, pid, comm. */
static const char *const vkind_names[] = { "file", "network", "connect", "audit", "seatbelt" };	/* ORDER: enum vkind */

/* A JSON string of untrusted text: bytes that are not UTF-8 become
 * U+FFFD (JSON is Unicode: a strict reader stops at the first bad line and
 * would miss every refusal after it), the rest as buf_put_json_string
 * writes it (control bytes escaped, so one record stays one line). */
static void
json_put_untrusted(struct buf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
	struct buf clean = { 0 };

	while (p < end) {
		int n = utf8_valid_len(p, end);

		if (n == 0) {
			buf_puts(&clean, "\xef\xbf\xbd");	/* U+FFFD */
			p++;
		} else {
			buf_putn(&clean, (const char *)p, (size_t)n);
			p += n;
		}
	}
	buf_putc(&clean, '\0');
	buf_put_json_string(out, clean.p);
	free(clean.p);
}

static void
violation_json(const struct violation *v, struct buf *out)
{
	buf_printf(out, "{\"time\":%lld,\"kind\":\"%s\",\"op\":", (long long)v->time_ms, vkind_names[v->kind]);
	json_put_untrusted(out, v->op);
	buf_puts(out, ",\"target\":");
	json_put_untrusted(out, v->target);
	buf_printf(out, ",\"port\":%d,\"reason\":", v->port);
	if (v->reason)
		json_put_untrusted(out, v->reason);
	else
		buf_puts(out, "null");
	buf_printf(out, ",\"pid\":%d,\"comm\":", v->pid);
	if (v->comm)
		json_put_untrusted(out, v->comm);
	else
		buf_puts(out, "null");
	buf_puts(out, "}\n");
}

/* What the store keeps, and so what the block can show. A model's context
 * is not a log, so the block is bounded; and a command can make refusals
 * on purpose: thousands of junk ones, then the one that matters (srt's
 * store keeps its last 100 for that). So, of each class, the first
 * distinct refusals are kept for good and the last ones in a ring, and
 * what falls out between is counted ("... and N more" where it fell out).
 * The refusals that matter most are a class of their own, which junk of
 * the other class cannot push out at all: a host or an address refused,
 * a write under a deny (the policy's or a mandatory one: .bashrc,
 * .git/hooks), the audit's findings (violation_class). Bounded memory: a
 * long session keeps no more than a run. */
enum vclass {
	VC_PINNED,	/* always shown, up to its first and last SBX_REPORT_PINNED */
	VC_OTHER,	/* a write outside every root; Seatbelt's other refusals */
	VC_IGNORED,	/* ignore-violations drops its line: held only so a repeat is counted */
	VC_COUNT
};

#define SBX_REPORT_PINNED	50	/* the first and the last distinct pinned refusals: 100 lines at most */
#define SBX_REPORT_OTHER	25	/* ... and of the others: 50 lines at most */
#define SBX_REPORT_IGNORED	16	/* the last ignored ones, never shown */

static const struct { uint16_t first, last; } vclass_keep[VC_COUNT] = {	/* ORDER: enum vclass */
	{ SBX_REPORT_PINNED, SBX_REPORT_PINNED }, { SBX_REPORT_OTHER, SBX_REPORT_OTHER }, { 0, SBX_REPORT_IGNORED },
};
#define SBX_VSTORE_SLOTS	(2 * SBX_REPORT_PINNED + 2 * SBX_REPORT_OTHER + SBX_REPORT_IGNORED)	/* vclass_keep's sum */

/* One distinct refusal held: its copy (malloc'd in one block with its
 * strings: a session's daemon lives for hours, so no arena). */
struct vkept {
	struct violation v;	/* v.count: how many times it came */
	uint64_t seq;		/* order of first sight */
	uint64_t hash;		/* of what makes it distinct (violation_same) */
	enum vclass class;
	bool in_ring;		/* among its class's last, not its first */
};

struct vstore {
	struct vkept *kept[SBX_VSTORE_SLOTS];	/* a class's first, then its ring (vclass_base); NULL: free */
	struct {
		uint32_t nfirst;	/* of its first slots, filled */
		uint32_t nring, oldest;	/* of its ring: filled, and the slot to go next */
		uint64_t dropped;	/* times refused, of those that fell out of the ring */
	} cls[VC_COUNT];
	uint64_t seq;
	uint64_t unobserved;	/* attempts the observer could not report (its channel was full) */
	const struct policy *p;	/* borrowed: ignore-violations; NULL: none */
	const struct plan *pl;	/* borrowed: which paths are under a deny; NULL: none known */
	const char *cmdline;	/* borrowed: what ignore-violations' command texts are found in */
	int json_fd;		/* each new distinct record as a JSON line (--violations=FILE, -fd), or -1 */
	int json_dir;		/* --violations=FILE: its directory, for rotating it (vstore_json); or -1 */
	const char *json_name;	/* FILE's name in json_dir (arena) */
	uint64_t *written;	/* the records written lately, by hash (vstore_json; malloc), or NULL */
	uint64_t seed;		/* of the hashes, per store: names chosen to collide cannot be precomputed */
	/* told of every record as it comes, before the store keeps or counts
	 * it, or NULL: a session's daemon gives each to its exec's store (10f) */
	void (*added)(const struct vstore *s, const struct violation *v);
};

/* A store for the run or an exec: nothing kept, no sink. */
static void
vstore_init(struct vstore *s, const struct policy *p, const struct plan *pl, const char *cmdline)
{
	memset(s, 0, sizeof(*s));
	s->p = p;
	s->pl = pl;
	s->cmdline = cmdline ? cmdline : "";
	s->json_fd = s->json_dir = -1;
	s->seed = (uint64_t)now_ms() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)s;
}

/* Let go of what s holds (not its sink: its opener's). */
static void
vstore_clear(struct vstore *s)
{
	for (size_t i = 0; i < SBX_VSTORE_SLOTS; i++)
		free(s->kept[i]);
	memset(s->kept, 0, sizeof(s->kept));
	memset(s->cls, 0, sizeof(s->cls));
	free(s->written);
	s->written = NULL;
}

static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool
violation_same(const struct violation *a, const struct violation *b)
{
	return a->kind == b->kind && a->port == b->port && strcmp(a->op, b->op) == 0 &&
	    strcmp(a->target, b->target) == 0 && strcmp(a->reason ? a->reason : "", b->reason ? b->reason : "") == 0;
}

/* What makes v distinct, hashed with the store's seed; never 0. */
static uint64_t
violation_hash(const struct vstore *s, const struct violation *v)
{
	return ((str_hash(v->op) ^ str_hash(v->target) * 31 ^ str_hash(v->reason ? v->reason : "") * 131 ^
	    (uint64_t)v->port * 8191 ^ (uint64_t)v->kind) ^ s->seed) * 0xff51afd7ed558ccdULL | 1;
}

/* A copy of v in one malloc'd block, strings included, or NULL. */
static struct vkept *
vkept_new(const struct violation *v)
{
	const char *str[4] = { v->op, v->target, v->reason, v->comm };
	size_t len[4], n = sizeof(struct vkept);
	struct vkept *k;
	char *p;

	for (int i = 0; i < 4; i++)
		n += len[i] = str[i] ? strlen(str[i]) + 1 : 0;
	if (!(k = malloc(n)))
		return NULL;
	memset(k, 0, sizeof(*k));
	k->v = *v;
	p = (char *)(k + 1);
	for (int i = 0; i < 4; i++) {
		const char **dst = i == 0 ? &k->v.op : i == 1 ? &k->v.target : i == 2 ? &k->v.reason : &k->v.comm;

		*dst = str[i] ? memcpy(p, str[i], len[i]) : NULL;
		p += len[i];
	}
	return k;
}

/* Is path under a read-only mount the plan makes on purpose (a deny: the
 * policy's deny-write or deny-read, a mandatory one, a placeholder)? Then
 * no allow-write lifts it: deny wins at any depth. Not the read-only root
 * every plan starts from, which an allow-write does lift. */
static bool
plan_write_denied(const struct plan *pl, const char *path)
{
	for (size_t i = 0; i < pl->mounts.n; i++) {
		const struct mount *m = pl->mounts.v[i];

		if (m->kind != MK_BIND_RW && m->kind != MK_BIND_RW_INIT && m->kind != MK_BIND_FROM &&
		    path_within(path, m->path))
			return true;
	}
	return false;
}

/* Which class v is (the comment above vclass): ignored by the policy's
 * ignore-violations first (so the ignored cannot push out the rest),
 * then pinned or not by what was refused. */
static enum vclass
violation_class(const struct vstore *s, const struct violation *v)
{
	if (s->p && s->p->ignores.n) {
		struct buf line = { 0 };
		bool ignored;

		violation_line(v, &line);
		buf_putc(&line, '\0');
		ignored = violation_ignored(s->p, s->cmdline, v, line.p);
		free(line.p);
		if (ignored)
			return VC_IGNORED;
	}
	switch (v->kind) {
	case VK_NET:
	case VK_CONNECT:
	case VK_AUDIT:
		return VC_PINNED;
	case VK_FILE:
		return s->pl && plan_write_denied(s->pl, v->target) ? VC_PINNED : VC_OTHER;
	case VK_SEATBELT:
		return strncmp(v->op, "network", 7) == 0 || (strncmp(v->op, "file-write", 10) == 0 && v->target[0] == '/' &&
		    s->pl && plan_write_denied(s->pl, v->target)) ? VC_PINNED : VC_OTHER;
	}
	return VC_OTHER;
}

/* The first slot of class c in kept[]: its first ones, then its ring. */
static size_t
vclass_base(enum vclass c)
{
	size_t base = 0;

	for (int i = 0; i < (int)c; i++)
		base += vclass_keep[i].first + vclass_keep[i].last;
	return base;
}

#define SBX_VIOLATIONS_FILE_BYTES	(4 << 20)	/* --violations=FILE moves to FILE.1 past this */

/* --violations=FILE is past its cap: move it to FILE.1 (the older FILE.1
 * goes) and start a new FILE. When another run has done so already (the
 * descriptor is no longer FILE's), only open the new one. The directory
 * is the one report_sink_open checked: not where the command can write.
 * On a failure nothing more is written there (the cap holds), and sbx
 * says so once. */
static void
vstore_rotate(struct vstore *s, const struct stat *mine)
{
	char old[NAME_MAX + 3];
	struct stat cur;
	bool still_file = fstatat(s->json_dir, s->json_name, &cur, AT_SYMLINK_NOFOLLOW) == 0 &&
	    cur.st_dev == mine->st_dev && cur.st_ino == mine->st_ino;
	const char *why = NULL;
	int fd = -1;

	if ((size_t)snprintf(old, sizeof(old), "%s.1", s->json_name) >= sizeof(old))
		why = strerror(ENAMETOOLONG);
	else if (still_file && renameat(s->json_dir, s->json_name, s->json_dir, old) < 0)
		why = strerror(errno);
	else if ((fd = openat(s->json_dir, s->json_name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY |
	    O_NOFOLLOW | O_NONBLOCK, 0600)) < 0)
		why = strerror(errno);
	else if (fstat(fd, &cur) < 0 || !S_ISREG(cur.st_mode) || cur.st_nlink != 1 || cur.st_uid != geteuid())
		why = "the new one is not a plain file of yours";
	close(s->json_fd);
	s->json_fd = -1;
	if (!why) {
		(void)fcntl(fd, F_SETFL, O_WRONLY | O_APPEND);	/* blocking again: a record is written whole */
		s->json_fd = fd;
		return;
	}
	warnx("--violations: cannot move %s to %s.1 and start it again (%s): no more refusals are written there",
	    s->json_name, s->json_name, why);
	if (fd >= 0)
		close(fd);
}

#define SBX_JSON_RECENT	4096	/* records written lately, remembered by hash (vstore_json) */

/* v (of hash h) as a JSON line to the sink, whole, in one write (a
 * watcher tails it live), unless it was written lately: a repeat is
 * counted in the block, not written again, though it fell out of the
 * store (a command cycling through a few hundred refusals writes each
 * once). --violations=FILE holds at most SBX_VIOLATIONS_FILE_BYTES: a
 * record that would pass that first rotates it (vstore_rotate), so FILE
 * always holds the latest refusals, and FILE and FILE.1 together at most
 * twice the cap, across runs too: a command making refusals on purpose
 * can neither fill the disk nor keep its last attempts out of the file
 * (as a cap that stopped writing did). A descriptor (--violations-fd) is
 * its embedder's to drain: written, never rotated. */
static void
vstore_json(struct vstore *s, const struct violation *v, uint64_t h)
{
	struct buf b = { 0 };
	struct stat st;

	if (!s->written)
		s->written = calloc(SBX_JSON_RECENT, sizeof(*s->written));
	if (s->written) {	/* four hashes a bucket, the latest first: one crowded out is written again, never dropped */
		uint64_t *w = s->written + h % (SBX_JSON_RECENT / 4) * 4;

		if (w[0] == h || w[1] == h || w[2] == h || w[3] == h)
			return;
		memmove(w + 1, w, 3 * sizeof(*w));
		w[0] = h;
	}
	violation_json(v, &b);
	if (s->json_dir >= 0 && fstat(s->json_fd, &st) == 0 && (uint64_t)st.st_size + b.n > SBX_VIOLATIONS_FILE_BYTES)
		vstore_rotate(s, &st);
	if (s->json_fd >= 0)
		(void)write_all(s->json_fd, b.p, b.n);
	free(b.p);
}

/* Keep v (copied), or count it: a repeat of one held is counted there; a
 * new one takes its class's next first slot, or its ring's oldest, which
 * then falls out (counted as dropped). Returns true when v is new (not
 * held already). Not in the proxy: sbx's own process only. */
static bool
vstore_add(struct vstore *s, const struct violation *v)
{
	uint64_t h = violation_hash(s, v);
	struct vkept *k;
	enum vclass c;
	size_t base, slot;

	if (s->added)
		s->added(s, v);
	/* a storm of distinct refusals (100k files written outside the
	 * roots) walks at most SBX_VSTORE_SLOTS hashes a record */
	for (size_t i = 0; i < SBX_VSTORE_SLOTS; i++)
		if ((k = s->kept[i]) && k->hash == h && violation_same(&k->v, v)) {
			k->v.count++;
			return false;
		}
	c = violation_class(s, v);
	if (!(k = vkept_new(v))) {
		s->cls[c].dropped++;	/* no memory: counted, as one that fell out */
		return false;
	}
	k->v.count = 1;
	k->seq = ++s->seq;
	k->hash = h;
	k->class = c;
	base = vclass_base(c);
	if (s->cls[c].nfirst < vclass_keep[c].first) {
		slot = base + s->cls[c].nfirst++;
	} else {
		k->in_ring = true;
		base += vclass_keep[c].first;
		if (s->cls[c].nring < vclass_keep[c].last) {
			slot = base + s->cls[c].nring++;
		} else {
			slot = base + s->cls[c].oldest;
			s->cls[c].oldest = (s->cls[c].oldest + 1) % vclass_keep[c].last;
			s->cls[c].dropped += s->kept[slot]->v.count;
			free(s->kept[slot]);
		}
	}
	s->kept[slot] = k;
	/* each distinct refusal as it first comes; a repeat is counted in
	 * the block, not written again: a command repeating one 4 KiB
	 * refusal in a loop does not write it again and again */
	if (s->json_fd >= 0)
		vstore_json(s, v, h);
	return true;
}

/* The refusals s shows (not the ignored), in the order first seen, into
 * out (SBX_VSTORE_SLOTS); returns how many. */
static size_t
vstore_list(const struct vstore *s, const struct vkept **out)
{
	size_t n = 0;

	for (size_t i = 0; i < SBX_VSTORE_SLOTS; i++) {
		const struct vkept *k = s->kept[i];
		size_t j;

		if (!k || k->class == VC_IGNORED)
			continue;
		for (j = n++; j > 0 && out[j - 1]->seq > k->seq; j--)	/* an insertion sort of at most 150 */
			out[j] = out[j - 1];
		out[j] = k;
	}
	return n;
}

/* The block sbx appends to its stderr after the command, exactly srt's
 * annotateStderrWithSandboxFailures: "\n<sandbox_violations>\n", a line
 * each, "</sandbox_violations>" with no newline after. Nothing at all when
 * nothing was refused (or all of it is ignored). A repeat shows its count;
 * where a class's refusals fell out between its first and its last, one
 * line says how many times ("... and N more"). */
static void
report_block(const struct vstore *s, struct buf *out)
{
	const struct vkept *list[SBX_VSTORE_SLOTS];
	size_t n = vstore_list(s, list);
	uint64_t more[VC_COUNT] = { s->cls[VC_PINNED].dropped, s->cls[VC_OTHER].dropped, 0 };	/* ORDER: enum vclass */
	bool any = n || more[VC_PINNED] || more[VC_OTHER] || s->unobserved;

	if (any)
		buf_puts(out, "\n<sandbox_violations>\n");
	for (size_t i = 0; i < n; i++) {
		const struct vkept *k = list[i];

		if (k->in_ring && more[k->class]) {
			buf_printf(out, "... and %llu more\n", (unsigned long long)more[k->class]);
			more[k->class] = 0;
		}
		violation_line(&k->v, out);
		if (k->v.count > 1)
			buf_printf(out, " (%llu times)", (unsigned long long)k->v.count);
		buf_putc(out, '\n');
	}
	if (more[VC_PINNED] + more[VC_OTHER])	/* none of theirs left to show where they fell out */
		buf_printf(out, "... and %llu more\n", (unsigned long long)(more[VC_PINNED] + more[VC_OTHER]));
	if (s->unobserved)	/* say it: a report that silently lost lines reads as complete */
		buf_printf(out, "... and %llu attempts not observed (the observer fell behind)\n",
		    (unsigned long long)s->unobserved);
	if (any)
		buf_puts(out, "</sandbox_violations>");
}

/* --explain -- COMMAND: after the run, one "hint:" line per distinct
 * refusal with the policy line that would allow it, or why none would.
 * Never applied: the person decides. The plan says which: a path under a
 * deny (the policy's or a mandatory one) stays read-only whatever
 * allow-write is added, so that hint says so instead. */
static void
report_hints(const struct vstore *s, const struct plan *pl, struct buf *out)
{
	const struct vkept *list[SBX_VSTORE_SLOTS];
	size_t n = vstore_list(s, list);
	struct vec said = { 0 };

	for (size_t i = 0; i < n; i++) {
		const struct violation *v = &list[i]->v;
		struct buf t = { 0 };
		const char *hint = NULL;

		report_sanitise(v->target, &t);
		buf_putc(&t, '\0');
		if (v->kind == VK_AUDIT) {
			;
		} else if (v->kind == VK_FILE && path_depth(path_dirname(v->target)) < 2) {
			/* never "allow-write /" or "/etc": the command chose the name,
			 * and a hint must not steer the person into opening the disk */
			hint = aprintf("# %s: outside every writable root, at the top of the disk; no allow-write is "
			    "suggested for it", t.p);
		} else if (v->kind == VK_FILE) {
			if (pl && plan_write_denied(pl, v->target))
				hint = aprintf("# %s is under a deny (the policy's deny-write or a mandatory one); "
				    "no allow-write lifts it", t.p);
			else
				hint = aprintf("allow-write %s", path_dirname(t.p));
		} else if (v->kind == VK_NET && strcmp(v->op, "dns-query") == 0) {
			/* a name is looked up before any port is known */
			hint = v->reason && strcmp(v->reason, "host is not on the allow list") == 0 ?
			    aprintf("allow-domain %s", t.p) :
			    aprintf("# dns-query %s: %s; no allow-domain changes it", t.p, v->reason ? v->reason : "");
		} else if (v->kind == VK_NET && strcmp(v->op, "network-outbound") != 0) {
			hint = aprintf("# %s %s: %s; no allow-domain changes it", v->op, t.p, v->reason ? v->reason : "");
		} else if (v->kind == VK_NET && v->reason && strcmp(v->reason, "host is not on the allow list") == 0) {
			hint = v->port == 80 || v->port == 443 ? aprintf("allow-domain %s", t.p) :
			    aprintf("allow-domain %s:%d", t.p, v->port);
		} else if (v->kind == VK_NET) {
			hint = aprintf("# %s:%d is refused by the policy itself (%s); no allow-domain overrides it", t.p,
			    v->port, v->reason ? v->reason : "");
		} else if (v->kind == VK_CONNECT) {
			hint = aprintf("# %s:%d: connect through the proxy at 127.0.0.1:%d (HTTPS_PROXY and the other "
			    "variables point at it); a direct connection is never allowed", t.p, v->port,
			    SBX_PROXY_HTTP_PORT);
		} else if (v->kind == VK_SEATBELT) {
			hint = sblog_hint(v, pl, t.p);
		}
		if (hint && !str_listed(&said, hint)) {
			vec_push(&said, (void *)hint);
			if (said.n <= SBX_HINTS_MAX)
				buf_printf(out, "hint: %s\n", hint);
		}
		free(t.p);
	}
	if (said.n > SBX_HINTS_MAX)
		buf_printf(out, "hint: ... and %zu more\n", said.n - SBX_HINTS_MAX);
}


/* ---- 8.2 The sources: the observer's events judged, the proxy's log,
 * macOS's unified log parsed ---------------------------------------- */

/* The write observer's events (10b) judged against the plan: the plan's
 * own pure function decides, so a write inside an allowed root is never
 * reported and one under a deny is. The observer reports attempts (it
 * answers every call CONTINUE and never decides, DESIGN 3.2); this turns
 * an attempt into a refusal only where the mount table refuses it.
 *
 * A path is judged as the command named it, lexically normalised ("..",
 * "//", a trailing "/"): the path of a new file in a writable directory
 * is writable as its directory is (plan_is_writable goes by the deepest
 * node above it). /dev and /proc are bwrap's own mounts, outside the
 * plan (writing /dev/null is no refusal), so they are not judged.
 * connect(), and a send with an address (sendto, sendmsg, sendmmsg: a
 * UDP datagram, TCP fast open): inside the sandbox only the loopback
 * exists; any other address is one that cannot be reached, whatever the
 * policy says of the host, because only the proxy reaches out. bind()'s
 * Unix socket path is a name written, judged as a file.
 * Returns true and fills v (its strings point into e and norm) when the
 * event is a refusal. */
static const char obs_connect_reason[] = "direct connection; only the proxy at 127.0.0.1:3128 is reachable";

static bool
obs_is_local_address(const char *s)
{
	unsigned char a[16];

	if (inet_pton(AF_INET, s, a) == 1)
		return a[0] == 127 || (a[0] | a[1] | a[2] | a[3]) == 0;	/* 127/8, and 0.0.0.0: this host */
	if (inet_pton(AF_INET6, s, a) != 1)
		return false;
	static const unsigned char v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	bool zero = true;

	for (int i = 0; i < 15; i++)
		zero &= a[i] == 0;
	if (zero && (a[15] == 0 || a[15] == 1))
		return true;	/* :: and ::1 */
	return memcmp(a, v4mapped, 12) == 0 && (a[12] == 127 || (a[12] | a[13] | a[14] | a[15]) == 0);
}

static bool
obs_judge(const struct plan *pl, const struct obs_event *e, char *norm, size_t nn, struct violation *v)
{
	const struct obs_call *c = &obs_calls[e->call];

	memset(v, 0, sizeof(*v));
	v->pid = (int)e->pid;
	v->sid = e->sid;
	v->comm = e->comm[0] ? e->comm : NULL;
	if (c->what == OW_SETSID)
		return false;	/* no refusal: a session made (session_setsid, 10f) */
	if (c->what == OW_ADDR || c->what == OW_MSG || c->what == OW_MMSG) {
		if (obs_is_local_address(e->target))
			return false;
		v->kind = VK_CONNECT;
		v->op = sc_names[c->sc];
		v->target = e->target;
		v->port = e->port;
		v->reason = obs_connect_reason;
		return true;
	}
	if (path_normalize_lex(e->target, norm, nn) < 0)
		return false;
	if (path_within(norm, "/dev") || path_within(norm, "/proc") || plan_is_writable(pl, norm))
		return false;
	v->kind = VK_FILE;
	v->op = sc_names[c->sc];
	v->target = norm;
	return true;
}

#define SBX_MAX_NET_EVENTS	1024	/* distinct events kept; more are only counted */

struct net_event { struct px_decision d; uint64_t count; };	/* arena */

struct net_log {
	struct vec events;		/* struct net_event *, in order of first sight */
	uint64_t total[LEN(verdict_names)];	/* decisions by verdict; ORDER: enum px_verdict */
	uint64_t lost;			/* records the proxy could not send (its socket was full) */
	uint64_t unlisted;		/* decisions past SBX_MAX_NET_EVENTS distinct events */
	uint64_t bad;			/* records that did not decode: a proxy gone wrong */
	struct vstore *store;		/* where the refusals go, or NULL */
	const char *mitm_socket;	/* the policy's mitm-proxy, dialled when the proxy asks (9e), or NULL */
};

static struct net_log *
net_log_new(void)
{
	struct net_log *l = amalloc(sizeof(*l));

	memset(l, 0, sizeof(*l));
	return l;
}

static bool
net_event_same(const struct px_decision *a, const struct px_decision *b)
{
	return a->verdict == b->verdict && a->proto == b->proto && a->route == b->route && a->port == b->port &&
	    strcmp(a->host, b->host) == 0 && strcmp(a->reason, b->reason) == 0;
}

static void
net_log_add(struct net_log *l, const struct px_decision *d)
{
	struct net_event *e;

	l->total[d->verdict]++;
	l->lost += d->lost;
	if (d->verdict == PXV_DENY && l->store) {
		struct violation v = { VK_NET, op_names[d->op], d->host, d->port, d->reason, 0, NULL, wall_ms(), 0, 0 };

		vstore_add(l->store, &v);
	}
	for (size_t i = 0; i < l->events.n; i++) {
		e = l->events.v[i];
		if (net_event_same(&e->d, d)) {
			e->count++;
			return;
		}
	}
	if (l->events.n >= SBX_MAX_NET_EVENTS) {
		l->unlisted++;
		return;
	}
	e = amalloc(sizeof(*e));
	e->d = *d;
	e->d.lost = 0;
	e->count = 1;
	vec_push(&l->events, e);
}

/* ":PORT" for a record's port, or "" for none (a DNS question's). */
static const char *
port_suffix(uint16_t port, char buf[8])
{
	if (port)
		snprintf(buf, 8, ":%u", (unsigned)port);
	else
		buf[0] = '\0';
	return buf;
}

/* Take every message waiting on fd (non-blocking): each record of each
 * batch. Returns true if the proxy's 'f' was among them (net_log_finish). */
static bool
net_log_drain(struct net_log *l, int fd)
{
	unsigned char msg[SBX_RECORD_BATCH_BYTES + 1];	/* one more: an over-long message truncates and fails */
	struct px_decision d;
	char ps[8];
	ssize_t n;
	bool flushed = false;

	while ((n = recv(fd, msg, sizeof(msg), MSG_DONTWAIT)) > 0) {
		if (msg[0] == 'M') {	/* not a decision: the proxy asks for the MITM socket */
			if (!l->mitm_socket || mitm_serve(fd, l->mitm_socket, msg, (size_t)n) < 0)
				l->bad++;
			continue;
		}
		if (msg[0] == 'f' && n == 1) {
			flushed = true;
			continue;
		}
		if (n > SBX_RECORD_BATCH_BYTES) {
			l->bad++;
			continue;
		}
		for (size_t off = 0; off < (size_t)n;) {
			long k = px_decision_next(msg + off, (size_t)n - off, &d);

			if (k < 0) {	/* the rest of this message is not believed */
				l->bad++;
				break;
			}
			off += (size_t)k;
			net_log_add(l, &d);
			if (verbose)
				warnx("proxy: %s %s %s%s%s%s%s%s", verdict_names[d.verdict], proto_names[d.proto], d.host,
				    port_suffix(d.port, ps), route_via[d.route], *d.reason ? " (" : "", d.reason,
				    *d.reason ? ")" : "");
		}
	}
	return flushed;
}

#define SBX_RECORD_FLUSH_MS	500	/* how long the end of a run waits for the proxy's last records */

/* The end of a run: the proxy still holds up to SBX_RECORD_DELAY_MS of
 * allows (7). Ask for them ('F') and take records until its 'f', which it
 * sends after them; at most SBX_RECORD_FLUSH_MS, so a proxy that hangs or
 * was taken over cannot hold sbx's exit. fd is then closed. */
static void
net_log_finish(struct net_log *l, int fd)
{
	int64_t end = now_ms() + SBX_RECORD_FLUSH_MS;
	bool done = send(fd, "F", 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1;	/* the proxy has gone: what is there */

	while (!done) {
		struct pollfd pf = { fd, POLLIN, 0 };
		int64_t left = end - now_ms();
		int rc = left > 0 ? poll(&pf, 1, (int)left) : 0;

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			break;
		done = net_log_drain(l, fd) || (pf.revents & (POLLHUP | POLLERR));
	}
	net_log_drain(l, fd);
	close(fd);
}

/* Under -v, at exit: what the proxy decided, the refusals one line each. */
static void
net_log_summary(const struct net_log *l)
{
	char ps[8];

	if (!verbose || l->total[PXV_ALLOW] + l->total[PXV_DENY] + l->total[PXV_FAIL] + l->bad == 0)
		return;
	warnx("network: %llu allowed, %llu denied, %llu failed", (unsigned long long)l->total[PXV_ALLOW],
	    (unsigned long long)l->total[PXV_DENY], (unsigned long long)l->total[PXV_FAIL]);
	for (size_t i = 0; i < l->events.n; i++) {
		const struct net_event *e = l->events.v[i];

		if (e->d.verdict != PXV_ALLOW)
			warnx("  %s %s %s%s%s (%s)%s%.0llu%s", verdict_names[e->d.verdict], proto_names[e->d.proto], e->d.host,
			    port_suffix(e->d.port, ps), route_via[e->d.route], e->d.reason, e->count > 1 ? ", " : "", e->count > 1 ? (unsigned long long)e->count : 0ULL,
			    e->count > 1 ? " times" : "");
	}
	if (l->lost || l->unlisted || l->bad)
		warnx("  and %llu decisions not reported (the proxy's socket was full), %llu past the first %d events, "
		    "%llu records refused as malformed", (unsigned long long)l->lost, (unsigned long long)l->unlisted,
		    SBX_MAX_NET_EVENTS, (unsigned long long)l->bad);
}

/* The unified log (macOS). Seatbelt refuses in the kernel and logs it:
 * `log stream --style compact` prints one event as a timestamped line and
 * the message's further lines after it:
 *
 *   2026-12-03 10:00:00.123456 E  kernel[0:1a2b] (Sandbox) Sandbox: touch(4242) deny(1) file-write-create /Users/me/x
 *   CMD64_dG91Y2ggL1VzZXJzL21lL3g=_END__k3j9x0q2a_SBX
 *
 * The second line is the profile's (deny default (with message TAG)): the
 * run's tag (6d), which the log's predicate already selects on (its
 * suffix). sblog_line takes the lines one at a time and returns each
 * event that is a refusal of this run as a violation as soon as its line
 * with the tag comes (the last of it: the predicate selects messages that
 * end with the suffix, so that line also ends the event). As srt: an event is one when it holds
 * "Sandbox:" and "deny", and srt's noise (mDNSResponder, diagnosticd,
 * analyticsd) is dropped. Beyond srt: it must END with this run's whole
 * tag, command included, so a message another process logged with the
 * suffix alone, or one split oddly, is not taken for a refusal; every
 * byte of it is hostile (a path is the command's choice), and only the
 * report's sanitiser (8.1) decides how it is shown. Pure: tested on
 * recorded lines and fuzzed (tests/fuzz_seatbelt_log.c). */

#define SBX_SBLOG_EVENT_MAX	16384	/* longer events are cut (and then lack the tag: dropped) */

struct sblog {
	const char *tag;		/* the run's: CMD64_<base64>_END_<suffix> */
	const char *suffix;		/* the tag's end: what the log's predicate selects on */
	struct buf ev;			/* the event being read, its lines '\n'-joined */
	bool in_event;
	uint64_t noise, foreign, malformed;	/* dropped: srt's noise; not this run's tag; unparsed */
	char op[64], target[4096], comm[256];	/* what the violation returned points at */
};

/* Does the line open an event: "YYYY-MM-DD HH:MM:SS"? */
static bool
sblog_timestamped(const char *l, size_t n)
{
	static const char shape[] = "0000-00-00 00:00:00";

	if (n < sizeof(shape) - 1)
		return false;
	for (size_t i = 0; i < sizeof(shape) - 1; i++)
		if (shape[i] == '0' ? !isdigit((unsigned char)l[i]) : l[i] != shape[i])
			return false;
	return true;
}

/* Copy n bytes into a field of s, cut to fit. */
static void
sblog_copy(char *dst, size_t cap, const char *src, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The event in s->ev, judged: true with v filled when it is a refusal of
 * this run, "COMM(PID) deny(N) OPERATION [TARGET]" after "Sandbox: ". */
static bool
sblog_judge(struct sblog *s, struct violation *v)
{
	char *e = s->ev.p, *text, *eol, *deny, *open, *p;
	size_t n = s->ev.n, tn = strlen(s->tag);

	if (!e || !strstr(e, "Sandbox:") || !strstr(e, "deny"))
		return false;	/* another kind of message: not a refusal */
	while (n > 0 && isspace((unsigned char)e[n - 1]))
		n--;
	if (n < tn || memcmp(e + n - tn, s->tag, tn) != 0 || (n > tn && !isspace((unsigned char)e[n - tn - 1]))) {
		s->foreign++;
		return false;
	}
	e[n - tn] = '\0';	/* the tag: checked, not part of what is reported */
	text = strstr(e, "Sandbox:") + 8;
	while (*text == ' ' || *text == '\t')
		text++;
	if ((eol = strchr(text, '\n')))
		*eol = '\0';
	deny = strstr(text, ") deny(");
	if (!deny) {
		s->malformed++;
		return false;
	}
	for (open = deny; open > text && *open != '('; open--)
		;
	if (*open != '(' || open == deny) {
		s->malformed++;
		return false;
	}
	memset(v, 0, sizeof(*v));
	v->kind = VK_SEATBELT;
	for (p = open + 1; p < deny && isdigit((unsigned char)*p); p++)
		v->pid = v->pid < 100000000 ? v->pid * 10 + (*p - '0') : v->pid;
	if (p != deny)
		v->pid = 0;	/* not a number: unknown */
	sblog_copy(s->comm, sizeof(s->comm), text, (size_t)(open - text));
	v->comm = s->comm[0] ? s->comm : NULL;
	for (p = deny + 7; isdigit((unsigned char)*p); p++)
		;
	if (*p != ')') {
		s->malformed++;
		return false;
	}
	for (p++; *p == ' '; p++)
		;
	{
		size_t on = strcspn(p, " \t");
		const char *t = p + on;
		size_t tl;

		if (on == 0 || on >= sizeof(s->op) || strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789-*") < on) {
			s->malformed++;	/* an operation's name is a word of Seatbelt's: the report prints it as is */
			return false;
		}
		sblog_copy(s->op, sizeof(s->op), p, on);
		while (*t == ' ' || *t == '\t')
			t++;
		for (tl = strlen(t); tl > 0 && isspace((unsigned char)t[tl - 1]); tl--)
			;
		sblog_copy(s->target, sizeof(s->target), t, tl);
	}
	v->op = s->op;
	v->target = s->target;
	/* srt's noise (the resolver's socket, diagnostics and analytics
	 * lookups every framework makes), judged on the parsed fields: srt
	 * looks for the words anywhere in the line, so a command that names a
	 * file "mDNSResponder.plist" hides that refusal from its report */
	if ((v->comm && strcmp(v->comm, "mDNSResponder") == 0) ||
	    (strcmp(v->op, "mach-lookup") == 0 && (strcmp(v->target, "com.apple.diagnosticd") == 0 ||
	    strcmp(v->target, "com.apple.analyticsd") == 0)) ||
	    (strncmp(v->op, "network-outbound", 16) == 0 && strcmp(v->target, "/private/var/run/mDNSResponder") == 0)) {
		s->noise++;
		return false;
	}
	return true;
}

/* Does text (n bytes) end with end, trailing white space aside? */
static bool
sblog_ends_with(const char *text, size_t n, const char *end)
{
	size_t en = strlen(end);

	while (n > 0 && isspace((unsigned char)text[n - 1]))
		n--;
	return n >= en && memcmp(text + n - en, end, en) == 0;
}

/* One line of the log's output (n bytes, no newline). True with v filled
 * when it completes a refusal of this run: at once, so a refusal reaches
 * --violations= while the command runs.
 * SECURITY: an event ends only with a line ending in the run's suffix,
 * never where a timestamped line begins: the predicate prints only
 * messages that end with the suffix, so until one has, what follows is
 * still its message. A path with a newline and a line shaped like an
 * event after it ("x\n2026-01-01 ... Sandbox: y(1) deny(1) ...") then
 * stays inside the real refusal, and can neither hide it nor stand as one
 * of its own; to end an event early, the command would need the suffix,
 * which it cannot see (it is in log stream's argv, and process-info is
 * same-sandbox only). An event that outgrows SBX_SBLOG_EVENT_MAX is
 * dropped, and the next timestamped line starts afresh. */
static bool __attribute__((unused))	/* the macOS runner's (11), and the tests' */
sblog_line(struct sblog *s, const char *line, size_t n, struct violation *v)
{
	bool got = false;

	if (!s->in_event) {
		if (!sblog_timestamped(line, n))
			return false;	/* "Filtering the log data ...", the column header */
		s->ev.n = 0;
		s->in_event = true;
	}
	if (s->ev.n + 1 + n > SBX_SBLOG_EVENT_MAX) {
		s->malformed++;
		s->in_event = false;	/* resynchronise at the next timestamped line */
		s->ev.n = 0;
		return false;
	}
	if (s->ev.n)
		buf_putc(&s->ev, '\n');
	buf_putn(&s->ev, line, n);
	buf_putc(&s->ev, '\0');
	s->ev.n--;	/* NUL-ended for sblog_judge, not counted */
	/* the event so far ends with the suffix iff this line does: the
	 * lines before did not (else it had ended), and a blank one adds
	 * nothing. One look at the new line: no event is read twice. */
	if (sblog_ends_with(line, n, s->suffix)) {
		got = sblog_judge(s, v);
		s->in_event = false;
	}
	return got;
}

/* The end of the output: an event left without the tag is counted. */
static bool __attribute__((unused))	/* the macOS runner's (11), and the tests' */
sblog_end(struct sblog *s, struct violation *v)
{
	bool got = s->in_event && sblog_judge(s, v);

	s->in_event = false;
	s->ev.n = 0;
	return got;
}

/* --explain's hint for a Seatbelt refusal (t: its target, sanitised). */
static const char *
sblog_hint(const struct violation *v, const struct plan *pl, const char *t)
{
	if (strncmp(v->op, "file-write", 10) == 0 && v->target[0] == '/') {
		if (path_depth(path_dirname(v->target)) < 2)
			return aprintf("# %s: outside every writable root, at the top of the disk; no allow-write is "
			    "suggested for it", t);
		if (pl && plan_write_denied(pl, v->target))
			return aprintf("# %s is under a deny (the policy's deny-write or a mandatory one); no allow-write "
			    "lifts it", t);
		return aprintf("allow-write %s", path_dirname(t));
	}
	if (strncmp(v->op, "file-read", 9) == 0)
		return aprintf("# %s is hidden by the policy (deny-read); allow-read inside it shows a part again", t);
	if (strcmp(v->op, "mach-lookup") == 0)
		return aprintf("allow-mach-lookup %s", t);
	if (strncmp(v->op, "network", 7) == 0)
		return aprintf("# %s: connect through the proxy (HTTPS_PROXY and the other variables point at it); "
		    "a direct connection is never allowed", t);
	return aprintf("# %s %s: no policy line allows this operation", v->op, t);
}

/* ====================================================================
 * 9. THE RUN ON DISK: the runtime directory, placeholders, the audit, the
 *    programs and the environment, the live policy (every platform)
 * ====================================================================
 *
 * What a run makes and removes on this machine, for every platform's
 * runner: its private directory, the placeholders shared with concurrent
 * runs, and the audit of git repositories the command made; and what
 * both runners' supervise loops share: the control fd's updates (9d). */

/* Prototypes: the audit (9b), which a run's preparation, its cleanup and
 * the recovery of a dead run (9a) call; audit_gitdir recurses. */
struct audit;
static void audit_recover(const char *run_dir);
static void audit_record(const char *run_dir, const struct plan *pl);
static void audit_after_run(const struct plan *pl);
static void audit_gitdir(struct audit *a, const char *gd, bool force, int depth);

/* ---- 9a. The runtime directory, and placeholders shared between runs --
 *
 * The runtime root (one per user: /tmp/sbx-UID, or /var/tmp/sbx-UID when
 * the policy lets the command write /tmp) holds each run's directory (the
 * command's private TMPDIR, the empty file bound over hidden files, the
 * audit's record) and the placeholder registry. SECURITY: every run hides
 * both places from its command, whatever its policy (runtime_root_pick):
 * a command that could write one could forge what another run trusts
 * (registry entries, records, a symlink where a run's TMPDIR is bound),
 * and read the private TMPDIRs of concurrent runs.
 *
 * A placeholder is an empty directory sbx creates so that a missing
 * dangerous name in a writable root can be covered (a mount needs a
 * target; bwrap would create one on the host anyway), or one another
 * program removed after the scan, when sbx-init asks (ph_recover). Agents run commands
 * in parallel in one project, so placeholders are shared: a run that finds
 * another run's placeholder covers it like its own, and a placeholder is
 * removed only when no live run uses it. KERNEL: removing a mount point on
 * the host dissolves the mounts on it in every other mount namespace, so a
 * run that removed a placeholder another run still covered would lift that
 * run's deny (and a bind racing the removal fails: "Can't get type of
 * source").
 *
 * The registry: one file per placeholder, ROOT/ph/<hash of its path>,
 * holding the path and the identity of what was made (device, inode).
 * Every live run that covers a placeholder holds a shared flock(2)
 * on its file; creating, sharing and removing happen under one exclusive
 * lock on ROOT/placeholders.lock, so a removal never races a bind. The last
 * run out (it can lock the entry exclusively) removes the placeholder if
 * it is still what was made. A run killed by SIGKILL drops its locks with
 * its descriptors, and the next run reclaims every entry no one holds.
 * Proof, not trust: the registry lies where no sandbox can write (so no
 * command can forge an entry), and removal never follows a symlink and
 * never removes anything but the empty directory that was made: a file
 * the person put at that name, or anything they put inside, survives.
 * Empty directories are set aside in a pool rather than removed, and
 * taken back by the next run (ph_pool_put, ph_pool_take: rmdir is the
 * dearest step of a run on ext4). */

#define SBX_PH_MAGIC	"sbx-placeholder 1"

/* Field 22, starttime, of a /proc/PID/stat line (Linux's, and the macOS
 * simulation's, plat_proc_start_time), or -1. */
static long long
proc_stat_starttime(const char *stat)
{
	const char *p = strrchr(stat, ')');	/* the command name may hold spaces and ')' */

	for (int i = 0; i < 20 && p; i++)	/* 20 fields after ')' */
		p = strchr(p + 1, ' ');
	return p ? strtoll(p + 1, NULL, 10) : -1;
}


/* The last parent open_parent_nofollow opened, kept: a plan's targets share
 * a few. An fd keeps naming the directory it opened, even if that is
 * renamed since, which is what a removal of what sbx made there wants;
 * covering a name again after another program changed the directories on
 * its way (ph_recover) forgets it first. */
static struct { char path[PATH_MAX]; int fd; } parent_kept = { "", -1 };

static void
open_parent_forget(void)
{
	if (parent_kept.fd >= 0)
		close(parent_kept.fd);
	parent_kept.fd = -1;
	parent_kept.path[0] = '\0';
}

/* Open the directory that holds path's last name, following no symlink on
 * the way (*name points into path). SECURITY: the command may have turned
 * any directory of a writable root into a symlink on the host; a removal
 * must still act on the name sbx made, never on what a link points at.
 * Returns a descriptor, or -1 with errno set. */
static int
open_parent_nofollow(const char *path, const char **name)
{
	char comp[NAME_MAX + 1];
	const char *p = path, *slash;
	int fd, next;

	if (path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	slash = strrchr(path, '/');
	if (parent_kept.fd >= 0 && (size_t)(slash - path) == strlen(parent_kept.path) &&
	    strncmp(path, parent_kept.path, (size_t)(slash - path)) == 0 && (fd = dup_cloexec(parent_kept.fd, 0)) >= 0) {
		*name = slash + 1;
		return fd;
	}
	if ((fd = openat(AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	for (;;) {
		while (*p == '/')
			p++;
		if (!(slash = strchr(p, '/'))) {
			*name = p;
			if ((size_t)(p - 1 - path) < sizeof(parent_kept.path)) {
				if (parent_kept.fd >= 0)
					close(parent_kept.fd);
				parent_kept.fd = dup_cloexec(fd, 0);
				snprintf(parent_kept.path, sizeof(parent_kept.path), "%.*s", (int)(p - 1 - path), path);
			}
			return fd;
		}
		if ((size_t)(slash - p) > NAME_MAX) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, p, (size_t)(slash - p));
		comp[slash - p] = '\0';
		next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
		p = slash + 1;
	}
}

/* Is the directory fd (at path) ours and private? A directory sbx made is
 * 0700 and ours. One that is ours and that no one else can write, but
 * readable by others (made by hand, or by `mkdir -p` under umask 022), is
 * repaired to 0700, and said: only its owner could have made or chmod'ed
 * it, and no one else could have put anything in it. One that others can
 * write, or someone else's, or not a directory, is not ours: nothing in it
 * is trusted. */
static bool
private_dir_ok(int fd, const char *path)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
		return false;
	if (!(st.st_mode & 077))
		return true;
	if ((st.st_mode & 022) || fchmod(fd, 0700) < 0)
		return false;
	warnx("%s was mode %04o; sbx makes its directories 0700 and has set it so", path,
	    (unsigned)(st.st_mode & 07777));
	return true;
}

/* private_dir_ok of the directory at path, not following a last link. */
static bool
private_dir_at(const char *path)
{
	int fd = openat(AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	bool ok = private_dir_ok(fd, path);

	if (fd >= 0)
		close(fd);
	return ok;
}

/* Remove a tree without following symlinks: the command wrote it (its
 * private TMPDIR). One descriptor and one directory stream a level, so
 * the depth is bounded (SBX_RM_TREE_DEPTH): a subtree below that is
 * moved up into the top directory (renameat between two descriptors
 * held: no path is followed) and removed by the next pass. A command
 * that made a tree deeper than any bound leaves nothing behind either. */
#define SBX_RM_TREE_DEPTH	128
#define SBX_RM_TREE_PASSES	8192	/* a tree 1M directories deep; a racer's work is bounded */

static void
rm_tree_at(int parent, const char *name, int depth, int top, unsigned *moved)
{
	int fd;
	struct dir_stream *d;
	struct dir_entry de;

	if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
		return;
	/* an empty directory (most TMPDIRs a command leaves) goes in one call */
	if (unlinkat(parent, name, AT_REMOVEDIR) == 0)
		return;
	if (depth > SBX_RM_TREE_DEPTH) {
		char up[32];

		snprintf(up, sizeof(up), ".sbx-deep-%u", *moved);
		if (renameat(parent, name, top, up) == 0)
			(*moved)++;
		return;
	}
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		/* a directory the command made unreadable is still ours;
		 * AT_SYMLINK_NOFOLLOW: a link there is not followed to its target */
		if (fchmodat(parent, name, 0700, AT_SYMLINK_NOFOLLOW) == 0)
			fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return;
	}
	fchmod(fd, 0700);
	if (!(d = dir_open_fd(fd)))
		return;
	while (dir_next(d, &de) == 1)
		rm_tree_at(dir_fd(d), de.name, depth + 1, depth ? top : dir_fd(d), moved);
	dir_close(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

static void
rm_tree(const char *path)
{
	int pfd;
	const char *name;
	unsigned moved = 0, before;

	if ((pfd = open_parent_nofollow(path, &name)) < 0)
		return;
	for (int pass = 0; pass < SBX_RM_TREE_PASSES; pass++) {
		before = moved;
		rm_tree_at(pfd, name, 0, -1, &moved);
		if (moved == before)
			break;	/* removed, or as far as it goes */
	}
	close(pfd);
}

/* Registry entries: the magic line, then "made KIND DEV INO CTIME" (or
 * "intent KIND TIME" while it is being created), then the path, %-escaped
 * (%, newline). KIND is d (an empty directory), f (an empty file) or .
 * (a file holding "."). A directory matches on DEV and INO (a placeholder
 * made inside it changes its ctime); a file on CTIME too. */
static void
line_escape(struct buf *b, const char *path)
{
	for (; *path; path++) {
		if (*path == '%' || *path == '\n')
			buf_printf(b, "%%%02x", (unsigned char)*path);
		else
			buf_putc(b, *path);
	}
}

static char *
line_unescape(const char *s)
{
	char *out = amalloc(strlen(s) + 1), *o = out;

	for (; *s; s++) {
		unsigned v;

		if (*s == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2]) &&
		    sscanf(s + 1, "%2x", &v) == 1) {
			*o++ = (char)v;
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

/* What a placeholder was when it was made. */
struct ph_id {
	bool made;		/* false: only the intent was written */
	enum phkind kind;
	unsigned long long dev, ino;
	long long ctime;	/* "made": its ctime; "intent": when the intent was written */
};

/* A placeholder's kind as one letter in a registry entry. ORDER: enum
 * phkind; entries other runs wrote are read back with it, so a letter
 * must keep its meaning. */
static const char ph_kind_letters[] = "df.";

/* A directory this run mounts on, locked shared (any run, of any runtime
 * directory, sees that lock), and when it is a placeholder of this
 * registry, its entry, locked shared too. */
struct ph_held {
	const char *path;
	int dir;	/* the directory (or file) itself, opened and locked, or -1 */
	int fd;		/* the registry entry, or -1 (not a placeholder of ours) */
	struct fid id;	/* what was there once covered, a directory or a regular
			 * file (sbx-init binds only that); 0 0 for anything else */
};

/* The run's own state, for cleanup at exit (atexit: every exit path). */
static struct {
	const char *root;	/* the runtime root */
	const char *run_dir;	/* root/run-PID-START: TMPDIR, the empty file, the audit record */
	const struct plan *plan;	/* what the run was built from, for the audit (9b) */
	struct vec held;	/* of struct ph_held, in plan order (parents first) */
	int lock_fd;		/* root/placeholders.lock while held, else -1 */
	pid_t owner;		/* only the process that made them cleans up */
	struct vstore *store;	/* the run's refusals (8): the audit's findings go there too */
	struct vec pool_roots;	/* of const char *: the runtime roots every run hides, for the pool */
	const char *registry;	/* where the placeholder registry is: registry_root_pick */
	const char *tmpdir, *bridge_dir;	/* the command's TMPDIR, the bridge's directory: in root */
	struct tmp_id *tmp_id;	/* the TMPDIR as it was handed to the command (tmpdir_spare_put) */
	bool sandbox_gone;	/* bwrap was reaped: no process of the run is left to hold the TMPDIR */
} run_state = { NULL, NULL, NULL, { 0 }, -1, 0, NULL, { 0 }, NULL, NULL, NULL, NULL, false };

/* The registry file name of a placeholder: FNV-1a 64 of its path. The
 * entry holds the path itself, so a collision is seen, never trusted. */
static const char *
ph_entry_name(const char *path)
{
	return aprintf("%016llx", (unsigned long long)str_hash(path));
}

/* Parse an entry. Returns its path, or NULL when it is not one of ours. */
static const char *
ph_entry_read(int fd, struct ph_id *id)
{
	char buf[8192], *nl1, *nl2, *end;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	memset(id, 0, sizeof(*id));
	if (!(nl1 = strchr(buf, '\n')) || !(nl2 = strchr(nl1 + 1, '\n')) || !(end = strchr(nl2 + 1, '\n')))
		return NULL;
	*nl1 = *nl2 = *end = '\0';
	if (strcmp(buf, SBX_PH_MAGIC) != 0)
		return NULL;
	{
		char k = 0;
		const char *at;

		if (sscanf(nl1 + 1, "made %c %llu %llu %lld", &k, &id->dev, &id->ino, &id->ctime) == 4)
			id->made = true;
		else if (sscanf(nl1 + 1, "intent %c %lld", &k, &id->ctime) != 2)
			return NULL;
		if (!k || !(at = strchr(ph_kind_letters, k)))
			return NULL;
		id->kind = (enum phkind)(at - ph_kind_letters);
	}
	return nl2[1] == '/' ? line_unescape(nl2 + 1) : NULL;
}

static int
ph_entry_write(int fd, const char *path, const struct ph_id *id)
{
	/* kept from call to call: a run writes two a placeholder, and musl's
	 * allocator maps and unmaps a page for each buffer freed */
	static struct buf b;
	int rc;

	b.n = 0;
	buf_printf(&b, "%s\n", SBX_PH_MAGIC);
	if (id->made)
		buf_printf(&b, "made %c %llu %llu %lld\n", ph_kind_letters[id->kind], id->dev, id->ino, id->ctime);
	else
		buf_printf(&b, "intent %c %lld\n", ph_kind_letters[id->kind], id->ctime);
	line_escape(&b, path);
	buf_putc(&b, '\n');
	/* no fsync: the entry must outlive a killed sbx, not a crashed
	 * machine, and the page cache survives the first */
	/* written over what was there: the reader takes three lines, so the
	 * intent needs no cut; the made entry is cut to its length */
	rc = pwrite(fd, b.p, b.n, 0) == (ssize_t)b.n && (!id->made || ftruncate(fd, (off_t)b.n) == 0) ? 0 : -1;
	b.n = 0;
	return rc;
}

/* Is st (the thing at name in pfd) the placeholder id describes? A
 * directory sbx made has the recorded device and inode (not its ctime: a
 * placeholder another run made inside it changes that), and only an empty
 * one is ever removed (rmdir refuses the rest). A file sbx made also has
 * its recorded ctime, which no one can set back, and still holds exactly
 * what sbx wrote (nothing, or "."): a file the person put there, or
 * changed, is never removed. An intent (sbx died between writing it and
 * recording what it made) accepts only a directory changed since then. */
static bool
ph_matches(int pfd, const char *name, const struct stat *st, const struct ph_id *id)
{
	char b[3];
	int fd;
	bool same;

	if (id->kind == PH_DIR) {
		if (!S_ISDIR(st->st_mode))
			return false;
		if (!id->made)
			return (long long)st->st_ctime >= id->ctime;
		return st->st_dev == (dev_t)id->dev && st->st_ino == (ino_t)id->ino;
	}
	if (!id->made || !S_ISREG(st->st_mode) || st->st_dev != (dev_t)id->dev || st->st_ino != (ino_t)id->ino ||
	    (long long)st->st_ctime != id->ctime || st->st_size != (id->kind == PH_DOT ? 2 : 0))
		return false;
	if (id->kind == PH_FILE)
		return true;
	if ((fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return false;
	same = read(fd, b, sizeof(b)) == 2 && memcmp(b, ".\n", 2) == 0;
	close(fd);
	return same;
}

/* The pool: placeholder directories set aside between runs, not removed.
 * WHY: removing an empty directory is the dearest step of a run on ext4
 * (rmdir frees the directory's block; with the `discard` mount option that
 * is a synchronous discard: ~97 us each, against ~6 us for a rename, on
 * the machine of README's Figures), and a project's runs make the same
 * dozen placeholders every time. So the last run out renames each one
 * into ROOT/pool/KEY/NAME (KEY: its parent directory's, ph_pool_key), and the
 * next run that needs NAME in that parent renames it back.
 * SECURITY:
 *  - the pool lies in a runtime root, which every run hides from its
 *    command (runtime_root_pick), so no sandbox can reach a pooled
 *    directory by its name;
 *  - a pooled directory only ever returns to the name it left, in the
 *    parent it left (the pool is keyed by that parent and holds one
 *    directory per name): a process that kept a descriptor on it (another
 *    sandbox that can write the project) can put files in it, but it could
 *    write them at that name in that project anyway; it never carries them
 *    into a project it cannot write;
 *  - rmdir refuses a directory that is not empty, atomically; a rename
 *    does not, so emptiness is checked before it and again after it
 *    (through a descriptor on the directory itself), and a directory that
 *    gained an entry in between goes back where it was, with what it holds;
 *    one that holds anything in the pool is never taken (it is noted, and
 *    stays there: nothing of the person's is removed);
 *  - rename(2) works only within one mount: a project elsewhere than every
 *    runtime root gets mkdir and rmdir as before (EXDEV). */
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE	(1 << 0)
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH		0x1000	/* Linux's; the macOS simulation's headers hide it */
#endif

static int
sys_renameat2(int olddir, const char *oldname, int newdir, const char *newname, unsigned flags)
{
#ifdef SYS_renameat2
	return (int)syscall(SYS_renameat2, olddir, oldname, newdir, newname, flags);
#else	/* macOS: no placeholders, no pool (SBX_PLACEHOLDERS 0); this compiles, and is not called */
	(void)olddir, (void)oldname, (void)newdir, (void)newname, (void)flags;
	errno = ENOSYS;
	return -1;
#endif
}

/* Is the directory open at fd (at offset 0) empty? */
static bool
dir_fd_empty(int fd)
{
	char buf[1024];
	long n = -1;
	bool empty = true;

#ifndef SYS_getdents64	/* macOS, as sys_renameat2 */
	(void)fd, (void)buf;
	errno = ENOSYS;
#else
	while (empty && (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			const char *d_name = buf + off + 19;	/* struct linux_dirent64: ino 8, off 8, reclen 2, type 1 */
			unsigned short reclen;

			memcpy(&reclen, buf + off + 16, 2);
			if (strcmp(d_name, ".") && strcmp(d_name, ".."))
				empty = false;
			off += reclen;
		}
#endif
	return empty && n == 0;
}

/* The pool's name for placeholders in the directory pfd: DEV-INO-HANDLE
 * (HANDLE: name_to_handle_at's type and bytes, hex), or false (the
 * filesystem gives no handle: no pool there).
 * SECURITY: device and inode alone do not name a directory over time:
 * ext4 hands a freed inode to the very next directory made, so a project
 * removed and another one made (rm -rf a; mkdir b, git clone) has the old
 * one's device and inode, and its pooled placeholders would move into the
 * new one, carrying what a descriptor another sandbox kept on them writes
 * there (tests/hardening.tests.sh placeholder_pool_parent_reused). The
 * handle holds the inode's generation, which a reused inode does not keep. */
static bool
ph_pool_key(int pfd, const struct stat *parent, char *key, size_t size)
{
	struct { unsigned int bytes; int type; unsigned char h[64]; } fh;
	int mnt;
	size_t n;

	fh.bytes = sizeof(fh.h);
#ifdef SYS_name_to_handle_at
	if (syscall(SYS_name_to_handle_at, pfd, "", &fh, &mnt, AT_EMPTY_PATH) < 0 || fh.bytes > sizeof(fh.h))
		return false;
#else	/* macOS, as sys_renameat2 */
	(void)pfd, (void)mnt;
	return false;
#endif
	n = (size_t)snprintf(key, size, "%llx-%llx-%x-", (unsigned long long)parent->st_dev,
	    (unsigned long long)parent->st_ino, (unsigned)fh.type);
	for (unsigned i = 0; i < fh.bytes && n + 3 <= size; i++)
		n += (size_t)snprintf(key + n, size - n, "%02x", fh.h[i]);
	return n + 1 < size;
}

/* The pool directory for placeholders in the directory pfd (made 0700 with
 * create): in the first runtime root on pfd's filesystem, or -1. The
 * descriptor is kept for the next call (a plan's placeholders share a
 * parent or two): the caller does not close it. */
static int
ph_pool_open(int pfd, bool create)
{
	static struct { char key[192]; int fd; } last = { "", -1 };
	struct stat parent, rst;
	char key[192];

	if (!SBX_PH_POOL || fstat(pfd, &parent) < 0 || !ph_pool_key(pfd, &parent, key, sizeof(key)))
		return -1;
	if (last.fd >= 0 && strcmp(last.key, key) == 0)
		return last.fd;
	if (last.fd >= 0)
		close(last.fd);
	last.fd = -1;
	for (size_t i = 0; i < run_state.pool_roots.n; i++) {
		const char *root = run_state.pool_roots.v[i], *pool = path_join(root, "pool");
		int fd;

		if (lstat(root, &rst) < 0 || rst.st_dev != parent.st_dev)
			continue;
		if (create && mkdir(pool, 0700) < 0 && errno != EEXIST)
			return -1;
		if (create && mkdir(path_join(pool, key), 0700) < 0 && errno != EEXIST)
			return -1;
		fd = openat(AT_FDCWD, path_join(pool, key), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* the root is private (runtime_dir_make); what is in it is ours */
		if (fd >= 0 && !private_dir_ok(fd, path_join(pool, key))) {
			close(fd);
			return -1;
		}
		if (fd >= 0) {
			str_copy(last.key, key, sizeof(last.key));
			last.fd = fd;
		}
		return fd;
	}
	return -1;
}

/* Set the empty directory name in pfd aside in the pool; st: what
 * ph_matches found there. Returns 0; -1 (no pool here, its slot taken, not
 * empty: the caller removes it as before); or -2 (what the name held when
 * it moved was not the directory checked: it went back, and is kept).
 * SECURITY: a rename moves whatever the name holds when it runs, not what
 * was checked: another process that can write the parent (a sandbox with
 * the project writable, the person) may swap a directory of its own in at
 * that name meanwhile, and it would be moved, with what it holds, into the
 * hidden pool. So the descriptor checked is the directory that was matched,
 * and what landed in the pool is that directory, or it goes back
 * (tests/hardening.tests.sh placeholder_pool_put_swapped). */
static int
ph_pool_put(int pfd, const char *name, const struct stat *st)
{
	int pool = ph_pool_open(pfd, true), fd = -1, rc = -1;
	struct stat fst, moved;

	if (pool < 0)
		return -1;
	/* looked at, moved, looked at again through a descriptor on the
	 * directory itself: one that gained an entry while it moved goes
	 * back, with what it holds; so does one that is not that directory */
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &fst) < 0 || fst.st_dev != st->st_dev || fst.st_ino != st->st_ino))
		rc = -2;	/* swapped already: left alone */
	else if (fd >= 0 && dir_fd_empty(fd) && sys_renameat2(pfd, name, pool, name, RENAME_NOREPLACE) == 0) {
		bool same = fstatat(pool, name, &moved, AT_SYMLINK_NOFOLLOW) == 0 && moved.st_dev == fst.st_dev &&
		    moved.st_ino == fst.st_ino;

		rc = 0;
		if (!same || lseek(fd, 0, SEEK_SET) < 0 || !dir_fd_empty(fd)) {
			if (sys_renameat2(pool, name, pfd, name, RENAME_NOREPLACE) == 0)
				rc = same ? -1 : -2;
			else	/* nothing is deleted: it stays where the next run's note names it */
				note("placeholder %s: %s while set aside, and cannot go back (%s); it is in %s/pool",
				    name, same ? "gained an entry" : "replaced by another directory", strerror(errno),
				    run_state.root);
		}
	}
	if (fd >= 0)
		close(fd);
	if (rc == -1)
		errno = ENOTEMPTY;
	return rc;
}

/* Move the pooled directory for name in pfd back to its name. Returns 0, or
 * -1 (none: the caller makes one). */
static int
ph_pool_take(int pfd, const char *name)
{
	int pool = ph_pool_open(pfd, false), fd, rc = -1;

	if (pool < 0)
		return -1;
	if ((fd = openat(pool, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		if (!dir_fd_empty(fd))
			note("placeholder pool: a set-aside %s is not empty, left where it is (ROOT/pool, %s); "
			    "a new placeholder is made", name, run_state.root);
		else if (sys_renameat2(pool, name, pfd, name, RENAME_NOREPLACE) == 0)
			rc = 0;
		close(fd);
	}
	return rc;
}

/* The command's TMPDIR, set aside when the run leaves it as it got it.
 * Removing an empty directory on a filesystem mounted `discard` waits for
 * the device (0.1 to 0.3 ms here), and every run makes and removes one
 * TMPDIR in the runtime root, on disk (a build's temporary files may be
 * large). Renaming costs a few microseconds. So the run that ends puts an
 * untouched TMPDIR in ROOT/spare-tmp (at most SBX_TMP_SPARES), and the next
 * run renames one to its own tmp-PID-START.
 * Why it is as good as a new one:
 *  - no process can hold it: every process of the run is gone (its pid
 *    namespace died, and pid 1 of one waits for all the others: a spare is
 *    put only once bwrap has been reaped), nothing inside could pass a
 *    descriptor out (the filters refuse unix sockets, no other sandbox
 *    sees any runtime root: runtime_covers; a policy that allows all unix
 *    sockets, or shows the host's /proc, keeps no spare: run_facts_collect),
 *    and a session's execs (whose background processes outlive them) never
 *    come here: only a run's own TMPDIR does;
 *  - it is as it was made, not only empty: the same inode, owner, group,
 *    mode, size and link count, the same change and modification times
 *    (to the nanosecond: the kernel sets ctime to now on every change of
 *    the inode, a chmod, an xattr, a rename, touch -d, an entry made and
 *    removed, so a TMPDIR its command used at all is not reused; and
 *    mtime, for a change within one tick of the clock), the same inode
 *    flags (chattr: +S or +D would slow the next run's writes), generation
 *    (FS_IOC_SETVERSION: 32 bits the owner may set), project and extent
 *    size hints, and the same extended attributes, names and values (a
 *    default ACL set or rewritten by the command would give the next run's
 *    files to another user; a user.* one would carry data from one run to
 *    the next). One that differs in anything is removed, as before;
 *  - ROOT is a private directory (0700, ours, hidden from every sandbox),
 *    so between runs only the person's own processes could touch a spare;
 *    a spare is still checked when taken, and what was taken is the
 *    directory checked, or it goes back. */
#define SBX_TMP_SPARES	8
#define SBX_TMP_SPARE_DIR	"spare-tmp"	/* not "tmp-": runtime_recover_in's name for a dead run's */

struct tmp_id {
	struct stat st;
	int flags;		/* FS_IOC_GETFLAGS, or -1 */
	int generation;		/* FS_IOC_GETVERSION, or -1 */
	uint32_t fsx[3];	/* FS_IOC_FSGETXATTR: xflags, extent size hint, project; or all ~0 */
	size_t nx;		/* the extended attributes: each name, NUL, its value's length and value */
	char x[512];
};

#if SBX_LINUX
#  include <sys/xattr.h>
#  define SBX_FS_IOC_GETFLAGS	_IOR('f', 1, long)
#  define SBX_FS_IOC_GETVERSION	_IOR('v', 1, long)
struct sbx_fsxattr { uint32_t xflags, extsize, nextents, projid, cowextsize; unsigned char pad[8]; };
#  define SBX_FS_IOC_FSGETXATTR	_IOR('X', 31, struct sbx_fsxattr)

/* The directory's identity (see above). false when it cannot be read
 * whole (extended attributes past x's room): then it is not set aside. */
static bool
tmp_id_read(int fd, struct tmp_id *id)
{
	struct sbx_fsxattr fsx;
	char names[256];
	ssize_t nn;

	memset(id, 0, sizeof(*id));
	if (fstat(fd, &id->st) < 0)
		return false;
	if (ioctl(fd, SBX_FS_IOC_GETFLAGS, &id->flags) < 0)
		id->flags = -1;
	if (ioctl(fd, SBX_FS_IOC_GETVERSION, &id->generation) < 0)
		id->generation = -1;
	if (ioctl(fd, SBX_FS_IOC_FSGETXATTR, &fsx) == 0) {
		id->fsx[0] = fsx.xflags;
		id->fsx[1] = fsx.extsize;
		id->fsx[2] = fsx.projid;
	} else {
		memset(id->fsx, 0xff, sizeof(id->fsx));
	}
	if ((nn = flistxattr(fd, names, sizeof(names))) < 0)
		return errno == ENOTSUP;
	for (ssize_t i = 0; i < nn; i += (ssize_t)strlen(names + i) + 1) {
		size_t len = strlen(names + i) + 1;
		ssize_t v;

		if (id->nx + len + sizeof(v) > sizeof(id->x))
			return false;
		memcpy(id->x + id->nx, names + i, len);
		id->nx += len;
		v = fgetxattr(fd, names + i, id->x + id->nx + sizeof(v), sizeof(id->x) - id->nx - sizeof(v));
		if (v < 0)
			return false;
		memcpy(id->x + id->nx, &v, sizeof(v));
		id->nx += sizeof(v) + (size_t)v;
	}
	return true;
}

static bool
tmp_id_same(const struct tmp_id *a, const struct tmp_id *b)
{
	return a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino && a->st.st_uid == b->st.st_uid &&
	    a->st.st_gid == b->st.st_gid && a->st.st_mode == b->st.st_mode && a->st.st_size == b->st.st_size &&
	    a->st.st_nlink == b->st.st_nlink && a->st.st_ctim.tv_sec == b->st.st_ctim.tv_sec &&
	    a->st.st_ctim.tv_nsec == b->st.st_ctim.tv_nsec && a->st.st_mtim.tv_sec == b->st.st_mtim.tv_sec &&
	    a->st.st_mtim.tv_nsec == b->st.st_mtim.tv_nsec && a->flags == b->flags &&
	    a->generation == b->generation && memcmp(a->fsx, b->fsx, sizeof(a->fsx)) == 0 &&
	    a->nx == b->nx && memcmp(a->x, b->x, a->nx) == 0;
}

/* ROOT/spare-tmp, opened (made with create), if it is ours and private. */
static int
tmp_spares_open(int rootfd, bool create)
{
	int fd;

	if (create && mkdirat(rootfd, SBX_TMP_SPARE_DIR, 0700) < 0 && errno != EEXIST)
		return -1;
	fd = openat(rootfd, SBX_TMP_SPARE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && !private_dir_ok(fd, SBX_TMP_SPARE_DIR)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Rename a spare to path (ROOT/tmp-ID), and fill id. Returns 0, or -1
 * (none to take: the caller makes one). */
static int
tmpdir_spare_take(const char *path, struct tmp_id *id)
{
	const char *name;
	int rootfd = open_parent_nofollow(path, &name), sfd, rc = -1;
	char buf[1024];
	long n;

	if (rootfd < 0)
		return -1;
	if ((sfd = tmp_spares_open(rootfd, false)) < 0) {
		close(rootfd);
		return -1;
	}
	while (rc < 0 && (n = syscall(SYS_getdents64, sfd, buf, sizeof(buf))) > 0)
		for (long off = 0; rc < 0 && off < n;) {
			const char *d_name = buf + off + 19;	/* struct linux_dirent64, as in dir_fd_empty */
			unsigned short reclen;
			struct stat moved;
			int fd;

			memcpy(&reclen, buf + off + 16, 2);
			off += reclen;
			if (!strcmp(d_name, ".") || !strcmp(d_name, ".."))
				continue;
			fd = openat(sfd, d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				continue;	/* taken by another run meanwhile */
			if (tmp_id_read(fd, id) && id->st.st_uid == getuid() && (id->st.st_mode & 07777) == 0700 &&
			    dir_fd_empty(fd) && sys_renameat2(sfd, d_name, rootfd, name, RENAME_NOREPLACE) == 0) {
				/* the identity is read again: the rename changed its ctime */
				if (fstatat(rootfd, name, &moved, AT_SYMLINK_NOFOLLOW) == 0 && moved.st_ino == id->st.st_ino &&
				    moved.st_dev == id->st.st_dev && lseek(fd, 0, SEEK_SET) == 0 && dir_fd_empty(fd) &&
				    tmp_id_read(fd, id))
					rc = 0;
				else	/* not the directory checked, or not empty now: back it goes */
					sys_renameat2(rootfd, name, sfd, d_name, RENAME_NOREPLACE);
			}
			close(fd);
		}
	close(sfd);
	close(rootfd);
	return rc;
}

/* Set the run's TMPDIR aside if it is as it was handed out (id). Returns
 * true when it went; false: the caller removes it. */
static bool
tmpdir_spare_put(const char *path, const struct tmp_id *id)
{
	const char *name;
	int rootfd = open_parent_nofollow(path, &name), sfd = -1, fd = -1, count = 0;
	struct tmp_id now;
	struct stat moved;
	bool put = false;
	char buf[1024];
	long n;

	if (rootfd < 0)
		return false;
	fd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !tmp_id_read(fd, &now) || !tmp_id_same(id, &now) || !dir_fd_empty(fd) ||
	    (sfd = tmp_spares_open(rootfd, true)) < 0)
		goto out;
	while ((n = syscall(SYS_getdents64, sfd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n; count++) {
			unsigned short reclen;

			memcpy(&reclen, buf + off + 16, 2);
			off += reclen;
		}
	if (count - 2 >= SBX_TMP_SPARES)
		goto out;
	/* its name there is the run's own: tmp-PID-START, unique */
	if (sys_renameat2(rootfd, name, sfd, name, RENAME_NOREPLACE) < 0)
		goto out;
	if (fstatat(sfd, name, &moved, AT_SYMLINK_NOFOLLOW) == 0 && moved.st_ino == now.st.st_ino &&
	    moved.st_dev == now.st.st_dev && lseek(fd, 0, SEEK_SET) == 0 && dir_fd_empty(fd))
		put = true;
	else
		sys_renameat2(sfd, name, rootfd, name, RENAME_NOREPLACE);
out:
	if (fd >= 0)
		close(fd);
	if (sfd >= 0)
		close(sfd);
	close(rootfd);
	return put;
}
#else	/* macOS: a TMPDIR is made and removed each run */
static bool
tmp_id_read(int fd, struct tmp_id *id)
{
	(void)fd;
	(void)id;
	return false;
}

static int
tmpdir_spare_take(const char *path, struct tmp_id *id)
{
	(void)path;
	(void)id;
	return -1;
}

static bool
tmpdir_spare_put(const char *path, const struct tmp_id *id)
{
	(void)path;
	(void)id;
	return false;
}
#endif

/* Make the run's TMPDIR: a spare taken, or a new directory; with spare
 * (run_facts.tmp_spare), its identity kept for tmpdir_spare_put. Returns
 * 0, or -1 with errno. */
static int
tmpdir_make(const char *path, bool spare)
{
	struct tmp_id *id = amalloc(sizeof(*id));
	int fd;

	if (spare && tmpdir_spare_take(path, id) == 0) {
		run_state.tmp_id = id;
		return 0;
	}
	if (mkdir(path, 0700) < 0)
		return -1;
	if (spare && (fd = openat(AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		if (tmp_id_read(fd, id))
			run_state.tmp_id = id;
		close(fd);
	}
	return 0;
}

/* Remove the placeholder at path if it is still what id says. Returns
 * false when it is still sbx's but could not go (a directory another
 * run's placeholder is still in): its entry stays, for a later run. */
static bool
ph_remove(const char *path, const struct ph_id *id)
{
	struct stat st;
	const char *name;
	int pfd = open_parent_nofollow(path, &name);
	bool gone = true;

	if (pfd < 0)
		return true;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && ph_matches(pfd, name, &st, id)) {
		int put = id->kind == PH_DIR ? ph_pool_put(pfd, name, &st) : -1;

		if (put == 0)
			;	/* set aside for the next run, not removed */
		else if (put == -2)	/* not sbx's any more: nothing to retry */
			note("placeholder %s: replaced while sbx was setting it aside; kept", path);
		else if (unlinkat(pfd, name, id->kind == PH_DIR ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT) {
			note("placeholder %s: kept for now (%s)", path, strerror(errno));
			gone = false;
		}
	} else if (errno != ENOENT) {
		note("placeholder %s: replaced since it was made; kept", path);
	}
	close(pfd);
	return gone;
}

/* Make the placeholder name in pfd: an empty directory, an empty file, or
 * a file holding "." (read-only on the host too, so it reads as what it
 * is). Returns 0, or -1 with errno set. */
static int
ph_make(int pfd, const char *name, enum phkind kind)
{
	int fd;

	if (kind == PH_DIR)
		return ph_pool_take(pfd, name) == 0 ? 0 : mkdirat(pfd, name, 0755);
	if ((fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444)) < 0)
		return -1;
	if (kind == PH_DOT && write_all(fd, ".\n", 2) < 0) {
		int err = errno;

		close(fd);
		unlinkat(pfd, name, 0);
		errno = err;
		return -1;
	}
	return close(fd);
}

/* Take the registry lock (held until ph_unlock). Dies if it cannot. */
static void
ph_lock(void)
{
	const char *lock = path_join(run_state.registry, "placeholders.lock");

	if (run_state.lock_fd >= 0)
		return;
	run_state.lock_fd = openat(AT_FDCWD, lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (run_state.lock_fd < 0)
		die("cannot open %s: %s", lock, strerror(errno));
	while (flock(run_state.lock_fd, LOCK_EX) < 0)
		if (errno != EINTR)
			die("cannot lock %s: %s", lock, strerror(errno));
}

static void
ph_unlock(void)
{
	if (run_state.lock_fd >= 0)
		close(run_state.lock_fd);
	run_state.lock_fd = -1;
}

/* The registry directory, opened (made 0700 if absent); -1 on failure. */
static int
ph_dir_open(bool create)
{
	const char *dir = path_join(run_state.registry, "ph");
	int fd;

	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
		die("cannot create %s: %s", dir, strerror(errno));
	fd = openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && !private_dir_ok(fd, dir))
		die_hint(aprintf("remove it (rm -rf %s); sbx makes a new one", dir), "%s is not a private directory of "
		    "uid %u, and others could have written in it; the command did not run", dir, (unsigned)getuid());
	if (fd < 0 && create)
		die("cannot open %s: %s", dir, strerror(errno));
	return fd;
}

/* Open the directory or file at path without following a link, and lock
 * it: shared, or exclusive without waiting. Returns the descriptor, or -1
 * (missing, a link, or, for LOCK_EX, in use). */
static int
ph_node_lock(const char *path, int how)
{
	const char *name;
	int pfd = open_parent_nofollow(path, &name), fd;

	if (pfd < 0)
		return -1;
	fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(pfd);
	if (fd >= 0 && flock(fd, how) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* With the registry lock and the entry's lock held exclusively: remove
 * the placeholder if no run, of any runtime directory, has its directory
 * locked, then the entry. Returns false when the placeholder is still in
 * use (the entry stays, for a later run to reclaim). */
static bool
ph_retire(int dfd, int entry, const char *ename, int dir)
{
	struct ph_id id;
	const char *path = ph_entry_read(entry, &id);
	int own = -1;

	if (path) {
		/* KERNEL: converting a shared flock to exclusive drops it first;
		 * a run that takes it shared in between keeps the placeholder, and
		 * one that waits sees it gone once we close (ph_cover checks) */
		if (dir >= 0 ? flock(dir, LOCK_EX | LOCK_NB) < 0 : (own = ph_node_lock(path, LOCK_EX | LOCK_NB)) < 0) {
			if (errno == EWOULDBLOCK)
				return false;	/* another run mounts on it */
		} else if (!ph_remove(path, &id)) {
			if (own >= 0)
				close(own);
			return false;	/* not empty yet: a later run tries again */
		}
		if (own >= 0)
			close(own);
	}
	unlinkat(dfd, ename, 0);
	return true;
}

/* With the registry lock held: remove the placeholders of entries no live
 * run holds (runs killed before they could clean up). */
static void
ph_reclaim(int dfd)
{
	struct dir_stream *d;
	struct dir_entry de;
	int dup_fd = dup(dfd);

	if (!(d = dir_open_fd(dup_fd)))
		return;
	struct vec found = { 0 };	/* of const char *: "path\0name", deepest first below */
	size_t i;

	while (dir_next(d, &de) == 1) {
		struct ph_id id;
		const char *path;
		int fd;

		if (strlen(de.name) != 16 || strspn(de.name, "0123456789abcdef") != 16)
			continue;
		if ((fd = openat(dfd, de.name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		path = ph_entry_read(fd, &id);
		close(fd);
		/* an entry is named by the hash of the path it holds: one that is
		 * not was not written by sbx, and removes nothing */
		if (path && strcmp(ph_entry_name(path), de.name) == 0)
			vec_push(&found, (void *)path);
	}
	dir_close(d);
	/* children before their parents: a placeholder made inside another
	 * (.claude/commands in .claude) must go first, or the parent stays */
	for (i = 0; i + 1 < found.n; i++)
		for (size_t j = i + 1; j < found.n; j++)
			if (strlen(found.v[j]) > strlen(found.v[i])) {
				void *t = found.v[i];

				found.v[i] = found.v[j];
				found.v[j] = t;
			}
	for (i = 0; i < found.n; i++) {
		const char *name = ph_entry_name(found.v[i]);
		int fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && ph_retire(dfd, fd, name, -1))
			note("placeholder entry %s: left by a run that did not finish; reclaimed", name);
		close(fd);
	}
}

/* Cover target, under the registry lock, before bwrap binds anything.
 * A directory is locked shared, whoever made it: a placeholder of another
 * run (even of another runtime directory) is then never removed under this
 * run's mount. A target in this registry is shared through its entry. A
 * missing target (planned as a placeholder, or another run's placeholder
 * removed since this run's scan saw it) is made now, its intent recorded
 * first; unless lazy: a name sbx-init binds that the plan saw there, gone
 * now (or a directory above it gone), is left to sbx-init, which asks for
 * it again (run_rebind covers it then, as it is then). */
static void
ph_cover(int dfd, const char *target, enum phkind kind, bool lazy)
{
	const char *ename = ph_entry_name(target), *name, *epath;
	struct ph_held *h;
	struct ph_id id;
	struct stat st, now, here;	/* here: a run of another runtime root may have set it aside (the pool) */
	int fd = -1, pfd, dir = -1, tries;

	for (tries = 0; tries < 8 && dir < 0; tries++) {
		if ((pfd = open_parent_nofollow(target, &name)) < 0) {
			if (lazy && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
				return;
			die_hint("it changed on this machine while sbx was starting (another program works there); "
			    "run again", "cannot reach %s: %s", target, strerror(errno));
		}
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				die("cannot inspect %s: %s", target, strerror(errno));
			if (lazy) {
				close(pfd);
				return;
			}
			/* missing: make the placeholder, its intent recorded first */
			fd = openat(dfd, ename, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0 || flock(fd, LOCK_SH) < 0)
				die("cannot record the placeholder %s: %s", target, strerror(errno));
			memset(&id, 0, sizeof(id));
			id.kind = kind;
			id.ctime = (long long)time(NULL) - 1;
			if (ph_entry_write(fd, target, &id) < 0)
				die("cannot record the placeholder %s: %s", target, strerror(errno));
			if (ph_make(pfd, name, kind) < 0) {
				if (errno != EEXIST)
					die("cannot create the placeholder %s: %s", target, strerror(errno));
				/* another program made the name since fstatat: the
				 * entry is made to claim nothing (made, of no inode:
				 * ph_matches never matches it, so no removal touches
				 * what is there), and the next round covers that */
				id.made = true;
				(void)ph_entry_write(fd, target, &id);
				close(fd);
				close(pfd);
				fd = -1;
				continue;
			}
			if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				die("cannot create the placeholder %s: %s", target, strerror(errno));
			id.made = true;
			id.dev = (unsigned long long)st.st_dev;
			id.ino = (unsigned long long)st.st_ino;
			id.ctime = (long long)st.st_ctime;
			if (ph_entry_write(fd, target, &id) < 0)
				die("cannot record the placeholder %s: %s", target, strerror(errno));
			note("placeholder %s (%s, removed after the last run that covers it)", target,
			    placeholder_kinds[kind]);
		}
		close(pfd);
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
			break;	/* a link, a device: no run ever made or removes one */
		if ((dir = ph_node_lock(target, LOCK_SH)) < 0 && errno != ENOENT)
			break;	/* one we may not read (no run made it): nothing to share */
		/* it may have been removed while this waited: then it is not
		 * what was opened, and the next round makes it again */
		if (dir >= 0 && (fstat(dir, &now) < 0 || now.st_nlink == 0 || now.st_ino != st.st_ino ||
		    now.st_dev != st.st_dev || lstat(target, &here) < 0 || here.st_ino != now.st_ino ||
		    here.st_dev != now.st_dev)) {
			close(dir);
			dir = -1;
		}
		if (dir < 0 && fd >= 0)
			die_hint("run again", "the placeholder %s vanished while sbx was starting", target);
	}
	if (fd < 0 && (fd = openat(dfd, ename, O_RDWR | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		/* another run's placeholder, of this registry: share its entry */
		if (flock(fd, LOCK_SH) < 0)
			die("cannot lock the placeholder entry of %s: %s", target, strerror(errno));
		if ((epath = ph_entry_read(fd, &id)) && strcmp(epath, target) != 0)
			die("the placeholder registry entry %s names %s, not %s", ename, epath, target);
		note("placeholder %s: made by another run, covered here too", target);
	}
	if (dir < 0 && fd < 0 && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return;
	h = amalloc(sizeof(*h));
	h->path = target;
	h->dir = dir;
	h->fd = fd;
	if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) {
		h->id.dev = st.st_dev;
		h->id.ino = st.st_ino;
	}
	vec_push(&run_state.held, h);
}

/* What ph_cover holds at path (the last one), or NULL. */
static struct ph_held *
ph_held_at(const char *path)
{
	for (size_t i = run_state.held.n; i-- > 0;)
		if (strcmp(((struct ph_held *)run_state.held.v[i])->path, path) == 0)
			return run_state.held.v[i];
	return NULL;
}

/* Cover b->path again, under the registry lock: sbx-init could not bind
 * it as planned, because another program removed it, or put another file
 * or directory there, after ph_cover (run_rebind). What was held at it is
 * let go (it is gone); then what is there now is covered, or, where a
 * directory on the way is gone too, the first name missing on the way,
 * with one placeholder directory (nothing below it can then be made). A
 * placeholder is bound read-only, even where a pin was planned: what the
 * pin kept in place is gone. b is rewritten: the path to bind and what
 * must be there, or IB_NONE when nothing needs a bind (a path below one
 * bound read-only this round (covered, of const char *), or a name the
 * command could not create anyway). Dies when what is there cannot be
 * covered (a symlink now: its target would need the plan's rules). */
static void
ph_recover(int dfd, const struct plan *pl, struct init_bind *b, struct vec *covered)
{
	const char *d = b->path, *name;
	struct ph_held *h;
	struct stat st;
	bool gone;
	int pfd;

	for (size_t i = 0; i < covered->n; i++)
		if (path_within(b->path, covered->v[i])) {
			b->flags = IB_NONE;
			return;
		}
	open_parent_forget();
	while ((pfd = open_parent_nofollow(d, &name)) < 0) {
		if ((errno != ENOENT && errno != ENOTDIR && errno != ELOOP) || strcmp(path_dirname(d), "/") == 0)
			die_hint("run again", "cannot reach %s: %s", d, strerror(errno));
		d = path_dirname(d);
	}
	gone = fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;	/* a placeholder next */
	close(pfd);
	if (d != b->path && !plan_is_writable(pl, path_dirname(d))) {
		b->flags = IB_NONE;
		return;
	}
	/* what was held at the name is gone; below it too, when a directory
	 * above it went (what is below a name that was replaced is asked
	 * about on its own, if it changed) */
	for (size_t i = run_state.held.n; i-- > 0;) {
		h = run_state.held.v[i];
		if (d != b->path ? !path_within(h->path, d) : strcmp(h->path, d) != 0)
			continue;
		if (h->dir >= 0)
			close(h->dir);
		if (h->fd >= 0)
			close(h->fd);
		memmove(&run_state.held.v[i], &run_state.held.v[i + 1], (run_state.held.n - i - 1) * sizeof(void *));
		run_state.held.n--;
	}
	ph_cover(dfd, d, PH_DIR, false);
	if (!(h = ph_held_at(d)) || (!h->id.dev && !h->id.ino))
		die_hint("run it again when that program has finished", "%s changed on this machine while the sandbox "
		    "was being built (another program works there), into what sbx cannot cover (a symlink or a "
		    "device); the command did not run", d);
	/* a pin only of a directory that is not the placeholder just made */
	if (d != b->path || gone || h->dir < 0 || fstat(h->dir, &st) < 0 || !S_ISDIR(st.st_mode))
		b->flags &= ~(uint32_t)IB_PIN;
	b->path = (char *)d;
	b->dev = (uint64_t)h->id.dev;
	b->ino = (uint64_t)h->id.ino;
	if (!(b->flags & IB_PIN))
		vec_push(covered, (void *)d);	/* read-only: nothing below it needs a bind of its own */
}

/* Before bwrap: every mount target of the plan (parents first: the plan's
 * order), under the registry lock. */
static void
ph_acquire(const struct plan *pl)
{
	int dfd;
	size_t i;
	const char *last = "";

	if (strcmp(run_state.registry, run_state.root) != 0) {
		/* entries a killed run of an older sbx left in the runtime root,
		 * where the registry was before it moved to tmpfs: reclaimed the
		 * same way, under that registry's own lock */
		const char *registry = run_state.registry;

		run_state.registry = run_state.root;
		if ((dfd = ph_dir_open(false)) >= 0) {
			ph_lock();
			ph_reclaim(dfd);
			ph_unlock();
			close(dfd);
		}
		run_state.registry = registry;
	}
	ph_lock();
	dfd = ph_dir_open(true);
	ph_reclaim(dfd);
	for (i = 0; i < pl->mounts.n; i++) {
		const struct mount *m = pl->mounts.v[i];
		enum phkind kind = PH_DIR;	/* for a target another run's removal left missing */
		bool planned = false;

		if (m->kind == MK_BIND_FROM || m->kind == MK_REMOUNT_RO || strcmp(m->path, last) == 0)
			continue;	/* not a host path of the plan's, or seen */
		last = m->path;
		/* where the command cannot write, a placeholder of another run
		 * (an empty directory) that vanished would lift nothing: this run
		 * could not create anything there either */
		if (!plan_is_writable(pl, path_dirname(m->path)))
			continue;
		for (size_t j = 0; j < pl->placeholders.n; j++) {
			const struct placeholder *ph = pl->placeholders.v[j];

			if (strcmp(ph->path, m->path) == 0)
				kind = ph->kind;
			planned |= path_within(ph->path, m->path);
		}
		/* a name sbx-init binds, gone since the scan: sbx-init asks about
		 * it, and run_rebind covers the first name gone on its way once,
		 * where a placeholder here would make a tree of them (a pinned
		 * repository, removed, would come back as placeholders). Not when
		 * a placeholder is planned at it or below it: that one needs the
		 * directories above it (a killed run's .claude, reclaimed above,
		 * that held .claude/commands) */
		ph_cover(dfd, m->path, kind, !planned && (m->kind == MK_BIND_RO_INIT || m->kind == MK_BIND_RW_INIT));
	}
	close(dfd);
	ph_unlock();
}

/* After the run: give up each directory; the last run out removes a
 * placeholder (children first). */
static void
ph_release(void)
{
	size_t i;
	int dfd;

	if (!run_state.held.n)
		return;
	ph_lock();
	dfd = ph_dir_open(false);
	for (i = run_state.held.n; i-- > 0;) {
		struct ph_held *h = run_state.held.v[i];

		/* no other run of this registry holds the entry (they lock it
		 * only under the registry lock, which we hold) */
		if (h->fd >= 0 && dfd >= 0 && flock(h->fd, LOCK_EX | LOCK_NB) == 0)
			ph_retire(dfd, h->fd, ph_entry_name(h->path), h->dir);
		if (h->dir >= 0)
			close(h->dir);
		if (h->fd >= 0)
			close(h->fd);
	}
	run_state.held.n = 0;
	if (dfd >= 0)
		close(dfd);
	ph_unlock();
}

static void
run_cleanup(void)
{
	if (!run_state.root || getpid() != run_state.owner)
		return;
	if (run_state.plan)
		audit_after_run(run_state.plan);	/* if main did not (an exit after the command started) */
	ph_release();
	timing("placeholders released");
	if (run_state.run_dir)
		rm_tree(run_state.run_dir);
	if (run_state.tmpdir && !(run_state.tmp_id && run_state.sandbox_gone &&
	    tmpdir_spare_put(run_state.tmpdir, run_state.tmp_id)))
		rm_tree(run_state.tmpdir);
	if (run_state.bridge_dir)
		rm_tree(run_state.bridge_dir);
	run_state.run_dir = run_state.tmpdir = run_state.bridge_dir = NULL;
	timing("run directory removed, TMPDIR set aside");
}

/* Where sbx's runtime directory may be, in order of preference: BASE/sbx-UID
 * for each base. The shared bases come first and are fixed, not taken
 * from TMPDIR: every run, whatever its environment and policy, must know
 * them all to keep each out of its command's reach (a run whose policy
 * allows writing /tmp could otherwise plant files, a forged registry entry
 * or a symlink in place of a run's TMPDIR, in the runtime directory a run
 * with another policy uses). The private bases follow: places no other
 * user can create, for when another local user made sbx-UID in a shared
 * base first (a sticky /tmp: the person cannot even remove it). The
 * runtime directory in $XDG_RUNTIME_DIR (or systemd's /run/user/UID) and
 * in $HOME/.cache; each only when it is a directory of ours that no one
 * else can write. */
#define SBX_RUNTIME_PLACES	5
static const char *const runtime_shared_bases[] = { "/tmp", "/var/tmp" };

/* A private base: a directory of ours that no one else can write (its
 * mode is left alone: it is the person's). */
static bool
runtime_private_base(const char *base)
{
	struct stat st;

	return base && base[0] == '/' && lstat(base, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
	    !(st.st_mode & 022);
}

/* The candidate runtime directories, real paths, in order (see above);
 * shared[i] says which are in a shared base. Returns how many. */
static size_t
runtime_places(const char *out[SBX_RUNTIME_PLACES], bool shared[SBX_RUNTIME_PLACES])
{
	const char *home = getenv("HOME"), *xdg = getenv("XDG_RUNTIME_DIR");
	const char *priv[3] = { xdg, aprintf("/run/user/%u", (unsigned)getuid()), NULL };
	const char *name = aprintf("sbx-%u", (unsigned)getuid());
	size_t n = 0;

	for (size_t i = 0; i < LEN(runtime_shared_bases); i++) {
		char real[PATH_MAX];

		if (realpath(runtime_shared_bases[i], real)) {
			shared[n] = true;
			out[n++] = path_join(real, name);
		}
	}
	/* ~/.cache when the home is ours; made (0700) only when it is used */
	if (home && home[0] == '/' && runtime_private_base(home))
		priv[2] = path_join(home, ".cache");
	for (size_t i = 0; i < LEN(priv); i++) {
		char real[PATH_MAX];
		const char *root;
		bool dup = false;

		if (!priv[i] || priv[i][0] != '/')
			continue;
		if (realpath(priv[i], real) ? !runtime_private_base(real) : i != 2)
			continue;	/* .cache may be missing: made when used */
		root = path_join(realpath(priv[i], real) ? real : priv[i], name);
		for (size_t j = 0; j < n; j++)
			dup = dup || strcmp(out[j], root) == 0;
		if (!dup && n < SBX_RUNTIME_PLACES) {
			shared[n] = false;
			out[n++] = root;
		}
	}
	return n;
}

/* Make the runtime directory root if it is missing (and, for the one in
 * ~/.cache, .cache); repair one of ours (private_dir_ok). Returns whether
 * it is ours and private now; one that is not (another user made it
 * first) is passed over, with a note, never trusted and never removed. */
static bool
runtime_dir_make(const char *root)
{
	const char *base = path_dirname(root);

	if (mkdir(root, 0700) < 0 && errno == ENOENT && mkdir(base, 0700) == 0)
		mkdir(root, 0700);
	if (private_dir_at(root))
		return true;
	note("%s is not a private directory of uid %u (another user may have made it): not used", root,
	    (unsigned)getuid());
	return false;
}

/* Choose the runtime root: the first candidate that the command could not
 * write under the policy's own rules (pl0: the plan of the policy alone,
 * before any run path is added) and that is ours. Every other candidate the command could
 * write, or that exists (another run's, with its TMPDIRs), goes to covers,
 * to be hidden as the root is; with create, one the command could write is
 * made first, so that the command cannot make it. A policy that allows
 * writing inside any candidate is refused. Returns a real path. */
static const char *
runtime_root_pick(const struct plan *pl0, bool create, struct vec *covers)
{
	const char *chosen = NULL, *places[SBX_RUNTIME_PLACES];
	bool shared[SBX_RUNTIME_PLACES], foreign = false;
	struct buf tried = { 0 };
	size_t i, j, n = runtime_places(places, shared);

	for (i = 0; i < n; i++) {
		const char *root = places[i];
		struct stat st;
		bool writable;

		for (j = 0; !pl0->fs_disabled && j < pl0->nodes.n; j++) {
			const struct pnode *nd = pl0->nodes.v[j];

			if ((nd->rules & RB_WRITE) && path_within(nd->path, root))
				die_hint("remove that allow-write", "%s makes %s writable, inside sbx's runtime directory %s; "
				    "the command did not run", nd->why, nd->path, root);
		}
		/* a private place is a fallback: looked at only when a shared
		 * one was someone else's, or to be hidden when it exists or the
		 * command could make it. SECURITY: one the command could write
		 * is made and hidden even when missing: left missing, the
		 * command could make it (allow-write ~/.cache or ~) with a dead
		 * run's record, which a later run that falls back to it trusts
		 * (it renamed the person's git hooks outside every root) */
		writable = !pl0->fs_disabled && plan_is_writable(pl0, root);
		if (!shared[i] && !foreign && !writable && (chosen || lstat(root, &st) < 0))
			continue;
		if (!chosen && !writable) {
			if (!create ? lstat(root, &st) < 0 || (S_ISDIR(st.st_mode) && st.st_uid == getuid()) :
			    runtime_dir_make(root)) {
				chosen = root;
				if (foreign)
					note("runtime directory %s: a shared one was not ours", root);
				vec_push(&run_state.pool_roots, (void *)root);
				continue;
			}
			foreign = true;
			buf_printf(&tried, "%s%s (not ours)", tried.n ? ", " : "", root);
			continue;
		}
		if (writable) {
			note("runtime directory %s: the sandbox could write it; not used, and hidden", root);
			buf_printf(&tried, "%s%s", tried.n ? ", " : "", root);
		}
		if (writable && create ? runtime_dir_make(root) : lstat(root, &st) == 0) {
			vec_push(covers, (void *)root);
			/* hidden by every run: the pool may live there too */
			if (lstat(root, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() && !(st.st_mode & 077))
				vec_push(&run_state.pool_roots, (void *)root);
		}
	}
	if (!chosen)
		die_hint("narrow the allow-write that covers them, or remove a directory that is not yours", "no place "
		    "for sbx's runtime directory that is yours and that the sandbox cannot write (tried %s); the command "
		    "did not run", tried.p ? tried.p : "none");
	free(tried.p);
	run_state.root = chosen;
	return chosen;
}

/* Clean up after runs that died without doing it themselves (their
 * placeholders are reclaimed by ph_acquire): their run directories (in dir,
 * on tmpfs or in the runtime root), what the audit could not do for them,
 * and their TMPDIRs and bridge directories (in the runtime root). A name
 * is a run's: run-PID-START, tmp-PID-START, bridge-PID-START; the run is
 * dead when no process PID started at START. */
static void
runtime_recover_in(const char *dir)
{
	struct dir_stream *d = dir_open_fd(openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	struct dir_entry de;

	if (!d)
		return;
	while (dir_next(d, &de) == 1) {
		static const char *const kinds[] = { "run", "tmp", "bridge" };
		char kind[8];
		int pid;
		long long start;
		size_t k;
		struct stat st;

		if (sscanf(de.name, "%7[a-z]-%d-%lld", kind, &pid, &start) != 3)
			continue;
		for (k = 0; k < LEN(kinds) && strcmp(kind, kinds[k]) != 0; k++)
			;
		if (k == LEN(kinds) || pid == getpid() || plat_proc_start_time(pid) == start)
			continue;	/* not a run's, or alive */
		/* SECURITY: only what a run of ours made (a directory of ours; a
		 * run directory, 0700, that no one else can write: a TMPDIR's mode
		 * is the command's): a root that was open to others once (then
		 * chmod'ed 0700 by hand) may hold another user's run-1-1 with a
		 * forged record, whose audit renamed the person's git hooks */
		if (fstatat(dir_fd(d), de.name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != getuid() || (k == 0 && (st.st_mode & 022))) {
			note("%s/%s is not a directory a run of uid %u made: left alone", dir, de.name, (unsigned)getuid());
			continue;
		}
		if (k == 0) {
			note("cleaning up after an earlier run that did not finish (pid %d)", pid);
			audit_recover(path_join(dir, de.name));	/* what it could not audit (9b) */
		}
		rm_tree(path_join(dir, de.name));
	}
	dir_close(d);
}

static void
runtime_recover(const struct run_paths *rp)
{
	const char *run_root = path_dirname(rp->run_dir);

	runtime_recover_in(rp->runtime_root);
	if (strcmp(run_root, rp->runtime_root) != 0)
		runtime_recover_in(run_root);
}

/* allow-write of a directory that does not exist yet (~/.npm before npm
 * first ran; srt skips it and the tool then fails): make it, mode 0700,
 * when its parent is a directory, and say so. Before the plan, so it is a
 * writable root like any other. Not for globs; a path whose parent is
 * missing too is left to the planner's warning. */
static void
allow_write_make_missing(const struct policy *p)
{
	struct disk dk = { &real_disk_ops_now, NULL };
	struct vec areas = { 0 };
	size_t i;

	write_areas(&dk, p, &areas);
	for (i = 0; i < p->paths[PL_ALLOW_WRITE].n; i++) {
		const struct pathrule *r = p->paths[PL_ALLOW_WRITE].v[i];
		struct resolved res;
		const char *why;

		/* SECURITY: made at the real path the planner then binds, and
		 * never through a symlink a command could have made: mkdir(2)
		 * would follow it and make a directory outside every root, on
		 * the host (the planner skips such a root, and says so) */
		if ((!r->literal && has_glob_chars(r->path)) || dk.ops->lstat(dk.ctx, r->path, NULL) != FK_MISSING ||
		    resolve_path(&dk, r->path, &res, &why) < 0 || res.kind != FK_MISSING || !res.first_missing ||
		    strcmp(res.first_missing, res.path) != 0 || planted_link(&res, &areas, &why))
			continue;	/* there, its parent missing too, or reached through such a link */
		if (mkdir(res.path, 0700) < 0)
			warnx("allow-write %s: does not exist, and cannot be made: %s", r->path, strerror(errno));
		else
			warnx("allow-write %s: did not exist; made it (an empty directory, mode 0700)", r->path);
	}
}

/* The paths of this run that do not depend on the runtime root. */
static void
run_paths_init(struct run_paths *rp, const char *cwd)
{
	char real[PATH_MAX];
	const char *home = getenv("HOME");

	memset(rp, 0, sizeof(*rp));
	rp->cwd = cwd;
	{
		/* git's own order (git-config(1) FILES); the environment is the
		 * person's, as git will see it after the run */
		const char *g = getenv("GIT_CONFIG_GLOBAL"), *s = getenv("GIT_CONFIG_SYSTEM");
		const char *xdg = getenv("XDG_CONFIG_HOME");
		int n = 0;

		memset(rp->git_global, 0, sizeof(rp->git_global));
		if (!getenv("GIT_CONFIG_NOSYSTEM"))
			rp->git_global[n++] = s && *s ? s : "/etc/gitconfig";
		if (g && *g) {
			rp->git_global[n++] = g;
		} else if (home && *home == '/') {
			rp->git_global[n++] = xdg && *xdg == '/' ? path_join(xdg, "git/config") :
			    path_join(home, ".config/git/config");
			rp->git_global[n++] = path_join(home, ".gitconfig");
		}
	}
	rp->home = home && realpath(home, real) ? astrdup(real) : NULL;
}

/* Where the placeholder registry lives: SBX_REGISTRY_BASE/sbx-UID, a
 * private directory on tmpfs (/dev/shm), where there is one; else the
 * runtime root. WHY: the registry is a dozen small files made, rewritten
 * and removed every run, and on a disk filesystem each is a journal
 * transaction (tens of microseconds under load, ~1 ms a run in all); on
 * tmpfs they are memory. It needs to outlive a killed sbx (tmpfs does),
 * not a reboot: its entries were never synced to disk either.
 * SECURITY: no command ever sees the host's /dev/shm: bwrap mounts a /dev
 * of its own over /dev after every other mount (bw_render_options), so
 * not even a policy that allows writing /dev/shm reaches it, and no mount
 * has to hide it. A /dev/shm/sbx-UID that is not a private directory of
 * ours (another user made it first) is passed over, with a note: the
 * registry then stays in the runtime root, as before. */
static const char *
registry_root_pick(const char *root, bool create)
{
	static const char *volatile base = SBX_REGISTRY_BASE;	/* volatile: NULL on macOS, never passed on */
	const char *fast;
	struct stat st;

	if (!base || lstat(base, &st) < 0 || !S_ISDIR(st.st_mode))
		return root;
	fast = aprintf("%s/sbx-%u", base, (unsigned)getuid());
	if (!create && lstat(fast, &st) < 0)
		return fast;	/* --print=argv: where a run would make it */
	if ((create && mkdir(fast, 0700) < 0 && errno != EEXIST) || !private_dir_at(fast)) {
		note("%s is not a private directory of uid %u: the placeholder registry stays in %s", fast,
		    (unsigned)getuid(), root);
		return root;
	}
	return fast;
}

/* Once the runtime root is chosen: the run directory's names (nothing is
 * created but, with create, the registry's directory on tmpfs). */
static void
run_paths_set_root(struct run_paths *rp, const char *root, bool create)
{
	const char *id = aprintf("%d-%lld", (int)getpid(), plat_proc_start_time(getpid()));

	rp->runtime_root = root;
	/* the run's own files (the empty file, resolv.conf, the audit's
	 * record) on tmpfs with the registry, where nothing of the run is
	 * bound at its own path inside; the command's TMPDIR stays on disk, in
	 * the runtime root (a build's temporary files may be large), as does
	 * the bridge's directory, shown inside at its own path */
	rp->run_dir = aprintf("%s/run-%s", registry_root_pick(root, create), id);
	rp->tmpdir = aprintf("%s/tmp-%s", root, id);
	rp->empty_file = path_join(rp->run_dir, "empty");
	rp->resolv_conf = path_join(rp->run_dir, "resolv.conf");
}

/* Create the run directory, the private TMPDIR, the empty file, for the
 * DNS stub (dns) the resolv.conf it is named in, and the placeholders.
 * Dies on any failure (nothing has run yet; atexit removes what was made). */
static void
run_prepare(const struct run_paths *rp, const struct plan *pl, bool dns, bool tmp_spare)
{
	const char *run_dir = rp->run_dir;
	int fd;

	if (mkdir(run_dir, 0700) < 0)
		die("cannot create %s: %s", run_dir, strerror(errno));
	run_state.root = rp->runtime_root;
	run_state.registry = registry_root_pick(rp->runtime_root, true);
	run_state.run_dir = run_dir;
	run_state.tmpdir = rp->tmpdir;
	run_state.bridge_dir = rp->bridge_dir;
	run_state.owner = getpid();
	atexit(run_cleanup);
	audit_record(run_dir, pl);
	run_state.plan = pl;
	if (tmpdir_make(rp->tmpdir, tmp_spare) < 0)
		die("cannot create %s: %s", rp->tmpdir, strerror(errno));
	if (rp->bridge_dir && mkdir(rp->bridge_dir, 0700) < 0)
		die("cannot create %s: %s", rp->bridge_dir, strerror(errno));
	fd = openat(AT_FDCWD, rp->empty_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (fd < 0)
		die("cannot create %s: %s", rp->empty_file, strerror(errno));
	close(fd);
	if (dns) {
		/* no search list: a name is asked as the command spelled it */
		static const char conf[] = "# sbx: the DNS stub (network-dns)\nnameserver 127.0.0.1\n";

		fd = openat(AT_FDCWD, rp->resolv_conf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
		if (fd < 0 || write_all(fd, conf, sizeof(conf) - 1) < 0)
			die("cannot create %s: %s", rp->resolv_conf, strerror(errno));
		close(fd);
	}
	if (!pl->fs_disabled && SBX_PLACEHOLDERS)
		ph_acquire(pl);
}

/* ---- 9b. Repositories created during the run ------------------------
 *
 * A repository that is not there when the run starts cannot be protected
 * by a mount, and `git init` must keep working inside (agents create
 * projects); a repository deeper than the scan reaches is not protected at
 * all. So after the command exits (every process of the sandbox is gone by
 * then), before anyone can run git there, sbx looks at every repository in
 * the writable roots and NEUTRALISES what would run code later: hooks that
 * are not *.sample are renamed NAME.sbx-disabled, and a config holding a
 * setting of git_config_keys is rewritten without it (the original kept as
 * config.sbx-disabled; a name taken already gets .sbx-disabled.2 and on:
 * nothing is replaced or deleted). Each is reported on stderr with the one
 * command that puts it back. What a process outside the sandbox made
 * during the run is left as it is, and said (the attribution, below).
 * Only what the command could write (the plan says so) and what changed
 * during the run (ctime, which no process can set back) is touched:
 *   - a .git that was not there before the run (the planner lists every
 *     .git in the writable roots, at any depth; past the walk's bound, the
 *     statx birth time decides), a .git file or symlink changed during
 *     it, and the gitdir or common directory such a thing names: all of it;
 *   - any other repository: the entries that changed during the run.
 * Nothing else is renamed, rewritten or deleted. Finding them costs a stat
 * per directory: the scan's walk lists every .git and directory before the
 * run, and after it only the directories whose ctime changed are read
 * (audit_changed_dirs). A run killed by SIGKILL leaves its record (the
 * file "repos" in its run directory: the start time, the roots, the
 * repositories protected); the next sbx run audits for it first, walking
 * its roots whole.
 * Prevention was the other design: a mount cannot cover a name that does
 * not exist yet without a placeholder, and a placeholder .git would stop
 * `git init`; see README. */

/* ---- What the sandbox touched: the audit's attribution ----------------
 *
 * The audit acts only on what it can lay at the sandbox's door: a process
 * outside the sandbox (the person's own `git clone`, `git submodule add`,
 * `npx husky init` in their terminal while a long session runs) may make
 * or change a repository in a writable root too, and its hooks are the
 * person's. So sbx keeps, for the run (a session's whole life), every
 * path the sandbox's write-intent calls named inside the writable roots,
 * with where each led when a symlink lay on its way: the write observer
 * reads them while each call waits (10b), its own and every thread's, and
 * checks that the command could not make the kernel act elsewhere (the
 * checks are in 10b's comment). An entry the audit would act on (a hook,
 * a config, a todo list) is the sandbox's when one of those paths is the
 * entry, lies inside it, or is a directory above it (made, moved onto,
 * renamed away, a prepared repository renamed into place); a config's
 * also when one lies on a path its settings name (a husky directory, an
 * fsmonitor script: what 5c protects for a repository there before the
 * run). Only when none is, and sbx is sure of its records, does it leave
 * the entry as it is, and says so.
 *
 * Unsure means acting as without it, never the reverse: the observer off
 * or not started, dead, an event lost or malformed, or one it flagged (a
 * caller with threads, memory another process can write, a symlink made,
 * a directory moved, /proc); so a hostile command can only push sbx
 * towards acting. The record is bounded: past SBX_MAX_TOUCHED keys, paths
 * are kept to fewer components (a directory above a path stands for it:
 * more is taken as the sandbox's, never less).
 *
 * Cost: a key for each path and each directory above it (a hash set,
 * malloc'd: a session's daemon lives for hours), set once per path. */
#define SBX_MAX_TOUCHED	65536	/* keys ('=' paths, '<' directories above them) */

static struct attrib {
	const char *unsure;	/* why sbx cannot tell who made what; NULL: it can */
	char **slot;		/* "=PATH" (a call named it), "<PATH" (one named a path below) */
	size_t cap, n;
	size_t inodes;		/* of them "#DEV:INO" (attrib_record_inode) */
	int depth;		/* paths kept to this many components; 0: all of them */
} attrib = { .unsure = "the write observer did not run" };

static bool
attrib_has(const char *key)
{
	if (!attrib.cap)
		return false;
	for (size_t i = str_hash(key) & (attrib.cap - 1); attrib.slot[i]; i = (i + 1) & (attrib.cap - 1))
		if (strcmp(attrib.slot[i], key) == 0)
			return true;
	return false;
}

/* Add tag+path (owned by the set); false when it was there. */
static bool
attrib_put(char tag, const char *path, size_t len)
{
	char *key = malloc(len + 2);
	size_t i;

	if (!key)
		die("out of memory");
	key[0] = tag;
	memcpy(key + 1, path, len);
	key[len + 1] = '\0';
	if (attrib_has(key)) {
		free(key);
		return false;
	}
	if (2 * (attrib.n + 1) > attrib.cap) {	/* at most half full */
		size_t cap = attrib.cap ? attrib.cap * 2 : 1024;
		char **slot = calloc(cap, sizeof(*slot));

		if (!slot)
			die("out of memory");
		for (i = 0; i < attrib.cap; i++)
			if (attrib.slot[i]) {
				size_t j = str_hash(attrib.slot[i]) & (cap - 1);

				while (slot[j])
					j = (j + 1) & (cap - 1);
				slot[j] = attrib.slot[i];
			}
		free(attrib.slot);
		attrib.slot = slot;
		attrib.cap = cap;
	}
	for (i = str_hash(key) & (attrib.cap - 1); attrib.slot[i]; i = (i + 1) & (attrib.cap - 1))
		;
	attrib.slot[i] = key;
	attrib.n++;
	return true;
}

/* Record path (clean, absolute): itself, then each directory above it
 * until one is there already (those above it are too). */
static void
attrib_record(const char *path)
{
	size_t len = strlen(path);

	if (attrib.depth) {	/* kept to attrib.depth components */
		int d = 0;

		for (size_t i = 1; i < len; i++)
			if (path[i] == '/' && ++d == attrib.depth) {
				len = i;
				break;
			}
	}
	if (!attrib_put('=', path, len))
		return;
	while (len > 1) {
		while (len > 1 && path[len - 1] != '/')
			len--;
		if (len > 1)
			len--;	/* the '/' */
		if (!attrib_put('<', path, len))
			return;
	}
}

/* Past the bound: keep every path to one component fewer than the
 * deepest kept, until the set is half its bound. */
static void
attrib_coarsen(void)
{
	while (attrib.n > SBX_MAX_TOUCHED / 2) {
		char **old = attrib.slot;
		size_t cap = attrib.cap, i;
		int deepest = 0;

		for (i = 0; i < cap; i++)
			if (old[i] && old[i][0] == '=' && path_depth(old[i] + 1) > deepest)
				deepest = path_depth(old[i] + 1);
		if (deepest <= 1)
			return;	/* a key per directory at the top: few */
		attrib.depth = deepest - 1;
		attrib.slot = NULL;
		attrib.cap = attrib.n = 0;
		for (i = 0; i < cap; i++)
			if (old[i] && old[i][0] == '=')
				attrib_record(old[i] + 1);
			else if (old[i] && old[i][0] == '#')
				attrib_put('#', old[i] + 1, strlen(old[i] + 1));
		for (i = 0; i < cap; i++)
			free(old[i]);
		free(old);
	}
}

/* What a path names now (its device and inode, "#DEV:INO"), soon after
 * the call: a file the sandbox wrote that someone outside then moves
 * into a repository (`mv scratch/tool tool`) is still the sandbox's,
 * wherever it is. Bounded apart (a quarter of the set); past it, paths
 * alone. Taken late, it may name what came after: more is the
 * sandbox's, never less. */
static void
attrib_record_inode(const char *path)
{
	char key[48];
	struct stat st;

	if (attrib.inodes >= SBX_MAX_TOUCHED / 4 || lstat(path, &st) < 0)
		return;
	snprintf(key, sizeof(key), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	if (attrib_put('#', key, strlen(key)))
		attrib.inodes++;
}

/* Is dirfd/name (not followed) a file the sandbox wrote (attrib_record_inode)? */
static bool
attrib_touched_inode(int dirfd, const char *name)
{
	char key[48];
	struct stat st;

	if (!attrib.inodes || fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	snprintf(key, sizeof(key), "#%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	return attrib_has(key);
}

/* sbx can no longer tell who made what this run (the first reason is
 * kept): the record goes. */
static void
attrib_give_up(const char *why)
{
	if (attrib.unsure)
		return;
	attrib.unsure = why;
	for (size_t i = 0; i < attrib.cap; i++)
		free(attrib.slot[i]);
	free(attrib.slot);
	attrib.slot = NULL;
	attrib.cap = attrib.n = attrib.inodes = 0;
}

/* The run's observer is in place, for every process of the sandbox from
 * its start (watched), or it is not (why). */
static void
attrib_start(bool watched, const char *why)
{
	attrib.unsure = watched ? NULL : why;
}

/* One of the observer's records (10c takes them): what it named inside a
 * writable root, or why sbx can no longer vouch for the record. */
static void
attrib_event(const struct plan *pl, const struct obs_event *e)
{
	char norm[PATH_MAX];
	unsigned why = e->flags >> OBS_F_UNSURE_SHIFT;

	if (e->lost)
		attrib_give_up("the observer lost events (its socket was full)");
	if (attrib.unsure || (obs_calls[e->call].what != OW_PATH && obs_calls[e->call].what != OW_SHARE))
		return;	/* an address, a Unix socket's name, a session: no repository's entry */
	if (why) {
		attrib_give_up(obs_unsure_why[why < OU_COUNT ? why : OU_UNREAD]);
		return;
	}
	if ((e->flags & OBS_F_EXISTS) || path_normalize_lex(e->target, norm, sizeof(norm)) < 0)
		return;
	for (size_t i = 0; i < pl->audit_roots.n; i++)
		if (path_within(norm, pl->audit_roots.v[i])) {
			attrib_record(norm);
			attrib_record_inode(norm);
			if (attrib.n > SBX_MAX_TOUCHED)
				attrib_coarsen();
			return;
		}
}

/* Did the sandbox touch path (clean, absolute): name it, something inside
 * it, or a directory above it? */
static bool
attrib_touched(const char *path)
{
	char key[PATH_MAX + 2];
	size_t len = strlen(path);

	if (len + 2 > sizeof(key))
		return true;
	key[0] = '=';
	memcpy(key + 1, path, len + 1);
	if (attrib_has(key))
		return true;
	key[0] = '<';
	if (attrib_has(key))
		return true;
	key[0] = '=';
	for (size_t i = len; i > 1;) {	/* the directories above it, up to "/" */
		while (--i > 0 && path[i] != '/')
			;
		key[1 + (i ? i : 1)] = '\0';
		if (attrib_has(key))
			return true;
	}
	return false;
}

#define SBX_MAX_AUDIT_DEPTH	8	/* gitdir -> commondir -> modules/... */

struct audit {
	long long t0;			/* run start, ns since the epoch */
	const struct plan *pl;		/* NULL after a killed run: everything counts as writable */
	struct vec protected_gitdirs;	/* of const char *: protected during the run */
	struct vec seen;		/* of const char *: every .git in the roots before the run */
	bool seen_partial;		/* seen stopped at the walk's bound: birth times decide */
	struct vec node_modules;	/* of const char *: skipped, searched only if git ran (below) */
	struct vec dirs_seen;		/* of const char *: the directories listed before the run, or none */
	bool fresh_found;		/* a repository not there before the run was found */
	struct vec roots;		/* of const char *: the writable roots */
	struct vec read_only;		/* of const char *: without pl, what was bound read-only in them */
	bool allow_git_config;
	long walked;
	struct vec done;		/* of const char *: "F" or "-" + gitdir, audited */
	int neutralised;
	bool attribute;			/* this run's record says what the sandbox touched (attrib) */
	const char *home;		/* $HOME, for what a config names with ~/ */
};

/* What the audit did and left, a line each: on stderr as it goes, and
 * kept for a session's `sbx session stop` and the next exec (10f), since
 * a session's log goes with it. malloc'd. */
static struct buf audit_text;

/* A session's report kept for the next exec or run (session_audit_notice,
 * 10f), in ROOT/sessions: shown once, on stderr, then removed. Taken by a
 * rename first, so two execs starting at once do not both show it. */
#define SBX_AUDIT_NOTICES	"audit-notices"

static void
audit_notice_show(const char *sessions_dir)
{
	const char *from = path_join(sessions_dir, SBX_AUDIT_NOTICES), *taken = aprintf("%s.%d", from, (int)getpid());
	struct buf b = { 0 };

	if (renameat(AT_FDCWD, from, AT_FDCWD, taken) < 0)
		return;	/* none (ENOENT), or another exec took it */
	if (read_file(taken, 1 << 20, &b) == 0 && b.n)
		(void)write_all(2, b.p, b.n);
	unlinkat(AT_FDCWD, taken, 0);
	free(b.p);
}

/* ctime and, where the file system records it, birth time (-1 if not) of
 * dirfd/name in ns, not following a symlink. False if it is not there. */
static bool
audit_times(int dirfd, const char *name, long long *ctime, long long *btime)
{
	return plat_file_times(dirfd, name, ctime, btime);
}

static bool
audit_changed(const struct audit *a, const char *path)
{
	long long c, b;

	return audit_times(AT_FDCWD, path, &c, &b) && c >= a->t0;
}

static bool
audit_in_roots(const struct audit *a, const char *path)
{
	size_t i;

	for (i = 0; i < a->roots.n; i++)
		if (path_within(path, a->roots.v[i]))
			return true;
	return false;
}

/* Could the command have written path? Not if the plan kept it read-only. */
static bool
audit_writable(const struct audit *a, const char *path)
{
	size_t i;

	if (a->pl)
		return plan_is_writable(a->pl, path);
	for (i = 0; i < a->read_only.n; i++)
		if (path_within(path, a->read_only.v[i]))
			return false;
	return audit_in_roots(a, path);
}

/* One line of the audit's report (audit_text), control bytes shown as
 * '?': the command chose the names, and no line of its own may reach
 * sbx's stderr. */
static void
audit_say(const struct buf *line)
{
	struct buf shown = { 0 };

	report_sanitise(line->p, &shown);
	buf_putc(&shown, '\0');
	warnx("%s", shown.p);
	buf_printf(&audit_text, "sbx: %s\n", shown.p);
	free(shown.p);
}

/* Act on the entry at path, dirfd/name (a hook, hooks, a config, a todo
 * list)? Yes when the sandbox touched it or a directory above it, or wrote
 * the file it is now, or when sbx cannot tell (attrib); *why says which,
 * for the report. */
static bool
audit_acts(const struct audit *a, const char *path, int dirfd, const char *name, const char **why)
{
	if (!a->attribute)
		*why = "sbx cannot tell who made it: the run that made it was killed before its audit";
	else if (attrib.unsure)
		*why = aprintf("sbx cannot tell who made it: %s", attrib.unsure);
	else if (attrib_touched(path) || attrib_touched_inode(dirfd, name))
		*why = "made in the sandbox";
	else
		return false;
	return true;
}

/* A path a config names (written as it is, so perhaps through a symlink):
 * touched as written, or where it leads now? */
static bool
audit_named_touched(const char *p)
{
	char norm[PATH_MAX], real[PATH_MAX];

	if (path_normalize_lex(p, norm, sizeof(norm)) < 0 || attrib_touched(norm))
		return true;
	if (realpath(norm, real))
		return attrib_touched(real);
	return realpath(path_dirname(norm), real) && attrib_touched(path_join(real, strrchr(norm, '/') + 1));
}

/* Does a setting in drop (of the config at cfg) name a path the sandbox
 * touched: its hooks directory (husky's too), an included file, a
 * command's script? What 5c makes read-only for a repository there
 * before the run; this one's was made during it, by someone else. */
static bool
audit_config_names_touched(const struct audit *a, const char *cfg, const struct vec *drop)
{
	const char *gd = path_dirname(cfg), *tops[2] = { gd, NULL }, *p;

	if (strcmp(strrchr(gd, '/') + 1, ".git") == 0)
		tops[1] = path_dirname(gd);	/* the work tree: relative commands and hooksPath */
	for (size_t i = 0; i < drop->n; i++) {
		const struct gitcfg_entry *e = drop->v[i];
		const struct git_key *k = git_key_of(e);
		struct vec runs = { 0 };

		if (!k || !e->value)
			continue;
		if (k->kind == GV_INCLUDE && (p = gitcfg_path(e->value, gd, a->home)) && audit_named_touched(p))
			return true;
		if (k->kind == GV_CMD)
			git_cmd_words(e->value, gitcfg_is(e, "alias", NULL, "*") && e->value[0] != '!', &runs);
		for (size_t t = 0; t < LEN(tops) && tops[t]; t++) {
			if (k->kind == GV_HOOKS && (p = gitcfg_path(e->value, tops[t], a->home)) &&
			    (audit_named_touched(p) || (strcmp(strrchr(p, '/') + 1, "_") == 0 &&
			    audit_named_touched(path_dirname(p)))))	/* husky: .husky/_ runs .husky/<hook> */
				return true;
			for (size_t j = 0; j < runs.n; j++)
				if ((p = gitcfg_path(runs.v[j], tops[t], a->home)) && audit_named_touched(p))
					return true;
		}
	}
	return false;
}

/* The entry at path is left as it is (audit_acts said no). */
static void
audit_left(const char *path, const char *what)
{
	struct buf line = { 0 };

	buf_printf(&line, "git: left %s as it is: made outside the sandbox during the run (%s)", path, what);
	buf_putc(&line, '\0');
	audit_say(&line);
	free(line.p);
}

/* The entry at path was neutralised: what was done, why (audit_acts), and
 * the one command that puts it back (the original is now path's
 * directory's `kept`). */
static void
audit_report(struct audit *a, const char *path, const char *what, const char *why, const char *kept)
{
	struct buf line = { 0 };

	a->neutralised++;
	buf_printf(&line, "git: neutralised %s: %s (it would run code outside the sandbox later; %s); restore: mv ",
	    path, what, why);
	buf_put_shell_quoted(&line, path_join(path_dirname(path), kept));
	buf_putc(&line, ' ');
	buf_put_shell_quoted(&line, path);
	buf_putc(&line, '\0');
	audit_say(&line);
	free(line.p);
	if (run_state.store) {
		struct violation v = { VK_AUDIT, "neutralised", path, 0, what, 0, NULL, wall_ms(), 0, 0 };

		vstore_add(run_state.store, &v);
	}
}

/* The name dir/name is renamed to: name.sbx-disabled, or .sbx-disabled.N
 * when that is taken (an earlier run's), so nothing is ever replaced. */
static const char *
audit_kept_name(int dirfd, const char *name)
{
	struct stat st;
	const char *kept = aprintf("%s.sbx-disabled", name);

	for (int i = 2; i < 100 && fstatat(dirfd, kept, &st, AT_SYMLINK_NOFOLLOW) == 0; i++)
		kept = aprintf("%s.sbx-disabled.%d", name, i);
	return kept;
}

/* Rename dir/name to its kept name (*kept), not following symlinks. */
static bool
audit_disable(int dirfd, const char *name, const char **kept)
{
	*kept = audit_kept_name(dirfd, name);
	return renameat(dirfd, name, dirfd, *kept) == 0;
}

static void
audit_hooks(struct audit *a, const char *gd, bool force)
{
	const char *hooks = path_join(gd, "hooks");
	struct stat st;
	int fd;
	struct dir_stream *d;
	struct dir_entry de;
	struct vec names = { 0 };
	size_t i;

	const char *name, *kept, *why;
	int pfd;

	/* SECURITY: every step through a directory opened without following a
	 * link (open_parent_nofollow): the audit runs with the person's rights,
	 * and a concurrent sandboxed command could swap a directory of its
	 * root for a link to steer a rename or a rewrite outside */
	if (!audit_writable(a, hooks) || (pfd = open_parent_nofollow(hooks, &name)) < 0)
		return;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		close(pfd);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {	/* a symlink or a file: hooks from elsewhere */
		if (!force && !audit_changed(a, hooks))
			;
		else if (!audit_acts(a, hooks, pfd, name, &why))
			audit_left(hooks, "hooks, not a directory");
		else if (audit_disable(pfd, name, &kept))
			audit_report(a, hooks, aprintf("not a directory; renamed %s", kept), why, kept);
		close(pfd);
		return;
	}
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(pfd);
	if (!(d = dir_open_fd(fd)))
		return;
	while (dir_next(d, &de) == 1) {
		size_t n = strlen(de.name);
		long long c, b;

		if (!strcmp(de.name, ".") || !strcmp(de.name, "..") ||
		    (n > 7 && !strcmp(de.name + n - 7, ".sample")) || strstr(de.name, ".sbx-disabled"))
			continue;
		if (force || (audit_times(dir_fd(d), de.name, &c, &b) && c >= a->t0))
			vec_push(&names, astrdup(de.name));
	}
	for (i = 0; i < names.n; i++) {
		const char *hook = path_join(hooks, names.v[i]);

		if (!audit_acts(a, hook, dir_fd(d), names.v[i], &why))
			audit_left(hook, "a hook");
		else if (audit_disable(dir_fd(d), names.v[i], &kept))
			audit_report(a, hook, aprintf("hook renamed %s", kept), why, kept);
	}
	dir_close(d);
}

/* A git config value, quoted so git reads back exactly it. */
static void
gitcfg_put_value(struct buf *b, const char *v)
{
	buf_putc(b, '"');
	for (; *v; v++)
		switch (*v) {
		case '\\': buf_puts(b, "\\\\"); break;
		case '"': buf_puts(b, "\\\""); break;
		case '\n': buf_puts(b, "\\n"); break;
		case '\t': buf_puts(b, "\\t"); break;
		case '\b': buf_puts(b, "\\b"); break;
		default: buf_putc(b, *v);
		}
	buf_putc(b, '"');
}

/* Write entries back as a config file (pure). */
static void
gitcfg_write(const struct vec *entries, struct buf *b)
{
	const struct gitcfg_entry *prev = NULL;
	size_t i;

	for (i = 0; i < entries->n; i++) {
		const struct gitcfg_entry *e = entries->v[i];

		if (!prev || strcmp(prev->section, e->section) != 0 || !prev->sub != !e->sub ||
		    (e->sub && strcmp(prev->sub, e->sub) != 0)) {
			buf_printf(b, "[%s", e->section);
			if (e->sub) {
				const char *s;

				buf_puts(b, " \"");
				for (s = e->sub; *s; s++) {
					if (*s == '"' || *s == '\\')
						buf_putc(b, '\\');
					buf_putc(b, *s);
				}
				buf_putc(b, '"');
			}
			buf_puts(b, "]\n");
		}
		buf_printf(b, "\t%s", e->key);
		if (e->value) {
			buf_puts(b, " = ");
			gitcfg_put_value(b, e->value);
		}
		buf_putc(b, '\n');
		prev = e;
	}
}

/* Rewrite a config without the settings that run something. */
static void
audit_config(struct audit *a, const char *path, bool force)
{
	struct stat st;
	struct buf b = { 0 }, out = { 0 }, keys = { 0 };
	struct vec all = { 0 }, keep = { 0 }, drop = { 0 };
	int fd, line, pfd;
	ssize_t r;
	size_t i;
	const char *base, *tmp, *kept, *why;

	/* through a directory opened without following a link (audit_hooks) */
	if (!audit_writable(a, path) || (pfd = open_parent_nofollow(path, &base)) < 0)
		return;
	tmp = aprintf("%s.sbx-new", base);
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 || (!force && !audit_changed(a, path)))
		goto out;
	if (!S_ISREG(st.st_mode)) {
		if (!audit_acts(a, path, pfd, base, &why))
			audit_left(path, "a config that is not a regular file");
		else if (audit_disable(pfd, base, &kept))
			audit_report(a, path, aprintf("not a regular file; renamed %s", kept), why, kept);
		goto out;
	}
	fd = openat(pfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		goto out;
	buf_grow(&b, (size_t)st.st_size + 1);
	while ((r = read(fd, b.p + b.n, b.cap - b.n - 1)) > 0 && b.n + (size_t)r <= SBX_MAX_GITCFG_BYTES) {
		b.n += (size_t)r;
		buf_grow(&b, 4096);
	}
	close(fd);
	b.p[b.n] = '\0';
	if (r != 0 || gitcfg_parse(b.p, b.n, path, &all, &line) < 0) {
		free(b.p);
		if (!audit_acts(a, path, pfd, base, &why))
			audit_left(path, "a config sbx cannot read");
		else if (audit_disable(pfd, base, &kept))
			audit_report(a, path, aprintf("a config sbx cannot read; renamed %s", kept), why, kept);
		goto out;
	}
	free(b.p);
	for (i = 0; i < all.n; i++)
		vec_push(git_key_runs(all.v[i], git_key_of(all.v[i])) ? &drop : &keep, all.v[i]);
	if (!drop.n)
		goto out;
	if (!audit_acts(a, path, pfd, base, &why)) {
		if (audit_config_names_touched(a, path, &drop)) {
			why = "it names what the sandbox wrote";
		} else {
			for (i = 0; i < drop.n; i++) {
				const struct gitcfg_entry *e = drop.v[i];

				buf_printf(&keys, "%s%s.%s%s%s", i ? ", " : "", e->section, e->sub ? e->sub : "",
				    e->sub ? "." : "", e->key);
			}
			buf_putc(&keys, '\0');
			audit_left(path, aprintf("a config with %s", keys.p));
			free(keys.p);
			goto out;
		}
	}
	gitcfg_write(&keep, &out);
	kept = audit_kept_name(pfd, base);
	fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 0666);
	if (fd < 0 || write_all(fd, out.p ? out.p : "", out.n) < 0 || close(fd) < 0 ||
	    renameat(pfd, base, pfd, kept) < 0 || renameat(pfd, tmp, pfd, base) < 0) {
		warnx("git: cannot rewrite %s (%s); renaming it %s", path, strerror(errno), kept);
		unlinkat(pfd, tmp, 0);
		if (audit_disable(pfd, base, &kept))
			audit_report(a, path, aprintf("renamed %s", kept), why, kept);
		free(out.p);
		goto out;
	}
	free(out.p);
	for (i = 0; i < drop.n; i++) {
		const struct gitcfg_entry *e = drop.v[i];

		audit_report(a, path, aprintf("removed %s.%s%s%s (%s; the file as it was is %s)",
		    e->section, e->sub ? e->sub : "", e->sub ? "." : "", e->key, git_key_of(e)->why, kept), why, kept);
	}
out:
	close(pfd);
}

/* A rebase or cherry-pick left stopped runs the "exec" lines of its todo
 * list on the person's `git rebase --continue`: comment them out, in a todo
 * list the command could write and changed during the run (the original
 * kept as NAME.sbx-disabled). The rest of the list is kept as it was. */
static void
audit_todo(struct audit *a, const char *path)
{
	struct stat st;
	struct buf b = { 0 }, out = { 0 };
	char *line, *save;
	const char *base, *tmp, *kept, *why;
	int fd, n = 0, pfd;

	/* through a directory opened without following a link (audit_hooks) */
	if (!audit_writable(a, path) || (pfd = open_parent_nofollow(path, &base)) < 0)
		return;
	tmp = aprintf("%s.sbx-new", base);
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 || !audit_changed(a, path)) {
		close(pfd);
		return;
	}
	fd = S_ISREG(st.st_mode) ? openat(pfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
	if (fd >= 0) {
		ssize_t r;

		buf_grow(&b, 4096);
		while ((r = read(fd, b.p + b.n, b.cap - b.n - 1)) > 0 && b.n + (size_t)r <= SBX_MAX_GITCFG_BYTES) {
			b.n += (size_t)r;
			buf_grow(&b, 4096);
		}
		b.p[b.n] = '\0';
		close(fd);
		if (r != 0)
			fd = -1;
	}
	if (fd < 0) {
		free(b.p);
		if (!audit_acts(a, path, pfd, base, &why))
			audit_left(path, "a todo list sbx cannot read");
		else if (audit_disable(pfd, base, &kept))
			audit_report(a, path, "a todo list sbx cannot read; renamed, so the rebase stops there", why, kept);
		close(pfd);
		return;
	}
	for (line = b.p ? strtok_r(b.p, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		const char *w = line + strspn(line, " \t");
		size_t len = strcspn(w, " \t");

		if ((len == 4 && strncmp(w, "exec", 4) == 0) || (len == 1 && w[0] == 'x')) {
			buf_puts(&out, "# sbx-disabled: ");
			n++;
		}
		buf_printf(&out, "%s\n", line);
	}
	free(b.p);
	if (n && !audit_acts(a, path, pfd, base, &why)) {
		audit_left(path, "a todo list with exec lines");
	} else if (n && ((fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0 ||
	    write_all(fd, out.p, out.n) < 0 || close(fd) < 0 ||
	    renameat(pfd, base, pfd, (kept = audit_kept_name(pfd, base))) < 0 || renameat(pfd, tmp, pfd, base) < 0)) {
		unlinkat(pfd, tmp, 0);
		if (audit_disable(pfd, base, &kept))
			audit_report(a, path, "a todo list sbx could not rewrite; renamed, so the rebase stops there", why,
			    kept);
	} else if (n) {
		audit_report(a, path, aprintf("%d exec line%s commented out (git rebase --continue runs them)", n,
		    n == 1 ? "" : "s"), why, kept);
	}
	free(out.p);
	close(pfd);
}

/* A rebase or cherry-pick left stopped also names the merge strategy its
 * --continue runs: git runs "git-merge-" + that name, and a name holding a
 * "/" is a path from the work tree's top (`../x` runs git-merge-../x, a
 * directory and a script the command can make there). A strategy file
 * (rebase-merge/strategy, the name; sequencer/opts, git config with
 * options.strategy) the command could write, changed during the run and
 * naming anything but git's own strategies, is renamed NAME.sbx-disabled:
 * the --continue then merges with git's default. */
static void
audit_strategy(struct audit *a, const char *path, bool config)
{
	static const char *const own[] = { "ort", "recursive", "resolve", "octopus", "ours", "subtree" };
	struct stat st;
	struct buf b = { 0 };
	struct vec entries = { 0 }, names = { 0 };
	const char *base, *kept, *why;
	int fd, pfd, line;
	ssize_t r = -1;
	size_t i, j, foreign = 0;

	/* through a directory opened without following a link (audit_hooks) */
	if (!audit_writable(a, path) || (pfd = open_parent_nofollow(path, &base)) < 0)
		return;
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 || !audit_changed(a, path)) {
		close(pfd);
		return;
	}
	fd = S_ISREG(st.st_mode) ? openat(pfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
	if (fd >= 0) {
		buf_grow(&b, 4096);
		while ((r = read(fd, b.p + b.n, b.cap - b.n - 1)) > 0 && b.n + (size_t)r <= SBX_MAX_GITCFG_BYTES) {
			b.n += (size_t)r;
			buf_grow(&b, 4096);
		}
		b.p[b.n] = '\0';
		close(fd);
	}
	if (r != 0) {
		foreign = 1;	/* not a file, or one sbx cannot read: its name is unknown */
	} else if (!config) {
		b.p[strcspn(b.p, "\r\n")] = '\0';
		vec_push(&names, b.p);
	} else if (gitcfg_parse(b.p, b.n, path, &entries, &line) < 0) {
		foreign = 1;
	} else {
		for (i = 0; i < entries.n; i++)
			if (gitcfg_is(entries.v[i], "options", "", "strategy"))
				vec_push(&names, (void *)((const struct gitcfg_entry *)entries.v[i])->value);
	}
	for (i = 0; i < names.n; i++) {
		const char *n = names.v[i] ? names.v[i] : "";

		for (j = 0; j < LEN(own) && strcmp(n, own[j]) != 0; j++)
			;
		foreign += j == LEN(own);
	}
	if (foreign && !audit_acts(a, path, pfd, base, &why))
		audit_left(path, "a merge strategy that is not one of git's own");
	else if (foreign && audit_disable(pfd, base, &kept))
		audit_report(a, path, aprintf("names a merge strategy that is not one of git's own, a program `git %s "
		    "--continue` would run; renamed %s, so git's default is used", config ? "cherry-pick" : "rebase",
		    kept), why, kept);
	free(b.p);
	close(pfd);
}

/* The path a gitdir pointer names ("gitdir: X" in a .git file, the text of
 * commondir), relative to dir, as a real path; NULL if none. */
static const char *
audit_pointer(const char *file, const char *dir, const char *prefix)
{
	char buf[PATH_MAX + 16], real[PATH_MAX];
	int fd = openat(AT_FDCWD, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;
	char *p;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	p = buf;
	if (prefix) {
		if (strncmp(p, prefix, strlen(prefix)) != 0)
			return NULL;
		p += strlen(prefix);
		while (*p == ' ')
			p++;
	}
	if (!*p || !realpath(*p == '/' ? p : path_join(dir, p), real))
		return NULL;
	return astrdup(real);
}

/* The gitdirs under worktrees/ and modules/ (a submodule's name may hold "/") */
static void
audit_children(struct audit *a, const char *dir, bool modules, bool force, bool parent_protected, int depth)
{
	struct dir_stream *d = dir_open_fd(openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	struct dir_entry de;
	struct vec subs = { 0 };
	size_t i;

	if (!d)
		return;
	while (dir_next(d, &de) == 1)
		if (de.type == DT_DIR && strcmp(de.name, ".") && strcmp(de.name, ".."))
			vec_push(&subs, path_join(dir, de.name));
	dir_close(d);
	for (i = 0; i < subs.n && depth < SBX_MAX_AUDIT_DEPTH; i++) {
		const char *s = subs.v[i];
		struct stat st;

		if (modules && lstat(path_join(s, "HEAD"), &st) < 0)
			audit_children(a, s, true, force, parent_protected, depth + 1);
		else
			audit_gitdir(a, s, force || (parent_protected && !str_listed(&a->protected_gitdirs, s)),
			    depth + 1);
	}
}

/* Audit one repository directory (a real path). */
static void
audit_gitdir(struct audit *a, const char *gd, bool force, int depth)
{
	struct stat st;
	bool prot = str_listed(&a->protected_gitdirs, gd);
	const char *key = aprintf("%c%s", force ? 'F' : '-', gd), *common;

	if (depth > SBX_MAX_AUDIT_DEPTH || str_listed(&a->done, key) || str_listed(&a->done, aprintf("F%s", gd)) ||
	    lstat(gd, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	vec_push(&a->done, (void *)key);
	/* SECURITY: a repository there before the run is never audited whole,
	 * however it is reached (a new `.git -> ../.git` symlink): that would
	 * let a command disable the person's own hooks (a secret scanner, say).
	 * Only what changed in it is. */
	if (prot || str_listed(&a->seen, gd))
		force = false;
	audit_hooks(a, gd, force);
	if (!(prot && a->allow_git_config))
		audit_config(a, path_join(gd, "config"), force);
	audit_config(a, path_join(gd, "config.worktree"), force);
	audit_todo(a, path_join(gd, "rebase-merge/git-rebase-todo"));
	audit_todo(a, path_join(gd, "sequencer/todo"));
	audit_strategy(a, path_join(gd, "rebase-merge/strategy"), false);
	audit_strategy(a, path_join(gd, "sequencer/opts"), true);
	common = audit_pointer(path_join(gd, "commondir"), gd, NULL);
	if (common && strcmp(common, gd) != 0 && !str_listed(&a->protected_gitdirs, common) &&
	    audit_in_roots(a, common))
		audit_gitdir(a, common, force || audit_changed(a, path_join(gd, "commondir")), depth + 1);
	audit_children(a, path_join(gd, "worktrees"), false, force, prot, depth);
	audit_children(a, path_join(gd, "modules"), true, force, prot, depth);
}

/* A .git entry found in a root: a repository, or a pointer to one. */
static void
audit_dotgit(struct audit *a, const char *dir, unsigned char type, bool in_nm)
{
	const char *dotgit = path_join(dir, ".git"), *gd;
	char real[PATH_MAX];
	bool fresh = !str_listed(&a->seen, dotgit);
	long long c, b;

	/* SECURITY: new is "not there before the run", whatever its times say
	 * (a directory prepared in an earlier run and renamed to .git keeps
	 * its birth time); only where the list could not reach (past the
	 * walk's bound, in node_modules) do times decide */
	if (fresh && (a->seen_partial || in_nm) && audit_times(AT_FDCWD, dotgit, &c, &b))
		fresh = b >= 0 ? b >= a->t0 : c >= a->t0;
	a->fresh_found |= fresh;
	if (type == DT_DIR) {
		audit_gitdir(a, dotgit, fresh, 0);
		return;
	}
	gd = type == DT_REG ? audit_pointer(dotgit, dir, "gitdir:") :
	    type == DT_LNK && realpath(dotgit, real) ? astrdup(real) : NULL;
	/* a pointer outside the roots names a repository the command could
	 * not write: what runs there is the person's own */
	if (gd && audit_in_roots(a, gd))
		audit_gitdir(a, gd, fresh || audit_changed(a, dotgit), 0);
}

/* Every .git in a root, at any depth: a repository made anywhere can be
 * reached later (a gitlink in the outer index makes `git status` run git
 * in it). node_modules directories (most of a large tree, and skipped by
 * srt's scan too) are kept for later unless in_nm. path is a PATH_MAX
 * buffer holding dirfd's path; fd is owned. */
static void
audit_walk(struct audit *a, int fd, char *path, int depth, bool in_nm)
{
	struct dir_stream *d;
	struct dir_entry de;
	size_t len = strlen(path);
	struct stat st;

	/* SECURITY: a repository need not be named .git: a bare one made in
	 * one run (or a .git renamed away) is reached by a .git file a later
	 * run writes, in another project even, and its config then runs on the
	 * person's git status there. A directory git would take for a gitdir
	 * (HEAD, objects/, refs/) is audited as one: whole when it is new (the
	 * walk below a directory that changed only reaches new ones; a walk of
	 * a whole root goes by its times), else what changed in it. */
	if (fstatat(fd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    fstatat(fd, "objects", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
	    fstatat(fd, "refs", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
		long long c, b;
		bool fresh = a->dirs_seen.n && !a->seen_partial ? true :
		    audit_times(fd, ".", &c, &b) && ((b >= 0 && b >= a->t0) || c >= a->t0);

		close(fd);
		audit_gitdir(a, astrdup(path), fresh, 0);
		return;
	}
	if (!(d = dir_open_fd(fd)))
		return;
	while (dir_next(d, &de) == 1) {
		unsigned char type = de.type;

		if (!strcmp(de.name, ".") || !strcmp(de.name, ".."))
			continue;
		if (++a->walked == SBX_MAX_WALK_ENTRIES)
			warnx("git: the search for repositories made during the run stopped after %d entries; "
			    "repositories beyond were not audited", SBX_MAX_WALK_ENTRIES);
		if (a->walked >= SBX_MAX_WALK_ENTRIES)
			break;
		if (type == DT_UNKNOWN)
			type = fstatat(dir_fd(d), de.name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? DT_UNKNOWN :
			    S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : S_ISLNK(st.st_mode) ?
			    DT_LNK : DT_UNKNOWN;
		if (len + strlen(de.name) + 2 >= PATH_MAX)
			continue;
		if (!strcmp(de.name, ".git")) {
			audit_dotgit(a, path, type, in_nm);
			continue;
		}
		if (type == DT_DIR && !in_nm && !strcmp(de.name, "node_modules")) {
			vec_push(&a->node_modules, path_join(path, de.name));
			continue;
		}
		if (type == DT_DIR && depth < 256) {
			int sub = openat(dir_fd(d), de.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub < 0)
				continue;
			snprintf(path + len, PATH_MAX - len, "%s%s", len > 1 ? "/" : "", de.name);
			audit_walk(a, sub, path, depth + 1, in_nm);
			path[len] = '\0';
		}
	}
	dir_close(d);
}

/* Is name in dir (open at dfd) a placeholder directory this run made and
 * still holds, the very one (device and inode)? It was bound read-only
 * inside, a mount point the command could neither write into nor rename
 * away: nothing there for the audit to read. A directory swapped in at
 * its name from outside is another inode, and is walked. */
static bool
audit_own_placeholder(int dfd, const char *path, const char *name)
{
	struct stat here, held;

	for (size_t i = 0; i < run_state.held.n; i++) {
		const struct ph_held *h = run_state.held.v[i];

		if (h->dir >= 0 && strcmp(h->path, path) == 0)
			return fstat(h->dir, &held) == 0 && fstatat(dfd, name, &here, AT_SYMLINK_NOFOLLOW) == 0 &&
			    here.st_dev == held.st_dev && here.st_ino == held.st_ino;
	}
	return false;
}

/* A directory that changed during the run: each .git in it, and, walked
 * whole, each subdirectory that was not there before (but the run's own
 * placeholders: sbx made them after the walk before the run, and renaming
 * one in from the pool is what changed the directory). */
static void
audit_read_changed(struct audit *a, const char *dir, const struct strset *known)
{
	char path[PATH_MAX];
	int fd = openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dir_stream *d = dir_open_fd(fd);
	struct dir_entry de;

	if (!d)
		return;
	while (dir_next(d, &de) == 1) {
		const char *sub = path_join(dir, de.name);
		struct stat st;
		unsigned char type = de.type;

		if (!strcmp(de.name, ".") || !strcmp(de.name, ".."))
			continue;
		if (type == DT_UNKNOWN)
			type = fstatat(dir_fd(d), de.name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? DT_UNKNOWN :
			    S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : S_ISLNK(st.st_mode) ?
			    DT_LNK : DT_UNKNOWN;
		if (!strcmp(de.name, ".git")) {
			audit_dotgit(a, dir, type, false);
		} else if (type == DT_DIR && !strset_has(known, sub) && !audit_own_placeholder(dir_fd(d), sub, de.name)) {
			if (!strcmp(de.name, "node_modules")) {
				vec_push(&a->node_modules, (void *)sub);
			} else if (strlen(sub) < sizeof(path) &&
			    (fd = openat(dir_fd(d), de.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
				str_copy(path, sub, sizeof(path));
				audit_walk(a, fd, path, 1, false);
			}
		}
	}
	dir_close(d);
}

/* With the list of directories the walk before the run made: only a
 * directory whose ctime changed during the run can hold a new entry
 * (creating, removing or renaming one sets it, and no process can set it
 * back; mtime, which utimensat(2) can, is not trusted). Those are read,
 * what is new in them walked whole, and every repository that was there
 * looked at again: a large tree costs a stat per directory, not a read. */
static void
audit_changed_dirs(struct audit *a)
{
	struct strset known = { 0 };
	struct stat st;
	size_t i, j;
	/* Where the sandbox named no path in a writable root (it only read;
	 * attrib), and sbx is sure of that record, there is nothing the audit
	 * could act on (audit_acts: not a path, nor a file, the sandbox made),
	 * so no directory is looked at: a run of a reading command costs no
	 * stat per directory. Unsure, or a path named: all of them, as ever. */
	bool look = !a->attribute || attrib.unsure || attrib.n > 0;

	if (!look)
		note("audit: the sandbox named no path in a writable root; no directory looked at");

	for (i = 0; i < a->dirs_seen.n; i++) {
		const char *d = a->dirs_seen.v[i], *base = strrchr(d, '/') + 1;

		if (!strcmp(base, "node_modules")) {
			vec_push(&a->node_modules, (void *)d);	/* listed, not entered: audit_run */
		} else if (look && audit_changed(a, d)) {
			for (j = known.n ? a->dirs_seen.n : 0; j < a->dirs_seen.n; j++)
				strset_add(&known, a->dirs_seen.v[j]);	/* once, when first needed */
			audit_read_changed(a, d, &known);
		}
	}
	for (i = 0; i < a->seen.n; i++) {	/* what changed inside those there before */
		const char *sv = a->seen.v[i];

		if (strcmp(strrchr(sv, '/') + 1, ".git") != 0)
			audit_gitdir(a, sv, false, 0);	/* a bare repository */
		else if (lstat(sv, &st) == 0)
			audit_dotgit(a, path_dirname(sv), S_ISDIR(st.st_mode) ? DT_DIR :
			    S_ISREG(st.st_mode) ? DT_REG : S_ISLNK(st.st_mode) ? DT_LNK : DT_UNKNOWN, false);
	}
}

/* Without that list (a killed run's record, or a walk that stopped at its
 * bound): every root walked whole. */
static void
audit_walk_roots(struct audit *a)
{
	size_t i, j;

	for (i = 0; i < a->roots.n; i++) {
		char path[PATH_MAX];
		int fd;

		for (j = 0; j < a->roots.n; j++)
			if (j != i && path_within(a->roots.v[i], a->roots.v[j]) &&
			    (strcmp(a->roots.v[i], a->roots.v[j]) != 0 || j < i))
				break;
		if (j < a->roots.n)
			continue;	/* inside another root, which is walked whole */
		str_copy(path, (const char *)a->roots.v[i], sizeof(path));
		fd = openat(AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			audit_walk(a, fd, path, 0, false);
	}
}

/* Look for the repositories the run made or changed, and neutralise them. */
static void
audit_run(struct audit *a)
{
	size_t i;

	if (a->dirs_seen.n && !a->seen_partial)
		audit_changed_dirs(a);
	else
		audit_walk_roots(a);
	/* node_modules: only if git could have linked a repository there, that
	 * is if an index changed (git add, commit, status) or a repository was
	 * made; walking it after every command would cost most of a large
	 * tree (100 000 files: 30 ms) */
	for (i = 0; !a->fresh_found && i < a->seen.n; i++)
		a->fresh_found = audit_changed(a, path_join(a->seen.v[i], "index"));
	for (i = 0; a->fresh_found && i < a->node_modules.n; i++) {
		char path[PATH_MAX];
		int fd;

		str_copy(path, (const char *)a->node_modules.v[i], sizeof(path));
		fd = openat(AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			audit_walk(a, fd, path, 1, true);
	}
}

/* The record a killed run leaves for the next one: "T start", "A" (the
 * policy let the command write .git/config), "P" (the search before the
 * run stopped at its bound), "R root", "G gitdir" (protected), "S path"
 * (a .git there before the run), "O path" (bound read-only in a root: the
 * command could not have changed it). */
static struct { const char *record; long long t0; bool done; } audit_state;

static void
audit_record(const char *run_dir, const struct plan *pl)
{
	struct buf b = { 0 };
	size_t i;
	int fd;

	{
		/* KERNEL: file times come from a coarse clock, up to a tick (4 ms at
		 * HZ=250, 10 ms at HZ=100) behind this one: start 20 ms early, so a
		 * change made as the command starts is never taken as older */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		audit_state.t0 = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec - 20000000LL;
	}
	if (!pl->audit_roots.n)
		return;
	buf_printf(&b, "T %lld\n%s%s", audit_state.t0, pl->allow_git_config ? "A\n" : "", pl->seen_partial ? "P\n" : "");
	for (i = 0; i < pl->audit_roots.n; i++) {
		buf_puts(&b, "R ");
		line_escape(&b, pl->audit_roots.v[i]);
		buf_putc(&b, '\n');
	}
	for (i = 0; i < pl->gitdirs.n; i++) {
		buf_puts(&b, "G ");
		line_escape(&b, pl->gitdirs.v[i]);
		buf_putc(&b, '\n');
	}
	for (i = 0; i < pl->repos_seen.n; i++) {
		buf_puts(&b, "S ");
		line_escape(&b, pl->repos_seen.v[i]);
		buf_putc(&b, '\n');
	}
	for (i = 0; i < pl->mounts.n; i++) {
		const struct mount *m = pl->mounts.v[i];
		size_t j;

		for (j = 0; (m->kind == MK_BIND_RO || m->kind == MK_BIND_RO_INIT) && j < pl->audit_roots.n; j++)
			if (path_within(m->path, pl->audit_roots.v[j])) {
				buf_puts(&b, "O ");
				line_escape(&b, m->path);
				buf_putc(&b, '\n');
				break;
			}
	}
	audit_state.record = path_join(run_dir, "repos");
	fd = openat(AT_FDCWD, audit_state.record, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write_all(fd, b.p, b.n) < 0)
		die("cannot write %s: %s", audit_state.record, strerror(errno));
	close(fd);
	free(b.p);
}

/* After the command: audit this run's roots (called once). */
static void
audit_after_run(const struct plan *pl)
{
	struct audit a;

	if (audit_state.done || !audit_state.record || !pl)
		return;
	audit_state.done = true;
	memset(&a, 0, sizeof(a));
	a.t0 = audit_state.t0;
	a.pl = pl;
	a.allow_git_config = pl->allow_git_config;
	a.roots = pl->audit_roots;
	a.protected_gitdirs = pl->gitdirs;
	a.seen = pl->repos_seen;
	a.seen_partial = pl->seen_partial;
	a.dirs_seen = pl->dirs_seen;
	a.attribute = true;
	a.home = getenv("HOME");
	audit_run(&a);
}

/* A dead run's record: audit what it may have left. */
static void
audit_recover(const char *run_dir)
{
	struct buf b = { 0 };
	struct audit a;
	char *line, *save;

	memset(&a, 0, sizeof(a));
	if (read_file(path_join(run_dir, "repos"), 16 << 20, &b) < 0) {
		free(b.p);
		return;
	}
	for (line = strtok_r(b.p, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == 'T')
			a.t0 = strtoll(line + 2, NULL, 10);
		else if (line[0] == 'A')
			a.allow_git_config = true;
		else if (line[0] == 'P')
			a.seen_partial = true;
		else if (line[0] == 'S' && line[1] == ' ')
			vec_push(&a.seen, line_unescape(line + 2));
		else if (line[0] == 'O' && line[1] == ' ')
			vec_push(&a.read_only, line_unescape(line + 2));
		else if (line[0] == 'R' && line[1] == ' ')
			vec_push(&a.roots, line_unescape(line + 2));
		else if (line[0] == 'G' && line[1] == ' ')
			vec_push(&a.protected_gitdirs, line_unescape(line + 2));
	}
	free(b.p);
	if (a.t0 > 0)
		audit_run(&a);
}

/* ---- 9c. Programs and the environment (every platform) --------------
 *
 * What both runners need around the command: the programs sbx runs found
 * and checked (none may be writable inside), the caller's denied variables
 * forgotten, the signals passed on to the command. */

/* The signals sbx passes on to the command (the rest keep their default:
 * SIGKILL and SIGSTOP cannot be caught, a SIGPIPE is sbx's own). */
static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

/* Find prog in PATH; returns an arena string, or NULL. */
static const char *
find_in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save;

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0 ? prog : NULL;
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	copy = astrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *cand = path_join(*dir ? dir : ".", prog);
		struct stat st;

		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
			return cand;
	}
	return NULL;
}

/* The hint for a command that was not found and whose name holds a space
 * or a tab: a command line given as one word (`sbx -- "npm test"`, where
 * srt would have run it through a shell). Writes it into out (no arena:
 * the inner helper calls this between fork and exec) and returns true, or
 * returns false when there is no hint to give. */
static bool
cmd_line_hint(const char *argv0, char *out, size_t n)
{
	size_t k;

	if (!strpbrk(argv0, " \t") || n < 64)
		return false;
	k = (size_t)snprintf(out, n, "to run a command line, use: sbx ... -- sh -c '");
	for (const char *p = argv0; *p && k + 6 < n; p++) {
		if (*p == '\'') {	/* ' is written '\'' */
			memcpy(out + k, "'\\''", 4);
			k += 4;
		} else {
			out[k++] = *p;
		}
	}
	out[k++] = '\'';
	out[k] = '\0';
	return true;
}

/* SECURITY: if sbx or a program it runs the sandbox with (bwrap, socat,
 * sandbox-exec) could be replaced from inside, the next sbx run would execute the command's code outside any sandbox. */
static void
tamper_check(const struct plan *pl, const char *what, const char *path)
{
	char real[PATH_MAX];
	const char *dir;

	/* disable-filesystem: the person switched the boundary off for the
	 * disk, so every program on it is writable, the shell's startup
	 * files too; refusing would only make the setting unusable
	 * (pol_validate says so on every run) */
	if (pl->fs_disabled || !path || !realpath(path, real))
		return;
	dir = path_dirname(real);
	if (plan_is_writable(pl, real) && (access(real, W_OK) == 0 || access(dir, W_OK) == 0))
		die_hint("install it outside every writable directory (make install puts sbx in /usr/local/bin), "
		    "or narrow the allow-write that covers it",
		    "refusing to run: %s (%s) would be writable inside the sandbox, so the command could "
		    "replace it and the next run would execute that code outside any sandbox", real, what);
}

/* Forget, in this process, the variables deny-env names, once the bwrap
 * options (or, on macOS, the command's environment) are rendered: every
 * process forked after (bwrap, the proxy) starts without them. The proxy parses hostile bytes and needs none of
 * them (DESIGN 3.6), and under weaker-nested-sandbox the command sees the
 * host's /proc, where sbx's and bwrap's environ are readable. The value is
 * overwritten where it lies (for the first environment, the block
 * /proc/PID/environ shows): unsetenv(3) only unlinks the string. */
static void
env_scrub(const struct policy *p)
{
	size_t i = 0;

	while (environ && environ[i]) {
		char *eq = strchr(environ[i], '=');

		if (eq && eq > environ[i] && env_denied(p, environ[i], (size_t)(eq - environ[i]))) {
			char *name = astrndup(environ[i], (size_t)(eq - environ[i]));

			memset(eq + 1, 0, strlen(eq + 1));
			if (unsetenv(name) == 0)
				continue;	/* the rest moved down: i is the next one */
		}
		i++;
	}
}

/* --check's lines: "ok ..." or "FAIL: ...", each platform's (10d, 11d). */
static int check_failures;

static void __attribute__((format(printf, 2, 3)))
check_line(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (!ok)
		check_failures++;
	fputs(ok ? "ok " : "FAIL: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* ---- 9d. Live policy: the control fd (every platform) ----------------
 *
 * --control-fd N, srt's protocol: JSON lines, each a whole settings object
 * read by the same strict reader as a policy file (3.5, 3.6). A line that
 * does not read is reported and dropped: the policy before it stays. A
 * good one changes the network lists at once (3.9): sbx's own copy, which
 * a proxy forked later starts from, and the running proxy's, by a table
 * (6c) it swaps in between two poll iterations (7.6). Every other key
 * that changed is named: a running sandbox cannot take it.
 *
 * The channel, as srt's: it is checked readable before anything is built
 * (main_control_fd_check) and read only once the command runs (the
 * runners' supervise loops), so nothing written meanwhile is lost. End of
 * input means the writer is done: the last policy stays. A read error
 * before the first line stops the command (SIGTERM, SIGKILL 2 s later)
 * and sbx exits 125 (srt: 1); after it, it only ends the updates.
 * SECURITY: the fd never reaches the command: sbx marks it close-on-exec
 * with every inherited one (2.4), and the proxy and the observer close
 * every descriptor they do not need (fds_close_except). */

#define SBX_MAX_CONTROL_LINE_BYTES	(1 << 20)	/* a longer line is refused, as a policy file */
#define SBX_CONTROL_KILL_GRACE_MS	2000		/* srt's KILL_GRACE_MS */

/* main's reader of one line: the policy it describes, into out (the
 * arena); 0, or -1 with e filled. */
typedef int (*live_load_fn)(void *ctx, const char *text, size_t n, const char *name, struct policy *out,
    struct err *e);

static struct {
	int given;		/* N as given; -1: no --control-fd */
	int fd;			/* N while it is read, else -1 */
	bool any_line;		/* srt's receivedAnyLine: a line came, even an empty one */
	bool failed;		/* it failed before its first line: the command is stopped, sbx exits 125 */
	int64_t kill_at;	/* then: when a command that ignores SIGTERM gets SIGKILL; 0: not due */
	unsigned lines;
	struct buf acc;		/* the line read so far */
	bool overlong;		/* longer than SBX_MAX_CONTROL_LINE_BYTES: dropped up to its newline */
	struct policy cur;	/* the policy in force; its network lists are tables's once a line changed them */
	struct net_tables *tables;	/* owned (malloc), or NULL */
	live_load_fn load;
	void *ctx;
} live = { .given = -1, .fd = -1 };

/* From here on the control fd is read (by the runner), against policy p. */
static void
live_start(int fd, const struct policy *p, live_load_fn load, void *ctx)
{
	live.given = live.fd = fd;
	live.cur = *p;
	live.load = load;
	live.ctx = ctx;
}

/* The policy a proxy forked now starts with: the last one applied. */
static const struct policy *
live_policy(const struct policy *p)
{
	return live.given >= 0 ? &live.cur : p;
}

/* The proxy's new tables: in a file of their own, its descriptor on a 'P'
 * message over the record pair (6c). Never waits for the proxy: its
 * socket full, the update is said to be lost. */
static void
live_send(int report, const struct buf *b)
{
	unsigned char msg[SBX_TABLES_MSG_BYTES];
	int fd = plat_anon_file("sbx-tables");
	uint32_t len = (uint32_t)b->n;
	int err = 0;

	msg[0] = 'P';
	memcpy(msg + 1, &len, 4);
	(void)fcntl(report, F_SETFL, fcntl(report, F_GETFL) | O_NONBLOCK);	/* sbx reads it with MSG_DONTWAIT anyway */
	if (fd < 0 || write_all(fd, b->p, b->n) < 0 || send_fds(report, msg, sizeof(msg), &fd, 1) < 0)
		err = errno;
	if (fd >= 0)
		close(fd);
	if (err)
		warnx("control fd %d: the proxy did not take the update (%s): new connections are decided by the "
		    "network lists before it", live.given, strerror(err));
}

/* One line (in live.acc): read, compared, applied. sbx lives as long as
 * the command and a harness may send a line a second for hours, so the
 * line is read into the arena past a mark and released after (2.1): what
 * stays is the new network lists, as the proxy gets them (the same
 * encoding, decoded into malloc'd tables), and memory stays bounded. */
static void
live_line(int report)
{
	struct vec on = { 0 }, off = { 0 };
	struct policy np;
	struct err e = { 0 };
	struct buf enc = { 0 };
	struct net_tables *t;
	struct arena_mark mark = arena_mark();
	const char *why = NULL;
	char msg[1200];
	size_t n = live.acc.n, k;
	const char *s = live.acc.p ? live.acc.p : "";

	live.any_line = true;
	live.lines++;
	while (n && s[n - 1] == '\r')	/* "\r\n" ends a line too (readline's crlfDelay) */
		n--;
	for (k = 0; k < n && isspace((unsigned char)s[k]); k++)
		;
	if (k == n && !live.overlong)
		goto done;	/* an empty line: srt says nothing */
	if (live.overlong)
		snprintf(msg, sizeof(msg), "control fd %d, line %u: longer than %d bytes", live.given, live.lines,
		    SBX_MAX_CONTROL_LINE_BYTES);
	if (live.overlong || live.load(live.ctx, s, n, aprintf("control fd %d, line %u", live.given, live.lines),
	    &np, &e) < 0) {
		if (!live.overlong)
			err_format(&e, msg, sizeof(msg));
		fprintf(stderr, "Invalid config on control fd %d: ignored, previous config still in force\n", live.given);
		warnx("%s", msg);
		goto done;
	}
	pol_changes(&live.cur, &np, &on, &off);
	for (k = 0; k < off.n; k++) {
		const struct directive *d = off.v[k];
		const char *key = d->json ? d->json : d->name;

		warnx("control fd %d: %s changed; %s, so this change is ignored", live.given, key,
		    d->kind == DK_PATH || strncmp(key, "filesystem.", 11) == 0 ?
		    "a running sandbox's filesystem cannot change" : d->kind == DK_UNIX_SOCKET || d->kind == DK_MITM_DOMAIN ||
		    d->kind == DK_PROXY_URL || d->kind == DK_BYPASS ? "the routes (parent and MITM proxies) are the run's, "
		    "set when it starts" : "only the network lists apply to a running sandbox");
	}
	if (!on.n) {
		note("control fd %d, line %u: the network lists are as they were", live.given, live.lines);
		goto done;
	}
	net_tables_encode(&np.allow_domains, &np.deny_domains, &np.deny_addresses, &enc);
	t = net_tables_decode((const unsigned char *)enc.p, enc.n, &why);	/* what the reader took, it takes */
	if (!t) {
		warnx("control fd %d, line %u: the network lists do not fit the proxy's tables (%s): not applied",
		    live.given, live.lines, why);
		free(enc.p);
		goto done;
	}
	for (k = 0; k < on.n; k++)
		note("control fd %d, line %u: %s applied", live.given, live.lines,
		    ((const struct directive *)on.v[k])->json);
	arena_release(mark);	/* np and the rest of the line are gone from here on */
	live.cur.allow_domains = t->allow;
	live.cur.deny_domains = t->deny;
	live.cur.deny_addresses = t->addrs;
	net_tables_free(live.tables);	/* the lists before: nothing points into them past this */
	live.tables = t;
	if (report >= 0)
		live_send(report, &enc);	/* else the proxy, when it forks, starts with live.cur */
	free(enc.p);
	live.acc.n = 0;
	live.overlong = false;
	return;
done:
	arena_release(mark);
	live.acc.n = 0;
	live.overlong = false;
}

/* The channel failed (why: the error). Returns -1 when the command must
 * be stopped: nothing had come through it yet. */
static int
live_fail(const char *why)
{
	close(live.fd);
	live.fd = -1;
	if (live.any_line) {
		/* the policy last applied stays: the command keeps running under it */
		fprintf(stderr, "Error reading control fd %d: %s. The control channel is closed; no further updates "
		    "will be applied.\n", live.given, why);
		return 0;
	}
	fprintf(stderr, "Error: control fd %d failed before delivering an update: %s. Refusing to run the command "
	    "without the control channel it asks for.\n", live.given, why);
	live.failed = true;
	live.kill_at = now_ms() + SBX_CONTROL_KILL_GRACE_MS;
	return -1;
}

/* The control fd is readable (poll): take what came, line by line.
 * report: sbx's end of the proxy's record pair, or -1 while no proxy
 * runs. Returns -1 when the runner must stop the command (SIGTERM now;
 * live_kill_due says when SIGKILL is). */
static int
live_read(int report)
{
	char chunk[65536];
	ssize_t r = read(live.fd, chunk, sizeof(chunk));

	if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (r < 0)
		return live_fail(strerror(errno));
	if (r == 0) {
		if (live.acc.n || live.overlong)
			live_line(report);	/* the last line needs no newline (readline's) */
		close(live.fd);
		live.fd = -1;
		note("control fd %d: end of input; the policy last applied stays", live.given);
		return 0;
	}
	for (const char *p = chunk, *end = chunk + r; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t k = (size_t)((nl ? nl : end) - p);

		if (!live.overlong && live.acc.n + k > SBX_MAX_CONTROL_LINE_BYTES) {
			live.overlong = true;
			live.acc.n = 0;
		}
		if (!live.overlong)
			buf_putn(&live.acc, p, k);
		if (!nl)
			break;
		live_line(report);
		p = nl + 1;
	}
	return 0;
}

/* The poll timeout the runner uses: -1, or until SIGKILL is due. */
static int
live_timeout(void)
{
	int64_t left = live.kill_at ? live.kill_at - now_ms() : -1;

	return live.kill_at ? (int)(left > 0 ? left : 0) : -1;
}

/* Is SIGKILL due for a command stopped for its control fd? Once. */
static bool
live_kill_due(void)
{
	if (!live.kill_at || now_ms() < live.kill_at)
		return false;
	live.kill_at = 0;
	return true;
}

/* ---- 9e. The MITM route: the proxy's socket, dialled by sbx -----------
 *
 * The proxy may not create a Unix socket (its lockdown, 7.4: a memory
 * bug there must not reach docker.sock), so for a host of
 * mitm-proxy-domain it asks sbx over the record pair (6c) and sbx, which
 * reads that pair anyway (net_log_drain, 8.2), dials the policy's socket
 * and hands the connection back. sbx never waits here: a Unix connect()
 * does not block on a non-blocking socket (it is queued at once, or fails
 * with ECONNREFUSED, ENOENT, or EAGAIN when the listener's backlog is
 * full), and the answer goes out MSG_DONTWAIT-style; an answer the pair
 * cannot take is lost, and the proxy's deadline answers the client. */

/* One ask (rec, n bytes) from the proxy on report: dial path, answer with
 * the socket or the errno. Returns 0, or -1 for an ask that does not
 * decode (counted as a bad record). */
static int
mitm_serve(int report, const char *path, const unsigned char *rec, size_t n)
{
	struct mitm_msg m;
	struct sockaddr_un sa;
	unsigned char b[SBX_MITM_ANSWER_BYTES];
	int fd, err = 0;

	if (mitm_decode(rec, n, &m) < 0 || m.kind != 'M')
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path));	/* it fits: the policy reader checked (3.3) */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);	/* macOS: no SOCK_CLOEXEC, F_SETFD below */
	if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0 ||
	    (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS))
		err = errno;	/* EINPROGRESS: the proxy's first write waits for it */
	if (err && fd >= 0) {
		close(fd);
		fd = -1;
	}
	m.kind = 'm';
	m.err = (uint32_t)(err > 0 && err <= SBX_MITM_MAX_ERRNO ? err : err ? EIO : 0);
	note("mitm proxy: %s for the proxy's connection %u: %s", path, m.slot, err ? strerror(err) : "connected");
	(void)fcntl(report, F_SETFL, fcntl(report, F_GETFL) | O_NONBLOCK);	/* never wait for the proxy */
	if (send_fds(report, b, mitm_encode(&m, b), &fd, fd >= 0 ? 1 : 0) < 0)
		note("mitm proxy: the answer to the proxy was lost (%s); its deadline answers the client", strerror(errno));
	if (fd >= 0)
		close(fd);	/* the proxy has its own copy */
	return 0;
}

/* ====================================================================
 * 10. LINUX RUNNER: the inner helper, running under bwrap, --check
 * ==================================================================== */

#if SBX_LINUX

/* Prototypes: the seccomp installer sbx-init's filters and the proxy's
 * lockdown (10e) share. */
static int install_program(const struct bpf_opts *o);

/* ---- 10a. The inner helper: nested namespaces, pid 1, the filters ------
 *
 * bwrap runs `sbx --inner 5 3,4,6` (sbx's own binary, from fd 3; the
 * control socket is fd 5; it closes 3, 4 and 6 at once) as
 * pid 1 of its pid namespace. The process tree it builds:
 *
 *   sbx --inner     pid 1 in bwrap's namespaces: reads the instructions from
 *     |             the control socket, unshares a nested user + pid + mount
 *     |             namespace, forwards signals, exits with the status
 *     '- init       pid 1 of the nested namespace, non-dumpable, filtered:
 *         |         mounts a fresh /proc, installs the filters, reaps,
 *         |         forwards signals
 *         '- command  pid 2: no capabilities, NO_NEW_PRIVS, filtered
 *
 * The command sees only its own processes: sbx --inner, bwrap and anything
 * bwrap runs are in an outer pid namespace, and the only process it can see
 * that it did not start, init, is non-dumpable (no ptrace, no
 * process_vm_readv) and under the same filters.
 *
 * The instructions come over a socket because the command line is visible
 * in /proc to every process of the user, and a socket message can be
 * parsed strictly, as hostile input would be: the control message
 * (ctl_encode, with the other wire formats), answered by the handed-fd
 * message (handed_encode), a rebind's ask when a name sbx-init binds
 * changed on this machine (rebind_ask_encode: init_binds, run_rebind),
 * and, once the command runs, "R". */

static void
on_signal_noop(int sig)
{
	(void)sig;
}

/* Parse a strictly decimal fd number >= 3. */
static int
parse_fd(const char *s)
{
	long v;
	const char *why;

	if (parse_int(s, 3, INT_MAX, &v, &why) < 0)
		die("--inner: bad descriptor \"%s\"", s);
	return (int)v;
}

/* System calls without libc, for a child that shares its parent's memory
 * and runs beside it: a session's exec (init_start_exec) is started by
 * clone(CLONE_VM) on a stack of its own, so that init neither copies its
 * page tables nor waits for the child (vfork would: see there). Until it
 * execs, that child must write no memory init uses, and libc's wrappers
 * do: each failure sets errno, which lives in init's thread-local storage
 * (the child shares its thread pointer), and some keep state (musl's
 * sigaction marks its handlers). So the child calls the kernel itself:
 * one instruction, the result or -errno in a register. Where this file
 * has no such instruction, sys6 is libc's syscall(2) and session execs
 * are forked (SBX_RAW_SYSCALLS 0). The command of a plain run, started
 * with vfork while init sleeps, uses the same calls (exec_planned). */
#if defined(__x86_64__)
#  define SBX_RAW_SYSCALLS 1
static inline long
sys6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
	long ret;

	/* the kernel's convention: rax the number and the result, rcx and
	 * r11 lost to the return address and flags */
	__asm__ volatile ("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
	    : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#  define SBX_RAW_SYSCALLS 1
static inline long
sys6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = nr, x0 __asm__("x0") = a, x1 __asm__("x1") = b, x2 __asm__("x2") = c,
	    x3 __asm__("x3") = d, x4 __asm__("x4") = e, x5 __asm__("x5") = f;

	__asm__ volatile ("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
	return x0;
}
#else
#  define SBX_RAW_SYSCALLS 0
static long
sys6(long nr, long a, long b, long c, long d, long e, long f)
{
	long r = syscall(nr, a, b, c, d, e, f);

	return r < 0 ? -errno : r;
}
#endif
#define sys3(nr, a, b, c)	sys6((nr), (long)(a), (long)(b), (long)(c), 0, 0, 0)

/* execvp(3), but telling "not found" from "found and not runnable": a
 * directory in PATH that we may not search (EACCES) must not turn a missing
 * command into a 126. In two halves, so that the command's process can be
 * started with vfork or clone(CLONE_VM): exec_plan_make works out every
 * candidate path (and the `sh FILE ARGS` fallback of each) before, allocating
 * as it likes; exec_planned, in the child, makes system calls only (sys6)
 * and writes no memory. */
struct exec_plan {
	char **argv;
	char **cands;		/* the files to try, in PATH's order */
	char ***sh;		/* per candidate: sh CAND ARGS..., for ENOEXEC */
	size_t n;
	bool direct;		/* argv[0] has a '/': that file only, no PATH */
};

static struct exec_plan
exec_plan_make(char **argv, const char *path)
{
	struct exec_plan p = { argv, NULL, NULL, 0, strchr(argv[0], '/') != NULL };
	size_t argc = 0, max = 1;
	char *copy, *dir, *save;

	if (p.direct) {
		p.cands = amalloc(sizeof(*p.cands));
		p.cands[p.n++] = argv[0];
		return p;
	}
	while (argv[argc])
		argc++;
	copy = astrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (const char *c = copy; *c; c++)
		max += *c == ':';
	p.cands = amalloc(max * sizeof(*p.cands));
	p.sh = amalloc(max * sizeof(*p.sh));
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char **sh = amalloc((argc + 2) * sizeof(*sh));

		sh[0] = "sh";	/* POSIX: a file without #! is a shell script */
		sh[1] = path_join(*dir ? dir : ".", argv[0]);
		memcpy(sh + 2, argv + 1, argc * sizeof(*sh));	/* argv[1..], and its NULL */
		p.cands[p.n] = sh[1];
		p.sh[p.n++] = sh;
	}
	return p;
}

/* Returns only when nothing could be run: the errno to report, ENOENT when
 * no PATH entry has the file. System calls only (above). */
static int
exec_planned(const struct exec_plan *p, char **envp)
{
	int found_err = 0;

	if (p->direct) {
		int err = -(int)sys3(SYS_execve, p->cands[0], p->argv, envp);

		return err == ENOTDIR ? ENOENT : err;
	}
	for (size_t i = 0; i < p->n; i++) {
		int err = -(int)sys3(SYS_execve, p->cands[i], p->argv, envp);

		if (err == ENOEXEC)
			err = -(int)sys3(SYS_execve, "/bin/sh", p->sh[i], envp);
		/* it exists here, but will not run (ENOENT: it is not here, or
		 * its interpreter is not, which reads as not found either way) */
		if (!found_err && err != ENOENT && sys6(SYS_faccessat, AT_FDCWD, (long)p->cands[i], F_OK, 0, 0, 0) == 0)
			found_err = err;
	}
	return found_err ? found_err : ENOENT;
}

/* Why a command's process did not become the command: a step before
 * the exec failed (what and name say which), or the exec itself (what
 * NULL, name the command as asked). */
struct child_failure { int err; const char *what, *name; };

#define SBX_FAILURE_WORDS_MAX	(PATH_MAX + 1024)

/* The failure in words (a line, and a hint when there is one) into out,
 * which has SBX_FAILURE_WORDS_MAX bytes; returns their length. On the
 * stack and snprintf's only: the caller may be a vfork child, whose
 * memory is its parent's (stdio's buffers included). */
static size_t
child_failure_words(const struct child_failure *f, char *out)
{
	char hint[512];
	size_t cap = SBX_FAILURE_WORDS_MAX, k;
	int n;

	if (f->what)
		n = snprintf(out, cap, "%s: %s%s: %s\n", progname, f->what, f->name, strerror(f->err));
	else
		n = snprintf(out, cap, "%s: %s: %s\n", progname, f->name,
		    f->err == ENOENT ? "command not found" : strerror(f->err));
	k = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
	if (!f->what && f->err == ENOENT && cmd_line_hint(f->name, hint, sizeof(hint)) &&
	    (n = snprintf(out + k, cap - k, "%s: hint: %s\n", progname, hint)) > 0)
		k += (size_t)n < cap - k ? (size_t)n : cap - k - 1;
	return k;
}

/* env(1)'s convention: 127 not found, 126 found but not runnable, 125 a
 * step before the exec failed. */
static int
child_failure_status(const struct child_failure *f)
{
	return f->what ? SBX_EXIT_FAILURE : f->err == ENOENT ? SBX_EXIT_NOT_FOUND : SBX_EXIT_CANNOT_RUN;
}

/* The failure's words on fd (write(2) only); returns the status. */
static int
child_failure_write(int fd, const struct child_failure *f)
{
	char words[SBX_FAILURE_WORDS_MAX];

	(void)!write(fd, words, child_failure_words(f, words));
	return child_failure_status(f);
}

/* In a vforked child: say why it failed, and exit 125. */
static void __attribute__((noreturn))
child_fail(const char *what, const char *name, int err)
{
	_exit(child_failure_write(2, &(struct child_failure){ err, what, name }));
}

/* The child's last words when the command could not be run (exec_planned's
 * errno), and its exit. */
static void __attribute__((noreturn))
exec_failed(const char *argv0, int err)
{
	_exit(child_failure_write(2, &(struct child_failure){ err, NULL, argv0 }));
}

/* Failures inside the sandbox use die_hint() too: its exit status, 125,
 * with no "R" on the control socket tells the host that the message is
 * already printed and the command did not run. */

/* A listening TCP socket on the sandbox's own loopback, 127.0.0.1:port or
 * [::1]:port. Returns -1 only for [::1] when this namespace has no IPv6
 * loopback (a kernel without IPv6, or ipv6.disable=1); any other failure
 * is fatal: the command must not start half connected. */
static int
inner_listen(int port, bool v6)
{
	struct sockaddr_in sa;
	struct sockaddr_in6 sa6;
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, rc;

	if (fd < 0 && v6 && errno == EAFNOSUPPORT)
		return -1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6) {
		memset(&sa6, 0, sizeof(sa6));
		sa6.sin6_family = AF_INET6;
		sa6.sin6_port = htons((uint16_t)port);
		sa6.sin6_addr = in6addr_loopback;
		if (fd >= 0)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		rc = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&sa6, sizeof(sa6));
		if (rc < 0 && errno == EADDRNOTAVAIL) {
			close(fd);
			return -1;
		}
	} else {
		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_port = htons((uint16_t)port);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		rc = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	}
	if (rc < 0 || listen(fd, 1024) < 0)
		die("cannot listen on %s:%d inside the sandbox: %s", v6 ? "[::1]" : "127.0.0.1", port,
		    strerror(errno));
	return fd;
}

static int
write_proc_file(const char *path, const char *text)
{
	int fd = openat(AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = write_all(fd, text, strlen(text));
	close(fd);
	return rc;
}

/* Drop every capability for good: the bounding set (so an exec as uid 0
 * gains nothing back), the ambient and inheritable sets, then the rest. */
static int
drop_capabilities_to(int last)
{
	struct { uint32_t version; int pid; } hdr = { 0x20080522, 0 };	/* _LINUX_CAPABILITY_VERSION_3 */
	struct { uint32_t effective, permitted, inheritable; } data[2];

	for (int c = 0; c <= last; c++)
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1 && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
			return -1;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -1;
	memset(data, 0, sizeof(data));
	return (int)syscall(SYS_capset, &hdr, data);
}

/* The highest capability this kernel knows, read before a vfork (the child
 * of which calls drop_capabilities_to: system calls only). */
static int
cap_last(void)
{
	struct buf b = { 0 };
	int last = 63;

	if (read_file("/proc/sys/kernel/cap_last_cap", 16, &b) == 0)
		last = atoi(b.p);
	free(b.p);
	return last;
}

static int
drop_capabilities(void)
{
	return drop_capabilities_to(cap_last());
}

/* Install the filters. NO_NEW_PRIVS first: the kernel requires it (or
 * CAP_SYS_ADMIN) and it keeps a setuid binary from shedding the filter. */
static int
install_filters(uint32_t flags)
{
	struct bpf_opts o = { !(flags & IF_UNIX_BLOCK), (flags & IF_ALLOW_USERNS) != 0, false, false, false, false, 0 };

	return install_program(&o);
}

/* Assemble the program for this machine and install it, NO_NEW_PRIVS first. */
static int
install_program(const struct bpf_opts *o)
{
	struct bpf_prog prog;
	struct { unsigned short len; struct bpf_insn *filter; } fprog;	/* struct sock_fprog */

	if (!bpf_native_arch()) {
		errno = ENOSYS;
		return -1;
	}
	bpf_assemble(bpf_native_arch(), o, &prog);
	fprog.len = (unsigned short)prog.n;
	fprog.filter = prog.insn;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, 2 /* SECCOMP_MODE_FILTER */, &fprog, 0, 0);
}

/* The write observer's kernel interface (seccomp_unotify(2)), spelled
 * here so the file builds without new kernel headers. The ioctl numbers
 * encode the structures' sizes (_IOWR('!', 0, struct seccomp_notif): 80
 * bytes; _IOWR('!', 1, struct seccomp_notif_resp): 24; _IOW('!', 2, u64)). */
#define SBX_SECCOMP_SET_MODE_FILTER		1
#define SBX_SECCOMP_GET_ACTION_AVAIL		2
#define SBX_SECCOMP_FILTER_FLAG_NEW_LISTENER	(1UL << 3)
#define SBX_SECCOMP_USER_NOTIF_FLAG_CONTINUE	(1U << 0)
#define SBX_SECCOMP_IOCTL_NOTIF_RECV		0xc0502100UL
#define SBX_SECCOMP_IOCTL_NOTIF_SEND		0xc0182101UL
#define SBX_SECCOMP_IOCTL_NOTIF_ID_VALID	0x40082102UL
#define SBX_SECCOMP_IOCTL_NOTIF_SET_FLAGS	0x40082104UL	/* _IOW('!', 4, u64), Linux 6.6 */
#define SBX_SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP	1ULL

struct sbx_seccomp_notif {
	uint64_t id;
	uint32_t pid, flags;
	struct { int32_t nr; uint32_t arch; uint64_t ip; uint64_t args[6]; } data;
};
struct sbx_seccomp_notif_resp { uint64_t id; int64_t val; int32_t error; uint32_t flags; };
_Static_assert(sizeof(struct sbx_seccomp_notif) == 80, "struct seccomp_notif");
_Static_assert(sizeof(struct sbx_seccomp_notif_resp) == 24, "struct seccomp_notif_resp");

/* Why the write observer cannot run on this kernel, or NULL when it can.
 * It needs SECCOMP_RET_USER_NOTIF (Linux 5.0) and, so that it never
 * changes what the command can do, SECCOMP_USER_NOTIF_FLAG_CONTINUE
 * (5.5), which no call can probe: the release says. Asked by sbx-init
 * (the same kernel as sbx's) and by --check. */
static const char *
observer_unavailable(void)
{
	uint32_t action = SBX_RET_USER_NOTIF;
	struct utsname u;
	int major = 0, minor = 0;

	if (!bpf_native_arch())
		return "sbx has no seccomp program for this architecture";
	if (syscall(SYS_seccomp, SBX_SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0)
		return "the kernel has no seccomp user notification (Linux 5.0+)";
	if (uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	    (major < 5 || (major == 5 && minor < 5)))
		return "the kernel cannot let a notified call continue (SECCOMP_USER_NOTIF_FLAG_CONTINUE, Linux 5.5+)";
	return NULL;
}

/* Install the write observer's program (bpf_opts.observe: USER_NOTIF for
 * write intent; a session's sees setsid too, but for one with its key)
 * with a listener, after install_filters (NO_NEW_PRIVS is set). Returns
 * the listener (close-on-exec), or -1: the run goes on unobserved. The
 * kernel allows one listener in a filter chain, so a command that
 * installs its own (a nested sandbox with an observer of its own) gets
 * EBUSY while this one is there. */
static int
install_observer(bool session, uint32_t key)
{
	struct bpf_opts o = { false, false, false, true, false, session, key };
	struct bpf_prog prog;
	struct { unsigned short len; struct bpf_insn *filter; } fprog;	/* struct sock_fprog */

	bpf_assemble(bpf_native_arch(), &o, &prog);
	fprog.len = (unsigned short)prog.n;
	fprog.filter = prog.insn;
	return (int)syscall(SYS_seccomp, SBX_SECCOMP_SET_MODE_FILTER, SBX_SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
}

/* Block the forwarded signals and SIGCHLD, each with a handler.
 * KERNEL: pid 1 of a namespace never receives a signal whose disposition
 * is SIG_DFL, even a blocked one, so each needs a handler (which never
 * runs: they stay blocked and are taken with sigwaitinfo). */
static void
signals_take(sigset_t *set, sigset_t *old)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal_noop;
	sigemptyset(set);
	for (i = 0; i < LEN(forwarded_signals); i++) {
		sigaction(forwarded_signals[i], &sa, NULL);
		sigaddset(set, forwarded_signals[i]);
	}
	sigaction(SIGCHLD, &sa, NULL);
	sigaddset(set, SIGCHLD);
	sigprocmask(SIG_BLOCK, set, old);
}

static void
signals_restore(const sigset_t *old)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (i = 0; i < LEN(forwarded_signals); i++)
		sigaction(forwarded_signals[i], &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* What the inner helper serves while the command runs: expose-port
 * connection requests from the proxy, and the logs of the socat bridges. */
struct inner_serve {
	const struct inner_msg *m;
	int xp;		/* expose-port channel (SOCK_SEQPACKET), or -1 */
	int logs[2];	/* socat's stderr, or -1: drained so socat never blocks on it */
};

/* One expose-port request from the proxy, answered (expose_encode): the
 * errno of a socket connecting to the command's 127.0.0.1:port, and the
 * socket when there is one. */
static void
inner_expose_connect(const struct inner_serve *sv)
{
	unsigned char b[SBX_EXPOSE_MSG_BYTES];
	struct expose_msg req;
	uint32_t port, err = 0, i;
	int fd = -1, nfd;
	struct sockaddr_in sa;

	if (expose_decode(b, recv_fds(sv->xp, b, sizeof(b), &fd, 0, &nfd, MSG_DONTWAIT), &req) < 0)
		return;
	port = req.value;
	for (i = 0; i < sv->m->nexpose && sv->m->expose[i] != port; i++)
		;
	if (i == sv->m->nexpose) {
		err = EPERM;	/* only the ports the policy exposes */
	} else if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) {
		err = (uint32_t)errno;
	} else {
		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_port = htons((uint16_t)port);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
			err = (uint32_t)errno;
			close(fd);
			fd = -1;
		}
	}
	req.value = err;
	expose_encode(&req, b);
	(void)send_fds(sv->xp, b, sizeof(b), &fd, fd >= 0 ? 1 : 0);
	if (fd >= 0)
		close(fd);
}

/* A signal for the helper: forward it, or reap. Exits with the child's
 * status (128+N for a signal) once the child is gone. A signal the
 * kernel sent (SI_KERNEL: ^C, ^\ and SIGHUP from the terminal) is not
 * forwarded: the command, in the same foreground process group, got it. */
static void
on_helper_signal(pid_t child, int sig, int code)
{
	int status;
	pid_t pid;

	if (sig != SIGCHLD) {
		if (code <= 0)	/* SI_USER, SI_QUEUE, SI_TKILL: sent by a process */
			kill(child, sig);
		return;
	}
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid != child)
			continue;	/* an orphan reparented to us, or a socat bridge */
		timing(getpid() == 1 ? "init: the command exited" : "inner: init exited");
		if (WIFSIGNALED(status))
			_exit(128 + WTERMSIG(status));
		_exit(WEXITSTATUS(status));
	}
}

/* Wait for child, forwarding signals to it, reaping orphans, serving sv
 * (may be NULL); then exit with its status. */
static void __attribute__((noreturn))
reap_and_forward(pid_t child, const sigset_t *set, struct inner_serve *sv)
{
	int sfd = sv ? signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK) : -1;

	while (sfd < 0) {	/* nothing to serve: only signals */
		siginfo_t si;
		int sig = sigwaitinfo(set, &si);

		if (sig >= 0)
			on_helper_signal(child, sig, si.si_code);
	}
	for (;;) {
		struct pollfd pfd[4] = { { sfd, POLLIN, 0 }, { sv->xp, POLLIN, 0 }, { sv->logs[0], POLLIN, 0 },
			{ sv->logs[1], POLLIN, 0 } };
		struct signalfd_siginfo si;
		char drain[4096];

		if (poll(pfd, 4, -1) < 0)
			continue;
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			on_helper_signal(child, (int)si.ssi_signo, si.ssi_code);
		if (pfd[1].revents & POLLIN)
			inner_expose_connect(sv);
		for (int k = 2; k < 4; k++)
			if (pfd[k].revents && read(pfd[k].fd, drain, sizeof(drain)) <= 0) {
				close(pfd[k].fd);	/* socat is gone; its pipe with it */
				sv->logs[k - 2] = -1;
			}
		if ((pfd[1].revents & (POLLHUP | POLLERR)) && !(pfd[1].revents & POLLIN)) {
			close(sv->xp);	/* the proxy is gone */
			sv->xp = -1;
		}
	}
}

/* bridge socat (srt's topology): socat listens on 127.0.0.1:port and
 * forwards each connection to the proxy's Unix socket, bound in from the
 * host. It runs here, outside the command's pid namespace and filters.
 * The command starts only once socat has said it listens (its -d -d
 * notice "listening on", read from its stderr): unlike srt's 0.3 s poll of
 * /proc/net/sockstat, this cannot start the command before the listener
 * exists. Returns socat's stderr, to be drained. */
static int
inner_start_socat(const char *socat, int port, const char *sock)
{
	char line[2048], *listen_addr = aprintf("TCP-LISTEN:%d,bind=127.0.0.1,reuseaddr,fork", port),
	    *to = aprintf("UNIX-CONNECT:%s", sock);
	size_t n = 0;
	int64_t deadline;
	struct timespec ts;
	int pfd[2], null;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		null = openat(AT_FDCWD, "/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(pfd[1], 2);
		execl(socat, "socat", "-d", "-d", listen_addr, to, (char *)NULL);
		dprintf(2, "E cannot run %s: %s\n", socat, strerror(errno));
		_exit(SBX_EXIT_CANNOT_RUN);
	}
	close(pfd[1]);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 5000;
	for (;;) {
		struct pollfd p = { pfd[0], POLLIN, 0 };
		char *nl;
		ssize_t r;
		int64_t now;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
		if (now >= deadline || poll(&p, 1, (int)(deadline - now)) == 0)
			die("bridge socat: %s did not start listening on 127.0.0.1:%d within 5 s", socat, port);
		r = read(pfd[0], line + n, sizeof(line) - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		while (r <= 0 && n > 0 && (line[n - 1] == '\n' || line[n - 1] == ' '))
			n--;	/* its last words, without the line break */
		if (r <= 0)
			die_hint("install socat (Debian: apt-get install socat), or use bridge fd",
			    "bridge socat: %s exited before it listened on 127.0.0.1:%d%s%s", socat, port,
			    n ? ": " : "", n ? (line[n] = '\0', line) : "");
		n += (size_t)r;
		line[n] = '\0';
		if (strstr(line, " listening on "))
			break;
		if ((nl = strrchr(line, '\n')) && n > sizeof(line) / 2) {	/* keep the last lines only */
			memmove(line, nl + 1, n - (size_t)(nl + 1 - line) + 1);
			n = strlen(line);
		}
	}
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	return pfd[0];
}

static const char *const weaker_hint =
    "inside a container that refuses nested namespaces or a fresh /proc, add the directive "
    "weaker-nested-sandbox (see README: what it weakens)";

/* Map the caller's own uid and gid in the nested user namespace it has
 * just made (and nothing else: setgroups denied). */
static void
inner_map_ids(uid_t uid, gid_t gid)
{
	char map[64];

	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (write_proc_file("/proc/self/setgroups", "deny\n") < 0 || write_proc_file("/proc/self/uid_map", map) < 0)
		die_hint(weaker_hint, "cannot map uid %u in the nested namespace: %s", (unsigned)uid, strerror(errno));
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (write_proc_file("/proc/self/gid_map", map) < 0)
		die_hint(weaker_hint, "cannot map gid %u in the nested namespace: %s", (unsigned)gid, strerror(errno));
}

/* network-dns, network-capture: the command's network namespace, made
 * here with the nested user namespace. WHY: the stub's port 53 (and
 * capture's 80 and 443) need CAP_NET_BIND_SERVICE in the user namespace
 * that owns the network namespace. bwrap's belongs to bwrap's user
 * namespace, where bwrap drops every capability for anyone but root
 * (--cap-add is root's only); one made with the nested user namespace
 * belongs to that, where this helper holds every capability (init drops
 * them all before the command starts, as always). It costs one more
 * namespace, about 0.5 ms. bwrap's stays around it: if this one cannot be
 * made, the command is still in an empty network. A fresh namespace's
 * loopback is down; it is brought up (::1 comes with it). Returns whether
 * the caller is in the new namespaces. */
static bool
inner_own_network(uid_t uid, gid_t gid)
{
	struct ifreq ifr;
	int fd;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
		return false;
	inner_map_ids(uid, gid);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0 ||
	    (ifr.ifr_flags |= IFF_UP | IFF_RUNNING, ioctl(fd, SIOCSIFFLAGS, &ifr) < 0))
		die("cannot bring up the sandbox's loopback: %s", strerror(errno));
	close(fd);
	return true;
}

/* The DNS stub's socket: UDP 127.0.0.1:53, or -1 (the host then says the
 * stub is missing, and names do not resolve inside). */
static int
inner_dns_socket(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(53) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A capture listener: TCP 0.0.0.0:port. Every address of 127/8 is this
 * namespace's, so one socket takes connections to each of the stub's
 * addresses (and to 127.0.0.1:port: the proxy decides those as the
 * literal address). Fatal on failure, as inner_listen. */
static int
inner_capture_listen(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1024) < 0)
		die("network-capture: cannot listen on port %d inside the sandbox: %s", port, strerror(errno));
	return fd;
}

/* The inner helper's argv, so init can show itself as what it is in ps. */
static char **inner_argv;
static int inner_argc;

/* Overwrite our argv in place (what /proc/PID/cmdline shows) and comm. */
static void
inner_rename(const char *name)
{
	char *start = inner_argv[0], *end = inner_argv[inner_argc - 1] + strlen(inner_argv[inner_argc - 1]);

	if ((size_t)(end - start) > strlen(name)) {
		memset(start, 0, (size_t)(end - start));
		memcpy(start, name, strlen(name));
	}
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

/* Mount the symlink at path onto itself, without following it (the new
 * mount API: open_tree with AT_SYMLINK_NOFOLLOW, then move_mount without
 * MOVE_MOUNT_T_SYMLINKS). SECURITY: a mount point can be neither removed
 * nor renamed (EBUSY), so the command cannot swap a dangerous name that is
 * a link for a file of its own; the link's target is denied by bwrap's
 * mounts. Done by init, in the nested mount namespace, before the filters
 * (which refuse both calls). Returns 0, or -1 with errno set. */
static int
pin_link(const char *path)
{
	int fd = (int)syscall(SYS_open_tree, AT_FDCWD, path, SBX_OPEN_TREE_CLONE | AT_SYMLINK_NOFOLLOW | O_CLOEXEC);
	int rc, saved;

	if (fd < 0)
		return -1;
	rc = (int)syscall(SYS_move_mount, fd, "", AT_FDCWD, path, SBX_MOVE_MOUNT_F_EMPTY_PATH);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

/* Bind b->path onto itself (plan_binds_to_init): read-only, or, a pin
 * (IB_PIN), read-write with what is mounted below it. What `bwrap
 * --ro-bind P P` (or --bind) would, without rereading the mount table.
 * SECURITY:
 *  - open_tree with AT_SYMLINK_NOFOLLOW takes the name itself, and the
 *    clone must be what sbx covered and holds (device and inode): another
 *    sandbox that can write the project cannot swap in a link to a file of
 *    its choice between sbx's check and this bind (bwrap's bind follows
 *    links); a mismatch is ESTALE, and sbx covers the name again
 *    (init_binds);
 *  - read-only: non-recursive, so nothing of the host's mounted below it
 *    comes along writable, and nothing of the plan's lies below it (a
 *    leaf); where the host has a mount below it (a clone would then leave
 *    that part of the tree out, which the kernel refuses in a user
 *    namespace: EINVAL), the clone takes it along and the whole clone is
 *    made read-only (mount_setattr, Linux 5.12);
 *  - a pin: recursive, so every mount bwrap made below it (a hidden file, a
 *    placeholder) stays in place on top of it, with its own flags;
 *  - move_mount does not follow a link at the target either, and a
 *    directory goes onto a directory, a file onto a file;
 *  - read-only by a remount of the new mount itself (/proc/self/fd/N:
 *    the fresh /proc of the nested namespace, mounted above), keeping the
 *    flags the mount it was cloned from has (a user namespace may not
 *    clear nosuid, nodev, noexec or the atime flags it inherited);
 *  - then the filters refuse the command every mount call, and the
 *    kernel locks these mounts together with the rest in any namespace
 *    the command could make (it can make none: max_user_namespaces 0).
 * Returns 0, or -1 with errno set (ENOENT or ESTALE: the name changed on
 * this machine since sbx covered it). */
static int
bind_held(const struct init_bind *b)
{
	struct stat st;
	struct statvfs sf;
	unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
	char self[64];
	bool pin = b->flags & IB_PIN, whole = false;
	int fd = (int)syscall(SYS_open_tree, AT_FDCWD, b->path, SBX_OPEN_TREE_CLONE | AT_SYMLINK_NOFOLLOW | O_CLOEXEC |
	    (pin ? SBX_AT_RECURSIVE : 0));
	int rc = -1, saved;

	if (fd < 0 && errno == EINVAL && !pin) {
		whole = true;
		fd = (int)syscall(SYS_open_tree, AT_FDCWD, b->path, SBX_OPEN_TREE_CLONE | AT_SYMLINK_NOFOLLOW | O_CLOEXEC |
		    SBX_AT_RECURSIVE);
	}
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || fstatvfs(fd, &sf) < 0)
		goto out;
	if (!(S_ISDIR(st.st_mode) || (!pin && S_ISREG(st.st_mode))) || (uint64_t)st.st_dev != b->dev ||
	    (uint64_t)st.st_ino != b->ino) {
		errno = ESTALE;
		goto out;
	}
	if (whole) {
		struct { uint64_t set, clr, propagation, userns_fd; } attr = { SBX_MOUNT_ATTR_RDONLY, 0, 0, 0 };

		if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | SBX_AT_RECURSIVE, &attr, sizeof(attr)) < 0)
			goto out;
	}
	if (syscall(SYS_move_mount, fd, "", AT_FDCWD, b->path, SBX_MOVE_MOUNT_F_EMPTY_PATH) < 0)
		goto changed;	/* EINVAL: a directory there now, where a file was (or the other way) */
	if (pin || whole) {
		rc = 0;
		goto out;
	}
	flags |= (sf.f_flag & ST_NOSUID ? MS_NOSUID : 0) | (sf.f_flag & ST_NODEV ? MS_NODEV : 0) |
	    (sf.f_flag & ST_NOEXEC ? MS_NOEXEC : 0) | (sf.f_flag & ST_NOATIME ? MS_NOATIME : 0) |
	    (sf.f_flag & ST_NODIRATIME ? MS_NODIRATIME : 0) | (sf.f_flag & ST_RELATIME ? MS_RELATIME : 0);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if ((rc = mount(NULL, self, NULL, flags, NULL)) == 0)
		goto out;
	/* EINVAL, KERNEL: another program removed the name since the move:
	 * the kernel took the new mount off it (a mount point removed in
	 * another namespace goes from every namespace), and a mount no longer
	 * attached cannot be remounted */
changed:
	{
		struct stat now;

		/* not what was cloned at the name any more (a lookup during an
		 * unlink may still find it, with no link left): sbx covers it
		 * again; else the error stands */
		if (errno == EINVAL && (lstat(b->path, &now) < 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino ||
		    !now.st_nlink))
			errno = ESTALE;
	}
out:
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

/* Rounds of covering again (run_rebind) before sbx-init gives up on a name
 * another program keeps changing. */
#define SBX_REBIND_ROUNDS	8

/* The binds of names in a writable place (plan_binds_to_init), in the
 * plan's order (parents first). Between sbx covering a name (ph_cover) and
 * this bind, another program may have removed it, or put another file or
 * directory there: the bind fails (ENOENT, ESTALE). Those go back to sbx
 * in one message; sbx covers each as it is now (a placeholder where it is
 * gone) and says what to bind, and they are bound again, in order. A name
 * still changing after SBX_REBIND_ROUNDS stops the run, saying why. */
static void
init_binds(struct inner_msg *m, int ctl, bool nested)
{
	uint32_t *redo = amalloc((m->nbinds + 1) * sizeof(*redo)), nredo = 0, *todo = NULL, ntodo = m->nbinds;
	struct buf msg = { 0 };
	const char *why;
	int nofd[1], nfd;

	for (int round = 0; ntodo; round++) {
		nredo = 0;
		for (uint32_t k = 0; k < ntodo; k++) {
			uint32_t i = todo ? todo[k] : k;
			const struct init_bind *b = &m->binds[i];

			if (b->flags & IB_NONE)
				continue;
			if (!nested)
				die_hint(weaker_hint, "cannot bind %s onto itself: no nested namespaces", b->path);
			if (bind_held(b) == 0)
				continue;
			if (errno != ENOENT && errno != ESTALE && errno != ENOTDIR)
				die_hint(errno == ENOSYS ? "the kernel lacks mount_setattr (Linux 5.12+), needed for a "
				    "mount below a dangerous name" : weaker_hint, "cannot bind %s onto itself%s: %s", b->path,
				    b->flags & IB_PIN ? "" : " read-only", strerror(errno));
			if (round == SBX_REBIND_ROUNDS)
				die_hint("another program keeps removing or replacing it; run again when it has finished",
				    "%s changed on this machine while the sandbox was being built, %d times; the command "
				    "did not run", b->path, round + 1);
			redo[nredo++] = i;
		}
		if (!nredo)
			break;
		rebind_ask_encode(redo, nredo, &msg);
		if (frame_send(ctl, SBX_REBIND_ASK, msg.p, msg.n, NULL, 0) < 0 ||
		    frame_recv(ctl, &msg, nofd, 0, &nfd) != SBX_REBIND_ANSWER)
			_exit(SBX_EXIT_FAILURE);	/* sbx has gone (it said why, if anything) */
		if (rebind_answer_decode(msg.p, msg.n, m->binds, redo, nredo, &why) < 0)
			die("sbx's answer about the names that changed: %s", why);
		if (!todo)
			todo = amalloc((m->nbinds + 1) * sizeof(*todo));
		memcpy(todo, redo, nredo * sizeof(*todo));
		ntodo = nredo;
	}
	free(msg.p);
	for (uint32_t i = 0; i < m->nbinds; i++)
		if (m->binds[i].flags & IB_PIN) {
			char cwd[PATH_MAX];

			/* KERNEL: a mount does not move the processes whose working
			 * directory it covers: they stay in what lies below it. A pin
			 * of the working directory (the project inside a writable
			 * root) or of a directory above it would leave the command
			 * there, where none of the binds made on the pin's tree are,
			 * and a relative .vscode/x would be written. bwrap enters the
			 * directory after its own mounts; sbx-init enters it again, by
			 * its path, after its own. (Gone meanwhile: left as it is.) */
			if (getcwd(cwd, sizeof(cwd)) && chdir(cwd) < 0)
				die("cannot enter %s again after the binds: %s", cwd, strerror(errno));
			break;
		}
}

/* Session mode (10f): sbx-init starts no command of its own. For each
 * exec sbx sends ('E', with the client's stdin, stdout and stderr) it
 * starts one as it would the command (a session of its own, no
 * capabilities, under the filters it inherits), says it started ('S' with
 * its pid, which is its session and group) and ended ('Z' with its
 * status), and passes signals on ('K'). What the execs leave running (a
 * dev server started in the background) is reaped here when it ends, and
 * lives until the session stops: pid 1 going takes its namespace with
 * it. sbx's socket is its one input; it never reads a byte from a
 * command. */
#define SBX_SESSION_MAX_EXECS	256
#define SBX_EXEC_STACK		(32 << 10)	/* a session exec's child until it execs (sys6 calls only) */

/* A session's key: a random word an exec's child passes to setsid, which
 * the observer's program lets go without a stop (seccomp_bpf.h, CMP_KEY).
 * In init's memory, which no process inside can read (not dumpable). */
static uint32_t session_key;

/* One exec as init keeps it, from its 'E' until it is reaped. Its child
 * is started by clone(CLONE_VM) (init_start_exec): it runs in init's
 * memory, beside init, until it execs, so everything it reads lives
 * here until the exec is reaped: the request (the strings), the plan's
 * arrays (made in the exec's own arena, mem), its stack. The buffers are
 * kept for the slot's next exec: a sequential session's execs fault in no
 * new page. The child writes only its failure, which init puts into words
 * once the child has been reaped (init_reap_exec). */
struct sess_exec {
	uint32_t id;
	pid_t pid;		/* 0: the slot is free */
	struct buf req;
	struct arena_block *mem;
	char *stack;		/* SBX_EXEC_STACK bytes above a guard page */
	/* what the child reads */
	struct exec_plan plan;
	char **envp;
	const char *cwd;
	const sigset_t *old;
	int fds[3];
	bool shared;		/* it shares init's memory (false: it was forked) */
	/* what it writes: why it did not become the command (err 0: it did) */
	struct child_failure fail;
};

static void
init_send_u32s(int ctl, char type, uint32_t a, uint32_t b)
{
	uint32_t v[2] = { a, b };

	if (frame_send(ctl, type, v, sizeof(v), NULL, 0) < 0)
		_exit(0);	/* sbx has gone: so does the session */
}

/* An exec's arena emptied for the slot's next: its first block kept,
 * unless a long request made it large (as the request's buffer). */
static void
init_exec_mem_done(struct sess_exec *x)
{
	while (x->mem && (x->mem->next || x->mem->size > 65536)) {
		struct arena_block *next = x->mem->next;

		free(x->mem);
		x->mem = next;
	}
	if (x->mem)
		x->mem->used = 0;
}

/* The exec's child could not become the command: put into words by init
 * once the child has been reaped (shared memory), or by the child itself
 * (forked). */
static int
exec_child_failed(struct sess_exec *x, const char *what, const char *name, int err)
{
	x->fail = (struct child_failure){ err, what, name };
	return x->shared ? child_failure_status(&x->fail) : child_failure_write(2, &x->fail);
}

/* The child of a session's exec, from clone(CLONE_VM) to its execve: what
 * a forked child of init would do, in system calls only (sys6, above),
 * on its own stack. Its descriptors, signal handlers, directory and
 * session are its own (no CLONE_FILES, CLONE_SIGHAND, CLONE_FS);
 * its memory is init's, non-dumpable like init (the flag is the memory's),
 * so no process of the sandbox can read or write it before the exec;
 * init's signals stay blocked in it until the mask is restored, after
 * the handlers are default again, so none of init's handlers runs in it.
 * Returns the exit status when it could not exec (libc's clone wrapper
 * exits with it: no atexit handler of init's runs). */
static int
session_exec_child(void *arg)
{
	struct sess_exec *x = arg;
	long dfl[4] = { 0 };	/* struct sigaction as the kernel reads it: SIG_DFL, no flags, no mask */
	int err;

	for (size_t i = 0; i < LEN(forwarded_signals); i++)
		sys6(SYS_rt_sigaction, forwarded_signals[i], (long)dfl, 0, 8, 0, 0);
	sys6(SYS_rt_sigaction, SIGCHLD, (long)dfl, 0, 8, 0, 0);
	sys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)x->old, 0, 8, 0, 0);
	/* SECURITY: a session of its own, not a process group in init's:
	 * setpgid(2) moves a process only into a group of its own session, so
	 * no process of another exec can join this one's group (and have its
	 * refusals charged here, or this one's signals) nor one of this exec
	 * another's; a refusal is its exec's by the caller's session id
	 * (10f), which a process can leave only by making a new session, and
	 * the observer sees that (a session's program observes setsid, but
	 * this one: it passes the session's key, seccomp_bpf.h). It fails
	 * only for a group leader, which a fresh child is not */
	if ((err = -(int)sys3(SYS_setsid, session_key, 0, 0)) > 0)
		return exec_child_failed(x, "cannot start a session of its own", "", err);
	/* the client's 0, 1, 2 (received close-on-exec, like init's own
	 * descriptors, which the command never sees); init's 0-2 are open,
	 * so none of them is one of 0-2 already */
	for (int k = 0; k < 3; k++)
		if ((err = -(int)sys3(SYS_dup3, x->fds[k], k, 0)) > 0)
			return exec_child_failed(x, "cannot take the client's descriptors", "", err);
	/* no capabilities to drop: init_serve dropped them all, and a child
	 * inherits none; no PDEATHSIG to clear: a child never inherits it */
	if ((err = -(int)sys3(SYS_chdir, x->cwd, 0, 0)) > 0)
		return exec_child_failed(x, "cannot enter the directory inside the sandbox: ", x->cwd, err);
	return exec_child_failed(x, NULL, x->plan.argv[0], exec_planned(&x->plan, x->envp));
}

/* Start one exec: its request (b's memory becomes the slot's), its plan,
 * its child. */
static void
init_start_exec(int ctl, const sigset_t *old, struct buf *b, int *fds, int nfd, struct sess_exec *ex)
{
	struct exec_req e;
	struct sess_exec *x;
	struct arena_block *own;
	struct buf swap;
	const char *why = "descriptors missing";
	size_t slot;
	pid_t pid;

	for (slot = 0; slot < SBX_SESSION_MAX_EXECS && ex[slot].pid; slot++)
		;
	if (slot == SBX_SESSION_MAX_EXECS) {
		/* the words with the status, for the client to print: init
		 * never writes a client's descriptor (init_reap_exec) */
		static const char words[] = "sbx: the session runs too many commands at once\n";
		char msg[8 + sizeof(words)];
		uint32_t v[2] = { exec_req_decode(b->p, b->n, &e, &why) < 0 ? 0 : e.id, SBX_EXIT_FAILURE };

		memcpy(msg, v, 8);
		memcpy(msg + 8, words, sizeof(words) - 1);
		if (frame_send(ctl, 'Z', msg, sizeof(msg) - 1, NULL, 0) < 0)
			_exit(0);
		return;
	}
	x = &ex[slot];
	swap = x->req;
	x->req = *b;
	*b = swap;
	/* ARENA: the exec's own, until it is reaped (init_reap_exec) */
	own = arena_head;
	arena_head = x->mem;
	if (nfd != 3 || exec_req_decode(x->req.p, x->req.n, &e, &why) < 0) {
		x->mem = arena_head;
		arena_head = own;
		init_exec_mem_done(x);
		warnx("session: an exec request refused: %s", why);
		init_send_u32s(ctl, 'Z', 0, SBX_EXIT_FAILURE);
		return;
	}
	x->plan = exec_plan_make(e.argv, env_value(e.envp, "PATH"));
	x->mem = arena_head;
	arena_head = own;
	x->envp = e.envp;
	x->cwd = e.cwd;
	x->old = old;
	x->fail = (struct child_failure){ 0 };
	memcpy(x->fds, fds, sizeof(x->fds));
	if (!x->stack) {
		char *m = mmap(NULL, SBX_EXEC_STACK + 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

		if (m != MAP_FAILED && mprotect(m, 4096, PROT_NONE) == 0)
			x->stack = m + 4096;	/* an overflow faults, never writes below */
		else if (m != MAP_FAILED)
			munmap(m, SBX_EXEC_STACK + 4096);
	}
	/* SECURITY: not vfork (as a run's command is started). A vfork
	 * parent sleeps until its child execs, and here the child is in reach
	 * of every process of the session: one an earlier exec left running,
	 * of the same uid in the same pid namespace, can watch for the new
	 * pid and SIGSTOP it before it execs, and init would sleep for good,
	 * every later exec with it (found by an attack review). clone with
	 * CLONE_VM but not CLONE_VFORK costs what vfork does (no page tables
	 * copied, no copy-on-write faults on either side: fork cost about 1
	 * ms more an exec on a VM where faults trap) and init goes on at once;
	 * a stopped child holds only its own slot. Where the kernel or an
	 * emulator refuses it (qemu-user takes CLONE_VM only for threads), the
	 * child is forked, and says its own failure. */
	x->shared = SBX_RAW_SYSCALLS && x->stack;
	pid = x->shared ? clone(session_exec_child, x->stack + SBX_EXEC_STACK, CLONE_VM | SIGCHLD, x) : -1;
	if (pid < 0) {
		x->shared = false;
		if ((pid = fork()) == 0)
			_exit(session_exec_child(x));
	}
	if (pid < 0) {
		init_exec_mem_done(x);
		init_send_u32s(ctl, 'Z', e.id, SBX_EXIT_FAILURE);
		return;
	}
	/* no setpgid(pid, pid) here as a forked child's parent would: the
	 * child's setsid fails for a group leader. A 'K' before the child
	 * has run finds no group yet, and is sent to the child itself */
	x->id = e.id;
	x->pid = pid;
	init_send_u32s(ctl, 'S', e.id, (uint32_t)pid);
}

/* An exec's child has ended: its status to sbx ('Z'), with the words of
 * its failure when it could not become the command, its slot free. The
 * words go with the status, for the client to print: init never writes
 * to a client's descriptor, which a process inside that shares it (a
 * terminal, a pipe) could have filled, and init would wait there for
 * good, every exec with it. The exec's memory is kept for the slot's
 * next one: the request's buffer, the stack, the arena's first block. */
static void
init_reap_exec(int ctl, struct sess_exec *x, int status)
{
	uint32_t code = WIFSIGNALED(status) ? 128 + (uint32_t)WTERMSIG(status) : (uint32_t)WEXITSTATUS(status);
	char msg[8 + SBX_FAILURE_WORDS_MAX];
	size_t n = 8;

	memcpy(msg, &x->id, 4);
	memcpy(msg + 4, &code, 4);
	/* SECURITY: only a child that exited wrote its whole failure; one
	 * killed (by any process of the session, at any instruction) may
	 * have left err set and name not yet (a NULL read here) */
	if (WIFEXITED(status) && x->fail.err)
		n += child_failure_words(&x->fail, msg + 8);
	if (frame_send(ctl, 'Z', msg, n, NULL, 0) < 0)
		_exit(0);	/* sbx has gone: so does the session */
	init_exec_mem_done(x);
	buf_recycle(&x->req);
	x->pid = 0;
}

static void __attribute__((noreturn))
init_serve(int ctl, const sigset_t *set, const sigset_t *old)
{
	static struct sess_exec ex[SBX_SESSION_MAX_EXECS];
	int sfd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
	struct buf b = { 0 };

	if (sfd < 0)
		_exit(SBX_EXIT_FAILURE);
	/* SECURITY: init holds no capability from here on (bounding set,
	 * ambient, effective, permitted): serving needs none (clone,
	 * kill within its uid, waitpid), so what it starts inherits none and
	 * each exec skips a drop of ~80 prctl calls; and a command that
	 * found a way into init would find nothing to use. */
	if (drop_capabilities() < 0)
		die("cannot drop capabilities: %s", strerror(errno));
	for (;;) {
		struct pollfd pfd[2] = { { ctl, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		struct signalfd_siginfo si;

		if (poll(pfd, 2, -1) < 0)
			continue;
		while (pfd[1].revents && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			int status;
			pid_t pid;

			if (si.ssi_signo != SIGCHLD)
				continue;	/* the session's own end comes as SIGKILL to pid 1 of bwrap's */
			while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
				for (size_t k = 0; k < SBX_SESSION_MAX_EXECS; k++)
					if (ex[k].pid == pid)
						init_reap_exec(ctl, &ex[k], status);
		}
		if (pfd[0].revents) {
			int fds[3], nfd = 0, type;
			struct arena_mark mark = arena_mark();

			type = frame_recv(ctl, &b, fds, 3, &nfd);
			if (type < 0)
				_exit(0);	/* sbx has gone: the session ends */
			if (type == 'E') {
				init_start_exec(ctl, old, &b, fds, nfd, ex);
			} else if (type == 'K' && b.n == 8) {
				uint32_t v[2];

				memcpy(v, b.p, 8);
				for (size_t k = 0; k < SBX_SESSION_MAX_EXECS; k++)
					if (ex[k].pid && ex[k].id == v[0] && v[1] > 0 && v[1] < 65 &&
					    kill(-ex[k].pid, (int)v[1]) < 0 && errno == ESRCH)
						kill(ex[k].pid, (int)v[1]);	/* before its setsid */
			}
			for (int k = 0; k < nfd; k++)
				close(fds[k]);
			arena_release(mark);
		}
	}
}

/* The observer's listener goes to sbx with "R" (SCM_RIGHTS), and init,
 * once under the observer's program, cannot send it: a sendmsg is a call
 * that program stops (its address is in memory, so every one is
 * observed, 10b), and it would wait for an observer that only this very
 * message lets sbx start. So the hand sends it: a child of init made
 * before the program (KERNEL: a seccomp filter binds the task that
 * installs it and the children that task makes afterwards, never one
 * made before) that shares init's descriptors (CLONE_FILES), so the
 * listener init gets is the hand's too. It waits on a pipe for the
 * listener's number, sends "R" and exits. It closes nothing: the table
 * is init's. It shares init's memory too (CLONE_VM, on a stack of its
 * own, as a session's exec does: no page tables copied, and no page init
 * writes afterwards faults to be copied), so it makes system calls only
 * (sys6); where it cannot (no raw system calls here, or clone refused),
 * it is forked. Either way its memory is not dumpable, as init's, so no
 * process inside reads the table through /proc. */
#define SBX_HAND_STACK	8192

struct hand { pid_t pid; int go[2]; int ctl; };

static int
hand_main(void *arg)
{
	const struct hand *h = arg;
	union { struct cmsghdr c; char b[CMSG_SPACE(sizeof(int))]; } u;
	struct iovec iov = { (void *)"R", 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int listener = -1;
	long r;

	while ((r = sys3(SYS_read, h->go[0], &listener, sizeof(listener))) == -EINTR)
		;
	if (r != (long)sizeof(listener))
		return 1;
	if (listener >= 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.b;
		mh.msg_controllen = sizeof(u.b);
		u.c.cmsg_level = SOL_SOCKET;
		u.c.cmsg_type = SCM_RIGHTS;
		u.c.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&u.c), &listener, sizeof(int));
	}
	while ((r = sys3(SYS_sendmsg, h->ctl, &mh, MSG_NOSIGNAL)) == -EINTR)
		;
	return r == 1 ? 0 : 1;
}

/* Start the hand; returns 0, or -1 (then there is no observer). */
static int
hand_start(struct hand *h, int ctl)
{
	static char stack[SBX_HAND_STACK] __attribute__((aligned(16)));

	h->ctl = ctl;
	if (pipe2(h->go, O_CLOEXEC) < 0)
		return -1;
	h->pid = SBX_RAW_SYSCALLS ? clone(hand_main, stack + sizeof(stack), CLONE_VM | CLONE_FILES | SIGCHLD, h) : -1;
	if (h->pid < 0 && (h->pid = (pid_t)syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0)) == 0)
		_exit(hand_main(h));
	if (h->pid > 0)
		return 0;
	close(h->go[0]);
	close(h->go[1]);
	return -1;
}

/* "R", with the observer's listener attached when there is one: by the
 * hand when it runs, else by init itself (no observer: nothing stops
 * it). SECURITY: init keeps no copy: if the observer dies and sbx lets
 * the listener go, the kernel fails the calls it would have reported
 * (ENOSYS) rather than leave them waiting on a listener nobody reads.
 * Exits when sbx has gone. */
static void
hand_over(struct hand *h, int ctl, int listener)
{
	int status = 0;

	if (h->pid > 0) {
		if (write(h->go[1], &listener, sizeof(listener)) != (ssize_t)sizeof(listener))
			kill(h->pid, SIGKILL);
		while (waitpid(h->pid, &status, 0) < 0 && errno == EINTR)
			;
		close(h->go[0]);
		close(h->go[1]);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			_exit(SBX_EXIT_FAILURE);
	} else if (send_fds(ctl, "R", 1, &listener, listener >= 0 ? 1 : 0) < 0) {
		_exit(SBX_EXIT_FAILURE);
	}
	if (listener >= 0)
		close(listener);
}

/* The write observer's program, with its hand and, in a session, its
 * key. Returns the listener, or -1: no observer. */
static int
observer_start(const struct inner_msg *m, struct hand *h, int ctl)
{
	if (!(m->flags & IF_OBSERVE) || observer_unavailable() || hand_start(h, ctl) < 0)
		return -1;
	if ((m->flags & IF_SESSION) &&
	    syscall(SYS_getrandom, &session_key, sizeof(session_key), 0) != (long)sizeof(session_key))
		session_key = 0;	/* no key: an exec's own setsid is observed too */
	return install_observer(m->flags & IF_SESSION, session_key);
}

/* init: pid 1 of the nested namespace (or, in a weaker sandbox that could
 * not nest, a plain child). Never returns. */
static void __attribute__((noreturn))
inner_init(struct inner_msg *m, int ctl, bool nested, const sigset_t *set, const sigset_t *old)
{
	struct exec_plan plan;
	struct hand hand = { -1, { -1, -1 }, -1 };
	pid_t cmd;
	int listener = -1, last_cap;

	/* non-dumpable: the command may not ptrace it or read its memory */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	inner_rename("sbx-init");
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (nested) {
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			die_hint(weaker_hint, "cannot make the nested mounts private: %s", strerror(errno));
		if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
			if (!(m->flags & IF_WEAKER))
				die_hint(weaker_hint, "cannot mount a fresh /proc for the nested pid namespace: %s",
				    strerror(errno));
		}
		/* as srt: no user namespaces below this one, on top of the filter */
		if (!(m->flags & IF_ALLOW_USERNS) &&
		    write_proc_file("/proc/sys/user/max_user_namespaces", "0\n") < 0 && !(m->flags & IF_WEAKER))
			die_hint(weaker_hint, "cannot set user.max_user_namespaces=0 inside: %s", strerror(errno));
		for (size_t i = 0; i < LEN(proc_covers); i++) {
			if (access(proc_covers[i], F_OK) < 0)
				continue;
			if (mount(proc_covers[i], proc_covers[i], NULL, MS_BIND | MS_REC, NULL) < 0 ||
			    mount(NULL, proc_covers[i], NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV |
			    MS_NOEXEC, NULL) < 0)
				die("cannot make %s read-only: %s", proc_covers[i], strerror(errno));
		}
	}
	for (uint32_t i = 0; i < m->nlinks; i++)
		if (!nested || pin_link(m->links[i]) < 0)
			die_hint(errno == ENOSYS ? "the kernel lacks the new mount API (Linux 5.2+); replace the link by "
			    "the file it points at" : weaker_hint, "cannot pin the symlink %s (a dangerous name) in place: %s",
			    m->links[i], nested ? strerror(errno) : "no nested namespaces");
	init_binds(m, ctl, nested);
	/* init runs under the filters too: every process the command can see does */
	if (install_filters(m->flags) < 0)
		die("cannot install the seccomp filters: %s", strerror(errno));
	/* the write observer's program last: init makes no observed call
	 * after it, and its listener goes to sbx with "R" (10b), sent by the
	 * hand (hand_start). Where the kernel cannot (observer_unavailable),
	 * the run goes on unobserved: the observer is never part of the
	 * boundary. */
	listener = observer_start(m, &hand, ctl);
	if (m->flags & IF_SESSION) {
		hand_over(&hand, ctl, listener);
		init_serve(ctl, set, old);
	}

	/* vfork: init's page tables are not copied for a child that execs at
	 * once, and init does not copy-on-write its own pages afterwards. No
	 * process of the sandbox exists yet to stop the child before it execs
	 * (which would hold init: a session's execs are forked for that,
	 * init_start_exec). What the child needs is worked out first, and it
	 * makes system calls only; its descriptors and signal handlers are its
	 * own copies (no CLONE_FILES, no CLONE_SIGHAND), and init's signals stay
	 * blocked in it until signals_restore, so no handler of init's runs on
	 * borrowed memory. None of
	 * them is one the observer's program sends to its listener (obs_calls:
	 * opens, mkdir, rename, a send...): that listener reaches sbx only
	 * with "R" below, once the child has exec'd, and a call waiting on it
	 * would hold the child, and init with it, for good. */
	plan = exec_plan_make(m->argv, getenv("PATH"));
	last_cap = cap_last();
	timing("init: mounts, filters done; the command starts");
	cmd = SBX_VFORK ? vfork() : fork();
	if (cmd < 0)
		die("fork: %s", strerror(errno));
	if (cmd == 0) {
		signals_restore(old);
		close(ctl);
		if (listener >= 0)
			close(listener);	/* close-on-exec too: the command never holds it */
		prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
		if (drop_capabilities_to(last_cap) < 0)
			child_fail("cannot drop capabilities", "", errno);
		exec_failed(m->argv[0], exec_planned(&plan, environ));
	}
	hand_over(&hand, ctl, listener);
	close(ctl);
	reap_and_forward(cmd, set, NULL);
}

static int
inner_main(int argc, char **argv)
{
	sigset_t set, old;
	struct inner_msg m;
	struct buf msg = { 0 };
	char *list, *tok, *save, hdr[8];
	const char *why;
	int ctl;
	uint32_t len;
	uid_t uid = getuid();
	gid_t gid = getgid();
	bool nested = true, own_net = false;
	pid_t init;
	struct inner_serve serve = { &m, -1, { -1, -1 } };

	if (argc != 4)
		die("--inner is sbx's own helper; it is not for direct use");
	timing("inner: started in bwrap's namespaces");
	inner_argv = argv;
	inner_argc = argc;
	ctl = parse_fd(argv[2]);
	list = astrdup(argv[3]);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		close(parse_fd(tok));	/* sbx's own descriptors: the command gets none of them */
	fcntl(ctl, F_SETFD, FD_CLOEXEC);

	/* the instructions: a header, then exactly the length it gives */
	if (read(ctl, hdr, 8) != 8)
		die("--inner: no instructions on the control socket");
	memcpy(&len, hdr + 4, 4);
	if (len > SBX_CTL_MAX_BYTES)
		die("--inner: instructions too large");
	buf_putn(&msg, hdr, 8);
	buf_grow(&msg, len);
	while (msg.n < 8 + (size_t)len) {
		ssize_t r = read(ctl, msg.p + msg.n, 8 + len - msg.n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("--inner: instructions cut short");
		msg.n += (size_t)r;
	}
	if (ctl_decode(msg.p, msg.n, &m, &why) < 0)
		die("--inner: bad instructions: %s", why);
	free(msg.p);

	if (m.flags & (IF_DNS | IF_CAPTURE)) {
		own_net = inner_own_network(uid, gid);
		/* bwrap made none (bw_render_options): without this one the
		 * command would have the host's network */
		if (!own_net && SBX_ONE_NETNS && !(m.flags & IF_WEAKER))
			die_hint("set network-dns off in the policy (names then do not resolve inside)",
			    "cannot make the sandbox's network namespace (a user namespace with a network namespace of its "
			    "own): %s; the command did not run", strerror(errno));
	}
	if (inner_hands_fds(&m)) {
		/* the listeners, made here in the command's network namespace
		 * (bwrap's, or with own_net the helper's own), where
		 * the command will connect to them; the host's proxy owns them
		 * from here on. Each comes with its role and port: "L" then
		 * (role, u16 port) per descriptor. */
		int lfd[SBX_MAX_HANDED], nl = 0, xp[2];
		char desc[SBX_HANDED_MAX_BYTES];
		struct handed h = { 0 };

#define HAND(fd_, role_, port_) do { lfd[nl++] = (fd_); handed_add(&h, (role_), (uint16_t)(port_)); } while (0)
		for (int v6 = 0; v6 < 2; v6++) {
			int fd;

			if ((m.flags & IF_PROXY) && !m.socat) {
				if ((fd = inner_listen(SBX_PROXY_HTTP_PORT, v6)) >= 0)
					HAND(fd, LR_PROXY, SBX_PROXY_HTTP_PORT);
				if ((fd = inner_listen(SBX_PROXY_SOCKS_PORT, v6)) >= 0)
					HAND(fd, LR_PROXY, SBX_PROXY_SOCKS_PORT);
			}
			for (uint32_t k = 0; k < m.nports; k++)	/* allow-host-port */
				if ((fd = inner_listen(m.ports[k], v6)) >= 0)
					HAND(fd, LR_HOST_PORT, m.ports[k]);
		}
		if (own_net && (m.flags & IF_DNS)) {
			int fd = inner_dns_socket();

			if (fd >= 0)
				HAND(fd, LR_DNS, 53);
		}
		for (uint32_t k = 0; own_net && (m.flags & IF_CAPTURE) && k < m.ncapture; k++)
			HAND(inner_capture_listen(m.capture[k]), LR_CAPTURE, m.capture[k]);
		if (m.nexpose) {
			if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, xp) < 0)
				die("socketpair: %s", strerror(errno));
			HAND(xp[1], LR_EXPOSE, 0);
			serve.xp = xp[0];
		}
#undef HAND
		if (send_fds(ctl, desc, handed_encode(&h, desc), lfd, nl) < 0)
			die("cannot hand the proxy listeners to sbx: %s", strerror(errno));
		while (nl > 0)
			close(lfd[--nl]);
	}
	if ((m.flags & IF_PROXY) && m.socat) {
		serve.logs[0] = inner_start_socat(m.socat, SBX_PROXY_HTTP_PORT, m.bridge_sock[0]);
		serve.logs[1] = inner_start_socat(m.socat, SBX_PROXY_SOCKS_PORT, m.bridge_sock[1]);
	}
	signals_take(&set, &old);
	/* the nested user namespace exists already with own_net */
	if (unshare((own_net ? 0 : CLONE_NEWUSER) | CLONE_NEWPID | CLONE_NEWNS) < 0) {
		if (!(m.flags & IF_WEAKER))
			die_hint(weaker_hint, "cannot create the nested user, pid and mount namespaces: %s",
			    strerror(errno));
		nested = false;	/* weaker: the filters still hold, in bwrap's namespaces */
	} else if (!own_net) {
		inner_map_ids(uid, gid);
	}
	init = fork();	/* after CLONE_NEWPID, the first child is pid 1 there */
	if (init < 0)
		die("fork: %s", strerror(errno));
	if (init == 0) {
		/* init and the command hold nothing of what the helper serves */
		for (int k = 0; k < 2; k++)
			if (serve.logs[k] >= 0)
				close(serve.logs[k]);
		if (serve.xp >= 0)
			close(serve.xp);
		inner_init(&m, ctl, nested, &set, &old);
	}
	close(ctl);
	reap_and_forward(init, &set, serve.xp >= 0 || serve.logs[0] >= 0 ? &serve : NULL);
}

/* ---- 10b. The write observer: what the command tried ----------------
 *
 * sbx-init installs the observer's program (seccomp_bpf.h, RG_OBSERVE:
 * USER_NOTIF for write-intent calls, connect, a send with an address, a
 * bind; in a session, setsid) with a listener, and its hand gives the
 * listener to sbx with "R" (10a); sbx forks this process to read it
 * (run_spawn_observer). Each notification: read the path (or sockaddr)
 * from the caller's memory, check the notification is still valid, send
 * an event to sbx, answer CONTINUE. sbx judges the events against the
 * plan (obs_judge, section 8). Which calls it sees, and why the others
 * are not needed, is a table of tests/unit.c (observer_coverage).
 *
 * Why a process of its own, in the host's namespaces, outside bwrap:
 *  - the listener must be where the command cannot reach it: a command
 *    holding it could answer its own calls (and a listener the command
 *    can read shows every path its peers write). Only sbx's processes
 *    outside the sandbox hold it: init hands it over and closes its copy.
 *  - DESIGN 3.6: it parses hostile memory, so it is locked down before it
 *    reads any (obs_lockdown): not dumpable; the proxy's seccomp program
 *    (no exec, no write-opens, no deleting or renaming, no new namespaces,
 *    no mounts, no ptrace or process_vm_writev) plus no new process at all
 *    (RG_NOFORK: clone, fork, vfork), less one rule: process_vm_readv,
 *    which it reads the caller with (RG_NOREAD). No Landlock: Landlock's ptrace rule
 *    lets a process in a Landlock domain reach into another's memory only
 *    when that one is in the same or a nested domain, and the command is
 *    in none, so a Landlocked observer could not open /proc/PID/mem.
 *  - the kernel gives each notification's pid in the reader's pid
 *    namespace: in the host's, /proc/PID/{mem,cwd,fd/N,comm,status} are
 *    the caller's, with no translation.
 *  - reading the caller's memory (process_vm_readv, or /proc/PID/mem
 *    where that is refused) needs ptrace access (PTRACE_MODE_ATTACH). The
 *    uid is the same, and the command's user namespaces (bwrap's, then
 *    the nested one) were made by this uid, so this process has
 *    CAP_SYS_PTRACE over them: a process whose euid owns a user
 *    namespace made from its own has every capability in it and in its
 *    children (cap_capable()). That also answers Yama: ptrace_scope=1
 *    admits a tracer that is not an ancestor when it has CAP_SYS_PTRACE
 *    in the tracee's user namespace (yama_ptrace_access_check). Scope 2
 *    and 3 refuse it: then every read fails and no event comes; the
 *    calls still continue.
 *
 * Hostile, racing memory: every read is bounded (PATH_MAX, a NUL must be
 * found; the sockaddr by its addrlen, at most a sockaddr_storage;
 * sendmmsg's headers by UIO_MAXIOV), and
 * SECCOMP_IOCTL_NOTIF_ID_VALID is asked after reading, when there is an
 * event to send: if the caller has gone, its pid may name another
 * process, whose memory was read, and the event is dropped. A thread of the command may change the path between
 * our read and the kernel's: that is why the events are hints (DESIGN
 * 3.2) and never a decision. The audit's attribution (9b) leans on them
 * the other way, so the observer also says when that could have happened
 * (the attribution checks, below).
 *
 * It never changes what the command can do: every notification is
 * answered SECCOMP_USER_NOTIF_FLAG_CONTINUE, read or not. It never waits
 * for sbx (an event the pair cannot take now is counted, and the count
 * rides on the next one). If it dies, sbx (which keeps a copy of the
 * listener) starts another; the calls waiting meanwhile wait for it. */

/* Up to n bytes of process pid's memory at addr. Returns the count (short
 * where an unmapped page begins), or -1. One process_vm_readv, which needs
 * the same ptrace access as /proc/PID/mem (above) and is the observer's
 * only exception to the proxy's filter (RG_NOREAD); where it is refused
 * (ENOSYS, or EPERM from a container's filter) /proc/PID/mem is read
 * instead, and the refusal is remembered (a page it cannot read is read
 * there too, below): an open, a pread and a close
 * each time, about 6 us more a call here, half of what the observer
 * costs a command's connect. (An EPERM of the ptrace check itself, Yama
 * at 2 or 3, would refuse /proc/PID/mem just the same: nothing is lost by
 * remembering it.) */
static ssize_t
obs_read_mem(uint32_t pid, uint64_t addr, void *buf, size_t n)
{
	static bool vm_readv_refused;
	char path[40];
	ssize_t r, got = -1;	/* got: what process_vm_readv read, if short */
	int fd;

	if (addr > (uint64_t)INT64_MAX - n || pid > INT_MAX)
		return -1;
#if SBX_LINUX
	if (!vm_readv_refused) {
		struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };

		r = syscall(SYS_process_vm_readv, (int)pid, &local, 1UL, &remote, 1UL, 0UL);
		if (r == (ssize_t)n || (r < 0 && errno != ENOSYS && errno != EPERM && errno != EFAULT))
			return r;
		if (r < 0 && errno != EFAULT)
			vm_readv_refused = true;
		got = r;
		/* SECURITY: short, or EFAULT: process_vm_readv reads only pages
		 * mapped readable, and the kernel's own copy of a call's path
		 * reads a page mapped PROT_WRITE or PROT_EXEC alone (the hardware
		 * cannot refuse it); a command that put the path there hid every
		 * refusal from the observer (found by an attack review:
		 * observer_unreadable_page_reported). /proc/PID/mem reads what
		 * the kernel reads (FOLL_FORCE). */
	}
#endif
	snprintf(path, sizeof(path), "/proc/%u/mem", (unsigned)pid);
	if ((fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC)) < 0)
		return got;
	r = pread(fd, buf, n, (off_t)addr);	/* the same bytes first, if any came */
	close(fd);
	return r > got ? r : got;
}

/* A NUL-terminated path from the caller's memory, at most n - 1 bytes.
 * A read that stops at an unmapped page keeps what came; no NUL within
 * the bound is no path. Returns 0, or -1. */
static int
obs_read_path(uint32_t pid, uint64_t addr, char *out, size_t n)
{
	ssize_t r, more = 0;
	size_t first = n - 1 < 256 ? n - 1 : 256;	/* most paths are short: copy 256 bytes, not 4 KiB */

	if (addr > (uint64_t)INT64_MAX - n)
		return -1;
	r = obs_read_mem(pid, addr, out, first);
	if (r == (ssize_t)first && !memchr(out, '\0', first) && first < n - 1)
		more = obs_read_mem(pid, addr + first, out + first, n - 1 - first);
	if (r <= 0 || !memchr(out, '\0', (size_t)r + (size_t)(more > 0 ? more : 0)))
		return -1;
	return 0;
}

/* readlink /proc/PID/WHAT (cwd, fd/N) into out. Returns 0 when it names an
 * absolute path (not "pipe:[...]" and the like), else -1. */
static int
obs_readlink(uint32_t pid, const char *what, char *out, size_t n)
{
	char path[64];
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%u/%s", (unsigned)pid, what);
	r = readlink(path, out, n - 1);
	if (r <= 0 || out[0] != '/')
		return -1;
	out[r] = '\0';
	return 0;
}

/* The absolute path a call names: its path argument, resolved against its
 * dirfd (or the cwd for AT_FDCWD) when relative; the file open on the
 * dirfd itself when the call has no path argument or it is empty or NULL
 * (AT_EMPTY_PATH, utimensat). Returns 0, or -1. */
static int
obs_resolve(const struct sbx_seccomp_notif *nf, int dfd_arg, int path_arg, char *out, size_t n, size_t *raw)
{
	char path[PATH_MAX], base[PATH_MAX], fdname[24];
	int dfd = dfd_arg < 0 ? AT_FDCWD : (int)(uint32_t)nf->data.args[dfd_arg];

	path[0] = '\0';
	if (path_arg >= 0 && nf->data.args[path_arg] &&
	    obs_read_path(nf->pid, nf->data.args[path_arg], path, sizeof(path)) < 0)
		return -1;
	*raw = strlen(path);
	if (path[0] == '/')
		return snprintf(out, n, "%s", path) < (int)n ? 0 : -1;
	if (dfd == AT_FDCWD)
		snprintf(fdname, sizeof(fdname), "cwd");
	else if (dfd >= 0)
		snprintf(fdname, sizeof(fdname), "fd/%d", dfd);
	else
		return -1;
	if (obs_readlink(nf->pid, fdname, base, sizeof(base)) < 0)
		return -1;
	if (!path[0])
		return snprintf(out, n, "%s", base) < (int)n ? 0 : -1;
	return snprintf(out, n, "%s/%s", strcmp(base, "/") == 0 ? "" : base, path) < (int)n ? 0 : -1;
}

/* An address: the sockaddr of len bytes at addr in the caller's memory,
 * as text and port into e. Returns 0 for an inet one, -1 for any other
 * family (a Unix socket is no direct connection) or a sockaddr that does
 * not fit its family. */
static int
obs_read_sockaddr(uint32_t pid, uint64_t addr, uint64_t len, struct obs_event *e)
{
	struct sockaddr_storage ss;
	ssize_t r;

	if (len > sizeof(ss))
		len = sizeof(ss);
	memset(&ss, 0, sizeof(ss));
	if (!addr || (r = obs_read_mem(pid, addr, &ss, (size_t)len)) < (ssize_t)sizeof(sa_family_t))
		return -1;
	if (ss.ss_family == AF_INET && r >= (ssize_t)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &in->sin_addr, e->target, sizeof(e->target));
		e->port = ntohs(in->sin_port);
		return 0;
	}
	if (ss.ss_family == AF_INET6 && r >= 24) {	/* SIN6_LEN_RFC2133: the kernel takes it */
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, e->target, sizeof(e->target));
		e->port = ntohs(in6->sin6_port);
		return 0;
	}
	return -1;
}

/* An address outside this host, read into e: what a connect or a send
 * reports (one to the loopback, the proxy's or the command's own
 * servers', is never a refusal: not sent, so sbx is not woken for each
 * request a client makes through the proxy). */
static bool
obs_remote_address(uint32_t pid, uint64_t addr, uint64_t len, struct obs_event *e)
{
	return obs_read_sockaddr(pid, addr, len, e) == 0 && !obs_is_local_address(e->target);
}

/* The address of a struct msghdr at addr (sendmsg): its msg_name and
 * msg_namelen; NULL or 0 is a connected socket's send. */
static bool
obs_msg_address(uint32_t pid, uint64_t addr, struct obs_event *e)
{
	struct msghdr m;

	return obs_read_mem(pid, addr, &m, sizeof(m)) == (ssize_t)sizeof(m) &&
	    obs_remote_address(pid, (uint64_t)(uintptr_t)m.msg_name, m.msg_namelen, e);
}

#define SBX_OBS_MMSG_MAX	1024	/* UIO_MAXIOV: the most sendmmsg sends in one call */

/* sendmmsg's vlen struct mmsghdr at addr: each distinct remote address
 * into ev (from ev[0], at most max; more are counted in *more). A
 * datagram to the loopback first must not hide a remote one after it, so
 * every header is read. Returns how many. */
static int
obs_mmsg_addresses(uint32_t pid, uint64_t addr, uint64_t vlen, struct obs_event *ev, int max, uint32_t *more)
{
	static struct mmsghdr vec[SBX_OBS_MMSG_MAX];	/* 64 KiB: not on the stack; one thread */
	static struct obs_event e;			/* each address read, its call and pid ev[0]'s */
	ssize_t r;
	int n = 0;

	vlen = (uint32_t)vlen < SBX_OBS_MMSG_MAX ? (uint32_t)vlen : SBX_OBS_MMSG_MAX;	/* an unsigned int */
	if ((r = obs_read_mem(pid, addr, vec, vlen * sizeof(vec[0]))) <= 0)
		return 0;
	e = ev[0];
	for (size_t i = 0; i < (size_t)r / sizeof(vec[0]); i++) {
		bool seen = false;

		if (!obs_remote_address(pid, (uint64_t)(uintptr_t)vec[i].msg_hdr.msg_name, vec[i].msg_hdr.msg_namelen, &e))
			continue;
		for (int k = 0; k < n && !seen; k++)
			seen = ev[k].port == e.port && strcmp(ev[k].target, e.target) == 0;
		if (seen)
			continue;
		if (n < max)
			ev[n++] = e;
		else
			(*more)++;	/* told as attempts not observed */
	}
	return n;
}

/* bind()'s Unix socket path, absolute (a relative one against the
 * caller's cwd), into out. Returns 0, or -1 for another family or an
 * abstract name (no file). */
static int
obs_bind_path(uint32_t pid, uint64_t addr, uint64_t len, char *out, size_t n)
{
	struct sockaddr_un un;
	char base[PATH_MAX];
	size_t pl;
	ssize_t r;

	if (len > sizeof(un))
		len = sizeof(un);
	memset(&un, 0, sizeof(un));
	if (!addr || (r = obs_read_mem(pid, addr, &un, (size_t)len)) <= (ssize_t)offsetof(struct sockaddr_un, sun_path) ||
	    un.sun_family != AF_UNIX || !un.sun_path[0])
		return -1;
	pl = strnlen(un.sun_path, (size_t)r - offsetof(struct sockaddr_un, sun_path));
	if (un.sun_path[0] == '/')
		return snprintf(out, n, "%.*s", (int)pl, un.sun_path) < (int)n ? 0 : -1;
	if (obs_readlink(pid, "cwd", base, sizeof(base)) < 0)
		return -1;
	return snprintf(out, n, "%s/%.*s", strcmp(base, "/") == 0 ? "" : base, (int)pl, un.sun_path) < (int)n ? 0 : -1;
}

/* The caller's session and thread group in the sandbox's innermost pid
 * namespace: the last fields of /proc/PID/status's NSsid and NStgid
 * lines (the kernel lists each as every namespace from the reader's down
 * sees it, Linux 4.1+; 0 where the session's leader is outside the
 * namespace, as sbx-init's is). In a session an exec's session is its
 * leader's pid, which sbx-init reports with "S" (10a, 10f). Read here,
 * while the caller waits for our answer: once it continues it may exit,
 * and a pid read later may be gone or another process's (NOTIF_ID_VALID
 * after it says the pid was still the caller's).
 * SECURITY: the one line the command chooses, Name:, comes escaped
 * (a newline as "\n"), so no comm can forge an NSsid line and put its
 * refusal in another exec's report. *tgid may be NULL. Returns the
 * session, 0 when it cannot be read. */
static uint32_t
obs_read_sid(uint32_t pid, uint32_t *tgid)
{
	static const char *const keys[2] = { "\nNSsid:", "\nNStgid:" };
	uint32_t got[2] = { 0, 0 };
	char path[40], st[4096];
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/status", (unsigned)pid);
	if ((fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	/* NSsid comes after Groups, in the first ~600 bytes; a process in
	 * hundreds of groups pushes it past the read: 0 then, unknown */
	r = read(fd, st, sizeof(st) - 1);
	close(fd);
	if (r <= 0)
		return 0;
	st[r] = '\0';
	for (int k = 0; k < 2; k++) {
		const char *line = strstr(st, keys[k]), *last;

		if (!line)
			continue;
		line += strlen(keys[k]);
		last = line;
		for (const char *q = line; *q && *q != '\n'; q++)
			if (*q == '\t' || *q == ' ')
				last = q + 1;
		got[k] = (uint32_t)strtoul(last, NULL, 10);
	}
	if (tgid)
		*tgid = got[1];
	return got[0];
}

#define SBX_OBS_EVENTS_MAX	8	/* a call's: rename's two paths and where each leads
					 * (obs_locate), sendmmsg's addresses */

/* What obs_collect read of a call, for the attribution checks after it
 * (obs_attribute): the bytes the kernel will read again, and whether
 * something could not be read at all. */
struct obs_seen {
	const struct obs_call *c;	/* NULL: not a call the observer knows */
	bool unread;			/* a path or openat2's flags it could not read (the call may go on) */
	bool readonly;			/* openat2 without write intent: no event */
	uint64_t addr[3];		/* the caller's paths (and openat2's struct) ... */
	size_t len[3];			/* ... of these lengths */
	int naddr;
};

static void
obs_seen_add(struct obs_seen *s, uint64_t addr, size_t len)
{
	if (addr && s->naddr < (int)LEN(s->addr)) {
		s->addr[s->naddr] = addr;
		s->len[s->naddr++] = len + 1;	/* and its NUL */
	}
}

/* What one notification names: up to SBX_OBS_EVENTS_MAX events (rename's
 * two paths, sendmmsg's distinct addresses; more are counted in *more),
 * with the caller's session when sessions is set (a session's). Returns
 * how many; s says what was read of a path's call. */
static int
obs_collect(const struct sbx_seccomp_notif *nf, const struct bpf_arch *arch, bool sessions,
    struct obs_event ev[SBX_OBS_EVENTS_MAX], uint32_t *more, struct obs_seen *s)
{
	const struct obs_call *c = NULL;
	const uint64_t *arg = nf->data.args;
	char comm[64];
	int n = 0, fd;
	uint32_t tgid = 0;
	uint8_t k;
	size_t raw = 0;

	memset(s, 0, sizeof(*s));
	if (nf->data.arch != arch->audit_arch)
		return 0;
	for (k = 0; k < LEN(obs_calls) && !c; k++)
		if (arch->nr[obs_calls[k].sc] == nf->data.nr)
			c = &obs_calls[k];
	if (!c)
		return 0;
	s->c = c;
	memset(ev, 0, SBX_OBS_EVENTS_MAX * sizeof(*ev));
	ev[0].call = (uint8_t)(c - obs_calls);
	ev[0].pid = nf->pid;
	switch (c->what) {
	case OW_PATH:
		if (c->sc == SC_openat2) {	/* struct open_how: its u64 flags come first */
			uint64_t flags = 0;

			obs_seen_add(s, arg[2], sizeof(flags) - 1);
			if (obs_read_mem(nf->pid, arg[2], &flags, sizeof(flags)) != (ssize_t)sizeof(flags)) {
				s->unread = true;
				return 0;
			}
			if (!(flags & SBX_O_OBSERVE)) {
				s->readonly = true;
				return 0;
			}
		}
		if (obs_resolve(nf, c->dfd, c->path, ev[0].target, sizeof(ev[0].target), &raw) == 0)
			n = 1;
		else
			s->unread = true;
		if (c->path >= 0)
			obs_seen_add(s, arg[c->path], raw);
		if (c->path2 >= 0) {
			ev[n] = ev[0];
			raw = 0;
			if (obs_resolve(nf, c->dfd2, c->path2, ev[n].target, sizeof(ev[n].target), &raw) == 0)
				n++;
			else
				s->unread = true;
			obs_seen_add(s, arg[c->path2], raw);
		}
		break;
	case OW_ADDR:
		n = obs_remote_address(nf->pid, arg[c->path], arg[c->dfd], &ev[0]);
		break;
	case OW_MSG:
		n = obs_msg_address(nf->pid, arg[c->path], &ev[0]);
		break;
	case OW_MMSG:
		n = obs_mmsg_addresses(nf->pid, arg[c->path], arg[c->dfd], ev, SBX_OBS_EVENTS_MAX, more);
		break;
	case OW_BIND:
		n = obs_bind_path(nf->pid, arg[c->path], arg[c->dfd], ev[0].target, sizeof(ev[0].target)) == 0;
		break;
	case OW_SETSID:
		/* the session it leaves, and the new one's id (its thread
		 * group's); from sbx-init's (0: an exec's own, which "S" names)
		 * there is nothing to tell */
		if (!sessions || !(ev[0].sid = obs_read_sid(nf->pid, &tgid)) || !tgid)
			return 0;
		snprintf(ev[0].target, sizeof(ev[0].target), "%u", (unsigned)tgid);
		return 1;
	case OW_SHARE:
		return 0;	/* nothing to report; obs_attribute looks at it */
	}
	if (n && sessions) {
		uint32_t sid = obs_read_sid(nf->pid, NULL);

		for (int i = 0; i < n; i++)
			ev[i].sid = sid;
	}
	snprintf(comm, sizeof(comm), "/proc/%u/comm", (unsigned)nf->pid);
	if (n && (fd = openat(AT_FDCWD, comm, O_RDONLY | O_CLOEXEC)) >= 0) {	/* "name\n", at most 16 bytes */
		ssize_t r = read(fd, comm, SBX_OBS_COMM_BYTES);

		close(fd);
		comm[r > 0 ? r : 0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		for (int i = 0; i < n; i++)	/* ev is zeroed: the NUL is there */
			memcpy(ev[i].comm, comm, strnlen(comm, SBX_OBS_COMM_BYTES));
	}
	return n;
}

/* ---- The audit's attribution, checked while the call waits -----------
 *
 * After the run, the audit (9b) leaves a repository entry that a process
 * outside the sandbox made during the run, and acts on one the sandbox
 * made. It knows what the sandbox touched from these records: each path a
 * write-intent call named, and, where a symlink lies on its way, where it
 * leads. That holds only if what the observer read is what the kernel
 * will act on once the call goes on, and a hostile command chooses both.
 * So each call is also checked here, and anything that could make the two
 * differ is said (enum obs_unsure); sbx then cannot tell who made what,
 * and acts on every repository changed during the run, as with the
 * observer off. Once said, the checks stop: the doubt is for the run.
 *
 * What could make them differ, and the check for each:
 *  - The bytes of the path, read here, read again by the kernel after
 *    CONTINUE: another thread of the caller (/proc/PID/task's link count
 *    is 2 + its threads: one fstatat), or another process writing them:
 *    a page shared with it (MAP_SHARED, or a file's page before it is
 *    copied on write: /proc/PID/pagemap says so, and such a page is
 *    vouched for only when its file is on a read-only mount in the
 *    caller's view), a process sharing the caller's memory, descriptors
 *    or cwd (clone with CLONE_VM, CLONE_FILES or CLONE_FS and not a
 *    thread; vfork from a process with threads; a thread made by a vfork
 *    child, whose parent then shares its memory: kcmp), or one writing
 *    it (ptrace, process_vm_writev, a write-open under /proc). The
 *    observer's program traps those calls (seccomp_bpf.h).
 *  - Where the path leads: a symlink on the way is followed here as the
 *    caller's kernel follows it (obs_walk: from the caller's root, every
 *    link read; into /proc, whose magic links only the caller can
 *    follow, it stops and says so), and where it leads is recorded too.
 *    What a path leads to changes only when a symlink comes onto it or a
 *    directory on it moves: making a symlink, or moving a directory or a
 *    symlink (a rename or link whose source is one), is said. A
 *    directory is taken from a cache once seen free of symlinks: only
 *    those calls could change that, and they end the checks.
 * Not checked: a process outside the sandbox changing a path at that
 * instant (the person's own tools; the command cannot time them).
 * Cost, while sure: a stat of /proc/PID/task, a pread of its pagemap
 * (kept open), an fstatat in a directory kept open; /proc/PID/stat and
 * kcmp once a process. Measured on a loaded 2-core VM, an open(O_CREAT)
 * in a writable root took 31.6 us observed before, 40.5 us now (best of
 * 15 runs of 3000; 14.1 us unobserved). */
#define SBX_OBS_DIRS		64	/* directories seen free of symlinks, kept open */
#define SBX_OBS_MAX_LINKS	40	/* symlinks in one path, as the kernel's MAXSYMLINKS */
#define SBX_PROC_SUPER_MAGIC	0x9fa0
#define SBX_KCMP_VM		1	/* kcmp(2)'s types */
#define SBX_KCMP_FILES		2
#define SBX_KCMP_FS		3
#define SBX_PM_PRESENT		(1ULL << 63)	/* /proc/PID/pagemap (Documentation/admin-guide/mm/pagemap.rst) */
#define SBX_PM_SWAP		(1ULL << 62)
#define SBX_PM_FILE		(1ULL << 61)	/* a file's page, or anonymous and shared */
#define SBX_CLONE_THREAD	0x00010000U
#define SBX_RENAME_EXCHANGE	2U
#define SBX_AT_EMPTY_PATH	0x1000U

struct obs_att {
	long init_parent;	/* the inner helper's pid: sbx-init's parent */
	bool unsure;		/* said once: nothing more to check this run */
	struct { char *path; int fd; } dir[SBX_OBS_DIRS];	/* free of symlinks, O_PATH; malloc'd */
	unsigned next;
	struct { uint32_t pid; ino_t ino; int pagemap; bool own; } procs[SBX_OBS_DIRS];	/* sharing
				 * nothing harmful; its pagemap kept open when its memory is its
				 * own, else -1 (obs_racy) */
	unsigned nextproc;
};

/* Process pid's parent and its number of threads, from /proc/PID/stat
 * ("pid (comm) S ppid ... num_threads" is field 20; comm may hold ')').
 * Returns 0, or -1. */
static int
obs_proc_stat(long pid, long *ppid, long *threads)
{
	char path[40], st[1024], *rp;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	r = read(fd, st, sizeof(st) - 1);
	close(fd);
	if (r <= 0)
		return -1;
	st[r] = '\0';
	if (!(rp = strrchr(st, ')')) || sscanf(rp + 1, " %*c %ld %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
	    "%*s %*s %ld", ppid, threads) != 2)
		return -1;
	return 0;
}

/* Does pid share its memory, descriptors or cwd with process other? Yes
 * when that cannot be known (kcmp: 0 the same, 1 or 2 not, -1 unknown). */
static bool
obs_shares(long pid, long other)
{
	static const int what[] = { SBX_KCMP_VM, SBX_KCMP_FILES, SBX_KCMP_FS };

	for (size_t i = 0; i < LEN(what); i++) {
		long r = syscall(SYS_kcmp, (pid_t)pid, (pid_t)other, what[i], 0UL, 0UL);

		if (r != 1 && r != 2)
			return true;
	}
	return false;
}

/* Is the private file mapping of pid at addr a read-only file's, in the
 * caller's view (its mount read-only; the file the one /proc/PID/maps
 * names)? Then no process of the sandbox can change that page. */
static bool
obs_file_page_fixed(uint32_t pid, uint64_t addr)
{
	char buf[8192], path[PATH_MAX + 48];
	size_t have = 0;
	ssize_t r;
	int fd;
	bool found = false, fixed = false;

	snprintf(path, sizeof(path), "/proc/%u/maps", (unsigned)pid);
	if ((fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	while (!found && (r = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		char *line = buf, *nl;

		have += (size_t)r;
		buf[have] = '\0';
		while (!found && (nl = memchr(line, '\n', (size_t)(buf + have - line)))) {
			unsigned long long lo, hi, off, ino;
			unsigned maj, mnr;
			char perms[8];
			int at = 0;

			*nl = '\0';
			if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &lo, &hi, perms, &off, &maj, &mnr, &ino, &at) >= 7 &&
			    addr >= lo && addr < hi) {
				struct stat st;
				struct statvfs sv;
				int f;

				found = true;
				if (perms[3] != 'p' || !ino || line[at] != '/' || strchr(line + at, '\\') ||
				    (size_t)snprintf(path, sizeof(path), "/proc/%u/root%s", (unsigned)pid, line + at) >= sizeof(path))
					break;
				if ((f = openat(AT_FDCWD, path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0)
					break;
				fixed = fstat(f, &st) == 0 && st.st_ino == ino && (unsigned)major(st.st_dev) == maj &&
				    (unsigned)minor(st.st_dev) == mnr && fstatvfs(f, &sv) == 0 && (sv.f_flag & ST_RDONLY);
				close(f);
			}
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			break;	/* a line longer than the buffer: not found, not vouched for */
	}
	close(fd);
	return fixed;
}

/* Could a process other than the caller change the bytes the kernel is
 * about to read again (s->addr), or its descriptors or cwd? Its threads;
 * the processes above it that it shares with (a vfork child shares with
 * its parent, which waits: harmless while that parent has no other
 * thread, and so on up); then each page's kind. */
static enum obs_unsure
obs_racy(struct obs_att *att, uint32_t pid, const struct obs_seen *s)
{
	static long pg;
	char path[40];
	struct stat task;
	long ppid, n, p = pid, up;
	int i, depth = 0;
	unsigned k;

	snprintf(path, sizeof(path), "/proc/%u/task", (unsigned)pid);
	if (stat(path, &task) < 0)
		return OU_UNREAD;
	if (task.st_nlink != 3)	/* 2 + its threads */
		return OU_THREADS;
	/* a process once seen sharing nothing harmful stays so (its memory
	 * is its own from its exec on; a vfork parent waits, and cannot make
	 * a thread): kept by pid and the inode of its /proc/PID/task, which a
	 * later process of that pid does not have. /proc/PID/stat costs 7 us */
	for (k = 0; k < LEN(att->procs); k++)
		if (att->procs[k].pid == pid && att->procs[k].ino == task.st_ino)
			break;
	if (k == LEN(att->procs)) {
		if (obs_proc_stat(pid, &ppid, &n) < 0 || n != 1)
			return OU_THREADS;
		for (; ppid > 0 && obs_shares(p, ppid); depth++, p = ppid, ppid = up)
			if (depth == 8 || obs_proc_stat(ppid, &up, &n) < 0 || n != 1)
				return OU_SHARING;
		k = att->nextproc++ % LEN(att->procs);
		if (att->procs[k].pagemap >= 0)
			close(att->procs[k].pagemap);
		att->procs[k].pid = pid;
		att->procs[k].ino = task.st_ino;
		att->procs[k].pagemap = -1;
		att->procs[k].own = depth == 0;
	}
	if (!s->naddr)
		return OU_NONE;
	if (!pg)
		pg = sysconf(_SC_PAGESIZE);
	for (i = 0; i < s->naddr; i++) {
		uint64_t first = s->addr[i] / (uint64_t)pg, last = (s->addr[i] + s->len[i] - 1) / (uint64_t)pg, e[3];
		size_t np = (size_t)(last - first + 1), want = np * sizeof(e[0]);
		int *fd = &att->procs[k].pagemap;

		if (last < first || np > LEN(e))
			return OU_UNREAD;
		/* the open pagemap is of the memory the process had then: after
		 * an exec nothing holds that (a vfork child's, still its
		 * parent's, is never kept open) and it reads as empty: opened
		 * again */
		if (*fd >= 0 && pread(*fd, e, want, (off_t)(first * sizeof(e[0]))) != (ssize_t)want) {
			close(*fd);
			*fd = -1;
		}
		if (*fd < 0) {
			snprintf(path, sizeof(path), "/proc/%u/pagemap", (unsigned)pid);
			if ((*fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC)) < 0 ||
			    pread(*fd, e, want, (off_t)(first * sizeof(e[0]))) != (ssize_t)want) {
				if (*fd >= 0)
					close(*fd);
				*fd = -1;
				return OU_UNREAD;
			}
		}
		for (size_t j = 0; j < np; j++)
			if (!(e[j] & (SBX_PM_PRESENT | SBX_PM_SWAP)) ||
			    ((e[j] & SBX_PM_FILE) && !obs_file_page_fixed(pid, (first + j) * (uint64_t)pg)))
				return OU_SHARED_PAGE;
		if (!att->procs[k].own) {	/* a vfork child's memory is its parent's: not kept */
			close(*fd);
			*fd = -1;
		}
	}
	return OU_NONE;
}

/* A call that names no file (OW_SHARE): does it let a process change what
 * another's call names? A thread is trapped only for a vfork child's
 * (the process sharing its parent's memory makes one, and the parent,
 * once its child exits, shares memory with that thread); a process
 * sharing without vfork, unless sbx-init starts it (a session's exec,
 * in init's memory until it execs: init is sbx's, not dumpable, and no
 * process of the sandbox can write it); ptrace and process_vm_writev
 * always. init_parent: the inner helper, init's parent. */
static enum obs_unsure
obs_sharing(const struct sbx_seccomp_notif *nf, const struct obs_call *c, long init_parent)
{
	long ppid, n;

	if (c->sc != SC_clone)
		return OU_WRITES_OTHERS;
	if (obs_proc_stat(nf->pid, &ppid, &n) < 0)
		return OU_SHARING;
	if (nf->data.args[0] & SBX_CLONE_THREAD) {
		long r = ppid > 0 ? syscall(SYS_kcmp, (pid_t)nf->pid, (pid_t)ppid, SBX_KCMP_VM, 0UL, 0UL) : 1;

		return r != 1 && r != 2 ? OU_SHARING : OU_NONE;
	}
	return ppid == init_parent && init_parent > 0 ? OU_NONE : OU_SHARING;
}

/* The descriptor a path names through /dev or /proc (/dev/stdout,
 * /dev/fd/N, /proc/self/fd/N), or -1. */
static int
obs_fd_alias(const char *p)
{
	static const char *const std[] = { "/dev/stdin", "/dev/stdout", "/dev/stderr" };
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/" };
	size_t i, n;

	for (i = 0; i < LEN(std); i++)
		if (strcmp(p, std[i]) == 0)
			return (int)i;
	for (i = 0; i < LEN(dirs); i++)
		if (strncmp(p, dirs[i], (n = strlen(dirs[i]))) == 0 && p[n] && strspn(p + n, "0123456789") == strlen(p + n) &&
		    strlen(p + n) < 8)
			return atoi(p + n);
	return -1;
}

/* A path under /proc with no magic link or another's memory on it
 * (/proc/self/oom_score_adj, /proc/PID/comm): it leads nowhere else. */
static bool
obs_proc_plain(const char *p)
{
	static const char *const magic[] = { "fd", "cwd", "root", "exe", "map_files", "mem" };
	const char *q;

	if (!path_within(p, "/proc") || path_within(p, "/proc/sys"))
		return path_within(p, "/proc/sys");	/* read-only: the write fails */
	for (q = p; *q; ) {
		size_t len;

		while (*q == '/')
			q++;
		len = strcspn(q, "/");
		for (size_t i = 0; i < LEN(magic); i++)
			if (len == strlen(magic[i]) && strncmp(q, magic[i], len) == 0)
				return false;
		q += len;
	}
	return true;
}

/* Does path (as read) have a ".." component? */
static bool
obs_has_dotdot(const char *p)
{
	for (; (p = strstr(p, "..")); p += 2)
		if ((p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return true;
	return false;
}

/* Follow path (absolute, in the caller's view) as the caller's kernel
 * would: from its root (/proc/PID/root), each component looked at without
 * following it, each symlink read and its text put in front of what is
 * left (an absolute one from the root again), ".." not above the root.
 * The last component is followed only with follow_last. out gets where
 * the path leads (the real directory, then the last name), and *mode the
 * last one's type (0: not there). Returns 0; 1 when the path enters
 * /proc (a magic link there leads where only the caller can see); -1 with
 * errno when the kernel would fail the call too (ENOENT, ENOTDIR, ELOOP)
 * or this could not look. */
static int
obs_walk(uint32_t pid, const char *path, bool follow_last, char *out, size_t outn, mode_t *mode)
{
	char todo[2 * PATH_MAX + 2], link[PATH_MAX], comp[NAME_MAX + 1], self[40], base[PATH_MAX];
	struct stat rst, st;
	int root, cur, links = 0, rc = -1;
	ssize_t r;

	*mode = 0;
	comp[0] = '\0';
	snprintf(self, sizeof(self), "/proc/%u/root", (unsigned)pid);
	if (strlen(path) >= sizeof(todo) / 2 || (root = openat(AT_FDCWD, self, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(root, &rst) < 0 || (cur = fcntl(root, F_DUPFD_CLOEXEC, 0)) < 0) {
		close(root);
		return -1;
	}
	str_copy(todo, path, sizeof(todo));
	for (;;) {
		char *p = todo;
		size_t len;
		bool last;

		while (*p == '/')
			p++;
		if (!*p) {
			comp[0] = '\0';	/* the path names a directory itself */
			break;
		}
		len = strcspn(p, "/");
		if (len > NAME_MAX) {
			errno = ENAMETOOLONG;
			goto out;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		for (p += len; *p == '/'; p++)
			;
		last = !*p;
		memmove(todo, p, strlen(p) + 1);
		if (strcmp(comp, ".") == 0) {
			comp[0] = '\0';
			continue;
		}
		if (strcmp(comp, "..") == 0) {
			int up;

			comp[0] = '\0';
			if (fstat(cur, &st) == 0 && st.st_dev == rst.st_dev && st.st_ino == rst.st_ino)
				continue;
			if ((up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
				goto out;
			close(cur);
			cur = up;
			continue;
		}
		if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (last && errno == ENOENT)
				break;	/* a name to be made there */
			goto out;
		}
		if (S_ISLNK(st.st_mode) && (!last || follow_last)) {
			size_t rest = strlen(todo);

			if (++links > SBX_OBS_MAX_LINKS || (r = readlinkat(cur, comp, link, sizeof(link) - 1)) <= 0) {
				errno = ELOOP;
				goto out;
			}
			link[r] = '\0';
			if ((size_t)r + 1 + rest + 1 > sizeof(todo)) {
				errno = ENAMETOOLONG;
				goto out;
			}
			memmove(todo + r + 1, todo, rest + 1);
			memcpy(todo, link, (size_t)r);
			todo[r] = '/';
			if (link[0] == '/') {
				close(cur);
				if ((cur = fcntl(root, F_DUPFD_CLOEXEC, 0)) < 0)
					goto out;
			}
			comp[0] = '\0';
			continue;
		}
		if (last) {
			*mode = st.st_mode;
			break;
		}
		{
			struct statfs sf;
			int next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (next < 0)
				goto out;
			close(cur);
			cur = next;
			if (fstatfs(cur, &sf) == 0 && sf.f_type == SBX_PROC_SUPER_MAGIC) {
				rc = 1;
				goto out;
			}
		}
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", cur);
	if ((r = readlink(self, base, sizeof(base) - 1)) <= 0 || base[0] != '/')
		goto out;
	base[r] = '\0';
	rc = (size_t)snprintf(out, outn, "%s%s%s", strcmp(base, "/") == 0 && comp[0] ? "" : base, comp[0] ? "/" : "",
	    comp) < outn ? 0 : -1;
out:
	close(cur);
	close(root);
	return rc;
}

/* A directory of the caller's view, opened O_PATH through its root, if
 * no symlink lies on its way (what the kernel printed for it is its path
 * again); kept open (SBX_OBS_DIRS). -1 otherwise. */
static int
obs_dir(struct obs_att *att, uint32_t pid, const char *dir)
{
	char p[PATH_MAX + 48], real[PATH_MAX];
	ssize_t r;
	unsigned i;
	int fd;

	for (i = 0; i < SBX_OBS_DIRS; i++)
		if (att->dir[i].path && strcmp(att->dir[i].path, dir) == 0)
			return att->dir[i].fd;
	if ((size_t)snprintf(p, sizeof(p), "/proc/%u/root%s", (unsigned)pid, dir) >= sizeof(p) ||
	    (fd = openat(AT_FDCWD, p, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	if ((r = readlink(p, real, sizeof(real) - 1)) <= 0 || (size_t)r != strlen(dir) || memcmp(real, dir, (size_t)r)) {
		close(fd);
		return -1;	/* a symlink on the way (or host and sandbox differ): obs_walk */
	}
	i = att->next++ % SBX_OBS_DIRS;
	if (att->dir[i].path) {
		free(att->dir[i].path);
		close(att->dir[i].fd);
	}
	if (!(att->dir[i].path = strdup(dir))) {
		close(fd);
		return -1;
	}
	att->dir[i].fd = fd;
	return fd;
}

/* Add a record of where a call's path leads (OBS_F_WHERE), like base. */
static void
obs_add_where(const struct obs_event *base, const char *where, struct obs_event *ev, int *n)
{
	if (*n >= SBX_OBS_EVENTS_MAX || strcmp(where, base->target) == 0)
		return;
	ev[*n] = *base;
	ev[*n].flags = OBS_F_WHERE;
	str_copy(ev[*n].target, where, sizeof(ev[*n].target));
	(*n)++;
}

/* Where the path t leads now, as the caller's kernel would take it; a
 * WHERE record in ev when that is not t itself (record: unless a link's
 * source, which the call does not change). src: a rename's or link's
 * source, which must not be a directory or a symlink. */
static enum obs_unsure
obs_locate(struct obs_att *att, const struct obs_event *e, const char *t, bool src, bool record,
    struct obs_event *ev, int *n, mode_t *found)
{
	char norm[PATH_MAX], where[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	mode_t mode = 0;
	int fd, r;

	*found = 0;

	if (path_normalize_lex(t, norm, sizeof(norm)) < 0)
		return OU_UNREAD;
	if (strcmp(norm, "/") == 0)
		return OU_NONE;
	if (!obs_has_dotdot(t)) {	/* lexical ".." is not the kernel's after a symlink: obs_walk */
		const char *slash = strrchr(norm, '/');
		size_t dl = slash == norm ? 1 : (size_t)(slash - norm);

		if ((fd = obs_fd_alias(norm)) >= 0) {	/* where that descriptor is open, if a file */
			char what[24];

			snprintf(what, sizeof(what), "fd/%d", fd);
			if (!src && record && obs_readlink(e->pid, what, where, sizeof(where)) == 0)
				obs_add_where(e, where, ev, n);
			return src ? OU_PROC : OU_NONE;
		}
		if (path_within(norm, "/proc") || path_within(norm, "/dev/fd"))
			return obs_proc_plain(norm) && !src ? OU_NONE : OU_PROC;
		memcpy(dir, norm, dl);
		dir[dl] = '\0';
		if ((fd = obs_dir(att, e->pid, dir)) >= 0) {
			if (fstatat(fd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) < 0)
				return errno == ENOENT ? OU_NONE : OU_UNREAD;	/* made where it says */
			mode = st.st_mode;
			str_copy(where, norm, sizeof(where));
			goto last;
		}
	}
	if ((r = obs_walk(e->pid, t, false, where, sizeof(where), &mode)) != 0)
		return r > 0 ? OU_PROC : errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? OU_NONE : OU_UNREAD;
	if (record)
		obs_add_where(e, where, ev, n);
last:
	*found = mode;
	if (src && (S_ISDIR(mode) || S_ISLNK(mode)))
		return OU_MOVED;
	if (!S_ISLNK(mode))
		return OU_NONE;
	/* the last name a symlink: calls that follow it act where it leads */
	str_copy(dir, where, sizeof(dir));
	if ((r = obs_walk(e->pid, dir, true, where, sizeof(where), &mode)) != 0)
		return r > 0 ? OU_PROC : errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? OU_NONE : OU_UNREAD;
	if (record)
		obs_add_where(e, where, ev, n);
	return OU_NONE;
}

/* A link's source: no symlink (a new name for one puts it on other
 * paths). Its bytes join s->addr for obs_racy. */
static enum obs_unsure
obs_link_source(struct obs_att *att, const struct sbx_seccomp_notif *nf, const struct obs_event *e,
    struct obs_seen *s)
{
	bool linkat = s->c->sc == SC_linkat;
	char src[PATH_MAX];
	size_t raw = 0;
	struct stat st;

	if (linkat && (nf->data.args[4] & SBX_AT_EMPTY_PATH)) {	/* the file open on olddirfd */
		snprintf(src, sizeof(src), "/proc/%u/fd/%d", (unsigned)nf->pid, (int)(uint32_t)nf->data.args[0]);
		return stat(src, &st) == 0 && !S_ISLNK(st.st_mode) ? OU_NONE : OU_MOVED;
	}
	if (obs_resolve(nf, linkat ? 0 : -1, linkat ? 1 : 0, src, sizeof(src), &raw) < 0)
		return OU_UNREAD;
	obs_seen_add(s, nf->data.args[linkat ? 1 : 0], raw);
	return obs_locate(att, e, src, true, false, NULL, NULL, &st.st_mode);
}

/* A symlink the command makes, at the real place e's path leads to, with
 * text as its target: one whose text is a name in its own directory, and
 * that name neither a directory nor a symlink now, leads nowhere a path
 * could not lead before (git init makes one to learn whether symlinks
 * work); where it leads is recorded. Any other is said (the section's
 * comment): a path crossing it as it is made was read before it was
 * there, and what lies beyond its target (a symlink an earlier run left
 * there) is not followed. */
static enum obs_unsure
obs_symlink_target(const struct obs_event *e, const char *text, struct obs_event *ev, int *n)
{
	char at[PATH_MAX], there[PATH_MAX];
	mode_t mode;
	int r;

	if (!*text || strchr(text, '/') || strcmp(text, ".") == 0 || strcmp(text, "..") == 0)
		return OU_SYMLINK_MADE;
	if ((r = obs_walk(e->pid, e->target, false, at, sizeof(at), &mode)) != 0)
		return r > 0 ? OU_PROC : errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? OU_NONE : OU_UNREAD;
	*strrchr(at, '/') = '\0';	/* its directory (no arena here: 2.1) */
	if ((size_t)snprintf(there, sizeof(there), "%s/%s", at, text) >= sizeof(there))
		return OU_UNREAD;
	if ((r = obs_walk(e->pid, there, false, at, sizeof(at), &mode)) != 0)
		return r > 0 ? OU_PROC : errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? OU_NONE : OU_UNREAD;
	if (S_ISDIR(mode) || S_ISLNK(mode))
		return OU_SYMLINK_MADE;
	obs_add_where(e, at, ev, n);
	return OU_NONE;
}

/* The checks for one call (the section's comment), after obs_collect
 * read it: why sbx cannot vouch for what it named, or OU_NONE; the
 * records of where its paths lead are added to ev (*n). */
static enum obs_unsure
obs_attribute(struct obs_att *att, const struct sbx_seccomp_notif *nf, struct obs_seen *s,
    struct obs_event ev[SBX_OBS_EVENTS_MAX], int *n)
{
	const struct obs_call *c = s->c;
	enum obs_unsure why = OU_NONE;
	char text[PATH_MAX];
	int own = *n;
	bool exchange = c && c->sc == SC_renameat2 && (nf->data.args[4] & SBX_RENAME_EXCHANGE);

	if (att->unsure || !c || (c->what != OW_PATH && c->what != OW_SHARE))
		return OU_NONE;
	if (c->what == OW_SHARE)
		return obs_sharing(nf, c, att->init_parent);
	if (s->unread)
		return OU_UNREAD;
	if (c->sc == SC_symlink || c->sc == SC_symlinkat) {	/* its text: args[0] of both */
		if (!own || obs_read_path(nf->pid, nf->data.args[0], text, sizeof(text)) < 0)
			return OU_UNREAD;
		obs_seen_add(s, nf->data.args[0], strlen(text));
	}
	if (own && (c->sc == SC_link || c->sc == SC_linkat))
		why = obs_link_source(att, nf, &ev[0], s);
	if (!why)
		why = obs_racy(att, nf->pid, s);
	for (int i = 0; !why && i < own; i++) {	/* a rename's old name first */
		mode_t found;

		why = obs_locate(att, &ev[i], ev[i].target, c->path2 >= 0 && (i == 0 || exchange), true, ev, n, &found);
		/* mkdir of what is there fails (mkdir -p tries each parent): no write */
		if (found && (c->sc == SC_mkdir || c->sc == SC_mkdirat))
			ev[i].flags |= OBS_F_EXISTS;
	}
	if (!why && (c->sc == SC_symlink || c->sc == SC_symlinkat))
		why = obs_symlink_target(&ev[0], text, ev, n);
	return why;
}

/* SECURITY: lock this process down before it reads a byte of the
 * command's memory (the section's comment says what, and why not
 * Landlock). Exits 125 when the filter does not install. */
static void
obs_lockdown(void)
{
	struct bpf_opts o = { false, false, true, false, true, false, 0 };

	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (install_program(&o) < 0) {
		warnx("observer: cannot install its seccomp filter: %s", strerror(errno));
		_exit(SBX_EXIT_FAILURE);
	}
}

/* The notification being read, in a page shared with sbx (and so with
 * the observer sbx starts after this one): a notification received and
 * not yet answered by an observer that died stays pending for good
 * (another reader's RECV never sees it again), so the next observer
 * answers it first. A memory bug may scribble here: the worst it does is
 * answer another pending call CONTINUE early, which is every call's
 * answer anyway. */
struct obs_inflight {
	volatile uint64_t id;
	volatile uint32_t busy;
	volatile uint32_t lost;	/* events every observer of the run could not send: the
				 * count riding on the next event never comes after the last */
};

/* One notification: read, check it is still valid, report, and ALWAYS
 * answer CONTINUE (the event goes to sbx first, so it is there before the
 * command can go on, and exit). */
static void
obs_take_one(int listener, int events, const struct bpf_arch *arch, bool sessions, uint32_t *lost,
    struct obs_inflight *fl, struct obs_att *att)
{
	struct sbx_seccomp_notif nf;
	struct sbx_seccomp_notif_resp resp;
	struct obs_event ev[SBX_OBS_EVENTS_MAX];
	struct obs_seen seen;
	unsigned char rec[SBX_OBS_MAX_BYTES];
	uint32_t more = 0;
	enum obs_unsure why;
	int n;

	memset(&nf, 0, sizeof(nf));	/* the kernel refuses a RECV buffer that is not zeroed */
	if (ioctl(listener, SBX_SECCOMP_IOCTL_NOTIF_RECV, &nf) < 0)
		return;	/* ENOENT: the caller went away meanwhile (a signal) */
	fl->id = nf.id;
	fl->busy = 1;
	n = obs_collect(&nf, arch, sessions, ev, &more, &seen);
	if ((why = obs_attribute(att, &nf, &seen, ev, &n)) != OU_NONE) {
		if (!n) {	/* a call with nothing to judge: a record to carry the doubt */
			ev[0].flags = OBS_F_WHERE;
			str_copy(ev[0].target, "/", sizeof(ev[0].target));
			n = 1;
		}
		ev[0].flags |= (uint16_t)(why << OBS_F_UNSURE_SHIFT);
	}
	/* what was read may be another program's memory (or session) now;
	 * with nothing to report (a connect to loopback: most of them),
	 * nothing to check */
	if (n > 0 && ioctl(listener, SBX_SECCOMP_IOCTL_NOTIF_ID_VALID, &nf.id) < 0)
		n = 0;
	*lost += n > 0 ? more : 0;
	for (int i = 0; i < n; i++) {
		ev[i].lost = *lost;
		if (send(events, rec, obs_event_encode(&ev[i], rec), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			(*lost)++;
			fl->lost++;
		} else {
			*lost = 0;
		}
	}
	if (n > 0 && why != OU_NONE)
		att->unsure = true;	/* sent, or counted lost: sbx knows either way */
	memset(&resp, 0, sizeof(resp));
	resp.id = nf.id;
	resp.flags = SBX_SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	(void)ioctl(listener, SBX_SECCOMP_IOCTL_NOTIF_SEND, &resp);	/* ENOENT: it has gone */
	fl->busy = 0;
}

/* Answer CONTINUE to id, which a dead observer received (obs_inflight). */
static void
obs_answer_orphan(int listener, struct obs_inflight *fl)
{
	struct sbx_seccomp_notif_resp resp;

	if (!fl->busy)
		return;
	memset(&resp, 0, sizeof(resp));
	resp.id = fl->id;
	resp.flags = SBX_SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	(void)ioctl(listener, SBX_SECCOMP_IOCTL_NOTIF_SEND, &resp);	/* ENOENT: answered, or gone */
	fl->busy = 0;
}

/* The observer process: runs until every filtered process has gone (the
 * listener hangs up: exit 0) or sbx has (its end of the pair hangs up).
 * sessions: a session's, whose events carry the caller's session, and
 * whose setsid calls are told; init_parent: sbx-init's parent
 * (obs_sharing). */
static void __attribute__((noreturn))
obs_main(int listener, int events, struct obs_inflight *fl, bool sessions, long init_parent)
{
	const struct bpf_arch *arch = bpf_native_arch();
	uint32_t lost = 0;
	static struct obs_att att;	/* static: 64 slots, off the stack */

	att.init_parent = init_parent;
	for (size_t k = 0; k < LEN(att.procs); k++)
		att.procs[k].pagemap = -1;
	prctl(PR_SET_NAME, "sbx-observer", 0, 0, 0);	/* in ps, and for the tests that tell it from the proxy */
	obs_lockdown();
	arena_seal();	/* from here on, stack and malloc only (2.1) */
	obs_answer_orphan(listener, fl);
	/* Linux 6.6+: the caller and this reader hand the CPU to each other
	 * (a synchronous wake-up, as a pipe between two threads would be)
	 * instead of each waking the other through the scheduler; an older
	 * kernel says EINVAL and the loop is the same */
	(void)ioctl(listener, SBX_SECCOMP_IOCTL_NOTIF_SET_FLAGS, SBX_SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	for (;;) {
		struct pollfd pf[2] = { { listener, POLLIN, 0 }, { events, POLLIN, 0 } };	/* sbx never writes */

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(SBX_EXIT_FAILURE);
		}
		if (pf[1].revents)
			_exit(0);	/* sbx has gone */
		if (pf[0].revents & POLLIN)
			obs_take_one(listener, events, arch, sessions, &lost, fl, &att);
		else if (pf[0].revents & (POLLHUP | POLLERR))
			_exit(0);	/* no filtered process is left */
	}
}

/* ---- 10c. Running the sandbox ---------------------------------------- */

/* A listening socket on this machine's 127.0.0.1:port (expose-port). */
static int
host_listen_tcp(int port)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1024) < 0)
		die_hint(errno == EADDRINUSE ? "stop what listens there, or expose another port" : NULL,
		    "expose-port %d: cannot listen on this machine's 127.0.0.1:%d: %s; the command did not run",
		    port, port, strerror(errno));
	return fd;
}

/* A listening Unix socket at path (bridge socat), in a directory only we
 * can enter (0700): other users cannot reach the proxy through it. */
static int
host_listen_unix(const char *path)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		die_hint("set TMPDIR to a shorter directory", "bridge socat: the socket path %s is too long "
		    "for a Unix socket (%zu bytes at most)", path, sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1024) < 0)
		die("bridge socat: cannot listen on %s: %s", path, strerror(errno));
	return fd;
}

static const char *
bwrap_locate(const struct policy *p)
{
	const char *bw = p->bwrap_path ? p->bwrap_path : find_in_path("bwrap");

	if (!bw || access(bw, X_OK) < 0)
		die_hint("install it: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora)",
		    "bubblewrap (%s) is not installed; sbx never runs a command without its sandbox",
		    p->bwrap_path ? p->bwrap_path : "bwrap");
	return bw;
}

/* Read bwrap's --info-fd JSON up to its closing brace; return "child-pid". */
static pid_t
read_child_pid(int fd)
{
	char buf[1024];
	size_t n = 0;
	ssize_t r;
	const char *p;

	while (n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		n += (size_t)r;
		buf[n] = '\0';
		if (strchr(buf, '}'))
			break;
	}
	buf[n] = '\0';
	p = strstr(buf, "\"child-pid\"");
	if (!p || !(p = strchr(p, ':')))
		return -1;
	return (pid_t)strtol(p + 1, NULL, 10);
}

static const char *
bwrap_failure_hint(void)
{
	struct buf b = { 0 };
	const char *hint = "run `sbx --check` to see which requirement is missing";

	if (read_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 16, &b) == 0 && b.p[0] == '1')
		hint = "AppArmor forbids unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1): "
		    "add an AppArmor profile for bwrap, or `sysctl kernel.apparmor_restrict_unprivileged_userns=0`";
	free(b.p);
	return hint;
}

/* A path of the plan's that bwrap mounts on, or from, that existed when
 * sbx looked at it (the scan's answers, real_lstat, or what ph_cover
 * holds) and is gone or another file now: bwrap failed because another
 * program changed it, not because of this machine. NULL when none did.
 * (sbx-init's binds say so themselves: init_binds.) */
static const char *
plan_changed_path(const struct plan *pl)
{
	for (size_t i = 0; i < pl->mounts.n; i++) {
		const struct mount *m = pl->mounts.v[i];
		const char *path = m->kind == MK_BIND_FROM ? m->src : m->path;
		const struct ph_held *h = ph_held_at(path);
		struct fid seen = { 0, 0 };
		struct stat now;

		if (m->kind == MK_REMOUNT_RO || m->kind == MK_PIN_LINK || m->kind == MK_BIND_RO_INIT ||
		    m->kind == MK_BIND_RW_INIT)
			continue;
		if (h)
			seen = h->id;
		else if (real_lstat(NULL, path, &seen) != FK_DIR && real_lstat(NULL, path, &seen) != FK_FILE)
			continue;	/* missing then (made since, by sbx), or nothing to compare */
		if (!seen.ino)
			continue;
		if (lstat(path, &now) < 0 || now.st_dev != seen.dev || now.st_ino != seen.ino)
			return path;
	}
	return NULL;
}

/* Sessions (10f): one sandbox, many commands. What the run's steps ask of them. */
#define SBX_SESSION_MAX_CLIENTS	64
#define SBX_SESSION_IDLE_S	3600		/* --idle's default */
#define SBX_SESSION_TIDY_DEFER_MS 20		/* session_tidy waits this long after an exec ends */
#define SBX_SESSION_NAME_MAX	64
#define SBX_SESSION_MAX_HELD	256	/* refusals waiting for an exec's "S"; more go to every exec */
#define SBX_SESSION_MAX_SIDS	1024	/* sessions made inside execs, known; past it, a new one is no exec's */

struct sess_client {
	int fd;				/* the client's socket, or -1 */
	uint32_t id;			/* its exec, or 0 before it asks */
	bool started;
	uint32_t pid;			/* its leader's pid inside, which is its session ("S"); 0 before */
	struct vstore store;		/* its refusals, and the observer's losses while it ran */
	char *tmpdir;			/* its private TMPDIR (malloc) */
	char *cmdline;			/* for ignore-violations (malloc) */
};

static struct session {
	bool on;			/* this run is a session's (sbx session start) */
	const char *name, *path;	/* NAME, and its socket */
	long idle_s;
	int lfd;			/* the listening socket, or -1 */
	int ready_fd;			/* the starter waits on it for "ready", or -1 */
	int64_t idle_since;		/* when the last exec ended; 0: one runs */
	uint32_t next_id, execs;
	struct sess_client c[SBX_SESSION_MAX_CLIENTS];
	/* refusals of a session no started exec has, while one has not said
	 * "S" yet (it may be theirs: 10f, session_attribute); malloc'd copies */
	struct { struct vkept *k; uint32_t sid; } held[SBX_SESSION_MAX_HELD];
	size_t nheld;
	/* sessions made inside execs (setsid, seen by the observer): whose
	 * exec each is; exec 0: made in the session from, of an exec whose
	 * "S" has not come yet (session_setsid) */
	struct { uint32_t sid, exec, from; } sids[SBX_SESSION_MAX_SIDS];
	size_t nsids;
	/* TMPDIRs: one made ahead, those of ended execs to remove (malloc'd
	 * paths; session_tidy) */
	char *spare, *trash[SBX_SESSION_MAX_CLIENTS];
	size_t ntrash;
	uint32_t next_tmp;
	bool want_spare;		/* one was taken (or none made yet); cleared by a failure too */
	int64_t tidy_at;		/* tidying waits until then (session_tidy) */
	int tidier;			/* the pipe to sbx-tidy (session_tidier_start), or -1 */
	pid_t tidier_pid;
	/* the messages received and the one being built, kept from one to
	 * the next (buf_recycle): musl maps and unmaps a buffer of a few
	 * pages for each malloc and free, two of each and their page faults
	 * an exec on a VM where every fault traps */
	struct buf in, out;
} sess = { .lfd = -1, .ready_fd = -1, .idle_s = SBX_SESSION_IDLE_S, .want_spare = true, .tidier = -1 };

struct run;
static void session_listen(const struct run_paths *rp);
static void session_tidier_start(const char *base);
static void session_daemonize(void);
static void session_ready(const struct run_paths *rp);
static nfds_t session_poll(const struct run *r, struct pollfd *pf, nfds_t n);
static void session_on_events(struct run *r, const struct pollfd *pf);
static int session_timeout(void);
static void session_end(void);
static void session_unobserved(uint32_t lost);
static bool session_tidy(const struct run *r, bool now);
static void session_attribute(const struct vstore *s, const struct violation *v);
static void session_setsid(uint32_t sid, uint32_t from);

/* A run in progress: what run_linux's steps hand each other. */
struct run {
	const struct policy *p;
	const struct plan *pl;
	const struct run_paths *rp;
	const struct run_facts *rf;
	struct inner_msg im;		/* the instructions for the inner helper */
	struct px_listener ls[SBX_MAX_HANDED + 2 + SBX_MAX_HOST_PORTS];	/* what the proxy will own */
	int nls;
	int expose_fd;			/* expose-port: the channel to the inner helper, or -1 */
	sigset_t forwarded, old;	/* the signals taken on sigfd; the mask before */
	int info, ctl;			/* our ends: bwrap's --info-fd pipe, the control socket */
	pid_t bwrap, inner, proxy;	/* inner: the helper's pid as seen here; -1 while unknown */
	int report;			/* the proxy's decisions, or -1 */
	int sigfd;			/* run_supervise's signalfd, or -1 */
	pid_t self_pid;			/* sbx's: the proxy checks it is still its parent */
	bool ready;			/* the inner helper said "R": the command started */
	bool ready_early;		/* that "R" came in one read with the handed-fd message */
	char early[SBX_HANDED_MAX_BYTES + 1];	/* or the start of a rebind's ask did (run_rebind) */
	size_t nearly;
	int status;			/* bwrap's wait status */
	struct net_log *netlog;		/* the proxy's decisions */
	struct vstore *store;		/* every refusal of the run (8) */
	int listener;			/* the write observer's listener (came with "R"), or -1 */
	pid_t observer;			/* its reader (10b), forked on the first call it sees; or -1 */
	bool listener_hup;		/* no process is left under its filter: not polled again */
	int64_t obs_retry_at;		/* its fork failed (no process to spare): tried again then */
	int events;			/* our end of the observer's event pair, or -1 */
	uint64_t obs_events, obs_refused, obs_lost, obs_bad;	/* events taken; of them refusals; dropped
						 * by the observer; malformed */
	uint64_t obs_noted;		/* distinct refusals -v has shown (at most SBX_NOTED_MAX) */
	unsigned obs_restarts;		/* observers started again after one died */
	struct obs_inflight *inflight;	/* shared with the observers (10b), or NULL */
};

/* Step: what the inner helper is told (flags, ports, the links it pins). */
static void
run_instructions(struct run *r, char **cmd)
{
	const struct policy *p = r->p;
	struct inner_msg *im = &r->im;
	size_t i;

	memset(im, 0, sizeof(*im));
	im->flags = (p->allow_all_unix_sockets ? 0 : IF_UNIX_BLOCK) | (p->allow_nested_userns ? IF_ALLOW_USERNS : 0) |
	    (p->weaker_nested_sandbox ? IF_WEAKER : 0) | (r->rf->proxy ? IF_PROXY : 0) |
	    (p->observe_writes ? IF_OBSERVE : 0) | (r->rf->dns ? IF_DNS : 0) | (r->rf->capture ? IF_CAPTURE : 0) |
	    (sess.on ? IF_SESSION : 0);
	if (r->rf->capture)
		im->ncapture = (uint32_t)capture_ports(p, im->capture, LEN(im->capture));
	for (i = 0; i < p->host_ports.n; i++)
		im->ports[im->nports++] = (uint16_t)atoi(p->host_ports.v[i]);
	for (i = 0; i < p->expose_ports.n; i++)
		im->expose[im->nexpose++] = (uint16_t)atoi(p->expose_ports.v[i]);
	im->argv = cmd;
	im->links = amalloc((r->pl->mounts.n + 1) * sizeof(char *));
	im->binds = amalloc((r->pl->mounts.n + 1) * sizeof(*im->binds));
	for (i = 0; i < r->pl->mounts.n; i++) {
		const struct mount *m = r->pl->mounts.v[i];

		if (m->kind == MK_PIN_LINK)
			im->links[im->nlinks++] = (char *)m->path;
		if (m->kind == MK_BIND_RO_INIT || m->kind == MK_BIND_RW_INIT) {	/* its device and inode once
											 * covered (run_send_instructions) */
			im->binds[im->nbinds].flags = m->kind == MK_BIND_RW_INIT ? IB_PIN : 0;
			im->binds[im->nbinds++].path = (char *)m->path;
		}
	}
}

/* Step: expose-port's listeners on this machine, first: a port in use
 * stops the run before anything starts. */
static void
run_listen_expose(struct run *r)
{
	for (uint32_t i = 0; i < r->im.nexpose; i++) {
		r->ls[r->nls].fd = host_listen_tcp(r->im.expose[i]);
		r->ls[r->nls].role = LR_EXPOSE;
		r->ls[r->nls++].port = r->im.expose[i];
	}
}

/* Step: the forwarded signals wait on sigfd from here on: one that comes
 * while the sandbox is being built must not kill sbx half-way, with its
 * placeholders made and nothing run. */
static void
run_take_signals(struct run *r)
{
	sigemptyset(&r->forwarded);
	for (size_t i = 0; i < LEN(forwarded_signals); i++)
		sigaddset(&r->forwarded, forwarded_signals[i]);
	sigaddset(&r->forwarded, SIGCHLD);
	sigprocmask(SIG_BLOCK, &r->forwarded, &r->old);
}

/* http-proxy-port, socks-proxy-port (srt's httpProxyPort, socksProxyPort):
 * the listener inside for that protocol (inside_port, 3128 or 1080) is
 * aimed at the person's own proxy on this machine's 127.0.0.1:PORT, through
 * allow-host-port's plumbing; the variables inside stay as they are. That
 * proxy does the filtering: sbx's policy does not see what goes through
 * it (as srt, which then starts no proxy of its own for it). */
static void
run_external_proxy(const struct policy *p, struct px_listener *l, int inside_port)
{
	long ext = inside_port == SBX_PROXY_HTTP_PORT ? p->http_proxy_port :
	    inside_port == SBX_PROXY_SOCKS_PORT ? p->socks_proxy_port : 0;

	if (l->role != LR_PROXY || !ext)
		return;
	l->role = LR_HOST_PORT;
	l->port = (int)ext;
}

/* Step (bridge socat): the proxy's Unix sockets, in the run's directory
 * (made by run_prepare), which socat inside connects to. */
static void
run_listen_bridge(struct run *r)
{
	if (!(r->im.flags & IF_PROXY) || !r->rp->bridge_dir)
		return;
	r->im.socat = r->p->socat_path ? r->p->socat_path : find_in_path("socat");
	if (!r->im.socat)
		die_hint("install socat (Debian: apt-get install socat), or use bridge fd",
		    "bridge socat: socat is not in PATH; the command did not run");
	for (int k = 0; k < 2; k++) {
		r->im.bridge_sock[k] = path_join(r->rp->bridge_dir, k ? "socks.sock" : "http.sock");
		r->ls[r->nls].fd = host_listen_unix(r->im.bridge_sock[k]);
		r->ls[r->nls].role = LR_PROXY;
		r->ls[r->nls].port = 0;
		run_external_proxy(r->p, &r->ls[r->nls++], k ? SBX_PROXY_SOCKS_PORT : SBX_PROXY_HTTP_PORT);
	}
}

/* In the bwrap child: move the descriptors bwrap inherits to their fixed
 * numbers (enum bwrap_fd) and keep them open across exec. Each is first
 * duplicated above every target, so no move overwrites one still to come. */
static int
fds_move_fixed(const int *from, const int *to, int n)
{
	int tmp[8], top = 0, i;

	BUG_ON(n > (int)LEN(tmp));
	for (i = 0; i < n; i++)
		top = to[i] > top ? to[i] : top;
	for (i = 0; i < n; i++)
		if ((tmp[i] = dup_cloexec(from[i], top + 1)) < 0)
			return -1;
	for (i = 0; i < n; i++) {
		if (dup2(tmp[i], to[i]) < 0)	/* the new descriptor is not close-on-exec */
			return -1;
		close(tmp[i]);
	}
	return 0;
}

/* Step: start bwrap, with the argv --print=argv shows (bw_render). */
static void
run_spawn_bwrap(struct run *r, const char *bwrap)
{
	struct bw_invocation bi;
	struct buf args = { 0 };
	int info[2], ctl[2], exe_fd, args_fd;
	pid_t parent = getpid();

	exe_fd = openat(AT_FDCWD, "/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (exe_fd < 0)
		die("cannot open my own binary (/proc/self/exe): %s", strerror(errno));
	if (pipe2(info, O_CLOEXEC) < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0)
		die("pipe: %s", strerror(errno));
	args_fd = memfd_create("sbx-bwrap-args", MFD_CLOEXEC);
	if (args_fd < 0)
		die("memfd_create: %s", strerror(errno));
	bw_render(bwrap, r->p, r->pl, r->rf, &bi);
	/* rendered (the --unsetenv list is made): from here on sbx, and bwrap
	 * and the proxy forked below, hold none of the denied values */
	env_scrub(r->p);
	bw_args_blob(&bi, &args);
	if (write_all(args_fd, args.p, args.n) < 0 || lseek(args_fd, 0, SEEK_SET) < 0)
		die("cannot write bwrap's arguments: %s", strerror(errno));
	free(args.p);

	/* vfork: the child borrows sbx's memory until it execs, so neither
	 * copies page tables nor leaves sbx to copy-on-write pages it touches
	 * next (~0.1 ms; 1 for 1 here). The child therefore changes nothing in
	 * memory: system calls only, and errors written with write(2), not
	 * stdio (its buffer is sbx's). Its descriptor table and signal mask
	 * are its own (no CLONE_FILES, a mask per thread). */
	r->bwrap = SBX_VFORK ? vfork() : fork();
	if (r->bwrap < 0)
		die("fork: %s", strerror(errno));
	if (r->bwrap == 0) {
		const int from[] = { exe_fd, info[1], ctl[1], args_fd };
		const int to[] = { SBX_FD_EXE, SBX_FD_INFO, SBX_FD_CTL, SBX_FD_ARGS };

		/* if sbx dies (even by SIGKILL), bwrap and everything under it die */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(SBX_EXIT_FAILURE);
		if (fds_move_fixed(from, to, (int)LEN(from)) < 0)
			child_fail("cannot pass descriptors to bwrap", "", errno);
		sigprocmask(SIG_SETMASK, &r->old, NULL);
		signal(SIGPIPE, SIG_DFL);	/* sbx ignores it; the command gets the default */
		execv(bwrap, (char **)bi.argv.v);
		child_fail("cannot run ", bwrap, errno);
	}
	close(info[1]);
	close(ctl[1]);
	close(args_fd);
	close(exe_fd);
	r->info = info[0];
	r->ctl = ctl[0];
}

/* Step: the instructions, then the inner helper's pid from bwrap. A write
 * to a helper that died fails (EPIPE; SIGPIPE is ignored), and the reason
 * shows in its exit status. */
static void
run_send_instructions(struct run *r)
{
	struct buf msg = { 0 };

	/* what sbx-init must find at each name it binds: what ph_cover saw
	 * there (a placeholder locked, so no run removes it meanwhile); 0 0
	 * where it found nothing it could cover, gone since the scan, which
	 * sbx-init then asks about (run_rebind) */
	for (uint32_t i = 0; i < r->im.nbinds; i++) {
		const struct ph_held *h = ph_held_at(r->im.binds[i].path);

		r->im.binds[i].dev = h ? (uint64_t)h->id.dev : 0;
		r->im.binds[i].ino = h ? (uint64_t)h->id.ino : 0;
	}
	ctl_encode(&r->im, &msg);
	(void)write_all(r->ctl, msg.p, msg.n);
	free(msg.p);
	r->inner = read_child_pid(r->info);
	close(r->info);
}

/* Step: the listeners made inside, each with its role (handed_decode);
 * the expose-port channel is kept apart. */
static void
run_take_handed(struct run *r)
{
	int lfd[SBX_MAX_HANDED + 1], nfd = 0, nl, rc;	/* and the listener an "R" may carry */
	char desc[SBX_HANDED_MAX_BYTES + 1];	/* and the "R" that may follow it */
	struct handed h;
	ssize_t dn;
	size_t used = 0;
	const char *why = NULL;

	if (!inner_hands_fds(&r->im))
		return;
	dn = recv_fds(r->ctl, desc, sizeof(desc), lfd, SBX_MAX_HANDED + 1, &nfd, 0);
	if (dn < 0)
		return;	/* the helper failed; it said why, and the run ends in run_exit_status */
	/* an "L" with no descriptor merges with the "R" behind it, and that
	 * "R" may carry the observer's listener: descriptors past the count
	 * the "L" gives are the "R"'s (the kernel ends a read after a message
	 * with descriptors, so none can come before the "L"'s own) */
	nl = dn >= 2 && (unsigned char)desc[1] < nfd ? (unsigned char)desc[1] : nfd;
	rc = handed_decode(desc, (size_t)dn, nl, &h, &used, &why);
	if (rc == 0 && (size_t)dn > used && desc[used] == SBX_REBIND_ASK && nfd == nl) {
		/* sbx-init's question about names that changed (run_rebind),
		 * behind an "L" with no descriptor: kept for run_wait_ready */
		r->nearly = (size_t)dn - used;
		memcpy(r->early, desc + used, r->nearly);
		dn = (ssize_t)used;
	}
	if (rc < 0 || ((size_t)dn > used && ((size_t)dn != used + 1 || desc[used] != 'R')) ||
	    (nfd > nl && ((size_t)dn != used + 1 || nfd - nl > 1))) {
		/* a helper that works but says what sbx cannot account for: the
		 * proxy would not serve what the command was told it has */
		for (int k = nl; k < nfd; k++)
			close(lfd[k]);
		die("the inner helper's handed-fd message: %s; the command did not run",
		    why ? why : "bytes or descriptors after it that are not one \"R\"");
	}
	r->ready_early = (size_t)dn == used + 1;	/* the "R" came with it */
	if (nfd > nl)
		r->listener = lfd[nl];	/* and the observer's listener with the "R" */
	for (int k = 0; k < h.n; k++) {
		if (h.role[k] == LR_EXPOSE) {
			r->expose_fd = lfd[k];
			continue;
		}
		r->ls[r->nls].fd = lfd[k];
		r->ls[r->nls].role = h.role[k];
		r->ls[r->nls].port = h.port[k];
		run_external_proxy(r->p, &r->ls[r->nls++], h.port[k]);
	}
}

/* The proxy process, forked by run_proxy_on_demand on the first
 * connection; it lives until this sbx does (its end of the report pair
 * hangs up then). It owns the listeners from here on and sends each
 * decision over the pair. Returns -1 (and sbx keeps the listeners closed:
 * the command is refused, the boundary unchanged) when it cannot start. */
static int
run_spawn_proxy(struct run *r)
{
	int pair[2] = { -1, -1 }, err = 0;

	if (socketpair(AF_UNIX, SBX_RECORD_SOCKET | SOCK_CLOEXEC, 0, pair) < 0)
		err = errno;
	else if ((r->proxy = fork()) < 0)
		err = errno;
	if (!err && r->proxy == 0) {
		int keep[SBX_MAX_HANDED + 2 + SBX_MAX_HOST_PORTS + 2], nkeep = 0;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != r->self_pid)
			_exit(0);	/* sbx died between the fork and the prctl */
		for (int i = 0; i < r->nls; i++)
			keep[nkeep++] = r->ls[i].fd;
		keep[nkeep++] = r->expose_fd;
		keep[nkeep++] = pair[1];
		/* the locks, the control socket, signals, the observer's listener
		 * and channel and the report's sink stay sbx's */
		fds_close_except(keep, (size_t)nkeep);
		if (r->inflight)
			munmap(r->inflight, sizeof(*r->inflight));
		sigprocmask(SIG_SETMASK, &r->old, NULL);
		/* the policy last applied (9d): a control-fd line may have come first */
		px_main(live_policy(r->p), r->ls, r->nls, r->expose_fd, pair[1], NULL);	/* no credential: only the sandbox reaches them */
	}
	if (pair[1] >= 0)
		close(pair[1]);
	if (err && pair[0] >= 0)
		close(pair[0]);
	else if (!err)
		r->report = pair[0];
	while (r->nls > 0)	/* the proxy's now, or closed: refused, never left open */
		close(r->ls[--r->nls].fd);
	if (r->expose_fd >= 0)
		close(r->expose_fd);
	r->expose_fd = -1;
	errno = err;
	return err ? -1 : 0;
}

/* Step, in run_supervise: the proxy on demand. Until some listener has a
 * connection waiting, sbx holds them (the command's connect() completes
 * at once: the kernel queues it in the backlog) and polls them with the
 * rest; the first one readable forks the proxy, which accepts it. A run
 * that never connects pays for no proxy at all (README, "Figures").
 * run_proxy_poll adds the listeners to pf[n..] while they wait and returns
 * the new count; run_proxy_on_demand looks at what poll() said of them. */
static nfds_t
run_proxy_poll(const struct run *r, struct pollfd *pf, nfds_t n)
{
	for (int i = 0; r->proxy < 0 && i < r->nls; i++) {
		pf[n].fd = r->ls[i].fd;
		pf[n].events = POLLIN;
		pf[n++].revents = 0;
	}
	return n;
}

static void
run_proxy_on_demand(struct run *r, const struct pollfd *pf, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		if (pf[i].revents) {
			if (run_spawn_proxy(r) < 0)
				warnx("cannot start the proxy: %s; the command's network attempts are refused "
				    "without a reason", strerror(errno));
			return;
		}
}

/* n bytes from the control socket, those kept by run_take_handed first.
 * Returns 0, or -1 when the helper has gone. */
static int
run_ctl_read(struct run *r, void *p, size_t n)
{
	size_t k = r->nearly < n ? r->nearly : n;

	memcpy(p, r->early, k);
	memmove(r->early, r->early + k, r->nearly - k);
	r->nearly -= k;
	while (k < n) {
		ssize_t got = read(r->ctl, (char *)p + k, n - k);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		k += (size_t)got;
	}
	return 0;
}

/* Step, when sbx-init asks (its type byte read): names it could not bind
 * as planned, because another program removed or replaced them after
 * ph_cover. Each is covered as it is now (ph_recover, under the registry
 * lock), and sbx-init is told what to bind (init_binds). Returns 0, or -1
 * when the helper has gone (the run then ends in run_exit_status). */
static int
run_rebind(struct run *r)
{
	struct buf msg = { 0 };
	struct vec covered = { 0 };
	uint32_t len, *idx = amalloc((r->im.nbinds + 1) * sizeof(*idx));
	const char *why;
	int n, dfd;

	if (run_ctl_read(r, &len, 4) < 0)
		return -1;
	if (len > SBX_FRAME_MAX_BYTES)
		die("sbx-init's rebind: %u bytes; the command did not run", len);
	buf_grow(&msg, len + 1);
	if (run_ctl_read(r, msg.p, len) < 0)
		return -1;
	if ((n = rebind_ask_decode(msg.p, len, r->im.nbinds, idx, &why)) < 0)
		die("sbx-init's rebind: %s; the command did not run", why);
	ph_lock();
	dfd = ph_dir_open(true);
	for (int i = 0; i < n; i++) {
		const struct init_bind *b = &r->im.binds[idx[i]];
		const char *was = b->path;

		ph_recover(dfd, r->pl, &r->im.binds[idx[i]], &covered);
		note("%s changed on this machine after sbx covered it (another program works there): %s", was,
		    b->flags & IB_NONE ? "nothing to bind (covered above it, or the command could not make it)" :
		    strcmp(b->path, was) == 0 ? "covered as it is now" :
		    aprintf("%s is gone too: a placeholder there", b->path));
	}
	close(dfd);
	ph_unlock();
	rebind_answer_encode(r->im.binds, idx, (uint32_t)n, &msg);
	n = frame_send(r->ctl, SBX_REBIND_ANSWER, msg.p, msg.n, NULL, 0);
	free(msg.p);
	return n;
}

/* Step: "R" from the inner helper: the command has started; with it,
 * the write observer's listener when sbx-init could install it. Before
 * it, sbx-init may ask about names that changed (run_rebind). */
static void
run_wait_ready(struct run *r)
{
	char ch = r->ready_early ? 'R' : 0;
	int fd = -1, nfd = 0;

	while (!r->ready_early) {
		ch = 0;
		if (r->nearly)
			(void)run_ctl_read(r, &ch, 1);
		else if (recv_fds(r->ctl, &ch, 1, &fd, 1, &nfd, 0) == 1 && nfd == 1) {
			if (ch == 'R')
				r->listener = fd;
			else
				close(fd);
		}
		if (ch != SBX_REBIND_ASK || run_rebind(r) < 0)
			break;
	}
	r->ready = r->inner > 0 && ch == 'R';
	if (!sess.on) {	/* a session's init takes its execs on it (10f) */
		close(r->ctl);
		r->ctl = -1;
	}
	if (r->listener >= 0 && !(r->im.flags & IF_OBSERVE)) {
		close(r->listener);	/* not asked for: nobody would read it */
		r->listener = -1;
	}
}

/* Step (observe-writes): the write observer is forked on the first call
 * it is to see, as the proxy is on the first connection: until then sbx
 * polls the listener itself (run_supervise), which is readable when a
 * notification waits, and the command's call waits for the observer's
 * answer as it always does. Most of what an agent runs (`ls`, `git
 * status`, a search) makes no write-intent call and pays for no fork, no
 * lockdown and no process at the end. */
static void
run_note_observer(const struct run *r)
{
	if (r->listener < 0 && (r->im.flags & IF_OBSERVE) && r->ready) {
		const char *why = observer_unavailable();

		note("observer: off (%s); the boundary is the same", why ? why : "sbx-init could not install it");
	}
	/* the audit's record of what the sandbox touched (9b) starts now:
	 * the listener came with "R", before the command's first call. Not
	 * with a way to write that no call of the sandbox's shows: io_uring
	 * (allow-all-unix-sockets lets it through), or a service outside it
	 * that writes for it (a daemon's Unix socket, allow-host-port) */
	attrib_start(r->listener >= 0 && !r->p->allow_all_unix_sockets && !r->p->host_ports.n,
	    !(r->im.flags & IF_OBSERVE) ? "observe-writes is off" : r->listener < 0 ?
	    "the write observer could not be installed" : r->p->allow_all_unix_sockets ?
	    "allow-all-unix-sockets lets the command write through io_uring or a daemon, unseen" :
	    "allow-host-port lets the command reach a service here that may write for it");
}

/* The write observer's process (10b), reading the listener; a new event
 * pair each time. sbx keeps its own copy of the listener so that one
 * which dies can be replaced (run_take_observations): with none left, the
 * kernel would fail every call it notifies (ENOSYS). */
static void
run_spawn_observer(struct run *r)
{
	int pair[2], sz = 4 << 20, fork_err;

	if (r->listener < 0)
		return;
	if (!r->inflight) {
		void *m = mmap(NULL, sizeof(*r->inflight), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		r->inflight = m == MAP_FAILED ? NULL : m;
	}
	if (!r->inflight || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
		attrib_give_up("the write observer could not start");
		warnx("observer: cannot start it: %s; writes are not observed", strerror(errno));
		close(r->listener);	/* the kernel fails what it would notify: better than a hang */
		r->listener = -1;
		return;
	}
	(void)setsockopt(pair[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));	/* a burst waits, not lost */
	r->observer = fork();
	if (r->observer == 0) {
		const int keep[] = { r->listener, pair[1] };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != r->self_pid)
			_exit(0);	/* sbx died between the fork and the prctl */
		fds_close_except(keep, LEN(keep));	/* the locks, the listeners, the sink stay sbx's */
		sigprocmask(SIG_SETMASK, &r->old, NULL);
		obs_main(r->listener, pair[1], r->inflight, sess.on, (long)r->inner);
	}
	fork_err = errno;
	close(pair[1]);
	if (r->observer < 0 && (fork_err == EAGAIN || fork_err == ENOMEM)) {
		/* SECURITY: the command can use up its uid's processes (RLIMIT_NPROC,
		 * pids.max) before its first write-intent call: the listener is
		 * kept and the fork tried again (the call waits, as for any
		 * answer), or one such command would leave a run, or a session
		 * for good, unobserved and every later write failing (ENOSYS) */
		if (!r->obs_retry_at)
			warnx("observer: fork: %s; the calls it is to see wait, it is tried again", strerror(fork_err));
		r->obs_retry_at = now_ms() + 100;
		r->observer = -1;
		close(pair[0]);
		return;
	}
	r->obs_retry_at = 0;
	if (r->observer < 0) {
		attrib_give_up("the write observer could not start");
		warnx("observer: fork: %s; writes are not observed", strerror(fork_err));
		close(pair[0]);
		close(r->listener);	/* the kernel fails what it would notify: better than a hang */
		r->listener = -1;
		return;
	}
	r->events = pair[0];
}

/* A call the mount table would refuse may fail first for another reason,
 * and then it was no refusal: creating a name that exists is EEXIST
 * (`mkdir -p /usr/share`, `os.makedirs(exist_ok=True)`), removing one that
 * does not is ENOENT (`rm -f` of a lock that is not there). Reporting
 * those would send a model after an allow-write it does not need. Judged
 * on this machine's view of the name, just after the call. */
static bool
obs_failed_anyway(const struct obs_event *e, const char *path)
{
	static const enum sc_id creating[] = { SC_mkdir, SC_mkdirat, SC_mknod, SC_mknodat, SC_symlink,
		SC_symlinkat, SC_link, SC_linkat };
	static const enum sc_id removing[] = { SC_unlink, SC_unlinkat, SC_rmdir };
	enum sc_id sc = obs_calls[e->call].sc;
	struct stat st;
	bool there = lstat(path, &st) == 0;

	for (size_t i = 0; i < LEN(creating); i++)
		if (sc == creating[i])
			return there;
	for (size_t i = 0; i < LEN(removing); i++)
		if (sc == removing[i])
			return !there && errno == ENOENT;
	return false;
}

/* A refusal judged on the name as the command wrote it may be a write
 * that went through: a symlinked directory on the way (a symlinked $HOME,
 * a link from outside into a root) leads where the plan makes it writable.
 * The parent's real path, as this machine resolves it (the sandbox binds
 * the same trees), decides then. Only refusals are re-judged, so the
 * common case (a write inside a root) costs nothing more. */
static bool
obs_writable_through_links(const struct plan *pl, const char *path)
{
	char dir[PATH_MAX], real[PATH_MAX], joined[PATH_MAX];
	const char *slash = strrchr(path, '/');

	/* the name itself a symlink into a root (dotfiles kept by stow): the
	 * write followed it */
	if (realpath(path, real) && strcmp(real, path) != 0 && plan_is_writable(pl, real))
		return true;
	if (!slash || slash == path || (size_t)(slash - path) >= sizeof(dir))
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	if (!realpath(dir, real) || strcmp(real, dir) == 0)
		return false;	/* no link on the way: the lexical verdict stands */
	if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", strcmp(real, "/") ? real : "", slash + 1) >= sizeof(joined))
		return false;
	return plan_is_writable(pl, joined);
}

#define SBX_NOTED_MAX	4096	/* -v's lines for distinct refusals: a session's log is on disk */

/* Step: the observer's events, each judged against the plan (obs_judge);
 * the refusals go to the store. When the observer has gone: if the
 * command still runs and the observer did not end by itself (exit 0: no
 * filtered process left), another is started. */
static void
run_take_observations(struct run *r, short revents)
{
	unsigned char rec[SBX_OBS_MAX_BYTES + 1];	/* one more: an over-long record truncates and fails */
	char norm[PATH_MAX], shown[PATH_MAX];
	struct obs_event e;
	struct violation v;
	ssize_t n;
	int status = 0;

	while ((n = recv(r->events, rec, sizeof(rec), MSG_DONTWAIT)) > 0) {
		if (obs_event_decode(rec, (size_t)n, &e) < 0) {
			r->obs_bad++;
			attrib_give_up("the observer sent a record sbx could not read");
			continue;
		}
		r->obs_events++;
		r->obs_lost += e.lost;
		session_unobserved(e.lost);
		if (obs_calls[e.call].what == OW_SETSID) {	/* a session made inside an exec (10f) */
			session_setsid((uint32_t)strtoul(e.target, NULL, 10), e.sid);
			continue;
		}
		attrib_event(r->pl, &e);	/* for the audit (9b) */
		if ((e.flags & OBS_F_WHERE) || !obs_judge(r->pl, &e, norm, sizeof(norm), &v) ||
		    (v.kind == VK_FILE && (obs_writable_through_links(r->pl, norm) || obs_failed_anyway(&e, norm))))
			continue;
		v.time_ms = wall_ms();
		r->obs_refused++;
		if (r->store && !vstore_add(r->store, &v))
			continue;	/* -v shows each distinct refusal once; the summary counts them */
		if (verbose && ++r->obs_noted == SBX_NOTED_MAX + 1)
			note("observer: more than %d distinct refusals; the rest are counted, not shown", SBX_NOTED_MAX);
		if (verbose && r->obs_noted <= SBX_NOTED_MAX) {
			size_t k;	/* a file name may hold anything: no control byte reaches the terminal */

			for (k = 0; v.target[k] && k < sizeof(shown) - 1; k++)
				shown[k] = is_control((unsigned char)v.target[k]) ? '?' : v.target[k];
			shown[k] = '\0';
			if (v.kind == VK_CONNECT)
				note("observer: deny %s %s:%d (%s) by %s[%d]", v.op, shown, v.port, v.reason,
				    v.comm ? v.comm : "?", v.pid);
			else
				note("observer: deny %s %s by %s[%d]", v.op, shown, v.comm ? v.comm : "?", v.pid);
		}
	}
	if (!(revents & (POLLHUP | POLLERR)) || n > 0)
		return;
	close(r->events);
	r->events = -1;
	while (waitpid(r->observer, &status, 0) < 0 && errno == EINTR)
		;
	r->observer = -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		close(r->listener);
		r->listener = -1;
		return;
	}
	r->obs_restarts++;
	attrib_give_up("the write observer died during the run");	/* what it held, unsent */
	warnx("observer: it died (%s %d); starting another", WIFSIGNALED(status) ? "signal" : "exit status",
	    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	run_spawn_observer(r);
}

/* Step, after the command: the last events, then the observer goes. */
static void
run_stop_observer(struct run *r)
{
	if (r->events >= 0) {
		run_take_observations(r, 0);
		close(r->events);
		r->events = -1;
	}
	if (r->observer > 0) {
		kill(r->observer, SIGKILL);
		waitpid(r->observer, NULL, 0);
		r->observer = -1;
	}
	if (r->listener >= 0)
		close(r->listener);
	r->listener = -1;
	if (r->inflight && r->inflight->lost)
		attrib_give_up("the observer lost events (its socket was full)");
	if (r->store)
		r->store->unobserved = r->obs_lost;
	if (r->obs_events || r->obs_lost || r->obs_bad)
		note("observer: %llu events, %llu refused, %llu not reported (its socket was full), %llu malformed, "
		    "%u restarts", (unsigned long long)r->obs_events, (unsigned long long)r->obs_refused,
		    (unsigned long long)r->obs_lost, (unsigned long long)r->obs_bad, r->obs_restarts);
}

/* Step: wait for bwrap, forwarding signals, taking the proxy's decisions
 * and the control fd's updates as they come (the signals stay blocked:
 * they arrive on sigfd). */
static void
run_supervise(struct run *r)
{
	bool done = false;
	int sigfd = signalfd(-1, &r->forwarded, SFD_CLOEXEC);

	if (sigfd < 0)
		die("signalfd: %s", strerror(errno));	/* bwrap dies with us: nothing more runs */
	r->sigfd = sigfd;
	while (!done) {
		/* the listener while no observer reads it (run_note_observer);
		 * its hang-up (no process left under the filter) only once */
		int64_t wait_obs = r->observer < 0 && r->obs_retry_at ? r->obs_retry_at - now_ms() : 0;
		int unread = r->observer < 0 && !r->listener_hup && wait_obs <= 0 ? r->listener : -1;
		struct pollfd pf[5 + 2 + SBX_SESSION_MAX_CLIENTS + LEN(r->ls)] = { { sigfd, POLLIN, 0 },
			{ r->report, POLLIN, 0 }, { r->events, POLLIN, 0 }, { live.fd, POLLIN, 0 },
			{ unread, POLLIN, 0 } };	/* -1: poll skips it */
		nfds_t ns = session_poll(r, pf, 5), npf = run_proxy_poll(r, pf, ns);
		struct signalfd_siginfo si;
		int sig, ready, tmo = live_timeout(), stmo = session_timeout();

		tmo = tmo < 0 || (stmo >= 0 && stmo < tmo) ? stmo : tmo;
		if (wait_obs > 0 && r->listener >= 0 && (tmo < 0 || wait_obs < tmo))
			tmo = (int)wait_obs;	/* the observer's fork, tried again */
		ready = poll(pf, npf, tmo);
		if (ready < 0)
			continue;
		if (ready == 0 && session_tidy(r, false))
			continue;	/* nothing came: one step of a session's tidying, then look again */
		/* the control fd first: a line that waits as the first
		 * connection comes is what the proxy forked for it starts with.
		 * One that failed before its first line stops the command, as a
		 * signal would, then for good (9d) */
		if (pf[3].revents && live_read(r->report) < 0)
			kill(r->ready ? r->inner : r->bwrap, SIGTERM);
		if (live_kill_due())
			kill(r->ready ? r->inner : r->bwrap, SIGKILL);	/* pid 1 of its namespace: all of it goes */
		run_proxy_on_demand(r, pf + ns, npf - ns);
		if (pf[4].revents & POLLIN)
			run_spawn_observer(r);	/* a call waits for it */
		else if (pf[4].revents & POLLHUP)
			r->listener_hup = true;	/* not POLLERR alone: a signal during the kernel's lock (EPOLLERR) */
		session_on_events(r, pf + 5);
		if (pf[2].revents)
			run_take_observations(r, pf[2].revents);
		if (pf[1].revents) {
			net_log_drain(r->netlog, r->report);
			if (pf[1].revents & (POLLHUP | POLLERR)) {
				close(r->report);	/* the proxy died: keep no fd that polls ready forever */
				r->report = -1;
			}
		}
		if (!(pf[0].revents & POLLIN) || read(sigfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
			continue;
		sig = (int)si.ssi_signo;
		if (sig == SIGCHLD) {
			pid_t w;

			while ((w = waitpid(r->bwrap, &r->status, WNOHANG)) == r->bwrap || (w < 0 && errno == EINTR))
				if (w == r->bwrap) {
					done = true;
					run_state.sandbox_gone = true;	/* pid 1 inside waited for every other */
					break;
				}
			continue;
		}
		/* the command gets the signal through its pid 1; before that
		 * exists, stopping bwrap stops everything. A signal from the
		 * terminal (SI_KERNEL) reached the command directly: it shares
		 * our foreground process group. */
		if (sess.on && r->ready)
			kill(r->inner, SIGKILL);	/* a session's daemon told to go: the session ends */
		else if (si.ssi_code <= 0 || !r->ready)
			kill(r->ready ? r->inner : r->bwrap, sig);
	}
	close(sigfd);
	r->sigfd = -1;
	if (r->report >= 0)
		net_log_finish(r->netlog, r->report);	/* the last decisions: in the socket, or batched */
	if (r->proxy > 0) {
		kill(r->proxy, SIGKILL);
		waitpid(r->proxy, NULL, 0);
	}
	run_stop_observer(r);
	net_log_summary(r->netlog);
	sigprocmask(SIG_SETMASK, &r->old, NULL);
}

/* Step: sbx's exit status: the command's, or 125 when the sandbox was
 * never built (the inner helper or bwrap said why). */
static int
run_exit_status(const struct run *r)
{
	if (!r->ready && WIFEXITED(r->status) && WEXITSTATUS(r->status) == SBX_EXIT_FAILURE)
		exit(SBX_EXIT_FAILURE);	/* the inner helper said why */
	if (!r->ready) {
		const char *changed = plan_changed_path(r->pl);

		if (changed)	/* not this machine's setup: another program's work, so no --check */
			die_hint("run it again; if that program keeps changing it, run when it has finished",
			    "bubblewrap could not build the sandbox (its message is above): %s changed on this machine "
			    "while sbx was starting (another program works there); the command did not run", changed);
		die_hint(bwrap_failure_hint(), "bubblewrap could not build the sandbox (its message is above); "
		    "the command did not run");
	}
	if (WIFSIGNALED(r->status))
		return 128 + WTERMSIG(r->status);
	return WEXITSTATUS(r->status);
}

/* Run the command in the sandbox, as a list of steps (nsjail's
 * containProc() habit). Returns the exit status sbx should exit with; dies
 * (125) if the sandbox cannot be built. */
static int
run_linux(const struct policy *p, const struct plan *pl, const struct run_paths *rp, const struct run_facts *rf,
    const char *bwrap, struct vstore *store)
{
	struct run r = { .p = p, .pl = pl, .rp = rp, .rf = rf, .store = store, .expose_fd = -1, .info = -1, .ctl = -1,
		.bwrap = -1, .inner = -1, .proxy = -1, .report = -1, .sigfd = -1, .self_pid = getpid(),
		.netlog = net_log_new(), .listener = -1, .observer = -1, .events = -1 };

	r.netlog->store = store;
	r.netlog->mitm_socket = p->mitm_socket;

	if (sess.on) {	/* a session's daemon (10f) */
		session_listen(rp);
		store->added = session_attribute;
	} else if (rp->runtime_root) {
		audit_notice_show(path_join(rp->runtime_root, "sessions"));	/* an ended session's audit (9b) */
	}
	run_instructions(&r, rf->cmd);
	run_listen_expose(&r);
	run_take_signals(&r);
	run_prepare(rp, pl, rf->dns, rf->tmp_spare);	/* placeholders, the run's directory (9a) */
	timing("run directory, placeholders");
	if (sess.on)
		session_tidier_start(rp->tmpdir);
	run_listen_bridge(&r);
	run_spawn_bwrap(&r, bwrap);
	timing("bwrap started");
	run_send_instructions(&r);
	run_take_handed(&r);
	run_wait_ready(&r);
	timing("sandbox ready");
	run_note_observer(&r);	/* the observer itself is forked on the first call it sees */
	if (sess.on && r.ready)
		session_ready(rp);
	run_supervise(&r);		/* forks the proxy on the first connection */
	timing("command ended, sandbox gone");
	if (sess.on)
		audit_after_run(pl);	/* now, so `sbx session stop` shows it (session_end) */
	session_end();
	return run_exit_status(&r);
}

/* ---- 10d. --check: can this machine build the sandbox? ---------------- */

/* Run argv with stdout and stderr captured into out; returns the exit status or -1. */
static int
run_capture(char *const argv[], struct buf *out)
{
	int fds[2], status;
	pid_t pid;
	char tmp[4096];
	ssize_t r;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = openat(AT_FDCWD, "/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	while ((r = read(fds[0], tmp, sizeof(tmp))) > 0 || (r < 0 && errno == EINTR))
		if (r > 0 && out->n < 65536)
			buf_putn(out, tmp, (size_t)r);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}


static char *
first_line(const struct buf *b)
{
	const char *s = b->p ? b->p : "";

	return astrndup(s, strcspn(s, "\n"));
}

/* The usual reasons unprivileged user namespaces fail, and their fixes. */
static const char *
userns_diagnosis(void)
{
	struct buf b = { 0 };
	struct utsname u;
	const char *why = NULL;

	if (read_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 16, &b) == 0 && b.p[0] == '1')
		why = "kernel.apparmor_restrict_unprivileged_userns=1 (Ubuntu 23.10+) — fix: add an AppArmor profile "
		    "that allows userns for bwrap, or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0";
	b.n = 0;
	if (!why && read_file("/proc/sys/user/max_user_namespaces", 32, &b) == 0 && atoi(b.p) == 0)
		why = "user.max_user_namespaces=0 — fix: sysctl -w user.max_user_namespaces=15000";
	b.n = 0;
	if (!why && read_file("/proc/sys/kernel/unprivileged_userns_clone", 16, &b) == 0 && b.p[0] == '0')
		why = "kernel.unprivileged_userns_clone=0 — fix: sysctl -w kernel.unprivileged_userns_clone=1";
	if (!why && uname(&u) == 0 && strstr(u.release, "Microsoft"))
		why = "WSL1 has no user namespaces — fix: use WSL2";
	if (!why && (access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0))
		why = "this is a container without the privileges to nest namespaces — fix: run it with "
		    "--security-opt seccomp=unconfined and apparmor=unconfined, or --privileged";
	free(b.p);
	return why ? why : "unknown cause — fix: see the bubblewrap message above";
}

static int
check_main(const struct policy *p)
{
	const char *bw = p->bwrap_path ? p->bwrap_path : find_in_path("bwrap");
	const char *socat = p->socat_path ? p->socat_path : find_in_path("socat");
	struct buf out = { 0 };
	struct buf sb = { 0 };
	int rc;

	if (!bw || access(bw, X_OK) < 0) {
		check_line(false, "bubblewrap not found — fix: apt-get install bubblewrap");
	} else {
		char *ver[] = { (char *)bw, "--version", NULL };

		rc = run_capture(ver, &out);
		check_line(rc == 0, "bubblewrap %s (%s)", rc == 0 ? first_line(&out) : "does not run", bw);
		{
			char *probe[] = { (char *)bw, "--unshare-user", "--unshare-pid", "--unshare-net", "--ro-bind", "/",
			    "/", "--proc", "/proc", "--dev", "/dev", "--", "/bin/true", NULL };

			out.n = 0;
			rc = run_capture(probe, &out);
			if (rc == 0)
				check_line(true, "user, pid and network namespaces can be created");
			else
				check_line(false, "bwrap cannot create namespaces: %s — cause: %s", first_line(&out),
				    userns_diagnosis());
		}
	}
	rc = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	check_line(rc >= 0, "seccomp filters%s", rc >= 0 ? " are supported" : ": not supported by this kernel");
	if (read_file("/proc/sys/kernel/seccomp/actions_avail", 4096, &sb) == 0)
		check_line(strstr(sb.p, "user_notif") != NULL, "seccomp user notification%s",
		    strstr(sb.p, "user_notif") ? " is supported" : ": not supported (kernel older than 5.0)");
	else
		check_line(false, "seccomp user notification: /proc/sys/kernel/seccomp/actions_avail unreadable");
	{
		const char *why = observer_unavailable();

		/* not a failure: the boundary is the same without it */
		if (!p->observe_writes)
			check_line(true, "the write observer is off: observe-writes off");
		else if (why)
			check_line(true, "the write observer is off: %s; writes are refused as ever, but not reported", why);
		else
			check_line(true, "the write observer is on: refused writes and direct connections are reported");
	}
	if (!p->network_dns) {
		check_line(true, "the DNS stub is off: network-dns off; names do not resolve inside");
	} else {
		/* what the inner helper does (inner_own_network), tried here: a
		 * user namespace with a network namespace of its own */
		pid_t pid = fork();
		int st = -1;

		if (pid == 0)
			_exit(unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 ? 0 : 1);
		while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		/* not a failure: without it the boundary is the same, and names
		 * do not resolve inside, as srt's */
		if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			check_line(true, "the DNS stub is on: allowed names resolve inside (network-dns)%s",
			    p->network_capture ? ", and network-capture with it" : "");
		else	/* the command's network namespace is the stub's own (bw_render_options) */
			check_line(p->weaker_nested_sandbox, "the DNS stub cannot be made here (no user namespace with a "
			    "network namespace of its own)%s — fix: network-dns off", p->weaker_nested_sandbox ?
			    "; names do not resolve inside" : ", and runs refuse to start without it");
	}
	if (socat && access(socat, X_OK) == 0)
		check_line(true, "socat (%s), for bridge socat", socat);
	else if (p->bridge == BRIDGE_SOCAT)
		check_line(false, "socat not found, and the policy says bridge socat — fix: apt-get install socat");
	else
		check_line(true, "socat is not installed; only bridge socat needs it");
	if (p->weaker_nested_sandbox)
		check_line(true, "weaker-nested-sandbox is set: if a fresh /proc cannot be mounted, /proc shows every "
		    "process of the machine (their cmdline, and environ of this user's), and if nested namespaces "
		    "cannot be made the command shares bwrap's pid namespace; the seccomp filters, no capabilities, "
		    "and read-only /proc/sys, sysrq-trigger, irq and bus still hold");
	free(out.p);
	free(sb.p);
	return check_failures ? 1 : 0;
}

/* ---- 10e. The platform interface on Linux (section 1) -----------------
 *
 * The calls shared code makes that only Linux answers this way, and the
 * proxy's lockdown (Landlock and the seccomp program). */

/* Linux sets O_CLOEXEC and O_NONBLOCK in the call that makes the
 * descriptor: no window in which a fork could inherit it. */
static int
px_socket_cloexec_nonblock(int family)
{
	return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

static int
px_accept_cloexec_nonblock(int lfd)
{
	return accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

static int
px_pipe_cloexec_nonblock(int p[2])
{
	return pipe2(p, O_CLOEXEC | O_NONBLOCK);
}



/* Landlock: the proxy reads only what the resolver needs.
 *
 * KERNEL 5.13+ (ABI 1; this code knows up to ABI 6). On top of the seccomp
 * program (no exec, no write-opens), a Landlock ruleset leaves the proxy
 * read access to the resolver's files and the libraries NSS may still load,
 * nothing else: a memory bug in a parser cannot read ~/.ssh. Where the
 * kernel has no Landlock the seccomp program stands alone (-v says so).
 * The structures are the kernel's (linux/landlock.h), spelled here so the
 * file builds without new kernel headers. */

#define SBX_NR_landlock_create_ruleset	444	/* the same on x86_64 and aarch64 */
#define SBX_NR_landlock_add_rule	445
#define SBX_NR_landlock_restrict_self	446

struct ll_ruleset_attr { uint64_t handled_access_fs, handled_access_net, scoped; };
struct ll_path_beneath { uint64_t allowed_access; int32_t parent_fd; } __attribute__((packed));

enum {
	LL_FS_EXECUTE = 1 << 0, LL_FS_WRITE_FILE = 1 << 1, LL_FS_READ_FILE = 1 << 2, LL_FS_READ_DIR = 1 << 3,
	LL_FS_ABI1_ALL = (1 << 13) - 1,		/* execute .. make_sym */
	LL_FS_REFER = 1 << 13,			/* ABI 2 */
	LL_FS_TRUNCATE = 1 << 14,		/* ABI 3 */
	LL_FS_IOCTL_DEV = 1 << 15,		/* ABI 5 */
	LL_NET_BIND_TCP = 1 << 0,		/* ABI 4: the proxy never binds */
	LL_SCOPE_ABSTRACT_UNIX = 1 << 0, LL_SCOPE_SIGNAL = 1 << 1,	/* ABI 6 */
	LL_RULE_PATH_BENEATH = 1,
	LL_CREATE_RULESET_VERSION = 1,
};

/* What the resolver reads after the warm-up lookup: files, then trees. */
static const char *const px_read_files[] = {
	"/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf",
	"/etc/services", "/etc/ld.so.cache",
};
static const char *const px_read_trees[] = { "/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/lib32" };

/* Restrict this process (and the resolver threads it starts later).
 * Returns the ABI in force, 0 when the kernel has no Landlock, -1 on a
 * failure after the kernel said it has one. */
static int
px_landlock(void)
{
	struct ll_ruleset_attr ra;
	long abi = syscall(SBX_NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	size_t i, ra_size = 16;
	int rs;

	if (abi < 1)
		return 0;	/* ENOSYS or EOPNOTSUPP: not built, or not enabled */
	memset(&ra, 0, sizeof(ra));
	ra.handled_access_fs = LL_FS_ABI1_ALL | (abi >= 2 ? LL_FS_REFER : 0) | (abi >= 3 ? LL_FS_TRUNCATE : 0) |
	    (abi >= 5 ? LL_FS_IOCTL_DEV : 0);
	if (abi >= 4)
		ra.handled_access_net = LL_NET_BIND_TCP;
	if (abi >= 6) {
		ra.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		ra_size = sizeof(ra);
	}
	rs = (int)syscall(SBX_NR_landlock_create_ruleset, &ra, ra_size, 0);
	if (rs < 0)
		return -1;
	for (i = 0; i < LEN(px_read_files) + LEN(px_read_trees); i++) {
		bool tree = i >= LEN(px_read_files);
		const char *path = tree ? px_read_trees[i - LEN(px_read_files)] : px_read_files[i];
		struct ll_path_beneath pb;
		struct stat st;
		int fd = openat(AT_FDCWD, path, O_PATH | O_CLOEXEC);	/* a symlinked resolv.conf: its target */

		if (fd < 0)
			continue;	/* not on this machine */
		if (fstat(fd, &st) < 0 || (tree ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
			close(fd);
			continue;
		}
		pb.allowed_access = LL_FS_READ_FILE | (tree ? LL_FS_READ_DIR : 0);
		pb.parent_fd = fd;
		if (syscall(SBX_NR_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
			close(fd);
			close(rs);
			return -1;
		}
		close(fd);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SBX_NR_landlock_restrict_self, rs, 0) < 0) {
		close(rs);
		return -1;
	}
	close(rs);
	return (int)abi;
}

/* SECURITY: lock this process down before it reads a byte from the
 * sandbox; the resolver threads, started after, inherit it. Not dumpable
 * (no ptrace, no core), Landlock (above) where the kernel has it, then the
 * seccomp program with the proxy's rules (no exec, no write-opens).
 * Exits 125 when a lock that should hold does not. */
static void
px_lockdown(void)
{
	struct bpf_opts o = { false, false, true, false, false, false, 0 };
	int abi;

	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if ((abi = px_landlock()) < 0) {
		warnx("proxy: cannot install its Landlock ruleset: %s", strerror(errno));
		_exit(SBX_EXIT_FAILURE);
	}
	if (verbose) {
		/* show it holds: a file outside the ruleset cannot be opened */
		int probe = openat(AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);

		if (abi == 0)
			warnx("proxy: this kernel has no Landlock; the seccomp filter alone locks the proxy down");
		else
			warnx("proxy: Landlock ABI %d: reads limited to the resolver's files (/proc/self/status: %s)",
			    abi, probe < 0 ? strerror(errno) : "READABLE");
		if (probe >= 0)
			close(probe);
	}
	if (install_program(&o) < 0) {
		warnx("proxy: cannot install its seccomp filter: %s", strerror(errno));
		_exit(SBX_EXIT_FAILURE);
	}
}


/* memfd_create: KERNEL 3.17+; no file system is touched. */
static int
plat_anon_file(const char *name)
{
	return memfd_create(name, MFD_CLOEXEC);
}

/* close_range(CLOSE_RANGE_CLOEXEC): KERNEL 5.11+. */
static int
plat_cloexec_fast(int lowest)
{
	return (int)syscall(SYS_close_range, (unsigned)lowest, ~0U, SBX_CLOSE_RANGE_CLOEXEC);
}

/* Field 22 of /proc/PID/stat, starttime (clock ticks since boot). The
 * buffer is kept for the next call (a run asks for its own and for each
 * other run's in the registry): musl maps a fresh one and unmaps it on
 * each free, and every page of it is a fault again. */
static long long
plat_proc_start_time(pid_t pid)
{
	static struct buf b;

	buf_reset(&b);
	return read_file(aprintf("/proc/%d/stat", (int)pid), 4096, &b) == 0 ? proc_stat_starttime(b.p) : -1;
}

/* statx(2) for the birth time, where the kernel and the file system have
 * it; fstatat(2) otherwise. */
static bool
plat_file_times(int dirfd, const char *name, long long *ctime, long long *btime)
{
	struct stat st;

	*btime = -1;
#if defined(SYS_statx)
	{
		/* struct statx by offset (linux/stat.h): musl has the syscall, not the struct */
		unsigned char b[256];
		uint32_t mask, ns;
		int64_t s;

		if (syscall(SYS_statx, dirfd, name, AT_SYMLINK_NOFOLLOW, 0x880u /* CTIME|BTIME */, b) == 0) {
			memcpy(&mask, b, 4);
			memcpy(&s, b + 96, 8);
			memcpy(&ns, b + 104, 4);
			*ctime = s * 1000000000LL + ns;
			if (mask & 0x800u) {
				memcpy(&s, b + 80, 8);
				memcpy(&ns, b + 88, 4);
				*btime = s * 1000000000LL + ns;
			}
			return true;
		}
		if (errno != ENOSYS)
			return false;
	}
#endif
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	*ctime = (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
	return true;
}

static const char *
plat_self_exe(char *buf, size_t n)
{
	(void)n;	/* realpath writes at most PATH_MAX: the callers' buffers are that */
	return realpath("/proc/self/exe", buf);
}

/* bwrap runs `sbx --inner` (10a). */
static int
plat_helper_main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--inner") == 0)
		return inner_main(argc, argv);
	return -1;
}

static int
plat_check(const struct policy *p)
{
	return check_main(p);
}

/* sbx-init binds placeholders with open_tree and move_mount (Linux 5.2+),
 * in the nested namespaces: not in a sandbox that may run without them
 * (weaker-nested-sandbox), where bwrap keeps doing it. The probe: an
 * empty path without AT_EMPTY_PATH is ENOENT where the call exists. */
static bool
plat_init_binds(const struct policy *p)
{
	if (!SBX_INIT_BINDS || p->weaker_nested_sandbox)
		return false;
	return syscall(SYS_open_tree, -1, "", 0) >= 0 || errno != ENOSYS;
}

/* The programs first: bwrap found, and neither sbx, bwrap nor socat
 * writable inside; then the run (10c). */
static int
plat_run(const struct policy *p, const struct plan *pl, const struct run_paths *rp, const struct run_facts *rf,
    struct vstore *store)
{
	const char *bw = bwrap_locate(p);
	char self[PATH_MAX];

	tamper_check(pl, "sbx's own binary", plat_self_exe(self, sizeof(self)));
	tamper_check(pl, "bubblewrap", bw);
	tamper_check(pl, "socat", p->socat_path ? p->socat_path : find_in_path("socat"));
	return run_linux(p, pl, rp, rf, bw, store);
}

/* ---- 10f. Sessions: one sandbox, many commands ---------------------------
 *
 * `sbx session start` builds the sandbox once, as a run does (the plan,
 * placeholders, listeners, bwrap, the proxy on demand, the observer), but
 * sbx-init runs no command: it serves execs (init_serve, 10a). This sbx
 * becomes the session's daemon: it listens on ROOT/sessions/NAME.sock (a
 * stream socket in the runtime root, 0700, which every run hides from its
 * command: runtime_root_pick), takes each `sbx exec NAME -- CMD` of its own
 * uid (SO_PEERCRED), gives the command the client's environment (less
 * deny-env, plus sbx's variables and a private TMPDIR of its own) and the
 * client's stdin, stdout and stderr, passes signals on, and answers with
 * the status and the refusals its processes made (session_attribute). It ends on `sbx session
 * stop NAME`, after --idle seconds with nothing running, on SIGTERM, or
 * when it dies (bwrap --die-with-parent, the proxy's and observer's
 * PDEATHSIG): then pid 1 of the sandbox is killed, everything inside goes
 * with it, and the end of a run follows (the audit, placeholders, the run
 * directory).
 *
 *   sbx session start -c POLICY --name NAME
 *     '- the daemon: this sbx (setsid; stderr to ROOT/sessions/NAME.log)
 *          |- bwrap -> sbx --inner -> sbx-init (pid 1 inside, filtered; init_serve)
 *          |                              '- each exec: clone(CLONE_VM), its own session, execve
 *          |- the proxy (on the first connection) and the write observer, as a run's
 *          |- sbx-tidy: removes ended execs' TMPDIRs, so the daemon never waits
 *          |  in an rmdir
 *          '- listens on ROOT/sessions/NAME.sock
 *   sbx exec NAME -- CMD: connects, hands over 0, 1, 2, argv, environment and
 *     directory (E), waits for the status and the report (Z)
 *
 * An exec crosses two hops each way (client -> daemon -> init, and back),
 * and the way back must pass the daemon: the refusals are its to report
 * (the observer and the proxy answer to it), and the status goes after
 * them. */
/* A session's name: letters, digits, '.', '_' and '-', not starting with
 * '.'; it names a file. */
static bool
session_name_ok(const char *n)
{
	size_t k = strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");

	return k > 0 && k <= SBX_SESSION_NAME_MAX && !n[k] && n[0] != '.';
}

/* The socket of session name in runtime root root. */
static const char *
session_path(const char *root, const char *name)
{
	return aprintf("%s/sessions/%s.sock", root, name);
}

static int
session_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (str_copy(sa.sun_path, path, sizeof(sa.sun_path)) >= sizeof(sa.sun_path))
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The daemon, before anything is planned: the starter forks it and waits
 * for "ready" (or the pipe's end: the daemon said why on the stderr they
 * share, and failed). The daemon leaves the starter's session and, once
 * ready, its terminal: its stderr goes to ROOT/sessions/NAME.log. */
static void
session_daemonize(void)
{
	int p[2];
	pid_t pid;
	char ok;

	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0)
		die("session: cannot start the daemon: %s", strerror(errno));
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &ok, 1) != 1)
			exit(SBX_EXIT_FAILURE);	/* the daemon said why */
		printf("%s\n", sess.name);
		exit(0);
	}
	close(p[0]);
	sess.ready_fd = p[1];
	setsid();
}

/* The listening socket, in the runtime root; a live session of that name
 * stops this one. */
static void
session_listen(const struct run_paths *rp)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *dir = path_join(rp->runtime_root, "sessions");
	int fd;

	sess.path = session_path(rp->runtime_root, sess.name);
	if (strlen(sess.path) >= sizeof(sa.sun_path))
		die("session: the socket's path is too long: %s", sess.path);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		die("session: cannot create %s: %s", dir, strerror(errno));
	if ((fd = session_connect(sess.path)) >= 0) {
		close(fd);
		die_hint(aprintf("stop it (sbx session stop %s), or choose another --name", sess.name),
		    "session: %s is running already", sess.name);
	}
	unlink(sess.path);	/* a socket left by a session that died */
	memcpy(sa.sun_path, sess.path, strlen(sess.path) + 1);
	if ((sess.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0 ||
	    bind(sess.lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sess.path, 0600) < 0 ||
	    listen(sess.lfd, 64) < 0)
		die("session: cannot listen on %s: %s", sess.path, strerror(errno));
	for (int i = 0; i < SBX_SESSION_MAX_CLIENTS; i++)
		sess.c[i].fd = -1;
	sess.idle_since = now_ms();
}

/* Ready: the starter prints the name and returns; the daemon's stderr
 * goes to the session's log. */
static void
session_ready(const struct run_paths *rp)
{
	const char *log = aprintf("%s/sessions/%s.log", rp->runtime_root, sess.name);
	int fd = openat(AT_FDCWD, log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600),
	    null = openat(AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);

	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
	}
	if (fd >= 0 || null >= 0)
		dup2(fd >= 0 ? fd : null, 2);
	(void)!write(sess.ready_fd, "R", 1);
	close(sess.ready_fd);
	sess.ready_fd = -1;
}

/* An exec's environment: the client's, less what deny-env names and what
 * sbx sets, then sbx's (run_env: the proxy's variables and the rest, as a
 * run's), with its own TMPDIR. */
static char **
session_env(const struct run *r, char *const *client, const char *tmpdir)
{
	struct vec kv = { 0 }, out = { 0 };

	run_env(r->p, r->rf, &kv);
	for (size_t i = 0; client[i]; i++) {
		const char *eq = strchr(client[i], '=');
		size_t n = eq ? (size_t)(eq - client[i]) : 0;
		bool ours = false;

		for (size_t k = 0; k + 1 < kv.n && !ours; k += 2)
			ours = strlen(kv.v[k]) == n && strncmp(kv.v[k], client[i], n) == 0;
		if (n && !ours && !env_denied(r->p, client[i], n))
			vec_push(&out, client[i]);
	}
	for (size_t k = 0; k + 1 < kv.n; k += 2)
		vec_push(&out, aprintf("%s=%s", (const char *)kv.v[k],
		    strcmp(kv.v[k], "TMPDIR") == 0 ? tmpdir : (const char *)kv.v[k + 1]));
	vec_push(&out, NULL);
	return (char **)out.v;
}

/* The tidier (sbx-tidy): a child of the daemon that removes the TMPDIRs
 * of ended execs. An rmdir on a filesystem mounted `discard` waits for the
 * device (0.1 to 0.3 ms here, in D state), and a daemon waiting there
 * holds every exec's status and every observer event behind it; so the
 * daemon writes the path to a pipe and goes on, when it has nothing else
 * to do (session_tidy: not as a client wakes to its status, when the
 * tidier would wake beside it on a 2-CPU machine). The tidier removes only an
 * exec-N directly below the session's TMPDIR base (what it is sent is
 * checked, not trusted, though only the daemon writes the pipe), and ends
 * when the pipe does (session_end waits for it) or with the daemon
 * (PDEATHSIG). It holds no other descriptor. A full pipe, or no tidier:
 * the daemon removes the directory itself, when idle (session_tidy). */
static void
session_tidier_start(const char *base)
{
	pid_t parent = getpid(), pid;
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		static char buf[2 * PATH_MAX];
		size_t n = 0, nb = strlen(base);

		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent || dup2(p[0], 3) < 0)
			_exit(0);
		if (syscall(SYS_close_range, 4U, ~0U, 0U) < 0)
			for (int fd = 4; fd < 4096; fd++)
				close(fd);
		prctl(PR_SET_NAME, "sbx-tidy", 0, 0, 0);
		for (;;) {
			ssize_t r = read(3, buf + n, sizeof(buf) - n);
			char *s = buf, *end;

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				_exit(0);
			n += (size_t)r;
			while ((end = memchr(s, '\0', n - (size_t)(s - buf)))) {
				if (strncmp(s, base, nb) == 0 && strncmp(s + nb, "/exec-", 6) == 0 && !strchr(s + nb + 1, '/'))
					rm_tree(s);
				s = end + 1;
			}
			n -= (size_t)(s - buf);
			memmove(buf, s, n);
			if (n == sizeof(buf))
				n = 0;	/* no path is that long: what came is not one */
		}
	}
	close(p[0]);
	if (fcntl(p[1], F_SETFL, O_NONBLOCK) < 0) {
		close(p[1]);
		return;
	}
	sess.tidier = p[1];
	sess.tidier_pid = pid;
}

/* Hand an ended exec's TMPDIR to the tidier. A path is shorter than
 * PIPE_BUF, so the write is whole or fails (a full pipe: EAGAIN). */
static bool
session_tidier_take(const char *path)
{
	size_t n = strlen(path) + 1;

	return sess.tidier >= 0 && n <= PIPE_BUF && write(sess.tidier, path, n) == (ssize_t)n;
}

static void
session_client_close(struct sess_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->tmpdir && sess.ntrash < LEN(sess.trash)) {
		sess.trash[sess.ntrash++] = c->tmpdir;	/* to sbx-tidy as soon as the daemon is idle */
		c->tmpdir = NULL;
	} else if (c->tmpdir && session_tidier_take(c->tmpdir)) {
		;	/* removed by sbx-tidy */
	} else if (c->tmpdir) {
		rm_tree(c->tmpdir);
	}
	free(c->tmpdir);
	vstore_clear(&c->store);
	free(c->cmdline);
	for (size_t i = 0; c->id && i < sess.nsids; i++)	/* its sessions: no longer any running exec's */
		if (sess.sids[i].exec == c->id)
			sess.sids[i--] = sess.sids[--sess.nsids];
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* The execs' TMPDIRs, off their path. On this kind of disk a directory
 * is dear: ext4 journals each mkdir and rmdir, and mounted with
 * `discard` an rmdir frees the directory's block with a synchronous
 * discard (0.1 to 0.2 ms each, measured; more than the rest of an exec's
 * work in the daemon). So the next exec's TMPDIR is made ahead, and an
 * ended exec's is handed to sbx-tidy (or removed here when it cannot
 * take it), each while the daemon has nothing else to do
 * (run_supervise calls this when poll finds nothing ready: one step a
 * call, so an exec that comes meanwhile waits for one step at most).
 * "Nothing else to do" is the time an exec's command runs (sess.tidy_at
 * is 0 from init's "S": init has started it and sleeps), and not while
 * init starts it (it may share this CPU), nor the moment after
 * an exec's status went to its client: that client, woken on this CPU,
 * would wait behind the step, and the next exec of an agent's burst comes
 * right after it (SBX_SESSION_TIDY_DEFER_MS).
 * Each is still fresh (made empty, 0700, for one exec only, never used
 * again) and removed when its exec has ended, before the daemon sleeps.
 * now: make the spare at once (an exec is asking and none is ready).
 * Returns whether any work is left. */
static bool
session_tidy(const struct run *r, bool now)
{
	if (!sess.on)
		return false;
	if (!now && now_ms() < sess.tidy_at)
		return true;
	if (now || (sess.want_spare && !sess.spare)) {
		/* EEXIST: a command made that name (the directory is writable
		 * inside): never take a directory we did not make; the next */
		for (int tries = 0; tries < 16 && !sess.spare; tries++) {
			char *t = strdup(aprintf("%s/exec-%u", r->rp->tmpdir, (unsigned)++sess.next_tmp));

			if (t && mkdir(t, 0700) == 0) {
				sess.spare = t;
				break;
			}
			free(t);
			if (!t || errno != EEXIST) {
				warnx("session: cannot create a TMPDIR: %s", strerror(errno));
				break;
			}
		}
		sess.want_spare = false;	/* a failure is not retried until the next exec */
	} else if (sess.ntrash) {
		char *t = sess.trash[--sess.ntrash];

		if (!session_tidier_take(t))
			rm_tree(t);
		free(t);
	}
	return sess.ntrash > 0 || (sess.want_spare && !sess.spare);
}

/* An exec asked for: checked, given its environment and TMPDIR, sent on
 * to init with the client's three descriptors. */
static void
session_on_exec(struct run *r, struct sess_client *c, const struct buf *b, int *fds, int nfd)
{
	struct exec_req e;
	struct buf cmdline = { 0 };
	const char *why = "descriptors missing";

	if (nfd != 3 || c->id || exec_req_decode(b->p, b->n, &e, &why) < 0 || (e.id && (why = "an id from a client"))) {
		frame_send(c->fd, 'Z', &(uint32_t){ SBX_EXIT_FAILURE }, 4, NULL, 0);
		warnx("session: a request refused: %s", c->id ? "a second exec on one connection" : why);
		session_client_close(c);
		return;
	}
	c->id = e.id = ++sess.next_id;
	if (!sess.spare)
		session_tidy(r, true);
	c->tmpdir = sess.spare;
	sess.spare = NULL;
	sess.want_spare = true;
	sess.tidy_at = INT64_MAX;	/* not while init starts it: its "S" says when */
	if (!c->tmpdir) {
		warnx("session: cannot create a TMPDIR for exec %u: %s", (unsigned)c->id, strerror(errno));
		frame_send(c->fd, 'Z', &(uint32_t){ SBX_EXIT_FAILURE }, 4, NULL, 0);
		session_client_close(c);
		return;
	}
	e.envp = session_env(r, e.envp, c->tmpdir);
	for (size_t i = 0; e.argv[i]; i++) {
		if (i)
			buf_putc(&cmdline, ' ');
		buf_put_shell_quoted(&cmdline, e.argv[i]);
	}
	buf_putc(&cmdline, '\0');
	c->cmdline = cmdline.p;
	vstore_init(&c->store, r->p, r->pl, c->cmdline);
	sess.out.n = 0;
	exec_req_encode(&e, &sess.out);
	if (frame_send(r->ctl, 'E', sess.out.p, sess.out.n, fds, 3) < 0)
		warnx("session: sbx-init did not take exec %u: %s", (unsigned)c->id, strerror(errno));
	buf_recycle(&sess.out);
	sess.execs++;
	sess.idle_since = 0;
}

/* Whose refusal is it? Every record the session's store takes
 * (vstore.added) goes to the store of the exec whose process made it,
 * each exec's its own (so one exec's thousands of refusals fill no later
 * exec's report):
 *  - the observer's events carry the caller's session id in the
 *    sandbox's innermost pid namespace (obs_read_sid, read while the call
 *    waited), and each exec is a session of its own (setsid in its child,
 *    10a) whose id is its leader's pid, which init reports with "S".
 *    KERNEL: the id is not the command's to change. setpgid(2) moves a
 *    process only within its own session, and no call joins an existing
 *    session: a process can only make a new one (setsid), with its own
 *    pid as the id, and a session's observer program sees every setsid
 *    (session_setsid), so a session made inside an exec stays that
 *    exec's, however deep. (A process group would not do: in one session
 *    a process can setpgid into any group, another exec's too, and have
 *    its refusals charged there.) A session's number is not given to a
 *    new process while the session has members (its struct pid stays
 *    allocated), so one left behind by an exec that ended never names a
 *    later exec.
 *  - a record of a session that is no running exec's (a process an exec
 *    left running: a dev server, whose exec has ended; a session made when
 *    the table of them was full), or of no known session (the proxy's
 *    decisions: a connection does not say which process opened it; an
 *    event whose session could not be read) goes to every exec running,
 *    and to the session's log (-v, and the store at the end): none is
 *    hidden from the model whose command may be the one that meets it (a
 *    dev server's refused write told to the command that reaches the
 *    server). With one exec at a time, an agent's tool calls, the
 *    proxy's are exact too.
 *  - an exec's first call can reach sbx before init's "S" for it (the
 *    child runs as init writes): a record of an unknown session waits
 *    while an exec has not started (sess.held), and goes to the one whose
 *    "S" names its session, or to everyone when none is left to start. */

/* Is an exec asked for that has not said "S"? */
static bool
session_unstarted(void)
{
	for (int i = 0; i < SBX_SESSION_MAX_CLIENTS; i++)
		if (sess.c[i].id && !sess.c[i].pid)
			return true;
	return false;
}

/* The exec of that id (asked for, not ended), or NULL. */
static struct sess_client *
session_exec_of(uint32_t exec)
{
	for (int i = 0; exec && i < SBX_SESSION_MAX_CLIENTS; i++)
		if (sess.c[i].id == exec)
			return &sess.c[i];
	return NULL;
}

/* The exec that session sid is of (its leader's session, or one made
 * inside it), or NULL. *pending (may be NULL): sid was made inside an
 * exec that has not said "S" yet. */
static struct sess_client *
session_owner(uint32_t sid, bool *pending)
{
	if (pending)
		*pending = false;
	if (!sid)
		return NULL;
	for (int i = 0; i < SBX_SESSION_MAX_CLIENTS; i++)
		if (sess.c[i].id && sess.c[i].pid == sid)
			return &sess.c[i];
	for (size_t i = 0; i < sess.nsids; i++)
		if (sess.sids[i].sid == sid) {
			if (pending)
				*pending = !sess.sids[i].exec;
			return session_exec_of(sess.sids[i].exec);
		}
	return NULL;
}

/* The observer saw a process of session from make session sid (setsid):
 * sid is from's exec's, or waits for the "S" of from's exec. A session of
 * no exec's is not kept: its records go to every running exec. */
static void
session_setsid(uint32_t sid, uint32_t from)
{
	struct sess_client *c;
	uint32_t wait = 0;
	bool pending;

	if (!sess.on || !sid)
		return;
	for (size_t i = 0; i < sess.nsids; i++)	/* a number used again: what it named has gone */
		if (sess.sids[i].sid == sid)
			sess.sids[i--] = sess.sids[--sess.nsids];
	c = session_owner(from, &pending);
	if (!c && pending) {
		for (size_t i = 0; i < sess.nsids; i++)
			if (sess.sids[i].sid == from)
				wait = sess.sids[i].from;
	} else if (!c && from && session_unstarted()) {
		wait = from;
	}
	if ((c || wait) && sess.nsids < SBX_SESSION_MAX_SIDS) {
		sess.sids[sess.nsids].sid = sid;
		sess.sids[sess.nsids].exec = c ? c->id : 0;
		sess.sids[sess.nsids++].from = c ? 0 : wait;
	}
}

/* c has said "S" (its pid is its session): the sessions made inside it
 * meanwhile are its. When no exec is left to start, those still waiting
 * are no exec's. */
static void
session_sids_started(const struct sess_client *c)
{
	bool unstarted = session_unstarted();

	for (size_t i = 0; i < sess.nsids; i++) {
		if (sess.sids[i].exec)
			continue;
		if (c && sess.sids[i].from == c->pid) {
			sess.sids[i].exec = c->id;
			sess.sids[i].from = 0;
		} else if (!unstarted) {
			sess.sids[i--] = sess.sids[--sess.nsids];
		}
	}
}

/* v to every running exec's store. */
static void
session_own_all(const struct violation *v)
{
	for (int i = 0; i < SBX_SESSION_MAX_CLIENTS; i++)
		if (sess.c[i].id)
			vstore_add(&sess.c[i].store, v);
}

/* vstore.added, in a session's daemon (the comment above). */
static void
session_attribute(const struct vstore *s, const struct violation *v)
{
	struct sess_client *c;
	bool pending;

	(void)s;
	if ((c = session_owner(v->sid, &pending))) {
		vstore_add(&c->store, v);
		return;
	}
	if (v->sid && (pending || session_unstarted()) && sess.nheld < SBX_SESSION_MAX_HELD &&
	    (sess.held[sess.nheld].k = vkept_new(v))) {
		sess.held[sess.nheld++].sid = v->sid;
		return;
	}
	session_own_all(v);
}

/* The records held while an exec had not started, after an "S" or a "Z":
 * each to the exec that owns it now; while one is left to start, the
 * rest wait, and then they go to every running exec. */
static void
session_release_held(void)
{
	bool unstarted = session_unstarted();
	size_t k = 0;

	for (size_t i = 0; i < sess.nheld; i++) {
		struct vkept *h = sess.held[i].k;
		struct sess_client *c = session_owner(sess.held[i].sid, NULL);

		if (!c && unstarted) {
			sess.held[k++] = sess.held[i];
			continue;
		}
		h->v.count = 1;	/* a held record is one time refused */
		if (c)
			vstore_add(&c->store, &h->v);
		else
			session_own_all(&h->v);
		free(h);
	}
	sess.nheld = k;
}

/* The observer's losses (its channel was full): whose they were is not
 * known, so every running exec's report says so. */
static void
session_unobserved(uint32_t lost)
{
	for (int i = 0; lost && sess.on && i < SBX_SESSION_MAX_CLIENTS; i++)
		if (sess.c[i].id)
			sess.c[i].store.unobserved += lost;
}

/* A message from init: an exec started, or ended. */
static void
session_from_init(struct run *r)
{
	int fds[1], nfd, type = frame_recv(r->ctl, &sess.in, fds, 1, &nfd);
	uint32_t v[2];

	if (type < 0) {
		close(r->ctl);	/* init has gone: the sandbox ends with it */
		r->ctl = -1;
		buf_recycle(&sess.in);
		return;
	}
	/* 'S' is an exec's id and pid; 'Z' its id and status, then the words
	 * of its failure when it could not start (init_reap_exec): at most a
	 * line and a hint, printed by the client as the command's stderr */
	if (sess.in.n != 8 && (type != 'Z' || sess.in.n < 8 || sess.in.n > 8 + SBX_FAILURE_WORDS_MAX)) {
		buf_recycle(&sess.in);
		return;
	}
	memcpy(v, sess.in.p, 8);
	for (int i = 0; i < SBX_SESSION_MAX_CLIENTS; i++) {
		struct sess_client *c = &sess.c[i];
		struct buf *out = &sess.out;

		if (!c->id || c->id != v[0])
			continue;
		if (type == 'S') {
			/* the client is not told: a message it only skips would
			 * wake it while its command starts (a hop on 2 CPUs) */
			c->started = true;
			c->pid = v[1];
			sess.tidy_at = 0;	/* its command runs: session_tidy */
			session_sids_started(c);
			session_release_held();
		} else if (type == 'Z') {
			/* its last calls' events and the proxy's decisions went out
			 * before it could end: take them before the report */
			run_take_observations(r, 0);
			if (r->report >= 0)
				net_log_drain(r->netlog, r->report);
			out->n = 0;
			put_u32(out, v[1]);
			buf_putn(out, sess.in.p + 8, sess.in.n - 8);
			report_block(&c->store, out);
			if (c->fd >= 0)
				frame_send(c->fd, 'Z', out->p, out->n, NULL, 0);
			sess.tidy_at = now_ms() + SBX_SESSION_TIDY_DEFER_MS;	/* after the client has gone */
			buf_recycle(out);
			session_client_close(c);
			session_sids_started(NULL);	/* it may have been the last one not started */
			session_release_held();
		}
	}
	buf_recycle(&sess.in);
	for (int i = 0; i < SBX_SESSION_MAX_CLIENTS; i++)
		if (sess.c[i].id)
			return;
	sess.idle_since = now_ms();
}

/* A message from a client: an exec, a signal, stop, or who are you. */
static void
session_from_client(struct run *r, struct sess_client *c)
{
	struct buf b = sess.in;	/* the daemon's buffer, given back below */
	int fds[3], nfd, type = frame_recv(c->fd, &b, fds, 3, &nfd);

	if (type < 0) {	/* it went: its command is hung up on, as a terminal's would be */
		if (c->id && r->ctl >= 0)
			frame_send(r->ctl, 'K', (uint32_t[2]){ c->id, SIGHUP }, 8, NULL, 0);
		if (c->id) {
			close(c->fd);	/* the exec's end still comes from init: cleaned up then */
			c->fd = -1;
		} else {
			session_client_close(c);
		}
	} else if (type == 'E') {
		session_on_exec(r, c, &b, fds, nfd);
	} else if (type == 'K' && b.n == 8 && c->id && r->ctl >= 0) {
		uint32_t v[2];

		memcpy(v, b.p, 8);
		frame_send(r->ctl, 'K', (uint32_t[2]){ c->id, v[1] }, 8, NULL, 0);
	} else if (type == 'Q') {
		sess.on = sess.on;	/* the daemon's end: pid 1 of the sandbox goes, all of it with it */
		kill(r->inner, SIGKILL);
	} else if (type == 'P') {
		const char *info = aprintf("%s pid=%d execs=%u running=%s", sess.name, (int)getpid(),
		    (unsigned)sess.execs, sess.idle_since ? "no" : "yes");

		frame_send(c->fd, 'P', info, strlen(info), NULL, 0);
	}
	/* init has its own copies now; received together, they are usually
	 * three numbers in a row: one close_range, not three closes */
	if (nfd == 3 && fds[1] == fds[0] + 1 && fds[2] == fds[0] + 2 &&
	    syscall(SYS_close_range, (unsigned)fds[0], (unsigned)fds[2], 0U) == 0)
		nfd = 0;
	for (int k = 0; k < nfd; k++)
		close(fds[k]);
	sess.in = b;
	buf_recycle(&sess.in);
}

/* A client of the session's socket: only this uid (SO_PEERCRED). One a
 * call: poll says so again while more wait (an exec's connection is one
 * accept, not one and an EAGAIN). */
static void
session_accept(void)
{
	static uid_t uid = (uid_t)-1;

	if (uid == (uid_t)-1)
		uid = getuid();
	for (;;) {
		int fd = accept4(sess.lfd, NULL, NULL, SOCK_CLOEXEC), i;
		struct ucred cr;
		socklen_t cl = sizeof(cr);
		struct timeval tv = { 5, 0 };

		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 || cr.uid != uid) {
			close(fd);
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));	/* a client that stops half way */
		for (i = 0; i < SBX_SESSION_MAX_CLIENTS && sess.c[i].fd >= 0; i++)
			;
		if (i == SBX_SESSION_MAX_CLIENTS) {
			close(fd);
			continue;
		}
		memset(&sess.c[i], 0, sizeof(sess.c[i]));
		sess.c[i].fd = fd;
		return;
	}
}

/* run_supervise's part: the socket, init's messages, the clients. */
static nfds_t
session_poll(const struct run *r, struct pollfd *pf, nfds_t n)
{
	if (!sess.on)
		return n;
	pf[n++] = (struct pollfd){ sess.lfd, POLLIN, 0 };
	pf[n++] = (struct pollfd){ r->ctl, POLLIN, 0 };
	for (int i = 0; i < SBX_SESSION_MAX_CLIENTS; i++)
		pf[n++] = (struct pollfd){ sess.c[i].fd, POLLIN, 0 };
	return n;
}

/* ARENA: what a message needs (its decoding, an environment, a report)
 * is released when it is handled: the daemon lives for hours, one arena
 * string per exec would add up. Nothing kept across messages is in the
 * arena (the clients' fields are malloc's). */
static void
session_on_events(struct run *r, const struct pollfd *pf)
{
	struct arena_mark mark = arena_mark();

	if (!sess.on)
		return;
	if (pf[0].revents)
		session_accept();
	if (pf[1].revents && r->ctl >= 0)
		session_from_init(r);
	for (int i = 0; i < SBX_SESSION_MAX_CLIENTS; i++)
		if (pf[2 + i].revents && sess.c[i].fd >= 0)
			session_from_client(r, &sess.c[i]);
	arena_release(mark);
	if (sess.idle_s > 0 && sess.idle_since && now_ms() - sess.idle_since > sess.idle_s * 1000)
		kill(r->inner, SIGKILL);	/* idle: the session ends */
}

/* The poll timeout the idle clock needs (ms), or -1. */
static int
session_timeout(void)
{
	int64_t left;

	if (sess.on && (sess.ntrash || (sess.want_spare && !sess.spare))) {
		left = sess.tidy_at - now_ms();	/* session_tidy has work */
		return left > 0 ? (int)(left < SBX_SESSION_TIDY_DEFER_MS ? left : SBX_SESSION_TIDY_DEFER_MS) : 0;
	}
	if (!sess.on || sess.idle_s <= 0 || !sess.idle_since)
		return -1;
	left = sess.idle_since + sess.idle_s * 1000 - now_ms();
	return left > 0 ? (int)(left < INT_MAX ? left : INT_MAX) : 0;
}

/* The audit's report as the session ends, for the next `sbx exec` or run
 * to show (audit_notice_show): the session's log goes with it, and the
 * person may not be the one who stops it (an agent's hook). Appended to
 * sessions/audit-notices in the runtime root, which only this uid can
 * write. */
static void
session_audit_notice(void)
{
	struct buf b = { 0 };
	char when[32];
	time_t now = time(NULL);
	int fd;

	if (!audit_text.n)
		return;
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&now));
	buf_printf(&b, "sbx: session %s ended at %s; its audit of the repositories made while it ran:\n", sess.name, when);
	buf_putn(&b, audit_text.p, audit_text.n);
	fd = openat(AT_FDCWD, path_join(path_dirname(sess.path), SBX_AUDIT_NOTICES),
	    O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write_all(fd, b.p, b.n) < 0)
		warnx("session: cannot keep the audit's report for the next exec: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	free(b.p);
}

/* The end: the socket goes first, so no client connects to a dying session. */
static void
session_end(void)
{
	if (!sess.on || !sess.path)
		return;
	unlink(sess.path);
	unlink(aprintf("%.*s.log", (int)(strlen(sess.path) - 5), sess.path));	/* NAME.sock -> NAME.log */
	session_audit_notice();
	for (int i = 0; i < SBX_SESSION_MAX_CLIENTS; i++)
		if (sess.c[i].fd >= 0 && !sess.c[i].id && audit_text.n)	/* `sbx session stop` shows it */
			frame_send(sess.c[i].fd, 'A', audit_text.p, audit_text.n, NULL, 0);
	for (int i = 0; i < SBX_SESSION_MAX_CLIENTS; i++)
		if (sess.c[i].fd >= 0 || sess.c[i].id) {
			if (sess.c[i].fd >= 0)
				frame_send(sess.c[i].fd, 'Z', &(uint32_t){ SBX_EXIT_FAILURE }, 4, NULL, 0);
			session_client_close(&sess.c[i]);
		}
	if (sess.spare)
		rm_tree(sess.spare);
	free(sess.spare);
	sess.spare = NULL;
	sess.want_spare = false;
	while (sess.ntrash) {
		rm_tree(sess.trash[--sess.ntrash]);
		free(sess.trash[sess.ntrash]);
	}
	if (sess.tidier >= 0) {	/* it ends when it has removed what it was sent */
		close(sess.tidier);
		sess.tidier = -1;
		while (waitpid(sess.tidier_pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
}


/* The clients: `sbx exec NAME -- CMD`, `sbx session list|stop NAME`. A
 * session is looked for under every runtime base (a policy may have moved
 * its root), in a root that is a private directory of ours, and its
 * daemon must be of our uid too (SO_PEERCRED): a socket another user
 * planted would otherwise get our command and our terminal. */
static int
session_find(const char *name, const char **path)
{
	unsigned uid = (unsigned)getuid();
	const char *places[SBX_RUNTIME_PLACES];
	bool shared[SBX_RUNTIME_PLACES];
	size_t n = runtime_places(places, shared);

	for (size_t i = 0; i < n; i++) {
		/* small, as a socket's path fits sun_path anyway */
		char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
		const char *root = places[i];
		struct stat st;
		struct ucred cr;
		socklen_t cl = sizeof(cr);
		int fd;

		if ((size_t)snprintf(sock, sizeof(sock), "%s/sessions/%s.sock", root, name) >= sizeof(sock))
			continue;
		if (lstat(root, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077))
			continue;
		if ((fd = session_connect(sock)) < 0)
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 || cr.uid != uid) {
			close(fd);
			continue;
		}
		if (path)
			*path = astrdup(sock);
		return fd;
	}
	return -1;
}

/* sbx exec NAME [--] CMD ARGS...: the command in the session, with this
 * process's stdin, stdout, stderr, environment and directory; signals
 * passed on; its status is ours, its refusals on our stderr. */
static int
session_exec_main(int argc, char **argv)
{
	static const int passed[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT, SIGTSTP };
	char cwd[PATH_MAX];
	struct exec_req e = { 0 };
	struct buf body = { 0 }, b;
	const int fds[3] = { 0, 1, 2 };
	const char *sock;
	sigset_t set, old;
	int fd, sfd, first = 3;

	if (argc < 4 || (strcmp(argv[3], "--") == 0 && argc < 5))
		die_hint("sbx exec NAME -- COMMAND [ARGS...]", "exec: no session name or no command");
	if (!session_name_ok(argv[2]))
		die("exec: \"%s\" is not a session name (letters, digits, '.', '_', '-')", argv[2]);
	if (strcmp(argv[3], "--") == 0)
		first = 4;
	if (!getcwd(cwd, sizeof(cwd)))
		die("exec: cannot find the current directory: %s; the command did not run", strerror(errno));
	e.argv = argv + first;
	e.envp = environ;
	e.cwd = cwd;
	exec_req_encode(&e, &body);
	sigemptyset(&set);
	for (size_t i = 0; i < LEN(passed); i++)
		sigaddset(&set, passed[i]);
	sigprocmask(SIG_BLOCK, &set, &old);
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0)
		die("exec: signalfd: %s; the command did not run", strerror(errno));
	/* the request is ready before we connect: the daemon, woken by the
	 * connection, finds it there rather than sleeping again until it comes */
	if ((fd = session_find(argv[2], &sock)) < 0)
		die_hint("sbx session start --name NAME starts one; sbx session list shows them",
		    "exec: no session %s is running; the command did not run", argv[2]);
	audit_notice_show(path_dirname(sock));	/* what an ended session's audit did (9b) */
	if (frame_send(fd, 'E', body.p, body.n, fds, 3) < 0)
		die("exec: cannot reach session %s: %s; the command did not run", argv[2], strerror(errno));
	b = body;	/* the answer reuses the request's buffer: no page touched anew */
	for (;;) {
		struct pollfd pfd[2] = { { fd, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		struct signalfd_siginfo si;
		int type, nfd;
		uint32_t status;

		if (poll(pfd, 2, -1) < 0)
			continue;
		if ((pfd[1].revents & POLLIN) && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			frame_send(fd, 'K', (uint32_t[2]){ 0, si.ssi_signo }, 8, NULL, 0);
		if (!pfd[0].revents)
			continue;
		type = frame_recv(fd, &b, NULL, 0, &nfd);
		if (type == 'S')
			continue;
		if (type != 'Z' || b.n < 4) {
			warnx("exec: session %s ended before the command did", argv[2]);
			free(b.p);
			return SBX_EXIT_FAILURE;
		}
		memcpy(&status, b.p, 4);
		if (b.n > 4)
			(void)write_all(2, b.p + 4, b.n - 4);
		free(b.p);
		return (int)(status & 0xff);
	}
}

/* sbx session list: each live session's line; sbx session stop NAME. */
static int
session_list_main(void)
{
	struct buf b = { 0 };
	const char *places[SBX_RUNTIME_PLACES];
	bool shared[SBX_RUNTIME_PLACES];
	size_t np = runtime_places(places, shared);

	for (size_t i = 0; i < np; i++) {
		const char *dir = path_join(places[i], "sessions");
		struct dir_stream *d;
		struct dir_entry de;

		if (!(d = dir_open_fd(openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC))))
			continue;
		while (dir_next(d, &de) == 1) {
			size_t n = strlen(de.name);
			char *name;
			int fd, nfd;

			if (n < 6 || strcmp(de.name + n - 5, ".sock") != 0)
				continue;
			name = astrndup(de.name, n - 5);
			if (!session_name_ok(name))
				continue;
			if ((fd = session_find(name, NULL)) < 0) {
				/* a session that died (SIGKILL, a reboot): its files go */
				int probe = session_connect(path_join(dir, de.name));

				if (probe >= 0)
					close(probe);
				else if (errno == ECONNREFUSED) {
					unlinkat(dir_fd(d), de.name, 0);
					unlinkat(dir_fd(d), aprintf("%s.log", name), 0);
				}
				continue;
			}
			if (frame_send(fd, 'P', NULL, 0, NULL, 0) == 0 && frame_recv(fd, &b, NULL, 0, &nfd) == 'P')
				printf("%s\n", b.p);
			close(fd);
		}
		dir_close(d);
	}
	free(b.p);
	return 0;
}

static int
session_stop_main(const char *name)
{
	int fd, nfd, type;
	struct buf b = { 0 };

	if (!session_name_ok(name) || (fd = session_find(name, NULL)) < 0)
		die("session stop: no session %s is running", name);
	if (frame_send(fd, 'Q', NULL, 0, NULL, 0) < 0)
		die("session stop: cannot reach %s: %s", name, strerror(errno));
	/* the daemon closes every client as it ends, after the audit's report */
	while ((type = frame_recv(fd, &b, NULL, 0, &nfd)) >= 0)
		if (type == 'A')
			(void)write_all(2, b.p, b.n);
	free(b.p);
	close(fd);
	return 0;
}

/* `sbx session start [OPTIONS]`: the options a run takes (a policy, -v,
 * directives), plus --name NAME and --idle=SECONDS (0: never); turned into
 * the run's argv with a command of the session's own. Returns the argv
 * main goes on with. */
static char **
session_start_args(int argc, char **argv, int *nargc)
{
	struct vec out = { 0 };

	vec_push(&out, argv[0]);
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		long n;
		const char *why;

		if (strcmp(a, "--name") == 0 || strcmp(a, "--idle") == 0) {
			if (i + 1 >= argc)
				die("session start: %s needs a value", a);
			v = argv[++i];
		} else if (strncmp(a, "--name=", 7) == 0 || strncmp(a, "--idle=", 7) == 0) {
			v = a + 7;
		}
		if (!v) {
			if (strcmp(a, "--") == 0)
				die("session start: a session runs no command of its own; use sbx exec NAME -- COMMAND");
			vec_push(&out, (void *)a);
			continue;
		}
		if (strncmp(a, "--name", 6) == 0) {
			if (!session_name_ok(v))
				die("session start: \"%s\" is not a session name (letters, digits, '.', '_', '-')", v);
			sess.name = v;
		} else if (parse_int(v, 0, 86400 * 365, &n, &why) < 0) {
			die("session start: --idle=%s: %s", v, why);
		} else {
			sess.idle_s = n;
		}
	}
	if (!sess.name)
		sess.name = aprintf("s%d", (int)getpid());
	sess.on = true;
	vec_push(&out, "--");
	vec_push(&out, "sbx-session");
	*nargc = (int)out.n;
	vec_push(&out, NULL);
	return (char **)out.v;
}


/* Read fd to its end, at most max bytes. Returns 0, or -1. */
static int
read_fd_all(int fd, size_t max, struct buf *out)
{
	for (;;) {
		ssize_t r;

		buf_grow(out, 65536);
		r = read(fd, out->p + out->n, out->cap - out->n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		out->n += (size_t)r;
		if (out->n > max)
			return -1;
	}
	out->p[out->n] = '\0';
	return 0;
}

/* --print-settings: the hooks to install, for Claude Code's settings.json
 * (~/.claude/settings.json, or the project's .claude/settings.json) or
 * Codex's hooks.json, with this sbx's path and the options given; --ask
 * goes to the hook that answers (pre-tool-use), where it means something.
 * Pure. */
static void
hook_settings(struct buf *b, const char *agent, const char *self, char **opts, int nopt, bool ask)
{
	static const struct { const char *event, *matcher, *arg; bool answers; } hooks[] = {
		{ "SessionStart", NULL, "session-start", false },
		{ "PreToolUse", "Bash", "pre-tool-use", true },
		{ "SessionEnd", NULL, "session-end", false },
	};

	buf_puts(b, "{\n  \"hooks\": {\n");
	for (size_t i = 0; i < LEN(hooks); i++) {
		struct buf cmd = { 0 };

		buf_put_shell_quoted(&cmd, self);
		buf_printf(&cmd, " hook %s %s", agent, hooks[i].arg);
		if (ask && hooks[i].answers)
			buf_puts(&cmd, " --ask");
		for (int k = 0; k < nopt; k++) {
			buf_putc(&cmd, ' ');
			buf_put_shell_quoted(&cmd, opts[k]);
		}
		buf_putc(&cmd, '\0');
		buf_printf(b, "    \"%s\": [{%s%s%s\"hooks\": [{\"type\": \"command\", \"command\": ", hooks[i].event,
		    hooks[i].matcher ? "\"matcher\": \"" : "", hooks[i].matcher ? hooks[i].matcher : "",
		    hooks[i].matcher ? "\", " : "");
		buf_put_json_string(b, cmd.p);
		buf_printf(b, "}]}]%s\n", i + 1 < LEN(hooks) ? "," : "");
		free(cmd.p);
	}
	buf_puts(b, "  }\n}\n");
}

/* Agent hooks (issue 16 §4): `sbx hook claude|codex EVENT [OPTIONS]` is what
 * Claude Code's and Codex's hooks run. They read the hook's JSON on stdin
 * (the strict reader, 3.5) and answer on stdout:
 *   session-start  start the session of the agent's session id
 *                  ("claude-ID" / "codex-ID", the id's unsafe bytes hashed);
 *   pre-tool-use   a Bash call's command becomes
 *                  `SBX exec NAME -- bash -c 'COMMAND'` (updatedInput, every
 *                  other field of tool_input kept), the session started if
 *                  none answers; permissionDecision "allow" (--ask: "ask");
 *   session-end    stop it.
 * FAIL CLOSED: a pre-tool-use that cannot parse its input or reach a
 * session answers permissionDecision "deny" with the reason, so the
 * command never runs outside the sandbox. OPTIONS are session start's
 * (-c POLICY, directives, --idle=). */

/* A JSON value printed back (updatedInput keeps the agent's fields). */
static void
json_print(struct buf *b, const struct jval *v)
{
	switch (v->t) {
	case J_NULL: buf_puts(b, "null"); break;
	case J_BOOL: buf_puts(b, v->b ? "true" : "false"); break;
	case J_NUM:
		if (v->integral && v->num >= -9007199254740992.0 && v->num <= 9007199254740992.0)
			buf_printf(b, "%.0f", v->num);
		else
			buf_printf(b, "%.17g", v->num);
		break;
	case J_STR: buf_put_json_string(b, v->s); break;
	case J_ARR:
	case J_OBJ:
		buf_putc(b, v->t == J_ARR ? '[' : '{');
		for (size_t i = 0; i < v->n; i++) {
			if (i)
				buf_putc(b, ',');
			if (v->t == J_OBJ) {
				buf_put_json_string(b, v->keys[i]);
				buf_putc(b, ':');
			}
			json_print(b, v->items[i]);
		}
		buf_putc(b, v->t == J_ARR ? ']' : '}');
		break;
	}
}

static const struct jval *
json_member(const struct jval *o, const char *key, enum jtype t)
{
	for (size_t i = 0; o && o->t == J_OBJ && i < o->n; i++)
		if (strcmp(o->keys[i], key) == 0)
			return o->items[i]->t == t ? o->items[i] : NULL;
	return NULL;
}

/* The session of an agent's session id: AGENT-ID when the id is made of
 * name bytes and short, else AGENT- and a hash of it. Pure. */
static const char *
hook_session_name(const char *agent, const char *id)
{
	size_t n = strlen(id);

	if (n && n <= SBX_SESSION_NAME_MAX - 8 && strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n)
		return aprintf("%s-%s", agent, id);
	return aprintf("%s-%016llx", agent, (unsigned long long)str_hash(id));
}

/* The rewritten command: sbx exec NAME -- bash -c 'COMMAND'. Pure. */
static char *
hook_rewrite(const char *self, const char *name, const char *command)
{
	struct buf b = { 0 };

	buf_put_shell_quoted(&b, self);
	buf_puts(&b, " exec ");
	buf_put_shell_quoted(&b, name);
	buf_puts(&b, " -- bash -c ");
	buf_put_shell_quoted(&b, command);
	buf_putc(&b, '\0');
	return b.p;
}

/* The pre-tool-use answer: allow/ask with updatedInput, or deny with why. */
static void
hook_answer(struct buf *out, const char *decision, const char *why, const struct jval *input, const char *command)
{
	buf_puts(out, "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":");
	buf_put_json_string(out, decision);
	buf_puts(out, ",\"permissionDecisionReason\":");
	buf_put_json_string(out, why);
	if (input) {
		buf_puts(out, ",\"updatedInput\":{");
		for (size_t i = 0, k = 0; i < input->n; i++) {
			if (k++)
				buf_putc(out, ',');
			buf_put_json_string(out, input->keys[i]);
			buf_putc(out, ':');
			if (strcmp(input->keys[i], "command") == 0)
				buf_put_json_string(out, command);
			else
				json_print(out, input->items[i]);
		}
		buf_putc(out, '}');
	}
	buf_puts(out, "}}\n");
}

/* Start session name in dir with the hook's options: this sbx, as
 * `sbx session start OPTIONS --name NAME`. Returns 0 when it answers. */
static int
hook_start_session(const char *self, const char *name, const char *dir, int argc, char **argv, const char **why)
{
	struct vec av = { 0 };
	int status, null;
	pid_t pid;

	vec_push(&av, (void *)self);
	vec_push(&av, "session");
	vec_push(&av, "start");
	for (int i = 0; i < argc; i++)
		vec_push(&av, argv[i]);
	vec_push(&av, "--name");
	vec_push(&av, (void *)name);
	vec_push(&av, NULL);
	if ((pid = fork()) < 0) {
		*why = "cannot fork";
		return -1;
	}
	if (pid == 0) {
		if (chdir(dir) < 0)
			_exit(SBX_EXIT_FAILURE);
		if ((null = openat(AT_FDCWD, "/dev/null", O_RDWR)) >= 0)
			dup2(null, 1);	/* the hook's stdout is its answer: the name must not land in it */
		execv(self, (char **)av.v);
		_exit(SBX_EXIT_FAILURE);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			break;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		*why = "sbx session start failed (its message is on the hook's stderr)";
		return -1;
	}
	return 0;
}

static int
hook_main(int argc, char **argv)
{
	const char *agent = argc > 2 ? argv[2] : "", *event = argc > 3 ? argv[3] : "", *why = NULL, *name;
	char self[PATH_MAX];
	struct buf in = { 0 }, out = { 0 };
	struct jval *v = NULL;
	struct err e = { 0 };
	const struct jval *sid, *cwd, *tool, *input, *command;
	bool ask = false;
	int nopt = 0;
	char **opts = amalloc((size_t)(argc + 1) * sizeof(char *));

	if (strcmp(agent, "claude") != 0 && strcmp(agent, "codex") != 0)
		die_hint("sbx hook claude|codex session-start|pre-tool-use|session-end [-c POLICY]",
		    "hook: the agent is claude or codex");
	for (int i = 4; i < argc; i++)
		if (strcmp(argv[i], "--ask") == 0)
			ask = true;
		else
			opts[nopt++] = argv[i];
	if (!plat_self_exe(self, sizeof(self)))
		die("hook: cannot find my own binary: %s", strerror(errno));
	if (strcmp(event, "--print-settings") == 0) {
		hook_settings(&out, agent, self, opts, nopt, ask);
		return write_all(1, out.p, out.n) < 0 ? 1 : 0;
	}
	if (read_fd_all(0, SBX_FRAME_MAX_BYTES, &in) < 0)
		why = "cannot read the hook's input";
	else if (json_parse(in.p, in.n, "the hook's input", &v, &e) < 0)
		why = aprintf("the hook's input is not JSON: %s", e.msg);
	sid = json_member(v, "session_id", J_STR);
	cwd = json_member(v, "cwd", J_STR);
	if (!why && (!sid || !cwd || cwd->s[0] != '/'))
		why = "the hook's input has no session_id, or no absolute cwd";
	name = sid ? hook_session_name(agent, sid->s) : "";
	if (strcmp(event, "session-start") == 0) {
		if (why || (session_find(name, NULL) < 0 && hook_start_session(self, name, cwd->s, nopt, opts, &why) < 0)) {
			warnx("hook: %s", why);
			return 1;	/* not blocking: pre-tool-use fails closed when it finds no session */
		}
		return 0;
	}
	if (strcmp(event, "session-end") == 0) {
		int fd = why ? -1 : session_find(name, NULL), nfd, type;

		if (fd >= 0 && frame_send(fd, 'Q', NULL, 0, NULL, 0) == 0)
			while ((type = frame_recv(fd, &in, NULL, 0, &nfd)) >= 0)
				if (type == 'A')	/* the audit's report: also kept for the next exec */
					(void)write_all(2, in.p, in.n);
		return 0;
	}
	if (strcmp(event, "pre-tool-use") != 0)
		die_hint("sbx hook AGENT session-start|pre-tool-use|session-end", "hook: unknown event \"%s\"", event);
	tool = json_member(v, "tool_name", J_STR);
	input = json_member(v, "tool_input", J_OBJ);
	if (!why && tool && strcmp(tool->s, "Bash") != 0)
		return 0;	/* not a shell command: no opinion */
	command = json_member(input, "command", J_STR);
	if (!why && (!tool || !command))
		why = "a Bash call without tool_input.command";
	if (!why) {
		int fd = session_find(name, NULL);

		if (fd >= 0)
			close(fd);
		else
			hook_start_session(self, name, cwd->s, nopt, opts, &why);
	}
	if (why) {
		hook_answer(&out, "deny", aprintf("sbx: %s; the command was not run (it would have run outside the "
		    "sandbox)", why), NULL, NULL);
	} else {
		hook_answer(&out, ask ? "ask" : "allow", aprintf("runs in the sbx sandbox session %s", name), input,
		    hook_rewrite(self, name, command->s));
	}
	return write_all(1, out.p, out.n) < 0 ? 1 : 0;
}

/* The session subcommands (section 1's plat_session_main): returns an
 * exit status, or -1 with *argv and *argc rewritten for a start, which is
 * a run. */
static int
plat_session_main(int *argc, char ***argv)
{
	char **v = *argv;

	if (*argc > 1 && strcmp(v[1], "exec") == 0)
		return session_exec_main(*argc, v);
	if (*argc > 1 && strcmp(v[1], "hook") == 0)
		return hook_main(*argc, v);
	if (*argc < 2 || strcmp(v[1], "session") != 0)
		return -1;
	if (*argc > 2 && strcmp(v[2], "start") == 0) {
		*argv = session_start_args(*argc, v, argc);
		/* before anything is planned: the run's directory is named by
		 * the daemon's pid, which other runs check to tell a live run
		 * from one to clean up after */
		session_daemonize();
		return -1;
	}
	if (*argc == 3 && strcmp(v[2], "list") == 0)
		return session_list_main();
	if (*argc == 4 && strcmp(v[2], "stop") == 0)
		return session_stop_main(v[3]);
	die_hint("sbx session start [-c POLICY] [--name NAME] [--idle=SECONDS] | list | stop NAME",
	    "session: unknown subcommand");
}

#endif /* SBX_LINUX */

/* ====================================================================
 * 11. MACOS RUNNER (Seatbelt)
 * ====================================================================
 *
 * macOS has no namespaces to build: the boundary is the Seatbelt profile
 * (6d), which `sandbox-exec -p PROFILE -- COMMAND` applies to itself
 * before it execs the command. The process tree:
 *
 *   sbx                 the policy, the plan, the profile; listens on
 *     |                 127.0.0.1 (two ephemeral ports), reads the log,
 *     |                 passes signals on, exits with the command's status
 *     |- log stream     the unified log, on this run's tag only (11b)
 *     |- proxy          forked on the first connection (section 7),
 *     |                 asks every client for this run's credential
 *     '- sandbox-exec   applies the profile, then execs the command
 *
 * Differences from Linux that the code below carries: the proxy's ports
 * are on this machine's loopback, where every local process can reach
 * them, hence the credential (7.1, srt does the same); the profile allows
 * outbound connections to those two ports and nothing else; violations
 * come from the kernel's own log, not from an observer (11b). A failure to
 * build any of it exits 125 with the command not run.
 *
 * Built on macOS, and on Linux with -DSBX_FORCE_MACOS (`make macos-sim`:
 * sbx-macsim): there `sandbox-exec` and `log` are found in PATH, where
 * the tests put stand-ins (tests/macsim/), and the platform interface's
 * Linux answers are used; everything else is the code a Mac runs. */

#if SBX_MACOS

/* ---- 11a. The platform interface on macOS (section 1) ----------------- */

/* fcntl() just after the call that makes the descriptor: as good as
 * Linux's flags for the proxy, which never forks or execs, so no child
 * can inherit one in between. fd, made close-on-exec and non-blocking;
 * -1 (fd closed) if it cannot be. */
static int
px_fd_cloexec_nonblock(int fd)
{
	if (fd < 0)
		return -1;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
px_socket_cloexec_nonblock(int family)
{
	return px_fd_cloexec_nonblock(socket(family, SOCK_STREAM, 0));
}

static int
px_accept_cloexec_nonblock(int lfd)
{
	return px_fd_cloexec_nonblock(accept(lfd, NULL, NULL));
}

static int
px_pipe_cloexec_nonblock(int p[2])
{
	if (pipe(p) < 0)
		return -1;
	if (px_fd_cloexec_nonblock(p[0]) < 0) {
		close(p[1]);
		return -1;
	}
	if (px_fd_cloexec_nonblock(p[1]) < 0) {
		close(p[0]);
		return -1;
	}
	return 0;
}

/* What is portable of the lockdown: no core file (one would hold whatever
 * the proxy relayed). XXX a Seatbelt profile for the proxy itself (no
 * exec, no writes, reads limited to the resolver's files, through
 * sandbox_init) is not built: it cannot be tried here, and a wrong one
 * would refuse every connection of every run (README, "macOS"). */
static void
px_lockdown(void)
{
	struct rlimit rl = { 0, 0 };

	if (setrlimit(RLIMIT_CORE, &rl) < 0) {
		warnx("proxy: cannot turn core files off: %s", strerror(errno));
		_exit(SBX_EXIT_FAILURE);
	}
	note("proxy: on macOS only core files are off (no Seatbelt profile of its own)");
}

/* No memfd: a file made in TMPDIR (or /tmp) and unlinked at once, so
 * only the descriptor holds it. */
static int
plat_anon_file(const char *name)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s.XXXXXX", dir && *dir ? dir : "/tmp", name) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = mkstemp(path)) < 0)
		return -1;
	unlink(path);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

static int
plat_cloexec_fast(int lowest)
{
	(void)lowest;
	errno = ENOSYS;	/* no close_range: 2.4 marks them one by one */
	return -1;
}

static int
plat_helper_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return -1;	/* sandbox-exec runs the command itself: no helper inside */
}

/* Seatbelt has no mounts: placeholders are rules of the profile. */
static bool
plat_init_binds(const struct policy *p)
{
	(void)p;
	return false;
}

/* Sessions (10f) keep sbx-init serving inside the sandbox; Seatbelt has no
 * such process: not built on macOS yet, and said so. */
static int
plat_session_main(int *argc, char ***argv)
{
	if (*argc > 1 && (strcmp((*argv)[1], "exec") == 0 || strcmp((*argv)[1], "session") == 0))
		die("sbx %s: sessions are built for Linux only so far; run each command as sbx -- COMMAND", (*argv)[1]);
	return -1;
}

#ifdef __APPLE__
/* The kernel's record of the process: start time in microseconds. */
static long long
plat_proc_start_time(pid_t pid)
{
	int mib[4] = { CTL_KERN, KERN_PROC, KERN_PROC_PID, (int)pid };
	struct kinfo_proc kp;
	size_t n = sizeof(kp);

	if (sysctl(mib, 4, &kp, &n, NULL, 0) < 0 || n != sizeof(kp))
		return -1;
	return (long long)kp.kp_proc.p_starttime.tv_sec * 1000000 + kp.kp_proc.p_starttime.tv_usec;
}

/* APFS and HFS+ record every file's birth time. */
static bool
plat_file_times(int dirfd, const char *name, long long *ctime, long long *btime)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	*ctime = (long long)st.st_ctimespec.tv_sec * 1000000000LL + st.st_ctimespec.tv_nsec;
	*btime = (long long)st.st_birthtimespec.tv_sec * 1000000000LL + st.st_birthtimespec.tv_nsec;
	return true;
}

static const char *
plat_self_exe(char *buf, size_t n)
{
	char raw[PATH_MAX];
	uint32_t size = sizeof(raw);

	(void)n;	/* realpath writes at most PATH_MAX: the callers' buffers are that */
	if (_NSGetExecutablePath(raw, &size) != 0)
		return NULL;
	return realpath(raw, buf);
}

/* The system's own, at fixed paths: SIP keeps /usr/bin unwritable, and no
 * PATH entry can stand in for them. */
static const char *
mac_tool(const char *name)
{
	const char *path = aprintf("/usr/bin/%s", name);

	return access(path, X_OK) == 0 ? path : NULL;
}

#else	/* the simulation (SBX_FORCE_MACOS on Linux): Linux's answers */

static long long
plat_proc_start_time(pid_t pid)
{
	struct buf b = { 0 };
	long long t = read_file(aprintf("/proc/%d/stat", (int)pid), 4096, &b) == 0 ? proc_stat_starttime(b.p) : -1;

	free(b.p);
	return t;
}

static bool
plat_file_times(int dirfd, const char *name, long long *ctime, long long *btime)
{
	struct stat st;

	*btime = -1;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	*ctime = (long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
	return true;
}

static const char *
plat_self_exe(char *buf, size_t n)
{
	(void)n;
	return realpath("/proc/self/exe", buf);
}

/* The tests' stand-ins, first in PATH (tests/macsim/). */
static const char *
mac_tool(const char *name)
{
	return find_in_path(name);
}
#endif	/* __APPLE__ */

/* ---- 11b. The log monitor: the kernel's refusals, from the unified log --
 *
 * `log stream` with srt's predicate, on this run's suffix: only events
 * whose message ends with it, which the profile's (deny default (with
 * message TAG)) puts on every refusal of this run and of no other. Its
 * output is parsed by sblog (8.2) into the store. It starts before the
 * command (sbx waits for its first line, the predicate it prints), and
 * after the command it is read until it has been quiet for a moment: the
 * log delivers the kernel's lines a little after the fact. */

#define SBX_LOG_START_MS	2000	/* for log stream's first line; then the command runs anyway */
#define SBX_LOG_QUIET_MS	150	/* after the command: read until this long without a line ... */
#define SBX_LOG_DRAIN_MAX_MS	1000	/* ... or this long in all */

struct mac_log {
	pid_t keeper;		/* the process that runs log stream and ends it, or -1 */
	int lifeline;		/* the keeper's: when it hangs up (sbx closed it, or died), log stream goes */
	int fd;			/* log stream's output, or -1 */
	struct sblog sl;
	struct buf part;	/* a line not yet whole */
	bool skipping;		/* within a line too long to be an event's: to its end */
	uint64_t lines;
};

/* What log stream printed since the last call: each whole line to the
 * parser, each refusal of this run to the store. Returns false at its EOF. */
static bool
mac_log_take(struct mac_log *lg, struct vstore *store)
{
	char chunk[8192];
	ssize_t n = -1;
	struct violation v;

	/* 256 KiB at most a call: in a flood the loop still sees SIGCHLD and
	 * its deadlines */
	for (int round = 0; round < 32 && (n = read(lg->fd, chunk, sizeof(chunk))) > 0; round++) {
		const char *p = chunk, *end = chunk + n;

		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = (size_t)((nl ? nl : end) - p);

			if (!lg->skipping && lg->part.n + len > SBX_SBLOG_EVENT_MAX) {
				lg->skipping = true;	/* longer than any event: dropped to its end */
				lg->part.n = 0;
				lg->sl.malformed++;
			}
			if (!lg->skipping)
				buf_putn(&lg->part, p, len);
			if (!nl)
				break;
			p = nl + 1;
			if (lg->skipping) {
				lg->skipping = false;
				continue;
			}
			lg->lines++;
			if (sblog_line(&lg->sl, lg->part.p ? lg->part.p : "", lg->part.n, &v)) {
				v.time_ms = wall_ms();
				vstore_add(store, &v);
			}
			lg->part.n = 0;
		}
	}
	if (n > 0)
		return true;	/* the budget, not the end: the rest on the next round */
	return !(n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR));
}

/* The keeper: runs log stream and ends it when sbx closes the lifeline
 * or dies (macOS has no PR_SET_PDEATHSIG, and log stream, whose predicate
 * no other process matches, would never write again, so never meet a
 * closed pipe). In a session of its own, so a ^C meant for the command
 * does not end the monitor before the command's last refusals. */
static void __attribute__((noreturn))
mac_log_keeper(const char *log, const char *suffix, int out, int life)
{
	const int keep[] = { out, life };
	struct pollfd pf = { life, POLLIN, 0 };
	pid_t lp;

	fds_close_except(keep, LEN(keep));
	setsid();
	lp = fork();
	if (lp == 0) {
		int null = openat(AT_FDCWD, "/dev/null", O_RDWR);

		close(life);
		dup2(out, 1);
		if (null >= 0) {
			dup2(null, 0);
			if (!verbose)
				dup2(null, 2);
		}
		if (out > 2)	/* its own pipe's end: held, it would never meet a reader that left */
			close(out);
		if (null > 2)
			close(null);
		execl(log, "log", "stream", "--predicate", aprintf("(eventMessage ENDSWITH \"%s\")", suffix),
		    "--style", "compact", (char *)NULL);
		_exit(127);
	}
	close(out);
	while (lp > 0 && waitpid(lp, NULL, WNOHANG) == 0)
		if (poll(&pf, 1, 250) > 0) {	/* the lifeline hung up: TERM, then KILL after 0.5 s */
			kill(lp, SIGTERM);
			for (int i = 0; i < 50 && waitpid(lp, NULL, WNOHANG) == 0; i++)
				usleep(10000);
			kill(lp, SIGKILL);
			waitpid(lp, NULL, 0);
			break;
		}
	_exit(0);
}

/* Start log stream on the run's suffix and wait for its first line. The
 * run goes on without it (the boundary does not depend on it), saying
 * that its refusals will not be reported. */
static void
mac_log_start(struct mac_log *lg, const char *log, const char *tag, const char *suffix, const sigset_t *mask)
{
	int out[2], life[2];
	int64_t until = now_ms() + SBX_LOG_START_MS;

	lg->keeper = -1;
	lg->lifeline = -1;
	lg->fd = -1;
	memset(&lg->sl, 0, sizeof(lg->sl));
	lg->sl.tag = tag;
	lg->sl.suffix = suffix;
	if (!log) {
		warnx("warning: `log` is not there: what Seatbelt refuses is not reported (the sandbox is the same)");
		return;
	}
	if (pipe(out) < 0 || pipe(life) < 0)
		die("pipe: %s", strerror(errno));
	lg->keeper = fork();
	if (lg->keeper < 0)
		die("fork: %s", strerror(errno));
	if (lg->keeper == 0) {
		for (size_t i = 0; i < LEN(forwarded_signals); i++)
			signal(forwarded_signals[i], SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_SETMASK, mask, NULL);
		close(out[0]);
		close(life[1]);
		mac_log_keeper(log, suffix, out[1], life[0]);
	}
	close(out[1]);
	close(life[0]);
	lg->fd = out[0];
	lg->lifeline = life[1];
	fcntl(lg->lifeline, F_SETFD, FD_CLOEXEC);
	fcntl(lg->fd, F_SETFD, FD_CLOEXEC);
	fcntl(lg->fd, F_SETFL, O_NONBLOCK);
	while (lg->lines == 0) {
		struct pollfd pf = { lg->fd, POLLIN, 0 };
		int64_t left = until - now_ms();

		if (left <= 0) {
			warnx("warning: log stream printed nothing in %d ms: what Seatbelt refuses early may not be "
			    "reported", SBX_LOG_START_MS);
			return;
		}
		if (poll(&pf, 1, (int)left) > 0 && !mac_log_take(lg, run_state.store)) {
			warnx("warning: log stream ended at once: what Seatbelt refuses is not reported");
			close(lg->fd);
			lg->fd = -1;
			return;
		}
	}
}

/* After the command: the lines still on their way, the last event, then
 * log stream goes. */
static void
mac_log_stop(struct mac_log *lg, struct vstore *store)
{
	struct violation v;
	int64_t end = now_ms() + SBX_LOG_DRAIN_MAX_MS;

	while (lg->fd >= 0) {
		struct pollfd pf = { lg->fd, POLLIN, 0 };
		int64_t left = end - now_ms();

		if (left <= 0 || poll(&pf, 1, left < SBX_LOG_QUIET_MS ? (int)left : SBX_LOG_QUIET_MS) <= 0 ||
		    !mac_log_take(lg, store))
			break;
	}
	if (sblog_end(&lg->sl, &v)) {
		v.time_ms = wall_ms();
		vstore_add(store, &v);
	}
	if (lg->fd >= 0)
		close(lg->fd);
	if (lg->lifeline >= 0)
		close(lg->lifeline);	/* the keeper ends log stream */
	if (lg->keeper > 0)
		while (waitpid(lg->keeper, NULL, 0) < 0 && errno == EINTR)
			;
	if (lg->sl.noise || lg->sl.foreign || lg->sl.malformed)
		note("log: %llu lines; dropped %llu as noise (srt's list), %llu without this run's tag, %llu unparsed",
		    (unsigned long long)lg->lines, (unsigned long long)lg->sl.noise,
		    (unsigned long long)lg->sl.foreign, (unsigned long long)lg->sl.malformed);
	free(lg->part.p);
	free(lg->sl.ev.p);
}

/* ---- 11c. Running under sandbox-exec, as named steps ------------------ */

/* A run in progress: what mac_run's steps hand each other. */
struct mac_run {
	const struct policy *p;
	const struct plan *pl;
	const struct run_paths *rp;
	struct run_facts rf;		/* the caller's, with this run's proxy endpoint */
	struct vstore *store;
	const char *sandbox_exec, *log;	/* the programs (11a) */
	struct px_listener ls[2];	/* the proxy's, on 127.0.0.1, until it is forked */
	int nls;
	char token[33];			/* the proxy credential: 128 random bits, hex */
	char suffix[16];		/* the log tag's: "_" 9 random [0-9a-z] "_SBX", as srt */
	const char *tag;
	struct buf profile;
	char **envp;			/* the command's environment (mac_command_env) */
	int sigpipe[2];			/* the signal handler's: (signal, from a process) pairs */
	sigset_t mask;			/* the signal mask before, for children */
	pid_t self_pid, child, proxy;
	int report;			/* the proxy's decisions, or -1 */
	struct net_log *netlog;
	struct mac_log log_mon;
	int status;			/* sandbox-exec's, which is the command's */
};

static int mac_sigpipe_w = -1;	/* the handler's end of mac_run.sigpipe */

/* Every forwarded signal and SIGCHLD come here and wait in the pipe for
 * mac_supervise, one byte each. (Whether a process or the terminal sent
 * one cannot be told from si_code on macOS: XNU sets it to 0 for every
 * caught signal but SIGCHLD; mac_forwards decides instead.) */
static void
mac_on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	(void)!write(mac_sigpipe_w, &b, 1);
	errno = saved;
}

/* Does sig go on to the command? SIGINT and SIGQUIT come from a terminal
 * to its whole foreground process group, the command included: passed
 * on, the command would get them twice. So those go on only when sbx is
 * not in the terminal's foreground group (a kill(1), a harness's timeout);
 * the others a terminal never sends. */
static bool
mac_forwards(int sig)
{
	if (sig != SIGINT && sig != SIGQUIT)
		return true;
	for (int fd = 0; fd < 3; fd++)
		if (isatty(fd))
			return tcgetpgrp(fd) != getpgrp();
	return true;
}

/* Random bytes from the kernel. */
static void
mac_random(unsigned char *b, size_t n)
{
	int fd = openat(AT_FDCWD, "/dev/urandom", O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	while (fd >= 0 && got < n) {
		ssize_t r = read(fd, b + got, n - got);

		if (r <= 0 && errno != EINTR)
			break;
		if (r > 0)
			got += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	if (got < n)
		die("cannot read /dev/urandom: %s; the command did not run", strerror(errno));
}

/* Step: the programs. sandbox-exec must be there (or nothing runs); log
 * should be (or nothing is reported); none of them, nor sbx, may be
 * writable inside. */
static void
mac_find_programs(struct mac_run *r)
{
	char self[PATH_MAX];

	r->sandbox_exec = mac_tool("sandbox-exec");
	if (!r->sandbox_exec)
		die_hint("sbx needs macOS's own /usr/bin/sandbox-exec (it ships with every macOS release)",
		    "sandbox-exec is not there; sbx never runs a command without its sandbox");
	r->log = mac_tool("log");
	tamper_check(r->pl, "sbx's own binary", plat_self_exe(self, sizeof(self)));
	tamper_check(r->pl, "sandbox-exec", r->sandbox_exec);
	tamper_check(r->pl, "log", r->log);
}

/* A listening socket on 127.0.0.1, on a port the kernel picks. */
static int
mac_listen_loopback(int *port)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 1024) < 0 || getsockname(fd, (struct sockaddr *)&sa, &sl) < 0)
		die("cannot listen on 127.0.0.1 for the proxy: %s; the command did not run", strerror(errno));
	*port = ntohs(sa.sin_port);
	return fd;
}

/* Step: the proxy's two listeners (HTTP and SOCKS: both speak both, the
 * first byte decides), the run's credential and log suffix; the command
 * is told all three through rf.ep. */
static void
mac_listen_proxy(struct mac_run *r)
{
	static const char hex[] = "0123456789abcdef", b36[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	unsigned char rnd[16 + 9];

	for (int k = 0; k < 2; k++) {
		r->ls[k].fd = mac_listen_loopback(&r->ls[k].port);
		r->ls[k].role = LR_PROXY;
	}
	r->nls = 2;
	mac_random(rnd, sizeof(rnd));
	for (int i = 0; i < 16; i++) {
		r->token[2 * i] = hex[rnd[i] >> 4];
		r->token[2 * i + 1] = hex[rnd[i] & 15];
	}
	r->token[32] = '\0';
	r->suffix[0] = '_';
	for (int i = 0; i < 9; i++)
		r->suffix[1 + i] = b36[rnd[16 + i] % 36];	/* 256 % 36 = 4: a negligible bias, as srt's */
	memcpy(r->suffix + 10, "_SBX", 5);
	r->rf.ep.http_port = r->ls[0].port;
	r->rf.ep.socks_port = r->ls[1].port;
	r->rf.ep.user = "sbx";
	r->rf.ep.token = r->token;
	/* http-proxy-port, socks-proxy-port: the person's own proxy on this
	 * machine, reached directly (the profile allows just its port) */
	if (r->p->http_proxy_port) {
		r->rf.ep.http_port = (int)r->p->http_proxy_port;
		r->rf.ep.http_external = true;
	}
	if (r->p->socks_proxy_port) {
		r->rf.ep.socks_port = (int)r->p->socks_proxy_port;
		r->rf.ep.socks_external = true;
	}
}

/* Step: the profile (6d), with this run's ports and tag. */
static void
mac_render_profile(struct mac_run *r)
{
	struct sb_facts f;
	const char *why = NULL;

	sb_facts_collect(&f, r->rp, r->rf.cmd, r->suffix, r->rf.ep.http_port, r->rf.ep.socks_port);
	r->tag = f.tag;
	if (seatbelt_render(r->p, r->pl, &f, &r->profile, &why) < 0)
		die("cannot write the Seatbelt profile: %s; the command did not run", why);
	buf_putc(&r->profile, '\0');
	if (verbose)
		note("profile: %zu bytes, proxy on 127.0.0.1:%d (HTTP) and :%d (SOCKS), log tag %s", r->profile.n - 1,
		    r->rf.ep.http_port, r->rf.ep.socks_port, r->tag);
}

/* Step: the forwarded signals and SIGCHLD, from here on, arrive in the
 * pipe: one that comes while the run is being set up is passed on to the
 * command once it runs, never kills sbx half-way. */
static void
mac_take_signals(struct mac_run *r)
{
	struct sigaction sa;

	if (pipe(r->sigpipe) < 0)
		die("pipe: %s", strerror(errno));
	for (int k = 0; k < 2; k++) {
		fcntl(r->sigpipe[k], F_SETFD, FD_CLOEXEC);
		fcntl(r->sigpipe[k], F_SETFL, O_NONBLOCK);
	}
	mac_sigpipe_w = r->sigpipe[1];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = mac_on_signal;
	sa.sa_flags = SA_RESTART;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < LEN(forwarded_signals); i++)
		sigaction(forwarded_signals[i], &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigprocmask(SIG_SETMASK, NULL, &r->mask);
}

/* In a child: the signals as they were before sbx took them. */
static void
mac_child_signals(const struct mac_run *r)
{
	for (size_t i = 0; i < LEN(forwarded_signals); i++)
		signal(forwarded_signals[i], SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);	/* sbx ignores it; the command gets the default */
	sigprocmask(SIG_SETMASK, &r->mask, NULL);
}

/* The command's environment: the caller's, less every variable deny-env
 * names and every one sbx sets, then sbx's (run_env, as bwrap's --setenv
 * on Linux). */
static char **
mac_command_env(const struct mac_run *r)
{
	struct vec kv = { 0 }, env = { 0 };

	run_env(r->p, &r->rf, &kv);
	for (size_t i = 0; r->rf.envp && r->rf.envp[i]; i++) {
		const char *e = r->rf.envp[i], *eq = strchr(e, '=');
		bool ours = false;

		if (!eq || eq == e || env_denied(r->p, e, (size_t)(eq - e)))
			continue;
		for (size_t k = 0; k + 1 < kv.n && !ours; k += 2)
			ours = strlen(kv.v[k]) == (size_t)(eq - e) && memcmp(kv.v[k], e, (size_t)(eq - e)) == 0;
		if (!ours)
			vec_push(&env, (void *)e);
	}
	for (size_t k = 0; k + 1 < kv.n; k += 2)
		vec_push(&env, (void *)aprintf("%s=%s", (const char *)kv.v[k], (const char *)kv.v[k + 1]));
	vec_push(&env, NULL);
	return (char **)env.v;
}

/* Step: is the command there, and runnable? sandbox-exec reports neither
 * in a way sbx can tell from the command's own failure, so sbx looks
 * first, in the command's PATH, with env(1)'s statuses (127, 126) and the
 * Linux runner's words. */
static void
mac_check_command(struct mac_run *r)
{
	char *const *envp = r->envp = mac_command_env(r);
	const char *argv0 = r->rf.cmd[0], *path = NULL, *found;
	struct stat st;

	for (size_t i = 0; envp[i]; i++)
		if (strncmp(envp[i], "PATH=", 5) == 0)
			path = envp[i] + 5;
	if (strchr(argv0, '/')) {
		found = stat(argv0, &st) == 0 ? argv0 : NULL;
	} else {
		/* execvp's walk: the first that runs; one that is there but does
		 * not run makes it 126 only if none further on runs */
		char *copy = astrdup(path && *path ? path : "/usr/bin:/bin:/usr/sbin:/sbin"), *dir, *save;
		const char *blocked = NULL;
		struct stat bst;

		found = NULL;
		for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
			const char *cand = path_join(*dir ? dir : ".", argv0);

			if (stat(cand, &st) < 0 || S_ISDIR(st.st_mode))
				continue;
			if (access(cand, X_OK) == 0)
				found = cand;
			else if (!blocked)
				blocked = cand, bst = st;
		}
		if (!found && blocked)
			found = blocked, st = bst;
	}
	if (!found) {
		char hint[512];

		fprintf(stderr, "%s: %s: command not found\n", progname, argv0);
		if (cmd_line_hint(argv0, hint, sizeof(hint)))
			fprintf(stderr, "%s: hint: %s\n", progname, hint);
		exit(SBX_EXIT_NOT_FOUND);
	}
	if (S_ISDIR(st.st_mode) || access(found, X_OK) < 0) {
		fprintf(stderr, "%s: %s: %s\n", progname, argv0, strerror(S_ISDIR(st.st_mode) ? EISDIR : EACCES));
		exit(SBX_EXIT_CANNOT_RUN);
	}
}

/* Step: a signal that came while the run was being set up (the wait for
 * log stream's first line may take seconds): one that ends a run ends it
 * here, before the command starts; the others wait for it. */
static void
mac_signalled_before_start(struct mac_run *r)
{
	unsigned char sig, keep[64];
	size_t nkeep = 0;

	while (read(r->sigpipe[0], &sig, 1) == 1) {
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
			fprintf(stderr, "%s: %s before the command started; it did not run\n", progname, strsignal(sig));
			mac_log_stop(&r->log_mon, r->store);
			exit(128 + sig);
		}
		if (sig != SIGCHLD && nkeep < sizeof(keep))
			keep[nkeep++] = sig;
	}
	if (nkeep)	/* SIGUSR1, SIGUSR2: for the command, once it runs */
		(void)!write(mac_sigpipe_w, keep, nkeep);
}

/* Step: sandbox-exec -p PROFILE -- COMMAND..., as sbx's child, with the
 * environment above. It applies the profile to itself and execs the
 * command, so the child's exit status is the command's. */
static void
mac_spawn_command(struct mac_run *r)
{
	char **envp = r->envp;
	struct vec argv = { 0 };

	vec_push(&argv, "sandbox-exec");
	vec_push(&argv, "-p");
	vec_push(&argv, r->profile.p);
	vec_push(&argv, "--");
	for (size_t i = 0; r->rf.cmd[i]; i++)
		vec_push(&argv, r->rf.cmd[i]);
	vec_push(&argv, NULL);
	r->child = fork();
	if (r->child < 0)
		die("fork: %s", strerror(errno));
	if (r->child == 0) {
		mac_child_signals(r);
		execve(r->sandbox_exec, (char **)argv.v, envp);
		fprintf(stderr, "%s: cannot run %s: %s%s; the command did not run\n", progname, r->sandbox_exec,
		    strerror(errno), errno == E2BIG ? " (the profile and the command together are too long)" : "");
		_exit(SBX_EXIT_FAILURE);
	}
}

/* The proxy process, forked on the first connection (as on Linux, 10c):
 * the listeners are its from then on, and every client must give the
 * credential. */
static void
mac_spawn_proxy(struct mac_run *r)
{
	int pair[2] = { -1, -1 }, sz = 256 << 10, err = 0;

	if (socketpair(AF_UNIX, SBX_RECORD_SOCKET, 0, pair) < 0)
		err = errno;
	else if ((r->proxy = fork()) < 0)
		err = errno;
	if (!err && r->proxy == 0) {
		int keep[3] = { r->ls[0].fd, r->ls[1].fd, pair[1] };

		if (getppid() != r->self_pid)
			_exit(0);
		fds_close_except(keep, LEN(keep));	/* the log, the signal pipe, the report's sink stay sbx's */
		mac_child_signals(r);
		signal(SIGPIPE, SIG_IGN);
		px_main(live_policy(r->p), r->ls, r->nls, -1, pair[1], r->token);	/* the last applied (9d) */
	}
	if (pair[1] >= 0)
		close(pair[1]);
	if (err) {
		warnx("cannot start the proxy: %s; the command's network attempts are refused without a reason",
		    strerror(err));
		if (pair[0] >= 0)
			close(pair[0]);
	} else {
		fcntl(pair[0], F_SETFD, FD_CLOEXEC);
		(void)setsockopt(pair[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));	/* macOS's default: 4 KiB */
		r->report = pair[0];
	}
	while (r->nls > 0)	/* the proxy's now, or closed: refused, never left open */
		close(r->ls[--r->nls].fd);
}

/* Step: until the command exits: signals passed on, the proxy forked on
 * the first connection, its decisions, the log's lines and the control
 * fd's updates taken. */
static void
mac_supervise(struct mac_run *r)
{
	bool done = false;

	while (!done) {
		struct pollfd pf[6] = { { r->sigpipe[0], POLLIN, 0 }, { r->report, POLLIN, 0 },
			{ r->log_mon.fd, POLLIN, 0 }, { live.fd, POLLIN, 0 } };	/* -1: poll skips it */
		nfds_t n = 4;
		unsigned char sig;

		for (int i = 0; r->proxy < 0 && i < r->nls; i++) {
			pf[n].fd = r->ls[i].fd;
			pf[n].events = POLLIN;
			pf[n++].revents = 0;
		}
		if (poll(pf, n, live_timeout()) < 0)
			continue;
		/* the control fd first: a line that waits as the first
		 * connection comes is what the proxy starts with; one that failed
		 * before its first line stops the command (9d) */
		if (pf[3].revents && live_read(r->report) < 0)
			kill(r->child, SIGTERM);
		if (live_kill_due())
			kill(r->child, SIGKILL);
		for (nfds_t i = 4; i < n; i++)
			if (pf[i].revents) {
				mac_spawn_proxy(r);
				break;
			}
		if (pf[1].revents) {
			net_log_drain(r->netlog, r->report);
			if (pf[1].revents & (POLLHUP | POLLERR)) {
				close(r->report);	/* the proxy died: keep no fd that polls ready forever */
				r->report = -1;
			}
		}
		if (pf[2].revents && !mac_log_take(&r->log_mon, r->store)) {
			close(r->log_mon.fd);	/* log stream has gone: keep no fd that polls ready forever */
			r->log_mon.fd = -1;
		}
		while (read(r->sigpipe[0], &sig, 1) == 1) {
			if (sig == SIGCHLD) {
				pid_t w;

				while ((w = waitpid(r->child, &r->status, WNOHANG)) < 0 && errno == EINTR)
					;
				done |= w == r->child;
			} else if (mac_forwards(sig)) {
				kill(r->child, sig);
			}
		}
	}
}

/* Step, after the command: the log's last lines, the proxy's last
 * decisions, and both go. */
static void
mac_finish(struct mac_run *r)
{
	mac_log_stop(&r->log_mon, r->store);
	if (r->report >= 0)
		net_log_finish(r->netlog, r->report);
	if (r->proxy > 0) {
		kill(r->proxy, SIGKILL);
		while (waitpid(r->proxy, NULL, 0) < 0 && errno == EINTR)
			;
	}
	while (r->nls > 0)
		close(r->ls[--r->nls].fd);
	net_log_summary(r->netlog);
	for (size_t i = 0; i < LEN(forwarded_signals); i++)
		signal(forwarded_signals[i], SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
}

static int
plat_run(const struct policy *p, const struct plan *pl, const struct run_paths *rp, const struct run_facts *rf,
    struct vstore *store)
{
	struct mac_run r = { .p = p, .pl = pl, .rp = rp, .rf = *rf, .store = store, .self_pid = getpid(), .child = -1,
		.proxy = -1, .report = -1, .netlog = net_log_new() };

	r.netlog->store = store;
	r.netlog->mitm_socket = p->mitm_socket;
	mac_find_programs(&r);
	mac_listen_proxy(&r);
	mac_render_profile(&r);
	mac_take_signals(&r);
	run_prepare(rp, pl, false, false);	/* the run's directory and TMPDIR (9a) */
	mac_check_command(&r);		/* 127 or 126 here, before anything else starts */
	env_scrub(p);			/* the command's environment is made: no child holds a denied value */
	mac_log_start(&r.log_mon, r.log, r.tag, r.suffix, &r.mask);
	mac_signalled_before_start(&r);
	mac_spawn_command(&r);
	mac_supervise(&r);
	mac_finish(&r);
	if (WIFSIGNALED(r.status))
		return 128 + WTERMSIG(r.status);
	return WEXITSTATUS(r.status);
}

/* The pure parts only the Linux runner uses (the bwrap argv's blob, the
 * messages to and from its inner helper, the observer's events), and the
 * placeholder sbx makes when sbx-init asks (ph_recover): compiled and
 * unit-tested here too, named once so the compiler does not warn. */
static void __attribute__((unused))
mac_linux_only_parts(void)
{
	(void)bw_args_blob;
	(void)ctl_encode;
	(void)ctl_decode;
	(void)inner_hands_fds;
	(void)handed_encode;
	(void)handed_decode;
	(void)obs_event_encode;
	(void)obs_event_decode;
	(void)obs_judge;
	(void)attrib_start;
	(void)attrib_event;
	(void)audit_notice_show;
	(void)send_fds;
	(void)frame_send;
	(void)frame_recv;
	(void)exec_req_encode;
	(void)exec_req_decode;
	(void)rebind_ask_encode;
	(void)rebind_ask_decode;
	(void)rebind_answer_encode;
	(void)rebind_answer_decode;
	(void)ph_recover;
}

/* ---- 11d. --check on macOS ---------------------------------------------- */

/* sandbox-exec there and applying a profile (a trivial one, to a trivial
 * program), log there, the proxy able to listen on 127.0.0.1. */
static int
plat_check(const struct policy *p)
{
	const char *se = mac_tool("sandbox-exec"), *log = mac_tool("log");
	int port, fd;

	(void)p;
	check_line(se != NULL, "sandbox-exec: %s", se ? se : "not found; sbx cannot run anything");
	if (se) {
		pid_t pid = fork();
		int status = -1;

		if (pid == 0) {
			int null = openat(AT_FDCWD, "/dev/null", O_RDWR);

			if (null >= 0) {
				dup2(null, 1);
				dup2(null, 2);
			}
			execl(se, "sandbox-exec", "-p", "(version 1)(allow default)", "--", "/usr/bin/true", (char *)NULL);
			_exit(127);
		}
		while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		check_line(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "sandbox-exec applies a profile (exit status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	check_line(true, "log: %s", log ? aprintf("%s, for the refusals' report", log) :
	    "not found: the sandbox is the same, but what it refuses is not reported");
	fd = mac_listen_loopback(&port);
	close(fd);
	check_line(true, "the proxy can listen on 127.0.0.1 (port %d was free)", port);
	return check_failures ? 1 : 0;
}

#endif /* SBX_MACOS */

/* ====================================================================
 * 12. CLI AND MAIN: option table, usage, --print modes, exit status
 * ==================================================================== */

enum opt_id { OPT_CONFIG, OPT_VERBOSE, OPT_PRINT, OPT_ARCH, OPT_EXPLAIN, OPT_CHECK, OPT_HELP, OPT_VERSION,
	OPT_VIOLATIONS, OPT_VIOLATIONS_FD, OPT_CONTROL_FD };

struct cli_option {
	const char *name;	/* --name */
	char short_name;	/* -x, or 0 */
	bool takes_arg;
	enum opt_id id;
	const char *metavar, *help;
};

/* The only list of sbx's own options; every directive is an option too. */
static const struct cli_option cli_options[] = {
	{ "config", 'c', true, OPT_CONFIG, "FILE",
	  "the policy: an srt settings file (JSON) or the line format; without it, the default policy" },
	{ "settings", 0, true, OPT_CONFIG, "FILE", "the same as -c FILE (srt's name for it)" },
	{ "verbose", 'v', false, OPT_VERBOSE, NULL, "show the plan's decisions (globs, scan, mounts) and the proxy's (each connection, a summary at exit) on stderr" },
	{ "print", 0, true, OPT_PRINT, "WHAT",
	  "print instead of running: policy (line format), json (srt settings), argv (the bwrap command), "
	  "seatbelt (the macOS profile), "
	  "bpf (the seccomp program), bpf-proxy (the proxy's own), bpf-observer (the write observer's), man" },
	{ "arch", 0, true, OPT_ARCH, "ARCH", "with --print=bpf: x86_64 or aarch64 (default: this machine's)" },
	{ "explain", 0, true, OPT_EXPLAIN, "HOST[:PORT]",
	  "say what the policy decides for a connection to HOST (port 443 by default), and why; "
	  "`--explain -- COMMAND` runs the command, then prints a hint per refusal: the policy line that would "
	  "allow it (never applied)" },
	{ "violations", 0, true, OPT_VIOLATIONS, "WHERE",
	  "what was refused, after the command: stderr (srt's <sandbox_violations> block, the default), none, "
	  "or a FILE that gets each refusal as a JSON line as it happens (moved to FILE.1 past 4 MiB)" },
	{ "violations-fd", 0, true, OPT_VIOLATIONS_FD, "N", "each refusal as a JSON line on descriptor N, as it happens" },
	{ "control-fd", 0, true, OPT_CONTROL_FD, "N",
	  "read policy updates from descriptor N >= 3 while the command runs (srt's protocol: one JSON settings "
	  "object a line); the network lists apply at once, other changes are named and ignored" },
	{ "check", 0, false, OPT_CHECK, NULL, "check that this machine can build the sandbox" },
	{ "help", 'h', false, OPT_HELP, NULL, "show this help" },
	{ "version", 'V', false, OPT_VERSION, NULL, "show the version" },
};

static const char *
directive_synopsis(const struct directive *d)
{
	return d->metavar ? aprintf("%s %s", d->name, d->metavar) : d->name;
}

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f,
	    "usage: sbx [-v] [-c POLICY] [--DIRECTIVE[=ARG]...] [--] COMMAND [ARG...]\n"
	    "       sbx [-c POLICY] --print=policy|json|argv [COMMAND...]\n"
	    "       sbx --check | --help | --version\n"
	    "\n"
	    "Runs COMMAND inside a sandbox: reads open except what the policy denies, writes\n"
	    "closed except the allowed roots, no network. Options end at the first word that\n"
	    "is not an option, so `sbx sh -c 'echo $1' x y` passes -c to sh.\n"
	    "\n"
	    "Options:\n");
	for (i = 0; i < LEN(cli_options); i++) {
		const struct cli_option *o = &cli_options[i];
		char lhs[64];

		if (o->short_name)
			snprintf(lhs, sizeof(lhs), "-%c, --%s%s%s", o->short_name, o->name, o->takes_arg ? " " : "",
			    o->takes_arg ? o->metavar : "");
		else
			snprintf(lhs, sizeof(lhs), "    --%s%s%s", o->name, o->takes_arg ? "=" : "",
			    o->takes_arg ? o->metavar : "");
		fprintf(f, "  %-22s %s\n", lhs, o->help);
	}
	fprintf(f,
	    "\n"
	    "Policy files. A file whose first non-blank byte is '{' is an srt settings file\n"
	    "(Anthropic sandbox-runtime %s), read unchanged; an unknown key is an error.\n"
	    "Otherwise it is the line format: one directive per line, # comments, an argument\n"
	    "may be \"double quoted\". Each directive is also an option: --allow-write=PATH.\n"
	    "\n"
	    "Directives:\n", SBX_SRT_VERSION);
	for (i = 0; i < LEN(directives); i++) {
		const struct directive *d = &directives[i];

		fprintf(f, "  %-32s %s\n", directive_synopsis(d), d->help);
	}
	fprintf(f,
	    "\n"
	    "Paths: ~ is $HOME, relative paths start at the current directory, dir/** is\n"
	    "what lies beneath the directory dir (not a file named dir), globs (* ? [..] **)\n"
	    "are expanded when the command starts. A mount cannot cover a file created later:\n"
	    "a deny-read of a path that does not exist yet hides nothing.\n"
	    "\n"
	    "Without -c, the default policy: reads open except ~/.ssh ~/.aws ~/.gnupg\n"
	    "~/.config/gcloud ~/.kube ~/.docker/config.json ~/.netrc ~/.git-credentials;\n"
	    "writes to the current directory and a private TMPDIR; no network. It refuses to\n"
	    "run in / or in $HOME itself. Dangerous files (.bashrc, .git/hooks, .mcp.json, ...)\n"
	    "stay read-only in every writable directory.\n"
	    "\n"
	    "Exit status: the command's; 128+N if a signal N killed it; 125 if sbx failed\n"
	    "(bad policy, no bubblewrap, the sandbox could not be built); 126 if the command\n"
	    "cannot be run; 127 if it was not found.\n"
	    "\n"
	    "Run as srt (a symlink: make install-srt-link), sbx takes srt's command line,\n"
	    "srt [-d] [-s SETTINGS] [--control-fd N] [-c STRING | COMMAND ARG...]: srt --help.\n"
	    "\n"
	    "Examples:\n"
	    "  sbx -- make test                      default policy, from a project directory\n"
	    "  sbx -c policy.example --deny-read=./secrets -- npm install\n"
	    "  sbx -c ~/.srt-settings.json --print=argv -- true\n");
}

/* The man page, from the same tables (make sbx.1). */
static void
print_man(FILE *f)
{
	size_t i;

	fprintf(f, ".TH SBX 1 \"\" \"sbx %s\" \"User Commands\"\n"
	    ".SH NAME\nsbx \\- run a command inside a filesystem and network sandbox\n"
	    ".SH SYNOPSIS\n.B sbx\n[\\fB\\-v\\fR] [\\fB\\-c\\fR \\fIpolicy\\fR] [\\fB\\-\\-\\fIdirective\\fR[=\\fIarg\\fR]...] "
	    "[\\fB\\-\\-\\fR] \\fIcommand\\fR [\\fIarg\\fR...]\n"
	    ".br\n.B sbx\n\\fB\\-\\-print\\fR=\\fBpolicy\\fR|\\fBjson\\fR|\\fBargv\\fR | \\fB\\-\\-check\\fR\n"
	    ".SH DESCRIPTION\n"
	    "\\fBsbx\\fR runs \\fIcommand\\fR under bubblewrap with the policy enforced by the mount table: "
	    "reads are open except what the policy denies, writes are closed except the allowed roots, and the "
	    "network namespace is empty. Dangerous files that run code later (shell rc files, git hooks and config, "
	    "editor and agent configuration) stay read-only in every writable directory.\n"
	    ".PP\nThe policy is an srt (Anthropic sandbox-runtime %s) settings file, read unchanged, or the line "
	    "format below. Without \\fB\\-c\\fR, the default policy hides the usual credential stores and allows "
	    "writes to the current directory.\n"
	    ".SH OPTIONS\n", SBX_VERSION, SBX_SRT_VERSION);
	for (i = 0; i < LEN(cli_options); i++) {
		const struct cli_option *o = &cli_options[i];

		fprintf(f, ".TP\n");
		if (o->short_name)
			fprintf(f, "\\fB\\-%c\\fR, ", o->short_name);
		fprintf(f, "\\fB\\-\\-%s\\fR%s%s\n%s\n", o->name, o->takes_arg ? " \\fI" : "",
		    o->takes_arg ? aprintf("%s\\fR", o->metavar) : "", o->help);
	}
	fprintf(f, ".SH POLICY DIRECTIVES\nOne directive per line; \\fB#\\fR starts a comment; an argument may "
	    "be double-quoted. Each directive is also an option, \\fB\\-\\-\\fIdirective\\fR[=\\fIarg\\fR].\n");
	for (i = 0; i < LEN(directives); i++) {
		const struct directive *d = &directives[i];

		fprintf(f, ".TP\n\\fB%s\\fR%s%s\n%s%s%s%s\n", d->name, d->metavar ? " \\fI" : "",
		    d->metavar ? aprintf("%s\\fR", d->metavar) : "", d->help, d->json ? " (srt: \\fB" : "",
		    d->json ? d->json : "", d->json ? "\\fR)" : "");
	}
	fprintf(f, ".SH EXIT STATUS\nThe command's status; 128+\\fIN\\fR when signal \\fIN\\fR killed it; 125 when "
	    "sbx itself failed (bad policy, bubblewrap missing, the sandbox could not be built); 126 when the "
	    "command could not be run; 127 when it was not found.\n"
	    ".SH SRT'S COMMAND LINE\nRun as \\fBsrt\\fR (a symlink: \\fBmake install\\-srt\\-link\\fR), sbx takes srt's "
	    "command line: \\fBsrt\\fR [\\fB\\-d\\fR] [\\fB\\-s\\fR \\fIsettings\\fR] [\\fB\\-\\-control\\-fd\\fR "
	    "\\fIn\\fR] [\\fB\\-c\\fR \\fIstring\\fR | \\fIcommand\\fR [\\fIarg\\fR...]], with ~/.srt\\-settings.json "
	    "by default and srt's rules and messages for a settings file that is missing, unreadable, empty or invalid "
	    "(exit 125). Options end at the command.\n"
	    ".SH EXAMPLES\n.nf\nsbx \\-\\- make test\nsbx \\-c policy.example \\-\\-deny\\-read=./secrets \\-\\- npm install\n"
	    "sbx \\-c ~/.srt\\-settings.json \\-\\-print=argv \\-\\- true\n.fi\n"
	    ".SH SEE ALSO\n\\fBbwrap\\fR(1)\n");
}

struct cli {
	const char *config;
	const char *violations;	/* --violations: stderr (NULL too), none, or a FILE of JSON lines */
	int violations_fd;	/* --violations-fd: JSON lines to this descriptor, or -1 */
	long control_fd;	/* --control-fd: policy updates from this descriptor (9d), or -1 */
	const char *control_fd_arg;	/* as written, for messages */
	const char *print;
	const char *arch;
	const char *explain;
	bool explain_run;	/* --explain -- COMMAND: after the run, a hint per refusal */
	bool check, help, version;
	struct vec directive_opts;	/* of struct cli_directive */
	char **cmd;
	bool srt;		/* invoked as srt: the settings by srt's rules (srt_load_settings) */
	const char *srt_settings;	/* srt's -s FILE; NULL: ~/.srt-settings.json */
};

struct cli_directive { const struct directive *d; const char *value; const char *spelled; };

/* --control-fd N: srt's check, /^\d+$/ and >= 3, and its words; a number
 * past any descriptor is kept and found unusable (main_control_fd_check). */
static void
cli_take_control_fd(struct cli *c, const char *val)
{
	size_t k = strspn(val, "0123456789");

	c->control_fd = 0;
	c->control_fd_arg = val;
	for (size_t j = 0; j < k && c->control_fd <= INT_MAX; j++)
		c->control_fd = c->control_fd * 10 + (val[j] - '0');
	if (!k || val[k] || c->control_fd < 3)
		die("--control-fd %s: must be an integer file descriptor >= 3 (0-2 are stdin, stdout and stderr).", val);
}

/* Parse sbx's own options; stops at the first non-option or after "--". */
static void
cli_parse(int argc, char **argv, struct cli *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->violations_fd = -1;
	c->control_fd = -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *eq, *val = NULL;
		const struct cli_option *o = NULL;
		const struct directive *d;
		char name[64];
		size_t j;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0')
			break;
		if (a[1] != '-') {	/* -x [ARG] */
			for (j = 0; j < LEN(cli_options); j++)
				if (cli_options[j].short_name == a[1])
					o = &cli_options[j];
			if (!o || (a[2] && !o->takes_arg))
				die_hint("sbx --help lists the options", "unknown option %s", a);
			if (o->takes_arg) {
				val = a[2] ? a + 2 : argv[++i];
				if (!val)
					die("%s needs %s", a, o->metavar);
			}
		} else {
			eq = strchr(a, '=');
			snprintf(name, sizeof(name), "%.*s", (int)(eq ? eq - a - 2 : (ptrdiff_t)strlen(a + 2)), a + 2);
			for (j = 0; j < LEN(cli_options); j++)
				if (strcmp(cli_options[j].name, name) == 0)
					o = &cli_options[j];
			if (!o) {
				struct cli_directive *cd;

				d = directive_find(name);
				if (!d || d->kind == DK_INCLUDE) {
					const char *hint = did_you_mean_directive(name);

					if (hint)
						die("unknown option --%s (did you mean --%s?)", name, hint);
					die_hint("sbx --help lists the options", "unknown option --%s", name);
				}
				if (d->metavar && !eq)
					die("--%s needs =%s", name, d->metavar);
				if (!d->metavar && eq)
					die("--%s takes no value", name);
				cd = amalloc(sizeof(*cd));
				cd->d = d;
				cd->value = eq ? eq + 1 : NULL;
				cd->spelled = a;
				vec_push(&c->directive_opts, cd);
				continue;
			}
			if (o->id == OPT_EXPLAIN && !eq && argv[i + 1] && strcmp(argv[i + 1], "--") == 0) {
				c->explain_run = true;	/* --explain -- COMMAND: run it, then the hints */
				continue;
			}
			if (o->takes_arg) {
				val = eq ? eq + 1 : argv[++i];
				if (!val)
					die("--%s needs %s", name, o->metavar);
			} else if (eq) {
				die("--%s takes no value", name);
			}
		}
		switch (o->id) {
		case OPT_CONFIG: c->config = val; break;
		case OPT_VERBOSE: verbose++; break;
		case OPT_PRINT: c->print = val; break;
		case OPT_ARCH: c->arch = val; break;
		case OPT_EXPLAIN: c->explain = val; break;
		case OPT_CHECK: c->check = true; break;
		case OPT_HELP: c->help = true; break;
		case OPT_VERSION: c->version = true; break;
		case OPT_VIOLATIONS: c->violations = val; break;
		case OPT_VIOLATIONS_FD: {
			long fd;
			const char *why;

			if (parse_int(val, 1, INT_MAX, &fd, &why) < 0 || fcntl((int)fd, F_GETFD) < 0)
				die("--violations-fd=%s: not an open descriptor", val);
			c->violations_fd = (int)fd;
			break;
		}
		case OPT_CONTROL_FD: cli_take_control_fd(c, val); break;
		}
	}
	c->cmd = argv + i;
}

/* Apply the --directive options, after the file: they add to its rules.
 * Returns 0, or -1 with e filled. */
static int
cli_directives_apply(const struct cli *c, struct policy *p, struct pol_ctx *pc, struct err *e)
{
	size_t i;

	for (i = 0; i < c->directive_opts.n; i++) {
		const struct cli_directive *cd = c->directive_opts.v[i];
		char *words[4];
		int n = 0;
		const char *why;

		if (cd->value) {
			char *copy = astrdup(cd->value);

			/* one-argument directives take the value verbatim (spaces and
			 * all); the two-argument ones split it as a policy line does */
			if (cd->d->kind == DK_DENY_DOMAIN || cd->d->kind == DK_IGNORE) {
				n = pol_split_words(copy, words, (int)LEN(words), &why);
				if (n < 0)
					return err_set(e, cd->spelled, 0, 0, "%s", why);
			} else {
				words[n++] = copy;
			}
		}
		if (pol_apply(p, pc, cd->d, words, n, cd->spelled, 0, e) < 0)
			return -1;
	}
	return 0;
}

static void
cli_apply_directives(const struct cli *c, struct policy *p, struct pol_ctx *pc)
{
	struct err e = { 0 };

	if (cli_directives_apply(c, p, pc, &e) < 0)
		die_err(&e);
}

/* The default policy's denies: the credential stores hidden. */
static void
pol_default_denies(struct policy *p, struct pol_ctx *pc)
{
	struct err e = { 0 };
	char *arg[1];

	for (size_t i = 0; i < LEN(default_deny_read); i++) {
		arg[0] = (char *)default_deny_read[i];
		if (pol_apply(p, pc, directive_find("deny-read"), arg, 1, default_policy_file, 0, &e) < 0)
			die_err(&e);
	}
}

/* The default policy: credential stores hidden, the project writable. */
static void
pol_default(struct policy *p, struct pol_ctx *pc)
{
	struct err e = { 0 };
	char *arg[1];

	pol_default_denies(p, pc);
	arg[0] = (char *)".";
	if (pol_apply(p, pc, directive_find("allow-write"), arg, 1, default_policy_file, 0, &e) < 0)
		die_err(&e);
}

/* srt's CLI, for sbx invoked as `srt` (a symlink: make install-srt-link).
 * People have srt in scripts and habits, so its grammar is taken as it is:
 *   srt [-d|--debug] [-s|--settings FILE] [--control-fd N]
 *       [-c COMMAND-STRING | COMMAND ARG...]
 * with srt's default ~/.srt-settings.json and its rules for a settings
 * file that is missing, unreadable, empty or invalid (its texts, word for
 * word). It is translated into sbx's own options and goes through
 * cli_parse like any other run. Where srt is unsafe or odd, sbx differs
 * and README's "Differences from srt" says so:
 *   - options end at the first word that is not one (or at "--"): srt's
 *     parser takes options anywhere, so in `srt sh -c 'echo "$1"' x y` the
 *     -c was srt's and the command was lost;
 *   - COMMAND ARG... is run as those words, not re-parsed by a shell: srt
 *     quotes them into a bash command line, which runs the same program
 *     except for bash's builtins (`srt exit 3`);
 *   - -c STRING with words after it is refused (srt drops the words
 *     silently), as is an option srt does not know (srt passes it on);
 *   - sbx's own failures exit 125, never srt's 1, so a script can tell a
 *     refusal from the command's status. */
#define SRT_FILE_RULES "this file's rules (its denyRead, allowRead and credential entries included)"
#define SRT_NAMED_RULES "the rules --settings asked for"

/* srt's built-in config (cli.js getDefaultConfig), for a missing default
 * file: no network, writes only where sbx always allows them. */
static const char srt_default_config[] = "{\"network\":{\"allowedDomains\":[],\"deniedDomains\":[]},"
    "\"filesystem\":{\"denyRead\":[],\"allowRead\":[],\"allowWrite\":[],\"denyWrite\":[]}}";

struct srt_args {
	int debug;		/* -d, --debug: sbx's -v */
	const char *settings;	/* -s FILE; NULL: ~/.srt-settings.json */
	const char *command;	/* -c STRING, run by bash -c as srt runs it */
	const char *control_fd;	/* --control-fd N, checked: digits, >= 3 */
	bool help, version;
	char **args;		/* COMMAND ARG..., or none */
};

/* True when argv[0]'s last component is "srt". */
static bool
invoked_as_srt(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;

	return argv0 && strcmp(slash ? slash + 1 : argv0, "srt") == 0;
}

/* Parse srt's grammar (argv[0] is skipped). Returns 0, or -1 with e->msg
 * the whole text to print (srt's, where srt has one). Pure. */
static int
srt_parse(char **argv, struct srt_args *s, struct err *e)
{
	/* the options that take a value, as srt's parser names them in errors */
	static const struct { const char *shrt, *lng, *spelled; } valued[] = {
		{ "-s", "--settings", "-s, --settings <path>" },
		{ "-c", NULL, "-c <command>" },
		{ NULL, "--control-fd", "--control-fd <fd>" },
	};
	static const char *const subcommands[] = { "proxy", "windows-install", "windows-uninstall" };
	size_t i = 1, j;

	memset(s, 0, sizeof(*s));
	for (; argv[i]; i++) {
		const char *a = argv[i], *val = NULL;
		size_t which = LEN(valued);

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0')
			break;
		if (strcmp(a, "-d") == 0 || strcmp(a, "--debug") == 0) {
			s->debug++;
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			s->help = true;
			continue;
		}
		if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
			s->version = true;
			continue;
		}
		for (j = 0; j < LEN(valued) && which == LEN(valued); j++) {
			size_t n = valued[j].lng ? strlen(valued[j].lng) : 0;

			if (valued[j].shrt && strncmp(a, valued[j].shrt, 2) == 0)
				val = a[2] ? a + 2 : argv[i + 1];	/* -sFILE or -s FILE */
			else if (n && strncmp(a, valued[j].lng, n) == 0 && (a[n] == '\0' || a[n] == '='))
				val = a[n] ? a + n + 1 : argv[i + 1];	/* --x=V or --x V */
			else
				continue;
			which = j;
			if (val && val == argv[i + 1])
				i++;
		}
		if (which == LEN(valued))
			return err_set(e, NULL, 0, 0, "error: unknown option '%s'", a);
		if (!val)
			return err_set(e, NULL, 0, 0, "error: option '%s' argument missing", valued[which].spelled);
		switch (which) {
		case 0: s->settings = val; break;
		case 1: s->command = val; break;
		default:
			/* srt: /^\d+$/ and >= 3 (Number() alone would take 0x10, 3e0, " 5 ") */
			if (!*val || strspn(val, "0123456789") != strlen(val) || strtod(val, NULL) < 3)
				return err_set(e, NULL, 0, 0, "error: option '%s' argument '%s' is invalid. must be an "
				    "integer file descriptor >= 3 (0-2 are stdin, stdout and stderr).", valued[which].spelled,
				    val);
			s->control_fd = val;
		}
	}
	s->args = argv + i;
	if (s->help || s->version)
		return 0;
	for (j = 0; *s->args && j < LEN(subcommands); j++)
		if (strcmp(s->args[0], subcommands[j]) == 0)
			return err_set(e, NULL, 0, 0, "Error: srt's %s subcommand is not part of sbx; run a command "
			    "instead: srt [-s FILE] -c '...'", subcommands[j]);
	if (s->command && *s->args)
		return err_set(e, NULL, 0, 0, "Error: -c takes the whole command line, and srt would drop the words "
		    "after it (%s...); put them in the -c string", s->args[0]);
	if (!s->command && !*s->args)
		return err_set(e, NULL, 0, 0, "Error: No command specified. Use -c <command> or provide command "
		    "arguments.");
	return 0;
}

static void
srt_usage(FILE *f)
{
	fprintf(f,
	    "Usage: srt [options] [command...]\n"
	    "\n"
	    "sbx %s with srt's command line (Anthropic sandbox-runtime %s): run a command\n"
	    "in a sandbox with network and filesystem restrictions.\n"
	    "\n"
	    "Options (they end at the first word that is not one, or at --):\n"
	    "  -V, --version          output the version number\n"
	    "  -d, --debug            enable debug logging (sbx's -v)\n"
	    "  -s, --settings <path>  path to config file (default: ~/.srt-settings.json)\n"
	    "  -c <command>           run command string directly (bash -c), no escaping applied\n"
	    "  --control-fd <fd>      read config updates from an inherited file descriptor >= 3\n"
	    "  -h, --help             display help for command\n"
	    "\n"
	    "A missing ~/.srt-settings.json means srt's built-in config: no network, writes\n"
	    "only to a private TMPDIR, sbx's credential stores hidden. A missing, unreadable,\n"
	    "empty or invalid settings file is refused otherwise. Exit status: the\n"
	    "command's; 125 if sbx refused or failed. sbx --help describes sbx's own options.\n",
	    SBX_VERSION, SBX_SRT_VERSION);
}

/* main's options when invoked as srt: srt's grammar, translated to sbx's
 * (-d is -v, the command after --) and parsed by cli_parse; the settings
 * are then read by srt's rules (srt_load_settings), not -c's. */
static void
srt_cli(int argc, char **argv, struct cli *c)
{
	struct srt_args s;
	struct err e = { 0 };
	struct vec out = { 0 };

	if (srt_parse(argv, &s, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		exit(SBX_EXIT_FAILURE);
	}
	if (s.help) {
		srt_usage(stdout);
		exit(0);
	}
	if (s.version) {
		printf("sbx %s (srt %s compatible)\n", SBX_VERSION, SBX_SRT_VERSION);
		exit(0);
	}
	vec_push(&out, argv[0]);
	for (int i = 0; i < s.debug; i++)
		vec_push(&out, "-v");
	if (s.control_fd)	/* sbx's own --control-fd: srt's protocol (9d) */
		vec_push(&out, aprintf("--control-fd=%s", s.control_fd));
	vec_push(&out, "--");
	if (s.command) {	/* srt runs it as bash -c STRING (its inner shell) */
		vec_push(&out, "bash");
		vec_push(&out, "-c");
		vec_push(&out, (void *)s.command);
	}
	for (char **a = s.args; *a; a++)
		vec_push(&out, *a);
	vec_push(&out, NULL);
	cli_parse((int)out.n - 1, (char **)out.v, c);
	c->srt = true;
	c->srt_settings = s.settings;
	(void)argc;
}

/* srt's error code names (Node's error.code), for "could not be read". */
static const char *
srt_errno_name(int err)
{
	static const struct { int err; const char *name; } names[] = {
		{ EACCES, "EACCES" }, { EPERM, "EPERM" }, { EISDIR, "EISDIR" }, { ENOTDIR, "ENOTDIR" },
		{ ELOOP, "ELOOP" }, { ENAMETOOLONG, "ENAMETOOLONG" }, { EIO, "EIO" }, { ENXIO, "ENXIO" },
		{ EFBIG, "EFBIG" }, { EMFILE, "EMFILE" }, { ENFILE, "ENFILE" },
	};

	for (size_t i = 0; i < LEN(names); i++)
		if (names[i].err == err)
			return names[i].name;
	return strerror(err);
}

/* srt's refusal: two lines, its words, but sbx's status. */
static void __attribute__((noreturn))
srt_refuse(const char *reason, const char *lost)
{
	fprintf(stderr, "Error: %s\nRefusing to run with the built-in defaults, which would drop %s.\n", reason, lost);
	exit(SBX_EXIT_FAILURE);
}

/* An error of sbx's JSON reader, where srt would print JSON.parse's or
 * zod's: the message, then where. */
static const char *
srt_err_text(const struct err *e)
{
	if (e->line && e->col)
		return aprintf("%s (line %d, column %d)", e->msg, e->line, e->col);
	return e->line ? aprintf("%s (line %d)", e->msg, e->line) : e->msg;
}

/* Step (invoked as srt): the settings by srt's rules (cli.js, utils/
 * config-loader.js). The file is read first and the failure sorted, as
 * srt does: only ENOENT is "missing", and only at the default path does
 * it mean srt's built-in config. Everything else is refused. The file is
 * srt's JSON: sbx's line format is for sbx -c. */
static void
srt_load_settings(const char *named, struct policy *p, struct pol_ctx *pc)
{
	const char *path = named;
	struct buf b = { 0 };
	struct jval *root;
	struct err e = { 0 };
	size_t i;

	if (!path) {
		if (!pc->home || !*pc->home)
			die("HOME is not set, so there is no ~/.srt-settings.json to read; the command did not run");
		path = path_join(pc->home, ".srt-settings.json");
	}
	if (read_file(path, SBX_MAX_POLICY_BYTES, &b) < 0) {
		int saved = errno;

		free(b.p);
		if (saved == ENOENT && named)
			srt_refuse(aprintf("%s does not exist.", path), SRT_NAMED_RULES);
		if (saved != ENOENT)
			srt_refuse(aprintf("%s could not be read (%s).", path, srt_errno_name(saved)), SRT_FILE_RULES);
		/* srt's default config, and sbx's default denies on top: the
		 * credential stores stay hidden (srt leaves them readable) */
		note("No config found at %s, using default config", path);
		if (json_parse_policy(p, pc, srt_default_config, strlen(srt_default_config), "srt's default config",
		    &e) < 0)
			die_err(&e);
		pol_default_denies(p, pc);
		return;
	}
	for (i = 0; i < b.n && isspace((unsigned char)b.p[i]); i++)
		;
	if (i == b.n)
		srt_refuse(aprintf("%s is empty. Delete it, or put a config in it.", path), SRT_FILE_RULES);
	if (json_parse(b.p, b.n, NULL, &root, &e) < 0)
		srt_refuse(aprintf("%s is not valid JSON: %s", path, srt_err_text(&e)), SRT_FILE_RULES);
	if (json_parse_policy(p, pc, b.p, b.n, astrdup(path), &e) < 0)
		srt_refuse(aprintf("%s does not hold a valid config \xe2\x80\x94 %s", path, srt_err_text(&e)),
		    SRT_FILE_RULES);
	free(b.p);
}

/* sbx --connect HOST PORT: a CONNECT client on stdin/stdout, for ssh's
 * ProxyCommand inside the sandbox (GIT_SSH_COMMAND). A refusal prints the
 * proxy's reason; an in-band SSH refusal passes through to ssh, which
 * prints it. */
static int
connect_main(const char *host, const char *port_s)
{
	struct sockaddr_in sa;
	char head[4096];
	size_t n = 0;
	long port, proxy_port = SBX_PROXY_HTTP_PORT;
	const char *why, *cred = getenv("SBX_PROXY_CREDENTIAL"), *pp = getenv("SBX_PROXY_PORT");
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct pollfd pf[2];
	bool in_eof = false, sock_eof = false;
	struct buf auth = { 0 };

	if (parse_int(port_s, 1, 65535, &port, &why) < 0 || !*host || strpbrk(host, " \r\n"))
		die("--connect takes HOST PORT");
	/* macOS: the proxy is on this machine's loopback, and asks for the
	 * run's credential (run_env_proxy sets both); Linux: neither */
	if (pp && parse_int(pp, 1, 65535, &proxy_port, &why) < 0)
		die("--connect: SBX_PROXY_PORT: %s", why);
	if (cred && *cred) {
		buf_puts(&auth, "Proxy-Authorization: Basic ");
		sb_base64((const unsigned char *)cred, strlen(cred), &auth);
		buf_puts(&auth, "\r\n");
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)proxy_port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("--connect: no proxy on 127.0.0.1:%ld: %s (is this inside sbx?)", proxy_port, strerror(errno));
	n = (size_t)snprintf(head, sizeof(head), "CONNECT %s:%ld HTTP/1.1\r\nHost: %s:%ld\r\n%s\r\n",
	    host, port, host, port, auth.p ? auth.p : "");
	free(auth.p);
	if (n >= sizeof(head) || write_all(fd, head, n) < 0)
		die("--connect: %s", n >= sizeof(head) ? "the host name is too long" : strerror(errno));
	/* the reply head, a byte at a time: what follows it is the tunnel's */
	for (n = 0; n < sizeof(head) - 1; n++) {
		if (read(fd, head + n, 1) != 1)
			die("--connect: the proxy closed the connection");
		if (n >= 3 && memcmp(head + n - 3, "\r\n\r\n", 4) == 0)
			break;
	}
	head[n + 1] = '\0';
	if (strncmp(head, "HTTP/1.1 200", 12) != 0) {
		warnx("--connect %s %ld: %.*s", host, port, (int)strcspn(head, "\r\n"), head);
		return 1;
	}
	/* relay with half-close both ways: at the proxy's EOF ssh must still be
	 * able to read what came (an SSH disconnect with the reason) while it
	 * is writing, so stdout is closed and stdin drained, not abandoned */
	signal(SIGPIPE, SIG_IGN);
	pf[0].fd = 0;
	pf[1].fd = fd;
	for (;;) {
		char buf[65536];
		ssize_t r;

		if (in_eof && sock_eof)
			return 0;
		pf[0].events = in_eof ? 0 : POLLIN;
		pf[1].events = sock_eof ? 0 : POLLIN;
		pf[0].fd = in_eof ? -1 : 0;
		pf[1].fd = sock_eof ? -1 : fd;
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			r = read(0, buf, sizeof(buf));
			if (r <= 0) {
				in_eof = true;
				shutdown(fd, SHUT_WR);
			} else if (!sock_eof) {
				(void)write_all(fd, buf, (size_t)r);	/* a closed tunnel just drops it */
			}
		}
		if (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			r = read(fd, buf, sizeof(buf));
			if (r <= 0 || write_all(1, buf, (size_t)r) < 0) {
				sock_eof = true;
				close(1);
			}
		}
	}
}

/* Split --explain's HOST[:PORT] into host and port (443 when none): an IPv6
 * host is bracketed ([::1]:80), or bare with no port (::1). Returns 0, or
 * -1 with *why set: a malformed target is refused, never guessed at (once,
 * "host:80:80" was explained as a host of that name on port 443). */
static int
explain_parse_target(const char *t, char *host, size_t hostn, long *port, const char **why)
{
	const char *ps = NULL, *pwhy;
	size_t hl;
	unsigned char a6[16];

	*port = 443;
	if (t[0] == '[') {
		const char *close = strchr(t, ']');
		char inner[INET6_ADDRSTRLEN + 1];

		if (!close) {
			*why = "a [ without its ]";
			return -1;
		}
		if (close[1] && close[1] != ':') {
			*why = "text right after ] (write [IPv6]:PORT)";
			return -1;
		}
		snprintf(inner, sizeof(inner), "%.*s", (int)(close - t - 1), t + 1);
		if ((size_t)(close - t - 1) >= sizeof(inner) || inet_pton(AF_INET6, inner, a6) != 1) {
			*why = "the text in brackets is not an IPv6 address";
			return -1;
		}
		hl = (size_t)(close + 1 - t);
		ps = close[1] ? close + 2 : NULL;
	} else {
		const char *colon = strchr(t, ':');

		if (colon && strchr(colon + 1, ':')) {
			/* two colons or more: a bare IPv6 address, which has no
			 * port; shown bracketed, as the port follows it */
			if (inet_pton(AF_INET6, t, a6) != 1) {
				*why = "more than one ':', and not an IPv6 address (an IPv6 address with a port is "
				    "written [::1]:443)";
				return -1;
			}
			snprintf(host, hostn, "[%s]", t);
			return 0;
		} else {
			hl = colon ? (size_t)(colon - t) : strlen(t);
			ps = colon ? colon + 1 : NULL;
		}
	}
	if (hl == 0) {
		*why = "no host";
		return -1;
	}
	if (hl >= hostn) {
		*why = "the host is longer than 255 bytes";
		return -1;
	}
	if (ps && (*ps == '0' || parse_int(ps, 1, 65535, port, &pwhy) < 0)) {
		*why = *ps ? "the port is not a number in 1..65535" : "the port after ':' is empty";
		return -1;
	}
	memcpy(host, t, hl);
	host[hl] = '\0';
	return 0;
}

/* --explain=HOST[:PORT]: the decision the proxy will make, with its
 * reason; for an allowed name, each address it resolves to and whether it
 * may be dialled. Returns 0 when the connection would be allowed. */
static int
explain_main(const struct policy *p, const char *target)
{
	char host[SBX_MAX_HOST_BYTES + 8], canon[SBX_MAX_HOST_BYTES + 64];
	const char *why;
	long port;
	struct net_verdict v;
	struct addrinfo hints, *res = NULL, *ai;
	struct vec own = { 0 }, refused = { 0 };
	int survivors = 0;

	if (explain_parse_target(target, host, sizeof(host), &port, &why) < 0)
		die_hint("write HOST, HOST:PORT, [IPv6]:PORT or a bare IPv6 address", "--explain=%s: %s", target, why);
	v = net_decide(p, host, (int)port);
	if (!v.allow) {
		printf("%s:%ld: deny (%s)\n", host, port, v.reason);
		return 1;
	}
	match_canonical_host(host, canon, sizeof(canon));
	if (mitm_routes(p, canon)) {	/* first, as srt: MITM socket > parent > direct */
		printf("%s:%ld: allow; through the MITM proxy at %s (tunnels and SOCKS as CONNECT, plain HTTP in absolute "
		    "form; it resolves the name, so no resolved-address guard here)\n", host, port, p->mitm_socket);
		return 0;
	}
	{
		const struct parent_proxy *t = parent_for(p->route, canon, true), *h = parent_for(p->route, canon, false);

		if (t || h) {	/* the parent resolves the name: no guard here (srt) */
			printf("%s:%ld: allow; tunnels (CONNECT, SOCKS) %s%s%s%s, plain HTTP %s%s%s%s\n", host, port,
			    t ? "through the parent proxy " : "directly", t ? t->host : "", t ? ":" : "",
			    t ? aprintf("%d", t->port) : "", h ? "through the parent proxy " : "directly",
			    h ? h->host : "", h ? ":" : "", h ? aprintf("%d", h->port) : "");
			if (!t || !h)
				printf("  (what goes directly is still judged by the resolved-address guard)\n");
			return 0;
		}
	}
	if (host_is_ip(canon)) {
		printf("%s:%ld: allow (an IP literal on the allow list is dialled as is)\n", host, port);
		return 0;
	}
	own_addresses(&own);
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(canon, NULL, &hints, &res) != 0 || !res) {
		printf("%s:%ld: allowed by name, but it does not resolve here\n", host, port);
		return 1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		struct addr a;
		char text[INET6_ADDRSTRLEN];
		const char *cls;

		if (!addr_from_sockaddr(ai->ai_addr, &a))
			continue;
		inet_ntop(a.family, a.b, text, sizeof(text));
		cls = net_judge_address(p, canon, (int)port, &a, &own);
		printf("  %s: %s%s\n", text, cls ? "refused, " : "may be dialled", cls ? cls : "");
		if (cls)
			vec_push(&refused, (void *)cls);
		else
			survivors++;
	}
	freeaddrinfo(res);
	if (survivors) {
		printf("%s:%ld: allow\n", host, port);
		return 0;
	}
	printf("%s:%ld: deny (resolved to ", host, port);
	for (size_t i = 0; i < refused.n; i++)
		printf("%s%s", i ? " / " : "", (const char *)refused.v[i]);
	printf(")\n");
	return 1;
}

static void
report_rss(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		fprintf(stderr, "%s: peak RSS %ld KiB\n", progname, ru.ru_maxrss);
}

/* What sbx was asked to do besides running: --print=WHAT. ORDER: none
 * (looked up by name in print_modes). */
enum print_mode { PM_NONE, PM_POLICY, PM_JSON, PM_ARGV, PM_SEATBELT, PM_BPF, PM_BPF_PROXY, PM_BPF_OBSERVER, PM_MAN };
static const struct { const char *name; enum print_mode mode; } print_modes[] = {
	{ "policy", PM_POLICY }, { "json", PM_JSON }, { "argv", PM_ARGV }, { "seatbelt", PM_SEATBELT }, { "bpf", PM_BPF },
	{ "bpf-proxy", PM_BPF_PROXY }, { "bpf-observer", PM_BPF_OBSERVER }, { "man", PM_MAN },
};

static enum print_mode
print_mode_named(const char *name)
{
	if (!name)
		return PM_NONE;
	for (size_t i = 0; i < LEN(print_modes); i++)
		if (strcmp(name, print_modes[i].name) == 0)
			return print_modes[i].mode;
	die("--print takes policy, json, argv, seatbelt, bpf, bpf-proxy, bpf-observer or man, not \"%s\"", name);
}

/* Step: the policy, from -c FILE or the default, then the --directive
 * options on top. The default policy makes the current directory
 * writable, so it is refused where that would be all of / or $HOME. */
static void
main_load_policy(const struct cli *c, enum print_mode mode, struct pol_ctx *pc, struct policy *p)
{
	struct err e = { 0 };
	char home_real[PATH_MAX];

	pol_init(p);
	if (c->srt) {
		srt_load_settings(c->srt_settings, p, pc);
	} else if (c->config) {
		if (pol_read_file(p, pc, c->config, &e) < 0)
			die_err(&e);
	} else if (!c->check && !c->explain && mode != PM_BPF && mode != PM_BPF_PROXY && mode != PM_BPF_OBSERVER) {
		if (strcmp(pc->cwd, "/") == 0 ||
		    (pc->home && realpath(pc->home, home_real) && strcmp(pc->cwd, home_real) == 0))
			die_hint("run sbx from a project directory, or pass a policy with -c",
			    "refusing the default policy in %s: it would make all of %s writable",
			    pc->cwd, strcmp(pc->cwd, "/") == 0 ? "/" : "your home directory");
		pol_default(p, pc);
	}
	cli_apply_directives(c, p, pc);
	if (pol_check_whole(p, &e) < 0)
		die_err(&e);
	if (p->ambiguous_request_target || p->allow_plaintext_header_set)
		note("ambiguousRequestTarget and allowPlaintextHeaderSet steer srt's filterRequest callback, which a "
		    "settings file cannot hold: checked, and inert in sbx");
}

/* Step: the routes in effect (4.7): the parent's into p->route. An https://
 * parent, from the policy (refused when read) or the environment, stops
 * here: sbx cannot reach it and will not go around it. -v says which
 * parent each kind of connection takes. */
static void
main_parent_route(struct policy *p)
{
	static struct parent_route route;
	struct vec warnings = { 0 };
	const char *why = NULL;

	if (parent_route_collect(p, environ, &route, &warnings, &why) < 0)
		die_hint("set parent-proxy to the parent's http:// address in the policy, or unset the variable",
		    "parent proxy: %s", why);
	for (size_t i = 0; i < warnings.n; i++)
		warnx("warning: parent proxy: %s", (const char *)warnings.v[i]);
	if (p->mitm_socket) {
		struct stat st;
		int rc = stat(p->mitm_socket, &st);

		note("MITM proxy for %zu host pattern%s (before any parent): %s", p->mitm_domains.n,
		    p->mitm_domains.n == 1 ? "" : "s", p->mitm_socket);
		if (rc < 0 || !S_ISSOCK(st.st_mode))	/* it may start later: said, not refused */
			warnx("warning: mitm-proxy %s: %s; connections to its hosts fail (502) until a proxy listens there",
			    p->mitm_socket, rc == 0 ? "not a socket" : errno == ENOENT ? "no socket there (yet)" : strerror(errno));
	}
	if (!route.have_http && !route.have_https)
		return;
	p->route = &route;
	if (route.have_http)
		note("parent proxy for plain HTTP: %s:%d (from %s)", route.http.host, route.http.port, route.http_from);
	if (route.have_https)
		note("parent proxy for tunnels: %s:%d (from %s)", route.https.host, route.https.port, route.https_from);
}

/* Step (--control-fd): is the descriptor readable? Before anything is
 * built, as srt: a zero-length readv(2) asks the kernel whether a read is
 * allowed at all without doing one (EBADF for a closed descriptor, one
 * opened write-only, a pipe's write end), never blocks on an empty pipe
 * and takes no byte from a full one. srt's words; exit 125. */
static void
main_control_fd_check(const struct cli *c)
{
	char none;
	struct iovec iov = { &none, 0 };

	if (c->control_fd < 0)
		return;
	if (c->control_fd > INT_MAX || readv((int)c->control_fd, &iov, 1) < 0) {
		fprintf(stderr, "Error: --control-fd %s is not usable: %s. Refusing to run the command without the "
		    "control channel it asks for.\n", c->control_fd_arg, strerror(c->control_fd > INT_MAX ? EBADF : errno));
		exit(SBX_EXIT_FAILURE);
	}
}

/* What a control-fd line is read with (9d): the policy file's reader,
 * then the command line's directives on top, as at the start (the line
 * takes the file's place); the parent route stays the run's. */
struct main_live { const struct cli *c; struct pol_ctx *pc; const struct parent_route *route; };

static int
main_live_load(void *ctx, const char *text, size_t n, const char *name, struct policy *out, struct err *e)
{
	const struct main_live *ml = ctx;

	pol_init(out);
	if (json_parse_policy(out, ml->pc, text, n, name, e) < 0 || cli_directives_apply(ml->c, out, ml->pc, e) < 0 ||
	    pol_check_whole(out, e) < 0)
		return -1;
	out->route = ml->route;
	return 0;
}

/* Step (--print=bpf, bpf-proxy, bpf-observer): the seccomp program, disassembled. */
static int
print_bpf(const struct policy *p, const struct cli *c, enum print_mode mode)
{
	const struct bpf_arch *arch = c->arch ? bpf_arch_named(c->arch) : bpf_native_arch();
	struct bpf_opts o = { p->allow_all_unix_sockets, p->allow_nested_userns, mode == PM_BPF_PROXY,
		mode == PM_BPF_OBSERVER, false, false, 0 };
	struct bpf_prog prog;

	if (!arch)
		die("--arch takes x86_64 or aarch64%s", c->arch ? "" : " (this machine has no seccomp program)");
	bpf_assemble(arch, &o, &prog);
	bpf_disassemble(&prog, stdout);
	return 0;
}

/* Step: the plan, the policy and the disk to a list of mounts. The
 * runtime root is chosen from the plan of the policy's own rules (never
 * where the command could write), before the run's paths and the scan are
 * added. print: show what would run, create and recover nothing. */
static void
main_plan(struct policy *p, struct run_paths *rp, bool print, struct plan *pl)
{
	struct disk dk = { &real_disk_ops, NULL };
	struct scan_cache sc;
	struct disk sdk = { &sc_disk_ops, &sc };
	struct vec facts = { 0 };
	struct fact_finder fx;
	struct plan pl0;
	struct err e = { 0 };
	const char *why;

	if (!print)
		allow_write_make_missing(p);
	fx_init(&fx, p, &dk, rp->cwd, rp->home, &facts, &e);
	if (plan_resolve_rules(&fx) < 0)
		die_err(&e);
	if (plan_build(&facts, p->fs_disabled, &pl0, &why) < 0)
		die("%s", why);
	timing("plan: the policy's rules resolved");
	run_paths_set_root(rp, runtime_root_pick(&pl0, !print, &rp->runtime_covers), !print);
	timing("plan: runtime root chosen");
	if (p->bridge == BRIDGE_SOCAT && policy_runs_proxy(p))
		rp->bridge_dir = aprintf("%s/bridge-%s", rp->runtime_root, strchr(rp->tmpdir + strlen(rp->runtime_root), '-') + 1);
	if (!print)
		runtime_recover(rp);	/* what killed runs left */
	timing("plan: killed runs' leftovers looked for");
	plan_add_run_paths(&fx, rp);
	sc_open(&sc, &dk, SBX_SCAN_CACHE ? path_join(path_dirname(rp->run_dir), SBX_SCAN_CACHE_FILE) :
	    NULL);
	if (sc.path)
		fx.sdk = &sdk;
	if (plan_resolve_scan(&fx, rp) < 0)
		die_err(&e);
	note("scan: %ld directories listed (%ld changed), %ld from the scan cache", sc.listed, sc.changed, sc.served);
	if (!print)
		sc_save(&sc);	/* --print=argv reads it, and writes nothing */
	timing("plan: the scan");
	for (size_t i = 0; i < fx.warnings.n; i++)
		warnx("%s", (const char *)fx.warnings.v[i]);
	if (plan_build(&facts, p->fs_disabled, pl, &why) < 0)
		die("%s", why);
	pl->allow_git_config = p->allow_git_config;
	pl->dirs_seen = fx.dirs;	/* the directories the scan listed, for the audit (9b) */
}

/* Step: what the run's facts add to the plan: sbx itself where
 * GIT_SSH_COMMAND names it, and the bridge's sockets (the runtime root is
 * hidden inside; these are shown, read-only). */
static void
plan_add_run_binds(struct plan *pl, const struct run_facts *rf)
{
	if (rf->self_inside && strcmp(rf->self_inside, rf->self) != 0)
		plan_bind_from(pl, rf->self, rf->self_inside, "sbx itself, for sbx --connect (GIT_SSH_COMMAND)");
	if (rf->rp->bridge_dir)
		plan_bind_from(pl, rf->rp->bridge_dir, rf->rp->bridge_dir, "bridge socat: the proxy's Unix sockets");
}

/* -v: every mount, with the rule it comes from. */
static void
plan_note_mounts(const struct plan *pl)
{
	/* ORDER: enum mkind */
	static const char *const kinds[] = { "ro-bind", "bind", "hide file", "hide dir", "remount-ro", "show",
		"pin link", "init bind", "init pin" };

	for (size_t i = 0; i < pl->mounts.n; i++) {
		const struct mount *m = pl->mounts.v[i];

		note("mount %-10s %s  <- %s", kinds[m->kind], m->path, m->why);
	}
}

/* Step (--print=argv): the bwrap command that would run, byte for byte
 * what run_linux starts (bw_render, the same facts). */
static int
print_argv(const struct policy *p, const struct plan *pl, const struct run_facts *rf)
{
	struct bw_invocation bi;
	struct buf out = { 0 };

	bw_render(p->bwrap_path ? p->bwrap_path : "bwrap", p, pl, rf, &bi);
	bw_print(&bi, &out);
	fwrite(out.p, 1, out.n, stdout);
	free(out.p);
	return 0;
}

/* Step (--print=seatbelt): the Seatbelt profile for this policy, on any
 * platform. The proxy's ports and the run's suffix are fixed stand-ins
 * here (a run draws them): the rest is what the macOS runner will apply. */
static int
print_seatbelt(const struct policy *p, const struct plan *pl, const struct run_paths *rp, char **cmd)
{
	struct sb_facts f;
	struct buf out = { 0 };
	const char *why = NULL;

	sb_facts_collect(&f, rp, cmd, "_PRINTED_SBX", SBX_PROXY_HTTP_PORT, SBX_PROXY_SOCKS_PORT);
	if (seatbelt_render(p, pl, &f, &out, &why) < 0)
		die("cannot write the Seatbelt profile: %s", why);
	fwrite(out.p, 1, out.n, stdout);
	free(out.p);
	return 0;
}

/* Where the refusals go as they happen: --violations=FILE (JSON lines,
 * appended, one write a record so a watcher can tail it; rotated to
 * FILE.1 past its cap, vstore_json), --violations-fd, or nowhere: into
 * s's sink. Opened before the run: a bad FILE stops it there.
 * SECURITY: sbx appends text the command chose (paths, hosts) to FILE, so
 * FILE must be a plain file of the caller's that the command cannot reach:
 * a symlink the command planted would aim those lines at ~/.bashrc (a
 * path named "$(...)" then runs on the person's next shell), a FIFO would
 * hang sbx in open(), a file inside a writable root could be forged or
 * swapped between runs. So: no symlink, no blocking open, a regular file
 * with one link owned by the caller, and not where the plan lets the
 * command write (as tamper_check does for sbx's own binary); its
 * directory, held open, is where FILE.1 goes. */
static void
report_sink_open(const struct cli *c, const struct plan *pl, struct vstore *s)
{
	char real[PATH_MAX];
	struct stat st;
	int fd;

	if (c->violations_fd >= 0) {
		s->json_fd = c->violations_fd;
		return;
	}
	if (!c->violations || strcmp(c->violations, "stderr") == 0 || strcmp(c->violations, "none") == 0)
		return;
	fd = openat(AT_FDCWD, c->violations, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK,
	    0600);
	if (fd < 0)
		die("--violations=%s: cannot open it: %s; the command did not run", c->violations,
		    errno == ELOOP ? "it is a symlink" : strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != geteuid())
		die("--violations=%s: not a plain file of yours (one link, a regular file); the command did not run",
		    c->violations);
	if (!realpath(c->violations, real) || plan_is_writable(pl, real) || plan_is_writable(pl, path_dirname(real)))
		die_hint("write the report outside every writable directory (e.g. under ~/.cache), or use "
		    "--violations-fd", "--violations=%s: the command could write there (forge the report, or swap the "
		    "file for a link); the command did not run", c->violations);
	(void)fcntl(fd, F_SETFL, O_WRONLY | O_APPEND);	/* blocking again: a record is written whole */
	if ((s->json_dir = openat(AT_FDCWD, path_dirname(real), O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		die("--violations=%s: cannot open its directory: %s; the command did not run", c->violations,
		    strerror(errno));
	s->json_fd = fd;
	s->json_name = astrdup(strrchr(real, '/') + 1);
}

/* The command as ignore-violations' command texts are looked for in it:
 * its words shell-quoted, joined by spaces (arena). */
static const char *
report_cmdline(char **cmd)
{
	struct buf b = { 0 };
	const char *line;

	for (size_t i = 0; cmd[i]; i++) {
		if (i)
			buf_putc(&b, ' ');
		buf_put_shell_quoted(&b, cmd[i]);
	}
	buf_putc(&b, '\0');
	line = astrdup(b.p);
	free(b.p);
	return line;
}

/* After the command: srt's block on stderr (--violations=stderr, the
 * default), unless the refusals went to a FILE or none were asked for. */
static void
report_print(const struct vstore *s, const struct plan *pl, const struct cli *c)
{
	struct buf out = { 0 };
	bool block = !c->violations || strcmp(c->violations, "stderr") == 0;

	if (!block && !c->explain_run)
		return;
	if (block)
		report_block(s, &out);
	if (c->explain_run) {
		if (out.n)
			buf_putc(&out, '\n');
		report_hints(s, pl, &out);
	}
	if (out.n)
		(void)write_all(2, out.p, out.n);
	free(out.p);
}

/* Step: run the command on this platform's sandbox (plat_run: 10e, 11),
 * then the audit and the report. */
static int
main_run(const struct policy *p, const struct plan *pl, const struct run_paths *rp, const struct run_facts *rf,
    const struct cli *c)
{
	struct vstore store;	/* every refusal of the run, for the report (8) */
	int rc;

	vstore_init(&store, p, pl, report_cmdline(c->cmd));
	report_sink_open(c, pl, &store);
	run_state.store = &store;
	rc = plat_run(p, pl, rp, rf, &store);
	if (live.failed)
		rc = SBX_EXIT_FAILURE;	/* stopped for its control fd (9d): its status is not the run's */
	audit_after_run(pl);
	timing("audited");
	run_state.store = NULL;
	report_print(&store, pl, c);
	vstore_clear(&store);
	timing("reported");
	if (verbose || getenv("SBX_REPORT_RSS"))
		report_rss();
	return rc;
}

/* sbx: the options, the policy, the plan, then one of the print modes or
 * the run. */
int
main(int argc, char **argv)
{
	struct cli c;
	struct policy p;
	struct pol_ctx pc = { 0 };
	struct buf out = { 0 };
	char cwd[PATH_MAX], self_buf[PATH_MAX];
	const char *self;
	struct run_paths rp;
	struct run_facts rf;
	struct plan pl;
	struct vec warnings = { 0 };
	enum print_mode mode;
	int rc;

	if (fds_cloexec_from(3) < 0)
		die("cannot mark inherited descriptors close-on-exec: %s; the command did not run", strerror(errno));
	if ((rc = plat_helper_main(argc, argv)) >= 0)
		return rc;	/* one of sbx's own helpers (Linux: --inner) */
	timing("start");
	/* sbx's own diagnostics never kill it (`sbx -v ... 2>&1 | head`): a
	 * write to a closed pipe fails instead, and sbx carries on to remove
	 * what it made. bwrap and the command get the default back. */
	signal(SIGPIPE, SIG_IGN);
	if ((rc = plat_session_main(&argc, &argv)) >= 0)
		return rc;	/* sbx exec, sbx session list|stop; a start goes on as a run (10f) */
	if (argc > 1 && strcmp(argv[1], "--connect") == 0) {
		if (argc != 4)
			die("usage: sbx --connect HOST PORT (a CONNECT client through the sandbox's proxy)");
		return connect_main(argv[2], argv[3]);
	}

	/* the options */
	if (invoked_as_srt(argv[0]))
		srt_cli(argc, argv, &c);	/* srt's grammar, translated */
	else
		cli_parse(argc, argv, &c);
	if (c.help) {
		usage(stdout);
		return 0;
	}
	if (c.version) {
		printf("sbx %s (follows srt %s)\n", SBX_VERSION, SBX_SRT_VERSION);
		return 0;
	}
	mode = print_mode_named(c.print);
	if (mode == PM_MAN) {
		print_man(stdout);
		return 0;
	}
	if (c.arch && mode != PM_BPF && mode != PM_BPF_PROXY && mode != PM_BPF_OBSERVER)
		die("--arch goes with --print=bpf");
	if (!getcwd(cwd, sizeof(cwd)))
		die("cannot find the current directory: %s", strerror(errno));
	pc.cwd = cwd;
	pc.home = getenv("HOME");

	/* the policy, and what needs nothing more */
	main_load_policy(&c, mode, &pc, &p);
	timing("policy read");
	if (c.check || mode == PM_POLICY || mode == PM_JSON) {	/* where a person reviews the policy */
		struct vec weak = { 0 };

		pol_weakenings(&p, &weak);
		for (size_t i = 0; i < weak.n; i++)
			warnx("warning: %s", (const char *)weak.v[i]);
	}
	if (c.check)
		return plat_check(&p);
	if (c.explain || (mode == PM_NONE && *c.cmd))
		main_parent_route(&p);	/* the proxy's route: for --explain and the run */
	if (c.explain)
		return explain_main(&p, c.explain);
	switch (mode) {
	case PM_BPF:
	case PM_BPF_PROXY:
	case PM_BPF_OBSERVER:
		return print_bpf(&p, &c, mode);
	case PM_POLICY:
	case PM_JSON:
		(mode == PM_POLICY ? pol_print_lines : pol_print_json)(&p, &out);
		fwrite(out.p, 1, out.n, stdout);
		free(out.p);
		return 0;
	case PM_NONE:
	case PM_ARGV:
	case PM_SEATBELT:
	case PM_MAN:
		break;
	}
	if (!*c.cmd)
		die_hint("sbx --help shows how", "no command given");
	if (mode == PM_NONE)
		main_control_fd_check(&c);	/* before anything is built */
	pol_validate(&p, &warnings);
	for (size_t i = 0; i < warnings.n; i++)
		warnx("%s", (const char *)warnings.v[i]);

	/* the plan and the run's facts, the same for --print=argv and the run */
	run_paths_init(&rp, cwd);
	main_plan(&p, &rp, mode == PM_ARGV || mode == PM_SEATBELT, &pl);
	timing("planned: rules, runtime root, recovery, scan, mounts");
	self = plat_self_exe(self_buf, sizeof(self_buf)) ? astrdup(self_buf) : NULL;
	if (!self && policy_runs_proxy(&p))	/* replaced or deleted while it runs: an upgrade */
		warnx("cannot find my own binary (%s): GIT_SSH_COMMAND is not set, so ssh inside will not go "
		    "through the proxy", strerror(errno));
	run_facts_collect(&rf, &p, &rp, self, geteuid() == 0, environ, c.cmd);
	plan_add_run_binds(&pl, &rf);
	if (plat_init_binds(&p))
		plan_binds_to_init(&pl);
	plan_note_mounts(&pl);
	timing("the run's facts");
	if (mode == PM_ARGV)
		return print_argv(&p, &pl, &rf);
	if (mode == PM_SEATBELT)
		return print_seatbelt(&p, &pl, &rp, c.cmd);
	if (c.control_fd >= 0) {
		static struct main_live ml;

		ml = (struct main_live){ &c, &pc, p.route };
		live_start((int)c.control_fd, &p, main_live_load, &ml);
	}
	return main_run(&p, &pl, &rp, &rf, &c);
}
