# tests/clients.tests.sh - more real clients through the proxy: git over SSH to a real sshd
# (GIT_SSH_COMMAND, sbx --connect as the ProxyCommand), pip against a local PEP 503 index, npm
# against a local registry (tests/helpers/npm_registry.py; directly and through a parent proxy),
# and node's built-in http through a CONNECT tunnel to the proxy its environment names.
# Sourced by test.sh (uses net_up, fail, skip, note, expect_*, and wait_port from
# tests/proxy.tests.sh, which is sourced after this file: it is looked up when called).
# Only loopback and the test host $NSIP are ever contacted; names come from the private
# hosts file $T/hosts. Servers run in $NS as background jobs of the test's subshell,
# so net_up's EXIT trap (kill $(jobs -p), then ip netns del) ends them.

# sbx_pol POLICY SHELL-SCRIPT : like sbx_net, under the policy file $T/POLICY; sets RC OUT ERR
sbx_pol() {
	printf '$ sbx -c %s -- sh -c %q\n' "$1" "$2"
	timeout -k 5 "$TMO" unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$T/hosts" \
		"$SBX" -c "$T/$1" -- sh -c "$2" >"$T/.stdout" 2>"$T/.stderr"
	RC=$?; OUT=$(cat "$T/.stdout"); ERR=$(cat "$T/.stderr")
	echo "  [exit $RC]"; log_file out "$T/.stdout"; log_file err "$T/.stderr"
	[ "$RC" != 124 ] || note "(timed out after ${TMO}s)"
}

