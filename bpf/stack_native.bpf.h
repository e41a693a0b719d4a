/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Native frames: a step by the CFI rows userspace derived for the process's
 * objects (docs/design.md section 9); STEP_FP where an object has none.
 */
#ifndef LABELPROF_STACK_NATIVE_BPF_H
#define LABELPROF_STACK_NATIVE_BPF_H

#include "walk.bpf.h"

#if ARCH_USER_CFI_WALK
/* Steps of the bounded binary searches: 2^steps entries at most. */
#define MAPS_SEARCH_STEPS  8  /* LP_UNWIND_MAX_MAPS */
#define FENCE_SEARCH_STEPS 24 /* pages of one object */
#define PAGE_SEARCH_STEPS  9  /* LP_UNWIND_PAGE_ROWS */

/* Reads a search bound back from map memory (struct lp_cwalk). */
#define SEARCH_BOUND(x) (*(volatile __u32 *)&(x))

/* The mapping of proc holding ip, or NULL. */
static __always_inline struct lp_unwind_mapping *find_mapping(struct lp_cwalk *w,
							      struct lp_unwind_proc *proc, __u64 ip)
{
	struct lp_unwind_mapping *m;
	__u32 lo, hi, mid, k;

	/* the first mapping starting above ip */
	SEARCH_BOUND(w->lo) = 0;
	SEARCH_BOUND(w->hi) = proc->count;
	for (k = 0; k < MAPS_SEARCH_STEPS + 1; k++) {
		lo = SEARCH_BOUND(w->lo);
		hi = SEARCH_BOUND(w->hi);
		if (lo >= hi || hi > LP_UNWIND_MAX_MAPS)
			break;
		mid = (lo + hi) / 2;
		if (proc->maps[mid & (LP_UNWIND_MAX_MAPS - 1)].start <= ip)
			SEARCH_BOUND(w->lo) = mid + 1;
		else
			SEARCH_BOUND(w->hi) = mid;
	}
	lo = SEARCH_BOUND(w->lo);
	if (lo > LP_UNWIND_MAX_MAPS)
		return NULL;
	m = &proc->maps[(lo - 1) & (LP_UNWIND_MAX_MAPS - 1)];
	if (lo && ip < m->end)
		return m;
	/* ip in no mapping: the gap around it, which the next frames are often in too */
	w->gap_lo = lo ? m->end : 0;
	w->gap_hi = lo < proc->count ? proc->maps[lo & (LP_UNWIND_MAX_MAPS - 1)].start : ~0ull;
	return NULL;
}

/* The first pc of global page g, or LP_UNWIND_PC_PAD. */
static __always_inline __u32 fence(__u32 g)
{
	__u32 *f = bpf_map_lookup_elem(&unwind_fences, &g);

	return f ? *f : LP_UNWIND_PC_PAD;
}

/*
 * The row of the walk's object holding pc, copied to *row, and the first pc
 * past it in *hi (the rows in between have the same rule); false if none.
 */
static __always_inline bool find_row(struct lp_cwalk *w, __u32 pc, struct lp_unwind_row *row,
				     __u32 *hi_pc)
{
	__u32 lo, hi, mid, k, g, shard, slot, page_idx;
	struct lp_unwind_page *page;
	void *inner;

	/* the last page whose first pc <= pc */
	SEARCH_BOUND(w->lo) = 0;
	SEARCH_BOUND(w->hi) = w->pages;
	for (k = 0; k < FENCE_SEARCH_STEPS + 1; k++) {
		lo = SEARCH_BOUND(w->lo);
		hi = SEARCH_BOUND(w->hi);
		if (lo >= hi)
			break;
		mid = (lo + hi) / 2;
		if (fence(w->first_page + mid) <= pc)
			SEARCH_BOUND(w->lo) = mid + 1;
		else
			SEARCH_BOUND(w->hi) = mid;
	}
	page_idx = SEARCH_BOUND(w->lo);
	if (!page_idx)
		return false;
	g = w->first_page + page_idx - 1;
	shard = g / LP_UNWIND_SHARD_PAGES;
	slot = g % LP_UNWIND_SHARD_PAGES;
	inner = bpf_map_lookup_elem(&unwind_shards, &shard);
	if (!inner)
		return false;
	page = bpf_map_lookup_elem(inner, &slot);
	if (!page)
		return false;
	/* the last row whose pc <= pc: row 0 is, by the fence */
	SEARCH_BOUND(w->lo) = 1;
	SEARCH_BOUND(w->hi) = LP_UNWIND_PAGE_ROWS;
	for (k = 0; k < PAGE_SEARCH_STEPS + 1; k++) {
		lo = SEARCH_BOUND(w->lo);
		hi = SEARCH_BOUND(w->hi);
		if (lo >= hi)
			break;
		mid = (lo + hi) / 2;
		if (page->rows[mid & (LP_UNWIND_PAGE_ROWS - 1)].pc <= pc)
			SEARCH_BOUND(w->lo) = mid + 1;
		else
			SEARCH_BOUND(w->hi) = mid;
	}
	lo = SEARCH_BOUND(w->lo);
	*row = page->rows[(lo - 1) & (LP_UNWIND_PAGE_ROWS - 1)];
	if (lo < LP_UNWIND_PAGE_ROWS)
		*hi_pc = page->rows[lo & (LP_UNWIND_PAGE_ROWS - 1)].pc;
	else /* the next page's first row; the object's last row covers all above it */
		*hi_pc = page_idx < w->pages ? fence(g + 1) : LP_UNWIND_PC_PAD;
	return true;
}

