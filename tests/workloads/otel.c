// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * otel: threads that switch OpenTelemetry thread contexts (OTEP 4947, through
 * libcustomlabels) every few milliseconds and burn CPU in one function per
 * context (burn_ctx_K; burn_unlabelled with none), in a process that
 * publishes a process context (OTEP 4719) naming the attribute keys and its
 * resource attributes. The report has groundtruth's layout: per context the
 * exact labels a reader must see (attributes by name, trace and span ids in
 * hex, the resource attributes), its CPU time, and every interval. A key
 * index that comes twice counts by its last entry; one the key map does not
 * name is no label.
 *
 * --hostile switches between records a reader must survive instead: a
 * garbage pointer, a record larger than the recommended 640 bytes, valid = 0,
 * an entry cut short, and a short record ending at an unmapped page. Built as
 * otel-lib (libcustomlabels.so, TLSDESC) and otel-exe (static, the
 * executable's TLS).
 */
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "customlabels.h"
#include "workload.h"

#define MAX_CTX	    6
#define UNLABELLED  MAX_CTX
#define MAX_THREADS 16
#define MAX_ATTRS   4

static const char *const key_map[] = {"http.route", "tenant", "user.id", "db.system"};
/* A key index the map does not name: readers leave it out. */
#define UNNAMED_KEY 9
#define NKEYS	    (sizeof(key_map) / sizeof(key_map[0]))

static const struct custom_labels_otel_attr resource[] = {
	{"service.name", "otel-groundtruth"},
	{"service.instance.id", "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"},
	{"deployment.environment.name", "test"},
};

struct attr {
	int key; /* key index; -1: end */
	const char *value;
};

/* A context: ids (NULL: none) and attributes; or a hostile record. */
struct ctx {
	const char *trace_hex, *span_hex;
	struct attr attrs[MAX_ATTRS];
};

static const struct ctx contexts[] = {
	{"4bf92f3577b34da6a3ce929d0e0e4736",
	 "00f067aa0ba902b7",
	 {{0, "/checkout"}, {1, "acme"}, {-1, NULL}}},
	{"4bf92f3577b34da6a3ce929d0e0e4736",
	 "a1b2c3d4e5f60718",
	 {{0, "/checkout"}, {1, "globex"}, {-1, NULL}}},
	{"0af7651916cd43dd8448eb211c80319c",
	 "b7ad6b7169203331",
	 {{1, "initech"}, {1, "acme"}, {-1, NULL}}}, /* the last tenant counts */
	{NULL, NULL, {{2, "42"}, {3, "postgresql"}, {UNNAMED_KEY, "x"}, {-1, NULL}}},
};
#define NCTX (sizeof(contexts) / sizeof(contexts[0]))

enum hostile { H_GARBAGE, H_LARGE, H_INVALID, H_PARTIAL, H_SHORT, H_COUNT };
static const char *const hostile_names[H_COUNT] = {"garbage_pointer", "large_record", "not_valid",
						   "entry_cut_short", "short_record_at_page_end"};

/*
 * large_record: 1200 bytes. Past the 640 a reader reads, an entry that
 * crosses that boundary and one past it; user.id twice before it.
 */
#define LARGE_SIZE  1200
#define LARGE_VALUE 200
#define LARGE_ROUTE 250

#define BURN(k)                                                                                    \
	static WL_BURN uint64_t burn_ctx_##k(uint64_t iters)                                       \
	{                                                                                          \
		return wl_spin(iters, 0x3000 + k);                                                 \
	}
BURN(0)
BURN(1)
BURN(2)
BURN(3)
BURN(4)
BURN(5)

static WL_BURN uint64_t burn_unlabelled(uint64_t iters)
{
	return wl_spin(iters, 0x4000);
}

static uint64_t (*const burn_fns[MAX_CTX + 1])(uint64_t) = {
	burn_ctx_0, burn_ctx_1, burn_ctx_2, burn_ctx_3, burn_ctx_4, burn_ctx_5, burn_unlabelled,
};

static struct {
	unsigned int threads, nctx;
	uint64_t min_us, max_us, iters_per_us;
	struct wl_run run;
	bool hostile;
} env = {.threads = 2, .min_us = 1000, .max_us = 5000};

struct interval {
	int32_t ctx;
	uint64_t start_unix_ns, end_unix_ns, cpu_ns;
};

struct worker {
	pthread_t thread;
	int tid;
	uint64_t rng;
	struct custom_labels_otel_record *rec[MAX_CTX];
	void *short_page;
	uint64_t cpu_ns[MAX_CTX + 1];
	struct interval *iv;
	size_t niv, cap;
};

static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void unhex(unsigned char *out, const char *hex, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned int b;

		sscanf(hex + 2 * i, "%2x", &b);
		out[i] = (unsigned char)b;
	}
}

