#!/usr/bin/env bash
# bench/overhead.sh: what sbx costs per command, measured against bubblewrap
# itself and against srt (@anthropic-ai/sandbox-runtime 0.0.81).
#
# It is a benchmark, not a test: it prints figures and exits 0, unless the
# bwrap floor or sbx itself could not be run at all (then 1). Missing srt
# (no node/npm, or the install fails) only skips the srt rows, with a reason.
#
# What one run measures (each a median over RUNS runs, after WARMUP runs):
#   1. bare `true`, for the cost of fork+exec alone;
#   2. the bwrap floor: bwrap --ro-bind / / --dev /dev --proc /proc
#      --unshare-net --unshare-pid --die-with-parent true
#      (--unshare-user is added only when bwrap cannot run without it);
#   3. sbx -c policy.example -- true, run from a scratch project directory
#      (sbx refuses its policy in $HOME or /); policy.example has no
#      allow-domain, so this is also the cost of the proxy that always runs
#      (its listeners and variables; the process is forked on the first
#      connection, so a command that never connects starts none);
#   3b. with SBX_BEFORE=/path/to/an/older/sbx, the same with that binary, in
#      the same run (before/after side by side);
#   3c. sbx -c policy.example -- curl through HTTP_PROXY to a host the policy
#      refuses (no allow-domain: the proxy forked on that first connection
#      answers 403), beside sbx -- curl --version (the same execs, both
#      under sh -c, no connection): the difference is what the first
#      refusal costs;
#   3d. sbx exec SESSION -- true: a session started once (sbx session start
#      -c policy.example), then one exec per timed run (target <= 0.3x the
#      floor); beside it, the least any session's exec costs here:
#      bench/session_floor.c (built into the scratch directory, static with
#      musl when it can be), a server that vforks the command on the
#      client's descriptors and sends back its status, one process hop each
#      way, no sandbox (sbx has two: its daemon outside, sbx-init inside),
#      and the same with sbx's two hops (session_floor relay in front of
#      it, one connection to the server kept open), still no sandbox;
#   4. sbx with a 50-path policy (deny-read / allow-write / deny-write lines)
#      over a generated 10,000-file project (100 dirs x 100 files);
#   5. srt --settings F -c true, with F the srt settings equivalent of
#      policy.example, and the same for the 50-path policy;
#   6. sbx's own peak RSS (SBX_REPORT_RSS=1 makes sbx print
#      "sbx: peak RSS <N> KiB"; /usr/bin/time -f %M is the fallback, and that
#      figure is the largest of sbx and its children);
#   7. the mandatory-deny scan over a generated ~110,000-file tree:
#      `sbx --print=argv` (scans, prints the bwrap argv, runs nothing) against
#      the ripgrep pass srt runs before every command, with the same flags.
# The table gives each row's median, min and max in ms and its ratio to the
# bwrap floor; a summary for the README follows, each target marked met or
# not met: sbx `true` <= 1.3x the bwrap floor, peak RSS <= 4 MiB, and the
# scan faster than srt's ripgrep pass.
#
# Timing: hyperfine (-N --warmup 3 --runs 50 --export-json) when installed;
# otherwise a bounded loop timing each run with bash's $EPOCHREALTIME (or
# `date +%s%N` on bash < 5). Output of the timed commands goes through a pipe
# (hyperfine --output=pipe) or to a file, not to /dev/null: some tools take
# shortcuts on /dev/null (ripgrep stops searching at the first match), and srt
# reads rg's list through a pipe, so that is what both scanners get here.
#
# Run:   bench/overhead.sh              (from anywhere; sbx is ../sbx from here,
#                                        built with `make -C .. -s` if missing)
# Knobs: RUNS=50 WARMUP=3  NO_SRT=1 (skip srt)  NO_HYPERFINE=1 (use the loop)
#        SBX_BEFORE=/path/to/sbx (row 3b: an older build, outside any writable root)
#        SRT_VERSION=0.0.81 (installed once into bench/.srt, then reused)
#        SRT_BIN=path (an srt of that version already installed: no npm install)
# Needs: bash, bwrap, awk; optional hyperfine, node+npm (srt), rg and socat
#        (srt needs both; apt-get install ripgrep socat), /usr/bin/time.
# Scratch trees live in one mktemp directory, removed on exit.

set -u -o pipefail

