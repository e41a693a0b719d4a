/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Intrusive doubly linked lists, circular around a head, used as LRU lists:
 * most recently used at the head. The entries embed a struct list and are
 * found back with container_of (lib/compiler.h).
 */
#ifndef LABELPROF_LIST_H
#define LABELPROF_LIST_H

#include <stdbool.h>

struct list {
	struct list *prev, *next;
};

static inline void list__init(struct list *l)
{
	l->prev = l->next = l;
}

static inline bool list__empty(const struct list *l)
{
	return l->next == l;
}

static inline void list__del(struct list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	list__init(n);
}

static inline void list__add(struct list *head, struct list *n)
{
	n->next = head->next;
	n->prev = head;
	head->next->prev = n;
	head->next = n;
}

static inline void list__touch(struct list *head, struct list *n)
{
	if (head->next == n)
		return;
	list__del(n);
	list__add(head, n);
}

#endif /* LABELPROF_LIST_H */
