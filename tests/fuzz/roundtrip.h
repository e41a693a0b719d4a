/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The round trip every profile-format fuzz target runs: read the input; if
 * the reader accepts it, write it with the format's writer, read that back
 * (same total) and write again, until writing what was read is a fixed point
 * (same bytes). A refused input must come with a one-line error starting with
 * the reader's prefix. Whatever was read keeps every table id in range.
 */
#ifndef LABELPROF_FUZZ_ROUNDTRIP_H
#define LABELPROF_FUZZ_ROUNDTRIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format/output.h"
#include "profile/symprof.h"

struct fuzz_format {
	int (*read)(const void *buf, size_t len, struct symprof *sp, char *err, size_t errlen);
	const char *error_prefix; /* every -EINVAL error starts with it */
	int (*write)(FILE *f, const struct symprof *sp, const struct output_opts *opts);
	const struct output_opts *opts;
	/*
	 * Write-and-read-back rounds before the output must repeat: 1 if the
	 * first written output is already the fixed point, 2 if the writer's
	 * own choices (such as derived attributes) settle only on the second.
	 */
	int rounds;
	/* Stacks hold real location ids only (OTLP's readers keep a stack's index 0 as 0). */
	bool real_locations;
	/* Called on what was first read, for checks of other writers; or NULL. */
	void (*also)(const struct symprof *sp);
};

int fuzz_round_trip(const struct fuzz_format *fmt, const uint8_t *data, size_t size);

/* What write produced, or NULL if the values do not fit (-EOVERFLOW); aborts on other errors. */
char *fuzz_write(int (*write)(FILE *, const struct symprof *, const struct output_opts *),
		 const struct symprof *sp, const struct output_opts *opts, size_t *len);

#endif /* LABELPROF_FUZZ_ROUNDTRIP_H */
