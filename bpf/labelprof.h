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
#define LP_MAX_STACK_DEPTH 127 /* kernel stacks, and user stacks by bpf_get_stack */
/*
 * User stacks walked in BPF: words of native frames and of runtimes' two-word
 * frames, at least 1024 frames of any kind; Python's frames come after them.
 */
#define LP_MAX_USTACK_WORDS 4096
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

/* Where a Go program keeps its goroutines' pprof labels (docs/design.md section 8). */
enum lp_go_labels_format {
	LP_GO_NONE = 0,	       /* not a Go program, or a Go version without known offsets */
	LP_GO_LABELS_MAP = 1,  /* Go <= 1.23: g.labels -> *map[string]string (runtime.hmap) */
	LP_GO_LABELS_SLICE = 2, /* Go >= 1.24: g.labels -> []struct{ key, value string }, sorted */
};

/* Bounds of the walk of a Go labels map: 1 << B buckets plus overflow buckets. */
#define LP_GO_MAX_B	       6
#define LP_GO_MAX_BUCKET_READS 64
/* A map[string]string bucket: tophash[8], keys[8], values[8], overflow pointer. */
#define LP_GO_BUCKET_SLOTS     8
#define LP_GO_BUCKET_SIZE      (LP_GO_BUCKET_SLOTS * (1 + 16 + 16) + 8)
#define LP_GO_MIN_TOPHASH      5 /* tophash values below mark empty or evacuated slots */

/* The Go part of a recipe: g, then g.m.curg.labels (offsets per Go version). */
struct lp_go_ref {
	__u32 format;	     /* enum lp_go_labels_format */
	__u32 g_in_register; /* arm64 without cgo: g is in R28, not in TLS */
	__s64 g_offset;	     /* g's TLS slot, relative to the thread pointer */
	__u32 m_offset;	     /* g.m */
	__u32 curg_offset;   /* m.curg: the goroutine the thread runs */
	__u32 labels_offset; /* g.labels */
	__u32 pad;
};

/* Where one thread-local object is, from the thread pointer (docs/design.md section 3). */
struct lp_tls_ref {
	__u32 access;	      /* enum lp_tls_access; LP_TLS_NONE: no such object */
	__u32 dtv_entry_size; /* DTV: bytes per dtv entry (glibc 16, musl 8) */
	__s64 offset;	      /* TP_OFFSET: from tp; DTV: inside the module's block */
	__s64 dtv_tp_offset;  /* DTV: where the dtv pointer lives, relative to tp */
	__u64 dtv_modid;      /* DTV: module id (index into the dtv) */
	__u32 dtv_flags;      /* enum lp_dtv_flags */
	__u32 pad;
	__u64 tlsdesc_addr; /* TLSDESC: the descriptor's address in the process */
};

enum lp_recipe_flags {
	/*
	 * The process maps no label object, and its unwind mappings were asked for:
	 * only new code can change that, which samples notice (LP_ST_MAPS_CHANGED),
	 * so they send no LP_EVENT_UNKNOWN_PID hints.
	 */
	LP_RECIPE_QUIET = 1 << 0,
};

/*
 * CPython frames (docs/design.md section 11): how the walk finds the sampled
 * thread's PyThreadState and reads its frame chain, per interpreter version
 * (user/runtime/python_offsets.c).
 */
enum lp_py_flags {
	LP_PY_NATIVE_TID = 1 << 0,   /* tstate_id is native_thread_id (3.11+); else pthread_self */
	LP_PY_CFRAME = 1 << 1,	     /* tstate_frame is tstate->cframe, then ->current_frame */
	LP_PY_FRAME_OBJECT = 1 << 2, /* 3.10: PyFrameObjects, frame_instr the int f_lasti */
	LP_PY_IS_ENTRY = 1 << 3,     /* 3.11: the byte at frame_mark marks an eval's first frame */
	LP_PY_SHIM = 1 << 4,	     /* 3.12+: owner (frame_mark) 3 is an eval's entry shim */
};
#define LP_PY_OWNED_BY_CSTACK 3

