#!/usr/bin/env python3
"""sbpl_eval.py: decide file operations under a Seatbelt profile (SBPL), as macOS would.

Usage:
  sbpl_eval.py PROFILE [PATH[:TYPE]...]   print "OP PATH allow|deny" for each probe and op
  (as a module) Profile(text).decide(op, path, vtype) -> (allowed, tagged)

What it knows of SBPL, and no more (docs/MACOS.md, "The oracle"):
  - rules are (allow|deny OPERATION... FILTER... [(with message S)]), read in order;
    for an operation on a path the LAST rule that matches decides; (deny default) first;
  - an operation matches its own name, NAME* matches every operation starting with NAME
    (file-write* covers file-write-create, -unlink, -data...), default matches all;
  - a rule with no path filter matches every path; with several, any one (they are or'ed);
  - filters: (literal S), (subpath S) (S and everything below), (prefix S), (regex S),
    (path-regex S), (require-all F...), (require-any F...), (require-not F),
    (vnode-type T) (the probe's type: DIRECTORY, REGULAR-FILE, CHARACTER-DEVICE...);
  - strings "..." with \\ escapes and #"..." raw regex strings; ; comments;
  - a regex is searched (anchors are the pattern's own), POSIX extended, which the
    patterns both generators write read the same in Python's re.
  - Unix sockets: socket(AF_UNIX) (system-socket, socket-domain), bind (network-bind,
    (local unix-socket F)) and connect (network-outbound, (remote unix-socket F));
    an IP filter never matches these probes.
A filter the evaluator does not know (in a file, network or system-socket rule) is an
error: it never guesses. Rules for other operations (mach, sysctl, iokit) are skipped.
"""
import re
import sys

FILE_OPS = {
    "read": "file-read-data",
    "stat": "file-read-metadata",
    "write": "file-write-data",
    "create": "file-write-create",
    "unlink": "file-write-unlink",
}
# Unix-socket probes: the operation, and the side of the socket the path is on.
SOCKET_OPS = {
    "socket-unix": ("system-socket", "socket"),
    "bind-unix": ("network-bind", "local-unix"),
    "connect-unix": ("network-outbound", "remote-unix"),
}


class SbplError(Exception):
    pass


