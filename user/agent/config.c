// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's settings: INI file and flags (config.h, docs/agent.md). */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ini.h>

#include "lib/compiler.h"
#include "agent/config_int.h"
#include "format/output.h"
#include "profile/labelsel.h"

#define OFF(field) offsetof(struct agent_config, field)

static const struct key_def keys[] = {
	{"interval", T_DURATION, OFF(interval_ns), S, DAY, "DURATION",
	 "One profile per interval (default 60s)"},
	{"output_dir", T_PATH, OFF(output_dir), 0, 0, "DIR", "Write the profiles here"},
	{"formats", T_FORMATS, OFF(formats), 0, 0, "LIST",
	 "Formats of the files: pprof (default), otlp, or pprof,otlp"},
	{"max_dir_bytes", T_BYTES, OFF(max_dir_bytes), 0, UINT64_MAX, "BYTES",
	 "Remove the oldest files past this total (default 1G; 0: no limit)"},
	{"max_age", T_DURATION, OFF(max_age_ns), 0, 3650 * DAY, "DURATION",
	 "Remove files older than this (default 7d; 0: no limit)"},
	{"pprof_labels", T_LABELS, OFF(extra_labels), 0, 0, "LIST",
	 "Also label samples with these: pid, tid, comm, thread_name (default pid,comm; \"\" for "
	 "none)"},
	{"otlp_endpoint", T_ENDPOINT, OFF(otlp_url), 0, 0, "URL",
	 "Push every profile to this OTLP/HTTP endpoint (e.g. http://127.0.0.1:4318)"},
	{"otlp_gzip", T_BOOL, OFF(otlp_gzip), 0, 0, "BOOL", "Compress requests (default true)"},
	{"otlp_headers", T_HEADERS, OFF(headers), 0, 0, "LIST",
	 "Request headers: Name=value,Name2=value2 (values may be %-encoded)"},
	{"otlp_timeout", T_DURATION, OFF(otlp_timeout_ns), 100 * MS, 600 * S, "DURATION",
	 "Give up on a request after this (default 10s)"},
	{"otlp_retry_initial", T_DURATION, OFF(retry_initial_ns), 10 * MS, DAY, "DURATION",
	 "First retry delay, doubled after every failure (default 1s)"},
	{"otlp_retry_max", T_DURATION, OFF(retry_max_ns), 10 * MS, DAY, "DURATION",
	 "Longest retry delay (default 60s)"},
	{"spool_dir", T_PATH, OFF(spool_dir), 0, 0, "DIR",
	 "Keep undelivered profiles here (default: in memory)"},
	{"max_spool_bytes", T_BYTES, OFF(max_spool_bytes), 4096, UINT64_MAX, "BYTES",
	 "Drop the oldest undelivered profiles past this (default 64M)"},
	{"metrics_listen", T_LISTEN, OFF(metrics_listen), 0, 0, "ADDR:PORT",
	 "Serve Prometheus metrics on http://ADDR:PORT/metrics (default: off)"},
	{"max_profile_bytes", T_SIZE, OFF(max_profile_bytes), 1 << 20, 1ull << 40, "BYTES",
	 "Memory for one interval's profile (default 64M)"},
	{"symbol_memory", T_SIZE, OFF(symbol_memory), 1 << 20, 1ull << 40, "BYTES",
	 "Memory for symbol tables, DWARF and source lines (default 24M): less keeps fewer "
	 "line tables of big libraries, which are then read again when needed"},
	/*
	 * The sampling options: flags from sampling_argp. The numbers' bounds are
	 * sampler_opts__check's; min and max here are their types'.
	 */
	{"freq", T_UINT, OFF(sampling.opts.freq_hz), 0, UINT_MAX, NULL, NULL},
	{"cgroup", T_CGROUP, OFF(sampling.opts.cgroup_path), 0, 0, NULL, NULL},
	{"labels", T_KEEP_LABELS, OFF(keep_labels), 0, 0, "KEY[,KEY...]",
	 "Keep only the labels with these keys (glob patterns); true or false: whether to read "
	 "labels at all (false: as --no-labels)"},
	{"drop_labels", T_DROP_LABELS, OFF(drop_labels), 0, 0, "KEY[,KEY...]",
	 "Leave out the labels with these keys (glob patterns: 'request_id,*_id')"},
	{"kernel_stacks", T_BOOL, OFF(sampling.opts.kernel_stacks), 0, 0, NULL, NULL},
	{"max_labels", T_UINT, OFF(sampling.opts.max_labels), 0, UINT_MAX, NULL, NULL},
	{"max_key_len", T_UINT, OFF(sampling.opts.max_key_len), 0, UINT_MAX, NULL, NULL},
	{"max_value_len", T_UINT, OFF(sampling.opts.max_value_len), 0, UINT_MAX, NULL, NULL},
	{"ringbuf_size", T_SIZE, OFF(sampling.opts.ringbuf_bytes), 0, SIZE_MAX, NULL, NULL},
	{"unwind", T_UNWIND, OFF(sampling.opts.unwind_mode), 0, 0, NULL, NULL},
	{"unwind_memory", T_UINT, OFF(sampling.opts.unwind_memory_mib), 0, UINT_MAX, NULL, NULL},
	{"verbose", T_BOOL, OFF(sampling.opts.verbose), 0, 0, NULL, NULL},
};

