/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What binutils' addr2line says of an address: the reference for DWARF
 * lookups. Included after cmocka.h (assert_non_null).
 */
#ifndef LABELPROF_TEST_ADDR2LINE_H
#define LABELPROF_TEST_ADDR2LINE_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

/* The line numbers addr2line -i gives for ELF address vaddr of file, innermost first. */
static size_t addr2line(const char *file, __u64 vaddr, __u32 *lines, size_t max)
{
	char cmd[2 * PATH_MAX], line[PATH_MAX];
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "addr2line -i -e '%s' 0x%llx", file, (unsigned long long)vaddr);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *colon = strrchr(line, ':');

		if (colon && n < max)
			lines[n++] = strtoul(colon + 1, NULL, 10);
	}
	pclose(p);
	return n;
}

#endif /* LABELPROF_TEST_ADDR2LINE_H */
