/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kernel differences the BPF programs bridge with CO-RE, each with its
 * reason: one home for the shims, so that dropping a kernel drops its shim.
 */
#ifndef LABELPROF_CORE_FIXES_BPF_H
#define LABELPROF_CORE_FIXES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

/* task_struct->utask exists only with CONFIG_UPROBES. */
struct task_struct___lp {
	void *utask;
} __attribute__((preserve_access_index));

/*
 * Whether task has uprobes state: its stack may hold uretprobe trampolines,
 * which the kernel's walker replaces with the real return addresses.
 */
static __always_inline bool uprobes_active(struct task_struct *task)
{
	struct task_struct___lp *t = (void *)task;

	return bpf_core_field_exists(t->utask) && t->utask;
}

#endif /* LABELPROF_CORE_FIXES_BPF_H */
