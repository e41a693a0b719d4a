/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The dispatcher of the user stack walk (docs/design.md section 9): one
 * frame per bpf_loop step, whose owner is asked first (a runtime's code,
 * else native code with CFI, else frame pointers), then that owner's step.
 * Every step has the same shape, step(scratch, what the walker knows of the
 * process, its counters) -> enum walk_step, and is a global function: the
 * kernel verifies each once, on its own, whatever the paths that lead to it.
 *
 * A runtime's walker is a header of its own (stack_<name>.bpf.h, which
 * includes walk.bpf.h only), registered here by one line in walk_ctx, one in
 * walk_user_cfi and one in frame_owner or in the STEP_FP fallback.
 */
#ifndef LABELPROF_STACK_WALK_BPF_H
#define LABELPROF_STACK_WALK_BPF_H

#include "core_fixes.bpf.h"
#include "walk.bpf.h"
#include "stack_fp.bpf.h"
#include "stack_native.bpf.h"
#include "stack_hotspot.bpf.h"
#include "stack_v8.bpf.h"

#if ARCH_USER_CFI_WALK
/* What the walk of one sample knows: each walker's process data and counters; NULL: none. */
struct walk_ctx {
	struct lp_scratch *sc;
	struct lp_unwind_proc *proc;
	struct lp_unwind_counters *uc;
	const struct lp_java_ref *java;
	struct lp_java_counters *jc;
	const struct lp_v8_ref *v8;
	struct lp_v8_counters *vc;
};

/* Who steps a frame. */
enum frame_owner {
	OWNER_NATIVE,  /* CFI rows, or STEP_FP where the object has none */
	OWNER_HOTSPOT, /* a HotSpot JVM's code cache */
};

static __always_inline enum frame_owner frame_owner(const struct walk_ctx *cx, __u64 ip)
{
#if ARCH_JAVA_WALK
	if (cx->java && cx->jc && hotspot_owns(cx->java, ip))
		return OWNER_HOTSPOT;
#endif
	return OWNER_NATIVE;
}

/*
 * A frame without CFI: V8's frames are recognised by their slots first; then
 * its frame-pointer step.
 */
static __always_inline enum walk_step fp_fallback(const struct walk_ctx *cx, struct lp_cwalk *w)
{
	__u64 record = w->fp;

	if (unwind_mode == LP_UNWIND_CFI)
		return STEP_STUCK;
	if (cx->v8 && cx->vc)
		v8_step(cx->sc, cx->v8, cx->vc);
	if (fp_step(cx->sc, w)) {
		/*
		 * A record that points to itself (V8's deoptimization entries were
		 * seen to) would repeat to the depth limit. Only that: a chain may
		 * go down to another stack (Go's cgo calls), so order proves nothing.
		 */
		if (w->fp == record)
			return STEP_STUCK;
		w->exact = 0;
		cx->uc->fp_frames++;
		return STEP_OK;
	}
	/*
	 * The frame-pointer chain ends as the FP walk's does; not at the leaf,
	 * whose code may use FP as any other register.
	 */
	return !w->fp && w->n > 1 ? STEP_END : STEP_STUCK;
}

/* One frame, by bpf_loop: unwinds the frame at w->ip and stores its caller. */
static long walk_frame(__u32 i, struct walk_ctx *cx)
{
	struct lp_scratch *sc = cx->sc;
	struct lp_cwalk *w = &sc->cw;
	enum walk_step r;

	if (walk_full(w)) {
		w->status |= LP_ST_USTACK_TRUNCATED;
		return 1;
	}
	switch (frame_owner(cx, w->ip)) {
#if ARCH_JAVA_WALK
	case OWNER_HOTSPOT:
		r = hotspot_step(sc, cx->java, cx->jc);
		break;
#endif
	default:
		r = native_step(sc, cx->proc, cx->uc);
		break;
	}
	if (r == STEP_FP)
		r = fp_fallback(cx, w);
	if (r == STEP_STUCK)
		w->status |= LP_ST_USTACK_TRUNCATED;
	if (r != STEP_OK || !w->ip)
		return 1;
	*(__u64 *)&sc->rec[(w->at + w->n * sizeof(__u64)) & REC_MASK] = w->ip;
	w->n++;
	return 0;
}

