// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Reading a process's OpenTelemetry process context (proc/otel_ctx.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "lib/compiler.h"
#include "lib/msg.h"
#include "proc/maps.h"
#include "proc/otel_ctx.h"
#include "opentelemetry/proto/processcontext/v1development/process_context.pb-c.h"

#define OTEL_CTX_SIGNATURE "OTEL_CTX"

struct otel_ctx_header {
	char signature[8];
	__u32 version;
	__u32 payload_size;
	__u64 published_at_ns;
	__u64 payload;
};
_Static_assert(sizeof(struct otel_ctx_header) == OTEL_CTX_HEADER_SIZE, "OTEP 4719 header");

/* The mapping names OTEP 4719 publishers use; the kernel may add " (deleted)". */
static bool is_ctx_mapping(const struct maps_entry *e)
{
	static const char *const names[] = {"[anon_shmem:OTEL_CTX]", "[anon:OTEL_CTX]",
					    "/memfd:OTEL_CTX"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(e->path, names[i]))
			return e->end - e->start >= OTEL_CTX_HEADER_SIZE;
	return false;
}

int otel_ctx__find(int pid, const struct maps *given, __u64 *addr)
{
	struct maps *read = NULL;
	const struct maps *maps = given;
	size_t i;
	int ret;

	if (!maps) {
		ret = maps__read(pid, 0, &read);
		if (ret)
			return ret;
		maps = read;
	}
	ret = -ENOENT;
	for (i = 0; i < maps__count(maps); i++) {
		const struct maps_entry *e = maps__entry(maps, i);

		if ((e->prot & MAPS_PROT_READ) && is_ctx_mapping(e)) {
			*addr = e->start;
			ret = 0;
			break;
		}
	}
	maps__free(read);
	return ret;
}

/* len bytes at addr of pid; -ENOENT where nothing is mapped. */
static int read_mem(int pid, __u64 addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	if (n >= 0 || errno == EFAULT)
		return -ENOENT;
	return -errno;
}

static int read_header(int pid, __u64 addr, struct otel_ctx_header *h)
{
	int ret = read_mem(pid, addr, h, sizeof(*h));

	if (ret)
		return ret;
	/* the signature is written last: without it, nothing else is valid */
	if (memcmp(h->signature, OTEL_CTX_SIGNATURE, sizeof(h->signature)))
		return -ENOENT;
	return 0;
}

int otel_ctx__published_at(int pid, __u64 addr, __u64 *published_at_ns)
{
	struct otel_ctx_header h;
	int ret = read_header(pid, addr, &h);

	if (!ret)
		*published_at_ns = h.published_at_ns;
	return ret;
}

static void pause_briefly(void)
{
	struct timespec ts = {0, 200000};

	nanosleep(&ts, NULL);
}

int otel_ctx__read(int pid, __u64 addr, struct otel_ctx **out, char *err, size_t err_len)
{
	struct otel_ctx_header h, again;
	struct otel_ctx *ctx;
	void *payload = NULL;
	int ret, pret, tries;

	*out = NULL;
	for (tries = 0; tries < OTEL_CTX_READ_TRIES; tries++) {
		if (tries)
			pause_briefly();
		ret = read_header(pid, addr, &h);
		if (ret)
			goto out;
		if (h.version != OTEL_CTX_VERSION) {
			msg__set(err, err_len, "process context version %u, not %u", h.version,
				 OTEL_CTX_VERSION);
			ret = -EINVAL;
			goto out;
		}
		if (!h.published_at_ns) /* being updated */
			continue;
		if (h.payload_size > OTEL_CTX_MAX_PAYLOAD) {
			msg__set(err, err_len, "process context payload of %u bytes (at most %u)",
				 h.payload_size, OTEL_CTX_MAX_PAYLOAD);
			ret = -EINVAL;
			goto out;
		}
		free(payload);
		payload = malloc(h.payload_size ? h.payload_size : 1);
		if (!payload) {
			ret = -ENOMEM;
			goto out;
		}
		pret = read_mem(pid, h.payload, payload, h.payload_size);
		if (pret && pret != -ENOENT) {
			ret = pret;
			goto out;
		}
		/* the same publication before and after: the payload read is whole */
		ret = read_header(pid, addr, &again);
		if (ret)
			goto out;
		if (again.published_at_ns != h.published_at_ns || again.payload != h.payload ||
		    again.payload_size != h.payload_size)
			continue;
		if (pret) {
			/* not a payload moved by an update: a pointer to nowhere */
			msg__set(err, err_len, "process context payload at 0x%llx is not mapped",
				 (unsigned long long)h.payload);
			ret = -EINVAL;
			goto out;
		}
		break;
	}
	if (tries == OTEL_CTX_READ_TRIES) {
		msg__set(err, err_len, "process context still being updated after %d reads",
			 OTEL_CTX_READ_TRIES);
		ret = -EAGAIN;
		goto out;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		ret = -ENOMEM;
		goto out;
	}
	ret = otel_ctx__decode(payload, h.payload_size, ctx, err, err_len);
	if (ret) {
		otel_ctx__free(ctx);
		goto out;
	}
	ctx->addr = addr;
	ctx->published_at_ns = h.published_at_ns;
	*out = ctx;
out:
	free(payload);
	return ret;
}

