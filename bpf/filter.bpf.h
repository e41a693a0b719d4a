/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Which processes are sampled: all, a pid list (and children), or a cgroup. */
#ifndef LABELPROF_FILTER_BPF_H
#define LABELPROF_FILTER_BPF_H

#include "maps.bpf.h"
#include "arch.h"

/* Whether the current task, of tgid, is one to sample; sc: this CPU's scratch, if at hand. */
static __always_inline bool passes_filter(__u32 tgid, struct lp_scratch *sc)
{
	struct lp_fcache *fc;
	__u64 gen;

	if (filter_mode == LP_FILTER_CGROUP)
		return bpf_current_task_under_cgroup(&cgroup_filter, 0) == 1;
	if (filter_mode != LP_FILTER_PIDS)
		return true;
	if (!sc)
		return bpf_map_lookup_elem(&pid_filter, &tgid) != NULL;
	/* a sampled process mostly stays on its CPUs: its last answer is kept */
	fc = &sc->fc;
	gen = arch_load_acquire(&pid_filter_gen);
	if (fc->gen != gen + 1 || fc->tgid != tgid) {
		fc->pass = bpf_map_lookup_elem(&pid_filter, &tgid) != NULL;
		fc->tgid = tgid;
		fc->gen = gen + 1;
	}
	return fc->pass;
}

#endif /* LABELPROF_FILTER_BPF_H */
