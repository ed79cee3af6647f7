/* cwdrace - tries to write a file in a directory the write observer did not see the call name,
 * for the attack tests of the walk below the scan's depth (tests/scan-cache.tests.sh). A child
 * made by clone(CLONE_VFORK|CLONE_FS) shares its parent's cwd even after it execs (exec drops a
 * shared memory and descriptor table, not a shared cwd), and its parent no longer waits then.
 * One of the two (the opener) opens NAME (relative: O_WRONLY|O_CREAT|O_TRUNC) from the shared
 * cwd, which is DECOY (outside every writable root: the open fails) while the observer reads
 * it; the other (the flipper) moves the shared cwd to REAL (chdir, which no program holds)
 * while the call waits for the observer's answer, after a delay that shrinks each try (too
 * late: harmless, the open fails in DECOY; too early: the observer reads REAL), and back to
 * DECOY before the next try. On landing the opener writes TEXT there.
 *
 *   cwdrace child DECOY REAL NAME TEXT    the exec'd child opens, its parent moves the cwd
 *   cwdrace parent DECOY REAL NAME TEXT   the parent opens, its exec'd child moves the cwd
 *
 * Prints "landed N" (after N tries) or "missed N"; exit 0 either way (the test judges the audit,
 * which must act whether or not the race was won), 2 on a usage or setup error. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRIES	4000

static long long
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* one open a byte from go, its result ('y' or 'n') on done; "r" on done first */
static int
opener(int go, int done, const char *name, const char *text)
{
	char c;
	int null = open("/dev/null", O_WRONLY);	/* the observer started: no walk for it */

	if (null < 0 || write(done, "r", 1) != 1)
		return 2;
	close(null);
	while (read(go, &c, 1) == 1) {
		int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			if (write(fd, text, strlen(text)) < 0)
				return 2;
			close(fd);
			printf("landed\n");
			fflush(stdout);
		}
		if (write(done, fd >= 0 ? "y" : "n", 1) != 1)
			return 2;
	}
	return 0;
}

/* Is the opener in the open now (held by the observer)? /proc/PID/syscall: "2 " or "257 ". */
static int
in_open(const char *path)
{
	char b[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (r <= 0)
		return 0;
	b[r] = '\0';
	return strncmp(b, "257 ", 4) == 0 || strncmp(b, "2 ", 2) == 0;
}

static int
flipper(int go, int done, const char *decoy, const char *real, int pid)
{
	char sys[64], c;
	int tries;

	snprintf(sys, sizeof(sys), "/proc/%d/syscall", pid);
	if (read(done, &c, 1) != 1 || c != 'r')
		return 2;
	for (tries = 1; tries <= TRIES; tries++) {
		/* the delay after the call is seen waiting: from 99 us down to 0, again and again */
		long long delay = (TRIES - tries) % 100 * 1000LL, t;

		if (write(go, "g", 1) != 1)
			break;
		t = now_ns();
		while (!in_open(sys) && now_ns() - t < 50000000LL)
			;
		t = now_ns();
		while (now_ns() - t < delay)
			;
		if (chdir(real) < 0)
			return 2;
		if (read(done, &c, 1) != 1)
			break;
		if (chdir(decoy) < 0)
			return 2;
		if (c == 'y') {
			fprintf(stderr, "landed %d\n", tries);
			return 0;
		}
	}
	fprintf(stderr, "missed %d\n", tries);
	return 0;
}

int
main(int argc, char **argv)
{
	int go[2], done[2], parent_opens;
	char a[16], b[16], p[16];
	pid_t pid, self = getpid();

	if (argc == 7 && strcmp(argv[1], "--opener") == 0)
		return opener(atoi(argv[2]), atoi(argv[3]), argv[4], argv[5]);
	if (argc == 7 && strcmp(argv[1], "--flipper") == 0)
		return flipper(atoi(argv[2]), atoi(argv[3]), argv[4], argv[5], atoi(argv[6]));
	if (argc != 6 || (strcmp(argv[1], "child") && strcmp(argv[1], "parent")) || pipe(go) < 0 ||
	    pipe(done) < 0 || chdir(argv[2]) < 0) {
		fprintf(stderr, "usage: cwdrace child|parent DECOY REAL NAME TEXT\n");
		return 2;
	}
	parent_opens = strcmp(argv[1], "parent") == 0;
	if (parent_opens) {	/* seen by the observer before the child comes */
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			close(null);
	}
	pid = (pid_t)syscall(SYS_clone, CLONE_VFORK | CLONE_FS | SIGCHLD, 0, 0, 0, 0);
	if (pid < 0) {
		perror("clone");
		return 2;
	}
	if (pid == 0) {
		if (parent_opens) {	/* the child flips: go's write end, done's read end */
			close(go[0]);
			close(done[1]);
			snprintf(a, sizeof(a), "%d", go[1]);
			snprintf(b, sizeof(b), "%d", done[0]);
			snprintf(p, sizeof(p), "%d", (int)self);
			execl("/proc/self/exe", "cwdrace", "--flipper", a, b, argv[2], argv[3], p,
			    (char *)NULL);
		} else {
			close(go[1]);
			close(done[0]);
			snprintf(a, sizeof(a), "%d", go[0]);
			snprintf(b, sizeof(b), "%d", done[1]);
			execl("/proc/self/exe", "cwdrace", "--opener", a, b, argv[4], argv[5], "-",
			    (char *)NULL);
		}
		_exit(127);
	}
	if (parent_opens) {
		close(go[1]);
		close(done[0]);
		opener(go[0], done[1], argv[4], argv[5]);
		close(go[0]);
		close(done[1]);
	} else {
		close(go[0]);
		close(done[1]);
		flipper(go[1], done[0], argv[2], argv[3], (int)pid);
		close(go[1]);
	}
	waitpid(pid, NULL, 0);
	return 0;
}
