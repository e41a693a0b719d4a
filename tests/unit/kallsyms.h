/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel function addresses from /proc/kallsyms, which shows zeros where
 * kernel.kptr_restrict says so: to every uid at 2, to uids without
 * CAP_SYSLOG at 1 (and at 0 with perf_event_paranoid > 1). As root, a test
 * lowers 2 to 1 and its teardown, kallsyms_restore, puts it back. Included
 * after cmocka.h.
 */
#ifndef LABELPROF_TEST_KALLSYMS_H
#define LABELPROF_TEST_KALLSYMS_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include "skip.h"

#define KPTR_RESTRICT "/proc/sys/kernel/kptr_restrict"

/* kptr_restrict's value before kallsyms_addr changed it, or "". */
static char kptr_restrict_saved[16];

static void write_kptr_restrict(const char *value)
{
	FILE *f = fopen(KPTR_RESTRICT, "w");

	assert_non_null(f);
	assert_true(fputs(value, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* The first text symbol called name, as /proc/kallsyms shows it to us: 0 if hidden. */
static __u64 kallsyms_lookup(const char *name)
{
	unsigned long long addr = 0;
	char line[512], sym[256];
	FILE *k = fopen("/proc/kallsyms", "r");

	assert_non_null(k);
	while (!addr && fgets(line, sizeof(line), k)) {
		char type;

		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) != 3 || type != 'T' ||
		    strcmp(sym, name))
			addr = 0;
	}
	fclose(k);
	return addr;
}

/*
 * The address of kernel text symbol name, kallsyms showing addresses until
 * kallsyms_restore (the symbolizer reads it on first use). Skips the test for
 * a uid that cannot see them.
 */
static __u64 kallsyms_addr(const char *name)
{
	__u64 addr = kallsyms_lookup(name);
	FILE *f;

	if (addr)
		return addr;
	if (geteuid())
		skip_because("/proc/kallsyms hides kernel addresses from this uid "
			     "(kptr_restrict, perf_event_paranoid)");
	f = fopen(KPTR_RESTRICT, "r");
	assert_non_null(f);
	assert_non_null(fgets(kptr_restrict_saved, sizeof(kptr_restrict_saved), f));
	fclose(f);
	write_kptr_restrict("1");
	addr = kallsyms_lookup(name);
	if (!addr)
		fail_msg("%s not in /proc/kallsyms, or hidden from root at kptr_restrict=1", name);
	return addr;
}

/* Teardown of a test that called kallsyms_addr. */
static int kallsyms_restore(void **state)
{
	if (kptr_restrict_saved[0]) {
		write_kptr_restrict(kptr_restrict_saved);
		kptr_restrict_saved[0] = '\0';
	}
	return 0;
}

#endif /* LABELPROF_TEST_KALLSYMS_H */