/* A bounded copy of a protobuf string (NUL-terminated: cut at the first NUL). */
static char *copy_str(const char *s)
{
	return strndup(s ? s : "", OTEL_CTX_MAX_STRING);
}

typedef Opentelemetry__Proto__Common__V1__AnyValue any_value_t;
typedef Opentelemetry__Proto__Processcontext__V1development__ContextAnyValue ctx_value_t;
typedef Opentelemetry__Proto__Processcontext__V1development__ContextKeyValue ctx_kv_t;
typedef Opentelemetry__Proto__Processcontext__V1development__ProcessContext process_context_t;

/* A resource attribute's scalar value as text; NULL for other kinds (and no memory). */
static char *value_text(const any_value_t *v)
{
	char buf[64];

	if (!v)
		return NULL;
	switch (v->value_case) {
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE:
		return copy_str(v->string_value);
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE:
		return strdup(v->bool_value ? "true" : "false");
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE:
		snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)v->int_value);
		return strdup(buf);
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_DOUBLE_VALUE:
		snprintf(buf, sizeof(buf), "%.17g", v->double_value);
		return strdup(buf);
	default:
		return NULL;
	}
}

static int take_resource(struct otel_ctx *ctx,
			 const Opentelemetry__Proto__Resource__V1__Resource *r)
{
	size_t i, n;

	if (!r || !r->n_attributes)
		return 0;
	n = r->n_attributes < OTEL_CTX_MAX_RESOURCE ? r->n_attributes : OTEL_CTX_MAX_RESOURCE;
	ctx->resource = calloc(n, sizeof(*ctx->resource));
	if (!ctx->resource)
		return -ENOMEM;
	for (i = 0; i < r->n_attributes && ctx->nr_resource < n; i++) {
		const Opentelemetry__Proto__Common__V1__KeyValue *kv = r->attributes[i];
		struct otel_ctx_attr *a = &ctx->resource[ctx->nr_resource];

		if (!kv || !kv->key || !kv->key[0])
			continue;
		a->value = value_text(kv->value);
		if (!a->value)
			continue; /* not a scalar: no label for it */
		a->key = copy_str(kv->key);
		if (!a->key)
			return -ENOMEM;
		ctx->nr_resource++;
	}
	return 0;
}

static int take_key_map(struct otel_ctx *ctx, const ctx_value_t *v)
{
	const Opentelemetry__Proto__Processcontext__V1development__ContextArrayValue *a;
	size_t i, n;

	if (!v ||
	    v->value_case !=
		    OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__CONTEXT_ANY_VALUE__VALUE_ARRAY_VALUE ||
	    !v->array_value)
		return -EINVAL;
	a = v->array_value;
	ctx->key_map_len = a->n_values;
	n = a->n_values < OTEL_CTX_MAX_KEYS ? a->n_values : OTEL_CTX_MAX_KEYS;
	if (!n)
		return 0;
	ctx->keys = calloc(n, sizeof(*ctx->keys));
	if (!ctx->keys)
		return -ENOMEM;
	ctx->nr_keys = n;
	for (i = 0; i < n; i++) {
		const any_value_t *k = a->values[i];

		/* an entry that is no string names no key: its index stays unresolved */
		if (k &&
		    k->value_case ==
			    OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE &&
		    k->string_value[0]) {
			ctx->keys[i] = copy_str(k->string_value);
			if (!ctx->keys[i])
				return -ENOMEM;
		}
	}
	return 0;
}

