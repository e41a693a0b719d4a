// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fuzzes the pprof reader: the input is a profile, gzipped or not. A profile
 * it accepts is written again with the pprof writer (every extra label on),
 * and from there reading and writing is a fixed point: the writer's output
 * reads back and writes the same bytes. A refused profile must come with a
 * one-line "pprof: ..." error.
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

static const struct output_opts all_labels = {
	.extra_labels =
		OUTPUT_LABEL_PID | OUTPUT_LABEL_TID | OUTPUT_LABEL_COMM | OUTPUT_LABEL_THREAD_NAME,
};

static char *write_pprof(const struct symprof *sp, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	if (output__write_pprof(f, sp, &all_labels))
		abort();
	if (fclose(f))
		abort();
	return buf;
}

/* Reads size bytes from an exact-size heap copy, so that ASan sees any overread. */
static struct symprof *read_pprof(const void *data, size_t size)
{
	struct symprof *sp = symprof__new();
	void *copy = malloc(size ? size : 1);
	char err[256];
	int r;

	if (!sp || !copy)
		abort();
	memcpy(copy, data, size);
	r = input__read_pprof(copy, size, sp, err, sizeof(err));
	free(copy);
	if (r == -EINVAL && (strncmp(err, "pprof: ", 7) || strchr(err, '\n')))
		abort();
	if (r && r != -EINVAL && r != -ENOMEM)
		abort();
	if (r) {
		symprof__free(sp);
		return NULL;
	}
	return sp;
}

/* Every id in the tables points inside its table. */
static void check_ids(const struct symprof *sp)
{
	size_t i, j;

	for (i = 1; i < sp->location_count; i++) {
		const struct sp_location *l = &sp->locations[i];

		if (l->mapping >= sp->mapping_count ||
		    l->first_line + l->line_count > sp->line_count)
			abort();
		for (j = 0; j < l->line_count; j++)
			if (sp->lines[l->first_line + j].function >= sp->function_count)
				abort();
	}
	for (i = 0; i < sp->stack_location_count; i++)
		if (!sp->stack_locations[i] || sp->stack_locations[i] >= sp->location_count)
			abort();
	for (i = 0; i < sp->sample_count; i++)
		if (sp->samples[i].stack >= sp->stack_count ||
		    sp->samples[i].label_set >= sp->label_set_count)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symprof *sp = read_pprof(data, size), *again;
	char *first, *second;
	size_t first_len, second_len;

	if (!sp)
		return 0;
	check_ids(sp);
	first = write_pprof(sp, &first_len);
	again = read_pprof(first, first_len);
	if (!again)
		abort();
	check_ids(again);
	second = write_pprof(again, &second_len);
	if (first_len != second_len || memcmp(first, second, first_len))
		abort();
	free(first);
	free(second);
	symprof__free(again);
	symprof__free(sp);
	return 0;
}
