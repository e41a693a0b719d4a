/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Architecture specifics of the BPF sampler, all in one place. */
#ifndef LABELPROF_ARCH_H
#define LABELPROF_ARCH_H

#include <bpf/bpf_core_read.h>

/* The user thread pointer the thread's TLS hangs off (docs/design.md section 3). */
static __always_inline __u64 arch_thread_pointer(struct task_struct *task)
{
#if defined(__TARGET_ARCH_x86)
	return task->thread.fsbase;
#elif defined(__TARGET_ARCH_arm64)
	return task->thread.uw.tp_value;
#else
#error "labelprof: unsupported architecture"
#endif
}

/*
 * The g of a Go program that keeps it in a register (arm64 without cgo: R28),
 * from the task's user registers; 0 when it reads none, -1 where Go does not.
 */
static __always_inline long arch_go_g_register(struct task_struct *task, __u64 *g)
{
#if defined(__TARGET_ARCH_arm64)
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	if (!regs)
		return -1;
	*g = regs->regs[28];
	return 0;
#else
	return -1;
#endif
}

/*
 * Register idx of a perf_event program's context. The context allows only
 * whole-word loads at a constant offset, and CO-RE would narrow a load of
 * x86's cs to the kernel's 16-bit field: registers are read as words at
 * their UAPI index (x86's struct pt_regs: bp 4, ip 16, cs 17, flags 18,
 * sp 19; arm64's struct user_pt_regs: pstate 33), one load each.
 */
static __always_inline __u64 ctx_reg(struct bpf_perf_event_data *ctx, const int idx)
{
	__u64 v;

	asm volatile("%0 = *(u64 *)(%1 + %2)" : "=r"(v) : "r"(ctx), "i"(idx * 8));
	return v;
}

/* Whether the sample interrupted user mode: its kernel stack is then empty. */
static __always_inline bool arch_user_mode(struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	return (ctx_reg(ctx, 17) & 3) == 3;
#else
	return (ctx_reg(ctx, 33) & 0xf) == 0; /* PSR_MODE_EL0t */
#endif
}

/*
 * A load that later loads are not reordered before. x86 keeps loads in
 * order; elsewhere a fetching atomic, a full barrier, does it.
 */
static __always_inline __u64 arch_load_acquire(__u64 *p)
{
#if defined(__TARGET_ARCH_x86)
	return *(volatile __u64 *)p;
#else
	return __sync_fetch_and_add(p, 0);
#endif
}

#if defined(__TARGET_ARCH_x86)
/*
 * x86 walks the user stack in BPF (walk_user_stack) rather than with
 * bpf_get_stack: the kernel's walker (perf_callchain_user) follows the
 * outermost frame's saved frame pointer, 0 (glibc's entry points clear it),
 * into a page fault, which costs microseconds in some VMs. arm64's walker
 * stops at a 0 frame pointer: it keeps bpf_get_stack.
 */
#define ARCH_USER_FP_WALK 1

#define X86_USER_CS   0x33    /* __USER_CS: 64-bit user mode */
#define X86_EFLAGS_VM 0x20000 /* virtual 8086 mode */
#ifndef PF_VCPU
#define PF_VCPU 0x00000001
#endif

/* Where a walk of the user stack starts: the user registers of the sample. */
struct arch_user_regs {
	__u64 ip;
	__u64 fp;
	__u64 sp;
};

/*
 * The registers the kernel's walker would start from; false where it would
 * not walk 64-bit frame records from them, so that bpf_get_stack does what
 * it does. Like get_perf_callchain, a sample of kernel mode takes the task's
 * saved user registers, except in a kernel thread or an io_uring worker (no
 * user stack) and in a KVM vCPU thread (perf_guest_state(): a guest was
 * interrupted, no user stack); mm NULL (an exiting task) is left to the
 * kernel too, since older kernels, which test current->mm there, then give
 * no user stack at all.
 */
static __always_inline bool arch_user_regs(struct bpf_perf_event_data *ctx,
					   struct task_struct *task, __u32 task_flags,
					   struct arch_user_regs *u)
{
	struct pt_regs *tregs;
	__u64 cs, flags;

	if (arch_user_mode(ctx)) {
		u->ip = ctx_reg(ctx, 16);
		u->fp = ctx_reg(ctx, 4);
		u->sp = ctx_reg(ctx, 19);
		cs = ctx_reg(ctx, 17);
		flags = ctx_reg(ctx, 18);
	} else {
		if (task_flags & (PF_KTHREAD | PF_USER_WORKER | PF_VCPU) || !task->mm)
			return false;
		tregs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (!tregs)
			return false;
		u->ip = tregs->ip;
		u->fp = tregs->bp;
		u->sp = tregs->sp;
		cs = tregs->cs;
		flags = tregs->flags;
	}
	/* user_64bit_mode(); vm86 stacks are not walked at all */
	return cs == X86_USER_CS && !(flags & X86_EFLAGS_VM);
}

struct mm_struct___lp {
	unsigned long *pgd;
} __attribute__((preserve_access_index));

struct task_struct___lp_mm {
	struct mm_struct___lp *mm;
} __attribute__((preserve_access_index));

/*
 * Whether reading the current task's user memory at addr must fault: the
 * first entry of its top-level page table, which covers at least the lowest
 * 512 GiB, is empty. PIE programs map nothing there, and a saved frame
 * pointer of 0 is where every thread's frame-record chain ends.
 */
static __always_inline bool arch_user_unmapped(__u64 addr)
{
	struct task_struct___lp_mm *task = (void *)bpf_get_current_task_btf();
	unsigned long *pgd;

	if (addr >= 1ull << 39)
		return false;
	pgd = task->mm->pgd;
	return pgd && *pgd == 0;
}
/*
 * The x86-64 signal frame as __restore_rt finds it: SP points at the
 * ucontext, whose uc_mcontext (struct sigcontext) starts 40 bytes in and
 * holds rbp, rsp and rip 80, 120 and 128 bytes further.
 */
#define ARCH_SIGFRAME_REGS 120 /* rbp, from SP */
#define ARCH_SIGFRAME_SP   5   /* rsp, in words from rbp */
#define ARCH_SIGFRAME_IP   6   /* rip, in words from rbp */

/* x86-64 PLT rule (LP_CFA_PLT): past the 11th byte of its 16-byte entry, a push was made. */
static __always_inline __u64 arch_plt_extra(__u64 ip)
{
	return (ip & 15) >= 11 ? 8 : 0;
}
#else
#define ARCH_USER_FP_WALK 0
#endif

#endif /* LABELPROF_ARCH_H */
