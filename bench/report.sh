#!/usr/bin/env bash
# bench/report.sh: run the benchmarks and write their tables into docs/BENCHMARKS.md.
#
# Each bench/*.sh measures sbx beside its baselines in one run and prints plain-text
# tables. This script runs them, turns each table into Markdown and replaces what lies
# between that bench's marker comments in docs/BENCHMARKS.md:
#     <!-- report:NAME begin -->  ...  <!-- report:NAME end -->
# and the description of the machine between <!-- report:machine begin/end -->. Nothing
# outside the markers changes, and a bench that was not run keeps its old table. The
# tables carry no dates: the machine, the mode and the knobs say what was measured, and
# git says when. Each bench's whole output stays in bench/.report/NAME.out (its progress,
# summary and targets, which the tables leave out).
#
# Run:   bench/report.sh [--quick] [--no-write] [NAME...]
#   NAME      overhead syscalls observer proxy static-bwrap agents. Default: each bench
#             this tree has, except static-bwrap unless a static bwrap is already built
#             in bench/.static-bwrap (building one fetches Debian's bubblewrap source).
#   --quick   fewer runs and smaller loads (about ten minutes on 2 CPUs, most of it the
#             proxy bench); the doc says the tables came from a quick run.
#   --no-write  print the Markdown and leave docs/BENCHMARKS.md alone.
#   --tables-only  run nothing: make the tables again from bench/.report/NAME.out.
# As root, the benches run in a private mount and network namespace: /tmp and /var/tmp are
# fresh directories on the same disk (bench/.report/tmp, removed after), /dev/shm and
# /run/user empty tmpfs. sbx's runtime places on this machine are never touched, and the
# proxy bench's veth never appears in the host's network namespace. Not as root the
# benches run as they are, and the proxy and agents benches say they need root.
# Needs: bash, python3 (the tables), and what each bench needs (its header says).

set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
DOC=$ROOT/docs/BENCHMARKS.md
OUT=$HERE/.report
ME=bench/report.sh

QUICK=0
WRITE=1
RUN=1
NAMES=()
for a in "$@"; do
	case $a in
	--quick) QUICK=1 ;;
	--no-write) WRITE=0 ;;
	--tables-only) RUN=0 ;;
	-h | --help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	overhead | syscalls | observer | proxy | static-bwrap | agents) NAMES+=("$a") ;;
	*) echo "$ME: unknown argument $a (see $ME --help)" >&2; exit 2 ;;
	esac
done

# The knobs of each bench, in quick and full mode (the bench's own defaults when empty).
# ORDER: the names accepted above.
declare -A KNOBS_QUICK=(
	[overhead]="RUNS=10 WARMUP=2"
	[syscalls]="RUNS=10"
	[observer]="RUNS=5 WARMUP=1"
	[proxy]="BULK_MIB=256 BULK_RUNS=3 SEQ_N=2000 PAR_N=2000 HS_N=300"
	[static-bwrap]="RUNS=20 WARMUP=2"
	[agents]="N=10 ROUNDS=2"
)
declare -A KNOBS_FULL=([overhead]="" [syscalls]="" [observer]="" [proxy]="" [static-bwrap]="" [agents]="")

