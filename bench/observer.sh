#!/usr/bin/env bash
# bench/observer.sh: what the write observer (observe-writes) costs.
#
# Two jobs, each run by sbx with the observer on and off, in one hyperfine
# invocation per job so the two are measured side by side:
#   read-heavy:  grep -rc (counting every line: output through a pipe, as GNU grep
#                stops at the first match when it writes to /dev/null) over a generated 20,000-file tree (200 dirs x 100
#                files): reads never trap (write intent is judged in BPF), so
#                the target is within 3%;
#   write-heavy: tar -x of 10,000 files into the project (every create is a
#                notification, read and judged): target within 25%.
# It prints each row's mean and the on/off ratio, and a summary line per job
# marked met or not met. A benchmark, not a test: exits 0 unless sbx or
# hyperfine cannot run.
#
# Run:   bench/observer.sh            (sbx is ../sbx, built if missing)
# Knobs: RUNS=15 WARMUP=3 SBX_BIN=path (another sbx binary, e.g. one built before a change)
# Needs: bash, bwrap, hyperfine, python3 (to read hyperfine's JSON), tar, grep.

set -u -o pipefail

RUNS=${RUNS:-15}
WARMUP=${WARMUP:-3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SBX=${SBX_BIN:-$ROOT/sbx}

command -v hyperfine >/dev/null || { echo "bench/observer.sh: hyperfine is not installed" >&2; exit 1; }
[ -x "$SBX" ] || { [ -z "${SBX_BIN:-}" ] && make -C "$ROOT" -s sbx; } || exit 1

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sbx-obs-bench.XXXXXX") || exit 1
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
PROJ=$WORK/proj
TREE=$PROJ/tree
mkdir -p "$TREE" "$WORK/src/x"

# the trees: 20k small files to read, 10k to unpack (in a tarball made outside)
python3 - "$TREE" "$WORK/src/x" <<'PY'
import os, sys
tree, src = sys.argv[1], sys.argv[2]
for d in range(200):
    p = os.path.join(tree, "d%03d" % d)
    os.mkdir(p)
    for f in range(100):
        with open(os.path.join(p, "f%03d.txt" % f), "w") as fh:
            fh.write(("line %d of file %d in dir %d\n" % (0, f, d)) * 20)
for d in range(100):
    p = os.path.join(src, "d%03d" % d)
    os.mkdir(p)
    for f in range(100):
        with open(os.path.join(p, "f%03d.txt" % f), "w") as fh:
            fh.write("x" * 256)
PY
tar -C "$WORK/src" -cf "$WORK/files.tar" x

ratio() { # ratio JSON: mean(on)/mean(off) and both means in ms
	python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
on, off = r[0]["mean"] * 1000, r[1]["mean"] * 1000
print("%.1f %.1f %.3f" % (on, off, on / off))
PY
}

cd "$PROJ" || exit 1
echo "== read-heavy: grep -r over 20,000 files (observer on vs off)"
hyperfine -N --output=pipe --warmup "$WARMUP" --runs "$RUNS" --export-json "$WORK/read.json" \
	-n on "$SBX --allow-write=$PROJ --observe-writes=on -- grep -rc line $TREE" \
	-n off "$SBX --allow-write=$PROJ --observe-writes=off -- grep -rc line $TREE" >"$WORK/read.out" 2>&1 ||
	{ cat "$WORK/read.out"; exit 1; }
read -r r_on r_off r_ratio < <(ratio "$WORK/read.json")

echo "== write-heavy: tar -x of 10,000 files into the project (observer on vs off)"
hyperfine -N --output=pipe --warmup "$WARMUP" --runs "$RUNS" --export-json "$WORK/write.json" --prepare "rm -rf $PROJ/x" \
	-n on "$SBX --allow-write=$PROJ --observe-writes=on -- tar -xf $WORK/files.tar -C $PROJ" \
	-n off "$SBX --allow-write=$PROJ --observe-writes=off -- tar -xf $WORK/files.tar -C $PROJ" >"$WORK/write.out" 2>&1 ||
	{ cat "$WORK/write.out"; exit 1; }
read -r w_on w_off w_ratio < <(ratio "$WORK/write.json")

verdict() { python3 -c "import sys; print('met' if float(sys.argv[1]) <= float(sys.argv[2]) else 'NOT met')" "$1" "$2"; }
printf '%-12s %10s %10s %8s  %s\n' job "on (ms)" "off (ms)" ratio target
printf '%-12s %10s %10s %8s  %s\n' read-heavy "$r_on" "$r_off" "$r_ratio" "<= 1.03: $(verdict "$r_ratio" 1.03)"
printf '%-12s %10s %10s %8s  %s\n' write-heavy "$w_on" "$w_off" "$w_ratio" "<= 1.25: $(verdict "$w_ratio" 1.25)"
exit 0
