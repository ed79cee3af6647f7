# tests/mitm.tests.sh - sourced by test.sh: the MITM proxy route (mitm-proxy, srt's
# network.mitmProxy). The MITM proxy is tests/helpers/upstream_proxy.py listening on a
# Unix socket on this machine ($T/mitm.sock); sbx dials it for the proxy, which may not create a
# Unix socket itself. Names it resolves (far.test) are known to it only, so reaching one proves the
# connection went through it; it logs every request. The policy decides first, always; each test
# has its control in the same run. in_net_nodns and parent_up come from tests/parent.tests.sh.

# mitm_up [ARGS...]: the test host (net_up), and the MITM proxy on $T/mitm.sock, logging to
# $T/mitm.log; far.test and denied.test are the test host to it (denied.test: a name it could
# reach, if asked); ARGS go to the proxy (more --host NAME=IP: call net_up first for $NSIP)
mitm_up() {
	[ -n "${NSIP:-}" ] || net_up
	: >"$T/mitm.log"
	python3 "$HERE/tests/helpers/upstream_proxy.py" - - "$T/mitm.log" --unix "$T/mitm.sock" \
		--host "far.test=$NSIP" --host "denied.test=$NSIP" "$@" >"$T/mitm.err" 2>&1 &
	local i; for i in $(seq 50); do [ -S "$T/mitm.sock" ] && break; sleep 0.1; done
	[ -S "$T/mitm.sock" ] || fail "the MITM proxy did not start: $(cat "$T/mitm.err")"
}

# the same requests in each run: absolute-form HTTP, a CONNECT tunnel (curl -p), SOCKS5 (carried
# as CONNECT), a host not on the MITM route, a host the policy refuses (listed on the route too)
MITM_SCRIPT='
for how in "" "-p" "--socks5-hostname 127.0.0.1:1080"; do
	printf "%s: " "${how:-absolute}"; curl -s -m 10 $how http://far.test:8000/ || echo "curl exit $?"
done
printf "direct: "; curl -s -m 10 http://allowed.test:8000/ || echo "curl exit $?"
printf "policy: "; curl -s -m 10 -o /dev/null -w "%{http_code}\n" http://denied.test:8000/
printf "policy tunnel: "; curl -s -m 10 -p -o /dev/null http://denied.test:8000/; echo "curl exit $?"
printf "spelling: "; python3 -c "import socket; s = socket.create_connection((\"127.0.0.1\", 3128)); s.sendall(b\"CONNECT FAR.Test.:8000 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n\"); print(s.recv(100).split(b\"\\r\\n\")[0].decode())"'

