/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libcustomlabels: set key/value labels on the calling thread so that a
 * sampling profiler (labelprof, or any reader of the public Custom Labels ABI)
 * attributes each sample to the labels the thread had at that instant.
 *
 * Labels are published in thread-local storage following the Custom Labels
 * ABI. libcustomlabels.so (and .a) implements ABI v1: it exports the 4-byte
 * constant custom_labels_abi_version = 1 and the TLS pointer
 * custom_labels_current_set. libcustomlabels-v0.so (and -v0.a) implements the
 * older v0: custom_labels_abi_version = 0 and the TLS struct
 * custom_labels_thread_local_data. This API is the same for both.
 *
 * Linking:
 *  - Shared library: link with -lcustomlabels (or -lcustomlabels-v0). Readers
 *    look for a library loaded at startup whose file name matches
 *    libcustomlabels.*\.so, so load it as a DT_NEEDED dependency, not dlopen.
 *  - Static library: the executable must export the two ABI symbols as
 *    dynamic symbols, or readers will not find them:
 *      -Wl,--export-dynamic-symbol=custom_labels_abi_version
 *      -Wl,--export-dynamic-symbol=custom_labels_current_set   (v1)
 *      -Wl,--export-dynamic-symbol=custom_labels_thread_local_data   (v0)
 *    (or -Wl,--export-dynamic-symbol='custom_labels_*', or -rdynamic).
 *
 * Labels: a key and a value are arbitrary byte strings (NUL bytes allowed).
 * Keys must be non-NULL (an empty key is allowed); a value may be empty, and
 * then may be NULL. A set holds each key at most once. Bytes are copied: the
 * caller's buffers may be reused as soon as a call returns.
 *
 * Cost: the first call on a thread that needs storage allocates it (once, for
 * the configured limits); after that, set, delete, swap and run_with never
 * allocate. Storage is freed when the thread exits.
 *
 * Consistency: a profiler interrupting the thread at any instruction sees
 * either the label set before a call or the one after it, never a mix of
 * the two or a partly written label. In the v0 ABI, custom_labels_swap() and
 * some custom_labels_run_with() transitions show no labels for a few
 * instructions in between (v0 cannot switch sets with one store).
 *
 * Thread safety: every function without a labelset argument acts on the
 * calling thread only. Prepared sets may be created, filled and freed on any
 * thread, but one set must not be used by two threads at once, and must not
 * be modified or freed while it is installed on any thread. None of these
 * functions is async-signal-safe.
 *
 * Errors are negative errno values:
 *   -EINVAL   a NULL key, set or function, or a NULL value with a non-zero length
 *   -EMSGSIZE a key or value longer than the configured maximum
 *   -ENOSPC   the set already holds the configured maximum number of labels
 *   -ENOENT   no label with that key
 *   -ENOMEM   the thread's storage (allocated on its first use) could not be allocated
 *   -EBUSY    see custom_labels_configure() and custom_labels_labelset_set()
 * A failed call changes nothing.
 */
#ifndef CUSTOMLABELS_H
#define CUSTOMLABELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUSTOM_LABELS_API __attribute__((visibility("default")))

/* Defaults of struct custom_labels_config (also labelprof's default read limits). */
#define CUSTOM_LABELS_DEFAULT_MAX_LABELS    16
#define CUSTOM_LABELS_DEFAULT_MAX_KEY_LEN   128
#define CUSTOM_LABELS_DEFAULT_MAX_VALUE_LEN 256

/* Upper bounds accepted by custom_labels_configure(). */
#define CUSTOM_LABELS_LIMIT_MAX_LABELS 4096
#define CUSTOM_LABELS_LIMIT_MAX_LEN    (1024 * 1024)

struct custom_labels_kv {
	const void *key;
	size_t key_len;
	const void *value;
	size_t value_len;
};

/* Limits of every label set of the process; a 0 field means the default. */
struct custom_labels_config {
	size_t max_labels;
	size_t max_key_len;
	size_t max_value_len;
};

/*
 * Sets the process-wide limits. Call it before any thread's first use of the
 * library (the first call that stores labels or creates a prepared set);
 * after that it returns -EBUSY. It may be called several times before.
 * Returns -EINVAL if cfg is NULL or a limit exceeds
 * CUSTOM_LABELS_LIMIT_MAX_LABELS or CUSTOM_LABELS_LIMIT_MAX_LEN.
 * Each thread that sets labels allocates about
 * 2 * max_labels * (max_key_len + max_value_len + 64) bytes.
 */
CUSTOM_LABELS_API int custom_labels_configure(const struct custom_labels_config *cfg);

