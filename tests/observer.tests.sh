# tests/observer.tests.sh - sourced by test.sh: the write observer (section 10b of
# sbx.c). sbx-init installs a USER_NOTIF program for write-intent calls and connect(); a process
# of sbx's reads what the command named and always lets the call go on; sbx judges each event
# against the plan. Until the <sandbox_violations> report lands, the -v lines are what a test
# can see: "observer: deny OP TARGET by COMM[PID]" once per distinct refusal, and at exit
# "observer: N events, M refused, ...".

observer_usable() { # skip where the kernel has no user notification (the run is unobserved there)
	grep -q user_notif /proc/sys/kernel/seccomp/actions_avail 2>/dev/null ||
		skip "this kernel has no seccomp user notification"
}

refused_count() { # the "M refused" of the -v summary in $ERR
	sed -n 's/.*observer: [0-9]* events, \([0-9]*\) refused.*/\1/p' <<<"$ERR" | tail -1
}

t_observer_write_outside_reported() { # a denied write outside the roots is observed; one inside a root is not
	observer_usable
	run_sbx -v --allow-write="$P" -- sh -c "echo x >'$O/denied' 2>/dev/null; echo y >'$P/allowed'; echo done"
	expect_rc 0
	expect_contains "$OUT" done "the command ran"
	expect_contains "$ERR" "observer: deny openat $O/denied by sh[" "the denied write is reported, with its command"
	# control: the write inside the root happened and is not reported
	[ "$(cat "$P/allowed")" = y ] || fail "control: the allowed write did not happen"
	expect_not_contains "$ERR" "observer: deny openat $P/allowed" "an allowed write"
	[ ! -e "$O/denied" ] || fail "the denied write happened"
}
TESTS+=(observer_write_outside_reported)

t_observer_paths_resolved() { # relative paths (cwd, dirfd), "..", rename's two names and mkdir, judged as the plan says
	observer_usable
	mkdir -p "$P/sub"
	echo old >"$P/sub/f"
	run_sbx -v --allow-write="$P" -- sh -c "cd '$O' && { echo x >rel; } 2>/dev/null
		cd '$P/sub' && { echo x >'../../out/dotdot'; } 2>/dev/null
		mv '$P/sub/f' '$O/moved' 2>/dev/null; mkdir '$O/newdir' 2>/dev/null
		echo ok >../inside-via-dotdot; echo done"
	expect_rc 0
	expect_contains "$OUT" done "the command ran"
	expect_contains "$ERR" "observer: deny openat $O/rel " "a path relative to the cwd"
	expect_contains "$ERR" "observer: deny openat $O/dotdot " "a path with .. in it, normalised"
	grep -Eq "observer: deny rename(at2?)? $O/moved " <<<"$ERR" || fail "rename: the name outside is not reported"
	expect_contains "$ERR" "observer: deny mkdir $O/newdir " "mkdir"
	# control: rename's source inside the root and a write through .. into the root are not refusals
	expect_not_contains "$ERR" "deny rename $P/sub/f" "rename's source inside the root"
	expect_not_contains "$ERR" "inside-via-dotdot" "a write that .. keeps inside the root"
	[ "$(cat "$P/inside-via-dotdot")" = ok ] || fail "control: the write inside the root did not happen"
}
TESTS+=(observer_paths_resolved)

t_observer_direct_connect() { # connect() past the proxy is reported with its reason; one to the proxy is not
	observer_usable
	command -v python3 >/dev/null || skip "python3 is not installed"
	run_sbx -v --allow-write="$P" --allow-domain=example.test -- python3 -c '
import socket
for host, port in (("10.200.99.1", 443), ("127.0.0.1", 3128)):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, port))
        print(host, "connected")
    except OSError as e:
        print(host, "failed", e.errno)
    s.close()
'
	expect_rc 0
	expect_contains "$OUT" "10.200.99.1 failed" "nothing routes to the test address"
	expect_contains "$OUT" "127.0.0.1 connected" "control: the proxy is reachable"
	expect_contains "$ERR" "observer: deny connect 10.200.99.1:443 (direct connection; only the proxy at 127.0.0.1:3128 is reachable)" \
		"the direct connection, with its reason"
	sed -n '/^<sandbox_violations>$/,/^<\/sandbox_violations>$/p' <<<"$ERR" |
		grep -qx 'deny connect 10.200.99.1:443 (direct connection; only the proxy at 127.0.0.1:3128 is reachable)' ||
		fail "the report names the direct connection: $ERR"
	expect_not_contains "$ERR" "deny connect 127.0.0.1" "a connection to the proxy"
}
TESTS+=(observer_direct_connect)

