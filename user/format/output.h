/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Text writers for a profile: folded stacks (flamegraph.pl input) and the
 * labelprof JSON format (docs/json-format.md). Label bytes, comm and symbol
 * names are untrusted byte strings: every writer escapes them losslessly, so
 * no byte can break a line or a document.
 */
#ifndef LABELPROF_OUTPUT_H
#define LABELPROF_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "labelprof.h"

struct symprof;

enum output_format {
	OUTPUT_JSON,
	OUTPUT_FOLDED,
	OUTPUT_REPORT,
	OUTPUT_PPROF,
	OUTPUT_OTLP,
	OUTPUT_OTLP_JSON,
	OUTPUT_HTML,
	OUTPUT_FORMAT_COUNT,
};

/* Labels added to every pprof/OTLP sample beside its custom labels (--pprof-labels). */
enum output_extra_labels {
	OUTPUT_LABEL_PID = 1 << 0,
	OUTPUT_LABEL_TID = 1 << 1,
	OUTPUT_LABEL_COMM = 1 << 2,	   /* the process's name */
	OUTPUT_LABEL_THREAD_NAME = 1 << 3, /* the thread's name */
};
/* The default: a sample's process survives a round trip through pprof. */
#define OUTPUT_LABELS_DEFAULT (OUTPUT_LABEL_PID | OUTPUT_LABEL_COMM)

struct output_opts {
	unsigned int extra_labels; /* enum output_extra_labels */
	/*
	 * Text views (folded, report, html) show a key with more distinct values
	 * than this as KEY=*, and say so; 0: never. Machine formats keep them.
	 */
	unsigned int max_label_values;
};

/* "pid,comm" and the like to enum output_extra_labels bits; -1 for an unknown name. */
int output__extra_labels_by_names(const char *list);
/* "json", "folded", ... to a format; returns -1 for an unknown name. */
int output__format_by_name(const char *name);
/*
 * The format a file name's ending names (case-insensitive): .pb.gz and
 * .pprof pprof, .otlp and .otlp.pb otlp, .otlp.json otlp-json, .json json,
 * .folded folded, .html html. -1 for any other name.
 */
int output__format_by_path(const char *path);
const char *output__format_name(enum output_format format);
/* The names, comma-separated, for help and error messages. */
const char *output__format_names(void);
/* Whether the format is binary (not for a terminal). */
bool output__format_is_binary(enum output_format format);

/* Writes sp in format; opts may be NULL. Returns 0 or -errno. */
int output__write(FILE *f, enum output_format format, const struct symprof *sp,
		  const struct output_opts *opts);

/*
 * Folded stacks, one line per (comm, label set, stack) summed over pids and
 * tids, sorted:
 *   comm;[k1=v1,k2=v2];root;...;leaf COUNT
 * Labels are sorted by key ("[]" when none); trace and span ids are left
 * out and a key with more than opts->max_label_values values is written
 * KEY=* (format/labelfold.h; a line on stderr says so). User frames come root first,
 * then kernel frames suffixed "_[k]" (leaf-most: the kernel runs on behalf
 * of the user frames). A frame is the function name, "[module+0xOFF]" when
 * only the module is known (basename without the brackets of a pseudo path
 * like "[vdso]"; OFF is the location's module_offset) or "[unknown]".
 * Inlined functions are frames of their own. A sample whose stack was
 * dropped by the profile's memory limit has the frame "[dropped]".
 *
 * comm is the thread's name, else (a profile read from pprof or OTLP, which
 * carry processes but not threads by default) the process's name.
 *
 * Escaping: in comm, label keys and values, function and module names, each
 * of the bytes ; \ 0x00-0x1f 0x7f, in label keys and values also , = [ ],
 * and every byte that is not part of valid UTF-8 is written as \xHH (two
 * lowercase hex digits). Every other byte is copied, spaces too (flamegraph.pl
 * and speedscope take the count after a line's last space). Decoding replaces
 * each \xHH with its byte; a ; in a line therefore always separates frames,
 * and , = [ ] in the label frame always delimit labels.
 */
int output__write_folded(FILE *f, const struct symprof *sp, const struct output_opts *opts);

/* The JSON document described in docs/json-format.md. */
int output__write_json(FILE *f, const struct symprof *sp, const struct output_opts *opts);

/*
 * A report for people: for every label key, the CPU share of each value (the
 * top ones; samples that do not set the key as "(not set)"; a folded key's
 * one value "*", under a line that says so; no trace or span ids) and the hottest
 * functions (self time; functions inlined into a function count as its own,
 * as in perf report) under each. Non-printable bytes are shown as \xHH.
 */
int output__write_report(FILE *f, const struct symprof *sp, const struct output_opts *opts);

