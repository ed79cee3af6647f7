#!/usr/bin/env python3
"""tests/helpers/upstream_proxy.py: a small upstream ("parent") HTTP proxy for the tests of
sbx's parent-proxy route, run in the test network namespace (never reachable from anywhere else).

    upstream_proxy.py BIND_IP PORT LOG [--auth USER:PASS] [--host NAME=IP ...] [--refuse NAME ...] [--unix PATH]
                      [--eager] [--log-host]

It speaks what a corporate proxy speaks: CONNECT host:port (a tunnel) and absolute-form requests
(GET http://host:port/path, sent on in origin form). Names resolve only through --host, so a
name that works proves the connection went through this proxy. Every request is one line in LOG:
    <METHOD> <TARGET> auth=<the Proxy-Authorization value, or ->
With --auth, a request without that Basic credential gets 407; a CONNECT to a --refuse name 403.
With --eager, a tunnel's "200" and the target's first bytes leave in one write (as a busy proxy's
may), so the client side must keep the order: the answer, then the bytes.
With --unix PATH it listens on a Unix stream socket at PATH instead of BIND_IP:PORT (give "-" for
both): the MITM proxy sbx's mitm-proxy route reaches (a socket sbx dials, never the sandbox).
With --log-host, each request's Host headers follow its line in LOG, one "HOST <value>" line each.
"""
import base64
import socket
import sys
import threading

bind_ip, port, log_path = sys.argv[1], sys.argv[2], sys.argv[3]
auth, hosts, refuse, eager, unix_path, log_host = None, {}, set(), False, None, False
args = sys.argv[4:]
while args:
    if args[0] == "--eager":
        eager, args = True, args[1:]
        continue
    if args[0] == "--log-host":
        log_host, args = True, args[1:]
        continue
    opt, val = args[0], args[1]
    args = args[2:]
    if opt == "--auth":
        auth = "Basic " + base64.b64encode(val.encode()).decode()
    elif opt == "--host":
        name, ip = val.split("=", 1)
        hosts[name] = ip
    elif opt == "--refuse":
        refuse.add(val)
    elif opt == "--unix":
        unix_path = val
    else:
        sys.exit("unknown option " + opt)
log_lock = threading.Lock()


def log(line):
    with log_lock, open(log_path, "a") as f:
        f.write(line + "\n")


def read_head(c):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = c.recv(65536)
        if not chunk:
            return None, b""
        data += chunk
        if len(data) > 65536:
            return None, b""
    head, rest = data.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def dial(target, default_port):
    host, _, p = target.rpartition(":") if target.count(":") == 1 else (target, "", "")
    if not host:
        host, p = target, str(default_port)
    if host not in hosts:
        raise OSError("unknown host " + host)
    return socket.create_connection((hosts[host], int(p)), timeout=5), host


def serve(c):
    with c:
        head, rest = read_head(c)
        if head is None:
            return
        lines = head.split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = [l for l in lines[1:] if l]
        got = next((l.split(":", 1)[1].strip() for l in headers if l.lower().startswith("proxy-authorization:")), "-")
        log("%s %s auth=%s" % (method, target, got))
        if log_host:
            for l in headers:
                if l.lower().startswith("host:"):
                    log("HOST " + l.split(":", 1)[1].strip())
        if auth and got != auth:
            c.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"up\"\r\n"
                      b"Content-Length: 0\r\nConnection: close\r\n\r\n")
            return
        try:
            if method == "CONNECT":
                if target.rsplit(":", 1)[0] in refuse:
                    c.sendall(b"HTTP/1.1 403 Forbidden by upstream policy\r\nContent-Length: 0\r\n\r\n")
                    return
                u, _ = dial(target, 443)
                first = b""
                if eager:
                    u.settimeout(1)
                    try:
                        first = u.recv(65536)
                    except OSError:
                        pass
                    u.settimeout(None)
                c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n" + first)
                if rest:
                    u.sendall(rest)
            else:
                assert target.startswith("http://")
                hostport, _, path = target[7:].partition("/")
                u, host = dial(hostport, 80)
                keep = [l for l in headers if not l.lower().startswith(("proxy-", "connection:"))]
                u.sendall(("%s /%s HTTP/1.1\r\n%s\r\nConnection: close\r\n\r\n" % (method, path, "\r\n".join(keep))).encode("latin-1") + rest)
        except OSError as e:
            c.sendall(("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nX-Why: %s\r\n\r\n" % e).encode())
            return
        with u:
            t = threading.Thread(target=pipe, args=(c, u), daemon=True)
            t.start()
            pipe(u, c)
            t.join(5)


if unix_path:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(unix_path)
else:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((bind_ip, int(port)))
s.listen(64)
while True:
    conn, _ = s.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