RUNS=${RUNS:-50}
WARMUP=${WARMUP:-3}
SRT_VERSION=${SRT_VERSION:-0.0.81}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SBX=$ROOT/sbx
POLICY=$ROOT/policy.example
SRT_PREFIX=$HERE/.srt
SRT=${SRT_BIN:-$SRT_PREFIX/node_modules/.bin/srt}
TRUE=$(type -P true)        # the binary: bash's `true` is a builtin

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
PROJ=$WORK/project          # rows 3 and 5: a plain scratch project
PROJ50=$WORK/project50      # row 4: 100 dirs x 100 files
SCAN=$WORK/scantree         # row 7: ~110k files
M=$WORK/m                   # per-row output, errors and timings
mkdir -p "$M"

have() { command -v "$1" >/dev/null 2>&1; }
say() { printf '%s\n' "$*"; }
note() { NOTES+=("$*"); say "note: $*" >&2; }
NOTES=()

# ---- results: one entry per row, in the order measured ----------------------
ORDER=()
declare -A LABEL MED MIN MAX SKIP

# ---- timing -----------------------------------------------------------------

# ms SECONDS -> milliseconds with two decimals
ms() { awk -v s="$1" 'BEGIN { printf "%.2f", s * 1000 }'; }

# hyperfine_json_field FILE NAME: the first numeric "NAME": field, in seconds
json_field() { sed -n "s/^ *\"$2\": *\([0-9.eE+-]*\),*$/\1/p" "$1" | head -n 1; }

USE_HYPERFINE=0
HF_OUTPUT=()
if [ -z "${NO_HYPERFINE:-}" ] && have hyperfine; then
	USE_HYPERFINE=1
	# Older hyperfine has no --output; its default (/dev/null) is then used.
	if hyperfine --help 2>/dev/null | grep -q -- '--output'; then
		HF_OUTPUT=(--output=pipe)
	else
		note "this hyperfine has no --output=pipe: timed output goes to /dev/null"
	fi
fi

