# tests/parent.tests.sh - sourced by test.sh: the parent (upstream) proxy route.
# A small upstream proxy (tests/helpers/upstream_proxy.py) runs in the test namespace; names it
# resolves (far.test) are known to it only, so reaching one proves the connection went through
# it. The policy decides first, always; each test has its control in the same run.

# in_net_nodns CMD: in_net, and no name server either (127.0.0.1, where none listens): a name the
# parent alone knows must never be looked up outside the test network
in_net_nodns() {
	printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"$T/resolv.conf"
	unshare -m sh -c 'mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/resolv.conf && shift 2 && exec "$@"' \
		sh "$T/hosts" "$T/resolv.conf" "$@"
}

# parent_up [ARGS...]: the upstream proxy on $NSIP:3128, logging to $T/up.log; far.test, refuse.test
# and allowed.test are the test host to it. In the test network already up, if one is (a second
# net_up would make another and leave the first behind).
parent_up() {
	[ -n "${NS:-}" ] || net_up
	: >"$T/up.log"
	ip netns exec "$NS" python3 "$HERE/tests/helpers/upstream_proxy.py" "$NSIP" 3128 "$T/up.log" \
		--host "far.test=$NSIP" --host "refuse.test=$NSIP" --host "allowed.test=$NSIP" --refuse refuse.test "$@" \
		>"$T/up.err" 2>&1 &
	local i; for i in $(seq 50); do curl -s -m 1 -o /dev/null "http://$NSIP:3128/" && break; sleep 0.1; done
	UPAUTH="auth=Basic $(printf 'u:p' | base64)"
}

# the same requests in each run: absolute-form HTTP, a CONNECT tunnel (curl -p), SOCKS5, a bypassed
# host, a host the policy refuses, a CONNECT the parent refuses, a client's own proxy credential
PARENT_SCRIPT='
for how in "" "-p" "--socks5-hostname 127.0.0.1:1080"; do
	printf "%s: " "${how:-absolute}"; curl -s -m 10 $how http://far.test:8000/ || echo "curl exit $?"
done
printf "bypass: "; curl -s -m 10 http://allowed.test:8000/ || echo "curl exit $?"
printf "policy: "; curl -s -m 10 -o /dev/null -w "%{http_code}\n" http://denied.test/
printf "refused: "; curl -s -m 10 -p -o /dev/null http://refuse.test:8000/; echo "curl exit $?"
printf "client credential: "; curl -s -m 10 -x http://evil:secret@127.0.0.1:3128 http://far.test:8000/?q || echo "curl exit $?"'

