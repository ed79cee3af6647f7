# tests/git.tests.sh - git runs code later, outside the sandbox, in more ways than
# .git/hooks and .git/config: each attack is tried from inside, then the person's own
# git (status, commit) runs OUTSIDE the sandbox and must not run the payload; the same
# git operations inside (add, commit, branch, rebase, stash, worktree add, init) work.
# Sourced by test.sh (uses run_sbx, run_ops, expect_*, git_env, fail, note).

# A payload that leaves a marker outside every writable root when it runs.
git_payload() { # git_payload NAME : prints the path of an executable that touches $O/PWNED-NAME
	printf '#!/bin/sh\ntouch %s/PWNED-%s\nexit 1\n' "$O" "$1" >"$O/payload-$1.sh"
	chmod +x "$O/payload-$1.sh"
	echo "$O/payload-$1.sh"
}
expect_no_payload() { # expect_no_payload WHAT
	local m
	m=$(cd "$O" && ls PWNED-* 2>/dev/null | tr '\n' ' ')
	[ -z "$m" ] || fail "$1: a payload ran outside the sandbox: $m"
}
# The person's git, outside: status and a commit, in DIR.
git_outside() { # git_outside DIR
	git -C "$1" status >/dev/null 2>&1
	git -C "$1" commit -q --allow-empty -m outside >/dev/null 2>&1
	git -C "$1" log -1 >/dev/null 2>&1
}
git_project() { # git_project DIR : a repository with one commit
	mkdir -p "$1"; echo hello >"$1/file.txt"
	git -C "$1" init -q && git -C "$1" add . && git -C "$1" commit -qm one || fail "setup: git init in $1"
}

t_git_entries_read_only() { # .git/commondir, config.worktree, worktrees/*/, modules/*/ and hooksPath targets: read-only inside
	git_env
	local pay; pay=$(git_payload fsm)
	git_project "$P"
	git -C "$P" worktree add -q "$O/wt" -b wtb 2>/dev/null || fail "setup: worktree add"
	# a submodule's repository under .git/modules (as `git submodule add` leaves it)
	mkdir -p "$P/.git/modules"; git init -q --separate-git-dir "$P/.git/modules/sub" "$T/subwt" >/dev/null || fail "setup: modules/sub"
	# husky's layout: core.hooksPath = .husky/_, whose stubs run .husky/<hook>
	mkdir -p "$P/.husky/_"; echo 'exit 0' >"$P/.husky/pre-commit"
	git -C "$P" config core.hooksPath .husky/_
	git -C "$P" config extensions.worktreeConfig true   # git now reads .git/config.worktree
	# a hostile common directory the command would point commondir at
	mkdir -p "$P/evil/hooks"; printf '[core]\n\tfsmonitor = %s\n' "$pay" >"$P/evil/config"
	git -C "$P" add -A && git -C "$P" commit -qm setup
	policy p <<<"allow-write ."
	run_ops -c "$T/p" <<EOF
commondir write $P/.git/commondir
wtconfig write $P/.git/config.worktree
wt_commondir write $P/.git/worktrees/wt/commondir
wt_gitdir write $P/.git/worktrees/wt/gitdir
mod_config append $P/.git/modules/sub/config
mod_hook create $P/.git/modules/sub/hooks/pre-commit
husky_stub create $P/.husky/_/pre-commit
husky_hook append $P/.husky/pre-commit
config append $P/.git/config
ctl_index_lock create $P/.git/index.lock
ctl_file append $P/file.txt
ctl_evil append $P/evil/config
EOF
	expect_ops <<'EOF'
commondir EROFS
wtconfig EROFS
wt_commondir EROFS
wt_gitdir EROFS
mod_config EROFS
mod_hook EROFS
husky_stub EROFS
husky_hook EROFS
config EROFS
ctl_index_lock ok
ctl_file ok
ctl_evil ok
EOF
	rm -f "$P/.git/index.lock"
	# the missing commondir is held as "." while the run lasts: git works inside
	run_sbx -c "$T/p" -- sh -c 'cat .git/commondir; git status --short >/dev/null && echo STATUS-OK'
	expect_rc 0 "git status inside"; expect_contains "$OUT" STATUS-OK "git status with the commondir placeholder"
	[ ! -e "$P/.git/commondir" ] || fail "host: the commondir placeholder was left behind"
	git_outside "$P"; git_outside "$O/wt"
	expect_no_payload "git status/commit outside after the run"
}

t_git_operations_work() { # control: add, commit, branch, rebase, stash, worktree add, init work inside; tree clean after
	git_env
	git_project "$P"
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- sh -ec '
		echo two >>file.txt; git add file.txt; git commit -qm two
		git branch topic; git checkout -q topic; echo t >t.txt; git add t.txt; git commit -qm topic
		git checkout -q master 2>/dev/null || git checkout -q main
		echo three >>file.txt; git commit -qam three
		git checkout -q topic; git rebase -q master 2>/dev/null || git rebase -q main
		echo dirty >>t.txt; git stash -q; git stash pop -q; git checkout -q -- t.txt
		git worktree add -q ../wt-inside 2>/dev/null || git worktree add -q wt-inside
		mkdir newproj; cd newproj; git init -q; echo n >n; git add n; git commit -qm new
		echo ALL-OK'
	expect_rc 0 "git operations inside"; expect_contains "$OUT" ALL-OK "git operations"
	expect_eq "$(git -C "$P" log --format=%s topic | tr '\n' ' ')" "topic three two one " "host: the rebased branch"
	expect_eq "$(git -C "$P/newproj" log --format=%s)" new "host: the project made inside"
	expect_not_contains "$ERR" "neutralised" "stderr of a run that made nothing dangerous"
}

t_git_created_repos_neutralised() { # git init + hook + fsmonitor, nested gitlink, .git file and symlink: nothing runs later
	git_env
	local pay; pay=$(git_payload new)
	git_project "$P"
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- sh -ec "
		# a new project with a hook and an fsmonitor
		mkdir newproj; cd newproj; git init -q
		printf '#!/bin/sh\n$pay hook\n' >.git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
		git config core.fsmonitor $pay; git config alias.st '!$pay'; git config core.pager $pay
		echo n >n; git add n; git -c core.fsmonitor=false commit -q --no-verify -m new; cd ..
		# a nested repository deep down, with its own fsmonitor, as a gitlink of the outer one
		mkdir -p a/b/c/d/nested; cd a/b/c/d/nested; git init -q; git commit -q --allow-empty -m n
		git config core.fsmonitor $pay; cd - >/dev/null
		git -c core.fsmonitor=false add a/b/c/d/nested
		# and one in node_modules, which the audit searches when git ran
		mkdir -p node_modules/pkg; cd node_modules/pkg; git init -q; git commit -q --allow-empty -m n
		git config core.fsmonitor $pay; cd - >/dev/null
		git -c core.fsmonitor=false add -f node_modules/pkg
		git -c core.fsmonitor=false commit -qm gitlink
		# a gitdir made inside, named by a new .git file and a new .git symlink
		mkdir -p evilgd x y; git init -q --bare evilgd
		git --git-dir=evilgd config core.fsmonitor $pay
		printf '#!/bin/sh\n$pay hook2\n' >evilgd/hooks/pre-commit; chmod +x evilgd/hooks/pre-commit
		echo 'gitdir: $P/evilgd' >x/.git; ln -s $P/evilgd y/.git
		echo DONE"
	expect_rc 0 "the attacks inside"; expect_contains "$OUT" DONE "the attacks inside"
	expect_contains "$ERR" "neutralised $P/newproj/.git/hooks/pre-commit" "report of the new hook"
	expect_contains "$ERR" "core.fsmonitor" "report of the fsmonitor"
	expect_contains "$ERR" "neutralised $P/node_modules/pkg/.git/config" "report of the repository in node_modules"
	for d in "$P" "$P/newproj" "$P/a/b/c/d/nested" "$P/node_modules/pkg" "$P/x" "$P/y"; do git_outside "$d"; done
	git -C "$P/newproj" st >/dev/null 2>&1; git -C "$P/newproj" log -1 >/dev/null 2>&1
	expect_no_payload "the person's git outside, after the run"
	# nothing the command wrote outside those entries is gone
	expect_eq "$(git -C "$P/newproj" log --format=%s | tail -1)" new "host: the new project's commit"
	[ -f "$P/newproj/.git/hooks/pre-commit.sbx-disabled" ] || fail "host: the hook is kept, renamed"
	[ -f "$P/newproj/.git/config.sbx-disabled" ] || fail "host: the original config is kept"
	grep -q 'fsmonitor' "$P/newproj/.git/config" && fail "host: core.fsmonitor still in the new config"
	expect_eq "$(git -C "$P/newproj" config core.bare)" false "host: the rest of the config kept"
}

