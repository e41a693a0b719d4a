// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Label selection (labelsel.h). */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "lib/compiler.h"
#include "lib/msg.h"
#include "profile/labelsel.h"

/* Keys up to this long are matched from a copy on the stack. */
#define KEY_BUF 256

struct patterns {
	char **v;
	size_t n;
};

struct labelsel {
	struct patterns keep, drop;
	bool keep_all; /* no keep list */
};

/* The next item of a list at *p: its start and length, spaces around it left out. */
static const char *next_item(const char **p, size_t *len)
{
	const char *s = *p, *end;

	*len = strcspn(s, ",");
	end = s + *len;
	*p = *end ? end + 1 : end;
	while (s < end && *s == ' ')
		s++;
	while (end > s && end[-1] == ' ')
		end--;
	*len = end - s;
	return s;
}

/* Whether a bracket expression that starts at p[0] == '[' is closed within len bytes. */
static bool bracket_closed(const char *p, size_t len)
{
	size_t i = 1;

	/* a leading ! or ^ negates, and a ] right after the opening is a member */
	if (i < len && (p[i] == '!' || p[i] == '^'))
		i++;
	if (i < len && p[i] == ']')
		i++;
	for (; i < len; i++)
		if (p[i] == ']')
			return true;
	return false;
}

/* Items in a list: one more than its commas. */
static size_t count_items(const char *list)
{
	size_t n = 1;

	for (; *list; list++)
		n += *list == ',';
	return n;
}

int labelsel__check(const char *list, char *err, size_t err_len)
{
	const char *p = list, *item;
	size_t n = count_items(list), len, i, k;

	if (!*p) {
		msg__set(err, err_len, "no key given");
		return -EINVAL;
	}
	for (k = 0; k < n; k++) {
		item = next_item(&p, &len);
		if (!len) {
			msg__set(err, err_len, "empty pattern in '%s'", list);
			return -EINVAL;
		}
		/* fnmatch would read an unclosed [ as itself: a typo is more likely */
		for (i = 0; i < len; i++) {
			if (item[i] == '\\') {
				i++;
			} else if (item[i] == '[' && !bracket_closed(item + i, len - i)) {
				msg__set(err, err_len, "unclosed [ in '%.*s'", (int)len, item);
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* A checked list into patterns. */
static int parse(struct patterns *out, const char *list)
{
	const char *p = list, *item;
	size_t n = count_items(list), len;

	out->v = calloc(n, sizeof(*out->v));
	if (!out->v)
		return -ENOMEM;
	for (; out->n < n; out->n++) {
		item = next_item(&p, &len);
		out->v[out->n] = strndup(item, len);
		if (!out->v[out->n])
			return -ENOMEM;
	}
	return 0;
}

struct labelsel *labelsel__new(const char *keep, const char *drop, bool *bad_drop, char *err,
			       size_t err_len)
{
	struct labelsel *s;

	*bad_drop = false;
	if (keep && labelsel__check(keep, err, err_len))
		return NULL;
	*bad_drop = true;
	if (drop && labelsel__check(drop, err, err_len))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s || (keep && parse(&s->keep, keep)) || (drop && parse(&s->drop, drop))) {
		labelsel__free(s);
		msg__set(err, err_len, "out of memory");
		return NULL;
	}
	s->keep_all = !keep;
	return s;
}

static void free_patterns(struct patterns *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
}

void labelsel__free(struct labelsel *s)
{
	if (!s)
		return;
	free_patterns(&s->keep);
	free_patterns(&s->drop);
	free(s);
}

static bool matches(const struct patterns *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!fnmatch(p->v[i], key, 0))
			return true;
	return false;
}

bool labelsel__keeps(const struct labelsel *s, const void *key, size_t len)
{
	char stack_buf[KEY_BUF], *k = stack_buf;
	bool keep;

	if (!s)
		return true;
	if (len && memchr(key, 0, len))
		return s->keep_all;
	if (len >= sizeof(stack_buf)) {
		k = malloc(len + 1);
		/* out of memory: keeping a label is the harmless answer */
		if (!k)
			return true;
	}
	if (len)
		memcpy(k, key, len);
	k[len] = '\0';
	keep = (s->keep_all || matches(&s->keep, k)) && !matches(&s->drop, k);
	if (k != stack_buf)
		free(k);
	return keep;
}

bool labelsel__is_trace_key(const void *key, size_t len)
{
	static const char *const names[] = {"trace_id", "span_id", "trace-id", "span-id",
					    "root-span-id"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == len && !memcmp(names[i], key, len))
			return true;
	return false;
}
