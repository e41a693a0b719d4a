// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Torn-read test: writer threads hammer the libcustomlabels API while being
 * interrupted: a per-thread timer (SIGPROF) stops them at random
 * instructions, and on x86-64 some API calls are also single-stepped (trap
 * flag, SIGTRAP) so that every instruction of those calls is a stop. At each
 * stop the signal handler reads the thread's labels the way a profiler does,
 * through the ABI symbol and layout, and checks the snapshot:
 *  - count within capacity, no NULL buffers, lengths within the limits;
 *  - every label self-consistent: its value ends with a checksum of its key
 *    and value, and it is byte for byte one of the labels the test uses;
 *  - no duplicate keys;
 *  - the set is the one the writer published last or, while an API call
 *    runs, the one that call publishes (v0 only: or the empty set where the
 *    library documents it). The writer keeps that model in memory the
 *    handler reads; both run on the same thread.
 * CL_TORN_SECONDS (default 15) is the run time of the whole binary.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <cmocka.h>

#include "customlabels.h"
#include "abi.h"

#define MAXL	       CUSTOM_LABELS_DEFAULT_MAX_LABELS
#define MAX_KEY	       CUSTOM_LABELS_DEFAULT_MAX_KEY_LEN
#define MAX_VALUE      CUSTOM_LABELS_DEFAULT_MAX_VALUE_LEN
#define NKEYS	       24 /* more keys than fit in a set: ENOSPC happens */
#define NVERS	       8
#define NPREP	       4 /* prepared sets per writer */
#define NWRITERS       2
#define WRITER_LIFE_NS 250000000L /* writers are replaced: first uses and exits go on */
#define MAX_DEPTH      3	  /* of nested run_with */
#define SMALL_SLOT     64	  /* libcustomlabels' small slots (key plus value) */
/*
 * Share of the API calls single-stepped: a stepped call costs thousands of
 * times an unstepped one, so the labels still change a lot in between.
 */
#define STEP_ONE_IN 64

/*
 * Each stop costs tens of microseconds (more in a VM): where calls are
 * stepped, the timer is only a complement and gets a smaller share.
 */
#if defined(__x86_64__)
#define CAN_STEP      1
#define X86_EFLAGS_TF 0x100
#define TIMER_NS      200000L
#else
#define CAN_STEP 0
#define TIMER_NS 20000L
#endif

/* The TLS object, through the ABI symbol: its address comes from the dynamic linker. */
#ifdef CL_TEST_ABI_V0
#define ABI_V0 1
extern __thread struct abi_v0 custom_labels_thread_local_data;
#define ABI_TLS ((void *)&custom_labels_thread_local_data)
#else
#define ABI_V0	0
extern __thread struct abi_set *custom_labels_current_set;
#define ABI_TLS ((void *)&custom_labels_current_set)
#endif

/*
 * Label (kid, ver): key starts with 'A' + kid; value is kid, ver, filler,
 * then a 4-byte checksum of the key and the rest of the value.
 */
struct inst {
	unsigned char key[MAX_KEY];
	size_t klen;
	unsigned char value[MAX_VALUE];
	size_t vlen;
};

static struct inst insts[NKEYS][NVERS];

enum op {
	OP_SET,
	OP_DELETE,
	OP_CLEAR,
	OP_SWAP,
	OP_RUN_WITH,
	OP_PREPARED, /* changes a prepared set (not installed: TLS untouched) */
	OP_READ,     /* get and count */
	OP_N,
	OP_RESTORE = OP_N, /* run_with restoring; not chosen, counted */
	OP_KINDS,
};

static const char *const op_names[OP_KINDS] = {
	"set", "delete", "clear", "swap", "run_with", "prepared", "read", "restore",
};

enum failure {
	F_NONE,
	F_COUNT,    /* count over capacity or the limit */
	F_NULL,	    /* NULL storage, key or value buffer */
	F_LEN,	    /* key or value length out of range */
	F_CHECKSUM, /* label bytes do not match their checksum: torn */
	F_UNKNOWN,  /* a consistent label the test never used */
	F_DUP,	    /* duplicate key */
	F_SET,	    /* a set the writer did not publish */
	F_API,	    /* an API call returned what the model did not predict */
};