# now_us: wall clock in microseconds
if [ -n "${EPOCHREALTIME:-}" ]; then
	now_us() { local t=${EPOCHREALTIME//[.,]/}; printf '%s' "$((10#$t))"; }
else
	now_us() { local t; t=$(date +%s%N); printf '%s' "$((t / 1000))"; }
fi

# loop_time OUT CMD...: WARMUP + RUNS runs of CMD; per-run times (us) to OUT.
loop_time() {
	local out=$1 i t0 t1
	shift
	: >"$out"
	for ((i = 0; i < WARMUP; i++)); do "$@" >"$WORK/loop.out" 2>&1; done
	for ((i = 0; i < RUNS; i++)); do
		t0=$(now_us)
		"$@" >"$WORK/loop.out" 2>&1 || return 1
		t1=$(now_us)
		echo $((t1 - t0)) >>"$out"
	done
}

# measure ID LABEL DIR CMD...: time CMD run in DIR; fills MED/MIN/MAX (ms) or
# SKIP[ID] with the reason it could not be timed.
measure() {
	local id=$1 label=$2 dir=$3
	shift 3
	ORDER+=("$id")
	LABEL[$id]=$label
	say "timing: $label" >&2
	# One untimed run first, so a failing command is reported, not timed.
	if ! (cd "$dir" && "$@" >"$M/$id.out" 2>"$M/$id.err"); then
		SKIP[$id]="exits non-zero: $(tr '\n' ' ' <"$M/$id.err" | cut -c1-160)"
		return 1
	fi
	if [ "$USE_HYPERFINE" = 1 ]; then
		local cmd
		cmd=$(printf '%q ' "$@")
		if ! (cd "$dir" && hyperfine -N --warmup "$WARMUP" --runs "$RUNS" \
			"${HF_OUTPUT[@]}" --style none --export-json "$M/$id.json" \
			-- "$cmd") >/dev/null 2>"$M/$id.hf"; then
			SKIP[$id]="hyperfine failed: $(tr '\n' ' ' <"$M/$id.hf" | cut -c1-160)"
			return 1
		fi
		MED[$id]=$(ms "$(json_field "$M/$id.json" median)")
		MIN[$id]=$(ms "$(json_field "$M/$id.json" min)")
		MAX[$id]=$(ms "$(json_field "$M/$id.json" max)")
	else
		if ! (cd "$dir" && loop_time "$M/$id.times" "$@"); then
			SKIP[$id]="failed during the timing loop"
			return 1
		fi
		# median of the sorted per-run times (mean of the middle two when even)
		read -r "MED[$id]" "MIN[$id]" "MAX[$id]" < <(sort -n "$M/$id.times" | awk '
			{ v[NR] = $1 }
			END {
				m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
				printf "%.2f %.2f %.2f\n", m / 1000, v[1] / 1000, v[NR] / 1000
			}')
	fi
	return 0
}

# ratio A B: A / B with two decimals, or "-" when either is missing
ratio() {
	if [ -z "${1:-}" ] || [ -z "${2:-}" ]; then printf -- '-'; return; fi
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }'
}

# le A B: true when A <= B (decimals)
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

# ---- policies -----------------------------------------------------------------

# The policy keywords as policy.example spells them (deny-read or deny_read),
# and what stands between keyword and path (a space, " = ", ": "...).
KW_SEP=' '
kw() {
	local dash=$1 under=${1//-/_}
	if grep -Eq "^[[:space:]]*${under}([[:space:]=:]|$)" "$POLICY" 2>/dev/null; then
		printf '%s' "$under"
	else
		printf '%s' "$dash"
	fi
}
detect_policy_style() {
	local sep
	sep=$(sed -nE 's/^[[:space:]]*(deny|allow)[-_](read|write)([[:space:]]*[=:][[:space:]]*|[[:space:]]+)[^[:space:]].*$/\3/p' \
		"$POLICY" 2>/dev/null | head -n 1)
	[ -n "$sep" ] && KW_SEP=$sep
	KW_DENY_READ=$(kw deny-read)
	KW_ALLOW_WRITE=$(kw allow-write)
	KW_DENY_WRITE=$(kw deny-write)
}

# json_str S: S as a JSON string
json_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }
# json_list S...: a JSON array of strings
json_list() {
	local first=1 s
	printf '['
	for s in "$@"; do
		[ $first = 1 ] || printf ','
		first=0
		json_str "$s"
	done
	printf ']'
}

# policy_paths KEYWORD: the paths policy.example gives KEYWORD (either spelling)
policy_paths() {
	local k=$1 k2=${1//-/_}
	sed -nE "s/^[[:space:]]*(${k}|${k2})([[:space:]]*[=:][[:space:]]*|[[:space:]]+)(.*[^[:space:]])[[:space:]]*$/\3/p" \
		"$POLICY" | sed -E 's/^"(.*)"$/\1/'
}

# srt_settings OUT DENY_READ_FILE ALLOW_WRITE_FILE DENY_WRITE_FILE: write an srt
# settings file with no network and these filesystem lists (one path a line).
srt_settings() {
	local out=$1 dr=() aw=() dw=()
	mapfile -t dr <"$2"
	mapfile -t aw <"$3"
	mapfile -t dw <"$4"
	{
		printf '{"network":{"allowedDomains":[],"deniedDomains":[]},'
		printf '"filesystem":{"denyRead":%s,' "$(json_list "${dr[@]}")"
		printf '"allowWrite":%s,' "$(json_list "${aw[@]}")"
		printf '"denyWrite":%s}}\n' "$(json_list "${dw[@]}")"
	} >"$out"
}

# ---- trees --------------------------------------------------------------------

# make_project50 DIR: 100 dirs x 100 files, plus a .git and a .bashrc
make_project50() {
	local d i
	mkdir -p "$1/.git/hooks"
	: >"$1/.git/HEAD"
	: >"$1/.bashrc"
	for ((i = 0; i < 100; i++)); do
		d=$(printf '%s/d%02d' "$1" "$i")
		mkdir -p "$d"
		(cd "$d" && touch f{00..99}.txt)
	done
}

# make_scan_tree DIR: 10 top dirs x 100 subdirs x 100 files (100k files), the
# mandatory-deny names scattered at several depths, and a node_modules of
# 200 packages x 50 files that both scanners must skip.
make_scan_tree() {
	local root=$1 t s p d
	mkdir -p "$root/.git/hooks" "$root/.vscode"
	: >"$root/.git/HEAD"; : >"$root/.git/config"; : >"$root/.bashrc"
	: >"$root/.git/hooks/pre-commit"; : >"$root/.vscode/settings.json"
	for ((t = 0; t < 10; t++)); do
		for ((s = 0; s < 100; s++)); do
			d=$(printf '%s/t%02d/s%03d' "$root" "$t" "$s")
			mkdir -p "$d"
			(cd "$d" && touch f{00..99}.c)
			case $((s % 25)) in
			0) : >"$d/.bashrc" ;;                           # depth 3
			1) mkdir -p "$d/.vscode" && : >"$d/.vscode/tasks.json" ;;  # depth 4
			2) mkdir -p "$d/.git/hooks" && : >"$d/.git/HEAD" && : >"$d/.git/config" \
				&& : >"$d/.git/hooks/post-checkout" ;;   # HEAD/config depth 4, hook depth 5
			3) : >"$d/.mcp.json"; mkdir -p "$d/.idea" && : >"$d/.idea/workspace.xml" ;;
			esac
		done
		d=$(printf '%s/t%02d' "$root" "$t")
		: >"$d/.zshrc"; : >"$d/.gitmodules"
		mkdir -p "$d/.git/hooks" "$d/.claude/commands"
		: >"$d/.git/HEAD"; : >"$d/.git/hooks/pre-push"; : >"$d/.claude/commands/x.md"
	done
	for ((p = 0; p < 200; p++)); do
		d=$(printf '%s/node_modules/pkg%03d' "$root" "$p")
		mkdir -p "$d/lib"
		(cd "$d" && touch package.json .bashrc lib/m{00..47}.js)
	done
}