static void fill(struct custom_labels_otel_record *r, const struct ctx *c)
{
	unsigned char trace[16], span[8];
	int err;

	if (c->trace_hex) {
		unhex(trace, c->trace_hex, sizeof(trace));
		unhex(span, c->span_hex, sizeof(span));
	}
	if (custom_labels_otel_record_init(r, c->trace_hex ? trace : NULL,
					   c->trace_hex ? span : NULL, 1))
		wl_die("otel: custom_labels_otel_record_init failed");
	for (const struct attr *a = c->attrs; a->key >= 0; a++)
		if ((err = custom_labels_otel_record_add(r, (unsigned char)a->key, a->value,
							 strlen(a->value))))
			wl_die("otel: custom_labels_otel_record_add failed (%d)", err);
}

/* Appends the entry { key, len, byte x len } at *at of attrs. */
static void put_entry(unsigned char *attrs, size_t *at, unsigned char key, unsigned char byte,
		      size_t len)
{
	attrs[*at] = key;
	attrs[*at + 1] = (unsigned char)len;
	memset(attrs + *at + 2, byte, len);
	*at += 2 + len;
}

static struct custom_labels_otel_record *make_large(const struct ctx *c)
{
	struct custom_labels_otel_record *r = calloc(1, LARGE_SIZE);
	unsigned char *attrs = (unsigned char *)r + CUSTOM_LABELS_OTEL_HEADER_SIZE;
	size_t at;

	if (!r)
		wl_die("otel: out of memory");
	fill(r, c); /* tenant=acme */
	at = r->attrs_data_size;
	put_entry(attrs, &at, 2, 'a', LARGE_VALUE);
	put_entry(attrs, &at, 2, 'b', LARGE_VALUE);
	/* http.route from byte 438 to 690, then db.system */
	put_entry(attrs, &at, 0, '/', LARGE_ROUTE);
	put_entry(attrs, &at, 3, 'p', 10);
	if (CUSTOM_LABELS_OTEL_HEADER_SIZE + at > LARGE_SIZE)
		wl_die("otel: the large record overflows");
	r->attrs_data_size = (unsigned short)(LARGE_SIZE - CUSTOM_LABELS_OTEL_HEADER_SIZE);
	return r;
}

