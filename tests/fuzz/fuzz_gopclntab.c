// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fuzzes Go's function table reader: the input is a read-only segment, in
 * which the table is searched for as in an executable without section
 * headers; then every function's name, lookups of its pcs, and their lines.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/gopclntab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Functions looked at per input: a table may claim many. */
#define MAX_FUNCS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopcln t;
	size_t i;

	if (gopcln__search(&t, data, size))
		return 0;
	for (i = 0; i < t.nfunc && i < MAX_FUNCS; i++) {
		const char *name, *file;
		__u32 line, start_line;
		__u64 start, end, pc;
		long k;

		if (gopcln__func(&t, i, &start, &end, &name))
			continue;
		/* strings lie within the input: strlen runs them through ASan */
		if (strlen(name) >= t.len)
			abort();
		for (pc = start; pc < end && pc - start < 64; pc += 7) {
			k = gopcln__find(&t, pc);
			if (k >= (long)t.nfunc)
				abort();
			if (k >= 0 && !gopcln__line(&t, k, pc, &file, &line, &start_line) &&
			    ((file && strlen(file) >= t.len) || !line))
				abort();
		}
	}
	return 0;
}
