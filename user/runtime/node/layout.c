// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The V8 layout of a Node.js process (docs/design.md section 13): V8 keeps
 * postmortem constants (v8dbg_*, for debuggers) in its binary; the walk
 * needs a few of them. The OpenTelemetry design proposes that the process
 * context publish the same constants (threadlocal.*): those, when present,
 * take the place of the binary's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/compiler.h"
#include "lib/elf.h"
#include "lib/msg.h"
#include "proc/maps.h"
#include "proc/otel_ctx.h"
#include "runtime/runtime_module.h"
#include "runtime/node/node.h"

enum {
	V_TAGGED_SIZE,
	V_SMI_SHIFT,
	V_HEAP_TAG,
	V_HEAP_TAG_MASK,
	V_MAP,
	V_INSTANCE_TYPE,
	V_INSTANCE_SIZE,
	V_JS_MAP_TYPE,
	V_API_TYPE,
	V_SPECIAL_API_TYPE,
	V_JS_OBJECT_FIELDS,
	V_FIXED_ARRAY_DATA,
	V_COUNT,
};

static const char *const v8dbg_names[V_COUNT] = {
	[V_TAGGED_SIZE] = "v8dbg_TaggedSize",
	[V_SMI_SHIFT] = "v8dbg_SmiShiftSize",
	[V_HEAP_TAG] = "v8dbg_HeapObjectTag",
	[V_HEAP_TAG_MASK] = "v8dbg_HeapObjectTagMask",
	[V_MAP] = "v8dbg_class_HeapObject__map__Map",
	[V_INSTANCE_TYPE] = "v8dbg_class_Map__instance_type__uint16_t",
	[V_INSTANCE_SIZE] = "v8dbg_class_Map__instance_size_in_words__char",
	[V_JS_MAP_TYPE] = "v8dbg_type_JSMap__JS_MAP_TYPE",
	[V_API_TYPE] = "v8dbg_APIObjectType",
	[V_SPECIAL_API_TYPE] = "v8dbg_SpecialAPIObjectType",
	[V_JS_OBJECT_FIELDS] = "v8dbg_class_JSObject__internal_fields__uintptr_t",
	[V_FIXED_ARRAY_DATA] = "v8dbg_class_FixedArray__data__uintptr_t",
};

/* Offsets the walk adds to an address: small, and 8-byte aligned where they name a word. */
static bool offset_ok(int v, int align)
{
	return v >= 0 && v < 4096 && v % align == 0;
}

static bool type_ok(int v)
{
	return v > 0 && v <= 0xffff;
}

/* The only tagging read: 8-byte tagged values, Smis in the upper half, ...01 pointers. */
static bool full_tagged_values(int tagged_size, int smi_shift, int heap_tag, int heap_tag_mask,
			       int map)
{
	return tagged_size == 8 && smi_shift == 31 && heap_tag == 1 && heap_tag_mask == 3 &&
	       map == 0;
}

#define V8_MAX_CONSTANTS 48

struct v8_constant {
	int id;
	const char *name;
};

/*
 * The constants of ef named by want (n of them; several names may give the
 * same index, for V8 versions that spell a field differently) into v, 0
 * where in .bss. -ENOENT if ef has none of them, -EPROTO with err set when
 * one is missing; -EIO if one cannot be read.
 */
static int read_constants(const struct elf_file *ef, const struct v8_constant *want, size_t n,
			  int *v, size_t count, char *err, size_t err_len)
{
	const char *names[V8_MAX_CONSTANTS];
	GElf_Sym syms[V8_MAX_CONSTANTS];
	unsigned int found[V8_MAX_CONSTANTS];
	bool have[V8_MAX_CONSTANTS] = {false};
	size_t i;
	int r;

	if (n > V8_MAX_CONSTANTS || count > V8_MAX_CONSTANTS)
		return -EINVAL;
	for (i = 0; i < n; i++)
		names[i] = want[i].name;
	if (!elf_file__find_symbols(ef, names, n, syms, found))
		return -ENOENT;
	for (i = 0; i < n; i++) {
		if (!found[i] || have[want[i].id])
			continue;
		r = elf_file__read_vaddr(ef, syms[i].st_value, &v[want[i].id], sizeof(int));
		if (r == -ENOENT) /* in .bss: a zero */
			v[want[i].id] = 0;
		else if (r) {
			msg__set(err, err_len, "%s: cannot read %s", elf_file__name(ef), names[i]);
			return -EIO;
		}
		have[want[i].id] = true;
	}
	for (i = 0; i < n; i++)
		if (!have[want[i].id]) {
			msg__set(err, err_len, "%s lacks %s", elf_file__name(ef), names[i]);
			return -EPROTO;
		}
	return 0;
}

