// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * OpenTelemetry contexts in userspace: the process context reader
 * (proc/otel_ctx.c) on headers and payloads this test lays out in its own
 * memory, hostile ones included, and the labels OTel thread records turn into
 * (profile/otel_labels.c through the profile), with the sources' precedence.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "labelprof.h"
#include "proc/otel_ctx.h"
#include "profile/otel_labels.h"
#include "profile/profile.h"
#include "opentelemetry/proto/processcontext/v1development/process_context.pb-c.h"

typedef Opentelemetry__Proto__Common__V1__AnyValue any_value_t;
typedef Opentelemetry__Proto__Common__V1__KeyValue key_value_t;
typedef Opentelemetry__Proto__Processcontext__V1development__ContextAnyValue ctx_value_t;
typedef Opentelemetry__Proto__Processcontext__V1development__ContextKeyValue ctx_kv_t;
typedef Opentelemetry__Proto__Processcontext__V1development__ContextArrayValue ctx_array_t;
typedef Opentelemetry__Proto__Processcontext__V1development__ProcessContext process_context_t;

/* The header of OTEP 4719. */
struct header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t published_at_ns;
	uint64_t payload;
};

/* A ProcessContext payload: resource attributes (string values) and a key map of n keys. */
static uint8_t *pack_context(const char *const *resource, size_t n_resource,
			     const char *const *keys, size_t n_keys, size_t *len)
{
	Opentelemetry__Proto__Resource__V1__Resource res =
		OPENTELEMETRY__PROTO__RESOURCE__V1__RESOURCE__INIT;
	process_context_t pc =
		OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__PROCESS_CONTEXT__INIT;
	ctx_kv_t map = OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__CONTEXT_KEY_VALUE__INIT;
	ctx_value_t mapv =
		OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__CONTEXT_ANY_VALUE__INIT;
	ctx_array_t arr =
		OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__CONTEXT_ARRAY_VALUE__INIT;
	ctx_kv_t *attrs[1] = {&map};
	key_value_t *kvs = calloc(n_resource, sizeof(*kvs));
	key_value_t **kvp = calloc(n_resource, sizeof(*kvp));
	any_value_t *vals = calloc(n_resource + n_keys, sizeof(*vals));
	any_value_t **valp = calloc(n_keys ? n_keys : 1, sizeof(*valp));
	uint8_t *buf;
	size_t i;

	assert_true(kvs && kvp && vals && valp);
	for (i = 0; i < n_resource; i++) {
		key_value_t kv = OPENTELEMETRY__PROTO__COMMON__V1__KEY_VALUE__INIT;
		any_value_t v = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;

		kvs[i] = kv;
		vals[i] = v;
		kvs[i].key = (char *)resource[2 * i];
		vals[i].value_case =
			OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		vals[i].string_value = (char *)resource[2 * i + 1];
		kvs[i].value = &vals[i];
		kvp[i] = &kvs[i];
	}
	res.n_attributes = n_resource;
	res.attributes = kvp;
	pc.resource = &res;
	for (i = 0; i < n_keys; i++) {
		any_value_t v = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;

		vals[n_resource + i] = v;
		vals[n_resource + i].value_case =
			OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		vals[n_resource + i].string_value = (char *)keys[i];
		valp[i] = &vals[n_resource + i];
	}
	arr.n_values = n_keys;
	arr.values = valp;
	mapv.value_case =
		OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__CONTEXT_ANY_VALUE__VALUE_ARRAY_VALUE;
	mapv.array_value = &arr;
	map.key = (char *)OTEL_CTX_KEY_MAP;
	map.value = &mapv;
	pc.n_attributes = 1;
	pc.attributes = attrs;
	*len = opentelemetry__proto__processcontext__v1development__process_context__get_packed_size(
		&pc);
	buf = malloc(*len ? *len : 1);
	assert_non_null(buf);
	opentelemetry__proto__processcontext__v1development__process_context__pack(&pc, buf);
	free(kvs);
	free(kvp);
	free(vals);
	free(valp);
	return buf;
}

