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

# ---- Fuzzing: tests/fuzz_{json,policy,pattern}.c ----------------------
# `make fuzz` builds the libFuzzer targets (clang; Debian: clang and
# libclang-rt-14-dev). Run one over a scratch copy of its seeds, e.g.
#   cp -r tests/corpus/policy /tmp/c && ./tests/fuzz_policy.bin -max_len=4096 \
#       -dict=tests/corpus/policy.dict -max_total_time=600 /tmp/c
# FUZZ_EXTRA adds flags to both builds (e.g. -DFUZZ_NO_HOSTS for fuzz_pattern).
# `make fuzz-replay` replays tests/corpus/ with a plain compiler (no libFuzzer).
FUZZ_CC     ?= clang
FUZZ_CFLAGS ?= -g -O1 -Wall -Wextra -fsanitize=fuzzer,address,undefined -DSBX_LIBFUZZER
FUZZ_EXTRA  ?=
FUZZ_REPLAY_CFLAGS ?= -O1 -g -Wall -Wextra
FUZZ_NAMES   = json policy pattern
FUZZ_BINS    = $(FUZZ_NAMES:%=tests/fuzz_%.bin)
FUZZ_REPLAYS = $(FUZZ_NAMES:%=tests/fuzz_%_replay.bin)

fuzz: $(FUZZ_BINS)

$(FUZZ_BINS): tests/fuzz_%.bin: tests/fuzz_%.c sbx.c seccomp_bpf.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_EXTRA) -o $@ tests/fuzz_$*.c

$(FUZZ_REPLAYS): tests/fuzz_%_replay.bin: tests/fuzz_%.c tests/fuzz_main.c sbx.c seccomp_bpf.h
	$(CC) $(FUZZ_REPLAY_CFLAGS) $(FUZZ_EXTRA) -o $@ tests/fuzz_$*.c

fuzz-replay: $(FUZZ_REPLAYS)
	for t in $(FUZZ_NAMES); do ./tests/fuzz_$${t}_replay.bin tests/corpus/$$t/ || exit 1; done

fuzz-clean:
	rm -f $(FUZZ_BINS) $(FUZZ_REPLAYS)

.PHONY: fuzz fuzz-replay fuzz-clean