t_parent_proxy_routes() { # parent-proxy: absolute-form HTTP, CONNECT and SOCKS reach far.test only through it, with its credential; bypass, policy first, a refused CONNECT, the client's credential never forwarded
	command -v curl >/dev/null || skip "curl is not installed"
	parent_up --auth u:p
	printf 'allow-write .\nallow-domain far.test\nallow-domain refuse.test\nallow-domain allowed.test\n' >"$T/parent"
	printf 'deny-domain denied.test\nparent-proxy http://u:p@%s:3128\nparent-proxy-bypass allowed.test\n' "$NSIP" >>"$T/parent"
	# control: without the parent, far.test does not resolve here at all
	in_net_nodns "$SBX" -c "$T/net" --allow-domain=far.test -- curl -s -m 10 -o /dev/null -w '%{http_code}\n' \
		http://far.test:8000/ >"$T/ctl.out" 2>&1
	grep -q '^502' "$T/ctl.out" || fail "control: far.test should not be reachable without the parent: $(cat "$T/ctl.out")"
	in_net_nodns "$SBX" -v -c "$T/parent" -- sh -c "$PARENT_SCRIPT" >"$T/r.out" 2>"$T/r.err"; RC=$?
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err")
	log_file out "$T/r.out"; log_file up "$T/up.log"
	expect_rc 0
	for how in absolute -p "--socks5-hostname 127.0.0.1:1080"; do
		grep -q -- "^$how: hello-from-test-host" "$T/r.out" || fail "$how: far.test through the parent: $(grep -- "^$how" "$T/r.out")"
	done
	expect_contains "$OUT" "bypass: hello-from-test-host" "a bypassed host, directly"
	expect_contains "$OUT" "policy: 403" "the policy decides first"
	grep -q "^refused: curl exit 56" "$T/r.out" || fail "a CONNECT the parent refuses fails at the client: $(grep '^refused' "$T/r.out")"
	expect_contains "$OUT" "client credential: hello-from-test-host" "a client's own proxy credential"
	# what the parent saw: its credential on every request, never the client's
	grep -q "^GET http://far.test:8000/ $UPAUTH\$" "$T/up.log" || fail "absolute form with the parent's credential"
	[ "$(grep -c "^CONNECT far.test:8000 $UPAUTH\$" "$T/up.log")" = 2 ] || fail "CONNECT (curl -p and SOCKS) with the parent's credential"
	grep -q "^GET http://far.test:8000/?q $UPAUTH\$" "$T/up.log" || fail "the client's credential replaced by the parent's"
	! grep -q "evil\|ZXZpbDpzZWNyZXQ" "$T/up.log" || fail "the client's own Proxy-Authorization reached the parent"
	! grep -q "allowed.test\|denied.test" "$T/up.log" || fail "a bypassed or refused host went to the parent"
	grep -q "^CONNECT refuse.test:8000 " "$T/up.log" || fail "control: the refused CONNECT did reach the parent"
	expect_contains "$ERR" "far.test:8000 via the parent proxy" "-v says the route"
	expect_contains "$ERR" "the parent proxy refused the tunnel: HTTP/1.1 403 Forbidden by upstream policy" "the parent's refusal, with its status line"
	expect_contains "$ERR" "deny network-outbound denied.test:80" "the policy's refusal is a violation"
}
TESTS+=(parent_proxy_routes)

t_parent_proxy_failures() { # a wrong parent credential (407 from the parent), a dead parent: the client gets 502, -v says why; nothing is tried directly
	command -v curl >/dev/null || skip "curl is not installed"
	parent_up --auth u:p
	local how
	for how in "http://u:wrong@$NSIP:3128|the parent proxy refused the tunnel: HTTP/1.1 407" \
		"http://$NSIP:3999|the parent proxy $NSIP:3999 refused the connection or is unreachable"; do
		in_net_nodns "$SBX" -v -c "$T/net" --allow-domain=far.test --parent-proxy="${how%%|*}" -- \
			sh -c 'curl -s -m 10 -p -o /dev/null http://far.test:8000/; echo "curl exit $?"; curl -s -m 10 -o /dev/null -w "%{http_code}\n" http://far.test:8000/' \
			>"$T/r.out" 2>"$T/r.err"
		log_file out "$T/r.out"; log_file err "$T/r.err"
		grep -q "curl exit 56" "$T/r.out" || fail "${how%%|*}: the tunnel fails at the client: $(cat "$T/r.out")"
		grep -q "${how#*|}" "$T/r.err" || fail "${how%%|*}: -v says why: expected '${how#*|}'"
	done
	grep -q "^GET http://far.test:8000/ auth=Basic $(printf 'u:wrong' | base64)\$" "$T/up.log" ||
		fail "the wrong credential was the one sent"
}
TESTS+=(parent_proxy_failures)

