/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* V8's tagged values, as Node.js builds it: 8 bytes, no pointer compression. */
#ifndef LABELPROF_V8_BPF_H
#define LABELPROF_V8_BPF_H

/* A heap object's tagged address has these low bits; a Smi's value is its upper half. */
#define V8_TAG_MASK   3
#define V8_HEAP_TAG   1
#define V8_SMI_SHIFT  32
#define V8_IS_SMI(w)  (((w)&0xffffffffull) == 0)
#define V8_SMI(w)     ((__s64)(w) >> V8_SMI_SHIFT)
#define V8_IS_HEAP(w) (((w)&V8_TAG_MASK) == V8_HEAP_TAG)

#endif /* LABELPROF_V8_BPF_H */
