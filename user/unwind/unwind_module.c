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

/* The tables' figures and the BPF walk's counters (map unwind_counters). */
static int unwind_module_counters(void *mod, struct proc_counters *out)
{
	struct unwind_module *m = mod;
	struct unwind_stats us;

	unwind__stats(m->unwind, &us);
	*out = (struct proc_counters){
		.title = "unwind",
		.n = 14,
		.c =
			{
				{"unwind_objects", "objects", us.objects, .gauge = true},
				{"unwind_rows", "rows", us.rows, .gauge = true},
				{"unwind_bpf_bytes", "bytes in BPF", us.bytes, .gauge = true},
				{"unwind_shard_bytes", "bytes of shards", us.shard_bytes,
				 .gauge = true},
				{"unwind_tables_built", "tables built", us.builds},
				{"unwind_build_milliseconds", "ms building them",
				 us.build_ns / 1000000},
				{"unwind_evictions", "evicted", us.evictions},
				{"unwind_errors", "errors", us.errors},
				{"unwind_processes_without_room", "processes without room",
				 us.procs_full},
				{"unwind_cfi_frames", "frames by CFI", us.bpf.cfi_frames,
				 .clause = true},
				{"unwind_fp_frames", "by frame pointers", us.bpf.fp_frames},
				{"unwind_table_misses", "table misses", us.bpf.misses},
				{"unwind_frames_without_rule", "without a rule", us.bpf.no_rule},
				{"unwind_truncated_walks", "walks truncated", us.bpf.truncated,
				 .clause = true},
			},
	};
	return 0;
}

const struct proc_module unwind_module = {
	.name = "unwind tables",
	.state_size = sizeof(struct unwind_proc),
	.open = unwind_module_open,
	.close = unwind_module_close,
	.inspect = unwind_module_inspect,
	.end = unwind_module_end,
	.counters = unwind_module_counters,
};
