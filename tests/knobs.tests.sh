# tests/knobs.tests.sh - sourced by test.sh: srt's request knobs, against the test
# host in its network namespace: refuse-opaque-tunnels, require-host-match, strip-response-header.
# srt's replies and violation lines, each refusal with its control in the same run.

t_knob_refuse_opaque_tunnels() { # refuse-opaque-tunnels: every CONNECT 403 (srt's text), every SOCKS tunnel refused (0x01), both reported; plain HTTP still goes; the policy still decides first
	command -v curl >/dev/null || skip "curl is not installed"
	net_up
	in_net "$SBX" -c "$T/net" --refuse-opaque-tunnels -- bash -c '
		printf "plain: "; curl -s -m 10 http://allowed.test:8000/
		printf "connect: "; curl -s -m 10 -p -o /dev/null -w "%{http_connect}\n" http://allowed.test:8000/; echo "curl exit $?"
		printf "socks: "; curl -s -m 10 --socks5-hostname 127.0.0.1:1080 http://allowed.test:8000/; echo "curl exit $?"
		printf "policy: "; curl -s -m 10 -p -o /dev/null http://denied.test:8000/; echo "curl exit $?"
		exec 3<>/dev/tcp/127.0.0.1/3128; printf "CONNECT allowed.test:8000 HTTP/1.1\r\nHost: allowed.test:8000\r\n\r\n" >&3; cat <&3' \
		>"$T/r.out" 2>"$T/r.err"; RC=$?
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err"); log_file out "$T/r.out"; log_file err "$T/r.err"
	expect_contains "$OUT" "plain: hello-from-test-host" "control: plain HTTP goes"
	expect_contains "$OUT" "connect: 403" "CONNECT refused with 403"
	expect_contains "$OUT" "socks: curl exit 97" "SOCKS refused"
	want=$'HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n\r\nthis proxy does not tunnel CONNECTs it cannot inspect'
	expect_contains "$OUT" "$want" "srt's reply, byte for byte"
	expect_contains "$ERR" "deny http-request CONNECT allowed.test:8000 (this proxy does not tunnel CONNECTs it cannot inspect)" "the CONNECT refusal, srt's line"
	expect_contains "$ERR" "deny socks-tunnel allowed.test:8000 (refuseOpaqueTunnels)" "the SOCKS refusal, srt's line"
	expect_contains "$ERR" "deny network-outbound denied.test:8000 (denied.test is off limits)" "the policy decides first"
}
TESTS+=(knob_refuse_opaque_tunnels)

t_knob_require_host_match() { # require-host-match: a Host naming another host or port, or two Host headers: 421 with the reason, reported (query cut); the right Host goes; off, the same request goes
	command -v curl >/dev/null || skip "curl is not installed"
	net_up
	script='
		for h in "" "Host: other.test" "Host: other.test:8000" "Host: allowed.test:8001" "Host: ALLOWED.test:8000" "Host: allowed.test"; do
			printf "%s => " "${h:-default}"; curl -s -m 10 ${h:+-H "$h"} -o /dev/null -w "%{http_code}\n" "http://allowed.test:8000/?secret=1"
		done
		printf "two => "; exec 3<>/dev/tcp/127.0.0.1/3128
		printf "GET http://allowed.test:8000/ HTTP/1.1\r\nHost: allowed.test:8000\r\nHost: allowed.test:8000\r\n\r\n" >&3; head -c 12 <&3; echo
		printf "denied => "; curl -s -m 10 -H "Host: other.test" -o /dev/null -w "%{http_code}\n" http://denied.test:8000/'
	in_net "$SBX" -c "$T/net" --require-host-match -- bash -c "$script" >"$T/r.out" 2>"$T/r.err"
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err"); log_file out "$T/r.out"; log_file err "$T/r.err"
	expect_contains "$OUT" "default => 200" "control: curl's own Host goes"
	expect_contains "$OUT" "Host: ALLOWED.test:8000 => 200" "the host in another case goes"
	expect_contains "$OUT" "Host: other.test => 421" "another host: 421"
	expect_contains "$OUT" "Host: other.test:8000 => 421" "another host on the target's port: 421"
	expect_contains "$OUT" "Host: allowed.test:8001 => 421" "another port: 421"
	expect_contains "$OUT" "Host: allowed.test => 421" "no port for a target on 8000: 421"
	expect_contains "$OUT" "two => HTTP/1.1 421" "two Host headers: 421"
	expect_contains "$OUT" "denied => 403" "the policy decides first"
	expect_contains "$ERR" "deny http-request GET http://allowed.test:8000/?… (Host header does not match the request target)" "srt's line, the query cut"
	expect_contains "$ERR" "deny http-request GET http://allowed.test:8000/ (more than one Host header)" "two Host headers reported"
	in_net "$SBX" -c "$T/net" -- sh -c 'curl -s -m 10 -H "Host: other.test" -o /dev/null -w "%{http_code}\n" http://allowed.test:8000/' >"$T/r.out" 2>&1
	grep -q '^200' "$T/r.out" || fail "control: without the knob the same request goes (the target decides): $(cat "$T/r.out")"
}
TESTS+=(knob_require_host_match)

t_knob_strip_response_headers() { # strip-response-header: the named headers (case, '-' '_' '.' folded) never reach the client; others do; an answer that is not an HTTP head is then a 502
	command -v curl >/dev/null || skip "curl is not installed"
	net_up
	ip netns exec "$NS" python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], 7100)); s.listen(8)
while True:
    c, _ = s.accept(); c.recv(65536); c.sendall(b"not an http answer\n"); c.close()' "$NSIP" >/dev/null 2>&1 &
	local i; for i in $(seq 50); do curl -s -m 1 --http0.9 "http://$NSIP:7100/" | grep -q "not an http" && break; sleep 0.1; done
	in_net "$SBX" -c "$T/net" --strip-response-header=server --strip-response-header=Last_Modified -- sh -c '
		curl -s -m 10 -D - -o /dev/null http://allowed.test:8000/; printf "garbage: "; curl -s -m 10 -o /dev/null -w "%{http_code}\n" http://allowed.test:7100/' \
		>"$T/r.out" 2>"$T/r.err"
	OUT=$(cat "$T/r.out"); log_file out "$T/r.out"; log_file err "$T/r.err"
	expect_contains "$OUT" "HTTP/1.0 200" "the answer"
	expect_contains "$OUT" "Content-Length:" "control: other headers reach the client"
	expect_not_contains "$OUT" "Server:" "Server is stripped"
	expect_not_contains "$OUT" "Last-Modified:" "Last-Modified is stripped (named Last_Modified)"
	expect_contains "$OUT" "garbage: 502" "an answer that is not an HTTP head: 502"
	in_net "$SBX" -c "$T/net" -- sh -c 'curl -s -m 10 -D - -o /dev/null http://allowed.test:8000/; curl -s -m 10 --http0.9 http://allowed.test:7100/' >"$T/r.out" 2>&1
	OUT=$(cat "$T/r.out"); log_file out "$T/r.out"
	expect_contains "$OUT" "Server:" "control: without the knob Server reaches the client"
	expect_contains "$OUT" "not an http answer" "control: without it the raw answer is relayed as it is"
}
TESTS+=(knob_strip_response_headers)
