/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Label selection (docs/design.md section 5): which label keys a profile
 * keeps, decided where a sample's label set is aggregated (profile.c, and
 * symprof for profiles read back), so that a dropped key reaches no output
 * and no backend.
 *
 * A selection is two lists of fnmatch(3) patterns, comma-separated: keep
 * (--labels; none given: every key) and drop (--drop-labels). A key stays
 * when it matches a keep pattern, or there is no keep list, and matches no
 * drop pattern. Keys are byte strings: one that holds a NUL byte matches no
 * pattern. Immutable once made: one selection can serve several profiles.
 */
#ifndef LABELPROF_LABELSEL_H
#define LABELPROF_LABELSEL_H

#include <stdbool.h>
#include <stddef.h>

struct labelsel;

/*
 * Checks a pattern list: 0, or -EINVAL with what is wrong in err ("empty
 * pattern in 'a,,b'") for the caller to prefix with the flag or key.
 */
int labelsel__check(const char *list, char *err, size_t err_len);

/*
 * A selection from keep and drop lists (either may be NULL: none). Returns
 * NULL with what is wrong in err, naming "keep" or "drop" through *bad_drop
 * (false: the keep list is at fault), or on allocation failure (err says so).
 */
struct labelsel *labelsel__new(const char *keep, const char *drop, bool *bad_drop, char *err,
			       size_t err_len);
void labelsel__free(struct labelsel *s);

/* Whether s keeps the key of len bytes; a NULL s keeps every key. */
bool labelsel__keeps(const struct labelsel *s, const void *key, size_t len);

/*
 * Whether the key names a trace or span id (trace_id, span_id, trace-id,
 * span-id, root-span-id): one value per request, for OTLP links and pprof
 * labels, never a row of a text view nor a frame of a folded stack.
 */
bool labelsel__is_trace_key(const void *key, size_t len);

#endif /* LABELPROF_LABELSEL_H */
