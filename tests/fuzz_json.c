/* tests/fuzz_json.c: fuzz sbx's strict JSON reader (json_parse).
 *
 * Checks, beyond the sanitizers:
 *   - a refusal names a position inside the input (line >= 1 and at most
 *     the number of lines, 1 <= col <= size + 1) and has a message;
 *   - an accepted document holds only NUL-free, valid UTF-8 strings and keys,
 *     no duplicate keys, and nothing nested deeper than SBX_MAX_JSON_DEPTH;
 *   - written back out (strings through sbx's own buf_put_json_string) it
 *     is accepted again and reads as the same tree.
 *
 *   make fuzz && ./tests/fuzz_json.bin -max_len=4096 CORPUS_COPY/
 *   cc -O1 -o x tests/fuzz_json.c && ./x tests/corpus/json/     (replay)
 */
#define FUZZ_NAME "fuzz_json"
#include "fuzz.h"

#define FUZZ_MAX_INPUT	(64 * 1024)


static void
fuzz_check_utf8(const char *s, const char *what)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);

	while (p < end) {
		int len = utf8_valid_len(p, end);

		if (!len)
			fuzz_fail("%s holds invalid UTF-8 at byte %zu", what, (size_t)(p - (const unsigned char *)s));
		p += len;
	}
}

static void
fuzz_check_tree(const struct jval *v, int depth)
{
	size_t i, j;

	if (depth > SBX_MAX_JSON_DEPTH)
		fuzz_fail("accepted a document nested %d deep", depth);
	switch (v->t) {
	case J_NULL:
	case J_BOOL:
	case J_NUM:
		break;
	case J_STR:
		fuzz_check_utf8(v->s, "a string");
		break;
	case J_ARR:
	case J_OBJ:
		for (i = 0; i < v->n; i++) {
			if (v->t == J_OBJ) {
				fuzz_check_utf8(v->keys[i], "a key");
				for (j = 0; j < i; j++)
					if (strcmp(v->keys[i], v->keys[j]) == 0)
						fuzz_fail("accepted the duplicate key \"%s\"", v->keys[i]);
			}
			fuzz_check_tree(v->items[i], depth + 1);
		}
		break;
	default:
		fuzz_fail("a value of unknown type %d", (int)v->t);
	}
}

/* Write a tree back as JSON. */
static void
fuzz_write(struct buf *b, const struct jval *v)
{
	size_t i;

	switch (v->t) {
	case J_NULL:
		buf_puts(b, "null");
		break;
	case J_BOOL:
		buf_puts(b, v->b ? "true" : "false");
		break;
	case J_NUM:
		if (v->num != v->num)
			fuzz_fail("a number read as NaN");
		if (v->num > 1.7976931348623157e308 || v->num < -1.7976931348623157e308)
			buf_puts(b, v->num > 0 ? "1e999" : "-1e999");	/* strtod overflow: reads as inf again */
		else
			buf_printf(b, "%.17g", v->num);
		break;
	case J_STR:
		buf_put_json_string(b, v->s);
		break;
	case J_ARR:
	case J_OBJ:
		buf_putc(b, v->t == J_OBJ ? '{' : '[');
		for (i = 0; i < v->n; i++) {
			if (i)
				buf_putc(b, ',');
			if (v->t == J_OBJ) {
				buf_put_json_string(b, v->keys[i]);
				buf_putc(b, ':');
			}
			fuzz_write(b, v->items[i]);
		}
		buf_putc(b, v->t == J_OBJ ? '}' : ']');
		break;
	}
}

static bool
fuzz_same(const struct jval *a, const struct jval *b)
{
	size_t i;

	if (a->t != b->t)
		return false;
	switch (a->t) {
	case J_NULL:
		return true;
	case J_BOOL:
		return a->b == b->b;
	case J_NUM:
		return a->num == b->num;
	case J_STR:
		return strcmp(a->s, b->s) == 0;
	case J_ARR:
	case J_OBJ:
		if (a->n != b->n)
			return false;
		for (i = 0; i < a->n; i++) {
			if (a->t == J_OBJ && strcmp(a->keys[i], b->keys[i]) != 0)
				return false;
			if (!fuzz_same(a->items[i], b->items[i]))
				return false;
		}
		return true;
	}
	return false;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jval *root = NULL, *again = NULL;
	struct err e;
	char *text;
	size_t i, lines = 1;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	text = malloc(size ? size : 1);	/* exactly size bytes: no terminator to lean on */
	if (!text)
		return 0;
	if (size)
		memcpy(text, data, size);
	else
		text[0] = '\0';	/* not part of the input */
	memset(&e, 0, sizeof(e));
	if (json_parse(text, size, "fuzz.json", &root, &e) < 0) {
		for (i = 0; i < size; i++)
			lines += text[i] == '\n';
		if (!e.msg[0] || memchr(e.msg, '\0', sizeof(e.msg)) == NULL)
			fuzz_fail("a refusal without a message");
		if (e.line < 1 || (size_t)e.line > lines || e.col < 1 || (size_t)e.col > size + 1)
			fuzz_fail("a refusal at line %d col %d, outside the input (%zu lines, %zu bytes): %s", e.line,
			    e.col, lines, size, e.msg);
	} else {
		struct buf b = { 0 };
		struct err e2;

		if (!root)
			fuzz_fail("accepted, but no tree");
		fuzz_check_tree(root, 0);
		fuzz_write(&b, root);
		memset(&e2, 0, sizeof(e2));
		if (json_parse(b.p, b.n, "fuzz-again.json", &again, &e2) < 0)
			fuzz_fail("the tree written back is refused: %d:%d: %s\n--- written ---\n%s", e2.line, e2.col,
			    e2.msg, b.p);
		if (!fuzz_same(root, again))
			fuzz_fail("the tree written back reads differently\n--- written ---\n%s", b.p);
		free(b.p);
	}
	free(text);
	arena_reset();
	return 0;
}

#ifndef SBX_LIBFUZZER
#include "fuzz_main.c"
#endif