struct lp_py_ref {
	__u64 interp_head; /* the address of _PyRuntime.interpreters.head; 0: not Python */
	__u32 flags;	   /* enum lp_py_flags */
	__u16 threads_head; /* PyInterpreterState: its first thread state */
	__u16 tstate_next;
	__u16 tstate_id;    /* the thread's id: native_thread_id or thread_id */
	__u16 tstate_frame; /* frame (3.10), cframe (3.11, 3.12), current_frame (3.13) */
	__u16 cframe_frame; /* _PyCFrame.current_frame */
	__u16 tstate_read;  /* bytes of a thread state read at once (<= 256) */
	__u16 frame_previous;
	__u16 frame_code;  /* f_code, f_executable */
	__u16 frame_instr; /* f_lasti, prev_instr or instr_ptr */
	__u16 frame_mark;  /* is_entry (3.11), owner (3.12+) */
	__u16 frame_read;  /* bytes of a frame read at once (<= 256) */
	__u16 code_adaptive; /* co_code_adaptive: the bytecode, inside the code object */
	__u16 code_ident;    /* co_qualname (co_name before 3.11); co_linetable follows it */
	__u16 pad;
};

/*
 * A Python frame in a record's user stack, after the native frames, is two
 * words. The first: the code object, the index of its current instruction,
 * and whether it is the first frame its _PyEval_EvalFrameDefault call ran
 * (entry), where userspace puts the frames of that call into the native
 * stack. The second: what identified the code object when it was sampled
 * (lp_py_ident), so that userspace,
 * which reads the code object later, names no other code that took its
 * address meanwhile.
 */
#define LP_PY_TAG	  0xaull /* ip >> 60 */
#define LP_PY_ENTRY	  (1ull << 59)
#define LP_PY_INSTR_SHIFT 45
#define LP_PY_INSTR_MAX	  0x3fffull
#define LP_PY_CODE_MASK	  ((1ull << LP_PY_INSTR_SHIFT) - 1) /* code address >> 3 */
#define LP_PY_FRAME_WORDS 2
#define LP_MAX_PY_FRAMES  1024
#define LP_MAX_PY_WORDS	  (LP_MAX_PY_FRAMES * LP_PY_FRAME_WORDS)
/* The words of a record's stacks: kernel, user, then Python's frames. */
#define LP_MAX_STACK_WORDS (LP_MAX_STACK_DEPTH + LP_MAX_USTACK_WORDS + LP_MAX_PY_WORDS)

/*
 * The second word of a Python frame: its code object's co_qualname and
 * co_linetable pointers and the hash of that name (a string's hash, cached in
 * it at LP_PY_STR_HASH since 3.3; names are interned, so it is set). Code made
 * again the same way can get the same addresses; its name's hash differs.
 */
#define LP_PY_STR_HASH 24
static inline __u64 lp_py_ident(__u64 qualname, __u64 linetable, __u64 name_hash)
{
	return LP_PY_TAG << 60 | ((qualname ^ linetable << 12 ^ name_hash) & ((1ull << 60) - 1));
}
#define LP_PY_MAX_THREADS 256 /* thread states looked through for the sampled thread */

/*
 * HotSpot JVM frames (docs/design.md section 12), x86-64: where the code
 * cache is and how its blobs and interpreter frames are laid out, all read
 * from the JVM's own VMStructs tables (user/runtime/hotspot_vmstructs.c).
 */
#define LP_JAVA_MAX_HEAPS 3 /* non-nmethods, profiled, non-profiled */

struct lp_java_heap {
	__u64 low; /* CodeHeap::_memory: the reserved bounds */
	__u64 high;
	__u64 segmap; /* CodeHeap::_segmap: one byte per segment */
};

