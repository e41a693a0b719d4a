// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcustomlabels: publishes each thread's label set in TLS following the
 * Custom Labels ABI, v1 by default, v0 when built with -DCUSTOM_LABELS_ABI_V0.
 *
 * A reader (a perf-event BPF program, a signal handler) stops the thread at
 * any instruction and reads its TLS; it never runs concurrently with the
 * writer, so only the order of the writer's stores matters. Compiler
 * barriers fix that order; publishing stores are single word-sized stores.
 *
 * Write protocol. Each thread owns two label arrays (each with a v1 set
 * header) and pools of byte slots; a label's key and value live in one slot,
 * the key at its start. Between calls both arrays hold
 * the same labels, and only slots the published labels point to are in use.
 * A change is built in the array that is not published (new bytes only go to
 * free slots), published, and then repeated on the other array, after which
 * slots nothing points to any more return to their pool. So no byte or label a
 * reader can reach is ever written, and readers see the old set or the new one:
 *
 *  v1: current_set = &spare->set (one store). Clearing and installing a
 *      prepared set are one store too.
 *  v0: storage = spare->labels; then count = new count. In between a reader
 *      sees {spare, old count}, which is by construction the old set or the
 *      new one: an overwrite keeps the count (new set), an append leaves the
 *      new label past the old count (old set), a delete swaps the label with
 *      the last one in the spare array before the count drops (old set,
 *      reordered). Transitions that cannot keep that property (installing a
 *      prepared set, run_with changing existing keys and adding others,
 *      restoring after run_with, unless it only drops what run_with added) go count = 0;
 *      storage; count = n, so a reader may also see the empty set in between.
 *      Clearing is count = 0; storage = NULL. Never anything else.
 *
 * Slots come in two sizes (docs/design.md section 3): 64 bytes for the
 * short labels services mostly set (tenant, route, trace id), and
 * max_key_len + max_value_len for the rest, each size with its own pool of
 * 2 * max_labels slots (the worst case: the two arrays' labels all of one
 * size). A reader copies a set's strings in one read when they lie close
 * together, so the pools keep them close: the small slots lie just before
 * the large ones and are handed out from that boundary down, the large ones
 * from it up; each pool is a LIFO stack, so a set never spreads over more
 * slots of a size than the most it has held of that size at once since its
 * pools were last reset (which every load does). One size of small slots,
 * not several: labels whose values change length would move between sizes
 * and spread over both.
 *
 * Prepared sets are one array and their labels' bytes, packed one after the
 * other (a reader copies them in one read): a change appends the new label's
 * bytes, then closes the gap the old ones leave. They are changed in place
 * and so must not be installed meanwhile.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "customlabels.h"

#define CL_EXPORT __attribute__((visibility("default")))

/* The ABI layouts (LP64). */
struct cl_string {
	size_t len;
	const unsigned char *buf;
};

struct cl_label {
	struct cl_string key;
	struct cl_string value;
};

struct cl_set {
	struct cl_label *storage;
	size_t count;
	size_t capacity;
};

_Static_assert(sizeof(struct cl_string) == 16, "ABI string layout");
_Static_assert(sizeof(struct cl_label) == 32, "ABI label layout");
_Static_assert(sizeof(struct cl_set) == 24, "ABI v1 set layout");

#ifdef CUSTOM_LABELS_ABI_V0
struct cl_v0_tls {
	struct cl_label *storage;
	size_t count;
};

_Static_assert(sizeof(struct cl_v0_tls) == 16, "ABI v0 TLS layout");

CL_EXPORT __attribute__((used)) const uint32_t custom_labels_abi_version = 0;
CL_EXPORT __thread struct cl_v0_tls custom_labels_thread_local_data;
#else
CL_EXPORT __attribute__((used)) const uint32_t custom_labels_abi_version = 1;
CL_EXPORT __thread struct cl_set *custom_labels_current_set;
#endif

struct cl_own;

/* A label array: a prepared set, or one of the two arrays a thread owns. */
struct custom_labels_labelset {
	struct cl_set set;    /* first: what a v1 TLS pointer points to */
	struct cl_own *own;   /* owning thread's storage; NULL for a prepared set */
	unsigned char *bytes; /* prepared set: bytes[0..used) hold its labels' bytes */
	size_t used;
	struct cl_label labels[]; /* set.storage; v0's TLS storage points here */
};

