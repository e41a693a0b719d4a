/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* x86-64 kernel types for labelprof's BPF program (see ../vmlinux_common.h). */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

#include "../vmlinux_types.h"

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct thread_struct {
	unsigned long fsbase; /* the user thread pointer (FS base) */
};

/* UAPI layout: bpf_perf_event_data's context offsets depend on it. */
struct pt_regs {
	unsigned long r15;
	unsigned long r14;
	unsigned long r13;
	unsigned long r12;
	unsigned long bp;
	unsigned long bx;
	unsigned long r11;
	unsigned long r10;
	unsigned long r9;
	unsigned long r8;
	unsigned long ax;
	unsigned long cx;
	unsigned long dx;
	unsigned long si;
	unsigned long di;
	unsigned long orig_ax;
	unsigned long ip;
	unsigned long cs;
	unsigned long flags;
	unsigned long sp;
	unsigned long ss;
};

#pragma clang attribute pop

typedef struct pt_regs bpf_user_pt_regs_t;

#include "../vmlinux_common.h"

struct bpf_perf_event_data {
	bpf_user_pt_regs_t regs;
	__u64 sample_period;
	__u64 addr;
};

#endif /* __VMLINUX_H__ */
