# tests/promises.tests.sh - promises the rest of the suite checked weakly or not at all:
# planting a plausible regression (the proxy left dumpable, capabilities kept, Keep-Alive
# forwarded) left it passing, or only a unit test of the parser noticed.
#   proxy_nondumpable          the proxy's /proc/PID/mem and environ refuse its own user
#   proxy_strips_hop_headers   through the real proxy: Proxy-* and Connection-named headers
#                              never reach the origin; a bare LF or CR in a head is a 400
#   capabilities_dropped       operations that need a capability fail inside, work in a
#                              plain user namespace (t_seccomp_status reads CapEff)
#   print_bpf_goldens          the CLI prints the programs the unit tests' goldens hold
# Sourced by test.sh (uses run_sbx, net_up, sbx_net, fail, skip, note, expect_*, and
# wait_port from proxy.tests.sh).

# as_user: the prefix that runs a command as an unprivileged user (AS_UID), or nothing
# when the test already runs as one. Root reads any process's memory (CAP_SYS_PTRACE
# overrides dumpability), so refusals that rest on dumpability must be tried without it.
as_user() {
	if [ "$(id -u)" = 0 ]; then
		command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed to drop root"
		AS_UID=65534
		AS=(setpriv --reuid=$AS_UID --regid=$AS_UID --clear-groups)
	else
		AS_UID=$(id -u)
		AS=()
		(( (0x$(awk '/^CapEff/ {print $2}' /proc/self/status) >> 19) & 1 )) &&
			skip "this user holds CAP_SYS_PTRACE, which reads any process"
	fi
	return 0
}

t_proxy_nondumpable() { # the proxy's /proc/PID/mem and environ refuse a same-uid reader; a same-uid sleep's are readable
	as_user
	local py=/usr/bin/python3 U=$T/u
	[ -x "$py" ] || skip "/usr/bin/python3 not installed (the reader)"
	local yama; yama=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
	[ "$yama" -le 1 ] || skip "Yama ptrace_scope=$yama refuses /proc/PID/mem to every ordinary process"
	mkdir -p "$U/home" && chown -R "$AS_UID" "$U" || fail "cannot make a directory for uid $AS_UID"
	"${AS[@]}" bwrap --unshare-user --unshare-net --ro-bind / / --dev /dev --proc /proc true 2>"$T/bw.err" ||
		skip "bwrap cannot make a sandbox as uid $AS_UID here: $(head -c 200 "$T/bw.err")"
	printf 'allow-write .\nallow-domain example.test\n' >"$U/p"
	chmod 644 "$U/p"
	# The reader, as that user, starts the control (an ordinary sleep) and sbx itself, so
	# both are its descendants (Yama ptrace_scope=1 lets a process read only those); the
	# command connects once, since sbx forks the proxy on the first connection; the reader finds
	# the proxy (sbx's child that runs sbx's own image; bwrap is the other) once it is
	# under its filter (PR_SET_DUMPABLE comes before), and tries both.
	cat >"$T/reader.py" <<'EOF'
import errno, os, signal, subprocess, sys, time
sbx, policy, tok = sys.argv[1:4]
def probe(pid):
    res = []
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            f.read()
        res.append("environ=ok")
    except OSError as e:
        res.append("environ=" + errno.errorcode[e.errno])
    try:
        fd = os.open("/proc/%d/mem" % pid, os.O_RDONLY)
    except OSError as e:
        res.append("mem=" + errno.errorcode[e.errno])
    else:
        try:    # one byte at the first mapping: opening alone reads nothing
            with open("/proc/%d/maps" % pid) as m:
                addr = int(m.readline().split("-")[0], 16)
            res.append("mem=ok" if len(os.pread(fd, 1, addr)) == 1 else "mem=empty")
        except OSError as e:
            res.append("mem=" + errno.errorcode[e.errno])
        os.close(fd)
    return " ".join(res)
def field(pid, name):
    with open("/proc/%d/status" % pid) as f:
        return next(l.split()[1] for l in f if l.startswith(name + ":"))
def children(pid):
    out = []
    for p in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % p) as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(p))
        except (OSError, ValueError, IndexError):
            pass
    return out