t_observer_off_no_events() { # observe-writes off: no observer, no events; on (the control): events
	observer_usable
	run_sbx -v --allow-write="$P" --observe-writes=off -- sh -c "echo x >'$O/denied' 2>/dev/null; echo done"
	expect_rc 0
	expect_contains "$OUT" done "the command ran"
	expect_not_contains "$ERR" "observer:" "observe-writes off"
	run_sbx -v --allow-write="$P" --observe-writes=on -- sh -c "echo x >'$O/denied' 2>/dev/null; echo done"
	expect_contains "$ERR" "observer: deny openat $O/denied" "control: observe-writes on"
}
TESTS+=(observer_off_no_events)

t_observer_same_outcomes() { # 200 mixed file operations give the same results with the observer on and off
	observer_usable
	local i ops="" mode on off
	for i in $(seq 0 24); do
		ops+="c$i create $P/w/f$i"$'\n'"o$i create $O/w/f$i"$'\n'
		ops+="a$i append $P/w/f$i"$'\n'"m$i mkdir $O/w/d$i"$'\n'
		ops+="r$i rename $P/w/f$i $P/w/g$i"$'\n'"x$i rename $O/w/e$i $O/w/y$i"$'\n'
		ops+="u$i unlink $P/w/g$i"$'\n'"h$i chmod $O/w/e$i 600"$'\n'
	done
	[ "$(grep -c . <<<"$ops")" = 200 ] || fail "the test makes 200 operations"
	for mode in on off; do
		rm -rf "$P/w" "$O/w"; mkdir -p "$P/w" "$O/w"
		for i in $(seq 0 24); do echo e >"$O/w/e$i"; done
		run_ops -v --allow-write="$P" --observe-writes=$mode <<<"$ops"
		expect_rc 0
		[ "$(grep -c . <<<"$OUT")" = 200 ] || fail "observe-writes $mode: 200 results expected, got $(grep -c . <<<"$OUT")"
		if [ $mode = on ]; then on=$OUT; else off=$OUT; fi
	done
	[ "$on" = "$off" ] || fail "the results differ: $(diff <(echo "$on") <(echo "$off") | head -5)"
	# the operations did what the plan says, both times: inside ok, outside refused
	expect_contains "$on" "c0 ok" "a create inside the root"
	expect_contains "$on" "o0 EROFS" "a create outside"
	[ "$(refused_count)" -ge 100 ] 2>/dev/null || note "refused: $(refused_count)"
}
TESTS+=(observer_same_outcomes)

t_observer_forked_children_dedup() { # 100 forked children writing the same denied file: one distinct refusal, 100 counted
	observer_usable
	run_sbx -v --allow-write="$P" -- sh -c "for i in \$(seq 100); do (echo x >'$O/f') 2>/dev/null & done; wait; echo done"
	expect_rc 0
	expect_contains "$OUT" done "the command ran"
	[ "$(grep -c "observer: deny openat $O/f " <<<"$ERR")" = 1 ] ||
		fail "one line for the distinct refusal, got $(grep -c "observer: deny openat $O/f " <<<"$ERR")"
	[ "$(refused_count)" = 100 ] || fail "100 refusals counted, got '$(refused_count)'"
	grep -qx "deny openat $O/f (100 times)" <<<"$ERR" || fail "the report: one line, counted 100 times: $ERR"
	# control: 100 children writing inside the root: nothing refused
	run_sbx -v --allow-write="$P" -- sh -c "for i in \$(seq 100); do (echo x >'$P/f') 2>/dev/null & done; wait; echo done"
	expect_rc 0
	expect_not_contains "$ERR" "observer: deny" "writes inside the root"
}
TESTS+=(observer_forked_children_dedup)

