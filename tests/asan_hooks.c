/* asan_hooks.c - linked into sbx-asan (make test-asan) next to sbx.c; no part of sbx.
 *
 * Copies the sanitizer reports (ASan, UBSan, LSan) of every sbx process to one FIFO,
 * $SBX_ASAN_FIFO, which tests/asan-run.sh drains into a log and fails on. Why not
 * ASAN_OPTIONS=log_path: the runtime opens that file lazily, at the first report, and by then
 *   - the proxy is under its own seccomp filter, which refuses open() for writing, and
 *   - sbx --inner, sbx-init and sbx --connect run in the sandbox, where every directory
 *     outside the policy's writable roots is read-only (EROFS),
 * so the report would be lost, replaced by "ERROR: Can't open file: ...". Nor stderr alone:
 * the tests capture it in files of a scratch dir they remove.
 * Instead each process opens the FIFO when it starts (a constructor, before sbx installs any
 * filter; fork children inherit the descriptor), and the runtimes' print hook,
 * __sanitizer_on_print, writes every piece of a report there as well as to stderr. The hook,
 * not __sanitizer_set_report_fd: gcc's libubsan is a runtime of its own that resets its report
 * descriptor when it initialises, at the first UBSan report. An existing FIFO opens for writing
 * on a read-only mount. The descriptor is close-on-exec and moved to >= 512, so commands get
 * no extra descriptor and sbx's own descriptor numbers are those of a plain build.
 * Without $SBX_ASAN_FIFO, or with nothing reading it (ENXIO), reports go to stderr only. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int report_fd = -1;

__attribute__((constructor)) static void
asan_hooks_init(void)
{
	const char *fifo = getenv("SBX_ASAN_FIFO");
	int fd, hi;

	if (!fifo || !*fifo)
		return;
	fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, 512);
	if (hi >= 0) {
		close(fd);
		fd = hi;
	}
	report_fd = fd;
}

/* called by the runtimes with each piece of text they print; the raw syscall, as the
 * runtime's own interceptors are best left alone while it reports */
void __sanitizer_on_print(const char *str);

void
__sanitizer_on_print(const char *str)
{
	size_t n = strlen(str);

	while (report_fd >= 0 && n > 0) {
		long w = syscall(SYS_write, report_fd, str, n);

		if (w <= 0)
			break;
		str += w;
		n -= (size_t)w;
	}
}
