#!/usr/bin/env python3
"""seatbelt_oracle.py: sbx's Seatbelt profile against srt's, case by case.

Usage: seatbelt_oracle.py [-v] [CASE-SUBSTRING...]
  SBX       the sbx to ask (`SBX --settings=FILE --print=seatbelt -- true`); default ./sbx-macsim,
            the build a Mac runs (-DSBX_FORCE_MACOS)
  SRT_PKG   srt's package directory (default: npm's global one), read by srt_profile.mjs

For each case below it makes a scratch project ($P), home ($H) and outside directory ($O) as
the case says, writes the settings file, and builds both profiles there: srt's with srt's own
code (tests/srt_profile.mjs: srt 0.0.81 loaded in node with the platform set to darwin) and
sbx's. tests/sbpl_eval.py then decides read, stat, write, create and unlink (and the Unix-socket
operations) for every probe path under each, paths made after the start included: Seatbelt
matches names at each access, so a probe need not exist.

It fails when sbx allows what srt denies, unless docs/MACOS.md's table "Differences the oracle
accepts" names that case, operation and path with its reason; and when sbx refuses what a case
says a command needs there (its `must` list: srt's default write paths, a directory's stat
under a read deny, an allowed socket's bind, an allow-read inside a deny-read glob). It also
fails when srt's code
cannot be loaded (never a pass without the oracle), when either profile does not parse, when
sbx refuses a case srt takes, and when an accepted-difference row matches nothing (a stale row
would hide the next regression). Where sbx is stricter it says so with -v; that is not a failure.
"""
import fnmatch
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import sbpl_eval  # noqa: E402

FILE_OPS = ["read", "stat", "write", "create", "unlink"]
SOCK_OPS = ["socket-unix", "bind-unix", "connect-unix"]

# Probe paths, relative to $P, $H, $O or absolute. A trailing / marks a directory
# (probed as vnode-type DIRECTORY too). None of them needs to exist.
PROBES = [
    "$P/", "$P/file.txt", "$P/src/", "$P/src/main.c", "$P/src/new.pem", "$P/x.pem", "$P/.env",
    "$P/sub/.env", "$P/a.env", "$P/.git/", "$P/.git/hooks/", "$P/.git/hooks/pre-commit",
    "$P/.git/config", "$P/.git/HEAD", "$P/.git/objects/ab/cdef", "$P/.git/info/attributes",
    "$P/newsub/.git/", "$P/newsub/.git/hooks/post-checkout", "$P/newsub/.git/config",
    "$P/sub/.vscode/settings.json", "$P/.vscode/", "$P/.vscode/settings.json", "$P/x/.bashrc",
    "$P/.bashrc", "$P/.zshrc", "$P/.profile", "$P/.bash_profile", "$P/.zprofile",
    "$P/.gitconfig", "$P/.gitmodules", "$P/.ripgreprc", "$P/.mcp.json", "$P/.idea/workspace.xml",
    "$P/.claude/", "$P/.claude/commands/c.md", "$P/.claude/agents/a.md",
    "$P/.claude/settings.json", "$P/sub/.claude/commands/c.md", "$P/a/b/c/d/e/.vscode/",
    "$P/a/b/c/d/e/.vscode/tasks.json", "$P/a/b/c/d/e/f/.git/hooks/pre-push", "$P/ro/", "$P/ro/f",
    "$P/secrets/", "$P/secrets/k", "$P/node_modules/x/index.js", "$P/build/out.o",
    "$P/dir with space/a.key", "$P/s.sock", "$P/a[b]/ro/f", "$P/ab/ro/f",
    "$H/", "$H/.ssh/", "$H/.ssh/id_rsa", "$H/.ssh/newkey", "$H/.ssh/sub/k", "$H/.aws/credentials",
    "$H/.aws/config", "$H/.bashrc", "$H/.gitconfig", "$H/.npm/_logs/x.log",
    "$H/.claude/debug/d.txt", "$H/work/", "$H/work/f", "$H/work/.git/hooks/pre-commit",
    "$H/notes.txt", "$H/.config/x", "$H/docs/a.env",
    "$O/", "$O/f", "$O/w/", "$O/w/f", "$O/pub/", "$O/pub/f", "$O/sock", "$O/sub/sock",
    "/etc/passwd", "/tmp/x", "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/ttys001",
    "/dev/dtracehelper", "/dev/autofs_nowait", "/usr/bin/env", "/",
]
SOCK_PROBES = ["$O/sock", "$O/sub/sock", "$P/s.sock", "$H/.ssh/agent.sock"]

