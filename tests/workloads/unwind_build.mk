# The unwind workloads (tests/e2e/test_unwind.py): code without frame pointers,
# built by gcc and by clang, whole and stripped, with its CFI in .eh_frame or
# only in a separate debug file. Included by build.mk.
#
# Built with their own flags, never sanitized (an ASan runtime adds frames of
# its own to every thread's path), so libcustomlabels and common.c are
# compiled in here too.

UW_DIR := $(WL_DIR)/unwind
# Where the build-id variant's debug file waits: the test installs it under
# /usr/lib/debug/.build-id for the time it runs.
UW_DEBUG_DIR := $(WL_DIR)/unwind-debug
UW_WARNINGS := -Wall -Wextra -Werror -Wno-unused-parameter
UW_FLAGS := -O2 -g -fomit-frame-pointer -D_GNU_SOURCE -MMD -MP $(UW_WARNINGS) -Ilibcustomlabels -I$(WL_SRC)
# No identical-code folding: every function keeps its own symbol.
UW_FLAGS_gcc := -fno-ipa-icf
UW_FLAGS_clang := $(if $(CROSS_COMPILE),--target=$(GNU_ARCH)-linux-gnu)
UW_CC_gcc := $(CC)
UW_CC_clang := $(CLANG)
UW_CXX_gcc := $(CROSS_COMPILE)g++
UW_CXX_clang := $(CLANG)++
# No unwind tables for the code itself: its CFI is only in .debug_frame.
UW_NO_EH := -fno-asynchronous-unwind-tables -fno-unwind-tables
STRIP := $(CROSS_COMPILE)strip
OBJCOPY := $(CROSS_COMPILE)objcopy

# libcustomlabels, as its own build compiles it (TLS descriptors need gcc), unsanitized.
UW_CL_OBJS := $(patsubst libcustomlabels/%.c,$(UW_DIR)/cl/%.o,$(CL_SRCS))
$(UW_DIR)/cl/%.o: libcustomlabels/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(UW_FLAGS) -fPIC -fvisibility=hidden -fexceptions \
		$(TLSDESC_FLAGS) -c $< -o $@

# $(1): compiler (gcc, clang)
define uw_compiler
$(UW_DIR)/$(1)/%.o: $(WL_SRC)/%.c
	$$(call msg,CC,$$@)
	$$(Q)mkdir -p $$(@D) && $$(UW_CC_$(1)) $$(UW_FLAGS) $$(UW_FLAGS_$(1)) -c $$< -o $$@

$(UW_DIR)/$(1)-no-eh/%.o: $(WL_SRC)/%.c
	$$(call msg,CC,$$@)
	$$(Q)mkdir -p $$(@D) && $$(UW_CC_$(1)) $$(UW_FLAGS) $$(UW_FLAGS_$(1)) $$(UW_NO_EH) -c $$< -o $$@

$(UW_DIR)/$(1)/%.o: $(WL_SRC)/%.cpp
	$$(call msg,CXX,$$@)
	$$(Q)mkdir -p $$(@D) && $$(UW_CXX_$(1)) $$(UW_FLAGS) $$(UW_FLAGS_$(1)) -std=gnu++17 -c $$< -o $$@

$(WL_LIBDIR)/libunwind_lib-$(1).so: $(UW_DIR)/$(1)/unwind_lib.o
	$$(call msg,LIB,$$@)
	$$(Q)mkdir -p $$(@D) && $$(UW_CC_$(1)) $$(UW_FLAGS_$(1)) -shared -fPIC $$< -o $$@

$(UW_DIR)/$(1)/unwind_lib.o: UW_FLAGS += -fPIC

$(WL_DIR)/unwind_c-$(1): $(UW_DIR)/$(1)/unwind_c.o $(UW_DIR)/$(1)/common.o $(UW_CL_OBJS) \
		$(WL_LIBDIR)/libunwind_lib-$(1).so | $(WL_DIR)
	$$(call msg,LINK,$$@)
	$$(Q)$$(UW_CC_$(1)) $$(UW_FLAGS_$(1)) $$(filter %.o,$$^) $(CL_EXPORT_LDFLAGS) \
		-L$(WL_LIBDIR) -l:libunwind_lib-$(1).so $$(WL_RPATH) -lpthread -o $$@