int node__v8_layout(const struct elf_file *ef, struct lp_node_ref *ref, char *err, size_t err_len)
{
	struct v8_constant want[V_COUNT];
	int v[V_COUNT], i, r;

	memset(ref, 0, sizeof(*ref));
	for (i = 0; i < V_COUNT; i++)
		want[i] = (struct v8_constant){i, v8dbg_names[i]};
	r = read_constants(ef, want, V_COUNT, v, V_COUNT, err, err_len);
	if (r)
		return r;
	/* what bpf/labels_node.bpf.h reads: full 8-byte tagged values, Smis in the upper half */
	if (!full_tagged_values(v[V_TAGGED_SIZE], v[V_SMI_SHIFT], v[V_HEAP_TAG], v[V_HEAP_TAG_MASK],
				v[V_MAP])) {
		msg__set(err, err_len,
			 "%s: V8 with %d-byte tagged values (pointer compression) is not read",
			 elf_file__name(ef), v[V_TAGGED_SIZE]);
		return -ENOTSUP;
	}
	if (!offset_ok(v[V_INSTANCE_TYPE], 2) || !offset_ok(v[V_INSTANCE_SIZE], 1) ||
	    !offset_ok(v[V_JS_OBJECT_FIELDS], 8) || !offset_ok(v[V_FIXED_ARRAY_DATA], 8) ||
	    v[V_FIXED_ARRAY_DATA] < 8 || !type_ok(v[V_JS_MAP_TYPE]) || !type_ok(v[V_API_TYPE]) ||
	    !type_ok(v[V_SPECIAL_API_TYPE])) {
		msg__set(err, err_len, "%s: implausible V8 postmortem constants",
			 elf_file__name(ef));
		return -EINVAL;
	}
	ref->format = LP_NODE_V1;
	ref->instance_type = v[V_INSTANCE_TYPE];
	ref->instance_size = v[V_INSTANCE_SIZE];
	ref->js_map_type = v[V_JS_MAP_TYPE];
	ref->api_type = v[V_API_TYPE];
	ref->special_api_type = v[V_SPECIAL_API_TYPE];
	/* a JSMap's table is the first field after the JSObject header (JSCollection) */
	ref->map_table = v[V_JS_OBJECT_FIELDS];
	/* an OrderedHashMap is a FixedArray: its element count is its first element */
	ref->hash_header = v[V_FIXED_ARRAY_DATA];
	/*
	 * An API object's embedder fields follow the JSObject header and the
	 * cpp_heap_wrappable slot of JSAPIObjectWithEmbedderSlots (V8 12 and
	 * later, so every Node.js with AsyncContextFrame); BPF checks that
	 * field 0 lies inside the object.
	 */
	ref->record = v[V_JS_OBJECT_FIELDS] + v[V_TAGGED_SIZE];
	return 0;
}

enum {
	J_TAGGED_SIZE,
	J_SMI_SHIFT,
	J_HEAP_TAG,
	J_HEAP_TAG_MASK,
	J_MAP,
	J_INSTANCE_TYPE,
	J_FP_FUNCTION,
	J_FP_MARKER,
	J_JS_FUNCTION_FIRST,
	J_JS_FUNCTION_LAST,
	J_SFI_TYPE,
	J_SHARED,
	J_SFI_NAME,
	J_SFI_SCRIPT,
	J_SCOPE_INFO_TYPE,
	J_SCOPE_FIRST_VARS,
	J_SCOPE_CONTEXT_LOCALS,
	J_SCRIPT_TYPE,
	J_SCRIPT_NAME,
	J_SCRIPT_LINE_ENDS,
	J_SCRIPT_SOURCE,
	J_FIRST_NONSTRING,
	J_STRING_LENGTH,
	J_ONE_BYTE_CHARS,
	J_TWO_BYTE_CHARS,
	J_CONS_FIRST,
	J_CONS_SECOND,
	J_THIN_ACTUAL,
	J_ENCODING_MASK,
	J_REPRESENTATION_MASK,
	J_ONE_BYTE_TAG,
	J_SEQ_TAG,
	J_CONS_TAG,
	J_THIN_TAG,
	J_FIXED_LENGTH,
	J_FIXED_DATA,
	J_FIXED_ARRAY_TYPE,
	J_COUNT,
};