/* The records a reader must survive, by enum hostile. */
static void make_hostile(struct worker *w)
{
	static const struct ctx one = {
		"4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", {{1, "acme"}, {-1, NULL}}};
	struct custom_labels_otel_record *r;
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *p;
	size_t size;

	free(w->rec[H_GARBAGE]);
	w->rec[H_GARBAGE] = (void *)(uintptr_t)0x10; /* never mapped */
	free(w->rec[H_LARGE]);
	w->rec[H_LARGE] = make_large(&one);
	fill(w->rec[H_INVALID], &one);
	w->rec[H_INVALID]->valid = 0;
	/* one whole entry, then one that claims 200 bytes of which 3 are there */
	fill(w->rec[H_PARTIAL], &one);
	r = w->rec[H_PARTIAL];
	r->attrs_data[r->attrs_data_size] = 0;
	r->attrs_data[r->attrs_data_size + 1] = 200;
	memcpy(r->attrs_data + r->attrs_data_size + 2, "abc", 3);
	r->attrs_data_size += 5;
	/* a record shorter than 640 bytes that ends where the mapping ends */
	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		wl_die("otel: mmap failed");
	munmap(p + page, page);
	size = CUSTOM_LABELS_OTEL_HEADER_SIZE + 2 + strlen("acme");
	r = (struct custom_labels_otel_record *)(p + page - size);
	custom_labels_otel_record_init(r, NULL, NULL, 0);
	r->attrs_data[0] = 1;
	r->attrs_data[1] = 4;
	memcpy(r->attrs_data + 2, "acme", 4);
	r->attrs_data_size = 6;
	free(w->rec[H_SHORT]);
	w->rec[H_SHORT] = r;
	w->short_page = p;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->tid = wl_gettid();
	for (unsigned int k = 0; k < MAX_CTX; k++)
		if (!(w->rec[k] = calloc(1, sizeof(*w->rec[k]))))
			wl_die("otel: out of memory");
	if (env.hostile) {
		make_hostile(w);
	} else {
		for (unsigned int k = 0; k < env.nctx; k++)
			fill(w->rec[k], &contexts[k]);
	}
	while (!wl_stopping()) {
		int k = (int)(next_rand(&w->rng) % (env.nctx + 1));
		uint64_t us = env.min_us + next_rand(&w->rng) % (env.max_us - env.min_us + 1);
		uint64_t rt0, rt1, cpu0, cpu1;
		unsigned int slot = k < (int)env.nctx ? (unsigned int)k : UNLABELLED;

		custom_labels_otel_attach(slot == UNLABELLED ? NULL : w->rec[slot]);
		rt0 = wl_clock_ns(CLOCK_REALTIME);
		cpu0 = wl_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		burn_fns[slot](us * env.iters_per_us);
		cpu1 = wl_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		rt1 = wl_clock_ns(CLOCK_REALTIME);
		w->cpu_ns[slot] += cpu1 - cpu0;
		if (w->niv == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 4096;
			if (!(w->iv = realloc(w->iv, w->cap * sizeof(*w->iv))))
				wl_die("otel: out of memory");
		}
		w->iv[w->niv++] =
			(struct interval){slot == UNLABELLED ? -1 : k, rt0, rt1, cpu1 - cpu0};
	}
	custom_labels_otel_attach(NULL);
	for (unsigned int k = 0; k < MAX_CTX; k++)
		if (!env.hostile || (k != H_GARBAGE && k != H_SHORT))
			free(w->rec[k]);
	if (w->short_page)
		munmap(w->short_page, sysconf(_SC_PAGESIZE));
	return NULL;
}

static void put_resource(FILE *f)
{
	for (size_t i = 0; i < sizeof(resource) / sizeof(resource[0]); i++) {
		fprintf(f, "%s", i ? "," : "");
		wl_json_str(f, resource[i].key);
		fputc(':', f);
		wl_json_str(f, resource[i].value);
	}
}

/* The labels a reader must show for context k. */
static void put_labels(FILE *f, unsigned int k)
{
	const struct ctx *c = &contexts[k];

	put_resource(f);
	if (env.hostile) {
		/*
		 * only the complete entries of entry_cut_short and the short
		 * record, and what the first 640 bytes of the large one hold
		 */
		if (k == H_PARTIAL || k == H_SHORT || k == H_LARGE)
			fprintf(f, ",\"tenant\":\"acme\"");
		if (k == H_PARTIAL || k == H_LARGE)
			fprintf(f, ",\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\","
				   "\"span_id\":\"00f067aa0ba902b7\"");
		if (k == H_LARGE) {
			fprintf(f, ",\"user.id\":\"");
			for (int i = 0; i < LARGE_VALUE; i++)
				fputc('b', f);
			fputc('"', f);
		}
		return;
	}
	if (c->trace_hex)
		fprintf(f, ",\"trace_id\":\"%s\",\"span_id\":\"%s\"", c->trace_hex, c->span_hex);
	for (const struct attr *a = c->attrs; a->key >= 0; a++) {
		bool later = false;

		for (const struct attr *b = a + 1; b->key >= 0; b++)
			later |= b->key == a->key;
		if (later || a->key >= (int)NKEYS)
			continue;
		fprintf(f, ",\"%s\":", key_map[a->key]);
		wl_json_str(f, a->value);
	}
}

