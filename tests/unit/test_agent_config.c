// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's configuration file: values, defaults, and errors that name the line. */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/config.h"
#include "format/output.h"
#include "lib/compiler.h"
#include "profile/labelsel.h"
#include "unwind/unwind.h"

#define S (1000000000ull)

static char err[512];

static struct agent_config *parse(const char *text)
{
	err[0] = '\0';
	return agent_config__parse_string(text, "agent.conf", err, sizeof(err));
}

/* text must fail with this message. */
static void expect_error(const char *text, const char *msg)
{
	struct agent_config *c = parse(text);

	if (c)
		fail_msg("accepted: %s", text);
	if (strcmp(err, msg))
		fail_msg("error '%s', expected '%s'", err, msg);
}

static void expect_ok(const char *text)
{
	struct agent_config *c = parse(text);

	if (!c)
		fail_msg("%s: %s", text, err);
	agent_config__put(c);
}

static void test_defaults(void **state)
{
	struct agent_config *c = parse("");

	assert_non_null(c);
	assert_int_equal(c->sampling.opts.freq_hz, 19);
	assert_true(c->sampling.opts.read_labels);
	assert_true(c->sampling.opts.kernel_stacks);
	assert_int_equal(c->sampling.opts.filter_mode, LP_FILTER_ALL);
	assert_int_equal(c->interval_ns, 60 * S);
	assert_null(c->output_dir);
	assert_int_equal(c->formats, AGENT_FORMAT_PPROF);
	assert_int_equal(c->max_dir_bytes, 1ull << 30);
	assert_int_equal(c->max_age_ns, 7 * 86400 * S);
	/* as record's --pprof-labels */
	assert_int_equal(c->extra_labels, OUTPUT_LABEL_PID | OUTPUT_LABEL_COMM);
	assert_null(c->otlp_url);
	assert_true(c->otlp_gzip);
	assert_int_equal(c->header_count, 0);
	assert_int_equal(c->otlp_timeout_ns, 10 * S);
	assert_int_equal(c->retry_initial_ns, S);
	assert_int_equal(c->retry_max_ns, 60 * S);
	assert_null(c->spool_dir);
	assert_int_equal(c->max_spool_bytes, 64 << 20);
	assert_null(c->metrics_listen);
	agent_config__put(c);
}

static void test_every_key(void **state)
{
	struct agent_config *c = parse("# a comment\n"
				       "; another\n"
				       "\n"
				       "interval = 30s\n"
				       "output_dir = /var/lib/labelprof/profiles\n"
				       "formats = pprof,otlp\n"
				       "max_dir_bytes = 512M\n"
				       "max_age = 2d\n"
				       "pprof_labels = pid,comm\n"
				       "otlp_endpoint = http://collector:4318/\n"
				       "otlp_gzip = off\n"
				       "otlp_headers = Authorization=Bearer x, X-Tenant = y\n"
				       "otlp_timeout = 1500ms\n"
				       "otlp_retry_initial = 250ms\n"
				       "otlp_retry_max = 2m\n"
				       "spool_dir = /var/spool/labelprof\n"
				       "max_spool_bytes = 1GiB\n"
				       "metrics_listen = 127.0.0.1:9464\n"
				       "max_profile_bytes = 32M\n"
				       "freq = 49\n"
				       "cgroup = /sys/fs/cgroup/system.slice\n"
				       "labels = false\n"
				       "kernel_stacks = no\n"
				       "max_labels = 8\n"
				       "max_key_len = 64\n"
				       "max_value_len = 100\n"
				       "ringbuf_size = 16M\n"
				       "unwind = cfi\n"
				       "unwind_memory = 64\n"
				       "verbose = yes ; inline comment\n");
	const struct sockaddr_in *sin;

	if (!c)
		fail_msg("%s", err);
	assert_int_equal(c->interval_ns, 30 * S);
	assert_string_equal(c->output_dir, "/var/lib/labelprof/profiles");
	assert_int_equal(c->formats, AGENT_FORMAT_PPROF | AGENT_FORMAT_OTLP);
	assert_int_equal(c->max_dir_bytes, 512ull << 20);
	assert_int_equal(c->max_age_ns, 2 * 86400 * S);
	assert_int_equal(c->extra_labels, OUTPUT_LABEL_PID | OUTPUT_LABEL_COMM);
	/* trailing slashes go: the path is appended */
	assert_string_equal(c->otlp_url, "http://collector:4318/v1development/profiles");
	assert_false(c->otlp_gzip);
	assert_int_equal(c->header_count, 2);
	assert_string_equal(c->headers[0].name, "Authorization");
	assert_string_equal(c->headers[0].value, "Bearer x");
	assert_string_equal(c->headers[1].name, "X-Tenant");
	assert_string_equal(c->headers[1].value, "y");
	assert_int_equal(c->otlp_timeout_ns, 1500000000ull);
	assert_int_equal(c->retry_initial_ns, 250000000ull);
	assert_int_equal(c->retry_max_ns, 120 * S);
	assert_string_equal(c->spool_dir, "/var/spool/labelprof");
	assert_int_equal(c->max_spool_bytes, 1ull << 30);
	assert_string_equal(c->metrics_listen, "127.0.0.1:9464");
	sin = (const struct sockaddr_in *)&c->metrics_addr;
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohs(sin->sin_port), 9464);
	assert_int_equal(c->max_profile_bytes, 32 << 20);
	assert_int_equal(c->sampling.opts.freq_hz, 49);
	assert_int_equal(c->sampling.opts.filter_mode, LP_FILTER_CGROUP);
	assert_string_equal(c->sampling.opts.cgroup_path, "/sys/fs/cgroup/system.slice");
	assert_false(c->sampling.opts.read_labels);
	assert_false(c->sampling.opts.kernel_stacks);
	assert_int_equal(c->sampling.opts.max_labels, 8);
	assert_int_equal(c->sampling.opts.max_key_len, 64);
	assert_int_equal(c->sampling.opts.max_value_len, 100);
	assert_int_equal(c->sampling.opts.ringbuf_bytes, 16 << 20);
	assert_int_equal(c->sampling.opts.unwind_mode, LP_UNWIND_CFI);
	assert_int_equal(c->sampling.opts.unwind_memory_mib, 64);
	assert_true(c->sampling.opts.verbose);
	agent_config__put(c);
}

