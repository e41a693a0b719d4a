// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* labelprof record: sample for a while, then write one profile. */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "commands.h"
#include "output.h"
#include "procs.h"
#include "profile.h"
#include "sampler.h"
#include "symbols.h"
#include "symprof.h"

#define MAX_PIDS 1024

struct record_env {
	unsigned int freq_hz;
	double duration_s; /* 0: until Ctrl-C, or until the target processes exit */
	enum lp_filter_mode filter_mode;
	pid_t pids[MAX_PIDS];
	size_t pid_count;
	const char *cgroup_path;
	enum output_format format;
	struct output_opts output_opts;
	const char *output_path; /* NULL: stdout */
	bool read_labels;
	bool kernel_stacks;
	unsigned int max_labels;
	unsigned int max_key_len;
	unsigned int max_value_len;
	size_t ringbuf_bytes;
	char **command; /* -- CMD ARGS: started and profiled with its children */
	bool all;	/* -a given: with a command, sample everything while it runs */
	bool verbose;
};

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	exiting = 1;
}

enum {
	OPT_CGROUP = 0x100,
	OPT_FORMAT,
	OPT_NO_LABELS,
	OPT_NO_KERNEL,
	OPT_MAX_LABELS,
	OPT_MAX_KEY,
	OPT_MAX_VALUE,
	OPT_RINGBUF,
	OPT_PPROF_LABELS,
};

static const struct argp_option record_options[] = {
	{"all", 'a', NULL, 0, "Sample every process on every CPU (the default)", 0},
	{"pid", 'p', "PID[,PID...]", 0, "Sample only these processes", 0},
	{"cgroup", OPT_CGROUP, "PATH", 0, "Sample only processes in this cgroup v2 directory", 0},
	{"freq", 'F', "HZ", 0, "Samples per second per CPU (default 99)", 0},
	{"duration", 'd', "SECONDS", 0,
	 "Stop after this long (default: Ctrl-C, or when the "
	 "profiled processes exit)",
	 0},
	{"format", OPT_FORMAT, "FORMAT", 0,
	 "json (default), folded (flamegraph.pl input), report (CPU share per label value), pprof, "
	 "otlp, otlp-json or html",
	 0},
	{"pprof-labels", OPT_PPROF_LABELS, "LIST", 0,
	 "Also label pprof/OTLP samples with these: pid, tid, comm, thread_name (comma-separated)",
	 0},
	{"output", 'o', "FILE", 0, "Write the profile here instead of standard output", 0},
	{"no-labels", OPT_NO_LABELS, NULL, 0, "Do not read labels (stacks only)", 0},
	{"no-kernel-stacks", OPT_NO_KERNEL, NULL, 0, "Do not collect kernel stacks", 0},
	{"max-labels", OPT_MAX_LABELS, "N", 0, "Labels read per sample (default 16)", 0},
	{"max-key-len", OPT_MAX_KEY, "BYTES", 0, "Key bytes read per label (default 128)", 0},
	{"max-value-len", OPT_MAX_VALUE, "BYTES", 0, "Value bytes read per label (default 256)", 0},
	{"ringbuf-size", OPT_RINGBUF, "BYTES", 0, "Ring buffer size (default 8 MiB)", 0},
	{"verbose", 'v', NULL, 0, "Say more, including libbpf's messages", 0},
	{},
};