t_observer_storm() { # 100k denied open(O_WRONLY): no hang, no output lost, in bounded time
	observer_usable
	command -v python3 >/dev/null || skip "python3 is not installed"
	local start end
	start=$(date +%s)
	run_sbx -v --allow-write="$P" -- python3 -c "
import os, sys
n = 0
for i in range(100000):
    try:
        os.close(os.open('$O/storm', os.O_WRONLY | os.O_CREAT))
    except OSError:
        n += 1
print('denied', n)
sys.stdout.flush()
for i in range(1000):
    print('line', i)
"
	end=$(date +%s)
	expect_rc 0
	expect_contains "$OUT" "denied 100000" "every open was refused (by the mount, not by the observer)"
	[ "$(grep -c '^line ' <<<"$OUT")" = 1000 ] || fail "the command's output was cut: $(grep -c '^line ' <<<"$OUT") of 1000 lines"
	[ $((end - start)) -le 45 ] || fail "100k notifications took $((end - start)) s"
	expect_contains "$ERR" "observer: deny openat $O/storm" "the storm is reported"
	note "storm: $((end - start)) s; $(grep 'observer: [0-9]* events' <<<"$ERR" | sed 's/^sbx: //')"
	# control: the same loop with the observer off refuses as many
	run_sbx --allow-write="$P" --observe-writes=off -- python3 -c "
import os
n = 0
for i in range(1000):
    try:
        os.open('$O/storm', os.O_WRONLY | os.O_CREAT)
    except OSError:
        n += 1
print('denied', n)"
	expect_contains "$OUT" "denied 1000" "control: unobserved, the same refusals"
}
TESTS+=(observer_storm)

t_observer_listener_with_merged_ready() { # the "R" that carries the listener, read in one recvmsg with an "L" of no descriptors
	observer_usable
	command -v strace >/dev/null || skip "strace is not installed"
	command -v socat >/dev/null || skip "socat is not installed"
	# as run-facts' ready_after_empty_handed_message: sbx's first recvmsg is held back 2 s, so
	# the "R" (with the listener) is queued behind the "L" (bridge socat: no descriptors)
	local out
	out=$(timeout 60 strace -o /dev/null -e trace=recvmsg -e inject=recvmsg:delay_enter=2000000:when=1 \
		"$SBX" -v --allow-write="$P" --bridge=socat --allow-domain=a.test -- \
		sh -c "echo x >'$O/merged' 2>/dev/null; echo cmd-ran; exit 7" 2>"$T/err"); RC=$?
	ERR=$(cat "$T/err")
	printf '$ strace ... sbx\n%s\n%s\n[exit %s]\n' "$out" "$ERR" "$RC"
	[ "$RC" = 7 ] || fail "the command's status 7 (got $RC)"
	expect_contains "$out" cmd-ran "the command ran"
	expect_contains "$ERR" "observer: deny openat $O/merged" "the listener that came with the merged R is read"
	# control: bridge fd (the "L" carries descriptors, so the "R" comes in a read of its own)
	out=$(timeout 60 strace -o /dev/null -e trace=recvmsg -e inject=recvmsg:delay_enter=2000000:when=1 \
		"$SBX" -v --allow-write="$P" --allow-domain=a.test -- \
		sh -c "echo x >'$O/apart' 2>/dev/null; exit 7" 2>"$T/err"); RC=$?
	ERR=$(cat "$T/err")
	[ "$RC" = 7 ] || fail "control: exit 7 (got $RC)"
	expect_contains "$ERR" "observer: deny openat $O/apart" "control: the R read on its own"
}
TESTS+=(observer_listener_with_merged_ready)

t_observer_forked_on_demand() { # the observer is forked on the first call it is to see: a command that has made no write-intent call has no observer; its first one brings it up, and is reported
	observer_usable
	local i spid obs_before= obs_after= c
	observers_of() { for c in $(pgrep -P "$1"); do [ "$(cat "/proc/$c/comm" 2>/dev/null)" = sbx-observer ] && echo "$c"; done; }
	# "started" goes to stdout, an inherited descriptor: a write, not an open, so nothing the observer sees
	"$SBX" -v --allow-write="$P" -- sh -c "echo started; sleep 1.5; echo x >'$O/late' 2>/dev/null; sleep 1.5; echo finished" \
		>"$T/bg.out" 2>"$T/bg.err" &
	spid=$!
	for i in $(seq 100); do grep -q started "$T/bg.out" 2>/dev/null && break; sleep 0.05; done
	grep -q started "$T/bg.out" || { kill $spid; fail "the command did not start"; }
	obs_before=$(observers_of "$spid")
	for i in $(seq 60); do obs_after=$(observers_of "$spid"); [ -n "$obs_after" ] && break; sleep 0.05; done
	wait $spid; RC=$?
	OUT=$(cat "$T/bg.out"); ERR=$(cat "$T/bg.err")
	log_file err "$T/bg.err"
	expect_rc 0
	[ -z "$obs_before" ] || fail "an observer ran before any call it is to see: $obs_before"
	[ -n "$obs_after" ] || fail "no observer after the command's first write-intent call"
	expect_contains "$ERR" "observer: deny openat $O/late" "the call that brought it up is reported"
	expect_contains "$OUT" finished "the command went on"
}
TESTS+=(observer_forked_on_demand)