t_parent_proxy_from_environment() { # no parent-proxy in the policy: HTTP_PROXY and NO_PROXY of sbx's environment, as srt; an https:// one stops the run (125), nothing runs
	command -v curl >/dev/null || skip "curl is not installed"
	parent_up --auth u:p
	HTTP_PROXY="http://u:p@$NSIP:3128" NO_PROXY="localhost,allowed.test" in_net_nodns "$SBX" -c "$T/net" --allow-domain=far.test -- \
		sh -c 'curl -s -m 10 http://far.test:8000/; curl -s -m 10 -p http://allowed.test:8000/' >"$T/r.out" 2>"$T/r.err"
	log_file out "$T/r.out"; log_file err "$T/r.err"; log_file up "$T/up.log"
	[ "$(grep -c hello-from-test-host "$T/r.out")" = 2 ] || fail "far.test through HTTP_PROXY, allowed.test directly: $(cat "$T/r.out")"
	grep -q "^GET http://far.test:8000/ $UPAUTH\$" "$T/up.log" || fail "the parent from HTTP_PROXY, with its credential"
	! grep -q allowed.test "$T/up.log" || fail "NO_PROXY: allowed.test went to the parent"
	HTTPS_PROXY="https://$NSIP:3128" run_sbx --allow-write="$P" -- touch "$P/ran"
	expect_rc 125 "an https:// parent from the environment"
	expect_contains "$ERR" "HTTPS_PROXY=https://$NSIP:3128: an https:// parent proxy needs TLS" "says which variable and why"
	[ ! -e "$P/ran" ] || fail "the command ran although the parent route was refused"
	printf 'parent-proxy https://u:p@%s:3128\n' "$NSIP" >"$T/bad"
	run_sbx -c "$T/bad" -- true
	expect_rc 125 "an https:// parent in the policy"
	expect_contains "$ERR" "$T/bad:1: parent-proxy https://" "the file and line"
}
TESTS+=(parent_proxy_from_environment)

t_external_proxy_ports() { # http-proxy-port (srt's httpProxyPort): 127.0.0.1:3128 inside reaches the person's own proxy on this machine, which decides; SOCKS stays sbx's (control); JSON's key works the same
	command -v curl >/dev/null || skip "curl is not installed"
	net_up
	local port=$((20000 + RANDOM % 20000)) i
	: >"$T/own.log"
	python3 "$HERE/tests/helpers/upstream_proxy.py" 127.0.0.1 "$port" "$T/own.log" --host "far.test=$NSIP" >"$T/own.err" 2>&1 &
	for i in $(seq 50); do curl -s -m 1 -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
	in_net "$SBX" -c "$T/net" --http-proxy-port="$port" -- sh -c '
		printf "http: "; curl -s -m 10 http://far.test:8000/ || echo "curl exit $?"
		printf "connect: "; curl -s -m 10 -p http://far.test:8000/ || echo "curl exit $?"
		printf "socks: "; curl -s -m 10 --socks5-hostname 127.0.0.1:1080 -o /dev/null -w "%{http_code}\n" http://far.test:8000/; echo "curl exit $?"' \
		>"$T/r.out" 2>"$T/r.err"
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err"); log_file out "$T/r.out"; log_file err "$T/r.err"; log_file own "$T/own.log"
	expect_contains "$OUT" "http: hello-from-test-host" "plain HTTP through the person's own proxy (sbx's policy does not allow far.test)"
	expect_contains "$OUT" "connect: hello-from-test-host" "CONNECT through it"
	expect_contains "$OUT" "socks: 000" "control: SOCKS is still sbx's proxy, which refuses far.test"
	grep -q "^GET http://far.test:8000/ " "$T/own.log" && grep -q "^CONNECT far.test:8000 " "$T/own.log" ||
		fail "the person's proxy saw both requests"
	expect_contains "$ERR" "deny network-outbound far.test:8000" "control: sbx's own proxy refused the SOCKS one"
	printf '{"network":{"allowedDomains":[],"deniedDomains":[],"httpProxyPort":%s},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}\n' "$port" >"$T/ext.json"
	in_net "$SBX" -c "$T/ext.json" -- curl -s -m 10 http://far.test:8000/ >"$T/r.out" 2>&1
	grep -q hello-from-test-host "$T/r.out" || fail "network.httpProxyPort in srt's settings: $(cat "$T/r.out")"
}
TESTS+=(external_proxy_ports)

