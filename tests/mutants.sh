#!/usr/bin/env bash
# tests/mutants.sh - plant small regressions in sbx.c, one at a time, and check that the tests
# named to notice each one do (`make mutants`). Not part of `make test`: about 11 minutes on
# 2 cores. A mutant the tests miss is a promise nothing checks: add the test, or say below why
# the change cannot be seen (an equivalent mutant).
#
# Usage
#   tests/mutants.sh [-j JOBS] [-n] [-l] [-c] [SUBSTRING...]
#     SUBSTRING  only the mutants whose name contains one (all without)
#     -j JOBS    mutants tried at once (default 2; 1 where a run must be quiet)
#     -n         no baseline (the unmutated build against every catcher named, first)
#     -l         list the mutants and their catchers; run nothing
#     -c         check that every hunk applies to the sources as they are; build and run nothing
#   MUTANTS_DIR  the scratch directory (default .mutants/ here; never under /tmp, /var/tmp or
#                /dev/shm, which each run covers with an empty tmpfs)
#
# The table (below): each mutant is
#   mutant NAME CATCHER... <<'EOF'
#   HUNK
#   EOF
# HUNK is a piece of sbx.c as a unified diff writes it, without line numbers: ' ' a line kept
# (context), '-' a line removed, '+' a line added; a first line "@@ FILE" patches FILE instead
# (seccomp_bpf.h). The kept and removed lines, in order, must be found in the file exactly once,
# at the start of a line. Or it is sed's s|OLD|NEW| lines (any delimiter), each OLD found exactly
# once anywhere in the file: for a change inside a line that edits around it keep changing.
# Otherwise the mutant "does not apply": sbx.c changed under it (update the hunk), never counted
# as caught. Anchor hunks on distinctive text, so edits elsewhere in sbx.c leave them applying.
# CATCHER: unit:NAME (tests/unit, only its functions whose name contains NAME), or a test.sh test
# name (a substring, as test.sh takes it).
#
# For each mutant, in a scratch copy: the hunk applied; sbx built when a test.sh test is named,
# tests/unit when a unit one is; those run, each in a private mount namespace with an empty tmpfs
# over /tmp, /var/tmp and /dev/shm (as root: the suite's own rule), never touching the machine's
# runtime places; then one line, and a summary line at the end:
#   caught     NAME (by WHICH)       a catcher failed
#   survived   NAME                  every catcher passed: the regression went unseen
#   no-apply   NAME                  the hunk is not in the file once
#   no-build   NAME                  the mutant does not compile (fix the hunk)
#   skipped    NAME                  every catcher skipped (this machine lacks what they need)
#   unsure     NAME                  a catcher failed on the unmutated build too (flaky, or broken)
# Exit status: 0 when nothing survived and every mutant applied and built.
#
# Left out, equivalent in practice (the first two survived a run; the last two cannot differ by
# construction): nothing a command or a person can observe tells them from the code as it is.
#   - parent_route_collect without its fallback of tunnels to the http parent: parent_for falls
#     back to it itself, so every connection takes the same route.
#   - PR_SET_NO_NEW_PRIVS dropped before the command's seccomp filter is installed: bwrap sets
#     no_new_privs before it runs sbx's inner helper, and the flag is inherited and cannot be
#     cleared (without it the kernel refuses the filter to a process without CAP_SYS_ADMIN:
#     closed either way).
#   - report_sanitise's lead-byte mask one bit wider (0xff >> n): that bit is 0 in every lead
#     byte utf8_valid_len has accepted, so every code point decodes the same.
#   - socks5_parse_request's name bound one off (alen > hn): a name is at most 255 bytes and the
#     buffer holds 256, so the bound is never reached.
set -u
export LC_ALL=C
unset SANDBOX_RUNTIME HTTP_PROXY HTTPS_PROXY http_proxy https_proxy NO_PROXY no_proxy ALL_PROXY all_proxy
cd "$(dirname "$0")/.." || exit 2
HERE=$(pwd -P)
JOBS=2 BASELINE=1 LIST= CHECK=
while getopts "j:nlc" o; do
	case $o in
	j) JOBS=$OPTARG ;;
	n) BASELINE= ;;
	l) LIST=1 ;;
	c) CHECK=1 ;;
	*) sed -n '8,14p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
PICK=("$@")
W=${MUTANTS_DIR:-$HERE/.mutants}

# ================================================================ the table
NAMES=()
declare -A CATCH
TAB=$(mktemp -d "${TMPDIR:-/tmp}/sbx-mutants.XXXXXX") || exit 2
trap 'rm -rf "$TAB"' EXIT
mutant() { # mutant NAME CATCHER... <<HUNK
	local name=$1; shift
	[ -z "${CATCH[$name]+x}" ] || { echo "mutants.sh: two mutants named $name" >&2; exit 2; }
	NAMES+=("$name"); CATCH[$name]="$*"
	cat >"$TAB/$name.hunk"
}

