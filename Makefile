# sbx: one C file, nothing beyond libc.  `make` builds, `make test` tests.
CC      ?= cc
CFLAGS  ?= -O2 -Wall -Wextra
PREFIX  ?= /usr/local
DESTDIR ?=
CROSS   ?= aarch64-linux-gnu-gcc

all: sbx

# Static with musl when musl-gcc is there (Debian: musl-tools): a run starts two sbx
# processes, and a dynamically linked one spends about 0.7 ms of each loading libc
# (docs/BENCHMARKS.md). Otherwise $(CC), dynamically linked; `cc -o sbx sbx.c` works too. SBX_CC=cc
# forces the second.
MUSL_CC ?= $(shell command -v musl-gcc 2>/dev/null)
SBX_CC  ?= $(if $(MUSL_CC),$(MUSL_CC) -static,$(CC))
sbx: sbx.c seccomp_bpf.h
	$(SBX_CC) $(CFLAGS) -o $@ sbx.c
	@echo "sbx: built with $(SBX_CC)$(if $(MUSL_CC),, (dynamically linked: apt-get install musl-tools for a static sbx))"

# Fully static with musl (Debian: musl-tools): copy one file onto any Linux.
static: sbx-static
sbx-static: sbx.c seccomp_bpf.h
	musl-gcc -static -O2 -Wall -Wextra -o $@ sbx.c

# arm64 (Debian: gcc-aarch64-linux-gnu); runs under qemu-aarch64-static.
cross: sbx-aarch64
sbx-aarch64: sbx.c seccomp_bpf.h
	$(CROSS) -static -O2 -Wall -Wextra -o $@ sbx.c

tests/unit: tests/unit.c tests/sexp.h sbx.c seccomp_bpf.h
	$(CC) -O1 -g -Wall -Wextra -o $@ tests/unit.c

# The macOS path compiles (and its pure parts are tested) on Linux too.
tests/unit-macos: tests/unit.c tests/sexp.h sbx.c seccomp_bpf.h
	$(CC) -O1 -g -Wall -Wextra -DSBX_FORCE_MACOS -o $@ tests/unit.c

# The stand-ins test.sh puts first in PATH for sbx-macsim (tests/macsim.tests.sh): a
# sandbox-exec that runs the command under the Linux sbx, and a log that follows its events.
tests/macsim/bin/sandbox-exec: tests/macsim/sandbox-exec.c
	@mkdir -p tests/macsim/bin
	$(CC) -O2 -Wall -Wextra -o $@ tests/macsim/sandbox-exec.c

tests/macsim/bin/log: tests/macsim/log
	@mkdir -p tests/macsim/bin
	cp tests/macsim/log $@ && chmod +x $@

macsim-standins: tests/macsim/bin/sandbox-exec tests/macsim/bin/log

unit: tests/unit tests/unit-macos
	./tests/unit
	./tests/unit-macos

# The macOS runner, built on Linux (-DSBX_FORCE_MACOS): test.sh runs it with
# stand-ins for sandbox-exec and log (tests/macsim/).
macos-sim: sbx-macsim tests/macsim/bin/sandbox-exec tests/macsim/bin/log
sbx-macsim: sbx.c seccomp_bpf.h
	$(CC) $(CFLAGS) -DSBX_FORCE_MACOS -o $@ sbx.c

test: sbx
	./test.sh

# Planted regressions (tests/mutants.sh): each of a table of small patches to sbx.c, built
# and run against the tests named to catch it. Not part of `make test`: ~11 minutes as root.
mutants:
	./tests/mutants.sh

# The man page is generated from the option and directive tables.
sbx.1: sbx
	./sbx --print=man > $@

install: sbx
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 sbx $(DESTDIR)$(PREFIX)/bin/sbx
	install -m 0644 sbx.1 $(DESTDIR)$(PREFIX)/share/man/man1/sbx.1

# Opt-in: srt as a symlink to sbx, which then takes srt's command line
# (docs/DESIGN.md, "srt's command line"). An srt that is there already (npm's) is left alone.
install-srt-link: install
	@l=$(DESTDIR)$(PREFIX)/bin/srt; if { [ -e "$$l" ] || [ -L "$$l" ]; } && [ "$$(readlink "$$l")" != sbx ]; then \
		echo "$$l exists and is not sbx's link: left alone (remove it first)" >&2; exit 1; fi
	ln -sfn sbx $(DESTDIR)$(PREFIX)/bin/srt

clean:
	rm -f sbx sbx-static sbx-aarch64 sbx-macsim tests/unit tests/unit-macos sbx-asan tests/unit-asan
	rm -rf tests/macsim/bin