def tokenize(text):
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif c == ";":
            while i < n and text[i] != "\n":
                i += 1
        elif c in "()":
            yield c
            i += 1
        elif c == '"' or text.startswith('#"', i):
            raw = c == "#"
            i += 2 if raw else 1
            out = []
            while True:
                if i >= n:
                    raise SbplError("unterminated string")
                c = text[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\" and i + 1 < n:
                    if raw:  # a raw string keeps the backslash; \" does not end it
                        out.append(c + text[i + 1])
                    else:
                        out.append(text[i + 1])
                    i += 2
                    continue
                out.append(c)
                i += 1
            yield ("str", "".join(out))
        else:
            j = i
            while j < n and text[j] not in " \t\r\n();\"":
                j += 1
            yield ("sym", text[i:j])
            i = j


def parse(text):
    stack, top = [], []
    cur = top
    for t in tokenize(text):
        if t == "(":
            stack.append(cur)
            cur = []
        elif t == ")":
            if not stack:
                raise SbplError("unbalanced )")
            done, cur = cur, stack.pop()
            cur.append(done)
        else:
            cur.append(t)
    if stack:
        raise SbplError("unbalanced (")
    return top


def sym(x):
    return x[1] if isinstance(x, tuple) and x[0] == "sym" else None


def string(x):
    if not (isinstance(x, tuple) and x[0] == "str"):
        raise SbplError("expected a string, got %r" % (x,))
    return x[1]


PATH_FILTERS = {"literal", "subpath", "prefix", "regex", "path-regex", "require-all",
                "require-any", "require-not", "vnode-type"}
RULE_KINDS = ("default", "file-read", "file-write", "network", "system-socket")


class Rule:
    def __init__(self, action, ops, filters, message, line):
        self.action, self.ops, self.filters, self.message = action, ops, filters, message
        self.text = line

    def op_matches(self, op):
        for o in self.ops:
            if o == "default" or o == op or (o.endswith("*") and op.startswith(o[:-1])):
                return True
        return False


def compile_filter(f):
    if not isinstance(f, list) or not f or sym(f[0]) is None:
        raise SbplError("bad filter %r" % (f,))
    kind = sym(f[0])
    if kind == "literal":
        s = string(f[1])
        return lambda p, t, k: p == s
    if kind == "subpath":
        s = string(f[1]).rstrip("/") or "/"
        return lambda p, t, k: p == s or p.startswith(s + "/") or s == "/"
    if kind == "prefix":
        s = string(f[1])
        return lambda p, t, k: p.startswith(s)
    if kind in ("regex", "path-regex"):
        try:
            r = re.compile(string(f[1]))
        except re.error as e:
            raise SbplError("regex %r: %s" % (string(f[1]), e))
        return lambda p, t, k: r.search(p) is not None
    if kind == "vnode-type":
        want = sym(f[1])
        return lambda p, t, k: t == want
    if kind in ("local", "remote"):  # (local unix-socket F), (remote ip "localhost:N")
        side = kind + ("-unix" if sym(f[1]) == "unix-socket" else "-ip")
        if side.endswith("-ip"):
            return lambda p, t, k: False  # no IP probes: an IP rule never matches a path
        inner = compile_filter(f[2])
        return lambda p, t, k: k == side and inner(p, t, k)
    if kind == "socket-domain":
        dom = sym(f[1])
        return lambda p, t, k: k == "socket" and dom == "AF_UNIX"
    if kind == "socket-protocol":
        return lambda p, t, k: False  # the probe's protocol is 0
    subs = [compile_filter(x) for x in f[1:]]
    if kind == "require-all":
        return lambda p, t, k: all(s(p, t, k) for s in subs)
    if kind == "require-any":
        return lambda p, t, k: any(s(p, t, k) for s in subs)
    if kind == "require-not":
        if len(subs) != 1:
            raise SbplError("require-not takes one filter")
        return lambda p, t, k: not subs[0](p, t, k)
    raise SbplError("unknown filter %s" % kind)


class Profile:
    def __init__(self, text):
        self.rules = []
        for form in parse(text):
            if not isinstance(form, list) or not form:
                raise SbplError("not a form: %r" % (form,))
            head = sym(form[0])
            if head == "version":
                continue
            if head not in ("allow", "deny"):
                raise SbplError("unknown form %s" % head)
            ops, filters, message, file_rule = [], [], None, False
            for x in form[1:]:
                if sym(x) is not None:
                    ops.append(sym(x))
                    continue
                if isinstance(x, list) and x and sym(x[0]) == "with":
                    if sym(x[1]) == "message":
                        message = string(x[2])
                    continue
                filters.append(x)
            file_rule = any(o.startswith(RULE_KINDS) for o in ops)
            if file_rule:
                compiled = [compile_filter(f) for f in filters]
            else:
                compiled = None
            self.rules.append(Rule(head, ops, compiled, message, form))

    def decide(self, op, path, vtype="REGULAR-FILE"):
        """(allowed, message of the deciding rule) for op (FILE_OPS, SOCKET_OPS) on path."""
        sbop, kind = SOCKET_OPS.get(op, (FILE_OPS.get(op, op), "file"))
        verdict = None
        for r in self.rules:
            if r.filters is None or not r.op_matches(sbop):
                continue
            if r.filters and not any(f(path, vtype, kind) for f in r.filters):
                continue
            verdict = r
        if verdict is None:
            return (True, None)  # no (deny default): everything is allowed
        return (verdict.action == "allow", verdict.message)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 64
    prof = Profile(open(argv[1], encoding="utf-8").read())
    for probe in argv[2:]:
        path, _, vtype = probe.partition(":")
        for op in FILE_OPS:
            ok, msg = prof.decide(op, path, vtype or "REGULAR-FILE")
            print("%s %s %s%s" % (op, path, "allow" if ok else "deny",
                                  "" if ok or msg else " (untagged)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
