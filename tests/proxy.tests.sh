# tests/proxy.tests.sh - the proxy with real clients: TLS through CONNECT, git over HTTP,
# python and node client libraries, big parallel transfers, load and hostile clients.
# Sourced by test.sh (uses net_up, sbx_net, in_net, fail, skip, note, expect_*).
# Only loopback and the test host $NSIP are ever contacted; names come from the private
# hosts file $T/hosts. Extra servers run in $NS as background jobs of the test's subshell,
# so net_up's EXIT trap (kill $(jobs -p)) ends them.

# wait_port PORT SECS : wait until something in $NS accepts on $NSIP:PORT (bounded)
wait_port() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		python3 - "$NSIP" "$1" 2>/dev/null <<'EOF' && return 0
import socket, sys
socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=0.5).close()
EOF
		sleep 0.1
	done
	return 1
}

t_proxy_https_test_ca() { # HTTPS through CONNECT with a private CA: verified end to end, no MITM; denied.test -> 403 (curl 56)
	command -v openssl >/dev/null || skip "openssl not installed"
	net_up
	# a test CA, and a server certificate signed by it naming allowed.test (and denied.test, so
	# that only the proxy can be the reason denied.test fails: see the host-side control)
	openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 2 -subj "/CN=sbx test CA" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
		-keyout "$T/ca.key" -out "$T/ca.pem" 2>"$T/openssl.err" || { log_file openssl "$T/openssl.err"; fail "openssl: cannot make the CA"; }
	openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=allowed.test" \
		-keyout "$T/srv.key" -out "$T/srv.csr" 2>>"$T/openssl.err" || fail "openssl: cannot make the server key"
	printf 'subjectAltName=DNS:allowed.test,DNS:denied.test\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$T/srv.ext"
	openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial -days 2 -sha256 \
		-extfile "$T/srv.ext" -out "$T/srv.pem" 2>>"$T/openssl.err" || { log_file openssl "$T/openssl.err"; fail "openssl: cannot sign the server cert"; }
	openssl verify -CAfile "$T/ca.pem" "$T/srv.pem" >/dev/null || fail "openssl verify: the server cert does not chain to the test CA"
	cp "$T/ca.pem" "$P/ca.pem"
	ip netns exec "$NS" python3 - "$NSIP" "$T/srv.pem" "$T/srv.key" >"$T/tls.log" 2>&1 <<'EOF' &
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = ("hello-over-tls host=%s\n" % self.headers.get("Host", "")).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def log_message(self, *a): pass
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(sys.argv[2], sys.argv[3])
srv = http.server.ThreadingHTTPServer((sys.argv[1], 8443), H)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
EOF
	wait_port 8443 10 || { log_file tls "$T/tls.log"; fail "the HTTPS test server did not start"; }
	# control (host side, no proxy): the server and cert accept denied.test too
	local host_out
	host_out=$(curl -sS -m 10 --noproxy '*' --cacert "$T/ca.pem" --resolve "denied.test:8443:$NSIP" https://denied.test:8443/ 2>&1)
	expect_contains "$host_out" "hello-over-tls host=denied.test:8443" "control: on the host, the TLS server answers for denied.test"

	sbx_net 'echo "HTTPS_PROXY=$HTTPS_PROXY"
		curl -sS -m 10 --cacert ca.pem https://allowed.test:8443/; echo "allowed=$?"
		curl -sv -m 10 --cacert ca.pem -o /dev/null https://allowed.test:8443/ 2>&1 | tr -d "\r" | grep -E "CONNECT|< HTTP|issuer|SSL certificate verify|subject" | sed "s/^/allowed-v: /"
		curl -sS -m 10 -o /dev/null https://allowed.test:8443/ 2>/dev/null; echo "noca=$?"
		curl -sv -m 10 --cacert ca.pem https://denied.test:8443/ >"$TMPDIR/d.out" 2>"$TMPDIR/d.err"; echo "denied=$?"
		tr -d "\r" <"$TMPDIR/d.err" | grep -E "CONNECT|< HTTP" | sed "s/^/denied-v: /"; cat "$TMPDIR/d.out"'
	expect_rc 0
	expect_contains "$OUT" "HTTPS_PROXY=http://127.0.0.1:3128" "HTTPS_PROXY is set inside"
	expect_contains "$OUT" "hello-over-tls host=allowed.test:8443" "HTTPS to allowed.test through CONNECT"
	expect_contains "$OUT" "allowed=0" "curl exit for allowed.test"
	expect_contains "$OUT" "allowed-v: > CONNECT allowed.test:8443 HTTP/1.1" "curl used a CONNECT tunnel (HTTPS_PROXY)"
	expect_contains "$OUT" "allowed-v: < HTTP/1.1 200 Connection Established" "the tunnel was granted"
	expect_contains "$OUT" "issuer: CN=sbx test CA" "the origin's certificate arrives untouched (no interception)"
	expect_contains "$OUT" "SSL certificate verify ok" "the certificate verifies against the test CA"
	grep -q '^noca=60$' <<<"$OUT" || fail "without --cacert, curl must fail verification (exit 60): $(grep '^noca=' <<<"$OUT")"
	grep -q '^denied=56$' <<<"$OUT" || fail "https://denied.test: expected curl exit 56, got $(grep '^denied=' <<<"$OUT")"
	expect_contains "$OUT" "denied-v: > CONNECT denied.test:8443 HTTP/1.1" "curl tried a tunnel to denied.test"
	expect_contains "$OUT" "denied-v: < HTTP/1.1 403 denied.test is off limits" "the CONNECT refusal carries the policy reason"
	expect_not_contains "$OUT" "hello-over-tls host=denied.test" "denied.test content leaked"
}

TESTS+=(proxy_https_test_ca)

t_proxy_git_http() { # git clone over dumb HTTP and smart HTTP (http-backend) via http_proxy; denied.test refused
	command -v git >/dev/null || skip "git not installed"
	local backend
	backend=$(git --exec-path)/git-http-backend
	[ -x "$backend" ] || skip "git-http-backend not installed"
	net_up
	git_env
	# the repository: two commits, a binary file, a tag; served bare, dumb (update-server-info) and smart
	mkdir -p "$T/src" "$T/git"
	git -C "$T/src" init -q -b main && echo "hello from git" >"$T/src/README" &&
		head -c 300000 /dev/urandom >"$T/src/blob.bin" && git -C "$T/src" add . &&
		git -C "$T/src" commit -qm one && echo two >>"$T/src/README" && git -C "$T/src" commit -qam two &&
		git -C "$T/src" tag v1 || fail "host: cannot make the source repository"
	git clone -q --bare "$T/src" "$T/git/repo.git" && git -C "$T/git/repo.git" update-server-info ||
		fail "host: cannot make the bare repository"
	local head blobsum
	head=$(git -C "$T/src" rev-parse HEAD); blobsum=$(sha256sum <"$T/src/blob.bin" | cut -c1-64)
	# dumb HTTP: static files
	ip netns exec "$NS" python3 -m http.server 8001 --bind "$NSIP" --directory "$T/git" >"$T/dumb.log" 2>&1 &
	# smart HTTP: git http-backend behind a tiny CGI server
	ip netns exec "$NS" python3 - "$NSIP" "$backend" "$T/git" >"$T/smart.log" 2>&1 <<'EOF' &
import http.server, subprocess, sys, os
ip, backend, root = sys.argv[1:4]
class H(http.server.BaseHTTPRequestHandler):
    def run(self):
        path, _, query = self.path.partition("?")
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        env = dict(os.environ, GIT_PROJECT_ROOT=root, GIT_HTTP_EXPORT_ALL="1", REQUEST_METHOD=self.command,
                   PATH_INFO=path, QUERY_STRING=query, CONTENT_TYPE=self.headers.get("Content-Type", ""),
                   CONTENT_LENGTH=str(n), REMOTE_ADDR=self.client_address[0],
                   HTTP_CONTENT_ENCODING=self.headers.get("Content-Encoding", ""),
                   HTTP_GIT_PROTOCOL=self.headers.get("Git-Protocol", ""))
        out = subprocess.run([backend], input=body, env=env, capture_output=True, timeout=30).stdout
        head, _, data = out.partition(b"\r\n\r\n")
        status = 200
        hdrs = []
        for line in head.split(b"\r\n"):
            k, _, v = line.decode().partition(":")
            if k.lower() == "status": status = int(v.split()[0])
            elif k: hdrs.append((k, v.strip()))
        self.send_response(status)
        for k, v in hdrs: self.send_header(k, v)
        self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
    do_GET = do_POST = run
    def log_message(self, fmt, *a): sys.stderr.write("smart: host=%s %s\n" % (self.headers.get("Host"), fmt % a))
http.server.ThreadingHTTPServer((ip, 8002), H).serve_forever()
EOF
	wait_port 8001 10 && wait_port 8002 10 || { log_file dumb "$T/dumb.log"; log_file smart "$T/smart.log"; fail "the git HTTP servers did not start"; }
	sbx_net 'cd "$TMPDIR" || exit 9
		echo "http_proxy=$http_proxy"
		git clone -q http://allowed.test:8001/repo.git dumb 2>&1; echo "dumb=$?"
		git -C dumb rev-parse HEAD | sed "s/^/dumb-head=/"; git -C dumb describe --tags | sed "s/^/dumb-tag=/"
		sha256sum <dumb/blob.bin | cut -c1-64 | sed "s/^/dumb-blob=/"; tail -n 1 dumb/README | sed "s/^/dumb-readme=/"
		GIT_TRACE_CURL=1 GIT_TRACE_CURL_NO_DATA=1 git clone -q http://also.allowed.test:8002/repo.git smart 2>"$TMPDIR/trace"; echo "smart=$?"
		grep -c "Content-Type: application/x-git-upload-pack-result" "$TMPDIR/trace" | sed "s/^/smart-post-results=/"
		git -C smart rev-parse HEAD | sed "s/^/smart-head=/"; sha256sum <smart/blob.bin | cut -c1-64 | sed "s/^/smart-blob=/"
		git -C smart fetch -q origin 2>&1; echo "fetch=$?"
		git ls-remote http://allowed.test:8002/repo.git 2>&1 | grep -c refs/ | sed "s/^/ls-remote-refs=/"
		git clone -q http://denied.test:8001/repo.git denied-dumb 2>&1; echo "denied-dumb=$?"
		git clone -q http://denied.test:8002/repo.git denied-smart 2>&1; echo "denied-smart=$?"
		if [ -e denied-dumb/README ] || [ -e denied-smart/README ]; then echo denied-content-arrived; fi'
	expect_rc 0
	expect_contains "$OUT" "http_proxy=http://127.0.0.1:3128" "http_proxy is set inside"
	expect_contains "$OUT" "dumb=0" "git clone over dumb HTTP through the proxy"
	expect_contains "$OUT" "dumb-head=$head" "dumb clone: HEAD"
	expect_contains "$OUT" "dumb-tag=v1" "dumb clone: the tag came along"
	expect_contains "$OUT" "dumb-blob=$blobsum" "dumb clone: binary file intact"
	expect_contains "$OUT" "dumb-readme=two" "dumb clone: latest README"
	expect_contains "$OUT" "smart=0" "git clone over smart HTTP (POSTs) through the proxy"
	grep -q '^smart-post-results=[1-9]' <<<"$OUT" || fail "the smart clone did not use the smart protocol (no upload-pack POST result)"
	expect_contains "$OUT" "smart-head=$head" "smart clone: HEAD"
	expect_contains "$OUT" "smart-blob=$blobsum" "smart clone: binary file intact"
	expect_contains "$OUT" "fetch=0" "git fetch on the smart clone"
	expect_contains "$OUT" "ls-remote-refs=2" "git ls-remote lists refs/heads/main and refs/tags/v1"
	grep -q '^denied-dumb=128$' <<<"$OUT" || fail "clone from denied.test (dumb): expected exit 128: $(grep '^denied-dumb=' <<<"$OUT")"
	grep -q '^denied-smart=128$' <<<"$OUT" || fail "clone from denied.test (smart): expected exit 128: $(grep '^denied-smart=' <<<"$OUT")"
	[ "$(grep -c "The requested URL returned error: 403" <<<"$OUT")" -ge 2 ] || fail "git does not report the proxy's 403 for both denied clones"
	expect_not_contains "$OUT" denied-content-arrived "a denied clone produced a work tree"
	grep -q '"GET /repo.git/info/refs' "$T/dumb.log" || fail "control: the dumb server saw no request"
	grep -q 'smart: host=also.allowed.test:8002 "POST /repo.git/git-upload-pack' "$T/smart.log" || fail "control: the smart server saw no POST"
	! grep -q 'host=denied.test' "$T/smart.log" || fail "a request for denied.test reached the smart server"
}

TESTS+=(proxy_git_http)

t_proxy_python_keepalive() { # urllib ProxyHandler: two URLs, a 403; http.client keep-alive (HTTP/1.0, 1.1, after 100-continue): both bodies
	net_up
	echo "body-one" >"$T/www/one.txt"; echo "body-two" >"$T/www/two.txt"
	# an HTTP/1.1 origin that keeps connections alive unless asked to close (the proxy asks)
	ip netns exec "$NS" python3 - "$NSIP" >"$T/ka.log" 2>&1 <<'EOF' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        n = int(self.headers.get("Content-Length") or 0)
        got = self.rfile.read(n) if n else b""
        b = ("ka-body path=%s conn=%s%s\n" % (self.path, self.headers.get("Connection"),
             " posted=%d" % len(got) if self.command == "POST" else "")).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    do_POST = do_GET
    def log_message(self, fmt, *a): sys.stderr.write("ka: %s %s\n" % (self.client_address[1], fmt % a))
http.server.ThreadingHTTPServer((sys.argv[1], 8003), H).serve_forever()
EOF
	wait_port 8003 10 || fail "the keep-alive test server did not start"
	cat >"$P/ka.py" <<'EOF'
import http.client, sys, urllib.request, urllib.error
PROXY = "http://127.0.0.1:3128"
op = urllib.request.build_opener(urllib.request.ProxyHandler({"http": PROXY, "https": PROXY}))
for u in ("http://allowed.test:8000/one.txt", "http://allowed.test:8000/two.txt", "http://allowed.test:8003/three"):
    with op.open(u, timeout=10) as r:
        print("urllib", u, r.status, r.read().decode().strip())
try:
    op.open("http://denied.test:8000/one.txt", timeout=10); print("urllib-denied: no error")
except urllib.error.HTTPError as e:
    print("urllib-denied", e.code, e.headers.get("X-Proxy-Error"), e.read().decode().strip())

class Counting(http.client.HTTPConnection):
    connects = 0
    def connect(self):
        Counting.connects += 1; super().connect()

# two GETs on one connection to an HTTP/1.0 and an HTTP/1.1 origin; then a POST with
# "Expect: 100-continue" (the origin answers 100 Continue, then 200) followed by a GET
for origin, first in (("allowed.test:8000", "GET"), ("allowed.test:8003", "GET"), ("allowed.test:8003", "POST")):
    Counting.connects = 0
    c = Counting("127.0.0.1", 3128, timeout=10)
    bodies = []
    for method, path in ((first, "/one.txt"), ("GET", "/two.txt")):
        try:
            h = {"Connection": "keep-alive", "Proxy-Connection": "keep-alive"}
            if method == "POST": h["Expect"] = "100-continue"
            c.request(method, "http://%s%s" % (origin, path), body=b"x" * 1000 if method == "POST" else None, headers=h)
            r = c.getresponse()
            bodies.append("%d %s [%s]" % (r.status, r.read().decode().strip(), r.getheader("Connection")))
        except Exception as e:
            bodies.append("error %s: %s" % (type(e).__name__, e))
    c.close()
    print("http.client", first, origin, "connects=%d" % Counting.connects, " | ".join(bodies))
EOF
	sbx_net 'timeout 30 python3 ka.py'
	expect_rc 0
	expect_contains "$OUT" "urllib http://allowed.test:8000/one.txt 200 body-one" "urllib: first URL"
	expect_contains "$OUT" "urllib http://allowed.test:8000/two.txt 200 body-two" "urllib: second URL in the same run"
	expect_contains "$OUT" "urllib http://allowed.test:8003/three 200 ka-body path=/three conn=close" "urllib: HTTP/1.1 origin, proxy asked it to close"
	expect_contains "$OUT" "urllib-denied 403 blocked-by-allowlist Connection blocked by network allowlist" "urllib: denied.test gets the proxy's 403"
	local case line
	for case in "GET allowed.test:8000" "GET allowed.test:8003" "POST allowed.test:8003"; do
		line=$(grep "^http.client $case " <<<"$OUT")
		[[ $line == *" 200 body-one "* || $line == *" 200 ka-body path=/one.txt conn=close "* ]] ||
			fail "http.client $case: first request failed: ${line:-<no result>}"
		[[ $case != POST* || $line == *" posted=1000 "* ]] || fail "http.client $case: the POST body did not arrive: $line"
		[[ $line == *" 200 body-two "* || $line == *" 200 ka-body path=/two.txt conn=close "* ]] ||
			fail "http.client $case: the second request on the kept-alive connection got no body (was the client told the connection closes?): $line"
	done
}

TESTS+=(proxy_python_keepalive)

t_proxy_node_connect() { # node http.request CONNECT to 127.0.0.1:3128: echo through the tunnel (small and 1 MiB); denied -> 403 + reason
	command -v node >/dev/null || skip "node not installed"
	net_up
	cat >"$P/connect.js" <<'EOF'
const http = require('http'), crypto = require('crypto');
setTimeout(() => { console.log('timeout'); process.exit(3); }, 20000).unref();
function tunnel(target, payload) {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port: 3128, method: 'CONNECT', path: target, headers: { Host: target } });
    req.on('error', (e) => resolve(`error ${e.code || e.message}`));
    req.on('connect', (res, socket, head) => {
      if (res.statusCode !== 200) { socket.destroy(); return resolve(`status ${res.statusCode} ${res.statusMessage}`); }
      const chunks = [head]; let n = head.length;
      socket.on('data', (d) => {
        chunks.push(d); n += d.length;
        if (n >= payload.length) {
          const got = Buffer.concat(chunks);
          socket.end();
          resolve(`status 200 echoed=${got.length} same=${got.equals(payload)} sha=${crypto.createHash('sha256').update(got).digest('hex').slice(0, 16)}`);
        }
      });
      socket.on('error', (e) => resolve(`socket error ${e.code}`));
      socket.write(payload);
    });
    req.end();
  });
}
(async () => {
  console.log('small:', await tunnel('allowed.test:7000', Buffer.from('ping-from-node\n')));
  const big = crypto.randomBytes(1 << 20);
  console.log('big-sha', crypto.createHash('sha256').update(big).digest('hex').slice(0, 16));
  console.log('big:', await tunnel('also.allowed.test:7000', big));
  console.log('denied:', await tunnel('denied.test:7000', Buffer.from('x\n')));
  process.exit(0);
})();
EOF
	sbx_net 'node connect.js'
	expect_rc 0
	expect_contains "$OUT" "small: status 200 echoed=15 same=true" "node: CONNECT to allowed.test:7000, echo read back"
	local sha; sha=$(sed -n 's/^big-sha //p' <<<"$OUT")
	[ -n "$sha" ] || fail "node script printed no payload hash"
	expect_contains "$OUT" "big: status 200 echoed=1048576 same=true sha=$sha" "node: 1 MiB echoed intact through the tunnel"
	expect_contains "$OUT" "denied: status 403 denied.test is off limits" "node: CONNECT to denied.test refused with the reason"
}