static void test_errors_name_line_and_key(void **state)
{
	expect_error("interval = 10s\n\nintervall = 5s\n", "agent.conf:3: unknown key 'intervall'");
	expect_error(
		"# x\ninterval = soon\n",
		"agent.conf:2: interval: invalid duration 'soon' (e.g. 500ms, 60s, 5m, 1h, 7d)");
	expect_error("interval = 0\n", "agent.conf:1: interval: '0' is out of range");
	expect_error("interval = 10s\ninterval = 20s\n",
		     "agent.conf:2: interval: set twice (first on line 1)");
	expect_error("max_dir_bytes = 12Q\n",
		     "agent.conf:1: max_dir_bytes: invalid size '12Q' (e.g. 4096, 64K, 512M, 1G)");
	expect_error("otlp_gzip = maybe\n",
		     "agent.conf:1: otlp_gzip: invalid boolean 'maybe' (true or false)");
	expect_error("formats = pprof,svg\n", "agent.conf:1: formats: unknown format 'svg' "
					      "(pprof, otlp)");
	expect_error("formats =\n", "agent.conf:1: formats: no format given (pprof, otlp)");
	expect_error("otlp_endpoint = collector:4318\n",
		     "agent.conf:1: otlp_endpoint: 'collector:4318' is not an http:// or https:// "
		     "URL");
	expect_error("metrics_listen = 9464\n",
		     "agent.conf:1: metrics_listen: '9464' is not ADDRESS:PORT");
	expect_error("metrics_listen = 127.0.0.1:99999\n",
		     "agent.conf:1: metrics_listen: '127.0.0.1:99999' is not ADDRESS:PORT");
	expect_error("pprof_labels = pid,uid\n", "agent.conf:1: pprof_labels: unknown label in "
						 "'pid,uid' (pid, tid, comm, thread_name)");
	expect_error("freq = 0\n", "agent.conf:1: freq: at least 1");
	expect_error("freq = -5\n", "agent.conf:1: freq: invalid number '-5'");
	expect_error("ringbuf_size = 1K\n", "agent.conf:1: ringbuf_size: at least 4096");
	expect_error("unwind = dwarf\n",
		     "agent.conf:1: unwind: invalid unwind method 'dwarf' (auto, fp or cfi)");
}

#define LIMITS "max_labels = %u\nmax_key_len = %u\nmax_value_len = %u\n"

