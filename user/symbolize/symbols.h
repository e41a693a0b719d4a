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
 * Function names come from the ELF symbol tables (of the file, or of its
 * separate debug file); source lines and inlined functions from DWARF (of the
 * file, or of its debug file), opened when a frame of the file is first
 * resolved. A Go executable without .symtab (-ldflags='-s -w') is named
 * by Go's own function table (gopclntab.h), which gives lines too (not
 * inlined functions). Debug files are found by build id under
 * DEBUG_DIR/.build-id/xx/yyyy.debug, then by .gnu_debuglink next to the file,
 * in its .debug/ directory and under DEBUG_DIR/<its directory>, each in the
 * process's root first and then in ours (DEBUG_DIR: /usr/lib/debug). A debug
 * file must carry the build id of the file.
 *
 * JIT code: addresses in anonymous executable mappings (also "[anon:name]"
 * and memfd mappings) or in no mapping are looked up in the process's
 * /tmp/perf-NSPID.map as perf reads it ("START SIZE name" lines, hex), NSPID
 * being the pid in the process's own pid namespace, read in its root. Like
 * the maps it is read when the snapshot is taken or refreshed, and read again
 * while the process lives when it grew and an address is not in it, so
 * frames of exited processes still resolve. Their module is the map's path
 * as the process sees it ("/tmp/perf-NSPID.map", perf's convention), their
 * module_offset the address itself. Files over 64 MiB or owned by another
 * user than the process's or root are refused.
 *
 * Every cache is bounded (struct symbolizer_opts) and evicts the least
 * recently used entry. Not thread-safe.
 */
#ifndef LABELPROF_SYMBOLS_H
#define LABELPROF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "lib/frame_kind.h"
#include "symbolize/dwarf.h" /* struct sym_line */

#define SYM_KERNEL_MODULE "[kernel.kallsyms]"

struct symbolizer_opts {
	size_t max_snapshots; /* 0: 16384 */
	/* Mappings and perf map entries summed over snapshots, half at most in one perf map. */
	size_t max_map_entries; /* 0: 262144 */
	/*
	 * Symbol tables, DWARF and the lines it gave, in memory; one file's
	 * DWARF opens if it fits in half. DWARF is closed first to stay
	 * within it (and reopened when an address not seen before needs it).
	 */
	size_t max_symbol_bytes;   /* 0: 24 MiB */
	size_t max_open_files;	   /* descriptors kept for mapped files; 0: 256 */
	size_t max_dwarf_files;	   /* files with DWARF open (holding no descriptor); 0: 32 */
	const char *kallsyms_path; /* NULL: /proc/kallsyms */
	const char *debug_dir;	   /* DEBUG_DIR above (tests move it); NULL: /usr/lib/debug */
	bool no_dwarf;		   /* no DWARF: names from symbol tables, no lines */
};

struct symbolizer;

/* Most entries in sym_frame.lines: a deeper inline chain keeps its innermost ones. */
#define SYM_MAX_LINES 32

/* One resolved address. Strings stay valid until the next call on the symbolizer. */
struct sym_frame {
	__u64 address;
	/*
	 * Where address lies inside module: for ELF files, the ELF virtual
	 * address (what addr2line takes); for other user mappings, the file
	 * offset; for the kernel, address itself. Meaningless if !module.
	 */
	__u64 module_offset;
	__u64 offset; /* from function's symbol (0: DWARF's function); meaningless if !function */
	/*
	 * A path, a pseudo path ("[vdso]"), "[anon]", a perf map for JIT code
	 * ("/tmp/perf-NSPID.map"), SYM_KERNEL_MODULE or "[mod]"; NULL: unknown
	 */
	const char *module;
	/* The symbol table's name (DWARF's if no symbol holds address); NULL: unknown */
	const char *function;
	const unsigned char *build_id; /* NULL: unknown */
	size_t build_id_len;
	/*
	 * The user mapping holding address: [map_start, map_end) at file offset
	 * map_offset (JIT code in no mapping: the code's own range).
	 */
	__u64 map_start;
	__u64 map_end;
	__u64 map_offset;
	/*
	 * From DWARF when available: innermost inlined function first; the last
	 * entry is the function that holds address, at the call site of the
	 * function inlined into it (of the address itself if none). Names are
	 * linkage (mangled) names. The last one is DWARF's if it has one (then
	 * it differs from function for compiler clones: "foo" for
	 * "foo.constprop.0"), else function. line_count 0 without DWARF; at
	 * most SYM_MAX_LINES.
	 */
	const struct sym_line *lines;
	size_t line_count;
	bool kernel;
	__u32 kind; /* enum frame_kind: native (kernel by the flag) or a runtime's */
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
	size_t symbol_bytes; /* symbol tables, DWARF and the lines it gave */
	size_t dwarf_files;
	size_t dwarf_bytes;	 /* of symbol_bytes, the DWARF open */
	__u64 dwarf_opens;	 /* DWARF handles opened, again after eviction too */
	__u64 snapshot_failures; /* /proc/PID/maps could not be read */
	__u64 refreshes;	 /* snapshots re-read: an address in no mapping, or code mapped */
	__u64 maps_reads;	 /* memory maps read here, not handed in (symbolizer__snapshot) */
	__u64 other_images;	 /* re-reads dropped: the process runs another image since */
	__u64 evictions;	 /* snapshots, symbol tables, DWARF dropped to stay within limits */
	__u64 file_failures;	 /* mapped files that could not be opened or parsed */
	__u64 dwarf_failures;	 /* files whose DWARF could not be read or was too large */
	/* perf maps refused (too large, not the process's) or cut at the entry limit */
	__u64 perf_map_failures;
};

/* opts may be NULL. Returns NULL on allocation failure. */
struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *sym);