# ---- setup --------------------------------------------------------------------

say "sbx overhead benchmark, $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -sr), $(nproc 2>/dev/null || echo '?') CPUs"
if [ "$USE_HYPERFINE" = 1 ]; then
	say "timer: $(hyperfine --version), $RUNS runs after $WARMUP warm-up runs, medians"
else
	say "timer: shell loop ($( [ -n "${EPOCHREALTIME:-}" ] && echo EPOCHREALTIME || echo 'date +%s%N')), $RUNS runs after $WARMUP warm-up runs, medians"
fi

FATAL=0
mkdir -p "$PROJ"

# bwrap floor: unprivileged hosts need --unshare-user to get the other namespaces.
FLOOR=(bwrap --ro-bind / / --dev /dev --proc /proc --unshare-net --unshare-pid --die-with-parent "$TRUE")
if ! have bwrap; then
	say "error: bwrap is not installed (apt-get install bubblewrap): nothing to compare against"
	exit 1
fi
if ! "${FLOOR[@]}" 2>/dev/null; then
	FLOOR=(bwrap --unshare-user "${FLOOR[@]:1}")
	if ! "${FLOOR[@]}" 2>"$WORK/floor.err"; then
		say "error: bwrap cannot run here: $(cat "$WORK/floor.err")"
		exit 1
	fi
	note "bwrap needed --unshare-user here (not running privileged)"
fi

# sbx: build it if it is missing (the Makefile, else the documented cc line).
if [ ! -x "$SBX" ]; then
	say "building sbx: make -C $ROOT -s" >&2
	make -C "$ROOT" -s >&2 2>&1 ||
		(cd "$ROOT" && cc -O2 -Wall -Wextra -o sbx sbx.c) >&2 2>&1
fi
SBX_OK=1
[ -x "$SBX" ] && [ "$ROOT/sbx.c" -nt "$SBX" ] &&
	note "sbx is older than sbx.c: timing the old binary (run make first)"
if [ ! -x "$SBX" ]; then
	note "sbx is missing and could not be built: sbx rows skipped"
	SBX_OK=0
elif [ ! -r "$POLICY" ]; then
	note "$POLICY is missing: sbx rows skipped"
	SBX_OK=0
fi

# Policies. The 50-path one is policy.example plus 17 deny-read, 17 allow-write
# and 16 deny-write lines, all absolute, over the 10k-file project.
say "generating trees in $WORK" >&2
make_project50 "$PROJ50"
make_scan_tree "$SCAN"
SCAN_FILES=$(find "$SCAN" -type f | wc -l)

: >"$WORK/dr"; : >"$WORK/aw"; : >"$WORK/dw"
: >"$WORK/dr50"; : >"$WORK/aw50"; : >"$WORK/dw50"
if [ "$SBX_OK" = 1 ]; then
	detect_policy_style
	policy_paths deny-read >"$WORK/dr"
	policy_paths allow-write >"$WORK/aw"
	policy_paths deny-write >"$WORK/dw"
	for ((i = 0; i < 17; i++)); do
		printf '%s/d%02d/f%02d.txt\n' "$PROJ50" $((i * 5)) $((i * 3)) >>"$WORK/dr50"
		printf '%s/d%02d\n' "$PROJ50" $((i * 5 + 1)) >>"$WORK/aw50"
	done
	for ((i = 0; i < 16; i++)); do
		printf '%s/d%02d/f%02d.txt\n' "$PROJ50" $((i * 5 + 1)) $((i * 2)) >>"$WORK/dw50"
	done
	{
		cat "$POLICY"
		echo
		echo "# generated by bench/overhead.sh: 50 paths over a 100 x 100 tree"
		sed "s|^|$KW_DENY_READ$KW_SEP|" "$WORK/dr50"
		sed "s|^|$KW_ALLOW_WRITE$KW_SEP|" "$WORK/aw50"
		sed "s|^|$KW_DENY_WRITE$KW_SEP|" "$WORK/dw50"
	} >"$WORK/policy50"
	{
		cat "$POLICY"
		echo
		echo "$KW_ALLOW_WRITE$KW_SEP$SCAN"
	} >"$WORK/policy-scan"