t_parent_proxy_eager_tunnel() { # the parent's "200" and the target's first bytes in one read (a server that speaks first, as sshd): the client gets sbx's answer, then those bytes, in that order
	command -v python3 >/dev/null || skip "python3 is not installed"
	parent_up --eager
	ip netns exec "$NS" python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], 7300)); s.listen(8)
while True:
    c, _ = s.accept(); c.sendall(b"SSH-2.0-banner-first\r\n"); c.recv(10); c.close()' "$NSIP" >/dev/null 2>&1 &
	sleep 0.3
	in_net_nodns "$SBX" -c "$T/net" --allow-domain=far.test --parent-proxy="http://$NSIP:3128" -- python3 -c '
import socket, time
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT far.test:7300 HTTP/1.1\r\nHost: far.test:7300\r\n\r\n")
time.sleep(1.5)
print(repr(s.recv(65536)))' >"$T/r.out" 2>"$T/r.err"
	log_file out "$T/r.out"; log_file err "$T/r.err"
	grep -qF "b'HTTP/1.1 200 Connection Established\\r\\n\\r\\nSSH-2.0-banner-first\\r\\n'" "$T/r.out" ||
		fail "the answer, then the target's first bytes: $(cat "$T/r.out")"
}
TESTS+=(parent_proxy_eager_tunnel)

t_parent_proxy_on_loopback() { # a parent on this machine's 127.0.0.1 (cntlm's place, srt #147) is exempt from the resolved-address guard; a bypassed target resolving to loopback is still refused by it (control)
	command -v curl >/dev/null || skip "curl is not installed"
	net_up
	local port=$((20000 + RANDOM % 20000)) i
	: >"$T/lo.log"
	python3 "$HERE/tests/helpers/upstream_proxy.py" 127.0.0.1 "$port" "$T/lo.log" --host "far.test=$NSIP" >"$T/lo.err" 2>&1 &
	for i in $(seq 50); do curl -s -m 1 -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
	in_net_nodns "$SBX" -c "$T/net" --allow-domain=far.test --parent-proxy="http://127.0.0.1:$port" --parent-proxy-bypass=rebind.test -- \
		sh -c 'curl -s -m 10 -p http://far.test:8000/; printf "rebind: "; curl -s -m 10 -o /dev/null -w "%{http_code}\n" http://rebind.test:8000/' \
		>"$T/r.out" 2>"$T/r.err"
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err"); log_file out "$T/r.out"; log_file err "$T/r.err"
	expect_contains "$OUT" "hello-from-test-host" "far.test through the parent on 127.0.0.1"
	grep -q "^CONNECT far.test:8000 " "$T/lo.log" || fail "the loopback parent saw the tunnel"
	expect_contains "$OUT" "rebind: 403" "control: a bypassed target resolving to 127.0.0.1 is refused by the guard"
	expect_contains "$ERR" "deny network-outbound rebind.test:8000 (resolved to a loopback address)" "the guard's reason"
}
TESTS+=(parent_proxy_on_loopback)

t_parent_proxy_python_clients() { # real clients through the parent: python's urllib (HTTP_PROXY, absolute form) and http.client's tunnel (CONNECT), each reaching far.test only the parent knows; a denied host still refused first
	command -v python3 >/dev/null || skip "python3 is not installed"
	parent_up --auth u:p
	in_net_nodns "$SBX" -c "$T/net" --allow-domain=far.test --parent-proxy="http://u:p@$NSIP:3128" -- python3 -c '
import http.client, os, urllib.request, urllib.error
print("urllib:", urllib.request.urlopen("http://far.test:8000/", timeout=10).read().decode().strip())
c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=10)
c.set_tunnel("far.test", 8000)
c.request("GET", "/")
print("tunnel:", c.getresponse().read().decode().strip())
try:
    urllib.request.urlopen("http://denied.test:8000/", timeout=10)
