# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# libFuzzer targets for every parser of untrusted input, built with clang from
# the user/ sources they exercise (not liblabelprof.a, which is built by gcc):
#   fuzz_elf      ELF files: TLS inspection and every elf_file__* reader
#   fuzz_maps     /proc/PID/maps text: maps__parse and maps__find
#   fuzz_gopclntab  Go's function table: searched for in a segment, every function read
#   fuzz_profile  ring-buffer records: aggregation and every output writer
#   fuzz_json     labelprof JSON documents: input__read_json, then the JSON writer
#   fuzz_pprof    pprof profiles (gzipped or not): input__read_pprof, then the pprof writer
#   fuzz_otlp     OTLP profiles requests (gzipped or not): input__read_otlp, then the OTLP writers
#   fuzz_otlp_json  the same in OTLP's JSON mapping: input__read_otlp_json, then the OTLP JSON writer
#
# make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="fuzz_elf ..."]  runs each target on its
# checked-in corpus (tests/fuzz/corpus/NAME); new inputs and crashes go to
# $(OUTPUT)/fuzz/runs/NAME/. tests/fuzz/smoke replays the corpus once (make test).

FUZZ_DIR := $(OUTPUT)/fuzz
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := -g -O1 -std=gnu11 $(WARNINGS) -fno-omit-frame-pointer -D_GNU_SOURCE \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_HDRS := $(wildcard user/*/*.h) bpf/labelprof.h tests/fuzz/build.mk tests/fuzz/roundtrip.h

# What every target's sources may use: the containers (lib/array.h, lib/hashmap.h) and
# the frame kinds' table (lib/frame_kind.h).
FUZZ_LIB_SRCS := user/lib/array.c user/lib/hashmap.c user/lib/frame_kind.c
FUZZ_SRCS_fuzz_elf := user/lib/elf.c user/lib/msg.c user/proc/tls_file.c user/proc/tls_arch.c user/proc/root.c \
	user/proc/golang.c
FUZZ_SRCS_fuzz_maps := user/proc/maps.c
FUZZ_SRCS_fuzz_gopclntab := user/symbolize/gopclntab.c
# The symbolizer only links: the profile is fuzzed without a symbolizer.
FUZZ_SRCS_fuzz_profile := user/format/fmt.c user/profile/profile.c user/profile/labelsel.c user/format/labelfold.c user/format/output.c user/format/output_folded.c user/format/output_json.c \
	user/format/output_report.c user/format/output_pprof.c user/format/output_otlp.c user/format/output_otlp_dict.c user/format/output_otlp_json.c user/format/otlp.c user/format/output_html.c user/format/pb.c \
	user/profile/symprof.c user/profile/symprof_build.c user/symbolize/symbols.c user/symbolize/files.c user/symbolize/symtab.c \
	user/symbolize/interp.c user/symbolize/linecache.c user/symbolize/perfmap.c user/symbolize/snapshot.c user/symbolize/kallsyms.c \
	user/symbolize/dwarf.c user/symbolize/demangle.c user/symbolize/gopclntab.c user/proc/maps.c user/proc/container.c user/proc/root.c user/lib/elf.c user/lib/msg.c user/lib/pairmap.c \
	$(PROTO_FUZZ_OBJS)
# The profile formats share one round-trip harness.
FUZZ_ROUNDTRIP := tests/fuzz/roundtrip.c
FUZZ_SRCS_fuzz_json := $(FUZZ_ROUNDTRIP) user/format/fmt.c user/format/labelfold.c user/profile/labelsel.c user/lib/msg.c user/format/json.c user/format/input_json.c user/profile/symprof.c user/format/output_json.c user/format/output_folded.c \
	user/format/output_report.c user/format/output_html.c
# The generated protobuf code comes compiled for fuzzing (proto/build.mk).
FUZZ_SRCS_fuzz_pprof := $(FUZZ_ROUNDTRIP) user/format/fmt.c user/format/input_pprof.c user/format/output_pprof.c user/format/pb.c user/profile/symprof.c \
	$(PROTO_FUZZ_OBJS)
FUZZ_SRCS_fuzz_otlp := $(FUZZ_ROUNDTRIP) user/format/fmt.c user/format/input_otlp.c user/format/output_otlp.c user/format/output_otlp_dict.c user/format/output_otlp_json.c user/format/otlp.c user/format/pb.c user/profile/symprof.c \
	$(PROTO_FUZZ_OBJS)
FUZZ_SRCS_fuzz_otlp_json := user/format/input_otlp_json.c user/format/json.c $(FUZZ_SRCS_fuzz_otlp)
FUZZ_ALL := fuzz_elf fuzz_maps fuzz_gopclntab fuzz_profile fuzz_json fuzz_pprof fuzz_otlp fuzz_otlp_json
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_BINS := $(addprefix $(FUZZ_DIR)/,$(FUZZ_ALL))

# libFuzzer exists for the host only.
ifeq ($(ARCH),$(HOST_ARCH))
TEST_DEPS += $(FUZZ_BINS)
endif

define fuzz_target
$(FUZZ_DIR)/$(1): tests/fuzz/$(1).c $(FUZZ_SRCS_$(1)) $(FUZZ_LIB_SRCS) $(FUZZ_HDRS) | $(FUZZ_DIR)
	$$(call msg,FUZZ-CC,$$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(INCLUDES) $$< $(FUZZ_SRCS_$(1)) $(FUZZ_LIB_SRCS) $(USER_LIBS) -o $$@
endef
$(foreach t,$(FUZZ_ALL),$(eval $(call fuzz_target,$(t))))

$(FUZZ_DIR):
	$(Q)mkdir -p $@

.PHONY: fuzz
fuzz: $(FUZZ_BINS)
	$(Q)set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_DIR)/runs/$$t/new; \
		echo "  FUZZ     $$t for $(FUZZ_SECONDS)s"; \
		$(FUZZ_DIR)/$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_DIR)/runs/$$t/ \
			$$(test -f tests/fuzz/$$t.dict && echo -dict=tests/fuzz/$$t.dict) \
			$(FUZZ_DIR)/runs/$$t/new \
			tests/fuzz/corpus/$$t; \
	done
