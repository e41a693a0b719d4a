/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPython 3.10 to 3.13 (docs/design.md section 11): which mapped file is the
 * interpreter and where its structures are (layout.c), its thread
 * states and code objects as read from a process's memory (frames.c).
 */
#ifndef LABELPROF_RUNTIME_PYTHON_H
#define LABELPROF_RUNTIME_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "labelprof.h"

struct elf_file;
struct maps;
struct maps_entry;

/* The offsets userspace reads code objects and strings by. */
struct py_code_offsets {
	__u16 name;
	__u16 qualname; /* 0: none (3.10: the name) */
	__u16 filename;
	__u16 firstlineno;
	__u16 linetable;
	__u16 adaptive; /* co_code_adaptive (3.11+) */
	__u16 ascii_size;   /* sizeof(PyASCIIObject): a compact ASCII string's bytes follow */
	__u16 compact_size; /* sizeof(PyCompactUnicodeObject) */
	__u16 bytes_size;   /* PyBytesObject: ob_size, ob_sval */
	__u16 bytes_sval;
};

/* What an interpreter's file gives, in its link-time addresses. */
struct py_image {
	__u32 version;		/* PY_VERSION_HEX >> 16: 0x030b for 3.11 */
	const char *source;	/* where the offsets come from */
	__u64 runtime;		/* _PyRuntime */
	__u64 interp_head;	/* _PyRuntime.interpreters.head */
	__u64 eval, eval_end;	/* _PyEval_EvalFrameDefault */
	__u64 code_type;	/* PyCode_Type */
	struct lp_py_ref ref;	/* interp_head relative to the image: add the bias */
	struct py_code_offsets code;
};

/*
 * Whether ef (a mapped file named path) is a CPython interpreter this
 * version supports: 0 and *img filled, -ENOENT if not Python at all,
 * -ENOTSUP with the reason in err for an interpreter it cannot read.
 */
int py_image__inspect(struct elf_file *ef, const char *path, struct py_image *img, char *err,
		      size_t err_len);

/*
 * The interpreter mapped by pid (maps), its image in *img, its load bias and,
 * if file is not NULL, its first mapping (in maps); 0, -ENOENT when none,
 * -ENOTSUP (reason in err), -errno.
 */
int py_image__find(pid_t pid, const struct maps *maps, struct py_image *img, __u64 *bias,
		   const struct maps_entry **file, char *err, size_t err_len);

/* The thread states of pid's main interpreter: how many, at most max ids into tids. */
int py_thread_states(pid_t pid, const struct py_image *img, __u64 bias, __u64 *tids, size_t max);

/* A code object, named. */
struct py_code {
	__u64 addr;
	/* what identifies it: type, names, file and line table pointers, the hash of its name */
	__u64 fingerprint[6];
	char *function;	      /* qualified name */
	char *file;
	__u32 first_line;
	__u32 version;
	unsigned char *linetable;
	size_t linetable_len;
};

/* Reads the code object at addr of pid: 0, or -errno (-EINVAL: not a code object). */
int py_code__read(pid_t pid, const struct py_image *img, __u64 bias, __u64 addr,
		  struct py_code *c);
void py_code__free(struct py_code *c);
/* The line of the instruction at index instr (2-byte code units); 0: unknown. */
__u32 py_code__line(const struct py_code *c, __u32 instr);
/* The line of instruction instr by a line table in the format of version (tests). */
__u32 py_linetable__line(__u32 version, const unsigned char *t, size_t len, __u32 first_line,
			 __u32 instr);

#endif /* LABELPROF_RUNTIME_PYTHON_H */