fi
# srt settings: the filesystem lines of policy.example, or the usual defaults.
if [ ! -s "$WORK/dr" ] && [ ! -s "$WORK/aw" ]; then
	# shellcheck disable=SC2088  # srt expands ~ itself
	printf '%s\n' '~/.ssh' '~/.aws' '~/.gnupg' >"$WORK/dr"
	echo . >"$WORK/aw"
	[ -r "$POLICY" ] && note "found no deny-read/allow-write lines in policy.example: srt uses denyRead ~/.ssh ~/.aws ~/.gnupg, allowWrite ."
fi
srt_settings "$WORK/srt.json" "$WORK/dr" "$WORK/aw" "$WORK/dw"
cat "$WORK/dr" "$WORK/dr50" >"$WORK/dr+"
cat "$WORK/aw" "$WORK/aw50" >"$WORK/aw+"
cat "$WORK/dw" "$WORK/dw50" >"$WORK/dw+"
srt_settings "$WORK/srt50.json" "$WORK/dr+" "$WORK/aw+" "$WORK/dw+"

# srt: install once into bench/.srt, then reuse it.
SRT_OK=0
SRT_WHY=
if [ -n "${NO_SRT:-}" ]; then
	SRT_WHY="NO_SRT is set"
elif ! have node || ! have npm; then
	SRT_WHY="node/npm not installed"
elif ! have rg || ! have socat; then
	SRT_WHY="srt needs ripgrep and socat (apt-get install ripgrep socat)"
else
	if [ ! -x "$SRT" ] || ! "$SRT" --version 2>/dev/null | grep -qx "$SRT_VERSION"; then
		say "installing srt $SRT_VERSION into $SRT_PREFIX" >&2
		npm install --loglevel=error --no-audit --no-fund --prefix "$SRT_PREFIX" \
			"@anthropic-ai/sandbox-runtime@$SRT_VERSION" >"$WORK/npm.log" 2>&1
	fi
	if [ -x "$SRT" ] && "$SRT" --version 2>/dev/null | grep -qx "$SRT_VERSION"; then
		SRT_OK=1
		node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
		[ "$node_major" -lt 22 ] 2>/dev/null &&
			note "node $(node --version) is older than srt's engines field (>=22.12); srt still ran"
	else
		SRT_WHY="npm install of @anthropic-ai/sandbox-runtime@$SRT_VERSION failed: $(tail -n 3 "$WORK/npm.log" | tr '\n' ' ' | cut -c1-200)"
	fi
fi
[ "$SRT_OK" = 1 ] || note "srt rows skipped: $SRT_WHY"

# Prefer sbx's own translation of each policy (--print=json writes srt
# settings, paths resolved against the directory srt will run in); keep the
# one made above if sbx cannot print it or srt refuses what it printed.
SRT_SETTINGS_HOW="translated by this script from the deny-read/allow-write/deny-write lines"
if [ "$SRT_OK" = 1 ] && [ "$SBX_OK" = 1 ]; then
	n=0
	for spec in "$POLICY:$PROJ:srt.json" "$WORK/policy50:$PROJ50:srt50.json"; do
		IFS=: read -r pol dir out <<<"$spec"
		if (cd "$dir" && "$SBX" -c "$pol" --print=json) >"$WORK/sbx-$out" 2>/dev/null &&
			[ "$(head -c 1 "$WORK/sbx-$out")" = "{" ] &&
			(cd "$dir" && "$SRT" --settings "$WORK/sbx-$out" -c true) >/dev/null 2>&1; then
			n=$((n + 1))
		fi
	done
	if [ "$n" = 2 ]; then
		cp "$WORK/sbx-srt.json" "$WORK/srt.json"
		cp "$WORK/sbx-srt50.json" "$WORK/srt50.json"
		SRT_SETTINGS_HOW="sbx --print=json of the same policy"
	fi
fi

# ---- 1-5: per-command start-up ------------------------------------------------

