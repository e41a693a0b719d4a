// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * gofake: a C program that looks like a cgo-built Go program to labelprof
 * (docs/design.md section 8): Go build info naming GOFAKE_VERSION, and one
 * TLS word, runtime.tlsg, holding each thread's g. Every thread lays out its
 * own g, m and pprof labels the way that Go version does, so that the label
 * formats of Go versions the host has no compiler for, and hostile layouts,
 * run through the real inspection and the real BPF reader.
 *
 *   gofake-go124 (slice format): threads switch between label sets every
 *   1-3 ms, burning CPU in burn_set_K with set K and in burn_unlabelled with
 *   none.
 *   gofake-go119-hostile (map format): one thread per layout of
 *   hostile_layouts[], each burning in its own function for good.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

#if !defined(GOFAKE_VERSION) || !defined(GOFAKE_LABELS_OFFSET)
#error "build with -DGOFAKE_VERSION='\"go1.N.M\"' -DGOFAKE_LABELS_OFFSET=N"
#endif

/* Go's build info: magic, pointer size, flags (inline strings), then the version. */
#define BI_VERSION_LEN (sizeof(GOFAKE_VERSION) - 1)
__attribute__((section(".go.buildinfo"), used, aligned(16))) static const struct {
	char magic[14];
	unsigned char ptr_size, flags;
	unsigned char unused[16];
	unsigned char version_len; /* a one-byte uvarint */
	char version[BI_VERSION_LEN];
	unsigned char modinfo_len;
} buildinfo = { "\xff Go buildinf:", 8, 2, { 0 }, BI_VERSION_LEN, GOFAKE_VERSION, 0 };

/* The program's only TLS word, as a cgo build's: g, named as Go names it. */
__thread void *tlsg __asm__("runtime.tlsg");

/* The offsets of the Go versions faked (proc/golang.c's table). */
#define G_M	48
#define M_CURG	192
#define G_WORDS 64

struct gostring {
	const char *ptr;
	uint64_t len;
};

struct golabel {
	struct gostring key, value;
};

/* Go >= 1.24: g.labels points to { []label } */
struct goslice {
	struct golabel *ptr;
	uint64_t len, cap;
};

/* Go <= 1.23: g.labels points to a map[string]string: a pointer to runtime.hmap */
struct hmap {
	uint64_t count;
	uint8_t flags, B;
	uint16_t noverflow;
	uint32_t hash0;
	void *buckets, *oldbuckets;
	uint64_t nevacuate;
	void *extra;
};

struct bucket {
	uint8_t tophash[8];
	struct gostring keys[8], values[8];
	struct bucket *overflow;
};
_Static_assert(sizeof(struct bucket) == 272, "map[string]string bucket");

struct fake_thread {
	uint64_t g[G_WORDS];
	uint64_t m[G_WORDS];
	pthread_t thread;
	unsigned int id;
};

static uint64_t iters_per_us;

static void fake_g_init(struct fake_thread *t)
{
	t->g[G_M / 8] = (uint64_t)t->m;
	t->m[M_CURG / 8] = (uint64_t)t->g; /* the thread runs this goroutine */
	tlsg = t->g;
}

static void set_labels(struct fake_thread *t, const void *labels)
{
	__atomic_store_n(&t->g[GOFAKE_LABELS_OFFSET / 8], (uint64_t)labels, __ATOMIC_RELEASE);
}

#define S(s) { s, sizeof(s) - 1 }

#ifdef GOFAKE_SLICE
/* Sorted by key, as Go keeps them; set 1 has an empty value and an empty key. */
static struct golabel set0[] = { { S("endpoint"), S("/checkout") }, { S("tenant"), S("acme") } };
static struct golabel set1[] = { { { NULL, 0 }, S("empty key") }, { S("region"), { NULL, 0 } },
				 { S("tenant"), S("globex") } };
static struct golabel set2[] = { { S("k0"), S("v0") }, { S("k1"), S("v1") }, { S("k2"), S("v2") },
				 { S("k3"), S("v3") }, { S("k4"), S("v4") }, { S("k5"), S("v5") },
				 { S("k6"), S("v6") }, { S("k7"), S("v7") }, { S("k8"), S("v8") },
				 { S("k9"), S("v9") } };
static struct goslice slices[] = {
	{ set0, 2, 2 },
	{ set1, 3, 3 },
	{ set2, 10, 10 },
};

