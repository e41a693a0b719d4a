// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The unwind tables as a registry module: every sampled process's mapping
 * list follows its inspections (exec, unknown pid, new code), not the
 * retries that wait for a label library's relocation, which map nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "registry/module.h"
#include "unwind/unwind.h"

struct unwind_proc {
	/* exec count + 1 and code pages when the mappings were listed; seq 0: never */
	__u64 seq;
	__u64 vm;
};

struct unwind_module {
	struct unwind *unwind;
	bool verbose;
};

static int unwind_module_open(const struct registry_env *env, void **mod)
{
	struct unwind_module *m;

	if (!env->unwind)
		return -ENODEV;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->unwind = env->unwind;
	m->verbose = env->verbose;
	*mod = m;
	return 0;
}

static void unwind_module_close(void *mod)
{
	free(mod);
}

static int unwind_module_inspect(void *mod, void *state, struct proc_view *v,
				 struct lp_recipe *recipe)
{
	struct unwind_module *m = mod;
	struct unwind_proc *p = state;

	if (!v->sampled || (p->seq == v->exec_seq + 1 && p->vm == v->exec_vm && v->exec_vm))
		return 0;
	/* the thread builds the tables while the registry goes on with inspections due */
	if (unwind__queue_update(m->unwind, v->pid, v->maps)) {
		if (m->verbose)
			fprintf(stderr, "labelprof: pid %d: no unwind tables\n", v->pid);
		return PROC_PENDING;
	}
	p->seq = v->exec_seq + 1;
	p->vm = v->exec_vm;
	return 0;
}

static void unwind_module_end(void *mod, void *state, pid_t pid, enum proc_end how)
{
	struct unwind_module *m = mod;

	if (how == PROC_END_EXIT)
		unwind__queue_forget(m->unwind, pid);
}

const struct proc_module unwind_module = {
	.name = "unwind tables",
	.state_size = sizeof(struct unwind_proc),
	.open = unwind_module_open,
	.close = unwind_module_close,
	.inspect = unwind_module_inspect,
	.end = unwind_module_end,
};
