#!/usr/bin/env bash
# tests/macos-check.sh (`make macos-check`): what only a Mac can settle about sbx's Seatbelt
# profile, each probe one sandbox-exec run, printed as a table (docs/MACOS.md, "What only a
# Mac can settle"). It changes nothing outside a scratch directory and exits 0 when every
# probe ran, whatever each found; 1 when one could not run. Elsewhere it says it needs macOS
# and exits 1 without running anything.
set -u
if [ "$(uname -s)" != Darwin ]; then
	echo "make macos-check needs macOS (sandbox-exec, log, APFS); this is $(uname -s):" \
		"nothing run" >&2
	exit 1
fi
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
for t in sandbox-exec log python3; do
	command -v "$t" >/dev/null || { echo "macos-check: $t is not installed" >&2; exit 1; }
done
make -s sbx >/dev/null || { echo "macos-check: make sbx failed" >&2; exit 1; }
D=$(mktemp -d "${TMPDIR:-/tmp}/sbx-macos-check.XXXXXX") || exit 1
trap 'rm -rf "$D"' EXIT
R=$(cd "$D" && pwd -P)	# /private/var/folders/...: the name Seatbelt compares
TAG=CMD64_bWFjb3MtY2hlY2s=_END__sbxcheck_SBX
OPEN='(version 1)(allow default)'	# every probe but the tag's: all allowed but its rule
ran=0 broken=0
row() { printf '%-60s %-11s %s\n' "$1" "$2" "$3"; }
sx() { sandbox-exec -p "$1" "${@:2}" >/dev/null 2>&1; }
listen() { # listen FAMILY ADDRESS [PORT]: a listener for one connection, in the background
	python3 -c 'import socket, sys
f = socket.AF_UNIX if sys.argv[1] == "unix" else socket.AF_INET6
s = socket.socket(f)
s.bind(sys.argv[2] if f == socket.AF_UNIX else (sys.argv[2], int(sys.argv[3])))
s.listen(1); s.settimeout(8); s.accept()' "$@" &
	lp=$!
	sleep 0.5
}
row "question" "answer" "what it means for the profile"

# 1. sbx's own profile, as a run renders it, accepted and applied
mkdir -p "$D/proj"
if (cd "$D/proj" && "$ROOT/sbx" --print=seatbelt -- true >"$D/sbx.sb" 2>"$D/sbx.err"); then
	if sandbox-exec -f "$D/sbx.sb" /usr/bin/true 2>"$D/se.err"; then
		row "sandbox-exec accepts sbx's profile" yes "the rules as patterns compile"
	else
		row "sandbox-exec accepts sbx's profile" NO "$(head -c 200 "$D/se.err")"
	fi
	ran=$((ran + 1))
else
	row "sandbox-exec accepts sbx's profile" "not run" "$(head -c 200 "$D/sbx.err")"
	broken=1
fi

# 2. a later (allow file-write*) after an earlier (deny file-write-unlink)
mkdir -p "$D/u" && touch "$D/u/f"
sx "$OPEN(deny file-write-unlink (subpath \"$R/u\"))(allow file-write* (subpath \"$R/u\"))" \
	rm "$R/u/f"
if [ -e "$D/u/f" ]; then
	row "a later (allow file-write*) overrides (deny file-write-unlink)" no \
		"an operation's own deny outlives a later wildcard allow"
else
	row "a later (allow file-write*) overrides (deny file-write-unlink)" yes \
		"the last match wins across the wildcard"
fi
ran=$((ran + 1))

# 3. a deny without a message: is its refusal logged with the (deny default) message?
mkdir -p "$D/m"
start=$(date '+%Y-%m-%d %H:%M:%S')
p="(version 1)(deny default (with message \"$TAG\"))"
p+="(allow process* signal sysctl* mach* ipc* iokit* system-socket file-read* file-ioctl)"
p+="(allow file-write* (subpath \"$R/m\"))(deny file-write* (subpath \"$R/m/no\"))"
sx "$p" /bin/sh -c "echo x >'$R/m/no'"
sleep 2
if log show --start "$start" --predicate "eventMessage CONTAINS \"$R/m/no\"" \
	--style compact 2>/dev/null | grep -q "$TAG"; then
	row "a deny without (with message) is logged with the tag" yes \
		"tagging every deny is belt and braces"
