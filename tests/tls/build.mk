# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Fixture programs and libraries for tests/unit/test_tls.c, built into
# $(OUTPUT)/tests/tls/. Names encode what varies: compiler, link mode, label
# form (v0/v1/v7 = unknown), TLS dialect of libraries and TLS alignment (aN).
# Native fixtures (ARCH is the host's) are run and resolved live; aarch64
# fixtures cross-built on x86 hosts are checked file-level and run under
# qemu-aarch64.

FX_DIR := $(OUTPUT)/tests/tls
FX_SRC := tests/tls/exe.c tests/tls/labels.h tests/tls/build.mk
FX_LIB_SRC := tests/tls/lib.c tests/tls/labels.h tests/tls/build.mk
FX_CFLAGS := -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -Wno-unused-function -pthread
FX_RPATH := -Wl,-rpath,'$$$$ORIGIN'
FX_HOST_CC := $(CC)
# Every compiler is required (scripts/deps.sh installs them): a fixture that
# cannot be built fails the build rather than leaving its tests without it.
FX_A64_CC := aarch64-linux-gnu-gcc

# name := compiler flags (for $(call fx_exe,name,cc,flags[,libs]))
define fx_exe
FX_BINS += $(FX_DIR)/$(1)
$(FX_DIR)/$(1): $(FX_SRC) $(4) | $(FX_DIR)
	$$(call msg,FIXTURE,$$@)
	$(Q)$(2) $(FX_CFLAGS) $(3) tests/tls/exe.c -o $$@ $(4) -ldl
endef

define fx_lib
FX_BINS += $(FX_DIR)/$(1)
$(FX_DIR)/$(1): $(FX_LIB_SRC) | $(FX_DIR)
	$$(call msg,FIXTURE,$$@)
	$(Q)$(2) $(FX_CFLAGS) -fPIC -shared -Wl,-soname,$(1) $(3) tests/tls/lib.c -o $$@
endef

FX_BINS :=

ifeq ($(ARCH),$(HOST_ARCH))
GNU2 := $(TLSDESC_FLAGS)
FX_TRAD_x86 := -mtls-dialect=gnu
FX_TRAD_arm64 := -mtls-dialect=trad
GNU := -ftls-model=global-dynamic $(FX_TRAD_$(ARCH))

# Executables that define the labels themselves (case 1).
$(eval $(call fx_exe,exe-gcc-pie-v1,$(FX_HOST_CC),-fPIE -pie -rdynamic -DLABELS_FORM=1))
$(eval $(call fx_exe,exe-gcc-pie-v0,$(FX_HOST_CC),-fPIE -pie -rdynamic -DLABELS_FORM=0))
$(eval $(call fx_exe,exe-gcc-nopie-v1,$(FX_HOST_CC),-fno-pie -no-pie -rdynamic -DLABELS_FORM=1))
$(eval $(call fx_exe,exe-gcc-nopie-v0,$(FX_HOST_CC),-fno-pie -no-pie -rdynamic -DLABELS_FORM=0))
$(eval $(call fx_exe,exe-gcc-pie-v1-symtab,$(FX_HOST_CC),-fPIE -pie -DLABELS_FORM=1))
$(eval $(call fx_exe,exe-gcc-pie-v7,$(FX_HOST_CC),-fPIE -pie -rdynamic -DLABELS_FORM=7))
$(eval $(call fx_exe,exe-gcc-static-v1,$(FX_HOST_CC),-static -DFX_STATIC -DLABELS_FORM=1))
$(eval $(call fx_exe,exe-gcc-staticpie-v1,$(FX_HOST_CC),-static-pie -fPIE -DFX_STATIC -DLABELS_FORM=1))
$(foreach a,8 16 64 4096,$(eval $(call fx_exe,exe-gcc-pie-v1-a$(a),$(FX_HOST_CC),-fPIE -pie -rdynamic -DLABELS_FORM=1 -DTLS_ALIGN=$(a))))
$(foreach a,64 4096,$(eval $(call fx_exe,exe-gcc-static-v1-a$(a),$(FX_HOST_CC),-static -DFX_STATIC -DLABELS_FORM=1 -DTLS_ALIGN=$(a))))

