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
#include "agent/config.h"
#include "cli/cli.h"
#include "cmd/commands.h"
#include "lib/clock.h"
#include "lib/compiler.h"
#include "lib/msg.h"
#include "format/output.h"
#include "profile/labelsel.h"
#include "registry/registry.h"
#include "symbolize/symbols.h"
#include "unwind/unwind.h"
#include "profile/profile.h"
#include "sampling/session.h"
#include "profile/symprof.h"

struct record_env {
	struct sampling_args sampling;
	double duration_s; /* 0: until Ctrl-C, or until the target processes exit */
	struct output_args output;
	struct label_args labels;
	char **command;	      /* -- CMD ARGS: started and profiled with its children */
	size_t symbol_memory; /* --symbol-memory; 0: the symbolizer's default */
};

#define OPT_SYMBOL_MEMORY 0x100 /* below the children's keys (cli.c) */

static const struct argp_option record_options[] = {
	{"duration", 'd', "SECONDS", 0,
	 "Stop after this long (default: Ctrl-C, or when the profiled processes exit)", 0},
	{"symbol-memory", OPT_SYMBOL_MEMORY, "SIZE", 0,
	 "Memory for symbol tables, DWARF and source lines, e.g. 16M (default 24M): less "
	 "keeps fewer line tables of big libraries in memory, which are read again when needed",
	 0},
	{},
};

