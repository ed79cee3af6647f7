/* nprocbomb OUTSIDE INSIDE: fork until the uid has no process left to
 * spare, then open OUTSIDE for writing (the first write-intent call,
 * which needs the write observer sbx has not forked yet) while the
 * processes are given back a second later; then open INSIDE. Prints what
 * each open did. tests/observer.tests.sh runs it as nobody under
 * RLIMIT_NPROC. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

static pid_t kids[4096];
static int nkids;

static void
release(int sig)
{
	(void)sig;
	for (int k = 0; k < nkids; k++)
		kill(kids[k], SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
}

int
main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = release, .sa_flags = SA_RESTART };
	int fd;

	if (argc != 3)
		return fprintf(stderr, "usage: nprocbomb OUTSIDE INSIDE\n"), 2;
	for (; nkids < 4096; nkids++) {
		pid_t p = fork();

		if (p < 0)
			break;
		if (p == 0) {
			pause();
			_exit(0);
		}
		kids[nkids] = p;
	}
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);	/* the processes go back a second later */
	fd = open(argv[1], O_WRONLY | O_CREAT, 0644);
	printf("forked %d; open(%s): %s\n", nkids, argv[1], fd >= 0 ? "ok" : strerror(errno));
	while (wait(NULL) > 0)
		;
	fd = open(argv[2], O_WRONLY | O_CREAT, 0644);
	printf("after: open(%s): %s\n", argv[2], fd >= 0 ? "ok" : strerror(errno));
	return 0;
}
