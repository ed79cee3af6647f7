#!/usr/bin/env bash
# bench/scan.sh: what a run costs as the writable roots grow, side by side in one run.
#
# It is a benchmark, not a test: it prints figures and exits 0, unless sbx cannot run at
# all or a timed command fails (then 1). srt missing only skips its rows.
#
# The trees, generated in a scratch directory (removed on exit):
#   project   a git repository with a few files: the cwd of every run
#   tmp       a /tmp-like root of 10,000 entries: 500 files and 500 directories at the
#             top, 18 files in each directory
#   home      a home of 100,000 files: 10 x 10 x 10 x 10 directories (11,110 in all),
#             10 files in each leaf, dotfiles at the top, 5 git repositories deep down
# The policies: `allow-write .` alone; with the tmp root; with the home root; with both.
#
# For each policy with a root, a group of rows timed together (the `allow-write .` row is
# in every group, and each ratio is to it, from the same group):
#   first     the scan cache removed before each run (every directory listed)
#   second    the cache as the run before left it (nothing changed in between)
#   changed   one file created or removed in one directory of the big root before each
#             run (that directory listed again)
#   no cache  a copy of sbx.c with its SBX_SCAN_CACHE constant 0 (every directory listed
#             that the run walks; the rest of the binary the same)
#   before    SBX_BEFORE=/path/to/sbx, when given (an older build, e.g. main's)
#   srt       srt 0.0.81 (`srt` on PATH) with sbx --print=json of the same policy
# Within a group the commands run in turn, one run each, RUNS times after WARMUP rounds
# (interleaved: a machine whose load drifts weighs on every row alike); each row gives the
# wall time and the CPU time (user + sys, of the command and all it waited for), medians.
# The command of those rows is `true`, which changes no name in a root: the part of each
# root below the scan's depth is never walked (sbx.c 5c, scan_deep). Then a group of a
# command that writes only to /dev/null (`sh -c 'ls >/dev/null'`): no name in a root changes,
# so it walks nothing either. Then a group of a command that writes a file in the project (`sh -c 'echo x > w.txt'`), second runs, each
# policy's: its first call waits for that walk, and the audit looks after it (and the home
# policy's on one core, taskset -c 0: sbx takes those lstats on every core it may use).
# Then the per-command floor: the bwrap floor (bwrap --ro-bind / / --dev /dev --proc /proc
# --unshare-net --unshare-pid --die-with-parent true) against sbx -c policy.example
# -- true, and a session's exec (sbx exec) over the home policy against the `allow-write .`
# one. Each command is `true`, so what is timed is the sandbox's own cost.
#
# The scan cache lives with sbx's runtime files (/dev/shm/sbx-UID/scan-cache). As root,
# with unshare(1), the script runs itself again in a private mount namespace with fresh
# /tmp and /var/tmp (directories of its own on the same disk) and empty tmpfs over /dev/shm
# and /run/user, so the person's own cache, registry and sessions are not touched;
# otherwise the `first` rows remove the person's cache (the next run rebuilds it).
#
# Run:   bench/scan.sh        (sbx is ../sbx from here, built with `make -C .. -s` if missing)
# Knobs: RUNS=15 WARMUP=2  NO_SRT=1  SBX=/path/to/sbx  SBX_BEFORE=/path/to/older/sbx
# Needs: bash, python3 (the trees, the timing, the table), bwrap; optional srt, musl-gcc.

set -u -o pipefail
RUNS=${RUNS:-15}
WARMUP=${WARMUP:-2}
HERE=$(cd "$(dirname "$0")" && pwd -P)
TOP=$(cd "$HERE/.." && pwd -P)

