/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The per-CPU scratch a sample is assembled in (map scratch, maps.bpf.h): the
 * record itself, the copies of user memory it is read from, and the state of
 * each bpf_loop walk. Its parts are laid out here together since the map
 * value is one struct.
 */
#ifndef LABELPROF_SCRATCH_BPF_H
#define LABELPROF_SCRATCH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "labelprof.h"

/* The Custom Labels ABI's strings and labels, in the labelled process's memory. */
struct lp_string_abi {
	__u64 len;
	__u64 buf;
};

struct lp_label_abi {
	struct lp_string_abi key;
	struct lp_string_abi value;
};

/*
 * A label set's labels are read with its header when they start at most
 * LSET_NEAR bytes after it; its strings are read at once when they lie
 * within LP_LABEL_WINDOW bytes and the window holds at most LP_LABEL_SLACK
 * bytes more than twice theirs: copying unused bytes (libcustomlabels keeps
 * a label in a slot of 384 bytes) costs more than a read per label.
 */
#define LSET_NEAR	64
#define LSET_MASK	4095
#define LP_LABEL_WINDOW 4096
#define LP_LABEL_SLACK	256

/*
 * A page of user stack is read at once (a read never touches a page the
 * kernel's walker would not), when the frame record is this close above the
 * interrupted stack pointer; elsewhere a frame record is read by itself.
 */
#define USTACK_CHUNK 4096
#define USTACK_NEAR  (8 << 20)

/* The state of a user stack walk (walk_user_stack). */
struct lp_uwalk {
	__u64 fp;  /* the next frame record */
	__u64 sp;  /* the interrupted user stack pointer */
	__u64 lo;  /* the user address stack[0] was read from */
	__u32 len; /* bytes of stack[] read from lo */
	__u32 n;   /* return addresses stored */
	__u32 at;  /* where in rec they go */
	__u32 pad;
};

/* The state of a walk of a Go labels map (read_go_labels). */
struct lp_gowalk {
	__u64 buckets;	/* the bucket array */
	__u64 next;	/* the overflow bucket to read next; 0: the next of the array */
	__u32 nbuckets; /* 1 << B */
	__u32 idx;	/* buckets of the array read */
	__u32 n;	/* labels gathered into sc->labels */
	__u32 full;	/* a slot was left out: max_labels reached */
	__u32 fault;	/* a bucket could not be read */
	__u32 pad;
};

/* The state of the user stack walk of the dispatcher (walk_user_cfi) and its steps. */
struct lp_cwalk {
	__u64 ip;     /* the frame's instruction pointer */
	__u64 sp;     /* its stack pointer */
	__u64 fp;     /* its frame pointer */
	__u64 lr;     /* its link register (aarch64), where the frame was interrupted */
	__u32 n;      /* return addresses stored */
	__u32 at;     /* where in rec they go */
	__u32 status; /* LP_ST_UNWIND_* and LP_ST_USTACK_TRUNCATED */
	__u32 exact;  /* ip is where the frame was interrupted, not a return address */
	__u32 object; /* the object of the last row lookup, and its pages */
	__u32 first_page;
	__u32 pages;
	/*
	 * The bounds of a binary search, kept in map memory: the verifier then
	 * sees unknown bounds at every step, not a range per path.
	 */
	__u32 lo;
	__u32 hi;
	/*
	 * Consecutive frames are mostly in the same mapping, often at the same
	 * row (recursion, loops of calls): the last mapping and the pcs of the
	 * last row spare the searches. row_hi 0: no row.
	 */
	__u32 row_lo;
	__u32 row_hi;
	struct lp_unwind_row row;
	struct lp_unwind_mapping map; /* end 0: none */
	/* the last pc in no mapping: the range between mappings it lies in; hi 0: none */
	__u64 gap_lo;
	__u64 gap_hi;
	/* the stack copied to sc->stack: from the user address slo, slen bytes */
	__u64 slo;
	__u32 slen;
	__u32 sp_lost; /* sp is only a bound: a frame-pointer step's (ARCH_FP_STEP_SP) */
	__u64 sp0;     /* the interrupted stack pointer */
};

/* The state of a Python frame walk (python_step). */
#define PY_BUF_MASK 255
struct lp_pywalk {
	__u64 want;   /* the sampled thread's id, as its thread state holds it */
	__u64 tstate; /* the thread state looked at */
	__u64 frame;  /* the next frame */
	__u32 n;      /* Python frames stored */
	__u32 at;     /* where in rec they go */
	__u32 room;   /* frames the record has room for */
	__u32 fault;
	__u32 found; /* the list walk found the thread's state (in buf) */
	__u32 pad;
	/* a thread state or a frame, as read; the slack keeps masked words inside */
	__u8 buf[PY_BUF_MASK + 1 + sizeof(__u64)];
};

