/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * /proc/PID/maps snapshots. The parser works on a buffer so it can be fed
 * anything (tests, fuzzers): malformed lines are skipped, never trusted, and
 * the result is sorted and free of overlaps, so lookups can binary-search.
 */
#ifndef LABELPROF_MAPS_H
#define LABELPROF_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Larger maps files are refused (a process has at most vm.max_map_count mappings). */
#define MAPS_MAX_FILE_BYTES (64u << 20)

enum maps_prot {
	MAPS_PROT_READ = 1 << 0,
	MAPS_PROT_WRITE = 1 << 1,
	MAPS_PROT_EXEC = 1 << 2,
	MAPS_PROT_SHARED = 1 << 3,
};

enum maps_kind {
	MAPS_ANON = 0,	  /* no path */
	MAPS_FILE = 1,	  /* an absolute path (possibly of a deleted file or a memfd) */
	MAPS_VDSO = 2,	  /* [vdso] */
	MAPS_SPECIAL = 3, /* any other pseudo path: [heap], [stack], [anon:name], anon_inode:... */
};

enum maps_parse_flags {
	MAPS_EXEC_ONLY = 1 << 0, /* keep executable mappings only */
};

struct maps_entry {
	__u64 start;
	__u64 end;    /* exclusive */
	__u64 offset; /* file offset of start */
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 prot; /* enum maps_prot */
	__u32 kind; /* enum maps_kind */
	/* The kernel's " (deleted)" suffix was present (and is not part of path). */
	bool deleted;
	/*
	 * As the kernel prints it: never NULL, "" when anonymous. The kernel
	 * escapes a newline in a file name as "\012" and nothing else, so a path
	 * may not name its file exactly; open mappings through map_files when
	 * the path does not lead to the same dev and inode. maps__read makes
	 * file paths the process's own (maps__path_in_root).
	 */
	const char *path;
};

struct maps;

/*
 * Parses a maps file held in buf (need not be NUL-terminated). Returns 0 and
 * a new snapshot in *out, or -ENOMEM.
 */
int maps__parse(const char *buf, size_t len, unsigned int flags, struct maps **out);
/*
 * Reads and parses /proc/PID/maps, file paths as the process sees them.
 * Returns 0, or -errno (-ESRCH: no such process).
 */
int maps__read(int pid, unsigned int flags, struct maps **out);

/*
 * The kernel names a process's files (in /proc/PID/maps, /proc/PID/exe) from
 * our root, or from the root of their mount namespace when ours does not
 * reach them. A process chrooted in that namespace sees them without the
 * chroot directory. maps__read_root puts that directory into buf, named the
 * same way: "" when the process's root is its namespace's root (containers
 * entered with pivot_root) or cannot be read. maps__path_in_root gives path
 * as the process sees it: without root when under it, else unchanged.
 */
void maps__read_root(int pid, char *buf, size_t size);
const char *maps__path_in_root(const char *path, const char *root);
/*
 * A snapshot is immutable once read: maps__get takes another reference (any
 * thread), maps__free drops one and frees the snapshot with the last.
 */
struct maps *maps__get(struct maps *m);
void maps__free(struct maps *m);
/* A new snapshot of m's executable mappings only (MAPS_EXEC_ONLY): 0 or -ENOMEM. */
int maps__exec_only(const struct maps *m, struct maps **out);

size_t maps__count(const struct maps *m);
/* Entries are sorted by start and do not overlap. */
const struct maps_entry *maps__entry(const struct maps *m, size_t i);
/* The entry holding addr, or NULL. */
const struct maps_entry *maps__find(const struct maps *m, __u64 addr);

#endif /* LABELPROF_MAPS_H */
