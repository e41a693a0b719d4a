// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fuzzes the /proc/PID/maps parser: the input is the file's text. Checks the
 * promises of maps.h (sorted, disjoint, well-formed entries) and that
 * maps__find agrees with a linear scan.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct maps_entry *find_linear(const struct maps *m, __u64 addr)
{
	size_t i;

	for (i = 0; i < maps__count(m); i++) {
		const struct maps_entry *e = maps__entry(m, i);

		if (addr >= e->start && addr < e->end)
			return e;
	}
	return NULL;
}

static void check_find(const struct maps *m, __u64 addr)
{
	if (maps__find(m, addr) != find_linear(m, addr))
		abort();
}

static void check(const struct maps *m, unsigned int flags, const uint8_t *data, size_t size)
{
	size_t n = maps__count(m), i;

	if (maps__entry(m, n))
		abort();
	for (i = 0; i < n; i++) {
		const struct maps_entry *e = maps__entry(m, i);

		if (e->start >= e->end || (i && e->start < maps__entry(m, i - 1)->end))
			abort();
		if ((flags & MAPS_EXEC_ONLY) && !(e->prot & MAPS_PROT_EXEC))
			abort();
		if (!e->path || e->kind > MAPS_SPECIAL || (e->kind == MAPS_ANON) != !*e->path ||
		    strchr(e->path, '\n'))
			abort();
		check_find(m, e->start);
		check_find(m, e->end - 1);
		check_find(m, e->end);
		if (e->start)
			check_find(m, e->start - 1);
	}
	/* Addresses taken from the input itself land in gaps as often as not. */
	for (i = 0; i + 8 <= size && i < 64 * 8; i += 8) {
		__u64 addr;

		memcpy(&addr, data + i, sizeof(addr));
		check_find(m, addr);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned int flags[] = {0, MAPS_EXEC_ONLY};
	size_t f;

	for (f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
		struct maps *m;

		/* libFuzzer's data is a heap block of exactly size bytes: ASan sees overreads. */
		if (maps__parse((const char *)data, size, flags[f], &m))
			return 0;
		check(m, flags[f], data, size);
		maps__free(m);
	}
	return 0;
}
