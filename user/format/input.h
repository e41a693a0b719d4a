/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Readers of saved profiles (labelprof convert): labelprof's JSON, pprof and
 * OTLP, each into a symprof. The bytes are untrusted: a reader never
 * crashes, bounds everything it allocates by what the input can justify,
 * and on failure says what is wrong in err (one line, no trailing newline).
 */
#ifndef LABELPROF_INPUT_H
#define LABELPROF_INPUT_H

#include <stddef.h>

struct symprof;

enum input_format {
	INPUT_AUTO,  /* decided from the content */
	INPUT_JSON,  /* labelprof JSON (docs/json-format.md) */
	INPUT_PPROF, /* perftools.profiles.Profile, gzipped or not */
	INPUT_OTLP,  /* ExportProfilesServiceRequest, binary protobuf (gzipped or not) or JSON */
	INPUT_OTLP_JSON, /* the same in OTLP's JSON mapping */
	INPUT_OTLP_BINARY, /* binary protobuf only (no name: auto's first guess) */
};

/* "auto", "json", "pprof", "otlp", "otlp-json" to a format; -1 for an unknown name. */
int input__format_by_name(const char *name);

/*
 * Reads buf (len bytes) into a new symprof in *out. Returns 0, or -EINVAL
 * (malformed input; err says why) or -ENOMEM. Empty input is an error, and
 * so is input no reader takes: err then names what the bytes look like
 * ("empty file", "gzip data that is neither ...", "JSON but not ...").
 */
int input__read(const void *buf, size_t len, enum input_format format, struct symprof **out,
		char *err, size_t errlen);

/* The readers input__read dispatches to; each fills an empty sp. Same returns. */
int input__read_json(const void *buf, size_t len, struct symprof *sp, char *err, size_t errlen);
int input__read_pprof(const void *buf, size_t len, struct symprof *sp, char *err, size_t errlen);
int input__read_otlp(const void *buf, size_t len, struct symprof *sp, char *err, size_t errlen);
int input__read_otlp_json(const void *buf, size_t len, struct symprof *sp, char *err,
			  size_t errlen);
/* input__read_otlp with errors that start "name: " (the encoding it was transcoded from). */
int input__read_otlp_as(const void *buf, size_t len, const char *name, struct symprof *sp,
			char *err, size_t errlen);

#endif /* LABELPROF_INPUT_H */
