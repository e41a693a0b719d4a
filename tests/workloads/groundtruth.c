// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * groundtruth: threads that switch label sets every few milliseconds and burn
 * CPU in one function per set (burn_set_K; burn_unlabelled with no labels),
 * measuring the thread CPU time of every burn. The report says, per set, the
 * exact labels and the CPU spent, and lists every interval so a test can
 * compare against any recording window.
 *
 * Built once per TLS case: GT_ABI (0 or 1) picks the library ABI, GT_LINKAGE
 * names how it is linked ("exe", "lib" or "dlopen"); with GT_DLOPEN the
 * library is dlopen()ed at run time and used through dlsym().
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "customlabels.h"
#include "workload.h"

#if !defined(GT_ABI) || !defined(GT_LINKAGE)
#error "build with -DGT_ABI=0|1 -DGT_LINKAGE='\"exe|lib|dlopen\"'"
#endif

#define GT_MAX_SETS 8
#define GT_UNLABELLED GT_MAX_SETS /* index of the no-label bucket in per-set arrays */
#define GT_MAX_THREADS 64
#define GT_MAX_INTERVALS (1u << 20) /* per thread; later intervals are counted, not listed */

#define KV(k, v) { k, sizeof(k) - 1, v, sizeof(v) - 1 }

/*
 * The label sets. They overlap on purpose: same keys with other values (0, 1),
 * a subset (2 of 0) and a superset (7 of 0), so a stale or merged label set
 * shows up as a wrong set rather than passing by accident.
 */
static const struct custom_labels_kv set0[] = { KV("tenant", "acme"), KV("endpoint", "/checkout") };
static const struct custom_labels_kv set1[] = { KV("endpoint", "/checkout"),
						KV("tenant", "globex") };
static const struct custom_labels_kv set2[] = { KV("tenant", "acme") };
static const struct custom_labels_kv set3[] = {
	KV("tenant", "initech"),
	KV("endpoint", "/search"),
	KV("request_id", "3f2a9c1e-7b4d-4e8a-9f60-1c2d3e4f5a6b"),
	KV("region", "eu-west-1"),
};
static const struct custom_labels_kv set4[] = {
	KV("k0", "v0"), KV("k1", "v1"), KV("k2", "v2"), KV("k3", "v3"), KV("k4", "v4"),
	KV("k5", "v5"), KV("k6", "v6"), KV("k7", "v7"), KV("k8", "v8"), KV("k9", "v9"),
};
/* Labels are bytes: multi-byte UTF-8, an embedded NUL, bytes that are not UTF-8. */
static const struct custom_labels_kv set5[] = {
	KV("ключ", "значение 🚀"),
	KV("bin\0key", "\xff\xfe\0v"),
};
static const struct custom_labels_kv set6[] = {
	KV("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736"),
	KV("span_id", "00f067aa0ba902b7"),
	/* Near the default limits (128-byte keys, 256-byte values), not over them. */
	KV("a-key-of-one-hundred-bytes-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	   "aaaaaaaaaaaaaaaaaaa",
	   "a-value-of-two-hundred-bytes-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	   "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	   "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"),
};
static const struct custom_labels_kv set7[] = { KV("tenant", "acme"), KV("endpoint", "/checkout"),
						KV("request_id", "7") };

static const struct {
	const struct custom_labels_kv *kv;
	size_t n;
} sets[GT_MAX_SETS] = {
#define SET(s) { s, sizeof(s) / sizeof(s[0]) }
	SET(set0), SET(set1), SET(set2), SET(set3), SET(set4), SET(set5), SET(set6), SET(set7),
#undef SET
};

/* One function per set, so a sample's stack says which set was active. */
#define BURN_SET(k)                                                                                \
	static WL_BURN uint64_t burn_set_##k(uint64_t iters)                                       \
	{                                                                                          \
		return wl_spin(iters, 0x1000 + k);                                                 \
	}
BURN_SET(0)
BURN_SET(1)
BURN_SET(2)
BURN_SET(3)
BURN_SET(4)
BURN_SET(5)
BURN_SET(6)
BURN_SET(7)

static WL_BURN uint64_t burn_unlabelled(uint64_t iters)
{
	return wl_spin(iters, 0x2000);
}

