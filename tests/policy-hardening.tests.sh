# tests/policy-hardening.tests.sh - what confused new users (issue #11 item 8) and
# secrets in the environment and in files (item 9): a byte-order mark, denies a
# mount cannot honour, malformed --explain targets, deny-env, deny-secret-file and
# srt's credentials block.
# Sourced by test.sh (uses run_sbx, run_ops, expect_*, policy, fail, note).

# refused PATTERN WHAT: the last run was refused as a policy error should be: exit
# 125, the command never ran, every stderr line is sbx's, one matches PATTERN (ERE)
refused() {
	expect_rc 125 "$2"
	[[ $OUT != *COMMAND-RAN* ]] || fail "$2: the command ran"
	grep -Eq -- "$1" <<<"$ERR" || fail "$2: no stderr line matching /$1/: $(head -c 300 <<<"$ERR")"
	[ -z "$(grep -v '^sbx: ' <<<"$ERR")" ] || fail "$2: stderr has lines not from sbx (bwrap's?): $ERR"
}

t_policy_bom() { # a UTF-8 byte-order mark at the start: JSON and the line format read as without it; elsewhere an error
	echo outside >"$O/f"
	printf '\xef\xbb\xbf{\n  "filesystem": {\n    "allowWrite": ["."],\n    "denyRead": ["%s"]\n  }\n}\n' "$O/f" >"$T/bom.json"
	run_ops -c "$T/bom.json" <<EOF
w write $P/w
o write $O/w
r read $O/f
EOF
	expect_ops <<EOF
w ok
o EROFS
r ok:
EOF
	# control: the same file without the mark gives the same effective policy
	tail -c +4 "$T/bom.json" >"$T/plain.json"
	run_sbx -c "$T/plain.json" --print=policy; expect_rc 0; local plain=$OUT
	run_sbx -c "$T/bom.json" --print=policy; expect_rc 0
	expect_eq "$OUT" "$plain" "the BOM-prefixed JSON reads as the plain one"
	printf '\xef\xbb\xbfallow-write .\n' >"$T/bom.policy"
	run_sbx -c "$T/bom.policy" -- sh -c 'echo x >w && echo COMMAND-RAN'
	expect_rc 0 "line format with a BOM"; expect_eq "$OUT" COMMAND-RAN "line format with a BOM"
	# a mark anywhere else stays an error, with the file and line
	printf 'allow-write .\n\xef\xbb\xbfdeny-read /x\n' >"$T/bom2.policy"
	run_sbx -c "$T/bom2.policy" -- echo COMMAND-RAN
	refused '^sbx: [^ ]*bom2\.policy:2: a byte-order mark' "a BOM on line 2"
	# UTF-16 (as some Windows editors save) is named as such
	printf '\xff\xfe{\0}\0\n\0' >"$T/utf16.json"
	run_sbx -c "$T/utf16.json" -- echo COMMAND-RAN
	refused '^sbx: [^ ]*utf16\.json:1: the file is UTF-16 .*save it as UTF-8' "a UTF-16 file"
}
TESTS+=(policy_bom)

