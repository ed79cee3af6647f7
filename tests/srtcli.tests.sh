# tests/srtcli.tests.sh - sourced by test.sh: srt's command line. sbx run through a
# symlink named srt takes srt's grammar and its settings rules (srt-behaviour.md §1.1, §7) with
# srt's texts, but exits 125 where it refuses; under its own name, --settings is -c, and a command
# not found whose name holds a space gets a hint. Each refusal has its control in the same test.

# srt_link: $T/bin/srt -> $SBX, and run_sbx runs it (SBX is the test's own, in its subshell)
srt_link() {
	mkdir -p "$T/bin"
	ln -sf "$SBX" "$T/bin/srt"
	SBX_SELF=$SBX
	SBX=$T/bin/srt
}

# srt_settings FILE [ALLOW-WRITE]: a complete srt settings file, no network
srt_settings() {
	printf '{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowRead":[],"allowWrite":[%s],"denyWrite":[]}}\n' \
		"${2:+\"$2\"}" >"$1"
}

REFUSAL_LINE="Refusing to run with the built-in defaults, which would drop this file's rules (its denyRead, allowRead and credential entries included)."

t_srtcli_command_forms() { # srt -c STRING runs through bash as srt does; srt CMD ARGS runs those words, none re-parsed
	srt_link
	srt_settings "$T/s.json" "$P"
	run_sbx -s "$T/s.json" -c 'echo {a,b} "$0"; echo in > "$PWD/inside"'
	expect_rc 0 "srt -c"
	expect_contains "$OUT" "a b bash" "-c STRING runs under bash (brace expansion, \$0)"
	[ -f "$P/inside" ] || fail "-c STRING: the write to an allowWrite root did not happen"
	run_sbx -s "$T/s.json" printf '[%s]' 'a b' '$HOME' '*'
	expect_rc 0 "srt CMD ARGS"
	expect_eq "$OUT" '[a b][$HOME][*]' "each word reaches the command as it was given"
	run_sbx -s "$T/s.json" -c 'exit 7'
	expect_rc 7 "the command's status is srt's"
	# refused: -c with words after it (srt drops them silently), no command at all
	run_sbx -s "$T/s.json" -c 'echo ran' extra
	expect_rc 125 "-c STRING WORDS"
	expect_contains "$ERR" "Error: -c takes the whole command line" "-c with words after it"
	expect_not_contains "$OUT" "ran" "the command did not run"
	run_sbx -s "$T/s.json"
	expect_rc 125 "no command"
	expect_eq "$ERR" "Error: No command specified. Use -c <command> or provide command arguments." "srt's text"
	run_sbx -s "$T/s.json" -c
	expect_rc 125 "-c without its string"
	expect_eq "$ERR" "error: option '-c <command>' argument missing" "srt's text for a missing -c string"
}
TESTS+=(srtcli_command_forms)

t_srtcli_options_end_at_the_command() { # srt's options end at the first word that is not one (srt scans them anywhere: its sh -c pitfall)
	srt_link
	srt_settings "$T/s.json"
	run_sbx -s "$T/s.json" sh -c 'echo "[$1]"' x 'a b'
	expect_rc 0 "srt sh -c ..."
	expect_eq "$OUT" "[a b]" "the command's -c is the command's (srt would take it as its own)"
	run_sbx -s "$T/s.json" echo -d --settings x
	expect_rc 0 "options after the command"
	expect_eq "$OUT" "-d --settings x" "words after the command are the command's"
	run_sbx -s "$T/s.json" -- -c
	expect_rc 127 "a command after --"
	expect_contains "$ERR" "-c: command not found" "after --, -c is the command"
	# control: the same options before the command are srt's
	run_sbx -d -s "$T/s.json" -c 'echo ok'
	expect_rc 0 "options before the command"
	expect_eq "$OUT" "ok" "-c before the command is srt's"
	# refused: an option srt does not know (srt would pass it on), srt's subcommands
	run_sbx --bogus -s "$T/s.json" -c 'echo ran'
	expect_rc 125 "an unknown option"
	expect_eq "$ERR" "error: unknown option '--bogus'" "unknown option"
	run_sbx -s "$T/s.json" proxy
	expect_rc 125 "srt proxy"
	expect_contains "$ERR" "proxy subcommand is not part of sbx" "srt's proxy subcommand"
}
TESTS+=(srtcli_options_end_at_the_command)