/* Names differ between V8 versions: each spelling Node.js 20 to 24 uses. */
static const struct v8_constant js_constants[] = {
	{J_TAGGED_SIZE, "v8dbg_TaggedSize"},
	{J_SMI_SHIFT, "v8dbg_SmiShiftSize"},
	{J_HEAP_TAG, "v8dbg_HeapObjectTag"},
	{J_HEAP_TAG_MASK, "v8dbg_HeapObjectTagMask"},
	{J_MAP, "v8dbg_class_HeapObject__map__Map"},
	{J_INSTANCE_TYPE, "v8dbg_class_Map__instance_type__uint16_t"},
	{J_FP_FUNCTION, "v8dbg_off_fp_function"},
	{J_FP_MARKER, "v8dbg_off_fp_context_or_frame_type"},
	{J_FP_MARKER, "v8dbg_off_fp_context"},
	/* without the range (Node 20), plain functions alone: class constructors stay unnamed */
	{J_JS_FUNCTION_FIRST, "v8dbg_FirstJSFunctionType"},
	{J_JS_FUNCTION_FIRST, "v8dbg_type_JSFunction__JS_FUNCTION_TYPE"},
	{J_JS_FUNCTION_LAST, "v8dbg_LastJSFunctionType"},
	{J_JS_FUNCTION_LAST, "v8dbg_type_JSFunction__JS_FUNCTION_TYPE"},
	{J_SFI_TYPE, "v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE"},
	{J_SHARED, "v8dbg_class_JSFunction__shared__SharedFunctionInfo"},
	{J_SFI_NAME, "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Tagged_NameOrScopeInfoT_"},
	{J_SFI_NAME, "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Tagged_Object_"},
	{J_SFI_NAME, "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object"},
	{J_SFI_SCRIPT, "v8dbg_class_SharedFunctionInfo__script__Tagged_HeapObject_"},
	{J_SFI_SCRIPT, "v8dbg_class_SharedFunctionInfo__script_or_debug_info__Tagged_HeapObject_"},
	{J_SFI_SCRIPT, "v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject"},
	{J_SCOPE_INFO_TYPE, "v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE"},
	{J_SCOPE_FIRST_VARS, "v8dbg_scopeinfo_idx_first_vars"},
	{J_SCOPE_CONTEXT_LOCALS, "v8dbg_scopeinfo_idx_ncontextlocals"},
	{J_SCRIPT_TYPE, "v8dbg_type_Script__SCRIPT_TYPE"},
	{J_SCRIPT_NAME, "v8dbg_class_Script__name__Object"},
	{J_SCRIPT_LINE_ENDS, "v8dbg_class_Script__line_ends__Object"},
	{J_SCRIPT_SOURCE, "v8dbg_class_Script__source__Object"},
	{J_FIRST_NONSTRING, "v8dbg_FirstNonstringType"},
	{J_STRING_LENGTH, "v8dbg_class_String__length__int32_t"},
	{J_ONE_BYTE_CHARS, "v8dbg_class_SeqOneByteString__chars__char"},
	{J_TWO_BYTE_CHARS, "v8dbg_class_SeqTwoByteString__chars__char"},
	{J_CONS_FIRST, "v8dbg_class_ConsString__first__String"},
	{J_CONS_SECOND, "v8dbg_class_ConsString__second__String"},
	{J_THIN_ACTUAL, "v8dbg_class_ThinString__actual__String"},
	{J_ENCODING_MASK, "v8dbg_StringEncodingMask"},
	{J_REPRESENTATION_MASK, "v8dbg_StringRepresentationMask"},
	{J_ONE_BYTE_TAG, "v8dbg_OneByteStringTag"},
	{J_SEQ_TAG, "v8dbg_SeqStringTag"},
	{J_CONS_TAG, "v8dbg_ConsStringTag"},
	{J_THIN_TAG, "v8dbg_ThinStringTag"},
	{J_FIXED_LENGTH, "v8dbg_class_FixedArrayBase__length__SMI"},
	{J_FIXED_DATA, "v8dbg_class_FixedArray__data__uintptr_t"},
	{J_FIXED_ARRAY_TYPE, "v8dbg_type_FixedArray__FIXED_ARRAY_TYPE"},
};

