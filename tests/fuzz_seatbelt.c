/* tests/fuzz_seatbelt.c: fuzz the Seatbelt profile's strings (sbx.c 6d):
 * the input, up to its first NUL, is a path (or a Mach service name),
 * put into a profile everywhere the renderer writes one: a mount of each
 * kind, an allow-unix-socket, an allow-mach-lookup, the TMPDIR and the
 * command in the tag.
 *
 * Checks, beyond the sanitizers:
 *   - the escaper accepts exactly the UTF-8 strings without control bytes,
 *     and what it writes reads back (tests/sexp.h) as the same bytes;
 *   - the profile renders when the escaper accepts the input and is
 *     refused as a whole when it does not;
 *   - a rendered profile reads as balanced s-expressions with valid string
 *     escapes, has exactly as many top-level rules as the same profile with
 *     a plain path in every place the input went (a path with `"` `\` `)`
 *     or `;` cannot add or end a rule), and the input comes back, decoded,
 *     as a string of it;
 *   - a profile is refused only for a string the escaper refuses, or for
 *     a writable root too long for a Seatbelt regular expression (6d).
 *
 *   make fuzz && ./tests/fuzz_seatbelt.bin -max_len=512 CORPUS_COPY/
 *   cc -O1 -o x tests/fuzz_seatbelt.c && ./x tests/corpus/seatbelt/   (replay)
 */
#define FUZZ_NAME "fuzz_seatbelt"
#include "fuzz.h"
#include "sexp.h"

/* Is s UTF-8 with no control byte (what the escaper must accept)? */
static bool
plain_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);

	while (p < end) {
		int len = *p < 0x80 ? 1 : utf8_valid_len(p, end);

		if (len == 0 || (len == 1 && is_control(*p)))
			return false;
		p += len;
	}
	return true;
}

/* How many top-level lists the profile has with a plain path in the
 * input's places: rendered once, so the check follows the renderer. */
static int
lists_without(const struct policy *p, const struct plan *pl, const struct sb_facts *f)
{
	struct buf out = { 0 };
	struct sexp_out o;
	const char *why = NULL;
	int n;

	if (seatbelt_render(p, pl, f, &out, &why) < 0 || sexp_read(out.p, out.n, &o, &why) < 0)
		fuzz_fail("the profile without the input does not render or read: %s", why ? why : "");
	n = o.lists;
	free(out.p);
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = strndup((const char *)data, size);
	char *cmd[] = { "sh", "-c", s, NULL };
	struct buf one = { 0 }, out = { 0 };
	struct sexp_out o;
	struct policy p;
	struct plan pl;
	struct run_paths rp = { "/p", "/r", s, "/r/e", "/h", NULL, { NULL }, { 0 }, NULL, NULL, { NULL } };
	struct sb_facts f;
	const char *why = NULL;
	bool ok = plain_utf8(s), found = false;
	int base;

	/* the escaper alone */
	if ((sb_put_string(&one, s) == 0) != ok)
		fuzz_fail("the escaper %s a string it must %s", ok ? "refuses" : "accepts", ok ? "accept" : "refuse");
	if (ok && (sexp_read(one.p, one.n, &o, &why) < 0 || o.strings.n != 1 || strcmp(o.strings.v[0], s) != 0))
		fuzz_fail("the escaped string does not read back as itself: %s", why ? why : "another string");
	free(one.p);

	/* the whole profile: the input in every place a string goes */
	pol_init(&p);
	memset(&pl, 0, sizeof(pl));
	for (int k = MK_BIND_RO; k <= MK_PIN_LINK; k++)
		plan_mount(&pl, (enum mkind)k, s, "fuzz");
	vec_push(&p.allow_unix_sockets, s);
	vec_push(&p.allow_mach_lookup, s);
	sb_facts_collect(&f, &rp, cmd, "_fuzz_SBX", 3128, 1080);
	/* the TMPDIR is a plan path: here it only names a mount whose unlink
	 * rule is skipped, so none the input can be (a control byte) */
	f.tmpdir = "/r/\001";
	{
		struct policy q;
		struct plan plain;

		pol_init(&q);
		memset(&plain, 0, sizeof(plain));
		for (int k = MK_BIND_RO; k <= MK_PIN_LINK; k++)
			plan_mount(&plain, (enum mkind)k, "/x", "fuzz");
		vec_push(&q.allow_unix_sockets, "/x");
		vec_push(&q.allow_mach_lookup, "x");
		base = lists_without(&q, &plain, &f);
	}
	if (seatbelt_render(&p, &pl, &f, &out, &why) < 0) {
		if (ok && !(why && strstr(why, "too long") && strlen(s) > 100))
			fuzz_fail("a profile refused for an acceptable string: %s", why ? why : "");
	} else {
		if (!ok)
			fuzz_fail("a profile rendered with a string the escaper refuses");
		if (sexp_read(out.p, out.n, &o, &why) < 0)
			fuzz_fail("the profile does not read: %s", why);
		if (o.lists != base)
			fuzz_fail("the profile has %d rules, not %d: the input added or ended one", o.lists, base);
		for (size_t i = 0; i < o.strings.n; i++)
			found = found || strcmp(o.strings.v[i], s) == 0;
		if (!found && s[0] && s[strlen(s) - 1] != '*')
			fuzz_fail("the input is not among the profile's strings");
	}
	free(out.p);
	free(s);
	arena_reset();	/* the renderer allocates from the arena; a fuzzer runs millions of inputs */
	return 0;
}

#ifndef SBX_LIBFUZZER
#include "fuzz_main.c"
#endif