static error_t parse_record_opt(int key, char *arg, struct argp_state *state)
{
	struct record_env *env = state->input;
	unsigned long long v;
	char *tok, *save = NULL;
	int format;
	double d;
	char *end;

	switch (key) {
	case 'a':
		env->filter_mode = LP_FILTER_ALL;
		env->all = true;
		break;
	case 'p':
		env->filter_mode = LP_FILTER_PIDS;
		for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (cli_parse_uint(tok, INT_MAX, &v) || !v)
				argp_error(state, "invalid pid '%s'", tok);
			if (env->pid_count == MAX_PIDS)
				argp_error(state, "at most %d pids", MAX_PIDS);
			env->pids[env->pid_count++] = v;
		}
		break;
	case OPT_CGROUP:
		env->filter_mode = LP_FILTER_CGROUP;
		env->cgroup_path = arg;
		break;
	case 'F':
		if (cli_parse_uint(arg, 100000, &v) || !v)
			argp_error(state, "invalid frequency '%s' (1..100000 Hz)", arg);
		env->freq_hz = v;
		break;
	case 'd':
		d = strtod(arg, &end);
		if (end == arg || *end || !(d > 0) || d > 1e7)
			argp_error(state, "invalid duration '%s' (seconds, > 0)", arg);
		env->duration_s = d;
		break;
	case OPT_FORMAT:
		format = output__format_by_name(arg);
		if (format < 0)
			argp_error(state, "unknown format '%s' (%s)", arg, output__format_names());
		env->format = format;
		break;
	case OPT_PPROF_LABELS:
		format = output__extra_labels_by_names(arg);
		if (format < 0)
			argp_error(state, "unknown label in '%s' (pid, tid, comm, thread_name)",
				   arg);
		env->output_opts.extra_labels = format;
		break;
	case 'o':
		env->output_path = arg;
		break;
	case OPT_NO_LABELS:
		env->read_labels = false;
		break;
	case OPT_NO_KERNEL:
		env->kernel_stacks = false;
		break;
	case OPT_MAX_LABELS:
	case OPT_MAX_KEY:
	case OPT_MAX_VALUE:
		if (cli_parse_uint(arg, LP_MAX_VALUE_LEN, &v) || !v)
			argp_error(state, "invalid limit '%s'", arg);
		if (key == OPT_MAX_LABELS)
			env->max_labels = v;
		else if (key == OPT_MAX_KEY)
			env->max_key_len = v;
		else
			env->max_value_len = v;
		break;
	case OPT_RINGBUF:
		if (cli_parse_uint(arg, 1ull << 30, &v) || v < 4096)
			argp_error(state, "invalid ring buffer size '%s' (4096 .. 1 GiB)", arg);
		env->ringbuf_bytes = v;
		break;
	case 'v':
		env->verbose = true;
		break;
	case ARGP_KEY_ARGS:
		env->command = state->argv + state->next;
		break;
	case ARGP_KEY_END:
		if (env->command && env->filter_mode != LP_FILTER_ALL)
			argp_error(state, "a command cannot be combined with -p or --cgroup");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

struct recorder {
	struct record_env *env;
	struct sampler *sampler;
	struct procs *procs;
	struct profile *profile;
	struct symbolizer *symbolizer;
	__u64 received;
	__u64 bad_records;
	bool check_targets; /* -p: a target exited, see whether any is left */
};

static int on_record(void *ctx, const void *data, size_t size)
{
	struct recorder *r = ctx;
	const struct lp_event_hdr *h = data;
	const struct lp_proc_event *pe = data;
	size_t i;

	if (size < sizeof(*h)) {
		r->bad_records++;
		return 0;
	}
	if (h->type == LP_EVENT_SAMPLE) {
		r->received++;
		if (profile__add_sample(r->profile, data, size))
			r->bad_records++;
		return 0;
	}
	if (size < sizeof(*pe)) {
		r->bad_records++;
		return 0;
	}
	procs__handle_event(r->procs, pe);
	if (h->type == LP_EVENT_EXEC) {
		/* read the new memory map now: a short-lived process may be gone soon */
		symbolizer__pid_exec(r->symbolizer, pe->tgid);
		symbolizer__observe_pid(r->symbolizer, pe->tgid);
	} else if (h->type == LP_EVENT_EXIT) {
		symbolizer__pid_exit(r->symbolizer, pe->tgid);
		for (i = 0; i < r->env->pid_count; i++)
			if (r->env->pids[i] == (pid_t)pe->tgid)
				r->check_targets = true;
	}
	return 0;
}

static __u64 now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * Forks the command, held before exec until the sampler is ready (go_fd).
 * exec failures come back through err_fd, which exec closes on success.
 */
static pid_t start_command(char **argv, int *go_fd, int *err_fd)
{
	int go[2], status[2], e;
	pid_t pid;
	char c;

	if (pipe2(go, O_CLOEXEC))
		return -1;
	if (pipe2(status, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		e = errno;
		close(go[0]);
		close(go[1]);
		close(status[0]);
		close(status[1]);
		errno = e;
		return -1;
	}
	if (!pid) {
		close(go[1]);
		close(status[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(status[1], &e, sizeof(e)) != sizeof(e))
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(status[1]);
	*go_fd = go[1];
	*err_fd = status[0];
	return pid;
}

/* Lets the command exec; returns 0 once it did, or the exec's errno. */
static int release_command(int go_fd, int err_fd)
{
	int e = 0;

	if (write(go_fd, "g", 1) != 1)
		e = errno;
	close(go_fd);
	if (!e && read(err_fd, &e, sizeof(e)) != sizeof(e))
		e = 0;
	close(err_fd);
	return e;
}

/* Whether pid still runs: gone, zombie or dead processes do not. */
static bool process_alive(pid_t pid)
{
	char path[64], buf[512], *paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT && errno != ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	/* the state follows the command name, which may itself hold ')' */
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

static bool any_target_alive(const struct record_env *env)
{
	size_t i;

	for (i = 0; i < env->pid_count; i++)
		if (process_alive(env->pids[i]))
			return true;
	return false;
}

static int check_targets(const struct record_env *env)
{
	size_t i;

	for (i = 0; i < env->pid_count; i++) {
		if (!process_alive(env->pids[i])) {
			fprintf(stderr, "labelprof: no such process: %d\n", env->pids[i]);
			return -ESRCH;
		}
	}
	if (env->cgroup_path && access(env->cgroup_path, F_OK)) {
		fprintf(stderr, "labelprof: cgroup not found: %s: %s\n", env->cgroup_path,
			strerror(errno));
		return -ENOENT;
	}
	return 0;
}

static void print_summary(const struct recorder *r, const struct lp_counters *c, double secs)
{
	struct procs_stats ps;

	procs__stats(r->procs, &ps);
	fprintf(stderr,
		"labelprof: %llu samples (%llu with labels), %llu dropped, %llu label read "
		"faults, %llu truncated, %llu malformed, %llu processes with labels, %.1f s\n",
		(unsigned long long)r->received, (unsigned long long)c->samples_with_labels,
		(unsigned long long)c->ringbuf_drops, (unsigned long long)c->label_read_faults,
		(unsigned long long)c->truncations, (unsigned long long)c->malformed_labels,
		(unsigned long long)ps.labelled_seen, secs);
	if (r->bad_records)
		fprintf(stderr, "labelprof: %llu malformed records ignored\n",
			(unsigned long long)r->bad_records);
	if (c->event_drops)
		fprintf(stderr, "labelprof: %llu process events dropped (ring buffer full)\n",
			(unsigned long long)c->event_drops);
}

static int write_profile(struct recorder *r, FILE *f, const struct lp_counters *c,
			 __u64 start_unix_ns, __u64 duration_ns)
{
	struct symprof_build_opts bo = {
		.frequency_hz = r->env->freq_hz,
		.start_time_unix_ns = start_unix_ns,
		.duration_ns = duration_ns,
		.counters = c,
	};
	struct symprof *sp = symprof__from_profile(r->profile, r->symbolizer, &bo);
	int err;

	if (!sp)
		return -ENOMEM;
	err = output__write(f, r->env->format, sp, &r->env->output_opts);
	symprof__free(sp);
	return err;
}

int cmd_record(int argc, char **argv)
{
	static struct record_env env = {
		.freq_hz = 99,
		.read_labels = true,
		.kernel_stacks = true,
	};
	static const struct argp argp = {
		.options = record_options,
		.parser = parse_record_opt,
		.args_doc = "[-- COMMAND [ARG...]]",
		.doc = "Samples CPU stacks with the custom labels each thread had set, and writes "
		       "the aggregated profile.",
	};
	struct sampler_opts so = {};
	struct recorder r = {.env = &env};
	struct output_file of = {};
	struct lp_counters counters = {};
	struct sigaction sa = {.sa_handler = on_signal};
	__u64 start_ns, start_unix_ns, end_ns, last_check_ns = 0;
	pid_t child = -1;
	int go_fd = -1, exec_err_fd = -1, err, status, ret = 1;
	char errbuf[512];

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	if (sampler__check_system(errbuf, sizeof(errbuf))) {
		fprintf(stderr, "labelprof: %s\n", errbuf);
		return 1;
	}
	if (check_targets(&env))
		return 1;
	if (!env.output_path && output__format_is_binary(env.format) && isatty(STDOUT_FILENO)) {
		fprintf(stderr,
			"labelprof: %s is binary: not writing it to a terminal (use -o FILE)\n",
			output__format_name(env.format));
		return 2;
	}
	err = output_file__open(&of, env.output_path);
	if (err) {
		fprintf(stderr, "labelprof: cannot write %s: %s\n", env.output_path,
			strerror(-err));
		return 1;
	}
	if (env.command) {
		child = start_command(env.command, &go_fd, &exec_err_fd);
		if (child < 0) {
			fprintf(stderr, "labelprof: cannot start %s: %s\n", env.command[0],
				strerror(errno));
			goto out_abort;
		}
		if (!env.all) {
			env.filter_mode = LP_FILTER_PIDS;
			env.pids[env.pid_count++] = child;
		}
	}

	r.symbolizer = symbolizer__new(NULL);
	r.profile = profile__new(r.symbolizer, NULL);
	if (!r.symbolizer || !r.profile) {
		fprintf(stderr, "labelprof: out of memory\n");
		goto out_free;
	}

	so.freq_hz = env.freq_hz;
	so.filter_mode = env.filter_mode;
	so.pids = env.pids;
	so.pid_count = env.pid_count;
	so.cgroup_path = env.cgroup_path;
	so.follow_children = env.command && !env.all;
	so.read_labels = env.read_labels;
	so.kernel_stacks = env.kernel_stacks;
	so.user_stacks = true;
	so.max_labels = env.max_labels;
	so.max_key_len = env.max_key_len;
	so.max_value_len = env.max_value_len;
	so.ringbuf_bytes = env.ringbuf_bytes;
	so.verbose = env.verbose;
	r.sampler = sampler__open(&so, on_record, &r, errbuf, sizeof(errbuf));
	if (!r.sampler) {
		fprintf(stderr, "labelprof: %s\n", errbuf);
		goto out_free;
	}
	r.procs = procs__new(r.sampler, 0, env.verbose);
	if (!r.procs) {
		fprintf(stderr, "labelprof: out of memory\n");
		goto out_free;
	}
	procs__scan(r.procs, env.pids, env.filter_mode == LP_FILTER_PIDS ? env.pid_count : 0);
	if (sampler__start(r.sampler, errbuf, sizeof(errbuf))) {
		fprintf(stderr, "labelprof: %s\n", errbuf);
		goto out_free;
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	start_ns = now_ns(CLOCK_MONOTONIC);
	start_unix_ns = now_ns(CLOCK_REALTIME);
	fprintf(stderr, "labelprof: sampling %d CPUs at %u Hz%s\n", sampler__cpu_count(r.sampler),
		env.freq_hz, env.duration_s || env.command ? "" : ", Ctrl-C to stop");
	if (go_fd >= 0) {
		err = release_command(go_fd, exec_err_fd);
		go_fd = -1;
		if (err) {
			fprintf(stderr, "labelprof: cannot run %s: %s\n", env.command[0],
				strerror(err));
			waitpid(child, &status, 0);
			child = -1;
			goto out_free;
		}
	}

	while (!exiting) {
		err = sampler__poll(r.sampler, 100);
		if (err < 0) {
			fprintf(stderr, "labelprof: reading the ring buffer: %s\n", strerror(-err));
			break;
		}
		procs__tick(r.procs);
		if (env.duration_s &&
		    now_ns(CLOCK_MONOTONIC) - start_ns >= (__u64)(env.duration_s * 1e9))
			break;
		if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
			child = -1;
			break;
		}
		/* -p: stop when the targets are gone (zombies included: no exit event then) */
		if (env.pid_count && !env.command &&
		    (r.check_targets || now_ns(CLOCK_MONOTONIC) - last_check_ns >= 1000000000ull)) {
			r.check_targets = false;
			last_check_ns = now_ns(CLOCK_MONOTONIC);
			if (!any_target_alive(&env))
				break;
		}
	}
	end_ns = now_ns(CLOCK_MONOTONIC);
	/* stop first: then every counted sample is either in the ring buffer or dropped */
	sampler__stop(r.sampler);
	sampler__drain(r.sampler);
	sampler__read_counters(r.sampler, &counters);

	err = write_profile(&r, of.f, &counters, start_unix_ns, end_ns - start_ns);
	if (!err)
		err = output_file__commit(&of);
	if (err) {
		fprintf(stderr, "labelprof: cannot write the profile%s%s: %s\n",
			env.output_path ? " to " : "", env.output_path ? env.output_path : "",
			strerror(-err));
	}
	print_summary(&r, &counters, (end_ns - start_ns) / 1e9);
	ret = err ? 1 : 0;

out_free:
	procs__free(r.procs);
	sampler__close(r.sampler);
	profile__free(r.profile);
	symbolizer__free(r.symbolizer);
	if (child > 0) {
		/* the command outlived the recording (-d): it was started for it, stop it */
		kill(child, SIGTERM);
		waitpid(child, &status, 0);
	}
out_abort:
	output_file__abort(&of);
	return ret;
}