t_deny_read_unhonourable() { # deny-read / and denies under /proc, /dev refused (file:line, 125); /sys honoured
	mkdir -p "$O/sec" && echo hidden >"$O/sec/k" && echo visible >"$O/sib"
	local bad i=0
	for bad in / /proc /proc/self/environ /dev /dev/shm; do
		i=$((i + 1))
		printf 'allow-write .\n# hide things\ndeny-read %s\n' "$bad" >"$T/bad$i.policy"
		run_sbx -c "$T/bad$i.policy" -- echo COMMAND-RAN
		refused "^sbx: [^ ]*bad$i\.policy:3: deny-read $bad: " "deny-read $bad"
	done
	expect_contains "$ERR" "minimal /dev" "the /dev refusal says why"
	printf 'deny-read /\n' >"$T/root.policy"
	run_sbx -c "$T/root.policy" -- true
	expect_contains "$ERR" "deny the directories that hold secrets instead" "deny-read / says what to do instead"
	printf 'allow-write .\ndeny-write /dev/shm\n' >"$T/dw.policy"
	run_sbx -c "$T/dw.policy" -- echo COMMAND-RAN
	refused "dw\.policy:2: deny-write /dev/shm: " "deny-write /dev/shm"
	# what leads there is refused too: a symlink to /, a glob matching /proc
	ln -s / "$O/rootlink"
	printf 'deny-read %s\n' "$O/rootlink" >"$T/link.policy"
	run_sbx -c "$T/link.policy" -- echo COMMAND-RAN
	refused "link\.policy:1: deny-read $O/rootlink: leads to /: " "a symlink to /"
	printf 'allow-write .\n' >"$T/base.policy"
	run_sbx --deny-read='/pro[c]' -c "$T/base.policy" -- echo COMMAND-RAN
	refused "deny-read /pro\[c\]: matches /proc: sbx mounts a fresh /proc" "a glob matching /proc"
	# JSON names the key
	printf '{"filesystem": {"denyRead": ["/proc/1"]}}\n' >"$T/proc.json"
	run_sbx -c "$T/proc.json" -- echo COMMAND-RAN
	refused "proc\.json:1:[0-9]+: filesystem\.denyRead /proc/1: sbx mounts a fresh /proc" "JSON denyRead /proc/1"
	# control: a plain deny works in the same run, and a sibling stays readable
	printf 'allow-write .\ndeny-read %s\n' "$O/sec" >"$T/ok.policy"
	run_ops -c "$T/ok.policy" <<EOF
k read $O/sec/k
l ls $O/sec
s read $O/sib
EOF
	expect_ops <<EOF
k ENOENT
l ok:
s ok:visible
EOF
	# /sys is honoured: a --tmpfs or an empty file hides it there
	local sysf=/sys/kernel/cpu_byteorder sysd=/sys/kernel/mm
	[ -r $sysf ] && [ -d $sysd ] || { note "no $sysf here: /sys part not run"; return 0; }
	printf 'deny-read %s\ndeny-read %s\n' "$sysf" "$sysd" >"$T/sys.policy"
	run_ops -c "$T/sys.policy" <<EOF
f read $sysf
d ls $sysd
c ls /sys/kernel
EOF
	expect_ops <<EOF
f ok:
d ok:
c ok:.*cpu_byteorder.*
EOF
}
TESTS+=(deny_read_unhonourable)

t_explain_malformed() { # --explain refuses host:80:80, [::1]x, host:, :80, empty (125, a message); good targets decide
	policy p <<<"allow-domain good.test"
	local t
	for t in host:80:80 '[::1]x' host: :80 '' '[nope]:80' host:080; do
		run_sbx -c "$T/p" --explain="$t"
		expect_rc 125 "--explain=$t"
		expect_contains "$ERR" "sbx: --explain=$t: " "--explain=$t names the target"
		expect_not_contains "$OUT" ":443" "--explain=$t decides nothing"
	done
	# controls
	run_sbx -c "$T/p" --explain=other.test:80
	expect_rc 1; expect_eq "$OUT" "other.test:80: deny (host is not on the allow list)" "a good target"
	run_sbx -c "$T/p" --explain='[::1]:8080'
	expect_rc 1; expect_contains "$OUT" "[::1]:8080: deny" "a bracketed IPv6 target"
	run_sbx -c "$T/p" --explain=::1
	expect_rc 1; expect_contains "$OUT" "[::1]:443: deny" "a bare IPv6 target"
}
TESTS+=(explain_malformed)

