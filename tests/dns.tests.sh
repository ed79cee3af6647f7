# tests/dns.tests.sh - sourced by test.sh: the DNS stub inside the sandbox and network-capture
# (network-dns, network-capture). A small DNS server (tests/helpers/dns_server.py) runs in the test namespace
# and is the only name server sbx's proxy asks; it logs every question, so a test can tell which
# names left the machine. Inside, /etc/hosts names only localhost: a name resolves there through
# the stub or not at all. Each test has its control in the same run.

# dns_up: net_up, then the test's name server on $NSIP:53 (log: $T/dns.log), which knows
# far.test and its subdomain x.far.test ($NSIP), loop.test (127.0.0.1) and meta.test (the
# metadata address); $T/dnshosts holds localhost only
dns_up() {
	net_up
	: >"$T/dns.log"
	ip netns exec "$NS" python3 "$HERE/tests/helpers/dns_server.py" "$NSIP" "$T/dns.log" \
		"far.test=$NSIP" "x.far.test=$NSIP" "loop.test=127.0.0.1" "meta.test=169.254.169.254" \
		"evil.test=$NSIP" >"$T/dns.err" 2>&1 &
	printf '127.0.0.1 localhost\n' >"$T/dnshosts"
	printf 'nameserver %s\noptions timeout:2 attempts:2\n' "$NSIP" >"$T/dnsresolv"
	local i
	for i in $(seq 50); do	# up when it answers a question (for a name it does not know)
		python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(0.2)
s.sendto(bytes(4) + bytes([0, 1]) + bytes(6) + b"\5probe\4test\0\0\1\0\1", (sys.argv[1], 53)); s.recv(512)' \
			"$NSIP" 2>/dev/null && break
		sleep 0.1
	done
	: >"$T/dns.log"
}

# in_dns CMD: CMD with the test's hosts and resolv.conf (a mount namespace): sbx's proxy asks the
# test's name server, and nothing else
in_dns() {
	unshare -m sh -c 'mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/resolv.conf && shift 2 && exec "$@"' \
		sh "$T/dnshosts" "$T/dnsresolv" "$@"
}

# A raw question to the stub, in python: the answer's rcode and addresses, or "timeout"
DNS_ASK='
import socket, struct, sys
def ask(name, qtype, raw=None, wait=3):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(wait)
    q = raw if raw is not None else (struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) +
        b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0" + struct.pack("!HH", qtype, 1))
    s.sendto(q, ("127.0.0.1", 53))
    try: r = s.recv(4096)
    except socket.timeout: return "timeout"
    rcode = r[3] & 15; an = struct.unpack("!H", r[6:8])[0]
    return "rcode=%d answers=%d" % (rcode, an)
'

