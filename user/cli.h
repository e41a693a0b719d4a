/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Helpers the labelprof commands share: argument parsing and output files. */
#ifndef LABELPROF_CLI_H
#define LABELPROF_CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

/* A decimal integer in [0, max], nothing else. Returns 0 or -EINVAL. */
int cli_parse_uint(const char *s, unsigned long long max, unsigned long long *out);

/*
 * A regular output file is written as a temporary file next to it and renamed
 * into place: no partial profile, and a symlink planted at the path is
 * replaced, never followed. Devices and pipes (/dev/null, a FIFO, and
 * /dev/stdout, a symlink owned by root) are written directly. Opened at start
 * so a bad destination fails before sampling.
 */
struct output_file {
	char tmp_path[PATH_MAX];
	const char *path;
	bool direct;
	FILE *f;
};

/* path NULL: standard output. Returns 0 or -errno. */
int output_file__open(struct output_file *of, const char *path);
/* Flushes, syncs and renames into place. Returns 0 or -errno (the temporary file is removed). */
int output_file__commit(struct output_file *of);
/* Discards what was written (no-op after commit). */
void output_file__abort(struct output_file *of);

#endif /* LABELPROF_CLI_H */