static const char *const failure_names[] = {
	"none",
	"count",
	"NULL buffer",
	"length",
	"checksum (torn label)",
	"unknown label",
	"duplicate key",
	"set not published",
	"unexpected API result",
};

/* A label set as the test models it: distinct kids. */
struct model {
	unsigned int n;
	uint8_t kid[MAXL];
	uint8_t ver[MAXL];
};

struct stats {
	unsigned long interrupts;     /* timer and single-step stops */
	unsigned long steps;	      /* of which single steps */
	unsigned long hits[OP_KINDS]; /* interrupts during an API call of each kind */
	unsigned long saw_new;	      /* ... that already saw the call's new set */
	unsigned long saw_empty;      /* v0 documented empty windows seen */
	unsigned long labels;	      /* labels validated */
	unsigned long ops[OP_KINDS];
	unsigned long failures;
	enum failure first; /* first failure and where */
	unsigned long first_a, first_b;
	int first_op;
};

struct writer {
	void *tls; /* this thread's ABI TLS object */
	struct model m[2];
	volatile int cur;	  /* m[cur] is published */
	volatile int in_op;	  /* an API call runs: m[!cur] may be published too */
	volatile int allow_empty; /* v0: the call may show the empty set */
	volatile int op;
	volatile int armed;
	volatile int stepping; /* single-step until the current call ends */
	struct custom_labels_labelset *ps[NPREP];
	struct model pm[NPREP];
	int installed; /* index of the installed prepared set, -1: own or none */
	int depth;
	const unsigned int *weights;
	uint64_t rng;
	struct stats st;
};

static __thread struct writer *me;

#define barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)

static uint32_t checksum(const unsigned char *key, size_t klen, const unsigned char *value,
			 size_t vlen)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ klen ^ (vlen << 16);
	size_t i;

	for (i = 0; i < klen; i++)
		h = (h ^ key[i]) * 0x100000001b3ULL;
	for (i = 0; i < vlen; i++)
		h = (h ^ value[i]) * 0x100000001b3ULL;
	return (uint32_t)(h ^ (h >> 32));
}

