/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The test profile the pprof and OTLP writer/reader tests share: an
 * executable, a library and the kernel, with inlined lines, a location
 * without a mapping and one without lines; two label sets, one plain and
 * one with hostile bytes; and the helpers that write, gzip and print a
 * profile so that a round trip can be compared as text.
 */
#ifndef LABELPROF_TEST_PROFILE_FIXTURE_H
#define LABELPROF_TEST_PROFILE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "format/output.h"
#include "lib/compiler.h"
#include "profile/symprof.h"

#define PERIOD	   (1000000000ull / 99)
#define S(sp, lit) symprof__string(sp, lit, sizeof(lit) - 1)

struct fixture_ids {
	__u32 exe, libc, kernel;
	__u32 loc_inlined, loc_main, loc_libc, loc_kernel, loc_nomap, loc_nolines;
	__u32 st_full;	   /* kernel, libc, inlined, main */
	__u32 st_short;	   /* inlined, main */
	__u32 st_nomap;	   /* no mapping, no lines */
	__u32 set_plain;   /* tenant, endpoint */
	__u32 set_hostile; /* NULs, bytes that are not UTF-8, an empty value... */
};

static inline __u32 fixture_location(struct symprof *sp, __u32 mapping, __u64 address,
				     const struct sp_line *lines, size_t n)
{
	const struct sp_mapping *m = &sp->mappings[mapping];
	struct sp_location loc = {
		.mapping = mapping,
		.kernel = m->kernel,
		.address = address,
		/* what a reader can recompute from the mapping */
		.module_offset = !mapping    ? SP_UNKNOWN
				 : m->kernel ? address
					     : address - m->start + m->file_offset,
		.function_offset = SP_UNKNOWN,
	};

	return symprof__location(sp, &loc, lines, n);
}

static inline void fixture_sample(struct symprof *sp, __u32 pid, __u32 tid, __u32 comm, __u32 set,
				  __u32 stack, __u64 count)
{
	struct sp_sample s = {pid, tid, comm, set, stack, 0, count};

	assert_int_equal(symprof__add_sample(sp, &s), 0);
}

/*
 * A stack of a frame of each runtime's kind (JavaScript, Java, Python, leaf
 * first) called from main: as the symbolizer makes them, no mapping and a
 * token above the kernel's half for an address; locs[kind] is each one's
 * location.
 */
static inline __u32 fixture_runtime_stack(struct symprof *sp, const struct fixture_ids *ids,
					  __u32 locs[FRAME_JS + 1])
{
	static const char *const names[] = {
		[FRAME_PYTHON] = "burn", [FRAME_JAVA] = "Burn.spin", [FRAME_JS] = "spin"};
	static const char *const files[] = {[FRAME_PYTHON] = "/srv/pyburn.py",
					    [FRAME_JAVA] = "Burn.java",
					    [FRAME_JS] = "/srv/burn.js"};
	__u32 frames[FRAME_JS + 1], kind;

	for (kind = FRAME_PYTHON; kind <= FRAME_JS; kind++) {
		struct sp_function fn = {.name = symprof__cstring(sp, names[kind]),
					 .file = symprof__cstring(sp, files[kind])};
		struct sp_line line = {.function = symprof__function(sp, &fn), .line = 10 + kind};
		struct sp_location loc = {.kind = kind,
					  .address = 0xb000000000000000ull + 0x10 * kind,
					  .module_offset = SP_UNKNOWN,
					  .function_offset = SP_UNKNOWN};

		locs[kind] = frames[FRAME_JS - kind] = symprof__location(sp, &loc, &line, 1);
	}
	frames[FRAME_JS] = ids->loc_main;
	return symprof__stack(sp, frames, FRAME_JS + 1);
}

