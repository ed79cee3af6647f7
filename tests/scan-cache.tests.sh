# tests/scan-cache.tests.sh - sourced by test.sh: the scan cache (sbx.c 5c) keeps directory
# listings between runs and takes one only when the directory's identity, ctime and mtime
# are what they were. Each test warms the cache, changes the tree between runs (from inside a
# sandboxed run, as an attacker would, or from outside), and checks that the next run, which
# takes the unchanged directories from the cache (asserted: the cache was used), still
# refuses every dangerous name, beside a control write that works in the same run. The later
# ones attack what the cache and the audit trust: a ctime of whole seconds, an overlay, a gitdir
# git takes that sbx did not, a directory handed as stdin, a process a session's exec left behind.

# The cache's file: where the registry lives (/dev/shm/sbx-UID in the private places).
sc_file() { echo "/dev/shm/sbx-$(id -u)/scan-cache"; }

# sc_served: how many directories the last run (-v) took from the cache.
sc_served() { sed -n 's/.*scan: .*, \([0-9]*\) from the scan cache.*/\1/p' <<<"$ERR" | tail -n 1; }
expect_cache_used() { # expect_cache_used WHAT
	local n; n=$(sc_served)
	[ "${n:-0}" -gt 0 ] || fail "$1: the run took nothing from the scan cache (served '${n:-none}'), so the test proves nothing"
}

# A script for the sandbox: try to write each path, print "WROTE path" when it works.
sc_try() { local f; for f in "$@"; do printf '(echo pwn >> "%s") 2>/dev/null && echo "WROTE %s"; ' "$f" "$f"; done; }

# Snippets for a command that sets each directory's mtime back to the very nanosecond it
# had (the forgery utimensat(2) allows; only ctime tells): sc_mt_save DIRS before changing
# them, sc_mt_restore DIRS after.
sc_mt_save() { local d; for d in "$@"; do printf 'stat -c %%.9Y %s > "$TMPDIR/mt.%s"; ' "$d" "${d//\//_}"; done; }
sc_mt_restore() { local d; for d in "$@"; do printf 'touch -m -d "@$(cat "$TMPDIR/mt.%s")" %s; ' "${d//\//_}" "$d"; done; }

# A tree whose directories are old enough for the cache to keep (the coarse clock's margin).
sc_tree() {
	mkdir -p "$P"/a/b/c "$P"/a/e "$P"/a/g "$P"/a/h/i "$P"/m/n "$P"/x/y
	echo 'echo old' >"$P/a/b/c/.zshrc"    # depth 3: beyond the walk's reach for files, not covered
	echo f >"$P/a/f"; echo plain >"$P/a/b/plain.txt"
	sleep 0.1
}

t_scan_cache_changes_between_runs() { # renamed dir, new names deep, a symlink swapped in, dir<->file, mtime set back: the next run refuses them all
	need_private_places
	sc_tree
	policy p <<<"allow-write ."
	run_sbx -v -c "$T/p" -- true
	expect_rc 0 "run 0 (warms the cache)"
	[ -s "$(sc_file)" ] || fail "setup: no scan cache at $(sc_file) after a run"
	# run 1, the attacker: every change that matters, each directory's mtime set back after
	run_sbx -c "$T/p" -- sh -ec "$(sc_mt_save a/b a a/h m x . a/b/c)"'
		mv a/b/c a/d2                                 # renamed up: its .zshrc now within reach
		mv a/h a/h.old && mv x/y a/h                  # two directories swapped (identity)
		touch a/b/.bashrc                             # a new dangerous file in a cached directory
		mkdir a/.vscode                               # a new dangerous directory
		ln -s ../../target a/b/.profile; echo t > target   # a symlink swapped in
		rm -rf a/e && echo file > a/e                 # a directory replaced by a file
		rm a/f && mkdir a/f && touch a/f/.gitconfig   # a file replaced by a directory
		rm -rf a/g && ln -s ../m a/g                  # a directory replaced by a symlink
		touch a/h.old/i/deep.txt; mkdir m/.idea         # below cached directories
		'"$(sc_mt_restore a/b a a/h m x .)"'    # mtimes set back exactly (ctime cannot be)
		touch -m -d "@$(cat "$TMPDIR/mt.a_b_c")" a/d2
		echo DONE'
	expect_rc 0 "run 1"; expect_contains "$OUT" DONE "run 1"
	run_sbx -v -c "$T/p" -- sh -c "$(sc_try a/d2/.zshrc a/b/.bashrc a/.vscode/x a/b/.profile a/f/.gitconfig \
		m/.idea/x target) (echo ok > a/b/ok.txt) && echo control-ok"
	expect_rc 0 "run 2"
	expect_cache_used "run 2"
	expect_not_contains "$OUT" WROTE "a dangerous name made or moved between runs"
	expect_contains "$OUT" control-ok "an ordinary write in a cached directory (control)"
	expect_eq "$(cat "$P/a/d2/.zshrc")" "echo old" "host: the renamed .zshrc"
	[ -d "$P/a/.vscode" ] && [ ! -e "$P/a/.vscode/x" ] || fail "host: a/.vscode was written"
	expect_eq "$(cat "$P/target")" t "host: the symlink's target"
	# the same again, with the cache now holding the changed tree: still refused
	run_sbx -v -c "$T/p" -- sh -c "$(sc_try a/d2/.zshrc a/b/.bashrc a/.vscode/x a/f/.gitconfig) echo ran"
	expect_rc 0 "run 3"; expect_contains "$OUT" ran "run 3"
	expect_cache_used "run 3"
	expect_not_contains "$OUT" WROTE "run 3, from the refreshed cache"
}
TESTS+=(scan_cache_changes_between_runs)

t_scan_cache_new_repository_deep() { # a .git made between runs below cached directories: its hooks read-only next run; one beyond the scan's depth is seen by the audit
	need_private_places
	git_env
	local pay; pay=$(git_payload sccache)
	sc_tree
	policy p <<<"allow-write ."
	run_sbx -v -c "$T/p" -- true
	expect_rc 0 "run 0 (warms the cache)"
	# run 1: a repository at depth 1 (within the walk's reach for .git) and one deep (only the audit sees it)
	run_sbx -c "$T/p" -- sh -ec "$(sc_mt_save m a/h/i .) git init -q m; git init -q a/h/i/deep
		$(sc_mt_restore m a/h/i .) echo DONE"
	expect_rc 0 "run 1"; expect_contains "$OUT" DONE "run 1"
	run_sbx -v -c "$T/p" -- sh -c "$(sc_try m/.git/hooks/pre-commit m/.git/config) echo ok > m/file && echo control-ok"
	expect_rc 0 "run 2"
	expect_cache_used "run 2"
	expect_not_contains "$OUT" WROTE "the hooks and config of a repository made between runs"
	expect_contains "$OUT" control-ok "a write in its work tree (control)"
	# the deep one: a hook added during a run that took the directories from the cache is
	# neutralised (the audit knows the repository was there before: only what changed)
	run_sbx -v -c "$T/p" -- sh -ec "printf '#!/bin/sh\n$pay\n' > a/h/i/deep/.git/hooks/post-commit
		chmod +x a/h/i/deep/.git/hooks/post-commit; echo DONE"
	expect_rc 0 "run 3"; expect_contains "$OUT" DONE "run 3"
	expect_cache_used "run 3"
	expect_contains "$ERR" "neutralised $P/a/h/i/deep/.git/hooks/post-commit" "the hook added to the deep repository"
	git_outside "$P/a/h/i/deep"
	expect_no_payload "git outside in the deep repository"
}
TESTS+=(scan_cache_new_repository_deep)

