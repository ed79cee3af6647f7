#!/usr/bin/env bash
# test.sh - integration tests for sbx. Runs the REAL ./sbx under the REAL bwrap.
#
# Usage
#   ./test.sh                 run every test
#   ./test.sh SUBSTRING...    run only the tests whose name contains one of the SUBSTRINGs
#   SBX=/path/to/sbx ./test.sh    test that binary instead of ./sbx (nothing is built)
#   SBX_TEST_TIMEOUT=60       seconds allowed for one sbx invocation (default 60)
#   SBX_TEST_DIR=/some/dir    where the per-run scratch dir is made (default $TMPDIR or /tmp)
#   SBX_TEST_VERBOSE=1        also print the log of passing and skipped tests
#
# Without SBX, ./sbx is built with `make -s sbx` when it is missing or older than sbx.c.
# The helpers tests/helpers/fsop.c and sysprobe.c are compiled into the scratch dir at start.
#
# Conventions
#   * Each test is a function t_NAME, registered by `TESTS+=(NAME)` right after it (as in
#     tests/*.tests.sh). Tests run in TESTS order: this file's in the order they are defined,
#     then those of tests/*.tests.sh, file by file in glob order. Each runs in a subshell
#     in its own fresh scratch dir $T (under one `mktemp -d` per run, removed at exit):
#       $P = $T/proj   the project dir: cwd of sbx for the test
#       $H = $T/home   fake HOME (exported), never the real home
#       $O = $T/out    an "outside" dir: exists on disk, not a writable root
#     Policy files and logs live in $T, outside the project, so they never show up in
#     tree snapshots of $P.
#   * A test passes by reaching its end; `fail MSG` and `skip MSG` end it. A skip is only
#     for a capability the machine lacks. Missing bwrap / unusable user namespaces FAIL.
#   * Every denial assertion has a control in the same test (the allowed case works in
#     the same run), so a broken setup cannot pass as a refusal.
#   * run_sbx ARGS... runs "$SBX" ARGS... and sets RC, OUT, ERR (logged to $T/.log,
#     which is printed indented when the test fails).
#   * run_ops SBX-ARGS... <<EOF runs `fsop -` in the sandbox: each stdin line is
#     "LABEL OP ARGS" and fsop prints "LABEL RESULT" where RESULT is ok, ok:DATA or an
#     errno name (EROFS, EXDEV, EBUSY...). expect_ops <<EOF then checks "LABEL REGEX" lines
#     (REGEX is a bash ERE matched against the whole result).
#   * Output: "ok - NAME", "FAIL - NAME: why" (+ log), "skip - NAME: reason", then exactly
#     one last line "N passed, M failed[, K skipped]". Exit status is non-zero iff M > 0.
set -u
export LC_ALL=C
unset SANDBOX_RUNTIME
# a parent proxy of the machine's would change every proxy test's route (sbx reads these, as srt)
unset HTTP_PROXY HTTPS_PROXY http_proxy https_proxy NO_PROXY no_proxy ALL_PROXY all_proxy
cd "$(dirname "$0")" || exit 2
HERE=$(pwd -P)
FILTERS=("$@")
TMO=${SBX_TEST_TIMEOUT:-60}
SUMMARY_DONE=

die_early() { # print a failure and the summary line, exit
	echo "FAIL - $1"
	echo "0 passed, 1 failed"
	SUMMARY_DONE=1
	exit 1
}

# ================================================================ harness
# ---------------------------------------------------------------- build
if [ -z "${SBX:-}" ]; then
	if [ ! -x ./sbx ] || [ sbx.c -nt ./sbx ] || [ seccomp_bpf.h -nt ./sbx ]; then
		make -s sbx >/dev/null 2>"${TMPDIR:-/tmp}/sbx-build.$$" || {
			sed 's/^/    /' "${TMPDIR:-/tmp}/sbx-build.$$"; rm -f "${TMPDIR:-/tmp}/sbx-build.$$"
			die_early "build: make -s sbx failed"; }
		rm -f "${TMPDIR:-/tmp}/sbx-build.$$"
	fi
	SBX=$HERE/sbx
fi
[ -x "$SBX" ] || die_early "build: $SBX is not an executable"
SBX=$(realpath "$SBX")

# ---------------------------------------------------------------- a private view of sbx's places
# The suite never reads or writes the person's own runtime places (sbx's runtime directory in
# /tmp, /var/tmp, /dev/shm, /run/user/UID and ~/.cache, and the sessions in them). As root it
# runs itself again in a private mount namespace with an empty tmpfs over /tmp, /var/tmp,
# /dev/shm and /run/user, so every run starts from a fresh machine's state, and it tests the
# same binary. A checkout (or SBX, or SBX_TEST_DIR) under one of those is bound back at its
# own path. Afterwards the outer run checks that the real places are as they were: one more
# test, real_runtime_places_unchanged. Where the namespace cannot be made (not root), the
# tests that change those places themselves skip, saying why (need_private_places).
SBX_UID=$(id -u)
real_places_snapshot() { # every runtime place sbx could use, as it is on the real machine
	local p
	for p in /tmp /var/tmp /dev/shm ${XDG_RUNTIME_DIR:+"$XDG_RUNTIME_DIR"} /run/user/"$SBX_UID" "$HOME/.cache"; do
		p=$p/sbx-$SBX_UID
		if [ -e "$p" ] || [ -L "$p" ]; then
			find "$p" -printf '%p %y %m %U %i %s %T@\n' 2>&1 | sort
		else
			echo "$p absent"
		fi
	done
}
if [ -z "${SBX_TEST_PRIVATE:-}" ] && [ "$SBX_UID" = 0 ] && command -v unshare >/dev/null &&
	unshare -m --propagation private true 2>/dev/null; then
	before=$(real_places_snapshot)
	masked="/tmp /var/tmp /dev/shm"; [ -d /run/user ] && masked+=" /run/user"
	rebind=""
	for p in "$HERE" "$(dirname "$SBX")" ${SBX_TEST_DIR:+"$SBX_TEST_DIR"}; do
		for m in $masked; do
			case $(realpath -m "$p")/ in "$m"/*) rebind+=" $(realpath -m "$p")" ;; esac
		done
	done
	inner_tmpdir=${TMPDIR:-}
	for m in $masked; do case ${TMPDIR:-/}/ in "$m"/*) inner_tmpdir= ;; esac; done
	# fd 8 keeps the real root reachable once tmpfs covers the bases: each path to bind
	# back is taken through /proc/self/fd/8 (of mount's own process, which inherits it)
	SBX_TEST_PRIVATE=1 SBX=$SBX TMPDIR=$inner_tmpdir MASKED=$masked REBIND=$rebind \
		unshare -m --propagation private bash -c '
		exec 8</
		for m in $MASKED; do mount -t tmpfs -o mode=1777 sbx-test "$m" || exit 97; done
		for p in $REBIND; do
			mkdir -p "$p" && mount --bind "/proc/self/fd/8$p" "$p" || exit 97
		done
		exec 8<&-
		[ -n "$TMPDIR" ] || unset TMPDIR
		unset XDG_RUNTIME_DIR MASKED REBIND
		exec ./test.sh "$@"' test.sh "$@" | {
		last=
		while IFS= read -r line; do
			if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
				last=$line
			else
				printf '%s\n' "$line"
			fi
		done
		[[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]] ||
			{ echo "FAIL - private_namespace: the suite in its private mount namespace printed no summary"; echo "0 passed, 1 failed"; exit 1; }
		np=${BASH_REMATCH[1]} nf=${BASH_REMATCH[2]} ns=${BASH_REMATCH[4]:-0}
		after=$(real_places_snapshot)
		if [ "$before" = "$after" ]; then
			echo "ok - real_runtime_places_unchanged"; np=$((np + 1))
		else
			echo "FAIL - real_runtime_places_unchanged: the suite changed the machine's own runtime places (or sbx ran outside it meanwhile)"
			diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") | head -n 20 | sed 's/^/    /'
			nf=$((nf + 1))
		fi
		if [ "$ns" -gt 0 ]; then echo "$np passed, $nf failed, $ns skipped"; else echo "$np passed, $nf failed"; fi
		[ "$nf" = 0 ]
	}
	exit $?
fi
# need_private_places: for a test that makes or changes sbx's runtime places itself
need_private_places() {
	[ -n "${SBX_TEST_PRIVATE:-}" ] ||
		skip "it changes sbx's runtime places (/tmp/sbx-UID...), and this run could not make a private mount namespace over them (run the suite as root)"
}

# ---------------------------------------------------------------- per-run scratch
RUN=$(mktemp -d "${SBX_TEST_DIR:-${TMPDIR:-/tmp}}/sbxtest.XXXXXX") || die_early "mktemp failed"
RUN=$(realpath "$RUN")
chmod 755 "$RUN"
TOKBASE="9$$$RANDOM"     # digits; long-running sandboxed commands run `sleep $TOKBASE...`
cleanup() {
	local pid
	for pid in $(procs_with "sleep $TOKBASE"); do kill -KILL "$pid" 2>/dev/null; done
	chmod -R u+w "$RUN" 2>/dev/null
	rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$RUN/bin"
cc -O2 -Wall -o "$RUN/bin/fsop" tests/helpers/fsop.c 2>"$RUN/cc.err" ||
	{ sed 's/^/    /' "$RUN/cc.err"; die_early "helpers: cannot compile tests/helpers/fsop.c"; }
FSOP=$RUN/bin/fsop
cc -O2 -Wall -pthread -o "$RUN/bin/sysprobe" tests/helpers/sysprobe.c 2>"$RUN/cc.err" ||
	{ sed 's/^/    /' "$RUN/cc.err"; die_early "helpers: cannot compile tests/helpers/sysprobe.c"; }
PROBE=$RUN/bin/sysprobe
PY=$(command -v /usr/bin/python3 || command -v python3 || true)   # only to validate JSON output

# ---------------------------------------------------------------- helpers
fail() { printf '%s\n' "$*" >"$T/.why"; exit 1; }
skip() { printf '%s\n' "$*" >"$T/.skip"; exit 77; }
note() { printf '# %s\n' "$*"; }
policy() { cat >"$T/$1"; }           # policy NAME <<EOF : write policy file $T/NAME

log_file() { # log_file TAG FILE : first lines of FILE, indented, into the log
	[ -s "$2" ] || return 0
	head -n 25 "$2" | cut -c1-300 | sed "s/^/  $1| /"
	[ "$(wc -l <"$2")" -le 25 ] || echo "  $1| ..."
}

run_sbx() { # run_sbx ARGS... : run sbx (stdin inherited); sets RC OUT ERR
	printf '$ sbx'; printf ' %q' "$@"; printf '   (cwd %s)\n' "$PWD"
	timeout -k 5 "$TMO" "$SBX" "$@" >"$T/.stdout" 2>"$T/.stderr"
	RC=$?
	OUT=$(cat "$T/.stdout"); ERR=$(cat "$T/.stderr")
	echo "  [exit $RC]"; log_file out "$T/.stdout"; log_file err "$T/.stderr"
	[ "$RC" != 124 ] || note "(timed out after ${TMO}s)"
}

run_ops() { run_sbx "$@" -- "$FSOP" -; }

expect_rc() { # expect_rc N [WHAT]
	[ "$RC" = "$1" ] || fail "${2:-sbx}: expected exit $1, got $RC${ERR:+ (stderr: $(head -c 300 <<<"$ERR"))}"
}
expect_contains() { # expect_contains HAYSTACK NEEDLE WHAT
	[[ $1 == *"$2"* ]] || fail "$3: expected to contain '$2', got '$(head -c 300 <<<"$1")'"
}
expect_not_contains() { # expect_not_contains HAYSTACK NEEDLE WHAT
	[[ $1 != *"$2"* ]] || fail "$3: must not contain '$2'"
}
expect_eq() { # expect_eq GOT WANT WHAT
	[ "$1" = "$2" ] || fail "$3: expected '$2', got '$(head -c 300 <<<"$1")'"
}
result_of() { # result_of LABEL : result printed by fsop for LABEL in $OUT
	awk -v l="$1" '$1 == l { $1 = ""; sub(/^ /, ""); print; exit }' <<<"$OUT"
}
expect_ops() { # stdin: "LABEL REGEX" lines, checked against the fsop results in $OUT
	local label re got bad=
	[ "$RC" = 0 ] || fail "sandboxed fsop: expected exit 0, got $RC${ERR:+ (stderr: $(head -c 300 <<<"$ERR"))}"
	while read -r label re; do
		[ -n "$label" ] || continue
		got=$(result_of "$label")
		[[ $got =~ ^($re)$ ]] || bad+="    $label: want /$re/, got '${got:-<no result>}'"$'\n'
	done
	[ -z "$bad" ] || fail "unexpected operation results:"$'\n'"${bad%$'\n'}"
}

snap() { # snap DIR : tree listing (path type size mode link) + file contents hashes
	(cd "$1" && find . -printf '%p %y %s %m %l\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0r sha256sum)
}
expect_same_tree() { # expect_same_tree DIR BEFORE-FILE WHAT
	snap "$1" >"$T/.snap-after"
	cmp -s "$2" "$T/.snap-after" ||
		fail "$3: tree of $1 changed:"$'\n'"$(diff "$2" "$T/.snap-after" | head -n 30 | sed 's/^/    /')"
}

procs_with() { # procs_with STRING : pids whose command line contains STRING
	local p c
	for p in /proc/[0-9]*; do
		c=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
		[[ $c == *"$1"* ]] && echo "${p#/proc/}"
	done
	return 0
}
wait_gone() { # wait_gone STRING SECS : wait until no process matches; 1 if some remain
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -z "$(procs_with "$1")" ] && return 0
		sleep 0.1
	done
	return 1
}
wait_file_has() { # wait_file_has FILE STRING SECS
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -qF -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
wait_pid() { # wait_pid PID SECS : reap PID, status in WRC; KILLs it and returns 1 on timeout
	local i st
	for ((i = 0; i < $2 * 10; i++)); do
		st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)
		[ -z "$st" ] || [ "$st" = Z ] && break
		sleep 0.1
	done
	if [ -n "$st" ] && [ "$st" != Z ]; then kill -KILL "$1" 2>/dev/null; wait "$1"; WRC=timeout; return 1; fi
	wait "$1"; WRC=$?
	return 0
}
start_bg() { # start_bg OUTFILE ARGS... : start sbx in background, default signal dispositions; BGPID
	local o=$1; shift
	printf '$ sbx'; printf ' %q' "$@"; printf ' &\n'
	"$FSOP" exec-dfl "$SBX" "$@" >"$o" 2>"$o.err" </dev/null &
	BGPID=$!
}
git_env() {
	export GIT_AUTHOR_NAME=sbx-test GIT_AUTHOR_EMAIL=sbx@test.invalid
	export GIT_COMMITTER_NAME=sbx-test GIT_COMMITTER_EMAIL=sbx@test.invalid
	export GIT_CONFIG_NOSYSTEM=1
}

# ---------------------------------------------------------------- the test network host
# for the proxy tests below and those in tests/*.tests.sh
# net_up: a test host in its own network namespace (10.200.N.2, joined to this host by a veth
# at 10.200.N.1) running an HTTP server on :8000 and a line-echo server on :7000, and a private
# hosts file naming it. Only that address and loopback are ever contacted.
net_up() {
	[ "$(id -u)" = 0 ] || skip "network namespaces for the test servers need root"
	command -v ip >/dev/null || skip "ip (iproute2) not installed"
	local try	# another suite's host may hold a number (its namespace's name): another one
	for try in 1 2 3 4 5 6 7 8; do
		NET_N=$(( ($$ + RANDOM) % 200 + 20 )); NS=sbxt$NET_N
		ip netns add "$NS" 2>/dev/null && break
		NS=
	done
	[ -n "$NS" ] || skip "cannot create a network namespace"
	NSIP=10.200.$NET_N.2
	trap 'ip netns del "$NS" 2>/dev/null; ip link del "${NS}h" 2>/dev/null; kill $(jobs -p) 2>/dev/null' EXIT
	ip link add "${NS}h" type veth peer name "${NS}n" && ip link set "${NS}n" netns "$NS" &&
	ip addr add "10.200.$NET_N.1/24" dev "${NS}h" && ip link set "${NS}h" up &&
	ip netns exec "$NS" ip addr add "$NSIP/24" dev "${NS}n" && ip netns exec "$NS" ip link set "${NS}n" up &&
	ip netns exec "$NS" ip link set lo up || fail "cannot wire the test namespace"
	mkdir -p "$T/www"; echo hello-from-test-host >"$T/www/index.html"
	ip netns exec "$NS" python3 -m http.server 8000 --bind "$NSIP" --directory "$T/www" >/dev/null 2>&1 &
	ip netns exec "$NS" python3 -c '
import socket, threading, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], 7000)); s.listen(64)
def echo(c):
    with c:
        while True:
            d = c.recv(65536)
            if not d: break
            c.sendall(d)
while True:
    c, _ = s.accept(); threading.Thread(target=echo, args=(c,), daemon=True).start()' "$NSIP" >/dev/null 2>&1 &
	local i; for i in $(seq 50); do curl -s -m 1 "http://$NSIP:8000/" >/dev/null 2>&1 && break; sleep 0.1; done
	curl -s -m 2 "http://$NSIP:8000/" | grep -q hello-from-test-host || fail "the test host's HTTP server did not start"
	printf '127.0.0.1 localhost\n%s allowed.test denied.test also.allowed.test\n127.0.0.1 rebind.test\n' "$NSIP" >"$T/hosts"
	policy net <<EOF
allow-write .
allow-domain allowed.test
allow-domain *.allowed.test
allow-domain rebind.test
deny-domain denied.test "denied.test is off limits"
deny-domain *:22 "SSH is blocked; use an https:// remote"
EOF
}
# in_net CMD: run CMD with the private hosts file bound over /etc/hosts (a mount namespace)
in_net() { unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$T/hosts" "$@"; }
sbx_net() { # sbx_net SHELL-SCRIPT: run it in the sandbox under the net policy; sets RC OUT ERR
	printf '$ sbx -c net -- sh -c %q\n' "$1"
	timeout -k 5 "$TMO" unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$T/hosts" \
		"$SBX" -c "$T/net" -- sh -c "$1" >"$T/.stdout" 2>"$T/.stderr"
	RC=$?; OUT=$(cat "$T/.stdout"); ERR=$(cat "$T/.stderr")
	echo "  [exit $RC]"; log_file out "$T/.stdout"; log_file err "$T/.stderr"
}

# ================================================================ tests
# In the order they run: TESTS is filled as the functions are defined (see Conventions). That
# order is the order the tests were added in, so a topic (builds, policy) can come up twice.
TESTS=()

# ---------------------------------------------------------------- the parsers' fuzz corpora
t_fuzz_corpus_replay() { # the fuzz targets' corpora replay clean (ASan+UBSan where clang has them): every finding stays fixed
	local t cc_flags="-O1 -g -Wall -Wextra" n=0
	if echo 'int main(void){return 0;}' | cc -fsanitize=address,undefined -x c -o "$T/asan-probe" - 2>/dev/null && "$T/asan-probe"; then
		cc_flags="$cc_flags -fsanitize=address,undefined -fno-sanitize-recover=all"
	fi
	for t in $(sed -n "s/^FUZZ_NAMES *= *//p" "$HERE/Makefile"); do
		[ -f "$HERE/tests/fuzz_$t.c" ] || fail "the Makefile's FUZZ_NAMES names $t, but tests/fuzz_$t.c is missing"
		(cd "$HERE" && cc $cc_flags -o "$T/fuzz_$t" "tests/fuzz_$t.c") >"$T/build.out" 2>&1 || fail "build fuzz_$t: $(head -5 "$T/build.out")"
		[ ! -s "$T/build.out" ] || fail "fuzz_$t builds with warnings: $(head -5 "$T/build.out")"
		(cd "$HERE" && "$T/fuzz_$t" "tests/corpus/$t/") >"$T/replay.out" 2>&1 || fail "fuzz_$t: a corpus input fails: $(tail -8 "$T/replay.out")"
		grep -Eq '^replayed [1-9][0-9]* inputs$' "$T/replay.out" || fail "fuzz_$t replayed nothing: $(tail -3 "$T/replay.out")"
		note "fuzz_$t: $(tail -1 "$T/replay.out")"
		n=$((n + 1))
	done
	[ $n -ge 1 ] || fail "no fuzz targets found"
	for t in "$HERE"/tests/fuzz_*.c; do	# every target is replayed: none left off the list
		t=${t##*/fuzz_}; t=${t%.c}
		[ "$t" = main ] || grep -Eq "^FUZZ_NAMES *=.* $t( |\$)" "$HERE/Makefile" ||
			fail "tests/fuzz_$t.c is not in the Makefile's FUZZ_NAMES: its corpus would never be replayed"
	done
}
TESTS+=(fuzz_corpus_replay)

