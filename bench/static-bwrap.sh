#!/usr/bin/env bash
# bench/static-bwrap.sh: what a statically linked bwrap saves per command
# (where the time over the bwrap floor goes, and what a user can do).
#
# Debian's bwrap (0.8.0 in bookworm) is dynamically linked against libselinux,
# libcap and, through libselinux, libpcre2: every run pays the dynamic loader
# for them (mmap, relocations, libselinux's constructor) before bwrap does any
# work. A bwrap built statically (musl, SELinux off) pays none of that, and
# sbx can be pointed at it with the policy directive `bwrap-path PATH`.
#
# What it does:
#   1. builds a static bwrap into OUT (default bench/.static-bwrap/bwrap), from
#      the bubblewrap source tree given as $1, or from Debian's source package
#      (`apt-get source bubblewrap`, which needs deb-src lines in apt's sources);
#      libcap (which bwrap needs for cap_from_name) is built statically from
#      LIBCAP_SRC or from Debian's libcap2 source package the same way. The
#      compiler is musl-gcc when installed (kernel headers reached through a
#      directory of symlinks to /usr/include/{linux,asm,asm-generic}), else
#      gcc -static (glibc). Build systems: autotools when the tree has
#      ./configure (bubblewrap <= 0.8), else meson (-Dselinux=disabled).
#      An existing OUT/bwrap that runs is reused unless REBUILD=1 (or $1 given).
#      The exact commands go to OUT/build.log.
#   2. measures, side by side in one hyperfine run (-N, WARMUP warm-up runs,
#      RUNS runs each; ROUNDS such runs), with a scratch project directory as
#      the working directory:
#        true, dynamic (/usr/bin/true) and static (a 1-line C program, same CC);
#        bwrap --version: the loader's cost alone, Debian's bwrap vs static;
#        the floor  bwrap --ro-bind / / --dev /dev --proc /proc --unshare-net
#                   --unshare-pid --die-with-parent true
#          with Debian's bwrap vs static, each with the dynamic and static true;
#        sbx -c POLICY -- true, POLICY = policy.example (Debian's bwrap) vs
#          policy.example + `bwrap-path OUT/bwrap`, each with both trues.
#      It prints each row's median, min, mean CPU time (user+sys, steadier than
#      wall time on a noisy VM) and ratio to the floor with Debian's bwrap, then
#      what the static bwrap saves per run. The CPU column is what the kernel
#      charged to the processes reaped down the tree: bwrap's parent does not
#      reap the sandbox's pid 1, so a floor row's CPU is the outer bwrap's own
#      (the command's is missing), while an sbx row includes the command (sbx's
#      init reaps it).
#
# Reading it (bookworm, a 2-CPU Firecracker VM): most of what the
# static bwrap saves is not symbol binding but glibc's start-up CPU and cache
# detection (perf: ~half of `bwrap --version`), whose CPUID instructions trap to
# the hypervisor (~7 us each here); a static glibc build (CC=gcc) still pays it,
# a musl build does not, and neither does a static musl command (the `true`
# rows). Under sbx the musl build saves less than at the floor: bwrap parses
# /proc/self/mountinfo for each of sbx's bind mounts, and musl's malloc maps and
# unmaps small blocks as it goes (strace: ~140 more mmap/munmap calls a run).
#
# A benchmark, not a test (test.sh does not use it). Exit: 0 when it measured,
# 1 when it could not build or run the static bwrap, sbx or hyperfine.
#
# Run:   bench/static-bwrap.sh [BUBBLEWRAP_SOURCE_TREE]
# Knobs: RUNS=100 WARMUP=5  ROUNDS=1 (hyperfine runs, RUNS each, every other one
#        through the rows backwards; medians over all of them)
#        OUT=dir (where bwrap goes)  REBUILD=1
#        LIBCAP_SRC=dir (a libcap source tree)  CC=compiler (default musl-gcc, else gcc)
#        DEB_BWRAP=path (the bwrap to compare with; default: bwrap on PATH)
# Needs: bash, hyperfine, python3 (reads hyperfine's JSON), make, a C compiler;
#        apt-get + dpkg-dev (apt-get source) unless both source trees are given;
#        meson + ninja + pkg-config only for a meson-only bubblewrap tree.

set -u -o pipefail

