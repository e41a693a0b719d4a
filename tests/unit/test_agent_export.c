// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The agent's sender: retry delays, which refusals are retried, the metrics
 * text, and an interval that cannot be delivered staying in the spool.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_config.h"
#include "agent_export.h"
#include "agent_metrics.h"
#include "agent_spool.h"

#define S  1000000000ull
#define MS 1000000ull

static void test_backoff(void **state)
{
	/* without jitter (rnd 0): doubling from the initial delay, capped */
	assert_int_equal(export_backoff_ns(1, S, 60 * S, 0), S);
	assert_int_equal(export_backoff_ns(2, S, 60 * S, 0), 2 * S);
	assert_int_equal(export_backoff_ns(3, S, 60 * S, 0), 4 * S);
	assert_int_equal(export_backoff_ns(6, S, 60 * S, 0), 32 * S);
	assert_int_equal(export_backoff_ns(7, S, 60 * S, 0), 60 * S);
	assert_int_equal(export_backoff_ns(1000000, S, 60 * S, 0), 60 * S);
	/* no overflow near the top of the range */
	assert_int_equal(export_backoff_ns(200, UINT64_MAX / 3, UINT64_MAX - 1, 0), UINT64_MAX - 1);
	/* an initial delay past the cap is capped */
	assert_int_equal(export_backoff_ns(1, 10 * S, S, 0), S);
}

static void test_backoff_jitter(void **state)
{
	__u64 d, lo = UINT64_MAX, hi = 0, r;

	/* jitter shortens by at most half, never lengthens */
	for (r = 0; r < 100000; r += 7) {
		d = export_backoff_ns(3, S, 60 * S, r * 2654435761u);
		assert_true(d >= 2 * S && d <= 4 * S);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	/* and it spreads */
	assert_true(hi - lo > S);
	assert_int_equal(export_backoff_ns(1, 1, 1, 12345), 1);
}

static void test_retryable(void **state)
{
	static const long retry[] = {408, 429, 502, 503, 504};
	static const long never[] = {400, 401, 403, 404, 405, 413, 415, 500, 501, 505};
	size_t i;

	for (i = 0; i < sizeof(retry) / sizeof(retry[0]); i++)
		assert_true(export_status_retryable(retry[i]));
	for (i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		assert_false(export_status_retryable(never[i]));
}

static void test_metrics_text(void **state)
{
	static const char *const names[] = {
		"labelprof_samples_total",	  "labelprof_samples_with_labels_total",
		"labelprof_ringbuf_drops_total",  "labelprof_label_read_faults_total",
		"labelprof_processes_tracked",	  "labelprof_intervals_total",
		"labelprof_export_success_total", "labelprof_export_failure_total",
		"labelprof_spool_bytes",	  "labelprof_spool_dropped_total",
		"process_cpu_seconds_total",	  "process_resident_memory_bytes",
	};
	struct agent_stats st = {.samples = 1234, .export_failure = 7, .spool_bytes = 99};
	char buf[8192], small[16], line[128];
	size_t n = metrics__render(&st, 1.5, 4096, buf, sizeof(buf)), i;

	assert_true(n < sizeof(buf));
	assert_int_equal(strlen(buf), n);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(line, sizeof(line), "# HELP %s ", names[i]);
		assert_non_null(strstr(buf, line));
		snprintf(line, sizeof(line), "# TYPE %s %s\n", names[i],
			 strstr(names[i], "_total") ? "counter" : "gauge");
		assert_non_null(strstr(buf, line));
	}
	assert_non_null(strstr(buf, "\nlabelprof_samples_total 1234\n"));
	assert_non_null(strstr(buf, "\nlabelprof_export_failure_total 7\n"));
	assert_non_null(strstr(buf, "\nlabelprof_spool_bytes 99\n"));
	assert_non_null(strstr(buf, "\nprocess_cpu_seconds_total 1.50\n"));
	assert_non_null(strstr(buf, "\nprocess_resident_memory_bytes 4096\n"));
	assert_int_equal(buf[n - 1], '\n');
	/* too small a buffer: cut, terminated, and the length needed comes back */
	assert_int_equal(metrics__render(&st, 1.5, 4096, small, sizeof(small)), n);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

static void test_metrics_self(void **state)
{
	double cpu = -1;
	__u64 rss = 0;

	assert_int_equal(metrics__self(&cpu, &rss), 0);
	assert_true(cpu >= 0);
	assert_true(rss > 0);
}

static size_t count_files(const char *path, const char *suffix)
{
	DIR *d = opendir(path);
	struct dirent *de;
	size_t n = 0, len;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		len = strlen(de->d_name);
		n += de->d_name[0] != '.' && len > strlen(suffix) &&
		     !strcmp(de->d_name + len - strlen(suffix), suffix);
	}
	closedir(d);
	return n;
}

/* Nothing listens on port 1: every attempt fails, the interval stays spooled. */
static void test_undeliverable_stays_spooled(void **state)
{
	char dir[] = "/tmp/test_agent_export.XXXXXX", text[1024], spool_dir[128], err[256];
	struct agent_stats st = {};
	struct agent_config *c;
	struct export_job job;
	struct exporter *e;
	struct spool *sp;
	__u64 dropped = 0;

	assert_non_null(mkdtemp(dir));
	snprintf(spool_dir, sizeof(spool_dir), "%s/spool", dir);
	snprintf(text, sizeof(text),
		 "output_dir = %s\nformats = pprof,otlp\notlp_endpoint = http://127.0.0.1:1\n"
		 "otlp_timeout = 500ms\notlp_retry_initial = 50ms\notlp_retry_max = 100ms\n"
		 "spool_dir = %s\n",
		 dir, spool_dir);
	c = agent_config__parse_string(text, "test", err, sizeof(err));
	assert_non_null(c);
	sp = spool__open(c->spool_dir, c->max_spool_bytes, &dropped, err, sizeof(err));
	assert_non_null(sp);
	e = exporter__start(c, sp, &st, err, sizeof(err));
	assert_non_null(e);

	job = (struct export_job){.start_ns = 1700000000123456789ull,
				  .pprof = strdup("pprof bytes"),
				  .pprof_len = 11,
				  .otlp = strdup("otlp bytes"),
				  .otlp_len = 10};
	exporter__submit(e, &job);
	assert_null(job.pprof);
	usleep(500000);
	exporter__stop(e);
	agent_config__put(c);

	/* both files written, named after the interval's start (UTC) */
	assert_int_equal(count_files(dir, "-20231114T221320.123Z.pb.gz"), 1);
	assert_int_equal(count_files(dir, "-20231114T221320.123Z.otlp.pb"), 1);
	/* retried, then left in the spool, compressed */
	assert_true(stats__get(&st.export_failure) >= 2);
	assert_int_equal(stats__get(&st.export_success), 0);
	assert_int_equal(stats__get(&st.spool_intervals), 1);
	assert_int_equal(stats__get(&st.spool_dropped), 0);
	assert_int_equal(count_files(spool_dir, "-01700000000123456789.otlp.gz"), 1);
	snprintf(text, sizeof(text), "rm -rf %s", dir);
	assert_int_equal(system(text), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_backoff_jitter),
		cmocka_unit_test(test_retryable),
		cmocka_unit_test(test_metrics_text),
		cmocka_unit_test(test_metrics_self),
		cmocka_unit_test(test_undeliverable_stays_spooled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
