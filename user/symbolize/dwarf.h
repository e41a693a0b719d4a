/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Source positions and inlined-call chains from the DWARF of one ELF file,
 * with libdw. Files may be truncated or hostile: sections are read with pread
 * (a file truncated under us gives an error, not SIGBUS), their total size is
 * checked against a budget before libdw loads them, and DIE trees are walked
 * iteratively within fixed bounds, so bad DWARF gives no lines, not a crash.
 */
#ifndef LABELPROF_DWARF_H
#define LABELPROF_DWARF_H

#include <stddef.h>
#include <linux/types.h>

struct dwarf_file;

/*
 * One source position. Through the symbolizer (symbols.h), strings stay
 * valid until its next call; from dwarf_file__lookup, as long as the file.
 */
struct sym_line {
	const char *function; /* NULL: unknown */
	const char *file;     /* source file; NULL: unknown */
	__u32 line;	      /* 0: unknown */
	__u32 column;	      /* 0: unknown */
	__u32 start_line;     /* first line of function (DW_AT_decl_line); 0: unknown */
};

/*
 * Called with what the debug sections will take once read, before they are
 * read, so that the caller can make room; a non-zero return is returned by
 * dwarf_file__open, which reads nothing more.
 */
typedef int (*dwarf_reserve_fn)(void *ctx, size_t bytes);

/*
 * Opens the DWARF of the ELF file open at fd; fd is not used after the call.
 * Only the sections lookups use are read (not locations, call frames,
 * macros). reserve (may be NULL) is called first. Returns 0 and *out,
 * -ENODATA if the file has no .debug_info, -EFBIG if those sections
 * (uncompressed) and address tables would exceed max_bytes, -EINVAL if they
 * cannot be parsed, -ENOMEM, or what reserve returned.
 */
int dwarf_file__open(int fd, size_t max_bytes, dwarf_reserve_fn reserve, void *ctx,
		     struct dwarf_file **out);
void dwarf_file__close(struct dwarf_file *df);

/*
 * Memory held (estimated from what libdw allocates): the debug sections and
 * unit tables from the start, then each unit's line table once a lookup has
 * decoded it, and the .debug_aranges table once one needed it. Only
 * dwarf_file__lookup makes it grow; dwarf_file__close frees it all.
 */
size_t dwarf_file__bytes(const struct dwarf_file *df);

/*
 * Fills lines with the source positions of ELF virtual address vaddr: the
 * innermost inlined function first, the function that holds vaddr last (its
 * position is the call site of the function it inlines). A chain longer than
 * max keeps its max - 1 innermost entries and the last one. Strings live as
 * long as df. Returns the number of entries, 0 if the DWARF does not cover
 * vaddr or cannot be read.
 */
size_t dwarf_file__lookup(struct dwarf_file *df, __u64 vaddr, struct sym_line *lines, size_t max);

#endif /* LABELPROF_DWARF_H */