static error_t parse_record_opt(int key, char *arg, struct argp_state *state)
{
	struct record_env *env = state->input;
	__u64 bytes;
	double d;
	char *end;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &env->sampling;
		state->child_inputs[1] = &env->output;
		state->child_inputs[2] = &env->labels;
		break;
	case 'd':
		d = strtod(arg, &end);
		if (end == arg || *end || !(d > 0) || d > 1e7)
			argp_error(state, "--duration: invalid duration '%s' (seconds, > 0)", arg);
		env->duration_s = d;
		break;
	case OPT_SYMBOL_MEMORY:
		if (agent_parse_size(arg, &bytes) || bytes < (1 << 20) || bytes > (1ull << 40))
			argp_error(state, "--symbol-memory: invalid size '%s' (1M .. 1T)", arg);
		env->symbol_memory = bytes;
		break;
	case ARGP_KEY_ARGS:
		env->command = state->argv + state->next;
		break;
	case ARGP_KEY_END:
		if (env->command && env->sampling.opts.filter_mode != LP_FILTER_ALL)
			argp_error(state, "a command cannot be combined with -p or --cgroup");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
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

/*
 * A line per module that counts (a runtime's walk, the unwind tables):
 * problems are shown as the label read faults are, the rest only on request.
 */
static void print_module_counters(const struct session *s, bool verbose)
{
	struct proc_counters mc[REGISTRY_MAX_MODULES];
	size_t n = registry__counters(s->registry, mc, ARRAY_SIZE(mc)), i, k;
	bool show;

	for (i = 0; i < n; i++) {
		show = false;
		for (k = 0; k < mc[i].n; k++)
			show |= mc[i].c[k].value && (verbose || mc[i].c[k].problem);
		if (!show)
			continue;
		fprintf(stderr, "labelprof: %s: ", mc[i].title);
		for (k = 0; k < mc[i].n; k++)
			fprintf(stderr, "%s%llu %s", !k ? "" : mc[i].c[k].clause ? "; " : ", ",
				(unsigned long long)mc[i].c[k].value, mc[i].c[k].text);
		fputc('\n', stderr);
	}
}

static void print_summary(const struct session *s, const struct lp_counters *c, double secs,
			  bool verbose)
{
	struct symbolizer_stats ss;
	struct registry_stats ps;

	registry__stats(s->registry, &ps);
	symbolizer__stats(s->symbolizer, &ss);
	fprintf(stderr,
		"labelprof: %llu sample%s (%llu with labels), %llu dropped, %llu label read "
		"fault%s, %llu truncated, %llu malformed, %llu process%s with labels, %.1f s\n",
		(unsigned long long)s->received, msg__s(s->received),
		(unsigned long long)s->with_labels, (unsigned long long)c->ringbuf_drops,
		(unsigned long long)s->read_faults, msg__s(s->read_faults),
		(unsigned long long)s->truncated, (unsigned long long)s->malformed,
		(unsigned long long)ps.labelled_seen, ps.labelled_seen == 1 ? "" : "es", secs);
	if (s->bad_records)
		fprintf(stderr, "labelprof: %llu malformed record%s ignored\n",
			(unsigned long long)s->bad_records, msg__s(s->bad_records));
	if (c->event_drops)
		fprintf(stderr, "labelprof: %llu process event%s dropped (ring buffer full)\n",
			(unsigned long long)c->event_drops, msg__s(c->event_drops));
	/* a writer's normal state, not a problem: only on request */
	if (verbose)
		fprintf(stderr,
			"labelprof: %llu label%s not in use skipped (NULL value of length 0), "
			"%llu sample%s of processes without a recipe, %llu of kernel threads\n",
			(unsigned long long)c->null_values, msg__s(c->null_values),
			(unsigned long long)c->unknown_pids, msg__s(c->unknown_pids),
			(unsigned long long)c->kernel_threads);
	if (verbose)
		fprintf(stderr,
			"labelprof: %llu process inspection%s (%llu waiting for a lazy TLS "
			"descriptor, %llu failed); memory maps read: %llu by inspections, %llu "
			"by the symbolizer's own re-reads\n",
			(unsigned long long)ps.resolves, msg__s(ps.resolves),
			(unsigned long long)ps.retries, (unsigned long long)ps.errors,
			(unsigned long long)ps.maps_reads, (unsigned long long)ss.maps_reads);
	if (verbose && ps.execs)
		fprintf(stderr,
			"labelprof: %llu exec%s, each inspected %.1f ms after it on average, %.1f ms "
			"at most\n",
			(unsigned long long)ps.execs, msg__s(ps.execs),
			ps.exec_delay_sum_ns / 1e6 / ps.execs, ps.exec_delay_max_ns / 1e6);
	print_module_counters(s, verbose);
}

/* One status line, rewritten in place: only for a terminal. */
static void print_progress(struct session *s, double secs)
{
	struct lp_counters c = {};

	sampler__read_counters(s->sampler, &c);
	fprintf(stderr, "\rlabelprof: %.0f s, %llu sample%s, %llu dropped\033[K", secs,
		(unsigned long long)s->received, msg__s(s->received),
		(unsigned long long)c.ringbuf_drops);
}

static int write_profile(struct record_env *env, struct session *s, struct output_file *of,
			 const struct lp_counters *c, __u64 start_unix_ns, __u64 duration_ns)
{
	struct symprof_build_opts bo = {
		.frequency_hz = env->sampling.opts.freq_hz,
		.start_time_unix_ns = start_unix_ns,
		.duration_ns = duration_ns,
		.counters = c,
	};
	struct unwind_stats us;
	struct symprof *sp;
	int err;

	if (s->unwind) {
		unwind__stats(s->unwind, &us);
		bo.unwind_misses = us.bpf.misses;
	}
	sp = symprof__from_profile(s->profile, s->symbolizer, &bo);

	if (!sp) {
		fprintf(stderr, "labelprof: cannot write the profile: out of memory\n");
		return -ENOMEM;
	}
	sampling_args__note_sources(&env->sampling, sp);
	err = output_args__write(&env->output, of, sp);
	symprof__free(sp);
	return err;
}

int cmd_record(int argc, char **argv)
{
	__u64 invoked_ns = now_ns();
	static struct record_env env = {
		.sampling = {.opts = SAMPLER_OPTS_INIT(SAMPLER_DEFAULT_FREQ_HZ)},
	};
	static const struct argp_child children[] = {
		{&sampling_argp, 0, "What to sample:", 1},
		{&output_argp, 0, NULL, 0},
		{&label_argp, 0, "Which labels:", 2},
		{},
	};
	static const struct argp argp = {
		.options = record_options,
		.parser = parse_record_opt,
		.args_doc = "[-- COMMAND [ARG...]]",
		.doc = "Samples CPU stacks with the custom labels each thread had set, and writes "
		       "the aggregated profile.\v"
		       "Exit status: with a COMMAND that ends the recording, its own (128 + the "
		       "signal's number when a signal killed it), as time(1) does; otherwise 0. "
		       "1 when labelprof could not sample or write the profile where -o says (a "
		       "profile that could not be written is kept in $TMPDIR or the current "
		       "directory, and stderr names the file); 2 on usage errors.",
		.children = children,
	};
	struct sampling_args *args = &env.sampling;
	struct session_opts sopts = {};
	struct session *s = NULL;
	struct output_file of = {};
	struct lp_counters counters = {};
	__u64 start_ns, start_unix_ns, end_ns, now, last_check_ns = 0, last_progress_ns = 0;
	bool progress = isatty(STDERR_FILENO);
	pid_t child = -1;
	int go_fd = -1, exec_err_fd = -1, err, status, command_status = 0, ret = 1;
	char errbuf[512];

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	if (output_args__check(&env.output))
		return 2;
	env.output.opts.max_label_values = env.labels.max_values;
	if (env.command) {
		child = start_command(env.command, &go_fd, &exec_err_fd);
		if (child < 0) {
			fprintf(stderr, "labelprof: cannot start %s: %s\n", env.command[0],
				strerror(errno));
			return 1;
		}
		if (!args->all) {
			args->opts.filter_mode = LP_FILTER_PIDS;
			args->pids[args->opts.pid_count++] = child;
		}
	}

	args->opts.follow_children = env.command && !args->all;
	sopts.labels = env.labels.sel;
	sopts.symbol_memory = env.symbol_memory;
	/* before the BPF program loads: a bad destination is known at once */
	err = output_file__open(&of, env.output.path);
	if (err) {
		fprintf(stderr, "labelprof: cannot write %s: %s\n", env.output.path,
			strerror(-err));
		goto out_free;
	}
	s = session__begin(&args->opts, &sopts, errbuf, sizeof(errbuf));
	if (!s) {
		fprintf(stderr, "labelprof: %s\n", errbuf);
		goto out_free;
	}
	start_ns = now_ns();
	start_unix_ns = clock_ns(CLOCK_REALTIME);
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
	/* once the command runs: a command that cannot start is the only message */
	fprintf(stderr, "labelprof: sampling %d CPU%s at %u Hz%s", sampler__cpu_count(s->sampler),
		msg__s(sampler__cpu_count(s->sampler)), args->opts.freq_hz,
		env.duration_s || env.command ? "" : ", Ctrl-C to stop");
	if (env.sampling.opts.verbose)
		fprintf(stderr, " (%.0f ms after start)", (start_ns - invoked_ns) / 1e6);
	fputc('\n', stderr);

	while (!session__stop_requested()) {
		err = session__poll(s, 100);
		if (err < 0) {
			fprintf(stderr, "labelprof: reading the ring buffer: %s\n", strerror(-err));
			break;
		}
		now = now_ns();
		if (progress && now - last_progress_ns >= 1000000000ull) {
			last_progress_ns = now;
			print_progress(s, (now - start_ns) / 1e9);
		}
		if (env.duration_s && now - start_ns >= (__u64)(env.duration_s * 1e9))
			break;
		if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
			child = -1;
			command_status =
				WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
			break;
		}
		/* -p: stop when the targets are gone (zombies included: no exit event then) */
		if (args->opts.pid_count && !env.command &&
		    (s->target_exited || now - last_check_ns >= 1000000000ull)) {
			s->target_exited = false;
			last_check_ns = now;
			if (!sampling_args__any_alive(args))
				break;
		}
	}
	end_ns = now_ns();
	if (progress)
		fputs("\r\033[K", stderr);
	session__stop(s);
	sampler__read_counters(s->sampler, &counters);

	err = write_profile(&env, s, &of, &counters, start_unix_ns, end_ns - start_ns);
	/* from what was sampled: a label library may have come later (dlopen) */
	if (!err)
		sampling_args__warn_unlabelled(args, s->registry);
	print_summary(s, &counters, (end_ns - start_ns) / 1e9, env.sampling.opts.verbose);
	if (!err) {
		output_file__describe(&of, errbuf, sizeof(errbuf));
		fprintf(stderr, "labelprof: wrote %s\n", errbuf);
	}
	/* as time(1) and perf record: the command's status, when it ended the recording */
	ret = err ? 1 : command_status;

out_free:
	session__close(s);
	if (child > 0) {
		/* the command outlived the recording (-d): it was started for it, stop it */
		kill(child, SIGTERM);
		waitpid(child, &status, 0);
	}
	output_file__abort(&of);
	labelsel__free(env.labels.sel);
	return ret;
}