t_scan_cache_tampered() { # a stale, damaged, foreign-mode or planted cache file never lifts a deny; the command cannot reach it
	need_private_places
	local f; f=$(sc_file)
	sc_tree
	policy p <<<"allow-write ."
	run_sbx -v -c "$T/p" -- true
	expect_rc 0 "run 0 (warms the cache)"
	[ -s "$f" ] || fail "setup: no scan cache at $f"
	cp "$f" "$T/stale"
	touch "$P/a/b/.bashrc"; mkdir "$P/m/.vscode"; touch -d 2001-01-01 "$P/a/b" "$P/m"
	# a stale cache put back (it says a/b holds no .bashrc): the ctimes tell
	cp "$T/stale" "$f"
	run_sbx -v -c "$T/p" -- sh -c "$(sc_try a/b/.bashrc m/.vscode/x) echo ok > a/b/ok.txt && echo control-ok"
	expect_rc 0 "stale"; expect_cache_used "stale"
	expect_not_contains "$OUT" WROTE "with a stale cache"
	expect_contains "$OUT" control-ok "stale: control"
	# damaged: every byte after the head flipped, then cut short, then garbage: not used
	local how
	for how in flip cut garbage; do
		case $how in
		flip) "$PY" -c 'import sys; b=bytearray(open(sys.argv[1],"rb").read()); b[24:]=bytes(x^0xff for x in b[24:]); open(sys.argv[1],"wb").write(b)' "$f" ;;
		cut) head -c 100 "$T/stale" >"$f" ;;
		garbage) head -c 100000 /dev/urandom >"$f" ;;
		esac
		run_sbx -v -c "$T/p" -- sh -c "$(sc_try a/b/.bashrc m/.vscode/x) echo ok > a/b/ok.txt && echo control-ok"
		expect_rc 0 "$how"
		expect_not_contains "$OUT" WROTE "with a $how cache"
		expect_contains "$OUT" control-ok "$how: control"
		expect_eq "$(sc_served)" 0 "$how: nothing taken from a damaged cache"
	done
	# a good cache that others could write: not read
	run_sbx -v -c "$T/p" -- true
	chmod 0644 "$f" 2>/dev/null; chmod 0666 "$f"
	run_sbx -v -c "$T/p" -- sh -c "$(sc_try a/b/.bashrc) echo ran"
	expect_rc 0 "writable by others"; expect_contains "$OUT" ran "writable by others"
	expect_contains "$ERR" "not a private file" "a cache others can write is refused"
	expect_eq "$(sc_served)" 0 "writable by others: nothing taken"
	expect_not_contains "$OUT" WROTE "writable by others"
	# one another user owns (planted where this user's runs keep theirs): not read
	if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
		run_sbx -v -c "$T/p" -- true
		chown nobody "$f"
		run_sbx -v -c "$T/p" -- sh -c "$(sc_try a/b/.bashrc) echo ran"
		expect_rc 0 "another user's"; expect_contains "$OUT" ran "another user's"
		expect_contains "$ERR" "not a private file" "a cache of another user is refused"
		expect_eq "$(sc_served)" 0 "another user's: nothing taken"
		expect_not_contains "$OUT" WROTE "another user's"
	fi
	# a symlink planted at its name is not followed (and is replaced, never written through)
	rm -f "$f"; echo keep >"$T/victim"; ln -s "$T/victim" "$f"
	run_sbx -v -c "$T/p" -- true
	expect_rc 0 "a symlink at the cache's name"
	expect_eq "$(cat "$T/victim")" keep "host: the symlink's target"
	# the sandboxed command cannot see or write it (bwrap's own /dev hides /dev/shm)
	run_sbx -v -c "$T/p" -- sh -c "(echo x > $f) 2>/dev/null && echo WROTE-CACHE; ls $f 2>/dev/null && echo SEES-CACHE; echo ran"
	expect_rc 0 "inside"; expect_contains "$OUT" ran "inside"
	expect_not_contains "$OUT" WROTE-CACHE "the command writing the cache"
	expect_not_contains "$OUT" SEES-CACHE "the command seeing the cache"
	[ -f "$f" ] && [ ! -L "$f" ] || fail "control: the run did not write a cache"
}
TESTS+=(scan_cache_tampered)

t_scan_cache_concurrent_runs() { # 8 runs at once over one tree, each changing it: all refuse every dangerous name; the cache is whole after
	need_private_places
	sc_tree
	local i pids=()
	for i in $(seq 40); do mkdir -p "$P/w/d$i/e"; done
	sleep 0.1
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- true
	expect_rc 0 "run 0 (warms the cache)"
	for i in $(seq 8); do
		touch "$P/w/d$i/.bashrc"     # between runs, from outside, as each run starts
		start_bg "$T/bg$i.out" -v -c "$T/p" -- sh -c "mkdir w/d$i/new; $(sc_try w/d$i/.bashrc) echo control > w/d$i/e/ok && echo control-ok"
		pids+=("$BGPID")
	done
	for i in $(seq 8); do
		wait_pid "${pids[$((i - 1))]}" 60 || fail "run $i did not end"
		[ "$WRC" = 0 ] || fail "run $i: exit $WRC: $(head -c 300 "$T/bg$i.out.err")"
		grep -q WROTE "$T/bg$i.out" && fail "run $i wrote a dangerous name: $(cat "$T/bg$i.out")"
		grep -q control-ok "$T/bg$i.out" || fail "run $i: control write"
	done
	run_sbx -v -c "$T/p" -- sh -c "$(sc_try w/d1/.bashrc w/d8/.bashrc) echo ran"
	expect_rc 0 "after"; expect_contains "$OUT" ran "after"
	expect_not_contains "$ERR" damaged "the cache the concurrent runs left"
	expect_cache_used "after"
	expect_not_contains "$OUT" WROTE "after the concurrent runs"
}
TESTS+=(scan_cache_concurrent_runs)

# sc_mount_ext4_small DIR: an ext4 file system of 128-byte inodes (ctime kept to the second, even
# in memory) mounted at DIR for the rest of the test (test.sh's private mount namespace).
sc_mount_ext4_small() {
	[ "$(id -u)" = 0 ] || skip "mounting a file system needs root"
	command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4"
	truncate -s 16M "$T/small.img" && mkfs.ext4 -q -F -I 128 "$T/small.img" 2>/dev/null ||
		skip "mkfs.ext4 -I 128 failed"
	mkdir -p "$1" && mount -o loop "$T/small.img" "$1" 2>/dev/null || skip "cannot mount a loop device here"
	trap 'umount -l "'"$1"'" 2>/dev/null' EXIT
	[ "$(stat -f -c %T "$1")" = ext2/ext3 ] || fail "setup: $1 is not ext4 ($(stat -f -c %T "$1"))"
}

