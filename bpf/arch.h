/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Architecture specifics of the BPF sampler, all in one place. */
#ifndef LABELPROF_ARCH_H
#define LABELPROF_ARCH_H

#include <bpf/bpf_core_read.h>

/* The user thread pointer the thread's TLS hangs off (DESIGN section 3). */
static __always_inline __u64 arch_thread_pointer(struct task_struct *task)
{
#if defined(__TARGET_ARCH_x86)
	return BPF_CORE_READ(task, thread.fsbase);
#elif defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(task, thread.uw.tp_value);
#else
#error "labelprof: unsupported architecture"
#endif
}

#endif /* LABELPROF_ARCH_H */