static uint64_t rnd64(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static unsigned int rnd(struct writer *w, unsigned int n)
{
	return (unsigned int)(rnd64(&w->rng) % n);
}

static void make_insts(void)
{
	uint64_t s = 0x1234567;
	int k, v;
	size_t i;

	for (k = 0; k < NKEYS; k++) {
		for (v = 0; v < NVERS; v++) {
			struct inst *in = &insts[k][v];
			uint32_t sum;

			/*
			 * mostly short, some at the limits; versions 1-3 of a short key
			 * make labels of 63, 64 and 65 bytes, around the library's small
			 * slot size: changing versions moves a label between slot sizes
			 */
			in->klen = k % 8 == 7 ? MAX_KEY : 1 + (size_t)(k * 5 % 24);
			in->vlen = v == NVERS - 1 ? MAX_VALUE : 6 + (size_t)(rnd64(&s) % 40);
			if (in->klen < MAX_KEY && v >= 1 && v <= 3)
				in->vlen = SMALL_SLOT - 2 + v - in->klen;
			in->key[0] = 'A' + k;
			for (i = 1; i < in->klen; i++)
				in->key[i] = 'a' + (k * 7 + i) % 26;
			in->value[0] = k;
			in->value[1] = v;
			for (i = 2; i < in->vlen - 4; i++)
				in->value[i] = (unsigned char)rnd64(&s);
			sum = checksum(in->key, in->klen, in->value, in->vlen - 4);
			memcpy(in->value + in->vlen - 4, &sum, 4);
		}
	}
}

static void fail_at(struct writer *w, enum failure f, unsigned long a, unsigned long b)
{
	if (!w->st.failures++) {
		w->st.first = f;
		w->st.first_a = a;
		w->st.first_b = b;
		w->st.first_op = w->in_op ? w->op : -1;
	}
}

static bool model_eq(const struct model *m, const uint8_t *kid, const uint8_t *ver, size_t n)
{
	size_t i, j;

	if (m->n != n)
		return false;
	for (i = 0; i < n; i++) {
		for (j = 0; j < n && m->kid[j] != kid[i]; j++)
			;
		if (j == n || m->ver[j] != ver[i])
			return false;
	}
	return true;
}

/* The profiler's view of the interrupted thread, validated. */
static void check_snapshot(struct writer *w)
{
	const struct abi_label *l;
	uint8_t kid[MAXL], ver[MAXL];
	uint32_t seen = 0, sum;
	size_t i, n;

	w->st.interrupts++;
	if (w->in_op)
		w->st.hits[w->op]++;
#if ABI_V0
	{
		const volatile struct abi_v0 *t = w->tls;

		n = t->count;
		l = t->storage;
		if (n > MAXL) {
			fail_at(w, F_COUNT, n, MAXL);
			return;
		}
	}
#else
	{
		const struct abi_set *set = *(const struct abi_set *const volatile *)w->tls;

		n = set ? set->count : 0;
		l = set ? set->storage : NULL;
		if (set && (n > set->capacity || set->capacity != MAXL)) {
			fail_at(w, F_COUNT, n, set->capacity);
			return;
		}
	}
#endif
	if (n && !l) {
		fail_at(w, F_NULL, n, 0);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct inst *in;

		if (!l[i].key.buf || !l[i].value.buf) {
			fail_at(w, F_NULL, i, n);
			return;
		}
		if (!l[i].key.len || l[i].key.len > MAX_KEY || l[i].value.len < 6 ||
		    l[i].value.len > MAX_VALUE) {
			fail_at(w, F_LEN, l[i].key.len, l[i].value.len);
			return;
		}
		memcpy(&sum, l[i].value.buf + l[i].value.len - 4, 4);
		if (sum !=
		    checksum(l[i].key.buf, l[i].key.len, l[i].value.buf, l[i].value.len - 4)) {
			fail_at(w, F_CHECKSUM, i, n);
			return;
		}
		kid[i] = l[i].value.buf[0];
		ver[i] = l[i].value.buf[1];
		in = kid[i] < NKEYS && ver[i] < NVERS ? &insts[kid[i]][ver[i]] : NULL;
		if (!in || in->klen != l[i].key.len || in->vlen != l[i].value.len ||
		    memcmp(in->key, l[i].key.buf, in->klen) ||
		    memcmp(in->value, l[i].value.buf, in->vlen)) {
			fail_at(w, F_UNKNOWN, kid[i], ver[i]);
			return;
		}
		if (seen & (1u << kid[i])) {
			fail_at(w, F_DUP, kid[i], n);
			return;
		}
		seen |= 1u << kid[i];
	}
	w->st.labels += n;
	if (model_eq(&w->m[w->cur], kid, ver, n))
		return;
	if (w->in_op && model_eq(&w->m[!w->cur], kid, ver, n)) {
		w->st.saw_new++;
		return;
	}
	if (w->in_op && w->allow_empty && !n) {
		w->st.saw_empty++;
		return;
	}
	fail_at(w, F_SET, n, w->m[w->cur].n);
}

static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
	struct writer *w = me;
	int saved_errno = errno;

	if (w && w->armed)
		check_snapshot(w);
	errno = saved_errno;
}

#if CAN_STEP
/* After each instruction while stepping; the kernel clears TF for the handler itself. */
static void on_sigtrap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	struct writer *w = me;
	int saved_errno = errno;

	if (w && w->armed && w->stepping) {
		w->st.steps++;
		check_snapshot(w);
		uc->uc_mcontext.gregs[REG_EFL] |= X86_EFLAGS_TF;
	} else {
		uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)X86_EFLAGS_TF;
	}
	errno = saved_errno;
}

