# podkernel — build, test, benchmark and fuzz.
#
#   make            build/bin/{podctl,podkerneld,podagent} and build/lib/libtopo.a
#   make deps       install the Debian packages the build and the tests need
#   make deps-build only those the build needs (what make demo installs)
#   make demo       the appliance on a simulated cluster (README, first command);
#                   serves the placement map until Ctrl-C (DEMO_KEEP=0: stops at the end)
#   make check      sanitizer build (ASan + UBSan), every Check suite, every script
#   make bench      optimised build, the benchmarks (not part of check)
#   make fuzz       libFuzzer targets, FUZZ_SECONDS each (default 60)
#   make soak       kill -9 cycles under gang load, then mixed load with bounded memory
#                   (SOAK_CYCLES, default 100; SOAK_SECONDS, default 600)
#   make chaos      attach mode, two leader-elected schedulers, kills, SIGSTOP,
#                   churn, a foreign scheduler (CHAOS_SECONDS, default 600)
#   make valgrind   every Check suite under valgrind (memcheck, leaks)
#   make format-check  every C file is clang-formatted (part of check)
#   make install    programs, man pages, libtopo + pkg-config, systemd units,
#                   boards under PREFIX (default /usr/local), staged in DESTDIR
#   make uninstall  removes what install installed
#
# Every folder with C sources is a static library; programs and tests link the
# libraries of the folders they depend on (LIBS_* below).  A test in
# tests/<folder>/test_*.c tests <folder> and links that folder's libraries
# (TESTLIBS_* below; a test's own line, where it has one, instead).

VERSION    := 0.1.0
BUILD      ?= build
SAN        ?= 0
OPT        ?= -O2

# Every Debian package's pkg-config name; each library says which it uses
# (PKGS_* below) and each program links only what its libraries use.
PKGS := yaml-0.1 jansson hwloc libudev libnl-3.0 libnl-route-3.0 libnl-genl-3.0 \
	libmicrohttpd gnutls libcurl sqlite3 libprotobuf-c
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)

WARN     := -Wall -Wextra -Werror -Wno-missing-field-initializers -Wno-format-truncation
CFLAGS   ?= -g $(OPT)
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) -D_GNU_SOURCE \
	-DPODKERNEL_VERSION='"$(VERSION)"' -DPODKERNEL_SRCDIR='"$(CURDIR)"' \
	-I. -I$(BUILD)/gen/proto $(PKG_CFLAGS) -MMD -MP
ALL_LDFLAGS = $(LDFLAGS)

ifeq ($(SAN),1)
ALL_CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
ALL_LDFLAGS += -fsanitize=address,undefined
endif

# --- libraries: one per source folder -------------------------------------
# name:folder[:excluded-file]
LIBDEFS := topo:topology \
	pklib:kernel/lib \
	pkcel:kernel/cel \
	pkapi:kernel/api \
	pkdra:kernel/dra \
	pksched:kernel/sched \
	pkbuilder:kernel/builder \
	pksim:kernel/sim \
	pkwrite:kernel/write \
	pkstore:kernel/store \
	pkhttp:kernel/http \
	pkserver:kernel/server \
	pkappliance:kernel/appliance \
	pkui:kernel/ui \
	pkcontrollers:kernel/controllers \
	pkkube:kernel/kube \
	pkattach:kernel/attach \
	pkclient:kernel/podctl:kernel/podctl/main.c \
	pkdaemon:kernel/podkerneld:kernel/podkerneld/main.c \
	pkagent:agent:agent/main.c

