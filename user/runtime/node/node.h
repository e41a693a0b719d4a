/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Node.js (docs/design.md section 13): the V8 layout the BPF walk of the
 * OpenTelemetry Node.js thread context needs, from V8's postmortem
 * constants (v8dbg_*) in the node executable or libnode.
 */
#ifndef LABELPROF_RUNTIME_NODE_H
#define LABELPROF_RUNTIME_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "labelprof.h"

struct elf_file;
struct maps;
struct otel_ctx;

/*
 * The layout from ef's v8dbg_* symbols into ref (format LP_NODE_V1).
 * Returns 0, -ENOENT when ef has none, -EPROTO when it lacks some, -ENOTSUP
 * for a layout the walk does not read (pointer compression), with a reason
 * in err.
 */
int node__v8_layout(const struct elf_file *ef, struct lp_node_ref *ref, char *err, size_t err_len);

/*
 * The same from pid's executable, else a mapped file named node, nodejs
 * or libnode.so*, then the offsets its process context publishes (ctx, may
 * be NULL) in their place: its instance types come from the binary alone. msg says where they came from, or why there are none.
 */
int node__find_layout(pid_t pid, const struct maps *maps, const struct otel_ctx *ctx,
		      struct lp_node_ref *ref, char *msg, size_t msg_len);

/* threadlocal.schema_version of the Node.js thread context */
#define NODE_SCHEMA "nodejs_v1_dev"

/*
 * The Node.js part of a recipe whose OTel thread context is the discovery
 * struct: the layout (node__find_layout, with pid's process context),
 * unless the process says its threads cannot publish a context. msg holds
 * where the struct is, and becomes one line saying what was found or why
 * labels cannot be read. Returns 0 or -errno (ref then zeroed).
 */
int node__thread_ctx(pid_t pid, const struct maps *maps, struct lp_node_ref *ref, char *msg,
		     size_t msg_len);

/*
 * What BPF needs to find JavaScript frames (ref), and what naming them
 * reads: a SharedFunctionInfo's name and Script, a Script's name and lines,
 * V8 strings. From the v8dbg_* constants.
 */
struct node_js_layout {
	struct lp_v8_ref ref;
	__u16 sfi_script;	    /* SharedFunctionInfo: its Script */
	__u16 scope_info_type;	    /* SCOPE_INFO_TYPE */
	__u16 scope_first_vars;	    /* ScopeInfo: the slot its variables start at */
	__u16 scope_context_locals; /* ScopeInfo: the slot of their count (a Smi) */
	__u16 script_type;	    /* SCRIPT_TYPE */
	__u16 script_name;
	__u16 script_line_ends; /* a FixedArray of Smis, once V8 computed them */
	__u16 script_source;
	__u16 first_nonstring; /* instance types below it are strings */
	__u16 string_length;   /* int32 */
	__u16 one_byte_chars;
	__u16 two_byte_chars;
	__u16 cons_first;
	__u16 cons_second;
	__u16 thin_actual;
	__u16 encoding_mask; /* of a string's instance type */
	__u16 representation_mask;
	__u16 one_byte_tag;
	__u16 seq_tag;
	__u16 cons_tag;
	__u16 thin_tag;
	__u16 fixed_length; /* FixedArrayBase: its length (a Smi) */
	__u16 fixed_data;
	__u16 fixed_array_type; /* FIXED_ARRAY_TYPE */
};

/* The JavaScript layout from ef's v8dbg_* symbols; as node__v8_layout. */
int node__js_layout(const struct elf_file *ef, struct node_js_layout *l, char *err, size_t len);

/* The same from pid's executable or libnode; msg: the file, or why none. */
int node__find_js_layout(pid_t pid, const struct maps *maps, struct node_js_layout *l,
			 char *msg, size_t msg_len);

/* A JavaScript function named from a Node.js process's memory (frames.c). */
struct node_function {
	__u64 sfi;   /* its SharedFunctionInfo's address */
	__u64 ident; /* what its name_or_scope_info held when read */
	char *name;  /* NULL: anonymous */
	char *file;  /* its Script's name; NULL: none */
	__u32 line;  /* the line it starts at; 0: unknown */
};

/*
 * Reads the function whose SharedFunctionInfo is at sfi in pid, if its
 * name_or_scope_info still holds ident (BPF's LP_JS_SECOND word): 0, or
 * -ESTALE (another object is there now), -errno.
 */
int node_function__read(pid_t pid, const struct node_js_layout *l, __u64 sfi, __u64 ident,
			struct node_function *f);
void node_function__free(struct node_function *f);

#endif /* LABELPROF_RUNTIME_NODE_H */
