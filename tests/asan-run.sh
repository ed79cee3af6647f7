#!/bin/sh
# tests/asan-run.sh SBX FILTER... : `make test-asan`'s second half. Runs `./test.sh FILTER`
# against the sanitizer build SBX, once per FILTER (each prints its own "N passed, M failed"),
# with every sanitizer report of every sbx process collected through one FIFO (see
# tests/asan_hooks.c). Fails if any test fails or any report arrived; then prints the reports.
# ASAN_OPTIONS and UBSAN_OPTIONS come from the caller (the Makefile).
set -u
cd "$(dirname "$0")/.." || exit 2
[ $# -ge 2 ] || { echo "usage: $0 SBX FILTER..." >&2; exit 2; }
sbx=$(realpath "$1") || exit 2
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/sbx-asan.XXXXXX") || exit 2
mkfifo -m 600 "$dir/reports" || exit 2
# the reader holds the FIFO open read-write too, so it never sees EOF between writers, and a
# writer's non-blocking open never fails with ENXIO while the tests run
cat 0<>"$dir/reports" >"$dir/reports.log" &
reader=$!
trap 'kill $reader 2>/dev/null' EXIT
export SBX_ASAN_FIFO="$dir/reports"

rc=0
for f in "$@"; do
	echo "== SBX=$sbx ./test.sh $f"
	SBX=$sbx ./test.sh "$f" || rc=1
done
sleep 0.5	# let the reader drain what the last processes wrote
kill $reader 2>/dev/null
wait $reader 2>/dev/null
trap - EXIT
if [ -s "$dir/reports.log" ]; then
	echo "FAIL - sanitizer reports ($dir/reports.log):"
	sed 's/^/    /' "$dir/reports.log"
	exit 1
fi
rm -rf "$dir"
[ $rc = 0 ] || { echo "FAIL - test.sh under the sanitizers (no sanitizer report)"; exit 1; }
echo "ok - no sanitizer reports"
