/* tests/unit.c: unit tests for sbx's pure parts.
 *
 * sbx.c is included whole (its main renamed), so every static function is
 * reachable: both policy readers, the matchers, the fact finder and planner
 * over a fake disk, and the bwrap argv renderer against golden files in
 * tests/golden/. Cases are tables. UPDATE_GOLDEN=1 rewrites the goldens.
 *
 *   make unit            (also built with -DSBX_FORCE_MACOS)
 */
#define main sbx_main
#include "../sbx.c"
#include "sexp.h"
#include <regex.h>
#undef main

static int n_pass, n_fail;

#define S(x)	((x) ? (x) : "(null)")
#define CHECK(cond, ...) check_((cond), __FILE__, __LINE__, __VA_ARGS__)

static void __attribute__((format(printf, 4, 5)))
check_(bool ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		n_pass++;
		return;
	}
	n_fail++;
	printf("not ok %d - %s:%d: ", n_pass + n_fail, file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void
check_str(const char *got, const char *want, const char *what, int line)
{
	check_(strcmp(got, want) == 0, __FILE__, line, "%s:\n--- got ---\n%s\n--- want ---\n%s", what, got, want);
}

/* ---- a fake disk: a list of nodes ------------------------------------ */

struct fnode { const char *path; enum fkind kind; const char *target; bool unlistable; const char *content; };
static struct vec fake_nodes;

static struct fnode *
fake_find(const char *path)
{
	size_t i;

	for (i = 0; i < fake_nodes.n; i++)
		if (strcmp(((struct fnode *)fake_nodes.v[i])->path, path) == 0)
			return fake_nodes.v[i];
	return NULL;
}

static void
fake_add(const char *path, enum fkind kind, const char *target)
{
	struct fnode *n;

	if (strcmp(path, "/") != 0) {
		char *dir = path_dirname(path);

		if (!fake_find(dir))
			fake_add(dir, FK_DIR, NULL);
	}
	if ((n = fake_find(path))) {
		n->kind = kind;
		n->target = target;
		return;
	}
	n = amalloc(sizeof(*n));
	n->path = astrdup(path);
	n->kind = kind;
	n->target = target;
	vec_push(&fake_nodes, n);
}

static void fake_content(const char *path, const char *content);

/* Build a tree from "d PATH", "f PATH", "l PATH TARGET", "x PATH" (unlistable dir), "o PATH" (a FIFO),
 * "c PATH TEXT" (a file holding TEXT, "\\n" for a newline), ';'-separated. */
static void
fake_tree(const char *spec)
{
	char *copy = astrdup(spec), *item, *save;

	fake_nodes.n = 0;
	fake_add("/", FK_DIR, NULL);
	for (item = strtok_r(copy, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
		char kind, path[512], target[512] = "";

		while (*item == ' ')
			item++;
		if (!*item)
			continue;
		if (sscanf(item, "%c %511s %511s", &kind, path, target) < 2)
			abort();
		if (kind == 'c') {
			const char *t = strstr(item, path) + strlen(path);
			struct buf b = { 0 };

			for (t += *t == ' '; *t; t++) {
				if (t[0] == '\\' && (t[1] == 'n' || t[1] == 't')) {
					buf_putc(&b, t[1] == 'n' ? '\n' : '\t');
					t++;
				} else {
					buf_putc(&b, *t);
				}
			}
			fake_content(path, astrdup(b.p ? b.p : ""));
			free(b.p);
			continue;
		}
		fake_add(path, kind == 'd' || kind == 'x' ? FK_DIR : kind == 'l' ? FK_LINK : kind == 'o' ? FK_OTHER : FK_FILE,
		    kind == 'l' ? astrdup(target) : NULL);
		if (kind == 'x')
			fake_find(path)->unlistable = true;
	}
}

static enum fkind
fake_lstat(void *ctx, const char *path, struct fid *id)
{
	struct fnode *n = fake_find(path);

	(void)ctx;
	if (id)
		memset(id, 0, sizeof(*id));
	return n ? n->kind : FK_MISSING;
}

static int
fake_readlink(void *ctx, const char *path, char *buf, size_t len)
{
	struct fnode *n = fake_find(path);

	(void)ctx;
	if (!n || n->kind != FK_LINK)
		return -1;
	snprintf(buf, len, "%s", n->target);
	return (int)strlen(buf);
}

struct fdir { const char *path; size_t next; };

static void *
fake_opendir(void *ctx, void *parent, const char *name)
{
	const char *path = parent ? path_join(((struct fdir *)parent)->path, name) : name;
	struct fnode *n = fake_find(path);
	struct fdir *d;

	(void)ctx;
	if (!n || n->kind != FK_DIR) {
		errno = n && n->kind == FK_LINK ? ELOOP : ENOENT;
		return NULL;
	}
	if (n->unlistable) {
		errno = EACCES;
		return NULL;
	}
	d = amalloc(sizeof(*d));
	d->path = n->path;
	return d;
}

static int
fake_readdir(void *ctx, void *dir, const char **name, enum fkind *kind)
{
	struct fdir *d = dir;

	(void)ctx;
	for (; d->next < fake_nodes.n; d->next++) {
		struct fnode *n = fake_nodes.v[d->next];

		if (strcmp(n->path, "/") != 0 && strcmp(path_dirname(n->path), d->path) == 0) {
			*name = strrchr(n->path, '/') + 1;
			*kind = n->kind;
			d->next++;
			return 1;
		}
	}
	return 0;
}

static void
fake_closedir(void *ctx, void *dir)
{
	(void)ctx;
	(void)dir;
}

/* A file's content (default empty); a symlink is followed, as real_readfile does. */
static int
fake_readfile(void *ctx, const char *path, size_t max, struct buf *out)
{
	struct fnode *n = fake_find(path);
	int hops = 0;

	(void)ctx;
	while (n && n->kind == FK_LINK && hops++ < 8)
		n = fake_find(n->target);
	if (!n || n->kind != FK_FILE) {
		errno = n ? EINVAL : ENOENT;
		return -1;
	}
	out->n = 0;
	if (n->content && strlen(n->content) > max) {
		errno = EFBIG;
		return -1;
	}
	buf_puts(out, n->content ? n->content : "");
	if (!out->p)
		buf_grow(out, 1);
	out->p[out->n] = '\0';
	return 0;
}

/* Give a file of the fake tree its bytes (made if missing). */
static void
fake_content(const char *path, const char *content)
{
	if (!fake_find(path))
		fake_add(path, FK_FILE, NULL);
	fake_find(path)->content = content;
}

static const struct disk_ops fake_disk_ops = { fake_lstat, fake_readlink, fake_opendir, fake_readdir, fake_closedir,
	fake_readfile, NULL };
static struct disk fake_disk = { &fake_disk_ops, NULL };

/* ---- helpers ------------------------------------------------------- */

static struct pol_ctx test_ctx = { "/p", "/home/u", 0, { 0 } };

/* Parse policy text; returns NULL on success, else the formatted error. */
static const char *
parse(struct policy *p, const char *text)
{
	struct err e = { 0 };
	char *copy = astrdup(text), msg[1200];

	pol_init(p);
	test_ctx.include_depth = 0;
	if (pol_parse_text(p, &test_ctx, copy, strlen(copy), "t", &e) == 0)
		return NULL;
	err_format(&e, msg, sizeof(msg));
	return astrdup(msg);
}

static const char *const mkind_names[] = { "ro", "rw", "empty", "tmpfs", "remount-ro", "from", "pinlink" };	/* ORDER: enum mkind */

/* The plan of a policy over a fake tree (plan_text's), or NULL. For the
 * sessions' judge (Linux). */
static __attribute__((unused)) struct plan *
plan_of(const char *policy, const char *tree)
{
	struct policy p;
	struct run_paths rp = { "/p", NULL, "/tmp/sbx-0/run/tmp", NULL, "/home/u", NULL, { NULL }, { 0 }, NULL, NULL, { NULL } };
	struct vec facts = { 0 };
	struct plan *pl = amalloc(sizeof(*pl));
	struct err e = { 0 };
	const char *why;

	if (parse(&p, policy))
		return NULL;
	fake_tree(tree);
	if (plan_resolve(&p, &fake_disk, &rp, &facts, &e) < 0 || plan_build(&facts, p.fs_disabled, pl, &why) < 0)
		return NULL;
	return pl;
}

/* Plan a policy over a fake tree: "KIND PATH" per mount, "ph f|d PATH" per
 * placeholder; the planner's warnings (the lines main prints) to warnings,
 * when it is not NULL. */
static const char *
plan_text_warned(const char *policy, const char *tree, struct vec *warnings)
{
	struct policy p;
	const char *perr = parse(&p, policy), *why;
	struct run_paths rp = { "/p", NULL, "/tmp/sbx-0/run/tmp", NULL, "/home/u", NULL, { NULL }, { 0 }, NULL, NULL, { NULL } };
	struct vec facts = { 0 };
	struct fact_finder fx;
	struct plan pl;
	struct err e = { 0 };
	struct buf b = { 0 };
	char msg[1200];
	size_t i;

	if (perr)
		return aprintf("parse error: %s", perr);
	fake_tree(tree);
	fx_init(&fx, &p, &fake_disk, rp.cwd, rp.home, &facts, &e);	/* plan_resolve's steps, fx kept */
	if (plan_resolve_rules(&fx) < 0 || (plan_add_run_paths(&fx, &rp), plan_resolve_scan(&fx, &rp)) < 0) {
		err_format(&e, msg, sizeof(msg));
		return aprintf("error: %s", msg);
	}
	if (warnings)
		*warnings = fx.warnings;
	if (plan_build(&facts, p.fs_disabled, &pl, &why) < 0)
		return aprintf("error: %s", why);
	for (i = 0; i < pl.mounts.n; i++) {
		const struct mount *m = pl.mounts.v[i];

		buf_printf(&b, "%s %s\n", mkind_names[m->kind], m->path);
	}
	for (i = 0; i < pl.placeholders.n; i++) {
		const struct placeholder *ph = pl.placeholders.v[i];

		buf_printf(&b, "ph %c %s\n", "dfopj"[ph->kind], ph->path);	/* ORDER: enum phkind */
	}
	{
		const char *s = astrdup(b.p ? b.p : "");

		free(b.p);
		return s;
	}
}

static const char *
plan_text(const char *policy, const char *tree)
{
	return plan_text_warned(policy, tree, NULL);
}

/* Only the lines of a plan that match needle: alternatives split by "|", each
 * a substring, or with a trailing "$" a line ending (the mandatory
 * placeholders at the top of each root are the same in most cases). */
static const char *
plan_lines_with(const char *plan, const char *needle)
{
	struct buf b = { 0 };
	char *copy = astrdup(plan), *line, *save;
	const char *s;

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *alts = astrdup(needle), *alt, *save2;

		for (alt = strtok_r(alts, "|", &save2); alt; alt = strtok_r(NULL, "|", &save2)) {
			size_t n = strlen(alt), ln = strlen(line);
			bool hit = alt[n - 1] == '$' ? ln >= n - 1 && strncmp(line + ln - (n - 1), alt, n - 1) == 0
			    : strstr(line, alt) != NULL;

			if (hit) {
				buf_printf(&b, "%s\n", line);
				break;
			}
		}
	}
	s = astrdup(b.p ? b.p : "");
	free(b.p);
	return s;
}

/* ---- the line format ----------------------------------------------- */

static void
test_line_format(void)
{
	struct policy p;
	const char *e;
	struct buf b = { 0 };
	static const struct { const char *text, *want; } errors[] = {
		{ "alow-write .\n", "t:1: unknown directive \"alow-write\" (did you mean \"allow-write\"?)" },
		{ "frobnicate\n", "t:1: unknown directive \"frobnicate\" (sbx --help lists them)" },
		{ "# c\nallow-write\n", "t:2: allow-write takes PATH" },
		{ "allow-all-unix-sockets yes\n", "t:1: allow-all-unix-sockets takes no argument" },
		{ "allow-write a b\n", "t:1: allow-write takes one PATH (or \"literal PATH\" for a path never globbed)" },
		{ "allow-write ~bob/x\n", "t:1: allow-write ~bob/x: ~user paths are not supported; write the full path" },
		{ "allow-write \"unterminated\n", "t:1: unterminated quoted argument" },
		{ "allow-write \"a\"b\n", "t:1: text right after a closing quote" },
		{ "allow-write \"a\\n\"\n", "t:1: unknown escape in quoted argument (only \\\" and \\\\)" },
		{ "mandatory-deny-depth 0\n", "t:1: mandatory-deny-depth 0: out of range (1..10)" },
		{ "mandatory-deny-depth 11\n", "t:1: mandatory-deny-depth 11: out of range (1..10)" },
		{ "mandatory-deny-depth x\n", "t:1: mandatory-deny-depth x: not a number (1..10)" },
		{ "observe-writes maybe\n", "t:1: observe-writes takes on or off, not \"maybe\"" },
		{ "bridge tcp\n", "t:1: bridge takes fd or socat, not \"tcp\"" },
		{ "bwrap-path bin/bwrap\n", "t:1: bwrap-path bin/bwrap: binary path must be absolute" },
		{ "ignore-violations onlyone\n", "t:1: ignore-violations takes COMMAND LINE" },
		{ "deny-domain a.com \"\"\n", "t:1: deny-domain a.com: the reason is empty" },
		{ "deny-address 10.0.0.0/33\n", NULL },
		{ "allow-host-port 0\n", "t:1: allow-host-port 0: not a port (1..65535)" },
		{ "allow-host-port 65536\n", "t:1: allow-host-port 65536: not a port (1..65535)" },
		{ "allow-host-port 3128\n", "t:1: allow-host-port 3128: the proxy listens there inside" },
		{ "allow-domain *\n", NULL },
		{ "\n   \n", "t: policy file is empty (sbx refuses to fall back to a default)" },
		{ "", "t: policy file is empty (sbx refuses to fall back to a default)" },
	};
	size_t i;

	for (i = 0; i < LEN(errors); i++) {
		e = parse(&p, errors[i].text);
		CHECK(e != NULL, "policy %zu should fail: %s", i, errors[i].text);
		if (e && errors[i].want)
			check_str(e, errors[i].want, errors[i].text, __LINE__);
	}

	/* a NUL byte and an over-long line */
	{
		char text[] = "allow-write .\nallow-write a\0b\n";
		struct err er = { 0 };

		pol_init(&p);
		CHECK(pol_parse_text(&p, &test_ctx, text, sizeof(text) - 1, "t", &er) < 0 && er.line == 2 &&
		    strstr(er.msg, "NUL"), "NUL byte refused with its line: %d %s", er.line, er.msg);
	}
	{
		char *text = amalloc(5000);

		memcpy(text, "allow-write /", 13);
		memset(text + 13, 'a', 4900);
		e = parse(&p, text);
		CHECK(e && strstr(e, "longer than 4096"), "long line refused: %s", e ? e : "(accepted)");
	}

	/* every directive parses, and the printer writes it back the same */
	e = parse(&p,
	    "allow-write .\nallow-write ~/x/**\nallow-write \"/with space/a\\\"q\"\ndeny-write literal ./f[1]\n"
	    "deny-read ~\nallow-read ~/.ssh/known_hosts\nallow-domain *.example.com\nallow-domain a.b:443\n"
	    "allow-domain [::1]:8080\nallow-domain localhost\ndeny-domain * \ndeny-domain github.com:22 \"use https\"\n"
	    "deny-address 10.0.0.0/8\ndeny-address fc00::/7\ndeny-address 192.168.1.10\n"
	    "allow-unix-socket /var/run/docker.sock\nallow-all-unix-sockets\nallow-local-binding\n"
	    "allow-mach-lookup com.apple.x.*\nmandatory-deny-depth 5\nallow-git-config\ngit-safe-directory /srv\n"
	    "weaker-nested-sandbox\nallow-nested-userns\nweaker-network-isolation\nallow-apple-events\nallow-pty\n"
	    "ignore-violations * /dev/tty\nignore-violations \"npm i\" x\nbridge socat\nobserve-writes off\n"
	    "bwrap-path /usr/bin/bwrap\nsocat-path /usr/bin/socat\n  # comment\nallow-write /q # trailing\n"
	    "allow-host-port 5432\nallow-host-port 8080\n");
	CHECK(e == NULL, "all directives parse: %s", e ? e : "");
	CHECK(p.paths[PL_ALLOW_WRITE].n == 4, "allow-write count %zu", p.paths[PL_ALLOW_WRITE].n);
	check_str(((struct pathrule *)p.paths[PL_ALLOW_WRITE].v[0])->path, "/p", "relative path", __LINE__);
	check_str(((struct pathrule *)p.paths[PL_ALLOW_WRITE].v[1])->path, "/home/u/x", "~ and /**", __LINE__);
	check_str(((struct pathrule *)p.paths[PL_ALLOW_WRITE].v[2])->path, "/with space/a\"q", "quoted", __LINE__);
	CHECK(((struct pathrule *)p.paths[PL_DENY_WRITE].v[0])->literal, "literal flag");
	CHECK(p.mandatory_deny_depth == 5 && p.bridge == BRIDGE_SOCAT && !p.observe_writes && p.allow_pty &&
	    p.allow_git_config && p.weaker_nested_sandbox && p.allow_all_unix_sockets, "flags and values");
	check_str(((struct domrule *)p.deny_domains.v[1])->reason, "use https", "deny reason", __LINE__);
	pol_print_lines(&p, &b);
	{
		struct policy q;
		struct buf b2 = { 0 };
		const char *e2 = parse(&q, b.p);

		CHECK(e2 == NULL, "printed policy parses: %s", e2 ? e2 : "");
		pol_print_lines(&q, &b2);
		check_str(b2.p, b.p, "line round trip", __LINE__);
		b2.n = 0;
		pol_print_json(&p, &b2);
		e2 = parse(&q, b2.p);
		CHECK(e2 == NULL, "printed JSON parses: %s\n%s", e2 ? e2 : "", b2.p);
		b2.n = 0;
		pol_print_lines(&q, &b2);
		check_str(b2.p, b.p, "JSON round trip", __LINE__);
		free(b2.p);
	}
	free(b.p);
}

/* ---- the JSON reader and srt's schema ---------------------------- */

static void
test_json(void)
{
	struct policy p;
	const char *e;
	static const struct { const char *text, *want; } errors[] = {
		{ "{", "t:1:2: expected a key in double quotes" },
		{ "{\"network\": {},}", "t:1:16: trailing comma" },
		{ "{ /* c */ }", "t:1:3: expected a key in double quotes" },
		{ "{\"a\": 01}", "t:1:8: expected ',' or '}'" },
		{ "{\"filesystem\": {\"denyReed\": []}}", "t:1:17: unknown key \"denyReed\" in filesystem (did you mean \"denyRead\"?)" },
		{ "{\"netwrok\": {}}", "t:1:2: unknown key \"netwrok\" (did you mean \"network\"?)" },
		{ "{\"network\": {\"allowedDomains\": \"a.com\"}}", "t:1:32: network.allowedDomains: expected an array, got a string" },
		{ "{\"network\": {\"allowedDomains\": [1]}}", "t:1:33: network.allowedDomains[0]: expected a string, got a number" },
		{ "{\"network\": {\"allowedDomains\": [\"*.com\"]}}", NULL },
		{ "{\"filesystem\": {\"allowWrite\": [{\"path\": \"x\"}]}}", "t:1:32: filesystem.allowWrite[0]: expected a path, or { \"path\": \"<path>\", \"literal\": true }" },
		{ "{\"filesystem\": {\"allowWrite\": [{\"path\": \"x\", \"literal\": true, \"z\": 1}]}}", NULL },
		{ "{\"a\": 1, \"a\": 2}", "t:1:10: duplicate key \"a\"" },
		{ "{\"network\": {\"allowedDomains\": [\"\\ud800\"]}}", NULL },
		{ "{\"network\": {\"allowedDomains\": [\"\\udc00x\"]}}", NULL },
		{ "{\"network\": {\"allowedDomains\": [\"a\\u0000b\"]}}", NULL },
		{ "{\"network\": {\"allowedDomains\": [\"\x01\"]}}", NULL },
		{ "{\"network\": {\"allowedDomains\": [\"\xc3\x28\"]}}", NULL },
		{ "{\"credentials\": {\"envVar\": []}}", "t:1:18: unknown key \"envVar\" in credentials (did you mean \"envVars\"?)" },
		{ "{\"network\": {\"tlsTerminate\": {}}}", NULL },
		{ "{\"network\": {\"httpProxyPort\": 0}}", "t:1:31: network.httpProxyPort: expected a port number (1..65535)" },
		{ "{\"network\": {\"mitmProxy\": {}}}", NULL },
		{ "{\"mandatoryDenySearchDepth\": 2.5}", "t:1:30: mandatoryDenySearchDepth: expected an integer, got a number" },
		{ "{\"mandatoryDenySearchDepth\": 11}", "t:1:30: mandatoryDenySearchDepth: must be between 1 and 10" },
		{ "{\"bwrapPath\": \"bwrap\"}", "t:1:15: bwrapPath bwrap: binary path must be absolute" },
		{ "{\"network\": {\"deniedDomains\": [\"a.com\"], \"deniedDomainReasons\": {\"b.com\": \"x\"}}}", "t:1:66: network.deniedDomainReasons: \"b.com\" is not an entry of network.deniedDomains" },
		{ "{\"enableWeakerNestedSandbox\": \"yes\"}", "t:1:31: enableWeakerNestedSandbox: expected a boolean, got a string" },
		{ "[]", "t:1: unknown directive \"[]\" (sbx --help lists them)" },
		{ " [1]", NULL },
		{ "{} x", "t:1:4: text after the end of the JSON value" },
		{ "{\"a\": tru}", "t:1:7: unexpected word (JSON has true, false and null)" },
		{ "{\"ignoreViolations\": {\"*\": \"x\"}}", "t:1:28: ignoreViolations[\"*\"]: expected an array of strings, got a string" },
	};
	size_t i;

	for (i = 0; i < LEN(errors); i++) {
		e = parse(&p, errors[i].text);
		CHECK(e != NULL, "JSON %zu should fail: %s", i, errors[i].text);
		if (e && errors[i].want)
			check_str(e, errors[i].want, errors[i].text, __LINE__);
	}
	/* deep nesting is bounded */
	{
		char deep[200];

		memset(deep, '[', 100);
		deep[100] = 0;
		e = parse(&p, aprintf("{\"a\": %s", deep));
		CHECK(e && strstr(e, "nested deeper"), "depth bound: %s", e ? e : "(accepted)");
	}

	/* the whole srt schema, as srt's docs write it */
	e = parse(&p,
	    "{\n"
	    "  \"network\": {\n"
	    "    \"allowedDomains\": [\"github.com\", \"*.github.com\", \"[2001:db8::1]:443\"],\n"
	    "    \"deniedDomains\": [\"evil.github.com\", \"*:22\"],\n"
	    "    \"deniedDomainReasons\": {\"*:22\": \"no ssh \\u00e9 \\ud83d\\ude00\"},\n"
	    "    \"deniedResolvedAddresses\": [\"10.0.0.0/8\", \"fd00::/8\"],\n"
	    "    \"allowUnixSockets\": [\"/var/run/docker.sock\"], \"allowAllUnixSockets\": false,\n"
	    "    \"allowLocalBinding\": true, \"allowMachLookup\": [\"com.apple.*\"], \"strictAllowlist\": true\n"
	    "  },\n"
	    "  \"filesystem\": {\n"
	    "    \"denyRead\": [\"~/.ssh\", {\"path\": \"/a[1]\", \"literal\": true}], \"allowRead\": [\"~/.ssh/config\"],\n"
	    "    \"allowWrite\": [\".\", \"/tmp\"], \"denyWrite\": [\".env\"], \"allowGitConfig\": true, \"disabled\": false\n"
	    "  },\n"
	    "  \"ignoreViolations\": {\"*\": [\"/dev/tty\"], \"npm\": [\"a\", \"b\"]},\n"
	    "  \"enableWeakerNestedSandbox\": true, \"allowNestedUserNamespaces\": true,\n"
	    "  \"enableWeakerNetworkIsolation\": false, \"allowAppleEvents\": false, \"allowPty\": true,\n"
	    "  \"ripgrep\": {\"command\": \"rg\"}, \"seccomp\": {\"applyPath\": \"/x\"}, \"javaAgentJarPath\": \"/j.jar\",\n"
	    "  \"mandatoryDenySearchDepth\": 4, \"bwrapPath\": \"/usr/bin/bwrap\", \"socatPath\": \"/usr/bin/socat\",\n"
	    "  \"git\": {\"safeDirectories\": [\"/srv/r\"]}, \"windows\": {},\n"
	    "  \"sbx\": {\"bridge\": \"socat\", \"observeWrites\": false}\n"
	    "}\n");
	CHECK(e == NULL, "srt schema parses: %s", e ? e : "");
	CHECK(p.allow_domains.n == 3 && p.deny_domains.n == 2 && p.ignores.n == 3 && p.mandatory_deny_depth == 4 &&
	    p.allow_local_binding && !p.allow_all_unix_sockets && p.weaker_nested_sandbox && p.allow_pty &&
	    p.bridge == BRIDGE_SOCAT && !p.observe_writes && p.git_safe_dirs.n == 1, "srt schema values");
	check_str(((struct domrule *)p.deny_domains.v[1])->reason, "no ssh \xc3\xa9 \xf0\x9f\x98\x80",
	    "escapes and surrogate pairs", __LINE__);
	CHECK(((struct pathrule *)p.paths[PL_DENY_READ].v[1])->literal, "literal entry");
	check_str(((struct pathrule *)p.paths[PL_DENY_WRITE].v[0])->path, "/p/.env", "JSON relative path", __LINE__);
	/* required srt lists may be omitted */
	CHECK(parse(&p, "{}") == NULL && parse(&p, "{\"network\": {}}") == NULL, "empty lists optional");
}

/* ---- domain patterns and addresses (srt domain-pattern.js cases) ---- */

static void
test_patterns(void)
{
	static const struct { const char *pat; bool deny, ok; } cases[] = {
		{ "example.com", false, true }, { "*.example.com", false, true }, { "*.co.uk", false, true },
		{ "example.com:443", false, true }, { "localhost", false, true }, { "localhost:3000", false, true },
		{ "1.2.3.4", false, true }, { "[::1]", false, true }, { "[2001:db8::1]:443", false, true },
		{ "::1", false, false }, { "[fe80::1%eth0]", false, true },
		{ "*", false, false }, { "*", true, true }, { "*:22", true, true }, { "*:22", false, false },
		{ "*.com", false, false }, { "foo*.com", false, false }, { "a.*.com", false, false },
		{ "http://a.com", false, false }, { "a.com/x", false, false }, { "a.com:0", false, false },
		{ "a.com:08", false, false }, { "a.com:99999", false, false }, { "a.com:65535", false, true },
		{ "foo", false, false }, { ".a.com", false, false }, { "a.com.", false, false },
		{ "*.a..com", false, false }, { "[::1]junk", false, false }, { "a:b:c", false, false },
		{ "", false, false }, { "a_b.com", false, true }, { "a b.com", false, false },
	};
	static const struct { const char *s; bool ok; int prefix; } cidrs[] = {
		{ "10.0.0.0/8", true, 8 }, { "192.168.1.10", true, 32 }, { "fc00::/7", true, 7 }, { "::1", true, 128 },
		{ "10.0.0.0/33", false, 0 }, { "10.0.0/8", false, 0 }, { "[::1]", false, 0 }, { "1.2.3.4/", false, 0 },
		{ "1.2.3.4/08", false, 0 }, { "fc00::/129", false, 0 }, { "x", false, 0 }, { "/8", false, 0 },
	};
	size_t i;

	for (i = 0; i < LEN(cases); i++) {
		const char *why;
		bool ok = match_check_pattern(cases[i].pat, cases[i].deny, &why) == 0;

		CHECK(ok == cases[i].ok, "pattern \"%s\" (%s list): got %s", cases[i].pat, cases[i].deny ? "deny" : "allow",
		    ok ? "valid" : "invalid");
	}
	for (i = 0; i < LEN(cidrs); i++) {
		int fam, prefix = -1;
		unsigned char a[16];
		bool ok = match_parse_cidr(cidrs[i].s, &fam, a, &prefix) == 0;

		CHECK(ok == cidrs[i].ok && (!ok || prefix == cidrs[i].prefix), "cidr \"%s\": got %d/%d", cidrs[i].s, ok,
		    prefix);
	}
}

/* ---- globs and path resolution ------------------------------------ */

/* Does a test policy deny through a glob? Where a deny's glob is a pattern
 * in the profile (SBX_DENY_GLOB_PATTERNS, macOS), the plan never expands it:
 * test_seatbelt_regex and the oracle (tests/seatbelt_oracle.py) check it
 * there, and the plan cases that expand one are Linux's. */
static bool
skip_deny_glob(const char *policy)
{
	return SBX_DENY_GLOB_PATTERNS && strpbrk(policy, "*?[") && strstr(policy, "deny");
}

static void
test_globs_and_paths(void)
{
	static const struct { const char *pat, *s; bool m; } comp[] = {
		{ "*", "abc", true }, { "*", ".hidden", true }, { "a*c", "abbbc", true }, { "a*c", "abcd", false },
		{ "?", "a", true }, { "?", "", false }, { "[abc]x", "bx", true }, { "[!abc]x", "bx", false },
		{ "[a-c]", "b", true }, { "[a-c]", "d", false }, { "[]]", "]", true }, { "[abc", "a", false },
		{ "*.env", ".env", true }, { "*.env", "prod.env", true }, { "f[1]", "f1", true },
	};
	struct vec out = { 0 };
	const char *why;
	struct resolved r = { 0 };
	size_t i;

	for (i = 0; i < LEN(comp); i++)
		CHECK(glob_match_component(comp[i].pat, comp[i].s) == comp[i].m, "glob %s ~ %s", comp[i].pat, comp[i].s);

	fake_tree("f /p/a.env; f /p/sub/b.env; f /p/sub/deep/c.env; f /p/x.txt; l /p/link /etc; f /etc/d.env");
	CHECK(glob_expand(&fake_disk, "/p/*.env", &out, &why) == 0 && out.n == 1, "*.env: %zu", out.n);
	out.n = 0;
	CHECK(glob_expand(&fake_disk, "/p/**/*.env", &out, &why) == 0 && out.n == 3,
	    "**/*.env matches 3 (zero or more dirs, not through the link): %zu", out.n);
	out.n = 0;
	CHECK(glob_expand(&fake_disk, "/p/nomatch*", &out, &why) == 0 && out.n == 0, "no match is fine");

	/* resolve_path: symlinks, missing tails, files in the middle, loops */
	fake_tree("d /real/dir; l /p/l1 /real; l /p/rel dir2; d /p/dir2; l /p/loop /p/loop; f /p/.git; l /p/dang /nowhere/x");
	CHECK(resolve_path(&fake_disk, "/p/l1/dir", &r, &why) == 0 && strcmp(r.path, "/real/dir") == 0 &&
	    r.kind == FK_DIR && r.via_link, "absolute link: %s", S(r.path));
	CHECK(resolve_path(&fake_disk, "/p/rel", &r, &why) == 0 && strcmp(r.path, "/p/dir2") == 0, "relative link: %s",
	    S(r.path));
	CHECK(resolve_path(&fake_disk, "/p/l1/new/deeper", &r, &why) == 0 && r.kind == FK_MISSING &&
	    strcmp(r.path, "/real/new/deeper") == 0 && strcmp(r.first_missing, "/real/new") == 0,
	    "missing tail keeps its names: %s (%s)", S(r.path), S(r.first_missing));
	CHECK(resolve_path(&fake_disk, "/p/dang", &r, &why) == 0 && r.kind == FK_MISSING &&
	    strcmp(r.first_missing, "/nowhere") == 0, "dangling link followed by name: %s", S(r.first_missing));
	CHECK(resolve_path(&fake_disk, "/p/loop", &r, &why) < 0 && strstr(why, "symbolic links"), "loop refused");
	CHECK(resolve_path(&fake_disk, "/p/.git/hooks", &r, &why) == 0 && r.through_file &&
	    strcmp(r.path, "/p/.git") == 0, "file in the middle: %s", S(r.path));
	CHECK(resolve_path(&fake_disk, "/p/x/../dir2", &r, &why) < 0, "\"..\" after a missing name refused");
	CHECK(resolve_path(&fake_disk, "/p/dir2/../l1", &r, &why) == 0 && strcmp(r.path, "/real") == 0, "..: %s", S(r.path));
	CHECK(path_order("/a", "/a/b") < 0 && path_order("/a/b", "/a-b") < 0 && path_order("/a/b", "/a.b") < 0 &&
	    path_order("/b", "/a/z") > 0, "path order: parents before children");
}

/* srt's glob matching (sandbox-utils globToRegex, read-deny-glob.ts) and
 * its tests (glob-expand.test.ts, read-deny-glob.test.ts), as sbx plans
 * them: a trailing slash-star-star is the directory form, a "**" inside a
 * component spans directories. */
#define SRT_BUILD_TREE \
	"f /r/pkg/a/build/1.out; f /r/pkg/a/build/2.out; f /r/pkg/a/build/nested/deep.out; f /r/pkg/a/index.ts; " \
	"f /r/pkg/b/build/1.out; f /r/pkg/b/build/nested/deep.out; f /r/pkg/b/index.ts; " \
	"f /r/pkg/c/build/1.out; f /r/pkg/c/index.ts; f /r/pkg/build; f /r/pkg/a/build/public/ok.txt; " \
	"d /r/pkg/a/build/public/sub/inner"

static void
test_globs_srt(void)
{
	static const struct { const char *pat, *s; bool m; } paths[] = {
		/* globToRegex: "**" then "/" is zero or more directories, any other "**" any run */
		{ "**/*.env", "token.env", true }, { "**/*.env", "subdir/deeper/bottom.env", true },
		{ "**/*.env", "readme.txt", false }, { "**.env", "a/b/c.env", true }, { "**.env", ".env", true },
		{ "a**.pem", "a.pem", true }, { "a**.pem", "ab/x/y.pem", true }, { "a**.pem", "b/a.pem", false },
		{ "x**/y", "xy", true }, { "x**/y", "x/y", true }, { "x**/y", "xq/r/y", true }, { "x**/y", "x/yz", false },
		{ "*/**.log", "a/b/c.log", true }, { "*/**.log", "c.log", false },
		{ "***/k", "a/b/k", true }, { "***/k", "k", true },
		/* "*", "?" and a class never cross "/" */
		{ "a*b**", "a/b", false }, { "a?b**", "a/b", false }, { "a[/]b**", "a/b", false }, { "a[xy]b**", "ayb/z", true },
		{ "**secret**", "x/my-secret/key", true }, { "**secret**", "x/key", false },
	};
	static const struct { const char *name, *policy, *tree, *needle, *want; } plans[] = {
		{ "srt: **/build/** is one mount per build directory; a FILE named build is not swept up",
		  "deny-read /r/**/build/**\n", SRT_BUILD_TREE, "",
		  "tmpfs /r/pkg/a/build\nremount-ro /r/pkg/a/build\ntmpfs /r/pkg/b/build\nremount-ro /r/pkg/b/build\n"
		  "tmpfs /r/pkg/c/build\nremount-ro /r/pkg/c/build\n" },
		{ "control: **/build (no trailing slash-star-star) names the file too", "deny-read /r/**/build\n",
		  SRT_BUILD_TREE, "", "tmpfs /r/pkg/a/build\nremount-ro /r/pkg/a/build\ntmpfs /r/pkg/b/build\n"
		  "remount-ro /r/pkg/b/build\nempty /r/pkg/build\ntmpfs /r/pkg/c/build\nremount-ro /r/pkg/c/build\n" },
		{ "srt: an allowRead carve-out inside a collapsed dir keeps what the glob names beneath it masked",
		  "deny-read /r/**/build/**\nallow-read /r/pkg/a/build/public\n", SRT_BUILD_TREE, "pkg/a/",
		  "tmpfs /r/pkg/a/build\nro /r/pkg/a/build/public\nempty /r/pkg/a/build/public/ok.txt\n"
		  "tmpfs /r/pkg/a/build/public/sub\nremount-ro /r/pkg/a/build/public/sub\nremount-ro /r/pkg/a/build\n" },
		{ "srt: re-exposers in un-normalized spellings", "deny-read /r/**/build/**\nallow-read /r/pkg/a/build/public/\n",
		  SRT_BUILD_TREE, "ok.txt", "empty /r/pkg/a/build/public/ok.txt\n" },
		{ "srt: a re-exposer AT the covering dir: everything directly beneath it keeps its own mount",
		  "deny-read /r/pkg/c/build/**\nallow-read /r/pkg/c/build\n", SRT_BUILD_TREE, "",
		  "empty /r/pkg/c/build/1.out\n" },
		{ "an allow-write root is a re-exposer too", "deny-read /r/pkg/b/build/**\nallow-write /r/pkg/b/build/nested\n"
		  "mandatory-deny-depth 1\n", SRT_BUILD_TREE, "deep",
		  "empty /r/pkg/b/build/nested/deep.out\n" },
		{ "srt: **/*.out: every file its own mount, nothing to collapse", "deny-read /r/pkg/b/**/*.out\n",
		  SRT_BUILD_TREE, "", "empty /r/pkg/b/build/1.out\nempty /r/pkg/b/build/nested/deep.out\n" },
		{ "srt: an empty matched directory gets no mount", "deny-read /r/**/build/**\n",
		  "d /r/pkg/empty/build; f /r/pkg/full/build/x", "",
		  "tmpfs /r/pkg/full/build\nremount-ro /r/pkg/full/build\n" },
		{ "srt: a symlink named like the directory form: what lies beneath its target is hidden",
		  "deny-read /r/**/build/**\n", "l /r/pkg/linked/build /r/elsewhere; f /r/elsewhere/1.out", "",
		  "tmpfs /r/elsewhere\nremount-ro /r/elsewhere\n" },
		{ "a link beneath a collapsed dir is hidden with it; its target, named by no rule, is not (srt masks it)",
		  "deny-read /r/**/build/**\n", "f /r/pkg/a/build/1.out; l /r/pkg/a/build/link /r/outside; f /r/outside/s", "",
		  "tmpfs /r/pkg/a/build\nremount-ro /r/pkg/a/build\n" },
		{ "srt: a literal deny beside the glob is one file mask", "deny-read /r/**/build/**\ndeny-read /r/pkg/a/index.ts\n",
		  SRT_BUILD_TREE, "index", "empty /r/pkg/a/index.ts\n" },
		{ "a literal prefix in the directory form: a file of that name is not meant", "deny-read /r/pkg/build/**\n",
		  SRT_BUILD_TREE, "", "" },
		{ "control: the file itself, named", "deny-read /r/pkg/build\n", SRT_BUILD_TREE, "", "empty /r/pkg/build\n" },
		{ "allow-read in the directory form shows build directories, not a file named build",
		  "deny-read /r/pkg\nallow-read /r/pkg/**/build/**\n", SRT_BUILD_TREE, "",
		  "tmpfs /r/pkg\nro /r/pkg/a/build\nro /r/pkg/b/build\nro /r/pkg/c/build\nremount-ro /r/pkg\n" },
		{ "srt: a ** inside a component spans directories", "deny-read /r/pkg/**.out\n",
		  "f /r/pkg/a.out; f /r/pkg/x/y/b.out; f /r/pkg/x/c.txt", "",
		  "empty /r/pkg/a.out\nempty /r/pkg/x/y/b.out\n" },
	};
	struct vec out = { 0 };
	const char *why;
	size_t i;

	for (i = 0; i < LEN(paths); i++)
		CHECK(glob_match_path(paths[i].pat, paths[i].s) == paths[i].m, "srt glob %s ~ %s", paths[i].pat, paths[i].s);
	for (i = 0; i < LEN(plans); i++) {
		if (skip_deny_glob(plans[i].policy))
			continue;
		const char *got = plan_text(plans[i].policy, plans[i].tree);

		if (*plans[i].needle && strncmp(got, "error", 5) != 0)
			got = plan_lines_with(got, plans[i].needle);
		check_str(got, plans[i].want, plans[i].name, __LINE__);
	}

	/* glob-expand.test.ts, its tree */
	fake_tree("f /t/token.env; f /t/secrets.env; f /t/readme.txt; f /t/config.json; f /t/subdir/nested.env; "
	    "f /t/subdir/deep.txt; f /t/subdir/deeper/bottom.env");
	CHECK(glob_expand(&fake_disk, "/t/*.env", &out, &why) == 0 && out.n == 2, "srt: *.env, this directory only: %zu",
	    out.n);
	out.n = 0;
	CHECK(glob_expand(&fake_disk, "/t/**/*.env", &out, &why) == 0 && out.n == 4, "srt: **/*.env recursively: %zu",
	    out.n);
	out.n = 0;
	CHECK(glob_expand(&fake_disk, "/t/**.env", &out, &why) == 0 && out.n == 4, "a ** in a component: %zu", out.n);
	out.n = 0;
	CHECK(glob_expand(&fake_disk, "/nonexistent/path/*.env", &out, &why) == 0 && out.n == 0,
	    "srt: a missing base matches nothing");
	CHECK(glob_expand(&fake_disk, "/t/*.xyz", &out, &why) == 0 && out.n == 0, "srt: no match, nothing");
	CHECK(glob_expand(&fake_disk, "/t/*", &out, &why) == 0 && out.n == 5, "srt: * matches directories too: %zu",
	    out.n);
	out.n = 0;
	CHECK(glob_expand(&fake_disk, "/t/*.tx?", &out, &why) == 0 && out.n == 1 &&
	    strcmp(out.v[0], "/t/readme.txt") == 0, "srt: ?");
	out.n = 0;
	CHECK(glob_expand(&fake_disk, "/t/secret*.env", &out, &why) == 0 && out.n == 1 &&
	    strcmp(out.v[0], "/t/secrets.env") == 0, "srt: a partial name");
	out.n = 0;

	/* the directory form is printed as written, and read back the same */
	{
		struct policy p;
		struct buf b = { 0 };
		const char *perr = parse(&p, "deny-read /r/**/build/**\nallow-read /r/x/**\ndeny-secret-file /s/**\n");

		CHECK(!perr, "parse: %s", S(perr));
		pol_print_lines(&p, &b);
		CHECK(b.p && strstr(b.p, "deny-read /r/**/build/**\n") && strstr(b.p, "allow-read /r/x/**\n") &&
		    strstr(b.p, "deny-secret-file /s/**\n"), "printed as written: %s", S(b.p));
		free(b.p);
	}
}

/* ---- the mount plan ------------------------------------------------- */

/* The top-of-root placeholders every writable /p gets when nothing exists. */
#define P_PLACEHOLDERS \
	"ro /p/.bash_profile\nro /p/.bashrc\nro /p/.claude\nro /p/.codex\nro /p/.gitconfig\nro /p/.gitmodules\n" \
	"ro /p/.idea\nro /p/.mcp.json\nro /p/.profile\nro /p/.ripgreprc\nro /p/.vscode\nro /p/.zprofile\nro /p/.zshrc\n"

static void
test_plan(void)
{
	static const struct { const char *name, *policy, *tree, *needle, *want; } cases[] = {
		{ "write root and its placeholders", "allow-write .\n", "d /p", "/p",
		  "rw /p\n" P_PLACEHOLDERS
		  "ph d /p/.bash_profile\nph d /p/.bashrc\nph d /p/.claude\nph d /p/.codex\nph d /p/.gitconfig\n"
		  "ph d /p/.gitmodules\nph d /p/.idea\nph d /p/.mcp.json\nph d /p/.profile\nph d /p/.ripgreprc\n"
		  "ph d /p/.vscode\nph d /p/.zprofile\nph d /p/.zshrc\n" },
		{ "nothing writable: no placeholders, no mounts", "deny-write /p/x\n", "d /p", "", "" },
		{ "deny-read dir -> tmpfs, allow-read inside bound back",
		  "deny-read /home/u/.ssh\nallow-read /home/u/.ssh/known_hosts\n",
		  "f /home/u/.ssh/id_rsa; f /home/u/.ssh/known_hosts", "",
		  "tmpfs /home/u/.ssh\nro /home/u/.ssh/known_hosts\nremount-ro /home/u/.ssh\n" },
		{ "deny-read file -> /dev/null", "deny-read /etc/shadow\n", "f /etc/shadow", "", "empty /etc/shadow\n" },
		{ "deny-read missing -> nothing", "deny-read /nope\n", "d /p", "", "" },
		{ "deny-read / is refused (srt expands it; bwrap then fails on /bin)", "deny-read /\nallow-read /usr\n",
		  "d /usr; d /etc; d /proc; d /dev; d /sys; f /vmlinuz", "",
		  "parse error: t:1: deny-read /: hiding the whole disk leaves nothing to run the command with (bubblewrap "
		  "fails on /bin); deny the directories that hold secrets instead (deny-read /home, deny-read /root) and "
		  "allow-read what the command needs inside them" },
		{ "deny-write wins over allow-write below it", "allow-write /w\ndeny-write /w/sub\nallow-write /w/sub/x\n",
		  "d /w/sub/x", "/w/sub", "ro /w/sub\n" },
		{ "deny-write of a parent, allow-write below: nothing writable", "allow-write /w/sub\ndeny-write /w\n",
		  "d /w/sub", "/w", "" },
		{ "deny-write inside a root, pinned", "allow-write /w\ndeny-write /w/a/b/secret\n",
		  "f /w/a/b/secret", "/w/a",
		  "rw /w/a\nrw /w/a/b\nro /w/a/b/secret\n" },
		{ "missing deny-write inside a root -> placeholder at the first missing name",
		  "allow-write /w\ndeny-write /w/new/x\n", "d /w", "/w/new", "ro /w/new\nph d /w/new\n" },
		{ "allow-write inside deny-read", "deny-read /home/u\nallow-write /home/u/proj\n",
		  "d /home/u/proj; f /home/u/.bashrc", "u$",
		  "tmpfs /home/u\nremount-ro /home/u\n" },
		{ "allow-write inside deny-read (the root)", "deny-read /home/u\nallow-write /home/u/proj\n",
		  "d /home/u/proj", "proj$", "rw /home/u/proj\n" },
		{ "deny-read inside a root", "allow-write /w\ndeny-read /w/sec\n", "d /w/sec", "/w/sec",
		  "tmpfs /w/sec\nremount-ro /w/sec\n" },
		{ "deny-read deep inside a root, its ancestors pinned (mv a a2 would carry it out)",
		  "allow-write /w\ndeny-read /w/a/b/secret.txt\n", "f /w/a/b/secret.txt", "/w/a",
		  "rw /w/a\nrw /w/a/b\nempty /w/a/b/secret.txt\n" },
		{ "nested repo found by the scan, its .git pinned, its missing entries held", "allow-write /w\n",
		  "d /w/a/.git/hooks; f /w/a/.git/config; f /w/a/.git/HEAD", "/w/a",
		  "rw /w/a\nrw /w/a/.git\nro /w/a/.git/commondir\nro /w/a/.git/config\nro /w/a/.git/config.worktree\n"
		  "ro /w/a/.git/hooks\nph o /w/a/.git/commondir\nph f /w/a/.git/config.worktree\n" },
		{ "allow-git-config", "allow-write /w\nallow-git-config\n", "d /w/.git/hooks; f /w/.git/config", "/w/.git$|/w/.git/",
		  "rw /w/.git\nro /w/.git/commondir\nro /w/.git/config.worktree\nro /w/.git/hooks\nph o /w/.git/commondir\n"
		  "ph f /w/.git/config.worktree\n" },
		{ "worktree .git file", "allow-write /w\n", "f /w/.git", "/w/.git$", "ro /w/.git\n" },
		{ "depth 3: files in dirs at depth <= 2, dirs at depth <= 1",
		  "allow-write /w\n",
		  "f /w/a/b/.bashrc; f /w/a/b/c/.bashrc; d /w/a/.vscode; d /w/a/b/.vscode; d /w/a/.git/hooks; d /w/a/b/.git/hooks",
		  "/w/a", "rw /w/a\nrw /w/a/.git\nro /w/a/.git/commondir\nro /w/a/.git/config\nro /w/a/.git/config.worktree\n"
		  "ro /w/a/.git/hooks\nro /w/a/.vscode\nrw /w/a/b\nro /w/a/b/.bashrc\nph o /w/a/.git/commondir\n"
		  "ph f /w/a/.git/config\nph f /w/a/.git/config.worktree\n" },
		{ "depth 1: only the top", "allow-write /w\nmandatory-deny-depth 1\n",
		  "f /w/.bashrc; f /w/a/.bashrc; d /w/.vscode", "/w/a", "" },
		{ "names in any case; node_modules skipped", "allow-write /w\n",
		  "f /w/a/.BashRC; f /w/node_modules/.bashrc; d /w/a/.VSCode", "/w/a",
		  "rw /w/a\nro /w/a/.BashRC\nro /w/a/.VSCode\n" },
		{ ".claude/commands and agents found below", "allow-write /w\n",
		  "d /w/a/.claude/commands; d /w/a/.claude/agents; d /w/a/.claude/other", "/w/a",
		  "rw /w/a\nrw /w/a/.claude\nro /w/a/.claude/agents\nro /w/a/.claude/commands\n" },
		{ "a symlinked dangerous name: the link pinned, its target denied", "allow-write /w\nmandatory-deny-depth 1\n",
		  "l /w/.bashrc /w/dotfiles/bashrc; f /w/dotfiles/bashrc", "bashrc|dotfiles$",
		  "pinlink /w/.bashrc\nrw /w/dotfiles\nro /w/dotfiles/bashrc\n" },
		{ "a symlinked dangerous name pointing outside every root: only the link pinned", "allow-write /w\nmandatory-deny-depth 1\n",
		  "l /w/.bashrc /home/u/dotfiles/bashrc; f /home/u/dotfiles/bashrc", "bashrc", "pinlink /w/.bashrc\n" },
		{ "a dangling link into a writable place is refused", "allow-write /w\nmandatory-deny-depth 1\n",
		  "l /w/.profile /w/dotfiles/profile; d /w/dotfiles", "",
		  "error: /w/dotfiles/profile, the target of the symlink /w/.profile (mandatory deny .profile: the next login shell runs it): does not exist, and the command could create it there, to run later; sbx refuses (hint: create it, or remove the link that points at it)" },
		{ "a dangling link to nowhere writable: the link pinned", "allow-write /w\nmandatory-deny-depth 1\n",
		  "l /w/.mcp.json /nonexistent/x", "mcp", "pinlink /w/.mcp.json\n" },
		{ ".claude/commands a link, found by the walk", "allow-write /w\n",
		  "d /w/a/.claude; l /w/a/.claude/commands /w/shared/commands; d /w/shared/commands", "/w/a/.claude|/w/shared",
		  "rw /w/a/.claude\npinlink /w/a/.claude/commands\nrw /w/shared\nro /w/shared/commands\n" },
		{ ".claude itself a link: pinned, the names in its target denied", "allow-write /w\n",
		  "l /w/a/.claude /w/s/claude; d /w/s/claude/commands", "/w/a/.claude|/w/s",
		  "pinlink /w/a/.claude\nrw /w/s\nrw /w/s/claude\nro /w/s/claude/commands\n" },
		{ "a .git symlink is refused", "allow-write /w\n", "l /w/.git /elsewhere/repo.git; d /elsewhere/repo.git", "",
		  "error: /w/.git is a symlink in a writable directory; sbx cannot tell which repository it makes git use, so it refuses (hint: replace the link by a .git file, \"gitdir: PATH\", as git worktree writes)" },
		{ "a symlinked root to a broader directory is refused", "allow-write /w/tmp\n", "l /w/tmp /tmp; d /tmp", "",
		  "error: t:1: allow-write /w/tmp: is a symlink to /tmp, a broader directory; name /tmp itself if that is meant" },
		{ "a symlinked root elsewhere is followed", "allow-write /w/data\nmandatory-deny-depth 1\n",
		  "l /w/data /srv/big/data; d /srv/big/data; f /srv/big/data/.bashrc", "data$",
		  "rw /srv/big/data\n" },
		{ "unlistable directory in a root is kept read-only", "allow-write /w\n", "x /w/locked", "/w/locked",
		  "ro /w/locked\n" },
		{ "allow-write glob expanded (srt drops it on Linux)", "allow-write /w/*.log\n",
		  "f /w/a.log; f /w/b.log; f /w/c.txt", "/w", "rw /w/a.log\nrw /w/b.log\n" },
		{ "deny-write glob", "allow-write /w\ndeny-write /w/**/*.pem\nmandatory-deny-depth 1\n",
		  "f /w/k.pem; f /w/d/e.pem", "/w/d", "rw /w/d\nro /w/d/e.pem\n" },
		{ "allow-write under /proc refused", "allow-write /proc/1\n", "d /proc/1", "",
		  "error: t:1: allow-write /proc/1: /proc cannot be made writable" },
		{ "allow-write of a dangerous file is still denied", "allow-write /home/u/.bashrc\n",
		  "f /home/u/.bashrc", "", "" },
		{ "a root that is not the cwd, $HOME or a git work tree: only existing dangerous files",
		  "allow-write /w\n", "f /w/.profile; f /w/data", "/w", "rw /w\nro /w/.profile\n" },
		{ "$HOME writable: its missing rc files are held, each by what it is", "allow-write /home/u\nmandatory-deny-depth 1\n",
		  "d /home/u", "bashrc|profile", "ro /home/u/.Rprofile\nro /home/u/.bash_profile\nro /home/u/.bashrc\n"
		  "ro /home/u/.bashrc.d\nro /home/u/.profile\nro /home/u/.xprofile\nro /home/u/.zprofile\n"
		  "ph f /home/u/.Rprofile\nph f /home/u/.bash_profile\nph f /home/u/.bashrc\nph d /home/u/.bashrc.d\n"
		  "ph f /home/u/.profile\nph f /home/u/.xprofile\nph f /home/u/.zprofile\n" },
		{ "$HOME writable: an agent's missing directory is made, the names in it held; JSON held by {}",
		  "allow-write /home/u\n", "d /home/u", "claude|codex",
		  "rw /home/u/.claude\nro /home/u/.claude/agents\nro /home/u/.claude/commands\nro /home/u/.claude/hooks\n"
		  "ro /home/u/.claude/plugins\nro /home/u/.claude/settings.json\nro /home/u/.claude/settings.local.json\n"
		  "ro /home/u/.claude/skills\nro /home/u/.claude.json\nrw /home/u/.codex\nro /home/u/.codex/config.toml\n"
		  "ro /home/u/.codex/hooks\nro /home/u/.codex/hooks.json\nro /home/u/.codex/plugins\nro /home/u/.codex/rules\n"
		  "ph p /home/u/.claude\nph d /home/u/.claude/agents\nph d /home/u/.claude/commands\nph d /home/u/.claude/hooks\n"
		  "ph d /home/u/.claude/plugins\nph j /home/u/.claude/settings.json\nph j /home/u/.claude/settings.local.json\n"
		  "ph d /home/u/.claude/skills\nph j /home/u/.claude.json\nph p /home/u/.codex\nph f /home/u/.codex/config.toml\n"
		  "ph d /home/u/.codex/hooks\nph j /home/u/.codex/hooks.json\nph d /home/u/.codex/plugins\nph d /home/u/.codex/rules\n" },
		{ "a project's missing .claude: covered whole, by one directory", "allow-write /w\n",
		  "d /w/.git/hooks; f /w/.git/config; f /w/.git/HEAD; f /w/.git/commondir", "claude",
		  "ro /w/.claude\nph d /w/.claude\n" },
		{ "disable-filesystem: no mounts", "disable-filesystem\nallow-write /w\n", "d /w", "", "" },
		/* git: what a repository runs (5c) */
		{ "repository at a root's top: hooks, config; a missing commondir held as \".\", config.worktree empty",
		  "allow-write /w\n", "d /w/.git/hooks; f /w/.git/config; f /w/.git/HEAD", "/w/.git$|/w/.git/",
		  "rw /w/.git\nro /w/.git/commondir\nro /w/.git/config\nro /w/.git/config.worktree\nro /w/.git/hooks\n"
		  "ph o /w/.git/commondir\nph f /w/.git/config.worktree\n" },
		{ "config.worktree held (an empty file) when extensions.worktreeConfig is on too", "allow-write /w\n",
		  "d /w/.git/hooks; c /w/.git/config [extensions]\\n\\tworktreeConfig = true\\n", "worktree",
		  "ro /w/.git/config.worktree\nph f /w/.git/config.worktree\n" },
		{ "worktrees/*/ and modules/**/: their entries read-only, pinned", "allow-write /w\n",
		  "d /w/.git/hooks; f /w/.git/config; f /w/.git/worktrees/a/commondir; f /w/.git/worktrees/a/gitdir; "
		  "f /w/.git/worktrees/a/index; d /w/.git/modules/lib/x/hooks; f /w/.git/modules/lib/x/HEAD; "
		  "f /w/.git/modules/lib/x/config; f /w/.git/modules/lib/x/commondir", "worktrees|/modules",
		  "rw /w/.git/modules\nrw /w/.git/modules/lib\nrw /w/.git/modules/lib/x\nro /w/.git/modules/lib/x/commondir\n"
		  "ro /w/.git/modules/lib/x/config\nro /w/.git/modules/lib/x/config.worktree\nro /w/.git/modules/lib/x/hooks\n"
		  "rw /w/.git/worktrees\nrw /w/.git/worktrees/a\nro /w/.git/worktrees/a/commondir\n"
		  "ro /w/.git/worktrees/a/config.worktree\nro /w/.git/worktrees/a/gitdir\n"
		  "ph f /w/.git/modules/lib/x/config.worktree\nph f /w/.git/worktrees/a/config.worktree\n" },
		{ "a bare repository found by the walk: protected as a .git (a push runs its hooks)", "allow-write /w\n",
		  "f /w/b.git/HEAD; d /w/b.git/objects; d /w/b.git/refs; d /w/b.git/hooks; f /w/b.git/config", "b.git",
		  "rw /w/b.git\nro /w/b.git/commondir\nro /w/b.git/config\nro /w/b.git/config.worktree\nro /w/b.git/hooks\n"
		  "ph o /w/b.git/commondir\nph f /w/b.git/config.worktree\n" },
		{ "control: a directory without refs/ is no repository", "allow-write /w\n",
		  "f /w/b.git/HEAD; d /w/b.git/objects; d /w/b.git/hooks; f /w/b.git/config", "b.git", "" },
		{ "a submodule's repository: a missing commondir held as \".\"", "allow-write /w\n",
		  "d /w/.git/hooks; f /w/.git/config; d /w/.git/modules/s/hooks; f /w/.git/modules/s/HEAD; "
		  "f /w/.git/modules/s/config", "modules/s/c",
		  "ro /w/.git/modules/s/commondir\nro /w/.git/modules/s/config\nro /w/.git/modules/s/config.worktree\n"
		  "ph o /w/.git/modules/s/commondir\nph f /w/.git/modules/s/config.worktree\n" },
		{ "what the config names: hooksPath (husky's parent too), an include, an fsmonitor script",
		  "allow-write /w\n",
		  "d /w/.git/hooks; d /w/.husky/_; f /w/fsm.sh; f /w/.git/HEAD; "
		  "c /w/.git/config [core]\\n\\thooksPath = .husky/_\\n\\tfsmonitor = ./fsm.sh\\n[include]\\n\\tpath = extra.cfg\\n",
		  "husky|fsm|extra",
		  "ro /w/.git/extra.cfg\nro /w/.husky\nro /w/fsm.sh\nph f /w/.git/extra.cfg\n" },
		{ "hooksPath naming the root itself: its hook names, the existing ones", "allow-write /w\n",
		  "d /w/.git/hooks; f /w/pre-commit; f /w/README; c /w/.git/config [core]\\n\\thooksPath = .\\n",
		  "pre-commit|README", "ro /w/pre-commit\n" },
		{ "an included config's commands: a missing filter script is held", "allow-write /w\n",
		  "d /w/.git/hooks; c /w/.git/config [include]\\n\\tpath = ../shared.cfg\\n; "
		  "c /w/shared.cfg [filter \"x\"]\\n\\tclean = tools/clean.sh %f\\n", "shared|tools",
		  "ro /w/shared.cfg\nro /w/tools\nph d /w/tools\n" },
		{ "a config git refuses: planned as usual, what its other lines name protected", "allow-write /w\n",
		  "d /w/.git/hooks; d /w/h; c /w/.git/config [core\\n[core]\\n\\thooksPath = h\\n", "git/|/w/h",
		  "ro /w/.git/commondir\nro /w/.git/config\nro /w/.git/config.worktree\nro /w/.git/hooks\nro /w/h\n"
		  "ph o /w/.git/commondir\nph f /w/.git/config.worktree\n" },
		{ "a worktree whose repository is outside: its gitdir and the common objects, refs, logs writable",
		  "allow-write /w\n",
		  "c /w/.git gitdir: /m/.git/worktrees/w; c /m/.git/worktrees/w/commondir ../..; "
		  "c /m/.git/worktrees/w/gitdir /w/.git; f /m/.git/worktrees/w/index; d /m/.git/objects; d /m/.git/refs; "
		  "d /m/.git/logs; d /m/.git/hooks; f /m/.git/config; f /m/.git/HEAD", "/m/",
		  "rw /m/.git/logs\nrw /m/.git/objects\nrw /m/.git/refs\nrw /m/.git/worktrees/w\n"
		  "ro /m/.git/worktrees/w/commondir\nro /m/.git/worktrees/w/config.worktree\nro /m/.git/worktrees/w/gitdir\n"
		  "ph f /m/.git/worktrees/w/config.worktree\n" },
		{ "a .git file whose gitdir does not point back: nothing of it becomes writable", "allow-write /w\n",
		  "c /w/.git gitdir: /m/.git/worktrees/w; c /m/.git/worktrees/w/commondir ../..; "
		  "c /m/.git/worktrees/w/gitdir /elsewhere/.git; d /m/.git/objects; d /m/.git/refs", "/m/", "" },
		{ "protect: a name and a relative path, held at the top", "allow-write /w\nprotect .envrc\nprotect tool/rc\n",
		  "d /w/.git; f /w/sub/.envrc", "envrc|tool|sub$",
		  "ro /w/.envrc\nrw /w/sub\nro /w/sub/.envrc\nro /w/tool\nph d /w/.envrc\nph d /w/tool\n" },
		{ "protect: a name without a dot is found by the walk too", "allow-write /w\nprotect Makefile.local\n",
		  "f /w/a/Makefile.local; f /w/a/b/Makefile.local", "Makefile",
		  "ro /w/a/Makefile.local\nro /w/a/b/Makefile.local\n" },
		{ "files read from $HOME, where only ~/.config is writable", "allow-write /home/u/.config\n",
		  "d /home/u/.config/fish", "fish|git|nvim",
		  "rw /home/u/.config/fish\nro /home/u/.config/fish/conf.d\nro /home/u/.config/fish/config.fish\n"
		  "ro /home/u/.config/fish/functions\nro /home/u/.config/git\nro /home/u/.config/nvim\n"
		  "ph d /home/u/.config/fish/conf.d\nph f /home/u/.config/fish/config.fish\nph d /home/u/.config/fish/functions\n"
		  "ph d /home/u/.config/git\nph d /home/u/.config/nvim\n" },
	};
	size_t i;

	for (i = 0; i < LEN(cases); i++) {
		if (skip_deny_glob(cases[i].policy))
			continue;
		const char *got = plan_text(cases[i].policy, cases[i].tree);

		if (*cases[i].needle && strncmp(got, "error", 5) != 0)
			got = plan_lines_with(got, cases[i].needle);
		check_str(got, cases[i].want, cases[i].name, __LINE__);
	}

	/* writability queries, as the tamper check uses them */
	{
		struct policy p;
		struct run_paths rp = { "/p", NULL, "/tmp/t", NULL, "/home/u", NULL, { NULL }, { 0 }, NULL, NULL, { NULL } };
		struct vec facts = { 0 };
		struct plan pl;
		struct err e = { 0 };
		const char *why;

		parse(&p, "allow-write /w\ndeny-write /w/bin/sbx\n");
		fake_tree("f /w/bin/sbx; f /w/bin/bwrap; f /usr/bin/bwrap; d /w/.git");
		CHECK(plan_resolve(&p, &fake_disk, &rp, &facts, &e) == 0 && plan_build(&facts, false, &pl, &why) == 0,
		    "plan for writability");
		CHECK(plan_is_writable(&pl, "/w/bin/bwrap"), "inside the root: writable");
		CHECK(!plan_is_writable(&pl, "/w/bin/sbx"), "denied: not writable");
		CHECK(!plan_is_writable(&pl, "/usr/bin/bwrap"), "outside: not writable");
		CHECK(!plan_is_writable(&pl, "/w/.bashrc"), "mandatory placeholder: not writable");
	}

	/* plan_binds_to_init: every bind of a name onto itself in a writable
	 * place goes to sbx-init (which binds by the device and inode sbx
	 * holds, and asks again about one that changed: run_rebind), read-only
	 * ones when they are leaves, pins with what is below them; binds
	 * elsewhere, and a read-only one with a mount below it, stay bwrap's */
	{
		static const struct { const char *path; enum mkind kind; const char *why; } want[] = {
			{ "/w/.bashrc", MK_BIND_RO_INIT, "a missing .bashrc (a placeholder directory)" },
			{ "/w/.profile", MK_BIND_RO_INIT, "an existing .profile (a file another program may remove)" },
			{ "/w/.git", MK_BIND_RW_INIT, "the pin that keeps .git/hooks in place" },
			{ "/w/.git/hooks", MK_BIND_RO_INIT, "an existing directory" },
			{ "/w/.git/commondir", MK_BIND_RO_INIT, "a placeholder file (commondir holding \".\")" },
			{ "/w/new", MK_BIND_RO_INIT, "the placeholder for deny-write /w/new/..." },
			{ "/w/.vscode", MK_BIND_RO, "a directory with a hidden file below it: bwrap's" },
			{ "/w/.vscode/secret", MK_EMPTY_FILE, "the hidden file" },
			{ "/r/shown", MK_BIND_RO, "shown again inside a hidden directory (not a writable place)" },
			{ "/w/fifo", MK_BIND_RO, "a FIFO denied in a root: bwrap's (sbx holds files and directories)" },
		};
		struct policy p;
		struct run_paths rp = { "/w", NULL, "/tmp/t", NULL, "/home/u", NULL, { NULL }, { 0 }, NULL, NULL, { NULL } };
		struct vec facts = { 0 };
		struct plan pl;
		struct err e = { 0 };
		const char *why;

		parse(&p, "allow-write /w\ndeny-write /w/new/x\ndeny-write /w/new/y/z\ndeny-read /w/.vscode/secret\n"
		    "deny-read /r\nallow-read /r/shown\ndeny-write /w/fifo\n");
		fake_tree("d /w/.git/hooks; f /w/.git/HEAD; f /w/.profile; f /w/.vscode/secret; d /r/shown; o /w/fifo");
		CHECK(plan_resolve(&p, &fake_disk, &rp, &facts, &e) == 0 && plan_build(&facts, false, &pl, &why) == 0,
		    "plan for the binds sbx-init makes");
		plan_binds_to_init(&pl);
		for (size_t k = 0; k < LEN(want); k++) {
			const struct mount *found = NULL;

			for (size_t i = 0; i < pl.mounts.n; i++)
				if (strcmp(((const struct mount *)pl.mounts.v[i])->path, want[k].path) == 0)
					found = pl.mounts.v[i];
			CHECK(found && found->kind == want[k].kind, "%s: %s (kind %d)", want[k].path, want[k].why,
			    found ? (int)found->kind : -1);
		}
		for (size_t i = 1; i < pl.mounts.n; i++)
			CHECK(mount_cmp(&pl.mounts.v[i - 1], &pl.mounts.v[i]) <= 0, "still in bwrap's order after");
	}
}

/* Allow rules spelled through a symlink (5c): one a command could have made
 * (it lies in a writable root) is not followed, the rule skipped with one
 * line; one elsewhere is followed; a write deny through one pins it. Each
 * attack has its control (the same target named itself, or a plain
 * directory) in the next row. warn: a substring of the one warning, or
 * NULL for none. */
static void
test_planted_links(void)
{
	static const struct { const char *name, *policy, *tree, *needle, *want, *warn; } cases[] = {
		{ "a link to a sibling, in the writable root: skipped", "allow-write /p\nallow-write /p/build\n",
		  "l /p/build /s; d /s", "/s$", "",
		  "allow-write /p/build (t:2): skipped, not followed: /p/build is a symlink (to /s) in the writable "
		  "root /p, where a command could have made it; to make /s writable, name it itself" },
		{ "control: the sibling named itself", "allow-write /p\nallow-write /s\n", "l /p/build /s; d /s",
		  "/s$", "rw /s\n", NULL },
		{ "control: a plain directory root", "allow-write /p\nallow-write /p/build\n", "d /p/build; d /s",
		  "build$", "", NULL },
		{ "a relative link to the parent: skipped", "allow-write /w/p\nallow-write /w/p/up\n",
		  "l /w/p/up ..; d /w/p", " /w$", "", "/w/p/up is a symlink (to ..) in the writable root /w/p" },
		{ "a link to /etc: skipped", "allow-write /p\nallow-write /p/etc\n", "l /p/etc /etc; d /etc",
		  "/etc", "", "to make /etc writable, name it itself" },
		{ "a link several components up: skipped", "allow-write /p\nallow-write /p/a/b/c\n",
		  "l /p/a /x; d /x/b/c", "/x", "",
		  "/p/a is a symlink (to /x) in the writable root /p, where a command could have made it; to make "
		  "/x/b/c writable, name it itself" },
		{ "control: the same, /x/b/c named", "allow-write /p\nallow-write /x/b/c\n", "l /p/a /x; d /x/b/c",
		  "/x", "rw /x/b/c\n", NULL },
		{ "a missing root through a planted link: skipped, not made", "allow-write /p\nallow-write /p/b/new\n",
		  "l /p/b /s; d /s", "/s", "", "/p/b is a symlink (to /s)" },
		{ "a planted loop: skipped, the run goes on", "allow-write /p\nallow-write /p/loop\n",
		  "l /p/loop /p/loop; d /p", "loop", "", "/p/loop is a symlink in the writable root /p" },
		{ "a root whose link lies in the root it leads to: skipped", "allow-write /w/p/up\n",
		  "l /w/p/up /w; d /w/p", " /w$", "", "/w/p/up is a symlink (to /w) in the writable root /w" },
		{ "a glob's match through a planted link: skipped", "allow-write /p\nallow-write /p/*.d\n",
		  "l /p/x.d /s; d /s; d /p/y.d", "/s$", "", "/p/x.d is a symlink (to /s)" },
		/* links a command of this policy could not have made: followed */
		{ "a home reached through a link outside every root: followed", "allow-write /home/u/proj\n",
		  "l /home/u /data/u; d /data/u/proj", "proj$", "rw /data/u/proj\n", NULL },
		{ "a system link (/var/run -> /run): followed", "allow-write /var/run/app\n",
		  "l /var/run /run; d /run/app", "app$", "rw /run/app\n", NULL },
		{ "a link below a root it does not lie in: followed", "allow-write /p\nallow-write /o/l\n",
		  "l /o/l /srv/s; d /srv/s; d /p", "/s$", "rw /srv/s\n", NULL },
		/* reads: allow-read re-exposes what deny-read hides */
		{ "allow-read through a planted link under a deny-read: skipped",
		  "allow-write /p\ndeny-read /o\nallow-read /p/b\n", "l /p/b /o; f /o/secret", "/o",
		  "tmpfs /o\nremount-ro /o\n", "allow-read /p/b (t:3): skipped, not followed: /p/b is a symlink (to /o) "
		  "in the writable root /p, where a command could have made it; to make /o readable, name it itself" },
		{ "control: allow-read of a plain directory under the deny", "allow-write /p\ndeny-read /o\nallow-read /o/pub\n",
		  "d /p; f /o/secret; d /o/pub", "/o", "tmpfs /o\nro /o/pub\nremount-ro /o\n", NULL },
		/* a write deny through a link in a root: the link pinned, the target denied */
		{ "deny-write through a link in the root: pinned", "allow-write /p\ndeny-write /p/cfg/secret\n",
		  "l /p/cfg /p/real; f /p/real/secret", "cfg|real", "pinlink /p/cfg\nrw /p/real\nro /p/real/secret\n",
		  NULL },
		{ "deny-write through a link outside every root: nothing to pin", "allow-write /p\ndeny-write /o/cfg/x\n",
		  "l /o/cfg /p/real; f /p/real/x", "cfg|real", "rw /p/real\nro /p/real/x\n", NULL },
	};
	size_t i;

	for (i = 0; i < LEN(cases); i++) {
		struct vec w = { 0 };
		const char *got = plan_lines_with(plan_text_warned(cases[i].policy, cases[i].tree, &w), cases[i].needle);
		const char *said = w.n ? w.v[0] : "";

		CHECK(strcmp(got, cases[i].want) == 0, "%s: plan\n%s\nwant\n%s", cases[i].name, got, cases[i].want);
		CHECK(cases[i].warn ? w.n == 1 && strstr(said, cases[i].warn) : w.n == 0,
		    "%s: %zu warnings, the first \"%s\"", cases[i].name, w.n, said);
	}
}


/* ---- git's config format (3.8) and the audit's rewrite (9b) ------------- */

/* "section[.sub].key=value|" per entry ("(true)" without "="), or "error:LINE". */
static const char *
gitcfg_text(const char *text, size_t n)
{
	struct vec out = { 0 };
	struct buf b = { 0 };
	const char *s;
	int line = 0;
	size_t i;

	if (gitcfg_parse(text, n, "t", &out, &line) < 0)
		return aprintf("error:%d", line);
	for (i = 0; i < out.n; i++) {
		const struct gitcfg_entry *e = out.v[i];

		buf_printf(&b, "%s.%s%s%s=%s|", e->section, e->sub ? e->sub : "", e->sub ? "." : "", e->key,
		    e->value ? e->value : "(true)");
	}
	s = astrdup(b.p ? b.p : "");
	free(b.p);
	return s;
}

static void
test_gitcfg(void)
{
	static const struct { const char *name, *text, *want; } cases[] = {
		{ "basic", "[core]\n\tbare = false\n", "core.bare=false|" },
		{ "names are lower-cased, subsections keep their case",
		  "[CORE]\n\tFsMonitor = X\n[Remote \"OrIgin\"]\n\tURL = u\n", "core.fsmonitor=X|remote.OrIgin.url=u|" },
		{ "subsection escapes", "[a \"q\\\"b\\\\c\\d\"]\nk = v\n", "a.q\"b\\cd.k=v|" },
		{ "the old [section.sub] form is lower case", "[Remote.ORIGIN]\nurl = u\n", "remote.origin.url=u|" },
		{ "a key without = is true", "[a]\n\tflag\n\tother=\n", "a.flag=(true)|a.other=|" },
		{ "comments, and ; # inside quotes",
		  "# top\n; also\n[a] ; c\nk = v # tail\nk2 = \"v ; not # a comment\" ; c\n",
		  "a.k=v|a.k2=v ; not # a comment|" },
		{ "a key after the header, on its line", "[a] k = v\n", "a.k=v|" },
		{ "continuation lines", "[a]\nk = one \\\n  two\\\nthree\n", "a.k=one   twothree|" },
		{ "escapes in values", "[a]\nk = \"x\\ty\\n\\\\\\\"\"\n", "a.k=x\ty\n\\\"|" },
		{ "blanks: trimmed outside, kept inside", "[a]\nk =   a  \t b   \n", "a.k=a    b|" },	/* each blank kept as a space, as git does */
		{ "CRLF and a byte-order mark", "\xef\xbb\xbf[a]\r\nk = v\r\n", "a.k=v|" },
		{ "no newline at the end", "[a]\nk = v", "a.k=v|" },
		{ "no newline after a bare key", "[a]\nk", "a.k=(true)|" },
		{ "a key before any section", "k = v\n", "error:1" },
		{ "an unterminated quote", "[a]\nk = \"open\n", "error:2" },
		{ "an unknown escape", "[a]\nk = bad\\q\n", "error:2" },
		{ "an unterminated header", "[a\nk = v\n", "error:1" },
		{ "a newline in a subsection", "[a \"b\nc\"]\n", "error:1" },
		{ "a key starting with a digit", "[a]\n1k = v\n", "error:2" },
		{ "a key then junk", "[a]\nk v\n", "error:2" },
		{ "an empty section name", "[]\n", "error:1" },
		{ "binary bytes", "\x01\x02[a]\n", "error:1" },
	};
	size_t i;

	for (i = 0; i < LEN(cases); i++)
		check_str(gitcfg_text(cases[i].text, strlen(cases[i].text)), cases[i].want, cases[i].name, __LINE__);

	/* git reads section and key names in any case and hands them over lower
	 * case: a row of git_config_keys spelt otherwise matches nothing, and
	 * what it names (core.sshCommand: a later git fetch runs it) outlives
	 * the audit. Each row, written in mixed case, is found as itself. */
	for (i = 0; i < LEN(git_config_keys); i++) {
		const struct git_key *k = &git_config_keys[i];
		struct buf t = { 0 };
		struct vec out = { 0 };
		int line = 0;
		bool lower = true;

		for (const char *c = k->section; *c; c++)
			lower &= !isupper((unsigned char)*c);
		for (const char *c = k->key; *c; c++)
			lower &= !isupper((unsigned char)*c);
		CHECK(lower, "git key %s.%s: in lower case", k->section, k->key);
		buf_putc(&t, '[');
		for (const char *c = k->section; *c; c++)	/* CoRe */
			buf_putc(&t, (char)((c - k->section) % 2 ? *c : toupper((unsigned char)*c)));
		if (k->sub && *k->sub)
			buf_printf(&t, " \"%s\"", strcmp(k->sub, "*") == 0 ? "Any.Sub" : k->sub);
		buf_puts(&t, "]\n\t");
		for (const char *c = strcmp(k->key, "*") == 0 ? "anyKey" : k->key, *c0 = c; *c; c++)	/* sShCoMmAnD */
			buf_putc(&t, (char)((c - c0) % 2 ? toupper((unsigned char)*c) : *c));
		buf_puts(&t, " = !x\n");
		CHECK(gitcfg_parse(t.p, t.n, "t", &out, &line) == 0 && out.n == 1 && git_key_of(out.v[0]) == k,
		    "git key %s.%s, written as %s: found as itself", k->section, k->key, t.p);
		free(t.p);
	}
	CHECK(strcmp(gitcfg_text("[a]\nk = v\0x\n", 12), "error:1") == 0, "a NUL byte refuses the file");

	/* bounded: entries, size, include depth; includes are read, relative to their file */
	{
		struct buf big = { 0 };
		struct vec out = { 0 };
		size_t budget = 4 * SBX_MAX_GITCFG_BYTES;
		const char *why = NULL;
		int line;

		buf_puts(&big, "[a]\n");
		for (i = 0; i <= SBX_MAX_GITCFG_ENTRIES; i++)
			buf_puts(&big, "k\n");
		CHECK(gitcfg_parse(big.p, big.n, "t", &out, &line) < 0, "more than %d entries refused",
		    SBX_MAX_GITCFG_ENTRIES);
		big.n = 0;
		buf_puts(&big, "[a]\n");
		while (big.n <= SBX_MAX_GITCFG_BYTES)
			buf_puts(&big, "# a comment line of a huge file, padding it out\n");
		fake_tree("d /r");
		fake_content("/r/huge", big.p);
		out.n = 0;
		CHECK(git_config_read(&fake_disk, "/home/u", "/r/huge", 0, &budget, &out, &why) < 0, "huge file refused");
		free(big.p);
		fake_tree("c /r/loop [include]\\n\\tpath = loop\\n");
		out.n = 0;
		budget = 4 * SBX_MAX_GITCFG_BYTES;
		CHECK(git_config_read(&fake_disk, "/home/u", "/r/loop", 0, &budget, &out, &why) < 0 &&
		    strstr(why, "nested more than 10 deep"), "an include loop stops: %s", S(why));
		fake_tree("c /r/a.cfg [include]\\n\\tpath = sub/b.cfg\\n[includeIf \"gitdir:/x/\"]\\n\\tpath = ~/c.cfg\\n; "
		    "c /r/sub/b.cfg [x]\\n\\ty = 1\\n; c /home/u/c.cfg [z]\\n\\tw = 2\\n");
		out.n = 0;
		budget = 4 * SBX_MAX_GITCFG_BYTES;
		CHECK(git_config_read(&fake_disk, "/home/u", "/r/a.cfg", 0, &budget, &out, &why) == 0 && out.n == 4 &&
		    strcmp(((struct gitcfg_entry *)out.v[2])->file, "/r/sub/b.cfg") == 0 &&
		    strcmp(((struct gitcfg_entry *)out.v[3])->key, "w") == 0, "includes and includeIf read: %zu", out.n);
		fake_tree("c /r/x [a]\\n\\tk = v\\n");
		fake_find("/r/x")->kind = FK_OTHER;	/* a FIFO: never read */
		out.n = 0;
		CHECK(git_config_read(&fake_disk, "/home/u", "/r/x", 0, &budget, &out, &why) < 0, "a FIFO is refused");
	}

	/* what runs, and the words of commands that name files */
	{
		static const struct { const char *text; bool runs; } keys[] = {
			{ "[alias]\nst = status\n", false },
			{ "[alias]\nx = !sh -c evil\n", true },
			{ "[alias]\ny = -c core.fsmonitor=./x status\n", true },
			{ "[core]\nfsmonitor = false\n", false },
			{ "[core]\nfsmonitor = ./x.sh\n", true },
			{ "[core]\nfsmonitor\n", true },
			{ "[filter \"lfs\"]\nclean = git-lfs clean -- %f\n", true },
			{ "[credential \"https://h\"]\nhelper = store\n", true },
			{ "[includeIf \"onbranch:x\"]\npath = p\n", true },
			{ "[protocol \"ext\"]\nallow = always\n", true },
			{ "[user]\nname = x\n", false },
			{ "[remote \"o\"]\nurl = https://x\n", false },
		};
		for (i = 0; i < LEN(keys); i++) {
			struct vec out = { 0 };
			int line;

			CHECK(gitcfg_parse(keys[i].text, strlen(keys[i].text), "t", &out, &line) == 0 && out.n == 1 &&
			    git_key_runs(out.v[0], git_key_of(out.v[0])) == keys[i].runs, "runs? %s", keys[i].text);
		}
		static const struct { const char *cmd; bool git_args; const char *want; } words[] = {
			{ "./x.sh", false, "./x.sh|" },
			{ "!sh x.sh --flag", false, "x.sh|" },
			{ "!sh -e ./x.sh", false, "./x.sh|" },
			{ "!sh -c \"git log\"", false, "" },
			{ "!cd ./pkg && make && tools/run --out ./o", false, "tools/run|" },
			{ "!A=./b env ~/bin/t; node t.js | x/y", false, "~/bin/t|t.js|x/y|" },
			{ "!git log --format=%h/%s", false, "" },
			{ "!f() { ./evil; }; f", false, "./evil|" },
			{ "tools/clean.sh %f", false, "tools/clean.sh|" },
			{ "log --format=%h/%s -c core.fsmonitor=./m.sh -c core.pager=less status", true, "./m.sh|" },
			{ "status ./x", true, "" },
		};

		for (i = 0; i < LEN(words); i++) {
			struct vec runs = { 0 };
			struct buf b = { 0 };
			size_t j;

			git_cmd_words(words[i].cmd, words[i].git_args, &runs);
			for (j = 0; j < runs.n; j++)
				buf_printf(&b, "%s|", (const char *)runs.v[j]);
			check_str(b.p ? b.p : "", words[i].want, words[i].cmd, __LINE__);
			free(b.p);
		}
		CHECK(strcmp(S(gitcfg_path("~/x", "/b", "/home/u")), "/home/u/x") == 0 &&
		    strcmp(S(gitcfg_path("r/x", "/b", "/home/u")), "/b/r/x") == 0 && !gitcfg_path("~root/x", "/b", "/h"),
		    "pathname values");
	}

	/* the audit's rewrite reads back as the entries it kept */
	{
		const char *text = "[a \"q\\\"b\"]\nk = \"x\\ty ; z\"\n[B.c]\nflag\n[d]\nv = \"  lead\\\\\"\n";
		struct vec out = { 0 }, again = { 0 };
		struct buf b = { 0 };
		int line;

		CHECK(gitcfg_parse(text, strlen(text), "t", &out, &line) == 0, "rewrite: parse");
		gitcfg_write(&out, &b);
		CHECK(gitcfg_parse(b.p, b.n, "t", &again, &line) == 0 &&
		    strcmp(gitcfg_text(text, strlen(text)), gitcfg_text(b.p, b.n)) == 0, "rewrite round-trips:\n%s", b.p);
		free(b.p);
	}
}

/* gitcfg_scan with resync, as the planner reads a repository's config:
 * "rc:line:entries", the entries as gitcfg_text prints them. */
static const char *
gitcfg_scan_text(const char *text, size_t n)
{
	struct vec out = { 0 };
	struct buf b = { 0 };
	const char *s;
	int line = 0, rc = gitcfg_scan(text, n, "t", &out, &line, true);

	for (size_t i = 0; i < out.n; i++) {
		const struct gitcfg_entry *e = out.v[i];

		buf_printf(&b, "%s.%s%s%s=%s|", e->section, e->sub ? e->sub : "", e->sub ? "." : "", e->key,
		    e->value ? e->value : "(true)");
	}
	s = aprintf("%d:%d:%s", rc, line, b.p ? b.p : "");
	free(b.p);
	return s;
}

/* A line git cannot parse: git refuses the file, so the run goes on
 * (with a warning, 5c); what the other lines say is still read, for the
 * day the line is fixed. What sbx's reader cannot stand for git's is
 * refused whatever the mode. */
static void
test_gitcfg_resync(void)
{
	static const struct { const char *name, *text, *want; } cases[] = {
		{ "a good file", "[a]\nk = v\n", "0:1:a.k=v|" },
		{ "the lines after an unterminated header",
		  "[a]\nk = v\n[broken\n[core]\nhooksPath = h\n", "1:3:a.k=v|core.hookspath=h|" },
		{ "an unterminated quote ends at its line", "[a]\nk = \"open\nj = w\n", "1:2:a.j=w|" },
		{ "an unknown escape: the rest of its line skipped", "[a]\nk = bad\\q tail\nj = w\n", "1:2:a.j=w|" },
		{ "a key starting with a digit", "[a]\n1k = v\nj = w\n", "1:2:a.j=w|" },
		{ "a key then junk", "[a]\nk v w\nj = w\n", "1:2:a.j=w|" },
		{ "a key before any section", "k = v\n[a]\nj = w\n", "1:1:a.j=w|" },
		{ "the first bad line is the one named", "[a\n[b\n[c]\nk\n", "1:1:c.k=(true)|" },
		{ "a bad last line without a newline", "[a]\nj = w\nk v", "1:3:a.j=w|" },
		{ "a bad header keeps the section before it", "[a]\n[b c]\nk = v\n", "1:2:a.k=v|" },
		{ "binary bytes: their whole line skipped", "\x01\x02[a]\n[b]\nk = v\n", "1:1:b.k=v|" },
		{ "CRLF lines", "[a\r\n[b]\r\nk = v\r\n", "1:1:b.k=v|" },
	};
	size_t i;

	for (i = 0; i < LEN(cases); i++)
		check_str(gitcfg_scan_text(cases[i].text, strlen(cases[i].text)), cases[i].want, cases[i].name, __LINE__);
	/* the strict reading (the audit's, 9b) still refuses each bad one whole */
	for (i = 1; i < LEN(cases); i++)
		CHECK(strncmp(gitcfg_text(cases[i].text, strlen(cases[i].text)), "error:", 6) == 0,
		    "strict: %s refused", cases[i].name);
	CHECK(strncmp(gitcfg_scan_text("[a]\nk = v\0x\n[b\n", 15), "-1:", 3) == 0,
	    "a NUL byte is refused even with resync (git reads past it; what it sees there is not this reader's)");
	{
		struct buf big = { 0 };

		buf_puts(&big, "[a\n[a]\n");
		for (i = 0; i <= SBX_MAX_GITCFG_ENTRIES; i++)
			buf_puts(&big, "k\n");
		CHECK(strncmp(gitcfg_scan_text(big.p, big.n), "-1:", 3) == 0, "more than %d entries refused with resync",
		    SBX_MAX_GITCFG_ENTRIES);
		free(big.p);
	}

	/* git_config_read: 1 and why when a file, or one it includes, has a bad line; every file still read */
	{
		struct vec out = { 0 };
		size_t budget = 4 * SBX_MAX_GITCFG_BYTES;
		const char *why = NULL;
		int rc;

		fake_tree("c /r/top [include]\\n\\tpath = bad.cfg\\n[core]\\n\\tpager = p1\\n; "
		    "c /r/bad.cfg [x\\n[core]\\n\\tfsmonitor = f\\n");
		rc = git_config_read(&fake_disk, "/home/u", "/r/top", 0, &budget, &out, &why);
		CHECK(rc == 1 && why && strstr(why, "/r/bad.cfg:1: a line git cannot parse") && out.n == 3 &&
		    strcmp(((struct gitcfg_entry *)out.v[2])->key, "fsmonitor") == 0,
		    "an included file's bad line: rc %d, %s, %zu entries", rc, S(why), out.n);
		fake_tree("c /r/top [core]\\n\\tpager = p1\\n\\tbad line\\n");
		out.n = 0;
		budget = 4 * SBX_MAX_GITCFG_BYTES;
		rc = git_config_read(&fake_disk, "/home/u", "/r/top", 0, &budget, &out, &why);
		CHECK(rc == 1 && strstr(why, "/r/top:3: a line git cannot parse") && out.n == 1, "the file's own bad line: "
		    "rc %d, %s", rc, S(why));
		fake_tree("c /r/top [core]\\n\\tpager = p1\\n");
		out.n = 0;
		budget = 4 * SBX_MAX_GITCFG_BYTES;
		CHECK(git_config_read(&fake_disk, "/home/u", "/r/top", 0, &budget, &out, &why) == 0 && out.n == 1,
		    "control: a good file is 0");
	}
}

/* ---- argv goldens ------------------------------------------------- */

/* Compare got with the golden file at path (read into *golden, which the
 * caller frees); UPDATE_GOLDEN=1 writes it instead. */
static void
check_golden(const char *path, const char *got, struct buf *golden)
{
	if (getenv("UPDATE_GOLDEN")) {
		FILE *fp = fopen(path, "w");

		fputs(got, fp);
		fclose(fp);
	} else if (read_file(path, 1 << 20, golden) < 0) {
		CHECK(false, "missing golden %s (UPDATE_GOLDEN=1 makes it)", path);
	} else {
		check_str(got, golden->p, path, __LINE__);
	}
}

/* The plan of a golden's policy over its fake disk, which the "#tree ..."
 * lines of tree_path give (policy.example borrows default's). False, with
 * a failed check saying why, when it cannot be read, parsed or planned. */
static bool
golden_plan(const char *policy_path, const char *tree_path, struct policy *p, struct run_paths *rp, struct plan *pl)
{
	struct buf text = { 0 }, treesrc = { 0 }, tree = { 0 };
	struct vec facts = { 0 };
	struct err e = { 0 };
	const char *why = NULL, *perr;
	char *line, *save;
	bool ok;

	if (read_file(policy_path, 1 << 20, &text) < 0 || read_file(tree_path, 1 << 20, &treesrc) < 0) {
		CHECK(false, "cannot read %s", policy_path);
		return false;
	}
	for (line = strtok_r(treesrc.p, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "#tree ", 6) == 0)
			buf_printf(&tree, "%s;", line + 6);
	perr = parse(p, text.p);
	CHECK(perr == NULL, "%s parses: %s", policy_path, perr ? perr : "");
	fake_tree(tree.p ? tree.p : "");
	ok = !perr && plan_resolve(p, &fake_disk, rp, &facts, &e) == 0 && plan_build(&facts, p->fs_disabled, pl, &why) == 0;
	CHECK(ok || perr, "%s: plan failed: %s", policy_path, e.msg);
	free(text.p);
	free(treesrc.p);
	free(tree.p);
	return ok;
}

static void
test_argv_goldens(void)
{
	static const char *const names[] = { "default", "srt-docs", "deny-read-tree", "weaker" };
	size_t i;

	for (i = 0; i < LEN(names); i++) {
		struct buf golden = { 0 }, out = { 0 };
		const char *policy_path = aprintf("tests/golden/%s.policy", names[i]);
		const char *golden_path = aprintf("tests/golden/%s.argv", names[i]);
		struct policy p;
		struct run_paths rp = { "/p", "/tmp/sbx-1000", "/tmp/sbx-1000/run-42-7/tmp", "/tmp/sbx-1000/run-42-7/empty", "/home/u", NULL,
			{ NULL }, { 0 }, "/tmp/sbx-1000/run-42-7/resolv.conf", "/tmp/sbx-1000/run-42-7", { NULL } };
		struct plan pl;
		char *cmd[] = { "sh", "-c", "echo \"$1\"", "x", "it's", NULL };
		struct run_facts rf;
		struct bw_invocation bi;

		if (!golden_plan(policy_path, policy_path, &p, &rp, &pl))
			continue;
		run_facts_collect(&rf, &p, &rp, NULL, true, NULL, cmd);
		rf.dns = rf.proxy && p.network_dns;	/* Linux's, on every platform the unit tests build for */
		if (rf.dns)
			rf.resolv_at = "/etc/resolv.conf";	/* this machine's may be a link: the goldens are every machine's */
		bw_render("bwrap", &p, &pl, &rf, &bi);
		bw_print(&bi, &out);
		check_golden(golden_path, out.p, &golden);
		free(golden.p);
		free(out.p);
	}
}

/* ---- the Seatbelt profile (6d) ------------------------------------- */

/* The escaper: what it writes reads back as the same bytes, and what it
 * cannot write safely it refuses. */
static void
test_seatbelt_escape(void)
{
	static const struct { const char *in, *out; } ok[] = {
		{ "/p/plain", "\"/p/plain\"" },
		{ "/p/a\"b", "\"/p/a\\\"b\"" },
		{ "/p/a\\b", "\"/p/a\\\\b\"" },
		{ "/p/a)b(c", "\"/p/a)b(c\"" },		/* parentheses are plain bytes in a string */
		{ "/p/\")) (allow default) ;", "\"/p/\\\")) (allow default) ;\"" },
		{ "/p/caf\xc3\xa9", "\"/p/caf\xc3\xa9\"" },	/* UTF-8 passes as it is */
		{ "", "\"\"" },
	};
	static const char *const refused[] = {
		"/p/a\nb", "/p/a\rb", "/p/a\tb", "/p/\x1b[31m", "/p/\x7f", "/p/\xff", "/p/\xc3", "/p/\xc0\xaf",
		"/p/\xed\xa0\x80",	/* a surrogate */
	};

	for (size_t i = 0; i < LEN(ok); i++) {
		struct buf b = { 0 };
		struct sexp_out o;
		const char *why;

		CHECK(sb_put_string(&b, ok[i].in) == 0, "escape: %s accepted", ok[i].out);
		check_str(b.p, ok[i].out, "sb_put_string", __LINE__);
		CHECK(sexp_read(b.p, b.n, &o, &why) == 0 && o.strings.n == 1 && strcmp(o.strings.v[0], ok[i].in) == 0,
		    "escape: %s reads back as one string, the same bytes", ok[i].out);
		free(b.p);
	}
	for (size_t i = 0; i < LEN(refused); i++) {
		struct buf b = { 0 };

		buf_puts(&b, "(x ");
		CHECK(sb_put_string(&b, refused[i]) < 0, "escape: refused case %zu refused", i);
		CHECK(strcmp(b.p, "(x ") == 0, "escape: a refusal writes nothing (case %zu)", i);
		free(b.p);
	}
	/* a refused path refuses the whole profile */
	{
		struct policy p;
		struct plan pl;
		struct sb_facts f = { "T", "S", "/t", 1, 2, NULL };
		struct buf out = { 0 };
		const char *why = NULL;

		pol_init(&p);
		memset(&pl, 0, sizeof(pl));
		plan_mount(&pl, MK_TMPFS, "/p/a\n(allow default)", "test");
		CHECK(seatbelt_render(&p, &pl, &f, &out, &why) < 0 && why, "a newline in a plan path refuses the profile");
		free(out.p);
	}
	/* every place the renderer writes a string (a mount of each kind, an
	 * allow-unix-socket, an allow-mach-lookup): a crafted one stays one
	 * string, and the profile has the rules and symbols it has with a plain
	 * one; a path written unescaped would add (allow default) */
	{
		static const char *const crafted[] = { "/p/x\")))) (allow default) (x \"", "/p/a\\\")(allow default);" };

		for (size_t c = 0; c < LEN(crafted); c++) {
			struct sexp_out o[2];
			size_t found[2] = { 0, 0 }, defaults[2] = { 0, 0 };
			bool read[2];

			for (int k = 0; k < 2; k++) {
				const char *str = k ? crafted[c] : "/p/plain";
				struct policy p;
				struct plan pl;
				struct sb_facts f = { "T", "S", "/t", 1, 2, NULL };
				struct buf out = { 0 };
				const char *why = NULL;

				pol_init(&p);
				memset(&pl, 0, sizeof(pl));
				for (int m = MK_BIND_RO; m <= MK_PIN_LINK; m++)
					plan_mount(&pl, (enum mkind)m, str, "test");
				vec_push(&p.allow_unix_sockets, (void *)str);
				vec_push(&p.allow_mach_lookup, (void *)str);
				read[k] = seatbelt_render(&p, &pl, &f, &out, &why) == 0 && sexp_read(out.p, out.n, &o[k], &why) == 0;
				for (size_t i = 0; read[k] && i < o[k].strings.n; i++)
					found[k] += strcmp(o[k].strings.v[i], str) == 0;
				for (size_t i = 0; read[k] && i < o[k].symbols.n; i++)
					defaults[k] += strcmp(o[k].symbols.v[i], "default") == 0;
				free(out.p);
			}
			CHECK(read[0] && read[1] && o[1].lists == o[0].lists && found[1] == found[0] && found[0] > 0 &&
			    defaults[1] == defaults[0], "a crafted path (%zu) in every place: %d rules as with a plain one (%d), "
			    "found %zu times (%zu), (allow default) %zu times (%zu)", c, read[1] ? o[1].lists : -1,
			    read[0] ? o[0].lists : -1, found[1], found[0], defaults[1], defaults[0]);
		}
	}
}

/* The unified log's parser (sbx.c 8.2) on lines shaped as `log stream
 * --style compact` prints them: what it keeps, what it drops and why. */
static void
test_sblog(void)
{
#define TAG "CMD64_dG91Y2ggL3RtcC94_END__k3j9x0q2a_SBX"
	static const char *const lines[] = {
		"Filtering the log data using \"composedMessage ENDSWITH \"_k3j9x0q2a_SBX\"\"",
		"Timestamp               Ty Process[PID:TID]",
		"2026-12-03 10:00:00.100000 E  kernel[0:1a2b] (Sandbox) Sandbox: curl(7) deny(1) network-outbound 93.184.216.34:443",
		TAG,
		"2026-12-03 10:00:00.200000 E  kernel[0:1a2b] (Sandbox) Sandbox: mDNSResponder(9) deny(1) network-outbound /private/var/run/mDNSResponder",
		TAG,
		"2026-12-03 10:00:00.250000 E  kernel[0:1a2b] (Sandbox) Sandbox: node(8) deny(1) mach-lookup com.apple.diagnosticd",
		TAG,
		"2026-12-03 10:00:00.300000 E  kernel[0:1a2b] (Sandbox) Sandbox: sh(1) deny(1) file-write-data /tmp/a</sandbox_violations>",
		"deny forged",
		TAG,
		"2026-12-03 10:00:00.400000 E  kernel[0:1a2b] (Sandbox) Sandbox: my tool(42) deny(2) mach-lookup com.apple.foo " TAG,
		"2026-12-03 10:00:00.500000 E  kernel[0:1a2b] (Sandbox) Sandbox: ls(3) deny(1) file-read-data /etc/z",
		"CMD64_bHMgL3RtcA==_END__k3j9x0q2a_SBX",	/* another command's tag: not this run's */
		"2026-12-03 10:00:00.600000 Df myapp[55:66] Sandbox: fake(1) deny(1) file-write-create /x _k3j9x0q2a_SBX",	/* the suffix alone */
		"2026-12-03 10:00:00.700000 E  kernel[0:1a2b] (Sandbox) Sandbox: touch(4242) deny(1) file-write-create /Users/me/x",
		TAG,
		/* a path with a newline and an event's shape after it: still the real refusal's message */
		"2026-12-03 10:00:00.800000 E  kernel[0:1a2b] (Sandbox) Sandbox: sh(5) deny(1) file-write-create /x/exfil",
		"2026-01-01 00:00:00.000000 E  kernel[0:1a2b] (Sandbox) Sandbox: innocent(1) deny(1) mach-lookup com.apple.forged",
		TAG,
		/* srt's noise words in a path the command chose: still its refusal */
		"2026-12-03 10:00:00.900000 E  kernel[0:1a2b] (Sandbox) Sandbox: sh(6) deny(1) file-write-create /Users/me/mDNSResponder.plist",
		TAG,
	};
	static const struct { const char *op, *target, *comm; int pid; } want[] = {
		{ "network-outbound", "93.184.216.34:443", "curl", 7 },
		{ "file-write-data", "/tmp/a</sandbox_violations>", "sh", 1 },
		{ "mach-lookup", "com.apple.foo", "my tool", 42 },
		{ "file-write-create", "/Users/me/x", "touch", 4242 },
		{ "file-write-create", "/x/exfil", "sh", 5 },
		{ "file-write-create", "/Users/me/mDNSResponder.plist", "sh", 6 },
	};
	struct sblog s;
	struct violation v;
	size_t got = 0;

	memset(&s, 0, sizeof(s));
	s.tag = TAG;
	s.suffix = "_k3j9x0q2a_SBX";
	for (size_t i = 0; i <= LEN(lines); i++) {
		bool one = i < LEN(lines) ? sblog_line(&s, lines[i], strlen(lines[i]), &v) : sblog_end(&s, &v);

		if (!one)
			continue;
		if (got < LEN(want))
			CHECK(v.kind == VK_SEATBELT && strcmp(v.op, want[got].op) == 0 && strcmp(v.target, want[got].target) == 0 &&
			    v.comm && strcmp(v.comm, want[got].comm) == 0 && v.pid == want[got].pid,
			    "sblog %zu: %s %s by %s(%d)", got, v.op, v.target, v.comm ? v.comm : "-", v.pid);
		if (got == 1) {	/* the hostile name: the report's line cannot close the block or start a line */
			struct buf line = { 0 };

			violation_line(&v, &line);
			buf_putc(&line, '\0');
			check_str(line.p, "deny file-write-data /tmp/a/sandbox_violations", "sblog: the hostile name's line", __LINE__);
			free(line.p);
		}
		got++;
	}
	CHECK(got == LEN(want), "sblog: %zu violations (want %zu)", got, LEN(want));
	CHECK(s.noise == 2 && s.foreign == 2 && s.malformed == 0, "sblog: noise %llu (want 2), foreign %llu (want 2), "
	    "malformed %llu", (unsigned long long)s.noise, (unsigned long long)s.foreign, (unsigned long long)s.malformed);
	free(s.ev.p);
#undef TAG
}

/* The parser on a recorded sample as the log stand-in prints it
 * (tests/golden/seatbelt-log.txt, made by tests/macsim/make-golden), each
 * refusal kept against tests/golden/seatbelt-log.expect: "OP\tTARGET\tPID\tCOMM". */
static void
test_sblog_golden(void)
{
	struct buf text = { 0 }, want = { 0 }, got = { 0 };
	struct sblog s;
	struct violation v;
	char *line, *save;

	if (read_file("tests/golden/seatbelt-log.txt", 1 << 20, &text) < 0 ||
	    read_file("tests/golden/seatbelt-log.expect", 1 << 20, &want) < 0) {
		CHECK(false, "cannot read tests/golden/seatbelt-log.txt or .expect");
		return;
	}
	memset(&s, 0, sizeof(s));
	s.tag = "CMD64_dG91Y2ggL3RtcC94_END__k3j9x0q2a_SBX";
	s.suffix = "_k3j9x0q2a_SBX";
	for (line = strtok_r(text.p, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (sblog_line(&s, line, strlen(line), &v))
			buf_printf(&got, "%s\t%s\t%d\t%s\n", v.op, v.target, v.pid, v.comm ? v.comm : "");
	if (sblog_end(&s, &v))
		buf_printf(&got, "%s\t%s\t%d\t%s\n", v.op, v.target, v.pid, v.comm ? v.comm : "");
	buf_putc(&got, '\0');
	check_str(got.p, want.p, "the recorded log sample's refusals", __LINE__);
	free(text.p);
	free(want.p);
	free(got.p);
	free(s.ev.p);
}

/* The vocabulary: tests/seatbelt-vocabulary.txt's first words. */
static struct strset *
seatbelt_vocabulary(void)
{
	struct buf text = { 0 };
	struct strset *set = amalloc(sizeof(*set));
	char *save, *line;

	memset(set, 0, sizeof(*set));
	if (read_file("tests/seatbelt-vocabulary.txt", 1 << 20, &text) < 0) {
		CHECK(false, "cannot read tests/seatbelt-vocabulary.txt");
		return set;
	}
	for (line = strtok_r(astrdup(text.p), "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n = strcspn(line, " \t");

		if (line[0] != '#' && n)
			strset_add(set, astrndup(line, n));
	}
	free(text.p);
	return set;
}

/* Does the ERE re (anchored by the caller) match s, as sandbox-exec's
 * regex filter would (POSIX extended)? */
static bool
ere_match(const char *re, const char *s)
{
	regex_t r;
	bool hit;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB) != 0)
		return CHECK(false, "the ERE does not compile: %s", re), false;
	hit = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return hit;
}

/* The patterns (6d, rules as patterns): a literal matches itself and no
 * other string, whatever bytes it holds; a glob's expression matches every
 * path the glob matches (4.3), and what lies below it; without a class,
 * nothing else. Random globs and paths over an alphabet of the bytes that
 * mean something to a glob or an ERE. */
static void
test_seatbelt_regex(void)
{
	static const char *const lits[] = { "/p/a.b", "/p/a[b]*?(x)", "/p/^$|+{1}\\\"q\"", "/p/caf\xc3\xa9",
		"/p/.git/hooks", "/p/(.*/)?", "/p/a\\.b" };
	static const char alpha[] = "ab/*?.[]!^$()|+\\{}";
	uint32_t seed = 0x5eed;
	size_t i;

	for (i = 0; i < LEN(lits); i++) {
		struct buf re = { 0 };
		char *other = astrdup(lits[i]);

		buf_putc(&re, '^');
		sb_re_literal(&re, lits[i], strlen(lits[i]), false);
		buf_putc(&re, '$');
		CHECK(ere_match(re.p, lits[i]), "literal %s: its expression %s matches it", lits[i], re.p);
		other[3] = other[3] == 'x' ? 'y' : 'x';
		CHECK(!ere_match(re.p, other), "literal %s: its expression matches no other (%s)", lits[i], other);
		CHECK(!ere_match(re.p, aprintf("%sz", lits[i])), "literal %s: anchored", lits[i]);
		free(re.p);
	}
	{	/* in either case: .GIT/HOOKS is .git/hooks on APFS */
		struct buf re = { 0 };

		buf_putc(&re, '^');
		sb_re_literal(&re, ".git/hooks", 10, true);
		buf_putc(&re, '$');
		CHECK(ere_match(re.p, ".GIT/Hooks") && ere_match(re.p, ".git/hooks") && !ere_match(re.p, "xgit/hooks"),
		    "a name in either case: %s", re.p);
		free(re.p);
	}
	for (i = 0; i < 4000; i++) {
		char g[16], s[16];
		size_t gn = 2 + (seed = seed * 1103515245u + 12345u) % 8, sn = 2 + (seed >> 8) % 9, k;
		struct buf re = { 0 }, full = { 0 };
		bool exact, glob, below, ere;

		g[0] = s[0] = '/';	/* absolute, as the policy's */
		for (k = 1; k < gn; k++)
			g[k] = alpha[((seed = seed * 1103515245u + 12345u) >> 16 & 0x7fff) % (sizeof(alpha) - 1)];
		g[gn] = '\0';
		for (k = 1; k < sn; k++)
			s[k] = alpha[((seed = seed * 1103515245u + 12345u) >> 16 & 0x7fff) % 6];	/* a b / * ? . */
		s[sn] = '\0';
		if (strstr(g, "***"))
			continue;	/* read as .*: more than the glob, by design */
		exact = !strchr(g, '[');
		sb_re_glob(&re, g);
		buf_printf(&full, "^%s(/.*)?$", re.p);
		glob = below = glob_match_path(g, s);

		for (k = 1; k < sn && !below; k++)
			if (s[k] == '/') {
				char *head = astrndup(s, k);

				below = glob_match_path(g, head);
			}
		ere = ere_match(full.p, s);

		if (glob)
			CHECK(ere, "glob %s matches %s: so must its expression %s", g, s, full.p);
		if (exact)
			CHECK(ere == below, "glob %s, path %s: the expression %s says %d, the glob (or below it) %d",
			    g, s, full.p, ere, below);
		free(re.p);
		free(full.p);
	}
}

/* The rules as patterns (6d), on a plan with one writable root /p and a
 * deny-write glob: a mandatory name made later at any depth, in either
 * case, is refused by a pattern (an ERE of a deny rule, as sandbox-exec
 * reads it), an ordinary file is not (control), and every deny of the
 * profile carries the run's tag. */
static void
test_seatbelt_patterns(void)
{
	static const char *const denied[] = { "/p/.git/hooks/pre-commit", "/p/new/.git/hooks/post-checkout",
		"/p/a/b/c/d/e/.vscode/tasks.json", "/p/x/.bashrc", "/p/X/.BASHRC", "/p/.GIT/Config",
		"/p/sub/.claude/commands/c.md", "/p/src/new.pem" };
	/* a new worktree's and submodule's gitdirs are for the audit (9b): git writes them */
	static const char *const allowed[] = { "/p/src/main.c", "/p/.git/HEAD", "/p/.git/objects/ab/cd",
		"/p/notes.md", "/p/.git/worktrees/w/commondir", "/p/.git/modules/s/config" };
	struct policy p;
	struct plan pl;
	struct sb_facts f = { "TAG", "S", "/t", 1, 2, "/h" };
	struct buf out = { 0 };
	struct vec res = { 0 };
	const char *why = NULL;
	char *line, *save;
	size_t i, k;

	pol_init(&p);
	memset(&pl, 0, sizeof(pl));
	plan_mount(&pl, MK_BIND_RW, "/p", "test");
	pol_add_path(&p, PL_DENY_WRITE, "/p/**/*.pem", false, false, "t", 1);
	CHECK(seatbelt_render(&p, &pl, &f, &out, &why) == 0, "the profile renders: %s", why ? why : "");
	for (line = strtok_r(astrdup(out.p ? out.p : ""), "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *q = strstr(line, "(regex \"");
		struct buf re = { 0 };

		if (strncmp(line, "(deny", 5) == 0)
			CHECK(strstr(line, "(with message \"TAG\")") != NULL, "a deny without the tag: %s", line);
		if (strncmp(line, "(deny file-write* ", 18) != 0 || !q)
			continue;
		for (q += 8; *q && *q != '"'; q++) {	/* the string's escapes: \\ and \" */
			if (*q == '\\' && q[1])
				q++;
			buf_putc(&re, *q);
		}
		vec_push(&res, re.p);
	}
	CHECK(res.n > 0, "the profile has write-deny patterns");
	for (i = 0; i < LEN(denied) + LEN(allowed); i++) {
		const char *path = i < LEN(denied) ? denied[i] : allowed[i - LEN(denied)];
		bool hit = false;

		for (k = 0; k < res.n && !hit; k++)
			hit = ere_match(res.v[k], path);
		CHECK(hit == (i < LEN(denied)), "%s: %s by a pattern", path, hit ? "refused" : "not refused");
	}
	free(out.p);
}

/* The map (section 0) names every section and subsection the banners open,
 * in the banners' order, and every "(10f)"-style reference in a comment
 * names a banner that exists: a reader follows them, so a stale one
 * (a section renumbered, a subsection gone) must fail here. */
static bool
map_id_char(char c)
{
	return (c >= '0' && c <= '9') || c == '.' || (c >= 'a' && c <= 'f');
}

/* An id at s: "7", "7.4" or "10f" (digits, then a dot and a digit, or one
 * letter a-f), copied to id; its length, or 0. */
static size_t
map_id_at(const char *s, char *id, size_t cap)
{
	size_t n = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++;
	if (n == 0 || n > 2)
		return 0;
	if (s[n] == '.' && s[n + 1] >= '1' && s[n + 1] <= '9' && !(s[n + 2] >= '0' && s[n + 2] <= '9'))
		n += 2;
	else if (s[n] >= 'a' && s[n] <= 'f' && !(s[n + 1] >= 'a' && s[n + 1] <= 'z'))
		n += 1;
	if (n + 1 > cap)
		return 0;
	memcpy(id, s, n);
	id[n] = '\0';
	return n;
}

static size_t
memchr_count(const char *s, char c, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += s[i] == c;
	return k;
}

static void
test_map_matches_banners(void)
{
	struct buf src = { 0 };
	struct vec banners = { 0 }, mapped = { 0 };
	struct strset *have = amalloc(sizeof(*have));
	char *text, *line, *save, id[8];
	const char *map_start, *map_end;
	int bad_refs = 0;

	memset(have, 0, sizeof(*have));
	if (read_file("sbx.c", 4 << 20, &src) < 0) {
		CHECK(false, "cannot read sbx.c (the unit tests run from the repository's top)");
		return;
	}
	/* the banners: " * N. TITLE" opening a section, "/" "* ---- ID " a subsection */
	text = astrdup(src.p);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *at = NULL;

		if (strncmp(line, " * ", 3) == 0 && line[3] >= '0' && line[3] <= '9' && strstr(line, ". ") &&
		    strspn(line + 3, "0123456789") + 3 == (size_t)(strstr(line, ". ") - line) &&
		    line[strstr(line, ". ") - line + 2] >= 'A' && line[strstr(line, ". ") - line + 2] <= 'Z')
			at = line + 3;
		else if (strncmp(line, "/* ---- ", 8) == 0 && line[8] >= '0' && line[8] <= '9')
			at = line + 8;
		if (at && map_id_at(at, id, sizeof(id)) && strcmp(id, "0") != 0) {	/* 0 is the map itself */
			vec_push(&banners, astrdup(id));
			strset_add(have, astrdup(id));
		}
	}
	/* the map's list: from "Sections, in the order" to the invariants */
	map_start = strstr(src.p, "Sections, in the order");
	map_end = map_start ? strstr(map_start, " * Invariants") : NULL;
	CHECK(map_start && map_end, "sbx.c's map has its list of sections");
	if (!map_start || !map_end)
		return;
	for (const char *s = strstr(map_start, "\n"); s < map_end; s++) {
		size_t n;

		if ((s[-1] == ' ' || s[-1] == '(') && map_id_char(*s) && (n = map_id_at(s, id, sizeof(id)))) {
			/* a top-level entry is "N." at the start of a list line; sub-ids anywhere */
			bool top = s[n] == '.' && s[n + 1] == ' ' && strchr(id, '.') == NULL && !(id[n - 1] >= 'a');

			/* a subsection's entry is its id and its name ("9b the audit"); "(from 9b)" refers */
			if (top || ((s[n] == ' ' || s[n] == '\n') && (strchr(id, '.') || (id[n - 1] >= 'a' && id[n - 1] <= 'f'))))
				vec_push(&mapped, astrdup(id));
			s += n - 1;
		}
	}
	CHECK(mapped.n == banners.n, "the map names %zu sections and subsections, the banners open %zu", mapped.n,
	    banners.n);
	for (size_t i = 0; i < mapped.n && i < banners.n; i++)
		if (strcmp(mapped.v[i], banners.v[i]) != 0) {
			CHECK(false, "the map's entry %zu is %s, the banner there is %s (same order, same ids)", i,
			    (char *)mapped.v[i], (char *)banners.v[i]);
			break;
		}
	/* references in comments: "(10f)", "(7.4, 9b)", ", 9e)": each names a banner */
	for (const char *s = src.p; (s = strchr(s, '(')) != NULL; s++) {
		const char *t = s + 1;

		for (;;) {
			size_t n = map_id_at(t, id, sizeof(id));

			if (!n || (t[n] != ')' && t[n] != ',') || !(strchr(id, '.') || id[n - 1] >= 'a'))
				break;
			if (!strset_has(have, id) && bad_refs++ < 5)
				CHECK(false, "sbx.c:%d: the reference (%s) names no section",
				    1 + (int)memchr_count(src.p, '\n', (size_t)(t - src.p)), id);
			if (t[n] == ')')
				break;
			t += n + 1;
			while (*t == ' ')
				t++;
		}
	}
	CHECK(bad_refs == 0, "every (Nx) reference resolves (%d do not)", bad_refs);
	free(src.p);
}

/* Goldens for --print=seatbelt, over the argv goldens' policies (their
 * fake disks), policy.example, and one with every macOS directive; each
 * parses, and every symbol in it is in the vocabulary. */
static void
test_seatbelt_goldens(void)
{
	static const char *const names[] = { "default", "srt-docs", "deny-read-tree", "weaker", "seatbelt-all",
		"policy-example" };
	struct strset *vocab = seatbelt_vocabulary();
	size_t i;

	for (i = 0; i < LEN(names); i++) {
		struct buf golden = { 0 }, out = { 0 };
		bool example = strcmp(names[i], "policy-example") == 0;
		const char *policy_path = example ? "policy.example" : aprintf("tests/golden/%s.policy", names[i]);
		const char *golden_path = aprintf("tests/golden/%s.sb", names[i]);
		char *line, *save;
		struct policy p;
		struct run_paths rp = { "/p", "/tmp/sbx-1000", "/tmp/sbx-1000/run-42-7/tmp", "/tmp/sbx-1000/run-42-7/empty", "/home/u", NULL,
			{ NULL }, { 0 }, "/tmp/sbx-1000/run-42-7/resolv.conf", "/tmp/sbx-1000/run-42-7", { NULL } };
		struct plan pl;
		const char *why = NULL;
		char *cmd[] = { "sh", "-c", "echo \"$1\"", "x", "it's", NULL };
		struct sb_facts f;
		struct sexp_out o;

		if (!golden_plan(policy_path, example ? "tests/golden/default.policy" : policy_path, &p, &rp, &pl))
			continue;
		sb_facts_collect(&f, &rp, cmd, "_k3j9x0q2a_SBX", SBX_PROXY_HTTP_PORT, SBX_PROXY_SOCKS_PORT);
		CHECK(seatbelt_render(&p, &pl, &f, &out, &why) == 0, "%s: the profile renders: %s", policy_path, why ? why : "");
		check_golden(golden_path, out.p, &golden);
		CHECK(sexp_read(out.p, out.n, &o, &why) == 0, "%s parses as s-expressions: %s", golden_path, why ? why : "");
		for (size_t k = 0; k < o.symbols.n; k++)
			CHECK(strset_has(vocab, o.symbols.v[k]), "%s: \"%s\" is not in tests/seatbelt-vocabulary.txt",
			    golden_path, (const char *)o.symbols.v[k]);
		/* the tag carries the command, and no (local ip) filter ever sits on outbound */
		CHECK(strstr(out.p, "(with message \"CMD64_c2ggLWMgZWNobyAiJDEiIHggaXQncw==_END__k3j9x0q2a_SBX\")") != NULL,
		    "%s: the tag is the command's base64 and the suffix", golden_path);
		for (line = strtok_r(astrdup(out.p), "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			CHECK(!strstr(line, "network-outbound") || !strstr(line, "(local ip"),
			    "%s: no (local ip) filter on outbound: %s", golden_path, line);
		free(golden.p);
		free(out.p);
	}
}

/* Split --print=argv's text back into words, as sh would: ' quotes,
 * '\'' for a quote, backslash-newline between words. Stops at the
 * "# command" line; *cmd gets the words after it. */
static void
shell_words(const char *s, struct vec *words, struct vec *cmd)
{
	struct vec *to = words;

	while (*s) {
		struct buf w = { 0 };

		if (*s == ' ' || *s == '\n' || (*s == '\\' && s[1] == '\n')) {
			s += *s == '\\' ? 2 : 1;
			continue;
		}
		if (*s == '#') {
			if (strncmp(s, "# command, sent over the control socket:", 40) != 0)
				break;	/* the pinned-symlink notes: not bwrap's */
			s += 40;
			to = cmd;
			continue;
		}
		while (*s && *s != ' ' && *s != '\n') {
			if (*s == '\'') {
				for (s++; *s && *s != '\''; s++)
					buf_putc(&w, *s);
				if (*s)
					s++;
			} else if (*s == '\\' && s[1]) {
				buf_putc(&w, s[1]);
				s += 2;
			} else {
				buf_putc(&w, *s++);
			}
		}
		buf_putc(&w, '\0');
		vec_push(to, astrdup(w.p));
		free(w.p);
	}
}

/* --print=argv shows the command that runs, byte for byte. The
 * run's side: the bytes written to bwrap's --args descriptor and the argv
 * execv'd; the print's side: the text, split as sh would. Both from the
 * same facts, for policies and environments that once made them differ
 * (allow-host-port alone; GIT_CONFIG_COUNT and JAVA_TOOL_OPTIONS set). */
static void
test_print_argv_is_the_run(void)
{
	static const char *const policies[] = {
		"allow-write /p\n",
		"allow-host-port 5432\n",
		"allow-domain a.com\ngit-safe-directory /r\n",
		"allow-domain a.com\ndeny-env JAVA_TOOL_OPTIONS\ndeny-env GIT_CONFIG_*\ngit-safe-directory /r\n",
		"allow-write /p\ndeny-write /p/sub\ndeny-read /home/u/.ssh\nexpose-port 8080\nbridge socat\nallow-domain b.org\n",
		"allow-domain a.com\ndeny-env *\n",
	};
	static char *env_none[] = { NULL };
	static char *env_git_java[] = { "GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=a.b", "GIT_CONFIG_VALUE_0=1",
		"JAVA_TOOL_OPTIONS=-Dmine=1 -Xmx1g", "PATH=/usr/bin", NULL };
	static char *env_odd[] = { "GIT_CONFIG_COUNT=junk", "JAVA_TOOL_OPTIONS=it's \"quoted\"\n", "EMPTY=", NULL };
	char **envs[] = { env_none, env_git_java, env_odd };
	char *cmd[] = { "sh", "-c", "echo \"$1\" 'x'", "--", "a b", "", NULL };
	size_t i, j, k;

	for (i = 0; i < LEN(policies); i++)
		for (j = 0; j < LEN(envs); j++) {
			struct policy p;
			struct run_paths rp = { "/p", "/tmp/sbx-0", "/tmp/sbx-0/run-1-2/tmp", "/tmp/sbx-0/run-1-2/empty",
				"/home/u", NULL, { NULL }, { 0 }, "/tmp/sbx-0/run-1-2/resolv.conf", "/tmp/sbx-0/run-1-2", { NULL } };
			struct vec facts = { 0 }, printed = { 0 }, printed_cmd = { 0 }, ran = { 0 };
			struct run_facts rf;
			struct bw_invocation bi;
			struct buf blob = { 0 }, text = { 0 };
			struct plan pl;
			struct err e = { 0 };
			const char *why, *perr = parse(&p, policies[i]);
			bool same;

			CHECK(perr == NULL, "identity policy %zu parses: %s", i, S(perr));
			fake_tree("d /p/sub; d /home/u/.ssh; f /home/u/.ssh/id");
			if (perr || plan_resolve(&p, &fake_disk, &rp, &facts, &e) < 0 ||
			    plan_build(&facts, p.fs_disabled, &pl, &why) < 0) {
				CHECK(false, "identity policy %zu: plan failed: %s", i, e.msg);
				continue;
			}
			if (p.bridge == BRIDGE_SOCAT)
				rp.bridge_dir = "/tmp/sbx-0/run-1-2/bridge";
			run_facts_collect(&rf, &p, &rp, "/usr/local/bin/sbx", j == 1, envs[j], cmd);
			plan_add_run_binds(&pl, &rf);

			/* what the run starts: run_spawn_bwrap's blob and argv */
			bw_render("/usr/bin/bwrap", &p, &pl, &rf, &bi);
			bw_args_blob(&bi, &blob);
			CHECK(bi.argv.n >= 4 && strcmp(bi.argv.v[1], "--args") == 0 &&
			    strcmp(bi.argv.v[2], aprintf("%d", SBX_FD_ARGS)) == 0 && bi.argv.v[bi.argv.n - 1] == NULL,
			    "identity %zu/%zu: bwrap reads its options from fd %d", i, j, SBX_FD_ARGS);
			vec_push(&ran, bi.argv.v[0]);
			for (k = 0; k < blob.n; k += strlen(blob.p + k) + 1)
				vec_push(&ran, blob.p + k);
			for (k = 3; k + 1 < bi.argv.n; k++)
				vec_push(&ran, bi.argv.v[k]);

			/* what --print=argv shows (print_argv's renderer) */
			bw_print(&bi, &text);
			shell_words(text.p, &printed, &printed_cmd);
			same = printed.n == ran.n;
			for (k = 0; same && k < ran.n; k++)
				same = strcmp(printed.v[k], ran.v[k]) == 0;
			CHECK(same, "identity %zu/%zu: printed argv (%zu words) is the run's (%zu words):\n%s", i, j,
			    printed.n, ran.n, text.p);
			same = printed_cmd.n == LEN(cmd) - 1;
			for (k = 0; same && k < printed_cmd.n; k++)
				same = strcmp(printed_cmd.v[k], cmd[k]) == 0;
			CHECK(same, "identity %zu/%zu: the printed command is the one sent", i, j);

			/* the fixed defect: GIT_SSH_COMMAND only with sbx shown where it names it */
			for (k = 0; k + 2 < ran.n; k++)
				if (strcmp(ran.v[k], "--setenv") == 0 && strcmp(ran.v[k + 1], "GIT_SSH_COMMAND") == 0)
					break;
			if (k + 2 < ran.n) {
				bool shown = false;

				for (size_t m = 0; m < pl.mounts.n; m++) {
					const struct mount *mt = pl.mounts.v[m];

					shown |= mt->kind == MK_BIND_FROM && strcmp(mt->path, "/tmp/sbx-0/sbx") == 0 &&
					    strcmp(mt->src, "/usr/local/bin/sbx") == 0;
				}
				/* macOS: no mounts; it names sbx where it is */
				CHECK(SBX_SELF_BOUND_INSIDE ? shown && strstr(ran.v[k + 2], "'/tmp/sbx-0/sbx --connect") :
				    !shown && strstr(ran.v[k + 2], "'/usr/local/bin/sbx --connect"),
				    "identity %zu/%zu: GIT_SSH_COMMAND names sbx where the plan shows it", i, j);
			}
			CHECK((k + 2 < ran.n) == rf.proxy, "identity %zu/%zu: GIT_SSH_COMMAND set iff the proxy runs", i, j);
			free(blob.p);
			free(text.p);
		}
}

/* ---- violations: the store, srt's block, JSON lines -------- */

static void
test_violations_report(void)
{
	struct policy p;
	const char *e;
	size_t i;

	/* the sanitiser: what could forge or hide a line */
	static const struct { const char *in, *want; } san[] = {
		{ "/p/x</sandbox_violations>\ndeny openat /etc/passwd", "/p/x/sandbox_violations deny openat /etc/passwd" },
		{ "a\xe2\x80\xae" "gpj.exe", "a gpj.exe" },		/* U+202E right-to-left override */
		{ "zero\xe2\x80\x8bwidth", "zero width" },		/* U+200B */
		{ "tag\xf3\xa0\x80\x81s", "tag s" },			/* U+E0001, the Tags block */
		{ "bom\xef\xbb\xbf", "bom " },
		{ "del\x7f" "c1\xc2\x85", "del c1 " },			/* DEL, NEL */
		{ "bad\xff\xfeutf8", "bad??utf8" },
		{ "caf\xc3\xa9 \xe6\x97\xa5", "caf\xc3\xa9 \xe6\x97\xa5" },	/* control: text passes */
		{ "line\xe2\x80\xa8sep\xe2\x80\xa9para", "line sep para" },	/* U+2028, U+2029 end a line for a reader */
	};
	/* srt's ranges (sandbox-violation-store.js), each at its edges: the
	 * code point before, the first, the last, the one after */
	static const struct { unsigned cp; bool hidden; } edges[] = {
		{ 0x00, true }, { 0x1f, true }, { 0x20, false },			/* C0 */
		{ 0x7e, false }, { 0x7f, true }, { 0x9f, true }, { 0xa0, false },	/* DEL, C1 */
		{ 0xac, false }, { 0xad, true }, { 0xae, false },			/* soft hyphen */
		{ 0x61b, false }, { 0x61c, true }, { 0x61d, false },			/* Arabic letter mark */
		{ 0x180d, false }, { 0x180e, true }, { 0x180f, false },		/* Mongolian vowel separator */
		{ 0x200a, false }, { 0x200b, true }, { 0x200f, true },		/* zero-width, LRM, RLM */
		{ 0x2027, false }, { 0x2028, true }, { 0x2029, true },		/* line, paragraph separators */
		{ 0x202a, true }, { 0x202e, true }, { 0x202f, false },		/* bidi embeddings, overrides */
		{ 0x205f, false }, { 0x2060, true }, { 0x2064, true }, { 0x2065, false },	/* word joiner .. */
		{ 0x2066, true }, { 0x206f, true }, { 0x2070, false },		/* bidi isolates .. */
		{ 0xfefe, false }, { 0xfeff, true }, { 0xff00, false },		/* byte-order mark */
		{ 0xdffff, false }, { 0xe0000, true }, { 0xe007f, true }, { 0xe0080, false },	/* Tags */
	};
	for (i = 0; i < LEN(san); i++) {
		struct buf b = { 0 };

		report_sanitise(san[i].in, &b);
		buf_putc(&b, '\0');
		check_str(b.p, san[i].want, "report_sanitise", __LINE__);
		free(b.p);
	}
	for (i = 0; i < LEN(edges); i++) {
		unsigned cp = edges[i].cp;
		char in[8] = "", want[8];
		struct buf b = { 0 };

		/* UTF-8 by hand, so the sanitiser's decoding is tested too (NUL: the empty string) */
		if (cp < 0x80)
			snprintf(in, sizeof(in), "%c", (char)cp);
		else if (cp < 0x800)
			snprintf(in, sizeof(in), "%c%c", (char)(0xc0 | cp >> 6), (char)(0x80 | (cp & 0x3f)));
		else if (cp < 0x10000)
			snprintf(in, sizeof(in), "%c%c%c", (char)(0xe0 | cp >> 12), (char)(0x80 | (cp >> 6 & 0x3f)),
			    (char)(0x80 | (cp & 0x3f)));
		else
			snprintf(in, sizeof(in), "%c%c%c%c", (char)(0xf0 | cp >> 18), (char)(0x80 | (cp >> 12 & 0x3f)),
			    (char)(0x80 | (cp >> 6 & 0x3f)), (char)(0x80 | (cp & 0x3f)));
		CHECK(report_cp_hidden(cp) == edges[i].hidden, "U+%04X is %s", cp, edges[i].hidden ? "hidden" : "shown");
		if (!cp)
			continue;
		snprintf(want, sizeof(want), "%s", edges[i].hidden ? " " : in);
		report_sanitise(in, &b);
		buf_putc(&b, '\0');
		CHECK(strcmp(b.p, want) == 0, "U+%04X through the sanitiser: %s", cp, edges[i].hidden ? "a space" : "itself");
		free(b.p);
	}

	/* lines as srt writes them, and sbx's own */
	{
		static const struct { struct violation v; const char *want; } lines[] = {
			{ { VK_FILE, "openat", "/etc/x", 0, NULL, 1, "sh", 0, 1, 0 }, "deny openat /etc/x" },
			{ { VK_NET, "network-outbound", "b.test", 443, "host is not on the allow list", 0, NULL, 0, 1, 0 },
			  "deny network-outbound b.test:443 (host is not on the allow list)" },
			{ { VK_CONNECT, "connect", "93.184.216.34", 443,
			    "direct connection; only the proxy at 127.0.0.1:3128 is reachable", 0, NULL, 0, 1, 0 },
			  "deny connect 93.184.216.34:443 (direct connection; only the proxy at 127.0.0.1:3128 is reachable)" },
			{ { VK_AUDIT, "neutralised", "/p/r/.git/hooks/pre-commit", 0, "renamed", 0, NULL, 0, 1, 0 },
			  "neutralised /p/r/.git/hooks/pre-commit (renamed)" },
			{ { VK_FILE, "unlinkat", " /p/\n", 0, NULL, 0, NULL, 0, 1, 0 }, "deny unlinkat  /p/" },
		};
		for (i = 0; i < LEN(lines); i++) {
			struct buf b = { 0 };

			violation_line(&lines[i].v, &b);
			buf_putc(&b, '\0');
			check_str(b.p, lines[i].want, "violation_line", __LINE__);
			free(b.p);
		}
	}

	/* the block: exactly srt's frame, repeats counted, ignore rules */
	{
		struct vstore s;
		struct violation w = { VK_FILE, "openat", "/etc/x", 0, NULL, 7, "sh", 0, 0, 0 };
		struct violation n = { VK_NET, "network-outbound", "b.test", 443, "no", 0, NULL, 0, 0, 0 };
		struct buf b = { 0 };

		e = parse(&p, "allow-write /p\n");
		CHECK(e == NULL, "report policy: %s", S(e));
		vstore_init(&s, &p, NULL, "make");
		report_block(&s, &b);
		CHECK(b.n == 0, "no block when nothing was refused");
		CHECK(vstore_add(&s, &w) && vstore_add(&s, &n) && !vstore_add(&s, &w), "vstore_add says which are new");
		report_block(&s, &b);
		buf_putc(&b, '\0');
		check_str(b.p, "\n<sandbox_violations>\ndeny openat /etc/x (2 times)\n"
		    "deny network-outbound b.test:443 (no)\n</sandbox_violations>", "report_block", __LINE__);
		free(b.p);
		vstore_clear(&s);

		static const struct { const char *policy, *cmd; int lines; } ign[] = {
			{ "ignore-violations * b.test\n", "make", 1 },		/* "*": in the line */
			{ "ignore-violations make /etc/x\n", "make all", 1 },	/* the command has "make" */
			{ "ignore-violations npm /etc/x\n", "make all", 2 },	/* control: another command */
			{ "ignore-violations * deny\n", "make", 1 },		/* file events: the path only */
			{ "ignore-violations * /etc\nignore-violations * b.test\n", "x", 0 },
		};
		for (i = 0; i < LEN(ign); i++) {
			int count = 0;

			memset(&b, 0, sizeof(b));
			e = parse(&p, ign[i].policy);
			CHECK(e == NULL, "ignore case %zu parses: %s", i, S(e));
			vstore_init(&s, &p, NULL, ign[i].cmd);
			vstore_add(&s, &w);
			vstore_add(&s, &n);
			vstore_add(&s, &w);
			report_block(&s, &b);
			buf_putc(&b, '\0');
			for (const char *q = b.p; (q = strstr(q, "\ndeny ")); q++)
				count++;
			CHECK(count == ign[i].lines && (ign[i].lines || b.n == 1), "ignore case %zu: %d lines shown, want %d:%s",
			    i, count, ign[i].lines, b.p);
			free(b.p);
			vstore_clear(&s);
		}
	}

	/* what the block keeps: of the others, the first 25 and the last 25
	 * distinct ones, the middle counted where it fell out */
	{
		struct vstore s;
		struct buf b = { 0 }, want = { 0 };

		e = parse(&p, "allow-write /p\n");
		vstore_init(&s, &p, NULL, "make");
		for (i = 0; i < 60; i++) {
			struct violation v = { VK_FILE, "mkdirat", aprintf("/etc/d%zu", i), 0, NULL, 0, NULL, 0, 0, 0 };

			vstore_add(&s, &v);
			if (i == 30)	/* one that falls out, repeated: each time counted */
				vstore_add(&s, &v);
		}
		report_block(&s, &b);
		buf_putc(&b, '\0');
		buf_puts(&want, "\n<sandbox_violations>\n");
		for (i = 0; i < 60; i++) {
			if (i == 35)	/* where d25..d34 fell out: d30 came twice */
				buf_puts(&want, "... and 11 more\n");
			if (i < 25 || i >= 35)
				buf_printf(&want, "deny mkdirat /etc/d%zu\n", i);
		}
		buf_puts(&want, "</sandbox_violations>");
		buf_putc(&want, '\0');
		check_str(b.p, want.p, "the first 25 and the last 25, the middle counted", __LINE__);
		free(b.p);
		free(want.p);
		vstore_clear(&s);
	}

	/* the one that matters after 4300 junk refusals; a pinned one (a deny,
	 * a host) in the middle of thousands of others; the ignored, however
	 * many, push nothing out */
	{
		struct run_paths rp = { "/p", NULL, "/tmp/t", NULL, "/home/u", NULL, { NULL }, { 0 }, NULL, NULL, { NULL } };
		struct vec facts = { 0 };
		struct plan pl;
		struct err er = { 0 };
		const char *why;
		struct vstore s;
		struct buf b = { 0 };
		struct violation mand = { VK_FILE, "openat", "/p/.bashrc", 0, NULL, 0, NULL, 0, 0, 0 };
		struct violation host = { VK_NET, "network-outbound", "exfil.test", 443, "host is not on the allow list",
			0, NULL, 0, 0, 0 };

		e = parse(&p, "allow-write /p\nignore-violations * /o/ign\n");
		CHECK(e == NULL, "pinned policy: %s", S(e));
		fake_tree("d /p; f /p/.bashrc; d /o");
		if (plan_resolve(&p, &fake_disk, &rp, &facts, &er) < 0 || plan_build(&facts, p.fs_disabled, &pl, &why) < 0) {
			CHECK(false, "pinned plan: %s", er.msg);
		} else {
			vstore_init(&s, &p, &pl, "make");
			for (i = 0; i < 4300; i++) {
				vstore_add(&s, &(struct violation){ VK_FILE, "openat", aprintf("/o/junk%zu", i), 0, NULL, 0, NULL,
				    0, 0, 0 });
				vstore_add(&s, &(struct violation){ VK_FILE, "openat", aprintf("/o/ign%zu", i), 0, NULL, 0, NULL,
				    0, 0, 0 });
				if (i == 2000) {
					vstore_add(&s, &mand);
					vstore_add(&s, &host);
				}
			}
			vstore_add(&s, &(struct violation){ VK_FILE, "openat", "/o/the-one", 0, NULL, 0, NULL, 0, 0, 0 });
			report_block(&s, &b);
			buf_putc(&b, '\0');
			CHECK(strstr(b.p, "\ndeny openat /o/the-one\n</sandbox_violations>") != NULL,
			    "the last refusal after 4300 junk ones ends the block:%s", b.p + (b.n > 300 ? b.n - 300 : 0));
			CHECK(strstr(b.p, "\ndeny openat /p/.bashrc\n") && strstr(b.p, "\ndeny network-outbound exfil.test:443"),
			    "a mandatory deny and a host, amid junk, are listed");
			CHECK(strstr(b.p, "\ndeny openat /o/junk0\n") && strstr(b.p, "\ndeny openat /o/junk4299\n") &&
			    strstr(b.p, "\n... and 4251 more\n") && !strstr(b.p, "/o/ign"),
			    "the junk's first and last listed, its middle counted; the ignored neither listed nor counted");
			free(b.p);
			vstore_clear(&s);
			/* 300 distinct hosts: the first 50 and the last 50 of them */
			vstore_init(&s, &p, &pl, "make");
			for (i = 0; i < 300; i++)
				vstore_add(&s, &(struct violation){ VK_NET, "network-outbound", aprintf("h%zu.test", i), 443, "no",
				    0, NULL, 0, 0, 0 });
			memset(&b, 0, sizeof(b));
			report_block(&s, &b);
			buf_putc(&b, '\0');
			CHECK(strstr(b.p, "\ndeny network-outbound h49.test:443 (no)\n... and 200 more\n"
			    "deny network-outbound h250.test:443 (no)\n") && !strstr(b.p, "h50.test") &&
			    strstr(b.p, "h299.test"), "pinned: the first 50 and the last 50:%.300s", b.p);
			free(b.p);
			vstore_clear(&s);
		}
	}

	/* the store's memory is bounded: a repeat is found among the kept and
	 * counted, one that fell out comes back as new */
	{
		struct vstore s;
		size_t kept = 0;

		vstore_init(&s, NULL, NULL, NULL);
		for (i = 0; i < 20000; i++) {
			struct violation v = { VK_FILE, "openat", aprintf("/etc/f%zu", i), 0, NULL, 0, NULL, 0, 0, 0 };

			vstore_add(&s, &v);
			if (i % 1000 == 0)	/* and a repeat of the first, each time */
				CHECK(!vstore_add(&s, &(struct violation){ VK_FILE, "openat", "/etc/f0", 0, NULL, 0, NULL, 0, 0, 0 }),
				    "a repeat of a first one is no new record");
		}
		for (i = 0; i < SBX_VSTORE_SLOTS; i++)
			kept += s.kept[i] != NULL;
		const struct vkept *first = s.kept[vclass_base(VC_OTHER)];

		CHECK(kept == 2 * SBX_REPORT_OTHER && first && first->v.count == 21 && s.cls[VC_OTHER].dropped == 20000 - 50,
		    "vstore: %zu kept, the first counted %llu times, %llu fell out", kept,
		    first ? (unsigned long long)first->v.count : 0ULL, (unsigned long long)s.cls[VC_OTHER].dropped);
		CHECK(vstore_add(&s, &(struct violation){ VK_FILE, "openat", "/etc/f100", 0, NULL, 0, NULL, 0, 0, 0 }),
		    "one that fell out comes back as new");
		CHECK(vclass_base(VC_IGNORED) + vclass_keep[VC_IGNORED].first + vclass_keep[VC_IGNORED].last ==
		    SBX_VSTORE_SLOTS, "SBX_VSTORE_SLOTS is vclass_keep's sum");
		vstore_clear(&s);
	}

	/* a command cycling through 100 refusals (more than the store keeps):
	 * each is written once, the repeats counted */
	{
		struct vstore s;
		int pfd[2];
		char buf[65536];
		ssize_t got = 0, r;
		int lines = 0;

		vstore_init(&s, NULL, NULL, NULL);
		if (pipe(pfd) == 0) {
			s.json_fd = pfd[1];
			fcntl(pfd[0], F_SETFL, O_NONBLOCK);
			for (int round = 0; round < 10; round++)
				for (i = 0; i < 100; i++)
					vstore_add(&s, &(struct violation){ VK_FILE, "openat", aprintf("/o/c%zu", i), 0, NULL, 0,
					    NULL, 0, 0, 0 });
			while ((r = read(pfd[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
				got += r;
			for (ssize_t k = 0; k < got; k++)
				lines += buf[k] == '\n';
			close(pfd[0]);
			close(pfd[1]);
		}
		CHECK(lines == 100, "100 refusals cycled 10 times: %d JSON lines, want 100", lines);
		vstore_clear(&s);
	}

	/* --violations=FILE past its cap: moved to FILE.1, the latest in FILE */
	{
		char dir[] = "/tmp/sbx-unit-vXXXXXX";
		struct vstore s;
		struct stat st, st1;
		const char *pad = aprintf("%0400d", 0);
		bool made = mkdtemp(dir) != NULL;

		vstore_init(&s, NULL, NULL, NULL);
		if (made) {
			s.json_dir = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
			s.json_name = "v.jsonl";
			s.json_fd = openat(s.json_dir, s.json_name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		}
		for (i = 0; s.json_fd >= 0 && i < 12000; i++)
			vstore_add(&s, &(struct violation){ VK_FILE, "openat", aprintf("/o/%s-%05zu", pad, i), 0, NULL, 0,
			    NULL, 0, 0, 0 });
		CHECK(made && fstatat(s.json_dir, "v.jsonl", &st, 0) == 0 && fstatat(s.json_dir, "v.jsonl.1", &st1, 0) == 0 &&
		    st.st_size <= SBX_VIOLATIONS_FILE_BYTES && st1.st_size <= SBX_VIOLATIONS_FILE_BYTES &&
		    st1.st_size > SBX_VIOLATIONS_FILE_BYTES - 1000, "FILE rotated to FILE.1 at the cap");
		if (made) {
			char tail[64] = { 0 };
			int fd = openat(s.json_dir, "v.jsonl", O_RDONLY | O_CLOEXEC);

			if (fd >= 0 && pread(fd, tail, sizeof(tail) - 1, st.st_size - 60) > 0)
				CHECK(strstr(tail, "-11999\"") != NULL, "the latest record is in FILE: %s", tail);
			if (fd >= 0)
				close(fd);
			close(s.json_fd);
			close(s.json_dir);
			rm_tree(dir);
		}
		vstore_clear(&s);
	}

	/* JSON lines: every field, strings escaped */
	{
		struct violation v = { VK_FILE, "openat", "/p/a\"b\n", 0, NULL, 42, "s\th", 1700000000123LL, 1, 0 };
		struct buf b = { 0 };

		violation_json(&v, &b);
		buf_putc(&b, '\0');
		check_str(b.p, "{\"time\":1700000000123,\"kind\":\"file\",\"op\":\"openat\",\"target\":\"/p/a\\\"b\\u000a\","
		    "\"port\":0,\"reason\":null,\"pid\":42,\"comm\":\"s\\u0009h\"}\n", "violation_json", __LINE__);
		free(b.p);
	}
}

/* ---- seccomp: a cBPF interpreter, verdict tables for both arches ------ */

struct sdata { int nr; uint32_t arch; uint64_t ip; uint64_t args[6]; };	/* struct seccomp_data */

/* Run a program over one syscall; counts executed instructions and, if rule
 * is not NULL, names the rule whose ret decided (the source map of the
 * returning instruction; -1 for the prologue and a closing ret ALLOW).
 * Refuses (returns 0xdeadbeef) on anything outside the subset the assembler
 * emits. */
static uint32_t
bpf_run(const struct bpf_prog *p, const struct sdata *d, unsigned *cost, int *rule)
{
	uint32_t a = 0;
	unsigned pc = 0;
	unsigned char raw[sizeof(struct sdata)];

	memcpy(raw, d, sizeof(raw));
	*cost = 0;
	while (pc < p->n) {
		const struct bpf_insn *in = &p->insn[pc];

		(*cost)++;
		switch (in->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (in->k + 4 > sizeof(raw) || in->k % 4)
				return 0xdeadbeef;
			memcpy(&a, raw + in->k, 4);
			pc++;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= in->k;
			pc++;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += 1 + (a == in->k ? in->jt : in->jf);
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += 1 + (a > in->k ? in->jt : in->jf);
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += 1 + (a >= in->k ? in->jt : in->jf);
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += 1 + ((a & in->k) ? in->jt : in->jf);
			break;
		case BPF_JMP | BPF_JA:
			pc += 1 + in->k;
			break;
		case BPF_RET | BPF_K:
			if (rule)
				*rule = p->rule_of[pc];
			return in->k;
		default:
			return 0xdeadbeef;
		}
	}
	return 0xdeadbeef;	/* fell off the end */
}

enum { X86 = 0, A64 = 1 };
#define EPERM_RET	SBX_RET_ERRNO(1)
#define ENOSYS_RET	SBX_RET_ERRNO(38)
#define KILL		SBX_RET_KILL_PROCESS
#define ALLOW		SBX_RET_ALLOW
#define NOTIF		SBX_RET_USER_NOTIF
#define AUDIT_I386	0x40000003U
#define AUDIT_ARM	0x40000028U

/* The verdict matrix: each line one syscall (its number on x86_64 and on
 * aarch64, -1 where the arch lacks it, written out rather than taken from
 * the table) and its verdict under the seven programs: the sandbox's by
 * default, with allow-all-unix-sockets, with allow-nested-userns, the
 * proxy's own, the write observer's (T: USER_NOTIF) and the observer's
 * lockdown (the proxy's, and no new process). A row of the rule table that moves to another group, loses
 * its test or its number changes fails here. */
static void
bpf_matrix(void)
{
#define E EPERM_RET
#define A ALLOW
#define N ENOSYS_RET
#define T SBX_RET_USER_NOTIF
#define PROXY_ONLY { A, A, A, E, A, E, A }
#define PROXY_ONLY_NOTIF { A, A, A, E, T, E, T }	/* and the observer traps it */
#define OBSERVED { A, A, A, A, T, A, T }		/* only the observer's program names it */
#define EVERYWHERE { E, E, E, E, A, E, A }
	static const struct {
		const char *what; int nr[2]; uint64_t a[6]; uint32_t want[7];
	} matrix[] = {
		/* unix-block: dropped by allow-all-unix-sockets, kept by the proxy */
		{ "socket(AF_UNIX)", { 41, 198 }, { 1, 1, 0 }, { E, A, E, E, A, E, A } },
		{ "socket(AF_VSOCK)", { 41, 198 }, { 40, 1, 0 }, { E, A, E, E, A, E, A } },
		{ "socket(AF_INET)", { 41, 198 }, { 2, 1, 0 }, { A, A, A, A, A, A, A } },
		{ "socket(AF_INET6)", { 41, 198 }, { 10, 1, 0 }, { A, A, A, A, A, A, A } },
		{ "io_uring_setup", { 425, 425 }, { 0, 0, 0 }, { E, A, E, E, A, E, A } },
		{ "io_uring_enter", { 426, 426 }, { 0, 0, 0 }, { E, A, E, E, A, E, A } },
		{ "io_uring_register", { 427, 427 }, { 0, 0, 0 }, { E, A, E, E, A, E, A } },
		{ "socketpair(AF_UNIX, SOCK_STREAM)", { 53, 199 }, { 1, 1, 0 }, { A, A, A, A, A, A, A } },
		{ "socketpair(AF_UNIX, SOCK_SEQPACKET|SOCK_CLOEXEC)", { 53, 199 }, { 1, 0x80005, 0 },
		  { A, A, A, A, A, A, A } },
		{ "socketpair(AF_UNIX, SOCK_DGRAM)", { 53, 199 }, { 1, 2, 0 }, { E, A, E, E, A, E, A } },
		{ "socketpair(AF_UNIX, SOCK_DGRAM|SOCK_NONBLOCK|SOCK_CLOEXEC)", { 53, 199 }, { 1, 0x80802, 0 },
		  { E, A, E, E, A, E, A } },
		/* namespaces and mounts: only the user namespace rows yield to allow-nested-userns */
		{ "unshare(CLONE_NEWUSER)", { 272, 97 }, { 0x10000000, 0, 0 }, { E, E, A, E, A, E, A } },
		{ "unshare(CLONE_NEWNS)", { 272, 97 }, { 0x20000, 0, 0 }, EVERYWHERE },
		{ "unshare(0x100000) as srt", { 272, 97 }, { 0x100000, 0, 0 }, EVERYWHERE },
		{ "unshare(CLONE_NEWNET)", { 272, 97 }, { 0x40000000, 0, 0 }, { A, A, A, A, A, A, A } },
		{ "clone(CLONE_NEWUSER|SIGCHLD)", { 56, 220 }, { 0x10000011, 0, 0 }, { E, E, A, E, A, E, A } },
		{ "clone(CLONE_NEWNS|SIGCHLD)", { 56, 220 }, { 0x20011, 0, 0 }, EVERYWHERE },
		{ "clone(thread flags)", { 56, 220 }, { 0x3d0f00, 0, 0 }, { A, A, A, A, T, E, T } },
		/* the observer's attribution checks (sbx.c 9b): sharing traps, vfork does not */
		{ "clone(CLONE_VM|CLONE_VFORK|SIGCHLD): posix_spawn", { 56, 220 }, { 0x4111, 0, 0 }, { A, A, A, A, A, E, A } },
		{ "clone(CLONE_VM|SIGCHLD)", { 56, 220 }, { 0x111, 0, 0 }, { A, A, A, A, T, E, T } },
		{ "clone(CLONE_FILES|SIGCHLD)", { 56, 220 }, { 0x411, 0, 0 }, { A, A, A, A, T, E, T } },
		{ "clone(fork: SIGCHLD|CHILD_SETTID|CHILD_CLEARTID)", { 56, 220 }, { 0x1200011, 0, 0 }, { A, A, A, A, A, E, A } },
		{ "clone3", { 435, 435 }, { 0, 0, 0 }, { N, N, N, N, A, N, A } },
		{ "setns", { 308, 268 }, { 0, 0, 0 }, EVERYWHERE },
		{ "mount", { 165, 40 }, { 0, 0, 0 }, EVERYWHERE },
		{ "umount2", { 166, 39 }, { 0, 0, 0 }, EVERYWHERE },
		{ "pivot_root", { 155, 41 }, { 0, 0, 0 }, EVERYWHERE },
		{ "chroot", { 161, 51 }, { 0, 0, 0 }, EVERYWHERE },
		{ "open_tree", { 428, 428 }, { 0, 0, 0 }, EVERYWHERE },
		{ "open_tree_attr", { 467, 467 }, { 0, 0, 0 }, EVERYWHERE },
		{ "move_mount", { 429, 429 }, { 0, 0, 0 }, EVERYWHERE },
		{ "fsopen", { 430, 430 }, { 0, 0, 0 }, EVERYWHERE },
		{ "fsconfig", { 431, 431 }, { 0, 0, 0 }, EVERYWHERE },
		{ "fsmount", { 432, 432 }, { 0, 0, 0 }, EVERYWHERE },
		{ "fspick", { 433, 433 }, { 0, 0, 0 }, EVERYWHERE },
		{ "mount_setattr", { 442, 442 }, { 0, 0, 0 }, EVERYWHERE },
		/* the terminal and the keyrings */
		{ "ioctl(TIOCSTI)", { 16, 29 }, { 0, 0x5412, 0 }, EVERYWHERE },
		{ "ioctl(TIOCLINUX)", { 16, 29 }, { 0, 0x541c, 0 }, EVERYWHERE },
		{ "ioctl(TIOCGWINSZ)", { 16, 29 }, { 0, 0x5413, 0 }, { A, A, A, A, A, A, A } },
		/* a subvolume or a snapshot: names no path of the call says */
		{ "ioctl(BTRFS_IOC_SNAP_CREATE)", { 16, 29 }, { 3, 0x50009401, 0 }, OBSERVED },
		{ "ioctl(BTRFS_IOC_SNAP_CREATE_V2)", { 16, 29 }, { 3, 0x50009417, 0 }, { E, E, E, E, T, E, T } },
		{ "ioctl(BTRFS_IOC_SUBVOL_SETFLAGS)", { 16, 29 }, { 3, 0x4008941a, 0 }, EVERYWHERE },
		{ "ioctl(BTRFS_IOC_SUBVOL_CREATE)", { 16, 29 }, { 3, 0x5000940e, 0 }, OBSERVED },
		{ "ioctl(BTRFS_IOC_SUBVOL_CREATE_V2)", { 16, 29 }, { 3, 0x50009418, 0 }, OBSERVED },
		{ "ioctl(BTRFS_IOC_SNAP_DESTROY)", { 16, 29 }, { 3, 0x5000940f, 0 }, OBSERVED },
		{ "ioctl(BTRFS_IOC_SNAP_DESTROY_V2)", { 16, 29 }, { 3, 0x5000943f, 0 }, OBSERVED },
		{ "ioctl(BCH_IOCTL_SUBVOLUME_CREATE)", { 16, 29 }, { 3, 0x4020bc10, 0 }, { E, E, E, E, T, E, T } },
		{ "ioctl(BCH_IOCTL_SUBVOLUME_DESTROY)", { 16, 29 }, { 3, 0x4020bc11, 0 }, OBSERVED },
		{ "ioctl(BTRFS_IOC_SNAP_CREATE | garbage << 32)", { 16, 29 }, { 3, 0xffffffff50009401ULL, 0 }, OBSERVED },
		{ "keyctl", { 250, 219 }, { 0, 0, 0 }, EVERYWHERE },
		{ "add_key", { 248, 217 }, { 0, 0, 0 }, EVERYWHERE },
		{ "request_key", { 249, 218 }, { 0, 0, 0 }, EVERYWHERE },
		{ "memfd_secret", { 447, 447 }, { 0, 0, 0 }, { N, N, N, N, A, N, A } },
		/* resource limits: a process's own only */
		{ "prlimit64(0, RLIMIT_NOFILE): its own", { 302, 261 }, { 0, 7, 0 }, { A, A, A, A, A, A, A } },
		{ "prlimit64(1, RLIMIT_NOFILE): sbx-init's", { 302, 261 }, { 1, 7, 0 }, EVERYWHERE },
		/* the proxy's own: the sandbox keeps these (its mounts decide writes) */
		{ "execve", { 59, 221 }, { 0, 0, 0 }, PROXY_ONLY },
		{ "execveat", { 322, 281 }, { 0, 0, 0 }, PROXY_ONLY },
		{ "ptrace", { 101, 117 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		/* the observer reads the caller with it: its lockdown keeps it */
		{ "process_vm_readv", { 310, 270 }, { 0, 0, 0 }, { A, A, A, E, A, A, A } },
		{ "process_vm_writev", { 311, 271 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "open(O_WRONLY)", { 2, -1 }, { 0, 01, 0 }, PROXY_ONLY_NOTIF },
		{ "open(O_RDONLY|O_CLOEXEC)", { 2, -1 }, { 0, 02000000, 0 }, { A, A, A, A, A, A, A } },
		{ "openat(O_RDWR)", { 257, 56 }, { 0xffffff9c, 0, 02 }, PROXY_ONLY_NOTIF },
		{ "openat(O_WRONLY|O_CREAT|O_TRUNC)", { 257, 56 }, { 0xffffff9c, 0, 01101 }, PROXY_ONLY_NOTIF },
		{ "openat(O_RDONLY|O_CLOEXEC|O_DIRECTORY)", { 257, 56 }, { 0xffffff9c, 0, 02200000 }, { A, A, A, A, A, A, A } },
		{ "openat2", { 437, 437 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "creat", { 85, -1 }, { 0, 0644, 0 }, PROXY_ONLY_NOTIF },
		{ "truncate", { 76, 45 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "unlink", { 87, -1 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "unlinkat", { 263, 35 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "rename", { 82, -1 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "renameat", { 264, 38 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "renameat2", { 316, 276 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "mkdir", { 83, -1 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "mkdirat", { 258, 34 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "rmdir", { 84, -1 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "symlink", { 88, -1 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "symlinkat", { 266, 36 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "link", { 86, -1 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "linkat", { 265, 37 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "chmod", { 90, -1 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "fchmodat", { 268, 53 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "chown", { 92, -1 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "fchownat", { 260, 54 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		{ "lchown", { 94, -1 }, { 0, 0, 0 }, PROXY_ONLY_NOTIF },
		/* what the proxy lives on */
		{ "read", { 0, 63 }, { 0, 0, 0 }, { A, A, A, A, A, A, A } },
		{ "connect", { 42, 203 }, { 0, 0, 0 }, { A, A, A, A, T, A, T } },
		{ "accept4", { 288, 242 }, { 0, 0, 0 }, { A, A, A, A, A, A, A } },
		{ "getpid", { 39, 172 }, { 0, 0, 0 }, { A, A, A, A, A, A, A } },
		/* the write observer's own, beyond srt's list: xattrs, times, nodes */
		{ "open(O_TMPFILE|O_RDWR)", { 2, -1 }, { 0, 020200002, 0 }, PROXY_ONLY_NOTIF },
		{ "openat(__O_TMPFILE bit alone)", { 257, 56 }, { 0xffffff9c, 0, 020000000 }, OBSERVED },
		{ "mknod", { 133, -1 }, { 0, 0, 0 }, OBSERVED },
		{ "mknodat", { 259, 33 }, { 0, 0, 0 }, OBSERVED },
		{ "fchmodat2", { 452, 452 }, { 0, 0, 0 }, OBSERVED },
		{ "utime", { 132, -1 }, { 0, 0, 0 }, OBSERVED },
		{ "utimes", { 235, -1 }, { 0, 0, 0 }, OBSERVED },
		{ "utimensat", { 280, 88 }, { 0, 0x7ffc0010, 0 }, OBSERVED },
		{ "utimensat(fd, NULL): futimens, no path", { 280, 88 }, { 3, 0, 0 }, { A, A, A, A, A, A, A } },
		{ "setxattr", { 188, 5 }, { 0, 0, 0 }, OBSERVED },
		{ "lsetxattr", { 189, 6 }, { 0, 0, 0 }, OBSERVED },
		{ "fsetxattr", { 190, 7 }, { 0, 0, 0 }, OBSERVED },
		{ "setxattrat", { 463, 463 }, { 0, 0, 0 }, OBSERVED },
		{ "removexattr", { 197, 14 }, { 0, 0, 0 }, OBSERVED },
		{ "lremovexattr", { 198, 15 }, { 0, 0, 0 }, OBSERVED },
		{ "fremovexattr", { 199, 16 }, { 0, 0, 0 }, OBSERVED },
		{ "removexattrat", { 466, 466 }, { 0, 0, 0 }, OBSERVED },
		/* ... the utimes family whole, changes by descriptor, sends with an
		 * address, a Unix socket's bind; in a session, setsid */
		{ "futimesat", { 261, -1 }, { 0xffffff9c, 0x7ffc0010, 0 }, OBSERVED },
		{ "fchmod", { 91, 52 }, { 3, 0644, 0 }, OBSERVED },
		{ "fchown", { 93, 55 }, { 3, 0, 0 }, OBSERVED },
		{ "utimensat(fd, path at 0x7e0100000000)", { 280, 88 }, { 0xffffff9c, 0x7e0100000000ULL, 0 }, OBSERVED },
		{ "sendto(fd, buf, len, 0, sockaddr, 16)", { 44, 206 }, { 3, 0x7ffc0010, 1, 0, 0x7ffc0100, 16 }, OBSERVED },
		{ "sendto(..., sockaddr at 0x7e0100000000)", { 44, 206 }, { 3, 0x7ffc0010, 1, 0, 0x7e0100000000ULL, 16 },
		  OBSERVED },
		{ "send(): sendto with no address", { 44, 206 }, { 3, 0x7ffc0010, 1, 0, 0, 0 }, { A, A, A, A, A, A, A } },
		{ "sendmsg", { 46, 211 }, { 3, 0x7ffc0010, 0 }, OBSERVED },
		{ "sendmmsg", { 307, 269 }, { 3, 0x7ffc0010, 2 }, OBSERVED },
		{ "bind", { 49, 200 }, { 3, 0x7ffc0010, 16 }, OBSERVED },
		{ "setsid", { 112, 157 }, { 0, 0, 0 }, { A, A, A, A, A, A, T } },
		{ "setsid(the session's key): an exec's own, from sbx-init", { 112, 157 }, { 0x5eed, 0, 0 },
		  { A, A, A, A, A, A, A } },
		{ "setsid(the key in the high word)", { 112, 157 }, { 0x5eed00000000ULL, 0, 0 }, { A, A, A, A, A, A, T } },
		/* the observer's lockdown: no new process */
		{ "fork", { 57, -1 }, { 0, 0, 0 }, { A, A, A, A, A, E, A } },
		{ "vfork", { 58, -1 }, { 0, 0, 0 }, { A, A, A, A, A, E, A } },
	};
#undef E
#undef A
#undef N
#undef T
#undef PROXY_ONLY
#undef PROXY_ONLY_NOTIF
#undef OBSERVED
#undef EVERYWHERE
	static const char *const policy_names[7] = { "default", "allow-all-unix-sockets", "allow-nested-userns", "proxy",
		"observer", "observer's lockdown", "a session's observer" };
	static const struct bpf_opts policies[7] = { { false, false, false, false, false, false, 0 },
		{ true, false, false, false, false, false, 0 }, { false, true, false, false, false, false, 0 },
		{ false, false, true, false, false, false, 0 }, { false, false, false, true, false, false, 0 },
		{ false, false, true, false, true, false, 0 }, { false, false, false, true, false, true, 0x5eed } };
	static struct bpf_prog progs[2][7];
	/* which rows a passing line ended on, per arch; which syscalls with
	 * argument tests a passing line saw allowed (no test matched) */
	static bool fired[2][LEN(bpf_rules)], passed[2][SC_COUNT];
	size_t m, j;
	int k, pol;

	for (k = 0; k < 2; k++)
		for (pol = 0; pol < 7; pol++)
			bpf_assemble(&bpf_arches[k], &policies[pol], &progs[k][pol]);
	for (m = 0; m < LEN(matrix); m++)
		for (k = 0; k < 2; k++) {
			const struct bpf_arch *arch = &bpf_arches[k];
			struct sdata d = { matrix[m].nr[k], arch->audit_arch, 0, { 0 } };

			memcpy(d.args, matrix[m].a, sizeof(d.args));
			if (matrix[m].nr[k] < 0)
				continue;
			for (pol = 0; pol < 7; pol++) {
				unsigned cost;
				int rule = -1;
				uint32_t got = bpf_run(&progs[k][pol], &d, &cost, &rule);

				CHECK(got == matrix[m].want[pol], "%s %s under the %s program: got 0x%08x, want 0x%08x",
				    arch->name, matrix[m].what, policy_names[pol], got, matrix[m].want[pol]);
				if (got != matrix[m].want[pol])
					continue;
				if (rule >= 0 && got == bpf_rules[rule].action)
					fired[k][rule] = true;
				for (j = 0; j < SC_COUNT; j++)
					if (got == ALLOW && arch->nr[j] == matrix[m].nr[k])
						passed[k][j] = true;
			}
		}
	/* SECURITY: every row of the rule table, in every group (unix-block,
	 * namespaces and mounts, terminal, keyring, the proxy's own), has a line
	 * above that ends on that row's ret, on each arch that has the syscall;
	 * every syscall with argument tests has a line where none matches. A row
	 * added without a line fails here; a row deleted fails its line. */
	for (k = 0; k < 2; k++) {
		bool has_args[SC_COUNT] = { false };

		for (j = 0; j < LEN(bpf_rules); j++) {
			const struct bpf_rule *r = &bpf_rules[j];

			if (bpf_arches[k].nr[r->sc] < 0)
				continue;
			has_args[r->sc] |= r->cmp != CMP_NONE;
			CHECK(fired[k][j], "%s: rule %zu (%s%s, group %d: %s) has no line in the verdict matrix that ends on it",
			    bpf_arches[k].name, j, sc_names[r->sc], r->cmp == CMP_NONE ? "" :
			    aprintf("(args[%d] %s 0x%x)", r->arg, r->cmp == CMP_EQ ? "==" : "&", r->value),
			    (int)r->group, r->why);
		}
		for (j = 0; j < SC_COUNT; j++)
			CHECK(!has_args[j] || passed[k][j], "%s: %s has argument tests but no matrix line where none matches",
			    bpf_arches[k].name, sc_names[j]);
	}
}

/* What the write observer sees: every system call that can write a path
 * or reach an address, on both arches (numbers written out, -1 where the
 * arch lacks it), with arguments that name one. Each is observed (the
 * observer's program stops it: USER_NOTIF, and obs_calls says where the
 * path or address lies), or named here with why not (and the program
 * lets it go). The other way round too: every call the observer's program
 * stops is named here, so a rule added without its row fails, and so
 * does a row whose call lost its rule. */
static void
observer_coverage(void)
{
#define OBS_	NULL	/* observed */
#define BY_FD	"through a descriptor: it needs one opened for writing, and that open was observed"
#define FILTERED	"refused by the sandbox's own filter (EPERM) before any path is looked at: ERRNO beats USER_NOTIF"
#define HOST_CAP	"needs a capability in the host's user namespace: the kernel refuses it (EPERM) first"
	static const struct { const char *name; int nr[2]; uint64_t a[6]; const char *why_not; } calls[] = {
		{ "open(O_WRONLY)", { 2, -1 }, { 0x7ffc0010, 1 }, OBS_ },
		{ "openat(O_WRONLY)", { 257, 56 }, { 0xffffff9c, 0x7ffc0010, 1 }, OBS_ },
		{ "openat2", { 437, 437 }, { 0xffffff9c, 0x7ffc0010, 0x7ffc0100, 24 }, OBS_ },
		{ "creat", { 85, -1 }, { 0x7ffc0010, 0644 }, OBS_ },
		{ "truncate", { 76, 45 }, { 0x7ffc0010 }, OBS_ },
		{ "unlink", { 87, -1 }, { 0x7ffc0010 }, OBS_ },
		{ "unlinkat", { 263, 35 }, { 0xffffff9c, 0x7ffc0010 }, OBS_ },
		{ "rmdir", { 84, -1 }, { 0x7ffc0010 }, OBS_ },
		{ "rename", { 82, -1 }, { 0x7ffc0010, 0x7ffc0100 }, OBS_ },
		{ "renameat", { 264, 38 }, { 0xffffff9c, 0x7ffc0010, 0xffffff9c, 0x7ffc0100 }, OBS_ },
		{ "renameat2", { 316, 276 }, { 0xffffff9c, 0x7ffc0010, 0xffffff9c, 0x7ffc0100 }, OBS_ },
		{ "mkdir", { 83, -1 }, { 0x7ffc0010, 0755 }, OBS_ },
		{ "mkdirat", { 258, 34 }, { 0xffffff9c, 0x7ffc0010, 0755 }, OBS_ },
		{ "mknod", { 133, -1 }, { 0x7ffc0010, 010644 }, OBS_ },
		{ "mknodat", { 259, 33 }, { 0xffffff9c, 0x7ffc0010, 010644 }, OBS_ },
		{ "symlink", { 88, -1 }, { 0x7ffc0010, 0x7ffc0100 }, OBS_ },
		{ "symlinkat", { 266, 36 }, { 0x7ffc0010, 0xffffff9c, 0x7ffc0100 }, OBS_ },
		{ "link", { 86, -1 }, { 0x7ffc0010, 0x7ffc0100 }, OBS_ },
		{ "linkat", { 265, 37 }, { 0xffffff9c, 0x7ffc0010, 0xffffff9c, 0x7ffc0100 }, OBS_ },
		{ "chmod", { 90, -1 }, { 0x7ffc0010, 0755 }, OBS_ },
		{ "fchmodat", { 268, 53 }, { 0xffffff9c, 0x7ffc0010, 0755 }, OBS_ },
		{ "fchmodat2", { 452, 452 }, { 0xffffff9c, 0x7ffc0010, 0755 }, OBS_ },
		{ "fchmod", { 91, 52 }, { 3, 0755 }, OBS_ },
		{ "chown", { 92, -1 }, { 0x7ffc0010, 0, 0 }, OBS_ },
		{ "fchownat", { 260, 54 }, { 0xffffff9c, 0x7ffc0010, 0, 0 }, OBS_ },
		{ "lchown", { 94, -1 }, { 0x7ffc0010, 0, 0 }, OBS_ },
		{ "fchown", { 93, 55 }, { 3, 0, 0 }, OBS_ },
		{ "utime", { 132, -1 }, { 0x7ffc0010 }, OBS_ },
		{ "utimes", { 235, -1 }, { 0x7ffc0010 }, OBS_ },
		{ "futimesat", { 261, -1 }, { 0xffffff9c, 0x7ffc0010 }, OBS_ },
		{ "utimensat", { 280, 88 }, { 0xffffff9c, 0x7ffc0010 }, OBS_ },
		{ "utimensat, its path at an address whose low word is 0", { 280, 88 }, { 0xffffff9c, 0x7e0100000000ULL },
		  OBS_ },
		{ "setxattr", { 188, 5 }, { 0x7ffc0010, 0x7ffc0100 }, OBS_ },
		{ "lsetxattr", { 189, 6 }, { 0x7ffc0010, 0x7ffc0100 }, OBS_ },
		{ "fsetxattr", { 190, 7 }, { 3, 0x7ffc0100 }, OBS_ },
		{ "setxattrat", { 463, 463 }, { 0xffffff9c, 0x7ffc0010 }, OBS_ },
		{ "removexattr", { 197, 14 }, { 0x7ffc0010, 0x7ffc0100 }, OBS_ },
		{ "lremovexattr", { 198, 15 }, { 0x7ffc0010, 0x7ffc0100 }, OBS_ },
		{ "fremovexattr", { 199, 16 }, { 3, 0x7ffc0100 }, OBS_ },
		{ "removexattrat", { 466, 466 }, { 0xffffff9c, 0x7ffc0010 }, OBS_ },
		{ "bind (a Unix socket's path is a name written)", { 49, 200 }, { 3, 0x7ffc0010, 16 }, OBS_ },
		{ "connect", { 42, 203 }, { 3, 0x7ffc0010, 16 }, OBS_ },
		{ "sendto with an address (UDP; TCP fast open)", { 44, 206 }, { 3, 0x7ffc0010, 1, 0x20000000, 0x7ffc0100, 16 },
		  OBS_ },
		{ "sendto, its address at 0x7e0100000000", { 44, 206 }, { 3, 0x7ffc0010, 1, 0, 0x7e0100000000ULL, 16 }, OBS_ },
		{ "sendmsg", { 46, 211 }, { 3, 0x7ffc0010, 0 }, OBS_ },
		{ "sendmmsg", { 307, 269 }, { 3, 0x7ffc0010, 2, 0 }, OBS_ },
		/* what lets a process change what another's call names: seen for the audit's attribution
		 * (sbx.c 9b), which it only ever makes unsure */
		{ "clone(CLONE_VM|SIGCHLD): a process in another's memory", { 56, 220 }, { 0x111 }, OBS_ },
		{ "clone(thread flags): a vfork child's would share its parent's memory", { 56, 220 }, { 0x3d0f00 }, OBS_ },
		{ "ptrace(PTRACE_POKEDATA)", { 101, 117 }, { 5, 42, 0x7ffc0010, 0 }, OBS_ },
		{ "process_vm_writev", { 311, 271 }, { 42, 0x7ffc0010, 1, 0x7ffc0100, 1, 0 }, OBS_ },
		/* a subvolume or a snapshot: a tree of names no path of the call says; the audit is unsure */
		{ "ioctl(BTRFS_IOC_SNAP_CREATE_V2)", { 16, 29 }, { 3, 0x50009417, 0x7ffc0010 }, OBS_ },
		{ "ioctl(BCH_IOCTL_SUBVOLUME_CREATE)", { 16, 29 }, { 3, 0x4020bc10, 0x7ffc0010 }, OBS_ },
		/* named, not observed */
		{ "ioctl(FICLONE)", { 16, 29 }, { 4, 0x40049409, 3 }, BY_FD },
		{ "clone(CLONE_VM|CLONE_VFORK|SIGCHLD): vfork, posix_spawn", { 56, 220 }, { 0x4111 },
		  "its parent waits until it execs (sbx-init starts a run's command so, before sbx holds the "
		  "listener); the child's own calls are looked at for memory it shares (obs_racy)" },
		{ "vfork", { 58, -1 }, { 0 }, "as clone(CLONE_VM|CLONE_VFORK)" },
		{ "fork: clone(SIGCHLD)", { 56, 220 }, { 0x1200011 }, "a copy of everything: nothing shared" },
		{ "utimensat(fd, NULL): futimens", { 280, 88 }, { 3, 0, 0x7ffc0010 },
		  "no path; tar calls it once a file, and a write open of the descriptor was observed (one opened "
		  "only to read, on a read-only mount, is refused unreported: a hint lost)" },
		{ "send(): sendto with no address", { 44, 206 }, { 3, 0x7ffc0010, 1, 0, 0, 0 },
		  "no address: a connected socket's, whose connect was observed" },
		{ "ftruncate", { 77, 46 }, { 3, 0 }, BY_FD },
		{ "fallocate", { 285, 47 }, { 3, 0, 0, 4096 }, BY_FD },
		{ "write", { 1, 64 }, { 3, 0x7ffc0010, 1 }, BY_FD },
		{ "pwrite64", { 18, 68 }, { 3, 0x7ffc0010, 1, 0 }, BY_FD },
		{ "writev", { 20, 66 }, { 3, 0x7ffc0010, 1 }, BY_FD },
		{ "pwritev", { 296, 70 }, { 3, 0x7ffc0010, 1, 0 }, BY_FD },
		{ "pwritev2", { 328, 287 }, { 3, 0x7ffc0010, 1, 0 }, BY_FD },
		{ "copy_file_range", { 326, 285 }, { 3, 0, 4, 0, 4096 }, BY_FD },
		{ "sendfile", { 40, 71 }, { 4, 3, 0, 4096 }, BY_FD },
		{ "splice", { 275, 76 }, { 3, 0, 4, 0, 4096 }, BY_FD },
		{ "mount", { 165, 40 }, { 0x7ffc0010, 0x7ffc0100 }, FILTERED },
		{ "umount2", { 166, 39 }, { 0x7ffc0010 }, FILTERED },
		{ "pivot_root", { 155, 41 }, { 0x7ffc0010, 0x7ffc0100 }, FILTERED },
		{ "chroot", { 161, 51 }, { 0x7ffc0010 }, FILTERED },
		{ "open_tree", { 428, 428 }, { 0xffffff9c, 0x7ffc0010 }, FILTERED },
		{ "move_mount", { 429, 429 }, { 3, 0x7ffc0010, 0xffffff9c, 0x7ffc0100 }, FILTERED },
		{ "io_uring_enter (IORING_OP_OPENAT, _CONNECT, _SENDMSG)", { 426, 426 }, { 3, 1 },
		  "refused by the sandbox's filter unless allow-all-unix-sockets; with it, a ring's operations are "
		  "never system calls a seccomp program sees" },
		{ "open_by_handle_at", { 304, 265 }, { 3, 0x7ffc0010, 1 }, HOST_CAP " (CAP_DAC_READ_SEARCH)" },
		{ "acct", { 163, 89 }, { 0x7ffc0010 }, HOST_CAP " (CAP_SYS_PACCT)" },
		{ "swapon", { 167, 224 }, { 0x7ffc0010 }, HOST_CAP " (CAP_SYS_ADMIN)" },
		{ "quotactl", { 179, 60 }, { 0, 0x7ffc0010 }, HOST_CAP " (CAP_SYS_ADMIN)" },
		{ "mq_open(O_CREAT)", { 240, 180 }, { 0x7ffc0010, 0x41 },
		  "a queue in the kernel's mqueue file system, not a path of the plan" },
	};
#undef OBS_
#undef BY_FD
#undef FILTERED
#undef HOST_CAP
	for (int k = 0; k < 2; k++) {
		const struct bpf_arch *arch = &bpf_arches[k];
		struct bpf_opts o = { false, false, false, true, false, true, 0x5eed };	/* a session's: the most it stops */
		bool named[SC_COUNT] = { false };
		struct bpf_prog p;

		bpf_assemble(arch, &o, &p);
		for (size_t i = 0; i < LEN(calls); i++) {
			struct sdata d = { calls[i].nr[k], arch->audit_arch, 0, { 0 } };
			const struct obs_call *c = NULL;
			unsigned cost;
			uint32_t got;

			if (calls[i].nr[k] < 0)
				continue;
			memcpy(d.args, calls[i].a, sizeof(d.args));
			got = bpf_run(&p, &d, &cost, NULL);
			for (size_t j = 0; j < LEN(obs_calls) && !c; j++)
				if (arch->nr[obs_calls[j].sc] == calls[i].nr[k])
					c = &obs_calls[j];
			if (!calls[i].why_not) {
				CHECK(got == SBX_RET_USER_NOTIF && c, "%s: %s is not observed (verdict 0x%08x, %s in obs_calls)",
				    arch->name, calls[i].name, got, c ? "" : "not");
				if (c)
					named[c->sc] = true;
			} else {
				CHECK(got != SBX_RET_USER_NOTIF && *calls[i].why_not, "%s: %s is named as not observed, but "
				    "the observer's program stops it", arch->name, calls[i].name);
			}
		}
		/* the other way: nothing observed goes unnamed above (a session's
		 * setsid writes no path and reaches no address: it tells whose) */
		for (size_t j = 0; j < LEN(obs_calls); j++)
			CHECK(arch->nr[obs_calls[j].sc] < 0 || named[obs_calls[j].sc] || obs_calls[j].what == OW_SETSID,
			    "%s: %s is in obs_calls but has no row in observer_coverage", arch->name, sc_names[obs_calls[j].sc]);
		for (size_t j = 0; j < LEN(bpf_rules); j++)
			CHECK(arch->nr[bpf_rules[j].sc] < 0 || !bpf_rule_kept(&bpf_rules[j], &o) ||
			    bpf_rules[j].action != SBX_RET_USER_NOTIF || named[bpf_rules[j].sc] || bpf_rules[j].sc == SC_setsid,
			    "%s: the observer's program stops %s, which has no row in observer_coverage", arch->name,
			    sc_names[bpf_rules[j].sc]);
	}
}

/* The shape of every program the assembler makes: for each combination of
 * the options on both arches, each jump lands forward and inside the
 * program, nothing runs past the end, and every instruction is reached
 * from the first (a label placed in the wrong spot would skip code or
 * strand it). The kernel's verifier refuses the first two at load time,
 * but only on the machine's own arch and only when the program runs. */
static void
bpf_shapes(void)
{
	int k, opts;

	for (k = 0; k < 2; k++)
		for (opts = 0; opts < 8; opts++) {
			struct bpf_opts o = { (opts & 1) != 0, (opts & 2) != 0, (opts & 4) != 0, false, false, false, 0 };
			struct bpf_prog p;
			bool reached[SBX_BPF_MAX_INSNS] = { false };
			unsigned i, bad = 0, stranded = 0;

			bpf_assemble(&bpf_arches[k], &o, &p);
			reached[0] = true;
			for (i = 0; i < p.n; i++) {
				const struct bpf_insn *in = &p.insn[i];
				unsigned t = i + 1 + in->jt, f = i + 1 + in->jf;

				if (!reached[i])
					stranded++;
				if ((in->code & 0x07) == BPF_RET)
					continue;
				if ((in->code & 0x07) != BPF_JMP)
					t = f = i + 1;
				else if (in->code == (BPF_JMP | BPF_JA))
					bad++;	/* k would be the distance; the assembler emits none */
				if (t >= p.n || f >= p.n) {
					bad++;
					continue;
				}
				reached[t] = reached[f] = true;
			}
			CHECK(bad == 0 && stranded == 0 && p.n > 0 && (p.insn[p.n - 1].code & 0x07) == BPF_RET,
			    "%s opts %d: %u jumps out of the program, %u instructions never reached",
			    bpf_arches[k].name, opts, bad, stranded);
		}
}

/* Labels misused are reported by bpf_resolve(), not turned into a program;
 * bpf_assemble() makes that a BUG, which would end this binary, so the
 * assembler's pieces are driven by hand here. */
static void
bpf_label_misuse(void)
{
	static const char *const want[] = { NULL, "never placed", "backwards", "is past the end", "8 bits",
		"placed twice", "never made", "past the end of the program", NULL };
	size_t c;

	for (c = 0; c < LEN(want); c++) {
		struct bpf_asm a;
		struct bpf_prog p;
		unsigned l, m, i;
		const char *err;

		bpf_asm_start(&a, &p, &bpf_arches[0]);
		l = bpf_label_new(&a);
		m = bpf_label_new(&a);
		if (c == 2)
			bpf_label(&a, l);	/* behind the jump */
		bpf_stmt(&a, BPF_LD | BPF_W | BPF_ABS, SD_NR, -1);
		bpf_jump_to(&a, BPF_JMP | BPF_JEQ | BPF_K, 41, LBL_NEXT, c == 6 ? 99 : l, -1);
		bpf_stmt(&a, BPF_RET | BPF_K, SBX_RET_KILL_PROCESS, -1);
		for (i = 0; (c == 4 || c == 8) && i < (c == 4 ? 255 : 254); i++)	/* 256 away; 255 fits */
			bpf_stmt(&a, BPF_RET | BPF_K, SBX_RET_KILL_PROCESS, -1);
		if (c != 1 && c != 2 && c != 3)
			bpf_label(&a, l);
		if (c == 5)
			bpf_label(&a, l);
		bpf_label(&a, m);	/* placed and never named: harmless */
		if (c != 3 && c != 7)
			bpf_stmt(&a, BPF_RET | BPF_K, SBX_RET_ALLOW, -1);
		if (c == 3)
			bpf_label(&a, l);	/* after the last instruction */
		if (c == 7)
			bpf_stmt(&a, BPF_LD | BPF_W | BPF_ABS, SD_NR, -1);
		err = bpf_resolve(&a);
		if (!want[c])
			CHECK(!err && p.insn[1].jt == 0 && p.insn[1].jf == (c == 8 ? 255 : 1),
			    "labels resolve (case %zu): %s, jt %u jf %u", c, err ? err : "ok", p.insn[1].jt, p.insn[1].jf);
		else
			CHECK(err && strstr(err, want[c]), "label misuse %zu: want \"%s\", got \"%s\"", c, want[c],
			    err ? err : "no error");
	}
}

static void
test_bpf(void)
{
	static const struct {
		int arch; uint32_t audit; int nr; uint64_t a0, a1; int opts; uint32_t want; const char *what; uint64_t a2;
	} cases[] = {
		/* unix-block, and its 32-bit compare */
		{ X86, 0, 41, 1, 1, 0, EPERM_RET, "socket(AF_UNIX)", 0 },
		{ X86, 0, 41, 0xdeadbeef00000001ULL, 1, 0, EPERM_RET, "socket(AF_UNIX | garbage << 32)", 0 },
		{ X86, 0, 41, 40, 1, 0, EPERM_RET, "socket(AF_VSOCK)", 0 },
		{ X86, 0, 41, 2, 1, 0, ALLOW, "socket(AF_INET)", 0 },
		{ X86, 0, 41, 10, 1, 0, ALLOW, "socket(AF_INET6)", 0 },
		{ X86, 0, 41, 16, 1, 0, ALLOW, "socket(AF_NETLINK)", 0 },
		{ X86, 0, 41, 0x100000001ULL, 1, 1, ALLOW, "allow-all-unix-sockets: socket(AF_UNIX)", 0 },
		{ X86, 0, 425, 0, 0, 0, EPERM_RET, "io_uring_setup", 0 },
		{ X86, 0, 426, 0, 0, 0, EPERM_RET, "io_uring_enter", 0 },
		{ X86, 0, 427, 0, 0, 0, EPERM_RET, "io_uring_register", 0 },
		{ X86, 0, 425, 0, 0, 1, ALLOW, "allow-all-unix-sockets: io_uring_setup", 0 },
		{ X86, 0, 53, 1, 1, 0, ALLOW, "socketpair(AF_UNIX) stays allowed", 0 },
		/* namespaces */
		{ X86, 0, 272, 0x10000000, 0, 0, EPERM_RET, "unshare(CLONE_NEWUSER)", 0 },
		{ X86, 0, 272, 0x20000, 0, 0, EPERM_RET, "unshare(CLONE_NEWNS)", 0 },
		{ X86, 0, 272, 0x100000, 0, 0, EPERM_RET, "unshare(0x100000) as srt", 0 },
		{ X86, 0, 272, 0x40000000, 0, 0, ALLOW, "unshare(CLONE_NEWNET)", 0 },
		{ X86, 0, 272, 0xffffffff00000000ULL, 0, 0, ALLOW, "unshare(flags only in the upper half)", 0 },
		{ X86, 0, 272, 0x10000000, 0, 2, ALLOW, "allow-nested-userns: unshare(CLONE_NEWUSER)", 0 },
		{ X86, 0, 272, 0x10020000, 0, 2, EPERM_RET, "allow-nested-userns: unshare(NEWUSER|NEWNS)", 0 },
		{ X86, 0, 56, 0x10000000 | 17, 0, 0, EPERM_RET, "clone(CLONE_NEWUSER)", 0 },
		{ X86, 0, 56, 0x20000 | 17, 0, 0, EPERM_RET, "clone(CLONE_NEWNS)", 0 },
		{ X86, 0, 56, 0x3d0f00, 0, 0, ALLOW, "clone(thread flags)", 0 },
		{ X86, 0, 435, 0, 0, 0, ENOSYS_RET, "clone3 -> ENOSYS", 0 },
		{ X86, 0, 308, 0, 0, 0, EPERM_RET, "setns", 0 },
		{ X86, 0, 165, 0, 0, 0, EPERM_RET, "mount", 0 },
		{ X86, 0, 166, 0, 0, 0, EPERM_RET, "umount2", 0 },
		{ X86, 0, 155, 0, 0, 0, EPERM_RET, "pivot_root", 0 },
		{ X86, 0, 161, 0, 0, 0, EPERM_RET, "chroot", 0 },
		{ X86, 0, 428, 0, 0, 0, EPERM_RET, "open_tree", 0 },
		{ X86, 0, 429, 0, 0, 0, EPERM_RET, "move_mount", 0 },
		{ X86, 0, 430, 0, 0, 0, EPERM_RET, "fsopen", 0 },
		{ X86, 0, 431, 0, 0, 0, EPERM_RET, "fsconfig", 0 },
		{ X86, 0, 432, 0, 0, 0, EPERM_RET, "fsmount", 0 },
		{ X86, 0, 433, 0, 0, 0, EPERM_RET, "fspick", 0 },
		{ X86, 0, 442, 0, 0, 0, EPERM_RET, "mount_setattr", 0 },
		{ X86, 0, 467, 0, 0, 0, EPERM_RET, "open_tree_attr", 0 },
		/* terminal and keys */
		{ X86, 0, 16, 0, 0x5412, 0, EPERM_RET, "ioctl(TIOCSTI)", 0 },
		{ X86, 0, 16, 0, 0xffffffff00005412ULL, 0, EPERM_RET, "ioctl(TIOCSTI | garbage << 32)", 0 },
		{ X86, 0, 16, 0, 0x541c, 0, EPERM_RET, "ioctl(TIOCLINUX)", 0 },
		{ X86, 0, 16, 0, 0x5413, 0, ALLOW, "ioctl(TIOCGWINSZ)", 0 },
		{ X86, 0, 16, 0, 0x5411, 0, ALLOW, "ioctl(TIOCOUTQ), the neighbour below", 0 },
		{ X86, 0, 250, 0, 0, 0, EPERM_RET, "keyctl", 0 },
		{ X86, 0, 248, 0, 0, 0, EPERM_RET, "add_key", 0 },
		{ X86, 0, 249, 0, 0, 0, EPERM_RET, "request_key", 0 },
		{ X86, 0, 447, 0, 0, 0, ENOSYS_RET, "memfd_secret", 0 },
		{ A64, 0, 447, 0, 0, 0, ENOSYS_RET, "aarch64 memfd_secret", 0 },
		{ X86, 0, 302, 0, 7, 0, ALLOW, "prlimit64(0): its own limits", 0 },
		{ X86, 0, 302, 0xffffffff00000000ULL, 7, 0, ALLOW, "prlimit64(garbage << 32): the kernel reads an int, 0", 0 },
		{ X86, 0, 302, 1, 7, 0, EPERM_RET, "prlimit64(1): sbx-init's limits", 0 },
		/* other ABIs */
		{ X86, AUDIT_I386, 102, 1, 0, 0, KILL, "i386 socketcall (int 0x80)", 0 },
		{ X86, AUDIT_I386, 20, 0, 0, 0, KILL, "i386 getpid", 0 },
		{ X86, 0, 0x40000000 | 41, 1, 1, 0, KILL, "x32 socket", 0 },
		{ X86, 0, 0x40000000 | 39, 0, 0, 0, KILL, "x32 getpid", 0 },
		{ X86, 0, -1, 0, 0, 0, ALLOW, "nr -1 (a tracer's skip)", 0 },
		{ X86, 0, 0x3fffffff, 0, 0, 0, ALLOW, "highest native number", 0 },
		{ X86, 0, 39, 0, 0, 0, ALLOW, "getpid", 0 },
		{ X86, 0, 257, 0, 0, 0, ALLOW, "openat", 0 },
		{ X86, 0, 0, 0, 0, 0, ALLOW, "read", 0 },
		/* aarch64 */
		{ A64, 0, 198, 1, 1, 0, EPERM_RET, "aarch64 socket(AF_UNIX)", 0 },
		{ A64, 0, 198, 0x100000001ULL, 1, 0, EPERM_RET, "aarch64 socket(AF_UNIX | 1 << 32)", 0 },
		{ A64, 0, 198, 2, 1, 0, ALLOW, "aarch64 socket(AF_INET)", 0 },
		{ A64, 0, 97, 0x10000000, 0, 0, EPERM_RET, "aarch64 unshare(CLONE_NEWUSER)", 0 },
		{ A64, 0, 220, 0x20011, 0, 0, EPERM_RET, "aarch64 clone(CLONE_NEWNS)", 0 },
		{ A64, 0, 220, 0x3d0f00, 0, 0, ALLOW, "aarch64 clone(threads)", 0 },
		{ A64, 0, 435, 0, 0, 0, ENOSYS_RET, "aarch64 clone3", 0 },
		{ A64, 0, 40, 0, 0, 0, EPERM_RET, "aarch64 mount", 0 },
		{ A64, 0, 39, 0, 0, 0, EPERM_RET, "aarch64 umount2", 0 },
		{ A64, 0, 51, 0, 0, 0, EPERM_RET, "aarch64 chroot", 0 },
		{ A64, 0, 29, 0, 0x5412, 0, EPERM_RET, "aarch64 ioctl(TIOCSTI)", 0 },
		{ A64, 0, 219, 0, 0, 0, EPERM_RET, "aarch64 keyctl", 0 },
		{ A64, AUDIT_ARM, 281, 1, 0, 0, KILL, "arm32 compat socket", 0 },
		{ A64, 0, 0x40000000 | 198, 1, 0, 0, ALLOW, "aarch64 has no x32: a high number is just unknown", 0 },
		{ A64, 0, 172, 0, 0, 0, ALLOW, "aarch64 getpid", 0 },
		{ A64, 0, 56, 0, 0, 0, ALLOW, "aarch64 openat", 0 },
		/* the sandbox keeps exec and writes (the mounts decide those) */
		{ X86, 0, 59, 0, 0, 0, ALLOW, "sandbox: execve", 0 },
		{ X86, 0, 257, 0, 0, 0, ALLOW, "sandbox: openat(O_RDONLY)", 0 },
		{ X86, 0, 257, 0, 0, 0, ALLOW, "sandbox: openat(O_WRONLY|O_CREAT|O_TRUNC)", 0x241 },
		/* the proxy's own program (opts 4) */
		{ X86, 0, 59, 0, 0, 4, EPERM_RET, "proxy: execve", 0 },
		{ X86, 0, 322, 0, 0, 4, EPERM_RET, "proxy: execveat", 0 },
		{ X86, 0, 101, 0, 0, 4, EPERM_RET, "proxy: ptrace", 0 },
		{ X86, 0, 310, 0, 0, 4, EPERM_RET, "proxy: process_vm_readv", 0 },
		{ X86, 0, 257, 0xffffff9c, 0, 4, ALLOW, "proxy: openat(O_RDONLY|O_CLOEXEC) (the resolver reads)", 0x80000 },
		{ X86, 0, 257, 0xffffff9c, 0, 4, EPERM_RET, "proxy: openat(O_WRONLY)", 0x1 },
		{ X86, 0, 257, 0xffffff9c, 0, 4, EPERM_RET, "proxy: openat(O_RDWR)", 0x2 },
		{ X86, 0, 257, 0xffffff9c, 0, 4, EPERM_RET, "proxy: openat(O_CREAT)", 0x40 },
		{ X86, 0, 257, 0xffffff9c, 0, 4, EPERM_RET, "proxy: openat(O_APPEND)", 0x400 },
		{ X86, 0, 2, 0, 0x200, 4, EPERM_RET, "proxy: open(O_TRUNC)", 0 },
		{ X86, 0, 2, 0, 0, 4, ALLOW, "proxy: open(O_RDONLY)", 0 },
		{ X86, 0, 437, 0, 0, 4, EPERM_RET, "proxy: openat2", 0 },
		{ X86, 0, 263, 0, 0, 4, EPERM_RET, "proxy: unlinkat", 0 },
		{ X86, 0, 316, 0, 0, 4, EPERM_RET, "proxy: renameat2", 0 },
		{ X86, 0, 41, 2, 1, 4, ALLOW, "proxy: socket(AF_INET)", 0 },
		{ X86, 0, 41, 10, 1, 4, ALLOW, "proxy: socket(AF_INET6)", 0 },
		{ X86, 0, 41, 1, 1, 4, EPERM_RET, "proxy: socket(AF_UNIX)", 0 },
		{ X86, 0, 42, 0, 0, 4, ALLOW, "proxy: connect", 0 },
		{ X86, 0, 288, 0, 0, 4, ALLOW, "proxy: accept4", 0 },
		{ X86, 0, 7, 0, 0, 4, ALLOW, "proxy: poll", 0 },
		{ X86, 0, 56, 0x3d0f00, 0, 4, ALLOW, "proxy: clone(threads) for the resolver", 0 },
		{ X86, 0, 272, 0x10000000, 0, 4, EPERM_RET, "proxy: unshare(CLONE_NEWUSER)", 0 },
		{ X86, 0, 165, 0, 0, 4, EPERM_RET, "proxy: mount", 0 },
		{ A64, 0, 221, 0, 0, 4, EPERM_RET, "proxy aarch64: execve", 0 },
		{ A64, 0, 56, 0xffffff9c, 0, 4, EPERM_RET, "proxy aarch64: openat(O_WRONLY|O_CREAT|O_TRUNC)", 0x241 },
		{ A64, 0, 56, 0xffffff9c, 0, 4, ALLOW, "proxy aarch64: openat(O_RDONLY|O_CLOEXEC)", 0x80000 },
		{ A64, 0, 35, 0, 0, 4, EPERM_RET, "proxy aarch64: unlinkat", 0 },
		{ A64, 0, 270, 0, 0, 4, EPERM_RET, "proxy aarch64: process_vm_readv", 0 },
		/* the write observer's program (opts 8): USER_NOTIF for write intent only */
		{ X86, 0, 257, 0xffffff9c, 0, 8, ALLOW, "observer: openat(O_RDONLY|O_CLOEXEC) never traps", 0x80000 },
		{ X86, 0, 257, 0xffffff9c, 0, 8, ALLOW, "observer: openat(O_DIRECTORY|O_NOFOLLOW)", 0x30000 },
		{ X86, 0, 2, 0, 0, 8, ALLOW, "observer: open(O_RDONLY)", 0 },
		{ X86, 0, 257, 0xffffff9c, 0, 8, NOTIF, "observer: openat(O_WRONLY)", 1 },
		{ X86, 0, 257, 0xffffff9c, 0, 8, NOTIF, "observer: openat(O_RDWR)", 2 },
		{ X86, 0, 257, 0xffffff9c, 0, 8, NOTIF, "observer: openat(O_CREAT)", 0x40 },
		{ X86, 0, 257, 0xffffff9c, 0, 8, NOTIF, "observer: openat(O_TRUNC)", 0x200 },
		{ X86, 0, 257, 0xffffff9c, 0, 8, NOTIF, "observer: openat(O_APPEND)", 0x400 },
		{ X86, 0, 257, 0xffffff9c, 0, 8, NOTIF, "observer: openat(__O_TMPFILE alone)", 0x400000 },
		{ X86, 0, 257, 0xffffff9c, 0, 8, NOTIF, "observer: openat(write | garbage << 32)", 0xffffffff00000001ULL },
		{ X86, 0, 257, 0xffffff9c, 0, 8, ALLOW, "observer: openat(only garbage << 32)", 0xffffffff00000000ULL },
		{ X86, 0, 2, 0, 0x241, 8, NOTIF, "observer: open(O_WRONLY|O_CREAT|O_TRUNC)", 0 },
		{ X86, 0, 2, 0, 0x410002, 8, NOTIF, "observer: open(O_TMPFILE|O_RDWR)", 0 },
		{ X86, 0, 437, 0, 0, 8, NOTIF, "observer: openat2 (flags in memory)", 0 },
		{ X86, 0, 42, 3, 0, 8, NOTIF, "observer: connect", 0 },
		{ X86, 0, 87, 0, 0, 8, NOTIF, "observer: unlink", 0 },
		{ X86, 0, 188, 0, 0, 8, NOTIF, "observer: setxattr", 0 },
		{ X86, 0, 463, 0, 0, 8, NOTIF, "observer: setxattrat", 0 },
		{ X86, 0, 0, 0, 0, 8, ALLOW, "observer: read", 0 },
		{ X86, 0, 4, 0, 0, 8, ALLOW, "observer: stat", 0 },
		{ X86, 0, 41, 1, 1, 8, ALLOW, "observer: socket(AF_UNIX) (the sandbox's filter decides)", 0 },
		{ A64, 0, 56, 0xffffff9c, 0, 8, ALLOW, "observer aarch64: openat(O_RDONLY)", 0 },
		{ A64, 0, 56, 0xffffff9c, 0, 8, NOTIF, "observer aarch64: openat(O_WRONLY|O_CREAT|O_TRUNC)", 0x241 },
		{ A64, 0, 56, 0xffffff9c, 0, 8, NOTIF, "observer aarch64: openat(O_TMPFILE|O_RDWR)", 0x404002 },
		{ A64, 0, 203, 3, 0, 8, NOTIF, "observer aarch64: connect", 0 },
		{ A64, 0, 35, 0, 0, 8, NOTIF, "observer aarch64: unlinkat", 0 },
		{ A64, 0, 5, 0, 0, 8, NOTIF, "observer aarch64: setxattr", 0 },
		{ A64, 0, 63, 0, 0, 8, ALLOW, "observer aarch64: read", 0 },
		{ A64, 0, 2, 0, 1, 8, ALLOW, "observer aarch64: 2 is io_submit, not open", 0 },
		/* the observer's own lockdown (opts 4|16): the proxy's, and no new process */
		{ X86, 0, 56, 0x3d0f00, 0, 20, EPERM_RET, "observer lockdown: clone(threads) too", 0 },
		{ X86, 0, 57, 0, 0, 20, EPERM_RET, "observer lockdown: fork", 0 },
		{ X86, 0, 59, 0, 0, 20, EPERM_RET, "observer lockdown: execve", 0 },
		{ X86, 0, 257, 0xffffff9c, 0, 20, ALLOW, "observer lockdown: openat(O_RDONLY) (/proc/PID/mem)", 0 },
		{ X86, 0, 257, 0xffffff9c, 0, 20, EPERM_RET, "observer lockdown: openat(O_WRONLY)", 1 },
		{ X86, 0, 310, 0, 0, 20, ALLOW, "observer lockdown: process_vm_readv (what it reads the caller with)", 0 },
		{ X86, 0, 311, 0, 0, 20, EPERM_RET, "observer lockdown: process_vm_writev", 0 },
		{ X86, 0, 101, 0, 0, 20, EPERM_RET, "observer lockdown: ptrace", 0 },
		{ X86, 0, 310, 0, 0, 4, EPERM_RET, "proxy: process_vm_readv (not the observer's reading)", 0 },
		{ A64, 0, 270, 0, 0, 20, ALLOW, "observer lockdown aarch64: process_vm_readv", 0 },
		{ A64, 0, 271, 0, 0, 20, EPERM_RET, "observer lockdown aarch64: process_vm_writev", 0 },
		{ X86, 0, 56, 0x3d0f00, 0, 4, ALLOW, "the proxy keeps its threads (no new process is the observer's)", 0 },
		{ A64, 0, 220, 0x11, 0, 20, EPERM_RET, "observer lockdown aarch64: clone(SIGCHLD)", 0 },
		/* aarch64: the upper half of an argument is never loaded */
		{ A64, 0, 198, 0xffffffff00000028ULL, 1, 0, EPERM_RET, "aarch64 socket(AF_VSOCK | garbage << 32)", 0 },
		{ A64, 0, 29, 0, 0xffffffff0000541cULL, 0, EPERM_RET, "aarch64 ioctl(TIOCLINUX | garbage << 32)", 0 },
	};
	size_t i;
	int k;
	unsigned cost, max_cost = 0;

	for (i = 0; i < LEN(cases); i++) {
		const struct bpf_arch *arch = &bpf_arches[cases[i].arch];
		struct bpf_opts o = { (cases[i].opts & 1) != 0, (cases[i].opts & 2) != 0, (cases[i].opts & 4) != 0,
			(cases[i].opts & 8) != 0, (cases[i].opts & 16) != 0, (cases[i].opts & 32) != 0, 0x5eed };
		struct bpf_prog p;
		struct sdata d = { cases[i].nr, cases[i].audit ? cases[i].audit : arch->audit_arch, 0,
		    { cases[i].a0, cases[i].a1, cases[i].a2, 0, 0, 0 } };
		uint32_t got;

		bpf_assemble(arch, &o, &p);
		got = bpf_run(&p, &d, &cost, NULL);
		CHECK(got == cases[i].want, "%s: got 0x%08x, want 0x%08x", cases[i].what, got, cases[i].want);
	}
	bpf_matrix();
	observer_coverage();
	bpf_shapes();
	bpf_label_misuse();
	/* sweep: every syscall number no rule names is allowed, on both arches */
	for (k = 0; k < 2; k++) {
		struct bpf_opts o = { false, false, false, false, false, false, 0 };
		struct bpf_prog p;
		int nr, bad = 0;

		bpf_assemble(&bpf_arches[k], &o, &p);
		for (nr = 0; nr < 600; nr++) {
			struct sdata d = { nr, bpf_arches[k].audit_arch, 0, { 1, 0x5412, 0, 0, 0, 0 } };
			bool named = false;
			size_t r;

			for (r = 0; r < LEN(bpf_rules); r++)	/* named by a rule this program keeps */
				named |= bpf_arches[k].nr[bpf_rules[r].sc] == nr && bpf_rule_kept(&bpf_rules[r], &o);
			if (!named && bpf_run(&p, &d, &cost, NULL) != ALLOW)
				bad++;
			if (!named && cost > max_cost)
				max_cost = cost;
		}
		CHECK(bad == 0, "%s: %d unnamed syscalls not allowed", bpf_arches[k].name, bad);
		/* the read-heavy budget: an unnamed syscall (openat, read) runs at most this many */
		CHECK(max_cost <= 64, "%s: an unnamed syscall costs %u instructions", bpf_arches[k].name, max_cost);
	}
	/* every rule is reachable: each appears in the source map of the program
	 * that keeps every group (the proxy's), unless the arch lacks the syscall */
	for (k = 0; k < 2; k++) {
		/* the proxy's, the observer's lockdown and the observer's own */
		struct bpf_opts os[] = { { false, false, true, false, false, false, 0 },
			{ false, false, true, false, true, false, 0 }, { false, false, false, true, false, true, 0x5eed } };
		struct bpf_prog p;
		bool seen[LEN(bpf_rules)] = { false };
		unsigned j;

		for (size_t q = 0; q < LEN(os); q++) {
			bpf_assemble(&bpf_arches[k], &os[q], &p);
			for (j = 0; j < p.n; j++)
				if (p.rule_of[j] >= 0)
					seen[p.rule_of[j]] = true;
		}
		for (j = 0; j < LEN(bpf_rules); j++)
			CHECK(seen[j] || bpf_arches[k].nr[bpf_rules[j].sc] < 0, "%s: rule %u (%s) emitted nothing",
			    bpf_arches[k].name, j, sc_names[bpf_rules[j].sc]);
	}
	/* --print=bpf, bpf-proxy and bpf-observer goldens for both arches */
	for (k = 0; k < 6; k++) {
		struct bpf_opts o = { false, false, k >= 2 && k < 4, k >= 4, false, false, 0 };
		struct bpf_prog p;
		const char *path = aprintf("tests/golden/%s.%s.txt", bpf_arches[k % 2].name,
		    k >= 4 ? "bpf-observer" : k >= 2 ? "bpf-proxy" : "bpf");
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		struct buf golden = { 0 };

		bpf_assemble(&bpf_arches[k % 2], &o, &p);
		bpf_disassemble(&p, f);
		fclose(f);
		/* every compared constant is spelled out: a jump whose operand
		 * column is blank hides what the program tests */
		for (const char *q = text; (q = strstr(q, "\n")) != NULL; q++) {
			const char *m = strstr(q, "  j"), *e = strchr(q + 1, '\n');

			if (!m || (e && m > e))
				continue;
			m += 2 + strcspn(m + 2, " ");
			m += strspn(m, " ");
			CHECK(strncmp(m, "true:", 5) != 0, "%s: a jump with no operand: %.*s", path,
			    (int)(e ? e - q - 1 : 60), q + 1);
		}
		if (getenv("UPDATE_GOLDEN")) {
			f = fopen(path, "w");
			fputs(text, f);
			fclose(f);
		} else if (read_file(path, 1 << 20, &golden) < 0) {
			CHECK(false, "missing golden %s (UPDATE_GOLDEN=1 makes it)", path);
		} else {
			check_str(text, golden.p, path, __LINE__);
		}
		free(text);
		free(golden.p);
	}
	/* the instructions sent to the inner helper: round trip, and hostile bytes refused */
	{
		char *argv[] = { "sh", "-c", "echo \"$1\"", "", "x y", NULL };
		struct buf b = { 0 };
		struct inner_msg in, m;
		const char *why;
		size_t cut;

		memset(&in, 0, sizeof(in));
		in.flags = IF_UNIX_BLOCK | IF_WEAKER | IF_PROXY;
		in.nports = 2;
		in.ports[0] = 5432;
		in.ports[1] = 65535;
		in.nexpose = 1;
		in.expose[0] = 8080;
		in.socat = "/usr/bin/socat";
		in.bridge_sock[0] = "/tmp/b/http.sock";
		in.bridge_sock[1] = "/tmp/b/socks.sock";
		in.argv = argv;
		{
			static char *links[] = { "/p/.bashrc", "/p/.claude/commands" };

			in.nlinks = 2;
			in.links = links;
		}
		{
			static struct init_bind binds[] = { { "/p/.vscode", 0xfe00, 0x1234567890ULL, 0 },
				{ "/p/.git", 1, 2, IB_PIN } };

			in.nbinds = 2;
			in.binds = binds;
		}
		ctl_encode(&in, &b);
		CHECK(ctl_decode(b.p, b.n, &m, &why) == 0 && m.nlinks == 2 && strcmp(m.links[1], "/p/.claude/commands") == 0,
		    "control message round trip: the links sbx-init pins");
		CHECK(ctl_decode(b.p, b.n, &m, &why) == 0 && m.nbinds == 2 && strcmp(m.binds[0].path, "/p/.vscode") == 0 &&
		    m.binds[0].dev == 0xfe00 && m.binds[0].ino == 0x1234567890ULL && m.binds[0].flags == 0 &&
		    m.binds[1].flags == IB_PIN,
		    "control message round trip: the names sbx-init binds, with their device, inode and flags");
		CHECK(ctl_decode(b.p, b.n, &m, &why) == 0 && m.flags == in.flags &&
		    strcmp(m.argv[2], "echo \"$1\"") == 0 && strcmp(m.argv[3], "") == 0 && m.argv[5] == NULL &&
		    m.nports == 2 && m.ports[0] == 5432 && m.ports[1] == 65535 && m.nexpose == 1 && m.expose[0] == 8080 &&
		    strcmp(m.socat, "/usr/bin/socat") == 0 && strcmp(m.bridge_sock[1], "/tmp/b/socks.sock") == 0,
		    "control message round trip");
		CHECK(inner_hands_fds(&m), "a proxy run hands descriptors over");
		for (cut = 0; cut < b.n; cut++)
			CHECK(ctl_decode(b.p, cut, &m, &why) < 0, "truncated control message (%zu bytes) refused", cut);
		b.p[b.n - 1] = 'x';	/* last argument no longer NUL-terminated */
		CHECK(ctl_decode(b.p, b.n, &m, &why) < 0, "unterminated argument refused");
		b.p[b.n - 1] = '\0';
		b.p[9] |= 0x02;	/* an unknown flag (bit 9) */
		CHECK(ctl_decode(b.p, b.n, &m, &why) < 0, "unknown flag refused");
		b.p[9] &= (char)~0x02;
		b.p[12] = 65;	/* more ports than the message holds */
		CHECK(ctl_decode(b.p, b.n, &m, &why) < 0, "bad port count refused");
		b.p[12] = 2;
		memset(b.p + 16, 0, 4);	/* port 0 */
		CHECK(ctl_decode(b.p, b.n, &m, &why) < 0, "port 0 refused");
		free(b.p);

		/* a relative link path is refused (init mounts on what it names) */
		{
			static char *links[] = { "p/.bashrc" };

			in.nlinks = 1;
			in.links = links;
			b = (struct buf){ 0 };
			ctl_encode(&in, &b);
			CHECK(ctl_decode(b.p, b.n, &m, &why) < 0 && strstr(why, "absolute"), "a relative link path refused");
			free(b.p);
		}

		/* an unknown bind flag is refused */
		{
			static struct init_bind odd[] = { { "/p/.vscode", 1, 2, 4 } };

			in.nlinks = 0;
			in.nbinds = 1;
			in.binds = odd;
			b = (struct buf){ 0 };
			ctl_encode(&in, &b);
			CHECK(ctl_decode(b.p, b.n, &m, &why) < 0 && strstr(why, "flags"), "an unknown bind flag refused");
			free(b.p);
			in.nbinds = 0;
		}

		/* the rebind: sbx-init's ask (indices into its binds, rising) and
		 * sbx's answer (what to bind at each now), every field checked */
		{
			struct init_bind binds[3] = { { "/w/.bashrc", 1, 2, 0 }, { "/w/r", 1, 3, IB_PIN }, { "/w/r/.git/hooks", 1, 4, 0 } };
			struct init_bind answer[3];
			uint32_t ask[3] = { 0, 1, 2 }, got[4];
			struct buf a = { 0 };

			rebind_ask_encode(ask, 3, &a);
			CHECK(rebind_ask_decode(a.p, a.n, 3, got, &why) == 3 && got[0] == 0 && got[2] == 2, "rebind ask round trip");
			CHECK(rebind_ask_decode(a.p, a.n, 2, got, &why) < 0, "rebind ask: an index past the binds refused");
			for (size_t cut = 0; cut < a.n; cut++)
				CHECK(rebind_ask_decode(a.p, cut, 3, got, &why) < 0, "rebind ask cut at %zu refused", cut);
			ask[1] = 0;
			rebind_ask_encode(ask, 3, &a);
			CHECK(rebind_ask_decode(a.p, a.n, 3, got, &why) < 0 && strstr(why, "order"), "rebind ask out of order refused");
			ask[1] = 1;
			rebind_ask_encode(ask, 0, &a);
			CHECK(rebind_ask_decode(a.p, a.n, 3, got, &why) < 0, "an empty rebind ask refused");

			memcpy(answer, binds, sizeof(answer));
			answer[1] = (struct init_bind){ "/w/r", 1, 9, 0 };	/* gone: a placeholder, read-only */
			answer[2] = (struct init_bind){ "/w/r/.git/hooks", 0, 0, IB_NONE };	/* covered above */
			rebind_answer_encode(answer, ask + 1, 2, &a);
			CHECK(rebind_answer_decode(a.p, a.n, binds, ask + 1, 2, &why) == 0 && binds[1].ino == 9 &&
			    binds[1].flags == 0 && binds[2].flags == IB_NONE && binds[0].ino == 2, "rebind answer round trip");
			CHECK(rebind_answer_decode(a.p, a.n, binds, ask, 2, &why) < 0 && strstr(why, "asked"),
			    "rebind answer about another index refused");
			for (size_t cut = 0; cut < a.n; cut++)
				CHECK(rebind_answer_decode(a.p, cut, binds, ask + 1, 2, &why) < 0, "rebind answer cut at %zu refused",
				    cut);
			answer[1].flags = 8;
			rebind_answer_encode(answer, ask + 1, 2, &a);
			CHECK(rebind_answer_decode(a.p, a.n, binds, ask + 1, 2, &why) < 0 && strstr(why, "flags"),
			    "rebind answer with unknown flags refused");
			answer[1] = (struct init_bind){ "w/r", 1, 9, 0 };
			rebind_answer_encode(answer, ask + 1, 2, &a);
			CHECK(rebind_answer_decode(a.p, a.n, binds, ask + 1, 2, &why) < 0 && strstr(why, "absolute"),
			    "rebind answer with a relative path refused");
			free(a.p);
		}

		/* no bridge, no ports: nothing handed over; half a bridge refused */
		memset(&in, 0, sizeof(in));
		in.argv = argv;
		b = (struct buf){ 0 };
		ctl_encode(&in, &b);
		CHECK(ctl_decode(b.p, b.n, &m, &why) == 0 && !m.socat && !m.bridge_sock[0] && !inner_hands_fds(&m),
		    "a plain run: no bridge, nothing handed over");
		free(b.p);
		in.socat = "/usr/bin/socat";
		b = (struct buf){ 0 };
		ctl_encode(&in, &b);
		CHECK(ctl_decode(b.p, b.n, &m, &why) < 0 && strstr(why, "half"), "socat without its sockets refused");
		free(b.p);
	}
}

/* ---- hosts, domain matching, the decision, resolved addresses -------- */

static void
test_network_decisions(void)
{
	static const struct { const char *in, *want; } canon[] = {
		{ "Example.COM", "example.com" }, { "example.com.", "example.com" }, { "127.1", "127.0.0.1" },
		{ "2130706433", "127.0.0.1" }, { "0x7f.0.0.1", "127.0.0.1" }, { "0177.0.0.1", "127.0.0.1" },
		{ "127.0.1", "127.0.0.1" }, { "[::1]", "::1" }, { "[0:0:0:0:0:0:0:1]", "::1" },
		{ "[::ffff:127.0.0.1]", "127.0.0.1" }, { "::ffff:7f00:1", "127.0.0.1" }, { "10.200.0.1", "10.200.0.1" },
		{ "a.b-c_d.test", "a.b-c_d.test" }, { "1.2.3.4.", "1.2.3.4" }, { "[2001:DB8::1]", "2001:db8::1" },
		{ "256.0.0.1", NULL }, { "1.2.3.4.5", NULL }, { "0x100000000", NULL }, { "09.1.1.1", NULL },
		{ "[::1", NULL }, { "", NULL }, { ".", NULL }, { "1.2.3.999", NULL }, { "example.1", NULL },
		{ "4294967295", "255.255.255.255" }, { "4294967296", NULL },
	};
	static const struct { const char *host; int port; const char *pat; bool m; } dm[] = {
		{ "example.com", 443, "example.com", true }, { "example.com", 443, "EXAMPLE.com", true },
		{ "a.example.com", 443, "*.example.com", true }, { "example.com", 443, "*.example.com", false },
		{ "a.b.example.com", 80, "*.example.com", true }, { "badexample.com", 443, "*.example.com", false },
		{ "example.com", 443, "example.com:443", true }, { "example.com", 80, "example.com:443", false },
		{ "anything.test", 22, "*:22", true }, { "anything.test", 23, "*:22", false },
		{ "anything.test", 1, "*", true }, { "::1", 8080, "[::1]:8080", true },
		{ "::1", 8080, "[0:0::1]", true }, { "1.2.3.4", 443, "*.3.4", false }, { "1.2.3.4", 443, "1.2.3.4", true },
	};
	struct policy p;
	const char *e;
	size_t i;
	char out[300];

	for (i = 0; i < LEN(canon); i++) {
		int rc = match_canonical_host(canon[i].in, out, sizeof(out));

		if (canon[i].want)
			CHECK(rc == 0 && strcmp(out, canon[i].want) == 0, "canonical %s: got %s (%d), want %s", canon[i].in,
			    rc == 0 ? out : "-", rc, canon[i].want);
		else
			CHECK(rc < 0, "canonical %s should be malformed, got %s", canon[i].in, out);
	}
	for (i = 0; i < LEN(dm); i++)
		CHECK(match_domain(dm[i].host, dm[i].port, dm[i].pat) == dm[i].m, "match %s:%d ~ %s", dm[i].host, dm[i].port,
		    dm[i].pat);

	e = parse(&p, "allow-domain *.github.com\nallow-domain github.com\nallow-domain localhost\nallow-domain 10.200.0.9\n"
	    "allow-domain [fd00::9]:8443\ndeny-domain github.com:22 \"use an https remote\"\ndeny-domain evil.github.com\n"
	    "deny-address 10.99.0.0/16\ndeny-domain 10.200.0.66\nallow-domain *.internal.test\n");
	CHECK(e == NULL, "network policy parses: %s", e ? e : "");
	{
		static const struct { const char *host; int port; bool allow; const char *reason; } cases[] = {
			{ "github.com", 443, true, "allowed" }, { "GitHub.com.", 443, true, "allowed" },
			{ "api.github.com", 443, true, "allowed" }, { "github.com", 22, false, "use an https remote" },
			{ "evil.github.com", 443, false, "host is on the deny list" },
			{ "gitlab.com", 443, false, "host is not on the allow list" },
			{ "a%b", 443, false, "malformed host" }, { "a b", 443, false, "malformed host" },
			{ "256.1.1.1", 443, false, "malformed host" },
			{ "0x0a.200.0.9", 443, true, "allowed" }, { "10.200.0.9", 443, true, "allowed" },
			{ "[fd00::9]", 8443, true, "allowed" }, { "[fd00::9]", 443, false, "host is not on the allow list" },
			{ "localhost", 3000, true, "allowed" }, { "127.0.0.1", 3000, false, "host is not on the allow list" },
		};
		for (i = 0; i < LEN(cases); i++) {
			struct net_verdict v = net_decide(&p, cases[i].host, cases[i].port);

			CHECK(v.allow == cases[i].allow && strcmp(v.reason, cases[i].reason) == 0, "decide %s:%d: %s (%s)",
			    cases[i].host, cases[i].port, v.allow ? "allow" : "deny", v.reason);
		}
	}
	{
		/* no allow-domain: srt's words, then why (the proxy always runs, so this is what a client reads) */
		struct policy q;
		struct net_verdict v;

		e = parse(&q, "deny-domain evil.test \"no evil\"\nallow-host-port 5432\n");
		CHECK(e == NULL, "a policy without allow-domain parses: %s", e ? e : "");
		v = net_decide(&q, "registry.npmjs.org", 443);
		CHECK(!v.allow && strcmp(v.reason, "host is not on the allow list: the policy allows no network") == 0,
		    "no allow-domain: %s", v.reason);
		v = net_decide(&q, "evil.test", 443);
		CHECK(!v.allow && strcmp(v.reason, "no evil") == 0, "no allow-domain: the deny list still gives its reason: %s",
		    v.reason);
		CHECK(policy_runs_proxy(&q) && policy_runs_proxy(&p), "the proxy runs with or without allow-domain");
	}
	{
		static const struct { const char *host; const char *addr; const char *want; } cases[] = {
			{ "a.github.com", "140.82.112.3", NULL },
			{ "a.github.com", "127.0.0.1", "a loopback address" },
			{ "a.github.com", "127.9.9.9", "a loopback address" },
			{ "a.github.com", "::1", "a loopback address" },
			{ "a.github.com", "::ffff:127.0.0.1", "a loopback address" },
			{ "a.github.com", "::ffff:0:127.0.0.1", "a loopback address" },
			{ "a.github.com", "64:ff9b::7f00:1", "a loopback address" },
			{ "a.github.com", "2002:7f00:1::", "a loopback address" },
			{ "a.github.com", "0.0.0.0", "an unspecified address" },
			{ "a.github.com", "169.254.169.254", "a link-local address" },
			{ "a.github.com", "2002:a9fe:a9fe::1", "a link-local address" },
			{ "a.github.com", "fe80::1", "a link-local address" },
			{ "a.github.com", "224.0.0.1", "a multicast address" },
			{ "a.github.com", "255.255.255.255", "a broadcast address" },
			{ "a.github.com", "100.100.100.200", "a cloud metadata address" },
			{ "a.github.com", "fd00:ec2::254", "a cloud metadata address" },
			{ "a.github.com", "168.63.129.16", "a cloud metadata address" },
			/* the edges of ranges that end inside a byte (addr_in_net's mask) */
			{ "a.github.com", "239.255.255.255", "a multicast address" },
			{ "a.github.com", "240.0.0.1", NULL },
			{ "a.github.com", "febf::1", "a link-local address" },
			{ "a.github.com", "fec0::1", NULL },
			{ "a.github.com", "169.255.0.1", NULL },
			{ "a.github.com", "fd00:ec3::1", NULL },
			{ "a.github.com", "fd00:a9fe:a9fe::2", NULL },
			{ "a.github.com", "10.99.3.4", "a listed address" },
			{ "a.github.com", "10.98.3.4", NULL },	/* RFC 1918 is not refused, as srt */
			{ "a.github.com", "10.200.0.66", "a deny-listed address" },
			{ "a.github.com", "::ffff:10.200.0.66", "a deny-listed address" },
			{ "a.github.com", "10.200.0.9", NULL },	/* an allowed literal */
			{ "a.github.com", "192.168.7.7", "one of this host's addresses" },
			{ "localhost", "127.0.0.1", NULL },
			{ "localhost", "::1", NULL },
			{ "localhost", "10.1.1.1", "a non-loopback address" },
			{ "10.200.0.9", "127.0.0.1", NULL },	/* a literal host is exempt, as srt */
		};
		struct vec own = { 0 };
		struct addr me;

		addr_parse("192.168.7.7", &me);
		vec_push(&own, &me);
		for (i = 0; i < LEN(cases); i++) {
			struct addr a;
			const char *got;

			CHECK(addr_parse(cases[i].addr, &a) == 0, "parse %s", cases[i].addr);
			got = net_judge_address(&p, cases[i].host, 443, &a, &own);
			CHECK((got == NULL && cases[i].want == NULL) || (got && cases[i].want && strcmp(got, cases[i].want) == 0),
			    "judge %s -> %s: got %s, want %s", cases[i].host, cases[i].addr, S(got), S(cases[i].want));
		}
		/* every row of the table (parsed once, addr_class): its own first address is its class */
		for (i = 0; i < LEN(addr_classes); i++) {
			char a0[64];
			struct addr a;
			const char *got;

			snprintf(a0, sizeof(a0), "%.*s", (int)strcspn(addr_classes[i].cidr, "/"), addr_classes[i].cidr);
			CHECK(addr_parse(a0, &a) == 0, "parse %s", a0);
			got = net_judge_address(&p, "a.github.com", 443, &a, &own);
			CHECK(got && strcmp(got, addr_classes[i].class_name) == 0, "the table's %s: got %s", addr_classes[i].cidr, S(got));
		}
	}
	{
		/* a prefix of k bits: an address differing in bit k (from the top) is outside, in bit k+1 inside */
		for (int fam = 0; fam < 2; fam++) {
			const char *base = fam ? "2001:db8:1:2:3:4:5:6" : "10.1.2.3";
			int bits = fam ? 128 : 32;
			bool ok = true;

			for (int k = 1; k <= bits && ok; k++) {
				struct addr a, flip;
				char net[64], cidr[80];

				addr_parse(base, &a);
				flip = a;
				flip.b[(k - 1) / 8] ^= (unsigned char)(0x80 >> ((k - 1) % 8));
				inet_ntop(fam ? AF_INET6 : AF_INET, flip.b, net, sizeof(net));
				snprintf(cidr, sizeof(cidr), "%s/%d", net, k);
				ok = !addr_in_cidr(&a, cidr);
				snprintf(cidr, sizeof(cidr), "%s/%d", net, k - 1);
				ok = ok && addr_in_cidr(&a, cidr);
				CHECK(ok, "%s against %s (bit %d)", base, cidr, k);
			}
		}
	}
}

/* ---- the proxy's parsers ------------------------------------------- */

/* The parent proxy (4.7, 7.1): its URL, NO_PROXY, the route a host
 * takes, the route from the environment, the CONNECT exchange. */
static void
test_parent_proxy(void)
{
	static const struct { const char *url; const char *host; int port; const char *auth; } ok[] = {
		{ "http://proxy.corp:3128", "proxy.corp", 3128, NULL },
		{ "proxy.corp:8080", "proxy.corp", 8080, NULL },	/* no scheme: http (curl) */
		{ "HTTP://10.1.2.3/", "10.1.2.3", 80, NULL },
		{ "http://[fd00::1]:3128", "fd00::1", 3128, NULL },
		{ "http://u%40corp:p%3Ass@proxy:1", "proxy", 1, "Basic dUBjb3JwOnA6c3M=" },	/* u@corp:p:ss */
		{ "http://user@proxy:1", "proxy", 1, "Basic dXNlcjo=" },			/* user: */
		{ "http://a@b:c@proxy:1", "proxy", 1, "Basic YUBiOmM=" },			/* the last @ ends it */
	};
	static const char *const bad[] = { "https://proxy:3128", "socks5://proxy:1080", "http://proxy:0",
		"http://proxy:99999", "http://proxy/path", "http://", "http://[fd00::1", "http://pro xy:1",
		"http://proxy:1?x", "http://bad_host!:1", "http://[nothex]:1", "http://p:%0a@proxy:1" };
	struct parent_proxy pp;
	const char *why;

	for (size_t i = 0; i < LEN(ok); i++) {
		why = NULL;
		CHECK(proxy_url_parse(ok[i].url, &pp, &why) == 0 && strcmp(pp.host, ok[i].host) == 0 && pp.port == ok[i].port &&
		    (ok[i].auth ? pp.auth && strcmp(pp.auth, ok[i].auth) == 0 : !pp.auth),
		    "parent URL %s: %s:%d %s (%s)", ok[i].url, pp.host, pp.port, pp.auth ? pp.auth : "-", why ? why : "");
	}
	for (size_t i = 0; i < LEN(bad); i++)
		CHECK(proxy_url_parse(bad[i], &pp, &why) < 0, "parent URL %s refused", bad[i]);
	CHECK(proxy_url_parse("https://p:1", &pp, &why) < 0 && strstr(why, "TLS"), "https://: says it needs TLS");

	{	/* NO_PROXY (Go's reading, as srt) and the route */
		static const char *const entries[] = { ".corp.example", "internal", "*.wild.test", "10.0.0.0/8",
			"192.0.2.7", "[fd00::7]:443", "noport.test:8080" };
		static const struct { const char *host; bool bypassed; } hosts[] = {
			{ "corp.example", true }, { "a.corp.example", true }, { "xcorp.example", false },
			{ "internal", true }, { "x.internal", true }, { "xinternal", false },
			{ "wild.test", true }, { "a.wild.test", true }, { "10.9.8.7", true }, { "11.0.0.1", false },
			{ "192.0.2.7", true }, { "192.0.2.8", false }, { "[fd00::7]", true }, { "fd00::7", true },
			{ "noport.test", true }, { "localhost", true }, { "127.0.0.5", true }, { "::1", true },
			{ "[::ffff:127.0.0.1]", true }, { "INTERNAL.", true }, { "example.com", false },
		};
		struct parent_route r;

		memset(&r, 0, sizeof(r));
		for (size_t i = 0; i < LEN(entries); i++) {
			CHECK(proxy_bypass_check(entries[i], &why) == 0, "bypass entry %s accepted", entries[i]);
			parent_bypass_add(&r, entries[i]);
		}
		for (size_t i = 0; i < LEN(hosts); i++)
			CHECK(parent_bypassed(&r, hosts[i].host) == hosts[i].bypassed, "bypass %s: %d", hosts[i].host,
			    hosts[i].bypassed);
		CHECK(proxy_bypass_check("a*b", &why) < 0 && proxy_bypass_check("10.0.0.0/33", &why) < 0 &&
		    proxy_bypass_check("x y", &why) < 0, "bad bypass entries refused");
		r.have_https = false;
		r.have_http = true;
		proxy_url_parse("http://p:1", &r.http, &why);
		CHECK(parent_for(&r, "example.com", true) == &r.http && parent_for(&r, "example.com", false) == &r.http,
		    "tunnels fall back to the http parent");
		CHECK(!parent_for(&r, "a.corp.example", true), "a bypassed host goes directly");
		r.have_http = false;
		r.have_https = true;
		proxy_url_parse("http://q:2", &r.https, &why);
		CHECK(parent_for(&r, "example.com", true) == &r.https && !parent_for(&r, "example.com", false),
		    "HTTPS_PROXY alone: tunnels only, plain HTTP directly (curl)");
		r.bypass_all = true;
		CHECK(!parent_for(&r, "example.com", true), "NO_PROXY=*: everything directly");
	}
	{	/* the route for each pair of parents: a tunnel (CONNECT, SOCKS) takes the
		 * https parent, else the http one; plain HTTP the http one only (srt, curl) */
		static const struct { bool http, https, tunnel; char want; } routes[] = {
			{ false, false, false, '-' }, { false, false, true, '-' },
			{ true, false, false, 'h' }, { true, false, true, 'h' },
			{ false, true, false, '-' }, { false, true, true, 's' },
			{ true, true, false, 'h' }, { true, true, true, 's' },
		};
		struct parent_route r;

		for (size_t i = 0; i < LEN(routes); i++) {
			const struct parent_proxy *got;

			memset(&r, 0, sizeof(r));
			r.have_http = routes[i].http;
			r.have_https = routes[i].https;
			proxy_url_parse("http://h:1", &r.http, &why);
			proxy_url_parse("http://s:2", &r.https, &why);
			got = parent_for(&r, "example.com", routes[i].tunnel);
			CHECK((got == &r.http ? 'h' : got == &r.https ? 's' : got ? '?' : '-') == routes[i].want,
			    "parents http %d https %d, %s: the route is %c", routes[i].http, routes[i].https,
			    routes[i].tunnel ? "a tunnel" : "plain HTTP", routes[i].want);
		}
	}
	{	/* from the environment, as srt's resolveParentProxy */
		struct policy p;
		struct parent_route r;
		struct vec warn = { 0 };
		char *env1[] = { "http_proxy=http://h:1", "HTTPS_PROXY=", "no_proxy=a.test", NULL };
		char *env2[] = { "HTTPS_PROXY=https://s:1", NULL };
		char *env3[] = { "HTTP_PROXY=ftp://x:1", NULL };
		char *env4[] = { "HTTP_PROXY=http://env:1", "NO_PROXY=b.test", NULL };

		pol_init(&p);
		CHECK(parent_route_collect(&p, env1, &r, &warn, &why) == 0 && r.have_http && r.have_https &&
		    strcmp(r.https.host, "h") == 0 && strcmp(r.https_from, "http_proxy") == 0 && parent_bypassed(&r, "a.test"),
		    "http_proxy for both, an empty HTTPS_PROXY unset, no_proxy");
		CHECK(parent_route_collect(&p, env2, &r, &warn, &why) < 0 && strstr(why, "HTTPS_PROXY=https://s:1"),
		    "an https:// parent from the environment stops the run, naming the variable");
		warn.n = 0;
		CHECK(parent_route_collect(&p, env3, &r, &warn, &why) == 0 && !r.have_http && !r.have_https && warn.n == 1,
		    "a URL that is not http:// from the environment: skipped, with one warning");
		p.parent_http = "http://pol:2";
		vec_push(&p.parent_bypass, "c.test");
		CHECK(parent_route_collect(&p, env4, &r, &warn, &why) == 0 && strcmp(r.http.host, "pol") == 0 &&
		    parent_bypassed(&r, "c.test") && !parent_bypassed(&r, "b.test"),
		    "the policy's parent and bypass list win over the environment's");
	}
	{	/* the CONNECT exchange */
		struct buf b = { 0 };
		char line[160];
		size_t n;
		char *abs;

		parent_connect_request(&b, "fd00::1", 443, "Basic cDpx");
		buf_putc(&b, '\0');
		check_str(b.p, "CONNECT [fd00::1]:443 HTTP/1.1\r\nHost: [fd00::1]:443\r\nProxy-Authorization: Basic cDpx\r\n\r\n",
		    "CONNECT to the parent", __LINE__);
		free(b.p);
		CHECK(parent_reply("HTTP/1.1 200 Connection established\r\n\r\nTLS", 42, line, sizeof(line)) == 39,
		    "2xx: the tunnel's bytes follow the head");
		CHECK(parent_reply("HTTP/1.0 200\r\n\r\n", 16, line, sizeof(line)) == 16, "HTTP/1.0 200 with no phrase");
		CHECK(parent_reply("HTTP/1.1 407 Proxy Authentication Required\r\nX: y\r\n\r\n", 52, line, sizeof(line)) == -1 &&
		    strcmp(line, "HTTP/1.1 407 Proxy Authentication Required") == 0, "407: refused, its status line kept");
		CHECK(parent_reply("HTTP/1.1 2000 x\r\n\r\n", 19, line, sizeof(line)) == -1, "2000 is not 2xx");
		CHECK(parent_reply("HTTP/1.1 200 OK\r\n", 17, line, sizeof(line)) == 0, "an unfinished head: more");
		abs = http_absolute_form("GET /a?b HTTP/1.1\r\nHost: x.test:81\r\nConnection: close\r\n\r\n", 57, "x.test", 81,
		    "Basic cDpx", &n);
		CHECK(n == 106 && memcmp(abs, "GET http://x.test:81/a?b HTTP/1.1\r\nProxy-Authorization: Basic cDpx\r\nHost: x.test:81\r\n", 85) == 0,
		    "absolute form for the parent: %.*s", (int)n, abs);
		free(abs);
	}
}

/* The MITM route (srt's network.mitmProxy): the two directives read
 * strictly, whole-policy pairing, both printers, which hosts take it, the
 * ask/answer messages over the record pair (6c), and that it is not live. */
static void
test_mitm_proxy(void)
{
	static const struct { const char *text, *want; } bad[] = {
		{ "mitm-proxy run/m.sock\n", "t:1: mitm-proxy run/m.sock: the socket path must be absolute" },
		{ "mitm-proxy /a\nmitm-proxy /b\n", "t:2: mitm-proxy: given twice" },
		{ "mitm-proxy-domain a.test:443\n", "t:1: mitm-proxy-domain a.test:443: a host with no :port" },
		{ "mitm-proxy-domain [::1]:443\n", "t:1: mitm-proxy-domain [::1]:443: a host with no :port" },
		{ "mitm-proxy-domain *.com\n", "t:1: mitm-proxy-domain *.com: invalid domain pattern: must be a domain "
		  "(example.com), a wildcard (*.example.com) or an IPv6 literal (::1, [::1]), with no :port" },
		{ "mitm-proxy-domain *\n", "t:1: mitm-proxy-domain *: invalid domain pattern" },
		{ "mitm-proxy-domain http://a.test\n", "t:1: mitm-proxy-domain http://a.test: invalid domain pattern" },
		{ "mitm-proxy-domain 127.1\n", "t:1: mitm-proxy-domain 127.1: an IPv4 address in a pattern must be written a.b.c.d" },
		{ "{\"network\":{\"mitmProxy\":{\"domains\":[\"a.test\"]}}}", "t:1:25: network.mitmProxy.socketPath: required" },
		{ "{\"network\":{\"mitmProxy\":{\"socketPath\":\"/m\"}}}", "t:1:25: network.mitmProxy.domains: required" },
		{ "{\"network\":{\"mitmProxy\":{\"socketPath\":\"/m\",\"domains\":[\"a.test\"],\"x\":1}}}",
		  "unknown key \"x\" in mitmProxy" },
		{ "{\"network\":{\"mitmProxy\":[]}}", "network.mitmProxy: expected an object, got an array" },
		{ "{\"mitmProxy\":{}}", "mitmProxy: it belongs under \"network\"" },
	};
	static const struct { const char *host; bool mitm; } hosts[] = {
		{ "far.test", true }, { "x.far.test", true }, { "far.test.evil", false }, { "xfar.test", false },
		{ "near.test", false }, { "a.b.wild.test", true }, { "wild.test", false }, { "::1", true },
		{ "::2", false }, { "fd00::7", true }, { "10.1.2.3", true }, { "10.1.2.4", false },
	};
	struct policy p, q;
	struct buf l1 = { 0 }, j1 = { 0 }, l2 = { 0 };
	struct err e = { 0 };
	struct vec on = { 0 }, off = { 0 };
	const char *err;

	for (size_t i = 0; i < LEN(bad); i++) {
		err = parse(&p, bad[i].text);
		CHECK(err && strstr(err, bad[i].want), "refused: %s\n  got:  %s\n  want: %s", bad[i].text, S(err), bad[i].want);
	}
	/* either half alone is refused once the whole policy is read, at its line */
	err = parse(&p, "allow-domain a.test\nmitm-proxy /run/m.sock\n");
	CHECK(!err && pol_check_whole(&p, &e) < 0 && e.line == 2 && strstr(e.msg, "no mitm-proxy-domain names a host"),
	    "a socket with no host: line %d: %s", e.line, e.msg);
	err = parse(&p, "allow-domain a.test\nmitm-proxy-domain a.test\nmitm-proxy-domain b.test\n");
	CHECK(!err && pol_check_whole(&p, &e) < 0 && e.line == 2 && strstr(e.msg, "mitm-proxy-domain a.test: no mitm-proxy"),
	    "hosts with no socket: line %d: %s", e.line, e.msg);
	err = parse(&p, "{\"network\":{\"mitmProxy\":{\"socketPath\":\"/m\",\"domains\":[]}}}");
	CHECK(!err && pol_check_whole(&p, &e) < 0 && strstr(e.msg, "network.mitmProxy.domains needs at least one"),
	    "srt's domains:[] (at least one): %s", e.msg);

	/* the hosts that take the route: its patterns with no port, IPv6 in either spelling */
	err = parse(&p, "mitm-proxy /run//m.sock\nmitm-proxy-domain far.test\nmitm-proxy-domain *.far.test\n"
	    "mitm-proxy-domain *.wild.test\nmitm-proxy-domain ::1\nmitm-proxy-domain [fd00::7]\nmitm-proxy-domain 10.1.2.3\n");
	CHECK(!err && pol_check_whole(&p, &e) == 0 && strcmp(S(p.mitm_socket), "/run/m.sock") == 0 && p.mitm_domains.n == 6,
	    "the route reads: %s", S(err));
	for (size_t i = 0; i < LEN(hosts); i++) {
		char canon[SBX_MAX_HOST_BYTES + 64];

		CHECK(match_canonical_host(hosts[i].host, canon, sizeof(canon)) == 0 && mitm_routes(&p, canon) == hosts[i].mitm,
		    "mitm route for %s: want %d", hosts[i].host, hosts[i].mitm);
	}
	q = p;
	q.mitm_socket = NULL;
	CHECK(!mitm_routes(&q, "far.test"), "no socket: no route, whatever the hosts");

	/* both printers; JSON in srt's shape, and read back */
	pol_print_lines(&p, &l1);
	pol_print_json(&p, &j1);
	CHECK(strstr(l1.p, "mitm-proxy /run/m.sock\nmitm-proxy-domain far.test\nmitm-proxy-domain *.far.test\n"
	    "mitm-proxy-domain *.wild.test\nmitm-proxy-domain ::1\nmitm-proxy-domain [fd00::7]\n") != NULL,
	    "line printer: %s", l1.p);
	CHECK(strstr(j1.p, "\"mitmProxy\": {\n      \"socketPath\": \"/run/m.sock\",\n      \"domains\": [\n"
	    "        \"far.test\",\n") != NULL, "JSON printer: %s", j1.p);
	err = parse(&q, j1.p);
	CHECK(!err && pol_check_whole(&q, &e) == 0, "printed JSON reads back: %s", S(err));
	pol_print_lines(&q, &l2);
	check_str(S(l2.p), S(l1.p), "mitm: JSON -> lines round trip", __LINE__);
	free(l1.p);
	free(j1.p);
	free(l2.p);

	/* a control-fd line cannot move hosts onto or off the route: named, not applied */
	err = parse(&q, "mitm-proxy /run/m.sock\nmitm-proxy-domain far.test\n");
	pol_changes(&p, &q, &on, &off);
	CHECK(!err && on.n == 0 && off.n == 1 && strcmp(((const struct directive *)off.v[0])->json,
	    "network.mitmProxy.domains") == 0, "a changed route is named, not live (%zu, %zu)", on.n, off.n);

	/* the ask and the answer (6c) */
	{
		struct mitm_msg ask = { 'M', 17, 0xdeadbeef, 0 }, ans = { 'm', 4095, 7, ECONNREFUSED }, got;
		unsigned char b[SBX_MITM_ANSWER_BYTES + 1], again[SBX_MITM_ANSWER_BYTES];
		size_t n, believed = 0;

		n = mitm_encode(&ask, b);
		CHECK(n == SBX_MITM_ASK_BYTES && mitm_decode(b, n, &got) == 0 && got.kind == 'M' && got.slot == 17 &&
		    got.gen == 0xdeadbeef && got.err == 0 && mitm_encode(&got, again) == n && memcmp(again, b, n) == 0,
		    "an ask round-trips");
		for (size_t cut = 0; cut < n; cut++)
			believed += mitm_decode(b, cut, &got) == 0;
		b[n] = 0;
		CHECK(believed == 0 && mitm_decode(b, n + 1, &got) < 0, "an ask cut short or one byte long is refused");
		n = mitm_encode(&ans, b);
		CHECK(n == SBX_MITM_ANSWER_BYTES && mitm_decode(b, n, &got) == 0 && got.kind == 'm' && got.slot == 4095 &&
		    got.gen == 7 && got.err == ECONNREFUSED && mitm_encode(&got, again) == n && memcmp(again, b, n) == 0,
		    "an answer round-trips");
		for (size_t cut = 0; cut < n; cut++)
			believed += mitm_decode(b, cut, &got) == 0;
		CHECK(believed == 0 && mitm_decode(b, n + 1, &got) < 0, "an answer cut short or one byte long is refused");
		ans.err = SBX_MITM_MAX_ERRNO + 1;
		n = mitm_encode(&ans, b);
		CHECK(mitm_decode(b, n, &got) < 0, "an errno out of range is refused");
		b[0] = 'M';
		CHECK(mitm_decode(b, n, &got) < 0, "an ask of an answer's length is refused");
		b[0] = 'D';
		CHECK(mitm_decode(b, n, &got) < 0, "another kind is refused");
	}
	/* the decision record carries the route */
	{
		struct px_decision d, got;
		unsigned char rec[SBX_DECISION_MAX_BYTES];
		size_t n;

		memset(&d, 0, sizeof(d));
		d.verdict = PXV_FAIL;
		d.proto = PR_SOCKS5;
		d.route = PXR_MITM;
		d.port = 443;
		snprintf(d.host, sizeof(d.host), "far.test");
		snprintf(d.reason, sizeof(d.reason), "the MITM proxy's socket /m: Connection refused");
		n = px_decision_encode(&d, rec);
		CHECK(px_decision_decode(rec, n, &got) == 0 && got.route == PXR_MITM && strcmp(route_via[got.route],
		    " via the MITM proxy") == 0, "a MITM-route decision round-trips, and says its route");
	}
}

/* srt's request knobs (7.1): requireHostMatch's reading of a Host
 * header, stripResponseHeaders' folding. */
static void
test_request_knobs(void)
{
	static const struct { const char *head; const char *want; int port; bool ok; } hosts[] = {
		{ "Host: a.test", "a.test", 80, true }, { "Host: A.Test:80", "a.test", 80, true },
		{ "Host: a.test:8080", "a.test", 8080, true }, { "Host: a.test", "a.test", 8080, false },
		{ "Host: a.test:080", "a.test", 80, false }, { "Host: b.test", "a.test", 80, false },
		{ "Host: a.test.", "a.test", 80, false }, { "Host: a.test:", "a.test", 80, false },
		{ "Host: [a.test]", "a.test", 80, false }, { "Host: [::1]:81", "::1", 81, true },
		{ "Host: [::1]", "::1", 80, true }, { "Host: ::1", "::1", 80, false },
		{ "Host: a.test:81:81", "a.test", 81, false }, { "Host:    a.test   ", "a.test", 80, true },
		{ "X-Other: 1", "a.test", 80, true },	/* none: not a mismatch */
		{ "Host: a.test\r\nHost: a.test", "a.test", 80, false },
	};

	for (size_t i = 0; i < LEN(hosts); i++) {
		char head[256];
		struct http_req r;

		snprintf(head, sizeof(head), "GET http://x/ HTTP/1.0\r\n%s\r\n\r\n", hosts[i].head);
		CHECK(http_parse_head(head, strlen(head), &r) > 0 &&
		    (http_host_mismatch(&r, hosts[i].want, hosts[i].port) == NULL) == hosts[i].ok,
		    "requireHostMatch: \"%s\" for %s:%d %s", hosts[i].head, hosts[i].want, hosts[i].port,
		    hosts[i].ok ? "names it" : "does not");
	}
	{
		struct vec strip = { 0 };
		const char *in = "HTTP/1.1 200 OK\r\nSet-Cookie: a=b\r\nX.Secret: s\r\nx_secret: t\r\nX-Kept: k\r\n\r\nbody";
		size_t n;
		char *out;

		vec_push(&strip, "set-cookie");
		vec_push(&strip, "X-SECRET");
		out = http_rewrite_response(in, strlen(in), strlen(in) - 4, &strip, &n);
		CHECK(n == strlen("HTTP/1.1 200 OK\r\nConnection: close\r\nX-Kept: k\r\n\r\nbody") &&
		    memcmp(out, "HTTP/1.1 200 OK\r\nConnection: close\r\nX-Kept: k\r\n\r\nbody", n) == 0,
		    "stripResponseHeaders: folded names removed, the rest kept: %.*s", (int)n, out);
		free(out);
	}
}

static void
test_proxy_parsers(void)
{
	static const struct { const char *in; int rc; bool connect; const char *host; int port; const char *path; } heads[] = {
		{ "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n", 1, true, "a.test", 443, NULL },
		{ "CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", 1, true, "[::1]", 8443, NULL },
		{ "CONNECT a.test HTTP/1.1\r\n\r\n", -400, true, NULL, 0, NULL },
		{ "CONNECT a.test:0 HTTP/1.1\r\n\r\n", -400, true, NULL, 0, NULL },
		{ "CONNECT a.test:99999 HTTP/1.1\r\n\r\n", -400, true, NULL, 0, NULL },
		{ "GET http://a.test/x?y HTTP/1.1\r\nHost: other.test\r\n\r\n", 1, false, "a.test", 80, "/x?y" },
		{ "GET http://a.test@b.test:8080/p HTTP/1.1\r\nHost: b.test\r\n\r\n", 1, false, "b.test", 8080, "/p" },
		{ "GET http://u:p@x@c.test/ HTTP/1.0\r\n\r\n", 1, false, "c.test", 80, "/" },
		{ "GET http://a.test HTTP/1.0\r\n\r\n", 1, false, "a.test", 80, "" },
		{ "GET https://a.test/ HTTP/1.1\r\nHost: a\r\n\r\n", -400, false, NULL, 0, NULL },
		{ "GET /relative HTTP/1.1\r\nHost: a\r\n\r\n", -400, false, NULL, 0, NULL },
		{ "GET http://a.test/ HTTP/1.1\r\n\r\n", -400, false, NULL, 0, NULL },	/* no Host, as srt */
		{ "GET http://a.test/ HTTP/2.0\r\n\r\n", -400, false, NULL, 0, NULL },
		{ "get http://a.test/ HTTP/1.0\r\n\r\n", -400, false, NULL, 0, NULL },
		{ "GET http://a.test/ HTTP/1.0\r\n folded: x\r\n\r\n", -400, false, NULL, 0, NULL },
		{ "GET http://a.test/ HTTP/1.0\r\nno-colon\r\n\r\n", -400, false, NULL, 0, NULL },
		{ "GET http://a.test/ HTTP/1.0\r\nHost: a", 0, false, NULL, 0, NULL },
		/* a bare LF or CR would be a line break to a lenient upstream: a smuggled Host (fuzz_http) */
		{ "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX: 1\nHost: other.test\r\n\r\n", -400, false, NULL, 0, NULL },
		{ "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX: 1\rHost: other.test\r\n\r\n", -400, false, NULL, 0, NULL },
		{ "CONNECT a.test:443 HTTP/1.1\nHost: a.test\r\n\r\n", -400, true, NULL, 0, NULL },
	};
	size_t i;

	for (i = 0; i < LEN(heads); i++) {
		struct http_req r;
		int rc = http_parse_head(heads[i].in, strlen(heads[i].in), &r);

		CHECK(heads[i].rc > 0 ? rc == (int)strlen(heads[i].in) : rc == heads[i].rc, "head %zu: rc %d", i, rc);
		if (rc > 0 && heads[i].host) {
			CHECK(r.connect == heads[i].connect && strcmp(r.host, heads[i].host) == 0 && r.port == heads[i].port,
			    "head %zu: %s:%d", i, r.host, r.port);
			if (heads[i].path)
				CHECK(r.path_n == strlen(heads[i].path) && memcmp(r.path, heads[i].path, r.path_n) == 0,
				    "head %zu: path %.*s", i, (int)r.path_n, r.path);
		}
	}
	{	/* a head longer than the bound is 431 */
		char *big = amalloc(SBX_MAX_HTTP_HEAD_BYTES + 10);

		memset(big, 'a', SBX_MAX_HTTP_HEAD_BYTES + 9);
		memcpy(big, "GET http://a.test/ HTTP/1.1\r\nX: ", 32);
		struct http_req r;
		CHECK(http_parse_head(big, SBX_MAX_HTTP_HEAD_BYTES, &r) == -431, "oversized head: 431");
	}
	{	/* the forwarded request and the response the client gets */
		const char *in = "GET http://a.test:8080/p?q HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: Basic x\r\n"
		    "Connection: keep-alive\r\nKeep-Alive: 5\r\nAccept: */*\r\nProxy-Foo: y\r\n\r\n";
		struct http_req r;
		size_t n;
		char *out;

		CHECK(http_parse_head(in, strlen(in), &r) > 0, "forward head parses");
		out = http_rewrite(in, &r, &n);
		check_str(astrndup(out, n), "GET /p?q HTTP/1.1\r\nHost: a.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n",
		    "origin-form request, Host from the target, hop-by-hop and Proxy-* gone", __LINE__);
		free(out);
		/* Host is the target's canonical form, whatever the client spelled: what the policy judged,
		 * and what a parent's or the MITM proxy's URL names (http_absolute_form), so they agree */
		{
			static const struct { const char *target, *host; } hosts[] = {
				{ "http://Api.MITM.invalid./", "Api.MITM.invalid." },
				{ "http://api.mitm.invalid.:8080/", "api.mitm.invalid.:8080" },
				{ "http://[0:0:0:0:0:0:0:1]:8000/", "[0:0:0:0:0:0:0:1]:8000" },
				{ "http://[2001:DB8:0:0:0:0:0:1]/", "[2001:DB8::1]" },
				{ "http://[::ffff:10.0.0.1]/", "[::ffff:10.0.0.1]" },
				{ "http://127.1:81/", "127.1:81" },
				{ "http://u:p@A.Test:80/", "A.Test" },
			};
			static const char *const want[] = { "Host: api.mitm.invalid\r\n", "Host: api.mitm.invalid:8080\r\n",
				"Host: [::1]:8000\r\n", "Host: [2001:db8::1]\r\n", "Host: 10.0.0.1\r\n",
				"Host: 127.0.0.1:81\r\n", "Host: a.test\r\n" };

			for (size_t k = 0; k < LEN(hosts); k++) {
				char *req = aprintf("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", hosts[k].target, hosts[k].host);

				CHECK(http_parse_head(req, strlen(req), &r) > 0, "%s parses", hosts[k].target);
				out = http_rewrite(req, &r, &n);
				CHECK(strstr(astrndup(out, n), want[k]) != NULL, "%s: %s, got %.*s", hosts[k].target,
				    want[k], (int)n, out);
				free(out);
			}
		}
		/* connection options are this hop's too (RFC 9110 7.6.1); framing is never dropped that way */
		in = "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nConnection: X-Hop, x-other ,content-length\r\n"
		    "X-Hop: 1\r\nX-Other: 2\r\nX-Hopper: 3\r\nConnection: Transfer-Encoding\r\nContent-Length: 2\r\n\r\n";
		CHECK(http_parse_head(in, strlen(in), &r) > 0, "forward head with connection options parses");
		out = http_rewrite(in, &r, &n);
		check_str(astrndup(out, n), "POST / HTTP/1.1\r\nHost: a.test\r\nX-Hopper: 3\r\nContent-Length: 2\r\n"
		    "Connection: close\r\n\r\n", "the headers a Connection field names are removed, Content-Length kept", __LINE__);
		free(out);
		{	/* SBX_MAX_CONNECTION_OPTIONS options are read, one more is a 400: each header line
			 * is checked against every option, so their count bounds the work per request */
			struct buf h = { 0 };

			for (int extra = 0; extra < 2; extra++) {
				h.n = 0;
				buf_puts(&h, "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nConnection: o0");
				for (int k = 1; k < SBX_MAX_CONNECTION_OPTIONS + extra; k++)
					buf_printf(&h, k % 2 ? ", o%d" : "\r\nConnection: o%d", k);
				buf_puts(&h, "\r\n\r\n");
				CHECK(extra ? http_parse_head(h.p, h.n, &r) == -400 : http_parse_head(h.p, h.n, &r) > 0,
				    "%d connection options over Connection fields: %s", SBX_MAX_CONNECTION_OPTIONS + extra,
				    extra ? "400" : "read");
			}
			free(h.p);
		}
		in = "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\nhi";
		out = http_rewrite_response(in, strlen(in), strlen(in) - 2, NULL, &n);
		check_str(astrndup(out, n), "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi",
		    "the client is told the connection closes", __LINE__);
		free(out);
	}
	{	/* SOCKS */
		char host[300];
		int port, m;

		CHECK(socks5_parse_greeting((const unsigned char *)"\x05\x02\x02\x00", 4, false, &m) == 4 && m == 0, "no-auth preferred");
		CHECK(socks5_parse_greeting((const unsigned char *)"\x05\x01\x02", 3, false, &m) == 3 && m == 2, "user/pass");
		CHECK(socks5_parse_greeting((const unsigned char *)"\x05\x01\x01", 3, false, &m) == 3 && m == 0xff, "GSSAPI only: none");
		CHECK(socks5_parse_greeting((const unsigned char *)"\x05\x03\x00", 3, false, &m) == 0, "short greeting");
		/* with a credential to ask for (macOS): user/pass preferred, no auth taken on (and refused later) */
		CHECK(socks5_parse_greeting((const unsigned char *)"\x05\x02\x00\x02", 4, true, &m) == 4 && m == 2, "credential: user/pass preferred");
		CHECK(socks5_parse_greeting((const unsigned char *)"\x05\x01\x00", 3, true, &m) == 3 && m == 0, "credential: no auth only");
		CHECK(socks5_parse_greeting((const unsigned char *)"\x05\x01\x01", 3, true, &m) == 3 && m == 0xff, "credential: GSSAPI only");
		{	/* the proxy credential (macOS): srt's Basic rule and RFC 1929 */
			static const char tok[] = "0123456789abcdef0123456789abcdef";
			const unsigned char *u, *pw;
			size_t ul, pl;
			static const struct { const char *v; bool ok; } basic[] = {
				{ "Basic c2J4OjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVm", true },	/* sbx:tok */
				{ "  basic   c2J4OjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVm  ", true },	/* case, spaces */
				{ "Basic OjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVm", false },	/* empty user */
				{ "Basic c2J4OjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVl", false },	/* last char differs */
				{ "Basic c2J4OjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVmMA==", false },	/* longer */
				{ "Basic c2J4OjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGU=", false },	/* shorter */
				{ "Bearer c2J4OjAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVm", false },
				{ "Basic c2J4OjAx=MjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVm", false },	/* '=' inside */
				{ "Basic c2J4OjAxMjM0NTY3ODlhYmNk ZWYwMTIzNDU2Nzg5YWJjZGVm", false },	/* two words */
				{ "Basic", false }, { "", false },
			};

			for (size_t i = 0; i < LEN(basic); i++)
				CHECK(proxy_basic_ok(basic[i].v, strlen(basic[i].v), tok) == basic[i].ok, "Proxy-Authorization \"%s\"", basic[i].v);
			CHECK(socks5_parse_auth((const unsigned char *)"\x01\x03sbx\x20" "0123456789abcdef0123456789abcdef", 38, &u, &ul, &pw, &pl) == 38 &&
			    proxy_credential_ok(u, ul, pw, pl, tok), "SOCKS5 user/pass with the token");
			CHECK(socks5_parse_auth((const unsigned char *)"\x01\x00\x20" "0123456789abcdef0123456789abcdef", 35, &u, &ul, &pw, &pl) == 35 &&
			    !proxy_credential_ok(u, ul, pw, pl, tok), "SOCKS5: an empty user name is refused (srt)");
			CHECK(socks5_parse_auth((const unsigned char *)"\x01\x03sbx\x03" "012", 9, &u, &ul, &pw, &pl) == 9 &&
			    !proxy_credential_ok(u, ul, pw, pl, tok), "SOCKS5: a wrong password");
		}
		CHECK(socks5_parse_request((const unsigned char *)"\x05\x01\x00\x03\x06" "a.test" "\x01\xbb", 13, host, sizeof(host), &port) == 13 &&
		    strcmp(host, "a.test") == 0 && port == 443, "domain request");
		CHECK(socks5_parse_request((const unsigned char *)"\x05\x01\x00\x01\x0a\xc8\x00\x02\x00\x50", 10, host, sizeof(host), &port) == 10 &&
		    strcmp(host, "10.200.0.2") == 0 && port == 80, "IPv4 request");
		CHECK(socks5_parse_request((const unsigned char *)"\x05\x02\x00\x01\x0a\xc8\x00\x02\x00\x50", 10, host, sizeof(host), &port) ==
		    -SOCKS5_CMD_UNSUPPORTED, "BIND -> 0x07");
		CHECK(socks5_parse_request((const unsigned char *)"\x05\x03\x00\x01\x0a\xc8\x00\x02\x00\x50", 10, host, sizeof(host), &port) ==
		    -SOCKS5_CMD_UNSUPPORTED, "UDP ASSOCIATE -> 0x07");
		CHECK(socks5_parse_request((const unsigned char *)"\x05\x01\x00\x05\x00", 5, host, sizeof(host), &port) ==
		    -SOCKS5_ATYP_UNSUPPORTED, "bad ATYP -> 0x08");
		CHECK(socks5_parse_request((const unsigned char *)"\x05\x01\x00\x03\x03" "a\0b" "\x00\x50", 10, host, sizeof(host), &port) < 0,
		    "NUL in a SOCKS name refused");
		CHECK(socks5_parse_request((const unsigned char *)"\x05\x01\x00\x03\x06" "a.te", 9, host, sizeof(host), &port) == 0,
		    "short request waits");
		CHECK(socks4_parse((const unsigned char *)"\x04\x01\x00\x50\x00\x00\x00\x01" "u\0" "a.test\0", 17, host, sizeof(host), &port) == 17 &&
		    strcmp(host, "a.test") == 0 && port == 80, "SOCKS4a");
		CHECK(socks4_parse((const unsigned char *)"\x04\x01\x00\x50\x0a\xc8\x00\x02" "\0", 9, host, sizeof(host), &port) == 9 &&
		    strcmp(host, "10.200.0.2") == 0, "SOCKS4");
		CHECK(socks4_parse((const unsigned char *)"\x04\x02\x00\x50\x0a\xc8\x00\x02" "\0", 9, host, sizeof(host), &port) < 0,
		    "SOCKS4 BIND refused");
	}
	{	/* the SSH refusal is a well-formed unencrypted packet */
		struct buf b = { 0 };
		const char *banner = "SSH-2.0-policy_refusal\r\n";
		uint32_t plen;

		ssh_refusal(&b, "no ssh");
		CHECK(strncmp(b.p, banner, strlen(banner)) == 0, "SSH banner");
		memcpy(&plen, b.p + strlen(banner), 4);
		plen = ntohl(plen);
		CHECK((plen + 4) % 8 == 0 && b.n == strlen(banner) + 4 + plen && (unsigned char)b.p[strlen(banner) + 5] == 1,
		    "SSH_MSG_DISCONNECT packet: length %u", plen);
		{
			bool found = false;

			for (size_t k = 0; k + 6 <= b.n; k++)
				found |= memcmp(b.p + k, "no ssh", 6) == 0;
			CHECK(found, "the reason is in it");
		}
		free(b.p);
	}
}

/* ---- the hosts file, read in the proxy's loop (7.2) --------------------- */

/* hosts_find over text: the count (or -1), the first address as text. */
static int
hosts_find_in(const char *text, const char *name, char *first, size_t fn, int max)
{
	struct addr a[SBX_HOSTS_MAX_ADDRS];
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int n;

	if (!f)
		return -2;
	n = hosts_find(f, name, a, max);
	fclose(f);
	first[0] = '\0';
	if (n > 0)
		inet_ntop(a[0].family, a[0].b, first, (socklen_t)fn);
	return n;
}

static void
test_hosts_file(void)
{
	static const char hosts[] =
	    "127.0.0.1\tlocalhost\n"
	    "10.0.0.1 a.test b.test # c.test\n"
	    "  10.0.0.2 lead.test\n"
	    "10.1 short.test\n"
	    "::1 a.test\n"
	    "fe80::1%eth0 scope.test\n"
	    "#10.0.0.9 a.test\n"
	    "10.0.0.3 A.test\n";
	static const struct { const char *name; int want; const char *first; const char *why; } cases[] = {
		{ "a.test", 2, "10.0.0.1", "every line naming it, in the file's order" },
		{ "b.test", 1, "10.0.0.1", "a second name on a line" },
		{ "c.test", 0, "", "a name after '#' is a comment" },
		{ "a.tes", 0, "", "a name matches whole, never a part" },
		{ "missing.test", 0, "", "a name the file does not hold goes to getaddrinfo" },
		{ "lead.test", -1, "", "a line with leading blanks (musl skips it) is left to getaddrinfo" },
		{ "short.test", -1, "", "an address inet_pton refuses (musl's parser takes 10.1) is left to getaddrinfo" },
		{ "scope.test", -1, "", "a scope id is left to getaddrinfo" },
	};
	char first[64], big[2 * SBX_HOSTS_LINE_BYTES];
	int n;

	for (size_t k = 0; k < LEN(cases); k++) {
		n = hosts_find_in(hosts, cases[k].name, first, sizeof(first), SBX_HOSTS_MAX_ADDRS);
		CHECK(n == cases[k].want && strcmp(first, cases[k].first) == 0, "hosts file, %s: %s: got %d '%s'",
		    cases[k].name, cases[k].why, n, first);
	}
	n = hosts_find_in(hosts, "a.test", first, sizeof(first), 1);
	CHECK(n == -1, "more lines naming it than the answer holds: left to getaddrinfo (got %d)", n);
	memset(big, ' ', sizeof(big));
	memcpy(big, "10.0.0.5 long.test", 18);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	n = hosts_find_in(big, "long.test", first, sizeof(first), SBX_HOSTS_MAX_ADDRS);
	CHECK(n == -1, "a line longer than musl's buffer: left to getaddrinfo (got %d)", n);
	{
		/* the text kept (hosts_open): only a regular file, small, settled; the same file unchanged */
		struct stat st, other;
		time_t now = 1700000000;

		memset(&st, 0, sizeof(st));
		st.st_mode = S_IFREG | 0644;
		st.st_dev = 8;
		st.st_ino = 1234;
		st.st_size = 200;
		st.st_mtime = now - 60;
		st.st_ctime = now - 60;
		CHECK(hosts_may_keep(&st, now), "a small regular file, a minute old: kept");
		st.st_ctime = now - 1;
		CHECK(!hosts_may_keep(&st, now), "changed a second ago (ctime): read each time, not kept");
		st.st_ctime = now - SBX_HOSTS_SETTLE_S;
		CHECK(hosts_may_keep(&st, now), "settled: kept");
		st.st_mtime = now;
		CHECK(!hosts_may_keep(&st, now), "written now (mtime): not kept");
		st.st_mtime = now + 100;
		CHECK(!hosts_may_keep(&st, now), "stamped in the future: not kept");
		st.st_mtime = now - 60;
		st.st_size = SBX_HOSTS_KEEP_BYTES + 1;
		CHECK(!hosts_may_keep(&st, now), "over SBX_HOSTS_KEEP_BYTES: not kept");
		st.st_size = 200;
		st.st_mode = S_IFIFO | 0644;
		CHECK(!hosts_may_keep(&st, now), "not a regular file: not kept");
		st.st_mode = S_IFREG | 0644;
		other = st;
		CHECK(hosts_same(&other, &st), "the same stat: the same file, unchanged");
		other.st_atime = now;
		other.st_nlink = 2;
		CHECK(hosts_same(&other, &st), "a read (atime) or a link changes nothing the text depends on");
		other = st, other.st_ino++;
		CHECK(!hosts_same(&other, &st), "another inode (replaced by a rename): read again");
		other = st, other.st_dev++;
		CHECK(!hosts_same(&other, &st), "another device (a bind mount over it): read again");
		other = st, other.st_size++;
		CHECK(!hosts_same(&other, &st), "another size: read again");
		other = st, other.st_mtime++;
		CHECK(!hosts_same(&other, &st), "another mtime: read again");
		other = st, other.st_ctime++;
		CHECK(!hosts_same(&other, &st), "another ctime (a write, whatever mtime says): read again");
	}
	/* a literal is its own answer, the hosts file unread; a name without the file is the thread's */
	{
		struct addrinfo *ai = hosts_lookup("192.0.2.7", false), *ai6 = hosts_lookup("2001:db8::7", false);
		const struct sockaddr_in *in = ai ? (const struct sockaddr_in *)ai->ai_addr : NULL;

		CHECK(ai && !ai->ai_next && ai->ai_family == AF_INET && ai->ai_socktype == SOCK_STREAM &&
		    ai->ai_addrlen == sizeof(*in) && in->sin_family == AF_INET && ntohl(in->sin_addr.s_addr) == 0xc0000207,
		    "an IPv4 literal is its own one-address answer");
		CHECK(ai6 && !ai6->ai_next && ai6->ai_family == AF_INET6 && ai6->ai_addr->sa_family == AF_INET6,
		    "an IPv6 literal too");
		CHECK(!hosts_lookup("allowed.test", false), "a name, the hosts file not to be read: left to the thread");
		free(ai);
		free(ai6);
	}
}

/* ---- the proxy's decision records and sbx's log of them (8, 9) -------- */

static void
test_decisions(void)
{
	struct px_decision d, got;
	unsigned char rec[SBX_DECISION_MAX_BYTES + 8];
	size_t n, cut;
	struct net_log *l;
	const struct net_event *e;

	/* round trip, the longest fields included */
	memset(&d, 0, sizeof(d));
	d.verdict = PXV_DENY;
	d.proto = PR_SOCKS4;
	d.port = 65535;
	d.lost = 0x01020304;
	memset(d.host, 'h', SBX_MAX_HOST_BYTES);
	memset(d.reason, 'r', SBX_MAX_TEXT_ARG_BYTES);
	n = px_decision_encode(&d, rec);
	CHECK(n == SBX_DECISION_MAX_BYTES, "the longest record is SBX_DECISION_MAX_BYTES (%zu)", n);
	CHECK(px_decision_decode(rec, n, &got) == 0 && got.verdict == PXV_DENY && got.proto == PR_SOCKS4 &&
	    got.port == 65535 && got.lost == 0x01020304 && strcmp(got.host, d.host) == 0 &&
	    strcmp(got.reason, d.reason) == 0, "the longest record round-trips");
	/* every truncation, and one byte more, is refused */
	{
		size_t believed = 0, first = 0;

		for (cut = 0; cut < n; cut++)
			if (px_decision_decode(rec, cut, &got) == 0 && !believed++)
				first = cut;
		CHECK(believed == 0, "every truncation of a record is refused: %zu believed, first at %zu bytes", believed, first);
	}
	rec[n] = 'x';
	CHECK(px_decision_decode(rec, n + 1, &got) < 0, "a byte past the record is refused");

	/* an allow has no reason; control bytes in the host (a malformed one) are masked */
	memset(&d, 0, sizeof(d));
	d.verdict = PXV_ALLOW;
	d.proto = PR_HTTP_CONNECT;
	d.port = 443;
	snprintf(d.host, sizeof(d.host), "a\r\nb.test\x7f");
	n = px_decision_encode(&d, rec);
	CHECK(px_decision_decode(rec, n, &got) == 0 && strcmp(got.host, "a??b.test?") == 0 && !*got.reason,
	    "control bytes in a host are sent as '?': got '%s'", got.host);
	/* hostile records: each field out of range */
	{
		static const struct { const char *what; size_t at; unsigned char v; } bad[] = {
			{ "kind byte", 0, 'X' }, { "verdict", 1, 3 }, { "proto", 2, 8 }, { "route", 3, 3 }, { "op", 4, 5 },
			{ "host length past the end", 11, 200 }, { "host length short of the end", 11, 9 },
			{ "a control byte in the host", 12, '\n' },
		};
		unsigned char b[64];

		for (size_t k = 0; k < LEN(bad); k++) {
			memcpy(b, rec, n);
			b[bad[k].at] = bad[k].v;
			CHECK(px_decision_decode(b, n, &got) < 0, "hostile record refused: %s", bad[k].what);
		}
		CHECK(n == 24, "the allow record for a 10-byte host is 24 bytes (%zu)", n);
	}
	d.verdict = PXV_DENY;
	snprintf(d.reason, sizeof(d.reason), "x");
	n = px_decision_encode(&d, rec);
	CHECK(px_decision_decode(rec, n, &got) == 0 && strcmp(got.reason, "x") == 0, "control: a deny with its reason");
	rec[1] = PXV_ALLOW;
	CHECK(px_decision_decode(rec, n, &got) < 0, "an allow that carries a reason is refused");
	rec[1] = PXV_DENY;
	rec[n - 3] = 0x04;	/* the reason's length, high byte: 1025 > SBX_MAX_TEXT_ARG_BYTES */
	CHECK(px_decision_decode(rec, n, &got) < 0, "a reason longer than the limit is refused");

	/* a batch: records back to back in one message, each found by its lengths */
	{
		unsigned char batch[2 * SBX_DECISION_MAX_BYTES];
		size_t a, b2;
		int sp[2];

		memset(&d, 0, sizeof(d));
		d.verdict = PXV_ALLOW;
		d.port = 80;
		d.lost = 7;
		snprintf(d.host, sizeof(d.host), "one.test");
		a = px_decision_encode(&d, batch);
		d.lost = 0;
		snprintf(d.host, sizeof(d.host), "second.test");
		b2 = px_decision_encode(&d, batch + a);
		CHECK(px_decision_next(batch, a + b2, &got) == (long)a && strcmp(got.host, "one.test") == 0 && got.lost == 7,
		    "a batch's first record is found by its lengths");
		CHECK(px_decision_next(batch + a, b2, &got) == (long)b2 && strcmp(got.host, "second.test") == 0,
		    "and the second after it");
		CHECK(px_decision_decode(batch, a + b2, &got) < 0, "px_decision_decode takes one record, not a batch");
		CHECK(px_decision_next(batch + a, b2 - 1, &got) < 0, "a batch's truncated last record is refused");
		/* as sbx reads them: a batch, a batch cut short (its first record
		 * believed, the rest not), the proxy's 'f' after them */
		CHECK(socketpair(AF_UNIX, SBX_RECORD_SOCKET, 0, sp) == 0, "a record pair");
		l = net_log_new();
		(void)!send(sp[1], batch, a + b2, 0);
		(void)!send(sp[1], batch, a + b2 - 1, 0);
		(void)!send(sp[1], "f", 1, 0);
		CHECK(net_log_drain(l, sp[0]) && l->total[PXV_ALLOW] == 3 && l->bad == 1 && l->lost == 14,
		    "drained: 'f' seen, %llu allows (want 3), %llu bad (want 1), %llu lost (want 14)",
		    (unsigned long long)l->total[PXV_ALLOW], (unsigned long long)l->bad, (unsigned long long)l->lost);
		close(sp[0]);
		close(sp[1]);
	}

	/* the log: one event per distinct decision, counted; lost records summed */
	l = net_log_new();
	memset(&d, 0, sizeof(d));
	d.verdict = PXV_DENY;
	d.proto = PR_HTTP_FORWARD;
	d.port = 80;
	snprintf(d.host, sizeof(d.host), "denied.test");
	snprintf(d.reason, sizeof(d.reason), "host is not on the allow list");
	net_log_add(l, &d);
	d.lost = 5;
	net_log_add(l, &d);
	d.port = 81;
	d.lost = 0;
	net_log_add(l, &d);
	e = l->events.n ? l->events.v[0] : NULL;
	CHECK(l->events.n == 2 && e && e->count == 2 && l->total[PXV_DENY] == 3 && l->lost == 5,
	    "the log: %zu events (want 2), first counted %llu (want 2), lost %llu (want 5)", l->events.n,
	    e ? (unsigned long long)e->count : 0ULL, (unsigned long long)l->lost);
	for (int k = 0; k < SBX_MAX_NET_EVENTS + 10; k++) {
		d.port = (uint16_t)(1000 + k);
		net_log_add(l, &d);
	}
	CHECK(l->events.n == SBX_MAX_NET_EVENTS && l->unlisted == 12,
	    "the log keeps %d events and counts the rest: %zu kept, %llu unlisted (want 12)", SBX_MAX_NET_EVENTS,
	    l->events.n, (unsigned long long)l->unlisted);
}

#if SBX_LINUX
/* The inner helper opens an inside connection only for a port the policy
 * exposes: a forged request for another port gets EPERM and no socket.
 * Loopback only: a listener of this test on 127.0.0.1. */
static void
test_expose_refusal(void)
{
	struct inner_msg m;
	struct inner_serve sv;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int pair[2], lfd, fd, nfd;
	uint32_t req[3], ans[3];
	uint16_t port;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 4) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
		CHECK(false, "expose refusal: cannot set up a loopback listener and a pair: %s", strerror(errno));
		return;
	}
	port = ntohs(sa.sin_port);
	memset(&m, 0, sizeof(m));
	m.nexpose = 1;
	m.expose[0] = port;
	memset(&sv, 0, sizeof(sv));
	sv.m = &m;
	sv.xp = pair[1];
	sv.logs[0] = sv.logs[1] = -1;
	for (int k = 0; k < 2; k++) {
		/* k = 0: the exposed port (the control); k = 1: the next port, forged */
		req[0] = 7; req[1] = 9; req[2] = (uint32_t)port + (uint32_t)k;
		fd = -1;
		nfd = 0;
		if (send(pair[0], req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
			CHECK(false, "expose refusal: cannot send a request");
			break;
		}
		inner_expose_connect(&sv);
		if (recv_fds(pair[0], ans, sizeof(ans), &fd, 1, &nfd, MSG_DONTWAIT) != (ssize_t)sizeof(ans)) {
			CHECK(false, "expose refusal: no answer to request %d", k);
			break;
		}
		if (k == 0)
			CHECK(ans[0] == 7 && ans[1] == 9 && ans[2] == 0 && nfd == 1 && fd >= 0,
			    "control: the exposed port gets a socket (errno %u, %d fds)", ans[2], nfd);
		else
			CHECK(ans[0] == 7 && ans[1] == 9 && ans[2] == EPERM && nfd == 0,
			    "a port the policy does not expose: EPERM and no socket (errno %u, %d fds)", ans[2], nfd);
		if (fd >= 0)
			close(fd);
	}
	close(pair[0]);
	close(pair[1]);
	close(lfd);
}
#endif

/* ---- issue #11 items 8 and 9: BOM, refusals, --explain, credentials --- */

static void
test_policy_hardening(void)
{
	struct policy p;
	const char *e;
	size_t i;

	/* the handed-fd message is self-delimiting on the stream: with no
	 * descriptor, the kernel merges it with the "R" that follows */
	{
		struct handed h = { 0 }, back;
		char b[SBX_HANDED_MAX_BYTES + 1];
		size_t n = handed_encode(&h, b), used = 0;
		const char *why = NULL;

		b[n] = 'R';
		CHECK(handed_decode(b, n + 1, 0, &back, &used, &why) == 0 && used == n && back.n == 0,
		    "handed: \"L\" with no descriptors, then \"R\": the message is %zu bytes, the R left over", n);
		handed_add(&h, LR_PROXY, 3128);
		n = handed_encode(&h, b);
		CHECK(handed_decode(b, n, 0, &back, &used, &why) < 0 && why,
		    "handed: a message naming one descriptor that came with none is refused");
		CHECK(handed_decode(b, n, 1, &back, &used, &why) == 0 && used == n && back.role[0] == LR_PROXY &&
		    back.port[0] == 3128, "handed: control, one listener");
	}

	/* the memory rule: no arena allocation after the proxy's lockdown; a
	 * sealed arena aborts (in a child), an unsealed one (control) serves */
	for (int sealed = 0; sealed < 2; sealed++) {
		pid_t pid = fork();
		int status = 0;

		if (pid == 0) {
			int devnull = open("/dev/null", O_WRONLY);

			dup2(devnull, 2);	/* the BUG line */
			if (sealed)
				arena_seal();
			_exit(amalloc(16) ? 0 : 1);
		}
		waitpid(pid, &status, 0);
		CHECK(sealed ? WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT : WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "arena %s: status 0x%x", sealed ? "sealed: amalloc aborts" : "not sealed: amalloc serves", status);
	}

	/* pol_validate: what only the whole policy shows, one warning each */
	{
		static const struct { const char *policy; size_t warnings; const char *needle; } vcases[] = {
			{ "deny-env AWS_*\nweaker-nested-sandbox\n", 1, "deny-env with weaker-nested-sandbox" },
			{ "deny-env AWS_*\n", 0, NULL },	/* control: each alone is fine */
			{ "weaker-nested-sandbox\n", 0, NULL },
			{ "allow-unix-socket /run/x.sock\n", 1, "allow-unix-socket is ignored on Linux" },
			{ "allow-unix-socket /run/x.sock\ndeny-env A\nweaker-nested-sandbox\n", 2, NULL },
		};

		for (i = 0; i < LEN(vcases); i++) {
			struct vec w = { 0 };

			e = parse(&p, vcases[i].policy);
			CHECK(e == NULL, "validate case %zu parses: %s", i, S(e));
			pol_validate(&p, &w);
			CHECK(w.n == vcases[i].warnings && (!vcases[i].needle || (w.n && strstr(w.v[0], vcases[i].needle))),
			    "validate case %zu: %zu warnings (want %zu)", i, w.n, vcases[i].warnings);
		}
	}

	/* a UTF-8 byte-order mark: skipped at the start, for both formats */
	static const struct { const char *text, *want; } boms[] = {
		{ UTF8_BOM "{\"filesystem\": {\"allowWrite\": [\"/w\"]}}", NULL },
		{ UTF8_BOM "allow-write /w\n", NULL },
		{ UTF8_BOM "  \n{\"filesystem\": {\"allowWrite\": [\"/w\"]}}", NULL },
		{ UTF8_BOM "\n", "t: policy file is empty (sbx refuses to fall back to a default)" },
		{ UTF8_BOM UTF8_BOM "allow-write /w\n",
		  "t:1: a byte-order mark (U+FEFF) is allowed only as the first bytes of the file" },
		{ " " UTF8_BOM "{}", "t:1: a byte-order mark (U+FEFF) is allowed only as the first bytes of the file" },
		{ "allow-write /w\n" UTF8_BOM "deny-read /x\n",
		  "t:2: a byte-order mark (U+FEFF) is allowed only as the first bytes of the file" },
		{ "{" UTF8_BOM "}", "t:1:2: expected a key in double quotes" },
		{ UTF8_BOM "{\"filesystem\": 1}", "t:1:16: filesystem: expected an object, got a number" },
		{ "\xff\xfe{\0}\0", "t:1: the file is UTF-16 (it starts with a byte-order mark FF FE); save it as UTF-8" },
		{ "\xfe\xff\0{", "t:1: the file is UTF-16 (it starts with a byte-order mark FE FF); save it as UTF-8" },
	};

	for (i = 0; i < LEN(boms); i++) {
		e = parse(&p, boms[i].text);
		if (!boms[i].want)
			CHECK(e == NULL && p.paths[PL_ALLOW_WRITE].n == 1, "BOM %zu accepted: %s", i, S(e));
		else
			check_str(S(e), boms[i].want, aprintf("BOM case %zu", i), __LINE__);
	}

	/* denies a mount cannot honour are refused where they are written;
	 * each refusal has its control (a near path that is accepted) */
	static const struct { const char *text, *want; } refusals[] = {
		{ "deny-read /\n", "t:1: deny-read /: hiding the whole disk" },
		{ "deny-read //\n", "t:1: deny-read //: hiding the whole disk" },
		{ "deny-secret-file /\n", "t:1: deny-secret-file /: hiding the whole disk" },
		{ "deny-read /proc\n", "t:1: deny-read /proc: sbx mounts a fresh /proc for the command" },
		{ "deny-read /proc/self/environ\n", "t:1: deny-read /proc/self/environ: sbx mounts a fresh /proc" },
		{ "deny-read /proc/*\n", "t:1: deny-read /proc/*: sbx mounts a fresh /proc" },
		{ "deny-read /dev\n", "t:1: deny-read /dev: sbx mounts a minimal /dev" },
		{ "deny-read /dev/shm/x\n", "t:1: deny-read /dev/shm/x: sbx mounts a minimal /dev" },
		{ "deny-write /dev/shm\n", "t:1: deny-write /dev/shm: sbx mounts a minimal /dev" },
		{ "deny-secret-file /proc/1/environ\n", "t:1: deny-secret-file /proc/1/environ: sbx mounts a fresh /proc" },
		{ "{\"filesystem\": {\"denyRead\": [\"/dev/x\"]}}", "t:1:30: filesystem.denyRead /dev/x: sbx mounts a minimal /dev" },
		{ "{\"filesystem\": {\"denyRead\": [{\"path\": \"/\", \"literal\": true}]}}",
		  "t:1:30: filesystem.denyRead /: hiding the whole disk" },
		{ "deny-secret-file literal /x\n", "t:1: deny-secret-file takes one PATH (no literal form, as srt's credentials.files)" },
		{ "deny-env 1X\n", "t:1: deny-env 1X: a variable name starts with a letter, _ or *" },
		{ "deny-env A-B\n", "t:1: deny-env A-B: a variable name holds only letters, digits and _ (and * to match any run)" },
		{ "deny-env A=B\n", "t:1: deny-env A=B: a variable name holds only" },
		{ "deny-env \"\"\n", "t:1: deny-env : a variable name starts with" },
		{ "deny-env --x\n", "t:1: deny-env --x: a variable name holds only" },
		{ "deny-env\n", "t:1: deny-env takes NAME" },
		/* controls */
		{ "deny-read /sys/firmware\n", NULL },
		{ "deny-read /procfs\n", NULL },
		{ "deny-read /devices\n", NULL },
		{ "deny-read /p\n", NULL },
		{ "allow-read /proc/x\nallow-write /dev/shm\ndeny-write /sys/x\n", NULL },
		{ "deny-env AWS_*\ndeny-env *_TOKEN\ndeny-env _x9\ndeny-env *\ndeny-env AWS_*\n", NULL },
		{ "deny-secret-file ~/.aws/credentials\ndeny-secret-file /e/*.pem\n", NULL },
	};

	for (i = 0; i < LEN(refusals); i++) {
		e = parse(&p, refusals[i].text);
		if (!refusals[i].want)
			CHECK(e == NULL, "control %zu accepted: %s: %s", i, refusals[i].text, S(e));
		else
			CHECK(e && strncmp(e, refusals[i].want, strlen(refusals[i].want)) == 0,
			    "refusal %zu: %s\n  got:  %s\n  want: %s...", i, refusals[i].text, S(e), refusals[i].want);
	}
	parse(&p, "deny-env AWS_*\ndeny-env AWS_*\n");
	CHECK(p.deny_env.n == 1, "deny-env twice is once");

	/* srt's credentials block, deny mode only; strict */
	static const struct { const char *json, *want; } creds[] = {
		{ "{\"credentials\": {}}", NULL },
		{ "{\"credentials\": {\"files\": [], \"envVars\": []}}", NULL },
		{ "{\"credentials\": {\"files\": [{\"path\": \"~/.aws/credentials\", \"mode\": \"deny\"}],"
		  " \"envVars\": [{\"mode\": \"deny\", \"name\": \"GH_TOKEN\"}, {\"name\": \"AWS_*\", \"mode\": \"deny\"}]}}", NULL },
		{ "{\"credentials\": {\"envVars\": [{\"name\": \"X\", \"mode\": \"mask\"}]}}",
		  "t:1:52: credentials.envVars[0].mode: credential masking needs TLS termination, which sbx does not do; use mode \"deny\"" },
		{ "{\"credentials\": {\"files\": [{\"path\": \"/x\", \"mode\": \"mask\"}]}}",
		  "t:1:51: credentials.files[0].mode: credential masking needs TLS termination" },
		{ "{\"credentials\": {\"files\": [{\"path\": \"/x\", \"mode\": \"deny\", \"extract\": \"(x)\"}]}}",
		  "t:1:70: credentials.files[0].extract: only masking reads it, and credential masking needs TLS termination" },
		{ "{\"credentials\": {\"envVars\": [{\"name\": \"X\", \"mode\": \"deny\", \"injectHosts\": []}]}}",
		  "t:1:75: credentials.envVars[0].injectHosts: only masking reads it" },
		{ "{\"credentials\": {\"awsPairs\": []}}",
		  "t:1:30: credentials.awsPairs: AWS pairs link masked variables, and credential masking needs TLS termination" },
		{ "{\"credentials\": {\"sigv4\": {}}}", "t:1:27: credentials.sigv4: SigV4 re-signing is part of masking" },
		{ "{\"credentials\": {\"allowPlaintextInject\": true}}", "t:1:42: credentials.allowPlaintextInject: it only matters to" },
		{ "{\"credentials\": {\"injectHosts\": []}}", "t:1:18: unknown key \"injectHosts\" in credentials" },
		{ "{\"credentials\": []}", "t:1:17: credentials: expected an object, got an array" },
		{ "{\"credentials\": {\"files\": {}}}", "t:1:27: credentials.files: expected an array, got an object" },
		{ "{\"credentials\": {\"files\": [\"/x\"]}}", "t:1:28: credentials.files[0]: expected an object { \"path\": ..., \"mode\": \"deny\" }, got a string" },
		{ "{\"credentials\": {\"files\": [{\"path\": \"/x\"}]}}", "t:1:28: credentials.files[0].mode: required (\"deny\")" },
		{ "{\"credentials\": {\"files\": [{\"mode\": \"deny\"}]}}", "t:1:28: credentials.files[0].path: required" },
		{ "{\"credentials\": {\"files\": [{\"path\": \"/x\", \"mode\": \"allow\"}]}}",
		  "t:1:51: credentials.files[0].mode: expected \"deny\" or \"mask\"" },
		{ "{\"credentials\": {\"files\": [{\"path\": 1, \"mode\": \"deny\"}]}}",
		  "t:1:37: credentials.files[0].path: expected a string, got a number" },
		{ "{\"credentials\": {\"files\": [{\"name\": \"/x\", \"mode\": \"deny\"}]}}",
		  "t:1:37: credentials.files[0]: unknown key \"name\" (an entry has \"path\" and \"mode\")" },
		{ "{\"credentials\": {\"envVars\": [{\"name\": \"A-B\", \"mode\": \"deny\"}]}}",
		  "t:1:39: credentials.envVars A-B: a variable name holds only letters" },
		{ "{\"credentials\": {\"files\": [{\"path\": \"/\", \"mode\": \"deny\"}]}}",
		  "t:1:37: credentials.files /: hiding the whole disk" },
		{ "{\"credentials\": {\"files\": [{\"path\": \"\", \"mode\": \"deny\"}]}}",
		  "t:1:37: credentials.files : empty path" },
	};

	for (i = 0; i < LEN(creds); i++) {
		e = parse(&p, creds[i].json);
		if (!creds[i].want)
			CHECK(e == NULL, "credentials %zu accepted: %s", i, S(e));
		else
			CHECK(e && strncmp(e, creds[i].want, strlen(creds[i].want)) == 0,
			    "credentials %zu: %s\n  got:  %s\n  want: %s...", i, creds[i].json, S(e), creds[i].want);
	}
	e = parse(&p, creds[2].json);
	CHECK(e == NULL && p.paths[PL_DENY_SECRET].n == 1 && p.deny_env.n == 2 &&
	    strcmp(((struct pathrule *)p.paths[PL_DENY_SECRET].v[0])->path, "/home/u/.aws/credentials") == 0 &&
	    strcmp(p.deny_env.v[1], "AWS_*") == 0, "credentials values");

	/* both printers round-trip the new directives; JSON in srt's shape */
	{
		struct policy q;
		struct buf l1 = { 0 }, j1 = { 0 }, l2 = { 0 };

		e = parse(&p, "deny-secret-file ~/.aws/credentials\ndeny-secret-file \"/a b\"\ndeny-env GH_TOKEN\n"
		    "deny-env *_KEY\n");
		CHECK(e == NULL, "round trip policy parses: %s", S(e));
		pol_print_lines(&p, &l1);
		pol_print_json(&p, &j1);
		CHECK(strstr(l1.p, "deny-secret-file /home/u/.aws/credentials\ndeny-secret-file \"/a b\"\n"
		    "deny-env GH_TOKEN\ndeny-env *_KEY\n") != NULL, "line printer: %s", l1.p);
		CHECK(strstr(j1.p, "\"credentials\": {\n    \"files\": [\n"
		    "      { \"path\": \"/home/u/.aws/credentials\", \"mode\": \"deny\" },\n"
		    "      { \"path\": \"/a b\", \"mode\": \"deny\" }\n    ],\n    \"envVars\": [\n"
		    "      { \"name\": \"GH_TOKEN\", \"mode\": \"deny\" },\n"
		    "      { \"name\": \"*_KEY\", \"mode\": \"deny\" }\n    ]\n  }") != NULL, "JSON printer: %s", j1.p);
		e = parse(&q, j1.p);
		CHECK(e == NULL, "printed JSON reads back: %s", S(e));
		pol_print_lines(&q, &l2);
		check_str(S(l2.p), S(l1.p), "JSON -> lines round trip", __LINE__);
		free(l1.p);
		free(j1.p);
		free(l2.p);
	}

	/* the deny-env matcher: "*" is any run, everything else itself */
	static const struct { const char *pat, *name; bool want; } envs[] = {
		{ "AWS_*", "AWS_SECRET_ACCESS_KEY", true }, { "AWS_*", "AWS_", true }, { "AWS_*", "AWS", false },
		{ "AWS_*", "XAWS_1", false }, { "*_TOKEN", "GH_TOKEN", true }, { "*_TOKEN", "GH_TOKENS", false },
		{ "*_TOKEN", "_TOKEN", true }, { "*", "", true }, { "*", "PATH", true }, { "A*B*C", "AXXBYYC", true },
		{ "A*B*C", "AXBYCD", false }, { "A*B*C", "ABC", true }, { "*TOKEN*", "MY_TOKEN_FILE", true },
		{ "aws_*", "AWS_X", false }, { "GH_TOKEN", "GH_TOKEN", true }, { "GH_TOKEN", "GH_TOKE", false },
		{ "GH_TOKE", "GH_TOKEN", false }, { "A**", "A", true }, { "*A*A*A*A*A*A*A*A*B", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", false },
		{ "**AB", "AAB", true },
	};

	for (i = 0; i < LEN(envs); i++)
		CHECK(env_match(envs[i].pat, envs[i].name, strlen(envs[i].name)) == envs[i].want,
		    "env_match(%s, %s) should be %d", envs[i].pat, envs[i].name, envs[i].want);
	CHECK(env_match("AB", "ABC=1", 2), "matches only the n bytes before '='");

	/* the renderer: --unsetenv per matching variable of the environment
	 * passed in, before sbx's own --setenv; a denied variable never comes
	 * back through them (JAVA_TOOL_OPTIONS, GIT_CONFIG_COUNT) */
	{
		char *envp[] = { "AWS_A=1", "AWSX=2", "PATH=/bin", "JAVA_TOOL_OPTIONS=-Dsecret=1", "GIT_CONFIG_COUNT=3",
			"HTTP_PROXY=http://u:pw@corp:8080", "=odd", "GH_TOKEN=t", NULL };
		char *cmd[] = { "true", NULL };
		/* with the DNS stub the command's network namespace is the inner
		 * helper's own, and bwrap makes none (bw_render_options) */
#if SBX_DNS_STUB
#define LAST_BEFORE_ENV "--die-with-parent"
#else
#define LAST_BEFORE_ENV "--unshare-net"
#endif
		static const struct { const char *policy, *want, *absent; } rcases[] = {
			{ "allow-domain a.com\ngit-safe-directory /r\n",
			  LAST_BEFORE_ENV " --setenv SANDBOX_RUNTIME 1 ",
			  "--unsetenv" },
			{ "allow-domain a.com\ngit-safe-directory /r\n",	/* control: inherited values continued */
			  "--setenv JAVA_TOOL_OPTIONS -Dsecret=1 -Dhttp.proxyHost", NULL },
			{ "allow-domain a.com\ngit-safe-directory /r\n",
			  "--setenv GIT_CONFIG_KEY_3 safe.directory --setenv GIT_CONFIG_VALUE_3 /r --setenv GIT_CONFIG_COUNT 4 ",
			  NULL },
			{ "deny-env AWS_*\ndeny-env *_TOKEN\n",
			  "--unsetenv AWS_A --unsetenv GH_TOKEN --setenv SANDBOX_RUNTIME 1 ", "AWSX" },
			{ "allow-domain a.com\ndeny-env JAVA_TOOL_OPTIONS\n",
			  "--unsetenv JAVA_TOOL_OPTIONS --setenv SANDBOX_RUNTIME 1 ", "-Dsecret" },
			{ "git-safe-directory /r\ndeny-env GIT_CONFIG_*\n",
			  "--unsetenv GIT_CONFIG_COUNT --setenv SANDBOX_RUNTIME 1 ", "GIT_CONFIG_KEY_3" },
			{ "git-safe-directory /r\ndeny-env GIT_CONFIG_*\n",
			  "--setenv GIT_CONFIG_KEY_0 safe.directory --setenv GIT_CONFIG_VALUE_0 /r --setenv GIT_CONFIG_COUNT 1 ", NULL },
			{ "allow-domain a.com\ndeny-env *PROXY*\n",
			  "--unsetenv HTTP_PROXY --setenv SANDBOX_RUNTIME 1 --setenv HTTP_PROXY http://127.0.0.1:3128 ", "corp" },
			{ "deny-env *\n", "--unsetenv AWS_A --unsetenv AWSX --unsetenv PATH --unsetenv JAVA_TOOL_OPTIONS "
			  "--unsetenv GIT_CONFIG_COUNT --unsetenv HTTP_PROXY --unsetenv GH_TOKEN --setenv SANDBOX_RUNTIME 1 ",
			  "--unsetenv  " },
		};

		for (i = 0; i < LEN(rcases); i++) {
			struct plan pl;
			struct vec opts = { 0 };
			struct buf b = { 0 };
			struct run_paths rp = { "/p", "/r", "/t", "/e", "/home/u", NULL, { NULL }, { 0 }, "/resolv.conf", "/", { NULL } };
			struct run_facts rf;
			size_t k;

			e = parse(&p, rcases[i].policy);
			CHECK(e == NULL, "render case %zu parses: %s", i, S(e));
			memset(&pl, 0, sizeof(pl));
			run_facts_collect(&rf, &p, &rp, "/usr/bin/sbx", false, envp, cmd);
			bw_render_options(&p, &pl, &rf, &opts);
			for (k = 0; k < opts.n; k++)
				buf_printf(&b, "%s ", (const char *)opts.v[k]);
			CHECK(strstr(b.p, rcases[i].want) != NULL, "render %zu: want \"%s\" in\n%s", i, rcases[i].want, b.p);
			CHECK(!rcases[i].absent || !strstr(b.p, rcases[i].absent), "render %zu: \"%s\" must not be in\n%s",
			    i, S(rcases[i].absent), b.p);
			free(b.p);
		}
	}

	/* the plan: a secret stays hidden whatever is allowed below it */
	static const struct { const char *name, *policy, *tree, *needle, *want; } plans[] = {
		{ "control: allow-read reopens inside a plain deny-read",
		  "deny-read /home/u/.aws\nallow-read /home/u/.aws/config\n",
		  "f /home/u/.aws/credentials; f /home/u/.aws/config", "",
		  "tmpfs /home/u/.aws\nro /home/u/.aws/config\nremount-ro /home/u/.aws\n" },
		{ "allow-read does not reopen inside a secret",
		  "deny-secret-file /home/u/.aws\nallow-read /home/u/.aws/config\n",
		  "f /home/u/.aws/credentials; f /home/u/.aws/config", "",
		  "tmpfs /home/u/.aws\nremount-ro /home/u/.aws\n" },
		{ "nor allow-read of the secret itself", "deny-secret-file /e/k\nallow-read /e/k\nallow-read /e\n",
		  "f /e/k; f /e/j", "", "empty /e/k\n" },
		{ "nor allow-write below it, at any depth", "allow-write /w\ndeny-secret-file /w/sec\nallow-write /w/sec/a/out\n"
		  "allow-read /w/sec/a\nmandatory-deny-depth 1\n", "d /w/sec/a/out", "/w/sec", "tmpfs /w/sec\nremount-ro /w/sec\n" },
		{ "deep: a secret below an allow-read below a deny-read",
		  "deny-read /h\nallow-read /h/a\ndeny-secret-file /h/a/s\nallow-read /h/a/s/x\n",
		  "f /h/a/s/x; f /h/a/t; f /h/b", "",
		  "tmpfs /h\nro /h/a\ntmpfs /h/a/s\nremount-ro /h/a/s\nremount-ro /h\n" },
		{ "a symlink into the secret does not reopen it", "deny-secret-file /s\nallow-read /l/x\n",
		  "d /s/x; l /l /s", "", "tmpfs /s\nremount-ro /s\n" },
		{ "a secret glob", "deny-secret-file /e/*.key\n", "f /e/a.key; f /e/b.txt", "", "empty /e/a.key\n" },
		{ "disable-filesystem keeps the secrets (srt drops them)", "disable-filesystem\ndeny-secret-file /e/k\n"
		  "deny-read /e/j\n", "f /e/k; f /e/j", "", "rw /e\nempty /e/k\n" },
		{ "\"..\" is judged once resolved", "deny-read /dev/../e/k\n", "f /e/k; d /dev", "", "empty /e/k\n" },
		{ "a missing secret mounts nothing (and warns)", "deny-secret-file /e/none\n", "d /e", "", "" },
		{ "deny-read /sys/... is honoured", "deny-read /sys/firmware\ndeny-read /sys/kernel/notes\n",
		  "d /sys/firmware/efi; f /sys/kernel/notes", "",
		  "tmpfs /sys/firmware\nremount-ro /sys/firmware\nempty /sys/kernel/notes\n" },
		{ "a deny that leads to / is refused", "deny-read /p/..\n", "d /p", "",
		  "error: t:1: deny-read /p/..: leads to /: hiding the whole disk leaves nothing to run the command with "
		  "(bubblewrap fails on /bin); deny the directories that hold secrets instead (deny-read /home, deny-read "
		  "/root) and allow-read what the command needs inside them" },
		{ "a symlink to / too", "deny-secret-file /x/root\n", "l /x/root /", "",
		  "error: t:1: deny-secret-file /x/root: leads to /: hiding the whole disk" },
		{ "a glob matching /dev is refused", "deny-read /*\n", "d /etc; d /dev; d /usr", "",
		  "error: t:1: deny-read /*: matches /dev: sbx mounts a minimal /dev for the command (null, zero, full, "
		  "random, urandom, tty, pts, shm), and it would cover this deny; remove the line" },
		{ "a symlink into /proc is refused", "deny-read /x/*\n", "l /x/env /proc/self/environ; d /proc/self", "",
		  "error: t:1: deny-read /x/*: matches /x/env, which leads to /proc/self/environ: sbx mounts a fresh /proc" },
	};

	for (i = 0; i < LEN(plans); i++) {
		if (skip_deny_glob(plans[i].policy))
			continue;
		const char *got = plan_text(plans[i].policy, plans[i].tree);

		if (*plans[i].needle && strncmp(got, "error", 5) != 0)
			got = plan_lines_with(got, plans[i].needle);
		if (strncmp(plans[i].want, "error", 5) == 0)
			CHECK(strncmp(got, plans[i].want, strlen(plans[i].want)) == 0, "%s:\n  got:  %s\n  want: %s...",
			    plans[i].name, got, plans[i].want);
		else
			check_str(got, plans[i].want, plans[i].name, __LINE__);
	}
	{	/* nothing under a secret is writable, even with allow-write */
		struct run_paths rp = { "/p", NULL, "/tmp/t", NULL, "/home/u", NULL, { NULL }, { 0 }, NULL, NULL, { NULL } };
		struct vec facts = { 0 };
		struct plan pl;
		struct err er = { 0 };
		const char *why;

		parse(&p, "allow-write /w\ndeny-secret-file /w/sec\nallow-write /w/sec/out\n");
		fake_tree("d /w/sec/out; d /w/other");
		CHECK(plan_resolve(&p, &fake_disk, &rp, &facts, &er) == 0 && plan_build(&facts, false, &pl, &why) == 0,
		    "plan with a secret");
		CHECK(!plan_is_writable(&pl, "/w/sec/out/f"), "under a secret: not writable");
		CHECK(plan_is_writable(&pl, "/w/other/f"), "control: a sibling is writable");
	}

	/* --explain's target: malformed forms are refused, not guessed at */
	static const struct { const char *t, *host; long port; } targets[] = {
		{ "a.com", "a.com", 443 }, { "a.com:22", "a.com", 22 }, { "[::1]", "[::1]", 443 },
		{ "[::1]:8080", "[::1]", 8080 }, { "::1", "[::1]", 443 }, { "10.0.0.1:65535", "10.0.0.1", 65535 },
		{ "host:80:80", NULL, 0 }, { "[::1]x", NULL, 0 }, { "host:", NULL, 0 }, { ":80", NULL, 0 }, { "", NULL, 0 },
		{ "[::1", NULL, 0 }, { "[x]:80", NULL, 0 }, { "[::1]:", NULL, 0 }, { "a.com:0", NULL, 0 },
		{ "a.com:080", NULL, 0 }, { "a.com:65536", NULL, 0 }, { "a.com:-1", NULL, 0 }, { "a.com:8x", NULL, 0 },
		{ "[]:80", NULL, 0 }, { "1:2:3", NULL, 0 },
	};

	for (i = 0; i < LEN(targets); i++) {
		char host[SBX_MAX_HOST_BYTES + 8];
		long port = 0;
		const char *why = NULL;
		int rc = explain_parse_target(targets[i].t, host, sizeof(host), &port, &why);

		if (targets[i].host)
			CHECK(rc == 0 && strcmp(host, targets[i].host) == 0 && port == targets[i].port,
			    "--explain=%s: got %s %s:%ld", targets[i].t, rc ? S(why) : "ok", rc ? "" : host, port);
		else
			CHECK(rc < 0 && why && *why, "--explain=%s should be refused", targets[i].t);
	}
	{
		char *big = amalloc(400), host[SBX_MAX_HOST_BYTES + 8];
		long port;
		const char *why;

		memset(big, 'a', 300);
		CHECK(explain_parse_target(big, host, sizeof(host), &port, &why) < 0, "--explain: a long host refused");
	}
}

/* ---- the edges the host side trusts: inherited fds, placeholder removal - */

static void
test_host_edges(void)
{
	char dir[] = "/tmp/sbx-unit-XXXXXX";
	int fds[3], i;
	struct stat st;
	struct ph_id id;

	/* the fallback path of fds_cloexec_from (kernels before 5.11) */
	for (i = 0; i < 3; i++) {
		fds[i] = dup(2);
		fcntl(fds[i], F_SETFD, 0);
	}
	CHECK(fds_cloexec_listed(3) == 0, "fds_cloexec_listed failed");
	for (i = 0; i < 3; i++) {
		CHECK(fcntl(fds[i], F_GETFD) & FD_CLOEXEC, "fd %d left inheritable by the fallback", fds[i]);
		close(fds[i]);
	}
	/* ph_remove follows no symlink on the way: dir/link -> dir/real, the
	 * placeholder dir/real/ph; removing "dir/link/ph" with the right
	 * identity must not act through the link */
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	mkdir(aprintf("%s/real", dir), 0700);
	mkdir(aprintf("%s/real/ph", dir), 0700);
	CHECK(symlink("real", aprintf("%s/link", dir)) == 0, "symlink");
	CHECK(lstat(aprintf("%s/real/ph", dir), &st) == 0, "lstat");
	memset(&id, 0, sizeof(id));
	id.made = true;
	id.dev = st.st_dev;
	id.ino = st.st_ino;
	ph_remove(-1, aprintf("%s/link/ph", dir), &id);
	CHECK(access(aprintf("%s/real/ph", dir), F_OK) == 0, "ph_remove acted through a symlinked parent");
	/* an empty regular file at the name: never removed, identity or not */
	CHECK(rmdir(aprintf("%s/real/ph", dir)) == 0 && close(open(aprintf("%s/real/ph", dir), O_CREAT | O_WRONLY, 0600)) == 0,
	    "setup: a file at the name");
	CHECK(lstat(aprintf("%s/real/ph", dir), &st) == 0, "lstat");
	id.dev = st.st_dev;
	id.ino = st.st_ino;
	ph_remove(-1, aprintf("%s/real/ph", dir), &id);
	CHECK(access(aprintf("%s/real/ph", dir), F_OK) == 0, "ph_remove removed a regular file");
	unlink(aprintf("%s/real/ph", dir));
	/* control: the directory it made, by its real path, is removed */
	mkdir(aprintf("%s/real/ph", dir), 0700);
	CHECK(lstat(aprintf("%s/real/ph", dir), &st) == 0, "lstat");
	id.dev = st.st_dev;
	id.ino = st.st_ino;
	ph_remove(-1, aprintf("%s/real/ph", dir), &id);
	CHECK(access(aprintf("%s/real/ph", dir), F_OK) < 0, "ph_remove kept its own placeholder");
	/* and a directory with something inside is kept */
	mkdir(aprintf("%s/real/ph", dir), 0700);
	mkdir(aprintf("%s/real/ph/mine", dir), 0700);
	CHECK(lstat(aprintf("%s/real/ph", dir), &st) == 0, "lstat");
	id.dev = st.st_dev;
	id.ino = st.st_ino;
	ph_remove(-1, aprintf("%s/real/ph", dir), &id);
	CHECK(access(aprintf("%s/real/ph/mine", dir), F_OK) == 0, "ph_remove removed a directory with the person's files");
	/* the git audit writes only through directories it opened without
	 * following a link: a config reached through dir/link is left alone
	 * (a concurrent command could swap a directory for a link mid-audit),
	 * while the same config by its real path is rewritten (the control) */
	{
		struct audit a;
		const char *real_cfg = aprintf("%s/real/config", dir);
		struct buf b = { 0 };
		int fd = open(real_cfg, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		CHECK(fd >= 0 && write_all(fd, "[core]\n\tfsmonitor = ./x.sh\n", 27) == 0 && close(fd) == 0,
		    "setup: a config");
		memset(&a, 0, sizeof(a));
		vec_push(&a.roots, (void *)astrdup(dir));
		audit_config(&a, aprintf("%s/link/config", dir), true);
		CHECK(read_file(real_cfg, 4096, &b) == 0 && strstr(b.p, "fsmonitor") &&
		    access(aprintf("%s/real/config.sbx-disabled", dir), F_OK) < 0,
		    "the audit rewrote a config through a symlinked directory");
		b.n = 0;
		audit_config(&a, real_cfg, true);
		CHECK(read_file(real_cfg, 4096, &b) == 0 && !strstr(b.p, "fsmonitor") &&
		    access(aprintf("%s/real/config.sbx-disabled", dir), F_OK) == 0,
		    "the audit did not rewrite the config by its real path (control)");
		free(b.p);
	}
	/* a killed run's record (audit_recover): with "D" (killed before the
	 * sandbox's first write-intent call went on: scan_deep) nothing is
	 * audited; with "C" (the walk below the depth never made) a repository
	 * renamed into place during the run is new by its ctime, though it was
	 * born before the run (the same record without "D" acts: the control) */
	{
		const char *root = aprintf("%s/rec", dir), *run = aprintf("%s/run", dir);
		const char *prep = aprintf("%s/prep", root), *cfg = aprintf("%s/w/.git/config", root);
		struct timespec now;
		struct buf b = { 0 };
		long long t0;
		int fd;

		CHECK(mkdir(root, 0700) == 0 && mkdir(run, 0700) == 0 && mkdir(prep, 0700) == 0 &&
		    mkdir(aprintf("%s/objects", prep), 0700) == 0 &&
		    mkdir(aprintf("%s/refs", prep), 0700) == 0 && mkdir(aprintf("%s/w", root), 0700) == 0,
		    "setup: the prepared gitdir");
		fd = open(aprintf("%s/config", prep), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(fd >= 0 && write_all(fd, "[core]\n\tfsmonitor = ./x.sh\n", 27) == 0 && close(fd) == 0,
		    "setup: its config");
		usleep(30000);	/* born before the run (the coarse clock's tick) */
		clock_gettime(CLOCK_REALTIME, &now);
		t0 = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
		usleep(30000);
		fd = open(aprintf("%s/HEAD", prep), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CHECK(fd >= 0 && write_all(fd, "ref: refs/heads/main\n", 21) == 0 && close(fd) == 0 &&
		    rename(prep, aprintf("%s/w/.git", root)) == 0, "setup: renamed into place in the run");
		for (int rec = 0; rec < 2; rec++) {
			const char *text = aprintf("T %lld\nP\nC\n%sR %s\n", t0, rec ? "" : "D\n", root);

			fd = open(aprintf("%s/repos", run), O_WRONLY | O_CREAT | O_TRUNC, 0600);
			CHECK(fd >= 0 && write_all(fd, text, strlen(text)) == 0 && close(fd) == 0,
			    "setup: the record");
			audit_recover(run);
			b.n = 0;
			CHECK(read_file(cfg, 4096, &b) == 0, "read the config");
			if (rec == 0)
				CHECK(b.p && strstr(b.p, "fsmonitor") &&
				    access(aprintf("%s.sbx-disabled", cfg), F_OK) < 0,
				    "a record with D (no call went on): the audit did not act");
			else
				CHECK(b.p && !strstr(b.p, "fsmonitor") &&
				    access(aprintf("%s.sbx-disabled", cfg), F_OK) == 0,
				    "C: a repository renamed into place during the run neutralised");
		}
		free(b.p);
	}
	rm_tree(dir);
	CHECK(access(dir, F_OK) < 0, "rm_tree left %s", dir);
}

/* ---- 9a placeholders: a name changed between ph_cover and sbx-init's
 * bind, covered again (ph_recover) -------------------------------------- */

/* One bind as run_instructions and run_send_instructions make it. */
static struct init_bind
ph_test_bind(const struct plan *pl, const char *path)
{
	struct init_bind b = { (char *)path, 0, 0, 0 };
	const struct ph_held *h = ph_held_at(path);

	for (size_t i = 0; i < pl->mounts.n; i++)
		if (strcmp(((const struct mount *)pl->mounts.v[i])->path, path) == 0 &&
		    ((const struct mount *)pl->mounts.v[i])->kind == MK_BIND_RW_INIT)
			b.flags = IB_PIN;
	if (h) {
		b.dev = (uint64_t)h->id.dev;
		b.ino = (uint64_t)h->id.ino;
	}
	return b;
}

static void
test_ph_recover(void)
{
	char tmpl[] = "/tmp/sbx-unit-ph-XXXXXX";
	const char *top = mkdtemp(tmpl), *w, *reg;
	struct policy p;
	struct disk dk = { &real_disk_ops, NULL };
	struct run_paths rp = { "/", NULL, "/tmp/t", NULL, "/nonexistent-home", NULL, { NULL }, { 0 }, NULL, NULL, { NULL } };
	struct vec facts = { 0 }, covered = { 0 };
	struct plan pl;
	struct err e = { 0 };
	struct init_bind b[6];
	struct stat st;
	const char *why;
	int dfd, status;
	pid_t pid;

	CHECK(top != NULL, "setup: a directory");
	if (!top)
		return;
	w = path_join(top, "w");
	reg = path_join(top, "reg");
	CHECK(mkdir(w, 0755) == 0 && mkdir(reg, 0700) == 0 && mkdir(path_join(w, "repo"), 0755) == 0 &&
	    mkdir(path_join(w, "repo/.git"), 0755) == 0 && mkdir(path_join(w, "repo/.git/hooks"), 0755) == 0,
	    "setup: a writable root with a repository");
	for (size_t i = 0; i < 5; i++) {
		static const char *const files[] = { ".bashrc", ".zshrc", ".profile", ".gitmodules", "repo/.git/config" };

		CHECK(close(open(path_join(w, files[i]), O_WRONLY | O_CREAT, 0644)) == 0, "setup: %s", files[i]);
	}
	parse(&p, aprintf("allow-write %s\n", w));
	CHECK(plan_resolve(&p, &dk, &rp, &facts, &e) == 0 && plan_build(&facts, false, &pl, &why) == 0,
	    "plan over the real disk: %s", e.msg);
	plan_binds_to_init(&pl);
	run_state.registry = run_state.root = reg;

	/* gone before ph_cover: left to sbx-init (lazy), nothing made there */
	CHECK(unlink(path_join(w, ".gitmodules")) == 0, "setup: .gitmodules gone after the scan");
	ph_acquire(&pl);
	CHECK(lstat(path_join(w, ".gitmodules"), &st) < 0 && errno == ENOENT,
	    "a name sbx-init binds, gone before ph_cover: no placeholder made for it there");
	b[0] = ph_test_bind(&pl, path_join(w, ".gitmodules"));
	CHECK(b[0].ino == 0, "and nothing held for it: sbx-init asks about it");

	/* then, after ph_cover: .bashrc removed, .zshrc replaced by a
	 * directory, the repository removed whole, .profile made a symlink */
	b[1] = ph_test_bind(&pl, path_join(w, ".bashrc"));
	b[2] = ph_test_bind(&pl, path_join(w, ".zshrc"));
	b[3] = ph_test_bind(&pl, path_join(w, "repo"));
	b[4] = ph_test_bind(&pl, path_join(w, "repo/.git/hooks"));
	b[5] = ph_test_bind(&pl, path_join(w, ".profile"));
	CHECK(b[1].ino && b[2].ino && b[3].ino && b[4].ino && b[3].flags == IB_PIN && b[4].flags == 0,
	    "held: what sbx-init binds, the repository as a pin");
	CHECK(unlink(path_join(w, ".bashrc")) == 0 && unlink(path_join(w, ".zshrc")) == 0 &&
	    mkdir(path_join(w, ".zshrc"), 0755) == 0, "setup: .bashrc gone, .zshrc a directory");
	rm_tree(path_join(w, "repo"));
	CHECK(unlink(path_join(w, ".profile")) == 0 && symlink("/etc/passwd", path_join(w, ".profile")) == 0,
	    "setup: .profile a symlink");

	ph_lock();
	dfd = ph_dir_open(true);
	for (int i = 0; i < 5; i++)
		ph_recover(dfd, &pl, &b[i], &covered);
	CHECK(strcmp(b[0].path, path_join(w, ".gitmodules")) == 0 && lstat(b[0].path, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_ino == b[0].ino && b[0].flags == 0, "gone before ph_cover: a placeholder, bound read-only");
	CHECK(lstat(b[1].path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_ino == b[1].ino && b[1].flags == 0,
	    ".bashrc gone: a placeholder where it was");
	CHECK(lstat(b[2].path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_ino == b[2].ino && b[2].flags == 0 &&
	    ph_held_at(b[2].path)->fd < 0, ".zshrc now a directory: that directory, read-only, and no placeholder made");
	CHECK(strcmp(b[3].path, path_join(w, "repo")) == 0 && lstat(b[3].path, &st) == 0 && st.st_ino == b[3].ino &&
	    !(b[3].flags & IB_PIN), "the repository gone: one placeholder where it was, read-only, not a pin");
	CHECK(b[4].flags == IB_NONE, "its hooks: covered by that placeholder, nothing to bind");
	CHECK(lstat(path_join(w, "repo/.git"), &st) < 0, "no placeholders below the first missing name");
	close(dfd);
	ph_unlock();

	/* a symlink now: its target would need the plan's rules; sbx stops */
	fflush(NULL);
	if ((pid = fork()) == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		ph_lock();
		ph_recover(ph_dir_open(true), &pl, &b[5], &covered);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == SBX_EXIT_FAILURE,
	    "a dangerous name that became a symlink: sbx stops (status %d)", status);

	/* a pinned repository replaced by a new one (another clone at the same
	 * name): the new directory pinned, and its hooks asked about on their
	 * own, bound read-only; nothing else of it left to a placeholder */
	rm_tree(path_join(w, "repo"));
	CHECK(mkdir(path_join(w, "repo"), 0755) == 0 && mkdir(path_join(w, "repo/.git"), 0755) == 0 &&
	    mkdir(path_join(w, "repo/.git/hooks"), 0755) == 0, "setup: a new repository at the same name");
	covered.n = 0;
	b[3] = (struct init_bind){ (char *)path_join(w, "repo"), 1, 1, IB_PIN };
	b[4] = (struct init_bind){ (char *)path_join(w, "repo/.git/hooks"), 1, 1, 0 };
	ph_lock();
	dfd = ph_dir_open(true);
	ph_recover(dfd, &pl, &b[3], &covered);
	ph_recover(dfd, &pl, &b[4], &covered);
	close(dfd);
	ph_unlock();
	CHECK(b[3].flags == IB_PIN && lstat(b[3].path, &st) == 0 && st.st_ino == b[3].ino,
	    "a pinned repository replaced: the new one pinned (flags %u)", b[3].flags);
	CHECK(b[4].flags == 0 && strcmp(b[4].path, path_join(w, "repo/.git/hooks")) == 0 && lstat(b[4].path, &st) == 0 &&
	    st.st_ino == b[4].ino, "its new hooks: bound read-only on their own, not skipped under the pin");

	/* after the run: the placeholders sbx made go, what another program
	 * made stays */
	ph_release();
	CHECK(lstat(path_join(w, ".bashrc"), &st) < 0 && lstat(path_join(w, ".gitmodules"), &st) < 0,
	    "the placeholders removed after the run");
	CHECK(lstat(path_join(w, ".zshrc"), &st) == 0 && S_ISDIR(st.st_mode) && lstat(path_join(w, "repo/.git/hooks"), &st) == 0,
	    "the other program's directories kept");
	run_state.registry = run_state.root = NULL;
	rm_tree(top);
}

/* ---- 2.3 directories: every entry once, across several getdents64 reads,
 * with its type; "." and ".." never; past the pool, malloc; the pool's
 * slots given back ---------------------------------------------------------- */

static void
test_dir_stream(void)
{
	char tmpl[] = "/tmp/sbx-unit-dir-XXXXXX";
	const char *dir = mkdtemp(tmpl);
	struct dir_stream *held[SBX_DIR_POOL + 4];
	struct dir_entry de;
	struct dir_stream *d;
	int files = 0, dirs = 0, other = 0, r, seen[300] = { 0 };

	CHECK(dir != NULL, "setup: a directory");
	if (!dir)
		return;
	/* 300 names of 40 bytes: about 18 KiB of records, nine reads of 2 KiB */
	for (int i = 0; i < 300; i++) {
		const char *p = aprintf("%s/entry-%03d-padding-padding-padding-pad", dir, i);

		if (i % 3 == 0)
			CHECK(mkdir(p, 0700) == 0, "setup: mkdir %s", p);
		else
			CHECK(close(open(p, O_WRONLY | O_CREAT, 0600)) == 0, "setup: %s", p);
	}
	d = dir_open(AT_FDCWD, dir);
	CHECK(d != NULL, "dir_open %s", dir);
	while (d && (r = dir_next(d, &de)) == 1) {
		int i = -1;

		CHECK(strcmp(de.name, ".") && strcmp(de.name, ".."), "dir_next returned %s", de.name);
		if (sscanf(de.name, "entry-%3d-", &i) == 1 && i >= 0 && i < 300)
			seen[i]++;
		if (de.type == DT_DIR)
			dirs++;
		else if (de.type == DT_REG)
			files++;
		else
			other++;
	}
	dir_close(d);
	for (int i = 0; i < 300; i++)
		CHECK(seen[i] == 1, "entry %d seen %d times", i, seen[i]);
	CHECK(dirs == 100 && files == 200 && other == 0, "types: %d directories, %d files, %d other", dirs, files, other);
	/* more streams at once than the pool holds: the rest are malloc'd, and
	 * every one reads; closed, the pool's slots are free again */
	for (size_t k = 0; k < LEN(held); k++) {
		held[k] = dir_open(AT_FDCWD, dir);
		CHECK(held[k] && dir_next(held[k], &de) == 1, "stream %zu of %zu at once", k, LEN(held));
		CHECK(held[k] && held[k]->pooled == (k < SBX_DIR_POOL), "stream %zu pooled: %d", k, held[k] ? held[k]->pooled : -1);
	}
	for (size_t k = 0; k < LEN(held); k++)
		dir_close(held[k]);
	for (size_t k = 0; k < SBX_DIR_POOL; k++)
		CHECK(!dir_pool_used[k], "pool slot %zu still taken", k);
	/* a symlink as the last component is not followed; a file is no directory */
	CHECK(symlink(dir, aprintf("%s/link", dir)) == 0, "setup: a link");
	errno = 0;
	CHECK(dir_open(AT_FDCWD, aprintf("%s/link", dir)) == NULL && (errno == ELOOP || errno == ENOTDIR),
	    "dir_open followed a symlink (errno %d)", errno);
	errno = 0;
	CHECK(dir_open(AT_FDCWD, aprintf("%s/entry-001-padding-padding-padding-pad", dir)) == NULL && errno == ENOTDIR,
	    "dir_open opened a file");
	for (size_t k = 0; k < SBX_DIR_POOL; k++)
		CHECK(!dir_pool_used[k], "a failed open kept pool slot %zu", k);
	rm_tree(dir);
	CHECK(access(dir, F_OK) < 0, "rm_tree left %s", dir);
}

/* ---- the write observer: its events' codec, the judging, the store ----- */

/* How many times s holds a refusal of target (0: none kept). */
static uint64_t __attribute__((unused))	/* the session tests' (Linux) */
kept_count(const struct vstore *s, const char *target)
{
	for (size_t i = 0; i < SBX_VSTORE_SLOTS; i++)
		if (s->kept[i] && strcmp(s->kept[i]->v.target, target) == 0)
			return s->kept[i]->v.count;
	return 0;
}

#if SBX_LINUX
/* What the observer reads from a caller's memory, read here from this
 * process's own (process_vm_readv of itself): a sendto's and a sendmsg's
 * address, sendmmsg's every remote address (one to the loopback first
 * must not hide one after it), bind's Unix path, setsid's session. */
static void
test_observer_collect(void)
{
	const struct bpf_arch *arch = bpf_native_arch();
	struct obs_event ev[SBX_OBS_EVENTS_MAX];
	struct obs_seen seen;
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_port = htons(9) }, far[10];
	struct sockaddr_un un = { .sun_family = AF_UNIX, .sun_path = "rel.sock" };
	struct iovec iov = { (void *)"q", 1 };
	struct msghdr mh = { .msg_name = &far[0], .msg_namelen = sizeof(far[0]), .msg_iov = &iov, .msg_iovlen = 1 };
	struct mmsghdr mm[12];
	char cwd[PATH_MAX];
	uint32_t more = 0;
	int n;

	if (!arch || !getcwd(cwd, sizeof(cwd)))
		return;
	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < 10; i++) {
		far[i] = lo;
		far[i].sin_addr.s_addr = htonl(0x0ac86300 + (uint32_t)i);	/* 10.200.99.i */
		far[i].sin_port = htons(53);
	}
	memset(mm, 0, sizeof(mm));
	mm[0].msg_hdr.msg_name = &lo;	/* the loopback first */
	mm[0].msg_hdr.msg_namelen = sizeof(lo);
	for (int i = 1; i < 12; i++) {
		mm[i].msg_hdr.msg_name = &far[(i - 1) % 10];	/* ten distinct, then two repeated */
		mm[i].msg_hdr.msg_namelen = sizeof(far[0]);
	}
	struct { enum sc_id sc; uint64_t a[6]; int want; const char *first; } cases[] = {
		{ SC_sendto, { 3, 0, 1, 0, (uintptr_t)&far[0], sizeof(far[0]) }, 1, "10.200.99.0" },
		{ SC_sendto, { 3, 0, 1, 0, (uintptr_t)&lo, sizeof(lo) }, 0, NULL },
		{ SC_sendmsg, { 3, (uintptr_t)&mh, 0 }, 1, "10.200.99.0" },
		{ SC_sendmmsg, { 3, (uintptr_t)mm, 12, 0 }, SBX_OBS_EVENTS_MAX, "10.200.99.0" },
		{ SC_bind, { 3, (uintptr_t)&un, sizeof(un) }, 1, aprintf("%s/rel.sock", strcmp(cwd, "/") ? cwd : "") },
		{ SC_bind, { 3, (uintptr_t)&lo, sizeof(lo) }, 0, NULL },
		{ SC_connect, { 3, (uintptr_t)&far[3], sizeof(far[3]) }, 1, "10.200.99.3" },
	};
	for (size_t i = 0; i < LEN(cases); i++) {
		struct sbx_seccomp_notif nf = { 0 };

		nf.pid = (uint32_t)getpid();
		nf.data.arch = arch->audit_arch;
		nf.data.nr = arch->nr[cases[i].sc];
		memcpy(nf.data.args, cases[i].a, sizeof(nf.data.args));
		more = 0;
		n = obs_collect(&nf, arch, true, ev, &more, &seen);
		CHECK(n == cases[i].want && (!n || strcmp(ev[0].target, cases[i].first) == 0),
		    "obs_collect %s case %zu: %d events, the first %s", sc_names[cases[i].sc], i, n, n ? ev[0].target : "-");
		CHECK(!n || ev[0].sid == (uint32_t)getsid(0), "obs_collect %s: the caller's session (%u, want %u)",
		    sc_names[cases[i].sc], (unsigned)ev[0].sid, (unsigned)getsid(0));
		if (cases[i].sc == SC_sendmmsg)
			CHECK(more == 2 && strcmp(ev[7].target, "10.200.99.7") == 0,
			    "sendmmsg: eight distinct remote addresses, two more counted (%u), none twice", (unsigned)more);
	}
	/* setsid: the session left, and the new one's id (the caller's thread group) */
	{
		struct sbx_seccomp_notif nf = { 0 };

		nf.pid = (uint32_t)getpid();
		nf.data.arch = arch->audit_arch;
		nf.data.nr = arch->nr[SC_setsid];
		n = obs_collect(&nf, arch, true, ev, &more, &seen);
		CHECK(getsid(0) == 0 || (n == 1 && ev[0].sid == (uint32_t)getsid(0) &&
		    strtoul(ev[0].target, NULL, 10) == (unsigned long)getpid()), "setsid: %d events", n);
		CHECK(obs_collect(&nf, arch, false, ev, &more, &seen) == 0, "setsid is a session's alone");
	}
}
#endif

static void
test_observer(void)
{
	static const struct { const char *in, *want; } norm[] = {
		{ "/", "/" }, { "//", "/" }, { "/a//b/", "/a/b" }, { "/a/./b/.", "/a/b" }, { "/a/b/../c", "/a/c" },
		{ "/a/b/../../..", "/" }, { "/..", "/" }, { "/a/..b/c", "/a/..b/c" }, { "/a/.../c", "/a/.../c" },
		{ "/w/sub/../../o/x", "/o/x" }, { "/a/b/c/../../d/", "/a/d" }, { "relative", NULL }, { "", NULL },
	};
	struct policy p;
	struct run_paths rp = { "/p", NULL, "/tmp/sbx-0/run/tmp", NULL, "/home/u", NULL, { NULL }, { 0 }, NULL, NULL, { NULL } };
	struct vec facts = { 0 };
	struct plan pl;
	struct err e = { 0 };
	const char *why;
	char out[64];
	size_t i;

	for (i = 0; i < LEN(norm); i++) {
		int rc = path_normalize_lex(norm[i].in, out, sizeof(out));

		CHECK(norm[i].want ? rc == 0 && strcmp(out, norm[i].want) == 0 : rc < 0,
		    "path_normalize_lex(\"%s\"): got %s, want %s", norm[i].in, rc < 0 ? "-1" : out,
		    norm[i].want ? norm[i].want : "-1");
	}
	CHECK(path_normalize_lex("/aaaa/bbbb", out, 8) < 0, "a path longer than the buffer is refused");

	/* the codec: round trip, every cut refused, hostile records refused */
	{
		struct obs_event ev = { 1, 7, 4242, 0x01020304, 0, "sh\001x", "/o/a file\nwith a newline", 0 }, got;
		unsigned char rec[SBX_OBS_MAX_BYTES + 1];
		size_t n = obs_event_encode(&ev, rec), cut;
		int believed = 0;

		CHECK(obs_event_decode(rec, n, &got) == 0 && got.call == 1 && got.lost == 7 && got.pid == 4242 &&
		    got.sid == 0x01020304 && strcmp(got.comm, "sh?x") == 0 && strcmp(got.target, ev.target) == 0,
		    "an event round-trips (a control byte in comm as '?', the path's bytes as they are)");
		for (cut = 0; cut < n; cut++)
			if (obs_event_decode(rec, cut, &got) == 0)
				believed++;
		CHECK(believed == 0, "%d cut records believed", believed);
		CHECK(obs_event_decode(rec, n + 1, &got) < 0, "a byte past the record is refused");
		rec[1] = (unsigned char)LEN(obs_calls);
		CHECK(obs_event_decode(rec, n, &got) < 0, "an unknown call is refused");
		rec[1] = 1;
		rec[SBX_OBS_HEAD_BYTES - 2] = 0x1b;
		CHECK(obs_event_decode(rec, n, &got) < 0, "a control byte in comm is refused");
		rec[SBX_OBS_HEAD_BYTES - 2] = 's';
		rec[n - 1] = '\0';
		CHECK(obs_event_decode(rec, n, &got) < 0, "a NUL in the path is refused");
		strcpy(ev.target, "relative/path");
		n = obs_event_encode(&ev, rec);
		CHECK(obs_event_decode(rec, n, &got) < 0, "a relative path is refused");
		strcpy(ev.target, "/o/x");
		ev.flags = 0x0040;
		n = obs_event_encode(&ev, rec);
		CHECK(obs_event_decode(rec, n, &got) < 0, "a path's record with an unknown flag is refused");
		ev.flags = (uint16_t)(OU_COUNT << OBS_F_UNSURE_SHIFT);
		n = obs_event_encode(&ev, rec);
		CHECK(obs_event_decode(rec, n, &got) < 0, "a path's record with an unknown doubt is refused");
		ev.flags = (uint16_t)(OBS_F_WHERE | OU_MOVED << OBS_F_UNSURE_SHIFT);
		ev.port = 80;	/* a path has none: its slot carries the flags */
		n = obs_event_encode(&ev, rec);
		CHECK(obs_event_decode(rec, n, &got) == 0 && got.flags == ev.flags && got.port == 0,
		    "a path's flags round-trip in the port's slot");
		for (i = 0; i < LEN(obs_calls) && obs_calls[i].what != OW_SHARE; i++)
			;
		ev.call = (uint8_t)i;
		ev.flags = OU_SHARING << OBS_F_UNSURE_SHIFT;
		n = obs_event_encode(&ev, rec);
		CHECK(i < LEN(obs_calls) && obs_event_decode(rec, n, &got) < 0,
		    "a call with no path, its record not marked where: refused");
		ev.flags |= OBS_F_WHERE;
		n = obs_event_encode(&ev, rec);
		CHECK(obs_event_decode(rec, n, &got) == 0, "control: marked where, it is taken");
		ev.flags = 0;
		for (i = 0; i < LEN(obs_calls); i++) {	/* each kind of call: what its target must be */
			static const struct { const char *target; uint16_t port; bool ok[7]; } t[] = {
				/*				   PATH   ADDR   MSG    MMSG   BIND   SETSID SHARE */
				{ "/o/x", 0,		{ true,  false, false, false, true,  false, false } },
				{ "2001:db8::1", 80,	{ false, true,  true,  true,  false, false, false } },
				/* a path's slot carries its flags, not a port: a path (a Unix socket's
				 * name keeps port 0) */
				{ "/not/an/address", 80, { true,  false, false, false, false, false, false } },
				{ "4242", 0,		{ false, false, false, false, false, true,  false } },
				{ "04242", 0,		{ false, false, false, false, false, false, false } },
				{ "4194305", 0,		{ false, false, false, false, false, false, false } },
				{ "12a", 0,		{ false, false, false, false, false, false, false } },
			};

			ev.call = (uint8_t)i;
			for (size_t j = 0; j < LEN(t); j++) {
				strcpy(ev.target, t[j].target);
				ev.port = t[j].port;
				n = obs_event_encode(&ev, rec);
				CHECK((obs_event_decode(rec, n, &got) == 0) == t[j].ok[obs_calls[i].what],
				    "%s: a target \"%s\" port %u %s", sc_names[obs_calls[i].sc], t[j].target,
				    (unsigned)t[j].port, t[j].ok[obs_calls[i].what] ? "refused" : "believed");
			}
		}
	}

	/* the judging: the plan's own function, over a fake disk */
	CHECK(parse(&p, "allow-write /w\ndeny-write /w/sec\n") == NULL, "observer policy parses");
	fake_tree("d /w/sec; d /w/sub; d /o");
	CHECK(plan_resolve(&p, &fake_disk, &rp, &facts, &e) == 0 && plan_build(&facts, false, &pl, &why) == 0,
	    "observer plan builds");
	{
		static const struct { const char *call, *target; uint16_t port; bool refused; const char *want; } cases[] = {
			{ "openat", "/w/new-file", 0, false, NULL },
			{ "openat", "/w/sub/deep/new", 0, false, NULL },
			{ "openat", "//w///x/", 0, false, NULL },
			{ "openat", "/o/x", 0, true, "/o/x" },
			{ "unlinkat", "/w/sec/x", 0, true, "/w/sec/x" },
			{ "openat", "/w/sec", 0, true, "/w/sec" },
			{ "openat", "/w/sub/../../o/y", 0, true, "/o/y" },
			{ "openat", "/w/sec/../ok", 0, false, NULL },
			{ "mkdir", "/elsewhere/d", 0, true, "/elsewhere/d" },
			{ "openat", "/dev/null", 0, false, NULL },
			{ "openat", "/proc/self/attr/current", 0, false, NULL },
			{ "openat", "/devices/x", 0, true, "/devices/x" },
			{ "connect", "10.200.99.1", 443, true, "10.200.99.1" },
			{ "connect", "::ffff:10.0.0.1", 443, true, "::ffff:10.0.0.1" },
			{ "connect", "127.0.0.1", 3128, false, NULL },
			{ "connect", "127.1.2.3", 80, false, NULL },
			{ "connect", "0.0.0.0", 80, false, NULL },
			{ "connect", "::1", 3128, false, NULL },
			{ "connect", "::", 3128, false, NULL },
			{ "connect", "::ffff:127.0.0.1", 3128, false, NULL },
			{ "sendto", "10.200.99.7", 53, true, "10.200.99.7" },
			{ "sendmsg", "10.200.99.8", 123, true, "10.200.99.8" },
			{ "sendmmsg", "2001:db8::9", 53, true, "2001:db8::9" },
			{ "sendto", "127.0.0.53", 53, false, NULL },
			{ "futimesat", "/o/t", 0, true, "/o/t" },
			{ "fchmod", "/w/sec/f", 0, true, "/w/sec/f" },
			{ "fchown", "/w/f", 0, false, NULL },
			{ "bind", "/o/s.sock", 0, true, "/o/s.sock" },
			{ "bind", "/w/s.sock", 0, false, NULL },
			{ "setsid", "4242", 0, false, NULL },	/* a session made: no refusal */
		};
		struct vstore store;

		for (i = 0; i < LEN(cases); i++) {
			struct obs_event ev = { 0 };
			struct violation v;
			char nbuf[PATH_MAX];
			bool got;
			size_t k;

			for (k = 0; k < LEN(obs_calls) && strcmp(sc_names[obs_calls[k].sc], cases[i].call) != 0; k++)
				;
			ev.call = (uint8_t)k;
			ev.pid = 99;
			ev.port = cases[i].port;
			snprintf(ev.target, sizeof(ev.target), "%s", cases[i].target);
			got = obs_judge(&pl, &ev, nbuf, sizeof(nbuf), &v);
			CHECK(got == cases[i].refused, "%s %s: judged %s", cases[i].call, cases[i].target,
			    got ? "a refusal" : "allowed");
			if (!got || !cases[i].refused)
				continue;
			CHECK(k < LEN(obs_calls) && strcmp(v.target, cases[i].want) == 0 && strcmp(v.op, cases[i].call) == 0 &&
			    v.kind == (ev.port ? VK_CONNECT : VK_FILE) && v.port == cases[i].port,
			    "%s %s: the violation is %s %s:%d", cases[i].call, cases[i].target, v.op, v.target, v.port);
			CHECK(v.kind != VK_CONNECT ||
			    strcmp(v.reason, "direct connection; only the proxy at 127.0.0.1:3128 is reachable") == 0,
			    "connect: the reason");
		}
		/* 100 processes writing the same denied file: one record, counted 100 */
		vstore_init(&store, NULL, NULL, NULL);
		for (i = 0; i < 100; i++) {
			struct obs_event ev = { 1, 0, (uint32_t)(1000 + i), 0, 0, "sh", "/o/f", 0 };
			struct violation v;
			char nbuf[PATH_MAX];

			if (obs_judge(&pl, &ev, nbuf, sizeof(nbuf), &v))
				vstore_add(&store, &v);
		}
		CHECK(store.seq == 1 && store.kept[vclass_base(VC_OTHER)] && store.kept[vclass_base(VC_OTHER)]->v.count == 100,
		    "100 writes of one file by 100 processes: %llu records", (unsigned long long)store.seq);
		vstore_clear(&store);
	}
#if SBX_LINUX
	test_observer_collect();
#endif
}

/* ---- srt's command line (sbx invoked as srt) and the command-line hint - */

static void
test_srt_cli(void)
{
	/* argv words, then what srt_parse makes of them: "" for no error,
	 * else the start of its message; the settings, the -c string, the
	 * control fd, -d's count and the command's first word */
	static const struct {
		const char *argv[8];
		const char *err, *settings, *command, *control_fd;
		int debug;
		const char *arg0;
	} cases[] = {
		{ { "srt", "-c", "echo hi" }, "", NULL, "echo hi", NULL, 0, NULL },
		{ { "srt", "-cecho hi" }, "", NULL, "echo hi", NULL, 0, NULL },
		{ { "srt", "-d", "--debug", "-s", "f.json", "ls", "-la" }, "", "f.json", NULL, NULL, 2, "ls" },
		{ { "srt", "-sf.json", "ls" }, "", "f.json", NULL, NULL, 0, "ls" },
		{ { "srt", "--settings=f.json", "ls" }, "", "f.json", NULL, NULL, 0, "ls" },
		{ { "srt", "--settings", "f.json", "ls" }, "", "f.json", NULL, NULL, 0, "ls" },
		{ { "srt", "-c", "-d" }, "", NULL, "-d", NULL, 0, NULL },	/* a value is taken whatever it is */
		/* options end at the command: its -c and -d are its own */
		{ { "srt", "sh", "-c", "echo", "-d" }, "", NULL, NULL, NULL, 0, "sh" },
		{ { "srt", "--", "-c", "x" }, "", NULL, NULL, NULL, 0, "-c" },
		{ { "srt", "-", "x" }, "", NULL, NULL, NULL, 0, "-" },
		{ { "srt", "--control-fd", "3", "ls" }, "", NULL, NULL, "3", 0, "ls" },
		{ { "srt", "--control-fd=10", "ls" }, "", NULL, NULL, "10", 0, "ls" },
		{ { "srt", "--control-fd", "2", "ls" }, "error: option '--control-fd <fd>' argument '2' is invalid. must be "
		  "an integer file descriptor >= 3 (0-2 are stdin, stdout and stderr).", NULL, NULL, NULL, 0, NULL },
		{ { "srt", "--control-fd", "0x10", "ls" }, "error: option '--control-fd <fd>' argument '0x10' is invalid.",
		  NULL, NULL, NULL, 0, NULL },
		{ { "srt", "--control-fd", "+5", "ls" }, "error: option '--control-fd <fd>' argument '+5'", NULL, NULL, NULL,
		  0, NULL },
		{ { "srt", "--control-fd" }, "error: option '--control-fd <fd>' argument missing", NULL, NULL, NULL, 0, NULL },
		{ { "srt", "-s" }, "error: option '-s, --settings <path>' argument missing", NULL, NULL, NULL, 0, NULL },
		{ { "srt", "-c" }, "error: option '-c <command>' argument missing", NULL, NULL, NULL, 0, NULL },
		{ { "srt", "--control-fdx", "3" }, "error: unknown option '--control-fdx'", NULL, NULL, NULL, 0, NULL },
		{ { "srt", "-v", "ls" }, "error: unknown option '-v'", NULL, NULL, NULL, 0, NULL },
		{ { "srt", "-dc", "x" }, "error: unknown option '-dc'", NULL, NULL, NULL, 0, NULL },
		{ { "srt" }, "Error: No command specified. Use -c <command> or provide command arguments.", NULL, NULL, NULL,
		  0, NULL },
		{ { "srt", "-d" }, "Error: No command specified.", NULL, NULL, NULL, 0, NULL },
		{ { "srt", "-c", "x", "y" }, "Error: -c takes the whole command line", NULL, NULL, NULL, 0, NULL },
		{ { "srt", "proxy" }, "Error: srt's proxy subcommand", NULL, NULL, NULL, 0, NULL },
		{ { "srt", "--", "windows-install" }, "Error: srt's windows-install", NULL, NULL, NULL, 0, NULL },
		{ { "srt", "-V" }, "", NULL, NULL, NULL, 0, NULL },
		{ { "srt", "--help" }, "", NULL, NULL, NULL, 0, NULL },
	};
	static const struct { const char *argv0; bool srt; } names[] = {
		{ "srt", true }, { "/usr/local/bin/srt", true }, { "./srt", true }, { "sbx", false },
		{ "/bin/srt2", false }, { "srt/sbx", false }, { "", false }, { NULL, false },
	};
	static const struct { const char *argv0, *hint; } hints[] = {
		{ "npm test", "to run a command line, use: sbx ... -- sh -c 'npm test'" },
		{ "echo it's", "to run a command line, use: sbx ... -- sh -c 'echo it'\\''s'" },
		{ "a\tb", "to run a command line, use: sbx ... -- sh -c 'a\tb'" },
		{ "npm", NULL },
		{ "/usr/bin/npm", NULL },
	};
	char buf[512];

	for (size_t i = 0; i < LEN(cases); i++) {
		struct srt_args s;
		struct err e = { 0 };
		int rc = srt_parse((char **)cases[i].argv, &s, &e);

		if (*cases[i].err) {
			CHECK(rc < 0 && strncmp(e.msg, cases[i].err, strlen(cases[i].err)) == 0,
			    "srt case %zu: want error \"%s\", got rc %d \"%s\"", i, cases[i].err, rc, e.msg);
			continue;
		}
		CHECK(rc == 0, "srt case %zu: unexpected error \"%s\"", i, e.msg);
		if (rc < 0)
			continue;
		CHECK(strcmp(S(s.settings), S(cases[i].settings)) == 0, "srt case %zu: settings %s", i, S(s.settings));
		CHECK(strcmp(S(s.command), S(cases[i].command)) == 0, "srt case %zu: command %s", i, S(s.command));
		CHECK(strcmp(S(s.control_fd), S(cases[i].control_fd)) == 0, "srt case %zu: control fd %s", i,
		    S(s.control_fd));
		CHECK(s.debug == cases[i].debug, "srt case %zu: debug %d", i, s.debug);
		CHECK(strcmp(S(s.args[0]), S(cases[i].arg0)) == 0, "srt case %zu: command word %s", i, S(s.args[0]));
	}
	for (size_t i = 0; i < LEN(names); i++)
		CHECK(invoked_as_srt(names[i].argv0) == names[i].srt, "invoked_as_srt(%s)", S(names[i].argv0));
	for (size_t i = 0; i < LEN(hints); i++) {
		bool got = cmd_line_hint(hints[i].argv0, buf, sizeof(buf));

		CHECK(got == (hints[i].hint != NULL), "cmd_line_hint(%s): %d", hints[i].argv0, got);
		if (got && hints[i].hint)
			check_str(buf, hints[i].hint, "cmd_line_hint", __LINE__);
	}
	/* a long name: the hint is cut, never overrun, and still closes its quote */
	memset(buf, 'x', sizeof(buf));
	{
		char name[600];

		memset(name, 'a', sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
		name[3] = ' ';
		CHECK(cmd_line_hint(name, buf, 100) && strlen(buf) < 100 && buf[strlen(buf) - 1] == '\'',
		    "cmd_line_hint: a long name overran or lost its closing quote");
	}
}

/* ---- live policy (9d): the network tables (6c), what an update changes (3.9) ---- */

/* The DNS stub (7.1, 7.4): the question parser on good and hostile
 * datagrams, the answer builder, the name-only decision, capture's ports. */
#if SBX_LINUX
/* Sessions (10f): the exec request's wire form, hostile bodies refused;
 * the hooks' pure parts (a session's name from an agent's id, the rewrite;
 * the round trip of hostile commands through bash is tests/session.tests.sh's). */
static void
test_sessions(void)
{
	char *argv[] = { "sh", "-c", "echo 'x'", NULL }, *envp[] = { "A=1", "PATH=/bin", NULL };
	struct exec_req e = { 7, 0, argv, envp, "/p" }, d;
	struct buf b = { 0 };
	const char *why = NULL, *rw;

	exec_req_encode(&e, &b);
	CHECK(exec_req_decode(b.p, b.n, &d, &why) == 0 && d.id == 7 && strcmp(d.argv[2], "echo 'x'") == 0 &&
	    !d.argv[3] && strcmp(d.envp[1], "PATH=/bin") == 0 && !d.envp[2] && strcmp(d.cwd, "/p") == 0,
	    "an exec request round-trips (%s)", why ? why : "");
	for (size_t cut = 0; cut < b.n; cut++)
		CHECK(exec_req_decode(b.p, cut, &d, &why) < 0, "a request cut to %zu bytes refused", cut);
	{
		char *bad_env[] = { "NOEQUALS", NULL }, *empty_name[] = { "=x", NULL }, *none[] = { NULL };
		struct exec_req bad[] = { { 0, 0, argv, bad_env, "/p" }, { 0, 0, argv, empty_name, "/p" },
			{ 0, 0, none, envp, "/p" }, { 0, 0, argv, envp, "relative" }, { 0, 2, argv, envp, "/p" },
			{ 0, EXEC_FD3 | 4, argv, envp, "/p" } };

		for (size_t i = 0; i < LEN(bad); i++) {
			struct buf bb = { 0 };

			exec_req_encode(&bad[i], &bb);
			CHECK(exec_req_decode(bb.p, bb.n, &d, &why) < 0, "hostile exec request %zu refused", i);
			free(bb.p);
		}
	}
	{
		struct exec_req f = { 0, EXEC_FD3, argv, envp, "/p" };
		struct buf fb = { 0 };

		exec_req_encode(&f, &fb);
		CHECK(exec_req_decode(fb.p, fb.n, &d, &why) == 0 && exec_req_nfd(&d) == 4 && exec_req_nfd(&e) == 3,
		    "--fd3's flag round-trips, and asks for a fourth descriptor");
		free(fb.p);
	}
	free(b.p);
	{
		/* init_reap_exec: a child that shared init's memory wrote its
		 * failure (err, then what and name) and exited; one killed in
		 * between (by any process of the session) left a partial record,
		 * which must not be read (a NULL name crashed init) */
		struct sess_exec x = { .id = 9, .pid = 42 };
		struct buf got = { 0 };
		int sv[2], fds[1], nfd, type;
		uint32_t v[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
			x.fail = (struct child_failure){ ENOENT, NULL, NULL };
			init_reap_exec(sv[0], &x, SIGKILL);	/* a wait status: killed by SIGKILL */
			type = frame_recv(sv[1], &got, fds, 1, &nfd);
			memcpy(v, got.p, 8);
			CHECK(type == 'Z' && got.n == 8 && v[0] == 9 && v[1] == 128 + SIGKILL && x.pid == 0,
			    "a killed child's partial failure is not put into words (Z, %zu bytes)", got.n);
			x = (struct sess_exec){ .id = 10, .pid = 43 };
			x.fail = (struct child_failure){ ENOENT, NULL, "no-such-cmd" };
			init_reap_exec(sv[0], &x, SBX_EXIT_NOT_FOUND << 8);	/* exited 127 */
			type = frame_recv(sv[1], &got, fds, 1, &nfd);
			memcpy(v, got.p, 8);
			CHECK(type == 'Z' && v[0] == 10 && v[1] == SBX_EXIT_NOT_FOUND && got.n > 8 &&
			    strstr(got.p + 8, "no-such-cmd: command not found\n"),
			    "an exited child's failure goes with its status, in words (%s)", got.n > 8 ? got.p + 8 : "");
			close(sv[0]);
			close(sv[1]);
			free(got.p);
		}
	}
	CHECK(strcmp(hook_session_name("claude", "abc-123_x.y"), "claude-abc-123_x.y") == 0, "a plain id names the session");
	CHECK(strncmp(hook_session_name("codex", "a/b c"), "codex-", 6) == 0 &&
	    session_name_ok(hook_session_name("codex", "a/b c")) && session_name_ok(hook_session_name("codex", "")),
	    "an id with other bytes, or none, is hashed into a valid name");
	rw = hook_rewrite("/opt/my tools/sbx", "claude-1", "a'b", true);
	CHECK(strncmp(rw, "{ __sbx_d=$('/opt/my tools/sbx' exec --fd3 claude-1 -- bash -c '", 63) == 0 &&
	    strstr(rw, "' /bin/bash 'a'\\''b' 3>&1 >&4 4>&-); __sbx_s=$?; } 4>&1; ") &&
	    strstr(rw, "cd -- \"${__sbx_d%/}\""), "the rewrite: sbx and the command single-quoted, fd 3 back: %s", rw);
	free((void *)rw);
	/* --print-settings: --ask stays on the hook that answers; the path quoted */
	for (int ask = 0; ask < 2; ask++) {
		struct buf sb = { 0 };
		struct jval *jv = NULL;
		struct err je = { 0 };
		char *opts[] = { "-c", "my policy", "--ask" };

		hook_settings(&sb, "claude", "/opt/my tools/sbx", opts, 2 + ask);
		CHECK(json_parse(sb.p, sb.n, "settings", &jv, &je) == 0, "--print-settings prints JSON: %s", je.msg);
		CHECK(strstr(sb.p, ask ? "\"'/opt/my tools/sbx' hook claude pre-tool-use -c 'my policy' --ask || {" :
		    "\"'/opt/my tools/sbx' hook claude pre-tool-use -c 'my policy' || {") != NULL &&
		    strstr(sb.p, "exit 2; }\""), /* no answer is a block (HOOK_FAIL_CLOSED) */
		    "--print-settings%s: the pre-tool-use hook%s: %s", ask ? " --ask" : "", ask ? " keeps --ask" : "", sb.p);
		CHECK(strstr(sb.p, "\"'/opt/my tools/sbx' hook claude session-start -c 'my policy'\"") &&
		    strstr(sb.p, "\"'/opt/my tools/sbx' hook claude session-end -c 'my policy'\""),
		    "--print-settings: the session hooks, as given: %s", sb.p);
		free(sb.p);
	}
	{
		/* FIPS 180-4's examples; and the digest Codex 0.171 itself gave a hook
		 * (codex app-server hooks/list: currentHash) */
		static const struct { const char *in, *hex; } v[] = {
			{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
			{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
			{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
			  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		};
		unsigned char d[32];
		char hex[65];

		for (size_t i = 0; i < LEN(v); i++) {
			sha256(v[i].in, strlen(v[i].in), d);
			for (int k = 0; k < 32; k++)
				snprintf(hex + 2 * k, 3, "%02x", d[k]);
			CHECK(strcmp(hex, v[i].hex) == 0, "sha256(\"%s\") = %s", v[i].in, hex);
		}
		CHECK(strcmp(codex_hook_digest("pre_tool_use", "Bash", "/work/scratch-agents/loghook.sh pre", 60),
		    "sha256:b796d28ce65fcdbcfa3647c7eb65b8528440f6411fb0f24ecc2391d9a965371b") == 0,
		    "a hook's digest, as Codex computes it");
		CHECK(strcmp(codex_hook_digest("session_end", NULL,
		    "/work/wt-agents/sbx hook codex session-end -c /work/scratch-agents/it/pol", 3),
		    "sha256:092d4db9cab63cc8d628942cee1543dd146e050450c0fa08caa25a6c4a0d2d60") == 0,
		    "a hook's digest without a matcher, as Codex computes it");
		CHECK(hook_cmd_is_ours("'/opt/my '\\''x'\\'' tools/sbx' hook claude pre-tool-use -c /p", "claude") &&
		    hook_cmd_is_ours("/usr/bin/sbx hook codex session-end", "codex") &&
		    !hook_cmd_is_ours("/usr/bin/sbx hook codex session-end", "claude") &&
		    !hook_cmd_is_ours("echo sbx hook claude pre-tool-use", "claude") &&
		    !hook_cmd_is_ours("/usr/bin/sbx hook claude pre-tool-usex", "claude"),
		    "sbx's hooks told from the person's");
	}
	/* one policy over every tool call: the judge request's wire form, the
	 * plan's reasons, the paths a tool names resolved as it opens them */
	{
		char kinds[] = { JUDGE_WRITE, JUDGE_SEARCH }, *paths[] = { "/p/a", "/p" }, k2[SBX_JUDGE_MAX], *p2[SBX_JUDGE_MAX];
		struct buf jb = { 0 }, ans = { 0 };
		struct plan *pl = plan_of("allow-write /p\ndeny-read /p/.env\ndeny-write /p/keep\n",
		    "d /p/.git/hooks; f /p/.git/config; f /p/.git/HEAD; f /p/.env; d /p/src; d /p/keep; d /o");
		const char *jwhy = NULL;

		judge_req_encode(kinds, paths, 2, &jb);
		CHECK(judge_req_decode(jb.p, jb.n, k2, p2, &jwhy) == 2 && k2[1] == JUDGE_SEARCH && strcmp(p2[1], "/p") == 0,
		    "a judge request round-trips");
		for (size_t cut = 0; cut < jb.n; cut++)
			CHECK(judge_req_decode(jb.p, cut, k2, p2, &jwhy) < 0, "a judge request cut to %zu bytes refused", cut);
		jb.p[4] = 'x';
		CHECK(judge_req_decode(jb.p, jb.n, k2, p2, &jwhy) < 0, "an unknown kind refused");
		free(jb.p);
		CHECK(pl != NULL, "the plan for the judge's cases");
		if (pl) {
			static const struct { char kind; const char *path, *why; } jc[] = {
				{ JUDGE_WRITE, "/p/src/x.c", NULL },
				{ JUDGE_WRITE, "/p/new/dir/file", NULL },
				{ JUDGE_WRITE, "/p/.git/hooks/pre-commit", "mandatory deny .git/hooks" },
				{ JUDGE_WRITE, "/p/.vscode/tasks.json", "mandatory deny .vscode" },
				{ JUDGE_WRITE, "/p/keep/x", "deny-write" },
				{ JUDGE_WRITE, "/o/x", "outside every writable root" },
				{ JUDGE_WRITE, "/p/../o/x", "outside every writable root" },
				{ JUDGE_READ, "/p/.env", "deny-read" },
				{ JUDGE_READ, "/o/x", NULL },
				{ JUDGE_SEARCH, "/p/src", NULL },
				{ JUDGE_SEARCH, "/p", "/p/.env" },
			};

			for (size_t i = 0; i < LEN(jc); i++) {
				char kk = jc[i].kind, *pp = (char *)jc[i].path;

				ans.n = 0;
				judge_answer(pl, &kk, &pp, 1, &ans);
				CHECK(ans.n && (jc[i].why ? strstr(ans.p, jc[i].why) != NULL : ans.p[0] == '\0'),
				    "judged %c %s: \"%s\"", kk, pp, ans.n ? ans.p : "");
			}
		}
		free(ans.p);
	}
	{
		char dir[] = "/tmp/sbx-unit-resolve-XXXXXX";
		struct vec pp = { 0 };

		CHECK(mkdtemp(dir) != NULL, "a scratch directory");
		(void)!mkdir(aprintf("%s/p", dir), 0755);
		(void)!mkdir(aprintf("%s/o", dir), 0755);
		(void)!symlink(aprintf("%s/o", dir), aprintf("%s/p/out", dir));
		(void)!symlink("../o/later.sh", aprintf("%s/p/dangling", dir));
		(void)!symlink("loop", aprintf("%s/p/loop", dir));
		CHECK(strcmp(hook_resolve(aprintf("%s/p", dir), "src/../a.c"), aprintf("%s/p/a.c", dir)) == 0,
		    "a relative path, from the cwd: %s", hook_resolve(aprintf("%s/p", dir), "src/../a.c"));
		CHECK(strcmp(hook_resolve(aprintf("%s/p", dir), "out/x"), aprintf("%s/o/x", dir)) == 0,
		    "through a symlink to outside: %s", hook_resolve(aprintf("%s/p", dir), "out/x"));
		CHECK(strcmp(hook_resolve("/", aprintf("%s/p/dangling", dir)), aprintf("%s/o/later.sh", dir)) == 0,
		    "through a dangling last link (a write creates its target): %s",
		    hook_resolve("/", aprintf("%s/p/dangling", dir)));
		CHECK(hook_resolve("/", aprintf("%s/p/loop", dir)) != NULL, "a link loop ends");
		hook_patch_paths("*** Begin Patch\n*** Update File: a.c\n@@\n-x\n+y\n*** Add File: out/new.txt\n+z\n"
		    "*** Update File: b.c\n*** Move to: .vscode/tasks.json\n*** Delete File: c.c\r\n*** End Patch\n",
		    aprintf("%s/p", dir), &pp);
		CHECK(pp.n == 5 && strcmp(pp.v[0], aprintf("%s/p/a.c", dir)) == 0 &&
		    strcmp(pp.v[1], aprintf("%s/o/new.txt", dir)) == 0 &&
		    strcmp(pp.v[3], aprintf("%s/p/.vscode/tasks.json", dir)) == 0 && strcmp(pp.v[4], aprintf("%s/p/c.c", dir)) == 0,
		    "every file a patch names, resolved (%zu)", pp.n);
		/* Codex trims a header line of any white space (Rust's trim):
		 * a header indented, or ended by U+00A0 or U+3000, names the
		 * same file */
		pp.n = 0;
		hook_patch_paths("*** Begin Patch\n*** Add File: ok.txt\n+a\n  \t*** Add File: /h/.bashrc\n+b\n"
		    "\xc2\xa0*** Delete File: /h/.zshrc\xc2\xa0\n*** Update File: /h/.profile \xe3\x80\x80\r\n"
		    "*** End Patch\n", "/p", &pp);
		CHECK(pp.n == 4 && strcmp(pp.v[1], "/h/.bashrc") == 0 && strcmp(pp.v[2], "/h/.zshrc") == 0 &&
		    strcmp(pp.v[3], "/h/.profile") == 0, "a patch's headers as Codex's lenient parser reads them (%zu)",
		    pp.n);
		rm_tree(dir);
	}
	CHECK(!session_name_ok("") && !session_name_ok(".hidden") && !session_name_ok("a/b") && session_name_ok("w-1.x_y") &&
	    !session_name_ok("--fd3"), "session names: a file's name, no dot or dash first, no slash");
	/* attribution (session_attribute): by the caller's session, each
	 * exec's into its own store; a session made inside an exec (setsid,
	 * seen by the observer) stays that exec's; a session no running exec
	 * has, or none, to every running exec; a record of an unknown session
	 * held while an exec has not said "S" yet */
	{
		struct vstore st;
		struct sess_client *a = &sess.c[0], *bb = &sess.c[1], *cc = &sess.c[2];
		struct violation v = { VK_FILE, "openat", "/o/a", 0, NULL, 10, "sh", 0, 0, 5 };

		vstore_init(&st, NULL, NULL, NULL);
		st.added = session_attribute;
		memset(sess.c, 0, sizeof(sess.c));
		sess.nheld = sess.nsids = 0;
		sess.on = true;
		*a = (struct sess_client){ .fd = -1, .id = 1, .pid = 5 };
		*bb = (struct sess_client){ .fd = -1, .id = 2, .pid = 9 };
		vstore_init(&a->store, NULL, NULL, "a");
		vstore_init(&bb->store, NULL, NULL, "b");
		vstore_add(&st, &v);				/* A's: session 5 */
		v.target = "/o/b", v.sid = 9;
		vstore_add(&st, &v);				/* B's */
		vstore_add(&st, &v);				/* B's again: counted */
		v.target = "/o/bg", v.sid = 77;
		vstore_add(&st, &v);				/* a session no exec has */
		v = (struct violation){ VK_NET, "network-outbound", "x.test", 443, "no", 0, NULL, 0, 0, 0 };
		vstore_add(&st, &v);				/* the proxy's: no session */
		CHECK(kept_count(&a->store, "/o/a") == 1 && !kept_count(&a->store, "/o/b") && !kept_count(&bb->store, "/o/a") &&
		    kept_count(&bb->store, "/o/b") == 2 && kept_count(&a->store, "/o/bg") == 1 &&
		    kept_count(&bb->store, "/o/bg") == 1 && kept_count(&a->store, "x.test") == 1 &&
		    kept_count(&bb->store, "x.test") == 1, "each exec owns its session's refusals; the rest go to both");
		/* setsid inside A, twice over: still A's; from a session of no exec: no exec's */
		session_setsid(100, 5);
		session_setsid(101, 100);
		session_setsid(102, 77);
		v = (struct violation){ VK_FILE, "openat", "/o/a-sid", 0, NULL, 11, "py", 0, 0, 101 };
		vstore_add(&st, &v);
		v.target = "/o/nobody", v.sid = 102;
		vstore_add(&st, &v);
		CHECK(kept_count(&a->store, "/o/a-sid") == 1 && !kept_count(&bb->store, "/o/a-sid") &&
		    kept_count(&a->store, "/o/nobody") == 1 && kept_count(&bb->store, "/o/nobody") == 1,
		    "a session made inside an exec is that exec's; one made outside every exec goes to all");
		/* C asked, not started: its session's records (and of a session
		 * made inside it meanwhile) wait for its "S" */
		*cc = (struct sess_client){ .fd = -1, .id = 3 };
		vstore_init(&cc->store, NULL, NULL, "c");
		v = (struct violation){ VK_FILE, "openat", "/o/c", 0, NULL, 12, "sh", 0, 0, 12 };
		vstore_add(&st, &v);
		session_setsid(200, 12);
		v.target = "/o/c-sid", v.sid = 200;
		vstore_add(&st, &v);
		CHECK(sess.nheld == 2 && !kept_count(&a->store, "/o/c") && !kept_count(&bb->store, "/o/c-sid"),
		    "a record of an unknown session waits while an exec has not started");
		cc->pid = 12;
		session_sids_started(cc);
		session_release_held();
		CHECK(sess.nheld == 0 && kept_count(&cc->store, "/o/c") == 1 && kept_count(&cc->store, "/o/c-sid") == 1 &&
		    !kept_count(&a->store, "/o/c") && !kept_count(&bb->store, "/o/c-sid"), "C's \"S\" claims both");
		/* C ends: its sessions are no running exec's (a process it left) */
		session_client_close(cc);
		v.target = "/o/c-left";
		vstore_add(&st, &v);
		CHECK(kept_count(&a->store, "/o/c-left") == 1 && kept_count(&bb->store, "/o/c-left") == 1,
		    "a session of an exec that ended goes to every running exec");
		/* D asked, never started: what waited for it goes to everyone */
		*cc = (struct sess_client){ .fd = -1, .id = 4 };
		vstore_init(&cc->store, NULL, NULL, "d");
		v.target = "/o/d", v.sid = 13;
		vstore_add(&st, &v);
		session_release_held();
		CHECK(sess.nheld == 1, "held while D has not started");
		session_client_close(cc);
		session_sids_started(NULL);
		session_release_held();
		CHECK(sess.nheld == 0 && kept_count(&a->store, "/o/d") == 1 && kept_count(&bb->store, "/o/d") == 1,
		    "with none left to start, a held record goes to every running exec");
		/* a number used again: the session it named has gone */
		session_setsid(100, 9);
		v.target = "/o/reused", v.sid = 100;
		vstore_add(&st, &v);
		CHECK(kept_count(&bb->store, "/o/reused") == 1 && !kept_count(&a->store, "/o/reused"),
		    "a session id made again names its new exec");
		session_client_close(a);
		session_client_close(bb);
		CHECK(sess.nsids == 0, "the sessions of ended execs are forgotten (%zu left)", sess.nsids);
		vstore_clear(&st);
		sess.on = false;
	}
}
#endif

static void
test_dns_stub(void)
{
	static const unsigned char good[] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1,
		3, 'F', 'a', 'r', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1 };
	static const struct { const char *what; const char *hex; int rc; } bad[] = {
		{ "short header", "1234", -1 },
		{ "a response (QR)", "123481000001000000000000", -1 },
		{ "opcode 2", "123410000001000000000000", DNS_NOTIMP },
		{ "two questions", "123401000002000000000000", DNS_FORMERR },
		{ "an answer in a query", "123401000001000100000000", DNS_FORMERR },
		{ "no question bytes", "123401000001000000000000", DNS_FORMERR },
		{ "a compression pointer", "123401000001000000000000c00c00010001", DNS_FORMERR },
		{ "a 64-byte label", "1234010000010000000000004000", DNS_FORMERR },
		{ "a label past the end", "12340100000100000000000005616200010001", DNS_FORMERR },
		{ "no type", "12340100000100000000000001610000", DNS_FORMERR },
	};
	struct dns_question q;
	unsigned char out[SBX_DNS_UDP_BYTES], pkt[600];
	struct addr a[40];
	size_t n;

	CHECK(dns_query_parse(good, sizeof(good), &q) == DNS_NOERROR && q.id == 0x1234 && q.rd &&
	    strcmp(q.spelled, "Far.test") == 0 && strcmp(q.name, "far.test") == 0 && q.qtype == DNS_TYPE_A &&
	    q.qclass == DNS_CLASS_IN && !q.bad, "a query: id, RD, the name as spelled and in lower case, type");
	for (size_t i = 0; i < LEN(bad); i++) {
		size_t hl = strlen(bad[i].hex) / 2;

		for (size_t k = 0; k < hl; k++)
			sscanf(bad[i].hex + 2 * k, "%2hhx", &pkt[k]);
		CHECK(dns_query_parse(pkt, hl, &q) == bad[i].rc, "DNS: %s -> %d", bad[i].what, bad[i].rc);
	}
	{	/* a label holding a dot, a NUL or a space is one label: the name is bad, never two labels */
		static const unsigned char dotted[] = { 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0,
			3, 'a', '.', 'b', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1 };
		static const unsigned char nul[] = { 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0,
			3, 'a', 0, 'b', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1 };

		CHECK(dns_query_parse(dotted, sizeof(dotted), &q) == DNS_NOERROR && q.bad &&
		    strcmp(q.name, "a?b.test") == 0, "a dot inside a label: bad, shown as '?' (%s)", q.name);
		CHECK(dns_query_parse(nul, sizeof(nul), &q) == DNS_NOERROR && q.bad && strlen(q.name) == 8,
		    "a NUL inside a label: bad, the name not cut short");
	}
	{	/* 253 characters is the longest name; 254 is refused */
		size_t k = 12;

		memset(pkt, 0, 12);
		pkt[5] = 1;
		for (int l = 0; l < 4; l++) {	/* 4 labels of 63: 255 characters with the dots */
			pkt[k++] = 63;
			memset(pkt + k, 'a', 63);
			k += 63;
		}
		pkt[k++] = 0;
		pkt[k++] = 0; pkt[k++] = 1; pkt[k++] = 0; pkt[k++] = 1;
		CHECK(dns_query_parse(pkt, k, &q) == DNS_FORMERR, "a 255-character name refused");
	}

	/* answers: the question echoed as asked, only the family asked, within 512 bytes */
	dns_query_parse(good, sizeof(good), &q);
	memset(a, 0, sizeof(a));
	for (int i = 0; i < 40; i++) {
		a[i].family = i == 1 ? AF_INET6 : AF_INET;
		a[i].b[0] = 10;
		a[i].b[3] = (unsigned char)i;
	}
	n = dns_reply_build(&q, DNS_NOERROR, a, 2, 30, out);
	CHECK(n == 12 + 14 + 16 && out[0] == 0x12 && out[1] == 0x34 && (out[2] & 0x80) && (out[2] & 1) &&
	    (out[3] & 0x0f) == 0 && out[5] == 1 && out[7] == 1 && memcmp(out + 12, good + 12, 14) == 0 &&
	    out[26] == 0xc0 && out[27] == 12 && out[38] == 10 && out[41] == 0,
	    "an A answer: one record (the AAAA skipped), the question as asked (%zu bytes)", n);
	n = dns_reply_build(&q, DNS_NOERROR, a, 40, 30, out);
	CHECK(n <= SBX_DNS_UDP_BYTES && out[7] == (SBX_DNS_UDP_BYTES - 26) / 16, "answers stop within 512 bytes (%u)", out[7]);
	n = dns_reply_build(&q, DNS_REFUSED, a, 2, 30, out);
	CHECK(n == 26 && (out[3] & 0x0f) == DNS_REFUSED && out[7] == 0, "REFUSED carries no answer");
	CHECK(dns_query_parse(out, n, &q) == -1, "an answer fed back to the parser is dropped (no loops)");

	{	/* the name alone: deny rules without a port refuse it, allow rules admit it at any port */
		struct policy p;
		const char *e = parse(&p, "allow-domain far.test:8000\nallow-domain *.wild.test\nallow-domain 10.1.2.3:8080\n"
		    "allow-domain localhost:3000\ndeny-domain bad.wild.test\ndeny-domain *:22\nallow-host-port 5432\n"
		    "allow-domain db.test:5432\nallow-domain far.test:443\n");
		static const struct { const char *name; bool allow; } names[] = {
			{ "far.test", true }, { "FAR.test.", true }, { "a.wild.test", true }, { "bad.wild.test", false },
			{ "wild.test", false }, { "evil.test", false }, { "a?b.test", false }, { "", false },
		};
		uint16_t ports[8];

		CHECK(e == NULL, "dns policy parses: %s", e ? e : "");
		for (size_t i = 0; i < LEN(names); i++)
			CHECK(net_decide_name(&p, names[i].name).allow == names[i].allow, "DNS: %s %s", names[i].name,
			    names[i].allow ? "allowed" : "refused");
		CHECK(strcmp(net_decide_name(&p, "evil.test").reason, "host is not on the allow list") == 0,
		    "a refused name says why");
		n = capture_ports(&p, ports, LEN(ports));
		CHECK(n == 3 && ports[0] == 80 && ports[1] == 443 && ports[2] == 8000,
		    "capture ports: 80, 443, a name's :8000; not an address's, localhost's or allow-host-port's (%zu)", n);
		CHECK(parse(&p, "allow-domain far.test:8000\nallow-domain far.test:9000\nexpose-port 8000\n") == NULL &&
		    capture_ports(&p, ports, LEN(ports)) == 3 && ports[2] == 9000,
		    "capture ports: not expose-port's (the command's server listens there)");
	}
	{	/* a name denied on every port it is allowed on is refused (never looked up), with the deny's reason;
		 * one allowed on a port no deny names is not */
		struct policy p;
		const char *e = parse(&p, "allow-domain far.test:8000\ndeny-domain far.test:8000 \"off limits\"\n"
		    "allow-domain *.wild.test:443\ndeny-domain *.in.wild.test:443\nallow-domain x.far.test:8000\n"
		    "deny-domain x.far.test:22\nallow-domain evil.test\ndeny-domain evil.test:9\n");
		struct net_verdict v;

		CHECK(e == NULL, "dns port policy parses: %s", e ? e : "");
		v = net_decide_name(&p, "far.test");
		CHECK(!v.allow && strcmp(v.reason, "off limits") == 0, "DNS: a name denied on its only allowed port: refused (%s)",
		    v.reason);
		CHECK(!net_decide_name(&p, "a.in.wild.test").allow && net_decide_name(&p, "a.wild.test").allow,
		    "DNS: a wildcard denied on the wildcard's port: refused; its siblings: allowed");
		CHECK(net_decide_name(&p, "x.far.test").allow && net_decide_name(&p, "evil.test").allow,
		    "DNS: a name denied on another port than it is allowed on: allowed");
	}
}

static void
test_live_policy(void)
{
	struct policy a, b;
	struct buf enc = { 0 }, again = { 0 };
	struct net_tables *t;
	const char *why = NULL, *err;
	struct vec on = { 0 }, off = { 0 };
	size_t believed = 0, first = 0;

	err = parse(&a, "{\"network\":{\"allowedDomains\":[\"a.test\",\"*.b.test:443\",\"[::1]:8080\"],"
	    "\"deniedDomains\":[\"c.test\",\"*:22\"],\"deniedDomainReasons\":{\"*:22\":\"no ssh\"},"
	    "\"deniedResolvedAddresses\":[\"10.0.0.0/8\",\"fc00::/7\"]},\"filesystem\":{\"allowWrite\":[\".\"]}}");
	CHECK(!err, "the policy reads: %s", S(err));
	net_tables_encode(&a.allow_domains, &a.deny_domains, &a.deny_addresses, &enc);
	t = net_tables_decode((const unsigned char *)enc.p, enc.n, &why);
	CHECK(t && t->allow.n == 3 && t->deny.n == 2 && t->addrs.n == 2, "the tables round-trip: %s", t ? "" : S(why));
	if (t) {
		const struct domrule *r0 = t->deny.v[0], *r1 = t->deny.v[1];

		CHECK(strcmp(t->allow.v[1], "*.b.test:443") == 0 && strcmp(t->allow.v[2], "[::1]:8080") == 0 &&
		    strcmp(r0->pattern, "c.test") == 0 && !r0->reason && strcmp(r1->pattern, "*:22") == 0 &&
		    strcmp(S(r1->reason), "no ssh") == 0 && strcmp(t->addrs.v[1], "fc00::/7") == 0,
		    "every entry and reason as sent");
		net_tables_encode(&t->allow, &t->deny, &t->addrs, &again);
		CHECK(again.n == enc.n && memcmp(again.p, enc.p, enc.n) == 0, "what decodes encodes back to the same bytes");
		/* the proxy decides with them as with the policy's */
		b = a;
		b.allow_domains = t->allow;
		b.deny_domains = t->deny;
		b.deny_addresses = t->addrs;
		CHECK(net_decide(&b, "x.b.test", 443).allow && !net_decide(&b, "x.b.test", 80).allow,
		    "a decoded allow list decides as the policy's");
		CHECK(strcmp(net_decide(&b, "a.test", 22).reason, "no ssh") == 0, "a decoded reason is the one given");
		net_tables_free(t);
	}
	/* every truncation, and one byte more, refused */
	for (size_t cut = 0; cut < enc.n; cut++) {
		struct net_tables *u = net_tables_decode((const unsigned char *)enc.p, cut, &why);

		if (u && !believed++)
			first = cut;
		net_tables_free(u);
	}
	CHECK(believed == 0, "every truncation of a table is refused: %zu believed, first at %zu bytes", believed, first);
	buf_putc(&enc, 'x');
	CHECK(!net_tables_decode((const unsigned char *)enc.p, enc.n, &why), "a byte past the table is refused");
	enc.n--;
	/* hostile tables: each refused whole */
	{
		static const struct { const char *what; const char *bytes; size_t n; } bad[] = {
			{ "an unclosed bracket", "N\0\0\0\1\0\4[::1\0\0\0\0\0\0\0\0", 19 },
			{ "a pattern as broad as *", "N\0\0\0\1\0\1*\0\0\0\0\0\0\0\0", 16 },
			{ "a control byte", "N\0\0\0\1\0\3a\nb\0\0\0\0\0\0\0\0", 18 },
			{ "an empty string", "N\0\0\0\1\0\0\0\0\0\0\0\0\0\0", 15 },
			{ "a count past the bytes", "N\0\1\0\0\0\1a\0\0\0\0\0\0\0\0", 16 },
			{ "a reason flag of 2", "N\0\0\0\0\0\0\0\1\0\3a.b\2\0\0\0\0", 19 },
			{ "a control byte in a reason", "N\0\0\0\0\0\0\0\1\0\3a.b\1\0\2h\n\0\0\0\0", 23 },
			{ "an address range that does not parse", "N\0\0\0\0\0\0\0\0\0\0\0\1\0\2x/", 17 },
			{ "another kind", "X\0\0\0\0\0\0\0\0\0\0\0\0", 13 },
		};

		t = net_tables_decode((const unsigned char *)"N\0\0\0\1\0\3a.b\0\0\0\0\0\0\0\0", 18, &why);
		CHECK(t != NULL, "control: a table with a good entry decodes: %s", t ? "" : S(why));
		net_tables_free(t);
		t = net_tables_decode((const unsigned char *)"N\0\0\0\0\0\0\0\1\0\3a.b\1\0\2hi\0\0\0\0", 23, &why);
		CHECK(t != NULL, "control: and one with a reason: %s", t ? "" : S(why));
		net_tables_free(t);
		for (size_t k = 0; k < LEN(bad); k++)
			CHECK(!net_tables_decode((const unsigned char *)bad[k].bytes, bad[k].n, &why),
			    "a hostile table refused: %s", bad[k].what);
	}
	free(enc.p);
	free(again.p);

	/* what an update changes: the network lists apply, the rest is named */
	err = parse(&b, "{\"network\":{\"allowedDomains\":[\"a.test\",\"*.b.test:443\",\"[::1]:8080\"],"
	    "\"deniedDomains\":[\"c.test\",\"*:22\"],\"deniedDomainReasons\":{\"*:22\":\"no ssh\"},"
	    "\"deniedResolvedAddresses\":[\"10.0.0.0/8\",\"fc00::/7\"]},\"filesystem\":{\"allowWrite\":[\".\"]}}");
	pol_changes(&a, &b, &on, &off);
	CHECK(!err && on.n == 0 && off.n == 0, "the same policy: nothing changed (%zu, %zu)", on.n, off.n);
	err = parse(&b, "{\"network\":{\"allowedDomains\":[\"a.test\"],\"deniedDomains\":[\"c.test\",\"*:22\"],"
	    "\"deniedDomainReasons\":{\"*:22\":\"no SSH here\"},\"deniedResolvedAddresses\":[\"10.0.0.0/8\",\"fc00::/7\"]},"
	    "\"filesystem\":{\"allowWrite\":[\".\",\"/tmp\"],\"denyRead\":[\"~/.ssh\"]},\"allowPty\":true}");
	pol_changes(&a, &b, &on, &off);
	CHECK(!err && on.n == 2 && strcmp(((const struct directive *)on.v[0])->name, "allow-domain") == 0 &&
	    strcmp(((const struct directive *)on.v[1])->name, "deny-domain") == 0,
	    "the allow list and a reason changed: both live (%zu)", on.n);
	/* a line's reading is released (9d): the arena is back where it was */
	{
		char *keep = astrdup("before");
		struct arena_mark m = arena_mark();
		struct arena_block *head = arena_head;
		size_t used = arena_head->used;

		for (int i = 0; i < 100; i++)
			(void)amalloc(i % 2 ? 70000 : 100);	/* past a block's size: a block of its own */
		CHECK(arena_head != head, "control: the allocations made new blocks");
		arena_release(m);
		CHECK(arena_head == head && arena_head->used == used && strcmp(keep, "before") == 0,
		    "released to the mark: the blocks after it freed, what came before kept");
	}
	CHECK(off.n == 3 && strcmp(((const struct directive *)off.v[0])->json, "filesystem.allowWrite") == 0 &&
	    strcmp(((const struct directive *)off.v[1])->json, "filesystem.denyRead") == 0 &&
	    strcmp(((const struct directive *)off.v[2])->json, "allowPty") == 0,
	    "the filesystem and allowPty named, in table order (%zu)", off.n);
}

/* The audit's attribution (sbx.c 9b): what the sandbox touched, and the
 * entries it takes for the sandbox's; the observer's pure checks (10b). */
static void
attrib_reset(void)
{
	attrib_give_up("reset");
	attrib.unsure = NULL;
	attrib.depth = 0;
}

static void
test_attribution(void)
{
	static const char *const recorded[] = { "/w/a/b/c.txt", "/w/x/.git/objects/ab/cd", "/w/r/.git",
		"/w/m/.git/hooks/pre-commit" };
	static const struct { const char *path; bool touched; } q[] = {
		{ "/w/a/b/c.txt", true },			/* itself */
		{ "/w/a/b/c.txt/x", true },			/* inside what it named */
		{ "/w/a", true },				/* something inside it */
		{ "/", true },
		{ "/w/x/.git/hooks/pre-commit", false },	/* objects written, not the hook */
		{ "/w/x/.git/config", false },
		{ "/w/x/.git", true },
		{ "/w/r/.git/hooks/post-checkout", true },	/* a repository renamed into place */
		{ "/w/m/.git/hooks/pre-commit", true },
		{ "/w/m/.git/hooks/pre-push", false },		/* the hook beside it */
		{ "/w/y/.git/hooks/pre-commit", false },
		{ "/w/a/b/c.txt2", false },			/* a name that only starts the same */
		{ "/w/a/bb", false },
	};
	struct plan pl = { 0 };
	struct obs_event e = { 0 };
	size_t i;
	char buf[64];

	attrib_reset();
	for (i = 0; i < LEN(recorded); i++)
		attrib_record(recorded[i]);
	for (i = 0; i < LEN(q); i++)
		CHECK(attrib_touched(q[i].path) == q[i].touched, "attrib_touched(%s): want %d", q[i].path, q[i].touched);

	/* past the bound, paths are kept shorter: more is the sandbox's, never less */
	for (i = 0; attrib.n <= SBX_MAX_TOUCHED; i++) {
		snprintf(buf, sizeof(buf), "/w/big/d%zu/f%zu", i / 100, i);
		attrib_record(buf);
	}
	attrib_coarsen();
	CHECK(attrib.n <= SBX_MAX_TOUCHED / 2 && attrib.depth > 0, "coarsened to %zu keys, depth %d", attrib.n, attrib.depth);
	for (i = 0; i < LEN(q); i++)
		CHECK(!q[i].touched || attrib_touched(q[i].path), "after coarsening, still touched: %s", q[i].path);
	CHECK(attrib_touched("/w/big/d3/other"), "a path beside a kept one, within a coarsened directory");

	/* the observer's records: inside a root kept, a doubt gives up */
	attrib_reset();
	vec_push(&pl.audit_roots, "/w");
	strcpy(e.target, "/w/p/.git/hooks/../hooks/pre-commit");
	attrib_event(&pl, &e);
	CHECK(attrib_touched("/w/p/.git/hooks/pre-commit"), "a path is kept lexically normalised");
	strcpy(e.target, "/elsewhere/.git/hooks/x");
	attrib_event(&pl, &e);
	CHECK(!attrib_touched("/elsewhere/.git/hooks/x"), "a path outside the writable roots is not kept");
	e.flags = (uint16_t)(OBS_F_WHERE | OU_THREADS << OBS_F_UNSURE_SHIFT);
	attrib_event(&pl, &e);
	CHECK(attrib.unsure && strstr(attrib.unsure, "threads") && !attrib.n, "a doubt: unsure, the record gone");
	attrib_reset();
	e.flags = 0;
	e.lost = 1;
	attrib_event(&pl, &e);
	CHECK(attrib.unsure != NULL, "a lost event: unsure");
	attrib_reset();

	/* a file the sandbox wrote is still its own after someone else renames it */
	{
		char dir[] = "/tmp/sbx-attrib-XXXXXX";
		int dfd;

		CHECK(mkdtemp(dir) != NULL, "mkdtemp");
		dfd = open(dir, O_RDONLY | O_DIRECTORY);
		close(openat(dfd, "hook", O_WRONLY | O_CREAT, 0755));
		close(openat(dfd, "other", O_WRONLY | O_CREAT, 0755));
		attrib_record_inode(path_join(dir, "hook"));
		CHECK(renameat(dfd, "hook", dfd, "moved") == 0, "rename");
		CHECK(attrib_touched_inode(dfd, "moved"), "the file written, renamed: still the sandbox's");
		CHECK(!attrib_touched_inode(dfd, "other"), "control: another file is not");
		unlinkat(dfd, "moved", 0);
		unlinkat(dfd, "other", 0);
		close(dfd);
		rmdir(dir);
		attrib_reset();
	}

#if SBX_LINUX
	{
		static const struct { const char *p; int fd; } alias[] = {
			{ "/dev/stdout", 1 }, { "/dev/stderr", 2 }, { "/dev/fd/7", 7 }, { "/proc/self/fd/12", 12 },
			{ "/proc/thread-self/fd/3", 3 }, { "/proc/self/fd/3/x", -1 }, { "/dev/fd/", -1 },
			{ "/proc/1/fd/3", -1 }, { "/dev/null", -1 },
		};
		static const struct { const char *p; bool plain; } proc[] = {
			{ "/proc/self/oom_score_adj", true }, { "/proc/42/comm", true }, { "/proc/sys/kernel/x", true },
			{ "/proc/self/mem", false }, { "/proc/42/task/43/mem", false }, { "/proc/self/fd/3/x", false },
			{ "/proc/self/cwd/.git/hooks/x", false }, { "/proc/self/root/w/x", false },
			{ "/proc/self/map_files/1-2", false }, { "/dev/fd/3", false },
		};
		static const struct { const char *p; bool dd; } dotdot[] = {
			{ "/a/../b", true }, { "/a/..", true }, { "/a/..b", false }, { "/a/b..", false }, { "/a/b", false },
		};

		for (i = 0; i < LEN(alias); i++)
			CHECK(obs_fd_alias(alias[i].p) == alias[i].fd, "obs_fd_alias(%s)", alias[i].p);
		for (i = 0; i < LEN(proc); i++)
			CHECK(obs_proc_plain(proc[i].p) == proc[i].plain, "obs_proc_plain(%s)", proc[i].p);
		for (i = 0; i < LEN(dotdot); i++)
			CHECK(obs_has_dotdot(dotdot[i].p) == dotdot[i].dd, "obs_has_dotdot(%s)", dotdot[i].p);
	}
#endif
}

/* ---- what an agent's settings run ------------------------------------ */

/* The paths agent_cmd_paths takes from one command, a line each: "H" held,
 * "E" protected where it exists, "U" a word with a variable. */
static const char *
agent_paths_text(const char *cmd)
{
	struct vec out = { 0 };
	struct buf b = { 0 };
	const char *s;
	size_t i;

	agent_cmd_paths(cmd, "/p", "/home/u", false, &out, 0);
	for (i = 0; i < out.n; i++) {
		const struct agent_path *ap = out.v[i];

		buf_printf(&b, "%c %s\n", "HEU"[ap->kind], ap->path);	/* ORDER: enum agent_pk */
	}
	s = astrdup(b.p ? b.p : "");
	free(b.p);
	return s;
}

/* The commands a loose reading finds, "what: command" a line each. */
static const char *
agent_loose_text(const char *text, enum agent_fmt fmt)
{
	struct vec out = { 0 };
	struct buf b = { 0 };
	const char *s;
	size_t i;

	agent_loose(text, strlen(text), fmt, &out);
	for (i = 0; i < out.n; i++) {
		const struct agent_cmd *c = out.v[i];

		buf_printf(&b, "%s: %s\n", c->what, c->cmd);
	}
	s = astrdup(b.p ? b.p : "");
	free(b.p);
	return s;
}

static void
test_agents(void)
{
	static const struct { const char *cmd, *want; } words[] = {
		{ "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/fmt.sh", "H /p/.claude/hooks/fmt.sh\n" },
		{ "${CLAUDE_PROJECT_DIR}/x.sh --flag", "H /p/x.sh\n" },
		{ "bash scripts/lint.sh", "H /p/scripts/lint.sh\n" },
		{ "python3 tools/y.py && node ./a.js | tee", "H /p/tools/y.py\nH /p/a.js\n" },
		{ "~/bin/x; $HOME/bin/y; \"${HOME}\"/bin/z", "H /home/u/bin/x\nH /home/u/bin/y\nH /home/u/bin/z\n" },
		{ "prettier --config=./c.js --write -I/usr/include", "H /p/c.js\n" },
		{ "FOO=bar/baz cmd ../up/x.sh", "H /p/bar/baz\nH /p/../up/x.sh\n" },
		{ "curl https://example.com/a; git clone git@github.com:o/r.git", "E /p/clone\n" },
		{ "echo x > /tmp/log 2>/dev/null >>out/log", "E /p/x\n" },
		{ "sh < scripts/in.sh", "H /p/scripts/in.sh\n" },
		{ "sh -c 'cd sub && ./run.sh'", "H /p/run.sh\nH /p/sub/run.sh\n" },
		/* after cd, a relative word is found below its directory too; a bare argument is a file
		 * there (held when it looks like a script); the command word is PATH's */
		{ "cd scripts && sh sub/x.sh", "H /p/sub/x.sh\nH /p/scripts/sub/x.sh\n" },
		{ "cd \"$CLAUDE_PROJECT_DIR\"/tools; python3 status.py --fast", "H /p/tools\nH /p/status.py\nH /p/tools/status.py\n" },
		{ "python3 hook.py", "H /p/hook.py\n" },
		{ "FOO=1 node fmt.mjs README.md 2>&1", "H /p/fmt.mjs\nE /p/README.md\n" },
		{ "npm run build", "E /p/run\nE /p/build\n" },
		{ "sh -c 'tools/x.sh arg'", "E /p/tools/x.sh\nE /p/arg\nE /p/tools/x.sh arg\n" },
		{ "\"$CLAUDE_PROJECT_DIR/my hooks/x.sh\"", "E /p/my\nE /p/hooks/x.sh\nE /p/my hooks/x.sh\n" },
		{ "\"$CLAUDE_PLUGIN_ROOT\"/x.sh ~other/y $1/z", "U \"$CLAUDE_PLUGIN_ROOT\"/x.sh\nU ~other/y\nU $1/z\n" },
		{ "echo $(cat scripts/a.sh) `sh b/c.sh`", "H /p/scripts/a.sh\nH /p/b/c.sh\n" },
		{ "jq -r '.tool_input.file_path | select(endswith(\".ts\"))'", "" },
		{ "sed 's/a/b/' x", "H /p/s/a/b\nE /p/x\n" },
		{ "bash -c \"bash \\\"$CLAUDE_PROJECT_DIR\\\"/h.sh; ok\"", "H /p/h.sh\n" },
		{ "", "" },
	};
	static const struct { const char *name, *text; enum agent_fmt fmt; const char *want; } loose[] = {
		{ "Codex's config.toml: notify, an MCP server's command and args, a hook; no table header, no comment",
		  "notify = [\"python3\", \"/home/u/.codex/notify.py\"]\n"
		  "model = \"x\"\n"
		  "[projects.\"/p/scripts\"]\ntrust_level = \"trusted\"\n"
		  "[mcp_servers.x]\ncommand = \"node\"\nargs = [\n  \"./srv/index.js\",\n  [\"nested\"],\n]\n"
		  "# command = \"not/this\"\n"
		  "[[hooks.Stop.hooks]]\ncommand = '''bash ~/.codex/hooks/stop.sh'''\n"
		  "mcp_servers.y = { command = \"./bin/y\", env = { A = \"b/c\" } }\n",
		  AG_TOML,
		  "notify: python3\nnotify: /home/u/.codex/notify.py\n"
		  "an MCP server's or a hook's command: node\nan MCP server's arguments: ./srv/index.js\n"
		  "an MCP server's arguments: nested\nan MCP server's or a hook's command: bash ~/.codex/hooks/stop.sh\n"
		  "an MCP server's or a hook's command: ./bin/y\n" },
		{ "a settings file the strict reader refuses (a trailing comma, a duplicate key)",
		  "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./a.sh\"},]}]},\n"
		  " \"statusLine\": {\"command\": \"./b.sh\"}, \"statusLine\": {}, \"apiKeyHelper\": \"k/h\",\n"
		  " \"mcpServers\": {\"a\": {\"args\": [\"x/y\"],}}}",
		  AG_JSON, "a \"command\" setting: ./a.sh\na \"command\" setting: ./b.sh\n"
		  "a \"apiKeyHelper\" setting: k/h\na \"args\" setting: x/y\n" },
		{ "unterminated strings end at their line", "notify = [\"a/b\ncommand = 'c/d", AG_TOML,
		  "notify: a/b\nan MCP server's or a hook's command: c/d\n" },
	};
	static const struct { const char *name, *policy, *tree, *needle, *want; } plans[] = {
		{ "a hook's and the status line's scripts read-only; a missing one held; a directory left",
		  "allow-write /p\n",
		  "f /p/.claude/hooks/fmt.sh; f /p/scripts/lint.sh; d /p/frontend; "
		  "c /p/.claude/settings.json {\"hooks\": {\"PostToolUse\": [{\"matcher\": \"Edit\", \"hooks\": ["
		  "{\"type\": \"command\", \"command\": \"\\\"$CLAUDE_PROJECT_DIR\\\"/.claude/hooks/fmt.sh\"}, "
		  "{\"type\": \"command\", \"command\": \"bash scripts/lint.sh && cd frontend/ && npm test\"}]}]}, "
		  "\"statusLine\": {\"type\": \"command\", \"command\": \"tools/status.sh\"}}",
		  "hooks|scripts|tools|frontend",
		  "ro /p/.claude/hooks\nrw /p/scripts\nro /p/scripts/lint.sh\nro /p/tools\nph d /p/tools\n" },
		{ "settings.local.json too, and a named symlink: pinned, its target denied", "allow-write /p\n",
		  "l /p/bin/tool /p/real/tool.sh; f /p/real/tool.sh; "
		  "c /p/.claude/settings.local.json {\"apiKeyHelper\": \"./bin/tool\"}", "/p/bin|/p/real",
		  "rw /p/bin\npinlink /p/bin/tool\nrw /p/real\nro /p/real/tool.sh\n" },
		{ "$HOME's settings: their scripts in $HOME, and the project's by $CLAUDE_PROJECT_DIR",
		  "allow-write /p\nallow-write /home/u/.claude\n",
		  "d /p; f /home/u/.claude/statusline.sh; d /home/u/.claude/projects; "
		  "c /home/u/.claude/settings.json {\"statusLine\": {\"command\": \"bash ~/.claude/statusline.sh\"}, "
		  "\"hooks\": {\"Stop\": [{\"hooks\": [{\"command\": \"$CLAUDE_PROJECT_DIR/tools/stop.sh\"}]}]}}",
		  "statusline|tools|/home/u/.claude",
		  "rw /home/u/.claude\nro /home/u/.claude/agents\nro /home/u/.claude/commands\nro /home/u/.claude/hooks\n"
		  "ro /home/u/.claude/plugins\nro /home/u/.claude/settings.json\nro /home/u/.claude/skills\n"
		  "ro /home/u/.claude/statusline.sh\nro /p/tools\nph d /home/u/.claude/agents\nph d /home/u/.claude/commands\n"
		  "ph d /home/u/.claude/hooks\nph d /home/u/.claude/plugins\nph d /home/u/.claude/skills\nph d /p/tools\n" },
		{ "a writable $HOME: ~/.codex's parts that run, not the whole (sessions, logs stay writable)",
		  "allow-write /home/u\nmandatory-deny-depth 3\n",
		  "d /home/u/.codex/sessions; f /home/u/.codex/notify.py; f /home/u/mcp/srv; f /home/u/.codex/auth.json; "
		  "c /home/u/.codex/hooks.json {\"hooks\": {\"Stop\": [{\"hooks\": [{\"command\": \"~/.codex/hooks/s.sh\"}]}]}}; "
		  "c /home/u/.codex/config.toml notify = [\"python3\", \"/home/u/.codex/notify.py\"]\\n"
		  "[mcp_servers.x]\\ncommand = \"~/mcp/srv\"\\n",
		  "/home/u/.codex|/mcp",
		  "rw /home/u/.codex\nro /home/u/.codex/config.toml\nro /home/u/.codex/hooks\nro /home/u/.codex/hooks.json\n"
		  "ro /home/u/.codex/notify.py\nro /home/u/.codex/plugins\nro /home/u/.codex/rules\nrw /home/u/mcp\n"
		  "ro /home/u/mcp/srv\nph d /home/u/.codex/hooks\nph d /home/u/.codex/plugins\nph d /home/u/.codex/rules\n" },
		{ "a missing ~/.codex/config.toml is held by an empty file (Codex refuses a directory)",
		  "allow-write /home/u/.codex\n", "d /home/u/.codex/sessions", "config.toml", "ro /home/u/.codex/config.toml\n"
		  "ph f /home/u/.codex/config.toml\n" },
		{ "a project's .codex read-only whole, wherever the walk finds one", "allow-write /w\n",
		  "f /w/a/.codex/config.toml; d /w/a/.codex/rules", "codex", "ro /w/a/.codex\n" },
		{ "... but never $HOME's own, found from a root above it", "allow-write /home\n",
		  "d /home/u/.codex/sessions; d /home/v/.codex", "/home/u/.codex$|/home/v/.codex$",
		  "rw /home/u/.codex\nro /home/v/.codex\n" },
		{ "a project's settings found by the walk: $CLAUDE_PROJECT_DIR is that project", "allow-write /w\n",
		  "f /w/a/x.sh; c /w/a/.claude/settings.json {\"hooks\": {\"Stop\": [{\"hooks\": [{\"command\": "
		  "\"$CLAUDE_PROJECT_DIR/x.sh\"}]}]}}", "x.sh", "ro /w/a/x.sh\n" },
		{ "a settings file that is not JSON: what it names is still protected", "allow-write /p\n",
		  "f /p/a.sh; c /p/.claude/settings.json {\"statusLine\": {\"command\": \"./a.sh\"},}", "a.sh",
		  "ro /p/a.sh\n" },
		{ "a project's .mcp.json: its servers' programs and scripts", "allow-write /p\n",
		  "f /p/mcp/server.js; f /p/bin/srv; c /p/.mcp.json {\"mcpServers\": {\"a\": {\"command\": \"node\", "
		  "\"args\": [\"./mcp/server.js\", \"--x\"]}, \"b\": {\"command\": \"./bin/srv\"}}}", "/p/mcp|/p/bin",
		  "rw /p/bin\nro /p/bin/srv\nrw /p/mcp\nro /p/mcp/server.js\n" },
		{ "a glob: what it matches now (in one directory); a glob in a directory name: nothing", "allow-write /p\n",
		  "f /p/scripts/a.sh; f /p/scripts/b.sh; f /p/scripts/c.py; f /p/x/y/z.sh; "
		  "c /p/.claude/settings.json {\"statusLine\": {\"command\": \"for f in scripts/*.sh x/*/z.sh\"}}",
		  "scripts|/p/x", "rw /p/scripts\nro /p/scripts/a.sh\nro /p/scripts/b.sh\n" },
		{ "named outside every writable root: nothing", "allow-write /p\n",
		  "f /o/x.sh; c /p/.claude/settings.json {\"statusLine\": {\"command\": \"/o/x.sh\"}}", "/o", "" },
	};
	size_t i;

	for (i = 0; i < LEN(words); i++)
		check_str(agent_paths_text(words[i].cmd), words[i].want, words[i].cmd, __LINE__);
	for (i = 0; i < LEN(loose); i++)
		check_str(agent_loose_text(loose[i].text, loose[i].fmt), loose[i].want, loose[i].name, __LINE__);
	for (i = 0; i < LEN(plans); i++) {
		const char *got = plan_text(plans[i].policy, plans[i].tree);

		if (*plans[i].needle && strncmp(got, "error", 5) != 0)
			got = plan_lines_with(got, plans[i].needle);
		check_str(got, plans[i].want, plans[i].name, __LINE__);
	}

	/* a hostile file: bounded, and said once */
	{
		struct policy p;
		struct run_paths rp = { "/p", NULL, "/tmp/t", NULL, "/home/u", NULL, { NULL }, { 0 }, NULL, NULL, { NULL } };
		struct vec facts = { 0 };
		struct err e = { 0 };
		struct fact_finder fx;
		struct buf b = { 0 };
		size_t n, warned = 0;

		buf_puts(&b, "{\"hooks\": {\"Stop\": [{\"hooks\": [");
		for (n = 0; n < 400; n++)
			buf_printf(&b, "{\"command\": \"./s%zu.sh\"}, ", n);
		buf_puts(&b, "]}]}}");
		parse(&p, "allow-write /p\n");
		fake_tree("d /p/.git");
		fake_content("/p/.claude/settings.json", astrdup(b.p));
		fake_content("/home/u/.claude/settings.json", "{\"statusLine\": {\"command\": \"./h.sh\"}}");
		free(b.p);
		fx_init(&fx, &p, &fake_disk, rp.cwd, rp.home, &facts, &e);
		CHECK(plan_resolve_rules(&fx) == 0 && plan_resolve_scan(&fx, &rp) == 0, "a hostile settings file plans");
		for (n = 0; n < fx.warnings.n; n++)
			warned += strstr(fx.warnings.v[n], "/p/.claude/settings.json") != NULL ||
			    strstr(fx.warnings.v[n], "more than 256 paths") != NULL;
		CHECK(warned == 2 && fx.warnings.n == 2, "one warning for the file, one for the bound (%zu of %zu)", warned,
		    fx.warnings.n);
		CHECK(fx.agent_paths > SBX_MAX_AGENT_PATHS, "the bound reached: %ld", fx.agent_paths);
	}
}

/* Which held call the walk below the scan's depth must come before
 * (sbx.c 10b, obs_walk_first): a path in a writable root, by any of the
 * paths the call names, even where every directory on the way is one no
 * other program reaches (here "/", the caller's root); none elsewhere
 * through such directories. */
static void
test_walk_first(void)
{
#if SBX_LINUX
	struct plan pl;
	struct obs_walk w = { &pl, false };
	struct obs_seen seen;
	struct obs_event ev[2];
	const struct obs_call *ren = NULL, *opn = NULL;

	for (size_t k = 0; k < LEN(obs_calls); k++) {
		ren = obs_calls[k].sc == SC_rename ? &obs_calls[k] : ren;
		opn = obs_calls[k].sc == SC_openat ? &obs_calls[k] : opn;
	}
	memset(&ev, 0, sizeof(ev));
	ev[0].pid = ev[1].pid = (uint32_t)getpid();
	str_copy(ev[0].target, "/sbx-unit-a", sizeof(ev[0].target));
	str_copy(ev[1].target, "/sbx-unit-b", sizeof(ev[1].target));
	memset(&seen, 0, sizeof(seen));
	seen.c = ren;
	memset(&pl, 0, sizeof(pl));
	vec_push(&pl.audit_roots, (void *)"/");
	CHECK(obs_walk_first(&w, &seen, ev, 2, OU_NONE), "a rename in a root (\"/\"): no walk first");
	memset(&pl, 0, sizeof(pl));
	vec_push(&pl.audit_roots, (void *)"/sbx-unit-b");
	CHECK(obs_walk_first(&w, &seen, ev, 2, OU_NONE), "a rename onto a root, by its second path: no walk first");
	memset(&pl, 0, sizeof(pl));
	vec_push(&pl.audit_roots, (void *)"/sbx-unit-root");
	seen.c = opn;
	CHECK(!obs_walk_first(&w, &seen, ev, 1, OU_NONE), "control: an open elsewhere, in \"/\": a walk first");
	CHECK(obs_walk_first(&w, &seen, ev, 1, OU_THREADS), "an open elsewhere the observer cannot vouch for: no walk first");
#endif
}

/* Every test function, by name: `./tests/unit NAME...` runs those whose
 * name contains one of the NAMEs (tests/mutants.sh runs a few so). */
/* The scan cache's view (sbx.c 5c) gives the walk what a real listing
 * gives, kept names only: after a change of any kind, a forged mtime, a
 * damaged or stale file. sc_list: the kept names below dir, one line each. */
static __attribute__((unused)) void
sc_list(const struct disk *dk, void *parent, const char *name, const char *path, struct buf *out, int depth)
{
	void *dh = dk->ops->opendir(dk->ctx, parent, name);
	const char *n;
	enum fkind k;
	struct vec subs = { 0 };

	if (!dh)
		return;
	while (dk->ops->readdir(dk->ctx, dh, &n, &k) == 1) {
		if (!sc_kept(n, k))
			continue;
		buf_printf(out, "%s/%s %d\n", path, n, (int)k);
		if (k == FK_DIR && depth < 8)
			vec_push(&subs, astrdup(n));
	}
	for (size_t i = 0; i < subs.n; i++)
		sc_list(dk, dh, subs.v[i], path_join(path, subs.v[i]), out, depth + 1);
	dk->ops->closedir(dk->ctx, dh);
}

static void
test_scan_cache(void)
{
#if SBX_SCAN_CACHE
	char dir[] = "/tmp/sbx-unit-sc-XXXXXX";
	struct disk real = { &real_disk_ops, NULL };
	struct scan_cache sc;
	struct disk view = { &sc_disk_ops, &sc };
	struct buf want = { 0 }, got = { 0 };
	const char *cache;
	struct timespec t[2];
	struct stat st;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	cache = aprintf("%s/cache", dir);
	mkdir(aprintf("%s/t", dir), 0700);
	mkdir(aprintf("%s/t/a", dir), 0700);
	mkdir(aprintf("%s/t/a/b", dir), 0700);
	mkdir(aprintf("%s/t/c", dir), 0700);
	close(open(aprintf("%s/t/a/b/.bashrc", dir), O_CREAT | O_WRONLY, 0600));
	close(open(aprintf("%s/t/a/plain", dir), O_CREAT | O_WRONLY, 0600));
	usleep(60000);	/* older than the coarse clock's margin */
#define SC_WALK(out) do { (out)->n = 0; sc_open(&sc, &real, cache); \
	sc_list(&view, NULL, aprintf("%s/t", dir), "", (out), 0); sc_save(&sc, true); } while (0)
#define SC_REAL(out) do { (out)->n = 0; sc_list(&real, NULL, aprintf("%s/t", dir), "", (out), 0); } while (0)
	SC_WALK(&got);
	SC_REAL(&want);
	CHECK(sc.served == 0 && sc.listed == 4, "first walk: every directory listed (%ld, %ld)", sc.listed, sc.served);
	CHECK(got.n == want.n && memcmp(got.p, want.p, got.n) == 0, "first walk: the real listing");
	SC_WALK(&got);
	CHECK(sc.served == 4 && sc.listed == 0, "second walk: every directory from the cache (%ld, %ld)", sc.listed,
	    sc.served);
	CHECK(got.n == want.n && memcmp(got.p, want.p, got.n) == 0, "second walk: the same listing");
	/* a new name, the directory's mtime set back to the very nanosecond */
	CHECK(lstat(aprintf("%s/t/c", dir), &st) == 0, "lstat");
	close(open(aprintf("%s/t/c/.zshrc", dir), O_CREAT | O_WRONLY, 0600));
	t[0] = st.st_atim;
	t[1] = st.st_mtim;
	CHECK(utimensat(AT_FDCWD, aprintf("%s/t/c", dir), t, AT_SYMLINK_NOFOLLOW) == 0, "utimensat");
	SC_WALK(&got);
	SC_REAL(&want);
	CHECK(strstr(got.p, "/c/.zshrc") != NULL, "a name added under a forged mtime: not seen");
	CHECK(got.n == want.n && memcmp(got.p, want.p, got.n) == 0, "after the change: the real listing");
	/* a directory replaced by a file, and one renamed */
	CHECK(rmdir(aprintf("%s/t/a/b/.bashrc", dir)) < 0 && unlink(aprintf("%s/t/a/b/.bashrc", dir)) == 0 &&
	    rmdir(aprintf("%s/t/a/b", dir)) == 0, "setup: rm b");
	close(open(aprintf("%s/t/a/b", dir), O_CREAT | O_WRONLY, 0600));
	CHECK(rename(aprintf("%s/t/c", dir), aprintf("%s/t/d", dir)) == 0, "rename");
	usleep(60000);
	SC_WALK(&got);
	SC_REAL(&want);
	CHECK(got.n == want.n && memcmp(got.p, want.p, got.n) == 0, "after a replace and a rename: the real listing");
	/* damaged files: every byte after the head flipped, cut short, garbage */
	for (int how = 0; how < 3; how++) {
		struct buf b = { 0 };
		int fd;

		CHECK(read_file(cache, 64 << 20, &b) == 0 && b.n > 24, "read the cache");
		if (how == 0)
			for (size_t i = 24; i < b.n; i++)
				b.p[i] ^= (char)0xff;
		else if (how == 1)
			b.n = 100;
		else
			for (size_t i = 0; i < b.n; i++)
				b.p[i] = (char)(i * 7919 % 251);
		fd = open(cache, O_WRONLY | O_TRUNC);
		CHECK(fd >= 0 && write_all(fd, b.p, b.n) == 0 && close(fd) == 0, "write the damaged cache");
		free(b.p);
		SC_WALK(&got);
		CHECK(sc.served == 0, "damaged (%d): something taken from it", how);
		CHECK(got.n == want.n && memcmp(got.p, want.p, got.n) == 0, "damaged (%d): the real listing", how);
	}
	/* a head whose sizes add up, with offsets at the edge of 32 bits: a
	 * name and a child just past the names, a parent past the records */
	{
		struct { struct sc_head h; struct sc_rec r[2]; uint32_t kid[1], slot[4]; char names[2]; }
		    f = { { SBX_SCAN_CACHE_MAGIC, 2, 1, 2, 4 }, { { 0 }, { 0 } }, { UINT32_MAX }, { 1, 2, 1, 2 },
		    { 1, 0 } };
		int fd;

		f.r[0].name = UINT32_MAX;
		f.r[0].trusted = 1;
		f.r[0].nkids = 1;
		f.r[1].parent = 7;
		f.r[1].kid0 = UINT32_MAX;
		f.r[1].nkids = 2;
		f.r[1].trusted = 1;
		fd = open(cache, O_WRONLY | O_TRUNC);
		CHECK(fd >= 0 && write_all(fd, &f, sizeof(f)) == 0 && close(fd) == 0, "write the edge cache");
		SC_WALK(&got);
		CHECK(sc.served == 0, "edge offsets: something taken from the file");
		CHECK(got.n == want.n && memcmp(got.p, want.p, got.n) == 0, "edge offsets: the real listing");
	}
	/* the file's bound (long names pass it before the directories do):
	 * another root's tree that does not fit is left out, this run's kept;
	 * this run's own past it: nothing written. Listings stay the real ones */
	{
		const char *t2 = aprintf("%s/t2", dir);
		struct stat one, two;
		struct buf b2 = { 0 };
		long fits;

		mkdir(t2, 0700);
		for (int k = 0; k < 8; k++)
			mkdir(aprintf("%s/%0200d", t2, k), 0700);
		usleep(60000);
		unlink(cache);
		SC_WALK(&got);
		CHECK(stat(cache, &one) == 0, "the bound: a file of t alone");
		sc_open(&sc, &real, cache);	/* t2's tree added to it */
		sc_list(&view, NULL, t2, "", &b2, 0);
		sc_save(&sc, true);
		CHECK(stat(cache, &two) == 0 && two.st_size > one.st_size + 1600,
		    "the bound: t2's tree kept");
		for (int fit = 1; fit >= 0; fit--) {
			/* a listing changed: the file is written */
			CHECK(mkdir(aprintf("%s/t/n%d", dir, fit), 0700) == 0, "mkdir");
			usleep(60000);
			sc_open(&sc, &real, cache);
			/* + what sc_save counts for the slots (16 bytes a record) */
			sc.max_bytes = (size_t)(fit ? two.st_size : one.st_size) + 400;
			sc_list(&view, NULL, aprintf("%s/t", dir), "", &got, 0);
			sc_save(&sc, true);
			b2.n = 0;
			sc_open(&sc, &real, cache);
			sc_list(&view, NULL, t2, "", &b2, 0);
			fits = sc.served;
			sc_save(&sc, false);
			CHECK(fit ? fits == 9 : fits == 0, "the bound (t2 %s): %ld of its 9 read",
			    fit ? "fits" : "not", fits);
		}
		CHECK(stat(cache, &one) == 0, "the bound: the file");
		CHECK(mkdir(aprintf("%s/t/n2", dir), 0700) == 0, "mkdir");
		usleep(60000);
		sc_open(&sc, &real, cache);
		sc.max_bytes = 256;
		got.n = 0;
		sc_list(&view, NULL, aprintf("%s/t", dir), "", &got, 0);
		sc_save(&sc, true);
		CHECK(stat(cache, &two) == 0 && two.st_ino == one.st_ino,
		    "this run past the bound: a file written");
		SC_REAL(&want);
		CHECK(got.n == want.n && memcmp(got.p, want.p, got.n) == 0,
		    "past the bound: the real listing");
		free(b2.p);
	}
	/* a walk that stops above a depth (the scan before the command,
	 * scan_deep) keeps the records below it that its listings still have,
	 * for the walk at the sandbox's first call; a name gone is dropped */
	{
		struct buf top = { 0 };
		void *dh;
		const char *n;
		enum fkind k;

		SC_WALK(&got);
		close(open(aprintf("%s/t/newfile", dir), O_CREAT | O_WRONLY, 0600));
		CHECK(rmdir(aprintf("%s/t/n2", dir)) == 0, "rmdir n2");
		usleep(60000);
		sc_open(&sc, &real, cache);
		CHECK((dh = view.ops->opendir(view.ctx, NULL, aprintf("%s/t", dir))) != NULL, "opendir");
		while (dh && view.ops->readdir(view.ctx, dh, &n, &k) == 1)
			buf_printf(&top, "%s\n", n);
		if (dh)
			view.ops->closedir(view.ctx, dh);
		sc_save(&sc, true);
		CHECK(sc.listed == 1 && top.n > 0, "the top alone: listed again (%ld)", sc.listed);
		SC_WALK(&got);
		SC_REAL(&want);
		CHECK(sc.listed == 0 && sc.served == 5,
		    "below the top: the records kept (listed %ld, served %ld of 5)", sc.listed, sc.served);
		CHECK(got.n == want.n && memcmp(got.p, want.p, got.n) == 0, "below the top: the real listing");
		free(top.p);
	}
	/* a cache others can write: not read */
	SC_WALK(&got);
	chmod(cache, 0666);
	SC_WALK(&got);
	CHECK(sc.served == 0, "a cache others can write was read");
#undef SC_WALK
#undef SC_REAL
	free(want.p);
	free(got.p);
	rm_tree(dir);
#endif
}

/* Many paths lstat'ed at once (sbx.c 2.3): each result is what one lstat
 * of that path says, on as many threads as the list allows; and the scan
 * cache's walk with its records' lstats taken so (sc_prefetch) gives the
 * real listing after every kind of change, as the walk without does. */
static void
test_stat_at_once(void)
{
#if SBX_SCAN_CACHE
	char dir[] = "/tmp/sbx-unit-st-XXXXXX";
	struct disk real = { &real_disk_ops, NULL };
	struct scan_cache sc;
	struct disk view = { &sc_disk_ops, &sc };
	struct buf want = { 0 }, got = { 0 };
	struct vec roots = { 0 };
	enum { N = 3 * SBX_STAT_PER_THREAD + 7 };
	const char **paths = calloc(N, sizeof(*paths));
	struct path_stat *ps = calloc(N, sizeof(*ps));
	const char *cache, *t;
	struct timespec tm[2];
	struct stat st;
	int bad = 0, i;

	if (!mkdtemp(dir) || !paths || !ps) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	t = aprintf("%s/t", dir);
	cache = aprintf("%s/cache", dir);
	mkdir(t, 0700);
	for (i = 0; i < N; i++) {	/* directories, files, names not there, no path */
		paths[i] = i % 97 == 0 ? NULL : aprintf("%s/%c%04d", t, "dfm"[i % 3], i);
		if (paths[i] && i % 3 == 0)
			mkdir(paths[i], 0700);
		else if (paths[i] && i % 3 == 1)
			close(open(paths[i], O_CREAT | O_WRONLY, 0600));
	}
	lstat_all(paths, N, ps);
	for (i = 0; i < N; i++) {
		bool there = paths[i] && lstat(paths[i], &st) == 0;

		bad += !paths[i] ? ps[i].state != 0 : !there ? ps[i].state != -1 :
		    ps[i].state != 1 || ps[i].dev != (uint64_t)st.st_dev || ps[i].ino != (uint64_t)st.st_ino ||
		    ps[i].mode != (uint32_t)st.st_mode || ps[i].ctime != sc_ns(&st.st_ctim) ||
		    ps[i].mtime != sc_ns(&st.st_mtim);
	}
	CHECK(bad == 0, "lstat_all: %d of %d results not lstat's", bad, N);
	/* the walk, its lstats taken at once: a tree of more directories than
	 * one thread's share, some of them deep */
	for (i = 0; i < N; i += 3)
		if (paths[i] && i % 2 == 0)
			mkdir(aprintf("%s/sub", paths[i]), 0700);
	mkdir(aprintf("%s/d0018/sub/deep", t), 0700);
	close(open(aprintf("%s/d0018/sub/deep/.bashrc", t), O_CREAT | O_WRONLY, 0600));
	usleep(60000);	/* older than the coarse clock's margin */
	vec_push(&roots, (void *)t);
#define ST_WALK(out, at_once) do { (out)->n = 0; sc_open(&sc, &real, cache); \
	if (at_once) sc_prefetch(&sc, &roots); \
	CHECK(!(at_once) || sc.pre, "the walk's lstats were not taken at once"); \
	sc_list(&view, NULL, t, "", (out), 0); sc_save(&sc, true); } while (0)
	ST_WALK(&got, false);
	sc_list(&real, NULL, t, "", &want, 0);
	CHECK(got.n == want.n && memcmp(got.p, want.p, got.n) == 0, "the first walk: the real listing");
	ST_WALK(&got, true);
	CHECK(sc.listed == 0 && sc.served > N / 3, "the second walk: every directory from the cache "
	    "(listed %ld, served %ld)", sc.listed, sc.served);
	CHECK(got.n == want.n && memcmp(got.p, want.p, got.n) == 0, "the second walk: the real listing");
	/* a name added deep, its directory's mtime set back; a directory
	 * replaced by a file; one renamed; one made: each seen */
	CHECK(lstat(aprintf("%s/d0018/sub/deep", t), &st) == 0, "lstat");
	close(open(aprintf("%s/d0018/sub/deep/.zshrc", t), O_CREAT | O_WRONLY, 0600));
	tm[0] = st.st_atim;
	tm[1] = st.st_mtim;
	CHECK(utimensat(AT_FDCWD, aprintf("%s/d0018/sub/deep", t), tm, AT_SYMLINK_NOFOLLOW) == 0, "utimensat");
	CHECK(rmdir(aprintf("%s/d0012/sub", t)) == 0, "rmdir");
	close(open(aprintf("%s/d0012/sub", t), O_CREAT | O_WRONLY, 0600));
	CHECK(rename(aprintf("%s/d0006", t), aprintf("%s/d0006.moved", t)) == 0, "rename");
	mkdir(aprintf("%s/d0009/.git", t), 0700);
	ST_WALK(&got, true);
	want.n = 0;
	sc_list(&real, NULL, t, "", &want, 0);
	CHECK(strstr(got.p, "/d0018/sub/deep/.zshrc") != NULL, "a name added under a forged mtime: not seen");
	CHECK(strstr(got.p, "/d0009/.git") != NULL, "a .git made: not seen");
	CHECK(got.n == want.n && memcmp(got.p, want.p, got.n) == 0, "after the changes: the real listing");
	/* each lstat taken at once is used once: a second way to the same
	 * record in one scan (the root walked again) takes one of its own,
	 * and sees a name made in between */
	{
		void *dh;

		usleep(60000);
		ST_WALK(&got, false);	/* the changed directories listed again, trusted now */
		sc_open(&sc, &real, cache);
		sc_prefetch(&sc, &roots);
		CHECK(sc.pre != NULL, "once: the lstats were not taken at once");
		dh = view.ops->opendir(view.ctx, NULL, t);
		CHECK(dh && sc.served == 1, "once: the root not from the cache (served %ld)", sc.served);
		if (dh)
			view.ops->closedir(view.ctx, dh);
		close(open(aprintf("%s/.bashrc", t), O_CREAT | O_WRONLY, 0600));
		got.n = 0;
		sc_list(&view, NULL, t, "", &got, 0);
		CHECK(got.p && (strncmp(got.p, "/.bashrc ", 9) == 0 || strstr(got.p, "\n/.bashrc ") != NULL),
		    "once: a name made after the first way here, not seen by the second");
		sc_save(&sc, false);
		unlink(aprintf("%s/.bashrc", t));
	}
#undef ST_WALK
	/* threads that cannot start (a pids limit, RLIMIT_NPROC: clone refused
	 * with EAGAIN, here by a seccomp filter), an affinity of one CPU, a
	 * path past PATH_MAX, an empty list: every result still lstat's, in a
	 * child each (the filter and the affinity stay there) */
#if SBX_LINUX && (defined(__x86_64__) || defined(__aarch64__))
	for (int how = 0; how < 2; how++) {
		int status = -1;
		pid_t pid;

		fflush(NULL);
		if ((pid = fork()) == 0) {
			/* clone and clone3: EAGAIN (cBPF: ld nr; jeq; jeq; ret allow; ret errno) */
			struct { unsigned short code; unsigned char jt, jf; unsigned int k; } f[] = {
				{ 0x20, 0, 0, 0 }, { 0x15, 2, 0, SYS_clone }, { 0x15, 1, 0, 435 },
				{ 0x06, 0, 0, 0x7fff0000u }, { 0x06, 0, 0, 0x00050000u | EAGAIN },
			};
			struct { unsigned short len; void *filter; } prog = { LEN(f), f };
			char *lng = calloc(1, PATH_MAX + 64);
			const char *one[1];
			pthread_t th;
			cpu_set_t set;
			int bad2 = 0;

			if (how == 0) {
				if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SYS_seccomp, 1, 0, &prog) < 0)
					_exit(5);	/* no filter here (qemu-user emulates none): nothing to prove */
				if (pthread_create(&th, NULL, lstat_worker, NULL) == 0)
					_exit(3);	/* the filter does not refuse a thread: proves nothing */
			} else {
				CPU_ZERO(&set);
				CPU_SET(sched_getcpu() > 0 ? sched_getcpu() : 0, &set);
				if (sched_setaffinity(0, sizeof(set), &set) < 0 || cores_usable() != 1)
					_exit(4);
			}
			memset(ps, 0x55, N * sizeof(*ps));
			lstat_all(paths, N, ps);
			for (i = 0; i < N; i++) {
				bool there = paths[i] && lstat(paths[i], &st) == 0;

				bad2 += !paths[i] ? ps[i].state != 0 : !there ? ps[i].state != -1 :
				    ps[i].state != 1 || ps[i].ino != (uint64_t)st.st_ino ||
				    ps[i].ctime != sc_ns(&st.st_ctim);
			}
			memset(lng, 'a', PATH_MAX + 10);
			lng[0] = '/';
			one[0] = lng;
			lstat_all(one, 1, ps);
			bad2 += ps[0].state != -1;
			lstat_all(NULL, 0, NULL);
			_exit(bad2 ? 1 : 0);
		}
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork");
		if (how == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 5)
			continue;	/* the unit tests natively install it: this runs there */
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "lstat_all %s: status %#x (1: a result not lstat's; 3-4: the setup)",
		    how ? "on one CPU" : "with no thread starting", status);
	}
#endif
	/* a damaged file: a record's name offset at the edge of 32 bits
	 * (name + 1 wraps to 0), the prefetch's own reading of the records */
	{
		struct sc_head h = { SBX_SCAN_CACHE_MAGIC, 2, 0, 4, 4 };
		struct sc_rec r[2] = { { 0 }, { 0 } };
		uint32_t slot[4] = { 0 };
		struct buf f = { 0 };
		int fd;

		r[0].name = UINT32_MAX;
		r[0].trusted = 1;
		r[1].parent = 1;
		r[1].trusted = 1;
		buf_putn(&f, (const char *)&h, sizeof(h));	/* packed: the file's own sizes */
		buf_putn(&f, (const char *)r, sizeof(r));
		buf_putn(&f, (const char *)slot, sizeof(slot));
		buf_putn(&f, "\1x\0\0", 4);
		fd = open(cache, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0 && write_all(fd, f.p, f.n) == 0 && close(fd) == 0, "write the edge cache");
		free(f.p);
		sc_open(&sc, &real, cache);
		CHECK(sc.old.nrec == 2, "the edge cache: loaded (%u records)", sc.old.nrec);
		sc_prefetch(&sc, &roots);	/* out of bounds: a crash */
		CHECK(sc.pre == NULL, "the edge cache: records prefetched");
		sc_save(&sc, false);
	}
	/* a damaged file: a chain of records each below the one before, with
	 * long names, deeper than any walk goes (256) and far past PATH_MAX:
	 * the whole paths of its records are not built without a bound (a
	 * path a record longer than PATH_MAX, the file's whole chain squared:
	 * gigabytes; none past PATH_MAX asked); in a child held to 1 GiB of
	 * address space */
	{
		enum { K = 8000, L = 100 };
		struct sc_head h = { SBX_SCAN_CACHE_MAGIC, K, 0, 0, 16384 };
		struct buf b = { 0 }, names = { 0 };
		struct sc_rec *r = calloc(K, sizeof(*r));
		int fd, status = -1;
		pid_t pid;

		for (i = 0; i < K; i++) {
			r[i].name = (uint32_t)names.n;
			r[i].parent = (uint32_t)i;	/* the record before, + 1; the first a root */
			r[i].trusted = 1;
			buf_putc(&names, (char)FK_DIR);
			if (i == 0)
				buf_puts(&names, t);
			else
				for (int c = 0; c < L; c++)
					buf_putc(&names, 'a');
			buf_putc(&names, '\0');
		}
		h.nname = (uint32_t)names.n;
		buf_putn(&b, (const char *)&h, sizeof(h));
		buf_putn(&b, (const char *)r, K * sizeof(*r));
		for (i = 0; i < 16384; i++)
			buf_putn(&b, "\0\0\0\0", 4);
		buf_putn(&b, names.p, names.n);
		fd = open(cache, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0 && write_all(fd, b.p, b.n) == 0 && close(fd) == 0, "write the chain cache");
		fflush(NULL);
		if ((pid = fork()) == 0) {
			struct rlimit rl = { 1UL << 30, 1UL << 30 };

			setrlimit(RLIMIT_AS, &rl);
			sc_open(&sc, &real, cache);
			if (sc.old.nrec != K)
				_exit(3);
			sc_prefetch(&sc, &roots);
			/* past PATH_MAX after 40 records: fewer than a thread's
			 * share asked (under the 64 MiB bound alone, 1,100) */
			_exit(sc.pre ? 4 : 0);
		}
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork");
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "the chain cache: the prefetch died, failed, or asked paths past PATH_MAX (status %#x)", status);
		free(r);
		free(b.p);
		free(names.p);
	}
	/* a damaged file: one name of 8 MiB, every record below the root
	 * named by it: each read to its end was 1.6 TB read, half a minute
	 * here (a PATH_MAX of it decides); in a child, given 3 seconds */
	{
		enum { K = 200000, NAME = 8 << 20, SLOTS = 262144 };
		struct sc_head h = { SBX_SCAN_CACHE_MAGIC, K, 0, 0, SLOTS };
		struct buf b = { 0 };
		struct sc_rec *r = calloc(K, sizeof(*r));
		uint32_t big = (uint32_t)strlen(t) + 2;	/* after the root's kind byte, name, NUL */
		char *names = calloc(1, big + 1 + NAME + 1);
		int fd, status = -1;
		pid_t pid;

		names[0] = (char)FK_DIR;
		memcpy(names + 1, t, strlen(t));
		names[big] = (char)FK_DIR;
		memset(names + big + 1, 'n', NAME);
		for (i = 0; i < K; i++) {
			r[i].name = i ? big : 0;
			r[i].parent = i ? 1 : 0;
			r[i].trusted = 1;
		}
		h.nname = big + 1 + NAME + 1;
		buf_putn(&b, (const char *)&h, sizeof(h));
		buf_putn(&b, (const char *)r, K * sizeof(*r));
		for (i = 0; i < SLOTS; i++)
			buf_putn(&b, "\0\0\0\0", 4);
		buf_putn(&b, names, h.nname);
		fd = open(cache, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0 && write_all(fd, b.p, b.n) == 0 && close(fd) == 0, "write the long-name cache");
		fflush(NULL);
		if ((pid = fork()) == 0) {
			alarm(3);
			sc_open(&sc, &real, cache);
			if (sc.old.nrec != K)
				_exit(3);
			sc_prefetch(&sc, &roots);
			sc_save(&sc, false);
			_exit(0);
		}
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork");
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "the long-name cache: the prefetch did not end in 3 s, or failed (status %#x)", status);
		free(r);
		free(names);
		free(b.p);
	}
	free(want.p);
	free(got.p);
	free(paths);
	free(ps);
	rm_tree(dir);
#endif
}

static const struct { const char *name; void (*fn)(void); } unit_tests[] = {
	{ "map_matches_banners", test_map_matches_banners },
	{ "line_format", test_line_format },
	{ "scan_cache", test_scan_cache },
	{ "stat_at_once", test_stat_at_once },
	{ "walk_first", test_walk_first },
	{ "json", test_json },
	{ "patterns", test_patterns },
	{ "globs_and_paths", test_globs_and_paths },
	{ "globs_srt", test_globs_srt },
	{ "plan", test_plan },
	{ "planted_links", test_planted_links },
	{ "gitcfg", test_gitcfg },
	{ "agents", test_agents },
	{ "gitcfg_resync", test_gitcfg_resync },
	{ "argv_goldens", test_argv_goldens },
	{ "seatbelt_escape", test_seatbelt_escape },
	{ "seatbelt_regex", test_seatbelt_regex },
	{ "seatbelt_patterns", test_seatbelt_patterns },
	{ "seatbelt_goldens", test_seatbelt_goldens },
	{ "sblog", test_sblog },
	{ "sblog_golden", test_sblog_golden },
	{ "parent_proxy", test_parent_proxy },
	{ "mitm_proxy", test_mitm_proxy },
	{ "request_knobs", test_request_knobs },
	{ "print_argv_is_the_run", test_print_argv_is_the_run },
	{ "violations_report", test_violations_report },
	{ "bpf", test_bpf },
	{ "network_decisions", test_network_decisions },
	{ "proxy_parsers", test_proxy_parsers },
	{ "hosts_file", test_hosts_file },
	{ "decisions", test_decisions },
	{ "policy_hardening", test_policy_hardening },
	{ "host_edges", test_host_edges },
	{ "dir_stream", test_dir_stream },
	{ "ph_recover", test_ph_recover },
	{ "observer", test_observer },
	{ "attribution", test_attribution },
	{ "srt_cli", test_srt_cli },
	{ "live_policy", test_live_policy },
	{ "dns_stub", test_dns_stub },
#if SBX_LINUX
	{ "sessions", test_sessions },
	{ "expose_refusal", test_expose_refusal },
#endif
};

int
main(int argc, char **argv)
{
	for (size_t i = 0; i < LEN(unit_tests); i++) {
		bool picked = argc < 2;

		for (int k = 1; k < argc; k++)
			picked |= strstr(unit_tests[i].name, argv[k]) != NULL;
		if (picked)
			unit_tests[i].fn();
	}
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
