/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What proc/tls_arch.c (per architecture), proc/tls_file.c (ELF files) and
 * proc/tls.c (live processes) share; not for other modules, which use
 * proc/tls.h.
 */
#ifndef LABELPROF_TLS_ARCH_H
#define LABELPROF_TLS_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "proc/tls.h"

#define SYM_VERSION "custom_labels_abi_version"
#define SYM_V0	    "custom_labels_thread_local_data"
#define SYM_V1	    "custom_labels_current_set"
#define SYM_OTEL    "otel_thread_ctx_v1"
/* Node.js: a discovery struct, not a record pointer (docs/design.md section 13) */
#define SYM_OTEL_NODE  "otel_thread_ctx_nodejs_v1"
#define OTEL_NODE_SIZE 32

/* Larger TLS segments are not believed, from files or from processes. */
#define TLS_MAX_MEMSZ (1ull << 30)

/* Everything that differs between architectures. */
struct tls_arch {
	unsigned int machine;
	const char *name;
	/* Variant I: the TLS blocks follow a TCB of tcb_size bytes above tp. */
	bool tls_above_tp;
	uint32_t tcb_size;
	uint32_t r_tlsdesc, r_tpoff, r_dtpmod, r_dtpoff;
	const char *reloc_names[TLS_RELOC_DTPOFF + 1]; /* by enum tls_reloc_kind */
	/* Per libc (enum tls_libc): where the dtv pointer is, relative to tp. */
	struct {
		int64_t tp_offset;
		uint32_t entry_size;
		uint32_t flags;
	} dtv[3];
};

/* The architecture of an e_machine, or NULL if not supported. */
const struct tls_arch *tls_arch__find(__u32 machine);
struct stat;
/*
 * tls__inspect_fd of the open file fd (st: its fstat), from cache when the
 * file is unchanged since it was inspected (cache may be NULL).
 */
int tls_cache__inspect(struct tls_cache *cache, int fd, const struct stat *st, uint64_t dev,
		       uint64_t ino, const char *name, struct tls_file_info *info, char *err,
		       size_t err_len);
/* Which libc a loader or libc file name belongs to. */
enum tls_libc tls__libc_of_name(const char *path);

#endif /* LABELPROF_TLS_ARCH_H */
