/* tests/fuzz_seatbelt_log.c: fuzz the unified log's parser (sbx.c 8.2,
 * sblog_line and sblog_end), which reads `log stream` output on macOS:
 * every byte of it is hostile (a path in a refusal is the command's
 * choice, and any process can log a message ending in the run's suffix).
 * The input is split into lines at '\n' and fed as the monitor feeds them.
 *
 * Checks, beyond the sanitizers:
 *   - each violation returned is a Seatbelt one with an operation, and no
 *     field holds a line break (one refusal is one line of the report);
 *   - nothing is returned unless the run's whole tag is in the input (an
 *     event must end with it), and nothing at all for the same input with
 *     the tag's command changed;
 *   - the report's line for it holds no '<', '>' or control byte, so it
 *     can neither close the <sandbox_violations> block nor start a line;
 *   - the same input fed twice gives the same violations (no state leaks
 *     from one run of the parser to the next).
 *
 *   make fuzz && ./tests/fuzz_seatbelt_log.bin -max_len=2048 CORPUS_COPY/
 *   cc -O1 -o x tests/fuzz_seatbelt_log.c && ./x tests/corpus/seatbelt_log/   (replay)
 */
#define FUZZ_NAME "fuzz_seatbelt_log"
#include "fuzz.h"

#define TAG	"CMD64_dG91Y2ggL3RtcC94_END__k3j9x0q2a_SBX"	/* "touch /tmp/x", and a suffix */
#define OTHER	"CMD64_bHMgL3RtcA==_END__k3j9x0q2a_SBX"	/* another command, the same suffix */

/* Feed data as lines; returns how many violations came, each checked,
 * their report lines joined into *lines. */
static size_t
feed(const uint8_t *data, size_t size, const char *tag, struct buf *lines)
{
	struct sblog s;
	struct violation v;
	size_t start = 0, got = 0;

	memset(&s, 0, sizeof(s));
	s.tag = tag;
	for (size_t i = 0; i <= size; i++) {
		bool more;

		if (i < size && data[i] != '\n')
			continue;
		more = i < size ? sblog_line(&s, (const char *)data + start, i - start, &v) : sblog_end(&s, &v);
		start = i + 1;
		if (!more)
			continue;
		got++;
		if (v.kind != VK_SEATBELT || !v.op || !*v.op || !v.target)
			fuzz_fail("a violation without its kind or operation");
		if (strchr(v.op, '\n') || strchr(v.target, '\n') || (v.comm && strchr(v.comm, '\n')))
			fuzz_fail("a field holds a line break: op \"%s\"", v.op);
		{
			struct buf line = { 0 };

			violation_line(&v, &line);
			for (size_t k = 0; k < line.n; k++)
				if (line.p[k] == '<' || line.p[k] == '>' || is_control((unsigned char)line.p[k]))
					fuzz_fail("the report's line holds '%c' (0x%02x)", line.p[k] >= ' ' ? line.p[k] : '?',
					    (unsigned char)line.p[k]);
			buf_putn(lines, line.p, line.n);
			buf_putc(lines, '\n');
			free(line.p);
		}
	}
	free(s.ev.p);
	return got;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf a = { 0 }, b = { 0 }, c = { 0 };
	size_t n = feed(data, size, TAG, &a);
	bool has_tag = memmem(data, size, TAG, strlen(TAG)) != NULL;

	if (n && !has_tag)
		fuzz_fail("%zu violations from input without the run's tag", n);
	if (feed(data, size, TAG, &b) != n || a.n != b.n || (a.n && memcmp(a.p, b.p, a.n) != 0))
		fuzz_fail("the same input parsed twice differs");
	if (!memmem(data, size, OTHER, strlen(OTHER)) && feed(data, size, OTHER, &c) != 0)
		fuzz_fail("violations for another command's tag, which the input does not hold");
	free(a.p);
	free(b.p);
	free(c.p);
	arena_reset();
	return 0;
}

#ifndef SBX_LIBFUZZER
#include "fuzz_main.c"
#endif
