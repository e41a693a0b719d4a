# Workloads the end-to-end tests profile (tests/e2e), and the demo workload.
# Everything lands in $(OUTPUT)/workloads; binaries linked against
# libcustomlabels find it in $(OUTPUT)/lib through an $ORIGIN rpath.

WL_DIR := $(OUTPUT)/workloads
WL_LIBDIR := $(OUTPUT)/lib
WL_SRC := tests/workloads
# No identical-code folding: every burn function must keep its own symbol.
WL_CFLAGS = $(CFLAGS) -Ilibcustomlabels -I$(WL_SRC) -fno-ipa-icf
WL_COMMON := $(WL_DIR)/common.o
WL_RPATH := -Wl,-rpath,'$$ORIGIN/../lib'

# Per ABI: library name suffix and the TLS symbol the reader looks for.
WL_LIBSUFFIX_0 := -v0
WL_LIBSUFFIX_1 :=
WL_TLSSYM_0 := custom_labels_thread_local_data
WL_TLSSYM_1 := custom_labels_current_set

# How each groundtruth build gets the library (ABI $(1)):
#   exe     static archive linked in, ABI symbols exported dynamically
#   lib     shared library loaded at startup
#   dlopen  shared library opened at run time (not linked)
wl_link_exe = $(WL_LIBDIR)/libcustomlabels$(WL_LIBSUFFIX_$(1)).a \
	-Wl,-u,custom_labels_abi_version -Wl,-u,$(WL_TLSSYM_$(1)) \
	'-Wl,--export-dynamic-symbol=custom_labels_*'
wl_link_lib = -L$(WL_LIBDIR) -l:libcustomlabels$(WL_LIBSUFFIX_$(1)).so $(WL_RPATH)
wl_link_dlopen = -ldl
wl_dep_exe = $(WL_LIBDIR)/libcustomlabels$(WL_LIBSUFFIX_$(1)).a
wl_dep_lib = $(WL_LIBDIR)/libcustomlabels$(WL_LIBSUFFIX_$(1)).so
# dlopen builds open the library by path at run time: still build it first.
wl_dep_dlopen = $(wl_dep_lib)
wl_def_dlopen = -DGT_DLOPEN

# $(1): ABI (0 or 1), $(2): linkage (exe, lib, dlopen)
define wl_groundtruth
$(WL_DIR)/groundtruth-v$(1)-$(2): $(WL_SRC)/groundtruth.c $(WL_COMMON) $(call wl_dep_$(2),$(1)) \
		| $(WL_DIR)
	$$(call msg,LINK,$$@)
	$$(Q)$$(CC) $$(WL_CFLAGS) -DGT_ABI=$(1) -DGT_LINKAGE='"$(2)"' $(wl_def_$(2)) $$(LDFLAGS) \
		$$< $(WL_COMMON) $$(call wl_link_$(2),$(1)) -lpthread -o $$@
WL_BINS += $(WL_DIR)/groundtruth-v$(1)-$(2)
endef

WL_BINS :=
$(foreach abi,0 1,$(foreach link,exe lib dlopen,$(eval $(call wl_groundtruth,$(abi),$(link)))))

# hostile: writes the raw ABI itself (no library), exported from the executable.
$(WL_DIR)/hostile: $(WL_SRC)/hostile.c $(WL_COMMON) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) -DHOSTILE_ABI=1 $(LDFLAGS) -rdynamic $< $(WL_COMMON) -lpthread -o $@

$(WL_DIR)/hostile-v0: $(WL_SRC)/hostile.c $(WL_COMMON) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) -DHOSTILE_ABI=0 $(LDFLAGS) -rdynamic $< $(WL_COMMON) -lpthread -o $@

WL_BINS += $(WL_DIR)/hostile $(WL_DIR)/hostile-v0

# churn: the driver and plain program know nothing of labels; the children
# are labelled through the startup library (v1, and v0 for exec cycles).
$(WL_DIR)/churn: $(WL_SRC)/churn.c $(WL_COMMON) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(LDFLAGS) $< $(WL_COMMON) -o $@

$(WL_DIR)/churn-plain: $(WL_SRC)/churn-child.c $(WL_COMMON) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) -DCHILD_PLAIN $(LDFLAGS) $< $(WL_COMMON) -o $@

$(WL_DIR)/churn-child: $(WL_SRC)/churn-child.c $(WL_COMMON) $(call wl_dep_lib,1) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) -DCHILD_ABI=1 $(LDFLAGS) $< $(WL_COMMON) $(call wl_link_lib,1) -o $@

