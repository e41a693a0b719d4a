/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Python frames of the sampled thread (docs/design.md section 11): its
 * PyThreadState, found in its interpreter's list by the thread's id and
 * remembered per thread, then its frame chain, innermost first, appended to
 * the user stack (two words a frame: bpf/labelprof.h) after the walk of its
 * native frames. Userspace names the code objects and puts each
 * _PyEval_EvalFrameDefault call's frames in place of its native frame.
 */
#ifndef LABELPROF_STACK_PYTHON_BPF_H
#define LABELPROF_STACK_PYTHON_BPF_H

#include "maps.bpf.h"
#include "arch.h"

struct pywalk_ctx {
	struct lp_scratch *sc;
	const struct lp_py_ref *py;
};

/* The word at offset off of what pw->buf holds. */
static __always_inline __u64 py_word(struct lp_pywalk *w, __u32 off)
{
	return WORD(&w->buf[off & PY_BUF_MASK]);
}

/* Reads the thread state at addr into w->buf; whether it is the sampled thread's. */
static __always_inline bool py_read_tstate(struct lp_pywalk *w, const struct lp_py_ref *py,
					   __u64 addr)
{
	__u32 size = py->tstate_read & PY_BUF_MASK;

	if (!size || bpf_probe_read_user(w->buf, size, (void *)addr)) {
		w->fault = 1;
		return false;
	}
	w->tstate = addr;
	if (py->flags & LP_PY_NATIVE_TID)
		return (__u32)py_word(w, py->tstate_id) == (__u32)w->want;
	return py_word(w, py->tstate_id) == w->want;
}

/* One thread state of the interpreter's list, by bpf_loop. */
static long py_thread_step(__u32 i, struct pywalk_ctx *cx)
{
	struct lp_pywalk *w = &cx->sc->pw;
	__u64 next;

	if (py_read_tstate(w, cx->py, w->tstate)) {
		w->found = 1;
		return 1;
	}
	next = py_word(w, cx->py->tstate_next);
	w->tstate = next;
	return next && !w->fault ? 0 : 1;
}

/* One frame, by bpf_loop: stores it unless it is an entry shim, goes to the previous one. */
static long py_frame_step(__u32 i, struct pywalk_ctx *cx)
{
	struct lp_scratch *sc = cx->sc;
	const struct lp_py_ref *py = cx->py;
	struct lp_pywalk *w = &sc->pw;
	__u32 size = py->frame_read & PY_BUF_MASK, at;
	__u64 code, instr, start, slot, idx, ident[2], name_hash;

	if (!w->frame)
		return 1;
	if (w->n * LP_PY_FRAME_WORDS >= w->room || w->n >= LP_MAX_PY_FRAMES)
		return 1;
	if (!size || bpf_probe_read_user(w->buf, size, (void *)w->frame)) {
		w->fault = 1;
		return 1;
	}
	w->frame = py_word(w, py->frame_previous);
	at = (w->at + w->n * LP_PY_FRAME_WORDS * sizeof(__u64)) & REC_MASK;
	if ((py->flags & LP_PY_SHIM) &&
	    w->buf[py->frame_mark & PY_BUF_MASK] == LP_PY_OWNED_BY_CSTACK) {
		/* the frame stored last is the first its _PyEval_EvalFrameDefault call ran */
		if (w->n)
			*(__u64 *)&sc->rec[(at - LP_PY_FRAME_WORDS * sizeof(__u64)) & REC_MASK] |=
				LP_PY_ENTRY;
		return 0;
	}
	code = py_word(w, py->frame_code);
	if (bpf_probe_read_user(ident, sizeof(ident), (void *)(code + py->code_ident)) ||
	    bpf_probe_read_user(&name_hash, sizeof(name_hash),
				(void *)(ident[0] + LP_PY_STR_HASH))) {
		w->fault = 1;
		return 1;
	}
	if (py->flags & LP_PY_FRAME_OBJECT) {
		idx = *(__s32 *)__builtin_assume_aligned(&w->buf[py->frame_instr & PY_BUF_MASK], 4);
		if ((__s32)idx < 0) /* not started yet */
			idx = 0;
	} else {
		/* 2-byte code units; before the first one: not started yet */
		instr = py_word(w, py->frame_instr);
		start = code + py->code_adaptive;
		idx = instr > start ? (instr - start) / 2 : 0;
	}
	if (idx > LP_PY_INSTR_MAX)
		idx = LP_PY_INSTR_MAX;
	slot = (__u64)LP_PY_TAG << 60 | (__u64)idx << LP_PY_INSTR_SHIFT |
	       ((code >> 3) & LP_PY_CODE_MASK);
	/* 3.10 runs one frame per call; 3.11 marks the first */
	if ((py->flags & LP_PY_FRAME_OBJECT) ||
	    ((py->flags & LP_PY_IS_ENTRY) && w->buf[py->frame_mark & PY_BUF_MASK]))
		slot |= LP_PY_ENTRY;
	*(__u64 *)&sc->rec[at] = slot;
	*(__u64 *)&sc->rec[(at + sizeof(__u64)) & REC_MASK] =
		lp_py_ident(ident[0], ident[1], name_hash);
	w->n++;
	return 0;
}

