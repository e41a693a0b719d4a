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
#include <stdlib.h>
#include <string.h>

#include "format/input.h"
#include "roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *render(int (*write)(FILE *, const struct symprof *, const struct output_opts *),
		    const struct symprof *sp, size_t *len)
{
	char *buf = fuzz_write(write, sp, NULL, len);

	if (!buf)
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

static const struct fuzz_format json = {
	.read = input__read_json,
	.error_prefix = "line ",
	.write = output__write_json,
	.rounds = 1,
	.real_locations = true,
	.also = check_other_writers,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_round_trip(&json, data, size);
}