t_srtcli_settings_refusals() { # srt -s FILE: missing, unreadable, empty, not JSON, not a valid config: refused with srt's texts, exit 125
	srt_link
	srt_settings "$T/ok.json" "$P"
	: >"$T/empty.json"
	printf ' \n\t\n' >"$T/blank.json"
	printf '{x\n' >"$T/bad.json"
	printf '{"filesystem":{"denyReed":[]}}\n' >"$T/schema.json"
	mkdir "$T/dir.json"
	printf 'allow-write .\n' >"$T/lines.policy"
	# control: a good file runs the command, with its rules (-sFILE, --settings=FILE, --settings FILE)
	local how
	for how in "-s $T/ok.json" "-s$T/ok.json" "--settings=$T/ok.json" "--settings $T/ok.json"; do
		# shellcheck disable=SC2086 # the option is words
		run_sbx $how -c 'echo ran > "$PWD/w" && cat "$PWD/w"'
		expect_rc 0 "srt $how"
		expect_eq "$OUT" "ran" "srt $how: the command ran, and wrote to its allowWrite root"
	done
	run_sbx -s "$T/nope.json" -c 'echo ran'
	expect_rc 125 "a missing --settings file"
	expect_eq "$ERR" "Error: $T/nope.json does not exist.
Refusing to run with the built-in defaults, which would drop the rules --settings asked for." "missing"
	expect_not_contains "$OUT" "ran" "missing: the command did not run"
	run_sbx -s "$T/dir.json" -c 'echo ran'
	expect_rc 125 "an unreadable --settings file"
	expect_eq "$ERR" "Error: $T/dir.json could not be read (EISDIR).
$REFUSAL_LINE" "unreadable"
	for f in empty blank; do
		run_sbx -s "$T/$f.json" -c 'echo ran'
		expect_rc 125 "an $f --settings file"
		expect_eq "$ERR" "Error: $T/$f.json is empty. Delete it, or put a config in it.
$REFUSAL_LINE" "$f"
	done
	run_sbx -s "$T/bad.json" -c 'echo ran'
	expect_rc 125 "a settings file that is not JSON"
	expect_contains "$ERR" "Error: $T/bad.json is not valid JSON: " "not JSON"
	expect_contains "$ERR" "$REFUSAL_LINE" "not JSON: the refusal line"
	run_sbx -s "$T/lines.policy" -c 'echo ran'
	expect_rc 125 "sbx's line format"
	expect_contains "$ERR" "Error: $T/lines.policy is not valid JSON: " "the line format is for sbx -c"
	run_sbx -s "$T/schema.json" -c 'echo ran'
	expect_rc 125 "a settings file that is not a valid config"
	expect_contains "$ERR" "Error: $T/schema.json does not hold a valid config — " "invalid config"
	expect_contains "$ERR" "denyReed" "invalid config: the issue named"
	expect_contains "$ERR" "$REFUSAL_LINE" "invalid config: the refusal line"
	run_sbx -s
	expect_rc 125 "-s without its FILE"
	expect_eq "$ERR" "error: option '-s, --settings <path>' argument missing" "srt's text"
}
TESTS+=(srtcli_settings_refusals)

t_srtcli_default_settings() { # ~/.srt-settings.json: absent means srt's built-in config (no writes, no network, credentials hidden); present is read; empty or a directory is refused
	srt_link
	mkdir -p "$H/.ssh"
	echo secret >"$H/.ssh/id_x"
	echo public >"$H/notes"
	# absent: srt's built-in config; -d says so, as srt's debug log does
	run_sbx -d -c 'cat "$HOME/notes"; cat "$HOME/.ssh/id_x" || echo hidden; echo x > "$PWD/w" || echo read-only'
	expect_rc 0 "no ~/.srt-settings.json"
	expect_contains "$ERR" "No config found at $H/.srt-settings.json, using default config" "-d: the fallback said"
	expect_contains "$OUT" "public" "reads are open"
	expect_contains "$OUT" "hidden" "the credential stores are hidden (sbx's default denies)"
	expect_not_contains "$OUT" "secret" "~/.ssh was read"
	expect_contains "$OUT" "read-only" "no allowWrite: the project is not writable"
	[ ! -e "$P/w" ] || fail "the default config let the command write to the project"
	run_sbx -c 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "'
	expect_eq "$OUT" "lo" "no network: only lo"
	# present: read, with its rules (the control: the same write is allowed)
	srt_settings "$H/.srt-settings.json" "$P"
	run_sbx -c 'echo x > "$PWD/w" && echo wrote'
	expect_rc 0 "~/.srt-settings.json"
	expect_eq "$OUT" "wrote" "the default file's allowWrite applies"
	# refused even at the default path: empty, unreadable
	: >"$H/.srt-settings.json"
	run_sbx -c 'echo ran'
	expect_rc 125 "an empty ~/.srt-settings.json"
	expect_eq "$ERR" "Error: $H/.srt-settings.json is empty. Delete it, or put a config in it.
$REFUSAL_LINE" "empty at the default path"
	rm "$H/.srt-settings.json"
	mkdir "$H/.srt-settings.json"
	run_sbx -c 'echo ran'
	expect_rc 125 "a directory at ~/.srt-settings.json"
	expect_contains "$ERR" "could not be read (EISDIR)." "unreadable at the default path"
	expect_not_contains "$OUT" "ran" "the command did not run"
}
TESTS+=(srtcli_default_settings)

