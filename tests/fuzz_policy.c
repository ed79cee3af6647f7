/* tests/fuzz_policy.c: fuzz the whole policy reader (pol_parse_text: the
 * line format, or srt settings JSON when the first non-blank byte is '{')
 * and both printers.
 *
 * Checks, beyond the sanitizers:
 *   - a refusal has a message;
 *   - the round trips hold (the printers' promise, section 3.7): with
 *     L = pol_print_lines(p) and J = pol_print_json(p),
 *       parse(L) is accepted, and prints L again (lines) and J (JSON);
 *       parse(J) is accepted, and prints J again (JSON) and, up to the order
 *       of lines (JSON groups ignoreViolations by command), L (lines).
 *
 * Inputs containing "include" are skipped: that directive reads the disk,
 * and the fuzzer stays hermetic. Paths are read against cwd "/p", HOME
 * "/home/u", as in tests/unit.c.
 *
 *   make fuzz && ./tests/fuzz_policy.bin -max_len=4096 CORPUS_COPY/
 *   cc -O1 -o x tests/fuzz_policy.c && ./x tests/corpus/policy/     (replay)
 */
#define main sbx_main
#include "../sbx.c"
#undef main

#define FUZZ_MAX_INPUT	(64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *fuzz_input;
static size_t fuzz_input_size;

static void __attribute__((noreturn, format(printf, 1, 2)))
fuzz_fail(const char *fmt, ...)
{
	va_list ap;
	size_t i;

	fprintf(stderr, "fuzz_policy: invariant broken: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n--- input (%zu bytes, C string) ---\n\"", fuzz_input_size);
	for (i = 0; i < fuzz_input_size; i++) {
		unsigned char ch = fuzz_input[i];

		if (ch == '"' || ch == '\\')
			fprintf(stderr, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", stderr);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(stderr, "\\x%02x\"\"", ch);
		else
			fputc(ch, stderr);
	}
	fputs("\"\n", stderr);
	abort();
}

/* Parse a printed policy into a fresh one. Returns 0, or -1 with msg set. */
static int
fuzz_parse(struct policy *p, const char *text, size_t n, char *msg, size_t msgn)
{
	struct pol_ctx c = { "/p", "/home/u", 0, { 0 } };
	struct err e;
	char *copy = malloc(n + 1);	/* pol_parse_text writes text[n] */
	int rc;

	if (!copy)
		abort();
	memcpy(copy, text, n);
	copy[n] = '\0';
	memset(&e, 0, sizeof(e));
	pol_init(p);
	rc = pol_parse_text(p, &c, copy, n, "printed", &e);
	if (rc < 0)
		err_format(&e, msg, msgn);
	free(copy);
	return rc;
}

static int
fuzz_cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of s, sorted and joined again (malloc'd). */
static char *
fuzz_sorted_lines(const char *s)
{
	char *copy = strdup(s), *line, *save = NULL, **v = NULL, *out;
	size_t n = 0, i, total = 1;

	if (!copy)
		abort();
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		v = realloc(v, (n + 1) * sizeof(*v));
		if (!v)
			abort();
		v[n++] = line;
		total += strlen(line) + 1;
	}
	if (n)
		qsort(v, n, sizeof(*v), fuzz_cmp_lines);
	out = malloc(total);
	if (!out)
		abort();
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		strcat(out, v[i]);
		strcat(out, "\n");
	}
	free(v);
	free(copy);
	return out;
}

static void
fuzz_round_trips(const struct policy *p)
{
	struct buf L = { 0 }, J = { 0 }, b = { 0 };
	struct policy q;
	char msg[1200];

	pol_print_lines(p, &L);
	pol_print_json(p, &J);
	if (!L.p)
		buf_puts(&L, "");
	if (!J.p)
		fuzz_fail("pol_print_json printed nothing");

	/* lines -> policy -> lines, JSON */
	if (L.n) {
		if (fuzz_parse(&q, L.p, L.n, msg, sizeof(msg)) < 0)
			fuzz_fail("the printed line format is refused: %s\n--- printed ---\n%s", msg, L.p);
		pol_print_lines(&q, &b);
		if (strcmp(b.p ? b.p : "", L.p) != 0)
			fuzz_fail("line format round trip differs\n--- printed ---\n%s--- read back and printed ---\n%s",
			    L.p, b.p ? b.p : "");
		b.n = 0;
		pol_print_json(&q, &b);
		if (strcmp(b.p, J.p) != 0)
			fuzz_fail("the JSON of the read-back line format differs\n--- JSON ---\n%s--- via lines ---\n%s",
			    J.p, b.p);
		b.n = 0;
	}

	/* JSON -> policy -> JSON, lines */
	if (fuzz_parse(&q, J.p, J.n, msg, sizeof(msg)) < 0)
		fuzz_fail("the printed JSON is refused: %s\n--- printed ---\n%s", msg, J.p);
	pol_print_json(&q, &b);
	if (strcmp(b.p, J.p) != 0)
		fuzz_fail("JSON round trip differs\n--- printed ---\n%s--- read back and printed ---\n%s", J.p, b.p);
	b.n = 0;
	pol_print_lines(&q, &b);
	{
		char *x = fuzz_sorted_lines(L.p), *y = fuzz_sorted_lines(b.p ? b.p : "");

		if (strcmp(x, y) != 0)
			fuzz_fail("the line format of the read-back JSON differs (sorted lines)\n--- lines ---\n%s"
			    "--- via JSON ---\n%s", x, y);
		free(x);
		free(y);
	}
	free(b.p);
	free(L.p);
	free(J.p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pol_ctx c = { "/p", "/home/u", 0, { 0 } };
	struct policy p;
	struct err e;
	char *text;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	if (memmem(data, size, "include", 7))	/* reads the disk: stay hermetic */
		return 0;
	fuzz_input = data;
	fuzz_input_size = size;
	text = malloc(size + 1);	/* pol_parse_text writes text[size] */
	if (!text)
		return 0;
	if (size)
		memcpy(text, data, size);
	text[size] = '\0';
	memset(&e, 0, sizeof(e));
	pol_init(&p);
	if (pol_parse_text(&p, &c, text, size, "fuzz.policy", &e) < 0) {
		if (!e.msg[0])
			fuzz_fail("a refusal without a message");
	} else {
		if (c.include_depth != 0)
			fuzz_fail("include depth %d after the parse", c.include_depth);
		fuzz_round_trips(&p);
	}
	free(text);
	arena_reset();
	return 0;
}

#ifndef SBX_LIBFUZZER
#include "fuzz_main.c"
#endif
