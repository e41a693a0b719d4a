// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcustomlabels: custom_labels_run_with, which adds labels to the thread's
 * set for the time of a call and restores the set it had on return or when
 * an exception or a cancellation unwinds through it.
 */
#include <errno.h>

#include "customlabels_int.h"

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
