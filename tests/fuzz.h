/* tests/fuzz.h: what the fuzz targets share. Each target defines
 * FUZZ_NAME, includes this, and so gets all of sbx.c (its main renamed,
 * every static function reachable), libFuzzer's entry point declared, and
 * fuzz_fail, which names the invariant a finding broke and aborts (so the
 * fuzzer keeps the input and the replay driver, tests/fuzz_main.c, fails). */
#define main sbx_main
#include "../sbx.c"
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void __attribute__((noreturn, format(printf, 1, 2)))
fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: invariant broken: ", FUZZ_NAME);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}
