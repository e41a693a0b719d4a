/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Go programs' pprof labels (docs/design.md section 8): the Go version from
 * an executable's build info, where its threads keep g, and the offsets of
 * g.m, m.curg and g.labels for that version (struct lp_go_ref).
 */
#ifndef LABELPROF_GOLANG_H
#define LABELPROF_GOLANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "labelprof.h"

#define GO_VERSION_LEN 48

struct elf_file;
struct tls_file_info;

/* What a Go executable says about itself. */
struct go_file_info {
	bool is_go;		       /* has Go build info */
	bool has_g_sym;		       /* g's TLS symbol is in .symtab (not stripped) */
	uint64_t g_sym_value;	       /* its st_value: g's slot in the TLS segment */
	bool has_code_g;	       /* the code reads g at an offset from tp */
	int32_t code_g_offset;	       /* that offset (the one most accesses use) */
	char version[GO_VERSION_LEN]; /* "go1.19.8", as the build info says */
};

/* Fills info from ef; an ELF file without Go build info leaves is_go false. */
void golang__inspect_elf(const struct elf_file *ef, struct go_file_info *info);

/* The minor version of "go1.N[...]", or -1 for another form ("devel ..."). */
int golang__minor_version(const char *version);

/*
 * The Go part of a recipe for an executable, from its file info alone.
 * Returns 0, -ENOENT if it is not a Go program, -ENOTSUP if its Go version has
 * no known offsets, -EINVAL if g's TLS slot cannot be located; msg (may be
 * NULL) gets one line saying which, or how labels are read.
 */
int golang__recipe(const struct tls_file_info *info, struct lp_go_ref *ref, char *msg,
		   size_t msg_len);

/* "map", "slice" for an enum lp_go_labels_format, or NULL. */
const char *golang__format_name(uint32_t format);

#endif /* LABELPROF_GOLANG_H */
