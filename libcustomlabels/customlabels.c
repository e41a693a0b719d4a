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
 * Prepared sets are in labelset.c, run_with in run_with.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "customlabels_int.h"

#ifdef CUSTOM_LABELS_ABI_V0
CL_EXPORT __attribute__((used)) const uint32_t custom_labels_abi_version = 0;
CL_EXPORT __thread struct cl_v0_tls custom_labels_thread_local_data;
#else
CL_EXPORT __attribute__((used)) const uint32_t custom_labels_abi_version = 1;
CL_EXPORT __thread struct cl_set *custom_labels_current_set;
#endif

struct cl_config cl_cfg = {
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

__thread struct cl_own *cl_own_tls;

void cl_freeze(void)
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

/* Empties the own arrays and frees every slot: only while none of them is published. */
void cl_own_reset(struct cl_own *own)
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
__attribute__((noinline)) int cl_edit_load(struct cl_edit *e)
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

/*
 * After sp was published having changed only some labels in place (or
 * appended): returns to the pool the slots of cur's labels that sp no
 * longer uses, then makes cur equal to sp again.
 */
void cl_edit_commit(struct cl_edit *e)
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