static WL_BURN uint64_t burn_set_0(uint64_t n) { return wl_spin(n, 1); }
static WL_BURN uint64_t burn_set_1(uint64_t n) { return wl_spin(n, 2); }
static WL_BURN uint64_t burn_set_2(uint64_t n) { return wl_spin(n, 3); }
static WL_BURN uint64_t burn_unlabelled(uint64_t n) { return wl_spin(n, 4); }

static uint64_t (*const burns[])(uint64_t) = { burn_set_0, burn_set_1, burn_set_2 };
#define NR_THREADS 2

static void *run(void *arg)
{
	struct fake_thread *t = arg;
	uint64_t sink = 0, k = t->id;

	fake_g_init(t);
	while (!wl_stopping()) {
		k = (k + 1) % 3;
		set_labels(t, &slices[k]);
		sink += burns[k]((1000 + k * 700) * iters_per_us);
		set_labels(t, NULL);
		sink += burn_unlabelled(1500 * iters_per_us);
	}
	__asm__ volatile("" : : "r"(sink));
	return NULL;
}
#else
/*
 * Hostile map layouts, one per thread; the e2e test knows what each must
 * give. Bucket memory is static: valid to read, wrong in content.
 */
static struct bucket good_bucket = {
	.tophash = { 0, 7, 0, 0, 9, 0, 0, 0 },
	.keys = { [1] = S("tenant"), [4] = S("endpoint") },
	.values = { [1] = S("acme"), [4] = S("/checkout") },
};
static struct bucket cycle_bucket = {
	.tophash = { 6 },
	.keys = { S("loop") },
	.values = { S("forever") },
	.overflow = &cycle_bucket,
};
static struct bucket lonely_bucket = { .tophash = { 8 }, .keys = { S("k") }, .values = { S("v") } };
static struct bucket big_buckets[64];

static struct hmap good = { .count = 2, .B = 0, .buckets = &good_bucket };
static struct hmap huge_b = { .count = 3, .B = 200, .buckets = big_buckets };
static struct hmap cycle = { .count = 1, .B = 0, .buckets = &cycle_bucket };
static struct hmap wild = { .count = 2, .B = 1, .buckets = (void *)0x10 };
static struct hmap count_lies = { .count = 5, .B = 0, .buckets = &lonely_bucket };
static struct hmap growing = { .count = 1, .B = 1, .buckets = big_buckets,
			       .oldbuckets = &lonely_bucket };
static struct hmap *maps[] = { &good, &huge_b, &cycle, &wild, &count_lies, &growing };
/* g.labels itself pointing nowhere */
static const void *const wild_labels = (void *)0x20;

static WL_BURN uint64_t hostile_good(uint64_t n) { return wl_spin(n, 1); }
static WL_BURN uint64_t hostile_huge_b(uint64_t n) { return wl_spin(n, 2); }
static WL_BURN uint64_t hostile_cycle(uint64_t n) { return wl_spin(n, 3); }
static WL_BURN uint64_t hostile_wild_buckets(uint64_t n) { return wl_spin(n, 4); }
static WL_BURN uint64_t hostile_count_lies(uint64_t n) { return wl_spin(n, 5); }
static WL_BURN uint64_t hostile_growing(uint64_t n) { return wl_spin(n, 6); }
static WL_BURN uint64_t hostile_wild_labels(uint64_t n) { return wl_spin(n, 7); }

static uint64_t (*const burns[])(uint64_t) = { hostile_good, hostile_huge_b, hostile_cycle,
						hostile_wild_buckets, hostile_count_lies,
						hostile_growing, hostile_wild_labels };
#define NR_THREADS (sizeof(burns) / sizeof(burns[0]))

static void *run(void *arg)
{
	struct fake_thread *t = arg;
	uint64_t sink = 0;

	fake_g_init(t);
	/* labels points to the map variable, which points to the hmap */
	set_labels(t, t->id < 6 ? (const void *)&maps[t->id] : wild_labels);
	while (!wl_stopping())
		sink += burns[t->id](2000 * iters_per_us);
	__asm__ volatile("" : : "r"(sink));
	return NULL;
}
#endif

int main(void)
{
	static struct fake_thread threads[NR_THREADS];
	unsigned int i;

	wl_install_stop_handlers();
	iters_per_us = wl_calibrate();
	for (i = 0; i < NR_THREADS; i++) {
		threads[i].id = i;
		if (pthread_create(&threads[i].thread, NULL, run, &threads[i]))
			wl_die("gofake: pthread_create failed");
	}
	wl_ready("gofake");
	wl_wait(0, true);
	wl_request_stop();
	for (i = 0; i < NR_THREADS; i++)
		pthread_join(threads[i].thread, NULL);
	return 0;
}
