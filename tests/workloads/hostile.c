// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * hostile: threads whose published label sets are deliberately bad. The
 * program writes the raw Custom Labels ABI itself (HOSTILE_ABI 0 or 1), one
 * thread per mode, each burning CPU in its own function (burn_<mode>). The
 * report, written once every thread is set up, says for each mode which
 * labels a correct reader may attribute, which it must, and which sample
 * flags it must or must not raise.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workload.h"

#if !defined(HOSTILE_ABI) || (HOSTILE_ABI != 0 && HOSTILE_ABI != 1)
#error "build with -DHOSTILE_ABI=0 or -DHOSTILE_ABI=1"
#endif

struct hl_string {
	size_t len;
	const unsigned char *buf;
};

struct hl_label {
	struct hl_string key;
	struct hl_string value;
};

struct hl_set {
	struct hl_label *storage;
	size_t count;
	size_t capacity;
};

#define EXPORT __attribute__((visibility("default")))
EXPORT const uint32_t custom_labels_abi_version = HOSTILE_ABI;
#if HOSTILE_ABI == 1
EXPORT __thread struct hl_set *custom_labels_current_set;
#else
EXPORT __thread struct {
	struct hl_label *storage;
	size_t count;
} custom_labels_thread_local_data;
#endif

/* Stores the reader must see in program order, and the compiler must not drop. */
#define WRITE_ONCE(x, v)                                                                           \
	do {                                                                                       \
		*(volatile __typeof__(x) *)&(x) = (v);                                             \
		__asm__ volatile("" ::: "memory");                                                 \
	} while (0)

#define HUGE_COUNT (1ull << 62)
#define HUGE_LEN (1ull << 40)
/* Below mmap_min_addr: never mapped. */
#define UNMAPPED_ADDR ((void *)0x1000)

#define MAX_EXPECT 48
#define MAX_MODES  24

/* A label a reader may (allowed) or must (required) report. */
struct expect {
	const void *key, *value;
	size_t key_len, value_len;
	/* The reader may report a non-empty prefix (a truncated or huge length). */
	bool key_prefix, value_prefix;
	/* A correct reader keeps at least this much of a truncated key/value. */
	size_t min_key_len, min_value_len;
};

struct mode_state;

struct mode {
	const char *name, *function;
	/* Builds the label set and publishes it in the calling thread's TLS. */
	void (*setup)(struct mode_state *st);
	uint64_t (*burn)(struct mode_state *st, uint64_t iters);
};

struct mode_state {
	const struct mode *mode;
	pthread_t thread;
	int tid;
	struct expect allowed[MAX_EXPECT], required[MAX_EXPECT];
	size_t nallowed, nrequired;
	/* Every sample in the mode carries at least one of these flags. */
	const char *flags_expected[4];
	/* No sample in the mode carries any of these. */
	const char *flags_forbidden[4];
	/* rewrite: the states it cycles through. */
	struct hl_label *valid;
	void *inaccessible;
	struct hl_set set, garbage;
	uint64_t sink;
};

static struct {
	double duration;
	bool wait_stdin;
	const char *output;
	uint64_t iters_per_us;
} env;

static pthread_barrier_t setup_done;