t_proxy_git_clone_ssh() { # git clone over SSH from a real sshd via GIT_SSH_COMMAND (sbx --connect, socat hidden); denied.test and *:22 refused with the reason
	local sshd
	sshd=$(command -v sshd || echo /usr/sbin/sshd)
	[ -x "$sshd" ] || skip "sshd (openssh-server) not installed"
	command -v ssh >/dev/null && command -v ssh-keygen >/dev/null || skip "ssh (openssh-client) not installed"
	command -v git >/dev/null || skip "git not installed"
	net_up
	git_env
	# the repository: two commits, served bare from $T
	mkdir -p "$T/src" "$T/git" "$T/ssh"
	git -C "$T/src" init -q -b main && echo "hello over ssh" >"$T/src/README" && git -C "$T/src" add . &&
		git -C "$T/src" commit -qm one && echo two >>"$T/src/README" && git -C "$T/src" commit -qam two ||
		fail "host: cannot make the source repository"
	git clone -q --bare "$T/src" "$T/git/repo.git" || fail "host: cannot make the bare repository"
	local head readme
	head=$(git -C "$T/src" rev-parse HEAD); readme=$(cat "$T/src/README")
	# throwaway keys; the client trusts exactly this host key for allowed.test and denied.test
	ssh-keygen -q -t ed25519 -N '' -C sbx-test-host -f "$T/ssh/host_key" &&
		ssh-keygen -q -t ed25519 -N '' -C sbx-test-client -f "$T/ssh/client_key" || fail "ssh-keygen failed"
	cp "$T/ssh/client_key.pub" "$T/ssh/authorized_keys"
	printf 'allowed.test,denied.test %s\n' "$(cut -d' ' -f1,2 "$T/ssh/host_key.pub")" >"$T/ssh/known_hosts"
	# sshd's view of the system (its own mount namespace, from ip netns exec): a user "git" (uid 0,
	# as the test runs as root) in a private passwd, and a fresh /run for its privsep dir /run/sshd
	cp /etc/passwd "$T/ssh/passwd"
	printf 'git:x:0:0:sbx test git:%s:/bin/sh\n' "$T/ssh" >>"$T/ssh/passwd"
	grep -q '^sshd:' "$T/ssh/passwd" || echo 'sshd:x:65534:65534:privsep:/run/sshd:/usr/sbin/nologin' >>"$T/ssh/passwd"
	cat >"$T/ssh/sshd_config" <<EOF
ListenAddress $NSIP:22
HostKey $T/ssh/host_key
AuthorizedKeysFile $T/ssh/authorized_keys
PidFile $T/ssh/sshd.pid
AllowUsers git
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
LogLevel VERBOSE
EOF
	local in_sshd_ns='mount -t tmpfs -o mode=755 sbxt-run /run && mkdir -m 755 /run/sshd &&
		mount --bind "$1/passwd" /etc/passwd && shift && exec "$@"'
	ip netns exec "$NS" sh -c "$in_sshd_ns" sh "$T/ssh" "$sshd" -t -f "$T/ssh/sshd_config" 2>"$T/sshd-t.err" ||
		{ log_file sshd-t "$T/sshd-t.err"; fail "sshd -t rejects the test config"; }
	ip netns exec "$NS" sh -c "$in_sshd_ns" sh "$T/ssh" "$sshd" -D -e -f "$T/ssh/sshd_config" >"$T/sshd.log" 2>&1 &
	wait_port 22 10 || { log_file sshd "$T/sshd.log"; fail "the test sshd did not start"; }
	# host side control (no proxy, no sandbox): the sshd serves the repo to the client key
	local host_refs
	host_refs=$(GIT_SSH_COMMAND="ssh -F none -i $T/ssh/client_key -o UserKnownHostsFile=$T/ssh/known_hosts -o HostKeyAlias=allowed.test -o StrictHostKeyChecking=yes -o BatchMode=yes" \
		git ls-remote "git@$NSIP:$T/git/repo.git" 2>&1)
	expect_contains "$host_refs" "$head	refs/heads/main" "control: on the host, the test sshd serves the repository"

	local socat
	socat=$(command -v socat 2>/dev/null || echo /usr/bin/socat)
	if [ -x "$socat" ] && "$socat" -V >/dev/null 2>&1; then note "socat works on the host: $socat (hidden inside)"
	else note "socat is not installed here: the hidden-socat check is vacuous"; fi
	policy net2 <<EOF
allow-write .
allow-domain allowed.test
deny-domain denied.test "denied.test is off limits"
deny-read $socat
EOF
	echo "deny-read $socat" >>"$T/net"     # net_up's policy, which denies *:22
	# what the sandboxed ssh needs on top of sbx's GIT_SSH_COMMAND: the key and the host key
	local sshopts="-F none -i $T/ssh/client_key -o UserKnownHostsFile=$T/ssh/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes"
	local script='echo "[$GIT_SSH_COMMAND]"
		command -v socat >/dev/null && socat -V >/dev/null 2>&1 && echo socat-usable
		export GIT_SSH_COMMAND="$GIT_SSH_COMMAND '"$sshopts"'"
		git clone -q git@allowed.test:'"$T"'/git/repo.git clone 2>&1; echo "clone=$?"
		git clone -q git@denied.test:'"$T"'/git/repo.git denied 2>&1; echo "denied=$?"
		[ -e denied ] && echo denied-dir-exists
		[ -f clone/README ] && sed "s/^/readme: /" clone/README
		git -C clone log -1 --format="head=%H" 2>&1; git -C clone rev-list --count HEAD | sed "s/^/commits=/"'
	sbx_pol net2 "$script"
	expect_rc 0
	expect_contains "$OUT" "ProxyCommand='" "GIT_SSH_COMMAND is set by sbx"
	expect_contains "$OUT" " --connect %h %p" "GIT_SSH_COMMAND's ProxyCommand is sbx --connect"
	expect_not_contains "$OUT" socat-usable "socat is hidden inside (deny-read)"
	expect_contains "$OUT" "clone=0" "git clone git@allowed.test over SSH through the proxy"
	expect_contains "$OUT" "readme: hello over ssh" "the clone's README"
	[ "$(sed -n 's/^readme: //p' <<<"$OUT")" = "$readme" ] || fail "the clone's README differs from the source's"
	expect_contains "$OUT" "head=$head" "the clone's HEAD commit is the source's"
	expect_contains "$OUT" "commits=2" "the clone has both commits"
	grep -q '^denied=128$' <<<"$OUT" || fail "clone from denied.test:22: expected git exit 128, got $(grep '^denied=' <<<"$OUT")"
	expect_contains "$OUT" "denied.test is off limits" "the denied.test refusal carries the policy reason"
	expect_not_contains "$OUT" denied-dir-exists "a refused clone left a directory"
	# the sshd saw the sandbox's key once, from the host side of the veth (the proxy)
	[ "$(grep -c 'Accepted publickey for git from 10\.200\.' "$T/sshd.log")" = 2 ] ||
		{ log_file sshd "$T/sshd.log"; fail "sshd did not accept exactly the host-side and the sandboxed connection"; }

	# the default net policy (deny-domain *:22): the same clone from allowed.test is refused, with the reason
	rm -rf "$P/clone" "$P/denied"
	sbx_pol net "$script"
	expect_rc 0
	expect_not_contains "$OUT" socat-usable "socat is hidden inside (net policy)"
	grep -q '^clone=128$' <<<"$OUT" || fail "clone from allowed.test:22 under deny *:22: expected git exit 128, got $(grep '^clone=' <<<"$OUT")"
	expect_contains "$OUT" "SSH is blocked; use an https:// remote" "the *:22 refusal carries the policy reason"
	expect_not_contains "$OUT" "readme:" "a refused clone produced a work tree"
	[ "$(grep -c 'Accepted publickey' "$T/sshd.log")" = 2 ] || fail "a connection refused by the policy reached the sshd"
}