# Plain hosts that dlopen a library named on their command line.
$(eval $(call fx_exe,exe-gcc-plain,$(FX_HOST_CC),-fPIE -pie))

# Libraries (cases 2-4): TLSDESC, general-dynamic and initial-exec.
$(eval $(call fx_lib,lib-desc-v1.so,$(FX_HOST_CC),$(GNU2) -DLABELS_FORM=1))
$(eval $(call fx_lib,lib-desc-v0.so,$(FX_HOST_CC),$(GNU2) -DLABELS_FORM=0))
$(eval $(call fx_lib,lib-desc-v1-a4096.so,$(FX_HOST_CC),$(GNU2) -DLABELS_FORM=1 -DTLS_ALIGN=4096))
$(eval $(call fx_lib,lib-desc-v1-a64.so,$(FX_HOST_CC),$(GNU2) -DLABELS_FORM=1 -DTLS_ALIGN=64))
$(eval $(call fx_lib,lib-gd-v1.so,$(FX_HOST_CC),$(GNU) -DLABELS_FORM=1))
$(eval $(call fx_lib,lib-gd-v0.so,$(FX_HOST_CC),$(GNU) -DLABELS_FORM=0))
$(eval $(call fx_lib,lib-gd-v1-a64.so,$(FX_HOST_CC),$(GNU) -DLABELS_FORM=1 -DTLS_ALIGN=64))
$(eval $(call fx_lib,lib-ie-v1.so,$(FX_HOST_CC),-ftls-model=initial-exec -DLABELS_FORM=1))
# Hidden symbols (.symtab only): relocations against the object's own block.
FX_HIDDEN := '-DLABELS_EXPORT=__attribute__((visibility("hidden")))'
$(eval $(call fx_lib,lib-hidden-desc-v1-a64.so,$(FX_HOST_CC),$(GNU2) -DLABELS_FORM=1 -DTLS_ALIGN=64 $(FX_HIDDEN)))
$(eval $(call fx_lib,lib-hidden-gd-v1-a64.so,$(FX_HOST_CC),$(GNU) -DLABELS_FORM=1 -DTLS_ALIGN=64 $(FX_HIDDEN)))

# Executables that get the labels from a library loaded at startup.
$(eval $(call fx_exe,exe-gcc-linked-desc,$(FX_HOST_CC),-fPIE -pie -DFX_LINKED $(FX_RPATH),$(FX_DIR)/lib-desc-v1.so))
$(eval $(call fx_exe,exe-gcc-linked-gd,$(FX_HOST_CC),-fPIE -pie -DFX_LINKED $(FX_RPATH),$(FX_DIR)/lib-gd-v1.so))
$(eval $(call fx_exe,exe-gcc-linked-ie,$(FX_HOST_CC),-fPIE -pie -DFX_LINKED $(FX_RPATH),$(FX_DIR)/lib-ie-v1.so))
$(eval $(call fx_exe,exe-gcc-linked-desc-a4096,$(FX_HOST_CC),-fPIE -pie -DFX_LINKED $(FX_RPATH),$(FX_DIR)/lib-desc-v1-a4096.so))

# For tests/unit/test_elf.c: a debuglink to a separate debug file, and no symbols at all.
FX_BINS += $(FX_DIR)/exe-debuglink $(FX_DIR)/exe-debuglink.debug $(FX_DIR)/exe-stripped
$(FX_DIR)/exe-debuglink.debug: $(FX_DIR)/exe-gcc-pie-v1
	$(call msg,FIXTURE,$@)
	$(Q)objcopy --only-keep-debug $< $@
$(FX_DIR)/exe-debuglink: $(FX_DIR)/exe-gcc-pie-v1 $(FX_DIR)/exe-debuglink.debug
	$(call msg,FIXTURE,$@)
	$(Q)objcopy --strip-debug --add-gnu-debuglink=$(FX_DIR)/exe-debuglink.debug $< $@