/* size bytes ending exactly at an inaccessible page: reading past them faults. */
static void *guarded(size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t span = (size + (size_t)page - 1) / (size_t)page * (size_t)page;
	char *base = mmap(NULL, span + (size_t)page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (base == MAP_FAILED || mprotect(base + span, (size_t)page, PROT_NONE))
		wl_die("hostile: mmap: out of memory");
	return base + span - size;
}

/* A mapped page that cannot be read. */
static void *inaccessible_page(void)
{
	void *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		wl_die("hostile: mmap: out of memory");
	return p;
}

static void *copy_guarded(const void *bytes, size_t len)
{
	void *p = guarded(len);

	memcpy(p, bytes, len);
	return p;
}

static void label(struct hl_label *l, const void *key, size_t key_len, const void *value,
		  size_t value_len)
{
	l->key.buf = key;
	l->key.len = key_len;
	l->value.buf = value;
	l->value.len = value_len;
}

static struct expect *add(struct expect *list, size_t *n, const void *key, size_t key_len,
			  const void *value, size_t value_len)
{
	struct expect *e = &list[(*n)++];

	memset(e, 0, sizeof(*e));
	e->key = key;
	e->key_len = key_len;
	e->value = value;
	e->value_len = value_len;
	return e;
}

/* Label l is what a reader must report, exactly. */
static void expect_exact(struct mode_state *st, const struct hl_label *l)
{
	add(st->allowed, &st->nallowed, l->key.buf, l->key.len, l->value.buf, l->value.len);
	add(st->required, &st->nrequired, l->key.buf, l->key.len, l->value.buf, l->value.len);
}

static void may_report(struct mode_state *st, const struct hl_label *l)
{
	add(st->allowed, &st->nallowed, l->key.buf, l->key.len, l->value.buf, l->value.len);
}

static void forbid_all_flags(struct mode_state *st)
{
	st->flags_forbidden[0] = "read_fault";
	st->flags_forbidden[1] = "malformed";
	st->flags_forbidden[2] = "truncated";
}

static void publish(struct mode_state *st, struct hl_label *storage, size_t count)
{
	st->set.storage = storage;
	st->set.count = count;
	st->set.capacity = count;
#if HOSTILE_ABI == 1
	WRITE_ONCE(custom_labels_current_set, &st->set);
#else
	WRITE_ONCE(custom_labels_thread_local_data.storage, storage);
	WRITE_ONCE(custom_labels_thread_local_data.count, count);
#endif
}

/* The published storage and count: in the set (v1) or in the TLS object itself (v0). */
#if HOSTILE_ABI == 1
#define SET_STORAGE(st, p) WRITE_ONCE((st)->set.storage, (p))
#define SET_COUNT(st, n) WRITE_ONCE((st)->set.count, (n))
#else
#define SET_STORAGE(st, p) WRITE_ONCE(custom_labels_thread_local_data.storage, (p))
#define SET_COUNT(st, n) WRITE_ONCE(custom_labels_thread_local_data.count, (n))
#endif

#define S(lit) lit, sizeof(lit) - 1

static void setup_clean(struct mode_state *st)
{
	struct hl_label *l = guarded(2 * sizeof(*l));

	label(&l[0], S("mode"), S("clean"));
	label(&l[1], S("tenant"), S("acme"));
	expect_exact(st, &l[0]);
	expect_exact(st, &l[1]);
	forbid_all_flags(st);
	publish(st, l, 2);
}

#if HOSTILE_ABI == 1
static void setup_null_set(struct mode_state *st)
{
	WRITE_ONCE(custom_labels_current_set, NULL);
	forbid_all_flags(st);
}

static void setup_unmapped_set(struct mode_state *st)
{
	WRITE_ONCE(custom_labels_current_set, inaccessible_page());
	st->flags_expected[0] = "read_fault";
}
#endif

static void setup_null_storage(struct mode_state *st)
{
	publish(st, NULL, 5);
	st->flags_expected[0] = "read_fault";
}

static void setup_unmapped_storage(struct mode_state *st)
{
	publish(st, UNMAPPED_ADDR, 3);
	st->flags_expected[0] = "read_fault";
}

static void setup_huge_count(struct mode_state *st)
{
	/* 40 good labels, more than any label limit, then a guard page. */
	enum { N = 40 };
	struct hl_label *l = guarded(N * sizeof(*l));
	char *text = malloc(N * 16);

	if (!text)
		wl_die("hostile: out of memory");
	for (int i = 0; i < N; i++) {
		char *k = text + i * 16, *v = k + 8;

		snprintf(k, 8, "hc%02d", i);
		snprintf(v, 8, "v%02d", i);
		label(&l[i], k, 4, v, 3);
		if (i == 0)
			expect_exact(st, &l[i]);
		else
			may_report(st, &l[i]);
	}
	st->flags_expected[0] = "truncated";
	publish(st, l, HUGE_COUNT);
}

static void *filled(const char *prefix, char fill, size_t len)
{
	char *p = guarded(len);

	memset(p, fill, len);
	memcpy(p, prefix, strlen(prefix));
	return p;
}

static void setup_huge_lengths(struct mode_state *st)
{
	/* The lengths claim a terabyte; the buffers hold 4 KiB before a guard page. */
	enum { BUF = 4096 };
	struct hl_label *l = guarded(3 * sizeof(*l));
	const char *kbuf = filled("hugekey-", 'k', BUF), *vbuf = filled("hugevalue-", 'v', BUF);
	struct expect *e;

	label(&l[0], kbuf, HUGE_LEN, S("v"));
	label(&l[1], S("hv"), vbuf, HUGE_LEN);
	label(&l[2], S("ok"), S("fine"));
	e = add(st->allowed, &st->nallowed, kbuf, BUF, "v", 1);
	e->key_prefix = true;
	e = add(st->allowed, &st->nallowed, "hv", 2, vbuf, BUF);
	e->value_prefix = true;
	expect_exact(st, &l[2]);
	st->flags_expected[0] = "truncated";
	publish(st, l, 3);
}

static void setup_null_values(struct mode_state *st)
{
	struct hl_label *l = guarded(3 * sizeof(*l));

	label(&l[0], S("nv0"), NULL, 5);
	label(&l[1], S("ok"), S("fine"));
	label(&l[2], S("nv1"), NULL, 0);
	expect_exact(st, &l[1]);
	st->flags_expected[0] = "malformed";
	st->flags_forbidden[0] = "read_fault";
	publish(st, l, 3);
}

/*
 * The Datadog Java profiler's layout: one fixed block per thread holding the
 * set header, the labels and their bytes; its reserved span labels keep a
 * NULL value of length 0 until a span is set. That is a label not in use,
 * not damage: no flag.
 */
static void setup_unused_values(struct mode_state *st)
{
	enum { BLOCK = 4096, N = 4 };
	unsigned char *block = guarded(BLOCK);
	struct hl_set *set = (struct hl_set *)block;
	struct hl_label *l = (struct hl_label *)(set + 1);
	unsigned char *text = (unsigned char *)(l + N);

	memcpy(text, "span-idroot-span-idendpointcheckouttenantacme", 45);
	label(&l[0], text, 7, NULL, 0);
	label(&l[1], text + 7, 12, NULL, 0);
	label(&l[2], text + 19, 8, text + 27, 8);
	label(&l[3], text + 35, 6, text + 41, 4);
	expect_exact(st, &l[2]);
	expect_exact(st, &l[3]);
	forbid_all_flags(st);
	set->storage = l;
	set->count = N;
	set->capacity = N;
#if HOSTILE_ABI == 1
	WRITE_ONCE(custom_labels_current_set, set);
#else
	WRITE_ONCE(custom_labels_thread_local_data.storage, l);
	WRITE_ONCE(custom_labels_thread_local_data.count, N);
#endif
}

static void setup_null_keys(struct mode_state *st)
{
	/* The spec says to ignore a label whose key is NULL. */
	struct hl_label *l = guarded(3 * sizeof(*l));

	label(&l[0], NULL, 3, S("x"));
	label(&l[1], S("ok"), S("fine"));
	label(&l[2], NULL, 0, S("y"));
	expect_exact(st, &l[1]);
	st->flags_forbidden[0] = "read_fault";
	st->flags_forbidden[1] = "truncated";
	publish(st, l, 3);
}

static void setup_duplicates(struct mode_state *st)
{
	/* The first occurrence of a key wins. */
	struct hl_label *l = guarded(5 * sizeof(*l));

	label(&l[0], S("dup"), S("first"));
	label(&l[1], S("other"), S("x"));
	label(&l[2], S("dup"), S("second"));
	label(&l[3], S("dup"), S("third"));
	label(&l[4], S("other"), S("y"));
	expect_exact(st, &l[0]);
	expect_exact(st, &l[1]);
	forbid_all_flags(st);
	publish(st, l, 5);
}

static void setup_non_utf8(struct mode_state *st)
{
	static const struct {
		const char *k, *v;
		size_t kl, vl;
	} kv[] = {
#define KV(k, v) { k, v, sizeof(k) - 1, sizeof(v) - 1 }
		KV("\xff\xfekey", "val\x80\x81"),
		KV("plain", "\xc3\x28"), /* a broken two-byte sequence */
		KV("nul\0inside", "a\0b"),
		KV("surrogate", "\xed\xa0\x80"), /* UTF-8-encoded U+D800 is not UTF-8 */
		KV("overlong", "\xc0\xaf"),
		KV("ctl", "\x01\x1f\"\\\x7f"),
		KV("utf8", "\xc3\xa9t\xc3\xa9 \xf0\x9f\x8c\x8d"),
#undef KV
	};
	enum { N = sizeof(kv) / sizeof(kv[0]) };
	struct hl_label *l = guarded(N * sizeof(*l));

	for (int i = 0; i < N; i++) {
		label(&l[i], copy_guarded(kv[i].k, kv[i].kl), kv[i].kl,
		      copy_guarded(kv[i].v, kv[i].vl), kv[i].vl);
		expect_exact(st, &l[i]);
	}
	forbid_all_flags(st);
	publish(st, l, N);
}

static void setup_long(struct mode_state *st)
{
	/* Over the default limits (128-byte keys, 256-byte values). */
	enum { KEY = 300, VALUE = 1000 };
	struct hl_label *l = guarded(2 * sizeof(*l));
	const char *k = filled("long-key-", 'K', KEY), *v = filled("long-value-", 'V', VALUE);
	struct expect *e;

	label(&l[0], k, KEY, v, VALUE);
	label(&l[1], S("ok"), S("fine"));
	e = add(st->allowed, &st->nallowed, k, KEY, v, VALUE);
	e->key_prefix = e->value_prefix = true;
	e = add(st->required, &st->nrequired, k, KEY, v, VALUE);
	e->key_prefix = e->value_prefix = true;
	e->min_key_len = 128;
	e->min_value_len = 256;
	expect_exact(st, &l[1]);
	st->flags_expected[0] = "truncated";
	st->flags_forbidden[0] = "read_fault";
	publish(st, l, 2);
}

/* A set whose read faults part way: a reader reports none of its labels. */
static void publish_faulting(struct mode_state *st, struct hl_label *storage, size_t count)
{
	st->flags_expected[0] = "read_fault";
	st->flags_forbidden[0] = "malformed";
	publish(st, storage, count);
}

static void setup_window_fault(struct mode_state *st)
{
	/* Strings packed together, the second label's on the page after the first's, unreadable. */
	struct hl_label *l = guarded(2 * sizeof(*l));
	char *text = copy_guarded("wfkeygood", 9);

	label(&l[0], text, 5, text + 5, 4);
	label(&l[1], text + 9, 3, text + 12, 3);
	/* the first label alone is a set that was never published */
	publish_faulting(st, l, 2);
}

/*
 * A valid label, one whose key faults, then the first key again with another
 * value: the labels read before the fault are a partial set, and a reader
 * that went on past it could let the duplicate's value win.
 */
static void setup_fault_duplicate(struct mode_state *st)
{
	struct hl_label *l = guarded(3 * sizeof(*l));
	const char *text = copy_guarded("fdsetnever", 10);

	label(&l[0], text, 2, text + 2, 3);
	label(&l[1], UNMAPPED_ADDR, 3, S("x"));
	label(&l[2], text, 2, text + 5, 5);
	publish_faulting(st, l, 3);
}

/* The first label's value faults; a duplicate of its key follows: no label either. */
static void setup_fault_first(struct mode_state *st)
{
	struct hl_label *l = guarded(2 * sizeof(*l));
	const char *text = copy_guarded("ffnever", 7);

	label(&l[0], text, 2, inaccessible_page(), 3);
	label(&l[1], text, 2, text + 2, 5);
	publish_faulting(st, l, 2);
}

static void setup_scattered(struct mode_state *st)
{
	/* Strings pages apart, a value apart from its key: each read by itself. */
	struct hl_label *l = guarded(3 * sizeof(*l));
	const char *a = copy_guarded("far-aone", 8), *b = copy_guarded("far-btwo", 8);
	const char *c = copy_guarded("apart", 5), *d = copy_guarded("from-its-key", 12);

	label(&l[0], a, 5, a + 5, 3);
	label(&l[1], b, 5, b + 5, 3);
	label(&l[2], c, 5, d, 12);
	for (int i = 0; i < 3; i++)
		expect_exact(st, &l[i]);
	forbid_all_flags(st);
	publish(st, l, 3);
}

static void setup_rewrite(struct mode_state *st)
{
	st->valid = guarded(2 * sizeof(*st->valid));
	label(&st->valid[0], S("rw0"), S("alpha"));
	label(&st->valid[1], S("rw1"), S("beta"));
	may_report(st, &st->valid[0]);
	may_report(st, &st->valid[1]);
	st->inaccessible = inaccessible_page();
	st->garbage.storage = UNMAPPED_ADDR;
	st->garbage.count = HUGE_COUNT;
	publish(st, st->valid, 2);
}

/* One burn function per mode, so a sample's stack names its mode. */
#define BURN_MODE(fn, salt)                                                                        \
	static WL_BURN uint64_t fn(struct mode_state *st, uint64_t iters)                          \
	{                                                                                          \
		return wl_spin(iters, salt);                                                       \
	}
BURN_MODE(burn_clean, 1)
#if HOSTILE_ABI == 1
BURN_MODE(burn_null_set, 2)
BURN_MODE(burn_unmapped_set, 3)
#endif
BURN_MODE(burn_null_storage, 4)
BURN_MODE(burn_unmapped_storage, 5)
BURN_MODE(burn_huge_count, 6)
BURN_MODE(burn_huge_lengths, 7)
BURN_MODE(burn_null_values, 8)
BURN_MODE(burn_null_keys, 9)
BURN_MODE(burn_unused_values, 14)
BURN_MODE(burn_duplicates, 10)
BURN_MODE(burn_non_utf8, 11)
BURN_MODE(burn_long, 12)
BURN_MODE(burn_window_fault, 15)
BURN_MODE(burn_scattered, 16)
BURN_MODE(burn_fault_duplicate, 17)
BURN_MODE(burn_fault_first, 18)

/*
 * Rewrites the published set between the valid one and garbage while it
 * burns: whatever instant a sample catches, a correct reader reports a subset
 * of the valid labels.
 */
static WL_BURN uint64_t burn_rewrite(struct mode_state *st, uint64_t iters)
{
	uint64_t x = 13, chunk = iters / 64 + 1;

	for (uint64_t done = 0, step = 0; done < iters; done += chunk, step++) {
		switch (step % 8) {
		case 0:
			SET_COUNT(st, HUGE_COUNT); /* the guard page stops the reader */
			break;
		case 1:
			WRITE_ONCE(st->valid[1].value.buf, NULL);
			break;
		case 2:
			SET_STORAGE(st, (struct hl_label *)st->inaccessible);
			break;
#if HOSTILE_ABI == 1
		case 3:
			WRITE_ONCE(custom_labels_current_set, &st->garbage);
			break;
		case 4:
			WRITE_ONCE(custom_labels_current_set, (struct hl_set *)st->inaccessible);
			break;
		case 5:
			WRITE_ONCE(custom_labels_current_set, NULL);
			break;
#else
		case 3:
			SET_STORAGE(st, (struct hl_label *)UNMAPPED_ADDR);
			break;
		case 4:
			SET_STORAGE(st, NULL);
			break;
		case 5:
			SET_COUNT(st, 0);
			break;
#endif
		case 6:
			WRITE_ONCE(st->valid[1].value.buf, (const unsigned char *)"beta");
			SET_STORAGE(st, st->valid);
			SET_COUNT(st, 2);
			break;
		case 7:
#if HOSTILE_ABI == 1
			WRITE_ONCE(custom_labels_current_set, &st->set);
#endif
			break;
		}
		x = wl_spin(chunk, x);
	}
	return x;
}

static const struct mode modes[] = {
#define MODE(name, fn) { name, #fn, setup_##fn, burn_##fn }
	MODE("clean", clean),
#if HOSTILE_ABI == 1
	MODE("null-set", null_set),
	MODE("unmapped-set", unmapped_set),
#endif
	MODE("null-storage", null_storage),
	MODE("huge-count", huge_count),
	MODE("unmapped-storage", unmapped_storage),
	MODE("huge-lengths", huge_lengths),
	MODE("null-values", null_values),
	MODE("null-keys", null_keys),
	MODE("unused-values", unused_values),
	MODE("duplicates", duplicates),
	MODE("rewrite", rewrite),
	MODE("non-utf8", non_utf8),
	MODE("long", long),
	MODE("window-fault", window_fault),
	MODE("scattered", scattered),
	MODE("fault-duplicate", fault_duplicate),
	MODE("fault-first", fault_first),
#undef MODE
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))
_Static_assert(NMODES <= MAX_MODES, "too many modes");