# ---------------------------------------------------------------- network: host ports, proxy, --explain
t_allow_host_port() { # allow-host-port PORT: 127.0.0.1:PORT inside reaches this machine's; other ports stay closed
	local port=$(( 20000 + RANDOM % 20000 )) other
	other=$((port + 1))
	mkdir -p "$T/site"; echo host-loopback-service >"$T/site/index.html"
	python3 -m http.server "$port" --bind 127.0.0.1 --directory "$T/site" >/dev/null 2>&1 &
	local srv=$! i
	python3 -m http.server "$other" --bind 127.0.0.1 --directory "$T/site" >/dev/null 2>&1 &
	local srv2=$!
	for i in $(seq 50); do curl -s -m 1 "http://127.0.0.1:$port/" >/dev/null 2>&1 && curl -s -m 1 "http://127.0.0.1:$other/" >/dev/null 2>&1 && break; sleep 0.1; done
	policy p <<EOF
allow-write .
allow-host-port $port
EOF
	# NO_PROXY covers loopback, so clients dial 127.0.0.1 directly, as they would outside
	run_sbx -c "$T/p" -- sh -c "curl -s -m 5 http://127.0.0.1:$port/; echo rc=\$?; curl -s -m 5 http://127.0.0.1:$other/; echo other-rc=\$?"
	kill $srv $srv2 2>/dev/null
	expect_contains "$OUT" host-loopback-service "the host's loopback service through allow-host-port"
	expect_contains "$OUT" "rc=0" "curl to the allowed port"
	grep -q 'other-rc=0' <<<"$OUT" && fail "a port not named by allow-host-port was reachable"
	run_sbx -c "$T/p" --print=policy
	expect_contains "$OUT" "allow-host-port $port" "--print=policy shows it"
	run_sbx -c "$T/p" --print=json
	expect_contains "$OUT" "\"allowHostPorts\"" "--print=json shows it"
}
TESTS+=(allow_host_port)

t_proxy_locked_down() { # the proxy process: NoNewPrivs, under its own seccomp filter, non-dumpable; it still works
	net_up
	in_net "$SBX" -c "$T/net" -- sh -c 'curl -s -m 5 http://allowed.test:8000/ >"$1"; sleep 4' sh "$P/got" >"$T/bg.out" 2>&1 &
	local spid=$! i proxy= c
	# $spid is the subshell; below it sbx; the proxy is sbx's child that runs sbx's own image (bwrap is the other)
	local sbxpid=
	for i in $(seq 50); do
		sbxpid=$(pgrep -P $spid -f "$SBX" | head -1)
		for c in $( [ -n "$sbxpid" ] && pgrep -P "$sbxpid"); do
			[ "$(cat "/proc/$c/comm" 2>/dev/null)" = sbx-observer ] && continue   # the write observer
			[ "$(tr '\0' ' ' 2>/dev/null <"/proc/$c/cmdline" | cut -d' ' -f1)" = "$SBX" ] && proxy=$c
		done
		[ -n "$proxy" ] && break; sleep 0.1
	done
	[ -n "$proxy" ] || { kill $spid; fail "no proxy process found under sbx"; }
	for i in $(seq 50); do [ -s "$P/got" ] && break; sleep 0.1; done   # it has served: it is locked down by now
	local st; st=$(grep -E '^(NoNewPrivs|Seccomp):' "/proc/$proxy/status")
	note "proxy $proxy: $st"
	grep -Eq '^NoNewPrivs:[[:space:]]*1$' <<<"$st" || fail "proxy NoNewPrivs is not 1: $st"
	grep -Eq '^Seccomp:[[:space:]]*2$' <<<"$st" || fail "proxy is not under a seccomp filter: $st"
	wait $spid
	grep -q hello-from-test-host "$P/got" || fail "control: the locked-down proxy did not serve a request"
}
TESTS+=(proxy_locked_down)

t_proxy_git_ssh_command() { # ssh through GIT_SSH_COMMAND with sbx --connect (socat hidden): the refusal text, and a tunnel
	net_up
	command -v ssh >/dev/null || skip "ssh (openssh-client) not installed"
	cat >>"$T/net" <<EOF
deny-read $(command -v socat 2>/dev/null || echo /usr/bin/socat)
EOF
	sbx_net 'echo "[$GIT_SSH_COMMAND]"; command -v socat >/dev/null && socat -V >/dev/null 2>&1 && echo socat-usable
		sh -c "$GIT_SSH_COMMAND -o BatchMode=yes -o StrictHostKeyChecking=no git@allowed.test true" 2>&1 | head -3
		GIT_SSH_VARIANT=ssh git ls-remote git@allowed.test:repo.git 2>&1 | head -3
		P=$(printf "%s" "$GIT_SSH_COMMAND" | sed "s/.*ProxyCommand=.\([^ ]*\) .*/\1/"); echo "proxycommand=$P"
		echo ping-through-connect | "$P" --connect allowed.test 7000
		"$P" --connect denied.test 7000 </dev/null; echo "denied-rc=$?"'
	note "$OUT"; note "$ERR"
	expect_contains "$OUT" "ProxyCommand=" "GIT_SSH_COMMAND is set"
	grep -q socat-usable <<<"$OUT" && fail "socat is still usable inside (the test hides it)"
	[ "$(grep -c 'SSH is blocked; use an https:// remote' <<<"$OUT")" -ge 2 ] || fail "ssh and git ls-remote do not both print the deny reason"
	expect_contains "$OUT" "ping-through-connect" "sbx --connect tunnels to an allowed host"
	expect_contains "$OUT" "denied-rc=1" "sbx --connect to a denied host fails"
	expect_contains "$ERR" "403 denied.test is off limits" "and says why"
}
TESTS+=(proxy_git_ssh_command)

t_proxy_protocols() { # curl through the proxy: absolute-URI HTTP, CONNECT, SOCKS5 (hostname), SOCKS4a; direct fails
	net_up
	sbx_net 'curl -s -m 5 http://allowed.test:8000/; echo "a=$?"
		curl -s -m 5 -p http://allowed.test:8000/; echo "c=$?"
		curl -s -m 5 --socks5-hostname 127.0.0.1:1080 http://also.allowed.test:8000/; echo "s5=$?"
		curl -s -m 5 --socks4a 127.0.0.1:1080 http://allowed.test:8000/; echo "s4=$?"
		curl -s -m 3 --noproxy "*" http://allowed.test:8000/; echo "direct=$?"'
	expect_rc 0
	local k; for k in a c s5 s4; do
		grep -q "^hello-from-test-host$" <<<"$OUT" && grep -q "^$k=0$" <<<"$OUT" || fail "$k: request through the proxy failed: $OUT"
	done
	[ "$(grep -c '^hello-from-test-host$' <<<"$OUT")" = 4 ] || fail "not every protocol fetched the page: $OUT"
	grep -q '^direct=0$' <<<"$OUT" && fail "a direct connection (no proxy) succeeded"
	# raw TCP through CONNECT and SOCKS5 (python's socket, the echo server)
	sbx_net 'python3 - <<EOF
import socket, struct
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT allowed.test:7000 HTTP/1.1\r\nHost: allowed.test:7000\r\n\r\n")
r = b""
while b"\r\n\r\n" not in r: r += s.recv(1)
s.sendall(b"ping-connect"); print(r.split(b"\r\n")[0].decode(), s.recv(100).decode())
t = socket.create_connection(("127.0.0.1", 1080))
t.sendall(b"\x05\x01\x00"); assert t.recv(2) == b"\x05\x00"
h = b"allowed.test"; t.sendall(b"\x05\x01\x00\x03" + bytes([len(h)]) + h + struct.pack(">H", 7000))
rep = t.recv(10); t.sendall(b"ping-socks"); print("socks", rep[1], t.recv(100).decode())
EOF'
	expect_contains "$OUT" "HTTP/1.1 200 Connection Established ping-connect" "raw TCP through CONNECT"
	expect_contains "$OUT" "socks 0 ping-socks" "raw TCP through SOCKS5"
}
TESTS+=(proxy_protocols)

t_proxy_refusals() { # srt's replies: 403 reasons, deny beats allow, Host spoof and userinfo, rebinding, SOCKS codes
	net_up
	sbx_net 'curl -si -m 5 http://denied.test:8000/ | tr -d "\r"; echo ===
		curl -s -m 5 -p -o /dev/null -w "%{http_code}\n" http://denied.test:8000/ 2>&1; curl -sv -m 5 -p http://denied.test:8000/ 2>&1 | grep -i "< HTTP/1.1 403" | tr -d "\r"; echo ===
		curl -s -m 5 -o /dev/null -w "spoof=%{http_code}\n" -H "Host: allowed.test:8000" http://denied.test:8000/
		curl -s -m 5 -o /dev/null -w "userinfo-denied=%{http_code}\n" "http://allowed.test@denied.test:8000/"
		curl -s -m 5 -o /dev/null -w "userinfo-allowed=%{http_code}\n" "http://denied.test@allowed.test:8000/"
		curl -sv -m 5 -p http://rebind.test:8000/ 2>&1 | grep -i "< HTTP/1.1 403" | tr -d "\r"
		curl -s -m 5 --socks5-hostname 127.0.0.1:1080 http://denied.test:8000/; echo "socks-denied=$?"
		curl -s -m 5 --socks4a 127.0.0.1:1080 http://denied.test:8000/; echo "socks4-denied=$?"
		curl -s -m 5 -o /dev/null -w "notlisted=%{http_code}\n" http://other.test:8000/'
	note "$OUT"
	expect_contains "$OUT" "HTTP/1.1 403 Forbidden" "absolute-URI deny status"
	expect_contains "$OUT" "X-Proxy-Error: blocked-by-allowlist" "deny header"
	expect_contains "$OUT" "Connection blocked by network allowlist" "deny body"
	expect_contains "$OUT" "< HTTP/1.1 403 denied.test is off limits" "CONNECT deny: the reason is the status phrase"
	expect_contains "$OUT" "spoof=403" "Host header spoof (the target decides)"
	expect_contains "$OUT" "userinfo-denied=403" "userinfo smuggling"
	expect_contains "$OUT" "userinfo-allowed=200" "control: userinfo before an allowed host"
	expect_contains "$OUT" "< HTTP/1.1 403 resolved to a loopback address" "a name resolving to 127.0.0.1"
	expect_contains "$OUT" "socks-denied=97" "SOCKS5 deny (curl: connection not allowed)"
	expect_contains "$OUT" "socks4-denied=97" "SOCKS4 deny"
	expect_contains "$OUT" "notlisted=403" "a host on no list"
}
TESTS+=(proxy_refusals)