/*
 * The last recipe lookup of a CPU: consecutive samples mostly come from the
 * same process, whose recipe needs no hash lookups then.
 */
struct lp_rcache {
	__u64 gen; /* recipes_gen + 1 when filled; 0: empty */
	__u32 tgid;
	__u32 found; /* recipe is tgid's; 0: tgid has none, or one from before its last exec */
	struct lp_recipe recipe;
};

/* The last pid filter lookup of a CPU (like struct lp_rcache). */
struct lp_fcache {
	__u64 gen; /* pid_filter_gen + 1 when filled; 0: empty */
	__u32 tgid;
	__u32 pass;
};

#define OTEL_BUF_MASK 1023
_Static_assert(LP_OTEL_RECORD_MAX <= OTEL_BUF_MASK, "an OTel record fits the mask");

/*
 * One per CPU (indexed by CPU: a perf-event program cannot nest on its CPU).
 * A sample is assembled in rec and copied out with only its used bytes.
 */
struct lp_scratch {
	__u8 rec[LP_SCRATCH_SIZE];
	struct lp_label_abi labels[LP_MAX_LABELS];
	/* a label set: its header and labels, or its labels alone (copy_labels) */
	__u8 set[LSET_MASK + 1 + sizeof(struct lp_label_abi)];
	/* the strings of a label set, when they lie close together */
	__u8 win[LP_LABEL_WINDOW + sizeof(__u64)];
	__u8 stack[USTACK_CHUNK + 16];
	/*
	 * The state of the bpf_loop walks: the end of the record while labels
	 * are copied, the user stack walk. Kept in map memory, not on the
	 * stack: the verifier then sees the same bounded unknowns at every
	 * iteration instead of one precise range per iteration.
	 */
	struct lp_uwalk uw;
	__u32 off;
	/* the bytes of the strings of a label set that copy_labels will copy */
	__u64 kept;
	/* The OTel thread context walk: the next entry of attrs_data in otel[], its end. */
	__u32 otel_pos;
	__u32 otel_end;
	__u32 otel_cut;	 /* the record is larger than what was read of it */
	__u32 otel_most; /* label_count the attributes stop at: max_labels plus the ids */
	/* An OTel thread context record; the slack keeps masked reads of an entry inside. */
	__u8 otel[OTEL_BUF_MASK + 1 + 256];
	/* per key index, where its last entry in otel[] is (the one that counts) */
	__u16 otel_last[256];
	struct lp_rcache rc;
	struct lp_fcache fc;
	struct lp_gowalk gw;
	__u8 go_bucket[LP_GO_BUCKET_SIZE];
	struct lp_cwalk cw;
	struct lp_pywalk pw;
};

#define REC_MASK (LP_RECORD_MAX - 1)

/*
 * The word at p, an address in map memory at any offset: without the
 * alignment promise, a word at a variable offset of a byte array is split
 * into 8 byte loads by the BPF backend. The verifier allows unaligned access
 * on x86 and arm64 (efficient unaligned access).
 */
#define WORD(p) (*(__u64 *)__builtin_assume_aligned((p), sizeof(__u64)))

/*
 * v within [lo, hi], checked on the register that is used next: a helper's
 * length bounded only on another copy of it (clang keeps several, or an equal
 * value such as a label's own length), or before a 32-bit spill and reload,
 * is unbounded to the verifiers of 6.1 and 6.12. barrier_var keeps clang from
 * dropping a check it can prove redundant.
 */
static __always_inline __u64 bounded(__u64 v, __u64 lo, __u64 hi)
{
	barrier_var(v);
	if (v > hi)
		v = hi;
	if (v < lo)
		v = lo;
	return v;
}

static __always_inline void put_u16(__u8 *p, __u16 v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

/* Starts a sample record in sc: no stacks, no labels, status 0. */
static __always_inline struct lp_sample *sample_init(struct lp_scratch *sc, __u32 tgid, __u32 tid,
						     __u32 cpu)
{
	struct lp_sample *s = (struct lp_sample *)sc->rec;

	s->hdr.type = LP_EVENT_SAMPLE;
	s->ktime_ns = bpf_ktime_get_ns();
	s->tgid = tgid;
	s->tid = tid;
	s->cpu = cpu;
	s->status = 0;
	s->kstack_len = 0;
	s->ustack_len = 0;
	s->label_count = 0;
	s->label_bytes = 0;
	return s;
}

#endif /* LABELPROF_SCRATCH_BPF_H */
