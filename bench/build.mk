# Benchmarks `make bench` runs through bench/run (the driver); binaries land
# in $(OUTPUT)/bench. bench_customlabels is built by libcustomlabels/build.mk.

BENCH_DIR := $(OUTPUT)/bench

# The labelled workload: libcustomlabels loaded at startup, as the spec asks;
# -fno-optimize-sibling-calls keeps one frame per recursion level.
# (libcustomlabels/build.mk is read after this file: name the library itself)
$(BENCH_DIR)/bench_workload: bench/bench_workload.c $(OUTPUT)/lib/libcustomlabels.so | $(BENCH_DIR)
	$(call msg,BENCH-CC,$@)
	$(Q)$(CC) $(CFLAGS) -fno-optimize-sibling-calls -Ilibcustomlabels $(LDFLAGS) $< \
		-L$(OUTPUT)/lib -lcustomlabels $(CL_RPATH) -pthread -o $@

# Aggregation replay: malloc and friends are wrapped to count liblabelprof's allocations.
$(BENCH_DIR)/bench_replay: bench/bench_replay.c $(USER_LIB) | $(BENCH_DIR)
	$(call msg,BENCH-CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $(LDFLAGS) $< $(USER_LIB) $(USER_LIBS) \
		-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc -o $@

$(BENCH_DIR)/bench_syscall: bench/bench_syscall.c | $(BENCH_DIR)
	$(call msg,BENCH-CC,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -o $@

# Unwind table build time and size per object.
$(BENCH_DIR)/bench_unwind: bench/bench_unwind.c $(USER_LIB) | $(BENCH_DIR)
	$(call msg,BENCH-CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $(LDFLAGS) $< $(USER_LIB) $(USER_LIBS) -o $@

# Symbolization and demangling of large C++ objects.
$(BENCH_DIR)/bench_symbols: bench/bench_symbols.c $(USER_LIB) | $(BENCH_DIR)
	$(call msg,BENCH-CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) $(LDFLAGS) $< $(USER_LIB) $(USER_LIBS) -o $@

BENCH_BINS += $(BENCH_DIR)/bench_workload $(BENCH_DIR)/bench_replay $(BENCH_DIR)/bench_syscall \
	$(BENCH_DIR)/bench_unwind $(BENCH_DIR)/bench_symbols
