# libcustomlabels tests, run by tests/run (each prints cmocka's summary):
#   test_customlabels_{v1,v0}          API tests against the shared library
#   test_customlabels_{v1,v0}_static   the same against the .a linked in (malloc wrapped)
#   test_customlabels_abi              ABI conformance of the built .so and .a files
#   test_customlabels_torn_{v1,v0}     readers interrupting writers at random instructions
#   test_customlabels_layout           short labels lie close together (labelprof reads them at once)

CLT := $(OUTPUT)/tests/test_customlabels
CLT_CFLAGS = $(CFLAGS) -Ilibcustomlabels -pthread
CLT_WRAP := -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
CLT_API := $(CLT)_v1 $(CLT)_v0 $(CLT)_v1_static $(CLT)_v0_static
CLT_TORN := $(CLT)_torn_v1 $(CLT)_torn_v0

UNIT_TESTS += $(CLT_API) $(CLT)_abi $(CLT_TORN)

$(CLT)_v1: tests/customlabels/test_api.c $(CL_SO) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CLT_CFLAGS) $(LDFLAGS) $< $(CL_SO) $(CL_RPATH) $(TEST_LIBS) -ldl -o $@

$(CLT)_v0: tests/customlabels/test_api.c $(CL_V0_SO) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CLT_CFLAGS) -DCL_TEST_ABI_V0 $(LDFLAGS) $< $(CL_V0_SO) $(CL_RPATH) \
		$(TEST_LIBS) -ldl -o $@

$(CLT)_v1_static: tests/customlabels/test_api.c $(CL_A) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CLT_CFLAGS) -DCL_TEST_STATIC $(LDFLAGS) $(CLT_WRAP) $(CL_EXPORT_LDFLAGS) $< \
		$(CL_A) $(TEST_LIBS) -ldl -o $@

$(CLT)_v0_static: tests/customlabels/test_api.c $(CL_V0_A) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CLT_CFLAGS) -DCL_TEST_STATIC -DCL_TEST_ABI_V0 $(LDFLAGS) $(CLT_WRAP) \
		$(CL_EXPORT_LDFLAGS) $< $(CL_V0_A) $(TEST_LIBS) -ldl -o $@

# Not linked against the libraries: it inspects the files and dlopens them.
$(CLT)_abi: tests/customlabels/test_abi.c $(CL_LIBS) $(CLT)_v1_static $(CLT)_v0_static \
		| $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CLT_CFLAGS) -DCL_LIB_DIR='"$(abspath $(OUTPUT)/lib)"' \
		-DCL_TEST_DIR='"$(abspath $(OUTPUT)/tests)"' $(LDFLAGS) $< $(TEST_LIBS) -lelf -ldl \
		-o $@

$(CLT)_torn_v1: tests/customlabels/test_torn.c $(CL_SO) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CLT_CFLAGS) $(LDFLAGS) $< $(CL_SO) $(CL_RPATH) $(TEST_LIBS) -lrt -o $@

$(CLT)_torn_v0: tests/customlabels/test_torn.c $(CL_V0_SO) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CLT_CFLAGS) -DCL_TEST_ABI_V0 $(LDFLAGS) $< $(CL_V0_SO) $(CL_RPATH) \
		$(TEST_LIBS) -lrt -o $@

# Layout (default limits): a set of short labels stays within labelprof's one-read window.
UNIT_TESTS += $(CLT)_layout

$(CLT)_layout: tests/customlabels/test_layout.c $(CL_SO) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CLT_CFLAGS) $(LDFLAGS) $< $(CL_SO) $(CL_RPATH) $(TEST_LIBS) -o $@
