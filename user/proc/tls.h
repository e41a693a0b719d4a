/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where a process keeps its threads' label objects: ELF inspection of the
 * objects it maps and the recipe (struct lp_recipe) the BPF sampler applies
 * to a thread pointer (docs/design.md section 3). proc/tls_file.c reads files,
 * proc/tls.c live processes.
 */
#ifndef LABELPROF_TLS_H
#define LABELPROF_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "labelprof.h"
#include "proc/golang.h"

/* At most this many TLS relocations of the label symbol are kept per file. */
#define TLS_MAX_RELOCS		  8
#define TLS_DIAG_LEN		  256
#define TLS_CACHE_DEFAULT_ENTRIES 4096

enum tls_reloc_kind {
	TLS_RELOC_TLSDESC = 1, /* 16-byte descriptor: resolver, argument */
	TLS_RELOC_TPOFF = 2,   /* initial-exec: offset from tp */
	TLS_RELOC_DTPMOD = 3,  /* general-dynamic: module id */
	TLS_RELOC_DTPOFF = 4,  /* general-dynamic: offset in the module's block */
};

struct tls_reloc {
	__u64 r_offset; /* GOT slot, relative to the load bias */
	__u32 kind;	/* enum tls_reloc_kind */
	bool local;	/* against the object's own block (symbol index 0), not the symbol */
};

#define TLS_MAX_EXEC_SEGMENTS 4

/* An executable PT_LOAD segment: with its mapping, gives the load bias. */
struct tls_segment {
	__u64 vaddr;
	__u64 offset;
};

enum tls_libc {
	TLS_LIBC_UNKNOWN = 0,
	TLS_LIBC_GLIBC = 1,
	TLS_LIBC_MUSL = 2,
};

/* What one ELF file publishes. */
struct tls_file_info {
	__u32 machine;	      /* e_machine */
	__u32 form;	      /* enum lp_label_form; NONE if no usable label symbols */
	bool has_version;     /* defines custom_labels_abi_version */
	bool version_in_file; /* ... and its value is file-backed (abi_version is valid) */
	bool is_exe;  /* ET_EXEC; ET_DYN with DF_1_PIE, or with PT_INTERP and no DT_SONAME */
	bool has_tls; /* has a PT_TLS segment */
	bool tls_sym_dynamic; /* the TLS symbol is in .dynsym (as the spec wants), not .symtab */
	__u32 abi_version;
	__u32 interp_libc;   /* enum tls_libc named by PT_INTERP */
	__u64 version_vaddr; /* st_value of custom_labels_abi_version */
	__u64 tls_value;     /* st_value of the form's TLS symbol: offset in the TLS block */
	__u64 tls_memsz;     /* PT_TLS p_memsz, p_align, p_vaddr */
	__u64 tls_align;
	__u64 tls_vaddr;
	__u32 nr_relocs;
	__u32 nr_exec_segments;
	struct tls_reloc relocs[TLS_MAX_RELOCS];
	/*
	 * The OpenTelemetry thread context pointer, otel_thread_ctx_v1 (OTEP 4947),
	 * or Node.js's discovery struct otel_thread_ctx_nodejs_v1 (otel_nodejs).
	 */
	bool has_otel;
	bool otel_nodejs;
	bool otel_sym_dynamic; /* in .dynsym */
	__u32 nr_otel_relocs;
	__u64 otel_value; /* st_value: offset in the TLS block */
	struct tls_reloc otel_relocs[TLS_MAX_RELOCS];
	struct tls_segment exec_segments[TLS_MAX_EXEC_SEGMENTS];
	struct go_file_info go; /* executables: Go build info (proc/golang.h) */
};

/* Which of docs/design.md section 3's cases a recipe came from. */
enum tls_case {
	TLS_CASE_NONE = 0,
	TLS_CASE_EXE_STATIC = 1,      /* the executable's own static TLS block */
	TLS_CASE_TLSDESC_STATIC = 2,  /* TLSDESC resolved to an offset from tp */
	TLS_CASE_TLSDESC_DYNAMIC = 3, /* TLSDESC with the dynamic resolver: DTV walk */
	TLS_CASE_TPOFF = 4,	      /* initial-exec GOT slot: offset from tp */
	TLS_CASE_DTPMOD = 5,	      /* general-dynamic module id: DTV walk */
	TLS_CASE_TLSDESC_PENDING = 6, /* TLSDESC not relocated yet: BPF reads it per sample */
};