static void write_report(struct worker *ws, uint64_t start_ns, uint64_t end_ns)
{
	FILE *f = wl_open_report(env.run.output);
	uint64_t cpu[MAX_CTX + 1] = {0};
	const char *sep = "";

	for (unsigned int i = 0; i < env.threads; i++)
		for (unsigned int k = 0; k <= MAX_CTX; k++)
			cpu[k] += ws[i].cpu_ns[k];
	fprintf(f, "{\"workload\":\"otel\",\"pid\":%d,\"threads\":%u,\"hostile\":%s,",
		(int)getpid(), env.threads, env.hostile ? "true" : "false");
	fprintf(f, "\"start_unix_ns\":%llu,\"end_unix_ns\":%llu,\"sets\":[",
		(unsigned long long)start_ns, (unsigned long long)end_ns);
	for (unsigned int k = 0; k < env.nctx; k++) {
		fprintf(f, "%s{\"id\":%u,\"function\":\"burn_ctx_%u\",\"name\":\"%s\",\"labels\":{",
			k ? "," : "", k, k, env.hostile ? hostile_names[k] : "context");
		put_labels(f, k);
		fprintf(f, "},\"cpu_ns\":%llu}", (unsigned long long)cpu[k]);
	}
	fprintf(f, "],\"unlabelled\":{\"function\":\"burn_unlabelled\",\"labels\":{");
	put_resource(f);
	fprintf(f, "},\"cpu_ns\":%llu},\"intervals\":[", (unsigned long long)cpu[UNLABELLED]);
	for (unsigned int i = 0; i < env.threads; i++) {
		for (size_t j = 0; j < ws[i].niv; j++) {
			const struct interval *iv = &ws[i].iv[j];

			fprintf(f, "%s\n[%d,%d,%llu,%llu,%llu]", sep, ws[i].tid, iv->ctx,
				(unsigned long long)iv->start_unix_ns,
				(unsigned long long)iv->end_unix_ns,
				(unsigned long long)iv->cpu_ns);
			sep = ",";
		}
	}
	fprintf(f, "]}\n");
	wl_close_report(f, env.run.output);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: otel [-t N] [-i MIN,MAX] [-d SEC] [-w] [-o FILE] [--hostile]\n");
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{"threads", required_argument, NULL, 't'},
		{"interval", required_argument, NULL, 'i'},
		{"duration", required_argument, NULL, 'd'},
		{"wait-stdin", no_argument, NULL, 'w'},
		{"output", required_argument, NULL, 'o'},
		{"hostile", no_argument, NULL, 'H'},
		{},
	};
	int c;

	while ((c = getopt_long(argc, argv, "t:i:d:wo:H", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			env.threads = wl_parse_threads("otel", optarg, MAX_THREADS);
			break;
		case 'i':
			wl_parse_interval("otel", optarg, &env.min_us, &env.max_us);
			break;
		case 'H':
			env.hostile = true;
			break;
		default:
			wl_run_option(&env.run, "otel", c, optarg, usage);
		}
	}
}

int main(int argc, char **argv)
{
	static struct worker ws[MAX_THREADS];
	uint64_t start_ns, end_ns;
	int err;

	parse_args(argc, argv);
	env.nctx = env.hostile ? H_COUNT : NCTX;
	wl_install_stop_handlers();
	err = custom_labels_otel_publish(resource, sizeof(resource) / sizeof(resource[0]), key_map,
					 sizeof(key_map) / sizeof(key_map[0]));
	if (err)
		wl_die("otel: custom_labels_otel_publish failed (%d)", err);
	/* resolve the TLS descriptor before a profiler looks */
	custom_labels_otel_attach(NULL);
	env.iters_per_us = wl_calibrate();
	start_ns = wl_clock_ns(CLOCK_REALTIME);
	for (unsigned int i = 0; i < env.threads; i++) {
		ws[i].rng = 0x5eed + i;
		if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]))
			wl_die("otel: pthread_create failed");
	}
	wl_ready("otel");
	wl_wait(env.run.duration, env.run.wait_stdin);
	wl_request_stop();
	for (unsigned int i = 0; i < env.threads; i++)
		pthread_join(ws[i].thread, NULL);
	end_ns = wl_clock_ns(CLOCK_REALTIME);
	write_report(ws, start_ns, end_ns);
	custom_labels_otel_unpublish();
	return 0;
}