.PHONY: all static cross macos-sim macsim-standins unit test mutants install install-srt-link clean

# ---- Sanitizers: `make test-asan` ---------------------------------------
# The unit tests (tests/unit-asan) and test.sh's proxy, allow_host_port and
# explain_decisions tests against sbx-asan, built with ASan+UBSan by $(CC)
# (gcc on Debian: libasan8 and libubsan1 come with gcc-12; its runtime
# symbolizes in-process, which the proxy needs: its filter refuses execve,
# so clang's external llvm-symbolizer cannot run there; ASAN_CC=clang works
# too). Root runs the proxy tests (network namespaces); about 1-2 minutes.
# sbx-asan links tests/asan_hooks.c: each process copies its reports (also
# on its stderr) to a FIFO that tests/asan-run.sh drains, prints and fails
# on. Not log_path: the runtime opens that file at the first report, when
# the proxy may no longer open files for writing and the sandbox sees the
# log dir read-only; and the tests remove the files stderr goes to.
# ASAN_OPTIONS, why each:
#   detect_leaks=1      LeakSanitizer at exit (sbx on the host, sbx --connect in
#                       the sandbox: both can ptrace their own threads); the
#                       proxy and sbx-init end in _exit or SIGKILL, never in it
#   quarantine_size_mb=8  the default 256 MiB quarantine grows the proxy's RSS by
#                       ~300 MiB in proxy_load_and_slowloris (limit 20 MiB); with
#                       8 by ~10 MiB (plain build ~1), still a use-after-free window
#   exitcode=99         a process a sanitizer stopped is not mistaken for one of
#                       sbx's own statuses (1, 125-127) by a test's expect_rc
#   abort_on_error=0    exit, not SIGABRT (no core, no 128+6 status)
# UBSAN_OPTIONS: print_stacktrace=1 (where, not only what); halt_on_error=1
# as -fno-sanitize-recover=all: the first report stops the process; and
# exitcode=99 again: gcc's libubsan is a runtime apart, with its own flags.
ASAN_CC      ?= $(CC)
ASAN_CFLAGS  ?= -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1 -Wall -Wextra
ASAN_ENV      = ASAN_OPTIONS=detect_leaks=1:quarantine_size_mb=8:exitcode=99:abort_on_error=0 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=99
ASAN_TESTS   ?= proxy allow_host_port explain_decisions

sbx-asan: sbx.c seccomp_bpf.h tests/asan_hooks.c
	$(ASAN_CC) $(ASAN_CFLAGS) -o $@ sbx.c tests/asan_hooks.c

tests/unit-asan: tests/unit.c sbx.c seccomp_bpf.h
	$(ASAN_CC) $(ASAN_CFLAGS) -o $@ tests/unit.c

test-asan: tests/unit-asan sbx-asan
	$(ASAN_ENV) ./tests/unit-asan
	$(ASAN_ENV) ./tests/asan-run.sh ./sbx-asan $(ASAN_TESTS)

.PHONY: test-asan

# ---- Fuzzing: tests/fuzz_NAME.c for each NAME in FUZZ_NAMES -------------
# Each target replays a corpus when built without libFuzzer (it includes
# tests/fuzz_main.c); its seeds are tests/corpus/NAME/, its dictionary
# tests/corpus/NAME.dict.
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
FUZZ_NAMES   = json policy pattern http socks gitcfg wire seatbelt seatbelt_log dns
FUZZ_BINS    = $(FUZZ_NAMES:%=tests/fuzz_%.bin)
FUZZ_REPLAYS = $(FUZZ_NAMES:%=tests/fuzz_%_replay.bin)

fuzz: $(FUZZ_BINS)

$(FUZZ_BINS): tests/fuzz_%.bin: tests/fuzz_%.c tests/fuzz.h tests/sexp.h sbx.c seccomp_bpf.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_EXTRA) -o $@ tests/fuzz_$*.c

$(FUZZ_REPLAYS): tests/fuzz_%_replay.bin: tests/fuzz_%.c tests/fuzz.h tests/sexp.h tests/fuzz_main.c sbx.c seccomp_bpf.h
	$(CC) $(FUZZ_REPLAY_CFLAGS) $(FUZZ_EXTRA) -o $@ tests/fuzz_$*.c

fuzz-replay: $(FUZZ_REPLAYS)
	for t in $(FUZZ_NAMES); do ./tests/fuzz_$${t}_replay.bin tests/corpus/$$t/ || exit 1; done

fuzz-clean:
	rm -f $(FUZZ_BINS) $(FUZZ_REPLAYS)

.PHONY: fuzz fuzz-replay fuzz-clean