/* The file's sampling keys have the bounds of the flags: sampler_opts__check's. */
static void test_sampling_bounds(void **state)
{
	/* the labels as a whole: max_labels x (4 + key + value) <= LP_MAX_LABEL_BYTES */
	const unsigned int key_at_joint = LP_MAX_LABEL_BYTES / LP_MAX_LABELS - 4 -
					  LP_DEFAULT_MAX_VALUE_LEN,
			   labels_for_max_value = LP_MAX_LABEL_BYTES /
						  (4 + LP_DEFAULT_MAX_KEY_LEN + LP_MAX_VALUE_LEN);
	const char *joint = "labels x (4 + key + value) must be at most " __stringify(
		LP_MAX_LABEL_BYTES) " bytes";
	const struct {
		const char *key;
		unsigned long long at, past; /* the bound, and past it */
		const char *what; /* the error past it: "at least" or "at most" the bound */
	} bounds[] = {
		{"freq", 1, 0, "at least"},
		{"freq", SAMPLER_MAX_FREQ_HZ, SAMPLER_MAX_FREQ_HZ + 1, "at most"},
		{"max_labels", 1, 0, "at least"},
		{"max_labels", LP_MAX_LABELS, LP_MAX_LABELS + 1, "at most"},
		{"max_key_len", 1, 0, "at least"},
		{"max_key_len", LP_MAX_KEY_LEN, LP_MAX_KEY_LEN + 1, "at most"},
		{"max_value_len", 1, 0, "at least"},
		{"max_value_len", LP_MAX_VALUE_LEN, LP_MAX_VALUE_LEN + 1, "at most"},
		{"ringbuf_size", SAMPLER_MIN_RINGBUF_BYTES, SAMPLER_MIN_RINGBUF_BYTES - 1,
		 "at least"},
		{"ringbuf_size", (unsigned long long)SAMPLER_MAX_RINGBUF_MIB << 20,
		 ((unsigned long long)SAMPLER_MAX_RINGBUF_MIB << 20) + 1, "at most"},
		{"unwind_memory", UNWIND_MAX_MEMORY_MIB, UNWIND_MAX_MEMORY_MIB + 1, "at most"},
	};
	const struct {
		unsigned int at[3];   /* labels, key, value at the joint bound */
		unsigned int step[2]; /* past it: labels or key one more */
		const char *named;
		int line;
	} joints[] = {
		{{LP_MAX_LABELS, key_at_joint, LP_DEFAULT_MAX_VALUE_LEN}, {0, 1}, "max_key_len", 2},
		{{labels_for_max_value, LP_DEFAULT_MAX_KEY_LEN, LP_MAX_VALUE_LEN},
		 {1, 0},
		 "max_value_len",
		 3},
	};
	char text[256], msg[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bounds); i++) {
		/* the largest value too, with few enough labels for the joint bound */
		snprintf(text, sizeof(text), "%s = %llu\n%s", bounds[i].key, bounds[i].at,
			 strcmp(bounds[i].key, "max_labels") ? "max_labels = 4\n" : "");
		expect_ok(text);
		snprintf(text, sizeof(text), "interval = 10s\n%s = %llu\n", bounds[i].key,
			 bounds[i].past);
		snprintf(msg, sizeof(msg), "agent.conf:2: %s: %s %llu", bounds[i].key,
			 bounds[i].what, bounds[i].at);
		expect_error(text, msg);
	}

	/* the joint bound, then past it: the limit moved from its default is named */
	for (i = 0; i < ARRAY_SIZE(joints); i++) {
		const unsigned int *at = joints[i].at, *step = joints[i].step;
		unsigned int labels = at[0] + step[0], key = at[1] + step[1];

		snprintf(text, sizeof(text), LIMITS, at[0], at[1], at[2]);
		expect_ok(text);
		snprintf(text, sizeof(text), LIMITS, labels, key, at[2]);
		snprintf(msg, sizeof(msg), "agent.conf:%d: %s: %s: %u x (4 + %u + %u) is %u",
			 joints[i].line, joints[i].named, joint, labels, key, at[2],
			 labels * (4 + key + at[2]));
		expect_error(text, msg);
	}
}

static void test_syntax_errors(void **state)
{
	char text[512];

	expect_error("interval = 10s\nno equals sign here\n",
		     "agent.conf:2: syntax error (expected 'key = value')");
	expect_error("[agent]\ninterval = 10s\n",
		     "agent.conf:2: interval: sections are not used (found [agent])");
	/* inih would append an indented line to the previous value */
	expect_error("otlp_headers = A=b\n  C=d\n",
		     "agent.conf:2: indented line (continuation lines are not supported)");
	/* inih would cut a long line in two */
	snprintf(text, sizeof(text), "interval = 10s\notlp_headers = Authorization=Bearer %0250d\n",
		 0);
	expect_error(text, "agent.conf:2: line longer than 198 bytes");
	/* the first error is the one reported */
	expect_error("bad\nintervall = 1\n", "agent.conf:1: syntax error (expected 'key = value')");
	expect_error("intervall = 1\nbad\n", "agent.conf:1: unknown key 'intervall'");
}

