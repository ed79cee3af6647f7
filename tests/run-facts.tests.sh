# tests/run-facts.tests.sh - sourced by test.sh: one model of a run. The run and
# --print=argv take their facts from one place (run_facts_collect), so what is printed is what
# bwrap is started with, byte for byte; GIT_SSH_COMMAND is set only where it works.

# print_vs_run POLICY-ARGS...: run sbx with a stand-in bwrap that records its argv and the
# options it would read from its --args descriptor, then --print=argv of the same policy in the
# same environment. Sets WORDS_RUN and WORDS_PRINT (one word a line) and SAME=1 when equal.
print_vs_run() {
	local fake=$T/bin/bwrap rec=$T/rec
	mkdir -p "$T/bin" "$rec"
	{
		echo '#!/bin/sh'
		echo '# the stand-in: record what a real bwrap would get, then fail'
		echo "for a in \"\$@\"; do printf '%s\\n' \"\$a\"; done >'$rec/argv'"
		echo "tr '\\0' '\\n' <&6 >'$rec/args'"
		echo 'exit 1'
	} >"$fake"
	chmod 755 "$fake"
	rm -f "$rec/argv" "$rec/args"
	run_sbx --bwrap-path="$fake" "$@" -- sh -c 'echo "$1"' x "it's here"
	[ "$RC" = 125 ] || fail "with the stand-in bwrap, sbx exits 125 (got $RC): $ERR"
	[ -s "$rec/argv" ] && [ -s "$rec/args" ] || fail "the stand-in bwrap did not run: $ERR"
	[ "$(sed -n 1,2p "$rec/argv" | tr '\n' ' ')" = "--args 6 " ] ||
		fail "bwrap reads its options from fd 6: $(head -3 "$rec/argv")"
	# the run: bwrap, the options it read from fd 6, then its argv after --args 6
	# (each run has its own directory, run-PID-START: the one part that differs)
	WORDS_RUN=$( { echo "$fake"; cat "$rec/args"; tail -n +3 "$rec/argv"; } | sed -E 's/(run|tmp|bridge)-[0-9]+-[0-9]+/\1-N/g')
	run_sbx --bwrap-path="$fake" "$@" --print=argv -- sh -c 'echo "$1"' x "it's here"
	[ "$RC" = 0 ] || fail "--print=argv failed: $ERR"
	WORDS_PRINT=$(eval "set -- $(grep -v '^#' <<<"$OUT")"; printf '%s\n' "$@" | sed -E 's/(run|tmp|bridge)-[0-9]+-[0-9]+/\1-N/g')
	note "run: $(wc -l <<<"$WORDS_RUN") words, print: $(wc -l <<<"$WORDS_PRINT") words"
	if [ "$WORDS_RUN" = "$WORDS_PRINT" ]; then SAME=1; else
		diff <(echo "$WORDS_RUN") <(echo "$WORDS_PRINT") | head -20; SAME=0; fi
	expect_contains "$OUT" "# command, sent over the control socket: sh -c 'echo \"\$1\"' x 'it'\\''s here'" \
		"the command is shown as it is sent"
}

t_print_argv_is_what_runs() { # --print=argv and the run give bwrap the same words, whatever the policy and environment
	local pol
	mkdir -p "$H/.ssh"
	for pol in "--allow-write=$P" "--allow-host-port=5432" "--allow-domain=a.test --git-safe-directory=$P" \
		"--allow-domain=a.test --deny-env=JAVA_TOOL_OPTIONS --deny-env=GIT_CONFIG_*" \
		"--allow-write=$P --deny-read=$H/.ssh --expose-port=18080 --allow-domain=b.test"; do
		# shellcheck disable=SC2086 # the policy is words
		GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=a.b GIT_CONFIG_VALUE_0=1 JAVA_TOOL_OPTIONS="-Dmine=1 -Xmx1g" \
			print_vs_run $pol
		[ "$SAME" = 1 ] || fail "policy $pol: --print=argv is not what bwrap got"
	done
	expect_contains "$WORDS_RUN" "-Dmine=1 -Xmx1g -Dhttp.proxyHost" "the caller's JAVA_TOOL_OPTIONS continued"
	GIT_CONFIG_COUNT=2 print_vs_run --allow-write="$P" --git-safe-directory="$P"
	expect_contains "$WORDS_RUN" "GIT_CONFIG_KEY_2" "the caller's GIT_CONFIG_COUNT continued"
	# control: the comparison sees a difference (the words depend on the environment)
	JAVA_TOOL_OPTIONS="-Dfirst=1" print_vs_run --allow-domain=a.test
	local first=$WORDS_RUN
	JAVA_TOOL_OPTIONS="-Dsecond=2" print_vs_run --allow-domain=a.test
	[ "$first" != "$WORDS_RUN" ] || fail "control: a different environment gave the same words"
}
TESTS+=(print_argv_is_what_runs)