t_scan_cache_second_ctime() { # on a file system whose ctime has whole seconds, a .bashrc made in the second of the scan is refused next run
	need_private_places
	sc_mount_ext4_small "$P/vol"
	mkdir "$P/vol/d"
	policy p <<<"allow-write ."
	local try c0 c1=
	for try in 1 2 3 4 5; do
		rm -f "$P/vol/d/.bashrc"
		# at the start of a second: d's ctime is that second, .000000000
		"$PY" -c 'import time; time.sleep(1.02 - time.time() % 1)'
		touch "$P/vol/d/seed"; rm "$P/vol/d/seed"; c0=$(stat -c %.9Z "$P/vol/d")
		sleep 0.05	# past the coarse clock's margin
		# the attacker's run: its scan keeps d's listing (no .bashrc), then it makes one
		run_sbx -v -c "$T/p" -- sh -c 'echo "echo pwned" > vol/d/.bashrc && echo MADE'
		expect_rc 0 "run 1 (try $try)"; expect_contains "$OUT" MADE "run 1: .bashrc made"
		c1=$(stat -c %.9Z "$P/vol/d")
		[ "$c1" = "$c0" ] && break	# the same second: d's ctime did not move
	done
	[ "$c1" = "$c0" ] || skip "the machine is too slow to make the change within the second of the scan"
	expect_eq "${c0#*.}" 000000000 "setup: ctime in whole seconds"
	run_sbx -v -c "$T/p" -- sh -c "$(sc_try vol/d/.bashrc) (echo ok > vol/d/ok.txt) && echo control-ok"
	expect_rc 0 "run 2"
	expect_cache_used "run 2"
	expect_not_contains "$OUT" WROTE "a .bashrc made in the second of the scan"
	expect_contains "$OUT" control-ok "an ordinary write in the same directory (control)"
	expect_eq "$(cat "$P/vol/d/.bashrc")" "echo pwned" "host: the .bashrc"
}
TESTS+=(scan_cache_second_ctime)

t_scan_cache_second_ctime_audit() { # on a file system whose ctime has whole seconds, a repository made deep in the run's first second is found by the audit
	need_private_places
	git_env
	local pay; pay=$(git_payload secaudit)
	sc_mount_ext4_small "$P/vol"
	mkdir -p "$P/vol/a/b/c/d" "$P/a/b/c/d"
	policy p <<<"allow-write ."
	local try c
	for try in 1 2 3 4 5; do
		rm -rf "$P/vol/a/b/c/d/evil" "$P/a/b/c/d/evil"
		sleep 1.1	# d's ctime a second before the run
		"$PY" -c 'import time; time.sleep(1.1 - time.time() % 1)'	# 0.1 s into a second
		run_sbx -v -c "$T/p" -- sh -ec "for d in vol/a/b/c/d a/b/c/d; do git init -q \$d/evil
			printf '#!/bin/sh\n$pay\n' > \$d/evil/.git/hooks/pre-commit; chmod +x \$d/evil/.git/hooks/pre-commit
			done; echo DONE"
		expect_rc 0 "the run (try $try)"; expect_contains "$OUT" DONE "the run (try $try)"
		c=$(stat -c %.9Z "$P/vol/a/b/c/d")
		[ "${c%.*}" = "$(date +%s)" ] && break	# still the run's second: its ctime is before the run began
	done
	[ "${c%.*}" = "$(date +%s)" ] || skip "the machine is too slow to make the repository within the second the run began"
	expect_contains "$ERR" "neutralised $P/a/b/c/d/evil/.git/hooks/pre-commit" "the same on the project's file system (control)"
	expect_contains "$ERR" "neutralised $P/vol/a/b/c/d/evil/.git/hooks/pre-commit" "a repository made in the run's first second"
	git_outside "$P/vol/a/b/c/d/evil"
	expect_no_payload "git outside in the repository made in the run's first second"
}
TESTS+=(scan_cache_second_ctime_audit)

t_scan_cache_bare_head_symlink() { # a gitdir of any name whose HEAD is a symlink, or whose objects/ and refs/ are symlinks or executable files (git takes each), made deep in a run: the audit finds it; one there before: protected
	need_private_places
	git_env
	local pay g i; pay=$(git_payload headlink)
	mkdir -p "$P/a/b/c/d"
	policy p <<<"allow-write ."
	sleep 0.1
	run_sbx -v -c "$T/p" -- sh -ec "cd a/b/c/d; for g in plain link ol files; do git init -q --bare \$g.d
		git --git-dir=\$g.d config core.pager '$pay; cat'; done
		rm link.d/HEAD; ln -s refs/heads/main link.d/HEAD
		mv ol.d/objects ol.o; mv ol.d/refs ol.r; ln -s ../ol.o ol.d/objects; ln -s ../ol.r ol.d/refs
		rm -r files.d/objects files.d/refs; : > files.d/objects; : > files.d/refs
		chmod +x files.d/objects files.d/refs; echo DONE"
	expect_rc 0 "run 1"; expect_contains "$OUT" DONE "run 1"
	for g in link ol files; do
		git --git-dir="$P/a/b/c/d/$g.d" rev-parse --git-dir >/dev/null 2>&1 ||
			fail "setup: git does not take $g.d for a repository"
	done
	expect_contains "$ERR" "neutralised $P/a/b/c/d/plain.d/config" "a bare repository made deep (control)"
	expect_contains "$ERR" "neutralised $P/a/b/c/d/link.d/config" "one whose HEAD is a symlink"
	expect_contains "$ERR" "neutralised $P/a/b/c/d/ol.d/config" "one whose objects and refs are symlinks"
	expect_contains "$ERR" "neutralised $P/a/b/c/d/files.d/config" "one whose objects and refs are files"
	for g in link ol files; do git -C "$P/a/b/c/d/$g.d" -p log >/dev/null 2>&1; done
	expect_no_payload "git log outside in the gitdirs made with symlinks or files"
	# the person's own, there before the run (HEAD a symlink, and a file): config read-only inside
	rm -rf "$P/a/b/c/d/"*.d; git init -q --bare "$P/mine.d"; git init -q --bare "$P/plain.d"
	git init -q --bare "$P/files.d"; rm -r "$P/files.d/objects"; : >"$P/files.d/objects"
	chmod +x "$P/files.d/objects"; rm "$P/mine.d/HEAD"; ln -s refs/heads/main "$P/mine.d/HEAD"
	# every name sbx holds in a gitdir there: no placeholder comes and goes, its listing is cached
	echo . >"$P/files.d/commondir"; : >"$P/files.d/config.worktree"
	git --git-dir="$P/files.d" rev-parse --git-dir >/dev/null 2>&1 || fail "setup: git does not take files.d"
	sleep 0.1
	for i in 2 3; do	# run 3 takes their listings from the scan cache
		run_sbx -v -c "$T/p" -- sh -c "$(sc_try plain.d/config mine.d/config files.d/config) echo ok > mine.d/description && echo control-ok"
		expect_rc 0 "run $i"
		expect_not_contains "$OUT" WROTE "run $i: the config of a bare repository there before"
		expect_contains "$OUT" control-ok "run $i: a file of it git runs nothing from (control)"
	done
	expect_cache_used "run 3"
}
TESTS+=(scan_cache_bare_head_symlink)