t_observer_locked_down() { # the observer process: NoNewPrivs, its own seccomp filter, not dumpable; the command's calls still go on
	observer_usable
	local tok="${TOKBASE}7" i obs= st
	run_sbx_bg() { "$SBX" --allow-write="$P" -- sh -c "echo x >'$O/f' 2>/dev/null; echo in >'$P/in'; sleep $tok" >/dev/null 2>&1 & }
	run_sbx_bg
	local spid=$!
	for i in $(seq 50); do
		for c in $(pgrep -x sbx-observer); do
			[ "$(ps -o ppid= -p "$c" | tr -d ' ')" = "$spid" ] && obs=$c
		done
		[ -n "$obs" ] && [ -s "$P/in" ] && break; sleep 0.1
	done
	[ -n "$obs" ] || { kill $spid; fail "no sbx-observer process under sbx"; }
	st=$(grep -E '^(NoNewPrivs|Seccomp):' "/proc/$obs/status")
	note "observer $obs: $(tr '\n' ' ' <<<"$st")"
	# it holds its listener, its channel to sbx and stdio, nothing of sbx's (the placeholders'
	# locks, the proxy's listeners, the report's sink): fds_close_except. Besides, what it
	# opens itself for the audit's attribution: directories of the command's view (O_PATH)
	# and the command's /proc/PID/pagemap (sbx.c 10b)
	local fds fd; fds=$(for fd in /proc/"$obs"/fd/*; do
		[[ $(readlink "$fd") == /proc/*/pagemap ]] && continue
		(( 0$(awk '/^flags:/ { print $2 }' "/proc/$obs/fdinfo/${fd##*/}" 2>/dev/null) & 010000000 )) && continue
		readlink "$fd" | tr ' ' _; done | sort | tr '\n' ' ')
	note "observer fds: $fds"
	kill $spid; wait $spid 2>/dev/null
	[ "$(wc -w <<<"$fds")" = 5 ] || fail "the observer holds more than stdio, its listener and its channel: $fds"
	grep -q 'seccomp' <<<"$fds" || fail "control: the observer holds its listener: $fds"
	grep -Eq '^NoNewPrivs:[[:space:]]*1$' <<<"$st" || fail "observer NoNewPrivs is not 1: $st"
	grep -Eq '^Seccomp:[[:space:]]*2$' <<<"$st" || fail "observer is not under a seccomp filter: $st"
	# control: the command's writes went on while it was watched
	[ "$(cat "$P/in")" = in ] || fail "control: the command's write inside the root did not happen"
}
TESTS+=(observer_locked_down)

t_observer_check_line() { # sbx --check says whether the observer is on, and why not
	run_sbx --check
	expect_contains "$OUT" "the write observer is" "--check names the observer"
	run_sbx --check --observe-writes=off
	expect_contains "$OUT" "the write observer is off: observe-writes off" "--check with observe-writes off"
}
TESTS+=(observer_check_line)

