// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roundtrip.h"

char *fuzz_write(int (*write)(FILE *, const struct symprof *, const struct output_opts *),
		 const struct symprof *sp, const struct output_opts *opts, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int r;

	if (!f)
		abort();
	r = write(f, sp, opts);
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

/* Every id in the tables points inside its table. */
static void check_ids(const struct symprof *sp, bool real_locations)
{
	size_t i, j;

	for (i = 0; i < sp->sample_count; i++) {
		const struct sp_sample *s = &sp->samples[i];

		if (s->comm >= sp->string_count || s->label_set >= sp->label_set_count ||
		    s->stack >= sp->stack_count)
			abort();
	}
	for (i = 0; i < sp->stack_count; i++)
		if (sp->stacks[i].first + sp->stacks[i].count > sp->stack_location_count)
			abort();
	for (i = 0; i < sp->stack_location_count; i++)
		if ((real_locations && !sp->stack_locations[i]) ||
		    sp->stack_locations[i] >= sp->location_count)
			abort();
	for (i = 0; i < sp->location_count; i++) {
		const struct sp_location *l = &sp->locations[i];

		if (l->mapping >= sp->mapping_count ||
		    l->first_line + l->line_count > sp->line_count)
			abort();
		for (j = 0; j < l->line_count; j++)
			if (sp->lines[l->first_line + j].function >= sp->function_count)
				abort();
	}
	for (i = 0; i < sp->label_count; i++)
		if (sp->labels[i].key >= sp->string_count ||
		    sp->labels[i].value >= sp->string_count)
			abort();
}

/* Reads size bytes from an exact-size heap copy, so that ASan sees any overread. */
static struct symprof *read_copy(const struct fuzz_format *fmt, const void *data, size_t size,
				 char *err, size_t errlen)
{
	struct symprof *sp = symprof__new();
	void *copy = malloc(size ? size : 1);
	int r;

	if (!sp || !copy)
		abort();
	memcpy(copy, data, size);
	r = fmt->read(copy, size, sp, err, errlen);
	free(copy);
	if (r == -EINVAL &&
	    (strncmp(err, fmt->error_prefix, strlen(fmt->error_prefix)) || strchr(err, '\n')))
		abort();
	if (r && r != -EINVAL && r != -ENOMEM)
		abort();
	if (r) {
		symprof__free(sp);
		return NULL;
	}
	check_ids(sp, fmt->real_locations);
	return sp;
}

int fuzz_round_trip(const struct fuzz_format *fmt, const uint8_t *data, size_t size)
{
	struct symprof *sp, *again;
	char err[256], *out, *next;
	size_t len, next_len;
	int round;

	sp = read_copy(fmt, data, size, err, sizeof(err));
	if (!sp)
		return 0;
	if (fmt->also)
		fmt->also(sp);
	out = fuzz_write(fmt->write, sp, fmt->opts, &len);
	for (round = 0; out && round < fmt->rounds; round++) {
		again = read_copy(fmt, out, len, err, sizeof(err));
		if (!again) {
			fprintf(stderr, "the written profile does not read back: %s\n", err);
			abort();
		}
		if (symprof__total(again) != symprof__total(sp))
			abort();
		next = fuzz_write(fmt->write, again, fmt->opts, &next_len);
		symprof__free(again);
		if (!next)
			abort();
		if (round == fmt->rounds - 1 && (next_len != len || memcmp(next, out, len)))
			abort();
		free(out);
		out = next;
		len = next_len;
	}
	free(out);
	symprof__free(sp);
	return 0;
}