/* Sets the trap flag: SIGTRAP after the next instruction. Skips the red zone. */
static __attribute__((noinline)) void step_on(void)
{
	__asm__ volatile("lea -128(%%rsp), %%rsp\n\t"
			 "pushfq\n\t"
			 "orq $0x100, (%%rsp)\n\t"
			 "popfq\n\t"
			 "lea 128(%%rsp), %%rsp" ::
				 : "memory", "cc");
}
#endif

static const struct model *cur_model(struct writer *w)
{
	return &w->m[w->cur];
}

/* Index of kid in m, or -1. */
static int model_find(const struct model *m, unsigned int kid)
{
	unsigned int i;

	for (i = 0; i < m->n; i++) {
		if (m->kid[i] == kid)
			return (int)i;
	}
	return -1;
}

static bool model_put(struct model *m, unsigned int kid, unsigned int ver)
{
	int i = model_find(m, kid);

	if (i < 0) {
		if (m->n == MAXL)
			return false;
		i = (int)m->n++;
		m->kid[i] = kid;
	}
	m->ver[i] = ver;
	return true;
}

static bool model_del(struct model *m, unsigned int kid)
{
	int i = model_find(m, kid);

	if (i < 0)
		return false;
	m->n--;
	m->kid[i] = m->kid[m->n];
	m->ver[i] = m->ver[m->n];
	return true;
}

/* An API call that publishes next is about to run (single-stepped, sometimes). */
static void begin(struct writer *w, const struct model *next, enum op op, bool allow_empty)
{
	w->m[!w->cur] = *next;
	w->allow_empty = allow_empty;
	w->op = op;
	w->st.ops[op]++;
	barrier();
	w->in_op = 1;
	barrier();
#if CAN_STEP
	if (!rnd(w, STEP_ONE_IN)) {
		w->stepping = 1;
		barrier();
		step_on();
	}
#endif
}

/* ... and has published it. */
static void end(struct writer *w)
{
	barrier();
	w->cur = !w->cur;
	barrier();
	w->in_op = 0;
	barrier();
	w->stepping = 0;
	barrier();
}

static void expect(struct writer *w, bool ok, unsigned long a, unsigned long b)
{
	if (!ok)
		fail_at(w, F_API, a, b);
}

static void do_op(struct writer *w);

static void do_set(struct writer *w)
{
	unsigned int kid = rnd(w, NKEYS), ver = rnd(w, NVERS);
	const struct inst *in = &insts[kid][ver];
	struct model next = *cur_model(w);
	int err;

	if (!model_put(&next, kid, ver)) {
		/* a failed call changes nothing: checked outside any call window */
		err = custom_labels_set(in->key, in->klen, in->value, in->vlen);
		expect(w, err == -ENOSPC, OP_SET, -err);
		return;
	}
	begin(w, &next, OP_SET, false);
	err = custom_labels_set(in->key, in->klen, in->value, in->vlen);
	end(w);
	expect(w, !err, OP_SET, -err);
	w->installed = -1;
}

static void do_delete(struct writer *w)
{
	unsigned int kid = rnd(w, NKEYS);
	const struct inst *in = &insts[kid][0];
	struct model next = *cur_model(w);
	int err;

	if (!model_del(&next, kid)) {
		err = custom_labels_delete(in->key, in->klen);
		expect(w, err == -ENOENT, OP_DELETE, -err);
		return;
	}
	begin(w, &next, OP_DELETE, false);
	err = custom_labels_delete(in->key, in->klen);
	end(w);
	expect(w, !err, OP_DELETE, -err);
	w->installed = -1;
}

static void do_clear(struct writer *w)
{
	const struct model none = {0};

	begin(w, &none, OP_CLEAR, false);
	custom_labels_clear();
	end(w);
	w->installed = -1;
}