/* How a recipe was found, or why none was. */
struct tls_diag {
	__u32 tls_case;		   /* enum tls_case */
	__u32 libc;		   /* enum tls_libc of the process */
	char object[TLS_DIAG_LEN]; /* the object publishing the labels, as mapped */
	char msg[TLS_DIAG_LEN];	   /* one line for logs */
	/* The same for the OTel thread context (otel_case: enum tls_case). */
	__u32 otel_case;
	bool otel_nodejs; /* the object defines otel_thread_ctx_nodejs_v1 */
	char otel_object[TLS_DIAG_LEN];
	char otel_msg[TLS_DIAG_LEN];
	char go[TLS_DIAG_LEN];	   /* Go programs: the version and how labels are read, or why not */
};

/* "custom_labels_v0", "custom_labels_v1", or NULL for LP_FORM_NONE and unknown forms. */
const char *tls__form_name(__u32 form);
/* "x86-64", "aarch64" for an e_machine, or NULL. */
const char *tls__machine_name(__u32 machine);
/* The ELF name of a relocation (enum tls_reloc_kind) on machine, or NULL. */
const char *tls__reloc_name(__u32 machine, __u32 kind);

/*
 * Inspects one ELF file. Returns 0 (info->form is NONE when the file
 * publishes no labels), or -errno for unreadable or malformed files, with a
 * reason in err.
 */
int tls__inspect_file(const char *path, struct tls_file_info *info, char *err, size_t err_len);
/* The same for an open file (not closed); name is for messages. */
int tls__inspect_fd(int fd, const char *name, struct tls_file_info *info, char *err,
		    size_t err_len);

/*
 * The recipe of an executable's own static TLS (case 1), from its file info
 * alone: custom labels and the OTel thread context. Returns 0, -ENOENT if
 * the file publishes neither, -EINVAL if its TLS segment is unusable,
 * -ENOTSUP for an unknown machine.
 */
int tls__exe_recipe(const struct tls_file_info *info, struct lp_recipe *recipe);
/*
 * The offset from tp of the byte at value in an executable's TLS segment.
 * Returns 0, -EINVAL if the segment is unusable, -ENOTSUP for an unknown machine.
 */
int tls__exe_tls_offset(const struct tls_file_info *info, uint64_t value, int64_t *offset);

/*
 * Per-file inspection results keyed by device and inode and checked against
 * size and mtime, least recently used evicted beyond max_entries. Not
 * thread-safe.
 */
struct tls_cache;

struct tls_cache_stats {
	__u64 hits;
	__u64 misses;
	__u64 evictions;
	__u32 entries;
};

struct tls_cache *tls_cache__new(unsigned int max_entries);
void tls_cache__free(struct tls_cache *cache);
void tls_cache__stats(const struct tls_cache *cache, struct tls_cache_stats *stats);

/*
 * A live process's label sources, for callers that read its maps once and
 * hand them to each source (registry/): open inspects the objects mapped
 * in maps (a reference is taken; NULL: read /proc/PID/maps), opening files
 * inside the process's root (proc/root.h); cache may be NULL. Then each
 * source locates its own TLS symbol, reading GOT words through
 * /proc/PID/mem. Each returns 0 (its part of the recipe empty when the
 * process publishes none, or only an unknown ABI version), -EAGAIN when
 * the label object's TLS slot is not resolved yet (retry later), -ESRCH
 * when the process is gone, -ENOENT when labels are published but their
 * TLS cannot be located, other -errno on errors. diag must be zeroed by
 * the caller; each part fills its own fields: which object and case, or
 * why not.
 */
struct maps;
struct tls_process;

int tls_process__open(struct tls_cache *cache, int pid, struct maps *maps,
		      struct tls_process **out, struct tls_diag *diag);
void tls_process__close(struct tls_process *tp);
/* Custom labels v1, else v0: recipe->form and recipe->labels. */
int tls_process__custom_labels(struct tls_process *tp, struct lp_recipe *recipe,
			       struct tls_diag *diag);
/* The OTel thread context (otel_thread_ctx_v1): ref->access NONE when no object defines it. */
int tls_process__otel_thread(struct tls_process *tp, struct lp_tls_ref *ref,
			     struct tls_diag *diag);
/* The main program's file info, or NULL when no mapped object is an executable. */
const struct tls_file_info *tls_process__main_program(const struct tls_process *tp);

#endif /* LABELPROF_TLS_H */