# ---------------------------------------------------------------- promises a planted regression once broke unseen
mutant observer_short_read_kept observer_unreadable_page_reported <<'EOF'
s#		if (r == (ssize_t)n ||#		if (r >= 0 ||#
EOF
mutant sanitiser_lets_line_separators unit:violations_report <<'EOF'
s#{ 0x2028, 0x202e },#{ 0x202a, 0x202e },#
EOF
mutant git_key_with_its_case unit:gitcfg git_ssh_command_any_case <<'EOF'
-	{ "core", "", "sshcommand", GV_CMD, "git fetch and push run it" },
+	{ "core", "", "sshCommand", GV_CMD, "git fetch and push run it" },
EOF
mutant parent_http_over_https_for_tunnels unit:parent_proxy parent_proxy_https_for_tunnels <<'EOF'
-		return r->have_https ? &r->https : &r->http;
+		return r->have_http ? &r->http : &r->https;
EOF
mutant session_signal_to_leader_only session_signal_reaches_group <<'EOF'
s|kill(-ex[k].pid, (int)v[1])|kill(ex[k].pid, (int)v[1])|
EOF
mutant hook_ask_ignored hook_ask_and_spaced_path <<'EOF'
s#hook_answer(&out, ask ? "ask" : "allow",#hook_answer(&out, "allow",#
EOF
mutant hook_print_settings_drops_ask unit:sessions hook_ask_and_spaced_path <<'EOF'
s|			opts[nopt++] = "--ask";	/* on the hook that answers (hook_command) */|			(void)0;	/* on the hook that answers (hook_command) */|
EOF
mutant session_exec_gets_denied_env session_exec_deny_env <<'EOF'
-		if (n && !ours && !env_denied(r->p, client[i], n))
+		if (n && !ours)
EOF
mutant hook_rewrite_path_unquoted unit:sessions hook_ask_and_spaced_path <<'EOF'
-	buf_put_shell_quoted(&b, self);
-	buf_puts(&b, " exec --fd3 ");
+	buf_puts(&b, self);
+	buf_puts(&b, " exec --fd3 ");
EOF
mutant session_daemon_no_uid_check session_daemon_checks_uid <<'EOF'
-		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 || cr.uid != uid) {
+		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0) {
 			close(fd);
 			continue;
 		}
 		/* a client that stops half way */
EOF
mutant live_addresses_not_to_running_proxy controlfd_denied_addresses_live <<'EOF'
 	px->live.deny_domains = t->deny;
-	px->live.deny_addresses = t->addrs;
EOF
mutant live_addresses_not_to_next_proxy controlfd_denied_addresses_live <<'EOF'
 	live.cur.deny_domains = t->deny;
-	live.cur.deny_addresses = t->addrs;
EOF
mutant seatbelt_unix_socket_unescaped unit:seatbelt_escape <<'EOF'
-			if (sb_put_string(out, p->allow_unix_sockets.v[i]) < 0 && !bad.path)
+			if (buf_printf(out, "\"%s\"", (const char *)p->allow_unix_sockets.v[i]), 0)
EOF
mutant seatbelt_deny_untagged unit:seatbelt_patterns <<'EOF'
 	buf_puts(out, " (with message ");
-	if (sb_put_string(out, f->tag) < 0)	/* the tag is base64 and ASCII: never */
+	if (sb_put_string(out, "") < 0)
EOF
mutant seatbelt_names_top_only unit:seatbelt_patterns <<'EOF'
-		buf_puts(&head, strcmp(root, "/") == 0 ? "(.*/)?" : "/(.*/)?");
+		buf_puts(&head, "/");
EOF