t_git_created_repo_after_sigkill() { # sbx SIGKILLed after git init + hook inside: the next run neutralises it first
	git_env
	local pay tok="sleep ${TOKBASE}7"; pay=$(git_payload killed)
	# (the runtime directory is the machine's, per user: the next sbx run, here the one
	# below, recovers the killed run's record)
	git_project "$P"
	policy p <<<"allow-write ."
	start_bg "$T/bg.out" -c "$T/p" -- sh -c "mkdir newproj && cd newproj && git init -q &&
		printf '#!/bin/sh\n$pay\n' >.git/hooks/post-checkout && chmod +x .git/hooks/post-checkout &&
		git config core.fsmonitor $pay && echo ready && exec $tok"
	wait_file_has "$T/bg.out" ready 20 || { kill -KILL "$BGPID"; fail "the command never became ready: $(cat "$T/bg.out.err")"; }
	kill -KILL "$BGPID"; wait_pid "$BGPID" 10
	wait_gone "$tok" 5 || fail "processes outlived the SIGKILLed sbx"
	[ -x "$P/newproj/.git/hooks/post-checkout" ] || fail "setup: the killed run's hook is not there"
	expect_eq "$(cat "$P/.git/commondir" 2>&1)" . "host: the killed run's commondir placeholder"
	git -C "$P" status --short >/dev/null || fail "host: git status beside the killed run's commondir placeholder"
	git -C "$P" config core.pager cat   # the person's own change, between the two runs
	run_sbx -c "$T/p" -- true
	expect_rc 0 "the next run"
	expect_contains "$ERR" "neutralised $P/newproj/.git/hooks/post-checkout" "the next run's report"
	expect_eq "$(git -C "$P" config core.pager)" cat "host: a change to a repository the killed run could not write"
	[ ! -e "$P/.git/commondir" ] || fail "host: the killed run's commondir placeholder was not removed"
	git_outside "$P/newproj"; git -C "$P/newproj" checkout -q -b other 2>/dev/null
	expect_no_payload "git outside after the recovery"
}

t_git_config_named_paths() { # paths the config names (fsmonitor script, include, alias script) are read-only inside
	git_env
	git_project "$P"
	printf '#!/bin/sh\nexit 1\n' >"$P/fsm.sh"; chmod +x "$P/fsm.sh"
	printf '[alias]\n\tx = !sh tools/run.sh\n' >"$P/shared.gitconfig"; mkdir -p "$P/tools"; echo 'exit 0' >"$P/tools/run.sh"
	git -C "$P" config core.fsmonitor ./fsm.sh
	git -C "$P" config include.path ../shared.gitconfig
	git -C "$P" config include.path ../later.gitconfig --add
	git -C "$P" config filter.f.clean './filters/clean.sh %f'
	policy p <<<"allow-write ."
	run_ops -c "$T/p" <<EOF
fsm append $P/fsm.sh
include append $P/shared.gitconfig
include_missing write $P/later.gitconfig
alias_script append $P/tools/run.sh
filter_missing mkdir $P/filters
ctl append $P/file.txt
EOF
	expect_ops <<'EOF'
fsm EROFS
include EROFS
include_missing EROFS|EISDIR
alias_script EROFS
filter_missing EROFS|EEXIST
ctl ok
EOF
	[ ! -e "$P/later.gitconfig" ] && [ ! -e "$P/filters" ] || fail "host: a placeholder was left behind"
}

t_git_config_unparsable_runs() { # a .git/config git cannot parse: the run goes on with one warning; config, hooks and what its other lines name stay read-only
	git_env
	git_project "$P"
	mkdir -p "$P/.githooks"
	# a line git stops at, then a hooksPath git reads the day the line is fixed
	printf '[core]\n\tbare = false\n[broken\n[core]\n\thooksPath = .githooks\n' >"$P/.git/config"
	git -C "$P" status >/dev/null 2>&1 && fail "setup: git accepts the broken config"
	cp "$P/.git/config" "$T/config.before"
	policy p <<<"allow-write ."
	run_ops -c "$T/p" <<EOF
config append $P/.git/config
config_rename rename $P/.git/config $P/.git/config.old
hook create $P/.git/hooks/pre-commit
hookspath create $P/.githooks/pre-commit
ctl_file append $P/file.txt
ctl_gitdir create $P/.git/newfile
EOF
	expect_ops <<'EOF'
config EROFS
config_rename EBUSY|EROFS
hook EROFS
hookspath EROFS
ctl_file ok
ctl_gitdir ok
EOF
	expect_eq "$(grep -c "config:3: a line git cannot parse" <<<"$ERR")" 1 "one warning line, naming the file and the line"
	cmp -s "$P/.git/config" "$T/config.before" || fail "the broken config changed (the person's file, left as it was)"
	[ ! -e "$P/.git/config.sbx-disabled" ] || fail "the person's config was renamed"
	# control: the line fixed, git works inside and there is no warning
	printf '[core]\n\tbare = false\n[core]\n\thooksPath = .githooks\n' >"$P/.git/config"
	run_sbx -c "$T/p" -- git status --short
	expect_rc 0 "git status inside, the config fixed"
	expect_not_contains "$ERR" "cannot parse" "no warning for a good config"
	# still refused: a config sbx cannot read as git does (git reads past a NUL byte; sbx cannot say what it sees)
	printf '[core]\n\tbare = false # \0\n[core]\n\thooksPath = .githooks\n' >"$P/.git/config"
	run_sbx -c "$T/p" -- true
	expect_rc 125 "a config with a NUL byte"
	expect_contains "$ERR" "cannot read as git does" "the NUL refusal names why"
}
TESTS+=(git_config_unparsable_runs)

t_git_worktree_commit() { # a worktree whose main repository is outside the writable root: commit works, the rest is read-only
	git_env
	git_project "$O/main"
	git -C "$O/main" worktree add -q "$T/wt" -b wtb 2>/dev/null || fail "setup: worktree add"
	cd "$T/wt" || fail "cd"
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- sh -c 'echo change >>file.txt && git commit -qam inside && git status --short && echo COMMITTED'
	expect_rc 0 "git commit in the worktree"; expect_contains "$OUT" COMMITTED "git commit in the worktree"
	expect_eq "$(git -C "$O/main" log -1 --format=%s wtb)" inside "host: the worktree's commit"
	run_ops -c "$T/p" <<EOF
hook create $O/main/.git/hooks/pre-commit
config append $O/main/.git/config
main_file append $O/main/file.txt
head append $O/main/.git/HEAD
wt_commondir append $O/main/.git/worktrees/wt/commondir
wt_gitdir append $O/main/.git/worktrees/wt/gitdir
wt_new create $O/main/.git/worktrees/wt/config.worktree
ctl_refs create $O/main/.git/refs/heads/probe
ctl_wt_index create $O/main/.git/worktrees/wt/probe
EOF
	expect_ops <<'EOF'
hook EROFS
config EROFS
main_file EROFS
head EROFS
wt_commondir EROFS
wt_gitdir EROFS
wt_new EEXIST|EROFS
ctl_refs ok
ctl_wt_index ok
EOF
	rm -f "$O/main/.git/refs/heads/probe" "$O/main/.git/worktrees/wt/probe" "$O/main/.git/worktrees/wt/config.worktree"
}

t_git_mandatory_extended() { # beyond srt: .zshenv, ~/.config/git/config, fish, .claude/settings*.json, protect NAME
	mkdir -p "$H/.config/fish" "$P/.claude"
	echo 'echo hi' >"$H/.zshenv"; echo '{}' >"$P/.claude/settings.json"
	policy p <<EOF
allow-write .
allow-write $H
protect .envrc
protect tool/rc
EOF
	run_ops -c "$T/p" <<EOF
zshenv append $H/.zshenv
zlogin write $H/.zlogin
bash_login write $H/.bash_login
xdg_git write $H/.config/git/config
fish write $H/.config/fish/config.fish
claude append $P/.claude/settings.json
claude_local write $P/.claude/settings.local.json
envrc write $P/.envrc
tool_rc mkdir $P/tool
ctl_home create $H/notes.txt
ctl_claude create $P/.claude/notes.md
EOF
	expect_ops <<'EOF'
zshenv EROFS
zlogin EISDIR|EROFS
bash_login EISDIR|EROFS
xdg_git EISDIR|EROFS
fish EISDIR|EROFS
claude EROFS
claude_local EISDIR|EROFS
envrc EISDIR|EROFS
tool_rc EEXIST|EROFS
ctl_home ok
ctl_claude ok
EOF
	run_sbx -c "$T/p" --print=json
	expect_contains "$OUT" '"protectedFiles"' "--print=json"
	run_sbx -c "$T/p" --print=policy
	expect_contains "$OUT" "protect .envrc" "--print=policy"
}

TESTS+=(git_entries_read_only git_operations_work git_created_repos_neutralised git_created_repo_after_sigkill
	git_config_named_paths git_worktree_commit git_mandatory_extended)

t_git_deep_and_renamed_repos() { # beyond the scan's depth: the person's hooks kept, changed ones neutralised; a dir renamed to .git is new
	git_env
	local pay; pay=$(git_payload deep)
	git_project "$P"
	git_project "$P/a/b/c/deep"          # deeper than the scan reaches: not protected by a mount
	printf '#!/bin/sh\nexit 0\n' >"$P/a/b/c/deep/.git/hooks/pre-push"; chmod +x "$P/a/b/c/deep/.git/hooks/pre-push"
	git -C "$P/a/b/c/deep" config core.pager cat   # the person's own setting
	policy p <<<"allow-write ."
	sleep 0.1   # the audit takes what changed from 20 ms before the run on as the command's
	# run 1 prepares a directory that is not a repository yet (no config, no refs: nothing to
	# audit, nothing the next run's scan takes for a repository to protect)
	run_sbx -c "$T/p" -- sh -ec "git init -q --bare prep; git --git-dir=prep config core.fsmonitor $pay
		mv prep/config prep/cfg; mv prep/refs prep/rfs"
	expect_rc 0 "run 1"
	run_sbx -c "$T/p" -- sh -ec "
		cd a/b/c/deep; echo x >>file.txt; git -c core.fsmonitor=false commit -qam inside
		printf '#!/bin/sh\n$pay\n' >.git/hooks/post-commit; chmod +x .git/hooks/post-commit; cd - >/dev/null
		mv prep/cfg prep/config; mv prep/rfs prep/refs; mkdir -p x/y/z/w; mv prep x/y/z/w/.git; echo DONE"
	expect_rc 0 "run 2"; expect_contains "$OUT" DONE "run 2"
	expect_contains "$ERR" "neutralised $P/a/b/c/deep/.git/hooks/post-commit" "the hook added to the deep repository"
	expect_contains "$ERR" "neutralised $P/x/y/z/w/.git/config" "the directory renamed to .git"
	expect_not_contains "$ERR" "pre-push" "the person's own hook"
	expect_eq "$(git -C "$P/a/b/c/deep" config core.pager)" cat "host: the person's own setting kept"
	[ -x "$P/a/b/c/deep/.git/hooks/pre-push" ] || fail "host: the person's own hook was touched"
	git_outside "$P/a/b/c/deep"; git_outside "$P/x/y/z/w"
	expect_no_payload "git outside after run 2"
}
TESTS+=(git_deep_and_renamed_repos)