# What each library needs, most dependent first (static link order): only
# the libraries whose headers its sources include.
LIBS_topo        := topo
LIBS_pklib       := pklib
LIBS_pkcel       := pkcel topo
LIBS_pkapi       := pkapi pkcel topo pklib
LIBS_pkdra       := pkdra pkapi pkcel topo pklib
LIBS_pksched     := pksched pkwrite pkdra pkapi pkcel topo pklib
LIBS_pkbuilder   := pkbuilder pkapi pkcel topo pklib
LIBS_pksim       := pksim pksched pkdra pkbuilder pkstore pkwrite pkapi pkcel topo pklib
LIBS_pkwrite     := pkwrite pkapi pkcel topo pklib
LIBS_pkstore     := pkstore pkwrite pkapi pkcel topo pklib
# the HTTP listener (the API server's and attach mode's health port): no store
LIBS_pkhttp      := pkhttp pklib
LIBS_pkserver    := pkserver pkhttp pkstore pkwrite pkapi pkcel topo pklib
LIBS_pkappliance := pkappliance pksched pkwrite pkdra pkbuilder pkapi pkcel topo pklib
# the placement map registers on the loop as hooks: the loop's types only
LIBS_pkui        := pkui pkappliance pksched pkwrite pkdra pkbuilder pkapi pkcel topo pklib
LIBS_pkcontrollers := pkcontrollers pkappliance pksim pkstore pksched pkwrite pkdra pkbuilder \
	pkapi pkcel topo pklib
LIBS_pkkube      := pkkube pkapi pkcel topo pklib
# attach links no store: its health port is the listener alone, and the queue
# controller's pass is handed to it by the program (pk_attach_config.queue_pass)
LIBS_pkattach    := pkattach pkui pkkube pkappliance pkhttp pksched pkwrite pkdra pkbuilder \
	pkapi pkcel topo pklib
LIBS_pkagent     := pkagent pkkube pkapi pkcel topo pklib
LIBS_pkdaemon    := pkdaemon pkattach pkcontrollers pkui pkkube pkappliance pksim pkserver pkhttp pkstore \
	pksched pkwrite pkdra pkbuilder pkapi pkcel topo pklib
LIBS_pkclient    := pkclient pkcontrollers pkappliance pkkube pksim pkstore pksched pkwrite pkdra \
	pkbuilder pkapi pkcel topo pklib
# Everything, for the benchmarks and the fuzz targets.
LIBS_all         := pkclient pkdaemon pkagent pkattach pkui pkkube pkcontrollers pkappliance pksim pkserver pkhttp pkstore \
	pksched pkwrite \
	pkbuilder pkdra pkapi pkcel topo pklib

# The packages each library's own sources use (pkg-config names).
PKGS_topo        := yaml-0.1
PKGS_pkapi       := jansson yaml-0.1
PKGS_pkstore     := sqlite3
PKGS_pkhttp      := libmicrohttpd gnutls
PKGS_pkserver    := libmicrohttpd gnutls libprotobuf-c
PKGS_pkclient    := sqlite3
PKGS_pkagent     := hwloc libudev libnl-3.0 libnl-route-3.0 libnl-genl-3.0 libmicrohttpd
PKGS_pkkube      := libcurl
PKGS_pkattach    := libmicrohttpd gnutls

# Programs: their libraries, hence their packages.
PROG_LIBS_podctl     := pkclient
PROG_LIBS_podkerneld := pkdaemon pkserver pkattach pkcontrollers pkui pkbuilder
PROG_LIBS_podagent   := pkagent

# test folder -> the libraries it tests (and their dependencies)
TESTLIBS_tests/topology        := topo
TESTLIBS_tests/kernel/lib      := pklib
TESTLIBS_tests/kernel/api      := pkapi
TESTLIBS_tests/kernel/cel      := pkcel
TESTLIBS_tests/kernel/dra      := pkdra
# the scenarios run offline as podctl schedule does, with the resource claim
# controller (pk_claims_pass)
TESTLIBS_tests/kernel/sched    := pksched pkcontrollers
TESTLIBS_tests/kernel/builder  := pkbuilder
# the queue tests run the queue controller's pass
TESTLIBS_tests/kernel/sim      := pkcontrollers
TESTLIBS_tests/kernel/store    := pkstore
# the write path's tests run it on the store backend
TESTLIBS_tests/kernel/write    := pkstore
TESTLIBS_tests/kernel/server   := pkserver pkbuilder
# the loop's tests run it standalone, with its controllers
TESTLIBS_tests/kernel/appliance := pkcontrollers
# the Job tests check the controllers' writes against the server's schemas
# (pk_srv_unknown_fields)
TESTLIBS_tests/kernel/controllers := pkcontrollers pkserver
# the placement map's tests also run it on a standalone loop
TESTLIBS_tests/kernel/ui       := pkui pkcontrollers
TESTLIBS_tests/kernel/podctl   := pkclient
TESTLIBS_tests/kernel/podkerneld := pkdaemon
TESTLIBS_tests/kernel/kube     := pkkube
# attach's tests link no store; the informer and remote writer tests run
# podkerneld's API server in the same process as their cluster (their own lines)
TESTLIBS_tests/kernel/attach   := pkattach
TESTLIBS_tests/kernel/attach/test_informer := pkattach pkserver
TESTLIBS_tests/kernel/attach/test_remote := pkattach pkserver
TESTLIBS_tests/agent           := pkagent