t_proxy_ssh_refusal_and_hostile_clients() { # port 22 denied in-band in SSH; garbage and idle clients stall no one
	net_up
	sbx_net 'python3 - <<EOF
import socket, time
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT allowed.test:22 HTTP/1.1\r\nHost: allowed.test:22\r\n\r\n")
time.sleep(0.5); print(repr(s.recv(4096)))
idle = [socket.create_connection(("127.0.0.1", p)) for p in (3128, 1080) for _ in range(20)]   # say nothing
bad = socket.create_connection(("127.0.0.1", 3128)); bad.sendall(b"\x00\xff garbage\r\n\r\n"); print("bad:", bad.recv(100)[:24])
big = socket.create_connection(("127.0.0.1", 3128)); big.sendall(b"GET http://allowed.test:8000/ HTTP/1.1\r\n" + b"X: " + b"a" * 20000 + b"\r\n\r\n"); print("big:", big.recv(100)[:40])
t0 = time.time()
g = socket.create_connection(("127.0.0.1", 3128)); g.sendall(b"GET http://allowed.test:8000/ HTTP/1.1\r\nHost: allowed.test:8000\r\n\r\n")
d = b""
while True:
    x = g.recv(65536)
    if not x: break
    d += x
print("good:", b"hello-from-test-host" in d, "%.2f" % (time.time() - t0))
EOF'
	note "$OUT"
	expect_contains "$OUT" "SSH-2.0-policy_refusal" "the in-band SSH banner"
	expect_contains "$OUT" "SSH is blocked; use an https:// remote" "the SSH disconnect carries the reason"
	expect_contains "$OUT" "bad: b'HTTP/1.1 400 Bad Request" "garbage gets 400"
	expect_contains "$OUT" "big: b'HTTP/1.1 431 Request Header Fields" "an oversized head gets 431"
	grep -q "good: True" <<<"$OUT" || fail "a good request failed next to idle and hostile clients"
	local secs; secs=$(sed -n 's/^good: True //p' <<<"$OUT")
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 1.0 else 1)" "$secs" || fail "the good request took ${secs}s next to 40 idle clients"
	if command -v ssh >/dev/null; then
		sbx_net 'ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o ProxyCommand="socat - PROXY:127.0.0.1:%h:%p,proxyport=3128" git@allowed.test 2>&1 | head -3'
		expect_contains "$OUT" "SSH is blocked; use an https:// remote" "ssh itself prints the reason"
	fi
}
TESTS+=(proxy_ssh_refusal_and_hostile_clients)

t_proxy_environment() { # the variables srt sets (and JVM, node), pointing at the listeners; the same without allow-domain
	net_up
	local vars='env | grep -E "^(HTTPS?_PROXY|https?_proxy|ALL_PROXY|NO_PROXY|FTP_PROXY|RSYNC_PROXY|GRPC_PROXY|JAVA_TOOL_OPTIONS|NODE_USE_ENV_PROXY|CLOUDSDK_PROXY_PORT|GIT_SSH_COMMAND)=" | sort'
	sbx_net "$vars"
	local with=$OUT
	expect_contains "$OUT" "HTTPS_PROXY=http://127.0.0.1:3128" "HTTPS_PROXY"
	expect_contains "$OUT" "https_proxy=http://127.0.0.1:3128" "https_proxy"
	expect_contains "$OUT" "ALL_PROXY=http://127.0.0.1:3128" "ALL_PROXY"
	expect_contains "$OUT" "FTP_PROXY=socks5h://127.0.0.1:1080" "FTP_PROXY"
	expect_contains "$OUT" "NO_PROXY=localhost,127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16" "NO_PROXY as srt"
	expect_contains "$OUT" "-Dhttps.proxyPort=3128" "JAVA_TOOL_OPTIONS"
	expect_contains "$OUT" "NODE_USE_ENV_PROXY=1" "NODE_USE_ENV_PROXY"
	expect_contains "$OUT" "GIT_SSH_COMMAND=ssh " "GIT_SSH_COMMAND"
	# no allow-domain: the proxy still runs, as srt's (3.3): the same variables, the same listeners
	policy nonet <<<"allow-write ."
	in_net "$SBX" -c "$T/nonet" -- sh -c "$vars" >"$T/nonet.out" 2>&1
	expect_eq "$(cat "$T/nonet.out")" "$with" "the same proxy variables without allow-domain"
	local probe='import socket,sys
for port in (3128, 1080):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2); print("listening", port)
    except OSError as e:
        print("closed", port, e.errno)'
	run_sbx -c "$T/nonet" -- python3 -c "$probe"
	expect_contains "$OUT" "listening 3128" "the HTTP listener exists without allow-domain"
	expect_contains "$OUT" "listening 1080" "the SOCKS listener exists without allow-domain"
}
TESTS+=(proxy_environment)

t_proxy_no_allow_domain() { # no allow-domain: refused at once by the proxy (403 + reason, SOCKS 0x02), reported; a direct connect still fails
	net_up
	policy nonet <<<"allow-write ."
	local script='curl -s -m 5 -o /dev/null -w "get=%{http_code} %{time_total}\n" http://allowed.test:8000/
		curl -s -m 5 -i -p -x http://127.0.0.1:3128 http://allowed.test:8000/ 2>/dev/null | head -1 | tr -d "\r"; echo
		curl -s -m 5 -o /dev/null -w "socks=%{http_code}\n" --socks5-hostname 127.0.0.1:1080 http://allowed.test:8000/; echo "socks-rc=$?"
		curl -s -m 5 --noproxy "*" -o /dev/null http://'"$NSIP"':8000/; echo "direct=$?"'
	# attack: a client that honours HTTP_PROXY, with no domain allowed
	in_net "$SBX" -v -c "$T/nonet" -- sh -c "$script" >"$T/nonet.out" 2>"$T/nonet.err"; RC=$?
	OUT=$(cat "$T/nonet.out"); ERR=$(cat "$T/nonet.err")
	log_file out "$T/nonet.out"; log_file err "$T/nonet.err"
	local t; t=$(sed -n 's/^get=403 //p' <<<"$OUT")
	[ -n "$t" ] || fail "curl through HTTP_PROXY did not get a 403 without allow-domain: $OUT"
	awk -v t="$t" 'BEGIN { exit !(t < 1.0) }' || fail "the 403 took $t s, not at once (within a second)"
	expect_contains "$OUT" "HTTP/1.1 403 host is not on the allow list: the policy allows no network" "CONNECT: srt's reason, and why, as the status phrase"
	expect_contains "$OUT" "socks-rc=97" "SOCKS5: refused (reply 0x02), curl exit 97"
	grep -q '^direct=0$' <<<"$OUT" && fail "a direct connection (no proxy) succeeded"
	expect_contains "$OUT" "direct=7" "a direct connect still fails (nothing to route to)"
	expect_contains "$ERR" "sbx: proxy: deny http allowed.test:8000 (host is not on the allow list: the policy allows no network)" "the refusal is reported as a decision"
	expect_contains "$ERR" "sbx:   deny http allowed.test:8000 (host is not on the allow list: the policy allows no network)" "and kept for the summary"
	expect_contains "$ERR" "sbx: network: 0 allowed," "and counted in the summary"
	run_sbx -c "$T/nonet" --explain=registry.npmjs.org:443
	expect_contains "$OUT" "deny (host is not on the allow list: the policy allows no network)" "--explain gives the same reason"
	if command -v npm >/dev/null; then	# without an answer inside, npm retries for ~70 s, then says ENOTFOUND
		SECONDS=0
		run_sbx -c "$T/nonet" -- npm view left-pad version
		note "npm took ${SECONDS}s"
		expect_contains "$ERR$OUT" "403 host is not on the allow list: the policy allows no network" "npm prints the proxy's reason"
		[ "$SECONDS" -le 20 ] || fail "npm took ${SECONDS}s to be refused"
	else
		note "npm not installed: its case not run"
	fi
	# weaker-nested-sandbox changes nothing here: the same listeners, the same refusal
	printf 'allow-write .\nweaker-nested-sandbox\n' >"$T/weak"
	run_sbx -c "$T/weak" -- sh -c 'curl -s -m 5 -o /dev/null -w "weak=%{http_code}\n" http://a.test/'
	expect_contains "$OUT" "weak=403" "weaker-nested-sandbox, no allow-domain: refused by the proxy"
	# control: the same requests with the domain allowed go through the same proxy
	sbx_net "$script"
	expect_contains "$OUT" "get=200" "control: allowed through HTTP_PROXY"
	expect_contains "$OUT" "HTTP/1.1 200 Connection Established" "control: the proxy opens the CONNECT tunnel"
	expect_contains "$OUT" "socks=200" "control: allowed through SOCKS5"
	grep -q '^direct=0$' <<<"$OUT" && fail "control: a direct connection (no proxy) succeeded with allow-domain"
}
TESTS+=(proxy_no_allow_domain)

t_proxy_forked_on_first_connection() { # the proxy is forked when the command first connects: a run that never does has none
	policy nonet <<<"allow-write ."
	kids() { # kids SBX-PID: the comm of each child of sbx but the write observer, sorted, on one line
		local c; for c in $(pgrep -P "$1"); do cat "/proc/$c/comm" 2>/dev/null; done | grep -vx sbx-observer |
			sort | tr '\n' ' '
	}
	local go=$T/go i k=
	# one run: no connection for a while (only bwrap under sbx), then one (the proxy appears)
	"$SBX" -c "$T/nonet" -- sh -c 'i=0; while [ ! -e "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
		curl -s -m 5 -o /dev/null -w "code=%{http_code}\n" http://a.test/; sleep 3' sh "$go" >"$T/bg.out" 2>&1 &
	local bg=$!
	for i in $(seq 50); do k=$(kids $bg); [ -n "$k" ] && break; sleep 0.1; done
	sleep 0.5; k=$(kids $bg)
	note "before any connection, sbx's children: $k"
	[ "$k" = "bwrap " ] || { touch "$go"; wait $bg; fail "no connection yet: sbx's only child is bwrap (no proxy), got '$k'"; }
	touch "$go"
	for i in $(seq 30); do grep -q code= "$T/bg.out" && break; sleep 0.1; done
	k=$(kids $bg)
	note "after the first connection, sbx's children: $k"
	[ "$(wc -w <<<"$k")" = 2 ] || fail "control: after a connection sbx has bwrap and the proxy, got '$k'"
	wait $bg
	expect_contains "$(cat "$T/bg.out")" "code=403" "control: the proxy forked then answered the waiting connection"
}
TESTS+=(proxy_forked_on_first_connection)

t_explain_decisions() { # --explain: srt's decision order, reasons, and the resolved-address guard
	policy p <<'EOF'
allow-domain localhost
allow-domain *.allowed.test
allow-domain 10.200.0.9
deny-domain evil.allowed.test "evil is blocked"
deny-domain *:22 "ssh is blocked; use an https remote"
EOF
	run_sbx -c "$T/p" --explain=localhost:8080
	expect_rc 0 "localhost allowed"; expect_contains "$OUT" "localhost:8080: allow" "localhost"
	run_sbx -c "$T/p" --explain=evil.allowed.test
	expect_rc 1; expect_contains "$OUT" "deny (evil is blocked)" "deny reason"
	run_sbx -c "$T/p" --explain=git.allowed.test:22
	expect_rc 1; expect_contains "$OUT" "deny (ssh is blocked; use an https remote)" "port rule before allow"
	run_sbx -c "$T/p" --explain=other.test
	expect_rc 1; expect_contains "$OUT" "deny (host is not on the allow list)" "not allowed"
	run_sbx -c "$T/p" --explain=0x0a.200.0.9:443
	expect_rc 0; expect_contains "$OUT" "allow" "IPv4 shorthand canonicalised"
	run_sbx -c "$T/p" --explain='a%b'
	expect_rc 1; expect_contains "$OUT" "malformed host" "malformed"
	# names from a private /etc/hosts (a mount namespace): nothing is sent to any resolver
	[ "$(id -u)" = 0 ] && command -v unshare >/dev/null || skip "binding a private /etc/hosts needs root"
	printf '127.0.0.1 localhost\n127.0.0.1 rebind.allowed.test\n169.254.169.254 meta.allowed.test\n10.200.0.7 ok.allowed.test\n' >"$T/hosts"
	unshare -m sh -c 'mount --bind "$1" /etc/hosts && for h in rebind meta ok; do "$2" -c "$3" --explain=$h.allowed.test; echo "rc=$?"; done' sh "$T/hosts" "$SBX" "$T/p" >"$T/explain.out" 2>&1
	note "$(cat "$T/explain.out")"
	grep -q 'rebind.allowed.test:443: deny (resolved to a loopback address)' "$T/explain.out" || fail "a name resolving to 127.0.0.1 not refused"
	grep -q 'meta.allowed.test:443: deny (resolved to a link-local address)' "$T/explain.out" || fail "the metadata address not refused"
	grep -q 'ok.allowed.test:443: allow' "$T/explain.out" || fail "control: a name resolving to 10.200.0.7 not allowed"
}
TESTS+=(explain_decisions)

# ---------------------------------------------------------------- make install
t_make_install() { # make install honours PREFIX and DESTDIR: the binary and the man page
	local root=$T/root
	make -s -C "$HERE" install DESTDIR="$root" PREFIX=/opt/sbx >"$T/install.out" 2>&1 || fail "make install: $(cat "$T/install.out")"
	[ -x "$root/opt/sbx/bin/sbx" ] || fail "no $root/opt/sbx/bin/sbx"
	cmp -s "$root/opt/sbx/share/man/man1/sbx.1" "$HERE/sbx.1" || fail "man page not installed"
	expect_contains "$("$root/opt/sbx/bin/sbx" --version)" "sbx " "installed sbx --version"
}
TESTS+=(make_install)

# ---------------------------------------------------------------- seccomp and the process tree
# probe_in OP [ARG]: the probe's answer inside the default sandbox; probe_out: outside (the control)
probe_in() { "$SBX" -c "$T/p" -- "$PROBE" "$@" 2>&1 | tail -n 1; }
probe_out() { "$PROBE" "$@" 2>&1 | tail -n 1; }
expect_probe() { # expect_probe OP ARG WANT_IN WANT_OUT_REGEX
	local op=$1 arg=$2 want=$3 ctl=$4 got_in got_out
	got_out=$(probe_out "$op" $arg); got_in=$(probe_in "$op" $arg)
	note "$op: outside=$got_out inside=$got_in"
	[[ $got_out =~ ^($ctl)$ ]] || fail "control: $op outside the sandbox gave '$got_out', want /$ctl/"
	[ "$got_in" = "$want" ] || fail "$op inside the sandbox gave '$got_in', want '$want'"
}