struct lp_java_ref {
	__u64 cc_low;	  /* CodeCache::_low_bound; 0: not a JVM */
	__u64 cc_high;	  /* CodeCache::_high_bound */
	__u64 interp_low; /* the template interpreter's code (AbstractInterpreter::_code) */
	__u64 interp_high;
	__u64 nmethod_vtable; /* what an nmethod's first word holds; 0: unknown */
	struct lp_java_heap heaps[LP_JAVA_MAX_HEAPS];
	__u32 heap_count;
	__u32 log2_segment;	   /* CodeHeap::_log2_segment_size */
	__u16 heap_block;	   /* sizeof(HeapBlock): a blob follows its block's header */
	__u16 blob_frame_size;	   /* CodeBlob::_frame_size (words) */
	__u16 blob_frame_complete; /* CodeBlob::_frame_complete_offset */
	__u16 blob_code_begin;	   /* CodeBlob::_code_begin */
	__u16 nm_method;	   /* CompiledMethod::_method */
	__s16 fp_method;	   /* an interpreter frame's Method*, bytes from its FP */
	__s16 fp_bcp;		   /* its bytecode pointer */
	__s16 fp_sender_sp;	   /* its caller's stack pointer */
};

/*
 * A Java frame in a record's user stack takes two words in place of its
 * pc: the Method* (LP_JAVA_COMPILED: of an nmethod's frame), then
 * LP_JAVA_SECOND with the bytecode pointer (interpreted) or the pc (compiled).
 */
#define LP_JAVA_TAG	    0xcull /* ip >> 60 */
#define LP_JAVA_COMPILED    (1ull << 59)
#define LP_JAVA_SECOND	    (1ull << 58)
#define LP_JAVA_ADDR_MASK   ((1ull << 48) - 1)
#define LP_JAVA_SEGMAP_HOPS 48 /* blob starts looked back for: 48 * 254 segments */

/*
 * The OpenTelemetry thread context of Node.js (docs/design.md section 13):
 * recipe->otel locates the thread's discovery struct otel_thread_ctx_nodejs_v1
 * { cped_slot, als_handle, als_identity_hash, undefined_addr }, and these V8
 * layout constants (8-byte tagged values, Smis in the upper half) lead from
 * the current AsyncContextFrame (a JSMap) through its OrderedHashMap to the
 * context object of the AsyncLocalStorage, whose internal field 0 points to
 * the OTEP 4947 record.
 */
enum lp_node_format {
	LP_NODE_NONE = 0,
	LP_NODE_V1 = 1, /* recipe->otel is otel_thread_ctx_nodejs_v1 */
};

struct lp_node_ref {
	__u32 format;		/* enum lp_node_format */
	__u16 map_table;	/* JSMap (JSCollection): its table, an OrderedHashMap */
	__u16 hash_header;	/* OrderedHashMap: its element count, after the FixedArray header */
	__u16 record;		/* the context object: its internal field 0 */
	__u16 instance_type;	/* Map: instance_type (u16) */
	__u16 instance_size;	/* Map: instance_size_in_words (u8) */
	__u16 js_map_type;	/* JS_MAP_TYPE */
	__u16 api_type;		/* JS_API_OBJECT_TYPE */
	__u16 special_api_type; /* JS_SPECIAL_API_OBJECT_TYPE */
	__u32 pad;
};
/* Buckets of an AsyncContextFrame's table read at most, and entries of one bucket's chain. */
#define LP_NODE_MAX_BUCKETS 4096
#define LP_NODE_MAX_CHAIN   16

/*
 * V8 frames (docs/design.md section 13): a JavaScript frame keeps the
 * frame-pointer chain, and its JSFunction in a slot below its FP where a
 * typed frame (entry, exit, stub, builtin) has a Smi marker instead. The
 * offsets and instance types come from V8's postmortem constants (v8dbg_*).
 */
struct lp_v8_ref {
	__u16 js_function_first; /* FIRST_JS_FUNCTION_TYPE; 0: not V8 */
	__u16 js_function_last;
	__u16 sfi_type;	      /* SHARED_FUNCTION_INFO_TYPE */
	__u16 instance_type;  /* Map: instance_type (u16) */
	__u16 shared;	      /* JSFunction: its SharedFunctionInfo */
	__u16 sfi_name;	      /* SharedFunctionInfo: name_or_scope_info */
	__s8 fp_function;     /* a JavaScript frame's JSFunction, bytes from its FP */
	__s8 fp_marker;	      /* its context, or a typed frame's marker (a Smi) */
	__u16 pad;
};