/*
 * A gzipped perftools.profiles.Profile (docs/design.md section 5, proto/pprof/profile.proto).
 * Sample types samples/count and cpu/nanoseconds (count times the period);
 * period_type cpu/nanoseconds, period = the sampling period; time_nanos and
 * duration_nanos. Mapping, location and function ids are the symprof's;
 * a location's lines are innermost inlined function first; the kernel's
 * mapping is "[kernel.kallsyms]"; build ids are lowercase hex strings.
 *
 * Labels: every custom label is a string label. The extra labels come first:
 * pid and tid as numeric labels without unit (so that `go tool pprof
 * -tagfocus=pid=123`, which reads a number as a numeric filter, selects
 * them; 0, unknown, is left out), comm (the process's name, else its main
 * thread's, else its first sampled thread's) and thread_name as string labels. The
 * comment "labelprof extra labels: pid,comm" (OUTPUT_PPROF_EXTRA_LABELS and the
 * names) lists them: only then does a reader take a sample's first comm and
 * thread_name labels as those fields, so custom labels of the same names
 * survive. Samples that differ only in fields no chosen label shows are merged.
 *
 * Strings: Go tools want valid UTF-8, labels are bytes. In every string (label
 * keys and values, names, paths), backslash, bytes 0x00-0x1f and 0x7f,
 * and every byte that is not part of valid UTF-8 are written as \xHH (two
 * lowercase hex digits); every other byte is copied, so printable UTF-8
 * labels read as they are (-tagfocus=tenant=acme). Decoding replaces each
 * \xHH with its byte.
 *
 * A sample without frames gets one location (address 0, no mapping) in the
 * function OUTPUT_PPROF_NO_STACK: Go tools drop samples without locations.
 *
 * A runtime's frames are on one mapping of their own, named by the frame kind's
 * pprof_mapping (lib/frame_kind.h), over the range of their addresses (tokens,
 * not addresses): a pseudo path that tools show as the frames' binary and never
 * symbolize, as the kernel's; a reader takes the frames on it back as that
 * runtime's frames without a mapping.
 *
 * Not carried: sample status, pids/tids/thread names unless chosen, process
 * executables, counters (a comment sums them up), module_offset (readers
 * recompute it from the mapping: address - memory_start + file_offset) and
 * function_offset. A label whose value is empty has str = 0, which Go tools
 * do not show.
 *
 * A label's source (docs/design.md section 1), when not custom labels, is
 * its num_unit: FMT_LABEL_SOURCE_UNIT and the source's name (fmt.h). Go
 * tools read num_unit for numeric labels only, so it shows nowhere (a label
 * or comment per sample would be one more tag in -tags and the tag filters,
 * and a key can come from several sources). An empty value of another
 * source has str = 0 and that unit: the unit is what tells it from the
 * number 0 (Go tools show it as 0 with the unit).
 */
#define OUTPUT_PPROF_EXTRA_LABELS "labelprof extra labels: "
#define OUTPUT_PPROF_NO_STACK	  "[no stack]"
int output__write_pprof(FILE *f, const struct symprof *sp, const struct output_opts *opts);

/*
 * An OTLP ExportProfilesServiceRequest, binary protobuf (docs/design.md section 5,
 * proto/opentelemetry/, profiles v1development as of opentelemetry-proto
 * 1.10/1.11). One ResourceProfiles per process (resource attributes
 * host.name, process.pid, process.executable.name: the executable's
 * basename, else the process's name; process.executable.path), each with one
 * ScopeProfiles (scope "labelprof") holding one Profile: sample_type and
 * period_type cpu/nanoseconds, period = the sampling period, values = count
 * times the period (CPU nanoseconds, consistent with the sample type; with no
 * known period the sample type is samples/count and values are counts),
 * time_unix_nano, duration_nano and a 16-byte profile_id derived from the
 * profile (rewriting the same profile gives the same id).
 *
 * Dictionary: every table holds its zero value at index 0 and no duplicate;
 * samples are merged on {stack, set of attributes, link}. Custom labels are
 * string attributes; extra labels: tid as thread.id (int), thread_name as
 * thread.name (OpenTelemetry semantic conventions); pid and comm are the
 * resource's already. A custom label with the same key wins over an extra one.
 * Locations carry profile.frame.type (their frame kind's otlp_frame_type,
 * lib/frame_kind.h: "native", "kernel" or a runtime's); kernel frames in
 * no mapping get a "[kernel.kallsyms]" mapping; build ids are the mapping
 * attribute process.executable.build_id.gnu in lowercase hex; lines are
 * innermost inlined function first.
 *
 * Labels from an OpenTelemetry process context are resource attributes; the
 * reader gives every sample of the resource its attributes other than those
 * above as labels of that source.
 *
 * Trace labels become Links (user/format/otlp.h): trace_id and span_id in lowercase
 * hex (32 and 16 digits) are written as the Link only; Datadog's decimal
 * span-id and root-span-id give a Link whose trace_id holds root-span-id in
 * its low 64 bits (not the trace's real id), and stay attributes too.
 *
 * Strings are escaped as for pprof (above: \xHH for backslash, control bytes
 * and bytes outside valid UTF-8). Not carried: sample status, counters,
 * module_offset (readers recompute it from the mapping) and function_offset.
 */
int output__write_otlp(FILE *f, const struct symprof *sp, const struct output_opts *opts);

/*
 * The same request in OTLP's JSON mapping: lowerCamelCase field names, fields
 * with their default value left out, 64-bit integers as decimal strings,
 * trace_id, span_id and profile_id in lowercase hex, other bytes in base64.
 */
int output__write_otlp_json(FILE *f, const struct symprof *sp, const struct output_opts *opts);

/* One self-contained HTML page: flame graph, CPU by label value, label filter. */
int output__write_html(FILE *f, const struct symprof *sp, const struct output_opts *opts);

/*
 * The length of the valid UTF-8 sequence starting at s (n bytes available):
 * 1-4, or 0 if s[0] does not start one (overlong forms, surrogates and code
 * points past U+10FFFF are invalid, as in RFC 3629).
 */
static inline size_t output__utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* Second-byte ranges that exclude overlongs, surrogates and > U+10FFFF. */
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
		return 0;
	return len;
}

#endif /* LABELPROF_OUTPUT_H */