static void *mode_main(void *arg)
{
	struct mode_state *st = arg;
	/* About a millisecond per call, so stopping is prompt. */
	uint64_t iters = env.iters_per_us * 1000;

	st->tid = wl_gettid();
	st->mode->setup(st);
	pthread_barrier_wait(&setup_done);
	while (!wl_stopping())
		st->sink += st->mode->burn(st, iters);
	return NULL;
}

static void write_expects(FILE *f, const char *name, const struct expect *e, size_t n)
{
	fprintf(f, "\"%s\":[", name);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"key\":", i ? "," : "");
		wl_json_bytes(f, e[i].key, e[i].key_len);
		fprintf(f, ",\"value\":");
		wl_json_bytes(f, e[i].value, e[i].value_len);
		fprintf(f, ",\"key_prefix\":%s,\"value_prefix\":%s",
			e[i].key_prefix ? "true" : "false", e[i].value_prefix ? "true" : "false");
		if (e[i].min_key_len || e[i].min_value_len)
			fprintf(f, ",\"min_key_len\":%zu,\"min_value_len\":%zu", e[i].min_key_len,
				e[i].min_value_len);
		fputc('}', f);
	}
	fputc(']', f);
}

static void write_flags(FILE *f, const char *name, const char *const *flags)
{
	fprintf(f, "\"%s\":[", name);
	for (int i = 0; i < 4 && flags[i]; i++)
		fprintf(f, "%s\"%s\"", i ? "," : "", flags[i]);
	fputc(']', f);
}

