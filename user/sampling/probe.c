// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One process looked at by a session's modules (probe.h). */
#include <errno.h>

#include "registry/registry.h"
#include "sampling/modules.h"
#include "sampling/probe.h"

/* No BPF: the recipe is the inspection's result, nothing installs it. */
static int install_nothing(void *ctx, pid_t pid, const struct lp_recipe *recipe)
{
	return 0;
}

static __u64 no_exec_seq(void *ctx, pid_t pid)
{
	return 0;
}

static bool not_sampled(void *ctx, pid_t pid)
{
	return false;
}

struct registry *probe__process(pid_t pid, struct lp_recipe *recipe, struct tls_diag *diag,
				int *err)
{
	struct registry *r = registry__new(
		&(struct registry_opts){
			.target = {.set_recipe = install_nothing,
				   .exec_seq = no_exec_seq,
				   .samples = not_sampled},
			.max_processes = 1,
			.modules = session_modules,
			.describe_only = true,
		},
		err);

	if (r)
		*err = registry__inspect_one(r, pid, recipe, diag);
	return r;
}
