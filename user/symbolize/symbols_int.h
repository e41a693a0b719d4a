/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The symbolizer's private types and the functions its files share
 * (symbols.c, symtab.c, linecache.c, perfmap.c, snapshot.c, kallsyms.c);
 * included by those only. The design is described in symbols.c.
 */
#ifndef LABELPROF_SYMBOLS_INT_H
#define LABELPROF_SYMBOLS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/types.h>

#include "lib/clock.h"
#include "lib/elf.h"
#include "lib/list.h"
#include "lib/pairmap.h"
#include "proc/container.h"
#include "proc/maps.h"
#include "symbolize/gopclntab.h"
#include "symbolize/symbols.h"

/* A symbol that does not contain an address may be nested in one that starts earlier. */
#define MAX_NESTED_LOOKBACK 8
/* Re-reading the maps of a process whose addresses resolve to no mapping. */
#define REFRESH_MIN_NS (100ULL * 1000 * 1000)
#define REFRESH_MAX_NS (60ULL * 1000 * 1000 * 1000)

struct dwarf_file;

struct load_seg {
	__u64 offset, vaddr, filesz;
};

struct sym_entry {
	__u64 start;
	__u32 size;
	__u32 name; /* offset into names */
};

struct sym_file {
	__u64 dev, ino; /* key in symbolizer.files; ino 0: not shared */
	unsigned int refs;
	int fd;		/* -1: closed */
	bool pinned_fd; /* not in the open-files LRU (the vDSO image) */
	bool loaded;	/* symbols parsed (possibly none): on the symbols LRU */
	bool failed;	/* could not be opened or parsed: do not retry */
	struct list fd_node;
	struct list sym_node;
	size_t bytes;
	struct load_seg *segs;
	size_t nr_segs;
	struct sym_entry *syms;
	size_t nr_syms;
	char *names;
	unsigned char build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len;
	char *debuglink; /* .gnu_debuglink name, kept while loaded */
	/*
	 * A Go executable without symbols: its function table (in go_buf, kept
	 * while loaded) named the functions and gives their lines.
	 */
	struct gopcln go;
	void *go_buf;
	struct dwarf_file *dwarf;
	size_t dwarf_bytes; /* counted in symbol_bytes, like bytes */
	bool dwarf_failed;  /* none, unreadable or too large: do not retry */
	struct list dwarf_node;
	/*
	 * What DWARF gave for each address looked up, so that closing the
	 * DWARF handle loses nothing: ELF address -> struct cached_lines, whose
	 * strings are offsets into strs (each string once, found by str_index:
	 * (hash, length) -> offset). Dropped with the symbols.
	 */
	struct pairmap lines;
	struct pairmap str_index;
	char *strs; /* strs[0] is '\0': offset 0 stands for NULL */
	size_t strs_len, strs_cap;
	size_t lines_entry_bytes;
	size_t lines_bytes; /* all of it, counted in symbol_bytes */
};

struct cached_line {
	__u32 function, file; /* offsets into sym_file.strs; 0: NULL */
	__u32 line, column, start_line;
};

struct cached_lines {
	size_t n;
	struct cached_line v[];
};

struct jit_sym {
	__u64 start;
	__u32 size;
	__u32 name; /* offset into perf_map.names */
	__u32 seq;  /* line number: later lines describe newer code */
};

/* A process's /tmp/perf-NSPID.map, parsed up to its last complete line. */
struct perf_map {
	char path[32];	      /* as the process sees it; "" while its NSpid is unknown */
	__u64 dev, ino;	      /* of the file parsed */
	__u64 parsed;	      /* bytes */
	bool skip_line;	      /* in a line too long to parse */
	bool refused;	      /* the file (dev, ino) is refused */
	bool full;	      /* at the entry limit: the rest is not read */
	struct jit_sym *syms; /* sorted by start, one per start */
	size_t nr, cap;
	char *names;
	size_t names_len, names_cap;
	__u32 seq;
	__u64 check_at_ns; /* no re-read before */
};

struct snapshot {
	__u32 id;
	__u32 pid;
	bool attached; /* the current image of its process (symbolizer__snapshot_end) */
	struct maps *maps;
	struct sym_file **files; /* parallel to the maps entries; NULL when not a file */
	struct list node;
	__u64 refresh_at_ns;
	__u64 refresh_backoff_ns;
	/* the process when first read */
	bool identity_read;
	char *exe;
	char comm[16];
	__u32 uid, euid;
	struct container_info container;
	struct perf_map jit;
};

struct ksym {
	__u64 addr;
	__u32 name;   /* offsets into kallsyms.names */
	__u32 module; /* KSYM_CORE: the kernel itself */
};

#define KSYM_CORE UINT32_MAX

struct kallsyms {
	bool tried;
	struct ksym *syms;
	size_t nr;
	char *names;
	unsigned char build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len;
};