measure true "true (bare)" "$PROJ" "$TRUE" || FATAL=1
measure floor "bwrap floor" "$PROJ" "${FLOOR[@]}" || FATAL=1
if [ "$SBX_OK" = 1 ]; then
	measure sbx "sbx -c policy.example -- true" "$PROJ" "$SBX" -c "$POLICY" -- "$TRUE" || FATAL=1
	if [ -n "${SBX_BEFORE:-}" ]; then
		measure sbx_before "SBX_BEFORE -c policy.example -- true" "$PROJ" "$SBX_BEFORE" -c "$POLICY" -- "$TRUE"
	fi
	if have curl; then
		CURL=$(type -P curl)
		measure sbx_curl_v "sbx -- curl --version" "$PROJ" "$SBX" -c "$POLICY" -- \
			sh -c '"$1" --version >/dev/null' sh "$CURL"
		# -w so the untimed run fails unless the proxy answered 403
		measure sbx_curl_403 "sbx -- curl, refused (403)" "$PROJ" "$SBX" -c "$POLICY" -- \
			sh -c '[ "$("$1" -s -o /dev/null -w "%{http_code}" http://example.invalid/)" = 403 ]' sh "$CURL"
	fi
	measure sbx50 "sbx, 50 policy paths, 10k files" "$PROJ50" "$SBX" -c "$WORK/policy50" -- "$TRUE" || FATAL=1
	# 3d. a session: the sandbox built once, then one exec per command
	SESSION_NAME=bench-$$
	if (cd "$PROJ" && "$SBX" session start -c "$POLICY" --name "$SESSION_NAME" --idle=600 >/dev/null 2>"$M/session.err"); then
		measure sbx_exec "sbx exec SESSION -- true" "$PROJ" "$SBX" exec "$SESSION_NAME" -- "$TRUE"
		"$SBX" session stop "$SESSION_NAME" >/dev/null 2>&1
		SF_CC=$(command -v musl-gcc >/dev/null 2>&1 && echo "musl-gcc -static" || echo cc)
		# shellcheck disable=SC2086  # SF_CC may carry -static
		if $SF_CC -O2 -o "$WORK/session_floor" "$ROOT/bench/session_floor.c" 2>"$M/session_floor.err"; then
			"$WORK/session_floor" serve "$WORK/sf.sock" &
			SF_PID=$!
			for _ in $(seq 50); do [ -S "$WORK/sf.sock" ] && break; sleep 0.02; done
			measure session_floor "  one hop, no sandbox (session_floor)" "$PROJ" "$WORK/session_floor" run "$WORK/sf.sock" "$TRUE"
			# sbx's shape: a relay in front, one connection to the server kept open
			"$WORK/session_floor" relay "$WORK/sf-relay.sock" "$WORK/sf.sock" &
			SF_RELAY=$!
			for _ in $(seq 50); do [ -S "$WORK/sf-relay.sock" ] && break; sleep 0.02; done
			measure session_floor2 "  two hops, no sandbox (session_floor relay)" "$PROJ" "$WORK/session_floor" run "$WORK/sf-relay.sock" "$TRUE"
			kill "$SF_RELAY" "$SF_PID" 2>/dev/null; wait "$SF_RELAY" "$SF_PID" 2>/dev/null
		else
			ORDER+=(session_floor); LABEL[session_floor]="  one hop, no sandbox (session_floor)"
			SKIP[session_floor]="bench/session_floor.c did not build: $(head -c 160 "$M/session_floor.err")"
		fi
	else
		ORDER+=(sbx_exec); LABEL[sbx_exec]="sbx exec SESSION -- true"
		SKIP[sbx_exec]="the session did not start: $(head -c 160 "$M/session.err")"
	fi
fi
# The floor again, to see how much the machine drifted while sbx was timed.
measure floor2 "bwrap floor (re-run)" "$PROJ" "${FLOOR[@]}"
if [ "$SRT_OK" = 1 ]; then
	measure srt "srt $SRT_VERSION -c true" "$PROJ" "$SRT" --settings "$WORK/srt.json" -c true
	measure srt50 "srt, 50 policy paths, 10k files" "$PROJ50" "$SRT" --settings "$WORK/srt50.json" -c true
fi

# ---- 7: the mandatory-deny scan -----------------------------------------------

RG_SCAN=(rg --files --hidden --no-ignore --no-config --line-buffered --max-depth 4
	--iglob .gitconfig --iglob .gitmodules --iglob .bashrc --iglob .bash_profile
	--iglob .zshrc --iglob .zprofile --iglob .profile --iglob .ripgreprc --iglob .mcp.json
	--iglob '**/.vscode/**' --iglob '**/.idea/**' --iglob '**/.claude/commands/**'
	--iglob '**/.claude/agents/**' --iglob '**/.git/hooks/**' --iglob '**/.git/HEAD'
	--iglob '**/.git/config' -g '!**/node_modules/**')
