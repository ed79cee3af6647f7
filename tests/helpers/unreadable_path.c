/* tests/helpers/unreadable_path.c: a path, or a connect's address, handed
 * to the kernel from a page mapped without read permission (PROT_WRITE
 * alone, or PROT_EXEC alone). The kernel's own copy of the argument reads
 * it (the hardware cannot refuse a read there: x86_64 and arm64 without
 * protection keys), where process_vm_readv refuses it: the write observer
 * must report the call all the same (observer_unreadable_page_reported).
 *
 *   unreadable_path MODE open PATH         openat(PATH, O_WRONLY|O_CREAT)
 *   unreadable_path MODE connect IP PORT   connect() to IP:PORT (IPv4)
 *
 * MODE: normal (PROT_READ|PROT_WRITE, the control), write, exec; split:
 * the argument starts 8 bytes before the end of a readable page and ends
 * in the next, mapped PROT_WRITE alone (process_vm_readv then reads short,
 * not nothing). Prints "MODE WHAT: ok" or "MODE WHAT: ERRNO-NAME"; EFAULT
 * means the kernel could not read the page either (nothing to report). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	char *map, *page;
	int prot, r, split;

	if (argc < 4)
		return fprintf(stderr, "usage: unreadable_path normal|write|exec|split open PATH | connect IP PORT\n"), 2;
	split = !strcmp(argv[1], "split");
	prot = !strcmp(argv[1], "write") || split ? PROT_WRITE : !strcmp(argv[1], "exec") ? PROT_EXEC : PROT_READ | PROT_WRITE;
	map = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return perror("mmap"), 2;
	page = split ? map + 4096 - 8 : map;
	if (!strcmp(argv[2], "open")) {
		snprintf(page, 4096, "%s", argv[3]);
	} else {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argc > 4 ? argv[4] : "0")) };

		if (inet_pton(AF_INET, argv[3], &sa.sin_addr) != 1)
			return fprintf(stderr, "unreadable_path: %s is not an IPv4 address\n", argv[3]), 2;
		memcpy(page, &sa, sizeof(sa));
	}
	if (mprotect(split ? map + 4096 : map, 4096, prot) < 0)
		return perror("mprotect"), 2;
	if (!strcmp(argv[2], "open")) {
		r = openat(AT_FDCWD, page, O_WRONLY | O_CREAT, 0644);
	} else {
		int s = socket(AF_INET, SOCK_STREAM, 0);

		r = s < 0 ? -1 : connect(s, (struct sockaddr *)page, sizeof(struct sockaddr_in));
	}
	printf("%s %s: %s\n", argv[1], argv[2], r >= 0 ? "ok" : errno == EFAULT ? "EFAULT" : errno == EROFS ? "EROFS" :
	    errno == EACCES ? "EACCES" : errno == ENETUNREACH ? "ENETUNREACH" : errno == ENOENT ? "ENOENT" : "other");
	return 0;
}