if [ ${#NAMES[@]} = 0 ]; then
	for n in overhead syscalls observer proxy static-bwrap agents; do
		[ -f "$HERE/$n.sh" ] || continue
		[ "$n" = static-bwrap ] && [ ! -x "$HERE/.static-bwrap/bwrap" ] && continue
		NAMES+=("$n")
	done
fi
command -v python3 >/dev/null || { echo "$ME: needs python3" >&2; exit 1; }
[ -f "$DOC" ] || { echo "$ME: $DOC is missing" >&2; exit 1; }
mkdir -p "$OUT" || exit 1

# ---- run each bench, in a private namespace when root ------------------------------------

run_benches() { # the benches in NAMES, each with its knobs; output to $OUT/NAME.out, .err
	local n knobs rc
	for n in "${NAMES[@]}"; do
		if [ ! -f "$HERE/$n.sh" ]; then
			echo "bench/$n.sh is not in this tree" >"$OUT/$n.err"; : >"$OUT/$n.out"
			echo 127 >"$OUT/$n.rc"; continue
		fi
		if [ "$QUICK" = 1 ]; then knobs=${KNOBS_QUICK[$n]}; else knobs=${KNOBS_FULL[$n]}; fi
		# an srt 0.0.81 on PATH is used as it is (the benches would npm-install their own)
		case $n in overhead | proxy)
			if srt --version 2>/dev/null | grep -qx 0.0.81; then knobs+=" SRT_BIN=$(command -v srt)"
			elif [ "$QUICK" = 1 ]; then knobs+=" NO_SRT=1"; fi ;;
		esac
		echo "$ME: bench/$n.sh ${knobs:-(its defaults)}" >&2
		cut -d' ' -f1 /proc/loadavg >"$OUT/$n.load"
		# shellcheck disable=SC2086	# the knobs are words
		env $knobs bash "$HERE/$n.sh" >"$OUT/$n.out" 2>"$OUT/$n.err"
		rc=$?
		cut -d' ' -f1 /proc/loadavg >>"$OUT/$n.load"
		echo "$rc" >"$OUT/$n.rc"
		printf '%s\n' "$knobs" >"$OUT/$n.knobs"
		echo "$ME: bench/$n.sh exited $rc" >&2
	done
}

if [ "$RUN" = 0 ]; then
	[ -f "$OUT/quick" ] && QUICK=1
elif [ "$(id -u)" = 0 ] && [ -z "${SBX_REPORT_INNER:-}" ]; then
	rm -rf "$OUT/tmp" && mkdir -p "$OUT/tmp/tmp" "$OUT/tmp/var-tmp" || exit 1
	chmod 1777 "$OUT/tmp/tmp" "$OUT/tmp/var-tmp"
	# shellcheck disable=SC2016	# expanded by the inner bash
	SBX_REPORT_INNER=1 unshare -m -n --propagation private bash -c '
		mount --bind "$1/tmp" /tmp && mount --bind "$1/var-tmp" /var/tmp &&
		mount -t tmpfs -o mode=1777 sbx-report /dev/shm || exit 1
		[ -d /run/user ] && { mount -t tmpfs -o mode=755 sbx-report /run/user || exit 1; }
		[ -d /run/netns ] && { mount -t tmpfs -o mode=755 sbx-report /run/netns || exit 1; }
		ip link set lo up || exit 1
		shift; exec "$@"' sh "$OUT/tmp" bash "$0" "$@"
	rc=$?
	rm -rf "$OUT/tmp"
	[ $rc = 0 ] || { echo "$ME: the private namespace could not be set up (exit $rc)" >&2; exit 1; }
elif [ -n "${SBX_REPORT_INNER:-}" ]; then
	run_benches
	exit 0
else
	run_benches
fi

if [ "$RUN" = 1 ]; then
	if [ "$QUICK" = 1 ]; then : >"$OUT/quick"; else rm -f "$OUT/quick"; fi
fi

# ---- the machine -----------------------------------------------------------------------

[ "$RUN" = 1 ] || [ ! -f "$OUT/machine.md" ] && {
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	vm=$(systemd-detect-virt --vm 2>/dev/null || true)
	ct=$(systemd-detect-virt --container 2>/dev/null || true)
	echo "- Machine: $(nproc) CPUs (${cpu:-unknown model})$( [ -n "$vm" ] && [ "$vm" != none ] && printf ', a %s virtual machine' "$vm")$( [ -n "$ct" ] && [ "$ct" != none ] && printf ' (in a %s container)' "$ct"), $(uname -sr), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) of memory."
	echo "- Shared: other work ran on the same CPUs (each table gives the load average at its start and end). Compare within a table (the columns of one run share the load), never across tables."
	echo "- bubblewrap: $(bwrap --version 2>/dev/null || echo 'not installed'); sbx: $("$ROOT/sbx" --version 2>/dev/null | head -n 1), built by \`make\` ($(file -b "$ROOT/sbx" 2>/dev/null | grep -o 'statically linked\|dynamically linked' || echo 'linkage unknown'))."
	if [ "$QUICK" = 1 ]; then
		echo "- Mode: \`bench/report.sh --quick\` (fewer runs and smaller loads than the benches' defaults; the knobs are under each table)."
	else
		echo "- Mode: \`bench/report.sh\` (each bench with its defaults)."
	fi
	[ "$(id -u)" = 0 ] && echo "- Place: a private mount namespace; projects and sbx's runtime directory on the machine's ext4 disk (\`discard\`), the registry on tmpfs."
} >"$OUT/machine.md"

# ---- the tables ----------------------------------------------------------------------

python3 - "$OUT" "$DOC" "$WRITE" "$QUICK" "${NAMES[@]}" <<'PY'
import os, re, sys

out, doc, write, quick, names = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1", sys.argv[5:]

# Lines of a bench's output kept below its tables (the rest: progress, dates, summaries).
KEEP = {
    "overhead": [r"^sbx peak RSS", r"^  found:", r"^  /usr/bin/time", r"^- note: "],
    "syscalls": [r"^start-up subtracted", r"^\s+find 10k"],
    "observer": [],
    "proxy": [r"^bulk runs", r"^floor:", r"^CONNECT direct", r"^(sbx|srt|cmp) proxy process", r"^srt socat",
              r"^parent bulk runs", r"^capture bulk runs", r"^columns:", r"^(seq|par|p50), each round",
              r"^- note: "],
    "static-bwrap": [r"^what the", r"^\s+(bwrap --version|the floor|sbx -- true|under)", r"^sbx -- true over"],
    "agents": [],
}
HEADER = re.compile(r"^(row|job|agent)\s{2,}\S")
DATE = re.compile(r"\b\d{4}-\d\d-\d\d\b|\d\d:\d\d UTC")

def cells(line):
    if " skipped: " in line and not re.match(r"^\S+\s{2,}\S+\s{2,}", line.strip()):
        label, why = line.split(" skipped: ", 1)
        return [label.strip(), "skipped: " + why.strip()]
    return re.split(r"\s{2,}", line.strip())

SEG = re.compile(r"\S+(?: \S+)*")

def fix_header(line, head, raw):
    """A header whose titles touch (a title as wide as its column, one space before it)
    splits into fewer cells than its rows: cut it where the rows' right-aligned cells end."""
    full = [r for r in raw if " skipped: " not in r]
    n = max([len(cells(r)) for r in full] or [0])
    if len(head) >= n:
        return head
    row = min((r for r in full if len(cells(r)) == n), key=lambda r: len(cells(r)[0]))
    ends = [m.end() for m in SEG.finditer(row)]
    ends[-1] = len(line)                  # the last title may run past its column
    return [line[:ends[0]].strip()] + [line[ends[k - 1]:ends[k]].strip() for k in range(1, n)]

def md_escape(s):
    return s.replace("|", "\\|")

def tables(name, text):
    lines = text.splitlines()
    md, i = [], 0
    keep = [re.compile(p) for p in KEEP.get(name, [])]
    while i < len(lines):
        line = lines[i]
        if HEADER.match(line):
            head = cells(line)
            cap = lines[i - 1].strip() if i > 0 else ""
            if cap and not DATE.search(cap) and not HEADER.match(lines[i - 1]) and not cap.startswith(("---", "==")):
                if md and md[-1]:
                    md.append("")
                md.append("*%s*\n" % md_escape(cap.rstrip(":")))
            i += 1
            raw = []
            while i < len(lines) and lines[i].strip():
                raw.append(lines[i])
                i += 1
            head = fix_header(line, head, raw)
            md.append("| " + " | ".join(md_escape(h) for h in head) + " |")
            md.append("|" + "|".join(["---"] + ["--:"] * (len(head) - 1)) + "|")
            after = []
            for r in raw:
                row = cells(r)
                if set("".join(row)) <= set("- "):
                    continue                      # the text table's rule
                if len(row) < min(3, len(head)):  # a line among the rows (a note, a skip)
                    after.append(" ".join(row))
                    continue
                if len(row) > len(head):          # a label with two spaces in it
                    row = [" ".join(row[:len(row) - len(head) + 1])] + row[len(row) - len(head) + 1:]
                row += [""] * (len(head) - len(row))
                md.append("| " + " | ".join(md_escape(c) for c in row) + " |")
            md.append("")
            md += ["- %s" % md_escape(a) for a in after]
            continue
        if any(k.search(line) for k in keep) and not DATE.search(line):
            if md and md[-1].startswith("|"):
                md.append("")
            line = re.sub(r"^- ", "", line.strip())
            md.append("- " + md_escape(re.sub(r"\bpid \d+, ", "", line)))
        i += 1
    return md

def fragment(name):
    base = os.path.join(out, name)
    text = open(base + ".out", errors="replace").read() if os.path.exists(base + ".out") else ""
    rc = open(base + ".rc").read().strip() if os.path.exists(base + ".rc") else "?"
    knobs = open(base + ".knobs").read().strip() if os.path.exists(base + ".knobs") else ""
    md = tables(name, text)
    if not md:
        err = open(base + ".err", errors="replace").read().strip().splitlines() if os.path.exists(base + ".err") else []
        why = (text.strip().splitlines() or err or ["no output"])[-1]
        return ["*Not measured in the last report: bench/%s.sh printed no table (exit %s): %s*" % (name, rc, md_escape(why[:300]))]
    run = "`%sbench/%s.sh`" % ((knobs + " ") if knobs else "", name)
    load = open(base + ".load").read().split() if os.path.exists(base + ".load") else []
    how = (["quick mode"] if quick else []) + (
        ["load average %s at the start, %s at the end" % tuple(load[:2])] if len(load) >= 2 else [])
    return md + ["", "Run as %s%s." % (run, " (%s)" % "; ".join(how) if how else "")]

def replace(text, key, body):
    begin, end = "<!-- report:%s begin -->" % key, "<!-- report:%s end -->" % key
    a, b = text.find(begin), text.find(end)
    if a < 0 or b < a:
        sys.exit("bench/report.sh: %s lacks the markers %s ... %s" % (doc, begin, end))
    return text[:a + len(begin)] + "\n" + "\n".join(body).strip("\n") + "\n" + text[b:]

text = open(doc).read()
new = replace(text, "machine", open(os.path.join(out, "machine.md")).read().splitlines())
for n in names:
    if os.path.exists(os.path.join(out, n + ".rc")):   # never run here: its old table stays
        new = replace(new, n, fragment(n))
if write:
    open(doc, "w").write(new)
    print("bench/report.sh: wrote %s (%s)" % (doc, ", ".join(["machine"] + names)))
else:
    sys.stdout.write(new)
PY
