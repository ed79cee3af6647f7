/* 1,000,000 raw getpid() calls (syscall(2), so libc cannot cache them):
 * every one passes through the seccomp filter inside sbx. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i, sum = 0;

	for (i = 0; i < n; i++)
		sum += syscall(SYS_getpid);
	return sum == 0;
}