t_scan_cache_overlay_lower_changed() { # an overlay mounted in a root: a .bashrc that appears through its lower layer (the merged directory's ctime unchanged) is refused next run
	need_private_places
	[ "$(id -u)" = 0 ] || skip "mounting a file system needs root"
	sc_tree
	mkdir -p "$T/ov/l/d" "$T/ov/u/d" "$T/ov/w" "$P/ov"
	mount -t overlay sbxt-ov -o "lowerdir=$T/ov/l,upperdir=$T/ov/u,workdir=$T/ov/w" "$P/ov" 2>/dev/null ||
		skip "cannot mount an overlay here"
	trap 'umount -l "$P/ov" 2>/dev/null' EXIT
	ls -a "$P/ov/d" >/dev/null; sleep 0.1	# the overlay's own marks on its upper directories
	policy p <<<"allow-write ."
	run_sbx -v -c "$T/p" -- true
	expect_rc 0 "run 1 (warms the cache)"
	local c0; c0=$(stat -c %.9Z "$P/ov/d")
	echo 'echo pwned' >"$T/ov/l/d/.bashrc"	# through the lower layer, as an image's tooling would
	[ -e "$P/ov/d/.bashrc" ] || fail "setup: the lower layer's .bashrc is not seen in the overlay"
	expect_eq "$(stat -c %.9Z "$P/ov/d")" "$c0" "setup: the merged directory's ctime did not move"
	run_sbx -v -c "$T/p" -- sh -c "$(sc_try ov/d/.bashrc) (echo ok > ov/d/ok.txt) && echo control-ok"
	expect_rc 0 "run 2"
	expect_cache_used "run 2 (the project's other directories)"
	expect_not_contains "$OUT" WROTE "a .bashrc that came through an overlay's lower layer"
	expect_contains "$OUT" control-ok "an ordinary write in the overlay (control)"
}
TESTS+=(scan_cache_overlay_lower_changed)

t_scan_cache_stdin_directory() { # a directory handed as stdin (sbx -- cmd < dir) is refused: through it the command could make a repository or a .bashrc anywhere, unseen by the audit; a file as stdin runs
	need_private_places
	policy p <<<"allow-write ."
	local try='mkdir /proc/self/fd/0/.git && echo MADE-GIT; (echo pwn > /proc/self/fd/0/.bashrc) 2>/dev/null && echo WROTE; echo ran'
	for dir in "$O" "$P"; do
		run_sbx -c "$T/p" -- sh -c "$try" <"$dir"
		expect_not_contains "$OUT" MADE-GIT "a .git made through a directory on stdin ($dir)"
		expect_not_contains "$OUT" WROTE "a .bashrc written through a directory on stdin ($dir)"
		[ ! -e "$dir/.git" ] && [ ! -e "$dir/.bashrc" ] || fail "host: made in $dir through stdin"
		expect_rc 125 "a directory on stdin ($dir)"
		expect_contains "$ERR" "stdin is a directory" "the refusal names stdin"
	done
	run_sbx -c "$T/p" -- sh -c "$try" <"$T/p"
	expect_rc 0 "a file on stdin (control)"; expect_contains "$OUT" ran "a file on stdin (control)"
	expect_not_contains "$OUT" WROTE "a file on stdin (control)"
	run_sbx -c "$T/p" -- sh -c "mkdir .git && echo MADE-GIT" </dev/null
	expect_rc 0 "a .git made in the project by its path (control)"; expect_contains "$OUT" MADE-GIT "control"
}
TESTS+=(scan_cache_stdin_directory)

t_scan_cache_session_leftover() { # in a session, a process an exec left behind makes a repository after its exec ended and the next exec only reads: session stop neutralises it
	need_private_places
	attrib_usable
	git_env
	local pay sess=leftover-$$-$RANDOM; pay=$(git_payload leftover)
	mkdir -p "$P/a/b/c/d"; sleep 0.1
	policy s <<<"allow-write $P"
	timeout -k 5 "$TMO" "$SBX" session start -c "$T/s" --name "$sess" >/dev/null 2>"$T/start.err" ||
		fail "session start: $(cat "$T/start.err")"
	trap "timeout 10 $(printf %q "$SBX") session stop $(printf %q "$sess") >/dev/null 2>&1" EXIT
	# exec 1 leaves a process behind and ends at once
	timeout -k 5 "$TMO" "$SBX" exec "$sess" -- sh -c "(while [ ! -e go ]; do sleep 0.05; done
		cd a/b/c/d; git init -q late; printf '#!/bin/sh\n$pay\n' > late/.git/hooks/post-checkout
		chmod +x late/.git/hooks/post-checkout; : > made) >/dev/null 2>&1 </dev/null & echo started" \
		>"$T/e1.out" || fail "exec 1"
	expect_contains "$(cat "$T/e1.out")" started "exec 1"
	: >"$P/go"	# the person's shell, after exec 1 ended
	local i; for i in $(seq 100); do [ -e "$P/a/b/c/d/made" ] && break; sleep 0.05; done
	[ -e "$P/a/b/c/d/made" ] || fail "setup: the process left behind did not make its repository"
	[ -x "$P/a/b/c/d/late/.git/hooks/post-checkout" ] || fail "setup (control): the hook is there before stop"
	timeout -k 5 "$TMO" "$SBX" exec "$sess" -- cat "$P/go" || fail "exec 2 (reads only)"
	timeout -k 5 "$TMO" "$SBX" session stop "$sess" >"$T/stop.out" 2>"$T/stop.err" || fail "session stop"
	trap - EXIT
	ERR=$(cat "$T/stop.err"); log_file stop "$T/stop.err"
	expect_neutralised "$P/a/b/c/d/late/.git/hooks/post-checkout" "made in the sandbox" \
		"a hook made by a process left behind after its exec"
	git_outside "$P/a/b/c/d/late"
	expect_no_payload "git outside in the repository the process left behind made"
}
TESTS+=(scan_cache_session_leftover)

# The part of the scan below its depth (the repositories and directories the audit compares
# with; no mount comes from it) is walked at the sandbox's first write-intent call, which waits
# for it (sbx.c 5c, scan_deep). The picture must be the disk before the sandbox changed
# anything: a reading command never pays for it, a repository the command prepares and moves
# into place is new, the person's own is not, and a run killed before its first call changed
# nothing to audit.
sd_need() { # the observer holds the calls; without it the whole scan runs before the command
	need_private_places
	attrib_usable
	git_env
	sc_tree
	policy p <<<"allow-write ."
}

t_scan_deep_reader_walks_nothing() { # a reading command never walks below the scan's depth; a writer's first call does, before it goes on
	sd_need
	run_sbx -v -c "$T/p" -- cat a/f
	expect_rc 0 "a reader"; expect_eq "$OUT" f "a reader: its output"
	expect_contains "$ERR" "below its depth at the first call" "a reader: the part below the depth left"
	expect_not_contains "$ERR" "scan at the first call" "a reader: nothing walked below the depth"
	expect_contains "$ERR" "the sandbox changed no name in a writable root; nothing looked at" "a reader: the audit"
	run_sbx -v -c "$T/p" -- sh -c 'echo ok > a/h/i/ok && echo wrote'
	expect_rc 0 "a writer"; expect_contains "$OUT" wrote "a writer (control)"
	expect_contains "$ERR" "scan at the first call" "a writer: the part below the depth walked"
	# where a write could go by no call the observer holds, the scan is whole before the command
	local knob
	for knob in "observe-writes off" "allow-all-unix-sockets" "allow-host-port 9"; do
		printf 'allow-write .\n%s\n' "$knob" >"$T/off"
		run_sbx -v -c "$T/off" -- cat a/f
		expect_rc 0 "$knob"
		expect_contains "$ERR" "scan: " "$knob: the scan's note"
		expect_not_contains "$ERR" "below its depth at the first call" "$knob: the scan whole before the command"
	done
}
TESTS+=(scan_deep_reader_walks_nothing)

