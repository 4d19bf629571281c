# AgentGuard: plain GNU make. `make`, `make check`, `make check-asan`,
# `make fuzz`, `make install PREFIX=...`, `make dist`. See README.md.

CC ?= gcc
BUILD ?= build
PREFIX ?= /usr/local
SANITIZE ?=
PKGS := yaml-0.1 jansson libcrypto libgit2 libcurl libarchive libseccomp
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
# libcurl, libgit2 and libarchive are loaded when first used
# (src/lib/base/lazylib.h), not linked: by the soname of the library
# compiled against, read here.
LAZY_PKGS := libgit2 libcurl libarchive
PKG_LIBS := $(shell pkg-config --libs $(filter-out $(LAZY_PKGS),$(PKGS))) -lm
soname = $(shell objdump -p $(shell pkg-config --variable=libdir $(1))/$(2).so 2>/dev/null | awk '$$1 == "SONAME" {print $$2}')
LAZY_SONAMES := -DAG_SONAME_CURL='"$(call soname,libcurl,libcurl)"' \
	-DAG_SONAME_GIT2='"$(call soname,libgit2,libgit2)"' \
	-DAG_SONAME_ARCHIVE='"$(call soname,libarchive,libarchive)"'
EVENT_CFLAGS := $(shell pkg-config --cflags libevent)
EVENT_LIBS := $(shell pkg-config --libs libevent libevent_openssl openssl)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wformat=2 -Wformat-security -Wimplicit-function-declaration \
	-Wmisleading-indentation -Wvla -Wwrite-strings -Wold-style-definition -fno-common \
	-Wno-format-nonliteral
HARDEN := -fstack-protector-strong -fPIE
HARDEN_LD := -pie -Wl,-z,relro,-z,now -Wl,-z,noexecstack
OPT := -O2 -g
ifeq ($(SANITIZE),)
HARDEN += -D_FORTIFY_SOURCE=3
else
OPT := -O1 -g -fno-omit-frame-pointer
SAN := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all
endif

CPPFLAGS += -Isrc -D_GNU_SOURCE $(LAZY_SONAMES)
CFLAGS += -std=gnu17 $(OPT) $(WARN) $(HARDEN) $(SAN) $(PKG_CFLAGS)
LDFLAGS += $(HARDEN_LD) $(SAN)

