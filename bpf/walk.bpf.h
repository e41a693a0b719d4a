/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every walker of the user stack shares (docs/design.md section 9): the
 * walk's state (struct lp_cwalk, in the scratch), the result of one step, the
 * reads of the stack through its copy, the frame-pointer step and how a
 * runtime's frame is stored. Each walker (stack_<name>.bpf.h) includes this
 * header alone; the dispatcher (stack_walk.bpf.h) includes the walkers.
 */
#ifndef LABELPROF_WALK_BPF_H
#define LABELPROF_WALK_BPF_H

#include "maps.bpf.h"
#include "arch.h"

/* The result of one step of a walker. */
enum walk_step {
	STEP_OK,
	STEP_END,   /* the outermost frame: a whole stack */
	STEP_STUCK, /* no way further: a truncated stack */
	STEP_FP,    /* no CFI here: frame pointers, if the mode allows */
};

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

/* Whether the walk has room for no more words. */
static __always_inline bool walk_full(const struct lp_cwalk *w)
{
	return w->n >= ustack_words || w->n >= LP_MAX_USTACK_WORDS;
}

/*
 * The frame at w->n - 1 (stored as its pc) becomes a runtime's two-word
 * frame; past the depth limit the first word alone is kept.
 */
static __always_inline void store_pair(struct lp_scratch *sc, struct lp_cwalk *w, __u64 first,
				       __u64 second)
{
	__u32 at = w->at + (w->n - 1) * sizeof(__u64);

	*(__u64 *)&sc->rec[at & REC_MASK] = first;
	if (walk_full(w))
		return;
	*(__u64 *)&sc->rec[(at + sizeof(__u64)) & REC_MASK] = second;
	w->n++;
}

#endif /* LABELPROF_WALK_BPF_H */
