# tests/bridge.tests.sh - how connections cross the boundary besides the proxy's own
# listeners: expose-port (this machine -> the command's server), [::1] listeners,
# bridge socat (srt's topology), and the proxy's Landlock ruleset.
# Sourced by test.sh (uses run_sbx, net_up, sbx_net, fail, skip, note, expect_*).

# a free-looking port on this machine (retry on collision is not needed: a taken
# port makes sbx refuse, which the test would report)
rand_port() { echo $(( 20000 + RANDOM % 20000 )); }

t_expose_port() { # expose-port PORT: this machine's 127.0.0.1:PORT reaches the command's server; other ports stay private
	local port other busy
	port=$(rand_port); other=$((port + 1))
	policy p <<EOF
allow-write .
expose-port $port
EOF
	# the command serves on PORT (exposed) and OTHER (not); the host fetches both
	"$SBX" -c "$T/p" -- sh -c "mkdir -p site; echo served-from-inside >site/index.html
		python3 -m http.server $port --bind 127.0.0.1 --directory site >/dev/null 2>&1 &
		python3 -m http.server $other --bind 127.0.0.1 --directory site >/dev/null 2>&1 &
		sleep 4; kill \$(jobs -p)" >"$T/bg.out" 2>&1 &
	local spid=$! i got= got_other
	for i in $(seq 40); do
		got=$(curl -s -m 1 "http://127.0.0.1:$port/" 2>/dev/null) && [ -n "$got" ] && break
		sleep 0.1
	done
	got_other=$(curl -s -m 1 "http://127.0.0.1:$other/" 2>&1); local orc=$?
	wait $spid
	note "exposed: $got; other: rc=$orc"
	[ "$got" = served-from-inside ] || fail "the host did not reach the command's server through expose-port: '$got' ($(cat "$T/bg.out"))"
	[ $orc = 0 ] && fail "a port the policy does not expose was reachable from the host: $got_other"
	# the host side of a port that is taken: refused before anything runs (the holder
	# takes a port the kernel picks, so it cannot collide with anything)
	python3 -c 'import socket,sys,time
s=socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1); print(s.getsockname()[1], flush=True); time.sleep(8)' >"$T/busy" &
	local holder=$!
	for i in $(seq 30); do [ -s "$T/busy" ] && break; sleep 0.1; done
	busy=$(cat "$T/busy")
	[ -n "$busy" ] || fail "control: the port holder did not start"
	policy q <<EOF
expose-port $busy
EOF
	run_sbx -c "$T/q" -- sh -c 'echo ran'
	kill $holder 2>/dev/null
	expect_rc 125
	expect_contains "$ERR" "expose-port $busy" "the error names the directive"
	grep -q '^ran$' <<<"$OUT" && fail "the command ran although the exposed port was taken"
	# one port, one way
	policy r <<EOF
allow-host-port $port
expose-port $port
EOF
	run_sbx -c "$T/r" -- true
	expect_rc 125
	expect_contains "$ERR" "a port goes one way only" "the same port both ways is refused"
	run_sbx -c "$T/p" --print=policy
	expect_contains "$OUT" "expose-port $port" "--print=policy shows it"
	run_sbx -c "$T/p" --print=json
	expect_contains "$OUT" "\"exposePorts\"" "--print=json shows it"
}
TESTS+=(expose_port)

t_ipv6_loopback_listeners() { # with IPv6 loopback inside: the proxy and allow-host-port listen on [::1] too; Landlock holds the proxy
	local port; port=$(rand_port)
	mkdir -p "$T/site"; echo host-loopback-v6 >"$T/site/index.html"
	python3 -m http.server "$port" --bind 127.0.0.1 --directory "$T/site" >/dev/null 2>&1 &
	local srv=$! i
	for i in $(seq 50); do curl -s -m 1 "http://127.0.0.1:$port/" >/dev/null 2>&1 && break; sleep 0.1; done
	policy p <<EOF
allow-write .
allow-domain allowed.invalid
allow-host-port $port
EOF
	# no name is resolved: blocked.invalid is refused by the policy before any lookup
	run_sbx -v -c "$T/p" -- sh -c "python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind((\"::1\", 0)); print(\"has-v6\")' 2>/dev/null
		curl -s -m 5 -g http://[::1]:$port/; echo v6=\$?
		curl -s -m 5 http://127.0.0.1:$port/; echo v4=\$?
		for px in 127.0.0.1 [::1]; do
			curl -s -m 5 -g --noproxy '' -x http://\$px:3128 -o /dev/null -w \"via-\$px=%{http_code}\\n\" http://blocked.invalid/
		done"
	kill $srv 2>/dev/null
	expect_rc 0
	expect_contains "$OUT" "v4=0" "control: allow-host-port over 127.0.0.1"
	expect_contains "$OUT" "via-127.0.0.1=403" "control: the proxy on 127.0.0.1:3128 refuses an unlisted host"
	if grep -q has-v6 <<<"$OUT"; then
		expect_contains "$OUT" "v6=0" "allow-host-port over [::1]"
		[ "$(grep -c host-loopback-v6 <<<"$OUT")" = 2 ] || fail "the host's service did not answer over both loopbacks: $OUT"
		expect_contains "$OUT" "via-[::1]=403" "the proxy answers on [::1]:3128"
	else
		note "this kernel gives the sandbox no IPv6 loopback: only the 127.0.0.1 listeners were checked"
	fi
	# Landlock: the proxy itself shows that a file outside its ruleset cannot be opened
	if python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1) >= 1 else 1)'; then
		expect_contains "$ERR" "proxy: Landlock ABI" "the proxy installs a Landlock ruleset"
		expect_contains "$ERR" "/proc/self/status: Permission denied" "the ruleset refuses a read outside it"
	else
		expect_contains "$ERR" "no Landlock" "without Landlock -v says the seccomp filter stands alone"
	fi
}
TESTS+=(ipv6_loopback_listeners)

