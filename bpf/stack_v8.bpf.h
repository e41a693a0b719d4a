/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * V8 frames (docs/design.md section 13): V8's code has no CFI and keeps the
 * frame-pointer chain, so the dispatcher hands this walker the frames the
 * native step found no CFI for, before their frame-pointer step. A frame
 * whose function slot holds a JSFunction (checked by its map's instance
 * type, and its SharedFunctionInfo's) is stored as two words in place of its
 * pc (LP_JS_TAG). Userspace names it.
 */
#ifndef LABELPROF_STACK_V8_BPF_H
#define LABELPROF_STACK_V8_BPF_H

#include "walk.bpf.h"
#include "v8.bpf.h"

/* The instance type of the heap object that tagged points to into *type; false if none. */
static __always_inline bool frame_object_type(const struct lp_v8_ref *v, __u64 tagged, __u16 *type,
					      struct lp_v8_counters *vc)
{
	__u64 map;

	if (!V8_IS_HEAP(tagged) || arch_user_unmapped(tagged))
		return false;
	if (bpf_probe_read_user(&map, sizeof(map), (void *)(tagged - V8_HEAP_TAG)) ||
	    !V8_IS_HEAP(map) ||
	    bpf_probe_read_user(type, sizeof(*type),
				(void *)(map - V8_HEAP_TAG + v->instance_type))) {
		vc->faults++;
		return false;
	}
	return true;
}

/*
 * The frame at sc->cw.n - 1 (its pc), run by code without CFI at FP
 * sc->cw.fp: becomes a JavaScript frame if its slots say it is one, else
 * stays its pc. STEP_FP either way: the frame-pointer step follows. A
 * function of its own, verified once.
 */
__noinline int v8_step(struct lp_scratch *sc, const struct lp_v8_ref *v, struct lp_v8_counters *vc)
{
	__u64 marker, function, sfi, name;
	struct lp_cwalk *w;
	__u16 type;

	if (!sc || !v || !vc)
		return STEP_FP;
	w = &sc->cw;
	if (!w->fp || !stack_word(sc, w, w->fp + v->fp_marker, &marker))
		return STEP_FP;
	if (!V8_IS_HEAP(marker)) {
		/* a Smi: the marker of a typed frame, which runs no JavaScript function */
		vc->typed++;
		return STEP_FP;
	}
	if (!stack_word(sc, w, w->fp + v->fp_function, &function) ||
	    !frame_object_type(v, function, &type, vc) || type < v->js_function_first ||
	    type > v->js_function_last) {
		vc->not_js++;
		return STEP_FP;
	}
	if (bpf_probe_read_user(&sfi, sizeof(sfi), (void *)(function - V8_HEAP_TAG + v->shared)) ||
	    !frame_object_type(v, sfi, &type, vc) || type != v->sfi_type ||
	    bpf_probe_read_user(&name, sizeof(name), (void *)(sfi - V8_HEAP_TAG + v->sfi_name))) {
		vc->not_js++;
		return STEP_FP;
	}
	store_pair(sc, w, LP_JS_TAG << 60 | ((sfi - V8_HEAP_TAG) & LP_JS_ADDR_MASK),
		   LP_JS_TAG << 60 | LP_JS_SECOND | (name & LP_JS_ADDR_MASK));
	vc->js++;
	return STEP_FP;
}

#endif /* LABELPROF_STACK_V8_BPF_H */
