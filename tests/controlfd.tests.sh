# tests/controlfd.tests.sh - sourced by test.sh: live policy, --control-fd N (srt's
# protocol). A running command is steered through the control fd: the network lists change at once,
# a bad line changes nothing, a filesystem change is named and not applied; srt's rules for the
# channel itself (unusable at start: 125, nothing run; an error before the first line stops the
# command, 125; end of input or an error after a line: the last policy stays); the fd never
# reaches the command.
#
# The sandboxed command and the test take turns through files in $P: the command touches
# $P/stepN and waits for $P/goN, which the test makes once sbx has said (-v, or a warning) that
# it took the line written meanwhile.

# ctl_json ALLOWED-DOMAINS-JSON-ARRAY [ALLOW-WRITE-JSON-ARRAY]: one settings object, one line
ctl_json() { printf '{"network":{"allowedDomains":%s},"filesystem":{"allowWrite":%s}}\n' "$1" "${2:-[\".\"]}"; }

# ctl_start OUTFILE SBX-ARGS...: sbx in the background in the test network, its control fd 3 the
# read end of the fifo $T/ctl, whose write end the test holds on fd 7; BGPID
ctl_start() {
	local o=$1; shift
	mkfifo "$T/ctl"
	printf '$ sbx --control-fd 3'; printf ' %q' "$@"; printf ' 3<ctl &\n'
	in_net "$SBX" --control-fd 3 "$@" >"$o" 2>"$o.err" 3<"$T/ctl" </dev/null &
	BGPID=$!
	exec 7>"$T/ctl"
}

ctl_wait_step() { # ctl_wait_step N: wait for the command's $P/stepN
	local i
	for ((i = 0; i < 300; i++)); do [ -e "$P/step$1" ] && return 0; sleep 0.1; done
	fail "the command never reached step $1"
}

# The command both runners are steered in: three requests to allowed.test, each waiting for
# the test's go between them.
# shellcheck disable=SC2016
CTL_THREE_REQUESTS='
	for i in 1 2 3; do
		curl -s -m 5 -o /dev/null -w "curl$i=%{http_code}\n" http://allowed.test:8000/
		: >"step$i"
		while [ $i -lt 3 ] && [ ! -e "go$i" ]; do sleep 0.1; done
	done'

# ctl_three_requests_steered WHO: after request 1, a line removing allowed.test, after request 2
# one adding it back (fd 7 is the channel's writing end); then 200, 403, 200 in $OUT
ctl_three_requests_steered() {
	ctl_json '[]' >&7
	wait_file_has "$T/bg.err" "line 1: network.allowedDomains applied" 10 || fail "$1 did not apply line 1"
	: >"$P/go1"
	ctl_wait_step 2
	ctl_json '["allowed.test"]' >&7
	wait_file_has "$T/bg.err" "line 2: network.allowedDomains applied" 10 || fail "$1 did not apply line 2"
	: >"$P/go2"
	exec 7>&-
	wait_pid "$BGPID" 30 || fail "$1 did not finish"
	log_file out "$T/bg"; log_file err "$T/bg.err"
	[ "$WRC" = 0 ] || fail "expected exit 0, got $WRC"
	OUT=$(cat "$T/bg"); ERR=$(cat "$T/bg.err")
	expect_contains "$OUT" "curl1=200" "control: allowed at the start"
	expect_contains "$OUT" "curl2=403" "refused once the line removed it"
	expect_contains "$OUT" "curl3=200" "allowed again once a line added it back"
}