t_scan_deep_picture_before_first_call() { # a gitdir prepared in one run and moved into place deep in the next is new (neutralised); the person's repository made between runs is not (kept), with the audit unsure
	sd_need
	local pay; pay=$(git_payload deep)
	run_sbx -v -c "$T/p" -- sh -ec "mkdir -p a/h/i/prep/objects a/h/i/prep/refs
		printf '[core]\n\tfsmonitor = %s\n' '$pay' > a/h/i/prep/config; echo DONE"
	expect_rc 0 "run 1 (prepares a gitdir without HEAD)"; expect_contains "$OUT" DONE "run 1"
	expect_contains "$ERR" "scan at the first call" "run 1: the part below the depth walked"
	person_repo "$P/a/h/mine"	# the person's, between runs, deep (after the cache was written)
	sleep 0.1
	# run 2: unsure (it makes a symlink to another directory), so the audit acts on whatever
	# it takes for new
	run_sbx -v -c "$T/p" -- sh -ec "ln -s ../m a/lnk; touch a/h/mine/.git/sbx-was-here
		mkdir a/h/i/work; mv a/h/i/prep a/h/i/work/.git
		echo 'ref: refs/heads/main' > a/h/i/work/.git/HEAD; echo DONE"
	expect_rc 0 "run 2"; expect_contains "$OUT" DONE "run 2"
	expect_cache_used "run 2"
	expect_contains "$ERR" "scan at the first call" "run 2: the part below the depth walked"
	expect_contains "$ERR" "neutralised $P/a/h/i/work/.git/config: removed core.fsmonitor" \
		"the gitdir prepared in an earlier run, moved into place"
	expect_contains "$ERR" "sbx cannot tell who made it: the command made a symlink" "run 2: the audit unsure"
	git_outside "$P/a/h/i/work"
	expect_no_payload "git outside in the repository moved into place"
	expect_person_settings_kept "$P/a/h/mine" "the person's repository, made between runs"
}
TESTS+=(scan_deep_picture_before_first_call)

t_scan_deep_killed_before_first_call() { # a run killed before its first write-intent call changed nothing: the next run audits nothing of it; one killed after is audited (control)
	sd_need
	local pay; pay=$(git_payload killed)
	run_sbx -c "$T/p" -- true
	expect_rc 0 "run 0"
	start_bg "$T/k1.out" -c "$T/p" -- sh -c 'echo ready; sleep 60'
	wait_file_has "$T/k1.out" ready 20 || { kill -KILL "$BGPID"; fail "run 1 never became ready: $(cat "$T/k1.out.err")"; }
	person_repo "$P/a/h/mine"	# the person's, deep, during the run
	kill -KILL "$BGPID"; wait_pid "$BGPID" 20
	sleep 0.2	# the next run starts after the person's repository, not with it
	# control: a run killed after its first call, having made a repository deep
	start_bg "$T/k2.out" -c "$T/p" -- sh -c "git init -q a/h/i/evil && git -C a/h/i/evil config core.fsmonitor '$pay' && echo ready; sleep 60"
	wait_file_has "$T/k2.out" ready 20 || { kill -KILL "$BGPID"; fail "run 2 never became ready: $(cat "$T/k2.out.err")"; }
	kill -KILL "$BGPID"; wait_pid "$BGPID" 20
	run_sbx -v -c "$T/p" -- true	# finds both runs' leftovers
	expect_rc 0 "run 3"
	expect_contains "$ERR" "neutralised $P/a/h/i/evil/.git/config: removed core.fsmonitor" \
		"control: the killed run's repository, made after its first call"
	git_outside "$P/a/h/i/evil"
	expect_no_payload "git outside in the killed run's repository"
	expect_person_settings_kept "$P/a/h/mine" "the person's repository, for a run killed before its first call"
}
TESTS+=(scan_deep_killed_before_first_call)

# sd_prepare_gitdirs PAY K...: a run that prepares a/h/i/K for each K, a gitdir without HEAD (no
# repository yet: nothing to audit), its config running PAY; what it made older than the next
# run's start (which counts from 20 ms before)
sd_prepare_gitdirs() {
	local pay=$1; shift
	run_sbx -c "$T/p" -- sh -ec "for k in $*; do mkdir -p a/h/i/\$k/objects a/h/i/\$k/refs
		printf '[core]\n\tfsmonitor = %s\n' '$pay' > a/h/i/\$k/config; done; echo DONE"
	expect_rc 0 "the preparing run (gitdirs without HEAD)"; expect_contains "$OUT" DONE "the preparing run"
	sleep 0.1
}

# sd_kill_when_ready K [SECS]: the run start_bg began with "$T/K.out", killed once it says ready
sd_kill_when_ready() {
	wait_file_has "$T/$1.out" ready "${2:-20}" ||
		{ kill -KILL "$BGPID"; fail "$1: the run never became ready: $(cat "$T/$1.out" "$T/$1.out.err")"; }
	kill -KILL "$BGPID"; wait_pid "$BGPID" 20
}

# sd_expect_recovered K: the next run finds the killed run's record, and its recovery
# neutralises the config of a/h/i/K, the gitdir that run completed in place (its HEAD)
sd_expect_recovered() {
	run_sbx -v -c "$T/p" -- true
	expect_rc 0 "$1: the next run"
	expect_contains "$ERR" "neutralised $P/a/h/i/$1/config: removed core.fsmonitor" \
		"$1: the gitdir completed in place by the killed run"
	git -C "$P/a/h/i/$1" status >/dev/null 2>&1
}

t_scan_deep_writes_elsewhere_walk_nothing() { # writes only outside the writable roots (2>/dev/null, /dev/tty), a thread made, a connect to the proxy: no walk below the scan's depth, no audit; control: the same command that then writes in the root walks first
	sd_need
	local c
	for c in 'ls >/dev/null' 'cat a/f 2>/dev/null >/dev/null' 'cat /dev/null >/dev/tty 2>/dev/null; true' \
		"python3 -c 'import threading; t = threading.Thread(target=print); t.start(); t.join()'" \
		"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 3128)).close()'"; do
		run_sbx -v -c "$T/p" -- sh -c "$c"
		expect_rc 0 "$c"
		expect_not_contains "$ERR" "scan at the first call" "$c: nothing walked below the depth"
		expect_contains "$ERR" "the sandbox changed no name in a writable root; nothing looked at" "$c: the audit"
	done
	run_sbx -v -c "$T/p" -- sh -c 'ls >/dev/null && echo ok > a/h/i/ok && echo wrote'
	expect_rc 0 "control"; expect_contains "$OUT" wrote "control: it wrote"
	expect_contains "$ERR" "scan at the first call" "control: its write in the root walked first"
}
TESTS+=(scan_deep_writes_elsewhere_walk_nothing)

