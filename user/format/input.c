// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which reader a saved profile needs, from its name or its first bytes, and
 * what input no reader takes looks like, so that the error names it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/compiler.h"
#include "format/input.h"
#include "format/json.h"
#include "format/output.h"
#include "profile/symprof.h"

static const char *const names[] = {
	[INPUT_AUTO] = "auto",	 [INPUT_JSON] = "json", [INPUT_PPROF] = "pprof",
	[INPUT_OTLP] = "otlp",	 [INPUT_OTLP_JSON] = "otlp-json",
};

int input__format_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

static size_t skip_space(const unsigned char *buf, size_t len)
{
	size_t i = 0;

	while (i < len && strchr(" \t\r\n", buf[i]))
		i++;
	return i;
}

static bool key_is(const struct json *j, const char *key)
{
	return j->str_len == strlen(key) && !memcmp(j->str, key, j->str_len);
}

/*
 * A JSON document's kind from its top-level keys: labelprof's has "format",
 * OTLP's "resourceProfiles" or "dictionary" (either spelling). INPUT_AUTO
 * for neither, with err saying so.
 */
static enum input_format json_kind(const unsigned char *buf, size_t len, char *err,
				   size_t errlen)
{
	static const char *const otlp_keys[] = {"resourceProfiles", "resource_profiles",
						"dictionary"};
	char syntax[200] = "";
	struct json j = {.buf = buf, .len = len, .err = syntax, .errlen = sizeof(syntax)};
	enum input_format kind = INPUT_AUTO;
	bool first = true;
	size_t i;
	int r;

	r = json__begin(&j, "the document", '{');
	while (!r && kind == INPUT_AUTO && (r = json__next_member(&j, &first)) > 0) {
		if (key_is(&j, "format"))
			kind = INPUT_JSON;
		for (i = 0; i < ARRAY_SIZE(otlp_keys); i++)
			if (key_is(&j, otlp_keys[i]))
				kind = INPUT_OTLP_JSON;
		if (kind == INPUT_AUTO)
			r = json__skip(&j);
	}
	free(j.str);
	if (kind != INPUT_AUTO)
		return kind;
	if (r < 0)
		snprintf(err, errlen, "JSON with an error and no sign of a labelprof or OTLP "
				      "document: %s", syntax);
	else
		snprintf(err, errlen, "JSON but not a labelprof or OTLP document (no \"format\" "
				      "or \"resourceProfiles\" key)");
	return INPUT_AUTO;
}