TESTS+=(proxy_git_clone_ssh)

t_proxy_pip_download() { # pip download from a local PEP 503 index through HTTP_PROXY: the wheel arrives intact (sha256); denied.test -> 403 in pip's output
	net_up
	# the interpreters to try: python3 on PATH, and Debian's /usr/bin/python3 when it is another one (CI's python3-pip)
	local py pys= seen=
	for py in "$(command -v python3)" /usr/bin/python3; do
		[ -x "$py" ] || continue
		[[ " $seen " == *" $(realpath "$py") "* ]] && continue; seen+=" $(realpath "$py")"
		"$py" -m pip --version >/dev/null 2>&1 && pys+=" $py" && note "pip: $py: $("$py" -m pip --version)"
	done
	[ -n "$pys" ] || skip "pip not available (python3 -m pip --version)"
	# a tiny pure-python wheel, built by hand (no network, no build backend), and a PEP 503 index for it
	mkdir -p "$T/pypi/simple/sbxdemo" "$T/pypi/files"
	local whl=sbxdemo-0.1-py3-none-any.whl
	python3 - "$T/pypi/files/$whl" <<'PYEOF' || fail "host: cannot build the test wheel"
import base64, hashlib, sys, zipfile
files = {
    "sbxdemo/__init__.py": b'GREETING = "hello from a local index"\n',
    "sbxdemo-0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: sbxdemo\nVersion: 0.1\nSummary: sbx test wheel\n",
    "sbxdemo-0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: sbx-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = ["%s,sha256=%s,%d" % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode(), len(d))
          for n, d in files.items()]
files["sbxdemo-0.1.dist-info/RECORD"] = ("\n".join(record + ["sbxdemo-0.1.dist-info/RECORD,,"]) + "\n").encode()
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for n, d in files.items():
        z.writestr(zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0)), d, zipfile.ZIP_DEFLATED)