if [ -z "${SCAN_BENCH_PRIVATE:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
	unshare -m --propagation private true 2>/dev/null; then
	# sbx's places all fresh: /tmp and /var/tmp directories of our own on the same disk (the
	# trees stay on it), /dev/shm and /run/user empty tmpfs; removed at the end
	NS=$(mktemp -d /var/tmp/sbx-scan-bench-ns.XXXXXX) || exit 1
	mkdir -p "$NS/tmp" "$NS/var-tmp" && chmod 1777 "$NS/tmp" "$NS/var-tmp"
	SCAN_BENCH_PRIVATE=1 unshare -m --propagation private sh -c '
		mount --bind "$1/tmp" /tmp && mount --bind "$1/var-tmp" /var/tmp &&
		mount -t tmpfs -o mode=1777 tmpfs /dev/shm || exit 1
		[ ! -d /run/user ] || mount -t tmpfs -o mode=755 tmpfs /run/user || exit 1
		shift; exec "$@"' sh "$NS" "$0" "$@"
	rc=$?
	rm -rf "$NS"
	exit "$rc"
fi

say() { printf '%s\n' "$*"; }
die() { say "scan.sh: $*" >&2; exit 1; }
command -v python3 >/dev/null || die "needs python3"

SBX=${SBX:-$TOP/sbx}
if [ ! -x "$SBX" ]; then make -C "$TOP" -s sbx >/dev/null || die "cannot build sbx"; fi
SBX=$(realpath "$SBX")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sbx-scan-bench.XXXXXX") || die "mktemp"
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
P=$WORK/project TMPR=$WORK/tmp HOMER=$WORK/home

# ---- the trees
python3 - "$P" "$TMPR" "$HOMER" <<'EOF'
import os, subprocess, sys
proj, tmp, home = sys.argv[1:4]
os.makedirs(proj)
for i in range(20):
    open(os.path.join(proj, "f%d.txt" % i), "w").write("x\n")
subprocess.run(["git", "init", "-q", proj], check=True)
os.makedirs(tmp)
for i in range(500):
    open(os.path.join(tmp, "file%d" % i), "w").close()
    d = os.path.join(tmp, "dir%d" % i)
    os.makedirs(d)
    for j in range(18):
        open(os.path.join(d, "f%d" % j), "w").close()
os.makedirs(home)
for name in (".bashrc", ".profile", ".gitconfig"):
    open(os.path.join(home, name), "w").close()
for a in range(10):
    for b in range(10):
        for c in range(10):
            for d in range(10):
                leaf = os.path.join(home, "a%d" % a, "b%d" % b, "c%d" % c, "d%d" % d)
                os.makedirs(leaf)
                for f in range(10):
                    open(os.path.join(leaf, "f%d" % f), "w").close()
for k in range(5):
    subprocess.run(["git", "init", "-q", os.path.join(home, "a%d" % k, "b1", "c2", "repo")], check=True)
EOF
[ $? = 0 ] || die "cannot make the trees"
sleep 0.1	# older than the cache's margin for the coarse clock
say "trees: tmp $(find "$TMPR" -mindepth 1 | wc -l) entries, home $(find "$HOMER" -type f | wc -l) files in $(find "$HOMER" -type d | wc -l) directories"

printf 'allow-write .\n' >"$WORK/pol-dot"
printf 'allow-write .\nallow-write %s\n' "$TMPR" >"$WORK/pol-tmp"
printf 'allow-write .\nallow-write %s\n' "$HOMER" >"$WORK/pol-home"
printf 'allow-write .\nallow-write %s\nallow-write %s\n' "$TMPR" "$HOMER" >"$WORK/pol-both"

cd "$P" || die "cd"
"$SBX" -c "$WORK/pol-dot" -- true || die "sbx cannot run here"
CACHE=$("$SBX" -v -c "$WORK/pol-tmp" -- true 2>&1 | sed -n 's/^sbx: scan cache \(.*\): [0-9]* directories.*/\1/p' | tail -n 1)
[ -n "$CACHE" ] || die "sbx wrote no scan cache (an sbx without one?)"
say "scan cache: $CACHE"

# the same sbx.c without the cache: a copy in the scratch directory with the platform's
# constant turned off (sbx ships no switch for it), built the same way
NOCACHE=$WORK/sbx-nocache
CC=$(command -v musl-gcc >/dev/null && echo "musl-gcc -static" || echo cc)
sed 's/^#  define SBX_SCAN_CACHE 1$/#  define SBX_SCAN_CACHE 0/' "$TOP/sbx.c" >"$WORK/sbx-nocache.c"
cp "$TOP/seccomp_bpf.h" "$WORK/"
grep -q '^#  define SBX_SCAN_CACHE 0$' "$WORK/sbx-nocache.c" || die "sbx.c has no SBX_SCAN_CACHE constant to turn off"
$CC -O2 -o "$NOCACHE" "$WORK/sbx-nocache.c" 2>"$WORK/cc.err" || { cat "$WORK/cc.err"; die "cannot build the no-cache sbx"; }

SRT_OK=0
if [ -z "${NO_SRT:-}" ] && command -v srt >/dev/null; then
	for p in dot tmp home both; do
		"$SBX" --print=json -c "$WORK/pol-$p" >"$WORK/srt-$p.json" 2>/dev/null || break
	done
	srt --settings "$WORK/srt-dot.json" -c true >/dev/null 2>&1 && SRT_OK=1
fi
[ "$SRT_OK" = 1 ] || say "srt rows skipped (NO_SRT, no srt on PATH, or it did not run)"

# prepare scripts (one runs before each timed run of its command, untimed)
printf 'rm -f %q\n' "$CACHE" >"$WORK/prep-cold"
flip() { printf 'f=%q; if [ -e "$f" ]; then rm "$f"; else : >"$f"; fi\n' "$1"; }
flip "$TMPR/dir250/flip" >"$WORK/prep-flip-tmp"
flip "$HOMER/a5/b5/c5/d5/flip" >"$WORK/prep-flip-home"
cp "$WORK/prep-flip-home" "$WORK/prep-flip-both"

# The groups: each a title, then "LABEL|PREPARE|COMMAND" rows (PREPARE: a script in $WORK, or -)
SPEC=$WORK/spec
DOT="allow-write . alone|-|$SBX -c $WORK/pol-dot -- true"
: >"$SPEC"
for p in tmp home both; do
	{
		case $p in
		tmp) echo "# allow-write . + tmp (10,000 entries)" ;;
		home) echo "# allow-write . + home (100,000 files)" ;;
		both) echo "# allow-write . + tmp + home" ;;
		esac
		echo "$DOT"
		echo "first|prep-cold|$SBX -c $WORK/pol-$p -- true"
		echo "second|-|$SBX -c $WORK/pol-$p -- true"
		echo "changed|prep-flip-$p|$SBX -c $WORK/pol-$p -- true"
		echo "no cache|-|$NOCACHE -c $WORK/pol-$p -- true"
		if [ -n "${SBX_BEFORE:-}" ]; then echo "before|-|$SBX_BEFORE -c $WORK/pol-$p -- true"; fi
		if [ "$SRT_OK" = 1 ]; then
			echo "srt, allow-write . alone|-|srt --settings $WORK/srt-dot.json -c true"
			echo "srt|-|srt --settings $WORK/srt-$p.json -c true"
		fi
	} >>"$SPEC"
