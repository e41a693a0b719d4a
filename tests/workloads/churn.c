// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * churn: process turnover for a profiler to keep up with.
 *
 *   churn spawn     fork+exec many short-lived labelled children (churn-child),
 *                   a few at a time; report every child's pid and burn time.
 *   churn exec-cycle  exec (same pid) into a labelled program, which execs an
 *                   unlabelled one (churn-plain), which execs the labelled one
 *                   again, alternating the v1 and v0 ABI, cycle after cycle.
 *
 * churn itself publishes no labels.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

#define MAX_CHILDREN 100000

struct child {
	int pid;
	int status;
	uint64_t burn_ns, cpu_ns;
	bool reported;
};

/* What a churn-child writes to --report-fd: one record, atomically (< PIPE_BUF). */
struct child_record {
	uint32_t seq;
	uint32_t pid;
	uint64_t burn_ns;
};

static struct {
	unsigned int count, parallel, cycles;
	uint64_t burn_us, delay_ms;
	bool wait_stdin;
	const char *output;
} env = {
	.count = 1000,
	.parallel = 8,
	.burn_us = 2000,
	.delay_ms = 20,
	.cycles = 10,
};

static void drain(int fd, struct child *children)
{
	struct child_record r;

	while (read(fd, &r, sizeof(r)) == (ssize_t)sizeof(r)) {
		if (r.seq < env.count) {
			children[r.seq].burn_ns = r.burn_ns;
			children[r.seq].reported = true;
		}
	}
}

static uint64_t timeval_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000;
}

static void reap_one(struct child *children, unsigned int started)
{
	struct rusage ru;
	int status;
	pid_t pid = wait4(-1, &status, 0, &ru);

	if (pid < 0)
		wl_die("churn: wait4: %s", strerror(errno));
	for (unsigned int i = 0; i < started; i++) {
		if (children[i].pid == pid) {
			children[i].status = status;
			children[i].cpu_ns = timeval_ns(ru.ru_utime) + timeval_ns(ru.ru_stime);
			return;
		}
	}
}

static int spawn(void)
{
	static struct child children[MAX_CHILDREN];
	char child_path[4096], seq[32], iters[32], delay[32], fd_arg[32];
	unsigned int started = 0, running = 0, failed = 0, missing = 0;
	uint64_t start_ns, end_ns, burn_ns = 0, cpu_ns = 0;
	int fds[2];
	FILE *f;

	wl_sibling_path("churn-child", child_path, sizeof(child_path));
	if (pipe2(fds, O_CLOEXEC) || fcntl(fds[0], F_SETFL, O_NONBLOCK))
		wl_die("churn: pipe: %s", strerror(errno));
	snprintf(iters, sizeof(iters), "%llu", (unsigned long long)(env.burn_us * wl_calibrate()));
	snprintf(delay, sizeof(delay), "%llu", (unsigned long long)env.delay_ms);
	snprintf(fd_arg, sizeof(fd_arg), "%d", 3);

	wl_ready("churn");
	start_ns = wl_clock_ns(CLOCK_REALTIME);
	while (started < env.count && !wl_stopping()) {
		pid_t pid;

		if (running == env.parallel) {
			reap_one(children, started);
			running--;
			drain(fds[0], children);
		}
		snprintf(seq, sizeof(seq), "%u", started);
		pid = fork();
		if (pid < 0)
			wl_die("churn: fork: %s", strerror(errno));
		if (pid == 0) {
			/* The child gets the pipe's write end as fd 3, open across exec. */
			char *argv[] = { "churn-child", "--seq",     seq,    "--iters", iters,
					 "--delay-ms",	delay,	     "--report-fd", fd_arg, NULL };

			if (dup2(fds[1], 3) < 0 || fcntl(3, F_SETFD, 0))
				_exit(126);
			execv(child_path, argv);
			_exit(127);
		}
		children[started++].pid = pid;
		running++;
	}
	while (running--) {
		reap_one(children, started);
		drain(fds[0], children);
	}
	end_ns = wl_clock_ns(CLOCK_REALTIME);
	drain(fds[0], children);

	f = wl_open_report(env.output);
	fprintf(f, "{\"workload\":\"churn\",\"mode\":\"spawn\",\"pid\":%d,", (int)getpid());
	fprintf(f, "\"start_unix_ns\":%llu,\"end_unix_ns\":%llu,\"children\":[",
		(unsigned long long)start_ns, (unsigned long long)end_ns);
	for (unsigned int i = 0; i < started; i++) {
		const struct child *c = &children[i];
		bool ok = WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0;

		failed += !ok;
		missing += !c->reported;
		burn_ns += c->burn_ns;
		cpu_ns += c->cpu_ns;
		fprintf(f, "%s\n{\"seq\":%u,\"pid\":%d,\"ok\":%s,\"burn_ns\":%llu,\"cpu_ns\":%llu}",
			i ? "," : "", i, c->pid, ok ? "true" : "false",
			(unsigned long long)c->burn_ns, (unsigned long long)c->cpu_ns);
	}
	fprintf(f, "],\"started\":%u,\"failed\":%u,\"unreported\":%u,", started, failed, missing);
	fprintf(f, "\"child_burn_ns\":%llu,\"child_cpu_ns\":%llu}\n", (unsigned long long)burn_ns,
		(unsigned long long)cpu_ns);
	wl_close_report(f, env.output);
	if (failed)
		fprintf(stderr, "churn: %u of %u children failed\n", failed, started);
	return failed ? 1 : 0;
}

