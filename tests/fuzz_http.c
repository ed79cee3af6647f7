/* tests/fuzz_http.c: fuzz the proxy's HTTP parsers (http_parse_head,
 * http_rewrite, http_rewrite_response): bytes a sandboxed command or an
 * upstream sends.
 *
 * Checks, beyond the sanitizers:
 *   - a complete head is within the input and ends with CRLFCRLF; a result
 *     is >0, 0 (more needed: no CRLFCRLF yet, under the 16 KiB bound) or
 *     -400/-431;
 *   - an accepted request names a host of bounded length and a port 1..65535;
 *   - a forwarded request, rewritten, starts with its method and "/", has
 *     exactly one Host header (the target's), no Proxy-* header, no header
 *     that a Connection field of the request names (but Content-Length and
 *     Transfer-Encoding), and ends with CRLFCRLF;
 *   - a rewritten response head ends with CRLFCRLF and says Connection: close,
 *     and the body bytes that came with it follow unchanged.
 *
 *   make fuzz && ./tests/fuzz_http.bin -max_len=20000 -dict=tests/corpus/http.dict CORPUS_COPY/
 *   cc -O1 -o x tests/fuzz_http.c && ./x tests/corpus/http/     (replay)
 */
#define FUZZ_NAME "fuzz_http"
#include "fuzz.h"


/* count header lines named name (case-insensitive) in a head */
static int
count_headers(const char *h, size_t n, const char *name)
{
	size_t nl = strlen(name), i;
	int c = 0;

	for (i = 0; i + 2 + nl <= n; i++)
		if ((i == 0 || h[i - 1] == '\n') && i > 0 && strncasecmp(h + i, name, nl) == 0)
			c++;
	return c;
}

/* count header lines whose name (all before the line's first colon) is
 * exactly name, case-insensitively */
static int
count_named(const char *h, size_t n, const char *name)
{
	size_t nl = strlen(name);
	int c = 0;

	for (const char *line = memchr(h, '\n', n); line && ++line < h + n; line = memchr(line, '\n', (size_t)(h + n - line))) {
		const char *colon = memchr(line, ':', (size_t)(h + n - line)), *le = memchr(line, '\n', (size_t)(h + n - line));

		if (colon && (!le || colon < le) && (size_t)(colon - line) == nl && strncasecmp(line, name, nl) == 0)
			c++;
	}
	return c;
}

/* every connection option a Connection field of the request names (but
 * framing) is absent from the rewritten head; an independent tokenizer */
