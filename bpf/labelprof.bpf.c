// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * labelprof's sampler: on every cpu-clock tick, read the interrupted thread's
 * custom labels from its TLS (following the per-process recipe userspace
 * computed) and emit them with the kernel and user stacks.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "labelprof.h"
#include "arch.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Fixed at load time (rodata): the verifier sees them as constants. */
const volatile __u32 max_labels = LP_DEFAULT_MAX_LABELS;
const volatile __u32 max_key_len = LP_DEFAULT_MAX_KEY_LEN;
const volatile __u32 max_value_len = LP_DEFAULT_MAX_VALUE_LEN;
const volatile bool read_labels = true;
const volatile bool kernel_stacks = true;
const volatile bool user_stacks = true;
const volatile __u32 stack_depth = LP_MAX_STACK_DEPTH;
const volatile __u32 filter_mode = LP_FILTER_ALL;
const volatile bool follow_children = false;
const volatile __u64 hint_interval_ns = 1000000000ULL;
const volatile __u64 map_hint_interval_ns = 10000000ULL;
const volatile __u32 unwind_mode = LP_UNWIND_FP; /* enum lp_unwind_mode */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); /* resized by userspace */
	__type(key, __u32);
	__type(value, struct lp_recipe);
} recipes SEC(".maps");

/*
 * Bumped after every change of recipes, and of execs for a tgid in recipes,
 * by this program and by userspace (sampler.c): a CPU keeps the recipe it
 * last looked up (struct lp_rcache) while this stays the same.
 */
__u64 recipes_gen;

/* Exec count per tgid: a recipe computed before the latest exec is stale. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} execs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

/* Bumped after every change of pid_filter, here and by userspace (see recipes_gen). */
__u64 pid_filter_gen;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

/* When a tgid without a recipe was last reported to userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} hinted SEC(".maps");

/* When a tgid last reported that its code mappings changed (LP_EVENT_EXEC_MAP). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} mapped SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by userspace */
} events SEC(".maps");

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
};

/* The state of a CFI walk of the user stack (walk_user_cfi). */
struct lp_cwalk {
	__u64 ip;     /* the frame's instruction pointer */
	__u64 sp;     /* its stack pointer */
	__u64 fp;     /* its frame pointer */
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
	/* the stack copied to sc->stack: from the user address slo, slen bytes */
	__u64 slo;
	__u32 slen;
	__u32 pad;
	__u64 sp0; /* the interrupted stack pointer */
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
	/* An OTel thread context record; the slack keeps masked reads of an entry inside. */
	__u8 otel[OTEL_BUF_MASK + 1 + 256];
	struct lp_rcache rc;
	struct lp_fcache fc;
	struct lp_gowalk gw;
	__u8 go_bucket[LP_GO_BUCKET_SIZE];
	struct lp_cwalk cw;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized to the number of possible CPUs */
	__type(key, __u32);
	__type(value, struct lp_scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_counters);
} counters SEC(".maps");

/*
 * CFI unwind tables (docs/design.md section 9): pages of rows in shards
 * created by userspace, every page's first pc, objects as ranges of pages,
 * and per process its text mappings. Sized at load by userspace.
 */
struct unwind_shard {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LP_UNWIND_SHARD_PAGES);
	/* sizes, not types: the value's BTF would be a declaration only */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct lp_unwind_page));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct unwind_shard);
} unwind_shards SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} unwind_fences SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_unwind_object);
} unwind_objects SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_unwind_proc);
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lp_unwind_counters);
} unwind_counters SEC(".maps");

/* Whether the current task, of tgid, is one to sample; sc: this CPU's scratch, if at hand. */
static __always_inline bool passes_filter(__u32 tgid, struct lp_scratch *sc)
{
	struct lp_fcache *fc;
	__u64 gen;

	if (filter_mode == LP_FILTER_CGROUP)
		return bpf_current_task_under_cgroup(&cgroup_filter, 0) == 1;
	if (filter_mode != LP_FILTER_PIDS)
		return true;
	if (!sc)
		return bpf_map_lookup_elem(&pid_filter, &tgid) != NULL;
	/* a sampled process mostly stays on its CPUs: its last answer is kept */
	fc = &sc->fc;
	gen = arch_load_acquire(&pid_filter_gen);
	if (fc->gen != gen + 1 || fc->tgid != tgid) {
		fc->pass = bpf_map_lookup_elem(&pid_filter, &tgid) != NULL;
		fc->tgid = tgid;
		fc->gen = gen + 1;
	}
	return fc->pass;
}

#define REC_MASK (LP_RECORD_MAX - 1)

/*
 * The word at p, an address in map memory at any offset: without the
 * alignment promise, a word at a variable offset of a byte array is split
 * into 8 byte loads by the BPF backend. The verifier allows unaligned access
 * on x86 and arm64 (efficient unaligned access).
 */
#define WORD(p) (*(__u64 *)__builtin_assume_aligned((p), sizeof(__u64)))