$(WL_DIR)/unwind_cxx-$(1): $(UW_DIR)/$(1)/unwind_cxx.o $(UW_DIR)/$(1)/common.o $(UW_CL_OBJS) \
		| $(WL_DIR)
	$$(call msg,LINK,$$@)
	$$(Q)$$(UW_CXX_$(1)) $$(UW_FLAGS_$(1)) $$^ $(CL_EXPORT_LDFLAGS) -lpthread -o $$@

UW_BINS += $(WL_DIR)/unwind_c-$(1) $(WL_DIR)/unwind_cxx-$(1)
endef

UW_BINS :=
$(foreach cc,gcc clang,$(eval $(call uw_compiler,$(cc))))

# Stripped: only .eh_frame and the dynamic symbols are left.
$(WL_DIR)/unwind_c-gcc-stripped: $(WL_DIR)/unwind_c-gcc
	$(call msg,STRIP,$@)
	$(Q)$(STRIP) --strip-all $< -o $@

# The CFI of the workload's code only in .debug_frame, and that only in a
# separate debug file: found through .gnu_debuglink next to the binary, or
# by build id (a build id of its own: it links the same objects).
UW_SPLIT_OBJS := $(UW_DIR)/gcc-no-eh/unwind_c.o $(UW_DIR)/gcc-no-eh/common.o $(UW_CL_OBJS) \
	$(WL_LIBDIR)/libunwind_lib-gcc.so
UW_SPLIT_LINK = $(CC) $(filter %.o,$^) $(CL_EXPORT_LDFLAGS) -L$(WL_LIBDIR) \
	-l:libunwind_lib-gcc.so $(WL_RPATH) -lpthread

$(WL_DIR)/unwind_c-gcc-debuglink: $(UW_SPLIT_OBJS) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(UW_SPLIT_LINK) -Wl,--build-id=sha1 -o $@.full && \
		$(OBJCOPY) --only-keep-debug $@.full $@.debug && \
		$(OBJCOPY) --strip-debug --add-gnu-debuglink=$@.debug $@.full $@ && rm $@.full

$(WL_DIR)/unwind_c-gcc-buildid: $(UW_SPLIT_OBJS) | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(UW_DEBUG_DIR) && $(UW_SPLIT_LINK) -Wl,--build-id=uuid -o $@.full && \
		$(OBJCOPY) --only-keep-debug $@.full $(UW_DEBUG_DIR)/$(@F).debug && \
		$(OBJCOPY) --strip-debug $@.full $@ && rm $@.full

UW_BINS += $(WL_DIR)/unwind_c-gcc-stripped $(WL_DIR)/unwind_c-gcc-debuglink \
	$(WL_DIR)/unwind_c-gcc-buildid

# aarch64: return addresses signed by pointer authentication (tests/kernels: cfi-pac).
ifeq ($(ARCH),arm64)
$(UW_DIR)/gcc-pac/%.o: $(WL_SRC)/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(UW_FLAGS) $(UW_FLAGS_gcc) -mbranch-protection=pac-ret \
		-c $< -o $@

$(WL_DIR)/unwind_c-gcc-pac: $(UW_DIR)/gcc-pac/unwind_c.o $(UW_DIR)/gcc-pac/common.o \
		$(UW_CL_OBJS) $(WL_LIBDIR)/libunwind_lib-gcc.so | $(WL_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(UW_FLAGS_gcc) $(filter %.o,$^) $(CL_EXPORT_LDFLAGS) -L$(WL_LIBDIR) \
		-l:libunwind_lib-gcc.so $(WL_RPATH) -lpthread -o $@

UW_BINS += $(WL_DIR)/unwind_c-gcc-pac
endif
WL_BINS += $(UW_BINS)