t_bridge_socat() { # bridge socat (srt's topology): the same core scenarios through socat and a Unix socket
	net_up
	command -v socat >/dev/null || skip "socat not installed"
	echo "bridge socat" >>"$T/net"
	sbx_net 'curl -s -m 5 http://allowed.test:8000/; echo "a=$?"
		curl -s -m 5 -p http://allowed.test:8000/; echo "c=$?"
		curl -s -m 5 --socks5-hostname 127.0.0.1:1080 http://also.allowed.test:8000/; echo "s5=$?"
		curl -s -m 5 -o /dev/null -w "denied=%{http_code}\n" http://denied.test:8000/
		curl -s -m 5 -o /dev/null -w "rebind=%{http_code}\n" http://rebind.test:8000/
		curl -s -m 3 --noproxy "*" http://allowed.test:8000/; echo "direct=$?"
		echo "socat-seen=$(ps -e -o comm= | grep -c socat)"
		ls -ld "$(dirname "$TMPDIR")/bridge-${TMPDIR##*/tmp-}" 2>&1'
	expect_rc 0
	[ "$(grep -c '^hello-from-test-host$' <<<"$OUT")" = 3 ] || fail "not every protocol fetched the page through socat: $OUT"
	local k; for k in a c s5; do grep -q "^$k=0$" <<<"$OUT" || fail "$k: request through the socat bridge failed: $OUT"; done
	expect_contains "$OUT" "denied=403" "a denied host is refused through the bridge"
	expect_contains "$OUT" "rebind=403" "a name resolving to 127.0.0.1 is refused through the bridge"
	grep -q '^direct=0$' <<<"$OUT" && fail "a direct connection (no proxy) succeeded"
	expect_contains "$OUT" "socat-seen=0" "socat runs outside the command's pid namespace"
	grep -q '^drwx------ .*bridge-[0-9]*-[0-9]*$' <<<"$OUT" || fail "the bridge directory is not private (0700): $OUT"
	# no allow-domain: the bridge still runs (the proxy always does, as srt's), and refuses with the reason
	printf 'allow-write .\nbridge socat\n' >"$T/nonet"
	run_sbx -c "$T/nonet" -- sh -c 'curl -s -m 5 -i -p -x http://127.0.0.1:3128 http://allowed.test:8000/ | head -1 | tr -d "\r"
		curl -s -m 5 --socks5-hostname 127.0.0.1:1080 http://allowed.test:8000/; echo "s5=$?"
		curl -s -m 3 --noproxy "*" http://'"$NSIP"':8000/; echo "direct=$?"'
	expect_rc 0 "bridge socat, no allow-domain"
	expect_contains "$OUT" "HTTP/1.1 403 host is not on the allow list: the policy allows no network" "no allow-domain: refused through the bridge, with the reason"
	expect_contains "$OUT" "s5=97" "no allow-domain: SOCKS refused through the bridge"
	grep -q '^direct=0$' <<<"$OUT" && fail "no allow-domain: a direct connection succeeded"
	# fails closed when socat cannot run
	printf 'socat-path /nonexistent/socat\n' >>"$T/net"
	sbx_net 'echo ran'
	expect_rc 125
	grep -q '^ran$' <<<"$OUT" && fail "the command ran without its socat bridge"
	note "$ERR"
}
TESTS+=(bridge_socat)