t_git_pointer_to_existing_repo() { # a new .git symlink or file naming the person's repository: its own hooks are kept
	git_env
	git_project "$P"
	printf '#!/bin/sh\nexit 0\n' >"$P/.git/hooks/pre-commit"; chmod +x "$P/.git/hooks/pre-commit"
	git_project "$P/a/b/c/deep"
	printf '#!/bin/sh\nexit 0\n' >"$P/a/b/c/deep/.git/hooks/pre-push"; chmod +x "$P/a/b/c/deep/.git/hooks/pre-push"
	sleep 0.1
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- sh -ec "mkdir y z; ln -s $P/.git y/.git; echo 'gitdir: $P/a/b/c/deep/.git' >z/.git; echo DONE"
	expect_rc 0; expect_contains "$OUT" DONE "the command"
	expect_not_contains "$ERR" "neutralised" "the audit of repositories there before the run"
	[ -x "$P/.git/hooks/pre-commit" ] && [ -x "$P/a/b/c/deep/.git/hooks/pre-push" ] || fail "host: the person's hooks were touched"
}
TESTS+=(git_pointer_to_existing_repo)

t_git_rebase_todo_exec() { # a rebase left stopped with an exec line: the person's `git rebase --continue` does not run it
	git_env
	local pay; pay=$(git_payload rebase)
	git_project "$P"
	echo two >>"$P/file.txt"; git -C "$P" commit -qam two
	# the sequence editor the command uses: stop at once, then pick, then run the payload
	printf '#!/bin/sh\nsha=$(git rev-parse --short HEAD)\nprintf "break\\npick %%s two\\nexec %s\\n" "$sha" >"$1"\n' "$pay" >"$T/seqed.sh"
	chmod +x "$T/seqed.sh"
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- sh -c "GIT_SEQUENCE_EDITOR=$T/seqed.sh git rebase -q -i HEAD~1; echo STOPPED"
	expect_rc 0; expect_contains "$OUT" STOPPED "the rebase inside"
	[ -d "$P/.git/rebase-merge" ] || fail "setup: no rebase left in progress"
	expect_contains "$ERR" "exec line commented out" "the report"
	git -C "$P" rebase --continue >/dev/null 2>&1
	expect_no_payload "git rebase --continue outside"
	# control: the rest of the rebase ran
	[ ! -d "$P/.git/rebase-merge" ] || git -C "$P" rebase --continue >/dev/null 2>&1
	expect_eq "$(git -C "$P" log -1 --format=%s)" two "host: the rebase finished"
}
TESTS+=(git_rebase_todo_exec)

t_git_audit_ctime_not_mtime() { # a repository made deep in old directories, their mtimes set back: still found (ctime)
	git_env
	local pay; pay=$(git_payload deepmt)
	git_project "$P"
	mkdir -p "$P/a/b/c/d/e" && touch -d '2001-01-01' "$P/a/b/c/d/e" "$P/a/b/c/d" "$P/a/b/c" "$P/a/b" "$P/a"
	policy p <<<"allow-write ."
	sleep 0.1
	run_sbx -c "$T/p" -- sh -ec "cd a/b/c/d/e; git init -q evil; git -C evil config core.fsmonitor $pay
		printf '#!/bin/sh\n$pay\n' > evil/.git/hooks/pre-commit; chmod +x evil/.git/hooks/pre-commit
		touch -d '2001-01-01' . ..; echo DONE"
	expect_rc 0; expect_contains "$OUT" DONE "the command"
	expect_contains "$ERR" "neutralised $P/a/b/c/d/e/evil/.git/hooks/pre-commit" "the hook of the repository made deep"
	expect_contains "$ERR" "neutralised $P/a/b/c/d/e/evil/.git/config" "its fsmonitor"
	git_outside "$P/a/b/c/d/e/evil"
	expect_no_payload "git outside in the deep repository"
	# control: a run that makes no repository neutralises nothing
	run_sbx -c "$T/p" -- sh -ec "echo x > a/b/c/d/e/plain.txt"
	expect_rc 0
	expect_not_contains "$ERR" neutralised "a run that made no repository"
}
TESTS+=(git_audit_ctime_not_mtime)

t_git_bare_repo_pointed_at_later() { # a bare repository made in one run, a .git file to it written by a later run in another project: nothing runs
	git_env
	local pay; pay=$(git_payload bare)
	mkdir -p "$P/q1" "$P/q2"
	git_project "$P/q1"
	policy p <<<"allow-write ."
	cd "$P/q2" || fail "setup"
	run_sbx -c "$T/p" -- sh -ec "git init -q --bare evil.d
		printf '[core]\n\tbare = false\n\tfsmonitor = \"$pay\"\n' >> evil.d/config
		git init -q x && mv x/.git renamed.d && printf '#!/bin/sh\n$pay\n' > renamed.d/hooks/pre-commit
		chmod +x renamed.d/hooks/pre-commit; echo DONE"
	expect_rc 0 "run 1"; expect_contains "$OUT" DONE "run 1"
	expect_contains "$ERR" "neutralised $P/q2/evil.d/config" "the bare repository's fsmonitor"
	expect_contains "$ERR" "neutralised $P/q2/renamed.d/hooks/pre-commit" "a .git renamed away: its hook"
	cd "$P/q1" || fail "setup"
	run_sbx -c "$T/p" -- sh -ec "mkdir x && echo 'gitdir: $P/q2/evil.d' > x/.git
		git update-index --add --cacheinfo 160000,4b825dc642cb6eb9a060e54bf8d69288fbee4904,x; echo DONE"
	expect_rc 0 "run 2"
	git -C "$P/q1" status >/dev/null 2>&1; git_outside "$P/q1"
	expect_no_payload "git status in the project outside, after both runs"
	# control: the person's own bare repository, there before, is left alone by a run that does not touch it
	git init -q --bare "$P/q2/mine.git"; printf '#!/bin/sh\nexit 0\n' >"$P/q2/mine.git/hooks/pre-receive"
	chmod +x "$P/q2/mine.git/hooks/pre-receive"; sleep 0.1
	cd "$P/q2" || fail "setup"
	run_sbx -c "$T/p" -- sh -c 'echo x > note.txt'
	expect_rc 0 "run 3"
	expect_not_contains "$ERR" "mine.git" "the person's bare repository"
	[ -x "$P/q2/mine.git/hooks/pre-receive" ] || fail "host: the person's bare repository's hook was touched"
	# the attack on it: a hook added to the person's bare repository (a push to it runs it):
	# its hooks are read-only, as a .git's are (git_bare_repo_held)
	run_sbx -c "$T/p" -- sh -c "(printf '#!/bin/sh\n$pay\n' > mine.git/hooks/post-receive) 2>/dev/null && echo WROTE; echo DONE"
	expect_rc 0 "run 4"; expect_contains "$OUT" DONE "run 4"
	expect_not_contains "$OUT" WROTE "a hook added to the person's bare repository"
	[ ! -e "$P/q2/mine.git/hooks/post-receive" ] || fail "host: a hook was added to the person's bare repository"
	[ -x "$P/q2/mine.git/hooks/pre-receive" ] || fail "host: the person's own hook was touched"
}
TESTS+=(git_bare_repo_pointed_at_later)

