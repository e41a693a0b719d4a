/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A JavaScript function named from a Node.js process's memory (docs/design.md section 13). */
#ifndef LABELPROF_NODE_FUNCTION_H
#define LABELPROF_NODE_FUNCTION_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

struct node_js_layout;

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

#endif /* LABELPROF_NODE_FUNCTION_H */
