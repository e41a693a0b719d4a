// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A stand-in for a node binary and the @datadog/pprof addon in one shared
 * object, for tests/unit/test_node.c: V8's postmortem constants (v8dbg_*,
 * the values of Node 24 on x86-64, TAGGED_SIZE overridable) and the Node.js
 * OpenTelemetry discovery struct, a TLS symbol.
 */
#ifndef TAGGED_SIZE
#define TAGGED_SIZE 8
#endif

struct otel_thread_ctx_nodejs_v1_t {
	void *cped_slot;
	void *als_handle;
	int als_identity_hash;
	unsigned long undefined_addr;
};

__attribute__((visibility(
	"default"))) __thread struct otel_thread_ctx_nodejs_v1_t otel_thread_ctx_nodejs_v1;

/* a reader of the struct, so that the linker keeps its TLS relocation */
int otel_thread_ctx_hash(void)
{
	return otel_thread_ctx_nodejs_v1.als_identity_hash;
}

int v8dbg_TaggedSize = TAGGED_SIZE;
int v8dbg_SmiShiftSize = TAGGED_SIZE == 8 ? 31 : 0;
int v8dbg_HeapObjectTag = 1;
int v8dbg_HeapObjectTagMask = 3;
int v8dbg_class_HeapObject__map__Map; /* 0: in .bss */
int v8dbg_class_Map__instance_type__uint16_t = 12;
int v8dbg_class_Map__instance_size_in_words__char = 8;
int v8dbg_type_JSMap__JS_MAP_TYPE = 2112;
int v8dbg_APIObjectType = 1058;
int v8dbg_SpecialAPIObjectType = 1040;
int v8dbg_class_JSObject__internal_fields__uintptr_t = 3 * TAGGED_SIZE;
int v8dbg_class_FixedArray__data__uintptr_t = 2 * TAGGED_SIZE;
