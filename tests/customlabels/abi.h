/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Custom Labels ABI as a reader knows it (LP64), independent of the
 * library's own definitions: what the tests read the published labels with.
 */
#ifndef CUSTOMLABELS_TEST_ABI_H
#define CUSTOMLABELS_TEST_ABI_H

#include <stddef.h>

struct abi_string {
	size_t len;
	const unsigned char *buf;
};

struct abi_label {
	struct abi_string key;
	struct abi_string value;
};

struct abi_set {
	struct abi_label *storage;
	size_t count;
	size_t capacity;
};

struct abi_v0 {
	struct abi_label *storage;
	size_t count;
};

#endif /* CUSTOMLABELS_TEST_ABI_H */
