# sbx: one C file, nothing beyond libc.  `make` builds, `make test` tests.
CC      ?= cc
CFLAGS  ?= -O2 -Wall -Wextra
PREFIX  ?= /usr/local
DESTDIR ?=
CROSS   ?= aarch64-linux-gnu-gcc

all: sbx

sbx: sbx.c seccomp_bpf.h
	$(CC) $(CFLAGS) -o $@ sbx.c

# Fully static with musl (Debian: musl-tools): copy one file onto any Linux.
static: sbx-static
sbx-static: sbx.c seccomp_bpf.h
	musl-gcc -static -O2 -Wall -Wextra -o $@ sbx.c

# arm64 (Debian: gcc-aarch64-linux-gnu); runs under qemu-aarch64-static.
cross: sbx-aarch64
sbx-aarch64: sbx.c seccomp_bpf.h
	$(CROSS) -static -O2 -Wall -Wextra -o $@ sbx.c

tests/unit: tests/unit.c sbx.c seccomp_bpf.h
	$(CC) -O1 -g -Wall -Wextra -o $@ tests/unit.c

# The macOS path compiles (and its pure parts are tested) on Linux too.
tests/unit-macos: tests/unit.c sbx.c seccomp_bpf.h
	$(CC) -O1 -g -Wall -Wextra -DSBX_FORCE_MACOS -o $@ tests/unit.c

unit: tests/unit tests/unit-macos
	./tests/unit
	./tests/unit-macos

test: sbx
	./test.sh

# The man page is generated from the option and directive tables.
sbx.1: sbx
	./sbx --print=man > $@

install: sbx
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 sbx $(DESTDIR)$(PREFIX)/bin/sbx
	install -m 0644 sbx.1 $(DESTDIR)$(PREFIX)/share/man/man1/sbx.1

clean:
	rm -f sbx sbx-static sbx-aarch64 tests/unit tests/unit-macos

.PHONY: all static cross unit test install clean
