// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The report: processes first, each with its resource attributes on one
 * line (not as label sections of their own), then the label keys that
 * explain the most CPU first and a folded key last; a runtime's frames
 * marked by their kind, in the report as in folded output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format/output.h"
#include "profile/symprof.h"

#define S(sp, lit) symprof__cstring(sp, lit)

static __u32 stack_of(struct symprof *sp, const char *function)
{
	struct sp_function fn = {.name = S(sp, function)};
	struct sp_line line = {.function = symprof__function(sp, &fn)};
	struct sp_location loc = {.address = 0x1000 + strlen(function),
				  .module_offset = SP_UNKNOWN,
				  .function_offset = SP_UNKNOWN};
	__u32 id = symprof__location(sp, &loc, &line, 1);

	return symprof__stack(sp, &id, 1);
}

static void sample(struct symprof *sp, __u32 pid, const char *comm, const struct sp_label *l,
		   size_t n, const char *function, __u64 count)
{
	struct sp_sample s = {.pid = pid,
			      .tid = pid,
			      .comm = S(sp, comm),
			      .label_set = symprof__label_set(sp, l, n),
			      .stack = stack_of(sp, function),
			      .count = count};

	assert_int_equal(symprof__add_sample(sp, &s), 0);
}

static char *report(const struct symprof *sp, unsigned int max_label_values)
{
	struct output_opts opts = {.max_label_values = max_label_values};
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(output__write_report(f, sp, &opts), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

/* Where the line that starts with start, then spaces, then more starts in text, or -1. */
static long line_at(const char *text, const char *start, const char *more)
{
	size_t n = strlen(start);
	const char *p;

	for (p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, start, n) && p[n] == ' ' &&
		    !strncmp(p + n + strspn(p + n, " "), more, strlen(more)))
			return p - text;
	return -1;
}

/* Where the section of key starts, or -1. */
static long section(const char *text, const char *key)
{
	return line_at(text, key, "share  samples  hottest functions\n");
}

/*
 * Process 10 "shop" serves requests (tenant, request_id; step on a few) and
 * has a process context; process 20 "batch", busier, has only its process
 * context: eight resource attributes a label section each would drown the
 * shop's labels in "(not set)".
 */
static void test_report_processes_and_key_order(void **state)
{
	static const char *const attrs[] = {
		"deployment.environment", "host.arch",	     "os.type",
		"process.runtime.name",	  "service.version", "telemetry.sdk.language",
		"telemetry.sdk.name",	  "service.name"};
	struct symprof *sp = symprof__new();
	struct sp_process shop = {.pid = 10}, batch = {.pid = 20};
	struct sp_label l[12];
	char id[16], *text;
	size_t i, n;
	long procs, tenant, request, step, row20, row10;

	(void)state;
	assert_non_null(sp);
	shop.name = S(sp, "shop");
	shop.container_id = S(sp, "c0ffee");
	batch.name = S(sp, "batch");
	assert_int_equal(symprof__set_process(sp, &shop), 0);
	assert_int_equal(symprof__set_process(sp, &batch), 0);
	for (i = 0; i < 8; i++) {
		n = 0;
		snprintf(id, sizeof(id), "req-%zu", i);
		l[n++] = (struct sp_label){S(sp, "tenant"), S(sp, i % 2 ? "acme" : "globex"),
					   LP_SRC_CUSTOM_LABELS};
		l[n++] = (struct sp_label){S(sp, "request_id"), S(sp, id), LP_SRC_CUSTOM_LABELS};
		if (i < 2)
			l[n++] = (struct sp_label){S(sp, "step"), S(sp, "parse"),
						   LP_SRC_CUSTOM_LABELS};
		l[n++] = (struct sp_label){S(sp, "service.name"), S(sp, "shop"),
					   LP_SRC_OTEL_PROCESS};
		sample(sp, 10, "shop-worker", l, n, i % 2 ? "compute_tax" : "render", 5);
	}
	for (i = 0; i < 8; i++)
		l[i] = (struct sp_label){S(sp, attrs[i]), S(sp, i == 7 ? "batch" : "x"),
					 LP_SRC_OTEL_PROCESS};
	sample(sp, 20, "batch", l, 8, "crunch", 60);
	assert_int_equal(symprof__error(sp), 0);

	text = report(sp, 4);
	print_message("%s", text);
	/* the shop's 40 samples carry labels, the batch's 60 only describe it */
	assert_non_null(
		strstr(text, "100 samples in 0.0 s at 0 Hz per CPU, 40 with labels (40.0%)"));
	procs = section(text, "Processes");
	row20 = line_at(text, "  20 batch", "60.0%");
	row10 = line_at(text, "  10 shop", "40.0%");
	assert_true(procs > 0 && procs < row20 && row20 < row10);
	assert_non_null(strstr(text,
			       "60  crunch 100%\n"
			       "    deployment.environment=x, host.arch=x, os.type=x, "
			       "process.runtime.name=x, service.name=batch, service.version=x, "
			       "telemetry.sdk.language=x, telemetry.sdk.name=x\n"));
	assert_non_null(strstr(text, "\n    service.name=shop, container.id=c0ffee\n"));
	/* no section per resource attribute */
	for (i = 0; i < 8; i++)
		assert_int_equal(section(text, attrs[i]), -1);
	/* set on every shop sample, tenant explains more than step; request_id is folded: last */
	tenant = section(text, "tenant");
	step = section(text, "step");
	request = section(text, "request_id");
	assert_true(row10 < tenant && tenant < step && step < request);
	assert_non_null(strstr(text, "request_id has 8 values, shown as request_id=*"));
	free(text);
	symprof__free(sp);
}

/*
 * A runtime's frames are marked by their kind, in the report (" [py]",
 * " [java]", " [js]") as in folded output ("_[py]", "_[j]", "_[js]").
 */
static void test_runtime_frame_marks(void **state)
{
	static const char *const names[] = {[FRAME_NATIVE] = "main",
					    [FRAME_PYTHON] = "burn",
					    [FRAME_JAVA] = "Burn.spin",
					    [FRAME_JS] = "spin"};
	struct symprof *sp = symprof__new();
	struct sp_sample s = {.pid = 1, .tid = 1, .comm = S(sp, "node"), .count = 4};
	__u32 locs[FRAME_JS + 1], kind;
	char *text, *folded = NULL;
	size_t len;
	FILE *f;

	for (kind = FRAME_NATIVE; kind <= FRAME_JS; kind++) {
		struct sp_function fn = {.name = S(sp, names[kind])};
		struct sp_line line = {.function = symprof__function(sp, &fn)};
		struct sp_location loc = {.kind = kind,
					  .address = 0xb000000000000000ull + kind,
					  .module_offset = SP_UNKNOWN,
					  .function_offset = SP_UNKNOWN};

		/* leaf first: the JavaScript frame, main last */
		locs[FRAME_JS - kind] = symprof__location(sp, &loc, &line, 1);
	}
	s.stack = symprof__stack(sp, locs, FRAME_JS + 1);
	assert_int_equal(symprof__add_sample(sp, &s), 0);

	text = report(sp, 0);
	if (!strstr(text, "spin [js] < Burn.spin [java] < burn [py] < main\n"))
		fail_msg("report without its frames' kinds:\n%s", text);
	free(text);
	f = open_memstream(&folded, &len);
	assert_non_null(f);
	assert_int_equal(output__write_folded(f, sp, NULL), 0);
	assert_int_equal(fclose(f), 0);
	if (!strstr(folded, ";main;burn_[py];Burn.spin_[j];spin_[js] 4\n"))
		fail_msg("folded output without its frames' kinds:\n%s", folded);
	free(folded);
	symprof__free(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_processes_and_key_order),
		cmocka_unit_test(test_runtime_frame_marks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
