// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fuzzes the JSON reader: the input is a document. A document it accepts is
 * written again with the JSON writer, and that must read back and write the
 * same bytes (writing what was read is a fixed point). A refused document
 * must come with a one-line "line L column C: ..." error. What was read also
 * goes through the other text writers (folded, report, html), whose escaping
 * of hostile label bytes is checked: no raw control byte, and no markup
 * breaking out of the html page's data.
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

static char *write_json(const struct symprof *sp, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	if (output__write_json(f, sp, NULL))
		abort();
	if (fclose(f))
		abort();
	return buf;
}

/* Reads size bytes from an exact-size heap copy, so that ASan sees any overread. */
static struct symprof *read_json(const void *data, size_t size, char *err, size_t errlen)
{
	struct symprof *sp = symprof__new();
	void *copy = malloc(size ? size : 1);
	int r;

	if (!sp || !copy)
		abort();
	memcpy(copy, data, size);
	r = input__read_json(copy, size, sp, err, errlen);
	free(copy);
	if (r == -EINVAL && (strncmp(err, "line ", 5) || strchr(err, '\n')))
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

	for (i = 0; i < sp->sample_count; i++) {
		const struct sp_sample *s = &sp->samples[i];

		if (s->comm >= sp->string_count || s->label_set >= sp->label_set_count ||
		    s->stack >= sp->stack_count)
			abort();
	}
	for (i = 0; i < sp->stack_count; i++)
		for (j = 0; j < sp->stacks[i].count; j++)
			if (sp->stack_locations[sp->stacks[i].first + j] >= sp->location_count)
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

static char *render(int (*write)(FILE *, const struct symprof *, const struct output_opts *),
		    const struct symprof *sp, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	if (write(f, sp, NULL))
		abort();
	if (fclose(f))
		abort();
	return buf;
}

/* No byte below 0x20 but newline (and tab in the report's layout), no DEL. */
static void check_text(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\n' && s[i] != '\t') || s[i] == 0x7f)
			abort();
}

static void check_other_writers(const struct symprof *sp)
{
	size_t len;
	char *out;

	out = render(output__write_folded, sp, &len);
	check_text(out, len);
	free(out);
	out = render(output__write_report, sp, &len);
	check_text(out, len);
	free(out);
	out = render(output__write_html, sp, &len);
	/* the page has exactly its own two scripts, whatever the labels hold */
	if (!memmem(out, len, "</html>", 7) || memmem(out, len, "<script", 7) == NULL)
		abort();
	{
		size_t n = 0;
		const char *p = out, *end = out + len;

		while ((p = memmem(p, end - p, "</script", 8))) {
			n++;
			p += 8;
		}
		if (n != 2)
			abort();
	}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symprof *sp, *again;
	char err[256], *doc, *doc2;
	size_t len, len2;

	sp = read_json(data, size, err, sizeof(err));
	if (!sp)
		return 0;
	check_ids(sp);
	check_other_writers(sp);
	doc = write_json(sp, &len);
	again = read_json(doc, len, err, sizeof(err));
	if (!again) {
		fprintf(stderr, "the written document does not read back: %s\n", err);
		abort();
	}
	doc2 = write_json(again, &len2);
	if (len != len2 || memcmp(doc, doc2, len))
		abort();
	free(doc);
	free(doc2);
	symprof__free(again);
	symprof__free(sp);
	return 0;
}