/* A frame slot: a word's offset from FP, below it. */
static bool fp_slot_ok(int v)
{
	return v < 0 && v >= -128 && v % 8 == 0;
}

int node__js_layout(const struct elf_file *ef, struct node_js_layout *l, char *err, size_t len)
{
	static const int word_offsets[] = {J_SHARED, J_SFI_NAME, J_SFI_SCRIPT, J_SCRIPT_NAME,
					   J_SCRIPT_LINE_ENDS, J_SCRIPT_SOURCE, J_CONS_FIRST,
					   J_CONS_SECOND, J_THIN_ACTUAL, J_FIXED_LENGTH, J_FIXED_DATA};
	int v[J_COUNT], r;
	size_t i;

	memset(l, 0, sizeof(*l));
	r = read_constants(ef, js_constants, ARRAY_SIZE(js_constants), v, J_COUNT, err, len);
	if (r)
		return r;
	if (!full_tagged_values(v[J_TAGGED_SIZE], v[J_SMI_SHIFT], v[J_HEAP_TAG],
				v[J_HEAP_TAG_MASK], v[J_MAP])) {
		msg__set(err, len, "%s: V8 with %d-byte tagged values (pointer compression) is not read",
			 elf_file__name(ef), v[J_TAGGED_SIZE]);
		return -ENOTSUP;
	}
	for (i = 0; i < ARRAY_SIZE(word_offsets); i++)
		if (!offset_ok(v[word_offsets[i]], 8))
			goto implausible;
	if (!fp_slot_ok(v[J_FP_FUNCTION]) || !fp_slot_ok(v[J_FP_MARKER]) ||
	    !offset_ok(v[J_INSTANCE_TYPE], 2) || !offset_ok(v[J_STRING_LENGTH], 4) ||
	    !offset_ok(v[J_ONE_BYTE_CHARS], 1) || !offset_ok(v[J_TWO_BYTE_CHARS], 2) ||
	    !type_ok(v[J_JS_FUNCTION_FIRST]) || !type_ok(v[J_JS_FUNCTION_LAST]) ||
	    v[J_JS_FUNCTION_FIRST] > v[J_JS_FUNCTION_LAST] || !type_ok(v[J_SFI_TYPE]) ||
	    !type_ok(v[J_SCOPE_INFO_TYPE]) || !type_ok(v[J_SCRIPT_TYPE]) ||
	    !type_ok(v[J_FIXED_ARRAY_TYPE]) ||
	    !type_ok(v[J_FIRST_NONSTRING]) || v[J_SCOPE_FIRST_VARS] <= 0 ||
	    v[J_SCOPE_FIRST_VARS] > 16 || v[J_SCOPE_CONTEXT_LOCALS] < 0 ||
	    v[J_SCOPE_CONTEXT_LOCALS] >= v[J_SCOPE_FIRST_VARS])
		goto implausible;
	l->ref = (struct lp_v8_ref){
		.js_function_first = v[J_JS_FUNCTION_FIRST],
		.js_function_last = v[J_JS_FUNCTION_LAST],
		.sfi_type = v[J_SFI_TYPE],
		.instance_type = v[J_INSTANCE_TYPE],
		.shared = v[J_SHARED],
		.sfi_name = v[J_SFI_NAME],
		.fp_function = v[J_FP_FUNCTION],
		.fp_marker = v[J_FP_MARKER],
	};
	l->sfi_script = v[J_SFI_SCRIPT];
	l->scope_info_type = v[J_SCOPE_INFO_TYPE];
	l->scope_first_vars = v[J_SCOPE_FIRST_VARS];
	l->scope_context_locals = v[J_SCOPE_CONTEXT_LOCALS];
	l->script_type = v[J_SCRIPT_TYPE];
	l->script_name = v[J_SCRIPT_NAME];
	l->script_line_ends = v[J_SCRIPT_LINE_ENDS];
	l->script_source = v[J_SCRIPT_SOURCE];
	l->first_nonstring = v[J_FIRST_NONSTRING];
	l->string_length = v[J_STRING_LENGTH];
	l->one_byte_chars = v[J_ONE_BYTE_CHARS];
	l->two_byte_chars = v[J_TWO_BYTE_CHARS];
	l->cons_first = v[J_CONS_FIRST];
	l->cons_second = v[J_CONS_SECOND];
	l->thin_actual = v[J_THIN_ACTUAL];
	l->encoding_mask = v[J_ENCODING_MASK];
	l->representation_mask = v[J_REPRESENTATION_MASK];
	l->one_byte_tag = v[J_ONE_BYTE_TAG];
	l->seq_tag = v[J_SEQ_TAG];
	l->cons_tag = v[J_CONS_TAG];
	l->thin_tag = v[J_THIN_TAG];
	l->fixed_length = v[J_FIXED_LENGTH];
	l->fixed_data = v[J_FIXED_DATA];
	l->fixed_array_type = v[J_FIXED_ARRAY_TYPE];
	return 0;
implausible:
	memset(l, 0, sizeof(*l));
	msg__set(err, len, "%s: implausible V8 postmortem constants for JavaScript frames",
		 elf_file__name(ef));
	return -EINVAL;
}