TESTS+=(proxy_node_connect)

t_proxy_parallel_transfers() { # 8 parallel 20 MiB downloads, 4 parallel 20 MiB uploads (absolute-URI and CONNECT), uploads to a slow reader: intact
	net_up
	head -c $((20 << 20)) /dev/urandom >"$T/www/big.bin" || fail "host: cannot make the 20 MiB file"
	head -c $((20 << 20)) /dev/urandom >"$P/up.bin" || fail "host: cannot make the upload file"
	local bigsum upsum
	bigsum=$(sha256sum <"$T/www/big.bin" | cut -c1-64); upsum=$(sha256sum <"$P/up.bin" | cut -c1-64)
	# the upload server: hashes the request body, answers "sha256 length". On :8004 it reads as
	# fast as it can; on :8009 it is slower than its clients (a 4 KiB receive buffer, a 0.5 ms
	# pause per 4 KiB read), so the proxy's buffer toward it fills and its sends there are partial
	ip netns exec "$NS" python3 - "$NSIP" >"$T/up.log" 2>&1 <<'EOF' &
import hashlib, http.server, socket, sys, threading, time
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"     # so that Expect: 100-continue is answered
    def upload(self):
        slow = self.server.server_address[1] == 8009
        n = int(self.headers["Content-Length"]); h = hashlib.sha256(); left = n
        while left:
            d = self.rfile.read(min(left, 4096 if slow else 1 << 20))
            if not d: break
            h.update(d); left -= len(d)
            if slow: time.sleep(0.0005)
        b = ("%s %d\n" % (h.hexdigest(), n - left)).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(b))); self.send_header("Connection", "close")
        self.end_headers(); self.wfile.write(b); self.close_connection = True
    do_PUT = do_POST = upload
    def log_message(self, *a): pass