t_controlfd_network_live() { # --control-fd: a line removing an allowed host refuses its next request (403, reported); a line adding it back allows it again
	command -v curl >/dev/null || skip "curl is not installed"
	net_up
	ctl_json '["allowed.test"]' >"$T/start.json"
	ctl_start "$T/bg" -v -c "$T/start.json" -- sh -c "$CTL_THREE_REQUESTS"
	ctl_wait_step 1
	# sbx's children that parse hostile input (the proxy, the observer) do not hold the channel
	local sbxpid= c kids=0
	for c in $BGPID $(pgrep -P $BGPID) $(pgrep -P "$(pgrep -P $BGPID | head -1)"); do
		[ "$(readlink "/proc/$c/exe")" = "$SBX" ] && { sbxpid=$c; break; }
	done
	[ -n "$sbxpid" ] && [ "$(readlink "/proc/$sbxpid/fd/3")" = "$(readlink -f "$T/ctl")" ] ||
		fail "control: sbx ($sbxpid) does not hold the fifo on fd 3"
	for c in $(pgrep -P "$sbxpid"); do
		[ "$(readlink "/proc/$c/exe")" = "$(readlink "/proc/$sbxpid/exe")" ] || continue	# bwrap
		kids=$((kids + 1))
		ls -l "/proc/$c/fd/" | grep -qF "$T/ctl" && fail "sbx's child $c ($(cat "/proc/$c/comm")) holds the control fd"
	done
	[ "$kids" -ge 1 ] || fail "control: no proxy or observer process found under sbx"
	ctl_three_requests_steered sbx
	expect_contains "$ERR" "<sandbox_violations>" "the refusal is reported"
	grep -A5 '<sandbox_violations>' "$T/bg.err" | grep -q 'allowed.test' || fail "the violations block does not name allowed.test"
	expect_not_contains "$ERR" "Invalid config" "no line was refused"
	expect_not_contains "$ERR" "changed;" "no other key changed"
}
TESTS+=(controlfd_network_live)

t_controlfd_before_proxy() { # --control-fd: a line that comes before the first connection is what the proxy, forked then, starts with
	command -v curl >/dev/null || skip "curl is not installed"
	net_up
	ctl_json '["allowed.test"]' >"$T/start.json"
	ctl_start "$T/bg" -v -c "$T/start.json" -- sh -c 'while [ ! -e go ]; do sleep 0.1; done
		curl -s -m 5 -o /dev/null -w "denied=%{http_code}\n" http://allowed.test:8000/
		curl -s -m 5 -o /dev/null -w "control=%{http_code}\n" http://also.allowed.test:8000/'
	ctl_json '["also.allowed.test"]' >&7
	exec 7>&-
	wait_file_has "$T/bg.err" "line 1: network.allowedDomains applied" 20 || fail "sbx did not apply the line"
	: >"$P/go"
	wait_pid "$BGPID" 30 || fail "sbx did not finish"
	log_file out "$T/bg"; log_file err "$T/bg.err"
	OUT=$(cat "$T/bg")
	expect_contains "$OUT" "denied=403" "the host the line removed is refused"
	expect_contains "$OUT" "control=200" "the host it added is allowed"
}
TESTS+=(controlfd_before_proxy)

t_controlfd_bad_lines() { # --control-fd: bad JSON, an unknown key and an over-long line are reported (srt's words, then why) and change nothing; an empty line is nothing
	command -v curl >/dev/null || skip "curl is not installed"
	net_up
	ctl_json '["allowed.test"]' >"$T/start.json"
	ctl_start "$T/bg" -c "$T/start.json" -- sh -c 'while [ ! -e go ]; do sleep 0.1; done
		curl -s -m 5 -o /dev/null -w "after=%{http_code}\n" http://allowed.test:8000/'
	{
		printf '{"network": {"allowedDomains": []}, \n'		# cut short: bad JSON
		echo
		printf '{"network":{"allowedDomains":[]},"filesystem":{"allowWrite":["."]},"netwrok":{}}\n'
		printf '{"network":{"allowedDomains":[]},"filesystem":{"allowWrite":["."]},"x":"%s"}\n' \
			"$(head -c 1100000 /dev/zero | tr '\0' a)"
	} >&7
	wait_file_has "$T/bg.err" "line 4: longer than" 20 || fail "sbx did not take every line"
	: >"$P/go"
	exec 7>&-
	wait_pid "$BGPID" 30 || fail "sbx did not finish"
	log_file out "$T/bg"; log_file err "$T/bg.err"
	[ "$WRC" = 0 ] || fail "expected exit 0, got $WRC"
	OUT=$(cat "$T/bg"); ERR=$(cat "$T/bg.err")
	[ "$(grep -c '^Invalid config on control fd 3: ignored, previous config still in force$' "$T/bg.err")" = 3 ] ||
		fail "expected srt's line for each of the three bad lines"
	expect_contains "$ERR" "control fd 3, line 1:" "the bad JSON's reason, with where"
	expect_contains "$ERR" 'unknown key "netwrok" (did you mean "network"?)' "the unknown key's reason"
	expect_contains "$ERR" "control fd 3, line 4: longer than 1048576 bytes" "the over-long line's"
	expect_not_contains "$ERR" "line 2:" "the empty line is not reported"
	expect_contains "$OUT" "after=200" "the policy before them stays: the host is still allowed"
}
TESTS+=(controlfd_bad_lines)