static void test_headers(void **state)
{
	struct agent_config *c;

	/* values may be %-encoded; '=' after the first one belongs to the value */
	c = parse("otlp_headers = Authorization=Basic dXNlcjpwYXNz==,X-Scope=a%2Cb%3Dc\n");
	if (!c)
		fail_msg("%s", err);
	assert_int_equal(c->header_count, 2);
	assert_string_equal(c->headers[0].value, "Basic dXNlcjpwYXNz==");
	assert_string_equal(c->headers[1].value, "a,b=c");
	agent_config__put(c);

	expect_error("otlp_headers = X-Evil=a%0d%0aInjected: 1\n",
		     "agent.conf:1: otlp_headers: control character in the value of X-Evil");
	expect_error("otlp_headers = Bad Name=x\n",
		     "agent.conf:1: otlp_headers: invalid header name 'Bad Name'");
	expect_error("otlp_headers = justaname\n",
		     "agent.conf:1: otlp_headers: 'justaname' is not Name=value");
	expect_error("otlp_headers = content-encoding=br\n",
		     "agent.conf:1: otlp_headers: content-encoding is set by labelprof");
}

static void test_empty_unsets(void **state)
{
	struct agent_config *c =
		parse("output_dir =\ncgroup =\nmetrics_listen=\npprof_labels =\n");

	if (!c)
		fail_msg("%s", err);
	assert_int_equal(c->extra_labels, 0);
	assert_null(c->output_dir);
	assert_null(c->sampling.opts.cgroup_path);
	assert_int_equal(c->sampling.opts.filter_mode, LP_FILTER_ALL);
	assert_null(c->metrics_listen);
	agent_config__put(c);
}

static void test_listen_forms(void **state)
{
	struct agent_config *c = parse("metrics_listen = [::1]:9100\n");

	if (!c)
		fail_msg("%s", err);
	assert_int_equal(c->metrics_addr.ss_family, AF_INET6);
	assert_int_equal(ntohs(((struct sockaddr_in6 *)&c->metrics_addr)->sin6_port), 9100);
	agent_config__put(c);
	/* :PORT listens on every address */
	c = parse("metrics_listen = :9100\n");
	if (!c)
		fail_msg("%s", err);
	assert_int_equal(c->metrics_addr_len > 0, 1);
	agent_config__put(c);
}