t_scan_deep_attack_outside_link_killed() { # a gitdir prepared deep in one run is completed in place (its HEAD written) through a symlink outside the roots (a path that names no root: only where it leads does), and the run killed: the walk came before that write, so the next run's recovery neutralises it; control: the same through the root's own path
	sd_need
	local pay k via; pay=$(git_payload outside-link)
	ln -s "$P/a/h" "$O/lnk"	# the person's link, outside every writable root, into one
	sd_prepare_gitdirs "$pay" kit kat
	for k in kat kit; do	# kat: the control, by the root's path
		via="$O/lnk"; [ $k = kat ] && via="$P/a/h"
		start_bg "$T/$k.out" -c "$T/p" -- sh -c "echo 'ref: refs/heads/main' > $via/i/$k/HEAD && echo ready; sleep 60"
		sd_kill_when_ready "$k"
		[ -f "$P/a/h/i/$k/HEAD" ] || fail "setup ($k): no HEAD written"
		sd_expect_recovered "$k"
	done
	expect_no_payload "git outside in the gitdirs completed in place"
}
TESTS+=(scan_deep_attack_outside_link_killed)

# sd_openat2 DIR PATH RESOLVE: python3 in the sandbox writes HEAD's text by openat2(2)
# (O_WRONLY|O_CREAT|O_TRUNC) of PATH against a descriptor on DIR, with the RESOLVE flags.
sd_openat2() {
	printf '%s' "import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
d = os.open('$1', os.O_PATH | os.O_DIRECTORY)
how = ctypes.create_string_buffer(struct.pack('QQQ', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, $3))
fd = libc.syscall(437, d, b'$2', how, 24)
assert fd >= 0, os.strerror(ctypes.get_errno())
os.write(fd, b'ref: refs/heads/main\n')"
}

t_scan_deep_attack_openat2_in_root_killed() { # a gitdir prepared deep in one run is completed in place (its HEAD written) by openat2 with RESOLVE_IN_ROOT ("/HEAD" against a descriptor on the gitdir: a path that names no root), and the run killed: the walk came before that write, so the next run's recovery neutralises it; control: the same by a relative path, no RESOLVE flag
	sd_need
	command -v python3 >/dev/null || skip "python3 is not installed"
	local pay k prog; pay=$(git_payload openat2)
	sd_prepare_gitdirs "$pay" kit kat
	for k in kat kit; do	# kat: the control, by a relative path
		if [ $k = kat ]; then prog=$(sd_openat2 a/h/i/$k HEAD 0)
		else prog=$(sd_openat2 a/h/i/$k /HEAD 0x10); fi	# RESOLVE_IN_ROOT
		start_bg "$T/$k.out" -c "$T/p" -- sh -c "python3 -c \"$prog\" && echo ready; sleep 60"
		sd_kill_when_ready "$k"
		[ -f "$P/a/h/i/$k/HEAD" ] || fail "setup ($k): no HEAD written"
		sd_expect_recovered "$k"
	done
	expect_no_payload "git outside in the gitdirs completed in place"
}
TESTS+=(scan_deep_attack_openat2_in_root_killed)

t_scan_deep_attack_shared_cwd_killed() { # a gitdir prepared deep in one run is completed in place (its HEAD written) by one of two processes sharing a cwd after clone(CLONE_VFORK|CLONE_FS) and the child's exec (the parent goes on then): the other moves their cwd from / (outside the roots, where nothing else can change a name) into the gitdir while the open(HEAD) waits for the observer, both ways (the child opens, the parent opens); the run killed: the walk came before that write (sharing a cwd is said), so the next run's recovery neutralises it; control: HEAD written by the root's path
	sd_need
	local pay k d; pay=$(git_payload shared-cwd)
	d=$(mktemp -d "$T/cwdrace.XXXXXX")
	cc -O2 -o "$d/cwdrace" "$HERE/tests/helpers/cwdrace.c" 2>"$d/cc.err" ||
		{ rm -rf "$d"; fail "the helper did not build: $(head -c 200 "$d/cc.err")"; }
	cp "$d/cwdrace" "$O/cwdrace"; rm -rf "$d"
	sd_prepare_gitdirs "$pay" kat child parent
	for k in kat child parent; do	# kat: the control, HEAD written by the root's path
		if [ $k = kat ]; then
			start_bg "$T/$k.out" -c "$T/p" -- sh -c "echo 'ref: refs/heads/main' > a/h/i/$k/HEAD && echo ready; sleep 60"
		else
			start_bg "$T/$k.out" -c "$T/p" -- sh -c "'$O/cwdrace' $k / '$P/a/h/i/$k' HEAD 'ref: refs/heads/main
' && echo ready; sleep 60"
		fi
		sd_kill_when_ready "$k" 60
		note "$k: $(grep -h 'landed\|missed' "$T/$k.out" "$T/$k.out.err" | tr '\n' ' ')"
		[ -f "$P/a/h/i/$k/HEAD" ] || skip "$k: the race was not won: nothing to audit"
		sd_expect_recovered "$k"
	done
	expect_no_payload "git outside in the gitdirs completed in place"
}
TESTS+=(scan_deep_attack_shared_cwd_killed)

t_scan_deep_attack_local_service_killed() { # a gitdir prepared deep in one run is completed in place (its HEAD written) by a service on this machine's loopback that the command reaches through the proxy (allow-domain localhost: its connect is to the proxy, on loopback, a call that changes no name), and the run killed: such a policy lets the command write by no call of its own, so the scan is whole before it (as allow-host-port) and the next run's recovery neutralises it; control: HEAD written by the command, by the root's path
	sd_need
	command -v python3 >/dev/null && command -v curl >/dev/null || skip "python3 and curl are needed"
	local pay k port=$(( 20000 + RANDOM % 20000 )) srv i; pay=$(git_payload local-service)
	printf '%s\n' "import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        open(sys.argv[2] + self.path + '/HEAD', 'w').write('ref: refs/heads/main\n')
        self.send_response(200); self.end_headers(); self.wfile.write(b'wrote\n')
    def log_message(self, *a): pass
http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()" >"$T/writer.py"
	# the interpreter itself (a pyenv shim's exec would leave it running past a kill), bounded
	timeout 120 "$(python3 -c 'import sys; print(sys.executable)')" "$T/writer.py" "$port" "$P/a/h/i" >/dev/null 2>&1 &
	srv=$!
	trap 'kill $srv 2>/dev/null' EXIT
	for i in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
	printf 'allow-write .\nallow-domain localhost\n' >"$T/lp"
	sd_prepare_gitdirs "$pay" kit kat
	for k in kat kit; do	# kat: the control, HEAD written by the command
		if [ $k = kat ]; then
			start_bg "$T/$k.out" -c "$T/lp" -- sh -c "echo 'ref: refs/heads/main' > a/h/i/$k/HEAD && echo ready; sleep 60"
		else
			start_bg "$T/$k.out" -c "$T/lp" -- sh -c "curl -s -m 10 --noproxy '' -x \"\$HTTP_PROXY\" http://localhost:$port/$k && echo ready; sleep 60"
		fi
		sd_kill_when_ready "$k"
		[ -f "$P/a/h/i/$k/HEAD" ] || fail "setup ($k): no HEAD written"
		sd_expect_recovered "$k"
	done
	kill $srv 2>/dev/null
	expect_no_payload "git outside in the gitdirs completed in place"
	run_sbx -v -c "$T/lp" -- true
	expect_contains "$ERR" "scan: " "allow-domain localhost: the scan's note"
	expect_not_contains "$ERR" "below its depth at the first call" "allow-domain localhost: the scan whole before the command"
}
TESTS+=(scan_deep_attack_local_service_killed)