NET0 = {"allowedDomains": [], "deniedDomains": []}
FS0 = {"denyRead": [], "allowRead": [], "allowWrite": [], "denyWrite": []}


def case(name, fs=None, net=None, disk=(), cwd="$P", must=(), **top):
    """must: (op, path) sbx has to allow, what a real command needs there (srt allows it)."""
    s = {"network": dict(NET0, **(net or {})), "filesystem": dict(FS0, **(fs or {}))}
    s.update(top)
    return {"name": name, "settings": s, "disk": list(disk), "cwd": cwd, "must": list(must)}


GIT = ["$P/.git/hooks/", "$P/.git/config=[core]\n", "$P/.git/HEAD=ref: refs/heads/main\n"]
CASES = [
    case("default", must=[("write", "/dev/stdout"), ("write", "/dev/stderr"),
                          ("write", "/dev/dtracehelper"), ("create", "$H/.npm/_logs/x.log"),
                          ("create", "$H/.claude/debug/d.txt")]),
    case("write_root_project", {"allowWrite": ["."]},
         must=[("write", "$P/src/main.c"), ("create", "$P/build/out.o"), ("unlink", "$P/x.pem")]),
    case("write_roots_two", {"allowWrite": [".", "$O/w"]}, disk=["$O/w/"]),
    case("deny_write_inside_root", {"allowWrite": ["."], "denyWrite": ["./ro"]}, disk=["$P/ro/"]),
    case("deny_read_home_allow_project",
         {"denyRead": ["~"], "allowRead": ["."], "allowWrite": ["."]},
         must=[("stat", "$H/"), ("read", "$P/file.txt"), ("write", "$P/file.txt")]),
    case("deny_read_file", {"denyRead": ["~/.aws/credentials"]},
         disk=["$H/.aws/credentials=k\n"]),
    case("deny_read_dir_allow_subdir", {"denyRead": ["$O"], "allowRead": ["$O/pub"]},
         disk=["$O/pub/"]),
    case("deny_read_inside_root", {"denyRead": ["./secrets"], "allowWrite": ["."]},
         disk=["$P/secrets/k=x"]),
    case("glob_deny_write_pem", {"allowWrite": ["."], "denyWrite": ["**/*.pem"]},
         disk=["$P/old.pem=x"]),
    case("glob_deny_write_pem_none_yet", {"allowWrite": ["."], "denyWrite": ["**/*.pem"]}),
    case("glob_deny_read_ssh", {"denyRead": ["~/.ssh/*"]}, disk=["$H/.ssh/id_rsa=k"]),
    case("glob_deny_read_allow_inside", {"denyRead": ["~/.ssh/*"],
                                         "allowRead": ["~/.ssh/known_hosts"]},
         disk=["$H/.ssh/id_rsa=k", "$H/.ssh/known_hosts=h"],
         must=[("read", "$H/.ssh/known_hosts")]),
    case("glob_deny_read_env", {"denyRead": ["**/*.env"], "allowWrite": ["."]},
         disk=["$P/sub/.env=x"]),
    case("glob_deny_read_home_env", {"denyRead": ["~/**/*.env"], "allowWrite": ["."]}),
    case("mandatory_no_git", {"allowWrite": ["."]}),
    case("mandatory_with_git", {"allowWrite": ["."]}, disk=GIT),
    case("mandatory_at_depth", {"allowWrite": ["."]},
         disk=["$P/a/b/c/d/e/.vscode/tasks.json={}", "$P/a/b/c/d/e/f/.git/hooks/"]),
    case("mandatory_home_root", {"allowWrite": ["~"]}, cwd="$H"),
    case("missing_deny_read", {"denyRead": ["~/.ssh"]}),
    case("missing_deny_write", {"allowWrite": ["."], "denyWrite": ["./secrets"]}),
    case("missing_allow_write", {"allowWrite": ["./build", "$O/w"]}),
    case("unix_sockets", net={"allowUnixSockets": ["$O/sock"]},
         must=[("bind-unix", "$O/sock"), ("connect-unix", "$O/sock")]),
    case("all_unix_sockets", net={"allowAllUnixSockets": True}),
    case("local_binding", net={"allowLocalBinding": True}),
    case("pty", {"allowWrite": ["."]}, allowPty=True, must=[("write", "/dev/ttys001")]),
    case("credentials", {"allowWrite": ["."]},
         credentials={"files": [{"path": "~/.aws/credentials", "mode": "deny"}]},
         disk=["$H/.aws/credentials=k\n"]),
    case("write_root_in_denied_area", {"denyRead": ["~"], "allowWrite": ["~/work"]},
         disk=["$H/work/"], cwd="$H/work"),
    case("write_root_home_deny_config", {"allowWrite": ["~"], "denyWrite": ["~/.config"]}),
    case("allow_git_config", {"allowWrite": ["."]}, disk=GIT,
         **{"filesystem_allowGitConfig": True}),
    case("hostile_project_name", {"allowWrite": ["."], "denyWrite": ["./ro"]},
         disk=["$P/ro/"], cwd="$P/a[b]*?(x) \"q\"\\z"),
    case("hostile_glob_spaces", {"allowWrite": ["."], "denyWrite": ["./dir with space/*.key"]}),
    case("hostile_deny_bracket_name", {"allowWrite": ["."], "denyWrite": ["./a[b]/ro"]},
         disk=["$P/a[b]/ro/", "$P/ab/ro/"]),
    case("network_proxy", {"allowWrite": ["."]}, net={"allowedDomains": ["example.com"]}),
]
for c in CASES:  # allowGitConfig lives in filesystem: spelt apart above to keep case() short
    if c["settings"].pop("filesystem_allowGitConfig", None):
        c["settings"]["filesystem"]["allowGitConfig"] = True