t_deny_env() { # deny-env: matching variables are gone inside (none shows in any /proc/*/environ); others pass; sbx's own stay
	policy p <<EOF
allow-write .
deny-env AWS_*
deny-env *_TOKEN
deny-env JAVA_TOOL_OPTIONS
deny-env *PROXY*
allow-domain good.test
EOF
	AWS_SECRET_ACCESS_KEY=sekrit-aws GH_TOKEN=sekrit-gh AWSISH=kept1 MY_TOKENS=kept2 \
		JAVA_TOOL_OPTIONS=-Dsekrit=jvm HTTP_PROXY=http://u:sekrit-proxy@corp:8080 \
		run_sbx -c "$T/p" -- sh -c 'env; echo ---; cat /proc/[0-9]*/environ | tr "\0" "\n"'
	expect_rc 0
	expect_not_contains "$OUT" sekrit "the environment of every process inside"
	expect_contains "$OUT" "AWSISH=kept1" "a non-matching variable passes"
	expect_contains "$OUT" "MY_TOKENS=kept2" "a name the pattern does not end with passes"
	expect_contains "$OUT" "HTTP_PROXY=http://127.0.0.1:3128" "sbx's own proxy variable, set after the deny"
	expect_contains "$OUT" "JAVA_TOOL_OPTIONS=-Dhttp.proxyHost=127.0.0.1" "sbx's JVM properties, without the denied value"
	expect_contains "$OUT" "SANDBOX_RUNTIME=1" "sbx's own variables"
	# once the options are rendered, sbx forgets the denied values (overwritten in
	# place), so neither sbx, nor bwrap, nor the proxy (which parses what the command
	# sends) holds them; control: a variable not denied is still there to read. The command
	# connects once: sbx forks the proxy on the first connection.
	AWS_SECRET_ACCESS_KEY=sekrit-aws OTHER_VAR=kept3 start_bg "$T/bg.out" -c "$T/p" -- \
		sh -c 'curl -s -m 5 -o /dev/null http://good.test/; exec sleep "$1"' sh "${TOKBASE}3"
	local i c proxy= bw= envs=
	for i in $(seq 50); do
		for c in $(cat /proc/$BGPID/task/*/children 2>/dev/null); do
			case $(cat /proc/$c/comm 2>/dev/null) in sbx) proxy=$c ;; bwrap) bw=$c ;; esac
		done
		[ -n "$proxy" ] && [ -n "$bw" ] && break; sleep 0.1
	done
	[ -n "$proxy" ] && [ -n "$bw" ] || { kill $BGPID; fail "no proxy or bwrap process found under sbx ($BGPID)"; }
	for c in $BGPID $bw $proxy; do envs+=$(tr '\0' '\n' <"/proc/$c/environ")$'\n'; done
	kill -TERM $BGPID; wait_pid $BGPID 10
	[ "$(grep -c '^OTHER_VAR=kept3$' <<<"$envs")" = 3 ] || fail "control: the three environments were not read: $envs"
	expect_not_contains "$envs" sekrit "sbx's, bwrap's and the proxy's environments"
	# weaker-nested-sandbox shows the host's /proc: sbx warns that the caller's other
	# processes' environments may be readable there (whether they are depends on the
	# kernel's ptrace checks; sbx's own hold nothing, as above)
	policy w <<EOF
allow-write .
deny-env AWS_*
weaker-nested-sandbox
EOF
	AWS_SECRET_ACCESS_KEY=sekrit-aws run_sbx -c "$T/w" -- sh -c 'env; echo DONE'
	expect_rc 0 "weaker-nested-sandbox"; expect_contains "$OUT" DONE "weaker-nested-sandbox"
	expect_not_contains "$OUT" sekrit "the command's environment under weaker-nested-sandbox"
	expect_contains "$ERR" "deny-env with weaker-nested-sandbox: the command sees the host's /proc" "the warning"
	# control: without the denies the same variables come through
	policy q <<<"allow-write ."
	AWS_SECRET_ACCESS_KEY=sekrit-aws GH_TOKEN=sekrit-gh run_sbx -c "$T/q" -- sh -c 'env'
	expect_contains "$OUT" "AWS_SECRET_ACCESS_KEY=sekrit-aws" "control: no deny-env"
	expect_contains "$OUT" "GH_TOKEN=sekrit-gh" "control: no deny-env"
	# --print=argv shows the --unsetenv the run uses; srt's JSON form gives the same policy
	AWS_SECRET_ACCESS_KEY=x run_sbx -c "$T/p" --print=argv -- true
	expect_contains "$OUT" "--unsetenv AWS_SECRET_ACCESS_KEY" "--print=argv"
	printf '{"credentials": {"envVars": [{"name": "AWS_SECRET_ACCESS_KEY", "mode": "deny"}, {"name": "GH_*", "mode": "deny"}]}}\n' >"$T/env.json"
	AWS_SECRET_ACCESS_KEY=sekrit-aws GH_TOKEN=sekrit-gh OTHER=kept run_sbx -c "$T/env.json" -- sh -c 'env'
	expect_rc 0; expect_not_contains "$OUT" sekrit "JSON credentials.envVars"; expect_contains "$OUT" OTHER=kept "JSON control"
	# masking is refused, with the reason
	printf '{"credentials": {"envVars": [{"name": "GH_TOKEN", "mode": "mask"}]}}\n' >"$T/mask.json"
	run_sbx -c "$T/mask.json" -- echo COMMAND-RAN
	refused 'mask\.json:1:[0-9]+: credentials\.envVars\[0\]\.mode: credential masking needs TLS termination' "mode mask"
	printf '{"credentials": {"awsPairs": []}}\n' >"$T/aws.json"
	run_sbx -c "$T/aws.json" -- echo COMMAND-RAN
	refused 'aws\.json:1:[0-9]+: credentials\.awsPairs: .*TLS termination' "awsPairs"
	# deny-env * empties the environment but for sbx's own; the command still runs
	policy all <<EOF
allow-write .
deny-env *
EOF
	SOMETHING=x JAVA_TOOL_OPTIONS=-Dmine=1 run_sbx -c "$T/all" -- /usr/bin/env
	expect_rc 0 "deny-env *"
	expect_eq "$(grep -v -E '^(SANDBOX_RUNTIME|TMPDIR|PWD|[A-Za-z_]+_PROXY|[a-z_]+_proxy|CLOUDSDK_PROXY_[A-Z]+|NODE_USE_ENV_PROXY|GIT_SSH_COMMAND)=' <<<"$OUT" |
		grep -v '^JAVA_TOOL_OPTIONS=-Dhttp.proxyHost=127.0.0.1 ')" "" "deny-env *: only sbx's (its own, the proxy's, bwrap's PWD) are left"
	printf 'deny-env GH-TOKEN\n' >"$T/badname.policy"
	run_sbx -c "$T/badname.policy" -- echo COMMAND-RAN
	refused 'badname\.policy:1: deny-env GH-TOKEN: ' "a name with a dash"
}
TESTS+=(deny_env)

t_deny_secret_file() { # deny-secret-file: hidden, and no allow-read/allow-write below reopens it (deny-read's does)
	mkdir -p "$H/.aws" "$O/vault/sub" "$O/plain/sub"
	echo aws-sekrit >"$H/.aws/credentials"; echo region >"$H/.aws/config"
	echo vault-sekrit >"$O/vault/sub/x"; echo plain-open >"$O/plain/sub/x"
	policy p <<EOF
allow-write .
deny-secret-file ~/.aws/credentials
deny-secret-file $O/vault
allow-read $O/vault/sub
allow-write $O/vault/sub
deny-read $O/plain
allow-read $O/plain/sub
EOF
	run_ops -c "$T/p" <<EOF
c read $H/.aws/credentials
g read $H/.aws/config
v read $O/vault/sub/x
vw write $O/vault/sub/y
vl ls $O/vault
p read $O/plain/sub/x
pl ls $O/plain
EOF
	expect_ops <<EOF
c ok:
g ok:region
v ENOENT
vw ENOENT|EROFS
vl ok:
p ok:plain-open
pl ok:sub
EOF
	[ ! -e "$O/vault/sub/y" ] || fail "a write reached the host under a secret"
	# disable-filesystem drops every rule but the secrets (srt drops those too)
	policy d <<EOF
disable-filesystem
deny-secret-file ~/.aws/credentials
EOF
	# (the tamper check refuses to run with the whole disk writable, so the argv shows it)
	run_sbx -c "$T/d" --print=argv -- true
	expect_rc 0 "disable-filesystem --print=argv"
	expect_contains "$OUT" "--bind / /" "disable-filesystem"
	grep -Eq -- "--ro-bind [^ ]+/empty $H/.aws/credentials" <<<"$OUT" || fail "disable-filesystem dropped the secret: $OUT"
	expect_not_contains "$OUT" "$H/.aws/config" "its sibling"
	# a secret that does not exist: one warning line, and the command runs
	policy m <<EOF
allow-write .
deny-secret-file ~/.no-such-secret
EOF
	run_sbx -c "$T/m" -- echo COMMAND-RAN
	expect_rc 0; expect_eq "$OUT" COMMAND-RAN "a missing secret"
	expect_eq "$(grep -c . <<<"$ERR")" 1 "one warning line"
	expect_contains "$ERR" "deny-secret-file $H/.no-such-secret ($T/m:2): does not exist" "the warning names it"
	# srt's JSON form, and both printers round-trip it
	printf '{"filesystem": {"allowWrite": ["."], "allowRead": ["%s"]},\n "credentials": {"files": [{"path": "%s", "mode": "deny"}]}}\n' \
		"$O/vault/sub" "$O/vault" >"$T/s.json"
	run_ops -c "$T/s.json" <<EOF
v read $O/vault/sub/x
w write $P/w
EOF
	expect_ops <<EOF
v ENOENT
w ok
EOF
	run_sbx -c "$T/p" --print=json; expect_rc 0; echo "$OUT" >"$T/p.json"
	expect_contains "$OUT" '"credentials": {' "--print=json has srt's credentials block"
	expect_contains "$OUT" "{ \"path\": \"$O/vault\", \"mode\": \"deny\" }" "--print=json files entry"
	run_sbx -c "$T/p" --print=policy; expect_rc 0; local lines=$OUT
	expect_contains "$lines" "deny-secret-file $O/vault" "--print=policy"
	run_sbx -c "$T/p.json" --print=policy; expect_rc 0
	expect_eq "$OUT" "$lines" "the printed JSON reads back as the same policy"
	if [ -n "$PY" ]; then "$PY" -m json.tool "$T/p.json" >/dev/null || fail "--print=json is not valid JSON"; fi
}
TESTS+=(deny_secret_file)

t_macos_weakenings_said() { # weaker-network-isolation and allow-apple-events: srt's warning on --print=policy/json and --check
	local pol=$T/weak.pol
	printf 'allow-write .\nweaker-network-isolation\nallow-apple-events\n' >"$pol"
	run_sbx -c "$pol" --print=policy
	expect_rc 0 "--print=policy"
	expect_contains "$OUT" "allow-apple-events" "the policy is printed as it is"
	expect_contains "$ERR" "warning: weaker-network-isolation (macOS)" "the trustd opt-in is said"
	expect_contains "$ERR" "removes code-execution isolation" "and the Apple Events one, with srt's words"
	run_sbx -c "$pol" --print=json
	expect_contains "$ERR" "warning: allow-apple-events" "--print=json says it too"
	run_sbx -c "$pol" --check
	expect_contains "$ERR" "warning: weaker-network-isolation" "--check says it"
	expect_not_contains "$OUT" "warning" "on stderr, so --check's ok/FAIL lines stay as they are"
	# control: a policy without them says nothing
	run_sbx --allow-write=. --print=policy
	expect_not_contains "$ERR" "warning" "no warning without the opt-ins"
}
TESTS+=(macos_weakenings_said)

t_deny_read_directory_form() { # srt's matching: X/** hides what lies beneath directories X, never a file named X; an allow-read carve-out keeps the glob's own matches masked; an empty X is left alone
	mkdir -p "$P/pkg/a/build/public/sub" "$P/pkg/b/build" "$P/pkg/empty/build"
	echo OUT-A >"$P/pkg/a/build/1.out"; echo OUT-B >"$P/pkg/b/build/1.out"
	echo OK >"$P/pkg/a/build/public/ok.txt"; echo IN >"$P/pkg/a/build/public/sub/in.txt"
	echo FILE >"$P/pkg/build"; echo IDX >"$P/pkg/a/index.ts"
	mkdir -p "$H/deep/x/y"; echo PEM1 >"$H/deep/a.pem"; echo PEM2 >"$H/deep/x/y/b.pem"; echo TXT >"$H/deep/x/c.txt"
	policy p <<'EOF'
allow-write .
deny-read ./**/build/**
allow-read ./pkg/a/build/public
deny-read ~/deep/**.pem
EOF
	run_ops -c "$T/p" <<EOF
out_a read $P/pkg/a/build/1.out
out_b read $P/pkg/b/build/1.out
file_named_build read $P/pkg/build
carve_listing ls $P/pkg/a/build/public
carve_file read $P/pkg/a/build/public/ok.txt
carve_sub ls $P/pkg/a/build/public/sub
empty_build create $P/pkg/empty/build/new
ctl_index read $P/pkg/a/index.ts
pem_top read $H/deep/a.pem
pem_deep read $H/deep/x/y/b.pem
ctl_txt read $H/deep/x/c.txt
EOF
	expect_ops <<'EOF'
out_a ENOENT
out_b ENOENT
file_named_build ok:FILE
carve_listing ok:((ok.txt|sub),?)+
carve_file ok:
carve_sub ok:
empty_build ok
ctl_index ok:IDX
pem_top ok:
pem_deep ok:
ctl_txt ok:TXT
EOF
	# control: without the trailing slash-star-star, the file named build is hidden too
	policy q <<'EOF'
deny-read ./**/build
EOF
	run_ops -c "$T/q" <<EOF
file_named_build read $P/pkg/build
out_a read $P/pkg/a/build/1.out
EOF
	expect_ops <<'EOF'
file_named_build ok:
out_a ENOENT
EOF
	# the policy prints as it was written
	run_sbx -c "$T/p" --print=policy
	expect_contains "$OUT" "deny-read $P/**/build/**" "--print=policy keeps the directory form"
	# a deny naming what lies beneath a file names nothing: said, as any deny that names nothing
	policy f <<<"deny-read ./pkg/build/**"
	run_sbx -c "$T/f" -- cat "$P/pkg/build"
	expect_rc 0 "deny-read FILE/**"
	expect_eq "$OUT" "FILE" "nothing lies beneath a file: it stays readable"
	expect_contains "$ERR" "is not a directory, so nothing lies beneath it to deny" "the warning"
}
TESTS+=(deny_read_directory_form)
