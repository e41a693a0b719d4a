// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* labelprof convert: one saved profile into another format. */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "lib/array.h"
#include "lib/compiler.h"
#include "cmd/commands.h"
#include "format/fmt.h"
#include "format/input.h"
#include "format/output.h"
#include "profile/labelsel.h"
#include "profile/symprof.h"

/* Profiles larger than this are refused rather than read into memory. */
#define MAX_INPUT_BYTES (1ull << 30)

struct convert_env {
	const char *input_path;
	enum input_format input_format;
	struct output_args output;
	struct label_args labels;
};

enum {
	OPT_INPUT_FORMAT = 0x100,
};

static const struct argp_option convert_options[] = {
	{"input-format", OPT_INPUT_FORMAT, "FORMAT", 0,
	 "The input's format: auto (default, from its content), json, pprof, otlp (binary or "
	 "JSON) or otlp-json",
	 0},
	{},
};

static error_t parse_convert_opt(int key, char *arg, struct argp_state *state)
{
	struct convert_env *env = state->input;
	int v;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &env->output;
		state->child_inputs[1] = &env->labels;
		break;
	case OPT_INPUT_FORMAT:
		v = input__format_by_name(arg);
		if (v < 0)
			argp_error(state, "--input-format: unknown format '%s' (auto, json, pprof, otlp)",
				   arg);
		env->input_format = v;
		break;
	case ARGP_KEY_ARG:
		if (env->input_path)
			argp_error(state, "one input file only");
		env->input_path = arg;
		break;
	case ARGP_KEY_END:
		if (!env->input_path)
			argp_error(state, "no input file (use - for standard input)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* The keys --labels and --drop-labels leave out, noted to say so when none is kept. */
struct key_filter {
	const struct labelsel *sel;
	bool kept;
	const struct sp_string *dropped[16]; /* distinct: strings are interned */
	size_t dropped_count;
	bool more;
};

static bool keeps_key(const struct sp_string *key, void *ctx)
{
	struct key_filter *kf = ctx;
	size_t i;

	if (labelsel__keeps(kf->sel, key->bytes, key->len)) {
		kf->kept = true;
		return true;
	}
	for (i = 0; i < kf->dropped_count && kf->dropped[i] != key; i++)
		;
	if (i == kf->dropped_count && i < ARRAY_SIZE(kf->dropped))
		kf->dropped[kf->dropped_count++] = key;
	else if (i == kf->dropped_count)
		kf->more = true;
	return false;
}

/*
 * A selection that kept no label of a profile that has some: the keys it
 * could have named (the report's hint at processes that publish none would
 * mislead).
 */
static void say_no_key_kept(const struct convert_env *env, const struct key_filter *kf)
{
	size_t i;

	fprintf(stderr, "labelprof: %s%s%s%s%s matched no label key of %s; its keys: ",
		env->labels.keep ? "--labels " : "", env->labels.keep ? env->labels.keep : "",
		env->labels.keep && env->labels.drop ? " with " : "",
		env->labels.drop ? "--drop-labels " : "", env->labels.drop ? env->labels.drop : "",
		env->input_path);
	for (i = 0; i < kf->dropped_count; i++) {
		fputs(i ? ", " : "", stderr);
		fmt__text_bytes(stderr, kf->dropped[i]->bytes, kf->dropped[i]->len, ",", 64);
	}
	fputs(kf->more ? ", ...\n" : "\n", stderr);
}

/* The whole of fd, up to MAX_INPUT_BYTES. Returns 0 or -errno (-EFBIG: too large). */
static int read_all(int fd, unsigned char **out, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap);
	ssize_t r;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			if (cap >= MAX_INPUT_BYTES) {
				free(buf);
				return -EFBIG;
			}
			if (ARRAY_RESERVE(buf, cap, n + 1)) {
				free(buf);
				return -ENOMEM;
			}
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			r = -errno;
			free(buf);
			return r;
		}
		if (!r)
			break;
		n += r;
	}
	*out = buf;
	*len = n;
	return 0;
}

int cmd_convert(int argc, char **argv)
{
	static struct convert_env env;
	static const struct argp_child children[] = {
		{&output_argp, 0, NULL, 0},
		{&label_argp, 0, "Which labels:", 2},
		{},
	};
	static const struct argp argp = {
		.options = convert_options,
		.parser = parse_convert_opt,
		.args_doc = "INPUT",
		.doc = "Converts a saved profile (labelprof JSON, pprof, OTLP or OTLP JSON) into another "
		       "format, so one recording can be looked at several ways.",
		.children = children,
	};
	struct output_file of = {};
	struct key_filter kf = {};
	struct symprof *sp = NULL;
	unsigned char *buf = NULL;
	char errbuf[256] = "";
	size_t len = 0;
	int fd, err, ret = 1;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	if (output_args__check(&env.output))
		return 2;
	env.output.opts.max_label_values = env.labels.max_values;
	fd = strcmp(env.input_path, "-") ? open(env.input_path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0) {
		fprintf(stderr, "labelprof: cannot open %s: %s\n", env.input_path, strerror(errno));
		return 1;
	}
	err = read_all(fd, &buf, &len);
	if (fd)
		close(fd);
	if (err) {
		fprintf(stderr, "labelprof: cannot read %s: %s\n", env.input_path,
			err == -EFBIG ? "larger than 1 GiB" : strerror(-err));
		return 1;
	}
	err = input__read(buf, len, env.input_format, &sp, errbuf, sizeof(errbuf));
	free(buf);
	if (err) {
		fprintf(stderr, "labelprof: %s: %s\n", env.input_path,
			err == -EINVAL && errbuf[0] ? errbuf : strerror(-err));
		return 1;
	}
	/* the labels a recording with the same flags would have kept */
	kf.sel = env.labels.sel;
	if (kf.sel && symprof__filter_labels(sp, keeps_key, &kf)) {
		fprintf(stderr, "labelprof: out of memory\n");
		goto out_free;
	}
	if (kf.sel && !kf.kept && kf.dropped_count)
		say_no_key_kept(&env, &kf);
	err = output_file__open(&of, env.output.path);
	if (err) {
		fprintf(stderr, "labelprof: cannot write %s: %s\n", env.output.path,
			strerror(-err));
		goto out_free;
	}
	if (output_args__write(&env.output, &of, sp))
		goto out_free;
	output_file__describe(&of, errbuf, sizeof(errbuf));
	fprintf(stderr, "labelprof: wrote %s\n", errbuf);
	ret = 0;
out_free:
	symprof__free(sp);
	labelsel__free(env.labels.sel);
	return ret;
}
