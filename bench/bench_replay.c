// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Userspace aggregation throughput: synthetic sample records, shaped like the
 * BPF program's (bpf/labelprof.h), fed through profile__add_sample() on one
 * core, then written once as folded and JSON output without symbols.
 *   bench_replay [--json] [--events N]
 * The records come from 10k unique stacks of 10-40 user frames (plus a few
 * kernel frames on some) and 1k unique label sets of 2-6 labels, combined
 * into a pool of distinct (pid, tid, label set, stack) records that events
 * pick from with a skew, as a few hot paths dominate real profiles.
 * Allocations by liblabelprof are counted by wrapping malloc at link time
 * (-Wl,--wrap=...); mallinfo2() gives the memory held at the end.
 */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labelprof.h"
#include "lib/clock.h"
#include "format/output.h"
#include "profile/profile.h"
#include "profile/symprof.h"

#define N_STACKS	10000
#define N_LABEL_SETS	1000
#define N_RECORDS	50000
#define N_PIDS		40
#define THREADS_PER_PID 8

static uint64_t alloc_calls, alloc_bytes;

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

void *__wrap_malloc(size_t size)
{
	alloc_calls++;
	alloc_bytes += size;
	return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	alloc_calls++;
	alloc_bytes += n * size;
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	alloc_calls++;
	alloc_bytes += size;
	return __real_realloc(p, size);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

struct stack {
	__u16 klen, ulen;
	__u64 ips[48];
};

struct label_set {
	__u16 count, bytes;
	unsigned char data[6 * (4 + 16 + 40)];
};

static const char *const keys[] = {"tenant", "endpoint", "trace_id",	"span_id",
				   "region", "user_id",	 "http.method", "queue"};

static void make_stack(struct stack *s)
{
	int i;

	/* user code in a few modules; a third of the samples also caught the kernel */
	s->klen = rnd() % 3 ? 0 : 3 + rnd() % 6;
	s->ulen = 10 + rnd() % 31;
	for (i = 0; i < s->klen; i++)
		s->ips[i] = 0xffffffff81000000ull + rnd() % 0x1000000;
	for (i = 0; i < s->ulen; i++)
		s->ips[s->klen + i] =
			0x55d000000000ull + (rnd() % 8) * 0x10000000 + rnd() % 0x200000;
}

static void make_label_set(struct label_set *ls)
{
	unsigned int i, n = 2 + rnd() % 5, first = rnd() % 8;
	unsigned char *p = ls->data;

	for (i = 0; i < n; i++) {
		const char *key = keys[(first + i) % 8];
		struct lp_label_hdr h = {.key_len = strlen(key), .value_len = 4 + rnd() % 37};
		unsigned int j;

		memcpy(p, &h, sizeof(h));
		p += sizeof(h);
		memcpy(p, key, h.key_len);
		p += h.key_len;
		for (j = 0; j < h.value_len; j++)
			*p++ = 'a' + rnd() % 26;
	}
	ls->count = n;
	ls->bytes = p - ls->data;
}

/* A skewed pick in [0, n): half of the picks go to the first n/64 entries. */
static size_t skewed(size_t n)
{
	return rnd() & 1 ? rnd() % (n / 64) : rnd() % n;
}

static unsigned char *build_record(const struct stack *st, const struct label_set *ls, __u32 pid,
				   __u32 tid, size_t *size)
{
	size_t stack_bytes = (st->klen + st->ulen) * sizeof(__u64);
	struct lp_sample s = {
		.hdr = {.type = LP_EVENT_SAMPLE},
		.tgid = pid,
		.tid = tid,
		.status = LP_ST_LABELS_READ,
		.kstack_len = st->klen,
		.ustack_len = st->ulen,
		.label_count = ls->count,
		.label_bytes = ls->bytes,
	};
	unsigned char *rec;

	*size = sizeof(s) + stack_bytes + ls->bytes;
	s.hdr.size = *size;
	snprintf(s.comm, sizeof(s.comm), "svc-%u", pid);
	rec = __real_malloc(*size);
	if (!rec) {
		fprintf(stderr, "bench_replay: out of memory\n");
		exit(1);
	}
	memcpy(rec, &s, sizeof(s));
	memcpy(rec + sizeof(s), st->ips, stack_bytes);
	memcpy(rec + sizeof(s) + stack_bytes, ls->data, ls->bytes);
	return rec;
}

static size_t held_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* Feeds n events picked from the pool; returns events per second. */
static double replay(struct profile *p, unsigned char **recs, const size_t *sizes, long n)
{
	uint64_t t0 = now_ns();
	long i;

	for (i = 0; i < n; i++) {
		size_t r = skewed(N_RECORDS);

		if (profile__add_sample(p, recs[r], sizes[r])) {
			fprintf(stderr, "bench_replay: a record was refused\n");
			exit(1);
		}
	}
	return n / ((now_ns() - t0) / 1e9);
}

static double write_ms(struct profile *p, bool json)
{
	FILE *f = fopen("/dev/null", "w");
	uint64_t t0 = now_ns();
	struct symprof *sp;
	int err;

	if (!f) {
		perror("bench_replay: /dev/null");
		exit(1);
	}
	sp = symprof__from_profile(p, NULL, NULL);
	err = sp ? output__write(f, json ? OUTPUT_JSON : OUTPUT_FOLDED, sp, NULL) : -ENOMEM;
	symprof__free(sp);
	fclose(f);
	if (err) {
		fprintf(stderr, "bench_replay: writing the profile failed (%d)\n", err);
		exit(1);
	}
	return (now_ns() - t0) / 1e6;
}

int main(int argc, char **argv)
{
	static struct stack stacks[N_STACKS];
	static struct label_set sets[N_LABEL_SETS];
	static unsigned char *recs[N_RECORDS];
	static size_t sizes[N_RECORDS];
	uint64_t calls0, bytes0, cold_calls, cold_bytes;
	double cold_eps, warm_eps, folded_ms, json_ms;
	struct profile_stats st;
	struct profile *p;
	long events = 2000000;
	size_t held0, i;
	int json = 0, a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--json")) {
			json = 1;
		} else if (!strcmp(argv[a], "--events") && a + 1 < argc) {
			events = atol(argv[++a]);
		} else {
			fprintf(stderr, "usage: %s [--json] [--events N]\n", argv[0]);
			return 2;
		}
	}
	if (events < N_RECORDS)
		events = N_RECORDS;

	for (i = 0; i < N_STACKS; i++)
		make_stack(&stacks[i]);
	for (i = 0; i < N_LABEL_SETS; i++)
		make_label_set(&sets[i]);
	for (i = 0; i < N_RECORDS; i++) {
		__u32 pid = 1000 + rnd() % N_PIDS;

		recs[i] = build_record(&stacks[skewed(N_STACKS)], &sets[skewed(N_LABEL_SETS)], pid,
				       pid + rnd() % THREADS_PER_PID, &sizes[i]);
	}

	held0 = held_bytes();
	calls0 = alloc_calls;
	bytes0 = alloc_bytes;
	p = profile__new(NULL, NULL);
	if (!p) {
		fprintf(stderr, "bench_replay: out of memory\n");
		return 1;
	}
	/* cold: the first events intern most stacks, label sets and entries */
	cold_eps = replay(p, recs, sizes, events / 2);
	cold_calls = alloc_calls - calls0;
	cold_bytes = alloc_bytes - bytes0;
	calls0 = alloc_calls;
	bytes0 = alloc_bytes;
	warm_eps = replay(p, recs, sizes, events / 2);
	profile__stats(p, &st);
	folded_ms = write_ms(p, false);
	json_ms = write_ms(p, true);

	printf("replay: %ld events, %zu entries, %zu stacks, %zu label sets, %.1f MB held "
	       "(profile says %.1f MB)\n",
	       events, st.entries, st.stacks, st.label_sets, (held_bytes() - held0) / 1e6,
	       st.bytes / 1e6);
	printf("  first half: %.2f M events/s, %.1f allocated bytes/event, %.3f mallocs/event\n",
	       cold_eps / 1e6, (double)cold_bytes / (events / 2),
	       (double)cold_calls / (events / 2));
	printf("  second half: %.2f M events/s, %.1f allocated bytes/event, %.3f mallocs/event\n",
	       warm_eps / 1e6, (double)(alloc_bytes - bytes0) / (events / 2),
	       (double)(alloc_calls - calls0) / (events / 2));
	printf("  write folded %.1f ms, json %.1f ms (no symbolizer)\n", folded_ms, json_ms);
	if (json)
		printf("{\"bench\":\"replay\",\"events\":%ld,\"entries\":%zu,\"stacks\":%zu,"
		       "\"label_sets\":%zu,\"cold_events_per_s\":%.0f,\"warm_events_per_s\":%.0f,"
		       "\"cold_alloc_bytes_per_event\":%.2f,\"warm_alloc_bytes_per_event\":%.2f,"
		       "\"cold_mallocs_per_event\":%.4f,\"warm_mallocs_per_event\":%.4f,"
		       "\"held_bytes\":%zu,\"profile_bytes\":%zu,\"write_folded_ms\":%.2f,"
		       "\"write_json_ms\":%.2f}\n",
		       events, st.entries, st.stacks, st.label_sets, cold_eps, warm_eps,
		       (double)cold_bytes / (events / 2),
		       (double)(alloc_bytes - bytes0) / (events / 2),
		       (double)cold_calls / (events / 2),
		       (double)(alloc_calls - calls0) / (events / 2), held_bytes() - held0,
		       st.bytes, folded_ms, json_ms);
	profile__free(p);
	for (i = 0; i < N_RECORDS; i++)
		free(recs[i]);
	return 0;
}
