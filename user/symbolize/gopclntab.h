/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Go's function table (the "pcln table", .gopclntab): function names, entry
 * points, source files and lines, which Go keeps in stripped binaries (its
 * runtime needs them for tracebacks). Formats of Go 1.16-1.17 (magic
 * 0xfffffffa), 1.18-1.19 (0xfffffff0) and 1.20 on (0xfffffff1), 64-bit
 * little-endian targets (src/runtime/symtab.go, src/debug/gosym/pclntab.go).
 * The table comes from an untrusted file: every offset is checked against
 * the bytes given, so a bad table gives no names, not a crash.
 */
#ifndef LABELPROF_GOPCLNTAB_H
#define LABELPROF_GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct gopcln {
	const unsigned char *p; /* the table, from its header */
	size_t len;
	unsigned int version; /* 116, 118 or 120: the first Go version of its format */
	unsigned int quantum; /* pc step of the pc-value tables */
	size_t nfunc;
	__u64 text_start;			   /* Go >= 1.18: entries are offsets from it */
	size_t funcname, cu, filetab, pctab, pcln; /* tables, offsets into p */
};

/* Whether p holds a table header this parser reads (0) or not (-EINVAL). */
int gopcln__init(struct gopcln *t, const void *p, size_t len);

/*
 * Function i (< nfunc): [*start, *end) and its name, a string within the
 * table. Returns 0, or -EINVAL for an entry out of bounds.
 */
int gopcln__func(const struct gopcln *t, size_t i, __u64 *start, __u64 *end, const char **name);

/* The function holding pc, by the table's entries (sorted, as Go writes them), or -1. */
long gopcln__find(const struct gopcln *t, __u64 pc);

/*
 * The source position of pc in function i: its file (a string within the
 * table, NULL if unknown), line and the function's first line (Go >= 1.20;
 * 0 before). Returns 0, or -ENOENT when the table says nothing of pc.
 */
int gopcln__line(const struct gopcln *t, size_t i, __u64 pc, const char **file, __u32 *line,
		 __u32 *start_line);

/*
 * The table in a whole loaded segment (seg, len: its bytes): the header at
 * an 8-byte-aligned offset that gopcln__init accepts, for executables whose
 * section headers are stripped too. Returns 0 and *t, or -ENOENT.
 */
int gopcln__search(struct gopcln *t, const void *seg, size_t len);

#endif /* LABELPROF_GOPCLNTAB_H */