class SlowServer(http.server.ThreadingHTTPServer):
    def server_bind(self):
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096); super().server_bind()
slow = SlowServer((sys.argv[1], 8009), H)
threading.Thread(target=slow.serve_forever, daemon=True).start()
# :8010, raw TCP, slow like :8009: reads to EOF, answers "sha256 length", closes
def raw_one(c):
    h, n = hashlib.sha256(), 0
    while True:
        d = c.recv(4096)
        if not d: break
        h.update(d); n += len(d); time.sleep(0.0005)
    c.sendall(b"%s %d\n" % (h.hexdigest().encode(), n)); c.close()
def raw_serve():
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096); s.bind((sys.argv[1], 8010)); s.listen(64)
    while True:
        c, _ = s.accept(); threading.Thread(target=raw_one, args=(c,), daemon=True).start()
threading.Thread(target=raw_serve, daemon=True).start()
http.server.ThreadingHTTPServer((sys.argv[1], 8004), H).serve_forever()
EOF
	wait_port 8004 10 && wait_port 8009 10 && wait_port 8010 10 || fail "the upload servers did not start"
	cat >"$P/xfer.sh" <<'EOF'
cd "$TMPDIR" || exit 9
start=$(date +%s.%N)
for i in 1 2 3 4 5 6 7 8; do
	case $i in [1-4]) mode=forward; p= ;; *) mode=connect; p=-p ;; esac
	( curl -sS -m 45 $p -o "dl.$i" -w '%{http_code}' http://allowed.test:8000/big.bin >"dl.$i.code" 2>"dl.$i.err"
	  echo "dl $i $mode rc=$? code=$(cat "dl.$i.code") sha=$(sha256sum <"dl.$i" | cut -c1-64) $(head -c 200 "dl.$i.err")"; rm -f "dl.$i" ) &
done
for i in 1 2 3 4; do
	case $i in [12]) mode=forward-put; a="-T $OLDPWD/up.bin"; p= ;; *) mode=connect-post; a="--data-binary @$OLDPWD/up.bin"; p=-p ;; esac
	( curl -sS -m 45 $p $a -H 'Content-Type: application/octet-stream' http://also.allowed.test:8004/up >"up.$i" 2>"up.$i.err"
	  echo "up $i $mode rc=$? reply=$(head -c 100 "up.$i") $(head -c 200 "up.$i.err")" ) &
done
wait
echo "elapsed $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1fs", e - s }')"
# then, one at a time, uploads to servers that read slower than the client sends: 1 MiB over raw
# tunnels (CONNECT, SOCKS5; the client sends it all, half-closes, reads the reply) and 2 MiB curl PUTs
python3 - "$OLDPWD/up.bin" <<'PY'
import hashlib, socket, struct, sys
data = open(sys.argv[1], "rb").read(1 << 20)
for i, mode in enumerate(("connect", "socks5", "connect", "socks5")):
    try:
        if mode == "connect":
            s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
            s.sendall(b"CONNECT allowed.test:8010 HTTP/1.1\r\nHost: allowed.test:8010\r\n\r\n")
            h = b""
            while b"\r\n\r\n" not in h:
                x = s.recv(1)
                if not x: break
                h += x
        else:
            s = socket.create_connection(("127.0.0.1", 1080), timeout=20)
            s.sendall(b"\x05\x01\x00"); s.recv(2)
            s.sendall(b"\x05\x01\x00\x03\x0callowed.test" + struct.pack(">H", 8010)); s.recv(10)
        s.sendall(data); s.shutdown(socket.SHUT_WR)
        r = b""
        while True:
            x = s.recv(200)
            if not x: break
            r += x
        print("raw %d %s reply=%s" % (i + 1, mode, r.decode(errors="replace").strip()), flush=True)
    except OSError as e:
        print("raw %d %s error %s" % (i + 1, mode, e), flush=True)
