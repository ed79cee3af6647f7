#!/usr/bin/env bash
# bench/seatbelt.sh: the Seatbelt profile's size and the time to make it, for 50 globs over a
# project of 10,000 files (docs/MACOS.md, "Size"). A glob stays one pattern in the profile
# whatever it matches on disk, so neither may grow with the project; srt's profile for the
# same settings is measured beside it when srt is installed (its generator in node).
#
# Usage: bench/seatbelt.sh [FILES] [GLOBS]      (defaults 10000 and 50)
#   SBX     the sbx to ask (default ./sbx-macsim, the build a Mac runs; built when missing)
#   RUNS    generations timed (default 20)
# Prints one line per generator: profile bytes, rules, regex filters, and the mean time of
# one `--print=seatbelt` (sbx: the whole process, policy to profile, scan included).
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
FILES=${1:-10000}
GLOBS=${2:-50}
RUNS=${RUNS:-20}
SBX=${SBX:-}
if [ -z "$SBX" ]; then
	[ -x ./sbx-macsim ] && [ ./sbx-macsim -nt sbx.c ] || make -s sbx-macsim >/dev/null
	SBX=$PWD/sbx-macsim
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench-seatbelt.XXXXXX")
trap 'rm -rf "$work"' EXIT
P=$work/proj H=$work/home
mkdir -p "$P" "$H"
# the project: 100 directories of FILES/100 files, of the kinds the globs name
python3 - "$P" "$FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
exts = ["js", "ts", "pem", "env", "key", "log", "json", "md", "c", "h"]
per = max(1, n // 100)
for i in range(n):
    d = os.path.join(root, "d%02d" % (i // per % 100), "s%d" % (i % 7))
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "f%05d.%s" % (i, exts[i % len(exts)])), "w").close()
PY
# the settings: GLOBS globs, half deny-write and half deny-read, most of them matching files
python3 - "$work/settings.json" "$GLOBS" <<'PY'
import json, sys
n = int(sys.argv[2])
exts = ["js", "ts", "pem", "env", "key", "log", "json", "md", "c", "h"]
globs = []
for i in range(n):
    e = exts[i % len(exts)]
    globs.append(["**/*.%s" % e, "./d%02d/**/*.%s" % (i % 100, e),
                  "**/s%d/f*%d.%s" % (i % 7, i % 10, e), "./d%02d/s?/*.%s" % (i % 100, e),
                  "**/[a-f]*%d.%s" % (i, e)][i % 5])
json.dump({"network": {"allowedDomains": [], "deniedDomains": []},
           "filesystem": {"allowWrite": ["."], "denyWrite": globs[: n // 2],
                          "denyRead": globs[n // 2:], "allowRead": []}}, open(sys.argv[1], "w"))
PY
measure() { # NAME CMD...: bytes, rules, regexes of the profile on stdout; the mean time of RUNS
	local name=$1 t0 t1 out=$work/$1.sb
	shift
	(cd "$P" && HOME=$H "$@" >"$out" 2>"$work/$name.err") ||
		{ echo "$name: failed: $(head -c 500 "$work/$name.err")"; return 1; }
	t0=$(date +%s%N)
	for _ in $(seq "$RUNS"); do (cd "$P" && HOME=$H "$@" >/dev/null 2>&1); done
	t1=$(date +%s%N)
	printf '%-5s %8d bytes  %5d rules  %4d regex filters  %8.1f ms a generation\n' "$name" \
		"$(wc -c <"$out")" "$(grep -c '^(\(allow\|deny\)' "$out")" \
		"$(grep -o '(regex ' "$out" | wc -l)" \
		"$(echo "($t1 - $t0) / $RUNS / 1000000" | bc -l)"
}
echo "$FILES files, $GLOBS globs ($(find "$P" -type f | wc -l) files on disk)"
measure sbx "$SBX" --settings="$work/settings.json" --print=seatbelt -- true
if [ -f "$(npm root -g 2>/dev/null)/@anthropic-ai/sandbox-runtime/package.json" ]; then
	srt_sb() { # the profile out of srt's `env ... /usr/bin/sandbox-exec -p PROFILE ...`
		node "$ROOT/tests/srt_profile.mjs" "$work/settings.json" |
			python3 -c 'import shlex, sys
w = shlex.split(sys.stdin.read()); print(w[w.index("/usr/bin/sandbox-exec") + 2])'
	}
	measure srt srt_sb
else
	echo "srt   (not installed: npm install -g @anthropic-ai/sandbox-runtime@0.0.81)"
fi
