// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>

#include "registry/module.h"
#include "runtime/runtime_module.h"

int runtime_module__open(const struct registry_env *env, void **mod)
{
	struct runtime_module *m;

	if (!env->symbolizer)
		return -ENODEV;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->sym = env->symbolizer;
	m->verbose = env->verbose;
	*mod = m;
	return 0;
}

void runtime_module__close(void *mod)
{
	free(mod);
}