/*
 * A JavaScript frame in a record's user stack takes two words in place of
 * its pc: the SharedFunctionInfo, then LP_JS_SECOND with what its
 * name_or_scope_info held when sampled, so that userspace, which reads the
 * function later, names no other function a moving GC put at its address.
 */
#define LP_JS_TAG	  0xbull /* ip >> 60 */
#define LP_JS_SECOND	  (1ull << 58)
#define LP_JS_ADDR_MASK	  ((1ull << 48) - 1)

/* Per-process recipe, value of the `recipes` map keyed by tgid. */
struct lp_recipe {
	__u32 form;  /* enum lp_label_form of the custom labels */
	__u32 flags; /* enum lp_recipe_flags */
	struct lp_tls_ref labels; /* the custom labels' TLS object */
	/* The OpenTelemetry thread context's TLS pointer (otel_thread_ctx_v1); NONE: none. */
	struct lp_tls_ref otel;
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
	struct lp_go_ref go; /* Go pprof labels, read besides any custom labels */
	struct lp_py_ref py; /* CPython frames */
	struct lp_java_ref java; /* HotSpot frames */
	struct lp_node_ref node; /* how recipe->otel leads to a record in Node.js */
	struct lp_v8_ref v8;	 /* JavaScript frames */
};

/*
 * The OpenTelemetry thread context record (OTEP 4947), packed, host endian;
 * otel_thread_ctx_v1 points to it. attrs_data holds entries
 * { u8 key_index, u8 len, len bytes }.
 */
#define LP_OTEL_RECORD_MAX   640
#define LP_OTEL_RECORD_HDR   28
#define LP_OTEL_TRACE_ID_LEN 16
#define LP_OTEL_SPAN_ID_LEN  8
#define LP_OTEL_VALID	     1
/*
 * Label keys of the OTel thread source: an attribute's key is its key index,
 * one byte; the ids use these longer keys, their values are the raw bytes.
 */
#define LP_OTEL_KEY_TRACE_ID "trace_id"
#define LP_OTEL_KEY_SPAN_ID  "span_id"

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
	LP_ST_MALFORMED = 1 << 4,	/* a NULL pointer with a non-zero length, or a bad OTel record: skipped */
	LP_ST_DTV_UNALLOCATED = 1 << 5, /* the thread never touched the module's TLS */
	LP_ST_KSTACK_ERR = 1 << 6,
	LP_ST_USTACK_ERR = 1 << 7,
	LP_ST_LABELS_OFF = 1 << 8,  /* label reading disabled at load time */
	LP_ST_TLS_PENDING = 1 << 9, /* the label library's TLS is not relocated yet */
	LP_ST_EXITING = 1 << 10,    /* the thread is exiting: its TLS may belong to a new thread */
	LP_ST_MAPS_CHANGED = 1 << 11, /* code was mapped or unmapped since the recipe was made */
	LP_ST_UNWIND_CFI = 1 << 12,   /* CFI rows unwound some user frames */
	LP_ST_UNWIND_FP = 1 << 13,    /* frame pointers unwound some user frames */
	LP_ST_USTACK_TRUNCATED = 1 << 14, /* the user walk stopped before the outermost frame */
	/*
	 * An io_uring or vhost worker: its thread pointer is its creator's, so
	 * its thread labels are not read (they are the creator's, as they are now).
	 */
	LP_ST_WORKER = 1 << 15,
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
 * record never exceeds LP_RECORD_MAX, which holds the largest: both stacks
 * whole and LP_MAX_LABEL_BYTES of labels. The buffer is twice that so that
 * masked offsets plus a bounded copy always stay inside it (what the verifier
 * needs).
 */
#define LP_RECORD_MAX	131072
#define LP_SCRATCH_SIZE (2 * LP_RECORD_MAX)

/*
 * CFI unwinding (docs/design.md section 9). Userspace derives, per object,
 * rows sorted by pc; a row holds from its pc up to the next row's.
 */
