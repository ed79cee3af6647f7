#!/usr/bin/env bash
# bench/syscalls.sh: what the seccomp filters cost a syscall-heavy command.
#
# Runs, in one go and side by side, under the bare bwrap floor and under sbx
# (default policy, filters installed, nested namespaces):
#   - 1,000,000 raw getpid() calls (bench/getpid_loop.c): each one runs the
#     filter program; the difference is the filter's per-syscall cost;
#   - find over a generated 10,000-file tree (stat-heavy, read-only paths:
#     openat and newfstatat are never named by a rule, so they take the
#     shortest way through the program).
# Target: each within 3% of bare bwrap. A benchmark, not a test: it prints.
# Run: bench/syscalls.sh   (hyperfine from Debian is used when present)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sbx=$here/../sbx
[ -x "$sbx" ] || make -C "$here/.." -s sbx
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/getpid_loop" "$here/getpid_loop.c"
mkdir -p "$work/proj"; for d in $(seq 100); do mkdir "$work/proj/d$d"; for f in $(seq 100); do : >"$work/proj/d$d/f$f"; done; done
floor="bwrap --ro-bind / / --dev /dev --proc /proc --unshare-net --unshare-pid --unshare-user --die-with-parent"
cd "$work/proj"
run() { # run NAME CMD...: median ms over RUNS runs
	local name=$1; shift
	if command -v hyperfine >/dev/null; then
		hyperfine -N --warmup 3 --runs "${RUNS:-30}" --export-json "$work/h.json" "$*" >/dev/null 2>&1
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.2f" % (r["median"]*1000))' "$work/h.json"
	else
		local i t0 ts=()
		for i in $(seq "${RUNS:-30}"); do t0=$(date +%s%N); "$@" >/dev/null; ts+=($(( ($(date +%s%N) - t0) / 1000 ))); done
		printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f\n", a[int((NR+1)/2)]/1000}'
	fi
}
printf '%-34s %10s %10s %8s\n' row "bwrap ms" "sbx ms" "sbx/bwrap"
declare -A A B
for row in "true|true" "1M getpid|$work/getpid_loop" "find 10k files|find $work/proj -type f"; do
	name=${row%%|*}; cmd=${row#*|}
	A[$name]=$(run "$name" $floor $cmd); B[$name]=$(run "$name" "$sbx" -- $cmd)
	printf '%-34s %10s %10s %8s\n' "$name" "${A[$name]}" "${B[$name]}" "$(python3 -c "print('%.3f' % (${B[$name]}/${A[$name]}))")"
done
# Each loop row carries its sandbox's start-up; subtract the `true` row of the same sandbox.
python3 - "${A[true]}" "${B[true]}" "${A[1M getpid]}" "${B[1M getpid]}" "${A[find 10k files]}" "${B[find 10k files]}" <<'PYEOF'
import sys
at, bt, ag, bg, af, bf = map(float, sys.argv[1:])
g_a, g_b, f_a, f_b = ag - at, bg - bt, af - at, bf - bt
print("start-up subtracted: 1M getpid %.1f ms (bwrap) vs %.1f ms (sbx): %+.1f%%, %.1f ns per syscall" % (g_a, g_b, 100 * (g_b - g_a) / g_a, (g_b - g_a) * 1e6 / 1e6))
print("                     find 10k   %.1f ms (bwrap) vs %.1f ms (sbx): %+.1f%%" % (f_a, f_b, 100 * (f_b - f_a) / f_a))
PYEOF