t_mitm_proxy_routes() { # mitm-proxy: a denied host on the route never reaches the socket (403 first); absolute-form HTTP, CONNECT and SOCKS reach far.test only through the socket; a host off the route goes direct; -v names the route
	command -v curl >/dev/null || skip "curl is not installed"
	mitm_up
	printf 'allow-write .\nallow-domain far.test\nallow-domain allowed.test\nallow-domain denied.test\n' >"$T/mitm"
	printf 'deny-domain denied.test\nmitm-proxy %s\nmitm-proxy-domain far.test\nmitm-proxy-domain denied.test\n' \
		"$T/mitm.sock" >>"$T/mitm"
	# control: without the route, far.test does not resolve here at all
	in_net_nodns "$SBX" -c "$T/net" --allow-domain=far.test -- curl -s -m 10 -o /dev/null -w '%{http_code}\n' \
		http://far.test:8000/ >"$T/ctl.out" 2>&1
	grep -q '^502' "$T/ctl.out" || fail "control: far.test should not be reachable without the MITM proxy: $(cat "$T/ctl.out")"
	in_net_nodns "$SBX" -v -c "$T/mitm" -- sh -c "$MITM_SCRIPT" >"$T/r.out" 2>"$T/r.err"; RC=$?
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err")
	log_file out "$T/r.out"; log_file mitm "$T/mitm.log"
	expect_rc 0
	# the attack first: a host the policy denies, though the route names it, is refused before
	# anything is dialled, and the socket never hears of it
	expect_contains "$OUT" "policy: 403" "the policy decides first (plain HTTP)"
	grep -q "^policy tunnel: curl exit 56" "$T/r.out" || fail "the policy decides first (CONNECT): $(grep '^policy tunnel' "$T/r.out")"
	! grep -q "denied.test" "$T/mitm.log" || fail "a denied host reached the MITM socket"
	expect_contains "$ERR" "deny network-outbound denied.test:8000" "the policy's refusal is a violation"
	# control, same run: the allowed host on the route went through the socket, each client kind
	for how in absolute -p "--socks5-hostname 127.0.0.1:1080"; do
		grep -q -- "^$how: hello-from-test-host" "$T/r.out" || fail "$how: far.test through the MITM proxy: $(grep -- "^$how" "$T/r.out")"
	done
	grep -q "^GET http://far.test:8000/ auth=-\$" "$T/mitm.log" || fail "plain HTTP in absolute form, with no credential"
	[ "$(grep -c "^CONNECT far.test:8000 auth=-\$" "$T/mitm.log")" = 3 ] || fail "CONNECT for curl -p, for SOCKS and for FAR.Test."
	expect_contains "$OUT" "spelling: HTTP/1.1 200 Connection Established" "a client's own spelling of an allowed host on the route"
	! grep -q "FAR.Test" "$T/mitm.log" || fail "the client's spelling reached the MITM proxy, not the one the policy judged"
	expect_contains "$OUT" "direct: hello-from-test-host" "a host off the route"
	! grep -q "allowed.test" "$T/mitm.log" || fail "a host off the route went to the MITM socket"
	expect_contains "$ERR" "far.test:8000 via the MITM proxy" "-v says the route"
	expect_contains "$ERR" "MITM proxy for 2 host patterns (before any parent): $T/mitm.sock" "-v names the socket"
}
TESTS+=(mitm_proxy_routes)

t_mitm_proxy_before_parent() { # srt's order, MITM socket > parent > direct: far.test goes to the socket although a parent proxy is set; a host off the route takes the parent
	command -v curl >/dev/null || skip "curl is not installed"
	parent_up	# net_up, then the parent on $NSIP:3128
	mitm_up		# the same test host
	in_net_nodns "$SBX" -c "$T/net" --allow-domain=far.test --parent-proxy="http://$NSIP:3128" \
		--mitm-proxy="$T/mitm.sock" --mitm-proxy-domain=far.test -- \
		sh -c 'printf "mitm: "; curl -s -m 10 -p http://far.test:8000/; printf "parent: "; curl -s -m 10 -p http://allowed.test:8000/' \
		>"$T/r.out" 2>"$T/r.err"
	OUT=$(cat "$T/r.out"); log_file out "$T/r.out"; log_file err "$T/r.err"; log_file mitm "$T/mitm.log"; log_file up "$T/up.log"
	expect_contains "$OUT" "mitm: hello-from-test-host" "far.test through the MITM proxy"
	expect_contains "$OUT" "parent: hello-from-test-host" "allowed.test through the parent"
	grep -q "^CONNECT far.test:8000 " "$T/mitm.log" || fail "the MITM proxy saw far.test"
	! grep -q "far.test" "$T/up.log" || fail "far.test went to the parent, not the MITM socket"
	grep -q "^CONNECT allowed.test:8000 " "$T/up.log" || fail "control: the parent saw allowed.test"
	! grep -q "allowed.test" "$T/mitm.log" || fail "allowed.test went to the MITM socket"
}
TESTS+=(mitm_proxy_before_parent)

