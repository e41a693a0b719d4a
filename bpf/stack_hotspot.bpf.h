/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * HotSpot frames (docs/design.md section 12), x86-64: the dispatcher hands
 * this walker a frame whose pc is in the JVM's code cache (hotspot_owns).
 * The pc is the interpreter's (a frame by its FP, the Method* and bcp in its
 * slots), an nmethod's (its frame size from its blob) or a stub's (FP
 * chained, or a frame size). A Java frame is stored as two words in place
 * of its pc (LP_JAVA_TAG); userspace names the method.
 */
#ifndef LABELPROF_STACK_HOTSPOT_BPF_H
#define LABELPROF_STACK_HOTSPOT_BPF_H

#include "walk.bpf.h"

#if ARCH_JAVA_WALK
#define SEGMAP_FREE 0xff /* a segment in no block */

/* Reads sz bytes of the JVM's memory at addr; counts a fault. */
static __always_inline bool java_read(struct lp_java_counters *jc, void *dst, __u32 sz, __u64 addr)
{
	if (!bpf_probe_read_user(dst, sz, (void *)addr))
		return true;
	jc->faults++;
	return false;
}

/*
 * The blob holding pc in heap h, by the segment map: each segment's byte
 * says how many segments back to step towards its block's first (0). 0 if none.
 */
static __always_inline __u64 heap_blob(const struct lp_java_ref *j, const struct lp_java_heap *h,
				       __u64 pc, struct lp_java_counters *jc)
{
	__u64 idx = (pc - h->low) >> (j->log2_segment & 31);
	__u8 b;
	int k;

	for (k = 0; k < LP_JAVA_SEGMAP_HOPS; k++) {
		if (!java_read(jc, &b, 1, h->segmap + idx))
			return 0;
		if (b == SEGMAP_FREE)
			return 0;
		if (!b)
			return h->low + (idx << (j->log2_segment & 31)) + j->heap_block;
		if (idx < b)
			return 0;
		idx -= b;
	}
	return 0;
}

/* The code blob holding pc, 0 if none. */
static __always_inline __u64 find_blob(const struct lp_java_ref *j, __u64 pc,
				       struct lp_java_counters *jc)
{
	int i;

	for (i = 0; i < LP_JAVA_MAX_HEAPS; i++)
		if (i < j->heap_count && pc >= j->heaps[i].low && pc < j->heaps[i].high)
			return heap_blob(j, &j->heaps[i], pc, jc);
	return 0;
}

/* The frame at w->n - 1 (stored as its pc) becomes the Java frame (w0, w1). */
static __always_inline void store_java(struct lp_scratch *sc, struct lp_cwalk *w, __u64 w0,
				       __u64 w1)
{
	store_pair(sc, w, LP_JAVA_TAG << 60 | w0,
		   LP_JAVA_TAG << 60 | LP_JAVA_SECOND | (w1 & LP_JAVA_ADDR_MASK));
}

/* Whether the JVM j runs the code at ip. */
static __always_inline bool hotspot_owns(const struct lp_java_ref *j, __u64 ip)
{
	return ip >= j->cc_low && ip < j->cc_high;
}

/*
 * One step from a frame whose pc is in the code cache: its caller's ip, sp
 * and fp into sc->cw. STEP_STUCK where the frame cannot be walked. A
 * function of its own, verified once.
 */
__noinline int hotspot_step(struct lp_scratch *sc, const struct lp_java_ref *j,
			    struct lp_java_counters *jc)
{
	__u64 pc, blob, vtable = 0, code_begin, method, bcp;
	__u64 sender_sp, fp, ra;
	struct lp_cwalk *w;
	__s32 complete, size;
	__u8 insn;

	if (!sc || !j || !jc)
		return STEP_STUCK;
	w = &sc->cw;
	pc = w->exact ? w->ip : w->ip - 1;
	if (pc >= j->interp_low && pc < j->interp_high) {
		/* an interpreter frame: the thread's FP, or the one its callee saved */
		if (!w->fp || !stack_word(sc, w, w->fp + j->fp_method, &method) ||
		    !stack_word(sc, w, w->fp + j->fp_bcp, &bcp) ||
		    !stack_word(sc, w, w->fp + j->fp_sender_sp, &sender_sp) ||
		    !stack_word(sc, w, w->fp, &fp) || !stack_word(sc, w, w->fp + 8, &ra)) {
			jc->faults++;
			return STEP_STUCK;
		}
		store_java(sc, w, method & LP_JAVA_ADDR_MASK, bcp);
		jc->interpreted++;
		w->sp = sender_sp;
		w->fp = fp;
		w->ip = ra;
		w->exact = 0;
		return STEP_OK;
	}
	blob = find_blob(j, pc, jc);
	if (!blob) {
		jc->no_blob++;
		return STEP_STUCK;
	}
	if (!java_read(jc, &complete, sizeof(complete), blob + j->blob_frame_complete) ||
	    !java_read(jc, &size, sizeof(size), blob + j->blob_frame_size) ||
	    !java_read(jc, &code_begin, sizeof(code_begin), blob + j->blob_code_begin) ||
	    (j->nmethod_vtable && !java_read(jc, &vtable, sizeof(vtable), blob)))
		return STEP_STUCK;
	if ((size <= 0 || size > 0xffff) && w->exact && stack_word(sc, w, w->sp, &ra) &&
	    hotspot_owns(j, ra)) {
		/*
		 * Interrupted in a stub that makes no frame (vtable and itable
		 * stubs jump on): its return address, into the compiled code that
		 * called it, is still at SP. A stub that saved FP there instead
		 * holds a stack address, no code.
		 */
		sender_sp = w->sp + 8;
		fp = w->fp;
	} else if (size <= 0 || size > 0xffff) {
		/* a stub without a frame size of its own keeps the FP chain (enter/leave) */
		if (!w->fp || !stack_word(sc, w, w->fp, &fp) || !stack_word(sc, w, w->fp + 8, &ra))
			return STEP_STUCK;
		sender_sp = w->fp + 16;
	} else if (w->exact &&
		   ((complete >= 0 && pc < code_begin + complete) ||
		    (bpf_probe_read_user(&insn, 1, (void *)pc) == 0 && insn == X86_RET))) {
		/* in the prologue before the frame is made, or at the return after it went */
		if (!stack_word(sc, w, w->sp, &ra))
			return STEP_STUCK;
		sender_sp = w->sp + 8;
		fp = w->fp;
	} else {
		/* the frame's size in words, the return address and the caller's FP on top */
		sender_sp = w->sp + size * 8;
		if (!stack_word(sc, w, sender_sp - 8, &ra) ||
		    !stack_word(sc, w, sender_sp - 16, &fp))
			return STEP_STUCK;
	}
	if (vtable && vtable == j->nmethod_vtable &&
	    java_read(jc, &method, sizeof(method), blob + j->nm_method)) {
		store_java(sc, w, LP_JAVA_COMPILED | (method & LP_JAVA_ADDR_MASK), pc);
		jc->compiled++;
	} else {
		jc->stubs++;
	}
	w->sp = sender_sp;
	w->fp = fp;
	w->ip = ra;
	w->exact = 0;
	return STEP_OK;
}
#endif

#endif /* LABELPROF_STACK_HOTSPOT_BPF_H */