# The entries of an existing repository through which git runs code, when they are missing:
# held before the run (an empty placeholder, read-only), not cleaned up after it, so the audit
# has nothing to neutralise. Each attack writes real content; the person's git runs outside
# afterwards, with extensions.worktreeConfig switched on as `git sparse-checkout init` does.
git_attack_writes() { # git_attack_writes FILE... : a shell snippet writing an fsmonitor config to each FILE
	local f
	for f in "$@"; do
		printf '(printf "[core]\\n\\tfsmonitor = %%s\\n" "$PAY" > %s) 2>/dev/null && echo "WROTE %s"; ' "$f" "$f"
		printf 'mv -f "$EVIL/config" %s 2>/dev/null && echo "RENAMED ONTO %s"; cp "$EVIL/config.keep" "$EVIL/config"; ' "$f" "$f"
	done
}
t_git_missing_entries_held() { # config.worktree, commondir in submodule and nested repositories, worktrees/*/config.worktree: held before the run; git works inside and out
	git_env
	local pay; pay=$(git_payload held)
	git_project "$P"
	git -C "$P" worktree add -q "$O/wt" -b wtb 2>/dev/null || fail "setup: worktree add"
	mkdir -p "$P/.git/modules"; git init -q --separate-git-dir "$P/.git/modules/sub" "$T/subwt" >/dev/null || fail "setup: modules/sub"
	git -C "$T/subwt" commit -q --allow-empty -m sub || fail "setup: a commit in the submodule"
	git_project "$P/nested"
	# a common directory the command would point a commondir at: a config that runs the payload
	mkdir -p "$P/evil/hooks"; printf '[core]\n\tfsmonitor = %s\n' "$pay" >"$P/evil/config"
	cp "$P/evil/config" "$P/evil/config.keep"
	printf '.git/\nnested/\nevil/\n' >"$P/.git/info/exclude"
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- sh -c "PAY=$pay EVIL=$P/evil; $(git_attack_writes "$P/.git/config.worktree" \
		"$P/.git/worktrees/wt/config.worktree" "$P/.git/modules/sub/config.worktree" \
		"$P/nested/.git/config.worktree")
		(echo ../../../evil > $P/.git/modules/sub/commondir) 2>/dev/null && echo 'WROTE modules/sub/commondir'
		(echo ../../evil > $P/nested/.git/commondir) 2>/dev/null && echo 'WROTE nested/.git/commondir'
		# control: git works inside, with the placeholders in place
		git status --short >/dev/null && git commit -q --allow-empty -m inside && echo TOP-OK
		git -C nested status --short >/dev/null && git -C nested commit -q --allow-empty -m inside && echo NESTED-OK
		git -C $T/subwt status --short >/dev/null && echo SUB-OK
		git -C $O/wt status --short >/dev/null && echo WT-OK
		cat .git/config.worktree .git/modules/sub/commondir; echo CAT-OK"
	expect_rc 0 "the attacks and git inside"
	expect_not_contains "$OUT" WROTE "a write of a held entry"
	expect_not_contains "$OUT" RENAMED "a rename onto a held entry"
	for w in TOP-OK NESTED-OK SUB-OK WT-OK CAT-OK; do expect_contains "$OUT" "$w" "git inside ($w)"; done
	expect_not_contains "$ERR" neutralised "the audit (nothing was created to clean up)"
	for f in .git/config.worktree .git/worktrees/wt/config.worktree .git/modules/sub/config.worktree \
		.git/modules/sub/commondir nested/.git/config.worktree nested/.git/commondir; do
		[ ! -e "$P/$f" ] || fail "host: $f left behind after the run"
	done
	# the person's git outside, afterwards, with config.worktree switched on
	git -C "$P" config extensions.worktreeConfig true; git -C "$P/nested" config extensions.worktreeConfig true
	git -C "$T/subwt" config extensions.worktreeConfig true
	git_outside "$P"; git_outside "$O/wt"; git_outside "$T/subwt"; git_outside "$P/nested"
	expect_no_payload "git outside after the run"
	expect_eq "$(git -C "$P" log -1 --format=%s)" outside "host: the person's commit after the run (control)"
	expect_eq "$(git -C "$P" log -2 --format=%s | tail -1)" inside "host: the commit made inside (control)"
}
TESTS+=(git_missing_entries_held)

t_git_bare_repo_held() { # the person's bare repository in a root: its hooks, config and missing entries read-only before the run; a push works inside
	git_env
	local pay; pay=$(git_payload barehook)
	git_project "$P"
	git init -q --bare "$P/mine.git" || fail "setup: a bare repository"
	printf '#!/bin/sh\nexit 0\n' >"$P/mine.git/hooks/pre-receive"; chmod +x "$P/mine.git/hooks/pre-receive"
	printf 'mine.git/\n' >"$P/.git/info/exclude"
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- sh -c "
		(printf '#!/bin/sh\n$pay\n' > mine.git/hooks/post-receive) 2>/dev/null && echo 'WROTE hooks/post-receive'
		(printf '[core]\n\thooksPath = $O\n' >> mine.git/config) 2>/dev/null && echo 'WROTE config'
		(printf '[core]\n\thooksPath = $O\n' > mine.git/config.worktree) 2>/dev/null && echo 'WROTE config.worktree'
		(echo ../evil > mine.git/commondir) 2>/dev/null && echo 'WROTE commondir'
		git push -q ./mine.git HEAD:refs/heads/inside && echo PUSH-OK"
	expect_rc 0 "the attacks and a push inside"
	expect_not_contains "$OUT" WROTE "a write into the bare repository's hooks, config or missing entries"
	expect_contains "$OUT" PUSH-OK "a push into the bare repository inside (control)"
	expect_not_contains "$ERR" neutralised "the audit (nothing was created to clean up)"
	[ ! -e "$P/mine.git/config.worktree" ] && [ ! -e "$P/mine.git/commondir" ] || fail "host: a placeholder left behind"
	# the person's push, outside, afterwards: runs the hooks the repository had, and nothing else
	git -C "$P" config extensions.worktreeConfig true
	git -C "$P" push -q ./mine.git HEAD:refs/heads/outside >/dev/null 2>&1 || fail "the person's push outside"
	expect_no_payload "a push into the bare repository outside, after the run"
	expect_eq "$(git -C "$P/mine.git" rev-parse -q --verify refs/heads/inside)" "$(git -C "$P" rev-parse HEAD)" \
		"host: the push made inside (control)"
}
TESTS+=(git_bare_repo_held)

t_git_stopped_merge_strategy() { # a rebase or cherry-pick left stopped naming its merge strategy as a path: the person's --continue runs nothing
	git_env
	local pay; pay=$(git_payload strategy)
	git_project "$P"
	git -C "$P" checkout -q -b side
	echo s >"$P/file.txt"; git -C "$P" commit -qam s
	git -C "$P" checkout -q -b other HEAD~1
	echo o >"$P/file.txt"; git -C "$P" commit -qam o1
	echo o2 >"$P/o2.txt"; git -C "$P" add o2.txt; git -C "$P" commit -qm o2
	git -C "$P" checkout -q -b work HEAD~2
	echo two >"$P/two.txt"; git -C "$P" add two.txt; git -C "$P" commit -qm two
	printf 'git-merge-../\n' >"$P/.git/info/exclude"
	# the payload where git runs it: "git-merge-" + "../x" is the path git-merge-../x, from the top
	local setup="mkdir -p git-merge-..; printf '#!/bin/sh\\n$pay\\nexit 1\\n' > git-merge-../x; chmod +x git-merge-../x"
	printf '#!/bin/sh\nsed -i "1i break" "$1"\n' >"$T/seqed.sh"; chmod +x "$T/seqed.sh"
	policy p <<<"allow-write ."
	# a rebase of work onto side, stopped at once, its strategy file naming the payload
	run_sbx -c "$T/p" -- sh -c "$setup; GIT_SEQUENCE_EDITOR=$T/seqed.sh git rebase -q -i side
		echo ../x > .git/rebase-merge/strategy; echo STOPPED"
	expect_rc 0; expect_contains "$OUT" STOPPED "the rebase inside"
	[ -d "$P/.git/rebase-merge" ] || fail "setup: no rebase left in progress"
	[ -x "$P/git-merge-../x" ] || fail "setup: no payload where git would run it"
	expect_contains "$ERR" "neutralised $P/.git/rebase-merge/strategy" "the report"
	git -C "$P" -c core.editor=true rebase --continue >/dev/null 2>&1
	expect_no_payload "git rebase --continue outside"
	[ ! -d "$P/.git/rebase-merge" ] || fail "control: the rebase did not finish with git's own strategy"
	expect_eq "$(git -C "$P" log --format=%s | tr '\n' ' ')" "two s one " "control: the rebased branch"
	# a cherry-pick of two commits, stopped on a conflict at the first, its options naming the payload
	run_sbx -c "$T/p" -- sh -c "git cherry-pick side..other >/dev/null 2>&1
		git config -f .git/sequencer/opts options.strategy ../x; echo STOPPED"
	expect_rc 0; expect_contains "$OUT" STOPPED "the cherry-pick inside"
	[ -f "$P/.git/sequencer/todo" ] || fail "setup: no cherry-pick left in progress"
	expect_contains "$ERR" "neutralised $P/.git/sequencer/opts" "the report"
	echo resolved >"$P/file.txt"; git -C "$P" add file.txt
	git -C "$P" -c core.editor=true cherry-pick --continue >/dev/null 2>&1
	expect_no_payload "git cherry-pick --continue outside"
	expect_eq "$(git -C "$P" log -1 --format=%s)" o2 "control: the cherry-pick finished"
	# control: a stopped rebase naming one of git's own strategies is left as it is
	run_sbx -c "$T/p" -- sh -c "GIT_SEQUENCE_EDITOR=$T/seqed.sh git rebase -q -i -s ort HEAD~1; echo STOPPED"
	expect_rc 0; expect_contains "$OUT" STOPPED "the third rebase inside"
	expect_not_contains "$ERR" neutralised "a rebase with git's own strategy"
	git -C "$P" rebase --abort >/dev/null 2>&1
}
TESTS+=(git_stopped_merge_strategy)

# ---------------------------------------------------------------- the audit's attribution
# The audit acts only on what the sandbox's own processes made (sbx.c 9b): a repository the
# person makes from their own shell while a run or a session lasts is left as it is, and said.
# The command cannot hide its own hook by racing the path it names, by renaming or linking it
# in, or through a symlink: sbx then either sees where it went, or says it cannot tell, and
# acts. Each test has the person's repository made outside during the run as its control.

