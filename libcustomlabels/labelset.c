// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcustomlabels: prepared label sets (customlabels.h), installed with
 * custom_labels_swap.
 *
 * Prepared sets are one array and their labels' bytes, packed one after the
 * other (a reader copies them in one read): a change appends the new label's
 * bytes, then closes the gap the old ones leave. They are changed in place
 * and so must not be installed meanwhile.
 */
#include <errno.h>
#include <stdlib.h>

#include "customlabels_int.h"

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
