// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Helpers the labelprof commands share: argument parsing, target processes, output files. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "cli/cli.h"
#include "labelprof.h"
#include "lib/compiler.h"
#include "profile/labelsel.h"
#include "proc/stat.h"
#include "profile/symprof.h"
#include "registry/registry.h"
#include "unwind/unwind.h"

enum {
	OPT_CGROUP = 0x1000,
	OPT_NO_LABELS,
	OPT_NO_KERNEL,
	OPT_MAX_LABELS,
	OPT_MAX_KEY,
	OPT_MAX_VALUE,
	OPT_RINGBUF,
	OPT_UNWIND,
	OPT_UNWIND_MEMORY,
};

/*
 * The bounds and defaults printed are the ones sampler_opts__check applies
 * (clang-format would split the strings at the numbers).
 */
#define STR(x) __stringify(x)
/* clang-format off */
static const char freq_doc[] = "Samples per second per CPU, 1 .. " STR(SAMPLER_MAX_FREQ_HZ)
	" (default " STR(SAMPLER_DEFAULT_FREQ_HZ) "; agent: " STR(SAMPLER_AGENT_FREQ_HZ) ")";
static const char max_labels_doc[] = "Labels read per sample, 1 .. " STR(LP_MAX_LABELS)
	" (default " STR(LP_DEFAULT_MAX_LABELS) "); labels x (4 + key + value) <= "
	STR(LP_MAX_LABEL_BYTES);
static const char max_key_doc[] = "Key bytes read per label, 1 .. " STR(LP_MAX_KEY_LEN)
	" (default " STR(LP_DEFAULT_MAX_KEY_LEN) ")";
static const char max_value_doc[] = "Value bytes read per label, 1 .. " STR(LP_MAX_VALUE_LEN)
	" (default " STR(LP_DEFAULT_MAX_VALUE_LEN) ")";
static const char ringbuf_doc[] = "Ring buffer bytes, " STR(SAMPLER_MIN_RINGBUF_BYTES)
	" .. " STR(SAMPLER_MAX_RINGBUF_MIB) " MiB, rounded up to a power of two (default 0: 100 ms "
	"of samples at the frequency, " STR(SAMPLER_RINGBUF_MIN_KIB) " KiB .. "
	STR(SAMPLER_RINGBUF_MAX_MIB) " MiB)";
static const char max_label_values_doc[] = "Text views show a key with more values than this "
	"as KEY=* (default " STR(CLI_DEFAULT_MAX_LABEL_VALUES) "; 0: never)";
static const char unwind_doc[] = "User stacks by auto (CFI where an object has it, frame "
	"pointers elsewhere; the default), fp (frame pointers only) or cfi (CFI only)";
static const char unwind_memory_doc[] = "Memory for unwind tables in BPF, "
	STR(UNWIND_MIN_MEMORY_MIB) " .. " STR(UNWIND_MAX_MEMORY_MIB) " MiB (default "
	STR(UNWIND_DEFAULT_MEMORY_MIB) "); least recently used objects are evicted past it";
/* clang-format on */

static const struct argp_option sampling_options[] = {
	{"all", 'a', NULL, 0, "Sample every process on every CPU (the default)", 0},
	{"pid", 'p', "PID[,PID...]", 0, "Sample only these processes", 0},
	{"cgroup", OPT_CGROUP, "PATH", 0, "Sample only processes in this cgroup v2 directory", 0},
	{"freq", 'F', "HZ", 0, freq_doc, 0},
	{"no-labels", OPT_NO_LABELS, NULL, 0, "Do not read labels (stacks only)", 0},
	{"no-kernel-stacks", OPT_NO_KERNEL, NULL, 0, "Do not collect kernel stacks", 0},
	{"max-labels", OPT_MAX_LABELS, "N", 0, max_labels_doc, 0},
	{"max-key-len", OPT_MAX_KEY, "BYTES", 0, max_key_doc, 0},
	{"max-value-len", OPT_MAX_VALUE, "BYTES", 0, max_value_doc, 0},
	{"ringbuf-size", OPT_RINGBUF, "BYTES", 0, ringbuf_doc, 0},
	{"unwind", OPT_UNWIND, "auto|fp|cfi", 0, unwind_doc, 0},
	{"unwind-memory", OPT_UNWIND_MEMORY, "MIB", 0, unwind_memory_doc, 0},
	{"verbose", 'v', NULL, 0, "Say more; twice (-vv): libbpf's messages too", 0},
	{},
};

