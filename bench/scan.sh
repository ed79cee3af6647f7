#!/usr/bin/env bash
# bench/scan.sh: what a run costs as the writable roots grow, side by side in one run.
#
# It is a benchmark, not a test: it prints figures and exits 0, unless sbx or hyperfine
# cannot run at all (then 1). srt missing only skips its rows.
#
# The trees, generated in a scratch directory (removed on exit):
#   project   a git repository with a few files: the cwd of every run
#   tmp       a /tmp-like root of 10,000 entries: 500 files and 500 directories at the
#             top, 18 files in each directory
#   home      a home of 100,000 files: 10 x 10 x 10 x 10 directories (11,110 in all),
#             10 files in each leaf, dotfiles at the top, 5 git repositories deep down
# The policies: `allow-write .` alone; with the tmp root; with the home root; with both.
#
# For each policy with a root (one hyperfine call each; the `allow-write .` row is in
# every call, and each ratio is to it, from the same call):
#   first     the scan cache removed before each run (every directory listed)
#   second    the cache as the run before left it (nothing changed in between)
#   changed   one file created or removed in one directory of the big root before each
#             run (that directory listed again)
#   no cache  sbx.c built again with -DSBX_SCAN_CACHE=0 (every directory listed, every
#             run; the rest of the binary the same)
#   before    SBX_BEFORE=/path/to/sbx, when given (an older build, e.g. main's)
#   srt       srt 0.0.81 (`srt` on PATH) with sbx --print=json of the same policy
# Then the per-command floor: the bwrap floor (bwrap --ro-bind / / --dev /dev --proc /proc
# --unshare-net --unshare-pid --die-with-parent true) against sbx -c policy.example
# -- true, and a session's exec (sbx exec) over the home policy against the `allow-write .`
# one. Each command is `true`, so what is timed is the sandbox's own cost.
#
# The scan cache lives with sbx's runtime files (/dev/shm/sbx-UID/scan-cache). As root,
# with unshare(1), the script runs itself again in a private mount namespace with an
# empty tmpfs over /dev/shm, so the person's own cache and registry are not touched;
# otherwise the `first` rows remove the person's cache (the next run rebuilds it).
#
# Run:   bench/scan.sh        (sbx is ../sbx from here, built with `make -C .. -s` if missing)
# Knobs: RUNS=15 WARMUP=2  NO_SRT=1  SBX=/path/to/sbx  SBX_BEFORE=/path/to/older/sbx
# Needs: bash, hyperfine, python3 (the trees, the table), bwrap; optional srt, musl-gcc.

set -u -o pipefail
RUNS=${RUNS:-15}
WARMUP=${WARMUP:-2}
HERE=$(cd "$(dirname "$0")" && pwd -P)
TOP=$(cd "$HERE/.." && pwd -P)