static void do_swap(struct writer *w)
{
	const struct model none = {0};
	unsigned int j = rnd(w, NPREP + 1);
	struct custom_labels_labelset *prev, *want = w->installed >= 0 ? w->ps[w->installed] : NULL;

	begin(w, j < NPREP ? &w->pm[j] : &none, OP_SWAP, ABI_V0);
	prev = custom_labels_swap(j < NPREP ? w->ps[j] : NULL);
	end(w);
	expect(w, prev == want, OP_SWAP, j);
	w->installed = j < NPREP ? (int)j : -1;
}

static void do_prepared(struct writer *w)
{
	unsigned int j = rnd(w, NPREP), kid = rnd(w, NKEYS), ver = rnd(w, NVERS);
	const struct inst *in = &insts[kid][ver];
	int err;

	w->st.ops[OP_PREPARED]++;
	if ((int)j == w->installed) {
		err = custom_labels_labelset_set(w->ps[j], in->key, in->klen, in->value, in->vlen);
		expect(w, err == -EBUSY, OP_PREPARED, -err);
	} else if (!rnd(w, 3)) {
		bool found = model_del(&w->pm[j], kid);

		err = custom_labels_labelset_delete(w->ps[j], in->key, in->klen);
		expect(w, err == (found ? 0 : -ENOENT), OP_PREPARED, -err);
	} else {
		bool fits = model_put(&w->pm[j], kid, ver);

		err = custom_labels_labelset_set(w->ps[j], in->key, in->klen, in->value, in->vlen);
		expect(w, err == (fits ? 0 : -ENOSPC), OP_PREPARED, -err);
	}
}

static void do_read(struct writer *w)
{
	const struct model *m = cur_model(w);
	unsigned int kid = rnd(w, NKEYS);
	int i = model_find(m, kid);
	const unsigned char *v;
	size_t len;
	int err;

	w->st.ops[OP_READ]++;
	expect(w, custom_labels_count() == m->n, OP_READ, m->n);
	err = custom_labels_get(insts[kid][0].key, insts[kid][0].klen, &v, &len);
	if (i < 0) {
		expect(w, err == -ENOENT, OP_READ, -err);
	} else {
		const struct inst *in = &insts[kid][m->ver[i]];

		expect(w, !err && len == in->vlen && !memcmp(v, in->value, len), OP_READ, -err);
	}
}

struct rw_ctx {
	struct writer *w;
	struct model saved;
	int installed;
	int calls;
};

static void rw_fn(void *arg)
{
	struct rw_ctx *c = arg;
	struct writer *w = c->w;
	unsigned int i, n = rnd(w, 4);

	end(w); /* entering: the new set is published */
	c->calls++;
	w->installed = -1;
	w->depth++;
	for (i = 0; i < n; i++)
		do_op(w);
	w->depth--;
	/* returning: the library restores the saved labels, or reinstalls the prepared set */
	begin(w, c->installed >= 0 ? &w->pm[c->installed] : &c->saved, OP_RESTORE, ABI_V0);
}

static void do_run_with(struct writer *w)
{
	const struct model *m = cur_model(w);
	struct custom_labels_kv kv[3];
	struct rw_ctx c = {w, *m, w->installed, 0};
	struct model next = *m;
	unsigned int i, n = 1 + rnd(w, 3);
	bool fits = true, replaced = false, added = false;
	int err;

	for (i = 0; i < n; i++) {
		unsigned int kid = rnd(w, NKEYS), ver = rnd(w, NVERS);
		const struct inst *in = &insts[kid][ver];

		kv[i] = (struct custom_labels_kv){in->key, in->klen, in->value, in->vlen};
		if (model_find(m, kid) >= 0)
			replaced = true;
		else
			added = true;
		fits &= model_put(&next, kid, ver);
	}
	if (!fits) {
		err = custom_labels_run_with(kv, n, rw_fn, &c);
		expect(w, err == -ENOSPC && !c.calls, OP_RUN_WITH, -err);
		return;
	}
	/* v0: replacing some keys while adding others goes through the empty set */
	begin(w, &next, OP_RUN_WITH, ABI_V0 && replaced && added);
	err = custom_labels_run_with(kv, n, rw_fn, &c);
	end(w);
	expect(w, !err && c.calls == 1, OP_RUN_WITH, -err);
	w->installed = c.installed;
}