t_weaker_and_fail_closed() { # weaker-nested-sandbox keeps the filters; sbx inside sbx fails closed (125), runs nothing
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" --weaker-nested-sandbox -- sh -c 'grep "^Seccomp:" /proc/self/status; '"$(printf '%q' "$PROBE")"' socket_unix; echo x 2>/dev/null >/proc/sys/kernel/printk && echo sysctl-written || echo sysctl-refused'
	expect_rc 0 "weaker-nested-sandbox run"
	expect_contains "$OUT" $'Seccomp:\t2' "filter in a weaker sandbox"
	expect_contains "$OUT" EPERM "socket(AF_UNIX) in a weaker sandbox"
	expect_contains "$OUT" sysctl-refused "/proc/sys in a weaker sandbox"
	run_sbx -c "$T/p" --weaker-nested-sandbox --check
	expect_contains "$OUT" "weaker-nested-sandbox is set" "--check names what is weaker"
	# a sandbox cannot build another one (no mounts, no user namespaces): it must refuse, not run
	cp "$SBX" "$O/sbx-copy"
	run_sbx -c "$T/p" -- "$O/sbx-copy" -c "$T/p" -- touch "$P/inner-ran"
	expect_rc 125 "sbx inside sbx"
	[ ! -e "$P/inner-ran" ] || fail "the command ran although the inner sandbox could not be built"
	run_sbx -c "$T/p" -- touch "$P/outer-ran"
	expect_rc 0 "control: the outer sandbox alone"; [ -e "$P/outer-ran" ] || fail "control command did not run"
}
TESTS+=(weaker_and_fail_closed)

t_seccomp_status() { # the command: no capabilities, NO_NEW_PRIVS, under a seccomp filter
	policy p <<<"allow-write ."
	grep -q '^Seccomp:[[:space:]]*0' /proc/self/status || skip "the test itself runs under seccomp"
	run_sbx -c "$T/p" -- sh -c 'grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status'
	expect_rc 0
	local f
	for f in CapInh CapPrm CapEff CapBnd CapAmb; do
		grep -Eq "^$f:[[:space:]]*0+$" <<<"$OUT" || fail "$f is not empty inside: $(grep "^$f" <<<"$OUT")"
	done
	grep -Eq '^NoNewPrivs:[[:space:]]*1$' <<<"$OUT" || fail "NoNewPrivs is not 1"
	grep -Eq '^Seccomp:[[:space:]]*2$' <<<"$OUT" || fail "Seccomp is not 2 (filter mode)"
}
TESTS+=(seccomp_status)

t_unix_sockets_blocked() { # socket(AF_UNIX) (python, raw, upper bits set), AF_VSOCK, io_uring: EPERM inside
	policy p <<<"allow-write ."
	expect_probe socket_unix "" EPERM ok
	expect_probe socket_unix_hi "" EPERM ok
	expect_probe socket_vsock "" EPERM 'ok|EAFNOSUPPORT|ENODEV|EINVAL|errno[0-9]+'
	expect_probe io_uring_setup "" EPERM 'ok|EPERM|ENOSYS'
	expect_probe socket_inet "" ok ok        # IP sockets stay (the network namespace is the fence there)
	expect_probe socketpair "" ok ok         # socketpair reaches no one outside
	# a Unix socket listening in a readable directory: reachable outside, refused inside
	python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8); time.sleep(30)' "$O/srv.sock" &
	local srv=$!; local i; for i in $(seq 50); do [ -S "$O/srv.sock" ] && break; sleep 0.1; done
	expect_probe connect_unix "$O/srv.sock" EPERM ok
	run_sbx -c "$T/p" -- python3 -c 'import socket; socket.socket(socket.AF_UNIX)'
	[ "$RC" != 0 ] && grep -q 'Operation not permitted' <<<"$ERR" || { kill $srv; fail "python socket(AF_UNIX) not refused with EPERM"; }
	run_sbx -c "$T/p" --allow-all-unix-sockets -- "$PROBE" connect_unix "$O/srv.sock"
	kill $srv 2>/dev/null
	expect_eq "$OUT" ok "allow-all-unix-sockets: connect to the Unix socket"
	run_sbx -c "$T/p" --allow-all-unix-sockets -- "$PROBE" unshare_mnt
	expect_eq "$OUT" EPERM "allow-all-unix-sockets keeps the namespace rules"
	run_sbx -c "$T/p" --allow-unix-socket=/var/run/docker.sock -- "$PROBE" socket_unix
	expect_eq "$OUT" EPERM "allow-unix-socket does not open AF_UNIX on Linux"
	expect_contains "$ERR" "allow-all-unix-sockets" "the warning names the Linux directive"
}
TESTS+=(unix_sockets_blocked)

t_namespaces_blocked() { # unshare -U/-m/-Ur, mount, umount of a deny, fsopen, open_tree, setns, chroot, clone3, keyctl, memfd_secret
	policy p <<EOF
allow-write .
deny-write ./locked
EOF
	mkdir -p "$P/locked" "$P/mnt"
	command -v unshare >/dev/null || skip "unshare(1) not installed"
	unshare -Ur true 2>/dev/null || skip "user namespaces unavailable to the control"
	run_sbx -c "$T/p" -- sh -c 'unshare -U true; echo "U=$?"; unshare -m true; echo "m=$?"; unshare -Ur true; echo "Ur=$?"; mount -t tmpfs none mnt 2>/dev/null; echo "mount=$?"'
	expect_contains "$OUT" "U=1" "unshare -U"; expect_contains "$OUT" "m=1" "unshare -m"
	expect_contains "$OUT" "Ur=1" "unshare -Ur"; expect_contains "$OUT" "mount=" "mount ran"
	grep -q 'mount=0' <<<"$OUT" && fail "mount -t tmpfs succeeded inside"
	expect_probe unshare_user "" EPERM 'ok|EPERM'
	expect_probe unshare_mnt "" EPERM 'ok|EPERM'
	expect_probe mount_tmpfs "$P/mnt" EPERM 'ok|EPERM'
	umount "$P/mnt" 2>/dev/null
	expect_probe umount "$P/locked" EPERM 'EINVAL|EPERM'
	expect_probe fsopen "" EPERM 'ok|EPERM'
	expect_probe open_tree "$P" EPERM 'ok|EPERM'
	expect_probe setns /proc/self/ns/uts EPERM 'ok|EPERM|EINVAL'
	local g; g=$(probe_in setns /proc/1/ns/mnt)
	[ "$g" = EPERM ] || [ "$g" = EACCES ] || fail "setns into init's mount namespace inside gave '$g'"
	expect_probe chroot "$P" EPERM 'ok|EPERM'
	expect_probe clone3 "" ENOSYS 'ok|ENOSYS'
	expect_probe keyctl "" EPERM 'ok|ENOKEY|EACCES'
	# secret memory would hide a path from the write observer: as on a kernel without it
	expect_probe memfd_secret "" ENOSYS 'ok|ENOSYS|EPERM|EINVAL'
	# the deny is still there after all that
	run_ops -c "$T/p" <<<"locked create $P/locked/x"
	expect_ops <<<"locked EROFS"
}
TESTS+=(namespaces_blocked)

t_foreign_abi_killed() { # i386 int 0x80 socketcall and an x32 socket() are killed, not waved through
	[ "$(uname -m)" = x86_64 ] || skip "i386 and x32 are x86_64 ABIs"
	policy p <<<"allow-write ."
	local out; out=$(probe_out int80)
	case $out in ret:*) ;; *) skip "this kernel has no IA32 emulation (int 0x80 outside: $out); the unit interpreter covers the rule";; esac
	expect_probe int80 "" killed:SYS 'ret:.*'
	expect_probe x32 "" killed:SYS 'ret:.*'
}
TESTS+=(foreign_abi_killed)

t_terminal_kept_tiocsti_refused() { # under a pty: tty(1) names a terminal, stty size follows, TIOCSTI EPERM
	command -v script >/dev/null || skip "script(1) (util-linux) not installed"
	policy p <<<"allow-write ."
	script -qec "stty rows 33 cols 101; $(printf '%q' "$SBX") -c $(printf '%q' "$T/p") -- sh -c 'tty; stty size; $(printf '%q' "$PROBE") tiocsti'" "$T/typescript" </dev/null >"$T/pty.out" 2>&1
	note "$(tr -d '\r' <"$T/pty.out")"
	local o; o=$(tr -d '\r' <"$T/pty.out")
	# bwrap's fresh /dev shows the caller's terminal as /dev/console
	grep -Eq '^/dev/(pts/[0-9]+|console)$' <<<"$o" || fail "tty inside does not name a terminal: $o"
	grep -q '^33 101$' <<<"$o" || fail "stty size inside does not follow the outer terminal: $o"
	grep -q '^EPERM$' <<<"$o" || fail "TIOCSTI not refused with EPERM: $o"
	# the control: TIOCSTI outside, on a pty, is not refused by a filter
	script -qec "$(printf '%q' "$PROBE") tiocsti" "$T/ts2" </dev/null >"$T/pty2.out" 2>&1
	grep -q 'EPERM' "$T/pty2.out" && ! grep -q 'dev.tty.legacy_tiocsti' /dev/null 2>&1 && note "TIOCSTI outside: $(tr -d '\r' <"$T/pty2.out") (kernel may disable legacy TIOCSTI)"
	true
}
TESTS+=(terminal_kept_tiocsti_refused)

t_process_isolation() { # only the command's own processes are visible; init cannot be traced, read or killed
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- sh -c '
		for p in /proc/[0-9]*; do n=${p#/proc/}; printf "%s:%s " "$n" "$(tr "\0\n\t" "   " <$p/cmdline | tr -s " " | cut -c1-40)"; done; echo
		'"$(printf '%q' "$PROBE")"' ptrace 1; '"$(printf '%q' "$PROBE")"' vmread 1
		kill -KILL 1; kill -0 1 && echo init-alive
		sleep 30 & s=$!; '"$(printf '%q' "$PROBE")"' ptrace $s; kill $s'
	expect_rc 0
	local pids; pids=$(head -1 <<<"$OUT")
	note "pids inside: $pids"
	grep -q 'bwrap' <<<"$pids" && fail "bwrap is visible inside: $pids"
	grep -q -- '--inner' <<<"$pids" && fail "sbx --inner is visible inside: $pids"
	grep -q '^1:sbx-init ' <<<"$pids" || fail "pid 1 is not sbx's init: $pids"
	# the loop's own $(...) subshells show up too; anything else would be a process outside
	local n; n=$(grep -oE '(^| )[0-9]+:' <<<"$pids" | wc -l)
	[ "$n" -le 4 ] || fail "more processes visible than the command's own ($n): $pids"
	[ "$(sed -n 2p <<<"$OUT")" = EPERM ] || fail "ptrace of init: $(sed -n 2p <<<"$OUT")"
	[ "$(sed -n 3p <<<"$OUT")" = EPERM ] || fail "process_vm_readv of init: $(sed -n 3p <<<"$OUT")"
	expect_contains "$OUT" init-alive "kill -KILL 1 from inside"
	[ "$(sed -n 5p <<<"$OUT")" = ok ] || fail "control: ptrace of the command's own child: $(sed -n 5p <<<"$OUT")"
}
TESTS+=(process_isolation)

t_threads_work() { # clone3 -> ENOSYS must not break threads: pthreads, python threading, git's parallel index
	git_env
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- "$PROBE" threads
	expect_eq "$OUT" ok "8 pthreads"
	run_sbx -c "$T/p" -- python3 -c 'import threading; t=[threading.Thread(target=lambda: None) for _ in range(8)]; [x.start() for x in t]; [x.join() for x in t]; print("py-ok")'
	expect_eq "$OUT" py-ok "python threading"
	mkdir -p "$P/src"; for i in $(seq 200); do echo $i >"$P/src/f$i"; done
	run_sbx -c "$T/p" -- sh -c 'git init -q && git -c index.threads=4 -c core.preloadIndex=true add . && git -c index.threads=4 status --porcelain | wc -l'
	expect_rc 0 "git with a parallel index"
	expect_eq "$OUT" 200 "git status lines"
}
TESTS+=(threads_work)

t_nested_userns_option() { # allow-nested-userns lets unshare -U work; the mount rules stay
	policy p <<<"allow-write ."
	unshare -Ur true 2>/dev/null || skip "user namespaces unavailable to the control"
	run_sbx -c "$T/p" --allow-nested-userns -- sh -c "$(printf '%q' "$PROBE") unshare_user; cat /proc/sys/user/max_user_namespaces"
	expect_eq "$(head -1 <<<"$OUT")" ok "allow-nested-userns: unshare(CLONE_NEWUSER)"
	[ "$(sed -n 2p <<<"$OUT")" != 0 ] || fail "max_user_namespaces is 0 with allow-nested-userns"
	run_sbx -c "$T/p" -- sh -c "cat /proc/sys/user/max_user_namespaces"
	expect_eq "$OUT" 0 "without it, user.max_user_namespaces inside"
	run_sbx -c "$T/p" --allow-nested-userns -- "$PROBE" unshare_mnt
	expect_eq "$OUT" EPERM "allow-nested-userns keeps unshare(CLONE_NEWNS) refused"
}
TESTS+=(nested_userns_option)

# ---------------------------------------------------------------- builds, unit tests, man page
t_unit() { # tests/unit.c: readers, matchers, planner over a fake disk, argv goldens
	(cd "$HERE" && cc -O1 -Wall -Wextra -o "$T/unit" tests/unit.c) >"$T/build.out" 2>&1 || fail "build tests/unit: $(cat "$T/build.out")"
	[ ! -s "$T/build.out" ] || fail "tests/unit builds with warnings: $(head -5 "$T/build.out")"
	(cd "$HERE" && "$T/unit") >"$T/unit.out" 2>&1 || { cat "$T/unit.out"; fail "unit tests failed: $(tail -1 "$T/unit.out")"; }
	note "$(tail -1 "$T/unit.out")"
	grep -Eq '^[1-9][0-9]* passed, 0 failed$' "$T/unit.out" || fail "no passing unit tests counted"
}
TESTS+=(unit)

t_unit_macos() { # the same unit tests with the macOS path compiled in (-DSBX_FORCE_MACOS)
	(cd "$HERE" && cc -O1 -Wall -Wextra -DSBX_FORCE_MACOS -o "$T/unit-macos" tests/unit.c) >"$T/build.out" 2>&1 || fail "build tests/unit-macos: $(cat "$T/build.out")"
	[ ! -s "$T/build.out" ] || fail "tests/unit-macos builds with warnings: $(head -5 "$T/build.out")"
	(cd "$HERE" && "$T/unit-macos") >"$T/unit.out" 2>&1 || { cat "$T/unit.out"; fail "unit tests (macOS build) failed"; }
	grep -Eq '^[1-9][0-9]* passed, 0 failed$' "$T/unit.out" || fail "no passing unit tests counted"
}
TESTS+=(unit_macos)

t_builds_warning_free() { # cc -Wall -Wextra: gcc, clang, aarch64 cross, the macOS path; a plain `cc -o sbx sbx.c`
	local c out n=0
	for c in "gcc -O2 -Wall -Wextra" "gcc -std=c11 -O2 -Wall -Wextra" "clang -O2 -Wall -Wextra" \
	         "aarch64-linux-gnu-gcc -O2 -Wall -Wextra" "gcc -O2 -Wall -Wextra -DSBX_FORCE_MACOS" "cc"; do
		command -v "${c%% *}" >/dev/null || { note "not installed: ${c%% *}"; continue; }
		out=$($c -o "$T/sbx.bin" "$HERE/sbx.c" 2>&1) || fail "$c: build failed: $out"
		[ -z "$out" ] || fail "$c: warnings: $(printf '%s\n' "$out" | head -5)"
		n=$((n + 1))
	done
	[ $n -ge 3 ] || skip "fewer than three compilers available"
	if command -v aarch64-linux-gnu-gcc >/dev/null; then
		aarch64-linux-gnu-gcc -static -O2 -o "$T/sbx.a64" "$HERE/sbx.c" || fail "aarch64 static build failed"
		file "$T/sbx.a64" | grep -q 'aarch64' || fail "cross build is not an aarch64 binary: $(file "$T/sbx.a64")"
		if command -v qemu-aarch64-static >/dev/null; then
			expect_contains "$(qemu-aarch64-static "$T/sbx.a64" --version 2>&1)" "sbx " "aarch64 sbx --version under qemu"
			(cd "$HERE" && aarch64-linux-gnu-gcc -static -O1 -o "$T/unit.a64" tests/unit.c) || fail "aarch64 unit build failed"
			(cd "$HERE" && qemu-aarch64-static "$T/unit.a64") >"$T/unit.out" 2>&1 || fail "unit tests under qemu-aarch64 failed: $(tail -3 "$T/unit.out")"
			note "aarch64 unit tests: $(tail -1 "$T/unit.out")"
		fi
	fi
}
TESTS+=(builds_warning_free)

t_man_page_current() { # sbx.1 is what `sbx --print=man` generates from the tables
	[ -f "$HERE/sbx.1" ] || fail "sbx.1 missing"
	"$SBX" --print=man >"$T/sbx.1" || fail "--print=man failed"
	cmp -s "$T/sbx.1" "$HERE/sbx.1" || fail "sbx.1 is stale: run make sbx.1"
	grep -q '^\.SH POLICY DIRECTIVES' "$HERE/sbx.1" && grep -q 'allow-write' "$HERE/sbx.1" || fail "man page lacks the directives"
	"$SBX" --help >"$T/help" || fail "--help failed"
	local d
	for d in allow-write deny-write deny-read allow-read allow-domain deny-domain deny-address allow-unix-socket \
	         allow-all-unix-sockets allow-local-binding mandatory-deny-depth allow-git-config weaker-nested-sandbox \
	         allow-nested-userns weaker-network-isolation allow-apple-events ignore-violations bridge observe-writes include; do
		grep -q "^  $d" "$T/help" || fail "--help does not list $d"
		grep -q "^\\\\fB$d\\\\fR" "$HERE/sbx.1" || fail "sbx.1 does not list $d"
	done
	# the subcommands, with their options
	for d in "session start" "session list" "session stop" "exec \\[--fd3\\]" "hook claude|codex install" \
	         "hook claude|codex uninstall" "hook claude|codex --print-settings" "hook claude|codex session-start"; do
		grep -q "^  sbx $d" "$T/help" || fail "--help does not list sbx $d"
		grep -q "^\\\\fBsbx ${d//-/\\\\\\-}" "$HERE/sbx.1" || fail "sbx.1 does not list sbx $d"
	done
	grep -q -- "--idle=SECONDS" "$T/help" && grep -q -- "--user|--project" "$T/help" || fail "--help lists the subcommands' options"
}
TESTS+=(man_page_current)

# ---------------------------------------------------------------- preconditions, the command line
t_bwrap_usable() { # precondition: bwrap exists and can build a user-namespace sandbox here
	local bw
	bw=$(command -v bwrap) || fail "bwrap not found on PATH"
	"$bw" --unshare-user --unshare-net --ro-bind / / --dev /dev --proc /proc true ||
		fail "bwrap cannot create a sandbox (user namespaces unusable?)"
	expect_contains "$("$bw" --version)" bubblewrap "bwrap --version"
}
TESTS+=(bwrap_usable)

t_help_version_check() { # --help/--version exit 0; --check prints ok/FAIL: lines, exit 0 iff none FAIL
	local line nfail=0 nok=0
	run_sbx --help;    expect_rc 0 "--help";    [ -n "$OUT$ERR" ] || fail "--help printed nothing"
	run_sbx --version; expect_rc 0 "--version"; [ -n "$OUT$ERR" ] || fail "--version printed nothing"
	run_sbx --check
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		case $line in
		"ok "*) nok=$((nok + 1)) ;;
		FAIL:*) nfail=$((nfail + 1)) ;;
		*) fail "--check: line neither 'ok ' nor 'FAIL:': '$line'" ;;
		esac
	done <<<"$OUT"
	[ "$nok" -gt 0 ] || fail "--check printed no 'ok ' line"
	if [ "$nfail" -gt 0 ]; then
		[ "$RC" != 0 ] || fail "--check printed FAIL: lines but exited 0"
		fail "--check reports $nfail failure(s) on a machine where bwrap works (see log)"
	fi
	expect_rc 0 "--check with no FAIL lines"
}
TESTS+=(help_version_check)