#define KEY_COUNT  ARRAY_SIZE(keys)
#define OPT_CONFIG 'c'
#define OPT_KEY0   0x2000

static const struct key_def *key_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < KEY_COUNT; i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

/* A key's flag, or a flag's key: src with from as to, in dst of len bytes. */
static void respell(char *dst, size_t len, const char *src, char from, char to)
{
	size_t i;

	for (i = 0; src[i] && i < len - 1; i++)
		dst[i] = src[i] == from ? to : src[i];
	dst[i] = '\0';
}

/* The key of an option sampler_opts__check names: its flag's, "--max-labels": max_labels. */
static const struct key_def *key_by_opt(enum sampler_opt opt)
{
	char name[32];

	respell(name, sizeof(name), sampler_opt__flag(opt) + 2, '-', '_');
	return key_by_name(name);
}

static struct agent_config *config_new(void)
{
	struct agent_config *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->refs = 1;
	c->sampling.opts = (struct sampler_opts)SAMPLER_OPTS_INIT(SAMPLER_AGENT_FREQ_HZ);
	c->interval_ns = 60 * S;
	c->max_profile_bytes = 64 << 20;
	c->formats = AGENT_FORMAT_PPROF;
	c->max_dir_bytes = 1ull << 30;
	c->max_age_ns = 7 * DAY;
	c->otlp_gzip = true;
	c->extra_labels = OUTPUT_LABELS_DEFAULT;
	c->otlp_timeout_ns = 10 * S;
	c->retry_initial_ns = S;
	c->retry_max_ns = 60 * S;
	c->max_spool_bytes = 64 << 20;
	return c;
}

struct agent_config *agent_config__get(struct agent_config *c)
{
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
	return c;
}

