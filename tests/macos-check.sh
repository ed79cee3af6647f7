#!/usr/bin/env bash
# tests/macos-check.sh (`make macos-check`): what only a Mac can settle about sbx's Seatbelt
# profile, each probe one sandbox-exec run, printed as a table (docs/MACOS.md, "What only a
# Mac can settle"). It changes nothing outside a scratch directory and exits 0 when every
# probe ran, whatever each found; 1 when one could not run. Elsewhere it says it needs macOS
# and exits 1 without running anything.
set -u
if [ "$(uname -s)" != Darwin ]; then
	echo "make macos-check needs macOS (sandbox-exec, log, APFS); this is $(uname -s): nothing run" >&2
	exit 1
fi
cd "$(dirname "$0")/.." || exit 1
for t in sandbox-exec log python3; do
	command -v "$t" >/dev/null || { echo "macos-check: $t is not installed" >&2; exit 1; }
done
make -s sbx >/dev/null || { echo "macos-check: make sbx failed" >&2; exit 1; }
D=$(mktemp -d "${TMPDIR:-/tmp}/sbx-macos-check.XXXXXX") || exit 1
trap 'rm -rf "$D"' EXIT
R=$(cd "$D" && pwd -P)	# /private/var/folders/...: the name Seatbelt compares
TAG=CMD64_bWFjb3MtY2hlY2s=_END__sbxcheck_SBX
ran=0 broken=0
row() { printf '%-58s %-10s %s\n' "$1" "$2" "$3"; }
sx() { sandbox-exec -p "$1" "${@:2}" >/dev/null 2>&1; }
printf '%-58s %-10s %s\n' "question" "answer" "what it means for the profile"

# 1. sbx's own profile, as a run renders it, accepted and applied
mkdir -p "$D/proj"
if (cd "$D/proj" && "$OLDPWD/sbx" --print=seatbelt -- true >"$D/sbx.sb" 2>"$D/sbx.err"); then
	if sandbox-exec -f "$D/sbx.sb" /usr/bin/true 2>"$D/se.err"; then
		row "sandbox-exec accepts sbx's profile" yes "the rules as patterns compile"
	else
		row "sandbox-exec accepts sbx's profile" NO "$(head -c 200 "$D/se.err")"
	fi
	ran=$((ran + 1))
else
	row "sandbox-exec accepts sbx's profile" "not run" "sbx --print=seatbelt: $(head -c 200 "$D/sbx.err")"
	broken=1
fi

# 2. a later (allow file-write*) after an earlier (deny file-write-unlink)
mkdir -p "$D/u" && touch "$D/u/f"
sx "(version 1)(allow default)(deny file-write-unlink (subpath \"$R/u\"))(allow file-write* (subpath \"$R/u\"))" \
	rm "$R/u/f"
[ -e "$D/u/f" ] && a="no: the deny holds" || a="yes"
row "a later (allow file-write*) overrides (deny file-write-unlink)" "${a%%:*}" \
	"$([ -e "$D/u/f" ] && echo "an operation's own deny outlives a later wildcard allow (srt's reading)" ||
		echo "last match wins across the wildcard: sbx's order holds as written")"
ran=$((ran + 1))

# 3. a deny without a message: is its refusal logged with the (deny default) message?
mkdir -p "$D/m"
start=$(date '+%Y-%m-%d %H:%M:%S')
sx "(version 1)(deny default (with message \"$TAG\"))(allow process* signal sysctl* mach* ipc* iokit* system-socket file-read* file-ioctl)(allow file-write* (subpath \"$R/m\"))(deny file-write* (subpath \"$R/m/no\"))" \
	/bin/sh -c "echo x >'$R/m/no'"
sleep 2
if log show --start "$start" --predicate "eventMessage CONTAINS \"$R/m/no\"" --style compact 2>/dev/null |
	grep -q "$TAG"; then
	row "a deny without (with message) is logged with the tag" yes "tagging every deny is belt and braces"
else
	row "a deny without (with message) is logged with the tag" no "every deny must carry the tag (sbx's do)"
fi
ran=$((ran + 1))

# 4. the name Seatbelt sees for /dev/stdout
sx '(version 1)(allow default)(deny file-write* (literal "/dev/stdout"))' /bin/sh -c 'echo x >/dev/stdout' &&
	a=other || a=/dev/stdout