static void write_report(struct mode_state *states, size_t n)
{
	FILE *f = wl_open_report(env.output);

	fprintf(f, "{\"workload\":\"hostile\",\"abi\":%d,\"pid\":%d,\"modes\":[", HOSTILE_ABI,
		(int)getpid());
	for (size_t i = 0; i < n; i++) {
		const struct mode_state *st = &states[i];

		fprintf(f, "%s\n{\"mode\":\"%s\",\"function\":\"burn_%s\",\"tid\":%d,",
			i ? "," : "", st->mode->name, st->mode->function, st->tid);
		write_expects(f, "allowed", st->allowed, st->nallowed);
		fputc(',', f);
		write_expects(f, "required", st->required, st->nrequired);
		fputc(',', f);
		write_flags(f, "flags_expected", st->flags_expected);
		fputc(',', f);
		write_flags(f, "flags_forbidden", st->flags_forbidden);
		fputc('}', f);
	}
	fprintf(f, "]}\n");
	wl_close_report(f, env.output);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hostile [options] [MODE...]   (default: every mode)\n"
		"  -d, --duration SEC  stop after SEC seconds (default: run until stopped)\n"
		"  -w, --wait-stdin    stop when stdin reaches end of file\n"
		"  -o, --output FILE   JSON report of the modes' expectations (default stdout)\n"
		"  -l, --list          list the modes\n"
		"One thread per mode. The report is written once every thread is set up.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "wait-stdin", no_argument, NULL, 'w' },
		{ "output", required_argument, NULL, 'o' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	static struct mode_state states[MAX_MODES];
	size_t n = 0;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "d:wo:lh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			env.duration = strtod(optarg, &end);
			if (*end || env.duration < 0)
				wl_die("hostile: invalid duration '%s'", optarg);
			break;
		case 'w':
			env.wait_stdin = true;
			break;
		case 'o':
			env.output = optarg;
			break;
		case 'l':
			for (size_t i = 0; i < NMODES; i++)
				printf("%s\n", modes[i].name);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	for (size_t i = 0; i < NMODES; i++) {
		bool wanted = optind == argc;

		for (int a = optind; a < argc; a++)
			wanted |= !strcmp(argv[a], modes[i].name) || !strcmp(argv[a], "all");
		if (wanted)
			states[n++].mode = &modes[i];
	}
	for (int a = optind; a < argc; a++) {
		bool known = !strcmp(argv[a], "all");

		for (size_t i = 0; i < NMODES; i++)
			known |= !strcmp(argv[a], modes[i].name);
		if (!known)
			wl_die("hostile: unknown mode '%s' (see --list)", argv[a]);
	}

	wl_install_stop_handlers();
	env.iters_per_us = wl_calibrate();
	pthread_barrier_init(&setup_done, NULL, (unsigned int)n + 1);
	for (size_t i = 0; i < n; i++) {
		int err = pthread_create(&states[i].thread, NULL, mode_main, &states[i]);

		if (err)
			wl_die("hostile: pthread_create: %s", strerror(err));
	}
	pthread_barrier_wait(&setup_done);
	write_report(states, n);
	wl_ready("hostile");
	wl_wait(env.duration, env.wait_stdin);
	for (size_t i = 0; i < n; i++)
		pthread_join(states[i].thread, NULL);
	return 0;
}