PYEOF
	local sum; sum=$(sha256sum <"$T/pypi/files/$whl" | cut -c1-64)
	printf '<!DOCTYPE html>\n<html><body><a href="sbxdemo/">sbxdemo</a></body></html>\n' >"$T/pypi/simple/index.html"
	printf '<!DOCTYPE html>\n<html><body><a href="../../files/%s#sha256=%s">%s</a></body></html>\n' "$whl" "$sum" "$whl" \
		>"$T/pypi/simple/sbxdemo/index.html"
	ip netns exec "$NS" python3 -m http.server 8020 --bind "$NSIP" --directory "$T/pypi" >"$T/pypi.log" 2>&1 &
	wait_port 8020 10 || { log_file pypi "$T/pypi.log"; fail "the test index did not start"; }
	echo "$NSIP pypi.allowed.test" >>"$T/hosts"
	# control (host side, no proxy): the server answers for denied.test too
	local host_out
	host_out=$(curl -s -m 5 --noproxy '*' -H "Host: denied.test:8020" "http://$NSIP:8020/simple/sbxdemo/")
	expect_contains "$host_out" "$whl#sha256=$sum" "control: on the host, the index lists the wheel for any Host"
	# pip's own configuration from this machine stays out (PIP_FIND_LINKS, pip.conf, ...)
	unset $(env | sed -n 's/^\(PIP_[A-Z0-9_]*\)=.*/\1/p')
	export PIP_CONFIG_FILE=/dev/null
	local pipargs="download --no-deps --no-cache-dir --disable-pip-version-check --retries 0 --timeout 20 -vv"
	sbx_net 'echo "HTTP_PROXY=$HTTP_PROXY"; n=0
		for py in '"$pys"'; do n=$((n + 1))
			"$py" -m pip '"$pipargs"' --trusted-host pypi.allowed.test --index-url http://pypi.allowed.test:8020/simple/ -d "dl$n" sbxdemo==0.1 2>&1; echo "allowed$n=$?"
			for f in "dl$n"/*; do [ -f "$f" ] && echo "got$n: ${f#*/} $(sha256sum <"$f" | cut -c1-64)"; done
		done; echo end'
	expect_rc 0
	expect_contains "$OUT" "HTTP_PROXY=http://127.0.0.1:3128" "HTTP_PROXY is set inside"
	local n=0
	for py in $pys; do n=$((n + 1))
		grep -q "^allowed$n=0$" <<<"$OUT" || fail "$py -m pip download from pypi.allowed.test: expected exit 0, got $(grep "^allowed$n=" <<<"$OUT")"
		expect_contains "$OUT" "got$n: $whl $sum" "$py: the downloaded wheel's sha256 is the original's"
		[ "$(grep -c "^got$n: " <<<"$OUT")" = 1 ] || fail "$py: pip downloaded more than the one wheel"
	done
	[ "$(grep -c "^ *http://127.0.0.1:3128 \"GET http://pypi.allowed.test:8020/files/$whl HTTP/1.1\" 200 " <<<"$OUT")" = "$n" ] ||
		fail "pip did not fetch the wheel through the proxy (absolute-URI GET to 127.0.0.1:3128) for every interpreter"
	grep -q "\"GET /files/$whl HTTP/1.1\" 200" "$T/pypi.log" || { log_file pypi "$T/pypi.log"; fail "control: the index server saw no wheel download"; }
	local before; before=$(grep -c '"GET ' "$T/pypi.log")
	# the same from an index on a denied name: the proxy refuses, pip says so, nothing arrives
	sbx_net 'n=0
		for py in '"$pys"'; do n=$((n + 1))
			"$py" -m pip '"$pipargs"' --trusted-host denied.test --index-url http://denied.test:8020/simple/ -d "denied$n" sbxdemo==0.1 2>&1; echo "denied$n=$?"
			for f in "denied$n"/*; do [ -f "$f" ] && echo "denied-got$n: $f"; done
		done; echo end'
	expect_rc 0
	n=0
	for py in $pys; do n=$((n + 1))
		grep -q "^denied$n=0$" <<<"$OUT" && fail "$py -m pip download from denied.test succeeded"
		grep -q "^denied$n=[0-9]" <<<"$OUT" || fail "$py: no exit status for the denied download"
	done
	expect_not_contains "$OUT" "denied-got" "a wheel arrived from denied.test"
	# pip -vv logs urllib3's request line (to the proxy, with the status) and why the page was skipped
	[ "$(grep -c '^ *http://127.0.0.1:3128 "GET http://denied.test:8020/simple/sbxdemo/ HTTP/1.1" 403 ' <<<"$OUT")" = "$n" ] ||
		fail "pip does not show the proxy's 403 for the denied index page for every interpreter"
	[ "$(grep -c '^ *Could not fetch URL http://denied.test:8020/simple/sbxdemo/: 403 Client Error: Forbidden' <<<"$OUT")" = "$n" ] ||
		fail "pip does not report the refusal (403 Forbidden) for every interpreter"
	[ "$(grep -c '"GET ' "$T/pypi.log")" = "$before" ] || fail "a request for denied.test reached the index server"
}

TESTS+=(proxy_pip_download)

# npm_up: node and npm, net_up (unless a test network is up already: parent_up's), a tiny package packed offline with `npm pack` ($T/reg/sbxdemo-1.0.0.tgz;
# its integrity in NPM_INTEGRITY, its sha1 in NPM_SHASUM), and tests/helpers/npm_registry.py
# serving it on $NSIP:8030 in the test namespace, logging to $T/reg.log
npm_up() {
	command -v node >/dev/null || skip "node not installed"
	command -v npm >/dev/null || skip "npm not installed"
	[ -n "${NS:-}" ] || net_up
	note "node $(node --version), npm $(npm --version)"
	mkdir -p "$T/pkgsrc" "$T/reg"
	cat >"$T/pkgsrc/package.json" <<'PKG'
{ "name": "sbxdemo", "version": "1.0.0", "description": "sbx test package", "main": "index.js", "license": "MIT" }
PKG
	echo 'module.exports = "hello from a local npm registry";' >"$T/pkgsrc/index.js"
	# packing is offline: no registry is asked
	(cd "$T/pkgsrc" && npm pack --json --ignore-scripts --pack-destination "$T/reg" --cache "$T/hostcache" \
		--loglevel=error) >"$T/pack.json" 2>"$T/pack.err" || { log_file pack "$T/pack.err"; fail "host: npm pack failed"; }
	[ -f "$T/reg/sbxdemo-1.0.0.tgz" ] || fail "host: npm pack made no sbxdemo-1.0.0.tgz"
	NPM_INTEGRITY=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["integrity"])' "$T/pack.json")
	NPM_SHASUM=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["shasum"])' "$T/pack.json")
	[ -n "$NPM_INTEGRITY" ] && [ -n "$NPM_SHASUM" ] || fail "host: npm pack --json gave no integrity"
	: >"$T/reg.log"
	ip netns exec "$NS" python3 "$HERE/tests/helpers/npm_registry.py" "$NSIP" 8030 "$T/reg.log" "$T/reg/sbxdemo-1.0.0.tgz" \
		>"$T/reg.err" 2>&1 &
	wait_port 8030 10 || { log_file reg "$T/reg.err"; fail "the test registry did not start"; }
	# control (host side, no proxy, no sandbox): the packument carries npm pack's own integrity and
	# sha1, and a tarball URL on the name asked for
	local pm
	pm=$(curl -s -m 5 --noproxy '*' -H "Host: npm.allowed.test:8030" "http://$NSIP:8030/sbxdemo")
	expect_contains "$pm" "\"integrity\": \"$NPM_INTEGRITY\"" "control: the packument's dist.integrity is npm pack's"
	expect_contains "$pm" "\"shasum\": \"$NPM_SHASUM\"" "control: the packument's dist.shasum is npm pack's"
	expect_contains "$pm" '"tarball": "http://npm.allowed.test:8030/sbxdemo/-/sbxdemo-1.0.0.tgz"' "control: dist.tarball on the name asked for"
	: >"$T/reg.log"
	# npm's own configuration from this machine stays out (a user or global .npmrc, npm_config_*)
	unset $(env | sed -n 's/^\([nN][pP][mM]_[cC][oO][nN][fF][iI][gG]_[A-Za-z0-9_]*\)=.*/\1/p')
	: >"$T/npmrc.user"; : >"$T/npmrc.global"
	export NPM_CONFIG_USERCONFIG=$T/npmrc.user NPM_CONFIG_GLOBALCONFIG=$T/npmrc.global
}

