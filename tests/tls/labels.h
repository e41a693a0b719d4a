/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The raw Custom Labels ABI symbols, defined by whichever fixture object
 * includes this header with LABELS_FORM set: 0 (v0), 1 (v1) or 7 (an
 * unknown version, which readers must ignore). TLS_ALIGN adds a TLS variable
 * of that alignment before the label object, so the segment takes its
 * alignment. LABELS_EXPORT controls the visibility of the symbols.
 */
#ifndef FIXTURE_LABELS_H
#define FIXTURE_LABELS_H

#include <stddef.h>
#include <stdint.h>

#ifndef LABELS_EXPORT
#define LABELS_EXPORT __attribute__((visibility("default")))
#endif

struct fx_string {
	size_t len;
	const unsigned char *buf;
};

struct fx_label {
	struct fx_string key;
	struct fx_string value;
};

#ifdef TLS_ALIGN
/* Touched through a volatile pointer so neither compiler nor linker drops it. */
__thread char fx_aligned_tls[TLS_ALIGN] __attribute__((aligned(TLS_ALIGN))) = {1};
#endif

#if LABELS_FORM == 0
LABELS_EXPORT const uint32_t custom_labels_abi_version = 0;
LABELS_EXPORT __thread struct {
	struct fx_label *storage;
	size_t count;
} custom_labels_thread_local_data;
#define FX_LABELS_TLS custom_labels_thread_local_data
#else
struct fx_labelset {
	struct fx_label *storage;
	size_t count;
	size_t capacity;
};
LABELS_EXPORT const uint32_t custom_labels_abi_version = LABELS_FORM;
LABELS_EXPORT __thread struct fx_labelset *custom_labels_current_set;
#define FX_LABELS_TLS custom_labels_current_set
#endif

/* The calling thread's label object; touching it allocates dynamic TLS. */
static inline void *fx_labels_addr(void)
{
#ifdef TLS_ALIGN
	*(volatile char *)fx_aligned_tls = 2;
#endif
	return (void *)&FX_LABELS_TLS;
}

#endif /* FIXTURE_LABELS_H */
