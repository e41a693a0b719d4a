// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Which reader a saved profile needs, from its name or its first bytes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/compiler.h"
#include "format/input.h"
#include "profile/symprof.h"

static const char *const names[] = {
	[INPUT_AUTO] = "auto",
	[INPUT_JSON] = "json",
	[INPUT_PPROF] = "pprof",
	[INPUT_OTLP] = "otlp",
};

int input__format_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

/*
 * JSON starts with '{' (after white space). pprof and OTLP are both
 * protobuf, usually gzipped for pprof: the OTLP reader is tried first when
 * the first field is a length-delimited field 1 (resource_profiles), which
 * in a pprof Profile (sample_type) is just as plausible, so a failed OTLP
 * parse falls back to pprof.
 */
static int read_auto(const unsigned char *buf, size_t len, struct symprof **out, char *err,
		     size_t errlen)
{
	size_t i = 0;
	int ret;

	while (i < len && strchr(" \t\r\n", buf[i]))
		i++;
	if (i < len && buf[i] == '{')
		return input__read(buf, len, INPUT_JSON, out, err, errlen);
	ret = input__read(buf, len, INPUT_OTLP, out, err, errlen);
	if (ret != -EINVAL)
		return ret;
	ret = input__read(buf, len, INPUT_PPROF, out, err, errlen);
	if (ret == -EINVAL)
		snprintf(err, errlen, "not a labelprof JSON, pprof or OTLP profile");
	return ret;
}

int input__read(const void *buf, size_t len, enum input_format format, struct symprof **out,
		char *err, size_t errlen)
{
	int (*read)(const void *, size_t, struct symprof *, char *, size_t);
	struct symprof *sp;
	int ret;

	*out = NULL;
	switch (format) {
	case INPUT_AUTO:
		return read_auto(buf, len, out, err, errlen);
	case INPUT_JSON:
		read = input__read_json;
		break;
	case INPUT_PPROF:
		read = input__read_pprof;
		break;
	case INPUT_OTLP:
		read = input__read_otlp;
		break;
	default:
		snprintf(err, errlen, "unknown input format");
		return -EINVAL;
	}
	sp = symprof__new();
	if (!sp)
		return -ENOMEM;
	ret = read(buf, len, sp, err, errlen);
	if (!ret && symprof__error(sp))
		ret = symprof__error(sp);
	if (ret) {
		symprof__free(sp);
		return ret;
	}
	*out = sp;
	return 0;
}