RUNS=${RUNS:-100}
WARMUP=${WARMUP:-5}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SBX=$ROOT/sbx
OUT=${OUT:-$HERE/.static-bwrap}
SRC_ARG=${1:-}
ME=bench/static-bwrap.sh

say() { printf '%s\n' "$*"; }
err() { printf '%s: %s\n' "$ME" "$*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }

mkdir -p "$OUT" || { err "cannot create $OUT"; exit 1; }
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/build.log
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sbx-static-bwrap.XXXXXX") || { err "mktemp failed"; exit 1; }
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT

# run CMD...: log the command and its output to build.log; non-zero on failure
run() {
	{ printf '+ [in %s]' "$PWD"; printf ' %q' "$@"; printf '\n'; } >>"$LOG"
	"$@" >>"$LOG" 2>&1
}
# fail_build WHAT: print the reason and the log's tail, exit 1
fail_build() {
	err "could not build: $*"
	if [ -s "$LOG" ]; then
		err "last lines of $LOG:"
		tail -n 15 "$LOG" | sed 's/^/    /' >&2
	fi
	exit 1
}

FLOOR_ARGS=(--ro-bind / / --dev /dev --proc /proc --unshare-net --unshare-pid --die-with-parent)

# ---------------------------------------------------------------- the compiler
pick_cc() {
	if [ -n "${CC:-}" ]; then
		USER_CC=$CC
	elif have musl-gcc; then
		USER_CC=musl-gcc
	elif have gcc; then
		USER_CC=gcc
	else
		fail_build "no C compiler (install musl-tools, or gcc)"
	fi
	BUILD_CC=$(command -v gcc || command -v cc) || fail_build "no host compiler (gcc or cc) for libcap's generator"
	SCC=$USER_CC
	# musl-gcc searches musl's headers only; bwrap and libcap need the kernel's.
	case "$USER_CC" in
	*musl-gcc*)
		local multi asm kh=$WORK/kernel-headers
		multi=$(gcc -print-multiarch 2>/dev/null || true)
		asm=/usr/include/asm
		[ -n "$multi" ] && [ -d "/usr/include/$multi/asm" ] && asm=/usr/include/$multi/asm
		[ -d /usr/include/linux ] && [ -d "$asm" ] && [ -d /usr/include/asm-generic ] ||
			fail_build "musl-gcc needs the kernel headers (apt-get install linux-libc-dev)"
		mkdir -p "$kh"
		ln -s /usr/include/linux "$kh/linux"
		ln -s "$asm" "$kh/asm"
		ln -s /usr/include/asm-generic "$kh/asm-generic"
		SCC="$USER_CC -isystem $kh"
		;;
	esac
}

# fetch_deb_source PKG DIRVAR: apt-get source PKG into $WORK/deb; the unpacked dir into DIRVAR
fetch_deb_source() {
	local pkg=$1 d
	have apt-get || fail_build "no $pkg source tree given and no apt-get to fetch Debian's"
	mkdir -p "$WORK/deb"
	if ! (cd "$WORK/deb" && run apt-get source "$pkg"); then
		fail_build "apt-get source $pkg failed: enable source packages (add deb-src to 'Types:' in
    /etc/apt/sources.list.d/debian.sources, or deb-src lines in sources.list), run apt-get update,
    and check dpkg-dev is installed; or pass a bubblewrap source tree (and LIBCAP_SRC)"
	fi
	d=$(find "$WORK/deb" -mindepth 1 -maxdepth 1 -type d -name "${pkg}-*" | head -n 1)
	[ -n "$d" ] || fail_build "apt-get source $pkg unpacked nothing under $WORK/deb"
	printf -v "$2" '%s' "$d"
}

# ---------------------------------------------------------------- libcap
build_libcap() {
	local src=${LIBCAP_SRC:-}
	if [ -z "$src" ]; then
		fetch_deb_source libcap2 src
	fi
	[ -f "$src/libcap/Makefile" ] || fail_build "$src is not a libcap source tree (no libcap/Makefile)"
	# a copy, timestamps kept: the given tree stays as it was
	run cp -a "$src" "$WORK/libcap" || fail_build "cannot copy $src"
	run make -C "$WORK/libcap/libcap" CC="$SCC" BUILD_CC="$BUILD_CC" SHARED=no libcap.a ||
		fail_build "libcap.a (make -C libcap CC='$SCC' BUILD_CC=$BUILD_CC SHARED=no libcap.a)"
	CAP_INC=$WORK/libcap/libcap/include
	CAP_LIB=$WORK/libcap/libcap
	[ -f "$CAP_LIB/libcap.a" ] || fail_build "libcap.a was not produced"
}

