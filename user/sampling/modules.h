/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The registry modules of every sampling session (registry/module.h). */
#ifndef LABELPROF_MODULES_H
#define LABELPROF_MODULES_H

struct proc_module;

/* NULL-terminated, in the order they see a process. */
extern const struct proc_module *const session_modules[];

#endif /* LABELPROF_MODULES_H */