/* Slot classes: a label of n key and value bytes goes to class n > CL_SLOT_SMALL. */
#define CL_SLOT_SMALL 64
#define CL_CLASSES    2

/* Free slots of one size: a stack. */
struct cl_pool {
	unsigned char **free;
	size_t nfree;
};

/* A thread's own storage, one allocation, freed by the pthread key destructor. */
struct cl_own {
	struct custom_labels_labelset *arr[2];
	struct cl_pool pool[CL_CLASSES];
	/* class c's slots: [base[c], base[c + 1]), consecutive, ascending */
	unsigned char *base[CL_CLASSES + 1];
};

#define CL_DEFAULT_SLOT (CUSTOM_LABELS_DEFAULT_MAX_KEY_LEN + CUSTOM_LABELS_DEFAULT_MAX_VALUE_LEN)
_Static_assert(CL_DEFAULT_SLOT > CL_SLOT_SMALL && CL_DEFAULT_SLOT % 16 == 0,
	       "the defaults use both classes");

/* Fixed at the first use; read without a lock afterwards. */
static struct {
	size_t max_labels;
	size_t max_key_len;
	size_t max_value_len;
	size_t slot_size; /* a key, then its value right after it */
	/* per slot class: size, and how many each pool holds (0: no label needs it) */
	size_t class_size[CL_CLASSES];
	size_t class_slots[CL_CLASSES];
} cl_cfg = {
	.max_labels = CUSTOM_LABELS_DEFAULT_MAX_LABELS,
	.max_key_len = CUSTOM_LABELS_DEFAULT_MAX_KEY_LEN,
	.max_value_len = CUSTOM_LABELS_DEFAULT_MAX_VALUE_LEN,
	.slot_size = CL_DEFAULT_SLOT,
	.class_size = {CL_SLOT_SMALL, CL_DEFAULT_SLOT},
	.class_slots = {2 * CUSTOM_LABELS_DEFAULT_MAX_LABELS, 2 * CUSTOM_LABELS_DEFAULT_MAX_LABELS},
};
static bool cl_frozen;
static pthread_mutex_t cl_cfg_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_once_t cl_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t cl_key;
static int cl_key_err;

static __thread struct cl_own *cl_own_tls;

/* Readers interrupt this thread: ordering against them needs only the compiler. */
#define cl_barrier()   __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define cl_store(p, v) __atomic_store_n(p, v, __ATOMIC_RELAXED)

#define cl_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))
#define cl_always_inline		   inline __attribute__((always_inline))

/* The array the thread's TLS points to, or NULL. */
static inline struct custom_labels_labelset *cl_installed(void)
{
#ifdef CUSTOM_LABELS_ABI_V0
	struct cl_label *storage = custom_labels_thread_local_data.storage;

	return storage ? cl_container_of(storage, struct custom_labels_labelset, labels) : NULL;
#else
	struct cl_set *set = custom_labels_current_set;

	return set ? cl_container_of(set, struct custom_labels_labelset, set) : NULL;
#endif
}

/* The labels a reader sees now. */
static inline const struct cl_label *cl_visible(size_t *count)
{
#ifdef CUSTOM_LABELS_ABI_V0
	*count = custom_labels_thread_local_data.count;
	return custom_labels_thread_local_data.storage;
#else
	struct cl_set *set = custom_labels_current_set;

	*count = set ? set->count : 0;
	return set ? set->storage : NULL;
#endif
}

/*
 * Publishes the thread's own array a; readers may see {a, old count} in
 * between (v0), which the caller has made the old or the new set.
 */
static inline void cl_publish(struct custom_labels_labelset *a)
{
	cl_barrier();
#ifdef CUSTOM_LABELS_ABI_V0
	cl_store(&custom_labels_thread_local_data.storage, a->labels);
	cl_barrier();
	cl_store(&custom_labels_thread_local_data.count, a->set.count);
#else
	cl_store(&custom_labels_current_set, &a->set);
#endif
	cl_barrier();
}