/*
 * The calling thread's current label set: whichever was installed last, by
 * the functions below or by custom_labels_swap().
 */

/* Adds the label, or replaces the value of the label with that key. */
CUSTOM_LABELS_API int custom_labels_set(const void *key, size_t key_len, const void *value,
					size_t value_len);
/* Same with NUL-terminated strings (without the NUL); both must be non-NULL. */
CUSTOM_LABELS_API int custom_labels_set_str(const char *key, const char *value);

/*
 * Finds the value of key. *value (never NULL on success, even for an empty
 * value) stays valid until the calling thread's next change of its labels.
 * value and value_len may be NULL. Returns 0, -EINVAL (NULL key) or -ENOENT.
 */
CUSTOM_LABELS_API int custom_labels_get(const void *key, size_t key_len,
					const unsigned char **value, size_t *value_len);

/* Removes the label with that key; -ENOENT if there is none. */
CUSTOM_LABELS_API int custom_labels_delete(const void *key, size_t key_len);
CUSTOM_LABELS_API int custom_labels_delete_str(const char *key);

/* Removes every label (also uninstalls a prepared set). Returns 0. */
CUSTOM_LABELS_API int custom_labels_clear(void);

/* Number of labels in the current set. */
CUSTOM_LABELS_API size_t custom_labels_count(void);

/*
 * Prepared label sets: built ahead of time, on any thread, and installed as a
 * thread's current set with a single store by custom_labels_swap(). The
 * caller owns them.
 */
struct custom_labels_labelset;

/* A new empty set, or NULL (errno ENOMEM). Fixes the limits like a first use. */
CUSTOM_LABELS_API struct custom_labels_labelset *custom_labels_labelset_new(void);

/*
 * A new set holding a copy of the calling thread's current labels, e.g. to
 * hand them to work that runs later on another thread. NULL on ENOMEM.
 */
CUSTOM_LABELS_API struct custom_labels_labelset *custom_labels_labelset_capture(void);

/*
 * Frees set (NULL is ignored). It must not be installed on any other thread;
 * if it is installed on the calling thread, that thread is left without labels.
 */
CUSTOM_LABELS_API void custom_labels_labelset_free(struct custom_labels_labelset *set);

/*
 * Like custom_labels_set() and custom_labels_delete(), on a prepared set.
 * -EBUSY if set is installed on the calling thread (installed sets are
 * read-only; installing it on another thread and modifying it is undefined).
 */
CUSTOM_LABELS_API int custom_labels_labelset_set(struct custom_labels_labelset *set,
						 const void *key, size_t key_len, const void *value,
						 size_t value_len);
CUSTOM_LABELS_API int custom_labels_labelset_set_str(struct custom_labels_labelset *set,
						     const char *key, const char *value);
CUSTOM_LABELS_API int custom_labels_labelset_delete(struct custom_labels_labelset *set,
						    const void *key, size_t key_len);

/* Like custom_labels_get() on a prepared set; -EINVAL if set is NULL. */
CUSTOM_LABELS_API int custom_labels_labelset_get(const struct custom_labels_labelset *set,
						 const void *key, size_t key_len,
						 const unsigned char **value, size_t *value_len);

/* Number of labels in set (0 for NULL). */
CUSTOM_LABELS_API size_t custom_labels_labelset_count(const struct custom_labels_labelset *set);

/*
 * Installs set (NULL: no labels) as the calling thread's current set and
 * returns the prepared set installed before, or NULL if there was none or
 * the previous labels were the thread's own (set with custom_labels_set();
 * those are discarded). The set is not copied: later changes through
 * custom_labels_set() and friends copy it into the thread's own set first,
 * leaving it untouched.
 */
CUSTOM_LABELS_API struct custom_labels_labelset *
custom_labels_swap(struct custom_labels_labelset *set);

/*
 * Like Go's pprof.Do: calls fn(arg) with the current labels plus
 * labels[0..n) (replacing the values of keys already present; a key repeated
 * in labels takes its last value), then restores what the thread had before,
 * whatever fn did: its own labels as they were, or no labels, or the prepared
 * set that was installed (installed again as it is then, so it must still
 * exist; if fn changed it meanwhile, the changes show). Restoring also happens if a C++
 * exception or a thread cancellation unwinds through it (fn must not
 * longjmp out of it). Returns 0 once fn has returned, or an error without
 * calling fn (-ENOSPC if the union exceeds max_labels). Nesting is unbounded;
 * each level copies the current labels onto the stack.
 */
CUSTOM_LABELS_API int custom_labels_run_with(const struct custom_labels_kv *labels, size_t n,
					     void (*fn)(void *arg), void *arg);

