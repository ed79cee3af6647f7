/* racepath - tries to write a file the write observer did not see being written, for the
 * audit's attribution tests (tests/git.tests.sh). The observer reads a call's path while the
 * call waits; the kernel reads it again once the observer answers. This program opens a path
 * whose bytes another task keeps switching between DECOY and REAL (the same length), until an
 * open lands on REAL, then writes PAYLOAD there (through that descriptor: no other call names
 * REAL) and makes it executable with fchmod (which the observer does not trap).
 *
 *   racepath threads DECOY REAL PAYLOAD   a second thread of this process switches the bytes
 *   racepath shared DECOY REAL PAYLOAD    a forked process switches them, in a MAP_SHARED page
 *                                         (every process single-threaded)
 *
 * Prints "landed N" (after N tries) or "missed N"; exit 0 either way (the test judges the
 * audit, which must act whether or not the race was won), 2 on a usage or setup error. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRIES	200000
#define SECS	20

static char *buf;			/* the path the opens name */
static const char *decoy, *real;
static volatile int stop;

static void
flip_forever(void)
{
	size_t n = strlen(real) + 1;

	while (!stop) {
		memcpy(buf, real, n);
		for (volatile int i = 0; i < 50; i++)
			;
		memcpy(buf, decoy, n);
		for (volatile int i = 0; i < 200; i++)
			;
	}
}

static void *
flipper(void *arg)
{
	(void)arg;
	flip_forever();
	return NULL;
}

int
main(int argc, char **argv)
{
	struct stat want, got;
	pthread_t t;
	pid_t child = -1;
	time_t end = time(NULL) + SECS;
	int i, fd = -1, landed = 0;

	if (argc != 5 || strlen(argv[2]) != strlen(argv[3]) || (strcmp(argv[1], "threads") && strcmp(argv[1], "shared"))) {
		fprintf(stderr, "usage: racepath threads|shared DECOY REAL PAYLOAD (DECOY and REAL the same length)\n");
		return 2;
	}
	decoy = argv[2];
	real = argv[3];
	/* threads: private memory (only the other thread can change it); shared: a page both
	 * processes map */
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	    (strcmp(argv[1], "shared") == 0 ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 2;
	memcpy(buf, decoy, strlen(decoy) + 1);
	if (strcmp(argv[1], "threads") == 0) {
		if (pthread_create(&t, NULL, flipper, NULL) != 0)
			return 2;
	} else if ((child = fork()) == 0) {
		flip_forever();
		_exit(0);
	} else if (child < 0) {
		return 2;
	}
	for (i = 0; i < TRIES && time(NULL) < end; i++) {
		fd = open(buf, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			continue;
		if (stat(real, &want) == 0 && fstat(fd, &got) == 0 && want.st_ino == got.st_ino && want.st_dev == got.st_dev) {
			landed = 1;
			break;
		}
		close(fd);
		fd = -1;
	}
	stop = 1;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	} else {
		pthread_join(t, NULL);
	}
	if (landed) {
		ssize_t w = write(fd, argv[4], strlen(argv[4]));

		(void)w;
		fchmod(fd, 0755);
		close(fd);
	}
	printf("%s %d\n", landed ? "landed" : "missed", i);
	return 0;
}
