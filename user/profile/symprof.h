/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A symbolized profile: aggregated samples whose stacks are resolved to
 * locations, functions and mappings, held in interned tables shaped like
 * pprof's and OTLP's. Every profile writer takes one and every reader
 * (labelprof convert) produces one, so any format converts to any other.
 *
 * Tables are public for reading: entry 0 of every table is the zero entry
 * (the empty string, "no mapping", the empty stack, the empty label set...),
 * so an id of 0 always means "none" and real ids start at 1. Entries are
 * added only through the symprof__* functions, which intern them: equal
 * entries get the same id. Strings are byte strings (any byte, not
 * NUL-terminated in general; each is followed by a NUL for convenience).
 *
 * Errors are sticky: an allocation failure makes every later add return 0
 * and symprof__error() return -ENOMEM, so builders check once at the end.
 * Not thread-safe.
 */
#ifndef LABELPROF_SYMPROF_H
#define LABELPROF_SYMPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>

#include "labelprof.h"
#include "lib/frame_kind.h"

struct profile;
struct symbolizer;

#define SP_UNKNOWN ((__u64)-1)

struct sp_string {
	const unsigned char *bytes; /* followed by a NUL */
	size_t len;
};

struct sp_mapping {
	__u64 start;
	__u64 limit; /* exclusive */
	__u64 file_offset;
	__u32 file;	/* string: path, pseudo path ("[vdso]"), "[kernel.kallsyms]" */
	__u32 build_id; /* string holding the raw build-id bytes; 0: unknown */
	bool kernel;
};

struct sp_function {
	__u32 name;	   /* string; 0: unknown */
	__u32 system_name; /* string: the symbol as linked; 0: same as name / unknown */
	__u32 file;	   /* string: source file; 0: unknown */
	__u32 start_line;  /* 0: unknown */
};

struct sp_line {
	__u32 function; /* function id */
	__u32 line;	/* 0: unknown */
	__u32 column;	/* 0: unknown */
};

struct sp_location {
	__u32 mapping; /* 0: in no known mapping */
	bool kernel;
	__u32 kind; /* enum frame_kind: native (kernel by the flag) or a runtime's */
	__u64 address; /* the instruction pointer as sampled */
	/*
	 * Where address lies inside the mapping's file: the ELF virtual address
	 * for ELF files (what addr2line takes), the file offset for other files,
	 * the address itself for the kernel. SP_UNKNOWN without a mapping.
	 */
	__u64 module_offset;
	__u64 function_offset; /* address minus the start of the function; SP_UNKNOWN */
	/*
	 * line_count entries of lines[] from first_line: innermost inlined
	 * function first, the function that holds the address last. 0 when
	 * the function is unknown.
	 */
	__u32 first_line;
	__u32 line_count;
};

struct sp_range {
	__u32 first;
	__u32 count;
};

struct sp_label {
	__u32 key;    /* string */
	__u32 value;  /* string */
	__u32 source; /* enum lp_label_source: which writer it came from */
};

struct sp_sample {
	__u32 pid; /* tgid */
	__u32 tid;
	__u32 comm;	 /* string: the thread's name */
	__u32 label_set; /* 0: no labels */
	__u32 stack;	 /* 0: no frames */
	__u32 status;	 /* OR of enum lp_sample_status and PROFILE_ST_* over the samples */
	__u64 count;
};

/* What is known of a process beyond its samples (resource attributes). */
struct sp_process {
	__u32 pid;
	__u32 name;	    /* string: the process's name (main thread's comm); 0: unknown */
	__u32 executable;   /* string: executable path as the process saw it; 0: unknown */
	__u32 container_id; /* string: from the process's cgroup path; 0: none / unknown */
	__u32 pod_uid;	    /* string: Kubernetes pod uid from the cgroup path; 0: none */
};

struct sp_meta {
	__u64 frequency_hz;	  /* 0: unknown */
	__u64 period_ns;	  /* CPU nanoseconds one sample stands for */
	__u64 start_time_unix_ns; /* 0: unknown */
	__u64 duration_ns;
	struct lp_counters counters; /* BPF counters summed over CPUs */
	__u64 samples_received;	     /* records that reached aggregation intact */
	__u64 records_rejected;
	__u64 samples_dropped; /* only counted: the profile hit its memory limit */
	__u64 unwind_misses;   /* user frames whose object's unwind rows were not in BPF */
	__u32 host_name;       /* string; 0: unknown */
};

struct symprof_index;

