/* tests/fuzz_main.c: a replay driver for the fuzz targets, without libFuzzer.
 *
 * Each tests/fuzz_*.c includes this file at its end unless built with
 * -DSBX_LIBFUZZER, so a plain compiler replays a corpus:
 *
 *   cc -O1 -g -Wall -Wextra -o x tests/fuzz_json.c && ./x tests/corpus/json/
 *   make fuzz-replay      (all three, over tests/corpus/)
 *
 * Arguments are files or directories (read recursively, in name order,
 * skipping names that start with '.'); with none, stdin is one input. Each
 * input is handed to LLVMFuzzerTestOneInput in a malloc'd buffer of exactly
 * its size, so a sanitizer sees any read past the end. Arguments starting
 * with '-' are ignored (libFuzzer flags can stay on the command line),
 * except -v, which names each input on stderr before running it. Prints
 * "replayed N inputs" and exits 0; a target that finds a bug aborts. */

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t fuzz_replayed;
static int fuzz_verbose;

static int
fuzz_read_stream(FILE *f, uint8_t **out, size_t *outn)
{
	size_t n = 0, cap = 4096;
	uint8_t *p = malloc(cap), *q;

	if (!p)
		return -1;
	for (;;) {
		size_t r;

		if (n == cap) {
			cap *= 2;
			q = realloc(p, cap);
			if (!q) {
				free(p);
				return -1;
			}
			p = q;
		}
		r = fread(p + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		free(p);
		return -1;
	}
	/* exactly n bytes (at least 1 for malloc), so an over-read is caught */
	q = malloc(n ? n : 1);
	if (!q) {
		free(p);
		return -1;
	}
	memcpy(q, p, n);
	free(p);
	*out = q;
	*outn = n;
	return 0;
}

static void
fuzz_run_one(const char *name, FILE *f)
{
	uint8_t *data;
	size_t n;

	if (fuzz_read_stream(f, &data, &n) < 0) {
		fprintf(stderr, "fuzz replay: %s: read error: %s\n", name, strerror(errno));
		exit(2);
	}
	if (fuzz_verbose)
		fprintf(stderr, "fuzz replay: %s (%zu bytes)\n", name, n);
	LLVMFuzzerTestOneInput(data, n);
	free(data);
	fuzz_replayed++;
}

static int
fuzz_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
fuzz_run_path(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "fuzz replay: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		char **names = NULL;
		size_t n = 0, cap = 0, i;

		if (!d) {
			fprintf(stderr, "fuzz replay: %s: %s\n", path, strerror(errno));
			exit(2);
		}
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				names = realloc(names, cap * sizeof(*names));
				if (!names) {
					fprintf(stderr, "fuzz replay: out of memory\n");
					exit(2);
				}
			}
			names[n] = malloc(strlen(path) + strlen(de->d_name) + 2);
			if (!names[n]) {
				fprintf(stderr, "fuzz replay: out of memory\n");
				exit(2);
			}
			sprintf(names[n], "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/", de->d_name);
			n++;
		}
		closedir(d);
		if (n)
			qsort(names, n, sizeof(*names), fuzz_cmp_names);
		for (i = 0; i < n; i++) {
			fuzz_run_path(names[i]);
			free(names[i]);
		}
		free(names);
		return;
	}
	{
		FILE *f = fopen(path, "rb");

		if (!f) {
			fprintf(stderr, "fuzz replay: %s: %s\n", path, strerror(errno));
			exit(2);
		}
		fuzz_run_one(path, f);
		fclose(f);
	}
}

int
main(int argc, char **argv)
{
	int i, paths = 0;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "-v") == 0)
			fuzz_verbose = 1;
	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		fuzz_run_path(argv[i]);
		paths++;
	}
	if (!paths)
		fuzz_run_one("(stdin)", stdin);
	printf("replayed %zu inputs\n", fuzz_replayed);
	return 0;
}