t_argv_parsing() { # options end at the first non-option word; -- also ends them
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" sh -c 'echo "$1"' x y;    expect_rc 0; expect_eq "$OUT" y "sh -c without --"
	run_sbx -c "$T/p" -- sh -c 'echo "$1"' x y; expect_rc 0; expect_eq "$OUT" y "sh -c after --"
	run_sbx -c "$T/p" printf '%s|' -c --help --; expect_rc 0
	expect_eq "$OUT" "-c|--help|--|" "options after the command belong to it"
}
TESTS+=(argv_parsing)

# ---------------------------------------------------------------- policy and paths
t_default_policy_refuses_home_and_root() { # no -c: cwd=$HOME or / -> 125, command never runs
	cd "$H" && run_sbx sh -c 'echo RAN'
	expect_rc 125 "default policy in \$HOME"; expect_not_contains "$OUT" RAN "stdout (cwd=\$HOME)"
	cd / && run_sbx sh -c 'echo RAN'
	expect_rc 125 "default policy in /"; expect_not_contains "$OUT" RAN "stdout (cwd=/)"
	cd "$P" && run_sbx sh -c 'echo RAN'
	expect_rc 0 "control: default policy in a project dir"; expect_eq "$OUT" RAN "control stdout"
}
TESTS+=(default_policy_refuses_home_and_root)

t_default_policy() { # no -c: credentials hidden, other home files readable, cwd writable, rest not
	mkdir -p "$H"/.ssh "$H"/.aws "$H"/.gnupg "$H"/.config/gcloud "$H"/.kube "$H"/.docker
	local f
	for f in .ssh/id_rsa .aws/credentials .gnupg/secring.gpg .config/gcloud/credentials.db \
		.kube/config .docker/config.json .netrc .git-credentials; do echo "SECRET-$f" >"$H/$f"; done
	echo D >"$H/.docker/daemon.json"; echo C >"$H/.config/other.conf"; echo N >"$H/notes.txt"
	run_ops <<EOF
ssh_ls ls $H/.ssh
ssh_key read $H/.ssh/id_rsa
aws read $H/.aws/credentials
gnupg read $H/.gnupg/secring.gpg
gcloud read $H/.config/gcloud/credentials.db
kube read $H/.kube/config
docker read $H/.docker/config.json
netrc read $H/.netrc
gitcred read $H/.git-credentials
ctl_docker read $H/.docker/daemon.json
ctl_config read $H/.config/other.conf
ctl_notes read $H/notes.txt
w_cwd create $P/new.txt
w_outside create $O/new.txt
w_home create $H/new.txt
EOF
	expect_ops <<'EOF'
ssh_ls ok:
ssh_key ok:|E[A-Z0-9]+
aws ok:|E[A-Z0-9]+
gnupg ok:|E[A-Z0-9]+
gcloud ok:|E[A-Z0-9]+
kube ok:|E[A-Z0-9]+
docker ok:
netrc ok:
gitcred ok:
ctl_docker ok:D
ctl_config ok:C
ctl_notes ok:N
w_cwd ok
w_outside EROFS
w_home EROFS
EOF
	expect_eq "$(cat "$P/new.txt" 2>&1)" new "host view of the file written in cwd"
	[ ! -e "$O/new.txt" ] && [ ! -e "$H/new.txt" ] || fail "a write outside cwd reached the disk"
}
TESTS+=(default_policy)

t_deny_read() { # deny-read file -> reads empty (cat succeeds); dir -> appears empty
	mkdir -p "$H/.ssh" "$H/pubdir"
	echo KEY >"$H/.ssh/id_rsa"; echo TOPSECRET >"$H/secret.txt"
	echo PUBLIC >"$H/public.txt"; echo PUB2 >"$H/pubdir/f"
	policy p <<'EOF'
allow-write .
deny-read ~/.ssh
deny-read ~/secret.txt
EOF
	run_ops -c "$T/p" <<EOF
file read $H/secret.txt
dir ls $H/.ssh
inner read $H/.ssh/id_rsa
ctl_file read $H/public.txt
ctl_dir ls $H/pubdir
EOF
	expect_ops <<'EOF'
file ok:
dir ok:
inner ok:|E[A-Z0-9]+
ctl_file ok:PUBLIC
ctl_dir ok:f
EOF
	run_sbx -c "$T/p" -- sh -c 'cat ~/secret.txt; echo "cat-rc=$?"; cat ~/public.txt'
	expect_rc 0; expect_eq "$OUT" "cat-rc=0"$'\n'"PUBLIC" "cat of the denied file, then the control"
}
TESTS+=(deny_read)

t_allow_read_inside_deny_read() { # allow-read re-exposes a dir and a file inside a denied dir
	mkdir -p "$H/data/pub"
	echo S >"$H/data/secret"; echo P >"$H/data/pub/file"; echo F >"$H/data/single"
	policy p <<'EOF'
allow-write .
deny-read ~/data
allow-read ~/data/pub
allow-read ~/data/single
EOF
	run_ops -c "$T/p" <<EOF
secret read $H/data/secret
pubfile read $H/data/pub/file
single read $H/data/single
listing ls $H/data
EOF
	expect_ops <<'EOF'
secret ok:|E[A-Z0-9]+
pubfile ok:P
single ok:F
listing ok:((pub|single),?)*
EOF
}
TESTS+=(allow_read_inside_deny_read)

t_path_forms() { # ~, relative with .., trailing /**, globs * ? [..] **, quoted paths, include
	mkdir -p "$H/keys" "$H/deep/a/b" "$H/with space" "$O/sub"
	echo A >"$H/keys/a.key"; echo B >"$H/keys/b.key"; echo C >"$H/keys/c.txt"
	echo X >"$H/keys/x1"; echo Y >"$H/keys/y1"
	echo S1 >"$H/deep/a/secret.txt"; echo S2 >"$H/deep/a/b/secret.txt"; echo PUB >"$H/deep/a/public.txt"
	echo Q >"$H/with space/q\"uote"; echo R >"$H/with space/ok"; echo I >"$H/inc-secret"; echo O >"$O/other"
	policy inc <<<"deny-read ~/inc-secret"
	policy p <<EOF
# relative to cwd, with .. and the directory-itself suffix
allow-write ../out/sub/**
deny-read ~/keys/*.key
deny-read ~/keys/[x]?
deny-read ~/deep/**/secret.txt
deny-read "$H/with space/q\\"uote"
deny-read ~/nothing-matches-*.zzz
include $T/inc
EOF
	run_ops -c "$T/p" <<EOF
w_sub create $O/sub/new
w_other append $O/other
w_cwd_unlisted create $P/x
star1 read $H/keys/a.key
star2 read $H/keys/b.key
class read $H/keys/x1
ctl_class read $H/keys/y1
ctl_star read $H/keys/c.txt
deep1 read $H/deep/a/secret.txt
deep2 read $H/deep/a/b/secret.txt
ctl_deep read $H/deep/a/public.txt
inc read $H/inc-secret
EOF
	expect_ops <<'EOF'
w_sub ok
w_other EROFS
w_cwd_unlisted EROFS
star1 ok:
star2 ok:
class ok:
ctl_class ok:Y
ctl_star ok:C
deep1 ok:
deep2 ok:
ctl_deep ok:PUB
inc ok:
EOF
	# fsop batch mode splits on blanks, so the quoted path is checked with cat
	run_sbx -c "$T/p" -- sh -c 'cat "$1"; echo "|"; cat "$2"' sh "$H/with space/q\"uote" "$H/with space/ok"
	expect_rc 0; expect_eq "$OUT" "|"$'\n'"R" "quoted path with space and \\\" hidden, neighbour readable"
}
TESTS+=(path_forms)

t_cli_directives() { # --deny-read=, --allow-write=, --deny-write=, --allow-all-unix-sockets
	echo SECRET >"$P/secret.txt"; echo F >"$P/frozen"; echo O >"$O/f"
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- "$FSOP" read secret.txt; expect_rc 0 "control"; expect_eq "$OUT" ok:SECRET "control read"
	run_sbx -c "$T/p" --deny-read=secret.txt -- "$FSOP" read secret.txt
	expect_rc 0; expect_eq "$OUT" ok: "--deny-read=secret.txt with -c"
	run_sbx --deny-read=secret.txt -- "$FSOP" read secret.txt
	expect_rc 0; expect_eq "$OUT" ok: "--deny-read=secret.txt with the default policy"
	run_sbx -c "$T/p" -- "$FSOP" append "$O/f"; expect_rc 1; expect_eq "$OUT" EROFS "control: outside not writable"
	run_sbx -c "$T/p" "--allow-write=$O" -- "$FSOP" append "$O/f"; expect_eq "$OUT" ok "--allow-write=$O"
	run_ops -c "$T/p" "--deny-write=$P/frozen" <<EOF
frozen append $P/frozen
ctl create $P/new
EOF
	expect_ops <<<$'frozen EROFS\nctl ok'
	run_sbx -c "$T/p" --allow-all-unix-sockets -- true; expect_rc 0 "--allow-all-unix-sockets"
}
TESTS+=(cli_directives)

# ---------------------------------------------------------------- writes and mandatory denies
t_write_outside_roots_erofs() { # every kind of write outside the roots -> EROFS; same ops inside work
	echo orig >"$O/file"; echo orig >"$O/ren"; mkdir "$O/dir"
	echo in >"$P/in.txt"; echo in >"$P/ren"; echo mv >"$P/toout"; mkdir "$P/dir"
	policy p <<<"allow-write ."
	snap "$O" >"$T/out.before"
	run_ops -c "$T/p" <<EOF
create create $O/new
append append $O/file
trunc_open trunc $O/file
truncate truncate $O/file
rename rename $O/ren $O/ren2
rename_in rename $P/toout $O/fromproj
rename_out rename $O/ren $P/stolen
unlink unlink $O/file
mkdir mkdir $O/newdir
rmdir rmdir $O/dir
chmod chmod $O/file 777
symlink symlink /etc/passwd $O/sl
link link $O/file $O/hl
link_in link $P/in.txt $O/hl2
c_create create $P/new
c_append append $P/in.txt
c_trunc trunc $P/ren
c_rename rename $P/ren $P/ren2
c_mkdir mkdir $P/newdir
c_rmdir rmdir $P/dir
c_chmod chmod $P/in.txt 600
c_symlink symlink /etc/passwd $P/sl
c_link link $P/in.txt $P/hl
c_unlink unlink $P/hl
EOF
	expect_ops <<'EOF'
create EROFS
append EROFS
trunc_open EROFS
truncate EROFS
rename EROFS
rename_in EROFS|EXDEV
rename_out EROFS|EXDEV
unlink EROFS
mkdir EROFS
rmdir EROFS
chmod EROFS
symlink EROFS
link EROFS
link_in EROFS|EXDEV
c_create ok
c_append ok
c_trunc ok
c_rename ok
c_mkdir ok
c_rmdir ok
c_chmod ok
c_symlink ok
c_link ok
c_unlink ok
EOF
	expect_same_tree "$O" "$T/out.before" "outside dir after the write attempts"
	[ -f "$P/toout" ] && [ ! -e "$P/stolen" ] || fail "a cross-boundary rename moved a file"
	expect_eq "$(cat "$P/new")" new "host view of the control create"
	expect_eq "$(cat "$P/in.txt")" $'in\n+' "host view of the control append"
	[ -d "$P/newdir" ] && [ -e "$P/ren2" ] && [ -L "$P/sl" ] || fail "control ops did not reach the disk"
}
TESTS+=(write_outside_roots_erofs)