static __always_inline void put_u16(__u8 *p, __u16 v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

/*
 * Reads the user memory of task. The sampler reads the thread it interrupted
 * (bpf_probe_read_user, allowed in any program); the task iterator reads
 * another thread (remote: bpf_copy_from_user_task, which may fault pages in
 * and so exists only in sleepable programs). remote is a constant at every
 * call site: each program keeps one of the two helpers, and a perf_event
 * program never mentions the sleepable one, which its verifier would reject.
 */
static __always_inline long read_user(struct task_struct *task, bool remote, void *dst, __u32 size,
				      __u64 src)
{
	if (remote)
		return bpf_copy_from_user_task(dst, size, (void *)src, task, 0);
	return bpf_probe_read_user(dst, size, (void *)src);
}

/* glibc's and musl's DTV walk: the block of module modid, plus offset. */
static __always_inline int dtv_addr(struct task_struct *task, bool remote,
				    const struct lp_tls_ref *r, __u64 tp, __u64 modid, __u64 offset,
				    __u64 *addr, __u32 *status)
{
	__u64 dtv, block, entries;

	if (read_user(task, remote, &dtv, sizeof(dtv), tp + r->dtv_tp_offset) || !dtv) {
		*status |= LP_ST_READ_FAULT;
		return -1;
	}
	if (r->dtv_flags & LP_DTV_GLIBC) {
		/* dtv[-1] is the number of slots; a larger module id was never set up */
		if (read_user(task, remote, &entries, sizeof(entries), dtv - r->dtv_entry_size)) {
			*status |= LP_ST_READ_FAULT;
			return -1;
		}
		if (modid > entries) {
			*status |= LP_ST_DTV_UNALLOCATED;
			return -1;
		}
	}
	if (read_user(task, remote, &block, sizeof(block), dtv + modid * r->dtv_entry_size)) {
		*status |= LP_ST_READ_FAULT;
		return -1;
	}
	if (!block || ((r->dtv_flags & LP_DTV_GLIBC) && block == (__u64)-1)) {
		*status |= LP_ST_DTV_UNALLOCATED;
		return -1;
	}
	*addr = block + offset;
	return 0;
}

/* Finds the TLS object of task; 0 when *addr is valid. */
static __always_inline int tls_object_addr(struct task_struct *task, bool remote,
					   const struct lp_tls_ref *r, __u64 *addr, __u32 *status)
{
	__u64 tp = arch_thread_pointer(task), desc[2], ti[2];

	if (!tp) {
		*status |= LP_ST_READ_FAULT;
		return -1;
	}
	switch (r->access) {
	case LP_TLS_TP_OFFSET:
		*addr = tp + r->offset;
		return 0;
	case LP_TLS_DTV:
		return dtv_addr(task, remote, r, tp, r->dtv_modid, r->offset, addr, status);
	case LP_TLS_TLSDESC:
		if (read_user(task, remote, desc, sizeof(desc), r->tlsdesc_addr)) {
			*status |= LP_ST_READ_FAULT;
			return -1;
		}
		if (!desc[1]) {
			*status |= LP_ST_TLS_PENDING;
			return -1;
		}
		if ((__s64)desc[1] < LP_TLSDESC_STATIC_MAX) {
			*addr = tp + desc[1] + r->offset;
			return 0;
		}
		/* glibc's dynamic TLSDESC: arg points to { modid, offset } */
		if (read_user(task, remote, ti, sizeof(ti), desc[1])) {
			*status |= LP_ST_READ_FAULT;
			return -1;
		}
		return dtv_addr(task, remote, r, tp, ti[0], ti[1] + r->offset, addr, status);
	}
	return -1;
}

struct copy_ctx {
	struct lp_scratch *sc;
	struct lp_sample *s;
	struct task_struct *task;
	struct lp_counters *c;
	__u64 lo;      /* the user address win[0] holds; strings from there are in the window */
	__u64 hi;      /* the end of the furthest string */
	__u32 at;      /* where in set[] the labels start */
	__u32 win_len; /* bytes of win[] read; 0: no window, every string read by itself */
};

/* label i of the set read into sc->set */
static __always_inline struct lp_label_abi *set_label(struct copy_ctx *cx, __u32 i)
{
	return __builtin_assume_aligned(
		&cx->sc->set[(cx->at + i * sizeof(struct lp_label_abi)) & LSET_MASK],
		sizeof(__u64));
}

/* The bytes of a string kept: a key or value is cut at its limit. */
static __always_inline __u64 kept_len(__u64 len, __u32 max)
{
	return len > max ? max : len;
}

/*
 * The extent of the strings of label i that copy_label will read, by
 * bpf_loop: cx->lo and cx->hi grow to take them in, sc->kept counts their
 * bytes (in map memory: a sum on the stack would give the verifier a new
 * range at every iteration). A string whose end wraps around is left to
 * copy_label, whose read of it fails.
 */
static long span_label(__u32 i, struct copy_ctx *cx)
{
	struct lp_label_abi *l;
	__u64 k, v, kend, vend;

	if (i >= LP_MAX_LABELS)
		return 1;
	l = set_label(cx, i);
	k = l->key.buf;
	v = l->value.buf;
	if (!k || !v)
		return 0;
	kend = k + kept_len(l->key.len, max_key_len);
	vend = v + kept_len(l->value.len, max_value_len);
	if (kend < k || vend < v)
		return 0;
	cx->sc->kept += (kend - k) + (vend - v);
	if (k < cx->lo)
		cx->lo = k;
	if (v < cx->lo)
		cx->lo = v;
	if (kend > cx->hi)
		cx->hi = kend;
	if (vend > cx->hi)
		cx->hi = vend;
	return 0;
}

/* Whether [p, p + len) lies in the window; *at: where in win[] it starts. */
static __always_inline bool in_window(const struct copy_ctx *cx, __u64 p, __u32 len, __u32 *at)
{
	if (p < cx->lo || p - cx->lo > cx->win_len || cx->win_len - (p - cx->lo) < len)
		return false;
	*at = p - cx->lo;
	return true;
}

/*
 * len bytes (at most max) from win[src] to rec[dst], a word at a time: the
 * last word may carry up to 7 bytes past len into rec, which the next label
 * overwrites or the record leaves out (it ends at sc->off).
 */
static __always_inline void copy_window(struct lp_scratch *sc, __u32 dst, __u32 src, __u32 len,
					__u32 max)
{
	__u32 j, d, w;

	for (j = 0; j < max; j += sizeof(__u64)) {
		if (j >= len)
			break;
		d = dst + j;
		w = src + j;
		if (d > LP_RECORD_MAX || w > LP_LABEL_WINDOW)
			break;
		/* the bounds just checked, not a copy computed before them */
		barrier_var(d);
		barrier_var(w);
		WORD(&sc->rec[d]) = WORD(&sc->win[w]);
	}
}

/*
 * One label, by bpf_loop: the verifier checks this body once, not per label.
 * A NULL key means no label (the spec says so), a NULL value with length 0 a
 * label not in use (the Datadog Java profiler keeps its reserved labels so
 * until a span is set): both are skipped, the second counted. A NULL pointer
 * with a non-zero length is damage: skipped and flagged malformed.
 */
static __always_inline long copy_label(__u32 i, struct copy_ctx *cx, bool remote)
{
	struct lp_scratch *sc = cx->sc;
	struct lp_sample *s = cx->s;
	struct lp_label_abi *l;
	__u32 start = sc->off, o, klen, vlen, kat, vat;

	if (i >= LP_MAX_LABELS || start > LP_RECORD_MAX)
		return 1;
	o = start;
	l = set_label(cx, i);
	if (!l->key.buf || !l->value.buf) {
		if ((!l->key.buf && l->key.len) || (l->key.buf && l->value.len))
			s->status |= LP_ST_MALFORMED;
		else if (l->key.buf && cx->c) /* (readers without counters leave c NULL) */
			cx->c->null_values++;
		return 0;
	}
	klen = kept_len(l->key.len, max_key_len);
	vlen = kept_len(l->value.len, max_value_len);
	if (klen != l->key.len || vlen != l->value.len)
		s->status |= LP_ST_TRUNCATED;
	if (klen > LP_MAX_KEY_LEN || vlen > LP_MAX_VALUE_LEN || o > LP_RECORD_MAX ||
	    o + sizeof(struct lp_label_hdr) + klen + vlen > LP_RECORD_MAX) {
		s->status |= LP_ST_TRUNCATED;
		return 1;
	}
	o += sizeof(struct lp_label_hdr);
	if (in_window(cx, l->key.buf, klen, &kat) && in_window(cx, l->value.buf, vlen, &vat)) {
		copy_window(sc, o, kat, klen, LP_MAX_KEY_LEN);
		copy_window(sc, o + klen, vat, vlen, LP_MAX_VALUE_LEN);
	} else if (klen == l->key.len && l->value.buf == l->key.buf + klen) {
		/* a value right after its whole key (libcustomlabels keeps it so): one read */
		if (read_user(cx->task, remote, &sc->rec[o & REC_MASK], klen + vlen, l->key.buf)) {
			s->status |= LP_ST_READ_FAULT;
			return 0;
		}
	} else if (read_user(cx->task, remote, &sc->rec[o & REC_MASK], klen, l->key.buf) ||
		   read_user(cx->task, remote, &sc->rec[(o + klen) & REC_MASK], vlen,
			     l->value.buf)) {
		s->status |= LP_ST_READ_FAULT;
		return 0;
	}
	put_u16(&sc->rec[start & REC_MASK], klen);
	put_u16(&sc->rec[(start + 2) & REC_MASK], vlen);
	sc->off = o + klen + vlen;
	s->label_count++;
	return 0;
}

/* bpf_loop takes a function, not a constant argument: one body per reader. */
static long copy_label_current(__u32 i, struct copy_ctx *cx)
{
	return copy_label(i, cx, false);
}

static long copy_label_remote(__u32 i, struct copy_ctx *cx)
{
	return copy_label(i, cx, true);
}

/*
 * Reads the label set whose { storage, count } is at addr (near: its labels
 * may follow closely, as in a v1 set) and copies its labels into the record
 * at *off, in storage order (duplicates are kept: userspace keeps the first).
 * Few reads, as each costs about as much as copying a few hundred bytes: the
 * header with the labels close behind it, then one window over the strings
 * when they lie close together, else a read per label (per-string reads for
 * a value apart from its key).
 */
static __always_inline void copy_labels(struct task_struct *task, bool remote,
					struct lp_scratch *sc, struct lp_sample *s, __u32 *off,
					__u64 addr, bool near, struct lp_counters *c)
{
	struct copy_ctx cx = {.sc = sc, .s = s, .task = task, .c = c, .lo = -1ULL};
	__u32 most = max_labels < LP_MAX_LABELS ? max_labels : LP_MAX_LABELS, n;
	__u32 spec = LSET_NEAR + most * sizeof(struct lp_label_abi);
	__u64 storage, count, rel, len;

	/* near the end of its mapping the set fails the long read: then its header alone */
	if (!near || !most || spec > LSET_MASK || read_user(task, remote, sc->set, spec, addr)) {
		near = false;
		if (read_user(task, remote, sc->set, 2 * sizeof(__u64), addr)) {
			s->status |= LP_ST_READ_FAULT;
			return;
		}
	}
	s->status |= LP_ST_LABELS_READ;
	storage = WORD(&sc->set[0]);
	count = WORD(&sc->set[sizeof(__u64)]);
	n = count > max_labels ? max_labels : count;
	if (count > max_labels)
		s->status |= LP_ST_TRUNCATED;
	if (!n)
		return;
	if (n > LP_MAX_LABELS)
		n = LP_MAX_LABELS;
	rel = storage - addr;
	if (near && storage >= addr && rel <= spec &&
	    spec - rel >= n * sizeof(struct lp_label_abi)) {
		cx.at = rel;
	} else if (!storage ||
		   read_user(task, remote, sc->set, n * sizeof(struct lp_label_abi), storage)) {
		s->status |= LP_ST_READ_FAULT;
		return;
	}
	sc->kept = 0;
	bpf_loop(n, span_label, &cx, 0);
	len = cx.hi - cx.lo;
	if (cx.hi > cx.lo && len <= LP_LABEL_WINDOW && len <= 2 * sc->kept + LP_LABEL_SLACK &&
	    !read_user(task, remote, sc->win, len, cx.lo))
		cx.win_len = len;
	sc->off = *off;
	bpf_loop(n, remote ? copy_label_remote : copy_label_current, &cx, 0);
	if (sc->off < *off || sc->off > LP_RECORD_MAX)
		return;
	s->label_bytes += sc->off - *off;
	*off = sc->off;
}

/*
 * Go pprof labels (docs/design.md section 8): sc->labels[0..n) are gathered
 * from the goroutine's map or slice as { key, value } strings, then copied
 * into the record by copy_label like custom labels, marked LP_SRC_GO_PPROF.
 */
struct go_ctx {
	struct copy_ctx cp;
	bool remote;
	bool slice; /* sc->labels hold Go's { ptr, len } strings, not { len, buf } */
};

/* A Go string { ptr, len } read over an lp_string_abi { len, buf }: put in order. */
static __always_inline void go_string_swap(struct lp_string_abi *str)
{
	__u64 ptr = str->len;

	str->len = str->buf;
	str->buf = ptr;
}

/* One Go label, by bpf_loop (see copy_label). */
static __always_inline long go_copy_label(__u32 i, struct go_ctx *gx, bool remote)
{
	struct lp_scratch *sc = gx->cp.sc;
	struct lp_sample *s = gx->cp.s;
	__u32 start = sc->off, before = s->label_count;
	struct lp_label_abi *l;
	long ret;

	if (i >= LP_MAX_LABELS)
		return 1;
	/* copy_label reads labels from sc->set (gx->cp.at is 0) */
	l = set_label(&gx->cp, i);
	*l = sc->labels[i];
	if (gx->slice) {
		go_string_swap(&l->key);
		go_string_swap(&l->value);
	}
	/*
	 * An empty Go string may have no pointer, which copy_label takes for a
	 * missing key or value: point it just after the key (one read then).
	 */
	if (!l->key.len && !l->key.buf)
		l->key.buf = l->value.buf ? l->value.buf : 1;
	if (!l->value.len)
		l->value.buf = l->key.buf + l->key.len;
	ret = copy_label(i, &gx->cp, remote);
	/* the source in the top bits of key_len, whose high byte comes second */
	if (s->label_count != before)
		sc->rec[(start + 1) & REC_MASK] |= LP_SRC_GO_PPROF << (LP_LABEL_SRC_SHIFT - 8);
	return ret;
}

static long go_copy_label_current(__u32 i, struct go_ctx *gx)
{
	return go_copy_label(i, gx, false);
}

static long go_copy_label_remote(__u32 i, struct go_ctx *gx)
{
	return go_copy_label(i, gx, true);
}

/* One bucket of a Go labels map (runtime.bmap of map[string]string), by bpf_loop. */
static __always_inline long go_map_bucket(struct go_ctx *gx, bool remote)
{
	struct lp_scratch *sc = gx->cp.sc;
	struct lp_gowalk *w = &sc->gw;
	__u64 addr = w->next, *word;
	__u32 j, n = w->n;

	if (!addr) {
		if (w->idx >= w->nbuckets)
			return 1;
		addr = w->buckets + (__u64)w->idx * LP_GO_BUCKET_SIZE;
		w->idx++;
	}
	if (read_user(gx->cp.task, remote, sc->go_bucket, LP_GO_BUCKET_SIZE, addr)) {
		gx->cp.s->status |= LP_ST_READ_FAULT;
		w->next = 0;
		w->idx = w->nbuckets;
		return 1;
	}
	for (j = 0; j < LP_GO_BUCKET_SLOTS; j++) {
		if (sc->go_bucket[j] < LP_GO_MIN_TOPHASH)
			continue;
		if (n >= max_labels || n >= LP_MAX_LABELS) {
			w->full = 1;
			continue;
		}
		/* keys[8] after tophash[8], values[8] after the keys; a string is { ptr, len } */
		word = (__u64 *)&sc->go_bucket[LP_GO_BUCKET_SLOTS + 16 * j];
		sc->labels[n].key.buf = word[0];
		sc->labels[n].key.len = word[1];
		word = (__u64 *)&sc->go_bucket[LP_GO_BUCKET_SLOTS * 17 + 16 * j];
		sc->labels[n].value.buf = word[0];
		sc->labels[n].value.len = word[1];
		n++;
	}
	w->n = n;
	w->next = *(__u64 *)&sc->go_bucket[LP_GO_BUCKET_SIZE - 8];
	return 0;
}

static long go_map_bucket_current(__u32 i, struct go_ctx *gx)
{
	return go_map_bucket(gx, false);
}

static long go_map_bucket_remote(__u32 i, struct go_ctx *gx)
{
	return go_map_bucket(gx, true);
}

/*
 * Gathers the labels of a Go <= 1.23 labels map (*map[string]string) at
 * labels into sc->labels; returns how many.
 */
static __always_inline __u32 go_gather_map(struct go_ctx *gx, __u64 labels)
{
	struct lp_scratch *sc = gx->cp.sc;
	struct lp_sample *s = gx->cp.s;
	struct lp_gowalk *w = &sc->gw;
	/* runtime.hmap: count @0, B @9, buckets @16, oldbuckets @24 */
	__u64 hmap, h[4];
	__u8 b;

	if (read_user(gx->cp.task, gx->remote, &hmap, sizeof(hmap), labels) ||
	    (hmap && read_user(gx->cp.task, gx->remote, h, sizeof(h), hmap))) {
		s->status |= LP_ST_READ_FAULT;
		return 0;
	}
	if (!hmap || !h[0])
		return 0;
	b = h[1] >> 8;
	/*
	 * A label map is built once and never changes, so it is not growing;
	 * one that is (oldbuckets set) or is too large for its bounds is not read.
	 */
	if (b > LP_GO_MAX_B || h[3] || !h[2]) {
		s->status |= b > LP_GO_MAX_B || !h[2] ? LP_ST_MALFORMED : LP_ST_TRUNCATED;
		return 0;
	}
	w->buckets = h[2];
	w->next = 0;
	w->nbuckets = 1u << b;
	w->idx = 0;
	w->n = 0;
	w->full = 0;
	bpf_loop(LP_GO_MAX_BUCKET_READS, gx->remote ? go_map_bucket_remote : go_map_bucket_current,
		 gx, 0);
	if (s->status & LP_ST_READ_FAULT)
		return 0;
	if (w->full || w->next || w->idx < w->nbuckets)
		s->status |= LP_ST_TRUNCATED;
	else if (w->n != h[0]) /* the map says otherwise: no partial set */
		s->status |= LP_ST_MALFORMED;
	if (s->status & LP_ST_MALFORMED)
		return 0;
	return w->n;
}

/* Gathers the labels of a Go >= 1.24 labels slice at labels into sc->labels; how many. */
static __always_inline __u32 go_gather_slice(struct go_ctx *gx, __u64 labels)
{
	struct lp_sample *s = gx->cp.s;
	__u64 slice[2]; /* { ptr, len } of []label, label = { key, value string } */
	__u32 n;

	if (read_user(gx->cp.task, gx->remote, slice, sizeof(slice), labels)) {
		s->status |= LP_ST_READ_FAULT;
		return 0;
	}
	if (!slice[1])
		return 0;
	n = slice[1] > max_labels ? max_labels : slice[1];
	if (slice[1] > max_labels)
		s->status |= LP_ST_TRUNCATED;
	if (n > LP_MAX_LABELS)
		n = LP_MAX_LABELS;
	if (!n)
		return 0;
	if (!slice[0] || read_user(gx->cp.task, gx->remote, gx->cp.sc->labels,
				   n * sizeof(struct lp_label_abi), slice[0])) {
		s->status |= LP_ST_READ_FAULT;
		return 0;
	}
	gx->slice = true;
	return n;
}

/* The g the thread runs (0: none), or -1 when it cannot be read. */
static __always_inline long go_current_g(struct task_struct *task, bool remote,
					 const struct lp_go_ref *go, __u64 *g)
{
	__u64 tp;

	if (go->g_in_register)
		return arch_go_g_register(task, g);
	tp = arch_thread_pointer(task);
	if (!tp)
		return -1;
	return read_user(task, remote, g, sizeof(*g), tp + go->g_offset) ? -1 : 0;
}

/*
 * Reads the pprof labels of the goroutine task runs, g.m.curg.labels, into
 * the record s at *off. A thread that runs no goroutine (the scheduler, a C
 * thread of a cgo program) has none.
 */
static __always_inline void read_go_labels(struct task_struct *task, bool remote,
					   const struct lp_recipe *r, struct lp_scratch *sc,
					   struct lp_sample *s, __u32 *off)
{
	const struct lp_go_ref *go = &r->go;
	struct go_ctx gx = {.cp = {.sc = sc, .s = s, .task = task}, .remote = remote};
	__u64 g, m = 0, curg = 0, labels = 0;
	__u32 n;

	if (go_current_g(task, remote, go, &g) ||
	    (g && read_user(task, remote, &m, sizeof(m), g + go->m_offset)) ||
	    (m && read_user(task, remote, &curg, sizeof(curg), m + go->curg_offset)) ||
	    (curg && read_user(task, remote, &labels, sizeof(labels), curg + go->labels_offset))) {
		s->status |= LP_ST_READ_FAULT;
		return;
	}
	s->status |= LP_ST_LABELS_READ;
	if (!labels)
		return;
	if (go->format == LP_GO_LABELS_MAP)
		n = go_gather_map(&gx, labels);
	else if (go->format == LP_GO_LABELS_SLICE)
		n = go_gather_slice(&gx, labels);
	else
		return;
	if (!n || n > LP_MAX_LABELS || *off > LP_RECORD_MAX)
		return;
	sc->off = *off;
	bpf_loop(n, remote ? go_copy_label_remote : go_copy_label_current, &gx, 0);
	if (sc->off < *off || sc->off > LP_RECORD_MAX)
		return;
	s->label_bytes += sc->off - *off;
	*off = sc->off;
}

/* The recipe that applies to tgid now, or NULL. */
static __always_inline struct lp_recipe *lookup_recipe(__u32 tgid)
{
	struct lp_recipe *r = bpf_map_lookup_elem(&recipes, &tgid);
	__u64 *seq;

	if (!r)
		return NULL;
	/* exec'd since userspace looked: the recipe describes the old image */
	seq = bpf_map_lookup_elem(&execs, &tgid);
	return r->exec_seq == (seq ? *seq : 0) ? r : NULL;
}

/* lookup_recipe, through this CPU's cache (the sampler's: remote is not cached). */
static __always_inline struct lp_recipe *find_recipe(struct lp_scratch *sc, __u32 tgid, bool remote)
{
	struct lp_rcache *rc = &sc->rc;
	struct lp_recipe *r;
	__u64 gen;

	if (remote)
		return lookup_recipe(tgid);
	/* the lookups below must see every change made before gen was bumped */
	gen = arch_load_acquire(&recipes_gen);
	if (rc->gen == gen + 1 && rc->tgid == tgid)
		return rc->found ? &rc->recipe : NULL;
	r = lookup_recipe(tgid);
	rc->tgid = tgid;
	rc->found = r != NULL;
	if (r)
		rc->recipe = *r;
	rc->gen = gen + 1;
	return r ? &rc->recipe : NULL;
}

/* After a change of recipes, or of execs for a tgid in recipes: no CPU keeps a recipe from before.
 */
static __always_inline void recipes_changed(void)
{
	__sync_fetch_and_add(&recipes_gen, 1);
}

/* The custom labels of task (r->labels) into the record s at *off. */
static __always_inline void read_custom_labels(struct task_struct *task, bool remote,
					       const struct lp_recipe *r, struct lp_scratch *sc,
					       struct lp_sample *s, __u32 *off, struct lp_counters *c)
{
	__u64 addr, ptr;

	if (tls_object_addr(task, remote, &r->labels, &addr, &s->status))
		return;
	if (r->form == LP_FORM_CUSTOM_LABELS_V1) {
		/* the TLS object is a pointer to { storage, count, capacity } */
		if (read_user(task, remote, &ptr, sizeof(ptr), addr)) {
			s->status |= LP_ST_READ_FAULT;
			return;
		}
		if (!ptr) {
			s->status |= LP_ST_LABELS_READ;
			return;
		}
		addr = ptr;
	} else if (r->form != LP_FORM_CUSTOM_LABELS_V0) {
		return;
	}
	/* v0's TLS object and v1's set both start with { storage, count } */
	copy_labels(task, remote, sc, s, off, addr, r->form == LP_FORM_CUSTOM_LABELS_V1, c);
}

#define OTEL_SRC_BITS (LP_SRC_OTEL_THREAD << LP_LABEL_SRC_SHIFT)

/*
 * Appends the label { key, otel[at..at+len) } of the OTel thread source at
 * sc->off; key and len are constants at every call site.
 */
static __always_inline void put_otel_id(struct lp_scratch *sc, struct lp_sample *s, const char *key,
					__u32 klen, __u32 at, __u32 len)
{
	__u32 o = sc->off;

	if (s->label_count >= max_labels || o > LP_RECORD_MAX - 64) {
		s->status |= LP_ST_TRUNCATED;
		return;
	}
	put_u16(&sc->rec[o & REC_MASK], klen | OTEL_SRC_BITS);
	put_u16(&sc->rec[(o + 2) & REC_MASK], len);
	__builtin_memcpy(&sc->rec[(o + 4) & REC_MASK], key, klen);
	__builtin_memcpy(&sc->rec[(o + 4 + klen) & REC_MASK], &sc->otel[at], len);
	sc->off = o + sizeof(struct lp_label_hdr) + klen + len;
	s->label_count++;
}

/*
 * One attrs_data entry { key_index, len, bytes }, by bpf_loop: its key is the
 * key index (one byte, userspace names it), its value the bytes.
 */
static long otel_attr(__u32 i, struct lp_scratch **scp)
{
	struct lp_scratch *sc = *scp;
	struct lp_sample *s = (struct lp_sample *)sc->rec;
	__u32 pos = sc->otel_pos, end = sc->otel_end, o = sc->off, len, vlen;

	if (end > LP_OTEL_RECORD_MAX || pos + 2 > end) {
		if (pos < end) /* a lone byte: an incomplete entry */
			s->status |= LP_ST_MALFORMED;
		return 1;
	}
	len = sc->otel[(pos + 1) & OTEL_BUF_MASK];
	if (pos + 2 + len > end) {
		s->status |= LP_ST_MALFORMED;
		return 1;
	}
	sc->otel_pos = pos + 2 + len;
	if (s->label_count >= max_labels) {
		s->status |= LP_ST_TRUNCATED;
		return 1;
	}
	vlen = len > max_value_len ? max_value_len : len;
	if (vlen != len)
		s->status |= LP_ST_TRUNCATED;
	if (o > LP_RECORD_MAX || o + sizeof(struct lp_label_hdr) + 1 + vlen > LP_RECORD_MAX) {
		s->status |= LP_ST_TRUNCATED;
		return 1;
	}
	put_u16(&sc->rec[o & REC_MASK], 1 | OTEL_SRC_BITS);
	put_u16(&sc->rec[(o + 2) & REC_MASK], vlen);
	sc->rec[(o + 4) & REC_MASK] = sc->otel[pos & OTEL_BUF_MASK];
	bpf_probe_read_kernel(&sc->rec[(o + 5) & REC_MASK], vlen & 0xff,
			      &sc->otel[(pos + 2) & OTEL_BUF_MASK]);
	sc->off = o + sizeof(struct lp_label_hdr) + 1 + vlen;
	s->label_count++;
	return 0;
}

/*
 * The OpenTelemetry thread context of task (r->otel, OTEP 4947) into the
 * record s at *off, after the custom labels (docs/design.md section 1).
 */
static __always_inline void read_otel_thread(struct task_struct *task, bool remote,
					     const struct lp_recipe *r, struct lp_scratch *sc,
					     struct lp_sample *s, __u32 *off)
{
	__u64 addr, ptr, *ids = (__u64 *)sc->otel;
	__u32 size;

	if (tls_object_addr(task, remote, &r->otel, &addr, &s->status))
		return;
	if (read_user(task, remote, &ptr, sizeof(ptr), addr)) {
		s->status |= LP_ST_READ_FAULT;
		return;
	}
	s->status |= LP_ST_LABELS_READ;
	if (!ptr) /* no context */
		return;
	/*
	 * The whole record in one read; a shorter record at the end of its
	 * mapping makes that fail, and is read by its header's size.
	 */
	if (read_user(task, remote, sc->otel, LP_OTEL_RECORD_MAX, ptr)) {
		if (read_user(task, remote, sc->otel, LP_OTEL_RECORD_HDR, ptr)) {
			s->status |= LP_ST_READ_FAULT;
			return;
		}
		size = *(__u16 *)&sc->otel[26];
		if (size > LP_OTEL_RECORD_MAX - LP_OTEL_RECORD_HDR) {
			s->status |= LP_ST_MALFORMED;
			return;
		}
		if (read_user(task, remote, sc->otel, LP_OTEL_RECORD_HDR + size, ptr)) {
			s->status |= LP_ST_READ_FAULT;
			return;
		}
	}
	if (sc->otel[24] != LP_OTEL_VALID)
		return;
	size = *(__u16 *)&sc->otel[26];
	if (size > LP_OTEL_RECORD_MAX - LP_OTEL_RECORD_HDR) {
		s->status |= LP_ST_MALFORMED;
		return;
	}
	sc->off = *off;
	if (ids[0] | ids[1]) {
		put_otel_id(sc, s, LP_OTEL_KEY_TRACE_ID, sizeof(LP_OTEL_KEY_TRACE_ID) - 1, 0,
			    LP_OTEL_TRACE_ID_LEN);
		if (ids[2])
			put_otel_id(sc, s, LP_OTEL_KEY_SPAN_ID, sizeof(LP_OTEL_KEY_SPAN_ID) - 1,
				    LP_OTEL_TRACE_ID_LEN, LP_OTEL_SPAN_ID_LEN);
	}
	sc->otel_pos = LP_OTEL_RECORD_HDR;
	sc->otel_end = LP_OTEL_RECORD_HDR + size;
	bpf_loop((LP_OTEL_RECORD_MAX - LP_OTEL_RECORD_HDR) / 2, otel_attr, &sc, 0);
	if (sc->off < *off || sc->off > LP_RECORD_MAX)
		return;
	s->label_bytes += sc->off - *off;
	*off = sc->off;
}

/*
 * The recipe of task's process now (remote: not the current thread, see
 * read_user), or NULL, the status bits saying why. Samples need it with
 * labels off too: code mapped since userspace inspected the process gets
 * unwind tables as well as a new look for a label library.
 */
static __always_inline struct lp_recipe *sample_recipe(struct task_struct *task, bool remote,
						       __u32 task_flags, struct lp_scratch *sc,
						       struct lp_sample *s, struct lp_counters *c)
{
	struct lp_recipe *r;

	/*
	 * Once a thread exits, glibc may hand its stack and TLS block to a new
	 * thread while the old task still runs kernel exit code.
	 */
	if (task_flags & PF_EXITING) {
		s->status |= LP_ST_EXITING;
		return NULL;
	}
	r = find_recipe(sc, s->tgid, remote);
	if (!r) {
		s->status |= LP_ST_NO_RECIPE;
		c->unknown_pids++;
		return NULL;
	}
	/* code mapped or unmapped since userspace inspected the process */
	if (!remote && r->exec_vm && task->mm->exec_vm != r->exec_vm)
		s->status |= LP_ST_MAPS_CHANGED;
	return r;
}

/* Reads the label set of task by its process's recipe r into the record s at *off. */
static __always_inline void read_label_set(struct task_struct *task, bool remote,
					   const struct lp_recipe *r, struct lp_scratch *sc,
					   struct lp_sample *s, __u32 *off, struct lp_counters *c)
{
	if (r->form == LP_FORM_NONE && r->otel.access == LP_TLS_NONE && r->go.format == LP_GO_NONE) {
		s->status |= LP_ST_NO_RECIPE;
		return;
	}
	/*
	 * One merged set, in the order of precedence (docs/design.md section 1):
	 * the reader keeps a key's first occurrence.
	 */
	if (r->form != LP_FORM_NONE)
		read_custom_labels(task, remote, r, sc, s, off, c);
	if (r->otel.access != LP_TLS_NONE)
		read_otel_thread(task, remote, r, sc, s, off);
	if (r->go.format != LP_GO_NONE)
		read_go_labels(task, remote, r, sc, s, off);
}

#if ARCH_USER_FP_WALK
#define WALK_BATCH 8 /* frame records per bpf_loop step */

struct task_struct___lp {
	void *utask; /* CONFIG_UPROBES */
} __attribute__((preserve_access_index));

/*
 * Whether task has uprobes state: its stack may hold uretprobe trampolines,
 * which the kernel's walker replaces with the real return addresses.
 */
static __always_inline bool uprobes_active(struct task_struct *task)
{
	struct task_struct___lp *t = (void *)task;

	return bpf_core_field_exists(t->utask) && t->utask;
}

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
		if (n >= stack_depth || n >= LP_MAX_STACK_DEPTH) {
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
	bpf_loop(LP_MAX_STACK_DEPTH, walk_frames, &sc, 0);
	return w->n * sizeof(__u64);
}
/* Steps of the bounded binary searches: 2^steps entries at most. */
#define MAPS_SEARCH_STEPS  8  /* LP_UNWIND_MAX_MAPS */
#define FENCE_SEARCH_STEPS 24 /* pages of one object */
#define PAGE_SEARCH_STEPS  9  /* LP_UNWIND_PAGE_ROWS */

struct cwalk_ctx {
	struct lp_scratch *sc;
	struct lp_unwind_proc *proc;
	struct lp_unwind_counters *uc;
};

/* Reads a search bound back from map memory (struct lp_cwalk). */
#define SEARCH_BOUND(x) (*(volatile __u32 *)&(x))

/* The mapping of proc holding ip, or NULL. */
static __always_inline struct lp_unwind_mapping *find_mapping(struct lp_cwalk *w,
							      struct lp_unwind_proc *proc,
							      __u64 ip)
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
	w->fp = next;
	w->ip = ra;
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
	case LP_CFA_FP_FRAME:
		cfa = w->fp + 16;
		row.regs = -16;
		break;
	case LP_CFA_SIGNAL:
		/* the interrupted registers, saved by the kernel */
		if (bpf_probe_read_user(regs, sizeof(regs), (void *)(w->sp + ARCH_SIGFRAME_REGS)))
			return STEP_STUCK;
		w->fp = regs[0];
		w->sp = regs[ARCH_SIGFRAME_SP];
		w->ip = regs[ARCH_SIGFRAME_IP];
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
	if (fp_off && !stack_word(sc, w, cfa + fp_off, &w->fp))
		return STEP_STUCK;
	if (!stack_word(sc, w, cfa - 8, &ra))
		return STEP_STUCK;
	w->sp = cfa;
	w->ip = ra;
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
	r = cfi_step(sc, w, cx->proc, cx->uc);
	if (r == STEP_FP) {
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
 * where an object has none) into the record at off; bytes written. Status
 * bits for the sample go to *status.
 */
static __always_inline long walk_user_cfi(struct lp_scratch *sc, __u32 off,
					  const struct arch_user_regs *u,
					  struct lp_unwind_proc *proc, __u32 *status)
{
	struct lp_cwalk *w = &sc->cw;
	struct cwalk_ctx cx = {.sc = sc, .proc = proc};
	__u32 zero = 0;

	cx.uc = bpf_map_lookup_elem(&unwind_counters, &zero);
	if (!cx.uc)
		return 0;
	*(__u64 *)&sc->rec[off & REC_MASK] = u->ip;
	w->ip = u->ip;
	w->sp = u->sp;
	w->fp = u->fp;
	w->n = 1;
	w->at = off;
	w->status = 0;
	w->exact = 1;
	w->object = 0;
	w->map.end = 0;
	w->row_hi = 0;
	w->slen = 0;
	w->sp0 = u->sp;
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

/* The user stack of the interrupted thread into the record at off; bytes, or < 0. */
static __always_inline long user_stack(struct bpf_perf_event_data *ctx, struct task_struct *task,
				       __u32 task_flags, struct lp_scratch *sc, __u32 off,
				       __u32 *status)
{
	long n;
#if ARCH_USER_FP_WALK
	struct lp_unwind_proc *proc;
	struct arch_user_regs u;
	__u32 tgid;

	if (arch_user_regs(ctx, task, task_flags, &u) && !uprobes_active(task)) {
		if (unwind_mode != LP_UNWIND_FP) {
			tgid = bpf_get_current_pid_tgid() >> 32;
			proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
			if (proc)
				return walk_user_cfi(sc, off, &u, proc, status);
		}
		n = walk_user_stack(sc, off, &u);
		*status |= LP_ST_UNWIND_FP;
		if (n >= stack_depth * sizeof(__u64))
			*status |= LP_ST_USTACK_TRUNCATED;
		return n;
	}
#endif
	n = bpf_get_stack(ctx, &sc->rec[off], stack_depth * sizeof(__u64), BPF_F_USER_STACK);
	if (n > 0)
		*status |= LP_ST_UNWIND_FP;
	if (n >= stack_depth * sizeof(__u64))
		*status |= LP_ST_USTACK_TRUNCATED;
	return n;
}

static __always_inline struct lp_counters *get_counters(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&counters, &zero);
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

/* A process event about sample s's process, unless one went out less than interval ago. */
static __always_inline void hint(void *last_sent, __u64 interval, __u32 type,
				 const struct lp_sample *s, struct lp_counters *c)
{
	__u64 now = s->ktime_ns, *last = bpf_map_lookup_elem(last_sent, &s->tgid);
	struct lp_proc_event *e;

	if (last && now - *last < interval)
		return;
	bpf_map_update_elem(last_sent, &s->tgid, &now, BPF_ANY);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		c->event_drops++;
		return;
	}
	e->hdr.type = type;
	e->hdr.size = sizeof(*e);
	e->ktime_ns = now;
	e->tgid = s->tgid;
	e->tid = s->tid;
	__builtin_memcpy(e->comm, s->comm, sizeof(e->comm));
	/*
	 * Wake userspace now: the sooner it inspects, the fewer samples miss
	 * labels; the samples before it in the ring did not wake it.
	 */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, cpu = bpf_get_smp_processor_id();
	struct lp_counters *c;
	struct lp_scratch *sc;
	struct lp_recipe *r = NULL;
	struct lp_sample *s;
	__u32 off = sizeof(*s), flags;
	bool kthread;
	long n;

	if (!tgid) /* the idle task */
		return 0;
	c = get_counters();
	sc = bpf_map_lookup_elem(&scratch, &cpu);
	if (!c || !sc)
		return 0;
	if (!passes_filter(tgid, sc)) {
		c->filtered++;
		return 0;
	}
	c->samples++;

	s = sample_init(sc, tgid, (__u32)pid_tgid, cpu);
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	flags = task->flags;
	kthread = flags & PF_KTHREAD;

	/* a sample of user mode has no kernel stack */
	if (kernel_stacks && !arch_user_mode(ctx)) {
		n = bpf_get_stack(ctx, &sc->rec[off], stack_depth * sizeof(__u64), 0);
		if (n > 0) {
			s->kstack_len = n / sizeof(__u64);
			off += n;
		} else if (n < 0) {
			s->status |= LP_ST_KSTACK_ERR;
		}
	}
	if (kthread) {
		c->kernel_threads++;
	} else {
		if (user_stacks && off <= sizeof(*s) + LP_MAX_STACK_DEPTH * sizeof(__u64)) {
			n = user_stack(ctx, task, flags, sc, off, &s->status);
			if (n > 0) {
				s->ustack_len = n / sizeof(__u64);
				off += n;
			} else if (n < 0) {
				s->status |= LP_ST_USTACK_ERR;
			}
		}
		r = sample_recipe(task, false, flags, sc, s, c);
		if (!read_labels)
			s->status |= LP_ST_LABELS_OFF;
		else if (r)
			read_label_set(task, false, r, sc, s, &off, c);
	}

	if (s->status & LP_ST_READ_FAULT)
		c->label_read_faults++;
	if (s->status & LP_ST_TRUNCATED)
		c->truncations++;
	if (s->status & LP_ST_MALFORMED)
		c->malformed_labels++;
	if (s->label_count)
		c->samples_with_labels++;

	if (off > LP_RECORD_MAX)
		off = LP_RECORD_MAX;
	s->hdr.size = off;
	/*
	 * Waking userspace's reader per sample would cost more than sampling: it
	 * is woken once a quarter of the small ring is pending (docs/design.md
	 * section 4), and reads on a timer besides.
	 */
	if (bpf_ringbuf_output(&events, sc->rec, off,
			       bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) * 4 >
					       bpf_ringbuf_query(&events, BPF_RB_RING_SIZE)
				       ? BPF_RB_FORCE_WAKEUP
				       : BPF_RB_NO_WAKEUP))
		c->ringbuf_drops++;

	/*
	 * Ask userspace to inspect the process: a tgid with no recipe, or without
	 * labels unless quiet, at most once a second; one whose code mappings
	 * changed since its recipe was made more often, since a label library
	 * may have just been loaded.
	 */
	if (kthread)
		return 0;
	if (s->status & LP_ST_MAPS_CHANGED)
		hint(&mapped, map_hint_interval_ns, LP_EVENT_EXEC_MAP, s, c);
	else if ((s->status & LP_ST_NO_RECIPE) && !(r && (r->flags & LP_RECIPE_QUIET)))
		hint(&hinted, hint_interval_ns, LP_EVENT_UNKNOWN_PID, s, c);
	return 0;
}