t_srtcli_filesystem_disabled() { # filesystem.disabled: true runs, with one warning (sbx's own binary is writable then: the tamper check has nothing to protect); the network stays closed
	srt_link
	local fs
	for fs in true false; do
		printf '{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"disabled":%s,"denyRead":[],"allowWrite":[],"denyWrite":[]}}\n' \
			"$fs" >"$T/disabled-$fs.json"
	done
	# control: with isolation on, the same write is refused, and sbx's own directory, allowed, is refused as a tamper risk
	run_sbx -s "$T/disabled-false.json" -c "echo x > '$O/w' 2>/dev/null || echo refused"
	expect_rc 0 "filesystem.disabled false"
	expect_eq "$OUT" "refused" "isolation on: outside every allowWrite root is read-only"
	printf '{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["%s"],"denyWrite":[]}}\n' \
		"$(dirname "$SBX_SELF")" >"$T/self-writable.json"
	run_sbx -s "$T/self-writable.json" -c 'echo ran'
	expect_rc 125 "an allowWrite over sbx's own binary"
	expect_contains "$ERR" "(sbx's own binary) would be writable inside the sandbox" "the tamper check, isolation on"
	# filesystem.disabled: the command writes where it likes, and only the network is confined
	run_sbx -s "$T/disabled-true.json" -c "echo x > '$O/w' && echo wrote; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '"
	expect_rc 0 "filesystem.disabled true"
	expect_eq "$OUT" $'wrote\nlo' "isolation off: the write landed; the network namespace is still empty"
	expect_eq "$(cat "$O/w")" "x" "the file written outside"
	expect_eq "$(grep -c "disable-filesystem: no filesystem isolation" <<<"$ERR")" 1 "one warning line"
	expect_not_contains "$ERR" "refusing" "no tamper refusal"
	# the line format's directive, and sbx's own name, the same
	printf 'disable-filesystem\n' >"$T/off.policy"
	SBX=$SBX_SELF run_sbx -c "$T/off.policy" -- sh -c 'echo y > "$1/y" && echo wrote' x "$O"
	expect_rc 0 "sbx disable-filesystem"
	expect_eq "$OUT" "wrote" "disable-filesystem: the write landed"
}
TESTS+=(srtcli_filesystem_disabled)

t_srtcli_control_fd_checked() { # --control-fd N: srt's check (digits, >= 3) and its text; a valid N is accepted by the parser
	srt_link
	srt_settings "$T/s.json"
	local n
	for n in 2 0 x1 0x10 3e0 " 5" -3 ""; do
		run_sbx -s "$T/s.json" --control-fd "$n" -c 'echo ran'
		expect_rc 125 "--control-fd '$n'"
		expect_eq "$ERR" "error: option '--control-fd <fd>' argument '$n' is invalid. must be an integer file descriptor >= 3 (0-2 are stdin, stdout and stderr)." "--control-fd '$n'"
	done
	run_sbx -s "$T/s.json" --control-fd=1 -c 'echo ran'
	expect_contains "$ERR" "argument '1' is invalid" "--control-fd=N is checked too"
	run_sbx -s "$T/s.json" --control-fd
	expect_eq "$ERR" "error: option '--control-fd <fd>' argument missing" "--control-fd without N"
	# control: 5 passes the check (the channel itself is sbx's --control-fd: see srt_cli's JOIN)
	run_sbx -s "$T/s.json" --control-fd 5 -c 'echo ran' 5</dev/null
	expect_not_contains "$ERR" "is invalid" "--control-fd 5 is a valid descriptor number"
	expect_not_contains "$ERR" "unknown option" "--control-fd is one of srt's options"
}
TESTS+=(srtcli_control_fd_checked)