attrib_usable() { # the observer is what attributes: where the kernel lacks it, sbx acts on all
	grep -q user_notif /proc/sys/kernel/seccomp/actions_avail 2>/dev/null ||
		skip "this kernel has no seccomp user notification (the write observer)"
}
# attrib_bg POLICY CMD: the sandboxed CMD runs once the person is done ($O/go); "ready" first
attrib_bg() {
	rm -f "$O/go" "$T/bg.out" "$T/bg.out.err"	# else the last run's "ready" may be read before the shell truncates it
	start_bg "$T/bg.out" -c "$T/$1" -- sh -c "echo ready; while [ ! -e '$O/go' ]; do sleep 0.05; done; $2"
	wait_file_has "$T/bg.out" ready 20 || { kill -KILL "$BGPID"; fail "the command never became ready: $(cat "$T/bg.out.err")"; }
}
attrib_wait() { # the run ends: its stderr in ERR
	touch "$O/go"
	wait_pid "$BGPID" 60 || fail "the run did not end"
	ERR=$(cat "$T/bg.out.err"); OUT=$(cat "$T/bg.out")
	log_file err "$T/bg.out.err"
}
# person_repo DIR: the person's own repository, hook and settings, made outside the sandbox
person_repo() {
	git init -q "$1" || fail "setup: git init $1"
	printf '#!/bin/sh\nexit 0\n' >"$1/.git/hooks/pre-commit"; chmod +x "$1/.git/hooks/pre-commit"
	git -C "$1" config core.fsmonitor "$O/person-fsmonitor.sh"
	git -C "$1" config core.hooksPath .githooks; mkdir -p "$1/.githooks"
}
expect_person_settings_kept() { # expect_person_settings_kept DIR WHAT: as person_repo made them, nothing neutralised
	[ -x "$1/.git/hooks/pre-commit" ] || fail "$2: the person's hook was renamed"
	expect_eq "$(git -C "$1" config core.fsmonitor)" "$O/person-fsmonitor.sh" "$2: the person's core.fsmonitor"
	expect_eq "$(git -C "$1" config core.hooksPath)" .githooks "$2: the person's core.hooksPath"
	expect_not_contains "$ERR" "neutralised $1/" "$2: nothing of the person's neutralised"
}
expect_person_repo_kept() { # expect_person_repo_kept DIR WHAT: kept, and said
	expect_person_settings_kept "$1" "$2"
	expect_contains "$ERR" "left $1/.git/hooks/pre-commit as it is: made outside the sandbox during the run" "$2: the report"
	expect_contains "$ERR" "left $1/.git/config as it is" "$2: the report of the config"
}
expect_neutralised() { # expect_neutralised PATH WHY WHAT : renamed, reported with why and the mv that restores it
	[ ! -e "$1" ] && [ -e "$1.sbx-disabled" ] || fail "$3: $1 is not renamed $1.sbx-disabled"
	expect_contains "$ERR" "neutralised $1: " "$3: the report"
	grep -F "neutralised $1: " <<<"$ERR" | grep -qF "$2" || fail "$3: the report does not say '$2': $(grep -F "$1" <<<"$ERR")"
	grep -F "neutralised $1: " <<<"$ERR" | grep -qF "restore: mv $1.sbx-disabled $1" || fail "$3: no restore command"
}

t_git_audit_person_repo_left() { # with a dir writable, the person's git init + hook + hooksPath/fsmonitor from their own shell during a run: left, and said; the sandbox's own in another repo: neutralised, with the mv that restores it
	attrib_usable
	git_env
	local pay; pay=$(git_payload attrib)
	policy p <<<"allow-write ."
	attrib_bg p "git init -q theirs && printf '#!/bin/sh\n$pay\n' >theirs/.git/hooks/pre-commit &&
		chmod +x theirs/.git/hooks/pre-commit && git -C theirs config core.fsmonitor $pay && echo x >notes.txt"
	person_repo "$P/mine"
	attrib_wait
	[ "$WRC" = 0 ] || fail "the run: exit $WRC"
	expect_person_repo_kept "$P/mine" "the person's repository"
	expect_neutralised "$P/theirs/.git/hooks/pre-commit" "made in the sandbox" "control: the sandbox's hook"
	expect_contains "$ERR" "neutralised $P/theirs/.git/config: removed core.fsmonitor" "control: the sandbox's fsmonitor"
	git_outside "$P/theirs"
	expect_no_payload "git outside in the sandbox's repository"
	# the restore command does restore it
	eval "$(grep -F "neutralised $P/theirs/.git/hooks/pre-commit: " <<<"$ERR" | sed 's/.*restore: //')"
	[ -x "$P/theirs/.git/hooks/pre-commit" ] || fail "the restore command did not put the hook back"
}
TESTS+=(git_audit_person_repo_left)

t_git_audit_person_repo_session() { # in a session: the person's git init + hook during it survive session stop; the sandbox's are neutralised and stop shows the mv that restores them; the next exec shows them too
	attrib_usable
	git_env
	local pay sess=attr-$$-$RANDOM; pay=$(git_payload sess)
	policy s <<<"allow-write $P"
	timeout -k 5 "$TMO" "$SBX" session start -c "$T/s" --name "$sess" >/dev/null 2>"$T/start.err" ||
		fail "session start: $(cat "$T/start.err")"
	trap "timeout 10 $(printf %q "$SBX") session stop $(printf %q "$sess") >/dev/null 2>&1" EXIT
	timeout -k 5 "$TMO" "$SBX" exec "$sess" -- sh -c "git init -q theirs && printf '#!/bin/sh\n$pay\n' \
		>theirs/.git/hooks/post-checkout && chmod +x theirs/.git/hooks/post-checkout" || fail "exec 1"
	person_repo "$P/mine"
	timeout -k 5 "$TMO" "$SBX" exec "$sess" -- sh -c 'echo edit >>notes.txt; git -C mine status --short >/dev/null' ||
		fail "exec 2 (the agent works beside the person's repository)"
	timeout -k 5 "$TMO" "$SBX" session stop "$sess" >"$T/stop.out" 2>"$T/stop.err" || fail "session stop"
	trap - EXIT
	ERR=$(cat "$T/stop.err"); log_file stop "$T/stop.err"
	expect_person_repo_kept "$P/mine" "session stop"
	expect_neutralised "$P/theirs/.git/hooks/post-checkout" "made in the sandbox" "control: the sandbox's hook at stop"
	# the next exec (in another session here) says what the ended one's audit did
	timeout -k 5 "$TMO" "$SBX" session start -c "$T/s" --name "$sess-2" >/dev/null 2>"$T/start.err" ||
		fail "session 2 start: $(cat "$T/start.err")"
	trap "timeout 10 $(printf %q "$SBX") session stop $(printf %q "$sess-2") >/dev/null 2>&1" EXIT
	timeout -k 5 "$TMO" "$SBX" exec "$sess-2" -- true 2>"$T/next.err" || fail "the next exec"
	ERR=$(cat "$T/next.err"); log_file next "$T/next.err"
	expect_contains "$ERR" "session $sess ended at" "the next exec: which session"
	expect_contains "$ERR" "neutralised $P/theirs/.git/hooks/post-checkout: " "the next exec: what was neutralised"
	expect_contains "$ERR" "restore: mv $P/theirs/.git/hooks/post-checkout.sbx-disabled" "the next exec: the restore command"
	expect_contains "$ERR" "left $P/mine/.git/hooks/pre-commit as it is" "the next exec: what was left"
	timeout -k 5 "$TMO" "$SBX" exec "$sess-2" -- true 2>"$T/next2.err" || fail "the exec after"
	expect_not_contains "$(cat "$T/next2.err")" "ended at" "shown once"
	timeout 10 "$SBX" session stop "$sess-2" >/dev/null 2>&1; trap - EXIT
	git_outside "$P/theirs"; git -C "$P/theirs" checkout -q -b x 2>/dev/null
	expect_no_payload "git outside after the session"
}
TESTS+=(git_audit_person_repo_session)

t_git_audit_attack_race() { # the command races the path it opens (a second thread; a process writing a shared page) so the observer reads another than the kernel: sbx says it cannot tell, and acts on the person's repository too; control: a quiet run leaves it
	attrib_usable
	git_env
	local d; d=$(mktemp -d /tmp/sbx-race.XXXXXX)
	cc -O2 -pthread -o "$d/racepath" "$HERE/tests/helpers/racepath.c" 2>"$d/cc.err" ||
		{ rm -rf "$d"; skip "the helper did not build: $(head -c 200 "$d/cc.err")"; }
	cp "$d/racepath" "$O/racepath"; rm -rf "$d"
	policy p <<<"allow-write ."
	# control: a run that makes nothing of the kind leaves the person's repository
	attrib_bg p "echo x >notes.txt"
	person_repo "$P/quiet"
	attrib_wait
	expect_person_repo_kept "$P/quiet" "control: a quiet run"
	local mode why
	for mode in threads shared; do
		case $mode in
		threads) why="a process with several threads wrote" ;;
		shared) why="a path was read from memory another process could change" ;;
		esac
		# DECOY and REAL the same length: mind-M and mine-M
		attrib_bg p "'$O/racepath' $mode '$P/mind-$mode/.git/hooks/pre-commit' '$P/mine-$mode/.git/hooks/pre-commit' \
			'#!/bin/sh