$(WL_DIR)/churn-child-v0: $(WL_SRC)/churn-child.c $(WL_COMMON) $(call wl_dep_lib,0) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) -DCHILD_ABI=0 $(LDFLAGS) $< $(WL_COMMON) $(call wl_link_lib,0) -o $@

WL_BINS += $(WL_DIR)/churn $(WL_DIR)/churn-plain $(WL_DIR)/churn-child $(WL_DIR)/churn-child-v0

# demo: the labelled service `make demo` profiles.
WL_DEMO := $(WL_DIR)/demo
$(WL_DEMO): $(WL_SRC)/demo.c $(WL_COMMON) $(call wl_dep_lib,1) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(LDFLAGS) $< $(WL_COMMON) $(call wl_link_lib,1) -lpthread -o $@

WL_BINS += $(WL_DEMO)

$(WL_COMMON): $(WL_SRC)/common.c | $(WL_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WL_CFLAGS) -c $< -o $@

$(WL_DIR):
	$(Q)mkdir -p $@

DEMO_DEPS += $(WL_DEMO)

# dlcycle: dlopen()s the library by path, cycle after cycle (not linked).
$(WL_DIR)/dlcycle: $(WL_SRC)/dlcycle.c $(WL_COMMON) $(call wl_dep_lib,1) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(LDFLAGS) $< $(WL_COMMON) -ldl -lpthread -o $@