/*
 * labelprof labels: the label set of every thread of one process, now,
 * without stopping it. Userspace installs the process's recipe and attaches
 * this iterator to its tgid; each thread becomes one sample record without
 * stacks in the iterator's seq file. The object instance that loads it loads
 * no sampler, and migration is off while the program runs: this CPU's scratch
 * entry is its own even while a fault sleeps.
 */
SEC("iter.s/task")
int read_threads(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u32 cpu = bpf_get_smp_processor_id(), off = sizeof(struct lp_sample);
	struct lp_counters *c;
	struct lp_scratch *sc;
	struct lp_recipe *r;
	struct lp_sample *s;

	if (!task) /* the end of the iteration */
		return 0;
	c = get_counters();
	sc = bpf_map_lookup_elem(&scratch, &cpu);
	if (!c || !sc)
		return 0;
	s = sample_init(sc, BPF_CORE_READ(task, tgid), BPF_CORE_READ(task, pid), cpu);
	bpf_core_read_str(s->comm, sizeof(s->comm), &task->comm);
	r = sample_recipe(task, true, BPF_CORE_READ(task, flags), sc, s, c);
	if (r)
		read_label_set(task, true, r, sc, s, &off, c);
	if (off > LP_RECORD_MAX)
		off = LP_RECORD_MAX;
	s->hdr.size = off;
	bpf_seq_write(ctx->meta->seq, sc->rec, off);
	return 0;
}

