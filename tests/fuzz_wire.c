/* tests/fuzz_wire.c: fuzz the decoders of the wire formats between sbx's
 * own processes (sbx.c, "Wire formats"): the control message to the inner
 * helper (ctl_decode), the handed-fd message back (handed_decode), the
 * expose-port messages (expose_decode), the proxy's decision records
 * (px_decision_decode; and a message of them batched, walked with
 * px_decision_next), the write observer's events (obs_event_decode),
 * the network tables sbx sends the proxy (net_tables_decode) and the MITM
 * route's ask and answer (mitm_decode), and sbx-init's rebind ask and sbx's
 * answer (rebind_ask_decode, rebind_answer_decode).
 * The first byte picks the decoder (4: the observer's events, 5: the
 * network tables, 8: the MITM messages, 9: a session's exec request, 10: a
 * rebind, each chosen so that no earlier
 * corpus input changes decoder; otherwise byte % 4); the rest is its input. Each side of every pair may be the one a memory bug took over, so
 * each decoder must refuse what it cannot account for.
 *
 * Checks, beyond the sanitizers:
 *   - what decodes encodes back to exactly the bytes it came from (nothing
 *     ignored, nothing invented), for all seven formats;
 *   - a decoded MITM message is an ask or an answer of its exact length,
 *     with an errno in range;
 *   - a decoded network table holds only entries the policy reader would
 *     take (patterns that check, ranges that parse, reasons without control
 *     bytes), and its memory is the decoder's own (malloc, freed whole);
 *   - a decoded observer event names a known call, has a comm without
 *     control bytes, and an absolute path, for a connect or a send an
 *     address, for setsid a session id (its pid and session, any values,
 *     round-trip with the rest);
 *   - a decoded control message has absolute link paths, ports 1..65535,
 *     known flags, at least one argument, and bridge socat fully or not at
 *     all described;
 *   - a decoded rebind ask names binds that exist, rising; a decoded answer
 *     replaces exactly the binds asked about, with absolute paths and known
 *     flags;
 *   - a decoded handed-fd message has a known role for each descriptor and
 *     at most one expose-port channel, and uses no more bytes than it was
 *     given (what follows it is the next message on the stream).
 *
 *   make fuzz && ./tests/fuzz_wire.bin -max_len=4096 CORPUS_COPY/
 *   cc -O1 -o x tests/fuzz_wire.c && ./x tests/corpus/wire/     (replay)
 */
#define FUZZ_NAME "fuzz_wire"
#include "fuzz.h"


static void
fuzz_ctl(const char *b, size_t n)
{
	struct inner_msg m;
	struct buf again = { 0 };
	const char *why = NULL;
	uint32_t i;

	if (ctl_decode(b, n, &m, &why) < 0) {
		if (!why)
			fuzz_fail("ctl: refused without a reason");
		return;
	}
	if (m.flags & ~(uint32_t)(IF_UNIX_BLOCK | IF_ALLOW_USERNS | IF_WEAKER | IF_PROXY | IF_OBSERVE | IF_DNS | IF_CAPTURE |
	    IF_SESSION))
		fuzz_fail("ctl: unknown flags 0x%x accepted", m.flags);
	for (i = 0; i < m.nports; i++)
		if (m.ports[i] == 0)
			fuzz_fail("ctl: port 0 accepted");
	for (i = 0; i < m.ncapture; i++)
		if (m.capture[i] == 0)
			fuzz_fail("ctl: capture port 0 accepted");
	for (i = 0; i < m.nlinks; i++)
		if (m.links[i][0] != '/')
			fuzz_fail("ctl: a relative link path accepted");
	for (i = 0; i < m.nbinds; i++)
		if (m.binds[i].path[0] != '/')
			fuzz_fail("ctl: a relative bind path accepted");
	if (!m.argv || !m.argv[0])
		fuzz_fail("ctl: no command accepted");
	if (!m.socat != !m.bridge_sock[0] || !m.socat != !m.bridge_sock[1])
		fuzz_fail("ctl: bridge socat half described");
	ctl_encode(&m, &again);
	if (again.n != n || memcmp(again.p, b, n) != 0)
		fuzz_fail("ctl: a %zu-byte message encodes back to %zu other bytes", n, again.n);
	free(again.p);
}