PY
head -c $((2 << 20)) "$OLDPWD/up.bin" >small.bin
for i in 1 2 3 4; do
	case $i in [13]) mode=forward-put; p= ;; *) mode=connect-put; p=-p ;; esac
	curl -sS -m 20 $p -T small.bin -H 'Content-Type: application/octet-stream' http://also.allowed.test:8009/up >"slow.$i" 2>"slow.$i.err"
	echo "slow $i $mode rc=$? reply=$(head -c 100 "slow.$i") $(head -c 200 "slow.$i.err")"
done
echo "elapsed-slow $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1fs", e - s }')"
EOF
	sbx_net 'bash xfer.sh'
	expect_rc 0
	local i line
	for i in 1 2 3 4 5 6 7 8; do
		line=$(grep "^dl $i " <<<"$OUT")
		[[ $line == *" rc=0 code=200 sha=$bigsum"* ]] || fail "download $i (of 8 parallel) not intact: ${line:-<no result>} (want sha $bigsum)"
	done
	for i in 1 2 3 4; do
		line=$(grep "^up $i " <<<"$OUT")
		[[ $line == *" rc=0 reply=$upsum $((20 << 20))"* ]] || fail "upload $i (of 4 parallel) not intact: ${line:-<no result>} (want $upsum)"
	done
	local sum1 sum2
	sum1=$(head -c $((1 << 20)) "$P/up.bin" | sha256sum | cut -c1-64); sum2=$(head -c $((2 << 20)) "$P/up.bin" | sha256sum | cut -c1-64)
	for i in 1 2 3 4; do
		line=$(grep "^raw $i " <<<"$OUT")
		[[ $line == *" reply=$sum1 $((1 << 20))" ]] ||
			fail "1 MiB through a tunnel to a server slower than the client: not intact: ${line:-<no result>} (want $sum1 $((1 << 20)))"
	done
	for i in 1 2 3 4; do
		line=$(grep "^slow $i " <<<"$OUT")
		[[ $line == *" rc=0 reply=$sum2 $((2 << 20))"* ]] ||
			fail "2 MiB curl upload $i to a server slower than the client: not intact: ${line:-<no result>} (want $sum2 $((2 << 20)))"
	done
	note "$(grep '^elapsed' <<<"$OUT")"
}

TESTS+=(proxy_parallel_transfers)

# the storm run by t_proxy_load_and_slowloris inside the sandbox; argv[1] is the sync dir shared
# with the host: at each checkpoint it writes NAME.done and waits (bounded) for NAME.ack
storm_py() {
	cat <<'EOF'
import asyncio, os, socket, struct, subprocess, sys, threading, time
SYNC = sys.argv[1]
P = ("127.0.0.1", 3128)

def out(*a):
    print(*a, flush=True)

def sync(name, secs=30):
    open(os.path.join(SYNC, name + ".done"), "w").close()
    t = time.time()
    while not os.path.exists(os.path.join(SYNC, name + ".ack")):
        if time.time() - t > secs:
            out("sync-timeout", name); return False
        time.sleep(0.05)
    return True

def read_head(s):
    h = b""
    while b"\r\n\r\n" not in h:
        x = s.recv(1)
        if not x: break
        h += x
    return h

def recv_all(s):
    d = b""
    while True:
        x = s.recv(65536)
        if not x: return d
        d += x

def recv_n(s, n):
    d = b""
    while len(d) < n:
        x = s.recv(min(65536, n - len(d)))
        if not x: break
        d += x
    return d

def forward_get(url, timeout=5):
    s = socket.create_connection(P, timeout=timeout)
    s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (url.encode(), url.split("/")[2].encode()))
    d = recv_all(s); s.close(); return d

def connect_echo(payload, target=b"allowed.test:7000", timeout=5):
    s = socket.create_connection(P, timeout=timeout)
    s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target))
    h = read_head(s)
    if not h.startswith(b"HTTP/1.1 200"): s.close(); return False
    s.sendall(payload); ok = recv_n(s, len(payload)) == payload; s.close(); return ok

def socks_echo(payload, host=b"allowed.test", port=7000, timeout=5):
    s = socket.create_connection(("127.0.0.1", 1080), timeout=timeout)
    s.sendall(b"\x05\x01\x00")
    if recv_n(s, 2) != b"\x05\x00": s.close(); return False
    s.sendall(b"\x05\x01\x00\x03" + bytes([len(host)]) + host + struct.pack(">H", port))
    rep = recv_n(s, 10)
    if rep[:2] != b"\x05\x00": s.close(); return False
    s.sendall(payload); ok = recv_n(s, len(payload)) == payload; s.close(); return ok

def normal(k):
    if k % 4 == 0: return b"hello-from-test-host" in forward_get("http://allowed.test:8000/")
    if k % 4 == 1: return connect_echo(b"normal-%d\n" % k)
    if k % 4 == 2: return socks_echo(b"normal-%d\n" % k)
    return b"hello-from-test-host" in forward_get("http://also.allowed.test:8000/")

# ---- warm-up: every path once, and some concurrency, before the baseline
def warm():
    ok = all(normal(k) for k in range(8))
    ok = ok and b" 403 " in forward_get("http://denied.test:8000/")
    res = []
    ts = [threading.Thread(target=lambda: res.append(connect_echo(os.urandom(65536)))) for _ in range(20)]
    for t in ts: t.start()
    for t in ts: t.join(20)
    return ok and res.count(True) == 20
out("warm:", "ok" if warm() else "FAILED")
sync("ready")

# ---- (a) 1000 concurrent CONNECT tunnels, each echoing 1 MiB
# One random MiB is shared; each tunnel sends its own 8-byte number in front of it and checks
# what comes back by its sha256 as it arrives, so 1000 tunnels hold no GiB of copies.
N, NBYTES = 1000, 1 << 20
import hashlib, resource
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * N)), hard))
BASE = memoryview(os.urandom(NBYTES))
async def phase_a():
    up, go, all_up = [], asyncio.Event(), asyncio.Event()
    dialling = asyncio.Semaphore(32)    # the echo server's listen backlog is 64: open them in waves
    async def tunnel(i):
        tag = struct.pack(">Q", i)
        want = hashlib.sha256(tag + BASE[8:]).digest()
        async with dialling:
            r, w = await asyncio.open_connection(*P)
            w.write(b"CONNECT allowed.test:7000 HTTP/1.1\r\nHost: allowed.test:7000\r\n\r\n")
            h = await r.readuntil(b"\r\n\r\n")
        try:
            if not h.startswith(b"HTTP/1.1 200"): return "status:" + h[:30].decode(errors="replace")
            up.append(i)
            if len(up) == N: all_up.set()
            await go.wait()
            async def send():
                w.write(tag)
                for k in range(8, NBYTES, 65536):
                    w.write(BASE[k:k + 65536]); await w.drain()
            async def receive():
                got, n = hashlib.sha256(), 0
                while n < NBYTES:
                    x = await r.read(min(262144, NBYTES - n))
                    if not x: break
                    got.update(x); n += len(x)
                return got.digest()
            got = (await asyncio.gather(send(), receive()))[1]
            return "ok" if got == want else "corrupt"
        finally:
            w.close()
    tasks = [asyncio.create_task(tunnel(i)) for i in range(N)]
    try:
        await asyncio.wait_for(all_up.wait(), 30)
    except asyncio.TimeoutError:
        out("a: only %d tunnels up" % len(up))
    await asyncio.to_thread(sync, "a-open")
    t0 = time.time(); go.set()
    done, pending = await asyncio.wait(tasks, timeout=60)
    for t in pending: t.cancel()
    rs = [t.result() if not t.cancelled() and t.exception() is None else "exc:%r" % (t.exception(),) for t in done]
    out("a: ok=%d of %d, %.1fs, other: %s" % (rs.count("ok"), N, time.time() - t0, sorted(set(r for r in rs if r != "ok"))[:5]), "pending=%d" % len(pending))
asyncio.run(phase_a())
sync("a")

