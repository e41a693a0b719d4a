// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fuzzes the pprof reader: the input is a profile, gzipped or not. A profile
 * it accepts is written again with the pprof writer (every extra label on),
 * and from there reading and writing is a fixed point: the writer's output
 * reads back and writes the same bytes. A refused profile must come with a
 * one-line "pprof: ..." error.
 */
#include "format/input.h"
#include "roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct output_opts all_labels = {
	.extra_labels =
		OUTPUT_LABEL_PID | OUTPUT_LABEL_TID | OUTPUT_LABEL_COMM | OUTPUT_LABEL_THREAD_NAME,
};

static const struct fuzz_format pprof = {
	.read = input__read_pprof,
	.error_prefix = "pprof: ",
	.write = output__write_pprof,
	.opts = &all_labels,
	.rounds = 1,
	.real_locations = true,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_round_trip(&pprof, data, size);
}