done
# a command that writes only to /dev/null (as a shell's redirections do): no name in a root
# changes, so no walk below the scan's depth and no audit
ELSEWHERE="sh -c 'ls >/dev/null'"
{
	echo "# a command that writes only to /dev/null (second run)"
	echo "allow-write . alone|-|$SBX -c $WORK/pol-dot -- $ELSEWHERE"
	echo "+ home (100,000 files)|-|$SBX -c $WORK/pol-home -- $ELSEWHERE"
	if [ -n "${SBX_BEFORE:-}" ]; then echo "before, + home|-|$SBX_BEFORE -c $WORK/pol-home -- $ELSEWHERE"; fi
} >>"$SPEC"
# a command that writes in the project: its first call there waits for the walk below
# the scan's depth (the picture the audit compares with), and the audit looks after it
WRITE="sh -c 'echo x > w.txt'"
{
	echo "# a command that writes (second run)"
	echo "allow-write . alone|-|$SBX -c $WORK/pol-dot -- $WRITE"
	echo "+ tmp (10,000 entries)|-|$SBX -c $WORK/pol-tmp -- $WRITE"
	echo "+ home (100,000 files)|-|$SBX -c $WORK/pol-home -- $WRITE"
	echo "+ tmp + home|-|$SBX -c $WORK/pol-both -- $WRITE"
	echo "no cache, + home|-|$NOCACHE -c $WORK/pol-home -- $WRITE"
	# sbx takes the lstats of every directory on each core it may use: here on one
	if command -v taskset >/dev/null; then
		echo "one core, + home|-|taskset -c 0 $SBX -c $WORK/pol-home -- $WRITE"
	fi
	if [ -n "${SBX_BEFORE:-}" ]; then echo "before, + home|-|$SBX_BEFORE -c $WORK/pol-home -- $WRITE"; fi
} >>"$SPEC"
# the per-command floor, and a session's exec
{
	echo "# the per-command floor"
	echo "bwrap floor|-|$(command -v bwrap) --ro-bind / / --dev /dev --proc /proc --unshare-net --unshare-pid --die-with-parent true"
	if [ -r "$TOP/policy.example" ]; then echo "sbx -c policy.example|-|$SBX -c $TOP/policy.example -- true"; fi
} >>"$SPEC"
sess_ok=0
if "$SBX" session start -c "$WORK/pol-dot" --name "scanbench-dot-$$" >/dev/null 2>&1 &&
	"$SBX" session start -c "$WORK/pol-home" --name "scanbench-home-$$" >/dev/null 2>&1; then
	sess_ok=1
	{
		echo "# a session's exec"
		echo "exec, allow-write . alone|-|$SBX exec scanbench-dot-$$ -- true"
		echo "exec, + home (100,000 files)|-|$SBX exec scanbench-home-$$ -- true"
	} >>"$SPEC"
