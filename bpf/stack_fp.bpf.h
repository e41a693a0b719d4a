/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The user stack by its frame records, as the kernel's walker would (arch.h: x86-64 only). */
#ifndef LABELPROF_STACK_FP_BPF_H
#define LABELPROF_STACK_FP_BPF_H

#include "maps.bpf.h"
#include "arch.h"

#if ARCH_USER_FP_WALK
#define WALK_BATCH 8 /* frame records per bpf_loop step */

/*
 * Frame records, by bpf_loop: the loop of the kernel's x86 walker
 * (perf_callchain_user), which stops at the first read that fails, except
 * that the records are taken from a copy of their page of stack, and that an
 * address whose read must fault is not read. Each step takes up to
 * WALK_BATCH records from the copy; a step that needs another copy starts
 * with it.
 */
static long walk_frames(__u32 i, struct lp_scratch **scp)
{
	struct lp_scratch *sc = *scp;
	struct lp_uwalk *w = &sc->uw;
	__u64 fp = w->fp, lo = w->lo, rel, len;
	__u32 n = w->n, have = w->len, k;
	long ret = 0;

	for (k = 0; k < WALK_BATCH; k++) {
		if (n >= ustack_words || n >= LP_MAX_USTACK_WORDS) {
			ret = 1;
			break;
		}
		rel = fp - lo;
		if (fp < lo || rel > have || have - rel < 16) {
			if (k)
				break;
			if (arch_user_unmapped(fp))
				return 1;
			len = 16;
			if (fp >= w->sp && fp - w->sp < USTACK_NEAR) {
				len = USTACK_CHUNK - (fp & (USTACK_CHUNK - 1));
				if (len < 16) /* the record straddles two pages */
					len = 16;
			}
			if (bpf_probe_read_user(sc->stack, len, (void *)fp))
				return 1;
			lo = fp;
			have = len;
			rel = 0;
		}
		rel &= USTACK_CHUNK - 1; /* no-op: rel <= have - 16 */
		/* a frame record: { next frame record, return address } */
		WORD(&sc->rec[(w->at + n * sizeof(__u64)) & REC_MASK]) =
			WORD(&sc->stack[rel + sizeof(__u64)]);
		fp = WORD(&sc->stack[rel]);
		n++;
	}
	w->fp = fp;
	w->lo = lo;
	w->len = have;
	w->n = n;
	return ret;
}

/* The user stack from u into the record at off, as bpf_get_stack would; bytes written. */
static __always_inline long walk_user_stack(struct lp_scratch *sc, __u32 off,
					    const struct arch_user_regs *u)
{
	struct lp_uwalk *w = &sc->uw;

	*(__u64 *)&sc->rec[off & REC_MASK] = u->ip;
	w->fp = u->fp;
	w->sp = u->sp;
	w->lo = 0;
	w->len = 0;
	w->n = 1;
	w->at = off;
	bpf_loop(LP_MAX_USTACK_WORDS, walk_frames, &sc, 0);
	return w->n * sizeof(__u64);
}
#endif

#endif /* LABELPROF_STACK_FP_BPF_H */
