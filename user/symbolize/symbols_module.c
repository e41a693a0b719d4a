// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The symbolizer as a registry module: a process's snapshot (symbols.h) is
 * taken from the maps of its inspection when its image is new (an exec read
 * while the short-lived process still exists, a target named at the start,
 * a forked child's first sample), kept current with the maps of its later
 * inspections (the loader's and dlopen's libraries), and ended with the
 * image. A process found by the start's scan of every process gets its
 * snapshot at its first sample: most never run while sampled.
 */
#include <errno.h>

#include "registry/module.h"
#include "symbolize/symbols.h"

struct symbols_proc {
	__u32 snapshot; /* of the current image; 0: none yet */
};

static int symbols_module_open(const struct registry_env *env, void **mod)
{
	if (!env->symbolizer)
		return -ENODEV;
	*mod = env->symbolizer;
	return 0;
}

static int symbols_module_inspect(void *mod, void *state, struct proc_view *v,
				  struct lp_recipe *recipe)
{
	struct symbols_proc *p = state;
	struct symbolizer *sym = mod;

	if (p->snapshot && symbolizer__snapshot_current(sym, p->snapshot))
		symbolizer__snapshot_update(sym, p->snapshot, v->maps);
	else if (v->cause == PROC_EXEC || v->cause == PROC_FIRST_SAMPLE || v->named)
		p->snapshot = symbolizer__snapshot(sym, v->pid, v->maps);
	return 0;
}

static void symbols_module_end(void *mod, void *state, pid_t pid, enum proc_end how)
{
	struct symbols_proc *p = state;

	symbolizer__snapshot_end(mod, p->snapshot);
}

static __u32 symbols_module_snapshot(void *mod, void *state, pid_t pid)
{
	struct symbols_proc *p = state;

	/* evicted to stay within the limits, or never taken: read now */
	if (!p->snapshot || !symbolizer__snapshot_current(mod, p->snapshot))
		p->snapshot = symbolizer__snapshot(mod, pid, NULL);
	return p->snapshot;
}

const struct proc_module symbols_module = {
	.name = "symbols",
	.state_size = sizeof(struct symbols_proc),
	.open = symbols_module_open,
	.inspect = symbols_module_inspect,
	.end = symbols_module_end,
	.snapshot = symbols_module_snapshot,
};