enum lp_unwind_mode {
	LP_UNWIND_AUTO = 0, /* CFI where the object has it, frame pointers elsewhere */
	LP_UNWIND_FP = 1,   /* frame pointers only */
	LP_UNWIND_CFI = 2,  /* CFI only: a frame without CFI ends the walk */
};

/* How a row finds the CFA (the caller's stack pointer). */
enum lp_cfa_rule {
	LP_CFA_NONE = 0,     /* no rule the walker knows: the walk stops */
	LP_CFA_SP = 1,	     /* SP + offset */
	LP_CFA_FP = 2,	     /* FP + offset */
	LP_CFA_PLT = 3,	     /* x86-64 PLT entry: SP + offset + ((IP & 15) >= 11 ? 8 : 0) */
	LP_CFA_FP_DEREF = 4, /* stack realigned (gcc): *(FP + signed offset); FP saved at FP */
	LP_CFA_SIGNAL = 5,   /* signal trampoline: the interrupted registers are saved at SP */
	LP_CFA_END = 6,	     /* the return address is undefined: the thread's outermost frame */
	LP_CFA_NO_CFI = 7,   /* code the object has no CFI for (hand-written, Go): frame pointers */
};
#define LP_CFA_RULE_BITS 3
#define LP_CFA_RULE_MASK ((1u << LP_CFA_RULE_BITS) - 1)
#define LP_CFA_MAX_OFFSET ((0xffffu >> LP_CFA_RULE_BITS) * 8)
/* LP_CFA_FP_DEREF's offset / 8 is a signed 13-bit number */
#define LP_CFA_DEREF_MIN (-(0x8000 >> LP_CFA_RULE_BITS) * 8)
#define LP_CFA_DEREF_MAX ((0x7fff >> LP_CFA_RULE_BITS) * 8)

/* Where a row finds the return address (the low bits of lp_unwind_row.regs). */
enum lp_ra_rule {
	LP_RA_CFA_M8 = 0, /* at CFA - 8: pushed by a call (x86-64) */
	LP_RA_LR = 1,	  /* still in the link register (aarch64) */
	LP_RA_FP_P8 = 2,  /* saved right above FP, at CFA + fp offset + 8 (aarch64 stp x29, x30) */
	LP_RA_AT = 3,	  /* saved at CFA + the offset in regs, FP not saved (aarch64) */
};
#define LP_RA_RULE_MASK 7

struct lp_unwind_row {
	__u32 pc; /* the object's link-time address */
	/* enum lp_cfa_rule | offset / 8 << LP_CFA_RULE_BITS (signed for LP_CFA_FP_DEREF) */
	__u16 cfa;
	/* where FP was saved, from the CFA (a multiple of 8; 0: not saved) | enum lp_ra_rule */
	__s16 regs;
};

/*
 * The rows of all objects live in pages of one size, spread over shards
 * (inner arrays of an array of maps) that userspace creates on demand. An
 * object's pages are consecutive; lp_unwind_fences holds every page's first
 * pc. Past an object's last row, a page is filled with LP_UNWIND_PC_PAD rows.
 */
#define LP_UNWIND_PAGE_ROWS   512
#define LP_UNWIND_SHARD_PAGES 256
#define LP_UNWIND_PC_PAD      0xffffffffu
#define LP_UNWIND_MAX_MAPS    256 /* text mappings with CFI per process */

struct lp_unwind_page {
	struct lp_unwind_row rows[LP_UNWIND_PAGE_ROWS];
};

/* Value of the unwind_objects map, keyed by object id. */
struct lp_unwind_object {
	__u32 first_page;
	__u32 pages;
};

/* A text mapping of an object with CFI: pc = ip - bias. */
struct lp_unwind_mapping {
	__u64 start;
	__u64 end;
	__u64 bias;
	__u32 object;
	__u32 pad;
};

/* Value of the unwind_procs map, keyed by tgid: its mappings, sorted by start. */
struct lp_unwind_proc {
	__u32 count;
	__u32 pad;
	struct lp_unwind_mapping maps[LP_UNWIND_MAX_MAPS];
};