ctl = subprocess.Popen(["sleep", "30"])
box = subprocess.Popen([sbx, "-c", policy, "--", "python3", "-c",
    "import socket, sys, time; socket.create_connection(('127.0.0.1', 3128)).close(); time.sleep(30)", tok])
proxy = None
for _ in range(100):
    for c in children(box.pid):
        try:
            with open("/proc/%d/cmdline" % c, "rb") as f:
                if f.read().split(b"\0")[0] == sbx.encode() and field(c, "Seccomp") == "2":
                    proxy = c
        except OSError:
            pass
    if proxy:
        break
    time.sleep(0.1)
if proxy:
    print("uid", os.getuid(), "proxy-uid", field(proxy, "Uid"), "control-uid", field(ctl.pid, "Uid"))
    print("control", probe(ctl.pid))
    print("proxy", probe(proxy))
else:
    print("no proxy under sbx", box.pid)
ctl.kill()
box.send_signal(signal.SIGTERM)
try:
    box.wait(10)
except subprocess.TimeoutExpired:
    box.kill()
EOF
	chmod 644 "$T/reader.py"
	local out
	out=$(cd "$U" && HOME=$U/home timeout -k 5 "$TMO" "${AS[@]}" "$py" "$T/reader.py" "$SBX" "$U/p" "$TOKBASE" 2>"$T/reader.err")
	note "$(tr '\n' ';' <<<"$out")"
	log_file reader "$T/reader.err"
	grep -q '^uid ' <<<"$out" || fail "no proxy process found under sbx run as uid $AS_UID: $out"
	grep -q "^uid $AS_UID proxy-uid $AS_UID control-uid $AS_UID\$" <<<"$out" ||
		fail "the reader, the proxy and the control must all run as uid $AS_UID: $out"
	grep -q '^control environ=ok mem=ok$' <<<"$out" ||
		fail "control: the same user cannot read an ordinary process's environ and memory: $out"
	grep -Eq '^proxy environ=E[A-Z]+ mem=E[A-Z]+$' <<<"$out" ||
		fail "the proxy's environ or memory is readable by its own user (it must be non-dumpable): $out"
}
TESTS+=(proxy_nondumpable)

t_proxy_strips_hop_headers() { # the origin never gets Proxy-* or Connection-named headers (an ordinary one arrives); bare LF or CR in a head: 400
	net_up
	# an origin that records every request head it receives, byte for byte
	ip netns exec "$NS" python3 - "$NSIP" "$T/heads" >"$T/origin.log" 2>&1 <<'EOF' &
import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 8004)); s.listen(16)
lock = threading.Lock()
def serve(c):
    with c:
        head = b""
        while b"\r\n\r\n" not in head:
            d = c.recv(4096)
            if not d: break
            head += d
        with lock, open(sys.argv[2], "ab") as f:
            f.write(b"=== request\n" + head.split(b"\r\n\r\n")[0].replace(b"\r\n", b"\n") + b"\n")
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\nrecorded\n")
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
	wait_port 8004 10 || { log_file origin "$T/origin.log"; fail "the recording origin did not start"; }
	cat >"$P/raw.py" <<'EOF'
import socket, sys
def send(label, head):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(head)
    r = b""
    while True:
        d = s.recv(4096)
        if not d: break
        r += d
    print(label, r.split(b"\r\n")[0].decode(), "body=" + r.split(b"\r\n\r\n", 1)[-1].decode().strip())
H = b"Host: allowed.test:8004\r\n"
send("hop", b"GET http://allowed.test:8004/hop HTTP/1.1\r\n" + H +
     b"Proxy-Authorization: Basic c2VjcmV0OnNlY3JldA==\r\nProxy-Connection: keep-alive\r\n"
     b"Proxy-Token: t0ken\r\nConnection: X-Secret, keep-alive, x-other\r\nX-Secret: s3cret\r\n"
     b"Keep-Alive: timeout=5\r\nX-OTHER: 0ther\r\nX-Ordinary: arrives\r\n\r\n")
