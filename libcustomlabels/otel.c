// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcustomlabels: the OpenTelemetry thread context (OTEP 4947) and process
 * context (OTEP 4719) writers (customlabels.h).
 *
 * The thread context follows the same reader model as the custom labels: a
 * reader stops the thread at any instruction, so installing a record is one
 * pointer store after the record is complete (a release store orders them).
 *
 * The process context is a page named OTEL_CTX holding the 32-byte header;
 * the protobuf payload lives in its own allocation, so that an update can
 * publish a new payload without touching the one a reader may be copying:
 * published_at_ns = 0, new pointer and size, new published_at_ns.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "customlabels.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA	     0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

#define CL_EXPORT __attribute__((visibility("default")))

_Static_assert(sizeof(struct custom_labels_otel_record) == CUSTOM_LABELS_OTEL_RECORD_SIZE,
	       "OTEP 4947 record layout");

CL_EXPORT __thread struct custom_labels_otel_record *otel_thread_ctx_v1;

int custom_labels_otel_record_init(struct custom_labels_otel_record *r,
				   const unsigned char trace_id[16], const unsigned char span_id[8],
				   unsigned char trace_flags)
{
	if (!r)
		return -EINVAL;
	memset(r, 0, CUSTOM_LABELS_OTEL_HEADER_SIZE);
	if (trace_id)
		memcpy(r->trace_id, trace_id, sizeof(r->trace_id));
	if (span_id)
		memcpy(r->span_id, span_id, sizeof(r->span_id));
	r->trace_flags = trace_flags;
	r->valid = 1;
	return 0;
}

int custom_labels_otel_record_add(struct custom_labels_otel_record *r, unsigned char key_index,
				  const void *value, size_t len)
{
	size_t at;

	if (!r || (!value && len))
		return -EINVAL;
	if (len > CUSTOM_LABELS_OTEL_VALUE_MAX)
		return -EMSGSIZE;
	at = r->attrs_data_size;
	if (at > CUSTOM_LABELS_OTEL_ATTRS_MAX || CUSTOM_LABELS_OTEL_ATTRS_MAX - at < 2 + len)
		return -ENOSPC;
	r->attrs_data[at] = key_index;
	r->attrs_data[at + 1] = (unsigned char)len;
	if (len)
		memcpy(r->attrs_data + at + 2, value, len);
	r->attrs_data_size = (unsigned short)(at + 2 + len);
	return 0;
}

struct custom_labels_otel_record *custom_labels_otel_attach(struct custom_labels_otel_record *r)
{
	struct custom_labels_otel_record *old = otel_thread_ctx_v1;

	/* the record's bytes before the pointer that makes them reachable */
	__atomic_store_n(&otel_thread_ctx_v1, r, __ATOMIC_RELEASE);
	return old;
}

struct custom_labels_otel_record *custom_labels_otel_current(void)
{
	return otel_thread_ctx_v1;
}

/* ---- process context ---------------------------------------------------- */

#define CTX_MAX_PAYLOAD (64u << 10)
#define CTX_MAX_KEYS	256
#define CTX_VERSION	2
#define CTX_KEY_MAP	"threadlocal.attribute_key_map"
#define CTX_SCHEMA	"threadlocal.schema_version"
#define CTX_SCHEMA_V1	"otel_thread_ctx_v1"

struct ctx_header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t published_at_ns;
	uint64_t payload;
};

static struct ctx_header *ctx_page;
static size_t ctx_page_size;
static void *ctx_payload;

/* A protobuf encoding being built; err once anything failed. */
struct pb {
	unsigned char *p;
	size_t len, cap;
	int err;
};

