/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by the BPF sampler and userspace. Everything here crosses the
 * kernel/user line, so: fixed-width types, explicit padding, asserted sizes.
 */
#ifndef LABELPROF_H
#define LABELPROF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Defaults for the load-time limits (rodata); userspace may raise or lower them. */
#define LP_DEFAULT_MAX_LABELS	 16
#define LP_DEFAULT_MAX_KEY_LEN	 128
#define LP_DEFAULT_MAX_VALUE_LEN 256

/*
 * Hard ceilings the BPF program is verified against. A sample is built in a
 * per-CPU scratch buffer, so the labels part is also bounded as a whole:
 * max_labels * (4 + max_key_len + max_value_len) <= LP_MAX_LABEL_BYTES.
 */
#define LP_MAX_LABELS	   64
#define LP_MAX_KEY_LEN	   1024
#define LP_MAX_VALUE_LEN   4096
#define LP_MAX_LABEL_BYTES 28672
#define LP_MAX_STACK_DEPTH 127
#define LP_COMM_LEN	   16

/* Which published label form a process exposes (docs/design.md section 1). */
enum lp_label_form {
	LP_FORM_NONE = 0,
	LP_FORM_CUSTOM_LABELS_V0 = 1, /* TLS object is { label *storage; size_t count; } */
	LP_FORM_CUSTOM_LABELS_V1 = 2, /* TLS object is a pointer to { storage, count, capacity } */
};

/* How to get from the thread pointer to the TLS object (docs/design.md section 3). */
enum lp_tls_access {
	LP_TLS_NONE = 0,
	LP_TLS_TP_OFFSET = 1, /* addr = tp + offset */
	LP_TLS_DTV = 2,	      /* dtv = *(tp + dtv_tp_offset); addr = dtv[modid] + offset */
	/*
	 * A TLSDESC descriptor { resolver, arg } at tlsdesc_addr, read at sample
	 * time: valid from the moment the library is mapped, whenever the dynamic
	 * loader relocates it. arg 0: not relocated yet. A static-TLS arg is the
	 * offset from tp (|arg| < LP_TLSDESC_STATIC_MAX); any other arg points to
	 * glibc's { modid, offset } for the DTV walk.
	 */
	LP_TLS_TLSDESC = 3,
};

#define LP_TLSDESC_STATIC_MAX (16ll << 20)

enum lp_dtv_flags {
	/* glibc: dtv[-1] holds the number of entries; an unallocated block is (void *)-1 */
	LP_DTV_GLIBC = 1 << 0,
};

/* Per-process recipe, value of the `recipes` map keyed by tgid. */
struct lp_recipe {
	__u32 form;	      /* enum lp_label_form */
	__u32 access;	      /* enum lp_tls_access */
	__s64 offset;	      /* TP_OFFSET: from tp; DTV: inside the module's block */
	__s64 dtv_tp_offset;  /* DTV: where the dtv pointer lives, relative to tp */
	__u64 dtv_modid;      /* DTV: module id (index into the dtv) */
	__u32 dtv_entry_size; /* DTV: bytes per dtv entry (glibc 16, musl 8) */
	__u32 dtv_flags;      /* enum lp_dtv_flags */
	__u64 tlsdesc_addr;   /* TLSDESC: the descriptor's address in the process */
	/*
	 * The process's exec count when userspace inspected it (the execs map);
	 * a recipe from before the latest exec is never applied.
	 */
	__u64 exec_seq;
	/*
	 * Pages of executable mappings (mm->exec_vm) before userspace inspected
	 * the process; 0: unknown. Samples that see another count ask for a
	 * new inspection (LP_ST_MAPS_CHANGED, LP_EVENT_EXEC_MAP).
	 */
	__u64 exec_vm;
};

/* Record types in the ring buffer; every record starts with struct lp_event_hdr. */
enum lp_event_type {
	LP_EVENT_SAMPLE = 1,
	LP_EVENT_EXEC = 2,
	LP_EVENT_EXIT = 3,
	LP_EVENT_UNKNOWN_PID = 4, /* rate-limited hint: a sample came from a tgid with no recipe */
	LP_EVENT_EXEC_MAP = 5, /* rate-limited hint: a process mapped or unmapped code (dlopen) */
};

struct lp_event_hdr {
	__u32 type; /* enum lp_event_type */
	__u32 size; /* bytes of the whole record, header included */
};