static bool node_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(base, "node") || !strcmp(base, "nodejs") || !strncmp(base, "libnode.so", 10);
}

/* A threadlocal.* constant of ctx into *field when present: false if it is no valid offset. */
static bool ctx_constant(const struct otel_ctx *ctx, const char *key, __u16 *field, int align,
			 bool *used)
{
	const char *s = otel_ctx__threadlocal(ctx, key);
	char *end;
	long v;

	if (!s)
		return true;
	v = strtol(s, &end, 0);
	if (end == s || *end || v < 0 || v > 4095 || !offset_ok((int)v, align))
		return false;
	*field = (__u16)v;
	*used = true;
	return true;
}

struct node_binary {
	int (*read)(const struct elf_file *ef, void *out, char *err, size_t len);
	void *out;
	char *err;
	size_t err_len;
	const char *path; /* of the file read last */
};

static bool node_binary_wanted(const struct maps_entry *e, bool first)
{
	return first || node_name(e->path);
}

static int read_node_binary(struct elf_file *ef, const struct maps_entry *e, void *ctx)
{
	struct node_binary *b = ctx;

	b->path = e->path;
	return b->read(ef, b->out, b->err, b->err_len);
}

/*
 * read(ef, out, err) on pid's executable (whatever its name), then on each
 * mapped file named node, nodejs or libnode.so*, until one is not -ENOENT;
 * the file's path into *path. Returns what read returned last.
 */
static int on_node_binary(pid_t pid, const struct maps *maps,
			  int (*read)(const struct elf_file *ef, void *out, char *err, size_t len),
			  void *out, char *err, size_t err_len, const char **path)
{
	struct node_binary b = {read, out, err, err_len, NULL};
	int ret = runtime__each_elf(pid, maps, node_binary_wanted, read_node_binary, &b);

	*path = b.path;
	return ret;
}

static int read_layout(const struct elf_file *ef, void *ref, char *err, size_t len)
{
	return node__v8_layout(ef, ref, err, len);
}

int node__find_layout(pid_t pid, const struct maps *maps, const struct otel_ctx *ctx,
		      struct lp_node_ref *ref, char *msg, size_t msg_len)
{
	const char *tagged, *path;
	char err[256] = "";
	bool used = false;
	int ret;