t_controlfd_filesystem_not_live() { # --control-fd: a filesystem change is named and not applied (the write stays refused); the network's still is
	ctl_json '[]' >"$T/start.json"
	mkfifo "$T/ctl"
	printf '$ sbx --control-fd 3 -c start.json -- ... 3<ctl &\n'
	"$SBX" --control-fd 3 -c "$T/start.json" -- sh -c 'while [ ! -e go ]; do sleep 0.1; done
		echo in >inside.txt && echo "inside=ok"
		echo out >"$1/x" 2>/dev/null && echo "outside=written" || echo "outside=refused"' sh "$O" \
		>"$T/bg" 2>"$T/bg.err" 3<"$T/ctl" </dev/null &
	BGPID=$!
	exec 7>"$T/ctl"
	ctl_json '["allowed.test"]' "[\".\", \"$O\"]" >&7
	wait_file_has "$T/bg.err" "filesystem.allowWrite changed" 20 || fail "no warning naming filesystem.allowWrite"
	: >"$P/go"
	exec 7>&-
	wait_pid "$BGPID" 30 || fail "sbx did not finish"
	log_file out "$T/bg"; log_file err "$T/bg.err"
	OUT=$(cat "$T/bg"); ERR=$(cat "$T/bg.err")
	expect_contains "$ERR" "control fd 3: filesystem.allowWrite changed; a running sandbox's filesystem cannot change" \
		"the warning says why"
	expect_not_contains "$ERR" "Invalid config" "the line itself is good"
	expect_contains "$OUT" "inside=ok" "control: a write inside the project works"
	expect_contains "$OUT" "outside=refused" "the write the line would allow is still refused"
	[ ! -e "$O/x" ] || fail "$O/x was written"
}
TESTS+=(controlfd_filesystem_not_live)

t_controlfd_not_inside() { # --control-fd: the descriptor never reaches the command (/proc/self/fd, a read of it)
	ctl_json '[]' >"$T/start.json"
	run_sbx --control-fd 9 -c "$T/start.json" -- sh -c 'ls /proc/self/fd | tr "\n" " "; echo
		if [ -e /proc/self/fd/9 ]; then echo "fd9=visible"; else echo "fd9=absent"; fi
		cat <&9 >/dev/null 2>&1 && echo "read9=ok" || echo "read9=refused"' 9< <(sleep 5; ctl_json '[]')
	expect_rc 0
	expect_contains "$OUT" "fd9=absent" "fd 9 is not open inside"
	expect_contains "$OUT" "read9=refused" "nothing can be read from it"
	expect_eq "$(head -1 <<<"$OUT")" "0 1 2 3 " "only stdin, stdout, stderr and ls's own directory are open"
}
TESTS+=(controlfd_not_inside)

t_controlfd_unusable() { # --control-fd: closed, write-only or a bad number: srt's words, exit 125, nothing run; a readable one runs
	ctl_json '[]' >"$T/start.json"
	run_sbx --control-fd 9 -c "$T/start.json" -- sh -c ': >ran1'
	expect_rc 125 "a closed fd"
	expect_contains "$ERR" "Error: --control-fd 9 is not usable: Bad file descriptor. Refusing to run the command without the control channel it asks for." "srt's words"
	run_sbx --control-fd 9 -c "$T/start.json" -- sh -c ': >ran2' 9>"$T/wo"
	expect_rc 125 "a write-only fd"
	expect_contains "$ERR" "is not usable: Bad file descriptor" "a write-only fd"
	run_sbx --control-fd 2 -c "$T/start.json" -- sh -c ': >ran3'
	expect_rc 125 "fd 2"
	expect_contains "$ERR" "must be an integer file descriptor >= 3 (0-2 are stdin, stdout and stderr)." "srt's words"
	run_sbx --control-fd 3x -c "$T/start.json" -- sh -c ': >ran4'
	expect_rc 125 "3x"
	[ ! -e ran1 ] && [ ! -e ran2 ] && [ ! -e ran3 ] && [ ! -e ran4 ] || fail "a refused run ran the command"
	run_sbx --control-fd 9 -c "$T/start.json" -- sh -c ': >ran5' 9</dev/null
	expect_rc 0 "control: a readable fd (at its end at once)"
	[ -e ran5 ] || fail "control: the command did not run"
}
TESTS+=(controlfd_unusable)