static void pb_bytes(struct pb *b, const void *p, size_t n)
{
	unsigned char *np;
	size_t cap;

	if (b->err)
		return;
	if (n > CTX_MAX_PAYLOAD || b->len + n > CTX_MAX_PAYLOAD) {
		b->err = -EMSGSIZE;
		return;
	}
	if (b->len + n > b->cap) {
		cap = b->cap ? b->cap * 2 : 256;
		while (cap < b->len + n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np) {
			b->err = -ENOMEM;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	unsigned char out[10];
	size_t n = 0;

	do {
		out[n] = v & 0x7f;
		v >>= 7;
		if (v)
			out[n] |= 0x80;
		n++;
	} while (v);
	pb_bytes(b, out, n);
}

/* A length-delimited field (wire type 2). */
static void pb_field(struct pb *b, unsigned int field, const void *p, size_t n)
{
	pb_varint(b, field << 3 | 2);
	pb_varint(b, n);
	pb_bytes(b, p, n);
}

/* A sub-message field from inner, which is consumed. */
static void pb_message(struct pb *b, unsigned int field, struct pb *inner)
{
	if (inner->err && !b->err)
		b->err = inner->err;
	pb_field(b, field, inner->p, inner->len);
	free(inner->p);
}

/* common.v1.AnyValue { string_value = 1 } */
static void pb_string_value(struct pb *b, unsigned int field, const char *s)
{
	struct pb v = {0};

	pb_field(&v, 1, s, strlen(s));
	pb_message(b, field, &v);
}

/* common.v1.KeyValue { key = 1, value = 2 } with a string value */
static void pb_key_value(struct pb *b, unsigned int field, const char *key, const char *value)
{
	struct pb kv = {0};

	pb_field(&kv, 1, key, strlen(key));
	pb_string_value(&kv, 2, value);
	pb_message(b, field, &kv);
}

/* ProcessContext { resource = 1; repeated KeyValue attributes = 2 } */
static int encode_context(struct pb *out, const char *schema,
			  const struct custom_labels_otel_attr *resource, size_t n_resource,
			  const char *const *key_map, size_t n_keys)
{
	struct pb res = {0}, kv = {0}, any = {0}, arr = {0};
	size_t i;

	for (i = 0; i < n_resource; i++)
		pb_key_value(&res, 1, resource[i].key, resource[i].value);
	pb_message(out, 1, &res);
	if (n_keys) {
		for (i = 0; i < n_keys; i++)
			pb_string_value(&arr, 1, key_map[i]);
		pb_message(&any, 5, &arr); /* AnyValue.array_value */
		pb_field(&kv, 1, CTX_KEY_MAP, strlen(CTX_KEY_MAP));
		pb_message(&kv, 2, &any);
		pb_message(out, 2, &kv);
		pb_key_value(out, 2, CTX_SCHEMA, schema);
	}
	return out->err;
}

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static int map_page(void)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = MAP_FAILED;
	int fd;

	ctx_page_size = page > 0 ? (size_t)page : 4096;
	fd = memfd_create("OTEL_CTX", MFD_CLOEXEC);
	if (fd >= 0) {
		if (!ftruncate(fd, ctx_page_size))
			p = mmap(NULL, ctx_page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
	}
	if (p == MAP_FAILED)
		p = mmap(NULL, ctx_page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	/* a child publishes its own context, or none: never this one */
	madvise(p, ctx_page_size, MADV_DONTFORK);
	ctx_page = p;
	return 0;
}

int custom_labels_otel_publish(const struct custom_labels_otel_attr *resource, size_t n_resource,
			       const char *const *key_map, size_t n_keys)
{
	return custom_labels_otel_publish_schema(CTX_SCHEMA_V1, resource, n_resource, key_map,
						 n_keys);
}

int custom_labels_otel_publish_schema(const char *schema,
				      const struct custom_labels_otel_attr *resource,
				      size_t n_resource, const char *const *key_map, size_t n_keys)
{
	struct pb payload = {0};
	void *old;
	size_t i;
	int ret;

	if (!schema || (n_resource && !resource) || (n_keys && !key_map) || n_keys > CTX_MAX_KEYS)
		return -EINVAL;
	for (i = 0; i < n_resource; i++)
		if (!resource[i].key || !resource[i].value)
			return -EINVAL;
	for (i = 0; i < n_keys; i++)
		if (!key_map[i])
			return -EINVAL;
	ret = encode_context(&payload, schema, resource, n_resource, key_map, n_keys);
	if (ret) {
		free(payload.p);
		return ret;
	}
	if (!payload.p) {
		payload.p = malloc(1); /* an empty context still needs a valid pointer */
		if (!payload.p)
			return -ENOMEM;
	}
	if (!ctx_page && (ret = map_page())) {
		free(payload.p);
		return ret;
	}
	old = ctx_payload;
	if (ctx_page->signature[0]) {
		/* an update: readers that see 0 wait, readers that saw the old time retry */
		__atomic_store_n(&ctx_page->published_at_ns, 0, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	ctx_page->version = CTX_VERSION;
	ctx_page->payload = (uintptr_t)payload.p;
	ctx_page->payload_size = (uint32_t)payload.len;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&ctx_page->published_at_ns, boottime_ns(), __ATOMIC_RELEASE);
	/* the signature last: once it is there, the rest is valid */
	if (!ctx_page->signature[0]) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		memcpy(ctx_page->signature, "OTEL_CTX", sizeof(ctx_page->signature));
	}
	ctx_payload = payload.p;
	/* names an anonymous mapping, and tells naming-aware readers of an update */
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)ctx_page, ctx_page_size,
	      (unsigned long)"OTEL_CTX");
	free(old);
	return 0;
}

int custom_labels_otel_unpublish(void)
{
	if (!ctx_page)
		return 0;
	munmap(ctx_page, ctx_page_size);
	ctx_page = NULL;
	free(ctx_payload);
	ctx_payload = NULL;
	return 0;
}
