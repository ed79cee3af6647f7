/* tests/fuzz_socks.c: fuzz the proxy's SOCKS parsers (socks5_parse_greeting,
 * socks5_parse_auth, socks5_parse_request, socks4_parse) and the in-band SSH
 * refusal (ssh_refusal) with the input as its reason.
 *
 * Checks, beyond the sanitizers:
 *   - a parser that accepts consumes no more than it was given, names a
 *     NUL-terminated host inside its buffer and a port 0..65535; SOCKS5's
 *     chosen method is 0x00, 0x02 or 0xff;
 *   - "more bytes needed" (0) stays so for every shorter prefix, and a
 *     complete message is complete again when fed exactly;
 *   - the SSH refusal is a version line then one well-formed packet
 *     (length field = the bytes that follow, padding >= 4, total a multiple
 *     of 8) of type SSH_MSG_DISCONNECT;
 *   - a decision record (the proxy's report to sbx, px_decision_decode)
 *     that decodes has no control byte in its host or reason, and encodes
 *     back to exactly the bytes it came from.
 *
 *   make fuzz && ./tests/fuzz_socks.bin -max_len=1400 -dict=tests/corpus/socks.dict CORPUS_COPY/
 *   cc -O1 -o x tests/fuzz_socks.c && ./x tests/corpus/socks/     (replay)
 */
#define FUZZ_NAME "fuzz_socks"
#include "fuzz.h"


typedef int (*host_parser)(const unsigned char *, size_t, char *, size_t, int *);

static void
check_host_parser(const char *name, host_parser f, const unsigned char *b, size_t n)
{
	char host[SBX_MAX_HOST_BYTES + 1];
	int port = -1, rc;

	memset(host, 'X', sizeof(host));
	rc = f(b, n, host, sizeof(host), &port);
	if (rc > 0) {
		char again[SBX_MAX_HOST_BYTES + 1];
		int p2;

		if ((size_t)rc > n)
			fuzz_fail("%s consumed %d of %zu bytes", name, rc, n);
		if (!memchr(host, '\0', sizeof(host)))
			fuzz_fail("%s: host not NUL-terminated in its buffer", name);
		if (port < 0 || port > 65535)
			fuzz_fail("%s: port %d", name, port);
		if (f(b, (size_t)rc, again, sizeof(again), &p2) != rc || strcmp(again, host) != 0 || p2 != port)
			fuzz_fail("%s: the exact message parses differently", name);
		for (size_t k = 0; k < (size_t)rc; k++)
			if (f(b, k, again, sizeof(again), &p2) > 0)
				fuzz_fail("%s: a %zu-byte prefix of a %d-byte message is complete", name, k, rc);
	} else if (rc == 0) {
		for (size_t k = 0; k < n; k++)
			if (f(b, k, host, sizeof(host), &port) != 0)
				fuzz_fail("%s: a prefix of an incomplete message is not incomplete", name);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int method = -1, rc;

	for (int want = 0; want < 2; want++) {
		rc = socks5_parse_greeting(data, size, want, &method);
		if (rc > 0 && ((size_t)rc > size || (method != 0 && method != 2 && method != 0xff)))
			fuzz_fail("greeting: %d bytes of %zu, method %d", rc, size, method);
	}
	{
		const unsigned char *user, *pass;
		size_t ul, pl;

		rc = socks5_parse_auth(data, size, &user, &ul, &pass, &pl);
		if (rc > 0 && ((size_t)rc > size || user + ul > data + size || pass + pl > data + size))
			fuzz_fail("auth consumed %d of %zu", rc, size);
		if (rc > 0)
			(void)proxy_credential_ok(user, ul, pass, pl, "0123456789abcdef0123456789abcdef");
	}
	/* the input as a Proxy-Authorization value: never read past it */
	(void)proxy_basic_ok((const char *)data, size, "0123456789abcdef0123456789abcdef");
	check_host_parser("socks5_parse_request", socks5_parse_request, data, size);
	check_host_parser("socks4_parse", socks4_parse, data, size);

	/* the input as a decision record from the proxy */
	{
		struct px_decision d;
		unsigned char again[SBX_DECISION_MAX_BYTES];

		if (px_decision_decode(data, size, &d) == 0) {
			for (const char *q = d.host; *q; q++)
				if ((unsigned char)*q < 0x20 || *q == 0x7f)
					fuzz_fail("decision: a control byte in the host");
			for (const char *q = d.reason; *q; q++)
				if ((unsigned char)*q < 0x20 || *q == 0x7f)
					fuzz_fail("decision: a control byte in the reason");
			if (px_decision_encode(&d, again) != size || memcmp(again, data, size) != 0)
				fuzz_fail("decision: a %zu-byte record does not encode back to itself", size);
		}
	}

	/* the input as a deny reason in the in-band SSH refusal */
	if (size <= SBX_MAX_TEXT_ARG_BYTES) {
		char *reason = strndup((const char *)data, size);
		struct buf b = { 0 };
		const char *nl;
		uint32_t plen;
		size_t vl;

		ssh_refusal(&b, reason);
		nl = b.p ? memchr(b.p, '\n', b.n) : NULL;
		if (!nl || b.n < 7 || memcmp(b.p, "SSH-2.0-", 8) != 0)
			fuzz_fail("refusal does not start with a version line");
		vl = (size_t)(nl - b.p) + 1;
		if (b.n < vl + 6)
			fuzz_fail("refusal has no packet");
		memcpy(&plen, b.p + vl, 4);
		plen = ntohl(plen);
		if ((size_t)plen != b.n - vl - 4 || (plen + 4) % 8 != 0 || (unsigned char)b.p[vl + 4] < 4 ||
		    (unsigned char)b.p[vl + 5] != 1 /* SSH_MSG_DISCONNECT */)
			fuzz_fail("refusal packet malformed: length %u for %zu bytes", plen, b.n - vl - 4);
		free(b.p);
		free(reason);
	}
	arena_reset();
	return 0;
}

#ifndef SBX_LIBFUZZER
#include "fuzz_main.c"
#endif