static const char *const resource[] = {"service.name", "checkout", "service.instance.id", "i-1"};
static const char *const keys[] = {"http.route", "tenant"};

static void test_decode(void **state)
{
	struct otel_ctx ctx;
	size_t len;
	uint8_t *p = pack_context(resource, 2, keys, 2, &len);
	char err[128];

	(void)state;
	assert_int_equal(otel_ctx__decode(p, len, &ctx, err, sizeof(err)), 0);
	assert_int_equal(ctx.nr_resource, 2);
	assert_string_equal(ctx.resource[0].key, "service.name");
	assert_string_equal(ctx.resource[0].value, "checkout");
	assert_string_equal(ctx.resource[1].value, "i-1");
	assert_int_equal(ctx.nr_keys, 2);
	assert_int_equal(ctx.key_map_len, 2);
	assert_string_equal(ctx.keys[1], "tenant");
	otel_ctx__clear(&ctx);
	/* not protobuf: an error, not a crash */
	memset(p, 0xff, len);
	assert_int_equal(otel_ctx__decode(p, len, &ctx, err, sizeof(err)), -EINVAL);
	free(p);
}

/* A ProcessContext attribute of an integer or string value. */
static ctx_kv_t *ctx_attr(ctx_kv_t *kv, ctx_value_t *v, const char *key, const char *str,
			  int64_t num)
{
	ctx_kv_t k = OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__CONTEXT_KEY_VALUE__INIT;
	ctx_value_t x =
		OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__CONTEXT_ANY_VALUE__INIT;

	*kv = k;
	*v = x;
	kv->key = (char *)key;
	if (str) {
		v->value_case =
			OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__CONTEXT_ANY_VALUE__VALUE_STRING_VALUE;
		v->string_value = (char *)str;
	} else {
		v->value_case =
			OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__CONTEXT_ANY_VALUE__VALUE_INT_VALUE;
		v->int_value = num;
	}
	kv->value = v;
	return kv;
}

/* The Node.js schema's layout constants (threadlocal.*, integers or strings) are kept as text. */
static void test_decode_threadlocal(void **state)
{
	process_context_t pc =
		OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__PROCESS_CONTEXT__INIT;
	ctx_kv_t kv[4], *attrs[4];
	ctx_value_t v[4];
	struct otel_ctx ctx;
	uint8_t buf[512];
	size_t len;

	(void)state;
	attrs[0] = ctx_attr(&kv[0], &v[0], OTEL_CTX_SCHEMA_VERSION, "nodejs_v1_dev", 0);
	attrs[1] = ctx_attr(&kv[1], &v[1], "threadlocal.tagged_size", NULL, 8);
	attrs[2] = ctx_attr(&kv[2], &v[2], "threadlocal.js_object_record_offset", "32", 0);
	attrs[3] = ctx_attr(&kv[3], &v[3], "not.threadlocal", NULL, 1);
	pc.n_attributes = 4;
	pc.attributes = attrs;
	len = opentelemetry__proto__processcontext__v1development__process_context__pack(&pc, buf);
	assert_int_equal(otel_ctx__decode(buf, len, &ctx, NULL, 0), 0);
	assert_string_equal(ctx.schema_version, "nodejs_v1_dev");
	assert_int_equal(ctx.nr_threadlocal, 2);
	assert_string_equal(otel_ctx__threadlocal(&ctx, "threadlocal.tagged_size"), "8");
	assert_string_equal(otel_ctx__threadlocal(&ctx, "threadlocal.js_object_record_offset"),
			    "32");
	assert_null(otel_ctx__threadlocal(&ctx, "not.threadlocal"));
	assert_null(otel_ctx__threadlocal(&ctx, OTEL_CTX_SCHEMA_VERSION));
	otel_ctx__clear(&ctx);
}