send("lf", b"GET http://allowed.test:8004/lf HTTP/1.1\r\n" + H + b"X: 1\nHost: other.test\r\n\r\n")
send("cr", b"GET http://allowed.test:8004/cr HTTP/1.1\r\n" + H + b"X: 1\rHost: other.test\r\n\r\n")
send("crlf", b"GET http://allowed.test:8004/crlf HTTP/1.1\r\n" + H + b"X: 1\r\nX-Also: other.test\r\n\r\n")
EOF
	# curl sends Proxy-Authorization itself (--proxy-user) and Proxy-Connection; its
	# Keep-Alive, TE and Trailer are named by no Connection field: the fixed set drops them
	sbx_net 'python3 raw.py
		curl -s -m 10 -o /dev/null -w "curl=%{http_code}\n" --proxy-user user:hunter2 \
			-H "Connection: X-Curl-Hop" -H "X-Curl-Hop: hop-only" -H "X-Curl-Ordinary: arrives" \
			-H "Keep-Alive: timeout=9" -H "TE: trailers" -H "Trailer: X-Late" \
			http://allowed.test:8004/curl'
	expect_rc 0
	log_file heads "$T/heads"
	# the controls: the requests arrived, with their ordinary headers
	expect_contains "$OUT" "hop HTTP/1.1 200 OK body=recorded" "the request with hop headers is served"
	expect_contains "$OUT" "crlf HTTP/1.1 200 OK body=recorded" "control: the same head with CRLF only is served"
	expect_contains "$OUT" "curl=200" "curl's request is served"
	local heads; heads=$(cat "$T/heads" 2>/dev/null)
	expect_contains "$heads" "GET /hop HTTP/1.1" "the origin received the request (origin-form)"
	expect_contains "$heads" "X-Ordinary: arrives" "control: an ordinary header reaches the origin"
	expect_contains "$heads" "X-Curl-Ordinary: arrives" "control: curl's ordinary header reaches the origin"
	expect_contains "$heads" "X-Also: other.test" "control: the CRLF request's header arrives"
	# what the origin must never see
	local bad
	bad=$(grep -Ei '^(proxy-[^:]*|x-secret|x-other|x-curl-hop|keep-alive|te|trailer):' <<<"$heads")
	[ -z "$bad" ] || fail "headers for the proxy or this hop reached the origin:"$'\n'"$bad"
	grep -Eiq 'c2VjcmV0|s3cret|0ther|hunter2|dXNlcjpodW50ZXIy|hop-only|timeout=|X-Late' <<<"$heads" && fail "a hop-only value reached the origin"
	grep -q '^Connection: close$' <<<"$heads" || fail "the origin got no 'Connection: close' from the proxy"
	bad=$(grep -i '^connection:' <<<"$heads" | grep -vx 'Connection: close')
	[ -z "$bad" ] || fail "the client's own Connection field reached the origin: $bad"
	# a bare LF or CR inside a header value: refused before anything goes upstream
	expect_contains "$OUT" "lf HTTP/1.1 400" "a bare LF in a header value gets a 400"
	expect_contains "$OUT" "cr HTTP/1.1 400" "a bare CR in a header value gets a 400"
	grep -Eq 'GET /(lf|cr) ' <<<"$heads" && fail "a head with a bare LF or CR reached the origin"
	grep -qi 'other.test' <<<"$(grep -vi '^X-Also' <<<"$heads")" && fail "a smuggled Host reached the origin"
	return 0
}
TESTS+=(proxy_strips_hop_headers)