/* Fills an empty sp with the shared tables; libc_file is the library's file name. */
static inline void fixture_tables(struct symprof *sp, __u32 libc_file, struct fixture_ids *ids)
{
	static const unsigned char build_id[] = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x01};
	struct sp_mapping exe = {.start = 0x400000,
				 .limit = 0x401000,
				 .file_offset = 0x1000,
				 .file = S(sp, "/srv/app"),
				 .build_id = symprof__string(sp, build_id, sizeof(build_id))};
	struct sp_mapping libc = {
		.start = 0x7f0000000000, .limit = 0x7f0000100000, .file = libc_file};
	struct sp_mapping kernel = {.limit = SP_UNKNOWN,
				    .file = S(sp, "[kernel.kallsyms]"),
				    .build_id = S(sp, "\x12\x34"),
				    .kernel = true};
	struct sp_function main_fn = {
		.name = S(sp, "main"), .file = S(sp, "app.c"), .start_line = 10};
	struct sp_function inl = {.name = S(sp, "helper\\x41<\xc3\xa9\xff>"),
				  .system_name = S(sp, "_Z6helperv"),
				  .file = S(sp, "inc/help\x01.h"),
				  .start_line = 3};
	struct sp_function wr = {.name = S(sp, "__write")};
	struct sp_function ks = {.name = S(sp, "do_syscall_64")};
	struct sp_line lines[2];
	__u32 frames[4];
	struct sp_label plain[] = {{S(sp, "tenant"), S(sp, "acme"), LP_SRC_CUSTOM_LABELS},
				   {S(sp, "endpoint"), S(sp, "/checkout"), LP_SRC_CUSTOM_LABELS}};
	/*
	 * NULs, bytes that are not UTF-8, a backslash escape look-alike, empty
	 * values, of custom labels and of another source
	 */
	struct sp_label hostile[] = {
		{S(sp, "bin\0key"), S(sp, "\xff\xfe\0v"), LP_SRC_CUSTOM_LABELS},
		{S(sp, "k"), S(sp, "a\\x41\\"), LP_SRC_CUSTOM_LABELS},
		{S(sp, "ключ"), S(sp, "значение 🚀"), LP_SRC_CUSTOM_LABELS},
		{S(sp, "ctl"), S(sp, "line\nnext\t\x7f"), LP_SRC_CUSTOM_LABELS},
		{S(sp, "empty"), 0, LP_SRC_CUSTOM_LABELS},
		{S(sp, "empty_otel"), 0, LP_SRC_OTEL_THREAD},
		{S(sp, "otel"), S(sp, "v"), LP_SRC_OTEL_THREAD}};

	ids->exe = symprof__mapping(sp, &exe);
	ids->libc = symprof__mapping(sp, &libc);
	ids->kernel = symprof__mapping(sp, &kernel);
	lines[0] = (struct sp_line){symprof__function(sp, &inl), 5, 7};
	lines[1] = (struct sp_line){symprof__function(sp, &main_fn), 12, 0};
	ids->loc_inlined = fixture_location(sp, ids->exe, 0x400123, lines, 2);
	ids->loc_main = fixture_location(sp, ids->exe, 0x400456, lines + 1, 1);
	lines[0] = (struct sp_line){.function = symprof__function(sp, &wr)};
	ids->loc_libc = fixture_location(sp, ids->libc, 0x7f0000001234, lines, 1);
	lines[0] = (struct sp_line){.function = symprof__function(sp, &ks)};
	ids->loc_kernel = fixture_location(sp, ids->kernel, 0xffffffff81000010ull, lines, 1);
	ids->loc_nomap = fixture_location(sp, 0, 0x1234, NULL, 0);
	ids->loc_nolines = fixture_location(sp, ids->libc, 0x7f0000005678, NULL, 0);

	ids->set_plain = symprof__label_set(sp, plain, 2);
	ids->set_hostile = symprof__label_set(sp, hostile, ARRAY_SIZE(hostile));
	frames[0] = ids->loc_kernel;
	frames[1] = ids->loc_libc;
	frames[2] = ids->loc_inlined;
	frames[3] = ids->loc_main;
	ids->st_full = symprof__stack(sp, frames, 4);
	ids->st_short = symprof__stack(sp, frames + 2, 2);
	frames[0] = ids->loc_nomap;
	frames[1] = ids->loc_nolines;
	ids->st_nomap = symprof__stack(sp, frames, 2);

	sp->meta.frequency_hz = 99;
	sp->meta.period_ns = PERIOD;
	sp->meta.start_time_unix_ns = 1700000000123456789ull;
	sp->meta.duration_ns = 5000000000ull;
}

/* What write makes of sp with these extra labels; the writer must succeed. */
static inline unsigned char *
fixture_write(int (*write)(FILE *, const struct symprof *, const struct output_opts *),
	      const struct symprof *sp, unsigned int extra, size_t *len)
{
	struct output_opts opts = {.extra_labels = extra};
	char *out = NULL;
	FILE *f = open_memstream(&out, len);

	assert_non_null(f);
	assert_int_equal(write(f, sp, &opts), 0);
	assert_int_equal(fclose(f), 0);
	return (unsigned char *)out;
}

static inline unsigned char *fixture_gzip(const void *data, size_t len, size_t *out_len)
{
	unsigned char *out = malloc(len + 1024);
	z_stream z = {};

	assert_non_null(out);
	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (Bytef *)data;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = len + 1024;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

/* A byte string in quotes, bytes other than printable ASCII as \xHH. */
static inline void fixture_put_str(FILE *f, const struct symprof *sp, __u32 id)
{
	const struct sp_string *s = symprof__str(sp, id);
	size_t i;

	fputc('"', f);
	for (i = 0; i < s->len; i++)
		fprintf(f,
			s->bytes[i] > 0x20 && s->bytes[i] < 0x7f && s->bytes[i] != '\\' ? "%c"
											: "\\x%02x",
			s->bytes[i]);
	fputc('"', f);
}

static inline int fixture_str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

#endif /* LABELPROF_TEST_PROFILE_FIXTURE_H */