if [ -z "${SCAN_BENCH_PRIVATE:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
	unshare -m --propagation private true 2>/dev/null; then
	exec env SCAN_BENCH_PRIVATE=1 unshare -m --propagation private \
		sh -c 'mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec "$0" "$@"' "$0" "$@"
fi

say() { printf '%s\n' "$*"; }
die() { say "scan.sh: $*" >&2; exit 1; }
command -v hyperfine >/dev/null || die "needs hyperfine (apt-get install hyperfine)"
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

# the same sbx.c without the cache
NOCACHE=$WORK/sbx-nocache
CC=$(command -v musl-gcc >/dev/null && echo "musl-gcc -static" || echo cc)
$CC -O2 -DSBX_SCAN_CACHE=0 -o "$NOCACHE" "$TOP/sbx.c" 2>"$WORK/cc.err" || { cat "$WORK/cc.err"; die "cannot build the no-cache sbx"; }

SRT_OK=0
if [ -z "${NO_SRT:-}" ] && command -v srt >/dev/null; then
	for p in dot tmp home both; do
		"$SBX" --print=json -c "$WORK/pol-$p" >"$WORK/srt-$p.json" 2>/dev/null || break
	done
	srt --settings "$WORK/srt-dot.json" -c true >/dev/null 2>&1 && SRT_OK=1
fi
[ "$SRT_OK" = 1 ] || say "srt rows skipped (NO_SRT, no srt on PATH, or it did not run)"

# prepare scripts (hyperfine runs one before each timed run of its command)
printf 'rm -f %q\n' "$CACHE" >"$WORK/prep-cold"
printf 'true\n' >"$WORK/prep-none"
flip() { printf 'f=%q; if [ -e "$f" ]; then rm "$f"; else : >"$f"; fi\n' "$1"; }
flip "$TMPR/dir250/flip" >"$WORK/prep-flip-tmp"
flip "$HOMER/a5/b5/c5/d5/flip" >"$WORK/prep-flip-home"
cp "$WORK/prep-flip-home" "$WORK/prep-flip-both"

# one hyperfine call: NAME then "LABEL|PREPARE|COMMAND" triples
bench() {
	local name=$1 spec label prep cmd; shift
	local args=()
	for spec in "$@"; do
		IFS='|' read -r label prep cmd <<<"$spec"
		args+=(--prepare "sh $WORK/prep-$prep" -n "$label" "$cmd")
	done
	hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$WORK/$name.json" "${args[@]}" \
		>"$WORK/$name.log" 2>&1 || { cat "$WORK/$name.log"; die "hyperfine failed ($name)"; }
}

DOT="allow-write . alone|none|$SBX -c $WORK/pol-dot -- true"
for p in tmp home both; do
	rows=("$DOT"
		"first|cold|$SBX -c $WORK/pol-$p -- true"
		"second|none|$SBX -c $WORK/pol-$p -- true"
		"changed|flip-$p|$SBX -c $WORK/pol-$p -- true"
		"no cache|none|$NOCACHE -c $WORK/pol-$p -- true")
	[ -n "${SBX_BEFORE:-}" ] && rows+=("before|none|$SBX_BEFORE -c $WORK/pol-$p -- true")
	[ "$SRT_OK" = 1 ] && rows+=("srt, allow-write .|none|srt --settings $WORK/srt-dot.json -c true"
		"srt|none|srt --settings $WORK/srt-$p.json -c true")
	say "timing: allow-write . + $p"
	bench "$p" "${rows[@]}"
done

# the per-command floor, and a session's exec
BWRAP=$(command -v bwrap)
floor=("bwrap floor|none|$BWRAP --ro-bind / / --dev /dev --proc /proc --unshare-net --unshare-pid --die-with-parent true")
[ -r "$TOP/policy.example" ] && floor+=("sbx policy.example|none|$SBX -c $TOP/policy.example -- true")
sess_ok=0
if "$SBX" session start -c "$WORK/pol-dot" --name "scanbench-dot-$$" >/dev/null 2>&1 &&
	"$SBX" session start -c "$WORK/pol-home" --name "scanbench-home-$$" >/dev/null 2>&1; then
	sess_ok=1
	floor+=("exec, allow-write .|none|$SBX exec scanbench-dot-$$ -- true"
		"exec, + home|none|$SBX exec scanbench-home-$$ -- true")
fi
say "timing: the floor"
bench floor "${floor[@]}"
if [ "$sess_ok" = 1 ]; then
	"$SBX" session stop "scanbench-dot-$$" >/dev/null 2>&1
	"$SBX" session stop "scanbench-home-$$" >/dev/null 2>&1
fi

# ---- the table: median (min-max) ms, and the ratio to the call's first row
python3 - "$WORK" <<'EOF'
import json, sys, os
work = sys.argv[1]
titles = {"tmp": "allow-write . + tmp (10,000 entries)", "home": "allow-write . + home (100,000 files)",
          "both": "allow-write . + tmp + home", "floor": "the per-command floor"}
print()
print("| policy | run | median ms (min-max) | ratio to the first row |")
print("|---|---|---|---|")
for name in ("tmp", "home", "both", "floor"):
    path = os.path.join(work, name + ".json")
    if not os.path.exists(path):
        continue
    res = json.load(open(path))["results"]
    base = sorted(res[0]["times"])
    for r in res:
        t = sorted(r["times"])
        med = t[len(t) // 2]
        ratio = med / base[len(base) // 2]
        print("| %s | %s | %.1f (%.1f-%.1f) | %.2fx |" % (titles[name], r["command"], med * 1e3, t[0] * 1e3,
              t[-1] * 1e3, ratio))
EOF
say
say "(hyperfine runs each command of a call in turn; ratios are of medians within one call)"