t_mitm_proxy_dead_socket() { # a socket nobody listens on (ECONNREFUSED) or that is not there (ENOENT): 502 for HTTP and CONNECT, SOCKS host unreachable, a record saying why; nothing goes direct
	command -v curl >/dev/null || skip "curl is not installed"
	net_up
	python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$T/dead.sock"
	[ -S "$T/dead.sock" ] || fail "could not make a dead socket"
	local sock
	for sock in "$T/dead.sock|Connection refused" "$T/none.sock|No such file or directory"; do
		# allowed.test resolves here: were the route skipped, it would answer directly
		in_net "$SBX" -v -c "$T/net" --mitm-proxy="${sock%%|*}" --mitm-proxy-domain=allowed.test -- sh -c '
			printf "absolute: "; curl -s -m 10 -o /dev/null -w "%{http_code}\n" http://allowed.test:8000/
			printf "connect: "; curl -s -m 10 -p -o /dev/null -w "%{http_connect}\n" http://allowed.test:8000/; echo "curl exit $?"
			printf "socks: "; curl -s -m 10 --socks5-hostname 127.0.0.1:1080 http://allowed.test:8000/; echo "curl exit $?"' \
			>"$T/r.out" 2>"$T/r.err"
		OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err"); log_file out "$T/r.out"; log_file err "$T/r.err"
		expect_contains "$OUT" "absolute: 502" "${sock%%|*}: plain HTTP gets 502"
		expect_contains "$OUT" "connect: 502" "${sock%%|*}: CONNECT gets 502"
		grep -q "^socks: curl exit 97" "$T/r.out" || fail "${sock%%|*}: SOCKS gets a refusal: $(grep '^socks' "$T/r.out")"
		! grep -q hello-from-test-host "$T/r.out" || fail "${sock%%|*}: a connection went around the dead route"
		expect_contains "$ERR" "fail http allowed.test:8000 via the MITM proxy (the MITM proxy's socket ${sock%%|*}: ${sock#*|})" \
			"${sock%%|*}: the record says why"
		expect_contains "$ERR" "fail socks5 allowed.test:8000 via the MITM proxy" "${sock%%|*}: the SOCKS one too"
		if [ "${sock%%|*}" = "$T/none.sock" ]; then
			expect_contains "$ERR" "warning: mitm-proxy $T/none.sock: no socket there (yet)" "a missing socket is said at the start"
		else
			expect_not_contains "$ERR" "warning: mitm-proxy" "control: a socket that is there is not warned about"
		fi
	done

}
TESTS+=(mitm_proxy_dead_socket)