/* 10 000 keys: the first 256 are the ones a one-byte index can name. */
static void test_huge_key_map(void **state)
{
	static const char *many[10000];
	struct otel_ctx ctx;
	size_t len, i;
	uint8_t *p;

	(void)state;
	for (i = 0; i < 10000; i++)
		many[i] = i == 255 ? "last" : "k";
	p = pack_context(NULL, 0, many, 10000, &len);
	assert_true(len <= OTEL_CTX_MAX_PAYLOAD);
	assert_int_equal(otel_ctx__decode(p, len, &ctx, NULL, 0), 0);
	assert_int_equal(ctx.key_map_len, 10000);
	assert_int_equal(ctx.nr_keys, OTEL_CTX_MAX_KEYS);
	assert_string_equal(ctx.keys[255], "last");
	otel_ctx__clear(&ctx);
	free(p);
}

/* A process context in this process's memory, found as a reader finds one. */
struct published {
	struct header *h;
	size_t size;
	uint8_t *payload;
	size_t len;
};

static void publish(struct published *pub)
{
	int fd = memfd_create("OTEL_CTX", MFD_CLOEXEC);

	assert_true(fd >= 0);
	pub->size = sysconf(_SC_PAGESIZE);
	assert_int_equal(ftruncate(fd, pub->size), 0);
	pub->h = mmap(NULL, pub->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(pub->h != MAP_FAILED);
	pub->payload = pack_context(resource, 2, keys, 2, &pub->len);
	pub->h->version = OTEL_CTX_VERSION;
	pub->h->payload_size = pub->len;
	pub->h->payload = (uintptr_t)pub->payload;
	pub->h->published_at_ns = 12345;
	memcpy(pub->h->signature, "OTEL_CTX", 8);
}

static void unpublish(struct published *pub)
{
	munmap(pub->h, pub->size);
	free(pub->payload);
}

static void test_read_hostile_headers(void **state)
{
	struct published pub;
	struct otel_ctx *ctx;
	__u64 addr;
	char err[128];

	(void)state;
	publish(&pub);
	assert_int_equal(otel_ctx__find(getpid(), NULL, &addr), 0);
	assert_ptr_equal((void *)(uintptr_t)addr, pub.h);
	assert_int_equal(otel_ctx__read(getpid(), addr, &ctx, err, sizeof(err)), 0);
	assert_int_equal(ctx->published_at_ns, 12345);
	assert_string_equal(ctx->keys[0], "http.route");
	otel_ctx__free(ctx);

	/* published_at that never settles: being updated, forever */
	pub.h->published_at_ns = 0;
	assert_int_equal(otel_ctx__read(getpid(), addr, &ctx, err, sizeof(err)), -EAGAIN);
	assert_null(ctx);
	pub.h->published_at_ns = 1;
	/* a payload past 64 KiB */
	pub.h->payload_size = OTEL_CTX_MAX_PAYLOAD + 1;
	assert_int_equal(otel_ctx__read(getpid(), addr, &ctx, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "payload"));
	/* a payload pointer to nowhere */
	pub.h->payload_size = pub.len;
	pub.h->payload = 0x10;
	assert_int_equal(otel_ctx__read(getpid(), addr, &ctx, err, sizeof(err)), -EINVAL);
	/* a payload that is no ProcessContext */
	pub.h->payload = (uintptr_t) "\xff\xff\xff\xff";
	pub.h->payload_size = 4;
	assert_int_equal(otel_ctx__read(getpid(), addr, &ctx, err, sizeof(err)), -EINVAL);
	/* another version, then no signature */
	pub.h->version = 3;
	assert_int_equal(otel_ctx__read(getpid(), addr, &ctx, err, sizeof(err)), -EINVAL);
	memset(pub.h->signature, 0, 8);
	assert_int_equal(otel_ctx__read(getpid(), addr, &ctx, err, sizeof(err)), -ENOENT);
	unpublish(&pub);
	assert_int_equal(otel_ctx__find(getpid(), NULL, &addr), -ENOENT);
}

/* A record of this process, as BPF writes it: the labels given with their sources. */
struct lbl {
	const char *key;
	size_t key_len;
	const char *value;
	size_t value_len;
	__u32 source;
};

static size_t build(uint8_t *buf, const struct lbl *l, size_t n)
{
	struct lp_sample h = {0};
	size_t off = sizeof(h), i;

	h.hdr.type = LP_EVENT_SAMPLE;
	h.tgid = getpid();
	h.tid = getpid();
	h.label_count = n;
	for (i = 0; i < n; i++) {
		struct lp_label_hdr lh = {l[i].key_len | l[i].source << LP_LABEL_SRC_SHIFT,
					  l[i].value_len};

		memcpy(buf + off, &lh, sizeof(lh));
		off += sizeof(lh);
		memcpy(buf + off, l[i].key, l[i].key_len);
		off += l[i].key_len;
		memcpy(buf + off, l[i].value, l[i].value_len);
		off += l[i].value_len;
	}
	h.label_bytes = off - sizeof(h);
	h.hdr.size = off;
	memcpy(buf, &h, sizeof(h));
	return off;
}

/* The first sample (handed over on the stack: copied; what it points to lives with the profile). */
static int take_first(const struct profile_sample *s, void *ctx)
{
	*(struct profile_sample *)ctx = *s;
	return 1;
}

static const char *label(const struct profile_sample *s, const char *key, __u32 *source)
{
	static char value[256];
	size_t i;

	for (i = 0; i < s->label_count; i++) {
		const struct profile_label *l = &s->labels[i];

		if (l->key_len == strlen(key) && !memcmp(l->key, key, l->key_len)) {
			snprintf(value, sizeof(value), "%.*s", (int)l->value_len, l->value);
			*source = l->source;
			return value;
		}
	}
	return NULL;
}

static void test_thread_labels(void **state)
{
	static const char trace[16] = {0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
				       0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36};
	static const char span[8] = {0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7};
	const struct lbl labels[] = {
		{"tenant", 6, "custom", 6, LP_SRC_CUSTOM_LABELS},
		{"trace_id", 8, trace, 16, LP_SRC_OTEL_THREAD},
		{"span_id", 7, span, 8, LP_SRC_OTEL_THREAD},
		{"\x00", 1, "/checkout", 9, LP_SRC_OTEL_THREAD},
		{"\x01", 1, "otel", 4, LP_SRC_OTEL_THREAD}, /* tenant: custom labels win */
		{"\x07", 1, "x", 1, LP_SRC_OTEL_THREAD},    /* not in the key map */
	};
	struct otel_labels *o = otel_labels__new();
	struct profile *p = profile__new(NULL, NULL);
	struct otel_labels_proc op = {0};
	struct profile_sample s = {0};
	struct profile_resolver r;
	struct published pub;
	uint8_t buf[1024];
	__u32 src;

	(void)state;
	assert_non_null(o);
	assert_non_null(p);
	publish(&pub);
	otel_labels__proc_init(&op, getpid(), NULL);
	otel_labels__resolver(o, &op, &r);
	profile__set_resolver(p, &r);
	assert_int_equal(profile__add_sample(p, buf, build(buf, labels, 6)), 0);
	profile__for_each(p, take_first, &s);
	/* the ids, http.route, tenant and the two resource attributes: index 7 is no label */
	assert_int_equal(s.label_count, 6);
	assert_string_equal(label(&s, "trace_id", &src), "4bf92f3577b34da6a3ce929d0e0e4736");
	assert_int_equal(src, LP_SRC_OTEL_THREAD);
	assert_string_equal(label(&s, "span_id", &src), "00f067aa0ba902b7");
	assert_string_equal(label(&s, "http.route", &src), "/checkout");
	assert_string_equal(label(&s, "tenant", &src), "custom");
	assert_int_equal(src, LP_SRC_CUSTOM_LABELS);
	assert_true(op.stale);
	assert_string_equal(label(&s, "service.name", &src), "checkout");
	assert_int_equal(src, LP_SRC_OTEL_PROCESS);
	assert_string_equal(label(&s, "service.instance.id", &src), "i-1");
	profile__free(p);
	otel_labels__proc_clear(&op);
	otel_labels__free(o);
	unpublish(&pub);
}

/*
 * A key index the map does not name is no label (OTEP 4947: ignored), and
 * reads the context again (at most every OTEL_REFRESH_MIN_MS): after a new
 * publication with a longer map, it is named.
 */
static void test_refresh_on_unknown_key(void **state)
{
	static const char *const longer[] = {"http.route", "tenant", "db.system"};
	const struct lbl labels[] = {{"\x02", 1, "pg", 2, LP_SRC_OTEL_THREAD}};
	struct otel_labels *o = otel_labels__new();
	struct profile *p = profile__new(NULL, NULL);
	struct timespec wait = {0, (OTEL_REFRESH_MIN_MS + 50) * 1000000L};
	struct otel_labels_proc op = {0};
	struct profile_sample s = {0};
	struct profile_resolver r;
	struct published pub;
	uint8_t buf[256], *old;
	size_t len = build(buf, labels, 1);
	__u32 src;

	(void)state;
	assert_non_null(o);
	assert_non_null(p);
	publish(&pub);
	otel_labels__proc_init(&op, getpid(), NULL);
	otel_labels__resolver(o, &op, &r);
	profile__set_resolver(p, &r);
	assert_int_equal(profile__add_sample(p, buf, len), 0);
	profile__for_each(p, take_first, &s);
	/* the resource attributes alone */
	assert_int_equal(s.label_count, 2);
	assert_null(label(&s, "db.system", &src));
	assert_true(op.stale);
	/* the update protocol: being updated, new payload, new time */
	old = pub.payload;
	pub.h->published_at_ns = 0;
	pub.payload = pack_context(resource, 2, longer, 3, &pub.len);
	pub.h->payload = (uintptr_t)pub.payload;
	pub.h->payload_size = pub.len;
	pub.h->published_at_ns = 23456;
	free(old);
	nanosleep(&wait, NULL);
	profile__free(p);
	p = profile__new(NULL, NULL);
	assert_non_null(p);
	profile__set_resolver(p, &r);
	assert_int_equal(profile__add_sample(p, buf, len), 0);
	profile__for_each(p, take_first, &s);
	assert_string_equal(label(&s, "db.system", &src), "pg");
	assert_int_equal(otel_labels__proc_ctx(&op)->published_at_ns, 23456);
	profile__free(p);
	otel_labels__proc_clear(&op);
	otel_labels__free(o);
	unpublish(&pub);
}

/*
 * A context published after the process was first read (a Python service
 * publishes at start, after labelprof saw it exec): the first record with an
 * attribute reads it at once, so that record has the attribute's name and
 * the resource attributes, no wait. Then a record naming an index the new
 * map lacks does not read again before OTEL_REFRESH_MIN_MS.
 */
static void test_published_after_first_read(void **state)
{
	const struct lbl labels[] = {{"\x01", 1, "acme", 4, LP_SRC_OTEL_THREAD}};
	const struct lbl unnamed[] = {{"\x05", 1, "x", 1, LP_SRC_OTEL_THREAD}};
	struct otel_labels *o = otel_labels__new();
	struct profile *p = profile__new(NULL, NULL);
	struct otel_labels_proc op = {0};
	struct profile_sample s = {0};
	struct profile_resolver r;
	struct published pub;
	uint8_t buf[256];
	size_t len = build(buf, labels, 1);
	__u64 checked;
	__u32 src;

	(void)state;
	assert_non_null(o);
	assert_non_null(p);
	otel_labels__proc_init(&op, getpid(), NULL);
	assert_null(op.ctx);
	publish(&pub);
	otel_labels__resolver(o, &op, &r);
	profile__set_resolver(p, &r);
	assert_int_equal(profile__add_sample(p, buf, len), 0);
	profile__for_each(p, take_first, &s);
	assert_int_equal(s.label_count, 3);
	assert_string_equal(label(&s, "tenant", &src), "acme");
	assert_string_equal(label(&s, "service.name", &src), "checkout");
	checked = op.check_ns;
	profile__free(p);
	p = profile__new(NULL, NULL);
	assert_non_null(p);
	profile__set_resolver(p, &r);
	len = build(buf, unnamed, 1);
	assert_int_equal(profile__add_sample(p, buf, len), 0);
	assert_true(op.stale);
	assert_int_equal(op.check_ns, checked);
	profile__free(p);
	otel_labels__proc_clear(&op);
	otel_labels__free(o);
	unpublish(&pub);
}

/*
 * A process that exits after publishing: its samples still in the ring
 * buffer are resolved after it is gone, and a check due then must not drop
 * what it published (their resource attributes and key names).
 */
static void test_context_outlives_process(void **state)
{
	struct timespec wait = {OTEL_RECHECK_MS / 1000, (OTEL_RECHECK_MS % 1000 + 50) * 1000000L};
	struct otel_labels_proc op = {0};
	const struct otel_ctx *ctx;
	struct published pub;
	int ready[2], status;
	char c;
	pid_t child;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		publish(&pub);
		close(ready[0]);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		/* until the parent has read the context: its end of the pipe closes */
		pause();
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	otel_labels__proc_init(&op, child, NULL);
	assert_non_null(op.ctx);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	close(ready[0]);
	nanosleep(&wait, NULL);
	ctx = otel_labels__proc_ctx(&op);
	assert_non_null(ctx);
	assert_string_equal(ctx->resource[0].value, "checkout");
	assert_string_equal(ctx->keys[1], "tenant");
	otel_labels__proc_clear(&op);
}

/* A new publication (a new published_at_ns) is read at the next check. */
static void test_new_publication(void **state)
{
	static const char *const renamed[] = {"service.name", "payments"};
	struct timespec wait = {OTEL_RECHECK_MS / 1000, (OTEL_RECHECK_MS % 1000 + 50) * 1000000L};
	struct otel_labels_proc op = {0};
	const struct otel_ctx *ctx;
	struct published pub;
	uint8_t *old;

	(void)state;
	publish(&pub);
	otel_labels__proc_init(&op, getpid(), NULL);
	ctx = otel_labels__proc_ctx(&op);
	assert_non_null(ctx);
	assert_string_equal(ctx->resource[0].value, "checkout");
	old = pub.payload;
	pub.h->published_at_ns = 0;
	pub.payload = pack_context(renamed, 1, keys, 2, &pub.len);
	pub.h->payload = (uintptr_t)pub.payload;
	pub.h->payload_size = pub.len;
	pub.h->published_at_ns = 34567;
	free(old);
	nanosleep(&wait, NULL);
	ctx = otel_labels__proc_ctx(&op);
	assert_non_null(ctx);
	assert_int_equal(ctx->nr_resource, 1);
	assert_string_equal(ctx->resource[0].value, "payments");
	/* withdrawn: no context any more */
	unpublish(&pub);
	nanosleep(&wait, NULL);
	assert_null(otel_labels__proc_ctx(&op));
	otel_labels__proc_clear(&op);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_threadlocal),
		cmocka_unit_test(test_huge_key_map),
		cmocka_unit_test(test_read_hostile_headers),
		cmocka_unit_test(test_thread_labels),
		cmocka_unit_test(test_refresh_on_unknown_key),
		cmocka_unit_test(test_new_publication),
		cmocka_unit_test(test_published_after_first_read),
		cmocka_unit_test(test_context_outlives_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
