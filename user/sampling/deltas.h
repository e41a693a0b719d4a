/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Sample records told as changes of their CPU's previous one
 * (LP_EVENT_SAMPLE_DELTA, struct lp_sample_delta) made whole again: every
 * reader past the sampler sees LP_EVENT_SAMPLE records only.
 */
#ifndef LABELPROF_SAMPLING_DELTAS_H
#define LABELPROF_SAMPLING_DELTAS_H

#include <stddef.h>
#include "labelprof.h"

struct deltas;

struct deltas *deltas__new(unsigned int ncpus);
void deltas__free(struct deltas *d);

/*
 * Takes the next LP_EVENT_SAMPLE or LP_EVENT_SAMPLE_DELTA record (size
 * bytes, as the ring buffer hands it over) and sets *out to the whole sample
 * record, valid until the next call: rec itself or a copy made whole.
 * Returns 0, -ENOMEM, or -EINVAL for a record that is malformed or told
 * against a record not seen (its CPU's next full record starts afresh).
 */
int deltas__expand(struct deltas *d, const void *rec, size_t size, const void **out,
		   size_t *out_size);

#endif /* LABELPROF_SAMPLING_DELTAS_H */
