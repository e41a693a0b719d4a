# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Fixtures for tests/unit/test_unwind.c, built into $(OUTPUT)/tests/unwind/:
# tests/unwind/fx.c without frame pointers, with CFI in .eh_frame, only in
# .debug_frame, and only in a separate debug file; for x86-64 and aarch64; for
# aarch64 also with its return addresses signed (pac-ret).

UWFX_DIR := $(OUTPUT)/tests/unwind
UWFX_SRC := tests/unwind/fx.c tests/unwind/build.mk
UWFX_CFLAGS := -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror

ifeq ($(ARCH),$(HOST_ARCH))
UWFX_CC_x86 := $(CC)
UWFX_CC_arm64 := $(if $(filter arm64,$(HOST_ARCH)),$(CC),aarch64-linux-gnu-gcc)
UWFX_OBJCOPY_x86 := objcopy
UWFX_OBJCOPY_arm64 := $(if $(filter arm64,$(HOST_ARCH)),objcopy,aarch64-linux-gnu-objcopy)
UWFX_ARCHES := arm64 $(filter x86,$(HOST_ARCH))
UWFX_BINS := $(foreach a,$(UWFX_ARCHES),$(addprefix $(UWFX_DIR)/fx-$(a),-eh -debug -split -split.debug)) \
	$(UWFX_DIR)/fx-arm64-pac

$(UWFX_DIR):
	$(Q)mkdir -p $@

$(UWFX_DIR)/fx-%-eh: $(UWFX_SRC) | $(UWFX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(UWFX_CC_$*) $(UWFX_CFLAGS) tests/unwind/fx.c -o $@

# .debug_frame only for fx.c (the C runtime's objects keep their .eh_frame)
$(UWFX_DIR)/fx-%-debug: $(UWFX_SRC) | $(UWFX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(UWFX_CC_$*) $(UWFX_CFLAGS) -fno-asynchronous-unwind-tables -fno-unwind-tables \
		tests/unwind/fx.c -o $@

# the same, its .debug_frame moved to fx-ARCH-split.debug
$(UWFX_DIR)/fx-%-split.debug: $(UWFX_DIR)/fx-%-debug
	$(call msg,FIXTURE,$@)
	$(Q)$(UWFX_OBJCOPY_$*) --only-keep-debug $< $@

$(UWFX_DIR)/fx-%-split: $(UWFX_DIR)/fx-%-debug $(UWFX_DIR)/fx-%-split.debug
	$(call msg,FIXTURE,$@)
	$(Q)$(UWFX_OBJCOPY_$*) --strip-debug --add-gnu-debuglink=$@.debug $< $@

# DW_CFA_AARCH64_negate_ra_state around each signed return address
$(UWFX_DIR)/fx-arm64-pac: $(UWFX_SRC) | $(UWFX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(UWFX_CC_arm64) $(UWFX_CFLAGS) -mbranch-protection=pac-ret tests/unwind/fx.c -o $@

TEST_DEPS += $(UWFX_BINS)
endif