if [ "$SBX_OK" = 1 ]; then
	measure scan_sbx "scan: sbx --print=argv" "$SCAN" "$SBX" --print=argv -c "$WORK/policy-scan" -- "$TRUE"
fi
if have rg; then
	measure scan_rg "scan: srt's rg pass" "$SCAN" "${RG_SCAN[@]}"
else
	ORDER+=(scan_rg); LABEL[scan_rg]="scan: srt's rg pass"; SKIP[scan_rg]="rg not installed"
fi
# What each found: rg's matches, and the argv words of sbx that name the tree.
RG_HITS=$( [ -s "$M/scan_rg.out" ] && wc -l <"$M/scan_rg.out" || echo '?')
SBX_HITS=$( [ -s "$M/scan_sbx.out" ] && grep -o "${SCAN}[^ '\"]*" "$M/scan_sbx.out" | sort -u | wc -l || echo '?')

# ---- 6: peak RSS ----------------------------------------------------------------

RSS_KIB=
RSS_HOW=
TIME_KIB=
if [ "$SBX_OK" = 1 ]; then
	for ((i = 0; i < 5; i++)); do
		kib=$(cd "$PROJ" && SBX_REPORT_RSS=1 "$SBX" -c "$POLICY" -- "$TRUE" 2>&1 >/dev/null |
			sed -n 's/^sbx: peak RSS \([0-9][0-9]*\) KiB.*/\1/p' | tail -n 1)
		[ -n "$kib" ] || break
		if [ -z "$RSS_KIB" ] || [ "$kib" -gt "$RSS_KIB" ]; then RSS_KIB=$kib; fi
	done
	[ -n "$RSS_KIB" ] && RSS_HOW="sbx's own report (SBX_REPORT_RSS=1), largest of 5 runs"
	if [ -x /usr/bin/time ]; then
		TIME_KIB=$(cd "$PROJ" && /usr/bin/time -f '%M' -o "$WORK/time.out" "$SBX" -c "$POLICY" -- "$TRUE" \
			>/dev/null 2>&1; tail -n 1 "$WORK/time.out")
		if [ -z "$RSS_KIB" ] && [ -n "$TIME_KIB" ]; then
			RSS_KIB=$TIME_KIB
			RSS_HOW="/usr/bin/time -f %M: the largest of sbx and its children (bwrap, the inner helper), not sbx alone"
		fi
	elif [ -z "$RSS_KIB" ]; then
		note "sbx printed no 'sbx: peak RSS' line and /usr/bin/time is missing (apt-get install time)"
	fi
fi

# ---- report -------------------------------------------------------------------

F=${MED[floor]:-}
say ""
printf '%-36s %10s %10s %10s %9s\n' "row" "median ms" "min ms" "max ms" "x floor"
printf '%-36s %10s %10s %10s %9s\n' "---" "---------" "------" "------" "-------"
for id in "${ORDER[@]}"; do
	[ "${id#scan_}" = "$id" ] || continue
	if [ -n "${SKIP[$id]:-}" ]; then
		printf '%-36s skipped: %s\n' "${LABEL[$id]}" "${SKIP[$id]}"
	else
		printf '%-36s %10s %10s %10s %9s\n' "${LABEL[$id]}" "${MED[$id]}" "${MIN[$id]}" "${MAX[$id]}" "$(ratio "${MED[$id]}" "$F")"
	fi
done
[ "$SRT_OK" = 1 ] || printf '%-36s skipped: %s\n' "srt rows" "$SRT_WHY"

say ""
say "mandatory-deny scan, $SCAN_FILES files (cwd = tree root):"
printf '%-36s %10s %10s %10s %9s\n' "row" "median ms" "min ms" "max ms" "x rg"
for id in scan_sbx scan_rg; do
	[ -n "${LABEL[$id]:-}" ] || continue
	if [ -n "${SKIP[$id]:-}" ]; then
		printf '%-36s skipped: %s\n' "${LABEL[$id]}" "${SKIP[$id]}"
	else
		printf '%-36s %10s %10s %10s %9s\n' "${LABEL[$id]}" "${MED[$id]}" "${MIN[$id]}" "${MAX[$id]}" "$(ratio "${MED[$id]}" "${MED[scan_rg]:-}")"
	fi
done
[ -n "${MED[scan_sbx]:-}" ] && [ -n "${MED[scan_rg]:-}" ] &&
	say "  found: rg lists $RG_HITS paths; sbx's argv names $SBX_HITS distinct paths in the tree"