t_deny_write_wins() { # deny-write (dir and file) beats an enclosing allow-write
	mkdir "$P/locked"; echo L >"$P/locked/existing"; echo F >"$P/frozen.txt"
	policy p <<'EOF'
allow-write .
deny-write ./locked
deny-write frozen.txt
EOF
	run_ops -c "$T/p" <<EOF
dir_create create $P/locked/new
dir_append append $P/locked/existing
file_append append $P/frozen.txt
file_trunc trunc $P/frozen.txt
file_unlink unlink $P/frozen.txt
ctl_create create $P/other.txt
EOF
	expect_ops <<'EOF'
dir_create EROFS
dir_append EROFS
file_append EROFS
file_trunc EROFS
file_unlink E[A-Z0-9]+
ctl_create ok
EOF
	expect_eq "$(cat "$P/frozen.txt")" F "frozen.txt on disk"
	expect_eq "$(cat "$P/locked/existing")" L "locked/existing on disk"
}
TESTS+=(deny_write_wins)

MANDATORY_FILES=".bashrc .bash_profile .zshrc .zprofile .profile .gitconfig .gitmodules .ripgreprc .mcp.json"

t_mandatory_files_depth() { # default depth 3: dangerous files in dirs at depth 0..2 denied, depth 3 writable
	local f d ops= exp=
	for f in $MANDATORY_FILES; do
		for d in . a a/b a/b/c; do mkdir -p "$P/$d"; echo orig >"$P/$d/$f"; done
		ops+="d0$f append $P/$f"$'\n'"d1$f append $P/a/$f"$'\n'
		ops+="d2$f append $P/a/b/$f"$'\n'"d3$f append $P/a/b/c/$f"$'\n'
		exp+="d0$f EROFS"$'\n'"d1$f EROFS"$'\n'"d2$f EROFS"$'\n'"d3$f ok"$'\n'
	done
	policy p <<<"allow-write ."
	run_ops -c "$T/p" <<<"$ops"
	expect_ops <<<"$exp"
	for f in $MANDATORY_FILES; do
		expect_eq "$(cat "$P/a/b/$f")" orig "a/b/$f on disk"
		expect_eq "$(cat "$P/a/b/c/$f")" $'orig\n+' "a/b/c/$f on disk (beyond the depth)"
	done
}
TESTS+=(mandatory_files_depth)

t_mandatory_dirs_depth() { # default depth 3: .vscode .idea .claude/{commands,agents} denied at depth 0..1
	local d ops= exp= base
	for d in .vscode .idea .claude/commands .claude/agents; do
		for base in . a a/b a/b/c; do mkdir -p "$P/$base/$d"; echo orig >"$P/$base/$d/x"; done
		local k=${d//\//_}
		ops+="d0$k append $P/$d/x"$'\n'"d0n$k create $P/$d/new"$'\n'
		ops+="d1$k append $P/a/$d/x"$'\n'"d1n$k create $P/a/$d/new"$'\n'
		ops+="d3$k append $P/a/b/c/$d/x"$'\n'"d3n$k create $P/a/b/c/$d/new"$'\n'
		exp+="d0$k EROFS"$'\n'"d0n$k EROFS"$'\n'"d1$k EROFS"$'\n'"d1n$k EROFS"$'\n'
		exp+="d3$k ok"$'\n'"d3n$k ok"$'\n'
		case $d in .vscode | .idea) # exact boundary for the simple names: a/b/.vscode is writable
			ops+="d2$k append $P/a/b/$d/x"$'\n'; exp+="d2$k ok"$'\n' ;;
		esac
	done
	policy p <<<"allow-write ."
	run_ops -c "$T/p" <<<"$ops"
	expect_ops <<<"$exp"
	expect_eq "$(cat "$P/a/.vscode/x")" orig "a/.vscode/x on disk"
}
TESTS+=(mandatory_dirs_depth)

t_mandatory_depth_2() { # mandatory-deny-depth 2: a/.bashrc denied, a/b/.bashrc writable; .vscode only at top
	mkdir -p "$P/a/b" "$P/.vscode" "$P/a/.vscode"
	echo o >"$P/a/.bashrc"; echo o >"$P/a/b/.bashrc"; echo o >"$P/.vscode/x"; echo o >"$P/a/.vscode/x"
	policy p <<'EOF'
allow-write .
mandatory-deny-depth 2
EOF
	run_ops -c "$T/p" <<EOF
f1 append $P/a/.bashrc
f2 append $P/a/b/.bashrc
v0 append $P/.vscode/x
v1 append $P/a/.vscode/x
EOF
	expect_ops <<<$'f1 EROFS\nf2 ok\nv0 EROFS\nv1 ok'
}
TESTS+=(mandatory_depth_2)

t_mandatory_case_insensitive() { # .BashRC, .VSCode, .ZshRC, .MCP.JSON are denied like their lowercase names
	mkdir -p "$P/.VSCode" "$P/a"
	echo o >"$P/.BashRC"; echo o >"$P/.VSCode/x"; echo o >"$P/a/.ZshRC"; echo o >"$P/.MCP.JSON"; echo o >"$P/notes.txt"
	policy p <<<"allow-write ."
	run_ops -c "$T/p" <<EOF
bashrc append $P/.BashRC
vscode append $P/.VSCode/x
zshrc append $P/a/.ZshRC
mcp append $P/.MCP.JSON
ctl append $P/notes.txt
EOF
	expect_ops <<<$'bashrc EROFS\nvscode EROFS\nzshrc EROFS\nmcp EROFS\nctl ok'
}
TESTS+=(mandatory_case_insensitive)

t_mandatory_skips_node_modules() { # dangerous names under node_modules stay writable; a/.bashrc is not
	mkdir -p "$P/node_modules/pkg" "$P/node_modules/.vscode" "$P/a"
	echo o >"$P/node_modules/.bashrc"; echo o >"$P/node_modules/pkg/.bashrc"
	echo o >"$P/node_modules/.vscode/x"; echo o >"$P/a/.bashrc"
	policy p <<<"allow-write ."
	run_ops -c "$T/p" <<EOF
nm1 append $P/node_modules/.bashrc
nm2 append $P/node_modules/pkg/.bashrc
nm3 append $P/node_modules/.vscode/x
ctl_denied append $P/a/.bashrc
EOF
	expect_ops <<<$'nm1 ok\nnm2 ok\nnm3 ok\nctl_denied EROFS'
}
TESTS+=(mandatory_skips_node_modules)

t_placeholders_prevent_create_and_vanish() { # missing dangerous files can't be written at a root top; tree identical after
	# `write` is open(O_CREAT|O_TRUNC) like `echo > .bashrc`. A missing name is held by an
	# empty read-only directory (so `git add -A` ignores it): the open fails with EISDIR.
	# Held where the names are read later: the cwd, $HOME, and git work trees (w2 is one).
	# A plain writable directory (w3) holds no placeholders: only its existing dangerous files
	# are denied (w3/.profile exists; a missing w3/.bashrc can be created).
	local f ops= exp=
	mkdir -p "$P/src" "$T/w2/.git" "$T/w3"; echo x >"$P/src/main.c"; echo y >"$T/w2/data"; echo z >"$T/w3/.profile"
	for f in $MANDATORY_FILES; do
		ops+="p$f write $P/$f"$'\n'"w$f write $T/w2/$f"$'\n'"pd$f create $P/$f/inside"$'\n'
		exp+="p$f EISDIR"$'\n'"w$f EISDIR"$'\n'"pd$f EROFS"$'\n'
	done
	ops+="ctl_p create $P/ok.txt"$'\n'"ctl_w create $T/w2/ok.txt"$'\n'
	exp+="ctl_p ok"$'\n'"ctl_w ok"$'\n'
	ops+="w3_existing append $T/w3/.profile"$'\n'"w3_missing create $T/w3/.bashrc"$'\n'
	exp+="w3_existing EROFS"$'\n'"w3_missing ok"$'\n'
	policy p <<EOF
allow-write .
allow-write $T/w2
allow-write $T/w3
EOF
	snap "$P" >"$T/p.before"; snap "$T/w2" >"$T/w2.before"
	run_ops -c "$T/p" <<<"$ops"
	expect_ops <<<"$exp"
	[ -f "$P/ok.txt" ] && [ -f "$T/w2/ok.txt" ] && [ -f "$T/w3/.bashrc" ] || fail "control files missing on disk"
	rm -f "$P/ok.txt" "$T/w2/ok.txt" "$T/w3/.bashrc"
	expect_same_tree "$P" "$T/p.before" "project after the run"
	expect_same_tree "$T/w2" "$T/w2.before" "second writable root after the run"
}
TESTS+=(placeholders_prevent_create_and_vanish)

t_placeholders_by_nature() { # a missing protected name in $HOME is held by what it is (a read-only file, {} for JSON, a directory); an agent's own missing directory is made, writable and pinned, with only the names in it held; after the run only what was written stays
	mkdir -p "$H/.codex"
	# sbx's own fallback runtime place in a writable $HOME (made and hidden, 9a): not the agents'
	mkdir -p -m 0700 "$H/.cache" "$H/.cache/sbx-$(id -u)"
	policy p <<EOF
allow-write .
allow-write $H
EOF
	snap "$H" >"$T/h.before"; snap "$P" >"$T/p.before"
	run_ops -c "$T/p" <<EOF
codex_cfg read $H/.codex/config.toml
codex_cfg_w write $H/.codex/config.toml
codex_state create $H/.codex/state.db
claude_json read $H/.claude.json
claude_json_w write $H/.claude.json
claude_settings read $H/.claude/settings.json
claude_settings_w write $H/.claude/settings.json
claude_commands create $H/.claude/commands/evil.md
claude_state mkdir $H/.claude/session-env
claude_state_f create $H/.claude/session-env/x
claude_moved rename $H/.claude $H/.claude2
ssh_cfg write $H/.ssh/config
fish_dir create $H/.config/fish/conf.d/x.fish
fish_mk mkdir $H/.config/fish
proj_bashrc write $P/.bashrc
proj_claude write $P/.claude/settings.json
EOF
	expect_ops <<EOF
codex_cfg ok:
codex_cfg_w EROFS
codex_state ok
claude_json ok:\{\}
claude_json_w EROFS
claude_settings ok:\{\}
claude_settings_w EROFS
claude_commands EROFS
claude_state ok
claude_state_f ok
claude_moved EBUSY
ssh_cfg EROFS
fish_dir ENOENT|EROFS
fish_mk EROFS
proj_bashrc EISDIR
proj_claude EROFS|EISDIR
EOF
	# after: what the command wrote stays, with the directory made for it; no placeholder does
	[ -f "$H/.claude/session-env/x" ] && [ -f "$H/.codex/state.db" ] || fail "what the agent wrote in its directories stays"
	[ ! -e "$H/.claude/settings.json" ] && [ ! -e "$H/.claude/commands" ] && [ ! -e "$H/.claude.json" ] &&
		[ ! -e "$H/.codex/config.toml" ] || fail "placeholders left in \$HOME: $(cd "$H" && find . | sort | tr '\n' ' ')"
	expect_same_tree "$P" "$T/p.before" "the project after the run"
	# a run that writes nothing there: the directory made for it goes too
	rm -rf "$H/.claude" "$H/.codex/state.db"
	run_sbx -c "$T/p" -- sh -c 'test -d "$HOME/.claude" && test -f "$HOME/.claude/settings.json" && echo held'
	expect_rc 0
	expect_contains "$OUT" held "control: the directory and the file in it, inside"
	expect_same_tree "$H" "$T/h.before" "\$HOME after a run that wrote nothing"
}
TESTS+=(placeholders_by_nature)

t_placeholders_after_sigkill() { # sbx SIGKILLed mid-run: no process survives; next run cleans placeholders
	local tok="sleep ${TOKBASE}1" left
	mkdir -p "$P/src" "$T/w2"; echo x >"$P/src/main.c"; echo y >"$T/w2/data"
	policy p <<EOF
allow-write .
allow-write $T/w2
EOF
	snap "$P" >"$T/p.before"; snap "$T/w2" >"$T/w2.before"
	start_bg "$T/bg.out" -c "$T/p" -- sh -c "echo ready; exec $tok"
	wait_file_has "$T/bg.out" ready 20 || { kill -KILL "$BGPID"; fail "sandboxed command never became ready: $(cat "$T/bg.out.err")"; }
	note "host view of the project while running: $(ls -A "$P" | tr '\n' ' ')"
	kill -KILL "$BGPID"; wait_pid "$BGPID" 10
	wait_gone "$tok" 5 || fail "processes outlived the SIGKILLed sbx: $(procs_with "$tok" | tr '\n' ' ')"
	left=$(snap "$P" | diff "$T/p.before" - | grep -c '^>')
	note "entries left in the project by the killed run: $left"
	run_sbx -c "$T/p" -- true
	expect_rc 0 "next sbx run"
	expect_same_tree "$P" "$T/p.before" "project after SIGKILL + next run"
	expect_same_tree "$T/w2" "$T/w2.before" "second root after SIGKILL + next run"
}
TESTS+=(placeholders_after_sigkill)

# ---------------------------------------------------------------- writes: git, renames, symlinks
t_git_repo() { # git init/add/commit work; .git/config + hooks + worktree .git file denied; allow-git-config
	git_env
	mkdir -p "$P/src"; echo hello >"$P/file.txt"; echo 'int main(){}' >"$P/src/main.c"
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- sh -c 'git init -q && git add . && git commit -qm one && echo DONE'
	expect_rc 0 "git init/add/commit in the sandbox"; expect_contains "$OUT" DONE "git output"
	expect_eq "$(git -C "$P" log --format=%s)" one "host: git log after run 1"
	local committed; committed=$(git -C "$P" ls-files | tr '\n' ' ')   # checked at the end
	git -C "$P" worktree add -q "$P/wt" -b wtbranch 2>/dev/null || fail "host: git worktree add failed"
	git -C "$P" config --local sbx.test before
	sha256sum "$P/.git/config" >"$T/config.sum"
	run_sbx -c "$T/p" -- sh -c 'echo two >>file.txt && git commit -qam two && echo COMMITTED'
	expect_rc 0 "second commit in an existing repo"; expect_contains "$OUT" COMMITTED "git output"
	expect_eq "$(git -C "$P" log --format=%s | tr '\n' ' ')" "two one " "host: git log after run 2"
	run_ops -c "$T/p" <<EOF
config append $P/.git/config
hook create $P/.git/hooks/pre-commit
hook_sample append $P/.git/hooks/pre-commit.sample
wt_gitfile append $P/wt/.git
ctl_wt append $P/wt/file.txt
ctl_obj create $P/.git/sbx-probe
EOF
	expect_ops <<'EOF'
config EROFS
hook EROFS
hook_sample EROFS
wt_gitfile EROFS
ctl_wt ok
ctl_obj ok
EOF
	rm -f "$P/.git/sbx-probe"
	run_sbx -c "$T/p" -- git config --local sbx.test inside
	[ "$RC" != 0 ] || fail "git config --local succeeded without allow-git-config"
	sha256sum -c --quiet "$T/config.sum" || fail ".git/config changed on disk"
	[ ! -e "$P/.git/hooks/pre-commit" ] || fail "pre-commit hook was created"
	policy g <<'EOF'
allow-write .
allow-git-config
EOF
	run_sbx -c "$T/g" -- git config --local sbx.test inside
	expect_rc 0 "git config --local with allow-git-config"
	expect_eq "$(git -C "$P" config --local sbx.test)" inside "host: .git/config value"
	run_ops -c "$T/g" <<<"hook create $P/.git/hooks/pre-commit"
	expect_ops <<<"hook EROFS"
	expect_eq "$committed" "file.txt src/main.c " \
		"host: files committed by 'git add .' in run 1 (sandbox placeholders must not be committed)"
}
TESTS+=(git_repo)