# ---- (b) 200 slowloris clients, one header byte a second; 20 normal requests meanwhile
# ---- (c) at the same time: upstreams that accept and never answer (:8005), never accept (:8006)
LORIS, LORIS_SECS = 200, 15
def stalled(kind, port, limit):
    t0 = time.time()
    try:
        s = socket.create_connection(P, timeout=limit)
        if kind == "fwd":
            s.sendall(b"GET http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n" % (port, port))
        else:
            s.sendall(b"CONNECT allowed.test:%d HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n" % (port, port))
            h = read_head(s)
            if not h.startswith(b"HTTP/1.1 200"):
                s.close(); return ("504" if h.startswith(b"HTTP/1.1 504") else "other:%r" % h[:40], time.time() - t0)
            s.settimeout(max(0.1, limit - (time.time() - t0)))
            s.sendall(b"GET / HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n" % port)
        d = s.recv(100)
        s.close()
        if d.startswith(b"HTTP/1.1 504"): return ("504", time.time() - t0)
        return ("eof" if not d else "other:%r" % d[:40], time.time() - t0)
    except socket.timeout:
        s.close(); return ("timeout", time.time() - t0)
    except OSError as e:
        return ("error:%s" % e, time.time() - t0)

async def phase_bc():
    res, opened, all_open = [], [0], asyncio.Event()
    head = b"GET http://allowed.test:8000/ HTTP/1.1\r\nHost: allowed.test:8000\r\nX-Slow: " + b"a" * 100
    async def loris(i):
        r, w = await asyncio.open_connection(*P)
        t0 = time.time()
        async def reader():
            try:
                return ("eof", await r.read(100))
            except OSError:
                return ("reset", b"")
        rt = asyncio.create_task(reader())
        try:
            for k in range(LORIS_SECS):
                if rt.done(): break
                try:
                    w.write(head[k:k + 1]); await w.drain()
                except OSError:
                    break
                if k == 0:
                    opened[0] += 1
                    if opened[0] == LORIS: all_open.set()
                await asyncio.wait([rt], timeout=1)
            if rt.done():
                kind, d = rt.result(); res.append((kind, time.time() - t0, d[:30]))
            else:
                rt.cancel(); res.append(("open", time.time() - t0, b""))
        finally:
            w.close()
    stall = []
    def stall_one(kind, port, limit):
        o, secs = stalled(kind, port, limit); stall.append("c: %s:%d outcome=%s secs=%.1f" % (kind, port, o, secs))
    stall_threads = [threading.Thread(target=stall_one, args=a) for a in
                     (("fwd", 8005, 8), ("fwd", 8005, 8), ("connect", 8005, 8), ("connect", 8005, 8),
                      ("fwd", 8006, 20), ("connect", 8006, 20))]
    tasks = [asyncio.create_task(loris(i)) for i in range(LORIS)]
    try:
        await asyncio.wait_for(all_open.wait(), 10)
    except asyncio.TimeoutError:
        out("b: only %d slowloris clients connected" % opened[0])
    for t in stall_threads: t.start()
    await asyncio.to_thread(sync, "b-open")
    def normals():
        times, fails = [], []
        for k in range(20):
            t0 = time.time()
            try:
                ok = normal(k)
            except OSError as e:
                ok = False; fails.append("%d:%s" % (k, e))
            times.append(time.time() - t0)
            if not ok and len(fails) < 20: fails.append("%d:failed" % k)
            time.sleep(0.4)
        return times, fails
    times, fails = await asyncio.to_thread(normals)
    out("b-normal: ok=%d of 20, max=%.3fs, slow=%d, fails=%s" % (20 - len(fails), max(times), sum(t >= 1.0 for t in times), fails[:5]))
    await asyncio.wait(tasks, timeout=LORIS_SECS + 5)
    for t in stall_threads: t.join(25)
    kinds = [r[0] for r in res]
    closed = [r for r in res if r[0] != "open"]
    out("b-loris: n=%d closed_by_proxy=%d still_open=%d first_close=%.1fs last_close=%.1fs replies=%s" % (
        len(res), len(closed), kinds.count("open"), min((r[1] for r in closed), default=-1),
        max((r[1] for r in closed), default=-1), sorted(set(r[2] for r in closed))[:3]))
    for line in sorted(stall): out(line)
asyncio.run(phase_bc())
sync("bc")

# ---- (d) clients killed mid-stream: curl downloads (absolute-URI and CONNECT), python tunnels
STREAMER = r'''
import socket, struct, sys, os
mode, prog = sys.argv[1], sys.argv[2]
if mode == "connect":
    s = socket.create_connection(("127.0.0.1", 3128)); s.sendall(b"CONNECT allowed.test:7000 HTTP/1.1\r\n\r\n")
    h = b""
    while b"\r\n\r\n" not in h: h += s.recv(1)
else:
    s = socket.create_connection(("127.0.0.1", 1080)); s.sendall(b"\x05\x01\x00"); s.recv(2)
    s.sendall(b"\x05\x01\x00\x03\x0callowed.test" + struct.pack(">H", 7000)); s.recv(10)
blk = os.urandom(65536)
with open(prog, "a") as f:
    while True:                        # the file grows by a byte per echoed chunk
        s.sendall(blk)
        if s.recv(65536): f.write("x"); f.flush()
'''
tmp = os.environ.get("TMPDIR", "/tmp")
kids, files = [], []
for i in range(6):
    f = os.path.join(tmp, "kill.%d" % i); files.append(f)
    kids.append(subprocess.Popen(["curl", "-sS", "-m", "30", "--limit-rate", "1M", "-o", f] + (["-p"] if i >= 3 else []) +
                                 ["http://allowed.test:8000/big.bin"], stderr=subprocess.DEVNULL))
for i in range(4):
    f = os.path.join(tmp, "prog.%d" % i); files.append(f)
    kids.append(subprocess.Popen([sys.executable, "-c", STREAMER, "connect" if i < 2 else "socks", f]))
t0 = time.time()
def progress(f):
    try:
        return os.path.getsize(f)
    except OSError:
        return 0
while time.time() - t0 < 10 and not all(progress(f) > 0 for f in files):
    time.sleep(0.1)
time.sleep(1)
out("d-progress:", " ".join(str(progress(f)) for f in files))
out("d-running:", sum(k.poll() is None for k in kids))
sync("d-open")
for k in kids: k.kill()
for k in kids: k.wait(10)
time.sleep(0.5)
out("d-after:", "ok" if all(normal(k) for k in range(4)) else "FAILED")
sync("d")
out("end")
EOF
}

t_proxy_load_and_slowloris() { # 1000 tunnels echoing 1 MiB each; 200 slowloris + 20 fast requests; stalled upstreams; killed clients; proxy fds/RSS return
	net_up
	head -c $((20 << 20)) /dev/urandom >"$T/www/big.bin" || fail "host: cannot make the 20 MiB file"
	# :8005 accepts and never reads nor answers; :8006 never completes a handshake (backlog 0, its
	# one accept-queue slot taken by a connection from itself, so further SYNs are dropped)
	ip netns exec "$NS" python3 - "$NSIP" >/dev/null 2>&1 <<'EOF' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], 8005)); s.listen(64)
held = []
while True:
    c, _ = s.accept(); held.append(c)