/*
 * OpenTelemetry thread context (OTEP 4947). A second, standard way to label
 * a thread, beside the Custom Labels sets above and independent of them: the
 * exported thread-local pointer otel_thread_ctx_v1 points to the record of
 * the thread's current span, or is NULL. Readers resolve an attribute's key
 * index through the process context's threadlocal.attribute_key_map
 * (custom_labels_otel_publish). A static link must export the symbol too:
 * -Wl,--export-dynamic-symbol=otel_thread_ctx_v1.
 *
 * Records are prepared with custom_labels_otel_record_init() and _add(),
 * then installed with custom_labels_otel_attach(): a single pointer store,
 * so a profiler sees the old record or the new one, whole. A record must not
 * be changed or freed while it is installed on any thread.
 *
 * Cost: attach is one store; init and add write the record (no allocation).
 */
#define CUSTOM_LABELS_OTEL_RECORD_SIZE 640
#define CUSTOM_LABELS_OTEL_HEADER_SIZE 28
#define CUSTOM_LABELS_OTEL_ATTRS_MAX                                                               \
	(CUSTOM_LABELS_OTEL_RECORD_SIZE - CUSTOM_LABELS_OTEL_HEADER_SIZE)
#define CUSTOM_LABELS_OTEL_VALUE_MAX 255

/* The record, packed, in host byte order. */
struct __attribute__((packed)) custom_labels_otel_record {
	unsigned char trace_id[16]; /* all zero: no trace */
	unsigned char span_id[8];
	unsigned char valid; /* 1: the record may be read */
	unsigned char trace_flags;
	unsigned short attrs_data_size;
	/* attrs_data_size bytes of { u8 key_index, u8 len, len bytes } */
	unsigned char attrs_data[CUSTOM_LABELS_OTEL_ATTRS_MAX];
};

/* Starts r with these ids (NULL: zeros) and no attribute, valid. Returns 0 or -EINVAL. */
CUSTOM_LABELS_API int custom_labels_otel_record_init(struct custom_labels_otel_record *r,
						     const unsigned char trace_id[16],
						     const unsigned char span_id[8],
						     unsigned char trace_flags);

/*
 * Appends the attribute of key index key_index (see custom_labels_otel_publish)
 * with value[0..len) to r. Returns 0, -EINVAL (NULL r, or NULL value with a
 * non-zero len), -EMSGSIZE (len over CUSTOM_LABELS_OTEL_VALUE_MAX) or -ENOSPC
 * (the record is full).
 */
CUSTOM_LABELS_API int custom_labels_otel_record_add(struct custom_labels_otel_record *r,
						    unsigned char key_index, const void *value,
						    size_t len);

/* Installs r (NULL: no context) on the calling thread; returns the record installed before. */
CUSTOM_LABELS_API struct custom_labels_otel_record *
custom_labels_otel_attach(struct custom_labels_otel_record *r);

/* The calling thread's record, or NULL. */
CUSTOM_LABELS_API struct custom_labels_otel_record *custom_labels_otel_current(void);

/*
 * OpenTelemetry process context (OTEP 4719): publishes, for readers outside
 * the process, its resource attributes (service.name, ...) and the names of
 * the thread context's key indices (key_map[i] names key index i, at most
 * 256), in a mapping named OTEL_CTX (a memfd, else an anonymous mapping named
 * with prctl(PR_SET_VMA_ANON_NAME)) that children do not inherit. Calling it
 * again replaces what was published, following the OTEP's update protocol.
 * Keys and values are NUL-terminated strings; everything is copied. Returns
 * 0, -EINVAL (a NULL string or array, more than 256 keys), -EMSGSIZE (the
 * encoded context exceeds 64 KiB) or -ENOMEM. Not thread-safe with itself.
 */
struct custom_labels_otel_attr {
	const char *key;
	const char *value;
};

CUSTOM_LABELS_API int custom_labels_otel_publish(const struct custom_labels_otel_attr *resource,
						 size_t n_resource, const char *const *key_map,
						 size_t n_keys);

/*
 * The same for the key map of another thread context writer, whose schema
 * (threadlocal.schema_version) says how readers find its records: e.g.
 * "nodejs_v1_dev", the OpenTelemetry Node.js thread context.
 */
CUSTOM_LABELS_API int
custom_labels_otel_publish_schema(const char *schema,
				  const struct custom_labels_otel_attr *resource, size_t n_resource,
				  const char *const *key_map, size_t n_keys);

/* Withdraws the published process context (none: nothing to do). Returns 0. */
CUSTOM_LABELS_API int custom_labels_otel_unpublish(void);

#ifdef __cplusplus
}
#endif

#endif /* CUSTOMLABELS_H */
