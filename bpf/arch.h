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

/*
 * User stacks are walked in BPF by the CFI rows userspace derives
 * (stack_walk.bpf.h, stack_native.bpf.h) on both architectures, from the registers
 * arch_user_regs gives. Frames without CFI, and the walk of --unwind fp,
 * follow frame records: ARCH_USER_FP_WALK says whether that is done in BPF
 * (stack_fp.bpf.h) or by bpf_get_stack.
 */
#define ARCH_USER_CFI_WALK 1

#ifndef PF_VCPU
#define PF_VCPU 0x00000001
#endif

/* Where a walk of the user stack starts: the user registers of the sample. */
struct arch_user_regs {
	__u64 ip;
	__u64 fp;
	__u64 sp;
	__u64 lr; /* the link register; x86-64 has none: 0 */
};

/*
 * Whether the kernel's walker would take the task's user registers: like
 * get_perf_callchain, a sample of kernel mode takes the task's saved user
 * registers, except in a kernel thread or an io_uring worker (no user stack)
 * and in a KVM vCPU thread (perf_guest_state(): a guest was interrupted, no
 * user stack); mm NULL (an exiting task) is left to the kernel too, since
 * older kernels, which test current->mm there, then give no user stack at all.
 */
static __always_inline struct pt_regs *arch_task_user_regs(struct task_struct *task,
							   __u32 task_flags)
{
	if (task_flags & (PF_KTHREAD | PF_USER_WORKER | PF_VCPU) || !task->mm)
		return NULL;
	return (struct pt_regs *)bpf_task_pt_regs(task);
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
/* The frame record lies at the top of an x86-64 frame: the caller's SP is FP + 16. */
#define ARCH_FP_STEP_SP 1
/* HotSpot's frames are walked on x86-64 (stack_hotspot.bpf.h): its layouts are known here */
#define ARCH_JAVA_WALK 1
#define X86_RET	       0xc3 /* ret: a frame's stack is gone, its return address at SP */

#define X86_USER_CS   0x33    /* __USER_CS: 64-bit user mode */
#define X86_EFLAGS_VM 0x20000 /* virtual 8086 mode */

/*
 * The registers the kernel's walker would start from; false where it would
 * not walk 64-bit frame records from them, so that bpf_get_stack does what
 * it does.
 */
static __always_inline bool arch_user_regs(struct bpf_perf_event_data *ctx,
					   struct task_struct *task, __u32 task_flags,
					   struct arch_user_regs *u)
{
	struct pt_regs *tregs;
	__u64 cs, flags;

	u->lr = 0;
	if (arch_user_mode(ctx)) {
		u->ip = ctx_reg(ctx, 16);
		u->fp = ctx_reg(ctx, 4);
		u->sp = ctx_reg(ctx, 19);
		cs = ctx_reg(ctx, 17);
		flags = ctx_reg(ctx, 18);
	} else {
		tregs = arch_task_user_regs(task, task_flags);
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

/* A return address as the stack holds it. */
static __always_inline __u64 arch_return_address(__u64 ra)
{
	return ra;
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
#elif defined(__TARGET_ARCH_arm64)
#define ARCH_USER_FP_WALK 0
#define ARCH_JAVA_WALK	  0
/*
 * gcc and clang put the frame record at the bottom of an arm64 frame: a
 * frame-pointer step gives the caller's FP and pc, not its SP.
 */
#define ARCH_FP_STEP_SP 0

#define ARM64_PSR_MODE32 0x10 /* PSR_MODE32_BIT: an AArch32 (compat) task */

/*
 * The interrupted user registers (user_pt_regs: x29 29, x30 30, sp 31,
 * pc 32, pstate 33); false for a compat task, whose stack has no 64-bit
 * frames.
 */
static __always_inline bool arch_user_regs(struct bpf_perf_event_data *ctx,
					   struct task_struct *task, __u32 task_flags,
					   struct arch_user_regs *u)
{
	struct pt_regs *tregs;
	__u64 pstate;

	if (arch_user_mode(ctx)) {
		u->fp = ctx_reg(ctx, 29);
		u->lr = ctx_reg(ctx, 30);
		u->sp = ctx_reg(ctx, 31);
		u->ip = ctx_reg(ctx, 32);
		pstate = ctx_reg(ctx, 33);
	} else {
		tregs = arch_task_user_regs(task, task_flags);
		if (!tregs)
			return false;
		u->fp = tregs->regs[29];
		u->lr = tregs->regs[30];
		u->sp = tregs->sp;
		u->ip = tregs->pc;
		pstate = tregs->pstate;
	}
	return !(pstate & ARM64_PSR_MODE32);
}

/* Nothing maps the first page (mmap_min_addr): a 0 frame pointer ends a chain unread. */
static __always_inline bool arch_user_unmapped(__u64 addr)
{
	return addr < 4096;
}

/*
 * A return address without its pointer authentication code (pac-ret code
 * signs x30 before saving it): the PAC and the tag byte lie above the user
 * VA bits, 48 unless a process asked mmap for addresses above 256 TiB.
 */
static __always_inline __u64 arch_return_address(__u64 ra)
{
	return ra & ((1ull << 48) - 1);
}

/*
 * The arm64 signal frame as __kernel_rt_sigreturn (vdso) finds it: SP points
 * at struct rt_sigframe, a 128-byte siginfo then the ucontext, whose
 * uc_mcontext (struct sigcontext) starts 176 bytes in; its regs[29] (x29),
 * regs[30] (lr), sp and pc lie 240 bytes into that.
 */
#define ARCH_SIGFRAME_REGS 544 /* x29, from SP */
#define ARCH_SIGFRAME_LR   1   /* x30, in words from x29 */
#define ARCH_SIGFRAME_SP   2   /* sp, in words from x29 */
#define ARCH_SIGFRAME_IP   3   /* pc, in words from x29 */

/* Rows of aarch64 code have no PLT rule (LP_CFA_PLT is x86-64's). */
static __always_inline __u64 arch_plt_extra(__u64 ip)
{
	return 0;
}
#else
#error "labelprof: unsupported architecture"
#endif

#endif /* LABELPROF_ARCH_H */