fi

# The timing: within a group, one run of each command in turn, RUNS times after WARMUP
# rounds, so a machine whose load drifts weighs on every row alike. Wall time, and the
# CPU time (user + sys) of the command and everything it waited for (wait4's rusage),
# which load from other work disturbs much less. The table: medians (min-max), and each
# median's ratio to the group's first row.
python3 - "$SPEC" "$WORK" "$RUNS" "$WARMUP" <<'EOF'
import os, shlex, statistics, subprocess, sys, time
spec, work, runs, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
groups = []
for line in open(spec):
    line = line.rstrip("\n")
    if line.startswith("# "):
        groups.append((line[2:], []))
    elif line:
        label, prep, cmd = line.split("|", 2)
        groups[-1][1].append((label, None if prep == "-" else os.path.join(work, prep), shlex.split(cmd)))
devnull = os.open(os.devnull, os.O_WRONLY)
def once(argv):
    r, w = os.pipe()	# output through a pipe, as a caller reads it
    t0 = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, w, 1),
        (os.POSIX_SPAWN_DUP2, devnull, 2), (os.POSIX_SPAWN_CLOSE, r)])
    os.close(w)
    while os.read(r, 65536):
        pass
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    os.close(r)
    if status != 0:
        sys.exit("bench/scan.sh: %s exited %d" % (" ".join(argv), status))
    return wall, ru.ru_utime + ru.ru_stime
print()
print("| policy | run | wall ms, median (min-max) | x first row | CPU ms, median | x first row |")
print("|---|---|---|---|---|---|")
for title, rows in groups:
    wall = [[] for _ in rows]
    cpu = [[] for _ in rows]
    for k in range(warmup + runs):
        for i, (label, prep, argv) in enumerate(rows):
            if prep:
                subprocess.run(["sh", prep], check=True)
            w, c = once(argv)
            if k >= warmup:
                wall[i].append(w)
                cpu[i].append(c)
    bw, bc = statistics.median(wall[0]), statistics.median(cpu[0])
    for i, (label, _, _) in enumerate(rows):
        mw, mc = statistics.median(wall[i]), statistics.median(cpu[i])
        print("| %s | %s | %.1f (%.1f-%.1f) | %.2fx | %.1f | %.2fx |" % (title, label, mw * 1e3, min(wall[i]) * 1e3,
              max(wall[i]) * 1e3, mw / bw, mc * 1e3, mc / bc if bc else 0))
EOF
rc=$?
if [ "$sess_ok" = 1 ]; then
	"$SBX" session stop "scanbench-dot-$$" >/dev/null 2>&1
	"$SBX" session stop "scanbench-home-$$" >/dev/null 2>&1
fi
[ "$rc" = 0 ] || die "a timed command failed"
