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
#include <sys/stat.h>

#include "lib/elf.h"
#include "lib/msg.h"
#include "proc/maps.h"
#include "proc/otel_ctx.h"
#include "proc/root.h"
#include "runtime/node.h"

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

int node__v8_layout(const struct elf_file *ef, struct lp_node_ref *ref, char *err, size_t err_len)
{
	unsigned int found[V_COUNT];
	GElf_Sym syms[V_COUNT];
	int v[V_COUNT], i, r;

	memset(ref, 0, sizeof(*ref));
	if (!elf_file__find_symbols(ef, v8dbg_names, V_COUNT, syms, found))
		return -ENOENT;
	for (i = 0; i < V_COUNT; i++) {
		if (!found[i]) {
			msg__set(err, err_len, "%s lacks %s", elf_file__name(ef), v8dbg_names[i]);
			return -ENOENT;
		}
		r = elf_file__read_vaddr(ef, syms[i].st_value, &v[i], sizeof(v[i]));
		if (r == -ENOENT) /* in .bss: a zero */
			v[i] = 0;
		else if (r) {
			msg__set(err, err_len, "%s: cannot read %s", elf_file__name(ef),
				 v8dbg_names[i]);
			return r;
		}
	}
	/* what bpf/labels_node.bpf.h reads: full 8-byte tagged values, Smis in the upper half */
	if (v[V_TAGGED_SIZE] != 8 || v[V_SMI_SHIFT] != 31 || v[V_HEAP_TAG] != 1 ||
	    v[V_HEAP_TAG_MASK] != 3 || v[V_MAP] != 0) {
		msg__set(err, err_len,
			 "%s: V8 with %d-byte tagged values (pointer compression) is not read",
			 elf_file__name(ef), v[V_TAGGED_SIZE]);
		return -ENOTSUP;
	}
	if (!offset_ok(v[V_INSTANCE_TYPE], 2) || !offset_ok(v[V_INSTANCE_SIZE], 1) ||
	    !offset_ok(v[V_JS_OBJECT_FIELDS], 8) || !offset_ok(v[V_FIXED_ARRAY_DATA], 8) ||
	    v[V_FIXED_ARRAY_DATA] < 8 || v[V_JS_MAP_TYPE] <= 0 || v[V_JS_MAP_TYPE] > 0xffff ||
	    v[V_API_TYPE] <= 0 || v[V_API_TYPE] > 0xffff || v[V_SPECIAL_API_TYPE] <= 0 ||
	    v[V_SPECIAL_API_TYPE] > 0xffff) {
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

int node__find_layout(pid_t pid, const struct maps *maps, const struct otel_ctx *ctx,
		      struct lp_node_ref *ref, char *msg, size_t msg_len)
{
	const struct maps_entry *e, *prev = NULL;
	char err[256] = "";
	const char *tagged;
	struct elf_file *ef;
	bool used = false;
	int ret = -ENOENT;
	struct stat st;
	size_t i;
	int fd;

	memset(ref, 0, sizeof(*ref));
	for (i = 0; maps && i < maps__count(maps) && ret; i++) {
		e = maps__entry(maps, i);
		/* the executable (the first file) whatever its name, then node and libnode */
		if (e->kind != MAPS_FILE || (prev && !node_name(e->path)))
			continue;
		/* a file's first mapping; the others are the same file */
		if (prev && prev->inode == e->inode && prev->dev_major == e->dev_major &&
		    prev->dev_minor == e->dev_minor)
			continue;
		prev = e;
		fd = proc_root__open_mapped(pid, e, &st);
		if (fd < 0)
			continue;
		ef = elf_file__open_fd(fd, e->path, NULL, 0);
		ret = ef ? node__v8_layout(ef, ref, err, sizeof(err)) : -ENOENT;
		if (ef)
			elf_file__close(ef);
		close(fd);
		if (ret && ret != -ENOENT)
			break;
	}
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
		 prev ? prev->path : "?", used ? " and the process context" : "", ref->map_table,
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
