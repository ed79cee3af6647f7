#!/usr/bin/env bash
# tests/helpers/run_agent.sh: one scripted conversation of a real agent CLI with its mock model
# server, for tests/agents.tests.sh. Run it in a network namespace of its own
# (`unshare -n bash run_agent.sh ...`): loopback is all there is, so nothing the agent (or the
# sandbox under it) does can reach the internet, whatever it tries.
#
#   run_agent.sh DIR claude|codex [-- ARGS...]
#
# DIR holds script.json (tests/helpers/mock_*.py). Written there: record.jsonl (what the mock
# received), out and err (the agent's), rc (its exit status) and ms (its run, in milliseconds).
# The agent runs in the current directory with the current HOME; $AGENT_TMO seconds at most.
# With AGENT_SBX=SBX and AGENT_POLICY=FILE the agent itself runs inside `SBX -c FILE+ --`, FILE
# plus `allow-host-port PORT` (the mock's port, reached on the sandbox's own loopback).
# Every variable that stops a CLI's telemetry, update checks and other traffic is set here;
# Codex's model provider is given on its command line (its config.toml is left to the test).
set -u
dir=$1 agent=$2
shift 2
[ "${1:-}" = -- ] && shift
here=$(cd "$(dirname "$0")" && pwd)
ip link set lo up 2>/dev/null || { echo "cannot bring lo up in the namespace" >"$dir/err"; echo 97 >"$dir/rc"; exit 0; }
mock=$here/mock_anthropic.py
[ "$agent" = codex ] && mock=$here/mock_openai.py
rm -f "$dir/port" "$dir/record.jsonl"
python3 "$mock" "$dir/script.json" "$dir/record.jsonl" "$dir/port" 2>"$dir/mock.err" &
mock_pid=$!
for _ in $(seq 200); do [ -s "$dir/port" ] && break; sleep 0.05; done
port=$(cat "$dir/port" 2>/dev/null) || { echo "the mock server did not start: $(cat "$dir/mock.err")" >"$dir/err"; echo 97 >"$dir/rc"; exit 0; }
unset ANTHROPIC_AUTH_TOKEN OPENAI_API_KEY OPENAI_BASE_URL CODEX_API_KEY
export DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_BUG_COMMAND=1 \
	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1 DISABLE_COST_WARNINGS=1 \
	NO_UPDATE_NOTIFIER=1 CODEX_DISABLE_UPDATE_CHECK=1
wrap=()
if [ -n "${AGENT_SBX:-}" ]; then
	{ cat "$AGENT_POLICY"; echo "allow-host-port $port"; } >"$dir/policy.run"
	wrap=("$AGENT_SBX" -c "$dir/policy.run" --)
fi
python3 -c 'import time; print(time.monotonic() * 1000)' >"$dir/t0_ms"	# the mocks' clock (bench/agents.sh)
t0=$(date +%s%N)
case $agent in
claude)
	ANTHROPIC_BASE_URL=http://127.0.0.1:$port ANTHROPIC_API_KEY=sk-ant-mock \
		timeout -k 5 "${AGENT_TMO:-120}" "${wrap[@]}" claude -p "run the steps" --output-format json "$@" \
		</dev/null >"$dir/out" 2>"$dir/err"
	;;
codex)
	cat >"$dir/models.json" <<EOF
{"models": [{"slug": "mock-model", "display_name": "mock-model", "description": "mock", "default_reasoning_level": "low",
 "supported_reasoning_levels": [{"effort": "low", "description": "low"}], "shell_type": "unified_exec", "visibility": "list",
 "supported_in_api": true, "priority": 1, "upgrade": null, "base_instructions": "You are a mock.",
 "supports_reasoning_summaries": false, "default_reasoning_summary": "none", "support_verbosity": false,
 "default_verbosity": null, "apply_patch_tool_type": "freeform", "truncation_policy": {"mode": "bytes", "limit": 10000},
 "supports_parallel_tool_calls": false, "context_window": 200000, "effective_context_window_percent": 95,
 "experimental_supported_tools": [], "input_modalities": ["text"], "supports_search_tool": false}]}
EOF
	MOCK_API_KEY=mock timeout -k 5 "${AGENT_TMO:-120}" "${wrap[@]}" codex exec --skip-git-repo-check \
		-c model=mock-model -c model_provider=mock -c "model_catalog_json=\"$dir/models.json\"" \
		-c "model_providers.mock={name=\"mock\", base_url=\"http://127.0.0.1:$port/v1\", wire_api=\"responses\", env_key=\"MOCK_API_KEY\"}" \
		-c check_for_update_on_startup=false -c analytics.enabled=false \
		"$@" "run the steps" </dev/null >"$dir/out" 2>"$dir/err"
	;;
esac
echo $? >"$dir/rc"
echo $((($(date +%s%N) - t0) / 1000000)) >"$dir/ms"
kill "$mock_pid" 2>/dev/null
wait "$mock_pid" 2>/dev/null
exit 0
