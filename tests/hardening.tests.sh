# tests/hardening.tests.sh - sourced by test.sh: the escapes found by attacking the boundary:
# inherited descriptors, concurrent runs in one project, the runtime directory,
# sbx dying half-way, denies inside writable roots. Each test runs the attack and, in the same
# run, the control that shows the allowed case works.

# The dangerous names every run in a fresh project must refuse, and a script that tries them:
# prints "WROTE name" for each write that got through.
DANGER_NAMES=".bashrc .zshrc .profile .gitconfig .gitmodules .mcp.json .ripgreprc .vscode/x .idea/x .claude/commands/x .claude/agents/x"
try_danger() { printf 'for f in %s; do (echo pwn > "$f") 2>/dev/null && echo "WROTE $f"; done; ' "$DANGER_NAMES"; }

# sbx_outside_tmp: SBX itself, or a copy of it outside /tmp and /var/tmp, for the tests whose
# policy makes /tmp writable (sbx refuses to run when its own binary would be writable inside,
# and a checkout may well live under /tmp). Sets SBX for the calling test; skips if no place.
sbx_outside_tmp() {
	local d
	case $(realpath "$SBX") in /tmp/*|/var/tmp/*) ;; *) return 0 ;; esac
	for d in /dev/shm /run "$HOME/.."; do
		d=$(mktemp -d "$d/sbx-test.XXXXXX" 2>/dev/null) || continue
		case $(realpath "$d") in /tmp/*|/var/tmp/*) rmdir "$d"; continue ;; esac
		cp "$SBX" "$d/sbx" && chmod 755 "$d" "$d/sbx" && "$d/sbx" --version >/dev/null 2>&1 &&
			{ SBX=$d/sbx; trap 'rm -rf "'"$d"'"' EXIT; return 0; }
		rm -rf "$d"
	done
	skip "sbx lives under /tmp and no place outside /tmp and /var/tmp can hold a copy of it"
}

t_inherited_fds_closed() { # fds 3..300 open in the caller (a directory among them): none reaches the command
	local i
	mkdir -p "$O/d"; echo top-secret >"$O/d/secret"
	for i in $(seq 3 300); do
		[ "$i" = 7 ] && continue
		eval "exec $i</dev/null" 2>/dev/null || true
	done
	exec 7<"$O/d"
	# control: the caller really holds them (so a broken setup cannot pass as a refusal)
	[ -e /proc/$BASHPID/fd/7 ] && [ -e /proc/$BASHPID/fd/300 ] || fail "setup: the caller does not hold fds 7 and 300"
	run_sbx -- sh -c 'for i in $(seq 3 300); do [ -e /proc/self/fd/$i ] && echo "open $i"; done
		echo pwn > /proc/self/fd/7/x 2>/dev/null && echo "WROTE through fd 7"
		cat /proc/self/fd/7/secret 2>/dev/null
		echo inside > ok.txt && echo control-ok'
	expect_rc 0
	expect_not_contains "$OUT" "open " "descriptors visible inside"
	expect_not_contains "$OUT" "WROTE" "write through an inherited directory fd"
	expect_not_contains "$OUT" "top-secret" "read through an inherited directory fd"
	[ ! -e "$O/d/x" ] || fail "a file was created outside through fd 7"
	expect_contains "$OUT" "control-ok" "the allowed write inside"
	# stdin, stdout and stderr still pass (the only ones the command starts with)
	run_sbx -- sh -c 'ls /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2 >/dev/null && echo three'
	expect_contains "$OUT" "three" "fds 0, 1, 2"
}
TESTS+=(inherited_fds_closed)

# concurrent N: N overlapping runs in a fresh project, staggered exits; each tries every dangerous
# name early and again late (after others have exited), and writes its own control file.
concurrent() {
	local n=$1 i dir=$P/c$1 rcs=$T/rcs$1
	mkdir -p "$dir"; rm -f "$rcs"
	snap "$dir" >"$T/.snap-c$n"
	for i in $(seq 1 "$n"); do
		( cd "$dir" && "$SBX" -- sh -c "$(try_danger) echo ok > ok-$i; sleep 0.$(( (i * 7) % 10 ))$(( i % 10 )); $(try_danger) true" \
			>"$T/c$n-$i.out" 2>"$T/c$n-$i.err"; echo "$i $?" >>"$rcs" ) &
	done
	wait
	[ "$(wc -l <"$rcs")" = "$n" ] || fail "$n runs: only $(wc -l <"$rcs") finished"
	while read -r i rc; do
		[ "$rc" = 0 ] || fail "$n runs: run $i exited $rc: $(head -c 300 "$T/c$n-$i.err")"
		grep -q WROTE "$T/c$n-$i.out" && fail "$n runs: run $i wrote a dangerous name: $(grep WROTE "$T/c$n-$i.out" | head -3)"
		[ "$(cat "$dir/ok-$i")" = ok ] || fail "$n runs: run $i's control write is missing"
	done <"$rcs"
	rm -f "$dir"/ok-*
	expect_same_tree "$dir" "$T/.snap-c$n" "$n concurrent runs"
}

t_concurrent_runs_share_placeholders() { # 2, 8 and 32 overlapping runs: all succeed, every dangerous name refused throughout, project clean after
	concurrent 2
	concurrent 8
	concurrent 32
	# nothing of theirs is left in the registry either
	local root=/tmp/sbx-$(id -u) e left=
	[ -d /dev/shm ] && root=/dev/shm/sbx-$(id -u)	# the registry's place (registry_root_pick)
	[ -d "$root/ph" ] || fail "setup: no registry at $root/ph"
	for e in "$root"/ph/*; do
		[ -e "$e" ] && grep -qF "$P/" "$e" && left+=" $e"
	done
	[ -z "$left" ] || fail "registry entries of this project left:$left"
}
TESTS+=(concurrent_runs_share_placeholders)

t_concurrent_run_killed() { # a run SIGKILLed while another covers the same placeholders: the other's denies hold; the next run reclaims
	snap "$P" >"$T/.snap"
	start_bg "$T/a.out" -- sh -c "sleep ${TOKBASE}1"
	local a=$BGPID i; for i in $(seq 50); do [ -d "$P/.vscode" ] && break; sleep 0.1; done
	[ -d "$P/.vscode" ] || fail "setup: run A made no placeholder"
	start_bg "$T/b.out" -- sh -c "sleep 1; $(try_danger) echo b-done"
	kill -KILL "$a"; wait_pid "$a" 10
	wait_pid "$BGPID" 20 || fail "run B did not finish"
	[ "$WRC" = 0 ] || fail "run B exited $WRC"
	grep -q WROTE "$T/b.out" && fail "run B wrote a dangerous name after run A was killed: $(grep WROTE "$T/b.out")"
	grep -q b-done "$T/b.out" || fail "run B's control line is missing"
	for i in $(seq 50); do [ -z "$(procs_with "sleep ${TOKBASE}1")" ] && break; sleep 0.1; done
	run_sbx -- true
	expect_rc 0
	expect_same_tree "$P" "$T/.snap" "after a killed run, a finished one and a third"
}
TESTS+=(concurrent_run_killed)

t_person_file_survives_cleanup() { # a placeholder replaced on the host by the person's own empty file survives cleanup, normal and after SIGKILL
	local sig
	for sig in TERM KILL; do
		rm -rf "$P" && mkdir -p "$P" && cd "$P" || fail "setup"
		start_bg "$T/a.out" -- sh -c "sleep ${TOKBASE}2"
		local i; for i in $(seq 50); do [ -d "$P/.mcp.json" ] && break; sleep 0.1; done
		[ -d "$P/.mcp.json" ] || fail "setup: no placeholder .mcp.json"
		rmdir "$P/.mcp.json" && : >"$P/.mcp.json" || fail "setup: cannot replace the placeholder"
		kill -"$sig" "$BGPID"
		wait_pid "$BGPID" 20 || fail "sbx did not exit after SIG$sig"
		for i in $(seq 50); do [ -z "$(procs_with "sleep ${TOKBASE}2")" ] && break; sleep 0.1; done
		run_sbx -- true      # the next run reclaims what a killed one left
		expect_rc 0
		[ -f "$P/.mcp.json" ] || fail "SIG$sig: the person's own .mcp.json was removed"
		# control: the placeholders that were not replaced are gone
		[ ! -e "$P/.vscode" ] && [ ! -e "$P/.bashrc" ] || fail "SIG$sig: sbx's own placeholders were left: $(ls -A "$P")"
	done
}
TESTS+=(person_file_survives_cleanup)

# pool_key DIR: the pool's name for placeholders in DIR (sbx.c ph_pool_key: device-inode-handle
# type-handle bytes, hex; the handle from name_to_handle_at)
pool_key() {
	python3 - "$1" <<'PY'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(struct.pack("Ii", 64, 0) + bytes(64))
mnt = ctypes.c_int()
if libc.name_to_handle_at(-100, sys.argv[1].encode(), buf, ctypes.byref(mnt), 0) != 0:
    sys.exit("name_to_handle_at: " + os.strerror(ctypes.get_errno()))
n, t = struct.unpack("Ii", buf.raw[:8])
st = os.stat(sys.argv[1])
print("%x-%x-%x-%s" % (st.st_dev, st.st_ino, t & 0xffffffff, buf.raw[8:8 + n].hex()))
PY
}

t_placeholder_pool() { # placeholders set aside in the pool between runs: denies hold, the project stays clean, a held descriptor's files never come back
	local root=/tmp/sbx-$(id -u) key pool i
	rm -rf "$P" && mkdir -p "$P" && cd "$P" || fail "setup"
	snap "$P" >"$T/.snap"
	run_sbx -- true
	expect_rc 0
	key=$(pool_key "$P"); pool=$root/pool/$key
	if [ "$(stat -c %d "$P")" != "$(stat -c %d "$root")" ]; then
		# another filesystem than the runtime root's: mkdir and rmdir, as before
		[ ! -e "$pool" ] || fail "a pool for a project on another filesystem: $pool"
		expect_same_tree "$P" "$T/.snap" "a run on another filesystem than $root"
		return 0
	fi
	[ -d "$pool/.vscode" ] && [ -d "$pool/.bashrc" ] || fail "no pooled placeholders in $pool: $(ls -A "$pool" 2>&1)"
	expect_same_tree "$P" "$T/.snap" "after a run whose placeholders went to the pool"
	# taken back by the next run: the denies hold, the control write works
	run_sbx -- sh -c "$(try_danger) ls -d .vscode .bashrc >/dev/null && echo held; echo ok > ok.txt && echo control-ok"
	expect_rc 0
	expect_not_contains "$OUT" WROTE "a dangerous name written with pooled placeholders"
	expect_contains "$OUT" held "the placeholders, taken back from the pool"
	expect_contains "$OUT" control-ok "the allowed write"
	rm -f ok.txt
	expect_same_tree "$P" "$T/.snap" "after a run that took its placeholders from the pool"
	# the attack: a process that can write the project (another sandbox with it writable, here
	# the test itself) keeps a descriptor on a placeholder, and writes through it once the
	# directory is in the pool, hoping the next run puts tasks.json where the editor reads it
	start_bg "$T/a.out" -- sh -c "sleep ${TOKBASE}3"
	for i in $(seq 50); do [ -d "$P/.vscode" ] && break; sleep 0.1; done
	[ -d "$P/.vscode" ] || fail "setup: run A made no placeholder"
	python3 - "$P/.vscode" "$BGPID" <<'PY' >"$T/held.out" 2>&1
import os, sys, time, signal
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
os.kill(int(sys.argv[2]), signal.SIGTERM)   # run A ends; its placeholders go to the pool
for _ in range(200):   # until sbx has set the placeholder aside
    if not os.path.lexists(sys.argv[1]):
        break
    time.sleep(0.05)
w = os.open("tasks.json", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
os.write(w, b'{"tasks":[{"label":"pwn","command":"touch /tmp/pwned","runOptions":{"runOn":"folderOpen"}}]}')
os.close(w); print("planted")
PY
	wait_pid "$BGPID" 20
	grep -q planted "$T/held.out" || fail "setup: could not write through the held descriptor: $(cat "$T/held.out")"
	[ -f "$pool/.vscode/tasks.json" ] || fail "setup: the planted file is not in the pooled directory"
	run_sbx -v -- sh -c 'ls -A .vscode; echo listed'
	expect_rc 0
	expect_contains "$OUT" listed "the run with a tainted pool entry"
	expect_not_contains "$OUT" tasks.json "the held descriptor's file, inside the next run"
	expect_contains "$ERR" "is not empty, left where it is" "the note about the tainted pool entry"
	[ ! -e "$P/.vscode" ] || fail "the tainted pooled directory came back to the project: $(ls -A "$P/.vscode")"
	[ -f "$pool/.vscode/tasks.json" ] || fail "the planted file was removed (nothing of anyone's is deleted)"
	# the person's own file put inside a placeholder during a run: stays where it was put
	start_bg "$T/b.out" -- sh -c "sleep ${TOKBASE}4"
	for i in $(seq 50); do [ -d "$P/.idea" ] && break; sleep 0.1; done
	[ -d "$P/.idea" ] || fail "setup: run B made no placeholder .idea"
	echo mine >"$P/.idea/workspace.xml"
	kill -TERM "$BGPID"; wait_pid "$BGPID" 20
	[ "$(cat "$P/.idea/workspace.xml" 2>/dev/null)" = mine ] || fail "the person's file in .idea was moved or removed"
	rm -rf "$P/.idea" "$pool/.vscode"
}
TESTS+=(placeholder_pool)

t_placeholder_pool_parent_reused() { # a pooled placeholder never moves into a new directory that reuses its old parent's inode
	local root=/tmp/sbx-$(id -u) key pool ino i want
	rm -rf "$P" && mkdir -p "$P/a" && cd "$P/a" || fail "setup"
	run_sbx -- true
	expect_rc 0
	key=$(pool_key "$P/a"); pool=$root/pool/$key
	[ -d "$pool/.vscode" ] || skip "no pool here (project on another filesystem than $root)"
	ino=$(stat -c %i "$pool/.vscode")
	# the attacker: another sandbox that could write project a kept a descriptor on its .vscode
	exec 3<"$pool/.vscode"
	# the person removes project a and makes another directory: ext4 (and others) hand the freed
	# inode to the next directory made, so b has a's device and inode, not its generation
	cd "$P" && rm -rf "$P/a"
	want=$(printf %s "$key" | cut -d- -f2)
	for i in $(seq 20); do
		mkdir "$P/b" && [ "$(printf %x "$(stat -c %i "$P/b")")" = "$want" ] && break
		mv "$P/b" "$P/b.$i"
	done
	[ "$(printf %x "$(stat -c %i "$P/b")")" = "$want" ] || { exec 3<&-; rm -rf "$pool"; skip "the filesystem did not reuse the inode"; }
	cd "$P/b"
	start_bg "$T/b.out" -- sh -c "sleep 3; ls -A .vscode; echo listed"
	for i in $(seq 50); do [ -d "$P/b/.vscode" ] && break; sleep 0.1; done
	[ -d "$P/b/.vscode" ] || fail "setup: run B made no placeholder"
	# the held descriptor writes into whatever directory it names now
	echo '{"tasks":[{"label":"pwn","command":"touch /tmp/pwned","runOptions":{"runOn":"folderOpen"}}]}' \
		>"/proc/$BASHPID/fd/3/tasks.json" 2>/dev/null
	exec 3<&-
	wait_pid "$BGPID" 20
	[ ! -e "$P/b/.vscode/tasks.json" ] || fail "project a's pooled placeholder went into project b, with the held descriptor's tasks.json: $(ls -A "$P/b/.vscode")"
	# control: project b's own placeholders are pooled and taken back by b's next run
	[ ! -e "$P/b/.vscode" ] || fail "run B left its placeholder: $(ls -A "$P/b/.vscode")"
	key=$(pool_key "$P/b")
	[ -d "$root/pool/$key/.vscode" ] || fail "run B's placeholder is not in b's pool"
	ino=$(stat -c %i "$root/pool/$key/.vscode")
	run_sbx -- sh -c 'stat -c %i .vscode; echo ok > ok.txt && echo control-ok'
	expect_rc 0
	expect_contains "$OUT" "$ino" "b's own pooled placeholder, taken back by b's next run"
	expect_contains "$OUT" control-ok "the allowed write"
	rm -rf "$pool" "$root/pool/$key"
}
TESTS+=(placeholder_pool_parent_reused)

t_placeholder_pool_put_swapped() { # a directory swapped in at a placeholder's name just before it goes to the pool: it stays the person's, in place
	need_private_places
	local n i key
	command -v strace >/dev/null || skip "no strace (it holds sbx's rename to the pool, to swap the directory meanwhile)"
	rm -rf "$P" && mkdir -p "$P" && cd "$P" || fail "setup"
	# every dangerous name the person's own file, but .vscode: its placeholder is the only one
	for n in .bash_profile .bashrc .claude .codex .gitconfig .gitmodules .idea .mcp.json .profile .ripgreprc .zprofile .zshrc; do
		: >"$P/$n"
	done
	mkdir "$P/docs" && echo mine >"$P/docs/mine.txt"
	# control: the placeholder goes to the pool, the project is as it was
	snap "$P" >"$T/.snap"
	run_sbx -- true
	expect_rc 0
	key=$(pool_key "$P")
	[ -d "/tmp/sbx-$(id -u)/pool/$key/.vscode" ] || skip "no pool here (project on another filesystem)"
	expect_same_tree "$P" "$T/.snap" "after a run whose placeholder went to the pool"
	# the attack: sbx's rename to the pool is held 4 s (strace); meanwhile what another sandbox
	# that can write the project does: the placeholder renamed away, the person's docs put at
	# its name, where sbx has already found an empty directory
	# which renameat2 is the put: the TMPDIR's spare taken (if there is one), .vscode taken from
	# the pool, then .vscode put back (the one held)
	local when=2
	[ -n "$(ls -A "/tmp/sbx-$(id -u)/spare-tmp" 2>/dev/null)" ] && when=3
	printf '$ strace ... sbx -- sh -c "touch ended"\n'
	strace -o "$T/strace.log" -e trace=renameat2 -e inject=renameat2:delay_enter=4000000:when=$when \
		"$SBX" -- sh -c 'touch ended' >"$T/s.out" 2>"$T/s.err" &
	local pid=$!
	for i in $(seq 100); do [ -e "$P/ended" ] && break; sleep 0.1; done
	[ -e "$P/ended" ] || fail "setup: the run did not start"
	sleep 1.5
	mv "$P/.vscode" "$P/.vscode-away" && mv "$P/docs" "$P/.vscode" || fail "setup: the swap"
	wait "$pid"
	log_file strace "$T/strace.log"; log_file err "$T/s.err"
	grep -q DELAYED "$T/strace.log" || fail "setup: the rename to the pool was not held: $(cat "$T/strace.log")"
	[ "$(cat "$P/.vscode/mine.txt" 2>/dev/null)" = mine ] ||
		fail "the person's directory swapped in at .vscode was moved away (into sbx's pool: $(ls -A "/tmp/sbx-$(id -u)/pool/$key/.vscode" 2>&1))"
	rm -rf "/tmp/sbx-$(id -u)/pool/$key"
}
TESTS+=(placeholder_pool_put_swapped)

t_placeholder_swapped_before_bind() { # a placeholder swapped for a link while the sandbox is built: sbx will not cover the link, nothing runs
	local w=$T/bin/bwrap-swap real
	real=$(command -v bwrap) || skip "no bwrap"
	rm -rf "$P" && mkdir -p "$P" "$T/bin" && cd "$P" || fail "setup"
	echo 'echo original' >"$P/payload.sh"
	# the stand-in runs between sbx's check of the placeholders (ph_cover) and sbx-init's
	# binds: what another sandbox that can write the project could do in that window
	{
		echo '#!/bin/sh'
		echo '[ -n "$SWAP" ] && mv "$PWD/.bashrc" "$PWD/.bashrc.moved" && ln -s "$PWD/payload.sh" "$PWD/.bashrc"'
		echo "exec '$real' \"\$@\""
	} >"$w"
	chmod 755 "$w"
	# control: the same stand-in without the swap runs the command, .bashrc held
	SWAP= run_sbx --bwrap-path="$w" -- sh -c 'echo pwn > .bashrc 2>/dev/null && echo WROTE; echo ran'
	expect_rc 0
	expect_contains "$OUT" ran "the command, through the stand-in bwrap"
	expect_not_contains "$OUT" WROTE "a write to .bashrc"
	# the attack: refused before the command runs, the link's target untouched
	SWAP=1 run_sbx --bwrap-path="$w" -- sh -c 'echo "echo pwned" > .bashrc; echo "echo pwned" > payload.sh; echo ran'
	expect_rc 125
	expect_contains "$ERR" "$P/.bashrc changed on this machine while the sandbox was being built (another program works there), into what sbx cannot cover (a symlink" \
		"the reason"
	expect_not_contains "$OUT" ran "the command, with a placeholder swapped"
	[ "$(cat "$P/payload.sh")" = "echo original" ] || fail "the link's target was written: $(cat "$P/payload.sh")"
	[ -L "$P/.bashrc" ] || fail "setup: the swap did not happen"
	rm -f "$P/.bashrc"; rmdir "$P/.bashrc.moved" 2>/dev/null || true
}
TESTS+=(placeholder_swapped_before_bind)

# vanish_repo DIR: a repository as `git init` and a hook leave it
vanish_repo() {
	mkdir -p "$1/.git/hooks" && echo 'ref: refs/heads/main' >"$1/.git/HEAD" && printf '[core]\n' >"$1/.git/config" &&
		printf '#!/bin/sh\nexit 0\n' >"$1/.git/hooks/pre-commit"
}

t_vanish_before_mount() { # names removed or replaced by another program after sbx covered them and before the sandbox's binds: the run goes on, each name covered as it is now (a placeholder where it went), none writable; a root bwrap mounts itself, removed: the reason names it, not --check
	local w=$T/bin/bwrap-vanish real s=$T/shared try
	real=$(command -v bwrap) || skip "no bwrap"
	mkdir -p "$T/bin" && cd "$P" || fail "setup"
	# the stand-in runs $VANISH between sbx's cover of each name (ph_cover) and the binds
	# (bwrap's, then sbx-init's): what another program at work in a writable directory does then
	{
		echo '#!/bin/sh'
		echo '[ -n "$VANISH" ] && sh -c "$VANISH"'
		echo "exec '$real' \"\$@\""
	} >"$w"
	chmod 755 "$w"
	vanish_setup() {
		rm -rf "$s" && mkdir -p "$s" || fail "setup"
		for f in .bashrc .zshrc .gitconfig; do echo '# theirs' >"$s/$f"; done
		vanish_repo "$s/repo"
		echo '# theirs' >"$P/.profile"	# a name held in the project: a placeholder when missing
	}
	# what the command tries: each name written or made, a hook made or written, and its control
	try="cd '$s'; for f in .bashrc .zshrc .gitconfig .zshrc/x '$P/.profile'; do (echo pwn >> \"\$f\") 2>/dev/null && echo \"WROTE \$f\"; done
		(mkdir -p repo/.git/hooks && echo pwn > repo/.git/hooks/post-checkout) 2>/dev/null && echo 'WROTE a new hook'
		(echo pwn >> repo/.git/hooks/pre-commit) 2>/dev/null && echo 'WROTE pre-commit'
		echo ok > ok && echo control-ok"

	# control: the same stand-in, nothing changed; every name refused, the control written
	vanish_setup
	VANISH= run_sbx --bwrap-path="$w" --allow-write="$s" -- sh -c "$try"
	expect_rc 0 "control"
	expect_contains "$OUT" control-ok "the control write"
	expect_not_contains "$OUT" WROTE "a dangerous name, nothing changed"

	# removed: two dotfiles, the whole repository (its pins and hooks), the project's .profile
	vanish_setup
	VANISH="rm -f '$s/.bashrc' '$s/.gitconfig' '$P/.profile'; rm -rf '$s/repo'" \
		run_sbx -v --bwrap-path="$w" --allow-write="$s" -- sh -c "$try"
	expect_rc 0 "names removed before the binds"
	expect_contains "$OUT" control-ok "the control write, names removed"
	expect_not_contains "$OUT" WROTE "a name removed before the binds, made again inside"
	expect_contains "$ERR" "$s/.bashrc changed on this machine after sbx covered it" "the -v note"
	[ -e "$s/.bashrc" ] || [ -e "$s/.gitconfig" ] || [ -e "$s/repo" ] || [ -e "$P/.profile" ] &&
		fail "a placeholder left after the run: $(ls -A "$s" "$P")"

	# replaced: .zshrc by a directory, the hooks directory by a new one
	vanish_setup
	VANISH="rm -f '$s/.zshrc' && mkdir '$s/.zshrc' && rm -rf '$s/repo/.git/hooks' && mkdir '$s/repo/.git/hooks'" \
		run_sbx --bwrap-path="$w" --allow-write="$s" -- sh -c "$try"
	expect_rc 0 "names replaced before the binds"
	expect_contains "$OUT" control-ok "the control write, names replaced"
	expect_not_contains "$OUT" WROTE "a name replaced before the binds"
	[ -d "$s/.zshrc" ] && [ -z "$(ls -A "$s/.zshrc")" ] || fail "the other program's .zshrc directory: $(ls -la "$s/.zshrc")"
	[ -d "$s/repo/.git/hooks" ] && [ -z "$(ls -A "$s/repo/.git/hooks")" ] || fail "the new hooks directory was written"

	# a root bwrap mounts itself, removed: not this machine's setup, so no --check
	vanish_setup
	VANISH="rm -rf '$s'" run_sbx --bwrap-path="$w" --allow-write="$s" -- sh -c 'echo ran'
	expect_rc 125 "a root removed before bwrap mounts it"
	expect_not_contains "$OUT" ran "the command, its root gone"
	expect_contains "$ERR" "$s changed on this machine while sbx was starting (another program works there)" "the reason"
	expect_not_contains "$ERR" "--check" "the hint"
	rm -f "$P/.profile"
}
TESTS+=(vanish_before_mount)

t_pinned_cwd_relative_paths() { # the project inside a writable root: sbx-init pins the project's directory, and a path relative to it meets the covers made on the pin (the command does not stay in the tree below the pin)
	mkdir -p "$P/.git/hooks" && echo 'ref: refs/heads/main' >"$P/.git/HEAD" && printf '[core]\n' >"$P/.git/config" &&
		cd "$P" || fail "setup"
	run_sbx -v --allow-write="$T" -- sh -c 'for f in .vscode/x .idea/x .bashrc .git/hooks/pre-commit .git/config ../proj/.vscode/y; do
			(echo pwn > "$f") 2>/dev/null && echo "WROTE $f"; done
		cd .git && (echo pwn > hooks/x) 2>/dev/null && echo "WROTE hooks/x"; cd ..
		echo ok > ok.txt && echo control-ok'
	expect_rc 0
	expect_contains "$ERR" "init pin   $P  <-" "the project's directory, pinned by sbx-init"
	expect_contains "$OUT" control-ok "the control write"
	expect_not_contains "$OUT" WROTE "a path relative to the pinned directory, into a covered name"
	[ "$(cat "$P/ok.txt")" = ok ] || fail "the control write is missing from the project"
}
TESTS+=(pinned_cwd_relative_paths)

t_vanish_stress() { # SBX_VANISH_RUNS runs (200 by default) while another program keeps creating and removing dotfiles and repositories in the project and in another writable root: none fails, every dangerous name sbx covered refuses the command's writes, the control write works every time
	local n=${SBX_VANISH_RUNS:-200} i rc s=$T/shared log=$T/racer.log runf=$T/run.cur racer script start bad= nbad=0
	cd "$P" || fail "setup"
	cc -O2 -o "$T/racer" "$HERE/tests/helpers/vanish_racer.c" 2>"$T/cc.err" || fail "the racer did not build: $(head -c 300 "$T/cc.err")"
	mkdir -p "$s" && : >"$log" && echo 0 >"$runf" || fail "setup"
	# each dotfile and repository of both directories changes at most once a run, one change
	# every 0.3 ms from the run's start: during sbx's scan, cover and binds (vanish_racer.c)
	"$T/racer" "$runf" "$log" 300 "$P" "$s" &
	racer=$!
	# the command: appends to every dangerous file it finds (never creates one: the kernel takes
	# a mount off a name another program removes, so a name gone is no refusal to check), makes a
	# file in every dangerous directory (a placeholder), appends to every repository's hook and
	# config. A write into a file another program was removing as it was opened goes nowhere
	# (fsop append-linked: ok:unlinked). Not sbx's to cover, and so not counted: what the racer
	# made during this run in the other root (a name not held there, made after the scan: srt's
	# rule too) and the repositories it made during it. The racer logs each name before making
	# it, and the log is read after the writes. Each result is "ITEM>PATH RESULT".
	script='n=$1 s=$2 log=$3
		{
		for d in "$PWD" "$s"; do
			for f in .bash_profile .bashrc .zshrc .gitconfig .profile .gitmodules .mcp.json .zprofile .ripgreprc; do
				p=$d/$f
				if [ -f "$p" ]; then echo "$p>$p append-linked $p"; elif [ -d "$p" ]; then echo "$p>$p/x create $p/x"; fi
			done
			for r in "$d"/repo*; do
				[ -d "$r/.git" ] || continue
				for f in .git/hooks/pre-commit .git/config; do [ -e "$r/$f" ] && echo "$r>$r/$f append-linked $r/$f"; done
				echo "$r>$r/.git/hooks/new create $r/.git/hooks/new"
			done
		done
		} | "$4" - >"$TMPDIR/results"
		while read -r label res; do
			[ "$res" = ok ] || continue
			item=${label%%>*}
			case $item in "$PWD"/.*) ;; *) grep -qxF "C $item $n" "$log" && continue ;; esac
			echo "WROTE ${label#*>}"
		done <"$TMPDIR/results"
		echo ok > "ok-$n" && echo control-ok'
	start=$SECONDS
	for i in $(seq 1 "$n"); do
		echo "$i" >"$runf"
		timeout -k 5 "$TMO" "$SBX" --allow-write="$s" -- sh -c "$script" x "$i" "$s" "$log" "$FSOP" >"$T/v.out" 2>"$T/v.err"
		rc=$?
		if [ "$rc" != 0 ] || ! grep -q control-ok "$T/v.out" || grep -q WROTE "$T/v.out" || [ ! -f "$P/ok-$i" ]; then
			nbad=$((nbad + 1))
			[ "$nbad" -gt 10 ] ||
				bad+="    run $i: exit $rc: $(grep WROTE "$T/v.out" | head -3 | tr '\n' ' ')$(head -c 300 "$T/v.err")"$'\n'
		fi
		rm -f "$P/ok-$i"
	done
	touch "$P/.racer-stop"
	wait "$racer"
	rm -f "$P/.racer-stop"
	note "$n runs in $((SECONDS - start)) s, $(grep -c . "$log") names made by the racer meanwhile"
	[ "$nbad" = 0 ] || fail "$nbad of $n runs failed or wrote a dangerous name (the first 10):"$'\n'"${bad%$'\n'}"
}
TESTS+=(vanish_stress)

t_registry_on_tmpfs() { # the placeholder registry lives on /dev/shm, which no command sees (bwrap's own /dev), not even under allow-write /dev/shm; entries a killed run left in the old place (the runtime root) are still reclaimed
	need_private_places
	[ -d /dev/shm ] || skip "no /dev/shm here: the registry stays in the runtime root"
	local uid reg old i; uid=$(id -u); reg=/dev/shm/sbx-$uid; old=/tmp/sbx-$uid
	rm -rf "$P" && mkdir -p "$P" && cd "$P" || fail "setup"
	start_bg "$T/a.out" -- sh -c "sleep ${TOKBASE}5"
	for i in $(seq 50); do [ -d "$P/.vscode" ] && break; sleep 0.1; done
	[ -d "$P/.vscode" ] || fail "setup: the run made no placeholder"
	grep -lqF "$P/.vscode" "$reg"/ph/* 2>/dev/null || fail "no registry entry for $P/.vscode in $reg/ph"
	# a second run, with /dev/shm writable by its policy, looks for it
	run_sbx --allow-write=/dev/shm -- sh -c "ls -A /dev/shm; [ -e $reg ] && echo SEEN; mkdir -p $reg/ph 2>/dev/null && : > $reg/ph/forged && echo PLANTED; echo ok > ok.txt && echo control-ok"
	expect_rc 0
	expect_not_contains "$OUT" SEEN "the registry, from inside"
	expect_contains "$OUT" control-ok "the allowed write"
	# (what it made went to the sandbox's own /dev/shm, bwrap's, gone with the run)
	[ ! -e "$reg/ph/forged" ] || fail "a file planted in the registry"
	kill -TERM "$BGPID"; wait_pid "$BGPID" 20
	rm -f ok.txt
	# the old place: an entry a killed run of an older sbx left in $old/ph for a placeholder
	# it made; the next run reclaims it (the placeholder goes, and so does the entry)
	install -d -m 0700 "$old/ph" && mkdir -p "$O/legacy" && mkdir "$O/legacy/.bashrc" ||
		fail "setup: the legacy placeholder"	# ph as sbx makes it: 0700
	local path=$O/legacy/.bashrc name
	name=$(python3 -c 'import sys
h = 0xcbf29ce484222325
for b in sys.argv[1].encode(): h = ((h ^ b) * 0x100000001b3) % (1 << 64)
print("%016x" % h)' "$path")
	printf 'sbx-placeholder 1\nmade d %s %s %s\n%s\n' "$(stat -c %d "$path")" "$(stat -c %i "$path")" \
		"$(stat -c %Z "$path")" "$path" >"$old/ph/$name"
	run_sbx -v -- true
	expect_rc 0
	[ ! -e "$path" ] || fail "the placeholder an older sbx left was not reclaimed"
	[ ! -e "$old/ph/$name" ] || fail "its entry in $old/ph was not removed"
	expect_contains "$ERR" "left by a run that did not finish; reclaimed" "the note"
}
TESTS+=(registry_on_tmpfs)

t_runtime_state_repaired() { # runtime state of ours at a mode sbx would not set (mkdir -p under umask 022) is repaired and said; a directory others could write is refused with the fix, nothing run
	need_private_places
	local uid root reg; uid=$(id -u); root=/tmp/sbx-$uid; reg=/dev/shm/sbx-$uid
	[ -d /dev/shm ] || reg=$root
	rm -rf "$root" "$reg"
	(umask 022; mkdir -p "$root/ph" "$reg/ph" "$root/spare-tmp") || fail "setup"
	run_sbx -- sh -c 'echo ran'
	expect_rc 0 "a run over runtime state made at 0755"
	expect_contains "$OUT" ran "the command"
	expect_contains "$ERR" "$root was mode 0755; sbx makes its directories 0700" "the repair, said"
	for d in "$root" "$root/ph" "$reg" "$reg/ph"; do
		[ "$(stat -c %a "$d")" = 700 ] || fail "$d left at mode $(stat -c %a "$d")"
	done
	run_sbx -- true
	expect_rc 0 "the next run"
	[ -z "$ERR" ] || fail "the next run still speaks of it: $ERR"
	# the attack: a registry directory others could have written in (mode 0777): its
	# entries are not trusted; refused, with the command to fix it, nothing run
	chmod 0777 "$reg/ph"
	run_sbx -- sh -c 'echo ran'
	expect_rc 125 "registry others could write"
	expect_not_contains "$OUT" ran "the command"
	expect_contains "$ERR" "rm -rf $reg/ph" "the fix, named"
	chmod 0700 "$reg/ph"
	# a runtime root others could write (0777, ours): passed over, never trusted; the run
	# goes on in the next place, said under -v
	chmod 0777 "$root"
	run_sbx -v -- sh -c 'echo "tmp=$TMPDIR"'
	expect_rc 0 "a root others could write"
	expect_contains "$ERR" "$root is not a private directory" "the note"
	expect_contains "$OUT" "tmp=/var/tmp/sbx-$uid/tmp-" "the next place"
	chmod 0700 "$root"
	run_sbx -- sh -c 'echo "tmp=$TMPDIR"'
	expect_contains "$OUT" "tmp=$root/tmp-" "the root, private again (control)"
}
TESTS+=(runtime_state_repaired)

t_runtime_dir_planted_by_another_user() { # another local user pre-creates sbx-UID in /tmp, /var/tmp and /dev/shm (sticky: the victim cannot remove them); the victim's runs go on in $XDG_RUNTIME_DIR or ~/.cache, said under -v, and write nothing in what the other user made
	need_private_places
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed to run as two users"
	local v=4242 a=65534 vh=$T/vhome vp=$T/vproj d
	local AS_V=(setpriv --reuid=$v --regid=$v --clear-groups) AS_A=(setpriv --reuid=$a --regid=$a --clear-groups)
	rm -rf /tmp/sbx-$v /var/tmp/sbx-$v /dev/shm/sbx-$v /run/user/$v
	mkdir -p "$vh" "$vp" && chown $v:$v "$vh" "$vp" && chmod 700 "$vh" || fail "setup"
	"${AS_V[@]}" bwrap --unshare-user --unshare-net --ro-bind / / --dev /dev --proc /proc true 2>"$T/bw.err" ||
		skip "bwrap cannot make a sandbox as uid $v here: $(head -c 200 "$T/bw.err")"
	victim() { (cd "$vp" && env -u XDG_RUNTIME_DIR HOME="$vh" "$@" timeout 30 "${AS_V[@]}" "$SBX" -v -- sh -c 'echo "tmp=$TMPDIR"; echo ok > f && echo wrote') >"$T/v.out" 2>"$T/v.err"; RC=$?
		OUT=$(cat "$T/v.out"); ERR=$(cat "$T/v.err"); log_file out "$T/v.out"; log_file err "$T/v.err"; }
	# control: nothing planted: the shared place
	victim
	expect_rc 0 "the victim's run, nothing planted"
	expect_contains "$OUT" "tmp=/tmp/sbx-$v/tmp-" "the shared place (control)"
	rm -rf /tmp/sbx-$v /dev/shm/sbx-$v "$vp/f"
	# the attack: the other user makes each place first, open to themselves
	for d in /tmp/sbx-$v /var/tmp/sbx-$v /dev/shm/sbx-$v; do
		"${AS_A[@]}" mkdir -m 0777 "$d" || fail "setup: the other user cannot make $d"
	done
	victim
	expect_rc 0 "the victim's run, every shared place planted"
	expect_contains "$OUT" wrote "the command"
	expect_contains "$OUT" "tmp=$vh/.cache/sbx-$v/tmp-" "the fallback in the home's cache"
	expect_contains "$ERR" "/tmp/sbx-$v is not a private directory of uid $v" "the note under -v"
	[ "$(stat -c '%U %a' "$vh/.cache/sbx-$v")" = "4242 700" ] || [ "$(stat -c '%u %a' "$vh/.cache/sbx-$v")" = "4242 700" ] ||
		fail "the fallback is not the victim's private directory: $(stat -c '%u %a' "$vh/.cache/sbx-$v")"
	for d in /tmp/sbx-$v /var/tmp/sbx-$v /dev/shm/sbx-$v; do
		[ -z "$(ls -A "$d")" ] || fail "the victim's run wrote in $d, which the other user made: $(ls -A "$d")"
	done
	# $XDG_RUNTIME_DIR, when it is the victim's and 0700, comes before the cache
	mkdir -m 0700 "$T/xdg" && chown $v:$v "$T/xdg" || fail "setup"
	victim XDG_RUNTIME_DIR="$T/xdg"
	expect_rc 0 "the victim's run with XDG_RUNTIME_DIR"
	expect_contains "$OUT" "tmp=$T/xdg/sbx-$v/tmp-" "the fallback in XDG_RUNTIME_DIR"
	# one that is not private is passed over
	chmod 0755 "$T/xdg"; chmod 0777 "$T/xdg"
	victim XDG_RUNTIME_DIR="$T/xdg"
	expect_rc 0 "XDG_RUNTIME_DIR others can write"
	expect_contains "$OUT" "tmp=$vh/.cache/sbx-$v/tmp-" "an XDG_RUNTIME_DIR others can write is passed over"
	rm -rf /tmp/sbx-$v /var/tmp/sbx-$v /dev/shm/sbx-$v
}
TESTS+=(runtime_dir_planted_by_another_user)

t_runtime_dir_planted_for_root() { # another user makes sbx-0 first, 0700 and their own, in /tmp, /var/tmp and /dev/shm: root, who can enter and chmod anything, must still pass it over (it is not root's) and write nothing there; control: an empty place of root's own is used
	need_private_places
	[ "$(id -u)" = 0 ] || skip "the victim is root"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed to act as the other user"
	local d
	trap 'for d in /tmp /var/tmp /dev/shm; do rm -rf "$d/sbx-0"; [ ! -e "$d/sbx-0.saved-$$" ] || mv "$d/sbx-0.saved-$$" "$d/sbx-0"; done' EXIT
	for d in /tmp /var/tmp /dev/shm; do	# the suite's own runs' places, set aside (renamed in place)
		[ ! -e "$d/sbx-0" ] || mv "$d/sbx-0" "$d/sbx-0.saved-$$" || fail "setup: cannot set $d/sbx-0 aside"
	done
	run_sbx -v --allow-write="$P" -- sh -c 'echo "tmp=$TMPDIR"'
	expect_rc 0 "control: nothing planted"
	expect_contains "$OUT" "tmp=/tmp/sbx-0/tmp-" "control: the shared place, made by root"
	for d in /tmp /var/tmp /dev/shm; do
		rm -rf "$d/sbx-0"
		setpriv --reuid=65534 --regid=65534 --clear-groups mkdir -m 0700 "$d/sbx-0" || fail "setup: the other user cannot make $d/sbx-0"
	done
	run_sbx -v --allow-write="$P" -- sh -c 'echo "tmp=$TMPDIR"; echo ok >inside && echo wrote'
	expect_rc 0 "root's run, every shared place planted"
	expect_contains "$OUT" wrote "the command"
	expect_contains "$OUT" "tmp=$H/.cache/sbx-0/tmp-" "the fallback in the home's cache"
	expect_contains "$ERR" "/tmp/sbx-0 is not a private directory of uid 0" "the note under -v"
	for d in /tmp /var/tmp /dev/shm; do
		[ -z "$(ls -A "$d/sbx-0")" ] || fail "root's run wrote in $d/sbx-0, which the other user made: $(ls -A "$d/sbx-0")"
		[ "$(stat -c '%u %a' "$d/sbx-0")" = "65534 700" ] || fail "$d/sbx-0 was changed: $(stat -c '%u %a' "$d/sbx-0")"
	done
}
TESTS+=(runtime_dir_planted_for_root)

t_runtime_fallback_planted_by_a_run() { # a run that may write ~/.cache cannot make the missing fallback ~/.cache/sbx-UID with a dead run's record: a later run that falls back to it (another user made /tmp/sbx-UID first) would trust the record and rename the person's git hooks outside every root
	need_private_places
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed to run as two users"
	command -v git >/dev/null || skip "git is not installed"
	local v=4242 a=65534 vh=$T/vhome vp=$T/vproj d
	local AS_V=(setpriv --reuid=$v --regid=$v --clear-groups)
	rm -rf /tmp/sbx-$v /var/tmp/sbx-$v /dev/shm/sbx-$v /run/user/$v
	mkdir -p "$vh/.cache" "$vp" && git init -q "$vh/repo" && printf '#!/bin/sh\n' >"$vh/repo/.git/hooks/pre-commit" &&
		chown -R $v:$v "$vh" "$vp" && chmod 700 "$vh" || fail "setup"
	"${AS_V[@]}" bwrap --unshare-user --unshare-net --ro-bind / / --dev /dev --proc /proc true 2>"$T/bw.err" ||
		skip "bwrap cannot make a sandbox as uid $v here: $(head -c 200 "$T/bw.err")"
	victim() { (cd "$vp" && env -u XDG_RUNTIME_DIR HOME="$vh" timeout 30 "${AS_V[@]}" "$SBX" "$@") >"$T/v.out" 2>"$T/v.err"; RC=$?
		OUT=$(cat "$T/v.out"); ERR=$(cat "$T/v.err"); log_file out "$T/v.out"; log_file err "$T/v.err"; }
	# the attack: a run that may write ~/.cache plants the fallback with a dead run's record naming the home
	victim --allow-write="$vh/.cache" -- sh -c "echo ok > $vh/.cache/probe && echo control-ok
		mkdir -p $vh/.cache/sbx-$v/run-1-1 && chmod 700 $vh/.cache/sbx-$v && printf 'T 1\nR $vh\n' > $vh/.cache/sbx-$v/run-1-1/repos && echo PLANTED; true"
	expect_rc 0 "the planting run"
	expect_contains "$OUT" control-ok "a write in ~/.cache (control)"
	expect_not_contains "$OUT" PLANTED "a dead run's record in the fallback runtime directory"
	# another user makes the shared places first; the next run falls back to ~/.cache/sbx-UID
	for d in /tmp/sbx-$v /var/tmp/sbx-$v /dev/shm/sbx-$v; do
		rm -rf "$d"; setpriv --reuid=$a --regid=$a --clear-groups mkdir -m 0777 "$d" || fail "setup: $d"
	done
	victim -- sh -c 'echo "tmp=$TMPDIR"'
	expect_rc 0 "the run that falls back"
	expect_contains "$OUT" "tmp=$vh/.cache/sbx-$v/tmp-" "the fallback in the home's cache (control)"
	[ -e "$vh/repo/.git/hooks/pre-commit" ] || fail "a forged record renamed the person's hook: $(ls "$vh/repo/.git/hooks" | grep -v sample)"
	rm -rf /tmp/sbx-$v /var/tmp/sbx-$v /dev/shm/sbx-$v
}
TESTS+=(runtime_fallback_planted_by_a_run)

t_runtime_recover_others_entries() { # a runtime root that was open to others once, then chmod'ed 0700 by hand: another user's dead-run record in it is left alone (its audit renamed the person's git hooks); a dead run of the person's is still cleaned up
	need_private_places
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed to run as two users"
	command -v git >/dev/null || skip "git is not installed"
	local v=4242 a=65534 vh=$T/vhome vp=$T/vproj root=/tmp/sbx-4242
	local AS_V=(setpriv --reuid=$v --regid=$v --clear-groups) AS_A=(setpriv --reuid=$a --regid=$a --clear-groups)
	rm -rf /tmp/sbx-$v /var/tmp/sbx-$v /dev/shm/sbx-$v /run/user/$v
	mkdir -p "$vh" "$vp" && git init -q "$vh/repo" && printf '#!/bin/sh\n' >"$vh/repo/.git/hooks/pre-commit" &&
		chown -R $v:$v "$vh" "$vp" && chmod 700 "$vh" || fail "setup"
	"${AS_V[@]}" bwrap --unshare-user --unshare-net --ro-bind / / --dev /dev --proc /proc true 2>"$T/bw.err" ||
		skip "bwrap cannot make a sandbox as uid $v here: $(head -c 200 "$T/bw.err")"
	"${AS_V[@]}" sh -c "umask 0; mkdir $root" || fail "setup: the victim's open root"
	"${AS_A[@]}" sh -c "mkdir -p $root/run-1-1 && printf 'T 1\nR $vh\n' >$root/run-1-1/repos && chmod -R 777 $root/run-1-1" ||
		fail "setup: the other user's record"
	"${AS_V[@]}" sh -c "mkdir -m 700 $root/run-2-2 $root/tmp-2-2" || fail "setup: a dead run of the victim's (control)"
	chmod 700 "$root"	# the person closes it again
	(cd "$vp" && env -u XDG_RUNTIME_DIR HOME="$vh" timeout 30 "${AS_V[@]}" "$SBX" -- sh -c 'echo "tmp=$TMPDIR"') >"$T/v.out" 2>"$T/v.err"; RC=$?
	OUT=$(cat "$T/v.out"); ERR=$(cat "$T/v.err"); log_file out "$T/v.out"; log_file err "$T/v.err"
	expect_rc 0 "the victim's run"
	expect_contains "$OUT" "tmp=$root/tmp-" "the root, private again (control)"
	[ -e "$vh/repo/.git/hooks/pre-commit" ] || fail "another user's record renamed the person's hook: $(ls "$vh/repo/.git/hooks" | grep -v sample)"
	[ ! -e "$root/run-2-2" ] && [ ! -e "$root/tmp-2-2" ] || fail "the person's dead run was not cleaned up (control)"
	rm -rf /tmp/sbx-$v /var/tmp/sbx-$v /dev/shm/sbx-$v
}
TESTS+=(runtime_recover_others_entries)

t_runtime_dir_never_writable() { # a run that may write /tmp cannot touch the runtime directory other runs trust
	need_private_places
	local uid root; uid=$(id -u); root=/tmp/sbx-$uid
	sbx_outside_tmp
	mkdir -p "$O/victim-dir"; : >"$O/victim-file"
	# the attack: a policy that allows /tmp, planting what a later run would trust: a
	# registry entry naming the person's empty directory and file, a dead run's audit record
	run_sbx --allow-write=/tmp -- sh -c "for v in $O/victim-dir $O/victim-file; do
		n=\$(printf %s \$v | md5sum | cut -c1-16)
		printf 'sbx-placeholder 1\nmade d 1 1 0\n%s\n' \$v > $root/ph/\$n 2>/dev/null && echo PLANTED-ENTRY; done
		mkdir -p $root/run-1-1 2>/dev/null && echo PLANTED-RUN
		touch $root/probe-$TOKBASE 2>/dev/null && echo WROTE-ROOT; ls $root 2>/dev/null | head -3; echo tmp=\$TMPDIR
		echo ok > /tmp/sbx-test-$TOKBASE && echo control-ok; rm -f /tmp/sbx-test-$TOKBASE"
	expect_rc 0
	expect_not_contains "$OUT" PLANTED "a forged entry or record in the runtime directory"
	expect_not_contains "$OUT" WROTE-ROOT "a write into the runtime directory"
	expect_contains "$OUT" "tmp=/var/tmp/sbx-$uid/tmp-" "the runtime directory moved out of the writable /tmp"
	expect_contains "$OUT" control-ok "a write elsewhere in /tmp (control)"
	[ ! -e "$root/probe-$TOKBASE" ] || fail "the runtime directory was written"
	run_sbx -- true      # the next run reclaims and recovers: nothing of the person's goes
	expect_rc 0
	[ -d "$O/victim-dir" ] && [ -f "$O/victim-file" ] || fail "a forged entry removed the person's files"
	# TMPDIR does not choose it: a TMPDIR in the project is not where it goes
	mkdir -p "$P/tmp"
	TMPDIR=$P/tmp run_sbx -- sh -c 'echo "tmp=$TMPDIR"'
	expect_contains "$OUT" "tmp=$root/tmp-" "the command's TMPDIR"
	[ -z "$(ls -A "$P/tmp")" ] || fail "sbx wrote in the caller's TMPDIR: $(ls -A "$P/tmp")"
	# a policy that makes the runtime directory writable, or every place of it: refused
	run_sbx --allow-write="$root/ph" -- sh -c 'echo ran'
	expect_rc 125
	expect_contains "$ERR" "inside sbx's runtime directory" "the refusal of a write inside it"
	run_sbx --allow-write=/tmp --allow-write=/var/tmp -- sh -c 'echo ran'
	expect_rc 125
	expect_contains "$ERR" "no place for sbx's runtime directory" "the refusal when every place is writable"
	expect_not_contains "$OUT" ran "nothing ran"
}
TESTS+=(runtime_dir_never_writable)

t_other_runs_tmpdir_hidden() { # a command cannot list or read another concurrent run's TMPDIR or the registry
	start_bg "$T/a.out" -- sh -c "echo a-secret > \$TMPDIR/s; echo \$TMPDIR > a-tmp; sleep ${TOKBASE}3"
	local i; for i in $(seq 50); do [ -s "$P/a-tmp" ] && break; sleep 0.1; done
	[ -s "$P/a-tmp" ] || fail "setup: run A did not start"
	[ "$(cat "$(cat "$P/a-tmp")/s")" = a-secret ] || fail "setup: run A's secret is not where it says"
	run_sbx -- sh -c 'a=$(cat a-tmp); root=${a%/tmp-*}; cat "$a/s" 2>/dev/null; ls -A "$root" "$root/ph" /dev/shm 2>/dev/null | grep -v "^$"
		echo mine > "$TMPDIR/m" && cat "$TMPDIR/m"; echo "root=$root"'
	kill -TERM "$BGPID"; wait_pid "$BGPID" 10
	expect_rc 0
	expect_not_contains "$OUT" a-secret "another run's TMPDIR read"
	local a_run; a_run=$(cat "$P/a-tmp"); a_run=${a_run##*/}
	expect_not_contains "$OUT" "$a_run" "another run's directory listed"
	expect_not_contains "$OUT" "placeholders.lock" "the registry listed"
	expect_contains "$OUT" mine "the command's own TMPDIR (control)"
}
TESTS+=(other_runs_tmpdir_hidden)