row "the path Seatbelt checks for a write to /dev/stdout" "$a" \
	"$([ "$a" = other ] && echo "a (literal \"/dev/stdout\") rule does not decide it (a /dev/fd/N name?)" ||
		echo "the literal names it: srt's and sbx's /dev/stdout rule applies")"
ran=$((ran + 1))

# 5. case-insensitive APFS: .GIT/HOOKS is .git/hooks; which name does a regex see?
mkdir -p "$D/c/.git/hooks"
sx "(version 1)(allow default)(deny file-write* (regex \"^$R/c/\\\\.git/hooks(/.*)?\$\"))" \
	/bin/sh -c "echo x >'$R/c/.GIT/HOOKS/pre-commit'"
[ -e "$D/c/.git/hooks/pre-commit" ] && a="spelled" || a="on disk"
row "a regex sees the name as spelled or as on disk (.GIT/HOOKS)" "$a" \
	"$([ "$a" = spelled ] && echo "case-sensitive patterns miss .GIT/HOOKS: sbx's match either case" ||
		echo "the name on disk: either-case patterns cost nothing more")"
ran=$((ran + 1))

# 6. (remote ip "localhost:PORT") and ::1
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1",0)); print(s.getsockname()[1])')
python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET6); s.bind(("::1",int(sys.argv[1]))); s.listen(1); s.settimeout(8); c,_=s.accept()' "$port" &
lp=$!
sleep 0.5
sx "(version 1)(allow default)(deny network-outbound (remote ip \"*:*\"))(allow network-outbound (remote ip \"localhost:$port\"))" \
	python3 -c 'import socket,sys; socket.create_connection(("::1",int(sys.argv[1])),timeout=3)' "$port" && a=yes || a=no
kill "$lp" 2>/dev/null; wait "$lp" 2>/dev/null
row "(remote ip \"localhost:PORT\") matches ::1" "$a" \
	"$([ "$a" = yes ] && echo "an IPv6 loopback client reaches the proxy" || echo "IPv6 clients need 127.0.0.1 (NO_PROXY, JVM preferIPv4Stack)")"
ran=$((ran + 1))

# 7. a socket under /var (/private/var on disk): which spelling does (subpath) need?
spelled=$D	# mktemp's name, through $TMPDIR: /var/folders/... on a Mac, /var a link to /private/var
python3 -c 'import socket,sys,os; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); s.settimeout(8); s.accept()' "$R/s.sock" &
lp=$!
sleep 0.5
sx "(version 1)(allow default)(deny network-outbound (remote unix-socket (path-regex #\"^/\")))(allow network-outbound (remote unix-socket (subpath \"$spelled\")))" \
	python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' "$spelled/s.sock" && a="as spelled" || a=resolved
kill "$lp" 2>/dev/null; wait "$lp" 2>/dev/null
row "a Unix socket rule matches /var as spelled or /private/var" "$a" \
	"$([ "$a" = resolved ] && echo "allow-unix-socket must name /private/var/... (the real path)" || echo "either spelling is matched")"
ran=$((ran + 1))

# 8. a rule and a path through a symlink: the name as spelled, or the file it reaches?
mkdir -p "$D/t" && ln -s t "$D/l"
sx "(version 1)(allow default)(deny file-write* (subpath \"$R/t\"))" /bin/sh -c "echo x >'$R/l/x'"
[ -e "$D/t/x" ] && a="spelled" || a="resolved"
row "a path through a symlink is matched as spelled or resolved" "$a" \
	"$([ "$a" = resolved ] && echo "a link cannot carry a write past a deny" ||
		echo "a link made in a root carries writes past the patterns: a hole to close")"
ran=$((ran + 1))

# 9. a hard link to a protected file, written through its other name
touch "$D/t/f"
sx "(version 1)(allow default)(deny file-write* (subpath \"$R/t\"))" /bin/sh -c "ln '$R/t/f' '$R/h' && echo x >'$R/h'"
[ -s "$D/t/f" ] && a="yes" || a="no"
row "a protected file can be written through a hard link to it" "$a" \
	"$([ "$a" = no ] && echo "the link or the write is refused" ||
		echo "a hole: deny hard links into protected paths (file-link)")"
ran=$((ran + 1))

echo "$ran probes run"
exit "$broken"
