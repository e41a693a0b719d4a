/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libunwind_lib: a shared library built without frame pointers, which the
 * unwind workloads call through the PLT.
 */
#ifndef UNWIND_LIB_H
#define UNWIND_LIB_H

#include <stdint.h>

/* A few instructions: called in a tight loop, samples land in its PLT stub. */
uint64_t unwind_lib_step(uint64_t x);
/* Burns iters spin steps in a function of the library's own, unexported. */
uint64_t unwind_lib_work(uint64_t x, uint64_t iters);

#endif /* UNWIND_LIB_H */
