// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fuzzes the OTLP JSON reader: the input is a request in OTLP's JSON
 * mapping. A request it accepts is written again with the OTLP JSON writer
 * (thread attributes on); that must read back with the same total, and from
 * there reading and writing is a fixed point (same bytes). A refused request
 * must come with a one-line "otlp-json: ..." error.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/input.h"
#include "format/output.h"
#include "profile/symprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct output_opts threads = {
	.extra_labels = OUTPUT_LABEL_TID | OUTPUT_LABEL_THREAD_NAME,
};

/* The document, or NULL if the values do not fit (count x period past 2^63). */
static char *write_json(const struct symprof *sp, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int r;

	if (!f)
		abort();
	r = output__write_otlp_json(f, sp, &threads);
	if (r && r != -EOVERFLOW)
		abort();
	if (fclose(f))
		abort();
	if (r) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Reads size bytes from an exact-size heap copy, so that ASan sees any overread. */
static struct symprof *read_json(const void *data, size_t size)
{
	struct symprof *sp = symprof__new();
	void *copy = malloc(size ? size : 1);
	char err[256];
	int r;

	if (!sp || !copy)
		abort();
	memcpy(copy, data, size);
	r = input__read_otlp_json(copy, size, sp, err, sizeof(err));
	free(copy);
	if (r == -EINVAL && (strncmp(err, "otlp-json: ", 11) || strchr(err, '\n')))
		abort();
	if (r && r != -EINVAL && r != -ENOMEM)
		abort();
	if (r) {
		symprof__free(sp);
		return NULL;
	}
	return sp;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symprof *sp = read_json(data, size), *again, *third;
	char *first, *second, *last;
	size_t first_len, second_len, last_len;

	if (!sp)
		return 0;
	first = write_json(sp, &first_len);
	if (!first) {
		symprof__free(sp);
		return 0;
	}
	again = read_json(first, first_len);
	if (!again || symprof__total(again) != symprof__total(sp))
		abort();
	second = write_json(again, &second_len);
	third = second ? read_json(second, second_len) : NULL;
	if (!third)
		abort();
	last = write_json(third, &last_len);
	if (!last || last_len != second_len || memcmp(last, second, second_len))
		abort();
	free(first);
	free(second);
	free(last);
	symprof__free(third);
	symprof__free(again);
	symprof__free(sp);
	return 0;
}