/* A frame of interpreted code (interp.c). */
struct interp_frame {
	__u32 kind;	      /* enum frame_kind */
	struct sym_line line; /* its function, file and line: strings owned */
};

/* Distinct interpreted frames kept, at most: past it, new ones stay unnamed. */
#define SYM_INTERP_MAX (1u << 20)

struct symbolizer {
	struct symbolizer_opts opts;
	struct pairmap snaps; /* id -> snapshot */
	struct pairmap files; /* (dev, ino) -> sym_file */
	struct list snap_lru;
	struct list sym_lru;
	struct list fd_lru;
	struct list dwarf_lru;
	__u32 next_id;
	struct symbolizer_stats st;
	struct sym_file *vdso; /* our own vDSO image: the same in every process of our ABI */
	__u64 vdso_size;
	bool vdso_tried;
	struct kallsyms kernel;
	struct sym_line lines[SYM_MAX_LINES]; /* of the last resolved frame */
	struct interp_frame *interp; /* symbolizer__interp_frame: token id -> frame */
	size_t interp_count, interp_cap;
	struct hashmap interp_index;
};

static inline __u32 le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24;
}

static inline unsigned int leading_underscores(const char *s)
{
	unsigned int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Interpreted frames (interp.c): fills f for a token, false if ip is none. */
bool interp__resolve(struct symbolizer *sym, __u64 ip, struct sym_frame *f);
void interp__free(struct symbolizer *sym);

/* Files (files.c). */
struct sym_file *sym_file__new(struct symbolizer *sym, __u64 dev, __u64 ino);
void sym_file__free(struct symbolizer *sym, struct sym_file *f);
void sym_file__put(struct symbolizer *sym, struct sym_file *f);
struct sym_file *sym_file__get(struct symbolizer *sym, __u32 pid, const struct maps_entry *e);
/* Loads f's symbols (e: its mapping in pid, to open it; may be NULL). 0 or -errno. */
int sym_file__load(struct symbolizer *sym, struct sym_file *f, __u32 pid,
		   const struct maps_entry *e);
/* f's DWARF, opened within the budget; NULL if it has none or it does not fit. */
struct dwarf_file *sym_file__dwarf(struct symbolizer *sym, struct sym_file *f, __u32 pid,
				   const struct maps_entry *e, const char *path);
/* Our own vDSO image, or NULL. */
struct sym_file *sym_file__vdso(struct symbolizer *sym);
/* Evicts DWARF, then symbols, until need more bytes fit (keep, keep_dwarf stay). */
void sym_files__enforce_limit(struct symbolizer *sym, struct sym_file *keep,
			      struct sym_file *keep_dwarf, size_t need);

/* The lines DWARF gave, cached per file (linecache.c). */
void sym_lines__clear(struct symbolizer *sym, struct sym_file *f);
bool sym_lines__put(struct symbolizer *sym, struct sym_file *f, __u64 vaddr,
		    const struct sym_line *lines, size_t n);
bool sym_lines__get(struct symbolizer *sym, const struct sym_file *f, __u64 vaddr, size_t *n);

/* Symbol tables and debug files (symtab.c). */
int sym_file__parse(const struct symbolizer *sym, struct sym_file *f, int fd, __u32 pid,
		    const char *path);
struct elf_file *sym_file__open_debug(const struct symbolizer *sym, const struct sym_file *f,
				      __u32 pid, const char *path, int *fd_out);
bool sym_file__vaddr(const struct sym_file *f, __u64 off, __u64 *vaddr);
const struct sym_entry *sym_file__find(const struct sym_file *f, __u64 vaddr);

/* Perf maps of JIT code (perfmap.c). */
void perf_map__clear(struct symbolizer *sym, struct perf_map *pm);
void perf_map__update(struct symbolizer *sym, struct snapshot *s);
void perf_map__recheck(struct symbolizer *sym, struct snapshot *s);
const struct jit_sym *perf_map__find(const struct perf_map *pm, __u64 addr);
bool perf_map__is_jit(const struct maps_entry *e);

/* Snapshots of processes (snapshot.c). */
void snapshot__free(struct symbolizer *sym, struct snapshot *s);
int snapshot__read(struct symbolizer *sym, struct snapshot *s, const struct maps *maps);
void snapshot__enforce_limits(struct symbolizer *sym, struct snapshot *keep);
struct snapshot *snapshot__new(struct symbolizer *sym, __u32 pid, const struct maps *maps);

/* Kernel symbols (kallsyms.c). */
void kallsyms__build_id(struct kallsyms *k);
int kallsyms__load(struct kallsyms *k, const char *path);
const struct ksym *kallsyms__find(const struct kallsyms *k, __u64 addr);

#endif /* LABELPROF_SYMBOLS_INT_H */
