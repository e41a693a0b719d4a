/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * HotSpot JVMs (docs/design.md section 12): the JVM's description of itself
 * (VMStructs) read from a running process, with the code cache and the
 * offsets BPF walks Java frames by (layout.c); methods named from
 * the process's memory (frames.c; compiled frames' scopes: scopes.c).
 */
#ifndef LABELPROF_RUNTIME_HOTSPOT_H
#define LABELPROF_RUNTIME_HOTSPOT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "labelprof.h"

struct maps;
struct maps_entry;

/* The offsets userspace names methods by. */
struct hs_offsets {
	__u16 method_const;    /* Method::_constMethod */
	__u16 const_constants; /* ConstMethod::_constants */
	__u16 const_flags;
	__u16 const_code_size;
	__u16 const_words;     /* _constMethod_size: its size in words */
	__u16 const_name;      /* _name_index */
	__u16 const_signature; /* _signature_index */
	__u16 const_idnum;     /* _method_idnum */
	__u16 const_size;      /* sizeof(ConstMethod): the bytecodes follow */
	__u16 cp_holder;       /* ConstantPool::_pool_holder */
	__u16 cp_source;       /* _source_file_name_index */
	__u16 cp_length;
	__u16 cp_size;	  /* sizeof(ConstantPool): the entries follow */
	__u16 klass_name; /* Klass::_name */
	__u16 sym_length; /* Symbol::_length */
	__u16 sym_body;
	__u16 blob_code_end;   /* CodeBlob::_code_end */
	__u32 has_line_table;  /* ConstMethod::_has_linenumber_table */
	__u16 nm_scopes_data;  /* CompiledMethod::_scopes_data_begin */
	__u16 nm_scopes_pcs;   /* nmethod::_scopes_pcs_offset: its PcDescs, from its start */
	__u16 nm_dependencies; /* nmethod::_dependencies_offset: where they end */
	__u16 nm_metadata;     /* nmethod::_metadata_offset: the methods its scopes name */
	__u16 nm_compile_id;
	__u16 pcdesc_size;
	__u16 pcdesc_pc;    /* PcDesc::_pc_offset, from the code's start */
	__u16 pcdesc_scope; /* PcDesc::_scope_decode_offset */
	__s32 entry_bci;    /* InvocationEntryBci: a scope's bci is stored minus it */
};

/* A JVM as VMStructs describes it, with its code cache in the process. */
struct hs_vm {
	char release[64];	/* Abstract_VM_Version::_s_vm_release */
	__u64 bias;		/* libjvm's load bias */
	unsigned int entries;	/* VMStructs, types and constants entries read */
	struct lp_java_ref ref; /* what BPF walks by */
	struct hs_offsets off;
};

/*
 * The JVM pid runs (libjvm among maps), read: 0 and *vm filled, -ENOENT
 * when no libjvm is mapped, -EAGAIN while its code cache is not set up yet,
 * -ENOTSUP (reason in err) for one that cannot be read, -errno. file, if
 * not NULL, gets libjvm's first mapping.
 */
int hs_vm__find(pid_t pid, const struct maps *maps, struct hs_vm *vm,
		const struct maps_entry **file, char *err, size_t err_len);

/* A method, named. */
struct hs_method {
	__u64 addr;	      /* Method* */
	__u64 fingerprint[4]; /* ConstMethod*, ConstantPool*, holder, name/signature/idnum */
	__u64 const_method;
	char *function;	      /* package.Class.method */
	char *file;	      /* the source file's name; NULL: none */
	unsigned char *lines; /* the compressed line number table; NULL: none */
	size_t lines_len;
	__u32 code_size;
};

/* A frame of compiled code: its method and bytecode index, the methods inlined at its pc. */
#define HS_MAX_SCOPES 16
struct hs_scopes {
	__u64 nmethod;
	__s32 compile_id;
	__u32 count;
	__u64 method[HS_MAX_SCOPES]; /* innermost first: the inlined methods, then the nmethod's */
	__s32 bci[HS_MAX_SCOPES];
};

/*
 * The scopes of pc in the nmethod of method (a compiled frame of pid, pc in
 * its call, or where it was interrupted if leaf): 0, -ENOENT if no nmethod
 * of method holds pc (any more), -errno.
 */
int hs_scopes__read(pid_t pid, const struct hs_vm *vm, __u64 method, __u64 pc, bool leaf,
		    struct hs_scopes *s);
/* Whether the nmethod s was read from is still there, the same compilation. */
bool hs_scopes__same(pid_t pid, const struct hs_vm *vm, const struct hs_scopes *s);

/* Reads the Method at addr of pid: 0, or -errno (-EINVAL: not a method). */
int hs_method__read(pid_t pid, const struct hs_vm *vm, __u64 addr, struct hs_method *m);
/* Whether the Method at m->addr is still m (its class not unloaded, the memory not reused). */
bool hs_method__same(pid_t pid, const struct hs_vm *vm, const struct hs_method *m);
void hs_method__free(struct hs_method *m);
/* The bytecode index of bytecode pointer bcp in m; -1: not in m. */
int hs_method__bci(const struct hs_vm *vm, const struct hs_method *m, __u64 bcp);
/* The line of bytecode index bci; 0: unknown. */
__u32 hs_method__line(const struct hs_method *m, int bci);
/* An UNSIGNED5 number of t at *at (compressedStream.cpp): false past len. */
bool hs_unsigned5(const unsigned char *t, size_t len, size_t *at, __u32 *v);
/* The line of bci by a compressed line number table (tests). */
__u32 hs_line_table__line(const unsigned char *t, size_t len, int bci);

#endif /* LABELPROF_RUNTIME_HOTSPOT_H */
