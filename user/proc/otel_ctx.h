/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The OpenTelemetry process context (OTEP 4719) of a live process: a mapping
 * named OTEL_CTX holding a 32-byte header { "OTEL_CTX", version u32 = 2,
 * payload_size u32, published_at_ns u64 (0 while being updated), payload
 * u64 }, the payload a protobuf ProcessContext (docs/design.md section 1).
 * Read from outside the process, which may be hostile: every size is
 * bounded and every failure is an error code, never a crash.
 */
#ifndef LABELPROF_OTEL_CTX_H
#define LABELPROF_OTEL_CTX_H

#include <stddef.h>
#include <linux/types.h>

#define OTEL_CTX_HEADER_SIZE 32
#define OTEL_CTX_VERSION     2
#define OTEL_CTX_MAX_PAYLOAD (64u << 10)
/* A thread context's key index is one byte. */
#define OTEL_CTX_MAX_KEYS 256
/* Resource attributes kept, and the bytes of each key and value. */
#define OTEL_CTX_MAX_RESOURCE 64
#define OTEL_CTX_MAX_THREADLOCAL 16
#define OTEL_CTX_MAX_STRING   1024
/* Header reads while published_at_ns is 0 or changes under the reader. */
#define OTEL_CTX_READ_TRIES 4

#define OTEL_CTX_KEY_MAP	"threadlocal.attribute_key_map"
#define OTEL_CTX_SCHEMA_VERSION "threadlocal.schema_version"

struct otel_ctx_attr {
	char *key;
	char *value; /* a string value, or a scalar written as text */
};

struct otel_ctx {
	__u64 addr;	       /* the header's address in the process */
	__u64 published_at_ns; /* of the payload decoded */
	size_t nr_resource;
	struct otel_ctx_attr *resource; /* string-valued resource attributes, in order */
	size_t nr_keys;
	char **keys; /* threadlocal.attribute_key_map: keys[key index] (NULL: not a string) */
	size_t key_map_len;   /* entries the map has, beyond OTEL_CTX_MAX_KEYS too */
	char *schema_version; /* threadlocal.schema_version, or NULL */
	/* the other string and integer threadlocal.* attributes (a reader's layout constants) */
	size_t nr_threadlocal;
	struct otel_ctx_attr *threadlocal;
};

struct maps;

/*
 * The header address of pid's process context, from the first mapping named
 * [anon_shmem:OTEL_CTX], [anon:OTEL_CTX] or /memfd:OTEL_CTX in maps (NULL:
 * /proc/PID/maps read now). Returns 0, -ENOENT when there is none, -ESRCH,
 * other -errno.
 */
int otel_ctx__find(int pid, const struct maps *maps, __u64 *addr);

/*
 * Reads and decodes the process context whose header is at addr. Returns 0
 * with *out set, -ENOENT when the header is not (or no longer) a process
 * context, -EAGAIN when published_at_ns never settled, -EINVAL for a bad
 * header or payload (err says which), -ESRCH, -ENOMEM.
 */
int otel_ctx__read(int pid, __u64 addr, struct otel_ctx **out, char *err, size_t err_len);

/* published_at_ns of the header at addr (0: being updated); -ENOENT if no longer one. */
int otel_ctx__published_at(int pid, __u64 addr, __u64 *published_at_ns);

/* Decodes a payload into ctx (zeroed first); -EINVAL with err, -ENOMEM. */
int otel_ctx__decode(const void *payload, size_t len, struct otel_ctx *ctx, char *err,
		     size_t err_len);

/* The value of the threadlocal.* attribute key as text, or NULL. */
const char *otel_ctx__threadlocal(const struct otel_ctx *ctx, const char *key);

/* Frees what otel_ctx__read returned or otel_ctx__decode filled (then ctx itself if owned). */
void otel_ctx__clear(struct otel_ctx *ctx);
void otel_ctx__free(struct otel_ctx *ctx);

#endif /* LABELPROF_OTEL_CTX_H */