# npm_script REGISTRY-URL DIR: a shell script that runs `npm install sbxdemo` from REGISTRY-URL in
# ./DIR (its cache in ./DIR.cache, both in the project: allow-write .), no retries, `npm http
# fetch` lines shown; then prints "DIR=<npm's exit status>", and what node reads of the package
npm_script() {
	printf '%s' 'mkdir -p '"$2"' && cd '"$2"' &&
		npm install --registry '"$1"' --cache "$PWD/../'"$2"'.cache" --no-audit --no-fund --no-update-notifier \
			--fetch-retries 0 --fetch-timeout 20000 --loglevel http sbxdemo 2>&1; echo "'"$2"'=$?"
		[ -f node_modules/sbxdemo/package.json ] && echo "'"$2"'-installed"
		node -e "console.log(\"'"$2"'-says: \" + require(\"sbxdemo\"))" 2>/dev/null; cd ..'
}

t_proxy_npm_install() { # npm install from a registry in the test namespace through HTTP_PROXY (npm reads it itself): the package on disk, as packed; a registry on denied.test: E403, the violations block names the host
	npm_up
	echo "$NSIP npm.allowed.test" >>"$T/hosts"
	sbx_pol net 'echo "HTTP_PROXY=$HTTP_PROXY"; printf "npm config proxy: "; npm config get proxy --no-update-notifier --cache "$PWD/config.cache"
		'"$(npm_script http://npm.allowed.test:8030/ app)"'
		'"$(npm_script http://denied.test:8030/ denied)"'
		echo end'
	expect_rc 0
	expect_contains "$OUT" "HTTP_PROXY=http://127.0.0.1:3128" "HTTP_PROXY is set inside"
	note "npm's proxy setting inside: $(sed -n 's/^npm config proxy: //p' <<<"$OUT") (so the proxy comes from HTTP_PROXY, read by npm itself; no --proxy given)"
	grep -q '^app=0$' <<<"$OUT" || fail "npm install from npm.allowed.test: expected exit 0, got $(grep '^app=' <<<"$OUT")"
	expect_contains "$OUT" "app-installed" "the package is in node_modules"
	expect_contains "$OUT" "app-says: hello from a local npm registry" "node loads the installed package"
	cmp -s "$T/pkgsrc/index.js" "$P/app/node_modules/sbxdemo/index.js" || fail "the installed index.js differs from the packed one"
	grep -q "\"integrity\": \"$NPM_INTEGRITY\"" "$P/app/package-lock.json" ||
		fail "package-lock.json does not record npm pack's integrity"
	grep -q '"resolved": "http://npm.allowed.test:8030/sbxdemo/-/sbxdemo-1.0.0.tgz"' "$P/app/package-lock.json" ||
		fail "package-lock.json does not record the tarball's URL"
	expect_contains "$OUT" "npm http fetch GET 200 http://npm.allowed.test:8030/sbxdemo/-/sbxdemo-1.0.0.tgz" "npm fetched the tarball"
	# the registry saw both requests, for the name (through the proxy: nothing else routes there)
	grep -q '^GET /sbxdemo host=npm.allowed.test:8030 200$' "$T/reg.log" &&
		grep -q '^GET /sbxdemo/-/sbxdemo-1.0.0.tgz host=npm.allowed.test:8030 200$' "$T/reg.log" ||
		{ log_file reg "$T/reg.log"; fail "the registry did not serve the packument and the tarball to npm"; }
	# the attack: the same install from a registry on a denied name
	grep -q '^denied=0$' <<<"$OUT" && fail "npm install from denied.test succeeded"
	grep -q '^denied=[0-9]' <<<"$OUT" || fail "no exit status for the denied install"
	expect_not_contains "$OUT" "denied-installed" "a package arrived from denied.test"
	grep -Eq '^npm (error|ERR!) code E403$' <<<"$OUT" || fail "npm does not report the proxy's 403 (npm error code E403; npm 9: npm ERR!)"
	expect_contains "$OUT" "http://denied.test:8030/sbxdemo" "npm names the refused URL"
	expect_contains "$ERR" "<sandbox_violations>" "the violations block"
	expect_contains "$ERR" "deny network-outbound denied.test:8030 (denied.test is off limits)" "the block names the host, with the policy's reason"
	expect_not_contains "$ERR" "npm.allowed.test" "the allowed registry is not a violation"
	expect_not_contains "$ERR" "deny mkdir" "npm wrote outside the project (its cache is in it)"
	! grep -q denied.test "$T/reg.log" || fail "a request for denied.test reached the registry"
}
TESTS+=(proxy_npm_install)