static uint64_t (*const burn_fns[GT_MAX_SETS + 1])(uint64_t) = {
	burn_set_0, burn_set_1, burn_set_2, burn_set_3,	     burn_set_4,
	burn_set_5, burn_set_6, burn_set_7, burn_unlabelled,
};

/* The library API, linked directly or looked up with dlsym(). */
static struct {
	int (*set)(const void *key, size_t key_len, const void *value, size_t value_len);
	int (*delete)(const void *key, size_t key_len);
	int (*clear)(void);
	struct custom_labels_labelset *(*labelset_new)(void);
	void (*labelset_free)(struct custom_labels_labelset *set);
	int (*labelset_set)(struct custom_labels_labelset *set, const void *key, size_t key_len,
			    const void *value, size_t value_len);
	struct custom_labels_labelset *(*swap)(struct custom_labels_labelset *set);
	int (*run_with)(const struct custom_labels_kv *labels, size_t n, void (*fn)(void *arg),
			void *arg);
} api;

enum method { M_KEY, M_SWAP, M_RUN, M_COUNT };
static const char *const method_names[M_COUNT] = { "key", "swap", "run_with" };

static struct {
	unsigned int threads, nsets;
	uint64_t min_us, max_us, seed, start_delay_ms;
	struct wl_run run;
	int method; /* M_COUNT: mixed */
	const char *lib;
	uint64_t iters_per_us;
} env = {
	.threads = 2,
	.nsets = GT_MAX_SETS,
	.min_us = 1000,
	.max_us = 5000,
	.seed = 1,
	.method = M_COUNT,
};

struct interval {
	int32_t set; /* -1: unlabelled */
	uint32_t pad;
	uint64_t start_unix_ns, end_unix_ns, cpu_ns;
};

struct worker {
	pthread_t thread;
	unsigned int index;
	int tid;
	uint64_t rng;
	int cur; /* set applied through the per-key API, -1: none */
	struct custom_labels_labelset *prepared[GT_MAX_SETS];
	uint64_t cpu_ns[GT_MAX_SETS + 1], count[GT_MAX_SETS + 1], by_method[M_COUNT];
	struct interval *iv;
	size_t niv, cap;
	uint64_t dropped_intervals, checksum;
};

/* What one burn needs, also passed through run_with. */
struct burn_call {
	unsigned int slot; /* set index or GT_UNLABELLED */
	uint64_t iters, rt0, rt1, cpu0, cpu1, ret;
};

