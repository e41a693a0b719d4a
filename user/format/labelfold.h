/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How the text views (folded, report, html, top) show a profile's labels
 * (docs/design.md section 5): a key with more distinct values than a limit
 * is folded into KEY=* (one row instead of a row per request id), and trace
 * and span ids (labelsel__is_trace_key) are not shown at all: they belong to
 * OTLP links and pprof labels. Machine formats keep every value.
 */
#ifndef LABELPROF_LABELFOLD_H
#define LABELPROF_LABELFOLD_H

#include <stdio.h>
#include <linux/types.h>

struct symprof;

/* The value a folded key is shown with. */
#define LABELFOLD_VALUE "*"

enum label_shown {
	LABEL_SHOWN,
	LABEL_FOLDED, /* shown as KEY=* */
	LABEL_HIDDEN, /* a trace or span id */
};

struct labelfold_key {
	__u32 key;    /* string id */
	__u32 values; /* its distinct values */
};

struct labelfold {
	unsigned char *shown; /* enum label_shown by string id; NULL: every key shown */
	size_t nshown;
	struct labelfold_key *folded; /* sorted by key bytes */
	size_t nfolded;
	unsigned int max_values;
};

/*
 * Counts the distinct values of every key of sp; max_values 0: no key is
 * folded (ids are still hidden). Returns 0 or -ENOMEM.
 */
int labelfold__init(struct labelfold *lf, const struct symprof *sp, unsigned int max_values);
void labelfold__free(struct labelfold *lf);

static inline enum label_shown labelfold__shown(const struct labelfold *lf, __u32 key)
{
	return lf->shown && key < lf->nshown ? lf->shown[key] : LABEL_SHOWN;
}

/*
 * Writes one line per folded key: prefix, then "KEY has N values, shown as
 * KEY=* (--max-label-values M)" and a newline; the key escaped for a
 * terminal.
 */
void labelfold__describe(const struct labelfold *lf, const struct symprof *sp, FILE *f,
			 const char *prefix);

#endif /* LABELPROF_LABELFOLD_H */
