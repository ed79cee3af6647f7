/* tests/fuzz_gitcfg.c: fuzz the reader of git's config format (section 3.8):
 * a repository made inside a sandbox hands sbx a hostile config, which the
 * audit reads, judges and rewrites (9b).
 *
 * Checks, beyond the sanitizers:
 *   - a refusal names a line within the input;
 *   - the audit's rewrite round-trips: gitcfg_write(parse(X)) parses, into
 *     the same entries (section, subsection, key, value), and writes the
 *     same text again;
 *   - judging each entry (git_key_of, git_key_runs) and splitting command
 *     values into words (git_cmd_words) never fails.
 *
 *   make fuzz && ./tests/fuzz_gitcfg.bin -max_len=4096 CORPUS_COPY/
 *   cc -O1 -o x tests/fuzz_gitcfg.c && ./x tests/corpus/gitcfg/     (replay)
 */
#define FUZZ_NAME "fuzz_gitcfg"
#include "fuzz.h"

#define FUZZ_MAX_INPUT	(64 * 1024)


static bool
same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vec out = { 0 }, again = { 0 };
	struct buf w = { 0 }, w2 = { 0 };
	int line = 0, lines = 1;
	size_t i;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	{	/* the planner's reading, past bad lines: it ends, names a line of the file, and
		 * agrees with the strict reading wherever that one accepts the file */
		struct vec lax = { 0 };
		int lax_line = 0, rc = gitcfg_scan((const char *)data, size, "f", &lax, &lax_line, true);

		if (rc != 0 && (lax_line < 1 || lax_line > lines))
			fuzz_fail("the resyncing reader stopped at line %d of %d", lax_line, lines);
		if (gitcfg_parse((const char *)data, size, "f", &out, &line) == 0 && (rc != 0 || lax.n != out.n))
			fuzz_fail("the resyncing reader differs on a good file: rc %d, %zu entries, not %zu", rc, lax.n,
			    out.n);
		out.n = 0;
	}
	if (gitcfg_parse((const char *)data, size, "f", &out, &line) < 0) {
		if (line < 1 || line > lines)
			fuzz_fail("a refusal at line %d of %d", line, lines);
		arena_reset();
		return 0;
	}
	for (i = 0; i < out.n; i++) {
		const struct gitcfg_entry *e = out.v[i];
		struct vec runs = { 0 };

		(void)git_key_runs(e, git_key_of(e));
		if (e->value)
			git_cmd_words(e->value, e->value[0] != '!', &runs);
	}
	gitcfg_write(&out, &w);
	if (gitcfg_parse(w.p ? w.p : "", w.n, "w", &again, &line) < 0)
		fuzz_fail("the rewrite does not parse (line %d):\n%s", line, w.p);
	if (again.n != out.n)
		fuzz_fail("the rewrite has %zu entries, not %zu", again.n, out.n);
	for (i = 0; i < out.n; i++) {
		const struct gitcfg_entry *a = out.v[i], *b = again.v[i];

		if (!same(a->section, b->section) || !same(a->sub, b->sub) || !same(a->key, b->key) ||
		    !same(a->value, b->value))
			fuzz_fail("entry %zu differs after the rewrite", i);
	}
	gitcfg_write(&again, &w2);
	if (w.n != w2.n || (w.n && memcmp(w.p, w2.p, w.n) != 0))
		fuzz_fail("the rewrite is not stable");
	free(w.p);
	free(w2.p);
	arena_reset();
	return 0;
}

#ifndef SBX_LIBFUZZER
#include "fuzz_main.c"
#endif
