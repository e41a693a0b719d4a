/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Basic types and UAPI constants (stable ABI) for labelprof's BPF program. */
#ifndef __VMLINUX_TYPES_H__
#define __VMLINUX_TYPES_H__

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef _Bool bool;
typedef int pid_t;
enum { false = 0, true = 1 };

/* UAPI (include/uapi/linux/bpf.h) */
enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_CGROUP_ARRAY = 8,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_ARRAY_OF_MAPS = 12,
	BPF_MAP_TYPE_RINGBUF = 27,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};

enum {
	BPF_F_NO_PREALLOC = 1U << 0,
};

enum {
	BPF_F_SKIP_FIELD_MASK = 0xffULL,
	BPF_F_USER_STACK = 1ULL << 8,
};

enum {
	BPF_RB_NO_WAKEUP = 1ULL << 0,
	BPF_RB_FORCE_WAKEUP = 1ULL << 1,
};

/* bpf_ringbuf_query's flags */
enum {
	BPF_RB_AVAIL_DATA = 0,
	BPF_RB_RING_SIZE = 1,
};

#endif /* __VMLINUX_TYPES_H__ */
