// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cost of libcustomlabels' calls on a warm thread, in ns per call, beside the
 * docs/design.md budgets. Each figure is the best of several rounds (least disturbed
 * by the rest of the machine).
 *   bench_customlabels [--json] [--rounds N]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "customlabels.h"

/* Exported by the library; says which ABI this binary was linked with. */
extern const uint32_t custom_labels_abi_version;

#define BASE_LABELS 4 /* labels present while measuring, as in a typical service */
#define BATCH	    8 /* new keys added (then deleted) per timed batch */
#define ITERS	    200000

struct result {
	const char *op;
	const char *what;
	double ns;
	double budget_ns; /* 0: none */
};

static const char *const new_keys[BATCH] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"};

static volatile int sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "bench_customlabels: %s: %s\n", what, strerror(-err));
		exit(1);
	}
}

static void empty_fn(void *arg)
{
	sink++;
}

/* ns per set of a new key and per delete, timed in separate batches. */
static void bench_set_new_delete(double *set_ns, double *del_ns)
{
	uint64_t t0, t1, t2, set_total = 0, del_total = 0;
	int i, k;

	for (i = 0; i < ITERS / BATCH; i++) {
		t0 = now_ns();
		for (k = 0; k < BATCH; k++)
			custom_labels_set(new_keys[k], 2, "value", 5);
		t1 = now_ns();
		for (k = 0; k < BATCH; k++)
			custom_labels_delete(new_keys[k], 2);
		t2 = now_ns();
		set_total += t1 - t0;
		del_total += t2 - t1;
	}
	*set_ns = (double)set_total / ITERS;
	*del_ns = (double)del_total / ITERS;
}

static double bench_overwrite(void)
{
	static const char *const values[2] = {"GET /api/v1/users", "GET /api/v1/items"};
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < ITERS; i++)
		custom_labels_set("endpoint", 8, values[i & 1], 17);
	return (double)(now_ns() - t0) / ITERS;
}

static double bench_get(void)
{
	const unsigned char *v;
	size_t len;
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < ITERS; i++)
		sink += custom_labels_get("tenant", 6, &v, &len);
	return (double)(now_ns() - t0) / ITERS;
}

static double bench_swap(struct custom_labels_labelset *a, struct custom_labels_labelset *b)
{
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < ITERS; i += 2) {
		custom_labels_swap(a);
		custom_labels_swap(b);
	}
	return (double)(now_ns() - t0) / ITERS;
}

static double bench_run_with(void)
{
	const struct custom_labels_kv kv = {"span", 4, "0123456789abcdef", 16};
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < ITERS; i++)
		custom_labels_run_with(&kv, 1, empty_fn, NULL);
	return (double)(now_ns() - t0) / ITERS;
}

/* Installing a prepared OpenTelemetry thread context record, and back. */
static double bench_otel_attach(struct custom_labels_otel_record *a,
				struct custom_labels_otel_record *b)
{
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < ITERS; i += 2) {
		custom_labels_otel_attach(a);
		custom_labels_otel_attach(b);
	}
	return (double)(now_ns() - t0) / ITERS;
}

/* Filling a record for a new span: ids and three attributes. */
static double bench_otel_fill(struct custom_labels_otel_record *r)
{
	static const unsigned char trace[16] = {0x4b, 0xf9, 0x2f, 0x35}, span[8] = {0xb7};
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < ITERS; i++) {
		sink += custom_labels_otel_record_init(r, trace, span, 1);
		sink += custom_labels_otel_record_add(r, 0, "GET /api/v1/users", 17);
		sink += custom_labels_otel_record_add(r, 1, "acme-corp", 9);
		sink += custom_labels_otel_record_add(r, 2, "eu-west-1", 9);
	}
	return (double)(now_ns() - t0) / ITERS;
}

/* Publishing (updating) the process context: resource attributes and a key map. */
static double bench_otel_publish(void)
{
	static const struct custom_labels_otel_attr res[] = {
		{"service.name", "checkout"},
		{"service.instance.id", "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"},
		{"deployment.environment.name", "prod"},
	};
	static const char *const keys[] = {"http.route", "tenant", "cloud.region"};
	const int n = ITERS / 100;
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < n; i++)
		check(custom_labels_otel_publish(res, 3, keys, 3), "otel_publish");
	return (double)(now_ns() - t0) / n;
}