t_mitm_proxy_policy() { # strict reading: a relative or overlong socket, a port on a route host, either half alone, srt's required keys; both printers round-trip; srt's settings file routes the same
	printf 'allow-write .\nallow-domain far.test\nmitm-proxy-domain far.test\n' >"$T/half"
	run_sbx -c "$T/half" -- true
	expect_rc 125 "mitm-proxy-domain without mitm-proxy"
	expect_contains "$ERR" "$T/half:3: mitm-proxy-domain far.test: no mitm-proxy names the socket" "the file, line and problem"
	printf 'mitm-proxy /run/mitm.sock\n' >"$T/half2"
	run_sbx -c "$T/half2" -- true
	expect_rc 125 "mitm-proxy without a host"
	expect_contains "$ERR" "$T/half2:1: mitm-proxy /run/mitm.sock: no mitm-proxy-domain" "the file, line and problem"
	run_sbx -c "$T/half2" --mitm-proxy-domain=far.test:443 -- true
	expect_contains "$ERR" "mitm-proxy-domain far.test:443: a host with no :port" "a port on a route host"
	run_sbx -c "$T/half2" --mitm-proxy-domain='*.com' -- true
	expect_contains "$ERR" "patterns as broad as" "a pattern as broad as *.com"
	printf 'mitm-proxy run/mitm.sock\n' >"$T/rel"
	run_sbx -c "$T/rel" -- true
	expect_contains "$ERR" "$T/rel:1: mitm-proxy run/mitm.sock: the socket path must be absolute" "a relative socket"
	printf 'mitm-proxy /%0200d\n' 0 >"$T/long"
	run_sbx -c "$T/long" -- true
	expect_contains "$ERR" "longer than a Unix socket address holds" "an overlong socket path"
	printf '{"network":{"allowedDomains":[],"deniedDomains":[],"mitmProxy":{"socketPath":"/run/m.sock"}},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}\n' >"$T/req.json"
	run_sbx -c "$T/req.json" -- true
	expect_rc 125 "srt's mitmProxy without domains"
	expect_contains "$ERR" "network.mitmProxy.domains: required" "srt's required key"
	printf '{"network":{"allowedDomains":["far.test"],"deniedDomains":[],"mitmProxy":{"socketPath":"/run/m.sock","domains":["far.test","*.far.test","::1"]}},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}\n' >"$T/ok.json"
	run_sbx -c "$T/ok.json" --print=policy
	expect_rc 0 "srt's mitmProxy reads"
	printf '%s\n' "$OUT" >"$T/ok.pol"
	expect_contains "$OUT" "mitm-proxy /run/m.sock" "the line format's socket"
	expect_contains "$OUT" "mitm-proxy-domain *.far.test" "the line format's hosts"
	run_sbx -c "$T/ok.pol" --print=json
	expect_rc 0 "the printed policy reads back"
	printf '%s\n' "$OUT" >"$T/again.json"
	run_sbx -c "$T/again.json" --print=policy
	expect_eq "$OUT" "$(cat "$T/ok.pol")" "both printers round-trip"
	run_sbx -c "$T/ok.json" --explain=far.test:443
	expect_contains "$OUT" "far.test:443: allow; through the MITM proxy at /run/m.sock" "--explain names the route"
}
TESTS+=(mitm_proxy_policy)

t_macsim_mitm_proxy() { # sbx-macsim (the macOS runner, simulated): the same route through its loopback proxy: absolute form and CONNECT reach far.test only through the socket, a denied host on the route never reaches it (control: direct for a host off the route)
	command -v curl >/dev/null || skip "curl is not installed"
	macsim_setup
	mitm_up
	run_macsim_net --allow-write="$P" --allow-domain=far.test --allow-domain=allowed.test --deny-domain=denied.test \
		--mitm-proxy="$T/mitm.sock" --mitm-proxy-domain=far.test --mitm-proxy-domain=denied.test -- sh -c '
		printf "absolute: "; curl -s -m 10 http://far.test:8000/ || echo "curl exit $?"
		printf "connect: "; curl -s -m 10 -p http://far.test:8000/ || echo "curl exit $?"
		printf "direct: "; curl -s -m 10 http://allowed.test:8000/ || echo "curl exit $?"
		printf "policy: "; curl -s -m 10 -o /dev/null -w "%{http_code}\n" http://denied.test:8000/'
	log_file mitm "$T/mitm.log"
	expect_rc 0 "sbx-macsim"
	expect_contains "$OUT" "policy: 403" "the policy first"
	! grep -q denied.test "$T/mitm.log" || fail "a denied host reached the MITM socket"
	expect_contains "$OUT" "absolute: hello-from-test-host" "plain HTTP through the MITM proxy"
	expect_contains "$OUT" "connect: hello-from-test-host" "CONNECT through the MITM proxy"
	expect_contains "$OUT" "direct: hello-from-test-host" "control: a host off the route"
	grep -q "^GET http://far.test:8000/ auth=-\$" "$T/mitm.log" && grep -q "^CONNECT far.test:8000 auth=-\$" "$T/mitm.log" ||
		fail "the MITM proxy saw both, with no credential (the run's own is never passed on)"
	! grep -q allowed.test "$T/mitm.log" || fail "a host off the route went to the socket"
}
TESTS+=(macsim_mitm_proxy)

