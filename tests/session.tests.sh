# tests/session.tests.sh - sourced by test.sh: sessions (issue 16 §2): one sandbox built by
# `sbx session start`, many commands run in it by `sbx exec NAME -- CMD`. Each test starts its
# own session (named after the test and this run, so parallel suites do not meet) and stops it.

# sess_start NAME [ARGS...]: start session NAME (policy: write the project only); SESS=NAME
sess_start() {
	SESS=$1-$$-$RANDOM; shift
	printf 'allow-write %s\n' "$P" >"$T/sess.policy"
	printf '$ sbx session start --name %s %s\n' "$SESS" "$*"
	timeout -k 5 "$TMO" "$SBX" session start -c "$T/sess.policy" --name "$SESS" "$@" >"$T/start.out" 2>"$T/start.err" ||
		fail "session start: exit $?: $(cat "$T/start.err")"
	[ "$(cat "$T/start.out")" = "$SESS" ] || fail "session start prints its name: $(cat "$T/start.out")"
	SESS_PID=$(pgrep -f -- "--name $SESS" | head -1)
	trap 'timeout 10 "$SBX" session stop "$SESS" >/dev/null 2>&1' EXIT
}

# sx ARGS...: sbx exec $SESS -- ARGS; sets RC OUT ERR
sx() {
	timeout -k 5 "$TMO" "$SBX" exec "$SESS" -- "$@" >"$T/.stdout" 2>"$T/.stderr"
	RC=$?
	OUT=$(cat "$T/.stdout"); ERR=$(cat "$T/.stderr")
}

t_session_exec_basics() { # a session runs many commands: statuses, stdio byte-exact, the client's environment less deny-env, a private TMPDIR each, its directory; refusals in that exec's own report; stop leaves nothing
	sess_start basics
	sx sh -c 'exit 3'; expect_rc 3 "exit status"
	sx nosuchcommand-here; expect_rc 127 "not found"; expect_contains "$ERR" "command not found" "not found says so"
	sx /etc/hostname; expect_rc 126 "not runnable"
	head -c 300000 /dev/urandom >"$T/blob"
	timeout 30 "$SBX" exec "$SESS" -- cat <"$T/blob" >"$T/blob.out" || fail "cat through exec"
	cmp -s "$T/blob" "$T/blob.out" || fail "stdin to stdout byte-exact through the session"
	FOO=from-client SBX_TEST_SECRET=hidden sx sh -c 'echo "foo=$FOO secret=${SBX_TEST_SECRET:-none} tmp=$TMPDIR pwd=$(pwd)"; echo t >"$TMPDIR/x"'
	expect_contains "$OUT" "foo=from-client" "the client's environment"
	expect_contains "$OUT" "pwd=$P" "the client's directory"
	local tmp1 tmp2
	tmp1=$(sed -n 's/.*tmp=\([^ ]*\).*/\1/p' <<<"$OUT")
	sx sh -c 'echo $TMPDIR; ls -A "$TMPDIR"'
	tmp2=$(head -1 <<<"$OUT")
	[ -n "$tmp1" ] && [ "$tmp1" != "$tmp2" ] || fail "each exec has a TMPDIR of its own: $tmp1 / $tmp2"
	[ "$(sed -n 2p <<<"$OUT")" = "" ] || fail "a fresh TMPDIR is empty: $OUT"
	[ ! -e "$tmp1" ] || fail "an exec's TMPDIR is removed when it ends"
	# the refusal is this exec's, and only its
	sx sh -c "echo x >'$O/evil'"
	expect_rc 2 "a write outside"
	expect_contains "$ERR" "deny " "the refusal in this exec's report"
	expect_contains "$ERR" "$O/evil" "naming the path"
	sx sh -c "echo ok >'$P/inside'"
	expect_rc 0 "control: a write inside"
	expect_not_contains "$ERR" "sandbox_violations" "the next exec's report holds none of the last one's"
	[ "$(cat "$P/inside")" = ok ] || fail "control: the write inside happened"
	[ ! -e "$O/evil" ] || fail "the write outside did not happen"
	# stop: the socket, the daemon and everything inside go
	timeout 20 "$SBX" session stop "$SESS" || fail "session stop"
	for _ in $(seq 50); do kill -0 "$SESS_PID" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$SESS_PID" 2>/dev/null && fail "the session's daemon outlived stop"
	sx true; expect_rc 125 "exec after stop"
	expect_contains "$ERR" "no session $SESS is running" "exec after stop says so"
	"$SBX" session list | grep -q "^$SESS " && fail "a stopped session is listed"
	return 0
}
TESTS+=(session_exec_basics)

t_session_background_and_signals() { # a background process one exec starts is there for the next; a signal to the client reaches its command; a killed daemon takes everything inside with it
	command -v python3 >/dev/null || skip "python3 is not installed"
	sess_start bg
	sx sh -c "cd '$P' && nohup python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & echo started"
	expect_rc 0 "the exec that starts a server returns"
	local i
	for i in $(seq 50); do
		sx python3 -c 'import urllib.request as u; print(u.urlopen("http://127.0.0.1:8765/", timeout=2).status)'
		[ "$OUT" = 200 ] && break; sleep 0.2
	done
	[ "$OUT" = 200 ] || fail "the next exec reaches the background server: $OUT $ERR"
	timeout -k 5 30 "$SBX" exec "$SESS" -- sleep "${TOKBASE}7" &
	local cpid=$!
	for i in $(seq 50); do pgrep -f "sleep ${TOKBASE}7" >/dev/null && break; sleep 0.1; done
	kill -TERM "$cpid"
	wait "$cpid"; RC=$?
	expect_rc 143 "SIGTERM to the client ends its command"
	pgrep -f "sleep ${TOKBASE}7" >/dev/null && fail "the command outlived the signal"
	# the daemon killed: the sandbox and the server inside it go
	kill -KILL "$SESS_PID"
	for i in $(seq 50); do pgrep -f "http.server 8765" >/dev/null || break; sleep 0.1; done
	pgrep -f "http.server 8765" >/dev/null && fail "a background process outlived its session's daemon"
	trap - EXIT
	return 0
}
TESTS+=(session_background_and_signals)

t_session_socket_private() { # the session's socket: nothing inside sees it, another user cannot use it; --idle ends an unused session
	sess_start priv --idle=2
	sx sh -c 'ls -A /tmp/sbx-*/ /var/tmp/sbx-*/ 2>/dev/null; echo end'
	expect_not_contains "$OUT" "sessions" "no sandboxed process sees the sessions directory"
	if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
		chmod 755 "$T" "$P" 2>/dev/null
		out=$(su nobody -s /bin/sh -c "'$SBX' exec '$SESS' -- true" 2>&1); rc=$?
		[ "$rc" = 125 ] || fail "another user's exec must fail: exit $rc: $out"
	fi
	local i
	for i in $(seq 60); do kill -0 "$SESS_PID" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$SESS_PID" 2>/dev/null && fail "--idle=2: the session is still there after 6 s"
	trap - EXIT
	return 0
}
TESTS+=(session_socket_private)