static __always_inline void emit_proc_event(__u32 type, __u64 pid_tgid)
{
	struct lp_proc_event *e;
	struct lp_counters *c;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		c = get_counters();
		if (c)
			c->event_drops++;
		return;
	}
	e->hdr.type = type;
	e->hdr.size = sizeof(*e);
	e->ktime_ns = bpf_ktime_get_ns();
	e->tgid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	/*
	 * Wake userspace now: a short-lived process must be inspected (and its
	 * memory map read) while it still exists.
	 */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/*
 * The lifecycle programs are BTF tracepoints, not classic tracepoints or
 * kprobes: libbpf attaches those by ids read from tracefs (or through the
 * kprobe PMU, which not every kernel has), fentry needs ftrace, while
 * tp_btf needs only /sys/kernel/btf/vmlinux, which labelprof needs anyway,
 * and exists since 5.5, before the ring buffer (5.8). New code mappings are
 * noticed by the samples themselves (read_label_set): a hook on mmap would
 * have to run on every syscall's exit.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), one = 1, *seq;
	__u32 tgid = pid_tgid >> 32;

	/* the old image's recipe must not be applied to the new one */
	seq = bpf_map_lookup_elem(&execs, &tgid);
	if (seq)
		__sync_fetch_and_add(seq, 1);
	else
		bpf_map_update_elem(&execs, &tgid, &one, BPF_ANY);
	/* (the exec count only matters to a tgid with a recipe) */
	if (!bpf_map_delete_elem(&recipes, &tgid))
		recipes_changed();
	bpf_map_delete_elem(&hinted, &tgid);
	bpf_map_delete_elem(&mapped, &tgid);
	/* the old image's mappings: frame pointers until userspace lists the new ones */
	bpf_map_delete_elem(&unwind_procs, &tgid);

	if (passes_filter(tgid, NULL))
		emit_proc_event(LP_EVENT_EXEC, pid_tgid);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct lp_unwind_proc *up;
	struct lp_recipe *r, copy;
	__u8 one = 1;

	if (ptgid == ctgid) /* a new thread */
		return 0;
	/* a reused pid must not inherit a dead process's exec count */
	bpf_map_delete_elem(&execs, &ctgid);
	if (follow_children && filter_mode == LP_FILTER_PIDS &&
	    bpf_map_lookup_elem(&pid_filter, &ptgid)) {
		bpf_map_update_elem(&pid_filter, &ctgid, &one, BPF_ANY);
		__sync_fetch_and_add(&pid_filter_gen, 1);
	}
	/* a forked child has its parent's address space layout, so its recipe too */
	r = bpf_map_lookup_elem(&recipes, &ptgid);
	if (r) {
		copy = *r;
		copy.exec_seq = 0;
		bpf_map_update_elem(&recipes, &ctgid, &copy, BPF_ANY);
		recipes_changed();
	} else if (!bpf_map_delete_elem(&recipes, &ctgid)) {
		recipes_changed();
	}
	/* and its mappings: a child inherits a recipe, so nothing else would list them */
	up = bpf_map_lookup_elem(&unwind_procs, &ptgid);
	if (up)
		bpf_map_update_elem(&unwind_procs, &ctgid, up, BPF_ANY);
	else
		bpf_map_delete_elem(&unwind_procs, &ctgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;

	/* only the last thread's exit ends the process */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	if (!bpf_map_delete_elem(&recipes, &tgid))
		recipes_changed();
	bpf_map_delete_elem(&execs, &tgid);
	bpf_map_delete_elem(&hinted, &tgid);
	bpf_map_delete_elem(&mapped, &tgid);
	bpf_map_delete_elem(&unwind_procs, &tgid);
	if (passes_filter(tgid, NULL))
		emit_proc_event(LP_EVENT_EXIT, pid_tgid);
	if (filter_mode == LP_FILTER_PIDS && follow_children &&
	    !bpf_map_delete_elem(&pid_filter, &tgid))
		__sync_fetch_and_add(&pid_filter_gen, 1);
	return 0;
}