t_observer_restarts_after_a_crash() { # an observer that dies is replaced: the command neither hangs nor fails, no event is lost
	observer_usable
	local i obs= spid
	"$SBX" -v --allow-write="$P" -- sh -c "for i in \$(seq 30); do echo \$i >'$O/c'\$i 2>/dev/null; echo \$i >'$P/in'\$i; sleep 0.1; done; echo finished" \
		>"$T/bg.out" 2>"$T/bg.err" &
	spid=$!
	for i in $(seq 50); do
		for c in $(pgrep -P "$spid"); do [ "$(cat "/proc/$c/comm" 2>/dev/null)" = sbx-observer ] && obs=$c; done
		[ -n "$obs" ] && [ -e "$P/in5" ] && break; sleep 0.1
	done
	[ -n "$obs" ] || { kill $spid; fail "no sbx-observer process under sbx"; }
	kill -SEGV "$obs"
	wait $spid; RC=$?
	OUT=$(cat "$T/bg.out"); ERR=$(cat "$T/bg.err")
	log_file err "$T/bg.err"
	expect_rc 0
	expect_contains "$OUT" finished "the command ran to its end"
	expect_contains "$ERR" "observer: it died (signal 11); starting another" "the crash is said, and the observer replaced"
	expect_contains "$ERR" "observer: deny openat $O/c30 " "events after the crash are reported"
	[ "$(refused_count)" = 30 ] || fail "30 refusals counted across the crash, got '$(refused_count)'"
	# control: every write inside the root happened
	[ "$(cat "$P/in30")" = 30 ] || fail "control: the writes inside the root happened"
}
TESTS+=(observer_restarts_after_a_crash)

t_observer_dies_mid_notification() { # an observer killed between receiving a call and answering it: the next one answers it
	observer_usable
	command -v strace >/dev/null || skip "strace is not installed"
	[ "$(id -u)" = 0 ] || skip "attaching strace to the non-dumpable observer needs root"
	local i obs= spid tpid
	# the first write brings the observer up (it is forked on the first call it sees)
	"$SBX" -v --allow-write="$P" -- sh -c "echo up >'$P/up'; sleep 1; echo x >'$O/mid' 2>/dev/null; echo after >'$P/after'; echo finished" \
		>"$T/bg.out" 2>"$T/bg.err" &
	spid=$!
	for i in $(seq 50); do
		for c in $(pgrep -P "$spid"); do [ "$(cat "/proc/$c/comm" 2>/dev/null)" = sbx-observer ] && obs=$c; done
		[ -n "$obs" ] && break; sleep 0.05
	done
	[ -n "$obs" ] || { kill $spid; fail "no sbx-observer process under sbx"; }
	# the observer's first call after a RECV reads the caller's memory (process_vm_readv; or an
	# open of /proc/PID/mem where that is refused: openat with glibc, open with musl): it dies
	# there, the call received
	strace -o /dev/null -p "$obs" -e trace=process_vm_readv,open,openat \
		-e inject=process_vm_readv,open,openat:signal=SIGKILL:when=1 2>/dev/null &
	tpid=$!
	for i in $(seq 100); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$spid" 2>/dev/null && { kill "$spid"; kill "$tpid" 2>/dev/null; fail "the command hung on the call the dead observer held"; }
	wait $spid; RC=$?
	kill "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null
	OUT=$(cat "$T/bg.out"); ERR=$(cat "$T/bg.err")
	log_file err "$T/bg.err"
	expect_rc 0
	expect_contains "$OUT" finished "the command went on"
	expect_contains "$ERR" "observer: it died (signal 9); starting another" "the observer died mid-notification"
	[ "$(cat "$P/after")" = after ] || fail "control: the write after it happened"
}
TESTS+=(observer_dies_mid_notification)