	memset(ref, 0, sizeof(*ref));
	ret = on_node_binary(pid, maps, read_layout, ref, err, sizeof(err), &path);
	if (ret) {
		memset(ref, 0, sizeof(*ref));
		msg__set(msg, msg_len, "no V8 layout: %s",
			 err[0] ? err
				: "no mapped node executable or libnode with v8dbg_* symbols");
		return ret;
	}
	tagged = ctx ? otel_ctx__threadlocal(ctx, "threadlocal.tagged_size") : NULL;
	if (tagged && strcmp(tagged, "8")) {
		memset(ref, 0, sizeof(*ref));
		msg__set(msg, msg_len,
			 "the process context says threadlocal.tagged_size %s: only 8 is read",
			 tagged);
		return -ENOTSUP;
	}
	if (ctx &&
	    (!ctx_constant(ctx, "threadlocal.js_map_table_offset", &ref->map_table, 8, &used) ||
	     !ctx_constant(ctx, "threadlocal.ordered_hash_map_header_size", &ref->hash_header, 8,
			   &used) ||
	     !ctx_constant(ctx, "threadlocal.js_object_record_offset", &ref->record, 8, &used))) {
		memset(ref, 0, sizeof(*ref));
		msg__set(msg, msg_len, "the process context's V8 layout constants are not offsets");
		return -EINVAL;
	}
	if (ref->hash_header < 8) {
		memset(ref, 0, sizeof(*ref));
		msg__set(msg, msg_len,
			 "the process context's ordered_hash_map_header_size is too small");
		return -EINVAL;
	}
	msg__set(msg, msg_len, "V8 layout from %s%s (table +%u, hash map header %u, record +%u)",
		 path ? path : "?", used ? " and the process context" : "", ref->map_table,
		 ref->hash_header, ref->record);
	return 0;
}

/*
 * Whether pid was started with AsyncContextFrame turned off: without it a
 * writer has no frame to put its context in (@datadog/pprof refuses to).
 * From the command line and NODE_OPTIONS, where the flag can be.
 */
static bool acf_off(pid_t pid)
{
	static const char flag[] = "--no-async-context-frame";
	static const char *const files[] = {"cmdline", "environ"};
	char path[64], buf[16384];
	size_t i, k;
	ssize_t n;
	int fd;

	for (k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, files[k]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (i = 0; i < (size_t)n; i += strlen(buf + i) + 1) {
			const char *s = buf + i;

			if (k == 1 && strncmp(s, "NODE_OPTIONS=", 13))
				continue;
			if (strstr(s, flag))
				return true;
		}
	}
	return false;
}

int node__thread_ctx(pid_t pid, const struct maps *maps, struct lp_node_ref *ref, char *msg,
		     size_t msg_len)
{
	char where[256], layout[320], err[128];
	struct otel_ctx *ctx = NULL;
	const char *schema;
	__u64 addr;
	int ret;

	snprintf(where, sizeof(where), "%s", msg);
	if (!otel_ctx__find(pid, maps, &addr))
		otel_ctx__read(pid, addr, &ctx, err, sizeof(err));
	schema = ctx && ctx->schema_version ? ctx->schema_version : NULL;
	ret = node__find_layout(pid, maps, ctx, ref, layout, sizeof(layout));
	if (!ret && acf_off(pid)) {
		memset(ref, 0, sizeof(*ref));
		ret = -ENOTSUP;
		snprintf(layout, sizeof(layout),
			 "AsyncContextFrame is off (--no-async-context-frame): no context is "
			 "published");
	} else if (!ret && schema && strcmp(schema, NODE_SCHEMA)) {
		memset(ref, 0, sizeof(*ref));
		ret = -ENOTSUP;
		snprintf(layout, sizeof(layout),
			 "the process context's schema is not " NODE_SCHEMA);
	}
	msg__set(msg, msg_len, "Node.js discovery struct, %s; schema %s; %s%s", where,
		 schema ? schema : "none published", ret ? "labels cannot be read: " : "", layout);
	otel_ctx__free(ctx);
	return ret;
}

static int read_js_layout(const struct elf_file *ef, void *l, char *err, size_t len)
{
	return node__js_layout(ef, l, err, len);
}

int node__find_js_layout(pid_t pid, const struct maps *maps, struct node_js_layout *l,
			 char *msg, size_t msg_len)
{
	char err[256] = "";
	const char *path;
	int ret;

	ret = on_node_binary(pid, maps, read_js_layout, l, err, sizeof(err), &path);
	if (ret)
		msg__set(msg, msg_len, "%s",
			 err[0] ? err : "no mapped node executable or libnode with v8dbg_* symbols");
	else
		msg__set(msg, msg_len, "%s", path);
	return ret;
}