else
	row "a deny without (with message) is logged with the tag" no \
		"every deny must carry the tag (sbx's do)"
fi
ran=$((ran + 1))

# 4. the name Seatbelt checks for /dev/stdout
if sx "$OPEN(deny file-write* (literal \"/dev/stdout\"))" /bin/sh -c 'echo x >/dev/stdout'; then
	row "the path Seatbelt checks for a write to /dev/stdout" other \
		"(literal \"/dev/stdout\") does not decide it: allow the name it is"
else
	row "the path Seatbelt checks for a write to /dev/stdout" /dev/stdout \
		"srt's and sbx's /dev/stdout rule applies"
fi
ran=$((ran + 1))

# 5. case-insensitive APFS: which name does a regex see for .GIT/HOOKS?
mkdir -p "$D/c/.git/hooks"
sx "$OPEN(deny file-write* (regex \"^$R/c/\\\\.git/hooks(/.*)?\$\"))" \
	/bin/sh -c "echo x >'$R/c/.GIT/HOOKS/pre-commit'"
if [ -e "$D/c/.git/hooks/pre-commit" ]; then
	row "a regex sees .GIT/HOOKS as spelled or as on disk" spelled \
		"case-sensitive patterns miss it: sbx's match either case"
else
	row "a regex sees .GIT/HOOKS as spelled or as on disk" "on disk" \
		"either-case patterns cost nothing more"
fi
ran=$((ran + 1))

# 6. (remote ip "localhost:PORT") and ::1
port=$(python3 -c 'import socket
s = socket.socket(socket.AF_INET6); s.bind(("::1", 0)); print(s.getsockname()[1])')
listen inet6 ::1 "$port"
p="$OPEN(deny network-outbound (remote ip \"*:*\"))"
p+="(allow network-outbound (remote ip \"localhost:$port\"))"
if sx "$p" python3 -c 'import socket, sys
socket.create_connection(("::1", int(sys.argv[1])), timeout=3)' "$port"; then
	row "(remote ip \"localhost:PORT\") matches ::1" yes "IPv6 loopback clients reach the proxy"
else
	row "(remote ip \"localhost:PORT\") matches ::1" no \
		"IPv6 clients need 127.0.0.1 (NO_PROXY, preferIPv4Stack)"
fi
kill "$lp" 2>/dev/null; wait "$lp" 2>/dev/null
ran=$((ran + 1))

# 7. a socket under /var (/private/var on disk): which spelling does (subpath) need?
spelled=$D	# mktemp's name through $TMPDIR: /var/folders/..., /var a link to /private/var
listen unix "$R/s.sock"
p="$OPEN(deny network-outbound (remote unix-socket (path-regex #\"^/\")))"
p+="(allow network-outbound (remote unix-socket (subpath \"$spelled\")))"
if sx "$p" python3 -c 'import socket, sys
socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$spelled/s.sock"; then
	row "a Unix socket rule matches /var as spelled or resolved" spelled \
		"either spelling is matched"
else
	row "a Unix socket rule matches /var as spelled or resolved" resolved \
		"allow-unix-socket must name /private/var/... (the real path)"
fi
kill "$lp" 2>/dev/null; wait "$lp" 2>/dev/null
ran=$((ran + 1))

# 8. a rule and a path through a symlink: the name as spelled, or the file it reaches?
mkdir -p "$D/t" && ln -s t "$D/l"
sx "$OPEN(deny file-write* (subpath \"$R/t\"))" /bin/sh -c "echo x >'$R/l/x'"
if [ -e "$D/t/x" ]; then
	row "a path through a symlink is matched as spelled or resolved" spelled \
		"a link made in a root carries writes past the patterns: a hole"
else
	row "a path through a symlink is matched as spelled or resolved" resolved \
		"a link cannot carry a write past a deny"
fi
ran=$((ran + 1))

# 9. a hard link to a protected file, written through its other name
touch "$D/t/f"
sx "$OPEN(deny file-write* (subpath \"$R/t\"))" /bin/sh -c "ln '$R/t/f' '$R/h' && echo x >'$R/h'"
if [ -s "$D/t/f" ]; then
	row "a protected file can be written through a hard link to it" yes \
		"a hole: hard links into protected paths need a rule"
else
	row "a protected file can be written through a hard link to it" no \
		"the link or the write is refused"
fi
ran=$((ran + 1))

echo "$ran probes run"
exit "$broken"