lib_name   = $(word 1,$(subst :, ,$(1)))
lib_dir    = $(word 2,$(subst :, ,$(1)))
lib_skip   = $(word 3,$(subst :, ,$(1)))
lib_path   = $(BUILD)/lib/lib$(1).a
libs_of    = $(foreach l,$(LIBS_$(1)),$(call lib_path,$(l)))
# Archives of a set of libraries, in link order: each kept at its last place.
libset     = $(call uniq_last,$(foreach x,$(1),$(LIBS_$(x))))
uniq_last  = $(if $(1),$(if $(filter $(firstword $(1)),$(wordlist 2,999,$(1))),,$(firstword \
	$(1))) $(call uniq_last,$(wordlist 2,999,$(1))))
libs_of_set = $(foreach l,$(call libset,$(1)),$(call lib_path,$(l)))
# Linker flags of the packages a set of libraries uses.
pkg_libs   = $(shell pkg-config --libs $(sort $(foreach l,$(call libset,$(1)),$(PKGS_$(l)))) \
	2>/dev/null) -lpthread -lm

define LIB_template
SRCS_$(call lib_name,$(1)) := $$(filter-out $(call lib_skip,$(1)),$$(wildcard $(call lib_dir,$(1))/*.c))
OBJS_$(call lib_name,$(1)) := $$(patsubst %.c,$(BUILD)/obj/%.o,$$(SRCS_$(call lib_name,$(1))))
$(call lib_path,$(call lib_name,$(1))): $$(OBJS_$(call lib_name,$(1)))
	@mkdir -p $$(@D)
	@rm -f $$@
	$$(AR) rcs $$@ $$^
endef
$(foreach d,$(LIBDEFS),$(eval $(call LIB_template,$(d))))

ALL_LIBS := $(foreach d,$(LIBDEFS),$(call lib_path,$(call lib_name,$(d))))

# The placement map's page (kernel/ui/) is compiled into its library.
UI_FILES := $(sort $(wildcard kernel/ui/*.html kernel/ui/*.js kernel/ui/*.css))
$(BUILD)/gen/ui_assets.c: $(UI_FILES) kernel/ui/embed.sh
	@mkdir -p $(@D)
	sh kernel/ui/embed.sh $@ $(UI_FILES)
$(BUILD)/obj/gen/ui_assets.o: $(BUILD)/gen/ui_assets.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(call lib_path,pkui): $(BUILD)/obj/gen/ui_assets.o

# The Kubernetes protobuf messages (kernel/server/proto/) become C with
# protoc-c at build time, compiled into the API server's library; every
# server source may include their headers, so they exist before any is built.
# /version's gitCommit and gitTreeState: the checkout's at build time
# (rewritten only when they change), "unknown" outside a git checkout.
$(BUILD)/gen/proto/pk_git_commit.h: FORCE
	@mkdir -p $(@D)
	@c=$$(git -C $(CURDIR) rev-parse HEAD 2>/dev/null || echo unknown); \
	 t=$$(git -C $(CURDIR) status --porcelain -uno 2>/dev/null | head -c1); \
	 st=$$([ "$$c" = unknown ] && echo "" || { [ -n "$$t" ] && echo dirty || echo clean; }); \
	 printf '#define PODKERNEL_GIT_COMMIT "%s"\n#define PODKERNEL_GIT_TREE_STATE "%s"\n' \
		"$$c" "$$st" > $@.tmp; cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
$(BUILD)/obj/kernel/server/discovery.o: $(BUILD)/gen/proto/pk_git_commit.h
.PHONY: FORCE
FORCE:

PROTO_FILES := $(sort $(wildcard kernel/server/proto/*.proto))
PROTO_C := $(patsubst kernel/server/proto/%.proto,$(BUILD)/gen/proto/%.pb-c.c,$(PROTO_FILES))
PROTO_H := $(PROTO_C:.c=.h)
PROTO_O := $(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(PROTO_C))
$(BUILD)/gen/proto/%.pb-c.c $(BUILD)/gen/proto/%.pb-c.h: kernel/server/proto/%.proto
	@mkdir -p $(@D)
	protoc-c --c_out=$(@D) -Ikernel/server/proto $<
$(BUILD)/obj/gen/proto/%.o: $(BUILD)/gen/proto/%.c $(PROTO_H)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Ulinux -Wno-unused-parameter -c $< -o $@
$(OBJS_pkserver) $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/kernel/server/*.c \
	tests/fuzz/*.c)): $(PROTO_H)
# Every message the headers declare, in one table: the API server finds a
# served kind's message there by its row's group, version and kind (proto.c),
# so a kind's message needs no registration of its own.
PROTO_MSGS := $(BUILD)/gen/proto/pk_messages.c
$(PROTO_MSGS): $(PROTO_H)
	@mkdir -p $(@D)
	@{ echo '/* Generated from the protoc-c headers: every message descriptor. */'; \
	   echo '#undef linux'; \
	   for h in $(notdir $(PROTO_H)); do echo "#include \"$$h\""; done; \
	   echo 'const ProtobufCMessageDescriptor *const pk_srv_pb_messages[] = {'; \
	   sed -n 's/^extern const ProtobufCMessageDescriptor \(.*\);$$/    \&\1,/p' $(PROTO_H); \
	   echo '    NULL,'; echo '};'; } > $@.tmp && mv $@.tmp $@
$(call lib_path,pkserver): $(PROTO_O) $(BUILD)/obj/gen/proto/pk_messages.o

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# --- programs ---------------------------------------------------------------
PROGS := $(BUILD)/bin/podctl $(BUILD)/bin/podkerneld $(BUILD)/bin/podagent

$(BUILD)/bin/podctl: $(BUILD)/obj/kernel/podctl/main.o $(call libs_of_set,$(PROG_LIBS_podctl))
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call pkg_libs,$(PROG_LIBS_podctl))