/* Whether the first bytes are text: UTF-8 without control bytes other than white space. */
static bool looks_like_text(const unsigned char *buf, size_t len)
{
	size_t i = 0, n, end = len < 4096 ? len : 4096;

	while (i < end) {
		if (buf[i] < 0x20 && !strchr("\t\r\n", buf[i]))
			return false;
		n = output__utf8_len(buf + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

/* Whether the first line is a folded stack: "...;... COUNT". */
static bool looks_folded(const unsigned char *buf, size_t len)
{
	const unsigned char *nl = memchr(buf, '\n', len), *p;
	size_t n = nl ? (size_t)(nl - buf) : len;

	p = buf + n;
	while (p > buf && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return p < buf + n && p > buf && p[-1] == ' ' && memchr(buf, ';', n);
}

/*
 * What bytes that no binary reader took look like; why each reader refused
 * them is in refused ("pprof: ...; otlp: ...").
 */
static void describe(const unsigned char *buf, size_t len, const char *refused, char *err,
		     size_t errlen)
{
	size_t i = skip_space(buf, len), n;

	if (len >= 4 && !memcmp(buf, "\x7f" "ELF", 4)) {
		snprintf(err, errlen, "an ELF file, not a profile");
	} else if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		snprintf(err, errlen, "gzip data that is neither a pprof nor an OTLP profile (%s)",
			 refused);
	} else if (!looks_like_text(buf, len)) {
		snprintf(err, errlen,
			 "binary data that is neither a pprof nor an OTLP profile (%s)", refused);
	} else if (looks_folded(buf + i, len - i)) {
		snprintf(err, errlen,
			 "folded stacks, which labelprof writes but does not read (convert the "
			 "json, pprof or OTLP profile they came from)");
	} else if (buf[i] == '<') {
		snprintf(err, errlen, "HTML or XML text, not a profile (labelprof reads json, "
				      "pprof, otlp and otlp-json)");
	} else if (buf[i] == '[') {
		snprintf(err, errlen, "a JSON array, not a labelprof or OTLP document");
	} else {
		n = strcspn((const char *)buf + i, "\n");
		snprintf(err, errlen, "text that is not a profile (it starts \"%.*s\")",
			 (int)(n < 40 ? n : 40), buf + i);
	}
}

/*
 * JSON starts with '{' (after white space): its keys say whose. pprof and
 * OTLP are both protobuf, gzipped or not: OTLP is tried first, and as the
 * first field of either is a length-delimited field 1 (resource_profiles,
 * sample_type), a failed OTLP parse falls back to pprof. Protobuf can start
 * like JSON too ("\n{": field 1 of 123 bytes), so JSON whose keys are not
 * found is tried as protobuf before it is called neither.
 */
static int read_auto(const unsigned char *buf, size_t len, struct symprof **out, char *err,
		     size_t errlen)
{
	char otlp_err[200] = "", pprof_err[200] = "", refused[420], json_err[300] = "";
	size_t i = skip_space(buf, len);
	enum input_format kind;
	int ret;

	if (buf[i] == '{') {
		kind = json_kind(buf, len, json_err, sizeof(json_err));
		if (kind != INPUT_AUTO)
			return input__read(buf, len, kind, out, err, errlen);
	}
	ret = input__read(buf, len, INPUT_OTLP_BINARY, out, otlp_err, sizeof(otlp_err));
	if (ret != -EINVAL)
		return ret;
	ret = input__read(buf, len, INPUT_PPROF, out, pprof_err, sizeof(pprof_err));
	if (ret != -EINVAL)
		return ret;
	snprintf(refused, sizeof(refused), "%s; %s", pprof_err, otlp_err);
	if (json_err[0])
		snprintf(err, errlen, "%s", json_err);
	else
		describe(buf, len, refused, err, errlen);
	return -EINVAL;
}

/* A reader refused JSON of the other kind: err says what the input is. */
static void hint_other_json(const unsigned char *buf, size_t len, size_t start,
			    enum input_format format, char *err, size_t errlen)
{
	enum input_format kind = buf[start] == '{' ? json_kind(buf, len, NULL, 0) : INPUT_AUTO;
	size_t n = strlen(err);

	if (kind == INPUT_JSON && format != INPUT_JSON)
		snprintf(err + n, errlen - n, " (the input is labelprof JSON)");
	else if (kind == INPUT_OTLP_JSON && format != INPUT_OTLP && format != INPUT_OTLP_JSON)
		snprintf(err + n, errlen - n, " (the input is OTLP JSON)");
}

int input__read(const void *buf, size_t len, enum input_format format, struct symprof **out,
		char *err, size_t errlen)
{
	int (*read)(const void *, size_t, struct symprof *, char *, size_t);
	size_t start = skip_space(buf, len);
	struct symprof *sp;
	int ret;

	*out = NULL;
	if (!len || start == len) {
		snprintf(err, errlen, len ? "only white space, no profile" : "empty file");
		return -EINVAL;
	}
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
		/* either encoding, as the keys say (see read_auto) */
		read = ((const unsigned char *)buf)[start] == '{' &&
				       json_kind(buf, len, NULL, 0) == INPUT_OTLP_JSON
			       ? input__read_otlp_json
			       : input__read_otlp;
		break;
	case INPUT_OTLP_BINARY:
		read = input__read_otlp;
		break;
	case INPUT_OTLP_JSON:
		read = input__read_otlp_json;
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
	if (ret == -EINVAL && errlen)
		hint_other_json(buf, len, start, format, err, errlen);
	if (ret) {
		symprof__free(sp);
		return ret;
	}
	*out = sp;
	return 0;
}
