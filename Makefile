# detm - desktop-environment task manager for LLM agents.
#
#   make            build bin/detmd and bin/detm-mcp
#   make run        install missing Debian packages, build, run detmd in the foreground
#   make test       install, build, run every test suite (closing line per suite)
#   make asan-test  the same suites under AddressSanitizer + UBSan
#   make bench      benchmarks (not part of make test)
#   make lint       include-direction check and function-length report
#
# Adding a library later: append its pkg-config name to DAEMON_PKGS (or
# PROXY_PKGS) and its Debian package to scripts/install-deps.sh.

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN     = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wwrite-strings -Wformat=2 -Wpointer-arith \
           -Wundef -Wsign-compare -Wcast-qual -Wvla -Wnull-dereference \
           -Wimplicit-fallthrough -Wno-unused-parameter
ifeq ($(CI),true)
WARN    += -Werror
endif
ifdef WERROR
WARN    += -Werror
endif

DAEMON_PKGS = libmicrohttpd sqlite3 json-c x11 x11-xcb xcb-xtest xext xtst xdamage xfixes libturbojpeg zlib libcurl libcrypto
# Headers only: detmd dlopens these at first use (ocr.c, enc.c), so an idle daemon
# does not map them.
DAEMON_DL_PKGS = tesseract libavcodec libavformat libavutil libarchive
PROXY_PKGS  = libcurl json-c
# detm-a11y (a11y/): the one program that links libatspi; detmd runs one per
# task display that is asked for its accessibility tree (daemon/x11/a11y.c).
A11Y_PKGS   = atspi-2 gobject-2.0 json-c x11
TEST_PKGS   = libcurl json-c sqlite3

# Quiet by default (V=1 shows the commands).
ifndef V
Q = @
ECHO = @printf '  %-6s %s\n'
else
ECHO = @true
endif

pc_cflags = $(shell pkg-config --cflags $(1) 2>/dev/null)
pc_libs   = $(shell pkg-config --libs $(1) 2>/dev/null)

B := build
BIN := bin