/*
 * A number for flag into *v; the bounds are sampler_opts__check's, once every
 * flag is read. Past UINT_MAX is kept as UINT_MAX: still out of bounds.
 */
static void parse_uint_arg(struct argp_state *state, const char *flag, const char *arg,
			   unsigned int *v)
{
	unsigned long long n;

	if (cli_parse_uint(arg, ULLONG_MAX, &n))
		argp_error(state, "%s: invalid number '%s'", flag, arg);
	*v = n > UINT_MAX ? UINT_MAX : n;
}

static error_t parse_sampling_opt(int key, char *arg, struct argp_state *state)
{
	struct sampling_args *args = state->input;
	struct sampler_opts *o = &args->opts;
	enum sampler_opt bad;
	unsigned long long v;
	char *tok, *save = NULL, why[160];

	switch (key) {
	case ARGP_KEY_INIT:
		o->pids = args->pids;
		break;
	case 'a':
		o->filter_mode = LP_FILTER_ALL;
		args->all = true;
		break;
	case 'p':
		o->filter_mode = LP_FILTER_PIDS;
		for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (cli_parse_uint(tok, INT_MAX, &v) || !v)
				argp_error(state, "--pid: invalid pid '%s'", tok);
			if (o->pid_count == CLI_MAX_PIDS)
				argp_error(state, "--pid: at most %d pids", CLI_MAX_PIDS);
			args->pids[o->pid_count++] = v;
		}
		break;
	case OPT_CGROUP:
		o->filter_mode = LP_FILTER_CGROUP;
		o->cgroup_path = arg;
		break;
	case 'F':
		parse_uint_arg(state, sampler_opt__flag(SAMPLER_OPT_FREQ), arg, &o->freq_hz);
		break;
	case OPT_NO_LABELS:
		o->read_labels = false;
		break;
	case OPT_NO_KERNEL:
		o->kernel_stacks = false;
		break;
	case OPT_MAX_LABELS:
		parse_uint_arg(state, sampler_opt__flag(SAMPLER_OPT_MAX_LABELS), arg,
			       &o->max_labels);
		break;
	case OPT_MAX_KEY:
		parse_uint_arg(state, sampler_opt__flag(SAMPLER_OPT_MAX_KEY_LEN), arg,
			       &o->max_key_len);
		break;
	case OPT_MAX_VALUE:
		parse_uint_arg(state, sampler_opt__flag(SAMPLER_OPT_MAX_VALUE_LEN), arg,
			       &o->max_value_len);
		break;
	case OPT_RINGBUF:
		if (cli_parse_uint(arg, SIZE_MAX, &v))
			argp_error(state, "%s: invalid number '%s'",
				   sampler_opt__flag(SAMPLER_OPT_RINGBUF), arg);
		o->ringbuf_bytes = v;
		break;
	case OPT_UNWIND:
		if (cli_parse_unwind(arg, &o->unwind_mode))
			argp_error(state, "--unwind: '%s' is not auto, fp or cfi", arg);
		break;
	case OPT_UNWIND_MEMORY:
		parse_uint_arg(state, sampler_opt__flag(SAMPLER_OPT_UNWIND_MEMORY), arg,
			       &o->unwind_memory_mib);
		break;
	case 'v':
		/* -v: labelprof's own diagnostics; -vv: libbpf's, hundreds of lines */
		o->libbpf_messages = o->verbose;
		o->verbose = true;
		break;
	case ARGP_KEY_END:
		/* at the end: the label limits are bounded together */
		if (!args->defer_check && sampler_opts__check(o, &bad, why, sizeof(why)))
			argp_error(state, "%s: %s", sampler_opt__flag(bad), why);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp sampling_argp = {
	.options = sampling_options,
	.parser = parse_sampling_opt,
};

int cli_parse_unwind(const char *s, enum lp_unwind_mode *mode)
{
	static const char *const names[] = {
		[LP_UNWIND_AUTO] = "auto", [LP_UNWIND_FP] = "fp", [LP_UNWIND_CFI] = "cfi"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i])) {
			*mode = i;
			return 0;
		}
	return -EINVAL;
}

