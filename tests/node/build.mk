# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Fixtures for tests/unit/test_node.c, built into $(OUTPUT)/tests/node/: a
# shared object with V8's postmortem constants and the Node.js discovery
# struct (TLSDESC), with 8-byte tagged values and with pointer compression.

NODE_FX_DIR := $(OUTPUT)/tests/node
NODE_FX := $(NODE_FX_DIR)/v8dbg.so $(NODE_FX_DIR)/v8dbg-compressed.so

$(NODE_FX_DIR):
	$(Q)mkdir -p $@

$(NODE_FX_DIR)/v8dbg.so: tests/node/v8dbg.c | $(NODE_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) -O2 -Wall -Wextra -Werror -fPIC -shared $(TLSDESC_FLAGS) $< -o $@

$(NODE_FX_DIR)/v8dbg-compressed.so: tests/node/v8dbg.c | $(NODE_FX_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(CC) -O2 -Wall -Wextra -Werror -fPIC -shared $(TLSDESC_FLAGS) -DTAGGED_SIZE=4 $< -o $@

TEST_DEPS += $(NODE_FX)

# The npm packages (make deps) are no build product: a sanitized build's unit
# tests use the plain build's.
ifneq ($(SANITIZE),)
PLAIN_NODE_DIR := $(abspath .output$(if $(filter-out $(HOST_ARCH),$(ARCH)),-$(ARCH)))/node
$(NODE_DIR):
	$(Q)ln -sfn $(PLAIN_NODE_DIR) $@
TEST_DEPS += $(NODE_DIR)
endif