t_observer_reads_with_process_vm_readv() { # the observer reads a caller's path with one process_vm_readv; where that is refused (EPERM, as a container's filter says), with /proc/PID/mem, and the refusal is reported either way
	observer_usable
	command -v strace >/dev/null || skip "strace is not installed"
	[ "$(id -u)" = 0 ] || skip "attaching strace to the non-dumpable observer needs root"
	local i obs spid tpid how inject
	for how in readv refused; do
		inject=(); [ "$how" = refused ] && inject=(-e inject=process_vm_readv:error=EPERM)
		rm -f "$P/after"
		# the first write brings the observer up; the ones after the pause are read under strace
		"$SBX" -v --allow-write="$P" -- sh -c "echo up >'$P/up'; sleep 1
			for i in 1 2 3; do echo x >'$O/denied-$how-'\$i 2>/dev/null; done; echo after >'$P/after'" \
			>"$T/bg.out" 2>"$T/bg.err" &
		spid=$!; obs=
		for i in $(seq 50); do
			for c in $(pgrep -P "$spid"); do [ "$(cat "/proc/$c/comm" 2>/dev/null)" = sbx-observer ] && obs=$c; done
			[ -n "$obs" ] && break; sleep 0.05
		done
		[ -n "$obs" ] || { kill $spid; fail "$how: no sbx-observer process under sbx"; }
		strace -o "$T/strace-$how.log" -p "$obs" -e trace=process_vm_readv,open,openat "${inject[@]}" 2>/dev/null &
		tpid=$!
		wait $spid; RC=$?
		kill "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null
		ERR=$(cat "$T/bg.err")
		log_file "err-$how" "$T/bg.err"; log_file "strace-$how" "$T/strace-$how.log"
		expect_rc 0
		[ "$(cat "$P/after")" = after ] || fail "$how: control: the write inside the root happened"
		for i in 1 2 3; do
			expect_contains "$ERR" "observer: deny openat $O/denied-$how-$i " "$how: the refused write $i, its path read"
		done
		grep -q '^process_vm_readv(' "$T/strace-$how.log" || fail "$how: strace saw no process_vm_readv in the observer"
		if [ "$how" = readv ]; then
			if grep -q '/mem"' "$T/strace-$how.log"; then fail "readv: /proc/PID/mem opened though process_vm_readv works"; fi
		else
			[ "$(grep -c '^process_vm_readv(' "$T/strace-$how.log")" = 1 ] ||
				fail "refused: process_vm_readv asked again after its refusal"
			grep -Eq '^open(at)?\(.*"/proc/[0-9]+/mem"' "$T/strace-$how.log" || fail "refused: no /proc/PID/mem read instead"
		fi
	done
}
TESTS+=(observer_reads_with_process_vm_readv)

t_observer_unreadable_page_reported() { # a path (or a connect's address) in a page mapped PROT_WRITE or PROT_EXEC alone, which the kernel reads and process_vm_readv refuses, or one that starts in a readable page and ends in such a page (process_vm_readv reads short): still reported; control: a readable page
	observer_usable
	local d mode out
	d=$(mktemp -d /tmp/sbx-unread.XXXXXX)
	cc -O2 -o "$d/up" "$HERE/tests/helpers/unreadable_path.c" 2>"$d/cc.err" || { rm -rf "$d"; skip "the helper did not build: $(head -c 200 "$d/cc.err")"; }
	run_sbx -v --allow-write="$P" -- sh -c "p=443; for m in normal write exec split; do '$d/up' \$m open '$O/hidden-'\$m
		'$d/up' \$m connect 10.200.99.1 \$p; p=\$((p + 1)); done"
	rm -rf "$d"
	expect_rc 0
	expect_contains "$OUT" "normal open: EROFS" "control: the write outside is refused (read-only)"
	for mode in normal write exec split; do
		out=$(grep "^$mode open: " <<<"$OUT")
		[ -n "$out" ] || fail "$mode: the helper said nothing: $OUT"
		if [ "$out" = "$mode open: EFAULT" ]; then
			[ "$mode" != normal ] || fail "control: the kernel could not read a readable page"
			continue	# the kernel could not read that page either: nothing was tried
		fi
		expect_contains "$ERR" "observer: deny openat $O/hidden-$mode " "$mode: the refused write from that page is reported"
		[ ! -e "$O/hidden-$mode" ] || fail "$mode: the write happened"
	done
	# the connects, a port each (443 normal, 444 write, 445 exec, 446 split): each reported where the kernel read it
	local port=443
	for mode in normal write exec split; do
		out=$(grep "^$mode connect: " <<<"$OUT")
		[ -n "$out" ] || fail "$mode: the helper's connect said nothing: $OUT"
		if [ "$out" != "$mode connect: EFAULT" ]; then
			expect_contains "$ERR" "observer: deny connect 10.200.99.1:$port " "$mode: the direct connection from that page is reported"
		fi
		port=$((port + 1))
	done
	[ "$(grep -c '^exec open: EFAULT$' <<<"$OUT")$(grep -c '^write open: EFAULT$' <<<"$OUT")" != 11 ] ||
		note "this CPU refuses the kernel's reads of write-only and exec-only pages: only the control ran"
}
TESTS+=(observer_unreadable_page_reported)

t_observer_symlinked_parent() { # a write through a symlink into a root is not reported as refused; a real refusal is
	observer_usable
	ln -s "$P" "$O/into-project"	# outside, a link into the writable project
	run_sbx --allow-write="$P" -- sh -c "echo ok >'$O/into-project/through.txt'; { echo x >'$O/denied.txt'; } 2>/dev/null; true"
	expect_rc 0
	[ "$(cat "$P/through.txt" 2>/dev/null)" = ok ] || fail "the write through the link went into the project"
	expect_not_contains "$ERR" "through.txt" "a write that went through is not reported as refused"
	expect_contains "$ERR" "deny openat $O/denied.txt" "control: the write outside is reported"
}
TESTS+=(observer_symlinked_parent)