def expand(s, P, H, O):
    return s.replace("$P", P).replace("$H", H).replace("$O", O)


def expand_all(v, P, H, O):
    if isinstance(v, dict):
        return {k: expand_all(x, P, H, O) for k, x in v.items()}
    if isinstance(v, list):
        return [expand_all(x, P, H, O) for x in v]
    return expand(v, P, H, O) if isinstance(v, str) else v


def make_disk(entries, P, H, O):
    for e in entries:
        path, eq, data = expand(e, P, H, O).partition("=")
        if path.endswith("/"):
            os.makedirs(path, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(data)


def accepted_rows():
    """docs/MACOS.md's rows: | case | op | path | reason |, between the two markers."""
    doc = os.path.join(ROOT, "docs", "MACOS.md")
    rows, inside = [], False
    with open(doc, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if "<!-- oracle-accepts:begin -->" in line:
                inside = True
            elif "<!-- oracle-accepts:end -->" in line:
                inside = False
            elif inside and line.startswith("|") and not line.startswith("|--") \
                    and not line.startswith("| case "):
                cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
                if len(cells) != 4 or not cells[3]:
                    raise SystemExit("docs/MACOS.md:%d: a row needs case | op | path | reason" % n)
                rows.append({"case": cells[0], "op": cells[1], "path": cells[2],
                             "reason": cells[3], "line": n, "used": 0})
    return rows


def srt_profile(settings_file, cwd, env):
    r = subprocess.run(["node", os.path.join(HERE, "srt_profile.mjs"), settings_file], cwd=cwd,
                       env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("srt's generator: %s" % (r.stderr.strip() or "exit %d" % r.returncode))
    words = shlex.split(r.stdout)
    i = words.index("/usr/bin/sandbox-exec")
    return words[i + 2]


def sbx_profile(sbx, settings_file, cwd, env):
    r = subprocess.run([sbx, "--settings=" + settings_file, "--print=seatbelt", "--", "true"],
                       cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("sbx --print=seatbelt: exit %d: %s" % (r.returncode, r.stderr.strip()))
    return r.stdout


def run_case(c, sbx, rows, verbose, scratch):
    base = tempfile.mkdtemp(prefix=c["name"] + ".", dir=scratch)
    P, H, O = base + "/proj", base + "/home", base + "/out"
    cwd = expand(c["cwd"], P, H, O)
    P = cwd if c["cwd"].startswith("$P") else P
    for d in (P, H, O):
        os.makedirs(d, exist_ok=True)
    make_disk(c["disk"], P, H, O)
    sfile = base + "/settings.json"
    with open(sfile, "w") as f:
        json.dump(expand_all(c["settings"], P, H, O), f)
    env = dict(os.environ, HOME=H)
    for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        env.pop(k, None)
    srt_text = srt_profile(sfile, cwd, env)
    sbx_text = sbx_profile(sbx, sfile, cwd, env)
    with open(base + "/srt.sb", "w") as f:
        f.write(srt_text)
    with open(base + "/sbx.sb", "w") as f:
        f.write(sbx_text)
    srt, mine = sbpl_eval.Profile(srt_text), sbpl_eval.Profile(sbx_text)
    looser, stricter, untagged, n = [], [], [], 0
    probes = [(op, p) for p in PROBES for op in FILE_OPS] + \
        [(op, p) for p in SOCK_PROBES for op in SOCK_OPS]
    for op, spelt in probes:
        path = expand(spelt, P, H, O)
        vtype = "DIRECTORY" if path.endswith("/") and path != "/" or path == "/" else "REGULAR-FILE"
        path = path.rstrip("/") or "/"
        a_srt, _ = srt.decide(op, path, vtype)
        a_sbx, msg = mine.decide(op, path, vtype)
        n += 1
        if not a_sbx and msg is None:
            untagged.append((op, path))
        if a_sbx and not a_srt:
            rel = path.replace(P, "$P").replace(H, "$H").replace(O, "$O")
            hit = [r for r in rows if fnmatch.fnmatchcase(c["name"], r["case"]) and
                   fnmatch.fnmatchcase(op, r["op"]) and fnmatch.fnmatchcase(rel, r["path"])]
            for r in hit:
                r["used"] += 1
            looser.append((op, rel, hit[0] if hit else None))
        elif a_srt and not a_sbx:
            stricter.append((op, path.replace(P, "$P").replace(H, "$H").replace(O, "$O")))
    refused = []
    for op, spelt in c["must"]:
        path = expand(spelt, P, H, O)
        vtype = "DIRECTORY" if path.endswith("/") else "REGULAR-FILE"
        if not mine.decide(op, path.rstrip("/") or "/", vtype)[0]:
            refused.append((op, spelt))
    return {"n": n, "looser": looser, "stricter": stricter, "untagged": untagged, "dir": base,
            "refused": refused}


def main(argv):
    verbose = "-v" in argv
    want = [a for a in argv[1:] if a != "-v"]
    sbx = os.path.abspath(os.environ.get("SBX") or os.path.join(ROOT, "sbx-macsim"))
    rows = accepted_rows()
    scratch = tempfile.mkdtemp(prefix="sbx-oracle.")
    failed = 0
    cases = [c for c in CASES if not want or any(w in c["name"] for w in want)]
    for c in cases:
        try:
            r = run_case(c, sbx, rows, verbose, scratch)
        except (RuntimeError, OSError, sbpl_eval.SbplError, ValueError,
                subprocess.TimeoutExpired) as e:
            print("FAIL %s: %s" % (c["name"], e))
            failed += 1
            continue
        bad = [x for x in r["looser"] if x[2] is None]
        ok_diff = [x for x in r["looser"] if x[2] is not None]
        status = "FAIL" if bad or r["untagged"] or r["refused"] else "ok  "
        print("%s %s: %d decisions, %d looser than srt (%d accepted), %d stricter, %d untagged"
              % (status, c["name"], r["n"], len(r["looser"]), len(ok_diff), len(r["stricter"]),
                 len(r["untagged"])))
        for op, rel, _ in bad:
            print("    sbx allows, srt denies: %s %s" % (op, rel))
        for op, path in r["untagged"]:
            print("    sbx denies without (with message TAG): %s %s" % (op, path))
        for op, path in r["refused"]:
            print("    sbx refuses what a command needs (and srt allows): %s %s" % (op, path))
        if verbose:
            for op, rel, row in ok_diff:
                print("    accepted (docs/MACOS.md:%d): %s %s" % (row["line"], op, rel))
            for op, rel in r["stricter"]:
                print("    sbx stricter: %s %s" % (op, rel))
        if bad or r["untagged"] or r["refused"]:
            failed += 1
            print("    profiles: %s/srt.sb %s/sbx.sb" % (r["dir"], r["dir"]))
    if not want:
        for r in rows:
            if not r["used"]:
                print("FAIL docs/MACOS.md:%d: an accepted difference no case shows (stale): "
                      "%s %s %s" % (r["line"], r["case"], r["op"], r["path"]))
                failed += 1
    print("%d cases, %d failed" % (len(cases), failed))
    if not failed:
        shutil.rmtree(scratch, ignore_errors=True)  # kept on a failure: the profiles named above
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
