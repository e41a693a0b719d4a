// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload.h"

static volatile sig_atomic_t stop_flag;

WL_BURN uint64_t burn_calibrate(uint64_t iters);
WL_BURN uint64_t burn_calibrate(uint64_t iters)
{
	return wl_spin(iters, 0x9e3779b97f4a7c15ull);
}

uint64_t wl_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t wl_calibrate(void)
{
	uint64_t iters = 1 << 16, ns = 0, sink = 0;

	/* Long enough that the clock's granularity and a preemption barely matter. */
	while (ns < 20000000ull) {
		uint64_t t0 = wl_clock_ns(CLOCK_THREAD_CPUTIME_ID);

		sink += burn_calibrate(iters);
		ns = wl_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (ns < 20000000ull)
			iters *= 2;
	}
	__asm__ volatile("" : : "r"(sink));
	return iters * 1000 / ns ?: 1;
}

int wl_gettid(void)
{
	return (int)syscall(SYS_gettid);
}

void wl_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

uint64_t wl_parse_u64(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		wl_die("invalid %s: '%s' (expected a non-negative integer)", what, s);
	return v;
}

void wl_run_option(struct wl_run *run, const char *name, int c, const char *arg,
		   void (*usage)(FILE *f))
{
	char *end;

	switch (c) {
	case 'd':
		run->duration = strtod(arg, &end);
		if (end == arg || *end || run->duration < 0)
			wl_die("%s: invalid duration '%s'", name, arg);
		break;
	case 'w':
		run->wait_stdin = true;
		break;
	case 'o':
		run->output = arg;
		break;
	case 'h':
		usage(stdout);
		exit(0);
	default:
		usage(stderr);
		exit(2);
	}
}

void wl_no_operands(const char *name, int argc, char **argv)
{
	if (optind < argc)
		wl_die("%s: unexpected argument '%s'", name, argv[optind]);
}

void wl_parse_interval(const char *name, char *arg, uint64_t *min_us, uint64_t *max_us)
{
	char *comma = strchr(arg, ',');

	if (comma)
		*comma = '\0';
	*min_us = wl_parse_u64(arg, "interval");
	*max_us = comma ? wl_parse_u64(comma + 1, "interval") : *min_us;
	if (!*min_us || *max_us < *min_us)
		wl_die("%s: --interval needs 0 < MIN <= MAX", name);
}

unsigned int wl_parse_threads(const char *name, const char *arg, unsigned int max)
{
	uint64_t n = wl_parse_u64(arg, "thread count");

	if (n < 1 || n > max)
		wl_die("%s: --threads must be 1-%u", name, max);
	return (unsigned int)n;
}

bool wl_stopping(void)
{
	return stop_flag;
}

void wl_request_stop(void)
{
	stop_flag = 1;
}

static void on_stop_signal(int sig)
{
	stop_flag = 1;
}

void wl_install_stop_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: the waiting poll() must return at once. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void wl_wait(double seconds, bool watch_stdin)
{
	uint64_t deadline = 0;

	if (seconds > 0)
		deadline = wl_clock_ns(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9);
	while (!stop_flag) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };
		int timeout = 100;
		char buf[256];

		if (deadline) {
			uint64_t now = wl_clock_ns(CLOCK_MONOTONIC);

			if (now >= deadline)
				break;
			if ((deadline - now) / 1000000 < (uint64_t)timeout)
				timeout = (int)((deadline - now) / 1000000) + 1;
		}
		if (!watch_stdin) {
			poll(NULL, 0, timeout);
			continue;
		}
		if (poll(&pfd, 1, timeout) <= 0)
			continue;
		if (pfd.revents & POLLIN) {
			ssize_t n = read(0, buf, sizeof(buf));

			if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
				break;
		} else if (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)) {
			break;
		}
	}
	stop_flag = 1;
}

bool wl_stdin_closed(void)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	char buf[256];

	if (poll(&pfd, 1, 0) <= 0)
		return false;
	if (pfd.revents & POLLIN)
		return read(0, buf, sizeof(buf)) == 0;
	return pfd.revents & (POLLHUP | POLLERR | POLLNVAL);
}

void wl_sibling_path(const char *name, char *buf, size_t size)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n < 0)
		wl_die("readlink /proc/self/exe: %s", strerror(errno));
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	if ((size_t)snprintf(buf, size, "%s/%s", self, name) >= size)
		wl_die("path too long: %s/%s", self, name);
}

void wl_ready(const char *name)
{
	fprintf(stderr, "%s: ready pid=%d\n", name, (int)getpid());
	fflush(stderr);
}

/* Length of the valid UTF-8 sequence at p (as strict as Python's decoder), or 0. */
static size_t utf8_seq_len(const unsigned char *p, size_t avail)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* Overlong forms, surrogates and code points above U+10FFFF are invalid. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (avail < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

void wl_json_bytes(FILE *f, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i = 0;

	fputc('"', f);
	while (i < len) {
		size_t n = utf8_seq_len(p + i, len - i);

		if (n == 0) {
			fprintf(f, "\\udc%02x", p[i]);
			i++;
		} else if (n > 1) {
			fwrite(p + i, 1, n, f);
			i += n;
		} else {
			if (p[i] == '"' || p[i] == '\\')
				fprintf(f, "\\%c", p[i]);
			else if (p[i] < 0x20)
				fprintf(f, "\\u%04x", p[i]);
			else
				fputc(p[i], f);
			i++;
		}
	}
	fputc('"', f);
}

void wl_json_str(FILE *f, const char *s)
{
	wl_json_bytes(f, s, strlen(s));
}

FILE *wl_open_report(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdout;
	f = fopen(path, "w");
	if (!f)
		wl_die("cannot write report %s: %s", path, strerror(errno));
	return f;
}

void wl_close_report(FILE *f, const char *path)
{
	if (fflush(f) || ferror(f) || (f != stdout && fclose(f)))
		wl_die("cannot write report %s: %s", path ? path : "(stdout)", strerror(errno));
}