touch $O/PWNED-race-$mode'"
		git init -q "$P/mind-$mode"; person_repo "$P/mine-$mode"
		printf '#!/bin/sh\nexit 0\n' >"$P/mine-$mode/.git/hooks/pre-push"; chmod +x "$P/mine-$mode/.git/hooks/pre-push"
		attrib_wait
		note "$mode: $OUT"
		expect_neutralised "$P/mine-$mode/.git/hooks/pre-push" "sbx cannot tell who made it: $why" \
			"$mode: the person's hook, beside the one the race aimed at"
		if [[ $OUT == landed* ]]; then
			expect_neutralised "$P/mine-$mode/.git/hooks/pre-commit" "sbx cannot tell who made it" "$mode: the raced hook"
		fi
		git_outside "$P/mine-$mode"
	done
	expect_no_payload "git outside after the races"
}
TESTS+=(git_audit_attack_race)

t_git_audit_attack_moves() { # the command puts its hook into the person's repository made during the run without writing it there: renamed in, hard-linked, through a symlink an earlier run left, through one it makes, a prepared repository renamed into place inside it, a script the person's husky hooksPath runs: each neutralised; control: a quiet run leaves the person's
	attrib_usable
	git_env
	local pay; pay=$(git_payload moves)
	policy p <<<"allow-write ."
	# an earlier run prepares: hook files outside any repository, a symlink to where the person
	# will make a repository, and a repository's directory that is none yet (no HEAD), its hook in
	run_sbx -c "$T/p" -- sh -ec "mkdir stash; for h in a b c; do printf '#!/bin/sh\n$pay\n' >stash/\$h; done
		chmod +x stash/*; ln -s '$P/mine-link' link; mkdir -p kit/hooks kit/objects kit/refs
		cp stash/a kit/hooks/pre-commit"
	expect_rc 0 "the preparing run"
	attrib_bg p "echo x >notes.txt"
	person_repo "$P/quiet"
	attrib_wait
	expect_person_repo_kept "$P/quiet" "control: a quiet run"
	local how cmd hook why
	for how in rename hardlink oldlink newlink repo named; do
		hook=$P/mine-$how/.git/hooks/post-checkout
		case $how in
		rename) cmd="mv stash/a '$hook'"; why="made in the sandbox" ;;
		hardlink) cmd="ln stash/b '$hook'"; why="made in the sandbox" ;;
		oldlink) cmd="cp stash/c link/.git/hooks/post-checkout"; why="made in the sandbox"
			hook=$P/mine-link/.git/hooks/post-checkout ;;
		newlink) cmd="ln -s mine-$how new-$how && cp stash/c new-$how/.git/hooks/post-checkout"
			why="sbx cannot tell who made it: the command made a symlink" ;;
		repo) cmd="mkdir mine-$how/sub && echo 'ref: refs/heads/main' >kit/HEAD && mv kit mine-$how/sub/.git"
			why="sbx cannot tell who made it: the command moved a directory or a symlink"
			hook=$P/mine-$how/sub/.git/hooks/pre-commit ;;
		named)	# husky's layout, made by the person (npx husky init): .husky/_ runs .husky/<hook>
			cmd="mkdir -p mine-$how/.husky && cp stash/c mine-$how/.husky/pre-commit" ;;
		esac
		attrib_bg p "$cmd"
		if [ "$how" = oldlink ]; then person_repo "$P/mine-link"; else person_repo "$P/mine-$how"; fi
		[ "$how" != named ] || git -C "$P/mine-$how" config core.hooksPath .husky/_
		attrib_wait
		[ "$WRC" = 0 ] || fail "$how: the command failed: $ERR"
		if [ "$how" = named ]; then	# the person's config names what the sandbox wrote: rewritten
			[ -e "$P/mine-$how/.git/config.sbx-disabled" ] && [ -z "$(git -C "$P/mine-$how" config core.hooksPath)" ] ||
				fail "named: the person's core.hooksPath, naming the sandbox's script, was left"
			grep -F "neutralised $P/mine-$how/.git/config: removed core.hookspath" <<<"$ERR" |
				grep -qF "it names what the sandbox wrote" || fail "named: the report"
			git_outside "$P/mine-$how"
			continue
		fi
		expect_neutralised "$hook" "$why" "$how"
		git_outside "$(dirname "$(dirname "$(dirname "$hook")")")"
	done
	expect_no_payload "git outside after the moves"
}
TESTS+=(git_audit_attack_moves)

t_git_audit_attack_narrow() { # the sandbox writes a hook and a hooks directory's script, and the person, during the run, moves the hook into a repository of theirs and points another's core.hooksPath at the script, in directories the sandbox named no path in: both neutralised (audit_acts goes by the file and by what a config names, not only by where the sandbox named paths); control: the same in a directory it named
	attrib_usable
	git_env
	local pay w; pay=$(git_payload narrow)
	mkdir -p "$P/deep/a" "$P/deep/b" "$P/near/a" "$P/near/b"
	policy p <<<"allow-write ."
	rm -f "$O/go"
	start_bg "$T/bg.out" -c "$T/p" -- sh -c "mkdir stash shared && printf '#!/bin/sh\n$pay\n' >stash/h &&
		cp stash/h stash/n && cp stash/h shared/pre-commit && chmod +x stash/* shared/pre-commit &&
		echo x >near/a/notes && echo x >near/b/notes && echo ready; while [ ! -e '$O/go' ]; do sleep 0.05; done"
	wait_file_has "$T/bg.out" ready 20 || { kill -KILL "$BGPID"; fail "the command never became ready: $(cat "$T/bg.out.err")"; }
	for w in deep near; do	# the person's, in their shell, while the command runs
		git init -q "$P/$w/a/r" && git init -q "$P/$w/b/r" || fail "setup: git init in $w"
		mv "$P/stash/$([ $w = deep ] && echo h || echo n)" "$P/$w/a/r/.git/hooks/pre-commit"
		printf '#!/bin/sh\nexit 0\n' >"$P/$w/a/r/.git/hooks/pre-push"; chmod +x "$P/$w/a/r/.git/hooks/pre-push"
		git -C "$P/$w/b/r" config core.hooksPath "$P/shared"
	done
	attrib_wait
	[ "$WRC" = 0 ] || fail "the run: exit $WRC"
	for w in near deep; do	# near: the control (the sandbox named a path in near/a, near/b)
		expect_neutralised "$P/$w/a/r/.git/hooks/pre-commit" "made in the sandbox" "$w: the sandbox's hook the person moved in"
		[ -x "$P/$w/a/r/.git/hooks/pre-push" ] || fail "$w: the person's own hook was renamed"
		[ -z "$(git -C "$P/$w/b/r" config core.hooksPath)" ] ||
			fail "$w: the person's core.hooksPath naming the sandbox's script was left"
		grep -F "neutralised $P/$w/b/r/.git/config: removed core.hookspath" <<<"$ERR" |
			grep -qF "it names what the sandbox wrote" || fail "$w: the report of the config"
		git_outside "$P/$w/a/r"; git_outside "$P/$w/b/r"
	done
	expect_no_payload "git outside in the person's repositories"
}
TESTS+=(git_audit_attack_narrow)

t_git_audit_attack_completed_in_place() { # a gitdir prepared without HEAD in one run (no repository yet: nothing to audit) is completed in place by HEAD in the next, and reached by a .git file in a third: its hook and config are neutralised when it becomes a repository; control: the same completed by a rename into place
	attrib_usable
	git_env
	local pay k; pay=$(git_payload completed)
	policy p <<<"allow-write ."
	for k in kit kat; do
		run_sbx -c "$T/p" -- sh -ec "mkdir -p $k/hooks $k/objects $k/refs
			printf '#!/bin/sh\n$pay\n' >$k/hooks/pre-commit; chmod +x $k/hooks/pre-commit
			printf '[core]\n\tfsmonitor = $pay\n' >$k/config"
		expect_rc 0 "$k: the preparing run"
	done
	sleep 0.1	# what they made older than the next run's start (which counts from 20 ms before)
	for k in moved/kat kit; do	# moved/kat: the control, its run unsure (a directory moved)
		if [ $k = kit ]; then
			run_sbx -c "$T/p" -- sh -ec "echo 'ref: refs/heads/main' >kit/HEAD"
		else
			run_sbx -c "$T/p" -- sh -ec "echo 'ref: refs/heads/main' >kat/HEAD; mkdir moved; mv kat moved/kat"
		fi
		expect_rc 0 "$k: the completing run"
		expect_contains "$ERR" "neutralised $P/$k/hooks/pre-commit" "$k: the hook of a gitdir completed in the run"
		expect_contains "$ERR" "neutralised $P/$k/config: removed core.fsmonitor" "$k: its config"
	done
	expect_contains "$ERR" "made in the sandbox" "kit: the sandbox's, by the HEAD it wrote"
	run_sbx -c "$T/p" -- sh -ec "mkdir -p w v; echo 'gitdir: $P/kit' >w/.git; echo 'gitdir: $P/moved/kat' >v/.git"
	expect_rc 0 "the pointing run"
	git_outside "$P/w"; git_outside "$P/v"; git -C "$P/kit" status >/dev/null 2>&1
	expect_no_payload "git outside through the completed gitdirs"
}
TESTS+=(git_audit_attack_completed_in_place)

t_git_audit_attack_replaced_gitdir() { # a gitdir prepared without HEAD in one run replaces, in the next, the .git of the person's deep repository (renamed away): its hook and config are neutralised, though the path was a repository before; control: the same prepared gitdir moved to a new place
	attrib_usable
	git_env
	local pay k; pay=$(git_payload replaced)
	policy p <<<"allow-write ."
	person_repo "$P/a/b/c/d/r"; person_repo "$P/a/b/c/d/s"
	run_sbx -c "$T/p" -- sh -ec "for k in kit kat; do mkdir -p \$k/hooks \$k/objects \$k/refs
			printf '#!/bin/sh\n$pay\n' >\$k/hooks/post-checkout; chmod +x \$k/hooks/post-checkout
			printf '[core]\n\tfsmonitor = $pay\n' >\$k/config; done"
	expect_rc 0 "the preparing run"
	sleep 0.1	# what it made older than the next run's start (which counts from 20 ms before)
	run_sbx -c "$T/p" -- sh -ec "echo 'ref: refs/heads/main' >kit/HEAD; echo 'ref: refs/heads/main' >kat/HEAD
		mv a/b/c/d/r/.git a/b/c/d/r/was; mv kit a/b/c/d/r/.git; mkdir a/b/c/d/t; mv kat a/b/c/d/t/.git"
	expect_rc 0 "the replacing run"
	for k in t r; do	# t: the control
		expect_contains "$ERR" "neutralised $P/a/b/c/d/$k/.git/hooks/post-checkout" "$k: the prepared gitdir's hook"
		expect_contains "$ERR" "neutralised $P/a/b/c/d/$k/.git/config: removed core.fsmonitor" "$k: its config"
		git_outside "$P/a/b/c/d/$k"; git -C "$P/a/b/c/d/$k" checkout -q -b x >/dev/null 2>&1
	done
	expect_no_payload "git outside in the repositories the prepared gitdirs became"
}
TESTS+=(git_audit_attack_replaced_gitdir)

t_git_audit_attack_replaced_gitdir_killed() { # the same replacement in a run killed before its audit: the next run's recovery neutralises the prepared gitdir's hook and config where the person's .git was; control: the person's repository left alone by a killed run keeps its hook
	attrib_usable
	git_env
	local pay; pay=$(git_payload replaced-killed)
	policy p <<<"allow-write ."
	person_repo "$P/a/b/c/d/r"; person_repo "$P/a/b/c/d/s"
	run_sbx -c "$T/p" -- sh -ec "mkdir -p kit/hooks kit/objects kit/refs
		printf '#!/bin/sh\n$pay\n' >kit/hooks/post-checkout; chmod +x kit/hooks/post-checkout
		printf '[core]\n\tfsmonitor = $pay\n' >kit/config"
	expect_rc 0 "the preparing run"
	sleep 0.1	# what it made older than the next run's start (which counts from 20 ms before)
	start_bg "$T/k.out" -c "$T/p" -- sh -c "echo 'ref: refs/heads/main' >kit/HEAD &&
		mv a/b/c/d/r/.git a/b/c/d/r/was && mv kit a/b/c/d/r/.git && echo ready; sleep 60"
	wait_file_has "$T/k.out" ready 20 || { kill -KILL "$BGPID"; fail "the run never became ready: $(cat "$T/k.out.err")"; }
	kill -KILL "$BGPID"; wait_pid "$BGPID" 20
	run_sbx -c "$T/p" -- true	# finds the killed run's record
	expect_rc 0 "the next run"
	expect_contains "$ERR" "neutralised $P/a/b/c/d/r/.git/hooks/post-checkout" "the prepared gitdir's hook"
	expect_contains "$ERR" "neutralised $P/a/b/c/d/r/.git/config: removed core.fsmonitor" "its config"
	[ -x "$P/a/b/c/d/s/.git/hooks/pre-commit" ] || fail "control: the person's other repository's hook was renamed"
	git_outside "$P/a/b/c/d/r"; git -C "$P/a/b/c/d/r" checkout -q -b x >/dev/null 2>&1
	expect_no_payload "git outside in the repository the prepared gitdir became"
}
TESTS+=(git_audit_attack_replaced_gitdir_killed)

t_git_audit_left_when_sbx_exits_early() { # sbx exits on an error after the command started, before bwrap is reaped (the sandbox may still run: --die-with-parent ends it only after): no audit then, which could come before its last change; the run's record is kept, and the next run audits for it; control: a run that ends as it should leaves no record behind
	need_private_places
	command -v strace >/dev/null || skip "strace is not installed (it fails sbx's signalfd, made once the command has started)"
	git_env
	policy p <<<"allow-write ."
	printf '$ strace -e inject=signalfd4:error=EMFILE sbx -c %s -- sleep 5\n' "$T/p"
	timeout -k 5 "$TMO" strace -o /dev/null -e trace=signalfd4 -e inject=signalfd4:error=EMFILE:when=1 \
		"$SBX" -c "$T/p" -- sleep 5 >"$T/.stdout" 2>"$T/.stderr"
	RC=$?; ERR=$(cat "$T/.stderr"); echo "  [exit $RC]"; log_file err "$T/.stderr"
	expect_rc 125 "sbx failing after the command started"
	expect_contains "$ERR" "signalfd" "the error that ended sbx"
	expect_contains "$ERR" "the audit of repositories it made is left to the next sbx run" "said"
	local recs; recs=$(ls -d /dev/shm/sbx-"$(id -u)"/run-*/repos 2>/dev/null | wc -l)
	[ "$recs" -ge 1 ] || fail "the run's record was removed: the next run would audit nothing of it"
	run_sbx -v -c "$T/p" -- true
	expect_rc 0 "the next run"
	expect_contains "$ERR" "cleaning up after an earlier run that did not finish" "the next run audits for it"
	[ "$(ls -d /dev/shm/sbx-"$(id -u)"/run-*/repos 2>/dev/null | wc -l)" = 0 ] ||
		fail "control: a run that ended as it should left a record behind"
}
TESTS+=(git_audit_left_when_sbx_exits_early)

