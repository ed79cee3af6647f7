/* fsop: tiny probe used by ../../test.sh inside the sandbox.
 *
 * Performs single raw system calls (no fallbacks, unlike mv/cp) and reports
 * the outcome as "ok" or the errno name (EROFS, EXDEV, EBUSY, ...).
 *
 *   fsop OP ARGS...        run one operation, print its result
 *   fsop -                 batch: read lines "LABEL OP ARGS..." from stdin,
 *                          print "LABEL RESULT" per line (args are split on
 *                          blanks, so paths must not contain spaces)
 *   fsop exec-dfl CMD...   reset every signal to SIG_DFL, unblock all, exec CMD
 *                          (so a background job started by a shell does not
 *                          inherit ignored SIGINT/SIGQUIT)
 *
 * Operations (each is one syscall unless noted):
 *   create P      open(O_WRONLY|O_CREAT|O_EXCL) + write "new\n"
 *   write P       open(O_WRONLY|O_CREAT|O_TRUNC) + write "new\n"
 *   append P      open(O_WRONLY|O_APPEND) + write "+\n"
 *   append-linked P   append, printing "ok:unlinked" when the file had no link left
 *                 once open (another program was removing it)
 *   trunc P       open(O_WRONLY|O_TRUNC)
 *   truncate P    truncate(P, 0)
 *   rename A B    rename(A, B)
 *   unlink P      unlink(P)
 *   mkdir P       mkdir(P, 0755)
 *   rmdir P       rmdir(P)
 *   chmod P MODE  chmod(P, octal MODE)
 *   symlink T P   symlink(T, P)
 *   link A B      link(A, B)
 *   exists P      lstat(P)
 *   read P        prints "ok:CONTENT" (first 200 bytes, one trailing newline
 *                 dropped, other newlines shown as \n)
 *   ls D          prints "ok:a,b,c" (sorted names, without . and ..)
 *   mode P        prints "ok:0700" (permission bits from stat)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *ename(int e)
{
	static char buf[32];
	switch (e) {
	case EROFS: return "EROFS";
	case EXDEV: return "EXDEV";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case ENOTEMPTY: return "ENOTEMPTY";
	case ELOOP: return "ELOOP";
	case EINVAL: return "EINVAL";
	case ENOSPC: return "ENOSPC";
	case ETXTBSY: return "ETXTBSY";
	case EMLINK: return "EMLINK";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	}
	snprintf(buf, sizeof buf, "E%d", e);
	return buf;
}

static int wr(const char *p, int flags, const char *data)
{
	int fd = open(p, flags, 0644);
	if (fd < 0)
		return -1;
	if (data && write(fd, data, strlen(data)) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs one op; writes the result (without newline) to out. Returns 0 if ok. */