static int exec_cycle(void)
{
	char child_path[4096], cycles[32], iters[32], delay[32];
	char *argv[] = { "churn-child", "--cycle", "0",	  "--cycles", cycles,	       "--iters",
			 iters,		"--delay-ms", delay, env.wait_stdin ? "--until-eof" : NULL,
			 NULL };

	wl_sibling_path("churn-child", child_path, sizeof(child_path));
	snprintf(cycles, sizeof(cycles), "%u", env.cycles);
	snprintf(iters, sizeof(iters), "%llu",
		 (unsigned long long)(env.burn_us * wl_calibrate()));
	snprintf(delay, sizeof(delay), "%llu", (unsigned long long)env.delay_ms);
	wl_ready("churn");
	execv(child_path, argv);
	wl_die("churn: exec %s: %s", child_path, strerror(errno));
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: churn spawn [options]\n"
		"       churn exec-cycle [options]\n"
		"  -n, --count N        spawn: children to start (default 1000)\n"
		"  -j, --parallel N     spawn: children alive at once (default 8)\n"
		"  -c, --cycles N       exec-cycle: labelled+unlabelled cycles, 0: until stopped\n"
		"                       (default 10)\n"
		"  -b, --burn-us N      CPU each child (spawn) or each image (exec-cycle) burns\n"
		"                       (default 2000)\n"
		"      --delay-ms N     sleep between setting labels and burning (default 20)\n"
		"  -w, --wait-stdin     exec-cycle: stop when stdin reaches end of file\n"
		"  -o, --output FILE    spawn: JSON report (default stdout)\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "parallel", required_argument, NULL, 'j' },
		{ "cycles", required_argument, NULL, 'c' },
		{ "burn-us", required_argument, NULL, 'b' },
		{ "delay-ms", required_argument, NULL, 'D' },
		{ "wait-stdin", no_argument, NULL, 'w' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *mode;
	int c;

	if (argc < 2 || argv[1][0] == '-') {
		usage(argc > 1 && !strcmp(argv[1], "--help") ? stdout : stderr);
		return argc > 1 && !strcmp(argv[1], "--help") ? 0 : 2;
	}
	mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "n:j:c:b:wo:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			env.count = (unsigned int)wl_parse_u64(optarg, "count");
			if (env.count > MAX_CHILDREN)
				wl_die("churn: --count is at most %d", MAX_CHILDREN);
			break;
		case 'j':
			env.parallel = (unsigned int)wl_parse_u64(optarg, "parallelism");
			if (!env.parallel)
				wl_die("churn: --parallel must be at least 1");
			break;
		case 'c':
			env.cycles = (unsigned int)wl_parse_u64(optarg, "cycles");
			break;
		case 'b':
			env.burn_us = wl_parse_u64(optarg, "burn time");
			break;
		case 'D':
			env.delay_ms = wl_parse_u64(optarg, "delay");
			break;
		case 'w':
			env.wait_stdin = true;
			break;
		case 'o':
			env.output = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		wl_die("churn: unexpected argument '%s'", argv[optind]);

	wl_install_stop_handlers();
	if (!strcmp(mode, "spawn"))
		return spawn();
	if (!strcmp(mode, "exec-cycle"))
		return exec_cycle();
	wl_die("churn: unknown mode '%s' (spawn or exec-cycle)", mode);
}