t_capabilities_dropped() { # the command holds no capability: DAC override and file capabilities fail inside, work in a plain user namespace
	# Inside, the command is root (as the caller is) in sbx's nested user namespace,
	# which maps only the caller's uid. Creating that namespace gives the inner helper
	# every capability in it, and a root exec keeps them: only drop_capabilities()
	# takes them away. The operations are chosen so that nothing else refuses them:
	#   - open a mode-000 file the command owns for reading: CAP_DAC_OVERRIDE (the file's
	#     uid is mapped, so the capability would count); no seccomp rule touches open;
	#   - write a security.capability xattr (file capabilities): CAP_SETFCAP over the
	#     file's owner; setxattr is not filtered.
	# Not chosen: binding port 80 or a raw socket (the network namespace belongs to bwrap's
	# user namespace, where the command never holds anything, dropped or not), mknod of a
	# device (never allowed in a user namespace), chown to another uid (unmapped: EINVAL).
	local py
	py=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 not installed"
	command -v unshare >/dev/null || skip "unshare (util-linux) not installed"
	policy p <<<"allow-write ."
	cat >"$P/caps.py" <<'EOF'
import errno, os, struct, sys
def run(label, f):
    try:
        f(); print(label, "ok")
    except OSError as e:
        print(label, errno.errorcode.get(e.errno, e.errno))
d = sys.argv[1]
with open(d + "/secret", "w") as f:
    f.write("x\n")
os.chmod(d + "/secret", 0)
open(d + "/tool", "w").close()
print("uid", os.getuid())
run("dac_override", lambda: open(d + "/secret").read())
# struct vfs_cap_data, revision 2, effective; permitted = CAP_NET_RAW (13)
run("setfcap", lambda: os.setxattr(d + "/tool", "security.capability",
                                    struct.pack("<IIIII", 0x02000001, 1 << 13, 0, 0, 0)))
EOF
	mkdir -p "$P/in" "$P/ctl"
	run_sbx -c "$T/p" -- "$py" caps.py in
	expect_rc 0
	local inside=$OUT
	# the control: the same script in a plain user namespace (root there, mapped to the
	# caller), where the capabilities are held; never as root on this machine itself
	RC=0; OUT=$(unshare -Ur "$py" caps.py ctl 2>&1) || RC=$?
	note "inside: $(tr '\n' ';' <<<"$inside") control: $(tr '\n' ';' <<<"$OUT")"
	[ "$RC" = 0 ] || skip "unshare -Ur cannot make a user namespace here: $OUT"
	grep -q '^dac_override ok$' <<<"$OUT" || fail "control: a user namespace's root cannot read its own mode-000 file: $OUT"
	grep -q '^setfcap ok$' <<<"$OUT" || skip "this file system takes no file capabilities, even from a user namespace's root: $OUT"
	[ "$(sed -n 's/^uid //p' <<<"$inside")" = "$(id -u)" ] || fail "the command does not run as the caller's uid: $inside"
	grep -q '^dac_override EACCES$' <<<"$inside" ||
		fail "inside, a mode-000 file was not refused (the command holds CAP_DAC_OVERRIDE?): $inside"
	grep -q '^setfcap EPERM$' <<<"$inside" ||
		fail "inside, writing file capabilities was not refused (the command holds CAP_SETFCAP?): $inside"
}
TESTS+=(capabilities_dropped)

t_print_bpf_goldens() { # sbx --print=bpf, bpf-proxy and bpf-observer print the unit tests' goldens, for both arches
	local a m
	policy p <<<"allow-write ."
	for a in x86_64 aarch64; do
		for m in bpf bpf-proxy bpf-observer; do
			run_sbx -c "$T/p" --print=$m --arch=$a
			expect_rc 0
			[ "$OUT" = "$(cat "$HERE/tests/golden/$a.$m.txt")" ] ||
				fail "--print=$m --arch=$a differs from tests/golden/$a.$m.txt: $(diff <(echo "$OUT") "$HERE/tests/golden/$a.$m.txt" | head -5)"
		done
		# the control: the two programs differ (the proxy's refuses execve, the sandbox's does not)
		[ "$(cat "$HERE/tests/golden/$a.bpf.txt")" != "$(cat "$HERE/tests/golden/$a.bpf-proxy.txt")" ] ||
			fail "the goldens of the two programs are the same"
	done
}
TESTS+=(print_bpf_goldens)
