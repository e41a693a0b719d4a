// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unwind table build time and size per object: for each file given, derives
 * its rows (user/unwind/table.c) REPS times and prints one JSON line with
 * the rows, their bytes, the BPF pages they take and the fastest build.
 *   bench_unwind FILE...
 */
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "unwind/table.h"

#define REPS 3

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int i, rep, fd;

	elf_version(EV_CURRENT);
	for (i = 1; i < argc; i++) {
		struct unwind_table t = {};
		double best = 0, t0, ms;
		char err[256];
		size_t rows = 0;
		Elf *elf;

		fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
		if (!elf) {
			fprintf(stderr, "bench_unwind: %s: cannot open\n", argv[i]);
			return 1;
		}
		for (rep = 0; rep < REPS; rep++) {
			t0 = now_ms();
			if (unwind_table__build(elf, NULL, &t, err, sizeof(err))) {
				fprintf(stderr, "bench_unwind: %s: %s\n", argv[i], err);
				return 1;
			}
			ms = now_ms() - t0;
			best = rep && best < ms ? best : ms;
			rows = t.count;
			unwind_table__free(&t);
		}
		printf("{\"file\": \"%s\", \"rows\": %zu, \"bytes\": %zu, \"page_bytes\": %zu, "
		       "\"build_ms\": %.2f}\n",
		       argv[i], rows, rows * sizeof(struct lp_unwind_row),
		       (rows + LP_UNWIND_PAGE_ROWS - 1) / LP_UNWIND_PAGE_ROWS *
			       sizeof(struct lp_unwind_page),
		       best);
		elf_end(elf);
		close(fd);
	}
	return 0;
}