except urllib.error.HTTPError as e:
    print("denied:", e.code)' >"$T/r.out" 2>"$T/r.err"
	OUT=$(cat "$T/r.out"); log_file out "$T/r.out"; log_file err "$T/r.err"; log_file up "$T/up.log"
	expect_contains "$OUT" "urllib: hello-from-test-host" "urllib through the parent"
	expect_contains "$OUT" "tunnel: hello-from-test-host" "http.client's CONNECT tunnel through the parent"
	expect_contains "$OUT" "denied: 403" "the policy first"
	grep -q "^GET http://far.test:8000/ $UPAUTH\$" "$T/up.log" && grep -q "^CONNECT far.test:8000 $UPAUTH\$" "$T/up.log" ||
		fail "the parent saw both, with its credential"
	! grep -q denied.test "$T/up.log" || fail "a denied host reached the parent"
}
TESTS+=(parent_proxy_python_clients)

# raw_get TARGET...: inside the sandbox, one absolute-form GET a connection to the proxy, the Host
# header spelled as the target's authority; prints "TARGET STATUS-LINE" (the spelling is the
# client's own: curl would normalise some of it)
RAW_GET='import socket, sys
for t in sys.argv[1:]:
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (t, t[7:].split("/")[0])).encode())
    print(t, s.recv(200).split(b"\r\n")[0].decode()); s.close()'

t_forward_host_canonical() { # plain HTTP forwarded: Host is the target's canonical form on every route (direct, parent proxy, MITM socket), as the URL the parent gets; never the client's spelling (Api.Test., a trailing dot with a port, an uncompressed IPv6 literal)
	command -v python3 >/dev/null || skip "python3 is not installed"
	parent_up --log-host
	mitm_up --log-host
	: >"$T/up.log"	# parent_up's own probes
	: >"$T/origin.log"
	ip netns exec "$NS" python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], 8001)); s.listen(16)
while True:
    c, _ = s.accept(); d = b""
    while b"\r\n\r\n" not in d:
        x = c.recv(65536)
        if not x: break
        d += x
    with open(sys.argv[2], "a") as f:
        f.writelines(l.decode("latin-1") + "\n" for l in d.split(b"\r\n") if l.lower().startswith(b"host:"))
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"); c.close()' "$NSIP" "$T/origin.log" &
	local i mapped
	for i in $(seq 50); do curl -s -m 1 -o /dev/null "http://$NSIP:8001/" && break; sleep 0.1; done
	: >"$T/origin.log"
	mapped=$(printf '0:0:0:0:0:ffff:0ac8:%02x02' "$(cut -d. -f3 <<<"$NSIP")")
	# direct: the origin server's Host
	in_net "$SBX" -c "$T/net" --allow-domain="$NSIP" -- python3 -c "$RAW_GET" \
		"http://Allowed.TEST.:8001/" "http://[$mapped]:8001/" >"$T/d.out" 2>"$T/d.err"
	log_file out "$T/d.out"; log_file origin "$T/origin.log"
	[ "$(grep -c ' HTTP/1.1 200 OK$' "$T/d.out")" = 2 ] || fail "direct: both requests answered: $(cat "$T/d.out" "$T/d.err")"
	expect_eq "$(cat "$T/origin.log")" "Host: allowed.test:8001
Host: $NSIP:8001" "direct: the origin's Host is the canonical host"
	# the parent proxy: its URL and the Host header name the same canonical host
	printf 'allow-write .\nallow-domain far.test\nallow-domain [2001:db8::1]\nparent-proxy http://%s:3128\n' "$NSIP" >"$T/parent"
	in_net_nodns "$SBX" -c "$T/parent" -- python3 -c "$RAW_GET" \
		"http://FAR.Test./" "http://far.test.:8000/" "http://[2001:DB8:0:0:0:0:0:1]:8000/" >"$T/p.out" 2>"$T/p.err"
	log_file out "$T/p.out"; log_file up "$T/up.log"
	grep -q '^http://far.test.:8000/ HTTP/1.[01] 200' "$T/p.out" || fail "control: far.test:8000 through the parent: $(cat "$T/p.out")"
	expect_eq "$(grep -v '^CONNECT' "$T/up.log")" "GET http://far.test/ auth=-
