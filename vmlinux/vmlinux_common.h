/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel types labelprof's BPF program uses, and only those. The structs
 * carry preserve_access_index, so CO-RE relocates every field access to the
 * running kernel's layout (read from its BTF) at load time: they need the
 * right field names and types, not the right offsets. Included by the per-arch
 * vmlinux.h after it defines struct thread_struct.
 */
#ifndef __VMLINUX_COMMON_H__
#define __VMLINUX_COMMON_H__

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

typedef struct {
	int counter;
} atomic_t;

struct signal_struct {
	atomic_t live;
};

struct mm_struct {
	unsigned long exec_vm; /* pages of executable mappings */
};

struct qstr {
	union {
		struct {
			u32 hash;
			u32 len;
		};
		u64 hash_len;
	};
	const unsigned char *name;
};

struct dentry {
	struct qstr d_name;
};

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

struct file {
	struct path f_path;
};

struct task_struct {
	unsigned int flags;
	struct mm_struct *mm;
	pid_t pid;
	pid_t tgid;
	struct signal_struct *signal;
	char comm[16];
	struct thread_struct thread; /* defined per arch */
};

struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
	u64 session_id;
	u64 seq_num;
};

/* The context of a task iterator program; task is NULL once the walk is over. */
struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
};

struct linux_binprm;

#pragma clang attribute pop

#define PF_EXITING 0x00000004
#define PF_IO_WORKER   0x00000010
#define PF_USER_WORKER 0x00004000
#define PF_KTHREAD 0x00200000
#define PROT_EXEC 0x4

#endif /* __VMLINUX_COMMON_H__ */
