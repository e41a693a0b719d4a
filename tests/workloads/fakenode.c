// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fakenode: the OpenTelemetry Node.js thread context (docs/design.md section
 * 12) without Node: the executable defines V8's postmortem constants (Node
 * 24's values) and the discovery struct otel_thread_ctx_nodejs_v1, and lays
 * out in its own memory the V8 objects a reader walks: AsyncContextFrames
 * (JSMaps), their OrderedHashMaps, context objects and OTEP 4947 records.
 * The main thread switches the isolate's slot between frames every 1-2 ms
 * and burns CPU in one function per frame. burn_ctx_K: a good frame whose
 * record has span id K+1 repeated (8 bytes); burn_bad_K: a frame a reader
 * must give no context for (the key absent, undefined, or a damaged walk:
 * a wrong instance type, a table of the wrong length, a chain that loops, a
 * bucket index out of range, a value of another type, internal field 0 not
 * a pointer). -w: stop at the end of stdin.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

#define VISIBLE __attribute__((visibility("default"), used))

VISIBLE int v8dbg_TaggedSize = 8;
VISIBLE int v8dbg_SmiShiftSize = 31;
VISIBLE int v8dbg_HeapObjectTag = 1;
VISIBLE int v8dbg_HeapObjectTagMask = 3;
VISIBLE int v8dbg_class_HeapObject__map__Map;
VISIBLE int v8dbg_class_Map__instance_type__uint16_t = 12;
VISIBLE int v8dbg_class_Map__instance_size_in_words__char = 8;
VISIBLE int v8dbg_type_JSMap__JS_MAP_TYPE = 2112;
VISIBLE int v8dbg_APIObjectType = 1058;
VISIBLE int v8dbg_SpecialAPIObjectType = 1040;
VISIBLE int v8dbg_class_JSObject__internal_fields__uintptr_t = 24;
VISIBLE int v8dbg_class_FixedArray__data__uintptr_t = 16;

struct discovery {
	uint64_t *cped_slot;
	uint64_t *als_handle;
	int32_t als_hash;
	uint64_t undefined_addr;
};

VISIBLE __thread struct discovery otel_thread_ctx_nodejs_v1;

#define GOOD	 4
#define BAD	 8
#define NB	 4    /* buckets of every table */
#define ALS_HASH 0x2d /* bucket 1 */
#define TAG(p)	 ((uint64_t)(uintptr_t)(p) | 1)
#define SMI(v)	 ((uint64_t)(int64_t)(v) << 32)

/* An isolate's heap, as far as the walk goes: every object 8-byte aligned. */
struct map {
	uint64_t w[2];
};
struct table {
	uint64_t map, length, elements, deleted, buckets;
	uint64_t bucket[NB];
	uint64_t entry[2 * NB][3]; /* key, value, chain */
};
struct jsmap {
	uint64_t map, properties, elements, table;
};
struct api_object {
	uint64_t map, properties, elements, wrappable, field0;
};
struct record {
	uint8_t trace_id[16], span_id[8], valid, flags;
	uint16_t attrs_size;
	uint8_t attrs[8];
} __attribute__((packed));

static struct map map_jsmap, map_api, map_other;
static uint64_t undefined_obj[2], als_obj[2], other_key[2], cped;
static uint64_t als_slot;
static struct table tables[GOOD + BAD];
static struct jsmap frames[GOOD + BAD];
static struct api_object ctxs[GOOD + BAD];
static struct record records[GOOD + BAD];

static void set_map(struct map *m, uint16_t type, uint8_t words)
{
	memset(m, 0, sizeof(*m));
	memcpy((char *)m + 12, &type, sizeof(type));
	memcpy((char *)m + 8, &words, sizeof(words));
}

/* Frame i: the ALS in bucket 1's chain, after another key, mapping to context i. */
static void build(int i)
{
	struct table *t = &tables[i];
	int b;

	t->map = TAG(&map_other);
	t->length = SMI(3 + 7 * NB);
	t->elements = SMI(2);
	t->deleted = SMI(0);
	t->buckets = SMI(NB);
	for (b = 0; b < NB; b++)
		t->bucket[b] = SMI(-1);
	t->bucket[ALS_HASH & (NB - 1)] = SMI(0);
	t->entry[0][0] = TAG(other_key);
	t->entry[0][1] = TAG(undefined_obj);
	t->entry[0][2] = SMI(1);
	t->entry[1][0] = TAG(als_obj);
	t->entry[1][1] = TAG(&ctxs[i]);
	t->entry[1][2] = SMI(-1);
	frames[i].map = TAG(&map_jsmap);
	frames[i].table = TAG(t);
	ctxs[i].map = TAG(&map_api);
	ctxs[i].field0 = (uint64_t)(uintptr_t)&records[i];
	memset(records[i].trace_id, 0xab, sizeof(records[i].trace_id));
	memset(records[i].span_id, i + 1, sizeof(records[i].span_id));
	records[i].attrs_size = 0;
	records[i].valid = 1;
}

