/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Address to symbol translation for user and kernel instruction pointers.
 *
 * User addresses are resolved against a snapshot of the process's executable
 * mappings taken when the process is first observed. A snapshot has an id that
 * the caller keeps with its samples: after an exec or an exit the process gets
 * a new snapshot, and the old one keeps symbolizing the samples taken before,
 * until it is released or evicted. Mapped files are opened through
 * /proc/PID/root (the process's mount namespace) when the process is first
 * seen, so that files of exited or containerized processes still resolve.
 *
 * Every cache is bounded (struct symbolizer_opts) and evicts the least
 * recently used entry. Not thread-safe.
 */
#ifndef LABELPROF_SYMBOLS_H
#define LABELPROF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define SYM_KERNEL_MODULE "[kernel.kallsyms]"

struct symbolizer_opts {
	size_t max_snapshots;	   /* 0: 16384 */
	size_t max_map_entries;	   /* summed over snapshots; 0: 262144 */
	size_t max_symbol_bytes;   /* parsed symbol tables in memory; 0: 64 MiB */
	size_t max_open_files;	   /* descriptors kept for mapped files; 0: 256 */
	const char *kallsyms_path; /* NULL: /proc/kallsyms */
};

struct symbolizer;

/* One source position; strings stay valid until the next call on the symbolizer. */
struct sym_line {
	const char *function; /* NULL: unknown */
	const char *file;     /* source file; NULL: unknown */
	__u32 line;	      /* 0: unknown */
	__u32 column;	      /* 0: unknown */
	__u32 start_line;     /* first line of function (DW_AT_decl_line); 0: unknown */
};

/* One resolved address. Strings stay valid until the next call on the symbolizer. */
struct sym_frame {
	__u64 address;
	/*
	 * Where address lies inside module: for ELF files, the ELF virtual
	 * address (what addr2line takes); for other user mappings, the file
	 * offset; for the kernel, address itself. Meaningless if !module.
	 */
	__u64 module_offset;
	__u64 offset; /* from the start of function; meaningless if !function */
	/* A path, a pseudo path ("[vdso]"), "[anon]", SYM_KERNEL_MODULE or "[mod]"; NULL: unknown
	 */
	const char *module;
	const char *function;	       /* NULL: unknown */
	const unsigned char *build_id; /* NULL: unknown */
	size_t build_id_len;
	/* The user mapping holding address: [map_start, map_end) at file offset map_offset. */
	__u64 map_start;
	__u64 map_end;
	__u64 map_offset;
	/*
	 * From DWARF when available: innermost inlined function first; the last
	 * entry is the function that holds address. line_count 0 without DWARF.
	 */
	const struct sym_line *lines;
	size_t line_count;
	bool kernel;
};

enum sym_resolve_flags {
	/*
	 * address is a return address (every frame of a stack but the leaf):
	 * the call that precedes it is looked up, so a call that ends a function
	 * is not attributed to the next one.
	 */
	SYM_RETURN_ADDRESS = 1 << 0,
};

struct symbolizer_stats {
	size_t snapshots;
	size_t map_entries;
	size_t files;
	size_t open_files;
	size_t symbol_bytes;
	__u64 snapshot_failures; /* /proc/PID/maps could not be read */
	__u64 refreshes;	 /* snapshots re-read because an address was in no mapping */
	__u64 evictions;	 /* snapshots and symbol tables dropped to stay within the limits */
	__u64 file_failures;	 /* mapped files that could not be opened or parsed */
};

/* opts may be NULL. Returns NULL on allocation failure. */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *sym);

/*
 * The snapshot id of pid's current address space, taking the snapshot when
 * the pid is new (or exec'd or exited since). Cheap for a known pid. Never 0:
 * a process whose maps cannot be read gets an empty snapshot (retried later).
 */
__u32 symbolizer__observe_pid(struct symbolizer *sym, __u32 pid);
/* pid exec'd: its next observation takes a new snapshot. */
void symbolizer__pid_exec(struct symbolizer *sym, __u32 pid);
/* pid exited: the pid may be reused by another process. */
void symbolizer__pid_exit(struct symbolizer *sym, __u32 pid);
/*
 * Tells the symbolizer which user addresses a snapshot must resolve. If one
 * lies in no known mapping (a library loaded since the snapshot), the
 * snapshot is re-read while the process is alive, with a per-process backoff.
 */
void symbolizer__check_ips(struct symbolizer *sym, __u32 snapshot, const __u64 *ips, size_t n);
/*
 * Frees the snapshots no live pid uses any more (processes that exited or
 * exec'd). Call after writing the profile that needed them.
 */
void symbolizer__release_unused(struct symbolizer *sym);

/* Fill *f for a user address. Returns 0 if the function is known, else -ENOENT. */
int symbolizer__resolve_user(struct symbolizer *sym, __u32 snapshot, __u64 ip, unsigned int flags,
			     struct sym_frame *f);
/* Same, for a kernel address (from /proc/kallsyms, read on first use). */
int symbolizer__resolve_kernel(struct symbolizer *sym, __u64 ip, unsigned int flags,
			       struct sym_frame *f);

void symbolizer__stats(const struct symbolizer *sym, struct symbolizer_stats *st);

#endif /* LABELPROF_SYMBOLS_H */