void sampling_args__note_sources(struct sampling_args *args, const struct symprof *sp)
{
	size_t i, j, k;

	for (i = 0; i < sp->sample_count; i++) {
		const struct sp_sample *s = &sp->samples[i];
		const struct sp_range *set = &sp->label_sets[s->label_set];

		for (k = 0; k < args->opts.pid_count && args->pids[k] != (pid_t)s->pid; k++)
			;
		for (j = 0; k < args->opts.pid_count && j < set->count; j++)
			args->seen_sources[k] |= 1u << sp->labels[set->first + j].source;
	}
}

void sampling_args__warn_unlabelled(const struct sampling_args *args, struct registry *registry)
{
	const unsigned int process_ctx = 1u << LP_SRC_OTEL_PROCESS;
	size_t i;

	if (!args->opts.read_labels)
		return;
	for (i = 0; i < args->opts.pid_count; i++) {
		pid_t pid = args->pids[i];

		if (args->seen_sources[i] & ~process_ctx || registry__labelled(registry, pid))
			continue;
		if (proc_is_kernel_thread(pid))
			fprintf(stderr,
				"labelprof: pid %d is a kernel thread: it has kernel stacks "
				"only, no user stacks and no labels\n",
				pid);
		else if (args->seen_sources[i])
			fprintf(stderr,
				"labelprof: pid %d publishes only an OpenTelemetry process context "
				"(resource attributes, on every sample), no thread labels (see "
				"labelprof inspect %d)\n",
				pid, pid);
		else
			fprintf(stderr,
				"labelprof: pid %d publishes no labels (see labelprof inspect %d)\n",
				pid, pid);
	}
}

bool sampling_args__any_alive(const struct sampling_args *args)
{
	size_t i;

	for (i = 0; i < args->opts.pid_count; i++)
		if (cli_process_alive(args->pids[i]))
			return true;
	return false;
}

enum {
	OPT_FORMAT = 0x2000,
	OPT_PPROF_LABELS,
};

static const struct argp_option output_options[] = {
	{"format", OPT_FORMAT, "FORMAT", 0,
	 "json (default; report on a terminal), folded (flamegraph.pl input), report (CPU share "
	 "per label value), pprof, otlp, otlp-json or html",
	 0},
	{"output", 'o', "FILE", 0,
	 "Write the profile here instead of standard output; without --format, the name's ending "
	 "says the format: .pb.gz or .pprof (pprof), .otlp, .otlp.json, .json, .folded, .html",
	 0},
	{"pprof-labels", OPT_PPROF_LABELS, "LIST", 0,
	 "Also label pprof/OTLP samples with these: pid, tid, comm, thread_name (comma-separated; "
	 "default pid,comm, so that the process survives a round trip; \"\" for none)",
	 0},
	{},
};