EOF
	ip netns exec "$NS" python3 - "$NSIP" >/dev/null 2>&1 <<'EOF' &
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], 8006)); s.listen(0)
fill = socket.create_connection((sys.argv[1], 8006), timeout=5)
time.sleep(3600)
EOF
	wait_port 8005 10 || fail "the silent upstream did not start"
	local probe
	sleep 0.3
	probe=$(python3 - "$NSIP" <<'EOF'
import socket, sys
try:
    socket.create_connection((sys.argv[1], 8006), timeout=2); print("connected")
except socket.timeout:
    print("timeout")
except OSError as e:
    print("error", e)
EOF
)
	expect_eq "$probe" timeout "control: a connection to the never-accepting upstream :8006 hangs"
	storm_py >"$P/storm.py"
	local S=$P/sync; mkdir -p "$S"
	local t0=$SECONDS timings=
	# in_net, in a subshell that execs it: $! is then timeout(1) itself, so net_up's EXIT trap
	# (kill $(jobs -p)) stops the storm (timeout passes the TERM on to sbx) if the test fails early
	( exec unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$T/hosts" \
		timeout -k 5 150 "$SBX" -c "$T/net" -- python3 storm.py "$S" >"$T/storm.out" 2>"$T/storm.err" ) &
	local bg=$! px= sbxpid= p c
	storm_wait() { # storm_wait NAME SECS: wait for the checkpoint NAME
		local i
		for ((i = 0; i < $2 * 10; i++)); do [ -e "$S/$1.done" ] && { timings+=" $1@$((SECONDS - t0))s"; return 0; }; sleep 0.1; done
		log_file storm "$T/storm.out"; log_file storm-err "$T/storm.err"
		fail "the storm did not reach checkpoint '$1' within $2 s"
	}
	fds() { ls "/proc/$px/fd" 2>/dev/null | wc -l; }
	rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$px/status"; }
	settle() { # settle LEVEL SECS: up to SECS for the fd count to come back within 4 of LEVEL; prints it
		local i n
		for ((i = 0; i < $2 * 10; i++)); do
			n=$(fds); [ "$n" -le $(($1 + 4)) ] && [ "$n" -ge $(($1 - 4)) ] && break; sleep 0.1
		done
		echo "$n"
	}
	upstream_socks() { # the proxy's host-side TCP sockets to the test host (ss), one line each
		ss -Htnpa dst "$NSIP" 2>/dev/null | grep "pid=$px," | awk '{ print $1, $5 }' | sort | uniq -c | sed 's/^ *//' | tr '\n' ';'
	}
	storm_wait ready 30
	for p in $(procs_with "-- python3 storm.py $S"); do
		[ "$(readlink "/proc/$p/exe")" = "$SBX" ] || continue
		for c in $(pgrep -P "$p"); do [ "$(cat "/proc/$c/comm" 2>/dev/null)" = bwrap ] && sbxpid=$p; done
	done
	[ -n "$sbxpid" ] || fail "cannot find the sbx process (the parent of bwrap)"
	for c in $(pgrep -P "$sbxpid"); do
		case $(cat "/proc/$c/comm" 2>/dev/null) in bwrap|sbx-observer) ;; *) px=$px${px:+ }$c ;; esac
	done
	[ -n "$px" ] && [[ $px != *" "* ]] || fail "expected exactly one child of sbx besides bwrap and the write observer (the proxy), got '$px'"
	cmp -s "/proc/$sbxpid/cmdline" "/proc/$px/cmdline" || fail "the proxy's command line differs from sbx's"
	local base base_rss open_a after_a open_b after_bc left_bc open_d after_d left_d end_rss
	base=$(fds); base_rss=$(rss_kb)
	note "sbx $sbxpid, proxy $px: baseline $base fds, RSS $base_rss kB"
	touch "$S/ready.ack"
	storm_wait a-open 45; open_a=$(fds); touch "$S/a-open.ack"
	storm_wait a 80; after_a=$(settle "$base" 5); touch "$S/a.ack"
	storm_wait b-open 20; open_b=$(fds); touch "$S/b-open.ack"
	# after (b)+(c) only a snapshot: a proxy may linger a while on half-closed connections; the
	# final count, after (d), must be back at the baseline within 15 s
	storm_wait bc 45; after_bc=$(settle "$after_a" 2); left_bc=$(upstream_socks); touch "$S/bc.ack"
	storm_wait d-open 20; open_d=$(fds); touch "$S/d-open.ack"
	storm_wait d 20; after_d=$(settle "$base" 15); left_d=$(upstream_socks); end_rss=$(rss_kb); touch "$S/d.ack"
	wait_pid "$bg" 20 || fail "the storm did not end"
	note "fds: baseline $base; 1000 tunnels open $open_a, after $after_a; slowloris open $open_b, after $after_bc; killed clients open $open_d, after $after_d"
	note "RSS: $base_rss kB -> $end_rss kB"
	note "checkpoints (since sbx started):$timings"
	log_file storm "$T/storm.out"; log_file storm-err "$T/storm.err"
	OUT=$(cat "$T/storm.out")
	[ "$WRC" = 0 ] || fail "the sandboxed storm exited $WRC: $(head -c 300 "$T/storm.err")"
	expect_not_contains "$OUT" sync-timeout "a checkpoint timed out inside"
	expect_contains "$OUT" "warm: ok" "warm-up requests"
	expect_contains "$OUT" end "the storm ran to its end"
	# every check below is made, and all that fail are reported together
	local bad= l n mx
	want() { "$@" || bad+=$'\n'"    - $WHY"; }     # want CMD... : records $WHY when CMD fails
	has() { [[ $OUT == *"$1"* ]]; }
	secs_below() { python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))' "$1" "$2"; }
	# (a)
	WHY="1000 concurrent tunnels each echoing 1 MiB: $(grep '^a: ' <<<"$OUT")"; want has "a: ok=1000 of 1000,"
	WHY="with 1000 tunnels open the proxy holds $open_a fds (baseline $base): not all concurrent"; want [ "$open_a" -ge $((base + 2000)) ]
	WHY="after the 1000 tunnels closed the proxy still holds $after_a fds (baseline $base)"; want [ "$after_a" -le $((base + 4)) ]
	# (b)
	WHY="20 normal requests next to 200 slowloris clients: $(grep '^b-normal: ' <<<"$OUT")"; want has "b-normal: ok=20 of 20,"
	mx=$(sed -n 's/^b-normal: .*max=\([0-9.]*\)s.*/\1/p' <<<"$OUT")
	WHY="a normal request took ${mx:-?}s next to 200 slowloris clients (must be < 1 s)"; want secs_below "${mx:-99}" 1.0
	WHY="the 200 slowloris connections were not all held at once ($open_b fds, baseline $base)"; want [ "$open_b" -ge $((base + 200)) ]
	WHY="the proxy must drop every slowloris client (its handshake deadline) within 15 s: $(grep '^b-loris: ' <<<"$OUT")"
	want has "b-loris: n=200 closed_by_proxy=200 still_open=0"
	# (c)
	n=0
	while read -r l; do
		n=$((n + 1))
		WHY="silent upstream: expected a 504 or the client's own timeout within 15 s: $l"
		want eval '[[ $l =~ outcome=(504|timeout)\ secs=([0-9.]+) ]] && secs_below "${BASH_REMATCH[2]}" 15.1'
	done < <(grep '^c: .*:8005 ' <<<"$OUT")
	WHY="expected 4 results for the silent upstream, got $n"; want [ "$n" = 4 ]
	n=0
	while read -r l; do
		n=$((n + 1))
		WHY="never-accepting upstream: expected the proxy's 504 within 15 s: $l"
		want eval '[[ $l =~ outcome=504\ secs=([0-9.]+) ]] && secs_below "${BASH_REMATCH[1]}" 15.1'
	done < <(grep '^c: .*:8006 ' <<<"$OUT")
	WHY="expected 2 results for the never-accepting upstream, got $n"; want [ "$n" = 2 ]
	# (d)
	WHY="not every killed client was mid-stream: $(grep '^d-progress' <<<"$OUT")"; want grep -Eq '^d-progress: ([1-9][0-9]* ){9}[1-9][0-9]*$' <<<"$OUT"
	WHY="not all 10 streaming clients were alive before the kill"; want has "d-running: 10"
	WHY="the 10 streaming clients were not all relayed at once ($open_d fds, baseline $base)"; want [ "$open_d" -ge $((base + 20)) ]
	WHY="requests after clients were killed mid-stream: $(grep '^d-after' <<<"$OUT")"; want has "d-after: ok"
	# the whole storm
	WHY="15 s after the storm ended the proxy still holds $after_d fds (baseline $base, allowed +-4); its sockets to the test host: ${left_d:-none} (right after (b)+(c): $after_bc fds, ${left_bc:-none})"
	want [ "$after_d" -le $((base + 4)) ] && [ "$after_d" -ge $((base - 4)) ]
	WHY="the proxy's RSS grew by $(( (end_rss - base_rss) >> 10 )) MiB over the storm ($base_rss -> $end_rss kB; limit 20 MiB)"
	want [ $((end_rss - base_rss)) -lt $((20 << 10)) ]
	[ -z "$bad" ] || fail "$(grep -c . <<<"${bad#$'\n'}") check(s) failed:$bad"
}

TESTS+=(proxy_load_and_slowloris)