/* Per-sample status bits. */
enum lp_sample_status {
	LP_ST_NO_RECIPE = 1 << 0,	/* the process publishes no labels (as far as we know) */
	LP_ST_LABELS_READ = 1 << 1,	/* the label set was read (it may be empty) */
	LP_ST_READ_FAULT = 1 << 2,	/* a user-memory read failed: labels incomplete */
	LP_ST_TRUNCATED = 1 << 3,	/* a key, value or the label count hit a limit */
	LP_ST_MALFORMED = 1 << 4,	/* a label had a NULL pointer with a non-zero length: skipped */
	LP_ST_DTV_UNALLOCATED = 1 << 5, /* the thread never touched the module's TLS */
	LP_ST_KSTACK_ERR = 1 << 6,
	LP_ST_USTACK_ERR = 1 << 7,
	LP_ST_LABELS_OFF = 1 << 8,  /* label reading disabled at load time */
	LP_ST_TLS_PENDING = 1 << 9, /* the label library's TLS is not relocated yet */
	LP_ST_EXITING = 1 << 10,    /* the thread is exiting: its TLS may belong to a new thread */
	LP_ST_MAPS_CHANGED = 1 << 11, /* code was mapped or unmapped since the recipe was made */
};

/*
 * A sample record, variable length. After the fixed part come, in order:
 *   __u64 kstack[kstack_len];       kernel IPs, leaf first
 *   __u64 ustack[ustack_len];       user IPs, leaf first
 *   label_count x { struct lp_label_hdr; key bytes; value bytes }  (no padding)
 * label_bytes is the size of that last part. Labels appear in storage order;
 * labels with a NULL key or value were skipped in BPF, duplicate keys were
 * not (the reader keeps the first occurrence).
 */
struct lp_sample {
	struct lp_event_hdr hdr;
	__u64 ktime_ns;
	__u64 cgroup_id;
	__u32 tgid;
	__u32 tid;
	__u32 cpu;
	__u32 status; /* enum lp_sample_status */
	__u16 kstack_len;
	__u16 ustack_len;
	__u16 label_count;
	__u16 label_bytes;
	char comm[LP_COMM_LEN];
};

struct lp_label_hdr {
	__u16 key_len;	 /* bytes copied (at most max_key_len), source in the top bits */
	__u16 value_len; /* bytes copied (at most max_value_len) */
};

/* Which writer a label came from: the top bits of lp_label_hdr.key_len. */
enum lp_label_source {
	LP_SRC_CUSTOM_LABELS = 0,
	LP_SRC_OTEL_THREAD = 1,
	LP_SRC_GO_PPROF = 2,
	LP_SRC_OTEL_PROCESS = 3, /* added by userspace from the process context */
};
#define LP_LABEL_SRC_SHIFT 13
#define LP_LABEL_LEN_MASK  ((1u << LP_LABEL_SRC_SHIFT) - 1)
_Static_assert(LP_MAX_KEY_LEN <= LP_LABEL_LEN_MASK, "key lengths fit below the source bits");

/* EXEC, EXIT, UNKNOWN_PID and EXEC_MAP records. */
struct lp_proc_event {
	struct lp_event_hdr hdr;
	__u64 ktime_ns;
	__u32 tgid;
	__u32 tid;
	char comm[LP_COMM_LEN];
};

/* Per-CPU counters, one PERCPU_ARRAY entry; userspace sums over CPUs. */
struct lp_counters {
	__u64 samples;		   /* program runs that passed the filter */
	__u64 samples_with_labels; /* emitted with at least one label */
	__u64 label_read_faults;
	__u64 truncations;
	__u64 malformed_labels;
	__u64 ringbuf_drops;  /* samples lost because the ring buffer was full */
	__u64 event_drops;    /* exec/exit/hint records lost */
	__u64 unknown_pids;   /* samples from a tgid with no recipe */
	__u64 filtered;	      /* program runs rejected by the pid/cgroup filter */
	__u64 kernel_threads; /* samples of kernel threads (no user context) */
	__u64 null_values;    /* labels skipped for a NULL, empty value: a slot not in use */
};

/*
 * A sample is built in a per-CPU scratch buffer before it is copied out. The
 * record never exceeds LP_RECORD_MAX; the buffer is twice that so that masked
 * offsets plus a bounded copy always stay inside it (what the verifier needs).
 */
#define LP_RECORD_MAX	32768
#define LP_SCRATCH_SIZE (2 * LP_RECORD_MAX)

/* Filter modes (rodata). */
enum lp_filter_mode {
	LP_FILTER_ALL = 0,
	LP_FILTER_PIDS = 1,   /* tgid must be a key of the pid_filter map */
	LP_FILTER_CGROUP = 2, /* current task under the cgroup in cgroup_filter[0] */
};

#ifndef __bpf__
_Static_assert(sizeof(struct lp_recipe) == 64, "lp_recipe layout");
_Static_assert(sizeof(struct lp_event_hdr) == 8, "lp_event_hdr layout");
_Static_assert(sizeof(struct lp_sample) == 64, "lp_sample layout");
_Static_assert(__builtin_offsetof(struct lp_sample, comm) == 48, "lp_sample layout");
_Static_assert(sizeof(struct lp_label_hdr) == 4, "lp_label_hdr layout");
_Static_assert(sizeof(struct lp_proc_event) == 40, "lp_proc_event layout");
_Static_assert(sizeof(struct lp_counters) == 88, "lp_counters layout");
#endif

#endif /* LABELPROF_H */