static error_t parse_output_opt(int key, char *arg, struct argp_state *state)
{
	struct output_args *args = state->input;
	int v;

	switch (key) {
	case ARGP_KEY_INIT:
		args->opts.extra_labels = OUTPUT_LABELS_DEFAULT;
		break;
	case OPT_FORMAT:
		v = output__format_by_name(arg);
		if (v < 0)
			argp_error(state, "--format: unknown format '%s' (%s)", arg, output__format_names());
		args->format = v;
		args->format_given = true;
		break;
	case OPT_PPROF_LABELS:
		v = output__extra_labels_by_names(arg);
		if (v < 0)
			argp_error(state, "--pprof-labels: unknown label in '%s' (pid, tid, comm, thread_name)",
				   arg);
		args->opts.extra_labels = v;
		break;
	case 'o':
		args->path = arg;
		break;
	case ARGP_KEY_END:
		v = args->path ? output__format_by_path(args->path) : -1;
		/* OTLP JSON is JSON: a .json file may hold it */
		if (v >= 0 && args->format_given && v != (int)args->format &&
		    !(v == OUTPUT_JSON && args->format == OUTPUT_OTLP_JSON))
			argp_error(state,
				   "--format %s: %s is named like a %s file (leave --format "
				   "out, or name the file for its format)",
				   output__format_name(args->format), args->path,
				   output__format_name(v));
		if (!args->format_given && v >= 0)
			args->format = v;
		/* like perf: a terminal gets something to read, a pipe the JSON to parse */
		else if (!args->format_given && !args->path && isatty(STDOUT_FILENO))
			args->format = OUTPUT_REPORT;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp output_argp = {
	.options = output_options,
	.parser = parse_output_opt,
};

enum {
	OPT_LABELS = 0x3000,
	OPT_DROP_LABELS,
	OPT_MAX_LABEL_VALUES,
};

static const struct argp_option label_options[] = {
	{"labels", OPT_LABELS, "KEY[,KEY...]", 0,
	 "Keep only the labels with these keys (glob patterns: 'tenant,http.*')", 0},
	{"drop-labels", OPT_DROP_LABELS, "KEY[,KEY...]", 0,
	 "Leave out the labels with these keys (glob patterns: 'request_id,*_id')", 0},
	{"max-label-values", OPT_MAX_LABEL_VALUES, "N", 0, max_label_values_doc, 0},
	{},
};

static error_t parse_label_opt(int key, char *arg, struct argp_state *state)
{
	struct label_args *args = state->input;
	unsigned long long v;
	char why[160];
	bool bad_drop;

	switch (key) {
	case ARGP_KEY_INIT:
		args->max_values = CLI_DEFAULT_MAX_LABEL_VALUES;
		break;
	case OPT_LABELS:
		if (labelsel__check(arg, why, sizeof(why)))
			argp_error(state, "--labels: %s", why);
		args->keep = arg;
		break;
	case OPT_DROP_LABELS:
		if (labelsel__check(arg, why, sizeof(why)))
			argp_error(state, "--drop-labels: %s", why);
		args->drop = arg;
		break;
	case OPT_MAX_LABEL_VALUES:
		if (cli_parse_uint(arg, UINT_MAX, &v))
			argp_error(state, "--max-label-values: invalid number '%s'", arg);
		args->max_values = v;
		break;
	case ARGP_KEY_END:
		if (!args->keep && !args->drop)
			break;
		args->sel = labelsel__new(args->keep, args->drop, &bad_drop, why, sizeof(why));
		if (!args->sel)
			argp_failure(state, 1, 0, "%s: %s", bad_drop ? "--drop-labels" : "--labels",
				     why);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp label_argp = {
	.options = label_options,
	.parser = parse_label_opt,
};

int output_args__check(const struct output_args *args)
{
	if (!args->path && output__format_is_binary(args->format) && isatty(STDOUT_FILENO)) {
		fprintf(stderr,
			"labelprof: %s is binary: not writing it to a terminal (use -o FILE)\n",
			output__format_name(args->format));
		return -ENOTTY;
	}
	return 0;
}

int cli_parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || *out > max)
		return -EINVAL;
	return 0;
}

bool cli_process_alive(pid_t pid)
{
	const char *state;
	char buf[512];

	state = proc_stat_fields(pid, buf, sizeof(buf));
	if (!state)
		return errno != ENOENT && errno != ESRCH;
	return *state != 'Z' && *state != 'X';
}

/* A device or pipe at path (lst: its lstat) to write to directly, or -1. */
static int open_special(const char *path, const struct stat *lst)
{
	struct stat st;
	int fd;

	if (S_ISLNK(lst->st_mode)) {
		/* followed only if nobody else could have planted it */
		if (lst->st_uid != 0 && lst->st_uid != geteuid())
			return -1;
		fd = open(path, O_WRONLY | O_CLOEXEC);
	} else {
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return S_ISLNK(lst->st_mode) ? -1 : -errno;
	if (!fstat(fd, &st) && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
		return fd;
	close(fd);
	return S_ISLNK(lst->st_mode) ? -1 : -EINVAL;
}

/*
 * Why path cannot be written when no temporary file could be made beside it
 * (tmp_err): what the file itself refuses, if it exists (a file in /proc,
 * say), rather than the temporary file's error.
 */
static int target_error(const char *path, int tmp_err)
{
	struct stat st;
	int fd;

	if (lstat(path, &st))
		return tmp_err;
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	/* root may open a file nobody may write: its mode says no all the same */
	return st.st_mode & 0222 ? tmp_err : -EACCES;
}

/*
 * -EPERM for an immutable or append-only file, which rename cannot replace:
 * known before sampling rather than after. 0 when the flags cannot be read.
 */
static int replaceable(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), flags = 0;

	if (fd < 0)
		return 0;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags))
		flags = 0;
	close(fd);
	return flags & (FS_IMMUTABLE_FL | FS_APPEND_FL) ? -EPERM : 0;
}

/* Where the bytes go: standard output, a device or pipe, or a temporary file. */
static int open_sink(struct output_file *of, const char *path)
{
	char dir_buf[PATH_MAX], base_buf[PATH_MAX];
	struct stat st;
	int fd;

	of->path = path;
	if (!path) {
		of->sink = stdout;
		return 0;
	}
	if (!lstat(path, &st) && S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!lstat(path, &st) && S_ISREG(st.st_mode) && replaceable(path))
		return -EPERM;
	if (!lstat(path, &st) && !S_ISREG(st.st_mode)) {
		fd = open_special(path, &st);
		if (fd < -1)
			return fd;
		if (fd >= 0) {
			of->direct = true;
			of->sink = fdopen(fd, "w");
			if (!of->sink) {
				close(fd);
				return -ENOMEM;
			}
			return 0;
		}
	}
	snprintf(dir_buf, sizeof(dir_buf), "%s", path);
	snprintf(base_buf, sizeof(base_buf), "%s", path);
	if ((size_t)snprintf(of->tmp_path, sizeof(of->tmp_path), "%s/.%s.XXXXXX", dirname(dir_buf),
			     basename(base_buf)) >= sizeof(of->tmp_path))
		return -ENAMETOOLONG;
	fd = mkostemp(of->tmp_path, O_CLOEXEC);
	if (fd < 0)
		return target_error(path, -errno);
	if (fchmod(fd, 0644) || !(of->sink = fdopen(fd, "w"))) {
		int err = -errno;

		close(fd);
		unlink(of->tmp_path);
		return err;
	}
	return 0;
}

static int commit_sink(struct output_file *of)
{
	int err = 0;

	if (!of->path)
		return fflush(stdout) ? -errno : 0;
	if (of->direct) {
		err = fclose(of->sink) ? -errno : 0;
		of->sink = NULL;
		return err;
	}
	if (fflush(of->sink) || fsync(fileno(of->sink)))
		err = -errno;
	if (fclose(of->sink) && !err)
		err = -errno;
	of->sink = NULL;
	if (!err && rename(of->tmp_path, of->path))
		err = -errno;
	if (err)
		unlink(of->tmp_path);
	return err;
}

static void abort_sink(struct output_file *of)
{
	if (!of->path || !of->sink)
		return;
	fclose(of->sink);
	if (!of->direct)
		unlink(of->tmp_path);
	of->sink = NULL;
}

static ssize_t count_write(void *cookie, const char *buf, size_t n)
{
	struct output_file *of = cookie;
	size_t done = fwrite(buf, 1, n, of->sink);

	if (done < n && !of->write_errno)
		of->write_errno = errno;
	of->bytes += done;
	return done;
}

int output_file__open(struct output_file *of, const char *path)
{
	static const cookie_io_functions_t counting = {.write = count_write};
	int err = open_sink(of, path);

	if (err)
		return err;
	/* the writers write through f, which counts what reaches the sink */
	of->f = fopencookie(of, "w", counting);
	if (!of->f) {
		abort_sink(of);
		return -ENOMEM;
	}
	return 0;
}

int output_file__commit(struct output_file *of)
{
	int err = fclose(of->f) ? -(of->write_errno ?: errno) : 0;

	of->f = NULL;
	if (err) {
		abort_sink(of);
		return err;
	}
	return commit_sink(of);
}

void output_file__abort(struct output_file *of)
{
	if (of->f)
		fclose(of->f);
	of->f = NULL;
	abort_sink(of);
}

/*
 * A new file in dir for the profile meant for path, named after it
 * ("labelprof-XXXXXX-cpu.pb.gz": the same ending, so the same format), opened
 * on of. 0 or -errno.
 */
static int open_kept(struct output_file *of, const char *dir, const char *path)
{
	char base_buf[PATH_MAX];
	const char *base;
	int fd, err;

	snprintf(base_buf, sizeof(base_buf), "%s", path);
	base = basename(base_buf);
	*of = (struct output_file){};
	if ((size_t)snprintf(of->kept_path, sizeof(of->kept_path), "%s/labelprof-XXXXXX-%s", dir,
			     base) >= sizeof(of->kept_path))
		return -ENAMETOOLONG;
	fd = mkostemps(of->kept_path, strlen(base) + 1, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	/* the empty file holds the name; the profile replaces it */
	err = output_file__open(of, of->kept_path);
	if (err)
		unlink(of->kept_path);
	return err;
}

static int write_commit(struct output_file *of, const struct output_args *args,
			const struct symprof *sp)
{
	int err = output__write(of->f, args->format, sp, &args->opts);

	if (err) {
		/* a writer sees its stream fail (-EIO); the sink knows why (ENOSPC) */
		if (err == -EIO && of->write_errno)
			err = -of->write_errno;
		output_file__abort(of);
		return err;
	}
	return output_file__commit(of);
}

int output_args__write(const struct output_args *args, struct output_file *of,
		       const struct symprof *sp)
{
	const char *tmpdir = getenv("TMPDIR");
	char cwd[PATH_MAX], desc[PATH_MAX + 32];
	const char *dirs[] = {tmpdir && *tmpdir ? tmpdir : "/tmp", getcwd(cwd, sizeof(cwd))};
	int err = write_commit(of, args, sp), kept_err = 0;
	size_t i;

	if (!err)
		return 0;
	fprintf(stderr, "labelprof: cannot write the profile%s%s: %s\n", args->path ? " to " : "",
		args->path ? args->path : "", strerror(-err));
	if (!args->path)
		return err;
	/* the recording is finished: keep it wherever it fits */
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		if (!dirs[i])
			continue;
		kept_err = open_kept(of, dirs[i], args->path);
		if (kept_err)
			continue;
		kept_err = write_commit(of, args, sp);
		if (!kept_err) {
			output_file__describe(of, desc, sizeof(desc));
			fprintf(stderr, "labelprof: wrote %s instead\n", desc);
			return err;
		}
		unlink(of->kept_path);
	}
	fprintf(stderr,
		"labelprof: the profile is lost: %s and the current directory cannot take "
		"it either: %s\n",
		dirs[0], strerror(-kept_err));
	return err;
}

void output_file__describe(const struct output_file *of, char *buf, size_t len)
{
	static const char *const units[] = {"KB", "MB", "GB", "TB"};
	const char *name = of->path ? of->path : "<stdout>";
	double v = of->bytes / 1024.0;
	size_t i;

	if (of->bytes < 1024) {
		snprintf(buf, len, "%s (%llu bytes)", name, of->bytes);
		return;
	}
	for (i = 0; v >= 1024 && i + 1 < ARRAY_SIZE(units); i++)
		v /= 1024;
	snprintf(buf, len, "%s (%.*f %s)", name, v < 10 ? 1 : 0, v, units[i]);
}