t_proxy_decisions_reported() { # every decision reaches sbx over the report pair: -v shows each one and a summary at exit
	net_up
	local script='curl -s -m 5 http://allowed.test:8000/ >/dev/null; echo "allowed=$?"
		curl -s -m 5 -o /dev/null -w "denied=%{http_code}\n" http://denied.test:8000/
		curl -s -m 5 --socks5-hostname 127.0.0.1:1080 http://other.test:8000/; echo "socks-other=$?"
		curl -s -m 5 -p http://allowed.test:8009/; echo "refused=$?"
		curl -s -m 5 -o /dev/null -w "denied-again=%{http_code}\n" http://denied.test:8000/
		echo command-done'
	printf '$ sbx -v -c net -- sh -c %q\n' "$script"
	timeout -k 5 "$TMO" unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$T/hosts" \
		"$SBX" -v -c "$T/net" -- sh -c "$script" >"$T/.stdout" 2>"$T/.stderr"
	RC=$?; OUT=$(cat "$T/.stdout"); ERR=$(grep -v '^sbx: \(mount\|placeholder\|plan\|scan\|glob\|pin\)' "$T/.stderr")
	log_file out "$T/.stdout"; log_file err "$T/.stderr"
	expect_rc 0
	# controls: the requests themselves behaved (so the lines below describe real outcomes)
	expect_contains "$OUT" "allowed=0" "control: the allowed request"
	expect_contains "$OUT" "denied=403" "the denied request"
	expect_contains "$OUT" "socks-other=97" "SOCKS5 to a host on no list"
	expect_contains "$OUT" "refused=56" "CONNECT to a closed port (curl 56: the proxy's 502)"
	# as they happen
	expect_contains "$ERR" "sbx: proxy: allow http allowed.test:8000" "the allow, as it happened"
	expect_contains "$ERR" "sbx: proxy: deny http denied.test:8000 (denied.test is off limits)" "the deny with the policy's reason"
	expect_contains "$ERR" "sbx: proxy: deny socks5 other.test:8000 (host is not on the allow list)" "the SOCKS deny"
	expect_contains "$ERR" "sbx: proxy: fail http-connect allowed.test:8009 (the upstream refused the connection)" "a network failure is not a policy deny"
	# the summary is sbx's own, after the command: counts and the refusals once each, counted
	expect_contains "$ERR" "sbx: network: 1 allowed, 3 denied, 1 failed" "the summary's counts"
	expect_contains "$ERR" "sbx:   deny http denied.test:8000 (denied.test is off limits), 2 times" "a repeated deny is one line, counted"
	expect_contains "$ERR" "sbx:   deny socks5 other.test:8000 (host is not on the allow list)" "the SOCKS deny in the summary"
	# without -v nothing of it is printed
	sbx_net 'curl -s -m 5 -o /dev/null -w "quiet=%{http_code}\n" http://denied.test:8000/'
	expect_contains "$OUT" "quiet=403" "control: the deny without -v"
	expect_not_contains "$ERR" "network:" "no summary without -v"
}
TESTS+=(proxy_decisions_reported)