HOST far.test
GET http://far.test:8000/ auth=-
HOST far.test:8000
GET http://[2001:db8::1]:8000/ auth=-
HOST [2001:db8::1]:8000" "parent: Host and the URL, both canonical"
	# the MITM socket, the same
	printf 'allow-write .\nallow-domain far.test\nmitm-proxy %s\nmitm-proxy-domain far.test\n' "$T/mitm.sock" >"$T/mitm"
	in_net_nodns "$SBX" -c "$T/mitm" -- python3 -c "$RAW_GET" "http://FAR.Test./" "http://far.test.:8000/" \
		>"$T/m.out" 2>"$T/m.err"
	log_file out "$T/m.out"; log_file mitm "$T/mitm.log"
	grep -q '^http://far.test.:8000/ HTTP/1.[01] 200' "$T/m.out" || fail "control: far.test:8000 through the MITM socket: $(cat "$T/m.out")"
	expect_eq "$(cat "$T/mitm.log")" "GET http://far.test/ auth=-
HOST far.test
GET http://far.test:8000/ auth=-
HOST far.test:8000" "MITM: Host and the URL, both canonical"
}
TESTS+=(forward_host_canonical)

t_parent_proxy_https_for_tunnels() { # both parents set: a tunnel (CONNECT, SOCKS) takes parent-proxy-https, plain HTTP parent-proxy (srt, curl); each parent told apart by its credential; HTTPS_PROXY over HTTP_PROXY the same
	command -v curl >/dev/null || skip "curl is not installed"
	parent_up
	local h s
	h="auth=Basic $(printf 'h:h' | base64)" s="auth=Basic $(printf 's:s' | base64)"
	in_net_nodns "$SBX" -c "$T/net" --allow-domain=far.test --parent-proxy="http://h:h@$NSIP:3128" \
		--parent-proxy-https="http://s:s@$NSIP:3128" -- sh -c "$PARENT_SCRIPT" >"$T/r.out" 2>"$T/r.err"
	log_file out "$T/r.out"; log_file err "$T/r.err"; log_file up "$T/up.log"
	for how in absolute -p "--socks5-hostname 127.0.0.1:1080"; do
		grep -q -- "^$how: hello-from-test-host" "$T/r.out" || fail "$how: far.test through a parent: $(grep -- "^$how" "$T/r.out")"
	done
	grep -q "^GET http://far.test:8000/ $h\$" "$T/up.log" || fail "control: plain HTTP went through the http parent"
	[ "$(grep -c "^CONNECT far.test:8000 $s\$" "$T/up.log")" = 2 ] || fail "CONNECT (curl -p and SOCKS) through the https parent"
	! grep -q "^CONNECT .* $h\$" "$T/up.log" || fail "a tunnel took the http parent over the https one"
	# the same from sbx's environment
	: >"$T/up.log"
	HTTP_PROXY="http://h:h@$NSIP:3128" HTTPS_PROXY="http://s:s@$NSIP:3128" in_net_nodns "$SBX" -c "$T/net" --allow-domain=far.test -- \
		sh -c 'curl -s -m 10 http://far.test:8000/; curl -s -m 10 -p http://far.test:8000/' >"$T/r.out" 2>"$T/r.err"
	log_file out "$T/r.out"; log_file err "$T/r.err"; log_file up "$T/up.log"
	[ "$(grep -c hello-from-test-host "$T/r.out")" = 2 ] || fail "from the environment: both requests through a parent: $(cat "$T/r.out")"
	grep -q "^GET http://far.test:8000/ $h\$" "$T/up.log" && grep -q "^CONNECT far.test:8000 $s\$" "$T/up.log" ||
		fail "from the environment: plain HTTP through HTTP_PROXY, the tunnel through HTTPS_PROXY"
}
TESTS+=(parent_proxy_https_for_tunnels)
