/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Label bytes, comm and paths come from other processes: they are untrusted
 * byte strings, and every output escapes them losslessly. These helpers are
 * the one implementation the profile writers and the commands that print
 * labels share, so a byte string reads the same everywhere.
 */
#ifndef LABELPROF_FMT_H
#define LABELPROF_FMT_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "profile/profile.h"

/*
 * A JSON string of arbitrary bytes (docs/json-format.md, "Byte strings"):
 * valid UTF-8 as is, `"` and `\` escaped, 0x00-0x1f and 0x7f as \u00XX, every
 * other byte as the lone surrogate \udcXX (Python's "surrogateescape").
 */
void fmt__json_bytes(FILE *f, const void *p, size_t n);

/* A JSON object of labels, key -> value, in the order given. */
void fmt__json_labels(FILE *f, const struct profile_label *labels, size_t n);
/* "custom_labels", "otel_thread", "go_pprof", "otel_process" (enum lp_label_source). */
const char *fmt__label_source_name(__u32 source);
/* The source named by the len bytes at name; LP_SRC_CUSTOM_LABELS for a name it does not know. */
__u32 fmt__label_source_by_name(const void *name, size_t len);

/*
 * The source a unit of a pprof label or OTLP attribute names (FMT_LABEL_SOURCE_UNIT
 * then a name above); LP_SRC_CUSTOM_LABELS for any other unit, none included.
 */
#define FMT_LABEL_SOURCE_UNIT "labelprof.source."
__u32 fmt__label_source_of_unit(const char *unit);
/* {KEY: SOURCE} for the labels that do not come from custom labels. */
void fmt__json_label_sources(FILE *f, const struct profile_label *labels, size_t n);

/* A JSON array of the names of the status bits set (enum lp_sample_status, PROFILE_ST_*). */
void fmt__json_status(FILE *f, __u32 status);

/*
 * Bytes for a terminal, in exact terminal columns (wcwidth() under the
 * C.UTF-8 locale, whatever the process's locale; without that locale every
 * non-ASCII byte is escaped). A character is written as it is when it has a
 * width of its own (1 or 2 columns); otherwise each of its bytes is written
 * as \xHH (lowercase hex, 4 columns a byte): ASCII controls (0x00-0x1f), DEL,
 * `\` (so every `\` starts an escape), the ASCII characters in also (may be
 * NULL; non-ASCII bytes in it are ignored) so that they can separate fields,
 * bytes that are not part of valid UTF-8 (RFC 3629: no overlongs, surrogates
 * or code points past U+10FFFF), C1 controls (U+0080-U+009F, which some
 * terminals obey), and characters of no width: zero-width and bidirectional
 * formatting characters, combining marks, unassigned code points. Nothing is
 * lost: replacing every \xHH by its byte gives p back.
 *
 * At most max_cols columns are written (SIZE_MAX: no limit). When the whole
 * of p needs more, as much as fits in max_cols - 3 columns is written, never
 * part of a character or an escape, then "..." (cut to max_cols when
 * max_cols < 3). Returns the columns written, <= max_cols.
 */
size_t fmt__text_bytes(FILE *f, const void *p, size_t n, const char *also, size_t max_cols);

/* The columns fmt__text_bytes(f, p, n, also, SIZE_MAX) writes. */
size_t fmt__text_width(const void *p, size_t n, const char *also);

/*
 * One line of text (the newline is added) whose arguments may quote paths or
 * bytes of another process: formatted, then escaped like fmt__text_bytes.
 * Lines longer than 4 KiB are cut.
 */
void fmt__text_line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The name of status bit (0..31) as in the JSON "flags", or NULL if it has none. */
const char *fmt__status_name(unsigned int bit);

/*
 * The status bits saying how the user stack was unwound, which JSON shows
 * as "unwind" rather than in "flags"; and that name: "fp", "cfi", "mixed",
 * or NULL when neither bit is set.
 */
#define FMT_UNWIND_BITS (LP_ST_UNWIND_CFI | LP_ST_UNWIND_FP)
const char *fmt__unwind_name(__u32 status);
/* The status bits of an "unwind" name, 0 if unknown. */
__u32 fmt__unwind_bits(const char *name, size_t len);

#endif /* LABELPROF_FMT_H */