t_mitm_proxy_not_live() { # --control-fd: a line that moves hosts off the MITM route is named and not applied (far.test still goes through the socket after it); control: the same line's allow list applies at once
	command -v curl >/dev/null || skip "curl is not installed"
	mitm_up
	local start='{"network":{"allowedDomains":["far.test"],"deniedDomains":[],"mitmProxy":{"socketPath":"'$T'/mitm.sock","domains":["far.test"]}},"filesystem":{"allowWrite":["."]}}'
	printf '%s\n' "$start" >"$T/start.json"
	mkfifo "$T/ctl"
	printf '%s\n' "$start" | sed 's|"allowedDomains":\["far.test"\]|"allowedDomains":["far.test","allowed.test"]|; s|"domains":\["far.test"\]|"domains":["other.test"]|' >"$T/line"
	in_net_nodns "$SBX" -v --control-fd 3 -c "$T/start.json" -- sh -c '
		while [ ! -e go ]; do sleep 0.1; done
		printf "mitm: "; curl -s -m 10 -p http://far.test:8000/ || echo "curl exit $?"
		printf "live: "; curl -s -m 10 -o /dev/null -w "%{http_code}\n" http://allowed.test:8000/' \
		>"$T/bg" 2>"$T/bg.err" 3<"$T/ctl" </dev/null &
	BGPID=$!
	exec 7>"$T/ctl"
	cat "$T/line" >&7
	wait_file_has "$T/bg.err" "line 1: network.allowedDomains applied" 20 || fail "sbx did not apply the line"
	: >"$P/go"
	exec 7>&-
	wait_pid "$BGPID" 30 || fail "sbx did not finish"
	OUT=$(cat "$T/bg"); ERR=$(cat "$T/bg.err"); log_file out "$T/bg"; log_file err "$T/bg.err"; log_file mitm "$T/mitm.log"
	expect_contains "$ERR" "control fd 3: network.mitmProxy.domains changed; the routes (parent and MITM proxies) are the run's, set when it starts, so this change is ignored" "the route change is named"
	expect_contains "$OUT" "mitm: hello-from-test-host" "far.test still through the socket"
	grep -q "^CONNECT far.test:8000 " "$T/mitm.log" || fail "the MITM proxy saw far.test after the line"
	expect_contains "$OUT" "live: 200" "control: the allow list applied at once"
}
TESTS+=(mitm_proxy_not_live)

t_mitm_proxy_no_guard() { # nothing is resolved on the MITM route, so the resolved-address guard does not apply (srt 5.6): rebind.test, 127.0.0.1 in this machine's hosts file, goes to the socket; control: off the route it is refused by the guard
	command -v curl >/dev/null || skip "curl is not installed"
	net_up
	mitm_up --host "rebind.test=$NSIP"
	in_net "$SBX" -v -c "$T/net" --mitm-proxy="$T/mitm.sock" --mitm-proxy-domain=rebind.test -- \
		sh -c 'printf "mitm: "; curl -s -m 10 -p http://rebind.test:8000/ || echo "curl exit $?"' >"$T/r.out" 2>"$T/r.err"
	in_net "$SBX" -v -c "$T/net" -- \
		sh -c 'printf "direct: "; curl -s -m 10 -o /dev/null -w "%{http_code}\n" http://rebind.test:8000/' >>"$T/r.out" 2>>"$T/r.err"
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err"); log_file out "$T/r.out"; log_file err "$T/r.err"; log_file mitm "$T/mitm.log"
	expect_contains "$OUT" "mitm: hello-from-test-host" "rebind.test through the MITM proxy, which resolves it"
	grep -q "^CONNECT rebind.test:8000 " "$T/mitm.log" || fail "the MITM proxy saw rebind.test"
	expect_contains "$OUT" "direct: 403" "control: off the route, the guard refuses a name resolving to loopback"
	expect_contains "$ERR" "deny network-outbound rebind.test:8000 (resolved to a loopback address)" "the guard's reason"
}
TESTS+=(mitm_proxy_no_guard)
