# SPDX-License-Identifier: BSD-3-Clause
# eventlog-socket
#
#   make          build/libeventlog-socket.a, build/fibber-c-main and the
#                 build/eventlog-socket command (client/)
#   make integration-test [INTEGRATION_TESTS="name ..."]
#                 the integration tests (some of them)
#   make check    every test: unit tests (plain and ASan/UBSan), symbol
#                 check, the libFuzzer targets built and run briefly
#                 (FUZZ_CHECK_SECONDS, 5, each; FUZZ_IN_CHECK=no leaves
#                 them out; UNIT_IN_CHECK=no, the unit tests), the static
#                 checks (LINT_IN_CHECK=no leaves them out), integration tests against the real GHC
#                 (GHC_FREE_IN_CHECK=no leaves out those that start no
#                 program built with GHC), the cabal package (make cabal-test alone)
#   make lint     the static checks: clang --analyze and cppcheck on the
#                 C, flake8, shellcheck, no tracker references (make
#                 analyze, cppcheck, flake8, shellcheck: one of them)
#   make install-test
#                 make install (staged and not), pkg-config with cc and
#                 ghc, README's C main built against the installed copy
#   make cabal-build
#                 the cabal package and the examples, offline (docs/haskell.md)
#   make demo     run fibber-c-main on a Unix socket, request a heap census
#                 from a client, and show what arrived
#   make check-ghc GHC=9.6|9.10
#                 the whole of `make check` with that GHC, in a Debian chroot
#   make bench    the benchmarks (bench/run.py): overhead on a real program,
#                 throughput, RTS-side cost, memory, latency, event walk,
#                 eventlog-socket record and top against a plain client
#                 (BENCH_ONLY=overhead,... for some of them, BENCH_REPS=N
#                 for N runs of each figure)
#   make check-loaded
#                 make check with stress-ng --cpu 4 beside it (a busy
#                 machine: load 6 on 2 cores); the hog is killed at the end
#   make soak [SOAK_MINUTES=30]
#                 the probe streaming that long to three clients
#                 (reconnecting, lossless, slow): memory, descriptors and
#                 the library's CPU judged flat (bench/soak.py)
#   make check-matrix
#                 make check on the host's GHC, then 9.6 and 9.10
#   make fuzz     libFuzzer on the parsers of what the RTS and clients
#                 write (tests/fuzz/), FUZZ_SECONDS (60) per target; make
#                 check runs the same targets on their starting inputs,
#                 and builds and runs them FUZZ_CHECK_SECONDS each
#   make install  the eventlog-socket command, the archive, the header,
#                 eventlog-socket.pc and the manual pages under PREFIX
#                 (/usr/local), staged under DESTDIR if set (BINDIR, LIBDIR,
#                 INCLUDEDIR, PKGCONFIGDIR, MANDIR for other layouts)
#   make uninstall
#                 remove exactly those files (same PREFIX and DESTDIR)
#
# Missing packages are installed first (scripts/ensure-deps.sh, apt-get),
# each target's own: make and make install only the build's, make demo the
# demo's, the test targets the tests' too (README, "Install").

# `make` alone builds (uninstall below would otherwise be the first target).
.DEFAULT_GOAL := all

BUILD ?= build
HC ?= ghc
CC ?= cc

# Installation directories (GNU conventions; DESTDIR stages a package).
# The version has one home, the cabal file; the .pc, the command's
# --version and the header's EVENTLOG_SOCKET_VERSION follow it
# (tests/check-version.sh).
VERSION := $(shell sed -n 's/^version:[[:space:]]*//p' ghc-eventlog-socket.cabal)
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR ?= $(PREFIX)/share/man
INSTALLED := $(DESTDIR)$(BINDIR)/eventlog-socket $(DESTDIR)$(LIBDIR)/libeventlog-socket.a $(DESTDIR)$(INCLUDEDIR)/eventlog_socket.h \
             $(DESTDIR)$(PKGCONFIGDIR)/eventlog-socket.pc \
             $(DESTDIR)$(MANDIR)/man1/eventlog-socket.1 $(DESTDIR)$(MANDIR)/man7/eventlog-socket.7

# Needs nothing built, so no dependency check either.
.PHONY: uninstall
uninstall:
	rm -f $(INSTALLED)

PUBLIC_TARGETS := all lib check check-loaded soak unit-test integration-test cabal-build cabal-test install-test \
                  symbols demo \
                  fixtures bench bench-programs format format-check install \
                  lint analyze cppcheck flake8 shellcheck

ifndef ES_DEPS_CHECKED
# Install what is missing, then run the real target in a sub-make, so that
# variables computed from ghc and pkg-config see the installed tools.
.PHONY: $(PUBLIC_TARGETS) clean
$(PUBLIC_TARGETS):
	@scripts/ensure-deps.sh $@
	@$(MAKE) --no-print-directory -j$(shell nproc 2>/dev/null || echo 2) ES_DEPS_CHECKED=1 $@
clean:
	rm -rf $(BUILD)

# Other GHC versions run in chroots (scripts/ghc-chroot.sh; needs root).
.PHONY: check-ghc check-matrix
check-ghc:
	@test -n "$(GHC)" || { echo "usage: make check-ghc GHC=9.6|9.10"; exit 2; }
	@scripts/ghc-chroot.sh $(GHC) check
check-matrix:
	@scripts/check-matrix.sh
# README's pictures (docs/top.png, docs/serve.png), made by their test in
# the GHC 9.6 chroot, where the program is live; readme_screenshots fails
# while they show other sections than the views do.
.PHONY: screenshots
screenshots:
	@scripts/ghc-chroot.sh 9.6 integration-test INTEGRATION_TESTS=readme_screenshots ES_SCREENSHOTS=docs
.PHONY: fuzz
fuzz:
	@scripts/ensure-deps.sh fuzz
	@$(MAKE) --no-print-directory -j$(shell nproc 2>/dev/null || echo 2) ES_DEPS_CHECKED=1 $@
.PHONY: bench-profile-live
bench-profile-live:
	@scripts/ensure-deps.sh bench
	@$(MAKE) --no-print-directory -j$(shell nproc 2>/dev/null || echo 2) ES_DEPS_CHECKED=1 $@
.PHONY: bench-spans
bench-spans:
	@scripts/ensure-deps.sh bench
	@$(MAKE) --no-print-directory -j$(shell nproc 2>/dev/null || echo 2) ES_DEPS_CHECKED=1 $@
else

HC_PKG ?= ghc-pkg
# The RTS headers: libdir/include up to 9.2, the rts package's own include
# directory from 9.4 on; ghc-pkg knows in every version.
RTS_INCLUDE := $(shell $(HC_PKG) field rts include-dirs --simple-output)
UV_CFLAGS := $(shell pkg-config --cflags libuv)
UV_LIBS := $(shell pkg-config --libs libuv)

CFLAGS ?= -O2 -g
# Beyond -Wall -Wextra: a local that hides another, a function defined
# without a prototype in scope (a file that does not include its own
# header), old-style declarations, printf formats that are not literals,
# variable-length arrays (CONTRIBUTING.md, "Static checks").
WARN := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla -Werror
ES_CFLAGS := $(WARN) -D_DEFAULT_SOURCE -fvisibility=hidden -fPIC -Iinclude -Icbits $(UV_CFLAGS)
# GHC's headers are included as system headers: their warnings are not ours.
RTS_CFLAGS := $(ES_CFLAGS) -Irts-writer $(addprefix -isystem ,$(RTS_INCLUDE))

