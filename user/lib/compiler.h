/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The small macros every module uses, defined once. */
#ifndef LABELPROF_COMPILER_H
#define LABELPROF_COMPILER_H

#include <stddef.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A macro's value as a string literal: help texts print the limits they are built from. */
#define __stringify_1(x) #x
#define __stringify(x)	 __stringify_1(x)

/* The struct of type that holds member at ptr. */
#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

#endif /* LABELPROF_COMPILER_H */
