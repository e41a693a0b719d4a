/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The process lifecycle (docs/design.md section 2): exec, fork and exit keep
 * the maps in step with the processes, and execs and exits go to userspace as
 * process events.
 */
#ifndef LABELPROF_LIFECYCLE_BPF_H
#define LABELPROF_LIFECYCLE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "maps.bpf.h"
#include "filter.bpf.h"

/* A process event about the current task's process. */
static __always_inline void emit_proc_event(__u32 type, __u64 pid_tgid)
{
	struct lp_proc_event *e;
	struct lp_counters *c;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		c = get_counters();
		if (c)
			c->event_drops++;
		return;
	}
	e->hdr.type = type;
	e->hdr.size = sizeof(*e);
	e->ktime_ns = bpf_ktime_get_ns();
	e->tgid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	/*
	 * Wake userspace now: a short-lived process must be inspected (and its
	 * memory map read) while it still exists.
	 */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/*
 * The lifecycle programs are BTF tracepoints, not classic tracepoints or
 * kprobes: libbpf attaches those by ids read from tracefs (or through the
 * kprobe PMU, which not every kernel has), fentry needs ftrace, while
 * tp_btf needs only /sys/kernel/btf/vmlinux, which labelprof needs anyway,
 * and exists since 5.5, before the ring buffer (5.8). New code mappings are
 * noticed by the samples themselves (sample_recipe): a hook on mmap would
 * have to run on every syscall's exit.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), one = 1, *seq;
	__u32 tgid = pid_tgid >> 32;

	/* the old image's recipe must not be applied to the new one */
	seq = bpf_map_lookup_elem(&execs, &tgid);
	if (seq)
		__sync_fetch_and_add(seq, 1);
	else
		bpf_map_update_elem(&execs, &tgid, &one, BPF_ANY);
	/* (the exec count only matters to a tgid with a recipe) */
	if (!bpf_map_delete_elem(&recipes, &tgid))
		recipes_changed();
	bpf_map_delete_elem(&hinted, &tgid);
	bpf_map_delete_elem(&mapped, &tgid);
	/* the old image's mappings: frame pointers until userspace lists the new ones */
	bpf_map_delete_elem(&unwind_procs, &tgid);

	if (passes_filter(tgid, NULL))
		emit_proc_event(LP_EVENT_EXEC, pid_tgid);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct lp_unwind_proc *up;
	struct lp_recipe *r, copy;
	__u8 one = 1;

	if (ptgid == ctgid) /* a new thread */
		return 0;
	/* a reused pid must not inherit a dead process's exec count */
	bpf_map_delete_elem(&execs, &ctgid);
	if (follow_children && filter_mode == LP_FILTER_PIDS &&
	    bpf_map_lookup_elem(&pid_filter, &ptgid)) {
		bpf_map_update_elem(&pid_filter, &ctgid, &one, BPF_ANY);
		__sync_fetch_and_add(&pid_filter_gen, 1);
	}
	/* a forked child has its parent's address space layout, so its recipe too */
	r = bpf_map_lookup_elem(&recipes, &ptgid);
	if (r) {
		copy = *r;
		copy.exec_seq = 0;
		bpf_map_update_elem(&recipes, &ctgid, &copy, BPF_ANY);
		recipes_changed();
	} else if (!bpf_map_delete_elem(&recipes, &ctgid)) {
		recipes_changed();
	}
	/* and its mappings: a child inherits a recipe, so nothing else would list them */
	up = bpf_map_lookup_elem(&unwind_procs, &ptgid);
	if (up)
		bpf_map_update_elem(&unwind_procs, &ctgid, up, BPF_ANY);
	else
		bpf_map_delete_elem(&unwind_procs, &ctgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;

	/* only the last thread's exit ends the process */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	if (!bpf_map_delete_elem(&recipes, &tgid))
		recipes_changed();
	bpf_map_delete_elem(&execs, &tgid);
	bpf_map_delete_elem(&hinted, &tgid);
	bpf_map_delete_elem(&mapped, &tgid);
	bpf_map_delete_elem(&unwind_procs, &tgid);
	if (passes_filter(tgid, NULL))
		emit_proc_event(LP_EVENT_EXIT, pid_tgid);
	if (filter_mode == LP_FILTER_PIDS && follow_children &&
	    !bpf_map_delete_elem(&pid_filter, &tgid))
		__sync_fetch_and_add(&pid_filter_gen, 1);
	return 0;
}

#endif /* LABELPROF_LIFECYCLE_BPF_H */
