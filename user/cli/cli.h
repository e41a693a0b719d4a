/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Helpers the labelprof commands share: argument parsing, target processes, output files. */
#ifndef LABELPROF_CLI_H
#define LABELPROF_CLI_H

#include <argp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "format/output.h"
#include "sampling/sampler.h"

#define CLI_MAX_PIDS 1024

/* What to sample and how: the options every sampling command shares. */
struct sampling_args {
	struct sampler_opts opts; /* SAMPLER_OPTS_INIT(the command's frequency) before parsing */
	pid_t pids[CLI_MAX_PIDS]; /* -p; parsing points opts.pids here */
	unsigned int seen_sources[CLI_MAX_PIDS]; /* sampling_args__note_sources */
	bool all;		  /* -a given */
	/* the caller runs sampler_opts__check itself (the agent: once its file is read) */
	bool defer_check;
};

/*
 * The argp parser of struct sampling_args, to include as a child
 * (struct argp_child) whose input the parent sets in ARGP_KEY_INIT:
 * state->child_inputs[i] = &args. Once every flag is read, a value out of
 * the sampler's bounds (sampler_opts__check) is a usage error naming its flag.
 */
extern const struct argp sampling_argp;

struct registry;
struct symprof;

/*
 * Notes which label sources (1 << enum lp_label_source) the samples of sp
 * of each -p process carried, into args->seen_sources: a run calls it on
 * what it sampled, once or at every refresh.
 */
void sampling_args__note_sources(struct sampling_args *args, const struct symprof *sp);

/*
 * At the end of a run, from what its samples carried (note_sources) rather
 * than what a process had mapped at the start (a label library may come with
 * dlopen later): says on stderr which -p processes published no labels of
 * their threads, pointing at labelprof inspect, and what the others published
 * instead (only an OpenTelemetry process context's resource attributes), or
 * that one is a kernel thread (kernel stacks only). A
 * process whose threads can publish labels (procs found where) but set none
 * while sampled is no warning. Nothing with --no-labels.
 */
void sampling_args__warn_unlabelled(const struct sampling_args *args, struct registry *registry);

/* Whether any -p pid still runs (cli_process_alive); false without -p. */
bool sampling_args__any_alive(const struct sampling_args *args);

/* Where and how a command writes a profile: the options record and convert share. */
struct output_args {
	/*
	 * --format; else the one -o's name says (output__format_by_path); else
	 * report on a terminal (standard output with no -o), else JSON. Both
	 * given must agree (a .json file may hold otlp-json).
	 */
	enum output_format format;
	bool format_given;
	struct output_opts opts;
	const char *path; /* -o; NULL: standard output */
};

/*
 * The argp parser of struct output_args (--format, -o/--output,
 * --pprof-labels), a child like sampling_argp; without a header, its options
 * are listed with the command's own.
 */
extern const struct argp output_argp;

/*
 * Refuses a binary format bound for a terminal (standard output with no -o),
 * saying so on stderr. Returns 0 or -ENOTTY (a usage error: exit status 2).
 */
int output_args__check(const struct output_args *args);

/* Text views fold a label key with more distinct values than this (--max-label-values). */
#define CLI_DEFAULT_MAX_LABEL_VALUES 100

/*
 * Which label keys a command keeps, and how many values of a key its text
 * views list (profile/labelsel.h): the options record, top and convert share.
 */
struct label_args {
	const char *keep;	 /* --labels: patterns; NULL: every key */
	const char *drop;	 /* --drop-labels: patterns; NULL: none */
	struct labelsel *sel;	 /* made from both once every flag is read; NULL: every key */
	unsigned int max_values; /* --max-label-values; 0: never fold */
};

/*
 * The argp parser of struct label_args, a child like sampling_argp. A bad
 * pattern list is a usage error naming its flag. The caller frees sel
 * (labelsel__free).
 */
extern const struct argp label_argp;

/* A decimal integer in [0, max], nothing else. Returns 0 or -EINVAL. */
int cli_parse_uint(const char *s, unsigned long long max, unsigned long long *out);
/* --unwind's names (auto, fp, cfi) into *mode: 0, or -EINVAL. */
int cli_parse_unwind(const char *s, enum lp_unwind_mode *mode);

/*
 * Whether pid still runs, from /proc/PID/stat: a process that is gone, a
 * zombie (exited, not reaped yet) or dead does not. A stat that cannot be
 * opened for another reason than ENOENT/ESRCH (hidepid=2, say) counts as
 * running.
 */
bool cli_process_alive(pid_t pid);

/*
 * A regular output file is written as a temporary file next to it and renamed
 * into place: no partial profile, and a symlink planted at the path is
 * replaced, never followed. Devices and pipes (/dev/null, a FIFO, and
 * /dev/stdout, a symlink owned by root) are written directly. Opened at start
 * so a bad destination fails before sampling.
 */
struct output_file {
	char tmp_path[PATH_MAX];
	char kept_path[PATH_MAX]; /* output_args__write's file when path failed */
	const char *path;
	bool direct;
	FILE *f;		  /* where to write: counts the bytes, passes them to sink */
	FILE *sink;		  /* standard output, the device or pipe, or the temporary file */
	unsigned long long bytes; /* written through f so far */
	int write_errno;	  /* the first write to sink that failed: why */
};

/* path NULL: standard output. Returns 0 or -errno. */
int output_file__open(struct output_file *of, const char *path);
/* Flushes, syncs and renames into place. Returns 0 or -errno (the temporary file is removed). */
int output_file__commit(struct output_file *of);
/* Discards what was written (no-op after commit). */
void output_file__abort(struct output_file *of);
/*
 * Writes sp in args' format to of (opened on args->path) and commits it.
 * When that fails, says why on stderr and, if -o was given, does not lose
 * the profile: it goes to a new file (named after args->path, same ending)
 * in $TMPDIR (else /tmp), else in the current directory, and stderr says
 * "wrote FILE (SIZE) instead", or that it is lost. Returns 0, or -errno of
 * the failure at args->path (kept or not: the command failed).
 */
int output_args__write(const struct output_args *args, struct output_file *of,
		       const struct symprof *sp);
/*
 * What was written where, as perf says it: "profile.json (247 KB)",
 * "<stdout> (812 bytes)". For "wrote ..." once committed.
 */
void output_file__describe(const struct output_file *of, char *buf, size_t len);

#endif /* LABELPROF_CLI_H */