# ---------------------------------------------------------------- bwrap
build_bwrap() {
	local src=$SRC_ARG b=$WORK/bubblewrap built
	if [ -z "$src" ]; then
		fetch_deb_source bubblewrap src
	fi
	[ -f "$src/bubblewrap.c" ] || fail_build "$src is not a bubblewrap source tree (no bubblewrap.c)"
	run cp -a "$src" "$b" || fail_build "cannot copy $src"
	CAP_INC='' CAP_LIB=''
	if grep -qs libcap "$b/configure.ac" "$b/meson.build"; then
		build_libcap
	fi
	if [ -x "$b/configure" ]; then
		local cppflags='' ldflags=-static
		[ -n "$CAP_INC" ] && cppflags="-I$CAP_INC" && ldflags="-static -L$CAP_LIB"
		(cd "$b" && run ./configure CC="$SCC" CPPFLAGS="$cppflags" LDFLAGS="$ldflags" \
			--disable-selinux --disable-man --with-bash-completion-dir=no) ||
			fail_build "bubblewrap's configure"
		run make -C "$b" bwrap || fail_build "make bwrap"
		built=$b/bwrap
	elif [ -f "$b/meson.build" ]; then
		have meson && have ninja || fail_build "this bubblewrap tree builds with meson only: install meson and ninja"
		if [ -n "$CAP_INC" ]; then
			mkdir -p "$WORK/pc"
			printf 'Name: libcap\nDescription: static libcap\nVersion: 2\nCflags: -I%s\nLibs: -L%s -lcap\n' \
				"$CAP_INC" "$CAP_LIB" >"$WORK/pc/libcap.pc"
		fi
		(cd "$b" && run env CC="$SCC" PKG_CONFIG_PATH="$WORK/pc" meson setup _build \
			-Dselinux=disabled -Dman=disabled -Dtests=false \
			-Dbash_completion=disabled -Dzsh_completion=disabled \
			--default-library=static -Dc_link_args=-static) ||
			fail_build "meson setup"
		run ninja -C "$b/_build" bwrap || fail_build "ninja bwrap"
		built=$b/_build/bwrap
	else
		fail_build "$src has neither ./configure nor meson.build"
	fi
	[ -x "$built" ] || fail_build "no bwrap binary was produced"
	if have readelf && readelf -d "$built" 2>/dev/null | grep -q NEEDED; then
		fail_build "$built is not static: $(readelf -d "$built" | grep NEEDED | tr -s ' ' | tr '\n' ' ')"
	fi
	run cp "$built" "$OUT/bwrap.new" && { have strip && run strip "$OUT/bwrap.new" || true; } &&
		mv -f "$OUT/bwrap.new" "$OUT/bwrap" || fail_build "cannot install into $OUT"
	# where it came from, for whoever reads the build log later
	printf 'built %s from %s with %s on %s\n' "$OUT/bwrap" "$src" "$SCC" "$(date -u '+%Y-%m-%d %H:%M UTC')" >>"$LOG"
}

static_bwrap_runs() {
	[ -x "$OUT/bwrap" ] && "$OUT/bwrap" "${FLOOR_ARGS[@]}" "$@" /bin/sh -c 'exit 0' 2>"$WORK/static.err"
}

# ---------------------------------------------------------------- build
pick_cc
if [ -n "$SRC_ARG" ] || [ -n "${REBUILD:-}" ] || { ! static_bwrap_runs && ! static_bwrap_runs --unshare-user; }; then
	: >"$LOG"
	say "building a static bwrap with $USER_CC into $OUT (commands in $LOG)..."
	build_bwrap
else
	say "reusing $OUT/bwrap (REBUILD=1 builds it again)"
fi
STATIC_BWRAP=$OUT/bwrap

# a static `true`, the same compiler
printf 'int main(void) { return 0; }\n' >"$WORK/true.c"
$SCC -static -O2 -o "$OUT/true-static" "$WORK/true.c" 2>"$WORK/true.err" ||
	{ err "cannot build a static true: $(cat "$WORK/true.err")"; exit 1; }