# The same library without -z nodelete, so that dlclose() really unmaps it.
WL_UNLOADABLE := $(WL_DIR)/unloadable/libcustomlabels.so
$(WL_UNLOADABLE): $(CL_V1_OBJS)
	$(call msg,LIB,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(LDFLAGS) -shared -pthread -Wl,-z,now $^ -o $@

# threadchurn: thousands of short-lived labelled threads.
$(WL_DIR)/threadchurn: $(WL_SRC)/threadchurn.c $(WL_COMMON) $(call wl_dep_lib,1) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(LDFLAGS) $< $(WL_COMMON) $(call wl_link_lib,1) -lpthread -o $@

WL_BINS += $(WL_DIR)/dlcycle $(WL_UNLOADABLE) $(WL_DIR)/threadchurn

# steady: threads that keep known labels, for `labelprof labels` (ABI $(1), linkage $(2)).
define wl_steady
$(WL_DIR)/steady-v$(1)-$(2): $(WL_SRC)/steady.c $(WL_COMMON) $(call wl_dep_$(2),$(1)) | $(WL_DIR)
	$$(call msg,LINK,$$@)
	$$(Q)$$(CC) $$(WL_CFLAGS) -DSTEADY_ABI=$(1) $$(LDFLAGS) $$< $(WL_COMMON) \
		$$(call wl_link_$(2),$(1)) -lpthread -o $$@
WL_BINS += $(WL_DIR)/steady-v$(1)-$(2)
endef

$(foreach abi,0 1,$(foreach link,exe lib,$(eval $(call wl_steady,$(abi),$(link)))))

# deepstack: threads at a known depth of frames, for the user stack walk.
$(WL_DIR)/deepstack: $(WL_SRC)/deepstack.c $(WL_COMMON) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(LDFLAGS) $< $(WL_COMMON) -lpthread -o $@

WL_BINS += $(WL_DIR)/deepstack

# container: runs a workload in its own mount and PID namespaces, from a private root.
$(WL_DIR)/container: $(WL_SRC)/container.c | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(LDFLAGS) $< -o $@

WL_BINS += $(WL_DIR)/container

# otel: OpenTelemetry thread and process contexts, through libcustomlabels loaded at
# startup (TLSDESC) or linked into the executable (its own TLS block).
$(WL_DIR)/otel-lib: $(WL_SRC)/otel.c $(WL_COMMON) $(call wl_dep_lib,1) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(LDFLAGS) $< $(WL_COMMON) $(call wl_link_lib,1) -lpthread -o $@

$(WL_DIR)/otel-exe: $(WL_SRC)/otel.c $(WL_COMMON) $(call wl_dep_exe,1) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(LDFLAGS) $< $(WL_COMMON) $(WL_LIBDIR)/libcustomlabels.a \
		-Wl,--export-dynamic-symbol=otel_thread_ctx_v1 -lpthread -o $@

WL_BINS += $(WL_DIR)/otel-lib $(WL_DIR)/otel-exe

# uring: a labelled thread driving an SQPOLL io_uring (liburing), whose kernel
# threads start with its thread pointer.
$(WL_DIR)/uring: $(WL_SRC)/uring.c $(WL_COMMON) $(call wl_dep_lib,1) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(LDFLAGS) $< $(WL_COMMON) $(call wl_link_lib,1) -luring -o $@

WL_BINS += $(WL_DIR)/uring

# golabels: a Go program labelling goroutines with pprof.Do, built by Debian's
# golang-go with and without cgo, stripped (-s -w) and not. Offline: no module
# downloads; build cache and GOPATH under $(OUTPUT), not in the home directory.
WL_GO_SRCS := $(wildcard $(WL_SRC)/golabels/*.go) $(WL_SRC)/golabels/go.mod
WL_GO_ENV = GOCACHE=$(abspath $(OUTPUT))/go-cache GOPATH=$(abspath $(OUTPUT))/go-path \
	GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local $(WL_GO_CROSS)
# make ARCH=arm64 on x86-64: Go's own cross-compiler, and the cross gcc for cgo.
WL_GOARCH_x86 := amd64
WL_GOARCH_arm64 := arm64
WL_GO_CROSS := $(if $(CROSS_COMPILE),GOARCH=$(WL_GOARCH_$(ARCH)) CC=$(CC))
WL_GO_LDFLAGS_plain :=
WL_GO_LDFLAGS_stripped := -s -w

# $(1): 0 or 1 (CGO_ENABLED), $(2): plain or stripped
define wl_golabels
$(WL_DIR)/golabels-cgo$(1)-$(2): $(WL_GO_SRCS) | $(WL_DIR)
	$$(call msg,GO,$$@)
	$$(Q)cd $(WL_SRC)/golabels && $$(WL_GO_ENV) CGO_ENABLED=$(1) \
		go build -ldflags='$(WL_GO_LDFLAGS_$(2))' -o $(abspath $(WL_DIR))/golabels-cgo$(1)-$(2) .
WL_BINS += $(WL_DIR)/golabels-cgo$(1)-$(2)
endef

$(foreach cgo,0 1,$(foreach strip,plain stripped,$(eval $(call wl_golabels,$(cgo),$(strip)))))

# The cgo builds for aarch64 too, where Go keeps g elsewhere: the host build
# makes them for tests/unit/test_golang.c to read (x86-64 hosts cross-build).
ifeq ($(ARCH),$(HOST_ARCH))
WL_GO_CC_A64 := $(if $(filter arm64,$(HOST_ARCH)),$(CC),aarch64-linux-gnu-gcc)

$(WL_DIR)/golabels-a64-cgo1-%: $(WL_GO_SRCS) | $(WL_DIR)
	$(call msg,GO,$@)
	$(Q)cd $(WL_SRC)/golabels && $(WL_GO_ENV) GOARCH=arm64 CC=$(WL_GO_CC_A64) CGO_ENABLED=1 \
		go build -ldflags='$(WL_GO_LDFLAGS_$*)' -o $(abspath $(WL_DIR))/golabels-a64-cgo1-$* .

WL_BINS += $(WL_DIR)/golabels-a64-cgo1-plain $(WL_DIR)/golabels-a64-cgo1-stripped
endif

# gofake: C programs laid out as Go programs (the label formats of other Go
# versions, hostile label maps); offsets from proc/golang.c's table.
$(WL_DIR)/gofake-go124: $(WL_SRC)/gofake.c $(WL_COMMON) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) -DGOFAKE_VERSION='"go1.24.2"' -DGOFAKE_LABELS_OFFSET=352 \
		-DGOFAKE_SLICE $(LDFLAGS) $< $(WL_COMMON) -lpthread -o $@

$(WL_DIR)/gofake-go119-hostile: $(WL_SRC)/gofake.c $(WL_COMMON) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) -DGOFAKE_VERSION='"go1.19.8"' -DGOFAKE_LABELS_OFFSET=360 \
		$(LDFLAGS) $< $(WL_COMMON) -lpthread -o $@

# a Go version labelprof has no offsets for
$(WL_DIR)/gofake-go199: $(WL_SRC)/gofake.c $(WL_COMMON) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) -DGOFAKE_VERSION='"go1.99.1"' -DGOFAKE_LABELS_OFFSET=352 \
		-DGOFAKE_SLICE $(LDFLAGS) $< $(WL_COMMON) -lpthread -o $@

WL_BINS += $(WL_DIR)/gofake-go124 $(WL_DIR)/gofake-go119-hostile $(WL_DIR)/gofake-go199
# unwind: code without frame pointers, for the CFI unwinding tests.
include $(WL_SRC)/unwind_build.mk

# unwind_dlopen: dlopen()s libunwind_lib (no frame pointers) while it is profiled;
# built like the unwind workloads, with libcustomlabels linked in, not the library.
$(WL_DIR)/unwind_dlopen: $(UW_DIR)/gcc/unwind_dlopen.o $(UW_DIR)/gcc/common.o $(UW_CL_OBJS) \
		$(WL_LIBDIR)/libunwind_lib-gcc.so | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(filter %.o,$^) $(CL_EXPORT_LDFLAGS) -ldl -lpthread -o $@

WL_BINS += $(WL_DIR)/unwind_dlopen

# deeprec: a recursion of exactly DEPTH frames (tests/e2e/test_deep.py), built
# without frame pointers (walked by CFI) and with them (walked by frame records);
# never sanitized, like the unwind workloads: a sanitizer's frames are not the
# recursion's.
DR_FLAGS := -O2 -g -D_GNU_SOURCE $(UW_WARNINGS) $(UW_FLAGS_gcc) -I$(WL_SRC)
DR_FLAGS_cfi := -fomit-frame-pointer
DR_FLAGS_fp := -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer

$(WL_DIR)/deeprec-%: $(WL_SRC)/deeprec.c $(WL_SRC)/common.c $(WL_SRC)/workload.h | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(DR_FLAGS) $(DR_FLAGS_$*) $(filter %.c,$^) -lpthread -o $@

WL_BINS += $(WL_DIR)/deeprec-cfi $(WL_DIR)/deeprec-fp

# pyembed: CPython embedded in a C program, Debian's libpython (python3-embed's
# flags, asked for only when it is built).
WL_PY_CFLAGS = $(shell $(PKG_CONFIG) --cflags python3-embed)
WL_PY_LIBS = $(shell $(PKG_CONFIG) --libs python3-embed)
$(WL_DIR)/pyembed: $(WL_SRC)/pyembed.c | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(WL_PY_CFLAGS) $(LDFLAGS) $< $(WL_PY_LIBS) -o $@

WL_BINS += $(WL_DIR)/pyembed

# labelburn: Java threads and a thread pool labelled through java/ (dev.labelprof.customlabels).
WL_LABELBURN := $(WL_DIR)/labelburn.jar
$(eval $(call j_jar,$(WL_LABELBURN),$(WL_SRC)/java/LabelBurn.java))
WL_BINS += $(WL_LABELBURN)

# jburn: the Java ground truth of Java frames (tests/workloads/java), labelled
# through java/; its native method (a JNI up-call) in libjburn.so. DeepRec (deep
# stacks through reflection) is compiled with it.
WL_JAVA := $(WL_DIR)/java
$(WL_JAVA)/JBurn.class: $(addprefix $(WL_SRC)/java/,JBurn.java ChurnTarget.java DeepRec.java) \
		$(J_JAR) | $(WL_DIR)
	$(call msg,JAVAC,$@)
	$(Q)$(JAVAC) $(JAVAC_FLAGS) -cp $(J_JAR) -d $(WL_JAVA) $(filter %.java,$^)

$(WL_JAVA)/libjburn.so: $(WL_SRC)/java/jburn.c | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(WL_JAVA)
	$(Q)$(CC) $(WL_CFLAGS) -fPIC -shared $(JNI_INCLUDES) $(LDFLAGS) $< -o $@

WL_BINS += $(WL_JAVA)/JBurn.class $(WL_JAVA)/libjburn.so

# jdeep: a Java stack of a given depth, for the java_stacks section of `make bench`.
$(WL_JAVA)/JDeep.class: $(WL_SRC)/java/JDeep.java | $(WL_DIR)
	$(call msg,JAVAC,$@)
	$(Q)$(JAVAC) $(JAVAC_FLAGS) -d $(WL_JAVA) $<

BENCH_BINS += $(WL_JAVA)/JDeep.class

# nodectx: the process context of the Node.js test app (tests/workloads/node), preloaded;
# libcustomlabels linked in with none of its symbols exported.
$(WL_DIR)/nodectx.so: $(WL_SRC)/nodectx.c $(WL_LIBDIR)/libcustomlabels.a | $(WL_DIR)
	$(call msg,LIB,$@)
	$(Q)$(CC) $(WL_CFLAGS) -fPIC -shared $(LDFLAGS) $< $(WL_LIBDIR)/libcustomlabels.a \
		-Wl,--exclude-libs,ALL -s -lpthread -o $@

WL_BINS += $(WL_DIR)/nodectx.so

# fakenode: the Node.js thread context's V8 objects laid out by a C program (its own TLS).
$(WL_DIR)/fakenode: $(WL_SRC)/fakenode.c $(WL_COMMON) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(WL_CFLAGS) $(LDFLAGS) $< $(WL_COMMON) \
		-Wl,--export-dynamic-symbol=otel_thread_ctx_nodejs_v1 -lpthread -o $@

WL_BINS += $(WL_DIR)/fakenode

# Last: every workload above is in WL_BINS by now.
.PHONY: workloads
workloads: $(WL_BINS)

TEST_DEPS += $(WL_BINS)