static void
fuzz_handed(const char *b, size_t n)
{
	struct handed h;
	const char *why = NULL;
	char again[SBX_HANDED_MAX_BYTES];
	int expose = 0, dns = 0;

	/* the descriptors come with the message (SCM_RIGHTS): try the count
	 * the bytes claim and one that disagrees */
	for (int nfd = n > 1 ? (unsigned char)b[1] : 0, k = 0; k < 2; k++, nfd++) {
		size_t used = 0;

		if (handed_decode(b, n, nfd, &h, &used, &why) < 0) {
			if (!why)
				fuzz_fail("handed: refused without a reason");
			continue;
		}
		if (h.n != nfd)
			fuzz_fail("handed: %d descriptors came, %d roles decoded", nfd, h.n);
		for (int i = 0; i < h.n; i++) {
			if (h.role[i] != LR_PROXY && h.role[i] != LR_HOST_PORT && h.role[i] != LR_EXPOSE &&
			    h.role[i] != LR_DNS && h.role[i] != LR_CAPTURE)
				fuzz_fail("handed: unknown role %d accepted", (int)h.role[i]);
			if (h.role[i] == LR_DNS && h.port[i] != 53)
				fuzz_fail("handed: a DNS stub socket on port %u", h.port[i]);
			expose += h.role[i] == LR_EXPOSE;
			dns += h.role[i] == LR_DNS;
		}
		if (expose > 1 || dns > 1)
			fuzz_fail("handed: two expose-port channels or two DNS stubs accepted");
		if (used > n)
			fuzz_fail("handed: a %zu-byte message used %zu bytes", n, used);
		if (handed_encode(&h, again) != used || memcmp(again, b, used) != 0)
			fuzz_fail("handed: a %zu-byte message does not encode back to itself", used);
	}
}

static void
fuzz_expose(const unsigned char *b, size_t n)
{
	struct expose_msg m;
	unsigned char again[SBX_EXPOSE_MSG_BYTES];

	if (expose_decode(b, (ssize_t)n, &m) < 0) {
		if (n == SBX_EXPOSE_MSG_BYTES)
			fuzz_fail("expose: a whole message refused");
		return;
	}
	if (n != SBX_EXPOSE_MSG_BYTES)
		fuzz_fail("expose: a %zu-byte message accepted", n);
	expose_encode(&m, again);
	if (memcmp(again, b, n) != 0)
		fuzz_fail("expose: a message does not encode back to itself");
	if (expose_decode(b, -1, &m) == 0)
		fuzz_fail("expose: nothing received, yet decoded");
}

static void
fuzz_mitm(const unsigned char *b, size_t n)
{
	struct mitm_msg m;
	unsigned char again[SBX_MITM_ANSWER_BYTES];

	if (mitm_decode(b, n, &m) < 0)
		return;
	if (m.kind == 'M' ? n != SBX_MITM_ASK_BYTES || m.err : m.kind != 'm' || n != SBX_MITM_ANSWER_BYTES)
		fuzz_fail("mitm: a %zu-byte message of kind 0x%02x accepted", n, (unsigned char)m.kind);
	if (m.err > SBX_MITM_MAX_ERRNO)
		fuzz_fail("mitm: errno %u accepted", m.err);
	if (mitm_encode(&m, again) != n || memcmp(again, b, n) != 0)
		fuzz_fail("mitm: a message does not encode back to itself");
}

static void
fuzz_decision(const unsigned char *b, size_t n)
{
	struct px_decision d;
	unsigned char again[SBX_DECISION_MAX_BYTES];

	if (px_decision_decode(b, n, &d) < 0)
		return;
	for (const char *q = d.host; *q; q++)
		if (is_control((unsigned char)*q))
			fuzz_fail("decision: a control byte in the host");
	for (const char *q = d.reason; *q; q++)
		if (is_control((unsigned char)*q))
			fuzz_fail("decision: a control byte in the reason");
	if (px_decision_encode(&d, again) != n || memcmp(again, b, n) != 0)
		fuzz_fail("decision: a %zu-byte record does not encode back to itself", n);
}

/* A message of batched records, as net_log_drain walks it: each record
 * found stays inside the message and encodes back to its own bytes. */