t_srtcli_version_help_name() { # srt -V says it is sbx and which srt it follows; --help is srt's; only the name srt switches the grammar
	srt_link
	run_sbx -V
	expect_rc 0 "srt -V"
	expect_contains "$OUT" "(srt 0.0.81 compatible)" "-V"
	expect_contains "$OUT" "sbx " "-V names sbx"
	run_sbx --version
	expect_contains "$OUT" "(srt 0.0.81 compatible)" "--version"
	run_sbx --help
	expect_rc 0 "srt --help"
	expect_contains "$OUT" "Usage: srt [options] [command...]" "srt's usage"
	expect_contains "$OUT" "--control-fd <fd>" "--help lists --control-fd"
	# found through PATH (argv[0] is then "srt", no slash)
	srt_settings "$T/s.json"
	PATH=$T/bin:$PATH run_sbx_named srt -s "$T/s.json" -c 'echo via-path'
	expect_eq "$OUT" "via-path" "srt found through PATH"
	# control: another name is sbx's grammar (-s is no option of sbx)
	ln -sf "$SBX_SELF" "$T/bin/srt2"
	PATH=$T/bin:$PATH run_sbx_named srt2 -s "$T/s.json" -c 'echo ran'
	expect_rc 125 "a link named srt2"
	expect_contains "$ERR" "unknown option -s" "srt2 is sbx"
}
TESTS+=(srtcli_version_help_name)

# run_sbx_named NAME ARGS...: run_sbx with the command found through PATH by NAME
run_sbx_named() {
	local name=$1
	shift
	printf '$ %s' "$name"; printf ' %q' "$@"; printf '   (cwd %s)\n' "$PWD"
	timeout -k 5 "$TMO" "$name" "$@" >"$T/.stdout" 2>"$T/.stderr"
	RC=$?
	OUT=$(cat "$T/.stdout"); ERR=$(cat "$T/.stderr")
	echo "  [exit $RC]"; log_file out "$T/.stdout"; log_file err "$T/.stderr"
}

t_srtcli_sbx_settings_alias() { # sbx --settings FILE is sbx -c FILE
	printf 'allow-write %s\n' "$O" >"$T/pol"
	run_sbx --settings "$T/pol" -- sh -c 'echo a > "$1/a" && echo wrote' x "$O"
	expect_rc 0 "--settings FILE"
	expect_eq "$OUT" "wrote" "--settings FILE: the file's allow-write applies"
	run_sbx --settings="$T/pol" -- sh -c 'echo b > "$1/b" && echo wrote' x "$O"
	expect_eq "$OUT" "wrote" "--settings=FILE"
	# control: without it, the default policy, where $O is not writable
	run_sbx -- sh -c 'echo c > "$1/c" 2>/dev/null || echo refused' x "$O"
	expect_eq "$OUT" "refused" "without --settings, $O is read-only"
	run_sbx --settings "$T/nope" -- true
	expect_rc 125 "--settings of a missing file"
	expect_contains "$ERR" "no such policy file" "--settings refuses a missing file as -c does"
}
TESTS+=(srtcli_sbx_settings_alias)

t_srtcli_sbx_command_line_hint() { # a command not found whose name holds a space gets a hint: sbx ... -- sh -c '...'
	run_sbx -- "npm test it's"
	expect_rc 127 "a command line as one word"
	expect_contains "$ERR" "npm test it's: command not found" "not found"
	expect_contains "$ERR" "hint: to run a command line, use: sbx ... -- sh -c 'npm test it'\\''s'" "the hint, quoted"
	# control: a name without a space gets no hint; the hint's own form runs
	run_sbx -- no-such-command-here
	expect_rc 127 "a plain name not found"
	expect_not_contains "$ERR" "hint:" "no hint without a space"
	run_sbx -- sh -c 'echo ran it'
	expect_eq "$OUT" "ran it" "the form the hint gives runs"
	srt_link
	srt_settings "$T/s.json"
	run_sbx -s "$T/s.json" "echo hi"
	expect_rc 127 "srt 'echo hi'"
	expect_contains "$ERR" "hint: to run a command line" "the hint under srt too"
}
TESTS+=(srtcli_sbx_command_line_hint)

t_srtcli_command_line_hint_macos() { # the macOS runner (sbx-macsim) gives the same hint where it finds no command
	macsim_setup
	run_macsim -- "npm test"
	expect_rc 127 "sbx-macsim -- 'npm test'"
	expect_contains "$ERR" "npm test: command not found" "not found, before anything starts"
	expect_contains "$ERR" "hint: to run a command line, use: sbx ... -- sh -c 'npm test'" "the hint on macOS"
	# control: a plain name gets no hint; a command that is there runs
	run_macsim -- no-such-command-here
	expect_rc 127 "a plain name not found"
	expect_not_contains "$ERR" "hint:" "no hint without a space"
	run_macsim -- sh -c 'echo ran'
	expect_eq "$OUT" "ran" "the control runs under sbx-macsim"
}
TESTS+=(srtcli_command_line_hint_macos)
