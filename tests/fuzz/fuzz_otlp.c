// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fuzzes the OTLP profiles reader: the input is an ExportProfilesServiceRequest,
 * gzipped or not. A request it accepts is written again with the OTLP writer
 * (thread attributes on) and the JSON writer; the written request must read
 * back with the same total, and from there reading and writing is a fixed
 * point (same bytes). A refused request must come with a one-line
 * "otlp: ..." error.
 */
#include <stdlib.h>

#include "format/input.h"
#include "roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct output_opts threads = {
	.extra_labels = OUTPUT_LABEL_TID | OUTPUT_LABEL_THREAD_NAME,
};

static void write_json(const struct symprof *sp)
{
	size_t len;

	free(fuzz_write(output__write_otlp_json, sp, &threads, &len));
}

static const struct fuzz_format otlp = {
	.read = input__read_otlp,
	.error_prefix = "otlp: ",
	.write = output__write_otlp,
	.opts = &threads,
	.rounds = 2,
	.also = write_json,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_round_trip(&otlp, data, size);
}