/* Publishes any set (NULL: none) from any state; v0 may show the empty set in between. */
static cl_always_inline struct custom_labels_labelset *cl_install(struct custom_labels_labelset *a)
{
	struct custom_labels_labelset *prev = cl_installed();

	cl_barrier();
#ifdef CUSTOM_LABELS_ABI_V0
	cl_store(&custom_labels_thread_local_data.count, 0);
	cl_barrier();
	cl_store(&custom_labels_thread_local_data.storage, a ? a->labels : NULL);
	cl_barrier();
	cl_store(&custom_labels_thread_local_data.count, a ? a->set.count : 0);
#else
	cl_store(&custom_labels_current_set, a ? &a->set : NULL);
#endif
	cl_barrier();
	return prev;
}

static inline uint64_t cl_load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t cl_load32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Keys are mostly short: compare them without a call (overlapping word loads). */
static inline bool cl_bytes_eq(const unsigned char *a, const unsigned char *b, size_t n)
{
	if (n >= 8) {
		if (cl_load64(a) != cl_load64(b) || cl_load64(a + n - 8) != cl_load64(b + n - 8))
			return false;
		return n <= 16 || !memcmp(a + 8, b + 8, n - 16);
	}
	if (n >= 4)
		return cl_load32(a) == cl_load32(b) && cl_load32(a + n - 4) == cl_load32(b + n - 4);
	while (n--) {
		if (a[n] != b[n])
			return false;
	}
	return true;
}

/* Same idea for copies into a slot (never overlapping the source). */
static inline void cl_copy(unsigned char *dst, const unsigned char *src, size_t n)
{
	uint64_t a, b;

	if (n > 16) {
		memcpy(dst, src, n);
	} else if (n >= 8) {
		a = cl_load64(src);
		b = cl_load64(src + n - 8);
		memcpy(dst, &a, 8);
		memcpy(dst + n - 8, &b, 8);
	} else {
		while (n--)
			dst[n] = src[n];
	}
}

/* Index of key in l[0..n), or n. */
static inline size_t cl_find(const struct cl_label *l, size_t n, const void *key, size_t len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (l[i].key.len == len && cl_bytes_eq(l[i].key.buf, key, len))
			break;
	}
	return i;
}

static inline bool cl_label_eq(const struct cl_label *a, const struct cl_label *b)
{
	return a->key.len == b->key.len && a->value.len == b->value.len &&
	       cl_bytes_eq(a->key.buf, b->key.buf, a->key.len) &&
	       cl_bytes_eq(a->value.buf, b->value.buf, a->value.len);
}

static inline bool cl_kv_valid(const void *key, const void *value, size_t value_len)
{
	return key && (value || !value_len);
}

static inline bool cl_len_valid(size_t key_len, size_t value_len)
{
	return key_len <= cl_cfg.max_key_len && value_len <= cl_cfg.max_value_len;
}

/*
 * Appends key and value to a prepared set's bytes; returns the label pointing
 * at them. The value follows the key directly: a reader copies both at once.
 * They may come from the set itself (a value from get): from bytes before the
 * end, which nothing moves until the copy is done.
 */
static struct cl_label cl_prep_append(struct custom_labels_labelset *set, const void *key,
				      size_t key_len, const void *value, size_t value_len)
{
	unsigned char *kbuf = set->bytes + set->used, *vbuf = kbuf + key_len;

	cl_copy(kbuf, key, key_len);
	if (value_len)
		cl_copy(vbuf, value, value_len);
	set->used += key_len + value_len;
	return (struct cl_label){{key_len, kbuf}, {value_len, vbuf}};
}

/* Removes len bytes at start from a prepared set's bytes; the labels after them move down. */
static void cl_prep_cut(struct custom_labels_labelset *set, const unsigned char *start, size_t len)
{
	unsigned char *at = set->bytes + (start - set->bytes);
	size_t i;

	memmove(at, at + len, set->used - (size_t)(at + len - set->bytes));
	set->used -= len;
	for (i = 0; i < set->set.count; i++) {
		if (set->labels[i].key.buf > start) {
			set->labels[i].key.buf -= len;
			set->labels[i].value.buf -= len;
		}
	}
}

/* A label copied into a free slot of the thread's pools (free: no reader sees it). */
static inline struct cl_label cl_own_put(struct cl_own *own, const void *key, size_t key_len,
					 const void *value, size_t value_len)
{
	size_t n = key_len + value_len;
	struct cl_pool *pool = &own->pool[n > CL_SLOT_SMALL];
	unsigned char *slot = pool->free[--pool->nfree];
	unsigned char *vbuf = slot + key_len; /* as in cl_prep_append */

	cl_copy(slot, key, key_len);
	if (value_len)
		cl_copy(vbuf, value, value_len);
	return (struct cl_label){{key_len, slot}, {value_len, vbuf}};
}