t_git_ssh_command_only_where_it_works() { # allow-host-port alone: GIT_SSH_COMMAND names an sbx that is there and answers
	run_sbx --allow-write="$P" --allow-host-port=5432 -- sh -c '
		printf "[%s]\n" "$GIT_SSH_COMMAND"
		B=$(printf "%s" "$GIT_SSH_COMMAND" | sed "s/.*ProxyCommand=.\([^ ]*\) .*/\1/")
		[ -n "$GIT_SSH_COMMAND" ] && [ -x "$B" ] && echo "connect-client-present"
		"$B" --connect nowhere.test 7000 </dev/null; echo "connect-rc=$?"'
	note "$OUT"; note "$ERR"
	expect_contains "$OUT" "ProxyCommand=" "the proxy runs (allow-host-port): GIT_SSH_COMMAND is set"
	expect_contains "$OUT" "connect-client-present" "the sbx it names is there, inside"
	expect_contains "$OUT" "connect-rc=1" "sbx --connect runs and is refused"
	expect_contains "$ERR" "--connect nowhere.test 7000: HTTP/1.1 403" "with the proxy's reason, not 'not found'"
	# no network allowed at all: the proxy still runs (as srt's), so the variable is set, the sbx
	# it names is there, and ssh is refused by the proxy with the reason, never "not found"
	run_sbx --allow-write="$P" -- sh -c '
		B=$(printf "%s" "$GIT_SSH_COMMAND" | sed "s/.*ProxyCommand=.\([^ ]*\) .*/\1/")
		[ -n "$GIT_SSH_COMMAND" ] && [ -x "$B" ] && echo "connect-client-present"
		"$B" --connect github.com 22 </dev/null | tr -c "[:print:]\n" " "; echo
		"$B" --connect github.com 443 </dev/null; echo "connect-rc=$?"'
	note "$OUT"; note "$ERR"
	expect_contains "$OUT" "connect-client-present" "no allow-domain: GIT_SSH_COMMAND names an sbx that is there"
	expect_contains "$OUT" "SSH-2.0-policy_refusal" "no allow-domain: ssh to port 22 meets the proxy's SSH refusal"
	expect_contains "$OUT" "host is not on the allow list: the policy allows no network" "which ssh prints with the reason"
	expect_contains "$OUT" "connect-rc=1" "no allow-domain: sbx --connect to 443 is refused"
	expect_contains "$ERR" "--connect github.com 443: HTTP/1.1 403 host is not on the allow list: the policy allows no network" \
		"no allow-domain: with the reason"
	# control: where sbx cannot find its own binary (run from a deleted copy: /proc/self/exe then
	# names "... (deleted)"), the variable is not set, with a warning; the others still are
	cp "$SBX" "$T/sbx-gone"
	run_sbx_gone() { sh -c 'exec 3<"$1" && rm -f "$1" && shift && exec /proc/self/fd/3 "$@"' sh "$T/sbx-gone" "$@" \
		>"$T/.stdout" 2>"$T/.stderr"; RC=$?; OUT=$(cat "$T/.stdout"); ERR=$(cat "$T/.stderr"); note "$OUT"; note "$ERR"; }
	run_sbx_gone --allow-write="$P" -- sh -c 'printf "[%s] [%s]\n" "$GIT_SSH_COMMAND" "$HTTPS_PROXY"'
	expect_contains "$OUT" "[] [http://127.0.0.1:3128]" "control: without sbx to show inside, GIT_SSH_COMMAND is not set"
	expect_contains "$ERR" "cannot find my own binary" "control: and sbx says why"
}
TESTS+=(git_ssh_command_only_where_it_works)

t_ready_after_empty_handed_message() { # bridge socat, no ports: the "L" with no descriptors and the "R" after it, read as one
	command -v strace >/dev/null || skip "strace is not installed"
	command -v socat >/dev/null || skip "socat is not installed"
	# sbx's first recvmsg (the handed-fd message) is held back 2 s, so the inner helper's "R"
	# (the command started) is already queued behind the "L" on the stream when sbx reads
	run_sbx_traced() {
		local out err
		out=$(timeout 60 strace -o /dev/null -e trace=recvmsg -e inject=recvmsg:delay_enter=2000000:when=1 \
			"$SBX" "$@" 2>"$T/err"); RC=$?
		OUT=$out; ERR=$(cat "$T/err")
		printf '$ strace ... sbx %s\n%s\n%s\n[exit %s]\n' "$*" "$OUT" "$ERR" "$RC"
	}
	run_sbx_traced --allow-write="$P" --bridge=socat --allow-domain=a.test -- sh -c 'echo cmd-ran; exit 7'
	expect_contains "$OUT" "cmd-ran" "the command ran"
	[ "$RC" = 7 ] || fail "sbx exits with the command's status 7 when L and R arrive together (got $RC): $ERR"
	expect_not_contains "$ERR" "could not build the sandbox" "and does not say the sandbox failed"
	# control: the same delay with bridge fd (descriptors in the message keep it apart)
	run_sbx_traced --allow-write="$P" --allow-domain=a.test -- sh -c 'echo cmd-ran; exit 7'
	[ "$RC" = 7 ] || fail "control: bridge fd exits 7 under the same delay (got $RC): $ERR"
}
TESTS+=(ready_after_empty_handed_message)