static void
check_connection_options(const char *in, size_t in_n, const char *out, size_t on)
{
	const char *p = in, *end = in + in_n;

	while ((p = memmem(p, (size_t)(end - p), "\r\n", 2)) && p + 2 < end) {
		const char *line = p + 2, *le = memmem(line, (size_t)(end - line), "\r\n", 2);

		p = line;
		if (!le || (size_t)(le - line) < 11 || strncasecmp(line, "connection:", 11) != 0)
			continue;
		for (const char *v = line + 11; v < le;) {
			char tok[64];
			size_t tn = 0;

			while (v < le && strchr(" \t,", *v))
				v++;
			while (v < le && !strchr(" \t,", *v)) {
				if (tn < sizeof(tok) - 1)
					tok[tn] = *v;
				tn++;
				v++;
			}
			if (tn == 0 || tn >= sizeof(tok))
				continue;
			tok[tn] = '\0';
			if (!strcasecmp(tok, "content-length") || !strcasecmp(tok, "transfer-encoding") ||
			    !strcasecmp(tok, "host") || !strcasecmp(tok, "connection"))
				continue;	/* framing stays; Host and Connection are the proxy's own */
			if (count_named(out, on, tok))
				fuzz_fail("the connection option %s went upstream", tok);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct http_req r;
	int rc = http_parse_head(buf, size, &r);

	if (rc > 0) {
		if ((size_t)rc > size || (size_t)rc != r.head_n || rc < 4 || memcmp(buf + rc - 4, "\r\n\r\n", 4) != 0)
			fuzz_fail("head of %d bytes (head_n %zu) in %zu, not ending in CRLFCRLF", rc, r.head_n, size);
		if (strlen(r.host) > SBX_MAX_HOST_BYTES || !r.host[0])
			fuzz_fail("host of %zu bytes", strlen(r.host));
		if (r.port < 1 || r.port > 65535)
			fuzz_fail("port %d", r.port);
		if (!r.connect) {
			size_t on = 0, ml = (size_t)((const char *)memchr(buf, ' ', r.head_n) - buf);
			char *out = http_rewrite(buf, &r, &on), hostline[SBX_MAX_HOST_BYTES + 32];

			if (!out || on < 4 || memcmp(out + on - 4, "\r\n\r\n", 4) != 0)
				fuzz_fail("rewritten request does not end in CRLFCRLF");
			if (memcmp(out, buf, ml) != 0 || out[ml] != ' ' || out[ml + 1] != '/')
				fuzz_fail("rewritten request does not start with its method and /");
			if (count_headers(out, on, "host:") != 1)
				fuzz_fail("rewritten request has %d Host headers", count_headers(out, on, "host:"));
			{	/* the target's host in its canonical form (what the policy judged), bracketed if IPv6 */
				char canon[SBX_MAX_HOST_BYTES + 64];

				if (match_canonical_host(r.host, canon, sizeof(canon)) == 0)
					snprintf(hostline, sizeof(hostline), strchr(canon, ':') ? "\r\nHost: [%s]" : "\r\nHost: %s",
					    canon);
				else
					snprintf(hostline, sizeof(hostline), "\r\nHost: %s", r.host);
			}
			if (!memmem(out, on, hostline, strlen(hostline)))
				fuzz_fail("the Host header is not the target's (%s)", r.host);
			if (count_headers(out, on, "proxy-"))
				fuzz_fail("a Proxy-* header went upstream");
			check_connection_options(buf, r.head_n, out, on);
			{	/* the same request to a parent proxy: absolute form, its credential once, the rest kept */
				size_t an = 0;
				char *abs = http_absolute_form(out, on, r.host, r.port, "Basic cDpx", &an);

				if (an < on + 7 || memcmp(abs, out, ml) != 0 || memcmp(abs + ml, " http://", 8) != 0 ||
				    memcmp(abs + an - 4, "\r\n\r\n", 4) != 0)
					fuzz_fail("the parent's form of the request is not absolute-form ending in CRLFCRLF");
				if (count_headers(abs, an, "proxy-") != 1 || count_headers(abs, an, "host:") != 1)
					fuzz_fail("the parent's form: %d Proxy-* headers, %d Host", count_headers(abs, an, "proxy-"),
					    count_headers(abs, an, "host:"));
				free(abs);
			}
			free(out);
		}
	} else if (rc == 0) {
		if (memmem(buf, size, "\r\n\r\n", 4) || size > SBX_MAX_HTTP_HEAD_BYTES)
			fuzz_fail("more bytes asked for, with a whole head or past the bound (%zu bytes)", size);
	} else if (rc != -400 && rc != -431) {
		fuzz_fail("result %d", rc);
	}

	/* the same bytes as a parent proxy's answer to CONNECT */
	{
		char line[160];
		int pr = parent_reply(buf, size, line, sizeof(line));

		if (pr > 0 && ((size_t)pr > size || memcmp(buf + pr - 4, "\r\n\r\n", 4) != 0 || memcmp(buf, "HTTP/1.", 7) != 0 ||
		    buf[9] != '2'))
			fuzz_fail("a parent's answer taken as 2xx: %d bytes", pr);
		if (pr == 0 && (memmem(buf, size, "\r\n\r\n", 4) || size >= SBX_MAX_HTTP_HEAD_BYTES))
			fuzz_fail("more of the parent's answer asked for, with a whole head or past the bound");
		if (pr == -1)
			for (const char *c = line; *c; c++)
				if (is_control((unsigned char)*c))
					fuzz_fail("a control byte in the parent's status line as reported");
	}

	/* the same bytes as an upstream's response head */
	{
		const char *e = memmem(buf, size, "\r\n\r\n", 4);

		if (e) {
			size_t hn = (size_t)(e - buf) + 4, on = 0;
			char *out = http_rewrite_response(buf, size, hn, NULL, &on);

			if (out) {
				size_t body = size - hn, oh = on - body;

				if (on < body + 4 || memcmp(out + oh, buf + hn, body) != 0)
					fuzz_fail("the body bytes after the response head changed");
				if (memcmp(out + oh - 4, "\r\n\r\n", 4) != 0)
					fuzz_fail("rewritten response head does not end in CRLFCRLF");
				if (!memmem(out, oh, "Connection: close\r\n", 19))
					fuzz_fail("rewritten response head lacks Connection: close");
				free(out);
			}
		}
	}
	arena_reset();
	return 0;
}

#ifndef SBX_LIBFUZZER
#include "fuzz_main.c"
#endif
