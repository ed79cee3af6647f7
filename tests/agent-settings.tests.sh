# tests/agent-settings.tests.sh - sourced by test.sh: what an agent's settings run. Claude Code runs
# the commands its settings name (hooks, the status line, helpers) and Codex its notify, MCP
# servers and hooks, outside any sandbox. The settings files are read-only; these tests attack
# what they name, the agents' directories that run, and $HOME's copies, each refusal with its
# control in the same run, then check on the host that what the agent would run is unchanged.

# A project whose .claude/settings.json names a hook script by $CLAUDE_PROJECT_DIR, a script
# after an interpreter, one in ~/bin, a status line, and a script that does not exist yet; its
# .mcp.json an MCP server's script.
agent_project() {
	mkdir -p "$P/.claude/hooks" "$P/.claude/skills/s" "$P/scripts" "$P/tools" "$H/bin"
	echo 'echo fmt' >"$P/.claude/hooks/fmt.sh"; echo 'echo lint' >"$P/scripts/lint.sh"
	echo 'print("status")' >"$P/tools/status.py"; echo 'echo x' >"$H/bin/x"
	echo 'a skill' >"$P/.claude/skills/s/SKILL.md"
	mkdir -p "$P/mcp"; echo 'server' >"$P/mcp/server.js"
	echo '{"mcpServers": {"local": {"command": "node", "args": ["mcp/server.js"]}}}' >"$P/.mcp.json"
	cat >"$P/.claude/settings.json" <<'JSON'
{
  "hooks": {
    "PostToolUse": [{"matcher": "Edit|Write", "hooks": [
      {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/fmt.sh"},
      {"type": "command", "command": "bash scripts/lint.sh && ~/bin/x --quiet"},
      {"type": "command", "command": "sh \"$CLAUDE_PROJECT_DIR/later/new.sh\""}
    ]}]
  },
  "statusLine": {"type": "command", "command": "python3 tools/status.py"}
}
JSON
}

t_agent_settings_named_paths() { # the scripts .claude/settings.json and .mcp.json name cannot be rewritten, replaced, renamed over or created; skills and agents neither; the project stays writable
	agent_project
	policy p <<<"allow-write ."
	run_ops -c "$T/p" <<EOF
ctl_create create $P/evil.sh
ctl_link symlink $P/evil.sh $P/evil.link
ctl_append append $P/tools/other.py
hook_write write $P/.claude/hooks/fmt.sh
hook_rename rename $P/evil.sh $P/.claude/hooks/fmt.sh
hook_unlink unlink $P/.claude/hooks/fmt.sh
hook_new create $P/.claude/hooks/new.sh
lint_write write $P/scripts/lint.sh
lint_rename rename $P/evil.sh $P/scripts/lint.sh
lint_unlink unlink $P/scripts/lint.sh
lint_symlink symlink $P/evil.sh $P/scripts/lint.sh
lint_link_over rename $P/evil.link $P/scripts/lint.sh
scripts_rename rename $P/scripts $P/scripts2
status_write append $P/tools/status.py
status_rename rename $P/evil.sh $P/tools/status.py
missing_mkdir mkdir $P/later
missing_create create $P/later/new.sh
mcp_write append $P/mcp/server.js
skill_write append $P/.claude/skills/s/SKILL.md
skill_new mkdir $P/.claude/skills/t
agent_new create $P/.claude/agents/a.md
ctl_claude create $P/.claude/notes.md
ctl_tools create $P/tools/new.py
EOF
	expect_ops <<'EOF'
ctl_create ok
ctl_link ok
ctl_append ENOENT
hook_write EROFS
hook_rename EROFS|EBUSY|EXDEV
hook_unlink EROFS|EBUSY
hook_new EROFS
lint_write EROFS
lint_rename EROFS|EBUSY|EXDEV
lint_unlink EROFS|EBUSY
lint_symlink EEXIST|EROFS
lint_link_over EROFS|EBUSY|EXDEV
scripts_rename EBUSY|EROFS
status_write EROFS
status_rename EROFS|EBUSY|EXDEV
missing_mkdir EEXIST|EROFS
missing_create EROFS|ENOTDIR|EISDIR
mcp_write EROFS
skill_write EROFS
skill_new EROFS
agent_new EROFS
ctl_claude ok
ctl_tools ok
EOF
	# what Claude Code runs next, outside, is the person's
	expect_eq "$(cat "$P/.claude/hooks/fmt.sh" "$P/scripts/lint.sh" "$P/tools/status.py")" \
		"$(printf 'echo fmt\necho lint\nprint("status")')" "host: the named scripts"
	[ ! -e "$P/later" ] || fail "host: the placeholder for the missing script was left behind"
	[ -e "$P/evil.sh" ] && [ -L "$P/evil.link" ] && [ -e "$P/tools/new.py" ] || fail "host: the controls' files"
}

t_agent_settings_bare_and_cd() { # a script a hook names by a bare name (python3 hook.py) or below a cd (cd scripts && sh sub/x.sh) cannot be rewritten; its neighbours stay writable
	mkdir -p "$P/.claude" "$P/scripts/sub"
	echo 'print("hook")' >"$P/hook.py"; echo 'echo x' >"$P/scripts/sub/x.sh"
	cat >"$P/.claude/settings.json" <<'JSON'
{"hooks": {"Stop": [{"hooks": [
  {"type": "command", "command": "python3 hook.py"},
  {"type": "command", "command": "cd scripts && sh sub/x.sh"},
  {"type": "command", "command": "node later.mjs"}
]}]}}
JSON
	policy p <<<"allow-write ."
	run_ops -c "$T/p" <<EOF
ctl_py create $P/other.py
ctl_sub create $P/scripts/sub/y.sh
bare_write write $P/hook.py
bare_unlink unlink $P/hook.py
cd_write write $P/scripts/sub/x.sh
bare_missing create $P/later.mjs
EOF
	expect_ops <<'EOF'
ctl_py ok
ctl_sub ok
bare_write EROFS
bare_unlink EROFS|EBUSY
cd_write EROFS
bare_missing EEXIST|EROFS|EISDIR|ENOTDIR
EOF
	expect_eq "$(cat "$P/hook.py" "$P/scripts/sub/x.sh")" "$(printf 'print("hook")\necho x')" "host: what the hooks run"
	[ ! -e "$P/later.mjs" ] || fail "host: the placeholder for the missing script was left behind"
}
TESTS+=(agent_settings_bare_and_cd)

t_agent_settings_home() { # with ~ writable: what ~/.claude/settings.json and ~/.codex/config.toml name, and the agents' parts of ~ that run, are read-only; what they write as they work is not
	mkdir -p "$H/.claude/projects" "$H/.codex/sessions" "$H/mcp" "$H/bin"
	echo 'echo line' >"$H/.claude/statusline.sh"; echo 'echo x' >"$H/bin/x"
	echo 'print(1)' >"$H/.codex/notify.py"; echo 'srv' >"$H/mcp/srv"; echo '{}' >"$H/.codex/auth.json"
	cat >"$H/.claude/settings.json" <<'JSON'
{"statusLine": {"type": "command", "command": "bash ~/.claude/statusline.sh"},
 "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "$HOME/bin/x"}]}]}}
JSON
	cat >"$H/.codex/config.toml" <<EOF
notify = ["python3", "$H/.codex/notify.py"]

[mcp_servers.x]
command = "$H/mcp/srv"
args = []
EOF
	policy p <<EOF
allow-write .
allow-write $H
EOF
	run_ops -c "$T/p" <<EOF
status_write append $H/.claude/statusline.sh
x_write append $H/bin/x
settings_write append $H/.claude/settings.json
claude_skill mkdir $H/.claude/skills/s
claude_agent create $H/.claude/agents/a.md
claude_hooks create $H/.claude/hooks/h.sh
claude_plugin mkdir $H/.claude/plugins/p
notify_write append $H/.codex/notify.py
mcp_write append $H/mcp/srv
codex_config append $H/.codex/config.toml
codex_hooks write $H/.codex/hooks.json
codex_rules create $H/.codex/rules/default.rules
project_codex create $P/.codex/config.toml
ctl_session create $H/.codex/sessions/s.jsonl
ctl_history create $H/.codex/history.jsonl
ctl_auth write $H/.codex/auth.json
ctl_projects create $H/.claude/projects/x.jsonl
ctl_mcp create $H/mcp/other
EOF
	expect_ops <<'EOF'
status_write EROFS
x_write EROFS
settings_write EROFS
claude_skill EEXIST|EROFS
claude_agent EROFS
claude_hooks EROFS
claude_plugin EEXIST|EROFS
notify_write EROFS
mcp_write EROFS
codex_config EROFS
codex_hooks EISDIR|EROFS
codex_rules EROFS
project_codex EROFS
ctl_session ok
ctl_history ok
ctl_auth ok
ctl_projects ok
ctl_mcp ok
EOF
	expect_eq "$(cat "$H/.claude/statusline.sh" "$H/bin/x" "$H/.codex/notify.py" "$H/mcp/srv")" \
		"$(printf 'echo line\necho x\nprint(1)\nsrv')" "host: the named scripts"
	[ ! -e "$H/.codex/rules" ] && [ ! -e "$P/.codex" ] || fail "host: a placeholder was left behind"
}

t_agent_codex_config_placeholder() { # a missing ~/.codex/config.toml is held by an empty file Codex can read, not a directory; Codex's state stays writable
	mkdir -p "$H/.codex"
	policy p <<EOF
allow-write .
allow-write $H/.codex
EOF
	run_ops -c "$T/p" <<EOF
config_read read $H/.codex/config.toml
config_write write $H/.codex/config.toml
ctl_log mkdir $H/.codex/log
EOF
	expect_ops <<'EOF'
config_read ok:
config_write EROFS
ctl_log ok
EOF
	[ ! -e "$H/.codex/config.toml" ] || fail "host: the placeholder was left behind"
}

t_agent_settings_not_json() { # a settings file sbx's strict reader refuses: the run goes on with one warning, and what the file names is still protected
	mkdir -p "$P/.claude" "$P/scripts"
	echo 'echo lint' >"$P/scripts/lint.sh"
	# a trailing comma and a duplicate key: Claude Code's JSON.parse takes the second
	printf '{"statusLine": {"command": "x"}, "statusLine": {"command": "bash scripts/lint.sh"},}\n' \
		>"$P/.claude/settings.json"
	policy p <<<"allow-write ."
	run_ops -c "$T/p" <<EOF
lint_write append $P/scripts/lint.sh
ctl create $P/scripts/other.sh
EOF
	expect_ops <<'EOF'
lint_write EROFS
ctl ok
EOF
	expect_eq "$(grep -c "$P/.claude/settings.json" <<<"$ERR")" 1 "one warning naming the file"
	expect_contains "$ERR" "read loosely" "the warning"
	expect_eq "$(cat "$P/scripts/lint.sh")" "echo lint" "host: the named script"
}

TESTS+=(agent_settings_named_paths agent_settings_home agent_codex_config_placeholder agent_settings_not_json)