/* Per-CPU counters of the CFI walk, one PERCPU_ARRAY entry. */
struct lp_unwind_counters {
	__u64 cfi_frames; /* frames unwound by CFI rows */
	__u64 fp_frames;  /* frames unwound by frame pointers in an auto or cfi walk */
	__u64 misses;	  /* frames in an object with CFI whose rows were not loaded (evicted, new) */
	__u64 no_rule;	  /* frames at a pc without a usable row */
	__u64 truncated;  /* walks that stopped before the outermost frame */
};

/* Per-CPU counters of the Python walk, one PERCPU_ARRAY entry. */
struct lp_py_counters {
	__u64 walks;	  /* samples of a Python process walked */
	__u64 frames;	  /* Python frames stored */
	__u64 no_thread;  /* no thread state for the sampled thread (not a Python thread) */
	__u64 faults;	  /* a thread state or frame could not be read */
	__u64 truncated;  /* walks that stopped at LP_MAX_PY_FRAMES */
};

/* Per-CPU counters of the Java walk, one PERCPU_ARRAY entry. */
struct lp_java_counters {
	__u64 interpreted; /* interpreted frames stored */
	__u64 compiled;	   /* nmethod frames stored */
	__u64 stubs;	   /* frames of other code cache blobs (stubs, adapters) */
	__u64 no_blob;	   /* a pc in the code cache in no blob */
	__u64 faults;	   /* a blob or frame could not be read */
};

struct lp_v8_counters {
	__u64 js;	  /* JavaScript frames stored */
	__u64 typed;	  /* typed frames (entry, exit, stubs, builtins): their pc kept */
	__u64 not_js;	  /* a frame of V8's shape whose function slot holds no JSFunction */
	__u64 faults;	  /* a function or its SharedFunctionInfo could not be read */
};

/* Filter modes (rodata). */
enum lp_filter_mode {
	LP_FILTER_ALL = 0,
	LP_FILTER_PIDS = 1,   /* tgid must be a key of the pid_filter map */
	LP_FILTER_CGROUP = 2, /* current task under the cgroup in cgroup_filter[0] */
};

#ifndef __bpf__
_Static_assert(sizeof(struct lp_sample) + LP_MAX_STACK_WORDS * 8 + LP_MAX_LABEL_BYTES <= LP_RECORD_MAX,
	       "the largest record fits");
_Static_assert(sizeof(struct lp_tls_ref) == 48, "lp_tls_ref layout");
_Static_assert(sizeof(struct lp_go_ref) == 32, "lp_go_ref layout");
_Static_assert(sizeof(struct lp_py_ref) == 40, "lp_py_ref layout");
_Static_assert(sizeof(struct lp_java_ref) == 136, "lp_java_ref layout");
_Static_assert(sizeof(struct lp_node_ref) == 24, "lp_node_ref layout");
_Static_assert(sizeof(struct lp_v8_ref) == 16, "lp_v8_ref layout");
_Static_assert(sizeof(struct lp_recipe) == 368, "lp_recipe layout");
_Static_assert(sizeof(struct lp_event_hdr) == 8, "lp_event_hdr layout");
_Static_assert(sizeof(struct lp_sample) == 56, "lp_sample layout");
_Static_assert(__builtin_offsetof(struct lp_sample, comm) == 40, "lp_sample layout");
_Static_assert(sizeof(struct lp_label_hdr) == 4, "lp_label_hdr layout");
_Static_assert(sizeof(struct lp_proc_event) == 40, "lp_proc_event layout");
_Static_assert(sizeof(struct lp_counters) == 88, "lp_counters layout");
_Static_assert(sizeof(struct lp_unwind_row) == 8, "lp_unwind_row layout");
_Static_assert(sizeof(struct lp_unwind_page) == 4096, "lp_unwind_page layout");
_Static_assert(sizeof(struct lp_unwind_mapping) == 32, "lp_unwind_mapping layout");
#endif

#endif /* LABELPROF_H */
