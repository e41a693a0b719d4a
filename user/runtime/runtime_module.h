/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every runtime module (Python, HotSpot) keeps for a session: the
 * symbolizer its frames are named through, and whether to say what it finds.
 */
#ifndef LABELPROF_RUNTIME_MODULE_H
#define LABELPROF_RUNTIME_MODULE_H

#include <stdbool.h>

struct registry_env;
struct symbolizer;

struct runtime_module {
	struct symbolizer *sym;
	bool verbose;
};

/* proc_module.open: -ENODEV without a symbolizer (no frame could be named). */
int runtime_module__open(const struct registry_env *env, void **mod);
/* proc_module.close */
void runtime_module__close(void *mod);

#endif /* LABELPROF_RUNTIME_MODULE_H */
