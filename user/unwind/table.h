/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unwind rows of one object (struct lp_unwind_row), derived from its CFI
 * (.eh_frame, else .debug_frame) with libdw: docs/design.md section 9.
 */
#ifndef LABELPROF_UNWIND_TABLE_H
#define LABELPROF_UNWIND_TABLE_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include "labelprof.h"

struct unwind_table {
	struct lp_unwind_row *rows; /* sorted by pc, no two neighbours alike */
	size_t count;
	size_t cap;
};

/*
 * Derives the rows of elf (EM_X86_64 or EM_AARCH64) from its .eh_frame and,
 * for the code that has none there, from the .debug_frame of debug (a
 * separate debug file; NULL: elf's own). Returns 0 (count may be 0: no
 * CFI), or -errno with a reason in err.
 */
int unwind_table__build(Elf *elf, Elf *debug, struct unwind_table *t, char *err, size_t err_len);
void unwind_table__free(struct unwind_table *t);

/*
 * Makes [lo, hi) a signal trampoline (LP_CFA_SIGNAL), the rows around it
 * unchanged. Returns 0 or -errno (t unchanged).
 */
int unwind_table__set_signal(struct unwind_table *t, __u32 lo, __u32 hi);

/* The row holding pc, or NULL (before the first row). */
const struct lp_unwind_row *unwind_table__find(const struct unwind_table *t, __u32 pc);

/* Whether elf has a .debug_frame of its own. */
bool unwind_table__has_debug_frame(Elf *elf);

#endif /* LABELPROF_UNWIND_TABLE_H */