t_scan_deep_attack_second_sandbox_flip_killed() { # a gitdir prepared deep in one run is completed in place (its HEAD written) through a directory of a second sandbox's root that it keeps swapping with a symlink into the gitdir (renameat2 RENAME_EXCHANGE: calls of the second sandbox, which the first's observer never holds), while the first opens HEAD there until one lands; the run killed: the walk came before that write (a path through a directory another program may change is no write elsewhere), so the next run's recovery neutralises it; several rounds; control: HEAD written by the root's path
	sd_need
	command -v python3 >/dev/null || skip "python3 is not installed"
	local pay k n; pay=$(git_payload flip)
	printf '%s\n' "import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, end = sys.argv[1].encode(), sys.argv[2].encode(), time.time() + float(sys.argv[3])
while time.time() < end:
    libc.renameat2(-100, a, -100, b, 2); libc.renameat2(-100, a, -100, b, 2)
    for _ in range(200): pass" >"$T/flip.py"
	printf '%s\n' "import os, sys
for i in range(1, 1000000):
    try:
        fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
    except OSError:
        continue
    os.write(fd, b'ref: refs/heads/main\n'); print('landed', i, flush=True); break" >"$T/try.py"
	mkdir -p "$O/b"; printf 'allow-write %s\n' "$O/b" >"$T/pb"
	sd_prepare_gitdirs "$pay" kat k1 k2 k3 k4
	for k in kat k1 k2 k3 k4; do	# kat: the control, by the root's path
		if [ $k = kat ]; then
			start_bg "$T/$k.out" -c "$T/p" -- sh -c "echo 'ref: refs/heads/main' > a/h/i/$k/HEAD && echo ready; sleep 60"
		else
			rm -rf "$O/b/sw" "$O/b/sw2"; mkdir "$O/b/sw"; ln -s "$P/a/h/i/$k" "$O/b/sw2"
			(cd "$O/b" && exec "$SBX" -c "$T/pb" -- python3 "$T/flip.py" "$O/b/sw" "$O/b/sw2" 4 >/dev/null 2>&1) &
			n=$!
			sleep 0.7
			start_bg "$T/$k.out" -c "$T/p" -- sh -c "python3 '$T/try.py' '$O/b/sw/HEAD' && echo ready; sleep 60"
		fi
		sd_kill_when_ready "$k"
		[ $k = kat ] || wait $n
		note "$k: $(head -1 "$T/$k.out")"
		[ -f "$P/a/h/i/$k/HEAD" ] || fail "setup ($k): no HEAD written"
		sd_expect_recovered "$k"
	done
	expect_no_payload "git outside in the gitdirs completed in place"
}
TESTS+=(scan_deep_attack_second_sandbox_flip_killed)

# sd_mount_btrfs DIR: a btrfs file system mounted at DIR for the rest of the test (test.sh's
# private mount namespace); a subvolume and a snapshot are made there by an ioctl(2).
sd_mount_btrfs() {
	[ "$(id -u)" = 0 ] || skip "mounting a file system needs root"
	command -v mkfs.btrfs >/dev/null && command -v btrfs >/dev/null || skip "no btrfs-progs"
	truncate -s 128M "$T/btrfs.img" && mkfs.btrfs -q "$T/btrfs.img" >/dev/null 2>&1 ||
		skip "mkfs.btrfs failed"
	mkdir -p "$1" && mount -o loop "$T/btrfs.img" "$1" 2>/dev/null || skip "cannot mount a loop device here"
	trap 'umount -l "'"$1"'" 2>/dev/null' EXIT
	[ "$(stat -f -c %T "$1")" = btrfs ] || fail "setup: $1 is not btrfs ($(stat -f -c %T "$1"))"
}