/*
 * The Python frames of the current thread, as py describes its process, into
 * the record at off (after its native frames); words stored. A function of
 * its own, verified once.
 */
__noinline int python_step(struct lp_scratch *sc, const struct lp_py_ref *py,
			   struct lp_py_counters *pc, __u32 off)
{
	struct pywalk_ctx cx = {.sc = sc, .py = py};
	struct lp_pywalk *w;
	struct lp_sample *s;
	__u32 tid, used;
	__u64 *cached, interp, frame, tstate;

	if (!sc || !py || !pc)
		return 0;
	s = (struct lp_sample *)sc->rec;
	w = &sc->pw;
	tid = s->tid;
	pc->walks++;
	used = s->ustack_len;
	if (used >= LP_MAX_USTACK_WORDS + LP_MAX_PY_WORDS)
		return 0;
	w->room = LP_MAX_USTACK_WORDS + LP_MAX_PY_WORDS - used;
	w->want = py->flags & LP_PY_NATIVE_TID ? tid
					       : arch_thread_pointer(bpf_get_current_task_btf());
	w->fault = 0;
	w->n = 0;
	w->at = off;

	cached = bpf_map_lookup_elem(&py_tstates, &tid);
	if (!cached || !py_read_tstate(w, py, *cached)) {
		w->fault = 0;
		w->found = 0;
		if (bpf_probe_read_user(&interp, sizeof(interp), (void *)py->interp_head) ||
		    !interp ||
		    bpf_probe_read_user(&w->tstate, sizeof(w->tstate),
					(void *)(interp + py->threads_head))) {
			pc->faults++;
			return 0;
		}
		if (w->tstate)
			bpf_loop(LP_PY_MAX_THREADS, py_thread_step, &cx, 0);
		if (!w->found) {
			if (w->fault)
				pc->faults++;
			else
				pc->no_thread++;
			return 0;
		}
		/* from the stack: before 6.3 a map value may not come from a global function's arg
		 */
		tstate = w->tstate;
		bpf_map_update_elem(&py_tstates, &tid, &tstate, BPF_ANY);
	}
	frame = py_word(w, py->tstate_frame);
	if ((py->flags & LP_PY_CFRAME) && frame &&
	    bpf_probe_read_user(&frame, sizeof(frame), (void *)(frame + py->cframe_frame))) {
		pc->faults++;
		return 0;
	}
	w->frame = frame;
	bpf_loop(LP_MAX_PY_FRAMES, py_frame_step, &cx, 0);
	if (w->fault) {
		pc->faults++;
	} else if (w->frame) {
		pc->truncated++;
		s->status |= LP_ST_USTACK_TRUNCATED;
	}
	pc->frames += w->n;
	return w->n * LP_PY_FRAME_WORDS;
}

/* The Python frames of the sampled thread after the record's user stack, which ends at *off. */
static __always_inline void python_frames(struct lp_scratch *sc, const struct lp_py_ref *py,
					  struct lp_sample *s, __u32 *off)
{
	struct lp_py_counters *pc;
	__u32 zero = 0;
	int words;

	pc = bpf_map_lookup_elem(&py_counters, &zero);
	if (!pc)
		return;
	words = python_step(sc, py, pc, *off);
	if (words <= 0 || words > LP_MAX_PY_WORDS)
		return;
	s->ustack_len += words;
	*off += words * sizeof(__u64);
}

#endif /* LABELPROF_STACK_PYTHON_BPF_H */