struct symprof {
	struct sp_string *strings; /* [0] is "" */
	size_t string_count;
	struct sp_mapping *mappings;
	size_t mapping_count;
	struct sp_function *functions;
	size_t function_count;
	struct sp_line *lines; /* referenced by locations, not interned on their own */
	size_t line_count;
	struct sp_location *locations;
	size_t location_count;
	__u32 *stack_locations; /* referenced by stacks: location ids, leaf first */
	size_t stack_location_count;
	struct sp_range *stacks; /* into stack_locations */
	size_t stack_count;
	struct sp_label *labels; /* referenced by label sets */
	size_t label_count;
	struct sp_range *label_sets; /* into labels, sorted by key bytes, keys unique */
	size_t label_set_count;
	struct sp_sample *samples; /* no zero entry: samples[0] is a sample */
	size_t sample_count;
	struct sp_process *processes; /* no zero entry; pids unique */
	size_t process_count;
	struct sp_meta meta;

	struct symprof_index *index;
	int error;
};

struct symprof *symprof__new(void);
void symprof__free(struct symprof *sp);
/* 0, or -ENOMEM if an add failed since symprof__new. */
int symprof__error(const struct symprof *sp);

__u32 symprof__string(struct symprof *sp, const void *bytes, size_t len);
__u32 symprof__cstring(struct symprof *sp, const char *s); /* NULL: 0 */
__u32 symprof__mapping(struct symprof *sp, const struct sp_mapping *m);
__u32 symprof__function(struct symprof *sp, const struct sp_function *f);
/* loc's first_line/line_count are ignored: lines (line_count of them) are copied. */
__u32 symprof__location(struct symprof *sp, const struct sp_location *loc,
			const struct sp_line *lines, size_t line_count);
/* Location ids, leaf first; n == 0 gives 0. */
__u32 symprof__stack(struct symprof *sp, const __u32 *locations, size_t n);
/*
 * A label set from labels in any order: sorted by key bytes (unsigned,
 * shorter first on a common prefix); of equal keys the first given wins.
 * n == 0 gives 0.
 */
__u32 symprof__label_set(struct symprof *sp, const struct sp_label *labels, size_t n);
/*
 * Adds count to the sample with the same pid, tid, comm, label_set and stack
 * (ORing status), or appends s. Returns 0 or -ENOMEM.
 */
int symprof__add_sample(struct symprof *sp, const struct sp_sample *s);
/*
 * Leaves out of every label set the labels whose key keep refuses, then
 * merges the label sets and the samples that became equal (label set and
 * sample ids change; other tables stay). Returns 0 or -ENOMEM.
 */
typedef bool (*symprof_key_fn)(const struct sp_string *key, void *ctx);
int symprof__filter_labels(struct symprof *sp, symprof_key_fn keep, void *ctx);
/* Records what is known of pid (a later call fills what was 0). Returns 0 or -ENOMEM. */
int symprof__set_process(struct symprof *sp, const struct sp_process *proc);
/* The process entry of pid, or NULL. */
const struct sp_process *symprof__process(const struct symprof *sp, __u32 pid);

static inline const struct sp_string *symprof__str(const struct symprof *sp, __u32 id)
{
	return &sp->strings[id < sp->string_count ? id : 0];
}

/* Whether the bytes of s are those of the C string name. */
static inline bool sp_string__is(const struct sp_string *s, const char *name)
{
	return s->len == strlen(name) && !memcmp(s->bytes, name, s->len);
}

/*
 * Byte strings in the order label sets sort keys by: bytes compared unsigned
 * (memcmp), a prefix before what it starts. Either may be NULL when its
 * length is 0. Returns <0, 0 or >0.
 */
int symprof__bytes_cmp(const void *a, size_t alen, const void *b, size_t blen);

/* Total sample count. */
__u64 symprof__total(const struct symprof *sp);

struct symprof_build_opts {
	__u64 frequency_hz;
	__u64 start_time_unix_ns;
	__u64 duration_ns;
	const struct lp_counters *counters; /* NULL: zeros */
	__u64 unwind_misses;
	bool containers; /* processes get their container id and pod uid (sp_process) */
};

/*
 * Resolves every stack of p with sym (NULL: addresses only) into a new
 * symprof. Returns NULL on allocation failure.
 */
struct symprof *symprof__from_profile(const struct profile *p, struct symbolizer *sym,
				      const struct symprof_build_opts *opts);

#endif /* LABELPROF_SYMPROF_H */
