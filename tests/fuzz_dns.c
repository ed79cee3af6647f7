/* tests/fuzz_dns.c: fuzz the DNS stub's parser (dns_query_parse) and its
 * answer builder (dns_reply_build), and the name-only decision
 * (net_decide_name) on what the parser accepts.
 *
 * Checks, beyond the sanitizers:
 *   - a datagram is dropped (-1) only when it is shorter than a header or
 *     a response; every other one gets an rcode;
 *   - an accepted question's name is NUL-terminated, at most 253
 *     characters, holds only letters, digits, '-', '_', '.' and '?' (what
 *     the policy and the report may see), and its lower-case form is the
 *     spelled one lowered; a bad name holds a '?';
 *   - the answer for any rcode and any address list (taken from the
 *     input's tail) fits in 512 bytes, is a response with the query's id,
 *     parses back as a response (dropped: the stub never answers itself),
 *     and its question, fed back as a query, gives the same name and type;
 *   - the decision on the name never crashes and gives a reason.
 *
 *   make fuzz && ./tests/fuzz_dns.bin -max_len=600 -dict=tests/corpus/dns.dict CORPUS_COPY/
 *   cc -O1 -o x tests/fuzz_dns.c && ./x tests/corpus/dns/     (replay)
 */
#define FUZZ_NAME "fuzz_dns"
#include "fuzz.h"

/* The policy the names are decided by, made anew for each input: it
 * lives in the arena, which each input's end resets. */
static void
fuzz_policy_make(struct policy *p)
{
	struct err e = { 0 };
	struct pol_ctx c = { "/", "/h", 0, { NULL } };
	char text[] = "allow-domain far.test\nallow-domain *.wild.test\nallow-domain x.test:8443\n"
	    "deny-domain bad.wild.test\ndeny-domain *:22\n";

	pol_init(p);
	if (pol_parse_text(p, &c, text, strlen(text), "fuzz", &e) < 0)
		fuzz_fail("the fuzz policy does not parse: %s", e.msg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_question q, q2;
	unsigned char out[SBX_DNS_UDP_BYTES], query[SBX_DNS_UDP_BYTES];
	struct addr a[8];
	size_t na = 0, n;
	int rc;

	rc = dns_query_parse(data, size, &q);
	if (rc < 0) {
		if (size >= 12 && !(data[2] & 0x80))
			fuzz_fail("a %zu-byte query dropped unanswered", size);
		arena_reset();
		return 0;
	}
	if (rc > DNS_REFUSED)
		fuzz_fail("rcode %d", rc);
	if (q.have_question) {
		size_t len = strnlen(q.spelled, sizeof(q.spelled));
		bool mark = false;

		if (len > SBX_DNS_MAX_NAME || len == sizeof(q.spelled))
			fuzz_fail("a name of %zu characters", len);
		for (size_t k = 0; k < len; k++) {
			unsigned char ch = (unsigned char)q.spelled[k];

			if (!isalnum(ch) && ch != '-' && ch != '_' && ch != '.' && ch != '?')
				fuzz_fail("byte 0x%02x in an accepted name", ch);
			if (q.name[k] != (char)tolower(ch))
				fuzz_fail("the lower-case name is not the spelled one lowered");
			mark |= ch == '?';
		}
		if (q.bad && !mark)
			fuzz_fail("a bad name without a '?'");
		if (rc == DNS_NOERROR && !q.bad) {
			struct policy p;
			struct net_verdict v;

			fuzz_policy_make(&p);
			v = net_decide_name(&p, q.name);

			if (!v.reason)
				fuzz_fail("a decision without a reason");
		}
	}
	/* addresses from the input's tail: a family byte, then 16 bytes */
	for (size_t off = size; off >= 17 && na < LEN(a); off -= 17) {
		memset(&a[na], 0, sizeof(a[na]));
		a[na].family = data[off - 17] & 1 ? AF_INET6 : AF_INET;
		memcpy(a[na].b, data + off - 16, 16);
		na++;
	}
	for (int r = 0; r <= DNS_REFUSED; r++) {
		n = dns_reply_build(&q, r, a, na, 30, out);
		if (n > SBX_DNS_UDP_BYTES || n < 12)
			fuzz_fail("an answer of %zu bytes", n);
		if (out[0] != data[0] || out[1] != data[1] || !(out[2] & 0x80) || (out[3] & 0x0f) != r)
			fuzz_fail("an answer with the wrong id, no QR, or the wrong rcode");
		if (dns_query_parse(out, n, &q2) != -1)
			fuzz_fail("an answer parsed as a query");
		if (q.have_question) {
			/* the answer's question, as a query again: the same name and type */
			size_t qn = n;

			for (size_t k = 12; k < n; k++)
				if (out[k] == 0) {
					qn = k + 5;
					break;
				}
			if (qn > n)
				fuzz_fail("the echoed question is cut short");
			memcpy(query, out, qn);
			query[2] = 0x01;
			query[3] = 0;
			memset(query + 6, 0, 6);
			if (dns_query_parse(query, qn, &q2) != DNS_NOERROR || strcmp(q2.spelled, q.spelled) != 0 ||
			    q2.qtype != q.qtype || q2.qclass != q.qclass)
				fuzz_fail("the echoed question reads back as another (\"%s\")", q2.spelled);
		}
	}
	arena_reset();
	return 0;
}

#ifndef SBX_LIBFUZZER
#include "fuzz_main.c"
#endif