# ---------------------------------------------------------------- the seccomp programs (seccomp_bpf.h)
mutant bpf_compares_high_word unit:bpf unix_sockets_blocked <<'EOF'
@@ seccomp_bpf.h
-				bpf_stmt(&a, BPF_LD | BPF_W | BPF_ABS, SD_ARG_LO(r->arg), (int)j);
+				bpf_stmt(&a, BPF_LD | BPF_W | BPF_ABS, SD_ARG_HI(r->arg), (int)j);
EOF
mutant bpf_x32_let_through unit:bpf foreign_abi_killed <<'EOF'
@@ seccomp_bpf.h
-		bpf_jump_to(&a, BPF_JMP | BPF_JGT | BPF_K, 0x3fffffff, LBL_NEXT, nr_ok, -1);
+		bpf_jump_to(&a, BPF_JMP | BPF_JGT | BPF_K, 0x3fffffff, nr_ok, nr_ok, -1);
EOF
mutant bpf_vsock_open unit:bpf unix_sockets_blocked <<'EOF'
@@ seccomp_bpf.h
-	{ SC_socket,		0, CMP_EQ,	SBX_AF_VSOCK,			EPERM_,	RG_UNIX,
+	{ SC_socket,		0, CMP_EQ,	SBX_AF_VSOCK + 1,		EPERM_,	RG_UNIX,
EOF
mutant bpf_tiocsti_open unit:bpf terminal_kept_tiocsti_refused <<'EOF'
@@ seccomp_bpf.h
-	{ SC_ioctl,		1, CMP_EQ,	SBX_TIOCSTI,			EPERM_,	RG_ALWAYS,
+	{ SC_ioctl,		1, CMP_EQ,	SBX_TIOCSTI + 1,		EPERM_,	RG_ALWAYS,
EOF
mutant bpf_prlimit_of_others unit:bpf session_init_limits_untouchable <<'EOF'
@@ seccomp_bpf.h
-	{ SC_prlimit64,		0, CMP_NONE,	0,				EPERM_,	RG_ALWAYS,
+	{ SC_prlimit64,		0, CMP_NONE,	0,				SBX_RET_ALLOW,	RG_ALWAYS,
EOF

# ---------------------------------------------------------------- the policy readers (3): a typo must not weaken silently
mutant json_duplicate_key_kept unit:json <<'EOF'
 			for (i = 0; i < keys.n; i++)
-				if (strcmp(keys.v[i], key) == 0)
+				if (0)
 					return err_set(jp->e, jp->file, at->line, at->col,
EOF
mutant json_unknown_key_dropped unit:json bad_policy <<'EOF'
-		if (!k) {
+		if (!k)
+			continue;
+		if (0) {
 			const char *hint = closest_name(obj->keys[i], names, nn);
EOF
mutant unknown_directive_skipped unit:line_format bad_policy <<'EOF'
-	if (!d) {
+	if (!d)
+		return 0;
+	if (0) {
 		hint = did_you_mean_directive(words[0]);
EOF

# ---------------------------------------------------------------- the network decision (4)
mutant domain_suffix_without_its_dot unit:network_decisions proxy_refusals <<'EOF'
-		return !host_is_ip(host) && hn > bn && strcmp(host + hn - bn, ph + 1) == 0;
+		return !host_is_ip(host) && hn > bn && strcmp(host + hn - bn + 1, ph + 2) == 0;
EOF
mutant deny_list_skipped unit:network_decisions proxy_refusals <<'EOF'
-	if ((deny = net_denied(p, canon, port))) {
+	if (0 && (deny = net_denied(p, canon, port))) {
EOF
mutant link_local_dialled unit:network_decisions explain_decisions <<'EOF'
s#{ "169.254.0.0/16", "a link-local address" },#{ "169.254.0.0/32", "a link-local address" },#
EOF
mutant dns_stub_ignores_denies unit:dns_stub dns_stub_resolves_allowed_names <<'EOF'
-	if ((deny = net_denied(p, canon, -1))) {	/* -1: no port rule matches it */
+	if (0 && (deny = net_denied(p, canon, -1))) {	/* -1: no port rule matches it */
EOF
mutant proxy_refusal_waved_through proxy_refusals proxy_no_allow_domain <<'EOF'
-	if (!v.allow) {
-		px_refuse(c, v.reason, true);
-		return;
-	}
-	match_canonical_host(c->host, canon, sizeof(canon));
+	if (0 && !v.allow) {
+		px_refuse(c, v.reason, true);
+		return;
+	}
+	match_canonical_host(c->host, canon, sizeof(canon));
EOF

# ---------------------------------------------------------------- the filesystem plan (5)
mutant dangerous_names_case_sensitive mandatory_case_insensitive unit:plan <<'EOF'
 name_ieq(const char *a, const char *b)
 {
-	return strcasecmp(a, b) == 0;
+	return strcmp(a, b) == 0;
EOF
mutant mandatory_depth_one_short mandatory_files_depth unit:plan <<'EOF'
-		if (depth <= maxd - 1)
+		if (depth <= maxd - 2)
 			for (i = 0; i < LEN(dangerous_files); i++)
EOF
mutant bashrc_not_dangerous mandatory_files_depth unit:plan <<'EOF'
-	{ ".bashrc", "the next interactive bash runs it", DW_TOP, PH_FILE },
+	{ ".bashrc~", "the next interactive bash runs it", DW_TOP, PH_FILE },
EOF
mutant write_deny_not_inherited deny_write_wins unit:plan <<'EOF'
s#forced = par->forced || (n->rules & (RB_DENY_WRITE | RB_LINK_PIN)) ||#forced = (n->rules & (RB_DENY_WRITE | RB_LINK_PIN)) ||#
EOF
mutant secret_reopened_below deny_secret_file unit:plan <<'EOF'
-		n->secret = par->secret || (n->rules & RB_SECRET);
+		n->secret = (n->rules & RB_SECRET);
EOF
mutant ancestors_not_pinned rename_ancestor_busy deny_read_inside_root_pinned unit:plan <<'EOF'
-		if (n->mounted && par->visible && par->writable && (!n->writable || !n->visible)) {
+		if (0 && n->mounted && par->visible && par->writable && (!n->writable || !n->visible)) {
EOF
mutant ro_bind_rendered_writable deny_write_wins unit:argv_goldens <<'EOF'
 		case MK_BIND_RO:
-			argv_push3(out, "--ro-bind", m->path, m->path);
+			argv_push3(out, "--bind", m->path, m->path);
EOF
mutant deny_env_not_unset deny_env <<'EOF'
s#		if (eq && eq > rf->envp[i] &&#		if (0 && eq && eq > rf->envp[i] &&#
EOF

# ---------------------------------------------------------------- the processes (10)
mutant proxy_dumpable proxy_nondumpable <<'EOF'
-	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
 	if ((abi = px_landlock()) < 0) {
EOF
mutant init_dumpable session_init_untraceable process_isolation <<'EOF'
-	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
 	inner_rename("sbx-init");
EOF
mutant session_init_keeps_capabilities session_exec_basics <<'EOF'
-	if (drop_capabilities() < 0)
-		die("cannot drop capabilities: %s", strerror(errno));
 	for (;;) {
 		struct pollfd pfd[2] = { { ctl, POLLIN, 0 }, { sfd, POLLIN, 0 } };
EOF
mutant inherited_fds_kept inherited_fds_closed controlfd_not_inside <<'EOF'
-	if (fds_cloexec_from(3) < 0)
+	if (0 && fds_cloexec_from(3) < 0)
EOF
mutant tamper_check_dropped tamper_refusal <<'EOF'
-	if (plan_is_writable(pl, real) && (access(real, W_OK) == 0 || access(dir, W_OK) == 0))
+	if (0 && plan_is_writable(pl, real) && (access(real, W_OK) == 0 || access(dir, W_OK) == 0))
EOF
mutant observer_hides_direct_connects observer_direct_connect <<'EOF'
s#return a[0] == 127 || (a[0] | a[1] | a[2] | a[3]) == 0;#return a[0] <= 127 || (a[0] | a[1] | a[2] | a[3]) == 0;#
EOF

# ---------------------------------------------------------------- the run on disk (9)
mutant runtime_dir_of_anyone runtime_dir_planted_for_root runtime_dir_planted_by_another_user <<'EOF'
-	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
+	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
EOF
mutant runtime_dir_others_could_write runtime_state_repaired <<'EOF'
-	if ((st.st_mode & 022) || fchmod(fd, 0700) < 0)
+	if (fchmod(fd, 0700) < 0)
EOF
mutant fsmonitor_false_inverted git_created_repos_neutralised <<'EOF'
 	if (gitcfg_is(e, "core", "", "fsmonitor"))
-		return !gitcfg_false(e->value);
+		return gitcfg_false(e->value);
EOF

# ---------------------------------------------------------------- the report (8)
mutant report_keeps_closing_bracket unit:violations_report violations_forged_name <<'EOF'
-		if (cp == '<' || cp == '>')
+		if (cp == '<')
EOF
mutant ignore_rule_of_another_command violations_reason_and_ignore <<'EOF'
s#if ((strcmp(r->command, "*") == 0 || strstr(cmdline, r->command)) &&#if (1 &&#
EOF
mutant violations_sink_where_command_writes violations_sink_not_the_commands <<'EOF'
s#if (!realpath(c->violations, real) || plan_is_writable(pl, real) ||#if (!realpath(c->violations, real) || 0 ||#
s#	    plan_is_writable(pl, path_dirname(real)))#	    0)#
EOF
mutant violations_sink_follows_links violations_sink_not_the_commands <<'EOF'
s#O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK, 0600);#O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);#
EOF

# ---------------------------------------------------------------- the proxy's parsers (7)
mutant host_header_not_compared knob_require_host_match unit:request_knobs <<'EOF'
-	if (hn != strlen(want) || strncasecmp(host, want, hn) != 0)
+	if (0)
 		goto mismatch;
EOF
mutant hop_headers_forwarded proxy_strips_hop_headers unit:proxy_parsers <<'EOF'
-		if (!hop_by_hop(line, nn) && !(nn >= 6 && strncasecmp(line, "proxy-", 6) == 0) &&
+		if (!(nn >= 6 && strncasecmp(line, "proxy-", 6) == 0) &&
EOF
mutant tables_take_control_bytes unit:live_policy <<'EOF'
-		if (!b[*off + k] || is_control(b[*off + k])) {
+		if (!b[*off + k]) {
EOF

# ---------------------------------------------------------------- the scan cache (5c) and the audit (9b)
mutant scan_cache_whole_seconds_trusted scan_cache_second_ctime <<'EOF'
s|(r.ctime % 1000000000 ? 0 : 1000000000);|0;|
EOF
mutant audit_whole_seconds_before_run scan_cache_second_ctime_audit <<'EOF'
s#return t >= a->t0 || (t % 1000000000 == 0 && t >= a->t0 - a->t0 % 1000000000);#return t >= a->t0;#
EOF
mutant scan_head_symlink_not_gitdir scan_cache_bare_head_symlink <<'EOF'
s#strcmp(name, "HEAD") == 0 && (k == FK_FILE || k == FK_LINK) ? 1#strcmp(name, "HEAD") == 0 && k == FK_FILE ? 1#
EOF
mutant audit_head_symlink_not_gitdir scan_cache_bare_head_symlink <<'EOF'
s#(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) &&#S_ISREG(st.st_mode) &&#
EOF
mutant scan_cache_overlay_trusted scan_cache_overlay_lower_changed <<'EOF'
s|0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0xF2F52010,|0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0xF2F52010, 0x794c7630,|
EOF
mutant scan_cache_bytes_unbounded unit:scan_cache <<'EOF'
s|if ((more = sc_rec_bytes(sc, &r)) > sc->max_bytes - bytes)|if ((more = sc_rec_bytes(sc, &r)) > (size_t)-1)|
s|	if (bytes > sc->max_bytes) {|	if (0) {|
EOF
mutant scan_objects_file_not_gitdir scan_cache_bare_head_symlink <<'EOF'
s#strcmp(name, "objects") == 0 ? 2 : strcmp(name, "refs") == 0 ? 4 : 0;#strcmp(name, "objects") == 0 && k == FK_DIR ? 2 : strcmp(name, "refs") == 0 ? 4 : 0;#
EOF
mutant scan_cache_drops_objects_file scan_cache_bare_head_symlink <<'EOF'
s#strcmp(name, "objects") == 0 || strcmp(name, "refs") == 0;#0;#
EOF
mutant std_directory_passed scan_cache_stdin_directory <<'EOF'
-	fds_std_not_dirs();	/* a run's, and an exec's: it hands them to its session */
EOF
# the part below the scan's depth, at the sandbox's first write-intent call (scan_deep)
mutant deep_walk_after_the_command scan_deep_picture <<'EOF'
 			 * the next observer is started after the walk anyway */
-			run_scan_deep();
+			;
 			(void)send(r->events, "G", 1, MSG_NOSIGNAL);
EOF
mutant deep_killed_run_audited unit:host_edges scan_deep_killed <<'EOF'
s#	if (a.t0 > 0 && !deep_pending)#	if (a.t0 > 0)#
EOF
mutant deep_lost_by_birth_time unit:host_edges <<'EOF'
s#		fresh = audit_since(a, b >= 0 && !a->seen_by_ctime ? b : c);#		fresh = audit_since(a, b >= 0 ? b : c);#
EOF
mutant deep_left_with_observe_writes_off scan_deep_reader <<'EOF'
s#	return !run_mode && p->observe_writes && !writes_unseen_why(p) && !observer_unavailable();#	return !run_mode && !writes_unseen_why(p) && !observer_unavailable();#
EOF
mutant audit_looks_only_where_named git_audit_attack_narrow <<'EOF'
s#} else if (look && (++looked, audit_dir_changed(#} else if (look && (attrib.unsure || attrib_touched(d)) && (++looked, audit_dir_changed(#
EOF
mutant audit_at_exit_with_the_sandbox_alive git_audit_left_when_sbx_exits_early <<'EOF'
s#	bool live = run_state.command_started && !run_state.sandbox_gone;#	bool live = false;#
EOF
mutant audit_person_bits_not_put_back git_audit_person_bits_kept <<'EOF'
s#	if (before) {#	if (0 && before) {#
EOF
mutant audit_person_hooks_left_unlisted git_audit_person_bits_kept <<'EOF'
s#int hfd = audit_acts(a, hooks, pfd, name, &why)#int hfd = audit_changed(a, hooks) && audit_acts(a, hooks, pfd, name, &why)#
EOF
mutant audit_gitdir_completed_in_place_unseen git_audit_attack_completed_in_place <<'EOF'
s#	if (!audit_seen_same(a, dir) && audit_gitdir_marks(dir_fd(d))) {#	if (0) {#
EOF
mutant audit_gitdir_completed_in_place_not_its git_audit_attack_completed_in_place <<'EOF'
s#			attrib_record(dir);#			;#
EOF
mutant audit_seen_by_path_alone git_audit_attack_replaced_gitdir <<'EOF'
s#	return !a->seen_ids ||#	return 1 ||#
EOF
mutant audit_recover_seen_by_path_alone git_audit_attack_replaced_gitdir_killed <<'EOF'
s#	a.seen_ids = ids.n ? &ids : NULL;#	a.seen_ids = NULL;#
EOF
mutant scan_cache_drops_below_a_walked_dir unit:scan_cache <<'EOF'
s#		if (old && sc->walked)#		if (0 && old && sc->walked)#
EOF

mutant stat_at_once_mtime_for_ctime unit:stat_at_once <<'EOF'
s#				o->ctime = (int64_t)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;#				o->ctime = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;#
EOF
mutant stat_at_once_audit_by_mtime git_audit_ctime_not_mtime <<'EOF'
s#	return ps ? ps->state == 1 && audit_since(a, ps->ctime) : audit_changed(a, d);#	return ps ? ps->state == 1 && audit_since(a, ps->mtime) : audit_changed(a, d);#
EOF
mutant scan_prefetch_paths_unjoined unit:stat_at_once <<'EOF'
s#			buf_putc(&paths, '/');#			;#
EOF
mutant scan_prefetch_result_kept unit:stat_at_once <<'EOF'
s#		sc->pre[old - 1].state = 0;	/* once: a second way here looks again */#		;#
EOF
mutant scan_prefetch_name_offset_wraps unit:stat_at_once <<'EOF'
s#const char *nm = r->name < sc->old.nname - 1 ? sc->old.name#const char *nm = r->name + 1 < sc->old.nname ? sc->old.name#
EOF
mutant scan_prefetch_no_path_max unit:stat_at_once <<'EOF'
s#if (len + 1 + nlen >= PATH_MAX || paths.n#if (paths.n#
EOF
mutant scan_prefetch_name_read_whole unit:stat_at_once <<'EOF'
s#nlen = strnlen(nm, PATH_MAX);#nlen = strlen(nm);#
EOF
mutant audit_t0_after_the_scan scan_prefetch_window_audit <<'EOF'
s#		audit_state.scan_began = sc.now;#		;#
EOF

mutant walk_first_by_named_path_only unit:walk_first scan_deep_attack_outside_link_killed <<'EOF'
s#			if (attrib_in_roots(w->pl, &ev[i], norm) != 0)#			if (attrib_in_roots(w->pl, &ev[0], norm) != 0)#
EOF
mutant walk_first_never_for_paths unit:walk_first scan_deep_reader_walks_nothing <<'EOF'
s#			if (attrib_in_roots(w->pl, &ev[i], norm) != 0)#			if (0)#
EOF
mutant walk_first_for_every_call scan_deep_writes_elsewhere_walk_nothing <<'EOF'
s#	if (why != OU_NONE || !s->c || s->unread)#	if (1)#
EOF
mutant walk_first_openat2_in_root_followed scan_deep_attack_openat2_in_root_killed <<'EOF'
s#			if (how[2] & SBX_RESOLVE_IN_ROOT)#			if (0)#
EOF
mutant walk_first_shared_cwd_vfork_allowed scan_deep_attack_shared_cwd_killed <<'EOF'
@@ seccomp_bpf.h
-	{ SC_clone,		0, CMP_ANY_BIT,	SBX_CLONE_FS | SBX_CLONE_FILES,	SBX_RET_USER_NOTIF, RG_OBSERVE,
-	  "observer: a process sharing the cwd or descriptors, vfork's too (attribution)" },
EOF
mutant walk_first_paths_never_loose scan_deep_attack_second_sandbox_flip_killed <<'EOF'
s#		return s->c->what == OW_PATH && !obs_paths_fixed(ev, n);#		return false;#
EOF
mutant walk_first_paths_always_loose scan_deep_writes_elsewhere_walk_nothing <<'EOF'
s#		if (!obs_fixed_dir(ev[i].pid, norm[0] ? norm : "/"))#		if (1)#
EOF
mutant walk_first_local_service_unseen scan_deep_attack_local_service_killed <<'EOF'
s#	    : net_reaches_host(&p->allow_domains)#	    : 0#
EOF

# ---------------------------------------------------------------- sessions and hooks (10f)
mutant session_exec_relative_directory unit:sessions <<'EOF'
-	if (take_str(&c, &cwd, "no directory") && cwd[0] != '/')
+	if (take_str(&c, &cwd, "no directory") && 0)
EOF
mutant session_client_any_root session_planted_socket_ignored <<'EOF'
-		if (lstat(root, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid ||
-		    (st.st_mode & 077))
+		if (lstat(root, &st) < 0 || !S_ISDIR(st.st_mode))
 			continue;
EOF
mutant session_client_any_daemon session_planted_socket_ignored <<'EOF'
-		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 || cr.uid != uid) {
+		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0) {
 			close(fd);
 			continue;
 		}
 		if (path)
EOF
mutant hook_fails_open hook_claude_and_codex <<'EOF'
-	hook_answer(&out, "deny",
+	hook_answer(&out, "allow",
 	    aprintf("%s%s; %s", strncmp(why, "sbx: ", 5) == 0 ? "" : "sbx: ", why,
EOF

# ================================================================ the engine
# in_private CMD...: CMD in a private mount namespace, an empty tmpfs over sbx's runtime places,
# and a pid namespace of its own (its /proc), so that what a mutant leaves running (a session
# daemon its test could not stop, a command waiting for a file) ends with CMD
in_private() {
	if [ "$(id -u)" = 0 ]; then
		unshare -m --propagation private --pid --fork --mount-proc sh -c 'for m in /tmp /var/tmp /dev/shm; do
			mount -t tmpfs -o mode=1777 sbx-mutants "$m" || exit 97; done; exec "$@"' sh "$@"
	else
		"$@"
	fi
}

# apply FILE HUNK: the hunk's kept and removed lines, found once at a line's start, replaced by its
# kept and added lines. Exit 0, or 1 when the text is not there exactly once.
apply() {
	python3 - "$1" "$2" <<'PY'
import sys
path, hunk = sys.argv[1], sys.argv[2]
lines = open(hunk).read().split("\n")[:-1]
src = open(path).read()
if lines and all(l[:1] == "s" and len(l) > 2 for l in lines):
    # sed-style: s|OLD|NEW| (any delimiter), OLD found once anywhere in the file
    for l in lines:
        d = l[1]
        parts = l[2:].split(d)
        if len(parts) != 3 or parts[2] != "":
            sys.exit("not s%sOLD%sNEW%s: %s" % (d, d, d, l))
        if src.count(parts[0]) != 1:
            print("found %d times" % src.count(parts[0]))
            sys.exit(1)
        src = src.replace(parts[0], parts[1], 1)
    open(path, "w").write(src)
    sys.exit(0)
old, new = [], []
for l in lines:
    tag, body = (l[:1] or " "), l[1:]
    if tag in " -":
        old.append(body)
    if tag in " +":
        new.append(body)
    if tag not in " -+":
        sys.exit("a hunk line starts with %r, not ' ', '-' or '+'" % tag)
src = "\n" + src
o, n = "\n" + "\n".join(old) + "\n", "\n" + "\n".join(new) + "\n"
if src.count(o) != 1:
    print("found %d times" % src.count(o))
    sys.exit(1)
open(path, "w").write(src.replace(o, n, 1)[1:])
PY
}

SBX_CC=(cc)
command -v musl-gcc >/dev/null && SBX_CC=(musl-gcc -static)

# build DIR WHAT: sbx and/or tests/unit from DIR's sources; 0, or 1 (the compiler's words in DIR/build.log)
build() {
	local d=$1
	if [[ $2 == *sbx* ]]; then "${SBX_CC[@]}" -O0 -w -o "$d/sbx" "$d/sbx.c" >>"$d/build.log" 2>&1 || return 1; fi
	if [[ $2 == *unit* ]]; then cc -O0 -w -o "$d/tests/unit" "$d/tests/unit.c" >>"$d/build.log" 2>&1 || return 1; fi
	return 0
}

# scratch DIR: a copy of the sources a build needs
scratch() {
	rm -rf "$1" && mkdir -p "$1/tests" &&
		cp "$HERE/sbx.c" "$HERE/seccomp_bpf.h" "$1/" && cp "$HERE/tests/unit.c" "$HERE/tests/sexp.h" "$1/tests/"
}

# run_catchers DIR CATCHER...: each unit filter and test.sh test against DIR's builds; writes
# DIR/result: one line per catcher, "ok|FAIL|skip|none NAME"
run_catchers() {
	local d=$1 c unit=() tests=() line
	shift
	for c in "$@"; do
		case $c in unit:*) unit+=("${c#unit:}") ;; *) tests+=("$c") ;; esac
	done
	: >"$d/result"
	for c in "${unit[@]}"; do
		(cd "$HERE" && in_private env -u UPDATE_GOLDEN timeout 300 "$d/tests/unit" "$c") >"$d/unit-$c.log" 2>&1
		line=$(tail -n 1 "$d/unit-$c.log")
		if [[ $line =~ ^0\ passed,\ 0\ failed$ ]]; then echo "none unit:$c"
		elif [[ $line =~ ^[0-9]+\ passed,\ 0\ failed$ ]]; then echo "ok unit:$c"
		else echo "FAIL unit:$c"; fi >>"$d/result"
	done
	if [ ${#tests[@]} -gt 0 ]; then
		(cd "$HERE" && SBX=$d/sbx in_private timeout 900 ./test.sh "${tests[@]}") >"$d/test.log" 2>&1
		[ $? != 124 ] || echo "FAIL timeout(900s)" >>"$d/result"	# a mutant that hangs the tests is seen
		for c in "${tests[@]}"; do
			line=$(grep -E "^(ok|FAIL|skip) - [^ :]*$c[^ :]*(:|$)" "$d/test.log" | grep -v ' - real_runtime_places_unchanged' |
				awk '{ print $1 }' | sort -u | tr '\n' ' ')
			case $line in
			*FAIL*) echo "FAIL $c" ;;
			*ok*) echo "ok $c" ;;
			*skip*) echo "skip $c" ;;
			*) echo "none $c" ;;
			esac >>"$d/result"
		done
		grep -q '^FAIL - real_runtime_places_unchanged' "$d/test.log" && echo "FAIL real_runtime_places_unchanged" >>"$d/result"
	fi
	return 0
}

# hunk_file NAME: the file the hunk patches (sbx.c, or its "@@ FILE" line, taken off the hunk)
hunk_file() {
	local f
	f=$(sed -n '1s/^@@ *//p' "$TAB/$1.hunk")
	if [ -n "$f" ]; then sed -i 1d "$TAB/$1.hunk"; echo "$f"; else echo sbx.c; fi
}

# try NAME: one mutant, start to end; prints its line
try() {
	local name=$1 d=$W/$1 file what= c status by t0=$SECONDS
	scratch "$d" || { echo "no-build   $name (cannot copy the sources to $d)"; return; }
	file=$(hunk_file "$name")
	if ! apply "$d/$file" "$TAB/$name.hunk" >"$d/apply.log" 2>&1; then
		echo "no-apply   $name ($file: $(head -c 200 "$d/apply.log"))"; return
	fi
	for c in ${CATCH[$name]}; do case $c in unit:*) what+=" unit" ;; *) what+=" sbx" ;; esac; done
	if ! build "$d" "$what"; then
		echo "no-build   $name ($(grep -m1 error "$d/build.log" | cut -c1-160))"; return
	fi
	# shellcheck disable=SC2086
	run_catchers "$d" ${CATCH[$name]}
	by=$(awk '$1 == "FAIL" { print $2 }' "$d/result" | tr '\n' ' ')
	if [ -n "$by" ]; then
		status=caught
		for c in $by; do grep -qx "FAIL $c" "$W/baseline/result" 2>/dev/null && status=unsure; done
		echo "$(printf '%-10s' $status) $name (by ${by% }; $((SECONDS - t0)) s)"
	elif grep -q '^ok ' "$d/result"; then
		echo "survived   $name ($(grep -c '^ok ' "$d/result") catchers passed: ${CATCH[$name]}; $((SECONDS - t0)) s)"
	elif grep -q '^none ' "$d/result"; then
		echo "no-build   $name (a catcher names no test: $(awk '$1 == "none" { print $2 }' "$d/result" | tr '\n' ' '))"
	else
		echo "skipped    $name (every catcher skipped)"
	fi
	[ -n "${MUTANTS_KEEP:-}" ] || rm -rf "$d"
}

# ================================================================ main
# (one function, read whole before it runs: the table can be edited while a run goes on)
main() {
	local n p ok f bad all start running C S A B K U tried
	local sel=()
	for n in "${NAMES[@]}"; do
		ok=$(( ${#PICK[@]} == 0 ))
		for p in "${PICK[@]}"; do [[ $n == *"$p"* ]] && ok=1; done
		[ "$ok" = 1 ] && sel+=("$n")
	done
	if [ -n "$LIST" ]; then
		for n in "${sel[@]}"; do printf '%-40s %s\n' "$n" "${CATCH[$n]}"; done
		echo "${#sel[@]} mutants"
		return 0
	fi
	[ ${#sel[@]} -gt 0 ] || { echo "mutants.sh: no mutant matches ${PICK[*]}" >&2; return 2; }
	if [ -n "$CHECK" ]; then
		bad=0
		for n in "${sel[@]}"; do
			f=$(hunk_file "$n")
			cp "$HERE/$f" "$TAB/copy" && apply "$TAB/copy" "$TAB/$n.hunk" >"$TAB/apply.log" 2>&1 ||
				{ echo "no-apply   $n ($f: $(head -c 200 "$TAB/apply.log"))"; bad=$((bad + 1)); }
		done
		echo "mutants: $(( ${#sel[@]} - bad )) of ${#sel[@]} apply"
		[ "$bad" = 0 ]
		return
	fi
	case $W/ in /tmp/* | /var/tmp/* | /dev/shm/*) echo "mutants.sh: MUTANTS_DIR=$W is under a place each run covers with a tmpfs" >&2; return 2 ;; esac
	mkdir -p "$W" || return 2
	[ "$(id -u)" = 0 ] || echo "mutants.sh: not root: the runs share this machine's runtime places, and root-only tests skip" >&2
	start=$(date +%s)

	if [ -n "$BASELINE" ]; then
		# every catcher the chosen mutants name, against the sources as they are: a catcher that
		# fails here cannot tell a mutant from a flaky run (its mutants are "unsure")
		all=()
		for n in "${sel[@]}"; do for p in ${CATCH[$n]}; do [[ " ${all[*]} " == *" $p "* ]] || all+=("$p"); done; done
		scratch "$W/baseline" && build "$W/baseline" "sbx unit" ||
			{ echo "mutants.sh: the unmutated sources do not build: $(tail -3 "$W/baseline/build.log")"; return 2; }
		run_catchers "$W/baseline" "${all[@]}"
		if grep -qv '^ok ' "$W/baseline/result"; then
			echo "baseline: not every catcher passes on the unmutated sources:"
			grep -v '^ok ' "$W/baseline/result" | sed 's/^/  /'
		else
			echo "baseline: all ${#all[@]} catchers pass on the unmutated sources ($(( $(date +%s) - start )) s)"
		fi
	fi

	rm -f "$W"/*.line "$W"/*.line.shown
	running=0
	for n in "${sel[@]}"; do
		try "$n" >"$W/$n.line" 2>&1 &
		running=$((running + 1))
		if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
		show_done
	done
	wait
	show_done
	count() { cat "$W"/*.line 2>/dev/null | grep -c "^$1 "; }
	C=$(count caught) S=$(count survived) A=$(count no-apply) B=$(count no-build) K=$(count skipped) U=$(count unsure)
	tried=$((C + S))
	rm -f "$W"/*.line "$W"/*.line.shown
	echo "mutants: $C caught, $S survived of $tried tried ($(( tried ? 100 * C / tried : 0 ))%); $A do not apply, $B do not build, $K skipped, $U unsure; $(( $(date +%s) - start )) s"
	[ "$S" = 0 ] && [ "$A" = 0 ] && [ "$B" = 0 ]
}

# show_done: each finished mutant's line, once
show_done() {
	local f
	for f in "$W"/*.line; do
		[ -s "$f" ] && ! [ -e "$f.shown" ] && cat "$f" && : >"$f.shown"
	done 2>/dev/null
	return 0
}

{ main "$@"; exit $?; }
