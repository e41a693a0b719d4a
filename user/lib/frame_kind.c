// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "lib/frame_kind.h"

/*
 * pprof's mappings are pseudo paths, as "[kernel.kallsyms]": tools show them
 * as the frames' binary and never symbolize them. OTLP's frame types are
 * OpenTelemetry's values. The HTML kinds 3-5 are the page's own.
 */
const struct frame_kind_row frame_kinds[FRAME_KINDS] = {
	[FRAME_NATIVE] = {.name = "native",
			  .folded = "",
			  .report = "",
			  .otlp_frame_type = "native",
			  .html_kind = 0},
	[FRAME_KERNEL] = {.name = "kernel",
			  .folded = "_[k]",
			  .report = " [k]",
			  .otlp_frame_type = "kernel",
			  .html_kind = 1},
	[FRAME_PYTHON] = {.name = "python",
			  .json = "python",
			  .folded = "_[py]",
			  .report = " [py]",
			  .pprof_mapping = "[python]",
			  .otlp_frame_type = "cpython",
			  .html_kind = 2},
	[FRAME_JAVA] = {.name = "java",
			.json = "java",
			.folded = "_[j]",
			.report = " [java]",
			.pprof_mapping = "[java]",
			.otlp_frame_type = "jvm",
			.html_kind = 6},
	[FRAME_JS] = {.name = "js",
		      .json = "js",
		      .folded = "_[js]",
		      .report = " [js]",
		      .pprof_mapping = "[js]",
		      .otlp_frame_type = "v8js",
		      .html_kind = 7},
};

/* The row whose name at offset (a const char * field) is name. */
static bool find(size_t offset, const void *name, size_t len, enum frame_kind *kind)
{
	int k;

	for (k = 0; k < FRAME_KINDS; k++) {
		const char *s = *(const char *const *)((const char *)&frame_kinds[k] + offset);

		if (s && strlen(s) == len && !memcmp(s, name, len)) {
			*kind = k;
			return true;
		}
	}
	return false;
}

bool frame_kind__by_json(const void *name, size_t len, enum frame_kind *kind)
{
	return find(offsetof(struct frame_kind_row, json), name, len, kind);
}

bool frame_kind__by_pprof_mapping(const void *name, size_t len, enum frame_kind *kind)
{
	return find(offsetof(struct frame_kind_row, pprof_mapping), name, len, kind);
}

bool frame_kind__by_otlp_frame_type(const void *name, size_t len, enum frame_kind *kind)
{
	return find(offsetof(struct frame_kind_row, otlp_frame_type), name, len, kind);
}