$(BUILD)/bin/podkerneld: $(BUILD)/obj/kernel/podkerneld/main.o \
		$(call libs_of_set,$(PROG_LIBS_podkerneld))
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call pkg_libs,$(PROG_LIBS_podkerneld))

$(BUILD)/bin/podagent: $(BUILD)/obj/agent/main.o $(call libs_of_set,$(PROG_LIBS_podagent))
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call pkg_libs,$(PROG_LIBS_podagent))

# --- tests ------------------------------------------------------------------
TEST_SRCS := $(shell find tests -name 'test_*.c' -not -path 'tests/fuzz/*' \
	-not -path 'tests/bench/*' 2>/dev/null | sort)
TEST_BINS := $(patsubst %.c,$(BUILD)/%,$(TEST_SRCS))
TEST_SUPPORT := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/support/*.c))

# A test's libraries: its own TESTLIBS_ line, else its folder's.
testlibs = $(or $(TESTLIBS_$(basename $(1))),$(TESTLIBS_$(patsubst %/,%,$(dir $(1)))))
define TEST_template
$(BUILD)/$(basename $(1)): $(BUILD)/obj/$(basename $(1)).o $(TEST_SUPPORT) \
		$$(call libs_of_set,$$(call testlibs,$(1)))
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_LDFLAGS) -o $$@ $$^ \
		$$(call pkg_libs,$$(call testlibs,$(1))) $$(CHECK_LIBS)
endef
$(foreach t,$(TEST_SRCS),$(eval $(call TEST_template,$(t))))

# --- benchmarks ---------------------------------------------------------------
BENCH_SRCS := $(wildcard tests/bench/bench_*.c)
BENCH_BINS := $(patsubst %.c,$(BUILD)/%,$(BENCH_SRCS))
$(BUILD)/tests/bench/%: $(BUILD)/obj/tests/bench/%.o $(call libs_of,all)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call pkg_libs,all)

# --- top-level targets -------------------------------------------------------
.PHONY: all deps deps-build demo check check-build bench bench-build fuzz fuzz-build fuzz-smoke soak chaos valgrind clean format format-check \
	install uninstall
.DEFAULT_GOAL := all

all: $(PROGS) $(call lib_path,topo)

deps:
	@sh .ci/deps.sh

deps-build:
	@sh .ci/deps.sh build

check-build: $(PROGS) $(TEST_BINS)

# Targets that need the Debian packages build in a sub-make after deps, so
# that `make -j` never compiles before they are installed.
# The fuzz smoke run comes first so that the suites' closing line
# ("N passed, N failed") is the last thing check prints.
check: deps
	$(MAKE) format-check
	$(MAKE) BUILD=build/san SAN=1 OPT=-O1 check-build
	$(MAKE) fuzz-smoke
	@sh tests/run-tests.sh build/san

DEMO_KEEP ?= 1
demo: deps-build
	$(MAKE) all
	@PODKERNEL_DEMO_KEEP=$(DEMO_KEEP) sh examples/demo.sh build/bin

bench-build: $(PROGS) $(BENCH_BINS)

bench: deps
	$(MAKE) BUILD=build/bench OPT='-O3 -march=x86-64-v2' bench-build
	@sh tests/bench/run-bench.sh build/bench

# valgrind over every Check suite, on a plain (unsanitized) build.
valgrind: deps
	$(MAKE) BUILD=build/vg OPT=-O1 check-build
	@sh tests/run-valgrind.sh build/vg

# libFuzzer: a clang build of every library with coverage instrumentation.
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_SECONDS ?= 60
fuzz-build:
	$(MAKE) BUILD=build/fuzz CC=clang WARN='-Wall -Wno-unused-parameter' \
		CFLAGS='-g -O1 -fsanitize=fuzzer-no-link,address,undefined' \
		LDFLAGS='-fsanitize=fuzzer,address,undefined' \
		$(patsubst tests/fuzz/%.c,build/fuzz/tests/fuzz/%,$(FUZZ_SRCS))

$(BUILD)/tests/fuzz/%: $(BUILD)/obj/tests/fuzz/%.o $(call libs_of,all)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(call pkg_libs,all)

fuzz: deps
	$(MAKE) fuzz-build
	@sh tests/fuzz/run-fuzz.sh build/fuzz $(FUZZ_SECONDS)

fuzz-smoke: fuzz-build
	@sh tests/fuzz/run-fuzz.sh build/fuzz 10

# Campaigns (not part of check; check runs their short versions,
# tests/soak/test_{soak,chaos}.sh), on the optimised build by default.
SOAK_CYCLES ?= 100
SOAK_SECONDS ?= 600
CHAOS_SECONDS ?= 600
soak: deps
	$(MAKE) $(BUILD)/bin/podkerneld
	@sh tests/soak/soak.sh $(BUILD)/bin $(SOAK_CYCLES) $(SOAK_SECONDS)

chaos: deps
	$(MAKE) $(BUILD)/bin/podkerneld
	@sh tests/soak/chaos.sh $(BUILD)/bin $(CHAOS_SECONDS)

# --- install -------------------------------------------------------------------
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
DOCDIR     ?= $(DATADIR)/doc/podkernel
UNITDIR    ?= $(PREFIX)/lib/systemd/system
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL    ?= install
MANPAGES   := podctl.1 podkerneld.8 podagent.8 podkernel-board.5
UNITS      := podagent.service podkerneld.service
BOARDS     := $(notdir $(wildcard boards/*.yaml))
# the documentation README.md links, installed beside it as docs/
DOCS       := $(notdir $(wildcard docs/*.md docs/*.png))
# @NAME@ in man pages, units and the .pc file
SUBST = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@PREFIX@|$(PREFIX)|g' \
	-e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' \
	-e 's|@DOCDIR@|$(DOCDIR)|g' -e 's|@UNITDIR@|$(UNITDIR)|g'

# The .pc file is relocatable: where PKGCONFIGDIR lies under PREFIX, prefix
# is found from ${pcfiledir}, and the other directories under PREFIX are
# written relative to it, so a staged (DESTDIR) or moved tree builds as it
# is.  A directory outside PREFIX stays absolute.
pc_up      = $(subst $(eval) ,/,$(foreach c,$(subst /, ,$(patsubst $(PREFIX)/%,%,$(PKGCONFIGDIR))),..))
PC_PREFIX  = $(if $(filter $(PREFIX)/%,$(PKGCONFIGDIR)),$${pcfiledir}/$(pc_up),$(PREFIX))
pc_rel     = $(if $(filter $(PREFIX)/%,$(1)),$${prefix}/$(patsubst $(PREFIX)/%,%,$(1)),$(1))
PC_SUBST   = -e 's|@PC_PREFIX@|$(PC_PREFIX)|g' -e 's|@PC_LIBDIR@|$(call pc_rel,$(LIBDIR))|g' \
	-e 's|@PC_INCLUDEDIR@|$(call pc_rel,$(INCLUDEDIR))|g' \
	-e 's|@PC_DATADIR@|$(call pc_rel,$(DATADIR))|g'

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR)/podkernel $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(DATADIR)/podkernel/boards $(DESTDIR)$(DOCDIR)/docs \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	$(INSTALL) -m 755 $(BUILD)/bin/podctl $(DESTDIR)$(BINDIR)/podctl
	$(INSTALL) -m 755 $(BUILD)/bin/podkerneld $(BUILD)/bin/podagent $(DESTDIR)$(SBINDIR)/
	$(INSTALL) -m 644 $(call lib_path,topo) $(DESTDIR)$(LIBDIR)/libpodkernel-topology.a
	$(INSTALL) -m 644 topology/topology.h $(DESTDIR)$(INCLUDEDIR)/podkernel/topology.h
	$(SUBST) $(PC_SUBST) deploy/pkgconfig/podkernel-topology.pc.in > \
		$(DESTDIR)$(PKGCONFIGDIR)/podkernel-topology.pc
	for m in $(MANPAGES); do \
		$(SUBST) docs/man/$$m > $(DESTDIR)$(MANDIR)/man$${m##*.}/$$m || exit 1; done
	for u in $(UNITS); do \
		$(SUBST) deploy/systemd/$$u.in > $(DESTDIR)$(UNITDIR)/$$u || exit 1; done
	$(INSTALL) -m 644 $(addprefix boards/,$(BOARDS)) $(DESTDIR)$(DATADIR)/podkernel/boards/
	$(INSTALL) -m 644 README.md $(DESTDIR)$(DOCDIR)/README.md
	$(INSTALL) -m 644 $(addprefix docs/,$(DOCS)) $(DESTDIR)$(DOCDIR)/docs/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/podctl $(DESTDIR)$(SBINDIR)/podkerneld \
		$(DESTDIR)$(SBINDIR)/podagent $(DESTDIR)$(LIBDIR)/libpodkernel-topology.a \
		$(DESTDIR)$(INCLUDEDIR)/podkernel/topology.h \
		$(DESTDIR)$(PKGCONFIGDIR)/podkernel-topology.pc \
		$(foreach m,$(MANPAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(m)) \
		$(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS)) \
		$(addprefix $(DESTDIR)$(DATADIR)/podkernel/boards/,$(BOARDS)) \
		$(DESTDIR)$(DOCDIR)/README.md $(addprefix $(DESTDIR)$(DOCDIR)/docs/,$(DOCS))
	-rmdir $(DESTDIR)$(INCLUDEDIR)/podkernel $(DESTDIR)$(DATADIR)/podkernel/boards \
		$(DESTDIR)$(DATADIR)/podkernel $(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR) 2>/dev/null

# Every C file of the tree is kept clang-formatted (make check fails
# otherwise).  Outside a git checkout the sources are found by name.
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null | grep . || \
	find agent kernel topology tests -name '*.[ch]' -not -path '*/node_modules/*')
format:
	clang-format -i $(FORMAT_FILES)

format-check:
	@test -n "$(FORMAT_FILES)" || { echo "format-check: no C files found"; exit 1; }
	@clang-format --dry-run --Werror $(FORMAT_FILES)
	@echo "format-check: $(words $(FORMAT_FILES)) files formatted"

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
