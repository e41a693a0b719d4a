// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * demo: a pretend multi-tenant web service, labelled with libcustomlabels.
 * Worker threads serve requests for three tenants on three endpoints; each
 * request carries tenant, endpoint and request_id labels, and the checkout's
 * tax step adds step=tax through custom_labels_run_with(). The work differs
 * by endpoint and tenant, so a label-aware profile tells a story:
 *   /checkout  render_template + compute_tax  (globex's tax rules are slow)
 *   /search    search_index + render_template (globex's index is big)
 *   /login     hash_password                  (initech hashes hardest)
 */
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "customlabels.h"
#include "workload.h"

#define MAX_THREADS 64

enum { ACME, GLOBEX, INITECH, NTENANTS };
enum { CHECKOUT, SEARCH, LOGIN, NENDPOINTS };

static const char *const tenants[NTENANTS] = { "acme", "globex", "initech" };
static const char *const endpoints[NENDPOINTS] = { "/checkout", "/search", "/login" };
/* Share of traffic per tenant, and per endpoint within a tenant (percent). */
static const unsigned int tenant_share[NTENANTS] = { 50, 30, 20 };
static const unsigned int endpoint_share[NTENANTS][NENDPOINTS] = {
	{ 40, 50, 10 },
	{ 30, 60, 10 },
	{ 20, 30, 50 },
};

static struct {
	unsigned int threads;
	double duration;
	uint64_t idle_us, iters_per_us;
	bool quiet;
} env = { .threads = 4, .idle_us = 200 };

static uint64_t next_request_id;
static uint64_t served[NTENANTS][NENDPOINTS];

static WL_BURN uint64_t render_template(uint64_t us)
{
	return wl_spin(us * env.iters_per_us, 0x4000);
}

static WL_BURN uint64_t compute_tax(uint64_t us)
{
	return wl_spin(us * env.iters_per_us, 0x4001);
}

static WL_BURN uint64_t search_index(uint64_t us)
{
	return wl_spin(us * env.iters_per_us, 0x4002);
}

static WL_BURN uint64_t hash_password(uint64_t us)
{
	return wl_spin(us * env.iters_per_us, 0x4003);
}

struct tax_call {
	uint64_t us;
};

static void tax_step(void *arg)
{
	compute_tax(((struct tax_call *)arg)->us);
}

static WL_BURN void handle_checkout(unsigned int tenant)
{
	static const struct custom_labels_kv step = { "step", 4, "tax", 3 };
	struct tax_call tax = { .us = tenant == GLOBEX ? 1200 : 400 };

	render_template(150);
	if (custom_labels_run_with(&step, 1, tax_step, &tax))
		compute_tax(tax.us);
}

static WL_BURN void handle_search(unsigned int tenant)
{
	search_index(tenant == GLOBEX ? 1800 : 600);
	render_template(100);
}

static WL_BURN void handle_login(unsigned int tenant)
{
	hash_password(tenant == INITECH ? 2500 : 1200);
}

static unsigned int pick(const unsigned int *shares, unsigned int n, unsigned int r)
{
	for (unsigned int i = 0; i < n; i++) {
		if (r < shares[i])
			return i;
		r -= shares[i];
	}
	return n - 1;
}

static WL_BURN void serve_request(unsigned int *seed)
{
	unsigned int tenant = pick(tenant_share, NTENANTS, (unsigned int)rand_r(seed) % 100);
	unsigned int endpoint = pick(endpoint_share[tenant], NENDPOINTS,
				     (unsigned int)rand_r(seed) % 100);
	char id[32];

	snprintf(id, sizeof(id), "req-%06llu",
		 (unsigned long long)__atomic_add_fetch(&next_request_id, 1, __ATOMIC_RELAXED));
	custom_labels_set_str("tenant", tenants[tenant]);
	custom_labels_set_str("endpoint", endpoints[endpoint]);
	custom_labels_set_str("request_id", id);
	switch (endpoint) {
	case CHECKOUT:
		handle_checkout(tenant);
		break;
	case SEARCH:
		handle_search(tenant);
		break;
	default:
		handle_login(tenant);
		break;
	}
	custom_labels_clear();
	__atomic_add_fetch(&served[tenant][endpoint], 1, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 2654435761u + 1;

	while (!wl_stopping()) {
		serve_request(&seed);
		if (env.idle_us)
			usleep((useconds_t)env.idle_us);
	}
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: demo [-t THREADS] [-d SECONDS] [--idle-us N] [-q]\n"
		   "  -t, --threads N   worker threads (default 4)\n"
		   "  -d, --duration S  stop after S seconds (default: run until interrupted)\n"
		   "      --idle-us N   pause between a worker's requests (default 200)\n"
		   "  -q, --quiet       no summary at exit\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "duration", required_argument, NULL, 'd' },
		{ "idle-us", required_argument, NULL, 'I' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	pthread_t threads[MAX_THREADS];
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "t:d:qh", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			env.threads = (unsigned int)wl_parse_u64(optarg, "thread count");
			if (!env.threads || env.threads > MAX_THREADS)
				wl_die("demo: --threads must be 1-%d", MAX_THREADS);
			break;
		case 'd':
			env.duration = strtod(optarg, &end);
			if (*end || env.duration < 0)
				wl_die("demo: invalid duration '%s'", optarg);
			break;
		case 'I':
			env.idle_us = wl_parse_u64(optarg, "idle time");
			break;
		case 'q':
			env.quiet = true;
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
		wl_die("demo: unexpected argument '%s'", argv[optind]);

	wl_install_stop_handlers();
	env.iters_per_us = wl_calibrate();
	for (unsigned int i = 0; i < env.threads; i++) {
		int err = pthread_create(&threads[i], NULL, worker, (void *)(uintptr_t)i);

		if (err)
			wl_die("demo: pthread_create: %s", strerror(err));
	}
	if (!env.quiet)
		fprintf(stderr, "demo: serving acme, globex and initech on %u threads (pid %d)\n",
			env.threads, (int)getpid());
	wl_ready("demo");
	wl_wait(env.duration, false);
	for (unsigned int i = 0; i < env.threads; i++)
		pthread_join(threads[i], NULL);

	if (!env.quiet) {
		fprintf(stderr, "demo: requests served\n");
		for (int t = 0; t < NTENANTS; t++)
			for (int e = 0; e < NENDPOINTS; e++)
				fprintf(stderr, "  %-8s %-10s %llu\n", tenants[t], endpoints[e],
					(unsigned long long)served[t][e]);
	}
	return 0;
}