static void test_values(void **state)
{
	__u64 v;
	bool b;

	assert_int_equal(agent_parse_duration("90", &v), 0);
	assert_int_equal(v, 90 * S);
	assert_int_equal(agent_parse_duration("5m", &v), 0);
	assert_int_equal(v, 300 * S);
	assert_int_equal(agent_parse_duration("1h", &v), 0);
	assert_int_equal(v, 3600 * S);
	assert_int_equal(agent_parse_duration("1.5s", &v), -EINVAL);
	assert_int_equal(agent_parse_duration("s", &v), -EINVAL);
	assert_int_equal(agent_parse_duration("10 s", &v), -EINVAL);
	assert_int_equal(agent_parse_duration("99999999999999999999d", &v), -EINVAL);
	assert_int_equal(agent_parse_duration("999999999999d", &v), -EINVAL); /* overflows */
	assert_int_equal(agent_parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(agent_parse_size("64k", &v), 0);
	assert_int_equal(v, 64 << 10);
	assert_int_equal(agent_parse_size("2MB", &v), 0);
	assert_int_equal(v, 2 << 20);
	assert_int_equal(agent_parse_size("1T", &v), 0);
	assert_int_equal(v, 1ull << 40);
	assert_int_equal(agent_parse_size("1X", &v), -EINVAL);
	assert_int_equal(agent_parse_size("1Mi", &v), -EINVAL);
	assert_int_equal(agent_parse_size("", &v), -EINVAL);
	assert_int_equal(agent_parse_bool("TRUE", &b), 0);
	assert_true(b);
	assert_int_equal(agent_parse_bool("0", &b), 0);
	assert_false(b);
	assert_int_equal(agent_parse_bool("", &b), -EINVAL);
}

static void test_same_sampling(void **state)
{
	struct agent_config *a = parse("freq = 19\ninterval = 5s\n"), *b = parse("interval = 9s\n"),
			    *c = parse("freq = 20\n");

	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_true(agent_config__same_sampling(a, b));
	assert_false(agent_config__same_sampling(a, c));
	agent_config__put(a);
	agent_config__put(b);
	agent_config__put(c);
}

/* The whole load: a file on disk, then flags over it. */
static void test_load_flags_override_file(void **state)
{
	char path[] = "/tmp/test_agent_config.XXXXXX";
	int fd = mkstemp(path);
	char *argv[] = {"labelprof agent", "--config", path, "--interval", "7s", "-F", "99", NULL};
	struct agent_config *c;

	assert_true(fd >= 0);
	dprintf(fd, "interval = 30s\nfreq = 49\noutput_dir = /tmp\notlp_gzip = false\n");
	close(fd);
	c = agent_config__load(7, argv, err, sizeof(err));
	unlink(path);
	if (!c)
		fail_msg("%s", err);
	assert_int_equal(c->interval_ns, 7 * S);
	assert_int_equal(c->sampling.opts.freq_hz, 99);
	assert_string_equal(c->output_dir, "/tmp");
	assert_false(c->otlp_gzip);
	assert_string_equal(c->path, path);
	agent_config__put(c);
}

/* The file and the flags each in bounds, but not together: an error, no exit (a reload). */
static void test_load_joint_bound(void **state)
{
	char path[] = "/tmp/test_agent_config.XXXXXX", msg[512];
	int fd = mkstemp(path);
	char *argv[] = {"labelprof agent", "--config", path, "--max-value-len", "1000", NULL};

	assert_true(fd >= 0);
	dprintf(fd, "output_dir = /tmp\nmax_labels = 32\n");
	close(fd);
	assert_null(agent_config__load(5, argv, err, sizeof(err)));
	unlink(path);
	snprintf(msg, sizeof(msg),
		 "%s: with the flags: max_value_len: labels x (4 + key + value) must be at most "
		 "%d bytes: 32 x (4 + %d + 1000) is %d",
		 path, LP_MAX_LABEL_BYTES, LP_DEFAULT_MAX_KEY_LEN,
		 32 * (4 + LP_DEFAULT_MAX_KEY_LEN + 1000));
	assert_string_equal(err, msg);
}

static void test_load_errors(void **state)
{
	char *missing[] = {"labelprof agent", "--config", "/nonexistent/agent.conf", NULL};
	char *nothing[] = {"labelprof agent", NULL};

	assert_null(agent_config__load(3, missing, err, sizeof(err)));
	assert_string_equal(err, "cannot read /nonexistent/agent.conf: No such file or directory");
	assert_null(agent_config__load(1, nothing, err, sizeof(err)));
	assert_string_equal(err, "nothing to do: give --output-dir DIR or --otlp-endpoint URL (or a "
				 "--config file that sets output_dir or otlp_endpoint)");
}

/* labels: patterns to keep, or a boolean (read labels or not); drop_labels: patterns. */
static void test_label_selection(void **state)
{
	char path[] = "/tmp/test_agent_config.XXXXXX";
	int fd = mkstemp(path);
	char *argv[] = {"labelprof agent", "--config", path, "--drop-labels", "step", NULL};
	struct agent_config *c = parse("labels = ten*, endpoint\ndrop_labels = request_id\n"), *d;

	assert_non_null(c);
	assert_true(c->sampling.opts.read_labels);
	assert_string_equal(c->keep_labels, "ten*, endpoint");
	assert_string_equal(c->drop_labels, "request_id");
	d = parse("labels = no\n");
	assert_non_null(d);
	assert_false(d->sampling.opts.read_labels);
	assert_null(d->keep_labels);
	assert_false(agent_config__same_labels(c, d));
	agent_config__put(d);
	expect_error("labels = a,,b\n", "agent.conf:1: labels: empty pattern in 'a,,b'");
	expect_error("\ndrop_labels = [x\n", "agent.conf:2: drop_labels: unclosed [ in '[x'");
	agent_config__put(c);

	/* loaded with flags, the selection is made: flags win over the file */
	assert_true(fd >= 0);
	dprintf(fd, "output_dir = /tmp\nlabels = tenant,step\ndrop_labels = request_id\n");
	close(fd);
	c = agent_config__load(5, argv, err, sizeof(err));
	unlink(path);
	if (!c)
		fail_msg("%s", err);
	assert_non_null(c->labelsel);
	assert_true(labelsel__keeps(c->labelsel, "tenant", 6));
	assert_false(labelsel__keeps(c->labelsel, "step", 4));
	assert_false(labelsel__keeps(c->labelsel, "endpoint", 8));
	assert_false(labelsel__keeps(c->labelsel, "request_id", 10));
	agent_config__put(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_errors_name_line_and_key),
		cmocka_unit_test(test_sampling_bounds),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_empty_unsets),
		cmocka_unit_test(test_listen_forms),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_same_sampling),
		cmocka_unit_test(test_load_flags_override_file),
		cmocka_unit_test(test_load_joint_bound),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_label_selection),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
