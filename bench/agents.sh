#!/usr/bin/env bash
# bench/agents.sh: what sbx's hooks add to each shell command an agent runs, measured with the
# real Claude Code and Codex CLIs against the suite's mock model servers
# (tests/helpers/mock_anthropic.py, mock_openai.py, run by tests/helpers/run_agent.sh).
#
# The same conversation, N calls of `true` then a text turn, runs without the hooks and with
# them (installed by `sbx hook AGENT install`), the two alternating round by round, so they
# are measured side by side under the same load. A call's time is the mock's: from its answer
# holding the call to the next request holding the result (the agent's own work around the
# call included, the same in both). Printed per agent and mode: the start (from the agent's
# start to its first request: with the hooks, the session starts in it, from the SessionStart
# hook) and the first call, then the median and 90th percentile of the others, and the median
# the hooks add per call. Target: at most 10 ms.
# A benchmark, not a test: exits 0 unless it cannot run at all.
#
# Run:   bench/agents.sh                 (as root: it makes a private mount and network
#                                         namespace, so nothing reaches the internet and
#                                         sbx's runtime places are fresh tmpfs)
# Knobs: N=20 ROUNDS=3 AGENTS="claude codex" SBX_BIN=path
# Needs: bash, bwrap, python3, iproute2 (ip), unshare; claude and/or codex (npm, .ci/run).

set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SBX=${SBX_BIN:-$ROOT/sbx}
N=${N:-20}
ROUNDS=${ROUNDS:-3}
AGENTS=${AGENTS:-claude codex}

if [ -z "${SBX_BENCH_INNER:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "bench/agents.sh: run it as root (it makes its own namespaces)" >&2; exit 1; }
	[ -x "$SBX" ] || { [ -z "${SBX_BIN:-}" ] && make -C "$ROOT" -s sbx; } || exit 1
	exec env SBX_BENCH_INNER=1 SBX_BIN="$SBX" unshare -m --propagation private -n bash -c '
		for m in /tmp /var/tmp /dev/shm; do mount -t tmpfs -o mode=1777 sbx-bench "$m" || exit 1; done
		ip link set lo up && exec bash "$0"' "$0"
fi

WORK=$(mktemp -d /tmp/sbx-agents-bench.XXXXXX) || exit 1
python3 -c 'import json, sys; n = int(sys.argv[1]); print(json.dumps([[{"bash": "true"}]] * n + [[{"text": "done"}]]))' \
	"$N" >"$WORK/script.json"

# one conversation: AGENT MODE ROUND; its calls' times (ms), one a line, the first first
conversation() {
	local agent=$1 mode=$2 d=$WORK/$1-$2-$3 args=()
	mkdir -p "$d/home" "$d/proj"
	cp "$WORK/script.json" "$d/"
	printf 'allow-write %s\n' "$d/proj" >"$d/policy"
	case $agent in
	claude) [ "$mode" = plain ] && args=(--allowedTools Bash) ;;
	codex) args=(-s danger-full-access) ;;
	esac
	if [ "$mode" = sbx ]; then
		HOME=$d/home "$SBX" hook "$agent" install -c "$d/policy" >/dev/null || return 1
	fi
	(cd "$d/proj" && HOME=$d/home AGENT_TMO=300 bash "$ROOT/tests/helpers/run_agent.sh" "$d" "$agent" -- "${args[@]}")
	[ "$(cat "$d/rc")" = 0 ] || { echo "  $agent $mode: exited $(cat "$d/rc"): $(tail -c 300 "$d/err")" >&2; return 1; }
	python3 - "$d/record.jsonl" "$d/t0_ms" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
main_reqs = {r["request"] for r in recs if "request" in r and ("Bash" in r["tools"] or "exec_command" in r["tools"])}
# first line: from the agent's start to its first request (its SessionStart hooks in it)
print("%.3f" % (min(r["t_ms"] for r in recs if "request" in r) - float(open(sys.argv[2]).read())))
sent = None
for r in recs:
    if "sent" in r and r["sent"] in main_reqs:
        sent = r["t_ms"]
    elif "request" in r and r["request"] in main_reqs and sent is not None:
        print("%.3f" % (r["t_ms"] - sent))
        sent = None
PY
}

summary() { # summary FILE... : medians of the start and the first call, median and p90 of the rest
	python3 - "$@" <<'PY'
import statistics, sys
starts, firsts, rest = [], [], []
for f in sys.argv[1:]:
    v = [float(x) for x in open(f).read().split()]
    if len(v) > 1:
        starts.append(v[0]); firsts.append(v[1]); rest += v[2:]
if not rest:
    print("- - - - 0"); sys.exit()
rest.sort()
print("%.1f %.1f %.1f %.1f %d" % (statistics.median(starts), statistics.median(firsts), statistics.median(rest),
                                  rest[int(0.9 * (len(rest) - 1))], len(rest)))
PY
}

echo "bench/agents.sh: $N calls of \`true\` a conversation, $ROUNDS rounds, sbx $("$SBX" --version | cut -d' ' -f2)"
printf '%-8s %-6s %12s %12s %12s %12s %7s\n' agent mode "start (ms)" "first (ms)" "median (ms)" "p90 (ms)" calls
for agent in $AGENTS; do
	if ! command -v "$agent" >/dev/null; then
		echo "$agent: not installed (.ci/run installs it); skipped"
		continue
	fi
	rm -f "$WORK/$agent".*.times
	for r in $(seq "$ROUNDS"); do
		for mode in plain sbx; do
			conversation "$agent" "$mode" "$r" >"$WORK/$agent.$mode.$r.times" || rm -f "$WORK/$agent.$mode.$r.times"
		done
	done
	declare -A med=()
	for mode in plain sbx; do
		read -r start first median p90 calls < <(summary "$WORK/$agent.$mode".*.times 2>/dev/null)
		med[$mode]=$median
		printf '%-8s %-6s %12s %12s %12s %12s %7s\n' "$agent" "$mode" "$start" "$first" "$median" "$p90" "$calls"
	done
	python3 -c 'import sys; g, a, b = sys.argv[1:]; d = float(b) - float(a); print("%-8s added by the hooks, median per call: %.1f ms (target: at most 10 ms: %s)" % (g, d, "met" if d <= 10 else "not met"))' "$agent" \
		"${med[plain]}" "${med[sbx]}" 2>/dev/null || true
	unset med
done
rm -rf "$WORK"
