# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Protocol buffers: every proto/**/*.proto becomes $(OUTPUT)/proto/**/*.pb-c.{c,h}
# (protoc-c, which runs on the host even for ARCH=arm64), compiled into
# liblabelprof.a and linked against libprotobuf-c. proto/ is the import root,
# so `import "opentelemetry/proto/common/v1/common.proto";` works, and code
# includes e.g. "pprof/profile.pb-c.h".
#
# The fuzz targets build the generated code with clang from $(PROTO_FUZZ_OBJS).

PROTOC_C ?= protoc-c
PROTO_DIR := $(OUTPUT)/proto
PROTO_SRCS := $(sort $(shell find proto -name '*.proto'))
PROTO_GEN_C := $(patsubst proto/%.proto,$(PROTO_DIR)/%.pb-c.c,$(PROTO_SRCS))
PROTO_GEN_H := $(PROTO_GEN_C:.c=.h)
PROTO_OBJS := $(PROTO_GEN_C:.c=.o)
PROTO_FUZZ_OBJS := $(patsubst $(PROTO_DIR)/%.pb-c.c,$(OUTPUT)/fuzz/proto/%.pb-c.o,$(PROTO_GEN_C))

INCLUDES += -I$(PROTO_DIR)
USER_LIBS += $(shell $(PKG_CONFIG) --libs libprotobuf-c 2>/dev/null || echo -lprotobuf-c)

# One protoc-c run writes both files; keep them (they are not mere intermediates).
.SECONDARY: $(PROTO_GEN_C) $(PROTO_GEN_H)
$(PROTO_DIR)/%.pb-c.c $(PROTO_DIR)/%.pb-c.h: proto/%.proto
	$(call msg,PROTOC,$<)
	$(Q)mkdir -p $(PROTO_DIR) && $(PROTOC_C) -Iproto --c_out=$(PROTO_DIR) $<

# A generated file includes the headers of the files its .proto imports.
$(PROTO_DIR)/%.pb-c.o: $(PROTO_DIR)/%.pb-c.c | $(PROTO_GEN_H)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -c $< -o $@

$(OUTPUT)/fuzz/proto/%.pb-c.o: $(PROTO_DIR)/%.pb-c.c | $(PROTO_GEN_H)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D) && $(CLANG) $(FUZZ_CFLAGS) $(INCLUDES) -c $< -o $@

$(USER_LIB): $(PROTO_OBJS)

# Sources may include any generated header: have them all before compiling one
# (-MMD then records the real dependencies).
$(USER_OBJS) $(OUTPUT)/user/main.o: | $(PROTO_GEN_H)
TEST_DEPS += $(PROTO_GEN_H)