t_parent_proxy_npm_install() { # npm install through sbx's parent-proxy route: the registry's name (far.test) is known only to the upstream proxy, whose log shows the packument and the tarball with its credential; a denied registry still refused first
	command -v node >/dev/null && command -v npm >/dev/null || skip "node or npm not installed"
	parent_up --auth u:p
	npm_up
	in_net_nodns timeout -k 5 "$TMO" "$SBX" -c "$T/net" --allow-domain=far.test --parent-proxy="http://u:p@$NSIP:3128" -- sh -c '
		'"$(npm_script http://far.test:8030/ app)"'
		'"$(npm_script http://denied.test:8030/ denied)"'
		echo end' >"$T/r.out" 2>"$T/r.err"; RC=$?
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err")
	log_file out "$T/r.out"; log_file err "$T/r.err"; log_file up "$T/up.log"; log_file reg "$T/reg.log"
	expect_rc 0
	grep -q '^app=0$' <<<"$OUT" || fail "npm install from far.test via the parent: expected exit 0, got $(grep '^app=' <<<"$OUT")"
	expect_contains "$OUT" "app-says: hello from a local npm registry" "node loads the installed package"
	grep -q "\"integrity\": \"$NPM_INTEGRITY\"" "$P/app/package-lock.json" || fail "package-lock.json does not record npm pack's integrity"
	# the parent saw npm's two requests, in absolute form, with its credential
	grep -q "^GET http://far.test:8030/sbxdemo $UPAUTH\$" "$T/up.log" || fail "the parent did not carry the packument request"
	grep -q "^GET http://far.test:8030/sbxdemo/-/sbxdemo-1.0.0.tgz $UPAUTH\$" "$T/up.log" || fail "the parent did not carry the tarball request"
	grep -q '^GET /sbxdemo/-/sbxdemo-1.0.0.tgz host=far.test:8030 200$' "$T/reg.log" || fail "the registry did not serve the tarball for far.test"
	# the denied registry: refused by the policy, never sent to the parent
	grep -q '^denied=0$' <<<"$OUT" && fail "npm install from denied.test succeeded"
	grep -Eq '^npm (error|ERR!) code E403$' <<<"$OUT" || fail "npm does not report the proxy's 403 (npm error code E403; npm 9: npm ERR!)"
	expect_contains "$ERR" "deny network-outbound denied.test:8030 (denied.test is off limits)" "the block names the host"
	! grep -q denied.test "$T/up.log" || fail "a denied host went to the parent"
}
TESTS+=(parent_proxy_npm_install)