# Layers (docs/architecture.md; tools/check-layers.sh enforces them in make test):
#   common/     the contract: tool table, schemas, tool requests, errors,
#               limits, JSON kept as sent. Includes only libc and json-c.
#   daemon/     detmd, on top of common/, in subsystem folders by rank
#               (core, then store x11 backends, task, desktop ops, waits gui
#               recorder, http, then main.c and modules.c): a file includes
#               its own folder and lower ranks, naming the folder
#               ("store/store.h"); every folder's sources are built.
#   mcp-proxy/  detm-mcp, on top of common/. Neither includes the other.
COMMON_SRCS := $(wildcard common/*.c)
# gen/tools_list.o: tools/list's text, serialized at build time (mcp.h).
# gen/skill_md.o: the skill detm serves over MCP (mcp_skill.h).
COMMON_OBJS := $(COMMON_SRCS:%.c=$(B)/%.o) $(B)/gen/tools_list.o $(B)/gen/skill_md.o
DAEMON_DIRS := core store x11 backends task desktop ops waits gui recorder http
DAEMON_SRCS := $(wildcard daemon/*.c $(DAEMON_DIRS:%=daemon/%/*.c))
DASHBOARD_FILES := $(sort $(wildcard dashboard/*.html dashboard/*.js dashboard/*.css dashboard/*.svg))
DAEMON_OBJS := $(DAEMON_SRCS:%.c=$(B)/%.o) $(B)/gen/schema_sql.o $(B)/gen/dashboard_files.o \
	$(COMMON_OBJS)
# Everything but main.o, so unit tests can link the daemon's modules.
DAEMON_LIB_OBJS := $(filter-out $(B)/daemon/main.o,$(DAEMON_OBJS))

PROXY_SRCS := $(wildcard mcp-proxy/*.c)
PROXY_OBJS := $(PROXY_SRCS:%.c=$(B)/%.o)
PROXY_JSON_OBJS := $(COMMON_OBJS)

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(UNIT_SRCS:%.c=$(B)/%.o)

HTTPCASE_SRCS := $(wildcard tests/http/*.c)
HTTPCASE_OBJS := $(HTTPCASE_SRCS:%.c=$(B)/%.o)

MCPTEST_SRCS := $(wildcard tests/mcp/*.c)
MCPTEST_OBJS := $(MCPTEST_SRCS:%.c=$(B)/%.o)

X11TEST_SRCS := $(wildcard tests/x11/*.c)
X11TEST_OBJS := $(X11TEST_SRCS:%.c=$(B)/%.o)

VSTUB_SRCS := $(wildcard tests/stub/*.c)
VSTUB_OBJS := $(VSTUB_SRCS:%.c=$(B)/%.o)

VISIONTEST_SRCS := $(wildcard tests/vision/*.c)
VISIONTEST_OBJS := $(VISIONTEST_SRCS:%.c=$(B)/%.o)

OPSTEST_SRCS := $(wildcard tests/ops/*.c)
OPSTEST_OBJS := $(OPSTEST_SRCS:%.c=$(B)/%.o)

WAKERECV_SRCS := $(wildcard tests/wake/*.c)
WAKERECV_OBJS := $(WAKERECV_SRCS:%.c=$(B)/%.o)

A11Y_SRCS := $(wildcard a11y/*.c)
A11Y_OBJS := $(A11Y_SRCS:%.c=$(B)/%.o)

ALL_BINS := $(BIN)/detmd $(if $(PROXY_SRCS),$(BIN)/detm-mcp) $(if $(A11Y_SRCS),$(BIN)/detm-a11y)
TEST_BINS := $(if $(UNIT_SRCS),$(BIN)/test-unit) $(if $(HTTPCASE_SRCS),$(BIN)/httpcase) \
             $(if $(MCPTEST_SRCS),$(BIN)/test-mcp) $(if $(X11TEST_SRCS),$(BIN)/test-x11) \
             $(if $(VSTUB_SRCS),$(BIN)/vision-stub) $(if $(VISIONTEST_SRCS),$(BIN)/test-vision) \
             $(if $(WAKERECV_SRCS),$(BIN)/wake-recv) $(if $(OPSTEST_SRCS),$(BIN)/test-ops) \
             $(BIN)/libdetm-inject.so

.PHONY: all test-bins deps test-deps run test unit-test asan asan-test bench clean help fuzz fuzz-bins lint
all: $(ALL_BINS)
# Named so a sub-make with another BIN/B builds its own test binaries.
test-bins: $(TEST_BINS)

deps:
	@scripts/install-deps.sh build
test-deps:
	@scripts/install-deps.sh test

# Rebuild everything when the compiler or flags change (redis .make-settings).
SETTINGS := $(CC) $(CFLAGS) $(WARN) $(LDFLAGS)
$(B)/.settings: FORCE
	@mkdir -p $(B)
	@echo '$(SETTINGS)' | cmp -s - $@ || echo '$(SETTINGS)' > $@
FORCE:

$(B)/daemon/%.o: daemon/%.c $(B)/.settings
	@mkdir -p $(dir $@)
	$(ECHO) CC $<
	$(Q)$(CC) $(WARN) $(CFLAGS) -iquote daemon -iquote common $(call pc_cflags,$(DAEMON_PKGS) $(DAEMON_DL_PKGS)) -MMD -MP -c -o $@ $<

$(B)/common/%.o: common/%.c $(B)/.settings
	@mkdir -p $(dir $@)
	$(ECHO) CC $<
	$(Q)$(CC) $(WARN) $(CFLAGS) -iquote common $(call pc_cflags,json-c) -MMD -MP -c -o $@ $<

$(B)/mcp-proxy/%.o: mcp-proxy/%.c $(B)/.settings
	@mkdir -p $(dir $@)
	$(ECHO) CC $<
	$(Q)$(CC) $(WARN) $(CFLAGS) -iquote common $(call pc_cflags,$(PROXY_PKGS)) -MMD -MP -c -o $@ $<

$(B)/a11y/%.o: a11y/%.c $(B)/.settings
	@mkdir -p $(dir $@)
	$(ECHO) CC $<
	$(Q)$(CC) $(WARN) $(CFLAGS) -iquote common $(patsubst -I%,-isystem %,$(call pc_cflags,$(A11Y_PKGS))) -MMD -MP -c -o $@ $<

$(B)/tests/%.o: tests/%.c $(B)/.settings
	@mkdir -p $(dir $@)
	$(ECHO) CC $<
	$(Q)$(CC) $(WARN) $(CFLAGS) -Idaemon -Icommon -Imcp-proxy -Itests $(call pc_cflags,$(TEST_PKGS) $(DAEMON_PKGS) $(DAEMON_DL_PKGS)) -MMD -MP -c -o $@ $<

# Files embedded into detmd at build time (schema, later the dashboard).
$(BIN)/embed: tools/embed.c
	@mkdir -p $(BIN)
	$(CC) -O1 -std=c11 -Wall -o $@ $<
$(B)/gen/schema_sql.c: schema.sql $(BIN)/embed
	@mkdir -p $(dir $@)
	$(BIN)/embed schema_sql $< > $@
# The MCP skill (SEP-2640): SKILL.md's bytes and their sha256 digest.
$(B)/gen/skill_md.c: integrations/openclaw/SKILL.md $(BIN)/embed
	@mkdir -p $(dir $@)
	$(Q){ $(BIN)/embed mcp_skill_md $< && \
	  echo "const char mcp_skill_md_digest[] = \"sha256:$$(sha256sum < $< | cut -c1-64)\";"; } > $@.tmp && mv $@.tmp $@
$(B)/gen/dashboard_files.c: $(DASHBOARD_FILES) $(BIN)/embed
	@mkdir -p $(dir $@)
	$(BIN)/embed --files dashboard_files $(DASHBOARD_FILES) > $@
# Built from source with plain flags, whatever the build (ASan, libFuzzer):
# it runs here, at build time, and links the common sources but not the
# file it writes.
$(B)/gen-tools-list: tools/gen-tools-list.c $(COMMON_SRCS) $(wildcard common/*.h)
	@mkdir -p $(dir $@)
	$(ECHO) GEN $@
	$(Q)$(CC) -O1 -std=c11 -D_GNU_SOURCE -iquote common $(call pc_cflags,json-c) -o $@ \
	    tools/gen-tools-list.c $(COMMON_SRCS) $(call pc_libs,json-c) -lpthread
$(B)/gen/tools_list.c: $(B)/gen-tools-list
	@mkdir -p $(dir $@)
	$(Q)$(B)/gen-tools-list > $@.tmp && mv $@.tmp $@
$(B)/gen/%.o: $(B)/gen/%.c $(B)/.settings
	$(CC) $(CFLAGS) -std=c11 -iquote daemon/core -iquote common $(call pc_cflags,json-c) -c -o $@ $<

$(BIN)/detmd: $(DAEMON_OBJS)
	@mkdir -p $(BIN)
	$(ECHO) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(DAEMON_PKGS)) -ldl -lpthread -lm

$(BIN)/detm-mcp: $(PROXY_OBJS) $(PROXY_JSON_OBJS)
	@mkdir -p $(BIN)
	$(ECHO) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(filter-out libcurl,$(PROXY_PKGS))) -ldl -lpthread

# detm-a11y links common/utf8.c alone (its caps cut strings between
# characters); the rest of common/ is detmd's and detm-mcp's.
$(BIN)/detm-a11y: $(A11Y_OBJS) $(B)/common/utf8.o
	@mkdir -p $(BIN)
	$(ECHO) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(A11Y_PKGS))

$(BIN)/test-unit: $(UNIT_OBJS) $(DAEMON_LIB_OBJS)
	$(ECHO) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(DAEMON_PKGS)) -ldl -lpthread -lm

$(BIN)/httpcase: $(HTTPCASE_OBJS)
	$(ECHO) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(TEST_PKGS)) -lpthread

$(BIN)/test-x11: $(X11TEST_OBJS) $(DAEMON_LIB_OBJS)
	$(ECHO) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(DAEMON_PKGS)) -ldl -lpthread -lm

$(BIN)/test-mcp: $(MCPTEST_OBJS)
	$(ECHO) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(TEST_PKGS)) -lpthread

$(BIN)/vision-stub: $(VSTUB_OBJS)
	@mkdir -p $(BIN)
	$(ECHO) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pc_libs,libmicrohttpd json-c) -lpthread

$(BIN)/test-vision: $(VISIONTEST_OBJS) $(DAEMON_LIB_OBJS)
	@mkdir -p $(BIN)
	$(ECHO) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(DAEMON_PKGS)) -ldl -lpthread -lm

$(BIN)/test-ops: $(OPSTEST_OBJS) $(DAEMON_LIB_OBJS)
	@mkdir -p $(BIN)
	$(ECHO) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(DAEMON_PKGS)) -ldl -lpthread -lm

$(BIN)/wake-recv: $(WAKERECV_OBJS)
	@mkdir -p $(BIN)
	$(ECHO) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pc_libs,libmicrohttpd) -lpthread

# The faults suite's LD_PRELOAD injector (tests/faults/inject.c). Never
# sanitized: under make asan-test it is preloaded after ASan's runtime.
$(BIN)/libdetm-inject.so: tests/faults/inject.c $(B)/.settings
	@mkdir -p $(BIN)
	$(ECHO) LINK $@
	$(Q)$(CC) $(WARN) $(filter-out -fsanitize=%,$(CFLAGS)) -fPIC -shared -o $@ $< -ldl -lpthread

run: deps
	@$(MAKE) --no-print-directory all
	exec $(BIN)/detmd --shared-xvfb 1920x1080 $(ARGS)

# Every suite prints its own "N passed, N failed" line; tests/run.sh fails if any does.
# Two suites at a time (about half the wall time of one by one on 2
# cores); suites marked exclusive in tests/run.sh (apps) run alone.
# TEST_JOBS=1 make test runs them one by one.
TEST_JOBS ?= 2
test: test-deps
	@$(MAKE) --no-print-directory all test-bins fuzz-bins
	@TEST_JOBS=$(TEST_JOBS) tests/run.sh

# The include rules (also the first suite of make test) and a report of
# function lengths (the house rule: none over 100 lines).
lint:
	@tools/check-layers.sh | tail -1
	@tools/funclen.sh 15

unit-test: all $(TEST_BINS)
	@$(BIN)/test-unit

# -UNDEBUG: the state checkers (display.c registry_check_locked, recorder.c,
# live.c, enc.c, waits_check.c) assert after every transition unless NDEBUG
# is defined; a release build may pass CFLAGS="-O2 -DNDEBUG" to drop them,
# the ASan build always keeps them.
ASAN_FLAGS = -O1 -g -UNDEBUG -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# libFuzzer targets (tests/fuzz): clang, ASan + UBSan, their own build dir.
FUZZ_FLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,bin-fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
PROXY_LIB_OBJS = $(filter-out $(B)/mcp-proxy/main.o,$(PROXY_OBJS))
fuzz-bins:
	@$(MAKE) --no-print-directory CC=clang CI= WERROR= B=build-fuzz BIN=bin-fuzz CFLAGS="$(FUZZ_FLAGS)" \
	    LDFLAGS="-fsanitize=fuzzer,address,undefined" $(FUZZ_TARGETS)
bin-fuzz/fuzz_http bin-fuzz/fuzz_parse: bin-fuzz/fuzz_%: $(B)/tests/fuzz/fuzz_%.o $(DAEMON_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(ECHO) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(DAEMON_PKGS)) -ldl -lpthread -lm
bin-fuzz/fuzz_rpc: $(B)/tests/fuzz/fuzz_rpc.o $(PROXY_LIB_OBJS) $(PROXY_JSON_OBJS)
	@mkdir -p $(dir $@)
	$(ECHO) LINK $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(filter-out libcurl,$(PROXY_PKGS))) -ldl -lpthread
fuzz: fuzz-bins
	@FUZZ_SECONDS=$${FUZZ_SECONDS:-600} tests/fuzz/run.sh

asan: ; $(MAKE) B=build-asan BIN=bin-asan CFLAGS="$(ASAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" all test-bins
asan-test: test-deps
	@$(MAKE) --no-print-directory B=build-asan BIN=bin-asan CFLAGS="$(ASAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" all test-bins
	@$(MAKE) --no-print-directory fuzz-bins
	@DETM_BIN=bin-asan FUZZ_SECONDS=3 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 tests/run.sh

# test-bins: the benches start bin/vision-stub (waits, gui, a11y) as tests do.
bench:
	@scripts/install-deps.sh bench
	@$(MAKE) --no-print-directory all test-bins
	@bench/run.sh

clean:
	rm -rf build build-asan bin bin-asan

help:
	@sed -n '1,12p' Makefile

-include $(shell find $(B) -name '*.d' 2>/dev/null)