t_sigpipe_does_not_kill_sbx() { # sbx -v ... 2>&1 | head: sbx carries on, the command runs, placeholders are removed
	snap "$P" >"$T/.snap"
	"$SBX" -v -v -- sh -c 'echo ran > ran.txt' 2>&1 | head -n 1 >/dev/null
	local st=${PIPESTATUS[0]}
	[ "$st" = 0 ] || fail "sbx exited $st (141 = killed by SIGPIPE)"
	[ "$(cat ran.txt 2>/dev/null)" = ran ] || fail "the command did not run"
	rm -f ran.txt
	expect_same_tree "$P" "$T/.snap" "after a run whose stderr pipe closed"
	# control: the command itself still gets the default SIGPIPE (yes | head ends)
	run_sbx -- sh -c 'yes | head -n 2; echo end'
	expect_rc 0
	expect_contains "$OUT" end "yes | head inside"
}
TESTS+=(sigpipe_does_not_kill_sbx)

t_usr_signals_forwarded() { # SIGUSR1 and SIGUSR2 sent to sbx reach the command; sbx exits 128+N and cleans up
	snap "$P" >"$T/.snap"
	local sig n
	for sig in USR1:138 USR2:140; do
		n=${sig#*:}; sig=${sig%:*}
		start_bg "$T/s.out" -- sh -c "sleep ${TOKBASE}4"
		local i; for i in $(seq 50); do [ -n "$(procs_with "sleep ${TOKBASE}4")" ] && break; sleep 0.1; done
		kill -"$sig" "$BGPID"
		wait_pid "$BGPID" 10 || fail "SIG$sig: sbx did not exit"
		[ "$WRC" = "$n" ] || fail "SIG$sig: expected exit $n, got $WRC"
		wait_gone "sleep ${TOKBASE}4" 5 || fail "SIG$sig: the command outlived sbx"
	done
	expect_same_tree "$P" "$T/.snap" "after the signals"
}
TESTS+=(usr_signals_forwarded)

t_deny_read_inside_root_pinned() { # a deny-read deep in a writable root cannot be renamed out from under its cover
	mkdir -p a/b other; echo top-secret >a/b/secret.txt
	policy p <<EOF
allow-write .
deny-read ./a/b/secret.txt
EOF
	run_sbx -c "$T/p" -- sh -c 'cat a/b/secret.txt; mv a a2 2>&1; mv a/b a/b2 2>&1; cat a2/b/secret.txt a/b2/secret.txt 2>&1
		mv other other2 && echo control-renamed'
	expect_rc 0
	expect_not_contains "$OUT" top-secret "the hidden file, read after a rename"
	expect_contains "$OUT" "Device or resource busy" "renaming a pinned ancestor"
	expect_contains "$OUT" control-renamed "renaming an unrelated directory (control)"
	[ -f a/b/secret.txt ] && [ -d other2 ] || fail "the tree after the run"
	# the next run: still hidden where it is
	run_sbx -c "$T/p" -- cat a/b/secret.txt
	expect_not_contains "$OUT" top-secret "the hidden file, next run"
}
TESTS+=(deny_read_inside_root_pinned)

t_missing_paths_said() { # a deny or allow-write naming nothing is said on stderr; a missing allow-write dir is made (0700)
	policy p <<EOF
allow-write .
deny-read ./nope-secret
deny-write ./typo.env
deny-read ./*.pemx
allow-write ~/.npm
allow-write $O/missing/deeper
EOF
	run_sbx -c "$T/p" -- sh -c 'echo cached > ~/.npm/x && echo npm-ok'
	expect_rc 0
	expect_contains "$ERR" "deny-read $P/nope-secret" "the missing deny-read named"
	expect_contains "$ERR" "does not exist (a typo?)" "the missing deny said"
	expect_contains "$ERR" "deny-write $P/typo.env" "the missing deny-write named"
	expect_contains "$ERR" "the glob matches nothing" "the empty glob said"
	expect_contains "$ERR" "allow-write $H/.npm: did not exist; made it" "the made allow-write said"
	expect_contains "$ERR" "$O/missing/deeper" "the allow-write that cannot be made said"
	expect_contains "$OUT" npm-ok "writing the made directory (control)"
	[ "$(stat -c %a "$H/.npm")" = 700 ] || fail "~/.npm mode: $(stat -c %a "$H/.npm")"
	[ ! -e "$O/missing" ] || fail "a directory was made whose parent did not exist"
	# control: the default policy's own denies name machines' usual stores, and say nothing
	run_sbx -- true
	expect_rc 0
	expect_eq "$ERR" "" "stderr under the default policy"
}
TESTS+=(missing_paths_said)

t_symlinked_dangerous_names() { # a dangerous name that is a symlink: neither written through nor replaced; its target untouched
	mkdir -p dotfiles shared/commands .claude
	echo 'echo hi' >dotfiles/bashrc; echo cmd >shared/commands/a.md
	ln -s dotfiles/bashrc .bashrc; ln -s ../shared/commands .claude/commands
	ln -s /nonexistent-sbx-$TOKBASE .mcp.json    # dangling, to nowhere the command can write
	snap "$P" >"$T/.snap"
	run_sbx -- sh -c 'cat .bashrc; ls .claude/commands
		(echo pwn >> .bashrc) 2>/dev/null && echo "WROTE through .bashrc"
		(echo pwn > dotfiles/bashrc) 2>/dev/null && echo "WROTE the target"
		rm -f .bashrc 2>/dev/null && echo "REMOVED .bashrc"
		mv .bashrc moved 2>/dev/null && echo "RENAMED .bashrc"
		rm -f .mcp.json 2>/dev/null && echo "REMOVED .mcp.json"
		(echo pwn > .mcp.json) 2>/dev/null && echo "WROTE through .mcp.json"
		(echo pwn > .claude/commands/b.md) 2>/dev/null && echo "WROTE into .claude/commands"
		rm -f .claude/commands 2>/dev/null && echo "REMOVED .claude/commands"
		mv .claude .claude2 2>/dev/null && echo "RENAMED .claude"
		echo ok > ok.txt && echo control-ok'
	expect_rc 0
	expect_contains "$OUT" "echo hi" "reading through the link (control)"
	expect_contains "$OUT" "a.md" "listing through the linked directory (control)"
	expect_not_contains "$OUT" "WROTE" "a write through a pinned link or to its target"
	expect_not_contains "$OUT" "REMOVED" "removing a pinned link"
	expect_not_contains "$OUT" "RENAMED" "renaming a pinned link or its directory"
	expect_contains "$OUT" control-ok "an ordinary write (control)"
	[ ! -e /nonexistent-sbx-$TOKBASE ] || fail "the dangling link's target was created"
	rm ok.txt
	expect_same_tree "$P" "$T/.snap" "the links and their targets after the run"
	run_sbx --print=argv -- true
	expect_contains "$OUT" "# symlink pinned by sbx-init (mounted onto itself, not followed): $P/.bashrc" "--print=argv shows the pins"
	# a dangling link whose target the command could create: refused, with the fix
	ln -s dotfiles/profile .profile
	run_sbx -- sh -c 'echo ran'
	expect_rc 125
	expect_contains "$ERR" "$P/dotfiles/profile, the target of the symlink $P/.profile" "the refusal names both"
	expect_contains "$ERR" "hint: create it, or remove the link" "the fix"
	expect_not_contains "$OUT" ran "nothing ran"
}
TESTS+=(symlinked_dangerous_names)

t_concurrent_runtime_dirs() { # runs with different runtime directories (one may write /tmp): one's exit never lifts the other's denies
	sbx_outside_tmp
	snap "$P" >"$T/.snap"
	start_bg "$T/a.out" -- sh -c "sleep 0.5"
	local a=$BGPID i
	for i in $(seq 50); do [ -d "$P/.vscode" ] && break; sleep 0.1; done
	run_sbx --allow-write=/tmp -- sh -c "sleep 1.5; $(try_danger) echo b-done; echo tmp=\$TMPDIR"
	wait_pid "$a" 10
	expect_rc 0
	expect_contains "$OUT" "tmp=/var/tmp/" "run B's runtime directory is the other one"
	expect_not_contains "$OUT" WROTE "a dangerous name written after the other run exited"
	expect_contains "$OUT" b-done "run B's control line"
	run_sbx -- true     # the next run of the first runtime directory tidies up
	expect_rc 0
	expect_same_tree "$P" "$T/.snap" "after both, and a run that tidies"
}
TESTS+=(concurrent_runtime_dirs)

t_killed_runs_nested_placeholders() { # two runs SIGKILLed, one's placeholders inside the other's (.claude/commands in .claude): the next run removes all
	snap "$P" >"$T/.snap"
	start_bg "$T/a.out" -- sh -c "sleep ${TOKBASE}5"
	local a=$BGPID i
	for i in $(seq 50); do [ -d "$P/.claude" ] && break; sleep 0.1; done
	start_bg "$T/b.out" -- sh -c "sleep ${TOKBASE}5"
	local b=$BGPID
	for i in $(seq 50); do [ -d "$P/.claude/commands" ] && break; sleep 0.1; done
	[ -d "$P/.claude/commands" ] || fail "setup: run B made no placeholder inside run A's"
	kill -KILL "$a" "$b"; wait_pid "$a" 10; wait_pid "$b" 10
	wait_gone "sleep ${TOKBASE}5" 10 || fail "the killed runs' commands outlived them"
	run_sbx -- true
	expect_rc 0
	expect_same_tree "$P" "$T/.snap" "after two killed runs and one that reclaims"
}
TESTS+=(killed_runs_nested_placeholders)

t_tmpdir_spares() { # a run's untouched TMPDIR is set aside for the next run; one its command changed (a file left, an extended attribute, its mode, an inode flag, its times, its generation, a file made and removed) never is, and no run gets one
	command -v python3 >/dev/null || skip "python3 is not installed"
	local spares=/tmp/sbx-$(id -u)/spare-tmp before ino how
	run_sbx -- true
	expect_rc 0
	[ -d "$spares" ] || fail "no spare TMPDIR after a run that left its own untouched: $(ls -A "/tmp/sbx-$(id -u)")"
	# control: the next run's TMPDIR is one of the spares there before it (the same inode), and empty
	before=$(stat -c %i "$spares"/* 2>/dev/null)
	run_sbx -- sh -c 'stat -c %i "$TMPDIR"; ls -A "$TMPDIR" | wc -l'
	expect_rc 0
	ino=$(head -1 <<<"$OUT")
	grep -qx "$ino" <<<"$before" || fail "control: the run's TMPDIR ($ino) was none of the spares ($before)"
	[ "$(sed -n 2p <<<"$OUT")" = 0 ] || fail "a spare TMPDIR is not empty: $OUT"
	# the attack: the command changes its TMPDIR, for the next run to inherit
	for how in file xattr mode flag times generation used; do
		run_sbx -- python3 -c '
import os, sys, fcntl, struct
t = os.environ["TMPDIR"]; how = sys.argv[1]
print(os.stat(t).st_ino)
if how == "file":
    open(os.path.join(t, "planted"), "w").write("from the last run\n")
elif how == "xattr":
    try: os.setxattr(t, "user.sbx_planted", b"1")
    except OSError: print("unsupported")
elif how == "mode":
    os.chmod(t, 0o777)
elif how == "flag":   # FS_IOC_GETFLAGS / SETFLAGS: +S, synchronous updates (the owner may set it)
    fd = os.open(t, os.O_RDONLY)
    try:
        f = struct.unpack("i", fcntl.ioctl(fd, 0x80086601, b"\0" * 4))[0]
        fcntl.ioctl(fd, 0x40086602, struct.pack("i", f | 0x8))
    except OSError: print("unsupported")
elif how == "times":  # 64 bits the command chose, in the modification time
    os.utime(t, (1234567890.424242424, 1234567890.424242424))
elif how == "generation":  # FS_IOC_SETVERSION: 32 bits the owner may set
    fd = os.open(t, os.O_RDONLY)
    try: fcntl.ioctl(fd, 0x40087602, struct.pack("l", 31337))
    except OSError: print("unsupported")
elif how == "used":   # a file made and removed: empty again, but not as it was made
    open(os.path.join(t, "scratch"), "w").close(); os.unlink(os.path.join(t, "scratch"))
' "$how"
		expect_rc 0 "the $how change"
		grep -q unsupported <<<"$OUT" && { printf '%s: not supported here\n' "$how"; continue; }
		ino=$(head -1 <<<"$OUT")
		stat -c %i "$spares"/* 2>/dev/null | grep -qx "$ino" && fail "a TMPDIR whose command left a $how went back as a spare"
		run_sbx -- python3 -c '
import os, fcntl, struct
t = os.environ["TMPDIR"]; st = os.stat(t); fd = os.open(t, os.O_RDONLY)
try: fl = struct.unpack("i", fcntl.ioctl(fd, 0x80086601, b"\0" * 4))[0] & 0x8
except OSError: fl = 0
try: gen = struct.unpack("l", fcntl.ioctl(fd, 0x80087601, b"\0" * 8))[0] == 31337
except OSError: gen = False
print(st.st_ino, sorted(os.listdir(t)), os.listxattr(t), oct(st.st_mode & 0o7777), fl, int(st.st_mtime) == 1234567890, gen)'
		expect_rc 0
		# (not "another inode": ext4 gives a removed directory's inode to the next one made)
		[ "$(cut -d' ' -f2- <<<"$OUT")" = "[] [] 0o700 0 False False" ] || fail "after a $how, the next run's TMPDIR is not as new: $OUT"
	done
	# parallel runs never share one: each sees only its own file
	local i pids=()
	for i in 1 2 3 4 5 6; do
		( cd "$P" && "$SBX" -- sh -c "ls -A \"\$TMPDIR\" | wc -l; echo $i >\"\$TMPDIR/mine\"; sleep 0.3; cat \"\$TMPDIR/mine\"" >"$T/par.$i" 2>&1 ) &
		pids+=($!)
	done
	wait "${pids[@]}"
	for i in 1 2 3 4 5 6; do
		[ "$(cat "$T/par.$i")" = "$(printf '0\n%s' "$i")" ] || fail "parallel run $i: $(cat "$T/par.$i")"
	done
	[ "$(ls -A "$spares" | wc -l)" -le 8 ] || fail "more spares than the bound: $(ls -A "$spares" | wc -l)"
}
TESTS+=(tmpdir_spares)

t_tmpdir_spares_fd_held() { # a run that may pass descriptors out (allow-all-unix-sockets) hands its TMPDIR to a process of another sandbox: the directory must not become a later run's TMPDIR, where that process would read and write it
	command -v python3 >/dev/null || skip "python3 is not installed"
	local spares=/tmp/sbx-$(id -u)/spare-tmp a_ino c_ino i
	# run B, the holder: takes one descriptor, then watches that directory for 8 s
	cat >"$T/holder.py" <<'EOF2'
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
print("listening", flush=True)
c, _ = s.accept()
msg, fds, _, _ = socket.recv_fds(c, 16, 1)
fd = fds[0]
print("got fd of inode", os.fstat(fd).st_ino, flush=True)
end = time.time() + 8
while time.time() < end:
    names = os.listdir(fd)
    if names:
        for n in names:
            try: print("SAW", n, open("/proc/self/fd/%d/%s" % (fd, n)).read().strip(), flush=True)
            except OSError as e: print("SAW", n, e, flush=True)
        try: open("/proc/self/fd/%d/planted-by-B" % fd, "w").write("from B"); print("PLANTED", flush=True)
        except OSError as e: print("plant failed", e, flush=True)
        break
    time.sleep(0.05)
print("holder done", flush=True)
EOF2
	cat >"$T/sender.py" <<'EOF2'
import os, socket, sys
fd = os.open(os.environ["TMPDIR"], os.O_RDONLY | os.O_DIRECTORY)
print(os.fstat(fd).st_ino)
c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1])
socket.send_fds(c, [b"x"], [fd])
EOF2
	( cd "$P" && exec "$SBX" --allow-all-unix-sockets --allow-write="$P" -- python3 "$T/holder.py" "$P/fdsock" >"$T/holder.out" 2>&1 ) &
	local holder=$!
	for i in $(seq 100); do grep -q listening "$T/holder.out" 2>/dev/null && break; sleep 0.1; done
	grep -q listening "$T/holder.out" || fail "the holder did not start: $(cat "$T/holder.out")"
	# run A: passes its own TMPDIR out, then ends with it empty and untouched
	run_sbx --allow-all-unix-sockets -- python3 "$T/sender.py" "$P/fdsock"
	expect_rc 0 "the sender"
	a_ino=$(head -1 <<<"$OUT")
	stat -c %i "$spares"/* 2>/dev/null | grep -qx "$a_ino" && fail "the TMPDIR of a run that could pass descriptors out was set aside as a spare"
	# run C, default policy: writes a secret into its TMPDIR while B watches
	run_sbx -- sh -c 'stat -c %i "$TMPDIR"; echo C-secret-42 >"$TMPDIR/secret"; sleep 2; ls -A "$TMPDIR"'
	expect_rc 0 "run C"
	c_ino=$(head -1 <<<"$OUT")
	wait "$holder"
	# control: B did hold A's TMPDIR (the attack was in place)
	grep -q "got fd of inode $a_ino" "$T/holder.out" || fail "control: the holder never got the sender's TMPDIR: $(cat "$T/holder.out")"
	[ "$c_ino" != "$a_ino" ] || fail "run C was given the TMPDIR another sandbox holds (inode $a_ino)"
	grep -q "C-secret-42\|PLANTED" "$T/holder.out" && fail "another sandbox read or wrote run C's TMPDIR: $(cat "$T/holder.out")"
	grep -q planted-by-B <<<"$OUT" && fail "run C found a file planted by another sandbox: $OUT"
	# control: a run without the option still sets its TMPDIR aside
	run_sbx -- sh -c 'stat -c %i "$TMPDIR"'
	expect_rc 0
	stat -c %i "$spares"/* 2>/dev/null | grep -qx "$(head -1 <<<"$OUT")" || fail "control: a default run's untouched TMPDIR was not set aside"
	# weaker-nested-sandbox shows the host's /proc: its TMPDIR is never set aside either
	run_sbx --weaker-nested-sandbox -- sh -c 'stat -c %i "$TMPDIR"'
	expect_rc 0 "a run under weaker-nested-sandbox"
	stat -c %i "$spares"/* 2>/dev/null | grep -qx "$(head -1 <<<"$OUT")" &&
		fail "the TMPDIR of a run under weaker-nested-sandbox was set aside as a spare"
}
TESTS+=(tmpdir_spares_fd_held)

# Allow rules spelled through a symlink a command could have made (one that lies in a writable
# root: an earlier run leaves it there) are skipped, one stderr line each, never followed; a
# write deny spelled through one pins it. Controls: the target named itself, a plain directory.
planted_skip_line() { # planted_skip_line LIST LINE PATH LINK TO TARGET ABLE : the line sbx prints for policy $T/p
	printf 'sbx: %s %s (%s:%s): skipped, not followed: %s is a symlink (to %s) in the writable root %s, where a command could have made it; to make %s %s, name it itself' \
		"$1" "$3" "$T/p" "$2" "$4" "$5" "$P" "$6" "$7"
}
t_symlinked_write_roots_skipped() { # allow-write through a link in a root (to a sibling, the parent, /etc, several components up): skipped, said, not in the argv; plain roots work
	local probe=sbx-symlink-probe-$TOKBASE n
	mkdir -p "$T/sib" "$T/ext/b/c" "$P/plain"
	ln -s ../sib "$P/build"; ln -s .. "$P/up"; ln -s /etc "$P/etcl"; ln -s "$T/ext" "$P/a"
	snap "$T/sib" >"$T/sib.before"; snap "$T/ext" >"$T/ext.before"
	policy p <<EOP
allow-write .
allow-write ./build
allow-write ./up
allow-write ./etcl
allow-write ./a/b/c
allow-write ./plain
EOP
	run_ops -c "$T/p" <<EOP
sib create $P/build/x
up create $P/up/x
etc create $P/etcl/$probe
deep create $P/a/b/c/x
sib_direct create $T/sib/y
ctl_plain create $P/plain/x
ctl_root create $P/x
EOP
	if [ -e "/etc/$probe" ]; then rm -f "/etc/$probe"; fail "a write through the link to /etc landed in /etc"; fi
	expect_ops <<'EOP'
sib EROFS
up EROFS
etc EROFS
deep EROFS
sib_direct EROFS
ctl_plain ok
ctl_root ok
EOP
	expect_same_tree "$T/sib" "$T/sib.before" "the sibling after writes through the link"
	expect_same_tree "$T/ext" "$T/ext.before" "the directory several components up"
	[ ! -e "$T/x" ] || fail "a write through the link to the parent landed in it"
	expect_contains "$ERR" "$(planted_skip_line allow-write 2 "$P/build" "$P/build" ../sib "$T/sib" writable)" "the line for the sibling"
	expect_contains "$ERR" "$(planted_skip_line allow-write 3 "$P/up" "$P/up" .. "$T" writable)" "the line for the parent"
	expect_contains "$ERR" "$(planted_skip_line allow-write 4 "$P/etcl" "$P/etcl" /etc /etc writable)" "the line for /etc"
	expect_contains "$ERR" "$(planted_skip_line allow-write 5 "$P/a/b/c" "$P/a" "$T/ext" "$T/ext/b/c" writable)" "the line for the link several components up"
	n=$(grep -c 'skipped, not followed' <<<"$ERR")
	[ "$n" = 4 ] || fail "one line for each skipped root, got $n"
	# --print=argv: the skipped roots are not bound
	run_sbx --print=argv -c "$T/p" -- true
	expect_rc 0 "--print=argv"
	if grep -E -- "--bind ($T/sib|$T/ext/b/c|/etc|$T) " <<<"$OUT"; then fail "--print=argv binds a skipped root writable"; fi
	expect_contains "$OUT" "--bind $P $P" "--print=argv binds the root itself (control)"
	# control: the targets named themselves are writable, through the links too, and nothing is said
	policy p <<EOP
allow-write .
allow-write $T/sib
allow-write $T/ext/b/c
EOP
	run_ops -c "$T/p" <<EOP
sib create $P/build/x
deep create $P/a/b/c/x
EOP
	expect_ops <<'EOP'
sib ok
deep ok
EOP
	expect_not_contains "$ERR" "skipped" "stderr when the targets are named themselves"
	[ -f "$T/sib/x" ] && [ -f "$T/ext/b/c/x" ] || fail "control: the writes did not land in the named targets"
}
TESTS+=(symlinked_write_roots_skipped)

t_symlinked_write_roots_json() { # srt settings: a filesystem.allowWrite entry through a link in a root is skipped as the line format's; the root itself works
	mkdir -p "$T/sib"; ln -s ../sib "$P/build"
	cat >"$T/s.json" <<'EOP'
{ "network": { "allowedDomains": [] },
  "filesystem": { "allowWrite": [".", "./build"] } }
EOP
	run_ops -c "$T/s.json" <<EOP
sib create $P/build/x
ctl_root create $P/x
EOP
	expect_ops <<'EOP'
sib EROFS
ctl_root ok
EOP
	[ ! -e "$T/sib/x" ] || fail "a write through the link landed in the sibling"
	expect_contains "$ERR" "sbx: allow-write $P/build ($T/s.json:" "the line names the settings file"
	expect_contains "$ERR" "skipped, not followed: $P/build is a symlink (to ../sib) in the writable root $P, where a command could have made it; to make $T/sib writable, name it itself" "the line"
	# through srt's grammar too (sbx run through a symlink named srt)
	mkdir -p "$T/bin"; ln -sf "$SBX" "$T/bin/srt"
	local sbx=$SBX; SBX=$T/bin/srt
	run_sbx -s "$T/s.json" sh -c 'echo pwn > build/y; echo ok > z'
	SBX=$sbx
	[ ! -e "$T/sib/y" ] || fail "srt: a write through the link landed in the sibling"
	[ -f "$P/z" ] || fail "srt: the root itself is not writable (control)"
	expect_contains "$ERR" "skipped, not followed: $P/build is a symlink (to ../sib)" "srt: the line"
	# control: the sibling named itself
	cat >"$T/s.json" <<EOP
{ "network": { "allowedDomains": [] },
  "filesystem": { "allowWrite": [".", "$T/sib"] } }
EOP
	run_ops -c "$T/s.json" <<EOP
sib create $P/build/x
EOP
	expect_ops <<<"sib ok"
	expect_not_contains "$ERR" "skipped" "stderr when the sibling is named itself"
}
TESTS+=(symlinked_write_roots_json)

t_symlinked_links_outside_roots() { # a link no command of the policy could have made (outside every root): followed; one to a broader directory refused
	mkdir -p "$O/data/work"
	ln -s "$O/data" "$T/datalink"       # the person's own link, outside every writable root
	policy p <<EOP
allow-write .
allow-write $T/datalink/work
EOP
	run_ops -c "$T/p" <<EOP
work create $T/datalink/work/x
work_real create $O/data/work/y
out create $O/z
EOP
	expect_ops <<'EOP'
work ok
work_real ok
out EROFS
EOP
	expect_not_contains "$ERR" "skipped" "a link outside every root"
	# a link outside every root to a broader directory: refused, as before (the policy names it)
	ln -s /etc "$T/etclink"
	policy p <<EOP
allow-write .
allow-write $T/etclink
EOP
	run_sbx -c "$T/p" -- sh -c 'echo ran'
	expect_rc 125 "a root through the person's link to /etc"
	expect_contains "$ERR" "allow-write $T/etclink: is a symlink to /etc, a broader directory; name /etc itself if that is meant" "the refusal"
	expect_not_contains "$OUT" ran "nothing ran"
}
TESTS+=(symlinked_links_outside_roots)

t_symlinked_allow_read_skipped() { # allow-read through a link in a root does not show what deny-read hides; a plain allow-read does
	mkdir -p "$O/sec/pub"; echo TOPSECRET >"$O/sec/key"; echo PUBLIC >"$O/sec/pub/note"
	ln -s "$O/sec" "$P/view"
	policy p <<EOP
allow-write .
deny-read $O/sec
allow-read ./view
allow-read $O/sec/pub
EOP
	run_ops -c "$T/p" <<EOP
via read $P/view/key
direct read $O/sec/key
ctl_pub read $O/sec/pub/note
EOP
	expect_ops <<'EOP'
via ENOENT
direct ENOENT
ctl_pub ok:PUBLIC
EOP
	expect_contains "$ERR" "sbx: allow-read $P/view ($T/p:3): skipped, not followed: $P/view is a symlink (to $O/sec) in the writable root $P, where a command could have made it; to make $O/sec readable, name it itself" "the line"
}
TESTS+=(symlinked_allow_read_skipped)

t_symlinked_deny_write_pinned() { # deny-write spelled through a link in a root: the link cannot be replaced to write the spelled path; its target stays read-only
	mkdir -p "$P/real"; echo keep >"$P/real/secret"
	ln -s real "$P/cfg"
	policy p <<EOP
allow-write .
deny-write ./cfg/secret
EOP
	run_sbx -c "$T/p" -- sh -c 'echo pwn > cfg/secret; mv cfg cfg2 2>/dev/null && echo MOVED; rm -f cfg 2>/dev/null && echo REMOVED
		mkdir cfg 2>/dev/null; (echo pwn > cfg/secret) 2>/dev/null && echo WROTE; echo ok > real/other && echo CONTROL-OK'
	expect_rc 0
	expect_not_contains "$OUT" MOVED "renaming the link"
	expect_not_contains "$OUT" REMOVED "removing the link"
	expect_not_contains "$OUT" WROTE "a write at the spelled path"
	expect_contains "$OUT" CONTROL-OK "a write beside the denied file (control)"
	[ -L "$P/cfg" ] && [ "$(cat "$P/cfg/secret")" = keep ] || fail "host: the link or the denied file changed"
	run_sbx --print=argv -c "$T/p" -- true
	expect_contains "$OUT" "# symlink pinned by sbx-init (mounted onto itself, not followed): $P/cfg" "--print=argv shows the pin"
}
TESTS+=(symlinked_deny_write_pinned)

t_deny_write_through_fifo() { # a deny spelled through a FIFO (one a run could plant) neither crashes sbx nor lets the command replace the FIFO by a directory and write the denied name; a write beside it works
	mkfifo "$P/f" || skip "mkfifo is not possible here"
	run_sbx --allow-write=. --deny-write=./f/x -- sh -c 'rm -f f; mkdir f 2>/dev/null; echo x > f/x 2>/dev/null && echo WROTE; echo ok > y && echo control-ok'
	expect_rc 0 "sbx, a deny through a FIFO"
	expect_not_contains "$OUT" WROTE "the denied name, under the FIFO replaced"
	expect_contains "$OUT" control-ok "a write beside it (control)"
	[ -p "$P/f" ] || fail "the FIFO was replaced"
}
TESTS+=(deny_write_through_fifo)

t_socketpair_dgram_refused() { # a SOCK_DGRAM socketpair end could sendto() any Unix datagram socket on the host (/dev/log, a daemon's) past socket(AF_UNIX)'s refusal: refused; a stream pair (pipes between a command's processes) still works, and the host's socket hears nothing
	local py; py=$(command -v python3) || skip "python3 is needed inside and out"
	"$py" - "$O/dgram.sock" "$O/heard" >/dev/null 2>&1 <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); s.settimeout(8)
try:
    d = s.recv(100); open(sys.argv[2], "wb").write(d)
except OSError:
    pass
PY
	local lpid=$! i
	for i in $(seq 50); do [ -S "$O/dgram.sock" ] && break; sleep 0.1; done
	[ -S "$O/dgram.sock" ] || fail "setup: the host's datagram socket"
	run_sbx -- "$py" -c '
import socket, sys
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM); a.send(b"x"); print("stream-ok" if b.recv(1) == b"x" else "stream-bad")
try:
    c, d = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    c.sendto(b"escaped", sys.argv[1]); print("SENT")
except OSError as e:
    print("dgram:", e.errno)
' "$O/dgram.sock"
	kill "$lpid" 2>/dev/null; wait "$lpid" 2>/dev/null
	expect_rc 0
	expect_contains "$OUT" stream-ok "a stream socketpair (control)"
	expect_not_contains "$OUT" SENT "a datagram sent to the host's socket"
	expect_contains "$OUT" "dgram: 1" "socketpair(AF_UNIX, SOCK_DGRAM) refused with EPERM"
	[ ! -e "$O/heard" ] || fail "the host's socket received: $(cat "$O/heard")"
}
TESTS+=(socketpair_dgram_refused)