say ""
if [ -n "$RSS_KIB" ]; then
	say "sbx peak RSS: $RSS_KIB KiB ($RSS_HOW)"
	[ -n "$TIME_KIB" ] && [ "$RSS_HOW" != "${RSS_HOW#sbx}" ] &&
		say "  /usr/bin/time -f %M (largest of sbx and its children): $TIME_KIB KiB"
else
	say "sbx peak RSS: not measured"
fi

if [ -n "${MED[floor2]:-}" ] && [ -n "$F" ]; then
	drift=$(ratio "${MED[floor2]}" "$F")
	awk -v d="$drift" 'BEGIN { exit !(d > 1.2 || d < 0.83) }' &&
		note "the bwrap floor moved from $F ms to ${MED[floor2]} ms during the run: the machine is noisy, re-run for firmer ratios"
fi

# ---- summary for the README ---------------------------------------------------

verdict() { if "$@"; then printf 'met'; else printf 'NOT met'; fi; }
say ""
say "---- summary (paste into README) ----"
say "Measured $(date -u '+%Y-%m-%d') on $(uname -sr), $(nproc 2>/dev/null || echo '?') CPUs, medians of $RUNS runs:"
if [ -n "$F" ]; then
	say "- bwrap floor: $F ms (bare \`true\`: ${MED[true]:-?} ms)."
fi
if [ -n "${MED[sbx]:-}" ] && [ -n "$F" ]; then
	r=$(ratio "${MED[sbx]}" "$F")
	say "- sbx \`true\`: ${MED[sbx]} ms, ${r}x the floor; target <= 1.3x: $(verdict le "$r" 1.3)."
else
	say "- sbx \`true\`: not measured (${SKIP[sbx]:-sbx unavailable}); target <= 1.3x: not met."
fi
if [ -n "${MED[sbx_exec]:-}" ] && [ -n "$F" ]; then
	r=$(ratio "${MED[sbx_exec]}" "$F")
	line="- sbx exec SESSION -- true: ${MED[sbx_exec]} ms, ${r}x the floor; target <= 0.3x: $(verdict le "$r" 0.3)"
	[ -n "${MED[session_floor]:-}" ] && line+="; the least a session's exec costs here (one hop, no sandbox): ${MED[session_floor]} ms, $(ratio "${MED[session_floor]}" "$F")x"
	[ -n "${MED[session_floor2]:-}" ] && line+="; with sbx's two hops (no sandbox): ${MED[session_floor2]} ms, $(ratio "${MED[session_floor2]}" "$F")x"
	say "$line."
fi
if [ -n "${MED[sbx50]:-}" ]; then
	say "- sbx with 50 policy paths over 10k files: ${MED[sbx50]} ms, $(ratio "${MED[sbx50]}" "$F")x the floor."
fi
if [ -n "${MED[srt]:-}" ]; then
	say "- srt settings: $SRT_SETTINGS_HOW."
	say "- srt $SRT_VERSION \`true\`: ${MED[srt]} ms, $(ratio "${MED[srt]}" "$F")x the floor$( [ -n "${MED[sbx]:-}" ] && printf ', %sx sbx' "$(ratio "${MED[srt]}" "${MED[sbx]}")" ); with 50 paths: ${MED[srt50]:-?} ms."
else
	say "- srt: not measured (${SRT_WHY:-${SKIP[srt]:-?}})."
fi
if [ -n "$RSS_KIB" ]; then
	say "- sbx peak RSS: $RSS_KIB KiB$( [ "${RSS_HOW#/usr}" != "$RSS_HOW" ] && printf ' (incl. children)'); target <= 4 MiB (4096 KiB): $(verdict le "$RSS_KIB" 4096)."
else
	say "- sbx peak RSS: not measured; target <= 4 MiB: not met."
fi
if [ -n "${MED[scan_sbx]:-}" ] && [ -n "${MED[scan_rg]:-}" ]; then
	say "- mandatory-deny scan of $SCAN_FILES files: sbx ${MED[scan_sbx]} ms vs srt's rg pass ${MED[scan_rg]} ms ($(ratio "${MED[scan_sbx]}" "${MED[scan_rg]}")x); target faster than rg: $(verdict awk -v a="${MED[scan_sbx]}" -v b="${MED[scan_rg]}" 'BEGIN { exit !(a < b) }')."
else
	say "- mandatory-deny scan: not compared (${SKIP[scan_sbx]:-${SKIP[scan_rg]:-sbx unavailable}}); target faster than rg: not met."
fi
for n in "${NOTES[@]}"; do say "- note: $n"; done

[ "$SBX_OK" = 1 ] || FATAL=1
exit "$FATAL"
