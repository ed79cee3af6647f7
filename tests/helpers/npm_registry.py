#!/usr/bin/env python3
"""tests/helpers/npm_registry.py: a tiny npm registry for the npm tests, run in the test network
namespace (never reachable from anywhere else).

    npm_registry.py BIND_IP PORT LOG TARBALL...

Each TARBALL is a file `npm pack` made (NAME-VERSION.tgz); its package.json gives the name and
version. The registry answers what `npm install NAME` asks for:
    GET /NAME                  the packument (JSON): the versions, each with dist.tarball,
                               dist.shasum (sha1, hex) and dist.integrity (sha512, SRI);
    GET /NAME/-/NAME-VERSION.tgz   the tarball.
dist.tarball names the host the client asked for (the request's Host header), so the same
registry serves under any name (npm.allowed.test, or far.test that only a parent proxy knows).
Anything else is a 404. Every request is one line in LOG: <METHOD> <PATH> host=<Host> <status>.
"""
import base64
import hashlib
import http.server
import json
import sys
import tarfile
import threading

bind_ip, port, log_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
packages = {}  # name -> {version: (filename, bytes, package.json)}
for path in sys.argv[4:]:
    data = open(path, "rb").read()
    with tarfile.open(path, "r:gz") as t:
        meta = json.load(t.extractfile("package/package.json"))
    fname = "%s-%s.tgz" % (meta["name"], meta["version"])
    packages.setdefault(meta["name"], {})[meta["version"]] = (fname, data, meta)
log_lock = threading.Lock()


def log(line):
    with log_lock, open(log_path, "a") as f:
        f.write(line + "\n")


def packument(name, host):
    versions = {}
    for ver, (fname, data, meta) in packages[name].items():
        v = dict(meta)
        v["_id"] = "%s@%s" % (name, ver)
        v["dist"] = {
            "tarball": "http://%s/%s/-/%s" % (host, name, fname),
            "shasum": hashlib.sha1(data).hexdigest(),
            "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
        }
        versions[ver] = v
    latest = sorted(versions, key=lambda s: [int(x) for x in s.split(".")])[-1]
    return {"_id": name, "name": name, "dist-tags": {"latest": latest}, "versions": versions}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, ctype):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        log("%s %s host=%s %d" % (self.command, self.path, self.headers.get("Host", "-"), status))

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        parts = path.strip("/").split("/")
        host = self.headers.get("Host", "%s:%d" % (bind_ip, port))
        if len(parts) == 1 and parts[0] in packages:
            body = json.dumps(packument(parts[0], host)).encode()
            return self.answer(200, body, "application/json")
        if len(parts) == 3 and parts[0] in packages and parts[1] == "-":
            for fname, data, _ in packages[parts[0]].values():
                if fname == parts[2]:
                    return self.answer(200, data, "application/octet-stream")
        self.answer(404, b'{"error":"Not found"}', "application/json")

    do_HEAD = do_GET


http.server.ThreadingHTTPServer((bind_ip, port), Handler).serve_forever()