LIB_SRC := $(sort $(wildcard src/lib/*/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
GW_SRC := $(sort $(wildcard src/gateway/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
GW_OBJ := $(GW_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_REPLAY := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/tests/%)
SCHEMA_JSON := data/schemas/agentguard-config-v1.schema.json

.PHONY: FORCE all check check-asan check-asan-full check-valgrind fuzz fuzz-build fuzz-long prebuild-sanitizers install clean tests format-check dist

all: $(BUILD)/agentguard $(BUILD)/agentguard-probe $(BUILD)/agentguard-init $(BUILD)/agentguard-gateway

# The preflight's probe: static (musl), so it runs in any image, even one
# with no libc or shell; installed beside agentguard, which finds it there.
MUSL_CC ?= musl-gcc
$(BUILD)/agentguard-probe: src/probe/agentguard-probe.c
	@mkdir -p $(dir $@)
	$(MUSL_CC) -static -std=gnu17 -O2 -Wall -Wextra -Werror -o $@ $<

# The agent's in-container init (the deadline holds without AgentGuard):
# static and installed beside agentguard, like the probe.
$(BUILD)/agentguard-init: src/init/agentguard-init.c
	@mkdir -p $(dir $@)
	$(MUSL_CC) -static -std=gnu17 -O2 -Wall -Wextra -Werror -o $@ $<

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# The schema is compiled into the binary so `agentguard schema` needs no data dir.
$(BUILD)/src/cli/schema_blob.o: $(SCHEMA_JSON)
$(BUILD)/src/cli/egress_schema_blob.o: data/schemas/live-study-egress-policy-v1.schema.json \
	data/schemas/live-study-egress-manifest-v1.schema.json
# The evidence schemas are compiled into the library for `agentguard evidence verify`.
$(BUILD)/src/lib/evidence/schema_data.o: data/schemas/contained-run-v1.schema.json \
	data/schemas/containment-evidence-v1.schema.json

# `agentguard --version` names the commit the binary was built from: in a
# git checkout (this directory is the top of it) the commit, "-dirty" when
# tracked files differ from it; elsewhere (a tarball build) "unknown". The
# header is rewritten only when that changes, so main.c rebuilds then.
$(BUILD)/gen/build_info.h: FORCE
	@mkdir -p $(dir $@)
	@c=unknown; \
	if [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ]; then \
		c=$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown); \
		git diff --quiet HEAD -- 2>/dev/null || c="$$c-dirty"; \
	fi; \
	printf '#define AG_BUILD_COMMIT "%s"\n' "$$c" >$@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
$(BUILD)/src/cli/main.o: $(BUILD)/gen/build_info.h
$(BUILD)/src/cli/main.o: CPPFLAGS += -I$(BUILD)/gen
FORCE:

$(BUILD)/libagentguard.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/agentguard: $(CLI_OBJ) $(BUILD)/libagentguard.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libagentguard.a $(PKG_LIBS)

# The egress gateway: its own main, the base and egress libraries, libevent.
$(GW_OBJ): CFLAGS += $(EVENT_CFLAGS)
$(BUILD)/agentguard-gateway: $(GW_OBJ) $(BUILD)/libagentguard.a
	$(CC) $(LDFLAGS) -o $@ $(GW_OBJ) $(BUILD)/libagentguard.a $(PKG_LIBS) $(EVENT_LIBS)

$(BUILD)/tests/test_%: tests/unit/test_%.c $(BUILD)/libagentguard.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests -o $@ $< $(BUILD)/libagentguard.a $(PKG_LIBS) $(CMOCKA_LIBS) $(LDFLAGS)

# Fuzz harnesses built with gcc double as corpus replayers (tests/fuzz/replay.c).
$(BUILD)/tests/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(BUILD)/libagentguard.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< tests/fuzz/replay.c $(BUILD)/libagentguard.a $(PKG_LIBS) $(LDFLAGS)

# Network test gear for the study-egress engine tests (tests/gear/agtest-net.c):
# static musl, bind-mounted read-only into busybox test containers; never installed.
# agtest-hostile-gateway: a gateway replacement that writes without bound
# (t1115), static musl for the gateway image. agtest-mock-provider: a scripted
# model provider (OpenAI Responses, Anthropic Messages) for the real-agent tests.
$(BUILD)/tests/agtest-net $(BUILD)/tests/agtest-hostile-gateway $(BUILD)/tests/agtest-mock-provider: $(BUILD)/tests/%: tests/gear/%.c
	@mkdir -p $(dir $@)
	$(MUSL_CC) -static -std=gnu17 -O2 -Wall -Wextra -Werror -o $@ $<

# agtest-tls-upstream: a test HTTPS destination (credential injection), glibc
# and OpenSSL, so it runs on the host or in a container of the gateway image.
$(BUILD)/tests/agtest-tls-upstream: tests/gear/agtest-tls-upstream.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu17 -O2 -Wall -Wextra -Werror -o $@ $< -lssl -lcrypto
# agtest-tls-client: the test agent's HTTPS client, static (glibc, OpenSSL)
# for the busybox test image.
$(BUILD)/tests/agtest-tls-client: tests/gear/agtest-tls-client.c
	@mkdir -p $(dir $@)
	$(CC) -static -std=gnu17 -O2 -Wall -Wextra -Werror -o $@ $< -lssl -lcrypto -lpthread

tests: $(BUILD)/agentguard $(BUILD)/agentguard-probe $(BUILD)/agentguard-init $(BUILD)/agentguard-gateway $(UNIT_BIN) $(FUZZ_REPLAY) \
	$(BUILD)/tests/agtest-net $(BUILD)/tests/agtest-hostile-gateway $(BUILD)/tests/agtest-mock-provider \
	$(BUILD)/tests/agtest-tls-upstream $(BUILD)/tests/agtest-tls-client

# The whole suite; prints one closing line "N passed, M failed".
check: tests
	BUILD=$(BUILD) tests/run

# Under ASan + UBSan: the unit tests, the fuzz corpus replays and the CLI
# files tests/asan-cli lists (each with the C paths it drives that no unit
# test reaches; the plain pass runs every file). check-asan-full runs them all.
# Built with clang when there is one: the sanitizer build is then also
# the tree's clang build (warning-free under the same -Werror flags, unit
# tests included), so CI compiles the tree twice, not three times.
ASAN_CC ?= $(shell command -v clang >/dev/null 2>&1 && echo clang || echo $(CC))
check-asan:
	$(MAKE) BUILD=build-asan CC=$(ASAN_CC) SANITIZE=address,undefined tests
	BUILD=build-asan AG_TEST_ONLY=tests/asan-cli tests/run

# The sanitizer and fuzz builds alone, no test run: scripts/test makes them
# at the lowest priority while the plain suite waits on the engine.
prebuild-sanitizers:
	$(MAKE) BUILD=build-asan CC=$(ASAN_CC) SANITIZE=address,undefined tests
	$(MAKE) fuzz-build

check-asan-full:
	$(MAKE) BUILD=build-asan CC=$(ASAN_CC) SANITIZE=address,undefined check

check-valgrind: tests
	BUILD=$(BUILD) AG_VALGRIND=1 tests/run unit

# libFuzzer with clang: FUZZ_SECONDS for the config loader (CI: 8 s),
# FUZZ_EGRESS_SECONDS for each study-egress target, the gateway's request
# parser among them (CI: 2 s each). A target uses tests/fuzz/<target>.dict
# when there is one (the loader: yaml.dict).
FUZZ_SECONDS ?= 60
FUZZ_EGRESS_SECONDS ?= 30
FUZZ_TARGETS ?= config egress_policy egress_authority egress_manifest gateway_request gateway_inject
FUZZ_CFLAGS := -std=gnu17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	$(CPPFLAGS) $(PKG_CFLAGS)
# The library is instrumented once (build-fuzz/lib.a), then linked into each target.
FUZZ_OBJ := $(LIB_SRC:%.c=build-fuzz/%.o)
build-fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
build-fuzz/lib.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^
# Each target is linked on its own (make -j links them side by side), then
# run one after the other. A target is relinked when its sources change
# (its .d file), not when FUZZ_CFLAGS do: `rm -rf build-fuzz` after that.
FUZZ_BIN := $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)
build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c build-fuzz/lib.a
	clang $(FUZZ_CFLAGS) -MMD -MP -o $@ $< build-fuzz/lib.a $(PKG_LIBS)
fuzz-build: $(FUZZ_BIN)
fuzz: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p build-fuzz/corpus-$$t; \
	  secs=$(FUZZ_SECONDS); dict=tests/fuzz/yaml.dict; \
	  case $$t in egress_*|gateway_*) secs=$(FUZZ_EGRESS_SECONDS); dict=;; esac; \
	  if [ -f tests/fuzz/$$t.dict ]; then dict=tests/fuzz/$$t.dict; fi; \
	  build-fuzz/fuzz_$$t -max_total_time=$$secs -max_len=65536 -timeout=10 \
	    -rss_limit_mb=2048 $${dict:+-dict=$$dict} build-fuzz/corpus-$$t tests/fuzz/corpus/$$t; \
	done

fuzz-long:
	$(MAKE) fuzz FUZZ_SECONDS=1800 FUZZ_EGRESS_SECONDS=1800

install: $(BUILD)/agentguard $(BUILD)/agentguard-probe $(BUILD)/agentguard-init $(BUILD)/agentguard-gateway
	install -D -m 0755 $(BUILD)/agentguard $(DESTDIR)$(PREFIX)/bin/agentguard
	install -D -m 0755 $(BUILD)/agentguard-probe $(DESTDIR)$(PREFIX)/bin/agentguard-probe
	install -D -m 0755 $(BUILD)/agentguard-init $(DESTDIR)$(PREFIX)/bin/agentguard-init
	install -D -m 0755 $(BUILD)/agentguard-gateway $(DESTDIR)$(PREFIX)/bin/agentguard-gateway
	install -D -m 0644 $(SCHEMA_JSON) $(DESTDIR)$(PREFIX)/share/agentguard/schemas/agentguard-config-v1.schema.json
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/agentguard/schemas \
		data/schemas/contained-run-v1.schema.json data/schemas/containment-evidence-v1.schema.json \
		data/schemas/live-study-egress-policy-v1.schema.json \
		data/schemas/live-study-egress-manifest-v1.schema.json \
		data/schemas/agentguard-cli-output-v1.schema.json

	install -D -m 0644 man/agentguard.1 $(DESTDIR)$(PREFIX)/share/man/man1/agentguard.1
	install -D -m 0644 completions/agentguard.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/agentguard
	install -D -m 0644 completions/_agentguard $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_agentguard

# A versioned source tarball of the tracked files (needs a git checkout):
# agentguard-VERSION.tar.gz in DISTDIR. Reproducible: names sorted, every
# mtime the last commit's time, owner 0:0, modes normalized, gzip without
# a name or time stamp, so the same commit gives the same bytes.
VERSION := $(shell sed -n 's/^\#define AG_VERSION "\(.*\)"/\1/p' src/lib/base/ag.h)
DISTDIR ?= .
DIST := agentguard-$(VERSION)
dist:
	@test -n "$(VERSION)" || { echo "make dist: no AG_VERSION in src/lib/base/ag.h" >&2; exit 1; }
	@git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "make dist: needs a git checkout" >&2; exit 1; }
	@mkdir -p $(DISTDIR)
	git ls-files -z | LC_ALL=C tar --null -T - --sort=name \
		--mtime=@$$(git log -1 --format=%ct) --owner=0 --group=0 --numeric-owner \
		--mode='u+rw,go-w,a+rX' --format=posix \
		--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
		--transform 's,^,$(DIST)/,' -cf - | gzip -9 -n >$(DISTDIR)/$(DIST).tar.gz.tmp
	mv -f $(DISTDIR)/$(DIST).tar.gz.tmp $(DISTDIR)/$(DIST).tar.gz
	@echo "$(DISTDIR)/$(DIST).tar.gz"

# Every C file of the tree is kept clang-format clean (scripts/test runs
# this in CI): the library, the CLI, the probe, the gateway, and the tests'
# C (unit tests, fuzz harnesses, test gear).
FORMAT_FILES := $(shell find src tests -name '*.[ch]' | LC_ALL=C sort)
format-check:
	clang-format --dry-run -Werror $(FORMAT_FILES)

clean:
	rm -rf build build-asan build-fuzz build-clang

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(GW_OBJ:.o=.d) $(FUZZ_OBJ:.o=.d) $(FUZZ_BIN:=.d)
