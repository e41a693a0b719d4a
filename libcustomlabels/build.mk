# libcustomlabels: the library applications link to publish their threads'
# labels (Custom Labels ABI v1, and v0 from the same sources).

CL_SRCS := $(wildcard libcustomlabels/*.c)
CL_OBJ_DIR := $(OUTPUT)/libcustomlabels
CL_V1_OBJS := $(patsubst libcustomlabels/%.c,$(CL_OBJ_DIR)/v1/%.o,$(CL_SRCS))
CL_V0_OBJS := $(patsubst libcustomlabels/%.c,$(CL_OBJ_DIR)/v0/%.o,$(CL_SRCS))

CL_SO := $(OUTPUT)/lib/libcustomlabels.so
CL_A := $(OUTPUT)/lib/libcustomlabels.a
CL_V0_SO := $(OUTPUT)/lib/libcustomlabels-v0.so
CL_V0_A := $(OUTPUT)/lib/libcustomlabels-v0.a
CL_LIBS := $(CL_SO) $(CL_A) $(CL_V0_SO) $(CL_V0_A)

# PIC objects for both the .so and the .a (which may end up in a PIE).
# -fexceptions: run_with restores labels when C++ exceptions or thread
# cancellation unwind through it.
CL_CFLAGS = $(CFLAGS) -fPIC -fvisibility=hidden -fexceptions $(TLSDESC_FLAGS) -Ilibcustomlabels
# now: TLS descriptors are resolved at load, so readers never meet a lazy one.
# nodelete: the thread-exit destructor must outlive any dlclose.
CL_SO_LDFLAGS = $(LDFLAGS) -shared -pthread -Wl,-z,now -Wl,-z,nodelete -Wl,-z,relro
# What an executable linking a libcustomlabels .a needs so readers find the ABI symbols.
CL_EXPORT_LDFLAGS := -Wl,--export-dynamic-symbol=custom_labels_abi_version \
	-Wl,--export-dynamic-symbol=custom_labels_current_set \
	-Wl,--export-dynamic-symbol=custom_labels_thread_local_data \
	-Wl,--export-dynamic-symbol=otel_thread_ctx_v1
CL_RPATH := -Wl,-rpath,'$$ORIGIN/../lib'

ALL_TARGETS += $(CL_LIBS)

$(CL_OBJ_DIR)/v1/%.o: libcustomlabels/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CL_CFLAGS) -c $< -o $@

$(CL_OBJ_DIR)/v0/%.o: libcustomlabels/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CL_CFLAGS) -DCUSTOM_LABELS_ABI_V0 -c $< -o $@

$(CL_SO): $(CL_V1_OBJS)
$(CL_V0_SO): $(CL_V0_OBJS)
$(CL_SO) $(CL_V0_SO):
	$(call msg,LIB,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CL_SO_LDFLAGS) -Wl,-soname,$(@F) $^ -o $@

$(CL_A): $(CL_V1_OBJS)
$(CL_V0_A): $(CL_V0_OBJS)
$(CL_A) $(CL_V0_A):
	$(call msg,AR,$@)
	$(Q)mkdir -p $(@D) && rm -f $@ && $(AR) rcs $@ $^

# ---- benchmark: bench_customlabels (v1) and bench_customlabels_v0 -------------
CL_BENCH := $(OUTPUT)/bench/bench_customlabels $(OUTPUT)/bench/bench_customlabels_v0
BENCH_BINS += $(CL_BENCH)

$(OUTPUT)/bench/bench_customlabels: bench/bench_customlabels.c $(CL_SO) | $(OUTPUT)/bench
$(OUTPUT)/bench/bench_customlabels_v0: bench/bench_customlabels.c $(CL_V0_SO) | $(OUTPUT)/bench
$(CL_BENCH):
	$(call msg,BENCH-CC,$@)
	$(Q)$(CC) $(CFLAGS) -Ilibcustomlabels $(LDFLAGS) $< $(filter %.so,$^) $(CL_RPATH) \
		-pthread -o $@