t_controlfd_fails_first() { # --control-fd: a read error before the first line stops the command (SIGTERM), exit 125, srt's words
	ctl_json '[]' >"$T/start.json"
	local t0=$SECONDS
	run_sbx --control-fd 9 -c "$T/start.json" -- sh -c 'sleep 20; : >finished' 9<"$P"
	expect_rc 125 "a directory: EISDIR on the first read"
	expect_contains "$ERR" "Error: control fd 9 failed before delivering an update: Is a directory. Refusing to run the command without the control channel it asks for." "srt's words"
	[ ! -e finished ] || fail "the command ran to its end"
	[ $((SECONDS - t0)) -lt 15 ] || fail "the command was not stopped"
}
TESTS+=(controlfd_fails_first)

t_controlfd_eof_and_error_after_line() { # --control-fd: end of input mid-run, or a read error after a line: the command goes on under the last policy
	command -v python3 >/dev/null || skip "python3 is not installed"
	ctl_json '[]' >"$T/start.json"
	# end of input: the writer sends one line and closes
	run_sbx --control-fd 9 -c "$T/start.json" -- sh -c 'sleep 1; echo still-running' 9< <(ctl_json '[]'; ctl_json '["allowed.test"]')
	expect_rc 0 "end of input"
	expect_contains "$OUT" "still-running" "the command goes on after end of input"
	expect_not_contains "$ERR" "Error" "end of input is no error"
	# a read error after a line: a socket whose peer closes with bytes unread (ECONNRESET)
	printf '$ python3 (a socketpair as the control fd, reset after a line)\n'
	python3 - "$SBX" "$T/start.json" >"$T/py.out" 2>"$T/py.err" <<'EOF'
import socket, subprocess, sys, time
a, b = socket.socketpair()
p = subprocess.Popen([sys.argv[1], "--control-fd", str(b.fileno()), "-c", sys.argv[2], "--",
    "sh", "-c", "sleep 2; echo still-running"], pass_fds=[b.fileno()])
a.sendall(b'{"network":{"allowedDomains":["allowed.test"]},"filesystem":{"allowWrite":["."]}}\n')
time.sleep(1)
b.sendall(b"x")   # into a's queue: a closed with it unread resets b
b.close()
a.close()
sys.exit(p.wait())
EOF
	RC=$?
	log_file out "$T/py.out"; log_file err "$T/py.err"
	[ "$RC" = 0 ] || fail "a read error after a line: expected exit 0, got $RC"
	grep -q still-running "$T/py.out" || fail "the command did not go on"
	grep -q "^Error reading control fd [0-9]*: Connection reset by peer. The control channel is closed; no further updates will be applied.$" \
		"$T/py.err" || fail "srt's words for an error after a line"
}
TESTS+=(controlfd_eof_and_error_after_line)

t_controlfd_macsim() { # sbx-macsim --control-fd (the macOS runner): the proxy's lists change live, 403 then 200 again; an error before the first line stops the command, 125
	command -v curl >/dev/null || skip "curl is not installed"
	macsim_setup
	net_up
	ctl_json '["allowed.test"]' >"$T/start.json"
	mkfifo "$T/ctl"
	printf '$ sbx-macsim --control-fd 3 -v -c start.json -- ... 3<ctl &\n'
	in_net "$MACSIM" --control-fd 3 -v -c "$T/start.json" -- sh -c "$CTL_THREE_REQUESTS" >"$T/bg" 2>"$T/bg.err" 3<"$T/ctl" </dev/null &
	BGPID=$!
	exec 7>"$T/ctl"
	ctl_wait_step 1
	ctl_three_requests_steered sbx-macsim
	# a read error before the first line: the command is stopped, 125
	run_macsim --control-fd 9 -c "$T/start.json" -- sh -c 'sleep 20; : >finished' 9<"$P"
	expect_rc 125 "a directory as the control fd"
	expect_contains "$ERR" "Error: control fd 9 failed before delivering an update: Is a directory." "srt's words"
	[ ! -e finished ] || fail "the command ran to its end"
}
TESTS+=(controlfd_macsim)