# a node client using only built-ins (http, net): node 20 does not read HTTP_PROXY itself, so it
# finds the proxy where curl does ($HTTPS_PROXY, then $HTTP_PROXY), CONNECTs to HOST:PORT, and speaks
# HTTP over the tunnel (http.get with the tunnel as its connection); prints one line a target
NODE_TUNNEL_JS='
const http = require("http"), net = require("net");
setTimeout(() => { console.log("timeout"); process.exit(3); }, 30000).unref();
const proxy = new URL(process.env.HTTPS_PROXY || process.env.HTTP_PROXY);
console.log("proxy:", proxy.hostname + ":" + proxy.port, "net.isIP:", net.isIP(proxy.hostname));
function get(target) {
  return new Promise((resolve) => {
    const req = http.request({ host: proxy.hostname, port: Number(proxy.port), method: "CONNECT", path: target,
                               headers: { Host: target } });
    req.on("error", (e) => resolve(`error ${e.code || e.message}`));
    req.on("connect", (res, socket) => {
      if (res.statusCode !== 200) { socket.destroy(); return resolve(`status ${res.statusCode} ${res.statusMessage}`); }
      const [host, port] = target.split(":");
      const g = http.get({ host, port: Number(port), path: "/", createConnection: () => socket }, (r) => {
        let body = "";
        r.setEncoding("utf8");
        r.on("data", (d) => body += d);
        r.on("end", () => resolve(`tunnel 200, GET ${r.statusCode} ${body.trim()}`));
      });
      g.on("error", (e) => resolve(`get error ${e.code || e.message}`));
    });
    req.end();
  });
}
(async () => {
  for (const t of process.argv.slice(2)) console.log(`${t.split(":")[0]}:`, await get(t));
  process.exit(0);
})();'

