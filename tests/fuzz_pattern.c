/* tests/fuzz_pattern.c: fuzz the domain-pattern validator, the CIDR parser
 * and (section 4.4/4.5, see the marked spot below) host canonicalisation
 * and pattern matching.
 *
 * The input is one NUL-terminated string (inputs with an embedded NUL are
 * skipped). If it holds a '\n', the part before is also used as a pattern
 * and the part after as a request host.
 *
 * Checks, beyond the sanitizers:
 *   - match_check_pattern sets why on refusal; whatever an allow list
 *     accepts, a deny list accepts too (deny lists only add "*");
 *   - match_parse_cidr gives a family and a prefix in range, and the address
 *     written back as text with its prefix reads the same;
 *   - hosts (FUZZ HOSTS below): the canonical form of a valid host is valid;
 *     a valid pattern matches the host it names (at its port, and at any
 *     port when it has none), a wildcard a name below its base but never
 *     the base; net_decide agrees with match_domain, refuses malformed
 *     hosts, and a deny wins over an allow of the same pattern.
 *
 *   make fuzz && ./tests/fuzz_pattern.bin -max_len=4096 CORPUS_COPY/
 *   cc -O1 -o x tests/fuzz_pattern.c && ./x tests/corpus/pattern/     (replay)
 */
#define main sbx_main
#include "../sbx.c"
#undef main

#define FUZZ_MAX_INPUT	(64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *fuzz_input;

