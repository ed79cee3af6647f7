/* tests/sexp.h: a small reader of SBPL's surface syntax, for the tests of
 * the Seatbelt profile (tests/unit.c, tests/fuzz_seatbelt.c). It checks
 * what sandbox-exec's reader would refuse or misread: parentheses that do
 * not balance, a string that does not end, an escape other than \" and \\
 * (the only two sbx's escaper writes), a raw control byte inside a string.
 * It hands back every string decoded (so a path can be checked to
 * round-trip) and every symbol (for the vocabulary check). Comments run
 * from ';' to the end of the line; #"..." is a regex string. */

struct sexp_out {
	struct vec strings;	/* of char *, decoded (arena) */
	struct vec symbols;	/* of char *, every atom that is not a number (arena) */
	int lists;		/* top-level lists */
};

/* Read one string body at t[*i] (just after the opening quote). Returns the
 * decoded string (arena), or NULL with *why set. */
static __attribute__((unused)) char *
sexp_string(const char *t, size_t n, size_t *i, const char **why)
{
	struct buf b = { 0 };

	buf_putn(&b, "", 0);
	for (; *i < n; (*i)++) {
		unsigned char c = (unsigned char)t[*i];

		if (c == '"') {
			char *r = astrndup(b.p, b.n);	/* a path holds no NUL; the arena owns it */

			(*i)++;
			free(b.p);
			return r;
		}
		if (c < 0x20 || c == 0x7f) {
			*why = "a raw control byte inside a string";
			break;
		}
		if (c == '\\') {
			if (*i + 1 >= n || (t[*i + 1] != '"' && t[*i + 1] != '\\')) {
				*why = "an escape other than \\\" and \\\\";
				break;
			}
			(*i)++;
			c = (unsigned char)t[*i];
		}
		buf_putc(&b, (char)c);
	}
	if (!*why)
		*why = "a string that does not end";
	free(b.p);
	return NULL;
}

/* Read a whole profile. Returns 0, or -1 with *why set. */
static __attribute__((unused)) int
sexp_read(const char *t, size_t n, struct sexp_out *o, const char **why)
{
	size_t i = 0;
	int depth = 0;

	memset(o, 0, sizeof(*o));
	*why = NULL;
	while (i < n) {
		unsigned char c = (unsigned char)t[i];

		if (c == ' ' || c == '\t' || c == '\n') {
			i++;
		} else if (c == ';') {
			while (i < n && t[i] != '\n')
				i++;
		} else if (c == '(') {
			if (depth++ == 0)
				o->lists++;
			i++;
		} else if (c == ')') {
			if (depth-- == 0) {
				*why = "a ')' that closes nothing";
				return -1;
			}
			i++;
		} else if (c == '"' || (c == '#' && i + 1 < n && t[i + 1] == '"')) {
			char *s;

			i += c == '#' ? 2 : 1;
			if (!(s = sexp_string(t, n, &i, why)))
				return -1;
			vec_push(&o->strings, s);
		} else if (c < 0x20 || c >= 0x7f) {
			*why = "a byte outside strings and comments that is not printable ASCII";
			return -1;
		} else {
			size_t s = i;
			bool number = true;

			while (i < n && !strchr(" \t\n();\"", t[i]) && (unsigned char)t[i] >= 0x20 && (unsigned char)t[i] < 0x7f) {
				number = number && isdigit((unsigned char)t[i]);
				i++;
			}
			if (!number)
				vec_push(&o->symbols, astrndup(t + s, i - s));
		}
	}
	if (depth != 0) {
		*why = "unbalanced parentheses: a list is never closed";
		return -1;
	}
	return 0;
}