# ---------------------------------------------------------------- what to compare
have hyperfine || { err "hyperfine is not installed (apt-get install hyperfine)"; exit 1; }
have python3 || { err "python3 is needed to read hyperfine's JSON"; exit 1; }
DEB_BWRAP=${DEB_BWRAP:-$(command -v bwrap || true)}
[ -n "$DEB_BWRAP" ] && [ -x "$DEB_BWRAP" ] || { err "no bwrap on PATH to compare with (apt-get install bubblewrap)"; exit 1; }
DEB_BWRAP=$(realpath "$DEB_BWRAP")
TRUE=$(command -v true)
[ "${TRUE#/}" != "$TRUE" ] || TRUE=/bin/true
STRUE=$OUT/true-static

# unprivileged hosts need --unshare-user to get the other namespaces
if ! "$DEB_BWRAP" "${FLOOR_ARGS[@]}" "$TRUE" 2>/dev/null; then
	FLOOR_ARGS=(--unshare-user "${FLOOR_ARGS[@]}")
	"$DEB_BWRAP" "${FLOOR_ARGS[@]}" "$TRUE" 2>"$WORK/floor.err" ||
		{ err "$DEB_BWRAP cannot run here: $(cat "$WORK/floor.err")"; exit 1; }
	say "note: bwrap needed --unshare-user here (not running privileged)"
fi
"$STATIC_BWRAP" "${FLOOR_ARGS[@]}" "$STRUE" 2>"$WORK/static.err" ||
	{ err "the static bwrap cannot run the floor: $(cat "$WORK/static.err")"; exit 1; }

[ -x "$SBX" ] || make -C "$ROOT" -s sbx >&2 || { err "cannot build sbx"; exit 1; }
PROJ=$WORK/proj
mkdir -p "$PROJ"
cp "$ROOT/policy.example" "$PROJ/policy-debian" || exit 1
{ cat "$ROOT/policy.example"; printf 'bwrap-path %s\n' "$STATIC_BWRAP"; } >"$PROJ/policy-static"
for pol in debian static; do
	(cd "$PROJ" && "$SBX" -c "policy-$pol" -- "$STRUE") 2>"$WORK/sbx.err" ||
		{ err "sbx -c policy-$pol -- true failed: $(head -c 400 "$WORK/sbx.err")"; exit 1; }
done

q() { printf '%q ' "$@"; }
NAMES=() CMDS=()
row() { NAMES+=("$1"); CMDS+=("$2"); }
row "true (dynamic)"                        "$(q "$TRUE")"
row "true (static)"                         "$(q "$STRUE")"
row "bwrap --version, Debian's"             "$(q "$DEB_BWRAP" --version)"
row "bwrap --version, static"               "$(q "$STATIC_BWRAP" --version)"
row "floor, Debian's bwrap"                 "$(q "$DEB_BWRAP" "${FLOOR_ARGS[@]}" "$TRUE")"
row "floor, static bwrap"                   "$(q "$STATIC_BWRAP" "${FLOOR_ARGS[@]}" "$TRUE")"
row "floor, Debian's bwrap, static true"    "$(q "$DEB_BWRAP" "${FLOOR_ARGS[@]}" "$STRUE")"
row "floor, static bwrap, static true"      "$(q "$STATIC_BWRAP" "${FLOOR_ARGS[@]}" "$STRUE")"
row "sbx, Debian's bwrap"                   "$(q "$SBX" -c policy-debian -- "$TRUE")"
row "sbx, static bwrap"                     "$(q "$SBX" -c policy-static -- "$TRUE")"
row "sbx, Debian's bwrap, static true"      "$(q "$SBX" -c policy-debian -- "$STRUE")"
row "sbx, static bwrap, static true"        "$(q "$SBX" -c policy-static -- "$STRUE")"

ROUNDS=${ROUNDS:-1}
case "$ROUNDS" in '' | *[!0-9]* | 0) err "ROUNDS must be a positive number"; exit 1 ;; esac
HF=(hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style none)
hyperfine --help 2>/dev/null | grep -q -- '--output' && HF+=(--output=pipe)

