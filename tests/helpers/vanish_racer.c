/* vanish_racer: another program at work in directories a sandbox may write
 * (tests/hardening.tests.sh, vanish_stress): it keeps creating and removing
 * dangerous dotfiles and git repositories (.git with hooks and a config),
 * as a shell in /tmp or a `git checkout` in the project does, so that names
 * sbx planned vanish, appear and come back between its scan and its mounts.
 *
 *   vanish_racer RUNFILE LOG PERIOD_US DIR...
 *
 * RUNFILE holds the number of the run in progress (the test writes it before
 * each run). Each dotfile and repository of each DIR is changed at most once
 * a run (created when missing, removed when there), in a random order, one
 * change every PERIOD_US; so what a run's command finds is either what sbx
 * covered, or a name this program made during the run (logged), never a name
 * removed and made again behind the command's back after the mounts (the
 * kernel takes a mount off a name another namespace removes: nothing could
 * hold that one). Each creation is logged to LOG first ("C PATH RUN"), then
 * made. It stops when DIR/.racer-stop exists (the first DIR), or when the
 * test that started it has gone (its parent). It never touches a directory
 * it did not make: sbx's placeholders stay.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const dotfiles[] = { ".bash_profile", ".bashrc", ".zshrc", ".gitconfig", ".profile",
	".gitmodules", ".mcp.json", ".zprofile", ".ripgreprc" };
#define NREPOS 4
#define NITEMS (sizeof(dotfiles) / sizeof(*dotfiles) + NREPOS)
#define MAXDIRS 4

static void
put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);

	if (fd >= 0) {
		(void)!write(fd, text, strlen(text));
		close(fd);
	}
}

/* A repository as `git init` and a hook leave it. */
static void
make_repo(const char *r)
{
	char p[1100];

	if (mkdir(r, 0755) < 0 && errno != EEXIST)
		return;
	snprintf(p, sizeof(p), "%s/.git", r);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/.git/HEAD", r);
	put(p, "ref: refs/heads/main\n");
	snprintf(p, sizeof(p), "%s/.git/config", r);
	put(p, "[core]\n\trepositoryformatversion = 0\n");
	snprintf(p, sizeof(p), "%s/.git/hooks", r);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/.git/hooks/pre-commit", r);
	put(p, "#!/bin/sh\nexit 0\n");
}

/* Remove what make_repo made, and nothing else: the directory stays when
 * sbx holds placeholders in it (its top is a work tree's). */
static void
remove_repo(const char *r)
{
	static const char *const parts[] = { "/.git/hooks/pre-commit", "/.git/hooks", "/.git/config", "/.git/HEAD",
		"/.git", "" };
	char p[1100];

	for (size_t k = 0; k < sizeof(parts) / sizeof(*parts); k++) {
		snprintf(p, sizeof(p), "%s%s", r, parts[k]);
		if (unlink(p) < 0)
			rmdir(p);
	}
}

static long
run_now(const char *runfile)
{
	char b[32] = { 0 };
	int fd = open(runfile, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;

	if (fd >= 0)
		close(fd);
	return n > 0 ? atol(b) : -1;
}

int
main(int argc, char **argv)
{
	long touched[MAXDIRS][NITEMS], run, period;
	int ndirs = argc - 4, logfd;
	pid_t parent = getppid();
	char stop[4096];

	if (argc < 5 || ndirs > MAXDIRS) {
		fprintf(stderr, "usage: vanish_racer RUNFILE LOG PERIOD_US DIR...\n");
		return 2;
	}
	period = atol(argv[3]);
	logfd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (logfd < 0)
		return 2;
	memset(touched, 0xff, sizeof(touched));	/* -1: not this run */
	srand((unsigned)getpid() ^ (unsigned)time(NULL));
	snprintf(stop, sizeof(stop), "%s/.racer-stop", argv[4]);
	while (access(stop, F_OK) < 0 && getppid() == parent) {
		int d = rand() % ndirs, i = rand() % (int)NITEMS;
		const char *dir = argv[4 + d];
		char path[1024], line[1200];
		struct stat st;

		if ((run = run_now(argv[1])) < 0 || touched[d][i] == run) {
			usleep(200);
			continue;
		}
		touched[d][i] = run;
		if (i < (int)(sizeof(dotfiles) / sizeof(*dotfiles)))
			snprintf(path, sizeof(path), "%s/%s", dir, dotfiles[i]);
		else
			snprintf(path, sizeof(path), "%s/repo%d", dir, i - (int)(sizeof(dotfiles) / sizeof(*dotfiles)));
		if (strstr(path, "/repo")) {
			char head[1100];

			snprintf(head, sizeof(head), "%s/.git/HEAD", path);
			if (lstat(head, &st) == 0) {
				remove_repo(path);
			} else {
				snprintf(line, sizeof(line), "C %s %ld\n", path, run);
				(void)!write(logfd, line, strlen(line));
				make_repo(path);
			}
		} else if (lstat(path, &st) == 0) {
			if (S_ISREG(st.st_mode))	/* not sbx's placeholder directory */
				unlink(path);
		} else {
			snprintf(line, sizeof(line), "C %s %ld\n", path, run);
			(void)!write(logfd, line, strlen(line));
			put(path, "# racer\n");
		}
		usleep((useconds_t)period);
	}
	return 0;
}