t_dns_stub_resolves_allowed_names() { # the stub inside: allowed names resolve (python, node, getent) through the proxy's resolver, a denied name is refused at once and never asked outside, the guard applies, hostile datagrams change nothing
	command -v python3 >/dev/null || skip "python3 is not installed"
	dns_up
	printf 'allow-write .\nallow-domain far.test\nallow-domain *.far.test\nallow-domain loop.test\nallow-domain meta.test\n' >"$T/dns"
	local script
	# shellcheck disable=SC2016
	script='
cat /etc/resolv.conf | grep -v "^#"
python3 -c "
import socket
for n in [\"far.test\", \"x.far.test\", \"evil.test\", \"loop.test\", \"meta.test\"]:
    try: print(\"py\", n, sorted({a[4][0] for a in socket.getaddrinfo(n, 80, type=socket.SOCK_STREAM)}))
    except socket.gaierror as e: print(\"py\", n, \"error\", e.errno)
"
if command -v node >/dev/null; then
	node -e "const d=require(\"dns\"); for (const n of [\"far.test\",\"evil.test\"]) d.lookup(n,(e,a)=>console.log(\"node\",n,e?e.code:a))"
else echo "node far.test skip"; echo "node evil.test skip"; fi
printf "getent: "; getent hosts far.test || echo failed
python3 -c "$DNS_ASK
print(\"txt\", ask(\"far.test\", 16))
print(\"mx-evil\", ask(\"evil.test\", 15))
for bad in [b\"\", b\"x\"*11, b\"\\x12\\x34\\x81\\x00\" + b\"\\0\"*8, bytes(12) + b\"\\xc0\\x0c\\0\\1\\0\\1\",
            bytes.fromhex(\"123401000002000000000000\") + b\"\\3far\\4test\\0\\0\\1\\0\\1\" * 2, b\"\\x12\\x34\\x01\\x00\\0\\1\\0\\0\\0\\0\\0\\0\\3a.b\\4test\\0\\0\\1\\0\\1\",
            bytes(512) * 3]:
    print(\"hostile\", len(bad), ask(None, 0, raw=bad, wait=0.5))
print(\"after\", ask(\"far.test\", 1))
"
curl -s -m 10 http://far.test:8000/'
	in_dns "$SBX" -v -c "$T/dns" -- env DNS_ASK="$DNS_ASK" sh -c "$script" >"$T/r.out" 2>"$T/r.err"; RC=$?
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err")
	log_file out "$T/r.out"; log_file dns "$T/dns.log"
	expect_rc 0
	expect_contains "$OUT" "nameserver 127.0.0.1" "resolv.conf inside names the stub"
	expect_contains "$OUT" "py far.test ['$NSIP']" "python: an allowed name resolves"
	expect_contains "$OUT" "py x.far.test ['$NSIP']" "python: a name a wildcard allows resolves"
	grep -q "^py evil.test error" "$T/r.out" || fail "python: a denied name must not resolve: $(grep 'py evil' "$T/r.out")"
	grep -q "^py loop.test error" "$T/r.out" || fail "the guard: an allowed name resolving to loopback is refused"
	grep -q "^py meta.test error" "$T/r.out" || fail "the guard: the metadata address is refused"
	grep -q "^node far.test \($NSIP\|skip\)" "$T/r.out" || fail "node dns.lookup of an allowed name: $(grep 'node far' "$T/r.out")"
	grep -q "^node evil.test \(E[A-Z_]*\|skip\)$" "$T/r.out" || fail "node dns.lookup of a denied name fails: $(grep 'node evil' "$T/r.out")"
	expect_contains "$OUT" "getent: $NSIP" "getent hosts (the C library)"
	expect_contains "$OUT" "txt rcode=0 answers=0" "a TXT question of an allowed name: an empty answer, nothing relayed"
	expect_contains "$OUT" "mx-evil rcode=5 answers=0" "any type of a denied name: REFUSED"
	expect_contains "$OUT" "after rcode=0 answers=1" "after hostile datagrams, the stub still answers"
	expect_contains "$OUT" "hello-from-test-host" "control: curl through the proxy"
	# what left the machine: the allowed names, never the denied one
	grep -q " far.test$" "$T/dns.log" || fail "far.test was looked up by the proxy"
	! grep -q "evil" "$T/dns.log" || fail "a denied name must never be looked up outside: $(grep evil "$T/dns.log")"
	! grep -q "16 far.test" "$T/dns.log" || fail "a TXT question must not be relayed"
	expect_contains "$ERR" "deny dns-query evil.test (host is not on the allow list)" "the refusal is a violation, with its reason"
	expect_contains "$ERR" "deny dns-query loop.test (resolved to a loopback address)" "the guard's refusal is a violation"
	expect_contains "$ERR" "deny dns-query a?b.test (a name no host can have)" "a label holding a dot is refused and reported"
}
TESTS+=(dns_stub_resolves_allowed_names)

t_dns_stub_off() { # network-dns off: resolv.conf inside is the machine's and no name resolves inside; the same run with it on resolves (control)
	command -v python3 >/dev/null || skip "python3 is not installed"
	dns_up
	local on off
	on=$(in_dns "$SBX" -c "$T/net" --allow-domain=far.test -- python3 -c 'import socket; print(socket.gethostbyname("far.test"))' 2>&1)
	off=$(in_dns "$SBX" -c "$T/net" --allow-domain=far.test --network-dns=off -- sh -c 'grep nameserver /etc/resolv.conf; python3 -c "import socket; print(socket.gethostbyname(\"far.test\"))" 2>&1 | tail -1' 2>&1)
	printf 'on: %s\noff: %s\n' "$on" "$off"
	[ "$on" = "$NSIP" ] || fail "control: with the stub, far.test resolves: $on"
	expect_contains "$off" "nameserver $NSIP" "off: the machine's resolv.conf"
	expect_contains "$off" "gaierror" "off: nothing resolves inside"
}
TESTS+=(dns_stub_off)

t_network_capture() { # network-capture: a C client that ignores the proxy (curl --noproxy) reaches an allowed name through a captured address; a denied name does not resolve; an address standing for no name, 127.0.0.1 and an IP literal are refused and reported
	command -v curl >/dev/null || skip "curl is not installed"
	dns_up
	printf 'allow-write .\nallow-domain far.test:8000\nallow-domain evil.test:9\nnetwork-capture on\n' >"$T/cap"
	# shellcheck disable=SC2016
	in_dns "$SBX" -v -c "$T/cap" -- sh -c '
printf "direct: "; curl -s -m 10 --noproxy "*" http://far.test:8000/ || echo "curl exit $?"
printf "proxy: "; curl -s -m 10 http://far.test:8000/ || echo "curl exit $?"
printf "addr: "; python3 -c "import socket; print(socket.gethostbyname(\"far.test\"))"
printf "denied: "; curl -s -m 10 --noproxy "*" -o /dev/null http://other.test:8000/; echo "curl exit $?"
printf "other port: "; curl -s -m 10 --noproxy "*" -o /dev/null http://far.test:9/; echo "curl exit $?"
printf "unmapped: "; curl -s -m 10 --noproxy "*" -o /dev/null http://127.77.0.99:8000/; echo "curl exit $?"
printf "loopback: "; curl -s -m 10 --noproxy "*" -o /dev/null http://127.0.0.1:8000/; echo "curl exit $?"
printf "literal: "; curl -s -m 10 --noproxy "*" -o /dev/null http://'"$NSIP"':8000/; echo "curl exit $?"
' >"$T/r.out" 2>"$T/r.err"; RC=$?
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err")
	log_file out "$T/r.out"; log_file err "$T/r.err"
	expect_rc 0
	expect_contains "$OUT" "direct: hello-from-test-host" "a client that ignores HTTP_PROXY reaches the allowed name"
	expect_contains "$OUT" "proxy: hello-from-test-host" "control: the proxy path still works"
	expect_contains "$OUT" "addr: 127.77.0." "the stub answers with a capture address"
	expect_contains "$OUT" "denied: curl exit 6" "a denied name does not resolve"
	grep -q "^other port: curl exit \(7\|52\|56\)" "$T/r.out" || fail "a port the policy does not allow for the name: $(grep '^other port' "$T/r.out")"
	grep -q "^unmapped: curl exit \(7\|52\|56\)" "$T/r.out" || fail "an address standing for no name: $(grep '^unmapped' "$T/r.out")"
	grep -q "^loopback: curl exit \(7\|52\|56\)" "$T/r.out" || fail "127.0.0.1: $(grep '^loopback' "$T/r.out")"
	grep -q "^literal: curl exit 7" "$T/r.out" || fail "an IP literal has no route: $(grep '^literal' "$T/r.out")"
	expect_contains "$ERR" "allow capture far.test:8000" "-v: the captured connection, decided as far.test:8000"
	expect_contains "$ERR" "deny dns-query other.test" "the denied name's refusal is reported"
	expect_contains "$ERR" "deny network-outbound 127.77.0.99:8000" "an unmapped address is decided as the literal, refused, reported"
	expect_contains "$ERR" "deny network-outbound 127.0.0.1:8000" "127.0.0.1 on a capture port: refused, reported"
	expect_contains "$ERR" "deny connect $NSIP:8000" "an IP literal: refused by the kernel, reported by the observer"
	grep -q "^[A-Z0-9]* other.test$" "$T/dns.log" && fail "a denied name must never be looked up outside"
	return 0
}
TESTS+=(network_capture)

t_dns_stub_port_rules() { # a name the policy refuses on every port it allows (deny rules with ports) is refused by the stub and never looked up; a name allowed on some port resolves (control), as does the CONNECT that port allows
	command -v python3 >/dev/null || skip "python3 is not installed"
	dns_up
	policy dnsports <<'EOF'
allow-write .
allow-domain far.test:8000
deny-domain far.test:8000 "far.test is off limits"
allow-domain x.far.test:8000
deny-domain x.far.test:22
allow-domain evil.test
deny-domain evil.test:9
EOF
	# shellcheck disable=SC2016
	in_dns "$SBX" -v -c "$T/dnsports" -- env DNS_ASK="$DNS_ASK" sh -c '
python3 -c "$DNS_ASK
for n in [\"far.test\", \"x.far.test\", \"evil.test\"]:
    print(n, ask(n, 1))
"
printf "connect far.test: "; curl -s -m 10 -o /dev/null -w "%{http_code}\n" http://far.test:8000/
printf "connect x.far.test: "; curl -s -m 10 http://x.far.test:8000/' >"$T/r.out" 2>"$T/r.err"; RC=$?
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err")
	log_file out "$T/r.out"; log_file dns "$T/dns.log"
	expect_rc 0
	expect_contains "$OUT" "x.far.test rcode=0 answers=1" "control: a name allowed on one port and denied on another resolves"
	expect_contains "$OUT" "evil.test rcode=0 answers=1" "control: a name allowed on every port but one resolves"
	expect_contains "$OUT" "far.test rcode=5 answers=0" "a name denied on the only port it is allowed on: REFUSED"
	expect_contains "$OUT" "connect far.test: 403" "the proxy refuses far.test:8000 (the deny rule)"
	expect_contains "$OUT" "connect x.far.test: hello-from-test-host" "control: the proxy connects x.far.test:8000"
	expect_contains "$ERR" "deny dns-query far.test (far.test is off limits)" "the stub's refusal gives the deny rule's reason"
	grep -q "^[A-Z0-9]* far.test$" "$T/dns.log" && fail "far.test must never be looked up outside: $(cat "$T/dns.log")"
	grep -q "^A x.far.test$" "$T/dns.log" || fail "control: x.far.test was looked up by the proxy"
	return 0
}
TESTS+=(dns_stub_port_rules)

t_dns_stub_resolv_conf_hidden() { # where resolv.conf leads is inside a deny-read directory: the run still runs (it used to stop at bwrap's mounts) and names resolve through the stub (the C library's default server is 127.0.0.1); a deny-read of the file itself shows the stub's
	command -v python3 >/dev/null || skip "python3 is not installed"
	dns_up
	# shellcheck disable=SC2016
	local script='cat /etc/resolv.conf 2>/dev/null | grep nameserver || echo "no resolv.conf"
python3 -c "import socket; print(\"addr\", socket.gethostbyname(\"far.test\"))"'
	in_dns "$SBX" -c "$T/net" --deny-read=/etc --allow-domain=far.test --network-dns=off -- sh -c 'echo ran' >"$T/off.out" 2>&1
	expect_contains "$(cat "$T/off.out")" "ran" "control: the policy runs without the stub"
	in_dns "$SBX" -c "$T/net" --deny-read=/etc --allow-domain=far.test -- sh -c "$script" >"$T/r.out" 2>"$T/r.err"; RC=$?
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err")
	log_file out "$T/r.out"; log_file err "$T/r.err"
	expect_rc 0 "deny-read /etc with the stub"
	expect_contains "$OUT" "no resolv.conf" "/etc stays hidden"
	expect_contains "$OUT" "addr $NSIP" "a name resolves through the stub with /etc hidden"
	in_dns "$SBX" -c "$T/net" --deny-read=/etc/resolv.conf --allow-domain=far.test -- sh -c "$script" >"$T/r.out" 2>"$T/r.err"; RC=$?
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err")
	expect_rc 0 "deny-read /etc/resolv.conf with the stub"
	expect_contains "$OUT" "nameserver 127.0.0.1" "a denied resolv.conf reads as the stub's"
	expect_contains "$OUT" "addr $NSIP" "control: a name resolves"
}
TESTS+=(dns_stub_resolv_conf_hidden)

t_network_capture_expose_port() { # expose-port PORT with an allow rule naming PORT and network-capture on: the port stays the command's (capture does not take it), and this machine reaches the command's server; capture still works for the other ports (control)
	command -v curl >/dev/null || skip "curl is not installed"
	dns_up
	local port=$(( 20000 + RANDOM % 20000 )) i got=
	policy capx <<EOF
allow-write .
expose-port $port
allow-domain far.test:$port
allow-domain far.test:8000
network-capture on
EOF
	# shellcheck disable=SC2016
	in_dns "$SBX" -c "$T/capx" -- sh -c 'mkdir -p site; echo served-from-inside >site/index.html
python3 -m http.server '"$port"' --bind 127.0.0.1 --directory site >serve.log 2>&1 &
sleep 0.5; printf "direct: "; curl -s -m 10 --noproxy "*" http://far.test:8000/ || echo "curl exit $?"
sleep 4; kill $(jobs -p); cat serve.log' >"$T/r.out" 2>"$T/r.err" &
	local spid=$!
	for i in $(seq 40); do
		got=$(curl -s -m 1 "http://127.0.0.1:$port/" 2>/dev/null) && [ -n "$got" ] && break
		sleep 0.1
	done
	wait $spid
	log_file out "$T/r.out"; log_file err "$T/r.err"
	expect_contains "$(cat "$T/r.out")" "direct: hello-from-test-host" "control: capture reaches far.test:8000"
	expect_not_contains "$(cat "$T/r.out")" "Address already in use" "the command's server binds the exposed port"
	[ "$got" = served-from-inside ] || fail "this machine did not reach the command's server through expose-port: '$got'"
}
TESTS+=(network_capture_expose_port)

t_dns_stub_namespace_holds() { # the network namespace the inner helper makes for the stub gives the command nothing: no capability, lo stays up, port 53 cannot be taken to impersonate the stub, no raw or packet socket, /proc/sys/net read-only, no new namespace, a capture port cannot be listened on; names spelled to slip past the policy are refused and never looked up; the stub and capture work (controls)
	command -v python3 >/dev/null || skip "python3 is not installed"
	dns_up
	policy holds <<'EOF'
allow-write .
allow-domain far.test:8000
allow-domain *.far.test
network-capture on
EOF
	cat >"$T/probe.py" <<'EOF'
import os, socket, sys
exec(os.environ["DNS_ASK"])
def tryit(label, f):
    try: print(label, f())
    except OSError as e: print(label, "errno", e.errno)
def conn(fam, addr, port):
    s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(5); s.connect((addr, port))
    s.sendall(b"GET / HTTP/1.0\r\nHost: far.test\r\n\r\n"); return s.recv(100).split(b"\r\n")[0].decode()
def bind(typ, addr, port, reuse=False):
    s = socket.socket(socket.AF_INET, typ)
    if reuse:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind((addr, port)); return "bound"
print("capeff", [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0])
tryit("addr", lambda: socket.gethostbyname("far.test"))
tryit("v4mapped", lambda: conn(socket.AF_INET6, "::ffff:127.77.0.1", 8000))
tryit("v6loopback", lambda: conn(socket.AF_INET6, "::1", 8000))
tryit("bind udp 53", lambda: bind(socket.SOCK_DGRAM, "127.0.0.1", 53, True))
tryit("bind udp 53 other", lambda: bind(socket.SOCK_DGRAM, "127.0.0.2", 53))
tryit("bind tcp 53", lambda: bind(socket.SOCK_STREAM, "127.0.0.1", 53))
tryit("bind capture", lambda: bind(socket.SOCK_STREAM, "127.77.0.1", 8000, True))
tryit("bind 5353", lambda: bind(socket.SOCK_DGRAM, "127.0.0.1", 5353))
tryit("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) and "made")
tryit("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0) and "made")
tryit("sysctl", lambda: open("/proc/sys/net/ipv4/ip_unprivileged_port_start", "w").write("0"))
for n in ["FAR.Test", "x.far.test", "far.test.evil.test", "far-test", "2130706433", "0x7f.1", "127.0.0.1", "localhost"]:
    print("q", n, ask(n, 1))
EOF
	# shellcheck disable=SC2016
	in_dns "$SBX" -v -c "$T/holds" -- env DNS_ASK="$DNS_ASK" sh -c '
python3 "$0"
if command -v ip >/dev/null; then
	ip link set lo down 2>/dev/null; echo "lo down: $?"; ip addr add 10.9.9.9/24 dev lo 2>/dev/null; echo "addr add: $?"
	ip link show lo | grep -q "UP" && echo "lo up"
else echo "lo down: 2"; echo "addr add: 2"; echo "lo up"; fi
unshare -n true 2>/dev/null; echo "unshare: $?"
nsenter -t 1 -n true 2>/dev/null; echo "nsenter: $?"' "$T/probe.py" >"$T/r.out" 2>"$T/r.err"; RC=$?
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err")
	log_file out "$T/r.out"; log_file dns "$T/dns.log"
	expect_rc 0
	expect_contains "$OUT" "capeff 0000000000000000" "the command holds no capability in the namespace it owns"
	expect_contains "$OUT" "addr 127.77.0.1" "control: the stub answers with a capture address"
	expect_contains "$OUT" "v4mapped HTTP/1.0 200 OK" "control: an IPv4-mapped connect to the capture address is captured"
	expect_contains "$OUT" "v6loopback errno 111" "no capture listener on ::1"
	expect_contains "$OUT" "bind udp 53 errno 13" "the command cannot take the stub's port (SO_REUSEPORT or not)"
	expect_contains "$OUT" "bind udp 53 other errno 13" "nor port 53 of another loopback address"
	expect_contains "$OUT" "bind tcp 53 errno 13" "nor TCP 53"
	expect_contains "$OUT" "bind capture errno 98" "a capture port stays the proxy's"
	expect_contains "$OUT" "bind 5353 bound" "control: an unprivileged port binds"
	expect_contains "$OUT" "raw errno 1" "no raw socket"
	expect_contains "$OUT" "packet errno 1" "no packet socket"
	expect_contains "$OUT" "sysctl errno 30" "/proc/sys/net is read-only"
	expect_contains "$OUT" "lo down: 2" "lo cannot be brought down"
	expect_contains "$OUT" "addr add: 2" "no address can be added"
	expect_contains "$OUT" "lo up" "lo is still up"
	expect_contains "$OUT" "unshare: 1" "no new network namespace"
	expect_contains "$OUT" "nsenter: 1" "no entering init's"
	expect_contains "$OUT" "q FAR.Test rcode=0 answers=1" "control: case does not matter"
	expect_contains "$OUT" "q x.far.test rcode=0 answers=1" "control: the wildcard"
	for n in far.test.evil.test far-test 2130706433 0x7f.1 127.0.0.1 localhost; do
		expect_contains "$OUT" "q $n rcode=5 answers=0" "$n is refused"
	done
	grep -q "evil\|2130706433\|0x7f\|127.0.0.1\|localhost\|far-test" "$T/dns.log" &&
		fail "a refused name was looked up outside: $(cat "$T/dns.log")"
	return 0
}
TESTS+=(dns_stub_namespace_holds)

t_network_capture_live_policy() { # --control-fd: a capture address handed out while its name was allowed is refused once a live line removes the name (decided as the name, under the policy of the moment), and the stub then refuses the name; allowed before the line (control)
	command -v curl >/dev/null || skip "curl is not installed"
	command -v python3 >/dev/null || skip "python3 is not installed"
	dns_up
	policy livecap <<'EOF'
allow-write .
allow-domain far.test:8000
network-capture on
EOF
	mkfifo "$T/ctl"
	# shellcheck disable=SC2016
	in_dns "$SBX" -v --control-fd 3 -c "$T/livecap" -- env DNS_ASK="$DNS_ASK" sh -c '
addr=$(python3 -c "import socket; print(socket.gethostbyname(\"far.test\"))"); echo "addr=$addr"
curl -s -m 5 --noproxy "*" -o /dev/null -w "cap1=%{http_code}\n" "http://$addr:8000/"
: >step1
while [ ! -e go1 ]; do sleep 0.1; done
curl -s -m 5 --noproxy "*" -o /dev/null -w "cap2=%{http_code}\n" "http://$addr:8000/"
python3 -c "$DNS_ASK
print(\"after\", ask(\"far.test\", 1))"' >"$T/bg" 2>"$T/bg.err" 3<"$T/ctl" </dev/null &
	local bg=$!
	exec 7>"$T/ctl"
	ctl_wait_step 1
	printf '{"network":{"allowedDomains":["other.test"]}}\n' >&7
	wait_file_has "$T/bg.err" "network.allowedDomains applied" 10 || fail "the line was not applied: $(cat "$T/bg.err")"
	: >"$P/go1"
	exec 7>&-
	wait_pid "$bg" 30 || fail "sbx did not finish"
	log_file out "$T/bg"; log_file err "$T/bg.err"
	OUT=$(cat "$T/bg"); ERR=$(cat "$T/bg.err")
	expect_contains "$OUT" "addr=127.77.0.1" "control: the stub hands far.test a capture address"
	expect_contains "$OUT" "cap1=200" "control: the capture address reaches far.test:8000 while it is allowed"
	expect_contains "$OUT" "cap2=000" "the same address is refused once the line removed far.test"
	expect_contains "$OUT" "after rcode=5 answers=0" "the stub refuses far.test after the line"
	expect_contains "$ERR" "deny capture far.test:8000" "the refusal is decided as the name, and reported"
}
TESTS+=(network_capture_live_policy)

t_dns_stub_namespace_required() { # with the DNS stub bwrap makes no network namespace, so a run whose inner helper cannot make its own stops (125) and runs nothing; the command's network holds only lo; network-dns off still gets bwrap's
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	unshare -Ur true 2>/dev/null || skip "cannot make a user namespace to set its namespace limits in"
	# control: the namespace the command runs in has lo only
	run_sbx -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "; echo ran'
	expect_rc 0
	[ "$(grep -v ran <<<"$OUT")" = lo ] || fail "interfaces inside other than lo: $OUT"
	# the kernel refuses every new network namespace: sbx runs in a user namespace whose
	# max_net_namespaces is 0 (the limit is per user namespace, and binds its children)
	limited() { unshare -Ur sh -c 'echo "$1" >/proc/sys/user/max_net_namespaces && shift && exec "$@"' sh "$@"; }
	limited 0 "$SBX" -- sh -c 'echo RAN; cat /proc/net/dev' >"$T/l.out" 2>"$T/l.err"
	RC=$? OUT=$(cat "$T/l.out") ERR=$(cat "$T/l.err")
	expect_rc 125 "with no network namespace possible"
	expect_not_contains "$OUT" RAN "the command, without a network namespace of its own"
	expect_contains "$ERR" "cannot make the sandbox's network namespace" "the reason"
	expect_contains "$ERR" "network-dns off" "the hint"
	# network-dns off: bwrap's --unshare-net, which the same limit refuses
	limited 0 "$SBX" --network-dns=off -- sh -c 'echo RAN' >"$T/l.out" 2>"$T/l.err"
	RC=$? OUT=$(cat "$T/l.out") ERR=$(cat "$T/l.err")
	expect_rc 125 "network-dns off with no network namespace possible"
	expect_not_contains "$OUT" RAN "the command, with no network namespace at all"
	# control: the same user namespace with the limit left alone runs the command
	limited 1000 "$SBX" -- sh -c 'echo ran-in-userns' >"$T/l.out" 2>"$T/l.err"
	RC=$? OUT=$(cat "$T/l.out") ERR=$(cat "$T/l.err")
	expect_rc 0 "in the user namespace with its limit left at 1000"
	expect_contains "$OUT" ran-in-userns "the command (control)"
}
TESTS+=(dns_stub_namespace_required)