/* Back to its pool, found by address (the key is at the slot's start). */
static inline void cl_own_release(struct cl_own *own, const struct cl_label *l)
{
	unsigned char *slot = (unsigned char *)l->key.buf;
	struct cl_pool *pool = &own->pool[slot >= own->base[1]];

	pool->free[pool->nfree++] = slot;
}

static void cl_freeze(void)
{
	pthread_mutex_lock(&cl_cfg_lock);
	cl_frozen = true;
	pthread_mutex_unlock(&cl_cfg_lock);
}

static void cl_thread_exit(void *arg)
{
	/* Readers must stop looking before the memory goes. */
	cl_install(NULL);
	cl_own_tls = NULL;
	free(arg);
}

static void cl_key_init(void)
{
	cl_key_err = pthread_key_create(&cl_key, cl_thread_exit);
}

static size_t cl_align16(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

/*
 * The thread's storage: its struct, the two arrays, the free stacks, then the
 * slots by class, the small ones closest to the arrays.
 */
static struct cl_own *cl_own_new(void)
{
	size_t cap, own_size, arr_size, free_size = 0, slots_size = 0, at;
	struct cl_own *own;
	unsigned char *p;
	int i;

	if (pthread_once(&cl_key_once, cl_key_init) || cl_key_err)
		return NULL;
	cl_freeze();
	cap = cl_cfg.max_labels;
	own_size = cl_align16(sizeof(*own));
	arr_size =
		cl_align16(sizeof(struct custom_labels_labelset) + cap * sizeof(struct cl_label));
	for (i = 0; i < CL_CLASSES; i++) {
		free_size += cl_align16(cl_cfg.class_slots[i] * sizeof(unsigned char *));
		slots_size += cl_cfg.class_slots[i] * cl_cfg.class_size[i];
	}
	p = malloc(own_size + 2 * arr_size + free_size + slots_size);
	if (!p)
		return NULL;
	own = (struct cl_own *)p;
	for (i = 0; i < 2; i++) {
		struct custom_labels_labelset *a = (void *)(p + own_size + i * arr_size);

		a->set = (struct cl_set){a->labels, 0, cap};
		a->own = own;
		a->bytes = NULL;
		a->used = 0;
		own->arr[i] = a;
	}
	at = own_size + 2 * arr_size;
	for (i = 0; i < CL_CLASSES; i++) {
		own->pool[i] = (struct cl_pool){(void *)(p + at), 0};
		at += cl_align16(cl_cfg.class_slots[i] * sizeof(unsigned char *));
	}
	for (i = 0; i < CL_CLASSES; i++) {
		own->base[i] = p + at;
		at += cl_cfg.class_slots[i] * cl_cfg.class_size[i];
	}
	own->base[CL_CLASSES] = p + at;
	if (pthread_setspecific(cl_key, own)) {
		free(own);
		return NULL;
	}
	cl_own_tls = own;
	return own;
}

/* An edit of the thread's current set: built in sp, then published. */
struct cl_edit {
	struct cl_own *own;
	struct custom_labels_labelset *cur; /* holds the current labels */
	struct custom_labels_labelset *sp;  /* same labels, the one to change */
};

/* Empties the own arrays and frees every slot: only while none of them is published. */
static void cl_own_reset(struct cl_own *own)
{
	size_t i, n;
	int c;

	for (c = 0; c < CL_CLASSES; c++) {
		n = cl_cfg.class_slots[c];
		own->pool[c].nfree = n;
		/* popped first: the slots next to the small/large boundary */
		for (i = 0; i < n; i++)
			own->pool[c].free[i] =
				own->base[c] + (c ? n - 1 - i : i) * cl_cfg.class_size[c];
	}
	own->arr[0]->set.count = 0;
	own->arr[1]->set.count = 0;
}

/*
 * Loads the thread's current labels into its own arrays when what is
 * published is not one of them (a prepared set, or none): both arrays get
 * copies, sharing fresh slots.
 */
static void cl_own_load(struct cl_own *own)
{
	const struct cl_label *l;
	size_t i, n;

	cl_own_reset(own);
	l = cl_visible(&n);
	for (i = 0; i < n; i++) {
		own->arr[1]->labels[i] =
			cl_own_put(own, l[i].key.buf, l[i].key.len, l[i].value.buf, l[i].value.len);
		own->arr[0]->labels[i] = own->arr[1]->labels[i];
	}
	own->arr[0]->set.count = n;
	own->arr[1]->set.count = n;
}

/* The thread's own labels are not published: load the current ones into them. */
static __attribute__((noinline)) int cl_edit_load(struct cl_edit *e)
{
	e->own = cl_own_tls;
	if (!e->own) {
		e->own = cl_own_new();
		if (!e->own)
			return -ENOMEM;
	}
	cl_own_load(e->own);
	e->cur = e->own->arr[0];
	e->sp = e->own->arr[1];
	return 0;
}

static cl_always_inline int cl_edit_begin(struct cl_edit *e)
{
	struct custom_labels_labelset *a = cl_installed();

	if (__builtin_expect(!a || !a->own, 0))
		return cl_edit_load(e);
	e->own = a->own;
	e->cur = a;
	e->sp = a == a->own->arr[0] ? a->own->arr[1] : a->own->arr[0];
	return 0;
}

/*
 * After sp was published having changed only some labels in place (or
 * appended): returns to the pool the slots of cur's labels that sp no
 * longer uses, then makes cur equal to sp again.
 */
static void cl_edit_commit(struct cl_edit *e)
{
	size_t i, n = e->cur->set.count;

	for (i = 0; i < n; i++) {
		if (i >= e->sp->set.count || e->cur->labels[i].key.buf != e->sp->labels[i].key.buf)
			cl_own_release(e->own, &e->cur->labels[i]);
	}
	memcpy(e->cur->labels, e->sp->labels, e->sp->set.count * sizeof(struct cl_label));
	e->cur->set.count = e->sp->set.count;
}

/* Small slots only if smaller than the large ones; otherwise no label needs large ones. */
static void cl_configure_classes(void)
{
	bool two = cl_cfg.slot_size > CL_SLOT_SMALL;

	cl_cfg.class_size[0] = two ? CL_SLOT_SMALL : cl_cfg.slot_size;
	cl_cfg.class_size[1] = cl_cfg.slot_size;
	cl_cfg.class_slots[0] = 2 * cl_cfg.max_labels;
	cl_cfg.class_slots[1] = two ? 2 * cl_cfg.max_labels : 0;
}

CL_EXPORT int custom_labels_configure(const struct custom_labels_config *cfg)
{
	size_t max_labels, max_key_len, max_value_len;
	int err = 0;

	if (!cfg)
		return -EINVAL;
	max_labels = cfg->max_labels ?: CUSTOM_LABELS_DEFAULT_MAX_LABELS;
	max_key_len = cfg->max_key_len ?: CUSTOM_LABELS_DEFAULT_MAX_KEY_LEN;
	max_value_len = cfg->max_value_len ?: CUSTOM_LABELS_DEFAULT_MAX_VALUE_LEN;
	if (max_labels > CUSTOM_LABELS_LIMIT_MAX_LABELS ||
	    max_key_len > CUSTOM_LABELS_LIMIT_MAX_LEN ||
	    max_value_len > CUSTOM_LABELS_LIMIT_MAX_LEN)
		return -EINVAL;

	pthread_mutex_lock(&cl_cfg_lock);
	if (cl_frozen) {
		err = -EBUSY;
	} else {
		cl_cfg.max_labels = max_labels;
		cl_cfg.max_key_len = max_key_len;
		cl_cfg.max_value_len = max_value_len;
		cl_cfg.slot_size = cl_align16(max_key_len + max_value_len);
		cl_configure_classes();
	}
	pthread_mutex_unlock(&cl_cfg_lock);
	return err;
}

CL_EXPORT int custom_labels_set(const void *key, size_t key_len, const void *value,
				size_t value_len)
{
	struct cl_edit e;
	size_t i, n;
	int err;

	if (!cl_kv_valid(key, value, value_len))
		return -EINVAL;
	err = cl_edit_begin(&e);
	if (err)
		return err;
	if (!cl_len_valid(key_len, value_len))
		return -EMSGSIZE;
	n = e.cur->set.count;
	i = cl_find(e.cur->labels, n, key, key_len);
	if (i == n) {
		if (n == cl_cfg.max_labels)
			return -ENOSPC;
		e.sp->set.count = n + 1;
	}
	e.sp->labels[i] = cl_own_put(e.own, key, key_len, value, value_len);
	cl_publish(e.sp);
	if (i < n)
		cl_own_release(e.own, &e.cur->labels[i]);
	e.cur->labels[i] = e.sp->labels[i];
	e.cur->set.count = e.sp->set.count;
	return 0;
}

CL_EXPORT int custom_labels_set_str(const char *key, const char *value)
{
	if (!key || !value)
		return -EINVAL;
	return custom_labels_set(key, strlen(key), value, strlen(value));
}

CL_EXPORT int custom_labels_get(const void *key, size_t key_len, const unsigned char **value,
				size_t *value_len)
{
	const struct cl_label *l;
	size_t i, n;

	if (!key)
		return -EINVAL;
	l = cl_visible(&n);
	i = cl_find(l, n, key, key_len);
	if (i == n)
		return -ENOENT;
	if (value)
		*value = l[i].value.buf;
	if (value_len)
		*value_len = l[i].value.len;
	return 0;
}

CL_EXPORT int custom_labels_delete(const void *key, size_t key_len)
{
	const struct cl_label *l;
	struct cl_label gone;
	struct cl_edit e;
	size_t i, n;
	int err;

	if (!key)
		return -EINVAL;
	l = cl_visible(&n);
	i = cl_find(l, n, key, key_len);
	if (i == n)
		return -ENOENT;
	err = cl_edit_begin(&e);
	if (err)
		return err;
	/* v0 readers may see {sp, n}: keep the deleted label there, as the last one. */
	gone = e.cur->labels[i];
	e.sp->labels[i] = e.cur->labels[n - 1];
	e.sp->labels[n - 1] = gone;
	e.sp->set.count = n - 1;
	cl_publish(e.sp);
	cl_own_release(e.own, &gone);
	e.cur->labels[i] = e.sp->labels[i];
	e.cur->set.count = n - 1;
	return 0;
}

CL_EXPORT int custom_labels_delete_str(const char *key)
{
	if (!key)
		return -EINVAL;
	return custom_labels_delete(key, strlen(key));
}

CL_EXPORT int custom_labels_clear(void)
{
	cl_install(NULL);
	return 0;
}

CL_EXPORT size_t custom_labels_count(void)
{
	size_t n;

	cl_visible(&n);
	return n;
}

CL_EXPORT struct custom_labels_labelset *custom_labels_labelset_new(void)
{
	struct custom_labels_labelset *set;
	size_t cap;

	cl_freeze();
	cap = cl_cfg.max_labels;
	/* a full set, and the new bytes of a label replaced (appended before the old go) */
	set = malloc(sizeof(*set) + cap * sizeof(struct cl_label) + (cap + 1) * cl_cfg.slot_size);
	if (!set)
		return NULL;
	set->set = (struct cl_set){set->labels, 0, cap};
	set->own = NULL;
	set->bytes = (unsigned char *)&set->labels[cap];
	set->used = 0;
	return set;
}

CL_EXPORT struct custom_labels_labelset *custom_labels_labelset_capture(void)
{
	struct custom_labels_labelset *set = custom_labels_labelset_new();
	const struct cl_label *l;
	size_t i, n;

	if (!set)
		return NULL;
	l = cl_visible(&n);
	for (i = 0; i < n; i++)
		set->labels[i] = cl_prep_append(set, l[i].key.buf, l[i].key.len, l[i].value.buf,
						l[i].value.len);
	set->set.count = n;
	return set;
}

CL_EXPORT void custom_labels_labelset_free(struct custom_labels_labelset *set)
{
	if (!set)
		return;
	if (cl_installed() == set)
		cl_install(NULL);
	free(set);
}

CL_EXPORT int custom_labels_labelset_set(struct custom_labels_labelset *set, const void *key,
					 size_t key_len, const void *value, size_t value_len)
{
	struct cl_label old;
	size_t i, n;

	if (!set || !cl_kv_valid(key, value, value_len))
		return -EINVAL;
	if (!cl_len_valid(key_len, value_len))
		return -EMSGSIZE;
	if (cl_installed() == set)
		return -EBUSY;
	n = set->set.count;
	i = cl_find(set->labels, n, key, key_len);
	if (i == n && n == set->set.capacity)
		return -ENOSPC;
	if (i == n) {
		set->labels[n] = cl_prep_append(set, key, key_len, value, value_len);
		set->set.count = n + 1;
		return 0;
	}
	old = set->labels[i];
	set->labels[i] = cl_prep_append(set, key, key_len, value, value_len);
	cl_prep_cut(set, old.key.buf, old.key.len + old.value.len);
	return 0;
}

CL_EXPORT int custom_labels_labelset_set_str(struct custom_labels_labelset *set, const char *key,
					     const char *value)
{
	if (!key || !value)
		return -EINVAL;
	return custom_labels_labelset_set(set, key, strlen(key), value, strlen(value));
}

CL_EXPORT int custom_labels_labelset_delete(struct custom_labels_labelset *set, const void *key,
					    size_t key_len)
{
	struct cl_label *l, gone;
	size_t i, n;

	if (!set || !key)
		return -EINVAL;
	if (cl_installed() == set)
		return -EBUSY;
	l = set->labels;
	n = set->set.count;
	i = cl_find(l, n, key, key_len);
	if (i == n)
		return -ENOENT;
	gone = l[i];
	l[i] = l[n - 1];
	set->set.count = n - 1;
	cl_prep_cut(set, gone.key.buf, gone.key.len + gone.value.len);
	return 0;
}

CL_EXPORT int custom_labels_labelset_get(const struct custom_labels_labelset *set, const void *key,
					 size_t key_len, const unsigned char **value,
					 size_t *value_len)
{
	size_t i, n;

	if (!set || !key)
		return -EINVAL;
	n = set->set.count;
	i = cl_find(set->labels, n, key, key_len);
	if (i == n)
		return -ENOENT;
	if (value)
		*value = set->labels[i].value.buf;
	if (value_len)
		*value_len = set->labels[i].value.len;
	return 0;
}

CL_EXPORT size_t custom_labels_labelset_count(const struct custom_labels_labelset *set)
{
	return set ? set->set.count : 0;
}

CL_EXPORT struct custom_labels_labelset *custom_labels_swap(struct custom_labels_labelset *set)
{
	struct custom_labels_labelset *prev = cl_install(set);

	return prev && !prev->own ? prev : NULL;
}

/* What run_with restores: an installed set (prepared or none) or copied own labels. */
struct cl_saved {
	struct custom_labels_labelset *installed;
	const struct cl_label *labels; /* own labels, copied; NULL if installed is prepared */
	size_t count;
};

/* Makes the saved own labels current again. */
static void cl_restore_own(const struct cl_saved *s)
{
	struct custom_labels_labelset *a = cl_installed();
	struct cl_own *own = cl_own_tls;
	struct cl_edit e = {own, own->arr[0], own->arr[1]};
	size_t i, n = 0;

	if (a && a->own) {
		e.cur = a;
		e.sp = a == own->arr[0] ? own->arr[1] : own->arr[0];
		n = a->set.count;
		/* Common case, fn left them alone: drop the labels run_with added. */
		for (i = 0; i < s->count && i < n && cl_label_eq(&a->labels[i], &s->labels[i]); i++)
			;
		if (i == s->count) {
			cl_barrier();
#ifdef CUSTOM_LABELS_ABI_V0
			cl_store(&custom_labels_thread_local_data.count, s->count);
#else
			cl_store(&a->set.count, s->count);
#endif
			cl_barrier();
			for (; i < n; i++)
				cl_own_release(own, &a->labels[i]);
			a->set.count = s->count;
			e.sp->set.count = s->count;
			return;
		}
	} else {
		cl_own_reset(own);
	}
	/*
	 * A label a still holds at its place keeps its slot (the arrays share it,
	 * and the slots stay close together); the others go to free slots: a's
	 * labels plus s->count new ones fit in the 2 * max_labels slots of each class.
	 */
	for (i = 0; i < s->count; i++) {
		const struct cl_label *l = &s->labels[i];

		if (i < n && cl_label_eq(&a->labels[i], l))
			e.sp->labels[i] = a->labels[i];
		else
			e.sp->labels[i] =
				cl_own_put(own, l->key.buf, l->key.len, l->value.buf, l->value.len);
	}
	e.sp->set.count = s->count;
	cl_install(e.sp);
	cl_edit_commit(&e);
}

static void cl_restore(const struct cl_saved *s)
{
	if (s->labels)
		cl_restore_own(s);
	else
		cl_install(s->installed);
}

/* Adds labels[0..n) to the current set (the caller checked they fit) and publishes it. */
static void cl_apply(struct cl_edit *e, const struct custom_labels_kv *labels, size_t n)
{
	size_t i, k, m = e->cur->set.count, old = m;
	bool replaced = false;

	for (k = 0; k < n; k++) {
		const struct custom_labels_kv *kv = &labels[k];

		i = cl_find(e->sp->labels, m, kv->key, kv->key_len);
		if (i == m) {
			m++;
		} else if (i < old && e->sp->labels[i].key.buf == e->cur->labels[i].key.buf) {
			replaced = true;
		} else {
			/* written earlier in this loop: not published, reuse at once */
			cl_own_release(e->own, &e->sp->labels[i]);
		}
		e->sp->labels[i] =
			cl_own_put(e->own, kv->key, kv->key_len, kv->value, kv->value_len);
	}
	e->sp->set.count = m;
#ifdef CUSTOM_LABELS_ABI_V0
	/* {sp, old} is the new set if nothing was added, the old one if nothing was replaced. */
	if (replaced && m != old)
		cl_install(e->sp);
	else
		cl_publish(e->sp);
#else
	(void)replaced;
	cl_publish(e->sp);
#endif
	cl_edit_commit(e);
}

static int cl_run(struct cl_edit *e, const struct custom_labels_kv *labels, size_t n,
		  void (*fn)(void *), void *arg, const struct cl_saved *prev)
{
	/* Restores on return and on unwinding (built with -fexceptions). */
	const struct cl_saved saved __attribute__((cleanup(cl_restore), unused)) = *prev;

	cl_apply(e, labels, n);
	fn(arg);
	return 0;
}

/* Copies the thread's own current labels onto the stack, then runs. */
static int cl_run_saving_own(struct cl_edit *e, const struct custom_labels_kv *labels, size_t n,
			     void (*fn)(void *), void *arg, size_t nbytes)
{
	size_t i, count = e->cur->set.count;
	struct cl_label copy[count ?: 1];
	unsigned char bytes[nbytes ?: 1];
	unsigned char *p = bytes;
	struct cl_saved saved = {e->cur, copy, count};

	for (i = 0; i < count; i++) {
		const struct cl_label *l = &e->cur->labels[i];

		copy[i] = (struct cl_label){{l->key.len, p}, {l->value.len, p + l->key.len}};
		cl_copy(p, l->key.buf, l->key.len);
		cl_copy(p + l->key.len, l->value.buf, l->value.len);
		p += l->key.len + l->value.len;
	}
	return cl_run(e, labels, n, fn, arg, &saved);
}

CL_EXPORT int custom_labels_run_with(const struct custom_labels_kv *labels, size_t n,
				     void (*fn)(void *arg), void *arg)
{
	struct custom_labels_labelset *installed = cl_installed();
	size_t i, k, added = 0, count, nbytes = 0;
	struct cl_edit e;
	int err;

	if (!fn || (!labels && n))
		return -EINVAL;
	for (k = 0; k < n; k++) {
		if (!cl_kv_valid(labels[k].key, labels[k].value, labels[k].value_len))
			return -EINVAL;
	}
	err = cl_edit_begin(&e);
	if (err)
		return err;
	count = e.cur->set.count;
	for (k = 0; k < n; k++) {
		if (!cl_len_valid(labels[k].key_len, labels[k].value_len))
			return -EMSGSIZE;
		/* a new key, unless an earlier entry of labels has it */
		if (cl_find(e.cur->labels, count, labels[k].key, labels[k].key_len) == count) {
			for (i = 0; i < k; i++) {
				if (labels[i].key_len == labels[k].key_len &&
				    !memcmp(labels[i].key, labels[k].key, labels[k].key_len))
					break;
			}
			added += i == k;
		}
	}
	if (count + added > cl_cfg.max_labels)
		return -ENOSPC;

	if (!installed || !installed->own) {
		const struct cl_saved saved = {installed, NULL, 0};

		return cl_run(&e, labels, n, fn, arg, &saved);
	}
	for (i = 0; i < count; i++)
		nbytes += e.cur->labels[i].key.len + e.cur->labels[i].value.len;
	return cl_run_saving_own(&e, labels, n, fn, arg, nbytes);
}