t_scan_deep_btrfs_snapshot() { # a btrfs snapshot (an ioctl, a tree of names at once) of a gitdir prepared in an earlier run, named .git deep down, then HEAD: new, neutralised (the same by cp: control); a read-only subvolume or snapshot, which the audit could not neutralise, is refused
	sd_need
	sd_mount_btrfs "$P/vol"
	local pay cpay; pay=$(git_payload snap); cpay=$(git_payload copy)
	# btrfs's v1 snapshot (BTRFS_IOC_SNAP_CREATE: struct btrfs_ioctl_vol_args, writable; a
	# buffer python passes whole is a mutable one)
	local snap="python3 -c 'import fcntl, os, struct, sys
fcntl.ioctl(os.open(sys.argv[2], os.O_RDONLY), 0x50009401,
    bytearray(struct.pack(\"q4088s\", os.open(sys.argv[1], os.O_RDONLY), sys.argv[3].encode())))'"
	# run 1: a subvolume holding a gitdir without HEAD (no repository yet: nothing to audit)
	run_sbx -v -c "$T/p" -- sh -ec "btrfs -q subvolume create vol/prep >/dev/null
		mkdir -p vol/prep/objects vol/prep/refs vol/a/h/i/w vol/a/h/i/v
		printf '[core]\n\tfsmonitor = %s\n' '$pay' > vol/prep/config; echo DONE
		btrfs -q subvolume snapshot -r vol/prep vol/ro >/dev/null 2>&1 && echo MADE-RO-SNAPSHOT
		btrfs -q property set vol/prep ro true 2>/dev/null && echo MADE-RO
		$snap vol/prep vol rw && echo MADE-RW-SNAPSHOT"
	expect_rc 0 "run 1 (prepares a subvolume)"; expect_contains "$OUT" DONE "run 1"
	expect_contains "$OUT" MADE-RW-SNAPSHOT "control: a writable snapshot"
	expect_not_contains "$OUT" MADE-RO-SNAPSHOT "a read-only snapshot"
	expect_not_contains "$OUT" MADE-RO "a subvolume made read-only"
	sleep 0.1
	# run 2: the snapshot first (before any other call), then HEAD; the control copies by cp
	run_sbx -v -c "$T/p" -- sh -ec "$snap vol/prep vol/a/h/i/w .git
		echo 'ref: refs/heads/main' > vol/a/h/i/w/.git/HEAD
		cp -r vol/prep vol/a/h/i/v/.git; sed 's|$pay|$cpay|' vol/prep/config > vol/a/h/i/v/.git/config
		echo 'ref: refs/heads/main' > vol/a/h/i/v/.git/HEAD; echo DONE"
	expect_rc 0 "run 2"; expect_contains "$OUT" DONE "run 2"
	[ "$(stat -c %i "$P/vol/a/h/i/w/.git")" = 256 ] || fail "setup: the .git is not a snapshot (a subvolume's root)"
	expect_contains "$ERR" "neutralised $P/vol/a/h/i/v/.git/config: removed core.fsmonitor" \
		"control: the gitdir copied into place by cp"
	expect_contains "$ERR" "neutralised $P/vol/a/h/i/w/.git/config: removed core.fsmonitor" \
		"the gitdir snapshotted into place"
	git_outside "$P/vol/a/h/i/v"; git_outside "$P/vol/a/h/i/w"
	expect_no_payload "git outside in the repositories put in place"
}
TESTS+=(scan_deep_btrfs_snapshot)

t_scan_deep_observer_busy() { # under another program's seccomp listener (sbx-init's observer: EBUSY) the command starts once sbx has written its record again (by ctimes, not "nothing went on"): a run killed after its command made a repository deep is audited, the person's deep repository kept
	sd_need
	local pay sbx=$SBX kid; pay=$(git_payload busy)
	person_repo "$P/a/h/mine"	# the person's, deep, before the runs
	sleep 0.1
	run_sbx -v -c "$T/p" -- true
	expect_rc 0 "control: a run with the observer"
	expect_contains "$ERR" "the sandbox changed no name in a writable root; nothing looked at" "control: nothing walked below the depth"
	SBX=$PROBE run_sbx under_listener "$sbx" -v -c "$T/p" -- sh -c 'echo ok > a/h/i/ok && echo wrote'
	expect_rc 0 "under a listener"; expect_contains "$OUT" wrote "under a listener: the command ran"
	expect_contains "$ERR" "observer: off (sbx-init could not install it)" "under a listener: no observer"
	expect_not_contains "$ERR" "nothing looked at" "under a listener: the audit looks"
	SBX=$PROBE start_bg "$T/k.out" under_listener "$sbx" -c "$T/p" -- sh -c \
		"git init -q a/h/i/evil && git -C a/h/i/evil config core.fsmonitor '$pay' && echo ready; sleep 60"
	wait_file_has "$T/k.out" ready 20 || { kill -KILL "$BGPID"; fail "the run never became ready: $(cat "$T/k.out.err")"; }
	kid=$(cat "/proc/$BGPID/task/$BGPID/children")
	[ -n "$kid" ] || fail "setup: no sbx under the listener's holder"
	kill -KILL $kid; wait_pid "$BGPID" 20
	run_sbx -v -c "$T/p" -- true	# finds the killed run's leftovers
	expect_rc 0 "the next run"
	expect_contains "$ERR" "neutralised $P/a/h/i/evil/.git/config: removed core.fsmonitor" \
		"the killed run's repository, made deep with no observer"
	git_outside "$P/a/h/i/evil"
	expect_no_payload "git outside in the killed run's repository"
	[ -x "$P/a/h/mine/.git/hooks/pre-commit" ] || fail "the person's hook was renamed"
	expect_eq "$(git -C "$P/a/h/mine" config core.fsmonitor)" "$O/person-fsmonitor.sh" "the person's core.fsmonitor"
}
TESTS+=(scan_deep_observer_busy)

t_scan_prefetch_window_audit() { # a directory made by someone else (the person, another sandbox) in a cached directory after the scan took its lstat, before the run began (observe-writes off: the scan before the command) or before the sandbox's first call went on (on: the walk at that call): the audit still walks it, and the command's repository there is neutralised; control: one in a directory there before
	need_private_places
	command -v strace >/dev/null && command -v taskset >/dev/null ||
		skip "strace or taskset is not installed (strace stops sbx at the scan's lstat of a directory)"
	git_env
	local pay i pid d bg pol why sent n; pay=$(git_payload window)
	# more directories than one thread's share (SBX_STAT_PER_THREAD): the scan's lstats taken
	# at once before its walk (sc_prefetch); on one CPU, all on sbx's own thread (strace
	# follows that one), whatever the cache holds of earlier tests' trees
	rm -f "$(sc_file)"
	mkdir -p "$P/deep/a/b/D-off/Z" "$P/deep/a/b/D-on/Z" "$P/w"
	for i in $(seq 1100); do mkdir "$P/w/d$i"; done
	printf 'allow-write .\nobserve-writes off\n' >"$T/off"	# nothing deferred: the scan walks all before
	printf 'allow-write .\n' >"$T/on"	# below the depth at the first write-intent call
	sleep 0.1
	run_sbx -v -c "$T/off" -- true
	expect_rc 0 "run 0 (warms the cache)"
	for pol in off on; do
		d=$(realpath "$P")/deep/a/b/D-$pol
		case $pol in off) why="observe-writes is off" ;; on) why="made in the sandbox" ;; esac
		# sbx stopped right after its first lstat of D (the scan's); D/X made meanwhile
		printf '$ strace ... sbx -v -c %s -- ...\n' "$T/$pol"
		rm -f "$T/strace"	# not the pass before's stop
		timeout -k 5 "$TMO" taskset -c 0 strace -o "$T/strace" -P "$d" -e trace=newfstatat,lstat,statx \
			-e inject=newfstatat,lstat,statx:signal=SIGSTOP:when=1 "$SBX" -v -c "$T/$pol" -- sh -ec "
			echo first > first-$pol	# on: the first call in a root, which the walk comes before
			for r in X Z; do git init -q deep/a/b/D-$pol/\$r
				printf '#!/bin/sh\n$pay\n' > deep/a/b/D-$pol/\$r/.git/hooks/pre-commit
				chmod +x deep/a/b/D-$pol/\$r/.git/hooks/pre-commit; done; echo DONE" >"$T/.stdout" 2>"$T/.stderr" &
		bg=$!
		for i in $(seq 200); do grep -q 'stopped by SIGSTOP' "$T/strace" 2>/dev/null && break; sleep 0.1; done
		pid=$(ps --ppid "$(ps --ppid "$bg" -o pid= | tr -d ' ')" -o pid= | tr -d ' ')	# timeout, strace (taskset execs it), sbx
		grep -q 'stopped by SIGSTOP' "$T/strace" || { [ -n "$pid" ] && kill -CONT "$pid"; wait "$bg"
			log_file err "$T/.stderr"; log_file strace "$T/strace"
			fail "$pol: setup: sbx never stopped at an lstat of $d"; }
		mkdir "$d/X"	# by someone else, after the scan's lstat of D, before the run (or its first call)
		sleep 0.1	# past the coarse clock's margin
		kill -CONT "$pid"
		sent=1	# strace stops it once more a kind of stat (the audit's, at D's descriptor too): go on
		while kill -0 "$pid" 2>/dev/null; do
			n=$(grep -c 'stopped by SIGSTOP' "$T/strace")
			[ "$n" -gt "$sent" ] && { kill -CONT "$pid"; sent=$n; }
			sleep 0.1
		done
		wait "$bg"; RC=$?
		OUT=$(cat "$T/.stdout"); ERR=$(cat "$T/.stderr")
		echo "  [exit $RC]"; log_file out "$T/.stdout"; log_file err "$T/.stderr"; log_file strace "$T/strace"
		expect_rc 0 "$pol: run 1"; expect_contains "$OUT" DONE "$pol: run 1"
		expect_cache_used "$pol: run 1"
		expect_neutralised "$d/Z/.git/hooks/pre-commit" "$why" "$pol: control: a repository made in a directory there before"
		expect_neutralised "$d/X/.git/hooks/pre-commit" "$why" "$pol: a repository made in a directory someone made after the scan's lstat"
		git_outside "$d/X"
	done
	expect_no_payload "git outside"
}
TESTS+=(scan_prefetch_window_audit)