t_proxy_idle_handshakes_evicted() { # clients that connect and say nothing: past 256 the oldest are closed, so a real request still gets through at once (on macOS any local process can open them)
	command -v python3 >/dev/null || skip "python3 is not installed"
	command -v curl >/dev/null || skip "curl is not installed"
	net_up
	sbx_net 'python3 -c "
import socket, subprocess, time
idle = [socket.create_connection((\"127.0.0.1\", 3128)) for _ in range(600)]
time.sleep(0.5)
t = time.time()
code = subprocess.run([\"curl\", \"-s\", \"-m\", \"5\", \"-o\", \"/dev/null\", \"-w\", \"%{http_code}\", \"http://allowed.test:8000/\"], capture_output=True, text=True).stdout
took = time.time() - t
closed = 0
for s in idle:
    s.setblocking(False)
    try:
        closed += s.recv(1) == b\"\"
    except BlockingIOError:
        pass
    except OSError:
        closed += 1
print(\"code\", code, \"closed\", closed, \"took %.1f\" % took)
"'
	expect_rc 0
	[[ $OUT =~ code\ 200\ closed\ ([0-9]+) ]] || fail "the request got through: $OUT"
	[ "${BASH_REMATCH[1]}" -ge 300 ] || fail "the oldest silent clients were closed (at least 344 of 600): $OUT"
}
TESTS+=(proxy_idle_handshakes_evicted)

t_proxy_forward_one_request() { # plain HTTP: one request a connection, its body to its Content-Length and not a byte more; a request pipelined after it never reaches the upstream (undecided, with a Proxy-Authorization)
	command -v python3 >/dev/null || skip "python3 is not installed"
	net_up
	: >"$T/got"
	ip netns exec "$NS" python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], 7200)); s.listen(8)
while True:
    c, _ = s.accept(); c.settimeout(1); data = b""
    try:
        while True:
            d = c.recv(65536)
            if not d: break
            data += d
            if b"\r\n\r\n" in data and len(data.split(b"\r\n\r\n", 1)[1]) >= 5: break
    except OSError: pass
    time.sleep(0.3)
    try:
        c.settimeout(0.3); data += c.recv(65536)
    except OSError: pass
    open(sys.argv[2], "ab").write(data + b"\n=====\n")
    c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"); c.close()' "$NSIP" "$T/got" >/dev/null 2>&1 &
	sleep 0.5
	sbx_net 'python3 -c "
import socket
for body in (b\"\", b\"hello\"):
    s = socket.create_connection((\"127.0.0.1\", 3128))
    first = (b\"POST\" if body else b\"GET\") + b\" http://allowed.test:7200/first HTTP/1.1\r\nHost: allowed.test:7200\r\nContent-Length: %d\r\n\r\n\" % len(body) + body
    s.sendall(first + b\"GET http://allowed.test:7200/second HTTP/1.1\r\nHost: evil.example\r\nProxy-Authorization: Basic Zm9vOmJhcg==\r\n\r\n\")
    print(s.recv(65536).split(b\"\r\n\")[0].decode())
    s.close()
"'
	log_file got "$T/got"
	[ "$(grep -c "^HTTP/1.0 200" <<<"$OUT")" = 2 ] || fail "both first requests answered: $OUT"
	[ "$(grep -c "/first" "$T/got")" = 2 ] || fail "control: the upstream got both first requests"
	grep -q "^hello" "$T/got" || fail "control: the POST's body reached the upstream"
	! grep -q "second\|Proxy-Authorization\|Zm9vOmJhcg\|evil.example" "$T/got" ||
		fail "a pipelined request reached the upstream: $(cat "$T/got")"
}
TESTS+=(proxy_forward_one_request)

t_proxy_hosts_file_changes() { # the hosts file changed during a run is read by the next request: a new address is used, a removed name no longer resolves through it, and so does a change within the same second (same size, on a file system that stamps whole seconds: the settle window); control: the unchanged file serves repeated requests
	command -v curl >/dev/null || skip "curl is not installed"
	command -v nsenter >/dev/null || skip "nsenter (util-linux) is not installed"
	net_up
	local nsip2=10.200.$NET_N.3 img=$T/hostsfs.img fsd=$T/hostsfs coarse=0 pid i t0 c2 c3 hosts_a hosts_b hosts_c
	ip netns exec "$NS" ip addr add "$nsip2/24" dev "${NS}n" || fail "cannot add a second address to the test namespace"
	mkdir -p "$T/www2"; echo hello-from-second-address >"$T/www2/index.html"
	ip netns exec "$NS" python3 -m http.server 8000 --bind "$nsip2" --directory "$T/www2" >/dev/null 2>&1 &
	for i in $(seq 50); do curl -s -m 1 "http://$nsip2:8000/" | grep -q second-address && break; sleep 0.1; done
	curl -s -m 2 "http://$nsip2:8000/" | grep -q second-address || fail "the second address's server did not start"
	# A: both names on the test host; B: allowed.test moved to the second address, also.allowed.test
	# gone; C: allowed.test back, the same size as B (the two addresses are the same length)
	hosts_a=$(printf '127.0.0.1 localhost\n%s allowed.test also.allowed.test\n' "$NSIP")
	hosts_b=$(printf '127.0.0.1 localhost\n%s allowed.test\n' "$nsip2")
	hosts_c=$(printf '127.0.0.1 localhost\n%s allowed.test\n' "$NSIP")
	[ "${#hosts_b}" = "${#hosts_c}" ] || fail "B and C must be the same size"
	printf '%s\n' "$hosts_a" >"$T/hosts"
	# ext4 with 128-byte inodes stamps whole seconds: two writes of one size in one second leave
	# the same stat, which only the settle window tells apart. Where no loop device can be
	# mounted, the file stays where it is (finer stamps: the same-second step proves less).
	mkdir -p "$fsd"
	if truncate -s 8M "$img" && mkfs.ext4 -q -F -I 128 "$img" >/dev/null 2>&1 &&
		unshare -m sh -c 'mount -o loop "$1" "$2"' sh "$img" "$fsd" 2>/dev/null; then
		coarse=1
	else
		note "no loop-mounted ext4 here: the hosts file stays on $T's file system"
	fi
	# the command: a step of requests each time the driver below says go; its end is "done"
	( exec unshare -m sh -c '
		if [ "$1" = 1 ]; then mount -o loop "$2" "$3" && cp "$4" "$3/hosts" && mount --bind "$3/hosts" /etc/hosts || exit 1
		else mount --bind "$4" /etc/hosts || exit 1; fi
		shift 4; exec "$@"' sh "$coarse" "$img" "$fsd" "$T/hosts" "$SBX" -c "$T/net" -- sh -c '
		step() { : >"ready.$1"; i=0; while [ ! -e "go.$1" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done; }
		get() { curl -s -m 20 -o "body.$1" -w "%{http_code}" "http://$2:8000/" >"code.$1" 2>/dev/null; }
		step 0; get a1 allowed.test; get a2 allowed.test; get a3 also.allowed.test
		step 1; get b1 allowed.test; get b2 also.allowed.test
		step 2; get c1 allowed.test
		step 3; get d1 allowed.test
		: >done' ) >"$T/bg.out" 2>&1 &
	pid=$!
	waitfor() { for i in $(seq 600); do [ -e "$P/$1" ] && return 0; kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
		log_file bg "$T/bg.out"; fail "the sandboxed command never reached $1"; }
	# put TEXT: the hosts file rewritten in place (the inode stays: the bind follows it), as the
	# proxy sees it, from inside the sandbox's mount namespace
	put() { nsenter --mount="/proc/$pid/ns/mnt" sh -c 'printf "%s\n" "$1" >/etc/hosts' sh "$1" || fail "cannot rewrite the hosts file"; }
	ctime() { nsenter --mount="/proc/$pid/ns/mnt" stat -c %z /etc/hosts; }
	waitfor ready.0
	# A settled (its ctime 2 s old as the first request reads it): its text is kept and served again
	t0=$(nsenter --mount="/proc/$pid/ns/mnt" stat -c %Z /etc/hosts)
	sleep "$(awk -v t0="$t0" -v now="$(date +%s.%N)" 'BEGIN { d = t0 + 2.5 - now; print d > 0 ? d : 0 }')"
	: >"$P/go.0"
	waitfor ready.1
	put "$hosts_b"
	: >"$P/go.1"
	waitfor ready.2
	# C, then B again, both early in one second
	while [ "$(date +%N | cut -c1)" -gt 2 ]; do sleep 0.02; done
	put "$hosts_c"; c2=$(ctime)
	: >"$P/go.2"
	waitfor ready.3
	put "$hosts_b"; c3=$(ctime)
	: >"$P/go.3"
	waitfor done
	wait "$pid"
	note "hosts file on $( [ "$coarse" = 1 ] && echo "ext4 with whole-second stamps" || echo "$T's file system"); ctime of C $c2, of B again $c3"
	[ "${c2%%.*}" = "${c3%%.*}" ] || note "C and B were written in different seconds: the same-second step proves less this time"
	for i in a1 a2 a3 b1 b2 c1 d1; do note "$i: $(cat "$P/code.$i" 2>/dev/null) $(head -c 60 "$P/body.$i" 2>/dev/null)"; done
	for i in a1 a2 a3; do
		grep -q hello-from-test-host "$P/body.$i" 2>/dev/null || fail "control: request $i through the unchanged hosts file reached the test host"
	done
	grep -q hello-from-second-address "$P/body.b1" 2>/dev/null || fail "allowed.test moved to $nsip2 in the file: the next request still went to the old address"
	[ "$(cat "$P/code.b2")" != 200 ] && ! grep -q hello "$P/body.b2" 2>/dev/null ||
		fail "also.allowed.test was removed from the file, yet the next request reached the test host"
	grep -q hello-from-test-host "$P/body.c1" 2>/dev/null || fail "allowed.test moved back: the next request did not follow"
	grep -q hello-from-second-address "$P/body.d1" 2>/dev/null ||
		fail "allowed.test moved again within the same second, the file the same size: the next request used the old text"
}
TESTS+=(proxy_hosts_file_changes)

# heads_of REQ...: inside the sandbox, each raw request (\r\n spelled as in Python) to the proxy on
# its own connection; prints "N STATUS-LINE error=<X-Proxy-Error, or ->" for the N-th
HEADS_OF='import socket, sys
for i, r in enumerate(sys.argv[1:]):
    s = socket.create_connection(("127.0.0.1", 3128)); s.settimeout(15)
    s.sendall(r.encode().decode("unicode_escape").encode("latin-1")); d = b""
    while b"\r\n\r\n" not in d:
        x = s.recv(4096)
        if not x: break
        d += x
    lines = d.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    err = [l.split(":", 1)[1].strip() for l in lines[1:] if l.lower().startswith("x-proxy-error:")]
    print(i, lines[0], "error=" + (err[0] if err else "-")); s.close()'

t_proxy_upstream_failure_not_policy() { # an allowed host whose upstream fails (refused, a name that does not resolve, a parent that refuses) gets a plain 502: X-Proxy-Error: blocked-by-allowlist only on the policy's refusals (the control, same run: a denied host, one on no list, the address guard)
	command -v python3 >/dev/null || skip "python3 is not installed"
	net_up
	in_net_nodns "$SBX" -c "$T/net" -- python3 -c "$HEADS_OF" \
		'CONNECT allowed.test:8999 HTTP/1.1\r\nHost: allowed.test:8999\r\n\r\n' \
		'CONNECT nowhere.allowed.test:443 HTTP/1.1\r\nHost: nowhere.allowed.test:443\r\n\r\n' \
		'GET http://allowed.test:8999/ HTTP/1.1\r\nHost: allowed.test:8999\r\n\r\n' \
		'GET http://nowhere.allowed.test/ HTTP/1.1\r\nHost: nowhere.allowed.test\r\n\r\n' \
		'CONNECT denied.test:8000 HTTP/1.1\r\nHost: denied.test:8000\r\n\r\n' \
		'CONNECT other.test:8000 HTTP/1.1\r\nHost: other.test:8000\r\n\r\n' \
		'CONNECT rebind.test:8000 HTTP/1.1\r\nHost: rebind.test:8000\r\n\r\n' \
		'GET http://denied.test:8000/ HTTP/1.1\r\nHost: denied.test:8000\r\n\r\n' \
		'CONNECT allowed.test:8000 HTTP/1.1\r\nHost: allowed.test:8000\r\n\r\n' >"$T/r.out" 2>"$T/r.err"
	RC=$?; OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err")
	log_file out "$T/r.out"; log_file err "$T/r.err"
	expect_rc 0 "the probes"
	# the upstream failed: 502, and nothing says the policy refused
	expect_contains "$OUT" "0 HTTP/1.1 502 the upstream refused the connection error=-" "CONNECT to a closed port"
	expect_contains "$OUT" "1 HTTP/1.1 502 the name does not resolve error=-" "CONNECT to a name that does not resolve"
	expect_contains "$OUT" "2 HTTP/1.1 502 Bad Gateway error=-" "plain HTTP to a closed port"
	expect_contains "$OUT" "3 HTTP/1.1 502 Bad Gateway error=-" "plain HTTP to a name that does not resolve"
	# control: the policy's refusals carry the header, CONNECT and plain HTTP alike
	expect_contains "$OUT" "4 HTTP/1.1 403 denied.test is off limits error=blocked-by-allowlist" "a denied host"
	expect_contains "$OUT" "5 HTTP/1.1 403 host is not on the allow list error=blocked-by-allowlist" "a host on no list"
	expect_contains "$OUT" "6 HTTP/1.1 403 resolved to a loopback address error=blocked-by-allowlist" "the address guard"
	expect_contains "$OUT" "7 HTTP/1.1 403 Forbidden error=blocked-by-allowlist" "plain HTTP to a denied host"
	expect_contains "$OUT" "8 HTTP/1.1 200 Connection Established error=-" "an allowed host that answers"
	# a parent proxy that refuses the tunnel: the upstream's failure too
	parent_up --refuse far.test
	in_net_nodns "$SBX" -c "$T/net" --allow-domain=far.test --parent-proxy="http://$NSIP:3128" -- python3 -c "$HEADS_OF" \
		'CONNECT far.test:8000 HTTP/1.1\r\nHost: far.test:8000\r\n\r\n' >"$T/p.out" 2>"$T/p.err"
	log_file out "$T/p.out"; log_file err "$T/p.err"
	grep -q "^0 HTTP/1.1 502 the parent proxy refused the tunnel: HTTP/1.1 403 Forbidden by upstream policy error=-\$" "$T/p.out" ||
		fail "a parent's refusal is no refusal by the policy: $(cat "$T/p.out" "$T/p.err")"
}
TESTS+=(proxy_upstream_failure_not_policy)
