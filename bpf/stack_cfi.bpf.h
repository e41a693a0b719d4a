/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user stack by the CFI rows userspace derived for the process's objects
 * (docs/design.md section 9), frame pointers where an object has none.
 */
#ifndef LABELPROF_STACK_CFI_BPF_H
#define LABELPROF_STACK_CFI_BPF_H

#include "maps.bpf.h"
#include "arch.h"

#if ARCH_USER_CFI_WALK
/* Steps of the bounded binary searches: 2^steps entries at most. */
#define MAPS_SEARCH_STEPS  8  /* LP_UNWIND_MAX_MAPS */
#define FENCE_SEARCH_STEPS 24 /* pages of one object */
#define PAGE_SEARCH_STEPS  9  /* LP_UNWIND_PAGE_ROWS */

struct cwalk_ctx {
	struct lp_scratch *sc;
	struct lp_unwind_proc *proc;
	struct lp_unwind_counters *uc;
	const struct lp_java_ref *java; /* the process's JVM; NULL: none */
	struct lp_java_counters *jc;
	const struct lp_v8_ref *v8; /* the process's V8; NULL: none */
	struct lp_v8_counters *vc;
};

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
	if (!lo || lo > LP_UNWIND_MAX_MAPS)
		return NULL;
	m = &proc->maps[(lo - 1) & (LP_UNWIND_MAX_MAPS - 1)];
	return ip < m->end ? m : NULL;
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
 * The word of user stack at addr, through the copy in sc->stack: a read
 * near the interrupted stack pointer copies the rest of its page, so that
 * the frames above are mostly read from the copy (see USTACK_CHUNK).
 * False where the read fails.
 */
static __always_inline bool stack_word(struct lp_scratch *sc, struct lp_cwalk *w, __u64 addr,
				       __u64 *word)
{
	__u64 rel = addr - w->slo, len;

	if (addr < w->slo || rel > w->slen || w->slen - rel < sizeof(__u64)) {
		if (arch_user_unmapped(addr))
			return false;
		len = sizeof(__u64);
		if (addr >= w->sp0 && addr - w->sp0 < USTACK_NEAR) {
			len = USTACK_CHUNK - (addr & (USTACK_CHUNK - 1));
			if (len < sizeof(__u64)) /* the word straddles two pages */
				len = sizeof(__u64);
		}
		if (bpf_probe_read_user(sc->stack, len, (void *)addr))
			return false;
		w->slo = addr;
		w->slen = len;
		rel = 0;
	}
	rel &= USTACK_CHUNK - 1; /* no-op: rel <= slen - 8 */
	*word = WORD(&sc->stack[rel]);
	return true;
}

/* One frame-pointer step: from the frame record at fp; false at the chain's end or a fault. */
static __always_inline bool fp_step(struct lp_scratch *sc, struct lp_cwalk *w)
{
	__u64 next, ra;

	if (!w->fp || !stack_word(sc, w, w->fp, &next) || !stack_word(sc, w, w->fp + 8, &ra))
		return false;
	w->sp = w->fp + 16;
	w->sp_lost = !ARCH_FP_STEP_SP;
	w->fp = next;
	w->ip = arch_return_address(ra);
	w->status |= LP_ST_UNWIND_FP;
	return true;
}

/* The result of one CFI step. */
enum cfi_step {
	STEP_OK,
	STEP_END,   /* the outermost frame: a whole stack */
	STEP_STUCK, /* no way further: a truncated stack */
	STEP_FP,    /* no CFI here: frame pointers, if the mode allows */
};

/*
 * The frame at w->n - 1 (stored as its pc) becomes a runtime's two-word
 * frame; past the depth limit the first word alone is kept.
 */
static __always_inline void store_pair(struct lp_scratch *sc, struct lp_cwalk *w, __u64 first,
				       __u64 second)
{
	__u32 at = w->at + (w->n - 1) * sizeof(__u64);

	*(__u64 *)&sc->rec[at & REC_MASK] = first;
	if (w->n >= stack_depth || w->n >= LP_MAX_STACK_DEPTH)
		return;
	*(__u64 *)&sc->rec[(at + sizeof(__u64)) & REC_MASK] = second;
	w->n++;
}

/* Java and JavaScript frames step between the CFI steps, with the same reads of the stack */
#include "stack_hotspot.bpf.h"
#include "stack_v8.bpf.h"

static __always_inline enum cfi_step cfi_step(struct lp_scratch *sc, struct lp_cwalk *w,
					      struct lp_unwind_proc *proc,
					      struct lp_unwind_counters *uc)
{
	__u64 pc_ip = w->exact ? w->ip : w->ip - 1, cfa, ra, regs[7];
	struct lp_unwind_mapping *m;
	struct lp_unwind_object *obj;
	struct lp_unwind_row row;
	__u32 rule, key, pc;
	__s32 fp_off;

	if (pc_ip < w->map.start || pc_ip >= w->map.end) {
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

/* One frame of the CFI walk, by bpf_loop: unwinds the frame at w->ip and stores its caller. */
static long walk_cfi_frame(__u32 i, struct cwalk_ctx *cx)
{
	struct lp_scratch *sc = cx->sc;
	struct lp_cwalk *w = &sc->cw;
	enum cfi_step r;

	if (w->n >= stack_depth || w->n >= LP_MAX_STACK_DEPTH) {
		w->status |= LP_ST_USTACK_TRUNCATED;
		return 1;
	}
#if ARCH_JAVA_WALK
	if (cx->java && cx->jc && w->ip >= cx->java->cc_low && w->ip < cx->java->cc_high)
		r = java_step(sc, w, cx->java, cx->jc);
	else
#endif
		r = cfi_step(sc, w, cx->proc, cx->uc);
	if (r == STEP_FP) {
		if (cx->v8 && cx->vc && unwind_mode != LP_UNWIND_CFI)
			v8_frame(sc, w, cx->v8, cx->vc);
		if (unwind_mode == LP_UNWIND_CFI) {
			r = STEP_STUCK;
		} else if (fp_step(sc, w)) {
			w->exact = 0;
			cx->uc->fp_frames++;
			r = STEP_OK;
		} else if (!w->fp && w->n > 1) {
			/*
			 * The frame-pointer chain ends as the FP walk's does; not at
			 * the leaf, whose code may use FP as any other register.
			 */
			r = STEP_END;
		} else {
			r = STEP_STUCK;
		}
	}
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
 * where an object has none, the JVM's layouts in its code cache, by the
 * recipe r if any) into the record at off; bytes written. Status
 * bits for the sample go to *status.
 */
static __always_inline long walk_user_cfi(struct lp_scratch *sc, __u32 off,
					  const struct arch_user_regs *u,
					  struct lp_unwind_proc *proc, const struct lp_recipe *r,
					  __u32 *status)
{
	struct lp_cwalk *w = &sc->cw;
	struct cwalk_ctx cx = {.sc = sc, .proc = proc};
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
	w->row_hi = 0;
	w->slen = 0;
	w->sp0 = u->sp;
	w->sp_lost = 0;
	bpf_loop(LP_MAX_STACK_DEPTH, walk_cfi_frame, &cx, 0);
	/* a stack that is its leaf alone was still the CFI walker's */
	if (!(w->status & (LP_ST_UNWIND_CFI | LP_ST_UNWIND_FP)))
		w->status |= LP_ST_UNWIND_CFI;
	if (w->status & LP_ST_USTACK_TRUNCATED)
		cx.uc->truncated++;
	*status |= w->status;
	return w->n * sizeof(__u64);
}
#endif

#endif /* LABELPROF_STACK_CFI_BPF_H */
