/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Helpers the labelprof commands share: argument parsing and output files. */
#ifndef LABELPROF_CLI_H
#define LABELPROF_CLI_H

#include <argp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "sampler.h"

#define CLI_MAX_PIDS 1024

/* What to sample and how: the options every sampling command shares. */
struct sampling_args {
	unsigned int freq_hz; /* set the command's default before parsing */
	enum lp_filter_mode filter_mode;
	pid_t pids[CLI_MAX_PIDS];
	size_t pid_count;
	const char *cgroup_path;
	bool all; /* -a given */
	bool read_labels;
	bool kernel_stacks;
	unsigned int max_labels;
	unsigned int max_key_len;
	unsigned int max_value_len;
	size_t ringbuf_bytes;
	bool verbose;
};

/*
 * The argp parser of struct sampling_args, to include as a child
 * (struct argp_child) whose input the parent sets in ARGP_KEY_INIT:
 * state->child_inputs[i] = &args.
 */
extern const struct argp sampling_argp;

/* sampler options from args (pids point into args). */
void sampling_args__sampler_opts(const struct sampling_args *args, struct sampler_opts *so);

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