/*
 * The step of a native frame, by the rows of proc's objects: the caller's
 * registers into sc->cw. A function of its own, verified once.
 */
__noinline int native_step(struct lp_scratch *sc, struct lp_unwind_proc *proc,
			   struct lp_unwind_counters *uc)
{
	struct lp_cwalk *w;
	__u64 pc_ip, cfa, ra, regs[7];
	struct lp_unwind_mapping *m;
	struct lp_unwind_object *obj;
	struct lp_unwind_row row;
	__u32 rule, key, pc;
	__s32 fp_off;

	if (!sc || !proc || !uc)
		return STEP_STUCK;
	w = &sc->cw;
	pc_ip = w->exact ? w->ip : w->ip - 1;
	if (pc_ip < w->map.start || pc_ip >= w->map.end) {
		/* JIT code: a run of frames between the mappings with CFI */
		if (pc_ip >= w->gap_lo && pc_ip < w->gap_hi)
			return STEP_FP;
		m = find_mapping(w, proc, pc_ip);
		if (!m)
			return STEP_FP;
		w->map = *m;
	}
	if (w->map.object != w->object) {
		key = w->map.object;
		obj = bpf_map_lookup_elem(&unwind_objects, &key);
		if (!obj) {
			uc->misses++;
			return STEP_STUCK;
		}
		w->object = key;
		w->first_page = obj->first_page;
		w->pages = obj->pages;
		w->row_hi = 0;
	}
	pc = pc_ip - w->map.bias;
	if (pc >= w->row_lo && pc < w->row_hi) {
		row = w->row;
	} else {
		/* code before the first FDE or between FDEs has no CFI at all */
		if (!find_row(w, pc, &row, &w->row_hi))
			return STEP_FP;
		w->row_lo = row.pc;
		w->row = row;
	}
	rule = row.cfa & LP_CFA_RULE_MASK;
	cfa = (row.cfa >> LP_CFA_RULE_BITS) * 8;
	/* rules that need this frame's SP, which a frame-pointer step may not have given */
	if (!ARCH_FP_STEP_SP && w->sp_lost &&
	    (rule == LP_CFA_SP || rule == LP_CFA_PLT || rule == LP_CFA_SIGNAL))
		return STEP_STUCK;
	switch (rule) {
	case LP_CFA_SP:
		cfa += w->sp;
		break;
	case LP_CFA_FP:
		cfa += w->fp;
		break;
	case LP_CFA_PLT:
		cfa += w->sp + arch_plt_extra(w->ip);
		break;
	case LP_CFA_FP_DEREF:
		/*
		 * gcc's realignment saved the CFA below the frame record at FP (the
		 * caller's FP), read in that order: one copy of the stack holds both.
		 * A CFA that is not above SP belongs to no frame of this stack.
		 */
		fp_off = (__s16)row.cfa >> LP_CFA_RULE_BITS;
		if (!stack_word(sc, w, w->fp + fp_off * 8, &cfa) || cfa <= w->sp ||
		    !stack_word(sc, w, w->fp, &w->fp))
			return STEP_STUCK;
		break;
	case LP_CFA_SIGNAL:
		/* the interrupted registers, saved by the kernel */
		if (bpf_probe_read_user(regs, sizeof(regs), (void *)(w->sp + ARCH_SIGFRAME_REGS)))
			return STEP_STUCK;
		w->fp = regs[0];
		w->sp = regs[ARCH_SIGFRAME_SP];
		w->ip = regs[ARCH_SIGFRAME_IP];
		w->sp_lost = 0;
#ifdef ARCH_SIGFRAME_LR
		w->lr = arch_return_address(regs[ARCH_SIGFRAME_LR]);
#endif
		w->exact = 1;
		w->status |= LP_ST_UNWIND_CFI;
		uc->cfi_frames++;
		return STEP_OK;
	case LP_CFA_END:
		return STEP_END;
	case LP_CFA_NO_CFI:
		return STEP_FP;
	default:
		uc->no_rule++;
		return STEP_STUCK;
	}
	/* FP's slot first: it lies below the return address, in the same copy */
	fp_off = row.regs & ~LP_RA_RULE_MASK;
	switch (row.regs & LP_RA_RULE_MASK) {
	case LP_RA_CFA_M8:
		if (fp_off && !stack_word(sc, w, cfa + fp_off, &w->fp))
			return STEP_STUCK;
		if (!stack_word(sc, w, cfa - 8, &ra))
			return STEP_STUCK;
		break;
	case LP_RA_LR:
		/* before the prologue saved it: only where the frame was interrupted */
		if (!w->exact)
			return STEP_STUCK;
		if (fp_off && !stack_word(sc, w, cfa + fp_off, &w->fp))
			return STEP_STUCK;
		ra = w->lr;
		break;
	case LP_RA_FP_P8:
		if (!stack_word(sc, w, cfa + fp_off, &w->fp) ||
		    !stack_word(sc, w, cfa + fp_off + 8, &ra))
			return STEP_STUCK;
		break;
	case LP_RA_AT: /* the offset is the return address's, FP was not saved */
		if (!stack_word(sc, w, cfa + fp_off, &ra))
			return STEP_STUCK;
		break;
	default:
		uc->no_rule++;
		return STEP_STUCK;
	}
	w->sp = cfa;
	w->sp_lost = 0;
	w->ip = arch_return_address(ra);
	w->exact = 0;
	w->status |= LP_ST_UNWIND_CFI;
	uc->cfi_frames++;
	return STEP_OK;
}

#endif

#endif /* LABELPROF_STACK_NATIVE_BPF_H */