static void setup(void)
{
	int i;

	set_map(&map_jsmap, 2112, 4);
	set_map(&map_api, 1058, 5);
	set_map(&map_other, 1, 2);
	undefined_obj[0] = other_key[0] = als_obj[0] = TAG(&map_other);
	als_slot = TAG(als_obj);
	for (i = 0; i < GOOD + BAD; i++)
		build(i);
	/* what a reader must refuse, or find no context in */
	frames[GOOD + 0].map = TAG(&map_other);	       /* not a JSMap */
	tables[GOOD + 1].length = SMI(3 + 7 * NB + 1); /* not an OrderedHashMap's length */
	tables[GOOD + 2].entry[1][0] = TAG(other_key); /* a chain that loops */
	tables[GOOD + 2].entry[1][2] = SMI(0);
	tables[GOOD + 3].bucket[ALS_HASH & (NB - 1)] = SMI(2 * NB); /* an entry out of range */
	ctxs[GOOD + 4].map = TAG(&map_other);			    /* a context of another type */
	ctxs[GOOD + 5].field0 |= 1;			   /* internal field 0 tagged: no aligned pointer */
	tables[GOOD + 6].entry[1][1] = TAG(undefined_obj); /* the context cleared */
	tables[GOOD + 7].entry[1][0] = TAG(other_key);	   /* the key absent */
	tables[GOOD + 7].entry[1][2] = SMI(-1);
	otel_thread_ctx_nodejs_v1.als_handle = &als_slot;
	otel_thread_ctx_nodejs_v1.als_hash = ALS_HASH;
	otel_thread_ctx_nodejs_v1.undefined_addr = TAG(undefined_obj);
	cped = TAG(undefined_obj);
	otel_thread_ctx_nodejs_v1.cped_slot = &cped;
}

static uint64_t per_us;

#define BURN(name)                                                                                 \
	static WL_BURN uint64_t name(uint64_t us, uint64_t x)                                      \
	{                                                                                          \
		return wl_spin(us * per_us, x);                                                    \
	}
BURN(burn_ctx_0)
BURN(burn_ctx_1)
BURN(burn_ctx_2)
BURN(burn_ctx_3)
BURN(burn_bad_0)
BURN(burn_bad_1)
BURN(burn_bad_2)
BURN(burn_bad_3)
BURN(burn_bad_4)
BURN(burn_bad_5)
BURN(burn_bad_6)
BURN(burn_bad_7)

static uint64_t (*const burn[GOOD + BAD])(uint64_t, uint64_t) = {
	burn_ctx_0, burn_ctx_1, burn_ctx_2, burn_ctx_3, burn_bad_0, burn_bad_1,
	burn_bad_2, burn_bad_3, burn_bad_4, burn_bad_5, burn_bad_6, burn_bad_7,
};

static void usage(FILE *f)
{
	fprintf(f, "usage: fakenode [-d SEC] [-w]\n");
}

int main(int argc, char **argv)
{
	struct wl_run run = {0};
	uint64_t x = 1, end;
	unsigned int i = 0;
	int c;

	while ((c = getopt(argc, argv, "d:wo:h")) != -1)
		wl_run_option(&run, "fakenode", c, optarg, usage);
	wl_no_operands("fakenode", argc, argv);
	wl_install_stop_handlers();
	per_us = wl_calibrate();
	setup();
	end = run.duration > 0 ? wl_clock_ns(CLOCK_MONOTONIC) + run.duration * 1e9 : 0;
	fprintf(stderr, "fakenode: ready pid=%d\n", getpid());
	while (!wl_stopping() && !(run.wait_stdin && wl_stdin_closed()) &&
	       !(end && wl_clock_ns(CLOCK_MONOTONIC) >= end)) {
		unsigned int k = i++ % (GOOD + BAD);

		/* one store switches the frame, as V8 does */
		__atomic_store_n(&cped, TAG(&frames[k]), __ATOMIC_RELEASE);
		x = burn[k](1000 + 100 * k, x);
		__atomic_store_n(&cped, TAG(undefined_obj), __ATOMIC_RELEASE);
	}
	printf("%llu\n", (unsigned long long)(x & 1));
	return 0;
}
