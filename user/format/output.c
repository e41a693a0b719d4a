// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The table of profile formats: names, kinds and writers. */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "lib/compiler.h"
#include "format/output.h"

static const struct format {
	const char *name;
	int (*write)(FILE *f, const struct symprof *sp, const struct output_opts *opts);
	bool binary;
} formats[OUTPUT_FORMAT_COUNT] = {
	[OUTPUT_JSON] = {"json", output__write_json, false},
	[OUTPUT_FOLDED] = {"folded", output__write_folded, false},
	[OUTPUT_REPORT] = {"report", output__write_report, false},
	[OUTPUT_PPROF] = {"pprof", output__write_pprof, true},
	[OUTPUT_OTLP] = {"otlp", output__write_otlp, true},
	[OUTPUT_OTLP_JSON] = {"otlp-json", output__write_otlp_json, false},
	[OUTPUT_HTML] = {"html", output__write_html, false},
};

/* File name endings that name a format; one that ends another comes first. */
static const struct extension {
	const char *suffix;
	enum output_format format;
} extensions[] = {
	{".pb.gz", OUTPUT_PPROF},   {".pprof", OUTPUT_PPROF}, {".otlp.json", OUTPUT_OTLP_JSON},
	{".otlp.pb", OUTPUT_OTLP},  {".otlp", OUTPUT_OTLP},   {".json", OUTPUT_JSON},
	{".folded", OUTPUT_FOLDED}, {".html", OUTPUT_HTML},
};

int output__format_by_path(const char *path)
{
	size_t i, len = strlen(path), n;

	for (i = 0; i < ARRAY_SIZE(extensions); i++) {
		n = strlen(extensions[i].suffix);
		if (len > n && !strcasecmp(path + len - n, extensions[i].suffix))
			return extensions[i].format;
	}
	return -1;
}

int output__extra_labels_by_names(const char *list)
{
	static const char *const names[] = {"pid", "tid", "comm", "thread_name"};
	const char *p = list;
	int bits = 0;
	size_t i, len;

	_Static_assert(OUTPUT_LABEL_THREAD_NAME == 1 << 3, "names follows the bits");
	while (*p) {
		len = strcspn(p, ",");
		for (i = 0; i < ARRAY_SIZE(names); i++)
			if (strlen(names[i]) == len && !strncmp(p, names[i], len))
				break;
		if (i == ARRAY_SIZE(names))
			return -1;
		bits |= 1 << i;
		p += len;
		if (*p)
			p++;
	}
	return bits;
}

int output__format_by_name(const char *name)
{
	int i;

	for (i = 0; i < OUTPUT_FORMAT_COUNT; i++)
		if (formats[i].name && !strcmp(name, formats[i].name))
			return i;
	return -1;
}

const char *output__format_name(enum output_format format)
{
	return format < OUTPUT_FORMAT_COUNT ? formats[format].name : NULL;
}

const char *output__format_names(void)
{
	static char names[128];
	size_t len = 0;
	int i;

	if (names[0])
		return names;
	for (i = 0; i < OUTPUT_FORMAT_COUNT; i++)
		if (formats[i].name)
			len += snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
					formats[i].name);
	return names;
}

bool output__format_is_binary(enum output_format format)
{
	return format < OUTPUT_FORMAT_COUNT && formats[format].binary;
}

int output__write(FILE *f, enum output_format format, const struct symprof *sp,
		  const struct output_opts *opts)
{
	static const struct output_opts defaults;

	if (format >= OUTPUT_FORMAT_COUNT || !formats[format].write)
		return -EINVAL;
	return formats[format].write(f, sp, opts ? opts : &defaults);
}