/*
 * The user stack from u by the CFI rows of proc's objects (frame pointers
 * where an object has none, the runtimes' frames by their walkers, from the
 * recipe r if any) into the record at off; bytes written. Status bits for
 * the sample go to *status.
 */
static __always_inline long walk_user_cfi(struct lp_scratch *sc, __u32 off,
					  const struct arch_user_regs *u,
					  struct lp_unwind_proc *proc, const struct lp_recipe *r,
					  __u32 *status)
{
	struct lp_cwalk *w = &sc->cw;
	struct walk_ctx cx = {.sc = sc, .proc = proc};
	__u32 zero = 0;

	cx.uc = bpf_map_lookup_elem(&unwind_counters, &zero);
	if (!cx.uc)
		return 0;
	if (r && r->java.cc_low) {
		cx.java = &r->java;
		cx.jc = bpf_map_lookup_elem(&java_counters, &zero);
	}
	if (r && r->v8.js_function_first) {
		cx.v8 = &r->v8;
		cx.vc = bpf_map_lookup_elem(&v8_counters, &zero);
	}
	*(__u64 *)&sc->rec[off & REC_MASK] = u->ip;
	w->ip = u->ip;
	w->sp = u->sp;
	w->fp = u->fp;
	w->lr = arch_return_address(u->lr);
	w->n = 1;
	w->at = off;
	w->status = 0;
	w->exact = 1;
	w->object = 0;
	w->map.end = 0;
	w->gap_hi = 0;
	w->row_hi = 0;
	w->slen = 0;
	w->sp0 = u->sp;
	w->sp_lost = 0;
	bpf_loop(LP_MAX_USTACK_WORDS, walk_frame, &cx, 0);
	/* a stack that is its leaf alone was still the CFI walker's */
	if (!(w->status & (LP_ST_UNWIND_CFI | LP_ST_UNWIND_FP)))
		w->status |= LP_ST_UNWIND_CFI;
	if (w->status & LP_ST_USTACK_TRUNCATED)
		cx.uc->truncated++;
	*status |= w->status;
	return w->n * sizeof(__u64);
}
#endif

/*
 * The user stack of the interrupted thread into the record at off; bytes, or < 0:
 * the dispatcher's walk where the process has unwind tables (r, its recipe,
 * names its runtimes; NULL: none), else its frame records. A function of its
 * own, verified once.
 */
__noinline int user_stack(struct bpf_perf_event_data *ctx, struct lp_scratch *sc,
			  const struct lp_recipe *r, __u32 off)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 task_flags = task->flags, *status;
	long n;

	if (!sc || off > LP_MAX_STACK_DEPTH * sizeof(__u64) + sizeof(struct lp_sample))
		return -1;
	status = &((struct lp_sample *)sc->rec)->status;
#if ARCH_USER_CFI_WALK
	struct lp_unwind_proc *proc;
	struct arch_user_regs u;
	__u32 tgid;

	if (arch_user_regs(ctx, task, task_flags, &u) && !uprobes_active(task)) {
		if (unwind_mode != LP_UNWIND_FP) {
			tgid = bpf_get_current_pid_tgid() >> 32;
			proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
			if (proc)
				return walk_user_cfi(sc, off, &u, proc, r, status);
		}
#if ARCH_USER_FP_WALK
		n = walk_user_stack(sc, off, &u);
		*status |= LP_ST_UNWIND_FP;
		if (n >= ustack_words * sizeof(__u64))
			*status |= LP_ST_USTACK_TRUNCATED;
		return n;
#endif
	}
#endif
	n = bpf_get_stack(ctx, &sc->rec[off], stack_depth * sizeof(__u64), BPF_F_USER_STACK);
	if (n > 0)
		*status |= LP_ST_UNWIND_FP;
	if (n >= stack_depth * sizeof(__u64))
		*status |= LP_ST_USTACK_TRUNCATED;
	return n;
}

#endif /* LABELPROF_STACK_WALK_BPF_H */
