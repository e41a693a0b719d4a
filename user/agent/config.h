/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's settings (docs/agent.md): an INI file of "key = value" lines
 * (libinih), every key also a command-line flag (--key-name, '-' for '_';
 * the sampling keys are the sampling options -F, --cgroup, ...). Flags
 * override the file. Loading yields an immutable, reference-counted
 * configuration, so that the sender thread keeps its own reference across a
 * reload.
 */
#ifndef LABELPROF_AGENT_CONFIG_H
#define LABELPROF_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <linux/types.h>

#include "cli/cli.h"

enum agent_format {
	AGENT_FORMAT_PPROF = 1 << 0,
	AGENT_FORMAT_OTLP = 1 << 1,
};

struct agent_header {
	char *name;
	char *value;
};

#define AGENT_MAX_HEADERS 32

struct agent_config {
	struct sampling_args sampling;
	__u64 interval_ns;
	size_t max_profile_bytes;
	size_t symbol_memory; /* 0: the symbolizer's default */

	const char *output_dir;	   /* NULL: no files */
	unsigned int formats;	   /* enum agent_format bits, for output_dir */
	__u64 max_dir_bytes;	   /* 0: no limit */
	__u64 max_age_ns;	   /* 0: no limit */
	unsigned int extra_labels; /* enum output_extra_labels */
	const char *keep_labels;   /* key "labels" given patterns; NULL: every key */
	const char *drop_labels;   /* NULL: none */
	struct labelsel *labelsel; /* from both; NULL: every label (or not loaded yet) */

	const char *otlp_url; /* endpoint + /v1development/profiles; NULL: no push */
	bool otlp_gzip;
	struct agent_header headers[AGENT_MAX_HEADERS];
	size_t header_count;
	__u64 otlp_timeout_ns;
	__u64 retry_initial_ns;
	__u64 retry_max_ns;
	const char *spool_dir; /* NULL: spool in memory */
	__u64 max_spool_bytes;

	const char *metrics_listen; /* as written; NULL: no metrics endpoint */
	struct sockaddr_storage metrics_addr;
	socklen_t metrics_addr_len;

	const char *path; /* the configuration file; NULL: flags only */
	/* private */
	int refs;
	char **strings; /* every string above, owned */
	size_t string_count;
	char **argv; /* the flags, copied: sampling.cgroup_path may point here */
	int argc;
};

/*
 * Reads the defaults, then the file named by --config (if any), then the
 * flags of argv (argv[0] is the program name). Flag errors and --help end
 * the process (argp; status 2 for errors). Any other error returns NULL with
 * "FILE:LINE: key: what is wrong" in err.
 */
struct agent_config *agent_config__load(int argc, char **argv, char *err, size_t err_len);
/* The same from a string holding a file's text (named name in errors), no flags: for tests. */
struct agent_config *agent_config__parse_string(const char *text, const char *name, char *err,
						size_t err_len);
struct agent_config *agent_config__get(struct agent_config *c);
/* Drops a reference; the last one frees. NULL is fine. */
void agent_config__put(struct agent_config *c);

/* Whether the two configurations keep the same label keys. */
bool agent_config__same_labels(const struct agent_config *a, const struct agent_config *b);

/* Whether the two configurations sample the same way (else: a new session). */
bool agent_config__same_sampling(const struct agent_config *a, const struct agent_config *b);

/* Parsers for values, shared with the tests: 0 or -EINVAL. */
int agent_parse_duration(const char *s, __u64 *ns);
int agent_parse_size(const char *s, __u64 *bytes);
int agent_parse_bool(const char *s, bool *b);

#endif /* LABELPROF_AGENT_CONFIG_H */
