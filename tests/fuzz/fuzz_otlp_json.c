// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fuzzes the OTLP JSON reader: the input is a request in OTLP's JSON
 * mapping. A request it accepts is written again with the OTLP JSON writer
 * (thread attributes on); that must read back with the same total, and from
 * there reading and writing is a fixed point (same bytes). A refused request
 * must come with a one-line "otlp-json: ..." error.
 */
#include "format/input.h"
#include "roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct output_opts threads = {
	.extra_labels = OUTPUT_LABEL_TID | OUTPUT_LABEL_THREAD_NAME,
};

static const struct fuzz_format otlp_json = {
	.read = input__read_otlp_json,
	.error_prefix = "otlp-json: ",
	.write = output__write_otlp_json,
	.opts = &threads,
	.rounds = 2,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_round_trip(&otlp_json, data, size);
}