t_rename_ancestor_busy() { # renaming an ancestor of a denied path -> EBUSY ("Device or resource busy")
	git init -q "$P"; mkdir -p "$P/other" "$P/a"; echo o >"$P/a/.bashrc"
	policy p <<<"allow-write ."
	run_ops -c "$T/p" <<EOF
git_dir rename $P/.git $P/.git2
a_dir rename $P/a $P/a2
ctl rename $P/other $P/other2
still exists $P/.git/config
EOF
	expect_ops <<<$'git_dir EBUSY\na_dir EBUSY\nctl ok\nstill ok'
	run_sbx -c "$T/p" -- mv .git .git3
	[ "$RC" != 0 ] || fail "mv .git .git3 succeeded"
	expect_contains "$ERR" "Device or resource busy" "mv .git .git3 stderr"
	[ -d "$P/.git" ] && [ ! -e "$P/.git2" ] && [ ! -e "$P/.git3" ] && [ -d "$P/a" ] || fail "host: .git or a was moved"
	[ -d "$P/other2" ] || fail "host: control rename missing"
}
TESTS+=(rename_ancestor_busy)

t_symlink_escape() { # symlinks inside the project pointing outside do not make the outside writable
	echo orig >"$O/target"; mkdir "$O/d"
	ln -s "$O/target" "$P/link"; ln -s "$O/d" "$P/linkdir"; ln -s ../out/target "$P/rellink"
	echo p >"$P/real"
	policy p <<<"allow-write ."
	snap "$O" >"$T/out.before"
	run_ops -c "$T/p" <<EOF
abs append $P/link
dir create $P/linkdir/new
rel append $P/rellink
trunc trunc $P/link
mk symlink $O/target $P/newlink
via_new append $P/newlink
ctl append $P/real
EOF
	expect_ops <<'EOF'
abs EROFS
dir EROFS
rel EROFS
trunc EROFS
mk ok
via_new EROFS
ctl ok
EOF
	expect_same_tree "$O" "$T/out.before" "outside dir after writes through symlinks"
}
TESTS+=(symlink_escape)

t_symlinked_root_no_widening() { # allow-write of a symlink to a broader dir: refused (125) or no wider writes
	local case_ link
	mkdir -p "$T/broad"; echo b >"$T/broad/existing"
	ln -s "$T/broad" "$T/broad/narrow"     # points at its own parent
	ln -s "$T" "$P/cache"                  # points at an ancestor of the project
	for case_ in 1 2; do
		if [ $case_ = 1 ]; then link=$T/broad/narrow; else link=$P/cache; fi
		snap "$T/broad" >"$T/broad.before"; snap "$O" >"$T/out.before"
		policy p <<EOF
allow-write .
allow-write $link
EOF
		run_ops -c "$T/p" <<EOF
direct create $T/broad/direct.txt
direct_out create $O/direct.txt
via create $link/via.txt
ctl create $P/ctl$case_
EOF
		if [ "$RC" = 125 ]; then
			[[ $ERR == *"$link"* || $ERR == *"$(realpath "$link")"* ]] ||
				fail "refusal message names neither $link nor its target"
		else
			expect_ops <<'EOF'
direct E[A-Z0-9]+
direct_out E[A-Z0-9]+
via E[A-Z0-9]+
ctl ok
EOF
			[ -f "$P/ctl$case_" ] || fail "control file missing on disk"
		fi
		expect_same_tree "$T/broad" "$T/broad.before" "broad dir (symlinked root $link)"
		expect_same_tree "$O" "$T/out.before" "outside dir (symlinked root $link)"
		[ ! -e "$T/via.txt" ] || fail "write through symlinked root $link reached $T"
	done
}
TESTS+=(symlinked_root_no_widening)