t_observer_fork_refused_then_retried() { # a command that uses up its uid's processes before its first write-intent call: the observer's fork is tried again (the call waits), never given up (which failed every later write with ENOSYS, unreported); control: the refusal is reported
	observer_usable
	[ "$(id -u)" = 0 ] || skip "runs the sandbox as nobody under RLIMIT_NPROC (root is exempt from it)"
	command -v setpriv >/dev/null && command -v prlimit >/dev/null || skip "setpriv or prlimit is not installed"
	local d; d=$(mktemp -d /tmp/sbx-nproc.XXXXXX); chmod 755 "$d"
	mkdir "$d/proj" "$d/out" "$d/home"; chown 65534 "$d/proj" "$d/home"
	cc -O2 -static -o "$d/bomb" "$HERE/tests/helpers/nprocbomb.c" 2>/dev/null || cc -O2 -o "$d/bomb" "$HERE/tests/helpers/nprocbomb.c"
	(cd "$d/proj" && timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups prlimit --nproc=60 \
		env HOME="$d/home" "$SBX" -v --allow-write="$d/proj" -- "$d/bomb" "$d/out/b" "$d/proj/inside") >"$T/o" 2>"$T/e"
	RC=$?; OUT=$(cat "$T/o"); ERR=$(cat "$T/e"); log_file err "$T/e"; rm -rf "$d"
	expect_rc 0
	expect_contains "$OUT" "open($d/out/b): Read-only file system" "the write outside was refused by the mount table"
	expect_contains "$OUT" "open($d/proj/inside): ok" "control: a write inside a root works afterwards (no ENOSYS)"
	grep -Eq "observer: deny open(at)? $d/out/b " <<<"$ERR" || fail "the refusal is not reported"
}
TESTS+=(observer_fork_refused_then_retried)

t_observer_times_reported() { # every utimes-family call on a path outside the roots is reported (futimesat, utimes, utime, utimensat; one whose path lies at an address with a zero low word too); control: the same calls inside a root work and are not
	observer_usable
	command -v python3 >/dev/null || skip "python3 is not installed"
	[ "$(uname -m)" = x86_64 ] || skip "the old utimes calls (futimesat, utimes, utime) are x86_64's"
	echo old >"$O/t-futimesat"; echo old >"$O/t-utimes"; echo old >"$O/t-utime"; echo old >"$O/t-utimensat"; echo old >"$O/t-high"
	touch -d '2001-01-01' "$O"/t-* && cp -p "$O"/t-* "$P/"
	run_sbx --allow-write="$P" -- python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
AT_FDCWD = -100
def call(name, nr, *args):
    r = libc.syscall(nr, *args)
    print(name, "ok" if r == 0 else os.strerror(ctypes.get_errno()))
for d in sys.argv[1:]:
    call("futimesat", 261, AT_FDCWD, (d + "/t-futimesat").encode(), None)
    call("utimes", 235, (d + "/t-utimes").encode(), None)
    call("utime", 132, (d + "/t-utime").encode(), None)
    call("utimensat", 280, AT_FDCWD, (d + "/t-utimensat").encode(), None, 0)
    # the path at 0x7e0000000000 + 4 GiB: a pointer whose low 32 bits are 0
    m = libc.mmap(ctypes.c_void_p(0x7e0100000000), 4096, 3, 0x22 | 0x100000, -1, 0)
    if m != 0x7e0100000000:
        print("high no-map"); continue
    p = (d + "/t-high").encode() + b"\0"
    ctypes.memmove(m, p, len(p))
    call("high", 280, AT_FDCWD, ctypes.c_void_p(m), None, 0)
    libc.munmap(ctypes.c_void_p(m), 4096)
' sh "$O" "$P"
	expect_rc 0
	local block; block=$(sed -n '/^<sandbox_violations>$/,/^<\/sandbox_violations>$/p' <<<"$ERR")
	local c
	for c in futimesat utimes utime utimensat; do
		grep -qx "deny $c $O/t-$c" <<<"$block" || fail "$c on a path outside the roots is not reported: $block"
	done
	expect_not_contains "$OUT" "high no-map" "the test could not map its page"
	grep -qx "deny utimensat $O/t-high" <<<"$block" || fail "a path at an address whose low word is 0 hid the refusal: $block"
	# control: inside the root the same calls worked (5 oks), and none is reported
	[ "$(grep -c ' ok$' <<<"$OUT")" = 5 ] || fail "control: the calls inside the root: $OUT"
	[ "$(grep -c ' Read-only file system$' <<<"$OUT")" = 5 ] || fail "the calls outside were refused: $OUT"
	expect_not_contains "$block" "$P/" "a call inside the root"
}
TESTS+=(observer_times_reported)