static int op(int argc, char **argv, char *out, size_t outsz)
{
	const char *o = argv[0];
	int r = -1;
	errno = 0;
#define NEED(n) do { if (argc < (n) + 1) { snprintf(out, outsz, "USAGE"); return 2; } } while (0)
	if (!strcmp(o, "create")) { NEED(1); r = wr(argv[1], O_WRONLY | O_CREAT | O_EXCL, "new\n"); }
	else if (!strcmp(o, "write")) { NEED(1); r = wr(argv[1], O_WRONLY | O_CREAT | O_TRUNC, "new\n"); }
	else if (!strcmp(o, "append")) { NEED(1); r = wr(argv[1], O_WRONLY | O_APPEND, "+\n"); }
	else if (!strcmp(o, "append-linked")) {
		/* append, but say when the file had no link left once open: another
		 * program was removing it (the kernel had taken a mount off the
		 * name first), so what was written went nowhere anyone reads */
		struct stat st;
		int fd;
		NEED(1);
		if ((fd = open(argv[1], O_WRONLY | O_APPEND)) >= 0) {
			int gone = fstat(fd, &st) == 0 && st.st_nlink == 0;
			r = write(fd, "+\n", 2) == 2 ? 0 : -1;
			close(fd);
			if (r == 0 && gone) {
				snprintf(out, outsz, "ok:unlinked");
				return 0;
			}
		}
	}
	else if (!strcmp(o, "trunc")) { NEED(1); r = wr(argv[1], O_WRONLY | O_TRUNC, NULL); }
	else if (!strcmp(o, "truncate")) { NEED(1); r = truncate(argv[1], 0); }
	else if (!strcmp(o, "rename")) { NEED(2); r = rename(argv[1], argv[2]); }
	else if (!strcmp(o, "unlink")) { NEED(1); r = unlink(argv[1]); }
	else if (!strcmp(o, "mkdir")) { NEED(1); r = mkdir(argv[1], 0755); }
	else if (!strcmp(o, "rmdir")) { NEED(1); r = rmdir(argv[1]); }
	else if (!strcmp(o, "chmod")) { NEED(2); r = chmod(argv[1], (mode_t)strtol(argv[2], NULL, 8)); }
	else if (!strcmp(o, "symlink")) { NEED(2); r = symlink(argv[1], argv[2]); }
	else if (!strcmp(o, "link")) { NEED(2); r = link(argv[1], argv[2]); }
	else if (!strcmp(o, "exists")) { struct stat st; NEED(1); r = lstat(argv[1], &st); }
	else if (!strcmp(o, "mode")) {
		struct stat st;
		NEED(1);
		if (stat(argv[1], &st) == 0) {
			snprintf(out, outsz, "ok:%04o", (unsigned)(st.st_mode & 07777));
			return 0;
		}
	} else if (!strcmp(o, "read")) {
		char buf[201];
		ssize_t n;
		int fd;
		NEED(1);
		fd = open(argv[1], O_RDONLY);
		if (fd >= 0) {
			size_t k = 0, i;
			n = read(fd, buf, 200);
			close(fd);
			if (n >= 0) {
				if (n > 0 && buf[n - 1] == '\n')
					n--;
				k = (size_t)snprintf(out, outsz, "ok:");
				for (i = 0; i < (size_t)n && k + 3 < outsz; i++) {
					if (buf[i] == '\n') { out[k++] = '\\'; out[k++] = 'n'; }
					else out[k++] = buf[i];
				}
				out[k] = 0;
				return 0;
			}
		}
	} else if (!strcmp(o, "ls")) {
		DIR *d;
		NEED(1);
		d = opendir(argv[1]);
		if (d) {
			char *names[512];
			int cnt = 0, i;
			size_t k;
			struct dirent *de;
			while ((de = readdir(d)) && cnt < 512)
				if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
					names[cnt++] = strdup(de->d_name);
			closedir(d);
			qsort(names, (size_t)cnt, sizeof *names, cmpstr);
			k = (size_t)snprintf(out, outsz, "ok:");
			for (i = 0; i < cnt; i++) {
				if (k < outsz)
					k += (size_t)snprintf(out + k, outsz - k, "%s%s", i ? "," : "", names[i]);
				free(names[i]);
			}
			return 0;
		}
	} else {
		snprintf(out, outsz, "BADOP");
		return 2;
	}
	if (r == 0) {
		snprintf(out, outsz, "ok");
		return 0;
	}
	snprintf(out, outsz, "%s", ename(errno));
	return 1;
}

int main(int argc, char **argv)
{
	char out[4096];
	if (argc < 2) {
		fprintf(stderr, "usage: fsop OP ARGS... | fsop - | fsop exec-dfl CMD...\n");
		return 2;
	}
	if (!strcmp(argv[1], "exec-dfl")) {
		sigset_t all;
		int s;
		if (argc < 3)
			return 2;
		for (s = 1; s < NSIG; s++)
			signal(s, SIG_DFL);
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		return 127;
	}
	if (!strcmp(argv[1], "-")) {
		char line[8192];
		int worst = 0;
		while (fgets(line, sizeof line, stdin)) {
			char *av[16];
			int ac = 0, r;
			char *tok, *save = NULL;
			for (tok = strtok_r(line, " \t\n", &save); tok && ac < 15; tok = strtok_r(NULL, " \t\n", &save))
				av[ac++] = tok;
			if (ac == 0 || av[0][0] == '#')
				continue;
			if (ac < 2) {
				printf("%s USAGE\n", av[0]);
				worst = 2;
				continue;
			}
			av[ac] = NULL;
			r = op(ac - 1, av + 1, out, sizeof out);
			printf("%s %s\n", av[0], out);
			if (r > worst)
				worst = r;
		}
		return worst == 2 ? 2 : 0;
	}
	{
		int r = op(argc - 1, argv + 1, out, sizeof out);
		printf("%s\n", out);
		return r;
	}
}