t_git_audit_observer_off() { # observe-writes off, or a way to write the observer cannot see (allow-all-unix-sockets: io_uring, daemons): sbx cannot tell who made what, so it acts on the person's repository too, says why, and gives the mv that restores it; control: the same run observed leaves it
	attrib_usable
	git_env
	local pay; pay=$(git_payload off)
	policy on <<<"allow-write ."
	printf 'allow-write .\nobserve-writes off\n' >"$T/off"
	printf 'allow-write .\nallow-all-unix-sockets\n' >"$T/unix"
	attrib_bg on "echo x >notes.txt"
	person_repo "$P/observed"
	attrib_wait
	expect_person_repo_kept "$P/observed" "control: observed"
	local pol why
	for pol in off unix; do
		case $pol in
		off) why="observe-writes is off" ;;
		unix) why="allow-all-unix-sockets lets the command write through io_uring or a daemon, unseen" ;;
		esac
		attrib_bg $pol "git init -q theirs-$pol && printf '#!/bin/sh\n$pay\n' >theirs-$pol/.git/hooks/pre-commit &&
			chmod +x theirs-$pol/.git/hooks/pre-commit"
		person_repo "$P/mine-$pol"
		attrib_wait
		expect_neutralised "$P/theirs-$pol/.git/hooks/pre-commit" "sbx cannot tell who made it: $why" "$pol: the sandbox's hook"
		expect_neutralised "$P/mine-$pol/.git/hooks/pre-commit" "sbx cannot tell who made it: $why" "$pol: the person's hook"
		git_outside "$P/theirs-$pol"
	done
	expect_no_payload "git outside"
}
TESTS+=(git_audit_observer_off)

t_git_audit_person_moves_sandbox_repo() { # the sandbox makes a repository with a hook; the person renames its directory during the run: still the sandbox's (the file it wrote), neutralised; control: the person's own beside it left
	attrib_usable
	git_env
	local pay; pay=$(git_payload moved)
	policy p <<<"allow-write ."
	rm -f "$O/go" "$T/bg.out"
	start_bg "$T/bg.out" -c "$T/p" -- sh -c "mkdir scratch && git init -q scratch/tool &&
		printf '#!/bin/sh\n$pay\n' >scratch/tool/.git/hooks/post-checkout && chmod +x scratch/tool/.git/hooks/post-checkout &&
		echo made; while [ ! -e '$O/go' ]; do sleep 0.05; done"
	wait_file_has "$T/bg.out" made 20 || { kill -KILL "$BGPID"; fail "the command never made its repository: $(cat "$T/bg.out.err")"; }
	mv "$P/scratch/tool" "$P/tool"	# the person's own mv, outside
	person_repo "$P/mine"
	attrib_wait
	expect_neutralised "$P/tool/.git/hooks/post-checkout" "made in the sandbox" "the sandbox's hook, moved by the person"
	expect_person_repo_kept "$P/mine" "control: the person's repository"
	git_outside "$P/tool"; git -C "$P/tool" checkout -q -b x 2>/dev/null
	expect_no_payload "git outside in the moved repository"
}
TESTS+=(git_audit_person_moves_sandbox_repo)

