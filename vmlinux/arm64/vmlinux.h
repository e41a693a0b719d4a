/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* aarch64 kernel types for labelprof's BPF program (see ../vmlinux_common.h). */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

#include "../vmlinux_types.h"

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct thread_struct {
	struct {
		unsigned long tp_value; /* the user thread pointer (TPIDR_EL0) */
		unsigned long tp2_value;
	} uw;
};

/* bpf_tracing.h's PT_REGS macros for arm64 name struct user_pt_regs. */
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
};

struct pt_regs {
	union {
		struct user_pt_regs user_regs;
		struct {
			__u64 regs[31];
			__u64 sp;
			__u64 pc;
			__u64 pstate;
		};
	};
	__u64 orig_x0;
};

#pragma clang attribute pop

#include "../vmlinux_common.h"

typedef struct user_pt_regs bpf_user_pt_regs_t;

struct bpf_perf_event_data {
	bpf_user_pt_regs_t regs;
	__u64 sample_period;
	__u64 addr;
};

#endif /* __VMLINUX_H__ */