t_controlfd_memory_bounded() { # --control-fd: 400 lines of 1000 domains each leave sbx's memory bounded (each line's reading released)
	command -v python3 >/dev/null || skip "python3 is not installed"
	ctl_json '[]' >"$T/start.json"
	python3 -c '
import json
for i in range(400):
    print(json.dumps({"network": {"allowedDomains": ["d%d-%d.test" % (i % 2, k) for k in range(1000)]},
                      "filesystem": {"allowWrite": ["."]}}))' >"$T/lines"
	printf '$ SBX_REPORT_RSS=1 sbx -v --control-fd 3 -c start.json -- ... 3<lines &\n'
	SBX_REPORT_RSS=1 "$SBX" -v --control-fd 3 -c "$T/start.json" -- sh -c 'while [ ! -e go ]; do sleep 0.1; done' \
		>"$T/bg" 2>"$T/bg.err" 3<"$T/lines" </dev/null &
	BGPID=$!
	wait_file_has "$T/bg.err" "control fd 3, line 400: network.allowedDomains applied" 50 || fail "sbx did not apply the 400 lines"
	: >"$P/go"
	wait_pid "$BGPID" 30 || fail "sbx did not finish"
	local rss
	rss=$(sed -n 's/^sbx: peak RSS \([0-9]*\) KiB$/\1/p' "$T/bg.err")
	note "peak RSS ${rss:-?} KiB after 400 lines of about 22 KiB"
	[ -n "$rss" ] || fail "no peak RSS line"
	[ "$rss" -lt 20000 ] || fail "sbx's peak RSS is ${rss} KiB: the lines' readings are kept"
}
TESTS+=(controlfd_memory_bounded)

t_controlfd_as_srt() { # srt --control-fd N (sbx run as srt) reads the same channel: a bad line reported and ignored, a closed fd 125, a good line applied (-d)
	srt_link
	srt_settings "$T/s.json" "$P"
	run_sbx -d -s "$T/s.json" --control-fd 9 -c 'sleep 1; echo ran' 9< <(printf '{bad\n'; ctl_json '["allowed.test"]')
	expect_rc 0 "srt --control-fd 9"
	expect_contains "$OUT" "ran" "the command ran"
	expect_contains "$ERR" "Invalid config on control fd 9: ignored, previous config still in force" "the bad line"
	expect_contains "$ERR" "control fd 9, line 2: network.allowedDomains applied" "the good line (-d is -v)"
	run_sbx -s "$T/s.json" --control-fd 9 -c ': >ran2'
	expect_rc 125 "srt --control-fd 9, closed"
	expect_contains "$ERR" "Error: --control-fd 9 is not usable: Bad file descriptor." "srt's words"
	[ ! -e "$P/ran2" ] || fail "the command ran without its channel"
}
TESTS+=(controlfd_as_srt)

t_controlfd_denied_addresses_live() { # --control-fd: a line's deniedResolvedAddresses applies, both to the proxy forked after it (the first request) and to the running one: allowed.test, resolving to a listed address, is refused; control: a line without it allows the same request again
	command -v curl >/dev/null || skip "curl is not installed"
	net_up
	local i
	ctl_deny() { printf '{"network":{"allowedDomains":["allowed.test"],"deniedResolvedAddresses":%s},"filesystem":{"allowWrite":["."]}}\n' "$1"; }
	ctl_deny '[]' >"$T/start.json"
	ctl_start "$T/bg" -v -c "$T/start.json" -- sh -c 'for i in 1 2 3; do
			while [ ! -e "go$i" ]; do sleep 0.1; done
			curl -s -m 5 -o /dev/null -w "curl$i=%{http_code}\n" http://allowed.test:8000/
			: >"step$i"
		done'
	for i in 1 2 3; do
		case $i in 2) ctl_deny '[]' ;; *) ctl_deny "[\"$NSIP/32\"]" ;; esac >&7
		wait_file_has "$T/bg.err" "line $i: network.deniedResolvedAddresses applied" 10 || fail "sbx did not apply line $i"
		: >"$P/go$i"
		ctl_wait_step "$i"
	done
	exec 7>&-
	wait_pid "$BGPID" 30 || fail "sbx did not finish"
	log_file out "$T/bg"; log_file err "$T/bg.err"
	[ "$WRC" = 0 ] || fail "expected exit 0, got $WRC"
	OUT=$(cat "$T/bg"); ERR=$(cat "$T/bg.err")
	expect_contains "$OUT" "curl1=403" "a line before the first request: the proxy forked then refuses the listed address"
	expect_contains "$OUT" "curl2=200" "control: a line without it allows the request"
	expect_contains "$OUT" "curl3=403" "a line to the running proxy: the listed address is refused"
	expect_contains "$ERR" "deny network-outbound allowed.test:8000" "the refusal is reported"
}
TESTS+=(controlfd_denied_addresses_live)
