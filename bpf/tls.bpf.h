/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A thread's user memory, and the way from its thread pointer to a TLS object
 * (docs/design.md section 3): a static offset, the DTV, or a TLSDESC.
 */
#ifndef LABELPROF_TLS_BPF_H
#define LABELPROF_TLS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "labelprof.h"
#include "arch.h"

/*
 * Reads the user memory of task. The sampler reads the thread it interrupted
 * (bpf_probe_read_user, allowed in any program); the task iterator reads
 * another thread (remote: bpf_copy_from_user_task, which may fault pages in
 * and so exists only in sleepable programs). remote is a constant at every
 * call site: each program keeps one of the two helpers, and a perf_event
 * program never mentions the sleepable one, which its verifier would reject.
 */
static __always_inline long read_user(struct task_struct *task, bool remote, void *dst, __u32 size,
				      __u64 src)
{
	if (remote)
		return bpf_copy_from_user_task(dst, size, (void *)src, task, 0);
	return bpf_probe_read_user(dst, size, (void *)src);
}

/* glibc's and musl's DTV walk: the block of module modid, plus offset. */
static __always_inline int dtv_addr(struct task_struct *task, bool remote,
				    const struct lp_tls_ref *r, __u64 tp, __u64 modid, __u64 offset,
				    __u64 *addr, __u32 *status)
{
	__u64 dtv, block, entries;

	if (read_user(task, remote, &dtv, sizeof(dtv), tp + r->dtv_tp_offset) || !dtv) {
		*status |= LP_ST_READ_FAULT;
		return -1;
	}
	if (r->dtv_flags & LP_DTV_GLIBC) {
		/* dtv[-1] is the number of slots; a larger module id was never set up */
		if (read_user(task, remote, &entries, sizeof(entries), dtv - r->dtv_entry_size)) {
			*status |= LP_ST_READ_FAULT;
			return -1;
		}
		if (modid > entries) {
			*status |= LP_ST_DTV_UNALLOCATED;
			return -1;
		}
	}
	if (read_user(task, remote, &block, sizeof(block), dtv + modid * r->dtv_entry_size)) {
		*status |= LP_ST_READ_FAULT;
		return -1;
	}
	if (!block || ((r->dtv_flags & LP_DTV_GLIBC) && block == (__u64)-1)) {
		*status |= LP_ST_DTV_UNALLOCATED;
		return -1;
	}
	*addr = block + offset;
	return 0;
}

/* Finds the TLS object of task; 0 when *addr is valid. */
static __always_inline int tls_object_addr(struct task_struct *task, bool remote,
					   const struct lp_tls_ref *r, __u64 *addr, __u32 *status)
{
	__u64 tp = arch_thread_pointer(task), desc[2], ti[2];

	if (!tp) {
		*status |= LP_ST_READ_FAULT;
		return -1;
	}
	switch (r->access) {
	case LP_TLS_TP_OFFSET:
		*addr = tp + r->offset;
		return 0;
	case LP_TLS_DTV:
		return dtv_addr(task, remote, r, tp, r->dtv_modid, r->offset, addr, status);
	case LP_TLS_TLSDESC:
		if (read_user(task, remote, desc, sizeof(desc), r->tlsdesc_addr)) {
			*status |= LP_ST_READ_FAULT;
			return -1;
		}
		if (!desc[1]) {
			*status |= LP_ST_TLS_PENDING;
			return -1;
		}
		if ((__s64)desc[1] < LP_TLSDESC_STATIC_MAX) {
			*addr = tp + desc[1] + r->offset;
			return 0;
		}
		/* glibc's dynamic TLSDESC: arg points to { modid, offset } */
		if (read_user(task, remote, ti, sizeof(ti), desc[1])) {
			*status |= LP_ST_READ_FAULT;
			return -1;
		}
		return dtv_addr(task, remote, r, tp, ti[0], ti[1] + r->offset, addr, status);
	}
	return -1;
}

#endif /* LABELPROF_TLS_BPF_H */