static void
fuzz_decision_batch(const unsigned char *b, size_t n)
{
	struct px_decision d;
	unsigned char again[SBX_DECISION_MAX_BYTES];

	for (size_t off = 0; off < n;) {
		long k = px_decision_next(b + off, n - off, &d);

		if (k < 0)
			return;
		if (k < 14 || (size_t)k > n - off || (size_t)k > SBX_DECISION_MAX_BYTES)
			fuzz_fail("decision batch: a record of %ld bytes at %zu of %zu", k, off, n);
		if (px_decision_encode(&d, again) != (size_t)k || memcmp(again, b + off, (size_t)k) != 0)
			fuzz_fail("decision batch: the record at %zu does not encode back to itself", off);
		off += (size_t)k;
	}
}

static void
fuzz_observer(const unsigned char *b, size_t n)
{
	struct obs_event e;
	unsigned char again[SBX_OBS_MAX_BYTES];

	if (obs_event_decode(b, n, &e) < 0)
		return;
	if (e.call >= LEN(obs_calls))
		fuzz_fail("observer: call %u accepted", e.call);
	for (const char *q = e.comm; *q; q++)
		if (is_control((unsigned char)*q))
			fuzz_fail("observer: a control byte in comm");
	if (obs_calls[e.call].what == OW_SETSID ? !obs_is_sid(e.target) :
	    obs_calls[e.call].what == OW_PATH || obs_calls[e.call].what == OW_BIND ? e.target[0] != '/' :
	    !obs_is_address(e.target))
		fuzz_fail("observer: a target that is not what its call names (a path, an address, a session)");
	if (obs_event_encode(&e, again) != n || memcmp(again, b, n) != 0)
		fuzz_fail("observer: a %zu-byte record does not encode back to itself", n);
}

static void
fuzz_tables(const unsigned char *b, size_t n)
{
	struct net_tables *t;
	struct buf again = { 0 };
	const char *why = NULL, *check;
	int fam, prefix;
	unsigned char a[16];

	if (!(t = net_tables_decode(b, n, &why))) {
		if (!why)
			fuzz_fail("tables: refused without a reason");
		return;
	}
	for (size_t i = 0; i < t->allow.n; i++)
		if (match_check_pattern(t->allow.v[i], false, &check) < 0)
			fuzz_fail("tables: an allow pattern that does not check");
	for (size_t i = 0; i < t->deny.n; i++) {
		const struct domrule *r = t->deny.v[i];

		if (match_check_pattern(r->pattern, true, &check) < 0)
			fuzz_fail("tables: a deny pattern that does not check");
		for (const char *q = r->reason; q && *q; q++)
			if (is_control((unsigned char)*q))
				fuzz_fail("tables: a control byte in a reason");
	}
	for (size_t i = 0; i < t->addrs.n; i++)
		if (match_parse_cidr(t->addrs.v[i], &fam, a, &prefix) < 0)
			fuzz_fail("tables: an address range that does not parse");
	net_tables_encode(&t->allow, &t->deny, &t->addrs, &again);
	if (again.n != n || memcmp(again.p, b, n) != 0)
		fuzz_fail("tables: a %zu-byte table encodes back to %zu other bytes", n, again.n);
	free(again.p);
	net_tables_free(t);
}

/* A session's exec request (10f): from a client of the daemon's uid, not
 * trusted to be well formed. What decodes has a command, NAME=VALUE
 * variables, an absolute directory, and encodes back to the same bytes. */
static void
fuzz_exec_req(const char *b, size_t n)
{
	struct exec_req e;
	struct buf again = { 0 };
	const char *why = NULL;

	if (exec_req_decode(b, n, &e, &why) < 0) {
		if (!why)
			fuzz_fail("exec: refused without a reason");
		return;
	}
	if (!e.argv || !e.argv[0] || !e.envp || !e.cwd || e.cwd[0] != '/')
		fuzz_fail("exec: a request without a command, an environment or an absolute directory accepted");
	for (size_t i = 0; e.envp[i]; i++)
		if (e.envp[i][0] == '=' || !strchr(e.envp[i], '='))
			fuzz_fail("exec: a variable that is not NAME=VALUE accepted");
	exec_req_encode(&e, &again);
	if (again.n != n || memcmp(again.p, b, n) != 0)
		fuzz_fail("exec: a %zu-byte request encodes back to %zu other bytes", n, again.n);
	free(again.p);
}