t_observer_sends_reported() { # a datagram sent past the proxy (sendto, sendmsg, sendmmsg with an address; TCP fast open) is reported, as connect is; control: sends to the loopback and on a connected socket are not
	observer_usable
	command -v python3 >/dev/null || skip "python3 is not installed"
	run_sbx --allow-write="$P" -- python3 -c '
import ctypes, os, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
def tryit(name, f):
    try:
        f(); print(name, "sent")
    except OSError as e:
        print(name, "failed", e.errno)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
tryit("sendto", lambda: u.sendto(b"q", ("10.200.99.7", 53)))
tryit("sendmsg", lambda: u.sendmsg([b"q"], [], 0, ("10.200.99.8", 123)))
# sendmmsg: the loopback first, then a remote address: the second must not hide behind the first
class iovec(ctypes.Structure): _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
class msghdr(ctypes.Structure): _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
    ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p),
    ("controllen", ctypes.c_size_t), ("flags", ctypes.c_int)]
class mmsghdr(ctypes.Structure): _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]
def sin(ip, port): return ctypes.create_string_buffer(struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + socket.inet_aton(ip) + bytes(8), 16)
data = ctypes.create_string_buffer(b"q"); iov = iovec(ctypes.cast(data, ctypes.c_void_p), 1)
addrs = [sin("127.0.0.1", 9), sin("10.200.99.9", 53)]
vec = (mmsghdr * 2)()
for i, a in enumerate(addrs):
    vec[i].hdr.name = ctypes.cast(a, ctypes.c_void_p); vec[i].hdr.namelen = 16
    vec[i].hdr.iov = ctypes.pointer(iov); vec[i].hdr.iovlen = 1
n = libc.sendmmsg(u.fileno(), vec, 2, 0)
print("sendmmsg", n, os.strerror(ctypes.get_errno()) if n < 2 else "")
t = socket.socket()
tryit("fastopen", lambda: t.sendto(b"GET / HTTP/1.0\r\n\r\n", 0x20000000, ("10.200.99.10", 80)))
# controls: the loopback, and a connected socket (send: no address)
l = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); l.bind(("127.0.0.1", 0))
tryit("loopback", lambda: u.sendto(b"q", l.getsockname()))
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); c.connect(l.getsockname())
tryit("connected", lambda: c.send(b"q"))
print("got", l.recv(10), l.recv(10))
'
	expect_rc 0
	expect_contains "$OUT" "loopback sent" "control: a datagram to the loopback"
	expect_contains "$OUT" "connected sent" "control: a send on a connected socket"
	expect_contains "$OUT" "got b'q' b'q'" "control: both arrived"
	local block; block=$(sed -n '/^<sandbox_violations>$/,/^<\/sandbox_violations>$/p' <<<"$ERR")
	local why="(direct connection; only the proxy at 127.0.0.1:3128 is reachable)"
	grep -qx "deny sendto 10.200.99.7:53 $why" <<<"$block" || fail "sendto to a remote address is not reported: $block"
	grep -qx "deny sendmsg 10.200.99.8:123 $why" <<<"$block" || fail "sendmsg with a remote address is not reported"
	grep -qx "deny sendmmsg 10.200.99.9:53 $why" <<<"$block" || fail "sendmmsg's second (remote) address is not reported"
	grep -qx "deny sendto 10.200.99.10:80 $why" <<<"$block" || fail "TCP fast open (sendto with MSG_FASTOPEN) is not reported"
	grep -q '^deny [a-z]* 127\.' <<<"$block" && fail "a send to the loopback is reported: $block"
	return 0
}
TESTS+=(observer_sends_reported)
