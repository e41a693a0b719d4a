# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make            build labelprof, the BPF object and libcustomlabels
# make deps       install the Debian packages the build, tests and benchmarks need
# make test       install, build, run every test (end-to-end tests need root) and a
#                 seconds-long benchmark smoke
# make demo       install, build, profile the bundled labelled demo workload
# make bench      run the benchmarks
# make ARCH=arm64 build the BPF object (and, with the cross toolchain, the rest) for aarch64
# make SANITIZE=1 build with ASan + UBSan (output in .output-san)
# make test-kernels  boot Debian's kernels (6.1, 6.12; x86-64, arm64) under qemu and
#                 run a smoke of the end-to-end checks in each; KERNELS="6.1-arm64 host"
#                 picks some (tests/kernels/run)
# make V=1        show the commands

HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64.*/arm64/')
ARCH ?= $(HOST_ARCH)

ifeq ($(ARCH),x86)
GNU_ARCH := x86_64
else ifeq ($(ARCH),arm64)
GNU_ARCH := aarch64
else
$(error ARCH must be x86 or arm64, not '$(ARCH)')
endif

ifneq ($(ARCH),$(HOST_ARCH))
CROSS_COMPILE ?= $(GNU_ARCH)-linux-gnu-
endif

OUTPUT_SUFFIX := $(if $(filter-out $(HOST_ARCH),$(ARCH)),-$(ARCH))$(if $(SANITIZE),-san)
OUTPUT ?= .output$(OUTPUT_SUFFIX)
# npm packages of the Node.js tests (make deps: scripts/deps.sh --node)
NODE_DIR = $(OUTPUT)/node
override OUTPUT := $(abspath $(OUTPUT))

CC := $(CROSS_COMPILE)gcc
AR := $(CROSS_COMPILE)ar
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= $(if $(CROSS_COMPILE),PKG_CONFIG_LIBDIR=/usr/lib/$(GNU_ARCH)-linux-gnu/pkgconfig) pkg-config

# libcustomlabels' TLS dialect: TLSDESC, as the Custom Labels spec requires.
TLSDESC_FLAGS_x86 := -mtls-dialect=gnu2
TLSDESC_FLAGS_arm64 := -mtls-dialect=desc
TLSDESC_FLAGS := -ftls-model=global-dynamic $(TLSDESC_FLAGS_$(ARCH))

WARNINGS := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2
OPT ?= -O2
SAN_FLAGS := $(if $(SANITIZE),-fsanitize=address -fsanitize=undefined \
	-fno-sanitize-recover=all)
CFLAGS ?= $(OPT) -g
CFLAGS += -std=gnu11 $(WARNINGS) -fno-omit-frame-pointer -D_GNU_SOURCE $(SAN_FLAGS) -MMD -MP
LDFLAGS += $(SAN_FLAGS)

INCLUDES := -I$(OUTPUT) -Ibpf -iquote user -Ilibcustomlabels
USER_LIBS := $(shell $(PKG_CONFIG) --libs libbpf libelf libdw zlib 2>/dev/null || \
	echo -lbpf -lelf -ldw -lz) -lpthread
USER_LIBS += -lcurl -lmicrohttpd -linih -lsystemd -liberty
TEST_LIBS := -lcmocka

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(patsubst $(abspath .)/%,%,$(2))";
endif

.DELETE_ON_ERROR:
.SUFFIXES:
.PHONY: FORCE all bpf deps test test-build test-unit test-e2e test-kernels demo bench format clean \
	print-unit-tests

# ---- BPF object and skeleton -------------------------------------------------
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf -Wall -Werror \
	-mcpu=v3
BPF_OBJ := $(OUTPUT)/labelprof.bpf.o
SKEL := $(OUTPUT)/labelprof.skel.h

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MF $@.d -MT $@ -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name labelprof_bpf > $@

# ---- version ------------------------------------------------------------------
# git describe when the tree has tags, else the VERSION file and the commit;
# `make VERSION=x` sets it. version.h is rewritten only when it changes.
GIT_DESCRIBE := $(shell git describe --tags --dirty 2>/dev/null)
GIT_COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null)
VERSION ?= $(or $(GIT_DESCRIBE),$(shell cat VERSION 2>/dev/null || echo unknown)$(if \
	$(GIT_COMMIT),+g$(GIT_COMMIT)))
VERSION_H := $(OUTPUT)/version.h

$(VERSION_H): FORCE | $(OUTPUT)
	$(Q)printf '#define LABELPROF_VERSION "%s"\n' '$(subst ','\'',$(VERSION))' > $@.tmp && \
		{ cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@; }

FORCE:

# ---- userspace ---------------------------------------------------------------
# user/: main.c and a folder per concern (docs/design.md section 2)
USER_SRCS := $(wildcard user/*/*.c user/*/*/*.c)
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
USER_LIB := $(OUTPUT)/liblabelprof.a
LABELPROF := $(OUTPUT)/labelprof

$(OUTPUT)/user/%.o: user/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(INCLUDES) -c $< -o $@

$(OUTPUT)/user/sampling/sampler.o $(OUTPUT)/user/sampling/threads.o: $(SKEL)
$(OUTPUT)/user/main.o $(OUTPUT)/user/format/output_otlp.o $(OUTPUT)/user/agent/metrics.o: $(VERSION_H)

$(USER_LIB): $(USER_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(LABELPROF): $(OUTPUT)/user/main.o $(USER_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(USER_LIBS) -o $@

# ---- components: each directory adds its targets ----------------------------
# A fragment appends to ALL_TARGETS (built by `make`), UNIT_TESTS (binaries
# run by tests/run), TEST_DEPS (anything else tests need) and BENCH_BINS.
ALL_TARGETS := $(BPF_OBJ) $(SKEL) $(LABELPROF)
UNIT_TESTS :=
TEST_DEPS :=
BENCH_BINS :=
include $(sort $(wildcard */build.mk tests/*/build.mk))

# Unit tests: tests/unit/test_X.c -> $(OUTPUT)/tests/test_X, linked against liblabelprof.
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_TESTS += $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))

$(OUTPUT)/tests/test_%: tests/unit/test_%.c $(USER_LIB) $(TEST_DEPS) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Itests/unit $(LDFLAGS) $< $(USER_LIB) $(USER_LIBS) \
		$(TEST_LIBS) -ldl -o $@

all: $(ALL_TARGETS)
.DEFAULT_GOAL := all

bpf: $(BPF_OBJ) $(SKEL)

$(OUTPUT) $(OUTPUT)/tests $(OUTPUT)/bench:
	$(Q)mkdir -p $@

# ---- commands ----------------------------------------------------------------
deps:
	$(Q)scripts/deps.sh $(if $(filter-out $(HOST_ARCH),$(ARCH)),--cross $(GNU_ARCH),--node $(NODE_DIR))

# Everything the tests run, built in one go after deps.
# Every benchmark too: a benchmark nothing builds stops compiling unnoticed.
test-build: all $(UNIT_TESTS) $(TEST_DEPS) $(BENCH_BINS)

# The BPF object must keep compiling for the other architecture too.
OTHER_ARCH := $(if $(filter x86,$(ARCH)),arm64,x86)

test: deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)$(MAKE) --no-print-directory ARCH=$(OTHER_ARCH) OUTPUT=$(OUTPUT)/$(OTHER_ARCH) bpf
	$(Q)OUTPUT=$(OUTPUT) tests/run
	$(Q)OUTPUT=$(OUTPUT) bench/run --smoke

test-unit: test-build
	$(Q)OUTPUT=$(OUTPUT) tests/run --unit

test-e2e: test-build
	$(Q)OUTPUT=$(OUTPUT) tests/run --e2e

# The guests' labelprof and workloads: this build for x86-64 guests, the arm64
# cross build beside it for arm64 guests. x86-64 hosts only (no x86-64 cross build).
KERNELS ?= host 6.1-amd64 6.12-amd64 6.1-arm64 6.12-arm64
KERNEL_WORKLOADS := groundtruth-v1-lib otel-lib golabels-cgo0-plain golabels-cgo1-plain \
	unwind_c-gcc
KERNEL_BUILD = all $(KERNEL_WORKLOADS:%=$(OUTPUT)/workloads/%) $(OUTPUT)/lib/libcustomlabels.so \
	$(OUTPUT)/lib/libunwind_lib-gcc.so
KERNEL_BUILD_arm64 = $(OUTPUT)/workloads/unwind_c-gcc-pac
test-kernels:
	$(if $(filter x86,$(HOST_ARCH)),,$(error test-kernels runs on x86-64 hosts))
	$(Q)scripts/deps.sh --cross aarch64 --kernels --node $(NODE_DIR) --node-arm64 $(OUTPUT)-arm64/node
	$(if $(filter host %-amd64,$(KERNELS)),$(Q)$(MAKE) -s --no-print-directory $(KERNEL_BUILD))
	$(if $(filter %-arm64,$(KERNELS)),$(Q)$(MAKE) -s --no-print-directory ARCH=arm64 \
		OUTPUT=$(OUTPUT)-arm64 \
		$(subst $(OUTPUT)/,$(OUTPUT)-arm64/,$(KERNEL_BUILD) $(KERNEL_BUILD_arm64)))
	$(Q)OUTPUT=$(OUTPUT) OUTPUT_ARM64=$(OUTPUT)-arm64 tests/kernels/run $(KERNELS)

demo: deps
	$(Q)$(MAKE) --no-print-directory all $(DEMO_DEPS)
	$(Q)OUTPUT=$(OUTPUT) scripts/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all $(BENCH_BINS)
	$(Q)OUTPUT=$(OUTPUT) bench/run

FORMAT_SRCS = $(shell git ls-files '*.c' '*.h' 2>/dev/null | grep -v '^vmlinux/')
format:
	$(Q)clang-format -i $(FORMAT_SRCS)

clean:
	$(Q)rm -rf .output .output-*

-include $(shell find $(OUTPUT) -name '*.d' -type f 2>/dev/null)

print-unit-tests:
	@echo $(UNIT_TESTS)