$(FX_DIR)/exe-stripped: $(FX_DIR)/exe-gcc-pie-v1-symtab
	$(call msg,FIXTURE,$@)
	$(Q)strip --strip-all -o $@ $<

$(eval $(call fx_exe,exe-clang-pie-v1,clang,-fPIE -pie -rdynamic -DLABELS_FORM=1))
$(eval $(call fx_exe,exe-clang-nopie-v0,clang,-fno-pie -no-pie -rdynamic -DLABELS_FORM=0))
$(eval $(call fx_exe,exe-clang-pie-v1-a4096,clang,-fPIE -pie -rdynamic -DLABELS_FORM=1 -DTLS_ALIGN=4096))
$(eval $(call fx_lib,lib-clang-gd-v1.so,clang,-DLABELS_FORM=1))
$(eval $(call fx_exe,exe-clang-lld-pie-v1-a64,clang,-fuse-ld=lld -fPIE -pie -rdynamic -DLABELS_FORM=1 -DTLS_ALIGN=64))
$(eval $(call fx_exe,exe-clang-lld-pie-v1-a4096,clang,-fuse-ld=lld -fPIE -pie -rdynamic -DLABELS_FORM=1 -DTLS_ALIGN=4096))

endif # native

# musl-gcc and the aarch64 cross compiler: x86-64 hosts.
ifeq ($(ARCH)$(HOST_ARCH),x86x86)
$(eval $(call fx_exe,exe-musl-static-v1,musl-gcc,-static -DFX_STATIC -DLABELS_FORM=1))
$(eval $(call fx_exe,exe-musl-static-v1-a4096,musl-gcc,-static -DFX_STATIC -DLABELS_FORM=1 -DTLS_ALIGN=4096))
$(eval $(call fx_exe,exe-musl-pie-v1,musl-gcc,-fPIE -pie -rdynamic -DLABELS_FORM=1))
$(eval $(call fx_exe,exe-musl-plain,musl-gcc,-fPIE -pie))
$(eval $(call fx_lib,mlib-desc-v1.so,musl-gcc,$(GNU2) -DLABELS_FORM=1))
$(eval $(call fx_lib,mlib-gd-v1.so,musl-gcc,$(GNU) -DLABELS_FORM=1))
$(eval $(call fx_lib,mlib-gd-v1-a64.so,musl-gcc,$(GNU) -DLABELS_FORM=1 -DTLS_ALIGN=64))
$(eval $(call fx_exe,exe-musl-linked-desc,musl-gcc,-fPIE -pie -DFX_LINKED $(FX_RPATH),$(FX_DIR)/mlib-desc-v1.so))

# aarch64, for file-level checks and qemu-aarch64.
$(foreach a,8 16 64 4096,$(eval $(call fx_exe,a64-exe-static-v1-a$(a),$(FX_A64_CC),-static -DFX_STATIC -DLABELS_FORM=1 -DTLS_ALIGN=$(a))))
$(eval $(call fx_exe,a64-exe-static-v0,$(FX_A64_CC),-static -DFX_STATIC -DLABELS_FORM=0))
$(foreach a,8 64 4096,$(eval $(call fx_exe,a64-exe-pie-v1-a$(a),$(FX_A64_CC),-fPIE -pie -rdynamic -DFX_NO_THREADS -DLABELS_FORM=1 -DTLS_ALIGN=$(a))))
$(eval $(call fx_lib,a64-lib-desc-v1.so,$(FX_A64_CC),-mtls-dialect=desc -DLABELS_FORM=1))
$(eval $(call fx_lib,a64-lib-gd-v1.so,$(FX_A64_CC),-mtls-dialect=trad -DLABELS_FORM=1))
endif # x86

$(FX_DIR):
	$(Q)mkdir -p $@

TEST_DEPS += $(FX_BINS)
