/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef LABELPROF_ITER_BPF_H
#define LABELPROF_ITER_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include "maps.bpf.h"
#include "labels.bpf.h"

/*
 * labelprof labels: the label set of every thread of one process, now,
 * without stopping it. Userspace installs the process's recipe and attaches
 * this iterator to its tgid; each thread becomes one sample record without
 * stacks in the iterator's seq file. The object instance that loads it loads
 * no sampler, and migration is off while the program runs: this CPU's scratch
 * entry is its own even while a fault sleeps.
 */
SEC("iter.s/task")
int read_threads(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u32 cpu = bpf_get_smp_processor_id(), off = sizeof(struct lp_sample);
	struct lp_counters *c;
	struct lp_scratch *sc;
	struct lp_recipe *r;
	struct lp_sample *s;

	if (!task) /* the end of the iteration */
		return 0;
	c = get_counters();
	sc = bpf_map_lookup_elem(&scratch, &cpu);
	if (!c || !sc)
		return 0;
	s = sample_init(sc, BPF_CORE_READ(task, tgid), BPF_CORE_READ(task, pid), cpu);
	bpf_core_read_str(s->comm, sizeof(s->comm), &task->comm);
	r = sample_recipe(task, true, BPF_CORE_READ(task, flags), sc, s, c);
	if (r)
		read_label_set(task, true, r, sc, s, &off, c);
	off = bounded(off, sizeof(*s), LP_RECORD_MAX);
	s->hdr.size = off;
	bpf_seq_write(ctx->meta->seq, sc->rec, off);
	return 0;
}

#endif /* LABELPROF_ITER_BPF_H */