static void set_base(void)
{
	check(custom_labels_clear(), "clear");
	check(custom_labels_set_str("tenant", "acme-corp"), "set");
	check(custom_labels_set_str("endpoint", "GET /api/v1/users"), "set");
	check(custom_labels_set_str("region", "eu-west-1"), "set");
	check(custom_labels_set_str("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736"), "set");
}

static struct custom_labels_labelset *prepared(const char *tenant)
{
	struct custom_labels_labelset *set = custom_labels_labelset_new();

	if (!set) {
		fprintf(stderr, "bench_customlabels: labelset_new: %s\n", strerror(errno));
		exit(1);
	}
	check(custom_labels_labelset_set_str(set, "tenant", tenant), "labelset_set");
	check(custom_labels_labelset_set_str(set, "endpoint", "GET /api/v1/users"), "labelset_set");
	return set;
}

static double min_d(double a, double b)
{
	return a < b ? a : b;
}

int main(int argc, char **argv)
{
	struct custom_labels_labelset *a = prepared("acme-corp"), *b = prepared("globex");
	struct result r[] = {
		{"set_new", "set a new key (4 labels present)", 1e9, 20},
		{"set_overwrite", "set an existing key", 1e9, 20},
		{"delete", "delete a key", 1e9, 0},
		{"get", "get a key", 1e9, 0},
		{"swap", "swap a prepared set", 1e9, 5},
		{"run_with", "run_with one label, empty fn", 1e9, 0},
		{"otel_attach", "attach an OTel thread context record", 1e9, 5},
		{"otel_fill", "fill a record: ids and 3 attributes", 1e9, 0},
		{"otel_publish", "update the OTel process context", 1e9, 0},
	};
	static struct custom_labels_otel_record ra, rb;
	const size_t nr = sizeof(r) / sizeof(r[0]);
	int i, rounds = 7, json = 0;
	size_t j;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--json] [--rounds N]\n", argv[0]);
			return 2;
		}
	}
	if (rounds < 1)
		rounds = 1;

	for (i = 0; i < rounds; i++) {
		double set_ns, del_ns;

		set_base();
		bench_set_new_delete(&set_ns, &del_ns);
		r[0].ns = min_d(r[0].ns, set_ns);
		r[2].ns = min_d(r[2].ns, del_ns);
		r[1].ns = min_d(r[1].ns, bench_overwrite());
		r[3].ns = min_d(r[3].ns, bench_get());
		r[5].ns = min_d(r[5].ns, bench_run_with());
		r[4].ns = min_d(r[4].ns, bench_swap(a, b));
		r[7].ns = min_d(r[7].ns, bench_otel_fill(&rb));
		r[6].ns = min_d(r[6].ns, bench_otel_attach(&ra, &rb));
		r[8].ns = min_d(r[8].ns, bench_otel_publish());
	}
	custom_labels_otel_attach(NULL);
	custom_labels_otel_unpublish();
	custom_labels_swap(NULL);
	custom_labels_labelset_free(a);
	custom_labels_labelset_free(b);

	printf("libcustomlabels (ABI v%u), ns per call, best of %d rounds of %d calls\n",
	       custom_labels_abi_version, rounds, ITERS);
	printf("%-14s %-36s %8s %8s\n", "op", "what", "ns", "budget");
	for (j = 0; j < nr; j++) {
		char budget[16] = "-";

		if (r[j].budget_ns)
			snprintf(budget, sizeof(budget), "%.0f", r[j].budget_ns);
		printf("%-14s %-36s %8.1f %8s%s\n", r[j].op, r[j].what, r[j].ns, budget,
		       r[j].budget_ns && r[j].ns > r[j].budget_ns ? "  OVER BUDGET" : "");
	}
	if (json) {
		for (j = 0; j < nr; j++) {
			printf("{\"bench\":\"customlabels\",\"abi\":%u,\"op\":\"%s\",\"ns\":%.2f",
			       custom_labels_abi_version, r[j].op, r[j].ns);
			if (r[j].budget_ns)
				printf(",\"budget_ns\":%.0f", r[j].budget_ns);
			printf("}\n");
		}
	}
	return 0;
}