/* A threadlocal.* attribute other than the key map and the schema, kept as text. */
static int take_threadlocal(struct otel_ctx *ctx, const ctx_kv_t *kv)
{
	struct otel_ctx_attr *a;
	char buf[32];

	if (ctx->nr_threadlocal == OTEL_CTX_MAX_THREADLOCAL || !kv->value)
		return 0;
	if (!ctx->threadlocal) {
		ctx->threadlocal = calloc(OTEL_CTX_MAX_THREADLOCAL, sizeof(*ctx->threadlocal));
		if (!ctx->threadlocal)
			return -ENOMEM;
	}
	a = &ctx->threadlocal[ctx->nr_threadlocal];
	if (kv->value->value_case ==
	    OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__CONTEXT_ANY_VALUE__VALUE_INT_VALUE) {
		snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)kv->value->int_value);
		a->value = strdup(buf);
	} else if (
		kv->value->value_case ==
		OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__CONTEXT_ANY_VALUE__VALUE_STRING_VALUE) {
		a->value = copy_str(kv->value->string_value);
	} else {
		return 0;
	}
	a->key = copy_str(kv->key);
	if (!a->key || !a->value) {
		free(a->key);
		free(a->value);
		a->key = a->value = NULL;
		return -ENOMEM;
	}
	ctx->nr_threadlocal++;
	return 0;
}

const char *otel_ctx__threadlocal(const struct otel_ctx *ctx, const char *key)
{
	size_t i;

	for (i = 0; ctx && i < ctx->nr_threadlocal; i++)
		if (!strcmp(ctx->threadlocal[i].key, key))
			return ctx->threadlocal[i].value;
	return NULL;
}

int otel_ctx__decode(const void *payload, size_t len, struct otel_ctx *ctx, char *err,
		     size_t err_len)
{
	process_context_t *pc;
	size_t i;
	int ret = 0;

	memset(ctx, 0, sizeof(*ctx));
	if (len > OTEL_CTX_MAX_PAYLOAD) {
		msg__set(err, err_len, "process context payload of %zu bytes (at most %u)", len,
			 OTEL_CTX_MAX_PAYLOAD);
		return -EINVAL;
	}
	pc = opentelemetry__proto__processcontext__v1development__process_context__unpack(NULL, len,
											  payload);
	if (!pc) {
		msg__set(err, err_len, "process context payload is not a ProcessContext");
		return -EINVAL;
	}
	ret = take_resource(ctx, pc->resource);
	for (i = 0; !ret && i < pc->n_attributes; i++) {
		const ctx_kv_t *kv = pc->attributes[i];

		if (!kv || !kv->key)
			continue;
		if (!strcmp(kv->key, OTEL_CTX_KEY_MAP) && !ctx->keys) {
			ret = take_key_map(ctx, kv->value);
			if (ret == -EINVAL)
				msg__set(err, err_len, OTEL_CTX_KEY_MAP " is not an array");
		} else if (
			!strcmp(kv->key, OTEL_CTX_SCHEMA_VERSION) && !ctx->schema_version &&
			kv->value &&
			kv->value->value_case ==
				OPENTELEMETRY__PROTO__PROCESSCONTEXT__V1DEVELOPMENT__CONTEXT_ANY_VALUE__VALUE_STRING_VALUE) {
			ctx->schema_version = copy_str(kv->value->string_value);
			if (!ctx->schema_version)
				ret = -ENOMEM;
		} else if (!strncmp(kv->key, "threadlocal.", 12)) {
			ret = take_threadlocal(ctx, kv);
		}
	}
	opentelemetry__proto__processcontext__v1development__process_context__free_unpacked(pc,
											    NULL);
	if (ret)
		otel_ctx__clear(ctx);
	return ret;
}

void otel_ctx__clear(struct otel_ctx *ctx)
{
	size_t i;

	for (i = 0; i < ctx->nr_resource; i++) {
		free(ctx->resource[i].key);
		free(ctx->resource[i].value);
	}
	free(ctx->resource);
	for (i = 0; i < ctx->nr_keys; i++)
		free(ctx->keys[i]);
	free(ctx->keys);
	free(ctx->schema_version);
	for (i = 0; i < ctx->nr_threadlocal; i++) {
		free(ctx->threadlocal[i].key);
		free(ctx->threadlocal[i].value);
	}
	free(ctx->threadlocal);
	memset(ctx, 0, sizeof(*ctx));
}

void otel_ctx__free(struct otel_ctx *ctx)
{
	if (!ctx)
		return;
	otel_ctx__clear(ctx);
	free(ctx);
}