void agent_config__put(struct agent_config *c)
{
	size_t i;

	if (!c || __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (i = 0; i < c->string_count; i++)
		free(c->strings[i]);
	free(c->strings);
	for (i = 0; c->argv && i < (size_t)c->argc; i++)
		free(c->argv[i]);
	free(c->argv);
	labelsel__free(c->labelsel);
	free(c);
}

/* ---- the file ------------------------------------------------------------ */

struct file_ctx {
	struct agent_config *c;
	FILE *f;
	char *line_buf;
	size_t line_cap;
	int line; /* lines handed to inih so far: the current line */
	int set_on[KEY_COUNT];
	int err_line; /* first error found here; 0: none */
	char msg[384];
};

static void file_error(struct file_ctx *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void file_error(struct file_ctx *x, const char *fmt, ...)
{
	va_list ap;

	if (x->err_line)
		return;
	x->err_line = x->line;
	va_start(ap, fmt);
	vsnprintf(x->msg, sizeof(x->msg), fmt, ap);
	va_end(ap);
}

/* inih's reader: counts lines, and refuses what inih would silently misread. */
static char *read_line(char *str, int num, void *stream)
{
	struct file_ctx *x = stream;
	ssize_t n = getline(&x->line_buf, &x->line_cap, x->f);

	if (n < 0)
		return NULL;
	x->line++;
	if (n >= num) {
		/* inih would cut the line and read the rest as another line */
		file_error(x, "line longer than %d bytes", num - 2);
		n = 0;
	} else if (n > 0 && (x->line_buf[0] == ' ' || x->line_buf[0] == '\t') &&
		   x->line_buf[strspn(x->line_buf, " \t\r\n")] &&
		   !strchr(";#", x->line_buf[strspn(x->line_buf, " \t")])) {
		/* inih would append it to the previous value */
		file_error(x, "indented line (continuation lines are not supported)");
	}
	memcpy(str, x->line_buf, n);
	str[n] = '\0';
	return str;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct file_ctx *x = user;
	const struct key_def *k = key_by_name(name);
	char why[256];
	int err;

	if (*section) {
		file_error(x, "%s: sections are not used (found [%s])", name, section);
		return 0;
	}
	if (!k) {
		file_error(x, "unknown key '%s'", name);
		return 0;
	}
	if (x->set_on[k - keys]) {
		file_error(x, "%s: set twice (first on line %d)", name, x->set_on[k - keys]);
		return 0;
	}
	x->set_on[k - keys] = x->line;
	err = agent_config__set_key(x->c, k, value, why, sizeof(why));
	if (err) {
		file_error(x, "%s: %s", name, err == -ENOMEM ? "out of memory" : why);
		return 0;
	}
	return 1;
}

static int parse_file(struct agent_config *c, FILE *f, const char *name, char *err, size_t err_len)
{
	struct file_ctx x = {.c = c, .f = f};
	int line = ini_parse_stream(read_line, &x, on_key, &x);
	const struct key_def *k;
	enum sampler_opt bad;
	char why[160];

	free(x.line_buf);
	if (line == -2) {
		snprintf(err, err_len, "%s: out of memory", name);
		return -ENOMEM;
	}
	if (ferror(f)) {
		snprintf(err, err_len, "%s: cannot read: %s", name, strerror(errno));
		return -EIO;
	}
	if (x.err_line && (line <= 0 || x.err_line <= line)) {
		snprintf(err, err_len, "%s:%d: %s", name, x.err_line, x.msg);
		return -EINVAL;
	}
	if (line > 0) {
		snprintf(err, err_len, "%s:%d: syntax error (expected 'key = value')", name, line);
		return -EINVAL;
	}
	/* the file on its own, with the defaults: the label limits are bounded together */
	if (sampler_opts__check(&c->sampling.opts, &bad, why, sizeof(why))) {
		k = key_by_opt(bad);
		snprintf(err, err_len, "%s:%d: %s: %s", name, x.set_on[k - keys], k->name, why);
		return -EINVAL;
	}
	return 0;
}

/* What no single key can check. */
static int validate(struct agent_config *c, char *err, size_t err_len)
{
	const char *name = c->path ? c->path : "", *sep = c->path ? ": " : "";
	enum sampler_opt bad;
	char why[160];
	bool bad_drop;

	if (!c->output_dir && !c->otlp_url) {
		/* in the words of where the settings came from: the file, else the flags */
		if (c->path)
			snprintf(err, err_len,
				 "%s: nothing to do: set output_dir or otlp_endpoint (or give "
				 "--output-dir or --otlp-endpoint)",
				 name);
		else
			snprintf(err, err_len,
				 "nothing to do: give --output-dir DIR or --otlp-endpoint URL (or "
				 "a --config file that sets output_dir or otlp_endpoint)");
		return -EINVAL;
	}
	if (c->keep_labels || c->drop_labels) {
		/* each list passed on its own: only memory can fail */
		c->labelsel =
			labelsel__new(c->keep_labels, c->drop_labels, &bad_drop, err, err_len);
		if (!c->labelsel)
			return -ENOMEM;
	}
	if (c->retry_initial_ns > c->retry_max_ns) {
		snprintf(err, err_len, "%s%sotlp_retry_initial is longer than otlp_retry_max", name,
			 sep);
		return -EINVAL;
	}
	/* the file and the flags passed on their own, so together they break a joint bound */
	if (sampler_opts__check(&c->sampling.opts, &bad, why, sizeof(why))) {
		snprintf(err, err_len, "%s%swith the flags: %s: %s", name, sep,
			 key_by_opt(bad)->name, why);
		return -EINVAL;
	}
	return 0;
}

struct agent_config *agent_config__parse_string(const char *text, const char *name, char *err,
						size_t err_len)
{
	struct agent_config *c = config_new();
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	if (!c || !f) {
		snprintf(err, err_len, "out of memory");
		goto out_free;
	}
	if (parse_file(c, f, name, err, err_len))
		goto out_free;
	fclose(f);
	return c;

out_free:
	if (f)
		fclose(f);
	agent_config__put(c);
	return NULL;
}

/* ---- the flags ----------------------------------------------------------- */

static struct argp_option options[KEY_COUNT + 2];
static char option_names[KEY_COUNT][32]; /* the keys' names, '-' for '_' */

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct agent_config *c = state->input;
	const struct key_def *k;
	char why[256];
	int err;

	if (key == ARGP_KEY_INIT) {
		state->child_inputs[0] = &c->sampling;
		return 0;
	}
	if (key == OPT_CONFIG) {
		c->path = agent_config__own(c, arg, strlen(arg));
		if (!c->path)
			argp_failure(state, 1, ENOMEM, "--config");
		return 0;
	}
	if (key < OPT_KEY0 || key >= OPT_KEY0 + (int)KEY_COUNT)
		return ARGP_ERR_UNKNOWN;
	k = &keys[key - OPT_KEY0];
	err = agent_config__set_key(c, k, arg, why, sizeof(why));
	if (err == -ENOMEM)
		argp_failure(state, 1, ENOMEM, "--%s", option_names[k - keys]);
	if (err)
		argp_error(state, "--%s: %s", option_names[k - keys], why);
	return 0;
}

static const struct argp *agent_argp(void)
{
	static const struct argp_child children[] = {
		{&sampling_argp, 0, "What to sample:", 1},
		{},
	};
	static const struct argp argp = {
		.options = options,
		.parser = parse_opt,
		.doc = "Continuous profiling: samples CPU stacks with their labels, writes one "
		       "profile per interval to a directory and/or pushes it to an OTLP/HTTP "
		       "endpoint, serves Prometheus metrics. Settings come from the --config "
		       "file (docs/agent.md); every setting is also a flag, which wins over the "
		       "file. SIGHUP reloads the file.",
		.children = children,
	};
	size_t i, n = 0;

	if (options[0].name)
		return &argp;
	options[n++] = (struct argp_option){
		"config", OPT_CONFIG, "FILE", 0, "Read the settings from this INI file", 0};
	for (i = 0; i < KEY_COUNT; i++) {
		if (!keys[i].arg)
			continue;
		respell(option_names[i], sizeof(option_names[i]), keys[i].name, '_', '-');
		options[n++] = (struct argp_option){
			option_names[i], OPT_KEY0 + i, keys[i].arg, 0, keys[i].doc, 0};
	}
	return &argp;
}

static char **copy_argv(int argc, char **argv)
{
	char **copy = calloc(argc + 1, sizeof(*copy));
	int i;

	for (i = 0; copy && i < argc; i++) {
		copy[i] = strdup(argv[i]);
		if (!copy[i]) {
			while (i--)
				free(copy[i]);
			free(copy);
			return NULL;
		}
	}
	return copy;
}

/* Applies the flags to c; the copy of argv they point into is kept by c. */
static int parse_flags(struct agent_config *c, int argc, char **argv)
{
	c->argv = copy_argv(argc, argv);
	if (!c->argv)
		return -ENOMEM;
	c->argc = argc;
	argp_err_exit_status = 2;
	return argp_parse(agent_argp(), argc, c->argv, 0, NULL, c) ? -EINVAL : 0;
}

struct agent_config *agent_config__load(int argc, char **argv, char *err, size_t err_len)
{
	struct agent_config *flags = config_new(), *c = config_new();
	FILE *f = NULL;

	if (!flags || !c) {
		snprintf(err, err_len, "out of memory");
		goto out_free;
	}
	/* the flags first on their own: to find the file, and to check them */
	if (parse_flags(flags, argc, argv)) {
		snprintf(err, err_len, "cannot parse the command line");
		goto out_free;
	}
	if (flags->path) {
		f = fopen(flags->path, "re");
		if (!f) {
			snprintf(err, err_len, "cannot read %s: %s", flags->path, strerror(errno));
			goto out_free;
		}
		if (parse_file(c, f, flags->path, err, err_len))
			goto out_free;
	}
	/*
	 * The flags alone passed sampler_opts__check; with the file's values
	 * validate() checks them, an error that must not end a reload.
	 */
	c->sampling.defer_check = true;
	if (parse_flags(c, argc, argv)) {
		snprintf(err, err_len, "cannot parse the command line");
		goto out_free;
	}
	if (validate(c, err, err_len))
		goto out_free;
	if (f)
		fclose(f);
	agent_config__put(flags);
	return c;

out_free:
	if (f)
		fclose(f);
	agent_config__put(flags);
	agent_config__put(c);
	return NULL;
}

static bool same_list(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

bool agent_config__same_labels(const struct agent_config *a, const struct agent_config *b)
{
	return same_list(a->keep_labels, b->keep_labels) &&
	       same_list(a->drop_labels, b->drop_labels);
}

bool agent_config__same_sampling(const struct agent_config *a, const struct agent_config *b)
{
	const struct sampler_opts *x = &a->sampling.opts, *y = &b->sampling.opts;

	return x->freq_hz == y->freq_hz && x->filter_mode == y->filter_mode &&
	       x->pid_count == y->pid_count &&
	       !memcmp(a->sampling.pids, b->sampling.pids, x->pid_count * sizeof(x->pids[0])) &&
	       !strcmp(x->cgroup_path ? x->cgroup_path : "",
		       y->cgroup_path ? y->cgroup_path : "") &&
	       x->read_labels == y->read_labels && x->kernel_stacks == y->kernel_stacks &&
	       x->max_labels == y->max_labels && x->max_key_len == y->max_key_len &&
	       x->max_value_len == y->max_value_len && x->ringbuf_bytes == y->ringbuf_bytes &&
	       x->unwind_mode == y->unwind_mode && x->unwind_memory_mib == y->unwind_memory_mib &&
	       x->verbose == y->verbose && a->max_profile_bytes == b->max_profile_bytes &&
	       a->symbol_memory == b->symbol_memory;
}