static void __attribute__((noreturn, format(printf, 1, 2)))
fuzz_fail(const char *fmt, ...)
{
	va_list ap;
	const unsigned char *p;

	fprintf(stderr, "fuzz_pattern: invariant broken: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n--- input (C string) ---\n\"", stderr);
	for (p = (const unsigned char *)fuzz_input; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(stderr, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", stderr);
		else if (*p < 0x20 || *p >= 0x7f)
			fprintf(stderr, "\\x%02x\"\"", *p);
		else
			fputc(*p, stderr);
	}
	fputs("\"\n", stderr);
	abort();
}

static void
fuzz_pattern_checks(const char *s)
{
	const char *why_allow = NULL, *why_deny = NULL;
	int ok_allow = match_check_pattern(s, false, &why_allow);
	int ok_deny = match_check_pattern(s, true, &why_deny);

	if ((ok_allow != 0 && ok_allow != -1) || (ok_deny != 0 && ok_deny != -1))
		fuzz_fail("match_check_pattern returned %d / %d", ok_allow, ok_deny);
	if ((ok_allow < 0 && (!why_allow || !*why_allow)) || (ok_deny < 0 && (!why_deny || !*why_deny)))
		fuzz_fail("match_check_pattern refused without a reason");
	if (ok_allow == 0 && ok_deny < 0)
		fuzz_fail("an allow list accepts the pattern, a deny list refuses it");
}

static void
fuzz_cidr_checks(const char *s)
{
	int fam = -1, prefix = -1, fam2 = -1, prefix2 = -1;
	unsigned char a[16], a2[16];
	char text[INET6_ADDRSTRLEN + 8];

	memset(a, 0, sizeof(a));
	if (match_parse_cidr(s, &fam, a, &prefix) < 0)
		return;
	if (fam != AF_INET && fam != AF_INET6)
		fuzz_fail("match_parse_cidr: family %d", fam);
	if (prefix < 0 || prefix > (fam == AF_INET ? 32 : 128))
		fuzz_fail("match_parse_cidr: prefix %d out of range", prefix);
	if (!inet_ntop(fam, a, text, INET6_ADDRSTRLEN))
		fuzz_fail("match_parse_cidr: an address inet_ntop cannot write");
	snprintf(text + strlen(text), 8, "/%d", prefix);
	memset(a2, 0, sizeof(a2));
	if (match_parse_cidr(text, &fam2, a2, &prefix2) < 0)
		fuzz_fail("match_parse_cidr: its own result written back (%s) is refused", text);
	if (fam2 != fam || prefix2 != prefix || memcmp(a, a2, fam == AF_INET ? 4 : 16) != 0)
		fuzz_fail("match_parse_cidr: its own result written back (%s) reads differently", text);
}

/* ====================================================================
 * FUZZ HOSTS: section 4.4/4.5 (host validity, the canonical form, pattern
 * matching, the decision). These call match_host_valid,
 * match_canonical_host, match_domain and net_decide as they are in sbx.c
 * today; build with -DFUZZ_NO_HOSTS to leave them out if they change.
 * New host/request parsers go here too.
 * ==================================================================== */
#ifndef FUZZ_NO_HOSTS

/* A canonical host: at most SBX_MAX_HOST_BYTES, plus room (as net_decide). */
#define FUZZ_CANON	(SBX_MAX_HOST_BYTES + 64)

static void
fuzz_host_checks(const char *h)
{
	char canon[FUZZ_CANON];
	bool valid = match_host_valid(h);

	memset(canon, 0x55, sizeof(canon));
	if (match_canonical_host(h, canon, sizeof(canon)) < 0)
		return;
	if (!memchr(canon, '\0', sizeof(canon)))
		fuzz_fail("match_canonical_host: no terminator");
	if (valid && !match_host_valid(canon))
		fuzz_fail("match_canonical_host: a valid host's canonical form \"%s\" is not valid", canon);
}

/* A pattern and a request host: the decision is consistent with the match,
 * and deny wins. pat must be a pattern match_check_pattern accepted. expect:
 * 1 the (valid) host must match, 0 it must not, -1 no expectation. */
static void
fuzz_decide(const char *pat, bool allow_ok, bool deny_ok, const char *host, int port, int expect)
{
	char canon[FUZZ_CANON];
	struct policy p;
	struct net_verdict v;
	struct domrule r = { pat, NULL };
	bool m;

	if (!match_host_valid(host) || match_canonical_host(host, canon, sizeof(canon)) < 0) {
		if (allow_ok) {
			pol_init(&p);
			vec_push(&p.allow_domains, (void *)pat);
			if (net_decide(&p, host, port).allow)
				fuzz_fail("net_decide allowed a malformed host \"%s\"", host);
		}
		return;
	}
	m = match_domain(canon, port, pat);
	if (expect >= 0 && m != (expect == 1))
		fuzz_fail("pattern %s %s host %s (canonical %s) port %d", pat, m ? "matches" : "does not match",
		    host, canon, port);
	if (allow_ok) {
		pol_init(&p);
		vec_push(&p.allow_domains, (void *)pat);
		v = net_decide(&p, host, port);
		if (v.allow != m)
			fuzz_fail("net_decide (%d) disagrees with match_domain (%d) on %s port %d, pattern %s", v.allow,
			    m, host, port, pat);
	}
	if (deny_ok) {
		pol_init(&p);
		vec_push(&p.deny_domains, &r);
		if (allow_ok)
			vec_push(&p.allow_domains, (void *)pat);
		else
			vec_push(&p.allow_domains, (void *)"localhost");
		v = net_decide(&p, host, port);
		if (v.allow && m)
			fuzz_fail("deny does not win: %s port %d, pattern %s", host, port, pat);
	}
}

/* A valid pattern matches the host it names (and a wildcard a name below its
 * base, never the base), when that host is itself valid. */
static void
fuzz_self_match(const char *pat, bool allow_ok, bool deny_ok)
{
	char host[400];
	const char *colon;
	int port = 443;
	bool port_given = false;
	size_t n;

	if (pat[0] == '[') {
		const char *close = strchr(pat, ']');
		const char *pct = memchr(pat, '%', (size_t)(close - pat));

		n = (size_t)((pct ? pct : close) - pat);
		snprintf(host, sizeof(host), "%.*s]", (int)n, pat);
		if (close[1] == ':')
			port = atoi(close + 2), port_given = true;
	} else {
		colon = strchr(pat, ':');
		n = colon ? (size_t)(colon - pat) : strlen(pat);
		snprintf(host, sizeof(host), "%.*s", (int)n, pat);
		if (colon)
			port = atoi(colon + 1), port_given = true;
	}
	if (strcmp(host, "*") == 0) {
		fuzz_decide(pat, allow_ok, deny_ok, "example.com", port, 1);
		return;
	}
	if (strncmp(host, "*.", 2) == 0) {
		char below[420];

		snprintf(below, sizeof(below), "x%s", host + 1);
		fuzz_decide(pat, allow_ok, deny_ok, below, port, 1);
		fuzz_decide(pat, allow_ok, deny_ok, host + 2, port, 0);	/* never the apex */
		return;
	}
	fuzz_decide(pat, allow_ok, deny_ok, host, port, 1);
	fuzz_decide(pat, allow_ok, deny_ok, host, port == 443 ? 80 : 443, port_given ? 0 : 1);
}

static void
fuzz_hosts(const char *s, const char *pat, const char *host)
{
	const char *why;
	bool allow_ok = match_check_pattern(s, false, &why) == 0;
	bool deny_ok = match_check_pattern(s, true, &why) == 0;

	fuzz_host_checks(s);
	if (allow_ok || deny_ok)
		fuzz_self_match(s, allow_ok, deny_ok);
	if (pat && host) {
		allow_ok = match_check_pattern(pat, false, &why) == 0;
		deny_ok = match_check_pattern(pat, true, &why) == 0;
		fuzz_host_checks(host);
		if (allow_ok || deny_ok) {
			fuzz_decide(pat, allow_ok, deny_ok, host, 443, -1);
			fuzz_decide(pat, allow_ok, deny_ok, host, 22, -1);
		}
	}
}
#endif /* FUZZ_NO_HOSTS */
/* ==================== end of FUZZ HOSTS ==================== */

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, *pat = NULL, *host = NULL, *nl;

	if (size > FUZZ_MAX_INPUT || memchr(data, '\0', size))
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	fuzz_input = s;

	fuzz_pattern_checks(s);
	fuzz_cidr_checks(s);

	nl = strchr(s, '\n');
	if (nl) {
		pat = strndup(s, (size_t)(nl - s));
		host = strdup(nl + 1);
		if (!pat || !host)
			abort();
		fuzz_pattern_checks(pat);
		fuzz_cidr_checks(pat);
		fuzz_cidr_checks(host);
	}
#ifndef FUZZ_NO_HOSTS
	fuzz_hosts(s, pat, host);
#endif
	free(pat);
	free(host);
	free(s);
	arena_reset();
	return 0;
}

#ifndef SBX_LIBFUZZER
#include "fuzz_main.c"
#endif