# The library's C, a folder per part (ARCHITECTURE.md), bottom to top.
CBITS_DIRS := base format net delivery policy control server upstream
CBITS_SRC := $(wildcard $(CBITS_DIRS:%=cbits/%/*.c))
CBITS_H := $(wildcard $(CBITS_DIRS:%=cbits/%/*.h))
# What the library and the command share: the wire format, and the base
# (log, clocks, peer lookup) under it.
FORMAT_SRC := $(wildcard cbits/format/*.c)
# What the format needs of the base (the stream reader keeps its bytes in one).
FORMAT_NEEDS := cbits/base/es_bytes.c
# The sources a program without the RTS side links whole (bench, fuzz):
# es_instance needs the hooks rts-writer/ defines, and es_upstream_start
# needs es_instance.
CBITS_NO_INSTANCE := $(filter-out cbits/server/es_instance.c cbits/upstream/es_upstream_start.c,$(CBITS_SRC))
RTS_SRC := $(wildcard rts-writer/*.c)
CBITS_OBJ := $(CBITS_SRC:%.c=$(BUILD)/obj/%.o)
RTS_OBJ := $(RTS_SRC:%.c=$(BUILD)/obj/%.o)
LIB := $(BUILD)/libeventlog-socket.a

# GHC < 9.4 links an eventlog-capable RTS only with -eventlog; later versions
# always do and warn about the flag. -rtsopts has no effect with
# -no-hs-main: the C main sets rts_opts_enabled.
HC_VERSION := $(shell $(HC) --numeric-version)
EVENTLOG_FLAG := $(shell echo $(HC_VERSION) | awk -F. '{ if ($$1 * 100 + $$2 < 904) print "-eventlog" }')
GHC_FLAGS := -O -threaded $(EVENTLOG_FLAG) -no-hs-main -Iinclude
# The C that GHC compiles beside the Haskell (the example's C main, the
# test programs' and the bench's) is held to the library's warnings first,
# by the C compiler alone: GHC's -optc would reach the stubs it generates
# for foreign import "wrapper" too, which have no prototypes.
CWARN := $(BUILD)/cwarn
FIBBER_C_OK := $(CWARN)/examples/fibber-c-main/cbits/fibber-c-main.ok
LATE_C_OK := $(CWARN)/tests/programs/probe/late-main.ok
BENCH_C_OK := $(CWARN)/bench/programs/bench-main.ok
# and the C of the cabal package's test-suite and of the cabal tests' programs
CABAL_C_OK := $(addprefix $(CWARN)/,haskell/test/client.ok tests/cabal/tiny/cmain.ok \
                tests/cabal/upstream-compat/ours-c-main.ok tests/cabal/upstream-compat/upstream-c-main.ok)
$(CWARN)/%.ok: %.c $(wildcard include/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -fsyntax-only -Iinclude $(addprefix -isystem ,$(RTS_INCLUDE)) $<
	@touch $@
FIBBER := $(BUILD)/fibber-c-main
PROBE := $(BUILD)/probe
PROBE_LATE := $(BUILD)/probe-late
# A program that GHC's own main runs and that starts the library from
# Haskell (GHC.Eventlog.Socket.startWith, startFromEnv).
HSSTART := $(BUILD)/hsstart
# The commands every test program takes on stdin (the probe's, hsstart's).
TEST_HS := tests/programs/common/Commands.hs
# A program that makes sparks (par/pseq), for the spark views' tests.
SPARKER := $(BUILD)/sparker
# Threads that do known things, for the threads views (tests/programs/threads/).
THREADER := $(BUILD)/threads
CHECKER := $(BUILD)/eventlog-check
# The profiled program of the heap-mode tests (tests/programs/heapmodes/): every
# -h mode needs -prof but -hT; -hi needs -finfo-table-map (GHC >= 9.2).
HEAPMODES := $(BUILD)/heapmodes
IPE_FLAG := $(shell echo $(HC_VERSION) | awk -F. '{ if ($$1 * 100 + $$2 >= 902) print "-finfo-table-map" }')
# Many C clients at once, each stream parsed by the library's reader.
MANY_CLIENTS := $(BUILD)/many-clients
# An LD_PRELOAD shim that makes large allocations fail on a test's signal.
FAILALLOC := $(BUILD)/failalloc.so
SLOWSEND := $(BUILD)/slowsend.so
# The eventlog-socket command (client/): C on libuv and the library's own
# stream reader. CLIENT_LIB_SRC is what unit tests and fuzz targets link.
CLIENT := $(BUILD)/eventlog-socket
CLIENT_DIRS := source model http web prom top tables flight control profile spans
CLIENT_SRC := $(wildcard client/*.c $(CLIENT_DIRS:%=client/%/*.c))
CLIENT_H := $(wildcard client/*.h $(CLIENT_DIRS:%=client/%/*.h))
# client/flight/'s parts but its subcommands (watch.c and record.c, which need opts.c).
CLIENT_LIB_SRC := $(wildcard client/source/*.c) $(filter-out client/flight/watch.c client/flight/record.c,$(wildcard client/flight/*.c)) \
                  client/tables/csv.c client/tables/rows.c client/prom/scan.c client/profile/prof.c \
                  client/profile/write.c client/http/buf.c client/spans/spans.c
# The manual pages, from docs/man/*.scd.
MAN_SRC := $(wildcard docs/man/*.scd)
MAN_PAGES := $(MAN_SRC:docs/man/%.scd=$(BUILD)/man/%)
# The model of the program (client/model/): pure C, linked by its unit
# test and fuzz target.
MODEL_SRC := $(wildcard client/model/*.c) client/spans/spans.c
MODEL_H := $(wildcard client/model/*.h)
CLIENT_CBITS := $(FORMAT_SRC) $(wildcard cbits/base/*.c)

# The unit tests: the library's (tests/unit/library/) and the command's
# (tests/unit/client/; its model's, test_model*, link the model alone).
# Their names are unique across both folders: one flat build/unit/.
UNIT_LIBRARY_SRC := $(wildcard tests/unit/library/test_*.c)
UNIT_CLIENT_SRC := $(wildcard tests/unit/client/test_*.c)
LIBRARY_UNITS := $(notdir $(UNIT_LIBRARY_SRC:.c=))
MODEL_UNITS := $(notdir $(basename $(wildcard tests/unit/client/test_model*.c)))
CLIENT_UNITS := $(filter-out $(MODEL_UNITS),$(notdir $(UNIT_CLIENT_SRC:.c=)))
UNIT_NAMES := $(LIBRARY_UNITS) $(MODEL_UNITS) $(CLIENT_UNITS)
ifneq ($(words $(UNIT_NAMES)),$(words $(sort $(UNIT_NAMES))))
$(error two unit tests share a name across tests/unit/library and tests/unit/client)
endif
UNIT_BIN := $(UNIT_NAMES:%=$(BUILD)/unit/%)
UNIT_ASAN_BIN := $(UNIT_NAMES:%=$(BUILD)/unit-asan/%)
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# Fuzz targets: built with a replay main for make check (ASan/UBSan, run
# like the unit tests), and with libFuzzer for make fuzz.
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/unit-asan/%)
# The unit tests that run the library's threads, also under ThreadSanitizer.
TSAN_UNITS := test_server test_window test_cost_notice test_stuck test_walker test_log test_registry test_instance test_wait \
              test_lossless test_accept test_signal \
              test_upstream
UNIT_TSAN_BIN := $(TSAN_UNITS:%=$(BUILD)/unit-tsan/%)
# The library built with ASan/UBSan and linked into the real GHC programs, for
# a few core integration tests (tests/run-all.sh): what unit tests cannot
# catch, such as the RTS calling the writer.
SAN := $(BUILD)/san
SAN_OBJ := $(CBITS_SRC:%.c=$(SAN)/obj/%.o) $(RTS_SRC:%.c=$(SAN)/obj/%.o)
SAN_LIB := $(SAN)/libeventlog-socket.a
SAN_PROGRAMS := $(SAN)/probe $(SAN)/fibber-c-main $(SAN)/eventlog-check $(SAN)/many-clients $(SAN)/eventlog-socket \
                $(SAN)/probe-late
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_SECONDS ?= 60
# The tests include the library's headers themselves, some of them inline
# code no library object holds (cbits/format/es_payload.h): a header that
# changes rebuilds them.
$(UNIT_BIN) $(UNIT_ASAN_BIN) $(UNIT_TSAN_BIN) $(FUZZ_REPLAY_BIN) $(FUZZ_BIN): $(CBITS_H)
# make check builds the libFuzzer targets too and runs each briefly
# (tests/run-all.sh), so that a target that no longer links or finds a
# crash at once fails the check. The targets are the same C whatever the
# GHC: the chroots' checks leave them out (scripts/ghc-chroot.sh).
FUZZ_IN_CHECK ?= yes
FUZZ_CHECK_SECONDS ?= 5
CHECK_FUZZ_BIN := $(if $(filter no,$(FUZZ_IN_CHECK)),,$(FUZZ_BIN))
# So are the unit tests (they need no GHC): the chroots' checks leave
# them, and their three builds (plain, ASan/UBSan, TSan), to the host's.
UNIT_IN_CHECK ?= yes
# So are the integration tests that start no program built with GHC
# (@test(ghc_free=True): the command against files and fake programs).
GHC_FREE_IN_CHECK ?= yes
CHECK_UNIT_BIN := $(if $(filter no,$(UNIT_IN_CHECK)),,$(UNIT_BIN) $(UNIT_ASAN_BIN) $(UNIT_TSAN_BIN) $(FUZZ_REPLAY_BIN))
# How many integration tests make check runs at a time (each mostly waits
# on its sockets and programs): scripts/check-matrix.sh gives the host's
# part, which runs alone, two per core; parts side by side keep 2.
INTEGRATION_JOBS ?= 2

.PHONY: $(PUBLIC_TARGETS)
all: $(LIB) $(FIBBER) $(CLIENT) $(MAN_PAGES)
lib: $(LIB)

# The library a program links compiles its asserts out (NDEBUG): they state
# invariants, checked by the unit tests and the sanitizer build (BUILD/san),
# and the library never aborts the program it serves.
$(BUILD)/obj/cbits/%.o: cbits/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ES_CFLAGS) -DNDEBUG $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/rts-writer/%.o: rts-writer/%.c
	@mkdir -p $(dir $@)
	$(CC) $(RTS_CFLAGS) -DNDEBUG $(CFLAGS) -MMD -MP -c $< -o $@

# One relocatable object with every internal symbol made local: only the
# public API is visible to the program that links the archive.
$(LIB): $(CBITS_OBJ) $(RTS_OBJ)
	ld -r -o $(BUILD)/obj/eventlog-socket.o $^
	objcopy --localize-hidden $(BUILD)/obj/eventlog-socket.o
	rm -f $@
	ar rcs $@ $(BUILD)/obj/eventlog-socket.o

$(FIBBER): examples/fibber-c-main/app/Main.hs examples/fibber-c-main/cbits/fibber-c-main.c $(LIB) $(FIBBER_C_OK)
	@mkdir -p $(dir $@)
	$(HC) $(GHC_FLAGS) -outputdir $(BUILD)/hs/fibber -o $@ \
	    examples/fibber-c-main/app/Main.hs examples/fibber-c-main/cbits/fibber-c-main.c \
	    $(LIB) $(UV_LIBS)

# The test program shares fibber's C main: it is exactly what a user writes.
$(PROBE): tests/programs/probe/Main.hs $(TEST_HS) examples/fibber-c-main/cbits/fibber-c-main.c $(LIB) $(FIBBER_C_OK)
	@mkdir -p $(dir $@)
	$(HC) $(GHC_FLAGS) -itests/programs/common -outputdir $(BUILD)/hs/probe -o $@ \
	    tests/programs/probe/Main.hs examples/fibber-c-main/cbits/fibber-c-main.c $(LIB) $(UV_LIBS)

# The spark views' test program, on fibber's C main as well.
$(SPARKER): tests/programs/sparker/Main.hs examples/fibber-c-main/cbits/fibber-c-main.c $(LIB) $(FIBBER_C_OK)
	@mkdir -p $(dir $@)
	$(HC) $(GHC_FLAGS) -outputdir $(BUILD)/hs/sparker -o $@ \
	    tests/programs/sparker/Main.hs examples/fibber-c-main/cbits/fibber-c-main.c $(LIB) $(UV_LIBS)

# The same program started with the RTS's own file writer, for
# eventlog_socket_start_unix.
$(PROBE_LATE): tests/programs/probe/Main.hs $(TEST_HS) tests/programs/probe/late-main.c $(LIB) $(LATE_C_OK)
	@mkdir -p $(dir $@)
	$(HC) $(GHC_FLAGS) -itests/programs/common -outputdir $(BUILD)/hs/probe-late -o $@ \
	    tests/programs/probe/Main.hs tests/programs/probe/late-main.c $(LIB) $(UV_LIBS)

# A program that starts the library from Haskell, as most users do
# (tests/programs/hsstart/): GHC's own main (-with-rtsopts=-l), the module
# GHC.Eventlog.Socket made from haskell/ by hsc2hs, and the library's
# objects themselves: the module calls internals (es_config_*) that the
# archive hides, and the cabal package links them the same way.
HSC2HS ?= hsc2hs
HS_GEN := $(BUILD)/hs/gen
HS_MODULES := $(wildcard haskell/GHC/Eventlog/*.hsc haskell/GHC/Eventlog/Socket/Internal/*.hsc)
HS_GEN_SRC := $(HS_MODULES:haskell/%.hsc=$(HS_GEN)/%.hs)
$(HS_GEN)/%.hs: haskell/%.hsc $(wildcard include/*.h) $(CBITS_H)
	@mkdir -p $(dir $@)
	$(HSC2HS) -Iinclude -Icbits $(addprefix -I,$(RTS_INCLUDE)) -o $@ $<
$(HSSTART): tests/programs/hsstart/Main.hs $(TEST_HS) $(HS_GEN_SRC) $(CBITS_OBJ) $(RTS_OBJ)
	@mkdir -p $(dir $@)
	$(HC) -O -threaded $(EVENTLOG_FLAG) -rtsopts -with-rtsopts=-l -Iinclude -Icbits -i$(HS_GEN) -itests/programs/common \
	    -outputdir $(BUILD)/hs/hsstart -o $@ tests/programs/hsstart/Main.hs $(CBITS_OBJ) $(RTS_OBJ) $(UV_LIBS)

$(THREADER): tests/programs/threads/Main.hs examples/fibber-c-main/cbits/fibber-c-main.c $(LIB) $(FIBBER_C_OK)
	@mkdir -p $(dir $@)
	$(HC) $(GHC_FLAGS) -outputdir $(BUILD)/hs/threads -o $@ \
	    tests/programs/threads/Main.hs examples/fibber-c-main/cbits/fibber-c-main.c $(LIB) $(UV_LIBS)

$(HEAPMODES): tests/programs/heapmodes/Main.hs tests/programs/heapmodes/Shapes.hs
	@mkdir -p $(dir $@)
	$(HC) -prof -fprof-auto -rtsopts $(EVENTLOG_FLAG) $(IPE_FLAG) -O -outputdir $(BUILD)/hs/heapmodes \
	    -o $@ tests/programs/heapmodes/Main.hs tests/programs/heapmodes/Shapes.hs

$(MANY_CLIENTS): tests/programs/clients/many_clients.c $(FORMAT_SRC) $(FORMAT_NEEDS) $(CBITS_H)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE -O2 -Iinclude -Icbits -o $@ $(filter %.c,$^)

$(FAILALLOC): tests/programs/failalloc/failalloc.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -shared -fPIC -o $@ $<

$(SLOWSEND): tests/programs/slowsend/slowsend.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -shared -fPIC -o $@ $< -ldl

# `top` draws with ncurses (wide-character build, for its sparklines).
NCURSES_CFLAGS = $(shell pkg-config --cflags ncursesw)
NCURSES_LIBS = $(shell pkg-config --libs ncursesw)
# `serve` and `report`: libmicrohttpd serves the page, whose files
# (client/web/, Debian's dygraphs, and d3-flame-graph from npm, vendored in
# client/web/vendor/) are embedded at build time.
MHD_CFLAGS = $(shell pkg-config --cflags libmicrohttpd)
MHD_LIBS = $(shell pkg-config --libs libmicrohttpd)
# `profile` gzips pprof's files with zlib.
ZLIB_CFLAGS = $(shell pkg-config --cflags zlib)
ZLIB_LIBS = $(shell pkg-config --libs zlib)
DYGRAPHS_DIR ?= /usr/share/javascript/dygraphs
# The page's script: one file, valid on its own (make check runs node
# --check on every .js file).
WEB_APP := client/web/app.js
WEB_ASSETS := page.html=client/web/page.html=text/html \
              app.js=$(WEB_APP)=text/javascript \
              style.css=client/web/style.css=text/css \
              compare.html=client/web/compare.html=text/html \
              compare.js=client/web/compare.js=text/javascript \
              dygraph.js=$(DYGRAPHS_DIR)/dygraph.min.js=text/javascript \
              dygraph.css=$(DYGRAPHS_DIR)/dygraph.min.css=text/css \
              flamegraph.js=client/web/vendor/d3-flamegraph.min.js=text/javascript \
              esflame.js=client/web/flame.js=text/javascript \
              flamegraph.css=client/web/vendor/d3-flamegraph.css=text/css
WEB_GEN := $(BUILD)/gen/web_assets.c
$(WEB_GEN): scripts/embed-web.sh $(wildcard client/web/*.html client/web/*.css client/web/*.js) \
            $(wildcard client/web/vendor/*) \
            $(DYGRAPHS_DIR)/dygraph.min.js $(DYGRAPHS_DIR)/dygraph.min.css
	@mkdir -p $(dir $@)
	scripts/embed-web.sh $@ $(WEB_ASSETS)

# The manual pages (docs/man/*.scd) and the command's help, made from the
# same source by scripts/man.awk (awk only). The pages' date is their
# source's last commit (the file's time outside git).
MAN_DATE = $(or $(shell git log -1 --format=%cs -- $< 2>/dev/null),$(shell date -u -r $< +%Y-%m-%d))
$(BUILD)/man/%: docs/man/%.scd scripts/man.awk ghc-eventlog-socket.cabal
	@mkdir -p $(dir $@)
	awk -v to=man -v version=$(VERSION) -v date=$(MAN_DATE) -f scripts/man.awk $< > $@.tmp && mv $@.tmp $@
HELP_GEN := $(BUILD)/gen/help.c
$(HELP_GEN): docs/man/eventlog-socket.1.scd scripts/man.awk
	@mkdir -p $(dir $@)
	awk -v to=c -f scripts/man.awk $< > $@.tmp && mv $@.tmp $@

$(CLIENT): $(CLIENT_SRC) $(CLIENT_H) $(CLIENT_CBITS) $(CBITS_H) $(WEB_GEN) $(HELP_GEN) \
           ghc-eventlog-socket.cabal
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE $(CFLAGS) -Iinclude -Icbits -Iclient $(UV_CFLAGS) \
	    -DES_VERSION='"$(VERSION)"' $(NCURSES_CFLAGS) $(MHD_CFLAGS) $(ZLIB_CFLAGS) -o $@ $(CLIENT_SRC) $(WEB_GEN) \
	    $(HELP_GEN) $(CLIENT_CBITS) $(UV_LIBS) $(NCURSES_LIBS) $(MHD_LIBS) $(ZLIB_LIBS) -lpthread -lm

$(CHECKER): tests/programs/checker/Main.hs
	@mkdir -p $(dir $@)
	$(HC) -O -Wall -outputdir $(BUILD)/hs/checker -o $@ $<

# Benchmark programs (bench/). `make check` builds them so they cannot rot.
BENCH := $(BUILD)/bench
BENCH_PROGRAMS := $(BENCH)/workload $(BENCH)/fibber $(BENCH)/drain $(BENCH)/throughput $(BENCH)/walk \
                  $(BENCH)/skim-floor

$(BENCH)/workload: bench/programs/workload/Main.hs bench/programs/bench-main.c $(LIB) $(BENCH_C_OK)
	@mkdir -p $(dir $@)
	$(HC) $(GHC_FLAGS) -outputdir $(BUILD)/hs/workload -o $@ \
	    bench/programs/workload/Main.hs bench/programs/bench-main.c $(LIB) $(UV_LIBS)

# fibber-c-main's program with the workload's C main, so that one binary
# runs with the RTS's file writer or ours (the no-client case).
$(BENCH)/fibber: examples/fibber-c-main/app/Main.hs bench/programs/bench-main.c $(LIB) $(BENCH_C_OK)
	@mkdir -p $(dir $@)
	$(HC) $(GHC_FLAGS) -outputdir $(BUILD)/hs/bench-fibber -o $@ \
	    examples/fibber-c-main/app/Main.hs bench/programs/bench-main.c $(LIB) $(UV_LIBS)

# Linked by ghc for the RTS symbols the library refers to (the RTS is never
# started); its C is built with our warnings.
# Its clocks and its report are in throughput_report.c (throughput.h).
THROUGHPUT_OBJ := $(BUILD)/hs/throughput/throughput.o $(BUILD)/hs/throughput/throughput_report.o
$(BENCH)/throughput: $(THROUGHPUT_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(HC) -threaded $(EVENTLOG_FLAG) -no-hs-main -o $@ $(THROUGHPUT_OBJ) $(LIB) $(UV_LIBS)

$(BUILD)/hs/throughput/%.o: bench/programs/%.c bench/programs/throughput.h include/eventlog_socket.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE -O2 -Iinclude $(addprefix -isystem ,$(RTS_INCLUDE)) -c $< -o $@

$(BENCH)/drain: bench/programs/drain.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -o $@ $<

$(BENCH)/skim-floor: bench/programs/skim_floor.c $(FORMAT_SRC) $(FORMAT_NEEDS) $(CBITS_H)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE -O2 -Iinclude -Icbits -o $@ $< $(FORMAT_SRC) $(FORMAT_NEEDS)

$(BENCH)/walk: bench/programs/walk.c $(CBITS_SRC)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE -O2 -Iinclude -Icbits $(UV_CFLAGS) -o $@ $< $(CBITS_NO_INSTANCE) \
	    $(UV_LIBS)

bench-programs: $(BENCH_PROGRAMS) $(CLIENT) $(PROBE) $(CHECKER) $(MANY_CLIENTS)

# BENCH_ONLY=overhead,walk runs some sections only, BENCH_REPS=N makes every
# figure the median of N runs, BENCH_SAME_SESSION=1 starts programs and
# clients in the harness's own session (see bench/run.py).
bench: bench-programs
	@HC=$(HC) python3 bench/run.py --build $(BUILD) $(if $(BENCH_ONLY),--only $(BENCH_ONLY)) \
	    $(if $(BENCH_REPS),--reps $(BENCH_REPS)) $(if $(BENCH_SAME_SESSION),--same-session)

# A long live time profile of a -N4 program (bench/bench_profile_live.py):
# the memory of `profile` and `serve` over BENCH_SECONDS (600). Needs a GHC
# that flushes while the program runs: scripts/ghc-chroot.sh 9.10 bench-profile-live.
bench-profile-live: all
	@HC=$(HC) python3 bench/bench_profile_live.py --build $(BUILD) --seconds $(or $(BENCH_SECONDS),600)

# Spans at scale (bench/bench_spans.py): 10 000 spans a second from a -N4
# program for BENCH_SECONDS (60) to record, table spans, metrics and serve
# at once: spans seen, drops, CPU per GiB and memory of each.
bench-spans: all $(PROBE)
	@HC=$(HC) python3 bench/bench_spans.py --build $(BUILD) --seconds $(or $(BENCH_SECONDS),60)

# Unit tests link the cbits sources (no GHC, no RTS), compiled once per
# flavour into an archive: plain, ASan/UBSan, TSan.
CBITS_LIB_DIR := $(BUILD)/cbits-lib
FLAVOUR_CFLAGS_plain := -O1 -g
FLAVOUR_CFLAGS_asan := $(SAN_FLAGS)
FLAVOUR_CFLAGS_tsan := -O1 -g -fsanitize=thread
CBITS_LIB_plain := $(CBITS_LIB_DIR)/plain/libcbits.a
CBITS_LIB_asan := $(CBITS_LIB_DIR)/asan/libcbits.a
CBITS_LIB_tsan := $(CBITS_LIB_DIR)/tsan/libcbits.a
CBITS_FLAVOUR_OBJ := $(foreach f,plain asan tsan,$(CBITS_SRC:cbits/%.c=$(CBITS_LIB_DIR)/$(f)/obj/%.o))

define cbits_flavour
$(CBITS_LIB_DIR)/$(1)/obj/%.o: cbits/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(WARN) -D_DEFAULT_SOURCE $$(FLAVOUR_CFLAGS_$(1)) -Iinclude -Icbits $$(UV_CFLAGS) \
	    -MMD -MP -c $$< -o $$@
$(CBITS_LIB_DIR)/$(1)/libcbits.a: $(CBITS_SRC:cbits/%.c=$(CBITS_LIB_DIR)/$(1)/obj/%.o)
	rm -f $$@
	ar rcs $$@ $$^
endef
$(foreach f,plain asan tsan,$(eval $(call cbits_flavour,$(f))))

# The client's model (MODEL_SRC) and the parts of the command its unit
# tests and fuzz targets link (CLIENT_LIB_SRC), likewise compiled once per
# flavour into archives, not once per test program.
MODEL_LIB_plain := $(CBITS_LIB_DIR)/plain/libmodel.a
MODEL_LIB_asan := $(CBITS_LIB_DIR)/asan/libmodel.a
CLIENT_PARTS_LIB_plain := $(CBITS_LIB_DIR)/plain/libclientparts.a
CLIENT_PARTS_LIB_asan := $(CBITS_LIB_DIR)/asan/libclientparts.a
CLIENT_FLAVOUR_SRC := $(sort $(MODEL_SRC) $(CLIENT_LIB_SRC))
CLIENT_FLAVOUR_OBJ := $(foreach f,plain asan,$(CLIENT_FLAVOUR_SRC:client/%.c=$(CBITS_LIB_DIR)/$(f)/client/%.o))

define client_flavour
$(CBITS_LIB_DIR)/$(1)/client/%.o: client/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(WARN) -D_DEFAULT_SOURCE $$(FLAVOUR_CFLAGS_$(1)) -Iinclude -Icbits -Iclient $$(UV_CFLAGS) \
	    -MMD -MP -c $$< -o $$@
$(CBITS_LIB_DIR)/$(1)/libmodel.a: $(MODEL_SRC:client/%.c=$(CBITS_LIB_DIR)/$(1)/client/%.o)
	rm -f $$@
	ar rcs $$@ $$^
$(CBITS_LIB_DIR)/$(1)/libclientparts.a: $(CLIENT_LIB_SRC:client/%.c=$(CBITS_LIB_DIR)/$(1)/client/%.o)
	rm -f $$@
	ar rcs $$@ $$^
endef
$(foreach f,plain asan,$(eval $(call client_flavour,$(f))))

# The runner every unit test links (tests/unit/unit.c: its main, the cases'
# registry, their checks), once per flavour.
UNIT_RUNNER_plain := $(BUILD)/unit-runner/plain/unit.o
UNIT_RUNNER_asan := $(BUILD)/unit-runner/asan/unit.o
UNIT_RUNNER_tsan := $(BUILD)/unit-runner/tsan/unit.o
$(UNIT_RUNNER_plain) $(UNIT_RUNNER_asan) $(UNIT_RUNNER_tsan): $(BUILD)/unit-runner/%/unit.o: \
    tests/unit/unit.c tests/unit/unit.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE $(FLAVOUR_CFLAGS_$*) -c $< -o $@

LIBRARY_UNIT_H := tests/unit/unit.h tests/unit/library/control_ref.h tests/unit/library/server_util.h
$(LIBRARY_UNITS:%=$(BUILD)/unit/%): $(BUILD)/unit/%: tests/unit/library/%.c $(LIBRARY_UNIT_H) $(CBITS_H) \
                 $(UNIT_RUNNER_plain) $(CBITS_LIB_plain)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE $(FLAVOUR_CFLAGS_plain) -Iinclude -Icbits $(UV_CFLAGS) -o $@ $< \
	    $(UNIT_RUNNER_plain) $(CBITS_LIB_plain) $(UV_LIBS)

$(LIBRARY_UNITS:%=$(BUILD)/unit-asan/%): $(BUILD)/unit-asan/%: tests/unit/library/%.c $(LIBRARY_UNIT_H) \
                      $(CBITS_H) $(UNIT_RUNNER_asan) $(CBITS_LIB_asan)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE $(SAN_FLAGS) -Iinclude -Icbits $(UV_CFLAGS) -o $@ $< \
	    $(UNIT_RUNNER_asan) $(CBITS_LIB_asan) $(UV_LIBS)

# The client's model (MODEL_SRC) is pure C like cbits/: unit-tested the
# same way, linked with its sources.
$(MODEL_UNITS:%=$(BUILD)/unit/%): \
$(BUILD)/unit/%: tests/unit/client/%.c tests/unit/unit.h tests/unit/client/model_events.h $(MODEL_H) \
                 $(UNIT_RUNNER_plain) $(MODEL_LIB_plain) $(CBITS_LIB_plain)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE $(FLAVOUR_CFLAGS_plain) -Iinclude -Icbits -Iclient -o $@ $< \
	    $(UNIT_RUNNER_plain) $(MODEL_LIB_plain) $(CBITS_LIB_plain) -lm

$(MODEL_UNITS:%=$(BUILD)/unit-asan/%): $(BUILD)/unit-asan/%: tests/unit/client/%.c tests/unit/unit.h \
                                  tests/unit/client/model_events.h $(MODEL_H) $(UNIT_RUNNER_asan) \
                                  $(MODEL_LIB_asan) $(CBITS_LIB_asan)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE $(SAN_FLAGS) -Iinclude -Icbits -Iclient -o $@ $< $(UNIT_RUNNER_asan) \
	    $(MODEL_LIB_asan) $(CBITS_LIB_asan) -lm

# The other unit tests of the command's parts (tests/unit/client/) link them too.
$(CLIENT_UNITS:%=$(BUILD)/unit/%): $(BUILD)/unit/%: tests/unit/client/%.c tests/unit/unit.h \
                             $(CLIENT_H) $(UNIT_RUNNER_plain) $(CLIENT_PARTS_LIB_plain) $(CBITS_LIB_plain)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE $(FLAVOUR_CFLAGS_plain) -Iinclude -Icbits -Iclient $(UV_CFLAGS) \
	    -o $@ $< $(UNIT_RUNNER_plain) $(CLIENT_PARTS_LIB_plain) $(CBITS_LIB_plain) $(UV_LIBS) \
	    $(ZLIB_LIBS)

$(CLIENT_UNITS:%=$(BUILD)/unit-asan/%): $(BUILD)/unit-asan/%: tests/unit/client/%.c tests/unit/unit.h \
                                  $(CLIENT_H) $(UNIT_RUNNER_asan) $(CLIENT_PARTS_LIB_asan) $(CBITS_LIB_asan)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE $(SAN_FLAGS) -Iinclude -Icbits -Iclient $(UV_CFLAGS) -o $@ $< \
	    $(UNIT_RUNNER_asan) $(CLIENT_PARTS_LIB_asan) $(CBITS_LIB_asan) $(UV_LIBS) $(ZLIB_LIBS)

# The client's fuzz target links the command's parts as well.
$(BUILD)/unit-asan/fuzz_client: tests/fuzz/fuzz_client.c tests/fuzz/fuzz_check.h tests/fuzz/replay.c \
                                $(CLIENT_H) $(CLIENT_PARTS_LIB_asan) $(CBITS_LIB_asan)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE $(SAN_FLAGS) -Iinclude -Icbits -Iclient $(UV_CFLAGS) -o $@ $< \
	    tests/fuzz/replay.c $(CLIENT_PARTS_LIB_asan) $(CBITS_LIB_asan) $(UV_LIBS) $(ZLIB_LIBS)

$(BUILD)/fuzz/fuzz_client: tests/fuzz/fuzz_client.c tests/fuzz/fuzz_check.h $(CLIENT_LIB_SRC) \
                           $(CLIENT_H) $(CLIENT_CBITS)
	@mkdir -p $(dir $@)
	clang $(WARN) -D_DEFAULT_SOURCE -O1 -g -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -Iinclude -Icbits -Iclient $(UV_CFLAGS) -o $@ $< $(CLIENT_LIB_SRC) \
	    $(CLIENT_CBITS) $(UV_LIBS) $(ZLIB_LIBS)

# The model's fuzz target links the model (MODEL_SRC) as well.
$(BUILD)/unit-asan/fuzz_model: tests/fuzz/fuzz_model.c tests/fuzz/fuzz_check.h tests/fuzz/replay.c \
                               $(MODEL_H) $(MODEL_LIB_asan) $(CBITS_LIB_asan)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE $(SAN_FLAGS) -Iinclude -Icbits -Iclient -o $@ $< \
	    tests/fuzz/replay.c $(MODEL_LIB_asan) $(CBITS_LIB_asan) -lm

$(BUILD)/fuzz/fuzz_model: tests/fuzz/fuzz_model.c tests/fuzz/fuzz_check.h $(MODEL_SRC) $(MODEL_H) \
                          $(CLIENT_CBITS)
	@mkdir -p $(dir $@)
	clang $(WARN) -D_DEFAULT_SOURCE -O1 -g -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -Iinclude -Icbits -Iclient $(UV_CFLAGS) -o $@ $< $(MODEL_SRC) \
	    $(CLIENT_CBITS) $(UV_LIBS) -lm

$(BUILD)/unit-asan/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_check.h tests/unit/library/control_ref.h \
                           tests/fuzz/replay.c $(CBITS_LIB_asan)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE $(SAN_FLAGS) -Iinclude -Icbits $(UV_CFLAGS) -o $@ $< \
	    tests/fuzz/replay.c $(CBITS_LIB_asan) $(UV_LIBS)

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_check.h tests/unit/library/control_ref.h $(CBITS_SRC)
	@mkdir -p $(dir $@)
	clang $(WARN) -D_DEFAULT_SOURCE -O1 -g -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -Iinclude -Icbits $(UV_CFLAGS) -o $@ $< $(CBITS_NO_INSTANCE) $(UV_LIBS)

.PHONY: fuzz
fuzz: $(FUZZ_BIN) $(FUZZ_REPLAY_BIN)
	@scripts/fuzz.sh $(BUILD) $(FUZZ_SECONDS)

$(BUILD)/unit-tsan/%: tests/unit/library/%.c tests/unit/unit.h tests/unit/library/server_util.h $(UNIT_RUNNER_tsan) \
                      $(CBITS_LIB_tsan)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE $(FLAVOUR_CFLAGS_tsan) -Iinclude -Icbits $(UV_CFLAGS) -o $@ $< \
	    $(UNIT_RUNNER_tsan) $(CBITS_LIB_tsan) $(UV_LIBS)

# With -MMD like every object: a header change (a struct that grew) must
# rebuild these too, or the sanitized programs mix layouts.
$(SAN)/obj/cbits/%.o: cbits/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ES_CFLAGS) $(SAN_FLAGS) -MMD -MP -c $< -o $@

$(SAN)/obj/rts-writer/%.o: rts-writer/%.c
	@mkdir -p $(dir $@)
	$(CC) $(RTS_CFLAGS) $(SAN_FLAGS) -MMD -MP -c $< -o $@

$(SAN_LIB): $(SAN_OBJ)
	rm -f $@
	ar rcs $@ $^

$(SAN)/probe: tests/programs/probe/Main.hs $(TEST_HS) examples/fibber-c-main/cbits/fibber-c-main.c $(SAN_LIB) $(FIBBER_C_OK)
	$(HC) $(GHC_FLAGS) -itests/programs/common -outputdir $(SAN)/hs/probe -o $@ tests/programs/probe/Main.hs \
	    examples/fibber-c-main/cbits/fibber-c-main.c $(SAN_LIB) $(UV_LIBS) \
	    -optl-fsanitize=address,undefined

$(SAN)/fibber-c-main: examples/fibber-c-main/app/Main.hs examples/fibber-c-main/cbits/fibber-c-main.c \
                      $(SAN_LIB) $(FIBBER_C_OK)
	$(HC) $(GHC_FLAGS) -outputdir $(SAN)/hs/fibber -o $@ examples/fibber-c-main/app/Main.hs \
	    examples/fibber-c-main/cbits/fibber-c-main.c $(SAN_LIB) $(UV_LIBS) \
	    -optl-fsanitize=address,undefined

# The eventlog-socket command under ASan/UBSan, for its tests in the same run.
$(SAN)/eventlog-socket: $(CLIENT_SRC) $(CLIENT_H) $(CLIENT_CBITS) $(CBITS_H) \
                        $(WEB_GEN) $(HELP_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -D_DEFAULT_SOURCE $(SAN_FLAGS) -Iinclude -Icbits -Iclient $(UV_CFLAGS) \
	    -DES_VERSION='"$(VERSION)"' $(NCURSES_CFLAGS) $(MHD_CFLAGS) $(ZLIB_CFLAGS) -o $@ $(CLIENT_SRC) $(WEB_GEN) \
	    $(HELP_GEN) $(CLIENT_CBITS) $(UV_LIBS) $(NCURSES_LIBS) $(MHD_LIBS) $(ZLIB_LIBS) -lpthread -lm

# The checker and the C clients are the test's, not under test.
$(SAN)/eventlog-check: $(CHECKER)
	@mkdir -p $(dir $@)
	ln -sf ../eventlog-check $@
# The heap tests' reference: the RTS's own file writer writes its eventlog.
$(SAN)/probe-late: $(PROBE_LATE)
	@mkdir -p $(dir $@)
	ln -sf ../probe-late $@
$(SAN)/many-clients: $(MANY_CLIENTS)
	@mkdir -p $(dir $@)
	ln -sf ../many-clients $@

# CASE="NAME ..." runs only the cases of those names (tests/run-unit.sh).
unit-test: $(UNIT_BIN) $(UNIT_ASAN_BIN) $(UNIT_TSAN_BIN) $(FUZZ_REPLAY_BIN)
	@CASE='$(CASE)' tests/run-unit.sh $(BUILD)

symbols: $(LIB)
	@tests/check-symbols.sh $(LIB)

integration-test: $(FIBBER) $(CLIENT) $(PROBE) $(PROBE_LATE) $(HSSTART) $(SPARKER) $(CHECKER) $(MANY_CLIENTS) $(FAILALLOC) $(SLOWSEND) $(THREADER) \
                  $(HEAPMODES) $(MAN_PAGES)
	@HC=$(HC) python3 tests/integration/run.py --build $(BUILD) $(INTEGRATION_TESTS)

# The cabal package and both examples, built with cabal offline exactly as
# docs/haskell.md says, into $(BUILD)/dist-newstyle so GHC versions never mix.
cabal-build:
	cabal --config-file=/dev/null build --offline -w $(HC) --builddir=$(BUILD)/dist-newstyle all

# The cabal package, built offline into a temporary directory by a project
# that depends on it (tests/cabal-package.sh).
cabal-test: $(CHECKER) $(CABAL_C_OK)
	@HC=$(HC) tests/cabal-package.sh $(BUILD)

check: $(LIB) $(FIBBER) $(CLIENT) $(PROBE) $(PROBE_LATE) $(HSSTART) $(SPARKER) $(CHECKER) $(MANY_CLIENTS) $(FAILALLOC) $(SLOWSEND) $(THREADER) \
       $(HEAPMODES) $(MAN_PAGES) $(CHECK_UNIT_BIN) $(SAN_PROGRAMS) \
       $(CHECK_FUZZ_BIN) $(BENCH_PROGRAMS) $(CHECK_LINT_REPORTS) $(CABAL_C_OK)
	@HC=$(HC) FUZZ_IN_CHECK=$(FUZZ_IN_CHECK) FUZZ_CHECK_SECONDS=$(FUZZ_CHECK_SECONDS) \
	    LINT_IN_CHECK=$(LINT_IN_CHECK) UNIT_IN_CHECK=$(UNIT_IN_CHECK) \
	    GHC_FREE_IN_CHECK=$(GHC_FREE_IN_CHECK) \
	    INTEGRATION_JOBS=$(INTEGRATION_JOBS) tests/run-all.sh $(BUILD)

# make install three ways, and README's C main built against each copy
# (tests/install.sh; make check runs it too).
install-test: $(LIB) $(CLIENT) $(CHECKER)
	@HC=$(HC) tests/install.sh $(BUILD)

# make check beside a CPU hog (scripts/check-loaded.sh kills it whatever
# happens).
check-loaded: $(LIB) $(FIBBER) $(CLIENT) $(PROBE) $(PROBE_LATE) $(HSSTART) $(SPARKER) $(CHECKER) $(MANY_CLIENTS) \
              $(FAILALLOC) $(SLOWSEND) $(THREADER) $(HEAPMODES) $(CHECK_UNIT_BIN) $(SAN_PROGRAMS) \
              $(CHECK_FUZZ_BIN) $(BENCH_PROGRAMS) $(CHECK_LINT_REPORTS) $(CABAL_C_OK)
	@HC=$(HC) FUZZ_IN_CHECK=$(FUZZ_IN_CHECK) FUZZ_CHECK_SECONDS=$(FUZZ_CHECK_SECONDS) \
	    LINT_IN_CHECK=$(LINT_IN_CHECK) UNIT_IN_CHECK=$(UNIT_IN_CHECK) \
	    GHC_FREE_IN_CHECK=$(GHC_FREE_IN_CHECK) \
	    INTEGRATION_JOBS=$(INTEGRATION_JOBS) scripts/check-loaded.sh $(BUILD)

SOAK_MINUTES ?= 30
soak: $(PROBE) $(CHECKER) $(MANY_CLIENTS)
	@python3 bench/soak.py --build $(BUILD) --minutes $(SOAK_MINUTES)

# Record this GHC's eventlog fixture for the unit tests.
fixtures: $(CHECKER)
	HC=$(HC) tests/fixtures/make-fixtures.sh $(BUILD)

demo: $(FIBBER)
	@scripts/demo.sh $(BUILD)

# The .pc file is made at install time, so that it always names the PREFIX
# the files go to. The archive is built for this GHC ($(HC_VERSION)), which
# the .pc records as the variable ghc_version; the header includes Rts.h,
# so its Cflags carry that GHC's RTS include directories, for a C compiler
# that ghc does not drive. libuv is in Requires, not
# Requires.private: with only an archive installed, every link needs it.
install: $(LIB) $(CLIENT) $(MAN_PAGES)
	@mkdir -p $(BUILD)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    -e 's|@GHC_VERSION@|$(HC_VERSION)|g' -e 's|@RTS_INCLUDE@|$(RTS_INCLUDE)|g' \
	    -e 's|@RTS_CFLAGS@|$(addprefix -I,$(RTS_INCLUDE))|g' eventlog-socket.pc.in > $(BUILD)/eventlog-socket.pc
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 755 $(CLIENT) $(DESTDIR)$(BINDIR)/eventlog-socket
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libeventlog-socket.a
	install -m 644 include/eventlog_socket.h $(DESTDIR)$(INCLUDEDIR)/eventlog_socket.h
	install -m 644 $(BUILD)/eventlog-socket.pc $(DESTDIR)$(PKGCONFIGDIR)/eventlog-socket.pc
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7
	install -m 644 $(BUILD)/man/eventlog-socket.1 $(DESTDIR)$(MANDIR)/man1/eventlog-socket.1
	install -m 644 $(BUILD)/man/eventlog-socket.7 $(DESTDIR)$(MANDIR)/man7/eventlog-socket.7

FORMAT_FILES := $(wildcard include/*.h cbits/*/*.[ch] rts-writer/*.[ch] tests/unit/*.[ch] tests/fuzz/*.[ch] \
                  examples/*/cbits/*.c tests/programs/probe/*.c tests/programs/clients/*.c tests/programs/failalloc/*.c tests/programs/slowsend/*.c tests/cabal/tiny/*.c tests/cabal/upstream-compat/*.c haskell/test/*.c \
                  bench/programs/*.[ch] client/*.[ch] client/*/*.[ch])
format:
	clang-format -i $(FORMAT_FILES)
format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

# ---- Static checks: clang's analyzer and cppcheck on the C of cbits/,
# rts-writer/ and client/, flake8 on the Python, shellcheck on the shell
# scripts. Each writes its findings to a report under $(BUILD)/lint, made
# again only from what changed (the analyzer file by file, with -MMD), so
# that make check's -j makes them beside the build; tests/lint.sh judges
# the reports: none may hold a finding (CONTRIBUTING.md, "Static checks").
# A report whose tool is not installed is not made (tests/lint.sh: a SKIP).
# make check leaves them out with LINT_IN_CHECK=no (the chroots: other
# Debian releases' tools find other things in the same code).
LINT_IN_CHECK ?= yes
LINT_DIR := $(BUILD)/lint
LINT_TOOLS := analyze:clang cppcheck:cppcheck flake8:flake8 shellcheck:shellcheck
LINT_REPORTS := $(foreach t,$(LINT_TOOLS),$(if $(shell command -v $(lastword $(subst :, ,$(t))) 2>/dev/null),\
                  $(LINT_DIR)/$(firstword $(subst :, ,$(t))).txt))
CHECK_LINT_REPORTS := $(if $(filter no,$(LINT_IN_CHECK)),,$(LINT_REPORTS))
ANALYZE_SRC := $(CBITS_SRC) $(RTS_SRC) $(CLIENT_SRC)
ANALYZE_OUT := $(ANALYZE_SRC:%.c=$(LINT_DIR)/analyze/%.txt)
# The build's flags without -Werror: a compiler warning is a finding too.
ANALYZE := clang --analyze -Xanalyzer -analyzer-output=text -MMD -MP
ANALYZE_CLIENT_FLAGS := $(filter-out -Werror,$(WARN)) -D_DEFAULT_SOURCE -Iinclude -Icbits -Iclient $(UV_CFLAGS) \
                        -DES_VERSION='"$(VERSION)"' $(NCURSES_CFLAGS) $(MHD_CFLAGS)
define analyze_dir
$(LINT_DIR)/analyze/$(1)/%.txt: $(1)/%.c
	@mkdir -p $$(dir $$@)
	$$(ANALYZE) $(2) -MF $$(@:.txt=.d) -MT $$@ $$< -o /dev/null 2>$$@.tmp || \
	    { cat $$@.tmp >&2; rm -f $$@.tmp; exit 1; }
	@mv $$@.tmp $$@
endef
$(eval $(call analyze_dir,cbits,$(filter-out -Werror,$(ES_CFLAGS))))
$(eval $(call analyze_dir,rts-writer,$(filter-out -Werror,$(RTS_CFLAGS))))
$(eval $(call analyze_dir,client,$(ANALYZE_CLIENT_FLAGS)))
$(LINT_DIR)/analyze.txt: $(ANALYZE_OUT)
	cat $^ >$@

# cppcheck on what this GHC compiles (__GLASGOW_HASKELL__ as ghcversion.h
# has it; the RTS's headers themselves are not read), its cache in
# $(LINT_DIR)/cppcheck-cache. Suppressions: .cppcheck-suppressions and
# inline, each with its reason.
HC_NUM := $(shell echo $(HC_VERSION) | awk -F. '{ print $$1 * 100 + $$2 }')
CPPCHECK_FLAGS := -q --std=c11 --enable=warning,style,performance,portability --inline-suppr --library=posix \
                  --suppressions-list=.cppcheck-suppressions \
                  --template='{file}:{line}: {severity}: {message} [{id}]' -D_DEFAULT_SOURCE \
                  -D__GLASGOW_HASKELL__=$(HC_NUM) -DES_VERSION='"$(VERSION)"' -Iinclude -Icbits -Iclient -Irts-writer
$(LINT_DIR)/cppcheck.txt: $(ANALYZE_SRC) $(CBITS_H) $(CLIENT_H) $(wildcard include/*.h rts-writer/*.h) \
                          .cppcheck-suppressions
	@mkdir -p $(LINT_DIR)/cppcheck-cache
	cppcheck $(CPPCHECK_FLAGS) --cppcheck-build-dir=$(LINT_DIR)/cppcheck-cache $(ANALYZE_SRC) 2>$@.tmp
	@mv $@.tmp $@

# flake8 with the committed .flake8.
PY_SRC := $(wildcard tests/*.py tests/*/*.py tests/*/*/*.py bench/*.py bench/*/*.py scripts/*.py scripts/*/*.py)
$(LINT_DIR)/flake8.txt: $(PY_SRC) .flake8
	@mkdir -p $(dir $@)
	flake8 --exit-zero $(PY_SRC) >$@.tmp
	@mv $@.tmp $@

# shellcheck's warnings and errors (its notes and style hints are taste);
# status 1: findings, written to the report; others: failed.
SH_SRC := $(wildcard scripts/*.sh tests/*.sh tests/*/*.sh tests/*/*/*.sh) .ci/run
$(LINT_DIR)/shellcheck.txt: $(SH_SRC)
	@mkdir -p $(dir $@)
	shellcheck -S warning -f gcc $(SH_SRC) >$@.tmp || [ $$? -eq 1 ]
	@mv $@.tmp $@

# Each check alone, or all of them with the tracker references' check
# (TAP, fails on a finding).
lint: $(LINT_REPORTS)
	@tests/lint.sh $(BUILD)
analyze: $(LINT_DIR)/analyze.txt
	@tests/lint.sh $(BUILD) analyze
cppcheck: $(LINT_DIR)/cppcheck.txt
	@tests/lint.sh $(BUILD) cppcheck
flake8: $(LINT_DIR)/flake8.txt
	@tests/lint.sh $(BUILD) flake8
shellcheck: $(LINT_DIR)/shellcheck.txt
	@tests/lint.sh $(BUILD) shellcheck

-include $(CBITS_OBJ:.o=.d) $(RTS_OBJ:.o=.d) $(CBITS_FLAVOUR_OBJ:.o=.d) $(CLIENT_FLAVOUR_OBJ:.o=.d) $(SAN_OBJ:.o=.d) $(ANALYZE_OUT:.txt=.d)

endif