static uint64_t next_rand(uint64_t *s)
{
	/* splitmix64: cheap and good enough to pick sets and lengths. */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void check(int rc, const char *what)
{
	if (rc)
		wl_die("groundtruth: %s failed (%d)", what, rc);
}

static void timed_burn(void *arg)
{
	struct burn_call *c = arg;

	c->rt0 = wl_clock_ns(CLOCK_REALTIME);
	c->cpu0 = wl_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	c->ret = burn_fns[c->slot](c->iters);
	c->cpu1 = wl_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	c->rt1 = wl_clock_ns(CLOCK_REALTIME);
}

static bool set_has_key(int k, const struct custom_labels_kv *kv)
{
	for (size_t i = 0; k >= 0 && i < sets[k].n; i++)
		if (sets[k].kv[i].key_len == kv->key_len &&
		    !memcmp(sets[k].kv[i].key, kv->key, kv->key_len))
			return true;
	return false;
}

static void delete_label(const struct custom_labels_kv *kv)
{
	check(api.delete(kv->key, kv->key_len), "custom_labels_delete");
}

/* Moves the per-key state from w->cur to set k (-1: none), by several routes. */
static void apply_per_key(struct worker *w, int k)
{
	if (w->cur >= 0 && (k < 0 || next_rand(&w->rng) % 4 == 0)) {
		if (next_rand(&w->rng) % 2) {
			check(api.clear(), "custom_labels_clear");
		} else {
			for (size_t i = 0; i < sets[w->cur].n; i++)
				delete_label(&sets[w->cur].kv[i]);
		}
		w->cur = -1;
	}
	/* Incremental: drop the keys the new set lacks, overwrite the rest. */
	for (size_t i = 0; w->cur >= 0 && i < sets[w->cur].n; i++)
		if (!set_has_key(k, &sets[w->cur].kv[i]))
			delete_label(&sets[w->cur].kv[i]);
	for (size_t i = 0; k >= 0 && i < sets[k].n; i++)
		check(api.set(sets[k].kv[i].key, sets[k].kv[i].key_len, sets[k].kv[i].value,
			      sets[k].kv[i].value_len),
		      "custom_labels_set");
	w->cur = k;
}

static void run_interval(struct worker *w, int k, enum method m, struct burn_call *c)
{
	struct custom_labels_labelset *prev, *back;

	switch (m) {
	case M_KEY:
		apply_per_key(w, k);
		timed_burn(c);
		break;
	case M_SWAP:
		/*
		 * Install the prepared set, then put back what swap returned: the
		 * thread's own labels are discarded by a swap, so none are left.
		 */
		prev = api.swap(k >= 0 ? w->prepared[k] : NULL);
		timed_burn(c);
		back = api.swap(prev);
		if (back != (k >= 0 ? w->prepared[k] : NULL))
			wl_die("groundtruth: custom_labels_swap returned %p, installed %p", back,
			       k >= 0 ? (void *)w->prepared[k] : NULL);
		w->cur = -1;
		break;
	case M_RUN:
		/* run_with adds to the current set: start from none. */
		apply_per_key(w, -1);
		if (k >= 0)
			check(api.run_with(sets[k].kv, sets[k].n, timed_burn, c),
			      "custom_labels_run_with");
		else
			timed_burn(c);
		break;
	default:
		abort();
	}
}

static void record_interval(struct worker *w, int k, const struct burn_call *c)
{
	unsigned int slot = k >= 0 ? (unsigned int)k : GT_UNLABELLED;

	w->cpu_ns[slot] += c->cpu1 - c->cpu0;
	w->count[slot]++;
	w->checksum += c->ret;
	if (w->niv == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 4096;
		struct interval *iv;

		if (cap > GT_MAX_INTERVALS || !(iv = realloc(w->iv, cap * sizeof(*iv)))) {
			w->dropped_intervals++;
			return;
		}
		w->iv = iv;
		w->cap = cap;
	}
	w->iv[w->niv++] = (struct interval){
		.set = k,
		.start_unix_ns = c->rt0,
		.end_unix_ns = c->rt1,
		.cpu_ns = c->cpu1 - c->cpu0,
	};
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->tid = wl_gettid();
	w->cur = -1;
	for (unsigned int k = 0; k < env.nsets; k++) {
		w->prepared[k] = api.labelset_new();
		if (!w->prepared[k])
			wl_die("groundtruth: custom_labels_labelset_new failed");
		for (size_t i = 0; i < sets[k].n; i++)
			check(api.labelset_set(w->prepared[k], sets[k].kv[i].key,
					       sets[k].kv[i].key_len, sets[k].kv[i].value,
					       sets[k].kv[i].value_len),
			      "custom_labels_labelset_set");
	}

	while (!wl_stopping()) {
		/* One more choice than sets: the unlabelled bucket. */
		int k = (int)(next_rand(&w->rng) % (env.nsets + 1));
		enum method m = env.method < M_COUNT ? (enum method)env.method :
						       (enum method)(next_rand(&w->rng) % M_COUNT);
		uint64_t us = env.min_us + next_rand(&w->rng) % (env.max_us - env.min_us + 1);
		struct burn_call c = { .iters = us * env.iters_per_us };

		if (k == (int)env.nsets)
			k = -1;
		c.slot = k >= 0 ? (unsigned int)k : GT_UNLABELLED;
		run_interval(w, k, m, &c);
		w->by_method[m]++;
		record_interval(w, k, &c);
	}

	apply_per_key(w, -1);
	for (unsigned int k = 0; k < env.nsets; k++)
		api.labelset_free(w->prepared[k]);
	return NULL;
}

static void load_api(void)
{
#ifdef GT_DLOPEN
	char path[PATH_MAX];
	const char *lib = env.lib;
	void *h;

	if (!lib) {
		/* Default: the library next to the workloads, in $(OUTPUT)/lib. */
		wl_sibling_path(GT_ABI == 0 ? "../lib/libcustomlabels-v0.so" :
					      "../lib/libcustomlabels.so",
				path, sizeof(path));
		lib = path;
	}
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		wl_die("groundtruth: dlopen %s: %s", lib, dlerror());
#define LOOKUP(field, name)                                                                        \
	do {                                                                                       \
		api.field = (__typeof__(api.field))dlsym(h, name);                                 \
		if (!api.field)                                                                    \
			wl_die("groundtruth: %s has no %s", lib, name);                            \
	} while (0)
	LOOKUP(set, "custom_labels_set");
	LOOKUP(delete, "custom_labels_delete");
	LOOKUP(clear, "custom_labels_clear");
	LOOKUP(labelset_new, "custom_labels_labelset_new");
	LOOKUP(labelset_free, "custom_labels_labelset_free");
	LOOKUP(labelset_set, "custom_labels_labelset_set");
	LOOKUP(swap, "custom_labels_swap");
	LOOKUP(run_with, "custom_labels_run_with");
#undef LOOKUP
#else
	api.set = custom_labels_set;
	api.delete = custom_labels_delete;
	api.clear = custom_labels_clear;
	api.labelset_new = custom_labels_labelset_new;
	api.labelset_free = custom_labels_labelset_free;
	api.labelset_set = custom_labels_labelset_set;
	api.swap = custom_labels_swap;
	api.run_with = custom_labels_run_with;
#endif
	/* Touch the TLS once so a lazily resolved descriptor is resolved now. */
	check(api.clear(), "custom_labels_clear");
}

static void write_report(struct worker *ws, uint64_t start_ns, uint64_t end_ns)
{
	FILE *f = wl_open_report(env.run.output);
	uint64_t cpu[GT_MAX_SETS + 1] = { 0 }, count[GT_MAX_SETS + 1] = { 0 };
	uint64_t by_method[M_COUNT] = { 0 }, dropped = 0, checksum = 0;
	const char *sep = "";

	for (unsigned int i = 0; i < env.threads; i++) {
		for (unsigned int k = 0; k <= GT_MAX_SETS; k++) {
			cpu[k] += ws[i].cpu_ns[k];
			count[k] += ws[i].count[k];
		}
		for (unsigned int m = 0; m < M_COUNT; m++)
			by_method[m] += ws[i].by_method[m];
		dropped += ws[i].dropped_intervals;
		checksum ^= ws[i].checksum;
	}

	fprintf(f, "{\"workload\":\"groundtruth\",\"variant\":\"v%d-%s\",\"abi\":%d,", GT_ABI,
		GT_LINKAGE, GT_ABI);
	fprintf(f, "\"linkage\":\"%s\",\"pid\":%d,\"threads\":%u,", GT_LINKAGE, (int)getpid(),
		env.threads);
	fprintf(f, "\"api\":\"%s\",\"interval_us\":[%llu,%llu],", env.method < M_COUNT ?
		method_names[env.method] : "mixed", (unsigned long long)env.min_us,
		(unsigned long long)env.max_us);
	fprintf(f, "\"start_unix_ns\":%llu,\"end_unix_ns\":%llu,\"process_cpu_ns\":%llu,",
		(unsigned long long)start_ns, (unsigned long long)end_ns,
		(unsigned long long)wl_clock_ns(CLOCK_PROCESS_CPUTIME_ID));
	fprintf(f, "\"checksum\":%llu,\"intervals_by_api\":{", (unsigned long long)checksum);
	for (unsigned int m = 0; m < M_COUNT; m++)
		fprintf(f, "%s\"%s\":%llu", m ? "," : "", method_names[m],
			(unsigned long long)by_method[m]);
	fprintf(f, "},\"sets\":[");
	for (unsigned int k = 0; k < env.nsets; k++) {
		fprintf(f, "%s{\"id\":%u,\"function\":\"burn_set_%u\",\"labels\":{", k ? "," : "",
			k, k);
		for (size_t i = 0; i < sets[k].n; i++) {
			fprintf(f, "%s", i ? "," : "");
			wl_json_bytes(f, sets[k].kv[i].key, sets[k].kv[i].key_len);
			fputc(':', f);
			wl_json_bytes(f, sets[k].kv[i].value, sets[k].kv[i].value_len);
		}
		fprintf(f, "},\"cpu_ns\":%llu,\"intervals\":%llu}", (unsigned long long)cpu[k],
			(unsigned long long)count[k]);
	}
	fprintf(f, "],\"unlabelled\":{\"function\":\"burn_unlabelled\",\"cpu_ns\":%llu,"
		   "\"intervals\":%llu},",
		(unsigned long long)cpu[GT_UNLABELLED], (unsigned long long)count[GT_UNLABELLED]);
	/* Every interval: [tid, set (-1: none), start_unix_ns, end_unix_ns, cpu_ns]. */
	fprintf(f, "\"dropped_intervals\":%llu,\"intervals\":[", (unsigned long long)dropped);
	for (unsigned int i = 0; i < env.threads; i++) {
		for (size_t j = 0; j < ws[i].niv; j++) {
			const struct interval *iv = &ws[i].iv[j];

			fprintf(f, "%s\n[%d,%d,%llu,%llu,%llu]", sep, ws[i].tid, iv->set,
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
	fprintf(f,
		"usage: groundtruth [options]\n"
		"  -t, --threads N        worker threads (default 2)\n"
		"  -s, --sets N           label sets in use, 1-%d (default %d)\n"
		"  -i, --interval MIN[,MAX]  microseconds per interval (default 1000,5000)\n"
		"  -a, --api key|swap|run_with|mixed  how labels are switched (default mixed)\n"
		"  -d, --duration SEC     stop after SEC seconds (default: run until stopped)\n"
		"  -w, --wait-stdin       stop when stdin reaches end of file\n"
		"  -o, --output FILE      JSON report (default stdout)\n"
		"      --seed N           random seed (default 1)\n"
		"      --start-delay-ms N sleep after setup, before the workers start\n"
		"      --lib PATH         library to dlopen (dlopen builds)\n"
		"Stops on SIGINT/SIGTERM too; the report is written at the end.\n",
		GT_MAX_SETS, GT_MAX_SETS);
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "sets", required_argument, NULL, 's' },
		{ "interval", required_argument, NULL, 'i' },
		{ "api", required_argument, NULL, 'a' },
		{ "duration", required_argument, NULL, 'd' },
		{ "wait-stdin", no_argument, NULL, 'w' },
		{ "output", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 'S' },
		{ "start-delay-ms", required_argument, NULL, 'D' },
		{ "lib", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c;

	while ((c = getopt_long(argc, argv, "t:s:i:a:d:wo:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			env.threads = wl_parse_threads("groundtruth", optarg, GT_MAX_THREADS);
			break;
		case 's':
			env.nsets = (unsigned int)wl_parse_u64(optarg, "set count");
			if (env.nsets < 1 || env.nsets > GT_MAX_SETS)
				wl_die("groundtruth: --sets must be 1-%d", GT_MAX_SETS);
			break;
		case 'i':
			wl_parse_interval("groundtruth", optarg, &env.min_us, &env.max_us);
			break;
		case 'a':
			env.method = -1;
			for (int m = 0; m < M_COUNT; m++)
				if (!strcmp(optarg, method_names[m]))
					env.method = m;
			if (!strcmp(optarg, "mixed"))
				env.method = M_COUNT;
			if (env.method < 0)
				wl_die("groundtruth: unknown --api '%s'", optarg);
			break;
		case 'S':
			env.seed = wl_parse_u64(optarg, "seed");
			break;
		case 'D':
			env.start_delay_ms = wl_parse_u64(optarg, "start delay");
			break;
		case 'L':
			env.lib = optarg;
			break;
		default:
			wl_run_option(&env.run, "groundtruth", c, optarg, usage);
		}
	}
	wl_no_operands("groundtruth", argc, argv);
}

int main(int argc, char **argv)
{
	static struct worker ws[GT_MAX_THREADS];
	uint64_t start_ns, end_ns;

	parse_args(argc, argv);
	wl_install_stop_handlers();
	load_api();
	env.iters_per_us = wl_calibrate();
	if (env.start_delay_ms)
		usleep((useconds_t)(env.start_delay_ms * 1000));

	start_ns = wl_clock_ns(CLOCK_REALTIME);
	for (unsigned int i = 0; i < env.threads; i++) {
		int err;

		ws[i].index = i;
		ws[i].rng = env.seed * 0x100000001b3ull + i;
		err = pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]);
		if (err)
			wl_die("groundtruth: pthread_create: %s", strerror(err));
	}
	wl_ready("groundtruth");
	wl_wait(env.run.duration, env.run.wait_stdin);
	for (unsigned int i = 0; i < env.threads; i++)
		pthread_join(ws[i].thread, NULL);
	end_ns = wl_clock_ns(CLOCK_REALTIME);

	write_report(ws, start_ns, end_ns);
	for (unsigned int i = 0; i < env.threads; i++)
		free(ws[i].iv);
	return 0;
}