static void do_op(struct writer *w)
{
	unsigned int total = 0, r, op;

	for (op = 0; op < OP_N; op++)
		total += w->weights[op] * (op != OP_RUN_WITH || w->depth < MAX_DEPTH);
	r = rnd(w, total);
	for (op = 0; op < OP_N; op++) {
		unsigned int wt = w->weights[op] * (op != OP_RUN_WITH || w->depth < MAX_DEPTH);

		if (r < wt)
			break;
		r -= wt;
	}
	switch (op) {
	case OP_SET:
		do_set(w);
		break;
	case OP_DELETE:
		do_delete(w);
		break;
	case OP_CLEAR:
		do_clear(w);
		break;
	case OP_SWAP:
		do_swap(w);
		break;
	case OP_RUN_WITH:
		do_run_with(w);
		break;
	case OP_PREPARED:
		do_prepared(w);
		break;
	default:
		do_read(w);
		break;
	}
}

struct run {
	const unsigned int *weights;
	long life_ns;
	uint64_t seed;
	struct stats st;
	int setup_err;
};

static long elapsed_ns(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000000L + (t.tv_nsec - t0->tv_nsec);
}

static void *writer_main(void *arg)
{
	struct run *run = arg;
	struct writer w = {.installed = -1, .weights = run->weights, .rng = run->seed};
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF};
	struct itimerspec its = {{0, TIMER_NS}, {0, TIMER_NS}};
	struct timespec t0;
	timer_t timer;
	unsigned int j, i;

	w.tls = ABI_TLS;
	for (j = 0; j < NPREP; j++) {
		w.ps[j] = custom_labels_labelset_new();
		if (!w.ps[j]) {
			run->setup_err = ENOMEM;
			return NULL;
		}
		for (i = rnd(&w, MAXL + 1); i; i--) {
			unsigned int kid = rnd(&w, NKEYS), ver = rnd(&w, NVERS);
			const struct inst *in = &insts[kid][ver];

			if (model_put(&w.pm[j], kid, ver))
				custom_labels_labelset_set(w.ps[j], in->key, in->klen, in->value,
							   in->vlen);
		}
	}
	sev._sigev_un._tid = gettid(); /* glibc 2.36 lacks sigev_notify_thread_id */
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer)) {
		run->setup_err = errno;
		return NULL;
	}
	me = &w;
	barrier();
	w.armed = 1;
	timer_settime(timer, 0, &its, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		do_op(&w);
	while (elapsed_ns(&t0) < run->life_ns);
	w.armed = 0;
	barrier();
	timer_delete(timer);
	me = NULL;

	custom_labels_swap(NULL);
	for (j = 0; j < NPREP; j++)
		custom_labels_labelset_free(w.ps[j]);
	run->st = w.st;
	return NULL;
}

static void add_stats(struct stats *to, const struct stats *from)
{
	int i;

	to->interrupts += from->interrupts;
	to->steps += from->steps;
	to->saw_new += from->saw_new;
	to->saw_empty += from->saw_empty;
	to->labels += from->labels;
	for (i = 0; i < OP_KINDS; i++) {
		to->hits[i] += from->hits[i];
		to->ops[i] += from->ops[i];
	}
	if (from->failures && !to->failures) {
		to->first = from->first;
		to->first_a = from->first_a;
		to->first_b = from->first_b;
		to->first_op = from->first_op;
	}
	to->failures += from->failures;
}

static double test_seconds(void)
{
	const char *s = getenv("CL_TORN_SECONDS");
	double t = s ? atof(s) : 15;

	return t > 0 ? t : 15;
}