/* A rebind (run_rebind): the first byte is how many binds the instructions
 * hold; the rest is decoded as an ask, then as the answer about the first
 * of them (up to three). */
static void
fuzz_rebind(const unsigned char *b, size_t n)
{
	struct init_bind binds[256];
	uint32_t nbinds, idx[256], count;
	struct buf again = { 0 };
	const char *why = NULL;
	int k;

	if (n < 1)
		return;
	nbinds = b[0];
	b++;
	n--;
	if ((k = rebind_ask_decode((const char *)b, n, nbinds, idx, &why)) < 0) {
		if (!why)
			fuzz_fail("rebind ask: refused without a reason");
	} else {
		for (int i = 0; i < k; i++)
			if (idx[i] >= nbinds || (i && idx[i] <= idx[i - 1]))
				fuzz_fail("rebind ask: index %u accepted", idx[i]);
		rebind_ask_encode(idx, (uint32_t)k, &again);
		if (again.n != n || memcmp(again.p, b, n) != 0)
			fuzz_fail("rebind ask: %zu bytes encode back to %zu other bytes", n, again.n);
	}
	count = nbinds < 3 ? nbinds : 3;
	for (uint32_t i = 0; i < nbinds; i++)
		binds[i] = (struct init_bind){ "/unchanged", 1, 1, 0 };
	for (uint32_t i = 0; i < count; i++)
		idx[i] = i;
	why = NULL;
	if (!count)
		;
	else if (rebind_answer_decode((const char *)b, n, binds, idx, count, &why) < 0) {
		if (!why)
			fuzz_fail("rebind answer: refused without a reason");
		for (uint32_t i = 0; i < nbinds; i++)
			if (strcmp(binds[i].path, "/unchanged") != 0)
				fuzz_fail("rebind answer: refused, yet bind %u changed", i);
	} else {
		for (uint32_t i = 0; i < nbinds; i++)
			if (i >= count ? strcmp(binds[i].path, "/unchanged") != 0 :
			    binds[i].path[0] != '/' || (binds[i].flags & ~(uint32_t)(IB_PIN | IB_NONE)))
				fuzz_fail("rebind answer: bind %u is not what was asked about", i);
		rebind_answer_encode(binds, idx, count, &again);
		if (again.n != n || memcmp(again.p, b, n) != 0)
			fuzz_fail("rebind answer: %zu bytes encode back to %zu other bytes", n, again.n);
	}
	free(again.p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy;

	if (size < 1)
		return 0;
	/* an exact-size copy, so a sanitizer sees a read past the end */
	copy = malloc(size - 1 ? size - 1 : 1);
	memcpy(copy, data + 1, size - 1);
	if (data[0] == 4) {
		fuzz_observer((const unsigned char *)copy, size - 1);
		free(copy);
		return 0;
	}
	if (data[0] == 5) {
		fuzz_tables((const unsigned char *)copy, size - 1);
		free(copy);
		return 0;
	}
	if (data[0] == 8) {
		fuzz_mitm((const unsigned char *)copy, size - 1);
		free(copy);
		return 0;
	}
	if (data[0] == 9) {
		fuzz_exec_req(copy, size - 1);
		free(copy);
		arena_reset();
		return 0;
	}
	if (data[0] == 10) {
		fuzz_rebind((const unsigned char *)copy, size - 1);
		free(copy);
		arena_reset();
		return 0;
	}
	switch (data[0] % 4) {
	case 0:
		fuzz_ctl(copy, size - 1);
		break;
	case 1:
		fuzz_handed(copy, size - 1);
		break;
	case 2:
		fuzz_expose((const unsigned char *)copy, size - 1);
		break;
	case 3:
		fuzz_decision((const unsigned char *)copy, size - 1);
		fuzz_decision_batch((const unsigned char *)copy, size - 1);
		break;
	}
	free(copy);
	arena_reset();	/* the decoders allocate from the arena; a fuzzer runs millions of inputs */
	return 0;
}

#ifndef SBX_LIBFUZZER
#include "fuzz_main.c"
#endif