t_git_ssh_command_any_case() { # core.sshCommand written inside a run, in any case git reads (sshCommand, SSHCOMMAND, SshCoMmAnD), does not survive: a later git fetch outside runs nothing; control: the same config made outside does run it, and the rest of each config stays
	git_env
	local pay ctl r; pay=$(git_payload ssh); ctl=$(git_payload ctl)
	# control: a repository made outside with that key, fetched: the payload runs (the fetch is an attack)
	git init -q "$O/ctl" && git -C "$O/ctl" config core.sshCommand "$ctl" &&
		git -C "$O/ctl" remote add origin ssh://git@host.invalid/x.git || fail "setup: the control repository"
	git -C "$O/ctl" fetch -q origin >/dev/null 2>&1
	[ -e "$O/PWNED-ctl" ] || fail "control: git fetch did not run core.sshCommand"
	rm -f "$O/PWNED-ctl"
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- sh -ec "
		git init -q git-wrote; git -C git-wrote config core.sshCommand '$pay'
		git init -q upper; printf '[CORE]\n\tSSHCOMMAND = %s\n' '$pay' >>upper/.git/config
		git init -q mixed; printf '[Core]\n\tSshCoMmAnD = %s\n' '$pay' >>mixed/.git/config
		for r in git-wrote upper mixed; do git -C \$r config user.name keep-\$r
			git -C \$r remote add origin ssh://git@host.invalid/x.git; done
		echo DONE"
	expect_rc 0 "the attacks inside"; expect_contains "$OUT" DONE "the attacks inside"
	for r in git-wrote upper mixed; do
		expect_contains "$ERR" "neutralised $P/$r/.git/config" "$r: the config is neutralised"
		git -C "$P/$r" fetch -q origin >/dev/null 2>&1
		expect_eq "$(git -C "$P/$r" config user.name)" "keep-$r" "$r: the rest of the config is kept"
		[ -z "$(git -C "$P/$r" config core.sshcommand)" ] || fail "$r: core.sshCommand is still set"
	done
	expect_no_payload "git fetch outside, after the run"
}
TESTS+=(git_ssh_command_any_case)

t_git_audit_unwritable_dirs() { # as a user (not root: no DAC override), the command leaves .git without its write bit and .git/hooks with search alone (git runs a hook by its name, reads the config, and lists neither): the audit still renames the hook and the config; control: the same repository left writable
	need_private_places
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed to run as a user"
	git_env
	local v=4243 vh=$T/uhome vp=$T/uproj pay hpay
	local AS_V=(setpriv --reuid=$v --regid=$v --clear-groups)
	mkdir -p "$vh" "$vp" && chown $v:$v "$vh" "$vp" "$O" && chmod 700 "$vh" || fail "setup"
	"${AS_V[@]}" bwrap --unshare-user --unshare-net --ro-bind / / --dev /dev --proc /proc true 2>"$T/bw.err" ||
		skip "bwrap cannot make a sandbox as uid $v here: $(head -c 200 "$T/bw.err")"
	pay=$(git_payload ro-config); hpay=$(git_payload ro-hook)
	printf 'allow-write .\n' >"$T/pu"; chmod 644 "$T/pu"
	(cd "$vp" && env -u XDG_RUNTIME_DIR HOME="$vh" timeout 30 "${AS_V[@]}" "$SBX" -c "$T/pu" -- sh -ec "
		for r in ro rw; do
			git init -q \$r; cp '$hpay' \$r/.git/hooks/pre-commit; git -C \$r config core.fsmonitor '$pay'
		done
		chmod 0111 ro/.git/hooks; chmod 0555 ro/.git; echo DONE") >"$T/u.out" 2>"$T/u.err"; RC=$?
	OUT=$(cat "$T/u.out"); ERR=$(cat "$T/u.err"); log_file out "$T/u.out"; log_file err "$T/u.err"
	expect_rc 0 "the user's run"; expect_contains "$OUT" DONE "the user's run"
	expect_contains "$ERR" "neutralised $vp/rw/.git/hooks/pre-commit" "control: the writable repository's hook"
	expect_contains "$ERR" "neutralised $vp/rw/.git/config" "control: the writable repository's config"
	expect_contains "$ERR" "neutralised $vp/ro/.git/hooks/pre-commit" "the hook in a directory left unwritable"
	expect_contains "$ERR" "neutralised $vp/ro/.git/config: removed core.fsmonitor" "the config in a directory left unwritable: rewritten"
	local d
	for d in rw ro; do
		(cd "$vp/$d" && HOME="$vh" "${AS_V[@]}" git -c safe.directory='*' status >/dev/null 2>&1
		 HOME="$vh" "${AS_V[@]}" git -c safe.directory='*' commit -q --allow-empty -m outside >/dev/null 2>&1)
	done
	expect_no_payload "the person's git, as the user, in both repositories"
}
TESTS+=(git_audit_unwritable_dirs)

t_git_audit_person_bits_kept() { # as a user, the command rewrites in place a hook of the person's deep repositories whose .git/hooks the person keeps without its write bit (0555) or with search alone (0111), from before the run: each hook is neutralised and each directory keeps the person's mode; control: a .git/hooks the command itself left 0555 gets its owner's bits back
	need_private_places
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed to run as a user"
	git_env
	local v=4243 vh=$T/uhome vp=$T/uproj pay
	local AS_V=(setpriv --reuid=$v --regid=$v --clear-groups)
	mkdir -p "$vh" "$vp" && chown $v:$v "$vh" "$vp" "$O" && chmod 700 "$vh" || fail "setup"
	"${AS_V[@]}" bwrap --unshare-user --unshare-net --ro-bind / / --dev /dev --proc /proc true 2>"$T/bw.err" ||
		skip "bwrap cannot make a sandbox as uid $v here: $(head -c 200 "$T/bw.err")"
	pay=$(git_payload bits)
	# the person's, before the run, deep (no mount covers it: the audit alone protects it)
	(cd "$vp" && HOME="$vh" "${AS_V[@]}" sh -ec "for r in mine shut; do git init -q a/b/c/d/\$r
		printf '#!/bin/sh\nexit 0\n' >a/b/c/d/\$r/.git/hooks/pre-commit
		chmod 0755 a/b/c/d/\$r/.git/hooks/pre-commit; done
		chmod 0555 a/b/c/d/mine/.git/hooks; chmod 0111 a/b/c/d/shut/.git/hooks") ||
		fail "setup: the person's repository"
	sleep 0.1	# its ctime older than the run's start (which counts from 20 ms before)
	printf 'allow-write .\n' >"$T/pu"; chmod 644 "$T/pu"
	(cd "$vp" && env -u XDG_RUNTIME_DIR HOME="$vh" timeout 30 "${AS_V[@]}" "$SBX" -v -c "$T/pu" -- sh -ec "
		cat '$pay' >a/b/c/d/mine/.git/hooks/pre-commit; cat '$pay' >a/b/c/d/shut/.git/hooks/pre-commit
		git init -q took; cp '$pay' took/.git/hooks/pre-commit; chmod 0555 took/.git/hooks
		echo DONE") >"$T/u.out" 2>"$T/u.err"; RC=$?
	OUT=$(cat "$T/u.out"); ERR=$(cat "$T/u.err"); log_file out "$T/u.out"; log_file err "$T/u.err"
	expect_rc 0 "the user's run"; expect_contains "$OUT" DONE "the user's run"
	expect_contains "$ERR" "neutralised $vp/took/.git/hooks/pre-commit" "control: the hook in hooks the command left 0555"
	expect_eq "$(stat -c %a "$vp/took/.git/hooks")" 755 "control: the bits the command took, given back"
	expect_contains "$ERR" "neutralised $vp/a/b/c/d/mine/.git/hooks/pre-commit" "the person's hook the command rewrote"
	expect_eq "$(stat -c %a "$vp/a/b/c/d/mine/.git/hooks")" 555 "the person's own 0555 .git/hooks"
	expect_contains "$ERR" "neutralised $vp/a/b/c/d/shut/.git/hooks/pre-commit" "the person's hook, in hooks they cannot list"
	expect_eq "$(stat -c %a "$vp/a/b/c/d/shut/.git/hooks")" 111 "the person's own 0111 .git/hooks"
	local d
	for d in took a/b/c/d/mine a/b/c/d/shut; do
		(cd "$vp/$d" && HOME="$vh" "${AS_V[@]}" git -c safe.directory='*' commit -q --allow-empty -m outside >/dev/null 2>&1)
	done
	expect_no_payload "the person's git, as the user, in the three repositories"
}
TESTS+=(git_audit_person_bits_kept)

t_git_audit_kept_names_taken() { # the command takes every name the audit would rename a hook or a config to (NAME.sbx-disabled, .2 to .99), as directories a rename cannot replace: the audit still renames them away (a name it cannot guess); control: a repository without them
	git_env
	local pay; pay=$(git_payload kept)
	policy p <<<"allow-write ."
	run_sbx -c "$T/p" -- sh -ec "
		for r in taken free; do
			git init -q \$r; cp '$pay' \$r/.git/hooks/pre-commit; git -C \$r config core.fsmonitor '$pay'
		done
		for d in taken/.git/hooks/pre-commit taken/.git/config; do
			mkdir \$d.sbx-disabled; i=2; while [ \$i -lt 100 ]; do mkdir \$d.sbx-disabled.\$i; i=\$((i + 1)); done
		done; echo DONE"
	expect_rc 0 "the run"; expect_contains "$OUT" DONE "the run"
	expect_contains "$ERR" "neutralised $P/free/.git/hooks/pre-commit" "control: the hook"
	expect_contains "$ERR" "neutralised $P/free/.git/config: removed core.fsmonitor" "control: the config"
	expect_contains "$ERR" "neutralised $P/taken/.git/hooks/pre-commit" "the hook, every kept name taken"
	expect_contains "$ERR" "neutralised $P/taken/.git/config: removed core.fsmonitor" "the config, every kept name taken"
	[ ! -e "$P/taken/.git/hooks/pre-commit" ] || fail "the hook is still where git runs it"
	git_outside "$P/free"; git_outside "$P/taken"
	expect_no_payload "git outside in both repositories"
}
TESTS+=(git_audit_kept_names_taken)