/* Runs writers with this op mix for share of the binary's time, then checks. */
static void hammer(const unsigned int *weights, double share)
{
	static uint64_t seed = 0x9e3779b97f4a7c15ULL;
	long budget = (long)(test_seconds() * share * 1e9);
	struct stats total = {0};
	struct run runs[NWRITERS];
	pthread_t threads[NWRITERS];
	struct timespec t0;
	int i, rounds = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed_ns(&t0) < budget) {
		long left = budget - elapsed_ns(&t0);

		for (i = 0; i < NWRITERS; i++) {
			runs[i] = (struct run){.weights = weights,
					       .life_ns = left < WRITER_LIFE_NS ? left
										: WRITER_LIFE_NS,
					       .seed = rnd64(&seed) | 1};
			assert_int_equal(pthread_create(&threads[i], NULL, writer_main, &runs[i]),
					 0);
		}
		for (i = 0; i < NWRITERS; i++) {
			assert_int_equal(pthread_join(threads[i], NULL), 0);
			assert_int_equal(runs[i].setup_err, 0);
			add_stats(&total, &runs[i].st);
		}
		rounds++;
	}

	printf("  %d writer threads, %lu interrupts (%lu single steps), %lu labels read, "
	       "%lu saw the new set early",
	       rounds * NWRITERS, total.interrupts, total.steps, total.labels, total.saw_new);
	if (ABI_V0)
		printf(", %lu saw a documented empty window", total.saw_empty);
	printf("\n  calls (interrupts inside):");
	for (i = 0; i < OP_KINDS; i++) {
		if (total.ops[i] || total.hits[i])
			printf(" %s %lu (%lu)", op_names[i], total.ops[i], total.hits[i]);
	}
	printf("\n");
	if (total.failures)
		fail_msg("%lu failures, first: %s (%lu, %lu) during %s", total.failures,
			 failure_names[total.first], total.first_a, total.first_b,
			 total.first_op >= 0 ? op_names[total.first_op] : "no call");
	/* the interrupts must really have landed inside the calls under test */
	for (i = 0; i < OP_KINDS; i++) {
		if (i != OP_PREPARED && i != OP_READ && total.ops[i] > 1000)
			assert_true(total.hits[i] >= 10);
	}
	assert_true(total.interrupts >= 10000);
	assert_true(!CAN_STEP || total.steps >= 10000);
}

static void test_own_set(void **state)
{
	static const unsigned int w[OP_N] = {
		[OP_SET] = 50,
		[OP_DELETE] = 30,
		[OP_CLEAR] = 2,
		[OP_READ] = 10,
	};

	hammer(w, 0.3);
}

static void test_prepared_sets(void **state)
{
	static const unsigned int w[OP_N] = {
		[OP_SET] = 25,	[OP_DELETE] = 15,   [OP_CLEAR] = 2,
		[OP_SWAP] = 30, [OP_PREPARED] = 20, [OP_READ] = 5,
	};

	hammer(w, 0.3);
}

static void test_everything(void **state)
{
	static const unsigned int w[OP_N] = {
		[OP_SET] = 25,	    [OP_DELETE] = 15,	[OP_CLEAR] = 2, [OP_SWAP] = 12,
		[OP_RUN_WITH] = 25, [OP_PREPARED] = 10, [OP_READ] = 5,
	};

	hammer(w, 0.4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_set),
		cmocka_unit_test(test_prepared_sets),
		cmocka_unit_test(test_everything),
	};
	struct sigaction sa = {.sa_sigaction = on_sigprof, .sa_flags = SA_SIGINFO | SA_RESTART};

	setvbuf(stdout, NULL, _IOLBF, 0); /* whole lines, in order with cmocka's stderr */
	make_insts();
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL)) {
		perror("sigaction");
		return 1;
	}
#if CAN_STEP
	sa.sa_sigaction = on_sigtrap;
	if (sigaction(SIGTRAP, &sa, NULL)) {
		perror("sigaction");
		return 1;
	}
#endif
	return cmocka_run_group_tests(tests, NULL, NULL);
}