say "measuring: $RUNS runs after $WARMUP warm-up runs each, $ROUNDS hyperfine run(s), from $PROJ"
JSONS=()
for ((r = 1; r <= ROUNDS; r++)); do
	args=()
	# even rounds go through the rows backwards: a slow spell on a shared
	# machine then lands on different rows
	order=()
	if ((r % 2)); then order=("${!NAMES[@]}"); else for ((i = ${#NAMES[@]} - 1; i >= 0; i--)); do order+=("$i"); done; fi
	for i in "${order[@]}"; do args+=(-n "${NAMES[$i]}" "${CMDS[$i]}"); done
	if ! (cd "$PROJ" && "${HF[@]}" --export-json "$WORK/hf$r.json" "${args[@]}") >"$WORK/hf.out" 2>&1; then
		err "hyperfine failed:"; tail -n 20 "$WORK/hf.out" >&2; exit 1
	fi
	JSONS+=("$WORK/hf$r.json")
done

say ""
say "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -sr), $(nproc 2>/dev/null || echo '?') CPUs, $("$DEB_BWRAP" --version)"
say "Debian's bwrap: $DEB_BWRAP ($(ldd "$DEB_BWRAP" 2>/dev/null | awk '/=>/ {print $1}' | tr '\n' ' '| sed 's/ $//'))"
say "static bwrap:   $STATIC_BWRAP ($(stat -c %s "$STATIC_BWRAP") bytes; built with $USER_CC; see $LOG)"
say ""
python3 - "${NAMES[@]}" -- "${JSONS[@]}" <<'EOF'
import json, statistics, sys
cut = sys.argv.index("--")
names, files = sys.argv[1:cut], sys.argv[cut + 1:]
times, cpus = {n: [] for n in names}, {n: [] for n in names}
for f in files:  # every round's runs together
    for r in json.load(open(f))["results"]:
        times[r["command"]] += r["times"]
        cpus[r["command"]] += [u + s for u, s in zip(r["user"] if isinstance(r["user"], list) else [r["user"]] * len(r["times"]),
                                                     r["system"] if isinstance(r["system"], list) else [r["system"]] * len(r["times"]))]
ms = lambda s: s * 1000.0
med = lambda n: ms(statistics.median(times[n]))
cpu = lambda n: ms(statistics.mean(cpus[n]))
lo = lambda n: ms(min(times[n]))
floor = med("floor, Debian's bwrap")
print("%-36s %9s %9s %9s %8s" % ("row", "median ms", "min ms", "cpu ms", "x floor"))
for n in names:
    print("%-36s %9.2f %9.2f %9.2f %8.2f" % (n, med(n), lo(n), cpu(n), med(n) / floor))
def saved(a, b, what):
    print("  %-34s %5.2f ms wall (median), %5.2f (min), %5.2f ms CPU (mean user+sys)"
          % (what, med(a) - med(b), lo(a) - lo(b), cpu(a) - cpu(b)))
print()
print("what the static bwrap saves per run:")
saved("bwrap --version, Debian's", "bwrap --version, static", "bwrap --version (loading alone):")
saved("floor, Debian's bwrap", "floor, static bwrap", "the floor:")
saved("sbx, Debian's bwrap", "sbx, static bwrap", "sbx -- true:")
print("what the command's own dynamic loading costs (true vs static true):")
saved("floor, static bwrap", "floor, static bwrap, static true", "under the static bwrap:")
saved("sbx, static bwrap", "sbx, static bwrap, static true", "under sbx with the static bwrap:")
print()
for what, f in (("medians", med), ("minimums", lo)):
    print("sbx -- true over the floor (%s): Debian's bwrap %.2fx; static bwrap %.2fx of Debian's floor, %.2fx of its own"
          % (what, f("sbx, Debian's bwrap") / f("floor, Debian's bwrap"), f("sbx, static bwrap") / f("floor, Debian's bwrap"),
             f("sbx, static bwrap") / f("floor, static bwrap")))
print("(target: sbx <= 1.3x the floor; on a busy VM wall medians wander: compare the min and CPU columns)")
EOF
rc=$?
[ $rc -eq 0 ] || { err "could not read hyperfine's results"; exit 1; }
say ""
say "to use it: add 'bwrap-path $STATIC_BWRAP' to the policy (it needs unprivileged user namespaces; no SELinux labels)"
exit 0