struct maps;

/*
 * A new snapshot of pid's address space: the executable mappings of maps
 * (NULL: /proc/PID/maps read now). The caller keeps the id for pid's samples
 * (registry/). Never 0 but on allocation failure: a process whose maps cannot
 * be read gets an empty snapshot (retried later).
 */
__u32 symbolizer__snapshot(struct symbolizer *sym, __u32 pid, const struct maps *maps);
/*
 * Whether snapshot is still its process's current image (marking it used):
 * false once ended, or evicted to stay within the limits.
 */
bool symbolizer__snapshot_current(struct symbolizer *sym, __u32 snapshot);
/*
 * The process mapped or unmapped code: the snapshot takes maps (NULL: reads
 * them), unless the process runs another image since.
 */
void symbolizer__snapshot_update(struct symbolizer *sym, __u32 snapshot, const struct maps *maps);
/*
 * The process exec'd or exited (its pid may be reused): the snapshot keeps
 * resolving the samples taken before, until symbolizer__release_unused.
 */
void symbolizer__snapshot_end(struct symbolizer *sym, __u32 snapshot);
/*
 * Tells the symbolizer which user addresses a snapshot must resolve. If one
 * lies in no known mapping (a library loaded since the snapshot), the
 * snapshot is re-read while the process is alive, with a per-process backoff.
 */
void symbolizer__check_ips(struct symbolizer *sym, __u32 snapshot, const __u64 *ips, size_t n);
/*
 * The process of a snapshot as it was when the snapshot was taken (also after
 * it exited): its executable (the /proc/PID/exe link, as the process saw it)
 * and its name (/proc/PID/comm of its main thread). Either may be NULL
 * (unknown), and so may the pointers passed. Strings stay valid until the
 * next call on the symbolizer. Returns 0, or -ENOENT for an unknown snapshot.
 */
int symbolizer__process(struct symbolizer *sym, __u32 snapshot, const char **executable,
			const char **comm);
struct container_info;
/* The container of a snapshot's process, read with its identity; NULL: unknown snapshot. */
const struct container_info *symbolizer__container(struct symbolizer *sym, __u32 snapshot);
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

/*
 * Frames of interpreted code are named by their runtime's module (runtime/)
 * while the process lives, and stand in a user stack as tokens in place of
 * addresses: ip >> 60 == SYM_INTERP_TAG (no user address has those bits).
 */
#define SYM_INTERP_TAG 0xbull
/*
 * The token of a frame of kind (enum frame_kind) in function (NULL:
 * unknown), file at line, the function starting at start_line (0s:
 * unknown); equal frames get equal tokens. 0 on allocation failure.
 */
__u64 symbolizer__interp_frame(struct symbolizer *sym, __u32 kind, const char *function,
			       const char *file, __u32 line, __u32 start_line);

#endif /* LABELPROF_SYMBOLS_H */