t_proxy_node_env_tunnel() { # node with only http/net: CONNECT to the proxy its environment names, then GET over the tunnel; denied.test: 403 with the reason, and a violation record
	command -v node >/dev/null || skip "node not installed"
	net_up
	printf '%s\n' "$NODE_TUNNEL_JS" >"$P/tunnel.js"
	sbx_net 'node tunnel.js allowed.test:8000 denied.test:8000 also.allowed.test:8000'
	expect_rc 0
	expect_contains "$OUT" "proxy: 127.0.0.1:3128 net.isIP: 4" "node finds the proxy in its environment"
	expect_contains "$OUT" "allowed.test: tunnel 200, GET 200 hello-from-test-host" "node: GET over a CONNECT tunnel to allowed.test"
	expect_contains "$OUT" "also.allowed.test: tunnel 200, GET 200 hello-from-test-host" "node: and to *.allowed.test, after the refusal"
	expect_contains "$OUT" "denied.test: status 403 denied.test is off limits" "node: CONNECT to denied.test refused with the reason"
	expect_contains "$ERR" "<sandbox_violations>" "the violations block"
	expect_contains "$ERR" "deny network-outbound denied.test:8000 (denied.test is off limits)" "a violation record names the host"
	expect_not_contains "$ERR" "allowed.test:8000" "the allowed tunnels are not violations"
	expect_not_contains "$ERR" "deny connect" "node tried a direct connection"
	# the same client, through the parent-proxy route, to a name only the parent knows (far.test)
	parent_up --auth u:p
	in_net_nodns timeout -k 5 "$TMO" "$SBX" -c "$T/net" --allow-domain=far.test --parent-proxy="http://u:p@$NSIP:3128" -- \
		node tunnel.js far.test:8000 denied.test:8000 >"$T/r.out" 2>"$T/r.err"; RC=$?
	OUT=$(cat "$T/r.out"); ERR=$(cat "$T/r.err"); log_file out "$T/r.out"; log_file err "$T/r.err"; log_file up "$T/up.log"
	expect_rc 0 "node via the parent"
	expect_contains "$OUT" "far.test: tunnel 200, GET 200 hello-from-test-host" "node: far.test through the parent"
	expect_contains "$OUT" "denied.test: status 403 denied.test is off limits" "node via the parent: the policy first"
	grep -q "^CONNECT far.test:8000 $UPAUTH\$" "$T/up.log" || fail "the parent saw the tunnel, with its credential"
	! grep -q denied.test "$T/up.log" || fail "a denied host reached the parent"
	expect_contains "$ERR" "deny network-outbound denied.test:8000 (denied.test is off limits)" "the violation record via the parent"
}
TESTS+=(proxy_node_env_tunnel)