# ---------------------------------------------------------------- the process: lo, env, exit, signals
t_network_only_lo() { # only the lo interface inside, with and without allow-domain
	local ifs host_ifs
	host_ifs=$(awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' /proc/net/dev | tr '\n' ' ')
	note "host interfaces: $host_ifs"
	policy p <<<"allow-write ."
	policy d <<'EOF'
allow-write .
allow-domain example.com
EOF
	for pf in p d; do
		run_sbx -c "$T/$pf" -- cat /proc/net/dev; expect_rc 0
		ifs=$(awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' <<<"$OUT" | tr '\n' ' ')
		expect_eq "$ifs" "lo " "interfaces in /proc/net/dev (policy $pf)"
	done
	if command -v ip >/dev/null; then
		run_sbx -c "$T/p" -- ip -o link; expect_rc 0 "ip -o link"
		expect_eq "$(awk '{ print $2 }' <<<"$OUT" | tr '\n' ' ')" "lo: " "ip -o link"
	fi
}
TESTS+=(network_only_lo)

t_env() { # SANDBOX_RUNTIME=1; TMPDIR private, 0700, writable, removed after; other env passes through
	local td mark=sbx-mark-$TOKBASE
	mkdir "$T/hosttmp"
	policy p <<<"allow-write ."
	TMPDIR=$T/hosttmp SBX_TEST_FOO='bar baz' run_sbx -c "$T/p" -- sh -c '
		echo "SR=${SANDBOX_RUNTIME:-unset}"; echo "TD=${TMPDIR:-}"; echo "FOO=${SBX_TEST_FOO:-}"
		[ -d "$TMPDIR" ] && echo isdir; "$1" mode "$TMPDIR"; "$1" create "$TMPDIR/$2"' sh "$FSOP" "$mark"
	expect_rc 0
	expect_contains "$OUT" "SR=1" "SANDBOX_RUNTIME"
	expect_contains "$OUT" "FOO=bar baz" "environment pass-through"
	expect_contains "$OUT" isdir "TMPDIR is a directory"
	expect_contains "$OUT" "ok:0700" "TMPDIR mode"
	expect_eq "$(tail -n 1 <<<"$OUT")" ok "creating a file in TMPDIR"
	td=$(sed -n 's/^TD=//p' <<<"$OUT")
	[ -n "$td" ] || fail "TMPDIR not set inside"
	[ "$td" != "$T/hosttmp" ] && [ "$td" != /tmp ] || fail "TMPDIR inside is not private: $td"
	[ ! -e "$td" ] || fail "TMPDIR $td still exists after the run"
	# the per-user base dir may stay, with the placeholder registry's lock file
	left=$(find "$T/hosttmp" -mindepth 1 ! -type d ! -name placeholders.lock)
	[ -z "$left" ] || fail "leftovers in the outer TMPDIR: $left"
	left=$(find /tmp /var/tmp "$RUN" -maxdepth 4 -name "$mark" 2>/dev/null)
	[ -z "$left" ] || fail "file written in TMPDIR survived the run: $left"
}
TESTS+=(env)

t_tmpdir_deep_tree_removed() { # a tree deeper than rm_tree's bound (700 levels, one of them unreadable) left in TMPDIR is removed all the same: nothing a command leaves there outlives the run
	local td
	mkdir "$T/hosttmp"
	policy p <<<"allow-write ."
	TMPDIR=$T/hosttmp run_sbx -c "$T/p" -- sh -c '
		echo "TD=$TMPDIR"; cd "$TMPDIR" || exit 9
		i=0; while [ $i -lt 700 ]; do mkdir d && cd d || exit 8; i=$((i + 1)); [ $i = 300 ] && mkdir locked && touch locked/x && chmod 000 locked; done
		touch leaf && echo "made $(pwd | tr -cd / | wc -c) levels"'
	expect_rc 0
	td=$(sed -n 's/^TD=//p' <<<"$OUT")
	[ -n "$td" ] || fail "TMPDIR not set inside"
	expect_contains "$OUT" "made " "control: the tree was made"
	[ "$(sed -n 's/^made \([0-9]*\) levels/\1/p' <<<"$OUT")" -gt 700 ] || fail "control: the tree is 700 deep: $OUT"
	[ ! -e "$td" ] || fail "TMPDIR $td (a 700-deep tree) still exists after the run: $(find "$td" -maxdepth 2 | head -3)"
}
TESTS+=(tmpdir_deep_tree_removed)

t_exit_status() { # exit statuses: 0 3 126 127 130 137 143
	local want cmd
	printf '#!/bin/sh\necho hi\n' >"$P/notexec"; chmod 644 "$P/notexec"
	policy p <<<"allow-write ."
	while read -r want cmd; do
		eval "run_sbx -c \"\$T/p\" -- $cmd"
		expect_rc "$want" "$cmd"
	done <<'EOF'
0 true
3 sh -c 'exit 3'
126 ./notexec
127 no-such-command-sbxtest
127 ./missing-file
130 sh -c 'kill -INT $$'
137 sh -c 'kill -KILL $$'
143 sh -c 'kill -TERM $$'
EOF
}
TESTS+=(exit_status)

t_signal_forwarding() { # TERM INT HUP QUIT sent to sbx reach the command; nothing outlives sbx
	local sig code n=2 tok
	policy p <<<"allow-write ."
	for sig in TERM INT HUP QUIT; do
		code=$((5 + n)); tok="sleep ${TOKBASE}$n"; n=$((n + 1))
		rm -f "$T/sig.out"   # else the last round's "ready" could be read before this one starts
		start_bg "$T/sig.out" -c "$T/p" -- sh -c "trap 'echo got-$sig; exit $code' $sig; echo ready; $tok & wait"
		wait_file_has "$T/sig.out" ready 20 || { kill -KILL "$BGPID"; fail "$sig: command never became ready: $(cat "$T/sig.out.err")"; }
		kill -"$sig" "$BGPID"
		wait_pid "$BGPID" 15 || fail "$sig: sbx did not exit within 15s after kill -$sig"
		echo "  [$sig: exit $WRC, stdout: $(tr '\n' ' ' <"$T/sig.out")]"
		[ "$WRC" = "$code" ] || fail "$sig: expected sbx exit $code (from the trap), got $WRC"
		grep -qx "got-$sig" "$T/sig.out" || fail "$sig: trap output missing: $(cat "$T/sig.out")"
		wait_gone "$tok" 5 || fail "$sig: processes outlived sbx: $(procs_with "$tok" | tr '\n' ' ')"
	done
}
TESTS+=(signal_forwarding)

t_stdio_byte_exact() { # 10 MiB of random bytes through stdin->stdout, a pipe, and stdin->stderr
	local r=$RUN/rand10m
	[ -f "$r" ] || head -c 10485760 /dev/urandom >"$r"
	policy p <<<"allow-write ."
	echo '$ sbx -c p -- cat < rand > o1'
	timeout -k 5 "$TMO" "$SBX" -c "$T/p" -- cat <"$r" >"$T/o1" 2>"$T/e1"; RC=$?
	expect_rc 0 "cat file->file"; cmp "$r" "$T/o1" || fail "stdout differs from stdin (files)"
	echo '$ cat rand | sbx -c p -- cat | cmp'
	cat "$r" | timeout -k 5 "$TMO" "$SBX" -c "$T/p" -- cat | cmp - "$r" || fail "stdout differs from stdin (pipes)"
	echo "\$ sbx -c p -- sh -c 'cat >&2' < rand 2> e2"
	timeout -k 5 "$TMO" "$SBX" -c "$T/p" -- sh -c 'cat >&2' <"$r" >"$T/o2" 2>"$T/e2"; RC=$?
	expect_rc 0 "cat >&2"; cmp "$r" "$T/e2" || fail "stderr differs from stdin"
	[ ! -s "$T/o2" ] || fail "stdout not empty in the stderr test"
}
TESTS+=(stdio_byte_exact)

# ---------------------------------------------------------------- policy files
t_tamper_refusal() { # sbx refuses (125, names the path) when its binary/bwrap would be writable
	local bw me
	cp "$SBX" "$P/sbx"; me=$(realpath "$P/sbx"); ln -s "$P/sbx" "$O/sbx-link"
	run_sbx true; expect_rc 0 "control: $SBX with the default policy from the project"
	echo '$ ./sbx true   (copy of sbx inside the writable project)'
	./sbx true >"$T/.stdout" 2>"$T/.stderr"; RC=$?; ERR=$(cat "$T/.stderr"); log_file err "$T/.stderr"
	expect_rc 125 "copy of sbx in the project dir"; expect_contains "$ERR" "$me" "refusal message"
	echo '$ out/sbx-link true   (symlink to the copy)'
	"$O/sbx-link" true >"$T/.stdout" 2>"$T/.stderr"; RC=$?; ERR=$(cat "$T/.stderr"); log_file err "$T/.stderr"
	expect_rc 125 "symlink to the copy"; expect_contains "$ERR" "$me" "refusal message names the realpath"
	bw=$(realpath "$(command -v bwrap)")
	if [ -w "$(dirname "$bw")" ]; then   # only then would allow-write really make bwrap writable
		policy p <<EOF
allow-write .
allow-write $(dirname "$bw")
EOF
		run_sbx -c "$T/p" -- true
		expect_rc 125 "allow-write of bwrap's directory"; expect_contains "$ERR" "$bw" "refusal message"
	else
		note "$(dirname "$bw") not writable by this user: allow-write of it is not a tamper risk, not checked"
	fi
}
TESTS+=(tamper_refusal)

t_srt_settings() { # the srt documentation example runs unchanged
	cat >"$T/settings.json" <<'EOF'
{
  "network": { "allowedDomains": ["github.com", "*.github.com", "npmjs.org", "*.npmjs.org"], "deniedDomains": [] },
  "filesystem": { "denyRead": ["~/.ssh"], "allowWrite": [".", "/tmp"], "denyWrite": [".env"] }
}
EOF
	mkdir "$H/.ssh"; echo PRIVATE >"$H/.ssh/id_rsa"; echo PUB >"$H/pub.txt"; echo ENV=1 >"$P/.env"
	local ops="w_dot create $P/new.txt
w_env append $P/.env
r_key read $H/.ssh/id_rsa
r_ls ls $H/.ssh
r_pub read $H/pub.txt" exp='w_dot ok
w_env EROFS
r_key ok:|ENOENT
r_ls ok:
r_pub ok:PUB'
	case $RUN/ in
	/tmp/*) ops+=$'\n'"w_tmp create $T/in-tmp"; exp+=$'\n'"w_tmp ok" ;;
	*) ops+=$'\n'"w_out create $O/x"; exp+=$'\n'"w_out EROFS" ;;
	esac
	local tamper=
	case $SBX in /tmp/*) [ -w "$SBX" ] || [ -w "$(dirname "$SBX")" ] && tamper=1 ;; esac
	case $tamper in
	1)  # "/tmp" is writable in this policy and the (writable) sbx binary lives there: must refuse
		note "sbx binary is writable and under /tmp: the unchanged file must trigger the tamper refusal"
		run_sbx -c "$T/settings.json" -- true
		expect_rc 125 "srt example with sbx under /tmp"; expect_contains "$ERR" "$SBX" "refusal message"
		sed 's|, "/tmp"||' "$T/settings.json" >"$T/settings-notmp.json"
		note "checking the rest with \"/tmp\" removed from allowWrite"
		ops=$(grep -v w_tmp <<<"$ops")$'\n'"w_out create $O/x"; exp=$(grep -v w_tmp <<<"$exp")$'\n'"w_out EROFS"
		run_ops -c "$T/settings-notmp.json" <<<"$ops" ;;
	*) run_ops -c "$T/settings.json" <<<"$ops" ;;
	esac
	expect_ops <<<"$exp"
	expect_eq "$(cat "$P/.env")" ENV=1 ".env on disk"
}
TESTS+=(srt_settings)

bad_case() { # bad_case NAME WHERE FRAGMENT-ERE FILE : FILE must be rejected
	# WHERE: Ln = "FILE:n: " (line format), Jn = "FILE:n:COL: " (JSON), - = just names FILE,
	#        R:ERE = custom regex for the location; n may itself be an ERE like [0-9]+
	local name=$1 line=$2 frag=$3 file=$4 base loc
	base=$(basename "$file")
	run_sbx -c "$file" -- echo COMMAND-RAN
	local why=
	[ "$RC" = 125 ] || why+=" exit $RC (want 125);"
	[[ $OUT != *COMMAND-RAN* ]] || why+=" the command ran;"
	case $line in
	-) loc="^sbx: .*$base" ;;
	R:*) loc=${line#R:} ;;
	J*) loc="^sbx: [^ ]*$base:${line#J}:[0-9]+: " ;;
	L*) loc="^sbx: [^ ]*$base:${line#L}: " ;;
	esac
	grep -Eq -- "$loc" <<<"$ERR" || why+=" no stderr line matching /$loc/;"
	grep -Eiq -- "$frag" <<<"$ERR" || why+=" message lacks /$frag/;"
	[ -z "$(grep -v '^sbx: ' <<<"$ERR" | grep -v '^$')" ] || why+=" stderr has lines not starting 'sbx: ';"
	[ -z "$why" ] || BAD+="    $name:$why stderr: $(head -c 200 <<<"$ERR" | tr '\n' '|')"$'\n'
}

t_bad_policy() { # every bad policy -> one-line "sbx: FILE:LINE[:COL]: msg", exit 125, command not run
	BAD=
	mk() { printf "%b" "$2" >"$T/$1"; }   # mk FILE CONTENT(printf %b)
	mk unknown.policy '# comment\n\nalow-write .\n';               bad_case unknown-directive L3 'did you mean.*allow-write' "$T/unknown.policy"
	mk noarg.policy 'allow-write\n';                               bad_case missing-argument L1 'argument|expect|missing|path' "$T/noarg.policy"
	mk key.json '{\n  "filesystem": {\n    "denyReed": []\n  }\n}\n'; bad_case json-unknown-key J3 'did you mean "denyRead"' "$T/key.json"
	mk type.json '{\n  "filesystem": {\n    "denyRead": "~/.ssh"\n  }\n}\n'; bad_case json-wrong-type J3 'denyRead|array|type' "$T/type.json"
	mk malformed.json '{\n  "filesystem": {\n    "denyRead": [,]\n  }\n}\n'; bad_case json-malformed J3 '.' "$T/malformed.json"
	mk trunc.json '{\n  "filesystem": {\n'; bad_case json-truncated 'J[0-9]+' '.' "$T/trunc.json"
	mk empty.policy '';                                            bad_case empty-file 'R:^sbx: [^ ]*empty\.policy(:[0-9]+)?: ' 'empty' "$T/empty.policy"
	bad_case missing-file - 'no such|not found|not exist|cannot|can.t|missing|open' "$T/does-not-exist.policy"
	local i=0 pat
	for pat in '*' '*.com' 'http://a.com' 'a.com/x' 'a.com:99999' 'foo'; do
		i=$((i + 1)); mk "dom$i.policy" "# domains\nallow-domain $pat\n"
		local ere; ere=$(sed 's/[].*+?^$()[{}|\\]/\\&/g' <<<"$pat")
		bad_case "domain '$pat'" L2 "$ere" "$T/dom$i.policy"
	done
	mk domj.json '{\n  "network": {\n    "allowedDomains": ["*.com"]\n  }\n}\n'; bad_case json-domain J3 '\*\.com' "$T/domj.json"
	mk cidr.policy 'allow-write .\ndeny-address 10.0.0.0/33\n';  bad_case bad-cidr L2 '10\.0\.0\.0/33|/33' "$T/cidr.policy"
	mk depth0.policy 'mandatory-deny-depth 0\n';                 bad_case depth-0 L1 'depth|range|between|10' "$T/depth0.policy"
	mk depth11.policy 'mandatory-deny-depth 11\n';               bad_case depth-11 L1 'depth|range|between|10' "$T/depth11.policy"
	printf 'allow-write .\ndeny-read /x\0y\n' >"$T/nul.policy";  bad_case nul-byte L2 'nul|\\0|binary|zero' "$T/nul.policy"
	{ printf 'allow-write .\nallow-write /'; head -c 5000 /dev/zero | tr '\0' x; printf '\n'; } >"$T/long.policy"
	bad_case long-line L2 'long|4096' "$T/long.policy"
	printf 'include %s\n' "$T/loop-b.policy" >"$T/loop-a.policy"
	printf 'allow-write .\ninclude %s\n' "$T/loop-a.policy" >"$T/loop-b.policy"
	bad_case include-loop 'R:^sbx: [^ ]*loop-[ab]\.policy:[12]: ' 'loop|cycl|recurs|circular|already' "$T/loop-a.policy"
	mk cred.json '{\n  "credentials": {"envVars": [{"name": "X", "mode": "mask"}]}\n}\n'; bad_case json-credentials-mask J2 'credentials.*TLS' "$T/cred.json"
	mk tls.json '{\n  "network": {\n    "tlsTerminate": {"x": 1}\n  }\n}\n'; bad_case json-tlsTerminate J3 'tlsTerminate' "$T/tls.json"
	[ -z "$BAD" ] || fail "bad policies not rejected as specified:"$'\n'"${BAD%$'\n'}"
}
TESTS+=(bad_policy)

# ---------------------------------------------------------------- --print and the static build
t_print_argv() { # --print=argv prints the shell-quoted bwrap argv, exits 0, runs nothing
	mkdir -p "$T/with space"
	policy p <<EOF
allow-write .
allow-write "$T/with space"
EOF
	snap "$P" >"$T/p.before"
	run_sbx --print=argv -c "$T/p" -- sh -c 'echo RAN; touch marker'
	expect_rc 0; expect_not_contains "$OUT" $'\nRAN' "output"; [ ! -e "$P/marker" ] || fail "command ran"
	expect_same_tree "$P" "$T/p.before" "project after --print=argv (nothing may be created)"
	expect_contains "$OUT" bwrap "argv"
	[ "$(wc -l <<<"$OUT")" -ge 3 ] || fail "argv not printed one mount per line"
	# the command travels over the control socket; the last line shows it as "# command, ...: WORDS"
	local joined; joined=$(sed 's/\\$//; s/^# command, sent over the control socket://' <<<"$OUT" | tr '\n' ' ')
	mkdir "$T/jail"   # parse the words in a subshell elsewhere, in case quoting is broken
	(cd "$T/jail" && eval "printf '%s\n' $joined") >"$T/words" 2>/dev/null || fail "argv is not valid shell words"
	mapfile -t words <"$T/words"; set -- "${words[@]}"
	local a found_sp= found_cmd= found_p=
	for a in "$@"; do
		[ "$a" = "$T/with space" ] && found_sp=1
		[ "$a" = "echo RAN; touch marker" ] && found_cmd=1
		[ "$a" = "$P" ] && found_p=1
	done
	[ -n "$found_sp" ] || fail "path with a space is not one shell-quoted word in the argv"
	[ -n "$found_cmd" ] || fail "command arguments not in the argv as single words"
	[ -n "$found_p" ] || fail "project dir $P not in the argv"
}
TESTS+=(print_argv)

t_print_seatbelt() { # --print=seatbelt prints the macOS profile on any platform, exits 0, runs nothing; strings escaped
	mkdir -p "$T/we\"ird)dir"
	policy p <<EOF
allow-write .
deny-read "$T/we\"ird)dir"
EOF
	snap "$P" >"$T/p.before"
	run_sbx --print=seatbelt -c "$T/p" -- sh -c 'echo RAN; touch marker'
	expect_rc 0; expect_not_contains "$OUT" $'\nRAN' "output"; [ ! -e "$P/marker" ] || fail "command ran"
	expect_same_tree "$P" "$T/p.before" "project after --print=seatbelt (nothing may be created)"
	expect_contains "$OUT" "(version 1)" "profile"
	expect_contains "$OUT" "(allow file-write* (subpath \"$P\"))" "profile"
	expect_contains "$OUT" "(deny file-read* (subpath \"$T/we\\\"ird)dir\") (with message" "profile (the quote escaped)"
	expect_contains "$OUT" '(remote ip "localhost:3128")' "profile"
}
TESTS+=(print_seatbelt)

roundtrip() { # roundtrip POLICYFILE : --print=policy / --print=json fed back give identical --print=policy
	local f=$1 b; b=$T/rt-$(basename "$f")
	run_sbx --print=policy -c "$f" -- true; expect_rc 0 "--print=policy $f"
	[ -n "$OUT" ] || fail "--print=policy printed nothing"
	printf '%s\n' "$OUT" >"$b.p1"
	run_sbx --print=json -c "$f" -- true; expect_rc 0 "--print=json $f"
	printf '%s\n' "$OUT" >"$b.j1.json"
	if [ -n "$PY" ]; then
		"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$b.j1.json" 2>/dev/null ||
			fail "--print=json output is not valid JSON"
	fi
	run_sbx --print=policy -c "$b.p1" -- true; expect_rc 0 "--print=policy of the printed policy"
	[ "$OUT" = "$(cat "$b.p1")" ] || fail "policy -> print=policy differs:"$'\n'"$(diff "$b.p1" - <<<"$OUT" | head -20)"
	run_sbx --print=policy -c "$b.j1.json" -- true; expect_rc 0 "--print=policy of the printed json"
	[ "$OUT" = "$(cat "$b.p1")" ] || fail "json -> print=policy differs:"$'\n'"$(diff "$b.p1" - <<<"$OUT" | head -20)"
}

t_print_roundtrip() { # own samples (line format, JSON, include) survive print=policy/json round trips
	mkdir -p "$P/locked" "$T/with space" "$H/.ssh"; touch "$H/.ssh/known_hosts" "$P/.env"
	policy s1.policy <<EOF
# sample 1
allow-write .
allow-write "$T/with space"
deny-write ./locked
deny-read ~/.ssh
allow-read ~/.ssh/known_hosts
allow-domain example.com
allow-domain *.example.org
deny-domain bad.example.com "blocked \"for\" tests"
deny-address 10.0.0.0/8
allow-unix-socket /run/sbx-test.sock
allow-local-binding
mandatory-deny-depth 4
allow-git-config
ignore-violations "npm test" "/tmp/x"
observe-writes off
EOF
	policy s2.policy <<'EOF'
allow-write .
allow-all-unix-sockets
weaker-nested-sandbox
allow-nested-userns
weaker-network-isolation
allow-apple-events
bridge socat
observe-writes on
EOF
	policy s3.json <<'EOF'
{
  "network": { "allowedDomains": ["example.com", "*.example.net"], "deniedDomains": ["evil.example.com"],
               "allowUnixSockets": ["/run/sbx-test.sock"], "allowLocalBinding": true },
  "filesystem": { "denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": [".env"] }
}
EOF
	policy s4.policy <<EOF
include $T/s1.policy
bridge fd
EOF
	local s
	for s in s1.policy s2.policy s3.json s4.policy; do roundtrip "$T/$s"; done
	run_sbx --print=policy -c "$T/s1.policy" -- true
	expect_contains "$OUT" "with space" "printed policy keeps the quoted path"
	expect_contains "$OUT" "bad.example.com" "printed policy keeps deny-domain"
	expect_contains "$OUT" "$P" "printed policy has the absolute project path"
	run_sbx --print=policy -c "$T/s3.json" -- true
	expect_contains "$OUT" "evil.example.com" "printed policy of JSON keeps deniedDomains"
}
TESTS+=(print_roundtrip)

t_print_roundtrip_example() { # the checkout's policy.example survives the round trips
	[ -f "$HERE/policy.example" ] || skip "policy.example not present in $HERE"
	roundtrip "$HERE/policy.example"
}
TESTS+=(print_roundtrip_example)

t_make_static() { # make static gives a statically linked sbx that runs a sandboxed command
	command -v musl-gcc >/dev/null || skip "musl-gcc not installed"
	[ -f "$HERE/Makefile" ] || [ -f "$HERE/makefile" ] || fail "no Makefile in $HERE"
	mkdir "$T/src"
	find "$HERE" -maxdepth 1 -type f -exec cp -p {} "$T/src/" \;   # top-level sources + Makefile
	local f bins=
	for f in $(find "$T/src" -type f); do   # drop prebuilt binaries so make must build
		file -b "$f" | grep -q '^ELF' && rm -f "$f"
	done
	echo '$ make -s static   (in a copy of the sources)'
	(cd "$T/src" && timeout 300 make -s static) >"$T/make.log" 2>&1 || { log_file make "$T/make.log"; fail "make static failed"; }
	for f in $(find "$T/src" -type f -perm -u+x); do
		file -b "$f" | grep -q 'ELF.*executable' && bins+="$f "
	done
	[ -n "$bins" ] || fail "make static produced no executable"
	for f in $bins; do
		echo "# built: $f: $(file -b "$f")"
		file -b "$f" | grep -Eq 'statically linked|static-pie linked' ||
			ldd "$f" 2>&1 | grep -Eq 'not a dynamic executable|statically linked' ||
			fail "$f is not statically linked: $(file -b "$f")"
	done
	policy p <<<"allow-write ."
	f=${bins%% *}
	printf '$ %s -c p -- sh -c ...\n' "$f"
	"$f" -c "$T/p" -- sh -c 'echo "SR=$SANDBOX_RUNTIME"; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "' >"$T/s.out" 2>"$T/s.err"
	RC=$?; ERR=$(cat "$T/s.err"); log_file out "$T/s.out"; log_file err "$T/s.err"
	expect_rc 0 "static sbx"
	expect_eq "$(cat "$T/s.out")" $'SR=1\nlo' "static sbx: sandboxed output"
	"$f" -c "$T/p" -- true; RC=$?; expect_rc 0 "static sbx running true"
}
TESTS+=(make_static)

# ================================================================ runner
# More scenarios live in tests/*.tests.sh: each defines t_NAME functions and adds NAME to TESTS.
for f in tests/*.tests.sh; do [ -f "$f" ] && . "$f"; done

npass=0 nfail=0 nskip=0
for name in "${TESTS[@]}"; do
	picked=$(( ${#FILTERS[@]} == 0 ))
	for f in "${FILTERS[@]}"; do [[ $name == *"$f"* ]] && picked=1; done
	[ "$picked" = 1 ] || continue
	T=$RUN/t-$name; P=$T/proj; H=$T/home; O=$T/out
	mkdir -p "$P" "$H" "$O"
	(
		export HOME=$H
		RC= OUT= ERR=
		cd "$P" || exit 1
		"t_$name"
		exit 0
	) >"$T/.log" 2>&1 </dev/null
	rc=$?
	if [ $rc = 0 ]; then
		echo "ok - $name"; npass=$((npass + 1))
		[ -z "${SBX_TEST_VERBOSE:-}" ] || sed 's/^/    /' "$T/.log"
	elif [ $rc = 77 ]; then
		echo "skip - $name: $(cat "$T/.skip" 2>/dev/null)"; nskip=$((nskip + 1))
		[ -z "${SBX_TEST_VERBOSE:-}" ] || sed 's/^/    /' "$T/.log"
	else
		if [ -f "$T/.why" ]; then why=$(cat "$T/.why"); else why="test aborted (status $rc)"; fi
		echo "FAIL - $name: $why"
		tail -n 60 "$T/.log" | sed 's/^/    /'
		nfail=$((nfail + 1))
	fi
done
if [ $nskip -gt 0 ]; then
	echo "$npass passed, $nfail failed, $nskip skipped"
else
	echo "$npass passed, $nfail failed"
fi
[ $nfail = 0 ]
